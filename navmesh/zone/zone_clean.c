/* zone_clean.c — builds the ZoneClean of one geometry zone (design article 网格清洗): walkable
 * flags from BSRF, the planner's link table (isTraversableLink, natural-neighbour bits plus a
 * sorted bridge table), borrowed or welded vertices, CCW triangles, slot buckets with reverse and
 * duplicate edges, the three cut rules, union-find components, island flags, boundary bits, and
 * the 24 px triangle buckets used by snapping. Temporary adjacency is freed before returning. */
#include "zone.h"
#include "zone_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
#define SLOT_CHUNK 16384u   /* slots per parallel chunk; fixed so results ignore worker count */
#define MAX_ABS_PX 1.0e7    /* coordinates beyond this are corrupt (maps are < 1e5 px) */
#define MAX_GRID_CELLS (1u << 26)

typedef struct build {
    const nm_pack *p;
    nm_zone_clean *zc;
    const char *zname;
    uint32_t n, lo;
    /* slot buckets by start vertex (vertex - vmin) */
    uint32_t vmin, nv;
    uint32_t *vstart, *vslots;
    uint32_t *rev;      /* reverse slot, then (rule 1) neighbour triangle or NONE32 */
    uint8_t *dup;
    int32_t *nb;        /* neighbour triangle after rules 2 and 3, -1 = none */
    uint32_t *raw_size; /* size of each triangle's raw component */
} build;

/* ---- small helpers ---------------------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; /* path halving */
        i = parent[i];
    }
    return i;
}

/* Joins two sets so that the root stays the smallest index (article 分量与孤岛). */
static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    uint32_t ra = uf_find(parent, a), rb = uf_find(parent, b);
    if (ra == rb) return;
    if (ra < rb) parent[rb] = ra;
    else parent[ra] = rb;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static inline uint32_t slot_end(const uint32_t *tri_v, uint32_t s)
{
    uint32_t t = s / 3, k = s % 3;
    return tri_v[3 * t + (k + 1) % 3];
}

/* Squared distance from p to segment ab (2-D). */
static double point_seg_d2(double px, double py, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy, t = 0.0;
    if (l2 > 0.0) {
        t = ((px - ax) * dx + (py - ay) * dy) / l2;
        t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    }
    double qx = ax + t * dx - px, qy = ay + t * dy - py;
    return qx * qx + qy * qy;
}

static double orient(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* Closest distance between segments ab and cd in the plane: 0 when they properly cross, else
 * the smallest of the four endpoint-to-segment distances. */
static double seg_seg_dist(const nm_vertex *a, const nm_vertex *b, const nm_vertex *c,
                           const nm_vertex *d)
{
    double o1 = orient(a->u, a->v, b->u, b->v, c->u, c->v);
    double o2 = orient(a->u, a->v, b->u, b->v, d->u, d->v);
    double o3 = orient(c->u, c->v, d->u, d->v, a->u, a->v);
    double o4 = orient(c->u, c->v, d->u, d->v, b->u, b->v);
    if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0)))
        return 0.0;
    double m = point_seg_d2(a->u, a->v, c->u, c->v, d->u, d->v);
    double t = point_seg_d2(b->u, b->v, c->u, c->v, d->u, d->v);
    if (t < m) m = t;
    t = point_seg_d2(c->u, c->v, a->u, a->v, b->u, b->v);
    if (t < m) m = t;
    t = point_seg_d2(d->u, d->v, a->u, a->v, b->u, b->v);
    if (t < m) m = t;
    return sqrt(m);
}

/* closestEdgeBridgePoints: the closest pair over the 3 x 3 edge pairs of two pack triangles. */
static double tri_edge_gap(const nm_pack *p, uint32_t ta, uint32_t tb)
{
    const nm_tri *A = &p->tris[ta], *B = &p->tris[tb];
    double best = INFINITY;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = seg_seg_dist(&p->verts[A->v[i]], &p->verts[A->v[(i + 1) % 3]],
                                    &p->verts[B->v[j]], &p->verts[B->v[(j + 1) % 3]]);
            if (d < best) best = d;
        }
    return best;
}

static bool coord_ok(const nm_vertex *v)
{
    return isfinite(v->u) && isfinite(v->v) && isfinite(v->h) && fabs((double)v->u) <= MAX_ABS_PX &&
           fabs((double)v->v) <= MAX_ABS_PX;
}

/* ---- 可走标记: walkable flag per triangle, in place -------------------------------------------- */
static int mark_walkable(build *b, nm_error *err)
{
    const nm_pack *p = b->p;
    nm_zone_clean *zc = b->zc;
    size_t off = 0;
    bool have = p->surface_count > 0;
    if (have) {
        if (p->surface_count == p->tri_count) off = b->lo;
        else if (p->zone_scoped && (uint64_t)p->surface_count >= (uint64_t)p->tri_base + p->tri_count)
            off = (size_t)p->tri_base + b->lo; /* BSRF left whole by a zone-scoped load */
        else
            return nm_fail(err, NM_ERR_CORRUPT, "zone %s: BSRF has %u records for %u triangles",
                           b->zname, p->surface_count, p->tri_count);
    }
    uint32_t w = 0;
    for (uint32_t t = 0; t < b->n; t++) {
        bool ok = !have || (p->surfaces[off + t].flags & NM_kWalkableFlags) != 0;
        zc->tflags[t] = ok ? NM_ZT_WALKABLE : 0;
        w += ok;
    }
    zc->walkable_count = w;
    if (w == 0)
        return nm_fail(err, NM_ERR_STATE, "zone %s: all %u triangles are unwalkable", b->zname, b->n);
    return NM_OK;
}

/* ---- 原始分量: union-find over the pack's own neighbours, same zone only ------------------------ */
static int raw_components(build *b, nm_error *err)
{
    uint32_t n = b->n;
    uint32_t *parent = (uint32_t *)nm_calloc(n, sizeof *parent);
    b->raw_size = (uint32_t *)nm_calloc(n, sizeof *b->raw_size);
    if (!parent || !b->raw_size) {
        nm_free(parent);
        return nm_fail(err, NM_ERR_NOMEM, "zone %s: raw components: out of memory", b->zname);
    }
    for (uint32_t i = 0; i < n; i++) parent[i] = i;
    for (uint32_t i = 0; i < n; i++) {
        const nm_tri *t = &b->p->tris[b->lo + i];
        for (int k = 0; k < 3; k++) {
            int32_t g = t->nb[k];
            if (g < 0 || (uint32_t)g < b->lo || (uint32_t)g - b->lo >= n) continue;
            uf_union(parent, i, (uint32_t)g - b->lo);
        }
    }
    for (uint32_t i = 0; i < n; i++) parent[i] = uf_find(parent, i); /* now every entry is a root */
    for (uint32_t i = 0; i < n; i++) b->raw_size[parent[i]]++;
    for (uint32_t i = 0; i < n; i++) parent[i] = b->raw_size[parent[i]];
    /* parent now holds each triangle's raw component size; swap it in */
    nm_free(b->raw_size);
    b->raw_size = parent;
    return NM_OK;
}

/* ---- 连接表: the planner's link table, each link first passing isTraversableLink -------------- */
static int build_links(build *b, nm_error *err)
{
    const nm_pack *p = b->p;
    nm_zone_clean *zc = b->zc;
    uint64_t *tab = NULL;
    size_t cnt = 0, cap = 0;
    uint64_t hi = (uint64_t)b->lo + b->n;
    for (uint32_t l = 0; l < p->link_count; l++) {
        uint32_t s = p->links[l].src, d = p->links[l].dst;
        if (s < b->lo || s >= hi) continue;
        /* 1. different zones, or zone id 0: not traversable */
        if (d < b->lo || d >= hi || zc->zone_id == 0) continue;
        uint32_t sl = s - b->lo, dl = d - b->lo;
        /* 2. the target is the source's own neighbour: traversable, one bit on that slot */
        const nm_tri *st = &p->tris[s];
        int k = 0;
        while (k < 3 && !(st->nb[k] >= 0 && (uint32_t)st->nb[k] == d)) k++;
        if (k < 3) {
            zc->tflags[sl] |= (uint8_t)(1u << (NM_ZT_LINK_SHIFT + k));
            continue;
        }
        /* 3. the smaller raw component is big: traversable; 4. else the edges must be close */
        uint32_t small = b->raw_size[sl] < b->raw_size[dl] ? b->raw_size[sl] : b->raw_size[dl];
        if (small <= NM_kSmallComponentTris && !(tri_edge_gap(p, s, d) <= NM_kSmallBridgeMaxGap))
            continue;
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 64;
            uint64_t *nt = (uint64_t *)nm_realloc(tab, nc * sizeof *tab);
            if (!nt) {
                nm_free(tab);
                return nm_fail(err, NM_ERR_NOMEM, "zone %s: link table: out of memory", b->zname);
            }
            tab = nt;
            cap = nc;
        }
        tab[cnt++] = (uint64_t)sl << 32 | dl;
    }
    if (cnt > 1) qsort(tab, cnt, sizeof *tab, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < cnt; i++)
        if (u == 0 || tab[u - 1] != tab[i]) tab[u++] = tab[i];
    zc->bridge_links = tab;
    zc->bridge_count = (uint32_t)u;
    return NM_OK;
}

/* ---- 可走标记与顶点: borrow (new-generation pack) or weld (old pack) ----------------------------- */
typedef struct weld_rec {
    int64_t kx, ky;
    double x, y;
    float h;
    uint32_t vid;
} weld_rec;

static int cmp_weld(const void *pa, const void *pb)
{
    const weld_rec *a = (const weld_rec *)pa, *b = (const weld_rec *)pb;
    if (a->kx != b->kx) return a->kx < b->kx ? -1 : 1;
    if (a->ky != b->ky) return a->ky < b->ky ? -1 : 1;
    if (a->h != b->h) return a->h < b->h ? -1 : 1;
    return a->vid < b->vid ? -1 : a->vid > b->vid;
}

/* Old pack: round u, v to the 0.05 px grid (round half away from zero), group equal (u, v) keyed at
 * 1e-4 px, sort each group by height and chain-merge neighbours whose height differs by at most
 * kWeldDh = 3 m into the group's current representative (its lowest point). */
static int weld_vertices(build *b, uint32_t vmin, uint32_t vmax, nm_error *err)
{
    const nm_pack *p = b->p;
    nm_zone_clean *zc = b->zc;
    size_t range = (size_t)vmax - vmin + 1;
    uint32_t *map = (uint32_t *)nm_calloc(range, sizeof *map);
    if (!map) return nm_fail(err, NM_ERR_NOMEM, "zone %s: weld: out of memory", b->zname);
    for (size_t i = 0; i < range; i++) map[i] = NONE32;
    uint32_t m = 0;
    for (size_t i = 0; i < 3 * (size_t)b->n; i++) {
        uint32_t v = zc->tri_v[i] - vmin;
        if (map[v] == NONE32) map[v] = m++;
    }
    weld_rec *rec = (weld_rec *)nm_calloc(m, sizeof *rec);
    nm_vertex *out = (nm_vertex *)nm_calloc(m, sizeof *out);
    if (!rec || !out) {
        nm_free(map);
        nm_free(rec);
        nm_free(out);
        return nm_fail(err, NM_ERR_NOMEM, "zone %s: weld: out of memory", b->zname);
    }
    const double inv = 1.0 / NM_kWeldGrid; /* 20 cells a px */
    uint32_t j = 0;
    for (size_t i = 0; i < range; i++) {
        if (map[i] == NONE32) continue;
        const nm_vertex *v = &p->verts[vmin + i];
        weld_rec *r = &rec[j++];
        r->x = round((double)v->u * inv) / inv;
        r->y = round((double)v->v * inv) / inv;
        r->kx = llround(r->x / 1e-4);
        r->ky = llround(r->y / 1e-4);
        r->h = v->h;
        r->vid = (uint32_t)(vmin + i);
    }
    qsort(rec, m, sizeof *rec, cmp_weld);
    uint32_t w = 0;
    for (uint32_t i = 0; i < m; i++) {
        bool same = i > 0 && rec[i].kx == rec[i - 1].kx && rec[i].ky == rec[i - 1].ky &&
                    (double)rec[i].h - (double)rec[i - 1].h <= NM_kWeldDh;
        if (!same) {
            out[w].u = (float)rec[i].x;
            out[w].v = (float)rec[i].y;
            out[w].h = rec[i].h;
            w++;
        }
        map[rec[i].vid - vmin] = w - 1;
    }
    nm_free(rec);
    for (size_t i = 0; i < 3 * (size_t)b->n; i++) zc->tri_v[i] = map[zc->tri_v[i] - vmin];
    nm_free(map);
    zc->owned_verts_mem = (uint8_t *)out;
    zc->verts = out;
    zc->vert_count = w;
    zc->welded = true;
    for (uint32_t t = 0; t < b->n; t++) {
        const uint32_t *v = &zc->tri_v[3 * (size_t)t];
        if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
            return nm_fail(err, NM_ERR_CORRUPT,
                           "zone %s: triangle %u (global %u) is degenerate after the old-pack weld",
                           b->zname, t, zc->tri_global_base + t);
    }
    return NM_OK;
}

static int setup_vertices(build *b, nm_error *err)
{
    const nm_pack *p = b->p;
    nm_zone_clean *zc = b->zc;
    uint32_t vmin = UINT32_MAX, vmax = 0;
    for (uint32_t t = 0; t < b->n; t++) {
        const nm_tri *tr = &p->tris[b->lo + t];
        for (int k = 0; k < 3; k++) {
            uint32_t v = tr->v[k];
            if (v >= p->vert_count)
                return nm_fail(err, NM_ERR_CORRUPT,
                               "zone %s: triangle %u: vertex %u out of range (%u vertices)",
                               b->zname, t, v, p->vert_count);
            if (!coord_ok(&p->verts[v]))
                return nm_fail(err, NM_ERR_CORRUPT,
                               "zone %s: triangle %u: vertex %u has a non-finite or huge coordinate",
                               b->zname, t, v);
            zc->tri_v[3 * (size_t)t + (size_t)k] = v;
            if (v < vmin) vmin = v;
            if (v > vmax) vmax = v;
        }
    }
    /* New generation: a BGEO section, or a full BSRF (a purely walkable new pack may carry no
     * BSRF, so BSRF alone is not the test). Its vertices are already unique. */
    bool newgen = nm_pack_section(p, "BGEO") != NULL || p->surface_count > 0;
    if (newgen) {
        zc->verts = p->verts;
        zc->vert_count = p->vert_count;
        return NM_OK;
    }
    return weld_vertices(b, vmin, vmax, err);
}

/* ---- 统一成逆时针 ------------------------------------------------------------------------------ */
static void make_ccw(build *b)
{
    nm_zone_clean *zc = b->zc;
    for (uint32_t t = 0; t < b->n; t++) {
        uint32_t *v = &zc->tri_v[3 * (size_t)t];
        const nm_vertex *a = &zc->verts[v[0]], *c1 = &zc->verts[v[1]], *c2 = &zc->verts[v[2]];
        double cr = orient(a->u, a->v, c1->u, c1->v, c2->u, c2->v);
        if (cr < 0.0) { /* swap corners 1 and 2: edges 0 and 2 trade places (reversed) */
            uint32_t x = v[1];
            v[1] = v[2];
            v[2] = x;
        }
    }
}

/* ---- 槽位与邻接: bucket slots by start vertex, find reverse and duplicate edges --------------- */
static int bucket_slots(build *b, nm_error *err)
{
    nm_zone_clean *zc = b->zc;
    size_t ns = 3 * (size_t)b->n;
    uint32_t vmin = UINT32_MAX, vmax = 0;
    for (size_t s = 0; s < ns; s++) {
        if (zc->tri_v[s] < vmin) vmin = zc->tri_v[s];
        if (zc->tri_v[s] > vmax) vmax = zc->tri_v[s];
    }
    b->vmin = vmin;
    b->nv = vmax - vmin + 1;
    b->vstart = (uint32_t *)nm_calloc((size_t)b->nv + 1, sizeof *b->vstart);
    b->vslots = (uint32_t *)nm_calloc(ns, sizeof *b->vslots);
    if (!b->vstart || !b->vslots)
        return nm_fail(err, NM_ERR_NOMEM, "zone %s: slot buckets: out of memory", b->zname);
    for (size_t s = 0; s < ns; s++) b->vstart[zc->tri_v[s] - vmin + 1]++;
    for (uint32_t v = 0; v < b->nv; v++) b->vstart[v + 1] += b->vstart[v];
    /* fill in increasing slot order so the first hit in a bucket is the smallest slot */
    for (size_t s = 0; s < ns; s++) {
        uint32_t v = zc->tri_v[s] - vmin;
        b->vslots[b->vstart[v]++] = (uint32_t)s;
    }
    for (uint32_t v = b->nv; v > 0; v--) b->vstart[v] = b->vstart[v - 1];
    b->vstart[0] = 0;
    return NM_OK;
}

static int find_reverse_chunk(void *ctx, size_t chunk)
{
    build *b = (build *)ctx;
    const uint32_t *tv = b->zc->tri_v;
    size_t ns = 3 * (size_t)b->n, s0 = chunk * SLOT_CHUNK, s1 = s0 + SLOT_CHUNK;
    if (s1 > ns) s1 = ns;
    for (size_t s = s0; s < s1; s++) {
        uint32_t a = tv[s], e = slot_end(tv, (uint32_t)s), own = (uint32_t)(s / 3);
        uint32_t r = NONE32;
        const uint32_t *bk = &b->vslots[b->vstart[e - b->vmin]];
        uint32_t bn = b->vstart[e - b->vmin + 1] - b->vstart[e - b->vmin];
        for (uint32_t i = 0; i < bn; i++)
            if (slot_end(tv, bk[i]) == a && bk[i] / 3 != own) {
                r = bk[i];
                break;
            }
        uint8_t d = 0;
        const uint32_t *ba = &b->vslots[b->vstart[a - b->vmin]];
        uint32_t an = b->vstart[a - b->vmin + 1] - b->vstart[a - b->vmin];
        for (uint32_t i = 0; i < an; i++)
            if (ba[i] != s && slot_end(tv, ba[i]) == e) {
                d = 1;
                break;
            }
        b->rev[s] = r;
        b->dup[s] = d;
    }
    return NM_OK;
}

/* Rule 1 (重边): a duplicate edge disconnects both sides; rev[] becomes the neighbour triangle. */
static int rule1_chunk(void *ctx, size_t chunk)
{
    build *b = (build *)ctx;
    size_t ns = 3 * (size_t)b->n, s0 = chunk * SLOT_CHUNK, s1 = s0 + SLOT_CHUNK;
    if (s1 > ns) s1 = ns;
    for (size_t s = s0; s < s1; s++) {
        uint32_t r = b->rev[s];
        b->rev[s] = (r == NONE32 || b->dup[s] || b->dup[r]) ? NONE32 : r / 3;
    }
    return NM_OK;
}

/* Rules 2 (单向邻接) and 3 (可走标记与连接表), reading rule 1's result, writing nb[]. */
static int rule23_chunk(void *ctx, size_t chunk)
{
    build *b = (build *)ctx;
    const nm_zone_clean *zc = b->zc;
    size_t ns = 3 * (size_t)b->n, s0 = chunk * SLOT_CHUNK, s1 = s0 + SLOT_CHUNK;
    if (s1 > ns) s1 = ns;
    for (size_t s = s0; s < s1; s++) {
        uint32_t i = (uint32_t)(s / 3), j = nm_zone_rule_one_way(b->rev, s);
        int32_t out = -1;
        if (j != NONE32) {
            /* rule 3: either side unwalkable, or no link from the smaller to the larger number */
            bool walk = (zc->tflags[i] & NM_ZT_WALKABLE) && (zc->tflags[j] & NM_ZT_WALKABLE);
            if (walk && nm_zone_has_link(zc, i < j ? i : j, i < j ? j : i)) out = (int32_t)j;
        }
        b->nb[s] = out;
    }
    return NM_OK;
}

/* ---- 分量与孤岛, boundary bits ---------------------------------------------------------------- */
static int components(build *b, nm_error *err)
{
    nm_zone_clean *zc = b->zc;
    uint32_t n = b->n;
    uint32_t *size = (uint32_t *)nm_calloc(n, sizeof *size);
    uint32_t *small = (uint32_t *)nm_calloc(n, sizeof *small);
    if (!size || !small) {
        nm_free(size);
        nm_free(small);
        return nm_fail(err, NM_ERR_NOMEM, "zone %s: components: out of memory", b->zname);
    }
    uint32_t *parent = zc->comp;
    for (uint32_t i = 0; i < n; i++) parent[i] = i;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            int32_t j = b->nb[3 * (size_t)i + (size_t)k];
            if (j >= 0 && (uint32_t)j > i) uf_union(parent, i, (uint32_t)j);
        }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = uf_find(parent, i);
        size[r]++;
        small[r] += b->raw_size[i] <= NM_kSmallComponentTris;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = uf_find(parent, i);
        parent[i] = r; /* fully compressed: comp[i] is the root */
        uint8_t f = zc->tflags[i] & (uint8_t)~(NM_ZT_ISLAND | NM_ZT_BOUNDARY_MASK);
        /* island: strictly more than half of the component lies in small raw components */
        if ((uint64_t)small[r] * 2 > size[r]) f |= NM_ZT_ISLAND;
        for (int k = 0; k < 3; k++)
            if (b->nb[3 * (size_t)i + (size_t)k] < 0) f |= (uint8_t)(1u << k);
        zc->tflags[i] = f;
    }
    nm_free(size);
    nm_free(small);
    return NM_OK;
}

/* ---- 24 px triangle buckets (counting sort over walkable triangles' bounding boxes) ---------- */
static void tri_bbox(const nm_zone_clean *zc, uint32_t t, double *x0, double *y0, double *x1,
                     double *y1)
{
    const nm_vertex *a = nm_zone_vertex(zc, t, 0), *b = nm_zone_vertex(zc, t, 1),
                    *c = nm_zone_vertex(zc, t, 2);
    *x0 = fmin(fmin(a->u, b->u), c->u);
    *x1 = fmax(fmax(a->u, b->u), c->u);
    *y0 = fmin(fmin(a->v, b->v), c->v);
    *y1 = fmax(fmax(a->v, b->v), c->v);
}

static uint32_t cell_of(double x, double x0, uint32_t n)
{
    double c = floor((x - x0) / NM_kTriBucket);
    if (!(c > 0.0)) return 0;
    if (c >= (double)n) return n - 1;
    return (uint32_t)c;
}

static int build_buckets(build *b, nm_error *err)
{
    nm_zone_clean *zc = b->zc;
    double mx0 = INFINITY, my0 = INFINITY, mx1 = -INFINITY, my1 = -INFINITY;
    for (uint32_t t = 0; t < b->n; t++) {
        if (!(zc->tflags[t] & NM_ZT_WALKABLE)) continue;
        double x0, y0, x1, y1;
        tri_bbox(zc, t, &x0, &y0, &x1, &y1);
        mx0 = fmin(mx0, x0);
        my0 = fmin(my0, y0);
        mx1 = fmax(mx1, x1);
        my1 = fmax(my1, y1);
    }
    zc->grid_x0 = floor(mx0 / NM_kTriBucket) * NM_kTriBucket;
    zc->grid_y0 = floor(my0 / NM_kTriBucket) * NM_kTriBucket;
    double fx = floor((mx1 - zc->grid_x0) / NM_kTriBucket) + 1.0;
    double fy = floor((my1 - zc->grid_y0) / NM_kTriBucket) + 1.0;
    if (fx * fy > (double)MAX_GRID_CELLS)
        return nm_fail(err, NM_ERR_CORRUPT, "zone %s: extent %.0f x %.0f px is too large",
                       b->zname, mx1 - mx0, my1 - my0);
    zc->grid_nx = (uint32_t)fx;
    zc->grid_ny = (uint32_t)fy;
    size_t cells = (size_t)zc->grid_nx * zc->grid_ny;
    zc->bucket_start = (uint32_t *)nm_calloc(cells + 1, sizeof *zc->bucket_start);
    if (!zc->bucket_start)
        return nm_fail(err, NM_ERR_NOMEM, "zone %s: triangle buckets: out of memory", b->zname);
    uint64_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t t = 0; t < b->n; t++) {
            if (!(zc->tflags[t] & NM_ZT_WALKABLE)) continue;
            double x0, y0, x1, y1;
            tri_bbox(zc, t, &x0, &y0, &x1, &y1);
            uint32_t cx0 = cell_of(x0, zc->grid_x0, zc->grid_nx), cx1 = cell_of(x1, zc->grid_x0, zc->grid_nx);
            uint32_t cy0 = cell_of(y0, zc->grid_y0, zc->grid_ny), cy1 = cell_of(y1, zc->grid_y0, zc->grid_ny);
            for (uint32_t cy = cy0; cy <= cy1; cy++)
                for (uint32_t cx = cx0; cx <= cx1; cx++) {
                    size_t c = (size_t)cy * zc->grid_nx + cx;
                    if (pass == 0) {
                        zc->bucket_start[c + 1]++;
                        total++;
                    } else {
                        zc->bucket_tris[zc->bucket_start[c]++] = t;
                    }
                }
        }
        if (pass == 0) {
            if (total >= UINT32_MAX)
                return nm_fail(err, NM_ERR_CORRUPT, "zone %s: too many triangle bucket entries",
                               b->zname);
            for (size_t c = 0; c < cells; c++) zc->bucket_start[c + 1] += zc->bucket_start[c];
            zc->bucket_tris = (uint32_t *)nm_calloc(total ? (size_t)total : 1, sizeof *zc->bucket_tris);
            if (!zc->bucket_tris)
                return nm_fail(err, NM_ERR_NOMEM, "zone %s: triangle buckets: out of memory",
                               b->zname);
        }
    }
    /* the fill pass advanced each start to the next cell's start: shift back */
    for (size_t c = cells; c > 0; c--) zc->bucket_start[c] = zc->bucket_start[c - 1];
    zc->bucket_start[0] = 0;
    return NM_OK;
}

/* ---- the build ------------------------------------------------------------------------------- */
static void build_free_temps(build *b)
{
    nm_free(b->vstart);
    nm_free(b->vslots);
    nm_free(b->rev);
    nm_free(b->dup);
    nm_free(b->nb);
    nm_free(b->raw_size);
    b->vstart = b->vslots = b->rev = b->raw_size = NULL;
    b->dup = NULL;
    b->nb = NULL;
}

static int build_all(build *b, int workers, nm_error *err)
{
    nm_zone_clean *zc = b->zc;
    uint32_t n = b->n;
    size_t ns = 3 * (size_t)n;
    int rc;
    zc->tflags = (uint8_t *)nm_calloc(n, 1);
    zc->tri_v = (uint32_t *)nm_calloc(ns, sizeof *zc->tri_v);
    zc->comp = (uint32_t *)nm_calloc(n, sizeof *zc->comp);
    if (!zc->tflags || !zc->tri_v || !zc->comp)
        return nm_fail(err, NM_ERR_NOMEM, "zone %s: out of memory", b->zname);
    if ((rc = mark_walkable(b, err))) return rc;
    if ((rc = setup_vertices(b, err))) return rc;
    if ((rc = raw_components(b, err))) return rc;
    if ((rc = build_links(b, err))) return rc;
    make_ccw(b);
    if ((rc = bucket_slots(b, err))) return rc;

    b->rev = (uint32_t *)nm_calloc(ns, sizeof *b->rev);
    b->dup = (uint8_t *)nm_calloc(ns, 1);
    if (!b->rev || !b->dup) return nm_fail(err, NM_ERR_NOMEM, "zone %s: slots: out of memory", b->zname);
    size_t chunks = (ns + SLOT_CHUNK - 1) / SLOT_CHUNK;
    int w = nm_workers_for(ns, workers);
    if ((rc = nm_parallel_chunks(chunks, w, find_reverse_chunk, b)))
        return nm_fail(err, rc, "zone %s: reverse edges: worker failure", b->zname);
    nm_free(b->vstart);
    nm_free(b->vslots);
    b->vstart = b->vslots = NULL;

    if ((rc = nm_parallel_chunks(chunks, w, rule1_chunk, b)))
        return nm_fail(err, rc, "zone %s: rule 1: worker failure", b->zname);
    nm_free(b->dup);
    b->dup = NULL;
    b->nb = (int32_t *)nm_calloc(ns, sizeof *b->nb);
    if (!b->nb) return nm_fail(err, NM_ERR_NOMEM, "zone %s: adjacency: out of memory", b->zname);
    if ((rc = nm_parallel_chunks(chunks, w, rule23_chunk, b)))
        return nm_fail(err, rc, "zone %s: rules 2-3: worker failure", b->zname);
    nm_free(b->rev);
    b->rev = NULL;

    if ((rc = components(b, err))) return rc;
    /* article 包的内存: the 12-byte adjacency lives only during the build */
    nm_free(b->nb);
    b->nb = NULL;
    nm_free(b->raw_size);
    b->raw_size = NULL;
    return build_buckets(b, err);
}

int nm_zone_clean_build_at(const nm_pack *p, uint32_t zone_index, int workers,
                           nm_zone_clean **out, nm_error *err)
{
    if (!p || !out) return nm_fail(err, NM_ERR_ARG, "zone clean: NULL argument");
    *out = NULL;
    if (zone_index >= p->zone_count)
        return nm_fail(err, NM_ERR_ARG, "zone clean: zone index %u out of range (%u zones)",
                       zone_index, p->zone_count);
    const nm_zone *z = &p->zones[zone_index];
    const char *zname = z->name ? z->name : "?";
    if (z->flags & NM_ZONE_FLAG_TIER)
        return nm_fail(err, NM_ERR_ARG, "zone %s: a tier zone has no triangles to clean", zname);
    /* zone-scoped loads relabel the zone's triangles to start at 0 */
    uint32_t lo = p->zone_scoped ? 0 : z->first_tri;
    if ((uint64_t)lo + z->tri_count > p->tri_count)
        return nm_fail(err, NM_ERR_CORRUPT, "zone %s: triangles [%u, +%u) beyond the pack's %u",
                       zname, lo, z->tri_count, p->tri_count);
    if (z->tri_count == 0)
        return nm_fail(err, NM_ERR_STATE, "zone %s: no triangles", zname);
    if (z->tri_count > (UINT32_MAX - 1) / 3 || z->tri_count > (uint32_t)INT32_MAX / 3)
        return nm_fail(err, NM_ERR_CORRUPT, "zone %s: %u triangles is too many", zname, z->tri_count);

    nm_zone_clean *zc = (nm_zone_clean *)nm_calloc(1, sizeof *zc);
    if (!zc) return nm_fail(err, NM_ERR_NOMEM, "zone %s: out of memory", zname);
    zc->pack = p;
    zc->zone_index = zone_index;
    zc->zone_id = z->id;
    zc->tri_count = z->tri_count;
    zc->tri_lo = lo;
    zc->tri_global_base = p->zone_scoped ? p->tri_base : z->first_tri;
    build b = {p, zc, zname, z->tri_count, lo, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = build_all(&b, workers, err);
    build_free_temps(&b);
    if (rc) {
        nm_zone_clean_free(zc);
        return rc;
    }
    *out = zc;
    return NM_OK;
}

int nm_zone_clean_build(const nm_pack *p, const char *zone, int workers, nm_zone_clean **out,
                        nm_error *err)
{
    if (!p || !zone || !out) return nm_fail(err, NM_ERR_ARG, "zone clean: NULL argument");
    *out = NULL;
    int zi = nm_pack_find_zone(p, zone);
    if (zi < 0) return nm_fail(err, NM_ERR_ARG, "zone %s: not in the pack", zone);
    return nm_zone_clean_build_at(p, (uint32_t)zi, workers, out, err);
}

void nm_zone_clean_free(nm_zone_clean *zc)
{
    if (!zc) return;
    nm_free(zc->tri_v);
    nm_free(zc->comp);
    nm_free(zc->tflags);
    nm_free(zc->bridge_links);
    nm_free(zc->bucket_start);
    nm_free(zc->bucket_tris);
    nm_free(zc->owned_verts_mem);
    nm_free(zc);
}

/* hasLink(a, b): a natural neighbour answers from its slot bit, any other pair from the sorted
 * bridge table (article 连接表). */
bool nm_zone_has_link(const nm_zone_clean *zc, uint32_t a, uint32_t b)
{
    if (!zc || a >= zc->tri_count || b >= zc->tri_count) return false;
    const nm_tri *t = &zc->pack->tris[zc->tri_lo + a];
    uint32_t gb = zc->tri_lo + b;
    for (int k = 0; k < 3; k++)
        if (t->nb[k] >= 0 && (uint32_t)t->nb[k] == gb)
            return (zc->tflags[a] >> (NM_ZT_LINK_SHIFT + k)) & 1u;
    uint64_t key = (uint64_t)a << 32 | b;
    size_t lo = 0, hi = zc->bridge_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (zc->bridge_links[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < zc->bridge_count && zc->bridge_links[lo] == key;
}
