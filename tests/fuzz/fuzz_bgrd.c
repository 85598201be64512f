/* fuzz_bgrd.c — fuzz target for the BGRD v3 reader (design article 格图段): parse a section, then
 * decode every tile of every zone (rectangle decode over the union of tile windows, the
 * region-only fast path, and every region's bounding box as warm makes them). Any input must give NM_OK or an error; never a crash, a hang or an
 * out-of-bounds read.
 *
 * Built with clang -fsanitize=fuzzer it is a libFuzzer target. Built with NM_FUZZ_STANDALONE it is
 * the seed
 * writer (with seed_main.c): `gen_bgrd_seed --write-seed FILE` writes a valid two-zone section. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/grid_io.h"
#include "route/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nm_bgrd g;
    nm_error e;
    if (nm_bgrd_parse(data, size, &g, &e) != NM_OK) return 0;
    nm_bgrd_out out = {0};
    nm_bgrd_scratch s = {0};
    for (uint32_t z = 0; z < g.zone_count; z++) {
        const nm_bgrd_zone *gz = &g.zones[z];
        int64_t x0 = INT32_MAX, y0 = INT32_MAX, x1 = INT32_MIN, y1 = INT32_MIN;
        for (uint32_t t = 0; t < gz->tile_count; t++) {
            const nm_bgrd_tile *w = &gz->tiles[t];
            if (w->gx0 < x0) x0 = w->gx0;
            if (w->gy0 < y0) y0 = w->gy0;
            if ((int64_t)w->gx0 + w->nx > x1) x1 = (int64_t)w->gx0 + w->nx;
            if ((int64_t)w->gy0 + w->ny > y1) y1 = (int64_t)w->gy0 + w->ny;
            uint32_t *rids = (uint32_t *)malloc(((size_t)w->records + 1) * sizeof *rids);
            uint32_t n;
            if (rids) (void)nm_bgrd_tile_regions(&g, z, t, &s, rids, &n, &e);
            free(rids);
        }
        /* Keep the decode bounded: fuzzed windows can be far apart. */
        if (x0 < x1 && y0 < y1 && (x1 - x0) * (y1 - y0) <= 4000000)
            (void)nm_bgrd_decode_rect(&g, z, (int32_t)x0, (int32_t)y0, (int32_t)x1, (int32_t)y1, NULL, 2,
                                      &out, &e);
        uint32_t *rids, n;
        nm_cell_rect *boxes;
        if (nm_region_bboxes(&g, z, NULL, 2, &rids, &boxes, &n, &e) == NM_OK) {
            nm_free(rids);
            nm_free(boxes);
        }
    }
    nm_bgrd_scratch_free(&s);
    nm_bgrd_out_free(&out);
    nm_bgrd_free(&g);
    return 0;
}

#ifdef NM_FUZZ_STANDALONE
static int layer_cmp(const void *a, const void *b)
{
    return nm_grid_layer_cmp(a, b);
}

int fuzz_seed(nm_buf *out, nm_error *e)
{
    /* Two small zones, several tiles with aprons, up to three layers a cell, a Fill record. */
    enum { W = 9, H = 7 };
    static uint32_t start[2][W * H + 1];
    static nm_grid_rec recs[2][W * H * 3];
    nm_grid_zone_src src[2];
    for (int z = 0; z < 2; z++) {
        uint32_t n = 0;
        for (int c = 0; c < W * H; c++) {
            start[z][c] = n;
            int k = (c * 7 + z) % 4;
            for (int l = 0; l < k && l < 3; l++)
                recs[z][n++] = (nm_grid_rec){0, (uint32_t)(1 + (c + l) % 3), 5.0f + 3.0f * l + 0.1f * (c % W),
                                             (uint16_t)(c * 13 % 200), (uint8_t)(l == 2 && c % 5 == 0 ? NM_GRID_FILL : 6),
                                             (uint8_t)(c % 3)};
            qsort(recs[z] + start[z][c], n - start[z][c], sizeof *recs[z], layer_cmp);
        }
        start[z][W * H] = n;
        src[z] = (nm_grid_zone_src){z ? "b" : "zone_a", 1.0 * z, -2.0, W, H, 3, start[z], recs[z]};
    }
    nm_bgrd_write_opts o = {4, 1, 6, 1};
    return nm_bgrd_write(src, 2, &o, out, e);
}

#endif
