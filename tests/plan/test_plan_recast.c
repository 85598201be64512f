/* test_plan_recast.c — scenes baked through navbake's DEFAULT path (Recast builds the walkable
 * mesh, no --walkable-as-is), the way a user's level is baked (issue 12). Each fact is the one
 * resources/scenes/README.md states for the scene; every route passes pu_check_route. The ledge
 * drops, the platform drop and the doorways failed on the bake that eroded the walkable area by
 * the agent radius (before it was opened); railing / slab, bridge and solids guard what must not
 * change (they pass on both). The deck over a river failed before a region's lower level ending
 * under its own deck stopped being a wall of that region (navmesh/bake FWAL). */
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

/* Open edge and lip: one drop straight down (Recast's erosion used to take the take-off row and
 * the landing row apart, so these walked down the stairs, ~39 px); the way back up is the stairs. */
Test(plan_recast, ledges_open_and_lip_drop_directly)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "ledges", 0);
    nm_route_result r;
    const double xs[2] = {10, 50}, y0s[2] = {20, 60};
    for (int row = 0; row < 2; row++)
        for (int k = 0; k < 2; k++) {
            double x = xs[k] + 5, y0 = y0s[row];
            char what[96];
            snprintf(what, sizeof what, "%s at x %.0f, y %.0f down", k ? "lip" : "open", xs[k], y0);
            expect_ok(&W, x, y0 + 5, x, y0 - 3, &r, what);
            double down = r.length;
            if (r.ok) {
                cr_expect_lt(r.length, 10 * W.scale, "%s: drops directly (%.2f px)", what, r.length);
                cr_expect_eq(r.ndrops, 1u, "%s: one drop", what);
            }
            nm_route_result_free(&r);
            snprintf(what, sizeof what, "%s at x %.0f, y %.0f up", k ? "lip" : "open", xs[k], y0);
            expect_ok(&W, x, y0 - 3, x, y0 + 5, &r, what);
            if (r.ok)
                cr_expect_gt(r.length, down + 10 * W.scale, "%s: one way, up by the stairs (%.2f vs %.2f px)", what,
                             r.length, down);
            nm_route_result_free(&r);
        }
    pu_close(&W);
}

/* Railing and slab: the fall gate (occluder) still blocks the front edge and the flush side
 * railings; a drop, if any, is off a stair's open side (landing south of the platform). */
Test(plan_recast, ledges_railing_and_slab_still_blocked)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "ledges", 0);
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

/* A 5 m platform with no stairs: left by a drop (a ledge hop between regions) over an open
 * edge, never over the railed north edge; no way up. */
Test(plan_recast, platform_without_stairs_is_left_by_a_drop)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "platform_drop", 0);
    nm_route_result r;
    expect_ok(&W, 20, 30, 20, 52, &r, "platform down to the south");
    if (r.ok) {
        cr_expect(r.ndrops > 0 || r.hop_index != UINT32_MAX, "the route drops off the platform");
        cr_expect_lt(r.length, 25 * W.scale, "straight off the south edge (%.2f px)", r.length);
    }
    nm_route_result_free(&r);
    expect_ok(&W, 20, 30, 20, 8, &r, "platform down to the north (railed)");
    if (r.ok) {
        cr_expect(r.ndrops > 0 || r.hop_index != UINT32_MAX, "the route drops off the platform");
        /* the landing of the hop (or of the first drop) lies beside the platform, not north of
         * the railed edge (y 25 m) */
        uint32_t land = r.hop_index != UINT32_MAX ? r.hop_index : r.ndrops ? r.drops[0].index : 0;
        cr_expect_gt(r.xy[2 * (size_t)land + 1] / W.scale, 25.0, "not over the railed north edge (landing y %.2f m)",
                     r.xy[2 * (size_t)land + 1] / W.scale);
    }
    nm_route_result_free(&r);
    nm_route_request q = pu_req(&W, 20, 52, 20, 30);
    q.goal_deck_y = 5.0f;
    pu_plan_q(&W, &q, &r);
    cr_expect(!r.ok, "no way up onto the platform: got %u points, %.2f px", r.npoints, r.length);
    nm_route_result_free(&r);
    pu_close(&W);
}

/* Doorways in 0.3 m walls, each lane with a long way round by the wall's east end: the 2 m and
 * 1.5 m doors are walked straight through (10 m); the 0.5 m slot, narrower than the agent
 * (2 x 0.41 m), is not: that route goes round. */
Test(plan_recast, doorways_open_slot_closed)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "doorways", 0);
    nm_route_result r;
    const double xs[2] = {10, 30};
    for (int k = 0; k < 2; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s door at x %.0f", k ? "1.5 m" : "2 m", xs[k]);
        expect_ok(&W, xs[k], 15, xs[k], 25, &r, what);
        if (r.ok) cr_expect_lt(r.length, 11 * W.scale, "%s: straight through (%.2f px)", what, r.length);
        nm_route_result_free(&r);
    }
    expect_ok(&W, 50, 15, 50, 25, &r, "0.5 m slot");
    if (r.ok) {
        cr_expect_gt(r.length, 15 * W.scale, "0.5 m slot: closed, the route goes round (%.2f px)", r.length);
        cr_expect_gt(pu_max_x(&W, &r), 55.5, "0.5 m slot: round by the wall's east end (max x %.2f m)",
                     pu_max_x(&W, &r));
    }
    nm_route_result_free(&r);
    pu_close(&W);
}

/* A 30 m deck 5 m up (railings, pillars) reached by a 15 m ramp at each end: walking along the
 * whole deck stays on it, and each ramp leads onto the deck without a drop or a detour. */
Test(plan_recast, bridge_deck_continuous_from_ramp_to_ramp)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "bridge_ramps", 0);
    nm_route_result r;
    nm_route_request q = pu_req(&W, 30, 21, 30, 49);
    q.start_deck_y = 5.0f;
    q.goal_deck_y = 5.0f;
    pu_plan_q(&W, &q, &r);
    pu_check_route(&r, "along the whole deck");
    if (r.ok) {
        cr_expect_gt(pu_min_h(&r), 4.5f, "along the deck: never off it (min %.2f m)", (double)pu_min_h(&r));
        cr_expect_lt(r.length, 30.8 * W.scale, "along the deck: straight (1.1 x 28 m) (%.2f px)", r.length);
    }
    nm_route_result_free(&r);
    const double from[2] = {10, 60}, to[2] = {30, 40};
    for (int k = 0; k < 2; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s ramp onto the deck", k ? "north" : "south");
        q = pu_req(&W, 30, from[k], 30, to[k]);
        q.start_deck_y = (float)(5.0 * 5.0 / 15.0); /* 5 m along the ramp */
        q.goal_deck_y = 5.0f;
        pu_plan_q(&W, &q, &r);
        pu_check_route(&r, what);
        if (r.ok) {
            cr_expect_eq(r.ndrops, 0u, "%s: no drop", what);
            cr_expect_lt(r.length, 21 * W.scale, "%s: straight up the ramp (%.2f px)", what, r.length);
            cr_expect_gt(r.heights[r.npoints - 1], 4.5f, "%s: ends on the deck", what);
        }
        nm_route_result_free(&r);
    }
    pu_close(&W);
}

/* A 20 m deck 5 m up over a river with a 15 m ramp at each end, a flush ford far south: ramp to
 * ramp along the deck is straight and stays on it. Failed before a region's lower level ending
 * under its own deck stopped being a wall of it (navmesh/bake FWAL, issue 12: the demo town's deck
 * cut): the ground's end where each ramp's solid body starts, and the river banks, sealed the
 * deck's planar clearance across its whole width, the topology layer's channel missed the deck
 * and the route went down a ramp and round by the ford (97.5 px for 19.5). */
Test(plan_recast, deck_over_a_river_continuous_from_ramp_to_ramp)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "deck_over_river", 0);
    nm_route_result r;
    const double from[2] = {27, 31}, to[2] = {53, 49}, deck[2] = {4, 5};
    for (int k = 0; k < 2; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s along the deck", k ? "deck to deck" : "ramp to ramp");
        nm_route_request q = pu_req(&W, from[k], 20, to[k], 20);
        q.start_deck_y = (float)deck[k];
        q.goal_deck_y = (float)deck[k];
        pu_plan_q(&W, &q, &r);
        pu_check_route(&r, what);
        if (r.ok) {
            double want = (to[k] - from[k]) * W.scale;
            cr_expect_lt(r.length, 1.1 * want, "%s: straight (%.2f px, %.2f px straight)", what, r.length, want);
            cr_expect_gt(pu_min_h(&r), (float)deck[k] - 0.5f, "%s: never off it (min %.2f m)", what,
                         (double)pu_min_h(&r));
        }
        nm_route_result_free(&r);
    }
    pu_close(&W);
}

/* Does the route pass within the rectangle [x0, x1] x [y0, y1] (m)? Sampled every 0.05 px. */
static bool route_enters(const pu_world *W, const nm_route_result *r, double x0, double y0, double x1, double y1)
{
    for (uint32_t k = 0; k + 1 < r->npoints; k++) {
        const double *a = &r->xy[2 * (size_t)k], *b = &r->xy[2 * (size_t)k + 2];
        int n = (int)(hypot(b[0] - a[0], b[1] - a[1]) / 0.05) + 1;
        for (int i = 0; i <= n; i++) {
            double x = (a[0] + (b[0] - a[0]) * i / n) / W->scale, y = (a[1] + (b[1] - a[1]) * i / n) / W->scale;
            if (x > x0 && x < x1 && y > y0 && y < y1) return true;
        }
    }
    return false;
}

/* A closed solid block and a platform (solid body, walkable top), both 4 m tall over ground that
 * runs on under them (the OBJ's terrain is not cut): Recast sees floor with 4 m of headroom
 * inside both. Walking past either on the ground goes round it, never through its inside. */
Test(plan_recast, no_route_through_solids)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "solids", 0);
    nm_route_result r;
    const double ys[2] = {15, 35};
    for (int k = 0; k < 2; k++) {
        char what[64];
        snprintf(what, sizeof what, "past the %s", k ? "platform" : "block");
        nm_route_request q = pu_req(&W, 15, ys[k], 35, ys[k]);
        q.start_deck_y = 0.0f;
        q.goal_deck_y = 0.0f;
        pu_plan_q(&W, &q, &r);
        pu_check_route(&r, what);
        if (r.ok) {
            cr_expect_gt(r.length, 21.5 * W.scale, "%s: round it (%.2f px)", what, r.length);
            cr_expect(!route_enters(&W, &r, 20.2, ys[k] - 4.8, 29.8, ys[k] + 4.8), "%s: not through its inside",
                      what);
            cr_expect_lt(pu_max_h(&r), 0.5f, "%s: on the ground (max %.2f m)", what, (double)pu_max_h(&r));
        }
        nm_route_result_free(&r);
    }
    pu_close(&W);
}

/* recast-navtest's hollow pillar (world x -3.13..1.93 m, z -2.06..2.28 m, from -2.8 m up to
 * 10.27 m; the bundled level): the ground floor (-2.37 m) runs on under it, so Recast keeps floor
 * inside with 12 m of headroom, walled all round by the pillar's faces (Detour: partial between
 * inside and out). Its west face is a single triangle, slanted across the lattice; Recast's eroded
 * strips on both sides of it left a rim cell, an empty cell and a rim cell, and the seam bridge
 * filled the empty one with the floor's height, which CloseCracks then joined to both floors:
 * routes walked out through the face (navaudit --random 100 --seed 25 leg 6, audit `solid`). With
 * both ends declared on that floor, no route leads out or in (px of the zone). */
Test(plan_recast, hollow_pillar_is_not_left_through_its_face)
{
    NEED_TOOLS();
    char path[1024];
    pu_world W;
    pu_bake_obj_recast(&W, pu_bundled_level("recast-navtest/nav_test.obj", path, sizeof path), "nav_test", 0, 0);
    const double in[2] = {-0.80, 0.18};
    const double out[5][2] = {{-3.75, -0.375}, {-3.75, 1.5}, {-1.0, 3.0}, {3.0, 0.0}, {18.41, -5.95}};
    nm_route_result r;
    for (int k = 0; k < 5; k++)
        for (int back = 0; back < 2; back++) {
            const double *a = back ? out[k] : in, *b = back ? in : out[k];
            nm_route_request q = nm_route_request_defaults("nav_test", a[0], a[1], b[0], b[1]);
            q.start_floor_y = q.goal_floor_y = -2.37f;
            q.start_deck_y = q.goal_deck_y = -2.37f;
            q.self_check = true;
            pu_plan_q(&W, &q, &r);
            cr_expect(!r.ok, "(%.2f, %.2f) -> (%.2f, %.2f) px: through the pillar's face (%.2f px, %u points)", a[0],
                      a[1], b[0], b[1], r.length, r.npoints);
            nm_route_result_free(&r);
        }
    pu_close(&W);
}

/* Four boxes 1.0-2.5 m over a floor (walkable tops), placed 0, 3/8, 4/8 and 5/8 of a cell off the
 * lattice: Recast refuses the 2.5 m rise both ways and it is within kClimb (no ledge drop), so no
 * route leads off a top or onto it. Before the seam bridge's riser gate, the boxes off the lattice
 * were walked off straight (6 px) over a one-cell seam bridge across Recast's eroded strip and
 * the Ghost cells round it (recast-navtest's audit failure, navmesh/bake/README.md "A low rise
 * joined by the seam bridge"). */
Test(plan_recast, low_platforms_are_not_walked_off)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "low_platforms", 0);
    nm_route_result r;
    const double x0[4] = {5, 20.125, 35.1667, 50.2083}, y0[4] = {10, 10.125, 10.1667, 10.2083};
    const double dx[4] = {0, 0, -8, 8}, dy[4] = {-8, 8, 0, 0};
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 4; d++) {
            double cx = x0[k] + 4, cy = y0[k] + 4;
            for (int up = 0; up < 2; up++) {
                char what[96];
                snprintf(what, sizeof what, "box %d %s the floor at (%+.0f, %+.0f) m", k, up ? "onto, from" : "off, to",
                         dx[d], dy[d]);
                nm_route_request q = up ? pu_req(&W, cx + dx[d], cy + dy[d], cx, cy) : pu_req(&W, cx, cy, cx + dx[d], cy + dy[d]);
                q.start_deck_y = up ? 0.0f : 2.5f;
                q.goal_deck_y = up ? 2.5f : 0.0f;
                pu_plan_q(&W, &q, &r);
                cr_expect(!r.ok, "%s: no route (got %.2f px, %u drops)", what, r.length, r.ndrops);
                nm_route_result_free(&r);
            }
        }
}

/* Under bridge_ramps' deck the ground runs on round three 1 m pillars (x 29.5..30.5, y 24.5..25.5,
 * 34.5..35.5, 44.5..45.5 m) that stand from the ground to the deck. Ground legs past them go round
 * them, never through a pillar's corner (navaudit legs 10 and 11 of --random 20 --seed 1 cut the
 * middle pillar's south-west corner: the hole's walls are no walls of the region, its deck being
 * over them, and the ground's rim spans at the pillar's faces carried the chord through). */
Test(plan_recast, ground_under_the_deck_goes_round_the_pillars)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "bridge_ramps", 0);
    nm_route_result r;
    const double legs[2][4] = {{6.96, 54.27, 37.88, 27.39}, {41.11, 44.52, 24.26, 30.11}};
    for (int k = 0; k < 2; k++) {
        char what[64];
        snprintf(what, sizeof what, "ground leg %d past the pillars", k);
        nm_route_request q = pu_req(&W, legs[k][0], legs[k][1], legs[k][2], legs[k][3]);
        q.start_deck_y = 0.0f;
        q.goal_deck_y = 0.0f;
        pu_plan_q(&W, &q, &r);
        pu_check_route(&r, what);
        cr_expect(r.ok, "%s: planned", what);
        if (r.ok) {
            cr_expect_lt(pu_max_h(&r), 0.5f, "%s: on the ground (max %.2f m)", what, (double)pu_max_h(&r));
            for (int p = 0; p < 3; p++)
                cr_expect(!route_enters(&W, &r, 29.5, 24.5 + 10 * p, 30.5, 25.5 + 10 * p),
                          "%s: through the pillar at y %d m", what, 25 + 10 * p);
        }
        nm_route_result_free(&r);
    }
    pu_close(&W);
}

/* bridge's south ramp (x 27.5..32.5 m, y 5..20 m, 0 -> 5 m) seen from the ground west of it: a
 * route onto the ramp goes up at its foot, never over its side where the side stands higher than
 * a step (0.5 m, y > 6.5 m). navaudit leg 3 of --random 20 --seed 1 climbed the side at y 7.83 m,
 * 0.94 m, by two half steps: Recast keeps the ground and the ramp one eroded strip apart there,
 * and the seam bridge filled the one empty cell between them with their mean height (audit
 * `solid`: the body crossed the ramp's side). */
Test(plan_recast, ramp_side_higher_than_a_step_is_no_stair)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "bridge", 0);
    nm_route_result r;
    nm_route_request q = pu_req(&W, 10.23, 34.88, 31.07, 8.84);
    q.start_deck_y = 0.0f;
    q.goal_deck_y = (float)(5.0 * (8.84 - 5.0) / 15.0);
    pu_plan_q(&W, &q, &r);
    pu_check_route(&r, "ground onto the ramp");
    cr_expect(r.ok, "ground onto the ramp: planned");
    if (r.ok) {
        double y = pu_y_at_x(&W, &r, 27.5);
        cr_expect(!(y > 6.5), "onto the ramp over its side at y %.2f m (%.2f m high)", y, 5.0 * (y - 5.0) / 15.0);
        cr_expect_eq(r.ndrops, 0u, "no drop");
    }
    nm_route_result_free(&r);
    pu_close(&W);
}

/* building: the 4 m floor's slab (3.7..4.0 m) over the ground floor, the stairwell opening at x 24..36,
 * y 24..28 m. navaudit leg 11 of --random 20 --seed 1 (4 m floor to the ground floor) walked down
 * the stair to 3.67 m at the opening's south edge, where the zone mesh blends the stair into the
 * slab, and dropped west to the ground under the slab at (33.5, 23.8) m: the fall gate took the
 * fall from 3.67 m, under the slab's underside, not from the slab's top the take-off stands on
 * (issue 12). No drop may land under the slab: inside the building, outside the opening. */
Test(plan_recast, building_no_drop_lands_under_the_slab)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene_default(&W, "building", 0);
    nm_route_result r;
    nm_route_request q = pu_req(&W, 27.57, 32.22, 16.31, 34.32);
    q.start_floor_y = 4.10f;
    q.goal_floor_y = 0.10f;
    pu_plan_q(&W, &q, &r);
    pu_check_route(&r, "4 m floor to the ground west of the house");
    cr_expect(r.ok, "4 m floor to the ground: planned");
    for (uint32_t i = 0; r.ok && i < r.ndrops; i++) {
        const double *at = &r.xy[2 * (size_t)r.drops[i].index];
        double x = at[0] / W.scale, y = at[1] / W.scale;
        bool under_slab = x > 20.4 && x < 43.6 && y > 20.4 && y < 39.6 && !(x > 24 && x < 36 && y > 24 && y < 28);
        cr_expect(!under_slab, "drop %u lands at (%.2f, %.2f) m, under the 4 m slab", i, x, y);
    }
    nm_route_result_free(&r);
    pu_close(&W);
}
