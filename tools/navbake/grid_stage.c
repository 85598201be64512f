/* grid_stage.c — navbake's stages after the main pack: the occluder (every OBJ group of each zone
 * as a world-space triangle group), the grid (each geometry zone through navmesh/bake, drops
 * gated by the zone's occluder scene), and writing the three files: base.nav.gz with the BGRD
 * section, base.fields.nav.gz bound to that file's build_hash and FNV, base.occluder.gz. */
#include "bake.h"
#include "grid_stage.h"

#include "bake/bake.h"
#include "occluder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static bool group_in_zone(const nm_bake_config *c, uint32_t z, const char *name)
{
    bool claimed = false;
    for (uint32_t k = 0; k < c->zone_count; k++) {
        if (!c->zones[k].groups_given) continue;
        for (uint32_t i = 0; i < c->zones[k].group_count; i++)
            if (nm_bake_pattern_match(c->zones[k].groups[i], name)) {
                if (k == z) return true;
                claimed = true;
            }
    }
    return !claimed && !c->zones[z].groups_given;
}

int nm_bake_occluder(const nm_obj *obj, const nm_bake_config *cfg, double scale, nm_buf *out,
                     nm_error *err)
{
    if (scale == 0) scale = 1.0;
    int rc = NM_OK;
    uint32_t ng = obj->group_count;
    nm_occ_zone_in *zones = nm_calloc(cfg->zone_count + 1, sizeof *zones);
    nm_occ_group *groups = nm_calloc((size_t)cfg->zone_count * ng + 1, sizeof *groups);
    uint32_t *per_group = nm_calloc((size_t)ng + 1, sizeof *per_group);
    uint32_t *first = nm_calloc((size_t)ng + 2, sizeof *first);
    float *xyz = nm_malloc((size_t)obj->tri_count * 9 * sizeof *xyz + 4);
    uint32_t *tri = nm_malloc((size_t)obj->tri_count * 3 * sizeof *tri + 4);
    if (!zones || !groups || !per_group || !first || !xyz || !tri) {
        rc = nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory");
        goto done;
    }
    /* triangles grouped by OBJ group, as independent corners (a soup per group). Winding: the
     * OBJ is counter-clockwise seen from outside, the occluder's 朝上 (a Unity-made format) is a
     * NEGATIVE y of (v1-v0)x(v2-v0), so corners 1 and 2 are swapped here, once, for the writer. */
    static const int kSwap[3] = {0, 2, 1};
    for (uint32_t t = 0; t < obj->tri_count; t++) first[obj->tri_group[t] + 1]++;
    for (uint32_t g = 0; g < ng; g++) first[g + 1] += first[g];
    for (uint32_t t = 0; t < obj->tri_count; t++) {
        uint32_t g = obj->tri_group[t];
        uint32_t slot = first[g] + per_group[g]++;
        for (int k = 0; k < 3; k++) {
            const float *p = &obj->pos[3 * (size_t)obj->tris[3 * (size_t)t + kSwap[k]]];
            for (int a = 0; a < 3; a++) xyz[9 * (size_t)slot + 3 * k + a] = (float)(p[a] * scale);
            tri[3 * (size_t)slot + k] = 3 * (slot - first[g]) + (uint32_t)k;
        }
    }
    for (uint32_t z = 0; z < cfg->zone_count; z++) {
        nm_occ_zone_in *Z = &zones[z];
        Z->name = cfg->zones[z].name;
        Z->groups = &groups[(size_t)z * ng];
        for (uint32_t g = 0; g < ng; g++) {
            if (first[g + 1] == first[g] || !group_in_zone(cfg, z, obj->groups[g])) continue;
            nm_occ_group *G = &groups[(size_t)z * ng + Z->group_count++];
            G->xyz = xyz + 9 * (size_t)first[g];
            G->vertex_count = 3 * (first[g + 1] - first[g]);
            G->tri = tri + 3 * (size_t)first[g];
            G->triangle_count = first[g + 1] - first[g];
        }
    }
    rc = nm_occ_encode(zones, cfg->zone_count, out, err);
    if (rc != NM_OK) nm_error_prefix(err, "occluder");
done:
    nm_free(zones); nm_free(groups); nm_free(per_group); nm_free(first); nm_free(xyz); nm_free(tri);
    return rc;
}

/* ---- the fall gate: dropBlocked on the zone's occluder scene ------------------------------- */
typedef struct gate_ctx {
    const nm_occ_scene *scene;
    double t[4]; /* u = sx*x + tx, v = ty - sy*z */
} gate_ctx;

static bool drop_gate(void *ctx, double u0, double v0, double h0, double u1, double v1, double h1)
{
    const gate_ctx *g = ctx;
    double take[3] = {(u0 - g->t[1]) / g->t[0], h0, (g->t[3] - v0) / g->t[2]};
    double land[3] = {(u1 - g->t[1]) / g->t[0], h1, (g->t[3] - v1) / g->t[2]};
    return nm_occ_drop_blocked(g->scene, take, land);
}

/* Peak resident memory so far, MB (Linux /proc; 0 elsewhere): shown in the progress lines. */
static double peak_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0.0;
    char line[256];
    double kb = 0.0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = strtod(line + 6, NULL);
    fclose(f);
    return kb / 1024.0;
}

static void report(const nm_bake_opts *o, const char *line, double frac)
{
    if (o->progress) o->progress(o->progress_ctx, line, frac);
}

int navbake_grid_stage(const nm_bake_opts *opts, const nm_pack *loaded, const uint8_t *occ,
                       size_t occ_size, int workers, nm_bake_grid_zone **zones_out,
                       uint32_t *count, nm_error *err)
{
    nm_bake_grid_zone *Z = nm_calloc((size_t)loaded->zone_count + 1, sizeof *Z);
    if (!Z) return nm_fail(err, NM_ERR_NOMEM, "grid: out of memory");
    uint32_t n = 0;
    int rc = NM_OK;
    for (uint32_t zi = 0; zi < loaded->zone_count && rc == NM_OK; zi++) {
        const nm_zone *zone = &loaded->zones[zi];
        if (zone->flags & NM_ZONE_FLAG_TIER) continue;
        double t0 = now_s();
        nm_zone_clean *zc = NULL;
        rc = nm_zone_clean_build_at(loaded, zi, workers, &zc, err);
        if (rc == NM_ERR_STATE) { rc = NM_OK; continue; } /* nothing walkable: no grid */
        if (rc != NM_OK) break;
        nm_occ_scene *scene = NULL;
        if (occ) rc = nm_occ_load_bytes(occ, occ_size, zone->name, "base.occluder.gz", &scene, err);
        gate_ctx g = {scene, {zone->t[0], zone->t[1], zone->t[2], zone->t[3]}};
        bool gate_ok = scene && zone->t[0] != 0 && zone->t[2] != 0;
        nm_bake_grid_opts go = {.workers = workers, .drop_blocked = gate_ok ? drop_gate : NULL,
                                .drop_ctx = &g};
        if (rc == NM_OK) rc = nm_bake_grid_zone_bake(zc, &go, &Z[n], err);
        nm_occ_free(scene);
        nm_zone_clean_free(zc);
        if (rc != NM_OK) break;
        double dt = now_s() - t0;
        char line[256];
        snprintf(line, sizeof line, "grid '%s': %llu cells, %zu records, %u regions, %.2f s, %.3g cells/s, peak %.0f MB",
                 Z[n].name, (unsigned long long)Z[n].stats.cells, Z[n].rec_count, Z[n].global_regions, dt,
                 dt > 0 ? (double)Z[n].stats.cells / dt : 0.0, peak_mb());
        report(opts, line, 1.0);
        n++;
    }
    if (rc != NM_OK) {
        for (uint32_t i = 0; i < n; i++) nm_bake_grid_zone_free(&Z[i]);
        nm_free(Z);
        return rc;
    }
    *zones_out = Z;
    *count = n;
    return NM_OK;
}
