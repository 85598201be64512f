/* test_occ_geometry.c — the occluder pack's geometry: closed segment tests (edges, vertices,
 * endpoints, parallel), write → read round trips in world space, rotated / scaled / mirrored and
 * raw-matrix placements, terrain blocks with holes, the trees never missing a face, and the
 * article's pictured dropBlocked cases. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "occ_fixture.h"

static nm_occ_scene *load_zones(const nm_occ_zone_in *z, size_t nz, const char *zone)
{
    nm_buf b = {0};
    nm_error err = {0};
    int rc = nm_occ_encode(z, nz, &b, &err);
    cr_assert_eq(rc, NM_OK, "encode: %s", err.msg);
    nm_occ_scene *s = NULL;
    rc = nm_occ_load_bytes(b.p, b.size, zone, "test", &s, &err);
    cr_assert_eq(rc, NM_OK, "load: %s", err.msg);
    nm_buf_free(&b);
    return s;
}

/* ---- segment / triangle ------------------------------------------------------------------------- */
static const double TA[3] = {0, 0, 0}, TB[3] = {1, 0, 0}, TC[3] = {0, 0, 1};

static bool vhit(double x, double z, double *t)
{
    double p0[3] = {x, -1, z}, p1[3] = {x, 1, z};
    return nm_occ_segment_triangle(p0, p1, TA, TB, TC, t);
}

Test(segment, crossing_the_inside_hits_at_the_plane)
{
    double t = -1;
    cr_assert(vhit(0.25, 0.25, &t));
    cr_assert_float_eq(t, 0.5, 1e-15);
    double p0[3] = {0.2, 3, 0.1}, p1[3] = {0.2, -1, 0.1};
    cr_assert(nm_occ_segment_triangle(p0, p1, TA, TB, TC, &t), "the back side counts too");
    cr_assert_float_eq(t, 0.75, 1e-15);
}

Test(segment, edges_and_vertices_are_closed)
{
    double t;
    cr_assert(vhit(0.5, 0.0, &t), "edge a-b");
    cr_assert(vhit(0.0, 0.5, &t), "edge a-c");
    cr_assert(vhit(0.5, 0.5, &t), "edge b-c (u + v = 1)");
    cr_assert(vhit(0.0, 0.0, &t), "vertex a");
    cr_assert(vhit(1.0, 0.0, &t), "vertex b");
    cr_assert(vhit(0.0, 1.0, &t), "vertex c");
    cr_assert_not(vhit(0.5 + 1e-9, 0.5, &t), "just past edge b-c");
    cr_assert_not(vhit(-1e-12, 0.5, &t), "just past edge a-c");
    cr_assert_not(vhit(1.0 + 1e-12, 0.0, &t), "just past vertex b");
}

/* A column on the boundary edge of a floor (what the fall gate's projection gives for a cell just
 * outside a platform) meets the floor for every corner order and winding: the edge functions are
 * exactly 0 there, not a rounding error either side. */
Test(segment, columns_on_an_axis_aligned_boundary_edge_hit)
{
    const double q[4][3] = {{70, 4, -20}, {80, 4, -20}, {80, 4, -30}, {70, 4, -30}};
    static const int tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
    int misses = 0, tried = 0;
    for (int k = 0; k < 30; k++) {
        double z = -(20.0 + (k + 0.5) / 3.0), x = 70.0 + (k + 0.5) / 3.0;
        double cols[4][2] = {{80, z}, {70, z}, {x, -20}, {x, -30}}; /* east, west, north, south edges */
        for (int e = 0; e < 4; e++)
            for (int rot = 0; rot < 3; rot++)
                for (int flip = 0; flip < 2; flip++) {
                    bool any = false;
                    for (int t = 0; t < 2; t++) {
                        int i0 = tris[t][rot], i1 = tris[t][(rot + 1) % 3], i2 = tris[t][(rot + 2) % 3];
                        if (flip) { int tmp = i1; i1 = i2; i2 = tmp; }
                        double p0[3] = {cols[e][0], 4 - 0.39, cols[e][1]}, p1[3] = {cols[e][0], 4 + 0.39, cols[e][1]}, tt;
                        any |= nm_occ_segment_triangle(p0, p1, q[i0], q[i1], q[i2], &tt);
                    }
                    tried++;
                    misses += !any;
                }
    }
    cr_assert_eq(misses, 0, "%d of %d columns on the floor's edge missed it", misses, tried);
}

Test(segment, endpoints_on_the_plane_count)
{
    double t = -1;
    double a[3] = {0.25, 0, 0.25}, b[3] = {0.25, 1, 0.25}, c[3] = {0.25, -2, 0.25};
    cr_assert(nm_occ_segment_triangle(a, b, TA, TB, TC, &t));
    cr_assert_eq(t, 0.0);
    cr_assert(nm_occ_segment_triangle(c, a, TA, TB, TC, &t));
    cr_assert_eq(t, 1.0);
    double d[3] = {0.25, 1e-9, 0.25};
    cr_assert_not(nm_occ_segment_triangle(d, b, TA, TB, TC, &t), "stops short of the plane");
}

Test(segment, parallel_and_degenerate_never_hit)
{
    double t;
    double a[3] = {-1, 0, 0.2}, b[3] = {2, 0, 0.2};
    cr_assert_not(nm_occ_segment_triangle(a, b, TA, TB, TC, &t), "in the plane");
    double c[3] = {-1, 0.1, 0.2}, d[3] = {2, 0.1, 0.2};
    cr_assert_not(nm_occ_segment_triangle(c, d, TA, TB, TC, &t), "parallel above");
    double e[3] = {-1, -1e-13, 0.2}, f[3] = {2, 1e-13, 0.2};
    cr_assert_not(nm_occ_segment_triangle(e, f, TA, TB, TC, &t), "sin² below 1e-24");
    double g[3] = {-1, -1e-3, 0.2}, h[3] = {2, 1e-3, 0.2};
    cr_assert(nm_occ_segment_triangle(g, h, TA, TB, TC, &t), "a shallow but real crossing");
    const double D1[3] = {0, 0, 0}, D2[3] = {1, 0, 1}, D3[3] = {2, 0, 2};
    double p[3] = {1, -1, 1}, q[3] = {1, 1, 1};
    cr_assert_not(nm_occ_segment_triangle(p, q, D1, D2, D3, &t), "a degenerate triangle");
    /* A vertical face and a vertical segment: parallel, no crossing point. */
    const double V1[3] = {0, 0, 0}, V2[3] = {0, 1, 0}, V3[3] = {0, 0, 1};
    double r[3] = {0, -1, 0.2}, s2[3] = {0, 2, 0.2};
    cr_assert_not(nm_occ_segment_triangle(r, s2, V1, V2, V3, &t));
}

/* ---- round trips ---------------------------------------------------------------------------------- */
Test(roundtrip, groups_come_back_exactly_in_world_space)
{
    static soup s;
    memset(&s, 0, sizeof s);
    uint64_t seed = 7;
    for (int i = 0; i < 200; i++) soup_vertex(&s, 2000 * lcg_unit(&seed) - 1000, 50 * lcg_unit(&seed),
                                              2000 * lcg_unit(&seed) - 700);
    for (int i = 0; i < 150; i++)
        soup_tri(&s, (uint32_t)(lcg_unit(&seed) * 200), (uint32_t)(lcg_unit(&seed) * 200),
                 (uint32_t)(lcg_unit(&seed) * 200));
    static soup box;
    memset(&box, 0, sizeof box);
    soup_box(&box, 0.1, 0.2, 0.3, 1.7, 2.9, 3.3);
    nm_occ_group g[2] = {soup_group(&s), soup_group(&box)};
    nm_occ_zone_in z = {.name = "zone-a", .groups = g, .group_count = 2};
    nm_occ_scene *sc = load_zones(&z, 1, "zone-a");
    cr_assert_not_null(sc);
    nm_occ_info info;
    nm_occ_scene_info(sc, &info);
    cr_assert_eq(info.templates, 2);
    cr_assert_eq(info.instances, 2);
    cr_assert_eq(info.triangles, 162);
    cr_assert_eq(info.template_trees, 2, "both templates have more than 8 triangles");
    tri_list *l = calloc(1, sizeof *l);
    nm_occ_foreach_triangle(sc, tri_collect, l);
    cr_assert_eq(l->n, 162);
    for (size_t k = 0; k < 162; k++) {
        const soup *src = k < 150 ? &s : &box;
        size_t tk = k < 150 ? k : k - 150;
        for (int c = 0; c < 3; c++)
            for (int a = 0; a < 3; a++)
                cr_assert_eq(l->v[9 * k + 3 * c + a], (double)src->xyz[3 * src->tri[3 * tk + c] + a],
                             "triangle %zu corner %d axis %d", k, c, a);
    }
    /* The box keeps its facing: 2 top triangles up, 2 bottom down, the sides count either way. */
    int up = 0;
    for (size_t k = 150; k < 162; k++) up += l->up[k];
    cr_assert_geq(up, 2);
    free(l);
    nm_occ_free(sc);
}

Test(roundtrip, bytes_are_deterministic_and_files_read_back)
{
    static soup box;
    memset(&box, 0, sizeof box);
    soup_box(&box, -3, 0, -3, 3, 1, 3);
    nm_occ_group g = soup_group(&box);
    float h[16];
    for (int i = 0; i < 16; i++) h[i] = (float)(0.25 * (i % 4) + 0.5 * (i / 4));
    nm_occ_terrain_in tr = {.x0 = -8, .z0 = -8, .spacing = 2, .nx = 4, .nz = 4, .heights = h, .block_n = 3};
    nm_occ_zone_in z[3] = {{.name = "a", .groups = &g, .group_count = 1},
                           {.name = "b", .terrain = &tr},
                           {.name = "a", .groups = &g, .group_count = 1, .terrain = &tr}};
    nm_buf b1 = {0}, b2 = {0};
    nm_error err = {0};
    cr_assert_eq(nm_occ_encode(z, 3, &b1, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_occ_encode(z, 3, &b2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(b1.size, b2.size);
    cr_assert_eq(memcmp(b1.p, b2.p, b1.size), 0);

    char path[256];
    snprintf(path, sizeof path, "/tmp/occ_rt_%d.occluder.gz", (int)getpid());
    cr_assert_eq(nm_occ_write(path, z, 3, &err), NM_OK, "%s", err.msg);
    nm_occ_scene *a = NULL, *bz = NULL, *none = (nm_occ_scene *)1;
    cr_assert_eq(nm_occ_load(path, "a", &a, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_occ_load(path, "b", &bz, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_occ_load(path, "c", &none, &err), NM_OK, "%s", err.msg);
    cr_assert_null(none, "a zone without a record has no scene");
    nm_occ_info ia, ib;
    nm_occ_scene_info(a, &ia);
    nm_occ_scene_info(bz, &ib);
    /* The last record named "a" wins: it has the terrain (2×2 blocks of 3×3 samples, 9 cells). */
    cr_assert_eq(ia.instances, 1);
    cr_assert_eq(ia.blocks, 4);
    cr_assert_eq(ia.triangles, 12 + 18);
    cr_assert_eq(ib.instances, 0);
    cr_assert_eq(ib.triangles, 18);
    nm_occ_free(a);
    nm_occ_free(bz);
    remove(path);
    nm_buf_free(&b1);
    nm_buf_free(&b2);
}

/* R(q)·diag(s)·p + t in double, the test's own reading of formulas.md item 18. */
static void place(const double q[4], const double s[3], const double t[3], const double p[3], double o[3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                   2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                   2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
    for (int r = 0; r < 3; r++)
        o[r] = R[3 * r] * s[0] * p[0] + R[3 * r + 1] * s[1] * p[1] + R[3 * r + 2] * s[2] * p[2] + t[r];
}

static void quat_mul(const double a[4], const double b[4], double o[4])
{
    o[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    o[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    o[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    o[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

Test(placement, rotated_scaled_and_mirrored_instance_decodes)
{
    static soup cube;
    memset(&cube, 0, sizeof cube);
    soup_box(&cube, -0.5, -0.5, -0.5, 0.5, 0.5, 0.5);
    double local[3 * 24];
    for (uint32_t i = 0; i < cube.nv * 3; i++) local[i] = cube.xyz[i];
    nm_occ_template_in tm = {local, cube.nv, cube.tri, cube.nt};
    double qy[4] = {0, sin(0.5 * 0.5236), 0, cos(0.5 * 0.5236)}, qx[4] = {sin(0.5 * 0.349), 0, 0, cos(0.5 * 0.349)};
    nm_occ_instance_in in[3] = {0};
    quat_mul(qy, qx, in[0].q);
    in[0].scale[0] = 2.0;
    in[0].scale[1] = 0.5;
    in[0].scale[2] = -1.5; /* mirrored */
    in[0].t[0] = 10.25;
    in[0].t[1] = 2.0;
    in[0].t[2] = -5.125;
    /* The same quaternion written negated must decode to the same placement. */
    in[1] = in[0];
    for (int j = 0; j < 4; j++) in[1].q[j] = -in[0].q[j];
    in[1].t[0] = 30;
    /* Largest component not w: a half turn about x. */
    in[2].q[0] = 1;
    in[2].scale[0] = in[2].scale[1] = in[2].scale[2] = 1;
    in[2].t[0] = -20;
    nm_occ_zone_in z = {.name = "z", .templates = &tm, .template_count = 1, .instances = in, .instance_count = 3};
    nm_occ_scene *s = load_zones(&z, 1, "z");
    tri_list *l = calloc(1, sizeof *l);
    nm_occ_foreach_triangle(s, tri_collect, l);
    cr_assert_eq(l->n, 36);
    for (int i = 0; i < 3; i++)
        for (uint32_t k = 0; k < 12; k++)
            for (int c = 0; c < 3; c++) {
                double want[3];
                place(in[i].q, in[i].scale, in[i].t, local + 3 * cube.tri[3 * k + c], want);
                for (int a = 0; a < 3; a++)
                    cr_assert_float_eq(l->v[9 * (12 * i + k) + 3 * c + a], want[a], 1e-4,
                                       "instance %d triangle %u corner %d axis %d", i, k, c, a);
            }
    /* Facing survives the mirror: the cube's top stays up, its bottom down (faces 2, 3 = y). */
    for (int i = 0; i < 2; i++) {
        cr_assert_not(l->up[12 * i + 4] || l->up[12 * i + 5], "bottom of instance %d is down", i);
        cr_assert(l->up[12 * i + 6] && l->up[12 * i + 7], "top of instance %d is up", i);
    }
    /* A vertical line through the mirrored cube's centre meets its top and bottom once each. */
    nm_occ_hit hits[8];
    double p0[3] = {10.25, -10, -5.125}, p1[3] = {10.25, 10, -5.125};
    size_t n = nm_occ_segment_hits(s, p0, p1, hits, 8);
    cr_assert_eq(n, 2);
    cr_assert_neq(hits[0].up, hits[1].up);
    free(l);
    nm_occ_free(s);
}

Test(placement, raw_matrix_invertible_singular_and_non_finite)
{
    static soup tile;
    memset(&tile, 0, sizeof tile);
    soup_box(&tile, 0, 0, 0, 1, 1, 1);
    double local[3 * 24];
    for (uint32_t i = 0; i < tile.nv * 3; i++) local[i] = tile.xyz[i];
    nm_occ_template_in tm = {local, tile.nv, tile.tri, tile.nt};
    nm_occ_instance_in in[3] = {0};
    const float shear[9] = {1.5f, 0.25f, 0, 0, 2, 0, -0.5f, 0, 1};
    const float flat[9] = {1, 0, 0, 0, 0, 0, 0, 0, 1}; /* squashed onto y = t.y */
    in[0].use_matrix = in[1].use_matrix = in[2].use_matrix = 1;
    memcpy(in[0].matrix, shear, sizeof shear);
    memcpy(in[1].matrix, flat, sizeof flat);
    memcpy(in[2].matrix, flat, sizeof flat);
    in[2].matrix[4] = NAN;
    in[0].t[0] = 5;
    in[1].t[0] = 20;
    in[1].t[1] = 3;
    in[2].t[0] = 40;
    nm_occ_zone_in z = {.name = "z", .templates = &tm, .template_count = 1, .instances = in, .instance_count = 3};
    nm_occ_scene *s = load_zones(&z, 1, "z");
    nm_occ_info info;
    nm_occ_scene_info(s, &info);
    cr_assert_eq(info.world_instances, 2, "the singular and the NaN matrix are placed in world space");
    tri_list *l = calloc(1, sizeof *l);
    nm_occ_foreach_triangle(s, tri_collect, l);
    for (int i = 0; i < 2; i++)
        for (uint32_t k = 0; k < 12; k++)
            for (int c = 0; c < 3; c++) {
                const double *p = local + 3 * tile.tri[3 * k + c];
                for (int r = 0; r < 3; r++) {
                    double want = in[i].matrix[3 * r] * (double)p[0] + in[i].matrix[3 * r + 1] * (double)p[1] +
                                  in[i].matrix[3 * r + 2] * (double)p[2] + in[i].t[r];
                    cr_assert_float_eq(l->v[9 * (12 * i + k) + 3 * c + r], want, 1e-9);
                }
            }
    nm_occ_hit hits[16];
    /* Sheared box, y in [0, 2]: a column at (5.5, ·, 0.5) enters by the bottom, leaves by the top
     * (local (1/3, 0, 2/3) and (1/6, 1, 7/12): off the quads' diagonals). */
    double a0[3] = {5.5, -1, 0.5}, a1[3] = {5.5, 4, 0.5};
    cr_assert_eq(nm_occ_segment_hits(s, a0, a1, hits, 16), 2);
    /* The squashed box is a double sheet at y = 3: top and bottom both there. */
    double b0[3] = {20.5, 0, 0.5}, b1[3] = {20.5, 4, 0.5};
    size_t n = nm_occ_segment_hits(s, b0, b1, hits, 16);
    cr_assert_eq(n, 4, "two triangles of the top and two of the bottom meet at the diagonal");
    for (size_t k = 0; k < n; k++) cr_assert_float_eq(hits[k].t, 0.75, 1e-12);
    /* The NaN placement never hits, and nothing crashes. */
    double c0[3] = {40.5, -10, 0.5}, c1[3] = {40.5, 10, 0.5};
    cr_assert_eq(nm_occ_segment_hits(s, c0, c1, hits, 16), 0);
    free(l);
    nm_occ_free(s);
}

/* ---- terrain -------------------------------------------------------------------------------------- */
Test(terrain, block_with_a_hole_has_no_triangles_there)
{
    float h[25];
    for (int v = 0; v < 5; v++)
        for (int u = 0; u < 5; u++) h[5 * v + u] = (float)(0.5 * u + 0.25 * v + 1.0);
    uint8_t holes[16] = {0};
    holes[1 * 4 + 1] = 1; /* cell (1, 1) */
    nm_occ_terrain_in tr = {.x0 = 0, .z0 = 0, .spacing = 1, .nx = 5, .nz = 5, .heights = h,
                            .holes = holes, .block_n = 3};
    nm_occ_zone_in z = {.name = "t", .terrain = &tr};
    nm_occ_scene *s = load_zones(&z, 1, "t");
    nm_occ_info info;
    nm_occ_scene_info(s, &info);
    cr_assert_eq(info.blocks, 4);
    cr_assert_eq(info.triangles, 30);
    nm_occ_hit hits[8];
    double p0[3] = {1.5, -5, 1.5}, p1[3] = {1.5, 5, 1.5};
    cr_assert_eq(nm_occ_segment_hits(s, p0, p1, hits, 8), 0, "the hole cell");
    double q0[3] = {2.5, -5, 2.25}, q1[3] = {2.5, 5, 2.25};
    cr_assert_eq(nm_occ_segment_hits(s, q0, q1, hits, 8), 1);
    cr_assert(hits[0].up);
    cr_assert_float_eq(-5 + 10 * hits[0].t, 0.5 * 2.5 + 0.25 * 2.25 + 1.0, 1e-12);
    /* On a block seam (x = 2) both blocks' triangles meet the column: closed edges. */
    double r0[3] = {2.0, -5, 3.5}, r1[3] = {2.0, 5, 3.5};
    cr_assert_geq(nm_occ_segment_hits(s, r0, r1, hits, 8), 2);
    tri_list *l = calloc(1, sizeof *l);
    nm_occ_foreach_triangle(s, tri_collect, l);
    for (size_t k = 0; k < l->n; k++) {
        cr_assert(l->up[k]);
        for (int c = 0; c < 3; c++) {
            const double *p = l->v + 9 * k + 3 * c;
            cr_assert_float_eq(p[1], 0.5 * p[0] + 0.25 * p[2] + 1.0, 1e-12);
        }
    }
    free(l);
    nm_occ_free(s);
}

Test(terrain, ragged_fields_pad_with_holes)
{
    float h[4 * 6];
    for (int i = 0; i < 24; i++) h[i] = (float)i;
    nm_occ_terrain_in tr = {.x0 = 100, .z0 = -50, .spacing = 0.5, .nx = 4, .nz = 6, .heights = h, .block_n = 3};
    nm_occ_zone_in z = {.name = "t", .terrain = &tr};
    nm_occ_scene *s = load_zones(&z, 1, "t");
    nm_occ_info info;
    nm_occ_scene_info(s, &info);
    cr_assert_eq(info.blocks, 2 * 3);
    cr_assert_eq(info.triangles, 3 * 5 * 2);
    nm_occ_free(s);
}

/* ---- the trees only save work ---------------------------------------------------------------------- */
Test(tree, segment_hits_equal_brute_force)
{
    static soup rock;
    memset(&rock, 0, sizeof rock);
    uint64_t seed = 99;
    for (int i = 0; i < 60; i++) soup_vertex(&rock, 4 * lcg_unit(&seed) - 2, 4 * lcg_unit(&seed) - 2, 4 * lcg_unit(&seed) - 2);
    for (int i = 0; i < 40; i++)
        soup_tri(&rock, (uint32_t)(60 * lcg_unit(&seed)), (uint32_t)(60 * lcg_unit(&seed)), (uint32_t)(60 * lcg_unit(&seed)));
    double local[3 * 60];
    for (int i = 0; i < 180; i++) local[i] = rock.xyz[i];
    nm_occ_template_in tm = {local, rock.nv, rock.tri, rock.nt};
    nm_occ_instance_in in[40] = {0};
    for (int i = 0; i < 40; i++) {
        for (int j = 0; j < 4; j++) in[i].q[j] = lcg_unit(&seed) - 0.5;
        for (int a = 0; a < 3; a++) {
            in[i].scale[a] = (0.5 + 2 * lcg_unit(&seed)) * (lcg_unit(&seed) < 0.2 ? -1 : 1);
            in[i].t[a] = 60 * lcg_unit(&seed) - 30;
        }
        if (i % 7 == 3) {
            in[i].use_matrix = 1;
            for (int j = 0; j < 9; j++) in[i].matrix[j] = (float)(2 * lcg_unit(&seed) - 1);
        }
    }
    float h[81];
    for (int i = 0; i < 81; i++) h[i] = (float)(3 * lcg_unit(&seed) - 10);
    nm_occ_terrain_in tr = {.x0 = -30, .z0 = -30, .spacing = 7.5, .nx = 9, .nz = 9, .heights = h, .block_n = 5};
    nm_occ_zone_in z = {.name = "z", .templates = &tm, .template_count = 1, .instances = in,
                        .instance_count = 40, .terrain = &tr};
    nm_occ_scene *s = load_zones(&z, 1, "z");
    tri_list *l = calloc(1, sizeof *l);
    nm_occ_foreach_triangle(s, tri_collect, l);
    cr_assert_eq(l->n, 40 * 40 + 128);
    size_t total = 0;
    for (int k = 0; k < 2000; k++) {
        double p0[3], p1[3];
        for (int a = 0; a < 3; a++) {
            p0[a] = 70 * lcg_unit(&seed) - 35;
            p1[a] = p0[a] + (k % 3 == 0 ? 0 : 30 * lcg_unit(&seed) - 15);
        }
        if (k % 3 == 0) p1[1] = p0[1] + 40; /* vertical columns like dropBlocked's */
        size_t brute = 0;
        for (size_t i = 0; i < l->n; i++) {
            double t;
            brute += nm_occ_segment_triangle(p0, p1, l->v + 9 * i, l->v + 9 * i + 3, l->v + 9 * i + 6, &t);
        }
        size_t got = nm_occ_segment_hits(s, p0, p1, NULL, 0);
        cr_assert_eq(got, brute, "segment %d: tree %zu, brute force %zu", k, got, brute);
        total += brute;
    }
    cr_assert_gt(total, 200, "the segments must actually meet faces (%zu)", total);
    free(l);
    nm_occ_free(s);
}

/* ---- 台沿下落 dropBlocked: the article's figure and its plain ledge ------------------------------- */
/* An upper deck (top y = 5) ending at x = 10 and ground at y = 1; take-off (9.5, 5), landing (12, 1). */
static const double TAKE[3] = {9.5, 5.0, 0.0}, LAND[3] = {12.0, 1.0, 0.0};

static nm_occ_scene *ledge_scene(soup *extra, bool ground, bool terrain_ground)
{
    static soup deck, gnd;
    memset(&deck, 0, sizeof deck);
    memset(&gnd, 0, sizeof gnd);
    soup_box(&deck, -10, 4.5, -5, 10, 5, 5);
    soup_box(&gnd, -20, 0, -10, 30, 1, 10);
    nm_occ_group g[3];
    uint32_t ng = 0;
    g[ng++] = soup_group(&deck);
    if (ground && !terrain_ground) g[ng++] = soup_group(&gnd);
    if (extra) g[ng++] = soup_group(extra);
    static float h[9];
    for (int i = 0; i < 9; i++) h[i] = 1.0f;
    nm_occ_terrain_in tr = {.x0 = -20, .z0 = -20, .spacing = 20, .nx = 3, .nz = 3, .heights = h};
    nm_occ_zone_in z = {.name = "z", .groups = g, .group_count = ng,
                        .terrain = ground && terrain_ground ? &tr : NULL};
    return load_zones(&z, 1, "z");
}

Test(drop, plain_ledge_is_allowed)
{
    nm_occ_scene *s = ledge_scene(NULL, true, false);
    cr_assert_not(nm_occ_drop_blocked(s, TAKE, LAND));
    nm_occ_free(s);
    s = ledge_scene(NULL, true, true);
    cr_assert_not(nm_occ_drop_blocked(s, TAKE, LAND), "the same over a terrain block");
    nm_occ_free(s);
    cr_assert_not(nm_occ_drop_blocked(NULL, TAKE, LAND), "no collision geometry");
}

Test(drop, low_lip_at_the_edge_is_allowed)
{
    static soup lip;
    memset(&lip, 0, sizeof lip);
    soup_box(&lip, 9.8, 5.0, -5, 9.95, 5.25, 5); /* 0.25 high, below the curtain's 5.39 */
    nm_occ_scene *s = ledge_scene(&lip, true, false);
    cr_assert_not(nm_occ_drop_blocked(s, TAKE, LAND));
    nm_occ_free(s);
}

Test(drop, railing_on_the_way_out_is_blocked)
{
    static soup rail;
    memset(&rail, 0, sizeof rail);
    soup_box(&rail, 9.8, 5.0, -5, 9.95, 6.1, 5); /* top 6.1 crosses the 5.39 … 7.1 curtain */
    nm_occ_scene *s = ledge_scene(&rail, true, false);
    cr_assert(nm_occ_drop_blocked(s, TAKE, LAND));
    double lo[3] = {TAKE[0], 0, TAKE[2]}, hi[3] = {LAND[0], 0, LAND[2]};
    cr_assert(nm_occ_curtain_crossed(s, lo, hi, 5.39, 7.1));
    cr_assert_not(nm_occ_curtain_crossed(s, lo, hi, 6.1 + 1e-9, 7.1), "nothing above the rail");
    /* Parallel to the rail, never crossing it: allowed. */
    double t2[3] = {9.5, 5, -4}, l2[3] = {9.5, 5, 4};
    cr_assert_not(nm_occ_curtain_crossed(s, t2, l2, 5.39, 7.1));
    nm_occ_free(s);
    /* Without ground under the landing the early return allows it (step 2 before step 5). */
    s = ledge_scene(&rail, false, false);
    cr_assert_not(nm_occ_drop_blocked(s, TAKE, LAND));
    nm_occ_free(s);
}

Test(drop, slab_over_the_landing_is_blocked)
{
    static soup slab;
    memset(&slab, 0, sizeof slab);
    soup_box(&slab, 11, 3.0, -2, 13, 3.2, 2); /* underside 3.0: between 1.39 and 5.0 */
    nm_occ_scene *s = ledge_scene(&slab, true, true);
    cr_assert(nm_occ_drop_blocked(s, TAKE, LAND));
    double lo[3] = {TAKE[0], 0, TAKE[2]}, hi[3] = {LAND[0], 0, LAND[2]};
    cr_assert_not(nm_occ_curtain_crossed(s, lo, hi, 5.39, 7.1), "step 3 blocks, not the curtain");
    /* Beside the slab the landing is clear again. */
    double land2[3] = {12.0, 1.0, 4.0}, take2[3] = {9.5, 5.0, 4.0};
    cr_assert_not(nm_occ_drop_blocked(s, take2, land2));
    nm_occ_free(s);
}

/* The fall starts from the floor the take-off stands on (issue 12, scene building): a zone mesh
 * that blends a stair into the 0.3 m slab over it puts the take-off at 4.68, under the slab's top
 * (5.0) and just under its underside (4.7); the landing lies under the slab. The underside is
 * not below y_t (step 3), but it is below the take-off floor the L-shaped path starts from. */
Test(drop, take_off_floor_s_underside_over_the_landing_is_blocked)
{
    static soup slab, gnd;
    memset(&slab, 0, sizeof slab);
    memset(&gnd, 0, sizeof gnd);
    soup_box(&slab, -10, 4.7, -5, 10, 5.0, 5);
    soup_box(&gnd, -20, 0, -10, 30, 1, 10);
    nm_occ_group g[2] = {soup_group(&slab), soup_group(&gnd)};
    nm_occ_zone_in z = {.name = "z", .groups = g, .group_count = 2};
    nm_occ_scene *s = load_zones(&z, 1, "z");
    const double take[3] = {9.8, 4.68, 0.0}, under[3] = {9.5, 1.0, 0.0};
    cr_assert(nm_occ_drop_blocked(s, take, under), "the slab lies between the take-off floor and the landing");
    const double on_top[3] = {9.8, 5.0, 0.0};
    cr_assert(nm_occ_drop_blocked(s, on_top, under), "from the slab's top, step 3 already blocks");
    cr_assert_not(nm_occ_drop_blocked(s, take, LAND), "beside the slab the landing is clear");
    nm_occ_free(s);
}

Test(drop, no_floor_under_the_take_off_is_allowed)
{
    static soup rail;
    memset(&rail, 0, sizeof rail);
    soup_box(&rail, 11, 5.0, -5, 11.2, 8, 5);
    nm_occ_scene *s = ledge_scene(&rail, true, false);
    double take[3] = {9.5, 6.0, 0.0}; /* a metre above the deck: no floor within ± 0.39 */
    cr_assert_not(nm_occ_drop_blocked(s, take, LAND));
    cr_assert(nm_occ_drop_blocked(s, TAKE, LAND), "from the deck itself the wall blocks");
    nm_occ_free(s);
}

Test(drop, landing_floor_within_climb_counts)
{
    nm_occ_scene *s = ledge_scene(NULL, true, false);
    double land_hi[3] = {12.0, 1.38, 0.0}, land_far[3] = {12.0, 1.5, 0.0};
    static soup rail;
    memset(&rail, 0, sizeof rail);
    soup_box(&rail, 9.8, 5.0, -5, 9.95, 6.1, 5);
    nm_occ_scene *r = ledge_scene(&rail, true, false);
    cr_assert(nm_occ_drop_blocked(r, TAKE, land_hi), "floor 0.38 below: found, then the rail");
    cr_assert_not(nm_occ_drop_blocked(r, TAKE, land_far), "floor 0.5 below: no floor, allowed");
    cr_assert_not(nm_occ_drop_blocked(s, TAKE, land_hi));
    nm_occ_free(s);
    nm_occ_free(r);
}

/* Terrain as height blocks in dropBlocked: a ridge of the heightfield between the deck and the
 * landing crosses the curtain (blocked) unless it stays below take-off + climb; the terrain is the
 * landing's floor (step 2), and a hole there leaves no floor (allowed). */
static nm_occ_scene *hill_scene(float ridge, bool hole_under_landing)
{
    static soup deck;
    memset(&deck, 0, sizeof deck);
    soup_box(&deck, -10, 4.5, -5, 10, 5, 5);
    nm_occ_group g = soup_group(&deck);
    enum { N = 41 };
    static float h[N * N];
    static uint8_t holes[(N - 1) * (N - 1)];
    memset(holes, 0, sizeof holes);
    for (int v = 0; v < N; v++)
        for (int u = 0; u < N; u++) h[v * N + u] = u == 31 ? ridge : 1.0f; /* x = −20 + u: ridge at x 11 */
    if (hole_under_landing) holes[20 * (N - 1) + 32] = 1;                  /* cell x 12..13, z 0..1 */
    nm_occ_terrain_in tr = {.x0 = -20, .z0 = -20, .spacing = 1, .nx = N, .nz = N, .heights = h,
                            .holes = holes, .block_n = 9};
    nm_occ_zone_in z = {.name = "z", .groups = &g, .group_count = 1, .terrain = &tr};
    return load_zones(&z, 1, "z");
}

Test(drop, terrain_ridge_on_the_way_out_is_blocked)
{
    const double take[3] = {9.5, 5.0, 0.5}, land[3] = {12.25, 1.0, 0.5}; /* off the cell diagonal */
    nm_occ_scene *s = hill_scene(6.5f, false);
    nm_occ_info inf;
    nm_occ_scene_info(s, &inf);
    cr_assert_gt(inf.blocks, 1, "the heightfield is stored as terrain blocks (%u)", inf.blocks);
    nm_occ_hit hits[8];
    double p0[3] = {land[0], 0, land[2]}, p1[3] = {land[0], 2, land[2]};
    cr_assert_eq(nm_occ_segment_hits(s, p0, p1, hits, 8), 1, "the landing column meets the terrain once");
    cr_assert(hits[0].up, "terrain faces up");
    cr_assert(nm_occ_drop_blocked(s, take, land), "a 6.5 m ridge crosses the 5.39 .. 7.1 curtain");
    nm_occ_free(s);
    s = hill_scene(5.3f, false);
    cr_assert_not(nm_occ_drop_blocked(s, take, land), "a 5.3 m ridge stays under take-off + climb");
    nm_occ_free(s);
    s = hill_scene(6.5f, true);
    cr_assert_not(nm_occ_drop_blocked(s, take, land), "a hole under the landing: no floor, allowed");
    nm_occ_free(s);
}
