/* test_morph.c — FillHoles and CloseCracks (预烘场 / 填洞与合缝): the article's five holes and its
 * crack table (widths 1..4 with k = 2). */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define NX 48
#define NY 40

static void carve(uint8_t *m, int i0, int j0, int w, int h)
{
    for (int j = j0; j < j0 + h; j++)
        for (int i = i0; i < i0 + w; i++)
            m[j * NX + i] = 0;
}

static bool all_set(const uint8_t *m, int i0, int j0, int w, int h, uint8_t v)
{
    for (int j = j0; j < j0 + h; j++)
        for (int i = i0; i < i0 + w; i++)
            if (m[j * NX + i] != v)
                return false;
    return true;
}

Test(fill_holes, fills_closed_12_and_32_cell_holes_keeps_edge_36_and_protected_holes)
{
    static uint8_t m[NX * NY], prot[NX * NY];
    memset(m, 1, sizeof m);
    memset(prot, 0, sizeof prot);
    carve(m, 2, 2, 3, 4);   /* 12 cells, closed */
    carve(m, 10, 2, 4, 8);  /* 32 cells, exactly the limit */
    carve(m, 20, 2, 6, 6);  /* 36 cells, over the limit */
    carve(m, 0, 20, 3, 3);  /* 9 cells touching the window edge */
    carve(m, 30, 20, 2, 2); /* 4 cells, one protected (Dead) */
    prot[21 * NX + 31] = 1;
    size_t filled = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_fill_holes(NX, NY, m, prot, &filled, &err), NM_OK, "%s", err.msg);
    cr_assert(all_set(m, 2, 2, 3, 4, 1), "12-cell hole filled");
    cr_assert(all_set(m, 10, 2, 4, 8, 1), "32-cell hole filled");
    cr_assert(all_set(m, 20, 2, 6, 6, 0), "36-cell hole kept");
    cr_assert(all_set(m, 0, 20, 3, 3, 0), "edge hole kept");
    cr_assert(all_set(m, 30, 20, 2, 2, 0), "protected hole kept");
    cr_assert_eq(filled, 44);
}

Test(fill_holes, holes_touching_only_at_a_corner_are_separate_4_connected_components)
{
    static uint8_t m[NX * NY];
    memset(m, 1, sizeof m);
    carve(m, 5, 5, 5, 4);  /* 20 cells */
    carve(m, 10, 9, 5, 4); /* 20 cells, meets the first only diagonally */
    size_t filled = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_fill_holes(NX, NY, m, NULL, &filled, &err), NM_OK);
    cr_assert_eq(filled, 40, "each 20-cell component is filled on its own");
    cr_assert(all_set(m, 5, 5, 5, 4, 1));
    cr_assert(all_set(m, 10, 9, 5, 4, 1));
}

Test(fill_holes, a_33_cell_hole_is_kept)
{
    static uint8_t m[NX * NY];
    memset(m, 1, sizeof m);
    carve(m, 5, 5, 4, 8);
    m[13 * NX + 5] = 0; /* 33rd cell */
    nm_error err = {0};
    cr_assert_eq(nm_grid_fill_holes(NX, NY, m, NULL, NULL, &err), NM_OK);
    cr_assert(all_set(m, 5, 5, 4, 8, 0));
}

/* The rule without shortcuts: every 4-connected component of free cells labelled whole (its
 * size, whether it touches the edge or holds a protected cell), the small closed ones set. */
static size_t fill_holes_whole(int nx, int ny, uint8_t *m, const uint8_t *prot)
{
    const int n = nx * ny;
    int *comp = malloc((size_t)n * sizeof *comp), *q = malloc((size_t)n * sizeof *q);
    cr_assert(comp && q);
    for (int c = 0; c < n; c++) comp[c] = -1;
    size_t filled = 0;
    for (int s = 0; s < n; s++) {
        if (m[s] || comp[s] >= 0) continue;
        int head = 0, tail = 0;
        bool open = false;
        comp[s] = s;
        q[tail++] = s;
        while (head < tail) {
            const int c = q[head++], i = c % nx, j = c / nx;
            open |= i == 0 || j == 0 || i == nx - 1 || j == ny - 1 || (prot && prot[c]);
            const int di[4] = {1, -1, 0, 0}, dj[4] = {0, 0, 1, -1};
            for (int k = 0; k < 4; k++) {
                const int a = i + di[k], b = j + dj[k];
                if (a < 0 || b < 0 || a >= nx || b >= ny || m[b * nx + a] || comp[b * nx + a] >= 0) continue;
                comp[b * nx + a] = s;
                q[tail++] = b * nx + a;
            }
        }
        if (!open && tail <= NM_kHoleMaxCells) {
            for (int k = 0; k < tail; k++) m[q[k]] = 2; /* set after the scan: 2 marks them */
            filled += (size_t)tail;
        }
    }
    for (int c = 0; c < n; c++) m[c] = m[c] != 0;
    free(comp);
    free(q);
    return filled;
}

/* FillHoles stops a walk once its component is known to be too large (past 32 cells, or at a
 * cell of one found before) and marks the cells it queued so; on random masks of every density
 * (components of all sizes, long thin ones winding back past their start) it must set exactly the
 * cells of the whole-component rule. */
Test(fill_holes, stopped_walks_fill_exactly_the_whole_component_rule)
{
    enum { W = 97, H = 61 };
    static uint8_t m[W * H], want[W * H], prot[W * H];
    uint64_t rng = 5;
    size_t filled_total = 0;
    for (int round = 0; round < 60; round++) {
        const double solid = 0.35 + 0.01 * (double)round, guard = round % 3 ? 0.0 : 0.02;
        for (int c = 0; c < W * H; c++) {
            m[c] = rng_unit(&rng) < solid;
            prot[c] = rng_unit(&rng) < guard;
        }
        memcpy(want, m, sizeof m);
        const size_t want_filled = fill_holes_whole(W, H, want, prot);
        size_t filled = 0;
        nm_error err = {0};
        cr_assert_eq(nm_grid_fill_holes(W, H, m, round % 3 ? NULL : prot, &filled, &err), NM_OK);
        cr_assert_eq(filled, want_filled, "round %d: %zu cells set, want %zu", round, filled, want_filled);
        cr_assert_eq(memcmp(m, want, sizeof m), 0, "round %d", round);
        filled_total += filled;
    }
    cr_assert_gt(filled_total, 1000, "holes filled: %zu", filled_total);
}

/* A vertical crack of `w` columns through the whole window height; returns rounds used. */
static int crack(int w, uint8_t *core)
{
    memset(core, 1, NX * NY);
    carve(core, 20, 0, w, NY);
    int rounds = -1;
    nm_error err = {0};
    cr_assert_eq(nm_grid_close_cracks(NX, NY, core, NULL, NULL, &rounds, &err), NM_OK);
    return rounds;
}

Test(close_cracks, cracks_of_1_and_2_cells_close_in_the_first_round)
{
    static uint8_t core[NX * NY];
    cr_assert_eq(crack(1, core), 1);
    cr_assert(all_set(core, 20, 0, 1, NY, 1));
    cr_assert_eq(crack(2, core), 1);
    cr_assert(all_set(core, 20, 0, 2, NY, 1));
}

Test(close_cracks, crack_of_3_cells_closes_middle_first_then_sides_in_two_rounds)
{
    static uint8_t core[NX * NY];
    cr_assert_eq(crack(3, core), 2);
    cr_assert(all_set(core, 20, 0, 3, NY, 1));
}

Test(close_cracks, crack_of_3_cells_after_one_round_has_only_the_middle)
{
    /* Rounds are visible through the layer mask: make the side columns leave the layer after
     * the first check by running with only the middle column in the layer. */
    static uint8_t core[NX * NY], layer[NX * NY];
    memset(core, 1, sizeof core);
    carve(core, 20, 0, 3, NY);
    memset(layer, 1, sizeof layer);
    carve(layer, 20, 0, 1, NY);
    carve(layer, 22, 0, 1, NY); /* only column 21 may join */
    int rounds = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_close_cracks(NX, NY, core, layer, NULL, &rounds, &err), NM_OK);
    cr_assert_eq(rounds, 1);
    cr_assert(all_set(core, 21, 0, 1, NY, 1), "the middle column has core within 2 on both sides");
    cr_assert(all_set(core, 20, 0, 1, NY, 0));
    cr_assert(all_set(core, 22, 0, 1, NY, 0));
}

Test(close_cracks, additions_apply_after_the_sweep_not_during_it)
{
    /* Crack of 3 (columns 20..22) with column 20 outside the layer: column 21 has core within 2
     * on both sides, column 22 only once 21 has joined — which must wait for the next round. */
    static uint8_t core[NX * NY], layer[NX * NY];
    memset(core, 1, sizeof core);
    carve(core, 20, 0, 3, NY);
    memset(layer, 1, sizeof layer);
    carve(layer, 20, 0, 1, NY);
    int rounds = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_close_cracks(NX, NY, core, layer, NULL, &rounds, &err), NM_OK);
    cr_assert_eq(rounds, 2);
    cr_assert(all_set(core, 21, 0, 2, NY, 1));
    cr_assert(all_set(core, 20, 0, 1, NY, 0));
}

Test(close_cracks, crack_of_4_cells_does_not_close)
{
    static uint8_t core[NX * NY];
    cr_assert_eq(crack(4, core), 0);
    cr_assert(all_set(core, 20, 0, 4, NY, 0));
}

Test(close_cracks, protected_cells_and_cells_outside_the_layer_stay_open)
{
    static uint8_t core[NX * NY], prot[NX * NY];
    memset(core, 1, sizeof core);
    carve(core, 20, 0, 1, NY);
    memset(prot, 0, sizeof prot);
    prot[7 * NX + 20] = 1;
    nm_error err = {0};
    cr_assert_eq(nm_grid_close_cracks(NX, NY, core, NULL, prot, NULL, &err), NM_OK);
    cr_assert_eq(core[7 * NX + 20], 0);
    cr_assert_eq(core[8 * NX + 20], 1);
}

Test(close_cracks, diagonal_crack_four_cells_across_rows_stays_open)
{
    /* Cells with 0 <= i - j < 4: every row and column crosses it over 4 cells. */
    static uint8_t core[NX * NY];
    memset(core, 1, sizeof core);
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++)
            if (i - j >= 0 && i - j < 4)
                core[j * NX + i] = 0;
    int rounds = -1;
    nm_error err = {0};
    cr_assert_eq(nm_grid_close_cracks(NX, NY, core, NULL, NULL, &rounds, &err), NM_OK);
    /* Only the window-corner cells near (0,0) may close; the band in the interior stays. */
    for (int j = 4; j < NY - 4; j++)
        for (int i = j; i < j + 4; i++)
            cr_assert_eq(core[j * NX + i], 0, "cell (%d,%d)", i, j);
}
