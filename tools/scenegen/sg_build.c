/* sg_build.c — turns scenegen's construction state into triangles: each surface is meshed in
 * blocks aligned to a global lattice, each block split at the edges of the cuts that touch it so
 * that footprints of solids, water, cracks and holes are cut out exactly; vertical walkable faces
 * (risers, facades) are strips; solids and props are closed boxes. Walkable pieces are then
 * stitched by the T-junction repair. */
#include "sg_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t *cap, size_t need, size_t elem, nm_error *err)
{
    if (need <= *cap) return NM_OK;
    size_t nc = *cap ? *cap : 32;
    while (nc < need) nc *= 2;
    size_t bytes;
    if (!nm_mul_ok(nc, elem, &bytes)) return nm_fail(err, NM_ERR_NOMEM, "scenegen: too large");
    void *q = nm_realloc(*p, bytes);
    if (!q) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    *p = q;
    *cap = nc;
    return NM_OK;
}

static nm_sg_build *B(nm_sg_world *w) { return w->build; }

#define PUSH(arr, n, cap, item)                                                                   \
    do {                                                                                          \
        int rc_ = grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr), err);                     \
        if (rc_) return rc_;                                                                      \
        (arr)[(n)++] = *(item);                                                                   \
    } while (0)

int sg_add_surf(nm_sg_world *w, const sg_surf *s, nm_error *err)
{
    if (s->r.x1 - s->r.x0 < 1e-6 || s->r.y1 - s->r.y0 < 1e-6) return NM_OK;
    PUSH(B(w)->s, B(w)->ns, B(w)->cs, s);
    return NM_OK;
}
int sg_add_cut(nm_sg_world *w, const sg_cut *c, nm_error *err)
{
    PUSH(B(w)->c, B(w)->nc, B(w)->cc, c);
    return NM_OK;
}
int sg_add_box(nm_sg_world *w, const sg_box *b, nm_error *err)
{
    if (b->r.x1 - b->r.x0 < 1e-6 || b->r.y1 - b->r.y0 < 1e-6 || b->top - b->base < 1e-6)
        return NM_OK;
    PUSH(B(w)->b, B(w)->nb, B(w)->cb, b);
    return NM_OK;
}
int sg_add_vface(nm_sg_world *w, const sg_vface *f, nm_error *err)
{
    PUSH(B(w)->f, B(w)->nf, B(w)->cf, f);
    return NM_OK;
}
int sg_add_link(nm_sg_world *w, const nm_sg_link *l, nm_error *err)
{
    PUSH(w->links, w->nl, w->cl, l);
    return NM_OK;
}
int sg_new_owner(nm_sg_world *w) { return B(w)->owners++; }

sg_rect sg_rect_norm(double x0, double y0, double x1, double y1)
{
    sg_rect r = {fmin(x0, x1), fmin(y0, y1), fmax(x0, x1), fmax(y0, y1)};
    return r;
}

void sg_build_free(nm_sg_build *b)
{
    if (!b) return;
    nm_free(b->s);
    nm_free(b->c);
    nm_free(b->b);
    nm_free(b->f);
    for (size_t i = 0; i < b->nex; i++) nm_sg_expr_free(b->ex[i]);
    nm_free(b->ex);
    for (size_t i = 0; i < b->ngr; i++) nm_free(b->grids[i]);
    nm_free(b->grids);
    nm_free(b);
}

/* ---- heights ----------------------------------------------------------------------------- */

static double grid_h(const sg_surf *s, double x, double y)
{
    double u = (x - s->r.x0) / (s->r.x1 - s->r.x0) * (s->gcols - 1);
    double v = (y - s->r.y0) / (s->r.y1 - s->r.y0) * (s->grows - 1);
    u = fmin(fmax(u, 0), s->gcols - 1);
    v = fmin(fmax(v, 0), s->grows - 1);
    int i = (int)floor(u), j = (int)floor(v);
    if (i >= s->gcols - 1) i = s->gcols - 2;
    if (j >= s->grows - 1) j = s->grows - 2;
    if (i < 0) i = 0;
    if (j < 0) j = 0;
    double fu = s->gcols > 1 ? u - i : 0, fv = s->grows > 1 ? v - j : 0;
    int i1 = s->gcols > 1 ? i + 1 : i, j1 = s->grows > 1 ? j + 1 : j;
    const double *g = s->grid;
    double a = g[j * s->gcols + i], b = g[j * s->gcols + i1];
    double c = g[j1 * s->gcols + i], d = g[j1 * s->gcols + i1];
    return s->dh + (a + (b - a) * fu) * (1 - fv) + (c + (d - c) * fu) * fv;
}

/* The true height of surface s at (x, y). */
static double surf_h(const sg_surf *s, double x, double y)
{
    switch (s->hk) {
    case SG_H_CONST: return s->h0;
    case SG_H_RAMP: {
        double t = s->axis == 0 ? (x - s->r.x0) / (s->r.x1 - s->r.x0)
                                : (y - s->r.y0) / (s->r.y1 - s->r.y0);
        return s->h0 + (s->h1 - s->h0) * t;
    }
    case SG_H_EXPR: return s->dh + nm_sg_expr_eval(s->expr, x, y);
    case SG_H_GRID: return grid_h(s, x, y);
    }
    return 0;
}

/* ---- cut index --------------------------------------------------------------------------- */

typedef struct {
    double cell, ox, oy;
    int nx, ny;
    uint32_t *start, *items;
} cindex;

static int cindex_build(const nm_sg_build *b, cindex *ci, nm_error *err)
{
    memset(ci, 0, sizeof *ci);
    if (!b->nc) return NM_OK;
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < b->nc; i++) {
        x0 = fmin(x0, b->c[i].r.x0), y0 = fmin(y0, b->c[i].r.y0);
        x1 = fmax(x1, b->c[i].r.x1), y1 = fmax(y1, b->c[i].r.y1);
    }
    ci->cell = fmax(8.0, fmax(x1 - x0, y1 - y0) / 512.0);
    ci->ox = x0 - 1, ci->oy = y0 - 1;
    ci->nx = (int)((x1 - ci->ox) / ci->cell) + 2;
    ci->ny = (int)((y1 - ci->oy) / ci->cell) + 2;
    size_t ncell = (size_t)ci->nx * ci->ny;
    ci->start = nm_calloc(ncell + 1, sizeof *ci->start);
    if (!ci->start) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (cut index)");
    for (int pass = 0; pass < 2; pass++) {
        uint32_t *fill = NULL;
        if (pass == 1) {
            for (size_t c = 0; c < ncell; c++) ci->start[c + 1] += ci->start[c];
            ci->items = nm_malloc((ci->start[ncell] + 1) * sizeof *ci->items);
            fill = nm_malloc(ncell * sizeof *fill);
            if (!ci->items || !fill) {
                nm_free(fill);
                return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (cut index)");
            }
            memcpy(fill, ci->start, ncell * sizeof *fill);
        }
        for (size_t i = 0; i < b->nc; i++) {
            const sg_rect *r = &b->c[i].r;
            int cx0 = (int)((r->x0 - ci->ox) / ci->cell), cx1 = (int)((r->x1 - ci->ox) / ci->cell);
            int cy0 = (int)((r->y0 - ci->oy) / ci->cell), cy1 = (int)((r->y1 - ci->oy) / ci->cell);
            for (int cy = cy0; cy <= cy1; cy++)
                for (int cx = cx0; cx <= cx1; cx++) {
                    size_t c = (size_t)cy * ci->nx + cx;
                    if (pass == 0) ci->start[c + 1]++;
                    else ci->items[fill[c]++] = (uint32_t)i;
                }
        }
        nm_free(fill);
    }
    return NM_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The cuts whose rectangle overlaps r (open overlap), ascending, into *out. */
static int cuts_near(const nm_sg_build *b, const cindex *ci, sg_rect r, uint32_t **out,
                     size_t *n, size_t *cap, nm_error *err)
{
    *n = 0;
    if (!ci->start) return NM_OK;
    int cx0 = (int)floor((r.x0 - ci->ox) / ci->cell), cx1 = (int)floor((r.x1 - ci->ox) / ci->cell);
    int cy0 = (int)floor((r.y0 - ci->oy) / ci->cell), cy1 = (int)floor((r.y1 - ci->oy) / ci->cell);
    if (cx0 < 0) cx0 = 0;
    if (cy0 < 0) cy0 = 0;
    if (cx1 >= ci->nx) cx1 = ci->nx - 1;
    if (cy1 >= ci->ny) cy1 = ci->ny - 1;
    for (int cy = cy0; cy <= cy1; cy++)
        for (int cx = cx0; cx <= cx1; cx++) {
            size_t c = (size_t)cy * ci->nx + cx;
            for (uint32_t k = ci->start[c]; k < ci->start[c + 1]; k++) {
                const sg_rect *q = &b->c[ci->items[k]].r;
                if (q->x1 <= r.x0 || q->x0 >= r.x1 || q->y1 <= r.y0 || q->y0 >= r.y1) continue;
                int rc = grow((void **)out, cap, *n + 1, sizeof **out, err);
                if (rc) return rc;
                (*out)[(*n)++] = ci->items[k];
            }
        }
    if (*n > 1) qsort(*out, *n, sizeof **out, cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < *n; i++)
        if (m == 0 || (*out)[m - 1] != (*out)[i]) (*out)[m++] = (*out)[i];
    *n = m;
    return NM_OK;
}

static bool cut_applies(const sg_cut *c, const sg_surf *s, double h)
{
    if (c->only >= 0 && c->only != s->owner) return false;
    if (c->except >= 0 && c->except == s->owner) return false;
    if (c->terrain_only && !s->terrain) return false;
    return h >= c->lo && h < c->hi;
}

/* ---- meshing ----------------------------------------------------------------------------- */

typedef struct {
    uint32_t *cuts;
    size_t ncuts, ccuts;
    double *xs, *ys;
    size_t cxs, cys;
} scratch;

static size_t uniq(double *a, size_t n)
{
    qsort(a, n, sizeof *a, cmp_dbl);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || a[i] - a[m - 1] > 1e-7) a[m++] = a[i];
    return m;
}

static int mesh_block(nm_sg_world *w, const sg_surf *s, sg_rect blk, const cindex *ci,
                      scratch *sc, nm_error *err)
{
    nm_sg_build *b = w->build;
    int rc = cuts_near(b, ci, blk, &sc->cuts, &sc->ncuts, &sc->ccuts, err);
    if (rc) return rc;
    size_t need = 2 + 2 * sc->ncuts;
    if ((rc = grow((void **)&sc->xs, &sc->cxs, need, sizeof *sc->xs, err))) return rc;
    if ((rc = grow((void **)&sc->ys, &sc->cys, need, sizeof *sc->ys, err))) return rc;
    size_t nx = 0, ny = 0;
    sc->xs[nx++] = blk.x0, sc->xs[nx++] = blk.x1;
    sc->ys[ny++] = blk.y0, sc->ys[ny++] = blk.y1;
    for (size_t k = 0; k < sc->ncuts; k++) {
        const sg_rect *q = &b->c[sc->cuts[k]].r;
        if (q->x0 > blk.x0 && q->x0 < blk.x1) sc->xs[nx++] = q->x0;
        if (q->x1 > blk.x0 && q->x1 < blk.x1) sc->xs[nx++] = q->x1;
        if (q->y0 > blk.y0 && q->y0 < blk.y1) sc->ys[ny++] = q->y0;
        if (q->y1 > blk.y0 && q->y1 < blk.y1) sc->ys[ny++] = q->y1;
    }
    nx = uniq(sc->xs, nx);
    ny = uniq(sc->ys, ny);
    /* Heightfield terrains interpolate the block's corners bilinearly, so the heights along a
     * block edge are linear and the neighbouring block's edge matches them exactly. */
    bool bil = s->hk == SG_H_EXPR || s->hk == SG_H_GRID;
    double c00 = 0, c10 = 0, c01 = 0, c11 = 0;
    if (bil) {
        c00 = surf_h(s, blk.x0, blk.y0), c10 = surf_h(s, blk.x1, blk.y0);
        c01 = surf_h(s, blk.x0, blk.y1), c11 = surf_h(s, blk.x1, blk.y1);
    }
#define HAT(X, Y)                                                                                 \
    (bil ? ((c00 + (c10 - c00) * (((X)-blk.x0) / (blk.x1 - blk.x0))) *                            \
                (1 - ((Y)-blk.y0) / (blk.y1 - blk.y0)) +                                          \
            (c01 + (c11 - c01) * (((X)-blk.x0) / (blk.x1 - blk.x0))) *                            \
                (((Y)-blk.y0) / (blk.y1 - blk.y0)))                                               \
         : surf_h(s, (X), (Y)))
    for (size_t j = 0; j + 1 < ny; j++)
        for (size_t i = 0; i + 1 < nx; i++) {
            double x0 = sc->xs[i], x1 = sc->xs[i + 1], y0 = sc->ys[j], y1 = sc->ys[j + 1];
            double cx = 0.5 * (x0 + x1), cy = 0.5 * (y0 + y1), hc = HAT(cx, cy);
            bool cut = false;
            for (size_t k = 0; k < sc->ncuts && !cut; k++) {
                const sg_cut *c = &b->c[sc->cuts[k]];
                if (cx > c->r.x0 && cx < c->r.x1 && cy > c->r.y0 && cy < c->r.y1 &&
                    cut_applies(c, s, hc))
                    cut = true;
            }
            if (cut) continue;
            uint32_t v00, v10, v11, v01;
            if ((rc = nm_sg_vertex(w, x0, y0, HAT(x0, y0), &v00, err))) return rc;
            if ((rc = nm_sg_vertex(w, x1, y0, HAT(x1, y0), &v10, err))) return rc;
            if ((rc = nm_sg_vertex(w, x1, y1, HAT(x1, y1), &v11, err))) return rc;
            if ((rc = nm_sg_vertex(w, x0, y1, HAT(x0, y1), &v01, err))) return rc;
            /* (x0,y0) (x1,y0) (x1,y1): counter-clockwise seen from +h in OBJ (x, h, -y). */
            if ((rc = nm_sg_tri_add(w, v00, v10, v11, s->group, err))) return rc;
            if ((rc = nm_sg_tri_add(w, v00, v11, v01, s->group, err))) return rc;
        }
#undef HAT
    return NM_OK;
}

static int mesh_surface(nm_sg_world *w, const sg_surf *s, const cindex *ci, scratch *sc,
                        nm_error *err)
{
    double bs = s->block > 0 ? s->block : 16.0;
    long i0 = (long)floor(s->r.x0 / bs), i1 = (long)ceil(s->r.x1 / bs);
    long j0 = (long)floor(s->r.y0 / bs), j1 = (long)ceil(s->r.y1 / bs);
    if ((double)(i1 - i0) * (double)(j1 - j0) > 4e7)
        return nm_fail(err, NM_ERR_ARG, "surface of group \"%s\": too many mesh blocks",
                       w->g[s->group].name);
    for (long j = j0; j < j1; j++)
        for (long i = i0; i < i1; i++) {
            sg_rect blk = {fmax(i * bs, s->r.x0), fmax(j * bs, s->r.y0),
                           fmin((i + 1) * bs, s->r.x1), fmin((j + 1) * bs, s->r.y1)};
            if (blk.x1 - blk.x0 < 1e-7 || blk.y1 - blk.y0 < 1e-7) continue;
            int rc = mesh_block(w, s, blk, ci, sc, err);
            if (rc) return rc;
        }
    return NM_OK;
}

static int mesh_vface(nm_sg_world *w, const sg_vface *f, nm_error *err)
{
    double H = f->hi - f->lo;
    int rows = 1;
    if (f->strip > 0) rows = (int)ceil(H / f->strip - 1e-9);
    if (rows < 1) rows = 1;
    if (rows > 10000) return nm_fail(err, NM_ERR_ARG, "vertical face: too many strips");
    for (int r = 0; r < rows; r++) {
        double z0 = f->lo + H * r / rows, z1 = f->lo + H * (r + 1) / rows;
        uint32_t a, b, c, d;
        int rc;
        if ((rc = nm_sg_vertex(w, f->x0, f->y0, z0, &a, err))) return rc;
        if ((rc = nm_sg_vertex(w, f->x1, f->y1, z0, &b, err))) return rc;
        if ((rc = nm_sg_vertex(w, f->x1, f->y1, z1, &c, err))) return rc;
        if ((rc = nm_sg_vertex(w, f->x0, f->y0, z1, &d, err))) return rc;
        if ((rc = nm_sg_tri_add(w, a, b, c, f->group, err))) return rc;
        if ((rc = nm_sg_tri_add(w, a, c, d, f->group, err))) return rc;
    }
    return NM_OK;
}

/* A closed box; faces wound counter-clockwise seen from outside (OBJ frame). */
static int mesh_box(nm_sg_world *w, const sg_box *bx, nm_error *err)
{
    double xs[2] = {bx->r.x0, bx->r.x1}, ys[2] = {bx->r.y0, bx->r.y1}, hs[2] = {bx->base, bx->top};
    uint32_t v[8];
    for (int k = 0; k < 8; k++) {
        int rc = nm_sg_vertex(w, xs[k & 1], ys[(k >> 1) & 1], hs[k >> 2], &v[k], err);
        if (rc) return rc;
    }
    /* index bits: x (1), y (2), h (4). In OBJ (x, h, -y) the plan order (x0,y0) (x1,y0) (x1,y1)
     * is counter-clockwise from above. */
    static const int q[6][4] = {
        {4, 5, 7, 6}, /* top */
        {0, 2, 3, 1}, /* bottom */
        {0, 1, 5, 4}, /* y0 side */
        {3, 2, 6, 7}, /* y1 side */
        {2, 0, 4, 6}, /* x0 side */
        {1, 3, 7, 5}, /* x1 side */
    };
    for (int f = 0; f < 6; f++) {
        int rc = nm_sg_tri_add(w, v[q[f][0]], v[q[f][1]], v[q[f][2]], bx->group, err);
        if (!rc) rc = nm_sg_tri_add(w, v[q[f][0]], v[q[f][2]], v[q[f][3]], bx->group, err);
        if (rc) return rc;
    }
    return NM_OK;
}

int sg_build_finish(nm_sg_world *w, nm_error *err)
{
    nm_sg_build *b = w->build;
    cindex ci;
    int rc = cindex_build(b, &ci, err);
    scratch sc = {0};
    for (size_t i = 0; !rc && i < b->ns; i++) rc = mesh_surface(w, &b->s[i], &ci, &sc, err);
    for (size_t i = 0; !rc && i < b->nf; i++) rc = mesh_vface(w, &b->f[i], err);
    nm_free(ci.start);
    nm_free(ci.items);
    nm_free(sc.cuts);
    nm_free(sc.xs);
    nm_free(sc.ys);
    if (!rc) rc = nm_sg_fix_tjunctions(w, err);
    for (size_t i = 0; !rc && i < b->nb; i++) rc = mesh_box(w, &b->b[i], err);
    sg_build_free(b);
    w->build = NULL;
    return rc;
}
