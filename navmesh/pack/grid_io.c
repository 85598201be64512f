/* grid_io.c — BGRD v3, the voxel grid section of the main pack (design article 格图段 and 建窗 /
 * 解码瓦片): section and zone-directory parsing, v3 tile decoding (Up / Down predicted residual
 * streams), the parallel decode of a rectangle of tiles into a reusable buffer, and the writer
 * (tiling with aprons, height quantisation, region dictionary, per-(field, layer) predictor
 * choice, eight zlib streams). Byte layout: reference-maaend.md §4.6. */
#include "grid_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared helpers ---------------------------------------------------------------------------- */

int nm_grid_layer_cmp(const nm_grid_rec *a, const nm_grid_rec *b)
{
    /* (region, height): the order the planner's window build relies on (article 建窗: 同格的记录
     * 已按(类号,高)排好; the reference writes the same). Fill records sort at the height they
     * decode to (0). */
    if (a->rid != b->rid) return a->rid < b->rid ? -1 : 1;
    float ha = (a->flags & NM_GRID_FILL) ? 0.0f : a->h;
    float hb = (b->flags & NM_GRID_FILL) ? 0.0f : b->h;
    if (ha != hb) return ha < hb ? -1 : 1;
    if (a->clr != b->clr) return a->clr < b->clr ? -1 : 1;
    if (a->flags != b->flags) return a->flags < b->flags ? -1 : 1;
    if (a->steps != b->steps) return a->steps < b->steps ? -1 : 1;
    return 0;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    size_t bytes;
    if (!nm_mul_ok(n, elem, &bytes)) return false;
    void *q = nm_realloc(*p, bytes);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

void nm_bgrd_scratch_free(nm_bgrd_scratch *s)
{
    if (!s) return;
    for (int i = 0; i < NM_BGRD_STREAMS; i++) nm_bytes_free(&s->stream[i]);
    for (int i = 0; i < 6; i++) nm_bytes_free(&s->fspn[i]);
    nm_free(s->cells);
    nm_free(s->first);
    nm_free(s->deep);
    nm_free(s->q);
    nm_free(s->col);
    nm_free(s->dict);
    nm_free(s->lrec);
    nm_free(s->lcol);
    nm_free(s->lstart);
    memset(s, 0, sizeof *s);
}

static bool scratch_reserve(nm_bgrd_scratch *s, size_t ncell, size_t n, size_t ncol, size_t nreg)
{
    if (!grow((void **)&s->dict, &s->dict_cap, nreg ? nreg : 1, sizeof *s->dict)) return false;
    if (ncell + 1 > s->cell_cap) {
        size_t c1 = s->cell_cap, c2 = s->cell_cap, c3 = s->cell_cap;
        if (!grow((void **)&s->cells, &c1, ncell + 1, sizeof *s->cells)) return false;
        if (!grow((void **)&s->first, &c2, ncell + 1, sizeof *s->first)) return false;
        if (!grow((void **)&s->deep, &c3, ncell + 1, sizeof *s->deep)) return false;
        s->cell_cap = c1 < c2 ? c1 : c2;
        if (c3 < s->cell_cap) s->cell_cap = c3;
    }
    if (!grow((void **)&s->q, &s->rec_cap, n ? n : 1, sizeof *s->q)) return false;
    if (n > s->lrec_cap) {
        size_t c1 = s->lrec_cap, c2 = s->lrec_cap;
        if (!grow((void **)&s->lrec, &c1, n, sizeof *s->lrec)) return false;
        if (!grow((void **)&s->lcol, &c2, n, sizeof *s->lcol)) return false;
        s->lrec_cap = c1 < c2 ? c1 : c2;
    }
    /* kmax <= n: one start per layer plus the end */
    if (!grow((void **)&s->lstart, &s->lstart_cap, n + 1, sizeof *s->lstart)) return false;
    if (!grow((void **)&s->col, &s->col_cap, ncol ? ncol : 1, sizeof *s->col)) return false;
    return true;
}

/* ---- parsing ----------------------------------------------------------------------------------- */

void nm_bgrd_free(nm_bgrd *g)
{
    if (!g) return;
    for (uint32_t z = 0; z < g->zone_count; z++) {
        nm_free(g->zones[z].name);
        nm_free(g->zones[z].tiles);
    }
    nm_free(g->zones);
    memset(g, 0, sizeof *g);
}

int nm_bgrd_find_zone(const nm_bgrd *g, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t z = 0; z < g->zone_count; z++)
        if (g->zones[z].name_len == len && memcmp(g->zones[z].name, name, len) == 0) return (int)z;
    return -1;
}

static int parse_zone(nm_cursor *c, const nm_bgrd *g, uint32_t zi, nm_bgrd_zone *z, int64_t nmax,
                      nm_error *err)
{
    if (nm_cur_left(c) < NM_BGRD_ZONE_MIN_SIZE)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone %u: directory truncated", zi);
    z->name_len = nm_cur_u32(c);
    size_t padded = ((size_t)z->name_len + 3) & ~(size_t)3;
    if (z->name_len > nm_cur_left(c) || padded > nm_cur_left(c))
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone %u: name length %u past the section", zi,
                       z->name_len);
    const uint8_t *nb = nm_cur_bytes(c, padded);
    z->name = (char *)nm_malloc((size_t)z->name_len + 1);
    if (!z->name) return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    memcpy(z->name, nb, z->name_len);
    z->name[z->name_len] = 0;
    z->x0 = nm_cur_f64(c);
    z->y0 = nm_cur_f64(c);
    z->global_regions = nm_cur_u32(c);
    z->tile_count = nm_cur_u32(c);
    if (c->bad) return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': directory truncated", z->name);
    if (!isfinite(z->x0) || !isfinite(z->y0))
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': origin not finite", z->name);
    if (z->tile_count > nm_cur_left(c) / NM_BGRD_TILE_ENTRY_SIZE)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': %u tiles past the section", z->name,
                       z->tile_count);
    z->tiles = (nm_bgrd_tile *)nm_calloc(z->tile_count ? z->tile_count : 1, sizeof *z->tiles);
    if (!z->tiles) return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    for (uint32_t t = 0; t < z->tile_count; t++) {
        nm_bgrd_tile *e = &z->tiles[t];
        e->gx0 = nm_cur_i32(c);
        e->gy0 = nm_cur_i32(c);
        e->nx = nm_cur_i32(c);
        e->ny = nm_cur_i32(c);
        e->px0 = nm_cur_i32(c);
        e->px1 = nm_cur_i32(c);
        e->py0 = nm_cur_i32(c);
        e->py1 = nm_cur_i32(c);
        e->offset = nm_cur_u64(c);
        e->len = nm_cur_u32(c);
        e->records = nm_cur_u32(c);
        if (e->nx < 1 || e->ny < 1 || e->nx > nmax || e->ny > nmax)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: size %d x %d outside 1..%lld",
                           z->name, t, e->nx, e->ny, (long long)nmax);
        if (e->px0 < 0 || e->px0 > e->px1 || e->px1 >= e->nx || e->py0 < 0 || e->py0 > e->py1 ||
            e->py1 >= e->ny)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: own rectangle outside the window",
                           z->name, t);
        if ((int64_t)e->gx0 + e->nx > INT32_MAX || (int64_t)e->gy0 + e->ny > INT32_MAX)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: window past the cell range",
                           z->name, t);
        if (e->offset > g->size || e->len > g->size - e->offset)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: payload past the section",
                           z->name, t);
        /* Every record costs at least one byte in each of five inflated streams and deflate
         * expands at most ~1032:1, so a larger count cannot be honest (and would make decode
         * allocate for nothing). */
        if (e->records && (uint64_t)e->records > (uint64_t)e->len * 207u + 64u)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: %u records in %u bytes",
                           z->name, t, e->records, e->len);
    }
    if (c->bad) return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile directory truncated", z->name);
    return NM_OK;
}

int nm_bgrd_parse(const uint8_t *bytes, size_t size, nm_bgrd *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    out->bytes = bytes;
    out->size = size;
    nm_cursor c = nm_cur(bytes, size);
    const uint8_t *magic = nm_cur_bytes(&c, 4);
    if (!magic || memcmp(magic, "BGRD", 4) != 0)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: bad magic");
    out->version = nm_cur_u32(&c);
    out->cell_size = nm_cur_f64(&c);
    out->tile_px = nm_cur_f64(&c);
    out->apron_px = nm_cur_f64(&c);
    uint32_t zc = nm_cur_u32(&c);
    (void)nm_cur_u32(&c); /* reserved */
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "BGRD: header truncated");
    if (out->version != NM_BGRD_VERSION)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: version %u not supported (reads %d)", out->version,
                       NM_BGRD_VERSION);
    if (!(fabs(out->cell_size - NM_kCS) <= 1e-12))
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: cell size %g is not kCS", out->cell_size);
    if (!isfinite(out->tile_px) || !isfinite(out->apron_px) || out->tile_px <= 0 ||
        out->apron_px < 0 || out->tile_px + 2 * out->apron_px > 1e6)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: tile size %g / apron %g out of range", out->tile_px,
                       out->apron_px);
    int64_t nmax = (int64_t)floor((out->tile_px + 2 * out->apron_px) / out->cell_size) + 2;
    if (zc > nm_cur_left(&c) / NM_BGRD_ZONE_MIN_SIZE)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: %u zones past the section", zc);
    out->zones = (nm_bgrd_zone *)nm_calloc(zc ? zc : 1, sizeof *out->zones);
    if (!out->zones) return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    out->zone_count = zc;
    for (uint32_t z = 0; z < zc; z++) {
        int rc = parse_zone(&c, out, z, &out->zones[z], nmax, err);
        if (rc) {
            nm_bgrd_free(out);
            return rc;
        }
    }
    return NM_OK;
}

/* ---- tile decoding ------------------------------------------------------------------------------- */

typedef struct tile_head {
    uint32_t n, regions, ncell, kmax;
    float hmin;
    const uint8_t *select;
} tile_head;

/* Fixed fields of a v3 payload, up to the streams. */
static int read_head(nm_cursor *c, const nm_bgrd_zone *z, uint32_t t, tile_head *h, nm_error *err)
{
    const nm_bgrd_tile *e = &z->tiles[t];
    h->n = nm_cur_varint32(c);
    h->hmin = nm_cur_f32(c);
    h->regions = nm_cur_varint32(c);
    h->ncell = nm_cur_varint32(c);
    h->kmax = nm_cur_varint32(c);
    if (c->bad) return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: header truncated", z->name, t);
    if (h->n != e->records)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: %u records, directory says %u",
                       z->name, t, h->n, e->records);
    if (h->regions < 1 || h->ncell < 1 || h->kmax < 1 || h->regions > h->n || h->ncell > h->n ||
        h->kmax > h->n)
        return nm_fail(err, NM_ERR_CORRUPT,
                       "BGRD: zone '%s': tile %u: regions %u / ncell %u / kmax %u not in 1..%u",
                       z->name, t, h->regions, h->ncell, h->kmax, h->n);
    if ((uint64_t)h->ncell > (uint64_t)e->nx * (uint64_t)e->ny)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: %u cells in a %d x %d window",
                       z->name, t, h->ncell, e->nx, e->ny);
    if (!isfinite(h->hmin))
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: hmin not finite", z->name, t);
    h->select = nm_cur_bytes(c, (size_t)NM_BGRD_FIELDS * h->kmax);
    if (!h->select)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: select bytes truncated", z->name, t);
    for (uint32_t f = 0; f < NM_BGRD_FIELDS; f++)
        for (uint32_t l = 0; l < h->kmax; l++) {
            uint8_t s = h->select[f * h->kmax + l];
            if (s > NM_BGRD_PRED_DOWN || (s == NM_BGRD_PRED_DOWN && l == 0))
                return nm_fail(err, NM_ERR_CORRUPT,
                               "BGRD: zone '%s': tile %u: select[field %u, layer %u] = %u", z->name, t,
                               f, l, s);
        }
    return NM_OK;
}

static size_t varint_bound(size_t count) { return count > SIZE_MAX / 10 ? SIZE_MAX : count * 10; }

static const char *const k_stream_names[NM_BGRD_STREAMS] = {
    "cells", "layers", "regions", "height_q", "region index", "clr", "flags", "steps"};
static const uint32_t k_field_max[NM_BGRD_FIELDS] = {UINT32_MAX, 0 /* regions-1 */, 0xFFFF, 0xFF, 0xFF};

/* Varint reading of the residual streams without a call per value: the one-byte case inline,
 * longer ones as nm_cur_varint reads them (same limits, same "bad" cases). */
static uint64_t varint_slow(const uint8_t **pp, const uint8_t *end, bool *bad)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end) break;
        uint8_t b = *p++;
        uint64_t bits = (uint64_t)(b & 0x7f);
        if (shift == 63 && bits > 1) break;
        v |= bits << shift;
        if (!(b & 0x80)) {
            *pp = p;
            return v;
        }
    }
    *bad = true;
    return 0;
}

static inline uint64_t varint_fast(const uint8_t **pp, const uint8_t *end, bool *bad)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        *pp = p + 1;
        return *p;
    }
    return varint_slow(pp, end, bad);
}

/* Field value of record r (f: 0 height_q in q[], 1 region index, 2 clr, 3 flags, 4 steps). */
static inline uint32_t field_get(int f, const uint32_t *q, const nm_grid_rec *out, uint32_t r)
{
    switch (f) {
    case 0: return q[r];
    case 1: return out[r].rid;
    case 2: return out[r].clr;
    case 3: return out[r].flags;
    default: return out[r].steps;
    }
}

static inline void field_set(int f, uint32_t *q, nm_grid_rec *out, uint32_t r, uint32_t v)
{
    switch (f) {
    case 0: q[r] = v; break;
    case 1: out[r].rid = v; break;
    case 2: out[r].clr = (uint16_t)v; break;
    case 3: out[r].flags = (uint8_t)v; break;
    default: out[r].steps = (uint8_t)v; break;
    }
}

/* A predicted value: pred plus the next residual of the stream (-1 for a residual past 2^40);
 * *bad set when the varint is. */
static inline __attribute__((always_inline)) int64_t next_value(int64_t pred, const uint8_t **pp,
                                                               const uint8_t *end, bool *bad)
{
    const int64_t lim = INT64_C(1) << 40;
    const int64_t d = nm_unzig(varint_fast(pp, end, bad));
    return d > lim || d < -lim ? -1 : pred + d;
}

/* One (field, layer) pass over the layer's records (cells ascending). Returns the index in the
 * group of the first bad value, or m when all are good. f is a constant at each call site, so
 * the compiler makes one loop per field. */
static inline __attribute__((always_inline)) uint32_t field_pass(
    int f, bool down, const uint32_t *lrec, const uint32_t *lcol, uint32_t m, uint32_t *state,
    uint32_t vmax, const uint8_t **pp, const uint8_t *end, bool *bad, uint32_t *q, nm_grid_rec *out,
    int64_t *bad_v)
{
    for (uint32_t e = 0; e < m; e++) {
        uint32_t r = lrec[e];
        int64_t pred;
        if (down)
            pred = field_get(f, q, out, r - 1);
        else
            pred = state[lcol[e]];
        int64_t v = next_value(pred, pp, end, bad);
        if (*bad || v < 0 || (uint64_t)v > vmax) {
            *bad_v = v;
            return e;
        }
        if (!down)
            state[lcol[e]] = (uint32_t)v;
        field_set(f, q, out, r, (uint32_t)v);
    }
    return m;
}

/* A record's height: h = hmin + q/64 in double, 0 for Fill (the records' last step). */
static inline float rec_height(float hmin, uint32_t q, uint8_t flags)
{
    return (flags & NM_GRID_FILL) ? 0.0f : (float)((double)hmin + (double)q / NM_BGRD_HEIGHT_STEPS);
}

/* Layer 0 of all five fields in one pass over the cells (every layer-0 predictor is Up: the
 * column's last value, one state row a field), reading the cells and their first records as
 * the cells pass left them. A one-layer cell's record is finished here (cell, dictionary region,
 * height: no later pass reads it); a deeper cell's layer 0 keeps its raw region index and q for
 * the Down predictors of its upper layers and is finished by records_out. Separate passes read
 * record lists and wrote the 16-byte records again, a tile's worth each time (a 512 x 512 tile is
 * 4 MB of records, past the core's caches). False at the first bad value: the caller then
 * decodes with the per-field passes, which name it as before. p[f] ends past field f's layer-0
 * values. */
static bool layer0_cells(const nm_bgrd_scratch *s, uint32_t ncell, uint32_t *state, uint32_t nx,
                         const uint8_t *p[NM_BGRD_FIELDS], const uint8_t *const end[NM_BGRD_FIELDS],
                         uint32_t regions, float hmin, const uint32_t *dict, nm_grid_rec *out)
{
    const uint8_t *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3], *p4 = p[4];
    uint32_t *const q = s->q;
    bool bad = false;
    /* field f's value v: its column's last value plus the next residual of its stream pf, read
     * up to lim: end[f], or 10 bytes on while every stream holds 10 bytes a cell left (a varint
     * is at most 10 bytes, so no end can come first). A one-byte residual (|d| <= 64) needs no
     * magnitude check; (uint64_t)x > vmax also refuses x < 0. */
#define UP_NEXT(f, pf, lim, vmax, v)                                                               \
    do {                                                                                           \
        uint32_t *const col = state + (f) * nx;                                                    \
        int64_t x;                                                                                 \
        if (pf < (lim) && *pf < 0x80)                                                              \
            x = (int64_t)col[c] + nm_unzig(*pf++);                                                 \
        else if ((x = next_value(col[c], &pf, (lim), &bad)), bad)                                 \
            return false;                                                                          \
        if ((uint64_t)x > (vmax))                                                                  \
            return false;                                                                          \
        v = col[c] = (uint32_t)x;                                                                  \
    } while (0)
    nm_cell_rows rows = {nx, 0, 0};
    for (uint32_t i = 0; i < ncell;) {
        /* the cells whose varints cannot run past a stream's end: at most 10 bytes each */
        size_t room = ncell - i;
        const uint8_t *const pp[NM_BGRD_FIELDS] = {p0, p1, p2, p3, p4};
        for (int f = 0; f < NM_BGRD_FIELDS; f++) {
            const size_t left = (size_t)(end[f] - pp[f]) / 10;
            room = left < room ? left : room;
        }
        const bool safe = room > 0;
        const uint32_t stop = safe ? i + (uint32_t)room : i + 1;
        for (; i < stop; i++) {
            const uint32_t r = s->first[i], cell = (uint32_t)s->cells[i];
            const uint32_t c = nm_cell_column(&rows, cell);
            uint32_t v0, v1, v2, v3, v4;
            UP_NEXT(0, p0, safe ? p0 + 10 : end[0], k_field_max[0], v0);
            UP_NEXT(1, p1, safe ? p1 + 10 : end[1], regions - 1, v1);
            UP_NEXT(2, p2, safe ? p2 + 10 : end[2], k_field_max[2], v2);
            UP_NEXT(3, p3, safe ? p3 + 10 : end[3], k_field_max[3], v3);
            UP_NEXT(4, p4, safe ? p4 + 10 : end[4], k_field_max[4], v4);
            q[r] = v0;
            const bool one = s->first[i + 1] == r + 1;
            out[r] = (nm_grid_rec){(int32_t)cell, one ? dict[v1] : v1, one ? rec_height(hmin, v0, (uint8_t)v3) : 0.0f,
                                   (uint16_t)v2, (uint8_t)v3, (uint8_t)v4};
        }
    }
#undef UP_NEXT
    p[0] = p0;
    p[1] = p1;
    p[2] = p2;
    p[3] = p3;
    p[4] = p4;
    return true;
}

/* Layer groups: the records of layer l >= from of every cell with more than l layers, cells
 * ascending (the order a pass reads them), with the column of their cell; group l is
 * [ls[l-1], ls[l]) (from 0), the groups below `from` empty. From layer 1 on only the deep cells
 * (a few in a hundred) are read, not every cell of the tile. */
static void layer_groups(nm_bgrd_scratch *s, uint32_t ncell, uint32_t kmax, uint32_t nx, uint32_t from)
{
    uint32_t *ls = s->lstart;
    for (uint32_t l = 0; l <= kmax; l++) ls[l] = 0;
    for (uint32_t d = 0; d < s->ndeep; d++) {
        const uint32_t i = s->deep[d];
        ls[s->first[i + 1] - s->first[i] - 1]++;
    }
    ls[0] = ncell - s->ndeep;
    for (uint32_t l = kmax; l-- > 0;) ls[l] += ls[l + 1]; /* cells with more than l layers */
    {
        uint32_t acc = 0;
        for (uint32_t l = 0; l < kmax; l++) {
            uint32_t cnt = l < from ? 0 : ls[l];
            ls[l] = acc;
            acc += cnt;
        }
        ls[kmax] = acc;
    }
    /* fill, moving each start to its group's end (so group l is [ls[l-1], ls[l]) afterwards) */
    nm_cell_rows rows = {nx, 0, 0};
    const uint32_t n = from ? s->ndeep : ncell;
    for (uint32_t d = 0; d < n; d++) {
        const uint32_t i = from ? s->deep[d] : d;
        uint32_t k = s->first[i + 1] - s->first[i];
        if (k <= from) continue;
        uint32_t x = nm_cell_column(&rows, (uint32_t)s->cells[i]);
        for (uint32_t l = from; l < k; l++) {
            uint32_t at = ls[l]++;
            s->lrec[at] = s->first[i] + l;
            s->lcol[at] = x;
        }
    }
}

/* The records' last step: cell numbers, dictionary regions, heights (Fill = 0); the fields not
 * asked for are 0. With deep_only, only the cells layer0_cells left unfinished (more than one
 * layer). */
static void records_out(const nm_bgrd_scratch *s, uint32_t ncell, unsigned want, float hmin,
                        const uint32_t *dict, bool deep_only, nm_grid_rec *out)
{
    const uint32_t n = deep_only ? s->ndeep : ncell;
    for (uint32_t d = 0; d < n; d++) {
        const uint32_t i = deep_only ? s->deep[d] : d;
        for (uint32_t r = s->first[i]; r < s->first[i + 1]; r++) {
            out[r].cell = s->cells[i];
            out[r].rid = (want & NM_BGRD_F_REGION) ? dict[out[r].rid] : 0;
            out[r].h = !(want & NM_BGRD_F_HEIGHT) ? 0.0f : rec_height(hmin, s->q[r], out[r].flags);
            if (!(want & NM_BGRD_F_CLR)) out[r].clr = 0;
            if (!(want & NM_BGRD_F_FLAGS)) out[r].flags = 0;
            if (!(want & NM_BGRD_F_STEPS)) out[r].steps = 0;
        }
    }
}

int nm_bgrd_decode_tile(const nm_bgrd *g, uint32_t zone, uint32_t tile, nm_bgrd_scratch *s,
                        nm_grid_rec *out, nm_error *err)
{
    return nm_bgrd_decode_tile_fields(g, zone, tile, NM_BGRD_ALL_FIELDS, s, out, err);
}

int nm_bgrd_decode_tile_fields(const nm_bgrd *g, uint32_t zone, uint32_t tile, unsigned want,
                               nm_bgrd_scratch *s, nm_grid_rec *out, nm_error *err)
{
    if (zone >= g->zone_count || tile >= g->zones[zone].tile_count)
        return nm_fail(err, NM_ERR_ARG, "BGRD: no zone %u tile %u", zone, tile);
    const nm_bgrd_zone *z = &g->zones[zone];
    const nm_bgrd_tile *e = &z->tiles[tile];
    if (e->records == 0) return NM_OK; /* empty tiles are never read */
    if (want & NM_BGRD_F_HEIGHT) want |= NM_BGRD_F_FLAGS; /* Fill records decode to h = 0 */
    nm_cursor c = nm_cur(g->bytes + e->offset, e->len);
    tile_head h;
    int rc = read_head(&c, z, tile, &h, err);
    if (rc) return rc;
    size_t counts[NM_BGRD_STREAMS] = {h.ncell, h.ncell, h.regions, h.n, h.n, h.n, h.n, h.n};
    size_t got[NM_BGRD_STREAMS];
    for (int i = 0; i < NM_BGRD_STREAMS; i++) {
        /* a field nobody reads is skipped by its length prefix, never inflated (the dictionary
         * goes with the region index) */
        bool skip = (i >= 3 && !(want & (1u << (i - 3)))) || (i == 2 && !(want & NM_BGRD_F_REGION));
        if (skip) {
            uint64_t len = nm_cur_varint(&c);
            got[i] = 0;
            if (!c.bad && len != 0 && nm_cur_skip(&c, len)) continue;
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: stream %d (%s) truncated",
                           z->name, tile, i, k_stream_names[i]);
        }
        rc = nm_stream_decode(&c, &s->stream[i], varint_bound(counts[i]), &got[i], err);
        if (rc) {
            nm_error_prefix(err, "BGRD: zone '%s': tile %u: stream %d (%s)", z->name, tile, i,
                            k_stream_names[i]);
            return rc;
        }
    }
    if (nm_cur_left(&c) != 0)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: %zu bytes after the last stream",
                       z->name, tile, nm_cur_left(&c));
    if (!scratch_reserve(s, h.ncell, h.n, (size_t)NM_BGRD_FIELDS * (size_t)e->nx, h.regions))
        return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");

    /* Stream 0: ascending cell numbers as steps from 0; stream 1: layer counts. */
    nm_cursor c0 = nm_cur(s->stream[0].p, got[0]);
    nm_cursor c1 = nm_cur(s->stream[1].p, got[1]);
    uint64_t cells_total = (uint64_t)e->nx * (uint64_t)e->ny;
    uint64_t cell = 0, sum = 0;
    s->ndeep = 0;
    /* a one-byte step or count (nearly every cell) is read at a position held in a register; the
     * cursors read the longer ones and keep the bad flags (a cursor's position read and written
     * through memory a value was 6 % of a tile's decode). A macro, as UP_NEXT: an inline function
     * given the position by pointer measured 3-4 % slower, varint_fast on pointers 5 % */
    size_t i0 = c0.pos, i1 = c1.pos;
#define CUR_NEXT(c, i, v)                                                                          \
    do {                                                                                           \
        if ((i) < (c).size && (c).p[i] < 0x80) {                                                   \
            (v) = (c).p[(i)++];                                                                    \
        } else {                                                                                   \
            (c).pos = (i);                                                                         \
            (v) = nm_cur_varint(&(c));                                                             \
            (i) = (c).pos;                                                                         \
        }                                                                                          \
    } while (0)
    for (uint32_t i = 0; i < h.ncell; i++) {
        uint64_t d, k;
        CUR_NEXT(c0, i0, d);
        CUR_NEXT(c1, i1, k);
        if (i > 0 && d == 0) c0.bad = true; /* cells strictly ascending */
        cell += d;
        if (c0.bad || c1.bad || cell >= cells_total || d >= cells_total)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: cell %u bad or outside the window",
                           z->name, tile, i);
        if (k < 1 || k > h.kmax)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: cell %u has %llu layers (kmax %u)",
                           z->name, tile, i, (unsigned long long)k, h.kmax);
        s->cells[i] = (int32_t)cell;
        s->first[i] = (uint32_t)sum;
        s->deep[s->ndeep] = i;
        s->ndeep += k > 1;
        sum += k;
        if (sum > h.n) break;
    }
#undef CUR_NEXT
    c0.pos = i0;
    c1.pos = i1;
    if (sum != h.n)
        return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: layer counts add up to %llu, not %u",
                       z->name, tile, (unsigned long long)sum, h.n);
    s->first[h.ncell] = h.n;
    if ((rc = nm_cur_done(&c0, "cells stream", err)) || (rc = nm_cur_done(&c1, "layers stream", err))) {
        nm_error_prefix(err, "BGRD: zone '%s': tile %u", z->name, tile);
        return rc;
    }
    /* Stream 2: the region dictionary. */
    nm_cursor c2 = nm_cur(s->stream[2].p, got[2]);
    uint32_t *dict = s->dict;
    for (uint32_t r = 0; (want & NM_BGRD_F_REGION) && r < h.regions; r++) {
        uint64_t v = nm_cur_varint(&c2);
        if (c2.bad || v > z->global_regions)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: region %u bad (global regions %u)",
                           z->name, tile, r, z->global_regions);
        dict[r] = (uint32_t)v;
    }
    if ((want & NM_BGRD_F_REGION) && (rc = nm_cur_done(&c2, "regions stream", err))) {
        nm_error_prefix(err, "BGRD: zone '%s': tile %u", z->name, tile);
        return rc;
    }

    uint32_t *state = s->col;
    uint32_t *ls = s->lstart;

    /* Streams 3..7: residuals, field -> layer -> cell; layer 0 of every field at once when all
     * are wanted. */
    const uint8_t *pf[NM_BGRD_FIELDS], *endf[NM_BGRD_FIELDS];
    for (uint32_t f = 0; f < NM_BGRD_FIELDS; f++) {
        pf[f] = s->stream[3 + f].p;
        endf[f] = got[3 + f] ? pf[f] + got[3 + f] : pf[f]; /* a skipped field: p may be NULL */
    }
    uint32_t l0 = 0;
    if (want == NM_BGRD_ALL_FIELDS) {
        memset(state, 0, (size_t)NM_BGRD_FIELDS * (size_t)e->nx * sizeof *state);
        if (layer0_cells(s, h.ncell, state, (uint32_t)e->nx, pf, endf, h.regions, h.hmin, dict, out)) {
            l0 = 1;
            s->layer0_passes++;
        }
        else /* the per-field passes below name the bad value */
            for (uint32_t f = 0; f < NM_BGRD_FIELDS; f++) pf[f] = s->stream[3 + f].p;
    }
    layer_groups(s, h.ncell, h.kmax, (uint32_t)e->nx, l0);
    for (uint32_t f = 0; f < NM_BGRD_FIELDS; f++) {
        if (!(want & (1u << f))) continue;
        const uint8_t *p = pf[f], *end = endf[f];
        bool bad = false;
        uint32_t vmax = f == 1 ? h.regions - 1 : k_field_max[f];
        for (uint32_t l = l0; l < h.kmax; l++) {
            bool down = h.select[f * h.kmax + l] == NM_BGRD_PRED_DOWN;
            /* Up: the last value of this pass in the column, 0 before its first (a reset a pass
             * costs a tile row; a pass number a column read and wrote one per record) */
            if (!down) memset(state, 0, (size_t)e->nx * sizeof *state);
            uint32_t a = l ? ls[l - 1] : 0, m = ls[l] - a;
            const uint32_t *lr = s->lrec + a, *lc = s->lcol + a;
            int64_t bad_v = 0;
            uint32_t stop;
            switch (f) {
            case 0: stop = field_pass(0, down, lr, lc, m, state, vmax, &p, end, &bad, s->q, out, &bad_v); break;
            case 1: stop = field_pass(1, down, lr, lc, m, state, vmax, &p, end, &bad, s->q, out, &bad_v); break;
            case 2: stop = field_pass(2, down, lr, lc, m, state, vmax, &p, end, &bad, s->q, out, &bad_v); break;
            case 3: stop = field_pass(3, down, lr, lc, m, state, vmax, &p, end, &bad, s->q, out, &bad_v); break;
            default: stop = field_pass(4, down, lr, lc, m, state, vmax, &p, end, &bad, s->q, out, &bad_v); break;
            }
            if (stop < m) {
                /* the cell of the bad record: the last cell whose layer 0 is at or before it */
                uint32_t r = lr[stop], lo = 0, hi = h.ncell;
                while (hi - lo > 1) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (s->first[mid] <= r) lo = mid;
                    else hi = mid;
                }
                return nm_fail(err, NM_ERR_CORRUPT,
                               "BGRD: zone '%s': tile %u: field %s, layer %u, cell %u: value %lld out of range",
                               z->name, tile, k_stream_names[3 + f], l, s->cells[lo], (long long)bad_v);
            }
        }
        nm_cursor cf = nm_cur(s->stream[3 + f].p, got[3 + f]);
        cf.pos = (size_t)(p - s->stream[3 + f].p);
        if ((rc = nm_cur_done(&cf, k_stream_names[3 + f], err))) {
            nm_error_prefix(err, "BGRD: zone '%s': tile %u", z->name, tile);
            return rc;
        }
    }
    records_out(s, h.ncell, want, h.hmin, dict, l0 == 1, out);
    return NM_OK;
}

int nm_bgrd_tile_regions(const nm_bgrd *g, uint32_t zone, uint32_t tile, nm_bgrd_scratch *s,
                         uint32_t *rids, uint32_t *n, nm_error *err)
{
    *n = 0;
    if (zone >= g->zone_count || tile >= g->zones[zone].tile_count)
        return nm_fail(err, NM_ERR_ARG, "BGRD: no zone %u tile %u", zone, tile);
    const nm_bgrd_zone *z = &g->zones[zone];
    const nm_bgrd_tile *e = &z->tiles[tile];
    if (e->records == 0) return NM_OK;
    nm_cursor c = nm_cur(g->bytes + e->offset, e->len);
    tile_head h;
    int rc = read_head(&c, z, tile, &h, err);
    if (rc) return rc;
    /* Skip streams 0 and 1 by their length prefix. */
    for (int i = 0; i < 2; i++) {
        uint64_t len = nm_cur_varint(&c);
        if (c.bad || len == 0 || !nm_cur_skip(&c, len))
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: stream %d truncated", z->name,
                           tile, i);
    }
    size_t got;
    rc = nm_stream_decode(&c, &s->stream[2], varint_bound(h.regions), &got, err);
    if (rc) {
        nm_error_prefix(err, "BGRD: zone '%s': tile %u: stream 2 (regions)", z->name, tile);
        return rc;
    }
    nm_cursor c2 = nm_cur(s->stream[2].p, got);
    for (uint32_t r = 0; r < h.regions; r++) {
        uint64_t v = nm_cur_varint(&c2);
        if (c2.bad || v > z->global_regions)
            return nm_fail(err, NM_ERR_CORRUPT, "BGRD: zone '%s': tile %u: region %u bad", z->name, tile, r);
        rids[r] = (uint32_t)v;
    }
    if ((rc = nm_cur_done(&c2, "regions stream", err))) {
        nm_error_prefix(err, "BGRD: zone '%s': tile %u", z->name, tile);
        return rc;
    }
    *n = h.regions;
    return NM_OK;
}

/* ---- rectangle decode (建窗 / 解码瓦片) ------------------------------------------------------------- */

void nm_bgrd_cache_free(nm_bgrd_cache *c)
{
    if (!c) return;
    for (uint32_t z = 0; z < c->nzones; z++) {
        nm_bgrd_cache_tile *t = c->zone_tiles[z];
        if (!t) continue;
        /* the slot count is not kept: slots past the zone's tiles are never allocated, and
         * every slot was zeroed at allocation, so walk until the sentinel */
        for (size_t k = 0; t[k].used != UINT64_MAX; k++) {
            nm_free(t[k].recs);
            nm_free(t[k].fields);
        }
        nm_free(t);
    }
    nm_free(c->zone_tiles);
    memset(c, 0, sizeof *c);
}

static size_t cache_tile_bytes(const nm_bgrd_tile *e, bool fields)
{
    return (size_t)e->records * (sizeof(nm_grid_rec) + (fields ? sizeof(nm_span_fields) : 0));
}

static void cache_drop(nm_bgrd_cache *c, nm_bgrd_cache_tile *t, const nm_bgrd_tile *e)
{
    if (!t->recs) return;
    c->bytes -= cache_tile_bytes(e, t->fields != NULL);
    nm_free(t->recs);
    nm_free(t->fields);
    t->recs = NULL;
    t->fields = NULL;
}

/* Before a decode: marks the selected tiles' hits (used = clock) and prepares the slots this
 * decode fills (fill = 1), evicting the least recently used tiles outside the selection to make
 * room. Out of memory or budget only means fewer slots filled. */
static void cache_prepare(nm_bgrd_cache *c, const nm_bgrd *g, uint32_t zone, const uint32_t *sel, size_t tc,
                          bool fields)
{
    const nm_bgrd_zone *z = &g->zones[zone];
    if (c->nzones < g->zone_count) {
        nm_bgrd_cache_tile **zt = (nm_bgrd_cache_tile **)nm_realloc(c->zone_tiles, g->zone_count * sizeof *zt);
        if (!zt) return;
        for (uint32_t k = c->nzones; k < g->zone_count; k++) zt[k] = NULL;
        c->zone_tiles = zt;
        c->nzones = g->zone_count;
    }
    if (!c->zone_tiles[zone]) {
        nm_bgrd_cache_tile *t = (nm_bgrd_cache_tile *)nm_calloc((size_t)z->tile_count + 1, sizeof *t);
        if (!t) return;
        t[z->tile_count].used = UINT64_MAX; /* sentinel for nm_bgrd_cache_free */
        c->zone_tiles[zone] = t;
    }
    nm_bgrd_cache_tile *slots = c->zone_tiles[zone];
    const size_t budget = c->budget ? c->budget : NM_BGRD_CACHE_BYTES;
    c->clock++;
    for (size_t k = 0; k < tc; k++) {
        nm_bgrd_cache_tile *t = &slots[sel[k]];
        t->fill = 0;
        if (t->recs && (t->fields || !fields)) {
            t->used = c->clock;
            c->hits++;
        }
    }
    for (size_t k = 0; k < tc; k++) {
        const uint32_t ti = sel[k];
        nm_bgrd_cache_tile *t = &slots[ti];
        if (t->used == c->clock && t->recs) continue; /* a hit */
        c->misses++;
        cache_drop(c, t, &z->tiles[ti]); /* cached without the fields this decode needs */
        const size_t need = cache_tile_bytes(&z->tiles[ti], fields);
        if (need > budget) continue;
        while (c->bytes + need > budget) { /* evict the least recently used, not this decode's */
            nm_bgrd_cache_tile *lru = NULL;
            const nm_bgrd_tile *lru_e = NULL;
            for (uint32_t zz = 0; zz < c->nzones; zz++) {
                nm_bgrd_cache_tile *s = c->zone_tiles[zz];
                if (!s) continue;
                for (uint32_t q = 0; q < g->zones[zz].tile_count; q++)
                    if (s[q].recs && s[q].used != c->clock && !s[q].fill && (!lru || s[q].used < lru->used)) {
                        lru = &s[q];
                        lru_e = &g->zones[zz].tiles[q];
                    }
            }
            if (!lru) break;
            cache_drop(c, lru, lru_e);
        }
        if (c->bytes + need > budget) continue;
        t->recs = (nm_grid_rec *)nm_malloc((size_t)z->tiles[ti].records * sizeof *t->recs);
        t->fields = fields ? (nm_span_fields *)nm_malloc((size_t)z->tiles[ti].records * sizeof *t->fields) : NULL;
        if (!t->recs || (fields && !t->fields)) {
            nm_free(t->recs);
            nm_free(t->fields);
            t->recs = NULL;
            t->fields = NULL;
            continue;
        }
        c->bytes += need;
        t->used = c->clock;
        t->fill = 1;
    }
}

void nm_bgrd_out_free(nm_bgrd_out *o)
{
    if (!o) return;
    nm_free(o->recs);
    nm_free(o->fields);
    for (int i = 0; i < NM_WORKER_LIMIT; i++) nm_bgrd_scratch_free(&o->scratch[i]);
    nm_free(o->order);
    nm_free(o->seg_start);
    nm_free(o->seg_n);
    nm_bgrd_cache *c = o->cache;
    memset(o, 0, sizeof *o);
    o->cache = c;
}

/* The worker whose failure came at the first chunk (chunk order is fixed, so it decides the
 * message whatever the scheduling), or -1. Slots of workers that did not run are zero. */
static int first_failure(const int fail_rc[NM_WORKER_LIMIT], const size_t fail_chunk[NM_WORKER_LIMIT])
{
    int best = -1;
    for (int i = 0; i < NM_WORKER_LIMIT; i++)
        if (fail_rc[i] && (best < 0 || fail_chunk[i] < fail_chunk[best])) best = i;
    return best;
}

typedef struct rect_job {
    const nm_bgrd *g;
    uint32_t zone;
    const struct nm_bnvf *fields;
    nm_bgrd_out *out;
    uint32_t *sel;                 /* selected tiles, directory order (segment k = sel[k]) */
    nm_bgrd_cache_tile *slots;     /* the zone's cache slots, NULL = no cache */
    nm_error errs[NM_WORKER_LIMIT];
    size_t fail_chunk[NM_WORKER_LIMIT];
    int fail_rc[NM_WORKER_LIMIT];
} rect_job;

/* Segment order[chunk] of the rectangle (chunks heaviest first, each to the first free worker w). */
static int decode_one(void *ctx, size_t chunk, int w)
{
    rect_job *j = (rect_job *)ctx;
    if (j->fail_rc[w]) return NM_OK; /* this worker already failed: its later chunks cannot be first */
    nm_bgrd_out *o = j->out;
    uint32_t k = o->order[chunk];              /* segment (index into sel) */
    uint32_t tile = j->sel[k];
    const nm_bgrd_tile *e = &j->g->zones[j->zone].tiles[tile];
    nm_grid_rec *recs = o->recs + o->seg_start[k];
    nm_span_fields *fl = j->fields ? o->fields + o->seg_start[k] : NULL;
    nm_bgrd_cache_tile *ct = j->slots ? &j->slots[tile] : NULL;
    int rc = NM_OK;
    if (ct && ct->recs && !ct->fill && (ct->fields || !fl)) { /* a hit: the bytes a decode would write */
        memcpy(recs, ct->recs, (size_t)e->records * sizeof *recs);
        if (fl) memcpy(fl, ct->fields, (size_t)e->records * sizeof *fl);
    } else {
        rc = nm_bgrd_decode_tile(j->g, j->zone, tile, &o->scratch[w], recs, &j->errs[w]);
        if (!rc && j->fields)
            rc = nm_bnvf_merge_tile(j->fields, j->zone, tile, recs, e->records, o->scratch[w].fspn, fl,
                                    &j->errs[w]);
        if (!rc && ct && ct->fill) {
            memcpy(ct->recs, recs, (size_t)e->records * sizeof *recs);
            if (fl) memcpy(ct->fields, fl, (size_t)e->records * sizeof *fl);
            ct->fill = 2; /* filled */
        }
    }
    if (rc) {
        j->fail_rc[w] = rc;
        j->fail_chunk[w] = chunk;
        return rc;
    }
    /* Keep records of cells this tile owns and the rectangle holds; renumber to the rectangle. */
    int64_t ox0 = (int64_t)e->gx0 + e->px0, ox1 = (int64_t)e->gx0 + e->px1 + 1;
    int64_t oy0 = (int64_t)e->gy0 + e->py0, oy1 = (int64_t)e->gy0 + e->py1 + 1;
    if (ox0 < o->gx0) ox0 = o->gx0;
    if (oy0 < o->gy0) oy0 = o->gy0;
    if (ox1 > o->gx1) ox1 = o->gx1;
    if (oy1 > o->gy1) oy1 = o->gy1;
    int64_t ww = (int64_t)o->gx1 - o->gx0;
    size_t kept = 0;
    for (uint32_t i = 0; i < e->records; i++) {
        int64_t gx = (int64_t)e->gx0 + recs[i].cell % e->nx;
        int64_t gy = (int64_t)e->gy0 + recs[i].cell / e->nx;
        if (gx < ox0 || gx >= ox1 || gy < oy0 || gy >= oy1) continue;
        recs[kept] = recs[i];
        recs[kept].cell = (int32_t)((gy - o->gy0) * ww + (gx - o->gx0));
        if (fl) fl[kept] = fl[i];
        kept++;
    }
    o->seg_n[k] = kept;
    return NM_OK;
}

static int cmp_heavier(const void *a, const void *b, const uint32_t *sel, const nm_bgrd_tile *tiles)
{
    uint32_t ka = *(const uint32_t *)a, kb = *(const uint32_t *)b;
    uint32_t ra = tiles[sel[ka]].records, rb = tiles[sel[kb]].records;
    if (ra != rb) return ra > rb ? -1 : 1;
    return ka < kb ? -1 : ka > kb;
}

/* Insertion sort keeps this free of a comparator context (qsort_r is not C11). Tile counts of
 * one rectangle are small (hundreds at most). */
static void sort_heaviest(uint32_t *order, size_t n, const uint32_t *sel, const nm_bgrd_tile *tiles)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t v = order[i];
        size_t j = i;
        while (j > 0 && cmp_heavier(&v, &order[j - 1], sel, tiles) < 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

void nm_bgrd_tile_view_free(nm_bgrd_tile_view *v)
{
    if (!v) return;
    nm_free(v->own_recs);
    nm_free(v->own_fields);
    memset(v, 0, sizeof *v);
}

typedef struct view_job {
    const nm_bgrd *g;
    uint32_t zone;
    const struct nm_bnvf *fields;
    nm_bgrd_out *ws;
    const uint32_t *tiles;
    const size_t *todo;            /* indices into tiles / views to decode */
    nm_grid_rec **recs;            /* per todo entry: where the records go */
    nm_span_fields **fl;
    nm_error errs[NM_WORKER_LIMIT];
    size_t fail_chunk[NM_WORKER_LIMIT];
    int fail_rc[NM_WORKER_LIMIT];
} view_job;

/* One tile of the view (a chunk, on worker w's scratch). A worker keeps the error of the first
 * chunk it saw fail and skips the later ones: the first failing chunk of all is always run. */
static int view_one(void *ctx, size_t chunk, int w)
{
    view_job *j = (view_job *)ctx;
    if (j->fail_rc[w] && chunk > j->fail_chunk[w]) return NM_OK;
    uint32_t tile = j->tiles[j->todo[chunk]];
    const nm_bgrd_tile *e = &j->g->zones[j->zone].tiles[tile];
    nm_error err = {0};
    int rc = nm_bgrd_decode_tile(j->g, j->zone, tile, &j->ws->scratch[w], j->recs[chunk], &err);
    if (!rc && j->fields)
        rc = nm_bnvf_merge_tile(j->fields, j->zone, tile, j->recs[chunk], e->records, j->ws->scratch[w].fspn,
                                j->fl[chunk], &err);
    if (rc) {
        j->fail_rc[w] = rc;
        j->fail_chunk[w] = chunk;
        j->errs[w] = err;
    }
    return rc;
}

int nm_bgrd_view_tiles(const nm_bgrd *g, uint32_t zone, const uint32_t *tiles, size_t n,
                       const struct nm_bnvf *fields, nm_bgrd_cache *cache, int workers,
                       nm_bgrd_out *ws, nm_bgrd_tile_view *views, nm_error *err)
{
    memset(views, 0, n * sizeof *views);
    if (zone >= g->zone_count) return nm_fail(err, NM_ERR_ARG, "BGRD: no zone %u", zone);
    const nm_bgrd_zone *z = &g->zones[zone];
    if (fields && (zone >= fields->bgrd_zone_count || fields->zone_of_bgrd[zone] < 0))
        return nm_fail(err, NM_ERR_ARG, "BNVF: no fields for zone '%s'", z->name);
    for (size_t k = 0; k < n; k++)
        if (tiles[k] >= z->tile_count) return nm_fail(err, NM_ERR_ARG, "BGRD: zone '%s': no tile %u", z->name, tiles[k]);
    nm_bgrd_cache_tile *slots = NULL;
    if (cache) {
        cache_prepare(cache, g, zone, tiles, n, fields != NULL);
        if (zone < cache->nzones) slots = cache->zone_tiles[zone];
    }
    size_t *todo = (size_t *)nm_malloc((n ? n : 1) * sizeof *todo);
    nm_grid_rec **rp = (nm_grid_rec **)nm_malloc((n ? n : 1) * sizeof *rp);
    nm_span_fields **fp = (nm_span_fields **)nm_malloc((n ? n : 1) * sizeof *fp);
    int rc = todo && rp && fp ? NM_OK : nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    size_t nt = 0, total = 0;
    for (size_t k = 0; k < n && rc == NM_OK; k++) {
        const nm_bgrd_tile *e = &z->tiles[tiles[k]];
        nm_bgrd_tile_view *v = &views[k];
        v->n = e->records;
        if (e->records == 0) continue;
        nm_bgrd_cache_tile *ct = slots ? &slots[tiles[k]] : NULL;
        if (ct && ct->recs && !ct->fill && (ct->fields || !fields)) { /* a hit */
            v->recs = ct->recs;
            v->fields = fields ? ct->fields : NULL;
            continue;
        }
        if (ct && ct->fill == 1) { /* decoded straight into the cache slot */
            rp[nt] = ct->recs;
            fp[nt] = ct->fields;
        } else if (cache) {
            continue; /* no room: recs stays NULL */
        } else {
            v->own_recs = (nm_grid_rec *)nm_malloc(e->records * sizeof *v->own_recs);
            v->own_fields = fields ? (nm_span_fields *)nm_malloc(e->records * sizeof *v->own_fields) : NULL;
            if (!v->own_recs || (fields && !v->own_fields)) {
                rc = nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory for %u records", e->records);
                break;
            }
            rp[nt] = v->own_recs;
            fp[nt] = v->own_fields;
        }
        todo[nt++] = k;
        total += e->records;
    }
    if (rc == NM_OK && nt) {
        view_job j;
        memset(&j, 0, sizeof j);
        j.g = g;
        j.zone = zone;
        j.fields = fields;
        j.ws = ws;
        j.tiles = tiles;
        j.todo = todo;
        j.recs = rp;
        j.fl = fp;
        /* heaviest tiles first, each to the first free worker: order [0, nt), the tiles [nt, 2 nt) */
        uint32_t *order = (uint32_t *)nm_malloc(2 * nt * sizeof *order);
        int prc = NM_ERR_NOMEM;
        if (order) {
            for (size_t q = 0; q < nt; q++) {
                order[q] = (uint32_t)q;
                order[nt + q] = tiles[todo[q]];
            }
            sort_heaviest(order, nt, order + nt, z->tiles);
            prc = nm_parallel_claim(nt, order, workers > 0 ? workers : nm_workers_for(total, 0), view_one, &j);
            nm_free(order);
        }
        const int best = first_failure(j.fail_rc, j.fail_chunk);
        if (best >= 0) {
            if (err) *err = j.errs[best];
            rc = j.fail_rc[best];
        } else if (prc) {
            rc = nm_fail(err, prc, "BGRD: zone '%s': tile decode could not run", z->name);
        }
        for (size_t q = 0; q < nt && rc == NM_OK; q++) {
            nm_bgrd_tile_view *v = &views[todo[q]];
            v->recs = rp[q];
            v->fields = fp[q];
        }
    }
    if (slots) /* filled slots are good now; a failed decode leaves no valid records: drop them */
        for (size_t k = 0; k < n; k++) {
            nm_bgrd_cache_tile *t = &slots[tiles[k]];
            if (t->fill == 1 && rc) cache_drop(cache, t, &z->tiles[tiles[k]]);
            t->fill = 0;
        }
    if (rc)
        for (size_t k = 0; k < n; k++) nm_bgrd_tile_view_free(&views[k]);
    nm_free(todo);
    nm_free(rp);
    nm_free(fp);
    return rc;
}

int nm_bgrd_decode_rect(const nm_bgrd *g, uint32_t zone, int32_t gx0, int32_t gy0, int32_t gx1,
                        int32_t gy1, const struct nm_bnvf *fields, int workers, nm_bgrd_out *out,
                        nm_error *err)
{
    out->n = 0;
    if (zone >= g->zone_count) return nm_fail(err, NM_ERR_ARG, "BGRD: no zone %u", zone);
    if (gx0 >= gx1 || gy0 >= gy1 || ((int64_t)gx1 - gx0) * ((int64_t)gy1 - gy0) > INT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "BGRD: rectangle [%d,%d)x[%d,%d) empty or too large", gx0, gx1,
                       gy0, gy1);
    const nm_bgrd_zone *z = &g->zones[zone];
    if (fields && (zone >= fields->bgrd_zone_count || fields->zone_of_bgrd[zone] < 0))
        return nm_fail(err, NM_ERR_ARG, "BNVF: no fields for zone '%s'", z->name);
    out->gx0 = gx0;
    out->gy0 = gy0;
    out->gx1 = gx1;
    out->gy1 = gy1;
    /* Tiles whose own rectangle meets the query, in directory order. order holds [0, T): the
     * heaviest-first segment order, [T, 2T): the selected tile ids. */
    size_t tc = 0;
    if (out->tiles_cap < (size_t)z->tile_count + 1) {
        size_t tcap = (size_t)z->tile_count + 1;
        uint32_t *o2 = (uint32_t *)nm_realloc(out->order, 2 * tcap * sizeof *o2);
        if (o2) out->order = o2;
        size_t *s2 = (size_t *)nm_realloc(out->seg_start, tcap * sizeof *s2);
        if (s2) out->seg_start = s2;
        size_t *n2 = (size_t *)nm_realloc(out->seg_n, tcap * sizeof *n2);
        if (n2) out->seg_n = n2;
        if (!o2 || !s2 || !n2) return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
        out->tiles_cap = tcap;
    }
    uint32_t *sel = out->order + out->tiles_cap;
    size_t total = 0;
    for (uint32_t t = 0; t < z->tile_count; t++) {
        const nm_bgrd_tile *e = &z->tiles[t];
        int64_t ox0 = (int64_t)e->gx0 + e->px0, ox1 = (int64_t)e->gx0 + e->px1 + 1;
        int64_t oy0 = (int64_t)e->gy0 + e->py0, oy1 = (int64_t)e->gy0 + e->py1 + 1;
        if (ox1 <= gx0 || ox0 >= gx1 || oy1 <= gy0 || oy0 >= gy1 || e->records == 0) continue;
        out->seg_start[tc] = total;
        out->seg_n[tc] = 0;
        sel[tc] = t;
        out->order[tc] = (uint32_t)tc;
        tc++;
        total += e->records; /* upper bound: apron and out-of-rectangle records are dropped */
    }
    if (tc == 0) return NM_OK;
    if (!grow((void **)&out->recs, &out->cap, total, sizeof *out->recs))
        return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory for %zu records", total);
    if (fields && !grow((void **)&out->fields, &out->fields_cap, total, sizeof *out->fields))
        return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory for %zu records", total);
    sort_heaviest(out->order, tc, sel, z->tiles);
    rect_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.zone = zone;
    j.fields = fields;
    j.out = out;
    j.sel = sel;
    if (out->cache) {
        cache_prepare(out->cache, g, zone, sel, tc, fields != NULL);
        if (zone < out->cache->nzones) j.slots = out->cache->zone_tiles[zone];
    }
    int prc = nm_parallel_claim(tc, NULL, workers > 0 ? workers : nm_workers_for(total, 0), decode_one, &j);
    if (j.slots) /* slots a failed decode left unfilled hold no valid records: drop them */
        for (size_t k = 0; k < tc; k++) {
            nm_bgrd_cache_tile *t = &j.slots[sel[k]];
            if (t->fill == 1) cache_drop(out->cache, t, &z->tiles[sel[k]]);
            t->fill = 0;
        }
    const int best = first_failure(j.fail_rc, j.fail_chunk);
    if (best >= 0) {
        if (err) *err = j.errs[best];
        out->n = 0;
        return j.fail_rc[best];
    }
    if (prc) return nm_fail(err, prc, "BGRD: zone '%s': tile decode could not run", z->name);
    /* Close the gaps between segments, in directory order. */
    size_t n = 0;
    for (size_t k = 0; k < tc; k++) {
        if (n != out->seg_start[k] && out->seg_n[k]) {
            memmove(out->recs + n, out->recs + out->seg_start[k], out->seg_n[k] * sizeof *out->recs);
            if (fields)
                memmove(out->fields + n, out->fields + out->seg_start[k],
                        out->seg_n[k] * sizeof *out->fields);
        }
        n += out->seg_n[k];
    }
    out->n = n;
    return NM_OK;
}

/* ---- writing ------------------------------------------------------------------------------------- */

static void tiling_params(const nm_bgrd_write_opts *o, int32_t *tc, int32_t *ac)
{
    *tc = o && o->tile_cells > 0 ? o->tile_cells : NM_BGRD_TILE_CELLS;
    *ac = o && o->apron_cells != 0 ? (o->apron_cells < 0 ? 0 : o->apron_cells) : NM_BGRD_APRON_CELLS;
}

int nm_bgrd_zone_tiling(const nm_grid_zone_src *z, const nm_bgrd_write_opts *opts,
                        nm_bgrd_tile *tiles, uint32_t *count, nm_error *err)
{
    int32_t T, A;
    tiling_params(opts, &T, &A);
    if (z->w < 0 || z->h < 0)
        return nm_fail(err, NM_ERR_ARG, "BGRD: zone '%s': negative size", z->name ? z->name : "?");
    if ((int64_t)T + 2 * (int64_t)A + 1 > 1000000)
        return nm_fail(err, NM_ERR_ARG, "BGRD: tile %d + apron %d too large", T, A);
    if (!isfinite(z->x0) || !isfinite(z->y0) || fabs(z->x0) > 1e8 || fabs(z->y0) > 1e8)
        return nm_fail(err, NM_ERR_ARG, "BGRD: zone '%s': origin out of range", z->name ? z->name : "?");
    int64_t zx = llround(z->x0 / NM_kCS), zy = llround(z->y0 / NM_kCS);
    int64_t tx = ((int64_t)z->w + T - 1) / T, ty = ((int64_t)z->h + T - 1) / T;
    if (tx * ty > UINT32_MAX / 2 || zx + z->w + T + A > INT32_MAX || zy + z->h + T + A > INT32_MAX ||
        zx - A < INT32_MIN || zy - A < INT32_MIN)
        return nm_fail(err, NM_ERR_ARG, "BGRD: zone '%s': too large", z->name ? z->name : "?");
    *count = (uint32_t)(tx * ty);
    if (!tiles) return NM_OK;
    for (int64_t j = 0; j < ty; j++)
        for (int64_t i = 0; i < tx; i++) {
            nm_bgrd_tile *e = &tiles[j * tx + i];
            memset(e, 0, sizeof *e);
            int64_t ow = z->w - i * T < T ? z->w - i * T : T;
            int64_t oh = z->h - j * T < T ? z->h - j * T : T;
            e->gx0 = (int32_t)(zx + i * T - A);
            e->gy0 = (int32_t)(zy + j * T - A);
            e->nx = e->ny = T + 2 * A + 1;
            e->px0 = e->py0 = A;
            e->px1 = (int32_t)(A + ow - 1);
            e->py1 = (int32_t)(A + oh - 1);
        }
    return NM_OK;
}

int nm_bgrd_gather_tile(const nm_grid_zone_src *z, const nm_bgrd_tile *t, nm_grid_rec **recs,
                        uint32_t **src_index, size_t *cap, size_t *n, nm_error *err)
{
    *n = 0;
    int64_t zx = llround(z->x0 / NM_kCS), zy = llround(z->y0 / NM_kCS);
    int64_t x0 = t->gx0 - zx, y0 = t->gy0 - zy; /* window corner, zone-local */
    int64_t xa = x0 < 0 ? 0 : x0, xb = x0 + t->nx < z->w ? x0 + t->nx : z->w;
    int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + t->ny < z->h ? y0 + t->ny : z->h;
    size_t total = 0;
    for (int64_t y = ya; y < yb; y++)
        if (xa < xb) total += z->cell_start[y * z->w + xb] - z->cell_start[y * z->w + xa];
    size_t c1 = *cap, c2 = *cap;
    if (!grow((void **)recs, &c1, total ? total : 1, sizeof **recs) ||
        (src_index && !grow((void **)src_index, &c2, total ? total : 1, sizeof **src_index)))
        return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    *cap = src_index && c2 < c1 ? c2 : c1;
    size_t k = 0;
    for (int64_t y = ya; y < yb; y++)
        for (int64_t x = xa; x < xb; x++) {
            size_t i = (size_t)(y * z->w + x);
            for (uint32_t r = z->cell_start[i]; r < z->cell_start[i + 1]; r++) {
                (*recs)[k] = z->recs[r];
                (*recs)[k].cell = (int32_t)((y - y0) * t->nx + (x - x0));
                if (src_index) (*src_index)[k] = r;
                k++;
            }
        }
    *n = k;
    return NM_OK;
}

/* log2(x) in 16.16 fixed point for x >= 1: integer part from the top bit, fraction by linear
 * interpolation of the mantissa (error < 0.09). Integer-only, so the predictor choice, and with it
 * the baked bytes, are the same on every machine and libm. */
static uint64_t log2_fx(uint64_t x)
{
    unsigned k = 0;
    while ((x >> k) > 1) k++;
    uint64_t frac = k >= 16 ? (x >> (k - 16)) & 0xFFFF : (x << (16 - k)) & 0xFFFF;
    return ((uint64_t)k << 16) | frac;
}

/* Cost proxy of a residual sequence: order-0 entropy (in 1/65536 bits) of its varint bytes.
 * Deflate's Huffman stage gets close to it; it ranks Up against Down without compressing both. */
static uint64_t residual_cost(const uint64_t *res, size_t m)
{
    uint64_t hist[256] = {0};
    uint64_t bytes = 0;
    for (size_t i = 0; i < m; i++) {
        uint64_t v = res[i];
        do {
            hist[(v & 0x7F) | (v > 0x7F ? 0x80 : 0)]++;
            bytes++;
            v >>= 7;
        } while (v);
    }
    if (!bytes) return 0;
    uint64_t bits = 0, lb = log2_fx(bytes);
    for (int b = 0; b < 256; b++)
        if (hist[b]) bits += hist[b] * (lb - log2_fx(hist[b]));
    return bits;
}

typedef struct enc_tmp {
    uint32_t *first, *cells, *val[NM_BGRD_FIELDS], *dict, *col, *tag, *alt;
    uint64_t *res_up, *res_dn;
    uint32_t *x;             /* per cell: its column */
    uint32_t *lcell, *lstart; /* per layer l: the cells with more than l layers, lcell[lstart[l] ..) */
} enc_tmp;

static void enc_tmp_free(enc_tmp *t)
{
    nm_free(t->first);
    nm_free(t->cells);
    for (int f = 0; f < NM_BGRD_FIELDS; f++) nm_free(t->val[f]);
    nm_free(t->dict);
    nm_free(t->col);
    nm_free(t->tag);
    nm_free(t->alt);
    nm_free(t->res_up);
    nm_free(t->res_dn);
    nm_free(t->x);
    nm_free(t->lcell);
    nm_free(t->lstart);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Residuals of (field f, layer l) under one predictor, over the cells with more than l layers.
 * For height (f = 0) a Fill record takes its prediction as value (residual 0); that value is
 * written to fillv so the chosen predictor's values can be kept. */
static size_t residuals(const enc_tmp *t, uint32_t f, uint32_t l, bool down, const nm_grid_rec *recs,
                        uint32_t pass, uint64_t *res, uint32_t *fillv)
{
    size_t m = 0;
    const uint32_t *v = t->val[f];
    for (uint32_t q = t->lstart[l]; q < t->lstart[l + 1]; q++) {
        uint32_t i = t->lcell[q];
        uint32_t r = t->first[i] + l;
        uint32_t x = t->x[i];
        int64_t pred = down ? (int64_t)v[r - 1] : (t->tag[x] == pass ? (int64_t)t->col[x] : 0);
        uint32_t value = v[r];
        if (f == 0 && (recs[r].flags & NM_GRID_FILL)) {
            value = (uint32_t)pred;
            fillv[r] = value;
        }
        res[m++] = nm_zig((int64_t)value - pred);
        t->col[x] = value;
        t->tag[x] = pass;
    }
    return m;
}

int nm_bgrd_encode_tile(const nm_grid_rec *recs, size_t n, int32_t nx, int32_t ny,
                        uint32_t global_regions, int level, nm_buf *out, uint8_t *select_out,
                        size_t select_cap, uint32_t *kmax_out, nm_error *err)
{
    if (nx < 1 || ny < 1) return nm_fail(err, NM_ERR_ARG, "BGRD: tile size %d x %d", nx, ny);
    if (n == 0) {
        nm_buf_varint(out, 0);
        if (kmax_out) *kmax_out = 0;
        return out->oom ? nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory") : NM_OK;
    }
    if (n > UINT32_MAX / 2) return nm_fail(err, NM_ERR_ARG, "BGRD: %zu records in one tile", n);
    if (level <= 0) level = NM_GRID_LEVEL;
    int64_t cells_total = (int64_t)nx * ny;
    enc_tmp t;
    memset(&t, 0, sizeof t);
    int rc = NM_OK;
    nm_buf streams[NM_BGRD_STREAMS];
    memset(streams, 0, sizeof streams);
#define ENC_FAIL(code, ...)                    \
    do {                                       \
        rc = nm_fail(err, code, __VA_ARGS__);  \
        goto done;                             \
    } while (0)
    /* Cells, layer counts, the canonical order inside each cell. */
    uint32_t ncell = 0, kmax = 0;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].cell < 0 || recs[i].cell >= cells_total)
            ENC_FAIL(NM_ERR_ARG, "BGRD: record %zu: cell %d outside the %d x %d window", i, recs[i].cell, nx, ny);
        if (i > 0 && recs[i].cell < recs[i - 1].cell)
            ENC_FAIL(NM_ERR_ARG, "BGRD: record %zu: cells not ascending", i);
        if (!(recs[i].flags & NM_GRID_FILL) && !isfinite(recs[i].h))
            ENC_FAIL(NM_ERR_ARG, "BGRD: cell %d: height not finite", recs[i].cell);
        if (i > 0 && recs[i].cell == recs[i - 1].cell && nm_grid_layer_cmp(&recs[i - 1], &recs[i]) > 0)
            ENC_FAIL(NM_ERR_ARG, "BGRD: cell %d: layers not in canonical order (region, then height)", recs[i].cell);
        if (recs[i].rid > global_regions)
            ENC_FAIL(NM_ERR_ARG, "BGRD: cell %d: rid %u > global regions %u", recs[i].cell, recs[i].rid,
                     global_regions);
        if (i == 0 || recs[i].cell != recs[i - 1].cell) ncell++;
    }
    t.first = (uint32_t *)nm_malloc(((size_t)ncell + 1) * sizeof *t.first);
    t.cells = (uint32_t *)nm_malloc((size_t)ncell * sizeof *t.cells);
    for (int f = 0; f < NM_BGRD_FIELDS; f++) t.val[f] = (uint32_t *)nm_malloc(n * sizeof *t.val[f]);
    t.dict = (uint32_t *)nm_malloc(n * sizeof *t.dict);
    t.col = (uint32_t *)nm_malloc((size_t)nx * sizeof *t.col);
    t.tag = (uint32_t *)nm_calloc((size_t)nx, sizeof *t.tag);
    t.alt = (uint32_t *)nm_malloc(n * sizeof *t.alt);
    t.res_up = (uint64_t *)nm_malloc(n * sizeof *t.res_up);
    t.res_dn = (uint64_t *)nm_malloc(n * sizeof *t.res_dn);
    bool ok = t.first && t.cells && t.dict && t.col && t.tag && t.alt && t.res_up && t.res_dn;
    for (int f = 0; f < NM_BGRD_FIELDS; f++) ok = ok && t.val[f];
    if (!ok) ENC_FAIL(NM_ERR_NOMEM, "BGRD: out of memory");
    {
        uint32_t c = 0;
        for (size_t i = 0; i < n; i++)
            if (i == 0 || recs[i].cell != recs[i - 1].cell) {
                t.cells[c] = (uint32_t)recs[i].cell;
                t.first[c++] = (uint32_t)i;
            }
        t.first[ncell] = (uint32_t)n;
        for (uint32_t i = 0; i < ncell; i++)
            if (t.first[i + 1] - t.first[i] > kmax) kmax = t.first[i + 1] - t.first[i];
    }
    /* the column of each cell and, per layer, the cells that have it (each (field, layer) pass
     * walks only those: most cells have one layer) */
    t.x = (uint32_t *)nm_malloc(((size_t)ncell + 1) * sizeof *t.x);
    t.lcell = (uint32_t *)nm_malloc(n * sizeof *t.lcell);
    t.lstart = (uint32_t *)nm_malloc(((size_t)kmax + 1) * sizeof *t.lstart);
    if (!t.x || !t.lcell || !t.lstart) ENC_FAIL(NM_ERR_NOMEM, "BGRD: out of memory");
    {
        uint32_t m = 0;
        for (uint32_t i = 0; i < ncell; i++) {
            t.x[i] = t.cells[i] % (uint32_t)nx;
            t.lcell[m++] = i;
        }
        t.lstart[0] = 0;
        for (uint32_t l = 1; l <= kmax; l++) {
            t.lstart[l] = m;
            if (l == kmax) break;
            for (uint32_t q = t.lstart[l - 1]; q < t.lstart[l]; q++) {
                uint32_t i = t.lcell[q];
                if (t.first[i + 1] - t.first[i] > l) t.lcell[m++] = i;
            }
        }
    }
    /* hmin over the real heights (Fill records have none); q = round(64 (h - hmin)). */
    float hmin = 0.0f;
    bool any = false;
    for (size_t i = 0; i < n; i++)
        if (!(recs[i].flags & NM_GRID_FILL) && (!any || recs[i].h < hmin)) {
            hmin = recs[i].h;
            any = true;
        }
    for (size_t i = 0; i < n; i++) {
        if (recs[i].flags & NM_GRID_FILL) {
            t.val[0][i] = 0;
            continue;
        }
        /* round() is llround's rounding: half away from zero (formulas.md #11). */
        double q = round(((double)recs[i].h - (double)hmin) * NM_BGRD_HEIGHT_STEPS);
        if (!(q >= 0 && q <= (double)INT32_MAX))
            ENC_FAIL(NM_ERR_ARG, "BGRD: cell %d: height %g too far above the tile minimum %g", recs[i].cell,
                     (double)recs[i].h, (double)hmin);
        t.val[0][i] = (uint32_t)q;
    }
    /* Region dictionary: the tile's distinct rids, ascending. A rid equal to one of the last
     * few seen is not listed again (a tile holds a handful of regions: the sort of one rid per
     * record was a tenth of the tile encoding); the sort and the dedup below give the same list. */
    size_t nd = 1;
    t.dict[0] = recs[0].rid;
    {
        uint32_t seen[4] = {recs[0].rid, recs[0].rid, recs[0].rid, recs[0].rid}; /* all listed */
        unsigned at = 0;
        for (size_t i = 1; i < n; i++) {
            uint32_t r = recs[i].rid;
            if (r == seen[0] || r == seen[1] || r == seen[2] || r == seen[3]) continue;
            seen[at++ & 3] = r;
            t.dict[nd++] = r;
        }
    }
    qsort(t.dict, nd, sizeof *t.dict, cmp_u32);
    uint32_t regions = 0;
    for (size_t i = 0; i < nd; i++)
        if (i == 0 || t.dict[i] != t.dict[i - 1]) t.dict[regions++] = t.dict[i];
    uint32_t last_rid = t.dict[0], last_at = 0;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].rid != last_rid) {
            uint32_t lo = 0, hi = regions;
            while (hi - lo > 1) {
                uint32_t mid = (lo + hi) / 2;
                if (t.dict[mid] <= recs[i].rid) lo = mid; else hi = mid;
            }
            last_rid = recs[i].rid;
            last_at = lo;
        }
        t.val[1][i] = last_at;
        t.val[2][i] = recs[i].clr;
        t.val[3][i] = recs[i].flags;
        t.val[4][i] = recs[i].steps;
    }
    /* Streams 0..2. */
    for (uint32_t i = 0; i < ncell; i++) {
        nm_buf_varint(&streams[0], t.cells[i] - (i ? t.cells[i - 1] : 0));
        nm_buf_varint(&streams[1], t.first[i + 1] - t.first[i]);
    }
    for (uint32_t r = 0; r < regions; r++) nm_buf_varint(&streams[2], t.dict[r]);
    /* Streams 3..7: per (field, layer) the cheaper of Up and Down. */
    size_t sel_n = (size_t)NM_BGRD_FIELDS * kmax;
    uint8_t *select = (uint8_t *)nm_malloc(sel_n);
    if (!select) ENC_FAIL(NM_ERR_NOMEM, "BGRD: out of memory");
    uint32_t pass = 0;
    for (uint32_t f = 0; f < NM_BGRD_FIELDS; f++)
        for (uint32_t l = 0; l < kmax; l++) {
            size_t m = residuals(&t, f, l, false, recs, ++pass, t.res_up, t.val[0]);
            bool down = false;
            if (l > 0) {
                /* Fill heights from the Up pass are provisional: Down computes its own into alt. */
                (void)residuals(&t, f, l, true, recs, ++pass, t.res_dn, t.alt);
                down = residual_cost(t.res_dn, m) < residual_cost(t.res_up, m);
                if (down && f == 0)
                    for (uint32_t q = t.lstart[l]; q < t.lstart[l + 1]; q++) {
                        uint32_t r = t.first[t.lcell[q]] + l;
                        if (recs[r].flags & NM_GRID_FILL) t.val[0][r] = t.alt[r];
                    }
            }
            select[f * kmax + l] = down ? NM_BGRD_PRED_DOWN : NM_BGRD_PRED_UP;
            const uint64_t *res = down ? t.res_dn : t.res_up;
            for (size_t i = 0; i < m; i++) nm_buf_varint(&streams[3 + f], res[i]);
        }
    if (select_out) memcpy(select_out, select, sel_n < select_cap ? sel_n : select_cap);
    if (kmax_out) *kmax_out = kmax;
    nm_buf_varint(out, n);
    nm_buf_f32(out, hmin);
    nm_buf_varint(out, regions);
    nm_buf_varint(out, ncell);
    nm_buf_varint(out, kmax);
    nm_buf_bytes(out, select, sel_n);
    nm_free(select);
    for (int i = 0; i < NM_BGRD_STREAMS; i++) {
        if (streams[i].oom) ENC_FAIL(NM_ERR_NOMEM, "BGRD: out of memory");
        rc = nm_stream_encode(out, streams[i].p, streams[i].size, level, err);
        if (rc) goto done;
    }
    if (out->oom) ENC_FAIL(NM_ERR_NOMEM, "BGRD: out of memory");
#undef ENC_FAIL
done:
    for (int i = 0; i < NM_BGRD_STREAMS; i++) nm_buf_free(&streams[i]);
    enc_tmp_free(&t);
    return rc;
}

/* Parallel tile encoding: each tile into its own buffer, concatenated in tile order. */
typedef struct enc_job {
    const nm_grid_zone_src *z;
    const nm_bgrd_tile *tiles;
    nm_buf *bufs;
    uint32_t *records;
    int level;
    nm_error *errs; /* per tile */
} enc_job;

static int encode_one(void *ctx, size_t k)
{
    enc_job *j = (enc_job *)ctx;
    nm_grid_rec *recs = NULL;
    size_t cap = 0, n = 0;
    int rc = nm_bgrd_gather_tile(j->z, &j->tiles[k], &recs, NULL, &cap, &n, &j->errs[k]);
    if (!rc) {
        j->records[k] = (uint32_t)n;
        rc = nm_bgrd_encode_tile(recs, n, j->tiles[k].nx, j->tiles[k].ny, j->z->global_regions, j->level,
                                 &j->bufs[k], NULL, 0, NULL, &j->errs[k]);
        if (rc) nm_error_prefix(&j->errs[k], "zone '%s': tile %zu", j->z->name, k);
    }
    nm_free(recs);
    return rc;
}

/* The tc tiles of one zone encoded on `workers` threads: *bufs and *records (per tile) are
 * the caller's to free (each buffer too), also on error. */
static int encode_zone(const nm_grid_zone_src *z, const nm_bgrd_tile *tiles, uint32_t tc, int level,
                       int workers, nm_buf **bufs, uint32_t **records, nm_error *err)
{
    enc_job j = {z, tiles, NULL, NULL, level, NULL};
    j.bufs = (nm_buf *)nm_calloc(tc, sizeof *j.bufs);
    j.records = (uint32_t *)nm_calloc(tc, sizeof *j.records);
    j.errs = (nm_error *)nm_calloc(tc, sizeof *j.errs);
    *bufs = j.bufs;
    *records = j.records;
    int rc = NM_OK;
    if (!j.bufs || !j.records || !j.errs) {
        rc = nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    } else {
        int w = workers < 1 ? 1 : workers > NM_WORKER_LIMIT ? NM_WORKER_LIMIT : workers;
        rc = nm_parallel_chunks(tc, w, encode_one, &j);
        if (rc) {
            for (uint32_t k = 0; k < tc; k++)
                if (j.errs[k].code) {
                    if (err) *err = j.errs[k];
                    break;
                }
        }
    }
    nm_free(j.errs);
    return rc;
}

int nm_bgrd_write(const nm_grid_zone_src *zones, uint32_t zone_count,
                  const nm_bgrd_write_opts *opts, nm_buf *out, nm_error *err)
{
    int32_t T, A;
    tiling_params(opts, &T, &A);
    int level = opts && opts->level > 0 ? opts->level : NM_GRID_LEVEL;
    int workers = opts && opts->workers > 0 ? opts->workers : nm_workers_for(SIZE_MAX, 0);
    size_t base = out->size;
    nm_buf_bytes(out, "BGRD", 4);
    nm_buf_u32(out, NM_BGRD_VERSION);
    nm_buf_f64(out, NM_kCS);
    nm_buf_f64(out, T * NM_kCS);
    nm_buf_f64(out, A * NM_kCS);
    nm_buf_u32(out, zone_count);
    nm_buf_u32(out, 0);
    /* Tilings first, so the directory size is known and payload offsets can be assigned. */
    nm_bgrd_tile **tiles = (nm_bgrd_tile **)nm_calloc(zone_count ? zone_count : 1, sizeof *tiles);
    uint32_t *counts = (uint32_t *)nm_calloc(zone_count ? zone_count : 1, sizeof *counts);
    size_t *dir_at = (size_t *)nm_calloc(zone_count ? zone_count : 1, sizeof *dir_at);
    int rc = NM_OK;
    if (!tiles || !counts || !dir_at) {
        rc = nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
        goto done;
    }
    for (uint32_t z = 0; z < zone_count; z++) {
        const nm_grid_zone_src *s = &zones[z];
        if (!s->name || (!s->cell_start && !s->tiles && (int64_t)s->w * s->h > 0)) {
            rc = nm_fail(err, NM_ERR_ARG, "BGRD: zone %u: no name or no records", z);
            goto done;
        }
        if ((rc = nm_bgrd_zone_tiling(s, opts, NULL, &counts[z], err))) goto done;
        if (s->tiles && (s->tiles->count != counts[z] || T != NM_BGRD_TILE_CELLS || A != NM_BGRD_APRON_CELLS ||
                         level != NM_GRID_LEVEL)) {
            rc = nm_fail(err, NM_ERR_ARG, "BGRD: zone '%s': encoded tiles need the default tiling and level", s->name);
            goto done;
        }
        tiles[z] = (nm_bgrd_tile *)nm_calloc(counts[z] ? counts[z] : 1, sizeof **tiles);
        if (!tiles[z]) {
            rc = nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
            goto done;
        }
        if ((rc = nm_bgrd_zone_tiling(s, opts, tiles[z], &counts[z], err))) goto done;
        size_t len = strlen(s->name);
        nm_buf_u32(out, (uint32_t)len);
        nm_buf_bytes(out, s->name, len);
        nm_buf_zeros(out, (4 - len % 4) % 4);
        nm_buf_f64(out, s->x0);
        nm_buf_f64(out, s->y0);
        nm_buf_u32(out, s->global_regions);
        nm_buf_u32(out, counts[z]);
        dir_at[z] = out->size;
        nm_buf_zeros(out, (size_t)counts[z] * NM_BGRD_TILE_ENTRY_SIZE);
    }
    for (uint32_t z = 0; z < zone_count && !rc; z++) {
        uint32_t tc = counts[z];
        if (!tc) continue;
        nm_buf *bufs = NULL;
        uint32_t *records = NULL;
        if (zones[z].tiles) { /* encoded by the bake: copied as they are */
            bufs = zones[z].tiles->grid;
            records = zones[z].tiles->records;
        } else {
            rc = encode_zone(&zones[z], tiles[z], tc, level, workers, &bufs, &records, err);
        }
        for (uint32_t k = 0; k < tc && !rc; k++) {
            nm_bgrd_tile *e = &tiles[z][k];
            e->offset = out->size - base;
            e->len = (uint32_t)bufs[k].size;
            e->records = records[k];
            if (bufs[k].size > UINT32_MAX) rc = nm_fail(err, NM_ERR_ARG, "BGRD: tile too large");
            nm_buf_bytes(out, bufs[k].p, bufs[k].size);
        }
        if (!zones[z].tiles) {
            if (bufs)
                for (uint32_t k = 0; k < tc; k++) nm_buf_free(&bufs[k]);
            nm_free(bufs);
            nm_free(records);
        }
        if (rc || out->oom) break;
        /* Fill in the directory now that offsets are known. */
        for (uint32_t k = 0; k < tc; k++) {
            const nm_bgrd_tile *e = &tiles[z][k];
            size_t p = dir_at[z] + (size_t)k * NM_BGRD_TILE_ENTRY_SIZE;
            const int32_t iv[8] = {e->gx0, e->gy0, e->nx, e->ny, e->px0, e->px1, e->py0, e->py1};
            for (int q = 0; q < 8; q++) nm_buf_put_u32(out, p + 4 * (size_t)q, (uint32_t)iv[q]);
            nm_buf_put_u64(out, p + 32, e->offset);
            nm_buf_put_u32(out, p + 40, e->len);
            nm_buf_put_u32(out, p + 44, e->records);
        }
    }
    if (!rc && out->oom) rc = nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
done:
    if (tiles)
        for (uint32_t z = 0; z < zone_count; z++) nm_free(tiles[z]);
    nm_free(tiles);
    nm_free(counts);
    nm_free(dir_at);
    return rc;
}
