/* test_clearance.c — the truncated distance transform (预烘场 / 净空) against brute force, and
 * NearestSource with the lambda-medial axis (中轴), including the article's A/B/C corridor. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Exact squared cell distance to the nearest obstacle, or UINT32_MAX when there is none. */
static uint32_t brute_d2(int nx, int ny, const uint8_t *ob, int i, int j)
{
    uint32_t best = UINT32_MAX;
    for (int b = 0; b < ny; b++)
        for (int a = 0; a < nx; a++)
            if (ob[b * nx + a]) {
                uint32_t d = (uint32_t)((a - i) * (a - i) + (b - j) * (b - j));
                if (d < best)
                    best = d;
            }
    return best;
}

static void check_against_brute(int nx, int ny, double density, uint64_t seed)
{
    uint8_t *ob = calloc((size_t)nx * ny, 1);
    uint16_t *q = malloc((size_t)nx * ny * sizeof *q);
    for (int c = 0; c < nx * ny; c++)
        ob[c] = rng_unit(&seed) < density;
    nm_error err = {0};
    cr_assert_eq(nm_grid_clearance(nx, ny, ob, q, 1, &err), NM_OK, "%s", err.msg);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            uint32_t d2 = brute_d2(nx, ny, ob, i, j);
            uint16_t got = q[j * nx + i];
            if (d2 <= 48u * 48u) {
                cr_assert_eq(got, d2, "(%d,%d) density %g: q %u, exact %u", i, j, density, got, d2);
            } else {
                cr_assert_gt(got, 48u * 48u, "(%d,%d): q %u must exceed 48^2", i, j, got);
                cr_assert_eq(nm_grid_clearance_px(got), 12.0f);
            }
        }
    free(ob);
    free(q);
}

Test(clearance, truncated_edt_is_exact_within_12_px_on_random_masks)
{
    check_against_brute(70, 60, 0.2, 1);
    check_against_brute(70, 60, 0.02, 2);
    check_against_brute(130, 120, 0.0008, 3); /* distances beyond 48 cells */
    check_against_brute(60, 230, 0.0005, 4);  /* columns longer than the 196 cap */
}

/* A window wider than one column strip of the column pass (2048 columns): exact against brute
 * force over the obstacles within 49 columns, for one and two workers. */
Test(clearance, wide_window_is_exact_across_column_strips)
{
    const int nx = 4500, ny = 12;
    uint8_t *ob = calloc((size_t)nx * ny, 1);
    uint16_t *q = malloc((size_t)nx * ny * sizeof *q), *q2 = malloc((size_t)nx * ny * sizeof *q2);
    uint64_t seed = 7;
    for (int c = 0; c < nx * ny; c++)
        ob[c] = rng_unit(&seed) < 0.004;
    ob[5 * nx + 2047] = ob[6 * nx + 2048] = 1; /* obstacles on both sides of the first strip edge */
    nm_error err = {0};
    cr_assert_eq(nm_grid_clearance(nx, ny, ob, q, 1, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_grid_clearance(nx, ny, ob, q2, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(memcmp(q, q2, (size_t)nx * ny * sizeof *q), 0);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            uint32_t best = UINT32_MAX;
            for (int b = 0; b < ny; b++)
                for (int a = i - 49 < 0 ? 0 : i - 49; a <= i + 49 && a < nx; a++)
                    if (ob[b * nx + a]) {
                        uint32_t d = (uint32_t)((a - i) * (a - i) + (b - j) * (b - j));
                        if (d < best) best = d;
                    }
            uint16_t got = q[j * nx + i];
            if (best <= 48u * 48u)
                cr_assert_eq(got, best, "(%d,%d): q %u, exact %u", i, j, got, best);
            else
                cr_assert_gt(got, 48u * 48u, "(%d,%d): q %u must exceed 48^2", i, j, got);
        }
    free(ob);
    free(q);
    free(q2);
}

Test(clearance, empty_window_reads_capped_everywhere)
{
    uint8_t ob[50 * 8] = {0};
    uint16_t q[50 * 8];
    nm_error err = {0};
    cr_assert_eq(nm_grid_clearance(50, 8, ob, q, 1, &err), NM_OK);
    for (int c = 0; c < 400; c++) {
        cr_assert_eq(q[c], 196 * 196);
        cr_assert_eq(nm_grid_clearance_px(q[c]), 12.0f);
    }
}

Test(clearance, cell_next_to_an_obstacle_reads_a_quarter_pixel)
{
    uint8_t ob[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    uint16_t q[9];
    nm_error err = {0};
    cr_assert_eq(nm_grid_clearance(3, 3, ob, q, 1, &err), NM_OK);
    cr_assert_eq(q[4], 0);
    cr_assert_eq(nm_grid_clearance_px(q[1]), 0.25f);
    cr_assert_eq(q[0], 2);
    cr_assert_float_eq(nm_grid_clearance_px(q[0]), 0.3535534f, 1e-6);
}

Test(clearance, output_does_not_depend_on_worker_count)
{
    const int nx = 300, ny = 300;
    uint8_t *ob = calloc(nx * ny, 1);
    uint16_t *q1 = malloc(nx * ny * sizeof *q1), *q4 = malloc(nx * ny * sizeof *q4);
    uint64_t rng = 99;
    for (int c = 0; c < nx * ny; c++)
        ob[c] = rng_unit(&rng) < 0.003;
    nm_error err = {0};
    cr_assert_eq(nm_grid_clearance(nx, ny, ob, q1, 1, &err), NM_OK);
    cr_assert_eq(nm_grid_clearance(nx, ny, ob, q4, 4, &err), NM_OK);
    cr_assert_eq(memcmp(q1, q4, nx * ny * sizeof *q1), 0);
    free(ob);
    free(q1);
    free(q4);
}

/* ---- NearestSource / MedialAxis -------------------------------------------------------------- */

Test(nearest_source, single_obstacle_is_every_cells_source)
{
    enum { W = 17, H = 11 };
    uint8_t ob[W * H] = {0};
    int32_t src[W * H];
    ob[4 * W + 9] = 1;
    nm_error err = {0};
    cr_assert_eq(nm_grid_nearest_source(W, H, ob, src, &err), NM_OK);
    for (int c = 0; c < W * H; c++)
        cr_assert_eq(src[c], 4 * W + 9, "cell %d", c);
}

Test(nearest_source, no_obstacle_means_no_source)
{
    uint8_t ob[12] = {0};
    int32_t src[12];
    nm_error err = {0};
    cr_assert_eq(nm_grid_nearest_source(4, 3, ob, src, &err), NM_OK);
    for (int c = 0; c < 12; c++)
        cr_assert_eq(src[c], -1);
}

Test(nearest_source, sources_are_near_optimal_on_random_masks)
{
    enum { W = 64, H = 48 };
    static uint8_t ob[W * H];
    static int32_t src[W * H];
    uint64_t rng = 5;
    for (int c = 0; c < W * H; c++)
        ob[c] = rng_unit(&rng) < 0.01;
    nm_error err = {0};
    cr_assert_eq(nm_grid_nearest_source(W, H, ob, src, &err), NM_OK);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            int32_t s = src[j * W + i];
            cr_assert_geq(s, 0);
            cr_assert(ob[s], "source must be an obstacle");
            double got = sqrt((double)((s % W - i) * (s % W - i) + (s / W - j) * (s / W - j)));
            double best = sqrt((double)brute_d2(W, H, ob, i, j));
            cr_assert_leq(got - best, 1.0, "(%d,%d): %.3f vs exact %.3f cells", i, j, got, best);
        }
}

/* NearestSource as the article's passes read, one take at a time: the reference the library's
 * faster loops must match bit for bit (the corridor and the bake's medial axis depend on it). */
static void ref_take(int32_t *src, int nx, int ny, int i, int j, int di, int dj)
{
    int a = i + di, b = j + dj;
    if (a < 0 || b < 0 || a >= nx || b >= ny || src[b * nx + a] < 0)
        return;
    int32_t cand = src[b * nx + a], *cur = &src[j * nx + i];
    int64_t dc = (int64_t)(cand % nx - i) * (cand % nx - i) +
                 (int64_t)(cand / nx - j) * (cand / nx - j);
    int64_t du = *cur < 0 ? 0
                          : (int64_t)(*cur % nx - i) * (*cur % nx - i) +
                                (int64_t)(*cur / nx - j) * (*cur / nx - j);
    if (*cur < 0 || dc < du)
        *cur = cand;
}

static void ref_nearest_source(int nx, int ny, const uint8_t *ob, int32_t *src)
{
    for (int c = 0; c < nx * ny; c++)
        src[c] = ob[c] ? c : -1;
    for (int j = 0; j < ny; j++) {
        for (int i = 0; i < nx; i++) {
            ref_take(src, nx, ny, i, j, 0, -1);
            ref_take(src, nx, ny, i, j, -1, -1);
            ref_take(src, nx, ny, i, j, 1, -1);
            ref_take(src, nx, ny, i, j, -1, 0);
        }
        for (int i = nx - 1; i >= 0; i--)
            ref_take(src, nx, ny, i, j, 1, 0);
    }
    for (int j = ny - 1; j >= 0; j--) {
        for (int i = nx - 1; i >= 0; i--) {
            ref_take(src, nx, ny, i, j, 0, 1);
            ref_take(src, nx, ny, i, j, -1, 1);
            ref_take(src, nx, ny, i, j, 1, 1);
            ref_take(src, nx, ny, i, j, 1, 0);
        }
        for (int i = 0; i < nx; i++)
            ref_take(src, nx, ny, i, j, -1, 0);
    }
}

Test(nearest_source, same_sources_as_the_pass_order_one_take_at_a_time)
{
    static const int size[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 3}, {37, 29}, {64, 48}, {65, 11}, {101, 7}};
    static const double dens[] = {0.002, 0.02, 0.3};
    static uint8_t ob[101 * 48];
    static int32_t got[101 * 48], want[101 * 48];
    uint64_t rng = 9;
    for (size_t k = 0; k < sizeof size / sizeof size[0]; k++)
        for (size_t d = 0; d < sizeof dens / sizeof dens[0]; d++) {
            const int nx = size[k][0], ny = size[k][1];
            for (int c = 0; c < nx * ny; c++)
                ob[c] = rng_unit(&rng) < dens[d];
            nm_error err = {0};
            cr_assert_eq(nm_grid_nearest_source(nx, ny, ob, got, &err), NM_OK);
            ref_nearest_source(nx, ny, ob, want);
            for (int c = 0; c < nx * ny; c++)
                cr_assert_eq(got[c], want[c], "%dx%d density %.3f: cell %d", nx, ny, dens[d], c);
        }
}

/* Synthetic corridor of the article's figure: top wall row 0 with teeth hanging down, bottom wall
 * at row 22: 21 free rows between, sources up to 22 cells apart across. */
enum { CW = 60, CH = 23 };
static void corridor(uint8_t *ob)
{
    memset(ob, 0, CW * CH);
    for (int i = 0; i < CW; i++) {
        ob[i] = 1;
        ob[(CH - 1) * CW + i] = 1;
    }
    /* teeth: 3 cells wide, 3 cells tall, every 15 cells from column 10 */
    for (int t = 10; t < 50; t += 15)
        for (int j = 1; j <= 3; j++)
            for (int i = t; i < t + 3; i++)
                ob[j * CW + i] = 1;
}

Test(medial_axis, corridor_A_centre_is_medial_B_flat_wall_is_not_C_tooth_is)
{
    static uint8_t ob[CW * CH], med[CW * CH];
    static int32_t src[CW * CH];
    corridor(ob);
    nm_error err = {0};
    cr_assert_eq(nm_grid_nearest_source(CW, CH, ob, src, &err), NM_OK);
    cr_assert_eq(nm_grid_medial_axis(CW, CH, ob, med, &err), NM_OK, "%s", err.msg);
    /* A: the corridor centre far from the teeth, where neighbours' sources split between the two
     * walls (far more than 2 cells apart). */
    int ai = 55, aj = 11;
    cr_assert(med[aj * CW + ai], "A is on the medial axis");
    bool split = false;
    for (int dj = -1; dj <= 1; dj++) {
        int o = (aj + dj) * CW + ai;
        int dy = src[o] / CW - src[aj * CW + ai] / CW;
        if (dy * dy >= 400)
            split = true;
    }
    cr_assert(split, "A's neighbours have sources on opposite walls");
    /* B: next to the flat bottom wall, every neighbour's source is adjacent (1 cell apart). */
    int bi = 5, bj = CH - 2;
    cr_assert_not(med[bj * CW + bi], "B is not medial");
    /* C: beside the first tooth's tip, sources jump from the tip to the top wall (>= sqrt(5)). */
    bool some_c = false;
    for (int j = 1; j <= 5; j++)
        for (int i = 6; i <= 10; i++) {
            int c = j * CW + i;
            if (ob[c] || !med[c])
                continue;
            some_c = true;
        }
    cr_assert(some_c, "a branch grows at the tooth");
    /* Medial exactly where some free neighbour's source is at least 2 cells from its own. */
    for (int j = 0; j < CH; j++)
        for (int i = 0; i < CW; i++) {
            int c = j * CW + i;
            if (ob[c]) {
                cr_assert_not(med[c]);
                continue;
            }
            int best = 0;
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                    int a = i + di, b = j + dj;
                    if (a < 0 || a >= CW || b < 0 || b >= CH || ob[b * CW + a])
                        continue;
                    int s = src[b * CW + a], f = src[c];
                    int dx = s % CW - f % CW, dy = s / CW - f / CW;
                    if (dx * dx + dy * dy > best)
                        best = dx * dx + dy * dy;
                }
            cr_assert_eq(med[c], best >= 4, "cell (%d,%d): largest source gap^2 %d", i, j, best);
        }
    /* Next to a flat wall away from the teeth no cell is medial. */
    for (int i = 52; i < CW - 2; i++) {
        cr_assert_not(med[1 * CW + i], "top wall row, column %d", i);
        cr_assert_not(med[(CH - 2) * CW + i], "bottom wall row, column %d", i);
    }
}

Test(medial_axis, straight_corridor_axis_is_the_two_centre_rows)
{
    /* Walls at rows 0 and 22: row 11 is 11 cells from both and keeps the top source (ties keep
     * the existing source), row 12 takes the bottom one, so exactly rows 11 and 12 see sources
     * 22 cells apart; elsewhere neighbours' sources are at most 1 cell apart. */
    static uint8_t ob[CW * CH], med[CW * CH];
    static int32_t src[CW * CH];
    memset(ob, 0, sizeof ob);
    for (int i = 0; i < CW; i++) {
        ob[i] = 1;
        ob[(CH - 1) * CW + i] = 1;
    }
    nm_error err = {0};
    cr_assert_eq(nm_grid_nearest_source(CW, CH, ob, src, &err), NM_OK);
    cr_assert_eq(src[11 * CW + 30], 30, "tie at row 11 keeps the top wall");
    cr_assert_eq(src[12 * CW + 30], (CH - 1) * CW + 30);
    cr_assert_eq(nm_grid_medial_axis(CW, CH, ob, med, &err), NM_OK);
    for (int j = 0; j < CH; j++)
        for (int i = 0; i < CW; i++)
            cr_assert_eq(med[j * CW + i], j == 11 || j == 12, "cell (%d,%d)", i, j);
}

/* NearestSource as the header states it, one neighbour at a time (strictly nearer replaces, ties
 * keep the existing source), to pin the operator's exact output, ties included. */
static void nearest_source_ref(int W, int H, const uint8_t *ob, int32_t *src)
{
    for (int c = 0; c < W * H; c++)
        src[c] = ob[c] ? c : -1;
    const int pass1[4][2] = {{0, -1}, {-1, -1}, {1, -1}, {-1, 0}};
    const int pass2[4][2] = {{0, 1}, {-1, 1}, {1, 1}, {1, 0}};
#define TAKE(i, j, di, dj)                                                                      \
    do {                                                                                        \
        int a_ = (i) + (di), b_ = (j) + (dj);                                                   \
        if (a_ < 0 || b_ < 0 || a_ >= W || b_ >= H) break;                                      \
        int32_t cand_ = src[b_ * W + a_], *cur_ = &src[(j) * W + (i)];                          \
        if (cand_ < 0) break;                                                                   \
        long dc_ = (long)(cand_ % W - (i)) * (cand_ % W - (i)) + (long)(cand_ / W - (j)) * (cand_ / W - (j)); \
        long du_ = *cur_ < 0 ? 0 : (long)(*cur_ % W - (i)) * (*cur_ % W - (i)) + (long)(*cur_ / W - (j)) * (*cur_ / W - (j)); \
        if (*cur_ < 0 || dc_ < du_) *cur_ = cand_;                                              \
    } while (0)
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++)
            for (int k = 0; k < 4; k++) TAKE(i, j, pass1[k][0], pass1[k][1]);
        for (int i = W - 1; i >= 0; i--) TAKE(i, j, 1, 0);
    }
    for (int j = H - 1; j >= 0; j--) {
        for (int i = W - 1; i >= 0; i--)
            for (int k = 0; k < 4; k++) TAKE(i, j, pass2[k][0], pass2[k][1]);
        for (int i = 0; i < W; i++) TAKE(i, j, -1, 0);
    }
#undef TAKE
}

Test(nearest_source, equals_the_one_neighbour_at_a_time_sweep_ties_included)
{
    enum { W = 97, H = 61 };
    static uint8_t ob[W * H];
    static int32_t src[W * H], ref[W * H];
    uint64_t rng = 11;
    for (int round = 0; round < 4; round++) {
        double p = round == 0 ? 0.002 : round == 1 ? 0.02 : round == 2 ? 0.2 : 0.6;
        for (int c = 0; c < W * H; c++)
            ob[c] = rng_unit(&rng) < p;
        nm_error err = {0};
        cr_assert_eq(nm_grid_nearest_source(W, H, ob, src, &err), NM_OK);
        nearest_source_ref(W, H, ob, ref);
        for (int c = 0; c < W * H; c++)
            cr_assert_eq(src[c], ref[c], "density %.3f, cell %d", p, c);
    }
}

/* The row of a cell number by a multiply and a shift equals the integer division, for widths
 * from 1 to 2^31 - 1 (powers of two and their neighbours among them) and cell numbers up to
 * 2^31 - 1. Fails when the multiplier is rounded down or the shift is one short. */
Test(nearest_source, divider_gives_the_quotient_of_every_cell_number)
{
    uint32_t ds[64] = {1, 2, 3, 5, 7, 63, 64, 65, 1000, 1283, 1664, 2718, 65535, 65536, 65537,
                       (1u << 20) + 1, 1u << 30, (1u << 30) + 1, 0x7FFFFFFFu, 0x7FFFFFFEu};
    uint64_t rng = 5;
    for (int k = 20; k < 64; k++)
        ds[k] = 1 + (uint32_t)(rng_unit(&rng) * (k < 40 ? 5000.0 : 2147483646.0));
    for (int k = 0; k < 64; k++) {
        const uint32_t d = ds[k];
        const nm_grid_divider v = nm_grid_divider_of(d);
        const uint32_t edge[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, 0x7FFFFFFEu, 0x7FFFFFFFu,
                                 0x7FFFFFFFu / d * d, 0x7FFFFFFFu / d * d - 1};
        for (size_t e = 0; e < sizeof edge / sizeof edge[0]; e++)
            if (edge[e] <= 0x7FFFFFFFu)
                cr_assert_eq(nm_grid_div(&v, edge[e]), edge[e] / d, "%u / %u", edge[e], d);
        for (int t = 0; t < 20000; t++) {
            const uint32_t c = (uint32_t)(rng_unit(&rng) * 2147483647.0);
            cr_assert_eq(nm_grid_div(&v, c), c / d, "%u / %u", c, d);
        }
    }
}

/* The corridor's use: a few thousand seeds along a wandering path in a window of a million
 * cells, so most cells share their neighbours' source (the sweeps skip those takes) and the
 * sources lie hundreds of cells away; widths 1, powers of two and odd ones for the row of a cell
 * number (a multiply and a shift). Fails when a take keeps a tie's candidate or a row is off. */
Test(nearest_source, path_seeds_in_wide_windows_equal_the_one_neighbour_at_a_time_sweep)
{
    static const int size[][2] = {{1, 700}, {700, 1}, {1024, 640}, {1283, 777}, {64, 2049}};
    uint64_t rng = 17;
    for (size_t k = 0; k < sizeof size / sizeof size[0]; k++) {
        const int W = size[k][0], H = size[k][1];
        uint8_t *ob = calloc((size_t)W * H, 1);
        int32_t *src = malloc((size_t)W * H * sizeof *src), *ref = malloc((size_t)W * H * sizeof *ref);
        cr_assert(ob && src && ref);
        int x = W / 5, y = H / 3;
        for (int n = 0; n < 3000; n++) { /* a walk drifting right and down, and a few lone seeds */
            ob[(size_t)y * W + x] = 1;
            const double u = rng_unit(&rng), v = rng_unit(&rng);
            const int dx = u < 0.6 ? 1 : u < 0.8 ? 0 : -1, dy = v < 0.45 ? 1 : v < 0.75 ? 0 : -1;
            x = x + dx < 0 || x + dx >= W ? x : x + dx;
            y = y + dy < 0 || y + dy >= H ? y : y + dy;
            if (n % 500 == 0)
                ob[(size_t)(rng_unit(&rng) * H) * W + (size_t)(rng_unit(&rng) * W)] = 1;
        }
        nm_error err = {0};
        cr_assert_eq(nm_grid_nearest_source(W, H, ob, src, &err), NM_OK);
        nearest_source_ref(W, H, ob, ref);
        for (int c = 0; c < W * H; c++)
            cr_assert_eq(src[c], ref[c], "%dx%d: cell %d", W, H, c);
        free(ob);
        free(src);
        free(ref);
    }
}

/* Two walls across a random mask (rows 0 and 40), so every round has a corridor axis. */
static void corridor_into(uint8_t *ob, int W, int round)
{
    (void)round;
    for (int i = 0; i < W; i++) {
        ob[i] = 1;
        ob[40 * W + i] = 1;
    }
}

Test(medial_axis, one_cell_from_the_sources_equals_the_whole_mask)
{
    /* nm_grid_medial_cell reads no obstacle mask (an obstacle is its own source): the bake frees
     * the mask before it judges its cells */
    enum { W = 80, H = 50 };
    static uint8_t ob[W * H], med[W * H];
    static int32_t src[W * H];
    uint64_t rng = 3;
    for (int round = 0; round < 3; round++) {
        for (int c = 0; c < W * H; c++)
            ob[c] = rng_unit(&rng) < (round == 0 ? 0.01 : round == 1 ? 0.05 : 0.3);
        corridor_into(ob, W, round);
        nm_error err = {0};
        cr_assert_eq(nm_grid_nearest_source(W, H, ob, src, &err), NM_OK);
        cr_assert_eq(nm_grid_medial_axis(W, H, ob, med, &err), NM_OK);
        size_t on = 0;
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                /* the header's definition, with the mask: a free cell with a free neighbour whose
                 * source lies >= 2 cells (4 squared) from its own */
                int c = j * W + i;
                bool want = false;
                for (int dj = -1; dj <= 1 && !ob[c] && src[c] >= 0; dj++)
                    for (int di = -1; di <= 1; di++) {
                        int a = i + di, b = j + dj, o = b * W + a;
                        if ((!di && !dj) || a < 0 || b < 0 || a >= W || b >= H || ob[o] || src[o] < 0)
                            continue;
                        int ex = src[o] % W - src[c] % W, ey = src[o] / W - src[c] / W;
                        want = want || ex * ex + ey * ey >= 4;
                    }
                on += want;
                cr_assert_eq(med[c] != 0, want, "medial_axis (%d,%d)", i, j);
                cr_assert_eq(nm_grid_medial_cell(W, H, src, i, j), want, "medial_cell (%d,%d)", i, j);
            }
        cr_assert_gt(on, 0, "round %d: some medial cells", round);
    }
}

/* nm_grid_nearest_source_rows on its own thread, its rows copied here as it marks them final. */
typedef struct rows_run {
    int32_t nx, ny;
    const uint8_t *ob;
    int32_t *src;
    atomic_int final_from;
    int rc;
} rows_run;

static void *rows_main(void *p)
{
    rows_run *r = p;
    nm_error err = {0};
    r->rc = nm_grid_nearest_source_rows(r->nx, r->ny, r->ob, r->src, &r->final_from, &err);
    return NULL;
}

Test(nearest_source, rows_marked_final_are_not_written_again)
{
    /* The corridor makes its rows from the sources while the sweeps still run, as final_from
     * falls. A copy of each row taken the moment it is marked final must equal the finished
     * output, which must equal nm_grid_nearest_source's; final_from must end at 0. It fails when
     * a row is marked final before the second pass has swept it (the grid is large enough for the
     * copies to interleave with the sweeps, which takes tens of milliseconds). */
    enum { NX = 1500, NY = 1000 };
    static uint8_t ob[NX * NY];
    static int32_t src[NX * NY], seen[NX * NY], want[NX * NY];
    uint64_t rng = 77;
    for (int c = 0; c < NX * NY; c++)
        ob[c] = rng_unit(&rng) < 0.001;
    nm_error err = {0};
    cr_assert_eq(nm_grid_nearest_source(NX, NY, ob, want, &err), NM_OK);
    rows_run r = {NX, NY, ob, src, NY, 0};
    atomic_init(&r.final_from, NY);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rows_main, &r), 0);
    int copied = NY, marks = 0; /* rows copied .. NY - 1 are in `seen` */
    while (copied > 0) {
        const int f = atomic_load_explicit(&r.final_from, memory_order_acquire);
        if (f < copied) {
            memcpy(seen + (size_t)f * NX, src + (size_t)f * NX, (size_t)(copied - f) * NX * sizeof *src);
            copied = f;
            marks++;
        }
    }
    pthread_join(th, NULL);
    cr_assert_eq(r.rc, NM_OK);
    cr_assert_eq(atomic_load(&r.final_from), 0);
    cr_log_info("final_from seen falling %d times", marks);
    cr_assert_eq(memcmp(seen, src, sizeof src), 0, "a row changed after it was marked final");
    cr_assert_eq(memcmp(src, want, sizeof src), 0, "not nm_grid_nearest_source's sources");
}

/* nm_grid_bands hands out every row once, last rows first, a band only when its rows and `halo`
 * rows above it are final, and nothing after a stop. Taken here on one thread, final_from set by
 * hand between the takes (the order a sweep's second pass sets it). */
Test(nearest_source, bands_are_given_once_final_with_their_halo)
{
    nm_grid_bands b;
    int32_t j0 = -1, j1 = -1;
    nm_grid_bands_init(&b, 20, 4, 1);
    atomic_store(&b.final_from, 10); /* rows 10 .. 19 final: bands may start at row 11 */
    cr_assert(nm_grid_bands_take(&b, &j0, &j1));
    cr_assert(j0 == 16 && j1 == 20, "[%d, %d)", j0, j1);
    cr_assert(nm_grid_bands_take(&b, &j0, &j1));
    cr_assert(j0 == 12 && j1 == 16, "[%d, %d)", j0, j1);
    cr_assert(nm_grid_bands_take(&b, &j0, &j1));
    cr_assert(j0 == 11 && j1 == 12, "a band cut at the first row whose halo is final: [%d, %d)", j0, j1);
    atomic_store(&b.final_from, 0); /* every row final: the first band reaches row 0 */
    int32_t rows = 0, last = 11;
    while (nm_grid_bands_take(&b, &j0, &j1)) {
        cr_assert(j1 == last && j0 < j1 && j1 - j0 <= 4, "[%d, %d) after %d", j0, j1, last);
        rows += j1 - j0;
        last = j0;
    }
    cr_assert(rows == 11 && last == 0, "%d rows, down to %d", rows, last);
    /* halo 0 (a reader of its own rows): a band starts at final_from itself; a stop ends it */
    nm_grid_bands_init(&b, 8, 32, 0);
    atomic_store(&b.final_from, 5);
    cr_assert(nm_grid_bands_take(&b, &j0, &j1));
    cr_assert(j0 == 5 && j1 == 8, "[%d, %d)", j0, j1);
    nm_grid_bands_stop(&b);
    cr_assert_not(nm_grid_bands_take(&b, &j0, &j1));
}
