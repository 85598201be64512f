/* sg_mesh.c — scenegen's mesh store: a deduplicated vertex pool, named groups, triangles, the
 * T-junction repair that stitches abutting walkable pieces into one connected mesh (so seams
 * between a ramp and the ground are shared edges, not boundary edges), and the writers of
 * level.obj and zone.json. Output depends only on insertion order: byte-identical per scene. */
#include "sg.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

nm_sg_world *nm_sg_world_new(void)
{
    nm_sg_world *w = nm_calloc(1, sizeof *w);
    return w;
}

void nm_sg_world_free(nm_sg_world *w)
{
    if (!w) return;
    nm_free(w->v);
    nm_free(w->t);
    nm_free(w->g);
    for (size_t i = 0; i < w->nz; i++) cJSON_Delete(w->zones[i].tiers);
    nm_free(w->zones);
    nm_free(w->links);
    cJSON_Delete(w->agent);
    nm_free(w->vh);
    nm_free(w);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, nm_error *err)
{
    if (need <= *cap) return NM_OK;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    size_t bytes;
    if (!nm_mul_ok(nc, elem, &bytes)) return nm_fail(err, NM_ERR_NOMEM, "scenegen: too large");
    void *q = nm_realloc(*p, bytes);
    if (!q) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    *p = q;
    *cap = nc;
    return NM_OK;
}

int nm_sg_group_find(const nm_sg_world *w, const char *name)
{
    for (size_t i = 0; i < w->ng; i++)
        if (strcmp(w->g[i].name, name) == 0) return (int)i;
    return -1;
}

int nm_sg_group_get(nm_sg_world *w, const char *name, int role, int zone, int area,
                    nm_error *err)
{
    int i = nm_sg_group_find(w, name);
    if (i >= 0) {
        if (w->g[i].role != role || w->g[i].zone != zone || w->g[i].area != area)
            return nm_fail(err, NM_ERR_ARG, "group \"%s\" used for two different roles/zones",
                           name);
        return i;
    }
    if (strlen(name) >= sizeof w->g[0].name)
        return nm_fail(err, NM_ERR_ARG, "group name \"%.40s...\" too long", name);
    int rc = grow((void **)&w->g, &w->cg, w->ng + 1, sizeof *w->g, err);
    if (rc) return rc;
    nm_sg_group *g = &w->g[w->ng];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->role = role;
    g->zone = zone;
    g->area = area;
    return (int)w->ng++;
}

/* Vertices are merged when equal after rounding to 1e-6 m, the precision the OBJ prints. */
static int64_t quant(double a) { return (int64_t)llround(a * 1e6); }

static uint64_t vhash(int64_t x, int64_t y, int64_t h)
{
    uint64_t k = (uint64_t)x * 0x9E3779B97F4A7C15ull;
    k ^= (uint64_t)y * 0xC2B2AE3D27D4EB4Full + (k << 6) + (k >> 2);
    k ^= (uint64_t)h * 0x165667B19E3779F9ull + (k << 6) + (k >> 2);
    return k ^ (k >> 29);
}

static int rehash(nm_sg_world *w, nm_error *err)
{
    size_t cap = w->vhcap ? w->vhcap * 2 : 4096;
    uint32_t *t = nm_malloc(cap * sizeof *t);
    if (!t) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (vertex hash)");
    memset(t, 0xff, cap * sizeof *t);
    for (size_t i = 0; i < w->nv; i++) {
        nm_sg_vec *p = &w->v[i];
        size_t s = vhash(quant(p->x), quant(p->y), quant(p->h)) & (cap - 1);
        while (t[s] != UINT32_MAX) s = (s + 1) & (cap - 1);
        t[s] = (uint32_t)i;
    }
    nm_free(w->vh);
    w->vh = t;
    w->vhcap = cap;
    return NM_OK;
}

int nm_sg_vertex(nm_sg_world *w, double x, double y, double h, uint32_t *idx, nm_error *err)
{
    if (!isfinite(x) || !isfinite(y) || !isfinite(h))
        return nm_fail(err, NM_ERR_ARG, "non-finite vertex (%g, %g, %g)", x, y, h);
    if ((w->nv + 1) * 2 > w->vhcap) {
        int rc = rehash(w, err);
        if (rc) return rc;
    }
    int64_t qx = quant(x), qy = quant(y), qh = quant(h);
    size_t s = vhash(qx, qy, qh) & (w->vhcap - 1);
    while (w->vh[s] != UINT32_MAX) {
        nm_sg_vec *p = &w->v[w->vh[s]];
        if (quant(p->x) == qx && quant(p->y) == qy && quant(p->h) == qh) {
            *idx = w->vh[s];
            return NM_OK;
        }
        s = (s + 1) & (w->vhcap - 1);
    }
    if (w->nv >= UINT32_MAX - 1) return nm_fail(err, NM_ERR_ARG, "too many vertices");
    int rc = grow((void **)&w->v, &w->cv, w->nv + 1, sizeof *w->v, err);
    if (rc) return rc;
    w->v[w->nv] = (nm_sg_vec){x, y, h};
    w->vh[s] = (uint32_t)w->nv;
    *idx = (uint32_t)w->nv++;
    return NM_OK;
}

int nm_sg_tri_add(nm_sg_world *w, uint32_t a, uint32_t b, uint32_t c, int group, nm_error *err)
{
    if (a == b || b == c || a == c) return NM_OK; /* degenerate after merging: drop */
    int rc = grow((void **)&w->t, &w->ct, w->nt + 1, sizeof *w->t, err);
    if (rc) return rc;
    w->t[w->nt++] = (nm_sg_tri){{a, b, c}, (uint32_t)group};
    return NM_OK;
}

/* ---- T-junction repair ------------------------------------------------------------------- */
/* A vertex of a walkable piece that lies on the edge of another walkable triangle (in plan,
 * at the edge's height) splits that triangle, so the two pieces share edges after welding. */

typedef struct {
    double cell, ox, oy;
    int nx, ny;
    uint32_t *start; /* nx*ny + 1 */
    uint32_t *items;
} vgrid;

static void vgrid_free(vgrid *g)
{
    nm_free(g->start);
    nm_free(g->items);
}

static bool is_surface(const nm_sg_world *w, const nm_sg_tri *t)
{
    int r = w->g[t->group].role;
    return r == NM_SG_WALK || r == NM_SG_WATER;
}

static int vgrid_build(const nm_sg_world *w, vgrid *g, nm_error *err)
{
    memset(g, 0, sizeof *g);
    unsigned char *used = nm_calloc(w->nv ? w->nv : 1, 1);
    if (!used) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    size_t nused = 0;
    for (size_t i = 0; i < w->nt; i++) {
        if (!is_surface(w, &w->t[i])) continue;
        for (int k = 0; k < 3; k++) {
            uint32_t v = w->t[i].v[k];
            if (used[v]) continue;
            used[v] = 1;
            nused++;
            x0 = fmin(x0, w->v[v].x), x1 = fmax(x1, w->v[v].x);
            y0 = fmin(y0, w->v[v].y), y1 = fmax(y1, w->v[v].y);
        }
    }
    if (!nused) {
        nm_free(used);
        return NM_OK;
    }
    double span = fmax(x1 - x0, y1 - y0) + 1.0;
    g->cell = fmax(1.0, span / 1024.0);
    g->ox = x0 - 0.5, g->oy = y0 - 0.5;
    g->nx = (int)((x1 - g->ox) / g->cell) + 2;
    g->ny = (int)((y1 - g->oy) / g->cell) + 2;
    size_t ncell = (size_t)g->nx * (size_t)g->ny;
    g->start = nm_calloc(ncell + 1, sizeof *g->start);
    g->items = nm_malloc(nused * sizeof *g->items);
    if (!g->start || !g->items) {
        nm_free(used);
        vgrid_free(g);
        return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (vertex grid)");
    }
    for (size_t v = 0; v < w->nv; v++) {
        if (!used[v]) continue;
        int cx = (int)((w->v[v].x - g->ox) / g->cell), cy = (int)((w->v[v].y - g->oy) / g->cell);
        g->start[(size_t)cy * g->nx + cx + 1]++;
    }
    for (size_t c = 0; c < ncell; c++) g->start[c + 1] += g->start[c];
    uint32_t *fill = nm_malloc(ncell * sizeof *fill);
    if (!fill) {
        nm_free(used);
        vgrid_free(g);
        return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (vertex grid)");
    }
    memcpy(fill, g->start, ncell * sizeof *fill);
    for (size_t v = 0; v < w->nv; v++) { /* ascending order inside each cell: deterministic */
        if (!used[v]) continue;
        int cx = (int)((w->v[v].x - g->ox) / g->cell), cy = (int)((w->v[v].y - g->oy) / g->cell);
        g->items[fill[(size_t)cy * g->nx + cx]++] = (uint32_t)v;
    }
    nm_free(fill);
    nm_free(used);
    return NM_OK;
}

/* The vertex strictly inside edge a→b (plan distance ≤ 1e-5 m, height within 1e-3 m of the
 * edge's) with the smallest parameter, or UINT32_MAX. */
static uint32_t on_edge(const nm_sg_world *w, const vgrid *g, uint32_t a, uint32_t b)
{
    const nm_sg_vec *A = &w->v[a], *B = &w->v[b];
    double dx = B->x - A->x, dy = B->y - A->y, L2 = dx * dx + dy * dy;
    if (L2 < 1e-12 || !g->start) return UINT32_MAX;
    double ex0 = fmin(A->x, B->x) - 1e-5, ex1 = fmax(A->x, B->x) + 1e-5;
    double ey0 = fmin(A->y, B->y) - 1e-5, ey1 = fmax(A->y, B->y) + 1e-5;
    int cx0 = (int)floor((ex0 - g->ox) / g->cell), cx1 = (int)floor((ex1 - g->ox) / g->cell);
    int cy0 = (int)floor((ey0 - g->oy) / g->cell), cy1 = (int)floor((ey1 - g->oy) / g->cell);
    if (cx0 < 0) cx0 = 0;
    if (cy0 < 0) cy0 = 0;
    if (cx1 >= g->nx) cx1 = g->nx - 1;
    if (cy1 >= g->ny) cy1 = g->ny - 1;
    double L = sqrt(L2), best_t = 2.0;
    uint32_t best = UINT32_MAX;
    for (int cy = cy0; cy <= cy1; cy++)
        for (int cx = cx0; cx <= cx1; cx++) {
            size_t c = (size_t)cy * g->nx + cx;
            for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++) {
                uint32_t p = g->items[k];
                if (p == a || p == b) continue;
                const nm_sg_vec *P = &w->v[p];
                double t = ((P->x - A->x) * dx + (P->y - A->y) * dy) / L2;
                if (t * L <= 1e-5 || (1.0 - t) * L <= 1e-5) continue;
                double cr = fabs((P->x - A->x) * dy - (P->y - A->y) * dx) / L;
                if (cr > 1e-5) continue;
                double h = A->h + t * (B->h - A->h);
                if (fabs(P->h - h) > 1e-3) continue;
                if (t < best_t || (t == best_t && p < best)) best_t = t, best = p;
            }
        }
    return best;
}

int nm_sg_fix_tjunctions(nm_sg_world *w, nm_error *err)
{
    vgrid g;
    int rc = vgrid_build(w, &g, err);
    if (rc) return rc;
    /* Triangles are processed in order; a split replaces the triangle in place by its first
     * half and appends the second half, which is processed later: the order is fixed. */
    for (size_t i = 0; i < w->nt; i++) {
        if (!is_surface(w, &w->t[i])) continue;
        for (;;) {
            nm_sg_tri t = w->t[i];
            int e = -1;
            uint32_t p = UINT32_MAX;
            for (int k = 0; k < 3 && p == UINT32_MAX; k++) {
                p = on_edge(w, &g, t.v[k], t.v[(k + 1) % 3]);
                if (p != UINT32_MAX) e = k;
            }
            if (p == UINT32_MAX) break;
            uint32_t a = t.v[e], b = t.v[(e + 1) % 3], c = t.v[(e + 2) % 3];
            w->t[i].v[0] = a, w->t[i].v[1] = p, w->t[i].v[2] = c;
            rc = nm_sg_tri_add(w, p, b, c, (int)t.group, err);
            if (rc) {
                vgrid_free(&g);
                return rc;
            }
        }
    }
    vgrid_free(&g);
    return NM_OK;
}

/* ---- writers ----------------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    int rc;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->rc) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->rc = NM_ERR_STATE;
            return;
        }
        if (b->p && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 1 << 16;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *q = nm_realloc(b->p, nc);
        if (!q) {
            b->rc = NM_ERR_NOMEM;
            return;
        }
        b->p = q;
        b->cap = nc;
    }
}

/* -0.000000 would differ from 0.000000 for the same point: print a clean zero. */
static double clean(double a) { return fabs(a) < 5e-7 ? 0.0 : a; }

int nm_sg_obj_text(const nm_sg_world *w, char **out, size_t *len, nm_error *err)
{
    sbuf b = {0};
    sb_printf(&b, "# scenegen: %s\n# plan (x, y) metres -> OBJ (x, h, -y); heights in metres\n",
              w->name);
    for (size_t i = 0; i < w->nv; i++)
        sb_printf(&b, "v %.6f %.6f %.6f\n", clean(w->v[i].x), clean(w->v[i].h),
                  clean(-w->v[i].y));
    for (size_t gi = 0; gi < w->ng; gi++) {
        bool any = false;
        for (size_t i = 0; i < w->nt; i++) {
            if (w->t[i].group != gi) continue;
            if (!any) sb_printf(&b, "g %s\n", w->g[gi].name);
            any = true;
            sb_printf(&b, "f %u %u %u\n", w->t[i].v[0] + 1, w->t[i].v[1] + 1,
                      w->t[i].v[2] + 1);
        }
    }
    if (b.rc) {
        nm_free(b.p);
        return nm_fail(err, b.rc, "scenegen: cannot format level.obj");
    }
    *out = b.p;
    *len = b.n;
    return NM_OK;
}

static cJSON *num_array(const double *a, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(a[i]));
    return arr;
}

static cJSON *world_point(nm_sg_vec p)
{
    double a[3] = {clean(p.x), clean(p.h), clean(-p.y)};
    return num_array(a, 3);
}

static void add_pattern_list(cJSON *root, const char *key, const nm_sg_world *w, int role)
{
    cJSON *arr = cJSON_AddArrayToObject(root, key);
    for (size_t i = 0; arr && i < w->ng; i++)
        if (w->g[i].role == role) cJSON_AddItemToArray(arr, cJSON_CreateString(w->g[i].name));
}

int nm_sg_zone_json_text(const nm_sg_world *w, char **out, nm_error *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (zone.json)");
    if (w->agent) {
        cJSON_AddItemToObject(root, "agent", cJSON_Duplicate(w->agent, 1));
    } else {
        cJSON *ag = cJSON_AddObjectToObject(root, "agent");
        cJSON_AddNumberToObject(ag, "height", 2.1);
        cJSON_AddNumberToObject(ag, "radius", 0.41);
        cJSON_AddNumberToObject(ag, "climb", 0.5);
        cJSON_AddNumberToObject(ag, "slope_deg", 45);
    }
    cJSON *zones = cJSON_AddArrayToObject(root, "zones");
    for (size_t z = 0; z < w->nz; z++) {
        const nm_sg_zone *zn = &w->zones[z];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(zones, o);
        cJSON_AddStringToObject(o, "name", zn->name);
        if (zn->has_id) cJSON_AddNumberToObject(o, "id", zn->id);
        cJSON_AddItemToObject(o, "transform", num_array(zn->tf, 4));
        if (zn->has_floor) cJSON_AddNumberToObject(o, "floor_y", zn->floor_y);
        cJSON *groups = cJSON_AddArrayToObject(o, "groups");
        for (size_t i = 0; i < w->ng; i++)
            if (w->g[i].zone == (int)z)
                cJSON_AddItemToArray(groups, cJSON_CreateString(w->g[i].name));
        if (zn->tiers) cJSON_AddItemToObject(o, "tiers", cJSON_Duplicate(zn->tiers, 1));
    }
    cJSON *areas = cJSON_AddObjectToObject(root, "areas");
    for (size_t i = 0; i < w->ng; i++)
        if (w->g[i].role == NM_SG_WATER) cJSON_AddNumberToObject(areas, w->g[i].name, w->g[i].area);
    add_pattern_list(root, "collision_only", w, NM_SG_PROP);
    add_pattern_list(root, "obstacles", w, NM_SG_SOLID);
    /* terrain groups: navbake stores their regular square cells as occluder height blocks */
    cJSON *hf = cJSON_AddArrayToObject(root, "heightfields");
    for (size_t i = 0; hf && i < w->ng; i++)
        if (w->g[i].terrain) cJSON_AddItemToArray(hf, cJSON_CreateString(w->g[i].name));
    cJSON *links = cJSON_AddArrayToObject(root, "offmesh");
    for (size_t i = 0; i < w->nl; i++) {
        const nm_sg_link *l = &w->links[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(links, o);
        cJSON_AddStringToObject(o, "zone", w->zones[l->zone].name);
        cJSON_AddItemToObject(o, "from", world_point(l->a));
        cJSON_AddItemToObject(o, "to", world_point(l->b));
        cJSON_AddBoolToObject(o, "bidirectional", l->bidir);
        cJSON_AddNumberToObject(o, "radius", l->radius);
        cJSON_AddNumberToObject(o, "cost", l->cost);
        cJSON_AddNumberToObject(o, "area", l->area);
        cJSON_AddNumberToObject(o, "type", l->type);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (zone.json)");
    size_t n = strlen(s);
    char *copy = nm_malloc(n + 2);
    if (!copy) {
        cJSON_free(s);
        return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory (zone.json)");
    }
    memcpy(copy, s, n);
    copy[n] = '\n';
    copy[n + 1] = 0;
    cJSON_free(s);
    *out = copy;
    return NM_OK;
}

static int write_file(const char *path, const char *data, size_t n, nm_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return nm_fail(err, NM_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    size_t k = fwrite(data, 1, n, f);
    int bad = k != n;
    if (fclose(f) != 0) bad = 1;
    if (bad) return nm_fail(err, NM_ERR_IO, "%s: write failed", path);
    return NM_OK;
}

/* mkdir -p */
static int make_dirs(const char *dir, nm_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
        return nm_fail(err, NM_ERR_ARG, "%.60s...: path too long", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return nm_fail(err, NM_ERR_IO, "%s: cannot create directory: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return nm_fail(err, NM_ERR_IO, "%s: cannot create directory: %s", tmp, strerror(errno));
    return NM_OK;
}

int nm_sg_write(const nm_sg_world *w, const char *dir, const char *obj_path,
                const char *zone_path, nm_error *err)
{
    char p1[4096], p2[4096];
    if (dir) {
        int rc = make_dirs(dir, err);
        if (rc) return rc;
    }
    if (!obj_path) {
        if (!dir) return nm_fail(err, NM_ERR_ARG, "scenegen: no output directory");
        snprintf(p1, sizeof p1, "%s/level.obj", dir);
        obj_path = p1;
    }
    if (!zone_path) {
        if (!dir) return nm_fail(err, NM_ERR_ARG, "scenegen: no output directory");
        snprintf(p2, sizeof p2, "%s/zone.json", dir);
        zone_path = p2;
    }
    char *text = NULL;
    size_t n = 0;
    int rc = nm_sg_obj_text(w, &text, &n, err);
    if (rc) return rc;
    rc = write_file(obj_path, text, n, err);
    nm_free(text);
    if (rc) return rc;
    rc = nm_sg_zone_json_text(w, &text, err);
    if (rc) return rc;
    rc = write_file(zone_path, text, strlen(text), err);
    nm_free(text);
    return rc;
}
