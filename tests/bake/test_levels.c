/* test_levels.c — real levels made by others bake through Recast and come back unchanged: every
 * level under $NM_SHARED_DATA/levels (skipped without it; Cube 2 levels at --scale 0.12) and the
 * copies in resources/levels (always). The pack is baked into memory, written, loaded whole and per
 * zone, and every decoded table must equal what was written. */
#include "util.h"
#include "recast_shim.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The .obj file of a level folder (the first in name order), or NULL. */
static char *level_obj(const char *dir)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    char *found = NULL;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(list[i]->d_name);
        if (!found && l > 4 && strcmp(list[i]->d_name + l - 4, ".obj") == 0) {
            found = malloc(strlen(dir) + l + 2);
            sprintf(found, "%s/%s", dir, list[i]->d_name);
        }
        free(list[i]);
    }
    free(list);
    return found;
}

static void zone_name(const char *obj_path, char *out, size_t cap)
{
    const char *b = strrchr(obj_path, '/');
    snprintf(out, cap, "%s", b ? b + 1 : obj_path);
    char *dot = strrchr(out, '.');
    if (dot) *dot = 0;
}

/* Bakes one level, checks the invariants and the round trip (whole and zone-scoped). */
static void round_trip(const char *obj_path, double scale)
{
    nm_obj obj;
    nm_bake_config cfg;
    nm_error err = {0};
    char name[256];
    zone_name(obj_path, name, sizeof name);
    cr_assert_eq(nm_obj_load(obj_path, &obj, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bake_config_default(name, &cfg, &err), NM_OK, "%s", err.msg);
    nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .scale = scale, .workers = 2};
    nm_pack p;
    cr_assert_eq(nm_bake_main_pack(&o, &p, &err), NM_OK, "%s: %s", obj_path, err.msg);
    cr_assert_gt(p.tri_count, 0);
    cr_assert_gt(p.link_count, 0);
    cr_assert_str_eq(p.zones[0].name, name);
    expect_pack_invariants(&p);
    /* Recast's walkable polygons lie within the level's footprint (in pixels, u = 0.75 x). */
    float minx = 1e30f, maxx = -1e30f;
    for (uint32_t i = 0; i < obj.vert_count; i++) {
        float x = obj.pos[3 * i] * (float)scale;
        if (x < minx) minx = x;
        if (x > maxx) maxx = x;
    }
    for (uint32_t i = 0; i < p.vert_count; i++)
        cr_assert(p.verts[i].u >= 0.75f * minx - 1.0f && p.verts[i].u <= 0.75f * maxx + 1.0f, "%s: vertex %u u %g outside",
                  obj_path, i, p.verts[i].u);

    char *dir = tmp_dir();
    char path[600];
    snprintf(path, sizeof path, "%s/base.nav.gz", dir);
    cr_assert_eq(nm_pack_save(&p, NULL, path, &err), NM_OK, "%s", err.msg);
    nm_pack q;
    nm_pack_load_opts lo = {0};
    cr_assert_eq(nm_pack_load(path, &lo, &q, &err), NM_OK, "%s: %s", obj_path, err.msg);
    expect_same_pack(&p, &q);
    nm_pack_free(&q);

    lo.zone = name;
    cr_assert_eq(nm_pack_load(path, &lo, &q, &err), NM_OK, "%s: %s", obj_path, err.msg);
    cr_assert_eq(q.tri_count, p.tri_count);
    cr_assert_eq(q.link_count, p.link_count);
    for (uint32_t t = 0; t < q.tri_count; t++)
        for (int k = 0; k < 3; k++) {
            const nm_vertex *a = &p.verts[p.tris[t].v[k]], *b = &q.verts[q.tris[t].v[k]];
            cr_assert(a->u == b->u && a->v == b->v && a->h == b->h, "zone load: triangle %u corner %d", t, k);
            cr_assert_eq(q.tris[t].nb[k], p.tris[t].nb[k], "zone load: triangle %u neighbour %d", t, k);
        }
    nm_pack_free(&q);
    tmp_remove(dir);
    free(dir);
    nm_pack_free(&p);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
}

static void round_trip_folder(const char *levels)
{
    struct dirent **list = NULL;
    int n = scandir(levels, &list, NULL, alphasort);
    cr_assert_geq(n, 0, "cannot list %s", levels);
    int baked = 0;
    for (int i = 0; i < n; i++) {
        const char *d = list[i]->d_name;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", levels, d);
        struct stat st;
        if (d[0] != '.' && stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            char *obj = level_obj(sub);
            if (obj) {
                /* Cube 2 levels are in Cube units: 0.12 m each. */
                double scale = strncmp(d, "sauer-", 6) == 0 ? 0.12 : 1.0;
                round_trip(obj, scale);
                baked++;
                free(obj);
            }
        }
        free(list[i]);
    }
    free(list);
    cr_assert_gt(baked, 0, "no level found under %s", levels);
}

/* The path of `rel` under the shared data (../shared/data), or the test is skipped: a user's
 * clone has no ../shared, and a build without Recast cannot bake the default way. */
static void shared_path_or_skip(const char *rel, char *path, size_t cap)
{
    if (!nm_rc_available()) cr_skip_test("built without Recast");
    const char *shared = shared_data();
    if (!shared) cr_skip_test("NM_SHARED_DATA is absent");
    snprintf(path, cap, "%s/%s", shared, rel);
    struct stat st;
    if (stat(path, &st) != 0) cr_skip_test("%s is absent", path);
}

Test(levels, every_shared_level_bakes_through_recast_and_reads_back, .timeout = 240)
{
    char levels[1024];
    shared_path_or_skip("levels", levels, sizeof levels);
    round_trip_folder(levels);
}

Test(levels, bundled_levels_bake_through_recast_and_read_back, .timeout = 120)
{
    if (!nm_rc_available()) cr_skip_test("built without Recast");
    char levels[1024];
    snprintf(levels, sizeof levels, "%s/resources/levels", source_root());
    round_trip_folder(levels);
}

Test(levels, recast_bake_is_the_same_for_one_and_four_workers)
{
    if (!nm_rc_available()) cr_skip_test("built without Recast");
    char path[1024];
    snprintf(path, sizeof path, "%s/resources/levels/recast-navtest/nav_test.obj", source_root());
    nm_obj obj;
    nm_error err = {0};
    cr_assert_eq(nm_obj_load(path, &obj, &err), NM_OK, "%s", err.msg);
    /* Two zones over the same geometry, so the zones really run on different workers; the same
     * scale (the sliver split cuts to two planner cells of the zone, tools/navbake/sliver.h). */
    const char *json = "{\"zones\": [{\"name\": \"a\"}, {\"name\": \"b\", \"transform\": [0.75, 10, 0.75, 20]}]}";
    nm_bake_config cfg;
    cr_assert_eq(nm_bake_config_parse(json, strlen(json), "zone.json", "x", &cfg, &err), NM_OK, "%s", err.msg);
    nm_buf out[2] = {{0}};
    int workers[2] = {1, 4};
    for (int i = 0; i < 2; i++) {
        nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .workers = workers[i]};
        nm_pack p;
        cr_assert_eq(nm_bake_main_pack(&o, &p, &err), NM_OK, "%s", err.msg);
        cr_assert_eq(p.zones[0].tri_count, p.zones[1].tri_count, "same geometry, same mesh");
        nm_pack_write_opts w = {.workers = workers[i]};
        cr_assert_eq(nm_pack_serialize(&p, &w, &out[i], &err), NM_OK, "%s", err.msg);
        nm_pack_free(&p);
    }
    cr_assert_eq(out[0].size, out[1].size);
    cr_assert_eq(memcmp(out[0].p, out[1].p, out[0].size), 0, "bytes differ between 1 and 4 workers");
    nm_buf_free(&out[0]);
    nm_buf_free(&out[1]);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
}

Test(levels, recast_keeps_water_walkable_with_its_area)
{
    /* A ground plate and a water plate side by side at the same height: Recast makes both
     * walkable, the water with area 12 (BSRF flag 1 << 12), and keeps them adjacent. */
    const char *obj = "v 0 0 0\nv 10 0 0\nv 10 0 10\nv 0 0 10\nv 20 0 0\nv 20 0 10\n"
                      "v 4 0 4\nv 6 0 4\nv 6 0 6\nv 4 0 6\nv 4 1.5 4\nv 6 1.5 4\nv 6 1.5 6\nv 4 1.5 6\n"
                      "g ground\nf 1 4 3 2\n"
                      "g water\nf 2 3 6 5\n"
                      "g pillar\nf 7 8 12 11\nf 8 9 13 12\nf 9 10 14 13\nf 10 7 11 14\nf 11 12 13 14\n"
                      "g lip\nf 1 2 6\n";
    const char *json = "{\"areas\": {\"water\": 12}, \"obstacles\": [\"pillar\"], \"collision_only\": [\"lip\"]}";
    if (!nm_rc_available()) cr_skip_test("built without Recast");
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(obj, json, false, 1, &p, &err), NM_OK, "%s", err.msg);
    expect_pack_invariants(&p);
    uint32_t water = 0, ground = 0;
    for (uint32_t t = 0; t < p.tri_count; t++) {
        cr_assert(p.surfaces[t].area == 0 || p.surfaces[t].area == 12, "area %u", p.surfaces[t].area);
        if (p.surfaces[t].area == 12) water++;
        else ground++;
        /* Every vertex is back on the surface at height 0 (Recast alone says 0.1, its voxel top);
         * the pillar is 1.5 m tall, so neither its top (an obstacle) nor the ground under it (too
         * low) is walkable. */
        for (int k = 0; k < 3; k++) cr_assert_float_eq(p.verts[p.tris[t].v[k]].h, 0.0f, 1e-6);
    }
    cr_assert_gt(water, 0);
    cr_assert_gt(ground, 0);
    cr_assert_eq(p.zones[0].component_count, 1, "ground and water are one piece");
    /* The pillar cuts a hole: no triangle centre near the pillar centre (5, 5) -> (3.75, -3.75). */
    bool covered = false;
    for (uint32_t t = 0; t < p.tri_count && !covered; t++) {
        const nm_vertex *a = &p.verts[p.tris[t].v[0]], *b = &p.verts[p.tris[t].v[1]], *c = &p.verts[p.tris[t].v[2]];
        float u = 3.75f, v = -3.75f;
        double d1 = (b->u - a->u) * (v - a->v) - (b->v - a->v) * (u - a->u);
        double d2 = (c->u - b->u) * (v - b->v) - (c->v - b->v) * (u - b->u);
        double d3 = (a->u - c->u) * (v - c->v) - (a->v - c->v) * (u - c->u);
        covered = (d1 >= 0 && d2 >= 0 && d3 >= 0) || (d1 <= 0 && d2 <= 0 && d3 <= 0);
    }
    cr_assert(!covered, "the obstacle's footprint must not be walkable");
    nm_pack_free(&p);
}

Test(levels, recast_vertices_lie_on_the_input_surface)
{
    if (!nm_rc_available()) cr_skip_test("built without Recast");
    /* A ramp y = 0.25 x (14 degrees) with a step-free landing at its top: every vertex of the
     * walkable mesh must sit on the plane, not on Recast's 0.1 m voxel tops. */
    const char *obj = "v 0 0 0\nv 20 5 0\nv 20 5 10\nv 0 0 10\nv 30 5 0\nv 30 5 10\n"
                      "g ramp\nf 1 4 3 2\ng landing\nf 2 3 6 5\n";
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(obj, NULL, false, 1, &p, &err), NM_OK, "%s", err.msg);
    expect_pack_invariants(&p);
    cr_assert_eq(p.zones[0].component_count, 1);
    uint32_t on_ramp = 0;
    for (uint32_t i = 0; i < p.vert_count; i++) {
        double x = p.verts[i].u / 0.75;
        double want = x <= 20 ? 0.25 * x : 5.0;
        cr_assert_float_eq(p.verts[i].h, want, 2e-3, "vertex %u at x %.3f: h %.4f, surface %.4f", i, x, p.verts[i].h, want);
        on_ramp += x > 0.2 && x < 19;
    }
    cr_assert_gt(on_ramp, 0, "some vertices are on the slope itself");
    nm_pack_free(&p);
}

Test(levels, a_ramp_corner_beside_a_higher_slat_takes_the_slat_height, .timeout = 60)
{
    /* navcat-bridges' platform-ramp.005 is made of slats with 0.04-0.05 m gaps, each sloped
     * across: at the ramp's north end the west slat (x 2.04-2.14 m) is 0.86 m, the east one
     * (x 2.18-2.37 m) 0.80 m. Recast's mesh keeps the ramp from x 2.195 m (the west slat's end is
     * a ledge 0.56 m over the water, over Recast's climb) and its corner there, (2.195, 3.4426) m,
     * is on the mesh's boundary; Recast's own height there is 0.90 m (its voxel column holds the
     * west slat's edge). Snapped to the surface under the point alone it took the east slat's
     * 0.794 m, the grid cell beyond the corner got that height by Rasterize's clamp, and routes
     * climbed 0.50 m from the water onto it and then 0.56 m onto the west slat (navaudit seed 2
     * legs 20, 35, 39, 43, 44; navmesh/bake/README.md "Eighth session: the slat gap"). A boundary
     * vertex takes the separate surface beside it within one Recast cell: the west slat's 0.86 m. */
    char path[1024];
    shared_path_or_skip("levels/navcat-bridges/bridges.obj", path, sizeof path);
    nm_obj obj;
    nm_bake_config cfg;
    nm_error err = {0};
    cr_assert_eq(nm_obj_load(path, &obj, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bake_config_default("bridges", &cfg, &err), NM_OK, "%s", err.msg);
    nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .scale = 1.0, .workers = 2};
    nm_pack p;
    cr_assert_eq(nm_bake_main_pack(&o, &p, &err), NM_OK, "%s", err.msg);
    const double u = 0.75 * 2.195, v = -0.75 * 3.4426;
    int found = 0;
    for (uint32_t i = 0; i < p.vert_count; i++) {
        const nm_vertex *q = &p.verts[i];
        if (fabs(q->u - u) > 0.01 || fabs(q->v - v) > 0.01 || q->h < 0.5f) continue;
        found++;
        cr_assert_float_eq(q->h, 0.857f, 0.01f, "ramp corner at (%.3f, %.3f) px: h %.4f m, the west slat is 0.86 m",
                           q->u, q->v, q->h);
    }
    cr_assert_gt(found, 0, "Recast's mesh has no corner at (2.195, 3.4426) m any more: re-measure");
    nm_pack_free(&p);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
}
