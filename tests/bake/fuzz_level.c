/* fuzz_level.c — libFuzzer target for navbake's level import through assimp (level.c): the first
 * byte picks the format (glb, gltf, fbx, dae), the rest is the file. Whatever imports must be a
 * valid nm_obj (indices in range, finite positions, groups named) and bake as-is or fail with a
 * message; whatever fails must say why, naming the file. It calls nm_level_parse, which runs assimp
 * in this process (nm_level_load, navbake's, runs it in a child): the fuzzer sees its crashes.
 * Built with -DNM_FUZZ_STANDALONE and gltf_write.c it is gen_level_seeds: writes the corpus
 * (tests/bake/corpus_level) from the tests' own writers. */
#include "bake.h"
#include "level.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kFormats[] = {"glb", "gltf", "fbx", "dae"};
enum { kFormatCount = 4 };

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_level: property broken: %s\n", what);
        abort(); /* a harness, not library code: the fuzzer needs the crash */
    }
}

/* assimp (not instrumented, not ours) leaks on some error paths of its FBX reader: those leaks
 * are suppressed by library name, which needs the full malloc stacks of the slow unwinder.
 * assimp also asks for what a file's counts claim (64 GB for a GLB with a mistyped key): a
 * failed allocation must return NULL, so its operator new throws and the import fails with
 * "std::bad_alloc" as in a normal build (our code checks every allocation). */
const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void) { return "fast_unwind_on_malloc=0:allocator_may_return_null=1"; }
const char *__lsan_default_suppressions(void) { return "leak:libassimp.so\n"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (64u << 10)) return 0;
    const char *fmt = kFormats[data[0] % kFormatCount];
    char name[32];
    snprintf(name, sizeof name, "fuzz.%s", fmt);
    nm_obj o;
    nm_error err = {0};
    nm_level_info info;
    int rc = nm_level_parse(data + 1, size - 1, fmt, name, NULL, &o, &info, &err);
    if (rc != NM_OK) {
        check(strstr(err.msg, name) != NULL, "an import error that does not name the file");
        return 0;
    }
    check(o.tri_count > 0, "an import without triangles");
    for (uint32_t v = 0; v < 3 * o.vert_count; v++) check(isfinite(o.pos[v]), "a non-finite position");
    for (uint32_t t = 0; t < o.tri_count; t++) {
        check(o.tri_group[t] < o.group_count, "a group index out of range");
        for (int k = 0; k < 3; k++) check(o.tris[3 * t + k] < o.vert_count, "a vertex index out of range");
    }
    for (uint32_t g = 0; g < o.group_count; g++) check(o.groups[g] && o.groups[g][0], "an unnamed group");
    if (o.tri_count <= 4096) {
        nm_bake_config cfg;
        check(nm_bake_config_default("fuzz", &cfg, &err) == NM_OK, "default config");
        nm_bake_opts bo = {.obj = &o, .cfg = &cfg, .walkable_as_is = true, .workers = 1};
        nm_pack p;
        rc = nm_bake_main_pack(&bo, &p, &err);
        check(rc == NM_OK || err.msg[0], "bake error without a message");
        if (rc == NM_OK) nm_pack_free(&p);
        nm_bake_config_free(&cfg);
    }
    nm_obj_free(&o);
    return 0;
}

#ifdef NM_FUZZ_STANDALONE
#include "gltf_write.h"

static int write_seed(const char *dir, const char *name, uint8_t fmt, const uint8_t *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(&fmt, 1, 1, f) != 1 || fwrite(p, 1, n, f) != n;
    if (f && fclose(f) != 0) bad = 1;
    if (bad) fprintf(stderr, "cannot write %s\n", path);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    tg_buf glb = tg_level_gltf(true, false), gltf = tg_level_gltf(false, false), fbx = tg_level_fbx("100");
    const char *dae = tg_level_dae();
    int bad = write_seed(argv[1], "level.glb", 0, glb.p, glb.size) |
              write_seed(argv[1], "level.gltf", 1, gltf.p, gltf.size) |
              write_seed(argv[1], "level.fbx", 2, fbx.p, fbx.size) |
              write_seed(argv[1], "level.dae", 3, (const uint8_t *)dae, strlen(dae));
    tg_free(&glb);
    tg_free(&gltf);
    tg_free(&fbx);
    return bad;
}
#endif
