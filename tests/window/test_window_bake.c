/* test_window_bake.c — buildWindow on a level baked by tools/navbake (real BGRD + BNVF): the
 * other region's deck stays in the span table with vis3 = 0, the floor's boundary edges are kept
 * as walls, the reach set covers the floor, the window does not depend on the worker count, and
 * tiles read in place (from the cache, or decoded band by band) give the window of the decoded
 * record table within 24 B a cell. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "route/route.h"
#include "zone/zone.h"

static char g_dir[512];

typedef struct baked {
    nm_pack pack;
    nm_bgrd grid;
    nm_bnvf fields;
    nm_bnvf_zone_data fz;
    nm_zone_clean *zc;
} baked;

static void bake_obj(baked *b, int size);

static void bake(baked *b) { bake_obj(b, 0); }

/* size 1: a 140 x 140 m floor of 10 m squares (560 x 560 cells: four tiles of 512) with the deck
 * over the tile corner at (128, 128) px, so windows cross tile seams both ways; size 2: the same
 * floor 350 x 350 m (1400 x 1400 cells: nine tiles). */
static void bake_obj(baked *b, int size)
{
    const bool big = size > 0;
    const char *root = getenv("NM_BUILD_ROOT");
    snprintf(g_dir, sizeof g_dir, "/tmp/nm_window_bake_XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
    char obj[600], cmd[2048], path[700];
    snprintf(obj, sizeof obj, "%s/lvl.obj", g_dir);
    FILE *f = fopen(obj, "w");
    cr_assert_not_null(f);
    /* a 20 x 12 m floor (1 m squares) and a deck at 10 m over u in [4, 10], v in [2, 6] */
    const int W = size == 2 ? 35 : big ? 14 : 20, H = size == 2 ? 35 : big ? 14 : 12, S = big ? 10 : 1;
    fprintf(f, "g floor\n");
    for (int z = 0; z <= H; z++)
        for (int x = 0; x <= W; x++) fprintf(f, "v %d 0 %d\n", x * S, -z * S);
    for (int z = 0; z < H; z++)
        for (int x = 0; x < W; x++) {
            int a = z * (W + 1) + x + 1, c = a + W + 1;
            fprintf(f, "f %d %d %d\nf %d %d %d\n", a, c, a + 1, a + 1, c, c + 1);
        }
    int d0 = (W + 1) * (H + 1) + 1;
    if (big)
        fprintf(f, "g deck\nv 120 10 -120\nv 136 10 -120\nv 120 10 -136\nv 136 10 -136\n");
    else
        fprintf(f, "g deck\nv 4 10 -2\nv 10 10 -2\nv 4 10 -6\nv 10 10 -6\n");
    fprintf(f, "f %d %d %d\nf %d %d %d\n", d0, d0 + 2, d0 + 1, d0 + 1, d0 + 2, d0 + 3);
    fclose(f);
    char zone[600];
    snprintf(zone, sizeof zone, "%s/zone.json", g_dir);
    f = fopen(zone, "w");
    cr_assert_not_null(f);
    fputs("{\"zones\": [{\"name\": \"w\", \"transform\": [1, 0, 1, 0]}]}", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/tools/navbake/navbake' --obj '%s' --zone '%s' --out '%s/out' --quiet --walkable-as-is",
             root ? root : ".", obj, zone, g_dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    nm_error err = {0};
    nm_pack_load_opts lo = {0};
    snprintf(path, sizeof path, "%s/out/base.nav.gz", g_dir);
    cr_assert_eq(nm_pack_load(path, &lo, &b->pack, &err), NM_OK, "%s", err.msg);
    const nm_section *s = nm_pack_section(&b->pack, "BGRD");
    cr_assert_not_null(s);
    cr_assert_eq(nm_bgrd_parse(s->bytes, (size_t)s->size, &b->grid, &err), NM_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/out/base.fields.nav.gz", g_dir);
    cr_assert_eq(nm_bnvf_load(path, b->pack.build_hash, b->pack.file_fnv, &b->grid, &b->fields, &err), NM_OK, "%s",
                 err.msg);
    cr_assert_eq(nm_bnvf_zone_load(&b->fields, (uint32_t)b->fields.zone_of_bgrd[0], &b->fz, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_zone_clean_build(&b->pack, "w", 1, &b->zc, &err), NM_OK, "%s", err.msg);
}

static void unbake(baked *b)
{
    nm_zone_clean_free(b->zc);
    nm_bnvf_zone_data_free(&b->fz);
    nm_bnvf_free(&b->fields);
    nm_bgrd_free(&b->grid);
    nm_pack_free(&b->pack);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) {
    }
}

static void request_px(baked *b, nm_window_request *r, int workers, double x0, double y0, double x1, double y1);

static void request(baked *b, nm_window_request *r, int workers) { request_px(b, r, workers, -2, -2, 22, 14); }

static void request_px(baked *b, nm_window_request *r, int workers, double x0, double y0, double x1, double y1)
{
    memset(r, 0, sizeof *r);
    r->grid = &b->grid;
    r->bgrd_zone = 0;
    r->fields = &b->fields;
    r->fzone = &b->fz;
    r->zone_id = b->pack.zones[0].id;
    r->zc = b->zc;
    nm_error err = {0};
    cr_assert_eq(nm_window_frame_px(x0, y0, x1, y1, r, &err), NM_OK);
    r->workers = workers;
    /* seed: the floor at (1.1, 1.1) px — pick it from a patch like the planner does */
    nm_bgrd_out p;
    memset(&p, 0, sizeof p);
    cr_assert_eq(nm_bgrd_decode_rect(&b->grid, 0, 0, 0, 40, 40, NULL, 1, &p, &err), NM_OK, "%s", err.msg);
    nm_region_pick pk;
    cr_assert_eq(nm_pick_region(&p, 1.1, 1.1, 1.1, 1.1, 0.0, NULL, 0, 0, false, 0, &pk, &err), NM_OK, "%s", err.msg);
    nm_bgrd_out_free(&p);
    r->region = pk.region;
    r->seed_gx = pk.seed_gx;
    r->seed_gy = pk.seed_gy;
    r->seed_h = pk.seed_h;
}

Test(window_bake, deck_spans_stay_with_vis3_zero_walls_kept_reach_covers_floor, .timeout = 120)
{
    baked b;
    memset(&b, 0, sizeof b);
    bake(&b);
    nm_window_request r;
    request(&b, &r, 1);
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(nm_window_build(&r, &w, &err), NM_OK, "%s", err.msg);
    /* a cell under the deck: (7, 4) px */
    uint32_t c = (uint32_t)((int64_t)(4.0 / 0.25) - w.gy0) * (uint32_t)w.win.nx + (uint32_t)((int64_t)(7.0 / 0.25) - w.gx0);
    uint32_t first, n = nm_span_cell_spans(&w.spans, c, &first);
    cr_assert_eq(n, 2, "floor and deck");
    cr_expect_eq(w.sp_bits[first] & (NM_SP_VIS3 | NM_SP_REACH), NM_SP_VIS3 | NM_SP_REACH);
    cr_expect_eq(w.sp_bits[first + 1] & NM_SP_VIS3, 0);
    cr_expect_float_eq(w.spans.sp_h[first + 1], 10.0f, 0.05);
    cr_expect_gt(w.nwalls_kept, 0, "the floor's outline is kept by the floor region");
    /* every floor span with a component reaches (one open floor) */
    uint32_t vis = 0, reach = 0;
    for (uint32_t k = 0; k < w.spans.nspans; k++) {
        if (!(w.sp_bits[k] & NM_SP_VIS3)) continue;
        vis++;
        reach += (w.sp_bits[k] & NM_SP_REACH) != 0;
    }
    cr_expect_gt(vis, 1000);
    cr_expect_eq(reach, vis);
    nm_window_free(&w);
    unbake(&b);
}

Test(window_bake, window_does_not_depend_on_the_worker_count, .timeout = 120)
{
    baked b;
    memset(&b, 0, sizeof b);
    bake(&b);
    nm_window_request r1, r4;
    request(&b, &r1, 1);
    request(&b, &r4, 4);
    nm_window a, c;
    nm_error err = {0};
    cr_assert_eq(nm_window_build(&r1, &a, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_window_build(&r4, &c, &err), NM_OK, "%s", err.msg);
    size_t cells = (size_t)a.win.nx * (size_t)a.win.ny;
    cr_expect_eq(memcmp(a.lay, c.lay, cells), 0);
    cr_expect_eq(memcmp(a.core, c.core, cells), 0);
    cr_expect_eq(memcmp(a.dist, c.dist, cells * sizeof(float)), 0);
    cr_expect_eq(memcmp(a.stepbits, c.stepbits, cells), 0);
    cr_assert_eq(a.spans.nspans, c.spans.nspans);
    cr_expect_eq(memcmp(a.spans.sp_h, c.spans.sp_h, a.spans.nspans * sizeof(float)), 0);
    cr_expect_eq(memcmp(a.sp_bits, c.sp_bits, a.spans.nspans), 0);
    cr_assert_eq(a.nsegs, c.nsegs);
    for (uint32_t k = 0; k < a.nsegs; k++)
        cr_expect(a.segs[k].ax == c.segs[k].ax && a.segs[k].ay == c.segs[k].ay && a.segs[k].bx == c.segs[k].bx &&
                      a.segs[k].by == c.segs[k].by && a.segs[k].kind == c.segs[k].kind,
                  "segment %u", k);
    cr_expect_eq(a.seed_span, c.seed_span);
    nm_window_free(&a);
    nm_window_free(&c);
    unbake(&b);
}

/* The request reads its tiles through a new, empty tile cache. */
static void read_through_cache(nm_window_request *r, nm_bgrd_cache *cache, nm_bgrd_out *ws)
{
    memset(cache, 0, sizeof *cache);
    memset(ws, 0, sizeof *ws);
    ws->cache = cache;
    r->reuse = ws;
}

static void expect_same_window(const nm_window *a, const nm_window *c, const char *what)
{
    size_t cells = (size_t)a->win.nx * (size_t)a->win.ny;
    cr_assert_eq(a->win.nx, c->win.nx, "%s", what);
    cr_assert_eq(a->win.ny, c->win.ny, "%s", what);
    cr_expect_eq(memcmp(a->lay, c->lay, cells), 0, "%s: lay", what);
    cr_expect_eq(memcmp(a->core, c->core, cells), 0, "%s: core", what);
    cr_expect_eq(memcmp(a->dist, c->dist, cells * sizeof(float)), 0, "%s: dist", what);
    cr_expect_eq(memcmp(a->medial, c->medial, cells), 0, "%s: medial", what);
    cr_expect_eq(memcmp(a->stepbits, c->stepbits, cells), 0, "%s: stepbits", what);
    cr_assert_eq(a->spans.nspans, c->spans.nspans, "%s: spans", what);
    cr_assert_eq(a->spans.nocc, c->spans.nocc, "%s: occupied cells", what);
    cr_expect_eq(memcmp(a->spans.sp_cell, c->spans.sp_cell, a->spans.nspans * sizeof(uint32_t)), 0, "%s: sp_cell", what);
    cr_expect_eq(memcmp(a->spans.sp_h, c->spans.sp_h, a->spans.nspans * sizeof(float)), 0, "%s: sp_h", what);
    cr_expect_eq(memcmp(a->sp_bits, c->sp_bits, a->spans.nspans), 0, "%s: sp_bits", what);
    cr_expect_eq(memcmp(a->spans.cs, c->spans.cs, (a->spans.nocc + 1) * sizeof(uint32_t)), 0, "%s: cs", what);
    cr_expect_eq(memcmp(a->spans.face, c->spans.face, a->spans.nocc), 0, "%s: face", what);
    cr_expect_eq(memcmp(a->spans.occ_bits, c->spans.occ_bits, (cells + 63) / 64 * sizeof(uint64_t)), 0, "%s: occ", what);
    cr_assert_eq(a->nsegs, c->nsegs, "%s: segments", what);
    for (uint32_t k = 0; k < a->nsegs; k++)
        cr_expect(a->segs[k].ax == c->segs[k].ax && a->segs[k].ay == c->segs[k].ay && a->segs[k].bx == c->segs[k].bx &&
                      a->segs[k].by == c->segs[k].by && a->segs[k].kind == c->segs[k].kind,
                  "%s: segment %u", what, k);
    cr_expect_eq(a->seed_span, c->seed_span, "%s: seed span", what);
    cr_expect_eq(a->reach_comps, c->reach_comps, "%s: reach set", what);
}

Test(window_bake, tiles_read_in_place_give_the_window_of_the_decoded_record_table, .timeout = 240)
{
    baked b;
    memset(&b, 0, sizeof b);
    bake_obj(&b, 1);
    cr_assert_geq(b.grid.zones[0].tile_count, 4, "the world spans several tiles");
    /* a window off the tile lines, crossing the seams at 128 px both ways */
    nm_window_request r;
    request_px(&b, &r, 2, 0.6, 0.9, 139, 137.6);
    nm_error err = {0};
    /* the oracle: the rectangle decoded into one record table (window cell numbers) */
    nm_bgrd_out out;
    memset(&out, 0, sizeof out);
    cr_assert_eq(nm_bgrd_decode_rect(&b.grid, 0, (int32_t)r.gx0, (int32_t)r.gy0, (int32_t)(r.gx0 + r.nx),
                                     (int32_t)(r.gy0 + r.ny), &b.fields, 1, &out, &err),
                 NM_OK, "%s", err.msg);
    nm_window want;
    cr_assert_eq(nm_window_build_records(&r, out.recs, out.fields, out.n, &want, &err), NM_OK, "%s", err.msg);
    nm_bgrd_out_free(&out);
    cr_expect_gt(want.spans.nspans, 250000);
    /* no cache: every tile decoded band by band into the build's own buffers */
    nm_window w;
    cr_assert_eq(nm_window_build(&r, &w, &err), NM_OK, "%s", err.msg);
    expect_same_window(&want, &w, "no cache");

    /* one tile decoding at a time unless two fit in 24 B a cell, its sidecar fields only for its
     * records inside the window, the clearance stored in 2 B a cell until step 12: 34.1 B a cell
     * here (with a 4 B clearance layer from step 5 on: 36.1; two whole tiles decoding at once with
     * every record's fields: 47; one tile with every record's fields: 38.5) */
    cr_expect_leq(w.peak_bytes_per_cell, 35.0, "peak %.2f bytes a cell", w.peak_bytes_per_cell);
    nm_window_free(&w);
    /* one worker: the same (the whole tile while it decodes, and the band's tiles held as their
     * spans in the window, cells already expanded: 16 B a span; the cut records and their sidecar
     * columns took 28 B a record: 47.2 B a cell here) */
    const int workers = r.workers;
    r.workers = 1;
    cr_assert_eq(nm_window_build(&r, &w, &err), NM_OK, "%s", err.msg);
    expect_same_window(&want, &w, "no cache, one worker");
    cr_expect_eq(w.tiles_paired, 0, "one worker decodes one tile at a time");
    cr_expect_leq(w.peak_bytes_per_cell, 35.0, "peak %.2f bytes a cell", w.peak_bytes_per_cell);
    nm_window_free(&w);
    r.workers = workers;
    /* a cache that holds every tile (filled by the first build, read by the second) */
    nm_bgrd_cache cache;
    nm_bgrd_out ws;
    read_through_cache(&r, &cache, &ws);
    /* read in place, the window holds only its layers and span table: <= 24 B a cell (the
     * record table made it ~57 here) */
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(nm_window_build(&r, &w, &err), NM_OK, "%s", err.msg);
        expect_same_window(&want, &w, round ? "cache hits" : "cache filled");
        cr_expect_leq(w.peak_bytes_per_cell, 24.0, "peak %.2f bytes a cell", w.peak_bytes_per_cell);
        nm_window_free(&w);
    }
    cr_expect_gt(cache.hits, 0);
    nm_bgrd_cache_free(&cache);
    /* a cache with room for one tile: some tiles read in place, the others decoded by the build */
    memset(&cache, 0, sizeof cache);
    size_t one = 0;
    for (uint32_t t = 0; t < b.grid.zones[0].tile_count; t++) {
        size_t bytes = b.grid.zones[0].tiles[t].records * (sizeof(nm_grid_rec) + sizeof(nm_span_fields));
        if (bytes > one) one = bytes;
    }
    cache.budget = one;
    ws.cache = &cache;
    cr_assert_eq(nm_window_build(&r, &w, &err), NM_OK, "%s", err.msg);
    expect_same_window(&want, &w, "cache of one tile");
    nm_window_free(&w);
    nm_bgrd_cache_free(&cache);
    nm_bgrd_out_free(&ws);
    nm_window_free(&want);
    unbake(&b);
}

/* Step 5 decodes two tiles side by side where the window's bytes allow (24 B a cell, every record
 * of both and its fields counted): a window over nine tiles built on two workers pairs tiles, and
 * is the window one worker builds a tile at a time, within 24 B a cell. */
Test(window_bake, tiles_decoded_side_by_side_give_the_same_window, .timeout = 240)
{
    baked b;
    memset(&b, 0, sizeof b);
    bake_obj(&b, 2);
    cr_assert_geq(b.grid.zones[0].tile_count, 9, "the world spans nine tiles");
    nm_window_request r;
    request_px(&b, &r, 2, 0.6, 0.9, 349, 348.2);
    nm_error err = {0};
    nm_window two, one;
    cr_assert_eq(nm_window_build(&r, &two, &err), NM_OK, "%s", err.msg);
    cr_expect_gt(two.tiles_paired, 0, "no tiles decoded side by side");
    cr_expect_leq(two.peak_bytes_per_cell, 24.0, "peak %.2f bytes a cell", two.peak_bytes_per_cell);
    r.workers = 1;
    cr_assert_eq(nm_window_build(&r, &one, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(one.tiles_paired, 0);
    expect_same_window(&one, &two, "two workers");
    nm_window_free(&two);
    /* the tiles read in place from a cache, their rows judged on two workers (16-row chunks) */
    nm_bgrd_cache cache;
    nm_bgrd_out ws;
    read_through_cache(&r, &cache, &ws);
    r.workers = 2;
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(nm_window_build(&r, &two, &err), NM_OK, "%s", err.msg);
        expect_same_window(&one, &two, round ? "cache hits, two workers" : "cache filled, two workers");
        nm_window_free(&two);
    }
    cr_expect_gt(cache.hits, 0);
    nm_bgrd_cache_free(&cache);
    nm_bgrd_out_free(&ws);
    nm_window_free(&one);
    unbake(&b);
}

/* 建窗的复用: a window built for one seed is the window of another seed in the same component
 * (the reach set is the component's closure): nm_window_reseed moves the seed and the window then
 * equals a fresh build field by field; a seed whose component the window's reach set is not
 * built from, or one outside the window, does not fit. */
Test(window_bake, a_kept_window_fits_a_seed_of_the_same_component, .timeout = 120)
{
    baked b;
    memset(&b, 0, sizeof b);
    bake(&b);
    nm_window_request r;
    request(&b, &r, 1);
    nm_bgrd_cache cache;
    nm_bgrd_out ws;
    read_through_cache(&r, &cache, &ws);
    nm_error err = {0};
    nm_window kept;
    cr_assert_eq(nm_window_build(&r, &kept, &err), NM_OK, "%s", err.msg);
    cr_assert_gt(kept.seed_comp, 0);
    /* another floor cell (18.6, 10.4) px, the same flat floor: one component */
    nm_window_request r2 = r;
    r2.seed_gx = (int64_t)floor(18.6 / NM_kCS);
    r2.seed_gy = (int64_t)floor(10.4 / NM_kCS);
    nm_window fresh;
    cr_assert_eq(nm_window_build(&r2, &fresh, &err), NM_OK, "%s", err.msg);
    cr_assert_neq(fresh.seed_span, kept.seed_span);
    bool fits = false;
    cr_assert_eq(nm_window_reseed(&kept, &r2, &fits, &err), NM_OK, "%s", err.msg);
    cr_assert(fits, "the same component");
    expect_same_window(&fresh, &kept, "reseeded");
    cr_expect_eq(kept.seed_cell, fresh.seed_cell);
    cr_expect_eq(kept.seed_comp, fresh.seed_comp);
    /* a window whose reach set came from another component */
    kept.seed_comp++;
    cr_assert_eq(nm_window_reseed(&kept, &r2, &fits, &err), NM_OK, "%s", err.msg);
    cr_expect_not(fits, "another component");
    kept.seed_comp--;
    nm_window_request r3 = r2;
    r3.seed_gx = kept.gx0 + kept.win.nx;
    cr_assert_eq(nm_window_reseed(&kept, &r3, &fits, &err), NM_OK, "%s", err.msg);
    cr_expect_not(fits, "outside the window");
    nm_window_free(&fresh);
    nm_window_free(&kept);
    nm_bgrd_cache_free(&cache);
    nm_bgrd_out_free(&ws);
    unbake(&b);
}
