/* main.c — the navbake command: argument parsing, progress on stderr, `--info` pack summaries.
 * The work itself lives in bake.c (pipeline), config.c (zone.json) and obj.c (OBJ reader).
 * Exit codes: 0 done, 1 any error (with a message), 2 bad arguments (with the usage). */
#include "bake.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: navbake --obj LEVEL.obj --out DIR [--zone ZONE.json] [--scale S]\n"
            "               [--walkable-as-is] [--workers N] [--quiet]\n"
            "       navbake --info PACK\n"
            "       navbake --help\n"
            "\n"
            "Bakes DIR/base.nav.gz (BNAV v5) from a Wavefront OBJ level (world metres, +Y up).\n"
            "  --obj LEVEL.obj    level geometry (.obj or .obj.gz)\n"
            "  --out DIR          output folder (created when missing)\n"
            "  --zone ZONE.json   zones, transforms, tiers, areas, collision-only groups, obstacles,\n"
            "                     off-mesh links (tools/navbake/ZONE_JSON.md); default: one zone\n"
            "                     named after the OBJ, u = 0.75 x, v = -0.75 z\n"
            "  --scale S          multiply OBJ coordinates by S (Cube 2 levels: 0.12)\n"
            "  --walkable-as-is   the OBJ triangles are the navmesh (no Recast)\n"
            "  --workers N        worker threads (1..4; default: cores); output does not depend on it\n"
            "  --quiet            no progress on stderr\n"
            "  --info PACK        check a pack (whole load, hash) and print a summary\n");
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void on_progress(void *ctx, const char *stage, double frac)
{
    double *t0 = ctx;
    if (frac <= 0.0) {
        *t0 = now_s();
        fprintf(stderr, "navbake: %-18s ...\n", stage);
    } else {
        fprintf(stderr, "navbake: %-18s %3.0f%%  %.2f s\n", stage, frac * 100.0, now_s() - *t0);
    }
}

/* "dir/level.obj.gz" -> "level" */
static void zone_name_from_path(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, cap, "%s", base);
    size_t n = strlen(out);
    if (n > 3 && strcmp(out + n - 3, ".gz") == 0) out[n - 3] = 0;
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
    if (!out[0]) snprintf(out, cap, "zone");
}

static int info(const char *path)
{
    nm_pack p;
    nm_error err = {0};
    nm_pack_load_opts lo = {0};
    if (nm_pack_load(path, &lo, &p, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        return 1;
    }
    printf("%s: BNAV v%u, %u zones, %u vertices, %u triangles, %u links\n", path, p.version, p.zone_count,
           p.vert_count, p.tri_count, p.link_count);
    printf("build_hash %016llx  file_fnv %016llx\n", (unsigned long long)p.build_hash, (unsigned long long)p.file_fnv);
    for (uint32_t i = 0; i < p.zone_count; i++) {
        const nm_zone *z = &p.zones[i];
        bool tier = (z->flags & NM_ZONE_FLAG_TIER) != 0;
        printf("zone '%s' id %u", z->name, z->id);
        if (tier)
            printf(" tier of zone %u", z->component_count);
        else
            printf(" triangles %u (from %u) components %u", z->tri_count, z->first_tri, z->component_count);
        printf(" size %g x %g px transform [%g, %g, %g, %g]", z->width, z->height, z->t[0], z->t[1], z->t[2], z->t[3]);
        if (z->floor_y > NM_kFloorYValidMin)
            printf(" floor_y %g\n", z->floor_y);
        else
            printf(" floor_y none\n");
    }
    for (uint32_t i = 0; i < p.section_count; i++) {
        const nm_section *s = &p.sections[i];
        printf("section %.4s offset %llu size %llu\n", s->tag, (unsigned long long)s->offset, (unsigned long long)s->size);
    }
    uint32_t walk = 0;
    for (uint32_t t = 0; t < p.surface_count; t++) walk += (p.surfaces[t].flags & NM_kWalkableFlags) != 0;
    if (p.surface_count == 0) walk = p.tri_count; /* no BSRF: all walkable */
    printf("walkable triangles %u, unwalkable %u\n", walk, p.tri_count - walk);
    if (p.boml_version) printf("off-mesh links %u (BOML v%u)\n", p.offmesh_count, p.boml_version);
    nm_pack_free(&p);
    return 0;
}

static bool parse_double(const char *s, double *out)
{
    char *end = NULL;
    double d = strtod(s, &end);
    if (!*s || *end || !isfinite(d)) return false;
    *out = d;
    return true;
}

int main(int argc, char **argv)
{
    const char *obj_path = NULL, *out_dir = NULL, *zone_path = NULL, *info_path = NULL;
    double scale = 1.0;
    int workers = 0;
    bool as_is = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--obj") == 0 && has_val) {
            obj_path = argv[++i];
        } else if (strcmp(a, "--out") == 0 && has_val) {
            out_dir = argv[++i];
        } else if (strcmp(a, "--zone") == 0 && has_val) {
            zone_path = argv[++i];
        } else if (strcmp(a, "--info") == 0 && has_val) {
            info_path = argv[++i];
        } else if (strcmp(a, "--scale") == 0 && has_val) {
            if (!parse_double(argv[++i], &scale) || scale <= 0) {
                fprintf(stderr, "navbake: --scale needs a positive number, not '%s'\n", argv[i]);
                usage(stderr);
                return 2;
            }
        } else if (strcmp(a, "--workers") == 0 && has_val) {
            double w;
            if (!parse_double(argv[++i], &w) || w != floor(w) || w < 1 || w > 64) {
                fprintf(stderr, "navbake: --workers needs an integer 1..64, not '%s'\n", argv[i]);
                usage(stderr);
                return 2;
            }
            workers = (int)w;
        } else if (strcmp(a, "--walkable-as-is") == 0) {
            as_is = true;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else {
            fprintf(stderr, "navbake: %s '%s'\n", a[0] == '-' && !has_val ? "missing value or unknown option" : "unknown argument", a);
            usage(stderr);
            return 2;
        }
    }
    if (info_path) {
        if (obj_path || out_dir || zone_path) {
            fprintf(stderr, "navbake: --info takes no other options\n");
            usage(stderr);
            return 2;
        }
        return info(info_path);
    }
    if (!obj_path || !out_dir) {
        fprintf(stderr, "navbake: --obj and --out are required\n");
        usage(stderr);
        return 2;
    }

    nm_error err = {0};
    nm_obj obj;
    nm_bake_config cfg;
    char zname[256];
    zone_name_from_path(obj_path, zname, sizeof zname);
    double t0 = now_s();
    if (nm_obj_load(obj_path, &obj, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        return 1;
    }
    if (!quiet) fprintf(stderr, "navbake: read %s: %u vertices, %u triangles, %u groups (%.2f s)\n", obj_path,
                        obj.vert_count, obj.tri_count, obj.group_count, now_s() - t0);
    int rc = zone_path ? nm_bake_config_load(zone_path, zname, &cfg, &err) : nm_bake_config_default(zname, &cfg, &err);
    if (rc != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        nm_obj_free(&obj);
        return 1;
    }
    double stage_t0 = 0;
    nm_bake_opts opts = {.obj = &obj, .cfg = &cfg, .scale = scale, .walkable_as_is = as_is, .workers = workers,
                         .progress = quiet ? NULL : on_progress, .progress_ctx = &stage_t0};
    rc = nm_bake_to_dir(&opts, out_dir, &err);
    if (rc != NM_OK)
        fprintf(stderr, "navbake: %s\n", err.msg);
    else if (!quiet)
        fprintf(stderr, "navbake: wrote %s/base.nav.gz (%.2f s)\n", out_dir, now_s() - t0);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
    return rc == NM_OK ? 0 : 1;
}
