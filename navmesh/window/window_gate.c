/* window_gate.c — FallGate (design article 台沿下落, steps 1–5): after each window build the
 * planner points the window's gate at the collision geometry of its zone. A ledge drop RiseOk
 * lets through is projected onto the zone mesh at both ends, carried into the world frame and
 * handed to the occluder's dropBlocked (climb 0.39 m, height 2.1 m).
 *
 * Two caches per plan, shared by its tiers (#6219): the decision per (take-off cell, landing cell,
 * take-off height, landing height) and the projected point per (cell, height), cells global.
 * Scenes come from the process-wide occluder cache (per absolute path and zone, failures kept).
 * Engines are keys in a small list under one mutex; one engine plans one request at a time. */
#include "window_gate.h"

#include "../zone/zone.h"
#include "../../occluder/occluder.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small open-addressing table: 4 key words -> 3 values ------------------------------- */
typedef struct gate_slot {
    uint64_t k[4];
    double v[3];
    bool used;
} gate_slot;

typedef struct gate_table {
    gate_slot *s;
    size_t cap, n; /* cap a power of two (or 0) */
} gate_table;

static uint64_t mix(const uint64_t k[4])
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 4; i++) {
        h ^= k[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

static gate_slot *table_find(gate_table *t, const uint64_t k[4])
{
    if (!t->cap) return NULL;
    for (size_t i = mix(k) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        gate_slot *s = &t->s[i];
        if (!s->used) return NULL;
        if (memcmp(s->k, k, sizeof s->k) == 0) return s;
    }
}

/* Adds a key known to be absent; on no memory the value is simply not remembered. */
static void table_put(gate_table *t, const uint64_t k[4], const double v[3])
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        gate_slot *s = nm_calloc(cap, sizeof *s);
        if (!s) return;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->s[i].used) continue;
            size_t j = mix(t->s[i].k) & (cap - 1);
            while (s[j].used) j = (j + 1) & (cap - 1);
            s[j] = t->s[i];
        }
        nm_free(t->s);
        t->s = s;
        t->cap = cap;
    }
    size_t j = mix(k) & (t->cap - 1);
    while (t->s[j].used) j = (j + 1) & (t->cap - 1);
    memcpy(t->s[j].k, k, sizeof t->s[j].k);
    memcpy(t->s[j].v, v, sizeof t->s[j].v);
    t->s[j].used = true;
    t->n++;
}

static void table_free(gate_table *t)
{
    nm_free(t->s);
    memset(t, 0, sizeof *t);
}

/* ---- engines ------------------------------------------------------------------------------ */
typedef struct gate_engine {
    struct gate_engine *next;
    const void *key;
    char *occ_path;            /* NULL = no pack path: no collision geometry */
    /* the current plan's gate */
    uint64_t plan;
    bool have_plan;
    const nm_zone_clean *zc;
    const nm_occ_scene *scene;
    double sx, tx, sy, ty;     /* zone transform */
    int64_t gx0, gy0;          /* the current window's frame */
    int32_t nx;
    gate_table decide, proj;
    nm_gate_stats stats;
} gate_engine;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static gate_engine *g_engines;

static char *dup_n(const char *s, size_t n)
{
    char *d = nm_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *nm_occluder_path_of(const char *pack_path)
{
    if (!pack_path) pack_path = "";
    const char *slash = strrchr(pack_path, '/');
    size_t dn = slash ? (size_t)(slash - pack_path) : 0;
    const char *base = slash ? slash + 1 : pack_path;
    size_t bn = strlen(base);
    /* the folder, absolute when it exists (the scene cache keys by absolute path) */
    char *dir = dup_n(slash ? pack_path : ".", slash ? (dn ? dn : 1) : 1);
    if (!dir) return NULL;
    char *abs = realpath(dir, NULL);
    const char *d = abs ? abs : dir;
    const char *suffix = ".nav.gz";
    size_t sn = strlen(suffix);
    size_t stem = (bn > sn && strcmp(base + bn - sn, suffix) == 0) ? bn - sn : 0;
    size_t need = strlen(d) + bn + 32;
    char *out = nm_malloc(need);
    if (out) {
        size_t dl = strlen(d);
        const char *sep = (dl && d[dl - 1] == '/') ? "" : "/";
        if (stem)
            snprintf(out, need, "%s%s%.*s.occluder.gz", d, sep, (int)stem, base);
        else
            snprintf(out, need, "%s%sbase.occluder.gz", d, sep);
    }
    free(abs); /* realpath allocates with the C library */
    nm_free(dir);
    return out;
}

static gate_engine *find_engine(const void *key)
{
    for (gate_engine *g = g_engines; g; g = g->next)
        if (g->key == key) return g;
    return NULL;
}

static void reset_plan(gate_engine *g)
{
    table_free(&g->decide);
    table_free(&g->proj);
    g->have_plan = false;
    g->zc = NULL;
    g->scene = NULL;
}

int nm_window_gate_attach(const void *engine, const char *pack_path, nm_error *err)
{
    char *occ = NULL;
    if (pack_path && *pack_path) {
        occ = nm_occluder_path_of(pack_path);
        if (!occ) return nm_fail(err, NM_ERR_NOMEM, "fall gate: out of memory");
    }
    pthread_mutex_lock(&g_lock);
    gate_engine *g = find_engine(engine);
    if (!g) {
        g = nm_calloc(1, sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&g_lock);
            nm_free(occ);
            return nm_fail(err, NM_ERR_NOMEM, "fall gate: out of memory");
        }
        g->key = engine;
        g->next = g_engines;
        g_engines = g;
    }
    reset_plan(g);
    nm_free(g->occ_path);
    g->occ_path = occ;
    memset(&g->stats, 0, sizeof g->stats);
    pthread_mutex_unlock(&g_lock);
    return NM_OK;
}

void nm_window_gate_detach(const void *engine)
{
    pthread_mutex_lock(&g_lock);
    for (gate_engine **p = &g_engines; *p; p = &(*p)->next)
        if ((*p)->key == engine) {
            gate_engine *g = *p;
            *p = g->next;
            reset_plan(g);
            nm_free(g->occ_path);
            nm_free(g);
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

void nm_window_gate_stats(const void *engine, nm_gate_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g_lock);
    gate_engine *g = find_engine(engine);
    if (g) *out = g->stats;
    pthread_mutex_unlock(&g_lock);
}

/* ---- step 3: projection onto the zone mesh -------------------------------------------------- */
/* o + f·(e − o) for (u, v, h): a closest point on an edge is written from that edge's own corner,
 * so on an edge whose corners share u (or v) the point gets exactly that u (or v) — it lies on the
 * platform's edge in the occluder too, where the take-off column must find the floor. */
static void lerp3(const double o[3], const double e[3], double f, double out[3])
{
    for (int k = 0; k < 3; k++) out[k] = o[k] + f * (e[k] - o[k]);
}

/* Closest point of triangle abc (u, v, h corners) to p in the plane (Ericson's region tests); the
 * height is interpolated at that point. */
static void closest_on_tri(const double p[2], const double a[3], const double b[3], const double c[3],
                           double out[3])
{
    double ab[2] = {b[0] - a[0], b[1] - a[1]}, ac[2] = {c[0] - a[0], c[1] - a[1]};
    double ap[2] = {p[0] - a[0], p[1] - a[1]};
    double d1 = ab[0] * ap[0] + ab[1] * ap[1], d2 = ac[0] * ap[0] + ac[1] * ap[1];
    if (d1 <= 0 && d2 <= 0) { memcpy(out, a, 3 * sizeof *out); return; }
    double bp[2] = {p[0] - b[0], p[1] - b[1]};
    double d3 = ab[0] * bp[0] + ab[1] * bp[1], d4 = ac[0] * bp[0] + ac[1] * bp[1];
    if (d3 >= 0 && d4 <= d3) { memcpy(out, b, 3 * sizeof *out); return; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { lerp3(a, b, d1 / (d1 - d3), out); return; }
    double cp[2] = {p[0] - c[0], p[1] - c[1]};
    double d5 = ab[0] * cp[0] + ab[1] * cp[1], d6 = ac[0] * cp[0] + ac[1] * cp[1];
    if (d6 >= 0 && d5 <= d6) { memcpy(out, c, 3 * sizeof *out); return; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { lerp3(a, c, d2 / (d2 - d6), out); return; }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        lerp3(b, c, (d4 - d3) / ((d4 - d3) + (d5 - d6)), out);
        return;
    }
    double den = va + vb + vc;
    if (!(fabs(den) > 0)) { memcpy(out, a, 3 * sizeof *out); return; } /* degenerate: a vertex */
    double v = vb / den, w = vc / den;
    for (int k = 0; k < 3; k++) out[k] = a[k] + v * (b[k] - a[k]) + w * (c[k] - a[k]);
}

typedef struct proj_ctx {
    const nm_zone_clean *zc;
    double x, y, h;
    bool found;
    double d, dh;
    uint32_t tri;
    double out[3];
} proj_ctx;

static const double kProjRadius = 0.25; /* px: triangles searched round the cell centre */
static const double kProjBand = 2.0;    /* m: height band of the triangles and their points */

static int proj_visit(void *ctx, uint32_t t)
{
    proj_ctx *pc = ctx;
    const nm_vertex *V[3];
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 3; k++) {
        V[k] = &pc->zc->verts[pc->zc->tri_v[3 * (size_t)t + k]];
        if (V[k]->h < lo) lo = V[k]->h;
        if (V[k]->h > hi) hi = V[k]->h;
    }
    if (pc->h < lo - kProjBand || pc->h > hi + kProjBand) return 0;
    double p[2] = {pc->x, pc->y}, q[3];
    double a[3] = {V[0]->u, V[0]->v, V[0]->h}, b[3] = {V[1]->u, V[1]->v, V[1]->h},
           c[3] = {V[2]->u, V[2]->v, V[2]->h};
    closest_on_tri(p, a, b, c, q);
    double qx = q[0], qy = q[1], qh = q[2];
    double d = nm_hypot(qx - pc->x, qy - pc->y), dh = fabs(qh - pc->h);
    if (d > kProjRadius || dh > kProjBand) return 0;
    /* (distance, height difference), then the lower triangle number: independent of bucket order */
    if (!pc->found || d < pc->d || (d == pc->d && (dh < pc->dh || (dh == pc->dh && t < pc->tri)))) {
        pc->found = true;
        pc->d = d;
        pc->dh = dh;
        pc->tri = t;
        pc->out[0] = qx;
        pc->out[1] = qy;
        pc->out[2] = qh;
    }
    return 0;
}

void nm_fall_gate_project(const nm_zone_clean *zc, double x, double y, double h, double out[3])
{
    proj_ctx pc = {zc, x, y, h, false, 0, 0, 0, {x, y, h}};
    if (zc)
        nm_zone_tris_in_rect(zc, x - kProjRadius, y - kProjRadius, x + kProjRadius, y + kProjRadius,
                             proj_visit, &pc);
    memcpy(out, pc.out, sizeof pc.out);
}

/* ---- steps 2–5: the callback ---------------------------------------------------------------- */
static uint64_t bits_of(double h)
{
    uint64_t u;
    if (h == 0) h = 0; /* -0 and +0 are one height */
    memcpy(&u, &h, sizeof u);
    return u;
}

static uint64_t cell_key(int64_t gx, int64_t gy)
{
    return ((uint64_t)(uint32_t)gx << 32) | (uint64_t)(uint32_t)gy;
}

/* Projected world point of global cell (gx, gy) at span height h (cached per (cell, h)). */
static void world_point(gate_engine *g, int64_t gx, int64_t gy, double h, double out[3])
{
    uint64_t k[4] = {cell_key(gx, gy), bits_of(h), 0, 0};
    double q[3];
    gate_slot *s = table_find(&g->proj, k);
    g->stats.projections++;
    if (s) {
        memcpy(q, s->v, sizeof q);
        g->stats.projection_hits++;
    } else {
        nm_fall_gate_project(g->zc, ((double)gx + 0.5) * NM_kCS, ((double)gy + 0.5) * NM_kCS, h, q);
        table_put(&g->proj, k, q);
    }
    /* step 4: px -> world by the zone transform (u = sx*X + tx, v = ty - sy*Z); y = height */
    out[0] = (q[0] - g->tx) / g->sx;
    out[1] = q[2];
    out[2] = (g->ty - q[1]) / g->sy;
}

static bool fall_gate(void *ctx, uint32_t from_cell, double h_from, uint32_t to_cell, double h_to)
{
    gate_engine *g = ctx;
    uint32_t nx = (uint32_t)g->nx;
    int64_t fx = g->gx0 + (int64_t)(from_cell % nx), fy = g->gy0 + (int64_t)(from_cell / nx);
    int64_t tx = g->gx0 + (int64_t)(to_cell % nx), ty = g->gy0 + (int64_t)(to_cell / nx);
    uint64_t k[4] = {cell_key(fx, fy), cell_key(tx, ty), bits_of(h_from), bits_of(h_to)};
    g->stats.asked++;
    gate_slot *s = table_find(&g->decide, k);
    if (s) {
        g->stats.hits++;
        return s->v[0] != 0;
    }
    double take[3], land[3];
    world_point(g, fx, fy, h_from, take);
    world_point(g, tx, ty, h_to, land);
    bool blocked = nm_occ_drop_blocked_with(g->scene, take, land, NM_kFallClimb, NM_kFallHeight);
    if (blocked) g->stats.blocked++;
    double v[3] = {blocked ? 1.0 : 0.0, 0, 0};
    table_put(&g->decide, k, v);
    return blocked;
}

void nm_window_gate_warm(const void *engine, const nm_zone_clean *zc)
{
    if (!zc || !zc->pack || zc->zone_index >= zc->pack->zone_count) return;
    pthread_mutex_lock(&g_lock);
    const gate_engine *g = find_engine(engine);
    char *path = g && g->occ_path ? nm_malloc(strlen(g->occ_path) + 1) : NULL;
    if (path) strcpy(path, g->occ_path);
    pthread_mutex_unlock(&g_lock);
    const nm_occ_scene *scene;
    nm_error err;
    if (path) (void)nm_occ_cache_get(path, zc->pack->zones[zc->zone_index].name, &scene, &err);
    nm_free(path);
}

int nm_window_set_gate(nm_window *w, const void *engine, uint64_t plan, const nm_zone_clean *zc,
                       nm_error *err)
{
    w->gate.fn = NULL;
    w->gate.ctx = NULL;
    if (!zc || !zc->pack || zc->zone_index >= zc->pack->zone_count) return NM_OK;
    pthread_mutex_lock(&g_lock);
    gate_engine *g = find_engine(engine);
    int rc = NM_OK;
    if (g && g->occ_path) {
        const nm_zone *z = &zc->pack->zones[zc->zone_index];
        /* one plan, one zone: the caches carry over between its tiers */
        if (!g->have_plan || g->plan != plan || g->zc != zc) {
            reset_plan(g);
            g->plan = plan;
            g->have_plan = true;
            g->zc = zc;
            rc = nm_occ_cache_get(g->occ_path, z->name, &g->scene, err);
            if (rc != NM_OK) {
                g->scene = NULL;
                nm_error_prefix(err, "fall gate");
            }
            g->sx = z->t[0];
            g->tx = z->t[1];
            g->sy = z->t[2];
            g->ty = z->t[3];
        }
        /* step 1: no collision geometry, or a transform that flattens an axis: the empty gate */
        if (g->scene && g->sx != 0 && g->sy != 0 && w->win.nx > 0) {
            g->gx0 = w->gx0;
            g->gy0 = w->gy0;
            g->nx = w->win.nx;
            w->gate.fn = fall_gate;
            w->gate.ctx = g;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
