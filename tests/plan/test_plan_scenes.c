/* test_plan_scenes.c — the planner end to end on the test scenes (resources/scenes/README.md):
 * each scene baked with scenegen + navbake --walkable-as-is and its facts checked by planning
 * with nm_route_plan; every route also passes the self check (vis_hard + LayerOracle on every
 * segment, lifting, StringPull idempotence, drop landings) and pu_check_route. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planutil.h"

#define NEED_TOOLS()                                                         \
    do {                                                                     \
        if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built"); \
    } while (0)

static void expect_ok(pu_world *W, double sx, double sy, double gx, double gy, nm_route_result *r,
                      const char *what)
{
    pu_plan(W, sx, sy, gx, gy, r);
    pu_check_route(r, what);
}

static void expect_fail(pu_world *W, double sx, double sy, double gx, double gy, const char *what)
{
    nm_route_result r;
    pu_plan(W, sx, sy, gx, gy, &r);
    cr_expect(!r.ok, "%s: expected no path, got %u points, length %.2f px", what, r.npoints, r.length);
    nm_route_result_free(&r);
}

Test(plan_scenes, stairs_half_metre_up_one_metre_only_down)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "stairs", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 5, 9, 23, 9, &r, "up the 0.5 m flight");
    cr_expect_gt(pu_max_h(&r), 2.5f, "the route climbs to the 3 m platform");
    nm_route_result_free(&r);
    expect_fail(&W, 5, 29, 23, 29, "up the 1 m flight");
    expect_ok(&W, 23, 29, 5, 29, &r, "down the 1 m flight");
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, bumps_and_dips_pass_the_step_only_down)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "bump_dip", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 3, 5, 37, 5, &r, "over the bump");
    cr_expect_lt(r.length, 1.2 * 34 * W.scale, "straight over the bump (%.2f px)", r.length);
    nm_route_result_free(&r);
    expect_fail(&W, 3, 25, 37, 25, "up the continuing 1 m step");
    expect_ok(&W, 37, 25, 3, 25, &r, "down the step");
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, bump_dip_passes_the_dip)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "bump_dip", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 3, 15, 37, 15, &r, "through the dip");
    cr_expect_lt(r.length, 1.2 * 34 * W.scale, "straight through the dip (%.2f px)", r.length);
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, bridge_deck_stays_on_deck_path_passes_under)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "bridge", NULL, 0);
    nm_route_result r;
    /* along the deck, both ends declared on it */
    nm_route_request q = pu_req(&W, 30, 22, 30, 38);
    q.start_deck_y = 5.0f;
    q.goal_deck_y = 5.0f;
    pu_plan_q(&W, &q, &r);
    pu_check_route(&r, "along the deck");
    cr_expect_gt(pu_min_h(&r), 4.0f, "the deck route never drops to the path (min %.2f m)", (double)pu_min_h(&r));
    nm_route_result_free(&r);
    /* across, under the deck: at 0 m all the way (the straightness is a known gap below) */
    expect_ok(&W, 20, 30, 40, 30, &r, "under the deck");
    cr_expect_lt(pu_max_h(&r), 1.0f, "the path route stays on the ground (max %.2f m)", (double)pu_max_h(&r));
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, a_declared_deck_with_no_surface_names_its_end)
{
    /* 失败的情形: a declared deck with no surface within kDeckBand near its end fails with that
     * end's code, never route_unreachable or internal: 12 m over the bridge scene, whose surfaces
     * there are the path (0 m) and the deck (5 m). It fails when the start deck's failure is
     * reported as the goal's or as a plain unreachable route. */
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "bridge", NULL, 0);
    nm_route_result r;
    nm_route_request q = pu_req(&W, 30, 22, 30, 38);
    q.start_deck_y = 12.0f;
    pu_plan_q(&W, &q, &r);
    cr_expect_not(r.ok, "no surface at 12 m, yet a route");
    cr_expect_eq(r.code, NM_ROUTE_START_DECK_UNREACHABLE, "%s: %s", nm_route_code_name(r.code), r.error);
    cr_expect(strstr(r.error, "start deck") != NULL, "the error names the start deck: %s", r.error);
    nm_route_result_free(&r);
    q.start_deck_y = 5.0f; /* the deck itself: planned */
    q.goal_deck_y = 12.0f;
    pu_plan_q(&W, &q, &r);
    cr_expect_not(r.ok, "no surface at 12 m, yet a route");
    cr_expect_eq(r.code, NM_ROUTE_TARGET_DECK_UNREACHABLE, "%s: %s", nm_route_code_name(r.code), r.error);
    nm_route_result_free(&r);
    q.goal_deck_y = 5.0f;
    pu_plan_q(&W, &q, &r);
    cr_expect(r.ok, "both decks on the deck: %s", r.error);
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, facade_is_not_climbed)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "facade", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 10, 20, 27, 20, &r, "ground to plateau");
    cr_expect_gt(pu_max_x(&W, &r), 35.0, "the route goes round by the east ramp (max x %.2f m)", pu_max_x(&W, &r));
    cr_expect_gt(r.length, 2.0 * 17 * W.scale, "not up the facade (%.2f px)", r.length);
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, ledges_are_one_way)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "ledges", NULL, 0);
    nm_route_result r;
    /* open edge and lip: short, one way down; railing and slab: down the stairs (long) */
    const double xs[4] = {10, 30, 50, 70};
    const bool direct[4] = {true, false, true, false};
    for (int k = 0; k < 4; k += 2) { /* open and lip; railing and slab: the next test */
        double x = xs[k] + 5;
        char what[96];
        snprintf(what, sizeof what, "4 m platform at x %.0f down", xs[k]);
        expect_ok(&W, x, 25, x, 17, &r, what);
        if (r.ok) {
            if (direct[k])
                cr_expect_lt(r.length, 20 * W.scale, "%s: drops directly (%.2f px)", what, r.length);
            else
                cr_expect_gt(r.length, 20 * W.scale, "%s: goes down the stairs (%.2f px)", what, r.length);
        }
        double down = r.length;
        nm_route_result_free(&r);
        snprintf(what, sizeof what, "4 m platform at x %.0f up", xs[k]);
        expect_ok(&W, x, 17, x, 25, &r, what);
        if (r.ok && direct[k])
            cr_expect_gt(r.length, down + 10 * W.scale, "%s: one way, up by the stairs (%.2f vs %.2f px)", what,
                         r.length, down);
        nm_route_result_free(&r);
    }
    pu_close(&W);
}

/* Railing and slab: the fall gate blocks the front edge, and the side railings (their outer face
 * flush with the platform's edge) block the sides, so the route goes down the stairs; a drop, if
 * any, is off a stair's open side (landing south of the platform), never off the platform. */
Test(plan_scenes, ledges_railing_and_slab_block_the_drop)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "ledges", NULL, 0);
    nm_route_result r;
    const double xs[2] = {30, 70}, y0s[2] = {20, 60};
    for (int row = 0; row < 2; row++)
        for (int k = 0; k < 2; k++) {
            double x = xs[k] + 5, y0 = y0s[row];
            char what[96];
            snprintf(what, sizeof what, "%s at x %.0f, y %.0f down", k ? "slab" : "railing", xs[k], y0);
            expect_ok(&W, x, y0 + 5, x, y0 - 3, &r, what);
            if (r.ok) {
                cr_expect_gt(r.length, 20 * W.scale, "%s: goes down the stairs (%.2f px)", what, r.length);
                for (uint32_t i = 0; i < r.ndrops; i++) {
                    const double *at = &r.xy[2 * (size_t)r.drops[i].index];
                    cr_expect_gt(at[1], (y0 + 10) * W.scale, "%s: drop %u lands at (%.3f, %.3f) px, beside the "
                                 "platform, not south of it off a stair", what, i, at[0], at[1]);
                }
            }
            nm_route_result_free(&r);
        }
    pu_close(&W);
}

Test(plan_scenes, water_is_crossed_only_by_the_bridge)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "water_bridge", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 10, 10, 55, 10, &r, "bank to bank");
    double y = pu_y_at_x(&W, &r, 32.5);
    cr_expect(y >= 18 && y <= 22, "crosses mid-river on the bridge (y %.2f m)", y);
    cr_expect_gt(pu_min_h(&r), -0.5f, "never in the water (min %.2f m)", (double)pu_min_h(&r));
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, island_only_by_the_links)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "island", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 10, 20, 50, 20, &r, "bank to A");
    nm_route_result_free(&r);
    expect_ok(&W, 50, 20, 10, 20, &r, "A to bank");
    nm_route_result_free(&r);
    expect_ok(&W, 50, 20, 68, 20, &r, "A to B");
    nm_route_result_free(&r);
    expect_ok(&W, 10, 20, 68, 20, &r, "bank to B");
    nm_route_result_free(&r);
    expect_fail(&W, 68, 20, 50, 20, "B to A");
    expect_fail(&W, 68, 20, 10, 20, "B to bank");
    pu_close(&W);
}

static void building_leg(bool strict)
{
    pu_world W;
    pu_bake_scene(&W, "building", NULL, 0);
    nm_route_result r;
    nm_route_request q = pu_req(&W, 10, 10, 40, 36);
    q.goal_deck_y = 8.0f; /* the top floor, declared */
    pu_plan_q(&W, &q, &r);
    if (strict) pu_check_route(&r, "ground to the top floor");
    cr_expect(r.ok, "ground to the top floor: %s", r.error);
    if (r.ok) {
        cr_expect(r.heights && fabsf(r.heights[r.npoints - 1] - 8.0f) < 0.6f, "ends on the top floor (%.2f m)",
                  r.heights ? (double)r.heights[r.npoints - 1] : -1.0);
        /* through the door (x 30..33 m on the south wall, y 20 m) */
        double x = NAN;
        for (uint32_t k = 0; k + 1 < r.npoints; k++) {
            double ay = r.xy[2 * k + 1] / W.scale, by = r.xy[2 * k + 3] / W.scale;
            if (ay < 20 && by >= 20) {
                double t = (20 - ay) / (by - ay);
                x = (r.xy[2 * k] + t * (r.xy[2 * k + 2] - r.xy[2 * k])) / W.scale;
                break;
            }
        }
        cr_expect(x >= 29.5 && x <= 33.5, "enters by the door (x %.2f m)", x);
        /* both flights: the heights rise through 4 m to 8 m without a jump over kClimb */
        for (uint32_t k = 0; r.heights && k + 1 < r.npoints; k++)
            cr_expect_leq(r.heights[k] - r.heights[k + 1], 0.5f + 1e-3f, "no drop on the way up (point %u)", k);
        cr_expect_eq(r.ndrops, 0u, "no drop on the way up");
    }
    nm_route_result_free(&r);
    pu_close(&W);
}

Test(plan_scenes, building_floors_by_the_stairs)
{
    NEED_TOOLS();
    building_leg(false);
}

/* The risers join the treads (vertical walkable faces kept by the bake): no wall at each stair
 * foot, so the route climbs the flights' middle, clear of the facade columns' segments. */
Test(plan_scenes, building_route_keeps_off_the_facades)
{
    NEED_TOOLS();
    building_leg(true);
}

Test(plan_scenes, regions_not_joined_fail_with_a_gap)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "regions", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 47, 15, 10, 15, &r, "plateau down its ledge");
    if (r.ok) cr_expect(r.ndrops > 0 || r.hop_index != UINT32_MAX, "the route drops off the ledge");
    if (r.hop_index != UINT32_MAX)
        cr_expect(strstr(r.warnings, "ledge drop") != NULL, "the hop is announced: '%s'", r.warnings);
    nm_route_result_free(&r);
    expect_fail(&W, 10, 15, 47, 15, "ground up to the plateau");
    pu_plan(&W, 67, 15, 87, 15, &r);
    cr_expect(!r.ok, "the two grounds are not joined");
    cr_expect(strstr(r.error, "cannot reach the goal") != NULL, "error: %s", r.error);
    cr_expect(r.has_gap, "a gap is located");
    if (r.has_gap) {
        cr_expect(r.gap_sx / W.scale <= 75.5 && r.gap_gx / W.scale >= 79.5, "gap (%.2f, %.2f) -> (%.2f, %.2f) px",
                  r.gap_sx, r.gap_sy, r.gap_gx, r.gap_gy);
        cr_expect_gt(r.gap_dist, 0.0);
    }
    nm_route_result_free(&r);
    pu_close(&W);
}

/* the distance from (px, py) to the segment a-b */
static double seg_dist(double px, double py, const double *a, const double *b)
{
    double dx = b[0] - a[0], dy = b[1] - a[1], l2 = dx * dx + dy * dy;
    double t = l2 > 0 ? ((px - a[0]) * dx + (py - a[1]) * dy) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypot(px - (a[0] + t * dx), py - (a[1] + t * dy));
}

static bool inside_square(const nm_route_result *r, double cx, double cy, double h)
{
    /* sample the route every 0.05 px */
    for (uint32_t k = 0; k + 1 < r->npoints; k++) {
        double L = hypot(r->xy[2 * k + 2] - r->xy[2 * k], r->xy[2 * k + 3] - r->xy[2 * k + 1]);
        int n = (int)(L / 0.05) + 1;
        for (int i = 0; i <= n; i++) {
            double x = r->xy[2 * k] + (r->xy[2 * k + 2] - r->xy[2 * k]) * i / n;
            double y = r->xy[2 * k + 1] + (r->xy[2 * k + 3] - r->xy[2 * k + 1]) * i / n;
            if (fabs(x - cx) < h && fabs(y - cy) < h) return true;
        }
    }
    return false;
}

Test(plan_scenes, no_go_polygons_and_discs_are_respected)
{
    NEED_TOOLS();
    /* the bridge scene's open ground; a square no-go of 10 m at (30, 50) m = (22.5, 37.5) px */
    const char *nogo = "{\"version\": 1, \"zones\": {\"bridge\": [{\"poly\": [[18.75, 33.75], [26.25, 33.75],"
                       " [26.25, 41.25], [18.75, 41.25]], \"id\": \"square\"}]}}";
    pu_world W;
    pu_bake_scene(&W, "bridge", nogo, 0);
    nm_route_result r;
    expect_ok(&W, 10, 50, 50, 50, &r, "round the polygon");
    cr_expect(!inside_square(&r, 22.5, 37.5, 3.75 - 0.01), "the route stays out of the polygon");
    nm_route_result_free(&r);
    pu_plan(&W, 30, 50, 50, 50, &r);
    cr_expect(!r.ok && r.no_go, "a start in the polygon is refused as no-go: %s", r.error);
    nm_route_result_free(&r);
    /* a disc of 4 m at (30, 10) m */
    nm_nogo_disc d = {30 * W.scale, 10 * W.scale, 4 * W.scale};
    nm_route_request q = pu_req(&W, 10, 10, 50, 10);
    q.discs = &d;
    q.ndiscs = 1;
    pu_plan_q(&W, &q, &r);
    pu_check_route(&r, "round the disc");
    for (uint32_t k = 0; r.ok && k + 1 < r.npoints; k++)
        cr_expect_geq(seg_dist(d.x, d.y, r.xy + 2 * k, r.xy + 2 * k + 2), d.r - 0.2, "segment %u enters the disc", k);
    cr_expect_gt(r.length, 40 * W.scale, "the disc forces a detour (%.2f px)", r.length);
    nm_route_result_free(&r);
    pu_close(&W);
}

/* The deck's side edges are ledges over the region's own path (FWAL keeps them off it): the
 * path crosses under the deck straight. */
Test(plan_scenes, bridge_path_passes_straight_under_the_deck)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "bridge", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 20, 30, 40, 30, &r, "under the deck");
    double y = pu_y_at_x(&W, &r, 30);
    cr_expect(y > 20 && y < 40, "crosses x = 30 m under the deck (y %.2f m)", y);
    cr_expect_lt(r.length, 1.2 * 20 * W.scale, "straight under the deck (%.2f px)", r.length);
    nm_route_result_free(&r);
    pu_close(&W);
}

/* The 5 m alley (3.75 px, centre clearance 1.875 >= kClrPref: inside the open channel) and the
 * 20 m roads round the blocks both connect the two sides; the alley is taken (30 px against
 * 60.8 px round), and with it closed by a runtime disc the route goes round by a road. The
 * alley was 1.5 m: it connected (the baseline and a plan with the roads closed pass it) but the
 * topology price kClrWide / clamp(d, kClrNarrow, kClrWide) charges its cells x4, about 430 cells
 * against the road's 264, so per the article the road won. Measured: 4.6 m still goes round,
 * 4.7 m takes the alley (the turn is near 2 kClrPref = 3.5 px = 4.67 m). */
Test(plan_scenes, corridor_alley_and_roads_both_connect)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "corridor", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 40, 25, 40, 65, &r, "through the alley");
    double alley = r.length;
    cr_expect_lt(alley, 1.2 * 40 * W.scale, "the alley is taken (%.2f px)", alley);
    nm_route_result_free(&r);
    nm_nogo_disc d = {40 * W.scale, 45 * W.scale, 3 * W.scale};
    nm_route_request q = pu_req(&W, 40, 25, 40, 65);
    q.discs = &d;
    q.ndiscs = 1;
    pu_plan_q(&W, &q, &r);
    pu_check_route(&r, "round the blocks");
    cr_expect_gt(r.length, 1.5 * alley, "the road round is much longer (%.2f vs %.2f px)", r.length, alley);
    nm_route_result_free(&r);
    pu_close(&W);
}

/* Cracks of 1-3 cell centres are closed, the lane is crossed straight; 4 cells cut the lane (no
 * other way round: the lanes are walled on both sides and end at the ground's edge). The crack's
 * edges stamp Dead on its single-span cells; those seam cells are not protected from CloseCracks. */
Test(plan_scenes, cracks_close_up_to_three_cells_the_fourth_cuts)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "cracks_holes", NULL, 0);
    for (int k = 0; k < 3; k++) {
        double y = 3 + 5 * k;
        char what[64];
        snprintf(what, sizeof what, "lane with a %d-cell crack", k + 1);
        nm_route_result r;
        expect_ok(&W, 10, y, 38, y, &r, what);
        cr_expect_lt(r.length, 1.05 * 28 * W.scale, "%s: crossed straight (%.2f px)", what, r.length);
        nm_route_result_free(&r);
    }
    expect_fail(&W, 10, 18, 38, 18, "lane with a 4-cell crack");
    pu_close(&W);
}

/* Issue 12: on the large world, routes walked through the 0.4 m walls of its buildings: a wall's
 * footprint is a crack of one or two cells in the walkable mesh, which CloseCracks (合缝) joined as
 * if it were a seam. A lone Dead span with a solid standing across it is now protected. */
Test(plan_scenes, thin_walls_are_not_bridged_as_seams)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, "thin_walls", NULL, 0);
    nm_route_result r;
    expect_ok(&W, 10, 5, 30, 5, &r, "round wall A by its door");
    double y = pu_y_at_x(&W, &r, 20.2);
    cr_expect(y > 24.0 && y < 27.0, "crosses wall A in its door (y 24..27), not at y %.2f m", y);
    nm_route_result_free(&r);
    expect_fail(&W, 30, 5, 37.5, 5, "through wall B (0.4 m, a cell partly covered), no door");
    expect_fail(&W, 37.5, 5, 45, 5, "through wall C (0.6 m, an empty cell), no door");
    /* under the deck the wall's footprint is Core (the deck is Walk there, one planar mask for the
     * region): its ground span is sealed out of the span graph, so the way is over the deck */
    nm_route_request q = pu_req(&W, 57, 15, 63, 15);
    q.start_floor_y = 0.0f;
    q.goal_floor_y = 0.0f;
    pu_plan_q(&W, &q, &r);
    cr_expect(!r.ok || pu_max_h(&r) > 4.0f, "wall D under the deck: walked through at %.2f m (%.2f px)",
              pu_max_h(&r), r.length);
    nm_route_result_free(&r);
    pu_close(&W);
}
