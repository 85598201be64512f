/* regions.c — region numbers and the core mask morphology (design article 预烘场 / 类号 and
 * 填洞与合缝): LabelRegions by union-find over +x/+y neighbours, FillHoles over 4-connected
 * components of the complement, CloseCracks in rounds applied after each sweep. */
#include "grid/grid.h"

#include <math.h>
#include <string.h>

/* ---- LabelRegions --------------------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving, no recursion */
        x = parent[x];
    }
    return x;
}

/* The root of a group is its smallest span index, so the result does not depend on link order. */
static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    if (parent[a] == parent[b])
        return; /* one parent, one set: the common case on open ground */
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a < b)
        parent[b] = a;
    else if (b < a)
        parent[a] = b;
}

/* A chunk of occupied cells [oa, ob) and so of spans [sa, sb): links to spans inside it are merged
 * at once (the chunk's slice of the union-find is its own), links leaving it are kept for the
 * serial merge. Roots are the smallest span of their set whatever the merge order, so the regions
 * do not depend on the chunks or the workers. */
typedef struct label_chunk {
    uint32_t oa, ob, sa, sb;
    uint32_t *x; size_t nx, cap; /* (u, v) pairs with v >= sb */
    bool oom;
} label_chunk;

typedef struct label_work {
    const nm_span_table *t;
    uint32_t *parent;
    label_chunk *ch;
} label_work;

/* Links the spans of two neighbouring cells whose heights differ by at most kClimb. Both columns
 * are sorted by height, so the partners of each span form a sliding range. */
static void link_columns(const nm_span_table *t, uint32_t *parent, label_chunk *lc, uint32_t fa,
                         uint32_t na, uint32_t d)
{
    uint32_t fb, nb = nm_span_cell_spans(t, d, &fb);
    uint32_t lo = 0;
    for (uint32_t u = 0; u < na; u++) {
        double hu = t->sp_h[fa + u];
        while (lo < nb && (double)t->sp_h[fb + lo] < hu - NM_kClimb)
            lo++;
        for (uint32_t v = lo; v < nb && (double)t->sp_h[fb + v] <= hu + NM_kClimb; v++) {
            if (!(fabs(hu - (double)t->sp_h[fb + v]) <= NM_kClimb))
                continue;
            if (fb + v < lc->sb) {
                uf_union(parent, fa + u, fb + v);
                continue;
            }
            if (lc->nx == lc->cap) {
                size_t nc = lc->cap ? lc->cap * 2 : 1024;
                uint32_t *p2 = nm_realloc(lc->x, nc * 2 * sizeof *p2);
                if (!p2) {
                    lc->oom = true;
                    return;
                }
                lc->x = p2;
                lc->cap = nc;
            }
            lc->x[2 * lc->nx] = fa + u;
            lc->x[2 * lc->nx + 1] = fb + v;
            lc->nx++;
        }
    }
}

static int label_chunk_fn(void *ctx, size_t chunk)
{
    label_work *lw = ctx;
    const nm_span_table *t = lw->t;
    label_chunk *lc = &lw->ch[chunk];
    const uint32_t nx = (uint32_t)t->win.nx, ny = (uint32_t)t->win.ny;
    for (uint32_t k = lc->sa; k < lc->sb; k++)
        lw->parent[k] = k;
    /* cells from the occupancy index, not sp_cell (a bake frees sp_cell before the regions) */
    uint32_t c = lc->oa < lc->ob ? nm_span_occupied_cell(t, lc->oa) : 0;
    for (uint32_t o = lc->oa; o < lc->ob && !lc->oom; o++) {
        if (o > lc->oa)
            c = nm_span_next_occupied(t, c);
        uint32_t fa = t->cs[o], na = t->cs[o + 1] - fa;
        uint32_t i = c % nx, j = c / nx;
        if (i + 1 < nx)
            link_columns(t, lw->parent, lc, fa, na, c + 1);
        if (j + 1 < ny)
            link_columns(t, lw->parent, lc, fa, na, c + nx);
    }
    return lc->oom ? NM_ERR_NOMEM : NM_OK;
}

int nm_grid_label_regions(const nm_span_table *t, int workers, uint32_t *rid, uint32_t *nregions,
                          nm_error *err)
{
    if (!t || (!rid && t->nspans))
        return nm_fail(err, NM_ERR_ARG, "LabelRegions: missing table or output");
    uint32_t per = 16384;
    if (t->nocc / 64 > per)
        per = t->nocc / 64 + 1;
    size_t nch = ((size_t)t->nocc + per - 1) / per;
    label_work lw = {t, nm_malloc((t->nspans ? t->nspans : 1) * sizeof *lw.parent),
                     nm_calloc(nch + 1, sizeof *lw.ch)};
    int rc = NM_OK;
    if (!lw.parent || !lw.ch) {
        rc = nm_fail(err, NM_ERR_NOMEM, "LabelRegions: %u spans", (unsigned)t->nspans);
        goto done;
    }
    for (size_t c = 0; c < nch; c++) {
        label_chunk *lc = &lw.ch[c];
        lc->oa = (uint32_t)(c * per);
        lc->ob = (uint32_t)((c + 1) * per < t->nocc ? (c + 1) * per : t->nocc);
        lc->sa = t->cs[lc->oa];
        lc->sb = t->cs[lc->ob];
    }
    rc = nm_parallel_chunks(nch, nm_workers_for(t->nspans, workers), label_chunk_fn, &lw);
    if (rc) {
        rc = nm_fail(err, NM_ERR_NOMEM, "LabelRegions: %u spans", (unsigned)t->nspans);
        goto done;
    }
    for (size_t c = 0; c < nch; c++)
        for (size_t k = 0; k < lw.ch[c].nx; k++)
            uf_union(lw.parent, lw.ch[c].x[2 * k], lw.ch[c].x[2 * k + 1]);
    /* Number regions in order of their first span: a root is its group's smallest index. */
    uint32_t next = 0;
    for (uint32_t k = 0; k < t->nspans; k++) {
        uint32_t r = uf_find(lw.parent, k);
        rid[k] = r == k ? ++next : rid[r];
    }
    if (nregions)
        *nregions = next;
done:
    if (lw.ch)
        for (size_t c = 0; c < nch; c++)
            nm_free(lw.ch[c].x);
    nm_free(lw.ch);
    nm_free(lw.parent);
    return rc;
}

/* ---- FillHoles ------------------------------------------------------------------------------ */

static int mask_args(int32_t nx, int32_t ny, const void *mask, const char *who, nm_error *err)
{
    if (nx < 1 || ny < 1 || (uint64_t)nx * (uint64_t)ny > NM_GRID_MAX_CELLS)
        return nm_fail(err, NM_ERR_ARG, "%s: bad window %d x %d", who, (int)nx, (int)ny);
    if (!mask)
        return nm_fail(err, NM_ERR_ARG, "%s: missing mask", who);
    return NM_OK;
}

/* FillHoles' walk marks: a cell judged with its component, or a cell of a component too large to
 * fill (more than NM_kHoleMaxCells cells). */
enum { HOLE_SEEN = 1, HOLE_LARGE = 2 };

int nm_grid_fill_holes(int32_t nx, int32_t ny, uint8_t *mask, const uint8_t *prot,
                       size_t *filled, nm_error *err)
{
    int rc = mask_args(nx, ny, mask, "FillHoles", err);
    if (rc)
        return rc;
    size_t n = (size_t)nx * (size_t)ny;
    uint8_t *seen = nm_calloc(n, 1);
    if (!seen)
        return nm_fail(err, NM_ERR_NOMEM, "FillHoles: %zu cells", n);
    const nm_grid_divider row = nm_grid_divider_of((uint32_t)nx);
    size_t total = 0;
    for (size_t start = 0; start < n; start++) {
        if (mask[start] || seen[start])
            continue;
        /* Breadth-first over the 4-connected component, stopped as soon as it is known to be too
         * large: past NM_kHoleMaxCells cells, or at a cell of a component found too large before
         * (the outside of a region's window is most of its cells, and is then walked a cell or
         * two at a time). Every cell the walk queued is marked with the verdict, so each cell is
         * queued by one walk: the cells filled are those of the whole-component rule. */
        uint32_t q[4 * (NM_kHoleMaxCells + 1) + 1];
        size_t head = 0, tail = 0;
        bool edge = false, guarded = false, large = false;
        seen[start] = HOLE_SEEN;
        q[tail++] = (uint32_t)start;
        while (head < tail && !large) {
            if (head == NM_kHoleMaxCells) {
                large = true;
                break;
            }
            const uint32_t c = q[head++];
            const uint32_t j = nm_grid_div(&row, c), i = c - j * (uint32_t)nx;
            if (i == 0 || j == 0 || i == (uint32_t)nx - 1 || j == (uint32_t)ny - 1)
                edge = true;
            if (prot && prot[c])
                guarded = true;
            const uint32_t nb[4] = {c + 1, c - 1, c + (uint32_t)nx, c - (uint32_t)nx};
            const bool in[4] = {i + 1 < (uint32_t)nx, i > 0, j + 1 < (uint32_t)ny, j > 0};
            for (int k = 0; k < 4 && !large; k++) {
                if (!in[k] || mask[nb[k]])
                    continue;
                if (seen[nb[k]] == HOLE_LARGE)
                    large = true;
                else if (!seen[nb[k]]) {
                    seen[nb[k]] = HOLE_SEEN;
                    q[tail++] = nb[k];
                }
            }
        }
        if (large) {
            for (size_t k = 0; k < tail; k++)
                seen[q[k]] = HOLE_LARGE;
        } else if (!edge && !guarded) {
            for (size_t k = 0; k < tail; k++)
                mask[q[k]] = 1;
            total += tail;
        }
    }
    nm_free(seen);
    if (filled)
        *filled = total;
    return NM_OK;
}

/* ---- CloseCracks ---------------------------------------------------------------------------- */

#define CRACK_ROUNDS 4

/* Some core cell within 1..k cells from (i, j) along (di, dj); outside the window is not core. */
static bool core_within(const uint8_t *core, int32_t nx, int32_t ny, int32_t i, int32_t j,
                        int di, int dj, int k)
{
    for (int a = 1; a <= k; a++) {
        int32_t x = i + a * di, y = j + a * dj;
        if (x < 0 || y < 0 || x >= nx || y >= ny)
            return false;
        if (core[(size_t)y * (size_t)nx + (size_t)x])
            return true;
    }
    return false;
}

int nm_grid_close_cracks(int32_t nx, int32_t ny, uint8_t *core, const uint8_t *layer,
                         const uint8_t *prot, int *rounds, nm_error *err)
{
    int rc = mask_args(nx, ny, core, "CloseCracks", err);
    if (rc)
        return rc;
    /* k = max(1, rint(0.5 / kCS)) = 2 cells: cracks up to 3 cells (0.75 px) close. */
    int k = (int)nearbyint(0.5 / NM_kCS);
    if (k < 1)
        k = 1;
    size_t n = (size_t)nx * (size_t)ny;
    uint32_t *add = nm_malloc(n * sizeof *add);
    if (!add)
        return nm_fail(err, NM_ERR_NOMEM, "CloseCracks: %zu cells", n);
    int used = 0;
    for (int round = 0; round < CRACK_ROUNDS; round++) {
        size_t na = 0;
        for (int32_t j = 0; j < ny; j++)
            for (int32_t i = 0; i < nx; i++) {
                size_t c = (size_t)j * (size_t)nx + (size_t)i;
                if (core[c] || (layer && !layer[c]) || (prot && prot[c]))
                    continue;
                bool horiz = core_within(core, nx, ny, i, j, 1, 0, k) &&
                             core_within(core, nx, ny, i, j, -1, 0, k);
                bool vert = core_within(core, nx, ny, i, j, 0, 1, k) &&
                            core_within(core, nx, ny, i, j, 0, -1, k);
                if (horiz || vert)
                    add[na++] = (uint32_t)c;
            }
        if (!na)
            break;
        for (size_t a = 0; a < na; a++) /* set after the sweep, never during it */
            core[add[a]] = 1;
        used++;
    }
    nm_free(add);
    if (rounds)
        *rounds = used;
    return NM_OK;
}
