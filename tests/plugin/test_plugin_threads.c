/* test_plugin_threads.c — engines of two zones (the two_zones scene) planning in two threads at
 * once: every answer equals the one planned alone, and both engines of one pack stay independent
 * (each serialises its own calls; a shared pack's bytes are only read). */
#include <criterion/criterion.h>
#include <pthread.h>
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
