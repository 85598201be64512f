/* plugin_plan.c — plan through the struct ABI (输入与输出): checks the request, runs the planner
 * under the engine's lock, copies everything the host may read into one plugin-owned result (no
 * pointer into engine memory), and builds the RUN waypoints by the host rule (host.md). */
#include "plugin_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The result box: the public struct first, then the arrays it points into. */
typedef struct result_box {
    nm_plugin_result pub;
    char error[512];
    char tier_notes[1024];
    double *xy, *heights, *clearance;
    uint32_t *waypoints;
    nm_plugin_drop *drops;
    char *warn_text;
    char **warn;
    nm_plugin_run *run;
    double *dbg_xy[4], *dbg_h[4];
} result_box;

static bool height_ok(double h) { return isfinite(h) || h <= NM_PLUGIN_VALID_MIN; }

int nm_plugin_check_request(const nm_plugin_request *q)
{
    if (!q) return nm_plugin_fail(NM_ERR_ARG, "request: missing");
    if (!isfinite(q->start_x) || !isfinite(q->start_y))
        return nm_plugin_fail(NM_ERR_ARG, "request: start (%g, %g) is not a finite point", q->start_x, q->start_y);
    if (!isfinite(q->goal_x) || !isfinite(q->goal_y))
        return nm_plugin_fail(NM_ERR_ARG, "request: goal (%g, %g) is not a finite point", q->goal_x, q->goal_y);
    const double hs[4] = {q->start_floor_y, q->goal_floor_y, q->goal_deck_y, q->start_deck_y};
    static const char *const hn[4] = {"start_floor_y", "goal_floor_y", "goal_deck_y", "start_deck_y"};
    for (int i = 0; i < 4; i++)
        if (!height_ok(hs[i]) || isnan(hs[i]))
            return nm_plugin_fail(NM_ERR_ARG, "request: %s = %g is neither a finite height nor absent", hn[i], hs[i]);
    if (q->n_no_go_discs && !q->no_go_discs)
        return nm_plugin_fail(NM_ERR_ARG, "request: %u no-go discs announced, none given", q->n_no_go_discs);
    for (uint32_t i = 0; i < q->n_no_go_discs; i++) {
        const nm_plugin_disc *d = &q->no_go_discs[i];
        if (!isfinite(d->x) || !isfinite(d->y))
            return nm_plugin_fail(NM_ERR_ARG, "request: no-go disc %u: centre is not finite", i);
        if (!isfinite(d->radius) || d->radius < 0)
            return nm_plugin_fail(NM_ERR_ARG, "request: no-go disc %u: radius %g must be finite and >= 0", i, d->radius);
    }
    return NM_OK;
}

/* The host's callback behind the planner's bool callback; remembers that it fired. */
typedef struct stop_adapter {
    nm_plugin_stop_fn fn;
    void *ctx;
    bool fired;
} stop_adapter;

static bool stop_thunk(void *ctx)
{
    stop_adapter *a = (stop_adapter *)ctx;
    if (a->fn && a->fn(a->ctx)) a->fired = true;
    return a->fired;
}

static void *dup_mem(const void *p, size_t n, bool *fail)
{
    if (!p || n == 0) return NULL;
    void *d = nm_malloc(n);
    if (!d) {
        *fail = true;
        return NULL;
    }
    memcpy(d, p, n);
    return d;
}

/* A height within 1e-9 of a whole number is that number: the noise (-1.1e-16 for a floor at 0)
 * comes from the zone transform and carries no information. Every height the result carries
 * (C struct and so JSON and the hosts' RUN lists) passes here. */
static double clean_height(double h)
{
    double r = nearbyint(h);
    return fabs(h - r) <= 1e-9 ? r + 0.0 : h; /* + 0.0: -0 prints as 0 */
}

static double f2d_height(float h) { return h > NM_kFloorYValidMin ? clean_height((double)h) : NM_PLUGIN_NONE; }

static void copy_points(const nm_route_points *s, nm_plugin_points *d, double **xy, double **h, bool *fail)
{
    d->n = 0;
    d->xy = d->heights = NULL;
    if (!s->xy || s->n == 0) return;
    *xy = (double *)dup_mem(s->xy, sizeof(double) * 2 * s->n, fail);
    if (s->heights) {
        *h = (double *)nm_malloc(sizeof(double) * s->n);
        if (!*h) *fail = true;
        else for (uint32_t i = 0; i < s->n; i++) (*h)[i] = f2d_height(s->heights[i]);
    }
    d->xy = *xy;
    d->heights = *h;
    d->n = *xy ? s->n : 0;
}

/* RUN waypoints (host.md): every waypoint index a non-strict RUN, the last strict; a drop landing
 * strict with its lower height and take-off point. Without waypoints from the planner every point
 * after the start is driven (no pull here: the plugin has no layer-free drivability test). */
static bool build_run(result_box *b, const nm_route_result *r)
{
    uint32_t n = r->nwaypoints;
    const uint32_t *idx = r->waypoints;
    uint32_t *all = NULL;
    if (n == 0 && r->npoints > 1) {
        all = (uint32_t *)nm_malloc(sizeof(uint32_t) * (r->npoints - 1));
        if (!all) return false;
        for (uint32_t i = 1; i < r->npoints; i++) all[i - 1] = i;
        n = r->npoints - 1;
        idx = all;
    }
    if (n == 0) return true;
    b->run = (nm_plugin_run *)nm_calloc(n, sizeof *b->run);
    if (!b->run) {
        nm_free(all);
        return false;
    }
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = idx[k];
        if (i >= r->npoints) continue;
        nm_plugin_run *w = &b->run[m++];
        w->x = r->xy[2 * i];
        w->y = r->xy[2 * i + 1];
        w->strict = i == r->npoints - 1;
        w->clearance = r->clearance ? (double)r->clearance[i] : 0.0;
        w->floor_y = r->heights ? f2d_height(r->heights[i]) : NM_PLUGIN_NONE;
        w->target_deck_y = NM_PLUGIN_NONE;
        for (uint32_t d = 0; d < r->ndrops; d++)
            if (r->drops[d].index == i) {
                w->strict = 1;
                w->target_deck_y = clean_height(r->drops[d].height);
                w->has_drop_from = 1;
                w->drop_from_x = r->drops[d].from_x;
                w->drop_from_y = r->drops[d].from_y;
            }
    }
    b->pub.n_run = m;
    b->pub.run = b->run;
    nm_free(all);
    return true;
}

static bool split_warnings(result_box *b, const char *text)
{
    if (!text[0]) return true;
    b->warn_text = (char *)dup_mem(text, strlen(text) + 1, &(bool){false});
    if (!b->warn_text) return false;
    uint32_t n = 1;
    for (const char *p = text; *p; p++) n += *p == '\n';
    b->warn = (char **)nm_calloc(n, sizeof(char *));
    if (!b->warn) return false;
    uint32_t m = 0;
    for (char *p = b->warn_text; p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        if (*p) b->warn[m++] = p;
        p = nl ? nl + 1 : NULL;
    }
    b->pub.warnings = (const char *const *)b->warn;
    b->pub.n_warnings = m;
    return true;
}

static bool copy_result(result_box *b, const nm_route_result *r)
{
    nm_plugin_result *p = &b->pub;
    bool fail = false;
    p->ok = r->ok;
    p->no_go = r->no_go;
    p->code = r->ok ? "" : nm_route_code_name(r->code);
    snprintf(b->error, sizeof b->error, "%s", r->ok ? "" : r->error);
    snprintf(b->tier_notes, sizeof b->tier_notes, "%s", r->tier_notes);
    p->error = b->error;
    p->tier_notes = b->tier_notes;
    p->length = r->length;
    p->snap_start = r->snap_start;
    p->snap_goal = r->snap_goal;
    p->win_x0 = r->win_x0;
    p->win_y0 = r->win_y0;
    p->win_nx = r->win_nx;
    p->win_ny = r->win_ny;
    p->cell_size = NM_kCS;
    p->tier = r->tier;
    p->tier_kind = r->tier >= 0 ? nm_tier_kind_name(r->kind) : "";
    p->ms_checks = r->ms_checks;
    p->ms_window = r->ms_window;
    p->ms_topology = r->ms_topo;
    p->ms_geometry = r->ms_geo;
    p->ms_pull = r->ms_pull;
    p->ms_assemble = r->ms_assemble;
    p->ms_lift = r->ms_lift;
    p->ms_post = r->ms_post;
    p->ms_total = r->ms_total;
    p->has_gap = r->has_gap;
    p->gap_start_x = r->gap_sx;
    p->gap_start_y = r->gap_sy;
    p->gap_goal_x = r->gap_gx;
    p->gap_goal_y = r->gap_gy;
    p->gap_distance = r->gap_dist;
    if (r->npoints && r->xy) {
        b->xy = (double *)dup_mem(r->xy, sizeof(double) * 2 * r->npoints, &fail);
        b->clearance = (double *)nm_calloc(r->npoints, sizeof(double));
        if (!b->clearance) fail = true;
        if (r->heights) {
            b->heights = (double *)nm_malloc(sizeof(double) * r->npoints);
            if (!b->heights) fail = true;
        }
        for (uint32_t i = 0; !fail && i < r->npoints; i++) {
            b->clearance[i] = r->clearance ? (double)r->clearance[i] : 0.0;
            if (b->heights) b->heights[i] = f2d_height(r->heights[i]);
        }
        p->points.xy = b->xy;
        p->points.heights = b->heights;
        p->points.n = r->npoints;
        p->clearance = b->clearance;
    }
    if (r->nwaypoints) {
        b->waypoints = (uint32_t *)dup_mem(r->waypoints, sizeof(uint32_t) * r->nwaypoints, &fail);
        p->waypoints = b->waypoints;
        p->n_waypoints = b->waypoints ? r->nwaypoints : 0;
    }
    if (r->ndrops) {
        b->drops = (nm_plugin_drop *)nm_calloc(r->ndrops, sizeof *b->drops);
        if (!b->drops) fail = true;
        for (uint32_t i = 0; b->drops && i < r->ndrops; i++) {
            b->drops[i].index = r->drops[i].index;
            b->drops[i].height = clean_height(r->drops[i].height);
            b->drops[i].from_x = r->drops[i].from_x;
            b->drops[i].from_y = r->drops[i].from_y;
        }
        p->drops = b->drops;
        p->n_drops = b->drops ? r->ndrops : 0;
    }
    if (!split_warnings(b, r->warnings)) fail = true;
    const nm_route_points *lists[4] = {&r->dbg_topology, &r->dbg_taut, &r->dbg_pulled, &r->dbg_assembled};
    nm_plugin_points *outs[4] = {&p->dbg_topology, &p->dbg_taut, &p->dbg_pulled, &p->dbg_assembled};
    for (int k = 0; k < 4; k++) copy_points(lists[k], outs[k], &b->dbg_xy[k], &b->dbg_h[k], &fail);
    if (!fail && r->ok && !build_run(b, r)) fail = true;
    return !fail;
}

void nm_plugin_result_free(nm_plugin_result *r)
{
    if (!r) return;
    result_box *b = (result_box *)r;
    nm_free(b->xy);
    nm_free(b->heights);
    nm_free(b->clearance);
    nm_free(b->waypoints);
    nm_free(b->drops);
    nm_free(b->warn_text);
    nm_free(b->warn);
    nm_free(b->run);
    for (int k = 0; k < 4; k++) {
        nm_free(b->dbg_xy[k]);
        nm_free(b->dbg_h[k]);
    }
    nm_free(b);
}

static float d2f_height(double h) { return h > NM_PLUGIN_VALID_MIN ? (float)h : NM_kFloorYNone; }

int nm_plugin_plan(nm_plugin_engine *e, const nm_plugin_request *q, nm_plugin_result **out)
{
    nm_plugin_clear_error();
    if (out) *out = NULL;
    if (!e || !out) return nm_plugin_fail(NM_ERR_ARG, "plan: missing engine or result pointer");
    int rc = nm_plugin_check_request(q);
    if (rc != NM_OK) return rc;
    nm_nogo_disc *discs = NULL;
    if (q->n_no_go_discs) {
        discs = (nm_nogo_disc *)nm_calloc(q->n_no_go_discs, sizeof *discs);
        if (!discs) return nm_plugin_fail(NM_ERR_NOMEM, "plan: out of memory");
        for (uint32_t i = 0; i < q->n_no_go_discs; i++) {
            discs[i].x = q->no_go_discs[i].x;
            discs[i].y = q->no_go_discs[i].y;
            discs[i].r = q->no_go_discs[i].radius;
        }
    }
    result_box *b = (result_box *)nm_calloc(1, sizeof *b);
    if (!b) {
        nm_free(discs);
        return nm_plugin_fail(NM_ERR_NOMEM, "plan: out of memory");
    }
    stop_adapter stop = {q->should_stop, q->stop_ctx, false};
    nm_route_request rq = nm_route_request_defaults(e->zone, q->start_x, q->start_y, q->goal_x, q->goal_y);
    rq.start_floor_y = d2f_height(q->start_floor_y);
    rq.goal_floor_y = d2f_height(q->goal_floor_y);
    rq.goal_deck_y = d2f_height(q->goal_deck_y);
    rq.start_deck_y = d2f_height(q->start_deck_y);
    rq.discs = discs;
    rq.ndiscs = q->n_no_go_discs;
    rq.should_stop = stop_thunk;
    rq.stop_ctx = &stop;

    nm_route_result r;
    memset(&r, 0, sizeof r);
    nm_error err = {0};
    pthread_mutex_lock(&e->mu);
    rc = nm_route_plan(&e->eng, &rq, &r, &err);
    pthread_mutex_unlock(&e->mu);
    nm_free(discs);
    if (rc != NM_OK) {
        nm_route_result_free(&r);
        nm_free(b);
        return nm_plugin_fail(rc, "plan zone %s: %s", e->zone, err.msg);
    }
    bool copied = copy_result(b, &r);
    b->pub.cancelled = !r.ok && stop.fired;
    nm_route_result_free(&r);
    if (!copied) {
        nm_plugin_result_free(&b->pub);
        return nm_plugin_fail(NM_ERR_NOMEM, "plan: out of memory copying the result");
    }
    if (!b->pub.ok) nm_plugin_fail(NM_OK, "%s", b->error);
    *out = &b->pub;
    return NM_OK;
}
