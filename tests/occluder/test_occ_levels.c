/* test_occ_levels.c — real level meshes made by others (../shared/data/levels) through the
 * occluder pack: written as a group, read back exactly, and the trees checked against brute force
 * on many sampling columns and slanted segments. Skips cleanly when the shared data is absent. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "occ_fixture.h"

typedef struct mesh {
    float *xyz;
    uint32_t *tri;
    uint32_t nv, nt, cv, ct;
} mesh;

/* Minimal OBJ: "v x y z" and "f a b c ..." (a may be a/b/c; negative = relative), fan-split. */
static bool load_obj(const char *path, mesh *m)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    memset(m, 0, sizeof *m);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'v' && line[1] == ' ') {
            if (m->nv == m->cv) {
                m->cv = m->cv ? 2 * m->cv : 1024;
                m->xyz = realloc(m->xyz, 3 * sizeof(float) * m->cv);
            }
            float x, y, z;
            if (sscanf(line + 2, "%f %f %f", &x, &y, &z) == 3) {
                m->xyz[3 * m->nv] = x;
                m->xyz[3 * m->nv + 1] = y;
                m->xyz[3 * m->nv + 2] = z;
                m->nv++;
            }
        } else if (line[0] == 'f' && line[1] == ' ') {
            uint32_t idx[64];
            int k = 0;
            char *p = line + 2;
            while (k < 64) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p) break;
                idx[k++] = (uint32_t)(v < 0 ? (long)m->nv + v : v - 1);
                p = end;
                while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
            }
            for (int i = 1; i + 1 < k; i++) {
                if (m->nt == m->ct) {
                    m->ct = m->ct ? 2 * m->ct : 1024;
                    m->tri = realloc(m->tri, 3 * sizeof(uint32_t) * m->ct);
                }
                m->tri[3 * m->nt] = idx[0];
                m->tri[3 * m->nt + 1] = idx[i];
                m->tri[3 * m->nt + 2] = idx[i + 1];
                m->nt++;
            }
        }
    }
    fclose(f);
    return m->nt > 0;
}

typedef struct cmp_ctx {
    const mesh *m;
    size_t n, wrong;
} cmp_ctx;

static void cmp_tri(void *ctx, const double v[9], bool up)
{
    cmp_ctx *c = (cmp_ctx *)ctx;
    (void)up;
    if (c->n < c->m->nt)
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++)
                c->wrong += v[3 * k + a] != (double)c->m->xyz[3 * c->m->tri[3 * c->n + k] + a];
    c->n++;
}

static void check_level(const char *name, const char *file, uint32_t min_tris)
{
    const char *root = getenv("NM_SHARED_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/levels/%s/%s", root ? root : "", name, file);
    mesh m;
    if (!root || !load_obj(path, &m)) {
        cr_skip_test("%s not available", path);
        return;
    }
    cr_assert_geq(m.nt, min_tris);
    nm_occ_group g = {m.xyz, m.nv, m.tri, m.nt};
    nm_occ_zone_in z = {.name = name, .groups = &g, .group_count = 1};
    nm_buf b = {0};
    nm_error err = {0};
    cr_assert_eq(nm_occ_encode(&z, 1, &b, &err), NM_OK, "%s", err.msg);
    nm_occ_scene *s = NULL;
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, name, NULL, &s, &err), NM_OK, "%s", err.msg);
    nm_buf_free(&b);

    /* Every corner comes back bit for bit, in the original triangle order. */
    cmp_ctx cc = {&m, 0, 0};
    nm_occ_foreach_triangle(s, cmp_tri, &cc);
    cr_assert_eq(cc.n, m.nt);
    cr_assert_eq(cc.wrong, 0, "%zu corners differ", cc.wrong);

    /* Columns and slanted segments over the level's box: the tree agrees with brute force. */
    double lo[3] = {1e30, 1e30, 1e30}, hi[3] = {-1e30, -1e30, -1e30};
    for (uint32_t v = 0; v < m.nv; v++)
        for (int a = 0; a < 3; a++) {
            if (m.xyz[3 * v + a] < lo[a]) lo[a] = m.xyz[3 * v + a];
            if (m.xyz[3 * v + a] > hi[a]) hi[a] = m.xyz[3 * v + a];
        }
    uint64_t seed = 12345;
    size_t total = 0;
    for (int k = 0; k < 300; k++) {
        double p0[3], p1[3];
        for (int a = 0; a < 3; a++) {
            p0[a] = lo[a] + (hi[a] - lo[a]) * lcg_unit(&seed);
            p1[a] = lo[a] + (hi[a] - lo[a]) * lcg_unit(&seed);
        }
        if (k % 2 == 0) {
            p0[0] = p1[0];
            p0[2] = p1[2];
            p0[1] = lo[1] - 1;
            p1[1] = hi[1] + 1;
        }
        size_t brute = 0;
        for (uint32_t i = 0; i < m.nt; i++) {
            double t, v[9];
            for (int c = 0; c < 3; c++)
                for (int a = 0; a < 3; a++) v[3 * c + a] = m.xyz[3 * m.tri[3 * i + c] + a];
            brute += nm_occ_segment_triangle(p0, p1, v, v + 3, v + 6, &t);
        }
        size_t got = nm_occ_segment_hits(s, p0, p1, NULL, 0);
        cr_assert_eq(got, brute, "%s segment %d: tree %zu, brute force %zu", name, k, got, brute);
        total += brute;
    }
    cr_assert_gt(total, 50, "segments must meet the level (%zu)", total);
    nm_occ_free(s);
    free(m.xyz);
    free(m.tri);
}

Test(levels, recast_dungeon_round_trips_and_trees_agree) { check_level("recast-dungeon", "dungeon.obj", 10000); }

Test(levels, undulating_terrain_far_from_origin) { check_level("recast-undulating", "undulating.obj", 5000); }

Test(levels, navtest_ngon_faces) { check_level("recast-navtest", "nav_test.obj", 1000); }

Test(levels, multi_storey_house) { check_level("dotrecast-house", "house.obj", 4000); }

Test(levels, walkways) { check_level("godot-navlevel", "level_mesh.obj", 100); }

Test(levels, bridges_over_water) { check_level("navcat-bridges", "bridges.obj", 7000); }

Test(levels, stacked_arena_sixty_thousand_triangles) { check_level("sauer-pandora", "pandora.obj", 60000); }
