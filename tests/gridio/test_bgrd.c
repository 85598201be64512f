/* test_bgrd.c — BGRD v3 (design article 格图段): tiling with aprons, round trips of hand-made
 * zones for whole-zone and sub-rectangle decodes, worker-count independence, the Up / Down
 * predictor choice, height quantisation and Fill records, bytes per record on a realistic
 * synthetic zone, and a corruption suite. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid/grid.h"
#include "gridio_fixture.h"

/* Small tiles so that a zone of a few thousand cells has many tiles and aprons. */
static const nm_bgrd_write_opts k_small = {16, 4, 6, 1};

static void parse_ok(const nm_buf *b, nm_bgrd *g)
{
    nm_error e = {0};
    int rc = nm_bgrd_parse(b->p, b->size, g, &e);
    cr_assert_eq(rc, NM_OK, "parse: %s", e.msg);
}

static void decode_ok(const nm_bgrd *g, uint32_t zone, int32_t gx0, int32_t gy0, int32_t gx1, int32_t gy1,
                      int workers, nm_bgrd_out *out)
{
    nm_error e = {0};
    int rc = nm_bgrd_decode_rect(g, zone, gx0, gy0, gx1, gy1, NULL, workers, out, &e);
    cr_assert_eq(rc, NM_OK, "decode: %s", e.msg);
}

/* Offset of tile t's directory entry in zone 0 (the first zone directory starts at byte 40). */
static size_t entry_at(const nm_buf *b, uint32_t t)
{
    uint32_t len;
    memcpy(&len, b->p + 40, 4);
    return 40 + 4 + ((len + 3u) & ~3u) + 8 + 8 + 4 + 4 + (size_t)t * NM_BGRD_TILE_ENTRY_SIZE;
}

static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

Test(bgrd, tiles_cover_the_zone_without_overlap_and_aprons_repeat_neighbour_records)
{
    fx_zone z;
    fx_zone_build(&z, "alpha", 10.3, -5.1, 70, 50, 6, fx_mixed_cell, NULL, 1);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &k_small, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    cr_assert_eq(g.zone_count, 1);
    cr_assert_eq(g.cell_size, 0.25);
    cr_assert_eq(g.tile_px, 4.0);
    cr_assert_eq(g.apron_px, 1.0);
    const nm_bgrd_zone *gz = &g.zones[0];
    cr_assert_str_eq(gz->name, "alpha");
    cr_assert_eq(gz->global_regions, 6);
    cr_assert_eq(gz->tile_count, 5 * 4);
    int32_t zx = (int32_t)llround(10.3 / 0.25), zy = (int32_t)llround(-5.1 / 0.25);
    uint8_t *owned = calloc(70 * 50, 1);
    uint64_t dir_records = 0;
    for (uint32_t t = 0; t < gz->tile_count; t++) {
        const nm_bgrd_tile *e = &gz->tiles[t];
        cr_assert_eq(e->nx, 16 + 2 * 4 + 1, "window is own + 2 aprons + 1 cell");
        dir_records += e->records;
        for (int32_t y = e->py0; y <= e->py1; y++)
            for (int32_t x = e->px0; x <= e->px1; x++) {
                int32_t gx = e->gx0 + x - zx, gy = e->gy0 + y - zy;
                cr_assert(gx >= 0 && gy >= 0 && gx < 70 && gy < 50, "own cell outside the zone");
                cr_assert_eq(owned[gy * 70 + gx]++, 0, "two tiles own cell (%d, %d)", gx, gy);
            }
    }
    for (int i = 0; i < 70 * 50; i++) cr_assert_eq(owned[i], 1, "cell %d owned by no tile", i);
    cr_assert_gt(dir_records, z.n, "aprons hold copies of the neighbours' records");
    free(owned);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd, whole_zone_round_trip_of_two_zones)
{
    fx_zone z[2];
    fx_zone_build(&z[0], "alpha", 10.3, -5.1, 70, 50, 6, fx_mixed_cell, NULL, 1);
    fx_zone_build(&z[1], "zone_b5", 0, 0, 20, 9, 6, fx_mixed_cell, NULL, 2);
    nm_buf b = {0};
    fx_write_bgrd(z, 2, &k_small, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    cr_assert_eq(nm_bgrd_find_zone(&g, "zone_b5"), 1);
    cr_assert_eq(nm_bgrd_find_zone(&g, "zone_b"), -1);
    nm_bgrd_out out = {0};
    for (int k = 0; k < 2; k++) {
        int32_t zx = (int32_t)llround(z[k].src.x0 / 0.25), zy = (int32_t)llround(z[k].src.y0 / 0.25);
        /* The zone rectangle plus a margin: the margin has no records. */
        decode_ok(&g, (uint32_t)k, zx - 3, zy - 2, zx + z[k].src.w + 5, zy + z[k].src.h + 1, 2, &out);
        cr_assert_eq(out.n, z[k].n);
        cr_assert_eq(fx_check_rect(&z[k], &out, false), z[k].n);
    }
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z[0]);
    fx_zone_free(&z[1]);
}

Test(bgrd, sub_rectangles_hold_exactly_their_cells)
{
    fx_zone z;
    fx_zone_build(&z, "alpha", 10.3, -5.1, 70, 50, 6, fx_mixed_cell, NULL, 3);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &k_small, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    int32_t zx = (int32_t)llround(10.3 / 0.25), zy = (int32_t)llround(-5.1 / 0.25);
    fx_rng rng = {42};
    nm_bgrd_out out = {0};
    size_t total = 0;
    for (int i = 0; i < 40; i++) {
        int32_t x0 = zx - 5 + (int32_t)(fx_next(&rng) % 80), y0 = zy - 5 + (int32_t)(fx_next(&rng) % 60);
        int32_t x1 = x0 + 1 + (int32_t)(fx_next(&rng) % 30), y1 = y0 + 1 + (int32_t)(fx_next(&rng) % 30);
        decode_ok(&g, 0, x0, y0, x1, y1, 1 + i % 4, &out);
        total += fx_check_rect(&z, &out, false);
    }
    cr_assert_gt(total, 0);
    /* One cell exactly on a tile corner. */
    decode_ok(&g, 0, zx + 16, zy + 16, zx + 17, zy + 17, 1, &out);
    uint32_t want = z.start[16 * 70 + 17] - z.start[16 * 70 + 16];
    cr_assert_eq(out.n, want);
    fx_check_rect(&z, &out, false);
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd, one_worker_and_four_workers_give_identical_output)
{
    fx_zone z;
    fx_zone_build(&z, "alpha", 0, 0, 90, 70, 6, fx_mixed_cell, NULL, 4);
    nm_buf b1 = {0}, b4 = {0};
    nm_bgrd_write_opts o1 = k_small, o4 = k_small;
    o4.workers = 4;
    fx_write_bgrd(&z, 1, &o1, &b1);
    fx_write_bgrd(&z, 1, &o4, &b4);
    cr_assert_eq(b1.size, b4.size);
    cr_assert_eq(memcmp(b1.p, b4.p, b1.size), 0, "writer output depends on the worker count");
    nm_bgrd g;
    parse_ok(&b1, &g);
    nm_bgrd_out a = {0}, c = {0};
    decode_ok(&g, 0, -2, -3, 85, 66, 1, &a);
    decode_ok(&g, 0, -2, -3, 85, 66, 4, &c);
    cr_assert_gt(a.n, 1000);
    cr_assert_eq(a.n, c.n);
    cr_assert_eq(memcmp(a.recs, c.recs, a.n * sizeof *a.recs), 0);
    /* Reusing the buffer for a smaller rectangle and again for the large one gives the same. */
    decode_ok(&g, 0, 3, 3, 9, 9, 4, &c);
    decode_ok(&g, 0, -2, -3, 85, 66, 3, &c);
    cr_assert_eq(memcmp(a.recs, c.recs, a.n * sizeof *a.recs), 0);
    nm_bgrd_out_free(&a);
    nm_bgrd_out_free(&c);
    nm_bgrd_free(&g);
    nm_buf_free(&b1);
    nm_buf_free(&b4);
    fx_zone_free(&z);
}

/* Views of many tiles at once (a window's step 3): the tiles go heaviest first to whichever worker
 * is free, so the records must not depend on the worker count, and of two bad tiles the error
 * names the first in the list (the serial decode's), not the first decoded: here the later one is
 * the heavier, decoded first. */
Test(bgrd, views_do_not_depend_on_the_workers_and_name_the_first_bad_tile_of_the_list)
{
    fx_zone z;
    fx_zone_build(&z, "alpha", 0, 0, 90, 70, 6, fx_mixed_cell, NULL, 4);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &k_small, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    const nm_bgrd_zone *gz = &g.zones[0];
    const uint32_t n = gz->tile_count;
    cr_assert_gt(n, 8);
    uint32_t *ids = calloc(n, sizeof *ids);
    nm_bgrd_tile_view *views = calloc(n, sizeof *views);
    for (uint32_t k = 0; k < n; k++) ids[k] = n - 1 - k; /* list order is not directory order */
    nm_bgrd_scratch s = {0};
    nm_error e = {0};
    for (int workers = 1; workers <= 4; workers++) {
        nm_bgrd_out ws = {0};
        cr_assert_eq(nm_bgrd_view_tiles(&g, 0, ids, n, NULL, NULL, workers, &ws, views, &e), NM_OK, "%s", e.msg);
        for (uint32_t k = 0; k < n; k++) {
            const uint32_t recs = gz->tiles[ids[k]].records;
            cr_assert_eq(views[k].n, recs);
            if (!recs) continue;
            nm_grid_rec *want = calloc(recs, sizeof *want);
            cr_assert_eq(nm_bgrd_decode_tile(&g, 0, ids[k], &s, want, &e), NM_OK, "%s", e.msg);
            cr_assert_eq(memcmp(views[k].recs, want, recs * sizeof *want), 0, "workers %d, tile %u", workers,
                         ids[k]);
            free(want);
            nm_bgrd_tile_view_free(&views[k]);
        }
        nm_bgrd_out_free(&ws);
    }
    /* two bad tiles: a light one early in the list, a heavier one later */
    uint32_t light = UINT32_MAX, heavy = UINT32_MAX;
    for (uint32_t k = 0; k < n && light == UINT32_MAX; k++)
        for (uint32_t q = k + 1; q < n; q++)
            if (gz->tiles[ids[k]].records && gz->tiles[ids[q]].records > gz->tiles[ids[k]].records + 4) {
                light = k;
                heavy = q;
                break;
            }
    cr_assert_neq(light, UINT32_MAX);
    const uint32_t bad[2] = {ids[light], ids[heavy]};
    for (int i = 0; i < 2; i++) /* the record count of the tile's header: past any directory's */
        memset(b.p + gz->tiles[bad[i]].offset, 0x7f, 1);
    char name[32];
    snprintf(name, sizeof name, "tile %u:", bad[0]);
    for (int workers = 1; workers <= 4; workers++) {
        nm_bgrd_out ws = {0};
        memset(&e, 0, sizeof e);
        cr_assert_eq(nm_bgrd_view_tiles(&g, 0, ids, n, NULL, NULL, workers, &ws, views, &e), NM_ERR_CORRUPT,
                     "workers %d", workers);
        cr_assert(strstr(e.msg, name), "workers %d: '%s' does not name %s", workers, e.msg, name);
        for (uint32_t k = 0; k < n; k++)
            cr_assert_null(views[k].recs, "workers %d: a failed view keeps records", workers);
        nm_bgrd_out_free(&ws);
    }
    free(ids);
    free(views);
    nm_bgrd_scratch_free(&s);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

/* The checks read one field of a tile (issue 14: the core distance the flags, the region's box
 * the region): every mask gives the fields it asks for bit-identical to a whole decode, and 0 in
 * the others (height brings the flags along: Fill records decode to h = 0). */
Test(bgrd, a_decode_of_some_fields_gives_those_fields_of_the_whole_decode)
{
    fx_zone z;
    fx_zone_build(&z, "some", 0, 0, 90, 70, 6, fx_mixed_cell, NULL, 11);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &k_small, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    nm_bgrd_scratch s = {0};
    nm_error e = {0};
    size_t checked = 0, whole = 0, upper = 0;
    for (uint32_t ti = 0; ti < g.zones[0].tile_count; ti++) {
        uint32_t n = g.zones[0].tiles[ti].records;
        if (!n) continue;
        nm_grid_rec *all = calloc(n, sizeof *all), *some = calloc(n, sizeof *some);
        cr_assert_eq(nm_bgrd_decode_tile(&g, 0, ti, &s, all, &e), NM_OK, "%s", e.msg);
        whole++;
        for (uint32_t r = 1; r < n; r++)
            upper += all[r].cell == all[r - 1].cell;
        for (unsigned want = 0; want <= NM_BGRD_ALL_FIELDS; want++) {
            memset(some, 0xa5, n * sizeof *some);
            cr_assert_eq(nm_bgrd_decode_tile_fields(&g, 0, ti, want, &s, some, &e), NM_OK, "%s", e.msg);
            unsigned w = want & NM_BGRD_F_HEIGHT ? want | NM_BGRD_F_FLAGS : want;
            whole += w == NM_BGRD_ALL_FIELDS;
            for (uint32_t r = 0; r < n; r++) {
                cr_assert_eq(some[r].cell, all[r].cell);
                cr_assert_eq(some[r].rid, w & NM_BGRD_F_REGION ? all[r].rid : 0u, "tile %u want %u", ti, want);
                cr_assert_eq(some[r].h, w & NM_BGRD_F_HEIGHT ? all[r].h : 0.0f, "tile %u want %u", ti, want);
                cr_assert_eq(some[r].clr, w & NM_BGRD_F_CLR ? all[r].clr : 0, "tile %u want %u", ti, want);
                cr_assert_eq(some[r].flags, w & NM_BGRD_F_FLAGS ? all[r].flags : 0, "tile %u want %u", ti, want);
                cr_assert_eq(some[r].steps, w & NM_BGRD_F_STEPS ? all[r].steps : 0, "tile %u want %u", ti, want);
                checked++;
            }
        }
        free(all);
        free(some);
    }
    cr_assert_gt(checked, 32 * 1000);
    /* the whole decodes took the one-pass layer 0 (the field-by-field passes give the same
     * records, but a value check that failed on good data would hide behind them), and cells
     * with upper layers were read on after it */
    cr_assert_eq(s.layer0_passes, whole, "%llu of %zu", (unsigned long long)s.layer0_passes, whole);
    cr_assert_gt(upper, 100);
    nm_bgrd_scratch_free(&s);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

static int left_strip_cell(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out)
{
    return x < 20 ? fx_mixed_cell(ctx, x, y, rng, out) : 0;
}

Test(bgrd, empty_tiles_keep_a_directory_entry_and_decode_to_nothing)
{
    fx_zone z;
    fx_zone_build(&z, "strip", 0, 0, 64, 20, 6, left_strip_cell, NULL, 5);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &k_small, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    cr_assert_eq(g.zones[0].tile_count, 4 * 2);
    int empty = 0;
    for (uint32_t t = 0; t < g.zones[0].tile_count; t++) empty += g.zones[0].tiles[t].records == 0;
    cr_assert_eq(empty, 2 * 2, "tiles 2 and 3 of each row lie beyond x = 20 + apron");
    nm_bgrd_out out = {0};
    decode_ok(&g, 0, 0, 0, 64, 20, 4, &out);
    cr_assert_eq(out.n, z.n);
    fx_check_rect(&z, &out, false);
    decode_ok(&g, 0, 40, 0, 64, 20, 4, &out);
    cr_assert_eq(out.n, 0);
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

/* ---- predictor choice -------------------------------------------------------------------------- */

/* Two floors a fixed 3 m apart over noisy ground: the second layer repeats the first (Down). */
static int stacked_floors(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out)
{
    (void)ctx;
    (void)x;
    (void)y;
    float g = (float)(10.0 + floor(fx_unit(rng) * 320.0) / 64.0);
    uint16_t clr = (uint16_t)(fx_next(rng) % 2000);
    uint8_t st = (uint8_t)fx_next(rng);
    out[0] = (nm_grid_rec){0, 1, g, clr, NM_GRID_WALK | NM_GRID_CORE, st};
    out[1] = (nm_grid_rec){0, 2, g + 3.0f, clr, NM_GRID_WALK | NM_GRID_CORE, st};
    return 2;
}

/* A smooth upper ramp over noisy ground: the second layer follows its column (Up). */
static int ramp_over_noise(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out)
{
    (void)ctx;
    (void)x;
    float g = (float)(10.0 + floor(fx_unit(rng) * 320.0) / 64.0);
    out[0] = (nm_grid_rec){0, 1, g, (uint16_t)(fx_next(rng) % 2000), NM_GRID_WALK, (uint8_t)fx_next(rng)};
    out[1] = (nm_grid_rec){0, 2, 30.0f + 0.25f * y, 100, NM_GRID_WALK | NM_GRID_CORE, 0};
    return 2;
}

/* Reads the select bytes of the single tile of a one-zone section. */
static void read_select(const nm_buf *b, uint8_t sel[10])
{
    size_t e = entry_at(b, 0);
    uint64_t off;
    memcpy(&off, b->p + e + 32, 8);
    nm_cursor c = nm_cur(b->p + off, b->size - off);
    (void)nm_cur_varint(&c);
    (void)nm_cur_f32(&c);
    (void)nm_cur_varint(&c);
    (void)nm_cur_varint(&c);
    cr_assert_eq(nm_cur_varint(&c), 2, "kmax");
    memcpy(sel, nm_cur_bytes(&c, 10), 10);
    cr_assert_not(c.bad);
}

Test(bgrd, down_wins_where_floors_repeat_and_up_wins_along_a_ramp)
{
    const nm_bgrd_write_opts one = {32, -1, 6, 1}; /* one 33 x 33 tile, no apron */
    fx_zone z;
    uint8_t sel[10];
    nm_bgrd g;
    nm_bgrd_out out = {0};

    fx_zone_build(&z, "floors", 0, 0, 32, 32, 2, stacked_floors, NULL, 6);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &one, &b);
    read_select(&b, sel);
    for (int f = 0; f < 5; f++) cr_assert_eq(sel[f * 2 + 0], NM_BGRD_PRED_UP, "layer 0 is always Up");
    cr_assert_eq(sel[0 * 2 + 1], NM_BGRD_PRED_DOWN, "height: layer 1 = layer 0 + 3 m");
    cr_assert_eq(sel[2 * 2 + 1], NM_BGRD_PRED_DOWN, "clr repeats");
    cr_assert_eq(sel[4 * 2 + 1], NM_BGRD_PRED_DOWN, "steps repeat");
    parse_ok(&b, &g);
    decode_ok(&g, 0, 0, 0, 32, 32, 1, &out);
    cr_assert_eq(fx_check_rect(&z, &out, false), z.n);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);

    fx_zone_build(&z, "ramp", 0, 0, 32, 32, 2, ramp_over_noise, NULL, 7);
    fx_write_bgrd(&z, 1, &one, &b);
    read_select(&b, sel);
    cr_assert_eq(sel[0 * 2 + 1], NM_BGRD_PRED_UP, "height: the ramp rises 16 steps a row");
    cr_assert_eq(sel[2 * 2 + 1], NM_BGRD_PRED_UP, "clr constant on the ramp");
    parse_ok(&b, &g);
    decode_ok(&g, 0, 0, 0, 32, 32, 1, &out);
    cr_assert_eq(fx_check_rect(&z, &out, false), z.n);
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd, encode_tile_reports_the_select_bytes_it_writes)
{
    nm_grid_rec r[3] = {{5, 1, 1.0f, 3, 2, 0}, {5, 1, 2.0f, 3, 2, 0}, {7, 2, 1.5f, 0, 2, 0}};
    nm_buf b = {0};
    uint8_t sel[10] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    uint32_t kmax = 0;
    nm_error e = {0};
    cr_assert_eq(nm_bgrd_encode_tile(r, 3, 4, 4, 2, 6, &b, sel, sizeof sel, &kmax, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(kmax, 2);
    for (int i = 0; i < 10; i++) cr_assert(sel[i] <= 1);
    /* Unsorted layers and a rid above global_regions are refused. */
    nm_grid_rec bad[2] = {{5, 1, 2.0f, 3, 2, 0}, {5, 1, 1.0f, 3, 2, 0}};
    cr_assert_eq(nm_bgrd_encode_tile(bad, 2, 4, 4, 2, 6, &b, NULL, 0, NULL, &e), NM_ERR_ARG);
    cr_assert(strstr(e.msg, "canonical order"));
    cr_assert_eq(nm_bgrd_encode_tile(r, 3, 4, 4, 1, 6, &b, NULL, 0, NULL, &e), NM_ERR_ARG);
    nm_buf_free(&b);
}

/* ---- heights ----------------------------------------------------------------------------------- */

static int fill_below(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out)
{
    (void)ctx;
    (void)rng;
    int k = 0;
    if ((x + y) % 3 == 0) out[k++] = (nm_grid_rec){0, 1, -50.0f, 0, NM_GRID_FILL, 0};
    out[k++] = (nm_grid_rec){0, 1, 100.0f + (float)(x * 7 + y) / 64.0f, 9, NM_GRID_WALK, 0};
    return k;
}

Test(bgrd, fill_records_decode_to_zero_and_do_not_lower_hmin)
{
    const nm_bgrd_write_opts one = {16, -1, 6, 1};
    fx_zone z;
    fx_zone_build(&z, "fill", 0, 0, 16, 16, 1, fill_below, NULL, 8);
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &one, &b);
    size_t e = entry_at(&b, 0);
    uint64_t off;
    memcpy(&off, b.p + e + 32, 8);
    nm_cursor c = nm_cur(b.p + off, b.size - off);
    (void)nm_cur_varint(&c);
    cr_assert_eq(nm_cur_f32(&c), 100.0f, "hmin is the lowest real height");
    nm_bgrd g;
    parse_ok(&b, &g);
    nm_bgrd_out out = {0};
    decode_ok(&g, 0, 0, 0, 16, 16, 1, &out);
    cr_assert_eq(out.n, z.n);
    size_t fills = 0;
    for (size_t i = 0; i < out.n; i++) {
        if (out.recs[i].flags & NM_GRID_FILL) {
            fills++;
            cr_assert_eq(out.recs[i].h, 0.0f);
        } else {
            int32_t x = out.recs[i].cell % 16, y = out.recs[i].cell / 16;
            cr_assert_eq(out.recs[i].h, 100.0f + (float)(x * 7 + y) / 64.0f, "multiples of 1/64 are exact");
        }
    }
    cr_assert_gt(fills, 50);
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd, heights_round_to_the_nearest_64th_above_the_tile_minimum)
{
    const nm_bgrd_write_opts one = {16, -1, 6, 1};
    fx_zone z;
    fx_zone_build(&z, "q", 0, 0, 16, 16, 6, fx_mixed_cell, NULL, 9);
    float hmin = INFINITY;
    for (size_t i = 0; i < z.n; i++)
        if (!(z.recs[i].flags & NM_GRID_FILL) && z.recs[i].h < hmin) hmin = z.recs[i].h;
    nm_buf b = {0};
    fx_write_bgrd(&z, 1, &one, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    nm_bgrd_out out = {0};
    decode_ok(&g, 0, 0, 0, 16, 16, 1, &out);
    cr_assert_eq(out.n, z.n);
    for (size_t i = 0; i < out.n; i++) {
        if (out.recs[i].flags & NM_GRID_FILL) continue;
        /* out is in tile order = zone order for a single tile */
        double q = round(((double)z.recs[i].h - hmin) * 64.0);
        cr_assert_eq(out.recs[i].h, (float)((double)hmin + q / 64.0));
    }
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd, clearance_restores_in_float_capped_at_12)
{
    cr_assert_eq(nm_grid_rec_clearance(0), 0.0f);
    cr_assert_eq(nm_grid_rec_clearance(16), 1.0f);
    cr_assert_eq(nm_grid_rec_clearance(2), sqrtf(2.0f) * 0.25f);
    cr_assert_eq(nm_grid_rec_clearance(2304), 12.0f);
    cr_assert_eq(nm_grid_rec_clearance(65535), 12.0f);
}

/* ---- a realistic synthetic zone ---------------------------------------------------------------- */

/* A rasterised-terrain stand-in: piecewise-bilinear hills on a 16-cell lattice (slopes change
 * every few cells, as triangles do), scattered trees and rocks, walled buildings with floors and
 * roofs, a bridge. Clearance from the project's own distance transform, Dead bands at walls,
 * step bits where neighbours differ by more than kStepUp. */
enum { TW = 1100 };
typedef struct town {
    float *ground;
    uint8_t *obst;
    uint16_t *q;
    int16_t *bld;
    int nb;
    int bx0[60], by0[60], bx1[60], by1[60], floors[60];
    float base[60];
} town;

static float lattice(fx_rng *r) { return (float)(fx_unit(r) * 4.0 - 2.0); }

static void town_make(town *t)
{
    fx_rng r = {2026};
    size_t n = (size_t)TW * TW;
    t->ground = malloc(n * sizeof *t->ground);
    t->obst = calloc(n, 1);
    t->q = malloc(n * sizeof *t->q);
    t->bld = malloc(n * sizeof *t->bld);
    int L = TW / 16 + 2;
    float *lat = malloc((size_t)L * L * sizeof *lat);
    for (int i = 0; i < L * L; i++) lat[i] = lattice(&r);
    for (int y = 0; y < TW; y++)
        for (int x = 0; x < TW; x++) {
            int i = x / 16, j = y / 16;
            float u = (x % 16) / 16.0f, v = (y % 16) / 16.0f;
            float h = lat[j * L + i] * (1 - u) * (1 - v) + lat[j * L + i + 1] * u * (1 - v) +
                      lat[(j + 1) * L + i] * (1 - u) * v + lat[(j + 1) * L + i + 1] * u * v;
            t->ground[(size_t)y * TW + x] = 30.0f + 8.0f * sinf(x / 150.0f) + h;
            t->bld[(size_t)y * TW + x] = -1;
        }
    free(lat);
    for (int k = 0; k < 2500; k++) { /* trees and rocks */
        int cx = (int)(fx_next(&r) % TW), cy = (int)(fx_next(&r) % TW), rad = 1 + (int)(fx_next(&r) % 3);
        for (int y = cy - rad; y <= cy + rad; y++)
            for (int x = cx - rad; x <= cx + rad; x++)
                if (x >= 0 && y >= 0 && x < TW && y < TW && (x - cx) * (x - cx) + (y - cy) * (y - cy) <= rad * rad)
                    t->obst[(size_t)y * TW + x] = 1;
    }
    t->nb = 60;
    for (int i = 0; i < t->nb; i++) {
        t->bx0[i] = (int)(fx_next(&r) % (TW - 120));
        t->by0[i] = (int)(fx_next(&r) % (TW - 120));
        t->bx1[i] = t->bx0[i] + 24 + (int)(fx_next(&r) % 90);
        t->by1[i] = t->by0[i] + 24 + (int)(fx_next(&r) % 90);
        t->floors[i] = 1 + (int)(fx_next(&r) % 3);
        t->base[i] = t->ground[(size_t)t->by0[i] * TW + t->bx0[i]];
        for (int y = t->by0[i]; y <= t->by1[i]; y++)
            for (int x = t->bx0[i]; x <= t->bx1[i]; x++) {
                size_t c = (size_t)y * TW + x;
                t->bld[c] = (int16_t)i;
                bool wall = x == t->bx0[i] || x == t->bx1[i] || y == t->by0[i] || y == t->by1[i];
                bool door = wall && (x - t->bx0[i]) % 40 > 34;
                t->obst[c] = wall && !door;
            }
    }
    nm_error e = {0};
    cr_assert_eq(nm_grid_clearance(TW, TW, t->obst, t->q, 4, &e), NM_OK, "%s", e.msg);
}

static void town_free(town *t)
{
    free(t->ground);
    free(t->obst);
    free(t->q);
    free(t->bld);
}

static uint8_t steps_at(const town *t, int x, int y)
{
    static const int dx[4] = {1, 0, 1, 1}, dy[4] = {0, 1, 1, -1};
    uint8_t s = 0;
    float h = t->ground[(size_t)y * TW + x];
    for (int d = 0; d < 4; d++) {
        int bx = x + dx[d], by = y + dy[d];
        if (bx < 0 || by < 0 || bx >= TW || by >= TW) continue;
        float dh = t->ground[(size_t)by * TW + bx] - h;
        if (dh > 0.5f) s |= (uint8_t)(1u << (2 * d));      /* up the step: c -> b forbidden */
        if (dh < -0.5f) s |= (uint8_t)(2u << (2 * d));     /* b -> c forbidden */
    }
    return s;
}

static int town_cell(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out)
{
    const town *t = (const town *)ctx;
    size_t c = (size_t)y * TW + x;
    uint16_t q = t->q[c];
    uint8_t fl = t->obst[c] || q <= 1 ? (NM_GRID_DEAD | NM_GRID_CORE) : (NM_GRID_WALK | NM_GRID_CORE);
    if (q > 1 && q <= 4 && fx_next(rng) % 4 == 0) fl = NM_GRID_WALK; /* ragged core edge */
    int k = 0, b = t->bld[c];
    if (b < 0) {
        float h = t->ground[c];
        if (fx_next(rng) % 300 == 0) out[k++] = (nm_grid_rec){0, 1, 0, q, NM_GRID_FILL, 0};
        else out[k++] = (nm_grid_rec){0, 1, h, q, fl, steps_at(t, x, y)};
        /* A bridge over the middle rows. */
        if (y >= 540 && y < 560 && x >= 200 && x < 900) {
            uint16_t qb = (uint16_t)((y - 539 < 560 - y ? (y - 539) : (560 - y)));
            qb = (uint16_t)(qb * qb);
            out[k++] = (nm_grid_rec){0, 2, 60.0f + 0.01f * (x - 200), qb,
                                     qb <= 1 ? NM_GRID_DEAD | NM_GRID_CORE : NM_GRID_WALK | NM_GRID_CORE, 0};
        }
    } else {
        for (int f = 0; f < t->floors[b]; f++)
            out[k++] = (nm_grid_rec){0, 3 + (uint32_t)b, t->base[b] + 4.5f * f, q, fl, 0};
        out[k++] = (nm_grid_rec){0, 3 + (uint32_t)b + 60, t->base[b] + 4.5f * t->floors[b] + 0.5f, q,
                                 fl, 0};
    }
    return k;
}

Test(bgrd, bytes_per_record_on_a_realistic_zone)
{
    town t;
    town_make(&t);
    fx_zone z;
    fx_zone_build(&z, "town", 0, 0, TW, TW, 3 + 120, town_cell, &t, 10);
    nm_buf b = {0};
    nm_bgrd_write_opts o = {0, 0, 12, 4}; /* the real tiling: 512 + 2 x 64 aprons, level 12 */
    fx_write_bgrd(&z, 1, &o, &b);
    nm_bgrd g;
    parse_ok(&b, &g);
    uint64_t with_apron = 0;
    for (uint32_t i = 0; i < g.zones[0].tile_count; i++) with_apron += g.zones[0].tiles[i].records;
    double bpr = (double)b.size / (double)z.n;
    printf("gridio: realistic zone: %zu records (%llu with aprons), %zu bytes, %.3f B/record "
           "(%.3f B per stored record)\n",
           z.n, (unsigned long long)with_apron, b.size, bpr, (double)b.size / (double)with_apron);
    cr_log_info("realistic zone: %.3f B/record", bpr);
    /* Per-stream breakdown (compressed bytes per record), as in the article's table. */
    double per[NM_BGRD_STREAMS] = {0};
    for (uint32_t i = 0; i < g.zones[0].tile_count; i++) {
        const nm_bgrd_tile *e = &g.zones[0].tiles[i];
        if (!e->records) continue;
        nm_cursor c = nm_cur(b.p + e->offset, e->len);
        (void)nm_cur_varint(&c);
        (void)nm_cur_f32(&c);
        (void)nm_cur_varint(&c);
        (void)nm_cur_varint(&c);
        uint64_t kmax = nm_cur_varint(&c);
        nm_cur_skip(&c, 5 * kmax);
        for (int k = 0; k < NM_BGRD_STREAMS; k++) {
            uint64_t len = nm_cur_varint(&c);
            per[k] += (double)len;
            nm_cur_skip(&c, len);
        }
        cr_assert_not(c.bad);
    }
    printf("gridio: per stored record: cells %.3f layers %.3f regions %.3f height %.3f rindex %.3f "
           "clr %.3f flags %.3f steps %.3f\n",
           per[0] / with_apron, per[1] / with_apron, per[2] / with_apron, per[3] / with_apron,
           per[4] / with_apron, per[5] / with_apron, per[6] / with_apron, per[7] / with_apron);
    nm_bgrd_out out = {0};
    decode_ok(&g, 0, 0, 0, TW, TW, 4, &out);
    cr_assert_eq(out.n, z.n);
    fx_check_rect(&z, &out, false);
    cr_assert_lt(bpr, 3.0, "a terrain zone should not cost 3 bytes a record");
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
    town_free(&t);
}

/* ---- corruption ---------------------------------------------------------------------------------- */

static void small_section(nm_buf *b, fx_zone *z)
{
    fx_zone_build(z, "zone_b5", 0, 0, 20, 9, 6, fx_mixed_cell, NULL, 11);
    fx_write_bgrd(z, 1, &k_small, b);
}

/* Parses and decodes every tile; returns the first error (NM_OK when all went through). */
static int parse_and_decode_all(const uint8_t *p, size_t n, nm_error *e)
{
    nm_bgrd g;
    int rc = nm_bgrd_parse(p, n, &g, e);
    if (rc) return rc;
    nm_bgrd_out out = {0};
    for (uint32_t z = 0; z < g.zone_count && !rc; z++) {
        /* The union of the tile windows (small in these tests). */
        int64_t x0 = INT32_MAX, y0 = INT32_MAX, x1 = INT32_MIN, y1 = INT32_MIN;
        for (uint32_t t = 0; t < g.zones[z].tile_count; t++) {
            const nm_bgrd_tile *w = &g.zones[z].tiles[t];
            if (w->gx0 < x0) x0 = w->gx0;
            if (w->gy0 < y0) y0 = w->gy0;
            if ((int64_t)w->gx0 + w->nx > x1) x1 = (int64_t)w->gx0 + w->nx;
            if ((int64_t)w->gy0 + w->ny > y1) y1 = (int64_t)w->gy0 + w->ny;
        }
        if (x0 < x1 && (x1 - x0) * (y1 - y0) < 100000000)
            rc = nm_bgrd_decode_rect(&g, z, (int32_t)x0, (int32_t)y0, (int32_t)x1, (int32_t)y1, NULL, 2, &out, e);
    }
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    return rc;
}

/* nm_cell_column (the decoder's and the window's cells without a division a cell) gives
 * cell % nx and cell / nx for cells in ascending order with gaps of rows, in descending order, in
 * a scrambled order and near the top of the range, for rows of 1, 7 and 640 cells. */
Test(bgrd, cell_rows_give_the_division_s_column_and_row_in_any_order)
{
    const uint32_t nxs[] = {1, 7, 640};
    for (size_t a = 0; a < sizeof nxs / sizeof nxs[0]; a++) {
        const uint32_t nx = nxs[a];
        uint32_t cells[600];
        size_t n = 0;
        for (uint32_t c = 0; n < 200; c += 1 + (c % 5 == 0 ? 3 * nx : c % 3)) cells[n++] = c; /* ascending */
        for (size_t i = 0; i < 200; i++) cells[n++] = cells[199 - i];                            /* descending */
        uint32_t x = 12345;
        for (size_t i = 0; i < 190; i++) cells[n++] = (x = x * 1103515245u + 12345u) % (50u * nx); /* scrambled */
        for (uint32_t i = 0; i < 10; i++) cells[n++] = UINT32_MAX - 9 + i;                      /* the top */
        nm_cell_rows rows = {nx, 0, 0};
        for (size_t i = 0; i < n; i++) {
            const uint32_t col = nm_cell_column(&rows, cells[i]);
            cr_assert_eq(col, cells[i] % nx, "nx %u: cell %u: column %u", nx, cells[i], col);
            cr_assert_eq(rows.row, cells[i] / nx, "nx %u: cell %u: row %u", nx, cells[i], rows.row);
        }
    }
}

Test(bgrd_corrupt, every_truncation_is_refused)
{
    nm_buf b = {0};
    fx_zone z;
    small_section(&b, &z);
    nm_error e;
    cr_assert_eq(parse_and_decode_all(b.p, b.size, &e), NM_OK, "%s", e.msg);
    for (size_t n = 0; n < b.size; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, b.p, n);
        cr_assert_eq(parse_and_decode_all(copy, n, &e), NM_ERR_CORRUPT, "truncated to %zu bytes", n);
        free(copy);
    }
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd_corrupt, bit_flips_never_crash_and_stream_flips_are_caught)
{
    nm_buf b = {0};
    fx_zone z;
    small_section(&b, &z);
    size_t first_payload = entry_at(&b, 2); /* two tiles: payloads follow the directory */
    fx_rng r = {99};
    int caught = 0, in_streams = 0;
    uint8_t *copy = malloc(b.size);
    for (int i = 0; i < 3000; i++) {
        memcpy(copy, b.p, b.size);
        size_t at = fx_next(&r) % b.size;
        copy[at] ^= (uint8_t)(1u << (fx_next(&r) % 8));
        nm_error e;
        int rc = parse_and_decode_all(copy, b.size, &e);
        cr_assert(rc == NM_OK || rc == NM_ERR_CORRUPT, "flip at %zu: rc %d", at, rc);
        if (at > first_payload + 40) {
            in_streams++;
            caught += rc != NM_OK;
        }
    }
    cr_assert_gt(in_streams, 100);
    cr_assert_gt(caught, in_streams * 9 / 10, "zlib checksums catch stream flips (%d of %d)", caught,
                 in_streams);
    free(copy);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

static void expect_corrupt(const nm_buf *b, const char *what)
{
    nm_error e = {0};
    int rc = parse_and_decode_all(b->p, b->size, &e);
    cr_assert_eq(rc, NM_ERR_CORRUPT, "expected failure naming '%s'", what);
    cr_assert(strstr(e.msg, what), "message '%s' does not name '%s'", e.msg, what);
}

Test(bgrd_corrupt, header_and_directory_checks_name_what_is_wrong)
{
    nm_buf b = {0};
    fx_zone z;
    small_section(&b, &z);
    uint8_t *orig = malloc(b.size);
    memcpy(orig, b.p, b.size);
#define RESET() memcpy(b.p, orig, b.size)
    b.p[0] = 'X';
    expect_corrupt(&b, "magic");
    RESET();
    put_u32(b.p + 4, 2);
    expect_corrupt(&b, "version 2");
    RESET();
    double cs = 0.5;
    memcpy(b.p + 8, &cs, 8);
    expect_corrupt(&b, "cell size");
    RESET();
    put_u32(b.p + 32, 1000000);
    expect_corrupt(&b, "zones past");
    RESET();
    size_t e0 = entry_at(&b, 0), e1 = entry_at(&b, 1);
    put_u32(b.p + e0 + 8, 0); /* nx */
    expect_corrupt(&b, "tile 0: size");
    RESET();
    put_u32(b.p + e1 + 20, 40); /* px1 beyond nx */
    expect_corrupt(&b, "own rectangle");
    RESET();
    uint64_t far = b.size;
    memcpy(b.p + e1 + 32, &far, 8);
    expect_corrupt(&b, "payload past");
    RESET();
    put_u32(b.p + e0 + 44, get_u32(b.p + e0 + 44) - 1); /* records */
    expect_corrupt(&b, "directory says");
    RESET();
    put_u32(b.p + e0 + 40, get_u32(b.p + e0 + 40) + 1); /* len: one byte of tile 1 after tile 0 */
    expect_corrupt(&b, "after the last stream");
    RESET();
    /* Down at layer 0 is illegal: select byte of field 0, layer 0. */
    uint64_t off;
    memcpy(&off, b.p + e0 + 32, 8);
    nm_cursor c = nm_cur(b.p + off, b.size - off);
    (void)nm_cur_varint(&c);
    (void)nm_cur_f32(&c);
    (void)nm_cur_varint(&c);
    (void)nm_cur_varint(&c);
    (void)nm_cur_varint(&c);
    b.p[off + c.pos] = NM_BGRD_PRED_DOWN;
    expect_corrupt(&b, "select[field 0, layer 0]");
    RESET();
    cr_assert_eq(parse_and_decode_all(b.p, b.size, &(nm_error){0}), NM_OK);
#undef RESET
    free(orig);
    nm_buf_free(&b);
    fx_zone_free(&z);
}

Test(bgrd_corrupt, bad_arguments_are_refused)
{
    nm_buf b = {0};
    fx_zone z;
    small_section(&b, &z);
    nm_bgrd g;
    parse_ok(&b, &g);
    nm_bgrd_out out = {0};
    nm_error e;
    cr_assert_eq(nm_bgrd_decode_rect(&g, 1, 0, 0, 5, 5, NULL, 1, &out, &e), NM_ERR_ARG);
    cr_assert_eq(nm_bgrd_decode_rect(&g, 0, 5, 0, 5, 5, NULL, 1, &out, &e), NM_ERR_ARG);
    cr_assert_eq(nm_bgrd_decode_rect(&g, 0, -100000, -100000, 100000, 100000, NULL, 1, &out, &e), NM_ERR_ARG,
                 "more than INT32_MAX cells");
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    nm_buf_free(&b);
    fx_zone_free(&z);
}
