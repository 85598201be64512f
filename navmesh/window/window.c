/* window.c — buildWindow (design article 建窗): decodes the grid and sidecar of one rectangle of
 * a zone, expands the records of the picked region into raster layers and a span table, selects
 * the boundary edges the region keeps (FWAL), stamps authored no-go polygons and runtime discs,
 * restores forbidden steps and facade segments, picks the seed span, lands the off-mesh links,
 * closes the reach set over them and merges walls and facades into the blocker table.
 *
 * Temporaries are released at their last use, in the order of 建窗的内存, and the peak of the
 * bytes held is recorded. Nothing here depends on the worker count. */
#include "window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../zone/zone.h"

/* ---- byte accounting (建窗的内存) ---- */
typedef struct wmem {
    size_t now, peak;
} wmem;

static void *walloc(wmem *m, size_t count, size_t size)
{
    void *p = nm_calloc(count ? count : 1, size);
    if (p) {
        m->now += count * size;
        if (m->now > m->peak) m->peak = m->now;
    }
    return p;
}

static void wrelease(wmem *m, void **p, size_t bytes)
{
    if (*p) {
        nm_free(*p);
        *p = NULL;
        m->now -= bytes <= m->now ? bytes : m->now;
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void nm_window_free(nm_window *w)
{
    if (!w) return;
    nm_free(w->lay);
    nm_free(w->core);
    nm_free(w->dist);
    nm_free(w->medial);
    nm_free(w->stepbits);
    nm_free(w->step_edges);
    nm_span_table_free(&w->spans);
    nm_free(w->sp_bits);
    nm_free(w->sp_scc);
    nm_free(w->sp_rid);
    nm_free(w->links);
    nm_free(w->segs);
    memset(w, 0, sizeof *w);
}

/* 建窗 step 1: window size rounded up, global origin on the global cell lines. */
int nm_window_frame_px(double x0, double y0, double x1, double y1, nm_window_request *req,
                       nm_error *err)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1) || x1 <= x0 || y1 <= y0)
        return nm_fail(err, NM_ERR_ARG, "window: empty or non-finite rectangle");
    double nx = ceil((x1 - x0) / NM_kCS), ny = ceil((y1 - y0) / NM_kCS);
    if (nx * ny > (double)NM_GRID_MAX_CELLS || nx > INT32_MAX || ny > INT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "window: %.0f x %.0f cells is too large", nx, ny);
    req->gx0 = llround(x0 / NM_kCS);
    req->gy0 = llround(y0 / NM_kCS);
    req->nx = (int32_t)nx;
    req->ny = (int32_t)ny;
    return NM_OK;
}

/* Even-odd rule: a self-crossing hand-drawn ring still has a definite inside. */
bool nm_nogo_poly_contains(const nm_nogo_poly *p, double x, double y)
{
    bool in = false;
    for (uint32_t i = 0, j = p->n - 1; i < p->n; j = i++) {
        double xi = p->xy[2 * i], yi = p->xy[2 * i + 1];
        double xj = p->xy[2 * j], yj = p->xy[2 * j + 1];
        if ((yi > y) != (yj > y)) {
            double xc = xj + (y - yj) * (xi - xj) / (yi - yj);
            if (x < xc) in = !in;
        }
    }
    return in;
}

/* Effective record after FOPN (解码瓦片 step 6): only non-Core records are looked up; a hit ORs
 * its flags in and keeps the larger of the two clearances. Runs after the sealed clearance was
 * written back, so an opened cell is not pushed back to 0. */
static void open_record(const nm_window_request *req, const nm_grid_rec *r,
                        const nm_span_fields *f, int64_t gx, int64_t gy, uint8_t *flags,
                        uint16_t *clr)
{
    *flags = r->flags;
    *clr = f->clr2;
    if ((r->flags & NM_GRID_CORE) || !req->fields || req->fields->open_count == 0) return;
    const nm_bnvf_open *o = nm_bnvf_find_open(req->fields, req->zone_id, (int32_t)gx,
                                              (int32_t)gy, r->h);
    if (o) {
        *flags = (uint8_t)(*flags | o->flags);
        if (o->clr > *clr) *clr = o->clr;
    }
}

typedef struct wall_src {
    double ax, ay, bx, by;
    uint64_t key;
} wall_src;

typedef struct wall_ctx {
    const nm_zone_clean *zc;
    double x0, y0, x1, y1; /* window grown by the wall pad, px */
    wall_src *w;
    size_t n, cap;
    wmem *m;
    int rc;
} wall_ctx;

static int collect_tri_walls(void *ctx, uint32_t t)
{
    wall_ctx *c = (wall_ctx *)ctx;
    uint8_t b = nm_zone_boundary(c->zc, t);
    for (int k = 0; k < 3; k++) {
        if (!(b & (1u << k))) continue;
        const nm_vertex *a = nm_zone_vertex(c->zc, t, k), *e = nm_zone_vertex(c->zc, t, (k + 1) % 3);
        double lx = fmin(a->u, e->u), hx = fmax(a->u, e->u);
        double ly = fmin(a->v, e->v), hy = fmax(a->v, e->v);
        if (hx < c->x0 || lx > c->x1 || hy < c->y0 || ly > c->y1) continue;
        if (c->n == c->cap) {
            size_t nc = c->cap ? 2 * c->cap : 64;
            wall_src *nw = (wall_src *)nm_realloc(c->w, nc * sizeof *nw);
            if (!nw) {
                c->rc = NM_ERR_NOMEM;
                return 1;
            }
            c->m->now += (nc - c->cap) * sizeof *nw;
            if (c->m->now > c->m->peak) c->m->peak = c->m->now;
            c->w = nw;
            c->cap = nc;
        }
        c->w[c->n++] = (wall_src){a->u, a->v, e->u, e->v, 3 * (uint64_t)t + (uint64_t)k};
    }
    return 0;
}

static int cmp_wall(const void *a, const void *b)
{
    uint64_t x = ((const wall_src *)a)->key, y = ((const wall_src *)b)->key;
    return x < y ? -1 : x > y;
}

/* Landing span of an off-mesh link end: the region's span of the cell nearest in height to h
 * within kMcHBand (lower index on ties); UINT32_MAX when none. */
static uint32_t landing_span(const nm_window *w, uint32_t c, double h)
{
    uint32_t first, n = nm_span_cell_spans(&w->spans, c, &first), best = UINT32_MAX;
    double bd = 0;
    for (uint32_t k = first; k < first + n; k++) {
        if (!(w->sp_bits[k] & NM_SP_VIS3)) continue;
        double d = fabs((double)w->spans.sp_h[k] - h);
        if (d <= NM_kMcHBand && (best == UINT32_MAX || d < bd)) {
            best = k;
            bd = d;
        }
    }
    return best;
}

/* DFS over the region's component DAG from comp, keeping earlier marks (reach closure). */
static void dag_extend(const nm_bnvf_dag *d, uint32_t comp, uint8_t *mark, uint32_t *stack,
                       uint32_t *count)
{
    if (comp < 1 || comp > d->n_scc || mark[comp]) return;
    uint32_t top = 0;
    stack[top++] = comp;
    mark[comp] = 1;
    (*count)++;
    while (top) {
        uint32_t c = stack[--top];
        for (uint32_t e = d->row[c - 1]; e < d->row[c]; e++) {
            uint32_t t = d->dst[e];
            if (t >= 1 && t <= d->n_scc && !mark[t]) {
                mark[t] = 1;
                (*count)++;
                stack[top++] = t;
            }
        }
    }
}

static int build(const nm_window_request *req, const nm_grid_rec *recs,
                 const nm_span_fields *fields, size_t n, nm_bgrd_out *owned_out, wmem *m,
                 nm_window *w, nm_error *err)
{
    const int32_t nx = req->nx, ny = req->ny;
    const size_t cells = (size_t)nx * (size_t)ny;
    const uint32_t region = req->region;
    int rc = NM_OK;
    uint32_t *head = NULL;  /* counting sort of records by cell: cells + 1 */
    uint32_t *order = NULL; /* record indices sorted by cell (counting sort fallback) */
    uint32_t *pieces = NULL; /* [begin, end) record ranges in cell order */
    size_t pieces_bytes = 0;
    float *lh = NULL;
    uint8_t *sb1 = NULL, *sb2 = NULL, *segb = NULL;
    wall_src *walls = NULL;
    size_t nwalls = 0, walls_cap = 0;
    nm_window_seg *facades = NULL;
    size_t nfac = 0;
    uint8_t *mark = NULL;
    uint32_t *stack = NULL;

    w->win.x0 = (double)req->gx0 * NM_kCS;
    w->win.y0 = (double)req->gy0 * NM_kCS;
    w->win.nx = nx;
    w->win.ny = ny;
    w->gx0 = req->gx0;
    w->gy0 = req->gy0;
    w->region = region;
    w->zone_id = req->zone_id;
    w->gate = req->gate;
    w->seed_h = req->seed_h;
    w->seed_span = UINT32_MAX;

    /* Step 2: boundary edges of the zone mesh meeting the window (plus the wall pad). */
    if (req->zc) {
        wall_ctx wc = {req->zc, w->win.x0 - NM_GRID_WALL_PAD, w->win.y0 - NM_GRID_WALL_PAD,
                       w->win.x0 + nx * NM_kCS + NM_GRID_WALL_PAD,
                       w->win.y0 + ny * NM_kCS + NM_GRID_WALL_PAD, NULL, 0, 0, m, NM_OK};
        nm_zone_tris_in_rect(req->zc, wc.x0, wc.y0, wc.x1, wc.y1, collect_tri_walls, &wc);
        walls = wc.w;
        nwalls = wc.n;
        walls_cap = wc.cap;
        if (wc.rc) {
            rc = nm_fail(err, wc.rc, "window step 2: out of memory collecting boundary edges");
            goto done;
        }
        /* Bucket order lists a triangle once per bucket: sort by key and drop repeats. */
        if (nwalls > 1) {
            qsort(walls, nwalls, sizeof *walls, cmp_wall);
            size_t k = 1;
            for (size_t i = 1; i < nwalls; i++)
                if (walls[i].key != walls[k - 1].key) walls[k++] = walls[i];
            nwalls = k;
        }
    }

    /* Step 4: the seed cell in window numbers. */
    int64_t si = req->seed_gx - req->gx0, sj = req->seed_gy - req->gy0;
    if (si < 0 || sj < 0 || si >= nx || sj >= ny) {
        rc = nm_fail(err, NM_ERR_STATE, "window step 4: seed cell (%lld, %lld) outside the window",
                     (long long)req->seed_gx, (long long)req->seed_gy);
        goto done;
    }
    w->seed_cell = (uint32_t)(sj * nx + si);

    for (size_t r = 0; r < n; r++)
        if (recs[r].cell < 0 || (size_t)recs[r].cell >= cells) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "window step 5: record %zu cell %d outside the window",
                         r, recs[r].cell);
            goto done;
        }
    /* Records in cell order. A rectangle decode gives one ascending run per tile; cut the runs at
     * the row lines, the pieces of one row sorted by their first cell and not interleaved give
     * the cell order without a per-cell table. Any other order: a counting sort by cell (list
     * heads), which keeps each cell's stored order. */
    size_t npieces = 0;
    {
        size_t nruns = n ? 1 : 0;
        for (size_t r = 1; r < n; r++)
            if (recs[r].cell < recs[r - 1].cell) nruns++;
        if (nruns <= 4096) {
            uint32_t *runs = (uint32_t *)walloc(m, 2 * (nruns ? nruns : 1), sizeof(uint32_t));
            if (!runs) {
                rc = nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu runs)", nruns);
                goto done;
            }
            size_t k = 0;
            for (size_t r = 0; r < n; r++)
                if (r == 0 || recs[r].cell < recs[r - 1].cell) {
                    if (k) runs[2 * k - 1] = (uint32_t)r;
                    runs[2 * k++] = (uint32_t)r;
                }
            if (k) runs[2 * k - 1] = (uint32_t)n;
            /* pieces: at most one per run and row, plus the ends */
            size_t cap = nruns + (size_t)ny * (nruns < (size_t)ny ? nruns : (size_t)ny);
            if (cap > 2 * n + 16) cap = 2 * n + 16;
            pieces = (uint32_t *)walloc(m, 2 * (cap ? cap : 1), sizeof(uint32_t));
            bool ok = pieces != NULL;
            int32_t prev_row = -1;
            size_t row_first = 0;
            uint32_t last_cell = 0;
            bool any = false;
            /* rows in order: the next row is the smallest row any run is at */
            while (ok) {
                int64_t row = INT64_MAX;
                for (size_t q = 0; q < nruns; q++)
                    if (runs[2 * q] < runs[2 * q + 1]) {
                        int64_t rr = recs[runs[2 * q]].cell / nx;
                        if (rr < row) row = rr;
                    }
                if (row == INT64_MAX) break;
                row_first = npieces;
                for (size_t q = 0; q < nruns && ok; q++) {
                    uint32_t r0 = runs[2 * q], r1 = r0;
                    while (r1 < runs[2 * q + 1] && recs[r1].cell / nx == row) r1++;
                    if (r1 == r0) continue;
                    if (npieces == cap) {
                        ok = false;
                        break;
                    }
                    /* insert by first cell (rows hold few pieces) */
                    size_t at = npieces++;
                    while (at > row_first && recs[pieces[2 * (at - 1)]].cell > recs[r0].cell) {
                        pieces[2 * at] = pieces[2 * (at - 1)];
                        pieces[2 * at + 1] = pieces[2 * (at - 1) + 1];
                        at--;
                    }
                    pieces[2 * at] = r0;
                    pieces[2 * at + 1] = r1;
                    runs[2 * q] = r1;
                }
                /* not interleaved: each piece starts after the previous one's last cell */
                for (size_t pc = row_first; pc < npieces && ok; pc++) {
                    uint32_t fc = (uint32_t)recs[pieces[2 * pc]].cell;
                    if (any && fc <= last_cell) ok = false;
                    last_cell = (uint32_t)recs[pieces[2 * pc + 1] - 1].cell;
                    any = true;
                }
                (void)prev_row;
            }
            wrelease(m, (void **)&runs, 2 * (nruns ? nruns : 1) * sizeof(uint32_t));
            if (!ok) {
                if (!pieces) {
                    rc = nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (pieces)");
                    goto done;
                }
                wrelease(m, (void **)&pieces, 2 * (cap ? cap : 1) * sizeof(uint32_t));
                npieces = 0;
            } else {
                pieces_bytes = 2 * (cap ? cap : 1) * sizeof(uint32_t);
            }
        }
    }
    if (!pieces) {
        head = (uint32_t *)walloc(m, cells + 1, sizeof *head);
        order = (uint32_t *)walloc(m, n ? n : 1, sizeof *order);
        if (!head || !order) {
            rc = nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu cells)", cells);
            goto done;
        }
        for (size_t r = 0; r < n; r++) head[recs[r].cell + 1]++;
        for (size_t c = 0; c < cells; c++) head[c + 1] += head[c];
        for (size_t r = 0; r < n; r++) order[head[recs[r].cell]++] = (uint32_t)r;
        nm_free(head); /* only the order is read below */
        m->now -= (cells + 1) * sizeof *head;
        head = NULL;
    }

    /* Step 5: records -> raster layers and span vector. */
    w->lay = (uint8_t *)walloc(m, cells, 1);
    w->core = (uint8_t *)walloc(m, cells, 1);
    w->dist = (float *)walloc(m, cells, sizeof(float));
    w->medial = (uint8_t *)walloc(m, cells, 1);
    w->step_edges = (uint8_t *)walloc(m, cells, 1);
    lh = (float *)walloc(m, cells, sizeof(float));
    sb1 = (uint8_t *)walloc(m, cells, 1);
    sb2 = (uint8_t *)walloc(m, cells, 1);
    segb = (uint8_t *)walloc(m, cells, 1);
    /* span vector reserved at the record count: spans never outnumber records */
    nm_span_table *t = &w->spans;
    t->win = w->win;
    t->sp_cell = (uint32_t *)walloc(m, n ? n : 1, sizeof(uint32_t));
    t->sp_h = (float *)walloc(m, n ? n : 1, sizeof(float));
    t->sp_ins = (uint8_t *)walloc(m, n ? n : 1, 1);
    w->sp_bits = (uint8_t *)walloc(m, n ? n : 1, 1);
    w->sp_scc = (uint32_t *)walloc(m, n ? n : 1, sizeof(uint32_t));
    w->sp_rid = (uint32_t *)walloc(m, n ? n : 1, sizeof(uint32_t));
    if (!w->lay || !w->core || !w->dist || !w->medial || !w->step_edges || !lh || !sb1 || !sb2 ||
        !segb || !t->sp_cell || !t->sp_h || !t->sp_ins || !w->sp_bits || !w->sp_scc || !w->sp_rid) {
        rc = nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu cells, %zu records)",
                     cells, n);
        goto done;
    }
    for (size_t c = 0; c < cells; c++) lh[c] = NM_kFloorYNone;
    uint32_t ns = 0;
    size_t nseq = pieces ? npieces : 1;
    for (size_t pc = 0; pc < nseq; pc++) {
        size_t q0 = pieces ? pieces[2 * pc] : 0, q1 = pieces ? pieces[2 * pc + 1] : n;
        for (size_t q = q0; q < q1; q++) {
            uint32_t ri = pieces ? (uint32_t)q : order[q];
            const nm_grid_rec *r = &recs[ri];
            const nm_span_fields *f = &fields[ri];
            size_t c = (size_t)r->cell;
            int64_t gx = req->gx0 + (int64_t)(c % (size_t)nx), gy = req->gy0 + (int64_t)(c / (size_t)nx);
            uint8_t flags;
            uint16_t clr;
            open_record(req, r, f, gx, gy, &flags, &clr);
            bool mine = r->rid == region;
            if (mine) {
                if ((flags & NM_GRID_WALK) || !(flags & NM_GRID_CORE)) w->lay[c] = 1;
                if (flags & NM_GRID_CORE) w->core[c] = 1;
                w->dist[c] = nm_grid_rec_clearance(clr); /* later records overwrite */
                w->medial[c] |= (uint8_t)(f->medial & 1u);
                sb1[c] |= r->steps;
                sb2[c] |= f->steps2;
                segb[c] |= f->seg;
                w->step_edges[c] |= f->tax;
                if (!(flags & (NM_GRID_GHOST | NM_GRID_FILL)) && r->h > lh[c]) lh[c] = r->h;
            }
            /* span table: no Fill, no other region's Ghost */
            if (flags & NM_GRID_FILL) continue;
            if (!mine && (flags & NM_GRID_GHOST)) continue;
            t->sp_cell[ns] = (uint32_t)c;
            t->sp_h[ns] = r->h;
            t->sp_ins[ns] = (flags & NM_GRID_CORE) ? 1 : 0;
            uint8_t bits = mine ? NM_SP_VIS3 : 0;
            if (flags & NM_GRID_GHOST) bits |= NM_SP_GHOST;
            if (flags & NM_GRID_DEAD) bits |= NM_SP_DEAD;
            if (flags & NM_GRID_WALK) bits |= NM_SP_WALK;
            if (flags & NM_GRID_CORE) bits |= NM_SP_CORE;
            w->sp_bits[ns] = bits;
            w->sp_scc[ns] = mine ? f->scc : 0;
            w->sp_rid[ns] = r->rid;
            ns++;
        }
    }
    t->nspans = ns;
    /* the record table and its cell order are spent: release them now (the memory peak of the
     * build) */
    w->free_step[NM_WTMP_CELLHEAD] = 5;
    wrelease(m, (void **)&order, (n ? n : 1) * sizeof(uint32_t));
    wrelease(m, (void **)&pieces, pieces_bytes);
    if (owned_out) {
        m->now -= owned_out->n * (sizeof(nm_grid_rec) + sizeof(nm_span_fields)) <= m->now
                      ? owned_out->n * (sizeof(nm_grid_rec) + sizeof(nm_span_fields))
                      : m->now;
        nm_bgrd_out_free(owned_out);
    }
    w->free_step[NM_WTMP_RECORDS] = 5;

    /* Step 6: wall selection through the sidecar's boundary edge table (FWAL). */
    {
        size_t kept = 0;
        for (size_t i = 0; i < nwalls; i++) {
            bool keep = false;
            rc = nm_bnvf_wall_kept(req->fzone, walls[i].key, region, &keep, err);
            if (rc) {
                nm_error_prefix(err, "window step 6");
                goto done;
            }
            if (keep) walls[kept++] = walls[i];
        }
        nwalls = kept;
        w->free_step[NM_WTMP_WALLS] = 6; /* the unselected edges are gone */
    }

    /* Step 7: authored no-go polygons (even-odd, cell-centre test, tier band on lh). */
    for (uint32_t p = 0; p < req->npolys; p++) {
        const nm_nogo_poly *pg = &req->polys[p];
        if (!pg->xy || pg->n < 3) continue;
        double lx = pg->xy[0], hx = lx, ly = pg->xy[1], hy = ly;
        for (uint32_t k = 1; k < pg->n; k++) {
            lx = fmin(lx, pg->xy[2 * k]);
            hx = fmax(hx, pg->xy[2 * k]);
            ly = fmin(ly, pg->xy[2 * k + 1]);
            hy = fmax(hy, pg->xy[2 * k + 1]);
        }
        int64_t i0 = (int64_t)floor((lx - w->win.x0) / NM_kCS), i1 = (int64_t)floor((hx - w->win.x0) / NM_kCS);
        int64_t j0 = (int64_t)floor((ly - w->win.y0) / NM_kCS), j1 = (int64_t)floor((hy - w->win.y0) / NM_kCS);
        if (i0 < 0) i0 = 0;
        if (j0 < 0) j0 = 0;
        if (i1 >= nx) i1 = nx - 1;
        if (j1 >= ny) j1 = ny - 1;
        for (int64_t j = j0; j <= j1; j++)
            for (int64_t i = i0; i <= i1; i++) {
                size_t c = (size_t)j * (size_t)nx + (size_t)i;
                if (pg->banded && !(lh[c] > NM_kFloorYValidMin &&
                                    fabs((double)lh[c] - pg->floor_y) <= NM_kBaseNavFloorBand))
                    continue;
                double cx = w->win.x0 + ((double)i + 0.5) * NM_kCS;
                double cy = w->win.y0 + ((double)j + 0.5) * NM_kCS;
                if (!nm_nogo_poly_contains(pg, cx, cy)) continue;
                w->core[c] = w->lay[c] = 0;
                w->dist[c] = 0.0f;
                w->nogo_cells++;
            }
    }
    wrelease(m, (void **)&lh, cells * sizeof(float));
    w->free_step[NM_WTMP_LH] = 7;

    /* Step 8: runtime discs, by planar distance only. */
    for (uint32_t d = 0; d < req->ndiscs; d++) {
        const nm_nogo_disc *dc = &req->discs[d];
        if (!(dc->r >= 0) || !isfinite(dc->x) || !isfinite(dc->y)) continue;
        int64_t i0 = (int64_t)floor((dc->x - dc->r - w->win.x0) / NM_kCS);
        int64_t i1 = (int64_t)floor((dc->x + dc->r - w->win.x0) / NM_kCS);
        int64_t j0 = (int64_t)floor((dc->y - dc->r - w->win.y0) / NM_kCS);
        int64_t j1 = (int64_t)floor((dc->y + dc->r - w->win.y0) / NM_kCS);
        if (i0 < 0) i0 = 0;
        if (j0 < 0) j0 = 0;
        if (i1 >= nx) i1 = nx - 1;
        if (j1 >= ny) j1 = ny - 1;
        for (int64_t j = j0; j <= j1; j++)
            for (int64_t i = i0; i <= i1; i++) {
                double cx = w->win.x0 + ((double)i + 0.5) * NM_kCS - dc->x;
                double cy = w->win.y0 + ((double)j + 0.5) * NM_kCS - dc->y;
                if (cx * cx + cy * cy > dc->r * dc->r) continue;
                size_t c = (size_t)j * (size_t)nx + (size_t)i;
                w->core[c] = w->lay[c] = 0;
                w->dist[c] = 0.0f;
                w->nogo_cells++;
            }
    }

    /* Step 9: span table index (occupancy bits, ranks, cell starts, face) from the cell-sorted
     * span vector, then forbidden steps and facade segments restored. */
    {
        size_t words = (cells + 63) / 64;
        t->occ_bits = (uint64_t *)walloc(m, words, sizeof(uint64_t));
        t->occ_rank = (uint32_t *)walloc(m, words, sizeof(uint32_t));
        uint32_t nocc = 0;
        for (uint32_t k = 0; k < ns; k++)
            if (k == 0 || t->sp_cell[k] != t->sp_cell[k - 1]) nocc++;
        t->cs = (uint32_t *)walloc(m, (size_t)nocc + 1, sizeof(uint32_t));
        t->face = (uint8_t *)walloc(m, nocc ? nocc : 1, 1);
        if (!t->occ_bits || !t->occ_rank || !t->cs || !t->face) {
            rc = nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (span table)");
            goto done;
        }
        uint32_t o = 0;
        for (uint32_t k = 0; k < ns; k++) {
            if (k == 0 || t->sp_cell[k] != t->sp_cell[k - 1]) {
                t->cs[o++] = k;
                uint32_t c = t->sp_cell[k];
                t->occ_bits[c / 64] |= (uint64_t)1 << (c % 64);
            }
        }
        t->cs[nocc] = ns;
        t->nocc = nocc;
        uint32_t acc = 0;
        for (size_t wd = 0; wd < words; wd++) {
            t->occ_rank[wd] = acc;
            acc += (uint32_t)__builtin_popcountll(t->occ_bits[wd]);
        }
        for (uint32_t q = 0; q < nocc; q++) {
            uint32_t a = t->cs[q], b = t->cs[q + 1], cnt = b - a;
            float lo = t->sp_h[a], hi = t->sp_h[a];
            for (uint32_t k = a; k < b; k++) {
                lo = fminf(lo, t->sp_h[k]);
                hi = fmaxf(hi, t->sp_h[k]);
            }
            t->face[q] = (cnt != 2 && (double)hi - (double)lo > NM_kClimb) ? 1 : 0;
        }
    }
    /* the final step bits are written over the main pack's (each cell reads only its own), so
     * the window holds no extra layer for them */
    w->stepbits = sb1;
    sb1 = NULL;
    for (int32_t j = 0; j < ny; j++)
        for (int32_t i = 0; i < nx; i++) {
            size_t c = (size_t)j * (size_t)nx + (size_t)i;
            if (!w->lay[c]) { /* stamped cells give neither steps nor facades */
                w->stepbits[c] = 0;
                continue;
            }
            const uint8_t main_bits = w->stepbits[c];
            uint8_t fin = 0;
            for (int d = 0; d < 4; d++) {
                if (((main_bits >> (2 * d)) & 3u) == 0) continue; /* main bits only gate the read */
                fin |= (uint8_t)(sb2[c] & (3u << (2 * d)));
                if (d < 2 && (segb[c] & (1u << d))) {
                    if (nfac % 64 == 0) {
                        nm_window_seg *nf = (nm_window_seg *)nm_realloc(facades, (nfac + 64) * sizeof *nf);
                        if (!nf) {
                            rc = nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (facades)");
                            goto done;
                        }
                        facades = nf;
                        m->now += 64 * sizeof *nf;
                        if (m->now > m->peak) m->peak = m->now;
                    }
                    double ex = w->win.x0 + (double)(i + 1) * NM_kCS, ey = w->win.y0 + (double)(j + 1) * NM_kCS;
                    nm_window_seg s;
                    if (d == 0) /* common edge with (i+1, j): the vertical line x = ex */
                        s = (nm_window_seg){ex, ey - NM_kCS, ex, ey, NM_SEG_FACADE};
                    else        /* common edge with (i, j+1): the horizontal line y = ey */
                        s = (nm_window_seg){ex - NM_kCS, ey, ex, ey, NM_SEG_FACADE};
                    facades[nfac++] = s;
                }
            }
            w->stepbits[c] = fin;
        }
    wrelease(m, (void **)&sb2, cells);
    wrelease(m, (void **)&segb, cells);
    w->free_step[NM_WTMP_BITMAPS] = 9;

    /* Step 10: seed span — the region's span of the seed cell nearest the pick height. */
    {
        uint32_t first, cnt = nm_span_cell_spans(t, w->seed_cell, &first);
        double bd = 0;
        for (uint32_t k = first; k < first + cnt; k++) {
            if (!(w->sp_bits[k] & NM_SP_VIS3)) continue;
            double d = fabs((double)t->sp_h[k] - req->seed_h);
            if (w->seed_span == UINT32_MAX || d < bd) {
                w->seed_span = k;
                bd = d;
            }
        }
        if (w->seed_span == UINT32_MAX) {
            rc = nm_fail(err, NM_ERR_STATE,
                         "window step 10: the seed cell (%lld, %lld) has no span of region %u",
                         (long long)req->seed_gx, (long long)req->seed_gy, region);
            goto done;
        }
    }

    /* Step 11: off-mesh links of the zone (FLNK valid == 3), both ends landed in the window. */
    {
        const nm_bnvf *fl = req->fields;
        uint32_t cap = 0;
        for (uint32_t z = 0; fl && z < fl->link_zone_count; z++) {
            const nm_bnvf_range *rg = &fl->link_zones[z];
            if (rg->zone_id != req->zone_id) continue;
            for (uint32_t li = rg->first; li < rg->first + rg->len && li < fl->link_count; li++) {
                const nm_bnvf_link *L = &fl->links[li];
                if (L->valid != 3) continue;
                const nm_bnvf_link_side *sd[2] = {&L->lo, &L->hi};
                uint32_t cell[2], span[2];
                bool inside = true;
                for (int e = 0; e < 2; e++) {
                    int64_t i = (int64_t)sd[e]->gx - req->gx0, j = (int64_t)sd[e]->gy - req->gy0;
                    if (i < 0 || j < 0 || i >= nx || j >= ny) {
                        inside = false;
                        break;
                    }
                    cell[e] = (uint32_t)(j * nx + i);
                    span[e] = landing_span(w, cell[e], sd[e]->decl_h);
                }
                if (!inside) continue;
                if (span[0] == UINT32_MAX || span[1] == UINT32_MAX) {
                    if (L->lo.rid == region && L->hi.rid == region) w->links_without_landing++;
                    continue;
                }
                double dx = (double)sd[1]->gx - sd[0]->gx, dy = (double)sd[1]->gy - sd[0]->gy;
                double cost = fmax((double)L->cost_modifier, 1.0) * sqrt(dx * dx + dy * dy);
                int dirs = L->bidirectional ? 2 : 1;
                if (w->nlinks + (uint32_t)dirs > cap) {
                    uint32_t nc = cap ? 2 * cap : 16;
                    nm_window_link *nl = (nm_window_link *)nm_realloc(w->links, nc * sizeof *nl);
                    if (!nl) {
                        rc = nm_fail(err, NM_ERR_NOMEM, "window step 11: out of memory (links)");
                        goto done;
                    }
                    m->now += (nc - cap) * sizeof *nl;
                    if (m->now > m->peak) m->peak = m->now;
                    w->links = nl;
                    cap = nc;
                }
                w->links[w->nlinks++] = (nm_window_link){cell[0], cell[1], span[0], span[1], cost, L->boml_index};
                if (dirs == 2)
                    w->links[w->nlinks++] =
                        (nm_window_link){cell[1], cell[0], span[1], span[0], cost, L->boml_index};
            }
        }
    }

    /* Step 12: reach set — components reachable from the seed's in the DAG, closed over links. */
    {
        const nm_bnvf_dag *dag = nm_bnvf_dag_of(req->fzone, region);
        uint32_t seed_comp = w->sp_scc[w->seed_span];
        if (!dag || seed_comp < 1 || seed_comp > dag->n_scc) {
            rc = nm_fail(err, NM_ERR_CORRUPT,
                         "window step 12: region %u: seed component %u not in the sidecar's component graph",
                         region, seed_comp);
            goto done;
        }
        mark = (uint8_t *)walloc(m, (size_t)dag->n_scc + 1, 1);
        stack = (uint32_t *)walloc(m, (size_t)dag->n_scc + 1, sizeof(uint32_t));
        if (!mark || !stack) {
            rc = nm_fail(err, NM_ERR_NOMEM, "window step 12: out of memory (%u components)", dag->n_scc);
            goto done;
        }
        uint32_t count = 0;
        dag_extend(dag, seed_comp, mark, stack, &count);
        for (bool grew = true; grew;) {
            grew = false;
            for (uint32_t l = 0; l < w->nlinks; l++) {
                uint32_t a = w->sp_scc[w->links[l].from_span], b = w->sp_scc[w->links[l].to_span];
                if (a >= 1 && a <= dag->n_scc && mark[a] && b >= 1 && b <= dag->n_scc && !mark[b]) {
                    dag_extend(dag, b, mark, stack, &count);
                    grew = true;
                }
            }
        }
        for (uint32_t k = 0; k < ns; k++) {
            uint32_t s = w->sp_scc[k];
            if ((w->sp_bits[k] & NM_SP_VIS3) && s >= 1 && s <= dag->n_scc && mark[s])
                w->sp_bits[k] |= NM_SP_REACH;
        }
        w->reach_comps = count;
        wrelease(m, (void **)&mark, (size_t)dag->n_scc + 1);
        wrelease(m, (void **)&stack, ((size_t)dag->n_scc + 1) * sizeof(uint32_t));
    }

    /* Step 13: kept walls and facade segments into one blocker table; sources released. */
    {
        size_t total = nwalls + nfac;
        w->segs = (nm_window_seg *)walloc(m, total ? total : 1, sizeof(nm_window_seg));
        if (!w->segs) {
            rc = nm_fail(err, NM_ERR_NOMEM, "window step 13: out of memory (%zu segments)", total);
            goto done;
        }
        for (size_t i = 0; i < nwalls; i++)
            w->segs[i] = (nm_window_seg){walls[i].ax, walls[i].ay, walls[i].bx, walls[i].by, NM_SEG_WALL};
        if (nfac) memcpy(w->segs + nwalls, facades, nfac * sizeof *facades);
        w->nsegs = (uint32_t)total;
        w->nwalls_kept = (uint32_t)nwalls;
        wrelease(m, (void **)&walls, walls_cap * sizeof(wall_src));
        wrelease(m, (void **)&facades, ((nfac + 63) / 64) * 64 * sizeof(nm_window_seg));
        w->free_step[NM_WTMP_SEGSRC] = 13;
    }

done:
    nm_free(head);
    nm_free(order);
    nm_free(pieces);
    nm_free(lh);
    nm_free(sb1);
    nm_free(sb2);
    nm_free(segb);
    nm_free(walls);
    nm_free(facades);
    nm_free(mark);
    nm_free(stack);
    return rc;
}

static int check_request(const nm_window_request *req, nm_error *err)
{
    if (!req || !req->fields || !req->fzone)
        return nm_fail(err, NM_ERR_ARG, "window: request needs the sidecar and its zone data");
    nm_grid_window gw = {0, 0, req->nx, req->ny};
    return nm_grid_window_check(&gw, err);
}

int nm_window_build_records(const nm_window_request *req, const nm_grid_rec *recs,
                            const nm_span_fields *fields, size_t n, nm_window *w, nm_error *err)
{
    memset(w, 0, sizeof *w);
    int rc = check_request(req, err);
    if (rc) return rc;
    double t0 = now_ms();
    wmem m = {0, 0};
    rc = build(req, recs, fields, n, NULL, &m, w, err);
    if (rc) {
        nm_window_free(w);
        return rc;
    }
    w->peak_bytes = m.peak;
    w->peak_bytes_per_cell = (double)m.peak / ((double)req->nx * (double)req->ny);
    w->build_ms = now_ms() - t0;
    return NM_OK;
}

int nm_window_build(const nm_window_request *req, nm_window *w, nm_error *err)
{
    memset(w, 0, sizeof *w);
    int rc = check_request(req, err);
    if (rc) return rc;
    if (!req->grid) return nm_fail(err, NM_ERR_ARG, "window: request has no grid section");
    double t0 = now_ms();
    wmem m = {0, 0};
    nm_bgrd_out own;
    memset(&own, 0, sizeof own);
    nm_bgrd_out *out = req->reuse ? req->reuse : &own;
    /* Step 3: tiles meeting the window, decoded in parallel with the sidecar columns merged. */
    if (req->gx0 < INT32_MIN || req->gy0 < INT32_MIN || req->gx0 + req->nx > INT32_MAX ||
        req->gy0 + req->ny > INT32_MAX) {
        return nm_fail(err, NM_ERR_ARG, "window: origin (%lld, %lld) out of range",
                       (long long)req->gx0, (long long)req->gy0);
    }
    rc = nm_bgrd_decode_rect(req->grid, req->bgrd_zone, (int32_t)req->gx0, (int32_t)req->gy0,
                             (int32_t)(req->gx0 + req->nx), (int32_t)(req->gy0 + req->ny),
                             req->fields, req->workers, out, err);
    if (rc) {
        nm_error_prefix(err, "window step 3");
        nm_bgrd_out_free(&own);
        return rc;
    }
    m.now = m.peak = out->n * (sizeof(nm_grid_rec) + sizeof(nm_span_fields));
    rc = build(req, out->recs, out->fields, out->n, req->reuse ? NULL : &own, &m, w, err);
    nm_bgrd_out_free(&own);
    if (rc) {
        nm_window_free(w);
        return rc;
    }
    w->peak_bytes = m.peak;
    w->peak_bytes_per_cell = (double)m.peak / ((double)req->nx * (double)req->ny);
    w->build_ms = now_ms() - t0;
    return NM_OK;
}
