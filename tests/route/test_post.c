/* test_post.c — behaviour of post-processing (design article 后处理): the StringPull example and
 * its idempotence on random paths, endpoint splice, search heights matched forward, LiftCorners
 * never lowering the route's minimum clearance, heights along the route, drop landings moved at
 * least the margin away from the upper surface, waypoints that never span a drop and end with
 * the goal, and the whole chain on a hand-made window. */
#include "../sight/sight_fixture.h"
#include "route/post.h"

/* ---- 拉直 ---- */
typedef struct table_vis {
    uint32_t n;
    const uint8_t *see; /* n*n */
    const uint32_t *map; /* index remap (second pass), NULL = identity */
    int calls;
} table_vis;

static bool tvis(void *ctx, uint32_t i, uint32_t j)
{
    table_vis *t = ctx;
    t->calls++;
    if (t->map) {
        i = t->map[i];
        j = t->map[j];
    }
    return t->see[i * t->n + j] != 0;
}

Test(post, string_pull_reproduces_the_article_example_0_4_5_9)
{
    enum { N = 10 };
    uint8_t see[N * N] = {0};
    see[0 * N + 4] = 1; /* anchor 0: 9..5 blocked, 4 visible */
    see[5 * N + 9] = 1; /* anchor 5 sees 9; anchor 4 sees none of 9..6 */
    table_vis t = {N, see, NULL, 0};
    uint32_t keep[N];
    uint32_t nk = nm_post_string_pull(N, tvis, &t, keep);
    cr_assert_eq(nk, 4);
    cr_assert(keep[0] == 0 && keep[1] == 4 && keep[2] == 5 && keep[3] == 9);
}

Test(post, string_pull_is_idempotent_on_random_paths)
{
    uint64_t rs = 99;
    for (int round = 0; round < 400; ++round) {
        uint32_t n = 2 + (uint32_t)(fx_rng(&rs) % 40);
        uint8_t *see = nm_malloc((size_t)n * n);
        double p = fx_unit(&rs);
        for (uint32_t k = 0; k < n * n; ++k)
            see[k] = fx_unit(&rs) < p;
        table_vis t = {n, see, NULL, 0};
        uint32_t keep[64], keep2[64];
        uint32_t nk = nm_post_string_pull(n, tvis, &t, keep);
        cr_assert(nk >= 2 && keep[0] == 0 && keep[nk - 1] == n - 1);
        for (uint32_t k = 1; k < nk; ++k)
            cr_assert(keep[k] > keep[k - 1]);
        table_vis t2 = {n, see, keep, 0};
        uint32_t nk2 = nm_post_string_pull(nk, tvis, &t2, keep2);
        cr_assert_eq(nk2, nk, "round %d: second pass keeps the same points", round);
        for (uint32_t k = 0; k < nk2; ++k)
            cr_assert_eq(keep2[k], k);
        nm_free(see);
    }
}

Test(post, string_pull_on_a_window_is_idempotent_and_never_crosses_blockers)
{
    enum { NX = 48, NY = 48 };
    uint64_t rs = 7;
    for (int round = 0; round < 20; ++round) {
        float fl[NX * NY];
        for (int c = 0; c < NX * NY; ++c)
            fl[c] = 0;
        for (int b = 0; b < 6; ++b) { /* random obstacle blocks */
            int bi = (int)(fx_rng(&rs) % 40), bj = (int)(fx_rng(&rs) % 40);
            for (int j = bj; j < bj + 6; ++j)
                for (int i = bi; i < bi + 6; ++i)
                    fl[j * NX + i] = NAN;
        }
        nm_window w;
        fx_window(&w, NX, NY, 0, 0, fl, NULL, 0);
        nm_sight_blockers blk;
        cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
        nm_sight_oracle o;
        cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
        /* a random 8-connected walk through free cells */
        double xy[2 * 400];
        float h[400];
        uint32_t n = 0;
        int ci = -1, cj = -1;
        for (int tries = 0; tries < 1000 && ci < 0; ++tries) {
            int i = (int)(fx_rng(&rs) % NX), j = (int)(fx_rng(&rs) % NY);
            if (!isnan(fl[j * NX + i]))
                ci = i, cj = j;
        }
        cr_assert(ci >= 0);
        while (n < 400) {
            xy[2 * n] = fx_cx(&w, ci);
            xy[2 * n + 1] = fx_cy(&w, cj);
            h[n++] = 0;
            int moved = 0;
            for (int t = 0; t < 16 && !moved; ++t) {
                int a = ci + (int)(fx_rng(&rs) % 3) - 1, b = cj + (int)(fx_rng(&rs) % 3) - 1;
                if ((a != ci || b != cj) && a >= 0 && b >= 0 && a < NX && b < NY &&
                    !isnan(fl[b * NX + a]) && !isnan(fl[cj * NX + a]) && !isnan(fl[b * NX + ci]))
                    ci = a, cj = b, moved = 1;
            }
            if (!moved)
                break;
        }
        nm_sight_view v = {&w, &blk, NULL, &o, true, true};
        nm_post_points_vis pv = {&v, xy, h};
        uint32_t keep[400], keep2[400];
        uint32_t nk = nm_post_string_pull(n, nm_post_vis_points, &pv, keep);
        for (uint32_t k = 0; k + 1 < nk; ++k)
            if (keep[k + 1] > keep[k] + 1) /* checked chords never cross a blocker */
                cr_assert(!nm_sight_blocked(&blk, xy[2 * keep[k]], xy[2 * keep[k] + 1],
                                            xy[2 * keep[k + 1]], xy[2 * keep[k + 1] + 1]));
        double xy2[2 * 400];
        float h2[400];
        for (uint32_t k = 0; k < nk; ++k) {
            xy2[2 * k] = xy[2 * keep[k]];
            xy2[2 * k + 1] = xy[2 * keep[k] + 1];
            h2[k] = 0;
        }
        nm_post_points_vis pv2 = {&v, xy2, h2};
        uint32_t nk2 = nm_post_string_pull(nk, nm_post_vis_points, &pv2, keep2);
        cr_assert_eq(nk2, nk, "round %d", round);
        nm_sight_oracle_free(&o);
        nm_sight_blockers_free(&blk);
        fx_free(&w);
    }
}

Test(post, string_pull_takes_the_neighbour_step_across_a_wall_band_unchecked)
{
    /* a corridor row crossed by a kept wall between columns 10 and 11 (a Dead band): the pull
     * cannot see across it, so it keeps the neighbour step over the band */
    enum { NX = 24, NY = 5 };
    float fl[NX * NY];
    for (int c = 0; c < NX * NY; ++c)
        fl[c] = 0;
    nm_window w;
    fx_window(&w, NX, NY, 0, 0, fl, NULL, 0);
    nm_window_seg wall = {11 * 0.25, -1.0, 11 * 0.25, 3.0, NM_SEG_WALL};
    w.segs = nm_malloc(sizeof wall);
    w.segs[0] = wall;
    w.nsegs = 1;
    nm_sight_blockers blk;
    cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[2 * 20];
    float h[20] = {0};
    for (int k = 0; k < 20; ++k) {
        xy[2 * k] = fx_cx(&w, 2 + k);
        xy[2 * k + 1] = fx_cy(&w, k < 9 ? 1 : 3);
    }
    nm_sight_view v = {&w, &blk, NULL, &o, true, true};
    nm_post_points_vis pv = {&v, xy, h};
    uint32_t keep[20];
    uint32_t nk = nm_post_string_pull(20, nm_post_vis_points, &pv, keep);
    /* columns 10 | 11 are points 8 and 9 */
    bool step = false;
    for (uint32_t k = 0; k + 1 < nk; ++k)
        step |= keep[k] == 8 && keep[k + 1] == 9;
    cr_assert(step, "the band is crossed by the unchecked neighbour step 8 -> 9");
    cr_assert_eq(keep[nk - 1], 19);
    nm_sight_oracle_free(&o);
    nm_sight_blockers_free(&blk);
    fx_free(&w);
}

/* ---- 端点拼接 / 对回搜索面高 ---- */
Test(post, splice_uses_raw_ends_and_strips_points_within_0_4_px)
{
    double in[] = {1.1, 1.0, 2.0, 1.0, 3.0, 1.0, 4.0, 2.0, 5.8, 2.0};
    double out[2 * 7];
    uint32_t m = nm_post_splice(1.0, 1.0, in, 5, 6.0, 2.0, false, out);
    /* (1.1,1) and (5.8,2) are within 0.4 px of the raw ends */
    cr_assert_eq(m, 5);
    cr_assert(out[0] == 1.0 && out[1] == 1.0 && out[8] == 6.0 && out[9] == 2.0);
    m = nm_post_splice(1.0, 1.0, in, 5, 6.0, 2.0, true, out);
    /* parent chain: (2,1) lies on (1,1)-(3,1) and goes */
    cr_assert_eq(m, 4);
    cr_assert(out[2] == 3.0 && out[3] == 1.0 && out[4] == 4.0 && out[5] == 2.0);
}

Test(post, collinear_removal_tolerates_rounding_but_keeps_real_bends)
{
    double in[] = {1.0, 1e-12, 2.0, 0.0, 3.0, 1e-3};
    double out[2 * 7];
    uint32_t m = nm_post_splice(0, 0, in, 3, 4, 0, true, out);
    cr_assert_eq(m, 4, "the 1e-12 offset is collinear, the 1e-3 bend is kept (%u)", m);
    cr_assert(out[2] == 2.0 && out[3] == 0.0 && out[4] == 3.0 && out[5] == 1e-3);
    m = nm_post_splice(0, 0, in, 3, 4, 0, false, out);
    cr_assert_eq(m, 5, "without a parent chain nothing collinear is removed");
}

/* A parent chain that turns back along its own line (off a ramp's end by a ledge drop, back under
 * the ramp on the ground: recast-navtest at 0.70 px/m, seed 29 leg 79) keeps its turning point, the
 * drop's landing; a point between its neighbours on the line still goes. */
Test(post, collinear_removal_keeps_a_point_where_the_chain_turns_back)
{
    /* up the ramp to (33.875, -5.375), the landing at (34.125, -5.375), back to (32.625, -5.375) */
    double in[] = {29.375, -1.875, 32.875, -5.125, 33.875, -5.375, 34.125, -5.375, 32.625, -5.375,
                   32.375, -7.125};
    double out[2 * 8];
    uint32_t m = nm_post_splice(29.456, -1.831, in, 6, 32.431, -7.173, true, out);
    cr_assert_eq(m, 6, "%u points", m);
    cr_assert(out[6] == 34.125 && out[7] == -5.375, "the landing stays: (%g, %g)", out[6], out[7]);
    cr_assert(out[8] == 32.625 && out[9] == -5.375);
    /* straight on along the line: the middle point goes */
    double on[] = {1.0, 0.0, 2.0, 0.0, 3.0, 0.0};
    m = nm_post_splice(0, 0, on, 3, 4, 0, true, out);
    cr_assert_eq(m, 2, "%u points", m);
}

Test(post, search_heights_match_forward_so_a_revisited_spot_gets_its_own_layer)
{
    double pin[] = {0, 0, 1, 0, 2, 0, 1, 0, 0, 5};
    float hin[] = {0, 1, 2, 9, 4};
    double xy[] = {0.1, 0, 1, 0, 2, 0, 1, 0, 0, 5.2};
    float h[5];
    cr_assert(nm_post_match_heights(xy, 5, pin, hin, 5, h));
    cr_assert(h[0] == 0 && h[1] == 1 && h[2] == 2 && h[3] == 9 && h[4] == 4);
    xy[4] = 2.5;
    cr_assert(!nm_post_match_heights(xy, 5, pin, hin, 5, h), "an unmatched point empties it");
}

/* ---- 拐点抬升 ---- */
static double route_min_clr(const nm_window *w, const double *xy, uint32_t n)
{
    double m = INFINITY;
    for (uint32_t k = 0; k + 1 < n; ++k)
        m = fmin(m, nm_sight_seg_min_clr(w->dist, &w->win, xy[2 * k], xy[2 * k + 1],
                                         xy[2 * k + 2], xy[2 * k + 3]));
    return m;
}

static void block_window(nm_window *w, int nx, int ny, const int (*blocks)[4], int nb)
{
    float *fl = nm_malloc((size_t)nx * ny * sizeof *fl);
    for (int c = 0; c < nx * ny; ++c)
        fl[c] = 0;
    for (int b = 0; b < nb; ++b)
        for (int j = blocks[b][1]; j <= blocks[b][3]; ++j)
            for (int i = blocks[b][0]; i <= blocks[b][2]; ++i)
                if (i >= 0 && j >= 0 && i < nx && j < ny)
                    fl[j * nx + i] = NAN;
    fx_window(w, nx, ny, 0, 0, fl, NULL, 0);
    fx_clearance(w);
    nm_free(fl);
}

Test(post, lift_corners_moves_a_corner_off_an_obstacle_corner)
{
    nm_window w;
    const int blocks[1][4] = {{15, 15, 24, 24}};
    block_window(&w, 40, 40, blocks, 1);
    nm_sight_blockers blk;
    cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[] = {fx_cx(&w, 10), fx_cy(&w, 30), fx_cx(&w, 25), fx_cy(&w, 25), fx_cx(&w, 30),
                   fx_cy(&w, 10)};
    double before = route_min_clr(&w, xy, 3);
    float here = w.dist[25 * 40 + 25];
    nm_sight_view hard = {&w, &blk, NULL, &o, true, true};
    float hs[3] = {0, 0, 0};
    bool hs_ok;
    uint32_t moved = nm_post_lift_corners(&w, &hard, &o, xy, 3, 0.0f, hs, &hs_ok);
    cr_assert_eq(moved, 1);
    cr_assert(hs_ok);
    int ci = (int)(xy[2] / 0.25), cj = (int)(xy[3] / 0.25);
    cr_assert(w.dist[cj * 40 + ci] > here, "the corner moved to more clearance");
    cr_assert((ci - 25) * (ci - 25) + (cj - 25) * (cj - 25) <= 4, "within 2 cells");
    cr_assert(route_min_clr(&w, xy, 3) >= before - 1e-9);
    nm_sight_oracle_free(&o);
    nm_sight_blockers_free(&blk);
    fx_free(&w);
}

/* Issue 12 (large world leg 9): a corner is lifted only onto a cell holding a usable span of its
 * layer (NM_SP_REACH); a span the bake sealed out of the span graph (a railed deck rim) is none,
 * though the planar clearance there is higher. */
Test(post, lift_corners_never_lands_on_a_span_outside_the_reach_set)
{
    nm_window w;
    const int blocks[1][4] = {{15, 15, 24, 24}};
    block_window(&w, 40, 40, blocks, 1);
    nm_sight_blockers blk;
    cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    const double xy0[] = {fx_cx(&w, 10), fx_cy(&w, 30), fx_cx(&w, 25), fx_cy(&w, 25), fx_cx(&w, 30),
                          fx_cy(&w, 10)};
    double xy[6];
    memcpy(xy, xy0, sizeof xy);
    nm_sight_view hard = {&w, &blk, NULL, &o, true, true};
    cr_assert_eq(nm_post_lift_corners(&w, &hard, &o, xy, 3, 0.0f, NULL, NULL), 1u);
    uint32_t first_choice = (uint32_t)((int)(xy[3] / 0.25) * 40 + (int)(xy[2] / 0.25));
    /* every span usable but those of the cell it chose */
    w.sp_bits = nm_malloc(w.spans.nspans ? w.spans.nspans : 1);
    cr_assert_not_null(w.sp_bits);
    for (uint32_t k = 0; k < w.spans.nspans; ++k)
        w.sp_bits[k] = w.spans.sp_cell[k] == first_choice ? NM_SP_VIS3 : NM_SP_VIS3 | NM_SP_REACH;
    memcpy(xy, xy0, sizeof xy);
    nm_post_lift_corners(&w, &hard, &o, xy, 3, 0.0f, NULL, NULL);
    uint32_t c = (uint32_t)((int)(xy[3] / 0.25) * 40 + (int)(xy[2] / 0.25));
    cr_assert_neq(c, first_choice, "the corner was lifted onto a span outside the reach set");
    nm_free(w.sp_bits);
    w.sp_bits = NULL;
    nm_sight_oracle_free(&o);
    nm_sight_blockers_free(&blk);
    fx_free(&w);
}

Test(post, lifting_never_lowers_the_routes_minimum_clearance)
{
    uint64_t rs = 4242;
    int total_moved = 0;
    for (int round = 0; round < 60; ++round) {
        int blocks[5][4];
        for (int b = 0; b < 5; ++b) {
            int i = (int)(fx_rng(&rs) % 40), j = (int)(fx_rng(&rs) % 40);
            blocks[b][0] = i;
            blocks[b][1] = j;
            blocks[b][2] = i + 2 + (int)(fx_rng(&rs) % 6);
            blocks[b][3] = j + 2 + (int)(fx_rng(&rs) % 6);
        }
        nm_window w;
        block_window(&w, 48, 48, (const int(*)[4])blocks, 5);
        nm_sight_blockers blk;
        cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
        nm_sight_oracle o;
        cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
        double xy[12];
        uint32_t n = 3 + (uint32_t)(fx_rng(&rs) % 4);
        for (uint32_t k = 0; k < n; ++k) {
            int i, j;
            do {
                i = (int)(fx_rng(&rs) % 48);
                j = (int)(fx_rng(&rs) % 48);
            } while (!w.core[j * 48 + i]);
            xy[2 * k] = fx_cx(&w, i);
            xy[2 * k + 1] = fx_cy(&w, j);
        }
        double orig[12];
        memcpy(orig, xy, sizeof xy);
        double before = route_min_clr(&w, xy, n);
        nm_sight_view hard = {&w, &blk, NULL, &o, true, true};
        uint32_t moved = nm_post_lift_corners(&w, &hard, &o, xy, n, 0.0f, NULL, NULL);
        total_moved += (int)moved;
        cr_assert(route_min_clr(&w, xy, n) >= before - 1e-9, "round %d", round);
        cr_assert(xy[0] == orig[0] && xy[2 * n - 1] == orig[2 * n - 1], "ends never move");
        for (uint32_t k = 1; k + 1 < n; ++k) {
            /* from a cell centre only three displacements exist: 0.25, 0.354 and 0.5 px */
            double d = hypot(xy[2 * k] - orig[2 * k], xy[2 * k + 1] - orig[2 * k + 1]);
            cr_assert(d == 0 || fabs(d - 0.25) < 1e-9 || fabs(d - sqrt(2) * 0.25) < 1e-9 ||
                          fabs(d - 0.5) < 1e-9,
                      "displacement %g", d);
        }
        nm_sight_oracle_free(&o);
        nm_sight_blockers_free(&blk);
        fx_free(&w);
    }
    cr_assert(total_moved > 0, "some corners moved");
}

Test(post, lift_corners_stops_at_the_first_layer_break)
{
    /* row window: ground 0, but column 6 is a 5 m step up (a layer break on the first segment) */
    float fl[16 * 9];
    for (int c = 0; c < 16 * 9; ++c)
        fl[c] = 0;
    for (int j = 0; j < 9; ++j)
        fl[j * 16 + 6] = 5.0f;
    nm_window w;
    fx_window(&w, 16, 9, 0, 0, fl, NULL, 0);
    for (int c = 0; c < 16 * 9; ++c)
        w.dist[c] = (float)(c % 7); /* something to climb toward */
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    nm_sight_view hard = {&w, NULL, NULL, &o, true, true};
    double xy[] = {fx_cx(&w, 1), fx_cy(&w, 4), fx_cx(&w, 10), fx_cy(&w, 4), fx_cx(&w, 12),
                   fx_cy(&w, 8), fx_cx(&w, 14), fx_cy(&w, 4)};
    double orig[8];
    memcpy(orig, xy, sizeof xy);
    cr_assert_eq(nm_post_lift_corners(&w, &hard, &o, xy, 4, 0.0f, NULL, NULL), 0);
    cr_assert_eq(memcmp(xy, orig, sizeof xy), 0);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

/* ---- 逐点高度 ---- */
Test(post, heights_along_follow_the_start_layer_under_a_deck)
{
    float fl[12];
    for (int i = 0; i < 12; ++i)
        fl[i] = 0;
    fx_span deck[6];
    for (int i = 0; i < 6; ++i)
        deck[i] = (fx_span){3 + i, 0, 1.2f}; /* close enough to be reachable from the ground */
    nm_window w;
    fx_window(&w, 12, 1, 0, 0, fl, deck, 6);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[] = {fx_cx(&w, 0), 0.125, fx_cx(&w, 5), 0.125, fx_cx(&w, 11), 0.125};
    float h[3], scratch[256];
    cr_assert(nm_post_heights_along(&o, xy, 3, 0.0f, h, scratch));
    cr_assert(h[0] == 0.0f && h[1] == 0.0f && h[2] == 0.0f, "nearest member keeps the ground");
    cr_assert(nm_post_heights_along(&o, xy, 3, 1.2f, h, scratch));
    cr_assert_float_eq(h[1], 1.2f, 1e-6, "from the deck height the deck is nearest");
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(post, clearance_is_capped_and_clamped_into_the_window)
{
    float fl[4] = {0, 0, 0, 0};
    nm_window w;
    fx_window(&w, 4, 1, 0, 0, fl, NULL, 0);
    w.dist[0] = 20.0f;
    w.dist[3] = 0.0f; /* no-go */
    double xy[] = {-5, 0.1, 0.9, 0.1, 0.6, 5.0};
    float c[3];
    nm_post_clearance(&w, xy, 3, c);
    cr_assert_float_eq(c[0], 12.0f, 1e-6);
    cr_assert_float_eq(c[1], 0.0f, 1e-6);
    cr_assert_float_eq(c[2], w.dist[2], 1e-6);
    fx_free(&w);
}

/* ---- 落点留余量 ---- */
/* deck at 10 over columns < 20, ground 0 everywhere; a route off the deck edge */
static void ledge_window(nm_window *w)
{
    enum { NX = 60, NY = 21 };
    float fl[NX * NY];
    fx_span deck[20 * NY];
    size_t nd = 0;
    for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) {
            fl[j * NX + i] = 0;
            if (i < 20)
                deck[nd++] = (fx_span){i, j, 10.0f};
        }
    fx_window(w, NX, NY, 0, 0, fl, deck, nd);
    for (int c = 0; c < NX * NY; ++c)
        w->dist[c] = 3.0f;
}

static double dist_to_deck(double x, double y)
{
    /* deck squares: x in [0, 5) px (20 cells), all rows */
    return x >= 5.0 ? x - 5.0 : 0.0;
    (void)y;
}

Test(post, drop_landing_moves_at_least_the_margin_from_the_upper_surface)
{
    nm_window w;
    ledge_window(&w);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[] = {fx_cx(&w, 10), fx_cy(&w, 10), fx_cx(&w, 21), fx_cy(&w, 10), fx_cx(&w, 50),
                   fx_cy(&w, 10)};
    float hs[3] = {10, 0, 0}, ha[3] = {10, 0, 0}, clr[3] = {3, 3, 3};
    nm_post_drop drops[3];
    uint32_t nd;
    const double scale = 1.5, margin = 4 * 0.41 * scale;
    cr_assert_lt(dist_to_deck(xy[2], xy[3]), margin, "the raw landing is at the ledge foot");
    cr_assert_eq(nm_post_drop_margins(&w, &o, xy, 3, scale, 10.0f, hs, ha, clr, drops, &nd, NULL),
                 NM_OK);
    cr_assert_eq(nd, 1);
    cr_assert_eq(drops[0].index, 1);
    cr_assert_float_eq(drops[0].height, 0.0, 1e-9);
    double dd = dist_to_deck(xy[2], xy[3]) - 0.125; /* cell square's nearest point */
    cr_assert_geq(dist_to_deck(xy[2], xy[3]), margin, "landing %.3f px from the deck", dd);
    cr_assert_lt(dist_to_deck(xy[2], xy[3]), margin + 0.5, "and not much farther");
    cr_assert(hs[1] == 0.0f && ha[1] == 0.0f);
    /* the landing is a cell centre */
    cr_assert_float_eq(fmod(xy[2], 0.25), 0.125, 1e-9);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(post, drop_margins_are_skipped_when_the_zone_scale_is_zero)
{
    nm_window w;
    ledge_window(&w);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[] = {fx_cx(&w, 10), fx_cy(&w, 10), fx_cx(&w, 21), fx_cy(&w, 10), fx_cx(&w, 50),
                   fx_cy(&w, 10)};
    float hs[3] = {10, 0, 0};
    nm_post_drop drops[3];
    uint32_t nd = 99;
    cr_assert_eq(nm_post_drop_margins(&w, &o, xy, 3, 0.0, 10.0f, hs, NULL, NULL, drops, &nd, NULL),
                 NM_OK);
    cr_assert_eq(nd, 0);
    cr_assert_float_eq(xy[2], fx_cx(&w, 21), 1e-12);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(post, a_ramp_is_not_a_drop_and_a_drop_mode_walk_finds_the_ledge_without_heights)
{
    nm_window w;
    ledge_window(&w);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[] = {fx_cx(&w, 10), fx_cy(&w, 10), fx_cx(&w, 21), fx_cy(&w, 10), fx_cx(&w, 50),
                   fx_cy(&w, 10)};
    nm_post_drop drops[3];
    uint32_t nd;
    /* no height columns: the drop-mode walk from the deck supplies the decision heights */
    cr_assert_eq(nm_post_drop_margins(&w, &o, xy, 3, 1.0, 10.0f, NULL, NULL, NULL, drops, &nd, NULL),
                 NM_OK);
    cr_assert_eq(nd, 1);
    cr_assert_geq(dist_to_deck(xy[2], xy[3]), 4 * 0.41);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

/* ---- 路点 ---- */
static bool always(void *ctx, double ax, double ay, double bx, double by, double hw, double h0)
{
    (void)ctx, (void)ax, (void)ay, (void)bx, (void)by, (void)hw, (void)h0;
    return true;
}
static bool never(void *ctx, double ax, double ay, double bx, double by, double hw, double h0)
{
    (void)ctx, (void)ax, (void)ay, (void)bx, (void)by, (void)hw, (void)h0;
    return false;
}
typedef struct width_probe {
    double max_hw;
} width_probe;
static bool narrow_only(void *ctx, double ax, double ay, double bx, double by, double hw, double h0)
{
    (void)ax, (void)ay, (void)bx, (void)by, (void)h0;
    return hw <= ((width_probe *)ctx)->max_hw;
}

Test(post, waypoints_never_span_a_drop_and_end_with_the_goal)
{
    enum { N = 200 };
    double xy[2 * N];
    float h[N], clr[N];
    for (int k = 0; k < N; ++k) {
        xy[2 * k] = k * 0.5;
        xy[2 * k + 1] = 0;
        h[k] = 0;
        clr[k] = 2;
    }
    nm_post_drop drops[2] = {{50, 0}, {53, 0}};
    uint32_t out[N];
    uint32_t nw = nm_post_pull_waypoints(xy, N, clr, h, drops, 2, always, NULL, NULL, out);
    const uint32_t expect[] = {50, 53, 117, 181, 199};
    cr_assert_eq(nw, 5);
    for (uint32_t k = 0; k < nw; ++k)
        cr_assert_eq(out[k], expect[k], "waypoint %u = %u", k, out[k]);
    /* nothing drivable: every vertex is forced */
    nw = nm_post_pull_waypoints(xy, 10, clr, h, NULL, 0, never, NULL, NULL, out);
    cr_assert_eq(nw, 9);
    cr_assert_eq(out[0], 1);
    cr_assert_eq(out[8], 9);
    /* no heights along: no waypoints */
    cr_assert_eq(nm_post_pull_waypoints(xy, 10, clr, NULL, NULL, 0, always, NULL, NULL, out), 0);
}

Test(post, waypoint_half_width_is_the_narrowest_skipped_clearance)
{
    enum { N = 12 };
    double xy[2 * N];
    float h[N], clr[N];
    for (int k = 0; k < N; ++k) {
        xy[2 * k] = k;
        xy[2 * k + 1] = 0;
        h[k] = 0;
        clr[k] = 3;
    }
    clr[6] = 1.0f; /* a narrow vertex */
    width_probe wp = {1.0};
    uint32_t out[N];
    /* chords that skip only wide vertices fail (hw 3 > 1); skipping vertex 6 makes them pass */
    uint32_t nw = nm_post_pull_waypoints(xy, N, clr, h, NULL, 0, narrow_only, &wp, NULL, out);
    cr_assert_geq(nw, 2);
    cr_assert_eq(out[nw - 1], N - 1);
    cr_assert_eq(out[0], 1, "from 0: 0->1 (hw 0) passes, 0->2 skips vertex 1 (hw 3) and fails");
}

Test(post, waypoint_chords_do_not_cross_window_blockers)
{
    enum { N = 5 };
    double xy[] = {0, 0, 1, 0, 1, 1, 0, 1, 0, 2};
    float h[N] = {0}, clr[N] = {1, 1, 1, 1, 1};
    nm_window w;
    float fl[1] = {0};
    fx_window(&w, 1, 1, -10, -10, fl, NULL, 0);
    nm_sight_blockers blk;
    memset(&blk, 0, sizeof blk);
    nm_window_seg wall = {0.2, 0.3, 0.3, 0.2, NM_SEG_WALL}; /* across 0 -> 2 only */
    cr_assert_eq(nm_sight_blockers_add(&blk, &wall, 1, NULL), NM_OK);
    nm_sight_view v = {&w, &blk, NULL, NULL, false, false};
    uint32_t out[N];
    uint32_t nw = nm_post_pull_waypoints(xy, N, clr, h, NULL, 0, always, NULL, &v, out);
    /* 0 -> 2 crosses the wall, 0 -> 1 does not; from 1 every chord is clear of it */
    cr_assert_eq(nw, 2);
    cr_assert_eq(out[0], 1);
    cr_assert_eq(out[1], 4);
    nm_sight_blockers_free(&blk);
    fx_free(&w);
}

/* ---- 后处理 as one call ---- */

/* An open 60 x 16 corridor and a 12-point zigzag parent chain across it, ready for nm_post_run. */
enum { ZZ_NX = 60, ZZ_NY = 16, ZZ_N = 12 };
typedef struct zigzag {
    float fl[ZZ_NX * ZZ_NY];
    nm_window w;
    nm_sight_blockers blk;
    nm_sight_oracle o;
    uint8_t tm[ZZ_NX * ZZ_NY];
    double xy[2 * ZZ_N];
    float h[ZZ_N];
    nm_post_input in;
} zigzag;

static void zigzag_init(zigzag *z)
{
    memset(z, 0, sizeof *z);
    fx_window(&z->w, ZZ_NX, ZZ_NY, 100.0, 50.0, z->fl, NULL, 0);
    fx_clearance(&z->w);
    cr_assert_eq(nm_sight_blockers_build(&z->blk, &z->w, NULL), NM_OK);
    cr_assert_eq(nm_sight_oracle_init(&z->o, &z->w, NULL), NM_OK);
    memset(z->tm, 1, sizeof z->tm);
    for (int k = 0; k < ZZ_N; ++k) {
        z->xy[2 * k] = fx_cx(&z->w, 4 + 4 * k);
        z->xy[2 * k + 1] = fx_cy(&z->w, k % 2 ? 10 : 6);
    }
    nm_post_input *in = &z->in;
    in->w = &z->w;
    in->kind = NM_POST_PARENT_CHAIN;
    in->xy = z->xy;
    in->h = z->h;
    in->n = ZZ_N;
    in->sx = z->xy[0] - 0.1;
    in->sy = z->xy[1];
    in->gx = z->xy[2 * ZZ_N - 2] + 0.2;
    in->gy = z->xy[2 * ZZ_N - 1];
    in->blk = &z->blk;
    in->tm = z->tm;
    in->oracle = &z->o;
    in->scale_x = 1.0;
}

static void zigzag_free(zigzag *z)
{
    nm_sight_oracle_free(&z->o);
    nm_sight_blockers_free(&z->blk);
    fx_free(&z->w);
}

Test(post, run_pulls_a_zigzag_parent_chain_in_an_open_corridor_to_its_raw_ends)
{
    static zigzag z;
    zigzag_init(&z);
    const nm_post_input *in = &z.in;
    nm_post_output out;
    nm_error err = {0};
    cr_assert_eq(nm_post_run(in, &out, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(out.n, 2, "a straight chord from the raw start to the raw goal (%u)", out.n);
    cr_assert(out.xy[0] == in->sx && out.xy[3] == in->gy);
    cr_assert_not_null(out.hsearch);
    cr_assert_not_null(out.halong);
    cr_assert_eq(out.ndrops, 0);
    cr_assert_eq(out.nwaypoints, 1);
    cr_assert_eq(out.waypoints[0], 1);
    cr_assert(out.ms_total >= 0);
    cr_assert_eq(out.npulled, 2, "the pull keeps the chain's ends");
    cr_assert_eq(out.nspliced, 2);
    nm_post_output_free(&out);
    zigzag_free(&z);
}

Test(post, run_never_pulls_across_an_off_mesh_link)
{
    /* The zigzag of the test above, with point 6 reached over a link from point 5: the link has
     * no ground between its ends, so the route is pulled on each side separately and keeps both
     * ends (raw start, 5, 6, raw goal), the landing marked and a waypoint. */
    static zigzag z;
    zigzag_init(&z);
    uint8_t link[ZZ_N] = {0};
    link[6] = 1;
    const double *xy = z.xy;
    z.in.link = link;
    nm_post_output out;
    nm_error err = {0};
    cr_assert_eq(nm_post_run(&z.in, &out, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(out.n, 4, "raw start, both link ends, raw goal (%u points)", out.n);
    cr_assert(out.xy[2] == xy[10] && out.xy[3] == xy[11], "take-off kept");
    cr_assert(out.xy[4] == xy[12] && out.xy[5] == xy[13], "landing kept");
    cr_assert_not_null(out.link);
    cr_assert(!out.link[1] && out.link[2] && !out.link[3], "the landing is marked");
    cr_assert_not_null(out.halong, "heights along restart at the landing");
    cr_assert_eq(out.nwaypoints, 3);
    cr_assert(out.waypoints[0] == 1 && out.waypoints[1] == 2 && out.waypoints[2] == 3);
    cr_assert_eq(out.npulled, 4);
    /* without the flag the same chain is pulled to one chord */
    nm_post_output_free(&out);
    z.in.link = NULL;
    cr_assert_eq(nm_post_run(&z.in, &out, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(out.n, 2);
    cr_assert_null(out.link);
    nm_post_output_free(&out);
    zigzag_free(&z);
}

Test(post, run_with_a_cell_fallback_path_gives_no_heights_and_no_waypoints)
{
    enum { NX = 20, NY = 8 };
    float fl[NX * NY];
    for (int c = 0; c < NX * NY; ++c)
        fl[c] = 0;
    nm_window w;
    fx_window(&w, NX, NY, 0, 0, fl, NULL, 0);
    nm_sight_blockers blk;
    cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
    double xy[2 * 5];
    for (int k = 0; k < 5; ++k) {
        xy[2 * k] = fx_cx(&w, 2 + 3 * k);
        xy[2 * k + 1] = fx_cy(&w, 2 + (k % 2));
    }
    nm_post_input in = {0};
    in.w = &w;
    in.kind = NM_POST_CELL_PATH;
    in.xy = xy;
    in.n = 5;
    in.sx = xy[0];
    in.sy = xy[1];
    in.gx = xy[8];
    in.gy = xy[9];
    in.blk = &blk;
    nm_post_output out;
    cr_assert_eq(nm_post_run(&in, &out, NULL), NM_OK);
    cr_assert_eq(out.n, 2);
    cr_assert_null(out.hsearch);
    cr_assert_null(out.halong);
    cr_assert_eq(out.nwaypoints, 0);
    nm_post_output_free(&out);
    nm_sight_blockers_free(&blk);
    fx_free(&w);
}

/* ---- isRouteSegmentDrivable on a hand-made zone mesh ---- */
typedef struct mini_zone {
    nm_vertex v[12];
    uint32_t tri_v[18];
    uint8_t tflags[6];
    uint32_t bstart[2], btris[6];
    nm_zone_clean zc;
} mini_zone;

/* quads (x0, y0, x1, y1, h) as two CCW triangles each, all in one 24 px bucket */
static void mini_zone_init(mini_zone *m, const double (*q)[5], int nq)
{
    memset(m, 0, sizeof *m);
    for (int k = 0; k < nq; ++k) {
        nm_vertex *v = m->v + 4 * k;
        v[0] = (nm_vertex){(float)q[k][0], (float)q[k][1], (float)q[k][4]};
        v[1] = (nm_vertex){(float)q[k][2], (float)q[k][1], (float)q[k][4]};
        v[2] = (nm_vertex){(float)q[k][2], (float)q[k][3], (float)q[k][4]};
        v[3] = (nm_vertex){(float)q[k][0], (float)q[k][3], (float)q[k][4]};
        uint32_t b = 4 * (uint32_t)k, *t = m->tri_v + 6 * k;
        t[0] = b, t[1] = b + 1, t[2] = b + 2, t[3] = b, t[4] = b + 2, t[5] = b + 3;
        m->tflags[2 * k] = m->tflags[2 * k + 1] = NM_ZT_WALKABLE;
        m->btris[2 * k] = 2 * (uint32_t)k;
        m->btris[2 * k + 1] = 2 * (uint32_t)k + 1;
    }
    m->bstart[0] = 0;
    m->bstart[1] = 2 * (uint32_t)nq;
    m->zc.tri_count = 2 * (uint32_t)nq;
    m->zc.verts = m->v;
    m->zc.vert_count = 4 * (uint32_t)nq;
    m->zc.tri_v = m->tri_v;
    m->zc.tflags = m->tflags;
    m->zc.grid_x0 = 0;
    m->zc.grid_y0 = 0;
    m->zc.grid_nx = 1;
    m->zc.grid_ny = 1;
    m->zc.bucket_start = m->bstart;
    m->zc.bucket_tris = m->btris;
}

Test(post, drivable_test_anchors_on_the_start_layer_under_a_deck)
{
    const double q[2][5] = {{0, 0, 20, 10, 0.0}, {5, 0, 15, 10, 8.0}};
    mini_zone m;
    mini_zone_init(&m, q, 2);
    cr_assert(nm_post_zone_drivable(&m.zc, 1, 5, 19, 5, 0, 0.0), "ground under the deck");
    cr_assert(nm_post_zone_drivable(&m.zc, 1, 5, 19, 5, 0, NAN), "no anchor: lowest surface");
    cr_assert(!nm_post_zone_drivable(&m.zc, 6, 5, 19, 5, 0, 8.0), "off the deck is an 8 m step");
    cr_assert(nm_post_zone_drivable(&m.zc, 6, 5, 14, 5, 0, 8.0), "along the deck");
    cr_assert(!nm_post_zone_drivable(&m.zc, 1, 5, 22, 5, 0, 0.0), "off the mesh");
}

Test(post, drivable_flanks_at_the_half_width_must_stay_on_the_mesh)
{
    const double q[1][5] = {{0, 4, 20, 6, 0.0}};
    mini_zone m;
    mini_zone_init(&m, q, 1);
    cr_assert(nm_post_zone_drivable(&m.zc, 1, 5, 19, 5, 0, 0.0));
    cr_assert(nm_post_zone_drivable(&m.zc, 1, 5, 19, 5, 0.5, 0.0));
    cr_assert(!nm_post_zone_drivable(&m.zc, 1, 5, 19, 5, 1.5, 0.0), "flanks at y 3.5 and 6.5");
    /* the ends are shrunk by min(w, L/2): a chord starting at the strip's end keeps its flanks on */
    cr_assert(nm_post_zone_drivable(&m.zc, 0, 5, 20, 5, 0.9, 0.0));
}

Test(post, run_fails_cleanly_on_every_allocation_failure)
{
    enum { NX = 40, NY = 16 };
    float fl[NX * NY];
    for (int c = 0; c < NX * NY; ++c)
        fl[c] = 0;
    nm_window w;
    fx_window(&w, NX, NY, 0, 0, fl, NULL, 0);
    fx_clearance(&w);
    nm_sight_blockers blk;
    cr_assert_eq(nm_sight_blockers_build(&blk, &w, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double xy[2 * 6];
    float h[6] = {0};
    for (int k = 0; k < 6; ++k) {
        xy[2 * k] = fx_cx(&w, 3 + 6 * k);
        xy[2 * k + 1] = fx_cy(&w, k % 2 ? 12 : 3);
    }
    nm_post_input in = {0};
    in.w = &w;
    in.kind = NM_POST_SPAN_PATH;
    in.xy = xy;
    in.h = h;
    in.n = 6;
    in.sx = xy[0];
    in.sy = xy[1];
    in.gx = xy[10];
    in.gy = xy[11];
    in.blk = &blk;
    in.oracle = &o;
    in.scale_x = 2.0;
    bool succeeded = false;
    for (size_t k = 1; k < 64 && !succeeded; ++k) {
        nm_post_output out;
        nm_error err = {0};
        nm_alloc_fail_after(k);
        int rc = nm_post_run(&in, &out, &err);
        nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            succeeded = true;
            cr_assert_geq(out.n, 2);
        } else {
            cr_assert_eq(rc, NM_ERR_NOMEM, "failure %zu: %s", k, err.msg);
            cr_assert_null(out.xy);
        }
        nm_post_output_free(&out);
    }
    cr_assert(succeeded);
    nm_sight_oracle_free(&o);
    nm_sight_blockers_free(&blk);
    fx_free(&w);
}
