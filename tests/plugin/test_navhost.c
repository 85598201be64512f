/* test_navhost.c — the reference host on route files: the demo route expands into RUN waypoints
 * with pass-through entries kept, and wrong routes stop with the failure codes of host.md
 * (expansion_failed for wrong shapes, empty_route, zone_unresolved, navmesh_load_failed,
 * unknown_target_tier, route_no_go), and target_deck_y legs end on the deck or fail with
 * target_deck_unreachable. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_testlib.h"

/* Writes a route text to a new temporary file named in path (a mkstemp template). */
static void route_file(const char *route_text, char *path)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, route_text, strlen(route_text)), (ssize_t)strlen(route_text));
    close(fd);
}

/* Runs navhost on a route text; returns the exit status and the parsed output. */
static int navhost(const char *route_text, const char *extra, cJSON **out)
{
    char path[] = "/tmp/nm_navhost_route_XXXXXX";
    route_file(route_text, path);
    char cmd[4096], *text = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --pack '%s' --route '%s' %s 2>/dev/null", getenv("NM_NAVHOST"), pt_demo_pack(),
             path, extra ? extra : "");
    int rc = pt_run(cmd, &text);
    unlink(path);
    *out = cJSON_Parse(text);
    cr_assert_not_null(*out, "navhost printed no JSON: %.300s", text);
    free(text);
    return rc;
}

static void expect_failure(const char *route, const char *extra, const char *code, const char *needle)
{
    cJSON *o = NULL;
    int rc = navhost(route, extra, &o);
    cr_assert_eq(rc, 1, "route %s: exit %d", route, rc);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")));
    const char *c = cJSON_GetObjectItem(o, "code")->valuestring;
    const char *m = cJSON_GetObjectItem(o, "message")->valuestring;
    cr_assert_str_eq(c, code, "route %s: %s (%s)", route, c, m);
    if (needle) cr_assert(strstr(m, needle), "route %s: message '%s' lacks '%s'", route, m, needle);
    cJSON_Delete(o);
}

Test(navhost, route_files_of_wrong_shapes_are_refused)
{
    expect_failure("{\"a\": 1}", NULL, "expansion_failed", "array");
    expect_failure("[1, 2", NULL, "expansion_failed", "JSON");
    expect_failure("[[1]]", NULL, "expansion_failed", "entry 0");
    expect_failure("[[1, 2], [\"x\", 2]]", NULL, "expansion_failed", "entry 1");
    expect_failure("[[1, 2, 3]]", NULL, "expansion_failed", "action");
    expect_failure("[[1, 2, \"RUN\", 1]]", NULL, "expansion_failed", "strict");
    expect_failure("[[1, 2], {\"action\": \"NAVMESH\"}]", NULL, "expansion_failed", "target");
    expect_failure("[[1, 2], {\"action\": \"NAVMESH\", \"target\": [1, 2], \"target_deck_y\": \"a\"}]", NULL,
                   "expansion_failed", "target_deck_y");
    expect_failure("[{\"action\": \"ZONE\"}]", NULL, "expansion_failed", "zone_id");
    expect_failure("[7]", NULL, "expansion_failed", "entry 0");
    expect_failure("[{\"target\": [1, 2]}]", NULL, "expansion_failed", "action");
}

Test(navhost, routes_that_cannot_expand_name_their_failure)
{
    expect_failure("[]", NULL, "empty_route", NULL);
    expect_failure("[[130, 90], {\"action\": \"NAVMESH\", \"target\": [190, 75]}]", NULL, "zone_unresolved", NULL);
    expect_failure("[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, {\"action\": \"NAVMESH\", \"target\": [190, 75]}]",
                   NULL, "empty_route", "position");
    expect_failure("[{\"action\": \"ZONE\", \"zone_id\": \"nowhere\"}]", NULL, "navmesh_load_failed", "nowhere");
    expect_failure("[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, [130, 90],"
                   " {\"action\": \"NAVMESH\", \"target\": [10, 10], \"target_tier\": \"attic\"}]",
                   NULL, "unknown_target_tier", "attic");
    char extra[1200];
    snprintf(extra, sizeof extra, "--nogo '%s/resources/routes/demo_nogo.json'", getenv("NM_SOURCE_ROOT"));
    expect_failure("[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, [250, 290],"
                   " {\"action\": \"NAVMESH\", \"target\": [250, 305]}]",
                   extra, "route_no_go", "no-go");
}

Test(navhost, legs_expand_into_run_waypoints_and_the_rest_passes_through)
{
    const char *route = "[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, [130, 90],"
                        " {\"action\": \"NAVMESH\", \"target\": [190, 75]},"
                        " [190, 75, \"INTERACT\"], {\"action\": \"WAIT\", \"ms\": 5},"
                        " {\"action\": \"NAVMESH\", \"target\": [19.5, 116], \"target_deck_y\": 4},"
                        " {\"action\": \"NAVMESH\", \"target\": [19.5, 106]}]";
    cJSON *o = NULL;
    cr_assert_eq(navhost(route, NULL, &o), 0);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "ok")));
    cJSON *r = cJSON_GetObjectItem(o, "route");
    int n = cJSON_GetArraySize(r), runs = 0, strict_runs = 0, drops = 0, seen_interact = 0, seen_wait = 0;
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_GetArrayItem(r, i);
        if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 3) seen_interact = 1;
        if (!cJSON_IsObject(e)) continue;
        const char *a = cJSON_GetObjectItem(e, "action")->valuestring;
        if (!strcmp(a, "WAIT")) seen_wait = 1;
        if (strcmp(a, "RUN")) continue;
        runs++;
        strict_runs += cJSON_IsTrue(cJSON_GetObjectItem(e, "strict"));
        drops += cJSON_GetObjectItem(e, "drop_from") != NULL;
        cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "x")));
    }
    cr_assert(seen_interact && seen_wait, "pass-through entries kept");
    cr_assert_geq(runs, 3);
    cr_assert_geq(strict_runs, 3, "each leg ends strict");
    cr_assert_geq(drops, 1, "the ledge leg drops");
    /* the last RUN of the last leg is the target */
    cJSON *last = cJSON_GetArrayItem(r, n - 1);
    cr_assert_eq(cJSON_GetObjectItem(last, "x")->valuedouble, 19.5);
    cr_assert_eq(cJSON_GetObjectItem(last, "y")->valuedouble, 106);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "legs")), 3);
    cJSON_Delete(o);
}

/* target_deck_y legs (issue 13): a reachable deck is where the leg ends (the last RUN's floor_y
 * within kDeckBand = 2 m); a deck that is not there fails with target_deck_unreachable after the
 * one start-recovery retry, never a blind walk, and each leg records the planner's code. */
Test(navhost, target_deck_legs_end_on_the_deck_or_fail_with_its_code)
{
    cJSON *o = NULL;
    cr_assert_eq(navhost("[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, [190, 75],"
                         " {\"action\": \"NAVMESH\", \"target\": [19.5, 116], \"target_deck_y\": 4}]",
                         NULL, &o),
                 0);
    cJSON *r = cJSON_GetObjectItem(o, "route");
    cJSON *last = cJSON_GetArrayItem(r, cJSON_GetArraySize(r) - 1);
    cJSON *fy = cJSON_GetObjectItem(last, "floor_y");
    cr_assert(cJSON_IsNumber(fy), "the last RUN has a floor height");
    cr_expect_leq(fabs(fy->valuedouble - 4.0), 2.0, "ends on the deck: floor_y %.2f", fy->valuedouble);
    cJSON_Delete(o);
    cr_assert_eq(navhost("[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, [130, 90],"
                         " {\"action\": \"NAVMESH\", \"target\": [190, 75], \"target_deck_y\": 40}]",
                         NULL, &o),
                 1);
    cr_expect_str_eq(cJSON_GetObjectItem(o, "code")->valuestring, "target_deck_unreachable", "%s",
                     cJSON_GetObjectItem(o, "message")->valuestring);
    cJSON *leg = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "legs"), 0);
    cJSON *lc = cJSON_GetObjectItem(leg, "code");
    cr_assert(cJSON_IsString(lc), "the leg records the planner's code");
    cr_expect_str_eq(lc->valuestring, "target_deck_unreachable");
    cJSON_Delete(o);
}

/* navhost tells on stderr how many plans it made and the plugin's own time for them (the figure
 * the demo route's speed target is read from): one plan a NAVMESH leg here, no retry. */
Test(navhost, stderr_counts_the_plans_and_their_time)
{
    const char *route = "[{\"action\": \"ZONE\", \"zone_id\": \"demo\"}, [60, 90],"
                        " {\"action\": \"NAVMESH\", \"target\": [97, 37]},"
                        " {\"action\": \"NAVMESH\", \"target\": [130, 90]}]";
    char path[] = "/tmp/nm_navhost_route_XXXXXX";
    route_file(route, path);
    char cmd[4096], *text = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --pack '%s' --route '%s' 2>&1 >/dev/null", getenv("NM_NAVHOST"),
             pt_demo_pack(), path);
    int rc = pt_run(cmd, &text);
    unlink(path);
    cr_assert_eq(rc, 0, "navhost: %s", text);
    unsigned plans = 0;
    double ms = -1;
    const char *line = strstr(text, "navhost: ");
    cr_assert(line && sscanf(line, "navhost: %u plan calls, %lf ms planning", &plans, &ms) == 2,
              "stderr: %s", text);
    cr_expect_eq(plans, 2);
    cr_expect(ms > 0);
    free(text);
}

/* The two command-line tools a user runs by hand: --help prints the usage on stdout and exits 0;
 * a bad argument names itself on stderr, then the usage, and exits 2 (nothing is planned). */
static void expect_cli(const char *env, const char *args, int want_rc, const char *needle)
{
    char cmd[4096], *text = NULL;
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", getenv(env), args);
    int rc = pt_run(cmd, &text);
    cr_expect_eq(rc, want_rc, "%s %s: exit %d: %s", env, args, rc, text);
    cr_expect(strstr(text, needle), "%s %s: output lacks '%s': %s", env, args, needle, text);
    free(text);
}

Test(navhost, the_tools_answer_help_and_name_a_bad_argument)
{
    expect_cli("NM_NAVHOST", "--help", 0, "usage: navhost --pack P --route ROUTE.json");
    expect_cli("NM_NAVHOST", "--bogus x", 2, "navhost: --bogus: unknown option");
    expect_cli("NM_NAVHOST", "--pack", 2, "navhost: --pack: needs a value");
    expect_cli("NM_NAVHOST", "--route r.json", 2, "navhost: --pack and --route: required");
    expect_cli("NM_NAVPLAN", "-h", 0, "usage: navplan --pack P --zone Z");
    expect_cli("NM_NAVPLAN", "--bogus x", 2, "navplan: --bogus: unknown option");
    expect_cli("NM_NAVPLAN", "--pack p --zone z --from 1,2 --to 3", 2, "navplan: --to 3: expected X,Y (px)");
}
