/* raster.c — turns walkable triangles into height samples on the cells of a window (design
 * article 预烘场 / 栅格化) and bridges one-cell seams between meshes (补缝). Also owns the
 * sample list and the window checks the other operators share. */
#include "grid/grid.h"

#include <math.h>
#include <string.h>

int nm_grid_window_check(const nm_grid_window *w, nm_error *err)
{
    if (!w)
        return nm_fail(err, NM_ERR_ARG, "grid window: missing");
    if (!isfinite(w->x0) || !isfinite(w->y0))
        return nm_fail(err, NM_ERR_ARG, "grid window: origin is not finite");
    if (w->nx < 1 || w->ny < 1)
        return nm_fail(err, NM_ERR_ARG, "grid window: size %d x %d cells", (int)w->nx, (int)w->ny);
    if ((uint64_t)w->nx * (uint64_t)w->ny > NM_GRID_MAX_CELLS)
        return nm_fail(err, NM_ERR_ARG, "grid window: %d x %d cells exceeds the cell limit",
                       (int)w->nx, (int)w->ny);
    return NM_OK;
}

/* ---- sample list ---------------------------------------------------------------------------- */

int nm_grid_samples_reserve(nm_grid_samples *s, size_t more, nm_error *err)
{
    if (s->cap - s->n >= more)
        return NM_OK;
    size_t need = s->n + more;
    if (need < s->n || need > UINT32_MAX)
        return nm_fail(err, NM_ERR_NOMEM, "grid samples: more than 2^32 samples");
    size_t cap = s->cap ? s->cap : 1024;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint32_t *c = nm_realloc(s->cell, cap * sizeof *c);
    if (!c)
        return nm_fail(err, NM_ERR_NOMEM, "grid samples: cell column of %zu", cap);
    s->cell = c;
    float *h = nm_realloc(s->h, cap * sizeof *h);
    if (!h)
        return nm_fail(err, NM_ERR_NOMEM, "grid samples: height column of %zu", cap);
    s->h = h;
    uint8_t *in = nm_realloc(s->ins, cap);
    if (!in)
        return nm_fail(err, NM_ERR_NOMEM, "grid samples: ins column of %zu", cap);
    s->ins = in;
    s->cap = cap;
    return NM_OK;
}

int nm_grid_samples_push(nm_grid_samples *s, uint32_t cell, float h, uint8_t ins, nm_error *err)
{
    int rc = nm_grid_samples_reserve(s, 1, err);
    if (rc)
        return rc;
    s->cell[s->n] = cell;
    s->h[s->n] = h;
    s->ins[s->n] = ins;
    s->n++;
    return NM_OK;
}

void nm_grid_samples_free(nm_grid_samples *s)
{
    if (!s)
        return;
    nm_free(s->cell);
    nm_free(s->h);
    nm_free(s->ins);
    memset(s, 0, sizeof *s);
}

/* ---- Rasterize ------------------------------------------------------------------------------ */

#define HALF_CELL (0.5 * NM_kCS) /* half-width of a cell square, px */
#define BARY_EPS 1e-12           /* ins tolerance and the zero-area denominator */

/* fmin / fmax without the libm call (the raster's hottest helpers): a NaN operand gives the
 * other one, as fmin does; only the sign of a zero may differ, which no caller can see (they
 * compare, or floor after subtracting the window origin). */
static inline double mn(double a, double b) { return (b < a || a != a) ? b : a; }
static inline double mx(double a, double b) { return (b > a || a != a) ? b : a; }
static double min3(double a, double b, double c) { return mn(a, mn(b, c)); }
static double max3(double a, double b, double c) { return mx(a, mx(b, c)); }
static double cross2(double ax, double ay, double bx, double by) { return ax * by - ay * bx; }

/* Closed-interval overlap of [lo, hi] with [-r, r]. */
static bool meets(double lo, double hi, double r) { return lo <= r && hi >= -r; }

/* 2-D separating-axis test of the triangle (relative to the cell centre) against the cell square:
 * the two coordinate axes and the three edge normals, all closed. */
static bool sat_hits(const double x[3], const double y[3])
{
    if (!meets(min3(x[0], x[1], x[2]), max3(x[0], x[1], x[2]), HALF_CELL))
        return false;
    if (!meets(min3(y[0], y[1], y[2]), max3(y[0], y[1], y[2]), HALF_CELL))
        return false;
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3;
        double nx = -(y[k1] - y[k]), ny = x[k1] - x[k];
        double p0 = nx * x[0] + ny * y[0];
        double p1 = nx * x[1] + ny * y[1];
        double p2 = nx * x[2] + ny * y[2];
        double r = HALF_CELL * (fabs(nx) + fabs(ny));
        if (!meets(min3(p0, p1, p2), max3(p0, p1, p2), r))
            return false;
    }
    return true;
}

/* Cell range [lo, hi] of a coordinate range by floor, clamped to [0, n-1]; false when empty. */
static bool scan_range(double lo_px, double hi_px, double origin, int32_t n, int64_t *lo,
                       int64_t *hi)
{
    double a = floor((lo_px - origin) / NM_kCS), b = floor((hi_px - origin) / NM_kCS);
    if (b < 0.0 || a > (double)(n - 1))
        return false;
    *lo = a < 0.0 ? 0 : (int64_t)a;
    *hi = b > (double)(n - 1) ? n - 1 : (int64_t)b;
    return *lo <= *hi;
}

int nm_grid_rasterize(const nm_grid_window *win, const nm_grid_mesh *mesh, nm_grid_samples *out,
                      nm_error *err)
{
    int rc = nm_grid_window_check(win, err);
    if (rc)
        return rc;
    if (!mesh || !out || (mesh->ntris && (!mesh->tris || !mesh->verts)))
        return nm_fail(err, NM_ERR_ARG, "Rasterize: missing mesh or output");
    for (size_t t = 0; t < mesh->ntris; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t v = mesh->tris[3 * t + k];
            if (v >= mesh->nverts)
                return nm_fail(err, NM_ERR_ARG, "Rasterize: triangle %zu: vertex %d index %u >= %zu",
                               t, k, (unsigned)v, mesh->nverts);
            const float *p = mesh->verts + 3 * (size_t)v;
            if ((!mesh->walkable || mesh->walkable[t]) &&
                (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])))
                return nm_fail(err, NM_ERR_ARG, "Rasterize: triangle %zu: vertex %u is not finite",
                               t, (unsigned)v);
        }
    const int32_t nx = win->nx;

    for (size_t t = 0; t < mesh->ntris; t++) {
        if (mesh->walkable && !mesh->walkable[t])
            continue;
        const float *A = mesh->verts + 3 * (size_t)mesh->tris[3 * t];
        const float *B = mesh->verts + 3 * (size_t)mesh->tris[3 * t + 1];
        const float *C = mesh->verts + 3 * (size_t)mesh->tris[3 * t + 2];
        int64_t i0, i1, j0, j1;
        if (!scan_range(min3(A[0], B[0], C[0]), max3(A[0], B[0], C[0]), win->x0, nx, &i0, &i1) ||
            !scan_range(min3(A[1], B[1], C[1]), max3(A[1], B[1], C[1]), win->y0, win->ny, &j0, &j1))
            continue;
        /* Reserve the whole scan range up front: no allocation inside the cell loop. */
        rc = nm_grid_samples_reserve(out, (size_t)(i1 - i0 + 1) * (size_t)(j1 - j0 + 1), err);
        if (rc)
            return rc;
        double e1x = (double)B[0] - A[0], e1y = (double)B[1] - A[1];
        double e2x = (double)C[0] - A[0], e2y = (double)C[1] - A[1];
        double D = cross2(e1x, e1y, e2x, e2y);
        if (fabs(D) < BARY_EPS)
            D = BARY_EPS; /* vertical triangle: clamping puts h on a vertex or an edge */
        double dhB = (double)B[2] - A[2], dhC = (double)C[2] - A[2];
        /* A cell whose centre lies inside the triangle meets it on every axis (the separating
         * gap would have to exceed half a cell), so the test is skipped there: the same cells,
         * at a fraction of the cost inside large triangles. Not on near-degenerate ones. */
        const bool fast = fabs(D) >= 1e-6;
        const double sD = D < 0.0 ? -1.0 : 1.0, aD = fabs(D);
        for (int64_t j = j0; j <= j1; j++) {
            double cy = win->y0 + ((double)j + 0.5) * NM_kCS;
            for (int64_t i = i0; i <= i1; i++) {
                double cx = win->x0 + ((double)i + 0.5) * NM_kCS;
                double qx = cx - A[0], qy = cy - A[1];
                double ub = cross2(qx, qy, e2x, e2y), vc = cross2(e1x, e1y, qx, qy);
                if (!(fast && sD * ub >= 0.0 && sD * vc >= 0.0 && sD * (ub + vc) <= aD)) {
                    double x[3] = {A[0] - cx, B[0] - cx, C[0] - cx};
                    double y[3] = {A[1] - cy, B[1] - cy, C[1] - cy};
                    if (!sat_hits(x, y))
                        continue;
                }
                double tb = ub / D;
                double sc = vc / D;
                uint8_t ins = tb >= -BARY_EPS && sc >= -BARY_EPS && tb + sc <= 1.0 + BARY_EPS;
                tb = tb < 0.0 ? 0.0 : (tb > 1.0 ? 1.0 : tb);
                sc = sc < 0.0 ? 0.0 : (sc > 1.0 - tb ? 1.0 - tb : sc);
                double h = A[2] + tb * dhB + sc * dhC;
                size_t n = out->n++;
                out->cell[n] = (uint32_t)(j * nx + i);
                out->h[n] = (float)h;
                out->ins[n] = ins;
            }
        }
    }

    /* Second pass: one more sample at each triangle's centroid cell pulls the merged span height
     * toward the triangle's centre height. */
    rc = nm_grid_samples_reserve(out, mesh->ntris, err);
    if (rc)
        return rc;
    for (size_t t = 0; t < mesh->ntris; t++) {
        if (mesh->walkable && !mesh->walkable[t])
            continue;
        const float *A = mesh->verts + 3 * (size_t)mesh->tris[3 * t];
        const float *B = mesh->verts + 3 * (size_t)mesh->tris[3 * t + 1];
        const float *C = mesh->verts + 3 * (size_t)mesh->tris[3 * t + 2];
        double gx = (((double)A[0] + B[0]) + C[0]) / 3.0;
        double gy = (((double)A[1] + B[1]) + C[1]) / 3.0;
        double fi = trunc((gx - win->x0) / NM_kCS), fj = trunc((gy - win->y0) / NM_kCS);
        if (!(fi >= 0.0 && fi < (double)nx && fj >= 0.0 && fj < (double)win->ny))
            continue;
        double h = (((double)A[2] + B[2]) + C[2]) / 3.0;
        size_t n = out->n++;
        out->cell[n] = (uint32_t)((int64_t)fj * nx + (int64_t)fi);
        out->h[n] = (float)h;
        out->ins[n] = 0;
    }
    return NM_OK;
}

/* ---- AppendSeamBridge ----------------------------------------------------------------------- */

/* Best pair across the gap between cells a and b (both occupied in pre): smallest |dh|, first
 * found on ties. Returns false when the best pair differs by more than kClimb, or when the gate
 * refuses it. */
bool nm_grid_seam_pair(const nm_span_table *t, uint32_t a, uint32_t b, double *h_a, double *h_b)
{
    uint32_t fa, fb;
    uint32_t na = nm_span_cell_spans(t, a, &fa), nb = nm_span_cell_spans(t, b, &fb);
    double best = INFINITY;
    *h_a = *h_b = 0.0;
    for (uint32_t u = 0; u < na; u++)
        for (uint32_t v = 0; v < nb; v++) {
            double d = fabs((double)t->sp_h[fa + u] - (double)t->sp_h[fb + v]);
            if (d < best) {
                best = d;
                *h_a = t->sp_h[fa + u];
                *h_b = t->sp_h[fb + v];
            }
        }
    return best <= NM_kClimb;
}

static bool bridge_height(const nm_span_table *pre, uint32_t a, uint32_t b, nm_grid_bridge_gate gate,
                          void *gate_ctx, float *h)
{
    double ha, hb;
    if (!nm_grid_seam_pair(pre, a, b, &ha, &hb))
        return false;
    if (gate && gate(gate_ctx, a, ha, b, hb))
        return false;
    *h = (float)((ha + hb) / 2.0);
    return true;
}

static bool occupied(const nm_span_table *t, uint32_t c)
{
    return (t->occ_bits[c >> 6] >> (c & 63)) & 1u;
}

int nm_grid_append_seam_bridge(const nm_span_table *pre, nm_grid_samples *samples, nm_error *err)
{
    return nm_grid_append_seam_bridge_gated(pre, samples, NULL, NULL, err);
}

int nm_grid_append_seam_bridge_gated(const nm_span_table *pre, nm_grid_samples *samples,
                                     nm_grid_bridge_gate gate, void *gate_ctx, nm_error *err)
{
    if (!pre || !samples)
        return nm_fail(err, NM_ERR_ARG, "AppendSeamBridge: missing table or samples");
    /* k_b = rint(0.5 / kCS) - 1 = 1: only single-cell gaps qualify (d_l = d_r = 1). */
    const int32_t nx = pre->win.nx, ny = pre->win.ny;
    /* Round 0 counts the bridges so the samples grow once; round 1 appends them. */
    size_t count = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            int rc = nm_grid_samples_reserve(samples, count, err);
            if (rc)
                return rc;
        }
        for (int pass = 0; pass < 2; pass++) {
            int dx = pass == 0 ? 1 : 0, dy = pass == 0 ? 0 : 1;
            for (int32_t j = dy; j < ny - dy; j++)
                for (int32_t i = dx; i < nx - dx; i++) {
                    uint32_t c = (uint32_t)j * (uint32_t)nx + (uint32_t)i;
                    uint32_t a = c - (uint32_t)(dy * nx + dx), b = c + (uint32_t)(dy * nx + dx);
                    float h;
                    if (occupied(pre, c) || !occupied(pre, a) || !occupied(pre, b) ||
                        !bridge_height(pre, a, b, gate, gate_ctx, &h))
                        continue;
                    if (round == 0) {
                        count++;
                        continue;
                    }
                    size_t n = samples->n++;
                    samples->cell[n] = c;
                    samples->h[n] = h;
                    samples->ins[n] = 0;
                }
        }
    }
    return NM_OK;
}
