/* route_window.c — routeWindow's searches for one leg in one tier's window (两段搜索): the walk
 * mask and the snap anchors, the shared solver solve with its fallback order, the baseline, the
 * endpoint and link access chains, the topology layer, the corridor and open-area threshold, the
 * geometry layer (Lazy Theta*), the end checks (收尾检查) and the gap location of a failed
 * baseline (诊断). Escalation (换到下一档) and leg failure are results, not errors. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime for the stage times */
#include "search/search_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* limit1 / limit2 are computed by the planner (nm_route_limit1/2 in route/route.h) and
 * arrive in the request. */

/* ---- the leg --------------------------------------------------------------------------------- */
typedef struct leg {
    nm_sctx s;
    const nm_search_request *req;
    nm_search_result *out;
    nm_ends e;
    double ds, dg;              /* snap distances, px */
    bool decks;                 /* a declared start or goal deck */
    int64_t rsi, rsj, rgi, rgj; /* raw endpoint cells (trunc) */
    double give_up;
    double t0;              /* entry time, ms */
    int base_level, topo_level; /* the solves' levels (0 walk, 1 core, 2 cell) */
    /* arrays handed from step to step (leg_free frees what is left) */
    uint8_t *chan0;           /* [ncell] open channel: clearance >= kClrPref */
    uint8_t *limw;            /* [ncell] the topology layer's channel */
    uint8_t *open;            /* [nlinks] links whose access chains are open */
    nm_access_work aw;        /* access chains' work arrays, until the topology layer ends */
    const uint8_t *topo_lim;  /* the topology solve's lim: limw, or NULL (whole window) */
    uint8_t *limg, *solidc;   /* [ncell] the corridor and the open area of the geometry layer */
} leg;

typedef struct solve_res {
    int found; /* 1 = path */
    int esc;   /* NM_SEARCH_ESC_* (small windows) */
    bool unlinked;
    int level;    /* 0 walk, 1 core, 2 cell */
    uint32_t *sp; /* span chain (levels 0, 1) or cells (level 2) */
    uint8_t *via;
    uint32_t n;
    double cost;
} solve_res;

static void solve_res_free(solve_res *r)
{
    nm_free(r->sp);
    nm_free(r->via);
    memset(r, 0, sizeof *r);
}

static int64_t trunc_cell(double p, double o)
{
    return (int64_t)((p - o) / NM_kCS); /* C cast: toward 0, as routeWindow's endpoint cells */
}

/* nearestCell: the mask cell with the smallest squared cell distance, row-major first on ties.
 * Rows are visited outward from the raw cell's row, and in each row only the columns that can
 * tie the best so far: the same cell as a whole-window scan, without reading the whole window. */
static bool nearest_cell(const leg *L, const nm_mask *m, bool usable, int64_t ri, int64_t rj,
                         uint32_t *cell, double *d_px)
{
    const nm_sctx *s = &L->s;
    int64_t best = INT64_MAX;
    uint32_t bc = NM_SEARCH_NONE;
    const int64_t ny = s->ny, nx = s->nx;
    const int64_t up = rj < 0 ? -rj : rj, down = ny - 1 - rj < 0 ? rj - ny + 1 : ny - 1 - rj;
    const int64_t reach = up > down ? up : down; /* the farthest row */
    for (int64_t dy = 0; dy <= reach && dy * dy <= best; dy++)
        for (int side = 0; side < (dy ? 2 : 1); side++) {
            const int64_t j = side ? rj + dy : rj - dy;
            if (j < 0 || j >= ny)
                continue;
            int64_t i0 = 0, i1 = nx - 1; /* the columns with dx^2 <= best - dy^2 */
            if (best != INT64_MAX) {
                const int64_t room = best - dy * dy;
                int64_t r = (int64_t)sqrt((double)room);
                while (r * r > room)
                    r--;
                while ((r + 1) * (r + 1) <= room)
                    r++;
                i0 = ri - r > 0 ? ri - r : 0;
                i1 = ri + r < nx - 1 ? ri + r : nx - 1;
            }
            for (int64_t i = i0; i <= i1; i++) {
                const uint32_t c = (uint32_t)(j * nx + i);
                if (!nm_mask_in(m, c))
                    continue;
                const int64_t dx = i - ri, d2 = dx * dx + dy * dy;
                /* the span lookup only for a cell that would win */
                if ((d2 < best || (d2 == best && c < bc)) &&
                    (!usable || nm_search_cell_usable(s->w, c))) {
                    best = d2;
                    bc = c;
                }
            }
        }
    if (bc == NM_SEARCH_NONE)
        return false;
    *cell = bc;
    *d_px = sqrt((double)best) * NM_kCS;
    return true;
}

/* Declared deck: the usable span within kDeckBand of the deck with the smallest (squared cell
 * distance, height difference). */
static bool nearest_deck_span(const leg *L, int64_t ri, int64_t rj, double deck, uint32_t *span,
                              double *d_px)
{
    const nm_sctx *s = &L->s;
    int64_t best = INT64_MAX;
    double bdh = INFINITY;
    uint32_t bk = NM_SEARCH_NONE;
    for (uint32_t k = 0; k < s->nspans; k++) {
        uint32_t c = s->t->sp_cell[k];
        double dh = fabs((double)s->t->sp_h[k] - deck);
        if (!(s->w->sp_bits[k] & NM_SP_REACH) || !s->walk[c] || dh > NM_kDeckBand)
            continue;
        int64_t dx = (int64_t)(c % s->nx) - ri, dy = (int64_t)(c / s->nx) - rj;
        int64_t d2 = dx * dx + dy * dy;
        if (d2 < best || (d2 == best && dh < bdh)) {
            best = d2;
            bdh = dh;
            bk = k;
        }
    }
    if (bk == NM_SEARCH_NONE)
        return false;
    *span = bk;
    *d_px = sqrt((double)best) * NM_kCS;
    return true;
}

static int escalate(nm_search_result *o, int reason, const char *what)
{
    o->status = NM_SEARCH_ESCALATE;
    o->reason = reason;
    snprintf(o->message, sizeof o->message, "search: escalate: %s", what);
    return NM_OK;
}

/* 连通检查: false (with r marked unlinked) when the ends are not linked on core∧lim. */
static bool linked_check(leg *L, const uint8_t *lim, solve_res *r)
{
    nm_mask m = {L->s.w->core, lim};
    if (nm_search_linked(&L->s, &m, L->e.start_cell, L->e.goal_cell))
        return true;
    r->unlinked = true;
    r->esc = L->req->small ? NM_SEARCH_ESC_UNLINKED : 0;
    return false;
}

/* solve()'s SpanAstar on walk∧lim (core retried where the walk mask refuses, without sight). */
static nm_span_search walk_query(const leg *L, const uint8_t *lim, const nm_search_price *price,
                                 nm_search_los_fn los, const uint8_t *solidc, double give_up)
{
    const bool small = L->req->small;
    return (nm_span_search){{L->s.walk, lim}, *price, los, L->req->los_ctx, solidc,
                            small ? give_up : 0.0, small || los ? NULL : L->s.w->core};
}

/* A bound for q's SpanAstar (no sight, no give-up cost; a speed-up, not one of the article's
 * steps) from a quick path: SpanAstar on the same mask with its heuristic weighted by
 * NM_SEARCH_BOUND_WEIGHT, which finds a path of cost U in few pops. Why the bound U + 3 S +
 * NM_SEARCH_BOUND_MARGIN (S: the link slack) leaves the solve's path and cost C as they are: a
 * step costs at least its octile length (prices >= 1, SpanAstar's own diagonal), so a path costs
 * at least its octile length less S. The solve's heuristic overestimates by at most S (links
 * cheaper than their length), so C <= U + S. A span x of the path has g(x) + octile(x) <= C + S,
 * below the bound: it is expanded. A span p whose expansion is skipped has g(p) + octile(p)
 * above the bound, so an offer reaching x through p exceeds g(x) by more than
 * NM_SEARCH_BOUND_MARGIN: never x's best, nor within NM_SEARCH_EPS of it. Spans popped in both
 * solves with the same g pop in the same relative order ((f, key) is a strict order and f
 * depends on g alone), so the path's spans get their g and parent from the same offers and the
 * goal pops with the same cost. Spans off the path may end with a larger g or not pop at all;
 * nm_search_path_stands, which reads them, trusts only those well under the bound. A quick search
 * past NM_SEARCH_BOUND_POPS pops a cell of the ends' distance, or one that fails, leaves q
 * unbounded (the quick paths that paid took 1-6 pops a cell; those that flood the window's
 * pockets find no U close enough to pay for them). Large world, leg 8 of `--random 20 --seed 7`
 * (8.9 M cells): each solve 1.1-1.2 s -> 0.75-0.9 s (tools/navbench/README.md, forty-ninth
 * session). */
static void find_bound(leg *L, nm_span_search *q)
{
    nm_sctx *s = &L->s;
    if (q->los || q->give_up > 0.0)
        return;
    nm_span_search b = *q;
    b.weight = NM_SEARCH_BOUND_WEIGHT;
    const double len = nm_search_cell_dist(s, L->e.start_cell, L->e.goal_cell);
    b.max_pops = (uint32_t)fmin(NM_SEARCH_BOUND_POPS * len + 1024.0, (double)s->nspans);
    b.wider = NULL;
    uint32_t *sp = NULL, n = 0;
    uint8_t *via = NULL;
    double u = 0.0;
    nm_error e = {0}; /* a failure here leaves the solve unbounded; the solve meets it again */
    const int rc = nm_search_span_astar(s, &b, &L->e, &sp, &via, &n, &u, &e);
    nm_free(sp);
    nm_free(via);
    if (rc == 1)
        q->bound = u + 3.0 * nm_search_link_slack(s) + NM_SEARCH_BOUND_MARGIN;
}

/* 求解器 solve: linked check, SpanAstar on walk∧lim (with a bound when one is found), core∧lim,
 * the cost check, the cell-level fallback. */
static int solve(leg *L, const uint8_t *lim, const nm_search_price *price, nm_search_los_fn los,
                 const uint8_t *solidc, bool allow_cell, bool check_linked, double give_up,
                 solve_res *r, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    const bool small = L->req->small;
    memset(r, 0, sizeof *r);
    /* 1. 连通检查 on core∧lim (the widest of the two tries); the baseline skips it. A flood costs
     * a few tens of ns a cell, while a SpanAstar that finds the ends unlinked pops every span it
     * reaches (4.2 M pops on a 4.5 M-cell large-world window, twice a leg before the whole-window
     * retry). The reach check also heeds corners and step bits: when it does not reach the goal
     * cell the searches below cannot succeed (none). It goes first, within NM_SEARCH_REACH_FIRST
     * cells: its greedy walk reaches a reachable goal after a few thousand (median 1.8 K on the
     * demo and large legs), and a reached goal proves the ends linked, so the linked check's
     * flood (most of the component) is left out; the budget bounds what a refusal pays twice. */
    bool none = false;
    if (check_linked) {
        const nm_mask m = {w->core, lim};
        int reach = nm_search_reach(s, &m, L->e.start_cell, L->e.goal_cell, NM_SEARCH_REACH_FIRST);
        if (reach != 1) {
            if (!linked_check(L, lim, r))
                return NM_OK;
            if (reach < 0)
                reach = nm_search_reach(s, &m, L->e.start_cell, L->e.goal_cell, 0);
            none = !reach;
        }
    }
    /* 2. both anchors in one cell: the start span, or the declared goal deck's span */
    if (L->e.start_cell == L->e.goal_cell) {
        r->sp = nm_malloc(sizeof *r->sp);
        r->via = nm_calloc(1, 1);
        if (!r->sp || !r->via) {
            solve_res_free(r);
            return nm_fail(err, NM_ERR_NOMEM, "search: solve: out of memory");
        }
        r->sp[0] = L->req->goal_deck_set ? L->e.goals[0] : L->e.start_span;
        r->n = 1;
        r->found = 1;
        return NM_OK;
    }
    nm_span_search q = walk_query(L, lim, price, los, solidc, give_up);
    if (!none)
        find_bound(L, &q);
    /* proved unreachable: the answer a SpanAstar popping every span it reaches would give */
    int rc = none ? 0 : nm_search_span_astar(s, &q, &L->e, &r->sp, &r->via, &r->n, &r->cost, err);
    if (rc < 0)
        return rc;
    if (rc != 1) {
        if (small) { /* 3. the small window's no-path may be cut by the window */
            r->esc = NM_SEARCH_ESC_WALK_NO_PATH;
            return NM_OK;
        }
        /* an exhausted search that refused no core cell: the core retry would pop the same spans
         * and fail the same way, so it is not run */
        const bool same = none || (rc == 0 && q.wider && !s->wider_cut);
        q.mask.a = w->core;
        q.give_up = 0.0;
        q.wider = NULL;
        q.bound = 0.0; /* a found bound means a path on walk∧lim: this retry does not run */
        if (!same)
            rc = nm_search_span_astar(s, &q, &L->e, &r->sp, &r->via, &r->n, &r->cost, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            r->level = 1;
            L->out->warnings |= NM_SEARCH_WARN_CORE;
        }
    }
    if (rc == 1) {
        r->found = 1;
        /* 4. 检查代价 against the trust region */
        if (small && r->cost + (L->ds + L->dg) / NM_kCS >= L->req->limit2) {
            r->found = 0;
            r->esc = NM_SEARCH_ESC_COST_BOUND;
        }
        return NM_OK;
    }
    /* 5. 格级回退: the baseline only, no declared decks, not in small windows */
    if (!allow_cell || L->decks)
        return NM_OK;
    if (small) {
        r->esc = NM_SEARCH_ESC_CELL_FALLBACK;
        return NM_OK;
    }
    nm_mask m = {s->walk, lim};
    uint32_t sa, ga;
    double ds, dg;
    if (!nearest_cell(L, &m, false, L->rsi, L->rsj, &sa, &ds) ||
        !nearest_cell(L, &m, false, L->rgi, L->rgj, &ga, &dg))
        return NM_OK;
    L->e.start_cell = sa;
    L->e.goal_cell = ga;
    L->ds = ds;
    L->dg = dg;
    for (int pass = 0; pass < 2; pass++) {
        rc = nm_search_cost_astar(s, &m, price, sa, ga, &r->sp, &r->via, &r->n, &r->cost, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            r->found = 1;
            r->level = 2;
            L->out->warnings |= NM_SEARCH_WARN_CELL;
            return NM_OK;
        }
        m.a = w->core;
    }
    return NM_OK;
}

/* A solve result as a cell path. */
static int to_path(const leg *L, const solve_res *r, nm_search_path *p, nm_error *err)
{
    if (r->level < 2)
        return nm_search_expand_chain(&L->s, r->sp, r->via, r->n, p, err);
    int rc = nm_search_path_alloc(p, r->n, err);
    if (rc)
        return rc;
    for (uint32_t k = 0; k < r->n; k++) {
        uint32_t f, n = nm_span_cell_spans(L->s.t, r->sp[k], &f);
        p->cell[k] = r->sp[k];
        p->span[k] = UINT32_MAX; /* the cell level does not pick layers */
        p->h[k] = n ? L->s.t->sp_h[f] : NAN;
        p->link[k] = r->via[k];
    }
    return NM_OK;
}

static int copy_path(nm_search_path *dst, const nm_search_path *src, nm_error *err)
{
    int rc = nm_search_path_alloc(dst, src->n, err);
    if (rc)
        return rc;
    memcpy(dst->cell, src->cell, (size_t)src->n * sizeof *dst->cell);
    memcpy(dst->span, src->span, (size_t)src->n * sizeof *dst->span);
    memcpy(dst->h, src->h, (size_t)src->n * sizeof *dst->h);
    memcpy(dst->link, src->link, src->n);
    return NM_OK;
}

/* Marks the cells of a chain in the mask. */
static void mark_cells(uint8_t *mask, const uint32_t *cells, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        mask[cells[k]] = 1;
}

/* linkChains for the link ends flagged in `open` (both ends of each link). */
static int link_chains(leg *L, nm_access_work *aw, const uint8_t *chan0, const uint8_t *open,
                       uint8_t *limw, nm_error *err)
{
    const nm_window *w = L->s.w;
    for (uint32_t l = 0; l < w->nlinks; l++) {
        if (!open[l])
            continue;
        L->out->link_open[l] = 1;
        uint32_t ends[2] = {w->links[l].from_cell, w->links[l].to_cell};
        for (int e = 0; e < 2; e++) {
            uint32_t *cells, n;
            int32_t cost;
            int rc = nm_search_access_run(aw, w, L->s.walk, chan0, ends[e],
                                          NM_kLinkChainCells * 100, &cells, &n, &cost, err);
            if (rc < 0)
                return rc;
            if (rc == 1) /* beyond 64 cells the link simply gets no chain */
                mark_cells(limw, cells, n);
            nm_free(cells);
        }
    }
    return NM_OK;
}

/* Ledge drops the baseline used get access chains like its off-mesh links (the article treats
 * both edges alike in the searches: one-way, parent pointer straight to the landing). A take-off
 * row and its landing lie on walls (the ledge edge, the foot of the cliff: sealed clearance 0),
 * outside the open channel and off the medial axis, so without this the topology layer could
 * never take a drop while another way down exists. The chain is the baseline's own span path on
 * each side of the drop, up to the first chan0 cell or kLinkChainCells cells: it stays on its
 * level, which a planar access run from the take-off cell would not. */
static void drop_chains(const nm_search_path *base, const uint8_t *chan0, uint8_t *limw)
{
    for (uint32_t k = 1; base->h && k < base->n; k++) {
        if (base->link[k] == 1 || !((double)base->h[k - 1] - (double)base->h[k] > NM_kClimb))
            continue;
        for (uint32_t j = k, m = 0; j-- > 0 && m <= NM_kLinkChainCells; m++) {
            limw[base->cell[j]] = 1;
            if (chan0[base->cell[j]])
                break;
        }
        for (uint32_t j = k, m = 0; j < base->n && m <= NM_kLinkChainCells; j++, m++) {
            limw[base->cell[j]] = 1;
            if (chan0[base->cell[j]])
                break;
        }
    }
}

static int chain_out(const leg *L, const solve_res *r, nm_search_chain *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    size_t n = r->n ? r->n : 1;
    c->x = nm_malloc(n * sizeof *c->x);
    c->y = nm_malloc(n * sizeof *c->y);
    c->h = nm_malloc(n * sizeof *c->h);
    c->span = nm_malloc(n * sizeof *c->span);
    c->link = nm_malloc(n);
    if (!c->x || !c->y || !c->h || !c->span || !c->link)
        return nm_fail(err, NM_ERR_NOMEM, "search: parent chain: out of memory");
    const nm_window *w = L->s.w;
    for (uint32_t k = 0; k < r->n; k++) {
        uint32_t cell = L->s.t->sp_cell[r->sp[k]];
        c->x[k] = w->win.x0 + ((double)(cell % L->s.nx) + 0.5) * NM_kCS;
        c->y[k] = w->win.y0 + ((double)(cell / L->s.nx) + 0.5) * NM_kCS;
        c->h[k] = L->s.t->sp_h[r->sp[k]];
        c->span[k] = r->sp[k];
        c->link[k] = r->via[k] == 1;
    }
    c->n = r->n;
    return NM_OK;
}

/* A cell in the trust zone's outer ring (within m of a window side that is not on the region
 * rectangle: region_sides bits 0 x0, 1 y0, 2 x1, 3 y1). */
static bool in_outer_ring(unsigned region_sides, int64_t i, int64_t j, int64_t nx, int64_t ny, int64_t m)
{
    return (!(region_sides & 1u) && i < m) || (!(region_sides & 2u) && j < m) ||
           (!(region_sides & 4u) && i >= nx - m) || (!(region_sides & 8u) && j >= ny - m);
}

/* The corridor's rows, shared between the thread running NearestSource and one beside it. */
typedef struct corridor_job {
    const leg *L;
    const uint8_t *lim, *seeds;
    const int32_t *src;
    uint8_t *limg, *solidc;
    nm_grid_bands rows;    /* NearestSource's final rows, handed out */
    int edge[2];           /* corridor_cells' flag, per thread */
} corridor_job;

/* The corridor's cells over rows [j0, j1): the band (the nearest seed's clearance around it) ∧
 * lim into limg, the open area into solidc. Reads each cell's own source only, so rows can be
 * made as NearestSource finishes them. Returns 1 when a small window's band cell is in the outer
 * ring. */
static int corridor_cells(const corridor_job *cj, uint32_t j0, uint32_t j1)
{
    const leg *L = cj->L;
    const nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    const int64_t m = NM_kTrustMargin;
    const nm_grid_divider row = nm_grid_divider_of(s->nx); /* no division a cell */
    int edge = 0;
    for (uint32_t j = j0; j < j1; j++)
        for (uint32_t i = 0, c = j * s->nx; i < s->nx; i++, c++) {
            double hw = 0.0; /* corridor half-width: the nearest seed's clearance */
            bool in = cj->seeds[c] != 0;
            const int32_t sc = cj->src[c];
            if (sc >= 0) {
                hw = w->dist[sc];
                if (!in) { /* the seed's own cells need no distance */
                    const uint32_t sj = nm_grid_div(&row, (uint32_t)sc), si = (uint32_t)sc - sj * s->nx;
                    double ex = ((double)i - (double)si) * NM_kCS;
                    double ey = ((double)j - (double)sj) * NM_kCS;
                    in = ex * ex + ey * ey <= hw * hw;
                }
            }
            double thr = NM_kClrPref + NM_kGeoMargin;
            if (NM_kChordFrac * hw > thr)
                thr = NM_kChordFrac * hw;
            cj->solidc[c] = (uint8_t)(w->dist[c] >= thr);
            cj->limg[c] = (uint8_t)(in && (!cj->lim || cj->lim[c]));
            if (in && L->req->small && in_outer_ring(L->req->region_sides, i, j, s->nx, s->ny, m))
                edge = 1;
        }
    return edge;
}

/* Takes bands of final rows until every row is taken. The thread beside NearestSource waits for
 * rows (the sweeps' first pass finishes none); the one that ran it finds every row final. */
static void corridor_share(corridor_job *cj, int who)
{
    int32_t j0, j1;
    while (nm_grid_bands_take(&cj->rows, &j0, &j1))
        cj->edge[who] |= corridor_cells(cj, (uint32_t)j0, (uint32_t)j1);
}

/* The corridor (走廊) from the topology path and the open area solidc, on this thread's share
 * of the rows (cj set up by the caller, the other share taken beside it). */
static int corridor(leg *L, const nm_search_path *seed, corridor_job *cj, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    /* the sources and the seeds live in the linked check's queue and marks, idle between the
     * solves (and kept with a kept window): no new pages for 5 B a cell */
    int32_t *src = (int32_t *)s->queue;
    uint8_t *seeds = s->seen;
    memset(seeds, 0, s->ncell);
    mark_cells(seeds, seed->cell, seed->n);
    cj->src = src;
    cj->seeds = seeds;
    int rc = nm_grid_nearest_source_rows(w->win.nx, w->win.ny, seeds, src, &cj->rows.final_from, err);
    if (rc) {
        nm_grid_bands_stop(&cj->rows); /* the thread beside it stops */
        return rc;
    }
    corridor_share(cj, 0);
    return NM_OK;
}

/* The band must hold the seed path as a path of the geometry layer: a diagonal step needs both
 * side cells (no corner cutting), and a seed whose clearance is under one cell (kCS) does not
 * cover them, so the layer found no path in the corridor. The topology layer took the step, so
 * both side cells are in its lim. Returns 1 when a small window's added cell is in the outer ring. */
static int corridor_sides(leg *L, const nm_search_path *seed, const uint8_t *lim, uint8_t *limg)
{
    const nm_sctx *s = &L->s;
    const int64_t m = NM_kTrustMargin;
    int edge = 0;
    for (uint32_t k = 1; k < seed->n; k++) {
        if (seed->link[k])
            continue;
        const uint32_t a = seed->cell[k - 1], b = seed->cell[k];
        const uint32_t ai = a % s->nx, aj = a / s->nx, bi = b % s->nx, bj = b / s->nx;
        if (ai == bi || aj == bj)
            continue;
        const uint32_t side[2] = {aj * s->nx + bi, bj * s->nx + ai};
        for (int q = 0; q < 2; q++) {
            const uint32_t c = side[q], ci = c % s->nx, cj = c / s->nx;
            if (limg[c] || (lim && !lim[c]))
                continue;
            limg[c] = 1;
            if (L->req->small && in_outer_ring(L->req->region_sides, ci, cj, s->nx, s->ny, m))
                edge = 1;
        }
    }
    return edge;
}

/* 收尾检查 2: forbidden steps crossed by the final path that are not links. */
static uint32_t facade_steps(const nm_sctx *s, const nm_search_path *p)
{
    uint32_t n = 0;
    for (uint32_t k = 1; k < p->n; k++) {
        if (p->link[k])
            continue;
        int64_t dx = (int64_t)(p->cell[k] % s->nx) - (int64_t)(p->cell[k - 1] % s->nx);
        int64_t dy = (int64_t)(p->cell[k] / s->nx) - (int64_t)(p->cell[k - 1] / s->nx);
        if ((dx || dy) && dx >= -1 && dx <= 1 && dy >= -1 && dy <= 1 &&
            nm_search_step_banned(s->w, p->cell[k - 1], (int)dx, (int)dy))
            n++;
    }
    return n;
}

/* The final solve's mask for the route mask of 拉直: its layer (walk, or core after the core
 * fallback) ∧ its lim. */
static int keep_mask(leg *L, const uint8_t *lim, int level, nm_error *err)
{
    nm_sctx *s = &L->s;
    uint8_t *m = nm_malloc(s->ncell);
    if (!m)
        return nm_fail(err, NM_ERR_NOMEM, "search: final mask: out of memory");
    const uint8_t *layer = level == 1 ? s->w->core : s->walk;
    for (uint32_t c = 0; c < s->ncell; c++)
        m[c] = (uint8_t)(layer[c] && (!lim || lim[c]));
    nm_free(L->out->final_mask);
    L->out->final_mask = m;
    return NM_OK;
}

/* ---- routeWindow's steps (两段搜索), one function each; run() calls them in the article's order.
 * A step that ends the leg (escalation or failure) sets out->status and returns NM_OK. */

/* 掩膜与吸附锚点: the raw endpoint cells, the start and goal anchors (declared decks first), the
 * snap distances and the small window's limit1 check. */
static int snap_anchors(leg *L)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    const nm_search_request *req = L->req;
    nm_search_result *o = L->out;
    L->rsi = trunc_cell(req->sx, w->win.x0);
    L->rsj = trunc_cell(req->sy, w->win.y0);
    L->rgi = trunc_cell(req->gx, w->win.x0);
    L->rgj = trunc_cell(req->gy, w->win.y0);
    L->decks = req->start_deck_set || req->goal_deck_set;
    const nm_mask walkm = {s->walk, NULL};
    if (req->start_deck_set) {
        uint32_t k;
        if (!nearest_deck_span(L, L->rsi, L->rsj, req->start_deck, &k, &L->ds)) {
            o->status = NM_SEARCH_FAIL;
            o->fail_kind = NM_SEARCH_FAIL_NO_SNAP;
            snprintf(o->message, sizeof o->message,
                     "search: no unblocked declared start deck (%.2f m) near the start",
                     req->start_deck);
            return NM_OK;
        }
        L->e.start_span = k;
        L->e.start_cell = s->t->sp_cell[k];
    } else {
        if (!nearest_cell(L, &walkm, true, L->rsi, L->rsj, &L->e.start_cell, &L->ds)) {
            o->status = NM_SEARCH_FAIL;
            o->fail_kind = NM_SEARCH_FAIL_NO_SNAP;
            snprintf(o->message, sizeof o->message, "search: no cell to snap to in the window");
            return NM_OK;
        }
        uint32_t f, n = nm_span_cell_spans(s->t, L->e.start_cell, &f);
        double bd = INFINITY;
        for (uint32_t k = f; k < f + n; k++) { /* the usable span nearest the start height h0 */
            double d = fabs((double)s->t->sp_h[k] - req->h0);
            if ((w->sp_bits[k] & NM_SP_REACH) && d < bd) {
                bd = d;
                L->e.start_span = k;
            }
        }
    }
    if (req->goal_deck_set) {
        uint32_t k;
        if (!nearest_deck_span(L, L->rgi, L->rgj, req->goal_deck, &k, &L->dg)) {
            o->status = NM_SEARCH_FAIL;
            o->fail_kind = NM_SEARCH_FAIL_NO_SNAP;
            snprintf(o->message, sizeof o->message,
                     "search: no unblocked declared goal deck (%.2f m) near the goal",
                     req->goal_deck);
            return NM_OK;
        }
        L->e.goal_cell = s->t->sp_cell[k];
        L->e.goals[0] = k;
        L->e.ngoal = 1;
    } else {
        if (!nearest_cell(L, &walkm, true, L->rgi, L->rgj, &L->e.goal_cell, &L->dg)) {
            o->status = NM_SEARCH_FAIL;
            o->fail_kind = NM_SEARCH_FAIL_NO_SNAP;
            snprintf(o->message, sizeof o->message, "search: no cell to snap to in the window");
            return NM_OK;
        }
        uint32_t f, n = nm_span_cell_spans(s->t, L->e.goal_cell, &f);
        for (uint32_t k = f; k < f + n && L->e.ngoal < 16; k++)
            if (w->sp_bits[k] & NM_SP_REACH)
                L->e.goals[L->e.ngoal++] = k;
    }
    o->start_anchor = L->e.start_cell;
    o->goal_anchor = L->e.goal_cell;
    o->snap_start = L->ds;
    o->snap_goal = L->dg;
    if (req->small && (L->ds / NM_kCS >= req->limit1 || L->dg / NM_kCS >= req->limit1))
        return escalate(o, NM_SEARCH_ESC_SNAP_FAR, "snap distance reaches limit1");
    L->give_up = req->give_up > 0 ? req->give_up : req->limit2 - (L->ds + L->dg) / NM_kCS + 1.0;
    return NM_OK;
}

/* 诊断: the baseline found no path in the last tier: the gap location and the failure sentence
 * (终点面不可达 with the goal anchor's decks, or 两端不连通). */
static int baseline_failed(leg *L, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    const nm_search_request *req = L->req;
    nm_search_result *o = L->out;
    uint32_t a, b;
    double d;
    int rc = nm_search_locate_gap_ctx(s, L->e.start_span, L->e.goals, L->e.ngoal, &a, &b, &d, err);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        o->has_gap = true;
        o->gap_sx = w->win.x0 + ((double)(a % s->nx) + 0.5) * NM_kCS;
        o->gap_sy = w->win.y0 + ((double)(a / s->nx) + 0.5) * NM_kCS;
        o->gap_gx = w->win.x0 + ((double)(b % s->nx) + 0.5) * NM_kCS;
        o->gap_gy = w->win.y0 + ((double)(b / s->nx) + 0.5) * NM_kCS;
        o->gap_dist = d;
    }
    o->status = NM_SEARCH_FAIL;
    if (req->goal_deck_set) {
        o->fail_kind = NM_SEARCH_FAIL_DECK_UNREACHABLE;
        int len = snprintf(o->message, sizeof o->message,
                           "search: goal deck unreachable: deck %.2f m; goal anchor spans:",
                           req->goal_deck);
        uint32_t f, n = nm_span_cell_spans(s->t, L->e.goal_cell, &f);
        for (uint32_t k = f; k < f + n && len > 0 && (size_t)len < sizeof o->message; k++)
            if (w->sp_bits[k] & NM_SP_REACH)
                len += snprintf(o->message + len, sizeof o->message - (size_t)len, " %.2f",
                                (double)s->t->sp_h[k]);
    } else {
        o->fail_kind = NM_SEARCH_FAIL_DISCONNECTED;
        snprintf(o->message, sizeof o->message, "search: start and goal are not connected%s",
                 o->has_gap ? " (gap located)" : "");
    }
    return NM_OK;
}

/* 基线: unit price on walk, the cell-level fallback allowed; the path and 收尾检查 1's input (is
 * the raw goal cell cut off from the baseline's reach set). */
static int baseline(leg *L, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    nm_search_result *o = L->out;
    const nm_search_price unit = {NULL, 1.0F, 1.0F};
    solve_res base;
    int rc = solve(L, NULL, &unit, NULL, NULL, true, false, L->give_up, &base, err);
    if (rc)
        return rc;
    o->start_anchor = L->e.start_cell; /* the cell-level fallback may re-snap */
    o->goal_anchor = L->e.goal_cell;
    o->snap_start = L->ds;
    o->snap_goal = L->dg;
    if (!base.found) {
        const int esc = base.esc;
        solve_res_free(&base);
        if (L->req->small)
            return escalate(o, esc ? esc : NM_SEARCH_ESC_BASE_NO_PATH, "baseline found no path");
        return baseline_failed(L, err);
    }
    rc = to_path(L, &base, &o->base, err);
    o->base_cost = base.cost;
    L->base_level = base.level;
    solve_res_free(&base);
    if (rc)
        return rc;
    /* 收尾检查 1 uses the baseline's reach set: the cells of the mask it used with a usable span
     * (every mask cell at the cell level) */
    if (L->rgi >= 0 && L->rgj >= 0 && L->rgi < s->nx && L->rgj < s->ny) {
        uint32_t gc = (uint32_t)(L->rgj * s->nx + L->rgi);
        bool reach = L->base_level == 2   ? true
                     : L->base_level == 1 ? (w->core[gc] && nm_search_cell_usable(w, gc))
                                          : (s->walk[gc] && nm_search_cell_usable(w, gc));
        o->goal_cut_off = s->walk[gc] && !reach;
    }
    return NM_OK;
}

/* 端点接入: each anchor's access chain to the open channel chan0 (the end that misses chan0 aims
 * at the whole channel limw in the last tier), marked into limw; limit1 bounds a small window's
 * chains. */
static int endpoint_chains(leg *L, nm_error *err)
{
    const nm_window *w = L->s.w;
    nm_search_result *o = L->out;
    const bool small = L->req->small;
    const uint32_t ends[2] = {L->e.start_cell, L->e.goal_cell};
    uint32_t *chains[2] = {NULL, NULL}, nch[2] = {0, 0};
    int rc = NM_OK;
    for (int e = 0; e < 2; e++) {
        int32_t cost;
        rc = nm_search_access_run(&L->aw, w, L->s.walk, L->chan0, ends[e], 0, &chains[e],
                                  &nch[e], &cost, err);
        if (rc < 0)
            goto out;
        if (rc == 0) {
            if (small) {
                rc = escalate(o, NM_SEARCH_ESC_NO_CHANNEL, "endpoint reaches no open channel");
                goto out;
            }
            rc = nm_search_access_run(&L->aw, w, L->s.walk, L->limw, ends[e], 0, &chains[e],
                                      &nch[e], &cost, err);
            if (rc < 0)
                goto out;
        }
        if (rc == 1 && small && (double)cost / 100.0 >= L->req->limit1) {
            rc = escalate(o, NM_SEARCH_ESC_ACCESS_LONG, "access chain reaches limit1");
            goto out;
        }
    }
    for (int e = 0; e < 2; e++)
        if (chains[e])
            mark_cells(L->limw, chains[e], nch[e]);
    o->access = nm_malloc(((size_t)nch[0] + nch[1] + 1) * sizeof *o->access);
    if (!o->access) {
        rc = nm_fail(err, NM_ERR_NOMEM, "search: access chains: out of memory");
        goto out;
    }
    for (int e = 0; e < 2; e++)
        for (uint32_t k = 0; k < nch[e]; k++)
            o->access[o->naccess++] = chains[e][k];
    rc = NM_OK;
out:
    nm_free(chains[0]);
    nm_free(chains[1]);
    return rc;
}

/* The channel limw of the topology layer: chan0 (clearance >= kClrPref) ∪ the medial axis, the
 * endpoint access chains, linkChains for the links the baseline used, and the drop chains. */
static int access_channel(leg *L, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    nm_search_result *o = L->out;
    L->chan0 = nm_malloc(s->ncell);
    L->limw = nm_malloc(s->ncell);
    L->open = nm_calloc((size_t)w->nlinks + 1, 1);
    o->link_open = nm_calloc((size_t)w->nlinks + 1, 1);
    o->nlinks = w->nlinks;
    if (!L->chan0 || !L->limw || !L->open || !o->link_open)
        return nm_fail(err, NM_ERR_NOMEM, "search: channel masks: out of memory");
    int rc = nm_search_access_init(&L->aw, s->ncell, err);
    if (rc)
        return rc;
    uint8_t *const chan0 = L->chan0, *const limw = L->limw; /* locals: the byte stores would
                                                                 alias the leg's pointers */
    for (uint32_t c = 0; c < s->ncell; c++) {
        chan0[c] = (uint8_t)(w->dist[c] >= NM_kClrPref);
        limw[c] = (uint8_t)(chan0[c] || (w->medial && w->medial[c]));
    }
    if ((rc = endpoint_chains(L, err)) || o->status != NM_SEARCH_OK)
        return rc;
    /* link access chains only for the links the baseline used */
    for (uint32_t k = 1; k < o->base.n; k++) {
        if (!o->base.link[k])
            continue;
        for (uint32_t l = 0; l < w->nlinks; l++)
            if (w->links[l].from_cell == o->base.cell[k - 1] &&
                w->links[l].to_cell == o->base.cell[k])
                L->open[l] = 1;
    }
    if ((rc = link_chains(L, &L->aw, L->chan0, L->open, L->limw, err)))
        return rc;
    drop_chains(&o->base, L->chan0, L->limw);
    return NM_OK;
}

/* The topology layer's price: clearance between kClrNarrow and kClrWide. */
static nm_search_price topo_price(const nm_window *w)
{
    return (nm_search_price){w->dist, (float)NM_kClrNarrow, (float)NM_kClrWide};
}

/* The channel's work arrays after their last use, the topology layer's solve on limw: the access
 * chains' and chan0. */
static void channel_done(leg *L)
{
    nm_search_access_free(&L->aw);
    nm_free(L->chan0);
    L->chan0 = NULL;
}

/* 拓扑层's solves: the clearance price on limw; when the ends are unlinked there, every link's
 * chains and one retry; then (last tier) the whole window. *topo: the result (found or not). */
static int topology_solve(leg *L, solve_res *topo_out, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    nm_search_result *o = L->out;
    const nm_search_price multw = topo_price(w);
    solve_res topo;
    memset(topo_out, 0, sizeof *topo_out);
    L->topo_lim = L->limw;
    int rc = solve(L, L->limw, &multw, NULL, NULL, false, true, L->give_up, &topo, err);
    if (rc)
        return rc;
    if (!topo.found && topo.unlinked && w->nlinks) {
        /* the slit the baseline used may be too narrow: open every link, retry once */
        uint32_t l;
        for (l = 0; l < w->nlinks && L->open[l]; l++)
            ;
        if (l < w->nlinks) {
            uint8_t *rest = L->open;
            for (l = 0; l < w->nlinks; l++)
                rest[l] = (uint8_t)!rest[l];
            if ((rc = link_chains(L, &L->aw, L->chan0, rest, L->limw, err))) {
                solve_res_free(&topo);
                return rc;
            }
            o->warnings |= NM_SEARCH_WARN_ALL_LINKS;
            solve_res_free(&topo);
            if ((rc = solve(L, L->limw, &multw, NULL, NULL, false, true, L->give_up, &topo, err)))
                return rc;
        }
    }
    channel_done(L);
    if (!topo.found) {
        if (L->req->small) {
            const int esc = topo.esc;
            solve_res_free(&topo);
            return escalate(o, esc ? esc : NM_SEARCH_ESC_TOPO_NO_PATH,
                            "topology layer found no path");
        }
        solve_res_free(&topo);
        o->warnings |= NM_SEARCH_WARN_TOPO_FULL;
        L->topo_lim = NULL;
        if ((rc = solve(L, NULL, &multw, NULL, NULL, false, true, 0.0, &topo, err)))
            return rc;
    }
    *topo_out = topo;
    return NM_OK;
}

/* 拓扑层's path: the solve's, or the baseline's when it found none. Takes *topo. */
static int topology_path(leg *L, solve_res *topo_in, nm_error *err)
{
    nm_search_result *o = L->out;
    solve_res topo = *topo_in;
    int rc;
    memset(topo_in, 0, sizeof *topo_in);
    if (!topo.found) { /* the baseline's path stands in; the geometry layer does not run */
        o->warnings |= NM_SEARCH_WARN_TOPO_BASE;
        if ((rc = keep_mask(L, NULL, L->base_level == 1 ? 1 : 0, err)) ||
            (rc = copy_path(&o->topo, &o->base, err)) ||
            (rc = copy_path(&o->final, &o->base, err)))
            return rc;
        o->topo_cost = o->base_cost;
        return NM_OK;
    }
    rc = to_path(L, &topo, &o->topo, err);
    o->topo_cost = topo.cost;
    L->topo_level = topo.level;
    solve_res_free(&topo);
    return rc;
}

bool nm_search_two_threads(int workers, size_t nspans)
{
    return !(workers == 1 || (workers <= 0 && nm_workers_for(nspans, 0) < 2));
}

/* Two threads for this leg (nm_search_two_threads). */
static bool two_threads(const leg *L)
{
    return nm_search_two_threads(L->req->workers, L->s.nspans);
}

/* The second thread of the corridor: the sight's window-only work, then its share of the rows. */
static void *beside_main(void *p)
{
    corridor_job *cj = p;
    const nm_search_request *req = cj->L->req;
    if (req->los_prep)
        req->los_prep(req->los_ctx);
    corridor_share(cj, 1);
    return NULL;
}

/* The corridor, with the sight's window-only work (req->los_prep) and a share of the corridor's
 * rows beside it on a second thread when there may be two, else before it. Returns 1 when a
 * small window's band enters the outer ring. */
static int corridor_and_prep(leg *L, uint8_t *limg, uint8_t *solidc, nm_error *err)
{
    const nm_search_request *req = L->req;
    const nm_search_path *seed = &L->out->topo;
    corridor_job cj = {.L = L, .lim = L->topo_lim, .limg = limg, .solidc = solidc};
    nm_grid_bands_init(&cj.rows, (int32_t)L->s.ny, 32, 0); /* corridor_cells reads its own rows */
    pthread_t th;
    const bool beside = two_threads(L) && pthread_create(&th, NULL, beside_main, &cj) == 0;
    if (!beside && req->los_prep)
        req->los_prep(req->los_ctx);
    int rc = corridor(L, seed, &cj, err);
    if (beside)
        pthread_join(th, NULL);
    if (rc)
        return rc;
    const int edge = corridor_sides(L, seed, L->topo_lim, limg);
    return cj.edge[0] | cj.edge[1] | edge;
}

/* 几何层: the corridor around the topology path, Lazy Theta* with sight in it (re-solved on the
 * topology's lim in the last tier); the parent chain, the final path and its mask. */
static int geometry(leg *L, nm_error *err)
{
    nm_sctx *s = &L->s;
    const nm_window *w = s->w;
    const nm_search_request *req = L->req;
    nm_search_result *o = L->out;
    L->limg = nm_malloc(s->ncell);
    L->solidc = nm_malloc(s->ncell);
    if (!L->limg || !L->solidc)
        return nm_fail(err, NM_ERR_NOMEM, "search: corridor masks: out of memory");
    int rc = corridor_and_prep(L, L->limg, L->solidc, err);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return escalate(o, NM_SEARCH_ESC_BAND_EDGE, "corridor band enters the outer ring");
    const nm_search_price mult = {w->dist, (float)NM_kCS, (float)NM_kClrPref};
    solve_res geo;
    const uint8_t *geo_lim = L->limg;
    if ((rc = solve(L, L->limg, &mult, req->los, L->solidc, false, true, 0.0, &geo, err)))
        return rc;
    if (!geo.found) {
        if (req->small) {
            const int esc = geo.esc;
            solve_res_free(&geo);
            return escalate(o, esc ? esc : NM_SEARCH_ESC_GEO_NO_PATH,
                            "geometry layer found no path in the corridor");
        }
        solve_res_free(&geo);
        o->warnings |= NM_SEARCH_WARN_GEO_FREE;
        geo_lim = L->topo_lim;
        if ((rc = solve(L, L->topo_lim, &mult, req->los, L->solidc, false, true, 0.0, &geo, err)))
            return rc;
    }
    rc = geo.found ? keep_mask(L, geo_lim, geo.level, err)
                   : keep_mask(L, L->topo_lim, L->topo_level, err);
    if (!rc && geo.found) {
        o->geo_cost = geo.cost;
        if (!(rc = chain_out(L, &geo, &o->chain, err)))
            rc = to_path(L, &geo, &o->final, err);
    } else if (!rc) {
        o->warnings |= NM_SEARCH_WARN_GEO_TOPO;
        rc = copy_path(&o->final, &o->topo, err);
    }
    solve_res_free(&geo);
    if (rc)
        return rc;
    o->solidc = L->solidc; /* handed over to 拉直's route mask */
    L->solidc = NULL;
    return NM_OK;
}

/* 收尾检查 2 and the window's links without landing. */
static void end_checks(leg *L)
{
    nm_search_result *o = L->out;
    const nm_window *w = L->s.w;
    o->facade_steps = facade_steps(&L->s, &o->final);
    if (o->facade_steps)
        o->warnings |= NM_SEARCH_WARN_FACADE;
    o->links_without_landing = w->links_without_landing;
    if (w->links_without_landing)
        o->warnings |= NM_SEARCH_WARN_NO_LANDING;
}

/* The leg's own arrays that outlive a step (each is also freed at its last use). */
static void leg_free(leg *L)
{
    nm_search_access_free(&L->aw);
    nm_free(L->chan0);
    nm_free(L->limw);
    nm_free(L->open);
    nm_free(L->limg);
    nm_free(L->solidc);
    L->chan0 = L->limw = L->open = L->limg = L->solidc = NULL;
}

/* ---- the channel and the topology layer beside the baseline ------------------------------------
 * They read the baseline only through the links and ledge drops of its path (their access chains
 * join limw) and its cell-level fallback (which moves the anchors). So from the snap anchors on
 * they run on a second thread as if the baseline's path had neither; when it has neither and
 * stayed at the span level, theirs is the result the article's order gives, and it is taken.
 * Else the channel is built again with the access chains of the path's links and drops while
 * the second thread's topology solve goes on, and that solve's path is taken when the anchors
 * stayed and the new chains are proved to change nothing (nm_search_path_stands); failing that,
 * the second thread's work is dropped and the layer runs after the baseline as before. Either
 * way the result is the one-thread result. The fall gate's caches are shared: its calls take a
 * lock while both run. */
typedef struct ahead {
    bool started;
    leg L; /* a copy of the leg with its own search context, result and channel */
    nm_search_result out;
    solve_res topo;
    nm_error err;
    int rc;
    atomic_int stop;
    pthread_t th;
    pthread_mutex_t gate_mu;
    nm_fall_gate gate; /* the window's gate behind gate_mu */
} ahead;

static bool locked_gate(void *ctx, uint32_t a, double ha, uint32_t b, double hb)
{
    ahead *A = ctx;
    const nm_fall_gate *g = &A->L.s.w->gate;
    pthread_mutex_lock(&A->gate_mu);
    const bool blocked = g->fn(g->ctx, a, ha, b, hb);
    pthread_mutex_unlock(&A->gate_mu);
    return blocked;
}

static void *ahead_main(void *p)
{
    ahead *A = p;
    A->rc = access_channel(&A->L, &A->err);
    if (!A->rc && A->out.status == NM_SEARCH_OK)
        A->rc = topology_solve(&A->L, &A->topo, &A->err);
    return NULL;
}

/* Starts the channel and the topology layer on a second thread when the window is worth it and
 * the request allows two threads; anything refused leaves A not started (the one-thread order). */
static void ahead_start(leg *L, ahead *A)
{
    memset(A, 0, sizeof *A);
    if (!two_threads(L))
        return;
    A->L = *L;
    A->L.out = &A->out;
    if (nm_search_ctx_twin(&A->L.s, &L->s, &A->err))
        return;
    atomic_init(&A->stop, 0);
    A->L.s.stop = &A->stop;
    const bool gated = L->s.w->gate.fn != NULL;
    if (gated) {
        pthread_mutex_init(&A->gate_mu, NULL);
        A->gate = (nm_fall_gate){locked_gate, A};
        L->s.gate = A->L.s.gate = &A->gate;
    }
    if (pthread_create(&A->th, NULL, ahead_main, A)) {
        if (gated) {
            L->s.gate = &L->s.w->gate;
            pthread_mutex_destroy(&A->gate_mu);
        }
        nm_search_ctx_free(&A->L.s);
        return;
    }
    A->started = true;
}

/* The baseline's path has no off-mesh link and no ledge drop, at the span level: the channel
 * the second thread built is the one access_channel builds now. */
static bool base_plain(const leg *L)
{
    const nm_search_path *b = &L->out->base;
    if (L->base_level == 2)
        return false;
    for (uint32_t k = 1; k < b->n; k++)
        if (b->link[k] || (double)b->h[k - 1] - (double)b->h[k] > NM_kClimb)
            return false;
    return true;
}

/* Joins the second thread, told to stop first when its work is not wanted. */
static void ahead_join(leg *L, ahead *A, bool stop)
{
    if (stop)
        atomic_store(&A->stop, 1);
    pthread_join(A->th, NULL);
    if (L->s.w->gate.fn) {
        L->s.gate = &L->s.w->gate;
        pthread_mutex_destroy(&A->gate_mu);
    }
}

/* The second thread's search context: kept for the next leg's twin, or freed. */
static void ahead_release(leg *L, ahead *A)
{
    if (L->req->keep_state) /* its arrays go with the kept state, for the next leg's twin */
        nm_search_ctx_twin_keep(&L->s, &A->L.s);
    else
        nm_search_ctx_free(&A->L.s);
}

/* Frees what the second thread made and L did not take. */
static void ahead_drop(ahead *A)
{
    leg_free(&A->L);
    solve_res_free(&A->topo);
    nm_search_result_free(&A->out);
}

/* Joins the second thread; with `want`, takes its channel, warnings, escalation and topology
 * solve into L and *topo (true), else drops them (false). */
static bool ahead_finish(leg *L, ahead *A, bool want, solve_res *topo)
{
    memset(topo, 0, sizeof *topo);
    if (!A->started)
        return false;
    ahead_join(L, A, !want);
    ahead_release(L, A);
    const bool take = want && !A->rc;
    if (take) {
        nm_search_result *o = L->out;
        L->chan0 = A->L.chan0;
        L->limw = A->L.limw;
        L->open = A->L.open;
        L->aw = A->L.aw;
        L->topo_lim = A->L.topo_lim;
        o->link_open = A->out.link_open;
        o->nlinks = A->out.nlinks;
        o->access = A->out.access;
        o->naccess = A->out.naccess;
        o->warnings |= A->out.warnings;
        if (A->out.status != NM_SEARCH_OK) {
            o->status = A->out.status;
            o->reason = A->out.reason;
            memcpy(o->message, A->out.message, sizeof o->message);
        }
        *topo = A->topo;
    } else {
        ahead_drop(A);
    }
    return take;
}

/* The two legs solve between the same anchors (the baseline's cell-level fallback moves them). */
static bool same_ends(const leg *a, const leg *b)
{
    if (a->e.start_cell != b->e.start_cell || a->e.goal_cell != b->e.goal_cell ||
        a->e.start_span != b->e.start_span || a->e.ngoal != b->e.ngoal || a->ds != b->ds ||
        a->dg != b->dg || a->give_up != b->give_up)
        return false;
    for (uint32_t k = 0; k < a->e.ngoal; k++)
        if (a->e.goals[k] != b->e.goals[k])
            return false;
    return true;
}

/* The baseline's path took a link or a ledge drop, so L's channel (built now, while the second
 * thread went on) holds their access chains, which the second thread's channel lacks. Its
 * topology solve's path is still the layer's when its first SpanAstar found it and the grown
 * channel is proved to change nothing (nm_search_path_stands): then *topo takes it and the
 * topology layer's last uses of the channel's work arrays are done here (true). Else (false) the
 * layer solves again on L's channel. Joins A, told to stop when !want. */
static bool ahead_finish_grown(leg *L, ahead *A, bool want, solve_res *topo)
{
    memset(topo, 0, sizeof *topo);
    if (!A->started)
        return false;
    ahead_join(L, A, !want);
    const solve_res *t = &A->topo;
    bool take = want && !A->rc && A->out.status == NM_SEARCH_OK && t->found == 1 &&
                t->level == 0 && t->n > 0 && A->L.topo_lim == A->L.limw &&
                !(A->out.warnings & (NM_SEARCH_WARN_ALL_LINKS | NM_SEARCH_WARN_TOPO_FULL)) &&
                same_ends(L, &A->L);
    if (take && L->e.start_cell != L->e.goal_cell) {
        const nm_search_price price = topo_price(L->s.w);
        const nm_span_search q = walk_query(L, L->limw, &price, NULL, NULL, L->give_up);
        take = nm_search_path_stands(&A->L.s, &q, &L->e, A->L.limw, t->sp[t->n - 1]);
    }
    ahead_release(L, A);
    if (take) {
        *topo = A->topo;
        memset(&A->topo, 0, sizeof A->topo);
        L->topo_lim = L->limw;
        channel_done(L);
    }
    ahead_drop(A);
    return take;
}

/* routeWindow's searches in the article's order; 拓扑段 counts from routeWindow's entry (walk
 * mask included), 几何段 from the corridor. */
static int run(leg *L, nm_error *err)
{
    nm_search_result *o = L->out;
    int rc;
    if ((rc = snap_anchors(L)) || o->status != NM_SEARCH_OK)
        return rc;
    ahead A;
    ahead_start(L, &A);
    rc = baseline(L, err);
    const bool refuses = !L->req->small && nm_search_final_refuses(o);
    const bool go_on = !rc && o->status == NM_SEARCH_OK && !refuses;
    solve_res topo;
    bool taken, channel = false;
    if (go_on && A.started && !base_plain(L)) { /* this channel, then the second thread's path */
        channel = true;
        rc = access_channel(L, err);
        taken = ahead_finish_grown(L, &A, !rc && o->status == NM_SEARCH_OK, &topo);
    } else {
        taken = ahead_finish(L, &A, go_on && base_plain(L), &topo);
    }
    if (rc || o->status != NM_SEARCH_OK)
        return rc;
    if (refuses) {
        /* a window that cannot escalate and an end beyond kSnapRadius or a goal cut off: the
         * channel's and the layers' paths would be thrown away */
        o->ms_topo = now_ms() - L->t0;
        end_checks(L);
        return NM_OK;
    }
    o->topo_from = !A.started ? NM_TOPO_ONE
                   : !taken   ? NM_TOPO_AGAIN
                   : channel  ? NM_TOPO_PROVED
                              : NM_TOPO_BESIDE;
    if (!taken) {
        if (!channel && ((rc = access_channel(L, err)) || o->status != NM_SEARCH_OK))
            return rc;
        if ((rc = topology_solve(L, &topo, err)))
            return rc;
    }
    if (o->status != NM_SEARCH_OK) /* escalated in the channel or the topology layer */
        return NM_OK;
    if ((rc = topology_path(L, &topo, err)) || o->status != NM_SEARCH_OK)
        return rc;
    o->ms_topo = now_ms() - L->t0;
    if (!(o->warnings & NM_SEARCH_WARN_TOPO_BASE)) {
        const double t1 = now_ms();
        if ((rc = geometry(L, err)) || o->status != NM_SEARCH_OK)
            return rc;
        o->ms_geo = now_ms() - t1;
    }
    end_checks(L);
    return NM_OK;
}

/* The search state for window w: the one an earlier search on w handed back (its arrays depend on
 * the window alone, and SpanAstar clears its opened and closed bits when it starts), else a new one. */
static int take_state(nm_sctx *s, const nm_window *w, struct nm_sctx *kept, int workers, nm_error *err)
{
    if (kept && kept->nx == (uint32_t)w->win.nx && kept->ny == (uint32_t)w->win.ny &&
        kept->nspans == w->spans.nspans) {
        *s = *kept;
        nm_free(kept);
        s->w = w; /* the window struct moved; its arrays did not */
        s->t = &w->spans;
        return NM_OK;
    }
    nm_search_state_free(kept);
    return nm_search_ctx_init(s, w, workers, err);
}

int nm_search_route_window(const nm_window *w, const nm_search_request *req, nm_search_result *out,
                           nm_error *err)
{
    const char *bad = NULL;
    if (!out)
        bad = "no result";
    else if (!w || !req)
        bad = "no window or request";
    else if (!w->dist)
        bad = "window: dist layer missing";
    else if (!isfinite(req->sx) || !isfinite(req->sy) || !isfinite(req->gx) || !isfinite(req->gy))
        bad = "endpoint not finite";
    if (out)
        memset(out, 0, sizeof *out);
    if (bad) {
        if (req)
            nm_search_state_free(req->state); /* taken over in every case */
        return nm_fail(err, NM_ERR_ARG, "search: routeWindow: %s", bad);
    }
    leg L;
    memset(&L, 0, sizeof L);
    L.req = req;
    L.out = out;
    L.t0 = now_ms();
    int rc = take_state(&L.s, w, req->state, req->workers, err);
    if (rc)
        return rc;
    rc = run(&L, err);
    leg_free(&L);
    if (!rc && req->keep_state && (out->state = nm_malloc(sizeof *out->state)))
        *out->state = L.s; /* the next search on this window starts from its pages */
    else
        nm_search_ctx_free(&L.s);
    if (rc)
        nm_search_result_free(out);
    return rc;
}

/* The bytes of a context's work arrays (not walk and the link tables). */
static size_t work_bytes(const nm_sctx *s)
{
    const size_t nn = s->nnodes;
    return nn * sizeof *s->node + (nn / 64 + 1) * (sizeof *s->closed + sizeof *s->opened) +
           (size_t)s->ncell * (sizeof *s->queue + sizeof *s->seen) + s->heap.cap * sizeof *s->heap.it;
}

size_t nm_search_state_bytes(const struct nm_sctx *s)
{
    if (!s)
        return 0;
    const size_t nl = s->w ? s->w->nlinks : 0;
    return work_bytes(s) + (s->spare ? work_bytes(s->spare) : 0) +
           ((size_t)s->nspans / 64 + 1) * sizeof *s->lk_has +
           (nl + 1) * (sizeof *s->lk_idx + sizeof *s->lk_from + sizeof *s->lk_bycell + sizeof *s->lk_cell) +
           (size_t)s->ncell * (sizeof *s->walk + sizeof *s->cell);
}

void nm_search_state_free(struct nm_sctx *s)
{
    if (!s)
        return;
    nm_search_ctx_free(s);
    nm_free(s);
}

bool nm_search_final_refuses(const nm_search_result *r)
{
    return r->snap_start > NM_kSnapRadius || r->snap_goal > NM_kSnapRadius || r->goal_cut_off;
}

static void chain_free(nm_search_chain *c)
{
    nm_free(c->x);
    nm_free(c->y);
    nm_free(c->h);
    nm_free(c->span);
    nm_free(c->link);
    memset(c, 0, sizeof *c);
}

void nm_search_result_free(nm_search_result *r)
{
    if (!r)
        return;
    nm_search_path_free(&r->base);
    nm_search_path_free(&r->topo);
    nm_search_path_free(&r->final);
    chain_free(&r->chain);
    nm_free(r->link_open);
    r->link_open = NULL;
    nm_free(r->solidc);
    r->solidc = NULL;
    nm_free(r->final_mask);
    r->final_mask = NULL;
    nm_free(r->access);
    r->access = NULL;
    r->naccess = 0;
    nm_search_state_free(r->state);
    r->state = NULL;
}
