/* window.h — one tier's window (design article 建窗): the grid and sidecar of a rectangle of the
 * zone decoded and expanded into raster layers and a span table, walls and no-go zones stamped,
 * steps and facade segments restored, the seed span chosen, off-mesh links attached and the
 * reach set closed over them, and the blocker segments collected.
 *
 * This struct is the contract between the window build (navmesh/window), the searches
 * (navmesh/search), sight (navmesh/sight) and post-processing (navmesh/route). Fields may be
 * ADDED; none is renamed or removed without telling every user.
 *
 * Frames: window cell (i, j), 0 <= i < nx, 0 <= j < ny, number c = j*nx + i; global cell
 * (gx0 + i, gy0 + j); cell centre (x0 + (i + 1/2)*kCS, y0 + (j + 1/2)*kCS) px, with
 * x0 = gx0*kCS, y0 = gy0*kCS (the window's origin lies on the global cell lines). Heights in m.
 *
 * Memory (article 建窗的内存): the raster layers are nx*ny each; every array is released by the
 * stage that uses it last (set to NULL then) — nm_window_free frees whatever is left. The
 * records are read in place from the engine's tile cache (or decoded one band of tiles at a
 * time), never copied into a window-wide table: the peak is the layers (8 B a cell, 9 during
 * the build) and the span table (13 B a span with its component column, 9 after step 12,
 * plus 5 B an occupied cell for the index built after that). */
#ifndef NM_WINDOW_H
#define NM_WINDOW_H

#include "../base/base.h"
#include "../grid/grid.h"
#include "../pack/grid_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-span bits of nm_window.sp_bits. */
enum {
    NM_SP_VIS3 = 0x01,   /* the span belongs to the window's region (vis3 = 1); other regions'
                            spans stay in the table with vis3 = 0 for layer checks only */
    NM_SP_REACH = 0x02,  /* usable: vis3 and its component is in the reach set */
    NM_SP_GHOST = 0x04,  /* record flag Ghost (this region's ghosts are kept) */
    NM_SP_DEAD = 0x08,   /* record flag Dead */
    NM_SP_WALK = 0x10,   /* record flag Walk */
    NM_SP_CORE = 0x20    /* record flag Core */
};

/* An off-mesh link inside the window (建窗 / 种子与离网连接): both ends landed on a span of the
 * region within kMcHBand of the declared height; cost = max(cost_modifier, 1) * cell distance.
 * A bidirectional link is stored twice (forward and reverse). */
typedef struct nm_window_link {
    uint32_t from_cell, to_cell;   /* window cells */
    uint32_t from_span, to_span;   /* spans of the window's span table */
    double cost;                   /* cells */
    uint32_t boml_index;           /* index in the pack's BOML / FLNK, for diagnostics */
} nm_window_link;

/* A blocker segment (walls kept on this region's layer, facade segments), window px.
 * (A: "window px" = the zone's map px, the frame of win.x0 / win.y0 — not window-relative.) */
enum { NM_SEG_WALL = 0, NM_SEG_FACADE = 1 };
typedef struct nm_window_seg {
    double ax, ay, bx, by;
    uint8_t kind;
} nm_window_seg;

typedef struct nm_window {
    /* ---- frame ---- */
    nm_grid_window win;      /* x0, y0 (px), nx, ny */
    int64_t gx0, gy0;        /* global cell of window cell (0, 0) */
    uint32_t region;         /* the window's region (global rid) */

    /* ---- raster layers (nx*ny each; NULL once released) ---- */
    uint8_t *lay;            /* the region's layer: records with Walk, or without Core */
    uint8_t *core;           /* Core bit */
    float *dist;             /* sealed clearance, px (walls counted); 0 in no-go zones */
    uint8_t *medial;         /* medial-axis bit */
    uint8_t *stepbits;       /* final forbidden steps of the cell: direction i of
                                nm_grid_step_dx/dy, bit 2i forbids c -> c+d_i, bit 2i+1 forbids
                                c+d_i -> c (restored from the main pack + sidecar) */
    /* (no step-tax layer: kStepTax = 0, the searches never read it, so the build keeps none) */

    /* ---- spans: every non-Fill span of the window except other regions' Ghosts ---- */
    nm_span_table spans;     /* sorted by cell, a cell's spans in stored order; face bits; occ
                                index. sp_ins is not kept (NULL): Core is in sp_bits */
    uint8_t *sp_bits;        /* [spans.nspans] NM_SP_* */
    uint32_t *sp_scc;        /* [spans.nspans] component in the region (1-based), 0 = none; only
                                the build reads it (step 12): NULL once the build returns */
    /* (no region column: a span is this region's when vis3; the one reader of other regions'
       ids, the ledge-hop search, reads them from the tiles: nm_window_record_is_span) */
    uint32_t seed_span;      /* the seed span (start side), in spans */

    /* ---- off-mesh links (both ends usable and inside the window) ---- */
    nm_window_link *links;
    uint32_t nlinks;
    uint32_t links_without_landing; /* region links whose ends found no landing span */

    /* ---- blockers (article 障碍线段: kept walls + facade segments) ---- */
    nm_window_seg *segs;
    uint32_t nsegs;

    /* ---- vertical reachability ---- */
    nm_fall_gate gate;       /* the zone's collision gate for drops (fn NULL = none) */

    /* ---- measurements ---- */
    size_t peak_bytes;       /* peak bytes held by the build */
    double build_ms;
    uint32_t tiles_paired;   /* tiles step 5 decoded beside another one */

    /* ---- added by the window build (A) ---- */
    uint16_t zone_id;        /* BNAV zone id (FLNK / FOPN lookups) */
    double peak_bytes_per_cell; /* peak_bytes / (nx*ny) */
    uint32_t seed_cell;      /* window cell of the seed */
    double seed_h;           /* the region pick's seed height, m */
    uint32_t nwalls_kept;    /* segs[0 .. nwalls_kept) are kept walls, the rest facade segments */
    uint32_t nogo_cells;     /* cells zeroed by authored polygons and runtime discs */
    uint32_t reach_comps;    /* components in the reach set after the link closure */
    /* free_step[k]: the build step (1..13 of 建窗) after which temporary k of NM_WTMP_* was
     * released (0 = never held); lets tests check the article's release order. */
    uint8_t free_step[8];
    uint32_t seed_comp;      /* the seed span's component: the reach set is this component's
                                closure (step 12), whatever span of it seeds the window */
} nm_window;

/* Temporaries of the build, in the article's release order (建窗的内存). */
enum {
    NM_WTMP_CELLHEAD = 0, /* per-cell list heads: never held (the tiles are read in cell order) */
    NM_WTMP_RECORDS = 1,  /* decoded records: tiles the cache does not hold, one band at a time */
    NM_WTMP_WALLS = 2,    /* boundary edges of the window before wall selection */
    NM_WTMP_LH = 3,       /* lh of one row of a banded no-go polygon's box (held only for one) */
    NM_WTMP_BITMAPS = 4,  /* the main step bits and segment bits per cell (one byte) */
    NM_WTMP_SEGSRC = 5,   /* kept walls + facade source lists (merged into segs) */
    NM_WTMP_SCC = 6,      /* the span component column (reach set, step 12) */
    NM_WTMP_CLR = 7       /* the stored clearance, 2 B a cell, until the px layer (dist) is made
                             after step 12 */
};

void nm_window_free(nm_window *w); /* frees everything left; NULL-safe; zeroes *w */

/* ---- window build (建窗) ---------------------------------------------------------------------- */

/* An authored no-go polygon ring (nogo_zones.json), px of the zone's map. banded: drawn on a tier
 * with a floor; then only cells whose lh lies within floor_y +- kBaseNavFloorBand are stamped. */
typedef struct nm_nogo_poly {
    const double *xy;        /* n points (x, y) */
    uint32_t n;              /* >= 3 */
    bool banded;
    double floor_y;
    const char *id;          /* for messages; may be NULL */
} nm_nogo_poly;

/* A runtime no-go disc: cells whose centre lies within r px of (x, y) are stamped, any height. */
typedef struct nm_nogo_disc {
    double x, y, r;
} nm_nogo_disc;

struct nm_zone_clean;

/* Everything buildWindow needs. The window is the global cell rectangle [gx0, gx0+nx) x
 * [gy0, gy0+ny) (use nm_window_frame_px for step 1 from a px rectangle). */
typedef struct nm_window_request {
    const nm_bgrd *grid;            /* the pack's grid section */
    uint32_t bgrd_zone;             /* zone index in grid */
    const nm_bnvf *fields;          /* the validated sidecar (required) */
    const nm_bnvf_zone_data *fzone; /* FSCC / FWAL of the zone (required) */
    uint16_t zone_id;               /* BNAV zone id (FLNK / FOPN) */
    const struct nm_zone_clean *zc; /* boundary edges; NULL = no walls */
    int64_t gx0, gy0;
    int32_t nx, ny;
    uint32_t region;                /* the picked region (global rid) */
    int64_t seed_gx, seed_gy;       /* seed record's global cell */
    double seed_h;                  /* seed record's height, m */
    const nm_nogo_poly *polys; uint32_t npolys;
    const nm_nogo_disc *discs; uint32_t ndiscs;
    nm_fall_gate gate;
    int workers;                    /* threads of the tile decodes and the whole-window passes (0 =
                                       default); output independent */
    nm_bgrd_out *reuse;             /* optional decode scratch kept by the caller (not freed); its
                                       cache (when set) holds the tiles the build reads in place.
                                       NULL = scratch of the build's own, no cache */
} nm_window_request;

/* Step 1 of 建窗: nx = ceil((x1 - x0)/kCS), global origin round(x0/kCS) (on the global cell
 * lines). Fills req->gx0, gy0, nx, ny. NM_ERR_ARG for an empty / non-finite rectangle or one over
 * NM_GRID_MAX_CELLS. */
int nm_window_frame_px(double x0, double y0, double x1, double y1, nm_window_request *req,
                       nm_error *err);

/* buildWindow: the 13 steps of 建窗 in order (decode + sidecar merge + FOPN, seed cell to window,
 * records to layers and span vector, wall selection via FWAL, authored no-go, runtime discs, span
 * table + steps + facade segments, seed span, off-mesh links, reach closure, blocker table).
 * On failure *w is freed and zeroed and err names the step. */
int nm_window_build(const nm_window_request *req, nm_window *w, nm_error *err);

/* The same from records already decoded (steps 4-13; step 2's boundary edges from req->zc).
 * recs/fields[0 .. n): cells numbered over the window (c = j*nx + i), records of one cell
 * contiguous and in canonical order; fields required. The arrays are only read. */
int nm_window_build_records(const nm_window_request *req, const nm_grid_rec *recs,
                            const nm_span_fields *fields, size_t n, nm_window *w, nm_error *err);

/* A window kept from an earlier leg for req (the same rectangle of the same region and zone with
 * the same no-go state, which the caller checks): the reach set depends on the request only
 * through the seed's component, so w is req's window when req's seed span — step 10's choice,
 * read from the seed cell's tile through req->reuse's cache — lies in w->seed_comp. Then the
 * seed is moved there (seed_cell, seed_span, seed_h) and *fits is true; w is otherwise left as
 * it is. Errors: NM_ERR_NOMEM / NM_ERR_CORRUPT from the tile decode. */
int nm_window_reseed(nm_window *w, const nm_window_request *req, bool *fits, nm_error *err);

/* Whether a decoded record of global cell (gx, gy) enters the span table of a window of `region`
 * (建窗 step 5: its flags after FOPN hold no Fill, and an other region's record no Ghost): a
 * cell's spans are its records in stored order that pass this test. fields may be NULL. */
bool nm_window_record_is_span(const nm_bnvf *fields, uint16_t zone_id, uint32_t region,
                              const nm_grid_rec *r, int64_t gx, int64_t gy);

/* Even-odd point-in-ring test (cell centre test of the no-go polygons). */
bool nm_nogo_poly_contains(const nm_nogo_poly *p, double x, double y);
/* nm_nogo_poly_contains(p, x0 + (i + 0.5) * cs, y) for i in [i0, i1] into in[i - i0], in one pass
 * over the ring instead of one a cell (建窗 step 7 a row at a time; a ring of thousands of points
 * made a window take tens of seconds). xs: scratch of p->n doubles. */
void nm_nogo_poly_row(const nm_nogo_poly *p, double y, double x0, double cs, int64_t i0, int64_t i1,
                      double *xs, uint8_t *in);

#ifdef __cplusplus
}
#endif
#endif
