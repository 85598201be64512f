/* bake_zone.c — the whole-zone bake of one geometry zone: rasterise, seam bridge, spans,
 * regions, walls, per-region layer / Core / Ghost / Fill / clearance / medial axis, step bits,
 * strongly connected components, the wall-keep table and the records in canonical cell order.
 * Constructions are documented in README.md; every step is deterministic (parallel work writes
 * disjoint slots, per-region outputs are concatenated in region order). */
#include "bake.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAD_CELLS 2 /* empty cells around the walkable bounding box: holes never touch the edge */

typedef struct ghost_rec {
    uint32_t cell;   /* zone-local */
    uint32_t rid;
    float h;
    uint8_t flags;
    uint16_t clr, clr2d;
    uint8_t medial;
    uint32_t src_span; /* span whose component the Ghost takes; UINT32_MAX for Fill */
} ghost_rec;

typedef struct region_out {
    ghost_rec *ghosts;
    size_t nghosts;
} region_out;

typedef struct zone_work {
    const nm_zone_clean *zc;
    const nm_bake_grid_opts *opts;
    nm_grid_window win;
    nm_span_table T;
    uint32_t *rid;          /* per span */
    uint32_t nreg;
    uint8_t *dead;          /* per span */
    uint8_t *sflags;        /* per span: record flags */
    uint16_t *sclr, *sclr2d;
    uint8_t *smedial;
    uint8_t *ssteps;
    uint32_t *order, *rstart;    /* spans grouped by region */
    int32_t *bbox;               /* per region: i0, j0, i1, j1 (inclusive) */
    nm_grid_wall *walls; size_t nwalls;
    uint32_t *kw_start, *kw_list; /* per region: indices of walls kept on it */
    region_out *rout;
    nm_fall_gate gate_s;
    const nm_fall_gate *gate;    /* NULL when no drop function was given */
    int workers;
    nm_error *errs;              /* per chunk (region) errors are reported in chunk order */
} zone_work;

/* The grid operators ask the gate in window cells; the caller's function takes pixels. */
static bool gate_px(void *ctx, uint32_t from_cell, double h_from, uint32_t to_cell, double h_to)
{
    const zone_work *zw = ctx;
    uint32_t nx = (uint32_t)zw->win.nx;
    double u0 = zw->win.x0 + ((from_cell % nx) + 0.5) * NM_kCS, v0 = zw->win.y0 + ((from_cell / nx) + 0.5) * NM_kCS;
    double u1 = zw->win.x0 + ((to_cell % nx) + 0.5) * NM_kCS, v1 = zw->win.y0 + ((to_cell / nx) + 0.5) * NM_kCS;
    return zw->opts->drop_blocked(zw->opts->drop_ctx, u0, v0, h_from, u1, v1, h_to);
}

static void progress(const nm_bake_grid_opts *o, const char *step, double f)
{
    if (o && o->progress) o->progress(o->progress_ctx, step, f);
}

/* Sample points of a wall, spaced <= 0.1 px (StampWalls' rule; WallsAtLayer uses the same). */
static size_t wall_samples(const nm_grid_wall *w)
{
    double L = hypot(w->x1 - w->x0, w->y1 - w->y0);
    double n = ceil(L / (0.4 * NM_kCS));
    if (!(n >= 1.0)) n = 1.0;
    if (n > 1e7) n = 1e7;
    return (size_t)n + 1;
}

static bool wall_cell(const nm_grid_window *win, const nm_grid_wall *w, size_t k, size_t n,
                      int32_t *ci, int32_t *cj)
{
    double t = n > 1 ? (double)k / (double)(n - 1) : 0.0;
    double x = w->x0 + t * (w->x1 - w->x0), y = w->y0 + t * (w->y1 - w->y0);
    double fi = floor((x - win->x0) / NM_kCS), fj = floor((y - win->y0) / NM_kCS);
    if (fi < 0 || fj < 0 || fi >= win->nx || fj >= win->ny) return false;
    *ci = (int32_t)fi;
    *cj = (int32_t)fj;
    return true;
}

/* ---- per-region fields -------------------------------------------------------------------- */

/* Marks the cells of the region's kept walls in a local window (sealed obstacles). */
static void seal_walls(const zone_work *zw, uint32_t r, int32_t li0, int32_t lj0, int32_t lw,
                       int32_t lh, uint8_t *obst)
{
    for (uint32_t q = zw->kw_start[r]; q < zw->kw_start[r + 1]; q++) {
        const nm_grid_wall *w = &zw->walls[zw->kw_list[q]];
        size_t n = wall_samples(w);
        for (size_t k = 0; k < n; k++) {
            double t = n > 1 ? (double)k / (double)(n - 1) : 0.0;
            double x = w->x0 + t * (w->x1 - w->x0), y = w->y0 + t * (w->y1 - w->y0);
            double fi = floor((x - zw->win.x0) / NM_kCS) - li0;
            double fj = floor((y - zw->win.y0) / NM_kCS) - lj0;
            if (fi < 0 || fj < 0 || fi >= lw || fj >= lh) continue;
            obst[(size_t)fj * (size_t)lw + (size_t)fi] = 1;
        }
    }
}

static int region_chunk(void *ctx, size_t chunk)
{
    zone_work *zw = ctx;
    nm_error *err = &zw->errs[chunk];
    uint32_t r = (uint32_t)chunk; /* region index rid - 1 */
    const nm_span_table *T = &zw->T;
    int32_t nx = zw->win.nx, ny = zw->win.ny;
    int32_t halo = NM_kFieldHalo;
    int32_t li0 = zw->bbox[4 * r] - halo, lj0 = zw->bbox[4 * r + 1] - halo;
    int32_t lw = zw->bbox[4 * r + 2] - zw->bbox[4 * r] + 1 + 2 * halo;
    int32_t lh = zw->bbox[4 * r + 3] - zw->bbox[4 * r + 1] + 1 + 2 * halo;
    size_t nc = (size_t)lw * (size_t)lh;
    int rc = NM_OK;
    uint8_t *real = nm_calloc(nc, 1), *layer = nm_calloc(nc, 1), *core = nm_calloc(nc, 1);
    uint8_t *prot = nm_calloc(nc, 1), *obst = nm_calloc(nc, 1), *med = nm_calloc(nc, 1);
    uint16_t *q = nm_malloc(nc * sizeof *q), *qs = nm_malloc(nc * sizeof *qs);
    if (!real || !layer || !core || !prot || !obst || !med || !q || !qs) {
        rc = nm_fail(err, NM_ERR_NOMEM, "region %u: out of memory (%zu cells)", r + 1, nc);
        goto done;
    }
    /* layer / core candidates / protected cells from the region's spans */
    for (uint32_t a = zw->rstart[r]; a < zw->rstart[r + 1]; a++) {
        uint32_t k = zw->order[a];
        uint32_t c = T->sp_cell[k];
        size_t l = (size_t)((int32_t)(c / (uint32_t)nx) - lj0) * (size_t)lw +
                   (size_t)((int32_t)(c % (uint32_t)nx) - li0);
        real[l] = 1;
        if (T->sp_ins[k]) core[l] = 1;
        if (zw->dead[k]) prot[l] = 1;
    }
    memcpy(layer, real, nc);
    rc = nm_grid_fill_holes(lw, lh, layer, NULL, NULL, err);
    if (rc == NM_OK) rc = nm_grid_fill_holes(lw, lh, core, prot, NULL, err);
    if (rc != NM_OK) goto done;
    for (size_t l = 0; l < nc; l++) core[l] &= layer[l];
    rc = nm_grid_close_cracks(lw, lh, core, layer, prot, NULL, err);
    if (rc != NM_OK) goto done;
    /* clearance: every cell outside the region's core is an obstacle */
    for (size_t l = 0; l < nc; l++) obst[l] = core[l] ? 0 : 1;
    rc = nm_grid_clearance(lw, lh, obst, q, 1, err);
    if (rc != NM_OK) goto done;
    seal_walls(zw, r, li0, lj0, lw, lh, obst);
    rc = nm_grid_clearance(lw, lh, obst, qs, 1, err);
    if (rc == NM_OK) rc = nm_grid_medial_axis(lw, lh, obst, med, err);
    if (rc != NM_OK) goto done;

    for (uint32_t a = zw->rstart[r]; a < zw->rstart[r + 1]; a++) {
        uint32_t k = zw->order[a];
        uint32_t c = T->sp_cell[k];
        size_t l = (size_t)((int32_t)(c / (uint32_t)nx) - lj0) * (size_t)lw +
                   (size_t)((int32_t)(c % (uint32_t)nx) - li0);
        uint8_t f = zw->dead[k] ? NM_GRID_DEAD : 0;
        if (core[l]) f |= NM_GRID_CORE | NM_GRID_WALK;
        zw->sflags[k] = f;
        zw->sclr[k] = q[l];
        zw->sclr2d[k] = (uint16_t)(q[l] - qs[l]);
        zw->smedial[k] = med[l];
    }
    /* Ghost / Fill: layer cells without a span of the region */
    size_t ng = 0;
    for (size_t l = 0; l < nc; l++) ng += layer[l] && !real[l];
    if (ng) {
        region_out *ro = &zw->rout[r];
        ro->ghosts = nm_malloc(ng * sizeof *ro->ghosts);
        if (!ro->ghosts) { rc = nm_fail(err, NM_ERR_NOMEM, "region %u: ghosts", r + 1); goto done; }
        for (int32_t j = 0; j < lh; j++)
            for (int32_t i = 0; i < lw; i++) {
                size_t l = (size_t)j * (size_t)lw + (size_t)i;
                if (!layer[l] || real[l]) continue;
                int32_t gi = i + li0, gj = j + lj0;
                if (gi < 0 || gj < 0 || gi >= nx || gj >= ny) continue; /* cannot happen: holes are enclosed */
                /* one ring of propagation: the mean of the region's spans in the 8 neighbours,
                 * the component taken from the first of them (scan order) */
                double sum = 0.0;
                uint32_t cnt = 0, src = UINT32_MAX;
                for (int dj = -1; dj <= 1; dj++)
                    for (int di = -1; di <= 1; di++) {
                        if (!di && !dj) continue;
                        int32_t ni = gi + di, nj = gj + dj;
                        if (ni < 0 || nj < 0 || ni >= nx || nj >= ny) continue;
                        uint32_t first, n = nm_span_cell_spans(T, (uint32_t)nj * (uint32_t)nx + (uint32_t)ni, &first);
                        for (uint32_t s = first; s < first + n; s++)
                            if (zw->rid[s] == r + 1) {
                                sum += T->sp_h[s];
                                cnt++;
                                if (src == UINT32_MAX) src = s;
                            }
                    }
                ghost_rec *g = &ro->ghosts[ro->nghosts++];
                g->cell = (uint32_t)gj * (uint32_t)nx + (uint32_t)gi;
                g->rid = r + 1;
                g->h = cnt ? (float)(sum / cnt) : 0.0f;
                g->flags = (uint8_t)((cnt ? NM_GRID_GHOST : NM_GRID_FILL) |
                                     (core[l] ? NM_GRID_CORE | NM_GRID_WALK : 0));
                g->clr = q[l];
                g->clr2d = (uint16_t)(q[l] - qs[l]);
                g->medial = med[l];
                g->src_span = src;
            }
    }
done:
    nm_free(real); nm_free(layer); nm_free(core); nm_free(prot); nm_free(obst); nm_free(med);
    nm_free(q); nm_free(qs);
    if (rc != NM_OK) nm_error_prefix(err, "region %u", r + 1);
    return rc;
}

/* ---- step bits and the span graph ---------------------------------------------------------- */

typedef struct span_range_ctx {
    zone_work *zw;
    size_t per;
    uint32_t *deg;      /* pass 1 */
    const uint32_t *off; uint32_t *adj; /* pass 2 */
} span_range_ctx;

static const int kDx8[8] = {1, 0, -1, 0, 1, -1, -1, 1};
static const int kDy8[8] = {0, 1, 0, -1, 1, 1, -1, -1};

/* Edges of span k: spans of the same region in the 8 neighbour columns that RiseOk accepts;
 * a diagonal needs both orthogonal columns to hold a span of the region (no corner cutting). */
static uint32_t span_edges(const zone_work *zw, uint32_t k, uint32_t *out)
{
    const nm_span_table *T = &zw->T;
    uint32_t c = T->sp_cell[k], nx = (uint32_t)T->win.nx;
    int32_t i = (int32_t)(c % nx), j = (int32_t)(c / nx);
    uint32_t r = zw->rid[k], n = 0;
    bool orth[4] = {false, false, false, false};
    for (int d = 0; d < 8; d++) {
        int32_t ni = i + kDx8[d], nj = j + kDy8[d];
        if (ni < 0 || nj < 0 || ni >= T->win.nx || nj >= T->win.ny) continue;
        if (d >= 4) {
            /* diagonal (dx, dy): orthogonal columns (dx, 0) and (0, dy) */
            int ox = kDx8[d] > 0 ? 0 : 2, oy = kDy8[d] > 0 ? 1 : 3;
            if (!orth[ox] || !orth[oy]) continue;
        }
        uint32_t first, cnt = nm_span_cell_spans(T, (uint32_t)nj * nx + (uint32_t)ni, &first);
        for (uint32_t s = first; s < first + cnt; s++) {
            if (zw->rid[s] != r) continue;
            if (d < 4) orth[d] = true;
            if (nm_grid_rise_ok(T, zw->gate, i, j, kDx8[d], kDy8[d], T->sp_h[k], T->sp_h[s])) {
                if (out) out[n] = s;
                n++;
            }
        }
    }
    return n;
}

static int steps_chunk(void *ctx, size_t chunk)
{
    span_range_ctx *s = ctx;
    zone_work *zw = s->zw;
    size_t a = chunk * s->per, b = a + s->per;
    if (b > zw->T.nspans) b = zw->T.nspans;
    for (size_t k = a; k < b; k++) {
        zw->ssteps[k] = nm_grid_step_bits(&zw->T, zw->gate, zw->rid, (uint32_t)k);
        s->deg[k] = span_edges(zw, (uint32_t)k, NULL);
    }
    return NM_OK;
}

static int edges_chunk(void *ctx, size_t chunk)
{
    span_range_ctx *s = ctx;
    zone_work *zw = s->zw;
    size_t a = chunk * s->per, b = a + s->per;
    if (b > zw->T.nspans) b = zw->T.nspans;
    for (size_t k = a; k < b; k++) span_edges(zw, (uint32_t)k, s->adj + s->off[k]);
    return NM_OK;
}

/* ---- records -------------------------------------------------------------------------------- */

typedef struct rec_cols {
    nm_grid_rec rec;
    uint32_t scc;
    uint8_t seg, medial;
    uint16_t clr2d;
} rec_cols;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void zw_free(zone_work *zw)
{
    nm_span_table_free(&zw->T);
    nm_free(zw->rid); nm_free(zw->dead); nm_free(zw->sflags); nm_free(zw->sclr);
    nm_free(zw->sclr2d); nm_free(zw->smedial); nm_free(zw->ssteps);
    nm_free(zw->order); nm_free(zw->rstart); nm_free(zw->bbox); nm_free(zw->walls);
    nm_free(zw->kw_start); nm_free(zw->kw_list);
    if (zw->rout)
        for (uint32_t r = 0; r < zw->nreg; r++) nm_free(zw->rout[r].ghosts);
    nm_free(zw->rout);
    nm_free(zw->errs);
}

void nm_bake_grid_zone_free(nm_bake_grid_zone *z)
{
    if (!z) return;
    nm_free(z->name); nm_free(z->cell_start); nm_free(z->recs); nm_free(z->scc);
    nm_free(z->steps2x); nm_free(z->seg); nm_free(z->tax); nm_free(z->medial); nm_free(z->clr2d);
    if (z->regions)
        for (uint32_t r = 0; r < z->global_regions; r++) nm_free((void *)z->regions[r].edges);
    nm_free(z->regions);
    nm_free(z->wall_keys); nm_free(z->wall_row); nm_free(z->wall_rids);
    nm_free(z->links); nm_free(z->opens);
    memset(z, 0, sizeof *z);
}

nm_grid_zone_src nm_bake_grid_src(const nm_bake_grid_zone *z)
{
    nm_grid_zone_src s;
    memset(&s, 0, sizeof s);
    s.name = z->name;
    s.x0 = z->gx0 * NM_kCS;
    s.y0 = z->gy0 * NM_kCS;
    s.w = z->w;
    s.h = z->h;
    s.global_regions = z->global_regions;
    s.cell_start = z->cell_start;
    s.recs = z->recs;
    return s;
}

int nm_bake_links(const nm_zone_clean *zc, nm_bake_grid_zone *z, nm_error *err); /* bake_links.c */

#define NOMEM(what) do { rc = nm_fail(err, NM_ERR_NOMEM, "%s: %s: out of memory", zname, what); goto fail; } while (0)

int nm_bake_grid_zone_bake(const nm_zone_clean *zc, const nm_bake_grid_opts *opts,
                           nm_bake_grid_zone *out, nm_error *err)
{
    nm_bake_grid_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!opts) opts = &dflt;
    if (!zc || !out) return nm_fail(err, NM_ERR_ARG, "bake: no zone");
    const nm_pack *P = zc->pack;
    const char *zname = P->zones[zc->zone_index].name;
    zone_work zw;
    memset(&zw, 0, sizeof zw);
    zw.zc = zc;
    zw.opts = opts;
    zw.workers = opts->workers;
    if (opts->drop_blocked) {
        zw.gate_s.fn = gate_px;
        zw.gate_s.ctx = &zw;
        zw.gate = &zw.gate_s;
    }
    nm_bake_grid_zone Z;
    memset(&Z, 0, sizeof Z);
    nm_grid_samples S;
    memset(&S, 0, sizeof S);
    uint8_t *walk = NULL, *bnd = NULL;
    uint32_t *deg = NULL, *off = NULL, *adj = NULL, *gmap = NULL, *cnt = NULL;
    rec_cols *tmp = NULL;
    nm_scc scc;
    memset(&scc, 0, sizeof scc);
    int rc = NM_OK;

    /* zone rectangle on the global cell grid: the walkable triangles' box plus a margin */
    double minu = INFINITY, minv = INFINITY, maxu = -INFINITY, maxv = -INFINITY;
    for (uint32_t t = 0; t < zc->tri_count; t++) {
        if (!nm_zone_walkable(zc, t)) continue;
        for (int k = 0; k < 3; k++) {
            const nm_vertex *v = nm_zone_vertex(zc, t, k);
            if (v->u < minu) minu = v->u;
            if (v->u > maxu) maxu = v->u;
            if (v->v < minv) minv = v->v;
            if (v->v > maxv) maxv = v->v;
        }
    }
    if (!(minu <= maxu)) return nm_fail(err, NM_ERR_STATE, "%s: no walkable triangles", zname);
    double gx0 = floor(minu / NM_kCS) - PAD_CELLS, gy0 = floor(minv / NM_kCS) - PAD_CELLS;
    double gx1 = floor(maxu / NM_kCS) + 1 + PAD_CELLS, gy1 = floor(maxv / NM_kCS) + 1 + PAD_CELLS;
    if (gx0 < -2e9 || gy0 < -2e9 || gx1 > 2e9 || gy1 > 2e9 || (gx1 - gx0) * (gy1 - gy0) > 2.0e9)
        return nm_fail(err, NM_ERR_ARG, "%s: zone rectangle too large for the grid (%.0f x %.0f cells)",
                       zname, gx1 - gx0, gy1 - gy0);
    Z.gx0 = (int32_t)gx0;
    Z.gy0 = (int32_t)gy0;
    Z.w = (int32_t)(gx1 - gx0);
    Z.h = (int32_t)(gy1 - gy0);
    Z.zone_id = zc->zone_id;
    size_t zl = strlen(zname);
    Z.name = nm_malloc(zl + 1);
    if (!Z.name) NOMEM("name");
    memcpy(Z.name, zname, zl + 1);
    zw.win.x0 = Z.gx0 * NM_kCS;
    zw.win.y0 = Z.gy0 * NM_kCS;
    zw.win.nx = Z.w;
    zw.win.ny = Z.h;
    size_t ncell = (size_t)Z.w * (size_t)Z.h;
    Z.stats.cells = ncell;

    /* 1. rasterise, seam bridge, spans */
    progress(opts, "rasterise", 0.0);
    walk = nm_malloc(zc->tri_count ? zc->tri_count : 1);
    bnd = nm_malloc(zc->tri_count ? zc->tri_count : 1);
    if (!walk || !bnd) NOMEM("flags");
    for (uint32_t t = 0; t < zc->tri_count; t++) {
        walk[t] = nm_zone_walkable(zc, t);
        bnd[t] = nm_zone_boundary(zc, t);
    }
    nm_grid_mesh mesh = {(const float *)zc->verts, zc->vert_count, zc->tri_v, zc->tri_count, walk};
    rc = nm_grid_rasterize(&zw.win, &mesh, &S, err);
    if (rc != NM_OK) goto fail_op;
    {
        nm_span_table pre;
        memset(&pre, 0, sizeof pre);
        rc = nm_grid_build_spans(&zw.win, &S, &pre, err);
        if (rc == NM_OK) rc = nm_grid_append_seam_bridge(&pre, &S, err);
        nm_span_table_free(&pre);
        if (rc != NM_OK) goto fail_op;
    }
    progress(opts, "spans", 0.15);
    rc = nm_grid_build_spans(&zw.win, &S, &zw.T, err);
    nm_grid_samples_free(&S);
    if (rc != NM_OK) goto fail_op;
    const nm_span_table *T = &zw.T;
    uint32_t ns = T->nspans;
    Z.stats.spans = ns;

    /* 2. regions */
    progress(opts, "regions", 0.25);
    zw.rid = nm_malloc((size_t)ns * sizeof *zw.rid + 4);
    if (!zw.rid) NOMEM("regions");
    rc = nm_grid_label_regions(T, zw.rid, &zw.nreg, err);
    if (rc != NM_OK) goto fail_op;
    Z.global_regions = zw.nreg;

    /* 3. walls -> Dead */
    progress(opts, "walls", 0.3);
    rc = nm_grid_bake_walls(&zw.win, &mesh, bnd, &zw.walls, &zw.nwalls, err);
    if (rc != NM_OK) goto fail_op;
    zw.dead = nm_calloc((size_t)ns + 1, 1);
    if (!zw.dead) NOMEM("dead");
    rc = nm_grid_stamp_walls(T, zw.walls, zw.nwalls, zw.dead, NULL, err);
    if (rc != NM_OK) goto fail_op;
    Z.stats.walls = zw.nwalls;

    /* 4. spans grouped by region (stable counting sort) and region boxes */
    zw.rstart = nm_calloc((size_t)zw.nreg + 2, sizeof *zw.rstart);
    zw.order = nm_malloc((size_t)ns * sizeof *zw.order + 4);
    zw.bbox = nm_malloc(((size_t)zw.nreg * 4 + 1) * sizeof *zw.bbox);
    if (!zw.rstart || !zw.order || !zw.bbox) NOMEM("region lists");
    for (uint32_t r = 0; r < zw.nreg; r++) {
        zw.bbox[4 * r] = INT32_MAX; zw.bbox[4 * r + 1] = INT32_MAX;
        zw.bbox[4 * r + 2] = -1; zw.bbox[4 * r + 3] = -1;
    }
    for (uint32_t k = 0; k < ns; k++) {
        uint32_t r = zw.rid[k] - 1;
        zw.rstart[r + 1]++;
        int32_t i = (int32_t)(T->sp_cell[k] % (uint32_t)Z.w), j = (int32_t)(T->sp_cell[k] / (uint32_t)Z.w);
        int32_t *b = &zw.bbox[4 * r];
        if (i < b[0]) b[0] = i;
        if (j < b[1]) b[1] = j;
        if (i > b[2]) b[2] = i;
        if (j > b[3]) b[3] = j;
    }
    for (uint32_t r = 0; r < zw.nreg; r++) zw.rstart[r + 1] += zw.rstart[r];
    {
        uint32_t *fill = nm_malloc(((size_t)zw.nreg + 1) * sizeof *fill);
        if (!fill) NOMEM("region lists");
        memcpy(fill, zw.rstart, ((size_t)zw.nreg + 1) * sizeof *fill);
        for (uint32_t k = 0; k < ns; k++) zw.order[fill[zw.rid[k] - 1]++] = k;
        nm_free(fill);
    }

    /* 5. FWAL (WallsAtLayer): wall w is kept on region r when some sample cell of w holds a span
     * of r with |h - hbar| <= kMcHBand */
    progress(opts, "wall keep", 0.35);
    {
        Z.wall_count = (uint32_t)zw.nwalls;
        Z.wall_keys = nm_malloc(((size_t)zw.nwalls + 1) * sizeof *Z.wall_keys);
        Z.wall_row = nm_calloc((size_t)zw.nwalls + 1, sizeof *Z.wall_row);
        uint32_t *tmpr = NULL;
        size_t cap = 0, nk = 0;
        uint32_t *rr = NULL;
        size_t rcap = 0;
        if (!Z.wall_keys || !Z.wall_row) NOMEM("wall table");
        for (size_t w = 0; w < zw.nwalls; w++) {
            const nm_grid_wall *W = &zw.walls[w];
            Z.wall_keys[w] = 3u * (uint64_t)W->tri + W->edge;
            double hbar = (W->h0 + W->h1) / 2.0;
            size_t n = wall_samples(W), m = 0;
            for (size_t k = 0; k < n; k++) {
                int32_t ci, cj;
                if (!wall_cell(&zw.win, W, k, n, &ci, &cj)) continue;
                uint32_t first, c = nm_span_cell_spans(T, (uint32_t)cj * (uint32_t)Z.w + (uint32_t)ci, &first);
                for (uint32_t s = first; s < first + c; s++) {
                    if (fabs(T->sp_h[s] - hbar) > NM_kMcHBand) continue;
                    if (m == rcap) {
                        size_t nc2 = rcap ? rcap * 2 : 64;
                        uint32_t *p2 = nm_realloc(rr, nc2 * sizeof *p2);
                        if (!p2) { nm_free(rr); nm_free(tmpr); NOMEM("wall table"); }
                        rr = p2; rcap = nc2;
                    }
                    rr[m++] = zw.rid[s];
                }
            }
            qsort(rr, m, sizeof *rr, cmp_u32);
            size_t u = 0;
            for (size_t k = 0; k < m; k++)
                if (u == 0 || rr[u - 1] != rr[k]) rr[u++] = rr[k];
            if (nk + u > cap) {
                size_t nc2 = (nk + u) * 2 + 64;
                uint32_t *p2 = nm_realloc(tmpr, nc2 * sizeof *p2);
                if (!p2) { nm_free(rr); nm_free(tmpr); NOMEM("wall table"); }
                tmpr = p2; cap = nc2;
            }
            memcpy(tmpr + nk, rr, u * sizeof *rr);
            nk += u;
            Z.wall_row[w + 1] = (uint32_t)nk;
        }
        nm_free(rr);
        Z.wall_rids = tmpr ? tmpr : nm_malloc(4);
        if (!Z.wall_rids) NOMEM("wall table");
        Z.stats.walls_kept = nk;
        /* inverse: per region, the walls kept on it (wall order) */
        zw.kw_start = nm_calloc((size_t)zw.nreg + 2, sizeof *zw.kw_start);
        zw.kw_list = nm_malloc((nk + 1) * sizeof *zw.kw_list);
        if (!zw.kw_start || !zw.kw_list) NOMEM("wall table");
        for (size_t k = 0; k < nk; k++) zw.kw_start[Z.wall_rids[k]]++;
        for (uint32_t r = 0; r < zw.nreg; r++) zw.kw_start[r + 1] += zw.kw_start[r];
        uint32_t *fill = nm_malloc(((size_t)zw.nreg + 1) * sizeof *fill);
        if (!fill) NOMEM("wall table");
        memcpy(fill, zw.kw_start, ((size_t)zw.nreg + 1) * sizeof *fill);
        for (size_t w = 0; w < zw.nwalls; w++)
            for (uint32_t k = Z.wall_row[w]; k < Z.wall_row[w + 1]; k++)
                zw.kw_list[fill[Z.wall_rids[k] - 1]++] = (uint32_t)w;
        nm_free(fill);
    }

    /* 6. per region: layer, Core, Ghost / Fill, clearance, sealed clearance, medial axis */
    progress(opts, "regions fields", 0.4);
    zw.sflags = nm_calloc((size_t)ns + 1, 1);
    zw.sclr = nm_calloc((size_t)ns + 1, sizeof *zw.sclr);
    zw.sclr2d = nm_calloc((size_t)ns + 1, sizeof *zw.sclr2d);
    zw.smedial = nm_calloc((size_t)ns + 1, 1);
    zw.ssteps = nm_calloc((size_t)ns + 1, 1);
    zw.rout = nm_calloc((size_t)zw.nreg + 1, sizeof *zw.rout);
    zw.errs = nm_calloc((size_t)zw.nreg + 1, sizeof *zw.errs);
    if (!zw.sflags || !zw.sclr || !zw.sclr2d || !zw.smedial || !zw.ssteps || !zw.rout || !zw.errs)
        NOMEM("fields");
    {
        int wk = nm_workers_for((size_t)ns, opts->workers);
        rc = nm_parallel_chunks(zw.nreg, wk, region_chunk, &zw);
        if (rc != NM_OK) {
            for (uint32_t r = 0; r < zw.nreg; r++)
                if (zw.errs[r].code) { *err = zw.errs[r]; break; }
            goto fail_op;
        }
    }

    /* 7. step bits and the directed span graph */
    progress(opts, "steps", 0.6);
    deg = nm_calloc((size_t)ns + 1, sizeof *deg);
    off = nm_calloc((size_t)ns + 1, sizeof *off);
    if (!deg || !off) NOMEM("span graph");
    {
        span_range_ctx sc = {&zw, 16384, deg, NULL, NULL};
        size_t chunks = ((size_t)ns + sc.per - 1) / sc.per;
        int wk = nm_workers_for((size_t)ns, opts->workers);
        rc = nm_parallel_chunks(chunks, wk, steps_chunk, &sc);
        if (rc != NM_OK) goto fail_op;
        uint64_t tot = 0;
        for (uint32_t k = 0; k < ns; k++) { off[k] = (uint32_t)tot; tot += deg[k]; }
        if (tot > UINT32_MAX) { rc = nm_fail(err, NM_ERR_ARG, "%s: span graph too large", zname); goto fail; }
        off[ns] = (uint32_t)tot;
        nm_free(deg); deg = NULL;
        adj = nm_malloc((size_t)tot * sizeof *adj + 4);
        if (!adj) NOMEM("span graph");
        sc.off = off;
        sc.adj = adj;
        rc = nm_parallel_chunks(chunks, wk, edges_chunk, &sc);
        if (rc != NM_OK) goto fail_op;
    }
    progress(opts, "scc", 0.7);
    {
        nm_graph g = {ns, off, adj};
        rc = nm_grid_scc(&g, &scc, err);
        if (rc != NM_OK) goto fail_op;
        nm_free(adj); adj = NULL;
        nm_free(off); off = NULL;
    }
    /* per-region renumbering: local component ids in order of each component's first span in
     * span order (the global numbering is by smallest node, so the order is kept) */
    gmap = nm_calloc((size_t)scc.ncomp + 1, sizeof *gmap);
    Z.regions = nm_calloc((size_t)zw.nreg + 1, sizeof *Z.regions);
    if (!gmap || !Z.regions) NOMEM("components");
    {
        uint32_t *pairs = NULL;
        size_t pcap = 0;
        uint32_t *clist = nm_malloc(((size_t)scc.ncomp + 1) * sizeof *clist);
        if (!clist) NOMEM("components");
        for (uint32_t r = 0; r < zw.nreg; r++) {
            uint32_t nloc = 0;
            for (uint32_t a = zw.rstart[r]; a < zw.rstart[r + 1]; a++) {
                uint32_t c = scc.comp[zw.order[a]];
                if (!gmap[c]) { gmap[c] = ++nloc; clist[nloc - 1] = c; }
            }
            nm_bnvf_region_src *R = &Z.regions[r];
            R->rid = r + 1;
            R->n_scc = nloc;
            Z.stats.components += nloc;
            size_t np = 0;
            /* DAG edges of the region's components: visit components in local order once */
            for (uint32_t a = 0; a < nloc; a++) {
                uint32_t c = clist[a];
                for (uint32_t e = scc.dag_off[c - 1]; e < scc.dag_off[c]; e++) {
                    if (np + 1 > pcap) {
                        size_t nc2 = pcap ? pcap * 2 : 256;
                        uint32_t *p2 = nm_realloc(pairs, nc2 * 2 * sizeof *p2);
                        if (!p2) { nm_free(pairs); nm_free(clist); NOMEM("components"); }
                        pairs = p2; pcap = nc2;
                    }
                    pairs[2 * np] = gmap[c];
                    pairs[2 * np + 1] = gmap[scc.dag_adj[e]];
                    np++;
                }
            }
            qsort(pairs, np, 2 * sizeof *pairs, cmp_pair);
            size_t u = 0;
            for (size_t k = 0; k < np; k++)
                if (!u || pairs[2 * (u - 1)] != pairs[2 * k] || pairs[2 * (u - 1) + 1] != pairs[2 * k + 1]) {
                    pairs[2 * u] = pairs[2 * k];
                    pairs[2 * u + 1] = pairs[2 * k + 1];
                    u++;
                }
            uint32_t *ed = nm_malloc(u * 2 * sizeof *ed + 4);
            if (!ed) { nm_free(pairs); nm_free(clist); NOMEM("components"); }
            memcpy(ed, pairs, u * 2 * sizeof *ed);
            R->edges = ed;
            R->n_edges = (uint32_t)u;
        }
        nm_free(pairs);
        nm_free(clist);
    }

    /* 8. records: spans and Ghost / Fill per cell, canonical order, columns carried along */
    progress(opts, "records", 0.85);
    cnt = nm_calloc(ncell + 1, sizeof *cnt);
    if (!cnt) NOMEM("records");
    size_t nrec = ns;
    for (uint32_t k = 0; k < ns; k++) cnt[T->sp_cell[k] + 1]++;
    for (uint32_t r = 0; r < zw.nreg; r++) {
        nrec += zw.rout[r].nghosts;
        for (size_t g = 0; g < zw.rout[r].nghosts; g++) cnt[zw.rout[r].ghosts[g].cell + 1]++;
    }
    for (size_t c = 0; c < ncell; c++) cnt[c + 1] += cnt[c];
    Z.cell_start = cnt;
    cnt = NULL;
    tmp = nm_malloc((nrec + 1) * sizeof *tmp);
    uint32_t *fillp = nm_malloc((ncell + 1) * sizeof *fillp);
    if (!tmp || !fillp) { nm_free(fillp); NOMEM("records"); }
    memcpy(fillp, Z.cell_start, (ncell + 1) * sizeof *fillp);
    for (uint32_t k = 0; k < ns; k++) {
        rec_cols *o = &tmp[fillp[T->sp_cell[k]]++];
        o->rec.cell = (int32_t)T->sp_cell[k];
        o->rec.rid = zw.rid[k];
        o->rec.h = T->sp_h[k];
        o->rec.clr = zw.sclr[k];
        o->rec.flags = zw.sflags[k];
        o->rec.steps = zw.ssteps[k];
        o->scc = gmap[scc.comp[k]];
        o->clr2d = zw.sclr2d[k];
        o->medial = zw.smedial[k];
        /* facade segment bits: orthogonal direction i with a forbidden step across a face column */
        uint8_t sg = 0;
        if (o->rec.steps) {
            uint32_t c = T->sp_cell[k];
            int32_t ci = (int32_t)(c % (uint32_t)Z.w), cj = (int32_t)(c / (uint32_t)Z.w);
            for (int d = 0; d < 2; d++) {
                if (!(o->rec.steps & (3u << (2 * d)))) continue;
                if (nm_grid_raster_face(T, ci, cj, nm_grid_step_dx[d], nm_grid_step_dy[d], 0) ||
                    nm_grid_raster_face(T, ci, cj, nm_grid_step_dx[d], nm_grid_step_dy[d], 1))
                    sg |= (uint8_t)(1u << d);
            }
        }
        o->seg = sg;
    }
    for (uint32_t r = 0; r < zw.nreg; r++)
        for (size_t g = 0; g < zw.rout[r].nghosts; g++) {
            const ghost_rec *G = &zw.rout[r].ghosts[g];
            rec_cols *o = &tmp[fillp[G->cell]++];
            o->rec.cell = (int32_t)G->cell;
            o->rec.rid = G->rid;
            o->rec.h = (G->flags & NM_GRID_FILL) ? 0.0f : G->h;
            o->rec.clr = G->clr;
            o->rec.flags = G->flags;
            o->rec.steps = 0;
            o->scc = G->src_span == UINT32_MAX ? 0 : gmap[scc.comp[G->src_span]];
            o->clr2d = G->clr2d;
            o->medial = G->medial;
            o->seg = 0;
            if (G->flags & NM_GRID_FILL) Z.stats.fills++; else Z.stats.ghosts++;
        }
    nm_free(fillp);
    /* canonical order inside each cell (insertion sort: a cell holds a handful of records) */
    for (size_t c = 0; c < ncell; c++) {
        uint32_t a = Z.cell_start[c], b = Z.cell_start[c + 1];
        for (uint32_t i = a + 1; i < b; i++) {
            rec_cols x = tmp[i];
            uint32_t j = i;
            while (j > a && nm_grid_layer_cmp(&tmp[j - 1].rec, &x.rec) > 0) { tmp[j] = tmp[j - 1]; j--; }
            tmp[j] = x;
        }
    }
    Z.rec_count = nrec;
    Z.recs = nm_malloc((nrec + 1) * sizeof *Z.recs);
    Z.scc = nm_malloc((nrec + 1) * sizeof *Z.scc);
    Z.clr2d = nm_malloc((nrec + 1) * sizeof *Z.clr2d);
    Z.steps2x = nm_calloc(nrec + 1, 1);
    Z.tax = nm_calloc(nrec + 1, 1);
    Z.seg = nm_malloc(nrec + 1);
    Z.medial = nm_malloc(nrec + 1);
    if (!Z.recs || !Z.scc || !Z.clr2d || !Z.steps2x || !Z.tax || !Z.seg || !Z.medial) NOMEM("records");
    for (size_t i = 0; i < nrec; i++) {
        Z.recs[i] = tmp[i].rec;
        Z.scc[i] = tmp[i].scc;
        Z.clr2d[i] = tmp[i].clr2d;
        Z.seg[i] = tmp[i].seg;
        Z.medial[i] = tmp[i].medial;
        uint8_t f = tmp[i].rec.flags;
        if (f & NM_GRID_DEAD) Z.stats.dead++;
        if (f & NM_GRID_WALK) Z.stats.walk++;
        if (f & NM_GRID_CORE) Z.stats.core++;
    }
    nm_free(tmp); tmp = NULL;
    nm_free(gmap); gmap = NULL;
    nm_scc_free(&scc);
    zw_free(&zw);
    nm_free(walk); nm_free(bnd);

    /* 9. off-mesh links -> FLNK / FOPN */
    progress(opts, "links", 0.95);
    rc = nm_bake_links(zc, &Z, err);
    if (rc != NM_OK) { nm_bake_grid_zone_free(&Z); return rc; }
    progress(opts, "done", 1.0);
    *out = Z;
    return NM_OK;

fail_op:
    nm_error_prefix(err, "%s: grid bake", zname);
fail:
    nm_grid_samples_free(&S);
    nm_free(walk); nm_free(bnd); nm_free(deg); nm_free(off); nm_free(adj); nm_free(gmap);
    nm_free(cnt); nm_free(tmp);
    nm_scc_free(&scc);
    zw_free(&zw);
    nm_bake_grid_zone_free(&Z);
    return rc;
}
