/* scc.c — strongly connected components of a directed graph and its condensation DAG (design
 * article 垂直可达判据 / 可达域: the per-region component numbers and component graph of the
 * sidecar). Tarjan's algorithm with an explicit stack, so deep graphs cannot overflow. */
#include "grid/grid.h"

#include <string.h>

void nm_scc_free(nm_scc *s)
{
    if (!s)
        return;
    nm_free(s->comp);
    nm_free(s->dag_off);
    nm_free(s->dag_adj);
    memset(s, 0, sizeof *s);
}

/* Stable counting sort of pairs by key (values 1..m), from (ka, kb) into (oa, ob). */
static void count_sort(const uint32_t *ka, const uint32_t *kb, uint32_t *oa, uint32_t *ob,
                       size_t n, uint32_t m, uint32_t *cnt, bool by_second)
{
    memset(cnt, 0, ((size_t)m + 2) * sizeof *cnt);
    const uint32_t *key = by_second ? kb : ka;
    for (size_t e = 0; e < n; e++)
        cnt[key[e] + 1]++;
    for (size_t v = 1; v < (size_t)m + 2; v++)
        cnt[v] += cnt[v - 1];
    for (size_t e = 0; e < n; e++) {
        uint32_t p = cnt[key[e]]++;
        oa[p] = ka[e];
        ob[p] = kb[e];
    }
}

int nm_grid_scc(const nm_graph *g, nm_scc *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!g || (g->n && (!g->off || (g->off[g->n] && !g->adj))))
        return nm_fail(err, NM_ERR_ARG, "SCC: missing graph");
    const uint32_t n = g->n;
    for (uint32_t v = 0; v < n; v++) {
        if (g->off[v] > g->off[v + 1])
            return nm_fail(err, NM_ERR_ARG, "SCC: node %u: edge offsets decrease", (unsigned)v);
    }
    size_t ne = n ? g->off[n] : 0;
    for (size_t e = 0; e < ne; e++)
        if (g->adj[e] >= n)
            return nm_fail(err, NM_ERR_ARG, "SCC: edge %zu: target %u >= %u nodes", e,
                           (unsigned)g->adj[e], (unsigned)n);
    size_t alloc = n ? n : 1;
    uint32_t *index = nm_malloc(alloc * sizeof *index); /* 0 = unvisited, else 1-based order */
    uint32_t *low = nm_malloc(alloc * sizeof *low);
    uint32_t *stack = nm_malloc(alloc * sizeof *stack);
    uint32_t *call = nm_malloc(alloc * sizeof *call); /* DFS path of nodes */
    uint32_t *pos = nm_malloc(alloc * sizeof *pos);   /* next edge of each node on the path */
    uint8_t *onstack = nm_calloc(alloc, 1);
    out->comp = nm_calloc(alloc, sizeof *out->comp);
    int rc = NM_OK;
    if (!index || !low || !stack || !call || !pos || !onstack || !out->comp) {
        rc = nm_fail(err, NM_ERR_NOMEM, "SCC: %u nodes", (unsigned)n);
        goto done;
    }
    memset(index, 0, alloc * sizeof *index);
    uint32_t counter = 0, sp = 0, ncomp = 0;
    for (uint32_t root = 0; root < n; root++) {
        if (index[root])
            continue;
        uint32_t depth = 0;
        call[depth++] = root;
        index[root] = low[root] = ++counter;
        pos[root] = g->off[root];
        stack[sp++] = root;
        onstack[root] = 1;
        while (depth) {
            uint32_t v = call[depth - 1];
            if (pos[v] < g->off[v + 1]) {
                uint32_t w = g->adj[pos[v]++];
                if (!index[w]) {
                    index[w] = low[w] = ++counter;
                    pos[w] = g->off[w];
                    stack[sp++] = w;
                    onstack[w] = 1;
                    call[depth++] = w;
                } else if (onstack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            /* v is finished: pop its component if it is a root, then return to the parent. */
            if (low[v] == index[v]) {
                ncomp++;
                uint32_t w;
                do {
                    w = stack[--sp];
                    onstack[w] = 0;
                    out->comp[w] = ncomp; /* provisional, renumbered below */
                } while (w != v);
            }
            depth--;
            if (depth) {
                uint32_t u = call[depth - 1];
                if (low[v] < low[u])
                    low[u] = low[v];
            }
        }
    }
    /* Renumber components in order of their smallest node (independent of traversal details). */
    {
        uint32_t *map = index; /* reuse: provisional id -> final id */
        memset(map, 0, alloc * sizeof *map);
        uint32_t next = 0;
        for (uint32_t v = 0; v < n; v++) {
            uint32_t p = out->comp[v] - 1;
            if (!map[p])
                map[p] = ++next;
            out->comp[v] = map[p];
        }
    }
    out->n = n;
    out->ncomp = ncomp;
    /* Condensation: edges between different components, sorted by (src, dst), unique. */
    {
        size_t m = 0;
        for (uint32_t v = 0; v < n; v++)
            for (uint32_t e = g->off[v]; e < g->off[v + 1]; e++)
                if (out->comp[v] != out->comp[g->adj[e]])
                    m++;
        size_t am = m ? m : 1;
        uint32_t *a = nm_malloc(am * sizeof *a), *b = nm_malloc(am * sizeof *b);
        uint32_t *a2 = nm_malloc(am * sizeof *a2), *b2 = nm_malloc(am * sizeof *b2);
        uint32_t *cnt = nm_malloc(((size_t)ncomp + 2) * sizeof *cnt);
        out->dag_off = nm_calloc((size_t)ncomp + 1, sizeof *out->dag_off);
        if (!a || !b || !a2 || !b2 || !cnt || !out->dag_off) {
            nm_free(a), nm_free(b), nm_free(a2), nm_free(b2), nm_free(cnt);
            rc = nm_fail(err, NM_ERR_NOMEM, "SCC: %zu condensation edges", m);
            goto done;
        }
        size_t k = 0;
        for (uint32_t v = 0; v < n; v++)
            for (uint32_t e = g->off[v]; e < g->off[v + 1]; e++)
                if (out->comp[v] != out->comp[g->adj[e]]) {
                    a[k] = out->comp[v];
                    b[k] = out->comp[g->adj[e]];
                    k++;
                }
        count_sort(a, b, a2, b2, m, ncomp, cnt, true);  /* by dst */
        count_sort(a2, b2, a, b, m, ncomp, cnt, false); /* then stably by src */
        size_t u = 0;
        for (size_t e = 0; e < m; e++)
            if (!u || a[e] != a[u - 1] || b[e] != b[u - 1]) {
                a[u] = a[e];
                b[u] = b[e];
                u++;
            }
        for (size_t e = 0; e < u; e++)
            out->dag_off[a[e]]++; /* a is 1-based: counts land one slot late, ready for prefix */
        for (uint32_t c = 1; c <= ncomp; c++)
            out->dag_off[c] += out->dag_off[c - 1];
        out->dag_adj = b;
        b = NULL;
        nm_free(a), nm_free(a2), nm_free(b2), nm_free(cnt);
    }
done:
    nm_free(index);
    nm_free(low);
    nm_free(stack);
    nm_free(call);
    nm_free(pos);
    nm_free(onstack);
    if (rc)
        nm_scc_free(out);
    return rc;
}
