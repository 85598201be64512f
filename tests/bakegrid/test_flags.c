/* test_flags.c — the grid bake on hand-made meshes (1 m = 1 px, a cell is 0.25 px): the ledge
 * check of spec-notes (take-off and landing cells exist and are usable), a floor with a pillar
 * hole (Core / Walk / Dead near the boundary, clearance and sealed clearance at known
 * distances), a bridge over a path (two regions, FWAL keeps each edge on its own level only),
 * stairs with 0.5 m and 1 m risers (step bits one-way, components), and the BGRD / BNVF round
 * trip (the tiles read back give exactly the records and columns written). */
#include "gridutil.h"

#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

/* The record of region-level height h (within tol) in cell (gx, gy), or NULL. */
static const nm_grid_rec *rec_near(const nm_bake_grid_zone *z, int32_t gx, int32_t gy, double h,
                                   double tol)
{
    uint32_t n;
    const nm_grid_rec *r = recs_at(z, gx, gy, &n, NULL);
    for (uint32_t k = 0; k < n; k++)
        if (!(r[k].flags & NM_GRID_FILL) && fabs(r[k].h - h) <= tol) return &r[k];
    return NULL;
}

static bool in_lay(const nm_grid_rec *r) /* 建窗: lay = Walk or not Core */
{
    return (r->flags & NM_GRID_WALK) || !(r->flags & NM_GRID_CORE);
}

/* ---- ledge ------------------------------------------------------------------------------------
 * Lower floor [0,30]x[0,20] at 0 m, slab [10,20]x[0,10] at 4 m over it (overhang). */
Test(bakegrid, ledge_takeoff_and_landing)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, 0, 0, 30, 20, 0.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "slab");
    mesh_rect(&b, 10, 0, 20, 10, 4.0, 2.0, 0, 0, 0, 0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 1, &z);
    cr_assert_geq(z.global_regions, 2, "floor and slab are separate regions");
    int32_t edge = cell_of(10.0); /* first row past the slab's south edge v = 10 */
    for (int32_t gx = cell_of(11.0); gx < cell_of(19.0); gx++) {
        /* take-off: the slab's last inside row, Walk and Core */
        const nm_grid_rec *t = rec_near(&z, gx, edge - 1, 4.0, 0.01);
        cr_assert(t, "take-off cell %d missing", gx);
        cr_assert((t->flags & (NM_GRID_WALK | NM_GRID_CORE)) == (NM_GRID_WALK | NM_GRID_CORE),
                  "take-off %d flags 0x%x", gx, t->flags);
        /* the edge row: the slab's conservative span is in lay (Walk or not Core) */
        const nm_grid_rec *e = rec_near(&z, gx, edge, 4.0, 0.01);
        cr_assert(e && in_lay(e), "edge cell %d", gx);
        /* landing next to it: the floor, Walk and Core */
        for (int d = 0; d <= 1; d++) {
            const nm_grid_rec *l = rec_near(&z, gx, edge + d, 0.0, 0.01);
            cr_assert(l, "landing cell %d,%d missing", gx, edge + d);
            cr_assert(l->flags & NM_GRID_WALK, "landing %d,%d flags 0x%x", gx, edge + d, l->flags);
            cr_assert(l->flags & NM_GRID_CORE);
            cr_assert_neq(l->rid, t->rid, "landing and take-off in one region");
        }
        /* under the overhang the floor is walkable too */
        const nm_grid_rec *u = rec_near(&z, gx, cell_of(5.0), 0.0, 0.01);
        cr_assert(u && (u->flags & NM_GRID_WALK) && !(u->flags & NM_GRID_DEAD));
    }
    /* the drop itself: RiseOk passes from the take-off row to the landing (no gate) and the edge
     * stamps Dead on both levels within kMcHBand */
    const nm_grid_rec *e = rec_near(&z, cell_of(15.0), edge, 4.0, 0.01);
    const nm_grid_rec *l = rec_near(&z, cell_of(15.0), edge, 0.0, 0.01);
    cr_assert(e->flags & NM_GRID_DEAD);
    cr_assert(l->flags & NM_GRID_DEAD, "the landing row under the edge is Dead (within 8 m)");
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- floor with a pillar hole -----------------------------------------------------------------
 * Floor [0,20]^2 at 0 m in 1 px squares without [8,12]^2: hole cells 32..47 in x and y. */
Test(bakegrid, pillar_core_walk_dead_clearance)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, 0, 0, 20, 20, 0.0, 1.0, 8, 8, 12, 12);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 2, &z);
    cr_assert_eq(z.global_regions, 1);
    int32_t row = cell_of(10.1); /* middle row of the pillar */
    uint32_t n;
    /* inside the pillar: no record (256 cells: too big for FillHoles) */
    for (int32_t gx = cell_of(8.3); gx < cell_of(12.0); gx++) {
        recs_at(&z, gx, row, &n, NULL);
        cr_assert_eq(n, 0, "cell %d inside the pillar has %u records", gx, n);
    }
    /* west face: cell 32 touches the floor only on its west edge: span, not Core, Dead (the wall
     * at u = 8 samples into cell 32) */
    const nm_grid_rec *w = rec_near(&z, cell_of(8.0), row, 0.0, 1e-6);
    cr_assert(w && !(w->flags & NM_GRID_CORE) && (w->flags & NM_GRID_DEAD), "west face 0x%x", w ? w->flags : 0);
    /* east face: cell 48 is inside the floor (Core, Walk) and stamped Dead */
    const nm_grid_rec *e = rec_near(&z, cell_of(12.0), row, 0.0, 1e-6);
    cr_assert(e && (e->flags & (NM_GRID_CORE | NM_GRID_WALK | NM_GRID_DEAD)) == (NM_GRID_CORE | NM_GRID_WALK | NM_GRID_DEAD),
              "east face 0x%x", e ? e->flags : 0);
    /* clearance west of the pillar: the nearest obstacle (non-core) is cell 32, k+1 cells away */
    for (int k = 0; k < 8; k++) {
        const nm_grid_rec *r = rec_near(&z, cell_of(8.0) - 1 - k, row, 0.0, 1e-6);
        cr_assert(r && !(r->flags & NM_GRID_DEAD));
        cr_assert_eq(r->clr, (uint16_t)((k + 1) * (k + 1)), "k %d clr %u", k, r->clr);
        cr_assert(r->flags & NM_GRID_WALK);
    }
    /* east: the nearest non-core cell is 47 (no span), so cell 48 + k has clr (k+1)^2; the kept
     * wall at u = 12 seals cell 48, so the sealed clearance is k^2 and clr2d = 2k + 1 */
    for (int k = 1; k < 6; k++) {
        uint32_t first;
        recs_at(&z, cell_of(12.0) + k, row, &n, &first);
        cr_assert_eq(n, 1);
        cr_assert_eq(z.recs[first].clr, (uint16_t)((k + 1) * (k + 1)), "k %d clr %u", k, z.recs[first].clr);
        cr_assert_eq(z.clr2d[first], (uint16_t)(2 * k + 1), "k %d clr2d %u", k, z.clr2d[first]);
    }
    /* far from everything the clearance is capped (> 48^2) only beyond 12 px: here every cell is
     * within 12 px of the outline, so clr is exact and equals the nearest non-core distance */
    const nm_grid_rec *c = rec_near(&z, cell_of(4.0), cell_of(4.0), 0.0, 1e-6);
    cr_assert(c && (c->flags & NM_GRID_WALK));
    int32_t ci = cell_of(4.0);
    int d = ci - (cell_of(0.0) - 1); /* west rim: cell -1 has no span */
    cr_assert_eq(c->clr, (uint16_t)(d * d), "centre-west clr %u want %d", c->clr, d * d);
    /* FWAL: every boundary edge of the floor is kept on the floor's region only */
    cr_assert_gt(z.wall_count, 0);
    for (uint32_t k = 0; k < z.wall_count; k++) {
        cr_assert_eq(z.wall_row[k + 1] - z.wall_row[k], 1);
        cr_assert_eq(z.wall_rids[z.wall_row[k]], 1);
    }
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- bridge over a path ---------------------------------------------------------------------
 * Path [0,40]x[8,12] at 0 m; deck [18,22]x[0,20] at 10 m (more than kMcHBand above). */
Test(bakegrid, bridge_two_regions_fwal)
{
    sb b = {0};
    mesh_group(&b, "path");
    mesh_rect(&b, 0, 8, 40, 12, 0.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "deck");
    mesh_rect(&b, 18, 0, 22, 20, 10.0, 2.0, 0, 0, 0, 0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 1, &z);
    cr_assert_eq(z.global_regions, 2);
    /* under the deck both levels in one cell, each Walk, neither Dead */
    const nm_grid_rec *lo = rec_near(&z, cell_of(20.0), cell_of(10.0), 0.0, 1e-6);
    const nm_grid_rec *hi = rec_near(&z, cell_of(20.0), cell_of(10.0), 10.0, 1e-6);
    cr_assert(lo && hi && lo->rid != hi->rid);
    cr_assert((lo->flags & NM_GRID_WALK) && (hi->flags & NM_GRID_WALK));
    /* the deck's side edge passes over the path 10 m up: the path is not Dead there */
    const nm_grid_rec *under = rec_near(&z, cell_of(22.0), cell_of(10.0), 0.0, 1e-6);
    cr_assert(under && !(under->flags & NM_GRID_DEAD), "path under the deck edge 0x%x", under ? under->flags : 0);
    /* FWAL: deck edges kept on the deck region only, path edges on the path region only */
    nm_error err = {0};
    nm_zone_clean *zc = NULL;
    cr_assert_eq(nm_zone_clean_build_at(&p, 0, 1, &zc, &err), NM_OK, "%s", err.msg);
    int deck_walls = 0, path_walls = 0;
    for (uint32_t k = 0; k < z.wall_count; k++) {
        uint32_t t = (uint32_t)(z.wall_keys[k] / 3);
        double h = nm_zone_tri_height(zc, t);
        uint32_t want = h > 5 ? hi->rid : lo->rid;
        cr_assert_eq(z.wall_row[k + 1] - z.wall_row[k], 1, "wall %u kept on %u regions", k, z.wall_row[k + 1] - z.wall_row[k]);
        cr_assert_eq(z.wall_rids[z.wall_row[k]], want, "wall of triangle %u at %.1f m", t, h);
        if (h > 5) deck_walls++; else path_walls++;
    }
    cr_assert_gt(deck_walls, 0);
    cr_assert_gt(path_walls, 0);
    nm_zone_clean_free(zc);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- deck in the path's own region -------------------------------------------------------------
 * Path [0,40]x[8,12] at 0 m, a strip [0,4]x[12,30] and ground [0,40]x[30,40] at 0 m; deck
 * [18,22]x[4,16] at 5 m reached by a ramp [18,22]x[16,30] from the ground: one region. The
 * deck's side edges over the path are ledges over the region's own lower level: not kept on it
 * (FWAL), so neither the sealed clearance nor the blocker segments cut the path under the deck;
 * the side edges where nothing lies below stay, and so do the path's own edges except under the
 * deck, where the region's upper level passes over them (they would cut the deck). */
Test(bakegrid, deck_sides_over_its_own_path_are_not_walls)
{
    sb b = {0};
    mesh_group(&b, "ground");
    mesh_rect(&b, 0, 8, 40, 12, 0.0, 2.0, 0, 0, 0, 0);
    mesh_rect(&b, 0, 12, 4, 30, 0.0, 2.0, 0, 0, 0, 0);
    mesh_rect(&b, 0, 30, 40, 40, 0.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "deck");
    mesh_rect(&b, 18, 4, 22, 16, 5.0, 4.0, 0, 0, 0, 0);
    mesh_quad4(&b, 18, 16, 22, 30, 5.0, 5.0, 0.0, 0.0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 1, &z);
    const nm_grid_rec *lo = rec_near(&z, cell_of(20.0), cell_of(10.0), 0.0, 1e-6);
    const nm_grid_rec *hi = rec_near(&z, cell_of(20.0), cell_of(10.0), 5.0, 1e-6);
    cr_assert(lo && hi && lo->rid == hi->rid, "path and deck in one region");
    nm_error err = {0};
    nm_zone_clean *zc = NULL;
    cr_assert_eq(nm_zone_clean_build_at(&p, 0, 1, &zc, &err), NM_OK, "%s", err.msg);
    int over_path = 0, over_nothing = 0, path_edges = 0;
    for (uint32_t k = 0; k < z.wall_count; k++) {
        uint32_t t = (uint32_t)(z.wall_keys[k] / 3);
        int e = (int)(z.wall_keys[k] % 3);
        const nm_vertex *a = nm_zone_vertex(zc, t, e), *c = nm_zone_vertex(zc, t, (e + 1) % 3);
        bool kept = z.wall_row[k + 1] > z.wall_row[k];
        bool side = fabs(a->u - c->u) < 1e-6 && (fabs(a->u - 18) < 1e-6 || fabs(a->u - 22) < 1e-6);
        double vm = (a->v + c->v) / 2;
        if (side && a->h > 4.9 && c->h > 4.9) {
            if (vm > 8 && vm < 12) {
                cr_expect(!kept, "deck side (%.0f, %.0f..%.0f) over the path is kept", a->u, a->v, c->v);
                over_path++;
            } else if (vm < 8) {
                cr_expect(kept, "deck side (%.0f, %.0f..%.0f) over nothing is dropped", a->u, a->v, c->v);
                over_nothing++;
            }
        } else if (a->h < 0.1 && c->h < 0.1 && a->v > 7.9 && c->v > 7.9 && a->v < 12.1 && c->v < 12.1 &&
                   fabs(a->v - c->v) < 1e-6) {
            /* the path's own sides: walls, except under the deck (the region's upper level) */
            double um = (a->u + c->u) / 2;
            if (um < 17.9 || um > 22.1)
                cr_expect(kept, "path edge (%.1f, %.1f)-(%.1f, %.1f) dropped", a->u, a->v, c->u, c->v);
            else if (um > 18.1 && um < 21.9)
                cr_expect(!kept, "path edge under the deck (%.1f, %.1f)-(%.1f, %.1f) kept", a->u, a->v, c->u, c->v);
            path_edges++;
        }
    }
    cr_assert_gt(over_path, 0);
    cr_assert_gt(over_nothing, 0);
    cr_assert_gt(path_edges, 0);
    /* the path under the deck side keeps its clearance: no sealed wall there */
    const nm_grid_rec *u = rec_near(&z, cell_of(18.0), cell_of(10.0), 0.0, 1e-6);
    cr_assert(u != NULL);
    nm_zone_clean_free(zc);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- the end of a lower level under the region's own deck ---------------------------------------
 * Ground [0,40]x[0,20] at 0 m (its edge v = 20 under the deck is an edge of its own, u 16..24), a
 * strip [0,4]x[20,46] and ground [0,40]x[46,50]; a deck [16,24]x[10,30] at 5 m, over the ground
 * up to v = 20 and over nothing beyond, reached by a ramp [16,24]x[30,46] from the north ground:
 * one region. The ground's end under the deck is no wall of the region (FWAL), so the deck above it
 * keeps its clearance (kept, it sealed the deck across its whole width: the demo town's high
 * bridge at its ramps and river banks, issue 12); the ground's end in the open stays a wall. */
Test(bakegrid, ground_end_under_its_own_deck_is_no_wall)
{
    sb b = {0};
    mesh_group(&b, "ground");
    mesh_rect(&b, 0, 0, 16, 20, 0.0, 2.0, 0, 0, 0, 0);
    mesh_rect(&b, 16, 0, 24, 20, 0.0, 2.0, 0, 0, 0, 0);
    mesh_rect(&b, 24, 0, 40, 20, 0.0, 2.0, 0, 0, 0, 0);
    mesh_rect(&b, 0, 20, 4, 46, 0.0, 2.0, 0, 0, 0, 0);
    mesh_rect(&b, 0, 46, 40, 50, 0.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "deck");
    mesh_rect(&b, 16, 10, 24, 30, 5.0, 2.0, 0, 0, 0, 0);
    mesh_quad4(&b, 16, 30, 24, 46, 5.0, 5.0, 0.0, 0.0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 1, &z);
    const nm_grid_rec *lo = rec_near(&z, cell_of(20.0), cell_of(15.0), 0.0, 1e-6);
    const nm_grid_rec *hi = rec_near(&z, cell_of(20.0), cell_of(15.0), 5.0, 1e-6);
    cr_assert(lo && hi && lo->rid == hi->rid, "ground and deck in one region");
    nm_error err = {0};
    nm_zone_clean *zc = NULL;
    cr_assert_eq(nm_zone_clean_build_at(&p, 0, 1, &zc, &err), NM_OK, "%s", err.msg);
    int under = 0, open = 0;
    for (uint32_t k = 0; k < z.wall_count; k++) {
        uint32_t t = (uint32_t)(z.wall_keys[k] / 3);
        int e = (int)(z.wall_keys[k] % 3);
        const nm_vertex *a = nm_zone_vertex(zc, t, e), *c = nm_zone_vertex(zc, t, (e + 1) % 3);
        if (a->h > 0.1 || c->h > 0.1 || fabs(a->v - 20) > 1e-6 || fabs(c->v - 20) > 1e-6) continue;
        bool kept = z.wall_row[k + 1] > z.wall_row[k];
        double um = (a->u + c->u) / 2;
        if (um > 16 && um < 24) {
            cr_expect(!kept, "ground end under the deck (%.0f..%.0f, 20) kept", a->u, c->u);
            under++;
        } else if (um > 24) {
            cr_expect(kept, "ground end in the open (%.0f..%.0f, 20) dropped", a->u, c->u);
            open++;
        }
    }
    cr_assert_gt(under, 0);
    cr_assert_gt(open, 0);
    /* the deck over that edge: its sealed clearance (clr - clr2d) is the distance to its sides
     * (4 px = 16 cells), not 0 */
    uint32_t n, first;
    const nm_grid_rec *r = recs_at(&z, cell_of(20.0), cell_of(20.0), &n, &first);
    cr_assert(r);
    int decks = 0;
    for (uint32_t k = 0; k < n; k++)
        if (!(r[k].flags & NM_GRID_FILL) && fabs(r[k].h - 5.0) < 1e-6) {
            cr_expect_geq(r[k].clr - z.clr2d[first + k], 15 * 15, "deck over the ground's end: sealed clr %d",
                          r[k].clr - z.clr2d[first + k]);
            decks++;
        }
    cr_assert_eq(decks, 1);
    nm_zone_clean_free(zc);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- regions joined by an off-mesh link ------------------------------------------------------
 * A bank [0,10]x[0,10] and an island [20,30]x[0,10], both at 0 m, apart: two regions by
 * LabelRegions; a link from (8, 5, 0) to (22, 5, 0.5) lands in both, so the bake joins them (the
 * window lands links on its one region's spans only). */
Test(bakegrid, link_joins_the_regions_of_its_ends)
{
    sb b = {0};
    mesh_group(&b, "bank");
    mesh_rect(&b, 0, 0, 10, 10, 0.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "island");
    mesh_rect(&b, 20, 0, 30, 10, 0.0, 2.0, 0, 0, 0, 0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 1, &z);
    cr_assert_eq(z.global_regions, 2, "apart without a link");
    nm_bake_grid_zone_free(&z);
    /* a one-way link; the bake reads the loaded pack's BOML records */
    nm_offmesh *om = nm_realloc(p.offmesh, (p.offmesh_count + 1) * sizeof *om);
    cr_assert_not_null(om);
    p.offmesh = om;
    nm_offmesh *o = &om[p.offmesh_count++];
    memset(o, 0, sizeof *o);
    o->zone_id = p.zones[0].id;
    o->cost_modifier = 1.0f;
    const float ends[2][3] = {{8.0f, 5.0f, 0.0f}, {22.0f, 5.0f, 0.5f}};
    memcpy(o->pts, ends, sizeof ends);
    bake_grid0(&p, 1, &z);
    cr_assert_eq(z.global_regions, 1, "joined by the link");
    const nm_grid_rec *a = rec_near(&z, cell_of(5.0), cell_of(5.0), 0.0, 1e-6);
    const nm_grid_rec *c = rec_near(&z, cell_of(25.0), cell_of(5.0), 0.0, 1e-6);
    cr_assert(a && c && a->rid == 1 && c->rid == 1);
    cr_assert_eq(z.link_count, 1);
    cr_assert_eq(z.links[0].valid, 3, "both ends land");
    cr_assert_eq(z.links[0].lo.rid, z.links[0].hi.rid);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- stairs -----------------------------------------------------------------------------------
 * Two flights along +u, treads 2 px long, 4 px wide: risers 0.5 m at v [0,4], 1 m at v [20,24]. */
static void stairs(sb *b, double v0, double riser)
{
    for (int s = 0; s < 4; s++) mesh_rect(b, 2.0 * s, v0, 2.0 * s + 2, v0 + 4, riser * s, 1.0, 0, 0, 0, 0);
}

Test(bakegrid, stairs_step_bits_one_way)
{
    sb b = {0};
    mesh_group(&b, "low");
    stairs(&b, 0, 0.5);
    mesh_group(&b, "high");
    stairs(&b, 20, 1.0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 1, &z);
    int32_t row_lo = cell_of(2.0), row_hi = cell_of(22.0);
    /* 0.5 m: no forbidden step along +u anywhere on the flight */
    for (int32_t gx = cell_of(0.0); gx <= cell_of(8.0); gx++) {
        uint32_t n;
        const nm_grid_rec *r = recs_at(&z, gx, row_lo, &n, NULL);
        for (uint32_t k = 0; k < n; k++) cr_assert_eq(r[k].steps & 3, 0, "0.5 m riser cell %d steps 0x%x", gx, r[k].steps);
    }
    /* 1 m: at each riser one span forbids the step up (bit 0) and allows the step down (bit 1) */
    for (int s = 1; s < 4; s++) {
        int32_t gx = cell_of(2.0 * s); /* the riser column holds both treads */
        const nm_grid_rec *low = rec_near(&z, gx, row_hi, 1.0 * (s - 1), 1e-6);
        cr_assert(low, "riser %d: lower tread span missing", s);
        cr_assert_eq(low->steps & 3, 1, "riser %d steps 0x%x", s, low->steps);
    }
    /* components: the 1 m flight splits (one-way), the 0.5 m flight does not */
    uint32_t f0, f1, n;
    recs_at(&z, cell_of(1.0), row_hi, &n, &f0);
    recs_at(&z, cell_of(7.0), row_hi, &n, &f1);
    cr_assert_eq(z.recs[f0].rid, z.recs[f1].rid, "1 m flight is one region (|dh| <= 3)");
    cr_assert_neq(z.scc[f0], z.scc[f1], "1 m flight: bottom and top in one component");
    /* the top reaches the bottom through the component DAG */
    const nm_bnvf_region_src *R = &z.regions[z.recs[f0].rid - 1];
    cr_assert_gt(R->n_edges, 0);
    recs_at(&z, cell_of(1.0), row_lo, &n, &f0);
    recs_at(&z, cell_of(7.0), row_lo, &n, &f1);
    cr_assert_eq(z.scc[f0], z.scc[f1], "0.5 m flight: bottom and top in one component");
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- BGRD / BNVF round trip ------------------------------------------------------------------ */
/* The bake encodes each tile from its own records (the whole zone's record table never exists);
 * the writers' own encoding from the whole zone's records (keep_records) gives the same bytes,
 * BGRD and BNVF, on a zone of several tiles with Ghost and Fill records, at 1 and 4 workers. */
Test(bakegrid, tiles_encoded_in_the_bake_equal_the_whole_zone_writers)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, -20, -10, 180, 150, 0.0, 5.0, 30, 30, 50, 40);
    mesh_group(&b, "deck");
    mesh_rect(&b, 60, 0, 70, 120, 4.0, 1.0, 64, 50, 65, 51); /* 1 px hole: Ghost / Fill records */
    mesh_group(&b, "ramp");
    mesh_quad4(&b, 120, 20, 140, 30, 0.0, 2.0, 2.0, 0.0);
    nm_pack p;
    bake_loaded(b.s, &p);
    for (int wk = 1; wk <= 4; wk += 3) {
        nm_bake_grid_zone z;
        bake_grid0(&p, wk, &z);
        cr_assert_gt(z.tiles.count, 1, "several tiles");
        cr_assert_gt(z.stats.ghosts, 0, "Ghost records");
        cr_assert_gt(z.stats.fills, 0, "Fill records");
        nm_error err = {0};
        nm_buf bg[2] = {{0}}, bf[2] = {{0}};
        for (int whole = 0; whole < 2; whole++) {
            uint32_t keep = z.tiles.count;
            if (whole) z.tiles.count = 0; /* the same zone without its encoded tiles */
            cr_assert_eq(nm_bake_grid_write_bgrd(&z, 1, wk, &bg[whole], &err), NM_OK, "%s", err.msg);
            cr_assert_eq(nm_bake_grid_write_bnvf(&z, 1, 0x1234, 0x5678, wk, &bf[whole], &err), NM_OK, "%s", err.msg);
            z.tiles.count = keep;
        }
        cr_assert_eq(bg[0].size, bg[1].size, "BGRD %zu vs %zu bytes", bg[0].size, bg[1].size);
        cr_assert_eq(memcmp(bg[0].p, bg[1].p, bg[0].size), 0, "BGRD bytes");
        cr_assert_eq(bf[0].size, bf[1].size, "BNVF %zu vs %zu bytes", bf[0].size, bf[1].size);
        cr_assert_eq(memcmp(bf[0].p, bf[1].p, bf[0].size), 0, "BNVF bytes");
        for (int k = 0; k < 2; k++) { nm_buf_free(&bg[k]); nm_buf_free(&bf[k]); }
        nm_bake_grid_zone_free(&z);
    }
    nm_pack_free(&p);
    sb_free(&b);
}

Test(bakegrid, tiles_read_back_exactly)
{
    sb b = {0};
    mesh_group(&b, "floor");
    /* large enough for several tiles (512 cells = 128 px a tile) */
    mesh_rect(&b, -20, -10, 180, 150, 0.0, 4.0, 40, 40, 60, 60);
    mesh_group(&b, "deck");
    mesh_rect(&b, 100, 0, 110, 140, 10.0, 2.0, 0, 0, 0, 0);
    mesh_group(&b, "ramp");
    mesh_quad4(&b, 120, 20, 140, 30, 0.0, 2.0, 2.0, 0.0);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z;
    bake_grid0(&p, 4, &z);
    nm_error err = {0};
    nm_buf bg = {0}, bf = {0};
    cr_assert_eq(nm_bake_grid_write_bgrd(&z, 1, 2, &bg, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bake_grid_write_bnvf(&z, 1, 0x1234, 0x5678, 2, &bf, &err), NM_OK, "%s", err.msg);
    nm_bgrd g;
    cr_assert_eq(nm_bgrd_parse(bg.p, bg.size, &g, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(g.zone_count, 1);
    cr_assert_gt(g.zones[0].tile_count, 1, "the scene spans several tiles");
    nm_bnvf f;
    cr_assert_eq(nm_bnvf_parse(bf.p, bf.size, "fields", 0x1234, 0x5678, &g, &f, &err), NM_OK, "%s", err.msg);
    nm_bgrd_out o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(nm_bgrd_decode_rect(&g, 0, z.gx0, z.gy0, z.gx0 + z.w, z.gy0 + z.h, &f, 2, &o, &err), NM_OK,
                 "%s", err.msg);
    cr_assert_eq(o.n, z.rec_count, "decoded %zu records, baked %zu", o.n, z.rec_count);
    /* each cell's records are contiguous in the output: walk them against the bake */
    size_t i = 0;
    while (i < o.n) {
        int32_t c = o.recs[i].cell;
        uint32_t a = z.cell_start[c], e = z.cell_start[c + 1];
        cr_assert_eq(e - a > 0, true);
        for (uint32_t k = a; k < e; k++, i++) {
            const nm_grid_rec *want = &z.recs[k], *got = &o.recs[i];
            cr_assert_eq(got->cell, c);
            cr_assert_eq(got->rid, want->rid);
            cr_assert_eq(got->clr, want->clr);
            cr_assert_eq(got->flags, want->flags);
            cr_assert_eq(got->steps, want->steps);
            cr_assert(fabsf(got->h - want->h) <= 1.0f / 128.0f + 1e-5f, "h %g vs %g", got->h, want->h);
            const nm_span_fields *F = &o.fields[i];
            cr_assert_eq(F->scc, z.scc[k]);
            cr_assert_eq(F->clr2, (uint16_t)(want->clr - z.clr2d[k]));
            cr_assert_eq(F->medial & 1, z.medial[k] & 1);
        }
    }
    /* the wall table and DAGs read back */
    nm_bnvf_zone_data zd;
    memset(&zd, 0, sizeof zd);
    cr_assert_eq(nm_bnvf_zone_load(&f, 0, &zd, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(zd.wall_count, z.wall_count);
    cr_assert_eq(zd.dag_count, z.global_regions);
    for (uint32_t k = 0; k < z.wall_count; k++) {
        cr_assert_eq(zd.wall_keys[k], z.wall_keys[k]);
        bool kept;
        cr_assert_eq(nm_bnvf_wall_kept(&zd, z.wall_keys[k], z.wall_rids[z.wall_row[k]], &kept, &err), NM_OK);
        cr_assert(kept);
    }
    nm_bnvf_zone_data_free(&zd);
    nm_bgrd_out_free(&o);
    nm_bnvf_free(&f);
    nm_bgrd_free(&g);
    nm_buf_free(&bg);
    nm_buf_free(&bf);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* The bake does not depend on the worker count or the raster band size. */
Test(bakegrid, workers_same_records)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, 0, 0, 150, 120, 0.0, 5.0, 30, 30, 50, 40);
    mesh_group(&b, "deck");
    /* a 1 px hole in the deck over the floor: Ghost and Fill records in cells that also hold a
     * floor span (the record merge and the in-cell order) */
    mesh_rect(&b, 60, 0, 70, 120, 4.0, 1.0, 64, 50, 65, 51);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z1, z4;
    bake_grid0(&p, 1, &z1);
    bake_grid0(&p, 4, &z4);
    cr_assert_eq(z1.rec_count, z4.rec_count);
    cr_assert_eq(memcmp(z1.recs, z4.recs, z1.rec_count * sizeof *z1.recs), 0);
    cr_assert_eq(memcmp(z1.scc, z4.scc, z1.rec_count * sizeof *z1.scc), 0);
    cr_assert_eq(memcmp(z1.clr2d, z4.clr2d, z1.rec_count * sizeof *z1.clr2d), 0);
    /* raster bands of a few rows give the same zone as one band */
    nm_error err = {0};
    nm_zone_clean *zc = NULL;
    cr_assert_eq(nm_zone_clean_build_at(&p, 0, 2, &zc, &err), NM_OK, "%s", err.msg);
    nm_bake_grid_opts o = {.workers = 2, .band_cells = 3000, .keep_records = true};
    nm_bake_grid_zone zb;
    cr_assert_eq(nm_bake_grid_zone_bake(zc, &o, &zb, &err), NM_OK, "%s", err.msg);
    cr_assert_lt(3000 / zb.w * 4, zb.h, "several bands");
    cr_assert_eq(zb.rec_count, z1.rec_count);
    cr_assert_eq(memcmp(zb.recs, z1.recs, z1.rec_count * sizeof *z1.recs), 0);
    cr_assert_eq(memcmp(zb.scc, z1.scc, z1.rec_count * sizeof *z1.scc), 0);
    /* bands rasterised several at a time (2 and 4 workers) give the same zone, every column */
    for (int wk = 2; wk <= 4; wk += 2) {
        nm_bake_grid_zone_free(&zb);
        o.workers = wk;
        cr_assert_eq(nm_bake_grid_zone_bake(zc, &o, &zb, &err), NM_OK, "%s", err.msg);
        cr_assert_eq(zb.rec_count, z1.rec_count, "%d workers", wk);
        cr_assert_eq(memcmp(zb.cell_start, z1.cell_start, ((size_t)z1.w * (size_t)z1.h + 1) * sizeof *z1.cell_start), 0);
        cr_assert_eq(memcmp(zb.recs, z1.recs, z1.rec_count * sizeof *z1.recs), 0, "%d workers", wk);
        cr_assert_eq(memcmp(zb.scc, z1.scc, z1.rec_count * sizeof *z1.scc), 0);
        cr_assert_eq(memcmp(zb.clr2d, z1.clr2d, z1.rec_count * sizeof *z1.clr2d), 0);
        cr_assert_eq(memcmp(zb.medial, z1.medial, z1.rec_count), 0);
        cr_assert_eq(memcmp(zb.seg, z1.seg, z1.rec_count), 0);
    }
    cr_assert_gt(z1.stats.ghosts, 0, "the scene has Ghost records to merge");
    cr_assert_gt(z1.stats.fills, 0, "the scene has Fill records to merge");
    /* the merged columns stay with their record: a Ghost takes a component, a Fill has none */
    for (size_t i = 0; i < z1.rec_count; i++) {
        if (z1.recs[i].flags & NM_GRID_GHOST) cr_assert_gt(z1.scc[i], 0, "Ghost record %zu", i);
        if (z1.recs[i].flags & NM_GRID_FILL) {
            cr_assert_eq(z1.scc[i], 0, "Fill record %zu", i);
            cr_assert_eq(z1.recs[i].h, 0.0f, "Fill record %zu", i);
        }
        if (!(z1.recs[i].flags & (NM_GRID_GHOST | NM_GRID_FILL))) cr_assert_gt(z1.scc[i], 0, "span record %zu", i);
    }
    nm_bake_grid_zone_free(&zb);
    nm_zone_clean_free(zc);
    nm_bake_grid_zone_free(&z1);
    nm_bake_grid_zone_free(&z4);
    nm_pack_free(&p);
    sb_free(&b);
}

/* A region of more than 4 Mi cells takes the workers inside its own fields: its medial bits are
 * written beside NearestSource as the sweep's second pass finishes rows (medial_column). A floor
 * of 520 x 520 px with a hole gives the same records, clearances and medial bits at 1 and 2
 * workers, with medial bits around the hole and along the floor's middle. */
Test(bakegrid, a_region_of_millions_of_cells_gives_the_same_fields_on_any_workers, .timeout = 240)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, 0, 0, 520, 520, 0.0, 5.0, 200, 240, 300, 280);
    nm_pack p;
    bake_loaded(b.s, &p);
    nm_bake_grid_zone z1, z2;
    bake_grid0(&p, 1, &z1);
    bake_grid0(&p, 2, &z2);
    cr_assert_eq(z1.global_regions, 1);
    cr_assert_geq((size_t)z1.w * (size_t)z1.h, (size_t)1 << 22, "the region takes the workers");
    cr_assert_eq(z2.rec_count, z1.rec_count);
    cr_assert_eq(memcmp(z2.recs, z1.recs, z1.rec_count * sizeof *z1.recs), 0);
    cr_assert_eq(memcmp(z2.clr2d, z1.clr2d, z1.rec_count * sizeof *z1.clr2d), 0);
    cr_assert_eq(memcmp(z2.medial, z1.medial, z1.rec_count), 0);
    /* the floor's diagonals cross every row: each row of the floor has a medial record (a band of
     * rows skipped or cut short would leave rows without) */
    int32_t rows_without = 0;
    for (int32_t j = 0; j < z1.h; j++) {
        const double v = ((double)(z1.gy0 + j) + 0.5) * NM_kCS;
        if (v < 2.0 || v > 518.0) continue;
        bool any = false;
        for (size_t c = (size_t)j * (size_t)z1.w; c < (size_t)(j + 1) * (size_t)z1.w && !any; c++)
            for (uint32_t i = z1.cell_start[c]; i < z1.cell_start[c + 1] && !any; i++) any = z1.medial[i] != 0;
        rows_without += !any;
    }
    cr_assert_eq(rows_without, 0, "%d rows of the floor without a medial record", rows_without);
    nm_bake_grid_zone_free(&z1);
    nm_bake_grid_zone_free(&z2);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- a crack across a riser -------------------------------------------------------------------
 * The Recast path keeps the eroded strips at the top and the foot of a rise it does not climb; where
 * its mesh joins the two near the rise's low end, a steep joining triangle's rims fill the crack
 * beside it with heights between the two (navcat-bridges leg 20 climbed 0.58 m onto the steep grass
 * block's side through them). Here: the foot [0,10]x[0,11] at 0 m, the top [10.75,20]x[0,11] at
 * 0.7 m, a joining quad [10,10.75]x[9.9,11] from 0 to 0.7 m; the collision geometry is a face at
 * u = 10.375 for v < 9.9 (the rise). In row v 9.75..10 the crack's cells (u 10..10.75) hold the
 * joining quad's rims (its edge at v = 9.9 crosses the row), a ramp of steps under kStepUp. */
/* A vertical face at u = fu for fv0 <= v < fv1, from 0 m up to ftop: gap_blocked of the two cases
 * below. */
typedef struct face_u {
    double fu, fv0, fv1, ftop;
} face_u;

static bool face_blocks(void *ctx, double u0, double v0, double u1, double v1, double lo, double hi)
{
    const face_u *f = ctx;
    if ((u0 - f->fu) * (u1 - f->fu) > 0 || u0 == u1) return false;
    double v = v0 + (f->fu - u0) / (u1 - u0) * (v1 - v0);
    return v >= f->fv0 && v < f->fv1 && lo <= f->ftop && hi >= 0.0;
}

/* Bakes mesh b at one worker with gap_blocked (its context f), keeping the zone's records. */
static void bake_face_zone(sb *b, nm_bake_gap_fn gap, face_u *f, nm_pack *p, nm_bake_grid_zone *z)
{
    bake_loaded(b->s, p);
    nm_error err = {0};
    nm_zone_clean *zc = NULL;
    cr_assert_eq(nm_zone_clean_build_at(p, 0, 1, &zc, &err), NM_OK, "%s", err.msg);
    nm_bake_grid_opts o = {.workers = 1, .gap_blocked = gap, .drop_ctx = f, .keep_records = true};
    cr_assert_eq(nm_bake_grid_zone_bake(zc, &o, z, &err), NM_OK, "%s", err.msg);
    nm_zone_clean_free(zc);
}

/* The riser of the crack cases: the foot [0,10]x[0,11] at 0 m, the top [10.75,20]x[0,11] at
 * 0.7 m, a joining quad [10,10.75]x[9.9,11] from 0 to 0.7 m. */
static void riser_mesh(sb *b)
{
    mesh_group(b, "foot");
    mesh_rect(b, 0, 0, 10, 11, 0.0, 1.0, 0, 0, 0, 0);
    mesh_group(b, "top");
    mesh_rect(b, 10.75, 0, 20, 11, 0.7, 1.0, 0, 0, 0, 0);
    mesh_group(b, "join");
    mesh_quad4(b, 10, 9.9, 10.75, 11, 0.0, 0.7, 0.7, 0.0);
}

/* The lowest height of a cell's records that are not Fill (NAN when none). */
static double lowest_real_h(const nm_grid_rec *r, uint32_t n)
{
    double h = NAN;
    for (uint32_t k = 0; k < n; k++)
        if (!(r[k].flags & NM_GRID_FILL) && (isnan(h) || r[k].h < h)) h = r[k].h;
    return h;
}

static face_u k_rise_face = {10.375, -INFINITY, 9.9, 0.7};

static double crack_row_step(bool face)
{
    sb b = {0};
    riser_mesh(&b);
    nm_pack p;
    nm_bake_grid_zone z;
    bake_face_zone(&b, face ? face_blocks : NULL, &k_rise_face, &p, &z);
    /* the highest step up along the row, foot to top, each cell's lowest real record */
    double prev = NAN, most = 0;
    for (int32_t gx = cell_of(9.6); gx <= cell_of(11.1); gx++) {
        uint32_t n;
        const nm_grid_rec *r = recs_at(&z, gx, cell_of(9.9), &n, NULL);
        double h = lowest_real_h(r, n);
        cr_assert(!isnan(h), "cell %d of the crack's row has a record", gx);
        if (!isnan(prev) && h - prev > most) most = h - prev;
        prev = h;
    }
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
    return most;
}

Test(bakegrid, crack_across_a_riser_keeps_the_rise)
{
    /* with the face: the crack's cells take their own side's height, so the row rises more than a
     * step (kStepUp) at once, as RiseOk sees a top next to its foot */
    double with_face = crack_row_step(true);
    cr_assert_gt(with_face, NM_kStepUp, "the crack climbs the rise in steps of at most %.2f m", with_face);
    /* no solid between: a slope, not a rise: the rims stay as rasterised */
    double slope = crack_row_step(false);
    cr_assert_leq(slope, NM_kStepUp, "a crack with no face between is left as it is (%.2f m)", slope);
}

/* The same rise closed by a second joining quad at v 0..6.6, so the crack between the two joins
 * (u 10..10.75, v 6.75..9.75) is a hole the layer fills: its cells are made up (Ghost records) or
 * the foot's rim, and levelled, the face (u = 10.375, v 6.6..9.9) stands between two of them. The step up it (more than kStepUp) must be
 * a forbidden step of the cell it starts from, as between a top and its foot next to each other,
 * and the step down must not: the sight checks read the bits, not RiseOk, and without them the
 * string pull drew chords over the top's edge and back down through the face (navcat-bridges legs
 * 35 and 44 of --random 60 --seed 2, audit `solid` inside the middle island's south face). */
static face_u k_short_face = {10.375, 6.6, 9.9, 0.7};

Test(bakegrid, crack_across_a_riser_forbids_the_step_up_its_face)
{
    sb b = {0};
    riser_mesh(&b);
    mesh_quad4(&b, 10, 0, 10.75, 6.6, 0.0, 0.7, 0.7, 0.0);
    nm_pack p;
    nm_bake_grid_zone z;
    bake_face_zone(&b, face_blocks, &k_short_face, &p, &z);
    /* the pair of cells along the row where the height rises more than a step: foot -> top */
    const int32_t gy = cell_of(8.1);
    int32_t at = INT32_MIN;
    uint8_t bits = 0;
    bool ghost = false;
    double prev = NAN;
    for (int32_t gx = cell_of(9.6); gx <= cell_of(11.1); gx++) {
        uint32_t n;
        const nm_grid_rec *r = recs_at(&z, gx, gy, &n, NULL);
        double h = NAN;
        uint8_t st = 0;
        bool gh = false;
        for (uint32_t k = 0; k < n; k++) {
            if (r[k].flags & NM_GRID_FILL) continue;
            st |= r[k].steps; /* the window ORs a cell's records */
            if (isnan(h) || r[k].h < h) {
                h = r[k].h;
                gh = (r[k].flags & NM_GRID_GHOST) != 0;
            }
        }
        cr_assert(!isnan(h), "cell %d of the row has a record", gx);
        if (!isnan(prev) && h - prev > NM_kStepUp && at == INT32_MIN) {
            at = gx - 1;
            ghost = ghost || gh;
        }
        if (at == INT32_MIN) {
            bits = st;
            ghost = gh;
        }
        prev = h;
    }
    cr_assert_neq(at, INT32_MIN, "the row rises more than a step somewhere");
    cr_assert(ghost, "a made-up cell stands at the face (the case under test)");
    cr_expect(bits & 1u, "the step up the face from cell %d is forbidden (bits %02x)", at, bits);
    cr_expect(!(bits & 2u), "the step down it is not (bits %02x)", bits);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- a riser crack round a top's corner -------------------------------------------------------
 * The foot at 0 m round a 0.7 m top [10.75,16]x[10.75,16], with the crack Recast leaves between
 * their eroded strips (u or v in [10, 10.75], closed by joining ramps beyond 13: a hole the layer
 * fills) and the collision geometry's faces in its middle (u = 10.375 for v in [10.375, 13], v =
 * 10.375 for u in [10.375, 13]). The
 * levelled crack puts the top next to its foot on both sides; at the corner a diagonal step from
 * the foot into the top's corner cell has the foot again two or three cells ahead, which RiseOk's
 * narrow-bump allowance passes (navcat-bridges at 0.73 px/m: routes climbed a 1 m grass block's
 * corner from the ground and walked on along its top). Every step up from the foot onto the top
 * must be a forbidden step; the steps down must not be. */
static bool corner_blocks(void *ctx, double u0, double v0, double u1, double v1, double lo, double hi)
{
    (void)ctx;
    const double f = 10.375, top = 0.7;
    if (lo > top || hi < 0.0) return false;
    if ((u0 - f) * (u1 - f) <= 0 && u0 != u1) { /* crosses u = f */
        double v = v0 + (f - u0) / (u1 - u0) * (v1 - v0);
        if (v >= f && v < 11.75) return true;
    }
    if ((v0 - f) * (v1 - f) <= 0 && v0 != v1) { /* crosses v = f */
        double u = u0 + (f - v0) / (v1 - v0) * (u1 - u0);
        if (u >= f && u < 11.75) return true;
    }
    return false;
}

/* The lowest real height of cell (gx, gy) and the OR of its records' step bits (NAN: none). */
static double cell_h_steps(const nm_bake_grid_zone *z, int32_t gx, int32_t gy, uint8_t *steps)
{
    uint32_t n;
    const nm_grid_rec *r = recs_at(z, gx, gy, &n, NULL);
    double h = NAN;
    *steps = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (r[k].flags & NM_GRID_FILL) continue;
        *steps |= r[k].steps;
        if (isnan(h) || r[k].h < h) h = r[k].h;
    }
    return h;
}

/* Is the step from (gx, gy) by (dx, dy) forbidden (the window's rule: the canonical direction's
 * bit of the cell left, or its reverse bit of the cell entered)? */
static bool step_forbidden(const nm_bake_grid_zone *z, int32_t gx, int32_t gy, int dx, int dy)
{
    for (int d = 0; d < 4; d++) {
        uint8_t st;
        if (dx == nm_grid_step_dx[d] && dy == nm_grid_step_dy[d]) {
            cell_h_steps(z, gx, gy, &st);
            return (st >> (2 * d)) & 1u;
        }
        if (dx == -nm_grid_step_dx[d] && dy == -nm_grid_step_dy[d]) {
            cell_h_steps(z, gx + dx, gy + dy, &st);
            return (st >> (2 * d + 1)) & 1u;
        }
    }
    return false;
}

Test(bakegrid, riser_crack_corner_forbids_the_diagonal_step_up)
{
    sb b = {0};
    mesh_group(&b, "foot");
    mesh_rect(&b, 0, 0, 20, 10, 0.0, 1.0, 0, 0, 0, 0);
    mesh_rect(&b, 0, 10, 10, 20, 0.0, 1.0, 0, 0, 0, 0);
    mesh_group(&b, "top");
    mesh_rect(&b, 10.75, 10.75, 16, 16, 0.7, 1.0, 0, 0, 0, 0);
    mesh_group(&b, "join"); /* ramps across the crack's two arms beyond v, u = 13 close it */
    mesh_quad4(&b, 10, 11.75, 10.75, 16, 0.0, 0.7, 0.7, 0.0);
    mesh_quad4(&b, 11.75, 10, 16, 10.75, 0.0, 0.0, 0.7, 0.7);
    nm_pack p;
    nm_bake_grid_zone z;
    bake_face_zone(&b, corner_blocks, NULL, &p, &z);
    unsigned ups = 0, diag_ups = 0, downs_free = 0;
    for (int32_t gy = cell_of(9.0); gy <= cell_of(12.0); gy++)
        for (int32_t gx = cell_of(9.0); gx <= cell_of(12.0); gx++) {
            uint8_t st;
            const double ha = cell_h_steps(&z, gx, gy, &st);
            if (isnan(ha) || ha > 0.1) continue; /* a foot cell */
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    const double hb = cell_h_steps(&z, gx + dx, gy + dy, &st);
                    if ((!dx && !dy) || isnan(hb) || hb < 0.6) continue; /* onto the top */
                    ups++;
                    diag_ups += dx && dy;
                    cr_expect(step_forbidden(&z, gx, gy, dx, dy),
                              "the step up from the foot (%d, %d) by (%d, %d) onto the top is not forbidden", gx, gy, dx,
                              dy);
                    downs_free += !dx || !dy ? !step_forbidden(&z, gx + dx, gy + dy, -dx, -dy) : 0;
                }
        }
    cr_assert_gt(diag_ups, 0, "the foot meets the top diagonally at the corner (the case under test)");
    cr_assert_gt(downs_free, 0, "the steps down off the top stay open");
    cr_log_info("%u steps up, %u diagonal, %u orthogonal steps down open", ups, diag_ups, downs_free);
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
}

/* ---- a thin wall between two floors whose strips leave no span ------------------------------
 * Recast's eroded strips on both faces of a wall thinner than about 0.2 m (sauer-pandora: the side
 * of a hollow pillar, whose inside Recast keeps as floor) leave a crack of three cells with no
 * span in the middle: the floors [0,10] and [10.75,20] (u) at 0 m, joined at v 0..6.6 and
 * 9.9..11, with a wall at u = 10.4 from v 6.6 to 9.9 in the collision geometry only. The made-up
 * cells between the joins must stay out of Core (not Walk): CloseCracks joined the floors across
 * them and sauer-pandora leg 14 of --random 60 --seed 2 walked into the pillar (audit `solid`). */
static face_u k_thin_face = {10.4, 6.6, 9.9, 3.0};

static bool wall_crack_walk(bool wall)
{
    sb b = {0};
    mesh_group(&b, "floor");
    mesh_rect(&b, 0, 0, 10, 11, 0.0, 1.0, 0, 0, 0, 0);
    mesh_rect(&b, 10.75, 0, 20, 11, 0.0, 1.0, 0, 0, 0, 0);
    mesh_rect(&b, 10, 9.9, 10.75, 11, 0.0, 1.0, 0, 0, 0, 0);
    mesh_rect(&b, 10, 0, 10.75, 6.6, 0.0, 1.0, 0, 0, 0, 0);
    nm_pack p;
    nm_bake_grid_zone z;
    bake_face_zone(&b, wall ? face_blocks : NULL, &k_thin_face, &p, &z);
    uint32_t n;
    const nm_grid_rec *r = recs_at(&z, cell_of(10.3), cell_of(8.1), &n, NULL);
    bool made_up = n > 0, walk = false;
    for (uint32_t k = 0; k < n; k++) {
        made_up = made_up && (r[k].flags & (NM_GRID_GHOST | NM_GRID_FILL));
        walk = walk || (r[k].flags & NM_GRID_WALK);
    }
    cr_assert(made_up, "the wall's cell is made up (the case under test)");
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
    return walk;
}

Test(bakegrid, thin_wall_between_two_strips_keeps_its_crack_open)
{
    cr_expect(!wall_crack_walk(true), "the made-up cell under the wall is Walk");
    /* no wall: a seam, closed as before */
    cr_expect(wall_crack_walk(false), "a crack with no wall across stays open");
}

/* ---- a crack across a riser that closes in CloseCracks' second round --------------------------
 * navcat-bridges leg 43 climbed the 1 m island's corner from the 0.3 m floor: the island's south
 * strip (the crack to the floor) was levelled, but the cell just east of the island's east face, in
 * that strip's row, held a rim between the two (0.55 m) and closes only once its western neighbour
 * has (CloseCracks' second round: nothing Core north of it, its west neighbours made up). Here the
 * foot (0 m) is Core up to v 9.75 with its rims in row v 9.75..10, the top (0.7 m) Core from v 10.25
 * and u <= 10.25 (its rims in column u 10.25..10.5); the crack row v 10..10.25 between them is made
 * up (closed at u < 6.75 by the foot) and ends at the cell X (u 10.25..10.5), which holds a steep
 * joining quad's rim (0.39 m) and has the foot east of it (u >= 10.62). The top's body stands on
 * u <= 10.3, v >= 10 (its faces in the cracks' middles: X lies on the foot's side). */
static bool corner_body(void *ctx, double u0, double v0, double u1, double v1, double lo, double hi)
{
    (void)ctx;
    if (lo > 0.7 || hi < 0.0) return false;
    for (int s = 0; s <= 64; s++) { /* does the segment meet the body's footprint? */
        double t = s / 64.0, u = u0 + t * (u1 - u0), v = v0 + t * (v1 - v0);
        if (u <= 10.3 && v >= 10.0) return true;
    }
    return false;
}

static double corner_cell_h(bool body)
{
    const double e = 0.1;
    sb b = {0};
    mesh_group(&b, "foot");
    mesh_rect(&b, 0, 0, 20 - e, 9.75 - e, 0.0, 0.25, 0, 0, 0, 0);
    mesh_rect(&b, 0, 9.75, 6.75 - e, 10.25 - e, 0.0, 0.25, 0, 0, 0, 0);
    mesh_rect(&b, 10.62, 9.75, 20 - e, 10.25 - e, 0.0, 0.25, 0, 0, 0, 0);
    mesh_group(&b, "top");
    mesh_rect(&b, 6.75, 10.25, 10.25 - e, 14, 0.7, 0.25, 0, 0, 0, 0);
    mesh_group(&b, "join");
    mesh_quad4(&b, 10.26, 10.05, 10.36, 10.2, 0.3, 0.3, 0.45, 0.45);
    nm_pack p;
    nm_bake_grid_zone z;
    bake_face_zone(&b, body ? corner_body : NULL, NULL, &p, &z);
    uint32_t n;
    const nm_grid_rec *r = recs_at(&z, cell_of(10.375), cell_of(10.125), &n, NULL);
    double h = lowest_real_h(r, n);
    cr_assert(!isnan(h), "the corner cell has a record");
    nm_bake_grid_zone_free(&z);
    nm_pack_free(&p);
    sb_free(&b);
    return h;
}

Test(bakegrid, crack_across_a_riser_closes_at_its_corner)
{
    /* with the body: X takes the height of the side the top's face does not part it from (the
     * foot east of it; the crack's cell west of it was levelled to the top's in the first round),
     * so RiseOk sees the face between X and that cell, not a ramp of small steps */
    double with_body = corner_cell_h(true);
    cr_assert_float_eq(with_body, 0.0, 1e-3, "the corner cell is at %.3f m, between foot and top", with_body);
    /* no body: left as rasterised */
    double none = corner_cell_h(false);
    cr_assert(none > 0.2 && none < 0.6, "a corner with no face is left as it is (%.2f m)", none);
}
