/* sight_blockers.c — the blocker segments of the visibility check (design article 障碍线段):
 * collecting core contours, kept walls and facade segments; the CSR index of 4 px buckets built
 * on the first query; the chord query with epoch counters; the exact intersection with its
 * open/closed interval rules; and the dense on-mask sampling. */
#include "sight.h"

#include <math.h>
#include <string.h>

void nm_sight__corner_px(const nm_grid_window *win, uint32_t corner, double *x, double *y);

#define BKT 4.0          /* kBkt: bucket edge, px */
#define BKT_PAD 1e-6     /* registration pad */
#define HIT_EPS 1e-7     /* parameter tolerance (formulas.md #154) */
#define PAR_EPS 1e-12    /* parallel test (formulas.md #153) */

static void index_drop(nm_sight_blockers *b)
{
    nm_free(b->bstart);
    nm_free(b->bsegs);
    nm_free(b->seg_epoch);
    nm_free(b->bkt_epoch);
    b->bstart = b->bsegs = b->seg_epoch = b->bkt_epoch = NULL;
    b->indexed = false;
    b->bnx = b->bny = 0;
}

void nm_sight_blockers_free(nm_sight_blockers *b)
{
    if (!b)
        return;
    index_drop(b);
    nm_free(b->segs);
    memset(b, 0, sizeof *b);
}

int nm_sight_blockers_add(nm_sight_blockers *b, const nm_window_seg *segs, uint32_t n,
                          nm_error *err)
{
    if (n == 0)
        return NM_OK;
    if (b->indexed || (uint64_t)b->nsegs + n > UINT32_MAX - 1)
        return nm_fail(err, NM_ERR_STATE, "blockers: add after the index was built");
    nm_window_seg *ns = nm_realloc(b->segs, ((size_t)b->nsegs + n) * sizeof *ns);
    if (!ns)
        return nm_fail(err, NM_ERR_NOMEM, "blockers: %u segments", b->nsegs + n);
    memcpy(ns + b->nsegs, segs, (size_t)n * sizeof *ns);
    b->segs = ns;
    b->nsegs += n;
    return NM_OK;
}

/* 障碍线段: core contours, then the window's kept walls and facade segments */
int nm_sight_blockers_build(nm_sight_blockers *b, const nm_window *w, nm_error *err)
{
    memset(b, 0, sizeof *b);
    if (w->core) {
        uint32_t *corners, *ls, nl;
        int rc = nm_sight_trace_contours(w->win.nx, w->win.ny, w->core, &corners, &ls, &nl, err);
        if (rc != NM_OK)
            return rc;
        uint32_t ne = nl ? ls[nl] : 0; /* one edge per corner of a closed loop */
        b->segs = nm_malloc((size_t)ne * sizeof *b->segs + 1);
        if (!b->segs) {
            nm_free(corners);
            nm_free(ls);
            return nm_fail(err, NM_ERR_NOMEM, "blockers: %u contour edges", ne);
        }
        for (uint32_t k = 0; k < nl; ++k)
            for (uint32_t e = ls[k]; e < ls[k + 1]; ++e) {
                uint32_t nxt = e + 1 < ls[k + 1] ? e + 1 : ls[k];
                nm_window_seg *s = &b->segs[b->nsegs++];
                nm_sight__corner_px(&w->win, corners[e], &s->ax, &s->ay);
                nm_sight__corner_px(&w->win, corners[nxt], &s->bx, &s->by);
                s->kind = NM_SEG_WALL;
            }
        nm_free(corners);
        nm_free(ls);
    }
    int rc = nm_sight_blockers_add(b, w->segs, w->nsegs, err);
    if (rc != NM_OK)
        nm_sight_blockers_free(b);
    return rc;
}

/* 桶索引: CSR over 4 px buckets, each segment registered in every bucket of its padded box */
int nm_sight_blockers_index(nm_sight_blockers *b, nm_error *err)
{
    if (b->indexed || b->nsegs == 0)
        return NM_OK;
    double mnx = INFINITY, mny = INFINITY, mxx = -INFINITY, mxy = -INFINITY;
    for (uint32_t k = 0; k < b->nsegs; ++k) {
        const nm_window_seg *s = &b->segs[k];
        mnx = fmin(mnx, fmin(s->ax, s->bx));
        mny = fmin(mny, fmin(s->ay, s->by));
        mxx = fmax(mxx, fmax(s->ax, s->bx));
        mxy = fmax(mxy, fmax(s->ay, s->by));
    }
    if (!(isfinite(mnx) && isfinite(mny) && isfinite(mxx) && isfinite(mxy)))
        return nm_fail(err, NM_ERR_ARG, "blockers: non-finite segment");
    b->bx0 = mnx - BKT;
    b->by0 = mny - BKT;
    double fnx = floor((mxx + BKT - b->bx0) / BKT) + 1, fny = floor((mxy + BKT - b->by0) / BKT) + 1;
    if (fnx * fny > 1.0e8)
        return nm_fail(err, NM_ERR_ARG, "blockers: segment extent too large for the index");
    b->bnx = (int32_t)fnx;
    b->bny = (int32_t)fny;
    size_t nb = (size_t)b->bnx * (size_t)b->bny;
    b->bstart = nm_calloc(nb + 1, sizeof *b->bstart);
    b->bkt_epoch = nm_calloc(nb, sizeof *b->bkt_epoch);
    b->seg_epoch = nm_calloc(b->nsegs, sizeof *b->seg_epoch);
    if (!b->bstart || !b->bkt_epoch || !b->seg_epoch) {
        index_drop(b);
        return nm_fail(err, NM_ERR_NOMEM, "blockers: bucket index (%zu buckets)", nb);
    }
    size_t total = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t k = 0; k < b->nsegs; ++k) {
            const nm_window_seg *s = &b->segs[k];
            int32_t i0 = (int32_t)floor((fmin(s->ax, s->bx) - BKT_PAD - b->bx0) / BKT);
            int32_t i1 = (int32_t)floor((fmax(s->ax, s->bx) + BKT_PAD - b->bx0) / BKT);
            int32_t j0 = (int32_t)floor((fmin(s->ay, s->by) - BKT_PAD - b->by0) / BKT);
            int32_t j1 = (int32_t)floor((fmax(s->ay, s->by) + BKT_PAD - b->by0) / BKT);
            for (int32_t j = j0; j <= j1; ++j)
                for (int32_t i = i0; i <= i1; ++i) {
                    size_t c = (size_t)j * (size_t)b->bnx + (size_t)i;
                    if (pass == 0) {
                        b->bstart[c + 1]++;
                        total++;
                    } else {
                        b->bsegs[b->bkt_epoch[c]++] = k; /* bkt_epoch: fill cursor for now */
                    }
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < nb; ++c)
                b->bstart[c + 1] += b->bstart[c];
            b->bsegs = nm_malloc(total * sizeof *b->bsegs + 1);
            if (!b->bsegs) {
                index_drop(b);
                return nm_fail(err, NM_ERR_NOMEM, "blockers: %zu bucket entries", total);
            }
            for (size_t c = 0; c < nb; ++c)
                b->bkt_epoch[c] = b->bstart[c];
        }
    }
    memset(b->bkt_epoch, 0, nb * sizeof *b->bkt_epoch);
    b->epoch = 0;
    b->indexed = true;
    return NM_OK;
}

static double cross2(double ax, double ay, double bx, double by) { return ax * by - ay * bx; }

/* 求交: r = q - p, s = b - a, u = a - p, t = (u x s)/(r x s), w = (u x r)/(r x s) */
bool nm_sight_seg_hits(double px, double py, double qx, double qy, const nm_window_seg *s)
{
    /* 1. boxes apart (with 1e-7 slack) */
    if (fmax(px, qx) < fmin(s->ax, s->bx) - HIT_EPS || fmin(px, qx) > fmax(s->ax, s->bx) + HIT_EPS ||
        fmax(py, qy) < fmin(s->ay, s->by) - HIT_EPS || fmin(py, qy) > fmax(s->ay, s->by) + HIT_EPS)
        return false;
    double rx = qx - px, ry = qy - py, sx = s->bx - s->ax, sy = s->by - s->ay;
    double ux = s->ax - px, uy = s->ay - py;
    double rs = cross2(rx, ry, sx, sy);
    /* 2. parallel or collinear: never a crossing */
    if (!(fabs(rs) > PAR_EPS))
        return false;
    double t = cross2(ux, uy, sx, sy) / rs;
    double w = cross2(ux, uy, rx, ry) / rs;
    /* 3. chord side open, segment side widened */
    return t > HIT_EPS && t < 1.0 - HIT_EPS && w > -HIT_EPS && w < 1.0 + HIT_EPS;
}

static void epoch_next(nm_sight_blockers *b)
{
    if (++b->epoch == 0) { /* wrapped: clear both tables */
        memset(b->seg_epoch, 0, (size_t)b->nsegs * sizeof *b->seg_epoch);
        memset(b->bkt_epoch, 0, (size_t)b->bnx * (size_t)b->bny * sizeof *b->bkt_epoch);
        b->epoch = 1;
    }
}

bool nm_sight_blocked(nm_sight_blockers *b, double px, double py, double qx, double qy)
{
    if (!(isfinite(px) && isfinite(py) && isfinite(qx) && isfinite(qy)))
        return true; /* a broken chord counts as blocked */
    if (!b || b->nsegs == 0)
        return false;
    if (!b->indexed)
        (void)nm_sight_blockers_index(b, NULL);
    if (!b->indexed) { /* no memory for the index: scan the whole table, same answer */
        for (uint32_t k = 0; k < b->nsegs; ++k)
            if (nm_sight_seg_hits(px, py, qx, qy, &b->segs[k]))
                return true;
        return false;
    }
    epoch_next(b);
    const uint32_t ep = b->epoch;
    double L = nm_hypot(qx - px, qy - py);
    int64_t ns = (int64_t)floor(L / (BKT / 2)) + 1; /* floor(L/2) + 2 points, spacing < 2 px */
    for (int64_t k = 0; k <= ns; ++k) {
        double f = (double)k / (double)ns;
        double x = px + (qx - px) * f, y = py + (qy - py) * f;
        double fi = floor((x - b->bx0) / BKT), fj = floor((y - b->by0) / BKT);
        if (fi < -1 || fj < -1 || fi > b->bnx || fj > b->bny)
            continue; /* its 3x3 neighbourhood misses the grid */
        int32_t ci = (int32_t)fi, cj = (int32_t)fj;
        for (int32_t j = cj - 1; j <= cj + 1; ++j) {
            if (j < 0 || j >= b->bny)
                continue;
            for (int32_t i = ci - 1; i <= ci + 1; ++i) {
                if (i < 0 || i >= b->bnx)
                    continue;
                size_t c = (size_t)j * (size_t)b->bnx + (size_t)i;
                if (b->bkt_epoch[c] == ep)
                    continue;
                b->bkt_epoch[c] = ep;
                for (uint32_t e = b->bstart[c]; e < b->bstart[c + 1]; ++e) {
                    uint32_t sg = b->bsegs[e];
                    if (b->seg_epoch[sg] == ep)
                        continue;
                    b->seg_epoch[sg] = ep;
                    if (nm_sight_seg_hits(px, py, qx, qy, &b->segs[sg]))
                        return true;
                }
            }
        }
    }
    return false;
}

/* on 掩膜: dense samples, spacing below half a cell, the last exactly q */
bool nm_sight_off_mask(const nm_grid_window *win, const uint8_t *mask, double px, double py,
                       double qx, double qy)
{
    double L = nm_hypot(qx - px, qy - py);
    if (!isfinite(L))
        return true;
    int64_t n = (int64_t)floor(L / (NM_kCS / 2)) + 2;
    for (int64_t i = 0; i < n; ++i) {
        double t = i == n - 1 ? 1.0 : (double)i / (double)(n - 1);
        double x = i == n - 1 ? qx : px + (qx - px) * t;
        double y = i == n - 1 ? qy : py + (qy - py) * t;
        int64_t cx = nm_sight_cell_trunc(x, win->x0), cy = nm_sight_cell_trunc(y, win->y0);
        if (cx < 0 || cy < 0 || cx >= win->nx || cy >= win->ny)
            return true;
        if (!mask[(size_t)cy * (size_t)win->nx + (size_t)cx])
            return true;
    }
    return false;
}
