/* occ_read.c — the OccluderPack reader: the OCLS container (only the requested zone decoded, the
 * last record of a name wins, the container used up exactly), the OCLZ header and its 12 raw
 * streams (templates, instances, terrain blocks), every scene check of the reference readers, and
 * the placement of instances and blocks ready for the box trees. Every byte goes through nm_cursor;
 * every count is bounded by the bytes that must carry it before anything is allocated. */
#include "occ_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum {
    S_TEMPLATE, S_VERTEX, S_INDEX, S_INST_COUNT, S_POSITION, S_ROT_CODE, S_ROTATION, S_SCALE,
    S_MATRIX, S_BLOCK, S_HEIGHT, S_HOLE
};
static const char *const k_stream_name[NM_OCC_kStreamCount] = {
    "template", "vertex", "index", "instance count", "position", "rotation code", "rotation",
    "scale", "matrix", "block", "height", "hole"};

#define CORRUPT(...) nm_fail(err, NM_ERR_CORRUPT, __VA_ARGS__)
#define NOMEM(what) nm_fail(err, NM_ERR_NOMEM, "out of memory for %s", what)

static int stream_bad(const nm_cursor *c, int s, nm_error *err)
{
    return c->bad ? CORRUPT("stream %d (%s): truncated or overlong varint", s, k_stream_name[s])
                  : NM_OK;
}

static int stream_done(const nm_cursor *c, int s, nm_error *err)
{
    if (c->bad) return stream_bad(c, s, err);
    if (nm_cur_left(c) != 0)
        return CORRUPT("stream %d (%s): %zu bytes left over", s, k_stream_name[s], nm_cur_left(c));
    return NM_OK;
}

/* ---- templates: counts and exponent, axis-major vertex deltas, corner back-references -------- */
static int decode_templates(nm_occ_scene *s, nm_cursor *st, nm_error *err)
{
    nm_cursor *ct = &st[S_TEMPLATE], *cv = &st[S_VERTEX], *ci = &st[S_INDEX];
    if (s->template_count > nm_cur_left(ct) / 3)
        return CORRUPT("stream 0 (template): %u templates need at least %llu bytes, stream has %zu",
                       s->template_count, 3ull * s->template_count, nm_cur_left(ct));
    s->templates = (occ_template *)nm_calloc(s->template_count ? s->template_count : 1,
                                             sizeof *s->templates);
    int *expo = (int *)nm_calloc(s->template_count ? s->template_count : 1, sizeof *expo);
    if (!s->templates || !expo) {
        nm_free(expo);
        return NOMEM("templates");
    }
    /* Each vertex takes >= 3 vertex-stream bytes and each triangle >= 3 index-stream bytes. */
    uint64_t vmax = nm_cur_left(cv) / 3, tmax = nm_cur_left(ci) / 3, vsum = 0, tsum = 0;
    int rc = NM_OK;
    for (uint32_t i = 0; i < s->template_count && rc == NM_OK; i++) {
        uint64_t nv = nm_cur_varint(ct), nt = nm_cur_varint(ct);
        int64_t e = nm_unzig(nm_cur_varint(ct));
        if (ct->bad) rc = stream_bad(ct, S_TEMPLATE, err);
        else if (e < -NM_OCC_kExponentMax || e > NM_OCC_kExponentMax)
            rc = CORRUPT("stream 0 (template): template %u: exponent %lld outside [-60, 60]", i,
                         (long long)e);
        else if (nv > vmax - vsum)
            rc = CORRUPT("stream 1 (vertex): template %u: %llu vertices exceed the stream's bytes",
                         i, (unsigned long long)nv);
        else if (nt > tmax - tsum)
            rc = CORRUPT("stream 2 (index): template %u: %llu triangles exceed the stream's bytes",
                         i, (unsigned long long)nt);
        else {
            occ_template *t = &s->templates[i];
            t->nv = (uint32_t)nv;
            t->nt = (uint32_t)nt;
            t->voff = (size_t)vsum;
            t->toff = (size_t)tsum;
            expo[i] = (int)e;
            vsum += nv;
            tsum += nt;
        }
    }
    if (rc == NM_OK) rc = stream_done(ct, S_TEMPLATE, err);
    if (rc == NM_OK) {
        s->verts = (double *)nm_calloc(vsum ? 3 * (size_t)vsum : 1, sizeof *s->verts);
        s->idx = (uint32_t *)nm_calloc(tsum ? 3 * (size_t)tsum : 1, sizeof *s->idx);
        if (!s->verts || !s->idx) rc = NOMEM("template vertices");
    }
    for (uint32_t i = 0; i < s->template_count && rc == NM_OK; i++) {
        occ_template *t = &s->templates[i];
        double *v = s->verts + 3 * t->voff;
        for (int a = 0; a < 3; a++) {
            uint64_t acc = 0; /* deltas wrap like the two's-complement integers they are */
            t->lo[a] = INFINITY;
            t->hi[a] = -INFINITY;
            for (uint32_t k = 0; k < t->nv; k++) {
                acc += (uint64_t)nm_unzig(nm_cur_varint(cv));
                double x = ldexp((double)(int64_t)acc, expo[i]);
                v[3 * k + a] = x;
                if (x < t->lo[a]) t->lo[a] = x;
                if (x > t->hi[a]) t->hi[a] = x;
            }
        }
        if (cv->bad) {
            rc = CORRUPT("stream 1 (vertex): template %u: truncated or overlong varint", i);
            break;
        }
        uint32_t *ix = s->idx + 3 * t->toff;
        uint64_t next = 0;
        for (uint64_t k = 0; k < 3 * (uint64_t)t->nt && rc == NM_OK; k++) {
            uint64_t b = nm_cur_varint(ci);
            if (ci->bad) rc = CORRUPT("stream 2 (index): template %u: truncated or overlong varint", i);
            else if (b > next)
                rc = CORRUPT("stream 2 (index): template %u: corner %llu refers back %llu of %llu "
                             "vertices", i, (unsigned long long)k, (unsigned long long)b,
                             (unsigned long long)next);
            else if (b == 0) {
                if (next >= t->nv)
                    rc = CORRUPT("stream 2 (index): template %u: corner %llu introduces vertex %llu "
                                 "of %u", i, (unsigned long long)k, (unsigned long long)next, t->nv);
                else
                    ix[k] = (uint32_t)next++;
            } else
                ix[k] = (uint32_t)(next - b);
        }
        if (rc == NM_OK && next != t->nv)
            rc = CORRUPT("stream 2 (index): template %u: corners introduce %llu vertices, header "
                         "says %u", i, (unsigned long long)next, t->nv);
    }
    nm_free(expo);
    if (rc == NM_OK) rc = stream_done(cv, S_VERTEX, err);
    if (rc == NM_OK) rc = stream_done(ci, S_INDEX, err);
    return rc;
}

/* ---- instances: counts per template, positions, smallest-three rotations, scales, matrices ---- */
static void quat_matrix(const double q[4], double R[9])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y - z * w);
    R[2] = 2 * (x * z + y * w);
    R[3] = 2 * (x * y + z * w);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z - x * w);
    R[6] = 2 * (x * z - y * w);
    R[7] = 2 * (y * z + x * w);
    R[8] = 1 - 2 * (x * x + y * y);
}

/* Inverse by the adjugate; false when the matrix is singular or anything is non-finite
 * (such placements are put into world space before intersecting). */
static bool invert3(const double m[9], double inv[9], double *det_out)
{
    double c0 = m[4] * m[8] - m[5] * m[7];
    double c1 = m[5] * m[6] - m[3] * m[8];
    double c2 = m[3] * m[7] - m[4] * m[6];
    double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
    *det_out = det;
    if (det == 0.0 || !isfinite(det)) return false;
    double r = 1.0 / det;
    inv[0] = c0 * r;
    inv[1] = (m[2] * m[7] - m[1] * m[8]) * r;
    inv[2] = (m[1] * m[5] - m[2] * m[4]) * r;
    inv[3] = c1 * r;
    inv[4] = (m[0] * m[8] - m[2] * m[6]) * r;
    inv[5] = (m[2] * m[3] - m[0] * m[5]) * r;
    inv[6] = c2 * r;
    inv[7] = (m[1] * m[6] - m[0] * m[7]) * r;
    inv[8] = (m[0] * m[4] - m[1] * m[3]) * r;
    for (int i = 0; i < 9; i++)
        if (!isfinite(inv[i]) || !isfinite(m[i])) return false;
    return true;
}

static int decode_instances(nm_occ_scene *s, nm_cursor *st, nm_error *err)
{
    nm_cursor *cn = &st[S_INST_COUNT], *cp = &st[S_POSITION], *cc = &st[S_ROT_CODE],
              *cr = &st[S_ROTATION], *cs = &st[S_SCALE], *cm = &st[S_MATRIX];
    uint32_t n = s->instance_count;
    if (nm_cur_left(cc) != n)
        return CORRUPT("stream 5 (rotation code): %zu bytes for %u instances", nm_cur_left(cc), n);
    s->instances = (occ_instance *)nm_calloc(n ? n : 1, sizeof *s->instances);
    if (!s->instances) return NOMEM("instances");

    /* Instances come grouped by template, in template order. */
    uint64_t got = 0;
    for (uint32_t i = 0; i < s->template_count; i++) {
        uint64_t k = nm_cur_varint(cn);
        if (cn->bad) return stream_bad(cn, S_INST_COUNT, err);
        if (k > n - got)
            return CORRUPT("stream 3 (instance count): template %u: %llu instances overrun the "
                           "header's %u", i, (unsigned long long)k, n);
        for (uint64_t j = 0; j < k; j++) s->instances[got + j].tmpl = i;
        got += k;
    }
    if (got != n)
        return CORRUPT("stream 3 (instance count): counts add up to %llu, header says %u",
                       (unsigned long long)got, n);
    int rc = stream_done(cn, S_INST_COUNT, err);
    if (rc) return rc;

    /* Positions: axis-major zigzag deltas from 0, plus the header origin (y origin 0). */
    int64_t origin[3] = {s->origin_x, 0, s->origin_z};
    for (int a = 0; a < 3; a++) {
        uint64_t acc = 0;
        for (uint32_t i = 0; i < n; i++) {
            acc += (uint64_t)nm_unzig(nm_cur_varint(cp));
            s->instances[i].t[a] = (double)(int64_t)(acc + (uint64_t)origin[a]) * s->pos_q;
        }
    }
    if ((rc = stream_done(cp, S_POSITION, err))) return rc;

    uint32_t quats = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t code = nm_cur_u8(cc);
        if (code > 4) return CORRUPT("stream 5 (rotation code): instance %u: code %u > 4", i, code);
        s->instances[i].code = code;
        if (code < 4) quats++;
    }
    if ((rc = stream_done(cc, S_ROT_CODE, err))) return rc;

    /* The three small components, component-major over the quaternion instances. */
    double *comp = (double *)nm_calloc(3 * (size_t)(quats ? quats : 1), sizeof *comp);
    if (!comp) return NOMEM("rotations");
    const double inv_sqrt2 = 0.70710678118654752440;
    for (int j = 0; j < 3 && rc == NM_OK; j++)
        for (uint32_t q = 0; q < quats && rc == NM_OK; q++) {
            int64_t r = nm_unzig(nm_cur_varint(cr));
            if (cr->bad) rc = stream_bad(cr, S_ROTATION, err);
            else if (r > (int64_t)s->rot_scale || r < -(int64_t)s->rot_scale)
                rc = CORRUPT("stream 6 (rotation): quaternion instance %u component %d: |%lld| > "
                             "rot_scale %u", q, j, (long long)r, s->rot_scale);
            else
                comp[3 * (size_t)q + j] = ((double)r / (double)s->rot_scale) * inv_sqrt2;
        }
    if (rc == NM_OK) rc = stream_done(cr, S_ROTATION, err);

    /* Scale palette: size, zigzag triples, then one index per quaternion instance. */
    double *pal = NULL;
    uint64_t np = 0;
    if (rc == NM_OK) {
        np = nm_cur_varint(cs);
        if (cs->bad) rc = stream_bad(cs, S_SCALE, err);
        else if (np > nm_cur_left(cs) / 3)
            rc = CORRUPT("stream 7 (scale): palette of %llu triples exceeds the stream's bytes",
                         (unsigned long long)np);
        else if (!(pal = (double *)nm_calloc(3 * (size_t)(np ? np : 1), sizeof *pal)))
            rc = NOMEM("scale palette");
        for (uint64_t k = 0; rc == NM_OK && k < 3 * np; k++)
            pal[k] = ldexp((double)nm_unzig(nm_cur_varint(cs)), -(int)s->scale_shift);
        if (rc == NM_OK && cs->bad) rc = stream_bad(cs, S_SCALE, err);
    }
    uint32_t q = 0;
    for (uint32_t i = 0; i < n && rc == NM_OK; i++) {
        occ_instance *in = &s->instances[i];
        if (in->code < 4) {
            uint64_t k = nm_cur_varint(cs);
            if (cs->bad) {
                rc = stream_bad(cs, S_SCALE, err);
                break;
            }
            if (k >= np) {
                rc = CORRUPT("stream 7 (scale): instance %u: scale index %llu >= palette size %llu",
                             i, (unsigned long long)k, (unsigned long long)np);
                break;
            }
            double quat[4], sum = 0.0, R[9];
            int c = 0;
            for (int j = 0; j < 4; j++) {
                if (j == in->code) continue;
                quat[j] = comp[3 * (size_t)q + c++];
                sum += quat[j] * quat[j];
            }
            quat[in->code] = sqrt(1.0 - sum > 0.0 ? 1.0 - sum : 0.0);
            quat_matrix(quat, R);
            const double *sc = pal + 3 * k;
            for (int r = 0; r < 3; r++)
                for (int col = 0; col < 3; col++) in->A[3 * r + col] = R[3 * r + col] * sc[col];
            q++;
        } else {
            for (int j = 0; j < 9; j++) in->A[j] = (double)nm_cur_f32(cm);
            if (cm->bad) {
                rc = CORRUPT("stream 8 (matrix): instance %u: truncated", i);
                break;
            }
        }
        double det;
        in->local = invert3(in->A, in->Ainv, &det);
        in->sgn = det < 0.0 ? -1 : 1;
    }
    nm_free(comp);
    nm_free(pal);
    if (rc == NM_OK) rc = stream_done(cs, S_SCALE, err);
    if (rc == NM_OK) rc = stream_done(cm, S_MATRIX, err);
    return rc;
}

/* ---- terrain blocks: origins, plane-predicted heights, hole bitmaps -------------------------- */
static int decode_blocks(nm_occ_scene *s, nm_cursor *st, nm_error *err)
{
    nm_cursor *cb = &st[S_BLOCK], *ch = &st[S_HEIGHT], *co = &st[S_HOLE];
    uint32_t nb = s->block_count, n = s->block_n;
    if (nb > nm_cur_left(cb) / 3)
        return CORRUPT("stream 9 (block): %u blocks need at least %llu bytes, stream has %zu", nb,
                       3ull * nb, nm_cur_left(cb));
    int rc = NM_OK;
    if (nb > 0) {
        if (n < 2) return CORRUPT("header: block_n %u < 2 with %u blocks", n, nb);
        if ((uint64_t)n * n > nm_cur_left(ch) / nb)
            return CORRUPT("stream 10 (height): block_n² = %llu exceeds %zu bytes / %u blocks",
                           (unsigned long long)n * n, nm_cur_left(ch), nb);
    }
    s->blocks = (occ_block *)nm_calloc(nb ? nb : 1, sizeof *s->blocks);
    if (!s->blocks) return NOMEM("blocks");
    size_t nn = (size_t)n * n, cells = nb ? (size_t)(n - 1) * (n - 1) : 0, hole_bytes = (cells + 7) / 8;
    s->heights = (int32_t *)nm_calloc(nb ? nb * nn : 1, sizeof *s->heights);
    if (!s->heights) return NOMEM("block heights");

    uint64_t ax = 0, az = 0;
    size_t holed = 0;
    for (uint32_t b = 0; b < nb; b++) {
        occ_block *bk = &s->blocks[b];
        ax += (uint64_t)nm_unzig(nm_cur_varint(cb));
        az += (uint64_t)nm_unzig(nm_cur_varint(cb));
        uint8_t flag = nm_cur_u8(cb);
        if (cb->bad) return stream_bad(cb, S_BLOCK, err);
        if (flag > 1) return CORRUPT("stream 9 (block): block %u: hole flag %u > 1", b, flag);
        bk->x0 = (double)(int64_t)(ax + (uint64_t)s->origin_x) * s->pos_q;
        bk->z0 = (double)(int64_t)(az + (uint64_t)s->origin_z) * s->pos_q;
        bk->hoff = b * nn;
        bk->holeoff = flag ? holed++ * hole_bytes : SIZE_MAX;
    }
    if ((rc = stream_done(cb, S_BLOCK, err))) return rc;

    int64_t first = 0;
    for (uint32_t b = 0; b < nb; b++) {
        int32_t *k = s->heights + s->blocks[b].hoff;
        for (uint32_t v = 0; v < n; v++)
            for (uint32_t u = 0; u < n; u++) {
                int64_t pred;
                if (u > 0 && v > 0)
                    pred = (int64_t)k[v * n + u - 1] + k[(v - 1) * n + u] - k[(v - 1) * n + u - 1];
                else if (u > 0) pred = k[u - 1];
                else if (v > 0) pred = k[(v - 1) * n];
                else pred = first;
                int64_t r = nm_unzig(nm_cur_varint(ch));
                if (ch->bad) return CORRUPT("stream 10 (height): block %u: truncated or overlong", b);
                /* pred is within ±3·2^31, so only a huge residual can overflow: check it first. */
                if (r > (int64_t)1 << 40 || r < -((int64_t)1 << 40) || pred + r > INT32_MAX ||
                    pred + r < INT32_MIN)
                    return CORRUPT("stream 10 (height): block %u sample (%u, %u): height does not "
                                   "fit in int32", b, u, v);
                k[v * n + u] = (int32_t)(pred + r);
            }
        first = k[0];
    }
    if ((rc = stream_done(ch, S_HEIGHT, err))) return rc;

    if (holed > 0) {
        if (holed * hole_bytes != nm_cur_left(co))
            return CORRUPT("stream 11 (hole): %zu bytes for %zu holed blocks of %zu bytes",
                           nm_cur_left(co), holed, hole_bytes);
        s->holes = (uint8_t *)nm_malloc(holed * hole_bytes);
        if (!s->holes) return NOMEM("hole bitmaps");
        const uint8_t *p = nm_cur_bytes(co, holed * hole_bytes);
        if (!p) return stream_bad(co, S_HOLE, err);
        memcpy(s->holes, p, holed * hole_bytes);
    }
    return stream_done(co, S_HOLE, err);
}

/* ---- placement and trees -------------------------------------------------------------------- */
static int build_trees(nm_occ_scene *s, nm_error *err)
{
    int rc = NM_OK;
    double *boxes = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < s->template_count && rc == NM_OK; i++) {
        occ_template *t = &s->templates[i];
        if (t->nt <= NM_OCC_kTreeMinTriangles) continue;
        if (t->nt > cap) {
            nm_free(boxes);
            cap = t->nt;
            boxes = (double *)nm_calloc(6 * cap, sizeof *boxes);
            if (!boxes) return NOMEM("triangle boxes");
        }
        const double *v = s->verts + 3 * t->voff;
        const uint32_t *ix = s->idx + 3 * t->toff;
        for (uint32_t k = 0; k < t->nt; k++) {
            double *b = boxes + 6 * (size_t)k;
            for (int a = 0; a < 3; a++) {
                double x0 = v[3 * ix[3 * k] + a], x1 = v[3 * ix[3 * k + 1] + a],
                       x2 = v[3 * ix[3 * k + 2] + a];
                double lo = x0 < x1 ? x0 : x1, hi = x0 < x1 ? x1 : x0;
                if (x2 < lo) lo = x2;
                if (x2 > hi) hi = x2;
                b[a] = lo - NM_OCC_kTriangleBoxPad;
                b[3 + a] = hi + NM_OCC_kTriangleBoxPad;
            }
        }
        rc = occ_tree_build(&t->tree, boxes, t->nt, err);
        t->has_tree = rc == NM_OK;
    }
    nm_free(boxes);
    if (rc) return rc;

    boxes = (double *)nm_calloc(6 * (size_t)(s->instance_count ? s->instance_count : 1), sizeof *boxes);
    if (!boxes) return NOMEM("instance boxes");
    for (uint32_t i = 0; i < s->instance_count; i++) {
        occ_instance *in = &s->instances[i];
        const occ_template *t = &s->templates[in->tmpl];
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        if (t->nv > 0) {
            /* Placed corners of the template's box: a box that holds every placed vertex. */
            for (int corner = 0; corner < 8; corner++) {
                double p[3] = {corner & 1 ? t->hi[0] : t->lo[0], corner & 2 ? t->hi[1] : t->lo[1],
                               corner & 4 ? t->hi[2] : t->lo[2]};
                for (int r = 0; r < 3; r++) {
                    double w = in->A[3 * r] * p[0] + in->A[3 * r + 1] * p[1] +
                               in->A[3 * r + 2] * p[2] + in->t[r];
                    if (isnan(w)) {
                        lo[r] = -INFINITY;
                        hi[r] = INFINITY;
                    }
                    if (w < lo[r]) lo[r] = w;
                    if (w > hi[r]) hi[r] = w;
                }
            }
            /* Rounding of the products: widen by a relative hair, then round outward to float. */
            for (int r = 0; r < 3; r++) {
                double m = fabs(lo[r]) > fabs(hi[r]) ? fabs(lo[r]) : fabs(hi[r]);
                double pad = NM_OCC_kTriangleBoxPad + m * 1e-12;
                if (isfinite(pad)) {
                    lo[r] -= pad;
                    hi[r] += pad;
                } else {
                    lo[r] = -INFINITY;
                    hi[r] = INFINITY;
                }
            }
        }
        for (int r = 0; r < 3; r++) {
            in->lo[r] = occ_down(lo[r]);
            in->hi[r] = occ_up(hi[r]);
            boxes[6 * (size_t)i + r] = lo[r];
            boxes[6 * (size_t)i + 3 + r] = hi[r];
        }
    }
    rc = occ_tree_build(&s->inst_tree, boxes, s->instance_count, err);
    nm_free(boxes);
    if (rc) return rc;

    /* Terrain blocks are scanned linearly; each keeps its box. */
    uint32_t n = s->block_n;
    for (uint32_t b = 0; b < s->block_count; b++) {
        occ_block *bk = &s->blocks[b];
        int32_t kmin = INT32_MAX, kmax = INT32_MIN;
        const int32_t *k = s->heights + bk->hoff;
        for (size_t j = 0; j < (size_t)n * n; j++) {
            if (k[j] < kmin) kmin = k[j];
            if (k[j] > kmax) kmax = k[j];
        }
        double y0 = s->lat_a + s->lat_b * kmin, y1 = s->lat_a + s->lat_b * kmax;
        double x1 = bk->x0 + (double)(n - 1) * s->cell, z1 = bk->z0 + (double)(n - 1) * s->cell;
        double lo[3] = {bk->x0, y0 < y1 ? y0 : y1, bk->z0}, hi[3] = {x1, y0 < y1 ? y1 : y0, z1};
        for (int r = 0; r < 3; r++) {
            double m = fabs(lo[r]) > fabs(hi[r]) ? fabs(lo[r]) : fabs(hi[r]);
            bk->lo[r] = occ_down(lo[r] - m * 1e-12);
            bk->hi[r] = occ_up(hi[r] + m * 1e-12);
        }
    }
    for (uint32_t i = 0; i < s->instance_count; i++)
        s->triangles += s->templates[s->instances[i].tmpl].nt;
    for (uint32_t b = 0; b < s->block_count; b++)
        for (uint32_t v = 0; v + 1 < n; v++)
            for (uint32_t u = 0; u + 1 < n; u++)
                if (!occ_block_hole(s, &s->blocks[b], u, v)) s->triangles += 2;
    return NM_OK;
}

/* ---- one OCLZ body ----------------------------------------------------------------------------- */
static int decode_scene(nm_cursor *body, nm_occ_scene *s, nm_error *err)
{
    const uint8_t *magic = nm_cur_bytes(body, 4);
    uint32_t version = nm_cur_u32(body);
    s->template_count = nm_cur_u32(body);
    s->instance_count = nm_cur_u32(body);
    s->block_count = nm_cur_u32(body);
    s->block_n = nm_cur_u32(body);
    s->pos_q = nm_cur_f64(body);
    s->cell = nm_cur_f64(body);
    s->lat_a = nm_cur_f64(body);
    s->lat_b = nm_cur_f64(body);
    s->rot_scale = nm_cur_u32(body);
    s->scale_shift = nm_cur_u32(body);
    s->origin_x = nm_cur_i64(body);
    s->origin_z = nm_cur_i64(body);
    if (body->bad) return CORRUPT("header: %zu bytes, need %d", body->size, NM_OCC_kSceneHeader);
    if (memcmp(magic, "OCLZ", 4) != 0) return CORRUPT("header: magic is not \"OCLZ\"");
    if (version != NM_OCC_kSceneVersion) return CORRUPT("header: version %u, expected 1", version);
    if (!(s->cell > 0.0) || !isfinite(s->cell))
        return CORRUPT("header: terrain cell %g is not a positive number", s->cell);
    if (!isfinite(s->pos_q) || ((s->instance_count || s->block_count) && !(s->pos_q > 0.0)))
        return CORRUPT("header: position step %g is not a positive number", s->pos_q);
    if (!isfinite(s->lat_a) || !isfinite(s->lat_b))
        return CORRUPT("header: height coefficients %g, %g are not finite", s->lat_a, s->lat_b);
    if (s->rot_scale == 0) return CORRUPT("header: rot_scale is 0");
    if (s->scale_shift > NM_OCC_kScaleShiftMax)
        return CORRUPT("header: scale_shift %u > 52", s->scale_shift);

    nm_cursor st[NM_OCC_kStreamCount];
    for (int i = 0; i < NM_OCC_kStreamCount; i++) {
        uint32_t len = nm_cur_u32(body);
        st[i] = nm_cur_sub(body, len);
        if (body->bad || st[i].bad)
            return CORRUPT("stream %d (%s): length %u runs past the body (%zu bytes left)", i,
                           k_stream_name[i], len, nm_cur_left(body));
    }
    if (nm_cur_left(body) != 0)
        return CORRUPT("%zu bytes after the 12th stream", nm_cur_left(body));

    int rc = decode_templates(s, st, err);
    if (rc == NM_OK) rc = decode_instances(s, st, err);
    if (rc == NM_OK) rc = decode_blocks(s, st, err);
    if (rc == NM_OK) rc = build_trees(s, err);
    return rc;
}

void nm_occ_free(nm_occ_scene *s)
{
    if (!s) return;
    if (s->templates)
        for (uint32_t i = 0; i < s->template_count; i++) occ_tree_free(&s->templates[i].tree);
    occ_tree_free(&s->inst_tree);
    nm_free(s->templates);
    nm_free(s->instances);
    nm_free(s->blocks);
    nm_free(s->verts);
    nm_free(s->idx);
    nm_free(s->heights);
    nm_free(s->holes);
    nm_free(s);
}

/* ---- OCLS container ------------------------------------------------------------------------------ */
int nm_occ_load_bytes(const void *data, size_t size, const char *zone, const char *what,
                      nm_occ_scene **out, nm_error *err)
{
    *out = NULL;
    if (!what) what = "occluder";
    if (!zone) return nm_fail(err, NM_ERR_ARG, "%s: no zone name", what);
    if (!data && size) return nm_fail(err, NM_ERR_ARG, "%s: no bytes", what);
    size_t zlen = strlen(zone);
    nm_cursor c = nm_cur(data, size);
    const uint8_t *magic = nm_cur_bytes(&c, 4);
    uint32_t version = nm_cur_u32(&c), count = nm_cur_u32(&c);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "%s: OCLS: %zu bytes, header needs 12", what, size);
    if (memcmp(magic, "OCLS", 4) != 0)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: OCLS: magic is not \"OCLS\"", what);
    if (version != NM_OCC_kContainerVersion)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: OCLS: version %u, expected 1", what, version);

    /* Every record is walked (the container must be used up exactly); the last match wins. */
    nm_cursor found = {0};
    bool have = false;
    uint32_t found_at = 0;
    for (uint32_t r = 0; r < count; r++) {
        uint16_t nl = nm_cur_u16(&c);
        const uint8_t *name = nm_cur_bytes(&c, nl);
        uint32_t len = nm_cur_u32(&c);
        nm_cursor body = nm_cur_sub(&c, len);
        if (c.bad || body.bad)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: OCLS: record %u of %u runs past the end", what,
                           r, count);
        if (nl == zlen && (zlen == 0 || memcmp(name, zone, zlen) == 0)) {
            found = body;
            have = true;
            found_at = r;
        }
    }
    if (nm_cur_left(&c) != 0)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: OCLS: %zu bytes after record %u", what,
                       nm_cur_left(&c), count);
    if (!have) return NM_OK;

    nm_occ_scene *s = (nm_occ_scene *)nm_calloc(1, sizeof *s);
    if (!s) return nm_fail(err, NM_ERR_NOMEM, "%s: zone '%s': out of memory", what, zone);
    int rc = decode_scene(&found, s, err);
    if (rc != NM_OK) {
        nm_error_prefix(err, "%s: OCLS record %u: zone '%s': OCLZ", what, found_at, zone);
        nm_occ_free(s);
        return rc;
    }
    *out = s;
    return NM_OK;
}

int nm_occ_load(const char *path, const char *zone, nm_occ_scene **out, nm_error *err)
{
    *out = NULL;
    uint8_t *data = NULL;
    size_t size = 0;
    int rc = nm_file_read(path, 0, &data, &size, err);
    if (rc != NM_OK) return rc;
    rc = nm_occ_load_bytes(data, size, zone, path, out, err);
    nm_free(data);
    return rc;
}

void nm_occ_scene_info(const nm_occ_scene *s, nm_occ_info *info)
{
    memset(info, 0, sizeof *info);
    if (!s) return;
    info->templates = s->template_count;
    info->instances = s->instance_count;
    info->blocks = s->block_count;
    info->block_n = s->block_n;
    info->triangles = s->triangles;
    size_t placed = 0;
    for (uint32_t i = 0; i < s->instance_count; i++) {
        if (!s->instances[i].local) info->world_instances++;
        placed += s->templates[s->instances[i].tmpl].nt;
    }
    info->terrain_triangles = s->triangles - placed;
    for (uint32_t i = 0; i < s->template_count; i++)
        if (s->templates[i].has_tree) info->template_trees++;
}
