/* test_grid_reach.c — the scenes through the grid operators (navmesh/grid): rasterise the
 * walkable triangles, bridge seams, merge spans, then search the span graph with RiseOk (no
 * fall gate, no walls, no core) and check the judgements each scene was built for: which
 * stairs go up, bump and dip versus step, facade versus ramp, one-way ledges. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid/grid.h"
#include "sg_testlib.h"

typedef struct {
    nm_span_table t;
    double x0, y0; /* window origin, px */
    double sx, tx, sy, ty;
} grid;

/* Span table of the zone-0 walkable triangles, optionally limited to plan x in [xmin, xmax]. */
static void build(const nm_sg_world *w, grid *g, double xmin, double xmax)
{
    const nm_sg_zone *z = &w->zones[0];
    g->sx = z->tf[0], g->tx = z->tf[1], g->sy = z->tf[2], g->ty = z->tf[3];
    float *verts = malloc(w->nv * 3 * sizeof *verts);
    double u0 = INFINITY, v0 = INFINITY, u1 = -INFINITY, v1 = -INFINITY;
    for (size_t i = 0; i < w->nv; i++) {
        double u = g->sx * w->v[i].x + g->tx, v = g->ty + g->sy * w->v[i].y;
        verts[3 * i] = (float)u, verts[3 * i + 1] = (float)v, verts[3 * i + 2] = (float)w->v[i].h;
    }
    uint32_t *tris = malloc(w->nt * 3 * sizeof *tris);
    uint8_t *walk = malloc(w->nt ? w->nt : 1);
    size_t nt = 0;
    for (size_t i = 0; i < w->nt; i++) {
        int role = w->g[w->t[i].group].role;
        if (role != NM_SG_WALK && role != NM_SG_WATER) continue;
        bool inside = true;
        for (int k = 0; k < 3; k++) {
            const nm_sg_vec *p = &w->v[w->t[i].v[k]];
            if (p->x < xmin - 1e-9 || p->x > xmax + 1e-9) inside = false;
        }
        if (!inside) continue;
        for (int k = 0; k < 3; k++) {
            uint32_t v = w->t[i].v[k];
            tris[3 * nt + k] = v;
            u0 = fmin(u0, verts[3 * v]), u1 = fmax(u1, verts[3 * v]);
            v0 = fmin(v0, verts[3 * v + 1]), v1 = fmax(v1, verts[3 * v + 1]);
        }
        walk[nt++] = role == NM_SG_WALK;
    }
    nm_grid_window win = {floor(u0) - 1, floor(v0) - 1, 0, 0};
    win.nx = (int32_t)ceil((u1 - win.x0) / NM_kCS) + 8;
    win.ny = (int32_t)ceil((v1 - win.y0) / NM_kCS) + 8;
    g->x0 = win.x0, g->y0 = win.y0;
    nm_grid_mesh mesh = {verts, w->nv, tris, nt, walk};
    nm_grid_samples s = {0};
    nm_error err = {0};
    cr_assert_eq(nm_grid_rasterize(&win, &mesh, &s, &err), NM_OK, "%s", err.msg);
    nm_span_table pre = {0};
    cr_assert_eq(nm_grid_build_spans(&win, &s, &pre, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_grid_append_seam_bridge(&pre, &s, &err), NM_OK, "%s", err.msg);
    nm_span_table_free(&pre);
    cr_assert_eq(nm_grid_build_spans(&win, &s, &g->t, &err), NM_OK, "%s", err.msg);
    nm_grid_samples_free(&s);
    free(verts);
    free(tris);
    free(walk);
}

/* The span of the cell over plan (x, y) nearest to height h (within 0.3 m), or -1. */
static int64_t span_at(const grid *g, double x, double y, double h)
{
    double u = g->sx * x + g->tx, v = g->ty + g->sy * y;
    int64_t i = (int64_t)floor((u - g->x0) / NM_kCS), j = (int64_t)floor((v - g->y0) / NM_kCS);
    if (i < 0 || j < 0 || i >= g->t.win.nx || j >= g->t.win.ny) return -1;
    uint32_t f, n = nm_span_cell_spans(&g->t, (uint32_t)(j * g->t.win.nx + i), &f);
    int64_t best = -1;
    double bd = 0.3;
    for (uint32_t k = 0; k < n; k++)
        if (fabs(g->t.sp_h[f + k] - h) <= bd) bd = fabs(g->t.sp_h[f + k] - h), best = f + k;
    return best;
}

/* Breadth-first search over spans, 8 neighbours, RiseOk with no fall gate. */
static bool reach(const grid *g, double xa, double ya, double ha, double xb, double yb, double hb)
{
    int64_t a = span_at(g, xa, ya, ha), b = span_at(g, xb, yb, hb);
    cr_assert_geq(a, 0, "no span at start (%.1f, %.1f, %.1f)", xa, ya, ha);
    cr_assert_geq(b, 0, "no span at goal (%.1f, %.1f, %.1f)", xb, yb, hb);
    const nm_span_table *t = &g->t;
    uint8_t *seen = calloc(t->nspans, 1);
    uint32_t *q = malloc(t->nspans * sizeof *q);
    size_t qh = 0, qt = 0;
    q[qt++] = (uint32_t)a;
    seen[a] = 1;
    bool found = false;
    while (qh < qt && !found) {
        uint32_t s = q[qh++];
        uint32_t c = t->sp_cell[s];
        int32_t i = (int32_t)(c % (uint32_t)t->win.nx), j = (int32_t)(c / (uint32_t)t->win.nx);
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (!dx && !dy) continue;
                int32_t ni = i + dx, nj = j + dy;
                if (ni < 0 || nj < 0 || ni >= t->win.nx || nj >= t->win.ny) continue;
                uint32_t f, n = nm_span_cell_spans(t, (uint32_t)(nj * t->win.nx + ni), &f);
                for (uint32_t k = 0; k < n; k++) {
                    if (seen[f + k]) continue;
                    if (!nm_grid_rise_ok(t, NULL, i, j, dx, dy, t->sp_h[s], t->sp_h[f + k])) continue;
                    seen[f + k] = 1;
                    q[qt++] = f + k;
                    if ((int64_t)(f + k) == b) found = true;
                }
            }
    }
    free(seen);
    free(q);
    return found;
}

static nm_sg_world *scene(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "resources/scenes/%s/scene.json", name);
    nm_sg_world *w = tl_load(rel);
    cr_assert_not_null(w);
    return w;
}

Test(grid_reach, half_metre_stairs_go_up_one_metre_stairs_only_down)
{
    nm_sg_world *w = scene("stairs");
    grid g;
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 5, 9, 0, 23, 9, 3), "0.5 m flight must go up");
    cr_assert_not(reach(&g, 5, 29, 0, 23, 29, 4), "1 m flight must not go up");
    cr_assert(reach(&g, 23, 29, 4, 5, 29, 0), "1 m flight goes down");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

Test(grid_reach, bump_and_dip_pass_the_step_does_not)
{
    nm_sg_world *w = scene("bump_dip");
    grid g;
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 10, 5, 0, 30, 5, 0), "narrow bump");
    cr_assert(reach(&g, 10, 15, 0, 30, 15, 0), "shallow dip");
    cr_assert_not(reach(&g, 10, 25, 0, 30, 25, 1), "a continuing step is not a bump");
    cr_assert(reach(&g, 30, 25, 1, 10, 25, 0), "down the step");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

Test(grid_reach, facade_is_not_climbable_the_ramp_is)
{
    nm_sg_world *w = scene("facade");
    grid g;
    build(w, &g, -1e9, 34.9); /* without the ramp */
    cr_assert_not(reach(&g, 10, 20, 0, 27, 20, 8), "up the facade");
    nm_span_table_free(&g.t);
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 10, 20, 0, 27, 20, 8), "round by the ramp");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

Test(grid_reach, ledges_are_one_way)
{
    nm_sg_world *w = scene("regions");
    grid g;
    build(w, &g, -1e9, 55);
    cr_assert_not(reach(&g, 10, 15, 0, 40, 15, 5), "up a 5 m ledge");
    cr_assert(reach(&g, 40, 15, 5, 10, 15, 0), "down the ledge");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

Test(grid_reach, bridge_deck_and_path_are_two_layers)
{
    nm_sg_world *w = scene("bridge");
    grid g;
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 10, 30, 0, 50, 30, 0), "the path under the deck");
    cr_assert(reach(&g, 30, 2, 0, 30, 30, 5), "up a ramp onto the deck");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

/* Cell (i, j) of the grid's window over plan (x, y). */
static void cell_of(const grid *g, double x, double y, int32_t *i, int32_t *j)
{
    *i = (int32_t)floor((g->sx * x + g->tx - g->x0) / NM_kCS);
    *j = (int32_t)floor((g->ty + g->sy * y - g->y0) / NM_kCS);
}

Test(grid_reach, cracks_close_up_to_three_cells_and_holes_fill_up_to_32)
{
    nm_sg_world *w = scene("cracks_holes");
    grid g;
    build(w, &g, -1e9, 1e9);
    const nm_span_table *t = &g.t;
    int32_t nx = t->win.nx, ny = t->win.ny;
    size_t n = (size_t)nx * (size_t)ny;
    uint8_t *layer = calloc(n, 1), *core = calloc(n, 1);
    for (uint32_t s = 0; s < t->nspans; s++) {
        layer[t->sp_cell[s]] = 1;
        if (t->sp_ins[s]) core[t->sp_cell[s]] = 1;
    }
    nm_error err = {0};
    cr_assert_eq(nm_grid_fill_holes(nx, ny, layer, NULL, NULL, &err), NM_OK, "%s", err.msg);
    struct {
        double x, y;
        bool filled;
    } holes[] = {{8, 30, true}, {20, 30, true}, {32, 30, false}};
    for (int k = 0; k < 3; k++) {
        int32_t i, j;
        cell_of(&g, holes[k].x, holes[k].y, &i, &j);
        cr_assert_eq(layer[(size_t)j * nx + i] != 0, holes[k].filled, "hole %d", k);
    }
    cr_assert_eq(nm_grid_close_cracks(nx, ny, core, layer, NULL, NULL, &err), NM_OK, "%s", err.msg);
    double ys[] = {3, 8, 13, 18};
    for (int k = 0; k < 4; k++) {
        int32_t i0, j;
        cell_of(&g, 22, ys[k], &i0, &j);
        int holes_in_core = 0;
        for (int32_t i = i0; i < i0 + 12; i++) holes_in_core += !core[(size_t)j * nx + i];
        if (k < 3) cr_assert_eq(holes_in_core, 0, "crack of %d cells not closed", k + 1);
        else cr_assert_eq(holes_in_core, 4, "crack of 4 cells: %d cells open", holes_in_core);
    }
    free(layer);
    free(core);
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

Test(grid_reach, building_floors_are_reached_by_the_stairs_water_is_not_walked)
{
    nm_sg_world *w = scene("building");
    grid g;
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 10, 10, 0, 40, 36, 8), "ground to the top floor");
    cr_assert_not(reach(&g, 10, 10, 0, 30, 30, 12), "the roof has no stairs");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
    w = scene("water_bridge");
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 10, 10, 0, 55, 10, 0), "across the bridge");
    cr_assert_lt(span_at(&g, 30, 10, -1), 0, "water (area 12) gives no spans");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}

Test(grid_reach, demo_town_places_connect_as_described, .timeout = 120)
{
    nm_sg_world *w = tl_load("resources/demo/scene.json");
    cr_assert_not_null(w);
    grid g;
    build(w, &g, -1e9, 1e9);
    cr_assert(reach(&g, 10, 10, 0, 60, 56, 8), "ground to the hall's top floor");
    cr_assert(reach(&g, 10, 10, 0, 130, 50, 3), "ground to the plaza by its stairs");
    cr_assert(reach(&g, 10, 10, 0, 300, 20, 0), "across the river by a bridge");
    cr_assert(reach(&g, 10, 10, 0, 150, 390, 8), "the cliff by its ramp");
    cr_assert_not(reach(&g, 10, 10, 0, 40, 460, 5), "the plateau has only its ledge");
    cr_assert(reach(&g, 40, 460, 5, 10, 10, 0), "down the plateau's ledge");
    cr_assert_not(reach(&g, 10, 10, 0, 125, 475, 0), "the walled court");
    cr_assert_not(reach(&g, 10, 10, 0, 310, 110, 0.5), "the island without its link");
    nm_span_table_free(&g.t);
    nm_sg_world_free(w);
}
