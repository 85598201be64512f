/* test_route_engine.c — planLocked end to end on a level baked by tools/navbake: the engine load
 * (sidecar pairing, no-go table missing / unreadable), each check before the window in order with
 * its message, no_go on an authored polygon, cancellation before the first tier, and a plain leg
 * across an open floor through the tiers, searches and post-processing. */
#include <criterion/criterion.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "route/route.h"
#include "search/search_internal.h"
#include "sight/sight.h"

static char g_dir[512];
static nm_pack g_pack;
static char g_pack_path[800];

static const char *build_root(void)
{
    const char *b = getenv("NM_BUILD_ROOT");
    return b ? b : ".";
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* a 40 x 30 m floor in 1 m squares at height 0; transform [1, 0, 1, 0]: u = x, v = -z, so the
 * floor is u in [0, 40], v in [0, 30] px */
static void bake(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/nm_route_engine_XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
    char obj[600], zone[600], out[600], cmd[4096];
    snprintf(obj, sizeof obj, "%s/floor.obj", g_dir);
    snprintf(zone, sizeof zone, "%s/zone.json", g_dir);
    snprintf(out, sizeof out, "%s/out", g_dir);
    FILE *f = fopen(obj, "w");
    cr_assert_not_null(f);
    fprintf(f, "g floor\n");
    for (int z = 0; z <= 30; z++)
        for (int x = 0; x <= 40; x++) fprintf(f, "v %d 0 %d\n", x, -z);
    for (int z = 0; z < 30; z++)
        for (int x = 0; x < 40; x++) {
            int a = z * 41 + x + 1, b = a + 1, c = a + 41, d = c + 1;
            fprintf(f, "f %d %d %d\nf %d %d %d\n", a, c, b, b, c, d);
        }
    /* a deck at 10 m over u in [30, 38], v in [2, 8] */
    fprintf(f, "g deck\nv 30 10 -2\nv 38 10 -2\nv 30 10 -8\nv 38 10 -8\n");
    int d0 = 41 * 31 + 1;
    fprintf(f, "f %d %d %d\nf %d %d %d\n", d0, d0 + 2, d0 + 1, d0 + 1, d0 + 2, d0 + 3);
    /* a platform at 5 m over u in [2, 8], v in [20, 28]: another region, a ledge down to the floor */
    int p0 = d0 + 4;
    fprintf(f, "g platform\nv 2 5 -20\nv 8 5 -20\nv 2 5 -28\nv 8 5 -28\n");
    fprintf(f, "f %d %d %d\nf %d %d %d\n", p0, p0 + 2, p0 + 1, p0 + 1, p0 + 2, p0 + 3);
    fclose(f);
    write_file(zone, "{\"zones\": [{\"name\": \"t\", \"transform\": [1, 0, 1, 0],"
                     " \"tiers\": [{\"name\": \"t_f2\", \"floor_y\": 40.0}]}]}");
    snprintf(cmd, sizeof cmd, "'%s/tools/navbake/navbake' --obj '%s' --zone '%s' --out '%s' --quiet --walkable-as-is",
             build_root(), obj, zone, out);
    cr_assert_eq(system(cmd), 0, "bake failed: %s", cmd);
    snprintf(g_pack_path, sizeof g_pack_path, "%s/base.nav.gz", out);
    nm_pack_load_opts lo = {0};
    nm_error err = {0};
    cr_assert_eq(nm_pack_load(g_pack_path, &lo, &g_pack, &err), NM_OK, "%s", err.msg);
}

static void unbake(void)
{
    nm_pack_free(&g_pack);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) {
    }
}

TestSuite(engine, .init = bake, .fini = unbake, .timeout = 240);

Test(engine, sidecar_path_pairs_by_name)
{
    char *a = nm_fields_sidecar_path("/x/base.nav.gz"), *b = nm_fields_sidecar_path("base.nav"),
         *c = nm_fields_sidecar_path("pack");
    cr_expect_str_eq(a, "/x/base.fields.nav.gz");
    cr_expect_str_eq(b, "base.fields.nav");
    cr_expect_str_eq(c, "pack.fields");
    nm_free(a);
    nm_free(b);
    nm_free(c);
}

Test(engine, missing_sidecar_makes_every_plan_fail_at_check_1)
{
    char other[700], cmd[3000];
    snprintf(other, sizeof other, "%s/lone.nav.gz", g_dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", g_pack_path, other);
    cr_assert_eq(system(cmd), 0);
    nm_route_engine e;
    nm_error err = {0};
    cr_expect_neq(nm_route_engine_open(&e, &g_pack, other, NULL, 1, &err), NM_OK);
    cr_expect(strstr(err.msg, "lone.fields.nav.gz") != NULL, "%s", err.msg);
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK);
    cr_expect_not(r.ok);
    cr_expect_eq(r.check, 1);
    cr_expect(strstr(r.error, "sidecar") != NULL, "%s", r.error);
    nm_route_result_free(&r);
    nm_route_engine_close(&e);
}

Test(engine, nogo_table_missing_is_none_unreadable_disables)
{
    nm_route_engine e;
    nm_error err = {0};
    char path[700];
    snprintf(path, sizeof path, "%s/none.json", g_dir);
    cr_expect_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, path, 1, &err), NM_OK, "%s", err.msg);
    nm_route_engine_close(&e);
    write_file(path, "{\"version\": 1, \"zones\": {\"t\": [{\"poly\": [[0, 0]]}]}}");
    cr_expect_neq(nm_route_engine_open(&e, &g_pack, g_pack_path, path, 1, &err), NM_OK);
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK);
    cr_expect_eq(r.check, 1);
    cr_expect(strstr(r.error, "no-go") != NULL, "%s", r.error);
    nm_route_engine_close(&e);
}

static void plan_expect(nm_route_engine *e, nm_route_request q, int check, const char *needle)
{
    nm_route_result r;
    nm_error err = {0};
    cr_assert_eq(nm_route_plan(e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_not(r.ok);
    cr_expect_eq(r.check, check, "check %d (%s)", r.check, r.error);
    cr_expect(strstr(r.error, needle) != NULL, "'%s' not in '%s'", needle, r.error);
    nm_route_result_free(&r);
}

Test(engine, checks_run_in_order_with_their_messages)
{
    char nogo[700];
    snprintf(nogo, sizeof nogo, "%s/nogo.json", g_dir);
    /* a square around (30, 20) on the base map and one on the tier (floor 40: band 28..52) */
    write_file(nogo, "{\"version\": 1, \"zones\": {\"t\": ["
                     "{\"poly\": [[28,18],[32,18],[32,22],[28,22]], \"id\": \"pond\"},"
                     "{\"poly\": [[8,8],[12,8],[12,12],[8,12]], \"id\": \"roof\", \"tier\": \"t_f2\"}]}}");
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, nogo, 1, &err), NM_OK, "%s", err.msg);
    /* 2: unknown zone */
    plan_expect(&e, nm_route_request_defaults("nope", 5, 5, 30, 20), 2, "no pre-baked grid");
    /* 5 before 6: both ends off the mesh reports the start */
    plan_expect(&e, nm_route_request_defaults("t", -50, 5, -50, 80), 5, "start");
    plan_expect(&e, nm_route_request_defaults("t", 5, 5, 90, 20), 6, "goal");
    /* 7: the goal in the pond; no_go set */
    nm_route_result r;
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK);
    cr_expect_eq(r.check, 7);
    cr_expect(r.no_go);
    cr_expect(strstr(r.error, "goal") && strstr(r.error, "pond"), "%s", r.error);
    nm_route_result_free(&r);
    /* the tier polygon is banded at 40 +- 12: the floor at 0 m is not inside it */
    q = nm_route_request_defaults("t", 10, 10, 20, 10);
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK);
    cr_expect_not(r.no_go, "%s", r.error);
    cr_expect_neq(r.check, 7);
    nm_route_result_free(&r);
    /* 8: an end 10 px off the mesh snaps within 16 px but is > 8 px from every core cell */
    plan_expect(&e, nm_route_request_defaults("t", 5, 5, 50, 10), 8, "do not reach the walkable layer");
    nm_route_engine_close(&e);
}

static bool stop_now(void *ctx)
{
    (*(int *)ctx)++;
    return true;
}

Test(engine, cancellation_is_polled_before_the_first_tier)
{
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    int calls = 0;
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    q.should_stop = stop_now;
    q.stop_ctx = &calls;
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK);
    cr_expect_not(r.ok);
    cr_expect_eq(calls, 1);
    cr_expect(strstr(r.error, "cancelled") != NULL, "%s", r.error);
    nm_route_engine_close(&e);
}

Test(engine, an_open_engine_keeps_up_to_its_cap_of_pages)
{
    /* plans back to back reuse the last plan's pages (route.h, NM_ROUTE_KEPT_BYTES) */
    const size_t was = nm_kept_max(NM_KEPT_MAX);
    if (!was)
        cr_skip_test("no kept pages on this build (AddressSanitizer)");
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(nm_kept_max(0), NM_ROUTE_KEPT_BYTES);
    nm_route_engine_close(&e);
    cr_expect_eq(nm_kept_bytes(), 0, "close gives the kept pages back");
    nm_kept_max(was > NM_ROUTE_KEPT_BYTES ? was : NM_ROUTE_KEPT_BYTES);
}

Test(engine, open_floor_leg_is_planned_in_the_first_tier)
{
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_assert(r.ok, "check %d: %s | %s", r.check, r.error, r.tier_notes);
    cr_expect_eq(r.tier, 0, "%s", r.tier_notes);
    cr_expect_geq(r.npoints, 2);
    cr_expect_float_eq(r.xy[0], 5.0, 0.5);
    cr_expect_float_eq(r.xy[2 * (r.npoints - 1)], 30.0, 0.5);
    double straight = hypot(25, 15);
    cr_expect_geq(r.length, straight - 1e-6);
    cr_expect_leq(r.length, straight * 1.2);
    cr_expect_gt(r.window_cells, 0);
    cr_expect_gt(r.peak_window_bytes, 0);
    nm_route_result_free(&r);
    nm_route_engine_close(&e);
}

Test(engine, goal_deck_region_must_exist_in_the_seed_cell)
{
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    /* the deck at 10 m is another region, absent from the start's seed cell: every tier's window
       build would fail on it (失败的情形, 建窗失败); the planner says what it means before the
       window, with the code a host acts on and the heights found at the goal (issue 13) */
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 34, 5);
    q.goal_deck_y = 10.0f;
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_not(r.ok);
    cr_expect_eq(r.code, NM_ROUTE_TARGET_DECK_UNREACHABLE, "%s: %s", nm_route_code_name(r.code), r.error);
    cr_expect_eq(r.check, 10);
    cr_expect(strstr(r.error, "target deck unreachable") != NULL, "%s", r.error);
    cr_expect(strstr(r.error, "10.00") != NULL, "the heights at the goal are listed: %s", r.error);
    cr_expect_eq(r.tier, -1, "no window is built");
    nm_route_result_free(&r);
    /* a deck declared where nothing is: check 10 */
    q.goal_deck_y = 5.0f;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r.check, 10, "%d %s", r.check, r.error);
    cr_expect(strstr(r.error, "no declared deck") != NULL, "%s", r.error);
    nm_route_result_free(&r);
    /* the floor under the deck as the declared goal deck: planned */
    q.goal_deck_y = 0.0f;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_expect(r.ok, "%s | %s", r.error, r.tier_notes);
    nm_route_result_free(&r);
    nm_route_engine_close(&e);
}

Test(engine, ledge_drop_changes_region_when_only_the_goal_is_out_of_reach)
{
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    /* start on the platform (the highest layer there), goal on the floor 25 px away */
    nm_route_request q = nm_route_request_defaults("t", 5, 24, 30, 24);
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_assert(r.ok, "%s | %s", r.error, r.tier_notes);
    cr_expect(strstr(r.tier_notes, "ledge drop") != NULL, "%s", r.tier_notes);
    cr_assert_neq(r.hop_index, UINT32_MAX);
    cr_assert_lt(r.hop_index, r.npoints);
    /* the landing lies just off the platform's edge (u = 8 or v = 20 / 28) and on the floor */
    double lx = r.xy[2 * r.hop_index], ly = r.xy[2 * r.hop_index + 1];
    cr_expect(lx > 7.5 || ly < 20.5 || ly > 27.5 || lx < 2.5, "landing (%f, %f)", lx, ly);
    cr_expect_float_eq(r.hop_height, 0.0, 0.1);
    cr_expect_float_eq(r.xy[2 * (r.npoints - 1)], 30.0, 0.5);
    nm_route_result_free(&r);
    /* with a goal deck declared no drop is tried */
    q.goal_deck_y = 0.0f;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r.hop_index, UINT32_MAX);
    nm_route_result_free(&r);
    nm_route_engine_close(&e);
}

Test(engine, navbench_prints_a_line_per_leg_and_a_summary)
{
    char legs[700], outp[700], cmd[4096];
    snprintf(legs, sizeof legs, "%s/legs.txt", g_dir);
    snprintf(outp, sizeof outp, "%s/bench.jsonl", g_dir);
    write_file(legs, "# sx sy gx gy\n5 5 30 20\n5 5 90 20\n");
    snprintf(cmd, sizeof cmd, "'%s/tools/navbench/navbench' --pack '%s' --zone t --legs '%s' > '%s'", build_root(),
             g_pack_path, legs, outp);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    FILE *f = fopen(outp, "r");
    cr_assert_not_null(f);
    char line[8192];
    int n = 0, ok = 0, summary = 0;
    while (fgets(line, sizeof line, f)) {
        n++;
        if (strstr(line, "\"ok\":true")) ok++;
        if (strstr(line, "\"summary\":true")) {
            summary++;
            cr_expect(strstr(line, "\"success_rate\":0.5000") != NULL, "%s", line);
            cr_expect(strstr(line, "\"p90\":{") != NULL, "%s", line);
        }
    }
    fclose(f);
    cr_expect_eq(n, 3);
    cr_expect_eq(ok, 1);
    cr_expect_eq(summary, 1);
    snprintf(cmd, sizeof cmd, "'%s/tools/navbench/navbench' --pack '%s' --zone t > /dev/null 2>&1", build_root(),
             g_pack_path);
    cr_expect_neq(system(cmd), 0, "legs or --random required");
}

Test(engine, regions_near_lists_every_region_within_8_px)
{
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(nm_route_warm(&e, "t", &err), NM_OK, "%s", err.msg);
    /* (5, 5): floor only; (5, 24): floor and platform; (34, 5): floor and deck;
       (100, 100): nothing (empty = no answer) */
    double pts[8] = {5, 5, 5, 24, 34, 5, 100, 100};
    uint32_t start[5], *rids = NULL;
    cr_assert_eq(nm_route_regions_near(&e, "t", pts, 4, start, &rids, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(start[1] - start[0], 1);
    cr_expect_eq(start[2] - start[1], 2);
    cr_expect_eq(start[3] - start[2], 2);
    cr_expect_eq(start[4] - start[3], 0);
    cr_expect_lt(rids[start[1]], rids[start[1] + 1], "sorted");
    cr_expect_eq(rids[start[0]], rids[start[1]] == rids[start[0]] ? rids[start[0]] : rids[start[1] + 1],
                 "the floor's region is in both sets");
    nm_free(rids);
    uint32_t s2[2];
    cr_assert_eq(nm_route_regions_near(&e, "nope", pts, 1, s2, &rids, &err), NM_OK);
    cr_expect_eq(s2[1], 0);
    nm_free(rids);
    nm_route_engine_close(&e);
}

/* 引擎装载, shared: a second engine borrowing the first's parsed sidecar plans the same route bit for
 * bit, and a sidecar of another main pack (build hash / FNV) is refused. */
Test(engine, a_borrowed_sidecar_plans_the_same_route)
{
    nm_route_engine a, b;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&a, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    nm_bnvf own;
    cr_assert(nm_route_engine_take_fields(&a, &own));
    cr_assert_not(nm_route_engine_take_fields(&a, &own), "handed over once");
    cr_assert_eq(nm_route_engine_open_shared(&b, &g_pack, g_pack_path, &own, NULL, 1, &err), NM_OK, "%s",
                 err.msg);
    cr_assert_eq(b.fields.owned, own.owned, "borrowed, not reloaded");
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    nm_route_result ra, rb;
    cr_assert_eq(nm_route_plan(&a, &q, &ra, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_plan(&b, &q, &rb, &err), NM_OK, "%s", err.msg);
    cr_assert(ra.ok && rb.ok, "%s | %s", ra.error, rb.error);
    cr_assert_eq(ra.npoints, rb.npoints);
    cr_assert_eq(memcmp(ra.xy, rb.xy, sizeof(double) * 2 * ra.npoints), 0);
    cr_assert_eq(ra.length, rb.length);
    nm_route_result_free(&ra);
    nm_route_result_free(&rb);
    nm_route_engine_close(&b);

    nm_bnvf other = own;
    other.fnv ^= 1;
    cr_expect_neq(nm_route_engine_open_shared(&b, &g_pack, g_pack_path, &other, NULL, 1, &err), NM_OK);
    cr_expect(strstr(err.msg, "another pack") != NULL, "%s", err.msg);
    nm_route_engine_close(&b);

    nm_route_engine_close(&a);
    cr_assert_not_null(own.owned, "the engines' close leaves the borrowed sidecar alone");
    nm_bnvf_free(&own);
}

static void expect_same_plan(const nm_route_result *a, const nm_route_result *b, const char *what)
{
    cr_assert(a->ok && b->ok, "%s: %s | %s", what, a->error, b->error);
    cr_assert_eq(a->npoints, b->npoints, "%s", what);
    cr_expect_eq(memcmp(a->xy, b->xy, sizeof(double) * 2 * a->npoints), 0, "%s: points", what);
    cr_expect_eq(a->length, b->length, "%s", what);
    cr_expect_eq(a->tier, b->tier, "%s", what);
    cr_expect_eq(a->kind, b->kind, "%s", what);
    cr_expect_eq(a->window_cells, b->window_cells, "%s", what);
    cr_expect_eq(a->nwaypoints, b->nwaypoints, "%s", what);
    cr_expect_eq(memcmp(a->waypoints, b->waypoints, sizeof(uint32_t) * a->nwaypoints), 0, "%s: waypoints", what);
    cr_expect_eq(memcmp(a->heights, b->heights, sizeof(float) * a->npoints), 0, "%s: heights", what);
    cr_expect_eq(memcmp(a->clearance, b->clearance, sizeof(float) * a->npoints), 0, "%s: clearance", what);
    cr_expect_str_eq(a->warnings, b->warnings, "%s", what);
}

/* Legs planned back to back in one region take the Full window the engine kept from the last
 * one, with the searches' state (their work arrays, nodes the last leg touched included) and
 * the blocker segments (their bucket index and query marks included), and
 * plan exactly as on a fresh engine; another no-go state needs another window. */
Test(engine, the_second_threads_arrays_are_kept_with_the_state)
{
    /* Two workers: the channel and the topology layer run on a second context; its work arrays
     * stay with the kept state and the next leg's second context takes them. The plans equal a
     * one-worker engine's. It fails when the arrays are freed or not taken. */
    nm_route_engine e, f;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_engine_open(&f, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    nm_route_request q1 = nm_route_request_defaults("t", 5, 5, 30, 20);
    nm_route_request q2 = nm_route_request_defaults("t", 35, 25, 12, 4);
    q1.force_full = q2.force_full = true;
    nm_route_result r, want;
    cr_assert_eq(nm_route_plan(&e, &q1, &r, &err), NM_OK, "%s", err.msg);
    cr_assert(r.ok, "%s", r.error);
    nm_route_result_free(&r);
    cr_assert_not_null(e.kept_state);
    cr_assert_not_null(e.kept_state->spare, "the second context's arrays stay with the state");
    const nm_snode *nodes = e.kept_state->spare->node;
    cr_assert_eq(nm_route_plan(&e, &q2, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r.windows_kept, 1);
    cr_assert_not_null(e.kept_state);
    cr_assert_not_null(e.kept_state->spare);
    cr_expect_eq(e.kept_state->spare->node, nodes, "the second leg's second context took them");
    cr_assert_eq(nm_route_plan(&f, &q2, &want, &err), NM_OK, "%s", err.msg);
    expect_same_plan(&want, &r, "kept second context");
    nm_route_result_free(&want);
    nm_route_result_free(&r);
    nm_route_engine_close(&f);
    nm_route_engine_close(&e);
}

/* With two workers the window's blocker segments are made on the sight's second thread while
 * the geometry layer searches, not after it: they are the segments a one-worker engine makes in
 * post-processing, in the same order, and the plans are the same. */
Test(engine, the_blockers_made_beside_the_geometry_layer_are_post_processings)
{
    nm_route_engine e, f;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_engine_open(&f, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    nm_route_request q = nm_route_request_defaults("t", 5, 5, 30, 20);
    q.force_full = true; /* a Full window is kept, with its blockers */
    nm_route_result r, want;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_plan(&f, &q, &want, &err), NM_OK, "%s", err.msg);
    expect_same_plan(&want, &r, "blockers beside the geometry layer");
    cr_expect_eq(r.blockers_beside, 1, "the two-worker plan made its blockers beside the search");
    cr_expect_eq(want.blockers_beside, 0, "the one-worker plan made them in post-processing");
    const nm_sight_blockers *a = e.kept_blk, *b = f.kept_blk;
    cr_assert(a && b, "both engines keep the window's blockers");
    cr_assert_eq(a->nsegs, b->nsegs);
    cr_assert_gt(a->nsegs, 0);
    /* field by field: a segment's padding bytes are whatever its block held before */
    uint32_t differ = 0;
    for (uint32_t i = 0; i < a->nsegs; i++) {
        const nm_window_seg *x = &a->segs[i], *y = &b->segs[i];
        differ += x->ax != y->ax || x->ay != y->ay || x->bx != y->bx || x->by != y->by || x->kind != y->kind;
    }
    cr_expect_eq(differ, 0, "the same segments in the same order");
    nm_route_result_free(&want);
    nm_route_result_free(&r);
    nm_route_engine_close(&f);
    nm_route_engine_close(&e);
}

Test(engine, a_full_window_is_kept_for_the_next_leg_of_the_region)
{
    nm_route_engine e, f;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    nm_route_request q1 = nm_route_request_defaults("t", 5, 5, 30, 20);
    nm_route_request q2 = nm_route_request_defaults("t", 35, 25, 12, 4);
    q1.force_full = q2.force_full = true;
    nm_route_result r1, r2, want;
    cr_assert_eq(nm_route_plan(&e, &q1, &r1, &err), NM_OK, "%s", err.msg);
    cr_assert(r1.ok, "%s", r1.error);
    cr_expect_eq(r1.windows_kept, 0, "a new engine has no window");
    cr_assert_not_null(e.kept_state, "the search state stays with the Full window");
    const nm_snode *nodes = e.kept_state->node;
    const struct nm_sight_blockers *blk = e.kept_blk;
    cr_assert_not_null(blk, "and the window's blocker segments");
    cr_assert_eq(nm_route_plan(&e, &q2, &r2, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r2.windows_kept, 1, "the first leg's Full window");
    cr_assert_not_null(e.kept_state);
    cr_expect_eq(e.kept_state->node, nodes, "the second leg searched on the first leg's node records");
    cr_expect_eq(e.kept_blk, blk, "the second leg's post-processing used the first leg's blockers");
    cr_assert_eq(nm_route_engine_open(&f, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_plan(&f, &q2, &want, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(want.windows_kept, 0);
    expect_same_plan(&want, &r2, "kept window");
    nm_route_result_free(&want);
    nm_route_result_free(&r2);
    /* a runtime disc: another window, kept in turn for the same disc */
    nm_nogo_disc disc = {20, 12, 1.5};
    q2.discs = &disc;
    q2.ndiscs = 1;
    cr_assert_eq(nm_route_plan(&e, &q2, &r2, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r2.windows_kept, 0, "the disc changes the window");
    nm_route_result_free(&r2);
    q1.discs = &disc;
    q1.ndiscs = 1;
    cr_assert_eq(nm_route_plan(&e, &q1, &r2, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r2.windows_kept, 1, "the same disc");
    cr_assert_eq(nm_route_plan(&f, &q1, &want, &err), NM_OK, "%s", err.msg);
    expect_same_plan(&want, &r2, "kept window with a disc");
    nm_route_result_free(&want);
    nm_route_result_free(&r2);
    nm_route_result_free(&r1);
    nm_route_engine_close(&f);
    nm_route_engine_close(&e);
}

/* warm decodes a zone that fits the tile cache whole, sidecar columns and all, and keeps every
 * region's box: the plans after it decode no tile and plan exactly as on an engine that was not
 * warmed. A zone larger than the cache has only its boxes made (from the tiles' region fields).
 * It fails when warm skips the tiles, decodes them without the fields the windows read, or keeps
 * a box that differs from nm_region_bbox or none for the larger zone. */
Test(engine, warm_decodes_a_zone_that_fits_the_tile_cache_and_plans_the_same)
{
    nm_route_engine e, f, small;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_engine_open(&f, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_warm(&e, "t", &err), NM_OK, "%s", err.msg);
    const int bz = nm_bgrd_find_zone(&e.grid, "t");
    cr_assert_geq(bz, 0);
    const nm_bgrd_zone *gz = &e.grid.zones[bz];
    size_t recs = 0;
    for (uint32_t t = 0; t < gz->tile_count; t++) recs += gz->tiles[t].records;
    cr_expect_eq(e.tiles.bytes, recs * (sizeof(nm_grid_rec) + sizeof(nm_span_fields)), "every tile, with fields");
    const nm_route_zone_entry *z = NULL;
    for (int i = 0; i < NM_ROUTE_ZONE_CACHE; i++)
        if (e.cache[i].valid) z = &e.cache[i];
    cr_assert_not_null(z);
    cr_expect_gt(z->nbbox, 1, "the floor's, the deck's and the platform's boxes");
    for (uint32_t i = 0; i < z->nbbox; i++) {
        nm_cell_rect want;
        cr_assert_eq(nm_region_bbox(&e.grid, (uint32_t)bz, z->bbox_rid[i], 1, &want, &err), NM_OK, "%s", err.msg);
        cr_expect(nm_cell_rect_equal(&want, &z->bbox[i]), "region %u", z->bbox_rid[i]);
    }
    const uint64_t misses = e.tiles.misses;
    nm_route_request legs[3] = {nm_route_request_defaults("t", 5, 5, 30, 20),
                                nm_route_request_defaults("t", 35, 25, 12, 4),
                                nm_route_request_defaults("t", 20, 10, 39, 29)};
    for (int k = 0; k < 3; k++) {
        nm_route_result r, want;
        cr_assert_eq(nm_route_plan(&e, &legs[k], &r, &err), NM_OK, "%s", err.msg);
        cr_assert_eq(nm_route_plan(&f, &legs[k], &want, &err), NM_OK, "%s", err.msg);
        expect_same_plan(&want, &r, "warmed engine");
        nm_route_result_free(&want);
        nm_route_result_free(&r);
    }
    cr_expect_eq(e.tiles.misses, misses, "the plans decoded no tile");
    cr_expect_gt(f.tiles.misses, 0, "an engine not warmed decodes its tiles in its plans");

    cr_assert_eq(nm_route_engine_open(&small, &g_pack, g_pack_path, NULL, 1, &err), NM_OK, "%s", err.msg);
    small.tiles.budget = recs * sizeof(nm_grid_rec); /* the records fit, not their fields */
    cr_assert_eq(nm_route_warm(&small, "t", &err), NM_OK, "%s", err.msg);
    cr_expect_eq(small.tiles.bytes, 0, "a zone larger than the cache is left to the plans");
    const nm_route_zone_entry *zs = NULL;
    for (int i = 0; i < NM_ROUTE_ZONE_CACHE; i++)
        if (small.cache[i].valid) zs = &small.cache[i];
    cr_assert_not_null(zs);
    cr_expect_eq(zs->nbbox, z->nbbox, "its region boxes are kept all the same");
    for (uint32_t i = 0; i < zs->nbbox; i++) {
        nm_cell_rect want;
        cr_assert_eq(nm_region_bbox(&small.grid, (uint32_t)bz, zs->bbox_rid[i], 1, &want, &err), NM_OK, "%s", err.msg);
        cr_expect(nm_cell_rect_equal(&want, &zs->bbox[i]), "region %u, from the region fields", zs->bbox_rid[i]);
    }
    nm_route_engine_close(&small);
    nm_route_engine_close(&f);
    nm_route_engine_close(&e);
}

/* A tile that does not decode fails nothing at warm: the cache stays as it was and the plan that
 * reads the tile reports it (check 9). It fails when warm returns the decode error or keeps part
 * of a failed decode. */
Test(engine, warm_leaves_a_tile_that_does_not_decode_to_the_plans)
{
    nm_route_engine e;
    nm_error err = {0};
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    const int bz = nm_bgrd_find_zone(&e.grid, "t");
    cr_assert_geq(bz, 0);
    const nm_bgrd_zone *gz = &e.grid.zones[bz];
    uint32_t big = 0;
    for (uint32_t t = 1; t < gz->tile_count; t++)
        if (gz->tiles[t].records > gz->tiles[big].records) big = t;
    const nm_bgrd_tile *bt = &gz->tiles[big];
    cr_assert_gt(bt->records, 0);
    /* the tile's streams after its first bytes: every varint runs on (this test's fork only) */
    memset((uint8_t *)e.grid.bytes + bt->offset + bt->len / 2, 0xFF, bt->len - bt->len / 2);
    nm_bgrd_scratch sc = {0};
    nm_grid_rec *buf = calloc(bt->records, sizeof *buf);
    cr_assert_neq(nm_bgrd_decode_tile(&e.grid, (uint32_t)bz, big, &sc, buf, &err), NM_OK, "the tile is broken");
    free(buf);
    nm_bgrd_scratch_free(&sc);
    cr_expect_eq(nm_route_warm(&e, "t", &err), NM_OK, "%s", err.msg);
    cr_expect_eq(e.tiles.bytes, 0, "a failed decode keeps nothing");
    const double cx = (bt->gx0 + (bt->px0 + bt->px1) / 2.0) * NM_kCS, cy = (bt->gy0 + (bt->py0 + bt->py1) / 2.0) * NM_kCS;
    nm_route_request q = nm_route_request_defaults("t", cx, cy, 20, 12);
    nm_route_result r;
    cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_not(r.ok);
    cr_expect_eq(r.code, NM_ROUTE_GRID_DECODE, "code %d: %s", r.code, r.error);
    nm_route_result_free(&r);
    nm_route_engine_close(&e);
}

/* Two windows of the same request, layer by layer. */
static void expect_same_window(const nm_window *a, const nm_window *b)
{
    cr_assert(a->win.nx == b->win.nx && a->win.ny == b->win.ny && a->spans.nspans == b->spans.nspans);
    const size_t cells = (size_t)a->win.nx * (size_t)a->win.ny, ns = a->spans.nspans;
    cr_expect_eq(memcmp(a->lay, b->lay, cells), 0, "lay");
    cr_expect_eq(memcmp(a->core, b->core, cells), 0, "core");
    cr_expect_eq(memcmp(a->dist, b->dist, cells * sizeof *a->dist), 0, "dist");
    cr_expect_eq(memcmp(a->medial, b->medial, cells), 0, "medial");
    cr_expect_eq(memcmp(a->stepbits, b->stepbits, cells), 0, "stepbits");
    cr_expect_eq(memcmp(a->spans.sp_cell, b->spans.sp_cell, ns * sizeof(uint32_t)), 0, "span cells");
    cr_expect_eq(memcmp(a->spans.sp_h, b->spans.sp_h, ns * sizeof(float)), 0, "span heights");
    cr_expect_eq(memcmp(a->sp_bits, b->sp_bits, ns), 0, "span bits");
    cr_assert_eq(a->spans.nocc, b->spans.nocc);
    cr_expect_eq(a->spans.max_col, b->spans.max_col);
    cr_expect_eq(memcmp(a->spans.cs, b->spans.cs, ((size_t)a->spans.nocc + 1) * sizeof(uint32_t)), 0, "cs");
    cr_expect_eq(memcmp(a->spans.occ_bits, b->spans.occ_bits, (cells + 63) / 64 * sizeof(uint64_t)), 0, "occ");
    cr_expect_eq(a->nsegs, b->nsegs);
    cr_expect_eq(a->nlinks, b->nlinks);
}

/* A plan's windows and search arrays land on blocks an earlier plan freed, values still in them
 * (glibc reuses its heap). A plan made while glibc fills every block it hands out with garbage
 * (M_PERTURB: malloc'd blocks filled, calloc'd ones still zero) equals the same plan on a fresh
 * engine, and its window matches layer by layer: every array a plan reads is set before it is
 * read. (It fails when a window layer the build expects zeroed is taken with malloc.) */
Test(engine, a_plan_on_memory_handed_out_dirty_equals_a_plan_on_fresh_memory)
{
    nm_route_engine e, f;
    nm_error err = {0};
    nm_route_request a = nm_route_request_defaults("t", 5, 5, 30, 20);
    a.force_full = true; /* the engine keeps the window: compared below */
    nm_route_result want, r;
    /* AddressSanitizer's allocator refuses mallopt (it fills malloc'd blocks with its own byte) */
    if (mallopt(M_PERTURB, 0) != 1)
        cr_skip_test("this allocator does not take M_PERTURB (a sanitizer build)");
    cr_assert_eq(nm_route_engine_open(&f, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_plan(&f, &a, &want, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(mallopt(M_PERTURB, 0xa5), 1);
    cr_assert_eq(nm_route_engine_open(&e, &g_pack, g_pack_path, NULL, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_route_plan(&e, &a, &r, &err), NM_OK, "%s", err.msg);
    expect_same_plan(&want, &r, "on dirty memory");
    cr_assert(e.has_kept && f.has_kept);
    expect_same_window(&f.kept, &e.kept);
    nm_route_result_free(&r);
    nm_route_result_free(&want);
    nm_route_engine_close(&e);
    nm_route_engine_close(&f);
    mallopt(M_PERTURB, 0);
}
