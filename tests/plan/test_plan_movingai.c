/* test_plan_movingai.c — every scenario leg of resources/scenes/movingai (arena, DAO set) planned
 * on the map baked by scenegen --movingai (1 tile = 1 px): success, the route's self check
 * clean, and length <= optimal * 1.02 + 4 cells, a cell being a map tile (= 1 px; the planner's
 * own 0.25 px cells would leave no room for the clearance the price field keeps from walls: a
 * start beside a wall is joined to the channel's centre first). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "planutil.h"

Test(plan_movingai, every_arena_leg_is_near_optimal, .timeout = 600)
{
    if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built");
    const char *root = getenv("NM_SOURCE_ROOT") ? getenv("NM_SOURCE_ROOT") : ".";
    char map[600], scen[600];
    snprintf(map, sizeof map, "%s/resources/scenes/movingai/arena.map", root);
    snprintf(scen, sizeof scen, "%s/resources/scenes/movingai/arena.map.scen", root);
    pu_world W;
    const char *legs;
    pu_bake_movingai(&W, map, scen, &legs);
    cr_assert_float_eq(W.scale, 1.0, 1e-12, "one tile is one pixel");
    FILE *f = fopen(legs, "r");
    cr_assert_not_null(f, "%s", legs);
    char line[256];
    int n = 0, ok = 0, within = 0;
    double worst = 0;
    while (fgets(line, sizeof line, f)) {
        double sx, sy, gx, gy, opt;
        if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf %lf", &sx, &sy, &gx, &gy, &opt) != 5) continue;
        n++;
        nm_route_request q = nm_route_request_defaults(W.zone, sx, sy, gx, gy);
        q.self_check = true;
        nm_route_result r;
        pu_plan_q(&W, &q, &r);
        char what[96];
        snprintf(what, sizeof what, "leg %d (%.1f, %.1f) -> (%.1f, %.1f)", n, sx, sy, gx, gy);
        if (pu_check_route(&r, what)) {
            ok++;
            double bound = opt * 1.02 + 4.0; /* 4 map tiles */
            cr_expect_leq(r.length, bound, "%s: length %.3f px, optimal %.3f", what, r.length, opt);
            within += r.length <= bound;
            if (r.length - opt > worst) worst = r.length - opt;
        }
        nm_route_result_free(&r);
    }
    fclose(f);
    cr_expect_gt(n, 100, "the scenario has its legs (%d)", n);
    cr_expect_eq(ok, n, "%d of %d legs planned", ok, n);
    cr_expect_eq(within, ok, "%d of %d within the bound; worst excess %.3f px", within, ok, worst);
    pu_close(&W);
}
