/* test_cli.c — the navbake command: usage and exit codes (0 done, 1 error with a message, 2 bad
 * arguments), a bake to a new folder, --info on a good and a bad pack, --quiet. */
#include "util.h"
#include "recast_shim.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char g_out[1 << 16];

/* Runs navbake with args; stdout+stderr go to g_out; returns the exit code (-1 on a signal). */
static int run(const char *args)
{
    const char *build = getenv("NM_BUILD_ROOT");
    if (!build) cr_skip_test("NM_BUILD_ROOT is not set");
    char out_path[] = "/tmp/nm_cli_XXXXXX";
    int fd = mkstemp(out_path);
    cr_assert_geq(fd, 0);
    close(fd);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/tools/navbake/navbake' %s >'%s' 2>&1", build, args, out_path);
    int st = system(cmd);
    FILE *f = fopen(out_path, "rb");
    size_t n = f ? fread(g_out, 1, sizeof g_out - 1, f) : 0;
    g_out[n] = 0;
    if (f) fclose(f);
    remove(out_path);
    if (!WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

Test(cli, help_and_bad_arguments)
{
    cr_assert_eq(run("--help"), 0);
    cr_assert(strstr(g_out, "usage: navbake") != NULL, "%s", g_out);
    cr_assert_eq(run(""), 2);
    cr_assert(strstr(g_out, "usage: navbake") != NULL);
    cr_assert_eq(run("--obj x.obj"), 2, "--out is required");
    cr_assert_eq(run("--obj x.obj --out /tmp/x --scale -1"), 2);
    cr_assert(strstr(g_out, "--scale") != NULL);
    cr_assert_eq(run("--obj x.obj --out /tmp/x --workers two"), 2);
    cr_assert_eq(run("--obj x.obj --out /tmp/x --frobnicate"), 2);
    cr_assert_eq(run("--obj"), 2, "an option without its value");
}

Test(cli, bake_info_and_errors)
{
    char *dir = tmp_dir();
    char *obj = write_text(dir, "plaza.obj",
                           "v 0 0 0\nv 10 0 0\nv 10 0 10\nv 0 0 10\nv 20 0 0\nv 20 0 10\n"
                           "g ground\nf 1 4 3 2\ng water\nf 2 3 6 5\n");
    char *zone = write_text(dir, "zone.json",
                            "{\"zones\": [{\"name\": \"plaza\", \"floor_y\": 1.5, \"tiers\": [{\"name\": \"plaza_up\"}]}],"
                            " \"areas\": {\"water\": 12}}");
    char args[2048];
    snprintf(args, sizeof args, "--obj '%s' --zone '%s' --out '%s/out/deep' --walkable-as-is --workers 2", obj, zone, dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "walkable mesh") != NULL, "progress on stderr: %s", g_out);
    snprintf(args, sizeof args, "--info '%s/out/deep/base.nav.gz'", dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "BNAV v5") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "4 triangles") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "zone 'plaza' id 1") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "zone 'plaza_up' id 2 tier of zone 1") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "floor_y 1.5") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "walkable triangles 2, unwalkable 2") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "build_hash ") != NULL && strstr(g_out, "section BGEO") != NULL, "%s", g_out);

    /* --quiet: nothing on stderr for a good bake; the default zone is named after the file. */
    snprintf(args, sizeof args, "--obj '%s' --out '%s/q' --walkable-as-is --quiet", obj, dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert_str_eq(g_out, "");
    snprintf(args, sizeof args, "--info '%s/q/base.nav.gz'", dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "zone 'plaza' id 1") != NULL, "%s", g_out);

    /* Errors: exit 1 with a message naming the problem. */
    snprintf(args, sizeof args, "--obj '%s/missing.obj' --out '%s/m'", dir, dir);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "missing.obj") != NULL, "%s", g_out);
    char *bad = write_text(dir, "bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\n");
    snprintf(args, sizeof args, "--obj '%s' --out '%s/b' --walkable-as-is", bad, dir);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "bad.obj:3: face index 3 out of range") != NULL, "%s", g_out);
    char *badzone = write_text(dir, "bad.json", "{\"offmesh\": [{\"zone\": \"nowhere\", \"from\": [0,0,0], \"to\": [1,0,1]}]}");
    snprintf(args, sizeof args, "--obj '%s' --zone '%s' --out '%s/z' --walkable-as-is", obj, badzone, dir);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "offmesh[0].zone: unknown zone 'nowhere'") != NULL, "%s", g_out);
    char *junk = write_text(dir, "junk.nav", "BNAV but not really a pack");
    snprintf(args, sizeof args, "--info '%s'", junk);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "navbake: ") != NULL && strlen(g_out) > 12, "%s", g_out);
    char *lonely = write_text(dir, "lonely.obj", "v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1 3 2\n");
    snprintf(args, sizeof args, "--obj '%s' --out '%s/l' --walkable-as-is", lonely, dir);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "level has no adjacent triangles") != NULL, "%s", g_out);
    free(obj);
    free(zone);
    free(bad);
    free(badzone);
    free(junk);
    free(lonely);
    tmp_remove(dir);
    free(dir);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

Test(cli, the_same_level_gives_the_same_file_for_one_and_four_workers)
{
    char obj[1024];
    snprintf(obj, sizeof obj, "%s/resources/levels/recast-navtest/nav_test.obj", source_root());
    char *dir = tmp_dir();
    char args[2048], path[2][1100];
    int workers[2] = {1, 4};
    for (int i = 0; i < 2; i++) {
        /* --walkable-as-is when Recast is missing keeps the test meaningful either way. */
        snprintf(args, sizeof args, "--obj '%s' --out '%s/w%d' --workers %d --quiet%s", obj, dir, workers[i], workers[i],
                 nm_rc_available() ? "" : " --walkable-as-is");
        cr_assert_eq(run(args), 0, "%s", g_out);
        snprintf(path[i], sizeof path[i], "%s/w%d/base.nav.gz", dir, workers[i]);
    }
    size_t n0, n1;
    char *a = slurp(path[0], &n0), *b = slurp(path[1], &n1);
    cr_assert_gt(n0, 100);
    cr_assert(n0 == n1 && memcmp(a, b, n0) == 0, "base.nav.gz differs between --workers 1 and 4");
    free(a);
    free(b);
    tmp_remove(dir);
    free(dir);
}

/* --info on each of the three files navbake writes: recognised by its magic (not "bad magic (not
 * a BNAV main pack)" for the sidecar and the occluder), the sidecar validated against the main
 * pack next to it and alone when that is missing; zones report their extent (max - min), which
 * for a zone away from the origin is not its largest coordinate. */
Test(cli, info_reads_each_file_and_prints_zone_extent)
{
    char *dir = tmp_dir();
    /* x 40..60 m, z -20..-10 m: u = 0.75 x in 30..45 px, v = -0.75 z in 7.5..15 px */
    char *obj = write_text(dir, "yard.obj",
                           "v 40 0 -20\nv 60 0 -20\nv 60 0 -10\nv 40 0 -10\nv 50 0 -20\nv 50 0 -10\n"
                           "f 1 4 6 5\nf 5 6 3 2\n");
    char args[2048];
    snprintf(args, sizeof args, "--obj '%s' --out '%s/o' --walkable-as-is --quiet", obj, dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    snprintf(args, sizeof args, "--info '%s/o/base.nav.gz'", dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "extent 15 x 7.5 px (u 30..45, v 7.5..15)") != NULL, "%s", g_out);

    snprintf(args, sizeof args, "--info '%s/o/base.fields.nav.gz'", dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "BNVF v2 fields sidecar") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "sidecar valid against it") != NULL, "%s", g_out);

    snprintf(args, sizeof args, "--info '%s/o/base.occluder.gz'", dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, ": OCLS v1") != NULL, "%s", g_out);
    cr_assert(strstr(g_out, "zone names checked against the main pack") != NULL, "%s", g_out);

    /* the sidecar alone (no main pack next to it): its header is still read and checked */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/alone' && cp '%s/o/base.fields.nav.gz' '%s/alone/'", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "--info '%s/alone/base.fields.nav.gz'", dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    cr_assert(strstr(g_out, "missing, sidecar checked alone") != NULL, "%s", g_out);

    /* a sidecar next to a main pack it does not belong to: exit 1 naming the check */
    snprintf(args, sizeof args, "--obj '%s' --out '%s/p' --walkable-as-is --quiet --scale 2", obj, dir);
    cr_assert_eq(run(args), 0, "%s", g_out);
    snprintf(cmd, sizeof cmd, "cp '%s/o/base.fields.nav.gz' '%s/p/base.fields.nav.gz'", dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "--info '%s/p/base.fields.nav.gz'", dir);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "build_hash") != NULL, "%s", g_out);

    /* any other file: its magic named, and the three the tool reads */
    char *junk = write_text(dir, "junk.bin", "PNG? not a pack");
    snprintf(args, sizeof args, "--info '%s'", junk);
    cr_assert_eq(run(args), 1, "%s", g_out);
    cr_assert(strstr(g_out, "magic \"PNG?\" is none of BNAV") != NULL, "%s", g_out);
    free(obj);
    free(junk);
    tmp_remove(dir);
    free(dir);
}
