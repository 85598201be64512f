/* test_clean.c — ZoneClean build rules (article 网格清洗), one behaviour per test, on small packs
 * built in memory: weld, vertex borrowing, CCW, duplicate / one-way / unwalkable / unlinked cuts,
 * isTraversableLink rules 1-4, union-find roots, islands, boundary bits, errors, worker count. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "fixture.h"
#include "zone/zone_internal.h"

/* A zig-zag strip along +u: bottom B_i = (x0 + 10i, 0), top T_i = (x0 + 10i + 5, 10); position 2i
 * is (B_i, B_i+1, T_i), position 2i+1 is (B_i+1, T_i+1, T_i); consecutive positions share an edge.
 * perm (may be NULL) gives the triangle index of each position relative to the first triangle
 * added; the strip's triangles are added in index order. pair: set pack neighbours; link: add
 * links both ways between consecutive positions. Returns the first triangle index. */
static uint32_t strip(fx *f, int count, double x0, double h, const int *perm, bool pair, bool link)
{
    int nb = count / 2 + 2;
    uint32_t B[64], T[64];
    cr_assert(nb <= 64);
    for (int i = 0; i < nb; i++) {
        B[i] = fx_vert(f, x0 + 10.0 * i, 0.0, h);
        T[i] = fx_vert(f, x0 + 10.0 * i + 5.0, 10.0, h);
    }
    uint32_t base = f->p.tri_count;
    int pos_of[64];
    for (int p = 0; p < count; p++) pos_of[perm ? perm[p] : p] = p;
    for (int idx = 0; idx < count; idx++) {
        int p = pos_of[idx], i = p / 2;
        if (p % 2 == 0) fx_tri(f, B[i], B[i + 1], T[i]);
        else fx_tri(f, B[i + 1], T[i + 1], T[i]);
    }
    for (int p = 0; p + 1 < count; p++) {
        uint32_t a = base + (uint32_t)(perm ? perm[p] : p), b = base + (uint32_t)(perm ? perm[p + 1] : p + 1);
        if (pair) fx_pair(f, a, b);
        if (link) fx_links_both(f, a, b);
    }
    return base;
}

static double cross_of(const nm_zone_clean *zc, uint32_t t)
{
    const nm_vertex *a = nm_zone_vertex(zc, t, 0), *b = nm_zone_vertex(zc, t, 1), *c = nm_zone_vertex(zc, t, 2);
    return ((double)b->u - a->u) * ((double)c->v - a->v) - ((double)b->v - a->v) * ((double)c->u - a->u);
}

/* ---- vertices --------------------------------------------------------------------------------- */

Test(zone_weld, chain_0_2p5_5_merges_into_one_vertex_at_height_0)
{
    fx f;
    fx_init(&f, false, false); /* old pack: no BGEO, no BSRF */
    /* three copies of (10, 10) within the 0.05 px rounding, heights 5, 0, 2.5 (unsorted) */
    double hs[3] = {5.0, 0.0, 2.5}, dx[3] = {0.01, -0.012, 0.0};
    uint32_t corner[3];
    for (int i = 0; i < 3; i++) {
        corner[i] = fx_vert(&f, 10.0 + dx[i], 10.0 - dx[i], hs[i]);
        uint32_t b = fx_vert(&f, 30.0 + 40.0 * i, 10.0, hs[i]), c = fx_vert(&f, 30.0 + 40.0 * i, 30.0, hs[i]);
        fx_tri(&f, corner[i], b, c);
    }
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert(zc->welded);
    cr_assert_neq(zc->verts, f.p.verts);
    cr_assert_eq(zc->vert_count, 7, "3 copies -> 1, plus 6 others; got %u", zc->vert_count);
    uint32_t v0 = zc->tri_v[0];
    for (uint32_t t = 0; t < 3; t++) {
        int k = -1;
        for (int m = 0; m < 3; m++)
            if (fabsf(zc->verts[zc->tri_v[3 * t + m]].u - 10.0f) < 1e-3f) k = m;
        cr_assert_geq(k, 0);
        cr_assert_eq(zc->verts[zc->tri_v[3 * t + k]].h, 0.0f, "chain-merged into the lowest");
        cr_assert_eq(zc->verts[zc->tri_v[3 * t + k]].u, 10.0f);
        cr_assert_eq(zc->verts[zc->tri_v[3 * t + k]].v, 10.0f);
        if (t == 0) v0 = zc->tri_v[3 * t + k];
        else cr_assert_eq(zc->tri_v[3 * t + k], v0, "triangle %u uses another copy", t);
    }
    nm_zone_clean_free(zc);
    fx_free(&f);
}

Test(zone_weld, height_gap_over_3m_keeps_two_vertices)
{
    fx f;
    fx_init(&f, false, false);
    double hs[3] = {0.0, 3.0, 6.5}; /* 0 -> 3 chains (3 <= 3), 3 -> 6.5 does not */
    for (int i = 0; i < 3; i++) {
        uint32_t a = fx_vert(&f, 10.0, 10.0, hs[i]);
        uint32_t b = fx_vert(&f, 30.0 + 40.0 * i, 10.0, 0), c = fx_vert(&f, 30.0 + 40.0 * i, 30.0, 0);
        fx_tri(&f, a, b, c);
    }
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert_eq(zc->vert_count, 8);
    cr_assert_eq(zc->tri_v[0], zc->tri_v[3]);
    cr_assert_neq(zc->tri_v[3], zc->tri_v[6]);
    cr_assert_eq(zc->verts[zc->tri_v[6]].h, 6.5f);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

Test(zone_weld, weld_producing_a_degenerate_triangle_is_a_zone_error)
{
    for (int bgeo = 0; bgeo < 2; bgeo++) {
        fx f;
        fx_init(&f, bgeo, false);
        uint32_t a = fx_vert(&f, 0.0, 0.0, 0.0), b = fx_vert(&f, 0.01, 0.01, 1.0), c = fx_vert(&f, 10.0, 0.0, 0.0);
        fx_tri(&f, a, c, b);
        fx_tri_at(&f, 50, 50, 60, 50, 60, 60, 0);
        fx_finish(&f);
        nm_zone_clean *zc = NULL;
        nm_error e = {0};
        int rc = nm_zone_clean_build(&f.p, "z", 1, &zc, &e);
        if (bgeo) { /* new-generation packs are never welded */
            cr_assert_eq(rc, NM_OK, "%s", e.msg);
            nm_zone_clean_free(zc);
        } else {
            cr_assert_eq(rc, NM_ERR_CORRUPT);
            cr_assert_null(zc);
            cr_assert(strstr(e.msg, "degenerate") && strstr(e.msg, "zone z"), "%s", e.msg);
        }
        fx_free(&f);
    }
}

Test(zone_weld, new_generation_pack_borrows_the_pack_vertices)
{
    /* BGEO present, or a full BSRF: borrowed; neither: welded copy */
    bool cases[3][2] = {{true, false}, {false, true}, {false, false}};
    for (int i = 0; i < 3; i++) {
        fx f;
        fx_init(&f, cases[i][0], cases[i][1]);
        fx_tri_at(&f, 0, 0, 10, 0, 10, 10, 0);
        fx_finish(&f);
        nm_zone_clean *zc = NULL;
        FX_BUILD(&f, 1, &zc);
        bool borrowed = i < 2;
        cr_assert_eq(zc->verts == f.p.verts, borrowed, "case %d", i);
        cr_assert_eq(zc->welded, !borrowed);
        nm_zone_clean_free(zc);
        fx_free(&f);
    }
}

Test(zone_ccw, clockwise_triangle_is_flipped_with_its_edge_slots)
{
    fx f;
    fx_init(&f, true, false);
    uint32_t a = fx_vert(&f, 0, 0, 0), b = fx_vert(&f, 10, 0, 0), c = fx_vert(&f, 10, 10, 0),
             d = fx_vert(&f, 0, 10, 0);
    uint32_t t0 = fx_tri(&f, a, c, b); /* clockwise in (u, v): cross < 0 */
    uint32_t t1 = fx_tri(&f, a, c, d); /* counter-clockwise: cross(c - a, d - a) = 100 > 0 */
    fx_nb(&f, t0, 0, (int32_t)t1);     /* both list a -> c as their edge 0 */
    fx_nb(&f, t1, 0, (int32_t)t0);
    fx_links_both(&f, t0, t1);
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert_gt(cross_of(zc, 0), 0.0);
    cr_assert_gt(cross_of(zc, 1), 0.0);
    /* corners 1 and 2 of t0 traded places; t1 untouched */
    cr_assert_eq(zc->tri_v[0], a);
    cr_assert_eq(zc->tri_v[1], b);
    cr_assert_eq(zc->tri_v[2], c);
    cr_assert_eq(zc->tri_v[3], a);
    cr_assert_eq(zc->tri_v[4], c);
    cr_assert_eq(zc->tri_v[5], d);
    /* the shared edge a-c is now edge 2 of t0 (c -> a) and has a neighbour; the others are walls */
    int k0 = fx_edge_of(zc, 0, a, c), k1 = fx_edge_of(zc, 1, a, c);
    cr_assert_eq(k0, 2);
    cr_assert_eq(nm_zone_boundary(zc, 0), 7 & ~(1 << k0));
    cr_assert_eq(nm_zone_boundary(zc, 1), 7 & ~(1 << k1));
    cr_assert_eq(nm_zone_component(zc, 1), 0);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

/* ---- cut rules -------------------------------------------------------------------------------- */

Test(zone_cut, non_manifold_duplicate_edge_cuts_both_sides)
{
    for (int with_dup = 0; with_dup < 2; with_dup++) {
        fx f;
        fx_init(&f, true, false);
        uint32_t a = fx_vert(&f, 0, 0, 0), b = fx_vert(&f, 10, 0, 0), c = fx_vert(&f, 5, 8, 0),
                 d = fx_vert(&f, 5, 4, 0), e = fx_vert(&f, 5, -8, 0);
        uint32_t t0 = fx_tri(&f, a, b, c);
        uint32_t t2 = fx_tri(&f, b, a, e);
        fx_links_both(&f, t0, t2);
        if (with_dup) {
            uint32_t t1 = fx_tri(&f, a, b, d); /* a second a -> b: non-manifold seam */
            fx_links_both(&f, t0, t1);
            fx_links_both(&f, t1, t2);
        }
        fx_finish(&f);
        nm_zone_clean *zc = NULL;
        FX_BUILD(&f, 1, &zc);
        if (!with_dup) {
            cr_assert_eq(nm_zone_component(zc, 1), 0, "control: the two sides join");
            cr_assert_eq(nm_zone_boundary(zc, 0), 6);
            cr_assert_eq(nm_zone_boundary(zc, 1), 6);
        } else {
            for (uint32_t t = 0; t < 3; t++) {
                cr_assert_eq(nm_zone_component(zc, t), t, "triangle %u joined across the seam", t);
                cr_assert_eq(nm_zone_boundary(zc, t), 7);
            }
        }
        nm_zone_clean_free(zc);
        fx_free(&f);
    }
}

Test(zone_cut, one_way_adjacency_is_cleared_on_the_pointing_side)
{
    const uint32_t N = UINT32_MAX;
    /* 0 -> 1 but 1 points only at 2; 1 <-> 2 mutual */
    uint32_t nb1[9] = {1, N, N, 2, N, N, N, 1, N};
    uint32_t want[9] = {N, N, N, 2, N, N, N, 1, N};
    for (size_t s = 0; s < 9; s++)
        cr_assert_eq(nm_zone_rule_one_way(nb1, s), want[s], "slot %zu", s);
}

Test(zone_cut, unwalkable_water_triangle_is_isolated)
{
    fx f;
    fx_init(&f, false, true);
    strip(&f, 6, 0, 0, NULL, true, true); /* chain 0-1-2-3-4-5 */
    fx_area(&f, 2, 12);                   /* deep water: not in the walkable whitelist */
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert_not(nm_zone_walkable(zc, 2));
    cr_assert(nm_zone_walkable(zc, 1) && nm_zone_walkable(zc, 3));
    cr_assert_eq(zc->walkable_count, 5);
    cr_assert_eq(nm_zone_component(zc, 2), 2);
    cr_assert_eq(nm_zone_boundary(zc, 2), 7);
    cr_assert_eq(nm_zone_component(zc, 1), 0);
    cr_assert_eq(nm_zone_component(zc, 3), 3);
    cr_assert_eq(nm_zone_component(zc, 5), 3);
    /* the shores are walls */
    int shore = fx_edge_of(zc, 1, f.p.tris[2].v[0], f.p.tris[2].v[2]);
    cr_assert_geq(shore, 0);
    cr_assert(nm_zone_boundary(zc, 1) & (1 << shore));
    nm_zone_clean_free(zc);
    fx_free(&f);
}

Test(zone_cut, walkable_neighbours_without_a_pack_link_are_cut)
{
    /* 0: no link; 1: only large -> small; 2: small -> large */
    for (int variant = 0; variant < 3; variant++) {
        fx f;
        fx_init(&f, true, false);
        strip(&f, 2, 0, 0, NULL, true, false);
        if (variant == 1) fx_link(&f, 1, 0);
        if (variant == 2) fx_link(&f, 0, 1);
        fx_finish(&f);
        nm_zone_clean *zc = NULL;
        FX_BUILD(&f, 1, &zc);
        bool joined = nm_zone_component(zc, 1) == 0;
        cr_assert_eq(joined, variant == 2, "variant %d", variant);
        cr_assert_eq(nm_zone_boundary(zc, 0) == 7, variant != 2);
        cr_assert_eq(nm_zone_boundary(zc, 1) == 7, variant != 2, "the cut is on both sides");
        nm_zone_clean_free(zc);
        fx_free(&f);
    }
}

/* ---- isTraversableLink ------------------------------------------------------------------------ */

Test(zone_link, rule1_zone_id_0_or_another_zone_never_passes)
{
    fx f;
    fx_init(&f, true, false);
    strip(&f, 2, 0, 0, NULL, true, true);   /* zone "z": triangles 0, 1 */
    strip(&f, 2, 100, 0, NULL, true, true); /* zone "y": triangles 2, 3 */
    fx_links_both(&f, 1, 2);                /* crosses zones */
    fx_zone(&f, 1, "z", 0, 2, 0);
    fx_zone(&f, 2, "y", 2, 2, 0);
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert(nm_zone_has_link(zc, 0, 1));
    cr_assert_eq(zc->bridge_count, 0, "the cross-zone link was stored");
    nm_zone_clean_free(zc);
    /* the same zone with id 0: nothing passes, so nothing joins */
    f.p.zones[0].id = 0;
    FX_BUILD(&f, 1, &zc);
    cr_assert_not(nm_zone_has_link(zc, 0, 1));
    cr_assert_neq(nm_zone_component(zc, 1), 0);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

Test(zone_link, rule2_natural_neighbour_passes_even_far_and_small)
{
    for (int natural = 0; natural < 2; natural++) {
        fx f;
        fx_init(&f, true, false);
        uint32_t t0 = fx_tri_at(&f, 0, 0, 10, 0, 10, 10, 0), t1 = fx_tri_at(&f, 100, 0, 110, 0, 110, 10, 0);
        if (natural) { /* the pack says they are neighbours; geometry says 90 px apart */
            fx_nb(&f, t0, 1, (int32_t)t1);
            fx_nb(&f, t1, 0, (int32_t)t0);
        }
        fx_link(&f, t0, t1);
        fx_finish(&f);
        nm_zone_clean *zc = NULL;
        FX_BUILD(&f, 1, &zc);
        cr_assert_eq(nm_zone_has_link(zc, 0, 1), natural == 1);
        cr_assert_not(nm_zone_has_link(zc, 1, 0), "links are directional");
        cr_assert_eq(zc->bridge_count, 0, "natural-neighbour links live in slot bits");
        nm_zone_clean_free(zc);
        fx_free(&f);
    }
}

/* Two raw components of sizes na and nb made of far-apart triangles chained only through pack
 * neighbours; a link from the first triangle of one to the first of the other. */
static bool far_link_between_components(uint32_t na, uint32_t nb)
{
    fx f;
    fx_init(&f, true, false);
    for (uint32_t i = 0; i < na + nb; i++) fx_tri_at(&f, 30.0 * i, 0, 30.0 * i + 5, 0, 30.0 * i, 5, 0);
    for (uint32_t i = 0; i + 1 < na + nb; i++) {
        if (i + 1 == na) continue;
        fx_nb(&f, i, 1, (int32_t)(i + 1));
        fx_nb(&f, i + 1, 0, (int32_t)i);
    }
    fx_link(&f, 0, na);
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    bool r = nm_zone_has_link(zc, 0, na);
    nm_zone_clean_free(zc);
    fx_free(&f);
    return r;
}

Test(zone_link, rule3_link_between_raw_components_over_512_passes_at_any_distance)
{
    cr_assert(far_link_between_components(513, 513));
    cr_assert_not(far_link_between_components(512, 600), "512 triangles is still small");
    cr_assert_not(far_link_between_components(600, 512), "the smaller of the two decides");
}

Test(zone_link, rule4_small_components_pass_only_within_4px)
{
    double gaps[4] = {3.0, 4.0, 4.5, 20.0};
    bool want[4] = {true, true, false, false};
    for (int i = 0; i < 4; i++) {
        fx f;
        fx_init(&f, true, false);
        double g = gaps[i];
        fx_tri_at(&f, 0, 0, 10, 0, 10, 10, 0);
        fx_tri_at(&f, 10 + g, 0, 20 + g, 0, 10 + g, 10, 0);
        fx_link(&f, 0, 1);
        fx_finish(&f);
        nm_zone_clean *zc = NULL;
        FX_BUILD(&f, 1, &zc);
        cr_assert_eq(nm_zone_has_link(zc, 0, 1), want[i], "gap %.1f", g);
        cr_assert_eq(zc->bridge_count, want[i] ? 1u : 0u);
        nm_zone_clean_free(zc);
        fx_free(&f);
    }
}

/* ---- components, islands, boundary bits ------------------------------------------------------- */

Test(zone_components, union_find_root_is_the_smallest_index)
{
    /* positions 0..5 along the strip carry indices 5 2 4 | 0 3 1; cut between positions 2 and 3 */
    int perm[6] = {5, 2, 4, 0, 3, 1};
    fx f;
    fx_init(&f, true, false);
    strip(&f, 6, 0, 0, perm, true, false);
    for (int p = 0; p + 1 < 6; p++)
        if (p != 2) fx_links_both(&f, (uint32_t)perm[p], (uint32_t)perm[p + 1]);
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    uint32_t want[6] = {0, 0, 2, 0, 2, 2};
    for (uint32_t t = 0; t < 6; t++) cr_assert_eq(nm_zone_component(zc, t), want[t], "triangle %u", t);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

/* A cleaned component of `small` triangles alone in their raw component plus one triangle of a raw
 * component of 600 (599 far-away fillers chained through pack neighbours). */
static void island_case(int small, bool expect_island)
{
    fx f;
    fx_init(&f, true, false);
    int count = small + 1;
    /* positions: the big-raw triangle sits at position 1 (index 1) */
    strip(&f, count, 0, 0, NULL, false, true);
    uint32_t prev = 1;
    for (int i = 0; i < 599; i++) {
        uint32_t t = fx_tri_at(&f, 1000.0 + 30.0 * i, 0, 1005.0 + 30.0 * i, 0, 1000.0 + 30.0 * i, 5, 0);
        fx_nb(&f, prev, prev == 1 ? 0 : 1, (int32_t)t);
        fx_nb(&f, t, 0, (int32_t)prev);
        prev = t;
    }
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    for (int t = 0; t < count; t++) {
        cr_assert_eq(nm_zone_component(zc, (uint32_t)t), 0);
        cr_assert_eq(nm_zone_island(zc, (uint32_t)t), expect_island, "small %d triangle %d", small, t);
    }
    cr_assert_not(nm_zone_island(zc, (uint32_t)count), "a filler of the big raw component");
    nm_zone_clean_free(zc);
    fx_free(&f);
}

Test(zone_components, island_needs_strictly_more_than_half_small)
{
    island_case(1, false); /* 1 of 2: exactly half */
    island_case(2, true);  /* 2 of 3 */
    island_case(3, true);  /* 3 of 4 */
}

Test(zone_components, boundary_bits_mark_edges_without_neighbour)
{
    fx f;
    fx_init(&f, true, false);
    strip(&f, 3, 0, 0, NULL, true, true);
    fx_tri_at(&f, 100, 0, 110, 0, 110, 10, 0);
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    /* strip vertices: B0 = 0, T0 = 1, B1 = 2, T1 = 3 */
    int k01 = fx_edge_of(zc, 0, 2, 1), k10 = fx_edge_of(zc, 1, 2, 1);
    int k12 = fx_edge_of(zc, 1, 3, 2), k21 = fx_edge_of(zc, 2, 3, 2);
    cr_assert(k01 >= 0 && k10 >= 0 && k12 >= 0 && k21 >= 0);
    cr_assert_eq(nm_zone_boundary(zc, 0), 7 & ~(1 << k01));
    cr_assert_eq(nm_zone_boundary(zc, 1), 7 & ~(1 << k10) & ~(1 << k12));
    cr_assert_eq(nm_zone_boundary(zc, 2), 7 & ~(1 << k21));
    cr_assert_eq(nm_zone_boundary(zc, 3), 7);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

/* ---- zones and errors ------------------------------------------------------------------------- */

Test(zone_build, second_zone_uses_local_numbers)
{
    fx f;
    fx_init(&f, true, false);
    strip(&f, 2, 200, 0, NULL, true, true); /* zone "y": 0, 1 */
    strip(&f, 3, 0, 0, NULL, true, true);   /* zone "z": 2, 3, 4 */
    fx_zone(&f, 7, "y", 0, 2, 0);
    fx_zone(&f, 8, "z", 2, 3, 0);
    fx_finish(&f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert_eq(zc->tri_count, 3);
    cr_assert_eq(zc->tri_lo, 2);
    cr_assert_eq(zc->tri_global_base, 2);
    cr_assert_eq(zc->zone_id, 8);
    cr_assert(nm_zone_has_link(zc, 0, 1) && nm_zone_has_link(zc, 1, 2));
    cr_assert_eq(nm_zone_component(zc, 2), 0);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

Test(zone_build, zone_scoped_load_reports_whole_pack_numbers)
{
    fx f;
    fx_init(&f, true, false);
    strip(&f, 2, 0, 0, NULL, true, true);
    fx_zone(&f, 3, "z", 1000, 2, 0);
    fx_finish(&f);
    f.p.zone_scoped = true;
    f.p.tri_base = 1000;
    nm_zone_clean *zc = NULL;
    FX_BUILD(&f, 1, &zc);
    cr_assert_eq(zc->tri_lo, 0);
    cr_assert_eq(zc->tri_global_base, 1000);
    cr_assert_eq(nm_zone_component(zc, 1), 0);
    nm_zone_clean_free(zc);
    fx_free(&f);
}

static int build_status(fx *f, const char *zone, const char *needle)
{
    nm_zone_clean *zc = NULL;
    nm_error e = {0};
    int rc = nm_zone_clean_build(&f->p, zone, 1, &zc, &e);
    cr_assert_null(zc);
    if (needle) cr_assert(strstr(e.msg, needle), "message '%s' lacks '%s'", e.msg, needle);
    return rc;
}

Test(zone_build, errors_name_the_zone_and_the_problem)
{
    fx f;
    fx_init(&f, false, true);
    strip(&f, 2, 0, 0, NULL, true, true);
    fx_zone(&f, 1, "z", 0, 2, 0);
    fx_zone(&f, 2, "tier", 0, 0, NM_ZONE_FLAG_TIER);
    fx_finish(&f);
    cr_assert_eq(build_status(&f, "nope", "nope"), NM_ERR_ARG);
    cr_assert_eq(build_status(&f, "tier", "tier"), NM_ERR_ARG);
    fx_area(&f, 0, 12);
    fx_area(&f, 1, 18);
    f.p.surfaces[0].flags = 1u << 12;
    f.p.surfaces[1].flags = 1u << 18;
    cr_assert_eq(build_status(&f, "z", "unwalkable"), NM_ERR_STATE);
    f.p.surface_count = 1; /* neither the pack's nor the zone's count */
    cr_assert_eq(build_status(&f, "z", "BSRF"), NM_ERR_CORRUPT);
    f.p.surface_count = 2;
    f.p.surfaces[0].flags = 1;
    f.p.tris[1].v[2] = 99;
    cr_assert_eq(build_status(&f, "z", "out of range"), NM_ERR_CORRUPT);
    fx_free(&f);
}

Test(zone_build, every_allocation_failure_is_reported_as_nomem)
{
    fx f;
    fx_init(&f, false, true);
    strip(&f, 6, 0, 0, NULL, true, true);
    fx_tri_at(&f, 0, 50, 10, 50, 10, 60, 0);
    fx_link(&f, 0, 6);
    fx_finish(&f);
    for (size_t n = 1; n < 200; n++) {
        nm_zone_clean *zc = NULL;
        nm_error e = {0};
        nm_alloc_fail_after(n);
        int rc = nm_zone_clean_build(&f.p, "z", 1, &zc, &e);
        nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            cr_assert_not_null(zc);
            nm_zone_clean_free(zc);
            cr_assert_gt(n, 3, "the build allocates something");
            fx_free(&f);
            return;
        }
        cr_assert_eq(rc, NM_ERR_NOMEM, "allocation %zu: %d %s", n, rc, e.msg);
        cr_assert_null(zc);
    }
    cr_assert_fail("the build never succeeded");
}

/* ---- worker count ----------------------------------------------------------------------------- */

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* An N x N grid of quads (2 triangles each) with pack neighbours, some water and missing links. */
static void grid_pack(fx *f, int n, bool newgen)
{
    fx_init(f, newgen, newgen);
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++)
            fx_vert(f, 10.0 * i + (newgen ? 0.0 : 0.004 * (i % 3)), 10.0 * j, 0.37 * ((i * 7 + j * 3) % 11));
    if (!newgen) /* old packs repeat vertices: a second copy of every 5th one, 1 m higher */
        for (int j = 0; j <= n; j++)
            for (int i = 0; i <= n; i += 5) fx_vert(f, 10.0 * i, 10.0 * j, 0.37 * ((i * 7 + j * 3) % 11) + 1.0);
    uint32_t dupbase = (uint32_t)((n + 1) * (n + 1)), per_row = (uint32_t)(n / 5 + 1);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            uint32_t bl = (uint32_t)(j * (n + 1) + i), br = bl + 1, tl = bl + (uint32_t)(n + 1), tr = tl + 1;
            if (!newgen && i % 5 == 0 && (i + j) % 2) bl = dupbase + (uint32_t)j * per_row + (uint32_t)(i / 5);
            fx_tri(f, bl, br, tr);
            fx_tri(f, bl, tr, tl);
        }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            uint32_t a = (uint32_t)(2 * (j * n + i));
            fx_pair(f, a, a + 1);
            if (i + 1 < n) fx_pair(f, a, a + 3);
            if (j > 0) fx_pair(f, a, (uint32_t)(2 * ((j - 1) * n + i)) + 1);
        }
    for (uint32_t t = 0; t < f->p.tri_count; t++) {
        if (mix(t) % 13 == 0) fx_area(f, t, 12);
        for (int k = 0; k < 3; k++) {
            int32_t u = f->p.tris[t].nb[k];
            if (u > (int32_t)t && mix(t * 3 + (uint32_t)k) % 7 != 0) fx_link(f, t, (uint32_t)u);
        }
        if (mix(t + 77) % 97 == 0) fx_link(f, t, mix(t) % f->p.tri_count); /* stray bridge links */
    }
    fx_finish(f);
}

Test(zone_build, results_identical_for_workers_1_and_4, .timeout = 120)
{
    for (int newgen = 0; newgen < 2; newgen++) {
        fx f;
        grid_pack(&f, 120, newgen); /* 28 800 triangles, 86 400 slots: above the serial floor */
        nm_zone_clean *a = NULL, *b = NULL;
        FX_BUILD(&f, 1, &a);
        FX_BUILD(&f, 4, &b);
        uint32_t n = a->tri_count;
        cr_assert_eq(b->tri_count, n);
        cr_assert_eq(a->vert_count, b->vert_count);
        cr_assert(memcmp(a->tri_v, b->tri_v, 12 * (size_t)n) == 0);
        cr_assert(memcmp(a->comp, b->comp, 4 * (size_t)n) == 0);
        cr_assert(memcmp(a->tflags, b->tflags, n) == 0);
        cr_assert_eq(a->bridge_count, b->bridge_count);
        cr_assert(memcmp(a->bridge_links, b->bridge_links, 8 * (size_t)a->bridge_count) == 0);
        cr_assert_eq(a->grid_nx, b->grid_nx);
        size_t cells = (size_t)a->grid_nx * a->grid_ny;
        cr_assert(memcmp(a->bucket_start, b->bucket_start, 4 * (cells + 1)) == 0);
        cr_assert(memcmp(a->bucket_tris, b->bucket_tris, 4 * (size_t)a->bucket_start[cells]) == 0);
        /* and the mesh is non-trivial: several components, some walls, all CCW */
        uint32_t roots = 0, walls = 0;
        for (uint32_t t = 0; t < n; t++) {
            roots += a->comp[t] == t;
            walls += nm_zone_boundary(a, t) != 0;
            cr_assert_gt(cross_of(a, t), 0.0);
        }
        cr_assert_gt(roots, 10);
        cr_assert_lt(roots, n / 2);
        cr_assert_gt(walls, 100);
        if (!newgen) cr_assert_lt(a->vert_count, f.p.vert_count, "the weld merged the copies");
        nm_zone_clean_free(a);
        nm_zone_clean_free(b);
        fx_free(&f);
    }
}
