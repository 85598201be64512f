/* plugin_soak.c — open / plan x N / close through dlopen, for valgrind and ThreadSanitizer runs
 * (Criterion's forked runner does not start under TSan; tools/test.sh runs this under TSan):
 *   plugin_soak PLUGIN.so PACK ZONE[,ZONE...] N
 * Every engine first plans six legs alone; then two threads per zone plan N legs each on the
 * zone's engine (alternating struct and JSON), all at the same time (the two of one engine take
 * turns on its lock, the zones run in parallel), and every answer must equal the one planned
 * alone (length and every point bit for bit). Engines of one pack must share one
 * copy of the grid bytes and one parsed sidecar, and nothing may be left after the last close.
 * Exits 0 when all of that holds. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "navmesh_plugin.h"

#define MAX_ZONES 8
#define NLEGS 6

static const nm_plugin_api *g_api;
static int g_n;

typedef struct answer {
    int ok;
    double length;
    uint32_t n;
    uint64_t sum; /* FNV-1a over the points' bytes */
} answer;

typedef struct job {
    nm_plugin_engine *e;
    answer alone[2][NLEGS]; /* struct, JSON */
    int bad[2];             /* per thread */
} job;

typedef struct worker {
    job *j;
    int k;
} worker;

static void leg(int k, double *sx, double *sy, double *gx, double *gy)
{
    *sx = 2 + k;
    *sy = 2 + (k % 3);
    *gx = 26 - (k % 4);
    *gy = 27 - (k % 2);
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Leg k through the struct API (json = 0) or as JSON text: its length and a checksum of its
 * points (the values, or their text). */
static answer plan(nm_plugin_engine *e, int k, int json)
{
    answer a = {0, -1, 0, 0};
    double sx, sy, gx, gy;
    leg(k, &sx, &sy, &gx, &gy);
    if (json) {
        char req[200];
        snprintf(req, sizeof req, "{\"start\": [%.17g, %.17g], \"goal\": [%.17g, %.17g]}", sx, sy, gx, gy);
        char *s = g_api->plan_json(e, req, NULL, NULL);
        const char *l = s ? strstr(s, "\"length\":") : NULL;
        const char *p = s ? strstr(s, "\"points\":") : NULL;
        const char *end = p ? strstr(p, "]]") : NULL;
        if (s && strstr(s, "\"ok\":true") && l && p && end) {
            a.ok = 1;
            a.length = strtod(l + 9, NULL);
            a.sum = fnv(p, (size_t)(end - p), 0xcbf29ce484222325ull);
        }
        g_api->string_free(s);
        return a;
    }
    nm_plugin_request q;
    g_api->request_init(&q, sx, sy, gx, gy);
    nm_plugin_result *r = NULL;
    if (g_api->plan(e, &q, &r) == NM_PLUGIN_OK && r->ok) {
        a.ok = 1;
        a.length = r->length;
        a.n = r->points.n;
        a.sum = fnv(r->points.xy, sizeof(double) * 2 * r->points.n, 0xcbf29ce484222325ull);
    }
    g_api->result_free(r);
    return a;
}

static void *run(void *p)
{
    worker *w = p;
    job *j = w->j;
    for (int i = 0; i < g_n; i++) {
        int k = (i + 3 * w->k) % NLEGS, json = ((i / NLEGS) + w->k) % 2;
        answer a = plan(j->e, k, json);
        const answer *ref = &j->alone[json][k];
        if (!a.ok || a.length != ref->length || a.n != ref->n || a.sum != ref->sum) j->bad[w->k]++;
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
    if (!h) {
        fprintf(stderr, "plugin_soak: %s\n", dlerror());
        return 2;
    }
    nm_plugin_get_fn get = NULL;
    *(void **)(&get) = dlsym(h, "nm_plugin_get");
    g_api = get ? get(NM_PLUGIN_ABI_VERSION) : NULL;
    if (!g_api) return 2;
    g_n = atoi(argv[4]);
    char zones[512];
    snprintf(zones, sizeof zones, "%s", argv[3]);
    static job jobs[MAX_ZONES];
    worker w[2 * MAX_ZONES];
    pthread_t t[2 * MAX_ZONES];
    int nz = 0, bad = 0;
    for (char *z = strtok(zones, ","); z && nz < MAX_ZONES; z = strtok(NULL, ",")) {
        memset(&jobs[nz], 0, sizeof jobs[nz]);
        jobs[nz].e = g_api->open(argv[2], z, NULL);
        if (!jobs[nz].e) {
            fprintf(stderr, "%s\n", g_api->last_error());
            return 2;
        }
        for (int json = 0; json < 2; json++)
            for (int k = 0; k < NLEGS; k++) {
                jobs[nz].alone[json][k] = plan(jobs[nz].e, k, json);
                if (!jobs[nz].alone[json][k].ok) {
                    fprintf(stderr, "plugin_soak: zone %s leg %d: no route\n", z, k);
                    bad++;
                }
            }
        nz++;
    }
    /* one pack: one copy of the grid bytes and of the parsed sidecar for every zone */
    nm_plugin_shared_info first, si;
    g_api->shared_info(jobs[0].e, &first);
    for (int i = 1; i < nz; i++) {
        g_api->shared_info(jobs[i].e, &si);
        if (si.grid_bytes != first.grid_bytes || si.fields != first.fields || !si.fields) {
            fprintf(stderr, "plugin_soak: engine %d does not share the pack's grid bytes / sidecar\n", i);
            bad++;
        }
    }
    int nt = 0;
    for (int i = 0; i < 2 * nz; i++) {
        w[i].j = &jobs[i / 2];
        w[i].k = i % 2;
        if (pthread_create(&t[i], NULL, run, &w[i]) != 0) break;
        nt++;
    }
    if (nt < 2 * nz) bad++;
    for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < nz; i++) bad += jobs[i].bad[0] + jobs[i].bad[1];
    for (int i = 0; i < nz; i++) g_api->close(jobs[i].e);
    g_api->shared_info(NULL, &si);
    if (si.live_engines || si.live_grids || si.live_fields) {
        fprintf(stderr, "plugin_soak: %u engines, %u grids, %u sidecars left after the last close\n",
                si.live_engines, si.live_grids, si.live_fields);
        bad++;
    }
    if (!getenv("NM_SOAK_KEEP_SO")) dlclose(h); /* kept: valgrind then names the plugin's frames */
    printf("plugin_soak: %d zones x 2 threads x %d legs, %d failed, grid bytes shared by %u engines\n",
           nz, g_n, bad, first.grid_holders);
    return bad ? 1 : 0;
}
