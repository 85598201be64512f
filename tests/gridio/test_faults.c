/* test_faults.c — every allocation failure on the BGRD / BNVF write, load and decode paths gives
 * NM_ERR_NOMEM (never a crash or a half result), and the next attempt succeeds; run under ASan this
 * also shows that nothing leaks on those paths. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "gridio_fixture.h"

static const nm_bgrd_write_opts k_tiles = {8, 2, 1, 1}; /* one worker: the hook is not thread-safe */

typedef int (*op_fn)(void *ctx);

/* Runs op failing the 1st, 2nd, ... allocation until it succeeds; returns how many failed. */
static int each_failure(op_fn op, void *ctx, const char *what)
{
    for (size_t n = 1; n < 100000; n++) {
        nm_alloc_fail_after(n);
        int rc = op(ctx);
        size_t used = nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            cr_assert_lt(used, n, "%s: succeeded although allocation %zu was to fail", what, n);
            return (int)n - 1;
        }
        cr_assert_eq(rc, NM_ERR_NOMEM, "%s: allocation %zu failed but rc = %d", what, n, rc);
    }
    cr_assert_fail("%s: never succeeded", what);
    return 0;
}

typedef struct ctx {
    fx_zone z;
    nm_buf grid, side;
    nm_bgrd g;
} ctx;

static nm_bnvf_region_src g_regions[6];
static const uint32_t k_edges[] = {1, 2, 2, 3};
static const uint64_t k_keys[] = {3, 4};
static const uint32_t k_row[] = {0, 1, 3};
static const uint32_t k_rids[] = {2, 1, 5};

static int op_write_grid(void *p)
{
    ctx *c = (ctx *)p;
    nm_buf b = {0};
    nm_error e;
    int rc = nm_bgrd_write(&c->z.src, 1, &k_tiles, &b, &e);
    nm_buf_free(&b);
    return rc;
}

static int write_side(ctx *c, nm_buf *b)
{
    nm_bnvf_zone_src zs = {&c->z.src, c->z.scc, c->z.steps2x, c->z.seg, c->z.tax, c->z.medial, c->z.clr2d,
                           g_regions, 6, k_keys, 2, k_row, k_rids};
    nm_bnvf_open o = {1, 1, 1.0f, 1, 1, 1};
    nm_bnvf_range oz = {0, 0, 1};
    nm_bnvf_write_src src = {1, 2, &zs, 1, NULL, 0, NULL, 0, &o, 1, &oz, 1};
    nm_error e;
    return nm_bnvf_write(&src, &k_tiles, b, &e);
}

static int op_write_side(void *p)
{
    nm_buf b = {0};
    int rc = write_side((ctx *)p, &b);
    nm_buf_free(&b);
    return rc;
}

static int op_load_and_decode(void *p)
{
    ctx *c = (ctx *)p;
    nm_bgrd g;
    nm_bnvf f;
    nm_bnvf_zone_data d;
    nm_bgrd_out out = {0};
    nm_error e;
    int rc = nm_bgrd_parse(c->grid.p, c->grid.size, &g, &e);
    if (rc) return rc;
    rc = nm_bnvf_parse(c->side.p, c->side.size, "t", 1, 2, &g, &f, &e);
    if (!rc) {
        rc = nm_bnvf_zone_load(&f, 0, &d, &e);
        if (!rc) nm_bnvf_zone_data_free(&d);
        if (!rc) rc = nm_bgrd_decode_rect(&g, 0, -4, -4, 40, 30, &f, 1, &out, &e);
        if (!rc) cr_assert_eq(fx_check_rect(&c->z, &out, true), c->z.n);
        nm_bnvf_free(&f);
    }
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    return rc;
}

Test(faults, every_allocation_failure_is_reported_and_leaves_nothing_behind)
{
    ctx c;
    memset(&c, 0, sizeof c);
    fx_zone_build(&c.z, "f", 0, 0, 30, 20, 6, fx_mixed_cell, NULL, 31);
    fx_zone_columns(&c.z, 31);
    for (uint32_t r = 0; r < 6; r++) g_regions[r] = (nm_bnvf_region_src){r + 1, 7, 2, k_edges};
    nm_error e;
    cr_assert_eq(nm_bgrd_write(&c.z.src, 1, &k_tiles, &c.grid, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(write_side(&c, &c.side), NM_OK);
    cr_assert_gt(each_failure(op_write_grid, &c, "write BGRD"), 10);
    cr_assert_gt(each_failure(op_write_side, &c, "write BNVF"), 10);
    cr_assert_gt(each_failure(op_load_and_decode, &c, "load and decode"), 10);
    nm_buf_free(&c.grid);
    nm_buf_free(&c.side);
    fx_zone_free(&c.z);
}
