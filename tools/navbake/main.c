/* main.c — the navbake command: argument parsing, progress on stderr, `--info` pack summaries.
 * The work itself lives in bake.c (pipeline), config.c (zone.json), level.c (level files:
 * obj.c for OBJ, assimp for glTF/GLB, FBX, Collada, ...).
 * Exit codes: 0 done, 1 any error (with a message), 2 bad arguments (with the usage). */
#include "bake.h"
#include "level.h"
#include "pack/grid_io.h"
#include "occluder.h"

#include <sys/stat.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: navbake --level LEVEL --out DIR [--zone ZONE.json] [--scale S]\n"
            "               [--node NAME]... [--skip-node NAME]...\n"
            "               [--walkable-as-is] [--workers N] [--no-grid] [--no-occluder] [--quiet]\n"
            "       navbake --info PACK\n"
            "       navbake --help\n"
            "\n"
            "Bakes DIR/base.nav.gz (BNAV v5) from a level file (world metres, +Y up).\n"
            "  --level LEVEL      level geometry: .obj / .obj.gz, or through assimp .glb, .gltf,\n"
            "                     .fbx, .dae and the other formats assimp reads (node names are\n"
            "                     the groups zone.json names); --obj is the same option\n"
            "  --node NAME        keep only this node's subtree (repeatable; \"x*\" = prefix;\n"
            "                     OBJ: this group)\n"
            "  --skip-node NAME   drop this node's subtree (repeatable; OBJ: this group)\n"
            "  --out DIR          output folder (created when missing)\n"
            "  --zone ZONE.json   zones, transforms, tiers, areas, collision-only groups, obstacles,\n"
            "                     off-mesh links (tools/navbake/ZONE_JSON.md); default: one zone\n"
            "                     named after the OBJ, u = 0.75 x, v = -0.75 z\n"
            "  --scale S          multiply OBJ coordinates by S (Cube 2 levels: 0.12)\n"
            "  --walkable-as-is   the OBJ triangles are the navmesh (no Recast)\n"
            "  --workers N        worker threads (1..4; default: cores); output does not depend on it\n"
            "  --no-grid          skip the grid, fields and occluder outputs\n"
            "  --no-occluder      no base.occluder.gz; grid drops not gated by collision geometry\n"
            "  --quiet            no progress on stderr\n"
            "  --info PACK        check a pack (whole load, hash) and its grid and fields sidecar\n"
            "                     (PACK's folder/base.fields.nav.gz) and print a summary\n"
            "\n"
            "Also writes (unless --no-grid) the BGRD grid section inside base.nav.gz,\n"
            "DIR/base.fields.nav.gz (BNVF) and DIR/base.occluder.gz (OCLS).\n");
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
    if (strncmp(stage, "grid '", 6) == 0) { /* a per-zone line of the grid stage */
        fprintf(stderr, "navbake:   %s\n", stage);
        return;
    }
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

/* The BGRD section and the fields sidecar next to the pack: per zone cells, records (own cells
 * only, every tile decoded), regions, tiles, BGRD bytes per record; the sidecar is validated
 * against the pack (build_hash, file FNV, zone table, per-tile record counts). */
static int grid_info(const char *path, const nm_pack *p)
{
    const nm_section *s = nm_pack_section(p, "BGRD");
    if (!s || !s->bytes) {
        printf("grid: none\n");
        return 0;
    }
    nm_error err = {0};
    nm_bgrd g;
    if (nm_bgrd_parse(s->bytes, s->size, &g, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s: BGRD: %s\n", path, err.msg);
        return 1;
    }
    /* the sidecar next to the pack, validated against it first */
    nm_bnvf f;
    bool have_f = false;
    {
        const char *slash = strrchr(path, '/');
        size_t dn = slash ? (size_t)(slash - path) + 1 : 0;
        char side[4096];
        snprintf(side, sizeof side, "%.*sbase.fields.nav.gz", (int)dn, path);
        struct stat st;
        if (stat(side, &st) != 0) {
            printf("fields: %s missing\n", side);
        } else if (nm_bnvf_load(side, p->build_hash, p->file_fnv, &g, &f, &err) != NM_OK) {
            fprintf(stderr, "navbake: %s\n", err.msg);
            nm_bgrd_free(&g);
            return 1;
        } else {
            have_f = true;
            printf("fields: %s valid, %lld bytes (%zu decompressed), %u zones, %u links, %u openable cells\n",
                   side, (long long)st.st_size, f.size, f.zone_count, f.link_count, f.open_count);
        }
    }
    int rc = 0;
    nm_bgrd_scratch sc;
    memset(&sc, 0, sizeof sc);
    nm_grid_rec *recs = NULL;
    size_t cap = 0;
    printf("grid: BGRD v%u, %u zones, %zu bytes\n", g.version, g.zone_count, g.size);
    for (uint32_t zi = 0; zi < g.zone_count && rc == 0; zi++) {
        const nm_bgrd_zone *z = &g.zones[zi];
        int64_t x0 = INT64_MAX, y0 = INT64_MAX, x1 = INT64_MIN, y1 = INT64_MIN;
        uint64_t records = 0, bytes = 0;
        for (uint32_t t = 0; t < z->tile_count && rc == 0; t++) {
            const nm_bgrd_tile *T = &z->tiles[t];
            if (T->gx0 + T->px0 < x0) x0 = T->gx0 + T->px0;
            if (T->gy0 + T->py0 < y0) y0 = T->gy0 + T->py0;
            if (T->gx0 + T->px1 + 1 > x1) x1 = T->gx0 + T->px1 + 1;
            if (T->gy0 + T->py1 + 1 > y1) y1 = T->gy0 + T->py1 + 1;
            bytes += T->len;
            if (T->records > cap) {
                nm_grid_rec *r2 = nm_realloc(recs, T->records * sizeof *r2);
                if (!r2) { fprintf(stderr, "navbake: out of memory\n"); rc = 1; break; }
                recs = r2;
                cap = T->records;
            }
            if (nm_bgrd_decode_tile(&g, zi, t, &sc, recs, &err) != NM_OK) {
                fprintf(stderr, "navbake: %s: BGRD: %s\n", path, err.msg);
                rc = 1;
                break;
            }
            for (uint32_t k = 0; k < T->records; k++) {
                int32_t cx = recs[k].cell % T->nx, cy = recs[k].cell / T->nx;
                records += cx >= T->px0 && cx <= T->px1 && cy >= T->py0 && cy <= T->py1;
            }
        }
        if (rc) break;
        uint64_t cells = z->tile_count ? (uint64_t)(x1 - x0) * (uint64_t)(y1 - y0) : 0;
        printf("grid zone '%s': cells %llu, records %llu, regions %u, tiles %u, bytes/record %.3f", z->name,
               (unsigned long long)cells, (unsigned long long)records, z->global_regions, z->tile_count,
               records ? (double)bytes / (double)records : 0.0);
        if (have_f && f.zone_of_bgrd[zi] >= 0) {
            const nm_bnvf_zone *fz = &f.zones[f.zone_of_bgrd[zi]];
            printf(", sidecar %llu bytes", (unsigned long long)(fz->spn_len + fz->scc_len + fz->wal_len));
        }
        printf("\n");
    }
    nm_free(recs);
    nm_bgrd_scratch_free(&sc);
    if (have_f) nm_bnvf_free(&f);
    nm_bgrd_free(&g);
    return rc;
}

/* The occluder pack next to the pack (base.occluder.gz), when present: per zone its templates,
 * instances, terrain blocks and placed triangles, read through the occluder reader. */
static int occluder_info(const char *path, const nm_pack *p)
{
    const char *slash = strrchr(path, '/');
    size_t dn = slash ? (size_t)(slash - path) + 1 : 0;
    char occ[4096];
    snprintf(occ, sizeof occ, "%.*sbase.occluder.gz", (int)dn, path);
    struct stat st;
    if (stat(occ, &st) != 0) {
        printf("occluder: %s missing\n", occ);
        return 0;
    }
    uint32_t zones = 0, templates = 0;
    size_t triangles = 0;
    for (uint32_t i = 0; i < p->zone_count; i++) {
        const nm_zone *z = &p->zones[i];
        if (z->flags & NM_ZONE_FLAG_TIER) continue;
        nm_error err = {0};
        nm_occ_scene *sc = NULL;
        if (nm_occ_load(occ, z->name, &sc, &err) != NM_OK) {
            fprintf(stderr, "navbake: %s\n", err.msg);
            return 1;
        }
        if (!sc) continue; /* no record: no collision geometry in this zone */
        nm_occ_info inf;
        nm_occ_scene_info(sc, &inf);
        printf("occluder zone '%s': templates %u, instances %u, terrain blocks %u, triangles %zu\n",
               z->name, inf.templates, inf.instances, inf.blocks, inf.triangles);
        zones++;
        templates += inf.templates;
        triangles += inf.triangles;
        nm_occ_free(sc);
    }
    printf("occluder: %s OCLS v%u, %lld bytes, %u zones, %u templates, %zu triangles\n", occ,
           NM_OCC_kContainerVersion, (long long)st.st_size, zones, templates, triangles);
    return 0;
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
    int rc = grid_info(path, &p);
    if (rc == 0) rc = occluder_info(path, &p);
    nm_pack_free(&p);
    return rc;
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
    /* --node / --skip-node names point into argv */
    enum { kMaxNodeArgs = 256 };
    static const char *nodes[kMaxNodeArgs], *skips[kMaxNodeArgs];
    uint32_t node_n = 0, skip_n = 0;
    double scale = 1.0;
    int workers = 0;
    bool as_is = false, quiet = false, no_grid = false, no_occ = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((strcmp(a, "--level") == 0 || strcmp(a, "--obj") == 0) && has_val) {
            obj_path = argv[++i];
        } else if ((strcmp(a, "--node") == 0 || strcmp(a, "--skip-node") == 0) && has_val) {
            bool keep = a[2] == 'n';
            if ((keep ? node_n : skip_n) == kMaxNodeArgs) {
                fprintf(stderr, "navbake: at most %d %s options\n", kMaxNodeArgs, a);
                return 2;
            }
            if (keep) nodes[node_n++] = argv[++i];
            else skips[skip_n++] = argv[++i];
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
        } else if (strcmp(a, "--no-grid") == 0) {
            no_grid = true;
        } else if (strcmp(a, "--no-occluder") == 0) {
            no_occ = true;
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
        fprintf(stderr, "navbake: --level (or --obj) and --out are required\n");
        usage(stderr);
        return 2;
    }

    nm_error err = {0};
    nm_obj obj;
    nm_bake_config cfg;
    char zname[256];
    zone_name_from_path(obj_path, zname, sizeof zname);
    double t0 = now_s();
    nm_level_opts lopts = {.nodes = nodes, .node_count = node_n, .skip = skips, .skip_count = skip_n};
    nm_level_info linfo;
    if (nm_level_load(obj_path, &lopts, &obj, &linfo, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        return 1;
    }
    if (!quiet) {
        fprintf(stderr, "navbake: read %s (%s): %u vertices, %u triangles, %u groups (%.2f s)\n", obj_path,
                linfo.importer, obj.vert_count, obj.tri_count, obj.group_count, now_s() - t0);
        if (linfo.nodes)
            fprintf(stderr, "navbake:   nodes %u, with meshes kept %u, skipped %u; mirrored %u; faces dropped %u"
                    " (points, lines, repeated vertex); unit %g m\n", linfo.nodes, linfo.nodes_kept,
                    linfo.nodes_skipped, linfo.mirrored, linfo.faces_dropped, linfo.unit_scale);
        else if (node_n || skip_n)
            fprintf(stderr, "navbake:   groups kept %u, skipped %u\n", linfo.nodes_kept, linfo.nodes_skipped);
        fprintf(stderr, "navbake:   bounds [%g, %g, %g] .. [%g, %g, %g] (metres before --scale)\n", linfo.bmin[0],
                linfo.bmin[1], linfo.bmin[2], linfo.bmax[0], linfo.bmax[1], linfo.bmax[2]);
    }
    int rc = zone_path ? nm_bake_config_load(zone_path, zname, &cfg, &err) : nm_bake_config_default(zname, &cfg, &err);
    if (rc != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        nm_obj_free(&obj);
        return 1;
    }
    double stage_t0 = 0;
    nm_bake_opts opts = {.obj = &obj, .cfg = &cfg, .scale = scale, .walkable_as_is = as_is, .workers = workers,
                         .progress = quiet ? NULL : on_progress, .progress_ctx = &stage_t0,
                         .no_grid = no_grid, .no_occluder = no_occ};
    rc = nm_bake_to_dir(&opts, out_dir, &err);
    if (rc != NM_OK)
        fprintf(stderr, "navbake: %s\n", err.msg);
    else if (!quiet)
        fprintf(stderr, "navbake: wrote %s/base.nav.gz (%.2f s)\n", out_dir, now_s() - t0);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
    return rc == NM_OK ? 0 : 1;
}
