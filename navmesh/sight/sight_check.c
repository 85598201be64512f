/* sight_check.c — the per-cell checks of a chord (design article 视线): crossesStep over the
 * directed step bits, the height-continuity check LayerOracle::walk (normal and drop-permitting
 * modes), Visibility::ok assembling a view's checks, the search's callback form, and the route
 * mask tm (拉直的输入). */
#include "sight.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- cells of a polyline: digital lines joined, consecutive repeats removed, then the cells
 * outside the window removed (高度连续检查, step 1) ---- */
typedef struct cell_iter {
    const nm_grid_window *win;
    const double *pts;
    uint32_t npts, seg;
    nm_sight_walker l;
    bool have_last;
    int64_t lx, ly;
} cell_iter;

static void line_of_seg(cell_iter *it)
{
    const double *a = it->pts + 2 * (size_t)it->seg;
    const double *b = it->npts > 1 ? a + 2 : a;
    nm_sight_line l;
    nm_sight_line_init(&l, nm_sight_cell_trunc(a[0], it->win->x0),
                       nm_sight_cell_trunc(a[1], it->win->y0),
                       nm_sight_cell_trunc(b[0], it->win->x0),
                       nm_sight_cell_trunc(b[1], it->win->y0));
    nm_sight_walker_init(&it->l, &l);
}

static void iter_init(cell_iter *it, const nm_grid_window *win, const double *pts, uint32_t npts)
{
    memset(it, 0, sizeof *it);
    it->win = win;
    it->pts = pts;
    it->npts = npts;
    if (npts > 0)
        line_of_seg(it);
}

static bool iter_next(cell_iter *it, int64_t *cx, int64_t *cy)
{
    uint32_t nseg = it->npts > 1 ? it->npts - 1 : it->npts;
    while (it->seg < nseg) {
        int64_t x, y;
        nm_sight_walker_cell(&it->l, &x, &y);
        nm_sight_walker_next(&it->l);
        if (it->l.k > it->l.n) {
            if (++it->seg < nseg)
                line_of_seg(it);
        }
        if (it->have_last && x == it->lx && y == it->ly)
            continue;
        it->have_last = true;
        it->lx = x;
        it->ly = y;
        if (x < 0 || y < 0 || x >= it->win->nx || y >= it->win->ny)
            continue;
        *cx = x;
        *cy = y;
        return true;
    }
    return false;
}

/* ---- 立面禁步 ---- */
/* The step bit of a move (dx, dy) by (dy + 1) * 3 + dx + 1: canonical direction i (nm_grid_step_dx
 * / _dy: (1,0), (0,1), (1,1), (1,-1)) is bit 2i of the cell left, its reverse bit 2i + 1 of the
 * cell entered; -1 for no move. */
static const int8_t k_step_bit[9] = {5, 3, 6, 1, -1, 0, 7, 2, 4};
static const uint8_t k_step_rev[9] = {1, 1, 0, 1, 0, 0, 1, 0, 0};

static bool step_forbidden(const nm_window *w, int64_t ax, int64_t ay, int64_t bx, int64_t by)
{
    const int64_t ddx = bx - ax, ddy = by - ay;
    if (ddx < -1 || ddx > 1 || ddy < -1 || ddy > 1)
        return false;
    const int m = (int)((ddy + 1) * 3 + ddx + 1);
    if (k_step_bit[m] < 0)
        return false;
    const size_t nx = (size_t)w->win.nx;
    const size_t c = k_step_rev[m] ? (size_t)by * nx + (size_t)bx : (size_t)ay * nx + (size_t)ax;
    return (w->stepbits[c] >> k_step_bit[m]) & 1u;
}

/* crossesStep */
bool nm_sight_crosses_step(const nm_window *w, double px, double py, double qx, double qy)
{
    if (!w->stepbits)
        return false;
    if (!(isfinite(px) && isfinite(py) && isfinite(qx) && isfinite(qy)))
        return true;
    nm_sight_line l;
    nm_sight_line_init(&l, nm_sight_cell_trunc(px, w->win.x0), nm_sight_cell_trunc(py, w->win.y0),
                       nm_sight_cell_trunc(qx, w->win.x0), nm_sight_cell_trunc(qy, w->win.y0));
    nm_sight_walker lw;
    nm_sight_walker_init(&lw, &l);
    int64_t x0, y0;
    nm_sight_walker_cell(&lw, &x0, &y0);
    for (int64_t k = 1; k <= l.n; ++k) {
        int64_t x, y;
        nm_sight_walker_next(&lw);
        nm_sight_walker_cell(&lw, &x, &y);
        if (x == x0 && y == y0)
            continue;
        bool ina = x0 >= 0 && y0 >= 0 && x0 < w->win.nx && y0 < w->win.ny;
        bool inb = x >= 0 && y >= 0 && x < w->win.nx && y < w->win.ny;
        if (ina && inb && step_forbidden(w, x0, y0, x, y))
            return true;
        x0 = x;
        y0 = y;
    }
    return false;
}

/* ---- 高度连续检查 ---- */
/* 3.2 up = UpAllow(w) + kQH, UpAllow = max(kStepUp, kSlope * w * kCS), w = the cell distance
 * |(ax, ay)| to the last non-empty column. */
static float up_allow(int64_t ax, int64_t ay)
{
    double dd = nm_hypot((double)ax, (double)ay);
    return (float)(fmax(NM_kStepUp, NM_kSlope * dd * NM_kCS) + NM_kQH);
}

int nm_sight_oracle_init(nm_sight_oracle *o, const nm_window *w, nm_error *err)
{
    memset(o, 0, sizeof *o);
    o->w = w;
    /* the largest column, counted when the span table was built (not a scan of the occupied
     * cells here: twice a plan, 11 ms on an 8.9 M-cell window) */
    const uint32_t maxcol = w->spans.max_col > 1 ? w->spans.max_col : 1;
    /* a set never holds more than the old set plus one column (drop mode): room for both */
    o->cap = 2 * maxcol + 64;
    for (int a = 0; a < NM_SIGHT_UP_GAPS; ++a) /* the walk's allowance for the usual short gaps */
        for (int b = 0; b < NM_SIGHT_UP_GAPS; ++b)
            o->up[a][b] = up_allow(a, b);
    o->cur = nm_malloc((size_t)o->cap * sizeof *o->cur);
    o->nxt = nm_malloc((size_t)o->cap * sizeof *o->nxt);
    if (!o->cur || !o->nxt) {
        nm_sight_oracle_free(o);
        return nm_fail(err, NM_ERR_NOMEM, "LayerOracle: height sets (%u)", 2 * maxcol + 64);
    }
    return NM_OK;
}

void nm_sight_oracle_free(nm_sight_oracle *o)
{
    if (!o)
        return;
    nm_free(o->cur);
    nm_free(o->nxt);
    memset(o, 0, sizeof *o);
}

static void set_add(float *set, uint32_t *n, uint32_t cap, float v)
{
    for (uint32_t i = 0; i < *n; ++i)
        if (set[i] == v)
            return;
    if (*n < cap)
        set[(*n)++] = v;
}

/* Does a column within kSeamCells cells ahead hold the departure layer again (a seam)? */
static bool seam_ahead(const nm_window *w, const cell_iter *it, const float *cur, uint32_t ncur)
{
    cell_iter look = *it;
    for (int s = 1; s <= NM_kSeamCells; ++s) {
        int64_t x, y;
        if (!iter_next(&look, &x, &y))
            return false;
        uint32_t first,
            cnt = nm_span_cell_spans(&w->spans, (uint32_t)(y * w->win.nx + x), &first);
        for (uint32_t k = 0; k < cnt; ++k)
            for (uint32_t i = 0; i < ncur; ++i)
                if (fabsf(w->spans.sp_h[first + k] - cur[i]) <= (float)NM_kClimb)
                    return true;
    }
    return false;
}

/* 3.3 The spans of a column (first, cnt) within [-kClimb, up] of some height of the set cur go to
 * nxt (*nn heights); returns whether, in the drop mode, a span was not kept and lies more than
 * kClimb below some height of the set (a drop candidate). */
static bool keep_column(const nm_window *w, const float *cur, uint32_t ncur, uint32_t first,
                        uint32_t cnt, float up, bool drop, float *nxt, uint32_t *nn, uint32_t cap)
{
    bool any_drop = false;
    for (uint32_t k = 0; k < cnt; ++k) {
        float t = w->spans.sp_h[first + k];
        bool keep = false, low = false;
        for (uint32_t i = 0; i < ncur; ++i) {
            float d = t - cur[i];
            if (d >= -(float)NM_kClimb && d <= up) {
                keep = true;
                break;
            }
            if (d < -(float)NM_kClimb)
                low = true;
        }
        if (keep)
            set_add(nxt, nn, cap, t);
        else if (drop && low)
            any_drop = true;
    }
    return any_drop;
}

/* LayerOracle::walk; the result set is left in o->cur (count *nout) */
static bool walk_core(nm_sight_oracle *o, const double *pts, uint32_t npts, const float *hin,
                      uint32_t nin, bool drop, uint32_t *nout)
{
    const nm_window *w = o->w;
    float *cur = o->cur, *nxt = o->nxt;
    uint32_t ncur = 0;
    for (uint32_t k = 0; k < 2 * npts; ++k)
        if (!isfinite(pts[k])) { /* a broken point never walks */
            *nout = 0;
            return false;
        }
    for (uint32_t i = 0; i < nin; ++i)
        set_add(cur, &ncur, o->cap, hin[i]);
    cell_iter it;
    iter_init(&it, &w->win, pts, npts);
    int64_t pcx, pcy;
    bool ok = true;
    if (iter_next(&it, &pcx, &pcy)) { /* 2. the start cell is not checked */
        int64_t cx, cy;
        while (iter_next(&it, &cx, &cy)) {
            uint32_t first, cnt =
                nm_span_cell_spans(&w->spans, (uint32_t)(cy * w->win.nx + cx), &first);
            if (cnt == 0)
                continue; /* 3.1 empty column: skipped, pc stays */
            const int64_t ax = llabs(cx - pcx), ay = llabs(cy - pcy);
            const float up = ax < NM_SIGHT_UP_GAPS && ay < NM_SIGHT_UP_GAPS ? o->up[ax][ay]
                                                                          : up_allow(ax, ay);
            uint32_t nn = 0;
            const bool any_drop =
                keep_column(w, cur, ncur, first, cnt, up, drop, nxt, &nn, o->cap);
            if (drop) {
                bool seam = any_drop || nn == 0 ? seam_ahead(w, &it, cur, ncur) : false;
                if (any_drop && !seam)
                    for (uint32_t k = 0; k < cnt; ++k) {
                        float t = w->spans.sp_h[first + k];
                        for (uint32_t i = 0; i < ncur; ++i)
                            if (t - cur[i] < -(float)NM_kClimb) {
                                set_add(nxt, &nn, o->cap, t);
                                break;
                            }
                    }
                if (nn == 0) { /* nothing connects: keep the old set, add the column */
                    for (uint32_t i = 0; i < ncur; ++i)
                        set_add(nxt, &nn, o->cap, cur[i]);
                    if (!seam)
                        for (uint32_t k = 0; k < cnt; ++k)
                            set_add(nxt, &nn, o->cap, w->spans.sp_h[first + k]);
                }
            } else if (nn == 0) {
                ok = false; /* 3.4 no span kept: no solution */
                break;
            }
            float *tmp = cur;
            cur = nxt;
            nxt = tmp;
            ncur = nn;
            pcx = cx;
            pcy = cy;
        }
    }
    /* keep o's buffers consistent after the swaps */
    o->cur = cur;
    o->nxt = nxt;
    *nout = ok ? ncur : 0;
    return ok;
}

bool nm_sight_walk(nm_sight_oracle *o, const double *pts, uint32_t npts, const float *hin,
                   uint32_t nin, bool drop, float *hout, uint32_t *nout)
{
    if (!walk_core(o, pts, npts, hin, nin, drop, nout))
        return false;
    memmove(hout, o->cur, (size_t)*nout * sizeof *hout);
    return true;
}

/* LayerOracle::ok */
bool nm_sight_layers_ok(nm_sight_oracle *o, double px, double py, double qx, double qy,
                        float hp, float hq)
{
    double pts[4] = {px, py, qx, qy};
    uint32_t n;
    if (!walk_core(o, pts, 2, &hp, 1, false, &n))
        return false;
    for (uint32_t i = 0; i < n; ++i)
        if (fabsf(o->cur[i] - hq) <= 1e-3f)
            return true;
    return false;
}

/* crossesStep and LayerOracle::ok (normal mode) in one walk of the chord's digital line: both
 * follow the same cells, the first with consecutive repeats skipped, the second also without the
 * cells outside the window. False as soon as either fails: the same answer as the two in turn. */
static bool steps_and_layers_ok(nm_sight_oracle *o, const uint8_t *ground, double px, double py, double qx,
                                double qy, float hp, float hq)
{
    const nm_window *w = o->w;
    const nm_grid_window *win = &w->win;
    if (!(isfinite(px) && isfinite(py) && isfinite(qx) && isfinite(qy)))
        return false;
    nm_sight_line l;
    nm_sight_line_init(&l, nm_sight_cell_trunc(px, win->x0), nm_sight_cell_trunc(py, win->y0),
                       nm_sight_cell_trunc(qx, win->x0), nm_sight_cell_trunc(qy, win->y0));
    nm_sight_walker lw;
    nm_sight_walker_init(&lw, &l);
    float *cur = o->cur, *nxt = o->nxt;
    uint32_t ncur = 0;
    set_add(cur, &ncur, o->cap, hp);
    int64_t x0, y0, pcx = 0, pcy = 0;
    nm_sight_walker_cell(&lw, &x0, &y0);
    bool in0 = x0 >= 0 && y0 >= 0 && x0 < win->nx && y0 < win->ny;
    bool started = in0; /* 2. the first cell in the window is the start: not checked */
    if (started) {
        pcx = x0;
        pcy = y0;
    }
    bool ok = true;
    for (int64_t k = 1; k <= l.n && ok; ++k) {
        int64_t x, y;
        nm_sight_walker_next(&lw);
        nm_sight_walker_cell(&lw, &x, &y);
        if (x == x0 && y == y0)
            continue;
        const bool in = x >= 0 && y >= 0 && x < win->nx && y < win->ny;
        if (in0 && in && w->stepbits && step_forbidden(w, x0, y0, x, y)) {
            ok = false; /* crossesStep */
            break;
        }
        x0 = x;
        y0 = y;
        in0 = in;
        if (!in)
            continue;
        if (!started) {
            started = true;
            pcx = x;
            pcy = y;
            continue;
        }
        uint32_t first,
            cnt = nm_span_cell_spans(&w->spans, (uint32_t)(y * win->nx + x), &first);
        if (cnt == 0)
            continue; /* 3.1 empty column: skipped, pc stays */
        const int64_t ax = llabs(x - pcx), ay = llabs(y - pcy);
        const float up = ax < NM_SIGHT_UP_GAPS && ay < NM_SIGHT_UP_GAPS ? o->up[ax][ay]
                                                                      : up_allow(ax, ay);
        uint32_t nn = 0;
        keep_column(w, cur, ncur, first, cnt, up, false, nxt, &nn, o->cap);
        if (nn == 0) {
            ok = false; /* 3.4 no span kept */
            break;
        }
        float *tmp = cur;
        cur = nxt;
        nxt = tmp;
        ncur = nn;
        pcx = x;
        pcy = y;
        /* A cell of plain ground (d >= 2; its set is now its one span): the next d - 1 line cells
         * are plain ground too (one span each, no step bits, within 1.25 m of their neighbours, so kept
         * under the one-step bounds -kClimb / kStepUp + kQH), so the walk lands on the last of
         * them with that cell's span as the set, as walking them would. */
        const unsigned d = ground ? ground[(size_t)y * (size_t)win->nx + (size_t)x] : 0;
        if (d >= 2 && k < l.n) {
            k = k + (int64_t)d - 1 < l.n ? k + (int64_t)d - 1 : l.n;
            nm_sight_walker_seek(&lw, k);
            nm_sight_walker_cell(&lw, &x0, &y0);
            nm_span_cell_spans(&w->spans, (uint32_t)(y0 * win->nx + x0), &first);
            cur[0] = w->spans.sp_h[first];
            ncur = 1;
            pcx = x0;
            pcy = y0;
        }
    }
    o->cur = cur;
    o->nxt = nxt;
    if (!ok)
        return false;
    for (uint32_t i = 0; i < ncur; ++i)
        if (fabsf(cur[i] - hq) <= 1e-3f)
            return true;
    return false;
}

/* ---- Visibility::ok ---- */
/* Check 1: the blocker segments, then the on mask. */
static bool crossings_ok(const nm_sight_view *v, double px, double py, double qx, double qy)
{
    if (v->blk && nm_sight_blocked(v->blk, px, py, qx, qy))
        return false;
    return !(v->on && (v->on_far ? nm_sight_off_mask_plain(&v->w->win, v->on_far, px, py, qx, qy)
                                 : nm_sight_off_mask(&v->w->win, v->on, px, py, qx, qy)));
}

bool nm_sight_ok(nm_sight_view *v, double px, double py, double qx, double qy, float hp,
                 float hq)
{
    if (!crossings_ok(v, px, py, qx, qy))
        return false;
    /* 2. facade steps and 3. layer continuity over one walk of the line */
    if (v->steps && v->layers && v->oracle)
        return steps_and_layers_ok(v->oracle, v->ground_far, px, py, qx, qy, hp, hq);
    if (v->steps && nm_sight_crosses_step(v->w, px, py, qx, qy))
        return false;
    /* 3. layer continuity */
    if (v->layers && v->oracle && !nm_sight_layers_ok(v->oracle, px, py, qx, qy, hp, hq))
        return false;
    return true;
}

static void span_centre(const nm_window *w, uint32_t s, double *x, double *y)
{
    uint32_t c = w->spans.sp_cell[s];
    *x = w->win.x0 + ((double)(c % (uint32_t)w->win.nx) + 0.5) * NM_kCS;
    *y = w->win.y0 + ((double)(c / (uint32_t)w->win.nx) + 0.5) * NM_kCS;
}

bool nm_sight_vis(void *ctx, uint32_t from_span, uint32_t to_span)
{
    nm_sight_view *v = ctx;
    const nm_window *w = v->w;
    if (from_span >= w->spans.nspans || to_span >= w->spans.nspans)
        return false;
    double px, py, qx, qy;
    span_centre(w, from_span, &px, &py);
    span_centre(w, to_span, &qx, &qy);
    /* The fields' shortcuts (nm_sight_plain_clear): a line both fields vouch for passes checks
     * 1-3 when there are no blockers. A Lazy Theta* parent sits at a corner of the open area, so
     * its chords seldom keep the on field's margin, but on plain ground nearly all keep the ground
     * field's: checks 2 and 3 pass then, and walking them was a third of a large leg's sight time
     * (issue 14). */
    if (v->ground_far) {
        if (v->on_far && !v->blk && nm_sight_plain_clear(w, v->on_far, v->ground_far, from_span, to_span))
            return true;
        if (nm_sight_plain_clear(w, NULL, v->ground_far, from_span, to_span))
            return crossings_ok(v, px, py, qx, qy);
    }
    return nm_sight_ok(v, px, py, qx, qy, w->spans.sp_h[from_span], w->spans.sp_h[to_span]);
}

/* 路线掩膜 tm */
void nm_sight_route_mask(int32_t nx, int32_t ny, const uint8_t *solidc, const uint32_t *access,
                         uint32_t naccess, const uint8_t *final_mask, const uint32_t *path,
                         uint32_t npath, uint8_t *tm)
{
    const size_t n = (size_t)nx * (size_t)ny;
    /* 1. from the open area */
    for (size_t c = 0; c < n; ++c)
        tm[c] = solidc && solidc[c] ? 1 : 0;
    /* 2. plus the access paths of both ends */
    for (uint32_t k = 0; k < naccess; ++k)
        if (access[k] < n)
            tm[access[k]] = 1;
    /* 3. inside the final solve's mask */
    for (size_t c = 0; c < n; ++c)
        if (!final_mask[c])
            tm[c] = 0;
    /* 4. the cell path grown by its 3x3 neighbourhood, inside the final mask */
    for (uint32_t k = 0; k < npath; ++k) {
        if (path[k] >= n)
            continue;
        int32_t i = (int32_t)(path[k] % (uint32_t)nx), j = (int32_t)(path[k] / (uint32_t)nx);
        for (int32_t dj = -1; dj <= 1; ++dj)
            for (int32_t di = -1; di <= 1; ++di) {
                int32_t a = i + di, b = j + dj;
                if (a < 0 || b < 0 || a >= nx || b >= ny)
                    continue;
                size_t c = (size_t)b * (size_t)nx + (size_t)a;
                if (final_mask[c])
                    tm[c] = 1;
            }
    }
}
