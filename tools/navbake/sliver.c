/* sliver.c — see sliver.h. */
#include "sliver.h"

#include "base/base.h"
#include "grid/grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 32 /* each round halves the longest sliver edges: 2^32 is far past any level */

typedef struct edge_key {
    uint32_t lo, hi; /* representative vertex ids, lo < hi */
    uint32_t slot;   /* tri * 3 + k */
} edge_key;

static int key_cmp(const void *pa, const void *pb)
{
    const edge_key *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static uint32_t bits(float f)
{
    f += 0.0f; /* -0 -> +0, as the weld */
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

typedef struct vkey {
    uint32_t b[3]; /* coordinate bits */
    uint32_t id;
} vkey;

/* Vertex order by bits, then id: equal vertices end up next to each other. */
static int vkey_cmp(const void *pa, const void *pb)
{
    const vkey *a = pa, *b = pb;
    int c = memcmp(a->b, b->b, sizeof a->b);
    if (c) return c < 0 ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static double plan_len(const float *a, const float *b)
{
    double dx = (double)b[0] - a[0], dz = (double)b[2] - a[2];
    return sqrt(dx * dx + dz * dz);
}

/* The edge k (v[k] -> v[k+1]) longest in plan, the first of equals. */
static int longest_edge(const float *v, const uint32_t *t)
{
    int k = 0;
    double L = -1.0;
    for (int i = 0; i < 3; i++) {
        double l = plan_len(v + 3 * (size_t)t[i], v + 3 * (size_t)t[(i + 1) % 3]);
        if (l > L) { L = l; k = i; }
    }
    return k;
}

/* Edge k (v[k] -> v[k+1]) to cut when the triangle is a sliver, else -1. */
static int sliver_edge(const float *v, const uint32_t *t, double target)
{
    const float *p[3] = {v + 3 * (size_t)t[0], v + 3 * (size_t)t[1], v + 3 * (size_t)t[2]};
    double lo = fmin(p[0][1], fmin(p[1][1], p[2][1])), hi = fmax(p[0][1], fmax(p[1][1], p[2][1]));
    if (hi - lo <= NM_kMergeH) return -1;
    int k = 0;
    double L = -1.0;
    for (int i = 0; i < 3; i++) {
        double l = plan_len(p[i], p[(i + 1) % 3]);
        if (l > L) { L = l; k = i; }
    }
    if (!(L > target)) return -1;
    double e1x = (double)p[1][0] - p[0][0], e1z = (double)p[1][2] - p[0][2];
    double e2x = (double)p[2][0] - p[0][0], e2z = (double)p[2][2] - p[0][2];
    double h = fabs(e1x * e2z - e1z * e2x) / L; /* twice the area over the base */
    return L > NM_kSliverRatio * h ? k : -1;
}

/* The triangle's height at its outline's point nearest p (px; q in u, v px and h m). */
static double nearest_height(const float q[3][3], const double *p)
{
    double best = INFINITY, h = q[0][2];
    for (int k = 0; k < 3; k++) {
        const float *a = q[k], *b = q[(k + 1) % 3];
        const double du = (double)b[0] - a[0], dv = (double)b[1] - a[1], l2 = du * du + dv * dv;
        double f = l2 > 0.0 ? ((p[0] - a[0]) * du + (p[1] - a[1]) * dv) / l2 : 0.0;
        f = fmin(fmax(f, 0.0), 1.0);
        const double eu = a[0] + f * du - p[0], ev = a[1] + f * dv - p[1], d = eu * eu + ev * ev;
        if (d < best) { best = d; h = a[2] + f * ((double)b[2] - a[2]); }
    }
    return h;
}

/* Does Rasterize (nm_grid_rasterize, on the zone's cells) give a cell the triangle only touches
 * (ins = 0) a sample more than kStepUp from the triangle's own height nearest its centre, in any
 * vertex order? Such a sample is a span under (or over) the surface a character could be routed
 * onto. Both heights lie between the corners' lowest and highest, so a triangle spanning kStepUp
 * or less never does. 1 yes, 0 no, NM_ERR_NOMEM. smp: the caller's scratch. */
static int clamp_far(const float *v, const uint32_t *t, const nm_sliver_grid *g, nm_grid_samples *smp)
{
    float q[3][3]; /* u, v px; h m: the rasteriser's input */
    for (int k = 0; k < 3; k++) {
        const float *w = v + 3 * (size_t)t[k];
        q[k][0] = (float)(g->sx * w[0] + g->tx);
        q[k][1] = (float)(g->ty - g->sz * w[2]);
        q[k][2] = w[1];
    }
    const double lo = fmin(q[0][2], fmin(q[1][2], q[2][2])), hi = fmax(q[0][2], fmax(q[1][2], q[2][2]));
    if (!(hi - lo > NM_kStepUp)) return 0;
    double L2 = 0.0; /* pieces of an eighth of a cell or less are left: the cuts end, on a
                          triangle flat in plan too */
    for (int k = 0; k < 3; k++) {
        const double du = (double)q[(k + 1) % 3][0] - q[k][0], dv = (double)q[(k + 1) % 3][1] - q[k][1];
        L2 = fmax(L2, du * du + dv * dv);
    }
    if (!(L2 > NM_kCS * NM_kCS / 64.0)) return 0;
    const double i0 = floor(fmin(q[0][0], fmin(q[1][0], q[2][0])) / NM_kCS);
    const double j0 = floor(fmin(q[0][1], fmin(q[1][1], q[2][1])) / NM_kCS);
    const double ni = floor(fmax(q[0][0], fmax(q[1][0], q[2][0])) / NM_kCS) - i0 + 1.0;
    const double nj = floor(fmax(q[0][1], fmax(q[1][1], q[2][1])) / NM_kCS) - j0 + 1.0;
    if (!(ni <= 4096.0 && nj <= 4096.0)) return 0; /* a walkable-mesh triangle is far smaller */
    const nm_grid_window win = {i0 * NM_kCS, j0 * NM_kCS, (int32_t)ni, (int32_t)nj};
    static const uint32_t ord[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    for (int o = 0; o < 6; o++) {
        const nm_grid_mesh m = {&q[0][0], 3, ord[o], 1, NULL};
        nm_error err = {0};
        smp->n = 0;
        int rc = nm_grid_rasterize(&win, &m, smp, &err);
        if (rc) return rc == NM_ERR_NOMEM ? NM_ERR_NOMEM : 0; /* a window the grid refuses: left */
        /* the last sample is the centroid's (second pass), not a clamp */
        for (size_t k = 0; k + 1 < smp->n; k++) {
            if (smp->ins[k]) continue;
            const double p[2] = {win.x0 + ((double)(smp->cell[k] % (uint32_t)win.nx) + 0.5) * NM_kCS,
                                 win.y0 + ((double)(smp->cell[k] / (uint32_t)win.nx) + 0.5) * NM_kCS};
            if (fabs((double)smp->h[k] - nearest_height(q, p)) > NM_kStepUp) return 1;
        }
    }
    return 0;
}

int nm_bake_split_slivers(float **verts, uint32_t *nv, uint32_t **tris, uint8_t **areas, uint32_t *nt,
                          const nm_sliver_grid *g, int *changed)
{
    *changed = 0;
    /* two planner cells, in metres along the map's finer axis; none on a squashed map */
    const double px_m = fmax(fabs(g->sx), fabs(g->sz));
    if (!(px_m > 0.0 && isfinite(px_m))) return NM_OK;
    const double target = 2.0 * NM_kCS / px_m;
    float *v = *verts;
    uint32_t *t = *tris;
    uint8_t *ar = *areas;
    uint32_t n_v = *nv, n_t = *nt;
    uint32_t *rep = NULL, *mid = NULL, *gm = NULL;
    edge_key *e = NULL;
    nm_grid_samples smp = {0}; /* clamp_far's scratch, kept across its calls */
    int rc = NM_OK;
    /* Representatives: the lowest id of each set of equal vertices (midpoints are new). */
    rep = nm_malloc(sizeof(uint32_t) * (size_t)(n_v ? n_v : 1));
    vkey *vk = nm_malloc(sizeof *vk * (size_t)(n_v ? n_v : 1));
    if (!rep || !vk) { nm_free(vk); rc = NM_ERR_NOMEM; goto done; }
    for (uint32_t i = 0; i < n_v; i++)
        vk[i] = (vkey){{bits(v[3 * (size_t)i]), bits(v[3 * (size_t)i + 1]), bits(v[3 * (size_t)i + 2])}, i};
    qsort(vk, n_v, sizeof *vk, vkey_cmp);
    for (uint32_t i = 0; i < n_v; i++)
        rep[vk[i].id] = (i > 0 && !memcmp(vk[i - 1].b, vk[i].b, sizeof vk[i].b)) ? rep[vk[i - 1].id] : vk[i].id;
    nm_free(vk);

    for (int round = 0; round < MAX_ROUNDS; round++) {
        /* Edges by representative ids, sorted: the sides of one edge are neighbours in e. */
        size_t ne = 3 * (size_t)n_t;
        e = nm_malloc(sizeof *e * (ne ? ne : 1));
        mid = nm_malloc(sizeof(uint32_t) * (ne ? ne : 1)); /* per slot: midpoint id + 1, 0 = none */
        if (!e || !mid) { rc = NM_ERR_NOMEM; goto done; }
        for (uint32_t i = 0; i < n_t; i++)
            for (int k = 0; k < 3; k++) {
                uint32_t a = rep[t[3 * (size_t)i + k]], b = rep[t[3 * (size_t)i + (k + 1) % 3]];
                e[3 * (size_t)i + k] = (edge_key){a < b ? a : b, a < b ? b : a, 3 * i + (uint32_t)k};
            }
        qsort(e, ne, sizeof *e, key_cmp);
        /* mid[slot] = its edge's number first (the sides of one edge are neighbours in e). */
        size_t ng = 0;
        for (size_t i = 0; i < ne; i++) {
            if (i > 0 && (e[i].lo != e[i - 1].lo || e[i].hi != e[i - 1].hi)) ng++;
            mid[e[i].slot] = (uint32_t)ng;
        }
        ng += ne > 0;
        gm = nm_calloc(ng ? ng : 1, sizeof(uint32_t)); /* per edge: 1 = cut, then midpoint id + 1 */
        if (!gm) { rc = NM_ERR_NOMEM; goto done; }
        size_t marked = 0;
        for (uint32_t i = 0; i < n_t; i++) {
            int k = sliver_edge(v, t + 3 * (size_t)i, target);
            if (k < 0) {
                int far = clamp_far(v, t + 3 * (size_t)i, g, &smp);
                if (far < 0) { rc = far; goto done; }
                if (far) k = longest_edge(v, t + 3 * (size_t)i);
            }
            if (k >= 0) { gm[mid[3 * (size_t)i + k]] = 1; marked++; }
        }
        if (marked == 0) break;
        /* A triangle cut anywhere is cut at its longest edge too (longest-edge bisection): the
         * neighbours of a sliver are refined with it instead of turning into fans of thin pieces. */
        for (int grew = 1; grew;) {
            grew = 0;
            for (uint32_t i = 0; i < n_t; i++) {
                const uint32_t *g = mid + 3 * (size_t)i;
                uint32_t l = g[longest_edge(v, t + 3 * (size_t)i)];
                if ((gm[g[0]] || gm[g[1]] || gm[g[2]]) && !gm[l]) { gm[l] = 1; grew = 1; }
            }
        }
        size_t add = 0;
        for (size_t i = 0; i < ng; i++) add += gm[i] != 0;
        if ((uint64_t)n_v + add > (1u << 30) || 4 * (uint64_t)n_t > (1u << 30)) break;
        float *nvv = nm_realloc(v, sizeof(float) * 3 * ((size_t)n_v + add));
        if (!nvv) { rc = NM_ERR_NOMEM; goto done; }
        v = nvv;
        uint32_t *nrep = nm_realloc(rep, sizeof(uint32_t) * ((size_t)n_v + add));
        if (!nrep) { rc = NM_ERR_NOMEM; goto done; }
        rep = nrep;
        /* One midpoint per cut edge, numbered in edge order, shared by every side. */
        for (size_t i = 0, g = 0; i < ne; i++) {
            if (i > 0 && (e[i].lo != e[i - 1].lo || e[i].hi != e[i - 1].hi)) g++;
            if (gm[g] == 1) {
                const float *a = v + 3 * (size_t)e[i].lo, *b = v + 3 * (size_t)e[i].hi;
                for (int c = 0; c < 3; c++) v[3 * (size_t)n_v + c] = (a[c] + b[c]) * 0.5f;
                rep[n_v] = n_v;
                gm[g] = 2 + n_v++;
            }
        }
        for (size_t sl = 0; sl < ne; sl++) mid[sl] = gm[mid[sl]] ? gm[mid[sl]] - 1 : 0;
        nm_free(gm);
        gm = NULL;
        /* Children in the parent's place and winding. */
        size_t cap = 4 * (size_t)n_t;
        uint32_t *nt3 = nm_malloc(sizeof(uint32_t) * 3 * cap);
        uint8_t *nar = nm_malloc(cap);
        if (!nt3 || !nar) { nm_free(nt3); nm_free(nar); rc = NM_ERR_NOMEM; goto done; }
        size_t o = 0;
#define EMIT(A, B, C) do { nt3[3 * o] = (A); nt3[3 * o + 1] = (B); nt3[3 * o + 2] = (C); nar[o++] = ar[i]; } while (0)
        for (uint32_t i = 0; i < n_t; i++) {
            const uint32_t *p = t + 3 * (size_t)i;
            const uint32_t *m1 = mid + 3 * (size_t)i;
            int cnt = (m1[0] != 0) + (m1[1] != 0) + (m1[2] != 0);
            if (cnt == 0) {
                EMIT(p[0], p[1], p[2]);
            } else if (cnt == 1) {
                int k = m1[0] ? 0 : m1[1] ? 1 : 2;
                uint32_t m = m1[k] - 1;
                EMIT(p[k], m, p[(k + 2) % 3]);
                EMIT(m, p[(k + 1) % 3], p[(k + 2) % 3]);
            } else if (cnt == 2) {
                int j = !m1[0] ? 0 : !m1[1] ? 1 : 2; /* the edge left whole: a -> b */
                uint32_t a = p[j], b = p[(j + 1) % 3], c = p[(j + 2) % 3];
                uint32_t mb = m1[(j + 1) % 3] - 1, mc = m1[(j + 2) % 3] - 1; /* on b->c, c->a */
                EMIT(mb, c, mc);
                /* The quad a, b, mb, mc by its shorter diagonal. */
                double d1 = plan_len(v + 3 * (size_t)a, v + 3 * (size_t)mb);
                double d2 = plan_len(v + 3 * (size_t)b, v + 3 * (size_t)mc);
                if (d1 <= d2) {
                    EMIT(a, b, mb);
                    EMIT(a, mb, mc);
                } else {
                    EMIT(a, b, mc);
                    EMIT(b, mb, mc);
                }
            } else {
                uint32_t m0 = m1[0] - 1, mm1 = m1[1] - 1, m2 = m1[2] - 1;
                EMIT(p[0], m0, m2);
                EMIT(m0, p[1], mm1);
                EMIT(m2, mm1, p[2]);
                EMIT(m0, mm1, m2);
            }
        }
#undef EMIT
        nm_free(t);
        nm_free(ar);
        t = nt3;
        ar = nar;
        n_t = (uint32_t)o;
        nm_free(e);
        nm_free(mid);
        e = NULL;
        mid = NULL;
        *changed = 1;
    }
done:
    nm_grid_samples_free(&smp);
    nm_free(rep);
    nm_free(gm);
    nm_free(e);
    nm_free(mid);
    *verts = v;
    *tris = t;
    *areas = ar;
    *nv = n_v;
    *nt = n_t;
    return rc;
}
