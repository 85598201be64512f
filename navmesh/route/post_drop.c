/* post_drop.c — drop margins (design article 落点留余量): ledge drops on the route are found by
 * following the upper surface along the polyline, and each landing is moved on the lower surface
 * away from the ledge foot to the first cell at least 4r from the upper surface (r = kFallRadius
 * times the zone's x scale), searched by 4-neighbour growth in order of distance. */
#include "post.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Span of cell c nearest to h within tol, or NAN. */
static float span_near(const nm_window *w, uint32_t c, float h, float tol)
{
    uint32_t first, cnt = nm_span_cell_spans(&w->spans, c, &first);
    float best = NAN;
    for (uint32_t s = 0; s < cnt; ++s) {
        float v = w->spans.sp_h[first + s];
        if (fabsf(v - h) <= tol && (isnan(best) || fabsf(v - h) < fabsf(best - h)))
            best = v;
    }
    return best;
}

static bool cell_floor(const nm_window *w, double x, double y, uint32_t *c)
{
    double fi = floor((x - w->win.x0) / NM_kCS), fj = floor((y - w->win.y0) / NM_kCS);
    if (!(fi >= 0 && fj >= 0 && fi < w->win.nx && fj < w->win.ny))
        return false;
    *c = (uint32_t)fj * (uint32_t)w->win.nx + (uint32_t)fi;
    return true;
}

/* 找台沿: follows the upper surface from point i-1. Returns the landing index, or 0 (skip);
 * *h_up gets the ledge height; heights of points passed on the upper surface are rewritten. */
static uint32_t find_ledge(const nm_window *w, const double *xy, uint32_t n, uint32_t i,
                           float *hd, float *hsearch, float *halong, float *h_up)
{
    float hu = hd[i - 1];
    for (uint32_t k = i; k < n - 1; ++k) {
        const double *a = xy + 2 * (size_t)(k - 1), *b = xy + 2 * (size_t)k;
        double L = nm_hypot(b[0] - a[0], b[1] - a[1]);
        long steps = (long)ceil(L / (NM_kCS / 4)); /* every 1/16 px */
        if (steps < 1)
            steps = 1;
        bool broke = false;
        for (long s = 0; s <= steps; ++s) {
            double t = (double)s / (double)steps;
            uint32_t c;
            float v = NAN;
            if (cell_floor(w, a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, &c))
                v = span_near(w, c, hu, (float)NM_kQH);
            if (isnan(v)) {
                broke = true;
                break;
            }
            hu = v;
        }
        *h_up = hu;
        if (broke) /* the upper surface ends inside this segment */
            return hu > hd[k] + (float)NM_kClimb ? k : 0;
        if (hu <= hd[k] + (float)NM_kClimb)
            return 0; /* a slope */
        /* the upper surface covers point k: it lies on the upper surface, continue */
        hd[k] = hu;
        if (hsearch)
            hsearch[k] = hu;
        if (halong)
            halong[k] = hu;
    }
    return 0; /* the upper surface reaches the point before the goal */
}

typedef struct heap_ent {
    double d;
    uint32_t c;
    float h;
} heap_ent;

static bool ent_less(const heap_ent *a, const heap_ent *b)
{
    return a->d < b->d || (a->d == b->d && a->c < b->c);
}

static void heap_push(heap_ent *hp, uint32_t *n, heap_ent e)
{
    uint32_t k = (*n)++;
    while (k > 0) {
        uint32_t p = (k - 1) / 2;
        if (!ent_less(&e, &hp[p]))
            break;
        hp[k] = hp[p];
        k = p;
    }
    hp[k] = e;
}

static heap_ent heap_pop(heap_ent *hp, uint32_t *n)
{
    heap_ent top = hp[0], last = hp[--(*n)];
    uint32_t k = 0;
    for (;;) {
        uint32_t l = 2 * k + 1, r = l + 1, m = k;
        const heap_ent *mv = &last;
        if (l < *n && ent_less(&hp[l], mv)) { m = l; mv = &hp[l]; }
        if (r < *n && ent_less(&hp[r], mv)) { m = r; }
        if (m == k)
            break;
        hp[k] = hp[m];
        k = m;
    }
    if (*n > 0)
        hp[k] = last;
    return top;
}

/* Distance from the centre of cell c (surface h) to the nearest upper-surface cell square within
 * `reach` px: cells with a span v, h + kClimb < v <= h_up + kClimb. +inf when none. */
static double upper_dist(const nm_window *w, uint32_t c, float h, float h_up, double reach)
{
    const int32_t nx = w->win.nx, ny = w->win.ny;
    int32_t ci = (int32_t)(c % (uint32_t)nx), cj = (int32_t)(c / (uint32_t)nx);
    int32_t R = (int32_t)ceil(reach / NM_kCS) + 1;
    double best = INFINITY;
    for (int32_t j = cj - R; j <= cj + R; ++j) {
        if (j < 0 || j >= ny)
            continue;
        for (int32_t i = ci - R; i <= ci + R; ++i) {
            if (i < 0 || i >= nx)
                continue;
            double gx = fmax(0.0, fabs((double)(i - ci)) - 0.5) * NM_kCS;
            double gy = fmax(0.0, fabs((double)(j - cj)) - 0.5) * NM_kCS;
            double d = nm_hypot(gx, gy);
            if (d >= best)
                continue;
            uint32_t first, cnt = nm_span_cell_spans(&w->spans, (uint32_t)(j * nx + i), &first);
            for (uint32_t s = 0; s < cnt; ++s) {
                float v = w->spans.sp_h[first + s];
                if (v > h + (float)NM_kClimb && v <= h_up + (float)NM_kClimb) {
                    best = d;
                    break;
                }
            }
        }
    }
    return best;
}

/* 落点留余量 */
int nm_post_drop_margins(const nm_window *w, nm_sight_oracle *o, double *xy, uint32_t n,
                         double scale_x, float h_start, float *hsearch, float *halong, float *clr,
                         nm_post_drop *drops, uint32_t *ndrops, nm_error *err)
{
    *ndrops = 0;
    if (scale_x == 0 || n < 3)
        return NM_OK; /* scale 0: the whole step is skipped */
    if (!isfinite(scale_x))
        return nm_fail(err, NM_ERR_ARG, "drop margins: non-finite zone scale");
    const double r = NM_kFallRadius * fabs(scale_x), target = 4 * r, grow = 8 * r;
    /* decision heights: search heights, else heights along, else a drop-mode walk */
    float *hd = nm_malloc((size_t)n * sizeof *hd);
    if (!hd)
        return nm_fail(err, NM_ERR_NOMEM, "drop margins: %u heights", n);
    if (hsearch) {
        memcpy(hd, hsearch, (size_t)n * sizeof *hd);
    } else if (halong) {
        memcpy(hd, halong, (size_t)n * sizeof *hd);
    } else {
        float *set = nm_malloc((size_t)o->cap * sizeof *set);
        if (!set) {
            nm_free(hd);
            return nm_fail(err, NM_ERR_NOMEM, "drop margins: height set");
        }
        uint32_t ns = 1;
        set[0] = hd[0] = h_start;
        for (uint32_t k = 0; k + 1 < n; ++k) {
            uint32_t nn = 0;
            nm_sight_walk(o, xy + 2 * (size_t)k, 2, set, ns, true, set, &nn);
            if (nn == 0) { /* cannot happen in drop mode; keep the old height */
                hd[k + 1] = hd[k];
                continue;
            }
            ns = nn;
            float best = set[0];
            for (uint32_t s = 1; s < ns; ++s)
                if (fabsf(set[s] - hd[k]) < fabsf(best - hd[k]))
                    best = set[s];
            hd[k + 1] = best;
        }
        nm_free(set);
    }
    /* the growth box: cells within 8r of the landing */
    int32_t B = (int32_t)ceil(grow / NM_kCS) + 2;
    size_t box = (size_t)(2 * B + 1) * (size_t)(2 * B + 1);
    heap_ent *heap = nm_malloc(box * sizeof *heap);
    uint32_t *seen = nm_calloc(box, sizeof *seen);
    if (!heap || !seen) {
        nm_free(hd);
        nm_free(heap);
        nm_free(seen);
        return nm_fail(err, NM_ERR_NOMEM, "drop margins: growth box of %zu cells", box);
    }
    uint32_t stamp = 0;
    const int32_t nx = w->win.nx, ny = w->win.ny;
    for (uint32_t i = 1; i + 1 < n; ++i) {
        const double *pa = xy + 2 * (size_t)(i - 1), *pb = xy + 2 * (size_t)i;
        if (!(hd[i - 1] - hd[i] > (float)NM_kClimb) || (pa[0] == pb[0] && pa[1] == pb[1]))
            continue;
        float h_up;
        uint32_t L = find_ledge(w, xy, n, i, hd, hsearch, halong, &h_up);
        if (L == 0)
            continue;
        double ox = xy[2 * L], oy = xy[2 * L + 1];
        uint32_t c0;
        float h0 = NAN;
        if (cell_floor(w, ox, oy, &c0))
            h0 = span_near(w, c0, hd[L], (float)NM_kQH);
        if (!isnan(h0)) {
            /* 1-3. grow on the lower surface by distance; take the first cell >= 4r away */
            int32_t i0 = (int32_t)(c0 % (uint32_t)nx), j0 = (int32_t)(c0 / (uint32_t)nx);
            if (++stamp == 0) {
                memset(seen, 0, box * sizeof *seen);
                stamp = 1;
            }
            uint32_t nh = 0;
            heap_ent start = {0.0, c0, h0};
            heap_push(heap, &nh, start);
            seen[(size_t)B * (size_t)(2 * B + 1) + (size_t)B] = stamp;
            uint32_t best_c = c0;
            float best_h = h0;
            double best_d = -1;
            const double *nxt = xy + 2 * (size_t)(L + 1);
            while (nh > 0) {
                heap_ent e = heap_pop(heap, &nh);
                double cx = w->win.x0 + ((double)(e.c % (uint32_t)nx) + 0.5) * NM_kCS;
                double cy = w->win.y0 + ((double)(e.c / (uint32_t)nx) + 0.5) * NM_kCS;
                bool walk_ok = e.c == c0 ||
                               nm_sight_layers_ok(o, cx, cy, nxt[0], nxt[1], e.h, hd[L + 1]);
                if (walk_ok) {
                    double du = upper_dist(w, e.c, e.h, h_up, target);
                    if (du >= target) {
                        best_c = e.c;
                        best_h = e.h;
                        break;
                    }
                    if (du > best_d) {
                        best_d = du;
                        best_c = e.c;
                        best_h = e.h;
                    }
                }
                /* unwalkable cells still grow outward */
                int32_t ei = (int32_t)(e.c % (uint32_t)nx), ej = (int32_t)(e.c / (uint32_t)nx);
                static const int d4x[4] = {1, -1, 0, 0}, d4y[4] = {0, 0, 1, -1};
                for (int k = 0; k < 4; ++k) {
                    int32_t a = ei + d4x[k], b = ej + d4y[k];
                    if (a < 0 || b < 0 || a >= nx || b >= ny || abs(a - i0) > B || abs(b - j0) > B)
                        continue;
                    size_t si = (size_t)(b - j0 + B) * (size_t)(2 * B + 1) + (size_t)(a - i0 + B);
                    if (seen[si] == stamp)
                        continue;
                    double ax = w->win.x0 + (a + 0.5) * NM_kCS, ay = w->win.y0 + (b + 0.5) * NM_kCS;
                    double dd = nm_hypot(ax - ox, ay - oy);
                    if (dd > grow)
                        continue;
                    uint32_t nc = (uint32_t)(b * nx + a);
                    float hv = span_near(w, nc, e.h, (float)NM_kQH);
                    if (isnan(hv))
                        continue;
                    seen[si] = stamp;
                    heap_ent ne = {dd, nc, hv};
                    heap_push(heap, &nh, ne);
                }
            }
            if (best_c != c0) { /* 4. moved: the new cell's centre, surface and clearance */
                xy[2 * L] = w->win.x0 + ((double)(best_c % (uint32_t)nx) + 0.5) * NM_kCS;
                xy[2 * L + 1] = w->win.y0 + ((double)(best_c / (uint32_t)nx) + 0.5) * NM_kCS;
                if (clr && w->dist) {
                    float d = w->dist[best_c];
                    clr[L] = d < (float)NM_kEdtCap ? d : (float)NM_kEdtCap;
                }
            }
            hd[L] = best_h;
        }
        /* 4. the drop table: (landing, lower surface height) */
        drops[(*ndrops)++] = (nm_post_drop){L, hd[L]};
        if (hsearch)
            hsearch[L] = hd[L];
        if (halong)
            halong[L] = hd[L];
        i = L; /* the next candidate follows the landing */
    }
    (void)ny;
    nm_free(hd);
    nm_free(heap);
    nm_free(seen);
    return NM_OK;
}
