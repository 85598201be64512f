/* test_scenes.c — scenegen as a whole: every committed scene loads and bakes, output is
 * byte-identical run to run, zone.json says what navbake needs, errors name the object, the
 * Moving AI conversion, formulas, the large world built at build time, the demo picture. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sg_testlib.h"

static const char *scenes[] = {"stairs", "bump_dip", "bridge", "facade", "ledges",
                               "cracks_holes", "corridor", "water_bridge", "island",
                               "building", "regions", "two_zones"};
#define NSCENES (sizeof scenes / sizeof scenes[0])

static char *obj_of(const nm_sg_world *w, size_t *len)
{
    char *t = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_sg_obj_text(w, &t, len, &err), NM_OK, "%s", err.msg);
    return t;
}

Test(scenes, every_scene_has_a_readme_line_and_loads)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/resources/scenes/README.md", tl_src());
    char *readme = tl_read(path);
    cr_assert_not_null(readme, "resources/scenes/README.md missing");
    for (size_t i = 0; i < NSCENES; i++) {
        char key[96];
        snprintf(key, sizeof key, "`%s`", scenes[i]);
        cr_assert_not_null(strstr(readme, key), "README has no line for %s", scenes[i]);
        snprintf(path, sizeof path, "resources/scenes/%s/scene.json", scenes[i]);
        nm_sg_world *w = tl_load(path);
        cr_assert_not_null(w, "%s", scenes[i]);
        cr_assert_gt(w->nt, 0u);
        nm_sg_world_free(w);
    }
    free(readme);
}

Test(scenes, same_scene_gives_byte_identical_files)
{
    nm_sg_world *a = tl_load("resources/demo/scene.json");
    nm_sg_world *b = tl_load("resources/demo/scene.json");
    cr_assert(a && b);
    size_t la, lb;
    char *ta = obj_of(a, &la), *tb = obj_of(b, &lb);
    cr_assert_eq(la, lb);
    cr_assert(memcmp(ta, tb, la) == 0, "level.obj differs between runs");
    char *za, *zb;
    nm_error err = {0};
    cr_assert_eq(nm_sg_zone_json_text(a, &za, &err), NM_OK);
    cr_assert_eq(nm_sg_zone_json_text(b, &zb, &err), NM_OK);
    cr_assert_str_eq(za, zb);
    /* and the text agrees with the world */
    size_t nv, nf, ng;
    tl_obj_counts(ta, &nv, &nf, &ng);
    cr_assert_eq(nv, a->nv);
    cr_assert_eq(nf, a->nt);
    cr_assert_eq(ng, a->ng);
    nm_free(ta);
    nm_free(tb);
    nm_free(za);
    nm_free(zb);
    nm_sg_world_free(a);
    nm_sg_world_free(b);
}

static bool in_list(const cJSON *arr, const char *s)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0) return true;
    return false;
}

Test(scenes, zone_json_lists_roles_areas_links_and_tiers)
{
    nm_sg_world *w = tl_load("resources/demo/scene.json");
    cr_assert_not_null(w);
    char *z;
    nm_error err = {0};
    cr_assert_eq(nm_sg_zone_json_text(w, &z, &err), NM_OK);
    cJSON *root = cJSON_Parse(z);
    cr_assert_not_null(root);
    const cJSON *co = cJSON_GetObjectItem(root, "collision_only");
    const cJSON *ob = cJSON_GetObjectItem(root, "obstacles");
    const cJSON *ar = cJSON_GetObjectItem(root, "areas");
    const cJSON *zones = cJSON_GetObjectItem(root, "zones");
    cr_assert_eq(cJSON_GetArraySize(zones), 1);
    const cJSON *groups = cJSON_GetObjectItem(cJSON_GetArrayItem(zones, 0), "groups");
    for (size_t i = 0; i < w->ng; i++) {
        const nm_sg_group *g = &w->g[i];
        cr_assert(in_list(groups, g->name), "%s not in its zone", g->name);
        cr_assert_eq(in_list(co, g->name), g->role == NM_SG_PROP, "%s", g->name);
        cr_assert_eq(in_list(ob, g->name), g->role == NM_SG_SOLID, "%s", g->name);
        const cJSON *a = cJSON_GetObjectItem(ar, g->name);
        if (g->role == NM_SG_WATER) cr_assert(cJSON_IsNumber(a) && a->valueint == 12, "%s", g->name);
        else cr_assert_null(a, "%s has an area", g->name);
    }
    const cJSON *tiers = cJSON_GetObjectItem(cJSON_GetArrayItem(zones, 0), "tiers");
    cr_assert_eq(cJSON_GetArraySize(tiers), 1);
    const cJSON *links = cJSON_GetObjectItem(root, "offmesh");
    cr_assert_eq((size_t)cJSON_GetArraySize(links), w->nl);
    for (size_t i = 0; i < w->nl; i++) {
        const cJSON *l = cJSON_GetArrayItem(links, (int)i);
        const cJSON *from = cJSON_GetObjectItem(l, "from");
        /* world metres: (x, h, -y) */
        cr_assert_float_eq(cJSON_GetArrayItem(from, 0)->valuedouble, w->links[i].a.x, 1e-9);
        cr_assert_float_eq(cJSON_GetArrayItem(from, 1)->valuedouble, w->links[i].a.h, 1e-9);
        cr_assert_float_eq(cJSON_GetArrayItem(from, 2)->valuedouble, -w->links[i].a.y, 1e-9);
        cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(l, "bidirectional")), w->links[i].bidir);
    }
    cJSON_Delete(root);
    nm_free(z);
    nm_sg_world_free(w);
}

static void expect_error(const char *json, const char *needle)
{
    nm_sg_world *w = NULL;
    nm_error err = {0};
    int rc = nm_sg_world_from_json(json, "bad.json", &w, &err);
    cr_assert_neq(rc, NM_OK, "accepted: %s", json);
    cr_assert_null(w);
    cr_assert_not_null(strstr(err.msg, needle), "message \"%s\" lacks \"%s\"", err.msg, needle);
    cr_assert_not_null(strstr(err.msg, "bad.json"), "message \"%s\" lacks the file", err.msg);
}

Test(scenes, bad_scenes_are_errors_naming_the_object)
{
    expect_error("{", "not valid JSON");
    expect_error("{\"objects\": []}", "name");
    expect_error("{\"name\": \"x\", \"objects\": [{\"type\": \"blob\"}]}", "objects[0]");
    expect_error("{\"name\": \"x\", \"objects\": [{}, {\"type\": \"stairs\", \"id\": \"s\", \"rect\": [0,0,1,1], "
                 "\"dir\": \"+x\", \"riser\": 0.5, \"steps\": 0}]}",
                 "objects[0]");
    expect_error("{\"name\": \"x\", \"objects\": [{\"type\": \"terrain\", \"rect\": [0,0,1,1]}, "
                 "{\"type\": \"stairs\", \"id\": \"s\", \"rect\": [0,0,1,1], \"dir\": \"+x\", \"riser\": 0.5, \"steps\": 0}]}",
                 "objects[1] (\"s\")");
    expect_error("{\"name\": \"x\", \"objects\": [{\"type\": \"wall\", \"from\": [0,0], \"to\": [3,4]}]}",
                 "axis-aligned");
    expect_error("{\"name\": \"x\", \"objects\": [{\"type\": \"terrain\", \"rect\": [0,0,5,5], \"formula\": \"x +* 2\"}]}",
                 "formula");
    expect_error("{\"name\": \"x\", \"objects\": [{\"type\": \"ramp\", \"rect\": [0,0,5,5], \"dir\": \"up\", \"h1\": 2}]}",
                 "\"dir\"");
    expect_error("{\"name\": \"x\", \"objects\": [{\"type\": \"box\", \"zone\": \"nope\", \"rect\": [0,0,5,5], \"top\": 2}]}",
                 "unknown zone");
}

Test(scenes, placement_by_transform_rotates_and_moves)
{
    const char *js = "{\"name\": \"t\", \"objects\": [{\"type\": \"group\", \"offset\": [100, 50, 2], \"rotate\": 90, "
                     "\"objects\": [{\"type\": \"floor\", \"id\": \"f\", \"rect\": [0, 0, 10, 4], \"h\": 1}]}]}";
    nm_sg_world *w;
    nm_error err = {0};
    cr_assert_eq(nm_sg_world_from_json(js, "t.json", &w, &err), NM_OK, "%s", err.msg);
    /* (x, y) -> (-y, x) + (100, 50): the 10 x 4 rectangle becomes x in [96, 100], y in [50, 60] */
    double h[4];
    cr_assert_eq(tl_heights(w, 98, 55, NULL, false, h, 4), 1);
    cr_assert_float_eq(h[0], 3, 1e-9);
    cr_assert_eq(tl_heights(w, 102, 55, NULL, false, h, 4), 0);
    nm_sg_world_free(w);
}

Test(scenes, formulas_follow_precedence_and_functions)
{
    nm_sg_expr *e;
    nm_error err = {0};
    cr_assert_eq(nm_sg_expr_compile("1 + 2 * x ^ 2 - -y", &e, &err), NM_OK);
    cr_assert_float_eq(nm_sg_expr_eval(e, 3, 4), 1 + 2 * 9 + 4, 1e-12);
    nm_sg_expr_free(e);
    cr_assert_eq(nm_sg_expr_compile("max(0, x - 10) * (y >= 2) + clamp(sin(pi/2), 0, 0.5)", &e, &err), NM_OK);
    cr_assert_float_eq(nm_sg_expr_eval(e, 12, 2), 2.5, 1e-12);
    cr_assert_float_eq(nm_sg_expr_eval(e, 12, 1), 0.5, 1e-12);
    nm_sg_expr_free(e);
    cr_assert_neq(nm_sg_expr_compile("foo(1)", &e, &err), NM_OK);
    cr_assert_neq(nm_sg_expr_compile("(1", &e, &err), NM_OK);
}

Test(scenes, formula_terrain_blocks_meet_without_cracks)
{
    const char *js = "{\"name\": \"hills\", \"objects\": [{\"type\": \"terrain\", \"rect\": [0, 0, 40, 40], "
                     "\"formula\": \"3*sin(x/7)*cos(y/5)\", \"block\": 4}, {\"type\": \"box\", \"rect\": [9, 9, 13.3, 12.1], \"top\": 9}]}";
    nm_sg_world *w;
    nm_error err = {0};
    cr_assert_eq(nm_sg_world_from_json(js, "hills.json", &w, &err), NM_OK, "%s", err.msg);
    tl_comp *c = tl_components(w);
    cr_assert_eq(tl_comp_count(c), 1, "terrain split into %d pieces", tl_comp_count(c));
    tl_comp_free(c);
    nm_sg_world_free(w);
}

Test(scenes, movingai_tiles_and_walls_are_cut)
{
    nm_sg_world *w = tl_load("resources/scenes/movingai/arena.map");
    cr_assert_not_null(w);
    const double T = NM_SG_MOVINGAI_TILE_PX; /* px per tile; a tile is 1 m */
    cr_assert_float_eq(w->zones[0].tf[0], T, 0);
    cr_assert_float_eq(w->zones[0].tf[2], T, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/resources/scenes/movingai/arena.map", tl_src());
    char *map = tl_read(path);
    cr_assert_not_null(map);
    const char *p = strstr(map, "\nmap");
    cr_assert_not_null(p);
    p = strchr(p + 1, '\n') + 1;
    int walls = 0, floors = 0;
    for (int y = 0; y < 49; y++) {
        for (int x = 0; x < 49; x++) {
            bool pass = p[x] == '.' || p[x] == 'G' || p[x] == 'S';
            double h[4];
            int n = tl_heights(w, x + 0.5, y + 0.5, NULL, false, h, 4);
            cr_assert_eq(n, pass ? 1 : 0, "tile (%d, %d) '%c'", x, y, p[x]);
            pass ? floors++ : walls++;
        }
        p = strchr(p, '\n') + 1;
    }
    cr_assert_gt(walls, 0);
    cr_assert_gt(floors, 0);
    free(map);
    snprintf(path, sizeof path, "%s/resources/scenes/movingai/arena.map.scen", tl_src());
    char *scen = tl_read(path), *legs = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_sg_scen_convert(scen, path, &legs, &err), NM_OK, "%s", err.msg);
    size_t ls = 0, ll = 0;
    for (char *q = scen; *q; q++) ls += *q == '\n';
    for (char *q = legs; *q; q++) ll += *q == '\n';
    cr_assert_eq(ll, ls, "one leg per scenario line plus the header");
    double sx, sy, gx, gy, opt;
    const char *l2 = strchr(legs, '\n') + 1;
    cr_assert_eq(sscanf(l2, "%lf %lf %lf %lf %lf", &sx, &sy, &gx, &gy, &opt), 5);
    cr_assert_float_eq(sx / T - floor(sx / T), 0.5, 1e-12, "a tile centre");
    cr_assert_geq(opt + 1e-9, hypot(gx - sx, gy - sy), "optimal below the straight line");
    free(scen);
    nm_free(legs);
    nm_sg_world_free(w);
}

Test(scenes, large_world_is_built_and_within_budget)
{
    const char *p = getenv("NM_LARGE_OBJ");
    if (!p) cr_skip_test("NM_LARGE_OBJ not set");
    char *t = tl_read(p);
    cr_assert_not_null(t, "%s missing: the build should generate it", p);
    size_t nv, nf, ng;
    tl_obj_counts(t, &nv, &nf, &ng);
    cr_assert_lt(nf, 1500000u, "%zu triangles", nf);
    cr_assert_gt(nf, 50000u, "%zu triangles: too small for a large world", nf);
    /* the OBJ is exactly what the committed scene gives */
    nm_sg_world *w = tl_load("resources/large/scene.json");
    cr_assert_not_null(w);
    size_t len;
    char *again;
    nm_error err = {0};
    cr_assert_eq(nm_sg_obj_text(w, &again, &len, &err), NM_OK);
    cr_assert_eq(len, strlen(t));
    cr_assert(memcmp(again, t, len) == 0);
    /* about 2000 x 2000 px, several regions, overlapping layers */
    double u1 = 0, v1 = 0;
    for (size_t i = 0; i < w->nv; i++) {
        u1 = fmax(u1, w->zones[0].tf[0] * w->v[i].x);
        v1 = fmax(v1, w->zones[0].tf[2] * w->v[i].y);
    }
    cr_assert(u1 > 1800 && u1 < 2200 && v1 > 1800 && v1 < 2200, "%.0f x %.0f px", u1, v1);
    tl_comp *c = tl_components(w);
    cr_assert_geq(tl_comp_count(c), 4);
    tl_comp_free(c);
    int layered = 0;
    for (int k = 0; k < 400; k++) {
        double h[8];
        double x = fmod(k * 97.31, u1 / w->zones[0].tf[0]), y = fmod(k * 53.77, v1 / w->zones[0].tf[2]);
        if (tl_heights(w, x, y, NULL, false, h, 8) >= 2) layered++;
    }
    cr_assert_gt(layered, 0, "no overlapping layers sampled");
    nm_free(again);
    free(t);
    nm_sg_world_free(w);
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return rc;
}

Test(scenes, every_scene_bakes_with_navbake, .timeout = 280)
{
    const char *nb = getenv("NM_NAVBAKE");
    if (!nb || access(nb, X_OK) != 0) cr_skip_test("navbake not built");
    char dir[] = "/tmp/nm_scenes_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (size_t i = 0; i <= NSCENES + 1; i++) {
        char rel[256], obj[4096], zone[4096], cmd[16384];
        const char *name = i < NSCENES ? scenes[i] : i == NSCENES ? "demo" : "movingai";
        if (i < NSCENES) snprintf(rel, sizeof rel, "resources/scenes/%s/scene.json", name);
        else if (i == NSCENES) snprintf(rel, sizeof rel, "resources/demo/scene.json");
        else snprintf(rel, sizeof rel, "resources/scenes/movingai/arena.map");
        nm_sg_world *w = tl_load(rel);
        cr_assert_not_null(w, "%s", rel);
        snprintf(obj, sizeof obj, "%s/%s.obj", dir, name);
        snprintf(zone, sizeof zone, "%s/%s.zone.json", dir, name);
        nm_error err = {0};
        cr_assert_eq(nm_sg_write(w, NULL, obj, zone, &err), NM_OK, "%s", err.msg);
        nm_sg_world_free(w);
        snprintf(cmd, sizeof cmd, "'%s' --obj '%s' --zone '%s' --out '%s/%s' --walkable-as-is --quiet",
                 nb, obj, zone, dir, name);
        cr_assert_eq(run(cmd), 0, "navbake failed on %s: %s", name, cmd);
        snprintf(cmd, sizeof cmd, "%s/%s/base.nav.gz", dir, name);
        struct stat st;
        cr_assert_eq(stat(cmd, &st), 0, "%s missing", cmd);
        cr_assert_gt(st.st_size, 0);
    }
    /* the demo again with another worker count: byte-identical pack */
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "'%s' --obj '%s/demo.obj' --zone '%s/demo.zone.json' --out '%s/demo1' --walkable-as-is "
             "--quiet --workers 1 && cmp -s '%s/demo/base.nav.gz' '%s/demo1/base.nav.gz'",
             nb, dir, dir, dir, dir, dir);
    cr_assert_eq(run(cmd), 0, "demo pack differs between runs: %s", cmd);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    run(cmd);
}

Test(scenes, grid_terrain_and_ramp_slope)
{
    const char *js = "{\"name\": \"g\", \"objects\": ["
                     "{\"type\": \"terrain\", \"rect\": [0, 0, 20, 10], \"block\": 5, \"grid\": {\"cols\": 3, \"rows\": 2, \"h\": [0, 2, 4, 1, 3, 5]}},"
                     "{\"type\": \"ramp\", \"rect\": [30, 0, 40, 4], \"dir\": \"-x\", \"h0\": 1, \"slope_deg\": 30}]}";
    nm_sg_world *w;
    nm_error err = {0};
    cr_assert_eq(nm_sg_world_from_json(js, "g.json", &w, &err), NM_OK, "%s", err.msg);
    double h[4];
    /* grid corners at block corners are exact: (0,0)=0, (10,0)=2, (20,10)=5, (10,5)=2.5 */
    cr_assert_eq(tl_heights(w, 10, 5, NULL, false, h, 4), 1);
    cr_assert_float_eq(h[0], 2.5, 1e-9);
    cr_assert_eq(tl_heights(w, 19.999, 9.999, NULL, false, h, 4), 1);
    cr_assert_float_eq(h[0], 5, 1e-3);
    /* a 30 degree ramp rising towards -x: 1 m at x = 40, 1 + 10 tan 30 at x = 30 */
    cr_assert_eq(tl_heights(w, 35, 2, NULL, false, h, 4), 1);
    cr_assert_float_eq(h[0], 1 + 5 * tan(30 * 3.14159265358979323846 / 180), 1e-9);
    nm_sg_world_free(w);
}
