/* fuzz_bnvf.c — fuzz target for the BNVF v2 sidecar reader (design article 旁包, 旁包校验): parse
 * and validate the input against a fixed tiny BGRD directory (built once with the writer), then
 * load every zone's FSCC / FWAL tables, walk reachFrom from every component, look walls up, and
 * decode the grid zone with the sidecar's columns merged. A sidecar that passes goes on into what
 * a plan makes of it: a window of each region over the whole zone (建窗, every column, link and
 * open record of the sidecar read), and on each window built the searches of two legs in it.
 * Any input must give NM_OK or an error.
 *
 * Built with clang -fsanitize=fuzzer it is a libFuzzer target. With seed_main.c it
 * is the seed writer: `gen_bnvf_seed --write-seed FILE` writes a sidecar that passes all six
 * checks against the fixed grid. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/grid_io.h"
#include "search/search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_HASH 0x5EED5EED5EED5EEDull
#define FZ_FNV 0x0123456789ABCDEFull
enum { FZ_W = 7, FZ_H = 6 };

static uint32_t g_start[FZ_W * FZ_H + 1];
static nm_grid_rec g_recs[FZ_W * FZ_H * 2];
static nm_grid_zone_src g_src;
static nm_buf g_bytes;
static nm_bgrd g_grid;
static const nm_bgrd_write_opts g_tiles = {4, 1, 6, 1};
static int g_ready; /* 1 ok, -1 failed */

static int fixed_grid(void)
{
    if (g_ready) return g_ready;
    uint32_t n = 0;
    for (int c = 0; c < FZ_W * FZ_H; c++) {
        g_start[c] = n;
        int k = c % 3 == 0 ? 2 : c % 3 == 1 ? 1 : 0;
        for (int l = 0; l < k; l++)
            g_recs[n++] = (nm_grid_rec){0, (uint32_t)(1 + l), 2.0f + 4.0f * l, (uint16_t)(20 + c), 6,
                                        (uint8_t)(c % 4 ? 0x05 : 0)};
    }
    g_start[FZ_W * FZ_H] = n;
    g_src = (nm_grid_zone_src){"fz", 0.0, 0.0, FZ_W, FZ_H, 2, g_start, g_recs};
    nm_error e;
    g_ready = -1;
    if (nm_bgrd_write(&g_src, 1, &g_tiles, &g_bytes, &e) == NM_OK &&
        nm_bgrd_parse(g_bytes.p, g_bytes.size, &g_grid, &e) == NM_OK)
        g_ready = 1;
    return g_ready;
}

/* Window cells around the zone: room (24 B a cell) for step 5 to decode two of the four tiles side
 * by side on two workers. */
enum { FZ_PAD = 8 };

/* The window of region rid over the whole zone (FZ_PAD cells around it), seeded at cell 0's span of
 * that region (layer rid - 1 at 2 + 4 (rid - 1) m), and two legs in it: one the seed sidecar
 * plans in region 1 (zone cells (4, 5) -> (6, 3), through the topology and geometry layers) and
 * one it cannot (corner to corner: the gap is located). The sidecar's columns reach the raster
 * layers, its components the reach set, its links and opens the span table, and the searches
 * read them all. */
static void window_and_legs(const nm_bnvf *f, const nm_bnvf_zone_data *d, uint32_t rid)
{
    nm_window_request q;
    memset(&q, 0, sizeof q);
    q.grid = &g_grid;
    q.fields = f;
    q.fzone = d;
    q.gx0 = -FZ_PAD;
    q.gy0 = -FZ_PAD;
    q.nx = FZ_W + 2 * FZ_PAD;
    q.ny = FZ_H + 2 * FZ_PAD;
    q.region = rid;
    q.seed_h = 2.0 + 4.0 * (rid - 1);
    q.workers = 2;
    nm_window w;
    nm_error e;
    if (nm_window_build(&q, &w, &e) != NM_OK) return;
    static const int legs[2][4] = {{4, 5, 6, 3}, {0, 0, FZ_W - 1, FZ_H - 1}}; /* zone cells */
    for (int k = 0; k < 2; k++) {
        nm_search_request r;
        memset(&r, 0, sizeof r);
        r.sx = (legs[k][0] + 0.5) * NM_kCS; /* px of the zone frame: the cell's centre */
        r.sy = (legs[k][1] + 0.5) * NM_kCS;
        r.gx = (legs[k][2] + 0.5) * NM_kCS;
        r.gy = (legs[k][3] + 0.5) * NM_kCS;
        r.h0 = q.seed_h;
        r.workers = 1;
        nm_search_result out;
        if (nm_search_route_window(&w, &r, &out, &e) == NM_OK) nm_search_result_free(&out);
    }
    nm_window_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fixed_grid() < 0) return 0;
    nm_bnvf f;
    nm_error e;
    if (nm_bnvf_parse(data, size, "fuzz", FZ_HASH, FZ_FNV, &g_grid, &f, &e) != NM_OK) return 0;
    for (uint32_t z = 0; z < f.zone_count; z++) {
        nm_bnvf_zone_data d;
        if (nm_bnvf_zone_load(&f, z, &d, &e) != NM_OK) continue;
        for (uint32_t r = 0; r < d.dag_count; r++) {
            const nm_bnvf_dag *g = &d.dags[r];
            uint8_t *mark = (uint8_t *)malloc((size_t)g->n_scc + 1);
            uint32_t *stack = (uint32_t *)malloc((size_t)g->n_scc * sizeof *stack);
            uint32_t *list = (uint32_t *)malloc((size_t)g->n_scc * sizeof *list);
            if (mark && stack && list)
                for (uint32_t s = 1; s <= g->n_scc && s <= 64; s++) (void)nm_bnvf_reach_from(g, s, mark, stack, list);
            free(mark);
            free(stack);
            free(list);
        }
        for (uint64_t key = 0; key < 16; key++) {
            bool kept;
            (void)nm_bnvf_wall_kept(&d, key, 1, &kept, &e);
        }
        if (z == 0)
            for (uint32_t rid = 1; rid <= 2; rid++) window_and_legs(&f, &d, rid);
        nm_bnvf_zone_data_free(&d);
    }
    nm_bgrd_out out = {0};
    (void)nm_bgrd_decode_rect(&g_grid, 0, -2, -2, FZ_W + 2, FZ_H + 2, &f, 2, &out, &e);
    nm_bgrd_out_free(&out);
    (void)nm_bnvf_find_open(&f, 0, 1, 1, 1.0f);
    nm_bnvf_free(&f);
    return 0;
}

#ifdef NM_FUZZ_STANDALONE
int fuzz_seed(nm_buf *out, nm_error *e)
{
    if (fixed_grid() < 0) return nm_fail(e, NM_ERR_STATE, "fixed grid");
    size_t n = g_start[FZ_W * FZ_H];
    uint32_t scc[FZ_W * FZ_H * 2];
    uint8_t b1[FZ_W * FZ_H * 2], b2[FZ_W * FZ_H * 2];
    uint16_t clr2d[FZ_W * FZ_H * 2];
    for (size_t i = 0; i < n; i++) {
        scc[i] = 1 + (uint32_t)(i % 3);
        b1[i] = (uint8_t)(i * 37);
        b2[i] = (uint8_t)(i & 1);
        clr2d[i] = (uint16_t)(i % 5);
    }
    static const uint32_t edges[] = {1, 2, 2, 3};
    nm_bnvf_region_src regions[2] = {{1, 3, 2, edges}, {2, 3, 1, edges}};
    static const uint64_t keys[] = {0, 4, 7};
    static const uint32_t row[] = {0, 1, 1, 3}, rids[] = {1, 1, 2};
    nm_bnvf_zone_src zs = {&g_src, scc, b1, b2, b1, b2, clr2d, regions, 2, keys, 3, row, rids};
    nm_bnvf_open opens[2] = {{1, 1, 1.0f, 3, 6, 1}, {2, 1, 0.5f, 4, 6, 2}};
    nm_bnvf_range oz = {0, 0, 2};
    nm_bnvf_link links[1] = {{0, 0, 0, 3, 0, 1, 0, 0, 0, 1.0f, 1.0f, {1, 1, 2.0f, 2.0f, 1, 20, 6, 0},
                              {3, 4, 6.0f, 6.0f, 2, 25, 6, 0}}};
    nm_bnvf_range lz = {0, 0, 1};
    nm_bnvf_write_src src = {FZ_HASH, FZ_FNV, &zs, 1, links, 1, &lz, 1, opens, 2, &oz, 1};
    return nm_bnvf_write(&src, &g_tiles, out, e);
}

#endif
