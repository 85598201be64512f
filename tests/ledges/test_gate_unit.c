/* test_gate_unit.c — the FallGate's pieces (navmesh/window/window_gate.c): the occluder path of a
 * pack, step 1's empty gate (no file, zero scale), step 3's projection onto the zone mesh, and
 * the callback's answers and caches on the ledge scene. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack.h"
#include "window/window_gate.h"
#include "zone/zone.h"
#include "ledges_util.h"

Test(gate_unit, occluder_path_of_a_pack)
{
    char *p = nm_occluder_path_of("/nonexistent_dir_x/levels/base.nav.gz");
    cr_assert_str_eq(p, "/nonexistent_dir_x/levels/base.occluder.gz");
    nm_free(p);
    p = nm_occluder_path_of("/nonexistent_dir_x/town.nav.gz");
    cr_assert_str_eq(p, "/nonexistent_dir_x/town.occluder.gz");
    nm_free(p);
    p = nm_occluder_path_of("/nonexistent_dir_x/pack.bin");
    cr_assert_str_eq(p, "/nonexistent_dir_x/base.occluder.gz");
    nm_free(p);
    p = nm_occluder_path_of("/tmp/base.nav.gz"); /* an existing folder: absolute, resolved */
    cr_assert(strstr(p, "/base.occluder.gz") != NULL && p[0] == '/', "%s", p);
    nm_free(p);
}

typedef struct baked {
    char dir[256];
    nm_pack pack;
    nm_zone_clean *zc;
    double s;
} baked;

static void bake_ledges(baked *b, bool occluder)
{
    char obj[600], zone[600], out[600], pack[700];
    lu_mkdtemp(b->dir, sizeof b->dir);
    lu_scenegen("resources/scenes/ledges/scene.json", b->dir);
    snprintf(obj, sizeof obj, "%s/src/level.obj", b->dir);
    snprintf(zone, sizeof zone, "%s/src/zone.json", b->dir);
    snprintf(out, sizeof out, "%s/out", b->dir);
    lu_navbake(obj, zone, out, occluder ? "--walkable-as-is" : "--walkable-as-is --no-occluder");
    snprintf(pack, sizeof pack, "%s/base.nav.gz", out);
    nm_pack_load_opts lo = {0};
    nm_error err = {0};
    cr_assert_eq(nm_pack_load(pack, &lo, &b->pack, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_zone_clean_build(&b->pack, "ledges", 1, &b->zc, &err), NM_OK, "%s", err.msg);
    b->s = b->pack.zones[b->zc->zone_index].t[0];
}

static void free_baked(baked *b)
{
    nm_zone_clean_free(b->zc);
    nm_pack_free(&b->pack);
    lu_rmdir(b->dir);
}

Test(gate_unit, projection_onto_the_zone_mesh, .timeout = 120)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    baked b;
    bake_ledges(&b, false);
    double q[3];
    /* a point 0.1 px beyond the 4 m platform's east edge (x 20 m), top height: onto the edge */
    double ex = 20 * b.s, y = 25 * b.s;
    nm_fall_gate_project(b.zc, ex + 0.1, y, 4.0, q);
    cr_expect_float_eq(q[0], ex, 1e-4, "x %g", q[0]);
    cr_expect_float_eq(q[1], y, 1e-4);
    cr_expect_float_eq(q[2], 4.0, 1e-4, "h %g", q[2]);
    /* the same point at ground height: the ground under it (distance 0) */
    nm_fall_gate_project(b.zc, ex + 0.1, y, 0.0, q);
    cr_expect_float_eq(q[0], ex + 0.1, 1e-9);
    cr_expect_float_eq(q[2], 0.0, 1e-4);
    /* 0.4 px beyond the edge at top height: out of the 0.25 px radius; the ground is 4 m off */
    nm_fall_gate_project(b.zc, ex + 0.4, y, 4.0, q);
    cr_expect_float_eq(q[0], ex + 0.4, 1e-9, "unchanged: x %g", q[0]);
    cr_expect_float_eq(q[2], 4.0, 1e-9, "unchanged: the span height");
    /* every cell centre just beyond the edge (the grid gives those cells the top's height) lands
     * exactly on it, not a rounding step outside, where the take-off column would find no floor */
    for (int k = 0; k < 30; k++) {
        double yk = (floor(20 * b.s / NM_kCS) + k + 0.5) * NM_kCS;
        nm_fall_gate_project(b.zc, ex + 0.5 * NM_kCS, yk, 4.0, q);
        cr_expect_eq(q[0], ex, "row %d: x %.17g, the edge is %.17g", k, q[0], ex);
    }
    /* a height 3 m above the top, inside: no triangle within 2 m -> the centre and h */
    nm_fall_gate_project(b.zc, 15 * b.s, y, 7.0, q);
    cr_expect_float_eq(q[2], 7.0, 1e-9);
    free_baked(&b);
}

Test(gate_unit, empty_gate_without_file_or_with_zero_scale, .timeout = 120)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    baked b;
    bake_ledges(&b, false);
    char pack[700];
    snprintf(pack, sizeof pack, "%s/out/base.nav.gz", b.dir);
    int key1 = 0;
    nm_error err = {0};
    cr_assert_eq(nm_window_gate_attach(&key1, pack, &err), NM_OK);
    nm_window w;
    memset(&w, 0, sizeof w);
    w.win.nx = 10;
    w.win.ny = 10;
    cr_assert_eq(nm_window_set_gate(&w, &key1, 1, b.zc, &err), NM_OK, "%s", err.msg);
    cr_expect_null((void *)w.gate.fn, "no occluder file: empty gate");
    nm_window_gate_detach(&key1);
    /* a corrupt occluder: an error, an empty gate, and the failure kept (same message again) */
    char cmd[2000], bad[800];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/bad' && echo garbage | gzip > '%s/bad/base.occluder.gz'", b.dir, b.dir);
    lu_run(cmd);
    snprintf(bad, sizeof bad, "%s/bad/base.nav.gz", b.dir);
    cr_assert_eq(nm_window_gate_attach(&key1, bad, &err), NM_OK);
    nm_error e1 = {0}, e2 = {0};
    int r1 = nm_window_set_gate(&w, &key1, 1, b.zc, &e1);
    cr_expect_neq(r1, NM_OK, "a corrupt occluder is an error");
    cr_expect_null((void *)w.gate.fn);
    cr_expect(strstr(e1.msg, "fall gate") != NULL, "%s", e1.msg);
    cr_expect_eq(nm_window_set_gate(&w, &key1, 2, b.zc, &e2), r1);
    cr_expect_str_eq(e2.msg, e1.msg);
    nm_window_gate_detach(&key1);
    free_baked(&b);

    bake_ledges(&b, true);
    snprintf(pack, sizeof pack, "%s/out/base.nav.gz", b.dir);
    cr_assert_eq(nm_window_gate_attach(&key1, pack, &err), NM_OK);
    memset(&w, 0, sizeof w);
    /* a window over the open 4 m ledge's front edge: x 8..20 m, y 15..25 m */
    w.gx0 = (int64_t)floor(8 * b.s / NM_kCS);
    w.gy0 = (int64_t)floor(15 * b.s / NM_kCS);
    w.win.nx = (int32_t)ceil(12 * b.s / NM_kCS);
    w.win.ny = w.win.nx;
    cr_assert_eq(nm_window_set_gate(&w, &key1, 2, b.zc, &err), NM_OK, "%s", err.msg);
    cr_assert_not_null((void *)w.gate.fn, "occluder present: a gate");
    /* drop over the open front edge (y 20 m) at x 15 m: cells 0.4 m either side */
    uint32_t nx = (uint32_t)w.win.nx;
    int64_t ci = (int64_t)floor(15 * b.s / NM_kCS) - w.gx0;
    int64_t cj_top = (int64_t)floor(20.4 * b.s / NM_kCS) - w.gy0, cj_low = (int64_t)floor(19.6 * b.s / NM_kCS) - w.gy0;
    uint32_t top = (uint32_t)(cj_top * (int64_t)nx + ci), low = (uint32_t)(cj_low * (int64_t)nx + ci);
    cr_expect_not(w.gate.fn(w.gate.ctx, top, 4.0, low, 0.0), "open front edge: allowed");
    /* sideways over the west guard railing (x 10.05 m) from 0.4 m inside */
    int64_t cj = (int64_t)floor(25 * b.s / NM_kCS) - w.gy0;
    int64_t in_i = (int64_t)floor(10.4 * b.s / NM_kCS) - w.gx0, out_i = (int64_t)floor(9.6 * b.s / NM_kCS) - w.gx0;
    cr_assert_geq(out_i, 0);
    cr_expect(w.gate.fn(w.gate.ctx, (uint32_t)(cj * (int64_t)nx + in_i), 4.0, (uint32_t)(cj * (int64_t)nx + out_i), 0.0),
              "over the 1.1 m guard: blocked");
    /* asked again: the decision cache answers */
    nm_gate_stats st;
    nm_window_gate_stats(&key1, &st);
    uint64_t hits = st.hits;
    cr_expect_not(w.gate.fn(w.gate.ctx, top, 4.0, low, 0.0));
    nm_window_gate_stats(&key1, &st);
    cr_expect_eq(st.hits, hits + 1);
    cr_expect_eq(st.asked, 3);
    cr_expect_eq(st.blocked, 1);
    /* a zero scale on one axis: the empty gate */
    b.pack.zones[b.zc->zone_index].t[2] = 0;
    cr_assert_eq(nm_window_set_gate(&w, &key1, 3, b.zc, &err), NM_OK);
    cr_expect_null((void *)w.gate.fn, "zero scale: empty gate");
    nm_window_gate_detach(&key1);
    free_baked(&b);
}

/* The side guard railings of the railing and slab platforms (outer face flush with the platform's
 * edge) block every sideways drop, from the last cell inside and from the cell whose centre lies
 * just beyond the edge (the gate projects it onto the edge), straight and diagonal; the open
 * platform's front edge lets every one through. */
Test(gate_unit, side_railings_block_every_edge_cell, .timeout = 120)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    baked b;
    bake_ledges(&b, true);
    char pack[700];
    snprintf(pack, sizeof pack, "%s/out/base.nav.gz", b.dir);
    int key = 0;
    nm_error err = {0};
    cr_assert_eq(nm_window_gate_attach(&key, pack, &err), NM_OK);
    nm_window w;
    memset(&w, 0, sizeof w);
    w.gx0 = 0;
    w.gy0 = 0;
    w.win.nx = (int32_t)ceil(90 * b.s / NM_kCS);
    w.win.ny = (int32_t)ceil(95 * b.s / NM_kCS);
    cr_assert_eq(nm_window_set_gate(&w, &key, 1, b.zc, &err), NM_OK, "%s", err.msg);
    cr_assert_not_null((void *)w.gate.fn);
    uint32_t nx = (uint32_t)w.win.nx;
#define CELL(i, j) ((uint32_t)((int64_t)(j) * (int64_t)nx + (int64_t)(i)))
    int leaks = 0, tried = 0;
    static const double xs[2] = {30, 70}, y0s[2] = {20, 60}, tops[2] = {4, 8};
    for (int row = 0; row < 2; row++)
        for (int k = 0; k < 2; k++) {
            int64_t west = (int64_t)llround(xs[k] * b.s / NM_kCS), east = (int64_t)llround((xs[k] + 10) * b.s / NM_kCS);
            int64_t j0 = (int64_t)llround(y0s[row] * b.s / NM_kCS), j1 = (int64_t)llround((y0s[row] + 10) * b.s / NM_kCS);
            for (int64_t j = j0 + 1; j < j1 - 1; j++)
                for (int dj = -1; dj <= 1; dj++)
                    for (int edge = 0; edge < 4; edge++) {
                        /* east: take-off cells east-1 (inside) and east (centre beyond the edge) */
                        int64_t ti = edge == 0 ? east - 1 : edge == 1 ? east : edge == 2 ? west : west - 1;
                        int64_t li = edge < 2 ? ti + 1 : ti - 1;
                        bool blocked = w.gate.fn(w.gate.ctx, CELL(ti, j), tops[row], CELL(li, j + dj), 0.0);
                        tried++;
                        if (!blocked) {
                            leaks++;
                            cr_log_warn("x %g, y %g: drop from cell (%ld, %ld) to (%ld, %ld) let through", xs[k],
                                        y0s[row], (long)ti, (long)j, (long)li, (long)(j + dj));
                        }
                    }
        }
    cr_expect_eq(leaks, 0, "%d of %d sideways drops over a guard railing let through", leaks, tried);
    /* the open 4 m platform's front edge (y 20 m): every drop passes */
    int passed = 0, front = 0;
    int64_t jn = (int64_t)llround(20 * b.s / NM_kCS);
    for (int64_t i = (int64_t)llround(10.5 * b.s / NM_kCS); i < (int64_t)llround(19.5 * b.s / NM_kCS); i++)
        for (int64_t tj = jn - 1; tj <= jn; tj++) {
            front++;
            passed += !w.gate.fn(w.gate.ctx, CELL(i, tj), 4.0, CELL(i, tj - 1), 0.0);
        }
#undef CELL
    cr_expect_eq(passed, front, "open front edge: %d of %d drops pass", passed, front);
    nm_window_gate_detach(&key);
    free_baked(&b);
}

/* The engine's warm reads the zone's collision scene into the occluder cache, so the first plan's
 * gate does not read the file: with the file gone after warm, the gate is still there. It fails
 * when warm leaves the scene to the first plan (the gate is then empty). */
Test(gate_unit, warm_reads_the_scene_before_the_first_window, .timeout = 120)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    baked b;
    bake_ledges(&b, true);
    char pack[700], occ[700];
    snprintf(pack, sizeof pack, "%s/out/base.nav.gz", b.dir);
    snprintf(occ, sizeof occ, "%s/out/base.occluder.gz", b.dir);
    int key = 0;
    nm_error err = {0};
    cr_assert_eq(nm_window_gate_attach(&key, pack, &err), NM_OK);
    nm_window_gate_warm(&key, b.zc);
    nm_window_gate_warm(&key, NULL); /* nothing to read: nothing happens */
    cr_assert_eq(remove(occ), 0, "%s", occ);
    nm_window w;
    memset(&w, 0, sizeof w);
    w.win.nx = 10;
    w.win.ny = 10;
    cr_assert_eq(nm_window_set_gate(&w, &key, 1, b.zc, &err), NM_OK, "%s", err.msg);
    cr_expect_not_null((void *)w.gate.fn, "the scene read at warm");
    nm_window_gate_detach(&key);
    free_baked(&b);
}
