/* gen_occ_seeds.c — writes the fuzz seed corpus of the occluder reader (uncompressed OCLS
 * containers whose scene "z" has templates, quaternion and raw-matrix instances, groups and
 * terrain blocks with holes): gen_occ_seeds DIR. Regenerate after a format change. */
#include <stdio.h>

#include "occ_fixture.h"

static int put(const char *dir, const char *name, const nm_occ_zone_in *z, size_t n)
{
    nm_buf b = {0};
    nm_error err = {0};
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = nm_occ_encode(z, n, &b, &err);
    if (rc == NM_OK) rc = nm_file_write(path, b.p, b.size, &err);
    if (rc != NM_OK) fprintf(stderr, "%s: %s\n", path, err.msg);
    nm_buf_free(&b);
    return rc != NM_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_occ_seeds DIR\n");
        return 2;
    }
    static soup box;
    soup_box(&box, 0, 0, 0, 1, 2, 3);
    double local[3 * 24];
    for (uint32_t i = 0; i < box.nv * 3; i++) local[i] = box.xyz[i];
    nm_occ_template_in tm = {local, box.nv, box.tri, box.nt};
    nm_occ_instance_in in[3] = {0};
    in[0].q[0] = 0.2;
    in[0].q[3] = 0.9;
    in[0].scale[0] = 1.5;
    in[0].scale[1] = -2;
    in[0].scale[2] = 1;
    in[1].use_matrix = 1;
    for (int i = 0; i < 9; i++) in[1].matrix[i] = (float)(i + 1) * 0.25f;
    in[2].use_matrix = 1;
    in[2].matrix[0] = in[2].matrix[8] = 1; /* singular: flattened onto y = 0 */
    nm_occ_group g = soup_group(&box);
    float h[25];
    for (int i = 0; i < 25; i++) h[i] = (float)(i % 7) - 2;
    uint8_t holes[16] = {0, 1, 0, 0, 1};
    nm_occ_terrain_in tr = {.x0 = -1, .z0 = -1, .spacing = 1, .nx = 5, .nz = 5, .heights = h,
                            .holes = holes, .block_n = 3};
    nm_occ_zone_in full = {.name = "z", .templates = &tm, .template_count = 1, .instances = in,
                           .instance_count = 3, .groups = &g, .group_count = 1, .terrain = &tr};
    nm_occ_zone_in only_group = {.name = "z", .groups = &g, .group_count = 1};
    nm_occ_zone_in only_terrain = {.name = "z", .terrain = &tr};
    nm_occ_zone_in two[2] = {{.name = "other", .groups = &g, .group_count = 1}, full};
    int bad = 0;
    bad |= put(argv[1], "full.ocls", &full, 1);
    bad |= put(argv[1], "group.ocls", &only_group, 1);
    bad |= put(argv[1], "terrain.ocls", &only_terrain, 1);
    bad |= put(argv[1], "two_zones.ocls", two, 2);
    return bad;
}
