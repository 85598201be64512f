/* test_worlds.c — the facts of each committed scene (resources/scenes/NAME/README line), checked
 * on the generated geometry itself: riser heights, layers and headroom, cut footprints, crack
 * and hole cells on the 0.25 px lattice, area ids, link ends and which pieces are stitched. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg_testlib.h"

static nm_sg_world *scene(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "resources/scenes/%s/scene.json", name);
    nm_sg_world *w = tl_load(rel);
    cr_assert_not_null(w, "scene %s does not load", name);
    return w;
}

static int group(const nm_sg_world *w, const char *name)
{
    int g = nm_sg_group_find(w, name);
    cr_assert_geq(g, 0, "group %s missing", name);
    return g;
}

/* Heights of walkable surfaces over (x, y); asserts exactly the listed ones. */
static void expect_heights(const nm_sg_world *w, double x, double y, int n, const double *want)
{
    double h[16];
    int k = tl_heights(w, x, y, NULL, false, h, 16);
    cr_assert_eq(k, n, "at (%.2f, %.2f): %d walkable layers, expected %d", x, y, k, n);
    for (int i = 0; i < n; i++)
        cr_assert_float_eq(h[i], want[i], 1e-6, "at (%.2f, %.2f): layer %d at %.3f, expected %.3f",
                           x, y, i, h[i], want[i]);
}

static void prop_range(const nm_sg_world *w, const char *name, double *lo, double *hi)
{
    int g = group(w, name);
    *lo = INFINITY, *hi = -INFINITY;
    for (size_t i = 0; i < w->nt; i++)
        if ((int)w->t[i].group == g)
            for (int k = 0; k < 3; k++) {
                double h = w->v[w->t[i].v[k]].h;
                *lo = fmin(*lo, h), *hi = fmax(*hi, h);
            }
    cr_assert(isfinite(*lo), "group %s has no triangles", name);
}

Test(worlds, stairs_half_metre_risers_join_ground_and_top_one_metre_risers_stay_apart)
{
    nm_sg_world *w = scene("stairs");
    double h[32];
    int n = tl_group_heights(w, group(w, "walk_stairs_flight05"), h, 32);
    cr_assert_eq(n, 6, "flight05 has %d tread heights", n);
    for (int i = 0; i < n; i++) cr_assert_float_eq(h[i], 0.5 * (i + 1), 1e-9);
    double lo, hi;
    cr_assert_eq(tl_vertical_tris(w, group(w, "walk_stairs_flight05"), &lo, &hi), 12u);
    cr_assert_float_eq(lo, 0, 1e-9);
    cr_assert_float_eq(hi, 3, 1e-9);
    n = tl_group_heights(w, group(w, "walk_stairs_flight10"), h, 32);
    cr_assert_eq(n, 4);
    for (int i = 0; i < n; i++) cr_assert_float_eq(h[i], 1.0 * (i + 1), 1e-9);
    cr_assert_eq(tl_vertical_tris(w, group(w, "walk_stairs_flight10"), &lo, &hi), 0u);

    tl_comp *c = tl_components(w);
    int ground = tl_comp_at(c, w, 5, 9, 0);
    cr_assert_geq(ground, 0);
    cr_assert_eq(tl_comp_at(c, w, 10.5, 9, 0.5), ground, "first 0.5 m tread not stitched");
    cr_assert_eq(tl_comp_at(c, w, 23, 9, 3), ground, "top of the 0.5 m flight not stitched");
    int top10 = tl_comp_at(c, w, 23, 29, 4);
    cr_assert_geq(top10, 0);
    cr_assert_neq(top10, ground, "1 m risers must not join the top to the ground");
    cr_assert_neq(tl_comp_at(c, w, 11, 29, 1), ground);
    tl_comp_free(c);
    double top[] = {3};
    expect_heights(w, 23, 9, 1, top); /* the ground under the platform is cut */
    nm_sg_world_free(w);
}

Test(worlds, bump_dip_and_step_have_the_same_rise_and_their_own_widths)
{
    nm_sg_world *w = scene("bump_dip");
    double one[] = {1}, zero[] = {0}, minus[] = {-1};
    expect_heights(w, 20.4, 5, 1, one);    /* bump top */
    expect_heights(w, 20.0, 5, 1, zero);   /* ground before it */
    expect_heights(w, 20.8, 5, 1, zero);   /* ground after it */
    expect_heights(w, 20.4, 15, 1, minus); /* dip floor */
    expect_heights(w, 20.8, 15, 1, zero);
    expect_heights(w, 30, 25, 1, one); /* the step continues to the lane's end */
    expect_heights(w, 39.5, 25, 1, one);
    expect_heights(w, 19.5, 25, 1, zero);
    /* Bump and dip are 0.65 m = 1.95 cells wide along the lane, from 0.15 cell into a cell:
     * one cell holds only the top (or the floor), the cells on either side hold both heights,
     * so the start height comes back at the 3rd cell ahead (bump) / the 2nd behind (dip). */
    const nm_sg_zone *z = &w->zones[0];
    static const char *names[] = {"walk_bump_dip_bump", "walk_bump_dip_dip"};
    for (int gi = 0; gi < 2; gi++) {
        const char *gname = names[gi];
        int g = group(w, gname);
        double x0 = INFINITY, x1 = -INFINITY;
        for (size_t i = 0; i < w->nt; i++)
            if ((int)w->t[i].group == g)
                for (int k = 0; k < 3; k++) {
                    x0 = fmin(x0, w->v[w->t[i].v[k]].x);
                    x1 = fmax(x1, w->v[w->t[i].v[k]].x);
                }
        double c0 = (x0 * z->tf[0] + z->tf[1]) / NM_kCS, c1 = (x1 * z->tf[0] + z->tf[1]) / NM_kCS;
        cr_assert_float_eq(c1 - c0, 1.95, 1e-6, "%s width in cells", gname);
        cr_assert_eq((long)floor(c1) - (long)floor(c0), 2, "%s spans three cells", gname);
        double lo, hi;
        cr_assert_eq(tl_vertical_tris(w, g, &lo, &hi), 0u, "1 m sides stay open");
    }
    cr_assert_eq(w->g[group(w, "solid_bump_dip_lanes")].role, NM_SG_SOLID);
    tl_comp *c = tl_components(w);
    cr_assert_neq(tl_comp_at(c, w, 20.6, 5, 1), tl_comp_at(c, w, 10, 5, 0));
    tl_comp_free(c);
    nm_sg_world_free(w);
}

Test(worlds, bridge_deck_is_a_second_layer_with_headroom_reached_by_ramps)
{
    nm_sg_world *w = scene("bridge");
    double two[] = {0, 5}, ramp[] = {2.5};
    expect_heights(w, 30, 30, 2, two);
    expect_heights(w, 30, 12.5, 1, ramp); /* halfway up the south ramp; ground cut under it */
    double lo, hi;
    prop_range(w, "prop_bridge_deck", &lo, &hi);
    cr_assert_float_eq(lo, 4.5, 1e-9, "deck underside");
    cr_assert_geq(lo - 0.0, NM_kFallHeight, "headroom under the deck");
    tl_comp *c = tl_components(w);
    int deck = tl_comp_at(c, w, 30, 30, 5);
    cr_assert_geq(deck, 0);
    cr_assert_eq(tl_comp_at(c, w, 30, 2, 0), deck, "ramps stitch deck and ground");
    cr_assert_eq(tl_comp_at(c, w, 30, 10, 5.0 / 3.0), deck, "the south ramp");
    cr_assert_eq(tl_comp_at(c, w, 30, 30, 0), deck, "the path under the deck is the same ground");
    tl_comp_free(c);
    nm_sg_world_free(w);
}

Test(worlds, facade_is_stacked_walkable_strips_stitched_to_ground_and_plateau)
{
    nm_sg_world *w = scene("facade");
    int g = group(w, "walk_facade_cliff");
    double lo, hi;
    /* 16 strips of 0.5 m (2 triangles each, more where the ground's vertices split them) */
    cr_assert_geq(tl_vertical_tris(w, g, &lo, &hi), 32u);
    cr_assert_float_eq(lo, 0, 1e-9);
    cr_assert_float_eq(hi, 8, 1e-9);
    int n = 0;
    for (size_t i = 0; i < w->nv; i++)
        if (fabs(w->v[i].x - 20) < 1e-9 && fabs(w->v[i].y - 10) < 1e-9) n++;
    cr_assert_eq(n, 17, "vertices stacked on the facade line: %d", n);
    tl_comp *c = tl_components(w);
    cr_assert_eq(tl_comp_at(c, w, 10, 20, 0), tl_comp_at(c, w, 27, 20, 8));
    tl_comp_free(c);
    double ramp[] = {4};
    expect_heights(w, 45, 20, 1, ramp);
    nm_sg_world_free(w);
}

Test(worlds, ledges_drop_height_and_what_stands_on_their_edge)
{
    nm_sg_world *w = scene("ledges");
    static const char *var[] = {"open", "railing", "lip", "slab"};
    tl_comp *c = tl_components(w);
    int ground = tl_comp_at(c, w, 5, 5, 0);
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 4; i++) {
            double H = row ? 8 : 4, y0 = row ? 60 : 20, xc = 15 + 20 * i;
            double top[] = {H}, zero[] = {0};
            expect_heights(w, xc, y0 + 5, 1, top);
            expect_heights(w, xc, y0 - 0.5, 1, zero); /* landing just off the front edge */
            cr_assert_eq(tl_comp_at(c, w, xc, y0 + 5, H), ground, "stairs reach the top");
            char name[96];
            double lo, hi;
            snprintf(name, sizeof name, "prop_ledges_l%d_%s_guard", (int)H, var[i]);
            prop_range(w, name, &lo, &hi);
            cr_assert_float_eq(hi - lo, 1.1, 1e-9);
            snprintf(name, sizeof name, "prop_ledges_l%d_%s_front", (int)H, var[i]);
            int g = nm_sg_group_find(w, name);
            if (i == 0) {
                cr_assert_lt(g, 0, "the open ledge has nothing on its edge");
                continue;
            }
            prop_range(w, name, &lo, &hi);
            if (i == 1) {
                cr_assert_float_eq(lo, H, 1e-9);
                cr_assert_float_eq(hi, H + 1.1, 1e-9); /* above take-off + kFallClimb: blocks */
                cr_assert_gt(hi, H + NM_kFallClimb);
            } else if (i == 2) {
                cr_assert_float_eq(hi - lo, 0.25, 1e-9);
                cr_assert_lt(hi, H + NM_kFallClimb, "a lip is below the curtain");
            } else {
                cr_assert_float_eq(lo, H / 2, 1e-9);
                cr_assert_gt(lo, 0 + NM_kFallClimb, "slab bottom above landing + climb");
                cr_assert_lt(lo, H, "slab bottom below the take-off");
            }
        }
    tl_comp_free(c);
    nm_sg_world_free(w);
}

/* Cells along lattice row cy from cx0 to cx1: how many have their centre in no triangle, and
 * how many touch no triangle at all. */
static void row_cells(const nm_sg_world *w, long cy, long cx0, long cx1, int *no_core, int *empty)
{
    *no_core = *empty = 0;
    for (long cx = cx0; cx <= cx1; cx++) {
        bool in;
        bool t = tl_cell_touched(w, 0, cx, cy, &in);
        if (!in) (*no_core)++;
        if (!t) (*empty)++;
    }
}

Test(worlds, cracks_hold_one_to_four_cell_centres_and_holes_their_cell_count)
{
    nm_sg_world *w = scene("cracks_holes");
    /* lanes y in [1,5], [6,10], [11,15], [16,20] m; cracks at x = 24 m = 18 px = cell 72 */
    double ys[] = {3, 8, 13, 18};
    int expect_empty[] = {0, 0, 1, 2}; /* the ends touch the sides; the rest see nothing */
    for (int k = 0; k < 4; k++) {
        long cy = (long)floor(0.75 * ys[k] / NM_kCS);
        int no_core, empty;
        row_cells(w, cy, 66, 82, &no_core, &empty);
        cr_assert_eq(no_core, k + 1, "crack %d: %d cells without a centre inside", k + 1, no_core);
        cr_assert_eq(empty, expect_empty[k], "crack %d: %d untouched cells", k + 1, empty);
    }
    /* holes: count untouched cells in a window around each */
    struct {
        double x, y;
        int cells;
    } holes[] = {{8, 30, 12}, {20, 30, 32}, {32, 30, 36}};
    for (int k = 0; k < 3; k++) {
        long cx = (long)floor(0.75 * holes[k].x / NM_kCS), cy = (long)floor(0.75 * holes[k].y / NM_kCS);
        int n = 0;
        for (long y = cy - 4; y < cy + 12; y++)
            for (long x = cx - 4; x < cx + 10; x++)
                if (!tl_cell_touched(w, 0, x, y, NULL)) n++;
        cr_assert_eq(n, holes[k].cells, "hole %d: %d empty cells", holes[k].cells, n);
    }
    nm_sg_world_free(w);
}

Test(worlds, corridor_teeth_and_the_narrow_alley_beside_the_wide_road)
{
    nm_sg_world *w = scene("corridor");
    double zero[] = {0};
    expect_heights(w, 40, 45, 1, zero); /* the alley */
    expect_heights(w, 37.0, 45, 0, NULL);
    expect_heights(w, 43.0, 45, 0, NULL);
    expect_heights(w, 10, 45, 1, zero); /* the road west of the blocks */
    expect_heights(w, 40, 9, 1, zero);  /* corridor */
    expect_heights(w, 0.5, 12.5, 0, NULL); /* first tooth */
    expect_heights(w, 1.5, 12.5, 1, zero); /* between teeth */
    size_t n = 0;
    int g = group(w, "solid_corridor_saw");
    for (size_t i = 0; i < w->nt; i++) n += (int)w->t[i].group == g;
    cr_assert_eq(n, 12u * 41u, "wall + 40 teeth: %zu triangles", n);
    nm_sg_world_free(w);
}

Test(worlds, water_is_area_12_and_only_the_bridge_joins_the_banks)
{
    nm_sg_world *w = scene("water_bridge");
    int g = group(w, "water_water_bridge_river");
    cr_assert_eq(w->g[g].role, NM_SG_WATER);
    cr_assert_eq(w->g[g].area, 12);
    double h[4];
    cr_assert_eq(tl_heights(w, 30, 10, NULL, true, h, 4), 1);
    cr_assert_float_eq(h[0], -1, 1e-9);
    expect_heights(w, 30, 10, 0, NULL);
    double deck[] = {0};
    expect_heights(w, 32, 20, 1, deck);
    tl_comp *c = tl_components(w);
    int a = tl_comp_at(c, w, 10, 10, 0);
    cr_assert_geq(a, 0);
    cr_assert_eq(tl_comp_at(c, w, 55, 10, 0), a, "bridge joins the banks");
    cr_assert_neq(tl_comp_at(c, w, 30, 10, -1), a);
    tl_comp_free(c);
    double lo, hi;
    prop_range(w, "prop_water_bridge_bridge", &lo, &hi);
    cr_assert_float_eq(hi, 1.1, 1e-9);
    nm_sg_world_free(w);
}

Test(worlds, islands_are_apart_and_links_end_on_their_surfaces)
{
    nm_sg_world *w = scene("island");
    cr_assert_eq(w->nl, 2u);
    cr_assert(w->links[0].bidir);
    cr_assert_not(w->links[1].bidir);
    tl_comp *c = tl_components(w);
    int bank = tl_comp_at(c, w, 10, 20, 0), a = tl_comp_at(c, w, 50, 20, 0.5);
    int b = tl_comp_at(c, w, 68, 20, 0.5);
    cr_assert(bank >= 0 && a >= 0 && b >= 0);
    cr_assert(bank != a && a != b && bank != b);
    for (size_t i = 0; i < w->nl; i++) {
        const nm_sg_vec *e[2] = {&w->links[i].a, &w->links[i].b};
        for (int k = 0; k < 2; k++)
            cr_assert_geq(tl_comp_at(c, w, e[k]->x, e[k]->y, e[k]->h), 0,
                          "link %zu end %d is on no surface", i, k);
    }
    cr_assert_eq(tl_comp_at(c, w, w->links[0].b.x, w->links[0].b.y, 0.5), a);
    cr_assert_eq(tl_comp_at(c, w, w->links[1].b.x, w->links[1].b.y, 0.5), b);
    tl_comp_free(c);
    double h[4];
    cr_assert_eq(tl_heights(w, 50, 20, NULL, true, h, 4), 0, "no water under the island");
    nm_sg_world_free(w);
}

Test(worlds, building_floors_stairs_door_balcony_and_tier)
{
    nm_sg_world *w = scene("building");
    double h[64];
    int n = tl_group_heights(w, group(w, "walk_building_house"), h, 64);
    for (int k = 0; k <= 48; k++) { /* floors, treads every 0.25 m up to 8, the roof at 12 */
        bool found = false;
        for (int i = 0; i < n; i++) found |= fabs(h[i] - 0.25 * k) < 1e-9;
        cr_assert(found == (k <= 32 || k == 48), "height %.2f %s", 0.25 * k, found ? "unexpected" : "missing");
    }
    tl_comp *c = tl_components(w);
    int ground = tl_comp_at(c, w, 10, 10, 0);
    cr_assert_eq(tl_comp_at(c, w, 31.5, 20.2, 0), ground, "door threshold");
    cr_assert_eq(tl_comp_at(c, w, 40, 36, 4), ground, "first floor");
    cr_assert_eq(tl_comp_at(c, w, 40, 36, 8), ground, "top floor");
    cr_assert_eq(tl_comp_at(c, w, 30, 41, 8), ground, "balcony");
    cr_assert_neq(tl_comp_at(c, w, 30, 30, 12), ground, "the roof has no stairs");
    tl_comp_free(c);
    double hi = -INFINITY;
    int pg = group(w, "prop_building_house");
    for (size_t i = 0; i < w->nt; i++)
        if ((int)w->t[i].group == pg && w->v[w->t[i].v[0]].y > 40.2)
            for (int k = 0; k < 3; k++) hi = fmax(hi, w->v[w->t[i].v[k]].h);
    cr_assert_float_eq(hi, 9.1, 1e-9, "balcony railing 1.1 m over the top floor");
    cr_assert_not_null(w->zones[0].tiers);
    nm_sg_world_free(w);
}

Test(worlds, regions_joined_by_a_ledge_only_and_not_at_all)
{
    nm_sg_world *w = scene("regions");
    double low[] = {0}, high[] = {5};
    expect_heights(w, 29.5, 15, 1, low);
    expect_heights(w, 30.5, 15, 1, high);
    expect_heights(w, 77, 15, 0, NULL);
    tl_comp *c = tl_components(w);
    int r[4] = {tl_comp_at(c, w, 10, 15, 0), tl_comp_at(c, w, 40, 15, 5),
                tl_comp_at(c, w, 65, 15, 0), tl_comp_at(c, w, 90, 15, 0)};
    for (int i = 0; i < 4; i++) {
        cr_assert_geq(r[i], 0);
        for (int j = 0; j < i; j++) cr_assert_neq(r[i], r[j]);
    }
    tl_comp_free(c);
    nm_sg_world_free(w);
}

Test(worlds, two_zones_have_their_own_groups_and_transforms)
{
    nm_sg_world *w = scene("two_zones");
    cr_assert_eq(w->nz, 2u);
    cr_assert_float_eq(w->zones[1].tf[1], -75, 1e-9);
    cr_assert_eq(w->g[group(w, "walk_west_ground")].zone, 0);
    cr_assert_eq(w->g[group(w, "walk_east_ground")].zone, 1);
    cr_assert_eq(w->g[group(w, "walk_east_deck")].zone, 1);
    for (size_t i = 0; i < w->nt; i++) {
        const nm_sg_vec *v = &w->v[w->t[i].v[0]];
        int z = w->g[w->t[i].group].zone;
        cr_assert(z == 0 ? v->x <= 40 : v->x >= 100, "triangle in the wrong zone");
    }
    nm_sg_world_free(w);
}

/* Directed edges (a -> b) of the walkable triangles: a riser or facade strip wound against its
 * neighbours repeats their directed edge, and ZoneClean cuts both sides apart (规则 1), leaving a
 * wall at every stair foot. Every directed edge must occur once. */
typedef struct dedge {
    uint32_t a, b;
} dedge;

static int cmp_dedge(const void *x, const void *y)
{
    const dedge *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static size_t repeated_directed_edges(const nm_sg_world *w)
{
    dedge *e = malloc(w->nt * 3 * sizeof *e);
    cr_assert_not_null(e);
    size_t n = 0, rep = 0;
    for (size_t i = 0; i < w->nt; i++) {
        if (w->g[w->t[i].group].role != NM_SG_WALK) continue;
        for (int k = 0; k < 3; k++) e[n++] = (dedge){w->t[i].v[k], w->t[i].v[(k + 1) % 3]};
    }
    qsort(e, n, sizeof *e, cmp_dedge);
    for (size_t i = 1; i < n; i++) rep += e[i].a == e[i - 1].a && e[i].b == e[i - 1].b;
    free(e);
    return rep;
}

Test(worlds, risers_and_facade_strips_are_wound_with_their_neighbours)
{
    const char *names[] = {"stairs", "building", "facade", "bump_dip", "ledges"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        nm_sg_world *w = scene(names[k]);
        cr_expect_eq(repeated_directed_edges(w), 0u, "%s: walkable directed edges repeat", names[k]);
        nm_sg_world_free(w);
    }
}
