/* gridio_fixture.c — zone builders and the rectangle checker shared by the gridio tests. */
#include "gridio_fixture.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t fx_next(fx_rng *r)
{
    /* xorshift64*: deterministic on every machine */
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 2685821657736338717ull) >> 32);
}

double fx_unit(fx_rng *r) { return fx_next(r) / 4294967296.0; }

static int cmp_rec(const void *a, const void *b)
{
    return nm_grid_layer_cmp((const nm_grid_rec *)a, (const nm_grid_rec *)b);
}

void fx_zone_build(fx_zone *z, const char *name, double x0, double y0, int w, int h,
                   uint32_t global_regions, fx_cell_fn fn, void *ctx, uint64_t seed)
{
    memset(z, 0, sizeof *z);
    fx_rng rng = {seed * 0x9E3779B97F4A7C15ull + 1};
    size_t cells = (size_t)w * (size_t)h, cap = cells + 16;
    z->start = malloc((cells + 1) * sizeof *z->start);
    z->recs = malloc(cap * sizeof *z->recs);
    cr_assert(z->start && z->recs);
    nm_grid_rec tmp[8];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            z->start[i] = (uint32_t)z->n;
            int k = fn(ctx, x, y, &rng, tmp);
            qsort(tmp, (size_t)k, sizeof *tmp, cmp_rec);
            if (z->n + (size_t)k > cap) {
                cap = cap * 2 + 8;
                z->recs = realloc(z->recs, cap * sizeof *z->recs);
                cr_assert(z->recs);
            }
            for (int j = 0; j < k; j++) {
                tmp[j].cell = (int32_t)i;
                z->recs[z->n++] = tmp[j];
            }
        }
    z->start[cells] = (uint32_t)z->n;
    z->src = (nm_grid_zone_src){name, x0, y0, w, h, global_regions, z->start, z->recs};
}

void fx_zone_columns(fx_zone *z, uint64_t seed)
{
    fx_rng rng = {seed + 77};
    size_t n = z->n ? z->n : 1;
    z->scc = calloc(n, sizeof *z->scc);
    z->steps2x = calloc(n, 1);
    z->seg = calloc(n, 1);
    z->tax = calloc(n, 1);
    z->medial = calloc(n, 1);
    z->clr2d = calloc(n, sizeof *z->clr2d);
    for (size_t i = 0; i < z->n; i++) {
        const nm_grid_rec *r = &z->recs[i];
        z->scc[i] = (r->flags & NM_GRID_FILL) ? 0 : 1 + (r->rid * 3 + fx_next(&rng) % 3) % 7;
        z->steps2x[i] = (uint8_t)fx_next(&rng);
        z->seg[i] = (uint8_t)(fx_next(&rng) & 3);
        z->tax[i] = (uint8_t)fx_next(&rng);
        z->medial[i] = (uint8_t)(fx_next(&rng) & 1);
        z->clr2d[i] = r->clr ? (uint16_t)(fx_next(&rng) % (r->clr + 1u)) : 0;
    }
}

void fx_zone_free(fx_zone *z)
{
    free(z->start);
    free(z->recs);
    free(z->scc);
    free(z->steps2x);
    free(z->seg);
    free(z->tax);
    free(z->medial);
    free(z->clr2d);
    memset(z, 0, sizeof *z);
}

int fx_mixed_cell(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out)
{
    (void)ctx;
    uint32_t roll = fx_next(rng) % 10;
    int k = roll < 2 ? 0 : roll < 6 ? 1 : roll < 8 ? 2 : roll < 9 ? 3 : 4;
    double ground = 10.0 + 0.05 * x - 0.03 * y + 0.5 * sin(x * 0.2);
    for (int l = 0; l < k; l++) {
        nm_grid_rec *r = &out[l];
        memset(r, 0, sizeof *r);
        r->rid = 1 + (uint32_t)((x / 7 + y / 5 + l) % 6);
        r->h = (float)(ground + 4.0 * l + fx_unit(rng) * 0.3);
        r->clr = (uint16_t)(fx_next(rng) % 2305);
        r->flags = (uint8_t)(fx_next(rng) & 0x0F);
        if (fx_next(rng) % 9 == 0) {
            r->flags = NM_GRID_FILL;
            r->h = -123.0f; /* no real height: the writer must ignore it */
        }
        r->steps = (uint8_t)(fx_next(rng) % 4 == 0 ? fx_next(rng) : 0);
    }
    return k;
}

void fx_write_bgrd(const fx_zone *zones, int count, const nm_bgrd_write_opts *o, nm_buf *out)
{
    nm_grid_zone_src src[8];
    cr_assert(count <= 8);
    for (int i = 0; i < count; i++) src[i] = zones[i].src;
    nm_error e = {0};
    int rc = nm_bgrd_write(src, (uint32_t)count, o, out, &e);
    cr_assert_eq(rc, NM_OK, "bgrd write: %s", e.msg);
}

size_t fx_check_rect(const fx_zone *z, const nm_bgrd_out *out, bool with_fields)
{
    int64_t zx = llround(z->src.x0 / NM_kCS), zy = llround(z->src.y0 / NM_kCS);
    int64_t ww = (int64_t)out->gx1 - out->gx0, wh = (int64_t)out->gy1 - out->gy0;
    size_t cells = (size_t)(ww * wh);
    int32_t *first = malloc(cells * sizeof *first);
    int32_t *cnt = calloc(cells, sizeof *cnt);
    cr_assert(first && cnt);
    /* Records of one cell must be contiguous. */
    for (size_t i = 0; i < out->n; i++) {
        int32_t c = out->recs[i].cell;
        cr_assert(c >= 0 && (size_t)c < cells, "record %zu: cell %d outside the rectangle", i, c);
        if (cnt[c] == 0) first[c] = (int32_t)i;
        else cr_assert_eq(first[c] + cnt[c], (int32_t)i, "cell %d split", c);
        cnt[c]++;
    }
    size_t compared = 0;
    for (int64_t wy = 0; wy < wh; wy++)
        for (int64_t wx = 0; wx < ww; wx++) {
            int64_t x = out->gx0 + wx - zx, y = out->gy0 + wy - zy;
            size_t c = (size_t)(wy * ww + wx);
            uint32_t a = 0, b = 0;
            if (x >= 0 && y >= 0 && x < z->src.w && y < z->src.h) {
                a = z->start[y * z->src.w + x];
                b = z->start[y * z->src.w + x + 1];
            }
            cr_assert_eq((uint32_t)cnt[c], b - a, "cell (%lld, %lld): %d records, want %u", (long long)x,
                         (long long)y, cnt[c], b - a);
            for (uint32_t k = 0; k < b - a; k++) {
                const nm_grid_rec *want = &z->recs[a + k];
                const nm_grid_rec *got = &out->recs[first[c] + (int32_t)k];
                cr_assert_eq(got->rid, want->rid);
                cr_assert_eq(got->clr, want->clr);
                cr_assert_eq(got->flags, want->flags);
                cr_assert_eq(got->steps, want->steps);
                if (want->flags & NM_GRID_FILL)
                    cr_assert_eq(got->h, 0.0f);
                else
                    cr_assert(fabs((double)got->h - want->h) <= 1.0 / 128 + 1e-5, "h %g vs %g", got->h,
                              want->h);
                if (with_fields) {
                    const nm_span_fields *f = &out->fields[first[c] + (int32_t)k];
                    uint32_t r = a + k;
                    cr_assert_eq(f->scc, z->scc[r]);
                    cr_assert_eq(f->clr2, want->clr - z->clr2d[r]);
                    cr_assert_eq(f->seg, z->seg[r]);
                    cr_assert_eq(f->tax, z->tax[r]);
                    cr_assert_eq(f->medial, z->medial[r]);
                    uint8_t st = 0;
                    for (int d = 0; d < 4; d++) {
                        unsigned m = 3u << (2 * d);
                        if (want->steps & m) st |= (uint8_t)((z->steps2x[r] ^ want->steps) & m);
                    }
                    cr_assert_eq(f->steps2, st);
                }
                compared++;
            }
        }
    free(first);
    free(cnt);
    return compared;
}
