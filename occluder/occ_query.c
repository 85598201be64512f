/* occ_query.c — the geometric questions asked of a decoded occluder scene: closed segment /
 * triangle tests (invertible placements in the template's frame, singular ones in world space,
 * terrain blocks scanned linearly), the vertical curtain (triangle sections clipped to the
 * take-off → landing segment), and 台沿下落 dropBlocked with its two sampling columns. */
#include "occ_internal.h"

#include <math.h>
#include <string.h>

/* ---- placement helpers -------------------------------------------------------------------------- */
static void mat_apply(const double A[9], const double t[3], const double p[3], double out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = A[3 * r] * p[0] + A[3 * r + 1] * p[1] + A[3 * r + 2] * p[2] + t[r];
}

void occ_place_triangle(const nm_occ_scene *s, const occ_instance *in, uint32_t k, double v[9])
{
    const occ_template *t = &s->templates[in->tmpl];
    const double *vs = s->verts + 3 * t->voff;
    const uint32_t *ix = s->idx + 3 * (t->toff + k);
    for (int c = 0; c < 3; c++) mat_apply(in->A, in->t, vs + 3 * (size_t)ix[c], v + 3 * c);
}

bool occ_block_hole(const nm_occ_scene *s, const occ_block *b, uint32_t u, uint32_t v)
{
    if (b->holeoff == SIZE_MAX) return false;
    size_t c = (size_t)v * (s->block_n - 1) + u;
    return (s->holes[b->holeoff + c / 8] >> (c % 8)) & 1u;
}

/* Cell (u, v) of a block: triangles (p00, p01, p10) and (p10, p01, p11), pUV = sample (u+U, v+V),
 * x along u, z along v, y = a + b·k. */
void occ_terrain_triangle(const nm_occ_scene *s, const occ_block *b, uint32_t u, uint32_t v, int h,
                          double out[9])
{
    static const uint8_t corner[2][3][2] = {{{0, 0}, {0, 1}, {1, 0}}, {{1, 0}, {0, 1}, {1, 1}}};
    const int32_t *k = s->heights + b->hoff;
    uint32_t n = s->block_n;
    for (int c = 0; c < 3; c++) {
        uint32_t uu = u + corner[h][c][0], vv = v + corner[h][c][1];
        out[3 * c] = b->x0 + (double)uu * s->cell;
        out[3 * c + 1] = s->lat_a + s->lat_b * (double)k[(size_t)vv * n + uu];
        out[3 * c + 2] = b->z0 + (double)vv * s->cell;
    }
}

/* 朝上: the y of (v1−v0)×(v2−v0) of the placed triangle is negative (flipped when mirrored). */
bool occ_placed_up(const double v[9], int sgn)
{
    double e1x = v[3] - v[0], e1z = v[5] - v[2], e2x = v[6] - v[0], e2z = v[8] - v[2];
    double ny = e1z * e2x - e1x * e2z;
    return (double)sgn * ny < 0.0;
}

/* ---- closed segment / triangle test ------------------------------------------------------------ */
static void sub3(const double a[3], const double b[3], double o[3])
{
    o[0] = a[0] - b[0];
    o[1] = a[1] - b[1];
    o[2] = a[2] - b[2];
}
static void cross3(const double a[3], const double b[3], double o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* The closed test as three edge functions (scalar triple products of the segment direction with
 * the corners taken relative to the segment's origin) instead of Möller–Trumbore's u, v and
 * det − u − v. A point on an edge whose corners share its x (or z) then gives an edge function of
 * exactly 0, so a take-off column standing on a platform's edge (the gate projects a cell centre
 * just outside the platform onto that edge) meets the floor; and an edge shared by two triangles
 * gets exactly opposite edge functions in them, so a segment through it is never lost between
 * the two. The segment's ends are closed as before (no division before comparing). */
static bool seg_tri(const double p[3], const double d[3], const double a[3], const double b[3],
                    const double c[3], double *t_out)
{
    double e1[3], e2[3], n[3];
    sub3(b, a, e1);
    sub3(c, a, e2);
    cross3(e1, e2, n);
    double det = dot3(d, n);
    /* det is d·n, so det² / (|d|²|n|²) is sin² of the angle between segment and plane. */
    if (!(det * det > NM_OCC_kParallelSin2 * dot3(d, d) * dot3(n, n))) return false;
    double A[3], B[3], C[3], m[3];
    sub3(a, p, A);
    sub3(b, p, B);
    sub3(c, p, C);
    cross3(B, C, m);
    double wa = dot3(d, m);
    cross3(C, A, m);
    double wb = dot3(d, m);
    cross3(A, B, m);
    double wc = dot3(d, m);
    /* inside (closed): all three have det's sign or are 0 (wa + wb + wc = det in exact terms) */
    if (det > 0.0 ? (wa < 0.0 || wb < 0.0 || wc < 0.0) : (wa > 0.0 || wb > 0.0 || wc > 0.0))
        return false;
    double t = dot3(n, A); /* t·det: the plane n·(x − a) = 0 is met at p + t·d */
    if (det < 0.0) {
        det = -det;
        t = -t;
    }
    if (t < 0.0 || t > det) return false;
    *t_out = t / det;
    return true;
}

bool nm_occ_segment_triangle(const double p0[3], const double p1[3], const double a[3],
                             const double b[3], const double c[3], double *t)
{
    double d[3], tt = 0.0;
    sub3(p1, p0, d);
    if (!seg_tri(p0, d, a, b, c, &tt)) return false;
    if (t) *t = tt;
    return true;
}

/* ---- all faces crossed by a segment ------------------------------------------------------------ */
typedef bool (*hit_fn)(void *ctx, double t, bool up);

typedef struct seg_walk {
    const nm_occ_scene *s;
    double p[3], d[3];        /* world */
    double lp[3], ld[3];      /* current instance's local frame */
    const occ_instance *in;
    hit_fn fn;
    void *ctx;
    bool stop;
} seg_walk;

static bool local_tri(void *vctx, uint32_t k)
{
    seg_walk *w = (seg_walk *)vctx;
    const occ_template *t = &w->s->templates[w->in->tmpl];
    const double *vs = w->s->verts + 3 * t->voff;
    const uint32_t *ix = w->s->idx + 3 * (t->toff + k);
    double tt;
    if (!seg_tri(w->lp, w->ld, vs + 3 * (size_t)ix[0], vs + 3 * (size_t)ix[1], vs + 3 * (size_t)ix[2], &tt))
        return true;
    double v[9];
    occ_place_triangle(w->s, w->in, k, v);
    if (!w->fn(w->ctx, tt, occ_placed_up(v, w->in->sgn))) w->stop = true;
    return !w->stop;
}

static bool seg_instance(void *vctx, uint32_t i)
{
    seg_walk *w = (seg_walk *)vctx;
    const occ_instance *in = &w->s->instances[i];
    const occ_template *t = &w->s->templates[in->tmpl];
    if (!occ_seg_box(w->p, w->d, in->lo, in->hi)) return true;
    w->in = in;
    if (in->local) {
        /* The segment goes into the template's frame; t along it is unchanged (affine map). */
        double q[3];
        sub3(w->p, in->t, q);
        for (int r = 0; r < 3; r++) {
            w->lp[r] = in->Ainv[3 * r] * q[0] + in->Ainv[3 * r + 1] * q[1] + in->Ainv[3 * r + 2] * q[2];
            w->ld[r] = in->Ainv[3 * r] * w->d[0] + in->Ainv[3 * r + 1] * w->d[1] +
                       in->Ainv[3 * r + 2] * w->d[2];
        }
        if (t->has_tree) occ_tree_segment(&t->tree, w->lp, w->ld, local_tri, w);
        else
            for (uint32_t k = 0; k < t->nt && !w->stop; k++) local_tri(w, k);
    } else {
        /* Singular or non-finite placement: triangles placed in world space first. */
        for (uint32_t k = 0; k < t->nt && !w->stop; k++) {
            double v[9], tt;
            occ_place_triangle(w->s, in, k, v);
            if (seg_tri(w->p, w->d, v, v + 3, v + 6, &tt) &&
                !w->fn(w->ctx, tt, occ_placed_up(v, in->sgn)))
                w->stop = true;
        }
    }
    return !w->stop;
}

/* Cell index range of a block covering [lo, hi] along one axis, one cell of slack each side so
 * points on cell edges meet both neighbours. False when empty. */
static bool cell_range(double lo, double hi, double origin, double cell, uint32_t n, uint32_t *c0,
                       uint32_t *c1)
{
    double a = floor((lo - origin) / cell) - 1.0, b = floor((hi - origin) / cell) + 1.0;
    double top = (double)n - 2.0;
    if (!(b >= 0.0) || !(a <= top)) return false;
    *c0 = a < 0.0 ? 0u : (uint32_t)a;
    *c1 = b > top ? (uint32_t)top : (uint32_t)b;
    return true;
}

static void seg_terrain(seg_walk *w)
{
    const nm_occ_scene *s = w->s;
    double lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
        double e = w->p[a] + w->d[a];
        lo[a] = w->p[a] < e ? w->p[a] : e;
        hi[a] = w->p[a] < e ? e : w->p[a];
    }
    for (uint32_t b = 0; b < s->block_count && !w->stop; b++) {
        const occ_block *bk = &s->blocks[b];
        if (!occ_seg_box(w->p, w->d, bk->lo, bk->hi)) continue;
        uint32_t u0, u1, v0, v1;
        if (!cell_range(lo[0], hi[0], bk->x0, s->cell, s->block_n, &u0, &u1) ||
            !cell_range(lo[2], hi[2], bk->z0, s->cell, s->block_n, &v0, &v1))
            continue;
        for (uint32_t v = v0; v <= v1 && !w->stop; v++)
            for (uint32_t u = u0; u <= u1 && !w->stop; u++) {
                if (occ_block_hole(s, bk, u, v)) continue;
                for (int h = 0; h < 2 && !w->stop; h++) {
                    double tri[9], tt;
                    occ_terrain_triangle(s, bk, u, v, h, tri);
                    if (seg_tri(w->p, w->d, tri, tri + 3, tri + 6, &tt) && !w->fn(w->ctx, tt, true))
                        w->stop = true;
                }
            }
    }
}

static void segment_walk(const nm_occ_scene *s, const double p0[3], const double p1[3], hit_fn fn,
                         void *ctx)
{
    if (!s) return;
    seg_walk w;
    memset(&w, 0, sizeof w);
    w.s = s;
    memcpy(w.p, p0, sizeof w.p);
    sub3(p1, p0, w.d);
    w.fn = fn;
    w.ctx = ctx;
    occ_tree_segment(&s->inst_tree, w.p, w.d, seg_instance, &w);
    if (!w.stop) seg_terrain(&w);
}

typedef struct hit_list {
    nm_occ_hit *hits;
    size_t cap, n;
} hit_list;

static bool collect_hit(void *ctx, double t, bool up)
{
    hit_list *h = (hit_list *)ctx;
    if (h->n < h->cap) {
        h->hits[h->n].t = t;
        h->hits[h->n].up = up;
    }
    h->n++;
    return true;
}

size_t nm_occ_segment_hits(const nm_occ_scene *s, const double p0[3], const double p1[3],
                           nm_occ_hit *hits, size_t cap)
{
    hit_list h = {hits, hits ? cap : 0, 0};
    segment_walk(s, p0, p1, collect_hit, &h);
    return h.n;
}

/* ---- the vertical curtain ------------------------------------------------------------------------ */
typedef struct curtain {
    const nm_occ_scene *s;
    double ax, az, dx, dz, len2; /* take-off (x, z) and direction to the landing */
    double y_lo, y_hi;
    double qlo[3], qhi[3];      /* world query box */
    const occ_instance *in;
    bool crossed;
} curtain;

/* Section of a world triangle with the curtain's vertical plane, as points (s, y) with s the
 * fraction along take-off → landing; clipped to s in [0, 1] (Sutherland–Hodgman); true when the
 * clipped section's height range meets (y_lo, y_hi). */
static bool section_crosses(const curtain *c, const double v[9])
{
    double dist[3], sp[3];
    for (int i = 0; i < 3; i++) {
        double rx = v[3 * i] - c->ax, rz = v[3 * i + 2] - c->az;
        dist[i] = c->dx * rz - c->dz * rx;
        sp[i] = (c->dx * rx + c->dz * rz) / c->len2;
    }
    double ps[NM_OCC_kClipMaxVertices], py[NM_OCC_kClipMaxVertices];
    int m = 0;
    if (dist[0] == 0.0 && dist[1] == 0.0 && dist[2] == 0.0) {
        /* The triangle lies in the curtain's plane: its section is the whole triangle. */
        for (int i = 0; i < 3; i++) {
            ps[m] = sp[i];
            py[m++] = v[3 * i + 1];
        }
    } else {
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3;
            if (dist[i] == 0.0) {
                ps[m] = sp[i];
                py[m++] = v[3 * i + 1];
            }
            if ((dist[i] < 0.0 && dist[j] > 0.0) || (dist[i] > 0.0 && dist[j] < 0.0)) {
                double f = dist[i] / (dist[i] - dist[j]);
                ps[m] = sp[i] + f * (sp[j] - sp[i]);
                py[m++] = v[3 * i + 1] + f * (v[3 * j + 1] - v[3 * i + 1]);
            }
        }
    }
    if (m == 0) return false;
    /* Clip against s >= 0 then s <= 1: at most 3 → 4 → 5 points. */
    for (int side = 0; side < 2; side++) {
        double os[NM_OCC_kClipMaxVertices], oy[NM_OCC_kClipMaxVertices];
        int k = 0;
        for (int i = 0; i < m; i++) {
            int j = (i + 1) % m;
            double fi = side == 0 ? ps[i] : 1.0 - ps[i], fj = side == 0 ? ps[j] : 1.0 - ps[j];
            bool ini = fi >= 0.0, inj = fj >= 0.0;
            if (ini && k < NM_OCC_kClipMaxVertices) {
                os[k] = ps[i];
                oy[k++] = py[i];
            }
            if (ini != inj && k < NM_OCC_kClipMaxVertices && m > 1) {
                double f = fi / (fi - fj);
                os[k] = side == 0 ? 0.0 : 1.0;
                oy[k++] = py[i] + f * (py[j] - py[i]);
            }
        }
        m = k;
        if (m == 0) return false;
        memcpy(ps, os, sizeof(double) * (size_t)m);
        memcpy(py, oy, sizeof(double) * (size_t)m);
    }
    double lo = py[0], hi = py[0];
    for (int i = 1; i < m; i++) {
        if (py[i] < lo) lo = py[i];
        if (py[i] > hi) hi = py[i];
    }
    return hi > c->y_lo && lo < c->y_hi;
}

static bool tri_in_box(const curtain *c, const double v[9])
{
    for (int a = 0; a < 3; a++) {
        double lo = v[a], hi = v[a];
        for (int i = 1; i < 3; i++) {
            if (v[3 * i + a] < lo) lo = v[3 * i + a];
            if (v[3 * i + a] > hi) hi = v[3 * i + a];
        }
        if (!(lo <= c->qhi[a] + NM_OCC_kBoxPad && hi >= c->qlo[a] - NM_OCC_kBoxPad)) return false;
    }
    return true;
}

static bool curtain_tri(void *vctx, uint32_t k)
{
    curtain *c = (curtain *)vctx;
    double v[9];
    occ_place_triangle(c->s, c->in, k, v);
    if (tri_in_box(c, v) && section_crosses(c, v)) c->crossed = true;
    return !c->crossed;
}

static bool curtain_instance(void *vctx, uint32_t i)
{
    curtain *c = (curtain *)vctx;
    const occ_instance *in = &c->s->instances[i];
    const occ_template *t = &c->s->templates[in->tmpl];
    if (!occ_box_box(c->qlo, c->qhi, in->lo, in->hi)) return true;
    c->in = in;
    if (in->local && t->has_tree) {
        /* The query box taken into the template's frame (a box around the mapped box). */
        double ctr[3], half[3], lc[3], lh[3], lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            ctr[a] = 0.5 * (c->qlo[a] + c->qhi[a]) - in->t[a];
            half[a] = 0.5 * (c->qhi[a] - c->qlo[a]) + NM_OCC_kBoxPad;
        }
        for (int r = 0; r < 3; r++) {
            lc[r] = in->Ainv[3 * r] * ctr[0] + in->Ainv[3 * r + 1] * ctr[1] + in->Ainv[3 * r + 2] * ctr[2];
            lh[r] = fabs(in->Ainv[3 * r]) * half[0] + fabs(in->Ainv[3 * r + 1]) * half[1] +
                    fabs(in->Ainv[3 * r + 2]) * half[2];
            double m = fabs(lc[r]) + lh[r];
            lo[r] = lc[r] - lh[r] - m * 1e-12;
            hi[r] = lc[r] + lh[r] + m * 1e-12;
        }
        occ_tree_box(&t->tree, lo, hi, curtain_tri, c);
    } else {
        for (uint32_t k = 0; k < t->nt && !c->crossed; k++) curtain_tri(c, k);
    }
    return !c->crossed;
}

static void curtain_terrain(curtain *c)
{
    const nm_occ_scene *s = c->s;
    for (uint32_t b = 0; b < s->block_count && !c->crossed; b++) {
        const occ_block *bk = &s->blocks[b];
        if (!occ_box_box(c->qlo, c->qhi, bk->lo, bk->hi)) continue;
        uint32_t u0, u1, v0, v1;
        if (!cell_range(c->qlo[0], c->qhi[0], bk->x0, s->cell, s->block_n, &u0, &u1) ||
            !cell_range(c->qlo[2], c->qhi[2], bk->z0, s->cell, s->block_n, &v0, &v1))
            continue;
        for (uint32_t v = v0; v <= v1 && !c->crossed; v++)
            for (uint32_t u = u0; u <= u1 && !c->crossed; u++) {
                if (occ_block_hole(s, bk, u, v)) continue;
                for (int h = 0; h < 2 && !c->crossed; h++) {
                    double tri[9];
                    occ_terrain_triangle(s, bk, u, v, h, tri);
                    if (tri_in_box(c, tri) && section_crosses(c, tri)) c->crossed = true;
                }
            }
    }
}

bool nm_occ_curtain_crossed(const nm_occ_scene *s, const double a[3], const double b[3],
                            double y_lo, double y_hi)
{
    if (!s) return false;
    curtain c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.ax = a[0];
    c.az = a[2];
    c.dx = b[0] - a[0];
    c.dz = b[2] - a[2];
    c.len2 = c.dx * c.dx + c.dz * c.dz;
    if (!(sqrt(c.len2) >= NM_OCC_kCurtainMinLength) || !(y_lo < y_hi)) return false;
    c.y_lo = y_lo;
    c.y_hi = y_hi;
    c.qlo[0] = a[0] < b[0] ? a[0] : b[0];
    c.qhi[0] = a[0] < b[0] ? b[0] : a[0];
    c.qlo[1] = y_lo;
    c.qhi[1] = y_hi;
    c.qlo[2] = a[2] < b[2] ? a[2] : b[2];
    c.qhi[2] = a[2] < b[2] ? b[2] : a[2];
    occ_tree_box(&s->inst_tree, c.qlo, c.qhi, curtain_instance, &c);
    if (!c.crossed) curtain_terrain(&c);
    return c.crossed;
}

/* ---- 台沿下落 dropBlocked ------------------------------------------------------------------------- */
/* What a sampling column (x, z) from y0 to y1 records: the highest up face in a band, and whether
 * a down face lies strictly inside another band. Only hits strictly inside (y0, y1) count. */
typedef struct column {
    double y0, y1;
    double up_lo, up_hi;     /* up faces with up_lo < y < up_hi */
    double down_lo, down_hi; /* down faces with down_lo < y < down_hi */
    bool have_up, have_down;
    double up_max, down_min; /* the highest such up face, the lowest such down face */
} column;

static bool column_hit(void *ctx, double t, bool up)
{
    column *c = (column *)ctx;
    double y = c->y0 + t * (c->y1 - c->y0);
    if (!(y > c->y0 && y < c->y1)) return true;
    if (up) {
        if (y > c->up_lo && y < c->up_hi && (!c->have_up || y > c->up_max)) {
            c->have_up = true;
            c->up_max = y;
        }
    } else if (y > c->down_lo && y < c->down_hi && (!c->have_down || y < c->down_min)) {
        c->have_down = true;
        c->down_min = y;
    }
    return true;
}

static void column_sample(const nm_occ_scene *s, const double at[3], column *c)
{
    double p0[3] = {at[0], c->y0, at[2]}, p1[3] = {at[0], c->y1, at[2]};
    segment_walk(s, p0, p1, column_hit, c);
}

bool nm_occ_drop_blocked_with(const nm_occ_scene *s, const double take[3], const double land[3],
                              double climb, double height)
{
    if (!s) return false;
    const double eps = NM_OCC_kColumnEdge, yt = take[1], yl = land[1];

    /* 1. The landing column runs from y_l − c − ε up to max(y_t, y_l + c + ε); it goes on up to
     * y_t + c + ε for the fall from the take-off floor (5), which may stand up to c above y_t. */
    column lc = {0};
    double top = yt + climb + eps;
    lc.y0 = yl - climb - eps;
    lc.y1 = top > yl + climb + eps ? top : yl + climb + eps;
    lc.up_lo = yl - climb - eps;
    lc.up_hi = yl + climb + eps;
    lc.down_lo = yl + climb;
    lc.down_hi = top;
    column_sample(s, land, &lc);
    /* 2. No floor under the landing: allowed. */
    if (!lc.have_up) return false;
    /* 3. Something solid over the landing, below the take-off height: blocked. */
    if (lc.have_down && lc.down_min < yt) return true;

    /* The take-off column spans y_t ± (c + ε). */
    column tc = {0};
    tc.y0 = yt - climb - eps;
    tc.y1 = yt + climb + eps;
    tc.up_lo = tc.y0;
    tc.up_hi = tc.y1;
    tc.down_lo = tc.down_hi = 0.0;
    column_sample(s, take, &tc);
    /* 4. No floor under the take-off: allowed. */
    if (!tc.have_up) return false;

    /* 5. The L-shaped path starts from base = max(take-off floor, y_t): the vertical fall from
     * there meets a down face over the landing below base (the underside of the floor the
     * take-off stands on, when y_t lies under that floor's plane: a zone mesh blending a stair
     * into the slab over it); the horizontal part is the curtain from base + climb to base +
     * height along take-off → landing. */
    double base = tc.up_max > yt ? tc.up_max : yt;
    if (lc.have_down && lc.down_min < base) return true;
    return nm_occ_curtain_crossed(s, take, land, base + climb, base + height);
}

bool nm_occ_drop_blocked(const nm_occ_scene *s, const double take[3], const double land[3])
{
    return nm_occ_drop_blocked_with(s, take, land, NM_kFallClimb, NM_kFallHeight);
}

/* ---- enumeration ------------------------------------------------------------------------------------ */
void nm_occ_foreach_triangle(const nm_occ_scene *s, nm_occ_tri_fn fn, void *ctx)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->instance_count; i++) {
        const occ_instance *in = &s->instances[i];
        for (uint32_t k = 0; k < s->templates[in->tmpl].nt; k++) {
            double v[9];
            occ_place_triangle(s, in, k, v);
            fn(ctx, v, occ_placed_up(v, in->sgn));
        }
    }
    for (uint32_t b = 0; b < s->block_count; b++)
        for (uint32_t v = 0; v + 1 < s->block_n; v++)
            for (uint32_t u = 0; u + 1 < s->block_n; u++) {
                if (occ_block_hole(s, &s->blocks[b], u, v)) continue;
                for (int h = 0; h < 2; h++) {
                    double tri[9];
                    occ_terrain_triangle(s, &s->blocks[b], u, v, h, tri);
                    fn(ctx, tri, true);
                }
            }
}
