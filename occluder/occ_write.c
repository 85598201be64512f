/* occ_write.c — the OccluderPack writer: zones of templates (power-of-two quantised vertices in
 * first-reference order, corners as back-references), instances (positions in the position step,
 * smallest-three rotations, a scale palette, or raw matrices), world-space triangle groups (one
 * template plus one identity instance each) and regular heightfields cut into terrain blocks
 * (plane-predicted heights, hole bitmaps), packed as OCLZ bodies in an OCLS container. The same
 * input always gives the same bytes. */
#include "occ_internal.h"

#include <math.h>
#include <string.h>

/* Header choices of this writer (any reader takes any values within the format's limits). */
#define W_POS_EXP (-16)        /* position step 2^-16 m ≈ 15 µm */
#define W_ROT_SCALE (1u << 20) /* quaternion component denominator */
#define W_SCALE_SHIFT 16u      /* scale fixed-point bits */
#define W_BLOCK_N 17u          /* default samples per block side */
#define W_HEIGHT_EXP (-10)     /* default height step 2^-10 m */

#define ARG(...) nm_fail(err, NM_ERR_ARG, __VA_ARGS__)

static const double k_int_limit = 4611686018427387904.0; /* 2^62: quantised values stay below */

static bool quantise(double x, int e, int64_t *out)
{
    double q = nearbyint(ldexp(x, -e));
    if (!(fabs(q) < k_int_limit)) return false;
    *out = (int64_t)q;
    return true;
}

/* Smallest exponent e keeping every value an exact multiple of 2^e (so the step's product is
 * exact: the integer then has no more significant bits than the value, so it converts to double
 * exactly), raised when needed to keep the integers and their deltas within int64, clamped to
 * [-60, 60]. */
static int pick_exponent(const double *v, size_t n)
{
    int e_exact = INT32_MAX, e_range = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == 0.0) continue;
        int ex;
        double m = frexp(v[i], &ex);
        int64_t M = (int64_t)ldexp(fabs(m), 53);
        int low = ex - 53 + __builtin_ctzll((unsigned long long)M);
        if (low < e_exact) e_exact = low;
        if (ex - 62 > e_range) e_range = ex - 62;
    }
    if (e_exact == INT32_MAX) return 0;
    int e = e_exact > e_range ? e_exact : e_range;
    if (e < -NM_OCC_kExponentMax) e = -NM_OCC_kExponentMax;
    if (e > NM_OCC_kExponentMax) e = NM_OCC_kExponentMax;
    return e;
}

typedef struct wtemplate {
    const double *xyz;  /* local */
    uint32_t nv, nt;
    const uint32_t *tri;
} wtemplate;

typedef struct winstance {
    uint32_t tmpl, order;
    double t[3];
    int use_matrix;
    double q[4], scale[3];
    float m[9];
} winstance;

/* Stable by (template, input order): instances are stored grouped by template. */
static void sort_instances(winstance *w, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        winstance x = w[i];
        size_t j = i;
        while (j > 0 && (w[j - 1].tmpl > x.tmpl || (w[j - 1].tmpl == x.tmpl && w[j - 1].order > x.order))) {
            w[j] = w[j - 1];
            j--;
        }
        w[j] = x;
    }
}

static int encode_template(const wtemplate *t, uint32_t ti, nm_buf *st_t, nm_buf *st_v, nm_buf *st_i,
                           nm_error *err)
{
    uint32_t *map = (uint32_t *)nm_malloc((t->nv ? t->nv : 1) * sizeof *map);
    uint32_t *order = (uint32_t *)nm_malloc((t->nv ? t->nv : 1) * sizeof *order);
    double *loc = (double *)nm_malloc((t->nv ? 3 * (size_t)t->nv : 1) * sizeof *loc);
    int rc = NM_OK;
    if (!map || !order || !loc) rc = nm_fail(err, NM_ERR_NOMEM, "template %u: out of memory", ti);
    for (uint32_t i = 0; rc == NM_OK && i < t->nv; i++) map[i] = UINT32_MAX;
    uint32_t next = 0;
    /* Vertices are renumbered in the order the corners first refer to them. */
    for (size_t c = 0; rc == NM_OK && c < 3 * (size_t)t->nt; c++) {
        uint32_t vi = t->tri[c];
        if (vi >= t->nv) rc = ARG("template %u: corner %zu names vertex %u of %u", ti, c, vi, t->nv);
        else if (map[vi] == UINT32_MAX) {
            map[vi] = next;
            order[next++] = vi;
        }
    }
    for (uint32_t k = 0; rc == NM_OK && k < next; k++)
        for (int a = 0; a < 3; a++) {
            loc[3 * (size_t)k + a] = t->xyz[3 * (size_t)order[k] + a];
            if (!isfinite(loc[3 * (size_t)k + a]))
                rc = ARG("template %u: vertex %u is not finite", ti, order[k]);
        }
    if (rc == NM_OK) {
        int e = pick_exponent(loc, 3 * (size_t)next);
        nm_buf_varint(st_t, next);
        nm_buf_varint(st_t, t->nt);
        nm_buf_varint(st_t, nm_zig(e));
        for (int a = 0; a < 3 && rc == NM_OK; a++) {
            int64_t prev = 0;
            for (uint32_t k = 0; k < next; k++) {
                int64_t q;
                if (!quantise(loc[3 * (size_t)k + a], e, &q)) {
                    rc = ARG("template %u: vertex coordinate out of range", ti);
                    break;
                }
                nm_buf_varint(st_v, nm_zig(q - prev));
                prev = q;
            }
        }
        uint32_t seen = 0;
        for (uint32_t i = 0; i < t->nv; i++) map[i] = UINT32_MAX;
        for (size_t c = 0; rc == NM_OK && c < 3 * (size_t)t->nt; c++) {
            uint32_t vi = t->tri[c];
            if (map[vi] == UINT32_MAX) {
                map[vi] = seen++;
                nm_buf_varint(st_i, 0);
            } else
                nm_buf_varint(st_i, seen - map[vi]);
        }
    }
    nm_free(map);
    nm_free(order);
    nm_free(loc);
    return rc;
}

typedef struct zone_enc {
    nm_buf st[NM_OCC_kStreamCount];
    wtemplate *tm;
    winstance *in;
    uint32_t nt, ni;
    int64_t *pos;    /* instances × 3, in position steps */
    int64_t *bpos;   /* blocks × 2 */
    uint32_t nb;
} zone_enc;

static int encode_instances(zone_enc *z, int64_t ox, int64_t oz, nm_error *err)
{
    /* Counts per template (instances are sorted by template). */
    for (uint32_t t = 0, i = 0; t < z->nt; t++) {
        uint32_t k = 0;
        while (i < z->ni && z->in[i].tmpl == t) {
            i++;
            k++;
        }
        nm_buf_varint(&z->st[3], k);
    }
    int64_t origin[3] = {ox, 0, oz};
    for (int a = 0; a < 3; a++) {
        int64_t prev = 0;
        for (uint32_t i = 0; i < z->ni; i++) {
            int64_t v = z->pos[3 * (size_t)i + a] - origin[a];
            nm_buf_varint(&z->st[4], nm_zig(v - prev));
            prev = v;
        }
    }
    /* Rotation codes, smallest-three components, scale palette. */
    uint32_t nq = 0;
    int64_t *comp = (int64_t *)nm_calloc(3 * (size_t)(z->ni ? z->ni : 1), sizeof *comp);
    int64_t *pal = (int64_t *)nm_calloc(3 * (size_t)(z->ni ? z->ni : 1), sizeof *pal);
    uint32_t *pidx = (uint32_t *)nm_calloc(z->ni ? z->ni : 1, sizeof *pidx);
    int rc = NM_OK;
    if (!comp || !pal || !pidx) rc = nm_fail(err, NM_ERR_NOMEM, "instances: out of memory");
    uint32_t np = 0;
    for (uint32_t i = 0; i < z->ni && rc == NM_OK; i++) {
        const winstance *w = &z->in[i];
        if (w->use_matrix) {
            nm_buf_u8(&z->st[5], 4);
            for (int j = 0; j < 9; j++) nm_buf_f32(&z->st[8], w->m[j]);
            continue;
        }
        double q[4], nn = 0.0;
        for (int j = 0; j < 4; j++) nn += w->q[j] * w->q[j];
        nn = sqrt(nn);
        if (!(nn > 0.0) || !isfinite(nn)) {
            rc = ARG("instance %u: quaternion has no direction", w->order);
            break;
        }
        int big = 0;
        for (int j = 0; j < 4; j++) {
            q[j] = w->q[j] / nn;
            if (fabs(q[j]) > fabs(q[big])) big = j;
        }
        if (q[big] < 0.0)
            for (int j = 0; j < 4; j++) q[j] = -q[j];
        nm_buf_u8(&z->st[5], (uint8_t)big);
        for (int j = 0, c = 0; j < 4; j++) {
            if (j == big) continue;
            double r = nearbyint(q[j] * 1.41421356237309504880 * (double)W_ROT_SCALE);
            if (r > W_ROT_SCALE) r = W_ROT_SCALE;
            if (r < -(double)W_ROT_SCALE) r = -(double)W_ROT_SCALE;
            comp[3 * (size_t)nq + c++] = (int64_t)r;
        }
        int64_t s[3];
        for (int a = 0; a < 3 && rc == NM_OK; a++)
            if (!quantise(w->scale[a], -(int)W_SCALE_SHIFT, &s[a]))
                rc = ARG("instance %u: scale out of range", w->order);
        if (rc) break;
        uint32_t k = 0;
        while (k < np && memcmp(pal + 3 * (size_t)k, s, sizeof s) != 0) k++;
        if (k == np) memcpy(pal + 3 * (size_t)np++, s, sizeof s);
        pidx[nq++] = k;
    }
    if (rc == NM_OK) {
        for (int c = 0; c < 3; c++)
            for (uint32_t q = 0; q < nq; q++) nm_buf_varint(&z->st[6], nm_zig(comp[3 * (size_t)q + c]));
        nm_buf_varint(&z->st[7], np);
        for (size_t k = 0; k < 3 * (size_t)np; k++) nm_buf_varint(&z->st[7], nm_zig(pal[k]));
        for (uint32_t q = 0; q < nq; q++) nm_buf_varint(&z->st[7], pidx[q]);
    }
    nm_free(comp);
    nm_free(pal);
    nm_free(pidx);
    return rc;
}

static int encode_terrain(zone_enc *z, const nm_occ_terrain_in *tr, double pos_q, int64_t ox,
                          int64_t oz, uint32_t n, int hexp, nm_error *err)
{
    uint32_t nbu = (tr->nx - 2) / (n - 1) + 1, nbv = (tr->nz - 2) / (n - 1) + 1;
    size_t cells = (size_t)(n - 1) * (n - 1), hb = (cells + 7) / 8;
    int64_t *k = (int64_t *)nm_malloc((size_t)n * n * sizeof *k);
    uint8_t *bits = (uint8_t *)nm_malloc(hb);
    if (!k || !bits) {
        nm_free(k);
        nm_free(bits);
        return nm_fail(err, NM_ERR_NOMEM, "terrain: out of memory");
    }
    int rc = NM_OK;
    int64_t px = 0, pz = 0, first = 0;
    for (uint32_t bv = 0, b = 0; bv < nbv && rc == NM_OK; bv++)
        for (uint32_t bu = 0; bu < nbu && rc == NM_OK; bu++, b++) {
            int64_t X = z->bpos[2 * (size_t)b] - ox, Z = z->bpos[2 * (size_t)b + 1] - oz;
            nm_buf_varint(&z->st[9], nm_zig(X - px));
            nm_buf_varint(&z->st[9], nm_zig(Z - pz));
            px = X;
            pz = Z;
            memset(bits, 0, hb);
            bool any = false;
            for (uint32_t v = 0; v + 1 < n; v++)
                for (uint32_t u = 0; u + 1 < n; u++) {
                    size_t gu = (size_t)bu * (n - 1) + u, gv = (size_t)bv * (n - 1) + v;
                    bool hole = gu >= tr->nx - 1 || gv >= tr->nz - 1 ||
                                (tr->holes && tr->holes[gv * (tr->nx - 1) + gu]);
                    if (hole) {
                        size_t c = (size_t)v * (n - 1) + u;
                        bits[c / 8] |= (uint8_t)(1u << (c % 8));
                        any = true;
                    }
                }
            nm_buf_u8(&z->st[9], any ? 1 : 0);
            if (any) nm_buf_bytes(&z->st[11], bits, hb);
            for (uint32_t v = 0; v < n && rc == NM_OK; v++)
                for (uint32_t u = 0; u < n; u++) {
                    /* Samples past the field's edge repeat the last one (their cells are holes). */
                    size_t gu = (size_t)bu * (n - 1) + u, gv = (size_t)bv * (n - 1) + v;
                    if (gu >= tr->nx) gu = tr->nx - 1;
                    if (gv >= tr->nz) gv = tr->nz - 1;
                    double h = tr->heights[gv * tr->nx + gu];
                    int64_t q;
                    if (!isfinite(h) || !quantise(h, hexp, &q) || q > INT32_MAX || q < INT32_MIN) {
                        rc = ARG("terrain: sample (%zu, %zu): height %g does not fit", gu, gv, h);
                        break;
                    }
                    k[v * n + u] = q;
                }
            if (rc) break;
            for (uint32_t v = 0; v < n; v++)
                for (uint32_t u = 0; u < n; u++) {
                    int64_t pred;
                    if (u > 0 && v > 0) pred = k[v * n + u - 1] + k[(v - 1) * n + u] - k[(v - 1) * n + u - 1];
                    else if (u > 0) pred = k[u - 1];
                    else if (v > 0) pred = k[(v - 1) * n];
                    else pred = first;
                    nm_buf_varint(&z->st[10], nm_zig(k[v * n + u] - pred));
                }
            first = k[0];
        }
    (void)pos_q;
    nm_free(k);
    nm_free(bits);
    return rc;
}

static void zone_free(zone_enc *z)
{
    for (int i = 0; i < NM_OCC_kStreamCount; i++) nm_buf_free(&z->st[i]);
    nm_free(z->tm);
    nm_free(z->in);
    nm_free(z->pos);
    nm_free(z->bpos);
}

/* One OCLZ body appended to out. */
static int encode_zone(const nm_occ_zone_in *zi, nm_buf *out, double **scratch, nm_error *err)
{
    zone_enc z;
    memset(&z, 0, sizeof z);
    const double pos_q = ldexp(1.0, W_POS_EXP);
    const nm_occ_terrain_in *tr = zi->terrain;
    uint32_t bn = tr && tr->block_n ? tr->block_n : W_BLOCK_N;
    int hexp = W_HEIGHT_EXP;
    double hstep = ldexp(1.0, W_HEIGHT_EXP);
    if (tr && tr->height_step > 0.0) {
        hstep = tr->height_step;
        int ex;
        /* Only powers of two keep y = k·step exact; others are taken as the nearest one below. */
        frexp(hstep, &ex);
        hexp = ex - 1;
        hstep = ldexp(1.0, hexp);
    }
    if (tr && (tr->nx < 2 || tr->nz < 2 || !tr->heights || bn < 2 || !(tr->spacing > 0.0) ||
               !isfinite(tr->spacing) || !isfinite(tr->x0) || !isfinite(tr->z0)))
        return ARG("terrain: needs nx, nz >= 2, heights, block_n >= 2 and a positive spacing");

    uint64_t nt = (uint64_t)zi->template_count + zi->group_count;
    uint64_t ni = (uint64_t)zi->instance_count + zi->group_count;
    if (nt > UINT32_MAX || ni > UINT32_MAX) return ARG("too many templates or instances");
    z.nt = (uint32_t)nt;
    z.ni = (uint32_t)ni;
    z.tm = (wtemplate *)nm_calloc(nt ? nt : 1, sizeof *z.tm);
    z.in = (winstance *)nm_calloc(ni ? ni : 1, sizeof *z.in);
    z.pos = (int64_t *)nm_calloc(3 * (ni ? ni : 1), sizeof *z.pos);
    if (tr) {
        uint64_t nbu = (tr->nx - 2) / (bn - 1) + 1, nbv = (tr->nz - 2) / (bn - 1) + 1;
        if (nbu * nbv > UINT32_MAX / 4) {
            zone_free(&z);
            return ARG("terrain: too many blocks");
        }
        z.nb = (uint32_t)(nbu * nbv);
        z.bpos = (int64_t *)nm_calloc(2 * (size_t)z.nb, sizeof *z.bpos);
    }
    int rc = NM_OK;
    if (!z.tm || !z.in || !z.pos || (tr && !z.bpos)) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory");

    /* Explicit templates and instances. */
    for (uint32_t i = 0; rc == NM_OK && i < zi->template_count; i++) {
        const nm_occ_template_in *t = &zi->templates[i];
        z.tm[i] = (wtemplate){t->xyz, t->vertex_count, t->triangle_count, t->tri};
    }
    for (uint32_t i = 0; rc == NM_OK && i < zi->instance_count; i++) {
        const nm_occ_instance_in *s = &zi->instances[i];
        if (s->template_index >= zi->template_count)
            rc = ARG("instance %u: template %u of %u", i, s->template_index, zi->template_count);
        winstance *w = &z.in[i];
        w->tmpl = s->template_index;
        w->order = i;
        memcpy(w->t, s->t, sizeof w->t);
        w->use_matrix = s->use_matrix;
        memcpy(w->q, s->q, sizeof w->q);
        memcpy(w->scale, s->scale, sizeof w->scale);
        memcpy(w->m, s->matrix, sizeof w->m);
    }
    /* Groups: world triangles → local copy translated to the group's lower corner (a whole number
     * of position steps, so the translation itself is exact). */
    for (uint32_t g = 0; rc == NM_OK && g < zi->group_count; g++) {
        const nm_occ_group *gr = &zi->groups[g];
        double lo[3] = {0, 0, 0};
        for (uint32_t v = 0; v < gr->vertex_count; v++)
            for (int a = 0; a < 3; a++) {
                double x = gr->xyz[3 * (size_t)v + a];
                if (!isfinite(x)) rc = ARG("group %u: vertex %u is not finite", g, v);
                else if (v == 0 || x < lo[a]) lo[a] = x;
            }
        double *loc = (double *)nm_malloc((gr->vertex_count ? 3 * (size_t)gr->vertex_count : 1) * sizeof *loc);
        if (rc == NM_OK && !loc) rc = nm_fail(err, NM_ERR_NOMEM, "group %u: out of memory", g);
        if (rc) {
            nm_free(loc);
            break;
        }
        scratch[g] = loc;
        winstance *w = &z.in[zi->instance_count + g];
        /* The lower corner, unless subtracting it would round a coordinate (a tiny value far
         * from the corner): then that axis keeps the world coordinates as they are. */
        for (int a = 0; a < 3; a++) {
            w->t[a] = floor(lo[a] / pos_q) * pos_q;
            for (uint32_t v = 0; v < gr->vertex_count; v++) {
                double x = gr->xyz[3 * (size_t)v + a];
                if ((x - w->t[a]) + w->t[a] != x) {
                    w->t[a] = 0.0;
                    break;
                }
            }
        }
        for (uint32_t v = 0; v < gr->vertex_count; v++)
            for (int a = 0; a < 3; a++)
                loc[3 * (size_t)v + a] = (double)gr->xyz[3 * (size_t)v + a] - w->t[a];
        z.tm[zi->template_count + g] = (wtemplate){loc, gr->vertex_count, gr->triangle_count, gr->tri};
        w->tmpl = zi->template_count + g;
        w->order = zi->instance_count + g;
        w->q[3] = 1.0;
        w->scale[0] = w->scale[1] = w->scale[2] = 1.0;
    }
    if (rc == NM_OK) sort_instances(z.in, z.ni);

    /* Integer positions and the header origin (the smallest x and z in use). */
    int64_t ox = 0, oz = 0;
    bool first = true;
    for (uint32_t i = 0; rc == NM_OK && i < z.ni; i++) {
        for (int a = 0; a < 3; a++)
            if (!quantise(z.in[i].t[a], W_POS_EXP, &z.pos[3 * (size_t)i + a]) ||
                fabs((double)z.pos[3 * (size_t)i + a]) > k_int_limit / 4)
                rc = ARG("instance %u: position out of range", z.in[i].order);
        if (rc == NM_OK && (first || z.pos[3 * (size_t)i] < ox)) ox = z.pos[3 * (size_t)i];
        if (rc == NM_OK && (first || z.pos[3 * (size_t)i + 2] < oz)) oz = z.pos[3 * (size_t)i + 2];
        first = false;
    }
    if (tr && rc == NM_OK) {
        uint32_t nbu = (tr->nx - 2) / (bn - 1) + 1;
        for (uint32_t b = 0; b < z.nb && rc == NM_OK; b++) {
            double x = tr->x0 + (double)((b % nbu) * (bn - 1)) * tr->spacing;
            double zz = tr->z0 + (double)((b / nbu) * (bn - 1)) * tr->spacing;
            if (!quantise(x, W_POS_EXP, &z.bpos[2 * (size_t)b]) ||
                !quantise(zz, W_POS_EXP, &z.bpos[2 * (size_t)b + 1]) ||
                fabs((double)z.bpos[2 * (size_t)b]) > k_int_limit / 4 ||
                fabs((double)z.bpos[2 * (size_t)b + 1]) > k_int_limit / 4) {
                rc = ARG("terrain: block %u position out of range", b);
                break;
            }
            if (first || z.bpos[2 * (size_t)b] < ox) ox = z.bpos[2 * (size_t)b];
            if (first || z.bpos[2 * (size_t)b + 1] < oz) oz = z.bpos[2 * (size_t)b + 1];
            first = false;
        }
    }

    for (uint32_t i = 0; rc == NM_OK && i < z.nt; i++)
        rc = encode_template(&z.tm[i], i, &z.st[0], &z.st[1], &z.st[2], err);
    if (rc == NM_OK) rc = encode_instances(&z, ox, oz, err);
    if (rc == NM_OK && tr) rc = encode_terrain(&z, tr, pos_q, ox, oz, bn, hexp, err);
    for (int i = 0; rc == NM_OK && i < NM_OCC_kStreamCount; i++) {
        if (z.st[i].oom) rc = nm_fail(err, NM_ERR_NOMEM, "stream %d: out of memory", i);
        else if (z.st[i].size > UINT32_MAX) rc = ARG("stream %d: more than 4 GiB", i);
    }
    if (rc == NM_OK) {
        nm_buf_bytes(out, "OCLZ", 4);
        nm_buf_u32(out, NM_OCC_kSceneVersion);
        nm_buf_u32(out, z.nt);
        nm_buf_u32(out, z.ni);
        nm_buf_u32(out, z.nb);
        nm_buf_u32(out, tr ? bn : 0);
        nm_buf_f64(out, pos_q);
        nm_buf_f64(out, tr ? tr->spacing : 1.0);
        nm_buf_f64(out, 0.0);
        nm_buf_f64(out, hstep);
        nm_buf_u32(out, W_ROT_SCALE);
        nm_buf_u32(out, W_SCALE_SHIFT);
        nm_buf_i64(out, ox);
        nm_buf_i64(out, oz);
        for (int i = 0; i < NM_OCC_kStreamCount; i++) {
            nm_buf_u32(out, (uint32_t)z.st[i].size);
            nm_buf_bytes(out, z.st[i].p, z.st[i].size);
        }
    }
    zone_free(&z);
    return rc;
}

int nm_occ_encode(const nm_occ_zone_in *zones, size_t zone_count, nm_buf *out, nm_error *err)
{
    if (zone_count > UINT32_MAX) return ARG("too many zones");
    nm_buf_bytes(out, "OCLS", 4);
    nm_buf_u32(out, NM_OCC_kContainerVersion);
    nm_buf_u32(out, (uint32_t)zone_count);
    for (size_t i = 0; i < zone_count; i++) {
        const nm_occ_zone_in *zi = &zones[i];
        size_t nl = zi->name ? strlen(zi->name) : 0;
        if (!zi->name || nl > UINT16_MAX) return ARG("zone %zu: missing or overlong name", i);
        nm_buf_u16(out, (uint16_t)nl);
        nm_buf_bytes(out, zi->name, nl);
        size_t at = out->size;
        nm_buf_u32(out, 0);
        double **scratch = (double **)nm_calloc(zi->group_count ? zi->group_count : 1, sizeof *scratch);
        if (!scratch) return nm_fail(err, NM_ERR_NOMEM, "zone '%s': out of memory", zi->name);
        int rc = encode_zone(zi, out, scratch, err);
        for (uint32_t g = 0; g < zi->group_count; g++) nm_free(scratch[g]);
        nm_free(scratch);
        if (rc != NM_OK) {
            nm_error_prefix(err, "zone '%s'", zi->name);
            return rc;
        }
        if (out->oom) return nm_fail(err, NM_ERR_NOMEM, "zone '%s': out of memory", zi->name);
        size_t body = out->size - at - 4;
        if (body > UINT32_MAX) return ARG("zone '%s': body over 4 GiB", zi->name);
        nm_buf_put_u32(out, at, (uint32_t)body);
    }
    return out->oom ? nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory") : NM_OK;
}

int nm_occ_write(const char *path, const nm_occ_zone_in *zones, size_t zone_count, nm_error *err)
{
    nm_buf b = {0};
    int rc = nm_occ_encode(zones, zone_count, &b, err);
    if (rc == NM_OK) rc = nm_file_write(path, b.p, b.size, err);
    nm_buf_free(&b);
    return rc;
}
