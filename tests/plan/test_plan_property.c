/* test_plan_property.c — properties over many random legs: a leg accepted in the tentative tier
 * gives the same route as in the full-region window (the tiers only save work), on the demo town
 * and a real level; results do not depend on the number of decode workers; every route passes
 * the self check. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planutil.h"

static uint64_t rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* a random leg between two triangle centres of the zone */
static void random_leg(pu_world *W, uint64_t *s, double *sx, double *sy, double *gx, double *gy)
{
    int zi = nm_pack_find_zone(&W->pack, W->zone);
    const nm_zone *z = &W->pack.zones[zi];
    float u, v;
    nm_tri_centre(&W->pack, z->first_tri + (uint32_t)(rng(s) % z->tri_count), &u, &v);
    *sx = u;
    *sy = v;
    nm_tri_centre(&W->pack, z->first_tri + (uint32_t)(rng(s) % z->tri_count), &u, &v);
    *gx = u;
    *gy = v;
}

static bool same_route(const nm_route_result *a, const nm_route_result *b)
{
    if (a->ok != b->ok || a->npoints != b->npoints) return false;
    if (a->ok && memcmp(a->xy, b->xy, (size_t)a->npoints * 2 * sizeof *a->xy) != 0) return false;
    if (a->ok && (!a->heights) != (!b->heights)) return false;
    if (a->ok && a->heights && memcmp(a->heights, b->heights, (size_t)a->npoints * sizeof(float)) != 0) return false;
    return a->ndrops == b->ndrops && a->nwaypoints == b->nwaypoints;
}

/* Plans nlegs random legs; for the tentative ones, again in the Full window. */
static void tentative_equals_full(pu_world *W, int nlegs, uint64_t seed, int *ntent_out)
{
    uint64_t s = seed;
    int ntent = 0, nok = 0;
    for (int k = 0; k < nlegs; k++) {
        double sx, sy, gx, gy;
        random_leg(W, &s, &sx, &sy, &gx, &gy);
        nm_route_request q = nm_route_request_defaults(W->zone, sx, sy, gx, gy);
        q.self_check = true;
        nm_route_result a;
        pu_plan_q(W, &q, &a);
        char what[128];
        snprintf(what, sizeof what, "%s leg %d (%.2f, %.2f) -> (%.2f, %.2f)", W->zone, k, sx, sy, gx, gy);
        if (a.ok) {
            nok++;
            pu_check_route(&a, what);
        }
        if (a.ok && a.kind == NM_TIER_TENTATIVE) {
            ntent++;
            nm_route_result b;
            q.force_full = true;
            pu_plan_q(W, &q, &b);
            cr_expect(b.ok, "%s: the Full window fails: %s", what, b.error);
            cr_expect_eq(b.kind, NM_TIER_FULL, "%s: forced Full", what);
            cr_expect(same_route(&a, &b), "%s: tentative %u points %.4f px, full %u points %.4f px", what, a.npoints,
                      a.length, b.npoints, b.length);
            nm_route_result_free(&b);
        }
        nm_route_result_free(&a);
    }
    cr_expect_gt(nok, 0, "%s: some legs succeed", W->zone);
    *ntent_out = ntent;
}

Test(plan_property, demo_town_tentative_equals_full, .timeout = 900)
{
    if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built");
    pu_world W;
    pu_bake_scene(&W, "resources/demo/scene.json", NULL, 0);
    int ntent = 0;
    tentative_equals_full(&W, 24, 12345, &ntent);
    cr_expect_gt(ntent, 0, "some legs are accepted in the tentative tier");
    pu_close(&W);
}

/* A bundled real level (resources/levels/DIR/FILE) baked at `scale`: tentative equals full and
 * every route passes the self check. */
static void real_level(const char *dir, const char *file, const char *zone, double scale, int nlegs,
                       uint64_t seed)
{
    if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char rel[256], obj[600];
    snprintf(rel, sizeof rel, "%s/%s", dir, file);
    pu_bundled_level(rel, obj, sizeof obj);
    pu_world W;
    pu_bake_obj(&W, obj, NULL, zone, scale, 0);
    int ntent = 0;
    tentative_equals_full(&W, nlegs, seed, &ntent);
    pu_close(&W);
}

Test(plan_property, real_level_tentative_equals_full, .timeout = 600)
{
    real_level("recast-navtest", "nav_test.obj", "nav_test", 0, 60, 777);
}

/* The Godot demo level (ramps, a ring walkway, raised walkways; ~6 m across) scaled 16x so its
 * walkways are several cells wide. */
Test(plan_property, godot_level_tentative_equals_full, .timeout = 600)
{
    real_level("godot-navlevel", "level_mesh.obj", "level_mesh", 16, 40, 4242);
}

Test(plan_property, results_do_not_depend_on_decode_workers, .timeout = 600)
{
    if (!pu_tools_present()) cr_skip_test("scenegen / navbake not built");
    pu_world W1, W4;
    pu_bake_scene(&W1, "resources/demo/scene.json", NULL, 1);
    pu_bake_scene(&W4, "resources/demo/scene.json", NULL, 4);
    uint64_t s = 99;
    for (int k = 0; k < 10; k++) {
        double sx, sy, gx, gy;
        random_leg(&W1, &s, &sx, &sy, &gx, &gy);
        nm_route_request q1 = nm_route_request_defaults(W1.zone, sx, sy, gx, gy);
        nm_route_request q4 = nm_route_request_defaults(W4.zone, sx, sy, gx, gy);
        nm_route_result a, b;
        pu_plan_q(&W1, &q1, &a);
        pu_plan_q(&W4, &q4, &b);
        cr_expect(same_route(&a, &b), "leg %d: 1 worker %s %u points, 4 workers %s %u points", k,
                  a.ok ? "ok" : a.error, a.npoints, b.ok ? "ok" : b.error, b.npoints);
        cr_expect_str_eq(a.error, b.error);
        nm_route_result_free(&a);
        nm_route_result_free(&b);
    }
    pu_close(&W1);
    pu_close(&W4);
}
