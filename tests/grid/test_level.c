/* test_level.c — the grid operators on a real level (NM_SHARED_DATA/levels/recast-navtest): every
 * span lies within the level's height range, every walkable triangle's centroid cell holds a span
 * within kMergeH of its centre height, and the clearance does not depend on the worker count.
 * Skips when the shared data folder is absent. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PX_PER_M 0.75 /* spec-notes: test worlds use about 0.75 px per m */

typedef struct level {
    float *v;
    size_t nv, capv;
    uint32_t *t;
    size_t nt, capt;
} level;

/* Minimal OBJ reader: "v x y z" and polygon "f" lines (fan-triangulated); u = 0.75 x,
 * v = -0.75 z (image rows grow southward), h = y. */
static bool load_obj(const char *path, level *L)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'v' && line[1] == ' ') {
            double x, y, z;
            if (sscanf(line + 2, "%lf %lf %lf", &x, &y, &z) != 3)
                continue;
            if (L->nv + 1 > L->capv) {
                L->capv = L->capv ? 2 * L->capv : 1024;
                L->v = realloc(L->v, L->capv * 3 * sizeof *L->v);
            }
            L->v[3 * L->nv] = (float)(PX_PER_M * x);
            L->v[3 * L->nv + 1] = (float)(-PX_PER_M * z);
            L->v[3 * L->nv + 2] = (float)y;
            L->nv++;
        } else if (line[0] == 'f' && line[1] == ' ') {
            long idx[64];
            int n = 0;
            for (char *p = strtok(line + 2, " \t\r\n"); p && n < 64; p = strtok(NULL, " \t\r\n"))
                idx[n++] = strtol(p, NULL, 10);
            for (int k = 1; k + 1 < n; k++) {
                if (L->nt + 1 > L->capt) {
                    L->capt = L->capt ? 2 * L->capt : 1024;
                    L->t = realloc(L->t, L->capt * 3 * sizeof *L->t);
                }
                long a[3] = {idx[0], idx[k], idx[k + 1]};
                for (int q = 0; q < 3; q++)
                    L->t[3 * L->nt + q] = (uint32_t)(a[q] > 0 ? a[q] - 1 : (long)L->nv + a[q]);
                L->nt++;
            }
        }
    }
    fclose(f);
    return L->nv > 0 && L->nt > 0;
}

Test(level, navtest_spans_stay_in_range_and_centroids_keep_their_height, .timeout = 120)
{
    const char *root = getenv("NM_SHARED_DATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/levels/recast-navtest/nav_test.obj", root ? root : "");
    level L = {0};
    if (!root || !load_obj(path, &L)) {
        free(L.v);
        free(L.t);
        cr_skip_test("shared level data not found (%s)", path);
    }
    /* Walkable: slope within 45 degrees, as Recast would mark it. */
    uint8_t *walk = malloc(L.nt);
    double umin = INFINITY, vmin = INFINITY, umax = -INFINITY, vmax = -INFINITY;
    float hmin = INFINITY, hmax = -INFINITY;
    for (size_t t = 0; t < L.nt; t++) {
        const float *a = L.v + 3 * L.t[3 * t], *b = L.v + 3 * L.t[3 * t + 1],
                    *c = L.v + 3 * L.t[3 * t + 2];
        /* in metres: x = u / s, z = -v / s, y = h */
        double e1[3] = {(b[0] - a[0]) / PX_PER_M, b[2] - a[2], -(b[1] - a[1]) / PX_PER_M};
        double e2[3] = {(c[0] - a[0]) / PX_PER_M, c[2] - a[2], -(c[1] - a[1]) / PX_PER_M};
        double nx = e1[1] * e2[2] - e1[2] * e2[1], ny = e1[2] * e2[0] - e1[0] * e2[2],
               nz = e1[0] * e2[1] - e1[1] * e2[0];
        double len = sqrt(nx * nx + ny * ny + nz * nz);
        walk[t] = len > 0 && fabs(ny) / len >= cos(M_PI / 4);
    }
    for (size_t k = 0; k < L.nv; k++) {
        umin = fmin(umin, L.v[3 * k]), umax = fmax(umax, L.v[3 * k]);
        vmin = fmin(vmin, L.v[3 * k + 1]), vmax = fmax(vmax, L.v[3 * k + 1]);
        hmin = fminf(hmin, L.v[3 * k + 2]), hmax = fmaxf(hmax, L.v[3 * k + 2]);
    }
    nm_grid_window w = {floor(umin) - 1.0, floor(vmin) - 1.0, 0, 0};
    w.nx = (int32_t)ceil((umax - w.x0 + 1.0) / NM_kCS);
    w.ny = (int32_t)ceil((vmax - w.y0 + 1.0) / NM_kCS);
    nm_grid_mesh m = {L.v, L.nv, L.t, L.nt, walk};
    nm_grid_samples s = {0};
    nm_span_table pre, t;
    nm_error err = {0};
    cr_assert_eq(nm_grid_rasterize(&w, &m, &s, &err), NM_OK, "%s", err.msg);
    cr_assert_gt(s.n, 1000);
    cr_assert_eq(nm_grid_build_spans(&w, &s, &pre, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_grid_append_seam_bridge(&pre, &s, &err), NM_OK);
    cr_assert_eq(nm_grid_build_spans(&w, &s, &t, &err), NM_OK, "%s", err.msg);
    cr_assert_geq(t.nspans, pre.nspans);
    for (uint32_t k = 0; k < t.nspans; k++) {
        cr_assert_geq(t.sp_h[k], hmin - 1e-4f);
        cr_assert_leq(t.sp_h[k], hmax + 1e-4f);
        if (k && t.sp_cell[k] == t.sp_cell[k - 1])
            cr_assert_geq(t.sp_h[k], t.sp_h[k - 1], "heights ascend in a cell");
    }
    size_t checked = 0;
    for (size_t q = 0; q < L.nt; q++) {
        if (!walk[q])
            continue;
        const float *a = L.v + 3 * L.t[3 * q], *b = L.v + 3 * L.t[3 * q + 1],
                    *c = L.v + 3 * L.t[3 * q + 2];
        double gx = (((double)a[0] + b[0]) + c[0]) / 3.0, gy = (((double)a[1] + b[1]) + c[1]) / 3.0;
        double gh = (((double)a[2] + b[2]) + c[2]) / 3.0;
        uint32_t cell = (uint32_t)((int)((gy - w.y0) / NM_kCS) * w.nx + (int)((gx - w.x0) / NM_kCS));
        uint32_t f, n = nm_span_cell_spans(&t, cell, &f);
        bool near = false;
        for (uint32_t k = f; k < f + n; k++)
            near |= fabs(t.sp_h[k] - gh) <= NM_kMergeH + 1e-4;
        cr_assert(near, "triangle %zu: no span within kMergeH of its centre height %.3f", q, gh);
        checked++;
    }
    cr_assert_gt(checked, 100);
    /* Clearance of the occupied mask: the same for 1 and 4 workers. */
    size_t nc = (size_t)w.nx * (size_t)w.ny;
    uint8_t *ob = malloc(nc);
    uint16_t *q1 = malloc(nc * sizeof *q1), *q4 = malloc(nc * sizeof *q4);
    for (size_t c = 0; c < nc; c++)
        ob[c] = nm_span_cell_index(&t, (uint32_t)c) < 0;
    cr_assert_eq(nm_grid_clearance(w.nx, w.ny, ob, q1, 1, &err), NM_OK);
    cr_assert_eq(nm_grid_clearance(w.nx, w.ny, ob, q4, 4, &err), NM_OK);
    cr_assert_eq(memcmp(q1, q4, nc * sizeof *q1), 0);
    free(ob);
    free(q1);
    free(q4);
    nm_span_table_free(&pre);
    nm_span_table_free(&t);
    nm_grid_samples_free(&s);
    free(walk);
    free(L.v);
    free(L.t);
}
