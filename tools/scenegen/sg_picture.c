/* sg_picture.c — the top view of a generated world through the overlay binding: walkable
 * surfaces coloured by height (viridis), water, solids, collision-only props as outlines and
 * off-mesh links with their direction, drawn in zone 0's base-map pixels times a scale. */
#include "sg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NM_HAVE_OVERLAY
#include "overlay.h"

typedef struct {
    double key;
    uint32_t tri;
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->tri < y->tri ? -1 : x->tri > y->tri;
}

typedef struct {
    double sx, tx, sy, ty, u0, v0, scale, margin;
} frame;

static void to_img(const frame *f, double x, double y, double *ix, double *iy)
{
    *ix = (f->sx * x + f->tx - f->u0) * f->scale + f->margin;
    *iy = (f->ty + f->sy * y - f->v0) * f->scale + f->margin;
}

int nm_sg_picture(const nm_sg_world *w, const char *png_path, double scale, nm_error *err)
{
    if (!w || !png_path || !(scale > 0) || scale > 64)
        return nm_fail(err, NM_ERR_ARG, "picture: bad arguments");
    if (!w->nv) return nm_fail(err, NM_ERR_STATE, "picture: the world is empty");
    const nm_sg_zone *z = &w->zones[0];
    frame f = {z->tf[0], z->tf[1], z->tf[2], z->tf[3], 0, 0, scale, 16};
    double u0 = INFINITY, v0 = INFINITY, u1 = -INFINITY, v1 = -INFINITY;
    double hmin = INFINITY, hmax = -INFINITY;
    for (size_t i = 0; i < w->nv; i++) {
        double u = f.sx * w->v[i].x + f.tx, v = f.ty + f.sy * w->v[i].y;
        u0 = fmin(u0, u), u1 = fmax(u1, u), v0 = fmin(v0, v), v1 = fmax(v1, v);
    }
    for (size_t i = 0; i < w->nt; i++)
        if (w->g[w->t[i].group].role == NM_SG_WALK)
            for (int k = 0; k < 3; k++) {
                double h = w->v[w->t[i].v[k]].h;
                hmin = fmin(hmin, h), hmax = fmax(hmax, h);
            }
    if (!(hmax >= hmin)) hmin = 0, hmax = 1;
    if (hmax - hmin < 1) hmax = hmin + 1;
    f.u0 = u0, f.v0 = v0;
    double W = ceil((u1 - u0) * scale + 2 * f.margin), H = ceil((v1 - v0) * scale + 2 * f.margin);
    if (W > 16384 || H > 16384)
        return nm_fail(err, NM_ERR_ARG, "picture: %.0f x %.0f pixels is too large; lower the scale",
                       W, H);
    nm_ov_image *img;
    nm_ov_rgb bg = {NM_SG_BG_RGB};
    int rc = nm_ov_create(&img, (int)W, (int)H, bg, err);
    if (rc) return rc;

    /* Surfaces and solids, lowest first, so decks cover what lies under them. */
    item *it = nm_malloc((w->nt ? w->nt : 1) * sizeof *it);
    if (!it) {
        nm_ov_destroy(img);
        return nm_fail(err, NM_ERR_NOMEM, "picture: out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < w->nt; i++) {
        const nm_sg_tri *t = &w->t[i];
        if (w->g[t->group].role == NM_SG_PROP) continue;
        const nm_sg_vec *a = &w->v[t->v[0]], *b = &w->v[t->v[1]], *c = &w->v[t->v[2]];
        double area = (b->x - a->x) * (c->y - a->y) - (b->y - a->y) * (c->x - a->x);
        if (fabs(area) < 1e-9) continue; /* vertical faces have no top view */
        double key = (a->h + b->h + c->h) / 3.0;
        /* a solid's top loses ties against a walkable top at the same height */
        if (w->g[t->group].role == NM_SG_SOLID) key -= 0.01;
        it[n++] = (item){key, (uint32_t)i};
    }
    qsort(it, n, sizeof *it, cmp_item);
    nm_ov_rgb water = {NM_SG_WATER_RGB}, solid = {NM_SG_SOLID_RGB}, propc = {NM_SG_PROP_RGB};
    nm_ov_rgb linkc = {NM_SG_LINK_RGB};
    nm_ov_rgb lut[256]; /* the colour map once: OpenCV builds its table on every call */
    for (int k = 0; !rc && k < 256; k++) rc = nm_ov_colormap(NM_OV_CMAP_VIRIDIS, k / 255.0, &lut[k], err);
    for (size_t k = 0; !rc && k < n; k++) {
        const nm_sg_tri *t = &w->t[it[k].tri];
        double xy[6];
        for (int j = 0; j < 3; j++) to_img(&f, w->v[t->v[j]].x, w->v[t->v[j]].y, &xy[2 * j], &xy[2 * j + 1]);
        nm_ov_rgb col;
        int role = w->g[t->group].role;
        if (role == NM_SG_WATER) col = water;
        else if (role == NM_SG_SOLID) col = solid;
        else {
            double t = (it[k].key - hmin) / (hmax - hmin);
            col = lut[(int)lround(fmin(fmax(t, 0), 1) * 255.0)];
        }
        if (!rc) rc = nm_ov_fill_polygon(img, xy, 3, col, err);
    }
    nm_free(it);
    /* Collision-only props: outlines of their top faces. */
    for (size_t i = 0; !rc && i < w->nt; i++) {
        const nm_sg_tri *t = &w->t[i];
        if (w->g[t->group].role != NM_SG_PROP) continue;
        const nm_sg_vec *a = &w->v[t->v[0]], *b = &w->v[t->v[1]], *c = &w->v[t->v[2]];
        double area = (b->x - a->x) * (c->y - a->y) - (b->y - a->y) * (c->x - a->x);
        if (area <= 1e-9) continue; /* top faces only (counter-clockwise in plan x, y) */
        /* props are boxes: draw the axis-aligned edges of their top faces, not diagonals */
        for (int j = 0; j < 3 && !rc; j++) {
            const nm_sg_vec *p = &w->v[t->v[j]], *q = &w->v[t->v[(j + 1) % 3]];
            if (fabs(p->x - q->x) > 1e-9 && fabs(p->y - q->y) > 1e-9) continue;
            double x0, y0, x1, y1;
            to_img(&f, p->x, p->y, &x0, &y0);
            to_img(&f, q->x, q->y, &x1, &y1);
            rc = nm_ov_line(img, x0, y0, x1, y1, propc, 1, err);
        }
    }
    /* Off-mesh links: a line, a disc at each end, an arrow head at the far end if one-way. */
    for (size_t i = 0; !rc && i < w->nl; i++) {
        const nm_sg_link *l = &w->links[i];
        double ax, ay, bx, by;
        to_img(&f, l->a.x, l->a.y, &ax, &ay);
        to_img(&f, l->b.x, l->b.y, &bx, &by);
        rc = nm_ov_line(img, ax, ay, bx, by, linkc, 2, err);
        if (!rc) rc = nm_ov_disc(img, ax, ay, 3 + scale, linkc, 0, err);
        if (!rc) rc = nm_ov_disc(img, bx, by, 3 + scale, linkc, l->bidir ? 0 : 2, err);
        if (!rc && !l->bidir) {
            double dx = bx - ax, dy = by - ay, L = sqrt(dx * dx + dy * dy);
            if (L > 1e-9) {
                dx /= L, dy /= L;
                double s = 6 + 2 * scale;
                rc = nm_ov_line(img, bx, by, bx - s * (dx + 0.5 * dy), by - s * (dy - 0.5 * dx), linkc, 2, err);
                if (!rc)
                    rc = nm_ov_line(img, bx, by, bx - s * (dx - 0.5 * dy), by - s * (dy + 0.5 * dx), linkc, 2, err);
            }
        }
    }
    if (!rc) {
        char cap[160];
        snprintf(cap, sizeof cap, "%s  heights %.1f..%.1f m  (%.0f x %.0f px)", w->name, hmin, hmax,
                 u1 - u0, v1 - v0);
        nm_ov_rgb black = {0, 0, 0};
        rc = nm_ov_text(img, 4, 12, cap, 0.7, black, err);
        /* legend, top right */
        static const char *names[] = {"water", "solid", "prop", "link", "low", "high"};
        nm_ov_rgb cols[6] = {water, solid, propc, linkc, lut[0], lut[255]};
        double box[8] = {W - 78, 1, W - 1, 1, W - 1, 76, W - 78, 76};
        nm_ov_rgb white = {255, 255, 255};
        if (!rc) rc = nm_ov_fill_polygon(img, box, 4, white, err);
        if (!rc) rc = nm_ov_polyline(img, box, 4, 1, black, 1, err);
        for (int k = 0; k < 6 && !rc; k++) {
            double x = W - 70, y = 8 + 12 * k;
            rc = nm_ov_disc(img, x, y, 4, cols[k], 0, err);
            if (!rc) rc = nm_ov_text(img, x + 8, y + 4, names[k], 0.6, black, err);
        }
    }
    if (!rc) rc = nm_ov_write_png(img, png_path, err);
    nm_ov_destroy(img);
    return rc;
}

#else

int nm_sg_picture(const nm_sg_world *w, const char *png_path, double scale, nm_error *err)
{
    (void)w, (void)png_path, (void)scale;
    return nm_fail(err, NM_ERR_STATE, "picture: scenegen was built without OpenCV");
}

#endif
