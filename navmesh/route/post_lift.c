/* post_lift.c — per-point work on the pulled route (design article 后处理): LiftCorners (corners
 * moved up to 2 cells toward more clearance under the checks, stopping at the first layer
 * break), heights along the route (set-valued walk, nearest member) and per-point clearance. */
#include "post.h"

#include <math.h>
#include <string.h>

static float nearest_of(const float *set, uint32_t n, float ref)
{
    float best = set[0];
    for (uint32_t i = 1; i < n; ++i)
        if (fabsf(set[i] - ref) < fabsf(best - ref))
            best = set[i];
    return best;
}

/* SegCross: each segment's ends on both sides of the other's line (side > 0 vs side <= 0) */
static double side_of(const double *a, const double *b, const double *c)
{
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}
static bool seg_cross(const double *p, const double *q, const double *r, const double *s)
{
    return ((side_of(r, s, p) > 0) != (side_of(r, s, q) > 0)) &&
           ((side_of(p, q, r) > 0) != (side_of(p, q, s) > 0));
}

/* The walk of one segment from one height; the nearest member of the result, or NAN. */
static float walk_nearest(nm_sight_oracle *o, const double *a, const double *b, float h)
{
    double pts[4] = {a[0], a[1], b[0], b[1]};
    uint32_t n;
    /* the walk swaps the oracle's two sets: the result is where o->nxt pointed before it */
    float *out = o->nxt;
    if (!nm_sight_walk(o, pts, 2, &h, 1, false, out, &n) || n == 0)
        return NAN;
    return nearest_of(out, n, h);
}

typedef struct lift_cand {
    float d;
    uint32_t c;
} lift_cand;

/* Does cell c hold a usable span (NM_SP_REACH) within kQH of height h? (A window without span
 * bits, a test's, has every span usable.) */
static bool usable_near(const nm_window *w, uint32_t c, float h)
{
    if (!w->sp_bits)
        return true;
    uint32_t first, cnt = nm_span_cell_spans(&w->spans, c, &first);
    for (uint32_t s = first; s < first + cnt; ++s)
        if ((w->sp_bits[s] & NM_SP_REACH) && fabsf(w->spans.sp_h[s] - h) <= (float)NM_kQH)
            return true;
    return false;
}

/* 拐点抬升 (LiftCorners) */
uint32_t nm_post_lift_corners(const nm_window *w, nm_sight_view *hard, nm_sight_oracle *o,
                              double *xy, uint32_t n, float h_start, float *hsearch,
                              bool *hsearch_ok)
{
    if (hsearch_ok)
        *hsearch_ok = true;
    if (n < 3 || !w->dist)
        return 0;
    const int R = (int)lround(NM_kLiftMax / NM_kCS); /* 2 cells */
    const int32_t nx = w->win.nx, ny = w->win.ny;
    nm_sight_view hv = *hard;
    hv.layers = false; /* layers are check 4, done here from the departure height */
    uint32_t moved = 0;
    float hdep = h_start;
    for (uint32_t i = 1; i + 1 < n; ++i) {
        double *P = xy + 2 * (size_t)i;
        const double *A = P - 2, *B = P + 2;
        /* 1. the layer walk P_{i-1} -> P_i from the departure height; a break ends the lifting */
        float hnext = walk_nearest(o, A, P, hdep);
        if (isnan(hnext))
            break;
        int64_t ci = nm_sight_cell_trunc(P[0], w->win.x0), cj = nm_sight_cell_trunc(P[1], w->win.y0);
        if (ci < 0 || cj < 0 || ci >= nx || cj >= ny) {
            hdep = hnext;
            continue;
        }
        /* 2. here and keep */
        float here = w->dist[cj * nx + ci];
        double keep = fmin(nm_sight_seg_min_clr(w->dist, &w->win, A[0], A[1], P[0], P[1]),
                           nm_sight_seg_min_clr(w->dist, &w->win, P[0], P[1], B[0], B[1]));
        /* 3. candidates: clearance strictly above here, by clearance desc, then cell number */
        lift_cand cand[16];
        int nc = 0;
        for (int dy = -R; dy <= R; ++dy)
            for (int dx = -R; dx <= R; ++dx) {
                if (dx * dx + dy * dy == 0 || dx * dx + dy * dy > R * R)
                    continue;
                int64_t x = ci + dx, y = cj + dy;
                if (x < 0 || y < 0 || x >= nx || y >= ny)
                    continue;
                float d = w->dist[y * nx + x];
                if (!(d > here))
                    continue;
                lift_cand lc = {d, (uint32_t)(y * nx + x)};
                int k = nc++;
                while (k > 0 && (cand[k - 1].d < lc.d || (cand[k - 1].d == lc.d && cand[k - 1].c > lc.c))) {
                    cand[k] = cand[k - 1];
                    k--;
                }
                cand[k] = lc;
            }
        /* 4. the checks; the first candidate passing all replaces P_i */
        for (int k = 0; k < nc; ++k) {
            double W[2] = {w->win.x0 + ((double)(cand[k].c % (uint32_t)nx) + 0.5) * NM_kCS,
                           w->win.y0 + ((double)(cand[k].c / (uint32_t)nx) + 0.5) * NM_kCS};
            /* (1) not onto a neighbour */
            if (nm_hypot(W[0] - A[0], W[1] - A[1]) < 0.125 || nm_hypot(W[0] - B[0], W[1] - B[1]) < 0.125)
                continue;
            /* (2) clearance along the new chords */
            double m2 = fmin(nm_sight_seg_min_clr(w->dist, &w->win, A[0], A[1], W[0], W[1]),
                             nm_sight_seg_min_clr(w->dist, &w->win, W[0], W[1], B[0], B[1]));
            if (!(m2 >= keep - 1e-9))
                continue;
            /* (3) no crossing with the segments one further away */
            if (i >= 2 && seg_cross(W, B, A - 2, A))
                continue;
            if (i + 2 < n && seg_cross(A, W, B, B + 2))
                continue;
            /* (4) layer continuity on both new chords */
            float hw = walk_nearest(o, A, W, hdep);
            if (isnan(hw) || isnan(walk_nearest(o, W, B, hw)))
                continue;
            /* (5) vis_hard on both */
            if (!nm_sight_ok(&hv, A[0], A[1], W[0], W[1], 0, 0) ||
                !nm_sight_ok(&hv, W[0], W[1], B[0], B[1], 0, 0))
                continue;
            /* (6, issue 12) the corner lands on a usable span of its layer (the reach set), not on
             * one the bake sealed out of the span graph: a deck's rim under its railing, which the
             * planar clearance of a deck over its own ground cannot tell (large world leg 9) */
            if (!usable_near(w, cand[k].c, hw))
                continue;
            if (hsearch) { /* re-height on the same surface: nearest span within kQH */
                uint32_t first, cnt = nm_span_cell_spans(&w->spans, cand[k].c, &first);
                float best = NAN;
                for (uint32_t s = 0; s < cnt; ++s) {
                    float v = w->spans.sp_h[first + s];
                    if (fabsf(v - hsearch[i]) <= (float)NM_kQH &&
                        (isnan(best) || fabsf(v - hsearch[i]) < fabsf(best - hsearch[i])))
                        best = v;
                }
                if (isnan(best)) {
                    if (hsearch_ok)
                        *hsearch_ok = false;
                } else {
                    hsearch[i] = best;
                }
            }
            P[0] = W[0];
            P[1] = W[1];
            hnext = hw;
            moved++;
            break;
        }
        hdep = hnext;
    }
    return moved;
}

/* 逐点高度: heights along the route */
bool nm_post_heights_along(nm_sight_oracle *o, const double *xy, uint32_t n, float h_start,
                           float *h, float *scratch)
{
    if (n == 0)
        return true;
    h[0] = h_start;
    scratch[0] = h_start;
    uint32_t ns = 1;
    for (uint32_t k = 0; k + 1 < n; ++k) {
        uint32_t nn;
        if (!nm_sight_walk(o, xy + 2 * (size_t)k, 2, scratch, ns, false, scratch, &nn) || nn == 0)
            return false;
        ns = nn;
        h[k + 1] = nearest_of(scratch, ns, h[k]);
    }
    return true;
}

bool nm_post_heights_walk(nm_sight_oracle *o, const double *xy, uint32_t n, float h_start,
                          const double *pin, const float *hin, uint32_t m, float *h, float *scratch)
{
    if (n == 0)
        return true;
    if (m == 0 || !hin)
        return false;
    h[0] = h_start;
    scratch[0] = h_start;
    uint32_t ns = 1, pos = 0;
    for (uint32_t k = 0; k + 1 < n; ++k) {
        uint32_t nn;
        if (!nm_sight_walk(o, xy + 2 * (size_t)k, 2, scratch, ns, true, scratch, &nn) || nn == 0)
            return false;
        ns = nn;
        const double *p = xy + 2 * (size_t)(k + 1);
        uint32_t f = pos;
        double bd = INFINITY;
        for (uint32_t i = pos; i < m; ++i) { /* nearest pull input point, forward only */
            double d = nm_hypot(pin[2 * (size_t)i] - p[0], pin[2 * (size_t)i + 1] - p[1]);
            if (d < bd) {
                bd = d;
                f = i;
            }
        }
        if (k + 2 == n)
            f = m - 1; /* the goal: the search's goal span */
        pos = f;
        h[k + 1] = nearest_of(scratch, ns, hin[f]);
    }
    return true;
}

/* 逐点净空 */
void nm_post_clearance(const nm_window *w, const double *xy, uint32_t n, float *clr)
{
    for (uint32_t k = 0; k < n; ++k) {
        double fi = floor((xy[2 * k] - w->win.x0) / NM_kCS);
        double fj = floor((xy[2 * k + 1] - w->win.y0) / NM_kCS);
        fi = fmin(fmax(fi, 0), (double)w->win.nx - 1);
        fj = fmin(fmax(fj, 0), (double)w->win.ny - 1);
        float d = w->dist ? w->dist[(size_t)fj * (size_t)w->win.nx + (size_t)fi] : 0.0f;
        clr[k] = d < (float)NM_kEdtCap ? d : (float)NM_kEdtCap;
        if (!(clr[k] > 0))
            clr[k] = 0;
    }
}
