/* test_fall_gate.c — the ledge scene through the occluder's dropBlocked (design article 台沿下落):
 * every triangle of the scene (walkable, solid and collision-only) goes into an OCLZ scene, and
 * a drop over each ledge's front edge must be allowed when the edge is open or has a 0.25 m lip,
 * blocked by a 1.1 m railing or by a slab over the landing.
 * Winding: scenegen writes standard OBJ (counter-clockwise seen from outside); the occluder's
 * 朝上 is the reference's (y of (v1-v0)x(v2-v0) negative), so triangles are handed over with
 * two corners swapped — as navbake must do when it writes the occluder pack from an OBJ. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "occluder.h"
#include "sg_testlib.h"

static nm_occ_scene *occluder_of(const nm_sg_world *w)
{
    float *xyz = malloc(w->nv * 3 * sizeof *xyz);
    uint32_t *tri = malloc(w->nt * 3 * sizeof *tri);
    for (size_t i = 0; i < w->nv; i++) {
        xyz[3 * i] = (float)w->v[i].x;
        xyz[3 * i + 1] = (float)w->v[i].h;
        xyz[3 * i + 2] = (float)-w->v[i].y;
    }
    for (size_t i = 0; i < w->nt; i++) {
        tri[3 * i] = w->t[i].v[0];
        tri[3 * i + 1] = w->t[i].v[2];
        tri[3 * i + 2] = w->t[i].v[1];
    }
    nm_occ_group g = {xyz, (uint32_t)w->nv, tri, (uint32_t)w->nt};
    nm_occ_zone_in z = {w->zones[0].name, NULL, 0, NULL, 0, &g, 1, NULL};
    nm_buf buf = {0};
    nm_error err = {0};
    cr_assert_eq(nm_occ_encode(&z, 1, &buf, &err), NM_OK, "%s", err.msg);
    nm_occ_scene *s = NULL;
    cr_assert_eq(nm_occ_load_bytes(buf.p, buf.size, w->zones[0].name, "ledges", &s, &err), NM_OK,
                 "%s", err.msg);
    cr_assert_not_null(s);
    nm_buf_free(&buf);
    free(xyz);
    free(tri);
    return s;
}

Test(fall_gate, ledge_variants_open_lip_railing_slab)
{
    nm_sg_world *w = tl_load("resources/scenes/ledges/scene.json");
    cr_assert_not_null(w);
    nm_occ_scene *s = occluder_of(w);
    static const char *var[] = {"open", "railing", "lip", "slab"};
    static const bool blocked[] = {false, true, false, true};
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 4; i++) {
            double H = row ? 8 : 4, y0 = row ? 60 : 20, xc = 15 + 20 * i;
            /* take-off on the top 0.4 m inside the front edge, landing 0.4 m outside it */
            double take[3] = {xc, H, -(y0 + 0.4)}, land[3] = {xc, 0, -(y0 - 0.4)};
            cr_assert_eq(nm_occ_drop_blocked(s, take, land), blocked[i], "%g m ledge, %s: %s", H,
                         var[i], blocked[i] ? "should be blocked" : "should be allowed");
        }
    nm_occ_free(s);
    nm_sg_world_free(w);
}

Test(fall_gate, bridge_deck_blocks_a_drop_onto_the_path_below_it)
{
    nm_sg_world *w = tl_load("resources/scenes/bridge/scene.json");
    cr_assert_not_null(w);
    nm_occ_scene *s = occluder_of(w);
    /* from the deck's side edge (x 32.5) to the path beside it: allowed */
    double take[3] = {32.3, 5, -30}, land[3] = {32.9, 0, -30};
    cr_assert_not(nm_occ_drop_blocked(s, take, land));
    /* landing under the deck: the deck's underside is over the landing */
    double take2[3] = {32.3, 5, -30}, land2[3] = {31.9, 0, -30};
    cr_assert(nm_occ_drop_blocked(s, take2, land2));
    nm_occ_free(s);
    nm_sg_world_free(w);
}
