/* sight_fixture.h — hand-made windows for the sight and post-processing tests: a window of
 * nx * ny cells at a px origin, spans from a per-cell floor height (NAN = empty column) plus extra
 * spans, a core mask, a clearance field computed from the core and step bits, all allocated with
 * nm_malloc so the library's rules hold. Header-only (static functions). */
#ifndef NM_TEST_SIGHT_FIXTURE_H
#define NM_TEST_SIGHT_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grid/grid.h"
#include "sight/sight.h"
#include "window/window.h"

typedef struct fx_span {
    int i, j;
    float h;
} fx_span;

/* floor: nx*ny heights (NAN = no span); extra: more spans. core = cells with a floor span. */
static inline void fx_window(nm_window *w, int nx, int ny, double x0, double y0,
                             const float *floor_h, const fx_span *extra, size_t nextra)
{
    memset(w, 0, sizeof *w);
    w->win.x0 = x0;
    w->win.y0 = y0;
    w->win.nx = nx;
    w->win.ny = ny;
    w->gx0 = (int64_t)(x0 / 0.25);
    w->gy0 = (int64_t)(y0 / 0.25);
    nm_grid_samples s = {0};
    nm_error err = {0};
    size_t n = (size_t)nx * (size_t)ny;
    for (size_t c = 0; c < n; ++c)
        if (floor_h && !isnan(floor_h[c]))
            cr_assert_eq(nm_grid_samples_push(&s, (uint32_t)c, floor_h[c], 1, &err), NM_OK);
    for (size_t k = 0; k < nextra; ++k)
        cr_assert_eq(nm_grid_samples_push(&s, (uint32_t)(extra[k].j * nx + extra[k].i),
                                          extra[k].h, 1, &err),
                     NM_OK);
    cr_assert_eq(nm_grid_pack_spans(&w->win, &s, &w->spans, &err), NM_OK, "%s", err.msg);
    nm_grid_samples_free(&s);
    w->core = nm_calloc(n, 1);
    w->lay = nm_calloc(n, 1);
    w->stepbits = nm_calloc(n, 1);
    w->dist = nm_calloc(n, sizeof *w->dist);
    cr_assert(w->core && w->lay && w->stepbits && w->dist);
    for (size_t c = 0; c < n; ++c)
        w->core[c] = w->lay[c] = floor_h && !isnan(floor_h[c]) ? 1 : 0;
}

/* Clearance of the current core: distance to the nearest non-core cell (px, capped 12). */
static inline void fx_clearance(nm_window *w)
{
    size_t n = (size_t)w->win.nx * (size_t)w->win.ny;
    uint8_t *obst = nm_malloc(n);
    uint16_t *q = nm_malloc(n * sizeof *q);
    cr_assert(obst && q);
    for (size_t c = 0; c < n; ++c)
        obst[c] = w->core[c] ? 0 : 1;
    nm_error err = {0};
    cr_assert_eq(nm_grid_clearance(w->win.nx, w->win.ny, obst, q, 1, &err), NM_OK, "%s", err.msg);
    for (size_t c = 0; c < n; ++c)
        w->dist[c] = obst[c] ? 0.0f : nm_grid_clearance_px(q[c]);
    nm_free(obst);
    nm_free(q);
}

static inline void fx_free(nm_window *w)
{
    nm_span_table_free(&w->spans);
    nm_free(w->core);
    nm_free(w->lay);
    nm_free(w->stepbits);
    nm_free(w->dist);
    nm_free(w->medial);
    nm_free(w->segs);
    memset(w, 0, sizeof *w);
}

static inline double fx_cx(const nm_window *w, int i) { return w->win.x0 + (i + 0.5) * 0.25; }
static inline double fx_cy(const nm_window *w, int j) { return w->win.y0 + (j + 0.5) * 0.25; }

/* xorshift64* */
static inline uint64_t fx_rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}
static inline double fx_unit(uint64_t *s) { return (double)(fx_rng(s) >> 11) / 9007199254740992.0; }

#endif
