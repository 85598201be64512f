/* astar.c — the search kernels of the article's 两段搜索: the per-window search state, the heap,
 * the edge rules shared by every search (eight neighbours, no corner cutting, forbidden steps,
 * usable spans, RiseOk with the window's fall gate, off-mesh links), SpanAstar with its Lazy
 * Theta* mode, CostAstar of the cell-level fallback, the linked check and the expansion of a
 * parent chain back into a cell path. */
#include "search/search_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Neighbour order of every expansion: row-major offsets around the cell. */
static const int k_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
static const int k_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};

/* ---- heap ------------------------------------------------------------------------------------ */
/* A 4-ary min-heap on (f, key). key is unique per node, so (f, key) is a total order on distinct
 * entries and any exact priority queue pops the same sequence; four children per node halve the
 * depth and keep a node's children in one cache line (4 x 16 bytes). */
static inline bool item_less(const nm_heap_item *a, const nm_heap_item *b)
{
    return a->f < b->f || (a->f == b->f && a->key < b->key);
}

int nm_search_heap_reserve(nm_heap *h, size_t cap, nm_error *err)
{
    size_t bytes;
    if (cap <= h->cap)
        return NM_OK;
    if (!nm_mul_ok(cap + 3, sizeof *h->it, &bytes))
        return nm_fail(err, NM_ERR_NOMEM, "search: heap: too many entries");
    const size_t was = h->it ? (size_t)(h->it - h->mem) : 0;
    nm_heap_item *p = nm_realloc(h->mem, bytes);
    if (!p)
        return nm_fail(err, NM_ERR_NOMEM, "search: heap: out of memory (%zu entries)", cap);
    /* entry 1 on a line's start: entry 0 at 48 bytes mod 64 (allocations are 16-byte aligned) */
    const size_t pad = ((size_t)48 + 64 - (uintptr_t)p % 64) % 64 / sizeof *p;
    if (pad != was)
        memmove(p + pad, p + was, h->n * sizeof *p);
    h->mem = p;
    h->it = p + pad;
    h->cap = cap;
    return NM_OK;
}

void nm_search_heap_free(nm_heap *h)
{
    nm_free(h->mem);
    memset(h, 0, sizeof *h);
}

static int heap_grow(nm_heap *h, nm_error *err)
{
    return nm_search_heap_reserve(h, h->cap ? h->cap * 2 : 1024, err);
}

int nm_search_heap_push(nm_heap *h, double f, uint64_t key, nm_error *err)
{
    int rc;
    if (h->n == h->cap && (rc = heap_grow(h, err))) /* rare: kept across the solves */
        return rc;
    size_t i = h->n++;
    const nm_heap_item x = {f, key};
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!item_less(&x, &h->it[p]))
            break;
        h->it[i] = h->it[p];
        i = p;
    }
    h->it[i] = x;
    return NM_OK;
}

/* (f, key) order without a branch: the child picked at each level is data dependent, and a
 * mispredicted branch per comparison was most of a pop's time. Where the compiler has 128-bit
 * integers, the entry is one, f's bits above the key: for the f of every search here (>= +0,
 * never -0 or NaN: sums of costs and distances) the bits order as the values, so one integer
 * comparison (a subtract with borrow) gives item_less's order instead of two floating ones and
 * an integer one. The pop's chain of comparisons is its time: 270 -> 190 cycles a pop on a Full
 * demo window. */
static inline bool item_less_nb(const nm_heap_item *a, const nm_heap_item *b)
{
#ifdef __SIZEOF_INT128__
    uint64_t fa, fb;
    memcpy(&fa, &a->f, sizeof fa);
    memcpy(&fb, &b->f, sizeof fb);
    return ((unsigned __int128)fa << 64 | a->key) < ((unsigned __int128)fb << 64 | b->key);
#else
    return (a->f < b->f) | ((a->f == b->f) & (a->key < b->key));
#endif
}

/* The smallest of the children of node i of an n-entry heap (four children: the smallest in three
 * selects), or n when i has none. */
static inline size_t least_child(const nm_heap_item *it, size_t i, size_t n)
{
    const size_t c0 = 4 * i + 1;
    if (c0 + 4 <= n) {
        const size_t a = c0 + item_less_nb(&it[c0 + 1], &it[c0]);
        const size_t b = c0 + 2 + item_less_nb(&it[c0 + 3], &it[c0 + 2]);
        return a ^ ((a ^ b) & -(size_t)item_less_nb(&it[b], &it[a]));
    }
    if (c0 >= n)
        return n;
    size_t m = c0;
    for (size_t c = c0 + 1; c < n; c++)
        if (item_less(&it[c], &it[m]))
            m = c;
    return m;
}

/* A write of an entry; the indexed heap (node not NULL) records its place in its span's node. */
static inline void iheap_put(nm_heap *h, nm_snode *node, size_t i, nm_heap_item x)
{
    h->it[i] = x;
    if (node)
        node[(uint32_t)x.key].pos = (uint32_t)i;
}

/* The pop of both heaps: the last entry sinks from the root. Inlined into each caller, so the
 * lazy heap's copy has no node test left. */
static inline nm_heap_item heap_pop(nm_heap *h, nm_snode *node)
{
    const nm_heap_item top = h->it[0], x = h->it[--h->n];
    const size_t n = h->n;
    nm_heap_item *const it = h->it;
    size_t i = 0;
    for (;;) {
        const size_t m = least_child(it, i, n);
        if (m == n || !item_less_nb(&it[m], &x))
            break;
        iheap_put(h, node, i, it[m]);
        i = m;
    }
    if (n)
        iheap_put(h, node, i, x);
    return top;
}

nm_heap_item nm_search_heap_pop(nm_heap *h)
{
    return heap_pop(h, NULL);
}

static void iheap_up(nm_heap *h, nm_snode *node, size_t i, nm_heap_item x)
{
    while (i > 0) {
        const size_t p = (i - 1) / 4;
        if (!item_less(&x, &h->it[p]))
            break;
        iheap_put(h, node, i, h->it[p]);
        i = p;
    }
    iheap_put(h, node, i, x);
}

int nm_search_iheap_push(nm_heap *h, nm_snode *node, double f, uint64_t key, nm_error *err)
{
    int rc;
    if (h->n == h->cap && (rc = heap_grow(h, err)))
        return rc;
    iheap_up(h, node, h->n++, (nm_heap_item){f, key});
    return NM_OK;
}

/* The entry at pos gets a lower (or equal) f: it can only move up. */
void nm_search_iheap_decrease(nm_heap *h, nm_snode *node, uint32_t pos, double f)
{
    nm_heap_item x = h->it[pos];
    x.f = f;
    iheap_up(h, node, pos, x);
}

nm_heap_item nm_search_iheap_pop(nm_heap *h, nm_snode *node)
{
    return heap_pop(h, node);
}

/* ---- state ----------------------------------------------------------------------------------- */
/* The work arrays of a context (walk and the link tables aside). */
static int work_alloc(nm_sctx *s, size_t nn)
{
    /* not zeroed: a node is read only once its span is opened (reset_span_nodes), and kept pages
     * reused here would otherwise be cleared for nothing */
    s->node = nm_malloc(nn * sizeof *s->node);
    s->closed = nm_calloc(nn / 64 + 1, sizeof *s->closed);
    s->queue = nm_malloc((size_t)s->ncell * sizeof *s->queue);
    s->seen = nm_malloc(s->ncell);
    s->opened = nm_calloc(nn / 64 + 1, sizeof *s->opened);
    memset(&s->heap, 0, sizeof s->heap); /* grows by doubling, kept across the solves */
    const int hrc = nm_search_heap_reserve(&s->heap, s->nspans / 8 + 1024, NULL);
    return s->node && s->closed && s->queue && s->seen && s->opened && !hrc ? NM_OK
                                                                            : NM_ERR_NOMEM;
}

static void work_free(nm_sctx *s)
{
    nm_free(s->node);
    nm_free(s->closed);
    nm_free(s->queue);
    nm_free(s->seen);
    nm_free(s->opened);
    nm_search_heap_free(&s->heap);
}

/* SpanAstar's cell records and the walk mask (core ∧ lay) of cells [c0, c1) from the window's
 * arrays (the link CSR already built); o: the occupied cells before c0. False when a cell holds
 * more spans than the record counts. */
static bool build_cells(nm_sctx *s, uint32_t c0, uint32_t c1, uint32_t o)
{
    /* the arrays in locals: the record's byte stores could alias them otherwise */
    const nm_window *w = s->w;
    const uint64_t *const occ = s->t->occ_bits;
    const uint32_t *const cs = s->t->cs;
    const uint64_t *const lk_has = s->lk_has;
    const float *const sp_h = s->t->sp_h, *const dist = w->dist;
    const uint8_t *const core = w->core, *const lay = w->lay, *const step = w->stepbits,
                  *const sp_bits = w->sp_bits;
    uint8_t *const walk = s->walk;
    nm_scell *const cell = s->cell;
    for (uint32_t c = c0; c < c1; c++) {
        walk[c] = (uint8_t)(core[c] && lay[c]); /* 掩膜: walk = core ∧ lay */
        nm_scell r = {0, 0.0F, dist ? dist[c] : 0.0F, 0, 0, step[c]};
        r.bits = (uint8_t)((walk[c] ? NM_SC_WALK : 0) | (core[c] ? NM_SC_CORE : 0));
        if ((occ[c >> 6] >> (c & 63)) & 1u) {
            const uint32_t f = cs[o], n = cs[o + 1] - f;
            o++;
            if (n > UINT16_MAX)
                return false;
            r.first = f;
            r.n = (uint16_t)n;
            r.h0 = sp_h[f];
            bool links = false; /* a span of the cell has links */
            for (uint32_t k = f; k < f + n && !links; k++)
                links = (lk_has[k >> 6] >> (k & 63)) & 1u;
            r.bits |= (uint8_t)(((sp_bits[f] & NM_SP_REACH) ? NM_SC_REACH0 : 0) |
                                (links ? NM_SC_LINKS : 0));
        }
        cell[c] = r;
    }
    return true;
}

/* The records of a large window in two halves, one a thread: their pages are new, and first
 * touches cost as much as the writes (leg 11 of the large world: 14.3 M cells, 229 MB). The
 * halves split at a bitmap word, where occ_rank gives the occupied count. Small windows stay on
 * one thread: there a second thread's records slowed the searches that read them (tenth session). */
typedef struct cells_job {
    nm_sctx *s;
    uint32_t half; /* the first cell of the second half */
} cells_job;

static int cells_chunk(void *ctx, size_t k)
{
    cells_job *j = ctx;
    const uint32_t c0 = k ? j->half : 0, c1 = k ? j->s->ncell : j->half;
    return build_cells(j->s, c0, c1, k ? j->s->t->occ_rank[c0 >> 6] : 0) ? NM_OK : NM_ERR_ARG;
}

static bool build_all_cells(nm_sctx *s, int workers)
{
    cells_job j = {s, (s->ncell / 2) & ~63u};
    const bool two = s->ncell >= NM_SEARCH_SPLIT_CELLS && nm_workers_for(s->ncell, workers) >= 2;
    return nm_parallel_chunks(2, two ? 2 : 1, cells_chunk, &j) == NM_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The window's links sorted by from_cell (by_cell) or from_span, then by index: idx[i] and its
 * key keys[i]. key: scratch of nlinks entries. */
static void sort_links(const nm_window *w, bool by_cell, uint64_t *key, uint32_t *idx,
                       uint32_t *keys)
{
    for (uint32_t l = 0; l < w->nlinks; l++)
        key[l] = (uint64_t)(by_cell ? w->links[l].from_cell : w->links[l].from_span) << 32 | l;
    qsort(key, w->nlinks, sizeof *key, cmp_u64);
    for (uint32_t i = 0; i < w->nlinks; i++) {
        keys[i] = (uint32_t)(key[i] >> 32);
        idx[i] = (uint32_t)key[i];
    }
}

int nm_search_ctx_init(nm_sctx *s, const nm_window *w, int workers, nm_error *err)
{
    memset(s, 0, sizeof *s);
    if (!w || !w->core || !w->lay || !w->stepbits || !w->sp_bits || w->win.nx <= 0 ||
        w->win.ny <= 0)
        return nm_fail(err, NM_ERR_ARG,
                       "search: window: missing layers (core/lay/stepbits/sp_bits)");
    s->w = w;
    s->t = &w->spans;
    s->gate = &w->gate;
    s->nx = (uint32_t)w->win.nx;
    s->ny = (uint32_t)w->win.ny;
    s->nspans = w->spans.nspans;
    if ((uint64_t)s->nx * s->ny >= NM_SEARCH_MAX_SPANS || s->nspans >= NM_SEARCH_MAX_SPANS)
        return nm_fail(err, NM_ERR_ARG,
                       "search: window of %u x %u cells, %u spans: over the search's limit (%u)",
                       s->nx, s->ny, s->nspans, NM_SEARCH_MAX_SPANS);
    s->ncell = s->nx * s->ny;
    size_t nn = s->nspans ? s->nspans : 1; /* span nodes; cells only if CostAstar runs */
    s->nnodes = (uint32_t)nn;
    s->walk = nm_malloc(s->ncell);
    s->cell = nm_malloc((size_t)s->ncell * sizeof *s->cell);
    s->lk_idx = nm_malloc(((size_t)w->nlinks + 1) * sizeof *s->lk_idx);
    s->lk_from = nm_malloc(((size_t)w->nlinks + 1) * sizeof *s->lk_from);
    s->lk_bycell = nm_malloc(((size_t)w->nlinks + 1) * sizeof *s->lk_bycell);
    s->lk_cell = nm_malloc(((size_t)w->nlinks + 1) * sizeof *s->lk_cell);
    s->lk_has = nm_calloc((size_t)s->nspans / 64 + 1, sizeof *s->lk_has);
    const int wrc = work_alloc(s, nn);
    uint64_t *key = nm_malloc(((size_t)w->nlinks + 1) * sizeof *key);
    if (!s->walk || !s->cell || !s->lk_idx || !s->lk_from || !s->lk_bycell || !s->lk_cell ||
        !s->lk_has || !key || wrc) {
        nm_free(key);
        nm_search_ctx_free(s);
        return nm_fail(err, NM_ERR_NOMEM, "search: window of %u cells: out of memory", s->ncell);
    }
    for (uint32_t l = 0; l < w->nlinks; l++) {
        if (w->links[l].from_span >= s->nspans || w->links[l].to_span >= s->nspans ||
            w->links[l].from_cell >= s->ncell || w->links[l].to_cell >= s->ncell) {
            nm_free(key);
            nm_search_ctx_free(s);
            return nm_fail(err, NM_ERR_ARG, "search: window: link %u: end out of range", l);
        }
        s->lk_has[w->links[l].from_span >> 6] |= (uint64_t)1 << (w->links[l].from_span & 63);
    }
    sort_links(w, false, key, s->lk_idx, s->lk_from);
    sort_links(w, true, key, s->lk_bycell, s->lk_cell);
    nm_free(key);
    if (!build_all_cells(s, workers)) {
        nm_search_ctx_free(s);
        return nm_fail(err, NM_ERR_ARG, "search: window: a cell of more than %u spans", UINT16_MAX);
    }
    return NM_OK;
}

/* The work arrays of a context (all but walk and the link tables) from one struct to another. */
static void work_move(nm_sctx *to, const nm_sctx *from)
{
    to->node = from->node;
    to->nnodes = from->nnodes;
    to->closed = from->closed;
    to->opened = from->opened;
    to->heap = from->heap;
    to->queue = from->queue;
    to->seen = from->seen;
}

int nm_search_ctx_twin(nm_sctx *twin, nm_sctx *s, nm_error *err)
{
    *twin = *s;
    twin->twin = true;
    twin->stop = NULL;
    twin->spare = NULL;
    twin->nnodes = s->nspans ? s->nspans : 1;
    if (s->spare) {
        /* the last twin's arrays on this window: no fresh pages to zero (on a Full demo window
         * ~60 MB a leg); SpanAstar clears their opened and closed bits, as for s's own */
        work_move(twin, s->spare);
        nm_free(s->spare);
        s->spare = NULL;
        return NM_OK;
    }
    if (work_alloc(twin, twin->nnodes)) {
        nm_search_ctx_free(twin);
        return nm_fail(err, NM_ERR_NOMEM, "search: second search of %u cells: out of memory",
                       s->ncell);
    }
    return NM_OK;
}

void nm_search_ctx_twin_keep(nm_sctx *s, nm_sctx *twin)
{
    nm_sctx *k = s->spare ? NULL : nm_calloc(1, sizeof *k);
    if (!k) {
        nm_search_ctx_free(twin);
        return;
    }
    k->twin = true; /* freeing it frees the work arrays only */
    k->ncell = twin->ncell;
    k->nspans = twin->nspans;
    work_move(k, twin);
    s->spare = k;
    memset(twin, 0, sizeof *twin);
}

void nm_search_ctx_free(nm_sctx *s)
{
    if (s->spare) {
        nm_search_ctx_free(s->spare);
        nm_free(s->spare);
    }
    if (!s->twin) {
        nm_free(s->walk);
        nm_free(s->cell);
        nm_free(s->lk_idx);
        nm_free(s->lk_from);
        nm_free(s->lk_bycell);
        nm_free(s->lk_cell);
        nm_free(s->lk_has);
    }
    work_free(s);
    memset(s, 0, sizeof *s);
}

/* ---- edge rules ------------------------------------------------------------------------------ */
bool nm_search_step_banned(const nm_window *w, uint32_t c, int dx, int dy)
{
    const uint32_t nx = (uint32_t)w->win.nx;
    for (int d = 0; d < 4; d++) {
        if (dx == nm_grid_step_dx[d] && dy == nm_grid_step_dy[d])
            return (w->stepbits[c] >> (2 * d)) & 1u;
        if (dx == -nm_grid_step_dx[d] && dy == -nm_grid_step_dy[d]) {
            /* c = b + d_i: the step b + d_i -> b is bit 2i + 1 of b */
            uint32_t b = (uint32_t)((int64_t)c + dy * (int64_t)nx + dx);
            return (w->stepbits[b] >> (2 * d + 1)) & 1u;
        }
    }
    return true;
}

bool nm_search_cell_usable(const nm_window *w, uint32_t c)
{
    uint32_t f, n = nm_span_cell_spans(&w->spans, c, &f);
    for (uint32_t k = 0; k < n; k++)
        if (w->sp_bits[f + k] & NM_SP_REACH)
            return true;
    return false;
}

/* The cell (i + dx, j + dy) if inside the window. */
static bool step_cell(const nm_sctx *s, uint32_t c, int dx, int dy, uint32_t *out)
{
    int64_t i = (int64_t)(c % s->nx) + dx, j = (int64_t)(c / s->nx) + dy;
    if (i < 0 || j < 0 || i >= s->nx || j >= s->ny)
        return false;
    *out = (uint32_t)(j * s->nx + i);
    return true;
}

/* Cell part of the edge rule: target in the mask, no corner cutting, step not forbidden. */
static bool cell_edge_ok(const nm_sctx *s, const nm_mask *m, uint32_t c, int dx, int dy,
                         uint32_t *vc)
{
    if (!step_cell(s, c, dx, dy, vc) || !nm_mask_in(m, *vc))
        return false;
    if (dx && dy) {
        uint32_t a, b;
        if (!step_cell(s, c, dx, 0, &a) || !step_cell(s, c, 0, dy, &b) || !nm_mask_in(m, a) ||
            !nm_mask_in(m, b))
            return false;
    }
    return !nm_search_step_banned(s->w, c, dx, dy);
}

/* RiseOk with its common case inline (nm_grid_rise_gentle: passes at the article's step 3 before
 * any look-ahead); the rest goes to nm_grid_rise_ok. */
static inline bool rise_ok(const nm_sctx *s, int32_t i, int32_t j, int dx, int dy, double ha,
                           double hb)
{
    return nm_grid_rise_gentle(ha, hb) ||
           nm_grid_rise_ok(s->t, s->gate, i, j, dx, dy, ha, hb);
}

bool nm_search_edge_ok(const nm_sctx *s, const nm_mask *m, uint32_t u, int dx, int dy, uint32_t v)
{
    uint32_t c = s->t->sp_cell[u], vc;
    if (!cell_edge_ok(s, m, c, dx, dy, &vc) || s->t->sp_cell[v] != vc)
        return false;
    if (!(s->w->sp_bits[v] & NM_SP_REACH))
        return false;
    return rise_ok(s, (int32_t)(c % s->nx), (int32_t)(c / s->nx), dx, dy, s->t->sp_h[u],
                   s->t->sp_h[v]);
}

/* The price of clearance d (p->dist set). */
static inline float price_of(const nm_search_price *p, float d)
{
    d = d < p->lo ? p->lo : d;
    d = d > p->hi ? p->hi : d;
    return p->hi / d;
}

float nm_search_price_at(const nm_search_price *p, uint32_t c)
{
    if (!p || !p->dist)
        return 1.0F;
    return price_of(p, p->dist[c]);
}

/* nm_search_price_at from a cell record (p's field is the window's dist). */
static inline float cell_price(const nm_search_price *p, const nm_scell *r)
{
    return p->dist ? price_of(p, r->dist) : 1.0F;
}

/* Step price: length times the mean of the two cells' prices, in float. */
static double step_price(const nm_search_price *p, uint32_t a, uint32_t b, bool diag)
{
    const float len = diag ? NM_SEARCH_DIAG : 1.0F;
    return (double)((len * 0.5F) * (nm_search_price_at(p, a) + nm_search_price_at(p, b)));
}

static bool is_goal(const nm_ends *e, uint32_t k)
{
    for (uint32_t i = 0; i < e->ngoal; i++)
        if (e->goals[i] == k)
            return true;
    return false;
}

/* SpanAstar's reset: no span opened or closed. A node's g, par and state are read only for an
 * opened span, so they are never cleared (pages of spans no search reaches are never written)
 * and the other users of the node records (the cell level, the gap flood) leave nothing to
 * undo. */
static void reset_span_nodes(nm_sctx *s)
{
    const size_t words = (size_t)s->nspans / 64 + 1;
    memset(s->opened, 0, words * sizeof *s->opened);
    memset(s->closed, 0, words * sizeof *s->closed);
    s->heap.n = 0;
}

/* Bit k of a span bitmap (opened, closed). */
static inline bool span_bit(const uint64_t *b, uint32_t k)
{
    return (b[k >> 6] >> (k & 63)) & 1u;
}

static inline void span_bit_set(uint64_t *b, uint32_t k)
{
    b[k >> 6] |= (uint64_t)1 << (k & 63);
}

static inline bool span_opened(const nm_sctx *s, uint32_t k)
{
    return span_bit(s->opened, k);
}

static inline bool span_closed(const nm_sctx *s, uint32_t k)
{
    return span_bit(s->closed, k);
}

static void reset_nodes(nm_sctx *s, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        s->node[k] = (nm_snode){INFINITY, NM_SEARCH_NONE, 0, 0};
    s->heap.n = 0;
}

/* Lazy Theta*'s SetVertex: the closed 8-neighbour w minimising g(w) + step(w, u) under the same
 * edge rules as an expansion. */
static void reparent(nm_sctx *s, const nm_span_search *q, uint32_t u)
{
    const uint32_t uc = s->t->sp_cell[u];
    double best = INFINITY;
    uint32_t bw = NM_SEARCH_NONE;
    bool bdrop = false;
    for (int d = 0; d < 8; d++) {
        uint32_t wc;
        if (!step_cell(s, uc, k_dx[d], k_dy[d], &wc))
            continue;
        uint32_t f, n = nm_span_cell_spans(s->t, wc, &f);
        for (uint32_t k = f; k < f + n; k++) {
            if (!span_closed(s, k))
                continue;
            if (!nm_search_edge_ok(s, &q->mask, k, -k_dx[d], -k_dy[d], u))
                continue;
            double c = s->node[k].g + step_price(&q->price, wc, uc, k_dx[d] && k_dy[d]);
            if (c < best - NM_SEARCH_EPS) {
                best = c;
                bw = k;
                bdrop = s->t->sp_h[k] - s->t->sp_h[u] > NM_kClimb;
            }
        }
    }
    if (bw == NM_SEARCH_NONE)
        return;
    nm_snode *nu = &s->node[u];
    nu->g = best;
    nu->par = bw;
    nu->state = (uint8_t)((nu->state & (NM_ST_OPEN | NM_ST_CLOSED)) | (bdrop ? NM_ST_VIA : 0));
}

/* nm_search_step_banned per neighbour d (k_dx, k_dy) as a bit of a cell record's `step`: the
 * bit of the step (canonical direction i: bit 2i of the cell left; the reverse of i: bit 2i + 1 of
 * the cell entered), rev[d] set when it is the entered cell's. */
static void step_tables(uint8_t bit[8], uint8_t rev[8])
{
    for (int d = 0; d < 8; d++) {
        bit[d] = rev[d] = 0;
        for (int i = 0; i < 4; i++) {
            if (k_dx[d] == nm_grid_step_dx[i] && k_dy[d] == nm_grid_step_dy[i]) {
                bit[d] = (uint8_t)(2 * i);
            } else if (k_dx[d] == -nm_grid_step_dx[i] && k_dy[d] == -nm_grid_step_dy[i]) {
                bit[d] = (uint8_t)(2 * i + 1);
                rev[d] = 1;
            }
        }
    }
}

/* An offer taken by span v's record nv. A span's first offer writes the whole record: a store to
 * the bit fields alone reads their word first, and the first read of a page no one has written
 * maps the kernel's shared zero page, which the store then has to copy (two faults a node page,
 * the second also clearing a page, instead of one). An open span keeps its place in the heap. */
static inline void node_offer(nm_snode *nv, bool was_open, double g, uint32_t par, unsigned state)
{
    if (was_open) {
        nv->g = g;
        nv->par = par;
        nv->state = state;
    } else {
        *nv = (nm_snode){g, par, state, 0};
    }
}

/* The octile length of a step (dx, dy) in cells with SpanAstar's diagonal (NM_SEARCH_DIAG): no
 * step of price >= 1 costs less, so no path without links is shorter. */
static inline double octile(int64_t dx, int64_t dy)
{
    const int64_t ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
    const int64_t lo = ax < ay ? ax : ay, hi = ax < ay ? ay : ax;
    return (double)(hi - lo) + (double)lo * (double)NM_SEARCH_DIAG;
}

double nm_search_link_slack(const nm_sctx *s)
{
    double slack = 0.0;
    for (uint32_t l = 0; l < s->w->nlinks; l++) {
        const nm_window_link *lk = &s->w->links[l];
        const int64_t a = lk->from_cell, b = lk->to_cell, nx = s->nx;
        const double o = octile(a % nx - b % nx, a / nx - b / nx);
        if (o > lk->cost)
            slack += o - lk->cost;
    }
    return slack;
}

/* SpanAstar's heap key: (cell << 32 | span) orders as the span index, since the span table is
 * sorted by cell (PackSpans), so the pop reads the cell from its entry instead of sp_cell. */
static inline uint64_t span_key(const nm_span_table *t, uint32_t k)
{
    return (uint64_t)t->sp_cell[k] << 32 | k;
}

/* What an expansion reads of its popped span, for neighbour(). The context's sizes and bitmaps
 * are copied in: a store to a node's uint32_t fields could alias them, so read through s they
 * would be loaded again at every neighbour. */
typedef struct pop_at {
    nm_sctx *s;
    const nm_span_search *q;
    nm_snode *node;
    const nm_scell *cr;
    const uint8_t *mb;
    const nm_mask *wider;
    const uint8_t *step_bit, *step_rev;
    const nm_window *w;
    const float *sp_h;
    const uint64_t *closed;
    uint64_t *opened;
    int64_t nx, ny;
    bool inside; /* the eight neighbours are all in the window */
    uint32_t u, uc;
    int64_t ui, uj, gi, gj;
    double gu;
    uint32_t pu;
    double pi, pj, gpu;
    const nm_scell *cu;
    float pr_u, hu;
    uint8_t abit;
    bool chord_from, track;
    double hw; /* the heuristic's weight: 1 (a product by 1 is exact) but for a bound's search */
} pop_at;

/* SpanAstar's relaxation of the spans of neighbour d of the popped span (展开): the cell part of
 * the edge rule once, then each span not closed. Inlined eight times with d a constant (one loop
 * over d: 0.91 of the topology stage's time on leg 8 of the large world, fortieth session). */
static inline __attribute__((always_inline)) int neighbour(const pop_at *P, int d, nm_error *err)
{
    nm_sctx *const s = P->s;
    const nm_span_search *const q = P->q;
    const nm_window *const w = P->w;
    const int64_t nx = P->nx;
    nm_snode *const node = P->node;
    const nm_scell *const cr = P->cr;
    const uint8_t *const mb = P->mb;
    const uint8_t abit = P->abit;
    const uint32_t u = P->u, uc = P->uc;
    const int64_t ui = P->ui, uj = P->uj;
    const nm_scell *const cu = P->cu;
    const int dx = k_dx[d], dy = k_dy[d];
    const int64_t vi = ui + dx, vj = uj + dy;
    if (!P->inside && (vi < 0 || vj < 0 || vi >= nx || vj >= P->ny))
        return NM_OK;
    const uint32_t vc = (uint32_t)((int64_t)uc + dy * nx + dx);
    const nm_scell *const cv = &cr[vc];
    const uint32_t f = cv->first, cnt = cv->n;
    if (!cnt)
        return NM_OK;
    const bool diag = dx && dy;
    int cell_ok = -1; /* the cell part of the edge rule, judged once per neighbour */
    for (uint32_t v = f; v < f + cnt; v++) {
        if (span_bit(P->closed, v)) /* #6214: closed spans are not relaxed */
            continue;
        nm_snode *const nv = &node[v];
        if (cell_ok < 0) { /* mask, no corner cutting, step bits */
            const uint32_t ca = (uint32_t)((int64_t)uc + dx); /* (vi, uj) */
            const uint32_t cb = (uint32_t)((int64_t)uc + dy * nx); /* (ui, vj) */
            cell_ok = (cv->bits & abit) && (!mb || mb[vc]) &&
                      (!diag || ((cr[ca].bits & cr[cb].bits & abit) &&
                                 (!mb || (mb[ca] && mb[cb])))) &&
                      !(((P->step_rev[d] ? cv : cu)->step >> P->step_bit[d]) & 1u);
        }
        if (!cell_ok) {
            if (P->track && !s->wider_cut)
                s->wider_cut =
                    nm_mask_in(P->wider, vc) &&
                    (!diag || (nm_mask_in(P->wider, (uint32_t)(uj * nx + vi)) &&
                               nm_mask_in(P->wider, (uint32_t)(vj * nx + ui)))) &&
                    !((w->stepbits[P->step_rev[d] ? vc : uc] >> P->step_bit[d]) & 1u);
            break;
        }
        /* the first span's REACH and height are in the cell record */
        const bool reach = v == f ? (cv->bits & NM_SC_REACH0) : (w->sp_bits[v] & NM_SP_REACH);
        const float hv = v == f ? cv->h0 : P->sp_h[v];
        if (!reach || !rise_ok(s, (int32_t)ui, (int32_t)uj, dx, dy, P->hu, hv))
            continue;
        const bool drop = P->hu - hv > NM_kClimb;
        const float len = diag ? NM_SEARCH_DIAG : 1.0F;
        const float pr_v = cell_price(&q->price, cv);
        double ndp = P->gu + (double)((len * 0.5F) * (P->pr_u + pr_v));
        uint32_t np = u;
        if (P->chord_from && !drop && pr_v <= 1.0F) {
            double cd = P->gpu + nm_hypot(P->pi - (double)vi, P->pj - (double)vj);
            if (cd < ndp - NM_SEARCH_EPS) {
                np = P->pu;
                ndp = cd;
            }
        }
        const bool was_open = span_bit(P->opened, v); /* not closed: in the heap */
        if (ndp < (was_open ? nv->g : INFINITY) - NM_SEARCH_EPS) {
            node_offer(nv, was_open, ndp, np, NM_ST_OPEN | (drop ? NM_ST_VIA : 0));
            const double fv =
                ndp + P->hw * nm_hypot((double)vi - (double)P->gi, (double)vj - (double)P->gj);
            if (was_open) {
                nm_search_iheap_decrease(&s->heap, node, nv->pos, fv);
            } else {
                span_bit_set(P->opened, v);
                const int rc =
                    nm_search_iheap_push(&s->heap, node, fv, (uint64_t)vc << 32 | v, err);
                if (rc)
                    return rc;
            }
        }
    }
    return NM_OK;
}

/* Lazy Theta*: the via flag means "reached by a link or a drop"; such nodes pass no parent to a
 * chord and skip the sight check. links are told apart when the chain is built. */
int nm_search_span_astar(nm_sctx *s, const nm_span_search *q, const nm_ends *e, uint32_t **chain_sp,
                         uint8_t **chain_via, uint32_t *n, double *cost, nm_error *err)
{
    const nm_span_table *t = s->t;
    const nm_window *w = s->w;
    nm_snode *const node = s->node;
    *chain_sp = NULL;
    *chain_via = NULL;
    *n = 0;
    /* the mask's first layer and the price field as the cell records hold them */
    const uint8_t abit = q->mask.a == s->walk ? NM_SC_WALK : q->mask.a == w->core ? NM_SC_CORE : 0;
    if (!abit || (q->price.dist && q->price.dist != w->dist))
        return nm_fail(err, NM_ERR_ARG, "search: SpanAstar: mask not walk or core, or a price "
                                        "field not the window's");
    const uint8_t *const mb = q->mask.b;
    const nm_scell *const cr = s->cell;
    reset_span_nodes(s);
    s->wider_cut = false;
    const bool bounded = q->bound > 0.0 && !q->los;
    const double bound = s->bound = bounded ? q->bound : 0.0;
    const double hw = q->weight > 0.0 ? q->weight : 1.0;
    /* q->mask with the wider first layer: tested only where q->mask refuses */
    const nm_mask wider = {q->wider, q->mask.b};
    const bool track = q->wider && !q->los; /* reparent's mask tests are not tracked */
    const uint32_t gc = e->goal_cell;
    /* cell coordinates kept per pop: the same integers nm_search_cell_dist would divide out */
    const int64_t gi = gc % s->nx, gj = gc / s->nx;
    node[e->start_span] = (nm_snode){0.0, NM_SEARCH_NONE, NM_ST_OPEN, 0};
    int rc = nm_search_iheap_push(&s->heap, node, hw * nm_search_cell_dist(s, t->sp_cell[e->start_span], gc),
                                  span_key(t, e->start_span), err);
    if (rc)
        return rc;
    span_bit_set(s->opened, e->start_span);
    uint8_t step_bit[8], step_rev[8];
    step_tables(step_bit, step_rev);
    uint32_t found = NM_SEARCH_NONE;
    for (uint32_t pops = 0; s->heap.n; pops++) {
        if (s->stop && !(pops & 1023) && atomic_load_explicit(s->stop, memory_order_relaxed))
            return 2; /* the caller no longer wants this result */
        if (q->max_pops && pops >= q->max_pops)
            return 2;
        /* one entry per open span: a lower g moved it up (its f = g + h with h fixed per span
         * only falls), so these are the pops of a heap with an entry per push minus the older
         * entries, which found their span closed */
        nm_heap_item it = nm_search_iheap_pop(&s->heap, node);
        const uint32_t u = (uint32_t)it.key, uc = (uint32_t)(it.key >> 32);
        nm_snode *const nu = &node[u];
        if (s->heap.n) { /* the next pop's node and its three rows, fetched while this one expands */
            const uint64_t nk = s->heap.it[0].key;
            const uint32_t nc = (uint32_t)(nk >> 32);
            __builtin_prefetch(&node[(uint32_t)nk]);
            __builtin_prefetch(&cr[nc]);
            if (nc > s->nx && nc + s->nx + 1 < s->ncell) {
                __builtin_prefetch(&cr[nc - s->nx - 1]);
                __builtin_prefetch(&cr[nc - s->nx + 1]);
                __builtin_prefetch(&cr[nc + s->nx - 1]);
                __builtin_prefetch(&cr[nc + s->nx + 1]);
            }
        }
        const int64_t ui = uc % s->nx, uj = uc / s->nx;
        if (q->give_up > 0 && it.f >= q->give_up)
            return 2; /* #6219: the final cost cannot fall below the popped f */
        /* 弹出: check the parent's sight once; reparent through the expansion rules */
        if (q->los && nu->par != NM_SEARCH_NONE && !(nu->state & NM_ST_VIA) &&
            !q->los(q->los_ctx, q->solidc, nu->par, u))
            reparent(s, q, u);
        nu->state |= NM_ST_CLOSED;
        span_bit_set(s->closed, u);
        if (uc == gc && is_goal(e, u)) {
            found = u;
            break;
        }
        const double gu = nu->g;
        if (bounded && gu + octile(ui - gi, uj - gj) > bound)
            continue; /* the bound: no path through u is within it */
        const uint32_t pu = nu->par;
        const bool chord_from = q->los && pu != NM_SEARCH_NONE && !(nu->state & NM_ST_VIA) &&
                                nm_search_price_at(&q->price, t->sp_cell[pu]) <= 1.0F;
        /* the chords' parent cell, divided once a pop (nm_search_cell_dist's integers) */
        const uint32_t pc = chord_from ? t->sp_cell[pu] : 0;
        const double pi = (double)(pc % s->nx), pj = (double)(pc / s->nx);
        const double gpu = chord_from ? node[pu].g : 0.0;
        const nm_scell *const cu = &cr[uc];
        const float pr_u = cell_price(&q->price, cu);
        const float hu = u == cu->first ? cu->h0 : t->sp_h[u];
        const bool inside = ui > 0 && uj > 0 && ui + 1 < s->nx && uj + 1 < s->ny;
        const pop_at P = {.s = s, .q = q, .node = node, .cr = cr, .mb = mb, .wider = &wider,
                          .step_bit = step_bit, .step_rev = step_rev, .w = w, .sp_h = t->sp_h,
                          .closed = s->closed, .opened = s->opened, .nx = s->nx, .ny = s->ny,
                          .inside = inside, .u = u, .uc = uc, .ui = ui, .uj = uj, .gi = gi,
                          .gj = gj, .gu = gu, .pu = pu, .pi = pi, .pj = pj, .gpu = gpu, .cu = cu,
                          .pr_u = pr_u, .hu = hu, .abit = abit, .chord_from = chord_from,
                          .track = track, .hw = hw};
        if (inside) /* the neighbours' first nodes */
            for (int d = 0; d < 8; d++)
                __builtin_prefetch(&node[cr[(int64_t)uc + k_dy[d] * P.nx + k_dx[d]].first]);
        /* the eight neighbours, each with its direction a constant: their tests fold, and each
         * has branches of its own for the predictor (behind the front or ahead of it) */
        if ((rc = neighbour(&P, 0, err)) || (rc = neighbour(&P, 1, err)) ||
            (rc = neighbour(&P, 2, err)) || (rc = neighbour(&P, 3, err)) ||
            (rc = neighbour(&P, 4, err)) || (rc = neighbour(&P, 5, err)) ||
            (rc = neighbour(&P, 6, err)) || (rc = neighbour(&P, 7, err)))
            return rc;
        if (!(cu->bits & NM_SC_LINKS) || !((s->lk_has[u >> 6] >> (u & 63)) & 1u))
            continue;
        uint32_t lend;
        for (uint32_t l = nm_search_key_run(s->lk_from, w->nlinks, u, &lend); l < lend; l++) {
            const nm_window_link *lk = &w->links[s->lk_idx[l]];
            const uint32_t v = lk->to_span;
            nm_snode *const nv = &node[v];
            if (span_closed(s, v))
                continue;
            if (!nm_mask_in(&q->mask, lk->to_cell)) {
                if (track && nm_mask_in(&wider, lk->to_cell))
                    s->wider_cut = true;
                continue;
            }
            if (!(w->sp_bits[v] & NM_SP_REACH))
                continue;
            double ndp = gu + lk->cost;
            const bool was_open = span_opened(s, v);
            if (ndp < (was_open ? nv->g : INFINITY) - NM_SEARCH_EPS) {
                node_offer(nv, was_open, ndp, u, NM_ST_OPEN | NM_ST_VIA);
                const double fv = ndp + hw * nm_search_cell_dist(s, lk->to_cell, gc);
                if (was_open) {
                    nm_search_iheap_decrease(&s->heap, node, nv->pos, fv);
                } else {
                    span_bit_set(s->opened, v);
                    rc = nm_search_iheap_push(&s->heap, node, fv, span_key(t, v), err);
                    if (rc)
                        return rc;
                }
            }
        }
    }
    if (found == NM_SEARCH_NONE)
        return 0;
    uint32_t len = 0;
    for (uint32_t k = found; k != NM_SEARCH_NONE; k = node[k].par)
        len++;
    uint32_t *sp = nm_malloc((size_t)len * sizeof *sp);
    uint8_t *via = nm_malloc(len);
    if (!sp || !via) {
        nm_free(sp);
        nm_free(via);
        return nm_fail(err, NM_ERR_NOMEM, "search: path of %u nodes: out of memory", len);
    }
    uint32_t i = len;
    for (uint32_t k = found; k != NM_SEARCH_NONE; k = node[k].par) {
        --i;
        sp[i] = k;
        via[i] = 0;
        if (node[k].par != NM_SEARCH_NONE && (node[k].state & NM_ST_VIA)) {
            /* a link when the two cells are not neighbours or a link joins them */
            uint32_t p = node[k].par;
            bool link = false;
            uint32_t lend;
            for (uint32_t l = nm_search_key_run(s->lk_from, w->nlinks, p, &lend); l < lend; l++)
                if (w->links[s->lk_idx[l]].to_span == k)
                    link = true;
            uint32_t a = t->sp_cell[p], b = t->sp_cell[k];
            int64_t ddx = (int64_t)(a % s->nx) - (int64_t)(b % s->nx);
            int64_t ddy = (int64_t)(a / s->nx) - (int64_t)(b / s->nx);
            if (ddx < -1 || ddx > 1 || ddy < -1 || ddy > 1)
                link = true;
            via[i] = link ? 1 : 2;
        }
    }
    *chain_sp = sp;
    *chain_via = via;
    *n = len;
    *cost = node[found].g;
    return 1;
}

/* ---- a found path after the mask grew ------------------------------------------------------------
 * SpanAstar without sight pops spans in (f, key) order, a strict total order, its f never falling
 * (the heuristic is consistent: prices are at least 1, links cost at least their length), and an
 * offer moves a span only when it lowers its g by more than NM_SEARCH_EPS. Grow the mask's lim by a few cells
 * (the access chains of the baseline's links and drops) and solve again: the spans the first
 * solve popped before its goal are popped again in the same order with the same g and parent
 * unless a new edge offers one of them a lower g, or offers a span the first solve did not pop an
 * f below the goal's. The new edges are the steps into and out of the new cells, the diagonal
 * steps whose corner is a new cell, and the links landing in a new cell. So the first path stands
 * when every such offer, from a popped span or from a new span that may pop before the goal, is
 * worse by a margin than the target's g (popped) or keeps its f above the goal's (not popped). The
 * offers are taken at their least (the new spans' g from every popped neighbour and from each
 * other), so the test only ever errs towards "solve again". */
typedef struct grown {
    const nm_sctx *s;
    const nm_span_search *q;
    const uint8_t *before;
    uint32_t gc, found;
    double fg, margin;
    double trust; /* after a bounded solve: a closed span's g is the unbounded solve's when g plus
                     its octile distance to the goal is at most this (INFINITY unbounded) */
    uint32_t *xs;  /* [nx] the new cells' spans, ascending */
    double *xg;    /* [nx] their least g (INFINITY: no offer) */
    uint32_t nx;
} grown;

static uint32_t grown_index(const grown *G, uint32_t v)
{
    uint32_t lo = 0, hi = G->nx;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (G->xs[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < G->nx && G->xs[lo] == v ? lo : NM_SEARCH_NONE;
}

/* Does closed span v hold the g the unbounded solve gives it? Past the bound's trust the first
 * solve may have closed v with a g that came around a skipped span, or skipped it: a span on
 * the unbounded chain to v was skipped only with g + octile above the bound, so v's unbounded
 * g + octile is above the bound less the links' slack, and its bounded g no lower. */
static bool closed_g_final(const grown *G, uint32_t v)
{
    const nm_sctx *s = G->s;
    const uint32_t c = s->t->sp_cell[v];
    return G->trust == INFINITY ||
           s->node[v].g + octile((int64_t)(c % s->nx) - (int64_t)(G->gc % s->nx),
                                 (int64_t)(c / s->nx) - (int64_t)(G->gc / s->nx)) <= G->trust;
}

/* An offer of g to span v (not a new one) leaves the first solve's pops as they were. A span the
 * unbounded solve closed but a bounded one did not is judged as not closed: it was popped before
 * the goal, so an offer whose f is above the goal's is above its g too. */
static bool offer_harmless(const grown *G, uint32_t v, double g)
{
    const nm_sctx *s = G->s;
    if (span_closed(s, v))
        return closed_g_final(G, v) && g >= s->node[v].g + G->margin;
    return g + nm_search_cell_dist(s, s->t->sp_cell[v], G->gc) > G->fg + G->margin;
}

/* Is cell c in the grown mask's new cells? */
static inline bool grown_new(const grown *G, uint32_t c)
{
    return G->q->mask.b[c] && !G->before[c];
}

/* The offer of g along the edge u -> v (a step dx, dy, or a link of cost lk >= 0) under the grown
 * mask: into a new span it lowers that span's least g (*moved set); into another span it must be
 * harmless when the edge is new (from a new span, or a diagonal whose corner is a new cell). */
static bool grown_offer(grown *G, uint32_t u, bool u_new, double g, int dx, int dy, double lk,
                        uint32_t v, bool *moved)
{
    const nm_sctx *s = G->s;
    const uint32_t x = grown_index(G, v);
    if (x == NM_SEARCH_NONE && !u_new) {
        if (lk >= 0.0 || !(dx && dy))
            return true; /* the first solve had this edge */
        const uint32_t uc = s->t->sp_cell[u];
        if (!grown_new(G, (uint32_t)((int64_t)uc + dx)) &&
            !grown_new(G, (uint32_t)((int64_t)uc + dy * (int64_t)s->nx)))
            return true;
    }
    double o;
    if (lk >= 0.0) {
        if (!nm_mask_in(&G->q->mask, s->t->sp_cell[v]) || !(s->w->sp_bits[v] & NM_SP_REACH))
            return true;
        o = g + lk;
    } else {
        if (!nm_search_edge_ok(s, &G->q->mask, u, dx, dy, v))
            return true;
        o = g + step_price(&G->q->price, s->t->sp_cell[u], s->t->sp_cell[v], dx && dy);
    }
    if (x == NM_SEARCH_NONE)
        return offer_harmless(G, v, o);
    if (o < G->xg[x]) {
        G->xg[x] = o;
        *moved = true;
    }
    return true;
}

/* The edges out of span u (g) under the grown mask: its steps, then its links. */
static bool grown_expand(grown *G, uint32_t u, bool u_new, double g, bool *moved)
{
    const nm_sctx *s = G->s;
    const uint32_t uc = s->t->sp_cell[u];
    for (int d = 0; d < 8; d++) {
        uint32_t vc, f;
        if (!step_cell(s, uc, k_dx[d], k_dy[d], &vc))
            continue;
        const uint32_t n = nm_span_cell_spans(s->t, vc, &f);
        for (uint32_t v = f; v < f + n; v++)
            if (!grown_offer(G, u, u_new, g, k_dx[d], k_dy[d], -1.0, v, moved))
                return false;
    }
    uint32_t lend;
    for (uint32_t l = nm_search_key_run(s->lk_from, s->w->nlinks, u, &lend); l < lend; l++) {
        const nm_window_link *lk = &s->w->links[s->lk_idx[l]];
        if (!grown_offer(G, u, u_new, g, 0, 0, lk->cost, lk->to_span, moved))
            return false;
    }
    return true;
}

bool nm_search_path_stands(const nm_sctx *s, const nm_span_search *q, const nm_ends *e,
                           const uint8_t *before, uint32_t found)
{
    if (q->los || !q->mask.b || !before || found >= s->nspans || !span_closed(s, found))
        return false;
    /* the argument needs a consistent heuristic: every link costs at least its length (the
     * window's cost, max(m, 1) times it, does) */
    for (uint32_t l = 0; l < s->w->nlinks; l++) {
        const nm_window_link *lk = &s->w->links[l];
        const double len = nm_search_cell_dist(s, lk->from_cell, lk->to_cell);
        if (!(lk->cost >= len - 1e-9 * (1.0 + len)))
            return false;
    }
    const uint8_t *const now = q->mask.b;
    grown G = {s, q, before, e->goal_cell, found, s->node[found].g, 0.0, INFINITY, NULL, NULL, 0};
    if (s->bound > 0.0)
        G.trust = s->bound - nm_search_link_slack(s) - NM_SEARCH_BOUND_MARGIN;
    /* above what the float diagonal step (2.4e-8 under sqrt 2) and rounding can take from the
     * heuristic's consistency along a path of at most fg cells */
    G.margin = 1e-7 * (1.0 + fabs(G.fg));
    if (q->give_up > 0.0 && G.fg + G.margin >= q->give_up)
        return false; /* a new span popped near the goal's f could make the grown solve give up */
    /* the new cells' spans; a cell that left the mask, or an end among the new: solve again */
    uint32_t cap = 0;
    for (uint32_t c = 0; c < s->ncell; c++) {
        if (before[c] && !now[c])
            return false;
        if (!now[c] || before[c])
            continue;
        if (c == e->start_cell || c == e->goal_cell)
            return false;
        uint32_t f;
        cap += nm_span_cell_spans(s->t, c, &f);
    }
    bool ok = true;
    if (cap) {
        G.xs = nm_malloc((size_t)cap * sizeof *G.xs);
        G.xg = nm_malloc((size_t)cap * sizeof *G.xg);
        ok = G.xs && G.xg;
        for (uint32_t c = 0; ok && c < s->ncell; c++) {
            if (!now[c] || before[c])
                continue;
            uint32_t f, n = nm_span_cell_spans(s->t, c, &f);
            for (uint32_t v = f; v < f + n; v++) {
                ok = ok && !span_closed(s, v); /* the first solve could not pop it */
                G.xs[G.nx] = v;
                G.xg[G.nx++] = INFINITY;
            }
        }
    }
    /* the popped spans around each new cell (every span with a new step, a step into a new cell
     * or a diagonal past one, is there), then the popped spans whose links land in a new cell */
    bool moved = false;
    for (uint32_t x = 0; ok && x < G.nx; x++) {
        const uint32_t c = s->t->sp_cell[G.xs[x]];
        if (x > 0 && s->t->sp_cell[G.xs[x - 1]] == c)
            continue;
        for (int d = 0; ok && d < 8; d++) {
            uint32_t nc, f;
            if (!step_cell(s, c, k_dx[d], k_dy[d], &nc) || grown_new(&G, nc))
                continue;
            const uint32_t n = nm_span_cell_spans(s->t, nc, &f);
            for (uint32_t u = f; ok && u < f + n; u++)
                if (u != found && span_closed(s, u))
                    ok = closed_g_final(&G, u) && grown_expand(&G, u, false, s->node[u].g, &moved);
        }
    }
    for (uint32_t l = 0; ok && l < s->w->nlinks; l++) {
        const nm_window_link *lk = &s->w->links[l];
        if (grown_new(&G, lk->to_cell) && !grown_new(&G, lk->from_cell) && lk->from_span != found &&
            span_closed(s, lk->from_span))
            ok = closed_g_final(&G, lk->from_span) &&
                 grown_offer(&G, lk->from_span, false, s->node[lk->from_span].g, 0, 0, lk->cost,
                             lk->to_span, &moved);
    }
    /* the new spans that may pop before the goal, expanded until their least g settle (a round
     * without a move has tested every offer at its least) */
    moved = true;
    for (uint32_t round = 0; ok && moved; round++) {
        moved = false;
        for (uint32_t x = 0; ok && x < G.nx; x++)
            if (G.xg[x] + nm_search_cell_dist(s, s->t->sp_cell[G.xs[x]], G.gc) <= G.fg + G.margin)
                ok = grown_expand(&G, G.xs[x], true, G.xg[x], &moved);
        if (round > G.nx)
            ok = false; /* cannot happen with positive edge costs */
    }
    nm_free(G.xs);
    nm_free(G.xg);
    return ok;
}

/* ---- CostAstar ------------------------------------------------------------------------------- */
static uint64_t xy_key(const nm_sctx *s, uint32_t c)
{
    return ((uint64_t)(c % s->nx) << 32) | (uint64_t)(c / s->nx); /* ties: x, then y */
}

int nm_search_cost_astar(nm_sctx *s, const nm_mask *m, const nm_search_price *price, uint32_t start,
                         uint32_t goal, uint32_t **cells, uint8_t **via, uint32_t *n, double *cost,
                         nm_error *err)
{
    *cells = NULL;
    *via = NULL;
    *n = 0;
    if (s->nnodes < s->ncell) { /* cell nodes: grown once, before the search loop */
        nm_snode *nd = nm_realloc(s->node, (size_t)s->ncell * sizeof *nd);
        if (!nd)
            return nm_fail(err, NM_ERR_NOMEM, "search: CostAstar: %u cells: out of memory",
                           s->ncell);
        s->node = nd;
        s->nnodes = s->ncell;
    }
    reset_nodes(s, s->ncell);
    nm_snode *const node = s->node;
    node[start].g = 0.0;
    int rc = nm_search_heap_push(&s->heap, nm_search_cell_dist(s, start, goal), xy_key(s, start), err);
    if (rc)
        return rc;
    bool found = false;
    while (s->heap.n) {
        nm_heap_item it = nm_search_heap_pop(&s->heap);
        const uint32_t u = (uint32_t)(it.key & UINT32_MAX) * s->nx + (uint32_t)(it.key >> 32);
        if (node[u].state & NM_ST_CLOSED) /* older entries of u: see SpanAstar */
            continue;
        node[u].state |= NM_ST_CLOSED;
        if (u == goal) {
            found = true;
            break;
        }
        for (int d = 0; d < 8; d++) {
            uint32_t v;
            if (!cell_edge_ok(s, m, u, k_dx[d], k_dy[d], &v) || (node[v].state & NM_ST_CLOSED))
                continue;
            double nd = node[u].g + step_price(price, u, v, k_dx[d] && k_dy[d]);
            if (nd < node[v].g - NM_SEARCH_EPS) {
                node[v] = (nm_snode){nd, u, NM_ST_OPEN, 0};
                if ((rc = nm_search_heap_push(&s->heap, nd + nm_search_cell_dist(s, v, goal), xy_key(s, v),
                                              err)))
                    return rc;
            }
        }
        /* links: only the far cell in the mask; no price, no step bits */
        uint32_t lend;
        for (uint32_t l = nm_search_key_run(s->lk_cell, s->w->nlinks, u, &lend); l < lend; l++) {
            const nm_window_link *lk = &s->w->links[s->lk_bycell[l]];
            uint32_t v = lk->to_cell;
            if ((node[v].state & NM_ST_CLOSED) || !nm_mask_in(m, v))
                continue;
            double nd = node[u].g + lk->cost;
            if (nd < node[v].g - NM_SEARCH_EPS) {
                node[v] = (nm_snode){nd, u, NM_ST_OPEN | NM_ST_VIA, 0};
                if ((rc = nm_search_heap_push(&s->heap, nd + nm_search_cell_dist(s, v, goal), xy_key(s, v),
                                              err)))
                    return rc;
            }
        }
    }
    if (!found)
        return 0;
    uint32_t len = 0;
    for (uint32_t k = goal; k != NM_SEARCH_NONE; k = node[k].par)
        len++;
    uint32_t *out = nm_malloc((size_t)len * sizeof *out);
    uint8_t *vv = nm_malloc(len);
    if (!out || !vv) {
        nm_free(out);
        nm_free(vv);
        return nm_fail(err, NM_ERR_NOMEM, "search: cell path of %u cells: out of memory", len);
    }
    uint32_t i = len;
    for (uint32_t k = goal; k != NM_SEARCH_NONE; k = node[k].par) {
        --i;
        out[i] = k;
        vv[i] = (node[k].state & NM_ST_VIA) && node[k].par != NM_SEARCH_NONE ? 1 : 0;
    }
    *cells = out;
    *via = vv;
    *n = len;
    *cost = node[goal].g;
    return 1;
}

/* ---- linked check ---------------------------------------------------------------------------- */
/* The linked check is a flood by row runs: a run is a maximal stretch of one row in the mask not
 * yet reached; it is marked when found and queued by its first cell, and its two neighbouring
 * rows are scanned from one cell left of it to one cell right (8-connected). Only whether `to`
 * is reached matters, so the visiting order is free; the mask is read row-wise (a per-cell
 * breadth-first flood took 160 ms on an 8.9 M-cell window, 5 % of its topology SpanAstar).
 * seen: bit 0 reached, bit 1 a link starts in the cell, bit 2 the last cell of a queued run. */
enum { LK_SEEN = 1, LK_LINK = 2, LK_END = 4 };

typedef struct flood {
    const nm_mask *m;
    uint8_t *seen;
    uint32_t *queue, tail;
    uint32_t nx, to;
} flood;

static inline bool flood_open(const flood *f, uint32_t c)
{
    return !(f->seen[c] & LK_SEEN) && nm_mask_in(f->m, c);
}

/* Marks and queues the run of row j through column i (i open); true when it holds `to`. *end:
 * its last column. */
static bool flood_run(flood *f, uint32_t j, uint32_t i, uint32_t *end)
{
    const uint32_t row = j * f->nx;
    uint32_t a = i, b = i;
    while (a > 0 && flood_open(f, row + a - 1))
        a--;
    while (b + 1 < f->nx && flood_open(f, row + b + 1))
        b++;
    for (uint32_t x = a; x <= b; x++)
        f->seen[row + x] |= LK_SEEN;
    f->seen[row + b] |= LK_END;
    f->queue[f->tail++] = row + a;
    *end = b;
    return f->to >= row + a && f->to <= row + b;
}

/* The open runs of row j meeting columns [a, b]. */
static bool flood_row(flood *f, uint32_t j, uint32_t a, uint32_t b)
{
    const uint32_t row = j * f->nx;
    for (uint32_t x = a; x <= b; x++)
        if (flood_open(f, row + x) && flood_run(f, j, x, &x))
            return true; /* else x is the run's end: the next cell is closed */
    return false;
}

bool nm_search_linked(nm_sctx *s, const nm_mask *m, uint32_t from, uint32_t to)
{
    if (from == to)
        return true;
    flood f = {m, s->seen, s->queue, 0, s->nx, to};
    const uint32_t nx = s->nx, ny = s->ny;
    memset(f.seen, 0, s->ncell);
    for (uint32_t l = 0; l < s->w->nlinks; l++)
        f.seen[s->w->links[l].from_cell] |= LK_LINK;
    /* the start is reached even outside the mask: a run of its own cell, and its row
     * neighbours' runs */
    f.seen[from] |= LK_SEEN | LK_END;
    f.queue[f.tail++] = from;
    const uint32_t fi = from % nx, fj = from / nx;
    uint32_t end;
    if ((fi > 0 && flood_open(&f, from - 1) && flood_run(&f, fj, fi - 1, &end)) ||
        (fi + 1 < nx && flood_open(&f, from + 1) && flood_run(&f, fj, fi + 1, &end)))
        return true;
    for (uint32_t head = 0; head < f.tail; head++) {
        const uint32_t c0 = f.queue[head], j = c0 / nx, a = c0 % nx;
        uint32_t b = a;
        while (!(f.seen[c0 + (b - a)] & LK_END))
            b++;
        const uint32_t lo = a > 0 ? a - 1 : 0, hi = b + 1 < nx ? b + 1 : b;
        if ((j > 0 && flood_row(&f, j - 1, lo, hi)) || (j + 1 < ny && flood_row(&f, j + 1, lo, hi)))
            return true;
        for (uint32_t c = c0; c <= c0 + (b - a); c++) {
            if (!(f.seen[c] & LK_LINK))
                continue;
            uint32_t lend;
            for (uint32_t l = nm_search_key_run(s->lk_cell, s->w->nlinks, c, &lend); l < lend; l++) {
                const nm_window_link *lk = &s->w->links[s->lk_bycell[l]];
                if (flood_open(&f, lk->to_cell) &&
                    flood_run(&f, lk->to_cell / nx, lk->to_cell % nx, &end))
                    return true;
            }
        }
    }
    return false;
}

/* ---- reach check ------------------------------------------------------------------------------ */
/* Does a cell path under the cell part of SpanAstar's edge rule lead from `from` to `to`? A step
 * from a span of cell u to a span of cell v needs v in the mask, no corner cut (both side cells in
 * it), the step not banned by the step bits and a REACH span in v; a link needs its target cell in
 * the mask. So a span path of a search on any mask within m is a cell path here, and when `to` is
 * not reached no such search finds one. The linked check floods the mask undirected, without
 * corners and step bits: on the demo town's leg 23 it passes while the topology layer's search
 * pops 2 M spans to exhaustion. Depth-first, from each cell the directions towards `to` first, so a
 * reachable end is found after few cells. m->a must be walk or core. Stopped (s->stop), it answers
 * 1: no proof. With a budget, it gives up after popping that many cells (-1). */
int nm_search_reach(nm_sctx *s, const nm_mask *m, uint32_t from, uint32_t to, uint32_t budget)
{
    if (from == to)
        return 1;
    const nm_window *w = s->w;
    const nm_scell *const cr = s->cell;
    const uint8_t abit = m->a == s->walk ? NM_SC_WALK : NM_SC_CORE;
    const uint8_t *const mb = m->b;
    const uint32_t nx = s->nx, ny = s->ny;
    uint8_t step_bit[8], step_rev[8];
    step_tables(step_bit, step_rev);
    /* push orders: for each way p towards `to` the directions least aligned with it first, so the
     * best is popped first (a greedy depth-first walk) */
    int order[8][8];
    for (int p = 0; p < 8; p++) {
        double score[8];
        for (int d = 0; d < 8; d++) {
            const double len = k_dx[d] && k_dy[d] ? 2.0 : 1.0; /* squared lengths: a ranking */
            score[d] = (double)(k_dx[d] * k_dx[p] + k_dy[d] * k_dy[p]) / len;
            order[p][d] = d;
        }
        for (int a = 1; a < 8; a++) /* insertion sort, ascending score, d ascending on ties */
            for (int b = a; b > 0 && score[order[p][b]] < score[order[p][b - 1]]; b--) {
                const int x = order[p][b];
                order[p][b] = order[p][b - 1];
                order[p][b - 1] = x;
            }
    }
    static const int8_t way_of[3][3] = {{0, 1, 2}, {3, -1, 4}, {5, 6, 7}}; /* [dy + 1][dx + 1] */
    const int64_t ti = to % nx, tj = to / nx;
    uint8_t *const seen = s->seen;
    uint32_t *const stack = s->queue;
    uint32_t top = 0;
    memset(seen, 0, s->ncell);
    seen[from] = 1;
    stack[top++] = from;
    for (uint32_t pops = 1; top; pops++) {
        if (s->stop && !(pops & 0xFFFF) && atomic_load_explicit(s->stop, memory_order_relaxed))
            return 1;
        if (pops == budget)
            return -1;
        const uint32_t u = stack[--top];
        const int64_t ui = u % nx, uj = u / nx;
        const nm_scell *const cu = &cr[u];
        const int64_t ex = ti - ui, ey = tj - uj, ax = ex < 0 ? -ex : ex, ay = ey < 0 ? -ey : ey;
        const int wx = 5 * ax < 2 * ay ? 0 : (ex > 0) - (ex < 0); /* tan 22.5 degrees ~ 2 / 5 */
        const int wy = 5 * ay < 2 * ax ? 0 : (ey > 0) - (ey < 0);
        const int way = way_of[wy + 1][wx + 1];
        const int *const ord = order[way < 0 ? 0 : way];
        for (int k = 0; k < 8; k++) {
            const int d = ord[k], dx = k_dx[d], dy = k_dy[d];
            const int64_t vi = ui + dx, vj = uj + dy;
            if (vi < 0 || vj < 0 || vi >= nx || vj >= ny)
                continue;
            const uint32_t v = (uint32_t)(vj * nx + vi);
            const nm_scell *const cv = &cr[v];
            if (seen[v] || !(cv->bits & abit) || (mb && !mb[v]) ||
                (((step_rev[d] ? cv : cu)->step >> step_bit[d]) & 1u))
                continue;
            if (dx && dy) {
                const uint32_t ca = (uint32_t)(uj * nx + vi), cb = (uint32_t)(vj * nx + ui);
                if (!(cr[ca].bits & cr[cb].bits & abit) || (mb && !(mb[ca] && mb[cb])))
                    continue;
            }
            if (!(cv->bits & NM_SC_REACH0) && !nm_search_cell_usable(w, v))
                continue;
            if (v == to)
                return 1;
            seen[v] = 1;
            stack[top++] = v;
        }
        if (!(cu->bits & NM_SC_LINKS))
            continue;
        uint32_t lend;
        for (uint32_t l = nm_search_key_run(s->lk_cell, s->w->nlinks, u, &lend); l < lend; l++) {
            const nm_window_link *lk = &s->w->links[s->lk_bycell[l]];
            const uint32_t v = lk->to_cell;
            if (seen[v] || !nm_mask_in(m, v))
                continue;
            if (v == to)
                return 1;
            seen[v] = 1;
            stack[top++] = v;
        }
    }
    return 0;
}

/* ---- paths ----------------------------------------------------------------------------------- */
int nm_search_path_alloc(nm_search_path *p, uint32_t n, nm_error *err)
{
    memset(p, 0, sizeof *p);
    p->cell = nm_malloc(((size_t)n + 1) * sizeof *p->cell);
    p->span = nm_malloc(((size_t)n + 1) * sizeof *p->span);
    p->h = nm_malloc(((size_t)n + 1) * sizeof *p->h);
    p->link = nm_calloc((size_t)n + 1, 1);
    if (!p->cell || !p->span || !p->h || !p->link) {
        nm_search_path_free(p);
        return nm_fail(err, NM_ERR_NOMEM, "search: path of %u cells: out of memory", n);
    }
    p->n = n;
    return NM_OK;
}

void nm_search_path_free(nm_search_path *p)
{
    nm_free(p->cell);
    nm_free(p->span);
    nm_free(p->h);
    nm_free(p->link);
    memset(p, 0, sizeof *p);
}

/* The span of cell c nearest height h, usable spans first; NONE for an empty cell. */
static uint32_t nearest_span(const nm_sctx *s, uint32_t c, double h)
{
    uint32_t f, n = nm_span_cell_spans(s->t, c, &f), best = NM_SEARCH_NONE;
    double bd = INFINITY;
    for (int pass = 0; pass < 2 && best == NM_SEARCH_NONE; pass++)
        for (uint32_t k = f; k < f + n; k++) {
            if (pass == 0 && !(s->w->sp_bits[k] & NM_SP_REACH))
                continue;
            double d = fabs((double)s->t->sp_h[k] - h);
            if (d < bd) {
                bd = d;
                best = k;
            }
        }
    return best;
}

/* Chords back to cells (Lazy Theta* 输出): the digital line of 视线, heights interpolated along
 * the chord, the nearest span per cell; link segments are not expanded. */
int nm_search_expand_chain(const nm_sctx *s, const uint32_t *sp, const uint8_t *via, uint32_t n,
                           nm_search_path *out, nm_error *err)
{
    uint32_t total = n ? 1 : 0;
    for (uint32_t k = 1; k < n; k++) {
        if (via[k] == 1) {
            total++;
            continue;
        }
        uint32_t a = s->t->sp_cell[sp[k - 1]], b = s->t->sp_cell[sp[k]];
        int64_t dx = (int64_t)(b % s->nx) - (int64_t)(a % s->nx);
        int64_t dy = (int64_t)(b / s->nx) - (int64_t)(a / s->nx);
        int64_t m = llabs(dx) > llabs(dy) ? llabs(dx) : llabs(dy);
        total += (uint32_t)(m < 1 ? 1 : m);
    }
    int rc = nm_search_path_alloc(out, total, err);
    if (rc)
        return rc;
    if (!n)
        return NM_OK;
    uint32_t o = 0;
    out->cell[o] = s->t->sp_cell[sp[0]];
    out->span[o] = sp[0];
    out->h[o] = s->t->sp_h[sp[0]];
    out->link[o++] = 0;
    for (uint32_t k = 1; k < n; k++) {
        uint32_t a = s->t->sp_cell[sp[k - 1]], b = s->t->sp_cell[sp[k]];
        if (via[k] == 1) {
            out->cell[o] = b;
            out->span[o] = sp[k];
            out->h[o] = s->t->sp_h[sp[k]];
            out->link[o++] = 1;
            continue;
        }
        int64_t ax = a % s->nx, ay = a / s->nx;
        int64_t dx = (int64_t)(b % s->nx) - ax, dy = (int64_t)(b / s->nx) - ay;
        int64_t m = llabs(dx) > llabs(dy) ? llabs(dx) : llabs(dy);
        if (m < 1)
            m = 1;
        const double ha = s->t->sp_h[sp[k - 1]], hb = s->t->sp_h[sp[k]];
        for (int64_t i = 1; i <= m; i++) {
            uint32_t c, spn;
            if (i == m) {
                c = b;
                spn = sp[k];
            } else {
                int64_t x = ax + (int64_t)rint((double)dx * (double)i / (double)m);
                int64_t y = ay + (int64_t)rint((double)dy * (double)i / (double)m);
                c = (uint32_t)(y * s->nx + x);
                spn = nearest_span(s, c, ha + (hb - ha) * (double)i / (double)m);
            }
            out->cell[o] = c;
            out->span[o] = spn;
            out->h[o] = spn != NM_SEARCH_NONE ? s->t->sp_h[spn] : (float)ha;
            out->link[o++] = 0;
        }
    }
    out->n = o;
    return NM_OK;
}
