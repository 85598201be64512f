/* test_snap.c — snapping on a ZoneClean (article 吸附, 起点所在的面): the three comparison keys,
 * the height-band preference, the tie-break order, the 8 px then 16 px rounds, the candidate filter,
 * and the geometric helpers it relies on. */
#include <criterion/criterion.h>
#include <math.h>

#include "fixture.h"

/* A 20 x 20 px right triangle with its corner at (x, y), own vertices, height h; (x+5, y+5) lies
 * inside. */
static uint32_t flat(fx *f, double x, double y, double h)
{
    return fx_tri_at(f, x, y, x + 20, y, x, y + 20, h);
}

/* A triangle whose nearest point to (0, 0) is (d, 0), at planar distance d. */
static uint32_t at_distance(fx *f, double d, double h)
{
    return fx_tri_at(f, d, -5, d + 10, 0, d, 5, h);
}

/* Puts triangle t in a raw component of 600 triangles (far-away fillers chained through pack
 * neighbours), so t is not an island while it stays a component of its own. */
static void make_mainland(fx *f, uint32_t t)
{
    uint32_t prev = t;
    for (int i = 0; i < 599; i++) {
        uint32_t u = fx_tri_at(f, 5000.0 + 30.0 * i + 300.0 * t, 0, 5005.0 + 30.0 * i + 300.0 * t, 0,
                               5000.0 + 30.0 * i + 300.0 * t, 5, 0);
        fx_nb(f, prev, prev == t ? 0 : 1, (int32_t)u);
        fx_nb(f, u, 0, (int32_t)prev);
        prev = u;
    }
}

static nm_zone_snap_opts opts_floor(double floor_y)
{
    nm_zone_snap_opts o = nm_zone_snap_defaults();
    o.floor_y = (float)floor_y;
    return o;
}

static nm_zone_snap_opts opts_deck(double deck_y)
{
    nm_zone_snap_opts o = nm_zone_snap_defaults();
    o.deck_y = (float)deck_y;
    return o;
}

/* Snaps (x, y) and returns the zone-local triangle; fails the test when nothing is found. */
static uint32_t snap_tri(const nm_zone_clean *zc, double x, double y, const nm_zone_snap_opts *o)
{
    nm_zone_snap_result r;
    nm_error e = {0};
    int rc = nm_zone_snap(zc, x, y, o, &r, &e);
    cr_assert_eq(rc, NM_OK, "snap (%g, %g): %s", x, y, e.msg);
    return r.tri;
}

static nm_zone_clean *build(fx *f)
{
    fx_finish(f);
    nm_zone_clean *zc = NULL;
    FX_BUILD(f, 1, &zc);
    return zc;
}

static void done(fx *f, nm_zone_clean *zc)
{
    nm_zone_clean_free(zc);
    fx_free(f);
}

Test(zone_snap, stacked_floors_at_distance_0_without_floor_take_the_highest)
{
    fx f;
    fx_init(&f, true, false);
    flat(&f, 0, 0, 0);
    flat(&f, 0, 0, 10);
    flat(&f, 0, 0, 5);
    nm_zone_clean *zc = build(&f);
    nm_zone_snap_result r;
    cr_assert_eq(nm_zone_snap(zc, 5, 5, NULL, &r, NULL), NM_OK);
    cr_assert_eq(r.tri, 1);
    cr_assert_eq(r.dist, 0.0);
    cr_assert_eq(r.h, 10.0);
    cr_assert_eq(r.x, 5.0);
    cr_assert_eq(r.y, 5.0);
    cr_assert_eq(r.round, 1);
    done(&f, zc);
}

Test(zone_snap, with_floor_take_the_layer_nearest_the_floor)
{
    fx f;
    fx_init(&f, true, false);
    flat(&f, 0, 0, 0);
    flat(&f, 0, 0, 10);
    flat(&f, 0, 0, 20);
    nm_zone_clean *zc = build(&f);
    double floors[4] = {9, 16, -3, 14};
    uint32_t want[4] = {1, 2, 0, 1};
    for (int i = 0; i < 4; i++) {
        nm_zone_snap_opts o = opts_floor(floors[i]);
        cr_assert_eq(snap_tri(zc, 5, 5, &o), want[i], "floor %g", floors[i]);
    }
    done(&f, zc);
}

Test(zone_snap, floor_band_prefers_in_band_then_falls_back_to_the_nearest)
{
    fx f;
    fx_init(&f, true, false);
    flat(&f, -5, -5, 0);          /* 0: under the point, h 0 */
    at_distance(&f, 3.0, 50);     /* 1: 3 px away, h 50 */
    nm_zone_clean *zc = build(&f);
    nm_zone_snap_opts o50 = opts_floor(50), o45 = opts_floor(45), o200 = opts_floor(200), om = opts_floor(-100);
    cr_assert_eq(snap_tri(zc, 0, 0, &o50), 1, "in band beats distance");
    cr_assert_eq(snap_tri(zc, 0, 0, &o45), 1, "5 m off is still inside the 12 m band");
    cr_assert_eq(snap_tri(zc, 0, 0, &o200), 0, "both out of band: the nearest, not the closer height");
    cr_assert_eq(snap_tri(zc, 0, 0, &om), 0);
    cr_assert_eq(snap_tri(zc, 0, 0, NULL), 0, "no floor: distance first");
    done(&f, zc);
}

Test(zone_snap, ties_broken_by_height_then_island_then_triangle_id)
{
    /* height before island: an island above a mainland triangle wins */
    {
        fx f;
        fx_init(&f, true, false);
        flat(&f, 0, 0, 5);
        flat(&f, 0, 0, 3);
        make_mainland(&f, 1);
        nm_zone_clean *zc = build(&f);
        cr_assert(nm_zone_island(zc, 0));
        cr_assert_not(nm_zone_island(zc, 1));
        cr_assert_eq(snap_tri(zc, 5, 5, NULL), 0);
        done(&f, zc);
    }
    /* same height: the mainland triangle beats the island, whatever the numbers */
    {
        fx f;
        fx_init(&f, true, false);
        flat(&f, 0, 0, 5);
        flat(&f, 0, 0, 5);
        make_mainland(&f, 1);
        nm_zone_clean *zc = build(&f);
        cr_assert_eq(snap_tri(zc, 5, 5, NULL), 1);
        nm_zone_snap_result r;
        cr_assert_eq(nm_zone_snap(zc, 5, 5, NULL, &r, NULL), NM_OK);
        cr_assert_not(r.island);
        nm_zone_snap_opts o = opts_floor(5);
        cr_assert_eq(snap_tri(zc, 5, 5, &o), 1, "the floor key has the island term too");
        done(&f, zc);
    }
    /* everything equal: the smaller triangle number */
    {
        fx f;
        fx_init(&f, true, false);
        flat(&f, 0, 0, 5);
        flat(&f, 0, 0, 5);
        flat(&f, 0, 0, 5);
        nm_zone_clean *zc = build(&f);
        cr_assert_eq(snap_tri(zc, 5, 5, NULL), 0);
        done(&f, zc);
    }
    /* island after distance (#6011): a nearer island beats a farther mainland triangle */
    {
        fx f;
        fx_init(&f, true, false);
        at_distance(&f, 1.0, 0);
        at_distance(&f, 2.0, 0);
        make_mainland(&f, 1);
        nm_zone_clean *zc = build(&f);
        cr_assert_eq(snap_tri(zc, 0, 0, NULL), 0);
        done(&f, zc);
    }
    /* floor key: equal height offsets above and below the floor, the island loses */
    {
        fx f;
        fx_init(&f, true, false);
        flat(&f, 0, 0, 3);
        flat(&f, 0, 0, 7);
        make_mainland(&f, 1);
        nm_zone_clean *zc = build(&f);
        nm_zone_snap_opts o = opts_floor(5);
        cr_assert_eq(snap_tri(zc, 5, 5, &o), 1);
        done(&f, zc);
    }
}

Test(zone_snap, radius_8_then_16_fallback)
{
    {
        fx f;
        fx_init(&f, true, false);
        at_distance(&f, 12.0, 0);  /* 0: only in the second round */
        at_distance(&f, 7.5, 100); /* 1: in the first round, far from the floor */
        nm_zone_clean *zc = build(&f);
        nm_zone_snap_opts o = opts_floor(0);
        nm_zone_snap_result r;
        cr_assert_eq(nm_zone_snap(zc, 0, 0, &o, &r, NULL), NM_OK);
        cr_assert_eq(r.tri, 1, "the second round runs only when the first finds nothing");
        cr_assert_eq(r.round, 1);
        cr_assert_eq(r.dist, 7.5);
        done(&f, zc);
    }
    {
        fx f;
        fx_init(&f, true, false);
        at_distance(&f, 12.0, 0);
        at_distance(&f, 60.0, 0);
        nm_zone_clean *zc = build(&f);
        nm_zone_snap_result r;
        cr_assert_eq(nm_zone_snap(zc, 0, 0, NULL, &r, NULL), NM_OK);
        cr_assert_eq(r.tri, 0);
        cr_assert_eq(r.round, 2);
        cr_assert_eq(r.dist, 12.0);
        cr_assert_eq(r.x, 12.0);
        cr_assert_eq(r.y, 0.0);
        done(&f, zc);
    }
    {
        fx f; /* exactly 8 px is inside the first round */
        fx_init(&f, true, false);
        at_distance(&f, 8.0, 0);
        nm_zone_clean *zc = build(&f);
        nm_zone_snap_result r;
        cr_assert_eq(nm_zone_snap(zc, 0, 0, NULL, &r, NULL), NM_OK);
        cr_assert_eq(r.round, 1);
        done(&f, zc);
    }
}

Test(zone_snap, nothing_within_16px_is_not_found)
{
    double ds[2] = {16.0, 16.5};
    for (int i = 0; i < 2; i++) {
        fx f;
        fx_init(&f, true, false);
        at_distance(&f, ds[i], 0);
        nm_zone_clean *zc = build(&f);
        nm_zone_snap_result r;
        nm_error e = {0};
        int rc = nm_zone_snap(zc, 0, 0, NULL, &r, &e);
        if (i == 0) {
            cr_assert_eq(rc, NM_OK, "16 px is within the fallback radius");
            cr_assert_eq(r.round, 2);
        } else {
            cr_assert_eq(rc, NM_ZONE_NOT_FOUND);
            cr_assert(strstr(e.msg, "zone z"), "%s", e.msg);
        }
        done(&f, zc);
    }
}

Test(zone_snap, start_deck_key_uses_the_2m_band_and_no_island_term)
{
    fx f;
    fx_init(&f, true, false);
    at_distance(&f, 3.0, 1);    /* 0: h 1, 3 px away */
    flat(&f, -5, -5, 5);        /* 1: h 5, under the point */
    nm_zone_clean *zc = build(&f);
    nm_zone_snap_opts d1 = opts_deck(1), d35 = opts_deck(3.5), f1 = opts_floor(1);
    cr_assert_eq(snap_tri(zc, 0, 0, &d1), 0, "the deck band (2 m) beats distance");
    cr_assert_eq(snap_tri(zc, 0, 0, &d35), 1, "2.5 m off is out of the deck band, 1.5 m is in");
    cr_assert_eq(snap_tri(zc, 0, 0, &f1), 1, "the same height as a floor is inside its 12 m band");
    nm_zone_snap_opts both = opts_deck(1);
    both.floor_y = 5.0f;
    cr_assert_eq(snap_tri(zc, 0, 0, &both), 0, "a deck overrides a floor");
    done(&f, zc);

    /* stacked at the same height: the deck key goes by triangle number, not by island */
    fx g;
    fx_init(&g, true, false);
    flat(&g, 0, 0, 5);
    flat(&g, 0, 0, 5);
    make_mainland(&g, 1);
    zc = build(&g);
    nm_zone_snap_opts d5 = opts_deck(5);
    cr_assert_eq(snap_tri(zc, 5, 5, &d5), 0);
    cr_assert_eq(snap_tri(zc, 5, 5, NULL), 1);
    /* and nearest height within the band */
    done(&g, zc);
    fx h;
    fx_init(&h, true, false);
    flat(&h, 0, 0, 0);
    flat(&h, 0, 0, 1.5);
    flat(&h, 0, 0, 10);
    zc = build(&h);
    nm_zone_snap_opts d11 = opts_deck(1.1);
    cr_assert_eq(snap_tri(zc, 5, 5, &d11), 1);
    done(&h, zc);
}

typedef struct filter_ctx {
    uint32_t reject;
    int calls;
    bool point_ok;
} filter_ctx;

static bool reject_one(void *vctx, uint32_t tri, double px, double py)
{
    filter_ctx *c = (filter_ctx *)vctx;
    c->calls++;
    if (px != 5.0 || py != 5.0) c->point_ok = false;
    return tri != c->reject;
}

Test(zone_snap, candidate_filter_drops_triangles_before_ranking)
{
    fx f;
    fx_init(&f, true, false);
    flat(&f, 0, 0, 0);
    flat(&f, 0, 0, 10);
    nm_zone_clean *zc = build(&f);
    filter_ctx c = {1, 0, true};
    nm_zone_snap_opts o = nm_zone_snap_defaults();
    o.accept = reject_one;
    o.accept_ctx = &c;
    cr_assert_eq(snap_tri(zc, 5, 5, &o), 0);
    cr_assert_eq(c.calls, 2, "each candidate is offered once");
    cr_assert(c.point_ok, "the filter sees the closest point on the triangle");
    c.reject = 0;
    c.calls = 0;
    cr_assert_eq(snap_tri(zc, 5, 5, &o), 1);
    done(&f, zc);
}

Test(zone_snap, unwalkable_triangles_are_never_snapped_to)
{
    fx f;
    fx_init(&f, false, true);
    flat(&f, 0, 0, 0);
    flat(&f, 0, 0, 10);
    at_distance(&f, 30, 0);
    fx_area(&f, 1, 12);
    nm_zone_clean *zc = build(&f);
    cr_assert_eq(snap_tri(zc, 5, 5, NULL), 0);
    nm_zone_snap_opts o = opts_floor(10);
    cr_assert_eq(snap_tri(zc, 5, 5, &o), 0, "not even when it matches the floor");
    cr_assert_eq(snap_tri(zc, 33, 0, NULL), 2);
    done(&f, zc);
}

Test(zone_snap, result_names_the_whole_pack_triangle_and_the_snapped_point)
{
    fx f;
    fx_init(&f, true, false);
    flat(&f, 1000, 1000, 0);              /* zone "y" */
    flat(&f, 0, 0, 2);                    /* zone "z": local 0, global 1 */
    fx_zone(&f, 1, "y", 0, 1, 0);
    fx_zone(&f, 2, "z", 1, 1, 0);
    nm_zone_clean *zc = build(&f);
    nm_zone_snap_result r;
    /* (-3, 4) is 3 px left of the edge u = 0: snapped to (0, 4) */
    cr_assert_eq(nm_zone_snap(zc, -3, 4, NULL, &r, NULL), NM_OK);
    cr_assert_eq(r.tri, 0);
    cr_assert_eq(r.tri_global, 1);
    cr_assert_float_eq(r.x, 0.0, 1e-12);
    cr_assert_float_eq(r.y, 4.0, 1e-12);
    cr_assert_float_eq(r.dist, 3.0, 1e-12);
    cr_assert_eq(r.h, 2.0);
    cr_assert(r.island);
    cr_assert_eq(nm_zone_snap(zc, NAN, 0, NULL, &r, NULL), NM_ERR_ARG);
    done(&f, zc);
}

Test(zone_geometry, closest_point_inside_on_edge_and_at_a_corner)
{
    fx f;
    fx_init(&f, true, false);
    fx_tri_at(&f, 0, 0, 10, 0, 0, 10, 1);
    fx_vert(&f, 0, 0, 0);
    nm_zone_clean *zc = build(&f);
    double cx, cy;
    cr_assert_eq(nm_zone_closest_on_tri(zc, 0, 2, 3, &cx, &cy), 0.0);
    cr_assert(cx == 2 && cy == 3);
    cr_assert_float_eq(nm_zone_closest_on_tri(zc, 0, 5, -2, &cx, &cy), 2.0, 1e-12);
    cr_assert(cx == 5 && cy == 0);
    cr_assert_float_eq(nm_zone_closest_on_tri(zc, 0, -3, -4, &cx, &cy), 5.0, 1e-12);
    cr_assert(cx == 0 && cy == 0);
    cr_assert_float_eq(nm_zone_closest_on_tri(zc, 0, 10, 10, &cx, &cy), sqrt(50.0), 1e-12);
    cr_assert_float_eq(cx, 5.0, 1e-12);
    cr_assert_eq(nm_zone_tri_height(zc, 0), 1.0);
    done(&f, zc);
}

static int count_visit(void *ctx, uint32_t t)
{
    int *c = (int *)ctx;
    c[t]++;
    return 0;
}

Test(zone_geometry, bucket_walk_visits_each_triangle_once)
{
    fx f;
    fx_init(&f, true, false);
    fx_tri_at(&f, 0, 0, 200, 0, 0, 200, 0); /* spans many 24 px buckets */
    fx_tri_at(&f, 300, 300, 310, 300, 300, 310, 0);
    nm_zone_clean *zc = build(&f);
    cr_assert_gt(zc->grid_nx, 8);
    int c[2] = {0, 0};
    nm_zone_tris_in_rect(zc, -50, -50, 400, 400, count_visit, c);
    cr_assert(c[0] == 1 && c[1] == 1, "visits %d %d", c[0], c[1]);
    c[0] = c[1] = 0;
    nm_zone_tris_in_rect(zc, 100, 100, 150, 150, count_visit, c);
    cr_assert(c[0] == 1 && c[1] == 0, "visits %d %d", c[0], c[1]);
    c[0] = c[1] = 0;
    nm_zone_tris_in_rect(zc, 1000, 1000, 1100, 1100, count_visit, c);
    cr_assert(c[0] == 0 && c[1] == 0);
    done(&f, zc);
}
