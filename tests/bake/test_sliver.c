/* test_sliver.c — the Recast path's sliver split (tools/navbake/sliver.h, issue 12): a sliver on
 * a 41° slope, rasterised as is, gives cells a height metres off the slope (Rasterize's clamped
 * barycentric point lands at a far vertex); split, every sample stays near the slope, the surface
 * and its area are unchanged, the mesh stays conforming (no vertex inside another triangle's edge)
 * and flat slivers and fat triangles are left alone. A thin triangle on a steep slope that is no
 * sliver by the ratio is cut too, on the zone's cells, when its clamped samples land kStepUp off. */
#include "base/base.h"
#include "grid/grid.h"
#include "sliver.h"

#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#define SLOPE 0.87 /* tan 41° */

static const nm_sliver_grid kUnitGrid = {1, 0, 1, 0}; /* u = x, v = -z: 0.25 m cells */

static float *dup_f(const float *a, size_t n)
{
    float *p = nm_malloc(n * sizeof *p);
    cr_assert(p);
    memcpy(p, a, n * sizeof *p);
    return p;
}

static uint32_t *dup_u(const uint32_t *a, size_t n)
{
    uint32_t *p = nm_malloc(n * sizeof *p);
    cr_assert(p);
    memcpy(p, a, n * sizeof *p);
    return p;
}

/* World x, y (up), z. The needle A B C climbs the slope y = SLOPE x; two fat neighbours share its
 * long edges, the one across A-B through its own copies of A and B (Recast gives each polygon its
 * own vertices). A flat needle at y = 5 stands apart. */
static const float kV[] = {
    0, 0, 0,                      /* 0 A */
    3, 3 * SLOPE, 0.12f,          /* 1 B */
    3, 3 * SLOPE, -0.06f,         /* 2 C */
    1.5f, 1.5f * SLOPE, 1.2f,     /* 3 D */
    1.5f, 1.5f * SLOPE, -1.2f,    /* 4 E */
    0, 0, 0,                      /* 5 copy of A */
    3, 3 * SLOPE, 0.12f,          /* 6 copy of B */
    10, 5, 0, 13, 5, 0.1f, 13, 5, -0.05f, /* 7 8 9 flat needle */
};
static const uint32_t kT[] = {0, 1, 2, 5, 3, 6, 0, 2, 4, 7, 8, 9};
#define NV 10u
#define NT 4u

/* Largest |sample height - surface height at the cell centre| over the rasterised mesh (u = x,
 * v = z, h = y; 0.25 m cells). */
static double worst_sample(const float *v, uint32_t nv, const uint32_t *t, uint32_t nt)
{
    float *g = nm_malloc(sizeof(float) * 3 * nv);
    cr_assert(g);
    for (uint32_t i = 0; i < nv; i++) {
        g[3 * i] = v[3 * i];
        g[3 * i + 1] = v[3 * i + 2];
        g[3 * i + 2] = v[3 * i + 1];
    }
    nm_grid_window w = {.x0 = -1.0, .y0 = -2.0, .nx = 64, .ny = 16};
    nm_grid_mesh m = {.verts = g, .nverts = nv, .tris = t, .ntris = nt};
    nm_grid_samples s = {0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_rasterize(&w, &m, &s, &err), NM_OK, "%s", err.msg);
    cr_assert_gt(s.n, 0);
    double worst = 0.0;
    for (size_t i = 0; i < s.n; i++) {
        double cx = w.x0 + ((double)(s.cell[i] % (uint32_t)w.nx) + 0.5) * NM_kCS;
        double want = cx > 8.0 ? 5.0 : SLOPE * cx;
        worst = fmax(worst, fabs((double)s.h[i] - want));
    }
    nm_grid_samples_free(&s);
    nm_free(g);
    return worst;
}

static double plan_area(const float *v, const uint32_t *t, uint32_t nt)
{
    double a = 0.0;
    for (uint32_t i = 0; i < nt; i++) {
        const float *p = v + 3 * t[3 * i], *q = v + 3 * t[3 * i + 1], *r = v + 3 * t[3 * i + 2];
        a += fabs(((double)q[0] - p[0]) * ((double)r[2] - p[2]) - ((double)q[2] - p[2]) * ((double)r[0] - p[0])) / 2;
    }
    return a;
}

Test(sliver, raw_needle_puts_cells_off_the_slope)
{
    /* The case the split is for: without it a cell the needle only touches is over a metre off. */
    cr_assert_gt(worst_sample(kV, NV, kT, NT), 1.0);
}

Test(sliver, split_keeps_samples_on_the_slope)
{
    float *v = dup_f(kV, 3 * NV);
    uint32_t *t = dup_u(kT, 3 * NT);
    uint8_t *ar = nm_calloc(NT, 1);
    uint32_t nv = NV, nt = NT;
    int changed = 0;
    double area0 = plan_area(v, t, nt);
    cr_assert_eq(nm_bake_split_slivers(&v, &nv, &t, &ar, &nt, &kUnitGrid, &changed), NM_OK);
    cr_assert_eq(changed, 1);
    cr_assert_gt(nt, NT);
    /* Measured: 1.78 m unsplit, 0.435 m split (two cells of the 0.87 slope); the fat neighbours
     * alone give 0.26 m. */
    double worst = worst_sample(v, nv, t, nt);
    cr_assert_lt(worst, 0.5, "worst sample %.3f m off the surface", worst);
    cr_assert_float_eq(plan_area(v, t, nt), area0, 1e-4);
    uint32_t flat = 0;
    for (uint32_t i = 0; i < nv; i++)
        if (v[3 * i] < 8.0f) cr_assert_float_eq(v[3 * i + 1], SLOPE * v[3 * i], 1e-4, "vertex %u off the slope", i);
    for (uint32_t i = 0; i < nt; i++) flat += v[3 * t[3 * i]] > 8.0f;
    cr_assert_eq(flat, 1, "the flat needle is left whole");
    /* Conforming: no vertex strictly inside an edge of a triangle (a T-junction would cut the
     * neighbour links and the weld's shared edges). */
    for (uint32_t i = 0; i < nt; i++)
        for (int k = 0; k < 3; k++) {
            const float *a = v + 3 * t[3 * i + k], *b = v + 3 * t[3 * i + (k + 1) % 3];
            double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2], l2 = ex * ex + ez * ez;
            for (uint32_t j = 0; j < nv; j++) {
                const float *p = v + 3 * j;
                double px = (double)p[0] - a[0], pz = (double)p[2] - a[2];
                double u = (px * ex + pz * ez) / l2, d = fabs(px * ez - pz * ex) / sqrt(l2);
                cr_assert(!(u > 1e-6 && u < 1 - 1e-6 && d < 1e-5), "vertex %u inside edge %u.%d", j, i, k);
            }
        }
    nm_free(v);
    nm_free(t);
    nm_free(ar);
}

Test(sliver, fat_triangles_left_alone)
{
    /* Only the two fat neighbours: nothing to split, the arrays stay as they are. */
    float *v = dup_f(kV, 3 * NV);
    uint32_t *t = dup_u(kT + 3, 6);
    uint8_t *ar = nm_calloc(2, 1);
    uint32_t nv = NV, nt = 2;
    int changed = 1;
    float *v0 = v;
    cr_assert_eq(nm_bake_split_slivers(&v, &nv, &t, &ar, &nt, &kUnitGrid, &changed), NM_OK);
    cr_assert_eq(changed, 0);
    cr_assert_eq(nt, 2);
    cr_assert_eq(nv, NV);
    cr_assert_eq(v, v0);
    cr_assert_eq(memcmp(t, kT + 3, 6 * sizeof *t), 0);
    nm_free(v);
    nm_free(t);
    nm_free(ar);
}

/* Two triangles of recast-undulating's walkable mesh at 0.71 px/m (a 42° slope), in px and metres,
 * moved by whole cells to the origin. The second is thin (longest edge 2.55 px, five times its
 * height over it) but no sliver by kSliverRatio; a cell it only touches, centre (1.125, 0.875) px,
 * got its clamped sample 0.88 m under the slope, and routes stood on that span (audit
 * wrong_height, seed 41 leg 22). */
static const double kSteepPx[6][3] = {
    {0.514, 0.217, -1.864}, {1.435, -2.604, 1.66}, {1.997, -1.831, 0.76},
    {1.997, -1.831, 0.76},  {0.939, 0.486, -2.089}, {0.514, 0.217, -1.864},
};
static const nm_sliver_grid kGrid071 = {0.71, 0, 0.71, 0};

/* Height of the mesh (px triangles) at p: the triangle holding p, else its outline's nearest. */
static double mesh_height(const float *g, const uint32_t *t, uint32_t nt, double pu, double pv)
{
    double best = INFINITY, h = 0.0;
    for (uint32_t i = 0; i < nt; i++) {
        const float *a = g + 3 * t[3 * i], *b = g + 3 * t[3 * i + 1], *c = g + 3 * t[3 * i + 2];
        double e1u = b[0] - a[0], e1v = b[1] - a[1], e2u = c[0] - a[0], e2v = c[1] - a[1];
        double D = e1u * e2v - e1v * e2u, qu = pu - a[0], qv = pv - a[1];
        double s1 = (qu * e2v - qv * e2u) / D, s2 = (e1u * qv - e1v * qu) / D;
        if (s1 >= 0 && s2 >= 0 && s1 + s2 <= 1) return a[2] + s1 * (b[2] - a[2]) + s2 * (c[2] - a[2]);
        const float *q[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            const float *x = q[k], *y = q[(k + 1) % 3];
            double du = y[0] - x[0], dv = y[1] - x[1];
            double f = fmin(fmax(((pu - x[0]) * du + (pv - x[1]) * dv) / (du * du + dv * dv), 0), 1);
            double d = hypot(x[0] + f * du - pu, x[1] + f * dv - pv);
            if (d < best) { best = d; h = x[2] + f * (y[2] - x[2]); }
        }
    }
    return h;
}

/* Largest |sample - mesh height at the cell centre| of the world mesh rasterised on grid gr. */
static double worst_on_grid(const float *v, uint32_t nv, const uint32_t *t, uint32_t nt,
                            const nm_sliver_grid *gr)
{
    float *g = nm_malloc(sizeof(float) * 3 * nv);
    cr_assert(g);
    for (uint32_t i = 0; i < nv; i++) {
        g[3 * i] = (float)(gr->sx * v[3 * i] + gr->tx);
        g[3 * i + 1] = (float)(gr->ty - gr->sz * v[3 * i + 2]);
        g[3 * i + 2] = v[3 * i + 1];
    }
    nm_grid_window w = {.x0 = -1.0, .y0 = -4.0, .nx = 32, .ny = 32}; /* on the kCS lattice */
    nm_grid_mesh m = {.verts = g, .nverts = nv, .tris = t, .ntris = nt};
    nm_grid_samples s = {0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_rasterize(&w, &m, &s, &err), NM_OK, "%s", err.msg);
    double worst = 0.0;
    for (size_t i = 0; i < s.n; i++) {
        double pu = w.x0 + ((double)(s.cell[i] % (uint32_t)w.nx) + 0.5) * NM_kCS;
        double pv = w.y0 + ((double)(s.cell[i] / (uint32_t)w.nx) + 0.5) * NM_kCS;
        worst = fmax(worst, fabs((double)s.h[i] - mesh_height(g, t, nt, pu, pv)));
    }
    nm_grid_samples_free(&s);
    nm_free(g);
    return worst;
}

Test(sliver, thin_triangle_on_a_steep_slope_is_split_on_the_zone_cells)
{
    uint32_t nv = 6, nt = 2;
    float *v = nm_malloc(sizeof(float) * 3 * nv);
    uint32_t *t = nm_malloc(sizeof(uint32_t) * 3 * nt);
    uint8_t *ar = nm_calloc(nt, 1);
    cr_assert(v && t && ar);
    for (uint32_t i = 0; i < nv; i++) { /* world x, y (up), z from px: u = 0.71 x, v = -0.71 z */
        v[3 * i] = (float)(kSteepPx[i][0] / kGrid071.sx);
        v[3 * i + 1] = (float)kSteepPx[i][2];
        v[3 * i + 2] = (float)(-kSteepPx[i][1] / kGrid071.sz);
        t[i] = i;
    }
    /* Measured: 0.90 m as baked before (the ratio rule leaves both whole: this test fails
     * without the clamp rule), 0.48 m split into 27 triangles. */
    const double before = worst_on_grid(v, nv, t, nt, &kGrid071);
    cr_assert_gt(before, 0.8, "the thin triangle's clamped sample: %.3f m", before);
    int changed = 0;
    cr_assert_eq(nm_bake_split_slivers(&v, &nv, &t, &ar, &nt, &kGrid071, &changed), NM_OK);
    cr_assert_eq(changed, 1);
    const double after = worst_on_grid(v, nv, t, nt, &kGrid071);
    cr_assert_lt(after, NM_kStepUp, "worst sample %.3f m off the mesh after the split", after);
    /* The same shapes on a gentle slope (a tenth of the rise): no clamp lands kStepUp off. */
    uint32_t nv2 = 6, nt2 = 2;
    float *v2 = nm_malloc(sizeof(float) * 3 * nv2);
    uint32_t *t2 = nm_malloc(sizeof(uint32_t) * 3 * nt2);
    uint8_t *ar2 = nm_calloc(nt2, 1);
    cr_assert(v2 && t2 && ar2);
    for (uint32_t i = 0; i < nv2; i++) {
        v2[3 * i] = (float)kSteepPx[i][0];
        v2[3 * i + 1] = (float)(kSteepPx[i][2] * 0.1);
        v2[3 * i + 2] = (float)-kSteepPx[i][1];
        t2[i] = i;
    }
    changed = 1;
    cr_assert_eq(nm_bake_split_slivers(&v2, &nv2, &t2, &ar2, &nt2, &kUnitGrid, &changed), NM_OK);
    cr_assert_eq(changed, 0, "a gentle slope's thin triangle is left whole");
    nm_free(v);
    nm_free(t);
    nm_free(ar);
    nm_free(v2);
    nm_free(t2);
    nm_free(ar2);
}

Test(sliver, degenerate_and_huge_triangles_end)
{
    /* A triangle flat in plan (its corners on one line, 2 m apart in height) gets clamped samples
     * far off at any size: the cuts stop at an eighth of a cell. One 5000 px wide on a slope is
     * over the 4096-cell bound and left whole. A NaN corner must not hang or crash the split. */
    const float v0[] = {0, 0, 0, 3, 2, 0, 1.5f, 1, 0,                       /* flat in plan */
                        0, 0, 10, 5000, 4000, 10, 0, 0, 5010,               /* huge, sloped */
                        NAN, 0, 0, 1, 1, 1, 2, 0, 2};                       /* NaN */
    const uint32_t t0[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    float *v = dup_f(v0, 27);
    uint32_t *t = dup_u(t0, 9);
    uint8_t *ar = nm_calloc(3, 1);
    uint32_t nv = 9, nt = 3;
    int changed = 0;
    cr_assert_eq(nm_bake_split_slivers(&v, &nv, &t, &ar, &nt, &kUnitGrid, &changed), NM_OK);
    /* the 3 m line ends in halves of pieces over an eighth of a cell (0.03125 m here): 192 at
     * most, plus the two whole triangles (measured: 50 pieces; 4114 with the floor at a 1024th
     * of a cell) */
    cr_assert_leq(nt, 192u + 2u, "%u triangles", nt);
    uint32_t whole = 0;
    for (uint32_t i = 0; i < nt; i++)
        whole += memcmp(v + 3 * t[3 * i], v0 + 9, 3 * sizeof(float)) == 0 &&
                 memcmp(v + 3 * t[3 * i + 1], v0 + 12, 3 * sizeof(float)) == 0;
    cr_assert_eq(whole, 1, "the huge triangle is left whole");
    nm_free(v);
    nm_free(t);
    nm_free(ar);
}
