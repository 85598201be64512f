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

static bool is_heightfield(const nm_bake_config *c, const char *name)
{
    for (uint32_t i = 0; i < c->heightfield_count; i++)
        if (nm_bake_pattern_match(c->heightfields[i], name)) return true;
    return false;
}

/* ---- terrain height blocks from the heightfield groups ---------------------------------------
 * A triangle of a heightfield group is a terrain candidate when it is half of an axis-aligned
 * square cell cut along the block format's diagonal p01–p10 ((x0, z0+s) to (x0+s, z0)) and faces
 * up: the lower half {p00, p01, p10} or the upper half {p10, p01, p11}. The most common cell size
 * is the spacing, the smallest corner of those cells the origin; a cell on that lattice with both
 * halves present, whose corner heights agree with every other such cell, becomes a terrain cell
 * and its two triangles leave the group's soup. The other cells are holes; triangles that are not
 * terrain cells (cuts, seams, other sizes) stay triangles. */
typedef struct hf_cand {
    double x0, z0, s;
    double y[4];     /* p00, p10, p01, p11 (NaN when this half lacks it) */
    int64_t i, j;    /* lattice cell, once the spacing is known */
    uint32_t slot;   /* soup slot of the triangle */
    uint8_t half;    /* 0 lower, 1 upper */
} hf_cand;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_cand(const void *a, const void *b)
{
    const hf_cand *p = a, *q = b;
    if (p->j != q->j) return p->j < q->j ? -1 : 1;
    if (p->i != q->i) return p->i < q->i ? -1 : 1;
    if (p->half != q->half) return p->half < q->half ? -1 : 1;
    return (p->slot > q->slot) - (p->slot < q->slot);
}

/* One candidate from soup triangle v (occluder order). False when it is not a cell half. */
static bool cell_half(const float *v, uint32_t slot, hf_cand *c)
{
    double xs[3], zs[3], xmin = v[0], xmax = v[0], zmin = v[2], zmax = v[2];
    for (int k = 0; k < 3; k++) {
        xs[k] = v[3 * k];
        zs[k] = v[3 * k + 2];
        xmin = fmin(xmin, xs[k]), xmax = fmax(xmax, xs[k]);
        zmin = fmin(zmin, zs[k]), zmax = fmax(zmax, zs[k]);
    }
    double sx = xmax - xmin, sz = zmax - zmin;
    if (!(sx > 0) || fabs(sx - sz) > 1e-6 * sx) return false;
    /* up: y of (v1−v0)×(v2−v0) negative (the occluder's 朝上) */
    double ny = (zs[1] - zs[0]) * (xs[2] - xs[0]) - (xs[1] - xs[0]) * (zs[2] - zs[0]);
    if (!(ny < 0)) return false;
    int seen = 0;
    memset(c, 0, sizeof *c);
    for (int q = 0; q < 4; q++) c->y[q] = NAN;
    for (int k = 0; k < 3; k++) {
        int cx = xs[k] == xmin ? 0 : xs[k] == xmax ? 1 : -1, cz = zs[k] == zmin ? 0 : zs[k] == zmax ? 1 : -1;
        if (cx < 0 || cz < 0) return false;
        int q = cz * 2 + cx;
        if (seen & (1 << q)) return false;
        seen |= 1 << q;
        c->y[q] = v[3 * k + 1];
    }
    if (seen == 0x7) c->half = 0;       /* p00 p10 p01 */
    else if (seen == 0xE) c->half = 1;  /* p10 p01 p11 */
    else return false;
    c->x0 = xmin;
    c->z0 = zmin;
    c->s = sx;
    c->slot = slot;
    return true;
}

typedef struct hf_out {
    nm_occ_terrain_in tr;
    float *h;
    uint8_t *holes;
    bool any;
} hf_out;

/* Finds the terrain cells among slots[0..n) of the soup; marks their slots in `gone`. */
static int heightfield_cells(const float *xyz, const uint32_t *slots, size_t n, uint8_t *gone,
                             hf_out *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    hf_cand *c = nm_malloc(n * sizeof *c + 1);
    double *sizes = nm_malloc(n * sizeof *sizes + 1);
    int rc = NM_OK;
    if (!c || !sizes) { rc = nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory (heightfield)"); goto done; }
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (cell_half(xyz + 9 * (size_t)slots[k], slots[k], &c[m])) sizes[m] = c[m].s, m++;
    if (m < 2) goto done;
    /* the spacing: the most common size (the smallest of equally common ones) */
    qsort(sizes, m, sizeof *sizes, cmp_double);
    double s = sizes[0];
    size_t best = 0;
    for (size_t a = 0, b; a < m; a = b) {
        for (b = a; b < m && sizes[b] == sizes[a]; b++) {}
        if (b - a > best) best = b - a, s = sizes[a];
    }
    double x0 = INFINITY, z0 = INFINITY;
    for (size_t k = 0; k < m; k++)
        if (c[k].s == s) x0 = fmin(x0, c[k].x0), z0 = fmin(z0, c[k].z0);
    /* lattice cells; the others dropped from the list */
    size_t keep = 0;
    int64_t i1 = 0, j1 = 0;
    for (size_t k = 0; k < m; k++) {
        if (c[k].s != s) continue;
        double fi = (c[k].x0 - x0) / s, fj = (c[k].z0 - z0) / s;
        double ri = nearbyint(fi), rj = nearbyint(fj);
        if (fabs(fi - ri) > 1e-6 || fabs(fj - rj) > 1e-6 || ri > 1e7 || rj > 1e7) continue;
        c[k].i = (int64_t)ri;
        c[k].j = (int64_t)rj;
        if (c[k].i > i1) i1 = c[k].i;
        if (c[k].j > j1) j1 = c[k].j;
        c[keep++] = c[k];
    }
    size_t nx = (size_t)i1 + 2, nz = (size_t)j1 + 2;
    if (keep < 2 || nx * nz > ((size_t)1 << 24)) goto done;
    qsort(c, keep, sizeof *c, cmp_cand);
    out->h = nm_calloc(nx * nz, sizeof *out->h);
    out->holes = nm_malloc((nx - 1) * (nz - 1));
    uint8_t *set = nm_calloc(nx * nz, 1); /* 1 = height known, 2 = heights disagree */
    if (!out->h || !out->holes || !set) {
        nm_free(set);
        rc = nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory (heightfield)");
        goto done;
    }
    memset(out->holes, 1, (nx - 1) * (nz - 1));
    /* complete cells: a lower half followed by an upper half of the same cell, agreeing on p01, p10 */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k + 1 < keep; k++) {
            hf_cand *lo = &c[k], *up = &c[k + 1];
            if (lo->half != 0 || up->half != 1 || lo->i != up->i || lo->j != up->j) continue;
            if (lo->y[1] != up->y[1] || lo->y[2] != up->y[2]) continue;
            double y[4] = {lo->y[0], lo->y[1], lo->y[2], up->y[3]};
            size_t at[4] = {(size_t)lo->j * nx + (size_t)lo->i, (size_t)lo->j * nx + (size_t)lo->i + 1,
                            ((size_t)lo->j + 1) * nx + (size_t)lo->i, ((size_t)lo->j + 1) * nx + (size_t)lo->i + 1};
            if (pass == 0) {
                for (int q = 0; q < 4; q++) {
                    if (!set[at[q]]) set[at[q]] = 1, out->h[at[q]] = (float)y[q];
                    else if (out->h[at[q]] != (float)y[q]) set[at[q]] = 2;
                }
            } else {
                bool ok = true;
                for (int q = 0; q < 4; q++) ok = ok && set[at[q]] == 1;
                if (!ok) continue;
                out->holes[(size_t)lo->j * (nx - 1) + (size_t)lo->i] = 0;
                gone[lo->slot] = gone[up->slot] = 1;
                out->any = true;
            }
        }
    nm_free(set);
    out->tr.x0 = x0;
    out->tr.z0 = z0;
    out->tr.spacing = s;
    out->tr.nx = (uint32_t)nx;
    out->tr.nz = (uint32_t)nz;
    out->tr.heights = out->h;
    out->tr.holes = out->holes;
done:
    if (!out->any) {
        nm_free(out->h);
        nm_free(out->holes);
        memset(out, 0, sizeof *out);
    }
    nm_free(c);
    nm_free(sizes);
    return rc;
}

int nm_bake_occluder(const nm_obj *obj, const nm_bake_config *cfg, double scale, nm_buf *out,
                     nm_error *err)
{
    if (scale == 0) scale = 1.0;
    int rc = NM_OK;
    uint32_t ng = obj->group_count, nzn = cfg->zone_count;
    nm_occ_zone_in *zones = nm_calloc(nzn + 1, sizeof *zones);
    nm_occ_group *groups = nm_calloc((size_t)nzn * ng + 1, sizeof *groups);
    uint32_t *per_group = nm_calloc((size_t)ng + 1, sizeof *per_group);
    uint32_t *first = nm_calloc((size_t)ng + 2, sizeof *first);
    float *xyz = nm_malloc((size_t)obj->tri_count * 9 * sizeof *xyz + 4);
    uint32_t *tri = nm_malloc((size_t)obj->tri_count * 3 * sizeof *tri + 4);
    hf_out *hf = nm_calloc(nzn + 1, sizeof *hf);
    float **zxyz = nm_calloc(nzn + 1, sizeof *zxyz); /* per zone with terrain: its compacted soup */
    uint32_t **ztri = nm_calloc(nzn + 1, sizeof *ztri);
    uint32_t *slots = NULL;
    uint8_t *gone = NULL;
    if (!zones || !groups || !per_group || !first || !xyz || !tri || !hf || !zxyz || !ztri) {
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
    for (uint32_t z = 0; z < nzn && rc == NM_OK; z++) {
        nm_occ_zone_in *Z = &zones[z];
        Z->name = cfg->zones[z].name;
        Z->groups = &groups[(size_t)z * ng];
        const float *sx = xyz;
        const uint32_t *st = tri;
        if (cfg->heightfield_count) {
            /* the zone's heightfield triangles: terrain cells leave the soup, kept in OBJ order */
            if (!slots) {
                slots = nm_malloc((size_t)obj->tri_count * sizeof *slots + 4);
                gone = nm_malloc((size_t)obj->tri_count + 1);
                if (!slots || !gone) { rc = nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory"); break; }
            }
            memset(gone, 0, (size_t)obj->tri_count + 1);
            size_t n = 0;
            for (uint32_t g = 0; g < ng; g++)
                if (is_heightfield(cfg, obj->groups[g]) && group_in_zone(cfg, z, obj->groups[g]))
                    for (uint32_t k = first[g]; k < first[g + 1]; k++) slots[n++] = k;
            if (n) rc = heightfield_cells(xyz, slots, n, gone, &hf[z], err);
            if (rc != NM_OK) break;
            if (hf[z].any) {
                Z->terrain = &hf[z].tr;
                zxyz[z] = nm_malloc((size_t)obj->tri_count * 9 * sizeof *xyz + 4);
                ztri[z] = nm_malloc((size_t)obj->tri_count * 3 * sizeof *tri + 4);
                if (!zxyz[z] || !ztri[z]) { rc = nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory"); break; }
                sx = zxyz[z];
                st = ztri[z];
            }
        }
        uint32_t at = 0;
        for (uint32_t g = 0; g < ng; g++) {
            if (first[g + 1] == first[g] || !group_in_zone(cfg, z, obj->groups[g])) continue;
            uint32_t from = first[g], count = first[g + 1] - first[g];
            if (hf[z].any) {
                /* compact the group's remaining triangles into this zone's soup */
                from = at;
                count = 0;
                for (uint32_t k = first[g]; k < first[g + 1]; k++) {
                    if (gone[k]) continue;
                    memcpy(zxyz[z] + 9 * (size_t)at, xyz + 9 * (size_t)k, 9 * sizeof *xyz);
                    for (int q = 0; q < 3; q++) ztri[z][3 * (size_t)at + q] = 3 * count + (uint32_t)q;
                    at++;
                    count++;
                }
                if (!count) continue;
            }
            nm_occ_group *G = &groups[(size_t)z * ng + Z->group_count++];
            G->xyz = sx + 9 * (size_t)from;
            G->vertex_count = 3 * count;
            G->tri = st + 3 * (size_t)from;
            G->triangle_count = count;
        }
    }
    if (rc == NM_OK) rc = nm_occ_encode(zones, nzn, out, err);
    if (rc != NM_OK) nm_error_prefix(err, "occluder");
done:
    for (uint32_t z = 0; hf && z < nzn; z++) {
        nm_free(hf[z].h);
        nm_free(hf[z].holes);
        if (zxyz) nm_free(zxyz[z]);
        if (ztri) nm_free(ztri[z]);
    }
    nm_free(zones); nm_free(groups); nm_free(per_group); nm_free(first); nm_free(xyz); nm_free(tri);
    nm_free(hf); nm_free(zxyz); nm_free(ztri); nm_free(slots); nm_free(gone);
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

/* The grid's thin-wall test: a body from lo (the caller's: kBumpUp, what the grid walks over, or
 * kFallClimb) to kFallHeight less one Recast cell height at the head (as the route audit's) above
 * h, across the segment between the two cell centres, crosses the collision geometry. */
static bool gap_gate(void *ctx, double u0, double v0, double u1, double v1, double h, double lo)
{
    const gate_ctx *g = ctx;
    double a[3] = {(u0 - g->t[1]) / g->t[0], h, (g->t[3] - v0) / g->t[2]};
    double b[3] = {(u1 - g->t[1]) / g->t[0], h, (g->t[3] - v1) / g->t[2]};
    return nm_occ_curtain_crossed(g->scene, a, b, h + lo, h + NM_kFallHeight - 0.1);
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

/* Seconds per bake step of one zone and the process's peak memory at its end (the bake's
 * progress calls name the step just started; the rasteriser's per-band calls repeat its name),
 * printed in the zone's progress line. */
#define STEP_MAX 16
typedef struct step_times {
    const char *name[STEP_MAX];
    double start[STEP_MAX], peak[STEP_MAX];
    int n;
} step_times;

static void step_mark(void *ctx, const char *step, double frac)
{
    (void)frac;
    step_times *st = ctx;
    if (st->n && strcmp(st->name[st->n - 1], step) == 0) return;
    if (st->n == STEP_MAX) return;
    st->name[st->n] = step;
    st->peak[st->n] = peak_mb();
    st->start[st->n++] = now_s();
}

static void step_line(const step_times *st, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i + 1 < st->n && at < cap; i++) {
        int k = snprintf(buf + at, cap - at, "%s%s %.2f s %.0f MB", i ? ", " : "", st->name[i],
                         st->start[i + 1] - st->start[i], st->peak[i + 1]);
        if (k < 0) break;
        at += (size_t)k;
    }
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
        step_times st = {.n = 0};
        nm_bake_grid_opts go = {.workers = workers, .drop_blocked = gate_ok ? drop_gate : NULL,
                                .drop_ctx = &g, .gap_blocked = gate_ok ? gap_gate : NULL,
                                .progress = step_mark, .progress_ctx = &st};
        if (rc == NM_OK) rc = nm_bake_grid_zone_bake(zc, &go, &Z[n], err);
        nm_occ_free(scene);
        nm_zone_clean_free(zc);
        if (rc != NM_OK) break;
        double dt = now_s() - t0;
        char line[1024], steps[768];
        step_line(&st, steps, sizeof steps);
        snprintf(line, sizeof line, "grid '%s': %llu cells, %zu records, %u regions, %.2f s, %.3g cells/s, peak %.0f MB (%s)",
                 Z[n].name, (unsigned long long)Z[n].stats.cells, Z[n].rec_count, Z[n].global_regions, dt,
                 dt > 0 ? (double)Z[n].stats.cells / dt : 0.0, peak_mb(), steps);
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
