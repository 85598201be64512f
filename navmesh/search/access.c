/* access.c — the endpoint access chains (两段搜索 / 端点接入) and the link access chains
 * (linkChains): Dijkstra on cw3 with integer chamfer costs 100 / 141, ties on cost, bottleneck
 * (minimum clearance on the path, start included, higher first), cell number and predecessor, to
 * the first cell of the target set. No step bits, RiseOk or corner rule: the chain only decides
 * which cells join the mask; the span search judges them. */
#include "search/search_internal.h"

#include <string.h>

enum { ACC_DONE = 1, ACC_SEEN = 2 }; /* nm_access_work.done bits */

int nm_search_access_init(nm_access_work *a, uint32_t ncell, nm_error *err)
{
    memset(a, 0, sizeof *a);
    /* a run touches the cells around one end: sparse arrays (small pages, zeros untouched) */
    a->cost = nm_sparse_calloc(ncell, sizeof *a->cost);
    a->bott = nm_sparse_calloc(ncell, sizeof *a->bott);
    a->prev = nm_sparse_calloc(ncell, sizeof *a->prev);
    a->done = nm_sparse_calloc(ncell, 1);
    a->touched = nm_sparse_calloc(ncell, sizeof *a->touched);
    const int hrc = nm_search_heap_reserve(&a->heap, 1024, NULL);
    if (!a->cost || !a->bott || !a->prev || !a->done || !a->touched || hrc) {
        nm_search_access_free(a);
        return nm_fail(err, NM_ERR_NOMEM, "search: access: %u cells: out of memory", ncell);
    }
    return NM_OK; /* cost, bott, prev are read only for seen cells: never cleared */
}

void nm_search_access_free(nm_access_work *a)
{
    nm_sparse_free(a->cost);
    nm_sparse_free(a->bott);
    nm_sparse_free(a->prev);
    nm_sparse_free(a->done);
    nm_sparse_free(a->touched);
    nm_search_heap_free(&a->heap);
    memset(a, 0, sizeof *a);
}

/* Heap tie-break after the cost: higher bottleneck first (non-negative float bits are ordered),
 * then the smaller cell. */
static uint64_t access_key(float b, uint32_t c)
{
    uint32_t bits;
    if (!(b > 0.0F))
        b = 0.0F;
    memcpy(&bits, &b, sizeof bits);
    return ((uint64_t)(UINT32_MAX - bits) << 32) | c;
}

static void access_reset(nm_access_work *a)
{
    for (uint32_t k = 0; k < a->ntouched; k++) {
        a->done[a->touched[k]] = 0;
    }
    a->ntouched = 0;
    a->heap.n = 0;
}

int nm_search_access_run(nm_access_work *a, const nm_window *w, const uint8_t *walk,
                         const uint8_t *target, uint32_t from, int32_t max_cost, uint32_t **cells,
                         uint32_t *n, int32_t *cost, nm_error *err)
{
    static const int dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
    static const int dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
    const int64_t nx = w->win.nx, ny = w->win.ny;
    *cells = NULL;
    *n = 0;
    *cost = 0;
    access_reset(a);
    a->cost[from] = 0;
    a->done[from] = ACC_SEEN;
    a->bott[from] = w->dist[from];
    a->prev[from] = NM_SEARCH_NONE;
    a->touched[a->ntouched++] = from;
    int rc = nm_search_heap_push(&a->heap, 0.0, access_key(a->bott[from], from), err);
    if (rc)
        return rc;
    uint32_t hit = NM_SEARCH_NONE;
    while (a->heap.n) {
        nm_heap_item it = nm_search_heap_pop(&a->heap);
        const uint32_t u = (uint32_t)it.key; /* the cell: the key's low half */
        if ((a->done[u] & ACC_DONE) || (int32_t)it.f != a->cost[u] ||
            it.key != access_key(a->bott[u], u))
            continue;
        if (max_cost > 0 && a->cost[u] >= max_cost)
            break; /* linkChains: at most kLinkChainCells cells */
        a->done[u] |= ACC_DONE;
        if (target[u]) {
            hit = u;
            break;
        }
        const int64_t ui = u % nx, uj = u / nx;
        for (int d = 0; d < 8; d++) {
            int64_t vi = ui + dx[d], vj = uj + dy[d];
            if (vi < 0 || vj < 0 || vi >= nx || vj >= ny)
                continue;
            uint32_t v = (uint32_t)(vj * nx + vi);
            if ((a->done[v] & ACC_DONE) || !walk[v] || !nm_search_cell_usable(w, v))
                continue;
            int32_t kc = a->cost[u] + ((dx[d] && dy[d]) ? 141 : 100);
            float kb = a->bott[u] < w->dist[v] ? a->bott[u] : w->dist[v];
            bool better;
            if (!(a->done[v] & ACC_SEEN)) {
                better = true;
                a->done[v] = ACC_SEEN;
                a->touched[a->ntouched++] = v;
            } else {
                better =
                    kc < a->cost[v] ||
                    (kc == a->cost[v] && (kb > a->bott[v] || (kb == a->bott[v] && u < a->prev[v])));
            }
            if (!better)
                continue;
            a->cost[v] = kc;
            a->bott[v] = kb;
            a->prev[v] = u;
            if ((rc = nm_search_heap_push(&a->heap, (double)kc, access_key(kb, v), err)))
                return rc;
        }
    }
    if (hit == NM_SEARCH_NONE)
        return 0;
    uint32_t len = 0;
    for (uint32_t c = hit; c != NM_SEARCH_NONE; c = a->prev[c])
        len++;
    uint32_t *out = nm_malloc((size_t)len * sizeof *out);
    if (!out)
        return nm_fail(err, NM_ERR_NOMEM, "search: access chain of %u cells: out of memory", len);
    uint32_t i = len;
    for (uint32_t c = hit; c != NM_SEARCH_NONE; c = a->prev[c])
        out[--i] = c;
    *cells = out;
    *n = len;
    *cost = a->cost[hit];
    return 1;
}

int nm_search_access(const nm_window *w, const uint8_t *walk, const uint8_t *target, uint32_t from,
                     int32_t max_cost, uint32_t **cells, uint32_t *n, int32_t *cost, nm_error *err)
{
    if (!w || !walk || !target || !w->dist || w->win.nx <= 0 || w->win.ny <= 0)
        return nm_fail(err, NM_ERR_ARG, "search: access: missing window layers");
    uint32_t ncell = (uint32_t)w->win.nx * (uint32_t)w->win.ny;
    if (from >= ncell)
        return nm_fail(err, NM_ERR_ARG, "search: access: start cell %u outside the window", from);
    nm_access_work a;
    int rc = nm_search_access_init(&a, ncell, err);
    if (rc)
        return rc;
    rc = nm_search_access_run(&a, w, walk, target, from, max_cost, cells, n, cost, err);
    nm_search_access_free(&a);
    return rc;
}
