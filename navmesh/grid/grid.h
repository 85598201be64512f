/* grid.h — the grid operators of the voxel bake (design article 预烘场 and 垂直可达判据):
 * conservative rasterisation, seam bridging, span merging and the columnar span table,
 * region labelling, hole filling and crack closing, the truncated distance transform
 * (clearance), nearest sources and the lambda-medial axis, RiseOk with its step bits,
 * wall stamping, and strongly connected components of a directed graph.
 *
 * Units: horizontal positions in base-map pixels (px), one cell is NM_kCS = 0.25 px; heights in
 * metres (m). A window has origin (x0, y0) px and nx * ny cells; cell (i, j) has number
 * c = j*nx + i and centre (x0 + (i + 1/2)*kCS, y0 + (j + 1/2)*kCS). Row j = 0 is the top row
 * (image order, v grows downward), so "north" is j - 1.
 *
 * Memory: operators allocate their up-front arrays through nm_malloc & co and never inside
 * per-cell loops; outputs that the caller owns are released with the matching *_free call.
 * Every function that can fail returns NM_OK or a negative NM_ERR_* and fills err. */
#ifndef NM_GRID_H
#define NM_GRID_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>

#include "base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest window the operators accept, cells (cell numbers and indices are 32-bit). */
#define NM_GRID_MAX_CELLS 0x7FFFFFFFu

/* ---- window -------------------------------------------------------------------------------- */
/* A rectangle of cells. [Limits: 1 <= nx, ny; nx*ny <= NM_GRID_MAX_CELLS] */
typedef struct nm_grid_window {
    double x0, y0; /* origin, px */
    int32_t nx;    /* width, cells */
    int32_t ny;    /* height, cells */
} nm_grid_window;

/* Checks the window limits; NM_ERR_ARG with a message otherwise. */
int nm_grid_window_check(const nm_grid_window *w, nm_error *err);

/* ---- samples (栅格化 output) --------------------------------------------------------------- */
/* Height samples as three parallel columns. Also used as the input list of PackSpans, where each
 * entry is one already-merged span. */
typedef struct nm_grid_samples {
    uint32_t *cell; /* cell number in the window [Limits: < nx*ny] */
    float *h;       /* height, m */
    uint8_t *ins;   /* 1 when the cell centre lies inside the triangle (core candidate), else 0 */
    size_t n;       /* entries in use [Limits: < 2^32] */
    size_t cap;     /* entries allocated */
} nm_grid_samples;

/* Makes room for `more` further entries (amortised doubling). */
int nm_grid_samples_reserve(nm_grid_samples *s, size_t more, nm_error *err);
/* Appends one entry; fails only on NM_ERR_NOMEM. */
int nm_grid_samples_push(nm_grid_samples *s, uint32_t cell, float h, uint8_t ins, nm_error *err);
void nm_grid_samples_free(nm_grid_samples *s);

/* Walkable triangle mesh handed to the rasteriser (a view; nothing is copied). */
typedef struct nm_grid_mesh {
    const float *verts;     /* nverts * {u px, v px, h m} [Limits: finite on walkable triangles] */
    size_t nverts;
    const uint32_t *tris;   /* ntris * 3 vertex indices, edge k runs from corner k to (k+1)%3
                             * [Limits: < nverts] */
    size_t ntris;
    const uint8_t *walkable; /* ntris flags, 0 = skipped (no samples); NULL = all walkable */
} nm_grid_mesh;

/* Rasterize (栅格化): appends to `out` one sample per cell of `win` that each walkable triangle
 * touches (2-D separating-axis test over 5 axes, closed intervals; scan range by floor, so cells
 * touching only the left/bottom edge of a triangle whose extreme lies on a grid line get none),
 * with the barycentric height at the cell centre after clamping (t to [0,1], s to [0,1-t]) and
 * the ins bit; then a second pass adds, for every walkable triangle, one sample at its centroid
 * cell (trunc of the centroid offset) with the mean vertex height and ins = 0. Vertical (zero
 * area) triangles take |D| < 1e-12 as D = 1e-12. Sample order: triangles in index order, cells
 * row-major inside each triangle's range, then the centroid samples in triangle order.
 * Errors: NM_ERR_ARG for a bad window, vertex index or non-finite vertex, NM_ERR_NOMEM (the
 * samples appended so far stay in `out`, which the caller frees). */
int nm_grid_rasterize(const nm_grid_window *win, const nm_grid_mesh *mesh, nm_grid_samples *out,
                      nm_error *err);

/* ---- span table (span 合并, PackSpans) ------------------------------------------------------ */
/* Columnar spans of a window. sp_cell/sp_h/sp_ins are sorted by cell, then by height; cs[k] is the
 * first span of the k-th occupied cell (cs[nocc] = nspans). occ_bits has one bit per cell (bit
 * c % 64 of word c / 64) and occ_rank[w] counts the occupied cells before word w, so a cell's
 * occupied index is occ_rank[w] + popcount(occ_bits[w] & (2^b - 1)). face[k] is the facade bit of
 * occupied cell k: n != 2 and h_max - h_min > kClimb (3 m) for its n spans (so at least three). */
typedef struct nm_span_table {
    nm_grid_window win;
    uint32_t nspans;
    uint32_t nocc;      /* occupied cells */
    uint32_t max_col;   /* the most spans a cell holds (0 for an empty table) */
    uint32_t *sp_cell;  /* [nspans] */
    float *sp_h;        /* [nspans] m */
    uint8_t *sp_ins;    /* [nspans] 1 when some merged sample had ins = 1 */
    uint32_t *cs;       /* [nocc + 1] */
    uint8_t *face;      /* [nocc] */
    uint64_t *occ_bits; /* [(nx*ny + 63) / 64] */
    uint32_t *occ_rank; /* [(nx*ny + 63) / 64] */
} nm_span_table;

/* BuildSpans (span 合并): sorts the samples by (cell, height) — two-level counting sort on the
 * cell number, then insertion sort by height inside a cell — and cuts each cell's samples into
 * spans: a new span opens when h - h_first > kMergeH (0.25 m), where h_first is the span's first
 * sample; the span height is the mean of its samples. Then packs them like PackSpans. The samples
 * are left untouched. Errors: NM_ERR_ARG (cell out of the window), NM_ERR_NOMEM. */
int nm_grid_build_spans(const nm_grid_window *win, const nm_grid_samples *samples,
                        nm_span_table *out, nm_error *err);

/* BuildSpans' working columns, kept by a caller that builds window after window of about the
 * same size (the bake's raster bands, one scratch per worker slot): their pages are faulted in
 * once, not once a window. Zeroed = empty; nm_span_scratch_free releases them. */
typedef struct nm_span_scratch {
    uint32_t *at, *sc; /* counting sort starts [nat]; cell column in cell order [cap] */
    float *sh;         /* [cap] */
    uint8_t *si;       /* [cap] */
    size_t nat, cap;
} nm_span_scratch;
/* nm_grid_build_spans with the caller's scratch (the same table). */
int nm_grid_build_spans_reusing(const nm_grid_window *win, const nm_grid_samples *samples,
                                nm_span_scratch *ws, nm_span_table *out, nm_error *err);
void nm_span_scratch_free(nm_span_scratch *ws);

/* PackSpans: stores already-merged spans (any order) as the columnar table, sorting by cell then
 * height and computing occ_bits, occ_rank, cs and face. CONSUMES `spans`: its columns are moved
 * and freed one by one (so input and output never both exist whole), and it is left empty on
 * every path. Errors: NM_ERR_ARG, NM_ERR_NOMEM. */
int nm_grid_pack_spans(const nm_grid_window *win, nm_grid_samples *spans, nm_span_table *out,
                       nm_error *err);

void nm_span_table_free(nm_span_table *t);

/* The lookups below are inline: the bake asks for a cell's spans several times per span (steps,
 * SCC, regions), and a call per lookup was the largest single item of its profile. */

/* Bit count without a call: with no popcnt instruction enabled (portable builds) the builtin
 * is a libgcc call. */
static inline uint32_t nm_grid_popc64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* Exact quotient c / d of a cell number c < 2^31 by a window width d (1 <= d < 2^31) as a
 * multiply and a shift (Granlund and Montgomery's round-up method: m = ceil(2^(31 + l) / d) with
 * 2^(l-1) < d <= 2^l), for loops over every cell that need its row and column: an integer
 * division a cell costs tens of cycles. */
typedef struct nm_grid_divider {
    uint64_t magic;
    unsigned shift;
} nm_grid_divider;

static inline nm_grid_divider nm_grid_divider_of(uint32_t d)
{
    nm_grid_divider v = {0, 31};
    while (((uint64_t)1 << (v.shift - 31)) < d) /* shift = 31 + ceil(log2 d) */
        v.shift++;
    v.magic = (((uint64_t)1 << v.shift) + d - 1) / d;
    return v;
}

static inline uint32_t nm_grid_div(const nm_grid_divider *v, uint32_t c)
{
    return (uint32_t)(((uint64_t)c * v->magic) >> v->shift);
}

/* Occupied index of cell c (0..nocc-1), or -1 when the cell has no span or c is out of range.
 * One bit test and one popcount. */
static inline int64_t nm_span_cell_index(const nm_span_table *t, uint32_t c)
{
    if ((uint64_t)c >= (uint64_t)t->win.nx * (uint64_t)t->win.ny)
        return -1;
    uint64_t word = t->occ_bits[c >> 6];
    uint32_t b = c & 63;
    if (!((word >> b) & 1u))
        return -1;
    uint64_t below = word & (((uint64_t)1 << b) - 1);
    return (int64_t)t->occ_rank[c >> 6] + nm_grid_popc64(below);
}

/* Spans of cell c: *first = first span index, returns the count (0 when empty). */
static inline uint32_t nm_span_cell_spans(const nm_span_table *t, uint32_t c, uint32_t *first)
{
    int64_t k = nm_span_cell_index(t, c);
    if (k < 0) {
        *first = 0;
        return 0;
    }
    *first = t->cs[k];
    return t->cs[k + 1] - t->cs[k];
}

/* The cell of occupied index o (0 <= o < nocc), from occ_rank and occ_bits alone (a table whose
 * sp_cell was freed): bisection of the words, then the bit. */
uint32_t nm_span_occupied_cell(const nm_span_table *t, uint32_t o);

/* The first occupied cell after c (there must be one). */
static inline uint32_t nm_span_next_occupied(const nm_span_table *t, uint32_t c)
{
    size_t w = (size_t)(c + 1) >> 6;
    uint64_t word = t->occ_bits[w] & (~(uint64_t)0 << ((c + 1) & 63));
    while (!word)
        word = t->occ_bits[++w];
    return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(word));
}

/* face bit of cell c (false for empty cells). */
static inline bool nm_span_cell_face(const nm_span_table *t, uint32_t c)
{
    int64_t k = nm_span_cell_index(t, c);
    return k >= 0 && t->face[k];
}

/* ---- seam bridge (补缝) --------------------------------------------------------------------- */
/* AppendSeamBridge: for every empty cell of `pre` whose left and right (then: upper and lower)
 * neighbours both hold spans, finds the pair of spans across the gap with the smallest |dh| (first
 * pair wins ties, left/upper spans outer loop, both ascending); if |dh| <= kClimb (3 m) it appends
 * a sample at the gap with h = (h_a + h_b)/2 and ins = 0. The x pass runs before the y pass and
 * both judge occupancy on `pre` only (the table built before bridging), so bridged samples never
 * enable further bridges. Rebuild spans from the samples afterwards. Errors: NM_ERR_NOMEM. */
int nm_grid_append_seam_bridge(const nm_span_table *pre, nm_grid_samples *samples, nm_error *err);
/* The same with a gate the bake adds (not the article's): gate(ctx, a, h_a, b, h_b) is asked about
 * the chosen pair (cells a and b of `pre`'s window, heights m) and returns true to leave the gap
 * unbridged (asked in both of the operator's rounds: it must answer the same). NULL gate =
 * nm_grid_append_seam_bridge. Called from the caller's thread only. */
/* AppendSeamBridge's pair across cells a and b of t: the spans with the smallest |dh| (first pair
 * on ties, a's spans outer, both ascending), their heights, and whether |dh| <= kClimb. */
bool nm_grid_seam_pair(const nm_span_table *t, uint32_t a, uint32_t b, double *h_a, double *h_b);
typedef bool (*nm_grid_bridge_gate)(void *ctx, uint32_t a, double h_a, uint32_t b, double h_b);
int nm_grid_append_seam_bridge_gated(const nm_span_table *pre, nm_grid_samples *samples,
                                     nm_grid_bridge_gate gate, void *gate_ctx, nm_error *err);

/* ---- regions (类号) ------------------------------------------------------------------------- */
/* LabelRegions: union-find over spans; the spans of cell c and of its +x and +y neighbours are
 * linked when |h_u - h_v| <= kClimb. rid[k] (caller array of t->nspans) receives 1-based region
 * numbers, numbered in order of each region's first span. *nregions gets the count. `workers` as
 * for nm_workers_for; the output does not depend on it. Errors: NM_ERR_NOMEM. */
int nm_grid_label_regions(const nm_span_table *t, int workers, uint32_t *rid, uint32_t *nregions,
                          nm_error *err);

/* ---- core morphology (填洞与合缝) ----------------------------------------------------------- */
/* FillHoles: every 4-connected component of cells with mask == 0 that does not touch the window
 * edge, has at most NM_kHoleMaxCells (32) cells and holds no protected cell (prot != 0; prot may be
 * NULL) is set to 1 in mask. mask, prot: nx*ny bytes. *filled (may be NULL) gets the cells set.
 * Errors: NM_ERR_ARG, NM_ERR_NOMEM. */
int nm_grid_fill_holes(int32_t nx, int32_t ny, uint8_t *mask, const uint8_t *prot,
                       size_t *filled, nm_error *err);

/* CloseCracks: at most 4 rounds with k = max(1, rint(0.5/kCS)) = 2 cells. In a round, every cell
 * with layer != 0, core == 0 and prot == 0 joins the core when core cells lie within k cells on
 * both sides horizontally (some a, b in [1, k] with core at x+a and x-b) or on both sides
 * vertically; the additions are applied after the whole sweep, and the loop stops early when a
 * round adds nothing. layer, prot may be NULL (= every cell in the layer / none protected).
 * *rounds (may be NULL) gets the rounds that added cells. Errors: NM_ERR_ARG, NM_ERR_NOMEM. */
int nm_grid_close_cracks(int32_t nx, int32_t ny, uint8_t *core, const uint8_t *layer,
                         const uint8_t *prot, int *rounds, nm_error *err);

/* ---- clearance (净空) ----------------------------------------------------------------------- */
#define NM_GRID_EDT_COLCAP 196 /* column distance cap, cells (4 * kEdtCells) */

/* Clearance: two-pass truncated Euclidean distance transform. obst: nx*ny bytes, non-zero =
 * obstacle; cells outside the window count as free. q (caller array of nx*ny) receives the
 * squared cell distance from each cell centre to the nearest obstacle centre: exact while it is
 * <= 48^2 (12 px), otherwise some value > 48^2 (<= 196^2 + 49^2); 0 on obstacle cells. `workers`
 * as for nm_workers_for; the output does not depend on it. Errors: NM_ERR_ARG, NM_ERR_NOMEM. */
int nm_grid_clearance(int32_t nx, int32_t ny, const uint8_t *obst, uint16_t *q, int workers,
                      nm_error *err);
/* GridClearance: min(sqrt(q) * kCS, kEdtCap) px, computed in float. */
float nm_grid_clearance_px(uint16_t q);

/* NearestSource: 8SSEDT-style vector propagation. src (caller array of nx*ny) receives for each
 * cell the cell number of its (approximately) nearest obstacle, or -1 when there is none. Pass 1
 * top to bottom: left to right from N, NW, NE, W, then right to left from E; pass 2 bottom to top:
 * right to left from S, SW, SE, E, then left to right from W. A candidate replaces the current
 * source only when strictly nearer (ties keep the existing source). Errors: NM_ERR_ARG. */
int nm_grid_nearest_source(int32_t nx, int32_t ny, const uint8_t *obst, int32_t *src,
                           nm_error *err);
/* The same, telling another thread as it goes which rows are final: final_from (release) falls
 * from ny to 0, and rows final_from .. ny - 1 of src are not written again (NULL: no telling). */
int nm_grid_nearest_source_rows(int32_t nx, int32_t ny, const uint8_t *obst, int32_t *src,
                                atomic_int *final_from, nm_error *err);
/* Bands of rows of NearestSource's output handed to the threads that read it while the sweep
 * runs: the sweep's second pass finishes rows bottom to top, so bands go last rows first. A band
 * [j0, j1) is given once rows j0 - halo .. ny - 1 are final (halo: the rows above a row that its
 * reader reads; 0 when it reads its own rows only). Pass &final_from to the sweep. */
typedef struct nm_grid_bands {
    atomic_int final_from; /* rows final_from .. ny - 1 are final */
    atomic_int claim;      /* rows claim .. ny - 1 are given */
    int32_t band, halo;
} nm_grid_bands;
void nm_grid_bands_init(nm_grid_bands *b, int32_t ny, int32_t band, int32_t halo);
/* The next band into [*j0, *j1), of up to b->band rows, waiting (short sleeps) until its rows are
 * final; false once every row is given. Any number of threads may take bands. */
bool nm_grid_bands_take(nm_grid_bands *b, int32_t *j0, int32_t *j1);
/* Gives no more bands (the sweep failed): takers return false. */
void nm_grid_bands_stop(nm_grid_bands *b);

/* MedialAxis (lambda-medial axis, lambda = kClrLambda = 2 cells): medial[c] = 1 for a free cell c
 * having a free 8-neighbour o, both with a source, such that the squared cell distance between
 * src[o] and src[c] is >= ceil((kClrLambda/kCS)^2) = 4; else 0. medial: nx*ny bytes.
 * Errors: NM_ERR_ARG, NM_ERR_NOMEM. */
int nm_grid_medial_axis(int32_t nx, int32_t ny, const uint8_t *obst, uint8_t *medial,
                        nm_error *err);
/* MedialAxis at cell (i, j) from NearestSource's output src alone (an obstacle cell is its own
 * source): the same value nm_grid_medial_axis gives there, without the obstacle mask, so a caller
 * can free the mask once the sources are known. [Limits: 0 <= i < nx, 0 <= j < ny] */
bool nm_grid_medial_cell(int32_t nx, int32_t ny, const int32_t *src, int32_t i, int32_t j);

/* ---- vertical reachability (垂直可达判据) ---------------------------------------------------- */
/* Fall gate (FallGate): asked about a ledge drop (take-off cell/height -> landing cell/height,
 * cells of the span table's window) that passed the look-ahead. Returns true when the collision
 * geometry blocks it. NULL function = no gate, drops pass. */
typedef bool (*nm_fall_gate_fn)(void *ctx, uint32_t from_cell, double h_from, uint32_t to_cell,
                                double h_to);
typedef struct nm_fall_gate {
    nm_fall_gate_fn fn;
    void *ctx;
} nm_fall_gate;

/* levelAt(s, h, tol): does the column s cells along (dx, dy) from (i, j) hold a span with height in
 * [h - tol, h + tol]? Out of the window: no. */
bool nm_grid_level_at(const nm_span_table *t, int32_t i, int32_t j, int dx, int dy, int s,
                      double h, double tol);
/* rasterFace(s): the face bit of the column s cells along (dx, dy) (false outside / empty). */
bool nm_grid_raster_face(const nm_span_table *t, int32_t i, int32_t j, int dx, int dy, int s);

/* RiseOk: can a character step from the span at height ha (m) in column (i, j) to the span at
 * height hb in column (i + dx, j + dy)? The 10 steps of the article in its order (kDrop,
 * drop look-ahead over kSeamCells with tolerance kClimb and the fall gate, slope, diagonal slope,
 * facade, kStepUp, kBumpUp, narrow bump over 2..kBumpCells, shallow dip over 1..kDipCells).
 * [Limits: dx, dy in {-1, 0, 1}, not both 0] gate may be NULL. */
bool nm_grid_rise_ok(const nm_span_table *t, const nm_fall_gate *gate, int32_t i, int32_t j,
                     int dx, int dy, double ha, double hb);

/* RiseOk's first three steps alone: a level step, a gentle slope or a step down of at most
 * kBumpUp (-kBumpUp <= hb - ha <= kSlope * kCS) passes whatever the columns hold, so
 * nm_grid_rise_ok is true then (deeper steps down look at the arrival column: step 2b). Inline
 * for the bake, which asks RiseOk about every neighbour pair and finds most of them level. */
static inline bool nm_grid_rise_gentle(double ha, double hb)
{
    const double dh = hb - ha;
    return dh >= -NM_kBumpUp && dh <= NM_kSlope * NM_kCS;
}

/* The 4 canonical step directions of the step bits: (1,0), (0,1), (1,1), (1,-1). */
extern const int nm_grid_step_dx[4];
extern const int nm_grid_step_dy[4];

/* Step bits of span k: for each direction i, the partner is the span of cell c + d_i with the
 * smallest |dh| among those with |dh| <= kClimb (and, when rid is not NULL, the same rid; lower
 * height wins ties); without a partner both bits stay 0. Bit 2i = RiseOk(c -> b) fails,
 * bit 2i+1 = RiseOk(b -> c) fails, each unless the edge is crossed straight in that direction by
 * other spans (one of the column behind steps into one of the cell that steps across the edge,
 * both within kClimb, same rid): the window ORs a cell's bits, and a ban must not cut that
 * crossing (the exit column of a dip or bump holds both heights). */
uint8_t nm_grid_step_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                          uint32_t k);
/* The same for span k of column (i, j) given by the caller (a bake that has let sp_cell go). */
uint8_t nm_grid_step_bits_at(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                             uint32_t k, int32_t i, int32_t j);
/* The two bits of one pair: height ha (m) in column (i, j) and its partner hb in column
 * (i + dx, j + dy), region r (used when rid is not NULL): bit 0 = the step a -> b is refused,
 * bit 1 = b -> a, by the rule above (RiseOk, unless the edge is crossed straight by the region's
 * spans). For a height that is no span of the table (a made-up cell's Ghost record). */
uint8_t nm_grid_step_pair_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                               uint32_t r, int32_t i, int32_t j, int dx, int dy, double ha, double hb);
/* Both steps of a pair refused (a solid stands across it), each unless the edge is crossed
 * straight by the region's spans (as for every step bit). */
uint8_t nm_grid_closed_pair_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                                uint32_t r, int32_t i, int32_t j, int dx, int dy);
/* nm_grid_step_pair_bits for a pair across a riser's face (a crack the bake levelled to its two
 * sides, riser_crack in bake_zone.c): a step up over kStepUp is refused as well where RiseOk's
 * narrow-bump or shallow-dip allowance (its steps 8 and 9) would pass it. */
uint8_t nm_grid_riser_pair_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                                uint32_t r, int32_t i, int32_t j, int dx, int dy, double ha, double hb);

/* ---- walls (标墙) --------------------------------------------------------------------------- */
/* One boundary edge: end points in px, end heights in m, and its id (triangle, edge). Every
 * boundary edge is a wall: the mesh does not say whether it is a wall, a cliff or a seam. */
typedef struct nm_grid_wall {
    double x0, y0, h0;
    double x1, y1, h1;
    uint32_t tri;
    uint8_t edge;
} nm_grid_wall;

/* BakeWalls: collects the boundary edges of the walkable triangles (edge k runs from vertex k to
 * vertex (k+1) % 3; boundary[t] bit k set = that edge has no neighbour) whose bounding box meets
 * the window grown by NM_GRID_WALL_PAD px, in (triangle, edge) order. Unwalkable triangles give
 * no edges. *walls is allocated here (release with nm_free), *nwalls gets the count.
 * Errors: NM_ERR_ARG, NM_ERR_NOMEM. */
#define NM_GRID_WALL_PAD 4.0 /* px (kWallBBoxPad) */
int nm_grid_bake_walls(const nm_grid_window *win, const nm_grid_mesh *mesh,
                       const uint8_t *boundary, nm_grid_wall **walls, size_t *nwalls,
                       nm_error *err);

/* StampWalls: samples each edge every <= 0.1 px (N = max(ceil(L / (0.4*kCS)), 1) + 1 points at
 * t_k = k/(N-1)) and sets dead[k] = 1 for every span k of each sampled cell with
 * |h - (h0 + h1)/2| <= kMcHBand (8 m). dead: t->nspans bytes. *stamped (may be NULL) counts
 * spans newly set. Errors: NM_ERR_ARG. */
int nm_grid_stamp_walls(const nm_span_table *t, const nm_grid_wall *walls, size_t nwalls,
                        uint8_t *dead, size_t *stamped, nm_error *err);

/* ---- strongly connected components (可达域) ------------------------------------------------- */
/* A directed graph in CSR form: the edges of node v are adj[off[v] .. off[v+1]). */
typedef struct nm_graph {
    uint32_t n;
    const uint32_t *off; /* [n + 1] */
    const uint32_t *adj; /* [off[n]] targets [Limits: < n] */
} nm_graph;

/* Condensation of a graph: comp[v] in 1..ncomp for each node (components numbered in order of
 * their smallest node), and the DAG edges between components as sorted unique (src, dst) pairs
 * in CSR form (dag_off[ncomp + 1] indexed by component - 1; dag_adj holds 1-based ids). */
typedef struct nm_scc {
    uint32_t n;
    uint32_t ncomp;
    uint32_t *comp;     /* [n] */
    uint32_t *dag_off;  /* [ncomp + 1] */
    uint32_t *dag_adj;  /* [dag_off[ncomp]] */
} nm_scc;

/* Iterative Tarjan (no recursion depth limit) plus the condensation DAG.
 * Errors: NM_ERR_ARG (edge target out of range), NM_ERR_NOMEM. */
int nm_grid_scc(const nm_graph *g, nm_scc *out, nm_error *err);
void nm_scc_free(nm_scc *s);

#ifdef __cplusplus
}
#endif
#endif
