/* test_sliver.c — the Recast path's sliver split (tools/navbake/sliver.h, issue 12): a sliver on
 * a 41° slope, rasterised as is, gives cells a height metres off the slope (Rasterize's clamped
 * barycentric point lands at a far vertex); split, every sample stays near the slope, the surface
 * and its area are unchanged, the mesh stays conforming (no vertex inside another triangle's edge)
 * and flat slivers and fat triangles are left alone. */
#include "base/base.h"
#include "grid/grid.h"
#include "sliver.h"

#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#define SLOPE 0.87 /* tan 41° */

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
    cr_assert_eq(nm_bake_split_slivers(&v, &nv, &t, &ar, &nt, 2 * NM_kCS, &changed), NM_OK);
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
    cr_assert_eq(nm_bake_split_slivers(&v, &nv, &t, &ar, &nt, 2 * NM_kCS, &changed), NM_OK);
    cr_assert_eq(changed, 0);
    cr_assert_eq(nt, 2);
    cr_assert_eq(nv, NV);
    cr_assert_eq(v, v0);
    cr_assert_eq(memcmp(t, kT + 3, 6 * sizeof *t), 0);
    nm_free(v);
    nm_free(t);
    nm_free(ar);
}
