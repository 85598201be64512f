/* spans.c — span merging and the columnar span table (design article 预烘场 / span 合并):
 * BuildSpans cuts each cell's samples into spans against the span's first sample, PackSpans
 * sorts spans with a two-level counting sort and builds occ_bits / occ_rank / cs / face, and the
 * occupied-cell lookup costs one bit test and one popcount. */
#include "grid/grid.h"

#include <stdlib.h>
#include <string.h>

/* Permutation that sorts entries by cell, stably: a two-level counting sort on the high and low
 * 16 bits. Returns NULL on NOMEM. Only a small high-bit count table, the fixed 65537-entry low
 * count table and one temporary of the largest bucket's size are needed besides the permutation
 * itself (a one-level sort would need a start table as long as the window). */
#define ONE_LEVEL_CELLS (1u << 23) /* windows up to this many cells (a raster band) */

/* The permutation of n entries and a zeroed work table of `bytes` for it; false on NOMEM. */
static bool perm_with_table(size_t n, size_t bytes, uint32_t **perm, void **table, nm_error *err)
{
    *perm = nm_malloc((n ? n : 1) * sizeof **perm);
    *table = nm_calloc(bytes, 1);
    if (*perm && *table)
        return true;
    nm_free(*perm);
    nm_free(*table);
    nm_fail(err, NM_ERR_NOMEM, "span sort: %zu entries", n);
    return false;
}

/* The same permutation in one counting pass, for a window small enough for a start table per
 * cell (a raster band of the bake): no per-bucket passes over the 65537-entry table. */
static uint32_t *sort_perm_small(const uint32_t *cell, size_t n, uint32_t ncells, nm_error *err)
{
    uint32_t *perm, *at;
    if (!perm_with_table(n, ((size_t)ncells + 1) * sizeof *at, &perm, (void **)&at, err))
        return NULL;
    for (size_t k = 0; k < n; k++)
        at[cell[k] + 1]++;
    for (uint32_t c = 0; c < ncells; c++)
        at[c + 1] += at[c];
    for (size_t k = 0; k < n; k++)
        perm[at[cell[k]]++] = (uint32_t)k;
    nm_free(at);
    return perm;
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The same permutation for a few entries in a large window (the seam bridge's samples of a band):
 * a comparison sort of (cell, entry) keys, without a table as long as the window. */
static uint32_t *sort_perm_few(const uint32_t *cell, size_t n, nm_error *err)
{
    uint32_t *perm;
    uint64_t *key;
    if (!perm_with_table(n, (n ? n : 1) * sizeof *key, &perm, (void **)&key, err))
        return NULL;
    for (size_t k = 0; k < n; k++)
        key[k] = (uint64_t)cell[k] << 32 | k;
    qsort(key, n, sizeof *key, cmp_key);
    for (size_t k = 0; k < n; k++)
        perm[k] = (uint32_t)key[k];
    nm_free(key);
    return perm;
}

static uint32_t *sort_perm(const uint32_t *cell, size_t n, uint32_t ncells, nm_error *err)
{
    if (n < ncells / 64)
        return sort_perm_few(cell, n, err);
    if (ncells <= ONE_LEVEL_CELLS)
        return sort_perm_small(cell, n, ncells, err);
    size_t nhi = ((size_t)(ncells - 1) >> 16) + 2;
    uint32_t *perm = nm_malloc((n ? n : 1) * sizeof *perm);
    uint32_t *hi = nm_calloc(nhi, sizeof *hi);
    uint32_t *lo = nm_malloc(65537 * sizeof *lo);
    uint32_t *tmp = NULL;
    if (!perm || !hi || !lo)
        goto nomem;
    /* Level 1: bucket by cell >> 16, keeping input order. */
    for (size_t k = 0; k < n; k++)
        hi[(cell[k] >> 16) + 1]++;
    uint32_t maxb = 0;
    for (size_t b = 1; b < nhi; b++) {
        if (hi[b] > maxb)
            maxb = hi[b];
        hi[b] += hi[b - 1];
    }
    tmp = nm_malloc((maxb ? maxb : 1) * sizeof *tmp);
    if (!tmp)
        goto nomem;
    {
        uint32_t *at = nm_malloc(nhi * sizeof *at);
        if (!at)
            goto nomem;
        memcpy(at, hi, nhi * sizeof *at);
        for (size_t k = 0; k < n; k++)
            perm[at[cell[k] >> 16]++] = (uint32_t)k;
        nm_free(at);
    }
    /* Level 2: inside each bucket, by cell & 0xFFFF, keeping bucket order. */
    for (size_t b = 0; b + 1 < nhi; b++) {
        uint32_t s = hi[b], e = hi[b + 1];
        if (e - s < 2)
            continue;
        memcpy(tmp, perm + s, (size_t)(e - s) * sizeof *tmp);
        memset(lo, 0, 65537 * sizeof *lo);
        for (uint32_t k = 0; k < e - s; k++)
            lo[(cell[tmp[k]] & 0xFFFFu) + 1]++;
        for (size_t v = 1; v < 65537; v++)
            lo[v] += lo[v - 1];
        for (uint32_t k = 0; k < e - s; k++)
            perm[s + lo[cell[tmp[k]] & 0xFFFFu]++] = tmp[k];
    }
    nm_free(tmp);
    nm_free(lo);
    nm_free(hi);
    return perm;
nomem:
    nm_free(tmp);
    nm_free(lo);
    nm_free(hi);
    nm_free(perm);
    nm_fail(err, NM_ERR_NOMEM, "span sort: %zu entries", n);
    return NULL;
}

/* Inside each cell of cell-sorted columns: insertion sort by height, stable, carrying ins along
 * (cells hold few samples, and the columns are contiguous here so this stays cache-friendly). */
static void sort_heights_in_cells(const uint32_t *cell, float *h, uint8_t *ins, size_t n)
{
    for (size_t s = 0; s < n;) {
        size_t e = s + 1;
        while (e < n && cell[e] == cell[s])
            e++;
        for (size_t k = s + 1; k < e; k++) {
            float v = h[k];
            uint8_t in = ins[k];
            size_t m = k;
            while (m > s && h[m - 1] > v) {
                h[m] = h[m - 1];
                ins[m] = ins[m - 1];
                m--;
            }
            h[m] = v;
            ins[m] = in;
        }
        s = e;
    }
}

uint32_t nm_span_occupied_cell(const nm_span_table *t, uint32_t o)
{
    size_t nw = ((size_t)t->win.nx * (size_t)t->win.ny + 63) / 64, a = 0, b = nw; /* rank[a] <= o < rank[b] */
    while (b - a > 1) {
        size_t m = a + (b - a) / 2;
        if (t->occ_rank[m] <= o)
            a = m;
        else
            b = m;
    }
    uint64_t word = t->occ_bits[a];
    for (uint32_t r = o - t->occ_rank[a]; r; r--)
        word &= word - 1; /* drop the lower set bits */
    return (uint32_t)(a * 64 + (size_t)__builtin_ctzll(word));
}

void nm_span_table_free(nm_span_table *t)
{
    if (!t)
        return;
    nm_free(t->sp_cell);
    nm_free(t->sp_h);
    nm_free(t->sp_ins);
    nm_free(t->cs);
    nm_free(t->face);
    nm_free(t->occ_bits);
    nm_free(t->occ_rank);
    memset(t, 0, sizeof *t);
}

/* Builds cs, face, occ_bits and occ_rank of a table whose sp_* columns are sorted. */
static int finish_table(nm_span_table *t, nm_error *err)
{
    uint64_t ncells = (uint64_t)t->win.nx * (uint64_t)t->win.ny;
    size_t nw = (size_t)((ncells + 63) / 64);
    t->occ_bits = nm_calloc(nw, sizeof *t->occ_bits);
    t->occ_rank = nm_calloc(nw, sizeof *t->occ_rank);
    if (!t->occ_bits || !t->occ_rank)
        return nm_fail(err, NM_ERR_NOMEM, "PackSpans: occupancy index of %zu words", nw);
    uint32_t nocc = 0;
    for (uint32_t k = 0; k < t->nspans; k++)
        if (k == 0 || t->sp_cell[k] != t->sp_cell[k - 1])
            nocc++;
    t->nocc = nocc;
    t->cs = nm_malloc(((size_t)nocc + 1) * sizeof *t->cs);
    t->face = nm_malloc(nocc ? nocc : 1);
    if (!t->cs || !t->face)
        return nm_fail(err, NM_ERR_NOMEM, "PackSpans: %u occupied cells", (unsigned)nocc);
    uint32_t o = 0, most = 0;
    for (uint32_t k = 0; k < t->nspans;) {
        uint32_t c = t->sp_cell[k], e = k + 1;
        while (e < t->nspans && t->sp_cell[e] == c)
            e++;
        t->cs[o] = k;
        const uint32_t cnt = e - k;
        most = cnt > most ? cnt : most;
        /* face: n != 2 and the column spans more than kClimb (n = 1 spans 0, so at least 3). */
        double span = (double)t->sp_h[e - 1] - (double)t->sp_h[k];
        t->face[o] = cnt != 2 && span > NM_kClimb;
        t->occ_bits[c >> 6] |= (uint64_t)1 << (c & 63);
        o++;
        k = e;
    }
    t->cs[nocc] = t->nspans;
    t->max_col = most;
    uint32_t run = 0;
    for (size_t w = 0; w < nw; w++) {
        t->occ_rank[w] = run;
        run += (uint32_t)__builtin_popcountll(t->occ_bits[w]);
    }
    return NM_OK;
}

static int check_cells(const nm_grid_window *win, const uint32_t *cell, size_t n, const char *who,
                       nm_error *err)
{
    uint64_t ncells = (uint64_t)win->nx * (uint64_t)win->ny;
    if (n > UINT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "%s: %zu entries exceed 2^32", who, n);
    for (size_t k = 0; k < n; k++)
        if (cell[k] >= ncells)
            return nm_fail(err, NM_ERR_ARG, "%s: entry %zu: cell %u outside the %d x %d window",
                           who, k, (unsigned)cell[k], (int)win->nx, (int)win->ny);
    return NM_OK;
}

/* Grows the scratch to n samples and a window of ncells (at: only for the counting pass). */
static bool scratch_room(nm_span_scratch *ws, size_t n, size_t nat)
{
    if (n > ws->cap) {
        nm_free(ws->sc), nm_free(ws->sh), nm_free(ws->si);
        ws->sc = nm_malloc(n * sizeof *ws->sc);
        ws->sh = nm_malloc(n * sizeof *ws->sh);
        ws->si = nm_malloc(n);
        ws->cap = ws->sc && ws->sh && ws->si ? n : 0;
        if (!ws->cap)
            return false;
    }
    if (nat > ws->nat) {
        nm_free(ws->at);
        ws->at = nm_malloc(nat * sizeof *ws->at);
        ws->nat = ws->at ? nat : 0;
        if (!ws->at)
            return false;
    }
    return true;
}

void nm_span_scratch_free(nm_span_scratch *ws)
{
    if (!ws)
        return;
    nm_free(ws->at), nm_free(ws->sc), nm_free(ws->sh), nm_free(ws->si);
    memset(ws, 0, sizeof *ws);
}

int nm_grid_build_spans(const nm_grid_window *win, const nm_grid_samples *samples,
                        nm_span_table *out, nm_error *err)
{
    nm_span_scratch ws;
    memset(&ws, 0, sizeof ws);
    int rc = nm_grid_build_spans_reusing(win, samples, &ws, out, err);
    nm_span_scratch_free(&ws);
    return rc;
}

int nm_grid_build_spans_reusing(const nm_grid_window *win, const nm_grid_samples *samples,
                                nm_span_scratch *ws, nm_span_table *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = nm_grid_window_check(win, err);
    if (rc)
        return rc;
    size_t n = samples ? samples->n : 0;
    if (n && (rc = check_cells(win, samples->cell, n, "BuildSpans", err)))
        return rc;
    out->win = *win;
    uint32_t ncells = (uint32_t)((uint64_t)win->nx * (uint64_t)win->ny);
    /* Gather the samples in cell order once, so the merge below reads them sequentially. */
    const bool counting = n >= ncells / 64 && ncells <= ONE_LEVEL_CELLS;
    if (!scratch_room(ws, n ? n : 1, counting ? (size_t)ncells + 1 : 0))
        return nm_fail(err, NM_ERR_NOMEM, "BuildSpans: %zu samples", n);
    uint32_t *sc = ws->sc;
    float *sh = ws->sh;
    uint8_t *si = ws->si;
    if (counting) {
        /* a raster band: sort_perm_small's counting pass, each sample put straight in place
         * (the same order, without the permutation and its gather) */
        uint32_t *at = ws->at;
        memset(at, 0, ((size_t)ncells + 1) * sizeof *at);
        for (size_t k = 0; k < n; k++)
            at[samples->cell[k] + 1]++;
        for (uint32_t c = 0; c < ncells; c++)
            at[c + 1] += at[c];
        for (size_t k = 0; k < n; k++) {
            uint32_t p = at[samples->cell[k]]++;
            sc[p] = samples->cell[k];
            sh[p] = samples->h[k];
            si[p] = samples->ins[k] ? 1 : 0;
        }
    } else {
        uint32_t *perm = sort_perm(n ? samples->cell : NULL, n, ncells, err);
        if (!perm)
            return NM_ERR_NOMEM;
        for (size_t k = 0; k < n; k++) {
            uint32_t p = perm[k];
            sc[k] = samples->cell[p];
            sh[k] = samples->h[p];
            si[k] = samples->ins[p] ? 1 : 0;
        }
        nm_free(perm);
    }
    sort_heights_in_cells(sc, sh, si, n);
    /* Merge against the span's first sample (not the previous one), so no span is taller than
     * kMergeH; the span height is the mean of its samples. Round 0 counts, round 1 fills. */
    uint32_t nsp = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            out->nspans = nsp;
            out->sp_cell = nm_malloc((nsp ? nsp : 1) * sizeof *out->sp_cell);
            out->sp_h = nm_malloc((nsp ? nsp : 1) * sizeof *out->sp_h);
            out->sp_ins = nm_malloc(nsp ? nsp : 1);
            if (!out->sp_cell || !out->sp_h || !out->sp_ins) {
                nm_span_table_free(out);
                return nm_fail(err, NM_ERR_NOMEM, "BuildSpans: %u spans", (unsigned)nsp);
            }
        }
        uint32_t o = 0;
        for (size_t k = 0; k < n;) {
            const uint32_t c = sc[k];
            const double anchor = sh[k];
            double sum = 0.0;
            uint8_t ins = 0;
            size_t e = k;
            while (e < n && sc[e] == c && !((double)sh[e] - anchor > NM_kMergeH)) {
                sum += sh[e];
                ins |= si[e];
                e++;
            }
            if (round == 1) {
                out->sp_cell[o] = c;
                out->sp_h[o] = (float)(sum / (double)(e - k));
                out->sp_ins[o] = ins;
            }
            o++;
            k = e;
        }
        nsp = o;
    }
    rc = finish_table(out, err);
    if (rc)
        nm_span_table_free(out);
    return rc;
}

int nm_grid_pack_spans(const nm_grid_window *win, nm_grid_samples *spans, nm_span_table *out,
                       nm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = nm_grid_window_check(win, err);
    if (!rc && !spans)
        rc = nm_fail(err, NM_ERR_ARG, "PackSpans: missing spans");
    if (!rc && spans->n)
        rc = check_cells(win, spans->cell, spans->n, "PackSpans", err);
    if (rc) {
        nm_grid_samples_free(spans);
        return rc;
    }
    out->win = *win;
    size_t n = spans->n;
    /* Already in (cell, height) order (the bake's row bands arrive so): the sort would keep
     * every span where it is, so the columns are taken over as they are. */
    bool sorted = spans->ins != NULL;
    for (size_t k = 1; k < n && sorted; k++)
        sorted = spans->cell[k - 1] < spans->cell[k] ||
                 (spans->cell[k - 1] == spans->cell[k] && !(spans->h[k - 1] > spans->h[k]));
    if (sorted && n) {
        out->nspans = (uint32_t)n;
        out->sp_cell = spans->cell; /* the unused capacity past n is never touched */
        out->sp_h = spans->h;
        out->sp_ins = spans->ins;
        memset(spans, 0, sizeof *spans);
        rc = finish_table(out, err);
        if (rc)
            nm_span_table_free(out);
        return rc;
    }
    uint32_t ncells = (uint32_t)((uint64_t)win->nx * (uint64_t)win->ny);
    uint32_t *perm = sort_perm(spans->cell, n, ncells, err);
    if (!perm) {
        nm_grid_samples_free(spans);
        return NM_ERR_NOMEM;
    }
    out->nspans = (uint32_t)n;
    /* Move column by column, freeing each input column once it is moved (article: input and
     * output never occupy memory whole at the same time). */
    size_t alloc = n ? n : 1;
    out->sp_cell = nm_malloc(alloc * sizeof *out->sp_cell);
    if (out->sp_cell)
        for (size_t k = 0; k < n; k++)
            out->sp_cell[k] = spans->cell[perm[k]];
    nm_free(spans->cell);
    spans->cell = NULL;
    out->sp_h = out->sp_cell ? nm_malloc(alloc * sizeof *out->sp_h) : NULL;
    if (out->sp_h)
        for (size_t k = 0; k < n; k++)
            out->sp_h[k] = spans->h[perm[k]];
    nm_free(spans->h);
    spans->h = NULL;
    out->sp_ins = out->sp_h ? nm_malloc(alloc) : NULL;
    if (out->sp_ins)
        for (size_t k = 0; k < n; k++)
            out->sp_ins[k] = spans->ins ? spans->ins[perm[k]] : 0;
    nm_grid_samples_free(spans);
    nm_free(perm);
    if (!out->sp_ins) {
        nm_span_table_free(out);
        return nm_fail(err, NM_ERR_NOMEM, "PackSpans: %zu spans", n);
    }
    sort_heights_in_cells(out->sp_cell, out->sp_h, out->sp_ins, n);
    rc = finish_table(out, err);
    if (rc)
        nm_span_table_free(out);
    return rc;
}
