/* post_pull.c — the polyline steps of post-processing (design article 后处理): StringPull,
 * endpoint splice, search heights matched back along the pull input, and PullWaypoints with the
 * zone-mesh drivability test (isRouteSegmentDrivable). */
#include "post.h"

#include <math.h>
#include <string.h>

/* 拉直 */
uint32_t nm_post_string_pull(uint32_t n, nm_post_vis_fn vis, void *ctx, uint32_t *keep)
{
    if (n == 0)
        return 0;
    uint32_t nk = 0, i = 0;
    keep[nk++] = 0;
    while (i + 1 < n) {
        uint32_t j = i + 1; /* 3. none visible down to i + 2: i + 1, unchecked */
        for (uint32_t c = n - 1; c >= i + 2; --c)
            if (vis(ctx, i, c)) {
                j = c;
                break;
            }
        keep[nk++] = j;
        i = j;
    }
    return nk;
}

bool nm_post_vis_points(void *ctx, uint32_t i, uint32_t j)
{
    const nm_post_points_vis *pv = ctx;
    float hi = pv->h ? pv->h[i] : 0.0f, hj = pv->h ? pv->h[j] : 0.0f;
    return nm_sight_ok(pv->view, pv->xy[2 * i], pv->xy[2 * i + 1], pv->xy[2 * j],
                       pv->xy[2 * j + 1], hi, hj);
}

/* 端点拼接 */
uint32_t nm_post_splice(double sx, double sy, const double *xy, uint32_t n, double gx, double gy,
                        bool parent_chain, double *out)
{
    uint32_t m = 0;
    /* 1-3: raw start, middle points away from both raw ends, raw goal; dedupe neighbours */
    out[2 * m] = sx;
    out[2 * m + 1] = sy;
    m++;
    for (uint32_t k = 0; k <= n; ++k) {
        double x, y;
        if (k < n) {
            x = xy[2 * k];
            y = xy[2 * k + 1];
            if (!(nm_hypot(x - sx, y - sy) > 0.4 && nm_hypot(x - gx, y - gy) > 0.4))
                continue;
        } else {
            x = gx;
            y = gy;
        }
        if (!(nm_hypot(x - out[2 * (m - 1)], y - out[2 * (m - 1) + 1]) > 1e-9)) {
            if (k == n) { /* the goal replaces a duplicate of itself */
                out[2 * (m - 1)] = x;
                out[2 * (m - 1) + 1] = y;
                if (m == 1) { /* start == goal: keep both ends */
                    out[2 * m] = x;
                    out[2 * m + 1] = y;
                    m++;
                }
            }
            continue;
        }
        out[2 * m] = x;
        out[2 * m + 1] = y;
        m++;
    }
    if (!parent_chain || m < 3)
        return m;
    /* 4. collinear points of a parent chain, against the last kept point. Only a point between
     * the other two goes: the article's reason (a -> b then b -> c is a -> c) holds there alone.
     * A chain that turns back along its own line, on another layer (off a ramp's end by a ledge
     * drop, back under the ramp), keeps its turning point: deleting it took the drop's landing
     * out of the route (recast-navtest at 0.70 px/m, seed 29 leg 79). */
    uint32_t r = 1;
    for (uint32_t k = 1; k + 1 < m; ++k) {
        double ax = out[2 * (r - 1)], ay = out[2 * (r - 1) + 1];
        double bx = out[2 * k], by = out[2 * k + 1];
        double cx = out[2 * (k + 1)], cy = out[2 * (k + 1) + 1];
        double cr = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
        if (fabs(cr) <= 1e-9 * fmax(1.0, nm_hypot(cx - ax, cy - ay)) &&
            (bx - ax) * (cx - bx) + (by - ay) * (cy - by) >= 0.0)
            continue;
        out[2 * r] = bx;
        out[2 * r + 1] = by;
        r++;
    }
    out[2 * r] = out[2 * (m - 1)];
    out[2 * r + 1] = out[2 * (m - 1) + 1];
    return r + 1;
}

/* 对回搜索面高 */
bool nm_post_match_heights(const double *xy, uint32_t n, const double *pin, const float *hin,
                           uint32_t m, float *hout)
{
    if (n == 0 || m == 0 || !hin)
        return false;
    hout[0] = hin[0];
    hout[n - 1] = hin[m - 1];
    uint32_t pos = 0;
    for (uint32_t k = 1; k + 1 < n; ++k) {
        uint32_t f = pos;
        while (f < m && !(pin[2 * f] == xy[2 * k] && pin[2 * f + 1] == xy[2 * k + 1]))
            f++;
        if (f == m)
            return false;
        hout[k] = hin[f];
        pos = f + 1; /* only forward: a second pass over the same spot finds its own height */
    }
    return true;
}

/* ---- 路点 ---- */
typedef struct tri_probe {
    const nm_zone_clean *zc;
    double x, y, ref;
    bool have_ref, lowest;
    double best_h, best_key;
    bool found;
} tri_probe;

static int probe_tri(void *ctx, uint32_t t)
{
    tri_probe *p = ctx;
    if (!nm_zone_walkable(p->zc, t))
        return 0;
    const nm_vertex *a = nm_zone_vertex(p->zc, t, 0), *b = nm_zone_vertex(p->zc, t, 1),
                    *c = nm_zone_vertex(p->zc, t, 2);
    double d = (b->u - a->u) * (c->v - a->v) - (b->v - a->v) * (c->u - a->u);
    if (fabs(d) < 1e-12)
        return 0;
    double l1 = ((p->x - a->u) * (c->v - a->v) - (p->y - a->v) * (c->u - a->u)) / d;
    double l2 = ((b->u - a->u) * (p->y - a->v) - (b->v - a->v) * (p->x - a->u)) / d;
    double l0 = 1.0 - l1 - l2;
    const double e = -1e-9;
    if (l0 < e || l1 < e || l2 < e)
        return 0;
    double h = l0 * a->h + l1 * b->h + l2 * c->h;
    double key = p->have_ref ? fabs(h - p->ref) : h; /* nearest to the reference, or lowest */
    if (!p->found || key < p->best_key) {
        p->found = true;
        p->best_key = key;
        p->best_h = h;
    }
    return 0;
}

static bool line_drivable(const nm_zone_clean *zc, double ax, double ay, double bx, double by,
                          double h_start)
{
    double L = nm_hypot(bx - ax, by - ay);
    long N = (long)floor(L / 0.5);
    if (N < 1)
        N = 1;
    bool have = isfinite(h_start);
    double prev = h_start;
    for (long i = 0; i <= N; ++i) {
        double t = (double)i / (double)N;
        tri_probe p = {zc, ax + (bx - ax) * t, ay + (by - ay) * t, prev, have, !have, 0, 0, false};
        nm_zone_tris_in_rect(zc, p.x, p.y, p.x, p.y, probe_tri, &p);
        if (!p.found)
            return false; /* off the mesh */
        if (i > 0 && fabs(p.best_h - prev) > NM_kClimb)
            return false;
        prev = p.best_h;
        have = true;
    }
    return true;
}

/* isRouteSegmentDrivable */
bool nm_post_zone_drivable(void *ctx, double ax, double ay, double bx, double by,
                           double half_width, double h_start)
{
    const nm_zone_clean *zc = ctx;
    if (!line_drivable(zc, ax, ay, bx, by, h_start))
        return false;
    double L = nm_hypot(bx - ax, by - ay);
    if (!(half_width > 0) || !(L > 0))
        return true;
    double ux = (bx - ax) / L, uy = (by - ay) / L;
    double nx = -uy * half_width, ny = ux * half_width;
    double s = fmin(half_width, L / 2); /* ends shrunk: the fixed ends often touch a wall */
    for (int side = -1; side <= 1; side += 2) {
        double fax = ax + ux * s + side * nx, fay = ay + uy * s + side * ny;
        double fbx = bx - ux * s + side * nx, fby = by - uy * s + side * ny;
        if (!line_drivable(zc, fax, fay, fbx, fby, h_start))
            return false;
    }
    return true;
}

/* PullWaypoints */
uint32_t nm_post_pull_waypoints(const double *xy, uint32_t n, const float *clr,
                                const float *halong, const nm_post_drop *drops, uint32_t ndrops,
                                nm_post_drivable_fn drivable, void *dctx, nm_sight_view *blk,
                                uint32_t *out)
{
    if (!halong || n < 2)
        return 0; /* 1. no layer oracle: the caller pulls */
    uint32_t no = 0, cur = 0;
    while (cur + 1 < n) {
        /* 3. at most kMaxPullSpan vertices; 4. never past the next drop landing */
        uint32_t limit = cur + NM_kMaxPullSpan < n - 1 ? cur + NM_kMaxPullSpan : n - 1;
        for (uint32_t d = 0; d < ndrops; ++d)
            if (drops[d].index > cur && drops[d].index < limit)
                limit = drops[d].index;
        uint32_t best = cur + 1; /* 5. no progress: forced one step */
        double hw = INFINITY;
        for (uint32_t j = cur + 1; j <= limit; ++j) {
            if (j > cur + 1 && clr) /* narrowest skipped vertex */
                hw = fmin(hw, (double)clr[j - 1]);
            double half = isfinite(hw) ? hw : 0.0;
            const double *a = xy + 2 * (size_t)cur, *b = xy + 2 * (size_t)j;
            bool ok = !drivable || drivable(dctx, a[0], a[1], b[0], b[1], half, halong[cur]);
            if (ok && blk) {
                if (blk->blk && nm_sight_blocked(blk->blk, a[0], a[1], b[0], b[1]))
                    ok = false;
                else if (blk->on && nm_sight_off_mask(&blk->w->win, blk->on, a[0], a[1], b[0], b[1]))
                    ok = false;
            }
            if (!ok)
                break;
            best = j;
        }
        out[no++] = best; /* 6. */
        cur = best;
    }
    return no;
}
