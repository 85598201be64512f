/* test_plan_digest.c — pins the plans of a fixed leg set (issue 14: a speed change never changes a
 * plan). Each leg is planned through the plugin like a host and every field a host reads is
 * hashed (FNV-1a 64 over the exact bits): ok / no_go / cancelled, the error, the points, their
 * heights and clearance, the waypoints, the drops, length and snap distances, the warnings and the
 * RUN waypoints. Two worlds: the demo town (resources/demo baked as tools/demo.sh does, with
 * --walkable-as-is: $NM_DEMO_PACK) and the bundled real level resources/levels/recast-navtest baked
 * by default (Recast) at test time.
 *
 * Renewed (issue 14): demo legs 6 and 11 and real legs 10 and 11, whose geometry layer now solves
 * in the corridor (the band holds the side cells of the seed path's diagonal steps) instead of
 * being re-solved without it. Renewed (issues 12, 13, 15): every real leg, for the default bake now
 * builds its walkable mesh at a finer Recast cell with the eroded strip given back and the detail
 * mesh's heights (tools/navbake/recast_shim.cpp); demo legs 3-7 and 11, for heights within 1e-9
 * of a whole number now come out as that number (checked: with the rounding off they match the
 * old digests). Renewed (issue 12, the deck cut): a region's lower level ending under its own
 * deck (ground where a ramp's body starts, river banks, pillars) and the lower level's edges
 * under its upper one are no walls of the region any more (navmesh/bake FWAL), so decks keep
 * their clearance: demo legs 5-9 onto, along and off the high bridge now plan in a tentative
 * window (5 and 6 took the Full window), lengths within 1.2 px, the smallest clearance higher
 * (0.25 -> 1.75 px, 0 -> 1.75 px, 0 -> 5.7 px); real legs 1, 5-7, 10, 12-15 (nav_test's stacked
 * floors and boxes). Renewed (issue 12, thin walls): real leg 6, for a lone Dead span off the walkable
 * surface with a solid across it is now protected from CloseCracks (navmesh/bake/bake_zone.c): the
 * part after its drop runs 48.838 -> 48.136 px through changed clearance (the route audit failed
 * on this leg before and after: `solid`, then `wrong_height`, near (-10.1, 3.6) px); real leg 5,
 * for such a span is also sealed out of the span graph (no step to or from it): its old route
 * walked through a solid (audit `solid` at (4.45, 10.63) px), the span levels now find no path and
 * the cell-level fallback's route has no waypoints (heights break), as that fallback does.
 * Renewed (merge of both bake changes, deck cut + thin walls): real leg 5 (the two changes meet
 * there), real leg 6 takes the thin-wall digest, demo leg 9 (22, 98) -> (8.375, 190): both changes
 * touch the demo pack; the route stays on the ground, 93.84 px (deck cut alone) -> 93.87 px, the
 * first corner 0.5 px further south. Renewed (issue 12, edges with a solid across them stay walls
 * under a deck: navmesh/bake edge_solid; the large world's routes walked through the solid under
 * its 5 m decks): demo legs 7-9 plan as before the deck-cut fix again (leg 7: 193.85 px, 13
 * points; leg 8 off the 4 m ledge: RUN clearances 0 / 1.5 / 6.5 px; leg 9: 94.99 px, 5 points).
 * Renewed (issue 12, the seam bridge's riser gate: a one-cell gap between two surfaces more than a
 * step apart with a solid standing between them is not bridged; navmesh/bake/README.md "A low rise
 * joined by the seam bridge"): real legs 1, 4-8, 11-15, for nav_test's floating boxes and upper
 * floors no longer share a region with the ground through seam-bridge and Ghost cells. Leg 6 no
 * longer walks off the box at (-10.1, 3.6) px (its audit `wrong_height` there passes now, 48.14 ->
 * 46.61 px); legs 1, 13, 15 on the ground are shorter (48.0 -> 43.9, 40.5 -> 34.6, 33.1 -> 29.8 px),
 * 7, 8, 12, 14 within 0.5 px; leg 11 (no deck declared) stays on the 8.23 m floor (7.5 px) instead
 * of dropping to the ground (10.1 px); leg 4's error puts the goal 23.6 px from the reach set (was
 * 16.2); leg 5's goal lies inside a pillar whose hollow inside Recast keeps as floor: it now plans
 * at span level (heights; was the cell-level fallback) and walks into the pillar (audit `solid`,
 * as its route before the thin-wall seal did: Ghost cells cross the pillar's wall ring).
 * Renewed (issue 12, a seam-bridged span made only by pairs more than kStepUp apart is sealed out
 * of the span graph, navmesh/bake mark_steep_bridges: bridge's route climbed its ramp's 0.94 m side
 * in two half steps, a ramp without side faces that the riser gate cannot see): real leg 6. With
 * the riser gate alone it walked 46.61 px; with the sealed steep bridge alone it stepped 2.84 m down
 * off the box in one (48.84 px); with both, the box top it starts on keeps no step to the ground
 * and the leg is refused as disconnected (as Detour, whose 0.5 m climb refuses the box too).
 * Renewed (issue 12, the seam bridge's gate for pairs within a step: a one-cell gap with a solid
 * standing across it at a body's height is not bridged, navmesh/bake solid_in_seam): real leg 5,
 * whose goal lies inside the hollow pillar. The pillar's inside is now a region of its own (no
 * bridged cell joins it to the ground through the pillar's face), so the goal, off the start's
 * region, snaps 1.25 px to that region's edge outside the face: the leg plans 10.06 px round the
 * pillar and ends with the strict RUN to the raw goal, as a snapped goal does (was: disconnected,
 * gap located). The other 15 real legs and the 13 demo legs are unchanged.
 *
 * When a change is meant to change plans, renew the tables with the reason in that change:
 *   NM_PLAN_DIGEST_PRINT=1 build/tests/plugin/test_plan_digest
 * prints the fresh tables (C source) to stderr; the tests still compare. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugin_testlib.h"

typedef struct dleg {
    double sx, sy, gx, gy;
    double deck;      /* goal_deck_y, NM_PLUGIN_NONE = absent */
    uint64_t digest;
} dleg;

#define NONE NM_PLUGIN_NONE

/* The demo town: the demo route's legs (resources/routes/demo.json, targets chained, decks as
 * declared), the two legs of issue 14 whose small window is refused today, a whole-window
 * topology fallback leg of issue 14, and a start off the mesh (an error). */
static dleg k_demo[] = {
    {60, 90, 97, 37, NONE, 0xB63E9948FCDD8F71ULL},
    {97, 37, 130, 90, NONE, 0xAE183F5F59EC42D1ULL},
    {130, 90, 190, 75, NONE, 0x00ECBD6D0D000CCAULL},
    {190, 75, 250, 290, NONE, 0x0F58941BEE933F3CULL},
    {250, 290, 250, 325, NONE, 0x090AE4E1F1629E03ULL},
    {250, 325, 159, 225, 5, 0xE6E89C133FEB5664ULL},
    {159, 225, 130, 225, NONE, 0x97B04C50B8F54AA6ULL},
    {130, 225, 19.5, 116, 4, 0xC89784E043689D1BULL},
    {19.5, 116, 19.5, 106, NONE, 0x167E0BE49B9AC546ULL},
    {22, 98, 8.375, 190, NONE, 0xB959CC2C7C371ED8ULL},
    {106, 86, 23.001, 169.999, NONE, 0x5EDF9713B9562D4DULL},
    {225.562, 266.5, 277.5, 202, NONE, 0x099C1B8F98165037ULL},
    {-500, -500, 60, 90, NONE, 0xFB3B7D6B076C8B6EULL},
};

/* recast-navtest (zone nav_test, 0.75 px a metre): navbench --random 10 --seed 7 on it (triangle
 * centres; most pairs lie in different components of its 52, so most legs end in errors). */
static dleg k_real[] = {
    {-16.439, 10.535, -6.036, -8.632, NONE, 0x06E13FC0D4D1AEA8ULL},
    {9.288, 12.175, -15.158, -11.195, NONE, 0x6DF5753C6D593903ULL},
    {31.684, -13.245, -9.367, 2.028, NONE, 0xAE29A8781E9471BBULL},
    {-1.577, -0.586, 33.529, 22.169, NONE, 0xB5AA72C7EEF54E18ULL},
    {6.213, 5.974, 33.837, 4.436, NONE, 0xE73196B98BD5523AULL},
    {0.524, 10.535, 5.291, 10.381, NONE, 0x6DF6067EF0DDC55CULL},
    {-14.697, -3.917, 15.541, 13.251, NONE, 0x19EA87F42F9560BAULL},
    {0.576, 8.588, 8.673, 7.101, NONE, 0x525833F784A4D6F9ULL},
    {0.524, 10.535, 8.827, 6.486, NONE, 0x0C24332F97803518ULL},
    {25.637, 27.396, -2.602, 5.666, NONE, 0xD6C8EB61FB24F956ULL},
    /* navbench --random 60 --seed 11: legs that route, two of them re-solving the geometry layer
     * without the corridor (issue 14) */
    {11.799, 11.355, 13.542, 7.05, NONE, 0x7E45F14AA6AEEDF7ULL},
    {8.981, 6.691, 15.028, 2.284, NONE, 0x98E587F7892CDD69ULL},
    {-17.311, 7.665, 7.956, 10.125, NONE, 0xAEAF5D7CDFD8554CULL},
    {15.079, 1.515, -11.417, -4.481, NONE, 0xE09067AFF50299B2ULL},
    {2.523, -18.267, 6.367, 8.126, NONE, 0xEF383F1A7BFA4890ULL},
    {-9.777, 7.921, 0.473, -6.275, NONE, 0xA9D50CFB091F2544ULL},
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001B3ULL;
    }
    return h;
}
static uint64_t fnv_d(uint64_t h, double v) { return fnv(h, &v, sizeof v); }
static uint64_t fnv_u(uint64_t h, uint64_t v) { return fnv(h, &v, sizeof v); }
static uint64_t fnv_s(uint64_t h, const char *s)
{
    s = s ? s : "";
    return fnv(h, s, strlen(s) + 1);
}

/* Every field a host reads, in a fixed order (not the debug lists, timings or tiers: a speed
 * change may take another window tier for the same route). */
static uint64_t digest(const nm_plugin_result *r)
{
    uint64_t h = 0xCBF29CE484222325ULL;
    h = fnv_u(h, (uint64_t)r->ok);
    h = fnv_u(h, (uint64_t)r->no_go);
    h = fnv_u(h, (uint64_t)r->cancelled);
    h = fnv_s(h, r->error);
    h = fnv_u(h, r->points.n);
    for (uint32_t i = 0; i < r->points.n; i++) {
        h = fnv_d(h, r->points.xy[2 * i]);
        h = fnv_d(h, r->points.xy[2 * i + 1]);
        h = fnv_d(h, r->points.heights ? r->points.heights[i] : NONE);
        h = fnv_d(h, r->clearance ? r->clearance[i] : NONE);
    }
    h = fnv_u(h, r->n_waypoints);
    for (uint32_t i = 0; i < r->n_waypoints; i++) h = fnv_u(h, r->waypoints[i]);
    h = fnv_u(h, r->n_drops);
    for (uint32_t i = 0; i < r->n_drops; i++) {
        h = fnv_u(h, r->drops[i].index);
        h = fnv_d(h, r->drops[i].height);
        h = fnv_d(h, r->drops[i].from_x);
        h = fnv_d(h, r->drops[i].from_y);
    }
    h = fnv_d(h, r->length);
    h = fnv_d(h, r->snap_start);
    h = fnv_d(h, r->snap_goal);
    h = fnv_u(h, r->n_warnings);
    for (uint32_t i = 0; i < r->n_warnings; i++) h = fnv_s(h, r->warnings[i]);
    h = fnv_u(h, r->n_run);
    for (uint32_t i = 0; i < r->n_run; i++) {
        const nm_plugin_run *w = &r->run[i];
        h = fnv_d(h, w->x);
        h = fnv_d(h, w->y);
        h = fnv_u(h, (uint64_t)w->strict);
        h = fnv_d(h, w->clearance);
        h = fnv_d(h, w->floor_y);
        h = fnv_d(h, w->target_deck_y);
        h = fnv_u(h, (uint64_t)w->has_drop_from);
        h = fnv_d(h, w->has_drop_from ? w->drop_from_x : 0);
        h = fnv_d(h, w->has_drop_from ? w->drop_from_y : 0);
    }
    return h;
}

/* The shortest text that reads back as the same double. */
static void print_num(FILE *f, double d)
{
    char b[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, d);
        if (strtod(b, NULL) == d) break;
    }
    fputs(b, f);
}

static void print_deck(FILE *f, double d)
{
    if (d > NM_PLUGIN_VALID_MIN) print_num(f, d);
    else fprintf(f, "NONE");
}

/* Plans every leg on (pack, zone) and compares each digest with its pinned one. */
static void check_legs(const char *pack, const char *zone, dleg *legs, size_t n, const char *table)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pack, zone, NULL);
    cr_assert_not_null(e, "open %s: %s", pack, api->last_error());
    bool print = getenv("NM_PLAN_DIGEST_PRINT") != NULL;
    uint64_t *got = calloc(n, sizeof *got);
    cr_assert_not_null(got);
    for (size_t i = 0; i < n; i++) {
        nm_plugin_request q;
        api->request_init(&q, legs[i].sx, legs[i].sy, legs[i].gx, legs[i].gy);
        q.goal_deck_y = legs[i].deck;
        nm_plugin_result *r = NULL;
        cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "leg %zu: %s", i, api->last_error());
        got[i] = digest(r);
        if (print)
            fprintf(stderr, "/* %s leg %zu: ok %d, %u points, tier %d %s, %.1f ms%s%s */\n", table, i, r->ok,
                    r->points.n, r->tier, r->tier_kind ? r->tier_kind : "", r->ms_total, r->ok ? "" : ": ",
                    r->ok ? "" : r->error);
        api->result_free(r);
    }
    if (print) {
        fprintf(stderr, "static dleg %s[] = {\n", table);
        for (size_t i = 0; i < n; i++) {
            fprintf(stderr, "    {");
            const double v[4] = {legs[i].sx, legs[i].sy, legs[i].gx, legs[i].gy};
            for (int k = 0; k < 4; k++) {
                print_num(stderr, v[k]);
                fprintf(stderr, ", ");
            }
            print_deck(stderr, legs[i].deck);
            fprintf(stderr, ", 0x%016" PRIX64 "ULL},\n", got[i]);
        }
        fprintf(stderr, "};\n");
    }
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(got[i], legs[i].digest,
                     "%s leg %zu (%g, %g) -> (%g, %g): digest 0x%016" PRIX64 ", pinned 0x%016" PRIX64
                     " (the plan changed; NM_PLAN_DIGEST_PRINT=1 prints fresh tables)",
                     table, i, legs[i].sx, legs[i].sy, legs[i].gx, legs[i].gy, got[i], legs[i].digest);
    free(got);
    api->close(e);
}

Test(plan_digest, demo_town_plans_are_pinned, .timeout = 600)
{
    check_legs(pt_demo_pack(), "demo", k_demo, sizeof k_demo / sizeof *k_demo, "k_demo");
}

/* The real level baked by default (the Recast path) into a temporary folder: *dir to remove. */
static void bake_real(char dir[32], char pack[600])
{
    const char *src = getenv("NM_SOURCE_ROOT"), *nb = getenv("NM_NAVBAKE");
    cr_assert_not_null(src, "NM_SOURCE_ROOT is not set (run through meson test)");
    cr_assert_not_null(nb, "NM_NAVBAKE is not set (run through meson test)");
    snprintf(dir, 32, "/tmp/nm_plan_digest_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s/resources/levels/recast-navtest/nav_test.obj' --out '%s' --quiet", nb,
             src, dir);
    cr_assert_eq(system(cmd), 0, "bake failed: %s", cmd);
    snprintf(pack, 600, "%s/base.nav.gz", dir);
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
    }
}

Test(plan_digest, real_level_plans_are_pinned, .timeout = 600)
{
    char dir[32], pack[600];
    bake_real(dir, pack);
    check_legs(pack, "nav_test", k_real, sizeof k_real / sizeof *k_real, "k_real");
    remove_dir(dir);
}

static nm_plugin_result *plan1(nm_plugin_engine *e, double sx, double sy, double gx, double gy)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_request q;
    api->request_init(&q, sx, sy, gx, gy);
    nm_plugin_result *r = NULL;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "%s", api->last_error());
    return r;
}

static bool has_warning(const nm_plugin_result *r, const char *needle)
{
    for (uint32_t i = 0; i < r->n_warnings; i++)
        if (strstr(r->warnings[i], needle)) return true;
    return false;
}

/* 几何层 走廊: the corridor holds the whole topology path, so the geometry layer solves in it.
 * These legs end on an anchor of clearance 0 reached by a diagonal step whose side cells no
 * seed's circle covered: the layer failed in the corridor and was re-solved on limw. */
Test(plan_digest, the_geometry_layer_solves_in_the_corridor, .timeout = 600)
{
    char dir[32], pack[600];
    bake_real(dir, pack);
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pack, "nav_test", NULL);
    cr_assert_not_null(e, "%s", api->last_error());
    const double legs[2][4] = {{11.799, 11.355, 13.542, 7.05}, {8.981, 6.691, 15.028, 2.284}};
    for (int k = 0; k < 2; k++) {
        nm_plugin_result *r = plan1(e, legs[k][0], legs[k][1], legs[k][2], legs[k][3]);
        cr_expect(r->ok, "leg %d: %s", k, r->error);
        cr_expect_not(has_warning(r, "without the corridor"), "leg %d: the geometry layer left the corridor", k);
        api->result_free(r);
    }
    api->close(e);
    remove_dir(dir);
}

/* 窗口分档: a small window clipped to the region rectangle cuts no route on that side, so legs
 * with an end near the region's border take their first small window (issue 14: both went to
 * the 2.77 M-cell Full window, "no path on the walk mask"). Their plans are pinned above. */
Test(plan_digest, small_windows_at_the_region_border_suffice, .timeout = 600)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pt_demo_pack(), "demo", NULL);
    cr_assert_not_null(e, "%s", api->last_error());
    const double legs[2][4] = {{22, 98, 8.375, 190}, {106, 86, 23.001, 169.999}};
    for (int k = 0; k < 2; k++) {
        nm_plugin_result *r = plan1(e, legs[k][0], legs[k][1], legs[k][2], legs[k][3]);
        cr_expect(r->ok, "leg %d: %s", k, r->error);
        cr_expect_eq(r->tier, 0, "leg %d: tier %d (%s): %s", k, r->tier, r->tier_kind, r->tier_notes);
        cr_expect(strcasecmp(r->tier_kind, "tentative") == 0, "leg %d: %s", k, r->tier_kind);
        api->result_free(r);
    }
    api->close(e);
}
