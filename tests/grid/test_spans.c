/* test_spans.c — BuildSpans / PackSpans (预烘场 / span 合并) and LabelRegions (类号): the
 * article's eight-sample example, face bits of its three columns, the occupancy rank against a
 * direct table, and regions against a brute-force flood. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void build(const nm_grid_window *w, const nm_grid_samples *s, nm_span_table *t)
{
    nm_error err = {0};
    cr_assert_eq(nm_grid_build_spans(w, s, t, &err), NM_OK, "%s", err.msg);
}

Test(spans, merge_against_first_sample_cuts_eight_samples_into_three_spans)
{
    /* 0, 0.1, 0.2, 0.3, 0.45, 0.5, 3.0, 3.1 (given shuffled): spans 0.10, 0.42, 3.05. Comparing
     * with the previous sample would have given one span over 0..0.5. */
    const float h[8] = {3.1f, 0.45f, 0.0f, 0.5f, 0.2f, 3.0f, 0.1f, 0.3f};
    nm_grid_window w = {0.0, 0.0, 4, 4};
    nm_grid_samples s = {0};
    nm_error err = {0};
    for (int k = 0; k < 8; k++)
        cr_assert_eq(nm_grid_samples_push(&s, 5, h[k], (uint8_t)(k == 1), &err), NM_OK);
    nm_span_table t;
    build(&w, &s, &t);
    cr_assert_eq(t.nspans, 3);
    cr_assert_eq(t.nocc, 1);
    cr_assert_float_eq(t.sp_h[0], 0.1f, 1e-6);
    cr_assert_float_eq(t.sp_h[1], (0.3f + 0.45f + 0.5f) / 3.0f, 1e-6);
    cr_assert_float_eq(t.sp_h[2], 3.05f, 1e-6);
    cr_assert_eq(t.sp_ins[0], 0);
    cr_assert_eq(t.sp_ins[1], 1, "the 0.45 sample had ins = 1");
    cr_assert_eq(t.sp_ins[2], 0);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(t.sp_cell[k], 5);
    nm_span_table_free(&t);
    nm_grid_samples_free(&s);
}

Test(spans, sample_exactly_0_25_above_the_first_stays_in_the_span)
{
    nm_grid_window w = {0.0, 0.0, 2, 1};
    nm_grid_samples s = {0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_samples_push(&s, 0, 1.0f, 0, &err), NM_OK);
    cr_assert_eq(nm_grid_samples_push(&s, 0, 1.25f, 0, &err), NM_OK);
    cr_assert_eq(nm_grid_samples_push(&s, 1, 1.0f, 0, &err), NM_OK);
    cr_assert_eq(nm_grid_samples_push(&s, 1, 1.2501f, 0, &err), NM_OK);
    nm_span_table t;
    build(&w, &s, &t);
    cr_assert_eq(nm_span_cell_spans(&t, 0, &(uint32_t){0}), 1);
    cr_assert_eq(nm_span_cell_spans(&t, 1, &(uint32_t){0}), 2);
    nm_span_table_free(&t);
    nm_grid_samples_free(&s);
}

Test(spans, face_marks_wall_foot_and_three_layers_but_not_a_bridge_column)
{
    /* Column 0: wall foot, 5 spans over 6 m. Column 1: ground + deck, 2 spans (8 m apart).
     * Column 2: ground, deck, roof over 8 m. Column 3: 3 spans over 2 m. Column 4: one span. */
    span_def d[] = {{0, 0, 0}, {0, 0, 1.5}, {0, 0, 3}, {0, 0, 4.5}, {0, 0, 6},
                    {1, 0, 0}, {1, 0, 8},
                    {2, 0, 0}, {2, 0, 5}, {2, 0, 8},
                    {3, 0, 0}, {3, 0, 1}, {3, 0, 2},
                    {4, 0, 7}};
    nm_span_table t;
    table_from_defs(&t, 5, 1, d, sizeof d / sizeof d[0]);
    cr_assert(nm_span_cell_face(&t, 0), "wall foot");
    cr_assert_not(nm_span_cell_face(&t, 1), "bridge column: exactly two spans");
    cr_assert(nm_span_cell_face(&t, 2), "three stacked layers");
    cr_assert_not(nm_span_cell_face(&t, 3), "span range 2 m <= kClimb");
    cr_assert_not(nm_span_cell_face(&t, 4), "one span");
    nm_span_table_free(&t);
}

static int cmp_pair(const void *a, const void *b)
{
    const double *x = a, *y = b; /* (cell, h, original index) */
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1])
        return x[1] < y[1] ? -1 : 1;
    return x[2] < y[2] ? -1 : (x[2] > y[2]);
}

Test(spans, pack_sorts_by_cell_then_height_and_rank_lookup_matches_direct_table)
{
    /* 400 x 300 = 120 000 cells: two high-16-bit buckets. */
    const int nx = 400, ny = 300, ncell = nx * ny;
    uint64_t rng = 42;
    nm_grid_samples s = {0};
    nm_error err = {0};
    const size_t n = 50000;
    double *ref = malloc(n * 3 * sizeof *ref);
    for (size_t k = 0; k < n; k++) {
        uint32_t c = (uint32_t)(rng_next(&rng) % (uint64_t)(ncell / 7)) * 7; /* sparse cells */
        float h = (float)(floor(rng_unit(&rng) * 40.0) * 0.5);
        cr_assert_eq(nm_grid_samples_push(&s, c, h, 0, &err), NM_OK);
        ref[3 * k] = c, ref[3 * k + 1] = h, ref[3 * k + 2] = (double)k;
    }
    qsort(ref, n, 3 * sizeof *ref, cmp_pair);
    nm_grid_window w = {0.0, 0.0, nx, ny};
    nm_span_table t;
    cr_assert_eq(nm_grid_pack_spans(&w, &s, &t, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(s.n, 0, "PackSpans consumes its input");
    cr_assert_null(s.cell);
    cr_assert_eq(t.nspans, n);
    for (size_t k = 0; k < n; k++) {
        cr_assert_eq(t.sp_cell[k], (uint32_t)ref[3 * k]);
        cr_assert_eq(t.sp_h[k], (float)ref[3 * k + 1]);
    }
    /* Direct table: occupied index by a plain scan. */
    int64_t occ = 0;
    size_t k = 0, most = 0;
    for (uint32_t c = 0; c < (uint32_t)ncell; c++) {
        size_t e = k;
        while (e < n && t.sp_cell[e] == c)
            e++;
        if (e > k) {
            most = e - k > most ? e - k : most;
            cr_assert_eq(nm_span_cell_index(&t, c), occ, "cell %u", c);
            uint32_t f;
            cr_assert_eq(nm_span_cell_spans(&t, c, &f), e - k);
            cr_assert_eq(f, k);
            /* and back: the cell of an occupied index, the next occupied cell */
            cr_assert_eq(nm_span_occupied_cell(&t, (uint32_t)occ), c, "occupied %lld", (long long)occ);
            if (occ) cr_assert_eq(nm_span_next_occupied(&t, t.sp_cell[k - 1]), c, "after cell %u", t.sp_cell[k - 1]);
            occ++;
        } else {
            cr_assert_eq(nm_span_cell_index(&t, c), -1, "cell %u", c);
        }
        k = e;
    }
    cr_assert_eq(t.nocc, (uint32_t)occ);
    cr_assert_gt(most, 1);
    cr_assert_eq(t.max_col, most, "the largest column: %u, counted %zu", t.max_col, most);
    cr_assert_eq(nm_span_cell_index(&t, (uint32_t)ncell), -1, "out of range");
    nm_span_table_free(&t);
    free(ref);
}

Test(spans, sample_outside_the_window_is_rejected)
{
    nm_grid_window w = {0.0, 0.0, 4, 4};
    nm_grid_samples s = {0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_samples_push(&s, 16, 0.0f, 0, &err), NM_OK);
    nm_span_table t;
    cr_assert_eq(nm_grid_build_spans(&w, &s, &t, &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "cell 16") != NULL, "%s", err.msg);
    cr_assert_eq(nm_grid_pack_spans(&w, &s, &t, &err), NM_ERR_ARG);
    cr_assert_eq(s.n, 0, "consumed even on failure");
}

Test(spans, empty_sample_list_gives_an_empty_table)
{
    nm_grid_window w = {0.0, 0.0, 70, 3};
    nm_grid_samples s = {0};
    nm_span_table t;
    build(&w, &s, &t);
    cr_assert_eq(t.nspans, 0);
    cr_assert_eq(t.nocc, 0);
    cr_assert_eq(t.max_col, 0);
    cr_assert_eq(nm_span_cell_index(&t, 69), -1);
    nm_span_table_free(&t);
}

/* ---- LabelRegions ---------------------------------------------------------------------------- */

static uint32_t label(const nm_span_table *t, uint32_t *rid)
{
    uint32_t nr = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_label_regions(t, 1, rid, &nr, &err), NM_OK, "%s", err.msg);
    return nr;
}

Test(regions, chain_within_3_m_is_one_region_and_a_3_1_m_step_splits)
{
    double prof[6] = {0.0, 2.9, 5.8, 8.7, 11.8, 11.8};
    nm_span_table t;
    table_from_profile(&t, 6, prof, NULL);
    uint32_t rid[6];
    cr_assert_eq(label(&t, rid), 2);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(rid[k], 1);
    cr_assert_eq(rid[4], 2);
    cr_assert_eq(rid[5], 2);
    nm_span_table_free(&t);
}

Test(regions, ground_and_bridge_deck_are_two_regions)
{
    span_def d[40];
    size_t n = 0;
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 5; i++) {
            d[n++] = (span_def){i, j, 0.0};
            d[n++] = (span_def){i, j, 5.0};
        }
    nm_span_table t;
    table_from_defs(&t, 5, 4, d, n);
    uint32_t rid[40];
    cr_assert_eq(label(&t, rid), 2);
    for (uint32_t k = 0; k < t.nspans; k++)
        cr_assert_eq(rid[k], t.sp_h[k] < 1.0f ? 1u : 2u);
    nm_span_table_free(&t);
}

Test(regions, labels_equal_a_brute_force_flood_on_random_stacks)
{
    uint64_t rng = 7;
    const int nx = 30, ny = 20;
    span_def d[2000];
    size_t n = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            int layers = (int)(rng_next(&rng) % 4);
            for (int l = 0; l < layers; l++)
                d[n++] = (span_def){i, j, floor(rng_unit(&rng) * 40.0) * 0.5};
        }
    nm_span_table t;
    table_from_defs(&t, nx, ny, d, n);
    uint32_t *rid = calloc(t.nspans, sizeof *rid);
    uint32_t nr = label(&t, rid);
    /* Flood with the same relation (4-neighbours, |dh| <= 3); compare partitions. */
    uint32_t *flood = calloc(t.nspans, sizeof *flood), *queue = malloc(t.nspans * sizeof *queue);
    uint32_t next = 0;
    for (uint32_t s0 = 0; s0 < t.nspans; s0++) {
        if (flood[s0])
            continue;
        flood[s0] = ++next;
        size_t head = 0, tail = 0;
        queue[tail++] = s0;
        while (head < tail) {
            uint32_t u = queue[head++];
            int i = (int)(t.sp_cell[u] % nx), j = (int)(t.sp_cell[u] / nx);
            const int di[4] = {1, -1, 0, 0}, dj[4] = {0, 0, 1, -1};
            for (int q = 0; q < 4; q++) {
                int a = i + di[q], b = j + dj[q];
                if (a < 0 || b < 0 || a >= nx || b >= ny)
                    continue;
                uint32_t f, cnt = nm_span_cell_spans(&t, (uint32_t)(b * nx + a), &f);
                for (uint32_t v = f; v < f + cnt; v++)
                    if (!flood[v] && fabs((double)t.sp_h[v] - t.sp_h[u]) <= 3.0) {
                        flood[v] = next;
                        queue[tail++] = v;
                    }
            }
        }
    }
    cr_assert_eq(nr, next);
    /* Both number regions in order of their first span, so they must be equal outright. */
    for (uint32_t k = 0; k < t.nspans; k++)
        cr_assert_eq(rid[k], flood[k], "span %u", k);
    free(rid);
    free(flood);
    free(queue);
    nm_span_table_free(&t);
}

/* Reference labelling: flood fill over the +-x / +-y links, regions numbered by first span. */
static uint32_t label_flood(const nm_span_table *t, uint32_t *rid)
{
    uint32_t *stack = malloc(((size_t)t->nspans + 1) * sizeof *stack), next = 0;
    const int32_t nx = t->win.nx, ny = t->win.ny;
    memset(rid, 0, (size_t)t->nspans * sizeof *rid);
    for (uint32_t s0 = 0; s0 < t->nspans; s0++) {
        if (rid[s0]) continue;
        size_t top = 0;
        rid[s0] = ++next;
        stack[top++] = s0;
        while (top) {
            uint32_t u = stack[--top], c = t->sp_cell[u];
            int32_t i = (int32_t)(c % (uint32_t)nx), j = (int32_t)(c / (uint32_t)nx);
            const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
            for (int k = 0; k < 4; k++) {
                int32_t a = i + d[k][0], b = j + d[k][1];
                if (a < 0 || b < 0 || a >= nx || b >= ny) continue;
                uint32_t f, n = nm_span_cell_spans(t, (uint32_t)(b * nx + a), &f);
                for (uint32_t v = f; v < f + n; v++)
                    if (!rid[v] && fabs((double)t->sp_h[v] - t->sp_h[u]) <= NM_kClimb) {
                        rid[v] = next;
                        stack[top++] = v;
                    }
            }
        }
    }
    free(stack);
    return next;
}

Test(regions, many_chunks_and_workers_give_the_flood_fills_regions)
{
    /* 300 x 300 cells (several chunks of cells), two layers in places, terraces of random
     * heights so that regions wind across chunk borders */
    enum { W = 300, H = 300 };
    span_def *d = malloc(2 * W * H * sizeof *d);
    size_t n = 0;
    uint64_t rng = 21;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            if (rng_unit(&rng) < 0.05) continue;
            double h = 4.0 * ((i / 7 + j / 5) % 3) + (rng_unit(&rng) < 0.3 ? 3.5 : 0.0);
            d[n++] = (span_def){i, j, h};
            if (rng_unit(&rng) < 0.2) d[n++] = (span_def){i, j, h + 10.0};
        }
    nm_span_table t;
    table_from_defs(&t, W, H, d, n);
    free(d);
    uint32_t *want = malloc(t.nspans * sizeof *want), *got = malloc(t.nspans * sizeof *got);
    uint32_t nw = label_flood(&t, want);
    cr_assert_gt(nw, 10, "a winding set of regions");
    /* LabelRegions takes cells from the occupancy index: a bake frees sp_cell before it */
    uint32_t *sp_cell = t.sp_cell;
    t.sp_cell = NULL;
    for (int workers = 1; workers <= 4; workers += 3) {
        uint32_t ng = 0;
        nm_error err = {0};
        cr_assert_eq(nm_grid_label_regions(&t, workers, got, &ng, &err), NM_OK, "%s", err.msg);
        cr_assert_eq(ng, nw, "workers %d", workers);
        for (uint32_t k = 0; k < t.nspans; k++)
            cr_assert_eq(got[k], want[k], "workers %d, span %u", workers, k);
    }
    t.sp_cell = sp_cell;
    free(want);
    free(got);
    nm_span_table_free(&t);
}

Test(spans, small_and_large_windows_sort_alike)
{
    /* The same samples in a window of up to 2^23 cells (one counting pass) and in a taller one
     * (two-level sort): the same spans, cell numbers shifted by the extra rows. */
    enum { W = 4096, H = 2048, N = 200000 };
    nm_grid_samples a = {0}, b = {0};
    nm_error err = {0};
    uint64_t rng = 9;
    for (int k = 0; k < N; k++) {
        uint32_t c = (uint32_t)(rng_unit(&rng) * (double)(W * H)) % (W * H);
        float h = (float)(rng_unit(&rng) < 0.5 ? 0.0 : 1.0) + (float)rng_unit(&rng) * 0.3f;
        uint8_t ins = rng_unit(&rng) < 0.5;
        cr_assert_eq(nm_grid_samples_push(&a, c, h, ins, &err), NM_OK);
        cr_assert_eq(nm_grid_samples_push(&b, c + 3u * W, h, ins, &err), NM_OK);
    }
    nm_grid_window wa = {0.0, 0.0, W, H}, wb = {0.0, 0.0, W, H + 3};
    nm_span_table ta, tb;
    build(&wa, &a, &ta);
    build(&wb, &b, &tb);
    cr_assert_eq(ta.nspans, tb.nspans);
    cr_assert_gt(ta.nspans, N / 2);
    for (uint32_t k = 0; k < ta.nspans; k++) {
        cr_assert_eq(ta.sp_cell[k] + 3u * W, tb.sp_cell[k], "span %u", k);
        cr_assert_eq(ta.sp_h[k], tb.sp_h[k], "span %u", k);
        cr_assert_eq(ta.sp_ins[k], tb.sp_ins[k], "span %u", k);
        if (k) cr_assert(ta.sp_cell[k - 1] < ta.sp_cell[k] ||
                         (ta.sp_cell[k - 1] == ta.sp_cell[k] && ta.sp_h[k - 1] <= ta.sp_h[k]));
    }
    nm_grid_samples_free(&a);
    nm_grid_samples_free(&b);
    nm_span_table_free(&ta);
    nm_span_table_free(&tb);
}

/* Random samples in cells [0, ncell) of rows of width W: heights in two levels, so cells hold
 * one or two spans. */
static void random_samples(nm_grid_samples *s, uint64_t seed, int n, uint32_t ncell)
{
    nm_error err = {0};
    for (int k = 0; k < n; k++) {
        uint32_t c = (uint32_t)(rng_unit(&seed) * (double)ncell) % ncell;
        float h = (float)(rng_unit(&seed) < 0.5 ? 0.0 : 1.0) + (float)rng_unit(&seed) * 0.3f;
        cr_assert_eq(nm_grid_samples_push(s, c, h, rng_unit(&seed) < 0.5, &err), NM_OK);
    }
}

static void assert_same_table(const nm_span_table *a, const nm_span_table *b, const char *what)
{
    cr_assert_eq(a->nspans, b->nspans, "%s", what);
    cr_assert_eq(a->nocc, b->nocc, "%s", what);
    cr_assert_eq(memcmp(a->sp_cell, b->sp_cell, a->nspans * sizeof *a->sp_cell), 0, "%s", what);
    cr_assert_eq(memcmp(a->sp_h, b->sp_h, a->nspans * sizeof *a->sp_h), 0, "%s", what);
    cr_assert_eq(memcmp(a->sp_ins, b->sp_ins, a->nspans), 0, "%s", what);
    cr_assert_eq(memcmp(a->cs, b->cs, ((size_t)a->nocc + 1) * sizeof *a->cs), 0, "%s", what);
}

Test(spans, few_samples_in_a_large_window_sort_as_in_a_small_one)
{
    /* 1000 samples in the first two rows: a 4096 x 2 window sorts them with its counting pass,
     * a 4096 x 2048 window by comparison (too few for a table as long as the window). */
    enum { W = 4096 };
    nm_grid_samples s = {0};
    random_samples(&s, 5, 1000, 2 * W);
    nm_grid_window small = {0.0, 0.0, W, 2}, large = {0.0, 0.0, W, 2048};
    nm_span_table ts, tl;
    build(&small, &s, &ts);
    build(&large, &s, &tl);
    cr_assert_gt(ts.nocc, 500);
    assert_same_table(&ts, &tl, "few samples");
    nm_grid_samples_free(&s);
    nm_span_table_free(&ts);
    nm_span_table_free(&tl);
}

Test(spans, a_kept_scratch_builds_the_tables_of_fresh_ones)
{
    /* The bake's raster slots keep one scratch band after band: a larger window, then a smaller
     * one over the first's leftovers, then a few samples, then the large one again. */
    static const struct { int ny, n; } runs[] = {{64, 300000}, {16, 20000}, {64, 100}, {64, 250000}};
    enum { W = 2048 };
    nm_span_scratch ws;
    memset(&ws, 0, sizeof ws);
    for (int r = 0; r < 4; r++) {
        nm_grid_samples s = {0};
        random_samples(&s, 11 + (uint64_t)r, runs[r].n, (uint32_t)(W * runs[r].ny));
        nm_grid_window w = {0.0, 0.0, W, runs[r].ny};
        nm_span_table fresh, kept;
        nm_error err = {0};
        build(&w, &s, &fresh);
        cr_assert_eq(nm_grid_build_spans_reusing(&w, &s, &ws, &kept, &err), NM_OK, "%s", err.msg);
        assert_same_table(&fresh, &kept, "kept scratch");
        nm_grid_samples_free(&s);
        nm_span_table_free(&fresh);
        nm_span_table_free(&kept);
    }
    nm_span_scratch_free(&ws);
}
