/* test_rise.c — RiseOk and the step bits (垂直可达判据 / 向上一步, 向下一步) on hand-made span
 * columns: the article's bump, dip, 0.5 m and 1 m stairs, bridge-deck seam and facade profiles. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>

/* Steps along +x in row 0 of a profile table. */
static bool up_x(const nm_span_table *t, int i, double ha, double hb)
{
    return nm_grid_rise_ok(t, NULL, i, 0, 1, 0, ha, hb);
}

Test(rise_ok, slope_within_a_quarter_metre_per_cell_passes_both_ways)
{
    double prof[8] = {0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    for (int i = 0; i < 7; i++) {
        cr_assert(up_x(&t, i, prof[i], prof[i + 1]), "up at %d", i);
        cr_assert(nm_grid_rise_ok(&t, NULL, i + 1, 0, -1, 0, prof[i + 1], prof[i]), "down at %d", i);
    }
    nm_span_table_free(&t);
}

Test(rise_ok, stairs_of_half_a_metre_climb)
{
    double prof[8] = {0, 0, 0.5, 1.0, 1.5, 2.0, 2.0, 2.0};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    for (int i = 0; i < 7; i++)
        cr_assert(up_x(&t, i, prof[i], prof[i + 1]), "step %d", i);
    nm_span_table_free(&t);
}

Test(rise_ok, stairs_of_one_metre_cannot_be_climbed_but_can_be_descended)
{
    double prof[8] = {0, 0, 1, 2, 3, 4, 5, 5};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    for (int i = 1; i < 6; i++) {
        cr_assert_not(up_x(&t, i, prof[i], prof[i + 1]), "up step %d", i);
        cr_assert(nm_grid_rise_ok(&t, NULL, i + 1, 0, -1, 0, prof[i + 1], prof[i]), "down %d", i);
    }
    nm_span_table_free(&t);
}

Test(rise_ok, narrow_bump_of_one_or_two_cells_passes_three_cells_does_not)
{
    double one[8] = {0, 0, 0, 1.0, 0, 0, 0, 0};
    double two[8] = {0, 0, 0, 1.0, 1.0, 0, 0, 0};
    double three[8] = {0, 0, 0, 1.0, 1.0, 1.0, 0, 0};
    nm_span_table t;
    table_from_profile(&t, 8, one, NULL);
    cr_assert(up_x(&t, 2, 0.0, 1.0), "start height returns 2 cells ahead");
    nm_span_table_free(&t);
    table_from_profile(&t, 8, two, NULL);
    cr_assert(up_x(&t, 2, 0.0, 1.0), "start height returns 3 cells ahead");
    nm_span_table_free(&t);
    table_from_profile(&t, 8, three, NULL);
    cr_assert_not(up_x(&t, 2, 0.0, 1.0), "a 3-cell plateau is a step, not a bump");
    nm_span_table_free(&t);
}

Test(rise_ok, bump_higher_than_1_25_m_is_refused)
{
    double prof[8] = {0, 0, 0, 1.3, 0, 0, 0, 0};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    cr_assert_not(up_x(&t, 2, 0.0, 1.3));
    nm_span_table_free(&t);
}

Test(rise_ok, bump_ahead_with_both_heights_stacked_is_not_a_bump)
{
    /* Column 4 holds the start height AND the target height (two layers): no bump. */
    double prof[8] = {0, 0, 0, 1.0, 0, 1.0, 1.0, 1.0};
    span_def extra[] = {{4, 0, 1.0}, {-1, 0, 0}};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    cr_assert(up_x(&t, 2, 0.0, 1.0), "control: plain one-cell bump");
    nm_span_table_free(&t);
    table_from_profile(&t, 8, prof, extra);
    cr_assert_not(up_x(&t, 2, 0.0, 1.0));
    nm_span_table_free(&t);
}

Test(rise_ok, shallow_dip_lets_you_climb_out)
{
    double prof[8] = {0, 0, -1.0, 0, 0, 0, 0, 0};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    cr_assert(up_x(&t, 2, -1.0, 0.0), "target height one cell behind");
    cr_assert(nm_grid_rise_ok(&t, NULL, 2, 0, -1, 0, -1.0, 0.0), "and the other way");
    nm_span_table_free(&t);
    /* Two cells deep-wide dip: target height two cells behind. */
    double wide[8] = {0, 0, -1.0, -1.0, 0, 0, 0, 0};
    table_from_profile(&t, 8, wide, NULL);
    cr_assert(up_x(&t, 3, -1.0, 0.0));
    nm_span_table_free(&t);
    /* Three cells wide: no target height within 2 cells behind. */
    double pit[9] = {0, 0, -1.0, -1.0, -1.0, 0, 0, 0, 0};
    table_from_profile(&t, 9, pit, NULL);
    cr_assert_not(up_x(&t, 4, -1.0, 0.0));
    nm_span_table_free(&t);
}

Test(rise_ok, dip_behind_a_stacked_column_does_not_count)
{
    /* Column 1 behind holds the target height: a dip. Stack the start height there too (two
     * layers, like a staircase drawn as a stack) and it no longer counts. */
    double prof[8] = {-1.0, 0, -1.0, 0, 0, 0, 0, 0};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    cr_assert(up_x(&t, 2, -1.0, 0.0), "control: plain dip");
    nm_span_table_free(&t);
    span_def extra[] = {{1, 0, -1.0}, {-1, 0, 0}};
    table_from_profile(&t, 8, prof, extra);
    cr_assert_not(up_x(&t, 2, -1.0, 0.0));
    nm_span_table_free(&t);
}

Test(rise_ok, facade_column_gets_only_the_slope_allowance)
{
    /* Column (1,0) and (1,1): spans 0.3 / 2 / 4 -> face (3 spans over 3.7 m). Orthogonal 0.3 m is
     * refused (step 5), diagonal 0.3 m passes within 0.25*sqrt(2) (step 4). */
    span_def d[] = {{0, 0, 0.0}, {1, 0, 0.3}, {1, 0, 2.0}, {1, 0, 4.0},
                    {0, 1, 0.0}, {1, 1, 0.3}, {1, 1, 2.0}, {1, 1, 4.0},
                    {0, 2, 0.0}, {2, 0, 0.7}};
    nm_span_table t;
    table_from_defs(&t, 3, 3, d, sizeof d / sizeof d[0]);
    cr_assert(nm_span_cell_face(&t, 1));
    cr_assert_not(nm_grid_rise_ok(&t, NULL, 0, 0, 1, 0, 0.0, 0.3), "orthogonal onto facade");
    cr_assert(nm_grid_rise_ok(&t, NULL, 0, 0, 1, 1, 0.0, 0.3), "diagonal slope allowance");
    cr_assert(nm_grid_rise_ok(&t, NULL, 0, 0, 1, 0, 0.0, 0.25), "one-cell slope");
    cr_assert_not(nm_grid_rise_ok(&t, NULL, 0, 2, 1, -1, 0.0, 0.4), "beyond the diagonal slope");
    /* Off the facade, 0.4 is a plain step (step 6). */
    cr_assert(nm_grid_rise_ok(&t, NULL, 0, 2, 1, 0, 0.0, 0.4));
    /* Leaving a facade column upward gets no step allowance either. */
    cr_assert_not(nm_grid_rise_ok(&t, NULL, 1, 0, 1, 0, 0.3, 0.7), "from the facade");
    /* Walking up the wall foot's stack is refused. */
    cr_assert_not(nm_grid_rise_ok(&t, NULL, 0, 1, 1, 0, 0.0, 2.0));
    nm_span_table_free(&t);
}

Test(rise_ok, steps_up_over_1_25_m_and_5_m_walls_are_refused_but_the_drop_passes)
{
    double prof[8] = {0, 0, 0, 5.0, 5.0, 5.0, 5.0, 5.0};
    nm_span_table t;
    table_from_profile(&t, 8, prof, NULL);
    cr_assert_not(up_x(&t, 2, 0.0, 5.0), "step 7");
    cr_assert(nm_grid_rise_ok(&t, NULL, 3, 0, -1, 0, 5.0, 0.0), "ledge drop: no deck ahead");
    nm_span_table_free(&t);
}

/* Bridge deck at 5 m over ground at 0 in a 14 x 1 window; deck columns given by a bitmask. */
static void deck(nm_span_table *t, unsigned mask)
{
    double prof[14];
    span_def extra[15];
    int n = 0;
    for (int i = 0; i < 14; i++) {
        prof[i] = 0.0;
        if (mask & (1u << i))
            extra[n++] = (span_def){i, 0, 5.0};
    }
    extra[n] = (span_def){-1, 0, 0};
    table_from_profile(t, 14, prof, extra);
}

Test(rise_ok, drop_from_deck_is_a_seam_while_the_deck_continues_within_4_cells)
{
    nm_span_table t;
    /* deck on 0..3 and 5..13: one-column gap at 4, the deck reappears at s = 2 */
    deck(&t, 0x3FFFu & ~(1u << 4));
    cr_assert_not(up_x(&t, 3, 5.0, 0.0));
    nm_span_table_free(&t);
    /* the next deck cell itself still has the deck (s = 1): stay on the deck */
    deck(&t, 0x3FFFu);
    cr_assert_not(up_x(&t, 3, 5.0, 0.0));
    nm_span_table_free(&t);
    /* deck reappears at s = 4: still a seam */
    deck(&t, 0x0Fu | (1u << 7));
    cr_assert_not(up_x(&t, 3, 5.0, 0.0));
    nm_span_table_free(&t);
    /* deck reappears only at s = 5: a ledge */
    deck(&t, 0x0Fu | (1u << 8));
    cr_assert(up_x(&t, 3, 5.0, 0.0));
    nm_span_table_free(&t);
}

Test(rise_ok, another_layer_within_3_m_of_the_start_ahead_blocks_the_drop)
{
    double prof[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    span_def extra[] = {{0, 0, 5.0}, {1, 0, 5.0}, {4, 0, 2.1}, {-1, 0, 0}};
    nm_span_table t;
    table_from_profile(&t, 10, prof, extra);
    cr_assert_not(up_x(&t, 1, 5.0, 0.0), "2.9 m below the start counts as the start layer");
    nm_span_table_free(&t);
}

Test(rise_ok, look_ahead_sees_nothing_outside_the_window)
{
    double prof[4] = {0, 0, 0, 0};
    span_def extra[] = {{0, 0, 5.0}, {1, 0, 5.0}, {2, 0, 5.0}, {-1, 0, 0}};
    nm_span_table t;
    table_from_profile(&t, 4, prof, extra);
    /* from column 2 to 3: the deck may continue beyond the window edge, but levelAt says no */
    cr_assert(up_x(&t, 2, 5.0, 0.0));
    nm_span_table_free(&t);
}

typedef struct gate_log {
    int calls;
    uint32_t from, to;
    double hf, ht;
    bool block;
} gate_log;

static bool gate_fn(void *ctx, uint32_t from, double hf, uint32_t to, double ht)
{
    gate_log *g = ctx;
    g->calls++;
    g->from = from, g->to = to, g->hf = hf, g->ht = ht;
    return g->block;
}

Test(rise_ok, fall_gate_is_asked_about_ledge_drops_only_and_can_block_them)
{
    nm_span_table t;
    deck(&t, 0x0Fu);
    gate_log log = {0};
    nm_fall_gate gate = {gate_fn, &log};
    cr_assert(nm_grid_rise_ok(&t, &gate, 3, 0, 1, 0, 5.0, 0.0));
    cr_assert_eq(log.calls, 1);
    cr_assert_eq(log.from, 3);
    cr_assert_eq(log.to, 4);
    cr_assert_eq(log.hf, 5.0);
    cr_assert_eq(log.ht, 0.0);
    log.block = true;
    cr_assert_not(nm_grid_rise_ok(&t, &gate, 3, 0, 1, 0, 5.0, 0.0));
    cr_assert_eq(log.calls, 2);
    /* not asked: a 2.9 m drop (step 3; beyond the deck, nothing over the landing), a step up, or a
     * drop the look-ahead already refused */
    cr_assert(nm_grid_rise_ok(&t, &gate, 4, 0, 1, 0, 2.9, 0.0));
    cr_assert_not(nm_grid_rise_ok(&t, &gate, 4, 0, -1, 0, 0.0, 5.0));
    cr_assert_not(nm_grid_rise_ok(&t, &gate, 1, 0, 1, 0, 5.0, 0.0));
    cr_assert_eq(log.calls, 2);
    nm_fall_gate none = {NULL, NULL};
    cr_assert(nm_grid_rise_ok(&t, &none, 3, 0, 1, 0, 5.0, 0.0), "NULL callback = no gate");
    nm_span_table_free(&t);
}

Test(step_bits, one_metre_stair_forbids_up_and_allows_down)
{
    /* 2 x 2 window: (0,0) at 0, (1,0) at 1.0 m, (0,1) at 0.2, (1,1) absent. */
    span_def d[] = {{0, 0, 0.0}, {1, 0, 1.0}, {0, 1, 0.2}};
    nm_span_table t;
    table_from_defs(&t, 2, 2, d, 3);
    uint32_t k00 = t.cs[nm_span_cell_index(&t, 0)];
    uint8_t bits = nm_grid_step_bits(&t, NULL, NULL, k00);
    cr_assert_eq(bits, 0x01, "direction (1,0): forward up 1 m forbidden, back down allowed; "
                             "(0,1) 0.2 m both ways allowed; got 0x%02x", bits);
    uint32_t k01 = t.cs[nm_span_cell_index(&t, 2)];
    /* from (0,1): direction (1,-1) reaches (1,0): up 0.8 m forbidden forward, down fine */
    cr_assert_eq(nm_grid_step_bits(&t, NULL, NULL, k01), 0x40);
    /* regions: with different rids the partner is not taken */
    uint32_t rid[3] = {1, 2, 1};
    cr_assert_eq(nm_grid_step_bits(&t, NULL, rid, k00), 0x00);
    nm_span_table_free(&t);
}

Test(step_bits, reverse_bit_judges_the_step_back_in_its_own_direction)
{
    /* Row 1, 1, 1, 0, 0: from column 2 (1 m) the +x step down to column 3 is fine; the step back
     * up (direction -x) finds no bump ahead and no dip behind, so it is forbidden: bit 1 only. */
    double prof[5] = {1, 1, 1, 0, 0};
    nm_span_table t;
    table_from_profile(&t, 5, prof, NULL);
    uint8_t bits = nm_grid_step_bits(&t, NULL, NULL, 2);
    cr_assert_eq(bits, 0x02, "got 0x%02x", bits);
    nm_span_table_free(&t);
}

/* The span of column i (row 0) at height h. */
static uint32_t span_of(const nm_span_table *t, int i, double h)
{
    uint32_t f, n = nm_span_cell_spans(t, (uint32_t)i, &f);
    for (uint32_t k = f; k < f + n; k++)
        if (fabs(t->sp_h[k] - h) < 1e-6) return k;
    cr_assert_fail("no span at column %d height %.2f", i, h);
    return 0;
}

Test(step_bits, dip_exit_column_keeps_the_road_level_step)
{
    /* A 1 m dip two columns wide whose walls fall inside columns 2 and 4 (both heights there):
     * the floor's rise from (4, -1) to (5, 0) is refused (column 2 behind holds both heights),
     * but the road level of column 4 is entered from the floor at 3 (浅坑) and steps on to 5, so
     * the edge 4 -> 5 stays open; the search still refuses the floor span's own step. */
    span_def d[] = {{0, 0, 0.0}, {1, 0, 0.0}, {2, 0, -1.0}, {2, 0, 0.0}, {3, 0, -1.0},
                    {4, 0, -1.0}, {4, 0, 0.0}, {5, 0, 0.0}, {6, 0, 0.0}};
    nm_span_table t;
    table_from_defs(&t, 7, 1, d, sizeof d / sizeof d[0]);
    cr_assert_not(up_x(&t, 4, -1.0, 0.0), "the floor span's own rise is refused");
    cr_assert(up_x(&t, 3, -1.0, 0.0), "the way out: floor at 3 onto the road at 4");
    uint8_t bits = nm_grid_step_bits(&t, NULL, NULL, span_of(&t, 4, -1.0));
    cr_assert_eq(bits & 1u, 0, "edge 4 -> 5 not forbidden (got 0x%02x)", bits);
    nm_span_table_free(&t);
}

Test(step_bits, step_column_still_forbids_the_rise)
{
    /* A continuing 1 m step whose face falls inside column 2: its road level is entered only
     * from the upper side, so the lower span's refused rise forbids the edge 2 -> 3. */
    span_def d[] = {{0, 0, 0.0}, {1, 0, 0.0}, {2, 0, 0.0}, {2, 0, 1.0}, {3, 0, 1.0}, {4, 0, 1.0}};
    nm_span_table t;
    table_from_defs(&t, 5, 1, d, sizeof d / sizeof d[0]);
    uint8_t bits = nm_grid_step_bits(&t, NULL, NULL, span_of(&t, 2, 0.0));
    cr_assert_eq(bits & 1u, 1u, "edge 2 -> 3 forbidden (got 0x%02x)", bits);
    nm_span_table_free(&t);
}

Test(step_bits, bump_is_open_both_ways)
{
    /* A 1 m bump whose faces fall inside columns 2 and 4: east to west, the step from 5 up onto
     * the top span of 4 is refused, but the edge 5 -> 4 is crossed straight at road level
     * (6 -> 5 -> 4), from where the bump is climbed (4 -> 3, 窄凸起): the edge stays open. */
    span_def d[] = {{0, 0, 0.0}, {1, 0, 0.0}, {2, 0, 0.0}, {2, 0, 1.0}, {3, 0, 1.0},
                    {4, 0, 0.0}, {4, 0, 1.0}, {5, 0, 0.0}, {6, 0, 0.0}};
    nm_span_table t;
    table_from_defs(&t, 7, 1, d, sizeof d / sizeof d[0]);
    cr_assert_not(nm_grid_rise_ok(&t, NULL, 5, 0, -1, 0, 0.0, 1.0), "5 -> top of 4 refused");
    uint8_t bits = nm_grid_step_bits(&t, NULL, NULL, span_of(&t, 4, 1.0));
    cr_assert_eq(bits & 2u, 0, "edge 5 -> 4 not forbidden (got 0x%02x)", bits);
    nm_span_table_free(&t);
}

/* Step 2b (issue 12, large world leg 28): a step down within kClimb but deeper than kBumpUp into a
 * column holding a surface within the body above the take-off (kFallClimb .. kFallHeight over it)
 * walks into the level over the landing: a floor's edge over a stairwell, the flight above the one
 * below. Not asked of the gate; refused by the grid alone. */
Test(rise_ok, step_down_under_the_level_above_the_landing_is_refused)
{
    /* columns: 0 = the floor's edge at 3.5 m; 1 = flight below at 1.0 m, flight above at 4.0 m;
     * 2 = flight below at 1.0 m, the one above at 6.5 m (2.5 m over a take-off at 4.0 m) */
    double prof[3] = {3.5, 1.0, 1.0};
    span_def extra[] = {{1, 0, 4.0}, {2, 0, 6.5}, {-1, 0, 0}};
    nm_span_table t;
    table_from_profile(&t, 3, prof, extra);
    gate_log log = {0};
    nm_fall_gate gate = {gate_fn, &log};
    cr_assert_not(nm_grid_rise_ok(&t, &gate, 0, 0, 1, 0, 3.5, 1.0), "2.5 m down under a level 0.5 m above");
    cr_assert(nm_grid_rise_ok(&t, &gate, 1, 0, 1, 0, 4.0, 1.0), "3 m down, the level above 2.5 m over the take-off");
    cr_assert(nm_grid_rise_ok(&t, &gate, 0, 0, 1, 0, 3.5, 2.5), "1 m down (within kBumpUp): not judged");
    cr_assert_eq(log.calls, 0, "the fall gate is not asked within kClimb");
    nm_span_table_free(&t);
}
