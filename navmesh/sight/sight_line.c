/* sight_line.c — which cells a chord passes (design article 视线 / 取格): the digital line with
 * nearbyint, SegMinClr over it, and TraceContours, which turns the core mask into the closed
 * corner loops whose cell edges become blocker segments. */
#include "sight.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 取格: digital line from a to b */
void nm_sight_line_init(nm_sight_line *l, int64_t ax, int64_t ay, int64_t bx, int64_t by)
{
    l->ax = ax;
    l->ay = ay;
    l->dx = bx - ax;
    l->dy = by - ay;
    int64_t n = llabs(l->dx) > llabs(l->dy) ? llabs(l->dx) : llabs(l->dy);
    l->n = n > 1 ? n : 1;
}

/* 拐点抬升 / SegMinClr */
double nm_sight_seg_min_clr(const float *d, const nm_grid_window *win, double ax, double ay,
                            double bx, double by)
{
    if (!(isfinite(ax) && isfinite(ay) && isfinite(bx) && isfinite(by)))
        return 0.0; /* a broken chord has no clearance */
    nm_sight_line l;
    nm_sight_line_init(&l, nm_sight_cell_trunc(ax, win->x0), nm_sight_cell_trunc(ay, win->y0),
                       nm_sight_cell_trunc(bx, win->x0), nm_sight_cell_trunc(by, win->y0));
    double m = INFINITY;
    for (int64_t k = 0; k <= l.n; ++k) {
        int64_t cx, cy;
        nm_sight_line_cell(&l, k, &cx, &cy);
        if (cx < 0 || cy < 0 || cx >= win->nx || cy >= win->ny)
            continue;
        double v = d[(size_t)cy * (size_t)win->nx + (size_t)cx];
        if (v < m)
            m = v;
    }
    return m;
}

/* ---- 轮廓追踪 ---- */
/* Directions: 0 = +y, 1 = -x, 2 = -y, 3 = +x; corner step kStep = {+W, -1, -W, +1}. */

static bool in_mask(int32_t nx, int32_t ny, const uint8_t *m, int64_t i, int64_t j)
{
    return i >= 0 && j >= 0 && i < nx && j < ny && m[(size_t)j * (size_t)nx + (size_t)i] != 0;
}

/* 轮廓追踪 */
int nm_sight_trace_contours(int32_t nx, int32_t ny, const uint8_t *mask, uint32_t **corners,
                            uint32_t **loop_start, uint32_t *nloops, nm_error *err)
{
    *corners = NULL;
    *loop_start = NULL;
    *nloops = 0;
    if (nx < 1 || ny < 1 || (uint64_t)(nx + 1) * (uint64_t)(ny + 1) > 0xFFFFFFFEu || !mask)
        return nm_fail(err, NM_ERR_ARG, "TraceContours: bad mask size %dx%d", nx, ny);
    const int64_t W = (int64_t)nx + 1;
    const size_t ncorner = (size_t)W * (size_t)(ny + 1);
    const int64_t kstep[4] = {W, -1, -W, 1};
    uint8_t *cb = nm_calloc(ncorner, 1); /* low 4 bits: out edges; high 4 bits: walked */
    if (!cb)
        return nm_fail(err, NM_ERR_NOMEM, "TraceContours: corner bytes (%zu)", ncorner);
    /* 1. 建边: an out edge at the start corner of each boundary side, mask cell on the left */
    size_t nedges = 0;
    for (int32_t j = 0; j < ny; ++j)
        for (int32_t i = 0; i < nx; ++i) {
            if (!mask[(size_t)j * (size_t)nx + (size_t)i])
                continue;
            size_t c00 = (size_t)j * (size_t)W + (size_t)i; /* corner (i, j) */
            if (!in_mask(nx, ny, mask, i, (int64_t)j - 1)) { cb[c00] |= 1u << 3; nedges++; }
            if (!in_mask(nx, ny, mask, (int64_t)i + 1, j)) { cb[c00 + 1] |= 1u << 0; nedges++; }
            if (!in_mask(nx, ny, mask, i, (int64_t)j + 1)) {
                cb[c00 + (size_t)W + 1] |= 1u << 1;
                nedges++;
            }
            if (!in_mask(nx, ny, mask, (int64_t)i - 1, j)) {
                cb[c00 + (size_t)W] |= 1u << 2;
                nedges++;
            }
        }
    uint32_t *out = nm_malloc((nedges + 1) * sizeof *out);
    uint32_t *ls = nm_malloc((nedges / 4 + 2) * sizeof *ls);
    if (!out || !ls) {
        nm_free(cb);
        nm_free(out);
        nm_free(ls);
        return nm_fail(err, NM_ERR_NOMEM, "TraceContours: %zu edges", nedges);
    }
    size_t no = 0;
    uint32_t nl = 0;
    ls[0] = 0;
    /* 2. 追踪: from every corner with an unwalked out edge, follow out edges until closed */
    for (size_t c0 = 0; c0 < ncorner; ++c0) {
        while ((cb[c0] & 0x0F) & ~(cb[c0] >> 4)) {
            size_t start = no, c = c0;
            int d = -1;
            for (;;) {
                uint8_t avail = (uint8_t)((cb[c] & 0x0F) & ~(cb[c] >> 4));
                if (!avail)
                    break; /* reached a walked edge: the loop is closed */
                int nd = -1;
                if (d < 0) {
                    for (int k = 0; k < 4; ++k)
                        if (avail & (1u << k)) { nd = k; break; }
                } else {
                    /* 3. 岔口: right turn, then straight, left, back */
                    const int order[4] = {(d + 3) & 3, d, (d + 1) & 3, (d + 2) & 3};
                    for (int k = 0; k < 4; ++k)
                        if (avail & (1u << order[k])) { nd = order[k]; break; }
                }
                out[no++] = (uint32_t)c; /* 4. 输出: every corner */
                cb[c] |= (uint8_t)(1u << (nd + 4));
                c = (size_t)((int64_t)c + kstep[nd]);
                d = nd;
            }
            if (no - start < 4) {
                no = start; /* loops of fewer than 4 corners are dropped */
                continue;
            }
            ls[++nl] = (uint32_t)no;
        }
    }
    nm_free(cb);
    *corners = out;
    *loop_start = ls;
    *nloops = nl;
    return NM_OK;
}

/* corner -> px helpers used by the blocker build */
void nm_sight__corner_px(const nm_grid_window *win, uint32_t corner, double *x, double *y);
void nm_sight__corner_px(const nm_grid_window *win, uint32_t corner, double *x, double *y)
{
    uint32_t W = (uint32_t)win->nx + 1;
    *x = win->x0 + (double)(corner % W) * NM_kCS;
    *y = win->y0 + (double)(corner / W) * NM_kCS;
}

