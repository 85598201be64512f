/* sight_plain.c — shortcuts for the search's view vis (视线, Lazy Theta*): chords across plain
 * ground. A cell is plain ground when it holds one span, has no forbidden step bits and every
 * one-span neighbour lies within kPlainDh of it; it is plain when it is also on the on mask. Two
 * distance fields say how far each cell is from the nearest cell that is not (Chebyshev, cells):
 * the ground field from the window alone, the on field from the on mask alone. A digital line
 * whose cells all have their 3 x 3 neighbourhood plain passes all three checks of vis (every
 * on-mask sample's cell is within one cell of a line cell; no step bit is crossed; LayerOracle
 * keeps the one span of each column), so the answer is the same as nm_sight_ok's without walking
 * the chord cell by cell: the line is crossed in jumps of the smaller of the two distances. Where
 * it is not, nm_sight_ok still jumps: its on-mask samples by the on field, its walk of the line by
 * the ground field. In open areas the parent of a Lazy Theta* node is hundreds of cells away, and
 * walking every one of those chords was most of the geometry layer's time on large windows
 * (issue 14). */
#include "sight.h"

#include <math.h>
#include <string.h>

/* Steepest height change between plain neighbours, m: under LayerOracle's one-step bounds
 * (-kClimb below, kStepUp + kQH above), with room for float rounding. */
#define NM_kPlainDh 1.25

/* Row j's one-span heights (NaN for an empty or many-span cell), reading the occupied cells'
 * span counts in order: the occupied index is counted along the row, not looked up per cell. */
static void one_span_row(const nm_span_table *t, int64_t nx, int64_t j, float *h)
{
    const uint64_t c0 = (uint64_t)(j * nx);
    int64_t k = nm_span_cell_index(t, (uint32_t)c0); /* the row's first occupied index */
    if (k < 0) { /* c0 is empty: count the occupied cells before it */
        const uint64_t word = t->occ_bits[c0 >> 6];
        k = (int64_t)t->occ_rank[c0 >> 6] + nm_grid_popc64(word & (((uint64_t)1 << (c0 & 63)) - 1));
    }
    for (int64_t i = 0; i < nx; i++) {
        const uint64_t c = c0 + (uint64_t)i;
        h[i] = NAN;
        if ((t->occ_bits[c >> 6] >> (c & 63)) & 1u) {
            if (t->cs[k + 1] - t->cs[k] == 1)
                h[i] = t->sp_h[t->cs[k]];
            k++;
        }
    }
}

int nm_sight_plain_ground(const nm_window *w, uint8_t *g, nm_error *err)
{
    const int64_t nx = w->win.nx, ny = w->win.ny;
    /* one-span heights of rows j-1, j, j+1, and the least and greatest of each column's three */
    float *rows = nm_malloc(5 * (size_t)nx * sizeof *rows);
    if (!rows)
        return nm_fail(err, NM_ERR_NOMEM, "sight: plain cells: out of memory");
    float *hr[3] = {rows, rows + nx, rows + 2 * nx}, *lo = rows + 3 * nx, *hi = rows + 4 * nx;
    for (int64_t i = 0; i < nx; i++)
        hr[0][i] = NAN;
    one_span_row(&w->spans, nx, 0, hr[1]);
    for (int64_t j = 0; j < ny; j++) {
        if (j + 1 < ny)
            one_span_row(&w->spans, nx, j + 1, hr[2]);
        else
            for (int64_t i = 0; i < nx; i++)
                hr[2][i] = NAN;
        for (int64_t i = 0; i < nx; i++) { /* NaN (no one-span neighbour) compares false */
            float l = INFINITY, u = -INFINITY;
            for (int d = 0; d < 3; d++) {
                l = hr[d][i] < l ? hr[d][i] : l;
                u = hr[d][i] > u ? hr[d][i] : u;
            }
            lo[i] = l;
            hi[i] = u;
        }
        uint8_t *gr = g + j * nx;
        for (int64_t i = 0; i < nx; i++) {
            const float h = hr[1][i];
            bool plain = w->stepbits[j * nx + i] == 0 && !isnan(h);
            if (plain) {
                /* a neighbour a with |a - h| > kPlainDh: a - h rounds monotonically in a, so
                 * some a has it exactly when the least or the greatest one does */
                float l = lo[i], u = hi[i];
                if (i > 0) {
                    l = lo[i - 1] < l ? lo[i - 1] : l;
                    u = hi[i - 1] > u ? hi[i - 1] : u;
                }
                if (i + 1 < nx) {
                    l = lo[i + 1] < l ? lo[i + 1] : l;
                    u = hi[i + 1] > u ? hi[i + 1] : u;
                }
                plain = !(fabsf(u - h) > (float)NM_kPlainDh) && !(fabsf(l - h) > (float)NM_kPlainDh);
            }
            gr[i] = (uint8_t)plain;
        }
        float *t = hr[0];
        hr[0] = hr[1];
        hr[1] = hr[2];
        hr[2] = t;
    }
    nm_free(rows);
    nm_sight_far(w->win.nx, w->win.ny, g);
    return NM_OK;
}

void nm_sight_far(int32_t nx_, int32_t ny_, uint8_t *r)
{
    const int64_t nx = nx_, ny = ny_;
    /* Chebyshev distance to the nearest cell outside the set (outside the window counts), 255 at
     * most: the forward chamfer pass with unit weights, row by row (r holds the set's bits of the
     * cells not yet reached), then the backward pass. Each row in two loops: the row before it
     * (above, then below) into every cell at once, a loop without a chain; then the row's own
     * chain, one add and one min a cell, min(row cell + 1, own) with 0 for a cell outside the set.
     * One loop a row had its chain four selects long: 38.2 -> 33.4 ms on a 4 878 x 1 819 mask. */
    for (int64_t j = 0; j < ny; j++) {
        uint8_t *rr = r + j * nx;
        if (j == 0 || nx < 3) { /* next to the outside */
            for (int64_t i = 0; i < nx; i++)
                rr[i] = rr[i] ? 1 : 0;
            continue;
        }
        const uint8_t *up = rr - nx; /* row j - 1 after its forward pass */
        for (int64_t i = 1; i < nx - 1; i++) {
            unsigned m = up[i - 1] < up[i] ? up[i - 1] : up[i];
            m = up[i + 1] < m ? up[i + 1] : m;
            m += m < 255;
            rr[i] = rr[i] ? (uint8_t)m : 0;
        }
        unsigned prev = rr[0] ? 1 : 0;
        rr[0] = (uint8_t)prev;
        for (int64_t i = 1; i < nx - 1; i++) {
            const unsigned v = rr[i]; /* <= 255, so the min needs no cap */
            prev = prev + 1 < v ? prev + 1 : v;
            rr[i] = (uint8_t)prev;
        }
        rr[nx - 1] = rr[nx - 1] ? 1 : 0;
    }
    if (ny > 0) /* the last row lies next to the outside */
        for (uint8_t *rr = r + (ny - 1) * nx, *e = rr + nx; rr < e; rr++)
            *rr = *rr ? 1 : 0;
    for (int64_t j = ny - 2; j >= 0; j--) { /* columns 0 and nx - 1 are 1 already */
        uint8_t *rr = r + j * nx;
        const uint8_t *dn = rr + nx;
        for (int64_t i = 1; i < nx - 1; i++) {
            unsigned b = dn[i - 1] < dn[i] ? dn[i - 1] : dn[i];
            b = dn[i + 1] < b ? dn[i + 1] : b;
            b++;
            rr[i] = (uint8_t)(b < rr[i] ? b : rr[i]); /* 0 stays 0 */
        }
        unsigned next = rr[nx - 1];
        for (int64_t i = nx - 2; i > 0; i--) {
            const unsigned v = rr[i];
            next = next + 1 < v ? next + 1 : v;
            rr[i] = (uint8_t)next;
        }
    }
}

/* The plain distance of line cell k: the ground field's, or the smaller of the two fields'. */
static inline unsigned plain_at(const nm_sight_line *l, uint32_t nx, const uint8_t *on_far,
                                const uint8_t *ground_far, int64_t k)
{
    int64_t x, y;
    nm_sight_line_cell(l, k, &x, &y);
    const size_t c = (size_t)y * nx + (size_t)x;
    return on_far && on_far[c] < ground_far[c] ? on_far[c] : ground_far[c];
}

/* The line is walked from both ends at once until the walks meet (the answer does not depend on
 * the order, and the two chains of loads overlap): line cells k + 1 .. k + d - 2 and
 * k - 1 .. k - d + 2 lie within d - 2 of cell k, whose distance d vouches for them. */
bool nm_sight_plain_clear(const nm_window *w, const uint8_t *on_far, const uint8_t *ground_far,
                          uint32_t from_span, uint32_t to_span)
{
    const uint32_t nx = (uint32_t)w->win.nx;
    const uint32_t a = w->spans.sp_cell[from_span], b = w->spans.sp_cell[to_span];
    nm_sight_line l;
    nm_sight_line_init(&l, a % nx, a / nx, b % nx, b / nx);
    int64_t lo = 0, hi = l.n; /* line cells lo .. hi are left to look at */
    while (lo <= hi) {
        const unsigned d = plain_at(&l, nx, on_far, ground_far, lo);
        if (d < 2)
            return false; /* near a cell that is not plain: the full check decides */
        lo += d - 1;
        if (lo > hi)
            break;
        const unsigned e = plain_at(&l, nx, on_far, ground_far, hi);
        if (e < 2)
            return false;
        hi -= e - 1;
    }
    return true;
}

/* Where a product stands in for a division in placing a sample: under kSampleRange px on every
 * coordinate the product's sample lies within ~3e-8 px (1.2e-7 cells) of the division's, so one
 * kCellTol cells or more from every cell edge lies in the division's cell. */
#define NM_kSampleRange 1e7
#define NM_kCellTol 8e-6

/* The samples of nm_sight_off_mask, except those the on field vouches for: a sample in a cell
 * with r = d >= 2 has every cell within d - 1 of it on the mask and in the window, and the m
 * samples on either side of it stay within m * step < d - 1 cells of it on each axis (a sample's
 * cell moves by at most floor(shift) + 1), so they are on the mask. The 1e-6 cell margin dwarfs
 * the rounding of the samples' positions (~1e-12 cells).
 * No division a sample: a sample is a dependent chain (the field's byte, the skip, the next
 * position), and two divisions were most of its ~80 cycles on a large window's chords (issue 14).
 * The skip multiplies by 1 / step with twice the margin, so it is never longer than the divided
 * one (the extra 1e-6 cells dwarf both roundings): a shorter skip only looks at samples the
 * division skipped, each placed exactly. A sample's position multiplies by 1 / (n - 1): away from
 * cell edges (kCellTol) its cell is the divided position's; near one the position is divided as
 * nm_sight_off_mask divides it.
 * The chord is walked from both ends at once, until the two walks meet: the answer (is any sample
 * off the mask) does not depend on the order, and the two chains of loads, each waiting on its
 * last byte of the field, overlap (a long chord's skips land on a new cache line each). */
typedef struct chord_samples {
    const nm_grid_window *win;
    const uint8_t *r;
    double px, py, qx, qy;
    double inv;      /* 1 / (n - 1) */
    double step;     /* cells between samples, < 1/2 */
    double per_cell; /* 1 / step (0 when the chord is a point) */
    int64_t n;
    bool near; /* every coordinate within kSampleRange: the product places the samples */
} chord_samples;

/* The on field at sample i (0 <= i < n): 0 when its cell is off the mask or outside the window. */
static inline unsigned sample_far(const chord_samples *s, int64_t i)
{
    const nm_grid_window *win = s->win;
    int64_t cx, cy;
    if (i == s->n - 1) {
        cx = nm_sight_cell_trunc(s->qx, win->x0);
        cy = nm_sight_cell_trunc(s->qy, win->y0);
    } else {
        bool edge = true;
        if (s->near) { /* |ux|, |uy| < 2 * kSampleRange / kCS */
            const double te = (double)i * s->inv;
            const double ux = (s->px + (s->qx - s->px) * te - win->x0) / NM_kCS;
            const double uy = (s->py + (s->qy - s->py) * te - win->y0) / NM_kCS;
            cx = (int64_t)ux;
            cy = (int64_t)uy;
            const double fx = fabs(ux - (double)cx), fy = fabs(uy - (double)cy); /* from the edge nearer 0 */
            edge = fx < NM_kCellTol || fx > 1.0 - NM_kCellTol || fy < NM_kCellTol || fy > 1.0 - NM_kCellTol;
        }
        if (edge) { /* near a cell edge: the sample as nm_sight_off_mask places it */
            const double t = (double)i / (double)(s->n - 1);
            cx = nm_sight_cell_trunc(s->px + (s->qx - s->px) * t, win->x0);
            cy = nm_sight_cell_trunc(s->py + (s->qy - s->py) * t, win->y0);
        }
    }
    if (cx < 0 || cy < 0 || cx >= win->nx || cy >= win->ny)
        return 0;
    return s->r[(size_t)cy * (size_t)win->nx + (size_t)cx];
}

/* The samples on each side of one whose field is d that the field vouches for (none under 2). */
static inline int64_t vouched(const chord_samples *s, unsigned d)
{
    if (d < 2)
        return 0;
    const double m = s->step > 0.0 ? ((double)d - 1.0 - 2e-6) * s->per_cell : (double)s->n; /* >= 0 */
    return m < (double)s->n ? (int64_t)m : s->n;
}

bool nm_sight_off_mask_plain(const nm_grid_window *win, const uint8_t *r, double px, double py, double qx,
                             double qy)
{
    double L = nm_hypot(qx - px, qy - py);
    if (!isfinite(L))
        return true;
    const int64_t n = (int64_t)floor(L / (NM_kCS / 2)) + 2;
    const double step = L / (double)(n - 1) / NM_kCS;
    const chord_samples s = {
        .win = win, .r = r, .px = px, .py = py, .qx = qx, .qy = qy,
        .inv = 1.0 / (double)(n - 1), .step = step, .per_cell = step > 0.0 ? 1.0 / step : 0.0, .n = n,
        .near = fabs(px) < NM_kSampleRange && fabs(py) < NM_kSampleRange && fabs(qx) < NM_kSampleRange &&
                fabs(qy) < NM_kSampleRange && fabs(win->x0) < NM_kSampleRange && fabs(win->y0) < NM_kSampleRange};
    int64_t lo = 0, hi = s.n - 1; /* samples lo .. hi are left to look at */
    while (lo <= hi) {
        const unsigned a = sample_far(&s, lo);
        if (!a)
            return true;
        lo += 1 + vouched(&s, a);
        if (lo > hi)
            break;
        const unsigned b = sample_far(&s, hi);
        if (!b)
            return true;
        hi -= 1 + vouched(&s, b);
    }
    return false;
}
