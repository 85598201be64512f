/* audit.c — the route audit against the level's own triangles (audit.h). The walkable triangles
 * of the zone sit in a bucket grid over (x, z); the solid test is the occluder's curtain test on
 * an occluder scene built from ALL of the zone's triangles (navbake's occluder stage, in memory),
 * so the body check and dropBlocked see exactly what the fall gate would on a faithful occluder. */
#include "audit.h"

#include "occluder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct nm_audit_level {
    float t[4];              /* zone transform: u = sx*x + tx, v = ty - sy*z */
    uint16_t zone_id;
    float *wt;               /* walkable triangles, 9 floats each, world m */
    uint32_t nwt;
    double bx0, bz0, bs;     /* bucket grid origin and side, m */
    int bw, bh;
    uint32_t *bstart, *blist; /* CSR: bucket c holds blist[bstart[c] .. bstart[c + 1]) */
    nm_occ_scene *scene;     /* every triangle of the zone (NULL: none) */
    double (*links)[4];      /* off-mesh links of the zone: u0, v0, u1, v1 px */
    bool *link_bidir;
    uint32_t nlinks;
    double climb;            /* agent */
};

static bool match_any(char **pats, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (nm_bake_pattern_match(pats[i], name)) return true;
    return false;
}

const char *nm_audit_kind_name(nm_audit_kind k)
{
    switch (k) {
    case NM_AUDIT_OK: return "ok";
    case NM_AUDIT_NO_HEIGHTS: return "no_heights";
    case NM_AUDIT_OFF_SURFACE: return "off_surface";
    case NM_AUDIT_WRONG_HEIGHT: return "wrong_height";
    case NM_AUDIT_HOLE: return "hole";
    case NM_AUDIT_UNDECLARED_DROP: return "undeclared_drop";
    case NM_AUDIT_CLIMB: return "climb";
    case NM_AUDIT_SOLID: return "solid";
    case NM_AUDIT_LAYER: return "layer";
    case NM_AUDIT_DROP_BLOCKED: return "drop_blocked";
    }
    return "?";
}

static int bucket_of(double x, double lo, double bs, int n)
{
    int c = (int)floor((x - lo) / bs);
    return c < 0 ? 0 : c >= n ? n - 1 : c;
}

int nm_audit_level_build(const nm_obj *obj, const nm_bake_config *cfg_in, double scale, const nm_pack *pack,
                         const char *zone, nm_audit_level **out, nm_error *err)
{
    *out = NULL;
    if (scale <= 0) scale = 1;
    nm_bake_config defcfg;
    const nm_bake_config *cfg = cfg_in;
    if (!cfg) {
        int rc = nm_bake_config_default(zone, &defcfg, err);
        if (rc) return rc;
        cfg = &defcfg;
    }
    int rc = NM_OK;
    nm_audit_level *lv = nm_calloc(1, sizeof *lv);
    bool *take = NULL, *walk = NULL;
    nm_buf occ = {0};
    if (!lv) {
        rc = nm_fail(err, NM_ERR_NOMEM, "audit: out of memory");
        goto done;
    }
    int zi = nm_pack_find_zone(pack, zone);
    if (zi < 0) {
        rc = nm_fail(err, NM_ERR_ARG, "audit: zone '%s' not in the pack", zone);
        goto done;
    }
    memcpy(lv->t, pack->zones[zi].t, sizeof lv->t);
    lv->zone_id = pack->zones[zi].id;
    if (!(lv->t[0] > 0)) {
        rc = nm_fail(err, NM_ERR_ARG, "audit: zone '%s' transform sx must be > 0", zone);
        goto done;
    }
    int czi = -1;
    for (uint32_t z = 0; z < cfg->zone_count; z++)
        if (!strcmp(cfg->zones[z].name, zone)) czi = (int)z;
    if (czi < 0) {
        rc = nm_fail(err, NM_ERR_ARG, "audit: zone '%s' not in the zone config", zone);
        goto done;
    }
    lv->climb = cfg->agent.climb;
    /* groups: the zone's (its patterns, or every unclaimed group when it has none), as navbake */
    uint32_t g = obj->group_count;
    take = nm_calloc(g ? g : 1, sizeof *take);
    walk = nm_calloc(g ? g : 1, sizeof *walk);
    if (!take || !walk) {
        rc = nm_fail(err, NM_ERR_NOMEM, "audit: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < g; i++) {
        const char *name = obj->groups[i];
        bool claimed = false, mine = false;
        for (uint32_t z = 0; z < cfg->zone_count; z++)
            if (cfg->zones[z].groups_given && match_any(cfg->zones[z].groups, cfg->zones[z].group_count, name)) {
                claimed = true;
                mine |= (int)z == czi;
            }
        take[i] = claimed ? mine : !cfg->zones[czi].groups_given;
        uint8_t area = 0;
        for (uint32_t a = 0; a < cfg->area_count; a++)
            if (nm_bake_pattern_match(cfg->areas[a].pattern, name)) {
                area = cfg->areas[a].area;
                break;
            }
        walk[i] = take[i] && !match_any(cfg->collision_only, cfg->collision_count, name) &&
                  !match_any(cfg->obstacles, cfg->obstacle_count, name) && area < 32 &&
                  ((NM_kWalkableFlags >> area) & 1u);
    }
    /* walkable triangles: Recast's slope test (y of (b - a) x (c - a), normalised, > cos slope) */
    double cos_slope = cos(cfg->agent.slope_deg * 3.14159265358979323846 / 180.0);
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (uint32_t t = 0; t < obj->tri_count; t++) {
            if (!walk[obj->tri_group[t]]) continue;
            double p[3][3];
            for (int c = 0; c < 3; c++)
                for (int a = 0; a < 3; a++) p[c][a] = (double)obj->pos[3 * (size_t)obj->tris[3 * (size_t)t + c] + a] * scale;
            double e0[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
            double e1[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
            double nx = e0[1] * e1[2] - e0[2] * e1[1], ny = e0[2] * e1[0] - e0[0] * e1[2],
                   nz = e0[0] * e1[1] - e0[1] * e1[0];
            double len = sqrt(nx * nx + ny * ny + nz * nz);
            if (!(len > 0) || !(ny / len > cos_slope)) continue;
            if (pass == 1)
                for (int c = 0; c < 3; c++)
                    for (int a = 0; a < 3; a++) lv->wt[9 * (size_t)n + 3 * c + a] = (float)p[c][a];
            n++;
        }
        if (pass == 0) {
            lv->wt = nm_malloc(sizeof(float) * 9 * (size_t)(n ? n : 1));
            if (!lv->wt) {
                rc = nm_fail(err, NM_ERR_NOMEM, "audit: out of memory");
                goto done;
            }
        }
    }
    lv->nwt = n;
    /* bucket grid over the walkable triangles: at most 512 buckets a side, at least 1 m */
    double x0 = INFINITY, x1 = -INFINITY, z0 = INFINITY, z1 = -INFINITY;
    for (size_t i = 0; i < 3 * (size_t)n; i++) {
        x0 = fmin(x0, lv->wt[3 * i]);
        x1 = fmax(x1, lv->wt[3 * i]);
        z0 = fmin(z0, lv->wt[3 * i + 2]);
        z1 = fmax(z1, lv->wt[3 * i + 2]);
    }
    if (n == 0) x0 = x1 = z0 = z1 = 0;
    lv->bx0 = x0, lv->bz0 = z0;
    lv->bs = fmax(1.0, fmax(x1 - x0, z1 - z0) / 512.0);
    lv->bw = (int)((x1 - x0) / lv->bs) + 1;
    lv->bh = (int)((z1 - z0) / lv->bs) + 1;
    size_t nb = (size_t)lv->bw * (size_t)lv->bh;
    lv->bstart = nm_calloc(nb + 1, sizeof(uint32_t));
    if (!lv->bstart) {
        rc = nm_fail(err, NM_ERR_NOMEM, "audit: out of memory");
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t t = 0; t < n; t++) {
            const float *w = lv->wt + 9 * (size_t)t;
            double tx0 = fmin(w[0], fmin(w[3], w[6])), tx1 = fmax(w[0], fmax(w[3], w[6]));
            double tz0 = fmin(w[2], fmin(w[5], w[8])), tz1 = fmax(w[2], fmax(w[5], w[8]));
            int bx0 = bucket_of(tx0, lv->bx0, lv->bs, lv->bw), bx1 = bucket_of(tx1, lv->bx0, lv->bs, lv->bw);
            int bz0 = bucket_of(tz0, lv->bz0, lv->bs, lv->bh), bz1 = bucket_of(tz1, lv->bz0, lv->bs, lv->bh);
            for (int z = bz0; z <= bz1; z++)
                for (int x = bx0; x <= bx1; x++) {
                    size_t c = (size_t)z * lv->bw + x;
                    if (pass == 0) lv->bstart[c + 1]++;
                    else lv->blist[lv->bstart[c]++] = t;
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < nb; c++) lv->bstart[c + 1] += lv->bstart[c];
            lv->blist = nm_malloc(sizeof(uint32_t) * (lv->bstart[nb] ? lv->bstart[nb] : 1));
            if (!lv->blist) {
                rc = nm_fail(err, NM_ERR_NOMEM, "audit: out of memory");
                goto done;
            }
        }
    }
    /* after filling, bstart[c] is the end of bucket c: shift back so it is the start again */
    for (size_t c = nb; c > 0; c--) lv->bstart[c] = lv->bstart[c - 1];
    lv->bstart[0] = 0;
    /* every triangle of the zone as an occluder scene */
    rc = nm_bake_occluder(obj, cfg, scale, &occ, err);
    if (rc) goto done;
    rc = nm_occ_load_bytes(occ.p, occ.size, zone, "audit occluder", &lv->scene, err);
    if (rc) goto done;
    /* the zone's off-mesh links (px) */
    for (uint32_t i = 0; i < pack->offmesh_count; i++) lv->nlinks += pack->offmesh[i].zone_id == lv->zone_id;
    lv->links = nm_malloc(sizeof *lv->links * (lv->nlinks ? lv->nlinks : 1));
    lv->link_bidir = nm_malloc(sizeof *lv->link_bidir * (lv->nlinks ? lv->nlinks : 1));
    if (!lv->links || !lv->link_bidir) {
        rc = nm_fail(err, NM_ERR_NOMEM, "audit: out of memory");
        goto done;
    }
    lv->nlinks = 0;
    for (uint32_t i = 0; i < pack->offmesh_count; i++) {
        const nm_offmesh *o = &pack->offmesh[i];
        if (o->zone_id != lv->zone_id) continue;
        lv->links[lv->nlinks][0] = o->pts[0][0];
        lv->links[lv->nlinks][1] = o->pts[0][1];
        lv->links[lv->nlinks][2] = o->pts[1][0];
        lv->links[lv->nlinks][3] = o->pts[1][1];
        lv->link_bidir[lv->nlinks++] = o->bidirectional != 0;
    }
done:
    nm_free(take);
    nm_free(walk);
    nm_buf_free(&occ);
    if (!cfg_in) nm_bake_config_free(&defcfg);
    if (rc) nm_audit_level_free(lv);
    else *out = lv;
    return rc;
}

void nm_audit_level_free(nm_audit_level *lv)
{
    if (!lv) return;
    nm_free(lv->wt);
    nm_free(lv->bstart);
    nm_free(lv->blist);
    nm_occ_free(lv->scene);
    nm_free(lv->links);
    nm_free(lv->link_bidir);
    nm_free(lv);
}

double nm_audit_px_per_m(const nm_audit_level *lv) { return lv->t[0]; }

void nm_audit_px_to_world(const nm_audit_level *lv, double u, double v, double *x, double *z)
{
    *x = (u - lv->t[1]) / lv->t[0];
    *z = (lv->t[3] - v) / lv->t[2];
}

void nm_audit_world_to_px(const nm_audit_level *lv, double x, double z, double *u, double *v)
{
    *u = lv->t[0] * x + lv->t[1];
    *v = lv->t[3] - lv->t[2] * z;
}

const float *nm_audit_walkable(const nm_audit_level *lv, uint32_t *count)
{
    *count = lv->nwt;
    return lv->wt;
}

/* Closest point of triangle (x, z) to q in the plane, with its height; returns the distance. */
static double tri_closest(const float *w, double qx, double qz, double *h)
{
    double ax = w[0], az = w[2], bx = w[3], bz = w[5], cx = w[6], cz = w[8];
    double det = (bx - ax) * (cz - az) - (cx - ax) * (bz - az);
    if (fabs(det) < 1e-12) return INFINITY; /* vertical: no surface */
    double l1 = ((bx - qx) * (cz - qz) - (cx - qx) * (bz - qz)) / det;
    double l2 = ((cx - qx) * (az - qz) - (ax - qx) * (cz - qz)) / det;
    double l3 = 1.0 - l1 - l2;
    if (l1 >= -1e-9 && l2 >= -1e-9 && l3 >= -1e-9) {
        *h = l1 * w[1] + l2 * w[4] + l3 * w[7];
        return 0;
    }
    /* outside: the nearest point on the three edges */
    double best = INFINITY;
    const float *p[3] = {w, w + 3, w + 6};
    for (int e = 0; e < 3; e++) {
        const float *a = p[e], *b = p[(e + 1) % 3];
        double dx = (double)b[0] - a[0], dz = (double)b[2] - a[2], l2e = dx * dx + dz * dz;
        double s = l2e > 0 ? ((qx - a[0]) * dx + (qz - a[2]) * dz) / l2e : 0;
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        double px = a[0] + s * dx, pz = a[2] + s * dz, d = hypot(qx - px, qz - pz);
        if (d < best) {
            best = d;
            *h = a[1] + s * ((double)b[1] - a[1]);
        }
    }
    return best;
}

uint32_t nm_audit_surfaces(const nm_audit_level *lv, double x, double z, double reach, double near_h,
                           double *h, uint32_t cap)
{
    if (lv->nwt == 0) return 0;
    int bx0 = bucket_of(x - reach, lv->bx0, lv->bs, lv->bw), bx1 = bucket_of(x + reach, lv->bx0, lv->bs, lv->bw);
    int bz0 = bucket_of(z - reach, lv->bz0, lv->bs, lv->bh), bz1 = bucket_of(z + reach, lv->bz0, lv->bs, lv->bh);
    uint32_t cnt = 0;
    for (int bz = bz0; bz <= bz1; bz++)
        for (int bx = bx0; bx <= bx1; bx++) {
            size_t c = (size_t)bz * lv->bw + bx;
            for (uint32_t k = lv->bstart[c]; k < lv->bstart[c + 1]; k++) {
                double th = 0;
                if (!(tri_closest(lv->wt + 9 * (size_t)lv->blist[k], x, z, &th) <= reach)) continue;
                /* one entry a height: a floor of many small triangles within reach (sauer-pandora)
                 * filled the cap with one height and cut off a step's top beside it */
                bool seen = false;
                for (uint32_t i = 0; i < cnt && i < cap && !seen; i++) seen = fabs(h[i] - th) <= 1e-6;
                if (seen) continue;
                /* insert sorted by |th - near_h| (then lower first): deterministic */
                if (cnt < cap) h[cnt] = th;
                else if (cap == 0 || fabs(th - near_h) >= fabs(h[cap - 1] - near_h)) {
                    cnt++;
                    continue;
                } else
                    h[cap - 1] = th;
                uint32_t i = cnt < cap ? cnt : cap - 1;
                while (i > 0 && (fabs(h[i] - near_h) < fabs(h[i - 1] - near_h) ||
                                 (fabs(h[i] - near_h) == fabs(h[i - 1] - near_h) && h[i] < h[i - 1]))) {
                    double s = h[i];
                    h[i] = h[i - 1];
                    h[i - 1] = s;
                    i--;
                }
                cnt++;
            }
        }
    return cnt;
}

nm_audit_params nm_audit_params_default(const nm_bake_agent *agent, double px_per_m)
{
    nm_audit_params p;
    double climb = agent ? agent->climb : 0.5;
    double height = agent ? agent->height : NM_kFallHeight;
    double cell_m = NM_kCS / (px_per_m > 0 ? px_per_m : 0.75); /* one grid cell, m */
    /* Reported heights are grid span heights: a span is sampled from the walkable mesh at a cell
     * centre, and a point may sit anywhere in its cell (half a diagonal away), on a slope of up
     * to kSlope m per px, plus Recast's vertical quantisation (0.1 m cells, vertex heights snapped
     * back within one cell height) and a walkable step: climb + 0.1 m + the slope over half a
     * cell diagonal. */
    p.reach = 0.5 * sqrt(2.0) * cell_m;
    p.h_tol = climb + 0.1 + NM_kSlope * (px_per_m > 0 ? px_per_m : 0.75) * p.reach;
    p.sample = 0.1;
    /* a step: the agent's climb plus one Recast cell height, plus the slope over one sample */
    p.step = climb + 0.1 + NM_kSlope * (px_per_m > 0 ? px_per_m : 0.75) * p.sample;
    /* CloseCracks closes cracks up to three cells wide (design article 预烘场 合缝) */
    p.gap_max = 3.0 * cell_m;
    p.body_lo = NM_kFallClimb;
    /* the ceiling: the agent height less one Recast cell height (spans are 0.1 m voxels) */
    p.body_hi = height - 0.1;
    p.link_tol = 1.0;
    p.foot = NULL;
    p.foot_ctx = NULL;
    return p;
}

bool nm_audit_body_fits(const nm_audit_level *lv, double x, double z, double radius, double y_lo, double y_hi)
{
    enum { kRays = 16 };
    if (!lv->scene) return true;
    const double c[3] = {x, 0, z};
    double prev[3] = {0, 0, 0};
    for (int k = 0; k <= kRays; k++) {
        const double a = 2.0 * M_PI * k / kRays;
        const double e[3] = {x + radius * cos(a), 0, z + radius * sin(a)};
        if (k < kRays && nm_occ_curtain_crossed(lv->scene, c, e, y_lo, y_hi)) return false;
        if (k > 0 && nm_occ_curtain_crossed(lv->scene, prev, e, y_lo, y_hi)) return false;
        memcpy(prev, e, sizeof prev);
    }
    return true;
}

/* One run of nm_audit_free_width: from (x, z) at height h along the unit (dx, dz). */
static double free_run(const nm_audit_level *lv, double x, double z, double h, double dx, double dz, double climb,
                       double body_hi)
{
    const double step = 0.01, reach = 0.02; /* a surface's shared edges within reach */
    double d = 0;
    for (int i = 1; i * step <= NM_AUDIT_kFreeRun + 1e-9; i++) {
        double qx = x + dx * step, qz = z + dz * step, hs[4];
        if (nm_audit_surfaces(lv, qx, qz, reach, h, hs, 4) == 0 || fabs(hs[0] - h) > climb) break; /* a ledge */
        const double a[3] = {x, 0, z}, b[3] = {qx, 0, qz};
        if (lv->scene && nm_occ_curtain_crossed(lv->scene, a, b, fmax(h, hs[0]) + climb, fmin(h, hs[0]) + body_hi))
            break; /* a wall */
        x = qx, z = qz, h = hs[0], d = i * step;
    }
    return d;
}

double nm_audit_free_width(const nm_audit_level *lv, double x, double z, double h, double climb, double body_hi)
{
    double best = INFINITY;
    for (int k = 0; k < 4; k++) {
        double a = 0.25 * M_PI * k, dx = cos(a), dz = sin(a);
        double w = free_run(lv, x, z, h, dx, dz, climb, body_hi) + free_run(lv, x, z, h, -dx, -dz, climb, body_hi);
        if (w < best) best = w;
    }
    return best;
}

typedef struct audit_state {
    const nm_audit_level *lv;
    const nm_audit_params *p;
    nm_audit_report *rep;
} audit_state;

static void fail_at(audit_state *s, nm_audit_kind k, uint32_t seg, double u, double v, double hr, double hs,
                    const char *fmt, const char *what)
{
    nm_audit_report *r = s->rep;
    if (r->kind != NM_AUDIT_OK) return;
    r->kind = k;
    r->segment = seg;
    r->u = u, r->v = v;
    nm_audit_px_to_world(s->lv, u, v, &r->x, &r->z);
    r->h_reported = hr;
    r->h_surface = hs;
    char hs_txt[32];
    if (isnan(hs)) snprintf(hs_txt, sizeof hs_txt, "none");
    else snprintf(hs_txt, sizeof hs_txt, "%.3f m", hs);
    snprintf(r->msg, sizeof r->msg, "%s at segment/point %u: (%.3f, %.3f) px = (%.3f, %.3f) m, reported %.3f m, "
             "surface %s%s%s", nm_audit_kind_name(k), seg, u, v, r->x, r->z, hr, hs_txt, fmt ? ": " : "",
             fmt ? what : "");
}

static bool is_drop(const nm_audit_route *r, uint32_t landing)
{
    for (uint32_t d = 0; d < r->ndrops; d++)
        if (r->drops[d] == landing) return true;
    return false;
}

static bool is_link(const nm_audit_level *lv, const double *a, const double *b, double tol_px)
{
    for (uint32_t i = 0; i < lv->nlinks; i++) {
        const double *l = lv->links[i];
        if (hypot(a[0] - l[0], a[1] - l[1]) <= tol_px && hypot(b[0] - l[2], b[1] - l[3]) <= tol_px) return true;
        if (lv->link_bidir[i] && hypot(a[0] - l[2], a[1] - l[3]) <= tol_px && hypot(b[0] - l[0], b[1] - l[1]) <= tol_px)
            return true;
    }
    return false;
}

#define AUDIT_CAP 16

/* The surface of point i nearest its reported height, within h_tol (NAN: none). */
static double point_surface(audit_state *s, const nm_audit_route *r, uint32_t i, bool check)
{
    double x, z, h[AUDIT_CAP];
    nm_audit_px_to_world(s->lv, r->xy[2 * i], r->xy[2 * i + 1], &x, &z);
    double hr = r->heights[i];
    uint32_t n = nm_audit_surfaces(s->lv, x, z, s->p->reach, hr, h, AUDIT_CAP);
    if (n == 0) {
        if (check)
            fail_at(s, NM_AUDIT_OFF_SURFACE, i, r->xy[2 * i], r->xy[2 * i + 1], hr, NAN, "no walkable triangle", "");
        return NAN;
    }
    if (fabs(h[0] - hr) > s->p->h_tol) {
        if (check) {
            char why[64];
            snprintf(why, sizeof why, "off by %.3f m (tolerance %.3f m)", h[0] - hr, s->p->h_tol);
            fail_at(s, NM_AUDIT_WRONG_HEIGHT, i, r->xy[2 * i], r->xy[2 * i + 1], hr, h[0], "", why);
        }
        return NAN;
    }
    return h[0];
}

/* Is there a walkable surface within tol of height h under world (x, z), within reach m? */
static bool surface_at(const nm_audit_level *lv, double x, double z, double reach, double h, double tol)
{
    double near;
    return nm_audit_surfaces(lv, x, z, reach, h, &near, 1) > 0 && fabs(near - h) <= tol;
}

/* Keeps the deepest step down and the highest step up the walk takes (d = fall, < 0: a rise). */
static void note_descent(audit_state *s, double d, double x, double z)
{
    if (d > s->rep->max_descent) {
        s->rep->max_descent = d;
        s->rep->descent_x = x, s->rep->descent_z = z;
    }
    if (-d > s->rep->max_ascent) {
        s->rep->max_ascent = -d;
        s->rep->ascent_x = x, s->rep->ascent_z = z;
    }
}

/* The foot the walk measures its steps on: the highest surface under the route's line within a step
 * (tol) of the last one, `last`, where "under" is within half a sample (a sample stands for its
 * stretch of line, so a slat gap narrower than a sample is no hole); `foot` (the foot within reach)
 * only when nothing under the line is. The reach stands a foot on a block's top 0.17 m beside the
 * line and measured a climb no route takes (navcat-bridges seed 2 legs 6, 8, 33: 0.58 m). */
static double line_foot(const nm_audit_level *lv, const nm_audit_params *p, double x, double z, double last,
                        double tol, double foot)
{
    double hb[AUDIT_CAP], best = NAN;
    uint32_t n = nm_audit_surfaces(lv, x, z, 0.5 * p->sample, last, hb, AUDIT_CAP);
    for (uint32_t c = 0; c < n && c < AUDIT_CAP; c++)
        if (fabs(hb[c] - last) <= tol && (isnan(best) || hb[c] > best)) best = hb[c];
    return isnan(best) ? foot : best;
}

/* Walks segment i -> i + 1 from surface height h0; returns false on a failure (reported).
 * edge != NULL: the segment is a declared drop: the walk stops where its surface ends (no surface
 * within a step: the ledge) and edge gets the last foot (world x, z and height) there. */
static bool walk_segment(audit_state *s, const nm_audit_route *r, uint32_t i, double h0, double h1_want,
                         double edge[3])
{
    const nm_audit_params *p = s->p;
    const double *a = r->xy + 2 * i, *b = a + 2;
    double ax, az, bx, bz;
    nm_audit_px_to_world(s->lv, a[0], a[1], &ax, &az);
    nm_audit_px_to_world(s->lv, b[0], b[1], &bx, &bz);
    double len = hypot(bx - ax, bz - az);
    uint32_t ns = (uint32_t)ceil(len / p->sample);
    if (ns < 1) ns = 1;
    double ha = r->heights[i], hb = r->heights[i + 1];
    double track = h0, line = h0, px = ax, pz = az, gap = 0, gap_u = a[0], gap_v = a[1], lower = NAN;
    double ex = ax, ez = az, eh = h0; /* drop: the last foot over its surface (not just within reach) */
    double hbuf[AUDIT_CAP];
    if (p->foot) p->foot(p->foot_ctx, ax, az, h0);
    for (uint32_t k = 1; k <= ns; k++) {
        double f = (double)k / ns;
        double x = ax + f * (bx - ax), z = az + f * (bz - az);
        double u = a[0] + f * (b[0] - a[0]), v = a[1] + f * (b[1] - a[1]);
        double hr = ha + f * (hb - ha);
        uint32_t n = nm_audit_surfaces(s->lv, x, z, p->reach, track, hbuf, AUDIT_CAP);
        s->rep->samples++;
        double next = NAN, tol = p->step + (gap > 0 ? NM_kSlope * nm_audit_px_per_m(s->lv) * gap : 0);
        /* the foot stands on the highest surface within a step (a kerb within the climb is
         * stepped onto, not walked through) */
        for (uint32_t c = 0; c < n && c < AUDIT_CAP; c++)
            if (fabs(hbuf[c] - track) <= tol && (isnan(next) || hbuf[c] > next)) next = hbuf[c];
        if (isnan(next) && edge) {
            edge[0] = ex, edge[1] = ez, edge[2] = eh;
            return true;
        }
        if (isnan(next)) {
            /* nothing within a step: a crack (crossed when narrow), a descent or a rise */
            if (gap == 0) {
                gap_u = u, gap_v = v;
                lower = NAN;
                double up = NAN;
                for (uint32_t c = 0; c < n && c < AUDIT_CAP; c++) {
                    if (hbuf[c] < track && isnan(lower)) lower = hbuf[c];
                    if (hbuf[c] > track && isnan(up)) up = hbuf[c];
                }
                if (isnan(lower) && !isnan(up) && up - track < NM_kFallHeight) {
                    char why[96];
                    snprintf(why, sizeof why, "rise of %.3f m in one %.2f m sample", up - track, p->sample);
                    fail_at(s, NM_AUDIT_CLIMB, i, u, v, hr, track, "", why);
                    return false;
                }
            }
            gap += len / ns;
            if (gap > p->gap_max) {
                if (!isnan(lower)) {
                    char why[96];
                    snprintf(why, sizeof why, "descent from %.3f m to %.3f m that is not a declared drop", track, lower);
                    fail_at(s, NM_AUDIT_UNDECLARED_DROP, i, gap_u, gap_v, hr, track, "", why);
                } else {
                    char why[96];
                    snprintf(why, sizeof why, "no walkable surface for more than %.2f m", p->gap_max);
                    fail_at(s, NM_AUDIT_HOLE, i, gap_u, gap_v, hr, NAN, "", why);
                }
                return false;
            }
            continue;
        }
        gap = 0;
        /* the body between the two feet: the fall gate's curtain above the higher one */
        double pa[3] = {px, 0, pz}, pb[3] = {x, 0, z};
        double lo = fmax(track, next) + p->body_lo, hi = fmin(track, next) + p->body_hi;
        if (s->lv->scene && nm_occ_curtain_crossed(s->lv->scene, pa, pb, lo, hi)) {
            char why[96];
            snprintf(why, sizeof why, "body (%.2f .. %.2f m) crosses a triangle of the level", lo, hi);
            fail_at(s, NM_AUDIT_SOLID, i, u, v, hr, next, "", why);
            return false;
        }
        double on_line = line_foot(s->lv, p, x, z, line, tol, next);
        note_descent(s, line - on_line, x, z);
        track = next, line = on_line;
        px = x, pz = z;
        if (p->foot) p->foot(p->foot_ctx, x, z, line);
        double under;
        if (edge && nm_audit_surfaces(s->lv, x, z, 0, next, &under, 1) && fabs(under - next) <= p->step)
            ex = x, ez = z, eh = under;
    }
    if (edge) {
        edge[0] = ex, edge[1] = ez, edge[2] = eh;
        return true;
    }
    /* A point just past a ledge's edge (within reach of its top, not over it) reports the foot:
     * the walk steps down there, a step the article walks up to kClimb (向下一步, no look-ahead). */
    if (!isnan(h1_want) && h1_want < track && track - h1_want <= NM_kClimb &&
        surface_at(s->lv, bx, bz, 0, h1_want, p->step) && !surface_at(s->lv, bx, bz, 0, track, p->step))
        track = h1_want;
    if (!isnan(h1_want) && fabs(track - h1_want) > p->step) {
        char why[128];
        snprintf(why, sizeof why, "the walk arrives at %.3f m, the point reports the surface at %.3f m", track, h1_want);
        fail_at(s, NM_AUDIT_LAYER, i, b[0], b[1], hb, track, "", why);
        return false;
    }
    /* the next segment starts from the surface the point reports: a step at the joint too */
    if (!isnan(h1_want)) note_descent(s, line - h1_want, bx, bz);
    return true;
}

/* The fall of segment i from take-off ta to landing lb (world x, height, z) passes dropBlocked on
 * the level; else a `drop_blocked` failure at the take-off. */
static bool fall_clear(audit_state *s, const nm_audit_route *r, uint32_t i, const double ta[3], const double lb[3])
{
    if (!s->lv->scene || !nm_occ_drop_blocked(s->lv->scene, ta, lb)) return true;
    double eu, ev;
    nm_audit_world_to_px(s->lv, ta[0], ta[2], &eu, &ev);
    fail_at(s, NM_AUDIT_DROP_BLOCKED, i, eu, ev, r->heights[i], ta[1], "", "dropBlocked on the level");
    return false;
}

/* The last segment falls by more than kClimb: the article never makes the last point a landing
 * (落点留余量: 首末两点不当落点), so a fall onto the goal is not in the drop table. */
static bool final_fall(const nm_audit_route *r, uint32_t i)
{
    return i + 2 == r->n && !is_drop(r, i + 1) && (double)r->heights[i] - r->heights[i + 1] > NM_kClimb;
}

/* Checks such a fall (its segment's walk arrived above the goal) as a declared drop is checked:
 * the walk on the upper level to where it ends, then dropBlocked from there. The planner judges
 * the ledge at the goal cell's centre while the goal lies anywhere in its cell, so the upper level
 * may still cover the goal itself: it must then end within half a cell's diagonal past it along
 * the segment, else the walk arrives on the upper level (`layer`). */
static bool fall_to_goal(audit_state *s, const nm_audit_route *r, uint32_t i, double h_up, double h_goal)
{
    const nm_audit_level *lv = s->lv;
    const double *a = r->xy + 2 * i, *b = a + 2;
    double e[3], gx, gz;
    if (!walk_segment(s, r, i, h_up, NAN, e)) return false;
    nm_audit_px_to_world(lv, b[0], b[1], &gx, &gz);
    double ta[3] = {e[0], e[2], e[1]}, lb[3] = {gx, h_goal, gz};
    if (hypot(e[0] - gx, e[1] - gz) < 1e-6 && surface_at(lv, gx, gz, 0, e[2], s->p->step)) {
        /* still over the upper level at the goal: where does it end past it? The body falls from
         * there and walks back under the edge to the goal (the planner's chain does: its landing
         * cell lies within 0.4 px of the goal, which the endpoint splice takes out) */
        const double du = b[0] - a[0], dv = b[1] - a[1], len = hypot(du, dv);
        const double slack = NM_kCS * 0.70710678118654752;
        bool ends = false;
        for (double t = 0.01; len > 0 && t <= slack + 1e-9 && !ends; t += 0.01) {
            double x, z;
            nm_audit_px_to_world(lv, b[0] + du / len * t, b[1] + dv / len * t, &x, &z);
            ends = !surface_at(lv, x, z, 0, e[2], s->p->step);
            if (ends) lb[0] = x, lb[2] = z;
            else ta[0] = x, ta[2] = z;
        }
        if (!ends) {
            char why[128];
            snprintf(why, sizeof why, "the walk arrives at %.3f m, the point reports the surface at %.3f m", e[2],
                     h_goal);
            fail_at(s, NM_AUDIT_LAYER, i, b[0], b[1], r->heights[i + 1], e[2], "", why);
            return false;
        }
    }
    return fall_clear(s, r, i, ta, lb);
}

int nm_audit_route_check(const nm_audit_level *lv, const nm_audit_route *r, const nm_audit_params *p,
                         nm_audit_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->h_surface = NAN;
    audit_state s = {lv, p, rep};
    if (r->n == 0) return NM_OK;
    if (!r->heights) {
        fail_at(&s, NM_AUDIT_NO_HEIGHTS, 0, r->xy[0], r->xy[1], NAN, NAN, "", "");
        return NM_OK;
    }
    double tol_px = p->link_tol * nm_audit_px_per_m(lv);
    for (uint32_t i = 0; i < r->n; i++) {
        bool except = (i == 0 && r->start_snapped) || (i + 1 == r->n && r->goal_snapped);
        if (!except) point_surface(&s, r, i, true);
        if (rep->kind) return NM_OK;
    }
    for (uint32_t i = 0; i + 1 < r->n; i++) {
        if ((i == 0 && r->start_snapped) || (i + 2 == r->n && r->goal_snapped)) continue;
        const double *a = r->xy + 2 * i, *b = a + 2;
        double h0 = point_surface(&s, r, i, false), h1 = point_surface(&s, r, i + 1, false);
        if (is_drop(r, i + 1)) {
            /* 台沿下落: the take-off waypoint may stand short of the ledge (string pulling, a lip
             * to step onto first): walk on the upper level to where it ends, then the L-shaped
             * fall from there (dropBlocked, as the planner's gate judges it at the ledge) */
            rep->drops_checked++;
            double ta[3], lb[3], e[3];
            nm_audit_px_to_world(lv, a[0], a[1], &ta[0], &ta[2]);
            nm_audit_px_to_world(lv, b[0], b[1], &lb[0], &lb[2]);
            ta[1] = isnan(h0) ? r->heights[i] : h0;
            lb[1] = isnan(h1) ? r->heights[i + 1] : h1;
            if (!walk_segment(&s, r, i, ta[1], NAN, e)) return NM_OK;
            ta[0] = e[0], ta[1] = e[2], ta[2] = e[1];
            if (!fall_clear(&s, r, i, ta, lb)) return NM_OK;
            continue;
        }
        if (is_link(lv, a, b, tol_px)) {
            rep->links_skipped++;
            continue;
        }
        if (isnan(h0)) continue; /* only a snapped endpoint has no surface here */
        const nm_audit_report before = *rep;
        if (!walk_segment(&s, r, i, h0, h1, NULL)) {
            /* a walk that stays up where the goal lies below: a fall onto the goal (final_fall) */
            const bool up = rep->kind == NM_AUDIT_LAYER || rep->kind == NM_AUDIT_UNDECLARED_DROP;
            if (!up || !final_fall(r, i) || isnan(h1)) return NM_OK;
            *rep = before;
            rep->drops_checked++;
            if (!fall_to_goal(&s, r, i, h0, h1)) return NM_OK;
        }
    }
    return NM_OK;
}

int nm_audit_result(const nm_audit_level *lv, const nm_route_result *res, const nm_audit_params *p,
                    nm_audit_report *rep)
{
    uint32_t *drops = nm_malloc(sizeof(uint32_t) * (res->ndrops ? res->ndrops : 1));
    if (!drops) return NM_ERR_NOMEM;
    for (uint32_t d = 0; d < res->ndrops; d++) drops[d] = res->drops[d].index;
    nm_audit_route r = {res->xy, res->heights, res->npoints, drops, res->ndrops, res->snap_start > 1e-3,
                        res->snap_goal > 1e-3};
    int rc = nm_audit_route_check(lv, &r, p, rep);
    nm_free(drops);
    return rc;
}
