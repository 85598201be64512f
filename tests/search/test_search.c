/* test_search.c — the searches of 两段搜索 and 诊断 on hand-made windows: access-chain tie-breaks,
 * link access chains, Lazy Theta* against cell A*, one-way drops, the baseline against a
 * brute-force octile Dijkstra, the topology layer's wide road, multi-layer bridges and stairs,
 * gap location, the small window's escalation exits and determinism. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "fixture.h"
#include "search/search_internal.h" /* the heap */
#include "route/route.h" /* limit1 / limit2 live in the planner */

/* The random maps' generator (xorshift64): the next state, which is also the value drawn. */
static uint64_t xs_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* nl off-mesh links of the given cost between random core cells of an nx-wide window (cells drawn
 * from the generator's bits past shift), each from and to the span nearest height h of its cell
 * (w->links holds nl + 1 entries). */
static void random_core_links(nm_window *w, uint64_t *x, unsigned shift, int nl, int nx, int ny,
                              double h, double cost)
{
    w->links = calloc((size_t)nl + 1, sizeof *w->links);
    for (int l = 0; l < nl; l++) {
        uint32_t c[2];
        for (int e = 0; e < 2; e++)
            do
                c[e] = (uint32_t)((xs_next(x) >> shift) % (uint64_t)(nx * ny));
            while (!w->core[c[e]]);
        w->links[l] = (nm_window_link){c[0], c[1], fx_span(w, (int)(c[0] % nx), (int)(c[0] / nx), h),
                                       fx_span(w, (int)(c[1] % nx), (int)(c[1] / nx), h), cost,
                                       (uint32_t)l};
    }
    w->nlinks = (uint32_t)nl;
}

#define ROWS(...) ((const char *const[]){__VA_ARGS__})
#define NROWS(...) ((int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)))
#define BUILD(w, steps, ...)                                                                       \
    cr_assert_eq(fx_build(&(w), ROWS(__VA_ARGS__), NROWS(__VA_ARGS__), steps), NM_OK)

/* The span level refused the leg: it failed, or only the cell-level fallback (no vertical rule,
 * article 格级回退) got through. */
static bool span_level_refused(const nm_search_result *r)
{
    return r->status == NM_SEARCH_FAIL ||
           (r->status == NM_SEARCH_OK && (r->warnings & NM_SEARCH_WARN_CELL));
}

static int route(const nm_window *w, const nm_search_request *q, nm_search_result *r)
{
    nm_error err = {0};
    int rc = nm_search_route_window(w, q, r, &err);
    cr_assert_eq(rc, NM_OK, "route: %s", err.msg);
    return r->status;
}

/* ---- 端点接入: same cost, higher bottleneck wins ---------------------------------------------- */
Test(search, access_chain_tie_prefers_higher_bottleneck)
{
    /* 41 x 5, walkable rows 1..3; chan0 only at (2,1) and (38,1); the start (20,3) is 18 columns
     * and 2 rows from each: 2 diagonal + 16 orthogonal steps = 1882 either way. Every left path
     * crosses column 10 where the clearance is 0.25; elsewhere it is 0.5: the right path wins. */
    nm_window w;
    const int nx = 41, ny = 5;
    memset(&w, 0, sizeof w);
    char row0[64], row1[64];
    memset(row0, '#', (size_t)nx);
    row0[nx] = 0;
    memset(row1, '.', (size_t)nx);
    row1[nx] = 0;
    BUILD(w, false, row0, row1, row1, row1, row0);
    uint8_t *walk = calloc((size_t)(nx * ny), 1), *target = calloc((size_t)(nx * ny), 1);
    for (int c = 0; c < nx * ny; c++) {
        walk[c] = w.core[c];
        w.dist[c] = walk[c] ? 0.5F : 0.0F;
        if (c % nx == 10 && walk[c])
            w.dist[c] = 0.25F;
    }
    target[1 * nx + 2] = target[1 * nx + 38] = 1;
    w.dist[1 * nx + 2] = w.dist[1 * nx + 38] = 2.0F;
    uint32_t *cells, n;
    int32_t cost;
    nm_error err;
    cr_assert_eq(nm_search_access(&w, walk, target, 3 * nx + 20, 0, &cells, &n, &cost, &err), 1);
    cr_expect_eq(cost, 1882);
    cr_expect_eq(cells[0], (uint32_t)(3 * nx + 20));
    cr_expect_eq(cells[n - 1], (uint32_t)(1 * nx + 38), "took %u", cells[n - 1]);
    free(cells);
    /* flip the bump to the right: now the left path wins */
    for (int j = 1; j <= 3; j++) {
        w.dist[j * nx + 10] = 0.5F;
        w.dist[j * nx + 30] = 0.25F;
    }
    cr_assert_eq(nm_search_access(&w, walk, target, 3 * nx + 20, 0, &cells, &n, &cost, &err), 1);
    cr_expect_eq(cells[n - 1], (uint32_t)(1 * nx + 2));
    free(cells);
    /* bumps on both sides: cost and bottleneck tie, the smaller cell number comes first */
    for (int j = 1; j <= 3; j++)
        w.dist[j * nx + 10] = 0.25F;
    cr_assert_eq(nm_search_access(&w, walk, target, 3 * nx + 20, 0, &cells, &n, &cost, &err), 1);
    cr_expect_eq(cells[n - 1], (uint32_t)(1 * nx + 2));
    free(cells);
    /* linkChains cap: 64 cells (6400) is too short here? the target is 1882 away: reached */
    cr_assert_eq(nm_search_access(&w, walk, target, 3 * nx + 20, 1000, &cells, &n, &cost, &err), 0);
    free(walk);
    free(target);
    fx_free(&w);
}

/* ---- link access chains only for the links the baseline used ------------------------------------ */
Test(search, link_access_only_for_links_the_baseline_used)
{
    /* Two rooms joined only by link J1 (0); J2 (1) joins two cells of the left room and is not
     * worth taking. */
    nm_window w;
    BUILD(w, true, "############################################",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "#....................##....................#",
          "############################################");
    const int nx = w.win.nx;
    w.links = calloc(2, sizeof *w.links);
    w.nlinks = 2;
    w.links[0] = (nm_window_link){(uint32_t)(9 * nx + 20),
                                  (uint32_t)(9 * nx + 23),
                                  fx_span(&w, 20, 9, 0),
                                  fx_span(&w, 23, 9, 0),
                                  3.0,
                                  0};
    w.links[1] = (nm_window_link){(uint32_t)(1 * nx + 1),
                                  (uint32_t)(17 * nx + 1),
                                  fx_span(&w, 1, 1, 0),
                                  fx_span(&w, 1, 17, 0),
                                  60.0,
                                  1};
    nm_search_request q = fx_req(3, 9, 40, 9, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_assert_eq(r.nlinks, 2u);
    cr_expect_eq(r.link_open[0], 1, "J1 used by the baseline gets chains");
    cr_expect_eq(r.link_open[1], 0, "J2 unused gets none");
    int links = 0;
    for (uint32_t k = 0; k < r.final.n; k++)
        links += r.final.link[k];
    cr_expect_eq(links, 1);
    nm_search_result_free(&r);
    fx_free(&w);
}

/* ---- Lazy Theta*: chords, rejected corner grazes, closed spans never relaxed ------------------- */
static const char *const k_room[] = {
    "########################################", "#......................................#",
    "#......................................#", "#......................................#",
    "#......................................#", "#......................................#",
    "#......................................#", "#......................................#",
    "#..................#####...............#", "#..................#####...............#",
    "#..................#####...............#", "#..................#####...............#",
    "#..................#####...............#", "#......................................#",
    "#......................................#", "#......................................#",
    "#......................................#", "#......................................#",
    "#......................................#", "#......................................#",
    "########################################",
};

Test(search, lazy_theta_is_taut_and_cheaper_than_cell_astar)
{
    nm_window w;
    cr_assert_eq(fx_build(&w, k_room, 21, true), NM_OK);
    fx_los *los = calloc(1, sizeof *los);
    los->w = &w;
    nm_search_request q = fx_req(3, 9, 36, 11, 0.0);
    q.los = fx_los_fn;
    q.los_ctx = los;
    nm_search_result r, a;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    nm_search_request qa = q;
    qa.los = NULL;
    cr_assert_eq(route(&w, &qa, &a), NM_SEARCH_OK);
    cr_expect_lt(r.geo_cost, a.geo_cost - 1e-6, "theta %f vs cell A* %f", r.geo_cost, a.geo_cost);
    cr_expect_lt(r.chain.n, r.final.n, "the parent chain is made of chords");
    cr_expect_eq(a.chain.n, a.final.n, "without sight every parent is a neighbour");
    cr_expect_gt(los->fails, 0, "some chord grazing the block was rejected and reparented");
    /* every chord of the chain was checked (and passed) when its end was popped: a closed span
     * relaxed afterwards would carry an unchecked chord */
    for (uint32_t k = 1; k < r.chain.n; k++) {
        uint32_t a0 = w.spans.sp_cell[r.chain.span[k - 1]], b0 = w.spans.sp_cell[r.chain.span[k]];
        int dx = abs((int)(a0 % 40) - (int)(b0 % 40)), dy = abs((int)(a0 / 40) - (int)(b0 / 40));
        if (dx <= 1 && dy <= 1)
            continue;
        bool seen = false;
        for (int i = 0; i < los->nok; i++)
            seen = seen ||
                   (los->ok_from[i] == r.chain.span[k - 1] && los->ok_to[i] == r.chain.span[k]);
        cr_expect(seen, "chord %u -> %u never passed a sight check", r.chain.span[k - 1],
                  r.chain.span[k]);
    }
    /* the route-mask inputs for 拉直: the final path lies in the final solve's mask, and the
     * access cells start at the start anchor */
    cr_assert_not_null(r.final_mask);
    cr_assert_not_null(r.solidc);
    for (uint32_t k = 0; k < r.chain.n; k++) /* chord interiors are judged by sight instead */
        cr_expect(r.final_mask[w.spans.sp_cell[r.chain.span[k]]], "chain node %u outside", k);
    cr_assert_gt(r.naccess, 0u);
    cr_expect_eq(r.access[0], r.start_anchor);
    /* the expanded path never enters the block */
    for (uint32_t k = 0; k < r.final.n; k++)
        cr_expect(w.core[r.final.cell[k]], "final path enters the obstacle at %u", r.final.cell[k]);
    nm_search_result_free(&r);
    nm_search_result_free(&a);
    free(los);
    fx_free(&w);
}

/* ---- drops are one-way and never chord -------------------------------------------------------- */
Test(search, drops_are_one_way_and_never_chord)
{
    nm_window w;
    BUILD(w, true, "########################################",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "#HHHHHHHHHHHHHHH.......................#",
          "#HHHHHHHHHHHHHHH.......................#", "########################################");
    fx_los *los = calloc(1, sizeof *los);
    los->w = &w;
    nm_search_request q = fx_req(3, 3, 35, 17, 5.0);
    q.los = fx_los_fn;
    q.los_ctx = los;
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    /* the drop: consecutive chain nodes from 5 m to 0 m are neighbouring cells */
    int drops = 0;
    for (uint32_t k = 1; k < r.chain.n; k++)
        if (r.chain.h[k - 1] - r.chain.h[k] > NM_kClimb) {
            drops++;
            cr_expect_leq(fabs(r.chain.x[k] - r.chain.x[k - 1]), NM_kCS + 1e-9);
            cr_expect_leq(fabs(r.chain.y[k] - r.chain.y[k - 1]), NM_kCS + 1e-9);
        }
    cr_expect_eq(drops, 1);
    cr_expect_lt(r.chain.n, r.final.n, "chords on either side of the ledge");
    nm_search_result_free(&r);
    /* back up: no way */
    nm_search_request b = fx_req(35, 17, 3, 3, 0.0);
    route(&w, &b, &r);
    cr_expect(span_level_refused(&r), "climbed the ledge at the span level");
    nm_search_result_free(&r);
    b.goal_deck_set = true; /* a declared deck forbids the cell-level fallback */
    b.goal_deck = 5.0;
    cr_expect_eq(route(&w, &b, &r), NM_SEARCH_FAIL);
    cr_expect_eq(r.fail_kind, NM_SEARCH_FAIL_DECK_UNREACHABLE);
    nm_search_result_free(&r);
    free(los);
    fx_free(&w);
}

/* ---- baseline = octile shortest path ---------------------------------------------------------- */
static double brute_octile(const nm_window *w, int s, int g)
{
    const int nx = w->win.nx, ny = w->win.ny, n = nx * ny;
    double *d = malloc((size_t)n * sizeof *d);
    char *done = calloc((size_t)n, 1);
    for (int c = 0; c < n; c++)
        d[c] = INFINITY;
    d[s] = 0;
    for (;;) { /* O(n^2) Dijkstra: brute force on purpose */
        int u = -1;
        for (int c = 0; c < n; c++)
            if (!done[c] && isfinite(d[c]) && (u < 0 || d[c] < d[u]))
                u = c;
        if (u < 0)
            break;
        done[u] = 1;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int x = u % nx + dx, y = u / nx + dy;
                if ((!dx && !dy) || x < 0 || y < 0 || x >= nx || y >= ny || !w->core[y * nx + x])
                    continue;
                if (dx && dy && (!w->core[(u / nx) * nx + x] || !w->core[y * nx + u % nx]))
                    continue;
                double len = (dx && dy) ? (double)1.41421356F : 1.0;
                if (d[u] + len < d[y * nx + x])
                    d[y * nx + x] = d[u] + len;
            }
    }
    double r = d[g];
    free(d);
    free(done);
    return r;
}

Test(search, baseline_equals_octile_shortest_path_on_random_grids)
{
    srand(12345);
    int compared = 0, disconnected = 0;
    for (int trial = 0; trial < 30; trial++) {
        enum { NX = 24, NY = 18 };
        static char buf[NY][NX + 1];
        const char *rows[NY];
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++)
                buf[j][i] = (i == 0 || j == 0 || i == NX - 1 || j == NY - 1 || rand() % 100 < 30)
                                ? '#'
                                : '.';
            buf[j][NX] = 0;
            rows[j] = buf[j];
        }
        buf[2][2] = buf[NY - 3][NX - 3] = '.';
        nm_window w;
        cr_assert_eq(fx_build(&w, rows, NY, false), NM_OK);
        double want = brute_octile(&w, 2 * NX + 2, (NY - 3) * NX + NX - 3);
        nm_search_request q = fx_req(2, 2, NX - 3, NY - 3, 0.0);
        nm_search_result r;
        int st = route(&w, &q, &r);
        if (isfinite(want)) {
            cr_assert_eq(st, NM_SEARCH_OK, "trial %d: %s", trial, r.message);
            cr_expect_float_eq(r.base_cost, want, 1e-5, "trial %d: %f vs %f", trial, r.base_cost,
                               want);
            double len =
                0; /* the path itself: neighbours in the walkable area, summing to the cost */
            for (uint32_t k = 1; k < r.base.n; k++) {
                int ddx = abs((int)(r.base.cell[k] % NX) - (int)(r.base.cell[k - 1] % NX));
                int ddy = abs((int)(r.base.cell[k] / NX) - (int)(r.base.cell[k - 1] / NX));
                cr_assert(ddx <= 1 && ddy <= 1 && ddx + ddy > 0);
                cr_assert(w.core[r.base.cell[k]]);
                len += (ddx && ddy) ? (double)1.41421356F : 1.0;
            }
            cr_expect_float_eq(len, r.base_cost, 1e-5);
            compared++;
        } else {
            cr_expect_eq(st, NM_SEARCH_FAIL, "trial %d", trial);
            cr_expect(r.has_gap);
            disconnected++;
        }
        nm_search_result_free(&r);
        fx_free(&w);
    }
    cr_expect_gt(compared, 5);
    cr_log_info("compared %d, disconnected %d", compared, disconnected);
}

/* ---- topology: the channel (clearance >= 1.75 or medial) leaves out a one-cell slit ------------ */
Test(search, topology_channel_leaves_out_a_one_cell_slit)
{
    /* left and right halls joined by a 1-cell slit (clearance 0.25 px) straight across, or by a
     * wide road (clearance >= 1.75 px) around the top, about 1.8x longer */
    nm_window w;
    BUILD(w, true, "##############################################",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#............................................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#................############................#",
          "#.............................................",
          "#................############................#",
          "##############################################");
    const int nx = w.win.nx;
    nm_search_request q = fx_req(8, 26, 37, 26, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    int base_slit = 0, topo_slit = 0;
    for (uint32_t k = 0; k < r.base.n; k++)
        base_slit += (r.base.cell[k] / (uint32_t)nx == 26 && r.base.cell[k] % (uint32_t)nx == 25);
    for (uint32_t k = 0; k < r.topo.n; k++)
        topo_slit += (r.topo.cell[k] / (uint32_t)nx == 26 && r.topo.cell[k] % (uint32_t)nx == 25);
    cr_expect_eq(base_slit, 1, "the baseline takes the slit");
    cr_expect_eq(topo_slit, 0, "the topology layer takes the wide road");
    cr_expect_eq(r.warnings & NM_SEARCH_WARN_TOPO_FULL, 0u);
    nm_search_result_free(&r);
    fx_free(&w);
}

/* ---- multi-layer: a bridge over a path -------------------------------------------------------- */
static const char *const k_bridge[] = {
    "###########b###########", "##########bbb##########", "##########bbb##########",
    "##########bbb##########", "##########bbb##########", "..........BBB..........",
    "..........BBB..........", "..........BBB..........", "##########bbb##########",
    "##########bbb##########", "##########bbb##########", "##########bbb##########",
    "###########b###########",
};

Test(search, bridge_over_path_keeps_each_layer)
{
    nm_window w;
    cr_assert_eq(fx_build(&w, k_bridge, 13, true), NM_OK);
    nm_search_request q = fx_req(0, 6, 22, 6, 0.0); /* along the path under the bridge */
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    for (uint32_t k = 0; k < r.final.n; k++)
        cr_expect_lt(r.final.h[k], 1.0F, "path node %u at %f m", k, (double)r.final.h[k]);
    nm_search_result_free(&r);
    q = fx_req(11, 0, 11, 12, 10.0); /* along the bridge over the path */
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    for (uint32_t k = 0; k < r.final.n; k++)
        cr_expect_gt(r.final.h[k], 9.0F, "bridge node %u at %f m", k, (double)r.final.h[k]);
    nm_search_result_free(&r);
    fx_free(&w);
}

/* ---- stairs with 1 m risers: down only -------------------------------------------------------- */
static void stairs_case(bool steps)
{
    nm_window w;
    BUILD(w, steps, "##################", "#0000111222333444#", "#0000111222333444#",
          "#0000111222333444#", "##################");
    nm_search_request down = fx_req(15, 2, 2, 2, 4.0), up = fx_req(2, 2, 15, 2, 0.0);
    nm_search_result r;
    cr_expect_eq(route(&w, &down, &r), NM_SEARCH_OK, "down: %s", r.message);
    nm_search_result_free(&r);
    route(&w, &up, &r);
    cr_expect(span_level_refused(&r), "up must fail at the span level");
    if (steps) { /* the step bits also stop the cell level */
        cr_expect_eq(r.status, NM_SEARCH_FAIL);
        cr_expect_eq(r.fail_kind, NM_SEARCH_FAIL_DISCONNECTED);
        cr_expect(r.has_gap);
    } else { /* 格级回退: no vertical rule there, so the cells connect, with a warning */
        cr_expect_eq(r.status, NM_SEARCH_OK);
        cr_expect(r.warnings & NM_SEARCH_WARN_CELL);
        cr_expect_eq(r.base.span[0], UINT32_MAX, "cell-level path carries no spans");
    }
    nm_search_result_free(&r);
    up.goal_deck_set = true; /* declared deck: no cell-level fallback */
    up.goal_deck = 4.0;
    cr_expect_eq(route(&w, &up, &r), NM_SEARCH_FAIL);
    cr_expect_eq(r.fail_kind, NM_SEARCH_FAIL_DECK_UNREACHABLE, "%s", r.message);
    nm_search_result_free(&r);
    fx_free(&w);
}

Test(search, stairs_with_1m_risers_pass_only_downward)
{
    stairs_case(true);  /* step bits from the window */
    stairs_case(false); /* no step bits: RiseOk alone */
}

/* ---- gap location ----------------------------------------------------------------------------- */
Test(search, gap_between_two_rooms_is_the_nearest_pair)
{
    nm_window w;
    BUILD(w, true, "#####################", "#........###.......#", "#........###.......#",
          "#........###.......#", "#........###.......#", "#####################");
    nm_search_request q = fx_req(2, 2, 17, 3, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_FAIL);
    cr_expect_eq(r.fail_kind, NM_SEARCH_FAIL_DISCONNECTED);
    cr_assert(r.has_gap);
    cr_expect_float_eq(r.gap_dist, 4 * NM_kCS, 1e-9, "gap %f px", r.gap_dist);
    cr_expect_float_eq(r.gap_sx, 8.5 * NM_kCS, 1e-9);
    cr_expect_float_eq(r.gap_gx, 12.5 * NM_kCS, 1e-9);
    cr_expect_float_eq(r.gap_sy, 1.5 * NM_kCS, 1e-9, "ties go to the smaller cell");
    nm_search_result_free(&r);
    /* declared goal deck: 终点面不可达 */
    q.goal_deck_set = true;
    q.goal_deck = 0.0;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_FAIL);
    cr_expect_eq(r.fail_kind, NM_SEARCH_FAIL_DECK_UNREACHABLE);
    nm_search_result_free(&r);
    fx_free(&w);
}

/* ---- small windows: escalation exits ---------------------------------------------------------- */
Test(search, small_window_escalates_on_cost_bound_and_snap_distance)
{
    nm_window w;
    cr_assert_eq(fx_build(&w, k_room, 21, true), NM_OK);
    nm_search_request q = fx_req(3, 9, 36, 11, 0.0);
    q.small = true;
    q.limit1 = 1000;
    q.limit2 = 20; /* the leg needs more than 33 cells */
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_ESCALATE);
    cr_expect_eq(r.reason, NM_SEARCH_ESC_WALK_NO_PATH, "early give-up counts as no path: %d %s",
                 r.reason, r.message);
    nm_search_result_free(&r);
    q.give_up = 1e9; /* no early give-up: the finished cost meets limit2 */
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_ESCALATE);
    cr_expect_eq(r.reason, NM_SEARCH_ESC_COST_BOUND, "%d %s", r.reason, r.message);
    nm_search_result_free(&r);
    q.limit2 = 1e9; /* everything passes until the corridor band meets the outer ring (this
                       40 x 21 window is all outer ring) */
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_ESCALATE);
    cr_expect_eq(r.reason, NM_SEARCH_ESC_BAND_EDGE, "%d %s", r.reason, r.message);
    cr_expect_gt(r.topo.n, 0u, "the topology path is kept for diagnostics");
    nm_search_result_free(&r);
    q = fx_req(21, 10, 36, 11, 0.0); /* start inside the block (x 19..23, y 8..12) */
    q.small = true;
    q.limit1 = 1.5;
    q.limit2 = 1e9;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_ESCALATE);
    cr_expect_eq(r.reason, NM_SEARCH_ESC_SNAP_FAR);
    nm_search_result_free(&r);
    q.small = false; /* this window is all outer ring: only a large one gets through */
    cr_expect_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    /* (18, 10) and (21, 7) are both 3 cells away: nearestCell takes the row-major first */
    cr_expect_float_eq(r.snap_start, 3 * NM_kCS, 1e-9, "snap %f", r.snap_start);
    cr_expect_eq(r.start_anchor, 7u * 40u + 21u);
    nm_search_result_free(&r);
    fx_free(&w);
}

Test(search, limit2_is_the_trust_border_ellipse_floor)
{
    /* s = g = (100, 100) in a 200 x 200 window: R = [63, 136]^2, nearest border (x = 136) 36 away */
    cr_expect_float_eq(nm_route_limit2(200, 200, 100, 100, 100, 100), 2 * 36.0 - 1, 1e-6);
    cr_expect_float_eq(nm_route_limit1(200, 200, 100, 100, 150, 100), 49.0 - 64.0, 1e-9);
}

/* ---- determinism ------------------------------------------------------------------------------ */
Test(search, same_request_gives_identical_results)
{
    nm_window w;
    cr_assert_eq(fx_build(&w, k_room, 21, true), NM_OK);
    fx_los *l1 = calloc(1, sizeof *l1), *l2 = calloc(1, sizeof *l2);
    l1->w = l2->w = &w;
    nm_search_request q = fx_req(2, 2, 37, 18, 0.0);
    q.los = fx_los_fn;
    q.los_ctx = l1;
    nm_search_result a, b;
    cr_assert_eq(route(&w, &q, &a), NM_SEARCH_OK);
    q.los_ctx = l2;
    cr_assert_eq(route(&w, &q, &b), NM_SEARCH_OK);
    cr_assert_eq(a.final.n, b.final.n);
    cr_expect_eq(memcmp(a.final.cell, b.final.cell, a.final.n * sizeof *a.final.cell), 0);
    cr_expect_eq(memcmp(a.final.span, b.final.span, a.final.n * sizeof *a.final.span), 0);
    cr_assert_eq(a.chain.n, b.chain.n);
    cr_expect_eq(memcmp(a.chain.x, b.chain.x, a.chain.n * sizeof *a.chain.x), 0);
    cr_expect_eq(a.geo_cost, b.geo_cost);
    cr_expect_eq(l1->calls, l2->calls);
    free(l1);
    free(l2);
    nm_search_result_free(&a);
    nm_search_result_free(&b);
    fx_free(&w);
}

/* ---- out of memory: a status, never a crash ----------------------------------------------------- */
Test(search, every_allocation_failure_returns_nomem)
{
    nm_window w;
    cr_assert_eq(fx_build(&w, k_room, 21, true), NM_OK);
    fx_los *los = calloc(1, sizeof *los);
    los->w = &w;
    nm_search_request q = fx_req(2, 2, 37, 18, 0.0);
    q.los = fx_los_fn;
    q.los_ctx = los;
    int failures = 0;
    for (size_t n = 1; n < 10000; n++) {
        nm_search_result r;
        nm_error err = {0};
        nm_alloc_fail_after(n);
        int rc = nm_search_route_window(&w, &q, &r, &err);
        nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            cr_expect_eq(r.status, NM_SEARCH_OK);
            nm_search_result_free(&r);
            break;
        }
        cr_assert_eq(rc, NM_ERR_NOMEM, "allocation %zu: %d %s", n, rc, err.msg);
        cr_expect_neq(err.msg[0], 0);
        failures++;
    }
    cr_expect_gt(failures, 10);
    free(los);
    fx_free(&w);
}

/* ---- topology price: a narrow passage inside the channel against a wide road ------------------- */
/* Halls x 1..40 and 81..120 below a 33-row road (rows 1..33); a block x 41..80, rows 34..33+B,
 * with a 5-row passage (clearance 0.75 px: medial, price 4) through its bottom. Start and goal sit
 * in the halls at the passage rows. Returns how many topology cells lie in the passage, and the
 * baseline's count in *base_in. */
static int passage_cells(int B, int *base_in, double *road_len, double *narrow_len)
{
    const int nx = 122, ny = 35 + B;
    char **buf = calloc((size_t)ny, sizeof *buf);
    const char **rows = calloc((size_t)ny, sizeof *rows);
    const int p0 = 33 + B - 5, p1 = 33 + B - 1; /* passage rows */
    for (int j = 0; j < ny; j++) {
        buf[j] = malloc((size_t)nx + 1);
        for (int i = 0; i < nx; i++) {
            bool wall = i == 0 || j == 0 || i == nx - 1 || j == ny - 1;
            if (j >= 34 && i >= 41 && i <= 80 && !(j >= p0 && j <= p1))
                wall = true;
            if (j > p1 && j < ny - 1 && i >= 41 && i <= 80)
                wall = true;
            buf[j][i] = wall ? '#' : '.';
        }
        buf[j][nx] = 0;
        rows[j] = buf[j];
    }
    nm_window w;
    cr_assert_eq(fx_build(&w, rows, ny, true), NM_OK);
    nm_search_request q = fx_req(20, p0 + 2, 100, p0 + 2, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_expect_eq(r.warnings & (NM_SEARCH_WARN_TOPO_FULL | NM_SEARCH_WARN_TOPO_BASE), 0u,
                 "the topology layer solved in its channel");
    int in = 0;
    for (uint32_t k = 0; k < r.topo.n; k++) {
        int i = (int)(r.topo.cell[k] % (uint32_t)nx), j = (int)(r.topo.cell[k] / (uint32_t)nx);
        in += i >= 41 && i <= 80 && j >= p0 && j <= p1;
    }
    *base_in = 0;
    for (uint32_t k = 0; k < r.base.n; k++) {
        int i = (int)(r.base.cell[k] % (uint32_t)nx), j = (int)(r.base.cell[k] / (uint32_t)nx);
        *base_in += i >= 41 && i <= 80 && j >= p0 && j <= p1;
    }
    *narrow_len = r.base_cost;
    *road_len = 2.0 * (B - 5 + 17) + 80.0; /* up to the road's middle and back, and across */
    nm_search_result_free(&r);
    fx_free(&w);
    for (int j = 0; j < ny; j++)
        free(buf[j]);
    free(buf);
    free(rows);
    return in;
}

Test(search, topology_prefers_wide_road_less_than_4x_longer)
{
    int base_in;
    double road, narrow;
    /* road about 2x the narrow route: the topology layer pays the length to stay wide */
    int in = passage_cells(12, &base_in, &road, &narrow);
    cr_expect_gt(base_in, 30, "the baseline takes the passage");
    cr_expect_lt(road, 4 * narrow);
    cr_expect_eq(in, 0, "topology entered the passage (%d cells)", in);
    /* road far more than 4x longer: the passage's price cannot outweigh it */
    in = passage_cells(260, &base_in, &road, &narrow);
    cr_expect_gt(road, 4 * narrow);
    cr_expect_gt(in, 30, "topology should take the passage now (%d cells)", in);
}

/* ---- Lazy Theta* on random rooms: every chord of the chain passed its sight check --------------- */
Test(search, lazy_theta_chords_are_all_checked_on_random_rooms)
{
    srand(777);
    int chords = 0;
    for (int trial = 0; trial < 25; trial++) {
        enum { NX = 70, NY = 50 };
        static char buf[NY][NX + 1];
        const char *rows[NY];
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++)
                buf[j][i] = (i == 0 || j == 0 || i == NX - 1 || j == NY - 1) ? '#' : '.';
            buf[j][NX] = 0;
            rows[j] = buf[j];
        }
        for (int b = 0; b < 7; b++) { /* random blocks */
            int x0 = 6 + rand() % (NX - 20), y0 = 6 + rand() % (NY - 16);
            int bw = 2 + rand() % 12, bh = 2 + rand() % 9;
            for (int j = y0; j < y0 + bh && j < NY - 4; j++)
                for (int i = x0; i < x0 + bw && i < NX - 4; i++)
                    buf[j][i] = '#';
        }
        nm_window w;
        cr_assert_eq(fx_build(&w, rows, NY, true), NM_OK);
        fx_los *los = calloc(1, sizeof *los);
        los->w = &w;
        nm_search_request q = fx_req(2, 2 + rand() % (NY - 4), NX - 3, 2 + rand() % (NY - 4), 0.0);
        q.los = fx_los_fn;
        q.los_ctx = los;
        nm_search_result r;
        if (route(&w, &q, &r) == NM_SEARCH_OK && r.chain.n) {
            for (uint32_t k = 1; k < r.chain.n; k++) {
                uint32_t a = w.spans.sp_cell[r.chain.span[k - 1]],
                         c = w.spans.sp_cell[r.chain.span[k]];
                int dx = abs((int)(a % NX) - (int)(c % NX)),
                    dy = abs((int)(a / NX) - (int)(c / NX));
                if (dx <= 1 && dy <= 1)
                    continue;
                chords++;
                bool seen = false;
                for (int i = 0; i < los->nok && !seen; i++)
                    seen =
                        los->ok_from[i] == r.chain.span[k - 1] && los->ok_to[i] == r.chain.span[k];
                cr_expect(seen, "trial %d: unchecked chord %u -> %u", trial, r.chain.span[k - 1],
                          r.chain.span[k]);
            }
            for (uint32_t k = 0; k < r.final.n; k++)
                cr_expect(w.core[r.final.cell[k]], "trial %d: path enters a block", trial);
        }
        nm_search_result_free(&r);
        free(los);
        fx_free(&w);
    }
    cr_expect_gt(chords, 20);
}

/* ---- 收尾检查: goal cut off, links without landing ------------------------------------------------ */
Test(search, goal_on_walk_outside_the_reach_set_is_cut_off)
{
    nm_window w;
    BUILD(w, true, "##########################", "#..........#.............#",
          "#..........#.............#", "#..........#.............#", "#..........#.............#",
          "#..........#.............#", "##########################");
    for (uint32_t k = 0; k < w.spans.nspans; k++) /* the right room: another component */
        if (w.spans.sp_cell[k] % 26 > 11)
            w.sp_bits[k] &= (uint8_t)~NM_SP_REACH;
    w.links_without_landing = 2;
    nm_search_request q = fx_req(2, 3, 15, 3, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_expect(r.goal_cut_off, "the goal stands on walk outside the reach set");
    cr_expect_eq(r.goal_anchor, 3u * 26u + 10u, "snapped across the wall");
    cr_expect_float_eq(r.snap_goal, 5 * NM_kCS, 1e-9);
    cr_expect(r.warnings & NM_SEARCH_WARN_NO_LANDING);
    cr_expect_eq(r.links_without_landing, 2u);
    nm_search_result_free(&r);
    q = fx_req(2, 3, 11, 3, 0.0); /* goal inside the wall: an author's offset, not cut off */
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_expect(!r.goal_cut_off);
    nm_search_result_free(&r);
    fx_free(&w);
}

/* 吸附锚点 (nearestCell): the walk cell with a usable span nearest the raw endpoint's cell, the
 * first in row-major order on ties, on random rooms with the ends anywhere (on walls too, far
 * from open ground). Fails when a tie goes to a later cell or a nearer row is not read. */
Test(search, snap_anchor_is_the_nearest_usable_walk_cell_row_major_first_on_ties)
{
    srand(777);
    int far = 0;
    for (int trial = 0; trial < 60; trial++) {
        enum { NX = 31, NY = 23 };
        static char buf[NY][NX + 1];
        const char *rows[NY];
        const int holes = trial % 3 == 0 ? 96 : 30; /* some rooms nearly all wall */
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++)
                buf[j][i] = rand() % 100 < holes ? '#' : '.';
            buf[j][NX] = 0;
            rows[j] = buf[j];
        }
        nm_window w;
        cr_assert_eq(fx_build(&w, rows, NY, false), NM_OK);
        const int si = rand() % NX, sj = rand() % NY, gi = rand() % NX, gj = rand() % NY;
        uint32_t want[2] = {NM_SEARCH_NONE, NM_SEARCH_NONE};
        int64_t wd[2] = {INT64_MAX, INT64_MAX};
        const int end[2][2] = {{si, sj}, {gi, gj}};
        for (int e = 0; e < 2; e++)
            for (uint32_t c = 0; c < (uint32_t)(NX * NY); c++) {
                const int64_t dx = (int64_t)(c % NX) - end[e][0], dy = (int64_t)(c / NX) - end[e][1];
                if (w.core[c] && w.lay[c] && nm_search_cell_usable(&w, c) && dx * dx + dy * dy < wd[e]) {
                    wd[e] = dx * dx + dy * dy;
                    want[e] = c;
                }
            }
        nm_search_request q = fx_req(si, sj, gi, gj, 0.0);
        nm_search_result r;
        nm_error err = {0};
        cr_assert_eq(nm_search_route_window(&w, &q, &r, &err), NM_OK, "%s", err.msg);
        if (want[0] == NM_SEARCH_NONE || want[1] == NM_SEARCH_NONE) {
            cr_expect_eq(r.fail_kind, NM_SEARCH_FAIL_NO_SNAP, "trial %d", trial);
        } else if (!(r.warnings & NM_SEARCH_WARN_CELL)) { /* the cell level snaps again */
            cr_expect_eq(r.start_anchor, want[0], "trial %d: start (%d, %d)", trial, si, sj);
            cr_expect_eq(r.goal_anchor, want[1], "trial %d: goal (%d, %d)", trial, gi, gj);
            cr_expect_float_eq(r.snap_start, sqrt((double)wd[0]) * NM_kCS, 1e-12);
            far += wd[0] > 4;
        }
        nm_search_result_free(&r);
        fx_free(&w);
    }
    cr_expect_gt(far, 3, "some ends snap from afar (%d)", far);
}

/* ---- link access chains for every link when the channel stays unlinked ------------------------- */
Test(search, all_links_get_access_chains_when_the_channel_is_unlinked)
{
    enum { NX = 44, NY = 40 };
    static char buf[NY][NX + 1];
    const char *rows[NY];
    for (int j = 0; j < NY; j++) {
        for (int i = 0; i < NX; i++) {
            bool hall = j >= 1 && j <= 19 && ((i >= 1 && i <= 20) || (i >= 23 && i <= 42));
            bool corridor = (j == 38 && i >= 1 && i <= 42) || (i == 42 && j >= 20 && j <= 38);
            buf[j][i] = hall || corridor ? '.' : '#';
        }
        buf[j][NX] = 0;
        rows[j] = buf[j];
    }
    nm_window w;
    cr_assert_eq(fx_build(&w, rows, NY, true), NM_OK);
    /* J1: cheap, into the far end of a 1-cell corridor more than 64 cells from the right hall's
     * open channel; J2: dear, between two hall edges */
    w.links = calloc(2, sizeof *w.links);
    w.nlinks = 2;
    w.links[0] = (nm_window_link){10 * NX + 20,          38 * NX + 1, fx_span(&w, 20, 10, 0),
                                  fx_span(&w, 1, 38, 0), 3.0,         0};
    w.links[1] = (nm_window_link){
        9 * NX + 1, 9 * NX + 42, fx_span(&w, 1, 9, 0), fx_span(&w, 42, 9, 0), 300.0, 1};
    nm_search_request q = fx_req(10, 10, 32, 10, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    bool base_j1 = false, topo_j2 = false;
    for (uint32_t k = 1; k < r.base.n; k++)
        base_j1 = base_j1 || (r.base.link[k] && r.base.cell[k] == 38u * NX + 1);
    for (uint32_t k = 1; k < r.topo.n; k++)
        topo_j2 = topo_j2 || (r.topo.link[k] && r.topo.cell[k] == 9u * NX + 42);
    cr_expect(base_j1, "the baseline takes J1");
    cr_expect(r.warnings & NM_SEARCH_WARN_ALL_LINKS, "warnings %x", r.warnings);
    cr_expect_eq(r.link_open[1], 1);
    cr_expect(topo_j2, "the topology layer crosses over J2");
    nm_search_result_free(&r);
    fx_free(&w);
}

/* ---- 收尾检查: forbidden steps the final path crosses ------------------------------------------- */
static void ban_line(nm_window *w, int x, int y0, int y1)
{
    const int nx = w->win.nx;
    for (int y = y0; y <= y1; y++) { /* every step between columns x and x+1, both ways */
        w->stepbits[y * nx + x] |= 0x3 | 0x30 | 0xC0; /* (1,0), (1,1), (1,-1) */
        w->stepbits[(y - 1) * nx + x] |= 0x30;        /* (1,1) from the row above */
        w->stepbits[(y + 1) * nx + x] |= 0xC0;        /* (1,-1) from the row below */
    }
}

/* Steps of a path between columns 10 and 11 that touch a fence row (1..14). */
static uint32_t fence_crossings(const nm_search_path *p)
{
    uint32_t n = 0;
    for (uint32_t k = 1; k < p->n; k++) {
        uint32_t a = p->cell[k - 1], b = p->cell[k];
        bool across = (a % 40 == 10 && b % 40 == 11) || (a % 40 == 11 && b % 40 == 10);
        n += across && (a / 40 <= 14 || b / 40 <= 14);
    }
    return n;
}

Test(search, facade_steps_crossed_by_the_final_path_are_counted)
{
    static char buf[41][41];
    const char *rows[41];
    for (int j = 0; j < 41; j++) { /* an open room, no blocks */
        for (int i = 0; i < 40; i++)
            buf[j][i] = (i == 0 || j == 0 || i == 39 || j == 40) ? '#' : '.';
        buf[j][40] = 0;
        rows[j] = buf[j];
    }
    nm_window w;
    cr_assert_eq(fx_build(&w, rows, 41, false), NM_OK);
    ban_line(&w, 10, 1, 14); /* a fence (step bits only) with a gap at rows 15..39 */
    nm_search_request q = fx_req(8, 9, 13, 9, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_expect_eq(fence_crossings(&r.base), 0u, "the baseline goes round through the gap");
    cr_expect_eq(r.facade_steps, 0u, "cell steps respect the step bits");
    cr_expect_eq(r.warnings & NM_SEARCH_WARN_FACADE, 0u);
    nm_search_result_free(&r);
    /* sight that ignores step bits lets a chord cut the fence: counted and warned */
    fx_los *los = calloc(1, sizeof *los);
    los->w = &w;
    q.los = fx_los_fn;
    q.los_ctx = los;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    uint32_t crossed = fence_crossings(&r.final);
    cr_expect_gt(crossed, 0u, "a chord should cut the fence with this sight");
    cr_expect_eq(r.facade_steps, crossed);
    cr_expect(r.warnings & NM_SEARCH_WARN_FACADE);
    nm_search_result_free(&r);
    free(los);
    fx_free(&w);
}

/* ---- 最终判定 decided by the baseline: no layers for a leg the window cannot carry ---------- */
Test(search, a_leg_the_final_judgement_refuses_skips_the_layers)
{
    nm_window w;
    BUILD(w, true, "##############", "#............#", "#............#", "#............#", "##############");
    /* the goal 40 cells east of the room: its anchor 28 cells (7 px) short... */
    nm_search_request q = fx_req(2, 2, 40, 2, 0.0);
    nm_search_result r;
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_assert_leq(r.snap_goal, NM_kSnapRadius);
    cr_expect(!nm_search_final_refuses(&r));
    cr_expect_gt(r.topo.n, 0, "within kSnapRadius the layers run");
    cr_expect_gt(r.final.n, 0);
    nm_search_result_free(&r);
    /* ...and 46 cells east: 34 cells (8.5 px) from the anchor, beyond kSnapRadius */
    q = fx_req(2, 2, 46, 2, 0.0);
    cr_assert_eq(route(&w, &q, &r), NM_SEARCH_OK, "%s", r.message);
    cr_expect_float_eq(r.snap_goal, 34 * NM_kCS, 1e-9);
    cr_expect(nm_search_final_refuses(&r));
    cr_expect_gt(r.base.n, 0, "the baseline fixed the snaps");
    cr_expect_eq(r.topo.n, 0, "no topology layer");
    cr_expect_eq(r.final.n, 0, "no geometry layer");
    cr_expect_null(r.solidc);
    nm_search_result_free(&r);
    fx_free(&w);
}

/* ---- the search heap: any exact priority queue pops the same (f, key) sequence ---------------- */
Test(search, heap_pops_in_f_then_key_order_under_any_interleaving)
{
    /* Random pushes and pops (f from a few values so ties on f are common, keys with repeats,
     * as a node's older entries) against a reference that scans for the (f, key) minimum. The
     * values span every kind of f >= 0 a search can make (zero, subnormal, tiny, huge, infinite):
     * the pop compares their bits as integers. */
    static const double far[] = {0.0, 4.9e-324, 2.2e-308, 1e-300, 1e300, 1.7e308, INFINITY};
    nm_heap h = {0};
    nm_error err = {0};
    enum { N = 40000 };
    nm_heap_item *ref = malloc(N * sizeof *ref);
    cr_assert(ref);
    size_t nref = 0;
    uint64_t x = 88172645463325252ull;
    for (int op = 0; op < N; op++) {
        xs_next(&x);
        if (nref == 0 || x % 5 < 3) { /* push 3 of 5 */
            const uint64_t v = (x >> 8) % 72;
            const double f = v < 64 ? (double)v * 0.5 : far[v % 8 % 7];
            const uint64_t key = (x >> 20) % 4096;
            cr_assert_eq(nm_search_heap_push(&h, f, key, &err), NM_OK);
            ref[nref++] = (nm_heap_item){f, key};
            continue;
        }
        size_t m = 0;
        for (size_t i = 1; i < nref; i++)
            if (ref[i].f < ref[m].f || (ref[i].f == ref[m].f && ref[i].key < ref[m].key))
                m = i;
        const nm_heap_item got = nm_search_heap_pop(&h);
        cr_assert(got.f == ref[m].f && got.key == ref[m].key,
                  "op %d: popped (%g, %llu), the least is (%g, %llu)", op, got.f,
                  (unsigned long long)got.key, ref[m].f, (unsigned long long)ref[m].key);
        ref[m] = ref[--nref];
        cr_assert_eq(h.n, nref);
    }
    free(ref);
    nm_search_heap_free(&h);
}

Test(search, indexed_heap_pops_as_the_lazy_heap_with_decreases)
{
    /* SpanAstar's indexed heap: pushes of new keys, lower f for open keys (never higher, as a
     * lower g), pops; each pop is the (f, key) minimum of the open keys (what the lazy heap pops
     * once older entries are skipped), and every open key's pos names its entry. */
    enum { K = 20000, N = 60000 };
    nm_heap h = {0};
    nm_error err = {0};
    nm_snode *node = calloc(K, sizeof *node);
    double *f = malloc(K * sizeof *f);
    uint32_t *okeys = malloc(K * sizeof *okeys), nopen = 0, next = 0, decreases = 0;
    cr_assert(node && f && okeys);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int op = 0; op < N; op++) {
        xs_next(&x);
        const int kind = (int)((x >> 3) % 8);
        if ((kind < 3 || !nopen) && next < K) { /* a new key, keys pushed in random order */
            const uint32_t k = (uint32_t)(((uint64_t)next++ * 7919u) % K);
            f[k] = (double)((x >> 40) % 128) * 0.25;
            okeys[nopen++] = k;
            cr_assert_eq(nm_search_iheap_push(&h, node, f[k], k, &err), NM_OK);
        } else if (kind < 6 && nopen) { /* a lower (or equal) f for an open key */
            const uint32_t k = okeys[(x >> 20) % nopen];
            const double d = (double)((x >> 40) % 5) * 0.25; /* f stays >= 0, as a search's */
            f[k] = f[k] > d ? f[k] - d : 0.0;
            nm_search_iheap_decrease(&h, node, node[k].pos, f[k]);
            decreases++;
        } else if (nopen) {
            uint32_t m = 0;
            for (uint32_t i = 1; i < nopen; i++) {
                const uint32_t a = okeys[i], b = okeys[m];
                if (f[a] < f[b] || (f[a] == f[b] && a < b))
                    m = i;
            }
            const uint32_t k = okeys[m];
            const nm_heap_item got = nm_search_iheap_pop(&h, node);
            cr_assert(got.key == k && got.f == f[k], "op %d: popped (%g, %llu), least (%g, %u)",
                      op, got.f, (unsigned long long)got.key, f[k], k);
            okeys[m] = okeys[--nopen];
        }
        cr_assert_eq(h.n, nopen);
        if (op % 997 == 0)
            for (uint32_t i = 0; i < nopen; i++)
                cr_assert(node[okeys[i]].pos < h.n && h.it[node[okeys[i]].pos].key == okeys[i],
                          "op %d: pos of %u", op, okeys[i]);
    }
    cr_assert_gt(decreases, N / 4);
    free(node);
    free(f);
    free(okeys);
    nm_search_heap_free(&h);
}

/* ---- 连通检查: the flood by row runs ------------------------------------------------------------- */
/* The reference: a breadth-first flood cell by cell, 8 neighbours and the links, the start
 * reached even outside the mask. */
static bool ref_linked(const nm_window *w, const nm_mask *m, uint32_t from, uint32_t to)
{
    const int nx = w->win.nx, ny = w->win.ny;
    uint8_t *seen = calloc((size_t)(nx * ny), 1);
    uint32_t *q = malloc((size_t)(nx * ny) * sizeof *q), head = 0, tail = 0;
    q[tail++] = from;
    seen[from] = 1;
    bool found = false;
    while (head < tail && !found) {
        const uint32_t c = q[head++];
        found = c == to;
        const int i = (int)(c % (uint32_t)nx), j = (int)(c / (uint32_t)nx);
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int a = i + dx, b = j + dy;
                if (a < 0 || b < 0 || a >= nx || b >= ny)
                    continue;
                const uint32_t v = (uint32_t)(b * nx + a);
                if (!seen[v] && nm_mask_in(m, v)) {
                    seen[v] = 1;
                    q[tail++] = v;
                }
            }
        for (uint32_t l = 0; l < w->nlinks; l++)
            if (w->links[l].from_cell == c && !seen[w->links[l].to_cell] &&
                nm_mask_in(m, w->links[l].to_cell)) {
                seen[w->links[l].to_cell] = 1;
                q[tail++] = w->links[l].to_cell;
            }
    }
    free(seen);
    free(q);
    return found;
}

Test(search, cell_records_of_a_large_window_are_the_same_on_two_threads)
{
    /* A window past NM_SEARCH_SPLIT_CELLS: its cell records and walk mask built on one thread and
     * on two, byte for byte. Walls, heights, two-span cells, holes in lay and in core, links and
     * forbidden steps make every field of a record vary. It fails when the second half starts
     * from the wrong occupied count or misses the walk mask. */
    enum { NX = 2113, NY = 2011 };
    cr_assert_geq((uint32_t)NX * NY, NM_SEARCH_SPLIT_CELLS);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    char *buf = malloc((size_t)NY * (NX + 1));
    const char **rp = malloc(NY * sizeof *rp);
    cr_assert(buf && rp);
    static const char kinds[] = "........3B#";
    for (int j = 0; j < NY; j++) {
        char *r = buf + (size_t)j * (NX + 1);
        for (int i = 0; i < NX; i++)
            r[i] = kinds[(xs_next(&x) >> 17) % (sizeof kinds - 1)];
        r[NX] = 0;
        rp[j] = r;
    }
    nm_window w;
    cr_assert_eq(fx_build(&w, rp, NY, true), NM_OK);
    free(buf);
    free(rp);
    for (int k = 0; k < 5000; k++) {
        w.lay[(xs_next(&x) >> 9) % ((uint64_t)NX * NY)] = 0;
        w.core[(xs_next(&x) >> 9) % ((uint64_t)NX * NY)] = 0;
    }
    random_core_links(&w, &x, 16, 40, NX, NY, 0, 5.0);
    nm_sctx one, two;
    nm_error err = {0};
    cr_assert_eq(nm_search_ctx_init(&one, &w, 1, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_search_ctx_init(&two, &w, 2, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(memcmp(one.walk, two.walk, one.ncell), 0);
    _Static_assert(sizeof(nm_scell) == 16, "a record has no padding to compare");
    size_t diff = 0, multi = 0, links = 0;
    for (uint32_t c = 0; c < one.ncell; c++) {
        diff += memcmp(&one.cell[c], &two.cell[c], sizeof one.cell[c]) != 0;
        multi += one.cell[c].n > 1;
        links += (one.cell[c].bits & NM_SC_LINKS) != 0;
    }
    cr_assert_eq(diff, 0, "%zu records differ", diff);
    cr_assert_gt(multi, 100000, "two-span cells (%zu)", multi);
    cr_assert_gt(links, 10, "cells with links (%zu)", links);
    nm_search_ctx_free(&one);
    nm_search_ctx_free(&two);
    fx_free(&w);
}

Test(search, linked_check_by_row_runs_answers_as_a_cell_by_cell_flood)
{
    /* Random maps (walls at about the percolation density, so many pairs are cut), a random
     * channel mask over them, a few links; every pair of 300 (from, to) per map, ends inside and
     * outside the mask, against the reference. It fails when a run's neighbouring rows are
     * scanned without the diagonal cell past either end, or a link out of a run is missed. */
    enum { NX = 47, NY = 31 };
    uint64_t x = 0x2545F4914F6CDD1Dull;
    int linked = 0, cut = 0;
    for (int map = 0; map < 40; map++) {
        char rows[NY][NX + 1];
        const char *rp[NY];
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++) {
                xs_next(&x);
                rows[j][i] = (x >> 11) % 100 < 38u ? '#' : '.';
            }
            rows[j][NX] = 0;
            rp[j] = rows[j];
        }
        nm_window w;
        cr_assert_eq(fx_build(&w, rp, NY, false), NM_OK);
        uint8_t *lim = malloc(NX * NY);
        for (int c = 0; c < NX * NY; c++) {
            xs_next(&x);
            lim[c] = (uint8_t)((x >> 20) % 100 < 85u);
        }
        const int nl = map % 4 * 3;
        random_core_links(&w, &x, 16, nl, NX, NY, 0, 5.0);
        nm_sctx s;
        nm_error err = {0};
        cr_assert_eq(nm_search_ctx_init(&s, &w, 1, &err), NM_OK, "%s", err.msg);
        const nm_mask m = {w.core, map % 5 ? lim : NULL};
        for (int k = 0; k < 300; k++) {
            xs_next(&x);
            const uint32_t a = (uint32_t)((x >> 8) % (NX * NY)), b = (uint32_t)((x >> 36) % (NX * NY));
            const bool want = ref_linked(&w, &m, a, b);
            cr_assert_eq(nm_search_linked(&s, &m, a, b), want, "map %d: (%u, %u) -> (%u, %u)", map,
                         a % NX, a / NX, b % NX, b / NX);
            linked += want;
            cut += !want;
        }
        nm_search_ctx_free(&s);
        free(lim);
        fx_free(&w);
    }
    cr_assert_gt(linked, 1000);
    cr_assert_gt(cut, 1000);
}

/* The spans the last SpanAstar on s gave a g. */
static uint32_t opened_spans(const nm_sctx *s)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->nspans; k++)
        n += (uint32_t)((s->opened[k >> 6] >> (k & 63)) & 1u);
    return n;
}

/* A random map of the searches' property tests: nx x ny cells, wall_pct % walls and raised_pct %
 * raised blocks ('H': RiseOk cuts them as walls), RiseOk's step bits when `steps`; then per cell
 * a lim mask bit (90 %), core outside lay on (map % 3 * 3) % of cells and, with ban_pct, each of
 * the eight step bits set at that rate (one-way bans); then nl links and s, a search context on
 * it. Returns lim (malloc'd); random_raised_map_free frees all three. */
static uint8_t *random_raised_map(nm_window *w, nm_sctx *s, uint64_t *x, int map, int nx, int ny,
                                  unsigned wall_pct, unsigned raised_pct, bool steps,
                                  unsigned ban_pct, int nl)
{
    char *rows = malloc((size_t)ny * (size_t)(nx + 1));
    const char **rp = malloc((size_t)ny * sizeof *rp);
    for (int j = 0; j < ny; j++) {
        char *row = rows + (size_t)j * (size_t)(nx + 1);
        for (int i = 0; i < nx; i++) {
            xs_next(x);
            const unsigned r = (unsigned)((*x >> 11) % 100);
            row[i] = r < wall_pct ? '#' : r < wall_pct + raised_pct ? 'H' : '.';
        }
        row[nx] = 0;
        rp[j] = row;
    }
    cr_assert_eq(fx_build(w, rp, ny, steps), NM_OK);
    free(rp);
    free(rows);
    uint8_t *lim = malloc((size_t)nx * (size_t)ny);
    for (int c = 0; c < nx * ny; c++) {
        xs_next(x);
        lim[c] = (uint8_t)((*x >> 20) % 100 < 90u);
        if ((*x >> 40) % 100 < (uint64_t)(map % 3 * 3)) /* core, not walk */
            w->lay[c] = 0;
        for (int b = 0; ban_pct && b < 8; b++)
            if ((xs_next(x) >> 30) % 100 < ban_pct)
                w->stepbits[c] |= (uint8_t)(1u << b);
    }
    random_core_links(w, x, 16, nl, nx, ny, 0, 5.0);
    nm_error err = {0};
    cr_assert_eq(nm_search_ctx_init(s, w, 1, &err), NM_OK, "%s", err.msg);
    return lim;
}

/* The fixture's links priced as the window's are: max(m, 1) times their length (m 1, 1.5, 2 in
 * turn), so the Euclidean heuristic stays consistent. */
static void links_at_window_cost(nm_window *w, int nx)
{
    for (uint32_t l = 0; l < w->nlinks; l++) {
        const nm_window_link *lk = &w->links[l];
        const double dx = (double)(lk->to_cell % nx) - (double)(lk->from_cell % nx);
        const double dy = (double)(lk->to_cell / nx) - (double)(lk->from_cell / nx);
        w->links[l].cost = (1.0 + (double)(l % 3) * 0.5) * sqrt(dx * dx + dy * dy);
    }
}

static void random_raised_map_free(nm_window *w, nm_sctx *s, uint8_t *lim)
{
    nm_search_ctx_free(s);
    free(lim);
    fx_free(w);
}

/* Two different random core cells as a solve's ends: the start's span nearest height 0, every
 * span of the goal cell a goal. */
static nm_ends random_core_ends(const nm_window *w, uint64_t *x, int nx, int ny)
{
    nm_ends e = {0};
    do {
        xs_next(x);
        e.start_cell = (uint32_t)((*x >> 8) % (uint64_t)(nx * ny));
        e.goal_cell = (uint32_t)((*x >> 36) % (uint64_t)(nx * ny));
    } while (!w->core[e.start_cell] || !w->core[e.goal_cell] || e.start_cell == e.goal_cell);
    uint32_t f, n = nm_span_cell_spans(&w->spans, e.goal_cell, &f);
    e.start_span = fx_span(w, (int)(e.start_cell % (uint32_t)nx), (int)(e.start_cell / (uint32_t)nx), 0);
    for (uint32_t g = 0; g < n; g++)
        e.goals[e.ngoal++] = f + g;
    return e;
}

Test(search, a_failed_walk_search_that_refused_no_core_cell_fails_on_core_too)
{
    /* solve() skips the core retry of an exhausted SpanAstar on walk whose wider_cut is unset.
     * Random maps with raised blocks (RiseOk cuts as walls do), core cells outside lay, a lim
     * mask and links; every failed walk search with wider_cut unset is run again on core: it must
     * fail too and reach the same spans. It fails when a refused cell of the core mask is not
     * noticed (the target, a corner of a diagonal step, a link's far cell). */
    enum { NX = 41, NY = 29 };
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int skipped = 0, cut = 0, found = 0;
    for (int map = 0; map < 40; map++) {
        nm_window w;
        nm_sctx s;
        nm_error err = {0};
        uint8_t *lim = random_raised_map(&w, &s, &x, map, NX, NY, 22, 8, map % 2 == 0, 0,
                                         map % 4 * 2);
        for (int k = 0; k < 120; k++) {
            nm_ends e = random_core_ends(&w, &x, NX, NY);
            nm_span_search q = {{s.walk, map % 5 ? lim : NULL}, {NULL, 1.0F, 1.0F}, NULL, NULL, NULL,
                                0.0, w.core};
            uint32_t *sp, nsp;
            uint8_t *via;
            double cost;
            int rc = nm_search_span_astar(&s, &q, &e, &sp, &via, &nsp, &cost, &err);
            nm_free(sp);
            nm_free(via);
            cr_assert_geq(rc, 0, "%s", err.msg);
            found += rc == 1;
            if (rc != 0)
                continue;
            if (s.wider_cut) {
                cut++;
                continue;
            }
            skipped++;
            const uint32_t reached = opened_spans(&s);
            q.mask.a = w.core;
            q.wider = NULL;
            rc = nm_search_span_astar(&s, &q, &e, &sp, &via, &nsp, &cost, &err);
            nm_free(sp);
            nm_free(via);
            cr_assert_eq(rc, 0, "map %d, leg %d: the core search found a path", map, k);
            cr_assert_eq(opened_spans(&s), reached, "map %d, leg %d: the core search reached more", map, k);
        }
        random_raised_map_free(&w, &s, lim);
    }
    cr_assert_gt(skipped, 200);
    cr_assert_gt(cut, 200);
    cr_assert_gt(found, 200);
}

Test(search, a_bounded_span_search_gives_the_unbounded_path_bit_for_bit)
{
    /* solve()'s bound (find_bound): a quick SpanAstar with a weighted heuristic finds a path of cost
     * U, then the solve skips the expansion of spans whose g plus octile distance to the goal is
     * above U + 3 S + NM_SEARCH_BOUND_MARGIN (S: the links' slack). Random maps with walls, raised
     * blocks, step bits, one-way bans, core outside lay, a lim with holes and links (cheap ones,
     * below their octile length, on every third map), priced and unpriced: the bounded search's
     * chain, via flags and cost are the unbounded one's, bit for bit, with the quick search's
     * bound and with the least bound the argument allows (C + 2 S + margin). It fails when the
     * bound skips a span the path needs (the links' slack left out: checked), and it checks that
     * the bound spares spans. */
    enum { NX = 41, NY = 29 };
    uint64_t x = 0xD1B54A32D192ED03ull;
    int compared = 0, spared = 0, quick = 0;
    for (int map = 0; map < 40; map++) {
        nm_window w;
        nm_sctx s;
        nm_error err = {0};
        uint8_t *lim = random_raised_map(&w, &s, &x, map, NX, NY, 10, 4, map % 2 == 0,
                                         map % 3 == 0 ? 2 : 0, map % 4 * 3);
        const bool cheap = map % 3 == 2; /* else links cost max(m, 1) times their length */
        if (!cheap)
            links_at_window_cost(&w, NX);
        const double slack = nm_search_link_slack(&s);
        if (cheap && w.nlinks)
            cr_assert_gt(slack, 0.0, "map %d: cheap links take something off", map);
        const nm_search_price price = map % 2 ? (nm_search_price){w.dist, 1.0F, 4.0F}
                                              : (nm_search_price){NULL, 1.0F, 1.0F};
        for (int k = 0; k < 60; k++) {
            nm_ends e = random_core_ends(&w, &x, NX, NY);
            lim[e.start_cell] = lim[e.goal_cell] = 1;
            nm_span_search q = {{s.walk, map % 5 ? lim : NULL}, price, NULL, NULL, NULL, 0.0, NULL};
            uint32_t *sp0, n0;
            uint8_t *via0;
            double cost0;
            int rc = nm_search_span_astar(&s, &q, &e, &sp0, &via0, &n0, &cost0, &err);
            cr_assert_geq(rc, 0, "%s", err.msg);
            if (rc != 1)
                continue;
            const uint32_t opened0 = opened_spans(&s);
            double bounds[2] = {cost0 + 2.0 * slack + NM_SEARCH_BOUND_MARGIN, 0.0};
            nm_span_search qq = q;
            qq.weight = NM_SEARCH_BOUND_WEIGHT;
            uint32_t *spq, nq;
            uint8_t *viaq;
            double u;
            rc = nm_search_span_astar(&s, &qq, &e, &spq, &viaq, &nq, &u, &err);
            cr_assert_eq(rc, 1, "map %d, leg %d: the weighted search found no path", map, k);
            /* the Euclidean heuristic overestimates by at most S (cheap links): so does the
             * unbounded search's cost */
            cr_assert_geq(u, cost0 - slack - 1e-9, "map %d, leg %d: a path S below the cost", map, k);
            bounds[1] = u + 3.0 * slack + NM_SEARCH_BOUND_MARGIN;
            quick += u > cost0;
            nm_free(spq);
            nm_free(viaq);
            for (int b = 0; b < 2; b++) {
                nm_span_search qb = q;
                qb.bound = bounds[b];
                uint32_t *sp1, n1;
                uint8_t *via1;
                double cost1;
                rc = nm_search_span_astar(&s, &qb, &e, &sp1, &via1, &n1, &cost1, &err);
                cr_assert_eq(rc, 1, "map %d, leg %d, bound %d: no path", map, k, b);
                cr_assert(s.bound > 0.0);
                cr_assert(n0 == n1 && cost0 == cost1 && !memcmp(sp0, sp1, n0 * sizeof *sp0) &&
                              !memcmp(via0, via1, n0),
                          "map %d, leg %d, bound %d: the path differs (cost %.17g vs %.17g, %u vs "
                          "%u spans)", map, k, b, cost0, cost1, n0, n1);
                spared += opened_spans(&s) < opened0;
                compared++;
                nm_free(sp1);
                nm_free(via1);
            }
            nm_free(sp0);
            nm_free(via0);
        }
        random_raised_map_free(&w, &s, lim);
    }
    cr_log_info("%d bounded searches compared, %d spared spans, %d quick paths above the least",
                compared, spared, quick);
    cr_assert_gt(compared, 1000);
    cr_assert_gt(spared, compared / 8, "bounded searches that opened fewer spans: %d", spared);
    cr_assert_gt(quick, 50, "quick paths dearer than the least: %d", quick);
}

Test(search, a_path_proved_to_stand_on_a_grown_lim_is_the_grown_search_s_path)
{
    /* The second thread's topology path is kept after a baseline through a link or a drop when
     * nm_search_path_stands proves that the channel's new cells (their access chains) change
     * nothing. Random maps with walls, raised blocks, step bits, one-way bans, core outside lay
     * and links; a priced or unpriced search on a lim with holes (cut in two on some maps, so
     * that links are the way across), then the same search on lim plus a few cells (short
     * chains, some from a link's foot or landing, single cells, an eighth of the rest): whenever
     * the first path is proved to stand, the grown search's chain and cost are the first's, bit
     * for bit. It fails when an offer along a new edge is left out (a step into a new cell, a
     * diagonal past a new corner, a link landing in one) or the proof ignores cheap links.
     * Every other first solve is bounded as solve() bounds it (find_bound): the proof then
     * trusts only the closed spans well under the bound, and must still prove many. */
    enum { NX = 41, NY = 29 };
    uint64_t x = 0x2545F4914F6CDD1Dull;
    int stands = 0, solved_again = 0, differs = 0, stands_bounded = 0;
    for (int map = 0; map < 40; map++) {
        nm_window w;
        nm_sctx s;
        nm_error err = {0};
        uint8_t *lim = random_raised_map(&w, &s, &x, map, NX, NY, 8, 4, map % 2 == 0,
                                         map % 3 == 0 ? 2 : 0, map % 4 * 3);
        /* links cost max(m, 1) times their length, as the window's do (a consistent heuristic);
         * every fifth map keeps the fixture's cheap ones, which nothing may be proved on */
        const bool cheap = map % 5 == 4;
        if (!cheap)
            links_at_window_cost(&w, NX);
        uint8_t *grown = malloc(NX * NY);
        const nm_search_price price = map % 2 ? (nm_search_price){w.dist, 1.0F, 4.0F}
                                              : (nm_search_price){NULL, 1.0F, 1.0F};
        for (int c = 0; c < NX * NY; c++) /* holes: a tenth of the cells more out of lim */
            if (xs_next(&x) % 10 == 0)
                lim[c] = 0;
        for (int j = 0; map % 3 == 1 && j < NY; j++) /* lim cut in two: only links cross */
            lim[j * NX + NX / 2] = 0;
        for (int k = 0; k < 60; k++) {
            nm_ends e = random_core_ends(&w, &x, NX, NY);
            const int kind = k % 3, n = kind == 0 ? 1 : 2 + (int)(xs_next(&x) % 12);
            uint32_t c = (uint32_t)(xs_next(&x) % (NX * NY));
            if (kind == 1 && w.nlinks) { /* the new cells start at a link's landing or foot */
                const nm_window_link *lk = &w.links[(uint32_t)k % w.nlinks];
                lim[c = k % 2 ? lk->to_cell : lk->from_cell] = 0;
            }
            lim[e.start_cell] = lim[e.goal_cell] = 1;
            memcpy(grown, lim, NX * NY);
            for (int a = 0; a < n; a++) { /* a random walk of new cells, or every hole */
                if (kind == 2 && a == 0) {
                    for (uint32_t h = 0; h < NX * NY; h++)
                        grown[h] = (uint8_t)(grown[h] || xs_next(&x) % 8 == 0);
                    break;
                }
                grown[c] = 1;
                const int d = (int)(xs_next(&x) % 4);
                const int i = (int)(c % NX) + (d == 0) - (d == 1), j = (int)(c / NX) + (d == 2) - (d == 3);
                if (i >= 0 && j >= 0 && i < NX && j < NY)
                    c = (uint32_t)(j * NX + i);
            }
            nm_span_search q0 = {{s.walk, lim}, price, NULL, NULL, NULL, 0.0, w.core};
            nm_span_search q1 = q0;
            q1.mask.b = grown;
            uint32_t *sp0, *sp1, n0, n1;
            uint8_t *via0, *via1;
            double cost0, cost1;
            int rc = nm_search_span_astar(&s, &q0, &e, &sp0, &via0, &n0, &cost0, &err);
            cr_assert_geq(rc, 0, "%s", err.msg);
            if (rc != 1)
                continue;
            if (k % 2) { /* the first solve bounded as solve() bounds it (the same path) */
                nm_span_search qq = q0;
                qq.weight = NM_SEARCH_BOUND_WEIGHT;
                uint32_t *spq, nq;
                uint8_t *viaq;
                double u;
                cr_assert_eq(nm_search_span_astar(&s, &qq, &e, &spq, &viaq, &nq, &u, &err), 1);
                nm_free(spq);
                nm_free(viaq);
                nm_free(sp0);
                nm_free(via0);
                nm_span_search qb = q0;
                qb.bound = u + 3.0 * nm_search_link_slack(&s) + NM_SEARCH_BOUND_MARGIN;
                cr_assert_eq(nm_search_span_astar(&s, &qb, &e, &sp0, &via0, &n0, &cost0, &err), 1);
            }
            const bool stand = nm_search_path_stands(&s, &q1, &e, lim, sp0[n0 - 1]);
            stands_bounded += stand && k % 2;
            rc = nm_search_span_astar(&s, &q1, &e, &sp1, &via1, &n1, &cost1, &err);
            cr_assert_eq(rc, 1, "map %d, leg %d: a grown lim lost the path", map, k);
            const bool same = n0 == n1 && cost0 == cost1 && !memcmp(sp0, sp1, n0 * sizeof *sp0) &&
                              !memcmp(via0, via1, n0);
            cr_assert(!(stand && cheap && w.nlinks), "map %d, leg %d: proved with cheap links", map, k);
            if (stand)
                cr_assert(same, "map %d, leg %d: proved to stand, but the grown search's path "
                                "differs (cost %.17g vs %.17g, %u vs %u spans)",
                          map, k, cost0, cost1, n0, n1);
            stands += stand;
            solved_again += !stand;
            differs += !same;
            nm_free(sp0);
            nm_free(via0);
            nm_free(sp1);
            nm_free(via1);
        }
        free(grown);
        random_raised_map_free(&w, &s, lim);
    }
    cr_log_info("%d paths stand (%d of bounded solves), %d solved again (%d of them differ)",
                stands, stands_bounded, solved_again, differs);
    cr_assert_gt(stands, 300, "paths proved to stand: %d", stands);
    cr_assert_gt(stands_bounded, 100, "paths of bounded solves proved to stand: %d", stands_bounded);
    cr_assert_gt(differs, 100, "grown searches with another path: %d", differs);
}

Test(search, a_link_out_of_a_new_cell_is_a_new_edge)
{
    /* A pocket cell x (its one neighbour the cell west of it) joins lim, and a link from x
     * crosses the wall straight to the goal's side: the path by the far link no longer stands,
     * though x's steps offer nothing. It fails when a new span's links are not offered. */
    enum { NX = 12, NY = 7 };
    nm_window w;
    BUILD(w, false, "############", "#....#.....#", "#..###.....#", "#....#.....#", "#..###.....#",
          "#....#.....#", "############");
    const uint32_t x = 3 * NX + 4;
    w.links = calloc(3, sizeof *w.links);
    w.links[0] = (nm_window_link){1 * NX + 4, 1 * NX + 6, fx_span(&w, 4, 1, 0), fx_span(&w, 6, 1, 0), 2.0, 0};
    w.links[1] = (nm_window_link){x, 3 * NX + 6, fx_span(&w, 4, 3, 0), fx_span(&w, 6, 3, 0), 2.0, 1};
    w.nlinks = 2;
    nm_sctx s;
    nm_error err = {0};
    cr_assert_eq(nm_search_ctx_init(&s, &w, 1, &err), NM_OK, "%s", err.msg);
    uint8_t lim[NX * NY], grown[NX * NY];
    memset(grown, 1, sizeof grown);
    memcpy(lim, grown, sizeof lim);
    lim[x] = 0;
    nm_ends e = {3 * NX + 1, 3 * NX + 10, fx_span(&w, 1, 3, 0), {fx_span(&w, 10, 3, 0)}, 1};
    nm_span_search q = {{s.walk, lim}, {NULL, 1.0F, 1.0F}, NULL, NULL, NULL, 0.0, NULL};
    uint32_t *sp, n;
    uint8_t *via;
    double cost;
    cr_assert_eq(nm_search_span_astar(&s, &q, &e, &sp, &via, &n, &cost, &err), 1);
    const uint32_t goal = sp[n - 1];
    nm_free(sp);
    nm_free(via);
    nm_span_search q1 = q;
    q1.mask.b = grown;
    cr_assert_not(nm_search_path_stands(&s, &q1, &e, lim, goal));
    double grown_cost;
    cr_assert_eq(nm_search_span_astar(&s, &q1, &e, &sp, &via, &n, &grown_cost, &err), 1);
    cr_assert_lt(grown_cost, cost - 1.0, "the link from x is the shorter way");
    nm_free(sp);
    nm_free(via);
    nm_search_ctx_free(&s);
    fx_free(&w);
}

Test(search, a_reach_check_that_fails_proves_no_span_search_succeeds_and_one_that_reaches_proves_a_link)
{
    /* solve() skips both SpanAstar tries when nm_search_reach does not reach the goal cell. Random
     * maps with walls, raised blocks (RiseOk cuts), RiseOk's step bits on every other map, random
     * one-way step bans, core cells outside lay, a lim mask and links; every pair the reach check
     * refuses must be refused by SpanAstar on walk and on core. Pairs the linked check passes and
     * the reach check refuses must occur (step bits and corners cut them), else the check proves
     * nothing the linked check does not. It fails when the flood misses an edge the search takes
     * (a link, a step bit read from the wrong cell, a corner).
     * solve() also runs the reach check first, within NM_SEARCH_REACH_FIRST cells, and leaves the
     * linked check out when it reaches the goal: so a reached goal must be a linked one (the
     * flood's edges are the linked check's, and fewer), and a budget may only leave the answer open
     * (-1), never change it. That part fails when the flood takes a link whose far cell is outside
     * the mask, or when a spent budget answers 0. */
    enum { NX = 43, NY = 31 };
    uint64_t x = 0xD1B54A32D192ED03ull;
    int refused = 0, beyond_linked = 0, reached_found = 0, reached = 0, open = 0, decided_in_budget = 0;
    for (int map = 0; map < 40; map++) {
        nm_window w;
        nm_sctx s;
        nm_error err = {0};
        uint8_t *lim = random_raised_map(&w, &s, &x, map, NX, NY, 27, 6, map % 2 == 0, 4,
                                         map % 4 * 4);
        const nm_mask m = {w.core, map % 5 ? lim : NULL};
        for (int k = 0; k < 150; k++) {
            const nm_ends e = random_core_ends(&w, &x, NX, NY);
            const int full = nm_search_reach(&s, &m, e.start_cell, e.goal_cell, 0);
            cr_assert(full == 0 || full == 1);
            const bool reach = full == 1;
            if (reach) {
                reached++;
                cr_assert(nm_search_linked(&s, &m, e.start_cell, e.goal_cell),
                          "map %d, leg %d: reached but not linked", map, k);
            }
            const uint32_t budget = 1u + (uint32_t)(k % 64);
            const int part = nm_search_reach(&s, &m, e.start_cell, e.goal_cell, budget);
            cr_assert(part == -1 || part == full, "map %d, leg %d: budget %u answered %d, not %d", map,
                      k, budget, part, full);
            open += part == -1;
            decided_in_budget += part != -1 && e.start_cell != e.goal_cell;
            for (int layer = 0; layer < 2; layer++) {
                nm_span_search q = {{layer ? w.core : s.walk, m.b}, {NULL, 1.0F, 1.0F}, NULL, NULL,
                                    NULL, 0.0, NULL};
                uint32_t *sp, nsp;
                uint8_t *via;
                double cost;
                const int rc = nm_search_span_astar(&s, &q, &e, &sp, &via, &nsp, &cost, &err);
                nm_free(sp);
                nm_free(via);
                cr_assert_geq(rc, 0, "%s", err.msg);
                cr_assert(reach || rc == 0, "map %d, leg %d: refused by the reach check, found on %s",
                          map, k, layer ? "core" : "walk");
                reached_found += reach && rc == 1;
            }
            if (!reach) {
                refused++;
                beyond_linked += nm_search_linked(&s, &m, e.start_cell, e.goal_cell);
            }
        }
        random_raised_map_free(&w, &s, lim);
    }
    cr_assert_gt(refused, 300);
    cr_assert_gt(beyond_linked, 30);
    cr_assert_gt(reached_found, 1000);
    cr_assert_gt(reached, 1000);
    cr_assert_gt(open, 300);
    cr_assert_gt(decided_in_budget, 300);
}

Test(search, a_link_into_a_core_cell_outside_walk_marks_the_walk_search_cut)
{
    /* Two walled rooms joined by a link whose far cell is core but not walk: the walk search
     * refuses only that cell, fails, and must say so (wider_cut), since on core the link leads
     * to the goal. It fails when a link's far cell is left out of the tracking. */
    nm_window w;
    BUILD(w, false, "#########", "#...#...#", "#...#...#", "#########");
    const uint32_t a = 1 * 9 + 3, b = 1 * 9 + 5;
    w.lay[b] = 0;
    w.links = calloc(1, sizeof *w.links);
    w.links[0] = (nm_window_link){a, b, fx_span(&w, 3, 1, 0), fx_span(&w, 5, 1, 0), 2.0, 0};
    w.nlinks = 1;
    nm_sctx s;
    nm_error err = {0};
    cr_assert_eq(nm_search_ctx_init(&s, &w, 1, &err), NM_OK, "%s", err.msg);
    nm_ends e = {.start_cell = 1 * 9 + 1, .goal_cell = 2 * 9 + 7, .ngoal = 1};
    e.start_span = fx_span(&w, 1, 1, 0);
    e.goals[0] = fx_span(&w, 7, 2, 0);
    nm_span_search q = {{s.walk, NULL}, {NULL, 1.0F, 1.0F}, NULL, NULL, NULL, 0.0, w.core};
    uint32_t *sp, n;
    uint8_t *via;
    double cost;
    cr_assert_eq(nm_search_span_astar(&s, &q, &e, &sp, &via, &n, &cost, &err), 0);
    cr_assert(s.wider_cut, "the link's far cell was refused unnoticed");
    q.mask.a = w.core;
    q.wider = NULL;
    cr_assert_eq(nm_search_span_astar(&s, &q, &e, &sp, &via, &n, &cost, &err), 1);
    nm_free(sp);
    nm_free(via);
    nm_search_ctx_free(&s);
    fx_free(&w);
}

/* ---- the channel and the topology layer beside the baseline: the one-thread result ------------- */
static void expect_same_path(const nm_search_path *a, const nm_search_path *b, const char *what,
                             int leg)
{
    cr_assert_eq(a->n, b->n, "leg %d: %s: %u vs %u cells", leg, what, a->n, b->n);
    for (uint32_t k = 0; k < a->n; k++)
        cr_assert(a->cell[k] == b->cell[k] && a->span[k] == b->span[k] && a->h[k] == b->h[k] &&
                      a->link[k] == b->link[k],
                  "leg %d: %s differs at %u", leg, what, k);
}

static void expect_same_result(const nm_search_result *a, const nm_search_result *b, size_t ncell,
                               int leg)
{
    cr_assert_eq(a->status, b->status, "leg %d: status", leg);
    cr_assert_eq(a->reason, b->reason, "leg %d: reason", leg);
    cr_assert_eq(a->warnings, b->warnings, "leg %d: warnings %#x vs %#x", leg, a->warnings,
                 b->warnings);
    cr_assert_str_eq(a->message, b->message, "leg %d: message", leg);
    cr_assert(a->base_cost == b->base_cost && a->topo_cost == b->topo_cost &&
                  a->geo_cost == b->geo_cost,
              "leg %d: costs", leg);
    expect_same_path(&a->base, &b->base, "baseline", leg);
    expect_same_path(&a->topo, &b->topo, "topology path", leg);
    expect_same_path(&a->final, &b->final, "final path", leg);
    cr_assert_eq(a->chain.n, b->chain.n, "leg %d: parent chain", leg);
    for (uint32_t k = 0; k < a->chain.n; k++)
        cr_assert(a->chain.x[k] == b->chain.x[k] && a->chain.y[k] == b->chain.y[k] &&
                      a->chain.h[k] == b->chain.h[k] && a->chain.span[k] == b->chain.span[k] &&
                      a->chain.link[k] == b->chain.link[k],
                  "leg %d: parent chain point %u", leg, k);
    cr_assert(a->start_anchor == b->start_anchor && a->goal_anchor == b->goal_anchor &&
                  a->snap_start == b->snap_start && a->snap_goal == b->snap_goal &&
                  a->goal_cut_off == b->goal_cut_off,
              "leg %d: anchors", leg);
    cr_assert(a->facade_steps == b->facade_steps &&
                  a->links_without_landing == b->links_without_landing,
              "leg %d: end checks", leg);
    cr_assert(a->has_gap == b->has_gap && (!a->has_gap || (a->gap_sx == b->gap_sx &&
                                                           a->gap_sy == b->gap_sy &&
                                                           a->gap_gx == b->gap_gx &&
                                                           a->gap_gy == b->gap_gy &&
                                                           a->gap_dist == b->gap_dist)),
              "leg %d: gap", leg);
    cr_assert_eq(a->naccess, b->naccess, "leg %d: access cells", leg);
    for (uint32_t k = 0; k < a->naccess; k++)
        cr_assert_eq(a->access[k], b->access[k], "leg %d: access cell %u", leg, k);
    cr_assert_eq(a->nlinks, b->nlinks, "leg %d: links", leg);
    for (uint32_t k = 0; a->link_open && k < a->nlinks; k++)
        cr_assert_eq(a->link_open[k], b->link_open[k], "leg %d: link %u open", leg, k);
    cr_assert_eq(!a->final_mask, !b->final_mask, "leg %d: final mask", leg);
    cr_assert(!a->final_mask || !memcmp(a->final_mask, b->final_mask, ncell), "leg %d: final mask",
              leg);
    cr_assert_eq(!a->solidc, !b->solidc, "leg %d: open area", leg);
    cr_assert(!a->solidc || !memcmp(a->solidc, b->solidc, ncell), "leg %d: open area", leg);
}

/* A test gate: refuses drops that land on a cell of an odd row. */
static bool odd_row_gate(void *ctx, uint32_t from_cell, double h_from, uint32_t to_cell, double h_to)
{
    (void)from_cell;
    (void)h_from;
    (void)h_to;
    return (to_cell / *(const uint32_t *)ctx) % 2 == 1;
}

Test(search, two_threads_give_the_one_thread_result)
{
    /* Random maps of floor, 5 m platforms (ledge drops; a gate refusing some) and walls with a
     * few off-mesh links (on odd maps costing 1-2 times their length, as a window's); legs whose
     * baseline takes a link or a drop (the second thread's topology path kept when proved to
     * stand, else dropped), plain ones (taken), small windows that escalate, unlinked channels
     * (every link opened, the whole-window retry). Every result field equal with one and two
     * threads, and some legs of each kind. It fails when the second thread's channel is taken
     * after a baseline through a link or a drop, its path kept there unproved, or its warnings
     * are not carried over. */
    enum { NX = 64, NY = 40 };
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int legs = 0, dropped = 0, taken = 0, from[4] = {0};
    for (int map = 0; map < 6; map++) {
        char rows[NY][NX + 1];
        const char *rp[NY];
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++)
                rows[j][i] = (i == 0 || j == 0 || i == NX - 1 || j == NY - 1) ? '#' : '.';
            rows[j][NX] = 0;
            rp[j] = rows[j];
        }
        for (int b = 0; b < 14; b++) { /* blocks of wall or platform */
            const int i0 = 1 + (int)(xs_next(&x) % (NX - 8)), j0 = 1 + (int)(xs_next(&x) % (NY - 8));
            const int bw = 2 + (int)(xs_next(&x) % 9), bh = 2 + (int)(xs_next(&x) % 9);
            const char ch = xs_next(&x) % 3 ? '#' : 'H';
            for (int j = j0; j < j0 + bh && j < NY - 1; j++)
                for (int i = i0; i < i0 + bw && i < NX - 1; i++)
                    rows[j][i] = ch;
        }
        if (map % 2) /* a wall across with a gap of one cell: channels cut */
            for (int j = 1; j < NY - 1; j++)
                rows[j][NX / 2] = j == NY / 2 ? '.' : '#';
        nm_window w;
        cr_assert_eq(fx_build(&w, rp, NY, true), NM_OK);
        uint32_t nx = NX;
        if (map >= 2) {
            w.gate.fn = odd_row_gate;
            w.gate.ctx = &nx;
        }
        const int nl = map % 3 * 2;
        random_core_links(&w, &x, 0, nl, NX, NY, 9, 4.0);
        for (int l = 0; map % 2 && l < nl; l++) { /* max(m, 1) times their length, as a window's */
            const nm_window_link *lk = &w.links[l];
            w.links[l].cost = (1.0 + (double)(l % 2)) *
                              hypot((double)(lk->to_cell % NX) - (double)(lk->from_cell % NX),
                                    (double)(lk->to_cell / NX) - (double)(lk->from_cell / NX));
        }
        for (int k = 0; k < 30; k++) {
            int si, sj, gi, gj;
            do {
                si = (int)(xs_next(&x) % NX), sj = (int)(xs_next(&x) % NY);
            } while (!w.core[sj * NX + si]);
            do {
                gi = (int)(xs_next(&x) % NX), gj = (int)(xs_next(&x) % NY);
            } while (!w.core[gj * NX + gi]);
            nm_search_request q = fx_req(si, sj, gi, gj, rows[sj][si] == 'H' ? 5.0 : 0.0);
            q.small = k % 4 == 3;
            q.limit1 = q.limit2 = 1e9;
            nm_search_result one, two;
            q.workers = 1;
            route(&w, &q, &one);
            q.workers = 2;
            route(&w, &q, &two);
            expect_same_result(&one, &two, NX * NY, legs);
            cr_assert_eq(one.topo_from, NM_TOPO_ONE, "leg %d: one thread", legs);
            from[two.topo_from]++;
            bool plain = one.base.n > 0;
            for (uint32_t m = 1; m < one.base.n; m++)
                plain = plain && !one.base.link[m] && one.base.h[m - 1] - one.base.h[m] <= NM_kClimb;
            dropped += one.base.n > 0 && !plain;
            taken += plain;
            legs++;
            nm_search_result_free(&one);
            nm_search_result_free(&two);
        }
        fx_free(&w);
    }
    cr_log_info("%d legs: %d plain, %d through a link or a drop; topology solved beside the "
                "baseline and taken %d, proved %d, solved again %d", legs, taken, dropped,
                from[NM_TOPO_BESIDE], from[NM_TOPO_PROVED], from[NM_TOPO_AGAIN]);
    cr_assert_gt(from[NM_TOPO_PROVED], 0, "no leg kept the second thread's path past a link or a drop");
    cr_assert_gt(from[NM_TOPO_AGAIN], 0, "no leg solved the topology layer again");
    cr_assert_gt(dropped, 3, "legs whose baseline takes a link or a drop: %d", dropped);
    cr_assert_gt(taken, 20, "plain legs: %d", taken);
}

/* fx_los with a count of los_prep's calls (fx_los first: fx_los_fn reads the same context). */
typedef struct prep_los {
    fx_los L;
    int preps;
} prep_los;

static void prep_count(void *ctx)
{
    ((prep_los *)ctx)->preps++;
}

Test(search, corridor_rows_made_on_two_threads_are_the_one_thread_corridor)
{
    /* The corridor's rows are made as NearestSource finishes them, shared between the thread
     * running it and the one beside it (after the sight's window-only work, asked once). Tall
     * random maps and legs from near the top to near the bottom put the band across hundreds of
     * rows and many chunks; small windows with random region sides test the outer-ring flag.
     * Every result field (the open area, the final mask, the escalation) equal with one and two
     * threads. It fails when a chunk of rows is skipped or made twice with the other thread's
     * flag lost, or when a row is read before NearestSource has finished it. */
    enum { NX = 40, NY = 700 };
    uint64_t x = 0xD1B54A32D192ED03ull;
    static char rows[NY][NX + 1];
    const char *rp[NY];
    int legs = 0, geo = 0, escalated = 0;
    for (int map = 0; map < 4; map++) {
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++)
                rows[j][i] = (i == 0 || j == 0 || i == NX - 1 || j == NY - 1) ? '#' : '.';
            rows[j][NX] = 0;
            rp[j] = rows[j];
        }
        for (int b = 0; b < 120; b++) { /* blocks of wall, a few cells each */
            const int i0 = 1 + (int)(xs_next(&x) % (NX - 6)), j0 = 1 + (int)(xs_next(&x) % (NY - 6));
            const int bw = 1 + (int)(xs_next(&x) % 5), bh = 1 + (int)(xs_next(&x) % 5);
            for (int j = j0; j < j0 + bh && j < NY - 1; j++)
                for (int i = i0; i < i0 + bw && i < NX - 1; i++)
                    rows[j][i] = '#';
        }
        nm_window w;
        cr_assert_eq(fx_build(&w, rp, NY, true), NM_OK);
        prep_los *los = calloc(1, sizeof *los);
        cr_assert_not_null(los);
        los->L.w = &w;
        for (int k = 0; k < 6; k++) {
            int si, sj, gi, gj;
            do {
                si = (int)(xs_next(&x) % NX), sj = 1 + (int)(xs_next(&x) % 60);
            } while (!w.core[sj * NX + si]);
            do {
                gi = (int)(xs_next(&x) % NX), gj = NY - 2 - (int)(xs_next(&x) % 60);
            } while (!w.core[gj * NX + gi]);
            nm_search_request q = fx_req(si, sj, gi, gj, 0.0);
            q.los = fx_los_fn;
            q.los_ctx = los;
            q.los_prep = prep_count;
            q.small = k % 2 == 1;
            q.limit1 = q.limit2 = 1e9;
            q.region_sides = (unsigned)(xs_next(&x) % 16);
            nm_search_result one, two;
            q.workers = 1;
            los->preps = 0;
            route(&w, &q, &one);
            const int preps_one = los->preps;
            q.workers = 2;
            los->preps = 0;
            route(&w, &q, &two);
            cr_assert(preps_one <= 1 && los->preps == preps_one, "leg %d: los_prep asked %d and %d times",
                      legs, preps_one, los->preps);
            expect_same_result(&one, &two, NX * NY, legs);
            geo += one.status == NM_SEARCH_OK && one.solidc != NULL && preps_one == 1;
            escalated += one.status == NM_SEARCH_ESCALATE && one.reason == NM_SEARCH_ESC_BAND_EDGE;
            legs++;
            nm_search_result_free(&one);
            nm_search_result_free(&two);
        }
        free(los);
        fx_free(&w);
    }
    cr_log_info("%d legs: %d through the geometry layer, %d band-edge escalations", legs, geo, escalated);
    cr_assert_gt(geo, 8, "legs through the geometry layer: %d", geo);
    cr_assert_gt(escalated, 0, "band-edge escalations: %d", escalated);
}

Test(search, cell_records_hold_the_window_s_span_range_masks_steps_and_clearance)
{
    /* SpanAstar reads a neighbour cell from its record only: on random windows (empty cells,
     * floors, platforms, two-span bridge cells; random core, lay, step bits, clearance, usable
     * spans and links) every record must give the span table's range, the first span's height and
     * REACH bit, walk = core ∧ lay, core, the step bits, the clearance of its cell and whether a
     * span of the cell starts a link, and each span's links must be looked up whole and in order.
     * It fails when a field is taken from a neighbouring cell, span or layer. */
    enum { NX = 37, NY = 23 };
    int shared = 0; /* spans left by two links or more */
    static const char k_ch[] = "#..3HBBb";
    uint64_t x = 0x2545F4914F6CDD1Dull;
    int multi = 0;
    for (int map = 0; map < 20; map++) {
        char rows[NY][NX + 1];
        const char *rp[NY];
        for (int j = 0; j < NY; j++) {
            for (int i = 0; i < NX; i++)
                rows[j][i] = k_ch[(xs_next(&x) >> 11) % (sizeof k_ch - 1)];
            rows[j][NX] = 0;
            rp[j] = rows[j];
        }
        nm_window w;
        cr_assert_eq(fx_build(&w, rp, NY, map % 2 == 0), NM_OK);
        for (int c = 0; c < NX * NY; c++) {
            w.lay[c] = (uint8_t)((xs_next(&x) >> 20) % 5 != 0);
            w.core[c] = (uint8_t)((xs_next(&x) >> 20) % 7 != 0);
            w.stepbits[c] = (uint8_t)(xs_next(&x) >> 30);
            w.dist[c] = (float)((xs_next(&x) >> 30) % 1000) * 0.125F;
        }
        for (uint32_t k = 0; k < w.spans.nspans; k++)
            w.sp_bits[k] = (xs_next(&x) >> 20) % 3 ? NM_SP_REACH : 0;
        uint8_t *from = calloc(w.spans.nspans, 1);
        const uint32_t nl = 40;
        w.links = calloc(nl, sizeof *w.links);
        for (uint32_t l = 0; l < nl; l++) {
            const uint32_t a = (uint32_t)(xs_next(&x) >> 20) % w.spans.nspans;
            const uint32_t b = (uint32_t)(xs_next(&x) >> 20) % w.spans.nspans;
            w.links[l] = (nm_window_link){w.spans.sp_cell[a], w.spans.sp_cell[b], a, b, 3.0, l};
            from[a] = 1;
        }
        w.nlinks = nl;
        nm_sctx s;
        nm_error err = {0};
        cr_assert_eq(nm_search_ctx_init(&s, &w, 1, &err), NM_OK, "%s", err.msg);
        for (uint32_t c = 0; c < s.ncell; c++) {
            const nm_scell *r = &s.cell[c];
            uint32_t f, n = nm_span_cell_spans(&w.spans, c, &f);
            multi += n > 1;
            cr_assert_eq(r->n, n, "map %d, cell %u: span count", map, c);
            bool links = false;
            for (uint32_t k = f; k < f + n; k++)
                links |= from[k];
            cr_assert_eq(!!(r->bits & NM_SC_LINKS), links, "map %d, cell %u: links", map, c);
            if (n) {
                cr_assert_eq(r->first, f, "map %d, cell %u: first span", map, c);
                cr_assert_eq(r->h0, w.spans.sp_h[f], "map %d, cell %u: height", map, c);
                cr_assert_eq(!!(r->bits & NM_SC_REACH0), !!(w.sp_bits[f] & NM_SP_REACH),
                             "map %d, cell %u: REACH", map, c);
            }
            cr_assert_eq(!!(r->bits & NM_SC_WALK), w.core[c] && w.lay[c], "map %d, cell %u: walk",
                         map, c);
            cr_assert_eq(!!(r->bits & NM_SC_CORE), !!w.core[c], "map %d, cell %u: core", map, c);
            cr_assert_eq(r->step, w.stepbits[c], "map %d, cell %u: step bits", map, c);
            cr_assert_eq(r->dist, w.dist[c], "map %d, cell %u: clearance", map, c);
        }
        /* a span's links: every link leaving it, in link order, and no other */
        for (uint32_t k = 0; k < w.spans.nspans; k++) {
            uint32_t end, i = nm_search_key_run(s.lk_from, nl, k, &end), want = 0, got = 0, prev = 0;
            for (uint32_t l = 0; l < nl; l++)
                want += w.links[l].from_span == k;
            for (; i < end; i++, got++) {
                const uint32_t l = s.lk_idx[i];
                cr_assert_eq(w.links[l].from_span, k, "map %d, span %u: a link of another span", map, k);
                cr_assert(got == 0 || l > prev, "map %d, span %u: links out of order", map, k);
                prev = l;
            }
            cr_assert_eq(got, want, "map %d, span %u: %u links of %u", map, k, got, want);
            shared += want > 1;
        }
        for (uint32_t i = 1; i < nl; i++) { /* by from_cell, link order among equals */
            const nm_window_link *a = &w.links[s.lk_bycell[i - 1]], *b = &w.links[s.lk_bycell[i]];
            cr_assert(a->from_cell < b->from_cell ||
                          (a->from_cell == b->from_cell && s.lk_bycell[i - 1] < s.lk_bycell[i]),
                      "map %d: links by cell out of order at %u", map, i);
        }
        nm_search_ctx_free(&s);
        fx_free(&w);
        free(from);
    }
    cr_assert_gt(multi, 1000);
    cr_assert_gt(shared, 0, "no span left by two links: the lookup's run is not tested");
}

Test(search, a_heap_entry_s_four_children_share_one_cache_line)
{
    /* The 4-ary heap places entry 0 so that the children 4i + 1 to 4i + 4 of every entry lie on
     * one 64-byte line, through every growth (the entries move with it). It fails when the heap
     * starts at its allocation or a growth does not move the entries to the new place. */
    for (size_t cap = 1; cap < 20000; cap = cap * 3 + 1) {
        nm_heap h = {0};
        nm_error err = {0};
        void *other[4]; /* allocations between the heap's, so its blocks land at varied offsets */
        cr_assert_eq(nm_search_heap_reserve(&h, cap, &err), NM_OK, "%s", err.msg);
        for (int k = 0; k < 4; k++)
            other[k] = nm_malloc(16 * (size_t)(k + 1));
        for (uint64_t k = 0; k < 3 * cap + 5; k++) {
            cr_assert_eq(nm_search_heap_push(&h, (double)(k % 7), k, &err), NM_OK, "%s", err.msg);
            cr_assert_eq((uintptr_t)&h.it[1] % 64, 0, "cap %zu, %llu entries: children split", cap,
                         (unsigned long long)h.n);
        }
        double f = -1.0;
        uint64_t key = 0;
        for (uint64_t k = 0; k < 3 * cap + 5; k++) {
            nm_heap_item it = nm_search_heap_pop(&h);
            cr_assert(it.f > f || (it.f == f && it.key > key), "cap %zu: pops out of order", cap);
            f = it.f;
            key = it.key;
        }
        for (int k = 0; k < 4; k++)
            nm_free(other[k]);
        nm_search_heap_free(&h);
    }
}
