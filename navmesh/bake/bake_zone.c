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
    uint8_t steps;     /* step bits: only a crack's cell across a riser has any (riser_crack_steps) */
    bool raised;       /* a cell of a crack across a riser, at its side's height (level_riser_cracks) */
    uint32_t src_span; /* span whose component the Ghost takes; UINT32_MAX for Fill */
} ghost_rec;

/* A cell of a crack across a riser and the height it takes (level_riser_cracks). */
typedef struct raised_cell {
    size_t l; /* local cell of the region's window */
    float h;
} raised_cell;

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
    uint8_t *sflags;        /* per span: record flags (Dead from StampWalls, then Core / Walk),
                             * SPAN_SEALED under a thin wall */
    uint16_t *sclr, *sclr2d;
    uint8_t *ssteps;
    int32_t *bbox;               /* per region: i0, j0, i1, j1 (inclusive) */
    nm_grid_wall *walls; size_t nwalls;
    uint32_t *kw_start, *kw_list; /* per region: indices of walls kept on it */
    region_out *rout;
    nm_fall_gate gate_s;
    const nm_fall_gate *gate;    /* NULL when no drop function was given */
    int workers;
    nm_error *errs;              /* per chunk (region) errors are reported in chunk order */
} zone_work;

int nm_bake_links(const nm_zone_clean *zc, nm_bake_grid_zone *z, nm_bake_cell_fn cell_recs, void *ctx,
                  nm_error *err); /* bake_pack.c */

/* The centre of window cell c, zone pixels (the bake's gates take pixels). */
static void cell_centre(const nm_grid_window *win, uint32_t c, double *u, double *v)
{
    const uint32_t nx = (uint32_t)win->nx;
    *u = win->x0 + ((c % nx) + 0.5) * NM_kCS;
    *v = win->y0 + ((c / nx) + 0.5) * NM_kCS;
}

/* The grid operators ask the gate in window cells; the caller's function takes pixels. */
static bool gate_px(void *ctx, uint32_t from_cell, double h_from, uint32_t to_cell, double h_to)
{
    const zone_work *zw = ctx;
    double u0, v0, u1, v1;
    cell_centre(&zw->win, from_cell, &u0, &v0);
    cell_centre(&zw->win, to_cell, &u1, &v1);
    return zw->opts->drop_blocked(zw->opts->drop_ctx, u0, v0, h_from, u1, v1, h_to);
}

static void progress(const nm_bake_grid_opts *o, const char *step, double f)
{
    if (o && o->progress) o->progress(o->progress_ctx, step, f);
}

/* Sample points of a wall, spaced <= 0.1 px (StampWalls' rule; WallsAtLayer uses the same). */
static size_t wall_samples(const nm_grid_wall *w)
{
    double L = nm_hypot(w->x1 - w->x0, w->y1 - w->y0);
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

/* Does region r hold, in every sample cell of w inside the zone, a span more than kClimb below
 * (above = false) or above (above = true) hbar, in a column that is no facade (two spans: a cover
 * over the ground, 桥下 / 挑檐)? (FWAL: then r passes under or over the whole edge, see step 5.) */
static bool region_across_edge(const zone_work *zw, const nm_grid_wall *w, uint32_t r, double hbar, bool above)
{
    const nm_span_table *T = &zw->T;
    size_t n = wall_samples(w), seen = 0;
    for (size_t k = 0; k < n; k++) {
        int32_t ci, cj;
        if (!wall_cell(&zw->win, w, k, n, &ci, &cj)) continue;
        seen++;
        uint32_t cell = (uint32_t)cj * (uint32_t)zw->win.nx + (uint32_t)ci, first;
        /* a facade column (three or more stacked spans) is no deck over a path */
        if (nm_span_cell_face(T, cell)) return false;
        uint32_t c = nm_span_cell_spans(T, cell, &first);
        bool across = false;
        for (uint32_t s = first; s < first + c && !across; s++)
            across = zw->rid[s] == r && (above ? (double)T->sp_h[s] - hbar : hbar - (double)T->sp_h[s]) > NM_kClimb;
        if (!across) return false;
    }
    return seen > 0;
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


/* A solid across cell c at a body's height, from lo above h: between the centres of its west and
 * east neighbours, or of its north and south ones (the collision geometry, through the caller). */
static bool solid_across(const zone_work *zw, uint32_t c, double h, double lo)
{
    const nm_bake_grid_opts *o = zw->opts;
    if (!o || !o->gap_blocked)
        return false;
    double u, v;
    cell_centre(&zw->win, c, &u, &v);
    const double bot = h + lo, top = h + NM_kFallHeight - 0.1;
    return o->gap_blocked(o->drop_ctx, u - NM_kCS, v, u + NM_kCS, v, bot, top) ||
           o->gap_blocked(o->drop_ctx, u, v - NM_kCS, u, v + NM_kCS, bot, top);
}

/* Does the column of span k (first, n) hold a span of region r (rid r + 1) more than kClimb below
 * it? Then span k is a level over the region's own lower level (a deck over its path). */
static bool over_own_level(const zone_work *zw, uint32_t first, uint32_t n, uint32_t k, uint32_t r)
{
    for (uint32_t s = first; s < first + n; s++)
        if (zw->rid[s] == r + 1 && (double)zw->T.sp_h[s] < (double)zw->T.sp_h[k] - NM_kClimb) return true;
    return false;
}

/* A solid across the middle of edge w at a body's height above hbar (the bake's gap gate, as
 * solid_across): a pillar or a wall standing on the lower level under a deck, which stays a wall
 * of the region (its footprint is a hole FillHoles would close). */
static bool edge_solid(const zone_work *zw, const nm_grid_wall *w, double hbar)
{
    const nm_bake_grid_opts *o = zw->opts;
    if (!o || !o->gap_blocked)
        return false;
    const double mx = 0.5 * (w->x0 + w->x1), my = 0.5 * (w->y0 + w->y1);
    const double ex = w->x1 - w->x0, ey = w->y1 - w->y0, len = sqrt(ex * ex + ey * ey);
    if (!(len > 0))
        return false;
    const double nx = -ey / len * NM_kCS, ny = ex / len * NM_kCS; /* one cell across */
    return o->gap_blocked(o->drop_ctx, mx - nx, my - ny, mx + nx, my + ny, hbar + NM_kBumpUp,
                          hbar + NM_kFallHeight - 0.1);
}

#define LAYER_REAL 2
/* Bit 7 of sflags (no record flag uses it): the span's ins bit until step 5 turns it into Core,
 * then the span's medial bit (one per-span column less each) */
#define SPAN_INS 0x80
#define SPAN_MEDIAL 0x80
/* Bit 6: a thin wall's footprint span, no step to or from it (judge_pairs); never written out */
#define SPAN_SEALED 0x40

/* Which per-span column spans_to_column writes from a window array. */
enum { COL_LAYER, COL_FLAGS, COL_CLR, COL_CLR2D, COL_MEDIAL };

typedef struct column_job {
    zone_work *zw;
    uint32_t r;
    int32_t li0, lj0, lw, lh;
    const void *a;
    int col;
    uint8_t *layer, *core, *prot; /* COL_LAYER's outputs */
} column_job;
#define COLUMN_ROWS 64 /* box rows per parallel chunk */

/* The column of region r's spans on zone rows j0 .. j1 (inside its box). */
static void column_rows_in(const column_job *cj, int32_t j0, int32_t j1)
{
    zone_work *zw = cj->zw;
    const nm_span_table *T = &zw->T;
    const uint32_t r = cj->r, nx = (uint32_t)T->win.nx;
    const uint8_t *a8 = cj->a;
    const uint16_t *a16 = cj->a;
    for (int32_t j = j0; j <= j1; j++)
        for (int32_t i = zw->bbox[4 * r]; i <= zw->bbox[4 * r + 2]; i++) {
            uint32_t first, n = nm_span_cell_spans(T, (uint32_t)j * nx + (uint32_t)i, &first);
            size_t l = (size_t)(j - cj->lj0) * (size_t)cj->lw + (size_t)(i - cj->li0);
            for (uint32_t k = first; k < first + n; k++) {
                if (zw->rid[k] != r + 1) continue;
                switch (cj->col) {
                case COL_LAYER:
                    cj->layer[l] = LAYER_REAL;
                    if (zw->sflags[k] & SPAN_INS) cj->core[l] = 1;
                    /* Protected: a Dead cell whose column holds a stack of spans (a wall's
                     * vertical faces rasterised at its foot, or a level over another). A lone
                     * Dead floor span is a seam's edge (接缝): FillHoles and CloseCracks must be
                     * able to cross it (#5137). */
                    if ((zw->sflags[k] & NM_GRID_DEAD) && n > 1) cj->prot[l] = 1;
                    /* A Dead span off the walkable surface (ins 0) with a solid standing across
                     * it is the footprint of a wall thinner than the cracks CloseCracks closes,
                     * cut from the floor (issue 12: routes through the large world's 0.4 m
                     * walls): protected, and sealed out of the span graph, for a level over it
                     * (a balcony, an upper floor) makes the cell Core all the same. */
                    /* The same for the rim of a deck or floor over the region's own lower level
                     * (a Dead span off its surface, the cell Core by the level below), where no
                     * wall keeps a route on the deck (FWAL: a ledge over the region's own lower
                     * level is no wall): a collision-only railing standing there seals it, with
                     * the fall gate's body from kFallClimb, for a railing (1.1 m) is lower than
                     * the bumps the grid walks over (issue 12: large world leg 9 walked inside a
                     * 5 m deck's railing, round a pillar whose walls the deck shares). */
                    if ((zw->sflags[k] & (NM_GRID_DEAD | SPAN_INS)) == NM_GRID_DEAD &&
                        (solid_across(zw, (uint32_t)j * nx + (uint32_t)i, T->sp_h[k], NM_kBumpUp) ||
                         (over_own_level(zw, first, n, k, r) &&
                          solid_across(zw, (uint32_t)j * nx + (uint32_t)i, T->sp_h[k], NM_kFallClimb)))) {
                        zw->sflags[k] |= SPAN_SEALED;
                        cj->prot[l] = 1;
                    }
                    break;
                case COL_FLAGS:
                    zw->sflags[k] = (uint8_t)((zw->sflags[k] & (NM_GRID_DEAD | SPAN_SEALED)) |
                                              (a8[l] ? NM_GRID_CORE | NM_GRID_WALK : 0));
                    break;
                case COL_CLR: zw->sclr[k] = a16[l]; break;
                case COL_CLR2D:
                    if (zw->sclr[k] != a16[l]) zw->sclr2d[k] = (uint16_t)(zw->sclr[k] - a16[l]);
                    break;
                default:
                    if (nm_grid_medial_cell(cj->lw, cj->lh, cj->a, i - cj->li0, j - cj->lj0))
                        zw->sflags[k] |= SPAN_MEDIAL;
                    break;
                }
            }
        }
}

static int column_rows(void *ctx, size_t chunk)
{
    const column_job *cj = ctx;
    const int32_t *box = &cj->zw->bbox[4 * cj->r];
    const int32_t j0 = box[1] + (int32_t)chunk * COLUMN_ROWS;
    column_rows_in(cj, j0, j0 + COLUMN_ROWS - 1 < box[3] ? j0 + COLUMN_ROWS - 1 : box[3]);
    return NM_OK;
}

/* Writes one per-span column for the spans of region r from its window array a: flags from the
 * Core mask (bytes; Dead kept), clr and clr2d = clr - sealed clearance (uint16), the medial bit from
 * the nearest sources (int32). clr2d is written only where not 0 (a sparse column). In parallel
 * strips of rows for a large region (each span is written by one strip). */
static void spans_to_column(zone_work *zw, uint32_t r, int32_t li0, int32_t lj0, int32_t lw,
                            int32_t lh, const void *a, int col, int workers)
{
    column_job cj = {zw, r, li0, lj0, lw, lh, a, col, NULL, NULL, NULL};
    size_t rows = (size_t)(zw->bbox[4 * r + 3] - zw->bbox[4 * r + 1] + 1);
    (void)nm_parallel_chunks((rows + COLUMN_ROWS - 1) / COLUMN_ROWS, workers, column_rows, &cj);
}

/* The medial bits of region r's spans: NearestSource over its sealed obstacles into src, and the
 * column from it. NearestSource is one thread's work (the large world's terrain region: 1.4 s,
 * the column 0.6 s on two), so with more workers the rows its second pass has finished are
 * written on a second thread beside it (each span still by one band: the same bits). */
typedef struct medial_job {
    column_job cj;
    nm_grid_bands rows; /* the region window's rows */
    const uint8_t *obst;
    int32_t *src;
    nm_error *err;
} medial_job;

static int medial_chunk(void *ctx, size_t k)
{
    medial_job *m = ctx;
    const column_job *cj = &m->cj;
    if (k == 0) { /* the sweep, then bands as the other thread does */
        int rc = nm_grid_nearest_source_rows(cj->lw, cj->lh, m->obst, m->src, &m->rows.final_from, m->err);
        if (rc != NM_OK) {
            nm_grid_bands_stop(&m->rows);
            return rc;
        }
    }
    const int32_t *box = &cj->zw->bbox[4 * cj->r];
    int32_t j0, j1;
    while (nm_grid_bands_take(&m->rows, &j0, &j1)) { /* window rows [j0, j1) to box rows */
        const int32_t a = j0 + cj->lj0 > box[1] ? j0 + cj->lj0 : box[1];
        const int32_t b = j1 - 1 + cj->lj0 < box[3] ? j1 - 1 + cj->lj0 : box[3];
        if (a <= b) column_rows_in(cj, a, b);
    }
    return NM_OK;
}

static int medial_column(zone_work *zw, uint32_t r, int32_t li0, int32_t lj0, int32_t lw, int32_t lh,
                         const uint8_t *obst, int32_t *src, int workers, nm_error *err)
{
    medial_job m = {{zw, r, li0, lj0, lw, lh, src, COL_MEDIAL, NULL, NULL, NULL}, {0}, obst, src, err};
    nm_grid_bands_init(&m.rows, lh, COLUMN_ROWS, 1); /* a cell's bit reads its 8 neighbours */
    return nm_parallel_chunks(2, workers, medial_chunk, &m);
}

/* The Ghost / Fill records of region r: layer cells without a span of the region (layer == 1).
 * One ring of propagation: the mean of the region's spans in the 8 neighbours, the component
 * taken from the first of them (scan order); a cell of a crack across a riser (raised, ascending
 * local cells) takes its side's height instead, and the component of the neighbour span
 * nearest it. Their clearance columns are filled later. */
static int region_ghosts(zone_work *zw, uint32_t r, int32_t li0, int32_t lj0, int32_t lw,
                         int32_t lh, const uint8_t *layer, const uint8_t *core, const raised_cell *raised,
                         size_t nraised, nm_error *err)
{
    size_t ri = 0;
    const nm_span_table *T = &zw->T;
    int32_t nx = zw->win.nx, ny = zw->win.ny;
    size_t nc = (size_t)lw * (size_t)lh, ng = 0;
    for (size_t l = 0; l < nc; l++) ng += layer[l] == 1;
    if (!ng) return NM_OK;
    region_out *ro = &zw->rout[r];
    ro->ghosts = nm_malloc(ng * sizeof *ro->ghosts);
    if (!ro->ghosts) return nm_fail(err, NM_ERR_NOMEM, "region %u: ghosts", r + 1);
    for (int32_t j = 0; j < lh; j++)
        for (int32_t i = 0; i < lw; i++) {
            size_t l = (size_t)j * (size_t)lw + (size_t)i;
            if (layer[l] != 1) continue;
            int32_t gi = i + li0, gj = j + lj0;
            if (gi < 0 || gj < 0 || gi >= nx || gj >= ny) continue; /* cannot happen: holes are enclosed */
            while (ri < nraised && raised[ri].l < l) ri++;
            const bool up = ri < nraised && raised[ri].l == l;
            double sum = 0.0, best = INFINITY;
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
                            double d = up ? fabs((double)T->sp_h[s] - raised[ri].h) : 0.0;
                            if (d < best) {
                                best = d;
                                src = s;
                            }
                        }
                }
            ghost_rec *g = &ro->ghosts[ro->nghosts++];
            memset(g, 0, sizeof *g);
            g->cell = (uint32_t)gj * (uint32_t)nx + (uint32_t)gi;
            g->rid = r + 1;
            g->h = !cnt ? 0.0f : up ? raised[ri].h : (float)(sum / cnt);
            g->flags = (uint8_t)((cnt ? NM_GRID_GHOST : NM_GRID_FILL) |
                                 (core[l] ? NM_GRID_CORE | NM_GRID_WALK : 0));
            g->src_span = src;
            g->raised = up && cnt;
        }
    return NM_OK;
}

/* Window cell of a Ghost / Fill record of a region window. */
static size_t ghost_local(const zone_work *zw, const ghost_rec *g, int32_t li0, int32_t lj0, int32_t lw)
{
    uint32_t nx = (uint32_t)zw->win.nx;
    return (size_t)((int32_t)(g->cell / nx) - lj0) * (size_t)lw + (size_t)((int32_t)(g->cell % nx) - li0);
}

/* Does column (i, j) hold a span of region r (its rid)? */
static bool column_has(const zone_work *zw, int32_t i, int32_t j, uint32_t r)
{
    const nm_span_table *T = &zw->T;
    uint32_t first, n = nm_span_cell_spans(T, (uint32_t)j * (uint32_t)T->win.nx + (uint32_t)i, &first);
    for (uint32_t s = first; s < first + n; s++)
        if (zw->rid[s] == r) return true;
    return false;
}

/* The heights of region r nearest each other in window cells a and b (global): the pair a crack
 * between them joins; a levelled cell (la / lb not NaN) has that one height, another cell its
 * spans of the region. False when either has none. */
static bool nearest_pair(const zone_work *zw, uint32_t r, uint32_t a, float la, uint32_t b, float lb, double *ha,
                         double *hb)
{
    const nm_span_table *T = &zw->T;
    uint32_t fa, na = nm_span_cell_spans(T, a, &fa), fb, nb = nm_span_cell_spans(T, b, &fb);
    if (!isnan(la)) na = 1;
    if (!isnan(lb)) nb = 1;
    double best = INFINITY;
    for (uint32_t x = fa; x < fa + na; x++)
        for (uint32_t y = fb; y < fb + nb; y++) {
            if ((isnan(la) && zw->rid[x] != r + 1) || (isnan(lb) && zw->rid[y] != r + 1))
                continue;
            double hx = isnan(la) ? T->sp_h[x] : la, hy = isnan(lb) ? T->sp_h[y] : lb;
            double d = fabs(hx - hy);
            if (d < best) {
                best = d;
                *ha = hx;
                *hb = hy;
            }
        }
    return best < INFINITY;
}

/* A crack across a riser (issue 12): a layer cell off the region's surface (a rim span with
 * ins = 0, or a cell FillHoles made up) that CloseCracks closes across x or y (a surface cell,
 * ins = 1, within k = 2 cells on both sides), whose nearest spans along that axis (the rims where
 * the two meshes stop, or the surfaces) are more than kStepUp apart with the collision geometry
 * standing between them (the seam bridge's riser gate: from kFallClimb over the lower to 0.1 m
 * under the higher, between the two cells' centres). That is the eroded strip the Recast path
 * keeps at a rise's top and foot (tools/navbake/recast_shim.cpp), not a seam between two meshes.
 * True with *h = the height of the side whose surface is nearer (the higher on a tie: the strips
 * are the same width, so the face stands in the crack's middle); an axis whose sides are within
 * kStepUp (a seam) or have no face between them (a slope) keeps the cell as it is. lvl (NULL in
 * the first round): the heights earlier rounds levelled cells to (NaN: not levelled); such a cell
 * counts as surface, and a cell judged against one takes the side the face does not part it from.
 * A made-up cell with a span of the region on both sides within k but no surface (the corner where
 * a top's strip meets its side's, both rims) is judged on those spans, the nearer side by distance:
 * CloseCracks closes it in a later round, and at its rims' mean it was a half step up the face. */
static bool riser_crack(const zone_work *zw, uint32_t r, int32_t gi, int32_t gj, const uint8_t *core,
                        const float *lvl, int32_t li0, int32_t lj0, int32_t lw, int32_t lh, float *h)
{
    const nm_bake_grid_opts *o = zw->opts;
    const nm_span_table *T = &zw->T;
    const int32_t nx = T->win.nx, ny = T->win.ny, k = 2;
    bool riser = false;
    for (int axis = 0; axis < 2; axis++) {
        const int32_t di = axis == 0, dj = axis == 1;
        int32_t near[2] = {0, 0}, surf[2] = {0, 0};
        float lv[2] = {NAN, NAN}; /* a side's levelled height, from an earlier round */
        for (int sgn = 0; sgn < 2; sgn++)
            for (int32_t a = 1; a <= k && !surf[sgn]; a++) {
                int32_t d = sgn ? a : -a, ni = gi + d * di, nj = gj + d * dj;
                int32_t li = ni - li0, lj = nj - lj0;
                if (ni < 0 || nj < 0 || ni >= nx || nj >= ny) break;
                bool in = li >= 0 && lj >= 0 && li < lw && lj < lh;
                size_t ln = in ? (size_t)lj * (size_t)lw + (size_t)li : 0;
                bool lev = lvl && in && !isnan(lvl[ln]);
                if (!near[sgn] && (lev || column_has(zw, ni, nj, r + 1))) {
                    near[sgn] = d;
                    if (lev) lv[sgn] = lvl[ln];
                }
                if (in && (core[ln] || lev)) surf[sgn] = a;
            }
        if (!surf[0] || !surf[1]) {
            /* a made-up cell where a top's strip meets its side's (the crack's corner): its sides
             * along the axis are rims, no surface within k, and CloseCracks closes it only in a
             * later round; it is judged on the rims beside it, nearer side by distance */
            if (!near[0] || !near[1] || column_has(zw, gi, gj, r + 1))
                continue; /* CloseCracks does not close it across this axis */
            surf[0] = -near[0];
            surf[1] = near[1];
        }
        uint32_t ca = (uint32_t)((gj + near[0] * dj) * nx + gi + near[0] * di);
        uint32_t cb = (uint32_t)((gj + near[1] * dj) * nx + gi + near[1] * di);
        double ha = 0, hb = 0;
        if (!nearest_pair(zw, r, ca, lv[0], cb, lv[1], &ha, &hb) || fabs(ha - hb) <= NM_kStepUp)
            return false; /* a seam across this axis */
        double ua, va, ub, vb;
        cell_centre(&zw->win, ca, &ua, &va);
        cell_centre(&zw->win, cb, &ub, &vb);
        const double lo = fmin(ha, hb) + NM_kFallClimb, hi = fmax(ha, hb) - 0.1;
        if (!o->gap_blocked(o->drop_ctx, ua, va, ub, vb, lo, hi))
            return false; /* a slope, no face between: a seam */
        if (!riser) {
            *h = (float)(surf[0] < surf[1] ? ha : surf[1] < surf[0] ? hb : fmax(ha, hb));
            /* a later round: a levelled side is a crack's cell, not its surface, so the nearer
             * surface says little; the cell takes the side the face does not part it from */
            if (lvl) {
                double uc, vc;
                cell_centre(&zw->win, (uint32_t)(gj * nx + gi), &uc, &vc);
                bool fa = o->gap_blocked(o->drop_ctx, ua, va, uc, vc, lo, hi);
                bool fb = o->gap_blocked(o->drop_ctx, uc, vc, ub, vb, lo, hi);
                if (fa != fb) *h = (float)(fa ? hb : ha);
            }
        }
        riser = true;
    }
    return riser;
}

/* Appends c to the growing list *v (n entries, room for *cap); false when out of memory. */
static bool push_raised(raised_cell **v, size_t *n, size_t *cap, raised_cell c)
{
    if (*n == *cap) {
        size_t n2 = *cap ? 2 * *cap : 64;
        raised_cell *p = nm_realloc(*v, n2 * sizeof *p);
        if (!p) return false;
        *v = p;
        *cap = n2;
    }
    (*v)[(*n)++] = c;
    return true;
}

static int raised_cmp(const void *a, const void *b)
{
    size_t x = ((const raised_cell *)a)->l, y = ((const raised_cell *)b)->l;
    return (x > y) - (x < y);
}

/* The cells of a crack across a riser (riser_crack) take the height of their side: the lone rim
 * span of a column of one span, and a made-up cell's Ghost record (raised[]: local cell, height;
 * ascending). CloseCracks then closes the crack as the edges of the top and the foot, and RiseOk
 * sees the rise's face where they meet, as it sees a face between a top and its foot next to each
 * other (垂直可达判据: a step up over kStepUp refused, a step down passed): the rims' and the
 * made-up heights were a ramp of small steps up the face (navcat-bridges leg 20 climbed 0.58 m onto
 * the steep grass block's side). In CloseCracks' rounds: a cell an earlier round levelled is a
 * side of the cracks next to it (leg 43 climbed the island's corner through a cell CloseCracks
 * closes in its second round). Every cell of a round is judged on the heights before it, then the
 * round's cells are set, so the result does not depend on the order. */
static int level_riser_cracks(zone_work *zw, uint32_t r, int32_t li0, int32_t lj0, int32_t lw, int32_t lh,
                              const uint8_t *layer, const uint8_t *core, raised_cell **raised, size_t *nraised,
                              nm_error *err)
{
    *raised = NULL;
    *nraised = 0;
    if (!zw->opts || !zw->opts->gap_blocked)
        return NM_OK;
    nm_span_table *T = &zw->T;
    const size_t nc = (size_t)lw * (size_t)lh;
    raised_cell *found = NULL;
    float *lvl = NULL; /* per local cell: the height it was levelled to, NaN if not */
    size_t cap = 0, rcap = 0;
    int rc = NM_OK;
    /* In CloseCracks' rounds: a crack that closes against a cell an earlier round levelled (the
     * corner where a top's eroded strip meets its side's) is judged with that cell as its side. */
    for (int round = 0; round < 4; round++) {
        size_t nf = 0;
        for (int32_t lj = 0; lj < lh; lj++)
            for (int32_t li = 0; li < lw; li++) {
                size_t l = (size_t)lj * (size_t)lw + (size_t)li;
                int32_t gi = li + li0, gj = lj + lj0;
                float h = 0;
                if (!layer[l] || core[l] || (lvl && !isnan(lvl[l])) || gi < 0 || gj < 0 || gi >= T->win.nx ||
                    gj >= T->win.ny || !riser_crack(zw, r, gi, gj, core, lvl, li0, lj0, lw, lh, &h))
                    continue;
                if (!push_raised(&found, &nf, &cap, (raised_cell){l, h})) goto nomem;
            }
        if (!nf) break;
        if (!lvl) {
            if (!(lvl = nm_malloc(nc * sizeof *lvl))) goto nomem;
            for (size_t l = 0; l < nc; l++) lvl[l] = NAN;
        }
        /* every cell of the round was judged on the heights before it; now set them: the rims
         * (real spans) at once, the made-up cells listed for region_ghosts */
        for (size_t q = 0; q < nf; q++) {
            const raised_cell c = found[q];
            if (layer[c.l] != LAYER_REAL) {
                if (!push_raised(raised, nraised, &rcap, c)) goto nomem;
                lvl[c.l] = c.h;
                continue;
            }
            int32_t gi = (int32_t)(c.l % (size_t)lw) + li0, gj = (int32_t)(c.l / (size_t)lw) + lj0;
            uint32_t first, n = nm_span_cell_spans(T, (uint32_t)gj * (uint32_t)T->win.nx + (uint32_t)gi, &first);
            if (n == 1 && zw->rid[first] == r + 1) {
                T->sp_h[first] = c.h;
                lvl[c.l] = c.h;
            }
        }
    }
    if (*nraised > 1) qsort(*raised, *nraised, sizeof **raised, raised_cmp); /* ascending cells */
    goto done;
nomem:
    rc = nm_fail(err, NM_ERR_NOMEM, "region %u: raised cells", r + 1);
done:
    nm_free(found);
    nm_free(lvl);
    return rc;
}

/* A made-up cell of the layer (FillHoles' layer == 1) with a solid standing across it at a body's
 * height (solid_across from kBumpUp over the mean of the region's spans round it, the height its
 * Ghost record takes) is protected, as a thin wall's footprint span is (issue 12): Recast's eroded
 * strips on both faces of a wall thinner than about 0.2 m (a hollow block's side, whose inside
 * Recast keeps as floor) leave a crack of two or three cells with no span at all, and CloseCracks
 * joined the floors across it (sauer-pandora leg 14 of --random 60 --seed 2 walked into a pillar
 * through its face, audit `solid`). */
static void protect_walled_holes(const zone_work *zw, uint32_t r, int32_t li0, int32_t lj0, int32_t lw,
                                 int32_t lh, const uint8_t *layer, uint8_t *prot)
{
    const nm_span_table *T = &zw->T;
    const int32_t nx = T->win.nx, ny = T->win.ny;
    for (int32_t lj = 0; lj < lh; lj++)
        for (int32_t li = 0; li < lw; li++) {
            size_t l = (size_t)lj * (size_t)lw + (size_t)li;
            if (layer[l] != 1) continue;
            int32_t gi = li + li0, gj = lj + lj0;
            double sum = 0.0;
            uint32_t cnt = 0;
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                    int32_t ni = gi + di, nj = gj + dj;
                    if ((!di && !dj) || ni < 0 || nj < 0 || ni >= nx || nj >= ny) continue;
                    uint32_t first, n = nm_span_cell_spans(T, (uint32_t)nj * (uint32_t)nx + (uint32_t)ni, &first);
                    for (uint32_t k = first; k < first + n; k++)
                        if (zw->rid[k] == r + 1) {
                            sum += T->sp_h[k];
                            cnt++;
                        }
                }
            if (cnt && solid_across(zw, (uint32_t)gj * (uint32_t)nx + (uint32_t)gi, sum / cnt, NM_kBumpUp))
                prot[l] = 1;
        }
}

/* 5. per region: layer, Core, Ghost / Fill, clearance, sealed clearance, medial axis. Each
 * window array is freed once its column is written (a terrain region's window is the zone). */
static int region_chunk(void *ctx, size_t chunk)
{
    zone_work *zw = ctx;
    nm_error *err = &zw->errs[chunk];
    uint32_t r = (uint32_t)chunk; /* region index rid - 1 */
    int32_t halo = NM_kFieldHalo;
    int32_t li0 = zw->bbox[4 * r] - halo, lj0 = zw->bbox[4 * r + 1] - halo;
    int32_t lw = zw->bbox[4 * r + 2] - zw->bbox[4 * r] + 1 + 2 * halo;
    int32_t lh = zw->bbox[4 * r + 3] - zw->bbox[4 * r + 1] + 1 + 2 * halo;
    size_t nc = (size_t)lw * (size_t)lh;
    int rc = NM_OK;
    region_out *ro = &zw->rout[r];
    /* a large region's transforms use the workers too (output independent of the count) */
    int iw = nc >= ((size_t)1 << 22) ? zw->workers : 1;
    /* layer: LAYER_REAL where the region has a span, 1 where FillHoles made a cell up; the
     * protected cells' buffer becomes the obstacles once the cracks are closed. Layer and core
     * share one block that then holds the clearance, and the nearest sources' block holds the
     * sealed clearance: a terrain region's window is nearly the zone, and each fresh block
     * costs a page fault every 4 KB. */
    uint8_t *lc = nm_calloc(nc, 2), *prot = nm_calloc(nc, 1);
    uint8_t *layer = lc, *core = lc ? lc + nc : NULL;
    uint8_t *obst = NULL;
    uint16_t *q = NULL;
    raised_cell *raised = NULL;
    size_t nraised = 0;
    int32_t *src = NULL;
    if (!lc || !prot) goto nomem;
    /* layer / core candidates / protected cells from the region's spans (all in its box) */
    {
        column_job cj = {zw, r, li0, lj0, lw, lh, NULL, COL_LAYER, layer, core, prot};
        size_t rows = (size_t)(zw->bbox[4 * r + 3] - zw->bbox[4 * r + 1] + 1);
        (void)nm_parallel_chunks((rows + COLUMN_ROWS - 1) / COLUMN_ROWS, iw, column_rows, &cj);
    }
    rc = nm_grid_fill_holes(lw, lh, layer, NULL, NULL, err);
    if (rc == NM_OK) protect_walled_holes(zw, r, li0, lj0, lw, lh, layer, prot);
    if (rc == NM_OK) rc = level_riser_cracks(zw, r, li0, lj0, lw, lh, layer, core, &raised, &nraised, err);
    if (rc == NM_OK) rc = nm_grid_fill_holes(lw, lh, core, prot, NULL, err);
    if (rc != NM_OK) goto done;
    for (size_t l = 0; l < nc; l++) core[l] = core[l] && layer[l];
    rc = nm_grid_close_cracks(lw, lh, core, layer, prot, NULL, err);
    if (rc != NM_OK) goto done;
    spans_to_column(zw, r, li0, lj0, lw, lh, core, COL_FLAGS, iw);
    rc = region_ghosts(zw, r, li0, lj0, lw, lh, layer, core, raised, nraised, err);
    if (rc != NM_OK) goto done;
    /* clearance: every cell outside the region's core is an obstacle */
    obst = prot;
    prot = NULL;
    for (size_t l = 0; l < nc; l++) obst[l] = core[l] ? 0 : 1;
    layer = core = NULL;
    q = (uint16_t *)lc;
    rc = nm_grid_clearance(lw, lh, obst, q, iw, err);
    if (rc != NM_OK) goto done;
    spans_to_column(zw, r, li0, lj0, lw, lh, q, COL_CLR, iw);
    for (size_t g = 0; g < ro->nghosts; g++) ro->ghosts[g].clr = q[ghost_local(zw, &ro->ghosts[g], li0, lj0, lw)];
    nm_free(lc);
    lc = NULL;
    q = NULL;
    /* the region's kept walls are obstacles too from here on (sealed) */
    seal_walls(zw, r, li0, lj0, lw, lh, obst);
    /* medial axis over the sealed obstacles, judged at the region's cells from the sources alone
     * (before the sealed clearance: the sources and the clr2d column never take memory at once) */
    src = nm_malloc(nc * sizeof *src);
    if (!src) goto nomem;
    rc = medial_column(zw, r, li0, lj0, lw, lh, obst, src, iw, err);
    if (rc != NM_OK) goto done;
    for (size_t g = 0; g < ro->nghosts; g++) {
        size_t l = ghost_local(zw, &ro->ghosts[g], li0, lj0, lw);
        ro->ghosts[g].medial = nm_grid_medial_cell(lw, lh, src, (int32_t)(l % (size_t)lw), (int32_t)(l / (size_t)lw));
    }
    /* sealed clearance, in the sources' block shrunk in place (realloc gives back its tail: the
     * window's peak stays the sources') */
    q = nm_realloc(src, nc * sizeof *q);
    if (!q) goto nomem;
    src = (int32_t *)q;
    rc = nm_grid_clearance(lw, lh, obst, q, iw, err);
    if (rc != NM_OK) goto done;
    spans_to_column(zw, r, li0, lj0, lw, lh, q, COL_CLR2D, iw);
    for (size_t g = 0; g < ro->nghosts; g++) {
        ghost_rec *G = &ro->ghosts[g];
        G->clr2d = (uint16_t)(G->clr - q[ghost_local(zw, G, li0, lj0, lw)]);
    }
    goto done;
nomem:
    rc = nm_fail(err, NM_ERR_NOMEM, "region %u: out of memory (%zu cells)", r + 1, nc);
done:
    nm_free(lc); nm_free(prot); nm_free(obst); nm_free(src); nm_free(raised);
    if (rc != NM_OK) nm_error_prefix(err, "region %u", r + 1);
    return rc;
}

/* The Ghost record of region r (index rid - 1) in zone cell c, or NULL (a region's list is in cell order). */
static ghost_rec *region_ghost_at(const zone_work *zw, uint32_t r, uint32_t c)
{
    const region_out *ro = &zw->rout[r];
    size_t lo = 0, hi = ro->nghosts;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (ro->ghosts[m].cell < c) lo = m + 1; else hi = m;
    }
    return lo < ro->nghosts && ro->ghosts[lo].cell == c ? &ro->ghosts[lo] : NULL;
}

/* A made-up cell's step of kGhostStep or more (its height is its neighbours' mean, so such cells
 * can make a stair of small steps up a face the walkable mesh left a gap at) */
static const double kGhostStep = 0.2; /* m */

/* A solid standing on the step between cells a and b: the collision geometry crosses the segment
 * between their centres from 0.1 m to 1.9 m above top, the higher of the two heights (a body on
 * the step, the two surfaces left out). */
static bool solid_on_step(const zone_work *zw, uint32_t a, uint32_t b, double top)
{
    double ua, va, ub, vb;
    cell_centre(&zw->win, a, &ua, &va);
    cell_centre(&zw->win, b, &ub, &vb);
    return zw->opts->gap_blocked(zw->opts->drop_ctx, ua, va, ub, vb, top + 0.1, top + 1.9);
}

/* Step bits of the cells of a crack across a riser (issue 12; after step 7, which judges spans
 * only). Such a cell is made up (a Ghost record) at its side's height, so the face between the
 * crack's two sides lies between two Ghost records, or a Ghost and the other side's rim, and no
 * span's bits said that the step up it is refused: the search refuses it (RiseOk on the window's
 * heights), but the sight checks read the bits (立面禁步, crossesStep), and the string pull drew a
 * chord from the foot over the top and back down through the face (navcat-bridges legs 35 and 44
 * of --random 60 --seed 2, audit `solid` 0.03 m inside the middle island's south face). The
 * article judges the step bits after the made-up spans exist (预烘场's table: 逐方向判能否向上一步
 * follows the Ghost spans); here only pairs with a raised cell are judged, by the rule of the
 * spans' bits without the bump and dip allowances (nm_grid_riser_pair_bits: at a top's corner the
 * diagonal step up from the foot read as a narrow bump): the partner is the region's record (span
 * or Ghost) in the neighbour column nearest the height within kClimb, and the bits go on the
 * record of the pair's first column. In a gated bake every Ghost record but a Fill (at its
 * neighbours' mean, or a raised one at its side's height) also refuses a pair of kGhostStep or
 * more with a solid standing on the step (solid_on_step): a few of them made a stair of small
 * steps up a ramp's side (navcat-bridges at 0.70 and 0.71 px/m), and a raised one, whose pairs
 * below kStepUp the riser's rule passes, a stair up a block's chamfered corner (0.74 px/m). */
static void riser_crack_steps(zone_work *zw)
{
    const bool gated = zw->opts && zw->opts->gap_blocked;
    const nm_span_table *T = &zw->T;
    const int32_t nx = T->win.nx, ny = T->win.ny;
    for (uint32_t r = 0; r < zw->nreg; r++)
        for (size_t q = 0; q < zw->rout[r].nghosts; q++) {
            ghost_rec *g = &zw->rout[r].ghosts[q];
            const bool solid_rule = gated && !(g->flags & NM_GRID_FILL); /* solid_on_step judges it */
            if (!g->raised && !solid_rule) continue;
            const int32_t i = (int32_t)(g->cell % (uint32_t)nx), j = (int32_t)(g->cell / (uint32_t)nx);
            for (int d = 0; d < 4; d++)
                for (int s = 1; s >= -1; s -= 2) {
                    const int dx = nm_grid_step_dx[d], dy = nm_grid_step_dy[d];
                    const int32_t ni = i + s * dx, nj = j + s * dy;
                    if (ni < 0 || nj < 0 || ni >= nx || nj >= ny) continue;
                    const uint32_t nc = (uint32_t)nj * (uint32_t)nx + (uint32_t)ni;
                    /* the partner: the nearest record of the region within kClimb (lower on ties) */
                    uint32_t first, n = nm_span_cell_spans(T, nc, &first), best = UINT32_MAX;
                    double bd = INFINITY, hb = 0;
                    for (uint32_t k = first; k < first + n; k++) {
                        double dd = fabs((double)T->sp_h[k] - g->h);
                        if (zw->rid[k] == r + 1 && dd <= NM_kClimb && dd < bd) {
                            bd = dd;
                            best = k;
                            hb = T->sp_h[k];
                        }
                    }
                    ghost_rec *pg = region_ghost_at(zw, r, nc);
                    if (pg && (pg->flags & NM_GRID_FILL)) pg = NULL;
                    if (pg) {
                        double dd = fabs((double)pg->h - g->h);
                        if (dd <= NM_kClimb && (dd < bd || (dd == bd && pg->h < hb))) {
                            bd = dd;
                            hb = pg->h;
                            best = UINT32_MAX;
                        } else pg = NULL;
                    }
                    if (bd == INFINITY) continue;
                    /* bits of the pair from its first column in the canonical direction */
                    const int32_t fi = s > 0 ? i : ni, fj = s > 0 ? j : nj;
                    uint8_t bits = 0;
                    if (g->raised)
                        bits = s > 0 ? nm_grid_riser_pair_bits(T, zw->gate, zw->rid, r + 1, i, j, dx, dy, g->h, hb)
                                     : nm_grid_riser_pair_bits(T, zw->gate, zw->rid, r + 1, ni, nj, dx, dy, hb, g->h);
                    if (bits != 3 && solid_rule && fabs(g->h - hb) >= kGhostStep &&
                        solid_on_step(zw, g->cell, nc, fmax(g->h, hb)))
                        bits |= nm_grid_closed_pair_bits(T, zw->gate, zw->rid, r + 1, fi, fj, dx, dy);
                    if (!bits) continue;
                    bits = (uint8_t)(bits << (2 * d));
                    if (s > 0) g->steps |= bits;
                    else if (pg) pg->steps |= bits;
                    else zw->ssteps[best] |= bits;
                }
        }
}

/* ---- step bits and the span graph ---------------------------------------------------------- */

/* The span graph's edges are judged per unordered neighbour pair, in the 4 forward directions
 * below: for span u and the spans v of the same region in column (i + dx, j + dy), f = RiseOk
 * (u -> v) and r = RiseOk(v -> u); a diagonal pair only when both orthogonal columns hold a span
 * of the region (no corner cutting, the same condition both ways). Pairs with f and r are in one
 * strongly connected component, so they are merged up front (union-find) and Tarjan runs on the
 * quotient graph of the one-way edges only: the components and the DAG are those of the full
 * graph, at 4 bytes a span instead of a full edge list. */
static const int kFwdDx[4] = {1, 0, 1, -1};
static const int kFwdDy[4] = {0, 1, 1, 1};


/* Calls fn for each pair (u, v, d) of span k in column (i, j) in forward direction order. The diagonals' corner
 * columns are the east and south columns already walked (and the west one). */
typedef void (*pair_fn)(void *ctx, uint32_t u, uint32_t v, bool f, bool r);
static void judge_pairs(const zone_work *zw, uint32_t k, int32_t i, int32_t j, pair_fn fn, void *ctx)
{
    const nm_span_table *T = &zw->T;
    uint32_t nx = (uint32_t)T->win.nx;
    uint32_t r = zw->rid[k];
    bool has[2] = {false, false}; /* east, south column holds a span of r */
    for (int d = 0; d < 4; d++) {
        int dx = kFwdDx[d], dy = kFwdDy[d];
        int32_t ni = i + dx, nj = j + dy;
        if (ni < 0 || nj < 0 || ni >= T->win.nx || nj >= T->win.ny) continue;
        /* no corner cutting: both orthogonal columns hold a span of the region */
        if (d == 2 && !(has[0] && has[1])) continue;
        if (d == 3 && !(has[1] && column_has(zw, i - 1, j, r))) continue;
        uint32_t first, cnt = nm_span_cell_spans(T, (uint32_t)nj * nx + (uint32_t)ni, &first);
        bool found = false;
        for (uint32_t s = first; s < first + cnt; s++) {
            if (zw->rid[s] != r) continue;
            bool f = nm_grid_rise_gentle(T->sp_h[k], T->sp_h[s]) ||
                     nm_grid_rise_ok(T, zw->gate, i, j, dx, dy, T->sp_h[k], T->sp_h[s]);
            bool b = nm_grid_rise_gentle(T->sp_h[s], T->sp_h[k]) ||
                     nm_grid_rise_ok(T, zw->gate, ni, nj, -dx, -dy, T->sp_h[s], T->sp_h[k]);
            if ((zw->sflags[k] | zw->sflags[s]) & SPAN_SEALED) f = b = false;
            fn(ctx, k, s, f, b);
            found = true;
        }
        if (d < 2) has[d] = found;
    }
}

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

/* Smaller root wins: a root is always its set's smallest span, whatever the order of the merges. */
static void uf_union(uint32_t *p, uint32_t u, uint32_t v)
{
    if (p[u] == p[v]) return; /* one parent, one set: the common case on open ground */
    uint32_t a = uf_find(p, u), b = uf_find(p, v);
    if (a < b) p[b] = a;
    else if (b < a) p[a] = b;
}

/* One chunk [a, b) of spans of steps 6 and 7: its step bits, its one-way edges (in span order)
 * and its two-way pairs, merged at once when both spans are in the chunk (the chunk's slice of
 * the union-find is its own), kept for the serial merge when the partner lies beyond it. The
 * chunks depend on the span count only, so the output does not depend on the workers. */
typedef struct graph_chunk {
    uint32_t a, b;
    uint32_t *e; size_t n, cap;      /* one-way edges (from, to) */
    uint32_t *x; size_t nx, xcap;    /* two-way pairs (u, v), v >= b */
    bool oom;
} graph_chunk;

typedef struct graph_work {
    zone_work *zw;
    uint32_t *par;       /* per span: union-find parent */
    graph_chunk *ch;
    uint32_t per;        /* spans per chunk */
} graph_work;

typedef struct pair_sink {
    uint32_t *par;
    graph_chunk *c;
} pair_sink;

static bool push_pair(uint32_t **v, size_t *n, size_t *cap, uint32_t a, uint32_t b)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        uint32_t *p2 = nm_realloc(*v, nc * 2 * sizeof *p2);
        if (!p2) return false;
        *v = p2;
        *cap = nc;
    }
    (*v)[2 * *n] = a;
    (*v)[2 * *n + 1] = b;
    (*n)++;
    return true;
}

/* The partner v of a forward pair is always a later span (a later cell) than u. */
static void sink_pair(void *ctx, uint32_t u, uint32_t v, bool f, bool r)
{
    pair_sink *ps = ctx;
    graph_chunk *c = ps->c;
    if (f && r) {
        if (v < c->b) uf_union(ps->par, u, v);
        else if (!push_pair(&c->x, &c->nx, &c->xcap, u, v)) c->oom = true;
        return;
    }
    if (!f && !r) return;
    if (!push_pair(&c->e, &c->n, &c->cap, f ? u : v, f ? v : u)) c->oom = true;
}

/* The cell of span k from the lookup index alone (sp_cell is freed after the raster): the
 * occupied cell o holding k by bisection of cs, then its cell. */
static uint32_t span_cell(const nm_span_table *T, uint32_t k, uint32_t *o_out)
{
    uint32_t lo = 0, hi = T->nocc; /* cs[lo] <= k < cs[hi] */
    while (hi - lo > 1) {
        uint32_t m = lo + (hi - lo) / 2;
        if (T->cs[m] <= k) lo = m; else hi = m;
    }
    *o_out = lo;
    return nm_span_occupied_cell(T, lo);
}

static int graph_chunk_fn(void *ctx, size_t chunk)
{
    graph_work *gw = ctx;
    zone_work *zw = gw->zw;
    const nm_span_table *T = &zw->T;
    graph_chunk *c = &gw->ch[chunk];
    pair_sink ps = {gw->par, c};
    if (c->a >= c->b) return NM_OK;
    for (uint32_t k = c->a; k < c->b; k++) gw->par[k] = k;
    const uint32_t nx = (uint32_t)T->win.nx;
    uint32_t o, cell = span_cell(T, c->a, &o), j = cell / nx, row0 = j * nx;
    for (uint32_t k = c->a; k < c->b && !c->oom; k++) {
        /* spans come in cell order: the cell and its row are carried along */
        if (k == T->cs[o + 1]) {
            o++;
            cell = nm_span_next_occupied(T, cell);
        }
        while (cell - row0 >= nx) { j++; row0 += nx; }
        int32_t i = (int32_t)(cell - row0);
        uint8_t st = nm_grid_step_bits_at(T, zw->gate, zw->rid, k, i, (int32_t)j);
        if (st) zw->ssteps[k] = st; /* sparse: most spans have no forbidden step */
        judge_pairs(zw, k, i, (int32_t)j, sink_pair, &ps);
    }
    return c->oom ? NM_ERR_NOMEM : NM_OK;
}

/* Steps 6 and 7 over parallel chunks of spans, then the serial part: the two-way pairs across
 * chunks merged in chunk order, the classes, Tarjan on the quotient graph of the one-way edges;
 * out->comp is per span. */
static int span_graph(zone_work *zw, const nm_bake_grid_opts *opts, nm_scc *out, nm_error *err)
{
    const uint32_t ns = zw->T.nspans;
    graph_work gw = {zw, NULL, NULL, 16384};
    if (ns / 64 > gw.per) gw.per = ns / 64 + 1;
    size_t nch = ((size_t)ns + gw.per - 1) / gw.per; /* 0 only without spans */
    uint32_t *off = NULL, *adj = NULL, *cls = NULL;
    nm_scc q;
    memset(&q, 0, sizeof q);
    int rc = NM_OK;
    gw.par = nm_malloc(((size_t)ns + 1) * sizeof *gw.par);
    gw.ch = nm_calloc(nch + 1, sizeof *gw.ch);
    if (!gw.par || !gw.ch) { rc = nm_fail(err, NM_ERR_NOMEM, "span graph: out of memory"); goto done; }
    for (size_t c = 0; c < nch; c++) {
        gw.ch[c].a = (uint32_t)(c * gw.per);
        gw.ch[c].b = (uint32_t)((c + 1) * gw.per < ns ? (c + 1) * gw.per : ns);
    }
    rc = nm_parallel_chunks(nch, nm_workers_for((size_t)ns, opts->workers), graph_chunk_fn, &gw);
    if (rc != NM_OK) { rc = nm_fail(err, NM_ERR_NOMEM, "span graph: out of memory"); goto done; }
    progress(opts, "scc", 0.7);
    size_t ne = 0;
    for (size_t c = 0; c < nch; c++) {
        for (size_t k = 0; k < gw.ch[c].nx; k++) uf_union(gw.par, gw.ch[c].x[2 * k], gw.ch[c].x[2 * k + 1]);
        nm_free(gw.ch[c].x);
        gw.ch[c].x = NULL;
        ne += gw.ch[c].n;
    }
    /* classes numbered in order of their first span */
    uint32_t ncls = 0;
    cls = gw.par; /* reused: par[k] becomes the class of span k */
    gw.par = NULL;
    /* a root is the smallest span of its set and parents are smaller than children, so one
     * increasing pass flattens every path, and a second numbers the classes in place */
    for (uint32_t k = 0; k < ns; k++) cls[k] = cls[cls[k]];
    for (uint32_t k = 0; k < ns; k++) cls[k] = cls[k] == k ? ncls++ : cls[cls[k]];
    /* quotient graph CSR over the one-way edges between classes (chunk order = span order) */
    off = nm_calloc((size_t)ncls + 2, sizeof *off);
    adj = nm_malloc((ne + 1) * sizeof *adj);
    if (!off || !adj) { rc = nm_fail(err, NM_ERR_NOMEM, "span graph: out of memory"); goto done; }
    for (size_t c = 0; c < nch; c++)
        for (size_t e = 0; e < gw.ch[c].n; e++) off[cls[gw.ch[c].e[2 * e]] + 1]++;
    for (uint32_t c = 0; c < ncls; c++) off[c + 1] += off[c];
    {
        uint32_t *fill = nm_malloc(((size_t)ncls + 1) * sizeof *fill);
        if (!fill) { rc = nm_fail(err, NM_ERR_NOMEM, "span graph: out of memory"); goto done; }
        memcpy(fill, off, ((size_t)ncls + 1) * sizeof *fill);
        for (size_t c = 0; c < nch; c++) {
            const uint32_t *E = gw.ch[c].e;
            for (size_t e = 0; e < gw.ch[c].n; e++) adj[fill[cls[E[2 * e]]]++] = cls[E[2 * e + 1]];
            nm_free(gw.ch[c].e);
            gw.ch[c].e = NULL;
        }
        nm_free(fill);
    }
    nm_graph g = {ncls, off, adj};
    rc = nm_grid_scc(&g, &q, err);
    if (rc != NM_OK) goto done;
    /* per span: the component of its class (numbered by smallest class = smallest span) */
    for (uint32_t k = 0; k < ns; k++) cls[k] = q.comp[cls[k]];
    nm_free(q.comp);
    q.comp = cls;
    cls = NULL;
    q.n = ns;
    *out = q;
    memset(&q, 0, sizeof q);
done:
    if (gw.ch)
        for (size_t c = 0; c < nch; c++) { nm_free(gw.ch[c].e); nm_free(gw.ch[c].x); }
    nm_free(gw.ch);
    nm_free(gw.par); nm_free(off); nm_free(adj); nm_free(cls);
    nm_scc_free(&q);
    return rc;
}

/* ---- records -------------------------------------------------------------------------------- */


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
    nm_free(zw->rid); nm_free(zw->sflags); nm_free(zw->sclr);
    nm_free(zw->sclr2d); nm_free(zw->ssteps);
    nm_free(zw->bbox); nm_free(zw->walls);
    nm_free(zw->kw_start); nm_free(zw->kw_list);
    if (zw->rout)
        for (uint32_t r = 0; r < zw->nreg; r++) nm_free(zw->rout[r].ghosts);
    nm_free(zw->rout);
    nm_free(zw->errs);
}

/* ---- records --------------------------------------------------------------------------------
 * Step 9 never builds the whole zone's record table: the records of each BGRD tile window are
 * made from the per-span sources and the Ghost / Fill records, encoded (BGRD payload and FSPN
 * tile) and dropped, tile after tile (the band plan of README.md: the zone's output was 23 bytes a
 * record plus a 4-byte cell index, the bake's memory peak). The records of a cell in natural
 * order are its spans (span order) then its Ghost / Fill records (region order); the canonical
 * order is a stable insertion sort of that. */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The Ghost / Fill records of every region, concatenated in region order (*gall), and their
 * indices sorted by (cell, index) (*gord). The region lists are freed. */
static int sorted_ghosts(zone_work *zw, ghost_rec **gall, uint32_t **gord, size_t *count, nm_error *err)
{
    size_t G = 0;
    for (uint32_t r = 0; r < zw->nreg; r++) G += zw->rout[r].nghosts;
    if (G >= UINT32_MAX) return nm_fail(err, NM_ERR_ARG, "records: %zu Ghost / Fill records", G);
    ghost_rec *all = nm_malloc((G + 1) * sizeof *all);
    uint64_t *key = nm_malloc((G + 1) * sizeof *key);
    if (!all || !key) {
        nm_free(all); nm_free(key);
        return nm_fail(err, NM_ERR_NOMEM, "records: out of memory (%zu Ghost / Fill records)", G);
    }
    size_t at = 0;
    for (uint32_t r = 0; r < zw->nreg; r++) {
        region_out *ro = &zw->rout[r];
        if (ro->nghosts) memcpy(all + at, ro->ghosts, ro->nghosts * sizeof *all);
        at += ro->nghosts;
        nm_free(ro->ghosts);
        ro->ghosts = NULL;
        ro->nghosts = 0;
    }
    for (size_t g = 0; g < G; g++) key[g] = (uint64_t)all[g].cell << 32 | (uint64_t)g;
    /* each region's list is in cell order already: a sort of nearly sorted runs */
    qsort(key, G, sizeof *key, cmp_u64);
    uint32_t *ord = (uint32_t *)key; /* in place: entry g is read before slot g is written */
    for (size_t g = 0; g < G; g++) ord[g] = (uint32_t)key[g];
    *gall = all;
    *gord = ord;
    *count = G;
    return NM_OK;
}

/* What step 9 reads: the per-span columns (the span's region is its component's, creg), the
 * components renumbered per region (gmap), the Ghost / Fill records sorted by cell. */
typedef struct rec_src {
    const zone_work *zw;
    const uint32_t *comp, *gmap, *creg;
    const ghost_rec *gall;
    const uint32_t *gord;
    size_t G;
} rec_src;

/* Records with their sidecar columns (steps2x and tax are 0 in every record: one zero column). */
typedef struct rec_buf {
    nm_grid_rec *recs;
    uint32_t *scc;
    uint16_t *clr2d;
    uint8_t *seg, *medial, *zero;
    size_t n, cap;
} rec_buf;

static void rec_buf_free(rec_buf *b)
{
    nm_free(b->recs); nm_free(b->scc); nm_free(b->clr2d);
    nm_free(b->seg); nm_free(b->medial); nm_free(b->zero);
    memset(b, 0, sizeof *b);
}

static bool rec_buf_room(rec_buf *b, size_t more)
{
    if (b->n + more <= b->cap) return true;
    size_t nc = (b->n + more) * 2 + 1024;
    void *p[6] = {nm_realloc(b->recs, nc * sizeof *b->recs), nm_realloc(b->scc, nc * sizeof *b->scc),
                  nm_realloc(b->clr2d, nc * sizeof *b->clr2d), nm_realloc(b->seg, nc),
                  nm_realloc(b->medial, nc), nm_realloc(b->zero, nc)};
    if (p[0]) b->recs = p[0];
    if (p[1]) b->scc = p[1];
    if (p[2]) b->clr2d = p[2];
    if (p[3]) b->seg = p[3];
    if (p[4]) b->medial = p[4];
    if (p[5]) {
        b->zero = p[5];
        memset(b->zero + b->cap, 0, nc - b->cap);
    }
    for (int k = 0; k < 6; k++)
        if (!p[k]) return false;
    b->cap = nc;
    return true;
}

/* First ghost (index into gord) of a cell >= c. */
static size_t ghost_lower(const rec_src *s, uint32_t c)
{
    size_t lo = 0, hi = s->G;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (s->gall[s->gord[m]].cell < c) lo = m + 1; else hi = m;
    }
    return lo;
}

/* Appends the records of zone cell c = (i, j) in canonical order, their .cell = `local`; *gq is
 * the ghost cursor (first ghost of a cell >= c), left past this cell's. */
static bool cell_records(const rec_src *s, uint32_t c, int32_t i, int32_t j, int32_t local, size_t *gq,
                         rec_buf *b)
{
    const zone_work *zw = s->zw;
    const nm_span_table *T = &zw->T;
    uint32_t first, ns = nm_span_cell_spans(T, c, &first);
    size_t ng = 0;
    while (*gq + ng < s->G && s->gall[s->gord[*gq + ng]].cell == c) ng++;
    if (!ns && !ng) return true;
    if (!rec_buf_room(b, ns + ng)) return false;
    size_t a = b->n;
    for (uint32_t k = first; k < first + ns; k++) {
        size_t o = b->n++;
        nm_grid_rec *r = &b->recs[o];
        uint8_t st = zw->ssteps[k], sf = zw->sflags[k], sg = 0;
        r->cell = local;
        r->rid = s->creg[s->comp[k]];
        r->h = T->sp_h[k];
        r->clr = zw->sclr[k];
        r->flags = (uint8_t)(sf & ~(SPAN_MEDIAL | SPAN_SEALED));
        r->steps = st;
        /* facade segment bits: orthogonal direction d with a forbidden step across a face column */
        for (int d = 0; d < 2 && st; d++) {
            if (!(st & (3u << (2 * d)))) continue;
            if (nm_grid_raster_face(T, i, j, nm_grid_step_dx[d], nm_grid_step_dy[d], 0) ||
                nm_grid_raster_face(T, i, j, nm_grid_step_dx[d], nm_grid_step_dy[d], 1))
                sg |= (uint8_t)(1u << d);
        }
        b->scc[o] = s->gmap[s->comp[k]];
        b->clr2d[o] = zw->sclr2d[k];
        b->seg[o] = sg;
        b->medial[o] = sf & SPAN_MEDIAL ? 1 : 0;
    }
    for (size_t q = 0; q < ng; q++) {
        const ghost_rec *g = &s->gall[s->gord[(*gq)++]];
        size_t o = b->n++;
        nm_grid_rec *r = &b->recs[o];
        r->cell = local;
        r->rid = g->rid;
        r->h = (g->flags & NM_GRID_FILL) ? 0.0f : g->h;
        r->clr = g->clr;
        r->flags = g->flags;
        r->steps = g->steps;
        b->scc[o] = g->src_span; /* the source span's component, set by records() */
        b->clr2d[o] = g->clr2d;
        b->seg[o] = 0;
        b->medial[o] = g->medial;
    }
    /* canonical order (stable insertion sort: a cell holds a handful of records) */
    for (size_t x = a + 1; x < b->n; x++) {
        if (nm_grid_layer_cmp(&b->recs[x - 1], &b->recs[x]) <= 0) continue;
        nm_grid_rec rx = b->recs[x];
        uint32_t xs = b->scc[x];
        uint16_t xc = b->clr2d[x];
        uint8_t xg = b->seg[x], xm = b->medial[x];
        size_t y = x;
        while (y > a && nm_grid_layer_cmp(&b->recs[y - 1], &rx) > 0) {
            b->recs[y] = b->recs[y - 1];
            b->scc[y] = b->scc[y - 1];
            b->clr2d[y] = b->clr2d[y - 1];
            b->seg[y] = b->seg[y - 1];
            b->medial[y] = b->medial[y - 1];
            y--;
        }
        b->recs[y] = rx;
        b->scc[y] = xs;
        b->clr2d[y] = xc;
        b->seg[y] = xg;
        b->medial[y] = xm;
    }
    return true;
}

/* The tiles of the zone, encoded on up to `workers` threads, each taking the next tile as soon as
 * it is free (tiles differ in work; a static share left one worker finishing alone) with its own
 * buffer; no tile depends on another or on the thread. */
typedef struct tile_pass {
    const rec_src *src;
    const nm_bgrd_tile *tiles;
    nm_grid_tiles *out;
    int32_t w, h, gx0, gy0;
    uint32_t global_regions;
    rec_buf buf[NM_WORKER_LIMIT];
    uint32_t bad[NM_WORKER_LIMIT]; /* the worker's first failing tile, or UINT32_MAX */
    nm_error errs[NM_WORKER_LIMIT];
} tile_pass;

static int encode_tile(const tile_pass *p, uint32_t t, rec_buf *b, nm_error *err)
{
    const nm_bgrd_tile *e = &p->tiles[t];
    int64_t x0 = (int64_t)e->gx0 - p->gx0, y0 = (int64_t)e->gy0 - p->gy0; /* window corner, zone-local */
    int64_t xa = x0 < 0 ? 0 : x0, xb = x0 + e->nx < p->w ? x0 + e->nx : p->w;
    int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + e->ny < p->h ? y0 + e->ny : p->h;
    b->n = 0;
    for (int64_t y = ya; y < yb && xa < xb; y++) {
        uint32_t c = (uint32_t)(y * p->w + xa);
        size_t gq = ghost_lower(p->src, c);
        for (int64_t x = xa; x < xb; x++, c++)
            if (!cell_records(p->src, c, (int32_t)x, (int32_t)y, (int32_t)((y - y0) * e->nx + (x - x0)), &gq, b))
                return nm_fail(err, NM_ERR_NOMEM, "records: tile %u: out of memory", t);
    }
    p->out->records[t] = (uint32_t)b->n;
    int rc = nm_bgrd_encode_tile(b->recs, b->n, e->nx, e->ny, p->global_regions, NM_GRID_LEVEL, &p->out->grid[t],
                                 NULL, 0, NULL, err);
    if (rc == NM_OK)
        rc = nm_bnvf_encode_spn_tile(b->recs, b->scc, b->zero, b->seg, b->zero, b->clr2d, b->medial, b->n,
                                     NM_GRID_LEVEL, &p->out->fields[t], err);
    if (rc == NM_OK && (p->out->grid[t].oom || p->out->fields[t].oom))
        rc = nm_fail(err, NM_ERR_NOMEM, "records: tile %u: out of memory", t);
    if (rc != NM_OK) nm_error_prefix(err, "tile %u", t);
    return rc;
}

static int tile_claim(void *ctx, size_t t, int worker)
{
    tile_pass *p = ctx;
    nm_error e;
    memset(&e, 0, sizeof e);
    int rc = encode_tile(p, (uint32_t)t, &p->buf[worker], &e);
    if (rc != NM_OK && t < p->bad[worker]) {
        p->bad[worker] = (uint32_t)t;
        p->errs[worker] = e;
    }
    return rc;
}

/* The whole zone's records and columns (opts->keep_records: tests read them). */
static int whole_zone(const rec_src *s, nm_bake_grid_zone *Z, nm_error *err)
{
    size_t ncell = (size_t)Z->w * (size_t)Z->h;
    rec_buf b;
    memset(&b, 0, sizeof b);
    Z->cell_start = nm_malloc((ncell + 1) * sizeof *Z->cell_start);
    if (!Z->cell_start || !rec_buf_room(&b, Z->rec_count + 1)) goto nomem;
    size_t gq = 0;
    for (size_t c = 0; c < ncell; c++) {
        Z->cell_start[c] = (uint32_t)b.n;
        if (!cell_records(s, (uint32_t)c, (int32_t)(c % (size_t)Z->w), (int32_t)(c / (size_t)Z->w), (int32_t)c, &gq, &b))
            goto nomem;
    }
    Z->cell_start[ncell] = (uint32_t)b.n;
    Z->recs = b.recs;
    Z->scc = b.scc;
    Z->clr2d = b.clr2d;
    Z->seg = b.seg;
    Z->medial = b.medial;
    Z->steps2x = b.zero;
    Z->tax = nm_calloc(b.cap + 1, 1);
    if (!Z->tax) return nm_fail(err, NM_ERR_NOMEM, "records: out of memory (%zu records)", Z->rec_count);
    return NM_OK;
nomem:
    rec_buf_free(&b);
    return nm_fail(err, NM_ERR_NOMEM, "records: out of memory (%zu records)", Z->rec_count);
}

/* The records of one cell for the links step (nm_bake_links): canonical order, .cell = c. */
typedef struct cell_ctx {
    const rec_src *src;
    int32_t w;
    rec_buf b;
    bool oom;
} cell_ctx;

static const nm_grid_rec *cell_recs_fn(void *ctx, size_t c, uint32_t *n)
{
    cell_ctx *cc = ctx;
    size_t gq = ghost_lower(cc->src, (uint32_t)c);
    cc->b.n = 0;
    if (!cell_records(cc->src, (uint32_t)c, (int32_t)(c % (size_t)cc->w), (int32_t)(c / (size_t)cc->w), (int32_t)c,
                      &gq, &cc->b))
        cc->oom = true;
    *n = (uint32_t)cc->b.n;
    return cc->b.recs;
}

/* Step 9: records tile by tile (and the links resolved to records, the record counters), from
 * the per-span sources, which are freed afterwards by the caller. comp: per span, its global
 * component; creg: per component, its region. */
static int records(zone_work *zw, const uint32_t *comp, const uint32_t *gmap, const uint32_t *creg,
                   nm_bake_grid_zone *Z, nm_error *err)
{
    rec_src s = {zw, comp, gmap, creg, NULL, NULL, 0};
    ghost_rec *gall = NULL;
    uint32_t *gord = NULL;
    nm_bgrd_tile *tiles = NULL;
    tile_pass *tp = NULL;
    cell_ctx cc;
    memset(&cc, 0, sizeof cc);
    int rc = sorted_ghosts(zw, &gall, &gord, &s.G, err);
    if (rc != NM_OK) return rc;
    s.gall = gall;
    s.gord = gord;
    const uint32_t ns = zw->T.nspans;
    Z->rec_count = (size_t)ns + s.G;
    for (size_t g = 0; g < s.G; g++) {
        uint8_t f = gall[g].flags;
        if (f & NM_GRID_FILL) Z->stats.fills++; else Z->stats.ghosts++;
        if (f & NM_GRID_DEAD) Z->stats.dead++;
        if (f & NM_GRID_WALK) Z->stats.walk++;
        if (f & NM_GRID_CORE) Z->stats.core++;
        /* a Ghost takes its source span's component, a Fill none */
        gall[g].src_span = gall[g].src_span == UINT32_MAX ? 0 : gmap[comp[gall[g].src_span]];
    }
    for (uint32_t k = 0; k < ns; k++) {
        uint8_t f = zw->sflags[k];
        if (f & NM_GRID_DEAD) Z->stats.dead++;
        if (f & NM_GRID_WALK) Z->stats.walk++;
        if (f & NM_GRID_CORE) Z->stats.core++;
    }

    nm_grid_zone_src zs = nm_bake_grid_src(Z);
    nm_grid_tiles *out = &Z->tiles;
    uint32_t tc = 0;
    rc = nm_bgrd_zone_tiling(&zs, NULL, NULL, &tc, err);
    if (rc != NM_OK) goto done;
    tiles = nm_calloc((size_t)tc + 1, sizeof *tiles);
    out->records = nm_calloc((size_t)tc + 1, sizeof *out->records);
    out->grid = nm_calloc((size_t)tc + 1, sizeof *out->grid);
    out->fields = nm_calloc((size_t)tc + 1, sizeof *out->fields);
    if (!tiles || !out->records || !out->grid || !out->fields) {
        rc = nm_fail(err, NM_ERR_NOMEM, "records: out of memory (%u tiles)", tc);
        goto done;
    }
    out->count = tc;
    rc = nm_bgrd_zone_tiling(&zs, NULL, tiles, &tc, err);
    if (rc != NM_OK) goto done;
    {
        tp = nm_calloc(1, sizeof *tp);
        if (!tp) { rc = nm_fail(err, NM_ERR_NOMEM, "records: out of memory"); goto done; }
        *tp = (tile_pass){&s, tiles, out, Z->w, Z->h, Z->gx0, Z->gy0, Z->global_regions, {{0}}, {0}, {{0}}};
        for (int k = 0; k < NM_WORKER_LIMIT; k++) tp->bad[k] = UINT32_MAX;
        rc = nm_parallel_claim(tc, NULL, nm_workers_for(Z->rec_count, zw->workers), tile_claim, tp);
        if (rc != NM_OK) {
            /* the error of the first failing tile, whichever worker met it */
            int first = 0;
            for (int k = 1; k < NM_WORKER_LIMIT; k++)
                if (tp->bad[k] < tp->bad[first]) first = k;
            *err = tp->errs[first];
            if (!err->code) nm_fail(err, rc, "records: out of memory");
            goto done;
        }
    }
    if (zw->opts->keep_records) {
        rc = whole_zone(&s, Z, err);
        if (rc != NM_OK) goto done;
    }
    /* off-mesh links -> FLNK / FOPN, from the records of their end cells */
    cc.src = &s;
    cc.w = Z->w;
    rc = nm_bake_links(zw->zc, Z, cell_recs_fn, &cc, err);
    if (rc == NM_OK && cc.oom) rc = nm_fail(err, NM_ERR_NOMEM, "links: out of memory");
done:
    rec_buf_free(&cc.b);
    if (tp)
        for (int k = 0; k < NM_WORKER_LIMIT; k++) rec_buf_free(&tp->buf[k]);
    nm_free(tp);
    nm_free(tiles);
    nm_free(gall);
    nm_free(gord);
    return rc;
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
    for (uint32_t t = 0; t < z->tiles.count; t++) {
        nm_buf_free(&z->tiles.grid[t]);
        nm_buf_free(&z->tiles.fields[t]);
    }
    nm_free(z->tiles.records); nm_free(z->tiles.grid); nm_free(z->tiles.fields);
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
    s.tiles = z->tiles.count ? &z->tiles : NULL;
    return s;
}

/* ---- banded rasterisation ---------------------------------------------------------------------
 * Rasterize + BuildSpans + AppendSeamBridge + BuildSpans in bands of rows, so the samples (several
 * per cell) never exist for the whole zone: each band window has BAND_MARGIN extra rows above and
 * below (the seam bridge's y pass looks one row out; Rasterize's centroid cell uses trunc, which
 * can pull a centroid just above the window into its first row, so that row must be a margin row
 * too). Only the band's own rows are kept, as merged spans, and PackSpans builds the zone table.
 * Every span equals the whole-zone computation's: the operators are per cell or per row pair, and
 * a cell's span heights do not depend on the sample order. */
#define BAND_MARGIN 2
#define BAND_CELLS (1u << 22) /* default opts->band_cells */ /* own cells per band, about */

typedef struct band_ctx {
    const nm_grid_window *win;
    const nm_grid_mesh *mesh;
    const nm_bake_grid_opts *opts;
    const uint32_t *bstart, *blist; /* triangles per band (CSR) */
    int32_t rows, first;            /* own rows per band; first band of the running group */
    nm_span_table *bt;              /* per slot of the group: the band window's spans */
    nm_grid_samples *samples;       /* per slot, kept from band to band: faulted in once */
    nm_span_scratch *ws;            /* per slot, the same for BuildSpans */
    uint32_t *own;                  /* per slot: first own span, end of the own rows, kept spans */
    nm_error *errs;                 /* per slot */
} band_ctx;

/* The seam bridge's gate (AppendSeamBridge's pair across a one-cell gap): a solid standing between
 * the two cell centres makes the gap no seam between two meshes, so it is not bridged.
 * - A pair more than a step apart: a solid from the fall gate's body foot over the lower one
 *   (kFallClimb) to one Recast cell height under the higher one (its own surface is no riser) is
 *   the two sides of a rise: a box's top and the floor round it, which the Recast path keeps apart
 *   (its eroded strip at rises it does not climb) but rasterises one cell apart on a diagonal edge
 *   (issue 12: recast-navtest's route walked off a 2.84 m box over the bridge and its Ghost cells,
 *   through a second box's corner).
 * - A pair within a step: a solid at a body's height over both (kBumpUp over the higher to the
 *   body's top over the lower, as solid_across) is a wall whose eroded strips left one empty cell
 *   between their rim cells (a face slanted across the lattice). Bridged, CloseCracks joined both
 *   floors through it (recast-navtest's hollow pillar, navaudit --random 100 --seed 25 leg 6). */
typedef struct seam_gate_ctx {
    const nm_bake_grid_opts *opts;
    const nm_grid_window *win;
} seam_gate_ctx;

static bool solid_in_seam(void *ctx, uint32_t a, double ha, uint32_t b, double hb)
{
    const seam_gate_ctx *g = ctx;
    double ua, va, ub, vb;
    cell_centre(g->win, a, &ua, &va);
    cell_centre(g->win, b, &ub, &vb);
    const double lo = fmin(ha, hb), hi = fmax(ha, hb);
    if (hi - lo <= NM_kStepUp)
        return g->opts->gap_blocked(g->opts->drop_ctx, ua, va, ub, vb, hi + NM_kBumpUp,
                                    lo + NM_kFallHeight - 0.1);
    return g->opts->gap_blocked(g->opts->drop_ctx, ua, va, ub, vb, lo + NM_kFallClimb, hi - 0.1);
}

/* A lower level's rim under its own cover at a solid (issue 12): a span off the walkable surface
 * (ins 0: the conservative rim of a hole) under a cover more than kClimb above it in its column, and
 * a solid at a body's height above it within one cell (the gap gate between the centres of
 * opposite neighbours, straight and diagonal), is left out of the table. It is a pillar's or a
 * wall's foot under a deck: the hole's edges are no walls of a region that holds the deck too
 * (FWAL, step 5), and the deck makes the cells Core, so nothing else keeps the lower level's
 * chords out of the solid; without the span, RiseOk and LayerOracle meet only the deck there. */
static bool rim_under_solid(const nm_bake_grid_opts *o, const nm_span_table *t, uint32_t k, uint32_t end)
{
    if (!o || !o->gap_blocked || t->sp_ins[k] == 1)
        return false;
    /* the cover is a surface over the cell's centre (ins 1), not the rim of a top next to it: a
     * platform's edge column holds its top's rim over the ground's, and both stay (they are the
     * ledge that step 5 protects) */
    bool cover = false;
    for (uint32_t a = k + 1; a < end && !cover; a++)
        cover = t->sp_ins[a] == 1 && t->sp_h[a] - t->sp_h[k] > NM_kClimb;
    if (!cover)
        return false;
    double u, v;
    cell_centre(&t->win, t->sp_cell[k], &u, &v);
    static const int d[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};
    for (int q = 0; q < 4; q++)
        if (o->gap_blocked(o->drop_ctx, u - d[q][0] * NM_kCS, v - d[q][1] * NM_kCS, u + d[q][0] * NM_kCS,
                           v + d[q][1] * NM_kCS, t->sp_h[k] + NM_kBumpUp,
                           t->sp_h[k] + NM_kFallHeight - 0.1))
            return true;
    return false;
}

/* A steep seam bridge (issue 12): AppendSeamBridge fills a one-cell gap between spans up to
 * kClimb apart with their mean, so a rise higher than a step (kStepUp) becomes two half steps
 * that RiseOk walks up. The Recast path leaves such gaps at the side of a ramp, where Recast's
 * mesh keeps the ground and the ramp apart (the given-back strip stays eroded at a rise Recast
 * does not climb; tools/navbake/recast_shim.cpp): `bridge` climbed onto its ramp from the side,
 * 0.94 m above the ground. A bridged cell's span made only by pairs more than kStepUp apart is
 * marked ins = 3 and sealed out of the span graph (no step to or from it), as a thin wall's
 * footprint is. pre_occ: the occupancy of the table before bridging (t's other cells hold the
 * same spans as there). */
static void mark_steep_bridges(const uint64_t *pre_occ, nm_span_table *t)
{
    const int32_t nx = t->win.nx, ny = t->win.ny;
    for (uint32_t q = 0; q < t->nocc; q++) {
        const uint32_t c = t->sp_cell[t->cs[q]];
        if ((pre_occ[c >> 6] >> (c & 63)) & 1u) continue; /* not a bridged cell */
        const int32_t i = (int32_t)(c % (uint32_t)nx), j = (int32_t)(c / (uint32_t)nx);
        double steep[2], gentle[2];
        int nst = 0, nge = 0;
        for (int pass = 0; pass < 2; pass++) {
            const uint32_t d = pass == 0 ? 1u : (uint32_t)nx;
            if (pass == 0 ? (i < 1 || i > nx - 2) : (j < 1 || j > ny - 2)) continue;
            const uint32_t a = c - d, b = c + d;
            double ha, hb;
            if (!((pre_occ[a >> 6] >> (a & 63)) & 1u) || !((pre_occ[b >> 6] >> (b & 63)) & 1u) ||
                !nm_grid_seam_pair(t, a, b, &ha, &hb))
                continue; /* t's cells a and b hold the spans they held before bridging */
            const double dh = fabs(ha - hb), mean = (ha + hb) / 2.0;
            if (dh > NM_kStepUp) steep[nst++] = mean;
            else gentle[nge++] = mean;
        }
        for (uint32_t k = t->cs[q]; k < t->cs[q + 1]; k++) {
            bool st = false, ge = false;
            for (int m = 0; m < nst; m++) st = st || fabs(t->sp_h[k] - steep[m]) <= NM_kMergeH;
            for (int m = 0; m < nge; m++) ge = ge || fabs(t->sp_h[k] - gentle[m]) <= NM_kMergeH;
            if (st && !ge) t->sp_ins[k] = 3;
        }
    }
}

/* The band's table with the seam bridge's spans put in: AppendSeamBridge only fills cells `pre`
 * leaves empty, so BuildSpans over the samples and the bridge samples (the article's order) gives
 * pre's spans in every other cell and the bridge samples' spans in the bridged cells; those are
 * built alone and merged in, and the band's samples are sorted once, not twice. */
static int put_bridges(const nm_grid_window *bw, nm_span_table *pre, const nm_grid_samples *bridge,
                       nm_span_table *out, nm_error *err)
{
    nm_span_table br;
    int rc = nm_grid_build_spans(bw, bridge, &br, err);
    if (rc) return rc;
    nm_grid_samples m;
    memset(&m, 0, sizeof m);
    rc = nm_grid_samples_reserve(&m, (size_t)pre->nspans + br.nspans, err);
    for (uint32_t a = 0, b = 0; rc == NM_OK && (a < pre->nspans || b < br.nspans);) {
        const bool from_pre = b == br.nspans || (a < pre->nspans && pre->sp_cell[a] < br.sp_cell[b]);
        const nm_span_table *t = from_pre ? pre : &br;
        const uint32_t k = from_pre ? a++ : b++;
        m.cell[m.n] = t->sp_cell[k];
        m.h[m.n] = t->sp_h[k];
        m.ins[m.n++] = t->sp_ins[k];
    }
    nm_span_table_free(&br);
    nm_free(pre->sp_cell); nm_free(pre->sp_h); nm_free(pre->sp_ins); nm_free(pre->cs); nm_free(pre->face);
    pre->sp_cell = NULL; pre->sp_h = NULL; pre->sp_ins = NULL; pre->cs = NULL; pre->face = NULL;
    if (rc == NM_OK) return nm_grid_pack_spans(bw, &m, out, err); /* in order: taken over */
    nm_grid_samples_free(&m);
    return rc;
}

/* One band of a group: Rasterize + BuildSpans + AppendSeamBridge + BuildSpans on its window;
 * the rims under a solid beneath their own cover are marked ins = 2 (left out when gathered),
 * the steep bridges ins = 3 (sealed). Notes the band's own spans for the gathering. */
static int band_chunk(void *ctx, size_t slot)
{
    band_ctx *c = ctx;
    nm_error *err = &c->errs[slot];
    const nm_grid_window *win = c->win;
    int32_t b = c->first + (int32_t)slot, nx = win->nx, ny = win->ny;
    int32_t own0 = b * c->rows, own1 = own0 + c->rows < ny ? own0 + c->rows : ny;
    int32_t w0 = own0 - BAND_MARGIN < 0 ? 0 : own0 - BAND_MARGIN;
    int32_t w1 = own1 + BAND_MARGIN > ny ? ny : own1 + BAND_MARGIN;
    nm_grid_window bw = {win->x0, win->y0 + (double)w0 * NM_kCS, nx, w1 - w0};
    size_t n = c->bstart[b + 1] - c->bstart[b];
    uint32_t *subtris = nm_malloc((3 * n + 1) * sizeof *subtris);
    if (!subtris) return nm_fail(err, NM_ERR_NOMEM, "raster bands: out of memory");
    for (size_t i = 0; i < n; i++)
        memcpy(subtris + 3 * i, c->mesh->tris + 3 * (size_t)c->blist[c->bstart[b] + i], 3 * sizeof *subtris);
    nm_grid_mesh sub = {c->mesh->verts, c->mesh->nverts, subtris, n, NULL};
    nm_grid_samples *S = &c->samples[slot];
    S->n = 0;
    nm_grid_samples bridge;
    memset(&bridge, 0, sizeof bridge);
    nm_span_table pre;
    memset(&pre, 0, sizeof pre);
    int rc = nm_grid_rasterize(&bw, &sub, S, err);
    nm_free(subtris);
    if (rc == NM_OK) rc = nm_grid_build_spans_reusing(&bw, S, &c->ws[slot], &pre, err);
    seam_gate_ctx sg = {c->opts, &bw};
    bool gated = c->opts && c->opts->gap_blocked;
    if (rc == NM_OK) rc = nm_grid_append_seam_bridge_gated(&pre, &bridge, gated ? solid_in_seam : NULL, &sg, err);
    if (rc == NM_OK) rc = put_bridges(&bw, &pre, &bridge, &c->bt[slot], err);
    nm_grid_samples_free(&bridge);
    /* the occupancy before bridging, to tell the bridged cells (mark_steep_bridges) */
    uint64_t *pre_occ = pre.occ_bits;
    pre.occ_bits = NULL;
    nm_span_table_free(&pre);
    nm_span_table *t = &c->bt[slot];
    if (rc == NM_OK && pre_occ) mark_steep_bridges(pre_occ, t);
    nm_free(pre_occ);
    for (uint32_t q = 0; rc == NM_OK && q < t->nocc; q++)
        for (uint32_t k = t->cs[q]; k + 1 < t->cs[q + 1]; k++)
            if (rim_under_solid(c->opts, t, k, t->cs[q + 1])) t->sp_ins[k] = 2;
    /* the own rows, as zone cell numbers later (band cell + the band's first zone cell) */
    const uint32_t lo = (uint32_t)(own0 - w0) * (uint32_t)nx, hi = (uint32_t)(own1 - w0) * (uint32_t)nx;
    uint32_t a = 0, e, kept = 0;
    while (rc == NM_OK && a < t->nspans && t->sp_cell[a] < lo) a++;
    for (e = a; rc == NM_OK && e < t->nspans && t->sp_cell[e] < hi; e++) kept += t->sp_ins[e] != 2;
    c->own[3 * slot] = a; c->own[3 * slot + 1] = rc == NM_OK ? e : a; c->own[3 * slot + 2] = kept;
    return rc;
}

/* Gathers one band's own spans (rim_under_solid's left out) at their place in the zone's list. */
typedef struct gather_ctx {
    band_ctx *bc;
    nm_grid_samples *spans;
    size_t *at;            /* per slot: first entry of spans */
} gather_ctx;

static int gather_chunk(void *ctx, size_t slot)
{
    gather_ctx *g = ctx;
    const nm_span_table *bt = &g->bc->bt[slot];
    const int32_t b = g->bc->first + (int32_t)slot, own0 = b * g->bc->rows;
    const uint32_t shift = (uint32_t)(own0 - BAND_MARGIN < 0 ? 0 : own0 - BAND_MARGIN) * (uint32_t)bt->win.nx;
    size_t o = g->at[slot];
    for (uint32_t k = g->bc->own[3 * slot]; k < g->bc->own[3 * slot + 1]; k++) {
        if (bt->sp_ins[k] == 2) continue; /* rim_under_solid */
        g->spans->cell[o] = bt->sp_cell[k] + shift;
        g->spans->h[o] = bt->sp_h[k];
        g->spans->ins[o++] = bt->sp_ins[k];
    }
    return NM_OK;
}

static int raster_bands(const nm_grid_window *win, const nm_grid_mesh *mesh,
                        const nm_bake_grid_opts *opts, nm_span_table *out, nm_error *err)
{
    int32_t nx = win->nx, ny = win->ny;
    uint32_t band = opts && opts->band_cells ? opts->band_cells : BAND_CELLS;
    int32_t rows = (int32_t)(band / (uint32_t)nx);
    if (rows < 4) rows = 4;
    if (rows > ny) rows = ny;
    int32_t nb = (ny + rows - 1) / rows;
    int rc = NM_OK;
    /* triangles per band (CSR), walkable only, in triangle order */
    uint32_t *bstart = nm_calloc((size_t)nb + 2, sizeof *bstart);
    int32_t *tb = nm_malloc(2 * (mesh->ntris + 1) * sizeof *tb);
    uint32_t *blist = NULL;
    nm_grid_samples spans;
    memset(&spans, 0, sizeof spans);
    if (!bstart || !tb) { rc = nm_fail(err, NM_ERR_NOMEM, "raster bands: out of memory"); goto done; }
    size_t total = 0;
    for (size_t t = 0; t < mesh->ntris; t++) {
        tb[2 * t] = 0;
        tb[2 * t + 1] = -1;
        if (mesh->walkable && !mesh->walkable[t]) continue;
        double lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < 3; k++) {
            double v = mesh->verts[3 * (size_t)mesh->tris[3 * t + (size_t)k] + 1];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        /* rows the triangle may touch, one row of slack each side, then the bands whose window
         * (own rows +- margin) meets them */
        double r0 = floor((lo - win->y0) / NM_kCS) - 1, r1 = floor((hi - win->y0) / NM_kCS) + 1;
        if (!(r1 >= 0) || !(r0 < ny)) continue;
        if (r0 < 0) r0 = 0;
        if (r1 > ny - 1) r1 = ny - 1;
        int32_t b0 = ((int32_t)r0 - BAND_MARGIN) / rows, b1 = ((int32_t)r1 + BAND_MARGIN) / rows;
        if (b0 < 0) b0 = 0;
        if (b1 > nb - 1) b1 = nb - 1;
        tb[2 * t] = b0;
        tb[2 * t + 1] = b1;
        for (int32_t b = b0; b <= b1; b++) bstart[b + 1]++;
        total += (size_t)(b1 - b0 + 1);
    }
    for (int32_t b = 0; b < nb; b++) bstart[b + 1] += bstart[b];
    blist = nm_malloc((total + 1) * sizeof *blist);
    if (!blist) { rc = nm_fail(err, NM_ERR_NOMEM, "raster bands: out of memory"); goto done; }
    {
        uint32_t *fill = nm_malloc(((size_t)nb + 1) * sizeof *fill);
        if (!fill) { rc = nm_fail(err, NM_ERR_NOMEM, "raster bands: out of memory"); goto done; }
        memcpy(fill, bstart, (size_t)nb * sizeof *fill);
        for (size_t t = 0; t < mesh->ntris; t++)
            for (int32_t b = tb[2 * t]; b <= tb[2 * t + 1]; b++) blist[fill[b]++] = (uint32_t)t;
        nm_free(fill);
    }
    nm_free(tb);
    tb = NULL;
    {
        /* up to `workers` bands at once; their own rows are appended in band order */
        int wk = nm_workers_for((size_t)nx * (size_t)ny, opts ? opts->workers : 0);
        band_ctx bc = {win, mesh, opts, bstart, blist, rows, 0, NULL, NULL, NULL, NULL, NULL};
        bc.bt = nm_calloc((size_t)wk, sizeof *bc.bt);
        bc.samples = nm_calloc((size_t)wk, sizeof *bc.samples);
        bc.ws = nm_calloc((size_t)wk, sizeof *bc.ws);
        bc.own = nm_calloc(3 * (size_t)wk, sizeof *bc.own);
        bc.errs = nm_calloc((size_t)wk, sizeof *bc.errs);
        size_t *at = nm_calloc((size_t)wk, sizeof *at);
        if (!bc.bt || !bc.samples || !bc.ws || !bc.own || !bc.errs || !at)
            rc = nm_fail(err, NM_ERR_NOMEM, "raster bands: out of memory");
        for (int32_t b0 = 0; b0 < nb && rc == NM_OK; b0 += wk) {
            size_t m = (size_t)(nb - b0 < wk ? nb - b0 : wk);
            bc.first = b0;
            rc = nm_parallel_chunks(m, wk, band_chunk, &bc);
            if (rc != NM_OK) {
                for (size_t q = 0; q < m; q++)
                    if (bc.errs[q].code) { *err = bc.errs[q]; break; }
            }
            /* the own rows of the group's bands, appended in band order */
            size_t more = 0;
            for (size_t q = 0; q < m; q++) { at[q] = spans.n + more; more += bc.own[3 * q + 2]; }
            if (rc == NM_OK) rc = nm_grid_samples_reserve(&spans, more, err);
            if (rc == NM_OK) {
                gather_ctx g = {&bc, &spans, at};
                rc = nm_parallel_chunks(m, wk, gather_chunk, &g);
                spans.n += more;
            }
            for (size_t q = 0; q < m; q++) nm_span_table_free(&bc.bt[q]);
            if (opts && opts->progress)
                opts->progress(opts->progress_ctx, "rasterise", 0.2 * (double)(b0 + (int32_t)m) / nb);
        }
        for (int q = 0; bc.samples && q < wk; q++) nm_grid_samples_free(&bc.samples[q]);
        for (int q = 0; bc.ws && q < wk; q++) nm_span_scratch_free(&bc.ws[q]);
        nm_free(bc.bt); nm_free(bc.samples); nm_free(bc.ws); nm_free(bc.own); nm_free(bc.errs); nm_free(at);
        if (rc != NM_OK) goto done;
    }
    nm_free(blist);
    blist = NULL;
    nm_free(bstart);
    bstart = NULL;
    if (rc == NM_OK) rc = nm_grid_pack_spans(win, &spans, out, err);
done:
    nm_grid_samples_free(&spans);
    nm_free(bstart); nm_free(tb); nm_free(blist);
    return rc;
}

int nm_bake_link_regions(const nm_zone_clean *zc, const nm_bake_grid_zone *z, const nm_span_table *T,
                         uint32_t *rid, uint32_t *nreg, nm_error *err); /* bake_pack.c */

/* The zone rectangle on the global cell grid: the walkable triangles' box plus PAD_CELLS. */
static int zone_rect(const nm_zone_clean *zc, const char *zname, nm_bake_grid_zone *Z, nm_error *err)
{
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
    Z->gx0 = (int32_t)gx0;
    Z->gy0 = (int32_t)gy0;
    Z->w = (int32_t)(gx1 - gx0);
    Z->h = (int32_t)(gy1 - gy0);
    return NM_OK;
}

/* Step 4: each region's box (i0, j0, i1, j1); a region's spans are read back through its box's
 * cells. w: the zone's width. */
static int region_boxes(zone_work *zw, int32_t w)
{
    const nm_span_table *T = &zw->T;
    zw->bbox = nm_malloc(((size_t)zw->nreg * 4 + 1) * sizeof *zw->bbox);
    if (!zw->bbox) return NM_ERR_NOMEM;
    for (uint32_t r = 0; r < zw->nreg; r++) {
        zw->bbox[4 * r] = INT32_MAX; zw->bbox[4 * r + 1] = INT32_MAX;
        zw->bbox[4 * r + 2] = -1; zw->bbox[4 * r + 3] = -1;
    }
    /* occupied cells in order (the lookup index: sp_cell is gone), the row carried along */
    for (uint32_t o = 0, c = 0, j = 0, row0 = 0; o < T->nocc; o++) {
        c = o ? nm_span_next_occupied(T, c) : nm_span_occupied_cell(T, 0);
        while (c - row0 >= (uint32_t)w) { j++; row0 += (uint32_t)w; }
        int32_t i = (int32_t)(c - row0);
        for (uint32_t k = T->cs[o]; k < T->cs[o + 1]; k++) {
            int32_t *b = &zw->bbox[4 * (zw->rid[k] - 1)];
            if (i < b[0]) b[0] = i;
            if ((int32_t)j < b[1]) b[1] = (int32_t)j;
            if (i > b[2]) b[2] = i;
            if ((int32_t)j > b[3]) b[3] = (int32_t)j;
        }
    }
    return NM_OK;
}

/* Step 5, FWAL (WallsAtLayer): wall w is kept on region r when some sample cell of w holds a span
 * of r with |h - hbar| <= kMcHBand, unless r passes under or over the whole edge (region_across_edge) */
static int keep_walls(zone_work *zw, nm_bake_grid_zone *Z)
{
    const nm_span_table *T = &zw->T;
    Z->wall_count = (uint32_t)zw->nwalls;
    Z->wall_keys = nm_malloc(((size_t)zw->nwalls + 1) * sizeof *Z->wall_keys);
    Z->wall_row = nm_calloc((size_t)zw->nwalls + 1, sizeof *Z->wall_row);
    uint32_t *tmpr = NULL;
    size_t cap = 0, nk = 0;
    uint32_t *rr = NULL;
    size_t rcap = 0;
    if (!Z->wall_keys || !Z->wall_row) return NM_ERR_NOMEM;
    for (size_t w = 0; w < zw->nwalls; w++) {
        const nm_grid_wall *W = &zw->walls[w];
        Z->wall_keys[w] = 3u * (uint64_t)W->tri + W->edge;
        double hbar = (W->h0 + W->h1) / 2.0;
        size_t n = wall_samples(W), m = 0;
        for (size_t k = 0; k < n; k++) {
            int32_t ci, cj;
            if (!wall_cell(&zw->win, W, k, n, &ci, &cj)) continue;
            uint32_t first, c = nm_span_cell_spans(T, (uint32_t)cj * (uint32_t)Z->w + (uint32_t)ci, &first);
            for (uint32_t s = first; s < first + c; s++) {
                if (fabs(T->sp_h[s] - hbar) > NM_kMcHBand) continue;
                if (m == rcap) {
                    size_t nc2 = rcap ? rcap * 2 : 64;
                    uint32_t *p2 = nm_realloc(rr, nc2 * sizeof *p2);
                    if (!p2) { nm_free(rr); nm_free(tmpr); return NM_ERR_NOMEM; }
                    rr = p2; rcap = nc2;
                }
                rr[m++] = zw->rid[s];
            }
        }
        qsort(rr, m, sizeof *rr, cmp_u32);
        size_t u = 0;
        for (size_t k = 0; k < m; k++)
            if (u == 0 || rr[u - 1] != rr[k]) rr[u++] = rr[k];
        /* Where a region has two levels more than kClimb apart in one column, an edge of
         * either level is no wall of the region: its stacked levels share one planar
         * clearance and blocker table (建窗: 两层共用一个净空值), and a wall of one level
         * would cut the other across its whole width. (a) A ledge over the region's own
         * lower level (a deck's side over the path beneath it): every sample cell also holds
         * a span of r more than kClimb below hbar; kept, it cut the path. (b) The end of a
         * lower level under the region's own upper level (the ground where a ramp's solid
         * body starts, a river bank, a pillar, all under a deck): a span more than kClimb
         * above; kept, it cut the deck (the demo town's high bridge, issue 12). Neither level
         * can leave through the edge without it: there is no span of that level beyond it,
         * so RiseOk (a drop above, a climb below) and LayerOracle still stop there. */
        size_t u2 = 0;
        for (size_t q = 0; q < u; q++)
            if (!region_across_edge(zw, W, rr[q], hbar, false) &&
                !(region_across_edge(zw, W, rr[q], hbar, true) && !edge_solid(zw, W, hbar)))
                rr[u2++] = rr[q];
        u = u2;
        if (nk + u > cap) {
            size_t nc2 = (nk + u) * 2 + 64;
            uint32_t *p2 = nm_realloc(tmpr, nc2 * sizeof *p2);
            if (!p2) { nm_free(rr); nm_free(tmpr); return NM_ERR_NOMEM; }
            tmpr = p2; cap = nc2;
        }
        memcpy(tmpr + nk, rr, u * sizeof *rr);
        nk += u;
        Z->wall_row[w + 1] = (uint32_t)nk;
    }
    nm_free(rr);
    Z->wall_rids = tmpr ? tmpr : nm_malloc(4);
    if (!Z->wall_rids) return NM_ERR_NOMEM;
    Z->stats.walls_kept = nk;
    /* inverse: per region, the walls kept on it (wall order) */
    zw->kw_start = nm_calloc((size_t)zw->nreg + 2, sizeof *zw->kw_start);
    zw->kw_list = nm_malloc((nk + 1) * sizeof *zw->kw_list);
    if (!zw->kw_start || !zw->kw_list) return NM_ERR_NOMEM;
    for (size_t k = 0; k < nk; k++) zw->kw_start[Z->wall_rids[k]]++;
    for (uint32_t r = 0; r < zw->nreg; r++) zw->kw_start[r + 1] += zw->kw_start[r];
    uint32_t *fill = nm_malloc(((size_t)zw->nreg + 1) * sizeof *fill);
    if (!fill) return NM_ERR_NOMEM;
    memcpy(fill, zw->kw_start, ((size_t)zw->nreg + 1) * sizeof *fill);
    for (size_t w = 0; w < zw->nwalls; w++)
        for (uint32_t k = Z->wall_row[w]; k < Z->wall_row[w + 1]; k++)
            zw->kw_list[fill[Z->wall_rids[k] - 1]++] = (uint32_t)w;
    nm_free(fill);
    return NM_OK;
}

/* Per region: its components numbered locally, in order of each component's first span in span
 * order (the global numbering is by smallest node, so the order is kept), and the DAG edges
 * between them. gmap: per global component, its local id; creg: its region (the caller frees
 * both). */
static int region_components(zone_work *zw, const nm_scc *scc, nm_bake_grid_zone *Z, uint32_t **gmap_out,
                             uint32_t **creg_out)
{
    const uint32_t ns = zw->T.nspans;
    uint32_t *gmap = *gmap_out = nm_calloc((size_t)scc->ncomp + 1, sizeof *gmap);
    uint32_t *creg = *creg_out = nm_malloc(((size_t)scc->ncomp + 1) * sizeof *creg);
    Z->regions = nm_calloc((size_t)zw->nreg + 1, sizeof *Z->regions);
    uint32_t *clist = nm_malloc(((size_t)scc->ncomp + 1) * sizeof *clist);
    uint32_t *cnum = nm_calloc((size_t)zw->nreg + 1, sizeof *cnum);
    uint32_t *cfirst = nm_malloc(((size_t)zw->nreg + 1) * sizeof *cfirst);
    uint32_t *pairs = NULL;
    size_t pcap = 0;
    int rc = NM_ERR_NOMEM;
    if (!gmap || !creg || !Z->regions || !clist || !cnum || !cfirst) goto done;
    /* spans in span order: a region's spans come in the same order as in the region alone */
    for (uint32_t k = 0; k < ns; k++) {
        uint32_t c = scc->comp[k];
        if (!gmap[c]) {
            gmap[c] = ++cnum[zw->rid[k] - 1];
            creg[c] = zw->rid[k]; /* a component lies in one region (the graph's edges do) */
        }
    }
    /* per region, its components in local order: clist[cfirst .. cfirst + nloc) */
    uint32_t at = 0;
    for (uint32_t r = 0; r < zw->nreg; r++) { cfirst[r] = at; at += cnum[r]; }
    for (uint32_t c = 1; c <= scc->ncomp; c++) /* ids 1 .. ncomp, each with its spans */
        if (gmap[c]) clist[cfirst[creg[c] - 1] + gmap[c] - 1] = c;
    for (uint32_t r = 0; r < zw->nreg; r++) {
        const uint32_t nloc = cnum[r], *rlist = clist + cfirst[r];
        nm_bnvf_region_src *R = &Z->regions[r];
        R->rid = r + 1;
        R->n_scc = nloc;
        Z->stats.components += nloc;
        size_t np = 0;
        /* DAG edges of the region's components: visit components in local order once */
        for (uint32_t a = 0; a < nloc; a++) {
            uint32_t c = rlist[a];
            for (uint32_t e = scc->dag_off[c - 1]; e < scc->dag_off[c]; e++) {
                if (np + 1 > pcap) {
                    size_t nc2 = pcap ? pcap * 2 : 256;
                    uint32_t *p2 = nm_realloc(pairs, nc2 * 2 * sizeof *p2);
                    if (!p2) goto done;
                    pairs = p2; pcap = nc2;
                }
                pairs[2 * np] = gmap[c];
                pairs[2 * np + 1] = gmap[scc->dag_adj[e]];
                np++;
            }
        }
        if (np) qsort(pairs, np, 2 * sizeof *pairs, cmp_pair);
        size_t u = 0;
        for (size_t k = 0; k < np; k++)
            if (!u || pairs[2 * (u - 1)] != pairs[2 * k] || pairs[2 * (u - 1) + 1] != pairs[2 * k + 1]) {
                pairs[2 * u] = pairs[2 * k];
                pairs[2 * u + 1] = pairs[2 * k + 1];
                u++;
            }
        uint32_t *ed = nm_malloc(u * 2 * sizeof *ed + 4);
        if (!ed) goto done;
        if (u) memcpy(ed, pairs, u * 2 * sizeof *ed);
        R->edges = ed;
        R->n_edges = (uint32_t)u;
    }
    rc = NM_OK;
done:
    nm_free(pairs);
    nm_free(clist);
    nm_free(cnum);
    nm_free(cfirst);
    return rc;
}

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
    uint8_t *walk = NULL, *bnd = NULL;
    uint32_t *gmap = NULL, *creg = NULL;
    nm_scc scc;
    memset(&scc, 0, sizeof scc);
    int rc = zone_rect(zc, zname, &Z, err);
    if (rc != NM_OK) return rc;
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
    rc = raster_bands(&zw.win, &mesh, opts, &zw.T, err);
    if (rc != NM_OK) goto fail_op;
    /* last use of sp_cell: from here on a span's cell comes from the lookup index (cs, occ_bits;
     * 4 bytes a span less in the regions, fields and steps peaks) */
    nm_free(zw.T.sp_cell);
    zw.T.sp_cell = NULL;
    const nm_span_table *T = &zw.T;
    uint32_t ns = T->nspans;
    Z.stats.spans = ns;

    /* 2. regions */
    progress(opts, "regions", 0.25);
    zw.rid = nm_malloc((size_t)ns * sizeof *zw.rid + 4);
    if (!zw.rid) NOMEM("regions");
    rc = nm_grid_label_regions(T, opts->workers, zw.rid, &zw.nreg, err);
    if (rc == NM_OK) rc = nm_bake_link_regions(zc, &Z, T, zw.rid, &zw.nreg, err);
    if (rc != NM_OK) goto fail_op;
    Z.global_regions = zw.nreg;

    /* 3. walls -> Dead */
    progress(opts, "walls", 0.3);
    rc = nm_grid_bake_walls(&zw.win, &mesh, bnd, &zw.walls, &zw.nwalls, err);
    if (rc != NM_OK) goto fail_op;
    /* Dead is the record flag NM_GRID_DEAD (= 1, StampWalls' mark), so the per-span flags
     * column starts as StampWalls' output */
    zw.sflags = nm_calloc((size_t)ns + 1, 1);
    if (!zw.sflags) NOMEM("dead");
    rc = nm_grid_stamp_walls(T, zw.walls, zw.nwalls, zw.sflags, NULL, err);
    if (rc != NM_OK) goto fail_op;
    /* the ins bits ride in sflags until step 6 turns them into Core (one column less there) */
    for (uint32_t k = 0; k < ns; k++)
        zw.sflags[k] |= T->sp_ins[k] == 1 ? SPAN_INS : T->sp_ins[k] == 3 ? SPAN_SEALED : 0;
    nm_free(zw.T.sp_ins); zw.T.sp_ins = NULL;
    Z.stats.walls = zw.nwalls;

    /* 4. region boxes */
    if (region_boxes(&zw, Z.w) != NM_OK) NOMEM("region boxes");

    /* 5. FWAL (WallsAtLayer): the walls kept on each region */
    progress(opts, "wall keep", 0.35);
    if (keep_walls(&zw, &Z) != NM_OK) NOMEM("wall table");

    /* 6. per region: layer, Core, Ghost / Fill, clearance, sealed clearance, medial axis */
    progress(opts, "regions fields", 0.4);
    zw.sclr = nm_calloc((size_t)ns + 1, sizeof *zw.sclr);
    zw.sclr2d = nm_calloc((size_t)ns + 1, sizeof *zw.sclr2d);
    zw.ssteps = nm_calloc((size_t)ns + 1, 1);
    zw.rout = nm_calloc((size_t)zw.nreg + 1, sizeof *zw.rout);
    zw.errs = nm_calloc((size_t)zw.nreg + 1, sizeof *zw.errs);
    if (!zw.sclr || !zw.sclr2d || !zw.ssteps || !zw.rout || !zw.errs)
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
    rc = span_graph(&zw, opts, &scc, err);
    if (rc != NM_OK) goto fail_op;
    riser_crack_steps(&zw);
    /* per-region components and their DAG edges */
    if (region_components(&zw, &scc, &Z, &gmap, &creg) != NM_OK) NOMEM("components");

    /* the span's region is its component's from here on */
    nm_free(zw.rid);
    zw.rid = NULL;

    /* 8. records: spans and Ghost / Fill per cell, canonical order, encoded tile by tile; 9.
     * off-mesh links -> FLNK / FOPN */
    progress(opts, "records", 0.85);
    rc = records(&zw, scc.comp, gmap, creg, &Z, err);
    if (rc != NM_OK) goto fail;
    nm_free(gmap); gmap = NULL;
    nm_free(creg); creg = NULL;
    nm_scc_free(&scc);
    zw_free(&zw);
    nm_free(walk); nm_free(bnd);
    progress(opts, "done", 1.0);
    *out = Z;
    return NM_OK;

fail_op:
    nm_error_prefix(err, "%s: grid bake", zname);
fail:
    nm_free(walk); nm_free(bnd); nm_free(gmap); nm_free(creg);
    nm_scc_free(&scc);
    zw_free(&zw);
    nm_bake_grid_zone_free(&Z);
    return rc;
}
