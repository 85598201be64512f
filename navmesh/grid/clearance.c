/* clearance.c — distance fields of the grid (design article 预烘场 / 净空 and 中轴): the two-pass
 * truncated Euclidean distance transform stored as squared cell distances, the 8SSEDT-style
 * NearestSource propagation, and the lambda-medial axis built on it. */
#include "grid/grid.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define EDT_R NM_kEdtCells            /* row window, cells: ceil(kEdtCap / kCS) + 1 = 49 */
#define EDT_G NM_GRID_EDT_COLCAP      /* column distance cap, cells: 4 * R = 196 */

static int grid_args(int32_t nx, int32_t ny, const void *a, const void *b, const char *who,
                     nm_error *err)
{
    if (nx < 1 || ny < 1 || (uint64_t)nx * (uint64_t)ny > NM_GRID_MAX_CELLS)
        return nm_fail(err, NM_ERR_ARG, "%s: bad window %d x %d", who, (int)nx, (int)ny);
    if (!a || !b)
        return nm_fail(err, NM_ERR_ARG, "%s: missing input or output", who);
    return NM_OK;
}

float nm_grid_clearance_px(uint16_t q)
{
    float d = sqrtf((float)q) * (float)NM_kCS;
    return d < (float)NM_kEdtCap ? d : (float)NM_kEdtCap;
}

typedef struct edt_job {
    int32_t nx, ny;
    const uint8_t *obst;
    uint16_t *q;       /* in: column distances, capped; out: the clearance (row by row) */
    size_t rows_per_chunk;
} edt_job;

/* Row pass for a band of rows: the lower envelope of g(x+k)^2 + k^2 over |k| <= 49, taken as a
 * direct minimum because the clearance is capped. Two exact shortcuts keep it near O(1) a cell:
 * when g(x) is the least g of the whole window (open ground, a column cap everywhere) the minimum
 * is g(x)^2 at k = 0; otherwise the scan walks outward and stops once the window's least g squared
 * plus k^2 reaches the best. */
static int edt_rows(void *ctx, size_t chunk)
{
    const edt_job *jb = ctx;
    size_t j0 = chunk * jb->rows_per_chunk, j1 = j0 + jb->rows_per_chunk;
    if (j1 > (size_t)jb->ny)
        j1 = (size_t)jb->ny;
    const int32_t nx = jb->nx;
    int32_t *dq = nm_malloc((size_t)nx * sizeof *dq); /* sliding-window minimum, indices */
    uint16_t *g = nm_malloc((size_t)nx * sizeof *g);  /* the row's column distances */
    if (!dq || !g) {
        nm_free(dq);
        nm_free(g);
        return NM_ERR_NOMEM;
    }
    for (size_t j = j0; j < j1; j++) {
        uint16_t *q = jb->q + j * (size_t)nx;
        memcpy(g, q, (size_t)nx * sizeof *g);
        const uint8_t *ob = jb->obst + j * (size_t)nx;
        size_t head = 0, tail = 0;
        int32_t next = 0; /* next index to enter the window */
        for (int32_t x = 0; x < nx; x++) {
            int32_t b = x + EDT_R >= nx ? nx - 1 : x + EDT_R;
            for (; next <= b; next++) {
                while (tail > head && g[dq[tail - 1]] >= g[next])
                    tail--;
                dq[tail++] = next;
            }
            while (dq[head] < x - EDT_R)
                head++;
            if (ob[x]) {
                q[x] = 0;
                continue;
            }
            uint32_t best = (uint32_t)g[x] * g[x];
            uint32_t gm = g[dq[head]];
            if (gm < g[x]) {
                /* every term further out is at least gm^2 + k^2: stop once that reaches best */
                gm *= gm;
                for (int32_t k = 1; k <= EDT_R && gm + (uint32_t)(k * k) < best; k++) {
                    uint32_t kk = (uint32_t)(k * k);
                    if (x - k >= 0) {
                        uint32_t v = (uint32_t)g[x - k] * g[x - k] + kk;
                        if (v < best)
                            best = v;
                    }
                    if (x + k < nx) {
                        uint32_t v = (uint32_t)g[x + k] * g[x + k] + kk;
                        if (v < best)
                            best = v;
                    }
                }
            }
            q[x] = (uint16_t)best; /* <= 196^2 + 49^2 = 40817 */
        }
    }
    nm_free(dq);
    nm_free(g);
    return NM_OK;
}

typedef struct col_job {
    int32_t nx, ny;
    const uint8_t *obst;
    uint16_t *g;
    int32_t strip; /* columns per chunk */
} col_job;
#define COL_STRIP 2048

/* Column pass of one strip of columns: downward distances into g, then upward ones (carried in
 * a strip-wide row) folded in with min; the same values as walking each column on its own. */
static int edt_cols(void *ctx, size_t chunk)
{
    const col_job *jb = ctx;
    const int32_t nx = jb->nx, ny = jb->ny;
    int32_t x0 = (int32_t)chunk * jb->strip, x1 = x0 + jb->strip < nx ? x0 + jb->strip : nx;
    int32_t w = x1 - x0;
    uint16_t *d = nm_malloc((size_t)w * sizeof *d);
    if (!d)
        return NM_ERR_NOMEM;
    for (int32_t x = 0; x < w; x++)
        d[x] = EDT_G;
    for (int32_t y = 0; y < ny; y++) {
        const uint8_t *ob = jb->obst + (size_t)y * (size_t)nx + (size_t)x0;
        uint16_t *g = jb->g + (size_t)y * (size_t)nx + (size_t)x0;
        for (int32_t x = 0; x < w; x++) {
            uint32_t v = ob[x] ? 0 : (d[x] < EDT_G ? d[x] + 1u : EDT_G);
            d[x] = (uint16_t)v;
            g[x] = (uint16_t)v;
        }
    }
    for (int32_t x = 0; x < w; x++)
        d[x] = EDT_G;
    for (int32_t y = ny - 1; y >= 0; y--) {
        const uint8_t *ob = jb->obst + (size_t)y * (size_t)nx + (size_t)x0;
        uint16_t *g = jb->g + (size_t)y * (size_t)nx + (size_t)x0;
        for (int32_t x = 0; x < w; x++) {
            uint32_t v = ob[x] ? 0 : (d[x] < EDT_G ? d[x] + 1u : EDT_G);
            d[x] = (uint16_t)v;
            if (v < g[x])
                g[x] = (uint16_t)v;
        }
    }
    nm_free(d);
    return NM_OK;
}

int nm_grid_clearance(int32_t nx, int32_t ny, const uint8_t *obst, uint16_t *q, int workers,
                      nm_error *err)
{
    int rc = grid_args(nx, ny, obst, q, "Clearance", err);
    if (rc)
        return rc;
    size_t n = (size_t)nx * (size_t)ny;
    /* Column pass: cells to the nearest obstacle above or below in the same column, capped at
     * 196; outside the window counts as free, so a column without obstacles stays at the cap.
     * Run over strips of columns, row by row (the array is row-major), in parallel. The column
     * distances go into q itself: the row pass reads one row at a time (copied first). */
    col_job cj = {nx, ny, obst, q, COL_STRIP};
    size_t strips = ((size_t)nx + COL_STRIP - 1) / COL_STRIP;
    rc = nm_parallel_chunks(strips, nm_workers_for(n, workers), edt_cols, &cj);
    if (rc)
        return nm_fail(err, rc, "Clearance: column pass failed");
    edt_job jb = {nx, ny, obst, q, 64};
    size_t chunks = ((size_t)ny + jb.rows_per_chunk - 1) / jb.rows_per_chunk;
    rc = nm_parallel_chunks(chunks, nm_workers_for(n, workers), edt_rows, &jb);
    if (rc)
        return nm_fail(err, rc, "Clearance: row pass failed");
    return NM_OK;
}

/* ---- NearestSource -------------------------------------------------------------------------- */

/* Column and row of cell c >= 0 (c % nx, c / nx) without an integer division: the quotient
 * from a multiply by 1/nx is off by at most one, and the remainder tells which way. */
static inline void cell_ij(int32_t c, int32_t nx, double inv_nx, int64_t *i, int64_t *j)
{
    int64_t q = (int64_t)((double)c * inv_nx), r = (int64_t)c - q * nx;
    if (r < 0) {
        q--;
        r += nx;
    } else if (r >= nx) {
        q++;
        r -= nx;
    }
    *i = r;
    *j = q;
}

/* The sweeps hold a source as its column and row packed into one word, (j << shift) | i with
 * 2^shift >= nx, so a distance needs no division; NS_NONE: no source. nx * ny < 2^31 keeps every
 * packed cell below NS_NONE. A row goes back to cell numbers once nothing reads it packed. */
#define NS_NONE UINT32_MAX

typedef struct ns_state {
    int32_t nx;
    uint32_t *src;
    unsigned shift;
    uint32_t mask; /* 2^shift - 1 */
} ns_state;

/* Squared cell distance from (i, j) to packed source p. */
static inline int64_t ns_d2(const ns_state *s, uint32_t p, int64_t i, int64_t j)
{
    const int64_t di = (int64_t)(p & s->mask) - i, dj = (int64_t)(p >> s->shift) - j;
    return di * di + dj * dj;
}

/* Cell (i, j), whose source is *cur (cd: its squared distance, -1 until needed), takes the source
 * cand when it has none or cand is strictly nearer. The same source is never strictly nearer, so
 * where neighbours share their source (most of a window) no distance is computed. */
static inline void take(const ns_state *s, uint32_t cand, int64_t i, int64_t j, uint32_t *cur,
                        int64_t *cd)
{
    if (cand == NS_NONE || cand == *cur)
        return;
    if (*cur == NS_NONE) {
        *cur = cand;
        *cd = -1;
        return;
    }
    if (*cd < 0)
        *cd = ns_d2(s, *cur, i, j);
    const int64_t d = ns_d2(s, cand, i, j);
    if (d < *cd) {
        *cur = cand;
        *cd = d;
    }
}

/* One sweep of row j in direction dir (+1 left to right, -1 right to left): each cell takes from
 * the row `near` (above or below) at i, i - 1, i + 1, then from its row neighbour behind
 * (i - dir), in that order, as the article's passes do. The near row's three sources and the
 * neighbour behind slide along in registers. */
static inline void ns_sweep_near(const ns_state *s, int32_t j, const uint32_t *near, int dir)
{
    const int32_t nx = s->nx;
    uint32_t *row = s->src + (size_t)j * (size_t)nx;
    const int32_t i0 = dir > 0 ? 0 : nx - 1;
    uint32_t behind_row = NS_NONE, near_behind = NS_NONE, near_mid = near[i0];
    for (int32_t i = i0; i >= 0 && i < nx; i += dir) {
        const int32_t ia = i + dir; /* the near row's cell ahead */
        const uint32_t near_ahead = ia >= 0 && ia < nx ? near[ia] : NS_NONE;
        uint32_t cur = row[i];
        int64_t cd = -1;
        take(s, near_mid, i, j, &cur, &cd);
        if (dir > 0) { /* i - 1 is behind */
            take(s, near_behind, i, j, &cur, &cd);
            take(s, near_ahead, i, j, &cur, &cd);
        } else {
            take(s, near_ahead, i, j, &cur, &cd);
            take(s, near_behind, i, j, &cur, &cd);
        }
        take(s, behind_row, i, j, &cur, &cd);
        row[i] = cur;
        behind_row = cur;
        near_behind = near_mid;
        near_mid = near_ahead;
    }
}

/* A sweep of row j from its neighbour behind only. */
static inline void ns_sweep_row(const ns_state *s, int32_t j, int dir)
{
    const int32_t nx = s->nx;
    uint32_t *row = s->src + (size_t)j * (size_t)nx;
    uint32_t behind_row = NS_NONE;
    for (int32_t i = dir > 0 ? 0 : nx - 1; i >= 0 && i < nx; i += dir) {
        uint32_t cur = row[i];
        int64_t cd = -1;
        take(s, behind_row, i, j, &cur, &cd);
        row[i] = cur;
        behind_row = cur;
    }
}

/* Row j back to cell numbers, in place (NS_NONE is already -1 as an int32_t). A select, not a
 * skipped store: the loop vectorises (a conditional store took 95 -> 106 ms on leg 8's sweep). */
static void ns_unpack_row(const ns_state *s, int32_t j)
{
    uint32_t *row = s->src + (size_t)j * (size_t)s->nx;
    for (int32_t i = 0; i < s->nx; i++)
        row[i] = row[i] == NS_NONE ? NS_NONE
                                   : (row[i] >> s->shift) * (uint32_t)s->nx + (row[i] & s->mask);
}

int nm_grid_nearest_source(int32_t nx, int32_t ny, const uint8_t *obst, int32_t *src,
                           nm_error *err)
{
    return nm_grid_nearest_source_rows(nx, ny, obst, src, NULL, err);
}

int nm_grid_nearest_source_rows(int32_t nx, int32_t ny, const uint8_t *obst, int32_t *src,
                                atomic_int *final_from, nm_error *err)
{
    int rc = grid_args(nx, ny, obst, src, "NearestSource", err);
    if (rc)
        return rc;
    ns_state s = {nx, (uint32_t *)src, 0, 0};
    while (((uint32_t)1 << s.shift) < (uint32_t)nx)
        s.shift++;
    s.mask = ((uint32_t)1 << s.shift) - 1;
    int32_t first = ny; /* the first row with a source */
    for (int32_t j = 0; j < ny; j++) {
        const uint8_t *o = obst + (size_t)j * (size_t)nx;
        uint32_t *row = s.src + (size_t)j * (size_t)nx;
        bool any = false;
        for (int32_t i = 0; i < nx; i++) {
            row[i] = o[i] ? (uint32_t)j << s.shift | (uint32_t)i : NS_NONE;
            any |= o[i] != 0;
        }
        if (any && first == ny)
            first = j;
    }
    /* Pass 1, top to bottom: left to right from N, NW, NE, W; then right to left from E. The rows
     * above the first source have none and take none. */
    for (int32_t j = first; j < ny; j++) {
        if (j > 0)
            ns_sweep_near(&s, j, s.src + (size_t)(j - 1) * (size_t)nx, 1);
        else
            ns_sweep_row(&s, j, 1);
        ns_sweep_row(&s, j, -1);
    }
    /* Pass 2, bottom to top: right to left from S, SW, SE, E; then left to right from W. No
     * later step writes a row below, so each row is final once swept, and back in cell numbers
     * once the row above has read it. */
    for (int32_t j = ny - 1; j >= 0; j--) {
        if (j + 1 < ny)
            ns_sweep_near(&s, j, s.src + (size_t)(j + 1) * (size_t)nx, -1);
        else
            ns_sweep_row(&s, j, -1);
        ns_sweep_row(&s, j, 1);
        if (j + 1 < ny) {
            ns_unpack_row(&s, j + 1);
            if (final_from)
                atomic_store_explicit(final_from, j + 1, memory_order_release);
        }
    }
    ns_unpack_row(&s, 0);
    if (final_from)
        atomic_store_explicit(final_from, 0, memory_order_release);
    return NM_OK;
}

void nm_grid_bands_init(nm_grid_bands *b, int32_t ny, int32_t band, int32_t halo)
{
    atomic_init(&b->final_from, ny);
    atomic_init(&b->claim, ny);
    b->band = band > 0 ? band : 1;
    b->halo = halo > 0 ? halo : 0;
}

bool nm_grid_bands_take(nm_grid_bands *b, int32_t *j0, int32_t *j1)
{
    for (;;) {
        int c = atomic_load_explicit(&b->claim, memory_order_acquire);
        if (c <= 0)
            return false;
        const int f = atomic_load_explicit(&b->final_from, memory_order_acquire);
        const int first = f > 0 ? f + b->halo : 0; /* the first row whose band may be read */
        if (first >= c) { /* the sweep's first pass finishes no row */
            nanosleep(&(struct timespec){0, 50000}, NULL);
            continue;
        }
        const int lo = c - b->band > first ? c - b->band : first;
        if (atomic_compare_exchange_weak_explicit(&b->claim, &c, lo, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *j0 = lo;
            *j1 = c;
            return true;
        }
    }
}

void nm_grid_bands_stop(nm_grid_bands *b)
{
    atomic_store_explicit(&b->claim, 0, memory_order_release);
}

/* ---- MedialAxis ----------------------------------------------------------------------------- */

bool nm_grid_medial_cell(int32_t nx, int32_t ny, const int32_t *src, int32_t i, int32_t j)
{
    /* Threshold in squared cells: ceil((lambda / kCS)^2) = 4 (lambda = 2 cells). */
    const double lc = NM_kClrLambda / NM_kCS;
    const int64_t T = (int64_t)ceil(lc * lc);
    size_t c = (size_t)j * (size_t)nx + (size_t)i;
    /* an obstacle cell is its own source; a free cell's source is some other cell */
    if (src[c] < 0 || (size_t)src[c] == c)
        return false;
    if (i > 0 && j > 0 && i + 1 < nx && j + 1 < ny) {
        /* inside the window: all eight neighbours sharing the source is the common case */
        const int32_t s = src[c], *up = src + c - nx, *dn = src + c + nx;
        if (up[-1] == s && up[0] == s && up[1] == s && src[c - 1] == s && src[c + 1] == s &&
            dn[-1] == s && dn[0] == s && dn[1] == s)
            return false;
    }
    double inv_nx = 0.0;
    int64_t fx = -1, fy = 0; /* the source's cell, once a neighbour's source differs */
    for (int dj = -1; dj <= 1; dj++)
        for (int di = -1; di <= 1; di++) {
            int32_t a = i + di, b = j + dj;
            if ((di == 0 && dj == 0) || a < 0 || b < 0 || a >= nx || b >= ny)
                continue;
            size_t o = (size_t)b * (size_t)nx + (size_t)a;
            if (src[o] < 0 || (size_t)src[o] == o || src[o] == src[c])
                continue; /* no source, an obstacle, or the same source (distance 0) */
            if (fx < 0) {
                inv_nx = 1.0 / (double)nx;
                cell_ij(src[c], nx, inv_nx, &fx, &fy);
            }
            int64_t ox, oy;
            cell_ij(src[o], nx, inv_nx, &ox, &oy);
            int64_t ex = ox - fx, ey = oy - fy;
            if (ex * ex + ey * ey >= T)
                return true;
        }
    return false;
}

int nm_grid_medial_axis(int32_t nx, int32_t ny, const uint8_t *obst, uint8_t *medial,
                        nm_error *err)
{
    int rc = grid_args(nx, ny, obst, medial, "MedialAxis", err);
    if (rc)
        return rc;
    size_t n = (size_t)nx * (size_t)ny;
    int32_t *src = nm_malloc(n * sizeof *src);
    if (!src)
        return nm_fail(err, NM_ERR_NOMEM, "MedialAxis: %zu cells", n);
    rc = nm_grid_nearest_source(nx, ny, obst, src, err);
    if (rc) {
        nm_free(src);
        return rc;
    }
    for (int32_t j = 0; j < ny; j++)
        for (int32_t i = 0; i < nx; i++)
            medial[(size_t)j * (size_t)nx + (size_t)i] = nm_grid_medial_cell(nx, ny, src, i, j);
    nm_free(src);
    return NM_OK;
}
