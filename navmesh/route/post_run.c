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
    nm_free(out->clr);
    nm_free(out->drops);
    nm_free(out->waypoints);
    nm_free(out->pulled_xy);
    nm_free(out->spliced_xy);
    memset(out, 0, sizeof *out);
}

/* 后处理 */
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
    uint32_t *keep = nm_malloc((size_t)n * sizeof *keep);
    double *pulled = nm_malloc(((size_t)n + 2) * 2 * sizeof *pulled);
    out->xy = nm_malloc(((size_t)n + 2) * 2 * sizeof *out->xy);
    if (!keep || !pulled || !out->xy) {
        nm_free(keep);
        nm_free(pulled);
        nm_post_output_free(out);
        return nm_fail(err, NM_ERR_NOMEM, "post-processing: %u points", n);
    }
    /* 拉直: the view of the pull input */
    nm_sight_view view = {in->w, in->blk, NULL, in->oracle, false, false};
    if (in->kind == NM_POST_PARENT_CHAIN) {
        view.on = in->tm;
        view.steps = true;
        view.layers = true;
    } else if (in->kind == NM_POST_SPAN_PATH) {
        view.layers = true;
    }
    nm_post_points_vis pv = {&view, in->xy, heights ? in->h : NULL};
    uint32_t nk = nm_post_string_pull(n, nm_post_vis_points, &pv, keep);
    for (uint32_t k = 0; k < nk; ++k) {
        pulled[2 * k] = in->xy[2 * (size_t)keep[k]];
        pulled[2 * k + 1] = in->xy[2 * (size_t)keep[k] + 1];
    }
    nm_free(keep);
    out->pulled_xy = nm_malloc((size_t)nk * 2 * sizeof *out->pulled_xy);
    if (out->pulled_xy) { /* diagnostics only: skipped when memory is short */
        memcpy(out->pulled_xy, pulled, (size_t)nk * 2 * sizeof *pulled);
        out->npulled = nk;
    }
    const double t1 = now_ms();
    out->ms_pull = t1 - t0;
    /* 端点拼接 */
    out->n = nm_post_splice(in->sx, in->sy, pulled, nk, in->gx, in->gy,
                            in->kind == NM_POST_PARENT_CHAIN, out->xy);
    nm_free(pulled);
    out->spliced_xy = nm_malloc((size_t)out->n * 2 * sizeof *out->spliced_xy);
    if (out->spliced_xy) {
        memcpy(out->spliced_xy, out->xy, (size_t)out->n * 2 * sizeof *out->xy);
        out->nspliced = out->n;
    }
    const double t2 = now_ms();
    out->ms_splice = t2 - t1;
    const uint32_t m = out->n;
    out->clr = nm_malloc((size_t)m * sizeof *out->clr + 1);
    out->drops = nm_malloc((size_t)m * sizeof *out->drops + 1);
    out->waypoints = nm_malloc((size_t)m * sizeof *out->waypoints + 1);
    if (heights) {
        out->hsearch = nm_malloc((size_t)m * sizeof *out->hsearch);
        out->halong = nm_malloc((size_t)m * sizeof *out->halong);
    }
    float *scratch = heights ? nm_malloc((size_t)in->oracle->cap * sizeof *scratch) : NULL;
    if (!out->clr || !out->drops || !out->waypoints ||
        (heights && (!out->hsearch || !out->halong || !scratch))) {
        nm_free(scratch);
        nm_post_output_free(out);
        return nm_fail(err, NM_ERR_NOMEM, "post-processing: route of %u points", m);
    }
    /* 对回搜索面高 */
    if (heights && !nm_post_match_heights(out->xy, m, in->xy, in->h, n, out->hsearch)) {
        nm_free(out->hsearch);
        out->hsearch = NULL;
    }
    /* 拐点抬升: only with layer continuity and at least 3 points */
    const double t3 = now_ms();
    if (heights && m >= 3) {
        nm_sight_view hard = {in->w, in->blk, NULL, in->oracle, true, true};
        bool hs_ok = true;
        out->lifted = nm_post_lift_corners(in->w, &hard, in->oracle, out->xy, m, in->h_start,
                                           out->hsearch, &hs_ok);
        if (!hs_ok) {
            nm_free(out->hsearch);
            out->hsearch = NULL;
        }
    }
    out->ms_lift = now_ms() - t3;
    /* 逐点高度 and 净空 */
    if (heights && !nm_post_heights_along(in->oracle, out->xy, m, in->h_start, out->halong, scratch)) {
        nm_free(out->halong);
        out->halong = NULL;
    }
    nm_free(scratch);
    nm_post_clearance(in->w, out->xy, m, out->clr);
    /* 落点留余量 */
    int rc = NM_OK;
    if (in->oracle)
        rc = nm_post_drop_margins(in->w, in->oracle, out->xy, m, in->scale_x, in->h_start,
                                  out->hsearch, out->halong, out->clr, out->drops, &out->ndrops,
                                  err);
    if (rc != NM_OK) {
        nm_post_output_free(out);
        return rc;
    }
    /* 路点: the pull's blockers and route mask */
    /* 路点 1: no waypoints only without the height-continuity check (the cell-level input). The
     * drivable test's anchor height: the heights along the route, else the search heights (a
     * drop breaks the first column), else none (NAN). */
    nm_sight_view wv = {in->w, in->blk, in->tm, NULL, false, false};
    const float *hanchor = out->halong ? out->halong : out->hsearch;
    float *hnone = NULL;
    if (heights && !hanchor) {
        hnone = nm_malloc((size_t)m * sizeof *hnone);
        if (!hnone) {
            nm_post_output_free(out);
            return nm_fail(err, NM_ERR_NOMEM, "post-processing: route of %u points", m);
        }
        for (uint32_t k = 0; k < m; ++k)
            hnone[k] = NAN;
        hanchor = hnone;
    }
    out->nwaypoints = nm_post_pull_waypoints(out->xy, m, out->clr, heights ? hanchor : NULL,
                                             out->drops, out->ndrops, in->drivable,
                                             in->drivable_ctx, &wv, out->waypoints);
    nm_free(hnone);
    out->ms_total = now_ms() - t0;
    return NM_OK;
}
