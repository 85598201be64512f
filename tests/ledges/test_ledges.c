/* test_ledges.c — the FallGate in the planner (design article 台沿下落): the ledge scene baked
 * without collision gating (navbake --no-occluder), planned with and without base.occluder.gz next
 * to the pack, and baked normally; the two-region scene's ledge hop; the demo town's legs with
 * and without the occluder. Plans in scene metres; the zone transform scales to px. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack.h"
#include "route/route.h"
#include "window/window_gate.h"
#include "ledges_util.h"

typedef struct world {
    char pack_path[700];
    nm_pack pack;
    nm_route_engine e;
    double scale;
    char zone[64];
} world;

static void open_world(world *W, const char *dir, const char *zone)
{
    memset(W, 0, sizeof *W);
    snprintf(W->pack_path, sizeof W->pack_path, "%s/base.nav.gz", dir);
    snprintf(W->zone, sizeof W->zone, "%s", zone);
    nm_pack_load_opts lo = {0};
    nm_error err = {0};
    cr_assert_eq(nm_pack_load(W->pack_path, &lo, &W->pack, &err), NM_OK, "%s", err.msg);
    int zi = nm_pack_find_zone(&W->pack, zone);
    cr_assert_geq(zi, 0);
    W->scale = W->pack.zones[zi].t[0];
    cr_assert_eq(nm_route_engine_open(&W->e, &W->pack, W->pack_path, NULL, 0, &err), NM_OK, "%s", err.msg);
}

static void close_world(world *W)
{
    nm_route_engine_close(&W->e);
    nm_pack_free(&W->pack);
}

static void plan(world *W, double sx, double sy, double gx, double gy, nm_route_result *r)
{
    nm_route_request q = nm_route_request_defaults(W->zone, sx * W->scale, sy * W->scale, gx * W->scale,
                                                   gy * W->scale);
    q.self_check = true;
    nm_error err = {0};
    cr_assert_eq(nm_route_plan(&W->e, &q, r, &err), NM_OK, "%s", err.msg);
}

/* Bakes scene_rel into dir/src, dir/plain (--no-occluder), dir/full (normal) and dir/gated
 * (plain's pack and sidecar with full's occluder). */
static void bake_three(const char *scene_rel, const char *dir)
{
    char obj[600], zone[600], out[600], a[800], b[800];
    lu_scenegen(scene_rel, dir);
    snprintf(obj, sizeof obj, "%s/src/level.obj", dir);
    snprintf(zone, sizeof zone, "%s/src/zone.json", dir);
    snprintf(out, sizeof out, "%s/plain", dir);
    lu_navbake(obj, zone, out, "--walkable-as-is --no-occluder");
    snprintf(a, sizeof a, "%s/plain/base.occluder.gz", dir);
    cr_assert_not(lu_exists(a), "--no-occluder wrote %s", a);
    snprintf(out, sizeof out, "%s/full", dir);
    lu_navbake(obj, zone, out, "--walkable-as-is");
    snprintf(a, sizeof a, "mkdir -p '%s/gated'", dir);
    lu_run(a);
    static const char *files[] = {"plain/base.nav.gz", "plain/base.fields.nav.gz", "full/base.occluder.gz"};
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, files[i]);
        snprintf(b, sizeof b, "%s/gated/%s", dir, strchr(files[i], '/') + 1);
        lu_copy(a, b);
    }
}

/* Is drop d a drop over the front edge (y = y0) of the platform x0 .. x0 + 10, away from its
 * corners? */
static bool front_drop(const world *W, const nm_route_drop *d, double x0, double width, double y0)
{
    double fx = d->from_x / W->scale, fy = d->from_y / W->scale;
    return fabs(fy - y0) < 0.5 && fx > x0 + 0.5 && fx < x0 + width - 0.5;
}

/* Four platforms (open, railing, lip, slab) of `width` m at x0[i], front edge y = y0, H m high. */
typedef struct ledge_set {
    double x0[4], width, y0, H;
} ledge_set;

/* Down a ledge (top 5 m inside the front edge -> ground 3 m outside), each variant. gate: the
 * railing and the slab block the drop over the front edge, and the side guards (0.1 m railings
 * whose outer face is flush with the platform's rim) block the sides: a rim cell made by
 * conservative rasterisation projects exactly onto the edge, where the take-off column finds the
 * floor (closed test) and the curtain starts on the railing's face; so the blocked variants go
 * down the stairs. */
static void ledge_set_check(world *W, const ledge_set *L, bool gate, const char *what)
{
    static const char *var[] = {"open", "railing", "lip", "slab"};
    double H = L->H, y0 = L->y0;
    for (int i = 0; i < 4; i++) {
        double x0 = L->x0[i], x = x0 + L->width / 2;
        bool blocked = gate && (i == 1 || i == 3);
        nm_route_result r;
        plan(W, x, y0 + 5, x, y0 - 3, &r);
        cr_assert(r.ok, "%s, %g m %s ledge down: %s", what, H, var[i], r.error);
        cr_expect_eq(r.self_check_failures, 0, "%s: %s", what, r.self_check_msg);
        bool front = false;
        for (uint32_t k = 0; k < r.ndrops; k++) front |= front_drop(W, &r.drops[k], x0, L->width, y0);
        if (blocked) {
            cr_expect_not(front, "%s, %g m %s: blocked, no drop over the front edge", what, H, var[i]);
            /* nor over a side railing (flush with the platform's edge): down the stairs, round the
             * platform (a side drop would be about 19 m) */
            cr_expect_gt(r.length, 20 * W->scale, "%s, %g m %s: down the stairs (%.1f px)", what, H, var[i],
                         r.length);
        } else {
            cr_expect_lt(r.length, 9 * W->scale, "%s, %g m %s: drops directly (%.1f px)", what, H, var[i], r.length);
            cr_expect(front, "%s, %g m %s: the front-edge drop is in the drop table (%u drops)", what, H, var[i],
                      r.ndrops);
            double down = r.length;
            nm_route_result_free(&r);
            /* one way: the reverse leg fails or goes round by the stairs */
            plan(W, x, y0 - 3, x, y0 + 5, &r);
            if (r.ok)
                cr_expect_gt(r.length, down + 10 * W->scale, "%s, %g m %s up: by the stairs (%.1f vs %.1f px)", what,
                             H, var[i], r.length, down);
        }
        nm_route_result_free(&r);
    }
}

static void ledge_row(world *W, double H, double y0, bool gate, const char *what)
{
    ledge_set L = {{10, 30, 50, 70}, 10, y0, H};
    ledge_set_check(W, &L, gate, what);
}

Test(ledges, fall_gate_with_and_without_the_occluder, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char dir[256], sub[400];
    lu_mkdtemp(dir, sizeof dir);
    bake_three("resources/scenes/ledges/scene.json", dir);
    world W;
    nm_gate_stats st;
    /* no occluder: every drop allowed, the gate is never asked */
    snprintf(sub, sizeof sub, "%s/plain", dir);
    open_world(&W, sub, "ledges");
    ledge_row(&W, 4, 20, false, "no occluder");
    ledge_row(&W, 8, 60, false, "no occluder");
    nm_window_gate_stats(&W.e, &st);
    cr_expect_eq(st.asked, 0, "no occluder file: empty gate (%llu asked)", (unsigned long long)st.asked);
    close_world(&W);
    /* the same pack with the occluder next to it: the runtime gate alone blocks railing and slab */
    snprintf(sub, sizeof sub, "%s/gated", dir);
    open_world(&W, sub, "ledges");
    ledge_row(&W, 4, 20, true, "occluder at run time");
    ledge_row(&W, 8, 60, true, "occluder at run time");
    nm_window_gate_stats(&W.e, &st);
    cr_expect_gt(st.asked, 0);
    cr_expect_gt(st.blocked, 0);
    cr_log_info("gate: %llu asked, %llu cache hits, %llu blocked, %llu projections (%llu cached)",
                (unsigned long long)st.asked, (unsigned long long)st.hits, (unsigned long long)st.blocked,
                (unsigned long long)st.projections, (unsigned long long)st.projection_hits);
    close_world(&W);
    /* the normal bake (drops gated in the grid bake too) */
    snprintf(sub, sizeof sub, "%s/full", dir);
    open_world(&W, sub, "ledges");
    ledge_row(&W, 4, 20, true, "normal bake");
    ledge_row(&W, 8, 60, true, "normal bake");
    close_world(&W);
    lu_rmdir(dir);
}

Test(ledges, regions_plan_through_the_ledge_hop, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char dir[256], sub[400];
    lu_mkdtemp(dir, sizeof dir);
    bake_three("resources/scenes/regions/scene.json", dir);
    static const char *which[] = {"full", "gated", "plain"};
    for (int k = 0; k < 3; k++) {
        world W;
        snprintf(sub, sizeof sub, "%s/%s", dir, which[k]);
        open_world(&W, sub, "regions");
        nm_route_result r;
        plan(&W, 47, 15, 10, 15, &r);
        cr_assert(r.ok, "%s: plateau -> ground over the ledge: %s (%s)", which[k], r.error, r.tier_notes);
        cr_expect_gt(r.ndrops, 0, "%s: the ledge drop is in the drop table", which[k]);
        if (r.ndrops > 0) {
            const nm_route_drop *d = &r.drops[0];
            cr_expect_lt(d->index, r.npoints);
            cr_expect_lt(d->height, 1.0, "%s: lands on the low ground (%.2f m)", which[k], d->height);
            cr_expect_gt(d->from_x, 29 * W.scale, "%s: takes off from the plateau side", which[k]);
        }
        cr_expect_lt(r.length, 45 * W.scale, "%s: about straight (%.1f px)", which[k], r.length);
        nm_route_result_free(&r);
        /* one way: ground -> plateau has no route */
        plan(&W, 10, 15, 47, 15, &r);
        cr_expect_not(r.ok, "%s: ground -> plateau must fail", which[k]);
        nm_route_result_free(&r);
        close_world(&W);
    }
    lu_rmdir(dir);
}

/* The demo town: its four 4 m ledges (x 20, 45, 70, 95, 12 m wide, front edge y 150) with the
 * occluder; without it the railing ledge drops straight over its front edge. (A bigger world:
 * each plan takes seconds, so only these.) */
Test(ledges, demo_town_with_and_without_the_occluder, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char dir[256], sub[400];
    lu_mkdtemp(dir, sizeof dir);
    bake_three("resources/demo/scene.json", dir);
    const ledge_set L = {{20, 45, 70, 95}, 12, 150, 4};
    world W;
    nm_gate_stats st;
    snprintf(sub, sizeof sub, "%s/plain", dir);
    open_world(&W, sub, "demo");
    nm_route_result r;
    double x0 = L.x0[1], x = x0 + L.width / 2;
    plan(&W, x, L.y0 + 6, x, L.y0 - 4, &r);
    cr_assert(r.ok, "demo, no occluder, railing ledge: %s", r.error);
    bool front = false;
    for (uint32_t k = 0; k < r.ndrops; k++) front |= front_drop(&W, &r.drops[k], x0, L.width, L.y0);
    cr_expect(front, "demo, no occluder: the railing ledge drops over its front edge (%.1f px)", r.length);
    nm_route_result_free(&r);
    nm_window_gate_stats(&W.e, &st);
    cr_expect_eq(st.asked, 0, "no occluder: the gate is empty");
    close_world(&W);
    snprintf(sub, sizeof sub, "%s/gated", dir);
    open_world(&W, sub, "demo");
    ledge_set_check(&W, &L, true, "demo, occluder");
    nm_window_gate_stats(&W.e, &st);
    cr_expect_gt(st.asked, 0, "the gate was asked");
    cr_log_info("demo gate: %llu asked, %llu cache hits (%.0f %%), %llu blocked", (unsigned long long)st.asked,
                (unsigned long long)st.hits, st.asked ? 100.0 * (double)st.hits / (double)st.asked : 0.0,
                (unsigned long long)st.blocked);
    close_world(&W);
    lu_rmdir(dir);
}
