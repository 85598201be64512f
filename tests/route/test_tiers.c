/* test_tiers.c — window tiers (design article 窗口分档): allowed cost per level, the ellipse
 * rectangle and the article's numbers, the three window kinds, capped bisection, the degenerate
 * segment, level skipping, the round outcomes, limit1 / limit2 and the early give-up bound, and
 * the switches of the twelve escalation reasons. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "route/route.h"

static nm_tier_leg leg_px(double sx, double sy, double gx, double gy)
{
    nm_tier_leg l = {sx, sy, gx, gy, sx, sy};
    return l;
}

static nm_cell_rect big_region(void)
{
    nm_cell_rect r = {-10000, -10000, 9999, 9999}; /* 4e8 cells exactly */
    return r;
}

Test(tiers, allowed_cost_doubles_per_level_plus_slack)
{
    cr_expect_float_eq(nm_tier_allowed_cost(400, 0), 1000.0, 1e-12);
    cr_expect_float_eq(nm_tier_allowed_cost(400, 1), 1800.0, 1e-12);
    cr_expect_float_eq(nm_tier_allowed_cost(400, 3), 6600.0, 1e-12);
    cr_expect_float_eq(nm_tier_allowed_cost(0, 17), 200.0, 1e-12);
    /* the article's long leg: 172 px, level 0 allows 394 px */
    cr_expect_float_eq(nm_tier_allowed_cost(172.0 / 0.25, 0) * 0.25, 394.0, 1e-9);
}

Test(tiers, ellipse_rect_of_a_horizontal_leg)
{
    nm_tier_leg l = leg_px(0, 0, 100, 0); /* L = 400 cells, C0 = 1000 */
    nm_cell_rect r = nm_tier_ellipse_rect(&l, nm_tier_allowed_cost(400, 0));
    /* a = 500, b = sqrt(1000^2 - 400^2)/2 = 458.26 (ratio 0.917), centre (200, 0), halo 72 */
    cr_expect_eq(r.x0, -300 - 72);
    cr_expect_eq(r.x1, 700 + 72);
    cr_expect_eq(r.y0, -459 - 72);
    cr_expect_eq(r.y1, 459 + 72);
    double a = 500, b = sqrt(1000.0 * 1000.0 - 400.0 * 400.0) / 2;
    cr_expect_float_eq(b / a, 0.9165, 1e-4);
}

Test(tiers, level0_window_reaches_three_million_cells_near_740)
{
    nm_tier_leg l = leg_px(0, 0, 737 * 0.25, 0);
    nm_cell_rect r = nm_tier_ellipse_rect(&l, nm_tier_allowed_cost(737, 0));
    uint64_t a = nm_cell_rect_area(&r);
    cr_expect(a > 2950000 && a < 3050000, "area %llu", (unsigned long long)a);
    nm_tier_leg l2 = leg_px(0, 0, 700 * 0.25, 0);
    nm_cell_rect r2 = nm_tier_ellipse_rect(&l2, nm_tier_allowed_cost(700, 0));
    cr_expect_lt(nm_cell_rect_area(&r2), 3000000);
}

Test(tiers, endpoint_box_includes_the_snapped_start_but_not_the_goal_snap)
{
    nm_tier_leg l = leg_px(10, 10, 10, 10);
    l.ssx = 100; /* snapped start far to the right: the box must reach it */
    nm_cell_rect r = nm_tier_ellipse_rect(&l, 200);
    cr_expect_eq(r.x1, 400 + 72);
}

Test(tiers, small_region_uses_the_full_window_at_once)
{
    nm_cell_rect bbox = {0, 0, 99, 99};
    nm_cell_rect R = nm_tier_region_rect(&bbox);
    cr_expect_eq(R.x0, -32);
    cr_expect_eq(R.x1, 131);
    nm_tier_leg l = leg_px(1, 1, 20, 20);
    nm_tier_choice c = nm_tier_window(&l, &R, 0);
    cr_expect_eq(c.kind, NM_TIER_FULL);
    cr_expect(nm_cell_rect_equal(&c.rect, &R));
}

Test(tiers, eighty_percent_cover_goes_full_below_stays_tentative)
{
    nm_tier_leg l = leg_px(0, 0, 25, 0); /* L = 100, C0 = 400: rect x [-172, 372], y [-245, 245] */
    nm_cell_rect e = nm_tier_ellipse_rect(&l, 400);
    /* region whose clipped overlap is exactly 80 %: widen the region in x by 25 % */
    int64_t w = e.x1 - e.x0 + 1;
    nm_cell_rect R = {e.x0, e.y0, e.x0 + (w * 5) / 4 - 1, e.y1};
    uint64_t aR = nm_cell_rect_area(&R), ae = nm_cell_rect_area(&e);
    cr_assert(5 * ae >= 4 * aR);
    cr_expect_eq(nm_tier_window(&l, &R, 0).kind, NM_TIER_FULL);
    nm_cell_rect R2 = {e.x0, e.y0, e.x0 + 2 * w - 1, e.y1}; /* 50 % */
    cr_expect_eq(nm_tier_window(&l, &R2, 0).kind, NM_TIER_TENTATIVE);
}

Test(tiers, capped_bisection_finds_the_largest_window_under_the_cap)
{
    nm_cell_rect R = big_region();
    nm_tier_leg l = leg_px(0, 0, 172, 40); /* long leg, level 1 over the cap */
    nm_tier_choice c0 = nm_tier_window(&l, &R, 0);
    nm_tier_choice c1 = nm_tier_window(&l, &R, 1);
    cr_expect_eq(c0.kind, NM_TIER_TENTATIVE);
    cr_assert_eq(c1.kind, NM_TIER_CAPPED);
    double L = nm_tier_leg_cells(&l);
    cr_expect_leq(nm_cell_rect_area(&c1.rect), 3000000);
    cr_expect_geq(c1.cost, L);
    cr_expect_leq(c1.cost, nm_tier_allowed_cost(L, 1));
    /* a slightly larger cost breaks the cap: the bisection is tight */
    nm_cell_rect more = nm_tier_ellipse_rect(&l, c1.cost + 2.0);
    cr_expect_gt(nm_cell_rect_area(&more), 3000000);
    cr_expect_gt(nm_cell_rect_area(&c1.rect), 2900000);
}

Test(tiers, degenerate_segment_over_the_cap_is_used_directly)
{
    nm_cell_rect R = {-100, -1000, 49999, 999};
    nm_tier_leg l = leg_px(0, 0, 10000, 0); /* L = 40000 cells: even the segment is > 3e6 */
    nm_tier_choice c = nm_tier_window(&l, &R, 0);
    cr_expect_eq(c.kind, NM_TIER_CAPPED);
    cr_expect_float_eq(c.cost, 40000.0, 1e-9);
    cr_expect_gt(nm_cell_rect_area(&c.rect), 3000000);
    cr_expect_eq(c.rect.y1 - c.rect.y0 + 1, 145); /* b = 0: only the halo and one cell */
}

Test(tiers, zero_length_leg_skips_levels_then_goes_full)
{
    nm_cell_rect R = big_region();
    nm_tier_leg l = leg_px(5, 5, 5, 5);
    nm_tier_state s;
    nm_tier_state_init(&s);
    nm_error err = {0};
    nm_tier_choice c;
    cr_assert_eq(nm_tier_next(&s, &l, &R, &c, &err), NM_OK);
    cr_expect_eq(c.kind, NM_TIER_TENTATIVE);
    cr_expect_float_eq(c.cost, 200.0, 1e-12);
    cr_expect_eq(nm_tier_after(&s, &c, &R, NM_TIER_NO_PATH), NM_TIER_NEXT_LEVEL);
    cr_assert_eq(nm_tier_next(&s, &l, &R, &c, &err), NM_OK);
    cr_expect_eq(c.kind, NM_TIER_FULL, "C = 200 at every level: the window never grows");
    cr_expect_eq(s.level, NM_kMaxLevel + 1);
    cr_expect_eq(s.tier, 1);
}

Test(tiers, short_leg_skips_only_while_the_window_is_unchanged)
{
    nm_cell_rect R = big_region();
    nm_tier_leg l = leg_px(0, 0, 0.1, 0); /* L = 0.4 cells: doubling adds under a cell */
    nm_tier_state s;
    nm_tier_state_init(&s);
    nm_error err = {0};
    nm_tier_choice c, c2;
    cr_assert_eq(nm_tier_next(&s, &l, &R, &c, &err), NM_OK);
    nm_tier_after(&s, &c, &R, NM_TIER_ESCALATE);
    cr_assert_eq(nm_tier_next(&s, &l, &R, &c2, &err), NM_OK);
    cr_expect_eq(c2.kind, NM_TIER_TENTATIVE);
    cr_expect_not(nm_cell_rect_equal(&c.rect, &c2.rect));
    cr_expect_gt(s.level, 1);
    cr_expect_gt(s.skipped, 0);
}

Test(tiers, region_over_four_hundred_million_cells_is_an_error_for_full)
{
    nm_cell_rect R = {0, 0, 29999, 29999};
    nm_tier_leg l = leg_px(5, 5, 5, 5);
    nm_tier_state s;
    nm_tier_state_init(&s);
    s.force_full = true;
    nm_error err = {0};
    nm_tier_choice c;
    cr_expect_eq(nm_tier_next(&s, &l, &R, &c, &err), NM_ERR_STATE);
    cr_expect(strstr(err.msg, "too large") != NULL, "%s", err.msg);
}

Test(tiers, round_outcomes_follow_the_flowchart)
{
    nm_cell_rect R = big_region();
    nm_tier_state s;
    nm_tier_choice t = {NM_TIER_TENTATIVE, {0, 0, 9, 9}, 10, 0};
    nm_tier_choice cp = {NM_TIER_CAPPED, {0, 0, 9, 9}, 10, 0};
    nm_tier_choice f = {NM_TIER_FULL, R, 0, 0};
    nm_tier_state_init(&s);
    cr_expect_eq(nm_tier_after(&s, &t, &R, NM_TIER_BUILD_FAILED), NM_TIER_NEXT_LEVEL);
    cr_expect_eq(s.level, 1);
    cr_expect_eq(nm_tier_after(&s, &t, &R, NM_TIER_ROUTE), NM_TIER_ACCEPT);
    nm_tier_state_init(&s);
    cr_expect_eq(nm_tier_after(&s, &cp, &R, NM_TIER_BUILD_FAILED), NM_TIER_NEXT_FULL);
    cr_expect(s.force_full);
    nm_tier_state_init(&s);
    cr_expect_eq(nm_tier_after(&s, &cp, &R, NM_TIER_NO_PATH), NM_TIER_NEXT_FULL);
    nm_cell_rect huge = {0, 0, 29999, 29999};
    nm_tier_state_init(&s);
    cr_expect_eq(nm_tier_after(&s, &cp, &huge, NM_TIER_NO_PATH), NM_TIER_FAIL);
    cr_expect_eq(nm_tier_after(&s, &cp, &R, NM_TIER_ROUTE), NM_TIER_ACCEPT, "capped routes are taken");
    cr_expect_eq(nm_tier_after(&s, &f, &R, NM_TIER_BUILD_FAILED), NM_TIER_FAIL);
    cr_expect_eq(nm_tier_after(&s, &f, &R, NM_TIER_NO_PATH), NM_TIER_FAIL);
}

Test(tiers, limit1_is_the_nearest_window_edge_minus_64)
{
    cr_expect_float_eq(nm_route_limit1(300, 200, 100, 90, 180, 120), 79.0 - 64.0, 1e-12);
    cr_expect_float_eq(nm_route_limit1(300, 200, 10, 90, 180, 120), 10.0 - 64.0, 1e-12);
}

static double brute_limit2(int nx, int ny, double si, double sj, double gi, double gj)
{
    double m = 64, x0 = m - 1, y0 = m - 1, x1 = nx - m, y1 = ny - m, best = INFINITY;
    double cx[5] = {x0, x1, x1, x0, x0}, cy[5] = {y0, y0, y1, y1, y0};
    for (int e = 0; e < 4; e++)
        for (int k = 0; k <= 200000; k++) {
            double t = k / 200000.0, x = cx[e] + (cx[e + 1] - cx[e]) * t, y = cy[e] + (cy[e + 1] - cy[e]) * t;
            double f = hypot(x - si, y - sj) + hypot(x - gi, y - gj);
            if (f < best) best = f;
        }
    return best - 1;
}

Test(tiers, limit2_matches_a_dense_scan_of_the_trust_zone_edge)
{
    int cases[4][6] = {{300, 200, 100, 90, 180, 120}, {500, 500, 250, 250, 250, 250},
                       {1000, 400, 100, 100, 900, 300}, {400, 900, 200, 150, 210, 700}};
    for (int k = 0; k < 4; k++) {
        int *c = cases[k];
        double l2 = nm_route_limit2(c[0], c[1], c[2], c[3], c[4], c[5]);
        double b = brute_limit2(c[0], c[1], c[2], c[3], c[4], c[5]);
        cr_expect_float_eq(l2, b, 1e-3, "case %d: %f vs %f", k, l2, b);
    }
    /* a single point in the middle of a 500 x 500 window: the edge at 436 is 186 away */
    cr_expect_float_eq(nm_route_limit2(500, 500, 250, 250, 250, 250), 2.0 * 186 - 1, 1e-6); /* edges at 63 and 436 */
}

/* Sides of a window clipped to the region rectangle cut no route (issue 14: small windows at a
 * region's border were refused "no path on the walk mask" although the route lies inside). */
Test(tiers, region_sides_have_no_trust_edge)
{
    nm_cell_rect R = {0, 0, 999, 999};
    nm_cell_rect w1 = {0, 100, 500, 999}, w2 = {10, 10, 20, 20}, w3 = R;
    cr_expect_eq(nm_route_region_sides(&w1, &R), NM_SIDE_X0 | NM_SIDE_Y1);
    cr_expect_eq(nm_route_region_sides(&w2, &R), 0u);
    cr_expect_eq(nm_route_region_sides(&w3, &R), NM_SIDE_X0 | NM_SIDE_Y0 | NM_SIDE_X1 | NM_SIDE_Y1);
    /* no region side: the plain bounds */
    cr_expect_float_eq(nm_route_limit1_sides(300, 200, 10, 90, 180, 120, 0), nm_route_limit1(300, 200, 10, 90, 180, 120), 1e-12);
    cr_expect_float_eq(nm_route_limit2_sides(300, 200, 10, 90, 180, 120, 0), nm_route_limit2(300, 200, 10, 90, 180, 120), 1e-12);
    /* the start 10 cells from x0: with x0 on the region rectangle the nearest cut edge is y0 (90)
     * for the start, and the goal's 79 to y1 */
    cr_expect_float_eq(nm_route_limit1_sides(300, 200, 10, 90, 180, 120, NM_SIDE_X0), 79.0 - 64.0, 1e-12);
    cr_expect(isinf(nm_route_limit1_sides(300, 200, 10, 90, 180, 120, 15u)));
    cr_expect(isinf(nm_route_limit2_sides(300, 200, 10, 90, 180, 120, 15u)));
    /* an end outside the trust zone across x0: the plain limit2 is about the leg itself (any route
     * escalates), without the x0 edge it is the nearest other edge's */
    double plain = nm_route_limit2(300, 200, 10, 90, 180, 120);
    double leg = hypot(170.0, 30.0);
    cr_expect(plain <= leg, "plain limit2 %f, leg %f", plain, leg);
    double sides = nm_route_limit2_sides(300, 200, 10, 90, 180, 120, NM_SIDE_X0);
    /* brute force over the three other edges, the y0 and y1 lines running to x = 0 */
    double best = INFINITY;
    for (int k = 0; k <= 300000; k++) {
        double t = k / 300000.0;
        double pts[3][2] = {{0 + t * (236 - 0), 63}, {236, 63 + t * (136 - 63)}, {0 + t * (236 - 0), 136}};
        for (int e = 0; e < 3; e++) {
            double f = hypot(pts[e][0] - 10, pts[e][1] - 90) + hypot(pts[e][0] - 180, pts[e][1] - 120);
            if (f < best) best = f;
        }
    }
    cr_expect_float_eq(sides, best - 1, 1e-3, "%f vs %f", sides, best - 1);
    cr_expect(sides > leg, "%f vs leg %f", sides, leg);
}

Test(tiers, give_up_bound_and_cost_check_agree)
{
    double limit2 = 1033.0, ds = 1.0, dg = 0.5; /* 6 cells of snap */
    cr_expect_float_eq(nm_route_give_up(limit2, ds, dg), 1028.0, 1e-12);
    cr_expect(nm_route_cost_escalates(1027.0, ds, dg, limit2));
    cr_expect_not(nm_route_cost_escalates(1026.9, ds, dg, limit2));
    /* a popped f at the give-up bound always ends above limit2 */
    cr_expect(nm_route_cost_escalates(nm_route_give_up(limit2, ds, dg), ds, dg, limit2));
    cr_expect(nm_route_snap_escalates(4.0, 16.0));
    cr_expect_not(nm_route_snap_escalates(3.99, 16.0));
    cr_expect(nm_route_access_escalates(1600, 16.0));
    cr_expect_not(nm_route_access_escalates(1599, 16.0));
}

Test(tiers, escalation_switches_per_window_kind)
{
    int bounded = 0, strict = 0, tentative = 0;
    for (int e = 0; e < NM_ESC_COUNT; e++) {
        nm_esc_switch sw = nm_escalation_switch((nm_escalation)e);
        bounded += sw == NM_SW_BOUNDED;
        strict += sw == NM_SW_STRICT;
        tentative += sw == NM_SW_TENTATIVE;
        cr_expect(nm_escalation_enabled((nm_escalation)e, NM_TIER_TENTATIVE));
        cr_expect_not(nm_escalation_enabled((nm_escalation)e, NM_TIER_FULL));
        cr_expect_eq(nm_escalation_enabled((nm_escalation)e, NM_TIER_CAPPED), sw == NM_SW_TENTATIVE);
    }
    cr_expect_eq(NM_ESC_COUNT, 12);
    cr_expect_eq(tentative, 1);
    cr_expect_eq(bounded, 4);
    cr_expect_eq(strict, 7);
    cr_expect_eq(nm_escalation_switch(NM_ESC_COST_BOUND), NM_SW_BOUNDED);
    cr_expect_eq(nm_escalation_switch(NM_ESC_WALK_NO_PATH), NM_SW_STRICT);
    cr_expect_eq(nm_escalation_from_search(6), NM_ESC_COST_BOUND);
    cr_expect_eq(nm_escalation_from_search(0), NM_ESC_COUNT);
}
