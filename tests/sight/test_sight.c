/* test_sight.c — behaviour of the visibility check (design article 视线): the digital line and
 * its direction asymmetry, contour tracing at diagonal junctions and holes, the intersection
 * interval rules, the bucket index against a full scan (with epoch wrap-around), directed step
 * edges, the LayerOracle under a bridge deck, empty-column allowances and the drop mode, the
 * views and the route mask. */
#include "sight_fixture.h"
#include <stdlib.h>

/* ---- 取格 ---- */
Test(sight, digital_line_from_0_0_to_2_1_differs_by_direction)
{
    nm_sight_line l;
    int64_t x, y;
    nm_sight_line_init(&l, 0, 0, 2, 1);
    cr_assert_eq(l.n, 2);
    nm_sight_line_cell(&l, 1, &x, &y);
    cr_assert(x == 1 && y == 0, "forward rint(0.5) = 0 gives (1,0), got (%lld,%lld)",
              (long long)x, (long long)y);
    nm_sight_line_init(&l, 2, 1, 0, 0);
    nm_sight_line_cell(&l, 1, &x, &y);
    cr_assert(x == 1 && y == 1, "reverse rint(-0.5) = -0 gives (1,1), got (%lld,%lld)",
              (long long)x, (long long)y);
}

Test(sight, digital_line_0_0_to_7_4_takes_8_cells_one_per_column_as_8_neighbours)
{
    nm_sight_line l;
    nm_sight_line_init(&l, 0, 0, 7, 4);
    cr_assert_eq(l.n, 7);
    const int expect[8][2] = {{0, 0}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {6, 3}, {7, 4}};
    for (int k = 0; k <= 7; ++k) {
        int64_t x, y;
        nm_sight_line_cell(&l, k, &x, &y);
        cr_assert(x == expect[k][0] && y == expect[k][1], "cell %d = (%lld,%lld)", k,
                  (long long)x, (long long)y);
    }
    /* the corner-grazed cells (3,1) and (4,3) of the supercover are not on the line */
}

Test(sight, walker_gives_the_digital_line_cells_of_nearbyint_on_every_short_line)
{
    /* every line between points of a 31 x 31 square around the origin, both directions: the
     * walker's carried quotient rounds halves to even exactly as nearbyint(d * k / n) */
    for (int64_t ax = -15; ax <= 15; ax += 3)
        for (int64_t ay = -15; ay <= 15; ay += 2)
            for (int64_t bx = -15; bx <= 15; ++bx)
                for (int64_t by = -15; by <= 15; ++by) {
                    nm_sight_line l;
                    nm_sight_walker s;
                    nm_sight_line_init(&l, ax, ay, bx, by);
                    nm_sight_walker_init(&s, &l);
                    for (int64_t k = 0; k <= l.n; ++k, nm_sight_walker_next(&s)) {
                        int64_t x, y, wx, wy;
                        nm_sight_line_cell(&l, k, &x, &y);
                        nm_sight_walker_cell(&s, &wx, &wy);
                        cr_assert(x == wx && y == wy,
                                  "(%lld,%lld)->(%lld,%lld) cell %lld: (%lld,%lld) vs walker "
                                  "(%lld,%lld)",
                                  (long long)ax, (long long)ay, (long long)bx, (long long)by,
                                  (long long)k, (long long)x, (long long)y, (long long)wx,
                                  (long long)wy);
                    }
                }
}

Test(sight, digital_line_cells_are_libm_s_nearbyint_on_long_lines_and_on_every_half)
{
    /* lines up to 2^20 cells long, and lines whose cells land on halves (d odd, n = 2 d'), against
     * nearbyint(d * k / n) from the C library: it fails when a half rounds away from even or the
     * major axis is taken from the wrong side */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int halves = 0;
    for (int t = 0; t < 20000; t++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const int64_t span = t < 10000 ? (int64_t)1 << (1 + t % 20) : 64;
        const int64_t ax = (int64_t)(x % 2001) - 1000, ay = (int64_t)((x >> 11) % 2001) - 1000;
        int64_t bx = ax + (int64_t)((x >> 22) % (uint64_t)(2 * span + 1)) - span;
        int64_t by = ay + (int64_t)((x >> 43) % (uint64_t)(2 * span + 1)) - span;
        if (t >= 10000) /* an odd minor axis over an even major one: cells on halves */
            by = ay + (((by - ay) | 1) % 31), bx = ax + 2 * (by - ay) * ((t & 1) ? 1 : -1);
        nm_sight_line l;
        nm_sight_line_init(&l, ax, ay, bx, by);
        for (int s = 0; s < 64; s++) {
            const int64_t k = s < 2 ? s * l.n : (int64_t)((x >> (s % 40)) % (uint64_t)(l.n + 1));
            int64_t cx, cy;
            nm_sight_line_cell(&l, k, &cx, &cy);
            const double qx = (double)l.dx * (double)k / (double)l.n;
            const double qy = (double)l.dy * (double)k / (double)l.n;
            halves += qx != floor(qx) && qx - floor(qx) == 0.5;
            halves += qy != floor(qy) && qy - floor(qy) == 0.5;
            cr_assert(cx == l.ax + (int64_t)nearbyint(qx) && cy == l.ay + (int64_t)nearbyint(qy),
                      "(%lld,%lld)->(%lld,%lld) cell %lld: (%lld,%lld)", (long long)ax,
                      (long long)ay, (long long)bx, (long long)by, (long long)k, (long long)cx,
                      (long long)cy);
        }
    }
    cr_assert_gt(halves, 1000, "cells on halves: %d", halves);
}

Test(sight, seg_min_clr_ignores_cells_outside_the_window)
{
    nm_window w;
    float fl[4 * 4];
    for (int c = 0; c < 16; ++c)
        fl[c] = 0;
    fx_window(&w, 4, 4, 0, 0, fl, NULL, 0);
    for (int c = 0; c < 16; ++c)
        w.dist[c] = (float)(c + 1);
    /* row 1 from cell (0,1) to (3,1), then past the window's right edge */
    double m = nm_sight_seg_min_clr(w.dist, &w.win, fx_cx(&w, 1), fx_cy(&w, 1), 3.0, fx_cy(&w, 1));
    cr_assert_float_eq(m, 6.0, 1e-9);
    m = nm_sight_seg_min_clr(w.dist, &w.win, 5.0, 5.0, 6.0, 6.0);
    cr_assert(isinf(m));
    fx_free(&w);
}

/* ---- 轮廓追踪 ---- */
static void check_edges_keep_mask_left(int nx, int ny, const uint8_t *m, const uint32_t *cor,
                                       const uint32_t *ls, uint32_t nl)
{
    uint32_t W = (uint32_t)nx + 1;
    for (uint32_t k = 0; k < nl; ++k)
        for (uint32_t e = ls[k]; e < ls[k + 1]; ++e) {
            uint32_t a = cor[e], b = cor[e + 1 < ls[k + 1] ? e + 1 : ls[k]];
            int ax = (int)(a % W), ay = (int)(a / W), bx = (int)(b % W), by = (int)(b / W);
            int dx = bx - ax, dy = by - ay;
            cr_assert_eq(abs(dx) + abs(dy), 1, "edge of unit length");
            /* the cell on the left of (dx, dy) in y-up reading, and the one on the right */
            int lx = dx == 1 ? ax : dx == -1 ? ax - 1 : (dy == 1 ? ax - 1 : ax);
            int ly = dy == 1 ? ay : dy == -1 ? ay - 1 : (dx == 1 ? ay : ay - 1);
            int rx = dx == 1 ? ax : dx == -1 ? ax - 1 : (dy == 1 ? ax : ax - 1);
            int ry = dy == 1 ? ay : dy == -1 ? ay - 1 : (dx == 1 ? ay - 1 : ay);
            bool lin = lx >= 0 && ly >= 0 && lx < nx && ly < ny && m[ly * nx + lx];
            bool rin = rx >= 0 && ry >= 0 && rx < nx && ry < ny && m[ry * nx + rx];
            cr_assert(lin && !rin, "edge (%d,%d)->(%d,%d): mask on the left only", ax, ay, bx, by);
        }
}

Test(sight, contour_of_two_diagonal_cells_turns_right_into_one_figure_eight_loop)
{
    /* cells (2,1) and (3,2) touch only at corner (3,2) */
    enum { NX = 6, NY = 5 };
    uint8_t m[NX * NY] = {0};
    m[1 * NX + 2] = 1;
    m[2 * NX + 3] = 1;
    uint32_t *cor, *ls, nl;
    nm_error err = {0};
    cr_assert_eq(nm_sight_trace_contours(NX, NY, m, &cor, &ls, &nl, &err), NM_OK);
    cr_assert_eq(nl, 1, "right turn joins both cells into one loop, got %u loops", nl);
    cr_assert_eq(ls[1], 8);
    uint32_t junction = 2 * (NX + 1) + 3, seen = 0;
    for (uint32_t e = 0; e < 8; ++e)
        seen += cor[e] == junction;
    cr_assert_eq(seen, 2, "the junction corner is visited twice");
    check_edges_keep_mask_left(NX, NY, m, cor, ls, nl);
    nm_free(cor);
    nm_free(ls);
}

Test(sight, contour_of_a_ring_gives_outer_and_hole_loops_with_every_corner)
{
    enum { NX = 5, NY = 5 };
    uint8_t m[NX * NY] = {0};
    for (int j = 1; j <= 3; ++j)
        for (int i = 1; i <= 3; ++i)
            m[j * NX + i] = !(i == 2 && j == 2);
    uint32_t *cor, *ls, nl;
    cr_assert_eq(nm_sight_trace_contours(NX, NY, m, &cor, &ls, &nl, NULL), NM_OK);
    cr_assert_eq(nl, 2);
    uint32_t a = ls[1] - ls[0], b = ls[2] - ls[1];
    cr_assert((a == 12 && b == 4) || (a == 4 && b == 12), "loops of %u and %u corners", a, b);
    check_edges_keep_mask_left(NX, NY, m, cor, ls, nl);
    nm_free(cor);
    nm_free(ls);
}

Test(sight, contour_edges_at_the_window_edge_are_blockers)
{
    nm_window w;
    float fl[3 * 2] = {0, 0, 0, 0, 0, 0};
    fx_window(&w, 3, 2, 10.0, 20.0, fl, NULL, 0);
    nm_sight_blockers b;
    cr_assert_eq(nm_sight_blockers_build(&b, &w, NULL), NM_OK);
    cr_assert_eq(b.nsegs, 10, "perimeter of a 3x2 block: 10 cell edges");
    for (uint32_t k = 0; k < b.nsegs; ++k)
        cr_assert_float_eq(hypot(b.segs[k].bx - b.segs[k].ax, b.segs[k].by - b.segs[k].ay), 0.25,
                           1e-12);
    /* leaving the block through its edge is blocked; staying inside is not */
    cr_assert(nm_sight_blocked(&b, 10.3, 20.2, 11.0, 20.2));
    cr_assert(!nm_sight_blocked(&b, 10.1, 20.1, 10.6, 20.4));
    nm_sight_blockers_free(&b);
    fx_free(&w);
}

/* ---- 求交 ---- */
Test(sight, a_45_degree_chord_through_a_shared_endpoint_hits_both_segments)
{
    nm_window_seg left = {0, 1, 1, 1, 0};  /* ends at the shared corner: w = 1 */
    nm_window_seg right = {1, 1, 1, 2, 0}; /* starts there: w = 0 */
    cr_assert(nm_sight_seg_hits(0, 2, 2, 0, &left));
    cr_assert(nm_sight_seg_hits(0, 2, 2, 0, &right));
}

Test(sight, a_chord_ending_on_a_segment_does_not_hit_it)
{
    nm_window_seg s = {1, 0, 1, 2, 0};
    cr_assert(!nm_sight_seg_hits(0, 1, 1, 1, &s), "t = 1 is outside the open chord interval");
    cr_assert(!nm_sight_seg_hits(1, 1, 3, 1, &s), "t = 0 likewise");
    cr_assert(nm_sight_seg_hits(0, 1, 1.001, 1, &s));
}

Test(sight, collinear_and_parallel_chords_never_hit)
{
    nm_window_seg s = {0, 0, 2, 0, 0};
    cr_assert(!nm_sight_seg_hits(1, 0, 3, 0, &s));
    cr_assert(!nm_sight_seg_hits(-1, 0, 3, 0, &s));
    cr_assert(!nm_sight_seg_hits(0, 1e-9, 2, 1e-9, &s));
    cr_assert(!nm_sight_seg_hits(2.1, -1, 2.1, 1, &s), "past the end by more than eps");
}

Test(sight, bucket_index_answers_like_a_full_scan_across_epoch_wraparound)
{
    uint64_t rs = 12345;
    enum { NS = 300 };
    nm_window_seg segs[NS];
    for (int k = 0; k < NS; ++k) {
        double x = fx_unit(&rs) * 60, y = fx_unit(&rs) * 60;
        double a = fx_unit(&rs) * 6.283, l = fx_unit(&rs) * 6;
        segs[k] = (nm_window_seg){x, y, x + l * cos(a), y + l * sin(a), 0};
    }
    nm_sight_blockers b;
    memset(&b, 0, sizeof b);
    cr_assert_eq(nm_sight_blockers_add(&b, segs, NS, NULL), NM_OK);
    cr_assert_eq(nm_sight_blockers_index(&b, NULL), NM_OK);
    b.epoch = UINT32_MAX - 50; /* wrap during the run */
    int hits = 0;
    for (int q = 0; q < 2000; ++q) {
        double px = fx_unit(&rs) * 70 - 5, py = fx_unit(&rs) * 70 - 5;
        double qx = px + (fx_unit(&rs) - 0.5) * 30, qy = py + (fx_unit(&rs) - 0.5) * 30;
        bool full = false;
        for (int k = 0; k < NS && !full; ++k)
            full = nm_sight_seg_hits(px, py, qx, qy, &segs[k]);
        cr_assert_eq(nm_sight_blocked(&b, px, py, qx, qy), full, "query %d", q);
        hits += full;
    }
    cr_assert(b.epoch < 5000, "the epoch wrapped and restarted");
    cr_assert(hits > 100 && hits < 1900, "a mix of blocked and free chords (%d)", hits);
    nm_sight_blockers_free(&b);
}

/* ---- on 掩膜 ---- */
Test(sight, on_mask_fails_when_the_last_sample_q_is_off_the_mask)
{
    enum { NX = 8, NY = 5 };
    nm_grid_window win = {0, 0, NX, NY};
    uint8_t m[NX * NY];
    memset(m, 1, sizeof m);
    double px = 0.125, py = 0.125, qx = 7 * 0.25 + 0.125, qy = 4 * 0.25 + 0.125;
    cr_assert(!nm_sight_off_mask(&win, m, px, py, qx, qy));
    m[4 * NX + 7] = 0;
    cr_assert(nm_sight_off_mask(&win, m, px, py, qx, qy));
    m[4 * NX + 7] = 1;
    m[1 * NX + 3] = 0; /* corner-grazed cells of (0,0)->(7,4): no sample falls in them */
    m[3 * NX + 4] = 0;
    cr_assert(!nm_sight_off_mask(&win, m, px, py, qx, qy));
    m[0 * NX + 1] = 0; /* off the digital line, but the chord runs through it */
    cr_assert(nm_sight_off_mask(&win, m, px, py, qx, qy));
}

/* ---- 立面禁步 ---- */
Test(sight, step_edges_are_directed_along_the_chord)
{
    nm_window w;
    float fl[6] = {0, 0, 0, 0, 0, 0};
    fx_window(&w, 6, 1, 0, 0, fl, NULL, 0);
    w.stepbits[2] = 1u << 0; /* forbids 2 -> 3 along +x */
    cr_assert(nm_sight_crosses_step(&w, fx_cx(&w, 0), fx_cy(&w, 0), fx_cx(&w, 5), fx_cy(&w, 0)));
    cr_assert(!nm_sight_crosses_step(&w, fx_cx(&w, 5), fx_cy(&w, 0), fx_cx(&w, 0), fx_cy(&w, 0)));
    w.stepbits[2] = 1u << 1; /* forbids 3 -> 2 */
    cr_assert(!nm_sight_crosses_step(&w, fx_cx(&w, 0), fx_cy(&w, 0), fx_cx(&w, 5), fx_cy(&w, 0)));
    cr_assert(nm_sight_crosses_step(&w, fx_cx(&w, 5), fx_cy(&w, 0), fx_cx(&w, 0), fx_cy(&w, 0)));
    fx_free(&w);
}

Test(sight, diagonal_step_edge_blocks_only_the_diagonal_move)
{
    nm_window w;
    float fl[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    fx_window(&w, 3, 3, 0, 0, fl, NULL, 0);
    w.stepbits[0] = 1u << 4; /* direction 2 = (1,1): forbids (0,0) -> (1,1) */
    cr_assert(nm_sight_crosses_step(&w, fx_cx(&w, 0), fx_cy(&w, 0), fx_cx(&w, 2), fx_cy(&w, 2)));
    cr_assert(!nm_sight_crosses_step(&w, fx_cx(&w, 0), fx_cy(&w, 0), fx_cx(&w, 2), fx_cy(&w, 0)));
    fx_free(&w);
}

Test(sight, every_one_cell_move_reads_the_step_bit_of_its_direction)
{
    /* a move along canonical direction i reads bit 2i of the cell left, against it bit 2i + 1
     * of the cell entered (nm_grid_step_dx / _dy) */
    nm_window w;
    float fl[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    fx_window(&w, 3, 3, 0, 0, fl, NULL, 0);
    for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy) {
            if (!dx && !dy)
                continue;
            for (int bit = 0; bit < 8; ++bit)
                for (int at_b = 0; at_b < 2; ++at_b) {
                    memset(w.stepbits, 0, 9);
                    const int a = 4, b = (1 + dy) * 3 + 1 + dx;
                    w.stepbits[at_b ? b : a] = (uint8_t)(1u << bit);
                    bool want = false;
                    for (int i = 0; i < 4; ++i) {
                        if (dx == nm_grid_step_dx[i] && dy == nm_grid_step_dy[i])
                            want = !at_b && bit == 2 * i;
                        if (dx == -nm_grid_step_dx[i] && dy == -nm_grid_step_dy[i])
                            want = at_b && bit == 2 * i + 1;
                    }
                    bool got = nm_sight_crosses_step(&w, fx_cx(&w, 1), fx_cy(&w, 1),
                                                     fx_cx(&w, 1 + dx), fx_cy(&w, 1 + dy));
                    cr_assert_eq(got, want, "move (%d,%d), bit %d of the cell %s", dx, dy, bit,
                                 at_b ? "entered" : "left");
                }
        }
    fx_free(&w);
}

/* ---- 高度连续检查 ---- */
static void bridge_window(nm_window *w)
{
    /* ground 0 along 12 columns; a deck at 8 over columns 2..7 */
    float fl[12];
    for (int i = 0; i < 12; ++i)
        fl[i] = 0;
    fx_span deck[6];
    for (int i = 0; i < 6; ++i)
        deck[i] = (fx_span){2 + i, 0, 8.0f};
    fx_window(w, 12, 1, 0, 0, fl, deck, 6);
}

Test(sight, layer_oracle_catches_a_chord_from_the_bridge_deck_down_to_the_ground)
{
    nm_window w;
    bridge_window(&w);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double y = fx_cy(&w, 0);
    cr_assert(nm_sight_layers_ok(&o, fx_cx(&w, 0), y, fx_cx(&w, 11), y, 0.0f, 0.0f),
              "under the deck the ground continues");
    cr_assert(!nm_sight_layers_ok(&o, fx_cx(&w, 0), y, fx_cx(&w, 5), y, 0.0f, 8.0f),
              "cannot climb onto the deck");
    cr_assert(!nm_sight_layers_ok(&o, fx_cx(&w, 3), y, fx_cx(&w, 11), y, 8.0f, 0.0f),
              "the deck ends: a drop inside a chord");
    cr_assert(nm_sight_layers_ok(&o, fx_cx(&w, 3), y, fx_cx(&w, 7), y, 8.0f, 8.0f));
    /* the planar checks alone would pass this chord */
    nm_sight_view v = {&w, NULL, NULL, &o, true, false};
    cr_assert(nm_sight_ok(&v, fx_cx(&w, 3), y, fx_cx(&w, 11), y, 8.0f, 0.0f));
    v.layers = true;
    cr_assert(!nm_sight_ok(&v, fx_cx(&w, 3), y, fx_cx(&w, 11), y, 8.0f, 0.0f));
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(sight, steps_and_layers_in_one_walk_answer_like_the_two_checks_in_turn)
{
    /* uneven ground with holes, a few decks and forbidden steps; chord ends also outside */
    enum { NX = 24, NY = 20 };
    float fl[NX * NY];
    fx_span extra[40];
    uint64_t rng = 77;
    for (int c = 0; c < NX * NY; ++c)
        fl[c] = fx_unit(&rng) < 0.08 ? NAN
                                     : (float)(fx_unit(&rng) * 0.6 + (c % NX > 12 ? 2.0 : 0.0));
    for (int k = 0; k < 40; ++k)
        extra[k] = (fx_span){(int)(fx_unit(&rng) * NX), (int)(fx_unit(&rng) * NY), 6.0f};
    nm_window w;
    fx_window(&w, NX, NY, 1.0, 2.0, fl, extra, 40);
    for (int c = 0; c < NX * NY; ++c)
        if (fx_unit(&rng) < 0.05)
            w.stepbits[c] = (uint8_t)(1u << (fx_rng(&rng) % 8));
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    nm_sight_view v = {&w, NULL, NULL, &o, true, true};
    int yes = 0, no = 0;
    for (int k = 0; k < 20000; ++k) {
        double px = 0.5 + fx_unit(&rng) * 7.0, py = 1.5 + fx_unit(&rng) * 6.0;
        double qx = 0.5 + fx_unit(&rng) * 7.0, qy = 1.5 + fx_unit(&rng) * 6.0;
        float hp = fx_unit(&rng) < 0.2 ? 6.0f : (float)(fx_unit(&rng) * 0.6);
        float hq = (float)(fx_unit(&rng) * 0.6);
        uint32_t first, n = nm_span_cell_spans(&w.spans,
                                               (uint32_t)(nm_sight_cell_trunc(qy, 2.0) * NX +
                                                          nm_sight_cell_trunc(qx, 1.0)), &first);
        if (qx > 1.0 && qy > 2.0 && qx < 7.0 && qy < 7.0 && n)
            hq = w.spans.sp_h[first + fx_rng(&rng) % n]; /* often a real layer: some chords pass */
        bool two = !nm_sight_crosses_step(&w, px, py, qx, qy) &&
                   nm_sight_layers_ok(&o, px, py, qx, qy, hp, hq);
        bool one = nm_sight_ok(&v, px, py, qx, qy, hp, hq);
        cr_assert_eq(one, two, "chord %d (%.3f,%.3f)->(%.3f,%.3f) %.2f->%.2f", k, px, py, qx, qy,
                     (double)hp, (double)hq);
        if (one)
            yes++;
        else
            no++;
    }
    cr_assert(yes > 1000 && no > 1000, "both answers are tested (%d pass, %d fail)", yes, no);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(sight, walk_keeps_every_reachable_layer_of_a_column)
{
    float fl[4] = {10.0f, 10.0f, 10.0f, 10.0f};
    fx_span two[2] = {{2, 0, 11.2f}, {3, 0, 11.2f}};
    nm_window w;
    fx_window(&w, 4, 1, 0, 0, fl, two, 2);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double pts[4] = {fx_cx(&w, 0), fx_cy(&w, 0), fx_cx(&w, 3), fx_cy(&w, 0)};
    float h0 = 10.0f, out[64];
    uint32_t n;
    cr_assert(nm_sight_walk(&o, pts, 2, &h0, 1, false, out, &n));
    cr_assert_eq(n, 2, "both 10.0 and 11.2 stay in the set");
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

static bool climb_after_gap(int gap, float h)
{
    float fl[6];
    for (int i = 0; i < 6; ++i)
        fl[i] = NAN;
    fl[0] = 0.0f;
    fl[gap + 1] = h;
    nm_window w;
    fx_window(&w, 6, 1, 0, 0, fl, NULL, 0);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    bool ok = nm_sight_layers_ok(&o, fx_cx(&w, 0), fx_cy(&w, 0), fx_cx(&w, gap + 1), fx_cy(&w, 0),
                                 0.0f, h);
    nm_sight_oracle_free(&o);
    fx_free(&w);
    return ok;
}

Test(sight, up_allowance_is_1_5_over_one_empty_column_and_1_75_over_two)
{
    cr_assert(climb_after_gap(0, 1.5f));
    cr_assert(!climb_after_gap(0, 1.55f));
    cr_assert(climb_after_gap(1, 1.5f), "w = 2: up still 1.5");
    cr_assert(!climb_after_gap(1, 1.55f));
    cr_assert(climb_after_gap(2, 1.75f), "w = 3: up 1.75");
    cr_assert(!climb_after_gap(2, 1.8f));
}

Test(sight, downward_limit_is_kclimb_per_column)
{
    float fl[3] = {10.0f, 7.0f, 4.0f};
    nm_window w;
    fx_window(&w, 3, 1, 0, 0, fl, NULL, 0);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    cr_assert(nm_sight_layers_ok(&o, fx_cx(&w, 0), 0.125, fx_cx(&w, 2), 0.125, 10.0f, 4.0f));
    fx_free(&w);
    fl[1] = 6.9f;
    fx_window(&w, 3, 1, 0, 0, fl, NULL, 0);
    o.w = &w;
    cr_assert(!nm_sight_layers_ok(&o, fx_cx(&w, 0), 0.125, fx_cx(&w, 2), 0.125, 10.0f, 4.0f));
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(sight, drop_mode_takes_the_lower_surface_at_a_ledge)
{
    nm_window w;
    bridge_window(&w);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double pts[4] = {fx_cx(&w, 4), 0.125, fx_cx(&w, 11), 0.125};
    float h = 8.0f, out[128];
    uint32_t n;
    cr_assert(!nm_sight_walk(&o, pts, 2, &h, 1, false, out, &n));
    cr_assert(nm_sight_walk(&o, pts, 2, &h, 1, true, out, &n));
    bool ground = false;
    for (uint32_t k = 0; k < n; ++k)
        ground |= out[k] == 0.0f;
    cr_assert(ground, "the drop reaches the ground");
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(sight, drop_mode_stays_on_the_deck_across_a_seam)
{
    /* a deck at 8 over columns 0..11 except a one-column seam at 5; ground 0 only under 5 */
    float fl[12];
    for (int i = 0; i < 12; ++i)
        fl[i] = i == 5 ? 0.0f : 8.0f;
    nm_window w;
    fx_window(&w, 12, 1, 0, 0, fl, NULL, 0);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    double pts[4] = {fx_cx(&w, 0), 0.125, fx_cx(&w, 11), 0.125};
    float h = 8.0f, out[128];
    uint32_t n;
    cr_assert(!nm_sight_walk(&o, pts, 2, &h, 1, false, out, &n), "normal mode breaks");
    cr_assert(nm_sight_walk(&o, pts, 2, &h, 1, true, out, &n));
    cr_assert_eq(n, 1);
    cr_assert_float_eq(out[0], 8.0f, 1e-6, "crossed the seam on the deck");
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

/* ---- views ---- */
Test(sight, vis_callback_checks_the_on_mask_between_span_centres)
{
    enum { NX = 8, NY = 8 };
    float fl[NX * NY];
    for (int c = 0; c < NX * NY; ++c)
        fl[c] = 0;
    nm_window w;
    fx_window(&w, NX, NY, 4.0, 8.0, fl, NULL, 0);
    uint8_t solidc[NX * NY];
    memset(solidc, 1, sizeof solidc);
    solidc[3 * NX + 3] = 0;
    solidc[4 * NX + 4] = 0;
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    nm_sight_view vis = {&w, NULL, solidc, &o, true, true};
    /* one span per cell: span index = cell number */
    cr_assert(!nm_sight_vis(&vis, 0, 7 * NX + 7), "the diagonal passes the holes");
    cr_assert(nm_sight_vis(&vis, 0, 7), "row 0 is open");
    cr_assert(nm_sight_vis(&vis, 7 * NX, 7 * NX + 7));
    cr_assert(!nm_sight_vis(&vis, 0, 3 * NX + 3), "the end cell is off the mask");
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

Test(sight, route_mask_builds_in_four_steps)
{
    enum { NX = 7, NY = 3 };
    uint8_t solidc[NX * NY] = {0}, fin[NX * NY], tm[NX * NY];
    memset(fin, 1, sizeof fin);
    fin[0 * NX + 6] = 0;
    solidc[1 * NX + 0] = 1;
    solidc[1 * NX + 6] = 1; /* open but outside the final mask? no: fin is 1 there */
    fin[1 * NX + 6] = 0;    /* step 3 removes it */
    uint32_t access[1] = {2 * NX + 0};
    uint32_t path[1] = {1 * NX + 5};
    nm_sight_route_mask(NX, NY, solidc, access, 1, fin, path, 1, tm);
    cr_assert_eq(tm[1 * NX + 0], 1);
    cr_assert_eq(tm[2 * NX + 0], 1, "access path joins");
    cr_assert_eq(tm[1 * NX + 6], 0, "outside the final mask");
    cr_assert_eq(tm[0 * NX + 6], 0, "3x3 growth stays inside the final mask");
    cr_assert_eq(tm[0 * NX + 4], 1);
    cr_assert_eq(tm[2 * NX + 6], 1);
    cr_assert_eq(tm[1 * NX + 3], 0);
}

Test(sight, blockers_without_memory_for_the_index_still_answer_by_full_scan)
{
    nm_window_seg segs[3] = {{0, 0, 10, 0, 0}, {5, -5, 5, 5, 0}, {20, 20, 30, 30, 0}};
    nm_sight_blockers b;
    memset(&b, 0, sizeof b);
    cr_assert_eq(nm_sight_blockers_add(&b, segs, 3, NULL), NM_OK);
    nm_alloc_fail_after(1);
    bool hit = nm_sight_blocked(&b, 4, -1, 6, 1);
    nm_alloc_fail_after(0);
    cr_assert(!b.indexed, "the index could not be built");
    cr_assert(hit);
    nm_alloc_fail_after(1);
    bool miss = nm_sight_blocked(&b, 12, 1, 14, 3);
    nm_alloc_fail_after(0);
    cr_assert(!miss);
    cr_assert(nm_sight_blocked(&b, 4, -1, 6, 1), "and with the index built later");
    cr_assert(b.indexed);
    nm_sight_blockers_free(&b);
}

Test(sight, blocker_build_and_oracle_fail_cleanly_without_memory)
{
    float fl[16];
    for (int c = 0; c < 16; ++c)
        fl[c] = 0;
    nm_window w;
    fx_window(&w, 4, 4, 0, 0, fl, NULL, 0);
    bool ok = false;
    for (size_t k = 1; k < 20 && !ok; ++k) {
        nm_sight_blockers b;
        nm_error err = {0};
        nm_alloc_fail_after(k);
        int rc = nm_sight_blockers_build(&b, &w, &err);
        nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            ok = true;
            cr_assert_eq(b.nsegs, 16);
        } else {
            cr_assert_eq(rc, NM_ERR_NOMEM, "%s", err.msg);
        }
        nm_sight_blockers_free(&b);
    }
    cr_assert(ok);
    nm_sight_oracle o;
    nm_alloc_fail_after(1);
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_ERR_NOMEM);
    nm_alloc_fail_after(0);
    cr_assert_null(o.cur);
    fx_free(&w);
}

Test(sight, a_chord_with_a_nan_end_is_refused_by_every_check)
{
    nm_window w;
    float fl[4] = {0, 0, 0, 0};
    fx_window(&w, 4, 1, 0, 0, fl, NULL, 0);
    nm_sight_blockers b;
    cr_assert_eq(nm_sight_blockers_build(&b, &w, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    nm_sight_view vh = {&w, &b, NULL, &o, true, true};
    nm_sight_view vl = {&w, NULL, NULL, &o, false, true};
    cr_assert(!nm_sight_ok(&vh, 0.1, 0.1, NAN, 0.1, 0, 0));
    cr_assert(!nm_sight_ok(&vl, 0.1, 0.1, 0.6, NAN, 0, 0));
    cr_assert(nm_sight_crosses_step(&w, NAN, 0.1, 0.6, 0.1));
    cr_assert(nm_sight_ok(&vh, 0.1, 0.1, 0.6, 0.1, 0, 0));
    nm_sight_oracle_free(&o);
    nm_sight_blockers_free(&b);
    fx_free(&w);
}

/* ---- plain ground (sight_plain.c) ---- */
static uint64_t plain_rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* The shortcut may only say "visible" where vis says so: random chords over a window with gentle
 * slopes, cliffs, a deck over the ground, empty cells, forbidden steps and holes in the on mask. */
Test(sight, plain_ground_shortcut_never_passes_a_chord_vis_refuses)
{
    enum { NX = 48, NY = 40 };
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    float fl[NX * NY];
    fx_span extra[NX * NY];
    size_t nextra = 0;
    for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) {
            float h = 0.05f * (float)i + (i >= 30 ? 2.0f : 0.0f) + (j >= 28 && i < 12 ? 1.4f : 0.0f);
            fl[j * NX + i] = plain_rng(&seed) % 97 == 0 ? NAN : h;
            if (i >= 14 && i < 20 && j >= 5 && j < 30)
                extra[nextra++] = (fx_span){i, j, h + 6.0f}; /* a deck over the ground */
        }
    nm_window w;
    fx_window(&w, NX, NY, 2.0, 3.0, fl, extra, nextra);
    for (int k = 0; k < 40; ++k) /* forbidden steps */
        w.stepbits[plain_rng(&seed) % (NX * NY)] = (uint8_t)(1u << (plain_rng(&seed) % 8));
    uint8_t on[NX * NY];
    for (int c = 0; c < NX * NY; ++c)
        on[c] = plain_rng(&seed) % 61 != 0;
    uint8_t on_far[NX * NY], ground[NX * NY];
    memcpy(on_far, on, sizeof on_far);
    nm_sight_far(NX, NY, on_far);
    cr_assert_eq(nm_sight_plain_ground(&w, ground, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    nm_sight_view vis = {&w, NULL, on, &o, true, true};
    uint32_t fast = 0, refused = 0;
    for (int t = 0; t < 200000; ++t) {
        uint32_t a = (uint32_t)(plain_rng(&seed) % w.spans.nspans);
        uint32_t b = (uint32_t)(plain_rng(&seed) % w.spans.nspans);
        bool v = nm_sight_vis(&vis, a, b);
        refused += !v;
        if (nm_sight_plain_clear(&w, on_far, ground, a, b)) {
            fast++;
            cr_assert(v, "shortcut passes span %u (cell %u) -> span %u (cell %u), vis refuses", a,
                      w.spans.sp_cell[a], b, w.spans.sp_cell[b]);
        }
    }
    cr_assert_gt(fast, 2000, "the shortcut is taken (%u)", fast);
    cr_assert_gt(refused, 20000, "vis refuses many chords (%u)", refused);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}

/* nm_sight_far as the header defines it: the Chebyshev distance to the nearest cell outside the
 * set or the window, capped at 255, by a breadth-first flood with 8-neighbour moves from every
 * cell outside the set and every border cell. Masks of holes 1 in 4 to none at all, on windows
 * up to 700 x 600 cells, so the cap is reached. */
Test(sight, far_field_is_the_capped_chebyshev_distance)
{
    uint64_t seed = 0xBB67AE8584CAA73BULL;
    const int sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {2, 9}, {3, 3}, {40, 31}, {700, 600}, {611, 3}};
    const unsigned holes[] = {4, 50, 5000, 0};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z)
        for (size_t h = 0; h < sizeof holes / sizeof holes[0]; ++h) {
            const int nx = sizes[z][0], ny = sizes[z][1], n = nx * ny;
            uint8_t *far = malloc((size_t)n);
            int *d = malloc((size_t)n * sizeof *d), *q = malloc((size_t)n * sizeof *q);
            cr_assert(far && d && q);
            size_t head = 0, tail = 0;
            for (int c = 0; c < n; ++c) { /* the holes first: the queue's distances never fall */
                const bool in = !holes[h] || plain_rng(&seed) % holes[h] != 0;
                far[c] = in ? (uint8_t)(1 + plain_rng(&seed) % 200) : 0; /* any nonzero byte */
                d[c] = in ? -1 : 0;
                if (!in)
                    q[tail++] = c;
            }
            for (int c = 0; c < n; ++c) {
                const int i = c % nx, j = c / nx;
                if (d[c] < 0 && (i == 0 || j == 0 || i == nx - 1 || j == ny - 1)) {
                    d[c] = 1;
                    q[tail++] = c;
                }
            }
            while (head < tail) {
                const int c = q[head++], i = c % nx, j = c / nx;
                for (int dj = -1; dj <= 1; ++dj)
                    for (int di = -1; di <= 1; ++di) {
                        const int a = i + di, b = j + dj;
                        if (a < 0 || b < 0 || a >= nx || b >= ny || d[b * nx + a] >= 0)
                            continue;
                        d[b * nx + a] = d[c] + 1;
                        q[tail++] = b * nx + a;
                    }
            }
            nm_sight_far(nx, ny, far);
            bool capped = false;
            for (int c = 0; c < n; ++c) {
                const int want = d[c] > 255 ? 255 : d[c];
                capped |= d[c] > 255;
                cr_assert_eq(far[c], want, "%dx%d, holes 1/%u: cell (%d, %d)", nx, ny, holes[h], c % nx,
                             c / nx);
            }
            if (nx == 700 && !holes[h])
                cr_assert(capped, "the cap is reached");
            free(far);
            free(d);
            free(q);
        }
}

/* The plain field as the header defines it, cell by cell: plain = on, one span, no step bits and
 * every one-span 8-neighbour within 1.25 m (compared as |a - h| in float); then the Chebyshev
 * distance to the nearest cell that is not plain or outside the window, by a breadth-first
 * flood with 8-neighbour moves, capped at 255. */
static void plain_ref(const nm_window *w, const uint8_t *on, uint8_t *r)
{
    const int nx = w->win.nx, ny = w->win.ny;
    int *q = malloc((size_t)nx * ny * sizeof *q), *d = malloc((size_t)nx * ny * sizeof *d);
    cr_assert(q && d);
    size_t head = 0, tail = 0;
    for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
            const int c = j * nx + i;
            uint32_t f, n = nm_span_cell_spans(&w->spans, (uint32_t)c, &f);
            bool plain = on[c] && w->stepbits[c] == 0 && n == 1;
            for (int b = j - 1; plain && b <= j + 1; ++b)
                for (int a = i - 1; plain && a <= i + 1; ++a) {
                    uint32_t g, m = a >= 0 && b >= 0 && a < nx && b < ny
                                        ? nm_span_cell_spans(&w->spans, (uint32_t)(b * nx + a), &g) : 0;
                    if (m == 1 && fabsf(w->spans.sp_h[g] - w->spans.sp_h[f]) > 1.25f)
                        plain = false;
                }
            d[c] = -1;
            if (!plain) {
                d[c] = 0;
                q[tail++] = c;
            }
        }
    for (int j = 0; j < ny; ++j) /* the cells next to the outside are 1 away from it */
        for (int i = 0; i < nx; ++i)
            if (d[j * nx + i] < 0 && (i == 0 || j == 0 || i == nx - 1 || j == ny - 1)) {
                d[j * nx + i] = 1;
                q[tail++] = j * nx + i;
            }
    for (; head < tail; ++head) { /* the zeros come first, then the ones: levels in order */
        const int c = q[head], i = c % nx, j = c / nx;
        for (int b = j - 1; b <= j + 1; ++b)
            for (int a = i - 1; a <= i + 1; ++a)
                if (a >= 0 && b >= 0 && a < nx && b < ny && d[b * nx + a] < 0) {
                    d[b * nx + a] = d[c] + 1;
                    q[tail++] = b * nx + a;
                }
    }
    for (int c = 0; c < nx * ny; ++c)
        r[c] = (uint8_t)(d[c] > 255 ? 255 : d[c]);
    free(q);
    free(d);
}

/* The fields equal the definition: the ground field is the plain field of an all-on mask, and
 * the smaller of it and the on field is the plain field of the mask (the distance to the nearer
 * of two sets of cells). Rolling slopes steep enough in places to break the 1.25 m bound, cliffs,
 * a deck (two spans), empty cells, forbidden steps and holes in the on mask, and a wide flat field
 * whose distances reach the cap. Fails when a neighbour's height is not compared, or a distance
 * is one off. */
Test(sight, plain_field_equals_the_cell_by_cell_definition)
{
    enum { NX = 800, NY = 560 };
    uint64_t seed = 0x243F6A8885A308D3ULL;
    static float fl[NX * NY];
    static fx_span extra[NX * NY];
    static uint8_t on[NX * NY], all[NX * NY], on_far[NX * NY], ground[NX * NY], ref[NX * NY];
    size_t nextra = 0;
    for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) {
            float h = 0.0f;
            if (i < 200) /* rolling ground, some slopes over 1.25 m a cell */
                h = 3.0f * sinf(0.35f * (float)i) * cosf(0.2f * (float)j) + (j > 100 && j < 110 ? 1.3f * (float)(i % 3) : 0.0f);
            fl[j * NX + i] = i < 200 && plain_rng(&seed) % 53 == 0 ? NAN : h;
            if (i >= 40 && i < 70 && j >= 30 && j < 90)
                extra[nextra++] = (fx_span){i, j, h + 6.0f};
        }
    nm_window w;
    fx_window(&w, NX, NY, 2.0, 3.0, fl, extra, nextra);
    for (int k = 0; k < 300; ++k)
        w.stepbits[(plain_rng(&seed) % NY) * NX + plain_rng(&seed) % 200] = 1;
    for (int c = 0; c < NX * NY; ++c)
        on[c] = (c % NX) >= 200 || plain_rng(&seed) % 41 != 0;
    cr_assert_eq(nm_sight_plain_ground(&w, ground, NULL), NM_OK);
    memset(all, 1, sizeof all);
    plain_ref(&w, all, ref);
    for (int c = 0; c < NX * NY; ++c)
        cr_assert_eq(ground[c], ref[c], "ground field, cell (%d, %d)", c % NX, c / NX);
    memcpy(on_far, on, sizeof on_far);
    nm_sight_far(NX, NY, on_far);
    plain_ref(&w, on, ref);
    uint32_t capped = 0, plain = 0, wider = 0;
    for (int c = 0; c < NX * NY; ++c) {
        const uint8_t r = on_far[c] < ground[c] ? on_far[c] : ground[c];
        cr_assert_eq(r, ref[c], "cell (%d, %d)", c % NX, c / NX);
        capped += r == 255;
        plain += r > 0 && c % NX < 200;
        wider += ground[c] > r;
    }
    cr_assert_gt(wider, 5000, "the ground field alone reaches farther in many cells (%u)", wider);
    cr_assert_gt(capped, 1000, "the cap is reached (%u)", capped);
    cr_assert_gt(plain, 5000, "the rolling ground has plain cells (%u)", plain);
    fx_free(&w);
}

/* The on-mask samples the on field vouches for are skipped: on masks whose holes leave most cells
 * within a cell or two of one (distances 1 and 2, where the skips are shortest and nearest the
 * holes), and one with a hole in a thousand cells (skips of tens of cells from both ends of a
 * chord, meeting anywhere), chords of every direction between any points, some outside the
 * window on either side, give nm_sight_off_mask's answer. It fails when a skip from either end
 * reaches past the cells the distance vouches for. */
Test(sight, on_field_skips_give_the_answers_of_every_sample)
{
    enum { NX = 90, NY = 70 };
    uint64_t seed = 0x6A09E667F3BCC909ULL;
    nm_grid_window win = {2.0, 3.0, NX, NY};
    static uint8_t on[NX * NY], far[NX * NY];
    const unsigned holes[4] = {3, 7, 31, 997};
    uint32_t off = 0, through = 0;
    for (int h = 0; h < 4; ++h) {
        for (int c = 0; c < NX * NY; ++c)
            on[c] = plain_rng(&seed) % holes[h] != 0;
        memcpy(far, on, sizeof far);
        nm_sight_far(NX, NY, far);
        for (int t = 0; t < 100000; ++t) {
            double px = 1.7 + (double)(plain_rng(&seed) % 2300) / 100.0, py = 2.7 + (double)(plain_rng(&seed) % 1800) / 100.0;
            double qx = 1.7 + (double)(plain_rng(&seed) % 2300) / 100.0, qy = 2.7 + (double)(plain_rng(&seed) % 1800) / 100.0;
            if (t % 4 == 0) /* short chords: a few samples in few cells */
                qx = px + (double)(plain_rng(&seed) % 200) / 100.0 - 1.0, qy = py + (double)(plain_rng(&seed) % 200) / 100.0 - 1.0;
            const bool m = nm_sight_off_mask(&win, on, px, py, qx, qy);
            cr_assert_eq(nm_sight_off_mask_plain(&win, far, px, py, qx, qy), m, "holes 1/%u: (%.2f, %.2f) -> (%.2f, %.2f)",
                         holes[h], px, py, qx, qy);
            off += m;
            through += !m;
        }
    }
    cr_assert_gt(off, 50000, "chords that leave the mask (%u)", off);
    cr_assert_gt(through, 20000, "chords that stay on it (%u)", through);
}

/* The sampler places samples by a product, and by the division near a cell edge: chords whose ends
 * lie on a grid of sixteenths of a cell (ends on cell edges, axis-parallel and 45-degree runs),
 * in windows near and far from the origin (past the range where the product is trusted), give
 * nm_sight_off_mask's answer. It fails when a sample left of the window's origin rounds down
 * instead of towards zero; a sample a rounding off an edge taking the product's cell fails
 * on_field_skips_give_the_answers_of_every_sample (its ends in hundredths of a px). */
Test(sight, samples_on_cell_edges_and_far_windows_give_the_answers_of_every_sample)
{
    enum { NX = 64, NY = 48 };
    uint64_t seed = 0x3C6EF372FE94F82BULL;
    static uint8_t on[NX * NY], far[NX * NY];
    const double origins[3][2] = {{2.0, 3.0}, {-5.25, 7.5}, {2.5e7, -3.75e7}};
    uint32_t off = 0, through = 0, edge_ends = 0;
    for (int o = 0; o < 3; ++o) {
        nm_grid_window win = {origins[o][0], origins[o][1], NX, NY};
        for (int c = 0; c < NX * NY; ++c)
            on[c] = plain_rng(&seed) % 11 != 0;
        memcpy(far, on, sizeof far);
        nm_sight_far(NX, NY, far);
        for (int t = 0; t < 60000; ++t) {
            /* ends in sixteenths of a cell, a cell beyond the window on each side */
            double px = win.x0 + (double)((int)(plain_rng(&seed) % (16 * (NX + 2))) - 16) * NM_kCS / 16.0;
            double py = win.y0 + (double)((int)(plain_rng(&seed) % (16 * (NY + 2))) - 16) * NM_kCS / 16.0;
            double qx = win.x0 + (double)((int)(plain_rng(&seed) % (16 * (NX + 2))) - 16) * NM_kCS / 16.0;
            double qy = win.y0 + (double)((int)(plain_rng(&seed) % (16 * (NY + 2))) - 16) * NM_kCS / 16.0;
            if (t % 3 == 0) /* an axis-parallel or a 45-degree chord */
                qy = t % 2 ? py : py + (qx - px);
            edge_ends += fmod((px - win.x0) / NM_kCS, 1.0) == 0.0;
            const bool m = nm_sight_off_mask(&win, on, px, py, qx, qy);
            cr_assert_eq(nm_sight_off_mask_plain(&win, far, px, py, qx, qy), m,
                         "origin (%g, %g): (%.6f, %.6f) -> (%.6f, %.6f)", win.x0, win.y0, px, py, qx, qy);
            off += m;
            through += !m;
        }
    }
    cr_assert_gt(off, 40000, "chords that leave the mask (%u)", off);
    cr_assert_gt(through, 20000, "chords that stay on it (%u)", through);
    cr_assert_gt(edge_ends, 5000, "chords that start on a cell edge (%u)", edge_ends);
}

/* nm_sight_plain_clear's answer walked cell by cell: every cell of the digital line between the
 * spans' cells has a distance (the ground field's, or the smaller of the two) of 2 or more. */
static bool line_all_plain(const nm_window *w, const uint8_t *on_far, const uint8_t *ground, uint32_t a,
                           uint32_t b)
{
    const uint32_t nx = (uint32_t)w->win.nx, ca = w->spans.sp_cell[a], cb = w->spans.sp_cell[b];
    nm_sight_line l;
    nm_sight_line_init(&l, ca % nx, ca / nx, cb % nx, cb / nx);
    for (int64_t k = 0; k <= l.n; ++k) {
        int64_t x, y;
        nm_sight_line_cell(&l, k, &x, &y);
        const size_t c = (size_t)y * nx + (size_t)x;
        const unsigned d = on_far && on_far[c] < ground[c] ? on_far[c] : ground[c];
        if (d < 2)
            return false;
    }
    return true;
}

/* A view with the on and ground fields crosses the stretches of every chord they vouch for in
 * jumps (issue 14: chords from a corner parent near a wall start off the plain ground, then run
 * hundreds of plain cells): the same answers as without them, both ways, for span-centre chords
 * (vis) and for chords between any points (ok: the on-mask samples), on a window with broad plain
 * areas between slopes, cliffs, a deck, empty cells, forbidden steps and holes in the on mask. The
 * plain-line test walked in jumps from both ends gives the cell-by-cell answer: it fails when a
 * jump from either end passes a cell its distance does not vouch for. */
Test(sight, plain_stretches_crossed_in_jumps_give_the_answers_of_the_full_walk)
{
    enum { NX = 120, NY = 90 };
    uint64_t seed = 0xD1B54A32D192ED03ULL;
    static float fl[NX * NY];
    static fx_span extra[NX * NY];
    size_t nextra = 0;
    for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) {
            float h = 0.05f * (float)i + (i >= 70 ? 2.0f : 0.0f) + (j >= 60 && i < 30 ? 1.4f : 0.0f);
            fl[j * NX + i] = plain_rng(&seed) % 401 == 0 ? NAN : h;
            if (i >= 40 && i < 52 && j >= 10 && j < 50)
                extra[nextra++] = (fx_span){i, j, h + 6.0f}; /* a deck over the ground */
        }
    nm_window w;
    fx_window(&w, NX, NY, 2.0, 3.0, fl, extra, nextra);
    for (int k = 0; k < 60; ++k) /* forbidden steps */
        w.stepbits[plain_rng(&seed) % (NX * NY)] = (uint8_t)(1u << (plain_rng(&seed) % 8));
    static uint8_t on[NX * NY], on_far[NX * NY], ground[NX * NY];
    for (int c = 0; c < NX * NY; ++c)
        on[c] = plain_rng(&seed) % 301 != 0;
    memcpy(on_far, on, sizeof on_far);
    nm_sight_far(NX, NY, on_far);
    cr_assert_eq(nm_sight_plain_ground(&w, ground, NULL), NM_OK);
    nm_sight_oracle o;
    cr_assert_eq(nm_sight_oracle_init(&o, &w, NULL), NM_OK);
    nm_sight_view full = {&w, NULL, on, &o, true, true, NULL, NULL};
    nm_sight_view jumps = {&w, NULL, on, &o, true, true, on_far, ground};
    uint32_t pass = 0, fail = 0, off = 0, deep = 0, ground_pass = 0, ground_fail = 0, plain_both = 0;
    for (int t = 0; t < 200000; ++t) {
        uint32_t a = (uint32_t)(plain_rng(&seed) % w.spans.nspans);
        uint32_t b = (uint32_t)(plain_rng(&seed) % w.spans.nspans);
        bool v = nm_sight_vis(&full, a, b);
        cr_assert_eq(nm_sight_vis(&jumps, a, b), v, "span %u (cell %u) -> span %u (cell %u): vis %d without the jumps", a,
                     w.spans.sp_cell[a], b, w.spans.sp_cell[b], v);
        v ? pass++ : fail++;
        deep += on_far[w.spans.sp_cell[a]] >= 8 && ground[w.spans.sp_cell[a]] >= 8;
        /* the walks in jumps from both ends give the cell-by-cell answer */
        const bool both = nm_sight_plain_clear(&w, on_far, ground, a, b);
        cr_assert_eq(both, line_all_plain(&w, on_far, ground, a, b), "span %u -> span %u: both fields", a, b);
        const bool alone = nm_sight_plain_clear(&w, NULL, ground, a, b);
        cr_assert_eq(alone, line_all_plain(&w, NULL, ground, a, b), "span %u -> span %u: the ground field", a, b);
        plain_both += both;
        if (alone) /* vis checks the on mask alone */
            v ? ground_pass++ : ground_fail++;
        /* any two points (some outside the window), any heights */
        double px = 1.5 + (double)(plain_rng(&seed) % 3100) / 100.0, py = 2.5 + (double)(plain_rng(&seed) % 2400) / 100.0;
        double qx = 1.5 + (double)(plain_rng(&seed) % 3100) / 100.0, qy = 2.5 + (double)(plain_rng(&seed) % 2400) / 100.0;
        bool m = nm_sight_off_mask(&w.win, on, px, py, qx, qy);
        cr_assert_eq(nm_sight_off_mask_plain(&w.win, on_far, px, py, qx, qy), m, "(%.2f, %.2f) -> (%.2f, %.2f)", px, py,
                     qx, qy);
        off += m;
        float hp = (float)(plain_rng(&seed) % 80) / 10.0f, hq = (float)(plain_rng(&seed) % 80) / 10.0f;
        cr_assert_eq(nm_sight_ok(&jumps, px, py, qx, qy, hp, hq), nm_sight_ok(&full, px, py, qx, qy, hp, hq),
                     "(%.2f, %.2f) -> (%.2f, %.2f) at %.1f / %.1f", px, py, qx, qy, hp, hq);
    }
    cr_assert_gt(pass, 20000, "vis passes many chords (%u)", pass);
    cr_assert_gt(fail, 20000, "vis refuses many chords (%u)", fail);
    cr_assert_gt(off, 20000, "many chords leave the on mask (%u)", off);
    cr_assert_gt(deep, 5000, "many chords start deep in plain ground (%u)", deep);
    cr_assert_gt(ground_pass, 5000, "the ground field vouches for many chords vis passes (%u)", ground_pass);
    cr_assert_gt(ground_fail, 1000, "and for some the on mask refuses (%u)", ground_fail);
    cr_assert_gt(plain_both, 5000, "both fields vouch for many chords (%u)", plain_both);
    nm_sight_oracle_free(&o);
    fx_free(&w);
}
