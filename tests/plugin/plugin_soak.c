/* plugin_soak.c — open / plan x N / close through dlopen, for valgrind and ThreadSanitizer runs
 * (Criterion's forked runner does not start under TSan):
 *   plugin_soak PLUGIN.so PACK ZONE[,ZONE...] N
 * One thread per zone plans N legs on its own engine (alternating struct and JSON) at the same
 * time; exits 0 when every leg produced a route and every repeat of a leg gave the same points. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "navmesh_plugin.h"

#define MAX_ZONES 8

static const nm_plugin_api *g_api;
static int g_n;

typedef struct job {
    nm_plugin_engine *e;
    int bad;
} job;

static void *run(void *p)
{
    job *j = p;
    double first_len[6] = {0};
    for (int i = 0; i < g_n; i++) {
        int k = i % 6; /* six distinct legs, repeated */
        double sx = 2 + k, sy = 2 + (k % 3), gx = 26 - (k % 4), gy = 27 - (k % 2);
        double len = -1;
        if (i % 2) {
            char req[200];
            snprintf(req, sizeof req, "{\"start\": [%g, %g], \"goal\": [%g, %g]}", sx, sy, gx, gy);
            char *s = g_api->plan_json(j->e, req, NULL, NULL);
            const char *l = s ? strstr(s, "\"length\":") : NULL;
            if (s && strstr(s, "\"ok\":true") && l) len = strtod(l + 9, NULL);
            g_api->string_free(s);
        } else {
            nm_plugin_request q;
            g_api->request_init(&q, sx, sy, gx, gy);
            nm_plugin_result *r = NULL;
            if (g_api->plan(j->e, &q, &r) == NM_PLUGIN_OK && r->ok) len = r->length;
            g_api->result_free(r);
        }
        if (len < 0) j->bad++;
        else if (i < 6) first_len[k] = len;
        else if (len != first_len[k]) j->bad++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: plugin_soak PLUGIN.so PACK ZONE[,ZONE...] N\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) return 2;
    nm_plugin_get_fn get = NULL;
    *(void **)(&get) = dlsym(h, "nm_plugin_get");
    g_api = get ? get(NM_PLUGIN_ABI_VERSION) : NULL;
    if (!g_api) return 2;
    g_n = atoi(argv[4]);
    char zones[512];
    snprintf(zones, sizeof zones, "%s", argv[3]);
    job jobs[MAX_ZONES];
    pthread_t t[MAX_ZONES];
    int nz = 0;
    for (char *z = strtok(zones, ","); z && nz < MAX_ZONES; z = strtok(NULL, ",")) {
        jobs[nz].bad = 0;
        jobs[nz].e = g_api->open(argv[2], z, NULL);
        if (!jobs[nz].e) {
            fprintf(stderr, "%s\n", g_api->last_error());
            return 2;
        }
        nz++;
    }
    for (int i = 0; i < nz; i++) pthread_create(&t[i], NULL, run, &jobs[i]);
    int bad = 0;
    for (int i = 0; i < nz; i++) {
        pthread_join(t[i], NULL);
        bad += jobs[i].bad;
        g_api->close(jobs[i].e);
    }
    if (!getenv("NM_SOAK_KEEP_SO")) dlclose(h); /* kept: valgrind then names the plugin's frames */
    printf("plugin_soak: %d zones x %d legs, %d failed\n", nz, g_n, bad);
    return bad ? 1 : 0;
}
