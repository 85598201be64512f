/* post_run.c — routeWindow's post-processing chain (design article 后处理): pull, splice, search
 * heights, lift, heights along, clearance, drop margins and waypoints, each timed, with the view
 * of each pull input (拉直的输入: vis_geo, blockers + layers, blockers only). */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime for the stage times */
#endif
#include "post.h"

#include <math.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void nm_post_output_free(nm_post_output *out)
{
    if (!out)
        return;
    nm_free(out->xy);
    nm_free(out->hsearch);
    nm_free(out->halong);
    nm_free(out->hroute);
    nm_free(out->clr);
    nm_free(out->drops);
    nm_free(out->waypoints);
    nm_free(out->pulled_xy);
    nm_free(out->spliced_xy);
    nm_free(out->link);
    memset(out, 0, sizeof *out);
}

bool nm_post_vis_points_links(void *ctx, uint32_t i, uint32_t j)
{
    nm_post_link_vis *lv = ctx;
    if (lv->next_link && j >= lv->next_link[i])
        return false;
    return nm_post_vis_points(&lv->pv, i, j);
}

void nm_post_next_links(const uint8_t *link, uint32_t n, uint32_t *next_link)
{
    uint32_t nl = n;
    for (uint32_t k = n; k-- > 0;) {
        next_link[k] = nl;
        if (link[k]) nl = k;
    }
}

/* One piece of the route between off-mesh links, run as a leg of its own: its ends are the raw
 * endpoints or the link ends, its pull input is the input range [i0, i1]. Outputs are written at
 * out->n on; indices (drops, waypoints) are made absolute. */
typedef struct piece {
    double sx, sy, gx, gy;   /* ends: raw endpoints or link ends */
    float h_start;           /* start height: the leg's, or the input height at the landing */
    uint32_t i0, i1;         /* pull input range */
    const double *pulled;    /* the piece's pulled points */
    uint32_t np;
} piece;

typedef struct piece_state {
    bool hsearch_ok, halong_ok, hroute_ok;
    float *scratch;
} piece_state;

static int run_piece(const nm_post_input *in, const piece *pc, nm_post_output *out, piece_state *st,
                     nm_error *err)
{
    const bool heights = in->kind != NM_POST_CELL_PATH;
    const uint32_t o = out->n;
    double *xy = out->xy + 2 * (size_t)o;
    /* 端点拼接 */
    const double t2 = now_ms();
    const uint32_t m = nm_post_splice(pc->sx, pc->sy, pc->pulled, pc->np, pc->gx, pc->gy,
                                      in->kind == NM_POST_PARENT_CHAIN, xy);
    if (out->spliced_xy) { /* diagnostics: the route before lifting */
        memcpy(out->spliced_xy + 2 * (size_t)o, xy, (size_t)m * 2 * sizeof *xy);
        out->nspliced = o + m;
    }
    out->ms_splice += now_ms() - t2;
    float *hs = heights ? out->hsearch + o : NULL, *ha = heights ? out->halong + o : NULL;
    float *clr = out->clr + o;
    /* 对回搜索面高 */
    bool hs_ok = heights && nm_post_match_heights(xy, m, in->xy + 2 * (size_t)pc->i0, in->h + pc->i0,
                                                  pc->i1 - pc->i0 + 1, hs);
    /* 拐点抬升: only with layer continuity and at least 3 points */
    const double t3 = now_ms();
    if (heights && m >= 3) {
        nm_sight_view hard = {in->w, in->blk, NULL, in->oracle, true, true};
        bool lift_ok = true;
        out->lifted += nm_post_lift_corners(in->w, &hard, in->oracle, xy, m, pc->h_start,
                                            hs_ok ? hs : NULL, &lift_ok);
        if (!lift_ok) hs_ok = false;
    }
    out->ms_lift += now_ms() - t3;
    /* 逐点高度 and 净空 */
    bool ha_ok = heights && nm_post_heights_along(in->oracle, xy, m, pc->h_start, ha, st->scratch);
    nm_post_clearance(in->w, xy, m, clr);
    /* 落点留余量 */
    uint32_t nd = 0;
    if (in->oracle) {
        int rc = nm_post_drop_margins(in->w, in->oracle, xy, m, in->scale_x, pc->h_start,
                                      hs_ok ? hs : NULL, ha_ok ? ha : NULL, clr,
                                      out->drops + out->ndrops, &nd, err);
        if (rc != NM_OK) return rc;
    }
    /* 路点: the pull's blockers and route mask. No waypoints only without the height-continuity
     * check (the cell-level input). The drivable test's anchor height: the heights along the
     * route, else the search heights (a drop breaks the first column), else none (NAN). */
    nm_sight_view wv = {in->w, in->blk, in->tm, NULL, false, false};
    const float *hanchor = ha_ok ? ha : hs_ok ? hs : NULL;
    float *hnone = NULL;
    if (heights && !hanchor) {
        hnone = nm_malloc((size_t)m * sizeof *hnone + 1);
        if (!hnone) return nm_fail(err, NM_ERR_NOMEM, "post-processing: route of %u points", m);
        for (uint32_t k = 0; k < m; ++k)
            hnone[k] = NAN;
        hanchor = hnone;
    }
    uint32_t *wp = out->waypoints + out->nwaypoints;
    if (o > 0 && heights) wp[0] = 0; /* the link landing is a waypoint of its own */
    uint32_t skip = o > 0 && heights ? 1 : 0;
    uint32_t nw = nm_post_pull_waypoints(xy, m, clr, heights ? hanchor : NULL, out->drops + out->ndrops, nd,
                                         in->drivable, in->drivable_ctx, &wv, wp + skip);
    nm_free(hnone);
    /* the column every ok route carries: the search heights, else the drop-permitting walk held
     * to the search's surfaces (never breaking at a ledge), else the heights along */
    if (out->hroute) {
        float *hr = out->hroute + o;
        bool ok = true;
        if (hs_ok) memcpy(hr, hs, (size_t)m * sizeof *hr);
        else if (heights && nm_post_heights_walk(in->oracle, xy, m, pc->h_start, in->xy + 2 * (size_t)pc->i0,
                                                 in->h + pc->i0, pc->i1 - pc->i0 + 1, hr, st->scratch)) {
        } else if (ha_ok) memcpy(hr, ha, (size_t)m * sizeof *hr);
        else ok = false;
        st->hroute_ok = st->hroute_ok && ok;
    }
    for (uint32_t k = 0; k < nd; ++k) out->drops[out->ndrops + k].index += o;
    for (uint32_t k = 0; k < nw + skip; ++k) wp[k] += o;
    out->ndrops += nd;
    out->nwaypoints += nw + skip;
    st->hsearch_ok = st->hsearch_ok && hs_ok;
    st->halong_ok = st->halong_ok && ha_ok;
    out->n = o + m;
    return NM_OK;
}

/* 后处理. Off-mesh links cut the route into pieces, each post-processed as a leg of its own
 * between the link ends (拉直 never pulls across a link: 离网连接段不展开, no ground between
 * its ends); out->link marks the points reached over a link. Without links: one piece. */
int nm_post_run(const nm_post_input *in, nm_post_output *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!in || !in->w || !in->xy || in->n == 0)
        return nm_fail(err, NM_ERR_ARG, "post-processing: empty pull input");
    if (in->kind != NM_POST_CELL_PATH && (!in->h || !in->oracle))
        return nm_fail(err, NM_ERR_ARG, "post-processing: pull input without heights");
    const double t0 = now_ms();
    const uint32_t n = in->n;
    const bool heights = in->kind != NM_POST_CELL_PATH;
    uint32_t nlinks = 0;
    for (uint32_t k = 1; in->link && k < n; ++k)
        nlinks += in->link[k] != 0;
    uint32_t *keep = nm_malloc((size_t)n * sizeof *keep);
    uint32_t *next_link = nlinks ? nm_malloc((size_t)n * sizeof *next_link) : NULL;
    double *pulled = nm_malloc(((size_t)n + 2) * 2 * sizeof *pulled);
    const size_t cap = (size_t)n + 2 * ((size_t)nlinks + 1); /* each piece adds up to two ends */
    out->xy = nm_malloc(cap * 2 * sizeof *out->xy);
    if (!keep || !pulled || !out->xy || (nlinks && !next_link)) {
        nm_free(keep);
        nm_free(next_link);
        nm_free(pulled);
        nm_post_output_free(out);
        return nm_fail(err, NM_ERR_NOMEM, "post-processing: %u points", n);
    }
    if (next_link) nm_post_next_links(in->link, n, next_link);
    /* 拉直: the view of the pull input */
    nm_sight_view view = {in->w, in->blk, NULL, in->oracle, false, false};
    if (in->kind == NM_POST_PARENT_CHAIN) {
        view.on = in->tm;
        view.steps = true;
        view.layers = true;
    } else if (in->kind == NM_POST_SPAN_PATH) {
        view.layers = true;
    }
    nm_post_link_vis lv = {{&view, in->xy, heights ? in->h : NULL}, next_link};
    uint32_t nk = nm_post_string_pull(n, nm_post_vis_points_links, &lv, keep);
    nm_free(next_link);
    for (uint32_t k = 0; k < nk; ++k) {
        pulled[2 * k] = in->xy[2 * (size_t)keep[k]];
        pulled[2 * k + 1] = in->xy[2 * (size_t)keep[k] + 1];
    }
    out->pulled_xy = nm_malloc((size_t)nk * 2 * sizeof *out->pulled_xy);
    if (out->pulled_xy) { /* diagnostics only: skipped when memory is short */
        memcpy(out->pulled_xy, pulled, (size_t)nk * 2 * sizeof *pulled);
        out->npulled = nk;
    }
    const double t1 = now_ms();
    out->ms_pull = t1 - t0;
    out->clr = nm_malloc(cap * sizeof *out->clr + 1);
    out->drops = nm_malloc(cap * sizeof *out->drops + 1);
    out->waypoints = nm_malloc(cap * sizeof *out->waypoints + 1);
    out->link = nlinks ? nm_calloc(cap, 1) : NULL;
    out->spliced_xy = nm_malloc(cap * 2 * sizeof *out->spliced_xy); /* diagnostics: may be NULL */
    if (heights) {
        out->hsearch = nm_malloc(cap * sizeof *out->hsearch);
        out->halong = nm_malloc(cap * sizeof *out->halong);
    }
    if (in->oracle) out->hroute = nm_malloc(cap * sizeof *out->hroute);
    piece_state st = {true, true, true, NULL};
    st.scratch = in->oracle ? nm_malloc((size_t)in->oracle->cap * sizeof *st.scratch + 1) : NULL;
    int rc = NM_OK;
    if (!out->clr || !out->drops || !out->waypoints || (nlinks && !out->link) ||
        (heights && (!out->hsearch || !out->halong)) || (in->oracle && (!st.scratch || !out->hroute))) {
        rc = nm_fail(err, NM_ERR_NOMEM, "post-processing: route of %u points", n);
        goto done;
    }
    /* the pieces: kept point b reached over a link ends a piece at b - 1 (both kept) */
    uint32_t a = 0; /* first kept point of the piece */
    for (uint32_t b = 1; b <= nk && rc == NM_OK; ++b) {
        if (b < nk && !(in->link && in->link[keep[b]])) continue;
        piece pc;
        pc.i0 = keep[a];
        pc.i1 = keep[b - 1];
        pc.h_start = a == 0 || !heights ? in->h_start : in->h[pc.i0];
        pc.sx = a == 0 ? in->sx : pulled[2 * a];
        pc.sy = a == 0 ? in->sy : pulled[2 * a + 1];
        pc.gx = b == nk ? in->gx : pulled[2 * (b - 1)];
        pc.gy = b == nk ? in->gy : pulled[2 * (b - 1) + 1];
        pc.pulled = pulled + 2 * (size_t)a;
        pc.np = b - a;
        if (out->link && out->n > 0) out->link[out->n] = 1;
        rc = run_piece(in, &pc, out, &st, err);
        a = b;
    }
    if (rc != NM_OK) goto done;
    if (heights && !st.hsearch_ok) {
        nm_free(out->hsearch);
        out->hsearch = NULL;
    }
    if (heights && !st.halong_ok) {
        nm_free(out->halong);
        out->halong = NULL;
    }
    if (out->hroute && !st.hroute_ok) {
        nm_free(out->hroute);
        out->hroute = NULL;
    }
    out->ms_total = now_ms() - t0;
done:
    nm_free(keep);
    nm_free(pulled);
    nm_free(st.scratch);
    if (rc != NM_OK) nm_post_output_free(out);
    return rc;
}
