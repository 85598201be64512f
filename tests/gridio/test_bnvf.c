/* test_bnvf.c — BNVF v2 fields sidecar (design article 旁包, 旁包校验): round trip and merge of the
 * six columns into decoded records, component DAGs and reachFrom, the wall-keep table, FLNK and
 * FOPN, the six load checks in the article's order, and corruption. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gridio_fixture.h"

static const nm_bgrd_write_opts k_tiles = {16, 4, 6, 1};
#define HASH 0x1122334455667788ull
#define FNV 0x0102030405060708ull

/* Region r (1..6) has components 1..7 with edges 1->2, 2->3, 4->3, 5->1, 6->7. */
static const uint32_t k_edges[] = {1, 2, 2, 3, 4, 3, 5, 1, 6, 7};
static const uint64_t k_keys[] = {0, 2, 5, 9, 300};
static const uint32_t k_wall_row[] = {0, 2, 2, 3, 6, 7};
static const uint32_t k_wall_rids[] = {1, 2, 3, 1, 4, 6, 2};
/* FOPN zone 0: (gy, gx, h) ascending with h compared as raw bits (negative after positive). */
static const nm_bnvf_open k_opens[] = {
    {2, 1, 1.0f, 10, 0x06, 1}, {2, 1, -1.0f, 11, 0x02, 2}, {3, 1, 0.5f, 12, 0x04, 1},
    {0, 4, 2.0f, 13, 0x06, 2}, {7, 7, 7.0f, 14, 0x06, 1}};
static const nm_bnvf_range k_open_zones[] = {{0, 0, 4}, {3, 4, 1}};

typedef struct fixture {
    fx_zone z;
    nm_buf grid_bytes, side;
    nm_bgrd grid;
    nm_bnvf_region_src regions[6];
    nm_bnvf_link links[2];
    nm_bnvf_range link_zones[1];
} fixture;

static void write_sidecar(fixture *f, const fx_zone *z, uint64_t hash, uint64_t fnv, nm_buf *out)
{
    nm_bnvf_zone_src zs = {&z->src, z->scc, z->steps2x, z->seg, z->tax, z->medial, z->clr2d,
                           f->regions, 6, k_keys, 5, k_wall_row, k_wall_rids};
    nm_bnvf_write_src src = {hash, fnv, &zs, 1, f->links, 2, f->link_zones, 1,
                             k_opens, 5, k_open_zones, 2};
    nm_error e = {0};
    cr_assert_eq(nm_bnvf_write(&src, &k_tiles, out, &e), NM_OK, "bnvf write: %s", e.msg);
}

static void fixture_make(fixture *f, fx_cell_fn fn)
{
    memset(f, 0, sizeof *f);
    fx_zone_build(&f->z, "alpha", 10.3, -5.1, 70, 50, 6, fn, NULL, 21);
    fx_zone_columns(&f->z, 21);
    fx_write_bgrd(&f->z, 1, &k_tiles, &f->grid_bytes);
    nm_error e = {0};
    cr_assert_eq(nm_bgrd_parse(f->grid_bytes.p, f->grid_bytes.size, &f->grid, &e), NM_OK, "%s", e.msg);
    for (uint32_t r = 0; r < 6; r++) f->regions[r] = (nm_bnvf_region_src){r + 1, 7, 5, k_edges};
    f->links[0] = (nm_bnvf_link){3, 0, 0, 3, 0, 1, 5, 2, 1, 1.5f, 2.0f,
                                 {40, -20, 11.0f, 11.2f, 2, 400, 0x06, 0}, {45, -18, 14.0f, 14.0f, 2, 300, 0x06, 0}};
    f->links[1] = (nm_bnvf_link){7, 0, 1, 1, 1, 0, 1, 1, 0, 0.5f, 1.0f,
                                 {41, -19, 0.0f, 9.0f, 0, 0, 0, 2}, {42, -17, 10.0f, 10.0f, 3, 9, 0x02, 0}};
    f->link_zones[0] = (nm_bnvf_range){0, 0, 2};
    write_sidecar(f, &f->z, HASH, FNV, &f->side);
}

static void fixture_free(fixture *f)
{
    nm_bgrd_free(&f->grid);
    nm_buf_free(&f->grid_bytes);
    nm_buf_free(&f->side);
    fx_zone_free(&f->z);
}

static void parse_side(const fixture *f, nm_bnvf *out)
{
    nm_error e = {0};
    int rc = nm_bnvf_parse(f->side.p, f->side.size, "t.fields.nav", HASH, FNV, &f->grid, out, &e);
    cr_assert_eq(rc, NM_OK, "bnvf parse: %s", e.msg);
}

Test(bnvf, fcon_holds_the_rule_constants_of_this_build)
{
    uint8_t b[NM_BNVF_FCON_SIZE];
    nm_bnvf_fcon(b);
    double d[15];
    int32_t i[6];
    memcpy(d, b, sizeof d);
    memcpy(i, b + 120, sizeof i);
    const double want_d[15] = {0.25, 3.0, 1.0, 0.5, 1.25, 1.25, 8.0, 0.25, 12.0, 0.4, 0.2, 4.0, 0.0, 0.5, 0.0};
    const int32_t want_i[6] = {3, 2, 32, 0x00020CDD, 2, 0};
    for (int k = 0; k < 15; k++) cr_assert_eq(d[k], want_d[k], "f64 %d", k);
    for (int k = 0; k < 6; k++) cr_assert_eq(i[k], want_i[k], "i32 %d", k);
}

Test(bnvf, sidecar_columns_merge_into_decoded_records_for_any_worker_count)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    cr_assert_eq(side.zone_count, 1);
    cr_assert_eq(side.zone_of_bgrd[0], 0);
    nm_bgrd_out a = {0}, b = {0};
    nm_error e = {0};
    int32_t zx = (int32_t)llround(10.3 / 0.25), zy = (int32_t)llround(-5.1 / 0.25);
    cr_assert_eq(nm_bgrd_decode_rect(&f.grid, 0, zx, zy, zx + 70, zy + 50, &side, 1, &a, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(fx_check_rect(&f.z, &a, true), f.z.n);
    cr_assert_eq(nm_bgrd_decode_rect(&f.grid, 0, zx, zy, zx + 70, zy + 50, &side, 4, &b, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(a.n, b.n);
    cr_assert_eq(memcmp(a.recs, b.recs, a.n * sizeof *a.recs), 0);
    cr_assert_eq(memcmp(a.fields, b.fields, a.n * sizeof *a.fields), 0);
    /* A sub-rectangle straddling tile corners. */
    cr_assert_eq(nm_bgrd_decode_rect(&f.grid, 0, zx + 10, zy + 12, zx + 37, zy + 33, &side, 3, &b, &e), NM_OK);
    fx_check_rect(&f.z, &b, true);
    nm_bgrd_out_free(&a);
    nm_bgrd_out_free(&b);
    nm_bnvf_free(&side);
    fixture_free(&f);
}

/* The decoded-tile cache (issue 14): decodes through it give the bytes of uncached decodes, with
 * and without fields, for growing and moving rectangles, and with a budget small enough to evict. */
Test(bnvf, decodes_through_the_tile_cache_are_identical)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    nm_error e = {0};
    int32_t zx = (int32_t)llround(10.3 / 0.25), zy = (int32_t)llround(-5.1 / 0.25);
    const int32_t rects[5][4] = {{10, 12, 37, 33}, {0, 0, 70, 50}, {30, 5, 60, 45}, {10, 12, 37, 33}, {-3, -3, 20, 20}};
    /* the second budget holds about three tiles with fields: every pass evicts */
    uint32_t maxrec = 0;
    for (uint32_t t = 0; t < f.grid.zones[0].tile_count; t++)
        if (f.grid.zones[0].tiles[t].records > maxrec) maxrec = f.grid.zones[0].tiles[t].records;
    const size_t budgets[2] = {0, 3 * (size_t)maxrec * (sizeof(nm_grid_rec) + sizeof(nm_span_fields))};
    for (int bi = 0; bi < 2; bi++) {
        nm_bgrd_cache cache;
        memset(&cache, 0, sizeof cache);
        cache.budget = budgets[bi];
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < 5; k++) {
                const int32_t *r = rects[k];
                const nm_bnvf *fl = (k + pass) % 2 ? NULL : &side; /* alternate with and without fields */
                nm_bgrd_out a = {0}, b = {0};
                b.cache = &cache;
                cr_assert_eq(nm_bgrd_decode_rect(&f.grid, 0, zx + r[0], zy + r[1], zx + r[2], zy + r[3], fl, 2, &a, &e),
                             NM_OK, "%s", e.msg);
                cr_assert_eq(nm_bgrd_decode_rect(&f.grid, 0, zx + r[0], zy + r[1], zx + r[2], zy + r[3], fl, 3, &b, &e),
                             NM_OK, "%s", e.msg);
                cr_assert_eq(a.n, b.n, "budget %zu, rect %d", budgets[bi], k);
                cr_assert_eq(memcmp(a.recs, b.recs, a.n * sizeof *a.recs), 0, "budget %zu, rect %d", budgets[bi], k);
                if (fl) cr_assert_eq(memcmp(a.fields, b.fields, a.n * sizeof *a.fields), 0);
                cr_assert_leq(cache.bytes, cache.budget ? cache.budget : NM_BGRD_CACHE_BYTES);
                cr_assert_eq(b.cache, &cache, "the out buffer keeps its cache");
                nm_bgrd_out_free(&a);
                nm_bgrd_out_free(&b);
            }
        cr_assert_gt(cache.misses, 0);
        cr_expect_gt(cache.hits, 0, "budget %zu: a repeated rectangle is copied from the cache", budgets[bi]);
        nm_bgrd_cache_free(&cache);
    }
    nm_bnvf_free(&side);
    fixture_free(&f);
}

Test(bnvf, steps_merge_skips_directions_the_main_pack_leaves_open)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    /* Decode tile 0 and merge by hand-picked expectations for a few step patterns. */
    nm_bgrd_scratch s = {0};
    uint32_t n = f.grid.zones[0].tiles[0].records;
    nm_grid_rec *recs = malloc(n * sizeof *recs);
    nm_span_fields *fl = malloc(n * sizeof *fl);
    nm_error e = {0};
    cr_assert_eq(nm_bgrd_decode_tile(&f.grid, 0, 0, &s, recs, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(nm_bnvf_merge_tile(&side, 0, 0, recs, n, s.fspn, fl, &e), NM_OK, "%s", e.msg);
    int open_dirs = 0, judged = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int d = 0; d < 4; d++) {
            unsigned m = 3u << (2 * d);
            if (!(recs[i].steps & m)) {
                cr_assert_eq(fl[i].steps2 & m, 0, "main bits 0: direction skipped");
                open_dirs++;
            } else {
                judged++;
            }
        }
    cr_assert_gt(open_dirs, 0);
    cr_assert_gt(judged, 0);
    /* Wrong arguments. */
    cr_assert_eq(nm_bnvf_merge_tile(&side, 0, 0, recs, n - 1, s.fspn, fl, &e), NM_ERR_CORRUPT);
    cr_assert_eq(nm_bnvf_merge_tile(&side, 1, 0, recs, n, s.fspn, fl, &e), NM_ERR_ARG);
    free(recs);
    free(fl);
    nm_bgrd_scratch_free(&s);
    nm_bnvf_free(&side);
    fixture_free(&f);
}

/* A kept merge (the window's: only the records of a rectangle of the tile) writes, in record
 * order, exactly the whole merge's fields of the records whose cell % tnx and cell / tnx fall in
 * the rectangle, for every tile and rectangles inside, across, outside and around it. */
Test(bnvf, a_kept_merge_holds_the_whole_merge_s_fields_of_its_rectangle)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    nm_bgrd_scratch s = {0};
    nm_error e = {0};
    const nm_bgrd_zone *z = &f.grid.zones[0];
    size_t checked = 0, kept_some = 0;
    for (uint32_t t = 0; t < z->tile_count; t++) {
        const nm_bgrd_tile *te = &z->tiles[t];
        const uint32_t n = te->records, tnx = (uint32_t)te->nx;
        if (!n) continue;
        nm_grid_rec *recs = malloc(n * sizeof *recs);
        nm_span_fields *all = malloc(n * sizeof *all), *kept = malloc(n * sizeof *kept);
        cr_assert(recs && all && kept);
        cr_assert_eq(nm_bgrd_decode_tile(&f.grid, 0, t, &s, recs, &e), NM_OK, "%s", e.msg);
        cr_assert_eq(nm_bnvf_merge_tile(&side, 0, t, recs, n, s.fspn, all, &e), NM_OK, "%s", e.msg);
        const int64_t rects[][4] = {{0, tnx, 0, te->ny},         {te->px0, te->px1 + 1, te->py0, te->py1 + 1},
                                    {1, 3, 2, te->ny - 1},       {tnx - 1, tnx + 5, -4, 1},
                                    {-9, 0, 0, te->ny},          {2, 2, 0, te->ny},
                                    {0, tnx, te->ny, te->ny + 3}};
        for (size_t q = 0; q < sizeof rects / sizeof rects[0]; q++) {
            const nm_bnvf_keep k = {tnx, rects[q][0], rects[q][1], rects[q][2], rects[q][3]};
            size_t nout = SIZE_MAX, want = 0;
            cr_assert_eq(nm_bnvf_merge_tile_kept(&side, 0, t, recs, n, s.fspn, &k, kept, &nout, &e), NM_OK, "%s",
                         e.msg);
            for (uint32_t i = 0; i < n; i++) {
                const int64_t x = (uint32_t)recs[i].cell % tnx, y = (uint32_t)recs[i].cell / tnx;
                if (x < k.x0 || x >= k.x1 || y < k.y0 || y >= k.y1) continue;
                cr_assert_lt(want, nout, "tile %u rectangle %zu: record %u missing", t, q, i);
                cr_assert_eq(memcmp(&kept[want], &all[i], sizeof *all), 0, "tile %u rectangle %zu: record %u", t,
                             q, i);
                want++;
            }
            cr_assert_eq(nout, want, "tile %u rectangle %zu: %zu kept, %zu in the rectangle", t, q, nout, want);
            checked++;
            kept_some += want > 0 && want < n;
        }
        free(recs);
        free(all);
        free(kept);
    }
    cr_assert_gt(checked, 0);
    cr_assert_gt(kept_some, 0, "some rectangle keeps part of a tile");
    nm_bgrd_scratch_free(&s);
    nm_bnvf_free(&side);
    fixture_free(&f);
}

Test(bnvf, reach_from_walks_the_component_dag)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    nm_bnvf_zone_data d;
    nm_error e = {0};
    cr_assert_eq(nm_bnvf_zone_load(&side, 0, &d, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(d.dag_count, 6);
    const nm_bnvf_dag *g = nm_bnvf_dag_of(&d, 4);
    cr_assert_not_null(g);
    cr_assert_eq(g->rid, 4);
    cr_assert_null(nm_bnvf_dag_of(&d, 7));
    uint8_t mark[8];
    uint32_t stack[7], list[7];
    struct { uint32_t seed; const char *want; } cases[] = {
        {1, "1110000"}, {4, "0011000"}, {5, "1110100"}, {6, "0000011"}, {3, "0010000"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        uint32_t n = nm_bnvf_reach_from(g, cases[k].seed, mark, stack, list);
        uint32_t want_n = 0;
        for (int c = 1; c <= 7; c++) {
            cr_assert_eq(mark[c], cases[k].want[c - 1] == '1', "seed %u: component %d", cases[k].seed, c);
            want_n += cases[k].want[c - 1] == '1';
        }
        cr_assert_eq(n, want_n);
        cr_assert_eq(list[0], cases[k].seed);
    }
    cr_assert_eq(nm_bnvf_reach_from(g, 0, mark, stack, list), 0);
    cr_assert_eq(nm_bnvf_reach_from(g, 8, mark, stack, list), 0);
    nm_bnvf_zone_data_free(&d);
    nm_bnvf_free(&side);
    fixture_free(&f);
}

Test(bnvf, wall_keep_lookup_and_a_missing_wall_is_an_error)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    nm_bnvf_zone_data d;
    nm_error e = {0};
    cr_assert_eq(nm_bnvf_zone_load(&side, 0, &d, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(d.wall_count, 5);
    struct { uint64_t key; uint32_t rid; bool kept; } cases[] = {
        {0, 1, true}, {0, 2, true}, {0, 3, false}, {2, 1, false}, {5, 3, true},
        {9, 4, true}, {9, 5, false}, {9, 6, true}, {300, 2, true}, {300, 1, false}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        bool kept = !cases[k].kept;
        cr_assert_eq(nm_bnvf_wall_kept(&d, cases[k].key, cases[k].rid, &kept, &e), NM_OK);
        cr_assert_eq(kept, cases[k].kept, "key %llu rid %u", (unsigned long long)cases[k].key, cases[k].rid);
    }
    bool kept;
    cr_assert_eq(nm_bnvf_wall_kept(&d, 3, 1, &kept, &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "triangle 1, edge 0"), "%s", e.msg);
    cr_assert_eq(nm_bnvf_wall_kept(&d, 301, 1, &kept, &e), NM_ERR_CORRUPT);
    nm_bnvf_zone_data_free(&d);
    nm_bnvf_free(&side);
    fixture_free(&f);
}

Test(bnvf, links_and_openable_cells_round_trip)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_bnvf side;
    parse_side(&f, &side);
    cr_assert_eq(side.link_count, 2);
    cr_assert_eq(side.link_zone_count, 1);
    cr_assert_eq(side.links[0].boml_index, 3);
    cr_assert_eq(side.links[0].valid, 3);
    cr_assert_eq(side.links[0].area, 5);
    cr_assert_eq(side.links[0].radius, 1.5f);
    cr_assert_eq(side.links[0].cost_modifier, 2.0f);
    cr_assert_eq(side.links[0].lo.gx, 40);
    cr_assert_eq(side.links[0].lo.gy, -20);
    cr_assert_eq(side.links[0].lo.decl_h, 11.2f);
    cr_assert_eq(side.links[0].hi.clr, 300);
    cr_assert_eq(side.links[0].hi.flags, 0x06);
    cr_assert_eq(side.links[1].hi.rid, 3);
    cr_assert_eq(side.links[1].lo.why, 2);
    cr_assert_eq(side.open_count, 5);
    const nm_bnvf_open *o = nm_bnvf_find_open(&side, 0, 2, 1, -1.0f);
    cr_assert_not_null(o);
    cr_assert_eq(o->clr, 11);
    cr_assert_eq(nm_bnvf_find_open(&side, 0, 2, 1, 1.0f)->clr, 10);
    cr_assert_eq(nm_bnvf_find_open(&side, 0, 0, 4, 2.0f)->clr, 13);
    cr_assert_null(nm_bnvf_find_open(&side, 0, 2, 1, 0.0f));
    cr_assert_null(nm_bnvf_find_open(&side, 0, 7, 7, 7.0f), "that one is in zone 3");
    cr_assert_eq(nm_bnvf_find_open(&side, 3, 7, 7, 7.0f)->clr, 14);
    nm_bnvf_free(&side);
    fixture_free(&f);
}

Test(bnvf, load_reads_a_gzip_file)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    char path[256];
    snprintf(path, sizeof path, "/tmp/gridio_%d.fields.nav.gz", (int)getpid());
    nm_error e = {0};
    cr_assert_eq(nm_file_write(path, f.side.p, f.side.size, &e), NM_OK, "%s", e.msg);
    nm_bnvf side;
    cr_assert_eq(nm_bnvf_load(path, HASH, FNV, &f.grid, &side, &e), NM_OK, "%s", e.msg);
    cr_assert_not_null(side.owned);
    cr_assert_eq(side.size, f.side.size);
    nm_bnvf_free(&side);
    cr_assert_eq(nm_bnvf_load(path, HASH + 1, FNV, &f.grid, &side, &e), NM_ERR_CORRUPT);
    unlink(path);
    fixture_free(&f);
}

/* ---- the six checks (旁包校验) --------------------------------------------------------------------- */

static void expect_check(const uint8_t *p, size_t n, uint64_t hash, uint64_t fnv, const nm_bgrd *g,
                         const char *what)
{
    nm_bnvf side;
    nm_error e = {0};
    int rc = nm_bnvf_parse(p, n, "t.fields.nav", hash, fnv, g, &side, &e);
    cr_assert_eq(rc, NM_ERR_CORRUPT, "expected '%s' to fail", what);
    cr_assert(strstr(e.msg, what), "message '%s' does not say '%s'", e.msg, what);
}

/* Directory entry of the section with this tag. */
static size_t dir_entry(const nm_buf *b, const char *tag)
{
    uint32_t n;
    memcpy(&n, b->p + 28, 4);
    for (uint32_t i = 0; i < n; i++)
        if (memcmp(b->p + 48 + 24 * i, tag, 4) == 0) return 48 + 24 * (size_t)i;
    cr_assert_fail("no %s", tag);
    return 0;
}

Test(bnvf_checks, each_check_fails_with_its_own_message_in_the_article_order)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_buf *b = &f.side;
    uint8_t *orig = malloc(b->size);
    memcpy(orig, b->p, b->size);
#define RESET() memcpy(b->p, orig, b->size)
    uint64_t fcon_at;
    memcpy(&fcon_at, b->p + dir_entry(b, "FCON") + 8, 8);
    size_t fwal = dir_entry(b, "FWAL");

    b->p[1] = 'X';
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 1 (magic)");
    expect_check(b->p, 3, HASH, FNV, &f.grid, "check 1 (magic)");
    RESET();
    b->p[4] = 3;
    expect_check(b->p, b->size, HASH + 1, FNV, &f.grid, "check 1 (version)");
    RESET();
    expect_check(b->p, b->size, HASH + 1, FNV, &f.grid, "check 2 (build_hash)");
    expect_check(b->p, b->size, HASH, FNV ^ 1, &f.grid, "check 2 (fnv)");
    b->p[24] = 3; /* rules */
    expect_check(b->p, b->size, HASH, FNV ^ 1, &f.grid, "check 2 (fnv)");
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 3 (rules)");
    memcpy(b->p + fwal, "FWAX", 4);
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 3 (rules)");
    b->p[24] = 2;
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 4 (sections): FWAL missing");
    b->p[fcon_at + 8] ^= 1; /* kClimb */
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 4 (sections)");
    memcpy(b->p + fwal, "FWAL", 4);
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 5 (FCON): a rule constant (f64)");
    RESET();
    b->p[fcon_at + 120 + 16] ^= 1; /* walkable whitelist */
    expect_check(b->p, b->size, HASH, FNV, &f.grid, "check 5 (FCON): a rule constant (i32)");
    RESET();
    nm_bnvf side;
    parse_side(&f, &side);
    nm_bnvf_free(&side);
#undef RESET
    free(orig);
    fixture_free(&f);
}

Test(bnvf_checks, check_6_compares_every_zone_with_the_grid)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    /* Another grid: renamed zone, other region count, other tiling, one record more. */
    fx_zone z2;
    nm_buf gb = {0};
    nm_bgrd g2;
    nm_error e = {0};

    fx_zone_build(&z2, "beta", 10.3, -5.1, 70, 50, 6, fx_mixed_cell, NULL, 21);
    fx_write_bgrd(&z2, 1, &k_tiles, &gb);
    cr_assert_eq(nm_bgrd_parse(gb.p, gb.size, &g2, &e), NM_OK);
    expect_check(f.side.p, f.side.size, HASH, FNV, &g2, "check 6 (zones): zone 'beta' of the grid is missing");
    nm_bgrd_free(&g2);
    nm_buf_free(&gb);
    fx_zone_free(&z2);

    fx_zone_build(&z2, "alpha", 10.3, -5.1, 70, 50, 7, fx_mixed_cell, NULL, 21);
    fx_write_bgrd(&z2, 1, &k_tiles, &gb);
    cr_assert_eq(nm_bgrd_parse(gb.p, gb.size, &g2, &e), NM_OK);
    expect_check(f.side.p, f.side.size, HASH, FNV, &g2, "6 regions, grid has 7");
    nm_bgrd_free(&g2);
    nm_buf_free(&gb);

    const nm_bgrd_write_opts big = {32, 4, 6, 1};
    fx_write_bgrd(&f.z, 1, &big, &gb);
    cr_assert_eq(nm_bgrd_parse(gb.p, gb.size, &g2, &e), NM_OK);
    expect_check(f.side.p, f.side.size, HASH, FNV, &g2, "20 tiles, grid has 6");
    nm_bgrd_free(&g2);
    nm_buf_free(&gb);
    fx_zone_free(&z2);

    /* One more record in cell (0, 0): tile 0 counts one more. */
    fx_zone_build(&z2, "alpha", 10.3, -5.1, 70, 50, 6, fx_mixed_cell, NULL, 21);
    size_t n2 = z2.n + 1;
    nm_grid_rec *r2 = malloc(n2 * sizeof *r2);
    r2[0] = (nm_grid_rec){0, 1, 1000.0f, 1, NM_GRID_WALK, 0};
    memcpy(r2 + 1, z2.recs, z2.n * sizeof *r2);
    uint32_t *s2 = malloc((70 * 50 + 1) * sizeof *s2);
    s2[0] = 0;
    for (int i = 1; i <= 70 * 50; i++) s2[i] = z2.start[i] + 1;
    nm_grid_rec last = r2[0];
    /* keep cell 0 sorted: the new record is the highest there */
    for (uint32_t k = 0; k + 1 < s2[1]; k++) r2[k] = r2[k + 1];
    r2[s2[1] - 1] = last;
    nm_grid_zone_src src = z2.src;
    src.cell_start = s2;
    src.recs = r2;
    cr_assert_eq(nm_bgrd_write(&src, 1, &k_tiles, &gb, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(nm_bgrd_parse(gb.p, gb.size, &g2, &e), NM_OK);
    expect_check(f.side.p, f.side.size, HASH, FNV, &g2, "check 6 (zones): zone 'alpha': tile 0:");
    nm_bgrd_free(&g2);
    nm_buf_free(&gb);
    free(r2);
    free(s2);
    fx_zone_free(&z2);
    fixture_free(&f);
}

Test(bnvf_checks, clr2d_above_the_main_clearance_fails_the_merge)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    /* The same zone with every clearance lowered: counts agree, clr2d may now exceed clr. */
    fx_zone z2;
    fx_zone_build(&z2, "alpha", 10.3, -5.1, 70, 50, 6, fx_mixed_cell, NULL, 21);
    for (size_t i = 0; i < z2.n; i++) z2.recs[i].clr = 0;
    nm_buf gb = {0};
    fx_write_bgrd(&z2, 1, &k_tiles, &gb);
    nm_bgrd g2;
    nm_error e = {0};
    cr_assert_eq(nm_bgrd_parse(gb.p, gb.size, &g2, &e), NM_OK);
    nm_bnvf side;
    cr_assert_eq(nm_bnvf_parse(f.side.p, f.side.size, "t", HASH, FNV, &g2, &side, &e), NM_OK, "%s", e.msg);
    nm_bgrd_out out = {0};
    int rc = nm_bgrd_decode_rect(&g2, 0, 0, -30, 80, 30, &side, 4, &out, &e);
    cr_assert_eq(rc, NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "clr2d"), "%s", e.msg);
    nm_bgrd_out_free(&out);
    nm_bnvf_free(&side);
    nm_bgrd_free(&g2);
    nm_buf_free(&gb);
    fx_zone_free(&z2);
    fixture_free(&f);
}

Test(bnvf_checks, writer_refuses_bad_columns_and_unsorted_tables)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_buf out = {0};
    nm_error e = {0};
    /* clr2d above clr */
    size_t i = 0;
    while (f.z.recs[i].clr == 65535) i++;
    uint16_t keep = f.z.clr2d[i];
    f.z.clr2d[i] = (uint16_t)(f.z.recs[i].clr + 1);
    nm_bnvf_zone_src zs = {&f.z.src, f.z.scc, f.z.steps2x, f.z.seg, f.z.tax, f.z.medial, f.z.clr2d,
                           f.regions, 6, k_keys, 5, k_wall_row, k_wall_rids};
    nm_bnvf_write_src src = {HASH, FNV, &zs, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0};
    cr_assert_eq(nm_bnvf_write(&src, &k_tiles, &out, &e), NM_ERR_ARG);
    cr_assert(strstr(e.msg, "clr2d"), "%s", e.msg);
    f.z.clr2d[i] = keep;
    /* FOPN out of order */
    nm_bnvf_open bad[2] = {{1, 1, -1.0f, 0, 0, 0}, {1, 1, 1.0f, 0, 0, 0}};
    nm_bnvf_range bz = {0, 0, 2};
    src.opens = bad;
    src.open_count = 2;
    src.open_zones = &bz;
    src.open_zone_count = 1;
    out.size = 0;
    cr_assert_eq(nm_bnvf_write(&src, &k_tiles, &out, &e), NM_ERR_ARG);
    cr_assert(strstr(e.msg, "FOPN"), "%s", e.msg);
    /* Unsorted wall keys */
    const uint64_t keys[5] = {0, 5, 2, 9, 300};
    zs.wall_keys = keys;
    src.opens = NULL;
    out.size = 0;
    cr_assert_eq(nm_bnvf_write(&src, &k_tiles, &out, &e), NM_ERR_ARG);
    nm_buf_free(&out);
    fixture_free(&f);
}

Test(bnvf_checks, fopn_out_of_order_is_refused_on_load)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    uint64_t at;
    memcpy(&at, f.side.p + dir_entry(&f.side, "FOPN") + 8, 8);
    /* Swap records 0 and 1 of zone 0 (header 16 + two zone entries of 12). */
    uint8_t *r0 = f.side.p + at + 16 + 24, tmp[16];
    memcpy(tmp, r0, 16);
    memcpy(r0, r0 + 16, 16);
    memcpy(r0 + 16, tmp, 16);
    expect_check(f.side.p, f.side.size, HASH, FNV, &f.grid, "FOPN: zone id 0: record 1 out of (gy, gx, h) order");
    fixture_free(&f);
}

/* ---- corruption ---------------------------------------------------------------------------------- */

/* Parse, load the zone tables and decode every tile with fields; the first error or NM_OK. */
static int use_all(const uint8_t *p, size_t n, const nm_bgrd *g, nm_error *e)
{
    nm_bnvf side;
    int rc = nm_bnvf_parse(p, n, "t", HASH, FNV, g, &side, e);
    if (rc) return rc;
    nm_bnvf_zone_data d;
    rc = nm_bnvf_zone_load(&side, 0, &d, e);
    if (!rc) nm_bnvf_zone_data_free(&d);
    nm_bgrd_out out = {0};
    if (!rc) rc = nm_bgrd_decode_rect(g, 0, 0, -30, 80, 30, &side, 2, &out, e);
    nm_bgrd_out_free(&out);
    nm_bnvf_free(&side);
    return rc;
}

Test(bnvf_corrupt, truncations_and_bit_flips)
{
    fixture f;
    fixture_make(&f, fx_mixed_cell);
    nm_error e;
    cr_assert_eq(use_all(f.side.p, f.side.size, &f.grid, &e), NM_OK, "%s", e.msg);
    for (size_t n = 0; n < f.side.size; n += 1 + n / 64) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, f.side.p, n);
        cr_assert_eq(use_all(copy, n, &f.grid, &e), NM_ERR_CORRUPT, "truncated to %zu", n);
        free(copy);
    }
    fx_rng r = {5};
    uint8_t *copy = malloc(f.side.size);
    int caught = 0;
    for (int i = 0; i < 2000; i++) {
        memcpy(copy, f.side.p, f.side.size);
        size_t at = fx_next(&r) % f.side.size;
        copy[at] ^= (uint8_t)(1u << (fx_next(&r) % 8));
        int rc = use_all(copy, f.side.size, &f.grid, &e);
        cr_assert(rc == NM_OK || rc == NM_ERR_CORRUPT || rc == NM_ERR_ARG, "flip at %zu: %d", at, rc);
        caught += rc != NM_OK;
    }
    cr_assert_gt(caught, 1000, "most flips land in checksummed streams (%d)", caught);
    free(copy);
    fixture_free(&f);
}
