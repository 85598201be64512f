/* test_plan_movingai.c — the Moving AI benchmark legs (issue #5). A map is baked by scenegen
 * --movingai at its default 4 px per tile (a tile is 16 x 16 planner cells of kCS = 0.25 px; 4 px
 * so that a one-tile corridor holds the agent's kClrPref = 1.75 px on either side, as the
 * benchmark's one-tile agent fits it) and every scenario leg is planned. Each must succeed with
 * the route's self check clean, and:
 *  - the BASELINE's length (基线: unit price on the whole window, orthogonal step 1, diagonal
 *    sqrt 2, no corner cutting — the scenario's octile rules on a finer grid) is at most
 *        optimal_tiles * cells_per_tile * 1.02 + 4 cells;
 *    shorter is fine: a cell path passes a wall's corner closer than a tile centre. The snap
 *    anchors are the cells holding the tile centres, at the same offset in their tiles.
 *  - the final route is at most optimal * 1.02 + 1 tile: the octile path's tile centres keep
 *    2 px >= kClrPref from every wall, so at this scale the clearance the topology and geometry
 *    layers keep costs no length. (At 1 px per tile the agent is 3.5 tiles wide and the final
 *    route rightly detours round one-tile gaps: 22 of den312d's 320 legs went over this bound,
 *    while every baseline stayed within its own; see resources/scenes/README.md.)
 *
 * arena (resources/scenes/movingai) always runs. Further maps run when NM_MOVINGAI_DIR names a
 * folder laid out as the benchmark's (maps/<set>/<name>.map, scenarios/<set>/<name>.map.scen, e.g.
 * the shared data copy); a map that is absent skips cleanly. NM_MOVINGAI_TILE overrides the px per
 * tile (experiments), NM_MOVINGAI_DUMP prints one line per leg. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "planutil.h"

#define MAI_TILE_PX 4.0 /* scenegen's default (NM_SG_MOVINGAI_TILE_PX) */

typedef struct mai_stats {
    int n, ok, within, within_len;
    double worst;     /* largest baseline - optimal, cells */
    double worst_len; /* largest final length - optimal, px */
} mai_stats;

/* Plans every leg of the baked map. */
static mai_stats run_map(const char *map, const char *scen)
{
    pu_world W;
    const char *legs;
    const double tile = getenv("NM_MOVINGAI_TILE") ? atof(getenv("NM_MOVINGAI_TILE")) : MAI_TILE_PX;
    pu_bake_movingai(&W, map, scen, tile, &legs);
    cr_assert_float_eq(W.scale, tile, 1e-12, "a tile is one metre");
    FILE *f = fopen(legs, "r");
    cr_assert_not_null(f, "%s", legs);
    char line[256];
    mai_stats st = {0, 0, 0, 0, -INFINITY, -INFINITY};
    const bool dump = getenv("NM_MOVINGAI_DUMP") != NULL;
    while (fgets(line, sizeof line, f)) {
        double sx, sy, gx, gy, opt;
        if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf %lf", &sx, &sy, &gx, &gy, &opt) != 5) continue;
        st.n++;
        nm_route_request q = nm_route_request_defaults(W.zone, sx, sy, gx, gy);
        q.self_check = true;
        nm_route_result r;
        pu_plan_q(&W, &q, &r);
        char what[160];
        snprintf(what, sizeof what, "%s leg %d (%.1f, %.1f) -> (%.1f, %.1f)", W.zone, st.n, sx, sy, gx, gy);
        if (pu_check_route(&r, what)) {
            st.ok++;
            const double oc = opt / NM_kCS, bound = oc * 1.02 + 4.0;
            cr_expect_leq(r.base_cost, bound, "%s: baseline %.3f cells, optimal %.5f tiles = %.3f cells", what,
                          r.base_cost, opt / tile, oc);
            st.within += r.base_cost <= bound;
            st.worst = fmax(st.worst, r.base_cost - oc);
            st.worst_len = fmax(st.worst_len, r.length - opt);
            cr_expect_leq(r.length, opt * 1.02 + tile, "%s: route %.3f px, optimal %.3f px", what, r.length, opt);
            st.within_len += r.length <= opt * 1.02 + tile;
            if (dump)
                fprintf(stderr, "%s leg %d base %.3f opt %.3f len %.3f optpx %.3f tier %d\n", W.zone, st.n,
                        r.base_cost, oc, r.length, opt, r.tier);
        }
        nm_route_result_free(&r);
    }
    fclose(f);
    cr_expect_eq(st.ok, st.n, "%s: %d of %d legs planned", W.zone, st.ok, st.n);
    cr_expect_eq(st.within, st.ok, "%s: %d of %d baselines within the bound; worst excess %.3f cells", W.zone,
                 st.within, st.ok, st.worst);
    cr_log_info("%s: %d legs, %d planned, %d baselines and %d routes within; worst baseline excess %.3f cells, "
                "worst route excess %.3f px",
                W.zone, st.n, st.ok, st.within, st.within_len, st.worst, st.worst_len);
    pu_close(&W);
    return st;
}

/* A map of NM_MOVINGAI_DIR: skips when the variable or the files are absent. */
static void shared_map(const char *set, const char *name)
{
    if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built");
    const char *dir = getenv("NM_MOVINGAI_DIR");
    if (!dir || !*dir) cr_skip_test("NM_MOVINGAI_DIR not set");
    char map[700], scen[700];
    snprintf(map, sizeof map, "%s/maps/%s/%s.map", dir, set, name);
    snprintf(scen, sizeof scen, "%s/scenarios/%s/%s.map.scen", dir, set, name);
    if (access(map, R_OK) != 0 || access(scen, R_OK) != 0) cr_skip_test("%s not present", map);
    mai_stats st = run_map(map, scen);
    cr_expect_gt(st.n, 0, "%s: the scenario has legs", name);
}

Test(plan_movingai, every_arena_leg_is_near_optimal, .timeout = 600)
{
    if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built");
    const char *root = getenv("NM_SOURCE_ROOT") ? getenv("NM_SOURCE_ROOT") : ".";
    char map[600], scen[600];
    snprintf(map, sizeof map, "%s/resources/scenes/movingai/arena.map", root);
    snprintf(scen, sizeof scen, "%s/resources/scenes/movingai/arena.map.scen", root);
    if (access(map, R_OK) != 0 || access(scen, R_OK) != 0) cr_skip_test("arena map not present");
    mai_stats st = run_map(map, scen);
    cr_expect_gt(st.n, 100, "the scenario has its legs (%d)", st.n);
}

/* den312d (65 x 81 tiles, 320 legs): about 150 s of CPU. The 512 x 512 maps of the shared copy
 * (8room_000, maze512-1-0) are left out: at 4 px per tile their bake alone takes gigabytes and
 * many minutes. */
Test(plan_movingai, den312d, .timeout = 1800) { shared_map("dao", "den312d"); }
