/* window.c — buildWindow (design article 建窗): decodes the grid and sidecar of one rectangle of
 * a zone, expands the records of the picked region into raster layers and a span table, selects
 * the boundary edges the region keeps (FWAL), stamps authored no-go polygons and runtime discs,
 * restores forbidden steps and facade segments, picks the seed span, lands the off-mesh links,
 * closes the reach set over them and merges walls and facades into the blocker table.
 *
 * The records are read in place from decoded tiles (the engine's tile cache, or tiles decoded
 * a band at a time), never gathered into one table. Temporaries are released at their last use,
 * in the order of 建窗的内存, and the peak of the bytes held is recorded. Nothing here depends on
 * the worker count. */
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

/* A scratch row *p of *bytes grown to need bytes (zeroed, its contents not kept); false when out
 * of memory. */
static bool wgrow(wmem *m, void **p, size_t *bytes, size_t need)
{
    if (need > *bytes) {
        wrelease(m, p, *bytes);
        *p = walloc(m, need, 1);
        *bytes = *p ? need : 0;
    }
    return *p != NULL;
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
    nm_span_table_free(&w->spans);
    nm_free(w->sp_bits);
    nm_free(w->sp_scc);
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

/* Where the horizontal line through y crosses edge (i, j) of the ring, when it does: the x both
 * tests below compare against. */
static inline bool ring_crossing(const nm_nogo_poly *p, uint32_t i, uint32_t j, double y, double *xc)
{
    const double xi = p->xy[2 * i], yi = p->xy[2 * i + 1];
    const double xj = p->xy[2 * j], yj = p->xy[2 * j + 1];
    if ((yi > y) == (yj > y)) return false;
    *xc = xj + (y - yj) * (xi - xj) / (yi - yj);
    return true;
}

/* Even-odd rule: a self-crossing hand-drawn ring still has a definite inside. */
bool nm_nogo_poly_contains(const nm_nogo_poly *p, double x, double y)
{
    bool in = false;
    double xc;
    for (uint32_t i = 0, j = p->n - 1; i < p->n; j = i++)
        if (ring_crossing(p, i, j, y, &xc) && x < xc) in = !in;
    return in;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void nm_nogo_poly_row(const nm_nogo_poly *p, double y, double x0, double cs, int64_t i0, int64_t i1,
                      double *xs, uint8_t *in)
{
    size_t m = 0;
    double xc;
    for (uint32_t i = 0, j = p->n - 1; i < p->n; j = i++)
        if (ring_crossing(p, i, j, y, &xc) && xc == xc) /* x < NaN never holds */
            xs[m++] = xc;
    qsort(xs, m, sizeof *xs, cmp_double);
    /* the centres rise with i (a rounded sum of x0 and an exact product), so the crossings at or
     * left of a centre are a prefix of xs that only grows */
    size_t k = 0;
    for (int64_t i = i0; i <= i1; i++) {
        const double cx = x0 + ((double)i + 0.5) * cs;
        while (k < m && !(cx < xs[k])) k++;
        in[i - i0] = (uint8_t)((m - k) & 1u);
    }
}

/* Effective record after FOPN (解码瓦片 step 6): only non-Core records are looked up; a hit ORs
 * its flags in and keeps the larger of the two clearances. Runs after the sealed clearance was
 * written back, so an opened cell is not pushed back to 0. */
static void open_flags(const nm_bnvf *fields, uint16_t zone_id, const nm_grid_rec *r,
                       const nm_span_fields *f, int64_t gx, int64_t gy, uint8_t *flags, uint16_t *clr)
{
    *flags = r->flags;
    *clr = f ? f->clr2 : r->clr;
    if ((r->flags & NM_GRID_CORE) || !fields || fields->open_count == 0) return;
    const nm_bnvf_open *o = nm_bnvf_find_open(fields, zone_id, (int32_t)gx, (int32_t)gy, r->h);
    if (o) {
        *flags = (uint8_t)(*flags | o->flags);
        if (o->clr > *clr) *clr = o->clr;
    }
}

bool nm_window_record_is_span(const nm_bnvf *fields, uint16_t zone_id, uint32_t region,
                              const nm_grid_rec *r, int64_t gx, int64_t gy)
{
    uint8_t flags;
    uint16_t clr;
    open_flags(fields, zone_id, r, NULL, gx, gy, &flags, &clr);
    return !(flags & NM_GRID_FILL) && (r->rid == region || !(flags & NM_GRID_GHOST));
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

/* The spans of window cell c before the span index exists: the span vector is sorted by cell,
 * so a binary search finds the cell's first span. Returns the count. */
static uint32_t cell_spans(const nm_span_table *t, uint32_t c, uint32_t *first)
{
    uint32_t lo = 0, hi = t->nspans;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->sp_cell[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    *first = lo;
    uint32_t k = lo;
    while (k < t->nspans && t->sp_cell[k] == c) k++;
    return k - lo;
}

/* Landing span of an off-mesh link end: the region's span of the cell nearest in height to h
 * within kMcHBand (lower index on ties); UINT32_MAX when none. */
static uint32_t landing_span(const nm_window *w, uint32_t c, double h)
{
    uint32_t first, n = cell_spans(&w->spans, c, &first), best = UINT32_MAX;
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

/* ---- the record source: decoded tiles read in place ------------------------------------------
 * The window's records are never copied into one table (建窗的内存: the record table was the
 * peak). Each tile that owns cells of the window is read where it lies — in the engine's tile
 * cache, or decoded band by band into buffers of its own — one window row at a time: a row is the
 * tiles' runs of that row, left to right, which is the cell order the span vector needs. */
/* A span of a decoded tile, its cell already expanded (16 bytes where the decoded record and its
 * sidecar columns take 28): what the row order of the span vector still needs. */
typedef struct wspan {
    int32_t cell;            /* tile-local */
    float h;
    uint32_t scc;
    uint8_t bits;
} wspan;

typedef struct wtile {
    int64_t tgx0, tgy0;      /* global cell of tile-local cell 0 */
    int64_t tnx;             /* tile row length, cells */
    int32_t x0, x1, y0, y1;  /* the tile's own cells inside the window: [x0, x1) x [y0, y1) */
    uint32_t id;             /* directory index */
    nm_bgrd_tile_view v;     /* records read in place (the cache's, or all of them in tests) */
    wspan *sp;               /* or: a decoded tile's spans in the window (cells expanded), cells
                                descending, so the rows read first lie at the end and are cut off
                                as they are read */
    size_t nsp;              /* spans not yet read */
    bool fetched;            /* sp is set (it may be empty) */
    size_t pos;              /* first record not yet read (rows are read in ascending order) */
    int8_t *judged;          /* the band's records from j0 on: expand_cell's span bits, -1 none */
    size_t j0, nj;
} wtile;

typedef struct wsource {
    wtile *t;                /* sorted by (y0, x0) */
    size_t nt;
    /* decoding the tiles the cache does not hold (NULL g: every view is set already) */
    const nm_bgrd *g;
    uint32_t zone;
    const nm_bnvf *fields;
    int workers;
    nm_bgrd_out *ws;
    int64_t wgx0, wgy0;      /* the window's global cell (0, 0) */
} wsource;

static size_t view_bytes(const nm_bgrd_tile_view *v)
{
    return v->own_recs ? v->n * (sizeof(nm_grid_rec) + (v->own_fields ? sizeof(nm_span_fields) : 0)) : 0;
}

static void tile_release(wtile *t, wmem *m)
{
    size_t b = view_bytes(&t->v) + t->nsp * sizeof *t->sp;
    m->now -= b <= m->now ? b : m->now;
    nm_bgrd_tile_view_free(&t->v);
    nm_free(t->sp);
    t->sp = NULL;
    t->nsp = 0;
}

static void source_free(wsource *s, wmem *m)
{
    for (size_t k = 0; s->t && k < s->nt; k++) tile_release(&s->t[k], m);
    nm_free(s->t);
    s->t = NULL;
    s->nt = 0;
}

static int cmp_wtile(const void *a, const void *b)
{
    const wtile *x = (const wtile *)a, *y = (const wtile *)b;
    if (x->y0 != y->y0) return x->y0 < y->y0 ? -1 : 1;
    if (x->x0 != y->x0) return x->x0 < y->x0 ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* First record at or after `from` whose tile-local cell is >= key (cells ascend in a tile). */
static size_t lower_cell(const nm_grid_rec *r, size_t from, size_t n, int64_t key)
{
    size_t lo = from, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)r[mid].cell < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* First span whose tile-local cell is < key (cells descend in a fetched tile). */
static size_t below_span(const wspan *r, size_t n, int64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)r[mid].cell >= key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The run of tile t's records (or spans, once fetched: cells descending) on window row j:
 * [*a, *b); returns the window cell minus the tile-local cell for the run. */
static int64_t row_run(const wtile *t, int64_t wgx0, int64_t wgy0, int32_t nx, int32_t j, size_t from, size_t *a,
                       size_t *b)
{
    int64_t base = (wgy0 + j - t->tgy0) * t->tnx;
    int64_t kx = wgx0 - t->tgx0; /* tile-local x of window column 0 */
    if (t->fetched) {
        *a = below_span(t->sp, t->nsp, base + kx + t->x1);
        *b = below_span(t->sp, t->nsp, base + kx + t->x0);
    } else {
        *a = lower_cell(t->v.recs, from, t->v.n, base + kx + t->x0);
        *b = lower_cell(t->v.recs, *a, t->v.n, base + kx + t->x1);
    }
    return (int64_t)j * nx - base - kx;
}

/* The four span columns are taken once, at a bound on the window's spans (every selected tile's
 * records, apron included: spans never outnumber records). Pages never written are never backed,
 * whereas growing them band by band copied every column into a fresh block at each band. They are
 * cut to the spans read at the end (in place). */
static size_t span_bound(const wsource *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nt; i++) {
        const wtile *t = &s->t[i];
        n += t->fetched ? t->nsp : t->v.recs ? t->v.n : s->g ? s->g->zones[s->zone].tiles[t->id].records : 0;
    }
    return n;
}

static int size_spans(nm_window *w, size_t n)
{
    if (n > UINT32_MAX) return NM_ERR_NOMEM;
    nm_span_table *t = &w->spans;
    void *p;
    if (!(p = nm_realloc(t->sp_cell, n * sizeof(uint32_t)))) return NM_ERR_NOMEM;
    t->sp_cell = (uint32_t *)p;
    if (!(p = nm_realloc(t->sp_h, n * sizeof(float)))) return NM_ERR_NOMEM;
    t->sp_h = (float *)p;
    if (!(p = nm_realloc(w->sp_bits, n))) return NM_ERR_NOMEM;
    w->sp_bits = (uint8_t *)p;
    if (!(p = nm_realloc(w->sp_scc, n * sizeof(uint32_t)))) return NM_ERR_NOMEM;
    w->sp_scc = (uint32_t *)p;
    return NM_OK;
}

/* The memory count of the span columns follows the spans written (the pages past them are never
 * touched). */
static void count_spans(wmem *m, uint32_t *counted, size_t need)
{
    if (need <= *counted) return;
    m->now += (need - *counted) * (2 * sizeof(uint32_t) + sizeof(float) + 1);
    if (m->now > m->peak) m->peak = m->now;
    *counted = (uint32_t)need;
}

/* The spans of a fetched tile from a on have been read: they are cut off once they come to 64 kB
 * (or the tile is done), so a band's spans are not held twice, in its tiles and in the columns. */
static void cut_read_spans(wtile *t, size_t a, wmem *m)
{
    const size_t cut = (t->nsp - a) * sizeof *t->sp;
    if (a && cut < ((size_t)64 << 10)) return;
    void *p = nm_realloc(t->sp, (a ? a : 1) * sizeof *t->sp);
    if (p) t->sp = (wspan *)p; /* a failed shrink keeps the whole block */
    t->nsp = a;
    m->now -= cut <= m->now ? cut : m->now;
}

/* ---- the build, one function per step of 建窗 ---------------------------------------------- */
typedef struct wbuild {
    const nm_window_request *req;
    nm_window *w;
    wmem *m;
    int32_t nx, ny;
    size_t cells;
    wall_src *walls;          /* step 2 -> 13 */
    size_t nwalls, walls_cap;
    uint8_t *fac;             /* step 5 -> 9: bits 0-3: the main pack's step bits are non-zero in
                                 direction i; bits 4-5: facade segment bits (the article's main
                                 step bitmap and segbits, in the one byte step 9 reads) */
    nm_window_seg *facades;   /* step 9 -> 13 */
    size_t nfac;
    uint16_t *clr;            /* step 5 -> 12: the sealed clearance as stored (squared quarter
                                 cells), two bytes a cell while the spans are read; w->dist is made
                                 from it once the component column has gone */
} wbuild;

/* The whole-window passes of the clearance layer and step 12's reach bits run in NM_PASS_CHUNKS
 * equal ranges of cells or spans shared by the workers: each range writes only its own elements,
 * so the layers are the same for any worker count. */
enum { NM_PASS_CHUNKS = 16 };

typedef struct pass_job {
    wbuild *b;
    size_t n; /* elements of the pass */
} pass_job;

static void pass_range(const pass_job *J, size_t k, size_t *a, size_t *e)
{
    *a = J->n * k / NM_PASS_CHUNKS;
    *e = J->n * (k + 1) / NM_PASS_CHUNKS;
}

/* Runs fn over the NM_PASS_CHUNKS ranges of J's [0, n) on the request's workers. */
static int run_pass(const pass_job *J, nm_chunk_fn fn)
{
    return nm_parallel_chunks(NM_PASS_CHUNKS, nm_workers_for(J->n, J->b->req->workers), fn, (void *)J);
}

/* 建窗 step 2: boundary edges of the zone mesh meeting the window (plus the wall pad). */
static int step2_walls(wbuild *b, nm_error *err)
{
    const nm_window_request *req = b->req;
    nm_window *w = b->w;
    if (!req->zc) return NM_OK;
    wall_ctx wc = {req->zc, w->win.x0 - NM_GRID_WALL_PAD, w->win.y0 - NM_GRID_WALL_PAD,
                   w->win.x0 + b->nx * NM_kCS + NM_GRID_WALL_PAD,
                   w->win.y0 + b->ny * NM_kCS + NM_GRID_WALL_PAD, NULL, 0, 0, b->m, NM_OK};
    nm_zone_tris_in_rect(req->zc, wc.x0, wc.y0, wc.x1, wc.y1, collect_tri_walls, &wc);
    b->walls = wc.w;
    b->nwalls = wc.n;
    b->walls_cap = wc.cap;
    if (wc.rc) return nm_fail(err, wc.rc, "window step 2: out of memory collecting boundary edges");
    /* Bucket order lists a triangle once per bucket: sort by key and drop repeats. */
    if (b->nwalls > 1) {
        qsort(b->walls, b->nwalls, sizeof *b->walls, cmp_wall);
        size_t k = 1;
        for (size_t i = 1; i < b->nwalls; i++)
            if (b->walls[i].key != b->walls[k - 1].key) b->walls[k++] = b->walls[i];
        b->nwalls = k;
    }
    return NM_OK;
}

/* 建窗 step 4: the seed cell in window numbers. */
static int step4_seed_cell(wbuild *b, nm_error *err)
{
    const nm_window_request *req = b->req;
    int64_t si = req->seed_gx - req->gx0, sj = req->seed_gy - req->gy0;
    if (si < 0 || sj < 0 || si >= b->nx || sj >= b->ny)
        return nm_fail(err, NM_ERR_STATE, "window step 4: seed cell (%lld, %lld) outside the window",
                       (long long)req->seed_gx, (long long)req->seed_gy);
    b->w->seed_cell = (uint32_t)(sj * b->nx + si);
    return NM_OK;
}

/* One record into the raster layers (展开成栅格图层); returns its span bits, or -1 when it is no
 * span (Fill, another region's Ghost: nm_window_record_is_span). */
static inline int expand_cell(wbuild *b, const nm_grid_rec *r, const nm_span_fields *f, size_t c, int64_t gx,
                              int64_t gy)
{
    nm_window *w = b->w;
    uint8_t flags;
    uint16_t clr;
    open_flags(b->req->fields, b->req->zone_id, r, f, gx, gy, &flags, &clr);
    bool mine = r->rid == w->region;
    if (mine) {
        if ((flags & NM_GRID_WALK) || !(flags & NM_GRID_CORE)) w->lay[c] = 1;
        if (flags & NM_GRID_CORE) w->core[c] = 1;
        b->clr[c] = clr; /* later records overwrite */
        w->medial[c] |= (uint8_t)(f->medial & 1u);
        w->stepbits[c] |= f->steps2; /* re-judged bits; step 9 keeps the directions the main bits name */
        uint8_t fb = (uint8_t)((f->seg & 3u) << 4);
        for (int d = 0; d < 4; d++)
            if ((r->steps >> (2 * d)) & 3u) fb |= (uint8_t)(1u << d);
        b->fac[c] |= fb;
    }
    if (flags & NM_GRID_FILL) return -1;
    if (!mine && (flags & NM_GRID_GHOST)) return -1;
    uint8_t bits = mine ? NM_SP_VIS3 : 0;
    if (flags & NM_GRID_GHOST) bits |= NM_SP_GHOST;
    if (flags & NM_GRID_DEAD) bits |= NM_SP_DEAD;
    if (flags & NM_GRID_WALK) bits |= NM_SP_WALK;
    if (flags & NM_GRID_CORE) bits |= NM_SP_CORE;
    return bits;
}

/* A window's bytes a cell that step 5 may reach by decoding tiles side by side: issue 14's bound on
 * the whole build's peak. A second tile is decoded beside the first only within it. */
#define NM_WINDOW_PAIR_BYTES_PER_CELL 24

/* Step 5's workers for a band of `records` records: the request's count (at most
 * NM_WORKER_LIMIT), or by default as many as the records are worth. */
static int step5_workers(const wsource *s, size_t records)
{
    return s->workers > 0 ? (s->workers < NM_WORKER_LIMIT ? s->workers : NM_WORKER_LIMIT)
                          : nm_workers_for(records, 0);
}

/* A tile being fetched: its decoded records and the sidecar columns of those in the window. */
typedef struct fetched {
    wtile *t;
    nm_bgrd_tile_view v;
    nm_span_fields *fl;
    size_t nk, nf;
    int rc;
    nm_error err;
} fetched;

typedef struct fetch_job {
    wbuild *b;
    wsource *s;
    fetched *f;
    int workers;
} fetch_job;

/* The tile's local rectangle of window cells. */
static nm_bnvf_keep tile_keep(const wsource *s, const wtile *t)
{
    return (nm_bnvf_keep){(uint32_t)t->tnx, s->wgx0 + t->x0 - t->tgx0, s->wgx0 + t->x1 - t->tgx0,
                          s->wgy0 + t->y0 - t->tgy0, s->wgy0 + t->y1 - t->tgy0};
}

/* The records of a fetched tile in the window -> spans, written over the records already read (a
 * span is no larger than a record, and span k comes from record r >= k), cells descending. */
static void expand_fetched(wbuild *b, const wsource *s, fetched *f)
{
    wtile *t = f->t;
    const nm_bnvf_keep keep = tile_keep(s, t);
    _Static_assert(sizeof(wspan) <= sizeof(nm_grid_rec), "a span fits a record's slot");
    unsigned char *slots = (unsigned char *)f->v.own_recs;
    size_t nsp = 0, kf = 0;
    nm_cell_rows rows = {keep.tnx, 0, 0};
    for (size_t r = 0; r < f->v.n; r++) {
        const nm_grid_rec rec = f->v.own_recs[r];
        if (!nm_bnvf_keeps(&keep, &rows, (uint32_t)rec.cell)) continue;
        const nm_span_fields *fl = &f->fl[kf++];
        const int64_t gx = t->tgx0 + ((uint32_t)rec.cell - rows.row0), gy = t->tgy0 + rows.row;
        size_t c = (size_t)((gy - s->wgy0) * b->nx + (gx - s->wgx0));
        int bits = expand_cell(b, &rec, fl, c, gx, gy);
        if (bits < 0) continue;
        wspan sp = {rec.cell, rec.h, rec.rid == b->w->region ? fl->scc : 0, (uint8_t)bits};
        memcpy(slots + nsp++ * sizeof sp, &sp, sizeof sp);
    }
    wspan *sp = (wspan *)(void *)slots; /* cells descending: see wtile */
    for (size_t i = 0; i < nsp / 2; i++) {
        wspan x = sp[i];
        sp[i] = sp[nsp - 1 - i];
        sp[nsp - 1 - i] = x;
    }
    void *p = nm_realloc(f->v.own_recs, (nsp ? nsp : 1) * sizeof(wspan));
    t->sp = (wspan *)(p ? p : f->v.own_recs);
    t->nsp = nsp;
    t->fetched = true;
    f->v.own_recs = NULL; /* now t->sp */
}

/* One tile's sidecar merge and its expansion into the raster layers and its spans (a chunk:
 * scratch by worker, as nm_parallel_chunks hands them out). The tiles of a batch own disjoint
 * cells, so their expansions write disjoint bytes of the layers. */
static int merge_expand_one(void *ctx, size_t k)
{
    fetch_job *j = ctx;
    fetched *f = &j->f[k];
    const nm_bnvf_keep keep = tile_keep(j->s, f->t);
    nm_cell_rows rows = {keep.tnx, 0, 0};
    for (size_t r = 0; r < f->v.n; r++) f->nk += nm_bnvf_keeps(&keep, &rows, (uint32_t)f->v.own_recs[r].cell);
    f->fl = nm_malloc((f->nk ? f->nk : 1) * sizeof *f->fl);
    f->rc = f->fl ? nm_bnvf_merge_tile_kept(j->s->fields, j->s->zone, f->t->id, f->v.own_recs, f->v.n,
                                            j->s->ws->scratch[k % (size_t)j->workers].fspn, &keep, f->fl,
                                            &f->nf, &f->err)
                  : nm_fail(&f->err, NM_ERR_NOMEM, "window step 5: tile %u: out of memory for %zu fields",
                            f->t->id, f->nk);
    if (f->rc == NM_OK)
        expand_fetched(j->b, j->s, f);
    return f->rc;
}

/* Tiles need[0 .. n) decoded side by side (their records), then merged with their sidecar
 * fields and expanded into the layers and their spans side by side. */
static int fetch_batch(wbuild *b, wsource *s, const size_t *need, size_t n, int workers, nm_error *err)
{
    wmem *m = b->m;
    fetched f[NM_WORKER_LIMIT];
    uint32_t ids[NM_WORKER_LIMIT] = {0};
    nm_bgrd_tile_view v[NM_WORKER_LIMIT];
    memset(f, 0, sizeof f);
    for (size_t k = 0; k < n; k++) {
        f[k].t = &s->t[need[k]];
        ids[k] = f[k].t->id;
    }
    int rc = nm_bgrd_view_tiles(s->g, s->zone, ids, n, NULL, NULL, workers, s->ws, v, err);
    if (rc) {
        nm_error_prefix(err, "window step 3");
        for (size_t k = 0; k < n; k++) nm_bgrd_tile_view_free(&v[k]);
        return rc;
    }
    for (size_t k = 0; k < n; k++) f[k].v = v[k];
    if (n > 1) b->w->tiles_paired += (uint32_t)n;
    fetch_job j = {b, s, f, workers};
    const int prc = nm_parallel_chunks(n, workers, merge_expand_one, &j); /* NOMEM: no tile ran */
    size_t vb = 0;
    for (size_t k = 0; k < n; k++) vb += f[k].v.n * sizeof(nm_grid_rec) + f[k].nk * sizeof(nm_span_fields);
    m->now += vb;
    if (m->now > m->peak) m->peak = m->now;
    for (size_t k = 0; k < n && rc == NM_OK; k++) /* the first failing tile in need's order */
        if (f[k].rc) {
            rc = f[k].rc;
            if (err) *err = f[k].err;
            nm_error_prefix(err, "window step 3");
        }
    if (rc == NM_OK && prc) rc = nm_fail(err, prc, "window step 5: out of memory");
    for (size_t k = 0; k < n; k++) {
        if (rc == NM_OK)
            m->now += f[k].t->nsp * sizeof(wspan);
        nm_free(f[k].fl);
        nm_bgrd_tile_view_free(&f[k].v);
    }
    m->now -= vb <= m->now ? vb : m->now;
    return rc;
}

/* Tiles the cache does not hold, for the active tiles that have nothing to read yet: decoded in
 * batches, each tile expanded into the raster layers right after its batch decodes (a cell's
 * records all come from its tile, in stored order, so the layers are the same in any tile order)
 * and kept only as its spans in the window. 建窗的内存: a whole tile, apron and all, is held only
 * while it decodes, its sidecar fields only for its records inside the window (a tile is ~1.2 M
 * cells with its apron, most of it outside a window at the window's edge); two tiles decode side
 * by side only while the build's bytes stay within NM_WINDOW_PAIR_BYTES_PER_CELL a cell with
 * every record of the batch and its fields counted (two whole tiles at once were up to 7.7 B a
 * cell of a 3 M-cell window); the band of spans waits for the row order of the span vector. */
static int fetch_views(wbuild *b, wsource *s, const size_t *act, size_t na, nm_error *err)
{
    const size_t budget = (size_t)NM_WINDOW_PAIR_BYTES_PER_CELL * b->cells;
    size_t need[NM_WORKER_LIMIT], n = 0, batch = 0, records = 0;
    for (size_t k = 0; k < na; k++) {
        const wtile *t = &s->t[act[k]];
        if (!t->v.recs && !t->fetched)
            records += s->g ? s->g->zones[s->zone].tiles[t->id].records : 0;
    }
    const int workers = step5_workers(s, records);
    for (size_t k = 0; k <= na; k++) {
        const wtile *t = k < na ? &s->t[act[k]] : NULL;
        if (t && (t->v.recs || t->fetched)) continue;
        if (t && !s->g) return nm_fail(err, NM_ERR_STATE, "window step 5: tile %u has no records to read", t->id);
        if (t && !s->fields) return nm_fail(err, NM_ERR_STATE, "window step 5: tile %u: no sidecar fields", t->id);
        const size_t bytes = t ? s->g->zones[s->zone].tiles[t->id].records * (sizeof(nm_grid_rec) + sizeof(nm_span_fields)) : 0;
        if (n && (!t || n == (size_t)workers || b->m->now + batch + bytes > budget)) {
            const int rc = fetch_batch(b, s, need, n, workers, err);
            if (rc) return rc;
            n = 0;
            batch = 0;
        }
        if (t) {
            need[n++] = act[k];
            batch += bytes;
        }
    }
    return NM_OK;
}

/* Rows of a band judged in one chunk of step 5's parallel pass. */
enum { NM_JUDGE_ROWS = 16 };

typedef struct judge_job {
    wbuild *b;
    wsource *s;
    const size_t *act;
    size_t na;
    int32_t j, jb;
} judge_job;

static int judge_chunk(void *ctx, size_t k)
{
    const judge_job *J = ctx;
    wbuild *b = J->b;
    const int32_t r0 = J->j + (int32_t)k * NM_JUDGE_ROWS;
    const int32_t r1 = r0 + NM_JUDGE_ROWS < J->jb ? r0 + NM_JUDGE_ROWS : J->jb;
    for (int32_t r = r0; r < r1; r++)
        for (size_t i = 0; i < J->na; i++) {
            wtile *t = &J->s->t[J->act[i]];
            if (!t->judged) continue;
            size_t a, e;
            const int64_t delta = row_run(t, b->req->gx0, b->req->gy0, b->nx, r, t->j0, &a, &e);
            for (size_t q = a; q < e; q++) {
                const size_t c = (size_t)((int64_t)t->v.recs[q].cell + delta);
                t->judged[q - t->j0] = (int8_t)expand_cell(b, &t->v.recs[q], &t->v.fields[q], c,
                                                           b->req->gx0 + (int64_t)(c - (size_t)r * (size_t)b->nx),
                                                           b->req->gy0 + r);
            }
        }
    return NM_OK;
}

/* The records the band's view tiles hold for rows [j, jb), judged into the raster layers on the
 * workers in chunks of rows (a cell's records all lie in one row of one tile, in stored order, so
 * the layers are the same however the rows are shared out); what each adds to the span vector
 * waits in t->judged for the row order. */
static int judge_band(wbuild *b, wsource *s, const size_t *act, size_t na, int32_t j, int32_t jb, nm_error *err)
{
    size_t records = 0;
    for (size_t i = 0; i < na; i++) {
        wtile *t = &s->t[act[i]];
        if (t->fetched || !t->v.recs) continue;
        size_t a, e, a1, e1;
        row_run(t, b->req->gx0, b->req->gy0, b->nx, j, t->pos, &a, &e);
        row_run(t, b->req->gx0, b->req->gy0, b->nx, jb - 1, a, &a1, &e1);
        t->j0 = a;
        t->nj = e1 > a ? e1 - a : 0;
        t->judged = (int8_t *)walloc(b->m, t->nj ? t->nj : 1, 1);
        if (!t->judged) return nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu records)", t->nj);
        records += t->nj;
    }
    const int workers = step5_workers(s, records);
    judge_job J = {b, s, act, na, j, jb};
    return nm_parallel_chunks(((size_t)(jb - j) + NM_JUDGE_ROWS - 1) / NM_JUDGE_ROWS, workers, judge_chunk, &J);
}

static void judged_release(wbuild *b, wsource *s, const size_t *act, size_t na)
{
    for (size_t i = 0; i < na; i++) {
        wtile *t = &s->t[act[i]];
        if (t->judged) wrelease(b->m, (void **)&t->judged, t->nj ? t->nj : 1);
    }
}

/* A band's spans go to the span vector in chunks of rows: each (row, tile) run is found and
 * counted on the workers, placed in row order by a running sum, and written on the workers; then
 * the chunk's read spans leave their fetched tiles. The chunk's rows depend on the window alone
 * (about a 64th of its rows, one row in a window under 128 rows), so the layers, the spans and the
 * byte count are the same for any worker count; the spans of a chunk are held twice for a moment,
 * at most ~0.25 B a window cell. Leg 8 of the large world (8.9 M spans): 82 ms row by row on one
 * thread, 55 ms in chunks on two. A chunk under 65 536 cells stays on one thread, where each run
 * is written as it is found. */
enum { NM_CHUNK_ROWS_MAX = 64 };

typedef struct row_span_run { /* one tile's run of a row */
    size_t a, e;               /* its records (or fetched spans) */
    int64_t delta;             /* window cell minus tile-local cell */
    uint32_t at, n;            /* its first span in the vector, its span count */
} row_span_run;

typedef struct push_job {
    wbuild *b;
    wsource *s;
    const size_t *act;
    size_t na;
    int32_t r0;
    bool count;                /* runs_row counts each run's spans too */
    row_span_run *run;         /* [(r - r0) * na + k] */
} push_job;

/* The runs of row r0 + k, and with J->count their span counts. */
static int runs_row(void *ctx, size_t k)
{
    const push_job *J = ctx;
    const wbuild *b = J->b;
    const int32_t r = J->r0 + (int32_t)k;
    for (size_t i = 0; i < J->na; i++) {
        const wtile *t = &J->s->t[J->act[i]];
        row_span_run *u = &J->run[k * J->na + i];
        u->delta = row_run(t, b->req->gx0, b->req->gy0, b->nx, r, t->pos, &u->a, &u->e);
        size_t n = u->e - u->a;
        if (J->count && !t->fetched) {
            const int8_t *const judged = t->judged + (u->a - t->j0);
            for (size_t q = 0; q < u->e - u->a; q++) n -= judged[q] < 0;
        }
        u->n = (uint32_t)n;
    }
    return NM_OK;
}

/* Run u of tile t written from its place on; returns its span count. */
static size_t write_run(const nm_window *w, const wtile *t, const row_span_run *u)
{
    /* the columns and the tile in locals: the byte stores could alias them otherwise */
    uint32_t *const cell = w->spans.sp_cell, *const scc = w->sp_scc;
    float *const hs = w->spans.sp_h;
    uint8_t *const bits = w->sp_bits;
    const int64_t delta = u->delta;
    const size_t a = u->a, e = u->e;
    size_t at = u->at;
    if (t->fetched) { /* cells expanded at the fetch, descending: the row read backwards */
        const wspan *const sp = t->sp;
        for (size_t q = e; q-- > a; at++) {
            cell[at] = (uint32_t)((int64_t)sp[q].cell + delta);
            hs[at] = sp[q].h;
            bits[at] = sp[q].bits;
            scc[at] = sp[q].scc;
        }
    } else { /* judged: the spans in row order */
        const nm_grid_rec *const recs = t->v.recs;
        const nm_span_fields *const fl = t->v.fields;
        const int8_t *const judged = t->judged;
        const size_t j0 = t->j0;
        const uint32_t region = w->region;
        for (size_t q = a; q < e; q++) {
            const int8_t jb = judged[q - j0];
            if (jb < 0) continue;
            cell[at] = (uint32_t)((int64_t)recs[q].cell + delta);
            hs[at] = recs[q].h;
            bits[at] = (uint8_t)jb;
            scc[at] = recs[q].rid == region ? fl[q].scc : 0;
            at++;
        }
    }
    return at - u->at;
}

static int write_row(void *ctx, size_t k)
{
    const push_job *J = ctx;
    for (size_t i = 0; i < J->na; i++)
        write_run(J->b->w, &J->s->t[J->act[i]], &J->run[k * J->na + i]);
    return NM_OK;
}

/* Run u placed at span at, unless its records would pass the bound (false). */
static bool place_run(row_span_run *u, size_t at, size_t bound)
{
    if (at + (u->e - u->a) > bound) return false;
    u->at = (uint32_t)at;
    return true;
}

/* The rows of a chunk. */
static int32_t chunk_rows(const wbuild *b)
{
    const int32_t r = b->ny / 64;
    return r < 1 ? 1 : r > NM_CHUNK_ROWS_MAX ? NM_CHUNK_ROWS_MAX : r;
}

/* Rows [j, jb) of the band's tiles into the span vector (*ns spans so far, at most bound); run
 * holds chunk_rows x na runs. On one thread each run is written as it is found, without the
 * count that places the runs of the workers. */
static int band_spans(wbuild *b, wsource *s, const size_t *act, size_t na, int32_t j, int32_t jb,
                      row_span_run *run, uint32_t *ns, uint32_t *counted, size_t bound, nm_error *err)
{
    const int32_t rows = chunk_rows(b);
    for (int32_t r0 = j; r0 < jb; r0 += rows) {
        const int32_t r1 = r0 + rows < jb ? r0 + rows : jb;
        const size_t nr = (size_t)(r1 - r0);
        const int workers = step5_workers(s, nr * (size_t)b->nx); /* a small window's: one */
        push_job J = {b, s, act, na, r0, workers > 1, run};
        size_t at = *ns, bad = SIZE_MAX;
        int rc = NM_OK;
        if (workers == 1) {
            for (size_t k = 0; k < nr && bad == SIZE_MAX; k++) {
                runs_row(&J, k);
                for (size_t i = 0; i < na && bad == SIZE_MAX; i++) {
                    row_span_run *u = &run[k * na + i];
                    if (!place_run(u, at, bound)) {
                        bad = i;
                        break;
                    }
                    at += write_run(b->w, &s->t[act[i]], u);
                }
            }
        } else {
            rc = nm_parallel_chunks(nr, workers, runs_row, &J);
            for (size_t k = 0; k < nr * na && !rc && bad == SIZE_MAX; k++) {
                if (!place_run(&run[k], at, bound)) {
                    bad = k % na;
                    break;
                }
                at += run[k].n;
            }
            if (!rc && bad == SIZE_MAX) rc = nm_parallel_chunks(nr, workers, write_row, &J);
        }
        if (bad != SIZE_MAX)
            return nm_fail(err, NM_ERR_CORRUPT, "window step 5: tile %u holds more records than its directory says",
                           s->t[act[bad]].id);
        if (rc) return nm_fail(err, rc, "window step 5: out of memory");
        *ns = (uint32_t)at;
        count_spans(b->m, counted, *ns);
        for (size_t i = 0; i < na; i++) { /* the chunk's runs are read */
            wtile *t = &s->t[act[i]];
            const row_span_run *last = &run[(nr - 1) * na + i];
            if (t->fetched) cut_read_spans(t, last->a, b->m);
            else t->pos = last->e;
        }
    }
    return NM_OK;
}

/* 建窗 step 5: records -> raster layers and span vector, band by band (a band: rows over which
 * the same tiles are read). The span columns are written a chunk of rows at a time (band_spans),
 * and a fetched tile's spans leave it as they are read, so no span is held twice for long. */
static int step5_expand(wbuild *b, wsource *s, nm_error *err)
{
    nm_window *w = b->w;
    wmem *m = b->m;
    const int32_t ny = b->ny;
    w->lay = (uint8_t *)walloc(m, b->cells, 1);
    w->core = (uint8_t *)walloc(m, b->cells, 1);
    b->clr = (uint16_t *)walloc(m, b->cells, sizeof *b->clr);
    w->medial = (uint8_t *)walloc(m, b->cells, 1);
    w->stepbits = (uint8_t *)walloc(m, b->cells, 1);
    b->fac = (uint8_t *)walloc(m, b->cells, 1);
    size_t *act = (size_t *)walloc(m, s->nt ? s->nt : 1, sizeof *act);
    const size_t nrun = (size_t)chunk_rows(b) * (s->nt ? s->nt : 1);
    row_span_run *run = (row_span_run *)walloc(m, nrun, sizeof *run);
    if (!w->lay || !w->core || !b->clr || !w->medial || !w->stepbits || !b->fac || !act || !run) {
        nm_free(act);
        nm_free(run);
        return nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu cells)", b->cells);
    }
    const size_t bound = span_bound(s);
    if (size_spans(w, bound ? bound : 1)) {
        nm_free(act);
        nm_free(run);
        return nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu records)", bound);
    }
    int rc = NM_OK;
    uint32_t ns = 0, counted = 0;
    size_t na = 0, next = 0;
    for (int32_t j = 0; j < ny && rc == NM_OK;) {
        /* tiles done before row j leave (their own buffers with them); tiles starting join */
        size_t keep = 0;
        for (size_t k = 0; k < na; k++) {
            wtile *t = &s->t[act[k]];
            if (t->y1 > j) act[keep++] = act[k];
            else tile_release(t, m);
        }
        na = keep;
        for (; next < s->nt && s->t[next].y0 <= j; next++) {
            size_t at = na++; /* the active tiles stay sorted by x0 */
            while (at > 0 && s->t[act[at - 1]].x0 > s->t[next].x0) {
                act[at] = act[at - 1];
                at--;
            }
            act[at] = next;
        }
        if (na == 0) {
            if (next >= s->nt) break;
            j = s->t[next].y0;
            continue;
        }
        int32_t jb = ny;
        for (size_t k = 0; k < na; k++)
            if (s->t[act[k]].y1 < jb) jb = s->t[act[k]].y1;
        if (next < s->nt && s->t[next].y0 < jb) jb = s->t[next].y0;
        for (size_t k = 1; k < na; k++)
            if (s->t[act[k - 1]].x1 > s->t[act[k]].x0) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "window step 5: tiles %u and %u both own cells of row %d",
                             s->t[act[k - 1]].id, s->t[act[k]].id, j);
                break;
            }
        if (rc == NM_OK) rc = fetch_views(b, s, act, na, err);
        if (rc == NM_OK) rc = judge_band(b, s, act, na, j, jb, err);
        if (rc == NM_OK) rc = band_spans(b, s, act, na, j, jb, run, &ns, &counted, bound, err);
        judged_release(b, s, act, na);
        if (rc) break;
        j = jb;
    }
    w->spans.nspans = ns;
    if (rc == NM_OK) rc = size_spans(w, ns ? ns : 1); /* shrinks: no copy */
    /* the records are spent: tiles read from buffers of their own release them now */
    wrelease(m, (void **)&act, (s->nt ? s->nt : 1) * sizeof *act);
    wrelease(m, (void **)&run, nrun * sizeof *run);
    source_free(s, m);
    w->free_step[NM_WTMP_RECORDS] = 5;
    return rc;
}

/* 建窗 step 6: wall selection through the sidecar's boundary edge table (FWAL). */
static int step6_select_walls(wbuild *b, nm_error *err)
{
    size_t kept = 0;
    for (size_t i = 0; i < b->nwalls; i++) {
        bool keep = false;
        int rc = nm_bnvf_wall_kept(b->req->fzone, b->walls[i].key, b->w->region, &keep, err);
        if (rc) {
            nm_error_prefix(err, "window step 6");
            return rc;
        }
        if (keep) b->walls[kept++] = b->walls[i];
    }
    b->nwalls = kept;
    b->w->free_step[NM_WTMP_WALLS] = 6; /* the unselected edges are gone */
    return NM_OK;
}

/* A double cell number clamped to [lo, hi] before it is converted (a polygon's vertex or a disc
 * may lie anywhere a double reaches, and a double beyond int64_t does not convert). */
static int64_t clamp_cell(double v, int64_t lo, int64_t hi)
{
    if (!(v >= (double)lo)) return lo;
    if (v >= (double)hi) return hi;
    return (int64_t)v;
}

/* Cells of the rectangle [x0, x1] x [y0, y1] px clipped to the window; false when empty. */
static bool clip_cells(const nm_window *w, double x0, double y0, double x1, double y1, int64_t *i0,
                       int64_t *j0, int64_t *i1, int64_t *j1)
{
    *i0 = clamp_cell(floor((x0 - w->win.x0) / NM_kCS), -1, w->win.nx);
    *i1 = clamp_cell(floor((x1 - w->win.x0) / NM_kCS), -1, w->win.nx);
    *j0 = clamp_cell(floor((y0 - w->win.y0) / NM_kCS), -1, w->win.ny);
    *j1 = clamp_cell(floor((y1 - w->win.y0) / NM_kCS), -1, w->win.ny);
    if (*i0 < 0) *i0 = 0;
    if (*j0 < 0) *j0 = 0;
    if (*i1 >= w->win.nx) *i1 = w->win.nx - 1;
    if (*j1 >= w->win.ny) *j1 = w->win.ny - 1;
    return *i0 <= *i1 && *j0 <= *j1;
}

static void stamp_nogo(wbuild *b, size_t c)
{
    b->w->core[c] = b->w->lay[c] = 0;
    b->clr[c] = 0; /* clearance 0 */
    b->w->nogo_cells++;
}

/* 建窗 step 7: authored no-go polygons (even-odd, cell-centre test), a row of the polygon's box at
 * a time (nm_nogo_poly_row). A polygon drawn on a floor stamps only cells whose lh (the highest
 * non-Ghost height of the region there) lies in the floor band; lh is read from the span vector
 * one row of the box at a time, so no per-cell layer is held for it. */
static int step7_nogo_polys(wbuild *b, nm_error *err)
{
    const nm_window_request *req = b->req;
    nm_window *w = b->w;
    const nm_span_table *t = &w->spans;
    float *lh = NULL;   /* one row of the box */
    uint8_t *in = NULL; /* one row of the box: inside the ring */
    double *xs = NULL;  /* a row's crossings of the ring */
    size_t lh_bytes = 0, in_bytes = 0, xs_bytes = 0;
    int rc = NM_OK;
    for (uint32_t p = 0; p < req->npolys && rc == NM_OK; p++) {
        const nm_nogo_poly *pg = &req->polys[p];
        if (!pg->xy || pg->n < 3) continue;
        double lx = pg->xy[0], hx = lx, ly = pg->xy[1], hy = ly;
        for (uint32_t k = 1; k < pg->n; k++) {
            lx = fmin(lx, pg->xy[2 * k]);
            hx = fmax(hx, pg->xy[2 * k]);
            ly = fmin(ly, pg->xy[2 * k + 1]);
            hy = fmax(hy, pg->xy[2 * k + 1]);
        }
        int64_t i0, j0, i1, j1;
        if (!clip_cells(w, lx, ly, hx, hy, &i0, &j0, &i1, &j1)) continue;
        const size_t width = (size_t)(i1 - i0 + 1);
        if ((pg->banded && !wgrow(b->m, (void **)&lh, &lh_bytes, width * sizeof(float))) ||
            !wgrow(b->m, (void **)&in, &in_bytes, width) ||
            !wgrow(b->m, (void **)&xs, &xs_bytes, (size_t)pg->n * sizeof(double))) {
            rc = nm_fail(err, NM_ERR_NOMEM, "window step 7: out of memory");
            break;
        }
        for (int64_t j = j0; j <= j1; j++) {
            size_t row = (size_t)j * (size_t)w->win.nx;
            if (pg->banded) {
                for (int64_t i = i0; i <= i1; i++) lh[i - i0] = NM_kFloorYNone;
                uint32_t k;
                cell_spans(t, (uint32_t)(row + (size_t)i0), &k);
                for (; k < t->nspans && t->sp_cell[k] <= row + (size_t)i1; k++)
                    if ((w->sp_bits[k] & (NM_SP_VIS3 | NM_SP_GHOST)) == NM_SP_VIS3 &&
                        t->sp_h[k] > lh[t->sp_cell[k] - row - (size_t)i0])
                        lh[t->sp_cell[k] - row - (size_t)i0] = t->sp_h[k];
            }
            nm_nogo_poly_row(pg, w->win.y0 + ((double)j + 0.5) * NM_kCS, w->win.x0, NM_kCS, i0, i1, xs, in);
            for (int64_t i = i0; i <= i1; i++) {
                if (!in[i - i0]) continue;
                if (pg->banded && !(lh[i - i0] > NM_kFloorYValidMin &&
                                    fabs((double)lh[i - i0] - pg->floor_y) <= NM_kBaseNavFloorBand))
                    continue;
                stamp_nogo(b, row + (size_t)i);
            }
        }
    }
    wrelease(b->m, (void **)&in, in_bytes);
    wrelease(b->m, (void **)&xs, xs_bytes);
    if (lh) {
        wrelease(b->m, (void **)&lh, lh_bytes);
        w->free_step[NM_WTMP_LH] = 7;
    }
    return rc;
}

/* Whether disc d holds the centre of cell i of a row whose centres lie cy2 (squared) from its
 * centre's row: 建窗 step 8's planar distance test. */
static inline bool disc_holds(const nm_window *w, const nm_nogo_disc *d, int64_t i, double cy2)
{
    const double cx = w->win.x0 + ((double)i + 0.5) * NM_kCS - d->x;
    return !(cx * cx + cy2 > d->r * d->r);
}

/* The run [*lo, *hi] of the cells in [i0, i1] of a row that disc d holds; false when none. Along a
 * row the centres' squared distance to the disc's centre falls, then rises (rounding keeps that),
 * so they are one run around the cell nearest the centre's column. Its ends come from the square
 * root and are then settled cell by cell with disc_holds itself, so the run is the test's (the
 * estimate alone missed no end in 10^8 random cells on a disc's rim; the settling makes it sure). */
static bool disc_run(const nm_window *w, const nm_nogo_disc *d, double cy2, int64_t i0, int64_t i1,
                     int64_t *lo, int64_t *hi)
{
    if (d->r * d->r == INFINITY) { /* no distance exceeds it */
        *lo = i0;
        *hi = i1;
        return true;
    }
    const double ic = (d->x - w->win.x0) / NM_kCS - 0.5; /* the centre's column, in cells */
    int64_t s = clamp_cell(floor(ic + 0.5), i0, i1); /* the cell nearest that column */
    if (!disc_holds(w, d, s, cy2)) {
        if (s > i0 && disc_holds(w, d, s - 1, cy2)) s--;
        else if (s < i1 && disc_holds(w, d, s + 1, cy2)) s++;
        else return false;
    }
    const double half = sqrt(fmax(d->r * d->r - cy2, 0.0)) / NM_kCS;
    int64_t a = clamp_cell(ceil(ic - half), i0, s), b = clamp_cell(floor(ic + half), s, i1);
    if (disc_holds(w, d, a, cy2))
        while (a > i0 && disc_holds(w, d, a - 1, cy2)) a--;
    else
        while (!disc_holds(w, d, a, cy2)) a++; /* stops at s */
    if (disc_holds(w, d, b, cy2))
        while (b < i1 && disc_holds(w, d, b + 1, cy2)) b++;
    else
        while (!disc_holds(w, d, b, cy2)) b--;
    *lo = a;
    *hi = b;
    return true;
}

typedef struct disc_cells {
    int64_t lo, hi;
} disc_cells;

/* A disc's box of cells clipped to the window; j0 > j1: none. */
typedef struct disc_box {
    int64_t i0, j0, i1, j1;
} disc_box;

static int cmp_run(const void *a, const void *b)
{
    const int64_t x = ((const disc_cells *)a)->lo, y = ((const disc_cells *)b)->lo;
    return (x > y) - (x < y);
}

/* 建窗 step 8: runtime discs, by planar distance only, a row at a time: each disc's run of cells
 * in the row, then their union stamped once. Per disc and cell (as before) a host's many large
 * discs cost their count times the window; now the rows times their count, and the cells once. */
static int step8_nogo_discs(wbuild *b, nm_error *err)
{
    const nm_window_request *req = b->req;
    nm_window *w = b->w;
    if (!req->ndiscs) return NM_OK;
    const size_t box_bytes = (size_t)req->ndiscs * sizeof(disc_box);
    const size_t run_bytes = (size_t)req->ndiscs * sizeof(disc_cells);
    disc_box *box = (disc_box *)walloc(b->m, box_bytes, 1);
    disc_cells *run = (disc_cells *)walloc(b->m, run_bytes, 1);
    int rc = box && run ? NM_OK : nm_fail(err, NM_ERR_NOMEM, "window step 8: out of memory");
    int64_t jlo = w->win.ny, jhi = -1;
    for (uint32_t d = 0; d < req->ndiscs && rc == NM_OK; d++) {
        const nm_nogo_disc *dc = &req->discs[d];
        disc_box *bx = &box[d];
        if (!(dc->r >= 0) || !isfinite(dc->x) || !isfinite(dc->y) ||
            !clip_cells(w, dc->x - dc->r, dc->y - dc->r, dc->x + dc->r, dc->y + dc->r, &bx->i0, &bx->j0,
                        &bx->i1, &bx->j1)) {
            *bx = (disc_box){0, 1, 0, 0}; /* none */
            continue;
        }
        if (bx->j0 < jlo) jlo = bx->j0;
        if (bx->j1 > jhi) jhi = bx->j1;
    }
    for (int64_t j = jlo; j <= jhi && rc == NM_OK; j++) {
        size_t n = 0;
        for (uint32_t d = 0; d < req->ndiscs; d++) {
            const disc_box *bx = &box[d];
            if (j < bx->j0 || j > bx->j1) continue;
            const double cy = w->win.y0 + ((double)j + 0.5) * NM_kCS - req->discs[d].y;
            if (disc_run(w, &req->discs[d], cy * cy, bx->i0, bx->i1, &run[n].lo, &run[n].hi)) n++;
        }
        if (n > 1) qsort(run, n, sizeof *run, cmp_run);
        const size_t row = (size_t)j * (size_t)w->win.nx;
        int64_t next = INT64_MIN; /* the first cell not stamped yet */
        for (size_t k = 0; k < n; k++)
            for (int64_t i = run[k].lo > next ? run[k].lo : next; i <= run[k].hi; i++) {
                stamp_nogo(b, row + (size_t)i);
                next = i + 1;
            }
    }
    wrelease(b->m, (void **)&run, run_bytes);
    wrelease(b->m, (void **)&box, box_bytes);
    return rc;
}

/* Step 9 in NM_PASS_CHUNKS ranges of cells, on the request's workers: a range's step bits and
 * its count of facade segments, then its segments at their place in the row-major list. */
typedef struct facade_job {
    pass_job p;
    size_t before[NM_PASS_CHUNKS + 1]; /* segments of the ranges before range k */
} facade_job;

/* Facade segment bit d (0: the edge with (i+1, j), 1: with (i, j+1)) of a cell in lay. */
static inline bool facade_at(uint8_t fb, int d)
{
    return (fb & (1u << d)) && (fb & (1u << (4 + d)));
}

static int steps_range(void *ctx, size_t k)
{
    facade_job *J = ctx;
    const wbuild *b = J->p.b;
    nm_window *w = b->w;
    size_t a, e, n = 0;
    pass_range(&J->p, k, &a, &e);
    for (size_t c = a; c < e; c++) {
        if (!w->lay[c]) {
            w->stepbits[c] = 0;
            continue;
        }
        const uint8_t fb = b->fac[c];
        uint8_t keep = 0;
        for (int d = 0; d < 4; d++)
            if (fb & (1u << d)) keep |= (uint8_t)(3u << (2 * d));
        w->stepbits[c] &= keep;
        n += facade_at(fb, 0) + facade_at(fb, 1);
    }
    J->before[k + 1] = n;
    return NM_OK;
}

static int facades_range(void *ctx, size_t k)
{
    const facade_job *J = ctx;
    const wbuild *b = J->p.b;
    const nm_window *w = b->w;
    size_t a, e, o = J->before[k];
    pass_range(&J->p, k, &a, &e);
    for (size_t c = a; c < e && o < J->before[k + 1]; c++) {
        if (!w->lay[c]) continue;
        for (int d = 0; d < 2; d++) {
            if (!facade_at(b->fac[c], d)) continue;
            const size_t i = c % (size_t)b->nx, j = c / (size_t)b->nx;
            double ex = w->win.x0 + (double)(i + 1) * NM_kCS, ey = w->win.y0 + (double)(j + 1) * NM_kCS;
            if (d == 0) /* common edge with (i+1, j): the vertical line x = ex */
                b->facades[o++] = (nm_window_seg){ex, ey - NM_kCS, ex, ey, NM_SEG_FACADE};
            else        /* common edge with (i, j+1): the horizontal line y = ey */
                b->facades[o++] = (nm_window_seg){ex - NM_kCS, ey, ex, ey, NM_SEG_FACADE};
        }
    }
    return NM_OK;
}

/* 建窗 step 9 (禁步与立面段): per direction, the main pack's bits only gate the read of the
 * re-judged bits; an orthogonal direction with a segment bit gives a facade segment on the common
 * edge. Cells stamped out of lay give neither. */
static int step9_steps_facades(wbuild *b, nm_error *err)
{
    facade_job J = {{b, b->cells}, {0}};
    if (run_pass(&J.p, steps_range))
        return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory");
    for (size_t k = 0; k < NM_PASS_CHUNKS; k++) J.before[k + 1] += J.before[k];
    b->nfac = J.before[NM_PASS_CHUNKS];
    /* the list's block as a list doubling from 64 entries would hold it (step 13 releases that) */
    size_t cap = 0;
    while (cap < b->nfac) cap = cap ? 2 * cap : 64;
    if (cap) {
        b->facades = (nm_window_seg *)walloc(b->m, cap, sizeof *b->facades);
        if (!b->facades) return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (facades)");
        if (run_pass(&J.p, facades_range))
            return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory");
    }
    wrelease(b->m, (void **)&b->fac, b->cells);
    b->w->free_step[NM_WTMP_BITMAPS] = 9;
    return NM_OK;
}

/* 建窗 step 10: seed span — the region's span of the seed cell nearest the pick height. */
static int step10_seed_span(wbuild *b, nm_error *err)
{
    nm_window *w = b->w;
    uint32_t first, cnt = cell_spans(&w->spans, w->seed_cell, &first);
    double bd = 0;
    for (uint32_t k = first; k < first + cnt; k++) {
        if (!(w->sp_bits[k] & NM_SP_VIS3)) continue;
        double d = fabs((double)w->spans.sp_h[k] - b->req->seed_h);
        if (w->seed_span == UINT32_MAX || d < bd) {
            w->seed_span = k;
            bd = d;
        }
    }
    if (w->seed_span == UINT32_MAX)
        return nm_fail(err, NM_ERR_STATE, "window step 10: the seed cell (%lld, %lld) has no span of region %u",
                       (long long)b->req->seed_gx, (long long)b->req->seed_gy, w->region);
    return NM_OK;
}

/* 建窗 step 11: off-mesh links of the zone (FLNK valid == 3), both ends landed in the window. */
static int step11_links(wbuild *b, nm_error *err)
{
    const nm_window_request *req = b->req;
    nm_window *w = b->w;
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
                if (i < 0 || j < 0 || i >= b->nx || j >= b->ny) {
                    inside = false;
                    break;
                }
                cell[e] = (uint32_t)(j * b->nx + i);
                span[e] = landing_span(w, cell[e], sd[e]->decl_h);
            }
            if (!inside) continue;
            if (span[0] == UINT32_MAX || span[1] == UINT32_MAX) {
                if (L->lo.rid == w->region && L->hi.rid == w->region) w->links_without_landing++;
                continue;
            }
            double dx = (double)sd[1]->gx - sd[0]->gx, dy = (double)sd[1]->gy - sd[0]->gy;
            double cost = fmax((double)L->cost_modifier, 1.0) * sqrt(dx * dx + dy * dy);
            int dirs = L->bidirectional ? 2 : 1;
            if (w->nlinks + (uint32_t)dirs > cap) {
                uint32_t nc = cap ? 2 * cap : 16;
                nm_window_link *nl = (nm_window_link *)nm_realloc(w->links, nc * sizeof *nl);
                if (!nl) return nm_fail(err, NM_ERR_NOMEM, "window step 11: out of memory (links)");
                b->m->now += (nc - cap) * sizeof *nl;
                if (b->m->now > b->m->peak) b->m->peak = b->m->now;
                w->links = nl;
                cap = nc;
            }
            w->links[w->nlinks++] = (nm_window_link){cell[0], cell[1], span[0], span[1], cost, L->boml_index};
            if (dirs == 2)
                w->links[w->nlinks++] = (nm_window_link){cell[1], cell[0], span[1], span[0], cost, L->boml_index};
        }
    }
    return NM_OK;
}

/* Step 12 over the spans of a range: REACH on the visible spans of the marked components. */
typedef struct reach_job {
    pass_job p;
    const uint8_t *mark;
    uint32_t n_scc;
} reach_job;

static int reach_range(void *ctx, size_t k)
{
    const reach_job *R = ctx;
    nm_window *w = R->p.b->w;
    size_t a, e;
    pass_range(&R->p, k, &a, &e);
    for (size_t q = a; q < e; q++) {
        const uint32_t s = w->sp_scc[q];
        if ((w->sp_bits[q] & NM_SP_VIS3) && s >= 1 && s <= R->n_scc && R->mark[s]) w->sp_bits[q] |= NM_SP_REACH;
    }
    return NM_OK;
}

/* 建窗 step 12: reach set — components reachable from the seed's in the DAG, closed over links.
 * The component column is spent afterwards (nothing downstream reads it): released here. */
static int step12_reach(wbuild *b, nm_error *err)
{
    nm_window *w = b->w;
    const nm_bnvf_dag *dag = nm_bnvf_dag_of(b->req->fzone, w->region);
    uint32_t seed_comp = w->sp_scc[w->seed_span];
    if (!dag || seed_comp < 1 || seed_comp > dag->n_scc)
        return nm_fail(err, NM_ERR_CORRUPT,
                       "window step 12: region %u: seed component %u not in the sidecar's component graph",
                       w->region, seed_comp);
    uint8_t *mark = (uint8_t *)walloc(b->m, (size_t)dag->n_scc + 1, 1);
    uint32_t *stack = (uint32_t *)walloc(b->m, (size_t)dag->n_scc + 1, sizeof(uint32_t));
    if (!mark || !stack) {
        nm_free(mark);
        nm_free(stack);
        return nm_fail(err, NM_ERR_NOMEM, "window step 12: out of memory (%u components)", dag->n_scc);
    }
    uint32_t count = 0;
    w->seed_comp = seed_comp;
    dag_extend(dag, seed_comp, mark, stack, &count);
    for (bool grew = true; grew;) {
        grew = false;
        for (uint32_t l = 0; l < w->nlinks; l++) {
            uint32_t a = w->sp_scc[w->links[l].from_span], c = w->sp_scc[w->links[l].to_span];
            if (a >= 1 && a <= dag->n_scc && mark[a] && c >= 1 && c <= dag->n_scc && !mark[c]) {
                dag_extend(dag, c, mark, stack, &count);
                grew = true;
            }
        }
    }
    const uint32_t ns = w->spans.nspans;
    const reach_job R = {{b, ns}, mark, dag->n_scc};
    const int prc = run_pass(&R.p, reach_range);
    w->reach_comps = count;
    wrelease(b->m, (void **)&mark, (size_t)dag->n_scc + 1);
    wrelease(b->m, (void **)&stack, ((size_t)dag->n_scc + 1) * sizeof(uint32_t));
    wrelease(b->m, (void **)&w->sp_scc, (size_t)(ns ? ns : 1) * sizeof(uint32_t));
    w->free_step[NM_WTMP_SCC] = 12;
    return prc ? nm_fail(err, prc, "window step 12: out of memory") : NM_OK;
}

static int clearance_range(void *ctx, size_t k)
{
    const pass_job *J = ctx;
    size_t a, e;
    pass_range(J, k, &a, &e);
    for (size_t c = a; c < e; c++) J->b->w->dist[c] = nm_grid_rec_clearance(J->b->clr[c]);
    return NM_OK;
}

/* The clearance layer in px (nm_grid_rec_clearance of the stored value: 0 stays 0), made when the
 * build holds least (the component column gone, the span index not yet built). */
static int clearance_layer(wbuild *b, nm_error *err)
{
    nm_window *w = b->w;
    w->dist = (float *)walloc(b->m, b->cells, sizeof(float));
    if (!w->dist) return nm_fail(err, NM_ERR_NOMEM, "window: clearance layer: out of memory (%zu cells)", b->cells);
    const pass_job J = {b, b->cells};
    if (run_pass(&J, clearance_range))
        return nm_fail(err, NM_ERR_NOMEM, "window: clearance layer: out of memory");
    wrelease(b->m, (void **)&b->clr, b->cells * sizeof *b->clr);
    w->free_step[NM_WTMP_CLR] = 12;
    return NM_OK;
}

/* The span index in NM_PASS_CHUNKS ranges of spans, on the request's workers. A range starts at a
 * span whose cell lies in another occupancy word than the cell of the span before it, so no two
 * ranges write one word and each range starts a cell. */
typedef struct index_job {
    pass_job p;
    uint32_t from[NM_PASS_CHUNKS + 1]; /* the ranges of spans */
    uint32_t before[NM_PASS_CHUNKS + 1]; /* occupied cells of the ranges before range k */
} index_job;

static inline bool starts_cell(const nm_span_table *t, uint32_t k)
{
    return k == 0 || t->sp_cell[k] != t->sp_cell[k - 1];
}

static int index_count(void *ctx, size_t k)
{
    index_job *J = ctx;
    const nm_span_table *t = &J->p.b->w->spans;
    uint32_t n = 0;
    for (uint32_t q = J->from[k]; q < J->from[k + 1]; q++) n += starts_cell(t, q);
    J->before[k + 1] = n;
    return NM_OK;
}

static int index_fill(void *ctx, size_t k)
{
    const index_job *J = ctx;
    nm_span_table *t = &J->p.b->w->spans;
    uint32_t o = J->before[k];
    for (uint32_t q = J->from[k]; q < J->from[k + 1]; q++) {
        if (!starts_cell(t, q)) continue;
        t->cs[o++] = q;
        const uint32_t c = t->sp_cell[q];
        t->occ_bits[c / 64] |= (uint64_t)1 << (c % 64);
    }
    return NM_OK;
}

/* The face pass: its ranges of occupied cells and the most spans a cell of each holds. */
typedef struct face_job {
    pass_job p;
    uint32_t max_col[NM_PASS_CHUNKS];
} face_job;

/* face[q] for the occupied cells q of range k (a pass over the nocc occupied cells), and the
 * range's largest column. */
static int index_face(void *ctx, size_t k)
{
    face_job *J = ctx;
    nm_span_table *t = &J->p.b->w->spans;
    size_t a, e;
    pass_range(&J->p, k, &a, &e);
    uint32_t most = 0;
    for (uint32_t q = (uint32_t)a; q < (uint32_t)e; q++) {
        const uint32_t s0 = t->cs[q], s1 = t->cs[q + 1], cnt = s1 - s0;
        most = cnt > most ? cnt : most;
        if (cnt < 3) /* one span spans no height, and two are a deck over ground, not a facade */
            continue; /* face[q] stays 0 (walloc zeroes) */
        float lo = t->sp_h[s0], hi = t->sp_h[s0];
        for (uint32_t s = s0; s < s1; s++) {
            lo = fminf(lo, t->sp_h[s]);
            hi = fmaxf(hi, t->sp_h[s]);
        }
        t->face[q] = (double)hi - (double)lo > NM_kClimb ? 1 : 0;
    }
    J->max_col[k] = most;
    return NM_OK;
}

/* The span table's index (occupancy bits, ranks, cell starts, face) over the cell-sorted span
 * vector (step 9's index, built once the component column is released so the two are never
 * held together; steps 7-12 find a cell's spans by binary search). */
static int span_index(wbuild *b, nm_error *err)
{
    nm_span_table *t = &b->w->spans;
    const uint32_t ns = t->nspans;
    size_t words = (b->cells + 63) / 64;
    t->occ_bits = (uint64_t *)walloc(b->m, words, sizeof(uint64_t));
    t->occ_rank = (uint32_t *)walloc(b->m, words, sizeof(uint32_t));
    index_job J = {{b, ns}, {0}, {0}};
    for (size_t k = 1; k < NM_PASS_CHUNKS; k++) {
        uint32_t q = (uint32_t)((uint64_t)ns * k / NM_PASS_CHUNKS);
        if (q < J.from[k - 1]) q = J.from[k - 1];
        while (q > 0 && q < ns && t->sp_cell[q] / 64 == t->sp_cell[q - 1] / 64) q++;
        J.from[k] = q;
    }
    J.from[NM_PASS_CHUNKS] = ns;
    if (run_pass(&J.p, index_count))
        return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (span table)");
    for (size_t k = 0; k < NM_PASS_CHUNKS; k++) J.before[k + 1] += J.before[k];
    const uint32_t nocc = J.before[NM_PASS_CHUNKS];
    t->cs = (uint32_t *)walloc(b->m, (size_t)nocc + 1, sizeof(uint32_t));
    t->face = (uint8_t *)walloc(b->m, nocc ? nocc : 1, 1);
    if (!t->occ_bits || !t->occ_rank || !t->cs || !t->face)
        return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (span table)");
    if (run_pass(&J.p, index_fill))
        return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (span table)");
    t->cs[nocc] = ns;
    t->nocc = nocc;
    uint32_t acc = 0;
    for (size_t wd = 0; wd < words; wd++) {
        t->occ_rank[wd] = acc;
        acc += (uint32_t)__builtin_popcountll(t->occ_bits[wd]);
    }
    face_job F = {{b, nocc}, {0}};
    if (run_pass(&F.p, index_face))
        return nm_fail(err, NM_ERR_NOMEM, "window step 9: out of memory (span table)");
    uint32_t most = 0;
    for (size_t k = 0; k < NM_PASS_CHUNKS; k++)
        most = F.max_col[k] > most ? F.max_col[k] : most;
    t->max_col = most;
    return NM_OK;
}

/* 建窗 step 13: kept walls and facade segments into one blocker table; sources released. */
static int step13_blockers(wbuild *b, nm_error *err)
{
    nm_window *w = b->w;
    size_t total = b->nwalls + b->nfac;
    w->segs = (nm_window_seg *)walloc(b->m, total ? total : 1, sizeof(nm_window_seg));
    if (!w->segs) return nm_fail(err, NM_ERR_NOMEM, "window step 13: out of memory (%zu segments)", total);
    for (size_t i = 0; i < b->nwalls; i++)
        w->segs[i] = (nm_window_seg){b->walls[i].ax, b->walls[i].ay, b->walls[i].bx, b->walls[i].by, NM_SEG_WALL};
    if (b->nfac) memcpy(w->segs + b->nwalls, b->facades, b->nfac * sizeof *b->facades);
    w->nsegs = (uint32_t)total;
    w->nwalls_kept = (uint32_t)b->nwalls;
    wrelease(b->m, (void **)&b->walls, b->walls_cap * sizeof(wall_src));
    size_t fcap = 0;
    while (fcap < b->nfac) fcap = fcap ? 2 * fcap : 64;
    wrelease(b->m, (void **)&b->facades, fcap * sizeof(nm_window_seg));
    w->free_step[NM_WTMP_SEGSRC] = 13;
    return NM_OK;
}

/* buildWindow steps 2 and 4-13 in the article's order, reading the records from s. */
static int build(const nm_window_request *req, wsource *s, wmem *m, nm_window *w, nm_error *err)
{
    wbuild b;
    memset(&b, 0, sizeof b);
    b.req = req;
    b.w = w;
    b.m = m;
    b.nx = req->nx;
    b.ny = req->ny;
    b.cells = (size_t)req->nx * (size_t)req->ny;
    w->win.x0 = (double)req->gx0 * NM_kCS;
    w->win.y0 = (double)req->gy0 * NM_kCS;
    w->win.nx = req->nx;
    w->win.ny = req->ny;
    w->spans.win = w->win;
    w->gx0 = req->gx0;
    w->gy0 = req->gy0;
    w->region = req->region;
    w->zone_id = req->zone_id;
    w->gate = req->gate;
    w->seed_h = req->seed_h;
    w->seed_span = UINT32_MAX;
    int rc;
    if ((rc = step2_walls(&b, err)) || (rc = step4_seed_cell(&b, err)) || (rc = step5_expand(&b, s, err)) ||
        (rc = step6_select_walls(&b, err)) || (rc = step7_nogo_polys(&b, err)) || (rc = step8_nogo_discs(&b, err)))
        goto done;
    if ((rc = step9_steps_facades(&b, err)) || (rc = step10_seed_span(&b, err)) || (rc = step11_links(&b, err)) ||
        (rc = step12_reach(&b, err)) || (rc = clearance_layer(&b, err)) || (rc = span_index(&b, err)) ||
        (rc = step13_blockers(&b, err)))
        goto done;
done:
    source_free(s, m);
    nm_free(b.walls);
    nm_free(b.fac);
    nm_free(b.facades);
    nm_free(b.clr);
    return rc;
}

static int check_request(const nm_window_request *req, nm_error *err)
{
    if (!req || !req->fields || !req->fzone)
        return nm_fail(err, NM_ERR_ARG, "window: request needs the sidecar and its zone data");
    nm_grid_window gw = {0, 0, req->nx, req->ny};
    return nm_grid_window_check(&gw, err);
}

static void finish(nm_window *w, const wmem *m, const nm_window_request *req, double t0)
{
    w->peak_bytes = m->peak;
    w->peak_bytes_per_cell = (double)m->peak / ((double)req->nx * (double)req->ny);
    w->build_ms = now_ms() - t0;
}

int nm_window_build_records(const nm_window_request *req, const nm_grid_rec *recs,
                            const nm_span_fields *fields, size_t n, nm_window *w, nm_error *err)
{
    memset(w, 0, sizeof *w);
    int rc = check_request(req, err);
    if (rc) return rc;
    double t0 = now_ms();
    wmem m = {0, 0};
    const size_t cells = (size_t)req->nx * (size_t)req->ny;
    for (size_t r = 0; r < n; r++)
        if (recs[r].cell < 0 || (size_t)recs[r].cell >= cells)
            return nm_fail(err, NM_ERR_CORRUPT, "window step 5: record %zu cell %d outside the window", r,
                           recs[r].cell);
    /* the records as one tile covering the window, in cell order (a stable counting sort keeps
     * each cell's stored order) */
    wsource s;
    memset(&s, 0, sizeof s);
    s.t = (wtile *)nm_calloc(1, sizeof *s.t);
    uint32_t *head = (uint32_t *)nm_calloc(cells + 1, sizeof *head);
    nm_grid_rec *sr = (nm_grid_rec *)nm_malloc((n ? n : 1) * sizeof *sr);
    nm_span_fields *sf = (nm_span_fields *)nm_malloc((n ? n : 1) * sizeof *sf);
    if (!s.t || !head || !sr || !sf) {
        nm_free(s.t);
        nm_free(head);
        nm_free(sr);
        nm_free(sf);
        return nm_fail(err, NM_ERR_NOMEM, "window step 5: out of memory (%zu records)", n);
    }
    for (size_t r = 0; r < n; r++) head[recs[r].cell + 1]++;
    for (size_t c = 0; c < cells; c++) head[c + 1] += head[c];
    for (size_t r = 0; r < n; r++) {
        size_t at = head[recs[r].cell]++;
        sr[at] = recs[r];
        sf[at] = fields[r];
    }
    nm_free(head);
    s.nt = 1;
    s.t[0] = (wtile){.tgx0 = req->gx0, .tgy0 = req->gy0, .tnx = req->nx, .x1 = req->nx, .y1 = req->ny,
                     .v = {sr, sf, n, sr, sf}};
    m.now = m.peak = n * (sizeof(nm_grid_rec) + sizeof(nm_span_fields));
    rc = build(req, &s, &m, w, err);
    if (rc) {
        nm_window_free(w);
        return rc;
    }
    finish(w, &m, req, t0);
    return NM_OK;
}

int nm_window_build(const nm_window_request *req, nm_window *w, nm_error *err)
{
    memset(w, 0, sizeof *w);
    int rc = check_request(req, err);
    if (rc) return rc;
    if (!req->grid) return nm_fail(err, NM_ERR_ARG, "window: request has no grid section");
    if (req->bgrd_zone >= req->grid->zone_count)
        return nm_fail(err, NM_ERR_ARG, "window: no grid zone %u", req->bgrd_zone);
    if (req->gx0 < INT32_MIN || req->gy0 < INT32_MIN || req->gx0 + req->nx > INT32_MAX ||
        req->gy0 + req->ny > INT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "window: origin (%lld, %lld) out of range", (long long)req->gx0,
                       (long long)req->gy0);
    double t0 = now_ms();
    wmem m = {0, 0};
    nm_bgrd_out own;
    memset(&own, 0, sizeof own);
    nm_bgrd_out *ws = req->reuse ? req->reuse : &own;
    /* Step 3: the tiles whose own rectangle meets the window; those the engine's tile cache holds
     * (or can take) are read in place, the others are decoded band by band in step 5. */
    const nm_bgrd_zone *z = &req->grid->zones[req->bgrd_zone];
    wsource s;
    memset(&s, 0, sizeof s);
    s.g = req->grid;
    s.zone = req->bgrd_zone;
    s.fields = req->fields;
    s.workers = req->workers;
    s.ws = ws;
    s.wgx0 = req->gx0;
    s.wgy0 = req->gy0;
    uint32_t *ids = NULL;
    nm_bgrd_tile_view *vs = NULL;
    size_t sel_cap = 0;
    for (uint32_t t = 0; t < z->tile_count; t++) {
        const nm_bgrd_tile *e = &z->tiles[t];
        int64_t ox0 = (int64_t)e->gx0 + e->px0 - req->gx0, ox1 = (int64_t)e->gx0 + e->px1 + 1 - req->gx0;
        int64_t oy0 = (int64_t)e->gy0 + e->py0 - req->gy0, oy1 = (int64_t)e->gy0 + e->py1 + 1 - req->gy0;
        if (ox1 <= 0 || ox0 >= req->nx || oy1 <= 0 || oy0 >= req->ny || e->records == 0) continue;
        if (s.nt == sel_cap) {
            sel_cap = sel_cap ? 2 * sel_cap : 64;
            wtile *nt = (wtile *)nm_realloc(s.t, sel_cap * sizeof *nt);
            if (!nt) {
                rc = nm_fail(err, NM_ERR_NOMEM, "window step 3: out of memory");
                goto fail;
            }
            s.t = nt;
        }
        wtile *wt = &s.t[s.nt++];
        memset(wt, 0, sizeof *wt);
        wt->tgx0 = e->gx0;
        wt->tgy0 = e->gy0;
        wt->tnx = e->nx;
        wt->x0 = (int32_t)(ox0 < 0 ? 0 : ox0);
        wt->x1 = (int32_t)(ox1 > req->nx ? req->nx : ox1);
        wt->y0 = (int32_t)(oy0 < 0 ? 0 : oy0);
        wt->y1 = (int32_t)(oy1 > req->ny ? req->ny : oy1);
        wt->id = t;
    }
    if (s.nt && ws->cache) {
        ids = (uint32_t *)nm_malloc(s.nt * sizeof *ids);
        vs = (nm_bgrd_tile_view *)nm_malloc(s.nt * sizeof *vs);
        if (!ids || !vs) {
            rc = nm_fail(err, NM_ERR_NOMEM, "window step 3: out of memory");
            goto fail;
        }
        for (size_t k = 0; k < s.nt; k++) ids[k] = s.t[k].id;
        rc = nm_bgrd_view_tiles(req->grid, req->bgrd_zone, ids, s.nt, req->fields, ws->cache, req->workers, ws, vs,
                                err);
        if (rc) {
            nm_error_prefix(err, "window step 3");
            goto fail;
        }
        for (size_t k = 0; k < s.nt; k++)
            if (vs[k].recs) s.t[k].v = vs[k]; /* held by the cache: nothing of the window's */
        nm_free(ids);
        nm_free(vs);
        ids = NULL;
        vs = NULL;
    }
    if (s.nt > 1) qsort(s.t, s.nt, sizeof *s.t, cmp_wtile);
    rc = build(req, &s, &m, w, err);
    nm_bgrd_out_free(&own);
    if (rc) {
        nm_window_free(w);
        return rc;
    }
    finish(w, &m, req, t0);
    return NM_OK;
fail:
    nm_free(ids);
    nm_free(vs);
    source_free(&s, &m);
    nm_bgrd_out_free(&own);
    return rc;
}

int nm_window_reseed(nm_window *w, const nm_window_request *req, bool *fits, nm_error *err)
{
    *fits = false;
    const int64_t si = req->seed_gx - w->gx0, sj = req->seed_gy - w->gy0;
    if (!req->grid || req->bgrd_zone >= req->grid->zone_count || si < 0 || sj < 0 || si >= w->win.nx ||
        sj >= w->win.ny)
        return NM_OK;
    const nm_bgrd_zone *z = &req->grid->zones[req->bgrd_zone];
    uint32_t t = 0;
    for (; t < z->tile_count; t++) { /* the tile whose own rectangle holds the seed cell */
        const nm_bgrd_tile *T = &z->tiles[t];
        if (T->records && req->seed_gx >= (int64_t)T->gx0 + T->px0 && req->seed_gx <= (int64_t)T->gx0 + T->px1 &&
            req->seed_gy >= (int64_t)T->gy0 + T->py0 && req->seed_gy <= (int64_t)T->gy0 + T->py1)
            break;
    }
    if (t == z->tile_count) return NM_OK;
    const nm_bgrd_tile *T = &z->tiles[t];
    nm_bgrd_cache *cache = req->reuse ? req->reuse->cache : NULL;
    nm_bgrd_out own;
    memset(&own, 0, sizeof own);
    nm_bgrd_out *ws = req->reuse ? req->reuse : &own;
    nm_bgrd_tile_view v;
    int rc = nm_bgrd_view_tiles(req->grid, req->bgrd_zone, &t, 1, req->fields, cache, req->workers, ws, &v, err);
    if (rc == NM_OK && !v.recs && cache) /* the cache had no room: a buffer of its own */
        rc = nm_bgrd_view_tiles(req->grid, req->bgrd_zone, &t, 1, req->fields, NULL, req->workers, ws, &v, err);
    nm_bgrd_out_free(&own);
    if (rc) return rc;
    /* step 10 on the tile: the region's span of the seed cell nearest seed_h, first on ties */
    const int64_t lc = (req->seed_gy - T->gy0) * (int64_t)T->nx + (req->seed_gx - T->gx0);
    size_t lo = 0, hi = v.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)v.recs[mid].cell < lc) lo = mid + 1;
        else hi = mid;
    }
    uint32_t at = 0, best = UINT32_MAX, comp = 0;
    double bd = 0;
    for (size_t r = lo; v.fields && r < v.n && v.recs[r].cell == lc; r++) {
        const nm_grid_rec *rr = &v.recs[r];
        if (!nm_window_record_is_span(req->fields, w->zone_id, w->region, rr, req->seed_gx, req->seed_gy)) continue;
        double d = fabs((double)rr->h - req->seed_h);
        if (rr->rid == w->region && (best == UINT32_MAX || d < bd)) {
            best = at;
            bd = d;
            comp = v.fields[r].scc;
        }
        at++;
    }
    nm_bgrd_tile_view_free(&v);
    const uint32_t cell = (uint32_t)(sj * w->win.nx + si);
    uint32_t first, cnt = cell_spans(&w->spans, cell, &first);
    if (best == UINT32_MAX || comp != w->seed_comp || at != cnt) return NM_OK;
    w->seed_cell = cell;
    w->seed_span = first + best;
    w->seed_h = req->seed_h;
    *fits = true;
    return NM_OK;
}
