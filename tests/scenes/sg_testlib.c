/* sg_testlib.c — helpers for the scene tests (sg_testlib.h). */
#include "sg_testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tl_src(void)
{
    const char *s = getenv("NM_SOURCE_ROOT");
    return s ? s : ".";
}

char *tl_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

nm_sg_world *tl_load(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tl_src(), rel);
    char *t = tl_read(path);
    if (!t) return NULL;
    nm_sg_world *w = NULL;
    nm_error err = {0};
    int rc = strstr(rel, ".map") ? nm_sg_world_from_movingai(t, path, &w, &err)
                                 : nm_sg_world_from_json(t, path, &w, &err);
    free(t);
    if (rc) {
        fprintf(stderr, "tl_load: %s\n", err.msg);
        return NULL;
    }
    return w;
}

static double cross2(double ax, double ay, double bx, double by) { return ax * by - ay * bx; }

/* Barycentric height of the triangle at (x, y) if inside (closed, 1e-9), else NAN. */
static double tri_h(const nm_sg_world *w, const nm_sg_tri *t, double x, double y)
{
    const nm_sg_vec *a = &w->v[t->v[0]], *b = &w->v[t->v[1]], *c = &w->v[t->v[2]];
    double d = cross2(b->x - a->x, b->y - a->y, c->x - a->x, c->y - a->y);
    if (fabs(d) < 1e-12) return NAN;
    double u = cross2(x - a->x, y - a->y, c->x - a->x, c->y - a->y) / d;
    double v = cross2(b->x - a->x, b->y - a->y, x - a->x, y - a->y) / d;
    if (u < -1e-9 || v < -1e-9 || u + v > 1 + 1e-9) return NAN;
    return a->h + u * (b->h - a->h) + v * (c->h - a->h);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int tl_heights(const nm_sg_world *w, double x, double y, const char *prefix, bool water,
               double *out, int cap)
{
    int n = 0;
    for (size_t i = 0; i < w->nt; i++) {
        const nm_sg_group *g = &w->g[w->t[i].group];
        if (g->role != (water ? NM_SG_WATER : NM_SG_WALK)) continue;
        if (prefix && strncmp(g->name, prefix, strlen(prefix)) != 0) continue;
        double h = tri_h(w, &w->t[i], x, y);
        if (isnan(h)) continue;
        bool dup = false;
        for (int k = 0; k < n; k++)
            if (fabs(out[k] - h) < 1e-6) dup = true;
        if (!dup && n < cap) out[n++] = h;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_d);
    return n;
}

struct tl_comp {
    int *label; /* per triangle, -1 for non-surface */
    int count;
};

static int uf_find(int *p, int a)
{
    while (p[a] != a) a = p[a] = p[p[a]];
    return a;
}

typedef struct {
    uint32_t a, b, tri;
} edge;

static int cmp_edge(const void *x, const void *y)
{
    const edge *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}

tl_comp *tl_components(const nm_sg_world *w)
{
    tl_comp *c = calloc(1, sizeof *c);
    int *par = malloc(w->nt * sizeof *par);
    edge *e = malloc(w->nt * 3 * sizeof *e);
    c->label = malloc(w->nt * sizeof *c->label);
    size_t ne = 0;
    for (size_t i = 0; i < w->nt; i++) {
        par[i] = (int)i;
        int r = w->g[w->t[i].group].role;
        if (r != NM_SG_WALK && r != NM_SG_WATER) continue;
        for (int k = 0; k < 3; k++) {
            uint32_t a = w->t[i].v[k], b = w->t[i].v[(k + 1) % 3];
            e[ne++] = (edge){a < b ? a : b, a < b ? b : a, (uint32_t)i};
        }
    }
    qsort(e, ne, sizeof *e, cmp_edge);
    for (size_t i = 1; i < ne; i++)
        if (e[i].a == e[i - 1].a && e[i].b == e[i - 1].b) {
            int x = uf_find(par, (int)e[i].tri), y = uf_find(par, (int)e[i - 1].tri);
            if (x != y) par[x] = y;
        }
    int *map = malloc(w->nt * sizeof *map);
    for (size_t i = 0; i < w->nt; i++) map[i] = -1;
    for (size_t i = 0; i < w->nt; i++) {
        int r = w->g[w->t[i].group].role;
        if (r != NM_SG_WALK && r != NM_SG_WATER) {
            c->label[i] = -1;
            continue;
        }
        int root = uf_find(par, (int)i);
        if (map[root] < 0) map[root] = c->count++;
        c->label[i] = map[root];
    }
    free(map);
    free(par);
    free(e);
    return c;
}

int tl_comp_at(const tl_comp *c, const nm_sg_world *w, double x, double y, double h)
{
    for (size_t i = 0; i < w->nt; i++) {
        if (c->label[i] < 0) continue;
        double th = tri_h(w, &w->t[i], x, y);
        if (!isnan(th) && fabs(th - h) <= 0.05) return c->label[i];
    }
    return -1;
}

int tl_comp_count(const tl_comp *c) { return c->count; }

void tl_comp_free(tl_comp *c)
{
    if (!c) return;
    free(c->label);
    free(c);
}

/* Do the projections of the triangle and the square overlap on axis (ax, ay)? closed test */
static bool axis_overlap(const double *px, const double *py, double cx, double cy, double half,
                         double ax, double ay)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 3; k++) {
        double p = px[k] * ax + py[k] * ay;
        lo = fmin(lo, p), hi = fmax(hi, p);
    }
    double c = cx * ax + cy * ay, r = half * (fabs(ax) + fabs(ay));
    return hi >= c - r && lo <= c + r;
}

bool tl_cell_touched(const nm_sg_world *w, int z, long cx, long cy, bool *centre_in)
{
    const nm_sg_zone *zn = &w->zones[z];
    double cs = NM_kCS, half = cs / 2, ux = (cx + 0.5) * cs, vy = (cy + 0.5) * cs;
    bool touched = false;
    if (centre_in) *centre_in = false;
    for (size_t i = 0; i < w->nt; i++) {
        const nm_sg_group *g = &w->g[w->t[i].group];
        if ((g->role != NM_SG_WALK && g->role != NM_SG_WATER) || g->zone != z) continue;
        double px[3], py[3];
        for (int k = 0; k < 3; k++) {
            const nm_sg_vec *v = &w->v[w->t[i].v[k]];
            px[k] = zn->tf[0] * v->x + zn->tf[1];
            py[k] = zn->tf[3] + zn->tf[2] * v->y;
        }
        if (!axis_overlap(px, py, ux, vy, half, 1, 0) || !axis_overlap(px, py, ux, vy, half, 0, 1))
            continue;
        bool sep = false;
        for (int k = 0; k < 3 && !sep; k++) {
            double ex = px[(k + 1) % 3] - px[k], ey = py[(k + 1) % 3] - py[k];
            if (fabs(ex) + fabs(ey) < 1e-12) continue;
            if (!axis_overlap(px, py, ux, vy, half, -ey, ex)) sep = true;
        }
        if (sep) continue;
        touched = true;
        if (centre_in) {
            double d = cross2(px[1] - px[0], py[1] - py[0], px[2] - px[0], py[2] - py[0]);
            if (fabs(d) > 1e-12) {
                double u = cross2(ux - px[0], vy - py[0], px[2] - px[0], py[2] - py[0]) / d;
                double v = cross2(px[1] - px[0], py[1] - py[0], ux - px[0], vy - py[0]) / d;
                if (u >= 0 && v >= 0 && u + v <= 1) *centre_in = true;
            }
        }
        if (!centre_in || *centre_in) return true;
    }
    return touched;
}

size_t tl_vertical_tris(const nm_sg_world *w, int g, double *hmin, double *hmax)
{
    size_t n = 0;
    *hmin = INFINITY, *hmax = -INFINITY;
    for (size_t i = 0; i < w->nt; i++) {
        if ((int)w->t[i].group != g) continue;
        const nm_sg_vec *a = &w->v[w->t[i].v[0]], *b = &w->v[w->t[i].v[1]], *c = &w->v[w->t[i].v[2]];
        if (fabs(cross2(b->x - a->x, b->y - a->y, c->x - a->x, c->y - a->y)) > 1e-9) continue;
        n++;
        *hmin = fmin(*hmin, fmin(a->h, fmin(b->h, c->h)));
        *hmax = fmax(*hmax, fmax(a->h, fmax(b->h, c->h)));
    }
    return n;
}

int tl_group_heights(const nm_sg_world *w, int g, double *out, int cap)
{
    int n = 0;
    for (size_t i = 0; i < w->nt; i++) {
        if ((int)w->t[i].group != g) continue;
        const nm_sg_vec *a = &w->v[w->t[i].v[0]], *b = &w->v[w->t[i].v[1]], *c = &w->v[w->t[i].v[2]];
        if (fabs(cross2(b->x - a->x, b->y - a->y, c->x - a->x, c->y - a->y)) < 1e-9) continue;
        for (int k = 0; k < 3; k++) {
            double h = w->v[w->t[i].v[k]].h;
            bool dup = false;
            for (int j = 0; j < n; j++)
                if (fabs(out[j] - h) < 1e-6) dup = true;
            if (!dup && n < cap) out[n++] = h;
        }
    }
    qsort(out, (size_t)n, sizeof *out, cmp_d);
    return n;
}

void tl_obj_counts(const char *text, size_t *nv, size_t *nf, size_t *ng)
{
    *nv = *nf = *ng = 0;
    for (const char *p = text; *p;) {
        if (p[0] == 'v' && p[1] == ' ') (*nv)++;
        else if (p[0] == 'f' && p[1] == ' ') (*nf)++;
        else if (p[0] == 'g' && p[1] == ' ') (*ng)++;
        const char *q = strchr(p, '\n');
        if (!q) break;
        p = q + 1;
    }
}
