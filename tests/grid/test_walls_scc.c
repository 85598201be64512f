/* test_walls_scc.c — StampWalls (预烘场 / 标墙) and the strongly connected components with their
 * condensation DAG (可达域), the latter against brute-force reachability and on deep chains. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Test(stamp_walls, wall_marks_spans_within_8_m_of_its_mean_height_in_the_cells_it_crosses)
{
    /* 10 x 3 window, every cell: spans at 0 and 20 m. Wall from (0.3, 0.3) to (2.2, 0.3) px with
     * end heights 1 and 3 (mean 2): row 1, columns 1..8. */
    span_def d[60];
    size_t n = 0;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 10; i++) {
            d[n++] = (span_def){i, j, 0.0};
            d[n++] = (span_def){i, j, 20.0};
        }
    nm_span_table t;
    table_from_defs(&t, 10, 3, d, n);
    uint8_t dead[60] = {0};
    nm_grid_wall w = {0.3, 0.3, 1.0, 2.2, 0.3, 3.0, 7, 2};
    size_t stamped = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_stamp_walls(&t, &w, 1, dead, &stamped, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(stamped, 8);
    for (uint32_t k = 0; k < t.nspans; k++) {
        uint32_t c = t.sp_cell[k];
        int i = (int)(c % 10), j = (int)(c / 10);
        bool want = j == 1 && i >= 1 && i <= 8 && t.sp_h[k] < 10.0f;
        cr_assert_eq(dead[k], want, "span %u at (%d,%d) h %.1f", k, i, j, t.sp_h[k]);
    }
    /* 8 m band edge: a wall with mean height 12 reaches the 20 m span (|20 - 12| <= 8) and the
     * ground (|0 - 12| > 8) stays. */
    memset(dead, 0, sizeof dead);
    nm_grid_wall hi = {0.3, 0.6, 11.0, 0.3, 0.6, 13.0, 8, 0}; /* a point wall in cell (1,2) */
    cr_assert_eq(nm_grid_stamp_walls(&t, &hi, 1, dead, &stamped, &err), NM_OK);
    cr_assert_eq(stamped, 1);
    uint32_t f;
    cr_assert_eq(nm_span_cell_spans(&t, 21, &f), 2);
    cr_assert_eq(dead[f + 1], 1);
    cr_assert_eq(dead[f], 0);
    nm_span_table_free(&t);
}

Test(stamp_walls, diagonal_wall_sampled_every_tenth_of_a_pixel_misses_no_crossed_cell)
{
    /* A shallow diagonal through a 40 x 40 window: every cell whose interior the segment crosses
     * over a stretch longer than 0.1 px must be stamped; check against fine sampling. */
    span_def *d = malloc(1600 * sizeof *d);
    for (int c = 0; c < 1600; c++)
        d[c] = (span_def){c % 40, c / 40, 0.0};
    nm_span_table t;
    table_from_defs(&t, 40, 40, d, 1600);
    uint8_t *dead = calloc(1600, 1);
    nm_grid_wall w = {0.05, 1.13, 0.0, 9.93, 7.01, 0.0, 1, 0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_stamp_walls(&t, &w, 1, dead, NULL, &err), NM_OK);
    /* cells containing the midpoint of each 0.1 px window along the edge */
    int runs[1600] = {0};
    const int fine = 100000;
    for (int k = 0; k <= fine; k++) {
        double tk = (double)k / fine;
        double x = w.x0 + tk * (w.x1 - w.x0), y = w.y0 + tk * (w.y1 - w.y0);
        runs[(int)(y / 0.25) * 40 + (int)(x / 0.25)]++;
    }
    double len = hypot(w.x1 - w.x0, w.y1 - w.y0);
    for (int c = 0; c < 1600; c++) {
        double part = runs[c] * len / fine; /* length of the edge inside the cell */
        if (part > 0.1)
            cr_assert(dead[t.cs[nm_span_cell_index(&t, (uint32_t)c)]], "cell %d crossed over %.3f px",
                      c, part);
        if (!runs[c])
            cr_assert_not(dead[t.cs[nm_span_cell_index(&t, (uint32_t)c)]], "cell %d not crossed", c);
    }
    free(d);
    free(dead);
    nm_span_table_free(&t);
}

/* ---- SCC ------------------------------------------------------------------------------------- */

static void csr(uint32_t n, const uint32_t (*e)[2], size_t m, uint32_t *off, uint32_t *adj)
{
    memset(off, 0, (n + 1) * sizeof *off);
    for (size_t k = 0; k < m; k++)
        off[e[k][0] + 1]++;
    for (uint32_t v = 0; v < n; v++)
        off[v + 1] += off[v];
    uint32_t *at = malloc((n + 1) * sizeof *at);
    memcpy(at, off, (n + 1) * sizeof *at);
    for (size_t k = 0; k < m; k++)
        adj[at[e[k][0]]++] = e[k][1];
    free(at);
}

Test(scc, components_and_condensation_of_a_small_graph)
{
    const uint32_t e[][2] = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 3}, {6, 5}, {1, 3}, {4, 4}};
    uint32_t off[8], adj[9];
    csr(7, e, 9, off, adj);
    nm_graph g = {7, off, adj};
    nm_scc s;
    nm_error err = {0};
    cr_assert_eq(nm_grid_scc(&g, &s, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(s.ncomp, 4);
    const uint32_t want[7] = {1, 1, 1, 2, 2, 3, 4};
    for (int v = 0; v < 7; v++)
        cr_assert_eq(s.comp[v], want[v], "node %d", v);
    /* DAG: 1 -> 2 (once, although two edges cross), 4 -> 3. */
    cr_assert_eq(s.dag_off[0], 0);
    cr_assert_eq(s.dag_off[1], 1);
    cr_assert_eq(s.dag_adj[0], 2);
    cr_assert_eq(s.dag_off[2], 1);
    cr_assert_eq(s.dag_off[3], 1);
    cr_assert_eq(s.dag_off[4], 2);
    cr_assert_eq(s.dag_adj[1], 3);
    nm_scc_free(&s);
}

Test(scc, deep_chain_of_a_million_nodes_needs_no_recursion)
{
    const uint32_t n = 1000000;
    uint32_t *off = malloc((n + 1) * sizeof *off), *adj = malloc(n * sizeof *adj);
    for (uint32_t v = 0; v <= n; v++)
        off[v] = v;
    for (uint32_t v = 0; v < n; v++)
        adj[v] = (v + 1) % n; /* a ring: one component */
    nm_graph g = {n, off, adj};
    nm_scc s;
    nm_error err = {0};
    cr_assert_eq(nm_grid_scc(&g, &s, &err), NM_OK);
    cr_assert_eq(s.ncomp, 1);
    cr_assert_eq(s.dag_off[1], 0);
    nm_scc_free(&s);
    off[n] = n - 1; /* drop the closing edge: a path of n singleton components */
    cr_assert_eq(nm_grid_scc(&g, &s, &err), NM_OK);
    cr_assert_eq(s.ncomp, n);
    cr_assert_eq(s.comp[0], 1);
    cr_assert_eq(s.comp[n - 1], n);
    cr_assert_eq(s.dag_off[n], n - 1);
    nm_scc_free(&s);
    free(off);
    free(adj);
}

Test(scc, random_graphs_match_brute_force_reachability)
{
    enum { N = 40 };
    uint64_t rng = 11;
    for (int trial = 0; trial < 30; trial++) {
        static uint32_t e[400][2];
        size_t m = (size_t)(rng_next(&rng) % 90);
        for (size_t k = 0; k < m; k++) {
            e[k][0] = (uint32_t)(rng_next(&rng) % N);
            e[k][1] = (uint32_t)(rng_next(&rng) % N);
        }
        uint32_t off[N + 1], adj[400];
        csr(N, (const uint32_t(*)[2])e, m, off, adj);
        /* transitive closure */
        static bool r[N][N];
        memset(r, 0, sizeof r);
        for (int v = 0; v < N; v++)
            r[v][v] = true;
        for (size_t k = 0; k < m; k++)
            r[e[k][0]][e[k][1]] = true;
        for (int k = 0; k < N; k++)
            for (int a = 0; a < N; a++)
                for (int b = 0; b < N; b++)
                    if (r[a][k] && r[k][b])
                        r[a][b] = true;
        nm_graph g = {N, off, adj};
        nm_scc s;
        nm_error err = {0};
        cr_assert_eq(nm_grid_scc(&g, &s, &err), NM_OK);
        for (int a = 0; a < N; a++)
            for (int b = 0; b < N; b++)
                cr_assert_eq(s.comp[a] == s.comp[b], r[a][b] && r[b][a], "trial %d (%d,%d)", trial,
                             a, b);
        /* components numbered by smallest node */
        uint32_t seen = 0;
        for (int v = 0; v < N; v++)
            if (s.comp[v] > seen)
                cr_assert_eq(s.comp[v], ++seen);
        /* DAG edges: exactly the component pairs joined by some edge, sorted, unique */
        static bool want[N + 1][N + 1];
        memset(want, 0, sizeof want);
        for (size_t k = 0; k < m; k++)
            if (s.comp[e[k][0]] != s.comp[e[k][1]])
                want[s.comp[e[k][0]]][s.comp[e[k][1]]] = true;
        size_t total = 0;
        for (uint32_t c = 1; c <= s.ncomp; c++) {
            uint32_t prev = 0;
            for (uint32_t q = s.dag_off[c - 1]; q < s.dag_off[c]; q++) {
                cr_assert_gt(s.dag_adj[q], prev, "sorted and unique");
                prev = s.dag_adj[q];
                cr_assert(want[c][s.dag_adj[q]]);
                total++;
            }
        }
        size_t expect = 0;
        for (int a = 0; a <= N; a++)
            for (int b = 0; b <= N; b++)
                expect += want[a][b];
        cr_assert_eq(total, expect);
        nm_scc_free(&s);
    }
}

Test(scc, edge_to_a_missing_node_is_rejected)
{
    uint32_t off[3] = {0, 1, 1}, adj[1] = {5};
    nm_graph g = {2, off, adj};
    nm_scc s;
    nm_error err = {0};
    cr_assert_eq(nm_grid_scc(&g, &s, &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "target 5") != NULL, "%s", err.msg);
}

Test(bake_walls, collects_boundary_edges_of_walkable_triangles_near_the_window)
{
    /* Window 4 x 4 cells at (10, 10): 1 px square, grown by 4 px -> [6, 15] px. */
    nm_grid_window win = {10.0, 10.0, 4, 4};
    float v[] = {10, 10, 0, 11, 10, 2, 10, 11, 4,   /* tri 0: near */
                 20, 20, 0, 21, 20, 0, 20, 21, 0,   /* tri 1: far away */
                 14.5f, 10, 1, 16, 10, 1, 16, 12, 1}; /* tri 2: edge 2 starts inside the pad */
    uint32_t tri[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t walk[3] = {1, 1, 1}, bnd[3] = {0x5, 0x7, 0x6};
    nm_grid_mesh m = {v, 9, tri, 3, walk};
    nm_grid_wall *w = NULL;
    size_t n = 0;
    nm_error err = {0};
    cr_assert_eq(nm_grid_bake_walls(&win, &m, bnd, &w, &n, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(n, 3, "tri 0 edges 0 and 2, tri 2 edge 2 (edge 1 lies beyond x = 15)");
    cr_assert_eq(w[0].tri, 0);
    cr_assert_eq(w[0].edge, 0);
    cr_assert_eq(w[0].h0, 0.0);
    cr_assert_eq(w[0].h1, 2.0);
    cr_assert_eq(w[1].tri, 0);
    cr_assert_eq(w[1].edge, 2);
    cr_assert_eq(w[1].x0, 10.0);
    cr_assert_eq(w[1].y0, 11.0);
    cr_assert_eq(w[2].tri, 2);
    cr_assert_eq(w[2].edge, 2);
    nm_free(w);
    walk[0] = 0; /* unwalkable triangles give no edges */
    cr_assert_eq(nm_grid_bake_walls(&win, &m, bnd, &w, &n, &err), NM_OK);
    cr_assert_eq(n, 1);
    nm_free(w);
}
