/* harness.c — ours against Detour (harness.h). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char *nm_cmp_class_name(nm_cmp_class c)
{
    static const char *k[NM_CMP_CLASS_COUNT] = {"agree",        "narrow",        "ours_drop_or_link", "channel_longer",
                                                "goal_snapped", "start_snapped", "recast_ledge",      "recast_radius",
                                                "ours_fails",   "ours_longer",   "ours_only",         "other_layer",
                                                "no_poly"};
    return (unsigned)c < NM_CMP_CLASS_COUNT ? k[c] : "?";
}

bool nm_cmp_class_explained(nm_cmp_class c)
{
    return c == NM_CMP_AGREE || c == NM_CMP_NARROW || c == NM_CMP_OURS_DROP || c == NM_CMP_CHANNEL_LONGER ||
           c == NM_CMP_GOAL_SNAPPED || c == NM_CMP_START_SNAPPED || c == NM_CMP_RECAST_LEDGE ||
           c == NM_CMP_RECAST_RADIUS || c == NM_CMP_NO_POLY;
}

const char *nm_cmp_foot_name(nm_cmp_foot f)
{
    static const char *k[NM_CMP_FOOT_COUNT] = {"on", "never walkable", "low-hanging only", "low ceiling",
                                               "ledge filter", "erosion", "dropped region", "low ceiling beside",
                                               "body does not fit"};
    return (unsigned)f < NM_CMP_FOOT_COUNT ? k[f] : "?";
}

nm_cmp_foot nm_cmp_foot_why(unsigned steps, bool body_fits)
{
    nm_cmp_foot f;
    if (steps & NM_DT_STEP_REGION) return NM_CMP_FOOT_ON;
    if (!(steps & (NM_DT_STEP_RASTER | NM_DT_STEP_LOW_HANGING))) return NM_CMP_FOOT_NEVER;
    if (!(steps & NM_DT_STEP_RASTER)) return NM_CMP_FOOT_LOW_HANGING;
    if (!(steps & NM_DT_STEP_CLEAR)) return NM_CMP_FOOT_LOW_CEILING;
    /* the first step after which it was no longer walkable (the low-hanging filter only adds) */
    if (!(steps & NM_DT_STEP_LEDGE)) f = NM_CMP_FOOT_LEDGE;
    else if (!(steps & NM_DT_STEP_LOW_HEIGHT)) return NM_CMP_FOOT_LOW_CEILING;
    else if (!(steps & NM_DT_STEP_ERODE)) f = NM_CMP_FOOT_ERODE;
    else f = NM_CMP_FOOT_REGION;
    return body_fits ? f : NM_CMP_FOOT_BODY;
}

typedef struct trace_ctx {
    const nm_audit_level *lv;
    const nm_dt_oracle *dt;
    const nm_audit_params *ap;
    const nm_bake_agent *agent;
    nm_cmp_trace *t;
} trace_ctx;

nm_cmp_foot nm_cmp_foot_judge(const nm_audit_level *lv, const nm_dt_oracle *dt, double x, double z, double h,
                              const nm_audit_params *ap, const nm_bake_agent *agent)
{
    const double voxel = 0.1; /* Recast's cell height (the oracle's build) */
    unsigned steps = nm_dt_span_steps(dt, x, z, h, ap->reach, NULL);
    nm_cmp_foot f = nm_cmp_foot_why(steps, true);
    bool column = f == NM_CMP_FOOT_LOW_CEILING &&
                  nm_audit_body_fits(lv, x, z, 0.5 * ap->sample, h + voxel, h + ap->body_hi);
    if (f != NM_CMP_FOOT_LEDGE && f != NM_CMP_FOOT_ERODE && f != NM_CMP_FOOT_REGION && !column) return f;
    bool fits = nm_audit_body_fits(lv, x, z, agent->radius, h + agent->climb, h + ap->body_hi);
    if (column) return fits ? NM_CMP_FOOT_COLUMN : NM_CMP_FOOT_BODY;
    return nm_cmp_foot_why(steps, fits);
}

static void trace_foot(void *ctx, double x, double z, double h)
{
    trace_ctx *c = ctx;
    nm_cmp_foot f = nm_cmp_foot_judge(c->lv, c->dt, x, z, h, c->ap, c->agent);
    nm_cmp_trace *t = c->t;
    if (f == NM_CMP_FOOT_BODY) {
        double w = nm_audit_free_width(c->lv, x, z, h, c->agent->climb, c->ap->body_hi);
        if (w < t->narrowest) t->narrowest = w, t->narrowest_at[0] = x, t->narrowest_at[1] = z, t->narrowest_at[2] = h;
    }
    t->feet++;
    if (t->by[f]++ == 0) t->first[f][0] = x, t->first[f][1] = z, t->first[f][2] = h;
}

int nm_cmp_trace_walk(const nm_audit_level *lv, const nm_dt_oracle *dt, const nm_route_result *r,
                      const nm_audit_params *ap, const nm_bake_agent *agent, nm_cmp_trace *out)
{
    memset(out, 0, sizeof *out);
    out->narrowest = INFINITY;
    trace_ctx c = {lv, dt, ap, agent, out};
    nm_audit_params p = *ap;
    p.foot = trace_foot;
    p.foot_ctx = &c;
    nm_audit_report rep;
    return nm_audit_result(lv, r, &p, &rep);
}

bool nm_cmp_recast_ledge(const nm_cmp_leg *l, const nm_bake_agent *agent)
{
    const nm_cmp_trace *t = &l->trace;
    uint32_t off = t->feet - t->by[NM_CMP_FOOT_ON];
    return l->ours_ok && l->audit.kind == NM_AUDIT_OK && l->dt_status == NM_DT_PARTIAL && l->ours_drops == 0 &&
           !l->ours_link && (l->audit.max_ascent <= agent->climb || l->climb_one_step) &&
           l->audit.max_descent <= agent->climb && off > 0 &&
           off == t->by[NM_CMP_FOOT_LEDGE] + t->by[NM_CMP_FOOT_ERODE] + t->by[NM_CMP_FOOT_REGION] +
                      t->by[NM_CMP_FOOT_COLUMN];
}

bool nm_cmp_recast_radius(const nm_cmp_leg *l, const nm_bake_agent *agent)
{
    const nm_cmp_trace *t = &l->trace;
    nm_cmp_leg ledge = *l; /* the body's feet counted as eroded: then recast_ledge's rule */
    ledge.trace.by[NM_CMP_FOOT_ERODE] += t->by[NM_CMP_FOOT_BODY];
    ledge.trace.by[NM_CMP_FOOT_BODY] = 0;
    return t->by[NM_CMP_FOOT_BODY] > 0 && t->narrowest >= 2.0 * agent->radius && nm_cmp_recast_ledge(&ledge, agent);
}

bool nm_cmp_channel_longer(double ours_len, double base_len, double dt_len)
{
    double bound = NM_CMP_kLengthRatio * dt_len + NM_CMP_kLengthSlack;
    return ours_len > bound && base_len <= bound && ours_len <= NM_CMP_kChannelDetour * base_len;
}

static bool match_any(char **pats, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (nm_bake_pattern_match(pats[i], name)) return true;
    return false;
}

/* The Recast input navbake builds for the zone (bake.c walkable_recast): the zone's groups except
 * collision_only ones, obstacles solid, world metres. */
static int recast_input(const nm_obj *obj, const nm_bake_config *cfg, double scale, int czi, float **pos,
                        uint32_t **tris, uint8_t **areas, uint32_t *nt, nm_error *err)
{
    uint32_t g = obj->group_count;
    uint8_t *role = nm_calloc(g ? g : 1, 1), *area = nm_calloc(g ? g : 1, 1);
    *pos = nm_malloc(sizeof(float) * 3 * (size_t)(obj->vert_count ? obj->vert_count : 1));
    *tris = nm_malloc(sizeof(uint32_t) * 3 * (size_t)(obj->tri_count ? obj->tri_count : 1));
    *areas = nm_malloc(obj->tri_count ? obj->tri_count : 1);
    if (!role || !area || !*pos || !*tris || !*areas) {
        nm_free(role);
        nm_free(area);
        return nm_fail(err, NM_ERR_NOMEM, "harness: out of memory");
    }
    for (uint32_t i = 0; i < g; i++) {
        const char *name = obj->groups[i];
        bool claimed = false, mine = false;
        for (uint32_t z = 0; z < cfg->zone_count; z++)
            if (cfg->zones[z].groups_given && match_any(cfg->zones[z].groups, cfg->zones[z].group_count, name)) {
                claimed = true;
                mine |= (int)z == czi;
            }
        bool take = claimed ? mine : !cfg->zones[czi].groups_given;
        role[i] = !take ? 0 : match_any(cfg->collision_only, cfg->collision_count, name) ? 0
                            : match_any(cfg->obstacles, cfg->obstacle_count, name)      ? 2
                                                                                        : 1;
        for (uint32_t a = 0; a < cfg->area_count; a++)
            if (nm_bake_pattern_match(cfg->areas[a].pattern, name)) {
                area[i] = cfg->areas[a].area;
                break;
            }
    }
    for (size_t i = 0; i < 3 * (size_t)obj->vert_count; i++) (*pos)[i] = (float)(obj->pos[i] * scale);
    uint32_t k = 0;
    for (uint32_t t = 0; t < obj->tri_count; t++) {
        uint32_t gr = obj->tri_group[t];
        if (!role[gr]) continue;
        memcpy(*tris + 3 * (size_t)k, obj->tris + 3 * (size_t)t, 3 * sizeof(uint32_t));
        (*areas)[k++] = role[gr] == 2 ? NM_RC_OBSTACLE : area[gr];
    }
    *nt = k;
    nm_free(role);
    nm_free(area);
    return NM_OK;
}

bool nm_cmp_goal_snapped(const nm_cmp_leg *l)
{
    return l->ours_ok && l->audit.kind == NM_AUDIT_OK && l->snap_goal_px >= NM_kCS &&
           l->join.kind != NM_AUDIT_OK && l->dt_status == NM_DT_PARTIAL;
}

bool nm_cmp_start_snapped(const nm_cmp_leg *l)
{
    return l->ours_ok && l->audit.kind == NM_AUDIT_OK && l->snap_start_px >= NM_kCS &&
           l->join_start.kind != NM_AUDIT_OK && l->dt_status == NM_DT_PARTIAL;
}

/* An end's join to its anchor, which the audit excepts, walked like any segment. */
static int audit_join(const nm_audit_level *lv, const nm_route_result *r, const nm_audit_params *ap, bool start,
                      nm_audit_report *out)
{
    nm_route_result walked = *r;
    if (start) walked.snap_start = 0;
    else walked.snap_goal = 0;
    return nm_audit_result(lv, &walked, ap, out);
}

bool nm_cmp_one_step_climb(const nm_audit_level *lv, const nm_route_result *r, double ax, double az, double reach,
                           double *h0, double *h1)
{
    if (!r->heights) return false;
    for (uint32_t i = 0; i + 1 < r->npoints; i++) {
        const double *a = r->xy + 2 * (size_t)i;
        if (hypot(a[2] - a[0], a[3] - a[1]) > M_SQRT2 * NM_kCS * (1 + 1e-9)) continue;
        double x[2], z[2], h[2];
        bool near = false, on = true;
        for (int e = 0; e < 2; e++) {
            nm_audit_px_to_world(lv, a[2 * e], a[2 * e + 1], &x[e], &z[e]);
            near = near || hypot(x[e] - ax, z[e] - az) <= reach;
        }
        if (!near) continue;
        for (int e = 0; e < 2 && on; e++) on = nm_audit_surfaces(lv, x[e], z[e], 0.0, r->heights[i + e], &h[e], 1) > 0;
        if (on && h[1] > h[0] && h[1] - h[0] <= NM_kStepUp) {
            *h0 = h[0], *h1 = h[1];
            return true;
        }
    }
    return false;
}

bool nm_cmp_steps_down(const nm_cmp_leg *l, const nm_bake_agent *agent)
{
    return l->ours_ok && l->audit.max_descent > agent->climb &&
           (l->audit.max_ascent <= agent->climb || l->climb_one_step);
}

void nm_cmp_leg_text(const nm_cmp_leg *l, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "%s: (%.2f, %.2f, %.2f) m = (%.2f, %.2f) px -> (%.2f, %.2f, %.2f) m = (%.2f, %.2f) px; ours %s",
                     nm_cmp_class_name(l->cls), l->s[0], l->s[1], l->s[2], l->su, l->sv, l->g[0], l->g[1], l->g[2],
                     l->gu, l->gv, l->ours_ok ? "ok" : "failed");
    if (n < 0 || (size_t)n >= cap) return;
    if (l->ours_ok)
        n += snprintf(buf + n, cap - (size_t)n, " %.2f m (baseline %.2f m, %u drops%s, ends at %.2f m)", l->ours_len,
                      l->base_len, l->ours_drops, l->ours_link ? ", link" : "", l->ours_end_h);
    else
        n += snprintf(buf + n, cap - (size_t)n, " (%s)", l->ours_error);
    if (n < 0 || (size_t)n >= cap) return;
    static const char *dts[] = {"complete", "partial", "no start polygon", "no goal polygon", "failed"};
    if (l->ours_steps_down)
        n += snprintf(buf + n, cap - (size_t)n, ", steps down %.2f m at (%.2f, %.2f) m", l->audit.max_descent,
                      l->audit.descent_x, l->audit.descent_z);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->ours_climbs)
        n += snprintf(buf + n, cap - (size_t)n, ", climbs %.2f m at (%.2f, %.2f) m", l->audit.max_ascent,
                      l->audit.ascent_x, l->audit.ascent_z);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->climb_one_step)
        n += snprintf(buf + n, cap - (size_t)n, " on one grid step (surfaces %.2f -> %.2f m)", l->climb_h0, l->climb_h1);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->ours_ok && l->snap_goal_px >= NM_kCS)
        n += snprintf(buf + n, cap - (size_t)n, ", goal joined %.2f px from its anchor (%s)", l->snap_goal_px,
                      l->join.kind == NM_AUDIT_OK ? "walkable" : l->join.msg);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->ours_ok && l->snap_start_px >= NM_kCS)
        n += snprintf(buf + n, cap - (size_t)n, ", start joined %.2f px to its anchor (%s)", l->snap_start_px,
                      l->join_start.kind == NM_AUDIT_OK ? "walkable" : l->join_start.msg);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->cls == NM_CMP_RECAST_LEDGE || l->cls == NM_CMP_RECAST_RADIUS)
        n += snprintf(buf + n, cap - (size_t)n, ", steps up %.2f m, down %.2f m at most", l->audit.max_ascent,
                      l->audit.max_descent);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->ours_ok && l->dt_status == NM_DT_PARTIAL && l->trace.feet > l->trace.by[NM_CMP_FOOT_ON]) {
        n += snprintf(buf + n, cap - (size_t)n, ", %u of %u feet off Recast's regions:",
                      l->trace.feet - l->trace.by[NM_CMP_FOOT_ON], l->trace.feet);
        for (int f = 1; f < NM_CMP_FOOT_COUNT && n >= 0 && (size_t)n < cap; f++)
            if (l->trace.by[f])
                n += snprintf(buf + n, cap - (size_t)n, " %s %u (first at (%.2f, %.2f, %.2f) m)",
                              nm_cmp_foot_name((nm_cmp_foot)f), l->trace.by[f], l->trace.first[f][0],
                              l->trace.first[f][2], l->trace.first[f][1]);
        if (n < 0 || (size_t)n >= cap) return;
        if (l->trace.by[NM_CMP_FOOT_BODY])
            n += snprintf(buf + n, cap - (size_t)n, "; narrowest free width there %.2f m at (%.2f, %.2f, %.2f) m",
                          l->trace.narrowest, l->trace.narrowest_at[0], l->trace.narrowest_at[2],
                          l->trace.narrowest_at[1]);
        if (n < 0 || (size_t)n >= cap) return;
    }
    n += snprintf(buf + n, cap - (size_t)n, "; detour %s", dts[l->dt_status]);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->dt_status <= NM_DT_PARTIAL)
        n += snprintf(buf + n, cap - (size_t)n, " %.2f m%s", l->dt_len, l->dt_link ? " (link)" : "");
    if (n < 0 || (size_t)n >= cap) return;
    if (l->width_m > 0)
        n += snprintf(buf + n, cap - (size_t)n, "; narrowest %.2f m wide at (%.2f, %.2f) m", l->width_m, l->wx, l->wz);
    if (n < 0 || (size_t)n >= cap) return;
    if (l->ours_ok && l->audit.kind != NM_AUDIT_OK) snprintf(buf + n, cap - (size_t)n, "; AUDIT %s", l->audit.msg);
}

int nm_cmp_run(const nm_cmp_opts *o, nm_cmp_leg **legs_out, nm_cmp_summary *sum, nm_error *err)
{
    *legs_out = NULL;
    memset(sum, 0, sizeof *sum);
    nm_bake_config defcfg;
    const nm_bake_config *cfg = o->cfg;
    if (!cfg) {
        int rc = nm_bake_config_default(o->zone, &defcfg, err);
        if (rc) return rc;
        cfg = &defcfg;
    }
    int rc = NM_OK;
    nm_pack pack = {0};
    bool pack_loaded = false, engine_open = false;
    nm_route_engine e;
    nm_audit_level *lv = NULL;
    nm_dt_oracle *dt = NULL;
    float *pos = NULL;
    uint32_t *tris = NULL, nt = 0;
    uint8_t *areas = NULL;
    nm_dt_link *links = NULL;
    nm_cmp_leg *legs = NULL;
    int czi = -1;
    for (uint32_t z = 0; z < cfg->zone_count; z++)
        if (!strcmp(cfg->zones[z].name, o->zone)) czi = (int)z;
    if (czi < 0) {
        rc = nm_fail(err, NM_ERR_ARG, "harness: zone '%s' not in the zone config", o->zone);
        goto done;
    }
    nm_pack_load_opts lo = {0};
    lo.workers = o->workers;
    rc = nm_pack_load(o->pack_path, &lo, &pack, err);
    if (rc) goto done;
    pack_loaded = true;
    rc = nm_audit_level_build(o->obj, cfg, o->scale, &pack, o->zone, &lv, err);
    if (rc) goto done;
    rc = recast_input(o->obj, cfg, o->scale > 0 ? o->scale : 1, czi, &pos, &tris, &areas, &nt, err);
    if (rc) goto done;
    uint32_t nl = 0;
    links = nm_calloc(cfg->offmesh_count ? cfg->offmesh_count : 1, sizeof *links);
    if (!links) {
        rc = nm_fail(err, NM_ERR_NOMEM, "harness: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < cfg->offmesh_count; i++) {
        const nm_bake_offmesh *l = &cfg->offmesh[i];
        if ((int)l->zone != czi) continue;
        for (int k = 0; k < 3; k++) links[nl].a[k] = (float)l->from[k], links[nl].b[k] = (float)l->to[k];
        links[nl].radius = l->radius;
        links[nl].bidirectional = l->bidirectional;
        nl++;
    }
    const nm_bake_agent *ag = &cfg->agent;
    nm_rc_params rp = {.agent_height = ag->height, .agent_radius = ag->radius, .agent_climb = ag->climb,
                       .slope_deg = ag->slope_deg};
    nm_rc_input in = {pos, o->obj->vert_count, tris, areas, nt};
    char msg[256] = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = nm_dt_build(&in, &rp, links, nl, NM_kWalkableFlags, &dt, msg, sizeof msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        rc = nm_fail(err, rc, "%s", msg);
        goto done;
    }
    sum->dt_build_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    sum->dt_polys = nm_dt_poly_count(dt);
    rc = nm_route_engine_open(&e, &pack, o->pack_path, NULL, o->workers, err);
    if (rc) goto done;
    engine_open = true;
    legs = nm_calloc(o->legs ? o->legs : 1, sizeof *legs);
    if (!legs) {
        rc = nm_fail(err, NM_ERR_NOMEM, "harness: out of memory");
        goto done;
    }
    double ppm = nm_audit_px_per_m(lv), cell_m = NM_kCS / ppm;
    nm_audit_params ap = nm_audit_params_default(ag, ppm);
    uint64_t rng = o->seed ? o->seed : 1;
    for (uint32_t i = 0; i < o->legs; i++) {
        nm_cmp_leg *L = &legs[i];
        float s[3], g[3];
        if (o->given) {
            /* px and height; no height: the highest walkable surface there */
            float *ends[2] = {s, g};
            for (int e2 = 0; e2 < 2; e2++) {
                const double *gv = o->given + 6 * (size_t)i + 3 * e2;
                double x, z, hs[16];
                nm_audit_px_to_world(lv, gv[0], gv[1], &x, &z);
                double h = gv[2];
                if (isnan(h)) {
                    uint32_t n = nm_audit_surfaces(lv, x, z, ap.reach, 1e9, hs, 16);
                    h = n ? hs[0] : 0;
                }
                ends[e2][0] = (float)x, ends[e2][1] = (float)h, ends[e2][2] = (float)z;
            }
        } else if (!nm_dt_random_point(dt, &rng, s) || !nm_dt_random_point(dt, &rng, g)) {
            rc = nm_fail(err, NM_ERR_ARG, "harness: Detour's mesh of zone '%s' is empty", o->zone);
            goto done;
        }
        for (int k = 0; k < 3; k++) L->s[k] = s[k], L->g[k] = g[k];
        nm_audit_world_to_px(lv, s[0], s[2], &L->su, &L->sv);
        nm_audit_world_to_px(lv, g[0], g[2], &L->gu, &L->gv);
        /* ours */
        nm_route_request q = nm_route_request_defaults(o->zone, L->su, L->sv, L->gu, L->gv);
        /* the sampled surfaces are known: declare them (a host that knows its deck does) */
        q.start_floor_y = q.start_deck_y = s[1];
        q.goal_floor_y = q.goal_deck_y = g[1];
        nm_route_result r;
        nm_error perr = {0};
        int prc = nm_route_plan(&e, &q, &r, &perr);
        if (prc == NM_ERR_NOMEM) {
            rc = nm_fail(err, prc, "%s", perr.msg);
            goto done;
        }
        if (prc) snprintf(r.error, sizeof r.error, "%s", perr.msg);
        L->ours_ok = r.ok;
        if (!r.ok) snprintf(L->ours_error, sizeof L->ours_error, "%s", r.error);
        L->ours_len = r.length / ppm;
        L->base_len = r.base_cost * NM_kCS / ppm;
        L->ours_drops = r.ndrops;
        L->ours_end_h = r.ok && r.heights && r.npoints ? r.heights[r.npoints - 1] : NAN;
        if (r.ok) {
            rc = nm_audit_result(lv, &r, &ap, &L->audit);
            if (rc) {
                nm_route_result_free(&r);
                rc = nm_fail(err, rc, "harness: out of memory");
                goto done;
            }
            L->snap_goal_px = r.snap_goal;
            L->snap_start_px = r.snap_start;
            if (r.snap_goal >= NM_kCS) rc = audit_join(lv, &r, &ap, false, &L->join);
            if (!rc && r.snap_start >= NM_kCS) rc = audit_join(lv, &r, &ap, true, &L->join_start);
            if (rc) {
                nm_route_result_free(&r);
                rc = nm_fail(err, rc, "harness: out of memory");
                goto done;
            }
            L->ours_link = L->audit.links_skipped > 0;
            L->ours_climbs = L->audit.max_ascent > ag->climb;
            L->climb_one_step = L->ours_climbs && nm_cmp_one_step_climb(lv, &r, L->audit.ascent_x, L->audit.ascent_z,
                                                                        ap.reach, &L->climb_h0, &L->climb_h1);
            L->ours_steps_down = nm_cmp_steps_down(L, ag);
            sum->audited++;
            sum->audit_failures += L->audit.kind != NM_AUDIT_OK;
            sum->ours_ok++;
        }
        double h_start = r.ok && r.heights && r.npoints ? r.heights[0] : NAN;
        /* Detour */
        nm_dt_path dp;
        rc = nm_dt_find_path(dt, s, g, &dp);
        if (rc) {
            nm_route_result_free(&r);
            rc = nm_fail(err, rc, "harness: Detour query failed");
            goto done;
        }
        L->dt_status = dp.status;
        L->dt_len = dp.length;
        L->dt_link = dp.uses_link;
        sum->dt_complete += dp.status == NM_DT_COMPLETE;
        /* where Detour stops short: ours' walk in its Recast build */
        if (r.ok && dp.status == NM_DT_PARTIAL) rc = nm_cmp_trace_walk(lv, dt, &r, &ap, ag, &L->trace);
        nm_route_result_free(&r);
        if (rc) {
            nm_dt_path_free(&dp);
            rc = nm_fail(err, rc, "harness: out of memory");
            goto done;
        }
        /* classify */
        if (dp.status == NM_DT_NO_START || dp.status == NM_DT_NO_GOAL || dp.status == NM_DT_FAILED) {
            L->cls = NM_CMP_NO_POLY;
        } else if (dp.status == NM_DT_COMPLETE) {
            bool longer = L->ours_ok && L->ours_len > NM_CMP_kLengthRatio * dp.length + NM_CMP_kLengthSlack;
            bool layer = L->ours_ok && ((!isnan(L->ours_end_h) && fabs(L->ours_end_h - g[1]) > ap.h_tol + 0.5) ||
                                        (!isnan(h_start) && fabs(h_start - s[1]) > ap.h_tol + 0.5));
            if (L->ours_ok && !longer && !layer) L->cls = NM_CMP_AGREE;
            else if (layer) L->cls = NM_CMP_OTHER_LAYER;
            else {
                float at[3] = {0, 0, 0};
                double w = nm_dt_min_width(dt, &dp, at);
                if (w >= 0) {
                    L->width_m = w + 2.0 * ag->radius;
                    L->wx = at[0], L->wz = at[2];
                }
                /* our grid needs the eroded corridor (Detour's mesh, w wide) to hold a chain of
                 * cell centres: two cells across */
                if (w >= 0 && w < 2.0 * cell_m) L->cls = NM_CMP_NARROW;
                else if (!L->ours_ok) L->cls = NM_CMP_OURS_FAILS;
                else L->cls = nm_cmp_channel_longer(L->ours_len, L->base_len, dp.length) ? NM_CMP_CHANNEL_LONGER
                                                                                       : NM_CMP_OURS_LONGER;
            }
        } else { /* partial */
            if (!L->ours_ok) L->cls = NM_CMP_AGREE;
            else if (nm_cmp_goal_snapped(L)) L->cls = NM_CMP_GOAL_SNAPPED; /* ends at its anchor's height */
            else {
                bool layer = !isnan(L->ours_end_h) && fabs(L->ours_end_h - g[1]) > ap.h_tol + 0.5;
                if (layer) L->cls = NM_CMP_OTHER_LAYER;
                else if ((L->ours_drops > 0 || L->ours_link || L->ours_steps_down) && L->audit.kind == NM_AUDIT_OK)
                    L->cls = NM_CMP_OURS_DROP;
                else if (nm_cmp_start_snapped(L)) L->cls = NM_CMP_START_SNAPPED;
                else if (nm_cmp_recast_ledge(L, ag)) L->cls = NM_CMP_RECAST_LEDGE;
                else if (nm_cmp_recast_radius(L, ag)) L->cls = NM_CMP_RECAST_RADIUS;
                else L->cls = NM_CMP_OURS_ONLY;
            }
        }
        nm_dt_path_free(&dp);
        sum->by_class[L->cls]++;
        sum->unexplained += !nm_cmp_class_explained(L->cls);
        sum->legs++;
    }
    *legs_out = legs;
    legs = NULL;
done:
    nm_free(legs);
    if (engine_open) nm_route_engine_close(&e);
    nm_dt_free(dt);
    nm_audit_level_free(lv);
    nm_free(pos);
    nm_free(tris);
    nm_free(areas);
    nm_free(links);
    if (pack_loaded) nm_pack_free(&pack);
    if (!o->cfg) nm_bake_config_free(&defcfg);
    return rc;
}
