/* test_plugin_threads.c — engines of two zones (the two_zones scene) planning in two threads at
 * once: every answer equals the one planned alone, and both engines of one pack stay independent
 * (each serialises its own calls; a shared pack's bytes are only read). Engines on one pack share
 * one copy of the BGRD bytes and one parsed sidecar, freed with the last holder (引擎装载). A host
 * thread that planned may outlive the plugin's dlclose. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_testlib.h"

static char g_dir[256], g_pack[512];

static void bake(void)
{
    const char *src = getenv("NM_SOURCE_ROOT"), *sg = getenv("NM_SCENEGEN"), *nb = getenv("NM_NAVBAKE");
    cr_assert(src && sg && nb, "run through meson test");
    snprintf(g_dir, sizeof g_dir, "/tmp/nm_plugin_threads_XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' '%s/resources/scenes/two_zones/scene.json' --out '%s' >/dev/null && "
             "'%s' --obj '%s/level.obj' --zone '%s/zone.json' --out '%s' --walkable-as-is --quiet",
             sg, src, g_dir, nb, g_dir, g_dir, g_dir);
    cr_assert_eq(system(cmd), 0, "bake failed: %s", cmd);
    snprintf(g_pack, sizeof g_pack, "%s/base.nav.gz", g_dir);
}

static void unbake(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) {
    }
}

#define NLEGS 3
#define ROUNDS 3
static const double kLegs[2][NLEGS][4] = {
    {{2, 2, 28, 28}, {2, 28, 28, 2}, {5, 15, 25, 15}},    /* west: round the hut */
    {{2, 2, 28, 28}, {2, 20, 28, 20}, {3, 27, 27, 3}},    /* east: the ground at 2 m */
};

typedef struct job {
    nm_plugin_engine *e;
    int zone;
    char *answers[ROUNDS][NLEGS];
    int failed;
} job;

static char *plan_text(nm_plugin_engine *e, const double *l)
{
    char req[256];
    snprintf(req, sizeof req, "{\"start\": [%g, %g], \"goal\": [%g, %g]}", l[0], l[1], l[2], l[3]);
    char *s = pt_api()->plan_json(e, req, NULL, NULL);
    char *t = s ? pt_strip_times(s) : NULL;
    pt_api()->string_free(s);
    return t;
}

static void *worker(void *p)
{
    job *j = p;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < NLEGS; i++) j->answers[r][i] = plan_text(j->e, kLegs[j->zone][i]);
    return NULL;
}

Test(plugin_threads, two_zones_plan_in_parallel_with_the_same_answers, .init = bake, .fini = unbake,
     .timeout = 500)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e[2];
    const char *zones[2] = {"west", "east"};
    for (int z = 0; z < 2; z++) {
        e[z] = api->open(g_pack, zones[z], NULL);
        cr_assert_not_null(e[z], "%s", api->last_error());
    }
    cr_assert_neq(e[0], e[1], "one engine per zone");
    /* alone first */
    char *alone[2][NLEGS];
    for (int z = 0; z < 2; z++)
        for (int i = 0; i < NLEGS; i++) {
            alone[z][i] = plan_text(e[z], kLegs[z][i]);
            cr_assert_not_null(alone[z][i]);
            cr_assert(strstr(alone[z][i], "\"ok\":true"), "%s leg %d: %.300s", zones[z], i, alone[z][i]);
        }
    /* then both zones at once, plus a second thread on each engine (serialised by its lock) */
    job jobs[4];
    pthread_t t[4];
    memset(jobs, 0, sizeof jobs);
    for (int k = 0; k < 4; k++) {
        jobs[k].e = e[k % 2];
        jobs[k].zone = k % 2;
        cr_assert_eq(pthread_create(&t[k], NULL, worker, &jobs[k]), 0);
    }
    for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < ROUNDS; r++)
            for (int i = 0; i < NLEGS; i++) {
                cr_assert_not_null(jobs[k].answers[r][i]);
                cr_assert_str_eq(jobs[k].answers[r][i], alone[k % 2][i], "thread %d round %d leg %d", k, r, i);
                free(jobs[k].answers[r][i]);
            }
    for (int z = 0; z < 2; z++)
        for (int i = 0; i < NLEGS; i++) free(alone[z][i]);
    api->close(e[0]);
    api->close(e[1]);
}

/* Every leg of zone z on engine e, each answer malloc'd. */
static void plan_all(nm_plugin_engine *e, int z, char *out[NLEGS])
{
    for (int i = 0; i < NLEGS; i++) {
        out[i] = plan_text(e, kLegs[z][i]);
        cr_assert_not_null(out[i]);
        cr_assert(strstr(out[i], "\"ok\":true"), "zone %d leg %d: %.300s", z, i, out[i]);
    }
}

static nm_plugin_shared_info info_of(nm_plugin_engine *e)
{
    nm_plugin_shared_info si;
    cr_assert_eq(pt_api()->shared_info(e, &si), NM_PLUGIN_OK, "%s", pt_api()->last_error());
    return si;
}

Test(plugin_threads, engines_on_one_pack_share_grid_bytes_and_sidecar, .init = bake, .fini = unbake,
     .timeout = 500)
{
    const nm_plugin_api *api = pt_api();
    const char *zones[2] = {"west", "east"};
    /* unshared: each zone's engine alone, opened and closed before the other */
    char *alone[2][NLEGS];
    for (int z = 0; z < 2; z++) {
        nm_plugin_engine *e = api->open(g_pack, zones[z], NULL);
        cr_assert_not_null(e, "%s", api->last_error());
        nm_plugin_shared_info si = info_of(e);
        cr_assert_not_null(si.grid_bytes);
        cr_assert_not_null(si.fields, "the sidecar is in the cache");
        cr_assert_eq(si.grid_holders, 1);
        cr_assert_eq(si.fields_holders, 1);
        cr_assert_eq(si.live_grids, 1);
        cr_assert_eq(si.live_fields, 1);
        plan_all(e, z, alone[z]);
        api->close(e);
        si = info_of(NULL);
        cr_assert_eq(si.live_engines + si.live_grids + si.live_fields, 0, "freed with the last holder");
    }

    /* both zones at once: one copy of each */
    nm_plugin_engine *e[2];
    for (int z = 0; z < 2; z++) {
        e[z] = api->open(g_pack, zones[z], NULL);
        cr_assert_not_null(e[z], "%s", api->last_error());
    }
    nm_plugin_shared_info a = info_of(e[0]), b = info_of(e[1]);
    cr_assert_eq(a.grid_bytes, b.grid_bytes, "one copy of the BGRD bytes");
    cr_assert_eq(a.grid_size, b.grid_size);
    cr_assert_eq(a.fields, b.fields, "one parsed sidecar");
    cr_assert_not_null(a.fields);
    cr_assert_eq(b.grid_holders, 2);
    cr_assert_eq(b.fields_holders, 2);
    cr_assert_eq(b.live_engines, 2);
    cr_assert_eq(b.live_grids, 1);
    cr_assert_eq(b.live_fields, 1);
    /* a second open of (pack, zone) is the same engine, not another holder */
    nm_plugin_engine *again = api->open(g_pack, zones[0], NULL);
    cr_assert_eq(again, e[0]);
    cr_assert_eq(info_of(again).grid_holders, 2);
    api->close(again);

    /* another pack is not affected: its own bytes and sidecar */
    nm_plugin_engine *demo = api->open(pt_demo_pack(), "demo", NULL);
    cr_assert_not_null(demo, "%s", api->last_error());
    nm_plugin_shared_info d = info_of(demo);
    cr_assert_neq(d.grid_bytes, a.grid_bytes);
    cr_assert_neq(d.fields, a.fields);
    cr_assert_eq(d.grid_holders, 1);
    cr_assert_eq(d.live_grids, 2);
    cr_assert_eq(d.live_fields, 2);
    api->close(demo);
    cr_assert_eq(info_of(NULL).live_grids, 1);

    /* the shared engines plan at once, in two threads, with the unshared answers */
    job jobs[2];
    pthread_t t[2];
    memset(jobs, 0, sizeof jobs);
    for (int k = 0; k < 2; k++) {
        jobs[k].e = e[k];
        jobs[k].zone = k;
        cr_assert_eq(pthread_create(&t[k], NULL, worker, &jobs[k]), 0);
    }
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < ROUNDS; r++)
            for (int i = 0; i < NLEGS; i++) {
                cr_assert_not_null(jobs[k].answers[r][i]);
                cr_assert_str_eq(jobs[k].answers[r][i], alone[k][i], "%s round %d leg %d", zones[k], r, i);
                free(jobs[k].answers[r][i]);
            }

    /* the first close leaves the bytes to the other holder; the last frees them */
    api->close(e[0]);
    b = info_of(e[1]);
    cr_assert_eq(b.grid_bytes, a.grid_bytes);
    cr_assert_eq(b.grid_holders, 1);
    cr_assert_eq(b.fields_holders, 1);
    cr_assert_eq(b.live_engines, 1);
    char *later[NLEGS];
    plan_all(e[1], 1, later);
    for (int i = 0; i < NLEGS; i++) {
        cr_assert_str_eq(later[i], alone[1][i], "east leg %d after west closed", i);
        free(later[i]);
    }
    api->close(e[1]);
    nm_plugin_shared_info none = info_of(NULL);
    cr_assert_eq(none.live_engines, 0);
    cr_assert_eq(none.live_grids, 0);
    cr_assert_eq(none.live_fields, 0);
    for (int z = 0; z < 2; z++)
        for (int i = 0; i < NLEGS; i++) free(alone[z][i]);
}

/* A host thread plans (its decoders are kept per thread), the host unloads the plugin, then the
 * thread exits: its exit must not call into the unloaded code (it crashed with SIGSEGV). */
typedef struct unload_job {
    const nm_plugin_api *api;
    sem_t planned, unloaded;
    int rc;
} unload_job;

static void *plan_then_wait(void *p)
{
    unload_job *j = p;
    nm_plugin_engine *e = j->api->open(pt_demo_pack(), "demo", NULL);
    j->rc = NM_PLUGIN_ERR_STATE;
    if (e) {
        nm_plugin_request q;
        j->api->request_init(&q, 130, 90, 190, 75);
        nm_plugin_result *r = NULL;
        j->rc = j->api->plan(e, &q, &r);
        j->api->result_free(r);
        j->api->close(e);
    }
    sem_post(&j->planned);
    sem_wait(&j->unloaded);
    return NULL;
}

Test(plugin_threads, a_thread_that_planned_exits_after_the_plugin_is_unloaded)
{
    const char *path = getenv("NM_PLUGIN");
    cr_assert_not_null(path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h, "%s", dlerror());
    nm_plugin_get_fn get = NULL;
    *(void **)(&get) = dlsym(h, "nm_plugin_get");
    cr_assert_not_null(get);
    unload_job j = {.api = get(NM_PLUGIN_ABI_VERSION)};
    cr_assert_not_null(j.api);
    sem_init(&j.planned, 0, 0);
    sem_init(&j.unloaded, 0, 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, plan_then_wait, &j), 0);
    sem_wait(&j.planned);
    cr_assert_eq(j.rc, NM_PLUGIN_OK);
    cr_assert_eq(dlclose(h), 0);
    cr_assert_null(dlopen(path, RTLD_NOW | RTLD_NOLOAD), "the plugin is really unloaded");
    sem_post(&j.unloaded);
    cr_assert_eq(pthread_join(t, NULL), 0);
}
