/* rise.c — the vertical reachability rule between neighbouring spans (design article
 * 垂直可达判据 / 向上一步 and 向下一步): levelAt and rasterFace over the span table, RiseOk's ten
 * steps in the article's order with the drop look-ahead and the fall-gate slot, and the per-span
 * step bits of the four canonical directions. */
#include "grid/grid.h"

#include <math.h>

/* kDrop: falls have no limit (no fall damage in the game), so step 1 never refuses a step. */
static const double k_drop = INFINITY;
/* Bump and dip tolerance: the height must come back within kStepUp of the start / target. */
#define BUMP_TOL NM_kStepUp

const int nm_grid_step_dx[4] = {1, 0, 1, 1};
const int nm_grid_step_dy[4] = {0, 1, 1, -1};

/* Cell number of (i + s*dx, j + s*dy), or -1 outside the window. */
static int64_t cell_at(const nm_span_table *t, int32_t i, int32_t j, int dx, int dy, int s)
{
    int64_t x = (int64_t)i + (int64_t)s * dx, y = (int64_t)j + (int64_t)s * dy;
    if (x < 0 || y < 0 || x >= t->win.nx || y >= t->win.ny)
        return -1;
    return y * t->win.nx + x;
}

bool nm_grid_level_at(const nm_span_table *t, int32_t i, int32_t j, int dx, int dy, int s,
                      double h, double tol)
{
    int64_t c = cell_at(t, i, j, dx, dy, s);
    if (c < 0)
        return false;
    uint32_t f, n = nm_span_cell_spans(t, (uint32_t)c, &f);
    for (uint32_t k = 0; k < n; k++) {
        double v = t->sp_h[f + k];
        if (v >= h - tol && v <= h + tol)
            return true;
    }
    return false;
}

bool nm_grid_raster_face(const nm_span_table *t, int32_t i, int32_t j, int dx, int dy, int s)
{
    int64_t c = cell_at(t, i, j, dx, dy, s);
    return c >= 0 && nm_span_cell_face(t, (uint32_t)c);
}

/* 向上一步: the article's table, one step per line. */
bool nm_grid_rise_ok(const nm_span_table *t, const nm_fall_gate *gate, int32_t i, int32_t j,
                     int dx, int dy, double ha, double hb)
{
    const double dh = hb - ha; /* double, as in the article */
    const double w = sqrt((double)(dx * dx + dy * dy));
    /* 1: deeper than kDrop (never, kDrop = +inf). */
    if (dh < -k_drop)
        return false;
    /* 2: a drop beyond kClimb is a ledge only when the start layer does not come back within
     * kSeamCells ahead (else it is a narrow seam in one surface), and the collider lets it. */
    if (dh < -NM_kClimb) {
        for (int s = 1; s <= NM_kSeamCells; s++)
            if (nm_grid_level_at(t, i, j, dx, dy, s, ha, NM_kClimb))
                return false;
        if (gate && gate->fn) {
            int64_t from = cell_at(t, i, j, dx, dy, 0), to = cell_at(t, i, j, dx, dy, 1);
            if (from >= 0 && to >= 0 && gate->fn(gate->ctx, (uint32_t)from, ha, (uint32_t)to, hb))
                return false;
        }
        /* falls through: step 3 passes it */
    }
    /* 2b (issue 12, not in the article): a step down deeper than kBumpUp, a fall no rule below
     * walks back up, is refused when the arrival column holds a surface within the fall gate's
     * body above the take-off (kFallClimb .. kFallHeight over h_a): the body would walk into the
     * level over the landing. The look-ahead of step 2 covers this beyond kClimb; within it a
     * floor's edge over a stairwell stepped down 3 m onto the flight below, under the flight
     * above (large world leg 28 of --random 30 --seed 7: 8 -> 5 -> 4 -> 1.25 -> 0 m through
     * the garage's stacked flights, reported as one drop through two floors). Kept by the
     * project's decision (sixth session): the article's table would pass such a step, but the
     * character's body would pass through the level over the landing. */
    if (dh < -NM_kBumpUp &&
        nm_grid_level_at(t, i, j, dx, dy, 1, ha + 0.5 * (NM_kFallClimb + NM_kFallHeight),
                         0.5 * (NM_kFallHeight - NM_kFallClimb)))
        return false;
    /* 3: slope over one cell. */
    if (dh <= NM_kSlope * NM_kCS)
        return true;
    /* 4: slope over the step length (only diagonal steps gain). */
    if (dh <= NM_kSlope * w * NM_kCS)
        return true;
    /* 5: a rasterised facade at either end gets no further allowance. */
    if (nm_grid_raster_face(t, i, j, dx, dy, 0) || nm_grid_raster_face(t, i, j, dx, dy, 1))
        return false;
    /* 6: a step a character walks up. */
    if (dh <= NM_kStepUp)
        return true;
    /* 7: higher than any bump or dip. */
    if (dh > NM_kBumpUp)
        return false;
    /* 8: narrow bump — the start height returns 2..kBumpCells ahead, without the target height. */
    for (int s = 2; s <= NM_kBumpCells; s++)
        if (nm_grid_level_at(t, i, j, dx, dy, s, ha, BUMP_TOL) &&
            !nm_grid_level_at(t, i, j, dx, dy, s, hb, BUMP_TOL))
            return true;
    /* 9: shallow dip — the target height is 1..kDipCells behind, without the start height. */
    for (int s = 1; s <= NM_kDipCells; s++)
        if (nm_grid_level_at(t, i, j, dx, dy, -s, hb, BUMP_TOL) &&
            !nm_grid_level_at(t, i, j, dx, dy, -s, ha, BUMP_TOL))
            return true;
    /* 10 */
    return false;
}

/* A straight crossing of the edge from column (i, j) to (i + dx, j + dy): a span of the column
 * behind steps into a span of (i, j) that steps on across the edge, both steps within kClimb of
 * height and passed by RiseOk (spans of region r only, when rid is given). */
static bool edge_crossed(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                         uint32_t r, int32_t i, int32_t j, int dx, int dy)
{
    int64_t cb = cell_at(t, i, j, dx, dy, -1), cc = cell_at(t, i, j, dx, dy, 0), cn = cell_at(t, i, j, dx, dy, 1);
    if (cb < 0 || cc < 0 || cn < 0)
        return false;
    uint32_t fb, nb = nm_span_cell_spans(t, (uint32_t)cb, &fb);
    uint32_t fc, nc = nm_span_cell_spans(t, (uint32_t)cc, &fc);
    uint32_t fn, nn = nm_span_cell_spans(t, (uint32_t)cn, &fn);
    for (uint32_t a = fc; a < fc + nc; a++) {
        if (rid && rid[a] != r)
            continue;
        const double ha = t->sp_h[a];
        bool in = false, on = false;
        for (uint32_t q = fb; q < fb + nb && !in; q++)
            in = (!rid || rid[q] == r) && fabs((double)t->sp_h[q] - ha) <= NM_kClimb &&
                 (nm_grid_rise_gentle(t->sp_h[q], ha) ||
                  nm_grid_rise_ok(t, gate, i - dx, j - dy, dx, dy, t->sp_h[q], ha));
        for (uint32_t p = fn; in && p < fn + nn && !on; p++)
            on = (!rid || rid[p] == r) && fabs((double)t->sp_h[p] - ha) <= NM_kClimb &&
                 (nm_grid_rise_gentle(ha, t->sp_h[p]) || nm_grid_rise_ok(t, gate, i, j, dx, dy, ha, t->sp_h[p]));
        if (in && on)
            return true;
    }
    return false;
}

/* Step bits: a step the span cannot make to its partner (the nearest span of the region within
 * kClimb in the neighbour column) forbids the cell edge, in that direction, unless the edge is
 * crossed straight through by another level of the same column (edge_crossed). The window ORs
 * the bits of a cell's records, so a ban stands for every span of the column: the dip's exit
 * column holds the dip floor and the road, and the floor's refused 1 m rise must not cut the
 * road's level step out (浅坑: the way out rises onto the road one column earlier). RiseOk still
 * refuses the span's own step in the search. */
uint8_t nm_grid_step_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                          uint32_t k)
{
    if (k >= t->nspans)
        return 0;
    const uint32_t nx = (uint32_t)t->win.nx, c = t->sp_cell[k];
    return nm_grid_step_bits_at(t, gate, rid, k, (int32_t)(c % nx), (int32_t)(c / nx));
}

uint8_t nm_grid_step_bits_at(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                             uint32_t k, int32_t i, int32_t j)
{
    if (k >= t->nspans)
        return 0;
    const double ha = t->sp_h[k];
    uint8_t bits = 0;
    for (int d = 0; d < 4; d++) {
        int dx = nm_grid_step_dx[d], dy = nm_grid_step_dy[d];
        int64_t b = cell_at(t, i, j, dx, dy, 1);
        if (b < 0)
            continue;
        uint32_t f, n = nm_span_cell_spans(t, (uint32_t)b, &f);
        int64_t best = -1;
        double bd = INFINITY;
        for (uint32_t m = 0; m < n; m++) {
            double dd = fabs((double)t->sp_h[f + m] - ha);
            if (dd > NM_kClimb || (rid && rid[f + m] != rid[k]))
                continue;
            if (dd < bd) { /* ascending heights: the lower span wins ties */
                bd = dd;
                best = f + m;
            }
        }
        if (best < 0)
            continue;
        bits |= (uint8_t)(nm_grid_step_pair_bits(t, gate, rid, rid ? rid[k] : 0, i, j, dx, dy, ha,
                                                 t->sp_h[best]) << (2 * d));
    }
    return bits;
}

uint8_t nm_grid_step_pair_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                               uint32_t r, int32_t i, int32_t j, int dx, int dy, double ha, double hb)
{
    uint8_t bits = 0;
    if (!nm_grid_rise_gentle(ha, hb) && !nm_grid_rise_ok(t, gate, i, j, dx, dy, ha, hb) &&
        !edge_crossed(t, gate, rid, r, i, j, dx, dy))
        bits |= 1u;
    if (!nm_grid_rise_gentle(hb, ha) && !nm_grid_rise_ok(t, gate, i + dx, j + dy, -dx, -dy, hb, ha) &&
        !edge_crossed(t, gate, rid, r, i + dx, j + dy, -dx, -dy))
        bits |= 2u;
    return bits;
}

uint8_t nm_grid_closed_pair_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                                uint32_t r, int32_t i, int32_t j, int dx, int dy)
{
    return (uint8_t)((edge_crossed(t, gate, rid, r, i, j, dx, dy) ? 0u : 1u) |
                     (edge_crossed(t, gate, rid, r, i + dx, j + dy, -dx, -dy) ? 0u : 2u));
}

/* The bump and dip allowances are for narrow rises in a road; the sides of a levelled crack stand
 * either side of a face the collision geometry confirmed, and at a corner of the top the diagonal
 * step from the foot reads as a bump two cells wide (navcat-bridges at 0.73 px/m: the route
 * climbed a 1 m grass block's corner from the ground and walked on along its rim). */
uint8_t nm_grid_riser_pair_bits(const nm_span_table *t, const nm_fall_gate *gate, const uint32_t *rid,
                                uint32_t r, int32_t i, int32_t j, int dx, int dy, double ha, double hb)
{
    uint8_t bits = nm_grid_step_pair_bits(t, gate, rid, r, i, j, dx, dy, ha, hb);
    /* a bit already set needs no second look at the edge */
    if (!(bits & 1u) && hb - ha > NM_kStepUp && !edge_crossed(t, gate, rid, r, i, j, dx, dy))
        bits |= 1u;
    if (!(bits & 2u) && ha - hb > NM_kStepUp && !edge_crossed(t, gate, rid, r, i + dx, j + dy, -dx, -dy))
        bits |= 2u;
    return bits;
}
