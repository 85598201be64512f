/* search.h — the searches of one tier's window (design article 两段搜索 and 诊断): the shared
 * solver solve with its fallback order (linked check, SpanAstar on walk then core, the cell-level
 * fallback, the cost check against limit2), the baseline, the endpoint and link access chains,
 * the topology layer, the corridor and open-area threshold, the geometry layer as Lazy Theta*,
 * the end checks and the gap location of a failed leg.
 *
 * Frames as in window/window.h: window cells c = j*nx + i, px positions in the zone frame. */
#ifndef NM_SEARCH_H
#define NM_SEARCH_H

#include "../base/base.h"
#include "../window/window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sight judgement of the geometry layer (视线): may the chord from span `from` to span `to` be
 * walked? solidc is the open-area mask (nx*ny bytes) the search computed for this leg; the
 * callback owns any further rules (forbidden steps, height continuity). */
typedef bool (*nm_search_los_fn)(void *ctx, const uint8_t *solidc, uint32_t from_span,
                                 uint32_t to_span);

/* The searches' rule for a second thread on a window of nspans spans: asked for (workers >= 2),
 * or by default (workers <= 0) a window worth it when the machine has two cores. The sight
 * context of the geometry layer follows the same rule. */
bool nm_search_two_threads(int workers, size_t nspans);

/* The per-window state of the searches (their work arrays, sized by the window: node records,
 * the linked check's queue and marks, the walk mask, the link index). Opaque. */
struct nm_sctx;

/* One leg inside one tier's window. */
typedef struct nm_search_request {
    double sx, sy;        /* start, px */
    double gx, gy;        /* goal, px */
    double h0;            /* start height (seed), m */
    bool start_deck_set;  /* a declared start deck */
    double start_deck;    /* m */
    bool goal_deck_set;   /* a declared goal deck */
    double goal_deck;     /* m */
    bool small;           /* small window (tentative/bounded/strict escalation exits) */
    double limit1;        /* cells: snap distance and access length bound (small only) */
    double limit2;        /* cells: trust-region cost bound (small only) */
    double give_up;       /* popped f >= give_up stops the baseline / topology search
                                 (small only); <= 0 means limit2 - (ds + dg)/kCS + 1 */
    nm_search_los_fn los; /* geometry-layer sight; NULL = no chords (cell steps only) */
    void *los_ctx;
    void (*los_prep)(void *los_ctx); /* what los needs of the window alone (not of the corridor's
                                        masks), made once before the geometry layer's first
                                        chord: on a thread of its own while the corridor is
                                        built when two threads are allowed; NULL = nothing */
    int workers;          /* threads: with two or more the channel and the topology layer run
                             beside the baseline, and the corridor's rows are made beside
                             NearestSource (the result is the one-thread result); 0 = two on a
                             window of 65536 spans or more when the machine has two cores */
    unsigned region_sides; /* window sides on the region rectangle (NM_SIDE_* of route.h: bit 0
                              x0, 1 y0, 2 x1, 3 y1): the corridor's outer-ring check skips them */
    struct nm_sctx *state; /* the state an earlier search on this same window handed back
                              (out->state), or NULL; taken over in every case */
    bool keep_state;       /* hand the state back in out->state (the caller keeps the window) */
} nm_search_request;

/* Result status. */
enum { NM_SEARCH_OK = 0, NM_SEARCH_ESCALATE = 1, NM_SEARCH_FAIL = 2 };

/* Why a small window moves to the next tier (放大窗口的原因). */
enum {
    NM_SEARCH_ESC_NONE = 0,
    NM_SEARCH_ESC_SNAP_FAR,      /* 吸附距离太远: d/kCS >= limit1 */
    NM_SEARCH_ESC_NO_CHANNEL,    /* 端点接不进通道 */
    NM_SEARCH_ESC_ACCESS_LONG,   /* 端点接入路径太长: cost/100 >= limit1 */
    NM_SEARCH_ESC_UNLINKED,      /* 掩膜里两端不连通 */
    NM_SEARCH_ESC_WALK_NO_PATH,  /* walk 掩膜上无解 (incl. early give-up) */
    NM_SEARCH_ESC_COST_BOUND,    /* 搜索代价碰到可信区边界 */
    NM_SEARCH_ESC_CELL_FALLBACK, /* 要退到格级 */
    NM_SEARCH_ESC_BASE_NO_PATH,  /* 基线无解 */
    NM_SEARCH_ESC_TOPO_NO_PATH,  /* 拓扑层无解 */
    NM_SEARCH_ESC_BAND_EDGE,     /* 走廊带进了外圈 */
    NM_SEARCH_ESC_GEO_NO_PATH    /* 几何层在走廊里无解 */
};

/* Failure kinds (失败的情形) of the last tier. */
enum {
    NM_SEARCH_FAIL_NONE = 0,
    NM_SEARCH_FAIL_NO_SNAP,         /* no cell to snap to / no unblocked declared deck nearby */
    NM_SEARCH_FAIL_DISCONNECTED,    /* 两端不连通 (no goal deck declared) */
    NM_SEARCH_FAIL_DECK_UNREACHABLE /* 终点面不可达 (goal deck declared) */
};

/* Warnings (bit set). */
enum {
    NM_SEARCH_WARN_CORE = 1u << 0,       /* a solve fell back to core */
    NM_SEARCH_WARN_CELL = 1u << 1,       /* the baseline fell back to the cell level */
    NM_SEARCH_WARN_TOPO_FULL = 1u << 2,  /* topology re-solved on the whole window */
    NM_SEARCH_WARN_TOPO_BASE = 1u << 3,  /* topology used the baseline path */
    NM_SEARCH_WARN_GEO_FREE = 1u << 4,   /* geometry re-solved without the corridor */
    NM_SEARCH_WARN_GEO_TOPO = 1u << 5,   /* geometry kept the topology cell path */
    NM_SEARCH_WARN_FACADE = 1u << 6,     /* unavoidable facade steps (count in facade_steps) */
    NM_SEARCH_WARN_NO_LANDING = 1u << 7, /* links without landing (count) */
    NM_SEARCH_WARN_ALL_LINKS = 1u << 8   /* access chains were opened for every link */
};

/* Where the topology layer's solve was made (nm_search_result.topo_from). */
typedef enum nm_search_topo_from {
    NM_TOPO_ONE = 0,    /* after the baseline, one thread */
    NM_TOPO_BESIDE = 1, /* beside the baseline, taken: its path had no link or drop */
    NM_TOPO_PROVED = 2, /* beside the baseline, taken past its links or drops (proved to stand) */
    NM_TOPO_AGAIN = 3   /* beside the baseline, dropped, and solved again after it */
} nm_search_topo_from;

/* A cell path: cell, span (UINT32_MAX at the cell level) and height per node; link[k] = 1 when
 * node k was reached over an off-mesh link from node k-1 (no ground between them). */
typedef struct nm_search_path {
    uint32_t *cell;
    uint32_t *span;
    float *h;
    uint8_t *link;
    uint32_t n;
} nm_search_path;

/* The taut parent chain of the geometry layer: px positions (cell centres) and span heights. */
typedef struct nm_search_chain {
    double *x, *y;
    float *h;
    uint32_t *span;
    uint8_t *link; /* reached over an off-mesh link */
    uint32_t n;
} nm_search_chain;

typedef struct nm_search_result {
    int status;            /* NM_SEARCH_OK / ESCALATE / FAIL */
    int reason;            /* NM_SEARCH_ESC_* when escalating */
    int fail_kind;         /* NM_SEARCH_FAIL_* when failing */
    char message[256];     /* the error sentence when failing / escalating */
    uint32_t warnings;     /* NM_SEARCH_WARN_* */
    uint32_t facade_steps; /* forbidden steps crossed by the final path */
    uint32_t links_without_landing;
    bool goal_cut_off; /* 终点被隔开 */

    uint32_t start_anchor, goal_anchor; /* snap anchors (window cells) */
    double snap_start, snap_goal;       /* snap distances, px */

    nm_search_path base;   /* baseline cell path */
    nm_search_path topo;   /* topology cell path + heights (the baseline's when it fell back) */
    nm_search_chain chain; /* geometry parent chain (n = 0 when the geometry layer failed) */
    nm_search_path final;  /* final cell path with spans */
    double base_cost, topo_cost, geo_cost;

    /* inputs of the route mask tm of 拉直 (tm = solidc | access cells, & final mask): */
    uint8_t *solidc;     /* [nx*ny] open area of the geometry layer; NULL if it did not run */
    uint8_t *final_mask; /* [nx*ny] the mask of the solve that gave the final path
                                   (walk or core, ∧ its lim) */
    uint32_t *access;    /* window cells of the two endpoint access chains */
    uint32_t naccess;

    uint8_t *link_open; /* [window nlinks]: 1 = access chains were opened for the link */
    uint32_t nlinks;

    bool has_gap;                                    /* gap location (断开处) on failure */
    double gap_sx, gap_sy, gap_gx, gap_gy, gap_dist; /* px */

    double ms_topo, ms_geo; /* stage times (拓扑段, 几何段) */
    nm_search_topo_from topo_from;

    struct nm_sctx *state; /* with req->keep_state: the window's search state, for the next search
                              on the same window (or nm_search_state_free) */
} nm_search_result;

/* routeWindow's searches (两段搜索) for one leg in one window. Returns NM_OK with out->status
 * set (escalation and leg failure are results, not errors), or NM_ERR_ARG / NM_ERR_NOMEM.
 * out is overwritten; release it with nm_search_result_free. */
int nm_search_route_window(const nm_window *w, const nm_search_request *req, nm_search_result *out,
                           nm_error *err);
void nm_search_result_free(nm_search_result *r);
/* Frees a search state handed back in nm_search_result.state (NULL: nothing). */
void nm_search_state_free(struct nm_sctx *s);
/* Bytes the state holds (NULL: 0). */
size_t nm_search_state_bytes(const struct nm_sctx *s);

/* 最终判定 (窗口分档): the route cannot be walked when an end snapped farther than kSnapRadius
 * from the reach set or the goal is cut off. The baseline fixes the snaps and the cut-off, so a
 * window that cannot escalate (not small) skips the topology and geometry layers of such a leg:
 * their paths would be thrown away. */
bool nm_search_final_refuses(const nm_search_result *r);

/* limit1 and limit2 of a small window (小窗结果的检查) are the planner's: nm_route_limit1/2. */

/* ---- building blocks, exposed for the tests and the planner --------------------------------- */

/* Price field (单价): m(c) = hi / clamp(dist[c], lo, hi) in float; dist NULL = unit price. */
typedef struct nm_search_price {
    const float *dist;
    float lo, hi;
} nm_search_price;
float nm_search_price_at(const nm_search_price *p, uint32_t c);

/* Access chain (端点接入): Dijkstra on cw3 from `from` to the first cell of `target`, integer
 * chamfer costs 100/141, ties cost, bottleneck (higher first), cell, predecessor. max_cost > 0
 * stops when the popped cost reaches it (linkChains: 6400). Returns 1 with the path from `from`
 * (first) to the target cell (last) in *cells / *n (nm_malloc'd), 0 when no target cell was
 * reached, negative on error. *cost gets the chamfer cost. */
int nm_search_access(const nm_window *w, const uint8_t *walk, const uint8_t *target, uint32_t from,
                     int32_t max_cost, uint32_t **cells, uint32_t *n, int32_t *cost, nm_error *err);

/* Gap location (断开处的定位) between the spans the start span reaches and the spans that reach
 * one of the goal spans, on the core mask. Returns 1 with the pair (window cells) and the
 * Euclidean distance in px, 0 when an end is empty, negative on error. */
int nm_search_locate_gap(const nm_window *w, uint32_t start_span, const uint32_t *goals,
                         uint32_t ngoal, uint32_t *cell_a, uint32_t *cell_b, double *dist_px,
                         nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
