/* fixture.h — hand-made windows for the search tests: an ASCII map becomes a span table (one or
 * two spans per cell), the raster layers (core, lay, clearance, medial axis, step bits) and the
 * usable-span bits, exactly as the window build would hand them over; plus a mask-only sight
 * callback (digital line of 视线 over solidc) that records what it was asked. */
#ifndef SEARCH_FIXTURE_H
#define SEARCH_FIXTURE_H

#include <math.h>
#include <string.h>

#include "search/search.h"

/* Map characters: '#' no span; '.' floor at 0 m; '0'-'9' floor at that many metres;
 * 'H' platform at 5 m; 'b' bridge deck only (10 m); 'B' ground (0 m) under a bridge (10 m). */
static int fx_spans_of(char ch, float h[2])
{
    if (ch == '.') {
        h[0] = 0.0F;
        return 1;
    }
    if (ch >= '0' && ch <= '9') {
        h[0] = (float)(ch - '0');
        return 1;
    }
    if (ch == 'H') {
        h[0] = 5.0F;
        return 1;
    }
    if (ch == 'b') {
        h[0] = 10.0F;
        return 1;
    }
    if (ch == 'B') {
        h[0] = 0.0F;
        h[1] = 10.0F;
        return 2;
    }
    return 0;
}

/* Builds w from rows (all the same length). stepbits from RiseOk when `steps`, else all 0.
 * Returns NM_OK or the failing status. */
static int fx_build(nm_window *w, const char *const *rows, int ny, bool steps)
{
    memset(w, 0, sizeof *w);
    const int nx = (int)strlen(rows[0]);
    nm_error err;
    w->win.x0 = 0.0;
    w->win.y0 = 0.0;
    w->win.nx = nx;
    w->win.ny = ny;
    w->region = 1;
    nm_grid_samples sm = {0};
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            float h[2];
            int n = fx_spans_of(rows[j][i], h);
            for (int k = 0; k < n; k++)
                if (nm_grid_samples_push(&sm, (uint32_t)(j * nx + i), h[k], 1, &err))
                    return -1;
        }
    int rc = nm_grid_pack_spans(&w->win, &sm, &w->spans, &err);
    nm_grid_samples_free(&sm);
    if (rc)
        return rc;
    const size_t nc = (size_t)nx * (size_t)ny;
    w->lay = calloc(nc, 1);
    w->core = calloc(nc, 1);
    w->dist = calloc(nc, sizeof *w->dist);
    w->medial = calloc(nc, 1);
    w->stepbits = calloc(nc, 1);
    uint8_t *obst = calloc(nc, 1);
    uint16_t *q = calloc(nc, sizeof *q);
    const uint32_t ns = w->spans.nspans;
    w->sp_bits = calloc(ns + 1, 1);
    w->sp_scc = calloc(ns + 1, sizeof *w->sp_scc);
    for (size_t c = 0; c < nc; c++) {
        uint32_t f, n = nm_span_cell_spans(&w->spans, (uint32_t)c, &f);
        w->lay[c] = w->core[c] = (uint8_t)(n > 0);
        obst[c] = (uint8_t)(n == 0);
    }
    for (uint32_t k = 0; k < ns; k++) {
        w->sp_bits[k] = NM_SP_VIS3 | NM_SP_REACH | NM_SP_WALK | NM_SP_CORE;
        w->sp_scc[k] = 1;
    }
    if ((rc = nm_grid_clearance(nx, ny, obst, q, 1, &err)))
        return rc;
    for (size_t c = 0; c < nc; c++)
        w->dist[c] = obst[c] ? 0.0F : nm_grid_clearance_px(q[c]);
    if ((rc = nm_grid_medial_axis(nx, ny, obst, w->medial, &err)))
        return rc;
    if (steps) /* the cell's lowest span decides its step bits */
        for (size_t c = 0; c < nc; c++) {
            uint32_t f, n = nm_span_cell_spans(&w->spans, (uint32_t)c, &f);
            if (n)
                w->stepbits[c] = nm_grid_step_bits(&w->spans, NULL, NULL, f) /* one region */;
        }
    free(obst);
    free(q);
    return NM_OK;
}

static void fx_free(nm_window *w)
{
    free(w->lay);
    free(w->core);
    free(w->dist);
    free(w->medial);
    free(w->stepbits);
    free(w->sp_bits);
    free(w->sp_scc);
    free(w->links);
    nm_span_table_free(&w->spans);
    memset(w, 0, sizeof *w);
}

/* The span of cell (i, j) nearest height h. */
static uint32_t fx_span(const nm_window *w, int i, int j, double h)
{
    uint32_t f, n = nm_span_cell_spans(&w->spans, (uint32_t)(j * w->win.nx + i), &f), best = f;
    for (uint32_t k = f; k < f + n; k++)
        if (fabs(w->spans.sp_h[k] - h) < fabs(w->spans.sp_h[best] - h))
            best = k;
    return best;
}

/* A request from cell centres. */
static nm_search_request fx_req(int si, int sj, int gi, int gj, double h0)
{
    nm_search_request r;
    memset(&r, 0, sizeof r);
    r.sx = (si + 0.5) * NM_kCS;
    r.sy = (sj + 0.5) * NM_kCS;
    r.gx = (gi + 0.5) * NM_kCS;
    r.gy = (gj + 0.5) * NM_kCS;
    r.h0 = h0;
    return r;
}

/* Mask-only sight: the digital line from cell a to cell b stays in solidc. Records the calls. */
typedef struct fx_los {
    const nm_window *w;
    int calls, fails;
    uint32_t ok_from[1 << 16], ok_to[1 << 16]; /* allocate fx_los on the heap */
    int nok;
} fx_los;

static bool fx_line_in(const nm_window *w, const uint8_t *mask, uint32_t a, uint32_t b)
{
    const int64_t nx = w->win.nx;
    int64_t ax = a % nx, ay = a / nx, dx = (int64_t)(b % nx) - ax, dy = (int64_t)(b / nx) - ay;
    int64_t n = llabs(dx) > llabs(dy) ? llabs(dx) : llabs(dy);
    if (n < 1)
        n = 1;
    for (int64_t k = 0; k <= n; k++) {
        int64_t x = ax + (int64_t)rint((double)dx * (double)k / (double)n);
        int64_t y = ay + (int64_t)rint((double)dy * (double)k / (double)n);
        if (!mask[y * nx + x])
            return false;
    }
    return true;
}

static bool fx_los_fn(void *ctx, const uint8_t *solidc, uint32_t from, uint32_t to)
{
    fx_los *L = ctx;
    L->calls++;
    bool ok = fx_line_in(L->w, solidc, L->w->spans.sp_cell[from], L->w->spans.sp_cell[to]);
    if (!ok)
        L->fails++;
    else if (L->nok < (1 << 16)) {
        L->ok_from[L->nok] = from;
        L->ok_to[L->nok++] = to;
    }
    return ok;
}

#endif
