/* test_level.c — level files through level.c: a glTF and a GLB written by gltf_write.c (nodes with
 * transforms, a mirrored node, a named water node) bake to the same pack, occluder and grid bytes
 * as the same level written as OBJ; --node / --skip-node; FBX and Collada units from the file;
 * malformed files of every format are refused with a message naming the file, those that crash
 * assimp or make it grow without end too (the import's child process and its limits). */
#include "util.h"
#include "gltf_write.h"
#include "level.h"
#include "recast_shim.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char kZone[] = "{\"areas\": {\"water\": 12}}";

static void need_assimp(void)
{
    if (!nm_level_have_assimp()) cr_skip_test("navbake built without assimp");
}

/* Loads a level file and bakes it (as-is or Recast) with kZone; serialises the main pack and the
 * occluder into *pack / *occ. */
static void bake_file(const char *path, const nm_level_opts *lo, bool as_is, nm_buf *pack, nm_buf *occ)
{
    nm_obj obj;
    nm_error err = {0};
    nm_level_info info;
    cr_assert_eq(nm_level_load(path, lo, &obj, &info, &err), NM_OK, "%s", err.msg);
    nm_bake_config cfg;
    cr_assert_eq(nm_bake_config_parse(kZone, strlen(kZone), "zone.json", "lvl", &cfg, &err), NM_OK, "%s", err.msg);
    nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .walkable_as_is = as_is, .workers = 1};
    nm_pack p;
    cr_assert_eq(nm_bake_main_pack(&o, &p, &err), NM_OK, "%s: %s", path, err.msg);
    nm_pack_write_opts w = {.workers = 1, .level = 1};
    memset(pack, 0, sizeof *pack);
    cr_assert_eq(nm_pack_serialize(&p, &w, pack, &err), NM_OK, "%s", err.msg);
    memset(occ, 0, sizeof *occ);
    cr_assert_eq(nm_bake_occluder(&obj, &cfg, 1.0, occ, &err), NM_OK, "%s", err.msg);
    nm_pack_free(&p);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
}

static void expect_same_bytes(const nm_buf *a, const nm_buf *b, const char *what)
{
    cr_assert_eq(a->size, b->size, "%s: %zu vs %zu bytes", what, a->size, b->size);
    cr_assert(memcmp(a->p, b->p, a->size) == 0, "%s: bytes differ", what);
}

static void expect_same_bake(const char *a, const char *b, const nm_level_opts *lo_a, const nm_level_opts *lo_b)
{
    for (int as_is = 1; as_is >= 0; as_is--) {
        if (!as_is && !nm_rc_available()) continue;
        nm_buf pa, oa, pb, ob;
        bake_file(a, lo_a, as_is, &pa, &oa);
        bake_file(b, lo_b, as_is, &pb, &ob);
        expect_same_bytes(&pa, &pb, as_is ? "as-is pack" : "Recast pack");
        expect_same_bytes(&oa, &ob, "occluder");
        nm_buf_free(&pa);
        nm_buf_free(&oa);
        nm_buf_free(&pb);
        nm_buf_free(&ob);
    }
}

Test(level, gltf_and_glb_import_the_node_hierarchy)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf g = tg_level_gltf(false, false);
    char *path = tg_write(dir, "lvl.gltf", &g);
    nm_obj o;
    nm_error err = {0};
    nm_level_info info;
    cr_assert_eq(nm_level_load(path, NULL, &o, &info, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.group_count, 4);
    const char *want[] = {"ground", "deck", "water", "crate"};
    for (int i = 0; i < 4; i++) cr_assert_str_eq(o.groups[i], want[i]);
    cr_assert_eq(o.tri_count, 32 + 8 + 4 + 8);
    cr_assert_eq(info.nodes_kept, 4);
    cr_assert_eq(info.mirrored, 1, "the deck's node has a negative determinant");
    cr_assert_str_eq(info.importer, "assimp gltf");
    /* every triangle faces up in the world, the mirrored deck's too */
    for (uint32_t t = 0; t < o.tri_count; t++) {
        const float *a = o.pos + 3 * o.tris[3 * t], *b = o.pos + 3 * o.tris[3 * t + 1], *c = o.pos + 3 * o.tris[3 * t + 2];
        double ny = (double)(b[2] - a[2]) * (c[0] - a[0]) - (double)(b[0] - a[0]) * (c[2] - a[2]);
        cr_assert_gt(ny, 0, "triangle %u (group %s) faces down", t, o.groups[o.tri_group[t]]);
    }
    /* world transforms: crate is under props (0, 0, -8), scaled 2 */
    cr_assert_float_eq(info.bmin[2], -11.0f, 0, "bounds from the nested node");
    cr_assert_float_eq(info.bmax[0], 26.0f, 0);
    cr_assert_float_eq(info.bmax[1], 0.3f, 0);
    nm_obj_free(&o);
    free(path);
    /* two nodes with one name share a group, as OBJ groups do */
    char *dup = strstr((char *)g.p, "\"name\":\"crate\"");
    cr_assert_not_null(dup);
    memcpy(dup, "\"name\":\"water\"", strlen("\"name\":\"water\""));
    path = tg_write(dir, "dup.gltf", &g);
    cr_assert_eq(nm_level_load(path, NULL, &o, &info, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.group_count, 3);
    cr_assert_str_eq(o.groups[2], "water");
    for (uint32_t t = 32 + 8; t < o.tri_count; t++) cr_assert_eq(o.tri_group[t], 2, "triangle %u", t);
    nm_obj_free(&o);
    tg_free(&g);
    free(path);
    tmp_remove(dir);
    free(dir);
}

Test(level, gltf_and_glb_bake_to_the_same_bytes_as_the_obj)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf g = tg_level_gltf(false, false), b = tg_level_gltf(true, false), o = tg_level_obj(NULL);
    char *pg = tg_write(dir, "lvl.gltf", &g), *pb = tg_write(dir, "lvl.glb", &b), *po = tg_write(dir, "lvl.obj", &o);
    expect_same_bake(po, pg, NULL, NULL);
    expect_same_bake(po, pb, NULL, NULL);
    /* the water node is area 12, as the OBJ group is */
    nm_pack p;
    nm_error err = {0};
    nm_obj obj;
    cr_assert_eq(nm_level_load(pb, NULL, &obj, NULL, &err), NM_OK, "%s", err.msg);
    nm_bake_config cfg;
    cr_assert_eq(nm_bake_config_parse(kZone, strlen(kZone), "zone.json", "lvl", &cfg, &err), NM_OK, "%s", err.msg);
    nm_bake_opts bo = {.obj = &obj, .cfg = &cfg, .walkable_as_is = true, .workers = 1};
    cr_assert_eq(nm_bake_main_pack(&bo, &p, &err), NM_OK, "%s", err.msg);
    uint32_t water = 0;
    for (uint32_t t = 0; t < p.surface_count; t++) water += p.surfaces[t].area == 12;
    cr_assert_eq(water, 4, "the water node's 4 triangles are area 12");
    nm_pack_free(&p);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
    tg_free(&g);
    tg_free(&b);
    tg_free(&o);
    free(pg);
    free(pb);
    free(po);
    tmp_remove(dir);
    free(dir);
}

Test(level, the_whole_bake_writes_the_same_files_for_glb_and_obj)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf b = tg_level_gltf(true, false), o = tg_level_obj(NULL);
    char *pb = tg_write(dir, "lvl.glb", &b), *po = tg_write(dir, "lvl.obj", &o);
    const char *files[] = {"base.nav.gz", "base.fields.nav.gz", "base.occluder.gz"};
    uint8_t *bytes[2][3];
    size_t sizes[2][3];
    for (int k = 0; k < 2; k++) {
        nm_obj obj;
        nm_error err = {0};
        cr_assert_eq(nm_level_load(k ? pb : po, NULL, &obj, NULL, &err), NM_OK, "%s", err.msg);
        nm_bake_config cfg;
        cr_assert_eq(nm_bake_config_parse(kZone, strlen(kZone), "zone.json", "lvl", &cfg, &err), NM_OK, "%s", err.msg);
        char out[4096];
        snprintf(out, sizeof out, "%s/out%d", dir, k);
        nm_bake_opts bo = {.obj = &obj, .cfg = &cfg, .workers = 1};
        cr_assert_eq(nm_bake_to_dir(&bo, out, &err), NM_OK, "%s", err.msg);
        for (int f = 0; f < 3; f++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", out, files[f]);
            cr_assert_eq(nm_file_read(path, 0, &bytes[k][f], &sizes[k][f], &err), NM_OK, "%s", err.msg);
        }
        nm_bake_config_free(&cfg);
        nm_obj_free(&obj);
    }
    for (int f = 0; f < 3; f++) {
        cr_assert_eq(sizes[0][f], sizes[1][f], "%s: %zu vs %zu bytes", files[f], sizes[0][f], sizes[1][f]);
        cr_assert(memcmp(bytes[0][f], bytes[1][f], sizes[0][f]) == 0, "%s differs", files[f]);
        nm_free(bytes[0][f]);
        nm_free(bytes[1][f]);
    }
    tg_free(&b);
    tg_free(&o);
    free(pb);
    free(po);
    tmp_remove(dir);
    free(dir);
}

Test(level, node_and_skip_node_select_subtrees)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf b = tg_level_gltf(true, false), o = tg_level_obj("water"), full = tg_level_obj(NULL);
    char *pb = tg_write(dir, "lvl.glb", &b), *po = tg_write(dir, "nowater.obj", &o), *pf = tg_write(dir, "full.obj", &full);
    const char *skip[] = {"water"};
    nm_level_opts drop_water = {.skip = skip, .skip_count = 1};
    expect_same_bake(po, pb, NULL, &drop_water);
    /* the OBJ path selects groups the same way */
    expect_same_bake(po, pf, NULL, &drop_water);

    /* --node props keeps its subtree: the crate only */
    const char *keep[] = {"props"};
    nm_level_opts only_props = {.nodes = keep, .node_count = 1};
    nm_obj obj;
    nm_error err = {0};
    nm_level_info info;
    cr_assert_eq(nm_level_load(pb, &only_props, &obj, &info, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(obj.group_count, 1);
    cr_assert_str_eq(obj.groups[0], "crate");
    cr_assert_eq(obj.tri_count, 8);
    cr_assert_eq(info.nodes_kept, 1);
    cr_assert_eq(info.nodes_skipped, 3);
    nm_obj_free(&obj);
    /* a prefix pattern, and --skip-node winning over --node */
    const char *pre[] = {"g*", "d*"}, *sk[] = {"deck"};
    nm_level_opts gd = {.nodes = pre, .node_count = 2, .skip = sk, .skip_count = 1};
    cr_assert_eq(nm_level_load(pb, &gd, &obj, &info, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(obj.group_count, 1);
    cr_assert_str_eq(obj.groups[0], "ground");
    nm_obj_free(&obj);
    /* a name that matches nothing is an error naming the file and the option */
    const char *typo[] = {"watr"};
    nm_level_opts bad = {.skip = typo, .skip_count = 1};
    cr_assert_neq(nm_level_load(pb, &bad, &obj, &info, &err), NM_OK);
    cr_assert(strstr(err.msg, "lvl.glb") && strstr(err.msg, "--skip-node 'watr'"), "%s", err.msg);
    cr_assert_neq(nm_level_load(pf, &bad, &obj, &info, &err), NM_OK);
    cr_assert(strstr(err.msg, "full.obj") && strstr(err.msg, "--skip-node 'watr'"), "%s", err.msg);
    tg_free(&b);
    tg_free(&o);
    tg_free(&full);
    free(pb);
    free(po);
    free(pf);
    tmp_remove(dir);
    free(dir);
}

static char *write_fbx(const char *dir, const char *name, const char *unit_scale_factor)
{
    tg_buf b = tg_level_fbx(unit_scale_factor);
    char *path = tg_write(dir, name, &b);
    tg_free(&b);
    return path;
}

Test(level, fbx_and_collada_units_come_from_the_file)
{
    need_assimp();
    char *dir = tmp_dir();
    struct { const char *factor; double unit; } cases[] = {{"100", 1.0}, {"1", 0.01}, {"2.54", 0.0254}};
    for (int c = 0; c < 3; c++) {
        char *path = write_fbx(dir, "lvl.fbx", cases[c].factor);
        nm_obj o;
        nm_error err = {0};
        nm_level_info info;
        cr_assert_eq(nm_level_load(path, NULL, &o, &info, &err), NM_OK, "%s", err.msg);
        cr_assert_float_eq(info.unit_scale, cases[c].unit, 1e-9, "UnitScaleFactor %s", cases[c].factor);
        cr_assert_eq(o.tri_count, 2);
        cr_assert_str_eq(o.groups[0], "ground");
        cr_assert_float_eq(info.bmax[0], (float)cases[c].unit, 1e-7, "1 unit = %g m", cases[c].unit);
        cr_assert_float_eq(info.bmax[2], (float)(6 * cases[c].unit), 1e-7, "the node's translation too");
        nm_obj_free(&o);
        free(path);
    }
    /* Collada: centimetres and Z up, both applied by assimp: 1 m square, y up, at height 5 m */
    char *path = write_text(dir, "lvl.dae", tg_level_dae());
    nm_obj o;
    nm_error err = {0};
    nm_level_info info;
    cr_assert_eq(nm_level_load(path, NULL, &o, &info, &err), NM_OK, "%s", err.msg);
    cr_assert_str_eq(o.groups[0], "ground");
    cr_assert_float_eq(info.bmin[1], 5.0f, 1e-6);
    cr_assert_float_eq(info.bmax[1], 5.0f, 1e-6);
    cr_assert_float_eq(info.bmax[0] - info.bmin[0], 1.0f, 1e-6);
    nm_obj_free(&o);
    free(path);
    tmp_remove(dir);
    free(dir);
}

/* Every malformed file gives an error whose message names the file, never a crash. */
static void expect_refused(const char *dir, const char *name, const void *bytes, size_t n)
{
    tg_buf b = {(uint8_t *)bytes, n};
    char *path = tg_write(dir, name, &b);
    nm_obj o;
    nm_error err = {0};
    int rc = nm_level_load(path, NULL, &o, NULL, &err);
    cr_assert_neq(rc, NM_OK, "%s was accepted", name);
    cr_assert(strstr(err.msg, name) != NULL, "%s: the message names the file: %s", name, err.msg);
    free(path);
}

Test(level, malformed_files_are_refused_with_the_file_name)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf glb = tg_level_gltf(true, false), gltf = tg_level_gltf(false, false);
    expect_refused(dir, "trunc.glb", glb.p, glb.size / 2);
    expect_refused(dir, "header.glb", glb.p, 11);
    uint8_t *big = malloc(glb.size);
    memcpy(big, glb.p, glb.size);
    uint32_t huge = 0x7fffff00u;
    memcpy(big + 12, &huge, 4); /* JSON chunk longer than the file */
    expect_refused(dir, "chunk.glb", big, glb.size);
    free(big);
    expect_refused(dir, "trunc.gltf", gltf.p, gltf.size / 2);
    expect_refused(dir, "empty.glb", "", 0);
    /* indexed lines: assimp 5.2 reads their indices unchecked (found by fuzz_level) */
    char *lines = strstr((char *)gltf.p, "\"indices\":3,\"mode\":4");
    cr_assert_not_null(lines);
    lines[strlen("\"indices\":3,\"mode\":")] = '2';
    expect_refused(dir, "lines.gltf", gltf.p, gltf.size);
    lines[strlen("\"indices\":3,\"mode\":")] = '4';
    /* GLB bytes under a .gltf name: the chunk check still applies (assimp reads them as GLB) */
    big = malloc(glb.size);
    memcpy(big, glb.p, glb.size);
    memcpy(big + 12, &huge, 4);
    expect_refused(dir, "chunk_named.gltf", big, glb.size);
    free(big);
    static const char no_meshes[] = "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
                                    "\"nodes\":[{\"name\":\"empty\"}]}";
    expect_refused(dir, "empty.gltf", no_meshes, sizeof no_meshes - 1);
    static const char bad_mesh[] = "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
                                   "\"nodes\":[{\"name\":\"n\",\"mesh\":7}]}";
    expect_refused(dir, "badmesh.gltf", bad_mesh, sizeof bad_mesh - 1);
    tg_buf nan = tg_level_gltf(true, true);
    expect_refused(dir, "nan.glb", nan.p, nan.size);
    static const char fbx[] = "; FBX 7.4.0 project file\nObjects:  {\n\tGeometry: 1, \"Geometry::x\", \"Mesh\" {\n"
                              "\t\tVertices: *9 {\n\t\t\ta: 0,0\n";
    expect_refused(dir, "trunc.fbx", fbx, sizeof fbx - 1);
    expect_refused(dir, "trunc.dae", tg_level_dae(), strlen(tg_level_dae()) / 2);
    /* assimp 5.2 never returns on a non-digit in a Collada index list (found by fuzz_level) */
    char *hang = strdup(tg_level_dae());
    char *p = strstr(hang, "<p>0 1");
    cr_assert_not_null(p);
    p[4] = 'x';
    expect_refused(dir, "hang.dae", hang, strlen(hang));
    char *cnt = strstr(hang, "count=\"12\"");
    cr_assert_not_null(cnt);
    cnt[7] = 'x'; /* count="x2": crashed assimp 5.2 (fuzz_level) */
    expect_refused(dir, "count.dae", hang, strlen(hang));
    /* with the index list whole again and under another name, the Collada checks (they go by the
     * name) pass it, and assimp 5.2 reads it as Collada and crashes: in a process of its own, so
     * this one goes on */
    p[4] = ' ';
    expect_refused(dir, "count.xml", hang, strlen(hang));
    free(hang);
    static const char obj[] = "v 0 0 0\nv 1 0 0\nf 1 2 9\n";
    expect_refused(dir, "bad.obj", obj, sizeof obj - 1);
    expect_refused(dir, "noise.xyz", "hello", 5);
    nm_obj o;
    nm_error err = {0};
    cr_assert_neq(nm_level_load("/nonexistent/level.glb", NULL, &o, NULL, &err), NM_OK);
    cr_assert(strstr(err.msg, "/nonexistent/level.glb") != NULL, "%s", err.msg);
    tg_free(&glb);
    tg_free(&gltf);
    tg_free(&nan);
    tmp_remove(dir);
    free(dir);
}

/* The import runs in a child process (level.c, "assimp in a child process"): what it sends back
 * is what the same import gives in this process (nm_level_parse), field by field. */
Test(level, the_child_process_gives_the_import_of_this_process)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf g = tg_level_gltf(true, false);
    char *path = tg_write(dir, "lvl.glb", &g);
    nm_obj a, b;
    nm_level_info ia, ib;
    nm_error err = {0};
    cr_assert_eq(nm_level_load(path, NULL, &a, &ia, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_level_parse(g.p, g.size, "glb", path, NULL, &b, &ib, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(a.vert_count, b.vert_count);
    cr_assert_eq(a.tri_count, b.tri_count);
    cr_assert_eq(a.group_count, b.group_count);
    cr_assert(a.vert_count > 0 && a.tri_count > 0);
    cr_assert_eq(memcmp(a.pos, b.pos, 3 * (size_t)a.vert_count * sizeof *a.pos), 0, "positions");
    cr_assert_eq(memcmp(a.tris, b.tris, 3 * (size_t)a.tri_count * sizeof *a.tris), 0, "triangles");
    cr_assert_eq(memcmp(a.tri_group, b.tri_group, (size_t)a.tri_count * sizeof *a.tri_group), 0, "groups");
    for (uint32_t k = 0; k < a.group_count; k++) cr_assert_str_eq(a.groups[k], b.groups[k]);
    cr_assert_str_eq(ia.importer, ib.importer);
    cr_assert(ia.nodes == ib.nodes && ia.nodes_kept == ib.nodes_kept && ia.nodes_skipped == ib.nodes_skipped &&
                  ia.faces_dropped == ib.faces_dropped && ia.mirrored == ib.mirrored && ia.unit_scale == ib.unit_scale,
              "the import's counts");
    cr_assert_eq(memcmp(ia.bmin, ib.bmin, sizeof ia.bmin), 0, "bounds");
    cr_assert_eq(memcmp(ia.bmax, ib.bmax, sizeof ia.bmax), 0, "bounds");
    nm_obj_free(&a);
    nm_obj_free(&b);
    tg_free(&g);
    free(path);
    tmp_remove(dir);
    free(dir);
}

/* This test process's limits (Criterion runs each test in a process of its own), which the
 * import's child keeps where they are lower than its own: CPU time `cpu_s` seconds past what the
 * process has used; address space `as_mib` MiB past what it holds (0: none). */
static void lower_limits(rlim_t cpu_s, unsigned long as_mib)
{
    struct rusage ru;
    struct rlimit cpu;
    cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
    cr_assert_eq(getrlimit(RLIMIT_CPU, &cpu), 0);
    const rlim_t used = (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec);
    if (cpu.rlim_cur == RLIM_INFINITY || cpu.rlim_cur > used + cpu_s) cpu.rlim_cur = used + cpu_s;
    cr_assert_eq(setrlimit(RLIMIT_CPU, &cpu), 0);
    if (!as_mib) return;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert_not_null(f);
    cr_assert_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    struct rlimit as;
    cr_assert_eq(getrlimit(RLIMIT_AS, &as), 0);
    as.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)as_mib << 20);
    cr_assert_eq(setrlimit(RLIMIT_AS, &as), 0);
}

/* A non-digit in a Collada index list, under a name the Collada checks do not take: assimp 5.2
 * then allocates without end (0.5-0.9 GB a CPU second on the machines it ran on). Returns the
 * import's message. */
static void import_grows(char *msg, size_t cap)
{
    char *dir = tmp_dir();
    char *dae = strdup(tg_level_dae());
    char *p = strstr(dae, "<p>0 1");
    cr_assert_not_null(p);
    p[4] = 'x';
    tg_buf b = {(uint8_t *)dae, strlen(dae)};
    char *path = tg_write(dir, "grows.xml", &b);
    nm_obj o;
    nm_error err = {0};
    cr_assert_neq(nm_level_load(path, NULL, &o, NULL, &err), NM_OK);
    cr_assert(strstr(err.msg, "grows.xml") != NULL, "the message names the file: %s", err.msg);
    snprintf(msg, cap, "%s", err.msg);
    free(dae);
    free(path);
    tmp_remove(dir);
    free(dir);
}

/* The child's address space: with 256 MiB more than this process holds, the growth ends in
 * assimp's std::bad_alloc, reported as out of memory, with the cap. */
Test(level, a_file_assimp_grows_on_stops_at_the_address_space_cap, .timeout = 120)
{
    need_assimp();
    if (!nm_level_caps_address_space()) cr_skip_test("built with a sanitizer: the import's address-space cap is off");
    lower_limits(30, 256);
    char msg[512];
    import_grows(msg, sizeof msg);
    cr_assert(strstr(msg, "out of memory") != NULL && strstr(msg, "GiB here") != NULL, "%s", msg);
}

/* The child's CPU time: 1 s ends the growth with SIGXCPU. The child keeps its own address-space
 * cap (at least 4 GiB and the machine's memory past what it holds): a cap set here would race the
 * CPU limit, since a second of growth reserves more address space on a faster machine (assimp's
 * arrays double: 1536 MiB ran out first on a machine that writes 0.9 GB in that second). */
Test(level, a_file_assimp_grows_on_stops_at_the_cpu_limit, .timeout = 120)
{
    need_assimp();
    lower_limits(1, 0);
    char msg[512];
    import_grows(msg, sizeof msg);
    cr_assert(strstr(msg, "of CPU time") != NULL, "%s", msg);
}

static char g_out[1 << 16];

/* Runs build/tools/<tool> with args; stdout+stderr go to g_out; returns the exit code. */
static int run_tool(const char *tool, const char *args)
{
    const char *build = getenv("NM_BUILD_ROOT");
    if (!build) cr_skip_test("NM_BUILD_ROOT is not set");
    char out_path[] = "/tmp/nm_level_XXXXXX";
    int fd = mkstemp(out_path);
    cr_assert_geq(fd, 0);
    close(fd);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s/tools/%s' %s >'%s' 2>&1", build, tool, args, out_path);
    int st = system(cmd);
    FILE *f = fopen(out_path, "rb");
    size_t n = f ? fread(g_out, 1, sizeof g_out - 1, f) : 0;
    g_out[n] = 0;
    if (f) fclose(f);
    remove(out_path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(level, navbake_bakes_a_glb_and_navplan_plans_on_it)
{
    need_assimp();
    char *dir = tmp_dir();
    tg_buf b = tg_level_gltf(true, false);
    char *glb = tg_write(dir, "plaza.glb", &b);
    char *zone = write_text(dir, "zone.json", kZone);
    char args[4096];
    snprintf(args, sizeof args, "--level '%s' --zone '%s' --out '%s/out' --workers 1", glb, zone, dir);
    cr_assert_eq(run_tool("navbake/navbake", args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "read ") && strstr(g_out, "(assimp glb): 49 vertices, 52 triangles, 4 groups"), "%s", g_out);
    cr_assert(strstr(g_out, "nodes 6, with meshes kept 4, skipped 0; mirrored 1") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "bounds [0, 0, -11] .. [26, 0.3, 24]") != NULL, "%s", g_out);
    /* from the ground (u = 0.75 x, v = -0.75 z) up onto the mirrored deck (x 20..26, y 0.3) */
    snprintf(args, sizeof args, "--pack '%s/out/base.nav.gz' --zone plaza --from 1.5,-1.5 --to 18,-3", dir);
    cr_assert_eq(run_tool("navplan/navplan", args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "\"ok\":true") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "\"snap_goal\":0,") != NULL, "the goal is on the deck: %s", g_out);
    cr_assert(strstr(g_out, ",0.296875]") != NULL, "the path ends 0.3 m up: %s", g_out);
    /* without the deck the goal is off the mesh: --obj is the same option as --level */
    snprintf(args, sizeof args, "--obj '%s' --zone '%s' --out '%s/nodeck' --skip-node deck --quiet", glb, zone, dir);
    cr_assert_eq(run_tool("navbake/navbake", args), 0, "%s", g_out);
    cr_assert_str_eq(g_out, "");
    snprintf(args, sizeof args, "--pack '%s/nodeck/base.nav.gz' --zone plaza --from 1.5,-1.5 --to 18,-3", dir);
    run_tool("navplan/navplan", args);
    cr_assert(strstr(g_out, "\"snap_goal\":0,") == NULL, "no deck: the goal snaps to the ground: %s", g_out);
    /* a --node that matches nothing: exit 1, one line naming the file */
    snprintf(args, sizeof args, "--level '%s' --out '%s/x' --node decks", glb, dir);
    cr_assert_eq(run_tool("navbake/navbake", args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "plaza.glb: --node 'decks' matches no node") != NULL, "%s", g_out);
    snprintf(args, sizeof args, "--level '%s' --out '%s/x' --node", glb, dir);
    cr_assert_eq(run_tool("navbake/navbake", args), 2, "%s", g_out);
    tg_free(&b);
    free(glb);
    free(zone);
    tmp_remove(dir);
    free(dir);
}
