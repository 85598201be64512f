/* search_internal.h — what the files of navmesh/search share and nobody else sees: the per-window
 * search state (work arrays allocated once and reused by every solve), the masks, the edge rules
 * of SpanAstar and the entry points of each stage. */
#ifndef NM_SEARCH_INTERNAL_H
#define NM_SEARCH_INTERNAL_H

#include "search.h"

#include <stdatomic.h>

#define NM_SEARCH_NONE 0x1FFFFFFFu /* no node, cell or span: par's all ones (29 bits) */
#define NM_SEARCH_EPS 1e-12  /* relaxation tolerance */
#define NM_SEARCH_DIAG 1.41421356F /* SpanAstar's diagonal step: a float, 2.4e-8 under sqrt 2 */

/* A cell mask as the conjunction of two layers (b NULL = no second layer). */
typedef struct nm_mask {
    const uint8_t *a;
    const uint8_t *b;
} nm_mask;

static inline bool nm_mask_in(const nm_mask *m, uint32_t c)
{
    return m->a[c] && (!m->b || m->b[c]);
}

/* A heap entry: the node is read back from the key (16 bytes an entry). */
typedef struct nm_heap_item {
    double f; /* >= +0, never -0 or NaN (the pop compares its bits as an integer: astar.c) */
    uint64_t key; /* tie-break after f: SpanAstar's (cell << 32 | span), which orders as the
                     span index (spans are sorted by cell) and hands the pop its cell;
                     (x << 32 | y) at the cell level; the access chains' (bottleneck, cell) */
} nm_heap_item;

typedef struct nm_heap {
    nm_heap_item *it;  /* entry 0, placed so that the four children of every entry (4i + 1 to
                          4i + 4) share one 64-byte line: a sift reads one line a level, not two */
    nm_heap_item *mem; /* the allocation: it is 0 to 3 entries in */
    size_t n, cap;
} nm_heap;

/* Room for cap entries (the heap's entries kept); a zeroed nm_heap is an empty heap. */
int nm_search_heap_reserve(nm_heap *h, size_t cap, nm_error *err);
void nm_search_heap_free(nm_heap *h);
int nm_search_heap_push(nm_heap *h, double f, uint64_t key, nm_error *err);
nm_heap_item nm_search_heap_pop(nm_heap *h);

/* A search node (a span, or a cell at the cell level): what a relaxation reads and writes of a
 * node in one 16-byte record, so a neighbour costs one cache line instead of three (g, par and
 * state in separate arrays missed the cache each on a Full window). In SpanAstar g, par and
 * state are valid only for a span whose `opened` bit is set; the cell level initialises them all. */
typedef struct nm_snode {
    double g;           /* cost from the start */
    uint32_t par : 29;  /* parent node, NM_SEARCH_NONE at the start */
    uint32_t state : 3; /* 0 new, NM_ST_OPEN, NM_ST_CLOSED; NM_ST_VIA: reached by a link or a drop */
    uint32_t pos;       /* SpanAstar: an open span's place in the indexed heap. A word of its own:
                           the heap's moves store it without reading the record (a bit field's
                           read of a cold record was a quarter of a long leg's search) */
} nm_snode;

#define NM_SEARCH_MAX_SPANS NM_SEARCH_NONE /* par's range: a window holds fewer spans and cells */

/* SpanAstar's indexed heap: the same 4-ary (f, key) heap with one entry per open span (key's low
 * 32 bits), whose place is kept in node[span].pos, so a lower g moves the entry up instead of
 * pushing a second one (on a Full demo window 40 % of the pops were such stale entries). */
int nm_search_iheap_push(nm_heap *h, nm_snode *node, double f, uint64_t key, nm_error *err);
void nm_search_iheap_decrease(nm_heap *h, nm_snode *node, uint32_t pos, double f);
nm_heap_item nm_search_iheap_pop(nm_heap *h, nm_snode *node);

/* SpanAstar's cell record (展开): what an expansion reads of a neighbour cell, one 16-byte record
 * a cell built once a window, so the three rows around a popped span are a few cache lines
 * instead of one a row in each of seven arrays (occ_bits, occ_rank, cs, the two mask layers,
 * stepbits, dist). The span range is nm_span_cell_spans's; the first span's height and REACH bit
 * spare most cells (one span) the reads of sp_h and sp_bits. */
typedef struct nm_scell {
    uint32_t first; /* the cell's first span */
    float h0;       /* sp_h[first] */
    float dist;     /* the window's clearance (the price field) */
    uint16_t n;     /* span count, 0 for an empty cell */
    uint8_t bits;   /* NM_SC_*: walk (core ∧ lay), core, sp_bits[first] & NM_SP_REACH, a span of
                       the cell has off-mesh links */
    uint8_t step;   /* the window's stepbits */
} nm_scell;

enum { NM_SC_WALK = 1, NM_SC_CORE = 2, NM_SC_REACH0 = 4, NM_SC_LINKS = 8 };

/* Per-window state of one routeWindow call. */
typedef struct nm_sctx {
    const nm_window *w;
    const nm_span_table *t;
    uint32_t nx, ny, ncell, nspans;
    uint8_t *walk; /* core ∧ lay */
    nm_scell *cell; /* [ncell] SpanAstar's cell records */
    /* off-mesh links by from_span and by from_cell (each stable: link order among equals), with
     * their sorted keys for nm_search_key_run. Arrays of the links' size, not of the spans': a
     * window has few links and millions of spans */
    uint32_t *lk_idx;    /* [nlinks] link indices sorted by from_span */
    uint32_t *lk_from;   /* [nlinks] from_span of lk_idx[i] (ascending) */
    uint32_t *lk_bycell; /* [nlinks] link indices sorted by from_cell */
    uint32_t *lk_cell;   /* [nlinks] from_cell of lk_bycell[i] (ascending) */
    uint64_t *lk_has;    /* [nspans / 64 + 1] bit k: span k has links (a small array the
                            searches test before looking a span's links up) */
    /* search work arrays */
    nm_snode *node;  /* [nnodes], not zeroed: pages of spans no search reaches stay unbacked */
    uint32_t nnodes; /* nspans; grown to ncell only by the cell-level fallback */
    uint64_t *closed; /* [nspans / 64 + 1] bit k: SpanAstar closed span k. A small array (a bit a
                         span stays in the cache) tested before the node record, so a stale heap
                         entry or a closed neighbour costs no miss on the records */
    uint64_t *opened; /* [nspans / 64 + 1] bit k: SpanAstar gave span k a g this run (its node's
                         g, par and state are valid only then). Cleared with `closed` when a run
                         starts, instead of each node's state through a list of the spans
                         touched: no scattered writes, and no 4 B a span */
    bool wider_cut; /* the last SpanAstar with q->wider refused a cell of the wider mask */
    double bound;   /* the last SpanAstar's bound (0: none): closed spans far under it hold the
                       unbounded solve's g, the others may not (nm_search_path_stands) */
    nm_heap heap;
    uint32_t *queue; /* [ncell] linked check */
    uint8_t *seen;   /* [ncell] */
    const nm_fall_gate *gate; /* RiseOk's fall gate: the window's, or a locked wrapper of it
                                 while two searches run at once */
    const atomic_int *stop;   /* set: SpanAstar gives up (a search whose result is not wanted) */
    bool twin;                /* walk and the link tables belong to another context */
    struct nm_sctx *spare; /* the last twin's work arrays (a context holding only them), kept for
                              the next twin on this window, or NULL */
} nm_sctx;

enum { NM_ST_OPEN = 1, NM_ST_CLOSED = 2, NM_ST_VIA = 4 };

/* The run [first, *end) of entries equal to key in keys[0 .. n), sorted ascending (empty when
 * none): the links leaving a span (lk_from, index into lk_idx) or a cell (lk_cell, lk_bycell). */
static inline uint32_t nm_search_key_run(const uint32_t *keys, uint32_t n, uint32_t key,
                                         uint32_t *end)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t e = lo;
    while (e < n && keys[e] == key)
        e++;
    *end = e;
    return lo;
}

/* A window of this many cells or more builds its cell records on two threads (when `workers`
 * allows two, as nm_workers_for reads it); the records do not depend on it. */
#define NM_SEARCH_SPLIT_CELLS (4u << 20)
int nm_search_ctx_init(nm_sctx *s, const nm_window *w, int workers, nm_error *err);
/* A second context on the same window for a search on another thread: its own node records,
 * closed bits, heap and flood arrays; walk and the link tables are s's (read only, s outlives
 * it). */
int nm_search_ctx_twin(nm_sctx *twin, nm_sctx *s, nm_error *err);
/* The twin's work arrays go to s->spare for s's next twin (freed when s has one). */
void nm_search_ctx_twin_keep(nm_sctx *s, nm_sctx *twin);
/* Frees s's arrays (not walk and the link tables of a twin) and its spare. */
void nm_search_ctx_free(nm_sctx *s);

/* Is the step (i, j) -> (i+dx, j+dy) forbidden by the window's step bits? */
bool nm_search_step_banned(const nm_window *w, uint32_t c, int dx, int dy);
/* The full edge rule of SpanAstar from span u along (dx, dy) to span v (mask, corner, step bits,
 * usable, RiseOk). */
bool nm_search_edge_ok(const nm_sctx *s, const nm_mask *m, uint32_t u, int dx, int dy, uint32_t v);
bool nm_search_cell_usable(const nm_window *w, uint32_t c);

/* A solve target: the start span and the goal span set (all in one goal anchor cell). */
typedef struct nm_ends {
    uint32_t start_cell, goal_cell;
    uint32_t start_span;
    uint32_t goals[16];
    uint32_t ngoal;
} nm_ends;

/* SpanAstar / Lazy Theta* (vis != NULL). Returns 1 found, 0 none, 2 gave up, negative error.
 * The parent chain from start to goal goes to chain_sp / chain_via (nm_malloc'd, *n nodes). */
typedef struct nm_span_search {
    nm_mask mask;
    nm_search_price price;
    nm_search_los_fn los;
    void *los_ctx;
    const uint8_t *solidc;
    double give_up; /* <= 0: none */
    /* The first layer of the caller's retry (core after walk), or NULL; only without los (Lazy
     * Theta*'s reparent reads the mask too). SpanAstar then sets s->wider_cut when a cell its
     * mask refused is in the wider mask: when it is not set, the retry makes the same tests with
     * the same answers, so it pops the same spans and fails the same way. */
    const uint8_t *wider;
    /* The bound (not with los; a speed-up, not one of the article's steps: it keeps their
     * result): a popped span with g plus its octile distance to the goal cell above `bound` is
     * closed without expanding it, which leaves the path and its cost as they are when bound >=
     * C + 2 S + NM_SEARCH_BOUND_MARGIN (C: the unbounded solve's cost, S: the window's link
     * slack, nm_search_link_slack; route_window.c's find_bound says why). 0: none. */
    double bound;
    double weight;     /* the heuristic's weight (0: 1), > 1 only for the search that finds a bound */
    uint32_t max_pops; /* > 0: the search gives up (2) after that many pops */
} nm_span_search;

#define NM_SEARCH_BOUND_MARGIN 0.5 /* cells: far above g's rounding and NM_SEARCH_EPS */
#define NM_SEARCH_BOUND_WEIGHT 1.2  /* the quick search's heuristic weight */
#define NM_SEARCH_BOUND_POPS 6.0    /* its pops, at most, a cell of the ends' distance */

int nm_search_span_astar(nm_sctx *s, const nm_span_search *q, const nm_ends *e, uint32_t **chain_sp,
                         uint8_t **chain_via, uint32_t *n, double *cost, nm_error *err);

/* The Euclidean distance between cells a and b, in cells (SpanAstar's heuristic). */
static inline double nm_search_cell_dist(const nm_sctx *s, uint32_t a, uint32_t b)
{
    const double dx = (double)(a % s->nx) - (double)(b % s->nx);
    const double dy = (double)(a / s->nx) - (double)(b / s->nx);
    return nm_hypot(dx, dy);
}

/* What the window's off-mesh links can take off a path's octile length: the sum over the links
 * of their octile length (SpanAstar's diagonal) less their cost, where positive. */
double nm_search_link_slack(const nm_sctx *s);

/* After a SpanAstar without sight on s found the goal span `found` with lim `before`: true when
 * the same search with q, whose lim only adds cells to `before`, is proved to return the same
 * chain and cost (false: solve again). */
bool nm_search_path_stands(const nm_sctx *s, const nm_span_search *q, const nm_ends *e,
                           const uint8_t *before, uint32_t found);

/* CostAstar on cells; returns 1 found, 0 none, negative error; *cells (nm_malloc'd). */
int nm_search_cost_astar(nm_sctx *s, const nm_mask *m, const nm_search_price *price, uint32_t start,
                         uint32_t goal, uint32_t **cells, uint8_t **via, uint32_t *n, double *cost,
                         nm_error *err);

/* Linked check: 8-connected flood on the mask from `from` plus links; does it reach `to`? */
bool nm_search_linked(nm_sctx *s, const nm_mask *m, uint32_t from, uint32_t to);
/* Reach check: a flood of cells under the cell part of SpanAstar's edge rule (mask, corners, step
 * bits, a REACH span) plus links; 0 proves that no SpanAstar on a mask within m links the two
 * cells, 1 that the cells are linked on m (its edges are the linked check's, and fewer). m->a is
 * walk or core. budget > 0: -1 when that many cells were popped without an answer. */
int nm_search_reach(nm_sctx *s, const nm_mask *m, uint32_t from, uint32_t to, uint32_t budget);
/* solve()'s first reach check pops at most this many cells before the linked check runs. */
#define NM_SEARCH_REACH_FIRST (1u << 16)

/* Expands a parent chain into a cell path with spans (chords by height interpolation). */
int nm_search_expand_chain(const nm_sctx *s, const uint32_t *sp, const uint8_t *via, uint32_t n,
                           nm_search_path *out, nm_error *err);

int nm_search_path_alloc(nm_search_path *p, uint32_t n, nm_error *err);
void nm_search_path_free(nm_search_path *p);

/* Gap location on an existing state (see nm_search_locate_gap). */
int nm_search_locate_gap_ctx(nm_sctx *s, uint32_t start_span, const uint32_t *goals, uint32_t ngoal,
                             uint32_t *cell_a, uint32_t *cell_b, double *dist_px, nm_error *err);

/* Access chains (端点接入 / linkChains): work arrays allocated once per window; after each run
 * only the touched cells are reset. */
typedef struct nm_access_work {
    int32_t *cost;     /* [ncell], valid for seen cells */
    float *bott;       /* [ncell] */
    uint32_t *prev;    /* [ncell] */
    uint8_t *done;     /* [ncell]: bit 0 done (popped), bit 1 seen */
    uint32_t *touched; /* [ncell] */
    uint32_t ntouched;
    nm_heap heap;
} nm_access_work;

int nm_search_access_init(nm_access_work *a, uint32_t ncell, nm_error *err);
void nm_search_access_free(nm_access_work *a);
int nm_search_access_run(nm_access_work *a, const nm_window *w, const uint8_t *walk,
                         const uint8_t *target, uint32_t from, int32_t max_cost, uint32_t **cells,
                         uint32_t *n, int32_t *cost, nm_error *err);


#endif
