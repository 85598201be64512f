/* route_tiers.c — window tiers (design article 窗口分档): allowed cost per level, the ellipse's
 * bounding rectangle, the three window kinds with the capped bisection, level skipping and the
 * round outcomes, the small-window bounds limit1 / limit2 with the early give-up bound, and the
 * twelve escalation reasons with their three switches. Pure arithmetic: no allocation. */
#include "route.h"

#include <math.h>

bool nm_cell_rect_empty(const nm_cell_rect *r) { return r->x1 < r->x0 || r->y1 < r->y0; }

uint64_t nm_cell_rect_area(const nm_cell_rect *r)
{
    if (nm_cell_rect_empty(r)) return 0;
    return (uint64_t)(r->x1 - r->x0 + 1) * (uint64_t)(r->y1 - r->y0 + 1);
}

nm_cell_rect nm_cell_rect_intersect(const nm_cell_rect *a, const nm_cell_rect *b)
{
    nm_cell_rect r = {a->x0 > b->x0 ? a->x0 : b->x0, a->y0 > b->y0 ? a->y0 : b->y0,
                      a->x1 < b->x1 ? a->x1 : b->x1, a->y1 < b->y1 ? a->y1 : b->y1};
    return r;
}

bool nm_cell_rect_equal(const nm_cell_rect *a, const nm_cell_rect *b)
{
    return a->x0 == b->x0 && a->y0 == b->y0 && a->x1 == b->x1 && a->y1 == b->y1;
}

bool nm_cell_rect_contains(const nm_cell_rect *o, const nm_cell_rect *i)
{
    return o->x0 <= i->x0 && o->y0 <= i->y0 && o->x1 >= i->x1 && o->y1 >= i->y1;
}

const char *nm_tier_kind_name(nm_tier_kind k)
{
    switch (k) {
    case NM_TIER_TENTATIVE: return "Tentative";
    case NM_TIER_CAPPED: return "Capped";
    case NM_TIER_FULL: return "Full";
    }
    return "?";
}

double nm_tier_leg_cells(const nm_tier_leg *leg)
{
    return nm_hypot(leg->gx - leg->sx, leg->gy - leg->sy) / NM_kCS;
}

/* 窗口分档: C_k = kRatio0 * kRatioStep^k * L + kCostSlack. */
double nm_tier_allowed_cost(double leg_cells, int level)
{
    return NM_kRatio0 * pow(NM_kRatioStep, (double)level) * leg_cells + NM_kCostSlack;
}

/* 窗口分档 (rectFor): ellipse bounding box united with the endpoint box, grown by 72 cells. */
nm_cell_rect nm_tier_ellipse_rect(const nm_tier_leg *leg, double cost)
{
    const int64_t halo = NM_kTrustMargin + 8;
    double L = nm_tier_leg_cells(leg);
    double th = atan2(leg->gy - leg->sy, leg->gx - leg->sx);
    double a = cost / 2.0, b = sqrt(fmax(cost * cost - L * L, 0.0)) / 2.0;
    double c = cos(th), s = sin(th);
    double ex = sqrt(a * a * c * c + b * b * s * s), ey = sqrt(a * a * s * s + b * b * c * c);
    double cx = (leg->sx + leg->gx) / 2.0 / NM_kCS, cy = (leg->sy + leg->gy) / 2.0 / NM_kCS;
    double px[3] = {leg->sx, leg->ssx, leg->gx}, py[3] = {leg->sy, leg->ssy, leg->gy};
    int64_t bx0 = INT64_MAX, bx1 = INT64_MIN, by0 = INT64_MAX, by1 = INT64_MIN;
    for (int k = 0; k < 3; k++) {
        int64_t x = (int64_t)floor(px[k] / NM_kCS), y = (int64_t)floor(py[k] / NM_kCS);
        if (x < bx0) bx0 = x;
        if (x > bx1) bx1 = x;
        if (y < by0) by0 = y;
        if (y > by1) by1 = y;
    }
    int64_t ex0 = (int64_t)floor(cx - ex), ex1 = (int64_t)ceil(cx + ex);
    int64_t ey0 = (int64_t)floor(cy - ey), ey1 = (int64_t)ceil(cy + ey);
    nm_cell_rect r = {(bx0 < ex0 ? bx0 : ex0) - halo, (by0 < ey0 ? by0 : ey0) - halo,
                      (bx1 > ex1 ? bx1 : ex1) + halo, (by1 > ey1 ? by1 : ey1) + halo};
    return r;
}

nm_cell_rect nm_tier_region_rect(const nm_cell_rect *bbox)
{
    nm_cell_rect r = {bbox->x0 - NM_kFieldHalo, bbox->y0 - NM_kFieldHalo, bbox->x1 + NM_kFieldHalo,
                      bbox->y1 + NM_kFieldHalo};
    return r;
}

static nm_cell_rect clipped(const nm_tier_leg *leg, double cost, const nm_cell_rect *R)
{
    nm_cell_rect e = nm_tier_ellipse_rect(leg, cost);
    return nm_cell_rect_intersect(&e, R);
}

/* 三种窗口, in the article's order. */
nm_tier_choice nm_tier_window(const nm_tier_leg *leg, const nm_cell_rect *R, int level)
{
    nm_tier_choice ch;
    double L = nm_tier_leg_cells(leg);
    double C = nm_tier_allowed_cost(L, level);
    nm_cell_rect e = nm_tier_ellipse_rect(leg, C);
    nm_cell_rect r = nm_cell_rect_intersect(&e, R);
    uint64_t aR = nm_cell_rect_area(R), ar = nm_cell_rect_area(&r);
    ch.level = level;
    ch.cost = C;
    /* 1. a small region: the whole-region window is exact and no dearer */
    if (aR <= (uint64_t)NM_kLocalMaxCells && (nm_cell_rect_contains(&e, R) || 5 * ar >= 4 * aR)) {
        ch.kind = NM_TIER_FULL;
        ch.rect = *R;
        return ch;
    }
    /* 2. the ellipse rectangle fits */
    if (ar <= (uint64_t)NM_kLocalMaxCells) {
        ch.kind = NM_TIER_TENTATIVE;
        ch.rect = r;
        return ch;
    }
    /* 3. capped: bisect C in [L, C_k]; C = L is the segment between the ends */
    ch.kind = NM_TIER_CAPPED;
    nm_cell_rect seg = clipped(leg, L, R);
    if (nm_cell_rect_area(&seg) > (uint64_t)NM_kLocalMaxCells) {
        ch.rect = seg;
        ch.cost = L;
        return ch;
    }
    double lo = L, hi = C;
    for (int it = 0; it < 40; it++) {
        double mid = (lo + hi) / 2.0;
        nm_cell_rect m = clipped(leg, mid, R);
        if (nm_cell_rect_area(&m) <= (uint64_t)NM_kLocalMaxCells) lo = mid; else hi = mid;
    }
    ch.rect = clipped(leg, lo, R);
    ch.cost = lo;
    return ch;
}

void nm_tier_state_init(nm_tier_state *s)
{
    s->tier = 0;
    s->level = 0;
    s->force_full = false;
    s->have_prev = false;
    s->prev = (nm_cell_rect){0, 0, -1, -1};
    s->skipped = 0;
}

/* 椭圆档位 steps 1-2: skip levels while the window does not grow; Full size check. */
int nm_tier_next(nm_tier_state *s, const nm_tier_leg *leg, const nm_cell_rect *R,
                 nm_tier_choice *out, nm_error *err)
{
    if (nm_cell_rect_empty(R))
        return nm_fail(err, NM_ERR_STATE, "region has no grid (empty bounding box)");
    nm_tier_choice ch;
    if (s->force_full) {
        ch = (nm_tier_choice){NM_TIER_FULL, *R, 0.0, s->level};
    } else {
        for (;;) {
            ch = nm_tier_window(leg, R, s->level);
            if (ch.kind == NM_TIER_TENTATIVE && s->have_prev && nm_cell_rect_equal(&ch.rect, &s->prev)) {
                s->level++;
                s->skipped++;
                if (s->level > NM_kMaxLevel) {
                    s->force_full = true;
                    ch = (nm_tier_choice){NM_TIER_FULL, *R, 0.0, s->level};
                    break;
                }
                continue;
            }
            break;
        }
    }
    if (ch.kind == NM_TIER_FULL && nm_cell_rect_area(R) > (uint64_t)NM_kMaxCells)
        return nm_fail(err, NM_ERR_STATE,
                       "region too large: the whole-region window has %llu cells (limit %d)",
                       (unsigned long long)nm_cell_rect_area(R), (int)NM_kMaxCells);
    *out = ch;
    return NM_OK;
}

/* 判结果: where a round's outcome sends the loop. */
nm_tier_action nm_tier_after(nm_tier_state *s, const nm_tier_choice *c, const nm_cell_rect *R,
                             nm_tier_outcome o)
{
    s->tier++;
    s->have_prev = true;
    s->prev = c->rect;
    if (o == NM_TIER_ROUTE) return NM_TIER_ACCEPT;
    switch (c->kind) {
    case NM_TIER_TENTATIVE:
        s->level++;
        if (s->level > NM_kMaxLevel) {
            s->force_full = true;
            return NM_TIER_NEXT_FULL;
        }
        return NM_TIER_NEXT_LEVEL;
    case NM_TIER_CAPPED:
        /* cannot tell a real dead end from one cut by the window: decide on the Full window */
        if (o == NM_TIER_BUILD_FAILED || nm_cell_rect_area(R) <= (uint64_t)NM_kMaxCells) {
            s->force_full = true;
            return NM_TIER_NEXT_FULL;
        }
        return NM_TIER_FAIL;
    case NM_TIER_FULL:
        return NM_TIER_FAIL;
    }
    return NM_TIER_FAIL;
}

/* 小窗结果的检查: limit1. */
double nm_route_limit1(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj)
{
    return nm_route_limit1_sides(nx, ny, si, sj, gi, gj, 0);
}

double nm_route_limit1_sides(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj,
                             unsigned region_sides)
{
    int64_t p[2][2] = {{si, sj}, {gi, gj}}, best = INT64_MAX;
    for (int k = 0; k < 2; k++) {
        int64_t d[4] = {p[k][0], p[k][1], (int64_t)nx - 1 - p[k][0], (int64_t)ny - 1 - p[k][1]};
        for (int e = 0; e < 4; e++)
            if (!(region_sides & (1u << e)) && d[e] < best) best = d[e];
    }
    return best == INT64_MAX ? INFINITY : (double)best - NM_kTrustMargin;
}

unsigned nm_route_region_sides(const nm_cell_rect *win, const nm_cell_rect *region_rect)
{
    return (win->x0 <= region_rect->x0 ? NM_SIDE_X0 : 0u) | (win->y0 <= region_rect->y0 ? NM_SIDE_Y0 : 0u) |
           (win->x1 >= region_rect->x1 ? NM_SIDE_X1 : 0u) | (win->y1 >= region_rect->y1 ? NM_SIDE_Y1 : 0u);
}

static double f_sum(double x, double y, double si, double sj, double gi, double gj)
{
    return nm_hypot(x - si, y - sj) + nm_hypot(x - gi, y - gj);
}

/* 小窗结果的检查: limit2 — F is convex, its minimum outside the trust zone lies on the zone's
 * boundary; each edge by ternary search. */
double nm_route_limit2(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj)
{
    return nm_route_limit2_sides(nx, ny, si, sj, gi, gj, 0);
}

double nm_route_limit2_sides(int32_t nx, int32_t ny, int64_t si, int64_t sj, int64_t gi, int64_t gj,
                             unsigned region_sides)
{
    const double m = NM_kTrustMargin;
    /* a side on the region rectangle has no boundary line; the other lines run on to the
     * window's edge there (the ring beyond them is still in the window) */
    double x0 = (region_sides & NM_SIDE_X0) ? 0.0 : m - 1, y0 = (region_sides & NM_SIDE_Y0) ? 0.0 : m - 1;
    double x1 = (region_sides & NM_SIDE_X1) ? (double)nx - 1 : (double)nx - m;
    double y1 = (region_sides & NM_SIDE_Y1) ? (double)ny - 1 : (double)ny - m;
    /* edges: y0 (top, x0 -> x1), x1 (right), y1 (bottom), x0 (left) */
    double cx[5] = {x0, x1, x1, x0, x0}, cy[5] = {y0, y0, y1, y1, y0};
    const unsigned side_of_edge[4] = {NM_SIDE_Y0, NM_SIDE_X1, NM_SIDE_Y1, NM_SIDE_X0};
    double best = INFINITY;
    for (int e = 0; e < 4; e++) {
        if (region_sides & side_of_edge[e])
            continue;
        double ax = cx[e], ay = cy[e], bx = cx[e + 1], by = cy[e + 1];
        double lo = 0.0, hi = 1.0;
        for (int it = 0; it < 100; it++) {
            double m1 = lo + (hi - lo) / 3.0, m2 = hi - (hi - lo) / 3.0;
            double f1 = f_sum(ax + (bx - ax) * m1, ay + (by - ay) * m1, (double)si, (double)sj, (double)gi, (double)gj);
            double f2 = f_sum(ax + (bx - ax) * m2, ay + (by - ay) * m2, (double)si, (double)sj, (double)gi, (double)gj);
            if (f1 < f2) hi = m2; else lo = m1;
        }
        double t = (lo + hi) / 2.0;
        double f = f_sum(ax + (bx - ax) * t, ay + (by - ay) * t, (double)si, (double)sj, (double)gi, (double)gj);
        if (f < best) best = f;
    }
    return best - 1.0;
}

double nm_route_give_up(double limit2, double ds_px, double dg_px)
{
    return limit2 - (ds_px + dg_px) / NM_kCS + 1.0;
}

bool nm_route_cost_escalates(double cost, double ds_px, double dg_px, double limit2)
{
    return cost + (ds_px + dg_px) / NM_kCS >= limit2;
}

bool nm_route_snap_escalates(double d_px, double limit1) { return d_px / NM_kCS >= limit1; }

bool nm_route_access_escalates(int32_t chamfer_cost, double limit1)
{
    return (double)chamfer_cost / 100.0 >= limit1;
}

/* 放大窗口的原因: the table's rows in order, with their switch. */
static const struct {
    const char *name;
    nm_esc_switch sw;
} k_esc[NM_ESC_COUNT] = {
    {"endpoint near the window edge", NM_SW_TENTATIVE},
    {"snap distance too far", NM_SW_BOUNDED},
    {"endpoint cannot reach the channel", NM_SW_STRICT},
    {"endpoint access path too long", NM_SW_BOUNDED},
    {"ends not connected in the mask", NM_SW_STRICT},
    {"no path on the walk mask", NM_SW_STRICT},
    {"search cost reached the trust zone edge", NM_SW_BOUNDED},
    {"fell back to the cell level", NM_SW_STRICT},
    {"baseline found no path", NM_SW_STRICT},
    {"topology layer found no path", NM_SW_STRICT},
    {"corridor band entered the outer ring", NM_SW_BOUNDED},
    {"geometry layer found no path in the corridor", NM_SW_STRICT},
};

nm_esc_switch nm_escalation_switch(nm_escalation e)
{
    return (unsigned)e < NM_ESC_COUNT ? k_esc[e].sw : NM_SW_STRICT;
}

const char *nm_escalation_name(nm_escalation e)
{
    return (unsigned)e < NM_ESC_COUNT ? k_esc[e].name : "?";
}

bool nm_tier_switch_on(nm_tier_kind k, nm_esc_switch sw)
{
    if (sw == NM_SW_TENTATIVE) return k != NM_TIER_FULL;
    return k == NM_TIER_TENTATIVE;
}

bool nm_escalation_enabled(nm_escalation e, nm_tier_kind k)
{
    return (unsigned)e < NM_ESC_COUNT && nm_tier_switch_on(k, nm_escalation_switch(e));
}

nm_escalation nm_escalation_from_search(int r)
{
    /* (B)'s NM_SEARCH_ESC_* run 1..11 in the table's order after "near the window edge" */
    if (r >= 1 && r <= 11) return (nm_escalation)r;
    return NM_ESC_COUNT;
}
