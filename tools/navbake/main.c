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
            "       navbake --info FILE\n"
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
            "                     named after the file, u = 0.75 x, v = -0.75 z\n"
            "  --scale S          multiply the level's coordinates by S (Cube 2 levels: 0.12)\n"
            "  --walkable-as-is   the level's triangles are the navmesh (no Recast)\n"
            "  --workers N        worker threads (1..4; default: cores); output does not depend on it\n"
            "  --no-grid          skip the grid, fields and occluder outputs\n"
            "  --no-occluder      no base.occluder.gz; grid drops not gated by collision geometry\n"
            "  --quiet            no progress on stderr\n"
            "  --info FILE        recognise FILE by its magic and check it: a main pack (whole load,\n"
            "                     hash, grid, and the fields sidecar next to it), a fields sidecar\n"
            "                     (against the main pack next to it) or an occluder pack\n"
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

static int pack_info(const char *path)
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
        /* extent = max - min of the zone's vertices (the header's width/height is the largest
         * coordinate, which says nothing about size for a zone away from the origin) */
        float u0 = INFINITY, v0 = INFINITY, u1 = -INFINITY, v1 = -INFINITY;
        for (uint32_t t = z->first_tri; !tier && t < z->first_tri + z->tri_count && t < p.tri_count; t++)
            for (int k = 0; k < 3; k++) {
                if (p.tris[t].v[k] >= p.vert_count) continue;
                const nm_vertex *v = &p.verts[p.tris[t].v[k]];
                u0 = fminf(u0, v->u);
                u1 = fmaxf(u1, v->u);
                v0 = fminf(v0, v->v);
                v1 = fmaxf(v1, v->v);
            }
        if (u0 <= u1)
            printf(" extent %g x %g px (u %g..%g, v %g..%g)", (double)(u1 - u0), (double)(v1 - v0), u0, u1, v0, v1);
        printf(" transform [%g, %g, %g, %g]", z->t[0], z->t[1], z->t[2], z->t[3]);
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

/* "dir/x.fields.nav.gz" -> "dir/x.nav.gz" (the main pack a sidecar sits next to), or NULL. */
static char *main_of_sidecar(const char *path)
{
    size_t n = strlen(path);
    const char *suf[2] = {".fields.nav.gz", ".fields.nav"}, *rep[2] = {".nav.gz", ".nav"};
    for (int k = 0; k < 2; k++) {
        size_t m = strlen(suf[k]);
        if (n < m || strcmp(path + n - m, suf[k]) != 0) continue;
        char *out = nm_malloc(n + 1);
        if (out) snprintf(out, n + 1, "%.*s%s", (int)(n - m), path, rep[k]);
        return out;
    }
    return NULL;
}

/* The fields sidecar alone: its header; then, when its main pack sits next to it, the full
 * validation against that pack's build hash, file FNV and grid. */
static int fields_info(const char *path, const uint8_t *d, size_t n)
{
    nm_cursor c = nm_cur(d, n);
    (void)nm_cur_bytes(&c, 4);
    unsigned version = nm_cur_u16(&c);
    (void)nm_cur_u16(&c);
    unsigned long long hash = nm_cur_u64(&c), fnv = nm_cur_u64(&c);
    unsigned rules = nm_cur_u32(&c), nsec = nm_cur_u32(&c);
    if (c.bad) {
        fprintf(stderr, "navbake: %s: BNVF: header truncated (%zu bytes, needs %d)\n", path, n, NM_BNVF_HEADER_SIZE);
        return 1;
    }
    printf("%s: BNVF v%u fields sidecar, %zu bytes decompressed, %u sections, rules %u\n", path, version, n, nsec,
           rules);
    printf("bound to main pack build_hash %016llx  file_fnv %016llx\n", hash, fnv);
    if (version != NM_BNVF_VERSION || rules != NM_BNVF_RULES) {
        fprintf(stderr, "navbake: %s: BNVF: version %u rules %u, this build reads version %d rules %d\n", path,
                version, rules, NM_BNVF_VERSION, NM_BNVF_RULES);
        return 1;
    }
    char *main_path = main_of_sidecar(path);
    struct stat st;
    if (!main_path || stat(main_path, &st) != 0) {
        printf("main pack: %s missing, sidecar checked alone (header only)\n", main_path ? main_path : "(name not *.fields.nav.gz)");
        nm_free(main_path);
        return 0;
    }
    nm_pack p;
    nm_error err = {0};
    nm_pack_load_opts lo = {0};
    int rc = 1;
    if (nm_pack_load(main_path, &lo, &p, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        nm_free(main_path);
        return 1;
    }
    const nm_section *s = nm_pack_section(&p, "BGRD");
    nm_bgrd g;
    nm_bnvf f;
    if (!s || !s->bytes) {
        fprintf(stderr, "navbake: %s: main pack %s has no BGRD grid for this sidecar\n", path, main_path);
    } else if (nm_bgrd_parse(s->bytes, s->size, &g, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s: BGRD: %s\n", main_path, err.msg);
    } else {
        if (nm_bnvf_parse(d, n, path, p.build_hash, p.file_fnv, &g, &f, &err) != NM_OK) {
            fprintf(stderr, "navbake: %s (against main pack %s)\n", err.msg, main_path);
        } else {
            printf("main pack: %s: sidecar valid against it, %u zones, %u links, %u openable cells\n", main_path,
                   f.zone_count, f.link_count, f.open_count);
            nm_bnvf_free(&f);
            rc = 0;
        }
        nm_bgrd_free(&g);
    }
    nm_pack_free(&p);
    nm_free(main_path);
    return rc;
}

/* The occluder pack alone: an OCLS container (every record decoded) or a bare OCLZ scene; zone
 * names checked against the main pack (dir/base.nav.gz) when it sits next to it. */
static int occluder_file_info(const char *path, const uint8_t *d, size_t n)
{
    uint8_t *wrapped = NULL;
    if (memcmp(d, "OCLZ", 4) == 0) {
        /* a bare scene: wrapped in a one-record container with an empty name for the reader */
        wrapped = nm_malloc(n + 18);
        if (!wrapped) {
            fprintf(stderr, "navbake: %s: out of memory\n", path);
            return 1;
        }
        const uint32_t le[3] = {NM_OCC_kContainerVersion, 1, (uint32_t)n}; /* version, count, body length */
        memcpy(wrapped, "OCLS", 4);
        for (int k = 0; k < 4; k++) {
            wrapped[4 + k] = (uint8_t)(le[0] >> (8 * k));
            wrapped[8 + k] = (uint8_t)(le[1] >> (8 * k));
            wrapped[14 + k] = (uint8_t)(le[2] >> (8 * k));
        }
        wrapped[12] = wrapped[13] = 0; /* name length 0 */
        memcpy(wrapped + 18, d, n);
        d = wrapped;
        n += 18;
    }
    nm_cursor c = nm_cur(d, n);
    (void)nm_cur_bytes(&c, 4);
    uint32_t version = nm_cur_u32(&c), count = nm_cur_u32(&c);
    if (c.bad) {
        fprintf(stderr, "navbake: %s: OCLS: header truncated (%zu bytes, needs 12)\n", path, n);
        nm_free(wrapped);
        return 1;
    }
    /* the main pack next to it, for its zone names (optional) */
    const char *slash = strrchr(path, '/');
    size_t dn = slash ? (size_t)(slash - path) + 1 : 0;
    char main_path[4096];
    snprintf(main_path, sizeof main_path, "%.*sbase.nav.gz", (int)dn, path);
    nm_pack p;
    memset(&p, 0, sizeof p);
    nm_error err = {0};
    nm_pack_load_opts lo = {0};
    struct stat st;
    bool have_main = !wrapped && stat(main_path, &st) == 0 && nm_pack_load(main_path, &lo, &p, &err) == NM_OK;
    int rc = 0;
    size_t triangles = 0;
    for (uint32_t r = 0; r < count && rc == 0; r++) {
        uint16_t nl = nm_cur_u16(&c);
        const uint8_t *name = nm_cur_bytes(&c, nl);
        uint32_t len = nm_cur_u32(&c);
        if (c.bad || !nm_cur_bytes(&c, len)) {
            fprintf(stderr, "navbake: %s: OCLS: record %u of %u runs past the end\n", path, r, count);
            rc = 1;
            break;
        }
        char zone[256];
        snprintf(zone, sizeof zone, "%.*s", (int)nl, (const char *)name);
        nm_occ_scene *sc = NULL;
        if (nm_occ_load_bytes(d, n, zone, path, &sc, &err) != NM_OK) {
            fprintf(stderr, "navbake: %s\n", err.msg);
            rc = 1;
            break;
        }
        nm_occ_info inf;
        memset(&inf, 0, sizeof inf);
        if (sc) nm_occ_scene_info(sc, &inf);
        nm_occ_free(sc);
        triangles += inf.triangles;
        printf("occluder zone '%s': templates %u, instances %u, terrain blocks %u, triangles %zu", wrapped ? "(bare OCLZ)" : zone,
               inf.templates, inf.instances, inf.blocks, inf.triangles);
        if (have_main) printf(nm_pack_find_zone(&p, zone) >= 0 ? ", in %s" : ", NOT a zone of %s", main_path);
        printf("\n");
        if (have_main && nm_pack_find_zone(&p, zone) < 0) {
            fprintf(stderr, "navbake: %s: OCLS record %u: zone '%s' is not a zone of %s\n", path, r, zone, main_path);
            rc = 1;
        }
    }
    if (rc == 0 && nm_cur_left(&c) != 0) {
        fprintf(stderr, "navbake: %s: OCLS: %zu bytes after record %u\n", path, nm_cur_left(&c), count);
        rc = 1;
    }
    if (rc == 0)
        printf("%s: %s v%u, %zu bytes decompressed, %u zones, %zu triangles%s\n", path, wrapped ? "OCLZ scene" : "OCLS",
               version, wrapped ? n - 18 : n, count, triangles,
               wrapped ? "" : have_main ? ", zone names checked against the main pack" : ", main pack not next to it");
    if (have_main) nm_pack_free(&p);
    nm_free(wrapped);
    return rc;
}

/* --info FILE: which of the three files it is, by its magic; each checked as far as it can be. */
static int info(const char *path)
{
    uint8_t *d = NULL;
    size_t n = 0;
    nm_error err = {0};
    if (nm_file_read(path, 0, &d, &n, &err) != NM_OK) {
        fprintf(stderr, "navbake: %s\n", err.msg);
        return 1;
    }
    int rc;
    if (n >= 4 && memcmp(d, "BNAV", 4) == 0) {
        rc = -1;
    } else if (n >= 4 && memcmp(d, "BNVF", 4) == 0) {
        rc = fields_info(path, d, n);
    } else if (n >= 4 && (memcmp(d, "OCLS", 4) == 0 || memcmp(d, "OCLZ", 4) == 0)) {
        rc = occluder_file_info(path, d, n);
    } else {
        char m[5] = {0};
        for (size_t i = 0; i < 4 && i < n; i++) m[i] = d[i] >= 32 && d[i] < 127 ? (char)d[i] : '?';
        fprintf(stderr,
                "navbake: %s: magic \"%s\" is none of BNAV (main pack), BNVF (fields sidecar), OCLS/OCLZ (occluder)\n",
                path, m);
        rc = 1;
    }
    nm_free(d);
    return rc < 0 ? pack_info(path) : rc;
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
