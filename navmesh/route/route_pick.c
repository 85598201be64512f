/* route_pick.c — the checks of 前置检查与选类 that read the grid: the region pick on the two
 * small patches (pickStartRec, pickDeckRec), the core distance of both ends on the whole zone
 * (coreAnchorPx, tiles decoded once) and a region's bounding box (类的包围盒). */
#include "route.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pick_key {
    int64_t d2;
    double dh;
} pick_key;

/* Smallest (squared cell distance, height difference) in the 65 x 65 box; scanning the patch in
 * cell order then stored order and replacing only on a strictly smaller key keeps the first. */
static bool pick(const nm_bgrd_out *p, int64_t cgx, int64_t cgy, double href, double band,
                 uint8_t need, uint8_t exclude, nm_pick_rec *out)
{
    if (!p || p->n == 0) return false;
    const int64_t w = (int64_t)p->gx1 - p->gx0, r = NM_PICK_RADIUS;
    bool found = false;
    pick_key best = {0, 0};
    int64_t best_cell = 0;
    for (size_t k = 0; k < p->n; k++) {
        const nm_grid_rec *rc = &p->recs[k];
        if ((rc->flags & need) != need || (rc->flags & exclude)) continue;
        int64_t gx = p->gx0 + rc->cell % w, gy = p->gy0 + rc->cell / w;
        int64_t dx = gx - cgx, dy = gy - cgy;
        if (dx < -r || dx > r || dy < -r || dy > r) continue;
        double dh = fabs((double)rc->h - href);
        if (dh > band) continue;
        pick_key key = {dx * dx + dy * dy, dh};
        bool better = !found || key.d2 < best.d2 || (key.d2 == best.d2 && key.dh < best.dh) ||
                      (key.d2 == best.d2 && key.dh == best.dh && rc->cell < best_cell);
        if (better) {
            found = true;
            best = key;
            best_cell = rc->cell;
            *out = (nm_pick_rec){(int32_t)gx, (int32_t)gy, rc->h, rc->rid, rc->flags};
        }
    }
    return found;
}

/* 选类: pickStartRec — Walk, no Ghost / Fill, within kClimb of the start height. */
bool nm_pick_start_rec(const nm_bgrd_out *patch, int64_t cgx, int64_t cgy, double h0,
                       nm_pick_rec *out)
{
    return pick(patch, cgx, cgy, h0, NM_kClimb, NM_GRID_WALK, NM_GRID_GHOST | NM_GRID_FILL, out);
}

/* 选类: pickDeckRec — Walk, no Fill, within kDeckBand of the declared deck. */
bool nm_pick_deck_rec(const nm_bgrd_out *patch, int64_t cgx, int64_t cgy, double deck_y,
                      nm_pick_rec *out)
{
    return pick(patch, cgx, cgy, deck_y, NM_kDeckBand, NM_GRID_WALK, NM_GRID_FILL, out);
}

static int64_t gcell(double px) { return (int64_t)floor(px / NM_kCS); }

/* 选类 steps 1-4. */
int nm_pick_region(const nm_bgrd_out *start_patch, double sx, double sy, double ssx, double ssy,
                   double h0, const nm_bgrd_out *goal_patch, double gx, double gy, bool deck_set,
                   double deck_y, nm_region_pick *out, nm_error *err)
{
    nm_pick_rec r;
    bool ok = nm_pick_start_rec(start_patch, gcell(sx), gcell(sy), h0, &r);
    if (!ok) ok = nm_pick_start_rec(start_patch, gcell(ssx), gcell(ssy), h0, &r);
    if (!ok)
        return nm_fail(err, NM_ERR_STATE,
                       "region pick: no walkable cell near the start (%.2f, %.2f) at height %.2f",
                       sx, sy, h0);
    out->region = r.rid;
    out->seed_gx = r.gx;
    out->seed_gy = r.gy;
    out->seed_h = r.h;
    out->deck_region = false;
    if (deck_set) {
        nm_pick_rec d;
        if (!nm_pick_deck_rec(goal_patch, gcell(gx), gcell(gy), deck_y, &d))
            return nm_fail(err, NM_ERR_STATE,
                           "region pick: no declared deck at %.2f near the goal (%.2f, %.2f)",
                           deck_y, gx, gy);
        out->region = d.rid; /* only the region: the seed stays on the start side */
        out->deck_region = true;
    }
    return NM_OK;
}

/* 端点到核心可走区的距离: both ends at once; the tiles meeting either box are decoded once (only
 * their flags: the check reads nothing else), in parallel, each chunk finding its own minima (a min reduction: the result does not depend on
 * the worker count). */
typedef struct core_job {
    const nm_bgrd *g;
    uint32_t zone;
    uint32_t *tiles;
    uint8_t *in;         /* per listed tile: bit e = meets end e's box */
    int64_t ex[2], ey[2];
    int64_t *best;       /* per listed tile: 2 minima */
    nm_error *errs;      /* per listed tile */
    const nm_bgrd_cache_tile *slots; /* the zone's cached tiles (read only), NULL = none */
} core_job;

static int core_tile(void *ctx, size_t chunk)
{
    core_job *j = (core_job *)ctx;
    const nm_bgrd_tile *t = &j->g->zones[j->zone].tiles[j->tiles[chunk]];
    nm_bgrd_scratch s;
    memset(&s, 0, sizeof s);
    /* a cached tile holds the records a decode would give */
    const nm_grid_rec *cached = j->slots ? j->slots[j->tiles[chunk]].recs : NULL;
    nm_grid_rec *own = cached ? NULL : (nm_grid_rec *)nm_malloc((size_t)t->records * sizeof *own);
    int rc = cached ? NM_OK
             : own  ? nm_bgrd_decode_tile_fields(j->g, j->zone, j->tiles[chunk], NM_BGRD_F_FLAGS, &s, own,
                                                 &j->errs[chunk])
                    : nm_fail(&j->errs[chunk], NM_ERR_NOMEM, "core distance: out of memory");
    const nm_grid_rec *buf = cached ? cached : own;
    int64_t *best = &j->best[2 * chunk];
    best[0] = best[1] = INT64_MAX;
    for (uint32_t k = 0; rc == NM_OK && k < t->records; k++) {
        if (!(buf[k].flags & NM_GRID_CORE)) continue;
        int64_t lx = buf[k].cell % t->nx, ly = buf[k].cell / t->nx;
        if (lx < t->px0 || lx > t->px1 || ly < t->py0 || ly > t->py1) continue; /* apron */
        int64_t cx = t->gx0 + lx, cy = t->gy0 + ly;
        for (int e = 0; e < 2; e++) {
            if (!(j->in[chunk] & (1u << e))) continue;
            int64_t d2 = (cx - j->ex[e]) * (cx - j->ex[e]) + (cy - j->ey[e]) * (cy - j->ey[e]);
            if (d2 < best[e]) best[e] = d2;
        }
    }
    nm_free(own);
    nm_bgrd_scratch_free(&s);
    return rc;
}

int nm_core_anchor_px(const nm_bgrd *g, uint32_t zone, double sx, double sy, double gx,
                      double gy, double *ds, double *dg, nm_error *err)
{
    return nm_core_anchor_px_cached(g, zone, NULL, sx, sy, gx, gy, ds, dg, err);
}

int nm_core_anchor_px_cached(const nm_bgrd *g, uint32_t zone, const nm_bgrd_cache *cache, double sx,
                             double sy, double gx, double gy, double *ds, double *dg, nm_error *err)
{
    const int64_t half = 2 * NM_PICK_RADIUS; /* 16 px = 64 cells */
    if (zone >= g->zone_count) return nm_fail(err, NM_ERR_ARG, "core distance: no zone %u", zone);
    const nm_bgrd_zone *z = &g->zones[zone];
    core_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.zone = zone;
    j.slots = cache && zone < cache->nzones ? cache->zone_tiles[zone] : NULL;
    j.ex[0] = gcell(sx);
    j.ex[1] = gcell(gx);
    j.ey[0] = gcell(sy);
    j.ey[1] = gcell(gy);
    /* 1. the non-empty tiles meeting either box, each listed once with the boxes it meets */
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t ti = 0; ti < z->tile_count; ti++) {
            const nm_bgrd_tile *t = &z->tiles[ti];
            if (t->records == 0) continue;
            int64_t ox0 = (int64_t)t->gx0 + t->px0, ox1 = (int64_t)t->gx0 + t->px1;
            int64_t oy0 = (int64_t)t->gy0 + t->py0, oy1 = (int64_t)t->gy0 + t->py1;
            uint8_t in = 0;
            for (int e = 0; e < 2; e++)
                if (!(ox1 < j.ex[e] - half || ox0 > j.ex[e] + half || oy1 < j.ey[e] - half || oy0 > j.ey[e] + half))
                    in |= (uint8_t)(1u << e);
            if (!in) continue;
            if (pass == 1) {
                j.tiles[n] = ti;
                j.in[n] = in;
            }
            n++;
        }
        if (pass == 0) {
            j.tiles = (uint32_t *)nm_calloc(n ? n : 1, sizeof(uint32_t));
            j.in = (uint8_t *)nm_calloc(n ? n : 1, 1);
            j.best = (int64_t *)nm_calloc(2 * (size_t)(n ? n : 1), sizeof(int64_t));
            j.errs = (nm_error *)nm_calloc(n ? n : 1, sizeof(nm_error));
            if (!j.tiles || !j.in || !j.best || !j.errs) {
                nm_free(j.tiles);
                nm_free(j.in);
                nm_free(j.best);
                nm_free(j.errs);
                return nm_fail(err, NM_ERR_NOMEM, "core distance: out of memory");
            }
            n = 0;
        }
    }
    /* 2-3. decode in parallel, per-tile minima, then the minimum over tiles */
    size_t recs = 0;
    for (uint32_t k = 0; k < n; k++) recs += z->tiles[j.tiles[k]].records;
    int workers = nm_workers_for(recs, 0);
    int rc = nm_parallel_chunks(n, workers, core_tile, &j);
    int64_t best[2] = {INT64_MAX, INT64_MAX};
    for (uint32_t k = 0; k < n; k++) {
        if (rc == NM_OK) {
            for (int e = 0; e < 2; e++)
                if (j.best[2 * k + e] < best[e]) best[e] = j.best[2 * k + e];
        } else if (j.errs[k].code) {
            if (err) *err = j.errs[k];
            break;
        }
    }
    nm_free(j.tiles);
    nm_free(j.in);
    nm_free(j.best);
    nm_free(j.errs);
    if (rc) return rc;
    /* none found: 16 px; 4. the caller compares with 8 px */
    *ds = best[0] == INT64_MAX ? 2 * NM_kSnapRadius : sqrt((double)best[0]) * NM_kCS;
    *dg = best[1] == INT64_MAX ? 2 * NM_kSnapRadius : sqrt((double)best[1]) * NM_kCS;
    return NM_OK;
}

/* 类的包围盒: a region's box is the least rectangle of its own cells over the zone's tiles. */
typedef struct bbox_tile {
    int64_t edge; /* cells from the tile's own rectangle to the outside of the tile extent of a
                     region it names (the least over those regions) */
    uint32_t ti;
} bbox_tile;

static int cmp_bbox_tile(const void *a, const void *b)
{
    const bbox_tile *x = (const bbox_tile *)a, *y = (const bbox_tile *)b;
    if (x->edge != y->edge) return x->edge < y->edge ? -1 : 1;
    return x->ti < y->ti ? -1 : x->ti > y->ti;
}

static nm_cell_rect own_rect(const nm_bgrd_tile *t)
{
    return (nm_cell_rect){(int64_t)t->gx0 + t->px0, (int64_t)t->gy0 + t->py0, (int64_t)t->gx0 + t->px1,
                          (int64_t)t->gy0 + t->py1};
}

/* The region index of rid among reg[0 .. n) (ascending), or n; *last caches the last answer
 * (a tile's records come in runs of one region). */
static uint32_t region_index(const uint32_t *reg, uint32_t n, uint32_t rid, uint32_t last[2])
{
    if (last[1] != UINT32_MAX && last[0] == rid) return last[1];
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (reg[mid] < rid) lo = mid + 1; else hi = mid;
    }
    const uint32_t k = lo < n && reg[lo] == rid ? lo : n;
    last[0] = rid;
    last[1] = k;
    return k;
}

/* One tile's records into the boxes of the regions reg names (its apron skipped). */
static void bboxes_add(const nm_bgrd_tile *t, const nm_grid_rec *rec, size_t n, const uint32_t *reg, uint32_t nreg,
                       nm_cell_rect *box)
{
    uint32_t last[2] = {0, UINT32_MAX};
    const nm_bnvf_keep own = {(uint32_t)t->nx, t->px0, (int64_t)t->px1 + 1, t->py0, (int64_t)t->py1 + 1};
    nm_cell_rows rows = {own.tnx, 0, 0};
    for (size_t k = 0; k < n; k++) {
        if (!nm_bnvf_keeps(&own, &rows, (uint32_t)rec[k].cell)) continue; /* apron */
        const int64_t lx = (uint32_t)rec[k].cell - rows.row0, ly = rows.row;
        const uint32_t i = region_index(reg, nreg, rec[k].rid, last);
        if (i == nreg) continue;
        nm_cell_rect *b = &box[i];
        const int64_t cx = t->gx0 + lx, cy = t->gy0 + ly;
        if (nm_cell_rect_empty(b)) {
            *b = (nm_cell_rect){cx, cy, cx, cy};
            continue;
        }
        if (cx < b->x0) b->x0 = cx;
        if (cx > b->x1) b->x1 = cx;
        if (cy < b->y0) b->y0 = cy;
        if (cy > b->y1) b->y1 = cy;
    }
}

/* b grown to hold a (either may be empty). */
static void rect_unite(nm_cell_rect *b, const nm_cell_rect *a)
{
    if (nm_cell_rect_empty(a)) return;
    if (nm_cell_rect_empty(b)) {
        *b = *a;
        return;
    }
    if (a->x0 < b->x0) b->x0 = a->x0;
    if (a->y0 < b->y0) b->y0 = a->y0;
    if (a->x1 > b->x1) b->x1 = a->x1;
    if (a->y1 > b->y1) b->y1 = a->y1;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* 1. Every tile's dictionary, those of region `only` (UINT32_MAX: all): (*dict)[dict_at[t] ..
 * dict_at[t + 1]) for tile t, *nd entries in all (dict_at: tile_count + 1 entries). */
static int dictionaries(const nm_bgrd *g, uint32_t zone, uint32_t only, nm_bgrd_scratch *s, uint32_t *dict_at,
                        uint32_t **dict, size_t *nd, nm_error *err)
{
    const nm_bgrd_zone *z = &g->zones[zone];
    uint32_t *rids = NULL;
    size_t cap = 0, dcap = 0;
    int rc = NM_OK;
    *nd = 0;
    for (uint32_t ti = 0; rc == NM_OK && ti < z->tile_count; ti++) {
        const nm_bgrd_tile *t = &z->tiles[ti];
        dict_at[ti] = (uint32_t)*nd;
        if (t->records == 0) continue;
        if (cap < t->records) {
            uint32_t *nrids = (uint32_t *)nm_realloc(rids, (size_t)t->records * sizeof *nrids);
            if (!nrids) {
                rc = nm_fail(err, NM_ERR_NOMEM, "region boxes: out of memory");
                break;
            }
            rids = nrids;
            cap = t->records;
        }
        uint32_t n = 0;
        if ((rc = nm_bgrd_tile_regions(g, zone, ti, s, rids, &n, err))) break;
        if (*nd + n > dcap) {
            const size_t ncap = (*nd + n) * 2;
            uint32_t *nd2 = (uint32_t *)nm_realloc(*dict, ncap * sizeof *nd2);
            if (!nd2) {
                rc = nm_fail(err, NM_ERR_NOMEM, "region boxes: out of memory");
                break;
            }
            *dict = nd2;
            dcap = ncap;
        }
        for (uint32_t k = 0; k < n; k++)
            if (only == UINT32_MAX || rids[k] == only) (*dict)[(*nd)++] = rids[k];
    }
    dict_at[z->tile_count] = (uint32_t)*nd;
    nm_free(rids);
    return rc;
}

/* Step 4 of region_boxes: the candidate tiles taken in order by the workers. A tile is decoded
 * while its own rectangle can widen the box of a region it names, and its records go into the
 * worker's own boxes, then into the shared ones: a box is a min / max, so neither the order nor
 * the tiles left out (inside every box they could widen) change it. */
typedef struct bbox_worker {
    nm_bgrd_scratch s;
    nm_grid_rec *buf;
    size_t cap;
    nm_cell_rect *box; /* [nreg], empty but for the tile being added */
} bbox_worker;

typedef struct bbox_job {
    const nm_bgrd *g;
    uint32_t zone;
    const bbox_tile *cand;
    const uint32_t *dict, *dict_at, *reg;
    uint32_t nreg;
    nm_cell_rect *box; /* the boxes, behind mu */
    pthread_mutex_t mu;
    size_t err_at; /* the first candidate that failed, and its error */
    nm_error err;
    bbox_worker w[NM_WORKER_LIMIT];
} bbox_job;

static int bbox_tile_add(void *ctx, size_t k, int worker)
{
    bbox_job *j = (bbox_job *)ctx;
    bbox_worker *bw = &j->w[worker];
    const uint32_t ti = j->cand[k].ti, q0 = j->dict_at[ti], q1 = j->dict_at[ti + 1];
    const nm_bgrd_tile *t = &j->g->zones[j->zone].tiles[ti];
    const nm_cell_rect o = own_rect(t);
    bool widens = false; /* the own rectangle outside the box of a region the tile names */
    pthread_mutex_lock(&j->mu);
    for (uint32_t q = q0; q < q1 && !widens; q++)
        widens = nm_cell_rect_empty(&j->box[j->dict[q]]) || !nm_cell_rect_contains(&j->box[j->dict[q]], &o);
    pthread_mutex_unlock(&j->mu);
    if (!widens) return NM_OK;
    nm_error e = {0};
    int rc = NM_OK;
    if (!bw->box && !(bw->box = (nm_cell_rect *)nm_malloc((size_t)j->nreg * sizeof *bw->box)))
        rc = nm_fail(&e, NM_ERR_NOMEM, "region boxes: out of memory");
    else if (bw->cap < t->records) {
        nm_grid_rec *nb = (nm_grid_rec *)nm_realloc(bw->buf, (size_t)t->records * sizeof *nb);
        if (nb) {
            bw->buf = nb;
            bw->cap = t->records;
        } else {
            rc = nm_fail(&e, NM_ERR_NOMEM, "region boxes: out of memory");
        }
    }
    if (rc == NM_OK) rc = nm_bgrd_decode_tile_fields(j->g, j->zone, ti, NM_BGRD_F_REGION, &bw->s, bw->buf, &e);
    if (rc == NM_OK) { /* the tile's records are of the regions its dictionary names */
        for (uint32_t q = q0; q < q1; q++) bw->box[j->dict[q]] = (nm_cell_rect){0, 0, -1, -1};
        bboxes_add(t, bw->buf, t->records, j->reg, j->nreg, bw->box);
    }
    pthread_mutex_lock(&j->mu);
    if (rc == NM_OK) {
        for (uint32_t q = q0; q < q1; q++) rect_unite(&j->box[j->dict[q]], &bw->box[j->dict[q]]);
    } else if (k < j->err_at) {
        j->err_at = k;
        j->err = e;
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

static int bbox_decode(bbox_job *j, uint32_t nc, int workers, nm_error *err)
{
    int nw = workers;
    if (nw <= 0) { /* the machine's cores, for enough records */
        size_t records = 0;
        for (uint32_t k = 0; k < nc; k++) records += j->g->zones[j->zone].tiles[j->cand[k].ti].records;
        nw = nm_workers_for(records, 0);
    }
    pthread_mutex_init(&j->mu, NULL);
    j->err_at = SIZE_MAX;
    int rc = nm_parallel_claim(nc, NULL, nw, bbox_tile_add, j);
    if (rc != NM_OK && nw > 1) {
        /* A tile failed. Workers decode every tile the one-thread order decodes (a box is never
         * larger when a tile is judged beside others than in that order) and maybe more, so that
         * order says whether the boxes fail, and with which tile's error: asked again, from empty
         * boxes, a bad pack fails the same way on any worker count. */
        for (uint32_t r = 0; r < j->nreg; r++) j->box[r] = (nm_cell_rect){0, 0, -1, -1};
        j->err_at = SIZE_MAX;
        rc = nm_parallel_claim(nc, NULL, 1, bbox_tile_add, j);
    }
    if (rc != NM_OK && j->err_at == SIZE_MAX) /* no candidate failed: the workers' own table */
        rc = nm_fail(err, rc, "region boxes: out of memory");
    else if (rc != NM_OK && err)
        *err = j->err;
    for (int w = 0; w < NM_WORKER_LIMIT; w++) {
        nm_bgrd_scratch_free(&j->w[w].s);
        nm_free(j->w[w].buf);
        nm_free(j->w[w].box);
    }
    pthread_mutex_destroy(&j->mu);
    return rc;
}

/* The boxes of region `only` (UINT32_MAX: of every region the tiles' dictionaries name):
 * (*reg)[k] ascending and (*box)[k], *nreg of them. Sized by the regions named, not by the zone's
 * declared global_regions. The tiles no view holds are taken outer ones first (by the least
 * distance to the outside of the tile extent of a region they name), and one is decoded, its
 * region field only, while its own rectangle can still widen the box of a region it names: the
 * inner tiles, inside the boxes by then, are never decoded. Boxes are a min / max, so the order
 * does not change them. */
static int region_boxes(const nm_bgrd *g, uint32_t zone, const nm_bgrd_tile_view *views, uint32_t only,
                        int workers, uint32_t **reg_out, nm_cell_rect **box_out, uint32_t *nreg_out,
                        nm_error *err)
{
    const nm_bgrd_zone *z = &g->zones[zone];
    *reg_out = NULL;
    *box_out = NULL;
    *nreg_out = 0;
    nm_bgrd_scratch s;
    memset(&s, 0, sizeof s);
    uint32_t *dict = NULL, *reg = NULL, nc = 0, nreg = 0;
    nm_cell_rect *ext = NULL, *box = NULL;
    size_t nd = 0;
    bbox_tile *cand = (bbox_tile *)nm_malloc(((size_t)z->tile_count + 1) * sizeof *cand);
    uint32_t *dict_at = (uint32_t *)nm_malloc(((size_t)z->tile_count + 1) * sizeof *dict_at);
    int rc = cand && dict_at ? dictionaries(g, zone, only, &s, dict_at, &dict, &nd, err)
                             : nm_fail(err, NM_ERR_NOMEM, "region boxes: out of memory");
    /* 2. the regions named, and each dictionary entry as its region's index */
    if (rc == NM_OK) {
        reg = (uint32_t *)nm_malloc((nd ? nd : 1) * sizeof *reg);
        ext = (nm_cell_rect *)nm_malloc((nd ? nd : 1) * sizeof *ext);
        box = (nm_cell_rect *)nm_malloc((nd ? nd : 1) * sizeof *box);
        if (!reg || !ext || !box) rc = nm_fail(err, NM_ERR_NOMEM, "region boxes: out of memory");
    }
    if (rc == NM_OK && nd) {
        memcpy(reg, dict, nd * sizeof *reg);
        qsort(reg, nd, sizeof *reg, cmp_u32);
        for (size_t k = 0; k < nd; k++)
            if (nreg == 0 || reg[k] != reg[nreg - 1]) reg[nreg++] = reg[k];
        uint32_t last[2] = {0, UINT32_MAX};
        for (size_t k = 0; k < nd; k++) dict[k] = region_index(reg, nreg, dict[k], last);
    }
    for (uint32_t r = 0; rc == NM_OK && r < nreg; r++) {
        ext[r] = box[r] = (nm_cell_rect){0, 0, -1, -1};
    }
    /* 3. the tiles held by views go in whole; the others are candidates, with the regions' tile
     * extents */
    for (uint32_t ti = 0; rc == NM_OK && ti < z->tile_count; ti++) {
        const nm_bgrd_tile *t = &z->tiles[ti];
        if (views && views[ti].recs) {
            bboxes_add(t, views[ti].recs, views[ti].n, reg, nreg, box);
            continue;
        }
        if (dict_at[ti] == dict_at[ti + 1]) continue;
        const nm_cell_rect o = own_rect(t);
        for (uint32_t q = dict_at[ti]; q < dict_at[ti + 1]; q++) rect_unite(&ext[dict[q]], &o);
        cand[nc++] = (bbox_tile){0, ti};
    }
    for (uint32_t k = 0; rc == NM_OK && k < nc; k++) {
        const uint32_t ti = cand[k].ti;
        const nm_cell_rect o = own_rect(&z->tiles[ti]);
        int64_t d = INT64_MAX;
        for (uint32_t q = dict_at[ti]; q < dict_at[ti + 1]; q++) {
            const nm_cell_rect *e = &ext[dict[q]];
            const int64_t m[4] = {o.x0 - e->x0, e->x1 - o.x1, o.y0 - e->y0, e->y1 - o.y1};
            for (int i = 0; i < 4; i++) d = m[i] < d ? m[i] : d;
        }
        cand[k].edge = d;
    }
    if (rc == NM_OK) qsort(cand, nc, sizeof *cand, cmp_bbox_tile);
    /* 4. outer tiles first, each while it can widen a box, on the workers */
    if (rc == NM_OK && nc) {
        bbox_job j = {g, zone, cand, dict, dict_at, reg, nreg, box};
        rc = bbox_decode(&j, nc, workers, err);
    }
    if (rc == NM_OK) {
        *reg_out = reg;
        *box_out = box;
        *nreg_out = nreg;
    } else {
        nm_free(reg);
        nm_free(box);
    }
    nm_free(cand);
    nm_free(dict_at);
    nm_free(ext);
    nm_free(dict);
    nm_bgrd_scratch_free(&s);
    return rc;
}

int nm_region_bboxes(const nm_bgrd *g, uint32_t zone, const nm_bgrd_tile_view *views, int workers,
                     uint32_t **rids, nm_cell_rect **boxes, uint32_t *n, nm_error *err)
{
    *rids = NULL;
    *boxes = NULL;
    *n = 0;
    if (zone >= g->zone_count) return nm_fail(err, NM_ERR_ARG, "region boxes: no zone %u", zone);
    return region_boxes(g, zone, views, UINT32_MAX, workers, rids, boxes, n, err);
}

int nm_region_bbox(const nm_bgrd *g, uint32_t zone, uint32_t rid, int workers, nm_cell_rect *out,
                   nm_error *err)
{
    *out = (nm_cell_rect){0, 0, -1, -1};
    if (zone >= g->zone_count) return nm_fail(err, NM_ERR_ARG, "region bbox: no zone %u", zone);
    uint32_t *reg, n;
    nm_cell_rect *box;
    const int rc = region_boxes(g, zone, NULL, rid, workers, &reg, &box, &n, err);
    if (rc == NM_OK && n == 1) *out = box[0];
    nm_free(reg);
    nm_free(box);
    return rc;
}
