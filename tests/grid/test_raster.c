/* test_raster.c — Rasterize and AppendSeamBridge against the article's worked examples (预烘场 /
 * 栅格化, 补缝) and a brute-force coverage check. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void raster_one(const nm_grid_window *w, const float *v, nm_grid_samples *out)
{
    uint32_t tri[3] = {0, 1, 2};
    nm_grid_mesh m = {v, 3, tri, 1, NULL};
    nm_error err = {0};
    cr_assert_eq(nm_grid_rasterize(w, &m, out, &err), NM_OK, "%s", err.msg);
}

/* Index of the first sample of cell c among the first n samples, or -1. */
static long find_cell(const nm_grid_samples *s, size_t n, uint32_t c)
{
    for (size_t k = 0; k < n; k++)
        if (s->cell[k] == c)
            return (long)k;
    return -1;
}

Test(rasterize, triangle_on_grid_lines_samples_right_top_touch_not_left_bottom)
{
    /* Vertices on grid lines: (1,1), (1.5,1), (1,1.5) px. Cells touching the left / bottom edge
     * (i = 3 or j = 3) pass the closed SAT but lie outside the floor scan range; cells touching on
     * the right / top (i = 6 or j = 6) are scanned and get samples. */
    nm_grid_window w = {0.0, 0.0, 10, 10};
    float v[9] = {1.0f, 1.0f, 0.0f, 1.5f, 1.0f, 0.0f, 1.0f, 1.5f, 0.0f};
    nm_grid_samples s = {0};
    raster_one(&w, v, &s);
    const struct { int i, j, ins; } want[] = {
        {4, 4, 1}, {5, 4, 1}, {6, 4, 0}, {4, 5, 1}, {5, 5, 0}, {4, 6, 0}};
    size_t nfirst = s.n - 1; /* the last sample is the centroid pass */
    cr_assert_eq(nfirst, 6, "first pass gave %zu samples", nfirst);
    for (size_t k = 0; k < 6; k++) {
        long at = find_cell(&s, nfirst, (uint32_t)(want[k].j * 10 + want[k].i));
        cr_assert_geq(at, 0, "cell (%d,%d) has no sample", want[k].i, want[k].j);
        cr_assert_eq(s.ins[at], want[k].ins, "cell (%d,%d) ins", want[k].i, want[k].j);
    }
    for (int k = 0; k < 10; k++) {
        cr_assert_lt(find_cell(&s, nfirst, (uint32_t)(3 * 10 + k)), 0, "row 3 must be empty");
        cr_assert_lt(find_cell(&s, nfirst, (uint32_t)(k * 10 + 3)), 0, "column 3 must be empty");
    }
    nm_grid_samples_free(&s);
}

Test(rasterize, centroid_pass_adds_mean_height_sample_with_ins_zero)
{
    nm_grid_window w = {0.0, 0.0, 16, 16};
    float v[9] = {0.3f, 0.4f, 1.0f, 2.9f, 0.7f, 2.0f, 1.1f, 3.3f, 6.0f};
    nm_grid_samples s = {0};
    raster_one(&w, v, &s);
    size_t last = s.n - 1;
    double gx = ((0.3 + 2.9) + 1.1) / 3.0, gy = ((0.4 + 0.7) + 3.3) / 3.0;
    uint32_t c = (uint32_t)((int)(gy / 0.25) * 16 + (int)(gx / 0.25));
    cr_assert_eq(s.cell[last], c);
    cr_assert_float_eq(s.h[last], 3.0f, 1e-6);
    cr_assert_eq(s.ins[last], 0);
    /* The centroid cell also had its first-pass sample. */
    cr_assert_geq(find_cell(&s, last, c), 0);
    nm_grid_samples_free(&s);
}

Test(rasterize, inside_cells_take_plane_height_outside_cells_are_clamped_into_range)
{
    /* Plane h = 2 + 0.5 u - 0.25 v. */
    nm_grid_window w = {-0.1, 0.2, 24, 24};
    float v[9] = {0.2f, 0.5f, 0, 5.1f, 1.3f, 0, 1.7f, 5.6f, 0};
    for (int k = 0; k < 3; k++)
        v[3 * k + 2] = (float)(2.0 + 0.5 * v[3 * k] - 0.25 * v[3 * k + 1]);
    float lo = fminf(v[2], fminf(v[5], v[8])), hi = fmaxf(v[2], fmaxf(v[5], v[8]));
    nm_grid_samples s = {0};
    raster_one(&w, v, &s);
    size_t nins = 0, nout = 0;
    for (size_t k = 0; k + 1 < s.n; k++) {
        cr_assert_geq(s.h[k], lo - 1e-6f);
        cr_assert_leq(s.h[k], hi + 1e-6f);
        if (s.ins[k]) {
            double cx = -0.1 + (s.cell[k] % 24 + 0.5) * 0.25, cy = 0.2 + (s.cell[k] / 24 + 0.5) * 0.25;
            cr_assert_float_eq(s.h[k], 2.0 + 0.5 * cx - 0.25 * cy, 1e-5);
            nins++;
        } else {
            nout++;
        }
    }
    cr_assert_gt(nins, 10);
    cr_assert_gt(nout, 10);
    nm_grid_samples_free(&s);
}

Test(rasterize, outside_cell_height_clamps_t_then_s)
{
    /* A(0,0,0) B(1,0,1) C(0,1,2): cell (4,0) centre (1.125, 0.125) gives t = 1.125, s = 0.125;
     * clamped to t = 1, s = 0, so h = h_B = 1 and ins = 0. */
    nm_grid_window w = {0.0, 0.0, 8, 8};
    float v[9] = {0, 0, 0, 1, 0, 1, 0, 1, 2};
    nm_grid_samples s = {0};
    raster_one(&w, v, &s);
    long at = find_cell(&s, s.n - 1, 4);
    cr_assert_geq(at, 0, "cell (4,0) touches the triangle at B and must be sampled");
    cr_assert_eq(s.h[at], 1.0f);
    cr_assert_eq(s.ins[at], 0);
    nm_grid_samples_free(&s);
}

Test(rasterize, vertical_triangle_hits_cells_along_its_segment)
{
    /* Zero plan area: the segment y = 1.1 from x = 1 to 2; heights 0, 0, 4. */
    nm_grid_window w = {0.0, 0.0, 12, 12};
    float v[9] = {1.0f, 1.1f, 0.0f, 2.0f, 1.1f, 0.0f, 1.5f, 1.1f, 4.0f};
    nm_grid_samples s = {0};
    raster_one(&w, v, &s);
    cr_assert_eq(s.n - 1, 5, "cells i = 4..8 of row 4, got %zu", s.n - 1);
    for (int i = 4; i <= 8; i++)
        cr_assert_geq(find_cell(&s, s.n - 1, (uint32_t)(4 * 12 + i)), 0, "cell (%d,4)", i);
    for (size_t k = 0; k < s.n; k++) {
        cr_assert(isfinite(s.h[k]));
        cr_assert_geq(s.h[k], 0.0f);
        cr_assert_leq(s.h[k], 4.0f);
    }
    nm_grid_samples_free(&s);
}

Test(rasterize, unwalkable_and_out_of_window_triangles_give_nothing)
{
    nm_grid_window w = {10.0, 10.0, 8, 8};
    float v[18] = {10.2f, 10.2f, 0, 11.0f, 10.2f, 0, 10.2f, 11.0f, 0,
                   0.0f, 0.0f, 0, 5.0f, 0.0f, 0, 0.0f, 5.0f, 0};
    uint32_t tri[6] = {0, 1, 2, 3, 4, 5};
    uint8_t walk[2] = {0, 1};
    nm_grid_mesh m = {v, 6, tri, 2, walk};
    nm_grid_samples s = {0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_rasterize(&w, &m, &s, &err), NM_OK);
    cr_assert_eq(s.n, 0);
    walk[0] = 1;
    cr_assert_eq(nm_grid_rasterize(&w, &m, &s, &err), NM_OK);
    cr_assert_gt(s.n, 0);
    tri[5] = 9;
    cr_assert_eq(nm_grid_rasterize(&w, &m, &s, &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "triangle 1") != NULL, "message names the triangle: %s", err.msg);
    nm_grid_samples_free(&s);
}

/* Brute force: every cell containing a point strictly inside a random triangle (and strictly
 * inside the cell) must have a sample, and every sampled cell must pass a SAT check done here in
 * exact-enough arithmetic (distance from the cell square to the triangle <= 1e-9). */
Test(rasterize, conservative_coverage_matches_brute_force_on_random_triangles)
{
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    nm_grid_window w = {0.0, 0.0, 40, 40};
    uint8_t *hit = malloc(1600);
    for (int trial = 0; trial < 200; trial++) {
        float v[9];
        for (int k = 0; k < 3; k++) {
            v[3 * k] = (float)(rng_unit(&rng) * 12.0 - 1.0);
            v[3 * k + 1] = (float)(rng_unit(&rng) * 12.0 - 1.0);
            v[3 * k + 2] = (float)(rng_unit(&rng) * 10.0);
        }
        nm_grid_samples s = {0};
        raster_one(&w, v, &s);
        memset(hit, 0, 1600);
        for (size_t k = 0; k + 1 < s.n; k++)
            hit[s.cell[k]] = 1;
        for (int a = 1; a < 60; a++)
            for (int b = 1; a + b < 60; b++) {
                double t = a / 60.0, u = b / 60.0;
                double x = v[0] + t * (v[3] - v[0]) + u * (v[6] - v[0]);
                double y = v[1] + t * (v[4] - v[1]) + u * (v[7] - v[1]);
                double fi = x / 0.25, fj = y / 0.25;
                if (fi <= 0 || fj <= 0 || fi >= 40 || fj >= 40 || fi == floor(fi) || fj == floor(fj))
                    continue;
                int c = (int)fj * 40 + (int)fi;
                cr_assert(hit[c], "trial %d: cell %d contains a triangle point but has no sample",
                          trial, c);
            }
        nm_grid_samples_free(&s);
    }
    free(hit);
}

/* ---- AppendSeamBridge ------------------------------------------------------------------------ */

static void bridge(nm_span_table *pre, const span_def *defs, size_t n, int nx, int ny,
                   nm_grid_samples *out, nm_span_table *post)
{
    table_from_defs(pre, nx, ny, defs, n);
    nm_error err = {0};
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(nm_grid_samples_push(out, (uint32_t)(defs[k].j * nx + defs[k].i),
                                          (float)defs[k].h, 1, &err), NM_OK);
    size_t before = out->n;
    cr_assert_eq(nm_grid_append_seam_bridge(pre, out, &err), NM_OK, "%s", err.msg);
    for (size_t k = before; k < out->n; k++)
        cr_assert_eq(out->ins[k], 0);
    nm_grid_window w = {0.0, 0.0, nx, ny};
    cr_assert_eq(nm_grid_build_spans(&w, out, post, &err), NM_OK, "%s", err.msg);
}

Test(seam_bridge, one_cell_seam_with_1_2_m_across_gets_the_mean_0_6)
{
    span_def d[] = {{0, 0, 0.0}, {2, 0, 1.2}};
    nm_span_table pre, post;
    nm_grid_samples s = {0};
    bridge(&pre, d, 2, 3, 1, &s, &post);
    cr_assert_eq(s.n, 3);
    cr_assert_eq(s.cell[2], 1);
    cr_assert_float_eq(s.h[2], 0.6f, 1e-6);
    nm_span_table_free(&pre);
    nm_span_table_free(&post);
    nm_grid_samples_free(&s);
}

Test(seam_bridge, seam_with_3_5_m_across_is_not_bridged)
{
    span_def d[] = {{0, 0, 0.0}, {2, 0, 3.5}, {0, 1, 0.0}, {2, 1, 3.0}};
    nm_span_table pre, post;
    nm_grid_samples s = {0};
    bridge(&pre, d, 4, 3, 2, &s, &post);
    cr_assert_eq(s.n, 5, "only the 3.0 m seam (row 1) is bridged");
    cr_assert_eq(s.cell[4], 4);
    cr_assert_float_eq(s.h[4], 1.5f, 1e-6);
    nm_span_table_free(&pre);
    nm_span_table_free(&post);
    nm_grid_samples_free(&s);
}

Test(seam_bridge, gap_of_two_cells_is_not_bridged)
{
    span_def d[] = {{0, 0, 0.0}, {3, 0, 0.0}};
    nm_span_table pre, post;
    nm_grid_samples s = {0};
    bridge(&pre, d, 2, 4, 1, &s, &post);
    cr_assert_eq(s.n, 2);
    nm_span_table_free(&pre);
    nm_span_table_free(&post);
    nm_grid_samples_free(&s);
}

Test(seam_bridge, cross_shaped_seam_leaves_the_crossing_empty)
{
    span_def d[25];
    size_t n = 0;
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            if (i != 2 && j != 2)
                d[n++] = (span_def){i, j, 1.0};
    nm_span_table pre, post;
    nm_grid_samples s = {0};
    bridge(&pre, d, n, 5, 5, &s, &post);
    cr_assert_eq(s.n - n, 8, "four cells of each arm, got %zu", s.n - n);
    for (int k = 0; k < 5; k++) {
        if (k == 2)
            continue;
        cr_assert_geq(nm_span_cell_index(&post, (uint32_t)(k * 5 + 2)), 0, "vertical arm (2,%d)", k);
        cr_assert_geq(nm_span_cell_index(&post, (uint32_t)(2 * 5 + k)), 0, "horizontal arm (%d,2)", k);
    }
    cr_assert_lt(nm_span_cell_index(&post, 12), 0, "the crossing stays empty");
    nm_span_table_free(&pre);
    nm_span_table_free(&post);
    nm_grid_samples_free(&s);
}

Test(seam_bridge, single_cell_hole_gets_two_spans_when_passes_differ_by_more_than_0_25)
{
    /* x pass: 1.3 and 1.5 -> 1.4; y pass: 1.0 and 1.0 -> 1.0; 0.4 apart -> two spans. */
    span_def d[] = {{0, 1, 1.3}, {2, 1, 1.5}, {1, 0, 1.0}, {1, 2, 1.0},
                    {0, 0, 1.0}, {2, 0, 1.0}, {0, 2, 1.0}, {2, 2, 1.0}};
    nm_span_table pre, post;
    nm_grid_samples s = {0};
    bridge(&pre, d, 8, 3, 3, &s, &post);
    uint32_t f, cnt = nm_span_cell_spans(&post, 4, &f);
    cr_assert_eq(cnt, 2);
    cr_assert_float_eq(post.sp_h[f], 1.0f, 1e-6);
    cr_assert_float_eq(post.sp_h[f + 1], 1.4f, 1e-6);
    nm_span_table_free(&pre);
    nm_span_table_free(&post);
    nm_grid_samples_free(&s);
}

Test(seam_bridge, the_closest_pair_across_the_gap_is_bridged)
{
    span_def d[] = {{0, 0, 0.0}, {0, 0, 5.0}, {2, 0, 4.6}, {2, 0, 9.0}};
    nm_span_table pre, post;
    nm_grid_samples s = {0};
    bridge(&pre, d, 4, 3, 1, &s, &post);
    cr_assert_eq(s.n, 5);
    cr_assert_float_eq(s.h[4], 4.8f, 1e-6);
    nm_span_table_free(&pre);
    nm_span_table_free(&post);
    nm_grid_samples_free(&s);
}

/* The bake's gate (a solid between the pair: navmesh/bake solid_in_seam) is asked about the
 * chosen pair only, with its cells and heights; refusing it leaves the gap, and the other rows are
 * bridged as before. */
typedef struct gate_log {
    int calls;
    uint32_t a, b;
    double ha, hb;
} gate_log;

static bool refuse_row_0(void *ctx, uint32_t a, double ha, uint32_t b, double hb)
{
    gate_log *g = ctx;
    g->calls++;
    if (a / 3 != 0) return false;
    g->a = a, g->b = b, g->ha = ha, g->hb = hb;
    return true;
}

Test(seam_bridge, a_refusing_gate_leaves_its_gap_unbridged)
{
    span_def d[] = {{0, 0, 0.0}, {0, 0, 5.0}, {2, 0, 4.6}, {2, 0, 9.0}, {0, 1, 0.0}, {2, 1, 1.2}};
    nm_span_table pre;
    table_from_defs(&pre, 3, 2, d, 6);
    nm_grid_samples s = {0};
    nm_error err = {0};
    gate_log g = {0};
    cr_assert_eq(nm_grid_append_seam_bridge_gated(&pre, &s, refuse_row_0, &g, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(g.calls, 4, "each bridgeable gap, in both rounds (count, then append)");
    cr_assert_eq(g.a, 0);
    cr_assert_eq(g.b, 2);
    cr_assert_float_eq(g.ha, 5.0, 1e-6, "the closest pair (5.0, 4.6) is the one asked about");
    cr_assert_float_eq(g.hb, 4.6, 1e-6);
    cr_assert_eq(s.n, 1, "row 0 refused, row 1 bridged");
    cr_assert_eq(s.cell[0], 4);
    cr_assert_float_eq(s.h[0], 0.6f, 1e-6);
    nm_span_table_free(&pre);
    nm_grid_samples_free(&s);
}
