/* occ_fixture.h — small geometry builders shared by the occluder tests: boxes as triangle soups
 * with the pack's facing convention (a face is "up" when the y of (v1−v0)×(v2−v0) is negative,
 * i.e. every face is wound so its cross product points into the solid), a soup accumulator, and
 * a collector of a scene's placed triangles. */
#ifndef OCC_FIXTURE_H
#define OCC_FIXTURE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "occluder.h"

typedef struct soup {
    float xyz[3 * 1024];
    uint32_t tri[3 * 1024];
    uint32_t nv, nt;
} soup;

static inline uint32_t soup_vertex(soup *s, double x, double y, double z)
{
    s->xyz[3 * s->nv] = (float)x;
    s->xyz[3 * s->nv + 1] = (float)y;
    s->xyz[3 * s->nv + 2] = (float)z;
    return s->nv++;
}

static inline void soup_tri(soup *s, uint32_t a, uint32_t b, uint32_t c)
{
    s->tri[3 * s->nt] = a;
    s->tri[3 * s->nt + 1] = b;
    s->tri[3 * s->nt + 2] = c;
    s->nt++;
}

/* A quad p0..p3 (cyclic) wound so that its cross product points against `out` (into the solid). */
static inline void soup_quad(soup *s, const double p[4][3], const double out[3])
{
    double e1[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
    double e2[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
    double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                   e1[0] * e2[1] - e1[1] * e2[0]};
    uint32_t v[4];
    for (int i = 0; i < 4; i++) v[i] = soup_vertex(s, p[i][0], p[i][1], p[i][2]);
    if (n[0] * out[0] + n[1] * out[1] + n[2] * out[2] > 0) {
        soup_tri(s, v[0], v[2], v[1]);
        soup_tri(s, v[0], v[3], v[2]);
    } else {
        soup_tri(s, v[0], v[1], v[2]);
        soup_tri(s, v[0], v[2], v[3]);
    }
}

/* An axis-aligned box [x0,x1]×[y0,y1]×[z0,z1]: 12 triangles, top up, bottom down. */
static inline void soup_box(soup *s, double x0, double y0, double z0, double x1, double y1, double z1)
{
    const double X[2] = {x0, x1}, Y[2] = {y0, y1}, Z[2] = {z0, z1};
    for (int axis = 0; axis < 3; axis++)
        for (int side = 0; side < 2; side++) {
            double p[4][3], out[3] = {0, 0, 0};
            out[axis] = side ? 1 : -1;
            int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
            static const int cyc[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
            for (int k = 0; k < 4; k++) {
                double c[3];
                c[axis] = axis == 0 ? X[side] : axis == 1 ? Y[side] : Z[side];
                const double *A1 = a1 == 0 ? X : a1 == 1 ? Y : Z, *A2 = a2 == 0 ? X : a2 == 1 ? Y : Z;
                c[a1] = A1[cyc[k][0]];
                c[a2] = A2[cyc[k][1]];
                memcpy(p[k], c, sizeof c);
            }
            soup_quad(s, p, out);
        }
}

static inline nm_occ_group soup_group(const soup *s)
{
    nm_occ_group g = {s->xyz, s->nv, s->tri, s->nt};
    return g;
}

/* Placed triangles of a scene, in nm_occ_foreach_triangle order. */
typedef struct tri_list {
    double v[9 * 8192];
    bool up[8192];
    size_t n;
} tri_list;

static inline void tri_collect(void *ctx, const double v[9], bool up)
{
    tri_list *l = (tri_list *)ctx;
    if (l->n < 8192) {
        memcpy(l->v + 9 * l->n, v, 9 * sizeof(double));
        l->up[l->n] = up;
    }
    l->n++;
}

/* Deterministic pseudo-random numbers for the property tests. */
static inline double lcg_unit(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

#endif
