/* test_outputs.c — navbake's grid, fields and occluder outputs through the command: the sidecar
 * validates against its own main pack and fails against a pack baked from a different input,
 * every scenegen scene (resources/scenes, the demo town) and every real level of
 * $NM_SHARED_DATA/levels bakes and passes `navbake --info`, and the three files are byte-identical
 * for --workers 1 and 4. Scenes are skipped when scenegen is not built, levels when the shared
 * data folder is absent. */
#include "gridutil.h"
#include "util.h"
#include "occluder.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* snprintf through a function: the paths here are far shorter than the buffers */
static void fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, cap, f, ap);
    va_end(ap);
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static char *navbake_path(void)
{
    static char p[4096];
    fmt(p, sizeof p, "%s/tools/navbake/navbake", build_root());
    return p;
}

static char *scenegen_path(void)
{
    static char p[4096];
    fmt(p, sizeof p, "%s/tools/scenegen/scenegen", build_root());
    return p;
}

/* navbake on an OBJ (+ zone.json) into out; asserts exit 0 and that --info validates. */
static void navbake_dir(const char *obj, const char *zone, const char *out, const char *extra)
{
    char cmd[16384];
    fmt(cmd, sizeof cmd, "'%s' --obj '%s' %s%s%s --out '%s' --quiet %s", navbake_path(), obj,
             zone ? "--zone '" : "", zone ? zone : "", zone ? "'" : "", out, extra);
    cr_assert_eq(run_cmd(cmd), 0, "failed: %s", cmd);
    fmt(cmd, sizeof cmd, "'%s' --info '%s/base.nav.gz' > /dev/null", navbake_path(), out);
    cr_assert_eq(run_cmd(cmd), 0, "--info failed: %s", cmd);
}

typedef struct loaded_out {
    nm_pack pack;
    nm_bgrd grid;
} loaded_out;

static void load_out(const char *dir, loaded_out *o)
{
    char path[4096];
    nm_error err = {0};
    fmt(path, sizeof path, "%s/base.nav.gz", dir);
    nm_pack_load_opts lo = {0};
    cr_assert_eq(nm_pack_load(path, &lo, &o->pack, &err), NM_OK, "%s", err.msg);
    const nm_section *s = nm_pack_section(&o->pack, "BGRD");
    cr_assert(s && s->bytes, "%s: no BGRD section", path);
    cr_assert_eq(nm_bgrd_parse(s->bytes, s->size, &o->grid, &err), NM_OK, "%s", err.msg);
}

static void free_out(loaded_out *o)
{
    nm_bgrd_free(&o->grid);
    nm_pack_free(&o->pack);
}

static void floor_obj(const char *dir, const char *name, double pillar, char **obj, char **zone)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, 0, 0, 40, 30, 0.0, 1.0, 10, 10, 10 + pillar, 10 + pillar);
    mesh_group(&b, "deck");
    mesh_rect(&b, 20, 0, 24, 30, 10.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "railing");
    mesh_quad4(&b, 20, 15, 20.2, 15.2, 10.0, 11.0, 11.0, 10.0);
    char *j = NULL;
    *obj = write_text(dir, name, b.s);
    const char *zj = "{\"zones\": [{\"name\": \"t\", \"transform\": [1, 0, 1, 0]}],"
                     " \"collision_only\": [\"railing\"],"
                     " \"offmesh\": [{\"zone\": \"t\", \"from\": [2, 0, -2], \"to\": [22, 10, -5]}]}";
    j = write_text(dir, "zone.json", zj);
    *zone = j;
    sb_free(&b);
}

Test(bakegrid_out, sidecar_binds_to_its_pack)
{
    char *dir = tmp_dir();
    char a[4096], bdir[4096];
    fmt(a, sizeof a, "%s/a", dir);
    fmt(bdir, sizeof bdir, "%s/b", dir);
    char *obj, *zone;
    floor_obj(dir, "a.obj", 4, &obj, &zone);
    navbake_dir(obj, zone, a, "--walkable-as-is");
    free(obj);
    free(zone);
    floor_obj(dir, "b.obj", 5, &obj, &zone); /* a different pillar: a different input */
    navbake_dir(obj, zone, bdir, "--walkable-as-is");
    free(obj);
    free(zone);

    loaded_out A, B;
    load_out(a, &A);
    load_out(bdir, &B);
    cr_assert_neq(A.pack.build_hash, B.pack.build_hash);
    char fa[4096], fb[4096];
    fmt(fa, sizeof fa, "%s/base.fields.nav.gz", a);
    fmt(fb, sizeof fb, "%s/base.fields.nav.gz", bdir);
    nm_error err = {0};
    nm_bnvf f;
    cr_assert_eq(nm_bnvf_load(fa, A.pack.build_hash, A.pack.file_fnv, &A.grid, &f, &err), NM_OK, "%s", err.msg);
    /* the off-mesh link was resolved: the start on the floor, the end on the deck */
    cr_assert_eq(f.link_count, 1);
    cr_assert_eq(f.links[0].valid, 3, "link sides why %u / %u", f.links[0].lo.why, f.links[0].hi.why);
    cr_assert(f.links[0].hi.h > 9.0f);
    nm_bnvf_free(&f);
    memset(&err, 0, sizeof err);
    cr_assert_neq(nm_bnvf_load(fa, B.pack.build_hash, B.pack.file_fnv, &B.grid, &f, &err), NM_OK,
                  "a's sidecar accepted by b's pack");
    cr_assert(strstr(err.msg, "check"), "message: %s", err.msg);
    /* the same file FNV is required: a's sidecar against a's hash but b's FNV fails too */
    cr_assert_neq(nm_bnvf_load(fa, A.pack.build_hash, B.pack.file_fnv, &A.grid, &f, &err), NM_OK);
    /* --info notices a foreign sidecar */
    char cmd[16384];
    fmt(cmd, sizeof cmd, "cp '%s' '%s/base.fields.nav.gz' && '%s' --info '%s/base.nav.gz' > /dev/null 2>&1", fb, a,
             navbake_path(), a);
    cr_assert_eq(run_cmd(cmd), 1, "--info accepted a foreign sidecar");
    /* the occluder holds the collision-only railing */
    char occ[4096];
    fmt(occ, sizeof occ, "%s/base.occluder.gz", a);
    nm_occ_scene *sc = NULL;
    cr_assert_eq(nm_occ_load(occ, "t", &sc, &err), NM_OK, "%s", err.msg);
    cr_assert(sc);
    nm_occ_info inf;
    nm_occ_scene_info(sc, &inf);
    cr_assert_eq(inf.triangles, (size_t)(2 * 40 * 30 - 2 * 16 + 2 * 2 * 15 + 2), "occluder triangles %zu", inf.triangles);
    nm_occ_free(sc);
    /* --no-grid writes the main pack only, without BGRD */
    char c[4096];
    fmt(c, sizeof c, "%s/c", dir);
    floor_obj(dir, "c.obj", 4, &obj, &zone);
    fmt(cmd, sizeof cmd, "'%s' --obj '%s' --zone '%s' --out '%s' --quiet --walkable-as-is --no-grid", navbake_path(),
             obj, zone, c);
    cr_assert_eq(run_cmd(cmd), 0);
    fmt(fa, sizeof fa, "%s/base.fields.nav.gz", c);
    cr_assert(!exists(fa));
    nm_pack pc;
    fmt(fa, sizeof fa, "%s/base.nav.gz", c);
    nm_pack_load_opts lo = {0};
    cr_assert_eq(nm_pack_load(fa, &lo, &pc, &err), NM_OK, "%s", err.msg);
    cr_assert_null(nm_pack_section(&pc, "BGRD"));
    cr_assert_eq(pc.build_hash, A.pack.build_hash, "BGRD is not covered by build_hash");
    nm_pack_free(&pc);
    free(obj);
    free(zone);
    free_out(&A);
    free_out(&B);
    tmp_remove(dir);
    free(dir);
}

/* Every scene.json under resources/scenes and the demo town: scenegen, then navbake --walkable-as-is. */
Test(bakegrid_out, scenes_bake, .timeout = 240)
{
    if (!exists(scenegen_path())) cr_skip_test("scenegen is not built");
    char *dir = tmp_dir();
    char sroot[4096];
    fmt(sroot, sizeof sroot, "%s/resources/scenes", source_root());
    struct dirent **list = NULL;
    int n = scandir(sroot, &list, NULL, alphasort);
    cr_assert_gt(n, 0, "no scenes in %s", sroot);
    int baked = 0;
    char cmd[16384], scene[4096], out[4096], obj[4096], zone[4096];
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        fmt(scene, sizeof scene, "%s/%s/scene.json", sroot, name);
        fmt(out, sizeof out, "%s/%s", dir, name);
        if (name[0] != '.' && exists(scene)) {
            fmt(cmd, sizeof cmd, "'%s' '%s' --out '%s' > /dev/null 2>&1", scenegen_path(), scene, out);
            cr_assert_eq(run_cmd(cmd), 0, "%s", cmd);
            fmt(obj, sizeof obj, "%s/level.obj", out);
            fmt(zone, sizeof zone, "%s/zone.json", out);
            navbake_dir(obj, zone, out, "--walkable-as-is");
            baked++;
        }
        free(list[i]);
    }
    free(list);
    cr_assert_gt(baked, 5, "only %d scenes", baked);
    /* the MovingAI map of resources/scenes/movingai */
    fmt(scene, sizeof scene, "%s/movingai/arena.map", sroot);
    if (exists(scene)) {
        fmt(out, sizeof out, "%s/movingai", dir);
        fmt(cmd, sizeof cmd, "'%s' --movingai '%s' --out '%s' > /dev/null 2>&1", scenegen_path(), scene, out);
        cr_assert_eq(run_cmd(cmd), 0, "%s", cmd);
        fmt(obj, sizeof obj, "%s/level.obj", out);
        fmt(zone, sizeof zone, "%s/zone.json", out);
        navbake_dir(obj, zone, out, "--walkable-as-is");
    }
    tmp_remove(dir);
    free(dir);
}

/* The demo town at --workers 1 and 4: the three files are byte-identical. */
Test(bakegrid_out, demo_deterministic, .timeout = 240)
{
    if (!exists(scenegen_path())) cr_skip_test("scenegen is not built");
    char *dir = tmp_dir();
    char cmd[16384], scene[4096], obj[4096], zone[4096], o1[4096], o4[4096];
    fmt(scene, sizeof scene, "%s/resources/demo/scene.json", source_root());
    cr_assert(exists(scene));
    fmt(cmd, sizeof cmd, "'%s' '%s' --out '%s/src' > /dev/null 2>&1", scenegen_path(), scene, dir);
    cr_assert_eq(run_cmd(cmd), 0, "%s", cmd);
    fmt(obj, sizeof obj, "%s/src/level.obj", dir);
    fmt(zone, sizeof zone, "%s/src/zone.json", dir);
    fmt(o1, sizeof o1, "%s/w1", dir);
    fmt(o4, sizeof o4, "%s/w4", dir);
    navbake_dir(obj, zone, o1, "--walkable-as-is --workers 1");
    navbake_dir(obj, zone, o4, "--walkable-as-is --workers 4");
    const char *files[] = {"base.nav.gz", "base.fields.nav.gz", "base.occluder.gz"};
    for (int i = 0; i < 3; i++) {
        fmt(cmd, sizeof cmd, "cmp -s '%s/%s' '%s/%s'", o1, files[i], o4, files[i]);
        cr_assert_eq(run_cmd(cmd), 0, "%s differs between --workers 1 and 4", files[i]);
    }
    tmp_remove(dir);
    free(dir);
}

/* Every real level under $NM_SHARED_DATA/levels through Recast plus the grid. */
Test(bakegrid_out, shared_levels_bake, .timeout = 240)
{
    const char *data = shared_data();
    if (!data) cr_skip_test("NM_SHARED_DATA is absent");
    char root[4096];
    fmt(root, sizeof root, "%s/levels", data);
    struct dirent **list = NULL;
    int n = scandir(root, &list, NULL, alphasort);
    if (n <= 0) cr_skip_test("no levels in %s", root);
    char *dir = tmp_dir();
    int baked = 0;
    for (int i = 0; i < n; i++) {
        const char *d = list[i]->d_name;
        char sub[4096];
        fmt(sub, sizeof sub, "%s/%s", root, d);
        struct dirent **files = NULL;
        int m = d[0] == '.' ? -1 : scandir(sub, &files, NULL, alphasort);
        char obj[8192] = "";
        for (int k = 0; k < m; k++) {
            size_t l = strlen(files[k]->d_name);
            if (!obj[0] && l > 4 && strcmp(files[k]->d_name + l - 4, ".obj") == 0)
                fmt(obj, sizeof obj, "%s/%s", sub, files[k]->d_name);
            free(files[k]);
        }
        free(files);
        if (obj[0]) {
            char out[4096];
            fmt(out, sizeof out, "%s/%s", dir, d);
            /* Cube 2 levels are in Cube units: 0.12 m each. */
            navbake_dir(obj, NULL, out, strncmp(d, "sauer-", 6) == 0 ? "--scale 0.12" : "");
            baked++;
        }
        free(list[i]);
    }
    free(list);
    cr_assert_gt(baked, 0);
    tmp_remove(dir);
    free(dir);
}
