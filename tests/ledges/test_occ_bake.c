/* test_occ_bake.c — navbake's occluder output (base.occluder.gz, OCLS v1): every scene, the demo
 * town and the real levels round-trip (each placed triangle is an OBJ triangle × scale, in order,
 * with two corners swapped, so a face whose OBJ winding looks up is 朝上), and on the ledge scene
 * the faces a vertical line crosses have the right facing and dropBlocked answers per ledge. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "obj.h"
#include "occluder.h"
#include "pack/pack.h"
#include "ledges_util.h"

typedef struct tri_list {
    double *v;   /* 9 per triangle */
    bool *up;
    size_t n, cap;
} tri_list;

static void collect(void *ctx, const double v[9], bool up)
{
    tri_list *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * 9 * sizeof *l->v);
        l->up = realloc(l->up, l->cap * sizeof *l->up);
        cr_assert(l->v && l->up);
    }
    memcpy(&l->v[9 * l->n], v, 9 * sizeof *v);
    l->up[l->n++] = up;
}

/* The OBJ triangle t's corners in occluder order (0, 2, 1), times scale. */
static void obj_corners(const nm_obj *o, uint32_t t, double scale, double out[9])
{
    static const int order[3] = {0, 2, 1};
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++)
            out[3 * k + a] = (double)o->pos[3 * (size_t)o->tris[3 * (size_t)t + order[k]] + a] * scale;
}

static bool same(const double a[9], const double b[9], double tol)
{
    for (int i = 0; i < 9; i++)
        if (fabs(a[i] - b[i]) > tol) return false;
    return true;
}

/* The same three corners in any order (a terrain cell's triangle has its own corner order). */
static bool same_corners(const double a[9], const double b[9], double tol)
{
    int used = 0;
    for (int i = 0; i < 3; i++) {
        int hit = -1;
        for (int k = 0; k < 3 && hit < 0; k++)
            if (!(used & (1 << k)) && fabs(a[3 * i] - b[3 * k]) <= tol && fabs(a[3 * i + 1] - b[3 * k + 1]) <= tol &&
                fabs(a[3 * i + 2] - b[3 * k + 2]) <= tol)
                hit = k;
        if (hit < 0) return false;
        used |= 1 << hit;
    }
    return true;
}

typedef struct cand {
    double cx;
    uint32_t t;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    double x = ((const cand *)a)->cx, y = ((const cand *)b)->cx;
    return (x > y) - (x < y);
}

/* Checks the occluder next to pack against the OBJ: per zone, its triangles are an ordered
 * subsequence of the OBJ's triangles taken group by group; one zone: all of them. */
static size_t check_round_trip(const char *what, const char *obj_path, double scale, const char *dir)
{
    char pack_path[1200], occ_path[1200];
    snprintf(pack_path, sizeof pack_path, "%s/base.nav.gz", dir);
    snprintf(occ_path, sizeof occ_path, "%s/base.occluder.gz", dir);
    cr_assert(lu_exists(occ_path), "%s: no %s", what, occ_path);
    nm_obj o;
    nm_error err = {0};
    cr_assert_eq(nm_obj_load(obj_path, &o, &err), NM_OK, "%s", err.msg);
    /* the OBJ triangles grouped by group, in group order */
    uint32_t *order = malloc((o.tri_count + 1) * sizeof *order);
    size_t no = 0;
    for (uint32_t g = 0; g < o.group_count; g++)
        for (uint32_t t = 0; t < o.tri_count; t++)
            if (o.tri_group[t] == g) order[no++] = t;
    cr_assert_eq(no, o.tri_count);
    nm_pack p;
    nm_pack_load_opts lo = {0};
    cr_assert_eq(nm_pack_load(pack_path, &lo, &p, &err), NM_OK, "%s", err.msg);
    size_t total = 0, zones = 0, checked_up = 0, terrain_total = 0;
    for (uint32_t zi = 0; zi < p.zone_count; zi++) {
        if (p.zones[zi].flags & NM_ZONE_FLAG_TIER) continue;
        nm_occ_scene *sc = NULL;
        cr_assert_eq(nm_occ_load(occ_path, p.zones[zi].name, &sc, &err), NM_OK, "%s: %s", what, err.msg);
        if (!sc) continue;
        zones++;
        tri_list l = {0};
        nm_occ_foreach_triangle(sc, collect, &l);
        nm_occ_info inf;
        nm_occ_scene_info(sc, &inf);
        cr_assert_eq(inf.triangles, l.n);
        size_t at = 0, placed = l.n - inf.terrain_triangles;
        bool *used = calloc(no + 1, 1);
        for (size_t i = 0; i < placed; i++) {
            double want[9];
            bool found = false;
            while (at < no && !found) {
                used[at] = true;
                obj_corners(&o, order[at++], scale, want);
                double ext = 0;
                for (int a = 0; a < 9; a++) ext = fmax(ext, fabs(want[a]));
                found = same(&l.v[9 * i], want, 1e-3 * fmax(1.0, ext / 256.0));
            }
            cr_assert(found, "%s zone %s: occluder triangle %zu is not the next OBJ triangle (corners 0,2,1 x %g): "
                      "(%g %g %g) (%g %g %g) (%g %g %g)", what, p.zones[zi].name, i, scale, l.v[9 * i], l.v[9 * i + 1],
                      l.v[9 * i + 2], l.v[9 * i + 3], l.v[9 * i + 4], l.v[9 * i + 5], l.v[9 * i + 6], l.v[9 * i + 7],
                      l.v[9 * i + 8]);
            /* facing: the OBJ's counter-clockwise-from-above face is 朝上 */
            const double *a = want, *b = want + 3, *c = want + 6;
            double ny = (c[2] - a[2]) * (b[0] - a[0]) - (c[0] - a[0]) * (b[2] - a[2]);
            double area = hypot(b[0] - a[0], b[2] - a[2]) * hypot(c[0] - a[0], c[2] - a[2]);
            if (fabs(ny) > 1e-3 * area && area > 1e-8) {
                /* (v1-v0)x(v2-v0) in occluder order: y < 0 is up */
                double y = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2]);
                cr_assert_eq(l.up[i], y < 0, "%s: triangle %zu facing", what, i);
                checked_up++;
            }
        }
        /* terrain height blocks: each of their triangles is one of the OBJ triangles the instances
         * skipped (its corners in another order), facing up like it */
        if (inf.terrain_triangles) {
            for (size_t k = 0; k < no; k++) used[k] = false;
            for (size_t i = 0, k = 0; i < placed; i++) { /* redo the ordered match to mark the used */
                double want[9];
                while (k < no) {
                    obj_corners(&o, order[k], scale, want);
                    double ext = 0;
                    for (int a = 0; a < 9; a++) ext = fmax(ext, fabs(want[a]));
                    bool hit = same(&l.v[9 * i], want, 1e-3 * fmax(1.0, ext / 256.0));
                    used[k++] = hit;
                    if (hit) break;
                }
            }
            cand *cs = malloc((no + 1) * sizeof *cs);
            size_t nc = 0;
            for (size_t k = 0; k < no; k++) {
                if (used[k]) continue;
                double want[9];
                obj_corners(&o, order[k], scale, want);
                cs[nc].cx = (want[0] + want[3] + want[6]) / 3;
                cs[nc++].t = (uint32_t)k;
            }
            qsort(cs, nc, sizeof *cs, cmp_cand);
            bool *taken = calloc(nc + 1, 1);
            for (size_t i = placed; i < l.n; i++) {
                const double *v = &l.v[9 * i];
                double cx = (v[0] + v[3] + v[6]) / 3;
                size_t lo = 0, hi = nc;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (cs[mid].cx < cx - 1e-2) lo = mid + 1;
                    else hi = mid;
                }
                bool found = false;
                for (size_t k = lo; k < nc && cs[k].cx <= cx + 1e-2 && !found; k++) {
                    if (taken[k]) continue;
                    double want[9];
                    obj_corners(&o, order[cs[k].t], scale, want);
                    if (same_corners(v, want, 1e-3)) found = taken[k] = true;
                }
                cr_assert(found, "%s zone %s: terrain triangle %zu (%g %g %g) is no OBJ triangle", what,
                          p.zones[zi].name, i - placed, v[0], v[1], v[2]);
                cr_assert(l.up[i], "%s: terrain faces up", what);
            }
            free(cs);
            free(taken);
            terrain_total += inf.terrain_triangles;
        }
        free(used);
        total += l.n;
        free(l.v);
        free(l.up);
        nm_occ_free(sc);
    }
    cr_assert_gt(zones, 0, "%s: the occluder has no zone", what);
    cr_assert_gt(checked_up, 0, "%s: no face with a facing", what);
    if (zones == 1) cr_assert_eq(total, (size_t)o.tri_count, "%s: every OBJ triangle is in the occluder", what);
    nm_pack_free(&p);
    free(order);
    nm_obj_free(&o);
    return terrain_total;
}

Test(occ_bake, every_scene_and_the_demo_round_trip, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char sroot[1200];
    snprintf(sroot, sizeof sroot, "%s/resources/scenes", lu_env("NM_SOURCE_ROOT", "."));
    struct dirent **list = NULL;
    int n = scandir(sroot, &list, NULL, alphasort);
    cr_assert_gt(n, 0);
    int done = 0;
    size_t terrain = 0;
    for (int i = 0; i <= n; i++) {
        char rel[600], scene[1800], dir[256], obj[600], zone[600], out[600];
        if (i < n) {
            snprintf(rel, sizeof rel, "resources/scenes/%s/scene.json", list[i]->d_name);
            snprintf(scene, sizeof scene, "%s/%s", lu_env("NM_SOURCE_ROOT", "."), rel);
            bool ok = list[i]->d_name[0] != '.' && lu_exists(scene);
            free(list[i]);
            if (!ok) continue;
        } else {
            snprintf(rel, sizeof rel, "resources/demo/scene.json");
        }
        lu_mkdtemp(dir, sizeof dir);
        lu_scenegen(rel, dir);
        snprintf(obj, sizeof obj, "%s/src/level.obj", dir);
        snprintf(zone, sizeof zone, "%s/src/zone.json", dir);
        snprintf(out, sizeof out, "%s/out", dir);
        lu_navbake(obj, zone, out, "--walkable-as-is");
        size_t tt = check_round_trip(rel, obj, 1.0, out);
        /* scenegen lists its terrain groups as "heightfields": their whole square cells (not cut by
         * platforms, walls or water) are height blocks; the ledge scene's open ground has many */
        if (strstr(rel, "/ledges/") || strstr(rel, "demo/")) cr_expect_gt(tt, 0, "%s: no terrain blocks", rel);
        terrain += tt;
        lu_rmdir(dir);
        done++;
    }
    free(list);
    cr_assert_gt(done, 5);
    cr_assert_gt(terrain, 0);
}

Test(occ_bake, real_levels_round_trip, .timeout = 300)
{
    const char *data = getenv("NM_SHARED_DATA");
    char root[1200];
    snprintf(root, sizeof root, "%s/levels", data ? data : "");
    if (!data || !lu_exists(root)) cr_skip_test("NM_SHARED_DATA is absent");
    if (!lu_tools_present()) cr_skip_test("navbake not built");
    struct dirent **list = NULL;
    int n = scandir(root, &list, NULL, alphasort);
    int done = 0;
    for (int i = 0; i < n; i++) {
        char sub[1600], obj[2400] = "", dir[256], out[600];
        snprintf(sub, sizeof sub, "%s/%s", root, list[i]->d_name);
        struct dirent **files = NULL;
        int m = list[i]->d_name[0] == '.' ? -1 : scandir(sub, &files, NULL, alphasort);
        for (int k = 0; k < m; k++) {
            size_t l = strlen(files[k]->d_name);
            if (!obj[0] && l > 4 && strcmp(files[k]->d_name + l - 4, ".obj") == 0)
                snprintf(obj, sizeof obj, "%s/%s", sub, files[k]->d_name);
            free(files[k]);
        }
        free(files);
        if (obj[0]) {
            bool sauer = strncmp(list[i]->d_name, "sauer-", 6) == 0;
            lu_mkdtemp(dir, sizeof dir);
            snprintf(out, sizeof out, "%s/out", dir);
            lu_navbake(obj, NULL, out, sauer ? "--scale 0.12" : "");
            check_round_trip(list[i]->d_name, obj, sauer ? 0.12 : 1.0, out);
            lu_rmdir(dir);
            done++;
        }
        free(list[i]);
    }
    free(list);
    cr_assert_gt(done, 0, "no level in %s", root);
}

/* The faces a vertical line crosses at plan (x, y) m, top down: up / down letters. */
static void column(const nm_occ_scene *s, double x, double y, char *out, size_t cap)
{
    double p0[3] = {x, 20, -y}, p1[3] = {x, -1, -y};
    nm_occ_hit hits[32];
    size_t n = nm_occ_segment_hits(s, p0, p1, hits, 32);
    if (n > 32) n = 32;
    /* sort by t (top first); ties keep scene order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && hits[j].t < hits[j - 1].t; j--) {
            nm_occ_hit h = hits[j];
            hits[j] = hits[j - 1];
            hits[j - 1] = h;
        }
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) out[k++] = hits[i].up ? 'U' : 'D';
    out[k] = '\0';
}

Test(occ_bake, ledges_faces_and_drops)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char dir[256], obj[600], zone[600], out[600], occ[700];
    lu_mkdtemp(dir, sizeof dir);
    lu_scenegen("resources/scenes/ledges/scene.json", dir);
    snprintf(obj, sizeof obj, "%s/src/level.obj", dir);
    snprintf(zone, sizeof zone, "%s/src/zone.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    lu_navbake(obj, zone, out, "--walkable-as-is");
    snprintf(occ, sizeof occ, "%s/base.occluder.gz", out);
    nm_occ_scene *s = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_occ_load(occ, "ledges", &s, &err), NM_OK, "%s", err.msg);
    cr_assert_not_null(s);
    char col[40];
    /* open ground: the topmost face crossed is the ground, facing up */
    column(s, 5.3, 50.7, col, sizeof col);
    cr_assert(col[0] == 'U', "open ground column '%s'", col);
    /* on a platform: its top faces up */
    column(s, 15.3, 25.7, col, sizeof col);
    cr_assert(col[0] == 'U', "platform column '%s'", col);
    /* under the slab: slab top up, slab underside down, then the ground up */
    column(s, 73.3, 17.1, col, sizeof col);
    cr_assert_str_eq(col, "UDU", "slab column (slab top, its underside, the ground)");
    /* dropBlocked over each front edge, on the baked file */
    static const char *var[] = {"open", "railing", "lip", "slab"};
    static const bool blocked[] = {false, true, false, true};
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 4; i++) {
            double H = row ? 8 : 4, y0 = row ? 60 : 20, xc = 15 + 20 * i;
            double take[3] = {xc, H, -(y0 + 0.4)}, land[3] = {xc, 0, -(y0 - 0.4)};
            cr_assert_eq(nm_occ_drop_blocked(s, take, land), blocked[i], "%g m ledge, %s", H, var[i]);
        }
    nm_occ_free(s);
    lu_rmdir(dir);
}
