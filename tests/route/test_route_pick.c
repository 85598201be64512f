/* test_route_pick.c — the grid-reading checks of 前置检查与选类: pickStartRec / pickDeckRec with
 * the article's figure (Dead cell skipped, key (1, 0.1), roof and cliff out of the band), the
 * goal-deck region swap keeping the start seed, the fallback to the snapped start, the tie-break,
 * and the whole-zone core distance (coreAnchorPx) and region bounding box on a written BGRD. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "route/route.h"

/* a patch over global cells [100, 180) x [200, 280) */
#define PX0 100
#define PY0 200
#define PW 80
static nm_grid_rec recs[64];
static nm_bgrd_out patch;

static void put(int gx, int gy, uint32_t rid, float h, uint8_t flags)
{
    recs[patch.n++] = (nm_grid_rec){(gy - PY0) * PW + (gx - PX0), rid, h, 0, flags, 0};
}

static void setup(void)
{
    memset(&patch, 0, sizeof patch);
    patch.recs = recs;
    patch.gx0 = PX0;
    patch.gy0 = PY0;
    patch.gx1 = PX0 + PW;
    patch.gy1 = PY0 + PW;
}

TestSuite(pick, .init = setup);

Test(pick, start_rec_skips_dead_and_takes_the_nearest_walkable_in_band)
{
    const uint8_t WC = NM_GRID_WALK | NM_GRID_CORE;
    /* the article's figure: start height 10; the start cell holds only a Dead span under a
       wall; the right neighbour: ground 10.1 (key (1, 0.1)), roof 15 (5 off), under the cliff
       2 (8 off) */
    put(140, 240, 1, 10.0f, NM_GRID_DEAD | NM_GRID_CORE);
    put(141, 240, 1, 2.0f, WC);
    put(141, 240, 1, 10.1f, WC);
    put(141, 240, 2, 15.0f, WC);
    put(140, 241, 1, 10.5f, WC);  /* key (1, 0.5): loses to (1, 0.1) */
    put(139, 239, 1, 10.0f, WC);  /* key (2, 0) */
    nm_pick_rec r;
    cr_assert(nm_pick_start_rec(&patch, 140, 240, 10.0, &r));
    cr_expect_eq(r.gx, 141);
    cr_expect_eq(r.gy, 240);
    cr_expect_float_eq(r.h, 10.1f, 1e-6);
    cr_expect_eq(r.rid, 1);
}

Test(pick, start_rec_excludes_ghost_and_fill_deck_rec_allows_ghost)
{
    put(140, 240, 3, 0.0f, NM_GRID_WALK | NM_GRID_GHOST);
    put(141, 240, 4, 0.0f, NM_GRID_WALK | NM_GRID_FILL);
    put(150, 240, 5, 0.0f, NM_GRID_WALK);
    nm_pick_rec r;
    cr_assert(nm_pick_start_rec(&patch, 140, 240, 0.0, &r));
    cr_expect_eq(r.rid, 5);
    cr_assert(nm_pick_deck_rec(&patch, 140, 240, 0.0, &r));
    cr_expect_eq(r.rid, 3);
}

Test(pick, box_is_65_cells_and_bands_are_climb_and_deck)
{
    put(140 + 33, 240, 1, 0.0f, NM_GRID_WALK); /* outside the box */
    nm_pick_rec r;
    cr_expect_not(nm_pick_start_rec(&patch, 140, 240, 0.0, &r));
    put(140 + 32, 240 - 32, 2, 3.0f, NM_GRID_WALK); /* corner of the box, 3 m off: in */
    cr_assert(nm_pick_start_rec(&patch, 140, 240, 0.0, &r));
    cr_expect_eq(r.rid, 2);
    cr_expect_not(nm_pick_deck_rec(&patch, 140, 240, 0.0, &r), "3 m is outside kDeckBand");
    cr_expect_not(nm_pick_start_rec(&patch, 140, 240, -0.01, &r), "3.01 m is outside kClimb");
}

Test(pick, equal_keys_keep_the_smaller_cell)
{
    put(141, 241, 7, 0.0f, NM_GRID_WALK); /* cell (41, 41) */
    put(139, 239, 6, 0.0f, NM_GRID_WALK); /* cell (39, 39): smaller number, same key (2, 0) */
    nm_pick_rec r;
    cr_assert(nm_pick_start_rec(&patch, 140, 240, 0.0, &r));
    cr_expect_eq(r.rid, 6);
}

Test(pick, region_falls_back_to_the_snapped_start)
{
    put(170, 240, 2, 0.0f, NM_GRID_WALK);
    nm_region_pick p;
    nm_error err = {0};
    /* raw start at cell (120, 240): nothing within 32 cells; snapped start at cell (165, 240) */
    cr_assert_eq(nm_pick_region(&patch, 120 * 0.25, 240 * 0.25, 165 * 0.25 + 0.1, 240 * 0.25 + 0.1, 0.0,
                                NULL, 0, 0, false, 0, &p, &err),
                 NM_OK, "%s", err.msg);
    cr_expect_eq(p.region, 2);
    cr_expect_eq(p.seed_gx, 170);
    cr_expect_not(p.deck_region);
    cr_expect_eq(nm_pick_region(&patch, 101 * 0.25, 201 * 0.25, 101 * 0.25, 201 * 0.25, 0.0, NULL, 0, 0,
                                false, 0, &p, &err),
                 NM_ERR_STATE);
    cr_expect(strstr(err.msg, "no walkable cell near the start") != NULL, "%s", err.msg);
}

Test(pick, goal_deck_replaces_only_the_region)
{
    /* start on a roof (region 2 at 8 m), goal deck 0: the ground near the goal is region 1 */
    put(120, 220, 2, 8.0f, NM_GRID_WALK);
    nm_grid_rec grecs[4];
    nm_bgrd_out gp;
    memset(&gp, 0, sizeof gp);
    gp.recs = grecs;
    gp.gx0 = 150;
    gp.gy0 = 250;
    gp.gx1 = 170;
    gp.gy1 = 270;
    grecs[gp.n++] = (nm_grid_rec){5 * 20 + 5, 1, 1.5f, 0, NM_GRID_WALK, 0};
    grecs[gp.n++] = (nm_grid_rec){5 * 20 + 5, 2, 8.0f, 0, NM_GRID_WALK, 0};
    nm_region_pick p;
    nm_error err = {0};
    cr_assert_eq(nm_pick_region(&patch, 120 * 0.25, 220 * 0.25, 120 * 0.25, 220 * 0.25, 8.0, &gp,
                                155 * 0.25, 255 * 0.25, true, 0.0, &p, &err),
                 NM_OK, "%s", err.msg);
    cr_expect_eq(p.region, 1);
    cr_expect(p.deck_region);
    cr_expect_eq(p.seed_gx, 120);
    cr_expect_float_eq(p.seed_h, 8.0, 1e-6);
    /* a deck at 4 m: nothing within 2 m */
    cr_expect_eq(nm_pick_region(&patch, 120 * 0.25, 220 * 0.25, 120 * 0.25, 220 * 0.25, 8.0, &gp,
                                155 * 0.25, 255 * 0.25, true, 4.0, &p, &err),
                 NM_ERR_STATE);
    cr_expect(strstr(err.msg, "no declared deck") != NULL, "%s", err.msg);
}

/* ---- whole-zone checks on a written BGRD ---- */
static nm_buf bgrd_buf;
static nm_bgrd grid;

/* a 200 x 100 cell zone at origin (0, 0) px; Core cells at (20, 20) and (180, 90); region 3 spans
   x in [50, 60], y in [10, 12] */
static void write_zone(void)
{
    const int W = 200, H = 100;
    static uint32_t cs[200 * 100 + 1];
    static nm_grid_rec zr[64];
    size_t n = 0;
    memset(cs, 0, sizeof cs);
    for (int c = 0; c < W * H; c++) {
        int x = c % W, y = c / W;
        cs[c] = (uint32_t)n;
        if ((x == 20 && y == 20) || (x == 180 && y == 90))
            zr[n++] = (nm_grid_rec){0, 1, 1.0f, 9, NM_GRID_CORE | NM_GRID_WALK, 0};
        else if ((x == 50 || x == 60) && (y == 10 || y == 12))
            zr[n++] = (nm_grid_rec){0, 3, 2.0f, 9, NM_GRID_WALK, 0};
        else if (x == 100 && y == 50)
            zr[n++] = (nm_grid_rec){0, 2, 0.0f, 0, NM_GRID_WALK, 0}; /* not core */
    }
    cs[W * H] = (uint32_t)n;
    nm_grid_zone_src z = {"z", 0.0, 0.0, W, H, 3, cs, zr};
    nm_bgrd_write_opts o = {64, 8, 1, 1};
    nm_error err = {0};
    memset(&bgrd_buf, 0, sizeof bgrd_buf);
    cr_assert_eq(nm_bgrd_write(&z, 1, &o, &bgrd_buf, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bgrd_parse(bgrd_buf.p, bgrd_buf.size, &grid, &err), NM_OK, "%s", err.msg);
}

static void free_zone(void)
{
    nm_bgrd_free(&grid);
    nm_buf_free(&bgrd_buf);
}

Test(pick, core_distance_measures_both_ends_on_the_whole_zone, .init = write_zone, .fini = free_zone)
{
    double ds, dg;
    nm_error err = {0};
    /* start at cell (23, 24): core (20, 20) at 5 cells = 1.25 px; goal at cell (100, 50): no core
       within the 64-cell box's tiles... the nearest is far: 16 when none is found */
    cr_assert_eq(nm_core_anchor_px(&grid, 0, 23 * 0.25 + 0.1, 24 * 0.25 + 0.1, 180 * 0.25 + 0.1,
                                   84 * 0.25 + 0.1, &ds, &dg, &err),
                 NM_OK, "%s", err.msg);
    cr_expect_float_eq(ds, 1.25, 1e-9);
    cr_expect_float_eq(dg, 1.5, 1e-9);
    cr_assert_eq(nm_core_anchor_px(&grid, 0, 100 * 0.25, 50 * 0.25, 100 * 0.25, 50 * 0.25, &ds, &dg, &err),
                 NM_OK, "%s", err.msg);
    /* (100, 50) to (20, 20) is 85 cells: found only if its tile meets the box; either way > 8 px */
    cr_expect_gt(ds, NM_kSnapRadius);
    cr_expect_gt(dg, NM_kSnapRadius);
}

/* Through the engine's decoded-tile cache (issue 14) the check reads cached tiles instead of
 * decoding them: the same distances, with the cache empty, partly or wholly filled. */
Test(pick, core_distance_through_the_tile_cache_is_the_same, .init = write_zone, .fini = free_zone)
{
    const double pts[3][4] = {{23 * 0.25 + 0.1, 24 * 0.25 + 0.1, 180 * 0.25 + 0.1, 84 * 0.25 + 0.1},
                              {100 * 0.25, 50 * 0.25, 100 * 0.25, 50 * 0.25},
                              {60 * 0.25, 12 * 0.25, 20 * 0.25, 21 * 0.25}};
    nm_bgrd_cache cache;
    memset(&cache, 0, sizeof cache);
    const int32_t fill[3][4] = {{0, 0, 0, 0}, {0, 0, 70, 40}, {-8, -8, 260, 160}}; /* none, part, all */
    for (int f = 0; f < 3; f++) {
        if (fill[f][2] > fill[f][0]) {
            nm_bgrd_out o = {0};
            o.cache = &cache;
            nm_error e = {0};
            cr_assert_eq(nm_bgrd_decode_rect(&grid, 0, fill[f][0], fill[f][1], fill[f][2], fill[f][3], NULL, 1, &o, &e),
                         NM_OK, "%s", e.msg);
            nm_bgrd_out_free(&o);
        }
        for (int k = 0; k < 3; k++) {
            double a[2], b[2];
            nm_error err = {0};
            cr_assert_eq(nm_core_anchor_px(&grid, 0, pts[k][0], pts[k][1], pts[k][2], pts[k][3], &a[0], &a[1], &err), NM_OK);
            cr_assert_eq(nm_core_anchor_px_cached(&grid, 0, &cache, pts[k][0], pts[k][1], pts[k][2], pts[k][3], &b[0],
                                                  &b[1], &err),
                         NM_OK, "%s", err.msg);
            cr_expect_eq(a[0], b[0], "fill %d, point %d", f, k);
            cr_expect_eq(a[1], b[1], "fill %d, point %d", f, k);
        }
    }
    cr_expect_gt(cache.bytes, 0);
    nm_bgrd_cache_free(&cache);
}

Test(pick, region_bbox_scans_the_region_once, .init = write_zone, .fini = free_zone)
{
    nm_cell_rect r;
    nm_error err = {0};
    cr_assert_eq(nm_region_bbox(&grid, 0, 3, 1, &r, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(r.x0, 50);
    cr_expect_eq(r.x1, 60);
    cr_expect_eq(r.y0, 10);
    cr_expect_eq(r.y1, 12);
    cr_assert_eq(nm_region_bbox(&grid, 0, 9, 1, &r, &err), NM_OK);
    cr_expect(nm_cell_rect_empty(&r));
}

/* The box decodes only the region field of the tiles that can still widen it (issue 14: the
 * first plan of the large world decoded every tile of its region with the sidecar, 2.8 s). The
 * same box as a whole decode of every tile, on a zone of 70 small tiles with regions of every
 * shape: one spread over the whole zone (its inner tiles are skipped), small blobs, one whose
 * cells sit in a few far tiles, ones seen only in aprons next to their own tiles. */
static uint32_t bbox_zone_rid(int x, int y)
{
    /* region 6: three cells in three tiles; the last tile meets the box of the first two
       without lying inside it */
    if ((x == 40 && y == 5) || (x == 5 && y == 40) || (x == 60 && y == 60)) return 6;
    uint32_t h = (uint32_t)x * 73856093u ^ (uint32_t)y * 19349663u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    if (h % 9 == 0) return 1;                                         /* everywhere, sparse */
    if (x >= 40 && x < 75 && y >= 30 && y < 50) return 2;             /* a blob across tiles */
    if ((x == 5 && y == 190) || (x == 290 && y == 3) || (x == 150 && y == 100)) return 3;
    if (x >= 31 && x <= 33 && y >= 64 && y <= 96) return 4;           /* a strip on a tile seam */
    if (x >= 200 && x < 260 && y >= 120 && y < 180 && (x + y) % 7 == 0) return 5;
    return 0;
}

/* bbox_zone_rid's 300 x 200 cells as a BGRD section of 70 tiles, parsed into *g (b holds it). */
static void bbox_zone(nm_buf *b, nm_bgrd *g)
{
    const int W = 300, H = 200;
    uint32_t *cs = calloc((size_t)W * H + 1, sizeof *cs);
    nm_grid_rec *zr = calloc((size_t)W * H, sizeof *zr);
    size_t n = 0;
    for (int c = 0; c < W * H; c++) {
        cs[c] = (uint32_t)n;
        uint32_t rid = bbox_zone_rid(c % W, c / W);
        if (rid) zr[n++] = (nm_grid_rec){0, rid, 1.0f, 4, NM_GRID_WALK, 0};
    }
    cs[W * H] = (uint32_t)n;
    nm_grid_zone_src z = {"z", 0.0, 0.0, W, H, 6, cs, zr};
    nm_bgrd_write_opts o = {32, 8, 1, 1};
    nm_error err = {0};
    cr_assert_eq(nm_bgrd_write(&z, 1, &o, b, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bgrd_parse(b->p, b->size, g, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(g->zones[0].tile_count, 70);
    free(cs);
    free(zr);
}

Test(pick, region_bbox_is_the_box_of_a_whole_decode_of_every_tile)
{
    nm_error err = {0};
    nm_buf b = {0};
    nm_bgrd g;
    bbox_zone(&b, &g);
    nm_cell_rect want[7];
    for (int r = 0; r < 7; r++) want[r] = (nm_cell_rect){0, 0, -1, -1};
    nm_bgrd_scratch s = {0};
    for (uint32_t ti = 0; ti < g.zones[0].tile_count; ti++) {
        const nm_bgrd_tile *t = &g.zones[0].tiles[ti];
        nm_grid_rec *buf = calloc(t->records + 1, sizeof *buf);
        cr_assert_eq(nm_bgrd_decode_tile(&g, 0, ti, &s, buf, &err), NM_OK, "%s", err.msg);
        for (uint32_t k = 0; k < t->records; k++) {
            int64_t lx = buf[k].cell % t->nx, ly = buf[k].cell / t->nx;
            if (lx < t->px0 || lx > t->px1 || ly < t->py0 || ly > t->py1) continue;
            int64_t cx = t->gx0 + lx, cy = t->gy0 + ly;
            nm_cell_rect *w = &want[buf[k].rid];
            if (nm_cell_rect_empty(w)) *w = (nm_cell_rect){cx, cy, cx, cy};
            if (cx < w->x0) w->x0 = cx;
            if (cx > w->x1) w->x1 = cx;
            if (cy < w->y0) w->y0 = cy;
            if (cy > w->y1) w->y1 = cy;
        }
        free(buf);
    }
    cr_expect_eq(want[3].x0, 5);
    cr_expect_eq(want[3].y1, 190);
    cr_expect_eq(want[6].x1, 60);
    for (uint32_t rid = 1; rid <= 6; rid++) {
        nm_cell_rect got;
        cr_assert_eq(nm_region_bbox(&g, 0, rid, 1, &got, &err), NM_OK, "%s", err.msg);
        cr_expect(nm_cell_rect_equal(&got, &want[rid]) || (nm_cell_rect_empty(&got) && nm_cell_rect_empty(&want[rid])),
                  "region %u: (%lld, %lld)-(%lld, %lld), a whole decode gives (%lld, %lld)-(%lld, %lld)", rid,
                  (long long)got.x0, (long long)got.y0, (long long)got.x1, (long long)got.y1,
                  (long long)want[rid].x0, (long long)want[rid].y0, (long long)want[rid].x1,
                  (long long)want[rid].y1);
    }
    /* every region at once, from views of every tile (what warm does) */
    uint32_t ids[70];
    nm_bgrd_tile_view views[70];
    nm_bgrd_out ws = {0};
    for (uint32_t t = 0; t < 70; t++) ids[t] = t;
    cr_assert_eq(nm_bgrd_view_tiles(&g, 0, ids, 70, NULL, NULL, 2, &ws, views, &err), NM_OK, "%s", err.msg);
    /* and without them (a zone too large for the tile cache): each tile's region field in turn;
     * with some views: those tiles read, the others decoded; last, a zone that declares 4 G regions
     * (a corrupt or hostile directory): the boxes are sized by the regions the tiles name, so the
     * same boxes come out (it fails when they are sized by the declared count: no memory); passes
     * 4 and 5 decode the tiles on two and on four workers */
    const uint32_t declared = g.zones[0].global_regions;
    for (int pass = 0; pass < 6; pass++) {
        const int workers = pass == 4 ? 2 : pass == 5 ? 4 : 1;
        if (pass == 3) g.zones[0].global_regions = UINT32_MAX - 1;
        if (pass == 4) g.zones[0].global_regions = declared;
        for (uint32_t t = 0; pass == 2 && t < 70; t += 2) nm_bgrd_tile_view_free(&views[t]);
        uint32_t *rids, n;
        nm_cell_rect *boxes;
        cr_assert_eq(nm_region_bboxes(&g, 0, pass == 0 || pass == 2 ? views : NULL, workers, &rids, &boxes, &n, &err), NM_OK,
                     "pass %d: %s", pass, err.msg);
        nm_cell_rect all[7];
        for (uint32_t rid = 0; rid <= 6; rid++) all[rid] = (nm_cell_rect){0, 0, -1, -1};
        for (uint32_t k = 0; k < n; k++) {
            cr_assert_lt(rids[k], 7, "pass %d: region %u named", pass, rids[k]);
            cr_expect(k == 0 || rids[k] > rids[k - 1], "pass %d: regions ascending", pass);
            all[rids[k]] = boxes[k];
        }
        for (uint32_t rid = 0; rid <= 6; rid++)
            cr_expect(nm_cell_rect_equal(&all[rid], &want[rid]) || (nm_cell_rect_empty(&all[rid]) && nm_cell_rect_empty(&want[rid])),
                      "pass %d, region %u: (%lld, %lld)-(%lld, %lld), a whole decode gives (%lld, %lld)-(%lld, %lld)",
                      pass, rid, (long long)all[rid].x0, (long long)all[rid].y0, (long long)all[rid].x1,
                      (long long)all[rid].y1, (long long)want[rid].x0, (long long)want[rid].y0,
                      (long long)want[rid].x1, (long long)want[rid].y1);
        nm_free(rids);
        nm_free(boxes);
        nm_cell_rect one;
        cr_assert_eq(nm_region_bbox(&g, 0, 3, workers, &one, &err), NM_OK, "pass %d: %s", pass, err.msg);
        cr_expect(nm_cell_rect_equal(&one, &want[3]), "pass %d: region 3 alone", pass);
    }
    g.zones[0].global_regions = declared;
    for (uint32_t t = 0; t < 70; t++) nm_bgrd_tile_view_free(&views[t]);
    nm_bgrd_out_free(&ws);
    nm_bgrd_scratch_free(&s);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
}

/* The tile whose own rectangle holds global cell (x, y). */
static const nm_bgrd_tile *bbox_tile_at(const nm_bgrd *g, int64_t x, int64_t y)
{
    for (uint32_t ti = 0; ti < g->zones[0].tile_count; ti++) {
        const nm_bgrd_tile *t = &g->zones[0].tiles[ti];
        if (x >= t->gx0 + t->px0 && x <= t->gx0 + t->px1 && y >= t->gy0 + t->py0 && y <= t->gy0 + t->py1)
            return t;
    }
    cr_assert_fail("no tile holds (%lld, %lld)", (long long)x, (long long)y);
    return NULL;
}

static void bbox_break(const nm_bgrd *g, const nm_bgrd_tile *t)
{
    memset((uint8_t *)g->bytes + t->offset + t->len / 2, 0xFF, t->len - t->len / 2);
}

/* A tile that does not decode, on one, two or four workers (which may decode tiles the
 * one-thread order leaves out: a bad pack must not fail on some runs and not on others). A tile
 * every order needs (region 3's lone cell at (5, 190)): the boxes fail, naming the same tile
 * each time. Then, on a clean pack, a tile the one-thread order leaves out (inside the boxes
 * when its turn comes): the boxes come out, the same as the clean pack's. It fails when a broken tile the boxes need goes unreported, when the outcome
 * depends on the workers, or when the workers decode every tile. */
Test(pick, region_boxes_fail_alike_on_any_worker_count)
{
    nm_buf b = {0}, clean = {0};
    nm_bgrd g, gc;
    bbox_zone(&b, &g);
    bbox_zone(&clean, &gc);
    uint32_t *want_rids = NULL, want_n = 0;
    nm_cell_rect *want = NULL;
    nm_error err0 = {0};
    cr_assert_eq(nm_region_bboxes(&gc, 0, NULL, 1, &want_rids, &want, &want_n, &err0), NM_OK, "%s", err0.msg);
    bbox_break(&g, bbox_tile_at(&g, 5, 190));
    char first[sizeof ((nm_error *)0)->msg] = "";
    const int counts[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        for (int rep = 0; rep < 20; rep++) {
            nm_error err = {0};
            uint32_t *rids = NULL, n = 0;
            nm_cell_rect *boxes = NULL;
            cr_assert_neq(nm_region_bboxes(&g, 0, NULL, counts[k], &rids, &boxes, &n, &err), NM_OK,
                          "%d workers: a broken tile goes unreported", counts[k]);
            cr_expect_null(rids);
            cr_expect_null(boxes);
            if (!first[0]) {
                cr_assert_neq(strstr(err.msg, "tile"), NULL, "the error names the tile: %s", err.msg);
                memcpy(first, err.msg, sizeof first);
            }
            cr_expect_str_eq(err.msg, first, "%d workers", counts[k]);
        }
    }
    /* the first tile (with records) whose break the one-thread order does not see */
    const nm_bgrd_tile *inner = NULL;
    for (uint32_t ti = 0; ti < gc.zones[0].tile_count && !inner; ti++) {
        const nm_bgrd_tile *t = &gc.zones[0].tiles[ti];
        if (!t->records) continue;
        nm_buf tb = {0};
        nm_bgrd tg;
        bbox_zone(&tb, &tg);
        bbox_break(&tg, &tg.zones[0].tiles[ti]);
        nm_error err = {0};
        uint32_t *rids = NULL, n = 0;
        nm_cell_rect *boxes = NULL;
        if (nm_region_bboxes(&tg, 0, NULL, 1, &rids, &boxes, &n, &err) == NM_OK) inner = t;
        nm_free(rids);
        nm_free(boxes);
        nm_bgrd_free(&tg);
        nm_buf_free(&tb);
    }
    cr_assert_not_null(inner, "every tile is decoded in the one-thread order");
    bbox_break(&gc, inner);
    for (int k = 0; k < 3; k++) {
        for (int rep = 0; rep < 20; rep++) {
            nm_error err = {0};
            uint32_t *rids = NULL, n = 0;
            nm_cell_rect *boxes = NULL;
            cr_assert_eq(nm_region_bboxes(&gc, 0, NULL, counts[k], &rids, &boxes, &n, &err), NM_OK,
                         "%d workers: %s", counts[k], err.msg);
            cr_assert_eq(n, want_n, "%d workers", counts[k]);
            for (uint32_t i = 0; i < n; i++)
                cr_expect(rids[i] == want_rids[i] && nm_cell_rect_equal(&boxes[i], &want[i]),
                          "%d workers: region %u", counts[k], rids[i]);
            nm_free(rids);
            nm_free(boxes);
        }
    }
    nm_free(want_rids);
    nm_free(want);
    nm_bgrd_free(&gc);
    nm_buf_free(&clean);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
}
