/* test_plan_decks.c — floors and declared decks over random legs (issue 13, design article 输入与输出,
 * 起点所在的面, 选类, 掩膜与吸附锚点, 失败的情形): on every shared level (baked the default way,
 * through Recast; skipped without NM_SHARED_DATA), the bundled levels and the scenes with stacked
 * surfaces, legs between points sampled on the zone's own walkable triangles (so the true height
 * under each end is known) are planned five ways: no hints, floors at the true heights, plus a
 * goal deck, plus a start deck, and floors with a start deck alone. Every result is either ok on the declared surfaces (every point has
 * a height; the first height within kDeckBand of a declared start deck, the last within kDeckBand of
 * a declared goal deck) or a documented failure code (nm_route_code_name); never an internal
 * error. Counts per level and variant are printed. Also the two house legs of the issue. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "planutil.h"
#include "zone/zone.h"

#define NEED_TOOLS()                                                         \
    do {                                                                     \
        if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built"); \
    } while (0)

static uint64_t rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static double unit(uint64_t *s) { return (double)(rng(s) >> 11) / 9007199254740992.0; }

/* A point on a random walkable triangle of the cleaned zone and its true height there. */
static void sample_point(const nm_zone_clean *zc, uint64_t *s, double *x, double *y, double *h)
{
    uint32_t t;
    do t = (uint32_t)(rng(s) % zc->tri_count);
    while (!nm_zone_walkable(zc, t));
    double a = unit(s), b = unit(s);
    if (a + b > 1) a = 1 - a, b = 1 - b;
    const nm_vertex *p0 = nm_zone_vertex(zc, t, 0), *p1 = nm_zone_vertex(zc, t, 1), *p2 = nm_zone_vertex(zc, t, 2);
    double c = 1 - a - b;
    *x = c * p0->u + a * p1->u + b * p2->u;
    *y = c * p0->v + a * p1->v + b * p2->v;
    *h = c * p0->h + a * p1->h + b * p2->h;
}

enum { V_NONE, V_FLOORS, V_GOAL_DECK, V_BOTH_DECKS, V_START_DECK, V_COUNT };
static const char *const vname[V_COUNT] = {"no hints", "floors", "floors+goal deck", "floors+both decks",
                                           "floors+start deck"};

typedef struct tally {
    int legs, ok, internal, bad_route, cell_level;
    int code[NM_ROUTE_CODE_COUNT];
} tally;

static bool has_height(float h) { return isfinite(h) && h > NM_kFloorYValidMin; }

/* One leg, one variant: the result must be ok on the declared surfaces or a documented failure. */
static void check_leg(pu_world *W, int v, double sx, double sy, double hs, double gx, double gy, double hg,
                      tally *t, const char *what)
{
    nm_route_request q = nm_route_request_defaults(W->zone, sx, sy, gx, gy);
    q.self_check = true;
    if (v >= V_FLOORS) {
        q.start_floor_y = (float)hs;
        q.goal_floor_y = (float)hg;
    }
    const bool goal_deck = v == V_GOAL_DECK || v == V_BOTH_DECKS, start_deck = v >= V_BOTH_DECKS;
    if (goal_deck) q.goal_deck_y = (float)hg;
    if (start_deck) q.start_deck_y = (float)hs;
    nm_route_result r;
    pu_plan_q(W, &q, &r);
    t->legs++;
    if (r.ok) {
        bool good = r.heights != NULL && r.npoints >= 2;
        for (uint32_t k = 0; good && k < r.npoints; k++) good = has_height(r.heights[k]);
        /* the baseline's cell-level fallback (article 求解器 5, only without a declared deck) plans
         * on cells, not levels: where the heights along its route break it has none (a warning
         * says so). Reached on pandora where the span levels are apart (Detour partial too). */
        const bool cell_level = strstr(r.warnings, "the route follows a cell-level path") != NULL;
        if (!good && cell_level && !goal_deck && !start_deck && r.npoints >= 2 &&
            strstr(r.warnings, "no waypoints (the heights along the route break)")) {
            t->cell_level++;
            nm_route_result_free(&r);
            return;
        }
        cr_expect(good, "%s (%s): an ok route without a height for every point", what, vname[v]);
        if (good && goal_deck) {
            good = fabs(r.heights[r.npoints - 1] - hg) <= NM_kDeckBand;
            cr_expect(good, "%s (%s): the route ends at %.2f m, the declared goal deck is %.2f m", what, vname[v],
                      r.heights[r.npoints - 1], hg);
        }
        if (good && start_deck) {
            good = fabs(r.heights[0] - hs) <= NM_kDeckBand;
            cr_expect(good, "%s (%s): the route starts at %.2f m, the declared start deck is %.2f m", what,
                      vname[v], r.heights[0], hs);
        }
        cr_expect(r.code == NM_ROUTE_OK, "%s (%s): ok with code %s", what, vname[v], nm_route_code_name(r.code));
        if (good) t->ok++;
        else t->bad_route++;
    } else {
        cr_expect(r.code != NM_ROUTE_OK && r.code != NM_ROUTE_INTERNAL && r.code < NM_ROUTE_CODE_COUNT,
                  "%s (%s): failure without a documented code (%s): %s", what, vname[v], nm_route_code_name(r.code),
                  r.error);
        if (getenv("NM_DECKS_VERBOSE")) /* every failure, to read them */
            fprintf(stderr, "  %s (%s): %s: %s\n", what, vname[v], nm_route_code_name(r.code), r.error);
        if (r.code == NM_ROUTE_INTERNAL || r.code == NM_ROUTE_OK || r.code >= NM_ROUTE_CODE_COUNT) t->internal++;
        else t->code[r.code]++;
        /* a declared-deck leg never reports the goal as plainly unreachable without saying which deck */
        if (goal_deck)
            cr_expect(r.code != NM_ROUTE_DISCONNECTED || r.has_gap, "%s (%s): route_disconnected without a gap",
                      what, vname[v]);
    }
    nm_route_result_free(&r);
}

static void run_legs(pu_world *W, const char *name, int nlegs, uint64_t seed)
{
    nm_zone_clean *zc = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_zone_clean_build(&W->pack, W->zone, 1, &zc, &err), NM_OK, "%s: %s", name, err.msg);
    cr_assert_gt(zc->walkable_count, 0u, "%s: no walkable triangle", name);
    tally t[V_COUNT];
    memset(t, 0, sizeof t);
    uint64_t s = seed;
    for (int k = 0; k < nlegs; k++) {
        double sx, sy, hs, gx, gy, hg;
        sample_point(zc, &s, &sx, &sy, &hs);
        sample_point(zc, &s, &gx, &gy, &hg);
        char what[200];
        snprintf(what, sizeof what, "%s leg %d (%.4f, %.4f @ %.3f m) -> (%.4f, %.4f @ %.3f m)", name, k, sx, sy, hs,
                 gx, gy, hg);
        for (int v = 0; v < V_COUNT; v++) check_leg(W, v, sx, sy, hs, gx, gy, hg, &t[v], what);
    }
    nm_zone_clean_free(zc);
    for (int v = 0; v < V_COUNT; v++) {
        char line[1024];
        int n = snprintf(line, sizeof line, "decks %-16s %-18s legs %3d ok %3d internal %d bad_route %d cell_level %d",
                         name, vname[v], t[v].legs, t[v].ok, t[v].internal, t[v].bad_route, t[v].cell_level);
        for (int c = 1; c < NM_ROUTE_CODE_COUNT && n > 0 && (size_t)n < sizeof line; c++)
            if (t[v].code[c]) n += snprintf(line + n, sizeof line - (size_t)n, " %s %d", nm_route_code_name(c), t[v].code[c]);
        fprintf(stderr, "%s\n", line);
        cr_expect_eq(t[v].internal, 0, "%s (%s): internal errors", name, vname[v]);
        cr_expect_eq(t[v].bad_route, 0, "%s (%s): routes off the declared surfaces", name, vname[v]);
    }
    cr_expect_gt(t[V_NONE].ok, 0, "%s: some legs succeed", name);
}

static const char *shared_level(const char *rel, char *buf, size_t n)
{
    const char *d = getenv("NM_SHARED_DATA");
    struct stat st;
    if (!d) return NULL;
    snprintf(buf, n, "%s/levels/%s", d, rel);
    return stat(buf, &st) == 0 ? buf : NULL;
}

static void shared(const char *rel, const char *zone, double scale, int nlegs, uint64_t seed)
{
    NEED_TOOLS();
    char path[1024];
    if (!shared_level(rel, path, sizeof path)) cr_skip_test("NM_SHARED_DATA is absent (or has no %s)", rel);
    pu_world W;
    pu_bake_obj_recast(&W, path, zone, scale, 0);
    run_legs(&W, zone, nlegs, seed);
    pu_close(&W);
}

static void bundled(const char *rel, const char *zone, int nlegs, uint64_t seed)
{
    NEED_TOOLS();
    char path[1024];
    pu_world W;
    pu_bake_obj_recast(&W, pu_bundled_level(rel, path, sizeof path), zone, 0, 0);
    run_legs(&W, zone, nlegs, seed);
    pu_close(&W);
}

static void scene(const char *name, int nlegs, uint64_t seed)
{
    NEED_TOOLS();
    pu_world W;
    pu_bake_scene(&W, name, NULL, 0);
    run_legs(&W, name, nlegs, seed);
    pu_close(&W);
}

TestSuite(plan_decks, .timeout = 600);

Test(plan_decks, shared_house) { shared("dotrecast-house/house.obj", "house", 0, 30, 0x13a5e1ULL); }
Test(plan_decks, shared_dungeon) { shared("recast-dungeon/dungeon.obj", "dungeon", 0, 30, 0x13d7a9ULL); }
Test(plan_decks, shared_pandora) { shared("sauer-pandora/pandora.obj", "pandora", 0.12, 30, 0x13fa31ULL); }
Test(plan_decks, shared_bridges) { shared("navcat-bridges/bridges.obj", "bridges", 0, 20, 0x13b1d9ULL); }
Test(plan_decks, shared_undulating) { shared("recast-undulating/undulating.obj", "undulating", 0, 20, 0x13c0ffULL); }
Test(plan_decks, bundled_navtest) { bundled("recast-navtest/nav_test.obj", "nav_test", 30, 0x13e1f7ULL); }
Test(plan_decks, bundled_godot) { bundled("godot-navlevel/level_mesh.obj", "level_mesh", 30, 0x13f00dULL); }
Test(plan_decks, scene_bridge) { scene("bridge", 20, 0x13b0ULL); }
Test(plan_decks, scene_building) { scene("building", 20, 0x13b1ULL); }
Test(plan_decks, scene_stairs) { scene("stairs", 20, 0x13b2ULL); }
Test(plan_decks, scene_water_bridge) { scene("water_bridge", 20, 0x13b3ULL); }
Test(plan_decks, scene_ledges) { scene("ledges", 20, 0x13b4ULL); }

/* The two house legs of issue 13 (the shared house baked by default, px of the zone): the start
 * stands on the upper floor (6.4 m), the goal over the ground floor (0.3 m). */
static bool plan_house_leg(pu_world *W, float start_floor, float goal_floor, float goal_deck, float start_deck,
                           nm_route_result *r)
{
    nm_route_request q = nm_route_request_defaults("house", -2.6043, 5.7735, 2.3157, 2.2372);
    q.start_floor_y = start_floor;
    q.goal_floor_y = goal_floor;
    q.goal_deck_y = goal_deck;
    q.start_deck_y = start_deck;
    q.self_check = true;
    pu_plan_q(W, &q, r);
    return r->ok;
}

Test(plan_decks, house_issue_legs)
{
    NEED_TOOLS();
    char path[1024];
    if (!shared_level("dotrecast-house/house.obj", path, sizeof path)) cr_skip_test("NM_SHARED_DATA is absent");
    pu_world W;
    pu_bake_obj_recast(&W, path, "house", 0, 0);
    const float none = NM_kFloorYNone;
    nm_route_result r;
    /* floors only rank triangles (吸附): the route starts on the upper floor and, the goal's cell
       being within 8 px of that floor's reach, ends there; heights for every point, and a warning
       that the goal's floor triangle is another surface (declare goal_deck_y for it) */
    cr_expect(plan_house_leg(&W, 6.417f, 0.3007f, none, none, &r), "%s", r.error);
    if (r.ok) {
        cr_expect_not_null(r.heights);
        cr_expect_leq(fabs(r.heights[0] - 6.417), NM_kDeckBand, "starts on the start floor: %.2f", r.heights[0]);
        cr_expect(strstr(r.warnings, "declare goal_deck_y") != NULL, "warnings: %s", r.warnings);
    }
    nm_route_result_free(&r);
    /* a goal deck on the ground floor: the route ends on it; the start, given only a floor, snaps
       onto a triangle of the deck's region (起点所在的面 step 2) and says so */
    cr_expect(plan_house_leg(&W, 6.417f, 0.3007f, 0.3007f, none, &r), "%s", r.error);
    if (r.ok) {
        cr_expect_not_null(r.heights);
        if (r.heights)
            cr_expect_leq(fabs(r.heights[r.npoints - 1] - 0.3007), NM_kDeckBand, "ends on the deck: %.2f",
                          r.heights[r.npoints - 1]);
        cr_expect(strstr(r.warnings, "declare start_deck_y") != NULL, "warnings: %s", r.warnings);
    }
    nm_route_result_free(&r);
    /* the upper floor declared as the start deck: the ground deck's region has no surface there,
       so the leg fails with target_deck_unreachable and the heights found at the goal */
    cr_expect_not(plan_house_leg(&W, 6.417f, 0.3007f, 0.3007f, 6.417f, &r));
    cr_expect_eq(r.code, NM_ROUTE_TARGET_DECK_UNREACHABLE, "%s: %s", nm_route_code_name(r.code), r.error);
    cr_expect(strstr(r.error, "0.30") != NULL, "lists the heights: %s", r.error);
    nm_route_result_free(&r);
    /* the start deck alone: the route starts on it */
    cr_expect(plan_house_leg(&W, 6.417f, 0.3007f, none, 6.417f, &r), "%s", r.error);
    if (r.ok && r.heights)
        cr_expect_leq(fabs(r.heights[0] - 6.417), NM_kDeckBand, "starts on the start deck: %.2f", r.heights[0]);
    nm_route_result_free(&r);
    pu_close(&W);
}
