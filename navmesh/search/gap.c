/* gap.c — the gap location of a failed leg (诊断 / 断开处的定位): a forward flood from the start
 * span and a reverse flood into the goal spans on the core mask under the search's own edge
 * rules, a two-pass chamfer distance field (100 / 141) from the cells the reverse flood covers,
 * and the nearest pair: the forward cell with the smallest distance, ties to the smaller cell. */
#include "search/search_internal.h"

#include <math.h>
#include <string.h>

enum { RA = 1, RB = 2 };

static const int k_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
static const int k_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};

/* One flood; reverse = follow the edges backwards (drops are one-way). */
static void flood(nm_sctx *s, const nm_mask *m, uint32_t *queue, const uint32_t *seeds,
                  uint32_t nseed, uint8_t bit, bool reverse, const uint32_t *rl_off,
                  const uint32_t *rl_idx)
{
    const nm_span_table *t = s->t;
    uint32_t head = 0, tail = 0;
    for (uint32_t k = 0; k < nseed; k++)
        if (!(s->node[seeds[k]].state & bit)) {
            s->node[seeds[k]].state |= bit;
            queue[tail++] = seeds[k];
        }
    while (head < tail) {
        uint32_t u = queue[head++], uc = t->sp_cell[u];
        int64_t ui = uc % s->nx, uj = uc / s->nx;
        for (int d = 0; d < 8; d++) {
            int64_t vi = ui + k_dx[d], vj = uj + k_dy[d];
            if (vi < 0 || vj < 0 || vi >= s->nx || vj >= s->ny)
                continue;
            uint32_t vc = (uint32_t)(vj * s->nx + vi), f, n = nm_span_cell_spans(t, vc, &f);
            for (uint32_t v = f; v < f + n; v++) {
                if (s->node[v].state & bit)
                    continue;
                bool ok = reverse ? (nm_mask_in(m, uc) &&
                                     nm_search_edge_ok(s, m, v, -k_dx[d], -k_dy[d], u))
                                  : nm_search_edge_ok(s, m, u, k_dx[d], k_dy[d], v);
                if (ok && (s->w->sp_bits[v] & NM_SP_REACH) && nm_mask_in(m, vc)) {
                    s->node[v].state |= bit;
                    queue[tail++] = v;
                }
            }
        }
        if (!reverse) {
            uint32_t lend;
            for (uint32_t l = nm_search_key_run(s->lk_from, s->w->nlinks, u, &lend); l < lend; l++) {
                const nm_window_link *lk = &s->w->links[s->lk_idx[l]];
                if (!(s->node[lk->to_span].state & bit) && nm_mask_in(m, lk->to_cell)) {
                    s->node[lk->to_span].state |= bit;
                    queue[tail++] = lk->to_span;
                }
            }
        } else {
            for (uint32_t l = rl_off[u]; l < rl_off[u + 1]; l++) {
                const nm_window_link *lk = &s->w->links[rl_idx[l]];
                if (!(s->node[lk->from_span].state & bit) && nm_mask_in(m, lk->from_cell)) {
                    s->node[lk->from_span].state |= bit;
                    queue[tail++] = lk->from_span;
                }
            }
        }
    }
}

int nm_search_locate_gap_ctx(nm_sctx *s, uint32_t start_span, const uint32_t *goals, uint32_t ngoal,
                             uint32_t *cell_a, uint32_t *cell_b, double *dist_px, nm_error *err)
{
    const nm_window *w = s->w;
    if (start_span >= s->nspans || !ngoal || !(w->sp_bits[start_span] & NM_SP_REACH))
        return 0;
    uint32_t *queue = nm_malloc(((size_t)s->nspans + 1) * sizeof *queue);
    uint32_t *rl_off = nm_calloc((size_t)s->nspans + 1, sizeof *rl_off);
    uint32_t *rl_idx = nm_malloc(((size_t)w->nlinks + 1) * sizeof *rl_idx);
    int32_t *d = nm_malloc((size_t)s->ncell * sizeof *d);
    uint32_t *src = nm_malloc((size_t)s->ncell * sizeof *src);
    int rc = 0;
    if (!queue || !rl_off || !rl_idx || !d || !src) {
        rc = nm_fail(err, NM_ERR_NOMEM, "search: gap location: out of memory");
        goto done;
    }
    /* reverse link table (by to_span) */
    for (uint32_t l = 0; l < w->nlinks; l++)
        rl_off[w->links[l].to_span + 1]++;
    for (uint32_t k = 0; k < s->nspans; k++)
        rl_off[k + 1] += rl_off[k];
    for (uint32_t l = 0; l < w->nlinks; l++)
        rl_idx[rl_off[w->links[l].to_span]++] = l;
    for (uint32_t k = s->nspans; k > 0; k--)
        rl_off[k] = rl_off[k - 1];
    rl_off[0] = 0;

    const nm_mask core = {w->core, NULL}; /* the widest walkable mask */
    for (uint32_t k = 0; k < s->nspans; k++)
        s->node[k].state = 0;
    uint32_t gl[16], ng = 0;
    for (uint32_t k = 0; k < ngoal && ng < 16; k++)
        if (goals[k] < s->nspans && (w->sp_bits[goals[k]] & NM_SP_REACH))
            gl[ng++] = goals[k];
    if (!ng)
        goto done;
    flood(s, &core, queue, &start_span, 1, RA, false, rl_off, rl_idx);
    flood(s, &core, queue, gl, ng, RB, true, rl_off, rl_idx);

    /* chamfer distance field from the rb cells; walls and every cell take part */
    for (uint32_t c = 0; c < s->ncell; c++) {
        d[c] = INT32_MAX;
        src[c] = NM_SEARCH_NONE;
    }
    for (uint32_t k = 0; k < s->nspans; k++)
        if (s->node[k].state & RB) {
            uint32_t c = s->t->sp_cell[k];
            d[c] = 0;
            src[c] = c;
        }
    static const int p1x[4] = {-1, 0, 1, -1}, p1y[4] = {-1, -1, -1, 0};
    for (int pass = 0; pass < 2; pass++) {
        int sg = pass == 0 ? 1 : -1;
        for (uint32_t q = 0; q < s->ncell; q++) {
            uint32_t c = pass == 0 ? q : s->ncell - 1 - q;
            int64_t ci = c % s->nx, cj = c / s->nx;
            for (int k = 0; k < 4; k++) {
                int64_t bi = ci + sg * p1x[k], bj = cj + sg * p1y[k];
                if (bi < 0 || bj < 0 || bi >= s->nx || bj >= s->ny)
                    continue;
                uint32_t b = (uint32_t)(bj * s->nx + bi);
                if (d[b] == INT32_MAX)
                    continue;
                int32_t nd = d[b] + ((p1x[k] && p1y[k]) ? 141 : 100);
                if (nd < d[c]) {
                    d[c] = nd;
                    src[c] = src[b];
                }
            }
        }
    }
    uint32_t best = NM_SEARCH_NONE;
    for (uint32_t k = 0; k < s->nspans; k++) {
        if (!(s->node[k].state & RA))
            continue;
        uint32_t c = s->t->sp_cell[k];
        if (d[c] == INT32_MAX)
            continue;
        if (best == NM_SEARCH_NONE || d[c] < d[best] || (d[c] == d[best] && c < best))
            best = c;
    }
    if (best == NM_SEARCH_NONE)
        goto done;
    *cell_a = best;
    *cell_b = src[best];
    {
        double ex = ((double)(best % s->nx) - (double)(src[best] % s->nx)) * NM_kCS;
        double ey = ((double)(best / s->nx) - (double)(src[best] / s->nx)) * NM_kCS;
        *dist_px = nm_hypot(ex, ey);
    }
    rc = 1;
done:
    nm_free(queue);
    nm_free(rl_off);
    nm_free(rl_idx);
    nm_free(d);
    nm_free(src);
    return rc;
}

int nm_search_locate_gap(const nm_window *w, uint32_t start_span, const uint32_t *goals,
                         uint32_t ngoal, uint32_t *cell_a, uint32_t *cell_b, double *dist_px,
                         nm_error *err)
{
    nm_sctx s;
    int rc = nm_search_ctx_init(&s, w, 1, err);
    if (rc)
        return rc;
    rc = nm_search_locate_gap_ctx(&s, start_span, goals, ngoal, cell_a, cell_b, dist_px, err);
    nm_search_ctx_free(&s);
    return rc;
}
