/* sight.h — visibility of a chord (design article 视线): the cells of a chord (数字直线, dense
 * sampling, exact intersection), the blocker segments (core contours, kept walls, facade
 * segments) with their lazily built 4 px bucket index, the directed facade step check
 * (crossesStep), the height-continuity check (LayerOracle) with its drop-permitting mode, the
 * three views vis / vis_geo / vis_hard, and the route mask tm.
 *
 * Frames: points are px in the same frame as the window origin (nm_window.win.x0/y0); window
 * cells as in window.h. A point's cell for the digital line is trunc((x - x0) / kCS)
 * (formulas.md #1). Heights in m.
 *
 * Memory: a view and its oracle own scratch arrays allocated once per window (init calls);
 * queries never allocate (the bucket index is built once, on the first query). */
#ifndef NM_SIGHT_H
#define NM_SIGHT_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "../window/window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 取格: the digital line ------------------------------------------------------------------ */
/* From cell a to cell b: n = max(|dx|, |dy|, 1), cell k = a + (rint(dx*k/n), rint(dy*k/n)),
 * k = 0..n, rint = nearbyint (half to even), so p -> q and q -> p may pick different cells. */
typedef struct nm_sight_line {
    int64_t ax, ay, dx, dy, n;
} nm_sight_line;

void nm_sight_line_init(nm_sight_line *l, int64_t ax, int64_t ay, int64_t bx, int64_t by);

/* nearbyint(d * k / n) for |d| <= n, 0 <= k <= n, n < 2^26, without a call: the major axis
 * (|d| = n) is +-k exactly, else the same division, rounded half to even by adding and taking away
 * 1.5 * 2^52 (where the sum's unit is 1; its parity is the quotient's, so a half goes to the even
 * side as nearbyint's default mode takes it). The sight's chords call this once a sample. */
static inline int64_t nm_sight_line_axis(int64_t d, int64_t k, int64_t n)
{
    if (d == n)
        return k;
    if (d == -n)
        return -k;
    const double q = (double)d * (double)k / (double)n;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    const double big = 6755399441055744.0; /* 1.5 * 2^52 */
    return (int64_t)((q + big) - big);
#else /* wider intermediates would round the sum elsewhere */
    return (int64_t)nearbyint(q);
#endif
}

/* Cell k (0 <= k <= l->n) of the line. */
static inline void nm_sight_line_cell(const nm_sight_line *l, int64_t k, int64_t *cx, int64_t *cy)
{
    *cx = l->ax + nm_sight_line_axis(l->dx, k, l->n);
    *cy = l->ay + nm_sight_line_axis(l->dy, k, l->n);
}
/* trunc((v - origin) / kCS): a point's cell on one axis (digital line ends, SegMinClr). */
static inline int64_t nm_sight_cell_trunc(double v, double origin)
{
    double c = (v - origin) / NM_kCS;
    if (!(c > -9.0e18 && c < 9.0e18)) /* NaN or absurd: a cell far outside any window */
        return INT64_MIN / 2;
    return (int64_t)c;
}

/* The digital line walked cell by cell, k = 0, 1, ..., n: the cells of nm_sight_line_cell without
 * a division per cell. Per axis k*d = q*n + r (0 <= r < n) is carried from cell to cell, and the
 * cell is a + q rounded half to even by r — exactly nearbyint(d*k/n), which never lands on a
 * half unless d*k/n is one (its distance from a half, >= 1/(2n), dwarfs the division's error). */
typedef struct nm_sight_walker {
    int64_t n, k;
    int64_t ax, qx, rx, dqx, drx;
    int64_t ay, qy, ry, dqy, dry;
} nm_sight_walker;

static inline void nm_sight_walker_axis(int64_t d, int64_t n, int64_t *dq, int64_t *dr)
{
    *dq = d >= 0 ? d / n : -((-d + n - 1) / n); /* floor(d / n) */
    *dr = d - *dq * n;
}

static inline void nm_sight_walker_init(nm_sight_walker *s, const nm_sight_line *l)
{
    s->n = l->n;
    s->k = 0;
    s->ax = l->ax;
    s->ay = l->ay;
    s->qx = s->rx = s->qy = s->ry = 0;
    nm_sight_walker_axis(l->dx, l->n, &s->dqx, &s->drx);
    nm_sight_walker_axis(l->dy, l->n, &s->dqy, &s->dry);
}

static inline int64_t nm_sight_walker_round(int64_t q, int64_t r, int64_t n)
{
    return q + ((2 * r > n || (2 * r == n && (q & 1))) ? 1 : 0);
}

/* Cell k of the walker's line. */
static inline void nm_sight_walker_cell(const nm_sight_walker *s, int64_t *cx, int64_t *cy)
{
    *cx = s->ax + nm_sight_walker_round(s->qx, s->rx, s->n);
    *cy = s->ay + nm_sight_walker_round(s->qy, s->ry, s->n);
}

/* Straight to cell k of the line (0 <= k <= n): the state k steps of next would reach. */
static inline void nm_sight_walker_seek(nm_sight_walker *s, int64_t k)
{
    s->k = k;
    nm_sight_walker_axis(k * s->dqx * s->n + k * s->drx, s->n, &s->qx, &s->rx);
    nm_sight_walker_axis(k * s->dqy * s->n + k * s->dry, s->n, &s->qy, &s->ry);
}

/* k -> k + 1. */
static inline void nm_sight_walker_next(nm_sight_walker *s)
{
    s->k++;
    s->qx += s->dqx;
    s->rx += s->drx;
    if (s->rx >= s->n) {
        s->rx -= s->n;
        s->qx++;
    }
    s->qy += s->dqy;
    s->ry += s->dry;
    if (s->ry >= s->n) {
        s->ry -= s->n;
        s->qy++;
    }
}

/* SegMinClr: the smallest clearance d over the digital-line cells from a to b (px), cells
 * outside the window ignored; +infinity when every cell is outside. d: nx*ny. */
double nm_sight_seg_min_clr(const float *d, const nm_grid_window *win, double ax, double ay,
                            double bx, double by);

/* ---- 轮廓追踪 (TraceContours) --------------------------------------------------------------- */
/* Traces the mask (nx*ny bytes, non-zero = in) into closed loops of cell corners. Corner (x, y)
 * is numbered y*(nx+1) + x (x in 0..nx, y in 0..ny, y read as pointing up); edges keep mask cells
 * on their left; at a diagonal junction the right turn is taken (then straight, left, back);
 * every corner is output (no collinear merging); loops of fewer than 4 corners are dropped.
 * *corners (allocated here, nm_free) holds the loops back to back, loop k being
 * corners[loop_start[k] .. loop_start[k+1]); *loop_start has *nloops + 1 entries.
 * Errors: NM_ERR_ARG (bad size), NM_ERR_NOMEM. */
int nm_sight_trace_contours(int32_t nx, int32_t ny, const uint8_t *mask, uint32_t **corners,
                            uint32_t **loop_start, uint32_t *nloops, nm_error *err);

/* ---- 障碍线段 (BlockerSegments) with the bucket index ---------------------------------------- */
typedef struct nm_sight_blockers {
    nm_window_seg *segs;    /* owned */
    uint32_t nsegs;
    /* CSR bucket index (4 px buckets), built on the first query */
    bool indexed;
    double bx0, by0;        /* origin of bucket (0, 0): min coordinate - 4 px */
    int32_t bnx, bny;
    uint32_t *bstart;       /* [bnx*bny + 1] */
    uint32_t *bsegs;
    uint32_t *seg_epoch;    /* [nsegs] */
    uint32_t *bkt_epoch;    /* [bnx*bny] */
    uint32_t epoch;
} nm_sight_blockers;

/* Collects the blockers of the window (article 障碍线段): the core contours of w->core (cell
 * edges of 0.25 px in window px), then w->segs (kept walls and facade segments) in order.
 * core may be NULL (no contours). Errors: NM_ERR_NOMEM (b left empty). */
int nm_sight_blockers_build(nm_sight_blockers *b, const nm_window *w, nm_error *err);
/* Adds segments (copied) to the blocker list; only before the first query. */
int nm_sight_blockers_add(nm_sight_blockers *b, const nm_window_seg *segs, uint32_t n,
                          nm_error *err);
/* Builds the bucket index now (queries do it themselves; this reports NM_ERR_NOMEM). */
int nm_sight_blockers_index(nm_sight_blockers *b, nm_error *err);
void nm_sight_blockers_free(nm_sight_blockers *b);
/* Does the chord p -> q cross a blocker? Intersection rules of formulas.md #151-154: chord side
 * open (eps < t < 1 - eps), segment side widened (-eps < w < 1 + eps), eps = 1e-7; parallel
 * (|r x s| <= 1e-12) never crosses. Without an index (allocation failed) all segments are
 * scanned: the same answer. */
bool nm_sight_blocked(nm_sight_blockers *b, double px, double py, double qx, double qy);
/* The exact segment test alone (exposed for tests). */
bool nm_sight_seg_hits(double px, double py, double qx, double qy, const nm_window_seg *s);

/* on 掩膜: floor(L / (kCS/2)) + 2 samples at t = i/(n-1), the last exactly q; true when a
 * sample's trunc cell is outside the window or off the mask (nx*ny bytes). */
bool nm_sight_off_mask(const nm_grid_window *win, const uint8_t *mask, double px, double py,
                       double qx, double qy);

/* ---- 立面禁步 (crossesStep) ----------------------------------------------------------------- */
/* Walks the digital line k = 1..n, skipping repeated cells; true when a step between two
 * in-window cells is forbidden by w->stepbits in the direction of travel. */
bool nm_sight_crosses_step(const nm_window *w, double px, double py, double qx, double qy);

/* ---- 高度连续检查 (LayerOracle) -------------------------------------------------------------- */
/* Scratch for walks over one window: height sets sized from the window's fullest column. */
#define NM_SIGHT_UP_GAPS 4 /* gaps (|dx|, |dy|) below this have their up allowance precomputed */
typedef struct nm_sight_oracle {
    const nm_window *w;
    uint32_t cap;     /* capacity of each height set */
    float *cur, *nxt; /* [cap] */
    float up[NM_SIGHT_UP_GAPS][NM_SIGHT_UP_GAPS]; /* UpAllow + kQH by gap (up_allow) */
} nm_sight_oracle;

/* The oracle of window w, its height sets sized by the window's largest column (the span
 * table's max_col). */
int nm_sight_oracle_init(nm_sight_oracle *o, const nm_window *w, nm_error *err);
void nm_sight_oracle_free(nm_sight_oracle *o);

/* walk(pts, h): follows the polyline pts (npts points, xy interleaved, px) from the height set
 * hin[0..nin) (m); each later non-empty column keeps its span heights t with
 * -kClimb <= t - c <= max(kStepUp, kSlope*w*kCS) + kQH for some c of the set (w = cell distance
 * to the last non-empty column). drop = the drop-permitting mode (落点留余量): lower surfaces are
 * kept too unless the start layer reappears within kSeamCells cells (a seam), and a column that
 * connects nothing adds its spans to the set (only the old set on a seam), so it always
 * completes. hout must hold o->cap heights (it may be hin, never o->cur / o->nxt); *nout gets
 * the count. Returns false on a break (normal mode) or a non-finite point — then *nout = 0. */
bool nm_sight_walk(nm_sight_oracle *o, const double *pts, uint32_t npts, const float *hin,
                   uint32_t nin, bool drop, float *hout, uint32_t *nout);
/* ok(p, q, hp, hq): walk from {hp}; true when some result is within 1e-3 of hq. */
bool nm_sight_layers_ok(nm_sight_oracle *o, double px, double py, double qx, double qy,
                        float hp, float hq);

/* ---- Visibility::ok and the three views ------------------------------------------------------ */
/* A view: which checks ok() makes. vis = {on = solidc, no blockers, steps, layers};
 * vis_geo = {blockers, on = tm, steps, layers}; vis_hard = {blockers, no on mask, steps,
 * layers}. The pull inputs without a parent chain switch steps (and layers) off. */
typedef struct nm_sight_view {
    const nm_window *w;
    nm_sight_blockers *blk; /* NULL = no blocker segments */
    const uint8_t *on;      /* nx*ny on mask, NULL = none */
    nm_sight_oracle *oracle;/* needed when layers */
    bool steps;
    bool layers;
    const uint8_t *on_far;     /* nm_sight_far of `on`, NULL = none */
    const uint8_t *ground_far; /* nm_sight_plain_ground of w, NULL = none */
} nm_sight_view;

/* Visibility::ok: blockers (then the on mask), facade steps, layer continuity, in that order.
 * With v->on_far the on-mask samples it proves on the mask are skipped, with v->ground_far the
 * cells of the walk it proves plain ground: the answer is the one without them. */
bool nm_sight_ok(nm_sight_view *v, double px, double py, double qx, double qy, float hp,
                 float hq);
/* The search's callback form: ctx is an nm_sight_view; the chord joins the cell centres of the
 * two spans of v->w->spans, heights the span heights. */
bool nm_sight_vis(void *ctx, uint32_t from_span, uint32_t to_span);

/* ---- plain ground: vis without walking the chord (sight_plain.c) ---------------------------- */
/* Turns the set r (nx*ny bytes, nonzero = in it) into each cell's Chebyshev distance (cells, at
 * most 255) to the nearest cell outside the set or the window, 0 outside the set. */
void nm_sight_far(int32_t nx, int32_t ny, uint8_t *r);
/* The ground field (nx*ny bytes): nm_sight_far of the plain ground cells: one span, no step bits,
 * every one-span neighbour within 1.25 m. It reads the window alone, so it can be made before the
 * on mask is known (while the corridor is built). Errors: NM_ERR_NOMEM. */
int nm_sight_plain_ground(const nm_window *w, uint8_t *g, nm_error *err);
/* True when the digital line between the two spans' cells keeps a plain 3 x 3 neighbourhood all
 * along (plain: the smaller of the on field of a mask and the ground field at least 2): then vis
 * (on = that mask, no blockers, steps, layers) passes the chord; false means "ask nm_sight_ok",
 * not "blocked". nm_sight_vis takes both shortcuts when its view has the fields.
 * With on_far NULL the ground field alone: then the chord passes vis's facade steps and layer
 * continuity, and only its blockers and on mask are left to check. */
bool nm_sight_plain_clear(const nm_window *w, const uint8_t *on_far, const uint8_t *ground_far,
                          uint32_t from_span, uint32_t to_span);
/* nm_sight_off_mask(win, mask, ...) read from r = nm_sight_far of mask: the same answer; samples
 * whose cells r proves on the mask are skipped. */
bool nm_sight_off_mask_plain(const nm_grid_window *win, const uint8_t *r, double px, double py, double qx,
                             double qy);

/* ---- 路线掩膜 tm (拉直的输入) --------------------------------------------------------------- */
/* The four steps: tm = solidc; tm |= the access-path cells; tm &= the final solve's mask; every
 * cell of the cell path sets the cells of its 3x3 neighbourhood that are in the final mask.
 * Arrays nx*ny bytes; cells listed as window cell numbers (out-of-range ones ignored). */
void nm_sight_route_mask(int32_t nx, int32_t ny, const uint8_t *solidc, const uint32_t *access,
                         uint32_t naccess, const uint8_t *final_mask, const uint32_t *path,
                         uint32_t npath, uint8_t *tm);

#ifdef __cplusplus
}
#endif
#endif
