/* test_plugin_abi.c — a C host that dlopens the built plugin and plans legs on the demo town: the
 * versioned entry, the export list, struct and JSON answers identical, the RUN waypoint rule, a
 * ledge drop, an authored no-go zone, malformed requests answered with clear errors, regions_near,
 * warm, shared engines, and cancellation from another thread. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin_testlib.h"

static char g_nogo[1024];

static nm_plugin_engine *open_demo(void)
{
    const char *src = getenv("NM_SOURCE_ROOT");
    cr_assert_not_null(src);
    snprintf(g_nogo, sizeof g_nogo, "%s/resources/routes/demo_nogo.json", src);
    nm_plugin_engine *e = pt_api()->open(pt_demo_pack(), "demo", g_nogo);
    cr_assert_not_null(e, "open: %s", pt_api()->last_error());
    return e;
}

typedef struct leg { double sx, sy, gx, gy, start_floor; } leg;
static const leg kLegs[] = {
    {130, 90, 190, 75, NM_PLUGIN_NONE},   /* across the low bridge */
    {130, 90, 97, 37, NM_PLUGIN_NONE},    /* up the 0.5 m stairs onto the plaza */
    {19.5, 116, 19.5, 106, 4.0},          /* off the open ledge: a drop */
    {250, 290, 250, 325, NM_PLUGIN_NONE}, /* round the authored no-go polygon */
};

static char *request_json(const leg *l)
{
    char *s = malloc(512);
    cr_assert_not_null(s);
    if (l->start_floor > NM_PLUGIN_VALID_MIN)
        snprintf(s, 512, "{\"zone\": \"demo\", \"start\": [%.17g, %.17g], \"goal\": [%.17g, %.17g], \"start_floor_y\": %.17g}",
                 l->sx, l->sy, l->gx, l->gy, l->start_floor);
    else
        snprintf(s, 512, "{\"start\": [%.17g, %.17g], \"goal\": [%.17g, %.17g]}", l->sx, l->sy, l->gx, l->gy);
    return s;
}

static nm_plugin_result *plan_leg(nm_plugin_engine *e, const leg *l)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_request q;
    api->request_init(&q, l->sx, l->sy, l->gx, l->gy);
    q.start_floor_y = l->start_floor;
    nm_plugin_result *r = NULL;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "%s", api->last_error());
    cr_assert_not_null(r);
    return r;
}

Test(plugin_abi, entry_speaks_only_its_version)
{
    const nm_plugin_api *api = pt_api();
    cr_assert_eq(api->abi_version, NM_PLUGIN_ABI_VERSION);
    cr_assert_eq(api->struct_size, sizeof(nm_plugin_api));
    void *h = dlopen(getenv("NM_PLUGIN"), RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h);
    nm_plugin_get_fn get = NULL;
    *(void **)(&get) = dlsym(h, "nm_plugin_get");
    cr_assert_not_null(get);
    cr_assert_null(get(0));
    cr_assert_null(get(NM_PLUGIN_ABI_VERSION + 1));
    cr_assert_eq(get(NM_PLUGIN_ABI_VERSION), api);
    /* internal symbols are not reachable */
    cr_assert_null(dlsym(h, "nm_pack_load"));
    cr_assert_null(dlsym(h, "nm_route_plan"));
    dlclose(h);
}

Test(plugin_abi, only_the_entry_symbol_is_exported)
{
    char cmd[1200], *out = NULL;
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s' 2>/dev/null", getenv("NM_PLUGIN"));
    int rc = pt_run(cmd, &out);
    if (rc == 127) cr_skip_test("nm is not installed");
    cr_assert_eq(rc, 0, "nm failed");
    int functions = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char addr[64], type[8], name[512];
        if (sscanf(line, "%63s %7s %511s", addr, type, name) != 3) continue;
        if (strcmp(type, "A") == 0) continue; /* the version node */
        cr_assert(strncmp(name, "nm_plugin_get", 13) == 0, "unexpected export: %s", line);
        functions++;
    }
    cr_assert_eq(functions, 1);
    free(out);
}

Test(plugin_abi, struct_and_json_answers_are_identical)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    for (size_t i = 0; i < sizeof kLegs / sizeof *kLegs; i++) {
        nm_plugin_result *r = plan_leg(e, &kLegs[i]);
        cr_assert(r->ok, "leg %zu: %s", i, r->error);
        char *a = api->result_json(r);
        char *req = request_json(&kLegs[i]);
        char *b = api->plan_json(e, req, NULL, NULL);
        cr_assert_not_null(a);
        cr_assert_not_null(b);
        char *sa = pt_strip_times(a), *sb = pt_strip_times(b);
        cr_assert_str_eq(sa, sb, "leg %zu differs", i);
        /* the JSON carries the points of the struct */
        cJSON *o = cJSON_Parse(b);
        cJSON *pts = cJSON_GetObjectItem(o, "points");
        cr_assert_eq((uint32_t)cJSON_GetArraySize(pts), r->points.n);
        cr_assert_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(pts, 0), 0)->valuedouble, r->points.xy[0]);
        cJSON_Delete(o);
        free(sa);
        free(sb);
        free(req);
        api->string_free(a);
        api->string_free(b);
        api->result_free(r);
    }
    api->close(e);
}

Test(plugin_abi, run_waypoints_follow_the_host_rule)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    for (size_t i = 0; i < sizeof kLegs / sizeof *kLegs; i++) {
        nm_plugin_result *r = plan_leg(e, &kLegs[i]);
        cr_assert(r->ok, "%s", r->error);
        cr_assert_geq(r->points.n, 2);
        cr_assert_eq(r->points.xy[0], kLegs[i].sx);
        cr_assert_eq(r->points.xy[2 * (r->points.n - 1)], kLegs[i].gx);
        cr_assert_gt(r->n_run, 0);
        if (r->n_waypoints) {
            cr_assert_eq(r->n_run, r->n_waypoints);
            cr_assert_eq(r->waypoints[r->n_waypoints - 1], r->points.n - 1, "waypoints end at the goal");
        }
        for (uint32_t k = 0; k < r->n_run; k++) {
            uint32_t idx = r->n_waypoints ? r->waypoints[k] : k + 1;
            cr_assert_neq(idx, 0, "the start is not a waypoint");
            cr_assert_eq(r->run[k].x, r->points.xy[2 * idx]);
            cr_assert_eq(r->run[k].y, r->points.xy[2 * idx + 1]);
            cr_assert_eq(r->run[k].clearance, r->clearance[idx]);
            int is_drop = 0;
            for (uint32_t d = 0; d < r->n_drops; d++)
                if (r->drops[d].index == idx) {
                    is_drop = 1;
                    cr_assert_eq(r->run[k].target_deck_y, r->drops[d].height);
                    cr_assert(r->run[k].has_drop_from);
                    cr_assert_eq(r->run[k].drop_from_x, r->drops[d].from_x);
                }
            int last = idx == r->points.n - 1;
            cr_assert_eq(r->run[k].strict, last || is_drop, "leg %zu run %u strict", i, k);
        }
        api->result_free(r);
    }
    api->close(e);
}

Test(plugin_abi, the_open_ledge_gives_a_drop_landing)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    nm_plugin_result *r = plan_leg(e, &kLegs[2]);
    cr_assert(r->ok, "%s", r->error);
    cr_assert_geq(r->n_drops, 1, "no drop off the 4 m ledge");
    cr_assert_lt(fabs(r->drops[0].height - 0.0), 0.6, "lands on the ground");
    int strict_drops = 0;
    for (uint32_t k = 0; k < r->n_run; k++) strict_drops += r->run[k].has_drop_from && r->run[k].strict;
    cr_assert_geq(strict_drops, 1);
    api->result_free(r);
    api->close(e);
}

Test(plugin_abi, a_goal_in_an_authored_no_go_zone_is_terminal)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    leg l = {250, 290, 250, 305, NM_PLUGIN_NONE};
    nm_plugin_result *r = plan_leg(e, &l);
    cr_assert_not(r->ok);
    cr_assert(r->no_go);
    cr_assert(strstr(r->error, "market_square_works"), "%s", r->error);
    cr_assert_str_eq(r->code, "route_no_go", "the failure code a host acts on");
    char *js = api->result_json(r);
    cr_assert(js && strstr(js, "\"code\":\"route_no_go\""), "%s", js ? js : "(null)");
    api->string_free(js);
    api->result_free(r);
    /* the leg round it keeps out of the polygon [238, 262] x [300, 312] */
    r = plan_leg(e, &kLegs[3]);
    cr_assert(r->ok, "%s", r->error);
    for (uint32_t i = 0; i < r->points.n; i++) {
        double x = r->points.xy[2 * i], y = r->points.xy[2 * i + 1];
        cr_assert_not(x > 238.5 && x < 261.5 && y > 300.5 && y < 311.5, "point %u (%g, %g) in the no-go zone", i, x, y);
    }
    api->result_free(r);
    api->close(e);
}

Test(plugin_abi, a_runtime_disc_is_avoided_and_checked)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    nm_plugin_request q;
    api->request_init(&q, 210, 125, 210, 145);
    nm_plugin_disc d = {210, 135, 4};
    q.no_go_discs = &d;
    q.n_no_go_discs = 1;
    nm_plugin_result *r = NULL;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "%s", api->last_error());
    cr_assert(r->ok, "%s", r->error);
    for (uint32_t i = 1; i + 1 < r->points.n; i++) {
        double dx = r->points.xy[2 * i] - 210, dy = r->points.xy[2 * i + 1] - 135;
        cr_assert_geq(sqrt(dx * dx + dy * dy), 3.5, "vertex %u inside the disc", i);
    }
    api->result_free(r);
    d.radius = -1;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_ERR_ARG);
    cr_assert_null(r);
    cr_assert(strstr(api->last_error(), "radius"), "%s", api->last_error());
    api->close(e);
}

Test(plugin_abi, malformed_requests_get_clear_errors)
{
    const nm_plugin_api *api = pt_api();
    cr_assert_null(api->open(pt_demo_pack(), "no_such_zone", NULL));
    cr_assert(strstr(api->last_error(), "no_such_zone"), "%s", api->last_error());
    cr_assert_null(api->open("/nonexistent/base.nav.gz", "demo", NULL));
    cr_assert(strstr(api->last_error(), "/nonexistent"), "%s", api->last_error());
    cr_assert_null(api->open(NULL, "demo", NULL));

    nm_plugin_engine *e = open_demo();
    nm_plugin_request q;
    nm_plugin_result *r = NULL;
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        api->request_init(&q, 130, 90, 190, 75);
        q.start_x = bad[k];
        cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_ERR_ARG);
        cr_assert(strstr(api->last_error(), "start"), "%s", api->last_error());
        api->request_init(&q, 130, 90, 190, 75);
        q.goal_y = bad[k];
        cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_ERR_ARG);
        cr_assert(strstr(api->last_error(), "goal"), "%s", api->last_error());
        api->request_init(&q, 130, 90, 190, 75);
        q.goal_deck_y = bad[k] == -INFINITY ? NAN : bad[k];
        cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_ERR_ARG);
        cr_assert(strstr(api->last_error(), "goal_deck_y"), "%s", api->last_error());
    }
    api->request_init(&q, 130, 90, 190, 75);
    q.n_no_go_discs = 3;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_ERR_ARG);
    cr_assert_eq(api->plan(e, NULL, &r), NM_PLUGIN_ERR_ARG);
    cr_assert_eq(api->plan(NULL, &q, &r), NM_PLUGIN_ERR_ARG);

    static const struct { const char *json, *needle; } cases[] = {
        {"{\"start\": [1, 2]}", "goal"},
        {"{\"goal\": [1, 2]}", "start"},
        {"{\"start\": [1], \"goal\": [1, 2]}", "start"},
        {"{\"start\": \"a\", \"goal\": [1, 2]}", "start"},
        {"{\"start\": [1, 2], \"goal\": [1, 2], \"goal_deck_y\": \"x\"}", "goal_deck_y"},
        {"{\"start\": [1, 2], \"goal\": [1, 2], \"zone\": \"elsewhere\"}", "elsewhere"},
        {"{\"start\": [1, 2], \"goal\": [1, 2], \"no_go_discs\": [{\"center\": [1, 2], \"radius\": -3}]}", "radius"},
        {"{\"start\": [1, 2], \"goal\": [1, 2], \"no_go_discs\": [{\"radius\": 3}]}", "center"},
        {"{\"start\": [1, 2], \"goal\": [1, 2], \"no_go_discs\": 5}", "no_go_discs"},
        {"{\"start\": [1, 2], \"goal\": [1e999, 2]}", "goal"},
        {"[1, 2]", "object"},
        {"{\"start\": [1, 2], ", "JSON"},
        {"", "JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *s = api->plan_json(e, cases[i].json, NULL, NULL);
        cr_assert_not_null(s);
        cJSON *o = cJSON_Parse(s);
        cr_assert_not_null(o, "%s", s);
        cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")), "case %zu: %s", i, s);
        const char *err = cJSON_GetObjectItem(o, "error")->valuestring;
        cr_assert(strstr(err, cases[i].needle), "case %zu: %s lacks %s", i, err, cases[i].needle);
        const cJSON *code = cJSON_GetObjectItem(o, "code");
        cr_assert(cJSON_IsString(code) && !strcmp(code->valuestring, "bad_request"), "case %zu: %s", i, s);
        cJSON_Delete(o);
        api->string_free(s);
    }
    char *s = api->plan_json(e, NULL, NULL, NULL);
    cr_assert(strstr(s, "\"ok\":false") && strstr(s, "\"code\":\"bad_request\""), "%s", s);
    api->string_free(s);
    api->close(e);
}

Test(plugin_abi, engines_are_shared_per_pack_and_zone)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *a = open_demo();
    nm_plugin_engine *b = open_demo();
    cr_assert_eq(a, b, "one engine per (pack, zone)");
    api->close(a);
    /* b still usable after one close */
    nm_plugin_result *r = plan_leg(b, &kLegs[0]);
    cr_assert(r->ok, "%s", r->error);
    api->close(b);
    /* the result outlives the engine */
    cr_assert_gt(r->points.n, 1);
    cr_assert_eq(r->points.xy[0], kLegs[0].sx);
    api->result_free(r);
}

Test(plugin_abi, warm_and_regions_near)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    cr_assert_eq(api->warm(e), NM_PLUGIN_OK, "%s", api->last_error());
    cr_assert_eq(api->zone_floor_y(e), 0.0);
    /* ground west of the river, ground east of it, the plaza top, and far off the map */
    const double xy[] = {130, 90, 190, 75, 97, 37, 5000, 5000};
    uint32_t start[5];
    uint32_t *rids = NULL;
    cr_assert_eq(api->regions_near(e, xy, 4, start, &rids), NM_PLUGIN_OK, "%s", api->last_error());
    cr_assert_eq(start[0], 0);
    for (int i = 0; i < 3; i++) cr_assert_gt(start[i + 1], start[i], "point %d has no region", i);
    cr_assert_eq(start[4], start[3], "far away: cannot tell");
    for (int i = 0; i < 4; i++)
        for (uint32_t k = start[i] + 1; k < start[i + 1]; k++) cr_assert_lt(rids[k - 1], rids[k], "sorted, unique");
    api->ids_free(rids);
    const double nan_xy[] = {NAN, 1};
    cr_assert_eq(api->regions_near(e, nan_xy, 1, start, &rids), NM_PLUGIN_ERR_ARG);
    double sx, sy, d;
    cr_assert_eq(api->snap(e, 130.3, 90.2, NM_PLUGIN_NONE, 32, &sx, &sy, &d), NM_PLUGIN_OK, "%s", api->last_error());
    cr_assert_lt(d, 1.0);
    api->close(e);
}

/* Cancellation from another thread: the callback, on its first poll, lets the other thread raise
 * the flag and waits for it, so the stop arrives while the plan is running. */
typedef struct cancel_ctx {
    sem_t started, raised;
    atomic_int flag;
    atomic_int polls;
} cancel_ctx;

static int stop_cb(void *p)
{
    cancel_ctx *c = p;
    if (atomic_fetch_add(&c->polls, 1) == 0) {
        sem_post(&c->started);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 30;
        sem_timedwait(&c->raised, &ts);
    }
    return atomic_load(&c->flag);
}

static void *canceller(void *p)
{
    cancel_ctx *c = p;
    sem_wait(&c->started);
    atomic_store(&c->flag, 1);
    sem_post(&c->raised);
    return NULL;
}

Test(plugin_abi, cancel_from_another_thread)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = open_demo();
    for (int json = 0; json < 2; json++) {
        cancel_ctx c;
        sem_init(&c.started, 0, 0);
        sem_init(&c.raised, 0, 0);
        atomic_init(&c.flag, 0);
        atomic_init(&c.polls, 0);
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, canceller, &c), 0);
        if (json) {
            char *s = api->plan_json(e, "{\"start\": [60, 90], \"goal\": [250, 325]}", stop_cb, &c);
            cJSON *o = cJSON_Parse(s);
            cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "cancelled")), "%s", s);
            cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")));
            cJSON_Delete(o);
            api->string_free(s);
        } else {
            nm_plugin_request q;
            api->request_init(&q, 60, 90, 250, 325);
            q.should_stop = stop_cb;
            q.stop_ctx = &c;
            nm_plugin_result *r = NULL;
            cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "%s", api->last_error());
            cr_assert_not(r->ok);
            cr_assert(r->cancelled, "not cancelled: %s", r->error);
            cr_assert(strstr(r->error, "cancel"), "%s", r->error);
            api->result_free(r);
        }
        if (atomic_load(&c.polls) == 0) sem_post(&c.started); /* never polled: free the thread */
        pthread_join(t, NULL);
        cr_assert_geq(atomic_load(&c.polls), 1);
        sem_destroy(&c.started);
        sem_destroy(&c.raised);
    }
    api->close(e);
}
