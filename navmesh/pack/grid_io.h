/* grid_io.h — the two grid formats of the packs (design article 格图段, 旁包, 旁包校验):
 * BGRD v3, the section of the main pack that holds the pre-baked voxel grid as tiles of
 * predicted residual streams, and BNVF v2, the fields sidecar (base.fields.nav.gz) that holds the
 * six per-record columns, the per-region component DAGs, the wall-keep table and the optional
 * off-mesh landings and openable cells. Writers take in-memory records; readers check every byte
 * through the nm_cursor and name the zone / tile / section that is wrong.
 *
 * Written as a section of pack.h (it will be folded in there). Byte layouts:
 * shared/docs/reference-maaend.md §4.6, §4.7, §4.10, §4.11.
 *
 * Units: cells are NM_kCS = 0.25 px; global cell (gx, gy) covers [gx*kCS, (gx+1)*kCS) px;
 * heights in metres; clearance stored as a squared cell distance.
 *
 * Choices the article leaves open (written down here, relied on by both writers and readers):
 * - records of a cell: by (rid, height) (nm_grid_layer_cmp), Fill at height 0. 建窗 says three
 *   times that a cell's records arrive sorted by (类号,高), and the reference writes them so;
 *   格图段's "按高度升序" holds within a region. Layer L is the cell's L-th record either way.
 * - Fill records: no real height; excluded from the tile's hmin; stored as their prediction
 *   (residual 0); decode to h = 0.
 * - height_q = round(64 (h - hmin)) (half away from zero), hmin = the tile's f32 minimum.
 * - predictor per (field, layer): the smaller order-0 entropy of the residual varint bytes
 *   (integer arithmetic, so the bytes are the same on every machine); ties and layer 0 -> Up.
 * - region dictionary of a tile: its distinct rids ascending, stored raw.
 * - empty tiles keep their directory entry (records 0, a 1-byte payload "varint 0"), in FSPN too.
 * - FSCC: every region has its edge stream, an empty zlib stream when it has no edges; regions
 *   ascending by rid (the reader requires it, for binary search). FWAL: both streams always.
 * - FLNK / FOPN headers: bytes 6-7 and 12-15 and the 2 bytes after each zone id are written 0. */
#ifndef NM_GRID_IO_H
#define NM_GRID_IO_H

#include <math.h>

#include "../base/base.h"
#include "../codec/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================================================
 * BGRD — 格图段
 * ============================================================================================== */

#define NM_BGRD_VERSION 3
#define NM_BGRD_VERSION_COLUMNAR 2      /* older columnar tiles: not read (see nm_bgrd_parse) */
#define NM_BGRD_HEADER_SIZE 40
#define NM_BGRD_TILE_ENTRY_SIZE 48
#define NM_BGRD_ZONE_MIN_SIZE 28
#define NM_BGRD_FIELDS 5                /* height_q, region index, clr, flags, steps */
#define NM_BGRD_STREAMS 8
#define NM_BGRD_PRED_UP 0
#define NM_BGRD_PRED_DOWN 1
#define NM_BGRD_TILE_CELLS 512          /* own rectangle of a tile, cells (128 px) */
#define NM_BGRD_APRON_CELLS 64          /* apron on each side, cells (16 px) */
#define NM_BGRD_HEIGHT_STEPS 64.0       /* heights quantised to 1/64 m */

/* Record flags (预烘场). */
enum {
    NM_GRID_DEAD = 0x01,
    NM_GRID_WALK = 0x02,
    NM_GRID_CORE = 0x04,
    NM_GRID_GHOST = 0x08,
    NM_GRID_FILL = 0x10
};

/* One grid record (span), 16 bytes in memory (GridSpanRec).
 * cell: a cell number inside some rectangle (tile-local y*nx + x in a tile; window-local
 *       y*w + x after nm_bgrd_decode_rect);
 * rid: global region id of the zone (1-based; <= global_regions);
 * h: height, m (0 for Fill records, which have no real height);
 * clr: clearance as squared cell distance (restore with nm_grid_rec_clearance);
 * flags: NM_GRID_*; steps: forbidden steps, direction i of (1,0),(0,1),(1,1),(1,-1):
 *        bit 2i forbids c -> neighbour, bit 2i+1 forbids neighbour -> c. */
typedef struct nm_grid_rec {
    int32_t cell;
    uint32_t rid;
    float h;
    uint16_t clr;
    uint8_t flags;
    uint8_t steps;
} nm_grid_rec;

/* Clearance in px from the stored squared cell distance: min(sqrt(q)*0.25, 12), computed in
 * float like the Clearance operator's last step, so it is bit-identical to a fresh computation. */
static inline float nm_grid_rec_clearance(uint16_t q)
{
    float c = sqrtf((float)q) * 0.25f;
    return c < 12.0f ? c : 12.0f;
}

/* The canonical order of the records of one cell (建窗: "已按(类号,高)排好"): rid, then height
 * (Fill records count as height 0, the height they decode to), then clr, flags, steps.
 * Returns <0, 0, >0. Writers reject cells whose records are not in this order; bakers sort each
 * cell with it (and carry their sidecar columns along) before writing either file. */
int nm_grid_layer_cmp(const nm_grid_rec *a, const nm_grid_rec *b);

/* A tile directory entry (48 bytes on disk). */
typedef struct nm_bgrd_tile {
    int32_t gx0, gy0, nx, ny;   /* the tile window on global cells: origin and size */
    int32_t px0, px1, py0, py1; /* own rectangle, tile-local cells, inclusive */
    uint64_t offset;            /* payload offset from the section start */
    uint32_t len;               /* payload bytes */
    uint32_t records;           /* records in the whole window (apron included); 0 = empty tile */
} nm_bgrd_tile;

typedef struct nm_bgrd_zone {
    char *name;                 /* NUL-terminated copy */
    uint32_t name_len;
    double x0, y0;              /* zone origin, px */
    uint32_t global_regions;
    uint32_t tile_count;
    nm_bgrd_tile *tiles;
} nm_bgrd_zone;

/* A parsed BGRD section. `bytes` are borrowed from the caller (the pack keeps the section's
 * bytes alive) and must outlive every decode. */
typedef struct nm_bgrd {
    uint32_t version;
    double cell_size, tile_px, apron_px;
    nm_bgrd_zone *zones;
    uint32_t zone_count;
    const uint8_t *bytes;
    size_t size;
} nm_bgrd;

/* ---- reading ----------------------------------------------------------------------------------
 * Parses the section header and every zone directory (design article 格图段). Checks: magic,
 * version 3, |cell_size - kCS| <= 1e-12, every count and name inside the bytes, 1 <= nx, ny <=
 * (tile_px + 2*apron_px)/cell + 2, own rectangle inside the window, offset + len inside the
 * section. Tile payloads are decoded later, on demand. A v2 (columnar) section is reported as
 * unsupported (NM_ERR_CORRUPT naming the version). */
int nm_bgrd_parse(const uint8_t *bytes, size_t size, nm_bgrd *out, nm_error *err);
void nm_bgrd_free(nm_bgrd *g);
/* Index of the zone with this name, or -1. */
int nm_bgrd_find_zone(const nm_bgrd *g, const char *name);

/* Scratch of one tile decode (inflated streams, per-record temporaries). Reusable; free with
 * nm_bgrd_scratch_free. A zeroed struct is a valid empty scratch. */
typedef struct nm_bgrd_scratch {
    nm_bytes stream[NM_BGRD_STREAMS];
    int32_t *cells;       /* per cell with records: tile-local cell number */
    uint32_t *first;      /* per cell: index of its layer 0 record; ncell + 1 entries */
    uint32_t *deep;       /* the cells of more than one layer, ascending (ndeep of them) */
    uint32_t ndeep;
    uint32_t *q;          /* per record: height_q */
    uint32_t *col;        /* per column and field: Up predictor state (reset at each Up pass) */
    uint32_t *dict;       /* region dictionary */
    size_t cell_cap, rec_cap, col_cap, dict_cap;
    uint32_t *lrec;       /* per record: record indices grouped by layer, cells ascending */
    uint32_t *lcol;       /* per record: the column of lrec's cell */
    uint32_t *lstart;     /* per layer + 1: start of the layer's group in lrec / lcol */
    size_t lrec_cap, lstart_cap;
    nm_bytes fspn[6];     /* sidecar columns of the tile (when decoding with fields) */
    uint64_t layer0_passes; /* tiles whose layer 0 was decoded in one pass over every field */
} nm_bgrd_scratch;
void nm_bgrd_scratch_free(nm_bgrd_scratch *s);

/* Decodes tile `tile` of zone `zone` into out[0 .. records) (the directory's record count; the
 * caller provides that many slots), in tile order: cells ascending, layers in stored order.
 * out[i].cell is tile-local. A tile with 0 records writes nothing. Errors name zone and tile. */
int nm_bgrd_decode_tile(const nm_bgrd *g, uint32_t zone, uint32_t tile, nm_bgrd_scratch *s,
                        nm_grid_rec *out, nm_error *err);

/* The five fields of a record as bits of the `want` mask of nm_bgrd_decode_tile_fields (the
 * order of the residual streams 3..7). */
enum {
    NM_BGRD_F_HEIGHT = 1u << 0,
    NM_BGRD_F_REGION = 1u << 1,
    NM_BGRD_F_CLR = 1u << 2,
    NM_BGRD_F_FLAGS = 1u << 3,
    NM_BGRD_F_STEPS = 1u << 4,
    NM_BGRD_ALL_FIELDS = 0x1f
};

/* nm_bgrd_decode_tile for a reader of a few fields (the checks: the core distance reads the
 * flags, the region's bounding box the region): the streams of the other fields are skipped by
 * their length, never inflated or checked, and those fields are 0 in out (height asks for the
 * flags too: Fill records decode to h = 0). Cells and layer counts are always decoded; the
 * fields asked for are bit-identical to a whole decode's. */
int nm_bgrd_decode_tile_fields(const nm_bgrd *g, uint32_t zone, uint32_t tile, unsigned want,
                               nm_bgrd_scratch *s, nm_grid_rec *out, nm_error *err);

/* Region-only fast path: the sorted region dictionary of a tile (stream 2 only). *n receives
 * the dictionary length; rids must hold at least the directory record count (an upper bound). */
int nm_bgrd_tile_regions(const nm_bgrd *g, uint32_t zone, uint32_t tile, nm_bgrd_scratch *s,
                         uint32_t *rids, uint32_t *n, nm_error *err);

/* The six sidecar columns merged into one decoded record (design article 旁包, 合并进格图记录). */
typedef struct nm_span_fields {
    uint32_t scc;      /* strongly connected component in the region, from 1; 0 for Fill */
    uint16_t clr2;     /* sealed clearance (wall edges as obstacles), squared cells: clr - clr2d */
    uint8_t steps2;    /* re-judged step bits: per direction 0 when the main pack's two bits are
                          0, else the sidecar's bits (steps2x XOR main steps) */
    uint8_t seg;       /* facade segment bits: bit i = a facade segment on the edge towards the
                          neighbour in orthogonal direction i (i < 2: (1,0), (0,1)); article 建窗 */
    uint8_t tax;       /* step-tax edges: direction i forward bit 2i, reverse bit 2i+1 */
    uint8_t medial;    /* bit 0: medial axis */
    uint8_t pad[2];    /* zero: keeps the struct free of indeterminate padding bytes */
} nm_span_fields;

struct nm_bnvf;

/* Output of a rectangle decode; reused between calls (grows only when a larger rectangle
 * needs more room; no allocation per record). Zero it before first use; free with
 * nm_bgrd_out_free. After a decode, recs[0 .. n) hold the records of the cells inside
 * [gx0, gx1) x [gy0, gy1) that their tile owns, with cell = (gy - gy0)*(gx1 - gx0) + (gx - gx0),
 * in tile directory order, then tile order (so the records of one cell are contiguous and in
 * stored order). fields[0 .. n) is filled when a sidecar was given. */
/* A bounded cache of decoded tiles (whole tiles: apron and all records, tile-local cells; with
 * their sidecar columns when decoded with fields), shared by every rectangle decode that names it:
 * the tiers of a plan decode growing windows over the same tiles, and a host plans neighbouring
 * legs back to back. A hit copies the records instead of decoding them: the same bytes. Least
 * recently used tiles go first when a decode needs room; a tile larger than the budget is not
 * kept. Zero it before first use; free with nm_bgrd_cache_free. Not thread-safe: one decode at a
 * time (its workers only copy into slots prepared before they start). */
typedef struct nm_bgrd_cache_tile {
    nm_grid_rec *recs;        /* NULL: not cached */
    nm_span_fields *fields;   /* NULL: cached without fields */
    uint64_t used;            /* clock of the last decode that read or filled it */
    uint8_t fill;             /* during a decode: 1 = this decode fills the slot */
} nm_bgrd_cache_tile;
typedef struct nm_bgrd_cache {
    size_t budget;            /* bytes; 0 = NM_BGRD_CACHE_BYTES */
    size_t bytes;             /* held now */
    nm_bgrd_cache_tile **zone_tiles; /* per zone (NULL until used): tile_count slots */
    uint32_t nzones;
    uint64_t clock;
    uint64_t hits, misses;    /* tiles copied / decoded (statistics) */
} nm_bgrd_cache;
#define NM_BGRD_CACHE_BYTES ((size_t)160 << 20) /* the demo town's whole zone with its sidecar */
void nm_bgrd_cache_free(nm_bgrd_cache *c);

typedef struct nm_bgrd_out {
    nm_grid_rec *recs;
    nm_span_fields *fields;
    size_t n;
    int32_t gx0, gy0, gx1, gy1;
    nm_bgrd_cache *cache;      /* set by the caller (NULL = none); not owned: nm_bgrd_out_free
                                  leaves it alone */
    /* internals (reused) */
    size_t cap, fields_cap;
    nm_bgrd_scratch scratch[NM_WORKER_LIMIT];
    uint32_t *order;           /* tiles in the rectangle, heaviest first */
    size_t *seg_start, *seg_n; /* per selected tile: segment start and kept records */
    size_t tiles_cap;
} nm_bgrd_out;
void nm_bgrd_out_free(nm_bgrd_out *o);

/* One whole decoded tile as a reader walks it in place (建窗 reads the window's records this way
 * instead of copying them into one table): tile-local cells ascending, apron included, fields
 * merged when asked. */
typedef struct nm_bgrd_tile_view {
    const nm_grid_rec *recs;       /* NULL: not available (the cache had no room) */
    const nm_span_fields *fields;  /* NULL when viewed without fields */
    size_t n;                      /* the tile's record count */
    nm_grid_rec *own_recs;         /* decoded for the caller, not cached: nm_bgrd_tile_view_free */
    nm_span_fields *own_fields;
} nm_bgrd_tile_view;
void nm_bgrd_tile_view_free(nm_bgrd_tile_view *v);

/* Views of tiles[0 .. n) of zone `zone` (tiles with 0 records give n = 0, recs = NULL). With a
 * cache: hits point into it and misses are decoded into it (evicting least recently used tiles
 * outside this call's); a tile it has no room for gets recs = NULL. Without a cache: every tile
 * is decoded into the view's own buffers. Pointers into the cache stay valid until the next
 * call through it. Decodes on up to `workers` threads with ws's scratch, heaviest tiles first,
 * each to the first free thread; the bytes do not depend on it. Errors (NM_ERR_CORRUPT naming
 * zone and the first bad tile of the list, NM_ERR_NOMEM) leave every view empty. */
int nm_bgrd_view_tiles(const nm_bgrd *g, uint32_t zone, const uint32_t *tiles, size_t n,
                       const struct nm_bnvf *fields, nm_bgrd_cache *cache, int workers,
                       nm_bgrd_out *ws, nm_bgrd_tile_view *views, nm_error *err);

/* Decodes every tile of zone `zone` whose own rectangle meets [gx0, gx1) x [gy0, gy1) (global
 * cells; [Limits: gx0 < gx1, gy0 < gy1, (gx1-gx0)*(gy1-gy0) <= INT32_MAX]) into out, dropping
 * apron records and records outside the rectangle (建窗 / 解码瓦片). Tiles are decoded on up to
 * `workers` threads (<= 0: default, at most 4), heaviest tiles first, each to the first free
 * thread; the output does not depend on the worker count. fields (may be NULL): a sidecar
 * validated against this section (nm_bnvf_parse); its FSPN columns of each tile are decoded and
 * merged into out->fields.
 * Errors: NM_ERR_ARG (bad zone or rectangle), NM_ERR_CORRUPT (names zone and tile),
 * NM_ERR_NOMEM. */
int nm_bgrd_decode_rect(const nm_bgrd *g, uint32_t zone, int32_t gx0, int32_t gy0, int32_t gx1,
                        int32_t gy1, const struct nm_bnvf *fields, int workers, nm_bgrd_out *out,
                        nm_error *err);

/* ---- writing ----------------------------------------------------------------------------------
 * One zone as the writer takes it: its cell rectangle and its records as a CSR over it.
 * The rectangle's corner is global cell (llround(x0/kCS), llround(y0/kCS)) and it is w x h cells;
 * zone-local cell (x, y) has index y*w + x and records recs[cell_start[i] .. cell_start[i+1]),
 * sorted by nm_grid_layer_cmp (their .cell is ignored). cell_start has w*h + 1 entries (4 bytes
 * a cell: a bake of a huge zone instead encodes its tiles itself and hands them over as tiles). */
typedef struct nm_grid_tiles nm_grid_tiles;
typedef struct nm_grid_zone_src {
    const char *name;
    double x0, y0;               /* zone origin, px */
    int32_t w, h;                /* zone rectangle, cells [Limits: >= 0] */
    uint32_t global_regions;     /* every rid must be <= this */
    const uint32_t *cell_start;
    const nm_grid_rec *recs;
    const nm_grid_tiles *tiles;  /* not NULL: the zone's tiles already encoded (then cell_start,
                                    recs and the BNVF columns are not read) */
} nm_grid_zone_src;

/* A zone's tiles encoded by their producer (the bake, which never holds the whole zone's records):
 * for every tile of the default tiling (NM_BGRD_TILE_CELLS, NM_BGRD_APRON_CELLS, row-major) its
 * record count, its BGRD payload (nm_bgrd_encode_tile at NM_GRID_LEVEL) and its FSPN tile
 * (nm_bnvf_encode_spn_tile). The writers copy them as they are: the bytes equal those the writers
 * would encode from the whole zone's records (tested). */
struct nm_grid_tiles {
    uint32_t count;
    uint32_t *records;           /* per tile */
    nm_buf *grid;                /* per tile: BGRD payload */
    nm_buf *fields;              /* per tile: FSPN tile */
};

/* Default libdeflate level of the grid and sidecar streams: level 9 bakes the demo town 3x faster
 * than 12 for 7% more bytes (0.103 vs 0.096 bytes per record); the readers do not care. */
#define NM_GRID_LEVEL 9

typedef struct nm_bgrd_write_opts {
    int32_t tile_cells;   /* own rectangle side, cells; 0 = NM_BGRD_TILE_CELLS */
    int32_t apron_cells;  /* apron width, cells; 0 = NM_BGRD_APRON_CELLS, < 0 = none */
    int level;            /* libdeflate level; 0 = NM_GRID_LEVEL */
    int workers;          /* tile encoding threads; 0 = default (output does not depend on it) */
} nm_bgrd_write_opts;

/* The tiling of a zone (the same for BGRD and the FSPN columns of BNVF): own rectangles of
 * tile_cells^2 cells from the zone corner, row-major, covering the zone without overlap, each
 * with a window of tile_cells + 2*apron + 1 cells a side (the extra cell: one more cell centre
 * than cell edges). Every tile gets an entry, empty ones too (records = 0), so the directory is
 * a regular grid. *count receives the tile count; tiles (may be NULL) receives the entries with
 * offset/len/records = 0. */
int nm_bgrd_zone_tiling(const nm_grid_zone_src *z, const nm_bgrd_write_opts *opts,
                        nm_bgrd_tile *tiles, uint32_t *count, nm_error *err);

/* The records of one tile window gathered from a zone: recs (cell tile-local) and, when src_index
 * is not NULL, the index of each in z->recs (to gather sidecar columns in the same order).
 * Buffers grow through nm_realloc; *cap is their capacity in records. */
int nm_bgrd_gather_tile(const nm_grid_zone_src *z, const nm_bgrd_tile *t, nm_grid_rec **recs,
                        uint32_t **src_index, size_t *cap, size_t *n, nm_error *err);

/* Encodes one v3 tile payload (records tile-local, cells ascending, each cell in canonical
 * order) and appends it to out. select_out (may be NULL) receives the first min(5*kmax,
 * select_cap) select bytes (index field*kmax + layer, NM_BGRD_PRED_*); *kmax_out (may be NULL)
 * receives kmax. nx, ny: the tile window, cells.
 * Fill records: their height is ignored (stored as the prediction, so its residual is 0) and
 * excluded from hmin. Errors: NM_ERR_ARG for unsorted cells, non-finite heights, a height span
 * over 2^31/64 m, rid > global_regions. */
int nm_bgrd_encode_tile(const nm_grid_rec *recs, size_t n, int32_t nx, int32_t ny,
                        uint32_t global_regions, int level, nm_buf *out, uint8_t *select_out,
                        size_t select_cap, uint32_t *kmax_out, nm_error *err);

/* Writes a whole BGRD v3 section (header, zone directories, tile payloads). Deterministic. */
int nm_bgrd_write(const nm_grid_zone_src *zones, uint32_t zone_count,
                  const nm_bgrd_write_opts *opts, nm_buf *out, nm_error *err);

/* ================================================================================================
 * BNVF — 旁包
 * ============================================================================================== */

#define NM_BNVF_VERSION 2
#define NM_BNVF_RULES 2
#define NM_BNVF_HEADER_SIZE 48
#define NM_BNVF_ENTRY_SIZE 24
#define NM_BNVF_FCON_SIZE 144
#define NM_BNVF_LINK_SIZE 80
#define NM_BNVF_OPEN_SIZE 16

/* The 144 bytes FCON must hold: the rule constants this build runs with (15 f64, 6 i32). */
void nm_bnvf_fcon(uint8_t out[NM_BNVF_FCON_SIZE]);

/* One side of an FLNK record (24 bytes). why: 0 usable, 1 out of bounds, 2 no surface,
 * 3 no surface in band, 4 only non-core surfaces. */
typedef struct nm_bnvf_link_side {
    int32_t gx, gy;
    float h, decl_h;
    uint32_t rid;
    uint16_t clr;
    uint8_t flags, why;
} nm_bnvf_link_side;

/* FLNK record (80 bytes): an off-mesh link resolved to landing cells. */
typedef struct nm_bnvf_link {
    uint32_t boml_index;
    uint16_t zone_id;
    uint8_t kind, valid;           /* valid: bit 0 lo side usable, bit 1 hi side usable */
    int32_t is_ext, bidirectional, area;
    uint16_t link_type;
    uint8_t direction;
    float radius, cost_modifier;
    nm_bnvf_link_side lo, hi;
} nm_bnvf_link;

/* FOPN record (16 bytes): an openable dead cell. Sorted within a zone by (gy, gx, bits of h). */
typedef struct nm_bnvf_open {
    int32_t gx, gy;
    float h;
    uint16_t clr;
    uint8_t flags, src;
} nm_bnvf_open;

/* A zone's slice of a record table (FLNK / FOPN zone index). */
typedef struct nm_bnvf_range {
    uint16_t zone_id;
    uint32_t first, len;
} nm_bnvf_range;

typedef struct nm_bnvf_zone {
    char *name;
    uint32_t name_len;
    uint32_t global_regions, tile_count;
    uint64_t spn_off, spn_len, scc_off, scc_len, wal_off, wal_len; /* in FSPN / FSCC / FWAL */
    int32_t bgrd_zone;            /* matching BGRD zone, or -1 (FZON may list more zones) */
    uint64_t records;             /* records of that BGRD zone's tiles: bounds the component ids */
} nm_bnvf_zone;

/* A loaded, validated sidecar. Bytes are owned when loaded from a file, borrowed when parsed. */
typedef struct nm_bnvf {
    uint16_t version, flags;
    uint64_t build_hash, fnv;
    uint32_t rules;
    const uint8_t *bytes;
    size_t size;
    uint8_t *owned;
    uint64_t spn_at, spn_size, scc_at, scc_size, wal_at, wal_size; /* section ranges in bytes */
    nm_bnvf_zone *zones;
    uint32_t zone_count;
    int32_t *zone_of_bgrd;        /* per BGRD zone: the FZON zone index */
    uint32_t bgrd_zone_count;
    nm_bnvf_link *links; uint32_t link_count;
    nm_bnvf_range *link_zones; uint32_t link_zone_count;
    nm_bnvf_open *opens; uint32_t open_count;
    nm_bnvf_range *open_zones; uint32_t open_zone_count;
} nm_bnvf;

/* Parses and validates a decompressed sidecar against its main pack, in the article's order
 * (旁包校验): 1 magic "BNVF" and version 2; 2 build_hash and fnv equal the main pack's;
 * 3 rules == 2; 4 FCON, FZON, FSPN, FSCC, FWAL all present; 5 FCON byte-identical to
 * nm_bnvf_fcon; 6 every BGRD zone in FZON with equal region count, tile count and per-tile record
 * counts. Then FLNK and FOPN (optional) are parsed, FOPN order checked. Each failure is
 * NM_ERR_CORRUPT with a message "<name>: check N (<what>): ...". data is borrowed. */
int nm_bnvf_parse(const uint8_t *data, size_t size, const char *name, uint64_t build_hash,
                  uint64_t fnv, const nm_bgrd *grid, nm_bnvf *out, nm_error *err);
/* Reads the file (gzip when *.gz) and parses it; the bytes are owned by out. */
int nm_bnvf_load(const char *path, uint64_t build_hash, uint64_t fnv, const nm_bgrd *grid,
                 nm_bnvf *out, nm_error *err);
void nm_bnvf_free(nm_bnvf *f);

/* The six columns of one FSPN tile. */
typedef struct nm_bnvf_cols {
    uint32_t *scc;
    uint8_t *steps2x, *seg, *tax, *medial;
    uint16_t *clr2d;
} nm_bnvf_cols;

/* Decodes the FSPN tile of BGRD zone `bgrd_zone`, tile `tile` and merges it into the tile's
 * decoded records recs[0 .. n) (n = the tile's record count): out[i] gets the merged fields.
 * clr2d > recs[i].clr is an error (the sidecar is wrong). scratch holds the inflated columns. */
int nm_bnvf_merge_tile(const nm_bnvf *f, uint32_t bgrd_zone, uint32_t tile,
                       const nm_grid_rec *recs, size_t n, nm_bytes scratch[6],
                       nm_span_fields *out, nm_error *err);

/* The records of a tile in a rectangle of its cells: local column x0 <= cell % tnx < x1, row
 * y0 <= cell / tnx < y1. */
typedef struct nm_bnvf_keep {
    uint32_t tnx;
    int64_t x0, x1, y0, y1;
} nm_bnvf_keep;

/* A tile's cells as column and row without a division a cell: a tile's records ascend by cell, so
 * the row is found again only when a cell leaves the row of the cell before it (a cell in any
 * other row, earlier ones included, divides: any order gives the right answer). Starts as
 * {nx, 0, 0}: row 0. */
typedef struct nm_cell_rows {
    uint32_t nx, row0, row; /* row length; the current row's first cell and its number */
} nm_cell_rows;

static inline uint32_t nm_cell_column(nm_cell_rows *r, uint32_t cell)
{
    if (cell - r->row0 >= r->nx) { /* a cell before row0 wraps past nx too */
        r->row = cell / r->nx;
        r->row0 = r->row * r->nx;
    }
    return cell - r->row0;
}

/* Whether keep holds a tile's cell; r (r->nx = keep->tnx) is left on the cell's row. */
static inline bool nm_bnvf_keeps(const nm_bnvf_keep *k, nm_cell_rows *r, uint32_t cell)
{
    const int64_t x = nm_cell_column(r, cell), y = r->row;
    return x >= k->x0 && x < k->x1 && y >= k->y0 && y < k->y1;
}

/* nm_bnvf_merge_tile writing only the fields of the records `keep` holds, in record order, to
 * out[0 .. *nout) (keep NULL: every record). The whole tile is decoded and checked as there; a
 * window that needs a part of a tile holds the fields of that part only (建窗的内存). */
int nm_bnvf_merge_tile_kept(const nm_bnvf *f, uint32_t bgrd_zone, uint32_t tile,
                            const nm_grid_rec *recs, size_t n, nm_bytes scratch[6],
                            const nm_bnvf_keep *keep, nm_span_fields *out, size_t *nout,
                            nm_error *err);

/* One region's component DAG as CSR: components 1..n_scc; the edges of component c are
 * dst[row[c-1] .. row[c]). */
typedef struct nm_bnvf_dag {
    uint32_t rid, n_scc;
    uint32_t *row;   /* n_scc + 1 */
    uint32_t *dst;
} nm_bnvf_dag;

/* A zone's FSCC and FWAL, decoded when the zone is first used. */
typedef struct nm_bnvf_zone_data {
    nm_bnvf_dag *dags;     /* sorted by rid */
    uint32_t dag_count;
    uint64_t *wall_keys;   /* sorted, key = 3*t + k (t in-zone triangle, k edge) */
    uint32_t *wall_row;    /* wall_count + 1 */
    uint32_t *wall_rids;   /* per wall: ascending regions that keep it */
    uint32_t wall_count;
} nm_bnvf_zone_data;

int nm_bnvf_zone_load(const nm_bnvf *f, uint32_t fzon_zone, nm_bnvf_zone_data *out,
                      nm_error *err);
void nm_bnvf_zone_data_free(nm_bnvf_zone_data *d);
/* The DAG of region rid, or NULL. */
const nm_bnvf_dag *nm_bnvf_dag_of(const nm_bnvf_zone_data *d, uint32_t rid);
/* reachFrom: the components reachable from `seed` (1-based) by iterative depth-first search.
 * mark (n_scc + 1 bytes) receives 1 for reachable components; stack and list (n_scc entries
 * each) are caller scratch; list[0 .. return) the reachable set in visit order. Returns the
 * count, or 0 when seed is out of range. */
uint32_t nm_bnvf_reach_from(const nm_bnvf_dag *d, uint32_t seed, uint8_t *mark, uint32_t *stack,
                            uint32_t *list);
/* Wall-keep lookup: *kept = region rid keeps the wall (3t + k). A key not in the table is an
 * error (the sidecar does not match the zone mesh): NM_ERR_CORRUPT. */
int nm_bnvf_wall_kept(const nm_bnvf_zone_data *d, uint64_t key, uint32_t rid, bool *kept,
                      nm_error *err);
/* FOPN lookup by exact (gx, gy, bits of h) within BGNAV zone id; NULL when absent. */
const nm_bnvf_open *nm_bnvf_find_open(const nm_bnvf *f, uint16_t zone_id, int32_t gx,
                                      int32_t gy, float h);

/* ---- writing ----------------------------------------------------------------------------------
 * Per zone input of the sidecar writer. The grid is the same nm_grid_zone_src given to
 * nm_bgrd_write with the same tiling options; the columns are aligned with grid->recs (zone
 * order) and are cut per tile the way BGRD cuts records (apron records included). */
typedef struct nm_bnvf_region_src {
    uint32_t rid, n_scc;
    uint32_t n_edges;
    const uint32_t *edges;   /* n_edges pairs (src, dst), 1-based, sorted by (src, dst) */
} nm_bnvf_region_src;

typedef struct nm_bnvf_zone_src {
    const nm_grid_zone_src *grid;
    const uint32_t *scc;     /* per record */
    const uint8_t *steps2x, *seg, *tax, *medial;
    const uint16_t *clr2d;   /* <= the record's clr */
    const nm_bnvf_region_src *regions; uint32_t region_count; /* sorted by rid */
    const uint64_t *wall_keys; uint32_t wall_count;           /* strictly ascending */
    const uint32_t *wall_row;  /* wall_count + 1 */
    const uint32_t *wall_rids; /* per wall ascending */
} nm_bnvf_zone_src;

typedef struct nm_bnvf_write_src {
    uint64_t build_hash, fnv;              /* of the main pack */
    const nm_bnvf_zone_src *zones; uint32_t zone_count;
    const nm_bnvf_link *links; uint32_t link_count;        /* FLNK written when links != NULL */
    const nm_bnvf_range *link_zones; uint32_t link_zone_count;
    const nm_bnvf_open *opens; uint32_t open_count;        /* FOPN written when opens != NULL */
    const nm_bnvf_range *open_zones; uint32_t open_zone_count;
} nm_bnvf_write_src;

int nm_bnvf_write(const nm_bnvf_write_src *src, const nm_bgrd_write_opts *tiling, nm_buf *out,
                  nm_error *err);

/* One FSPN tile (旁包): the record count as a varint, then, when not 0, the six columns as zlib
 * streams at `level` (scc as zigzag deltas, steps2x, seg, tax, clr2d as varints, medial), appended
 * to out. recs and the columns are the tile's records in tile order (recs gives clr only: clr2d
 * must not exceed it; NM_ERR_ARG naming the tile record otherwise). */
int nm_bnvf_encode_spn_tile(const nm_grid_rec *recs, const uint32_t *scc, const uint8_t *steps2x,
                            const uint8_t *seg, const uint8_t *tax, const uint16_t *clr2d,
                            const uint8_t *medial, size_t n, int level, nm_buf *out, nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
