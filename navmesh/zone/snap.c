/* snap.c — queries on a built ZoneClean: triangle height, closest point on a triangle, the 24 px
 * bucket walk, and endpoint snapping with the article's three comparison keys (吸附, 起点所在的面). */
#include "zone.h"

#include <math.h>

double nm_zone_tri_height(const nm_zone_clean *zc, uint32_t t)
{
    if (!zc || t >= zc->tri_count) return NAN;
    /* article 包的内存: h_T is not stored; the mean of the three vertex heights, on demand */
    return ((double)nm_zone_vertex(zc, t, 0)->h + (double)nm_zone_vertex(zc, t, 1)->h +
            (double)nm_zone_vertex(zc, t, 2)->h) / 3.0;
}

static void closest_on_seg(double px, double py, double ax, double ay, double bx, double by,
                           double *cx, double *cy)
{
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy, t = 0.0;
    if (l2 > 0.0) {
        t = ((px - ax) * dx + (py - ay) * dy) / l2;
        t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    }
    *cx = ax + t * dx;
    *cy = ay + t * dy;
}

double nm_zone_closest_on_tri(const nm_zone_clean *zc, uint32_t t, double x, double y,
                              double *cx, double *cy)
{
    double qx = x, qy = y;
    if (!zc || t >= zc->tri_count) {
        if (cx) *cx = NAN;
        if (cy) *cy = NAN;
        return INFINITY;
    }
    double ux[3], vy[3];
    for (int k = 0; k < 3; k++) {
        ux[k] = nm_zone_vertex(zc, t, k)->u;
        vy[k] = nm_zone_vertex(zc, t, k)->v;
    }
    double area = (ux[1] - ux[0]) * (vy[2] - vy[0]) - (vy[1] - vy[0]) * (ux[2] - ux[0]);
    bool inside = false;
    if (area != 0.0) {
        inside = true;
        for (int k = 0; k < 3 && inside; k++) {
            int k1 = (k + 1) % 3;
            double c = (ux[k1] - ux[k]) * (y - vy[k]) - (vy[k1] - vy[k]) * (x - ux[k]);
            if (area > 0.0 ? c < 0.0 : c > 0.0) inside = false;
        }
    }
    double best = 0.0;
    if (!inside) {
        /* outside (or a zero-area triangle): the nearest point of the three edges, first wins */
        best = INFINITY;
        for (int k = 0; k < 3; k++) {
            int k1 = (k + 1) % 3;
            double ex, ey;
            closest_on_seg(x, y, ux[k], vy[k], ux[k1], vy[k1], &ex, &ey);
            double d = nm_hypot(ex - x, ey - y);
            if (d < best) {
                best = d;
                qx = ex;
                qy = ey;
            }
        }
    }
    if (cx) *cx = qx;
    if (cy) *cy = qy;
    return best;
}

/* Visits each walkable triangle whose bounding box meets the rectangle once: a triangle listed in
 * several cells is taken only in the first cell (row-major) shared by its box and the query. */
int nm_zone_tris_in_rect(const nm_zone_clean *zc, double x0, double y0, double x1, double y1,
                         nm_zone_tri_fn fn, void *ctx)
{
    if (!zc || !fn || !zc->bucket_start || !(x0 <= x1) || !(y0 <= y1)) return 0;
    double gx1 = zc->grid_x0 + zc->grid_nx * NM_kTriBucket, gy1 = zc->grid_y0 + zc->grid_ny * NM_kTriBucket;
    if (x1 < zc->grid_x0 || y1 < zc->grid_y0 || x0 > gx1 || y0 > gy1) return 0;
    int64_t qx0 = (int64_t)floor((x0 - zc->grid_x0) / NM_kTriBucket);
    int64_t qx1 = (int64_t)floor((x1 - zc->grid_x0) / NM_kTriBucket);
    int64_t qy0 = (int64_t)floor((y0 - zc->grid_y0) / NM_kTriBucket);
    int64_t qy1 = (int64_t)floor((y1 - zc->grid_y0) / NM_kTriBucket);
    if (qx0 < 0) qx0 = 0;
    if (qy0 < 0) qy0 = 0;
    if (qx1 >= (int64_t)zc->grid_nx) qx1 = (int64_t)zc->grid_nx - 1;
    if (qy1 >= (int64_t)zc->grid_ny) qy1 = (int64_t)zc->grid_ny - 1;
    for (int64_t cy = qy0; cy <= qy1; cy++)
        for (int64_t cx = qx0; cx <= qx1; cx++) {
            size_t c = (size_t)cy * zc->grid_nx + (size_t)cx;
            for (uint32_t i = zc->bucket_start[c]; i < zc->bucket_start[c + 1]; i++) {
                uint32_t t = zc->bucket_tris[i];
                const nm_vertex *a = nm_zone_vertex(zc, t, 0), *b = nm_zone_vertex(zc, t, 1),
                                *d = nm_zone_vertex(zc, t, 2);
                double bx0 = fmin(fmin(a->u, b->u), d->u), bx1 = fmax(fmax(a->u, b->u), d->u);
                double by0 = fmin(fmin(a->v, b->v), d->v), by1 = fmax(fmax(a->v, b->v), d->v);
                if (bx1 < x0 || bx0 > x1 || by1 < y0 || by0 > y1) continue;
                /* first shared cell: the larger of the two lower cell corners, per axis */
                int64_t tx0 = (int64_t)floor((bx0 - zc->grid_x0) / NM_kTriBucket);
                int64_t ty0 = (int64_t)floor((by0 - zc->grid_y0) / NM_kTriBucket);
                if (tx0 < 0) tx0 = 0;
                if (ty0 < 0) ty0 = 0;
                if ((tx0 > qx0 ? tx0 : qx0) != cx || (ty0 > qy0 ? ty0 : qy0) != cy) continue;
                int rc = fn(ctx, t);
                if (rc) return rc;
            }
        }
    return 0;
}

nm_zone_snap_opts nm_zone_snap_defaults(void)
{
    nm_zone_snap_opts o = {NM_kFloorYNone, NM_kFloorYNone, 0.0, 0.0, NULL, NULL};
    return o;
}

/* The three keys of the article's table, in its order; smaller wins. */
typedef enum { KEY_PLAIN, KEY_FLOOR, KEY_DECK } key_kind;

typedef struct snap_key {
    int out;      /* outside the height band (floor / deck keys) */
    double d;     /* planar distance */
    double dh;    /* -h_T (plain key) or |h_T - y| (floor / deck keys) */
    int isl;      /* island flag (plain and floor keys; 0 in the deck key) */
    uint32_t t;
} snap_key;

static bool key_less(const snap_key *a, const snap_key *b)
{
    if (a->out != b->out) return a->out < b->out;
    if (a->d != b->d) return a->d < b->d;
    if (a->dh != b->dh) return a->dh < b->dh;
    if (a->isl != b->isl) return a->isl < b->isl;
    return a->t < b->t;
}

typedef struct snap_ctx {
    const nm_zone_clean *zc;
    const nm_zone_snap_opts *o;
    key_kind kind;
    double x, y, r, ref;
    bool found;
    snap_key best;
    double bx, by, bh;
} snap_ctx;

static int snap_visit(void *vctx, uint32_t t)
{
    snap_ctx *s = (snap_ctx *)vctx;
    const nm_zone_clean *zc = s->zc;
    if (!nm_zone_walkable(zc, t)) return 0;
    double cx, cy;
    double d = nm_zone_closest_on_tri(zc, t, s->x, s->y, &cx, &cy);
    if (!(d <= s->r)) return 0;
    if (s->o->accept && !s->o->accept(s->o->accept_ctx, t, cx, cy)) return 0;
    double h = nm_zone_tri_height(zc, t);
    snap_key k = {0, d, 0.0, nm_zone_island(zc, t) ? 1 : 0, t};
    switch (s->kind) {
    case KEY_PLAIN: k.dh = -h; break;
    case KEY_FLOOR:
        k.dh = fabs(h - s->ref);
        k.out = k.dh > NM_kBaseNavFloorBand;
        break;
    case KEY_DECK:
        k.dh = fabs(h - s->ref);
        k.out = k.dh > NM_kDeckBand;
        k.isl = 0; /* the deck key has no island term */
        break;
    }
    if (!s->found || key_less(&k, &s->best)) {
        s->found = true;
        s->best = k;
        s->bx = cx;
        s->by = cy;
        s->bh = h;
    }
    return 0;
}

int nm_zone_snap(const nm_zone_clean *zc, double x, double y, const nm_zone_snap_opts *opts,
                 nm_zone_snap_result *out, nm_error *err)
{
    if (!zc || !out) return nm_fail(err, NM_ERR_ARG, "snap: NULL argument");
    if (!isfinite(x) || !isfinite(y))
        return nm_fail(err, NM_ERR_ARG, "snap: point (%g, %g) is not finite", x, y);
    nm_zone_snap_opts def = nm_zone_snap_defaults();
    const nm_zone_snap_opts *o = opts ? opts : &def;
    snap_ctx s = {zc, o, KEY_PLAIN, x, y, 0.0, 0.0, false, {0, 0, 0, 0, 0}, 0, 0, 0};
    /* a declared start deck overrides the floor */
    if (o->deck_y > NM_kFloorYValidMin) {
        s.kind = KEY_DECK;
        s.ref = o->deck_y;
    } else if (o->floor_y > NM_kFloorYValidMin) {
        s.kind = KEY_FLOOR;
        s.ref = o->floor_y;
    }
    double radii[2] = {o->radius > 0.0 ? o->radius : NM_kSnapRadius,
                       o->fallback_radius > 0.0 ? o->fallback_radius : NM_kSnapFallbackRadius};
    for (int round = 0; round < 2; round++) {
        s.r = radii[round];
        nm_zone_tris_in_rect(zc, x - s.r, y - s.r, x + s.r, y + s.r, snap_visit, &s);
        if (s.found) {
            out->tri = s.best.t;
            out->tri_global = zc->tri_global_base + s.best.t;
            out->x = s.bx;
            out->y = s.by;
            out->dist = s.best.d;
            out->h = s.bh;
            out->island = nm_zone_island(zc, s.best.t);
            out->round = round + 1;
            return NM_OK;
        }
    }
    const nm_zone *z = &zc->pack->zones[zc->zone_index];
    return nm_fail(err, NM_ZONE_NOT_FOUND, "zone %s: snap: no walkable triangle within %.0f px of (%.2f, %.2f)",
                   z->name ? z->name : "?", radii[1], x, y);
}
