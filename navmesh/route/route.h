/* route.h — the planner's entry (design article 前置检查与选类, 窗口分档): engine load, the checks
 * before the window in the article's order, the region pick (pickStartRec / pickDeckRec), the
 * core distance of both ends on the whole zone, the authored no-go table, and the window tiers
 * (allowed cost per level, ellipse rectangle, Tentative / Capped / Full, level skipping, the
 * limit1 / limit2 checks of a small window and the twelve escalation reasons).
 *
 * Units: px on the zone's map, cells of NM_kCS = 0.25 px, heights in m. Cell rectangles are
 * inclusive global cell ranges. */
#ifndef NM_ROUTE_H
#define NM_ROUTE_H

#include "../base/base.h"
#include "../pack/pack.h"
#include "../pack/grid_io.h"
#include "../window/window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================================================
 * 窗口分档 — window tiers
 * ============================================================================================== */

/* Inclusive global cell rectangle; empty when x1 < x0 or y1 < y0 (ZoneBoundsPx). */
typedef struct nm_cell_rect {
    int64_t x0, y0, x1, y1;
} nm_cell_rect;

bool nm_cell_rect_empty(const nm_cell_rect *r);
/* Cells of the rectangle (0 when empty). */
uint64_t nm_cell_rect_area(const nm_cell_rect *r);
nm_cell_rect nm_cell_rect_intersect(const nm_cell_rect *a, const nm_cell_rect *b);
bool nm_cell_rect_equal(const nm_cell_rect *a, const nm_cell_rect *b);
bool nm_cell_rect_contains(const nm_cell_rect *outer, const nm_cell_rect *inner);

/* 三种窗口 */
typedef enum nm_tier_kind { NM_TIER_TENTATIVE = 0, NM_TIER_CAPPED = 1, NM_TIER_FULL = 2 } nm_tier_kind;
const char *nm_tier_kind_name(nm_tier_kind k);

/* The leg as the tiers see it: raw start and goal (the ellipse foci), the snapped start (only in
 * the endpoint box; the goal's snap point is not). px. */
typedef struct nm_tier_leg {
    double sx, sy, gx, gy;
    double ssx, ssy;
} nm_tier_leg;

/* L = |goal - start| / kCS, cells. */
double nm_tier_leg_cells(const nm_tier_leg *leg);
/* 椭圆档位: C_k = kRatio0 * kRatioStep^level * L + kCostSlack, cells. */
double nm_tier_allowed_cost(double leg_cells, int level);
/* rectFor: the ellipse {p : |p-S| + |p-G| <= C} (a = C/2, b = sqrt(max(C^2 - L^2, 0))/2, angle
 * theta), its bounding box centred on the midpoint, united with the endpoint box (cells of the raw
 * start, snapped start and goal), grown by kTrustMargin + 8 = 72 cells on every side. Not
 * clipped. */
nm_cell_rect nm_tier_ellipse_rect(const nm_tier_leg *leg, double cost);
/* The region rectangle of the Full window: the region's bounding box grown by kFieldHalo. */
nm_cell_rect nm_tier_region_rect(const nm_cell_rect *bbox);

/* One tier's choice. */
typedef struct nm_tier_choice {
    nm_tier_kind kind;
    nm_cell_rect rect;   /* the window (clipped to the region rectangle) */
    double cost;         /* allowed cost C used (cells); the region's for Full */
    int level;
} nm_tier_choice;

/* The window of one level (三种窗口, in the article's order): Full when the region rectangle has
 * <= kLocalMaxCells and the ellipse rectangle covers it or reaches 80 % of it; Tentative when
 * the (clipped) ellipse rectangle has <= kLocalMaxCells; else Capped: 40 bisections of C in
 * [L, C_k] for the largest rectangle within kLocalMaxCells, the segment's own rectangle (C = L)
 * when even that is over. */
nm_tier_choice nm_tier_window(const nm_tier_leg *leg, const nm_cell_rect *region_rect, int level);

/* The tier loop's state (椭圆档位). */
typedef struct nm_tier_state {
    int tier;             /* round, from 0 */
    int level;            /* ellipse level */
    bool force_full;      /* the last round asked for the Full window */
    bool have_prev;
    nm_cell_rect prev;    /* last round's window */
    int skipped;          /* levels skipped because the window did not grow */
} nm_tier_state;

void nm_tier_state_init(nm_tier_state *s);
/* Next round's window: Full when asked; else the level's window, raising the level while a
 * Tentative window equals the previous round's (going Full past kMaxLevel). Then the Full size
 * check: NM_ERR_STATE "region too large" when a Full window exceeds kMaxCells. */
int nm_tier_next(nm_tier_state *s, const nm_tier_leg *leg, const nm_cell_rect *region_rect,
                 nm_tier_choice *out, nm_error *err);

/* What a round ended with, and what the loop does next (判结果). */
typedef enum nm_tier_outcome {
    NM_TIER_BUILD_FAILED = 0, /* buildWindow failed */
    NM_TIER_ESCALATE = 1,     /* the search asked for the next tier */
    NM_TIER_NO_PATH = 2,      /* the search found no route */
    NM_TIER_ROUTE = 3         /* a route */
} nm_tier_outcome;
typedef enum nm_tier_action {
    NM_TIER_NEXT_LEVEL = 0,   /* level + 1, next round */
    NM_TIER_NEXT_FULL = 1,    /* next round uses the Full window */
    NM_TIER_FAIL = 2,         /* report the error */
    NM_TIER_ACCEPT = 3        /* take the route (final checks follow) */
} nm_tier_action;
nm_tier_action nm_tier_after(nm_tier_state *s, const nm_tier_choice *c,
                             const nm_cell_rect *region_rect, nm_tier_outcome o);

/* 小窗结果的检查: limit1 = min over both endpoint cells of the distance to the nearest window
 * edge, minus kTrustMargin. (si, sj), (gi, gj): window cells (trunc). */
double nm_route_limit1(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj);
/* limit2 = min over the four edges of R = [m-1, nx-m] x [m-1, ny-m] (m = 64) of
 * min F(e(t)), F(p) = |p - s| + |p - g|, by 100 ternary-search steps each, minus 1. */
double nm_route_limit2(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj);

/* Window sides lying on the region rectangle (the window was clipped there): every cell of the
 * region lies inside it, so no route of the Full window leaves the small window across such a
 * side and the window cuts nothing there. The trust zone has no edge on these sides. */
#define NM_SIDE_X0 1u
#define NM_SIDE_Y0 2u
#define NM_SIDE_X1 4u
#define NM_SIDE_Y1 8u
unsigned nm_route_region_sides(const nm_cell_rect *win, const nm_cell_rect *region_rect);
/* limit1 / limit2 without the edges of the region sides (0 = the plain limit1 / limit2): limit1
 * counts only the other edges (INFINITY when none), limit2's boundary lines on the other sides run
 * to the window's edge across the region sides (INFINITY when every side is a region side). */
double nm_route_limit1_sides(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj,
                             unsigned region_sides);
double nm_route_limit2_sides(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj,
                             unsigned region_sides);
/* The early give-up bound of the baseline and topology searches: limit2 - (ds + dg)/kCS + 1. */
double nm_route_give_up(double limit2, double ds_px, double dg_px);
/* After a solve: cost + (ds + dg)/kCS >= limit2 escalates. */
bool nm_route_cost_escalates(double cost, double ds_px, double dg_px, double limit2);
/* A snap distance escalates when d/kCS >= limit1; an access path when cost/100 >= limit1. */
bool nm_route_snap_escalates(double d_px, double limit1);
bool nm_route_access_escalates(int32_t chamfer_cost, double limit1);

/* 放大窗口的原因: the twelve reasons and their switches. */
typedef enum nm_escalation {
    NM_ESC_NEAR_EDGE = 0,     /* 端点离窗边太近 (tentative) */
    NM_ESC_SNAP_FAR,          /* 吸附距离太远 (bounded) */
    NM_ESC_NO_CHANNEL,        /* 端点接不进通道 (strict) */
    NM_ESC_ACCESS_LONG,       /* 端点接入路径太长 (bounded) */
    NM_ESC_UNLINKED,          /* 掩膜里两端不连通 (strict) */
    NM_ESC_WALK_NO_PATH,      /* walk 掩膜上无解 (strict) */
    NM_ESC_COST_BOUND,        /* 搜索代价碰到可信区边界 (bounded) */
    NM_ESC_CELL_FALLBACK,     /* 要退到格级 (strict) */
    NM_ESC_BASE_NO_PATH,      /* 基线无解 (strict) */
    NM_ESC_TOPO_NO_PATH,      /* 拓扑层无解 (strict) */
    NM_ESC_BAND_EDGE,         /* 走廊带进了外圈 (bounded) */
    NM_ESC_GEO_NO_PATH,       /* 几何层在走廊里无解 (strict) */
    NM_ESC_COUNT
} nm_escalation;
typedef enum nm_esc_switch { NM_SW_TENTATIVE = 0, NM_SW_BOUNDED = 1, NM_SW_STRICT = 2 } nm_esc_switch;
nm_esc_switch nm_escalation_switch(nm_escalation e);
const char *nm_escalation_name(nm_escalation e);
/* The three switches: tentative in Tentative and Capped, bounded and strict in Tentative only. */
bool nm_tier_switch_on(nm_tier_kind k, nm_esc_switch sw);
bool nm_escalation_enabled(nm_escalation e, nm_tier_kind k);
/* Maps (B)'s NM_SEARCH_ESC_* to this enum (NM_ESC_COUNT for none). */
nm_escalation nm_escalation_from_search(int search_reason);

/* ================================================================================================
 * 选类 — region pick
 * ============================================================================================== */

#define NM_PICK_RADIUS 32 /* ceil(kSnapRadius / kCS): the box is 65 x 65 cells */

typedef struct nm_pick_rec {
    int32_t gx, gy;   /* global cell */
    float h;
    uint32_t rid;
    uint8_t flags;
} nm_pick_rec;

/* pickStartRec: within the (2r+1)^2 box around global cell (cgx, cgy) of a decoded patch, the
 * record with Walk, without Ghost and Fill, |h - h0| <= kClimb, minimising (squared cell
 * distance, |h - h0|); ties keep the smaller cell number of the patch, then the stored order.
 * Returns true when found. */
bool nm_pick_start_rec(const nm_bgrd_out *patch, int64_t cgx, int64_t cgy, double h0,
                       nm_pick_rec *out);
/* pickDeckRec: the same with Walk, without Fill (Ghost allowed), |h - deck_y| <= kDeckBand. */
bool nm_pick_deck_rec(const nm_bgrd_out *patch, int64_t cgx, int64_t cgy, double deck_y,
                      nm_pick_rec *out);

/* 选类 steps 1-4: start record around the raw start's cell, else around the snapped start's;
 * the region and seed from it; a declared goal deck replaces only the region (deck patch around
 * the goal). Errors (NM_ERR_STATE) with the article's messages: "no walkable cell near the
 * start", "no declared deck near the goal". */
typedef struct nm_region_pick {
    uint32_t region;
    int64_t seed_gx, seed_gy;
    double seed_h;
    bool deck_region;    /* the region came from the goal deck */
} nm_region_pick;
int nm_pick_region(const nm_bgrd_out *start_patch, double sx, double sy, double ssx, double ssy,
                   double h0, const nm_bgrd_out *goal_patch, double gx, double gy, bool deck_set,
                   double deck_y, nm_region_pick *out, nm_error *err);

/* 端点到核心可走区的距离 (coreAnchorPx): both ends at once on the whole zone. Boxes of half side
 * 64 cells around each end's cell; every non-empty tile meeting a box decoded once (its flags
 * only: nm_bgrd_decode_tile_fields); per end the
 * smallest squared cell distance to a Core record in the tiles' own rectangles; sqrt * kCS; 16
 * when none. */
int nm_core_anchor_px(const nm_bgrd *g, uint32_t zone, double sx, double sy, double gx,
                      double gy, double *ds, double *dg, nm_error *err);
/* The same reading the tiles a cache holds instead of decoding them (cache NULL = none; only
 * read: tiles it lacks are decoded into temporary buffers). Same results. */
int nm_core_anchor_px_cached(const nm_bgrd *g, uint32_t zone, const nm_bgrd_cache *cache, double sx,
                             double sy, double gx, double gy, double *ds, double *dg, nm_error *err);

/* The region's bounding box over the whole zone (inclusive global cells; empty when none): the
 * region's own cells of every tile whose dictionary names it. Only the region field of the tiles
 * that can still widen the box is decoded (outer tiles first, on up to `workers` threads, <= 0:
 * the machine's cores); the box is the same as a scan of every such tile, whatever the workers. */
int nm_region_bbox(const nm_bgrd *g, uint32_t zone, uint32_t rid, int workers, nm_cell_rect *out,
                   nm_error *err);
/* Every region's box at once, the same boxes as nm_region_bbox: (*rids)[k] ascending, the regions
 * the tiles' dictionaries name, and (*boxes)[k] (both nm_malloc'd; empty for a region with no
 * cell of its own). views[t] (views may be NULL) holds tile t's records when it has them; the
 * other tiles' region fields are decoded a tile at a time on each of the workers. Fails (nothing
 * out) when a tile does not decode or on no memory. */
int nm_region_bboxes(const nm_bgrd *g, uint32_t zone, const nm_bgrd_tile_view *views, int workers,
                     uint32_t **rids, nm_cell_rect **boxes, uint32_t *n, nm_error *err);

/* ================================================================================================
 * Authored no-go table (reference-maaend.md §4.9)
 * ============================================================================================== */

typedef struct nm_nogo_entry {
    double *xy;          /* n points */
    uint32_t n;
    char *id;            /* may be NULL */
    char *tier;          /* may be NULL: drawn on the base map */
} nm_nogo_entry;

typedef struct nm_nogo_zone {
    char *name;
    nm_nogo_entry *polys;
    uint32_t npolys;
} nm_nogo_zone;

typedef struct nm_nogo_table {
    nm_nogo_zone *zones;
    uint32_t nzones;
} nm_nogo_table;

/* Parses {version: 1, zones: {name: [{poly: [[x, y], ...] (>= 3), id?, tier?}]}}. Every error
 * (NM_ERR_CORRUPT) names the zone, the entry and the field. */
int nm_nogo_parse(const char *json, size_t len, const char *name, nm_nogo_table *out,
                  nm_error *err);
/* Reads the file: missing = an empty table (NM_OK, *missing = true); unreadable or invalid = an
 * error (the engine is unusable). */
int nm_nogo_load(const char *path, nm_nogo_table *out, bool *missing, nm_error *err);
void nm_nogo_table_free(nm_nogo_table *t);
const nm_nogo_zone *nm_nogo_find_zone(const nm_nogo_table *t, const char *zone);
/* The zone's polygons as window-build rings: tier polygons banded on the tier's floor_y when it
 * has one (the tier must exist in the pack: NM_ERR_CORRUPT otherwise). *polys nm_malloc'd (the
 * points are borrowed from the table). */
int nm_nogo_resolve(const nm_nogo_table *t, const nm_pack *pack, const char *zone,
                    nm_nogo_poly **polys, uint32_t *n, nm_error *err);
/* Index of the first polygon holding (x, y) at height h (band on h), or -1. */
int nm_nogo_hit(const nm_nogo_poly *polys, uint32_t n, double x, double y, double h);

/* ================================================================================================
 * Engine and planLocked (引擎装载, 前置检查与选类, 窗口分档)
 * ============================================================================================== */

struct nm_zone_clean;

/* One cached zone (zoneEntry): its ZoneClean, sidecar zone data, resolved no-go polygons and
 * per-region bounding boxes. */
typedef struct nm_route_zone_entry {
    bool valid;
    char *name;
    int pack_zone, bgrd_zone, fzon;
    struct nm_zone_clean *zc;
    int zc_rc;
    nm_error zc_err;
    nm_bnvf_zone_data fz;
    int fz_rc;
    nm_error fz_err;
    nm_nogo_poly *polys;
    uint32_t npolys;
    int polys_rc;
    nm_error polys_err;
    uint32_t *bbox_rid;       /* cached region bounding boxes */
    nm_cell_rect *bbox;
    uint32_t nbbox, bbox_cap;
    uint64_t used;            /* LRU clock */
} nm_route_zone_entry;

#define NM_ROUTE_ZONE_CACHE 2 /* kZoneCacheMax */

/* The kept pages an open engine raises the process's cap to (nm_kept_max; the default
 * NM_KEPT_MAX bounds the bake's peak): plans back to back reuse the last plan's pages instead of
 * faulting new ones. Large world, 20 legs, smallest of 3 runs against 128 MB (then on huge pages):
 * 0.925 of the time, leg 8 (8.9 M cells) 1 989 -> 2 019 ms where 128 MB on small pages took
 * 2 211; 512 MB read 0.994 of 1 GB but left leg 8 at 2.1-2.3 s. Peak RSS 1 317 -> 1 215 MB: small
 * pages count only what is touched (tools/navbench/README.md, thirty-ninth session). */
#define NM_ROUTE_KEPT_BYTES ((size_t)1024 << 20)

/* The largest Full window the engine keeps between plans (the demo town's is 56 MB). */
#define NM_KEPT_WINDOW_BYTES ((size_t)128 << 20)
/* The largest search state kept with it (its work arrays and the second thread's: the demo
 * town's are ~80 + ~65 MB). */
#define NM_KEPT_STATE_BYTES ((size_t)192 << 20)

typedef struct nm_route_engine {
    const nm_pack *pack;
    int status;               /* NM_OK when usable; else every plan returns err */
    nm_error err;
    nm_bgrd grid;
    bool has_grid;
    nm_bnvf fields;
    bool has_fields;
    bool fields_borrowed;     /* fields belong to someone else (open_shared / take_fields) */
    nm_nogo_table nogo;
    nm_route_zone_entry cache[NM_ROUTE_ZONE_CACHE];
    uint64_t clock;
    int workers;
    nm_bgrd_out patch_start, patch_goal, decode; /* decode buffers; `decode` lives for one plan (all its tiers) */
    nm_bgrd_cache tiles;      /* decoded tiles kept across tiers and plans (bounded; the patches,
                                 the windows and the ledge-drop landings read through it) */
    /* The last Full window (at most NM_KEPT_WINDOW_BYTES), kept for the next tier or plan that
     * asks for the same one (the same rectangle of the same region and zone, the same no-go discs,
     * a seed in the same component): legs planned back to back in one region use the same Full
     * window. Freed before a different Full window is built and at close. */
    nm_window kept;
    bool has_kept;
    struct nm_kept_key {
        uint32_t bgrd_zone, region;
        uint16_t zone_id;
        int64_t gx0, gy0;
        int32_t nx, ny;
        const nm_nogo_poly *polys; uint32_t npolys;
        nm_nogo_disc *discs; uint32_t ndiscs; /* a copy */
    } kept_key;
    struct nm_sctx *kept_state; /* the last search's state on the kept window (its work arrays:
                                   the next leg's searches take them, no new pages) */
    struct nm_sight_blockers *kept_blk; /* the kept window's blocker segments (障碍线段: the window's
                                           own, built and indexed once) */
} nm_route_engine;

/* The sidecar paired by name: "x.nav.gz" -> "x.fields.nav.gz", "x.nav" -> "x.fields.nav",
 * else "x" + ".fields". Returns an nm_malloc'd string (NULL on no memory). */
char *nm_fields_sidecar_path(const char *main_path);

/* Engine load: the pack's BGRD section, the paired sidecar (validated), the no-go table (missing
 * = none; nogo_path NULL = none). A failure is recorded in e->status / e->err and also returned;
 * the engine must still be closed. The pack must outlive the engine. */
int nm_route_engine_open(nm_route_engine *e, const nm_pack *pack, const char *pack_path,
                         const char *nogo_path, int workers, nm_error *err);
void nm_route_engine_close(nm_route_engine *e);
/* Engine load with a borrowed sidecar (旁包按文件身份共用一份): `fields` was loaded and validated
 * by another engine for a main pack with this pack's build_hash and FNV and the same BGRD bytes;
 * the engine only reads it (several engines may plan on it at once) and it must outlive the
 * engine. fields NULL: load the paired sidecar, as nm_route_engine_open. */
int nm_route_engine_open_shared(nm_route_engine *e, const nm_pack *pack, const char *pack_path,
                                const nm_bnvf *fields, const char *nogo_path, int workers,
                                nm_error *err);
/* Hands the engine's own sidecar to the caller (*out), who frees it with nm_bnvf_free after the
 * engine's close; the engine goes on reading it, borrowed. False when it has none of its own. */
bool nm_route_engine_take_fields(nm_route_engine *e, nm_bnvf *out);

typedef bool (*nm_route_stop_fn)(void *ctx);

typedef struct nm_route_request {
    const char *zone;
    double sx, sy, gx, gy;    /* px */
    float start_floor_y, goal_floor_y; /* NM_kFloorYNone = absent */
    float goal_deck_y, start_deck_y;   /* NM_kFloorYNone = absent */
    const nm_nogo_disc *discs; uint32_t ndiscs;
    nm_route_stop_fn should_stop; void *stop_ctx; /* polled before every tier */
    bool force_full;          /* start at the Full window (tests: a tentative result must
                                 equal the full-region one) */
    bool self_check;          /* verify the route in its window (tests, navbench): see
                                 nm_route_result.self_check_failures */
} nm_route_request;

/* The request with nothing declared. */
nm_route_request nm_route_request_defaults(const char *zone, double sx, double sy, double gx,
                                           double gy);

/* A ledge-drop landing (台沿下落 / 落点留余量): the landing's index into the points, the lower
 * surface height, and the take-off point the character must pass beyond. */
typedef struct nm_route_drop {
    uint32_t index;
    double height;            /* m */
    double from_x, from_y;    /* px */
} nm_route_drop;

/* A point list of a stage (owned by the result; NULL/0 when absent). heights may be NULL. */
typedef struct nm_route_points {
    double *xy;
    float *heights;
    uint32_t n;
} nm_route_points;

/* Why a plan failed, one code per exit of the planner (失败的情形), so a host can act on it without
 * reading the sentence in error. NM_ROUTE_INTERNAL marks a step that failed where the data was
 * well-formed: a bug, never expected (tests/plan/test_plan_decks.c). */
typedef enum nm_route_code {
    NM_ROUTE_OK = 0,
    NM_ROUTE_ENGINE_UNUSABLE,        /* checks 1-4: no grid, bad sidecar, bad no-go table, bad zone */
    NM_ROUTE_START_OFF_MESH,         /* check 5: no triangle within 16 px of the start */
    NM_ROUTE_GOAL_OFF_MESH,          /* check 6: the same for the goal */
    NM_ROUTE_NO_GO,                  /* check 7: an end in an authored no-go zone (no_go set) */
    NM_ROUTE_OFF_WALKABLE,           /* check 8: an end more than 8 px from any core cell */
    NM_ROUTE_GRID_DECODE,            /* check 9: a grid tile cannot be decoded */
    NM_ROUTE_NO_WALKABLE_NEAR_START, /* check 10: no walkable record near the start */
    NM_ROUTE_REGION_EMPTY,           /* check 11: the picked region has no grid */
    NM_ROUTE_REGION_TOO_LARGE,       /* the Full window exceeds kMaxCells */
    NM_ROUTE_CANCELLED,              /* should_stop said stop */
    NM_ROUTE_DISCONNECTED,           /* no goal deck: the baseline found no path (gap located when has_gap) */
    NM_ROUTE_UNREACHABLE,            /* no goal deck: an end is more than 8 px from the start's reach set,
                                        or the goal is cut off, and no ledge drop connected */
    NM_ROUTE_TARGET_DECK_UNREACHABLE,/* goal deck declared: no deck near the goal, the deck's region does
                                        not hold the start, or no route ends on it; the error lists the
                                        heights found there */
    NM_ROUTE_START_DECK_UNREACHABLE, /* start deck declared: no unblocked span within kDeckBand of it near
                                        the start, in the region the route is planned in */
    NM_ROUTE_INTERNAL,               /* a step failed on well-formed data: a bug */
    NM_ROUTE_CODE_COUNT
} nm_route_code;
/* The code's name as hosts see it ("route_disconnected", ...); "internal" for out-of-range values. */
const char *nm_route_code_name(int code);

typedef struct nm_route_result {
    bool ok;
    int code;                 /* nm_route_code: NM_ROUTE_OK on success */
    bool no_go;               /* an end lies in an authored no-go zone: callers must not fall back */
    int check;                /* the pre-check that failed (1..11), 0 = none / later */
    char error[512];
    double *xy;               /* npoints (x, y) px */
    float *clearance, *heights;
    uint32_t npoints;
    double length;            /* px */
    double min_clearance;     /* px */
    double snap_start, snap_goal;
    /* debug */
    int tier;                 /* accepted round, -1 = none */
    nm_tier_kind kind;
    uint64_t window_cells;
    size_t peak_window_bytes;
    uint32_t windows_kept;    /* tiers that took the engine's kept window instead of building it */
    bool blockers_beside;     /* the last tier's window blockers were made on the sight's second
                                 thread while its geometry layer searched (else kept with the
                                 window, or made in post-processing) */
    int topo_from;            /* where the last search's topology layer was solved
                                 (nm_search_topo_from: one thread, beside, proved, again) */
    char tier_notes[1024];    /* why each earlier tier was rejected */
    uint32_t region;
    uint32_t hop_index;       /* 台沿下落换类: index of the landing point, UINT32_MAX = none */
    double hop_height;        /* landing surface height, m */
    double ms_checks, ms_window, ms_topo, ms_geo, ms_post, ms_total;
    double base_cost;         /* the baseline's cost (cells, unit price: its length from snap
                                 anchor to snap anchor); summed over both parts of a hop */

    /* ---- what the host drives (输入与输出): filled on success ---- */
    uint32_t *waypoints;      /* indices into the points: excludes the start, ends with npoints-1,
                                 never jumps over a drop landing */
    uint32_t nwaypoints;
    nm_route_drop *drops;     /* ledge-drop landings, in route order */
    uint32_t ndrops;
    char warnings[1024];      /* one warning a line ('\n'-separated), e.g. facade steps, fallbacks */
    uint32_t nwarnings;

    /* ---- diagnostics (诊断): the accepted window and the point lists of each stage ---- */
    double win_x0, win_y0;    /* px */
    int64_t win_nx, win_ny;   /* cells */
    nm_route_points dbg_topology; /* topology cell path (cell centres) with heights */
    nm_route_points dbg_taut;     /* the geometry layer's taut parent chain */
    nm_route_points dbg_pulled;   /* after StringPull */
    nm_route_points dbg_assembled;/* after the endpoint splice */
    bool has_gap;             /* disconnected: the located gap */
    double gap_sx, gap_sy, gap_gx, gap_gy, gap_dist; /* px */
    double ms_pull, ms_assemble, ms_lift;

    /* ---- self check (request.self_check), made in the accepted window before it is freed:
     * every segment passes vis_hard and the LayerOracle on the heights along the route (a drop
     * landing's segment in the drop-permitting mode), lifting did not lower the smallest segment
     * clearance, StringPull keeps every point of its own output, every drop landing is a
     * waypoint and lies more than kClimb below the point before it. ---- */
    uint32_t self_checks;          /* checks made */
    uint32_t self_check_failures;  /* checks failed; the first few described below */
    uint32_t self_check_walls;     /* segments crossing a kept wall segment of the sidecar (not
                                      counted as failures: the searches do not see walls, and a
                                      neighbour step taken unchecked by StringPull may cross one,
                                      design article 实测 直接收下的邻步) */
    uint32_t self_check_ends;      /* end segments (raw start / goal spliced on) failing vis_hard or
                                      the LayerOracle: not failures, the ends may lie up to
                                      kSnapRadius off the walkable layer */
    char self_check_msg[512];
} nm_route_result;
void nm_route_result_free(nm_route_result *r);

/* planLocked: the checks before the window in order, then the tiers. Returns NM_OK when the
 * planner ran (r->ok says whether a route came out, r->error why not), or NM_ERR_NOMEM / ARG. */
int nm_route_plan(nm_route_engine *e, const nm_route_request *q, nm_route_result *r,
                  nm_error *err);

/* warm: builds the zone entry (ZoneClean, sidecar zone data) ahead of the first plan, keeps every
 * region's box and reads the zone's collision scene; a zone whose decoded tiles fit the tile cache
 * has them all decoded into it (with the sidecar columns). Only the zone entry's errors fail it. */
int nm_route_warm(nm_route_engine *e, const char *zone, nm_error *err);

/* regionsNear: for each point (x, y px), the sorted unique regions of every non-Fill record whose
 * cell centre lies within kSnapRadius; tiles decoded once per call. CSR output: the set of point
 * i is (*rids)[start[i] .. start[i+1]) (start: caller array of n + 1; *rids nm_malloc'd). An empty
 * set means "no answer" (no grid, unknown zone, nothing nearby), never "disconnected". */
int nm_route_regions_near(nm_route_engine *e, const char *zone, const double *xy, uint32_t n,
                          uint32_t *start, uint32_t **rids, nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
