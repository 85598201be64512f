/* gen_pack_seeds.c — writes the seed corpus of fuzz_pack (tests/fuzz/corpus/pack/): small valid
 * main packs with several chunks per table, a minimal one-triangle pack, and one with a BOML v1
 * section. Usage: gen_pack_seeds OUTDIR. */
#include <stdio.h>
#include <string.h>

#include "pack/pack.h"
#include "pack_fixture.h"

static int write_file(const char *dir, const char *name, const nm_buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->p, 1, b->size, f) != b->size) return 1;
    fclose(f);
    printf("%s: %zu bytes\n", path, b->size);
    return 0;
}

static int save(const char *dir, const char *name, nm_pack *p, const nm_pack_write_opts *o)
{
    nm_buf b = {0};
    nm_error err = {0};
    int rc = nm_pack_serialize(p, o, &b, &err);
    if (rc) fprintf(stderr, "%s: %s\n", name, err.msg);
    else rc = write_file(dir, name, &b);
    nm_buf_free(&b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_pack_seeds OUTDIR\n");
        return 2;
    }
    int bad = 0;
    nm_pack p;
    fx_build(&p, 1, 1);
    bad |= save(argv[1], "fixture_small_chunks.nav", &p, &(nm_pack_write_opts){.vert_chunk = 16, .tri_chunk = 8, .link_chunk = 20, .level = 9});
    bad |= save(argv[1], "fixture_one_chunk.nav", &p, &(nm_pack_write_opts){.level = 9});
    nm_pack_free(&p);

    /* Minimal: one zone "alpha", three vertices, one triangle, one link, no optional sections. */
    nm_zone z = {.id = 1, .first_tri = 0, .tri_count = 1, .component_count = 1, .width = 8, .height = 8,
                 .t = {1, 0, 1, 0}, .floor_y = NM_kFloorYNone, .name = "alpha", .name_len = 5};
    nm_vertex v[3] = {{0, 0, 0}, {4, 0, 1}, {0, 4, 2}};
    nm_tri t = {{0, 1, 2}, {-1, -1, -1}};
    uint32_t comp = 0;
    nm_link l = {0, 0};
    nm_pack m = {.version = 5, .zones = &z, .zone_count = 1, .verts = v, .vert_count = 3, .tris = &t,
                 .tri_count = 1, .components = &comp, .links = &l, .link_count = 1};
    bad |= save(argv[1], "minimal.nav", &m, &(nm_pack_write_opts){.level = 9});

    /* Tiny pack with every section: 2 zones + tier, chunk length 1 (one record per chunk). */
    fx_build(&p, 5, 1);
    p.zones[0].tri_count = 3, p.zones[1].first_tri = 3, p.zones[1].tri_count = 3;
    p.zones[3].first_tri = 6, p.zones[3].tri_count = 2, p.zones[4].first_tri = 8, p.zones[4].tri_count = 2;
    p.tri_count = p.surface_count = 10;
    for (uint32_t i = 0; i < 10; i++)
        for (int k = 0; k < 3; k++) {
            p.tris[i].v[k] %= 12;
            if (p.tris[i].nb[k] >= 10) p.tris[i].nb[k] = -1;
        }
    p.vert_count = 12;
    uint32_t nl = 0;
    for (uint32_t i = 0; i < p.link_count; i++)
        if (p.links[i].src < 10 && p.links[i].dst < 10 && nl < 12) p.links[nl++] = p.links[i];
    p.link_count = nl;
    for (uint32_t i = 0; i < p.offmesh_count; i++) {
        if (p.offmesh[i].start_tri != NM_BOML_NO_TRI) p.offmesh[i].start_tri %= 10;
        if (p.offmesh[i].end_tri != NM_BOML_NO_TRI) p.offmesh[i].end_tri %= 10;
    }
    bad |= save(argv[1], "tiny_all_sections.nav", &p, &(nm_pack_write_opts){.vert_chunk = 1, .tri_chunk = 1, .link_chunk = 1, .level = 9});
    nm_pack_free(&p);
    return bad;
}
