/* test_window.c — buildWindow (design article 建窗) on hand-made records, sidecar columns,
 * component DAG, wall table, links and openable cells: layers, span table and vis3, polygon
 * (even-odd, tier band) and disc stamping, step / facade restore, seed span, links, the reach
 * closure, wall selection and the release order of the temporaries. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "window/window.h"
#include "zone/zone.h"

#define NX 8
#define NY 6
#define GX0 100
#define GY0 200
#define REG 1u

typedef struct fixture {
    nm_grid_rec recs[256];
    nm_span_fields f[256];
    size_t n;
    /* DAG of region 1: 1 -> 2, 3 -> 4, 5 alone; region 2 has 1 component */
    uint32_t row1[6], dst1[2];
    uint32_t row2[2];
    nm_bnvf_dag dags[2];
    nm_bnvf_zone_data zd;
    nm_bnvf fields;
    nm_bnvf_link links[4];
    nm_bnvf_range link_zones[1];
    nm_bnvf_open opens[1];
    nm_bnvf_range open_zones[1];
    nm_window_request req;
} fixture;

static fixture F;

static uint32_t cellno(int i, int j) { return (uint32_t)(j * NX + i); }

static void add(int i, int j, uint32_t rid, float h, uint8_t flags, uint8_t steps, uint16_t clr2,
                uint32_t scc, uint8_t steps2, uint8_t seg, uint8_t medial)
{
    cr_assert_lt(F.n, 256);
    F.recs[F.n] = (nm_grid_rec){(int32_t)cellno(i, j), rid, h, (uint16_t)(clr2 + 4), flags, steps};
    F.f[F.n] = (nm_span_fields){scc, clr2, steps2, seg, 0, medial, {0, 0}};
    F.n++;
}

static void setup(void)
{
    memset(&F, 0, sizeof F);
    const uint8_t WC = NM_GRID_WALK | NM_GRID_CORE;
    /* a floor of region 1 over the whole window, component 1 (2 in the right half) */
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            if (i == 1 && j == 1) continue; /* hand-made column below */
            if (i == 6 && j == 4) continue; /* FOPN cell */
            add(i, j, REG, 0.0f, WC, 0, 64, i < 4 ? 1 : 2, 0, 0, (i == 3) ? 1 : 0);
        }
    /* column (1,1): region-1 Fill, region-1 floor, region-1 roof (clr last wins),
       region-2 floor, region-2 Ghost */
    add(1, 1, REG, 0.0f, NM_GRID_FILL, 0, 0, 0, 0, 0, 0);
    add(1, 1, REG, 0.5f, WC, 0, 4, 1, 0, 0, 0);
    add(1, 1, 2, 5.0f, WC, 0, 100, 1, 0, 0, 0);
    add(1, 1, 2, 7.0f, NM_GRID_GHOST | NM_GRID_WALK, 0, 0, 1, 0, 0, 0);
    add(1, 1, REG, 10.0f, NM_GRID_CORE, 0, 36, 3, 0, 0, 0);
    /* FOPN cell (6,4): a non-core Dead record with sealed clearance 0 */
    add(6, 4, REG, 0.0f, NM_GRID_DEAD, 0, 0, 2, 0, 0, 0);
    /* steps: cell (2,3) direction 0 main bits set, sidecar forbids c->b, facade bit 0;
       direction 2 (diagonal) main set, sidecar reverse, no facade */
    for (size_t k = 0; k < F.n; k++)
        if (F.recs[k].cell == (int32_t)cellno(2, 3)) {
            F.recs[k].steps = 0x03 | 0x30;
            F.f[k].steps2 = 0x01 | 0x20;
            F.f[k].seg = 0x01 | 0x04;
        } else if (F.recs[k].cell == (int32_t)cellno(4, 3)) {
            F.recs[k].steps = 0x00; /* main bits 0: the sidecar is not read */
            F.f[k].steps2 = 0x03;
            F.f[k].seg = 0x01;
        }
    /* records must be contiguous per cell: they are (added cell by cell except the specials,
       which are each one cell's whole list) */

    F.row1[0] = 0; F.row1[1] = 1; F.row1[2] = 1; F.row1[3] = 2; F.row1[4] = 2; F.row1[5] = 2;
    F.dst1[0] = 2; F.dst1[1] = 4;
    F.dags[0] = (nm_bnvf_dag){REG, 5, F.row1, F.dst1};
    F.row2[0] = 0; F.row2[1] = 0;
    F.dags[1] = (nm_bnvf_dag){2, 1, F.row2, NULL};
    F.zd.dags = F.dags;
    F.zd.dag_count = 2;

    F.req.fields = &F.fields;
    F.req.fzone = &F.zd;
    F.req.zone_id = 7;
    F.req.gx0 = GX0;
    F.req.gy0 = GY0;
    F.req.nx = NX;
    F.req.ny = NY;
    F.req.region = REG;
    F.req.seed_gx = GX0 + 0;
    F.req.seed_gy = GY0 + 0;
    F.req.seed_h = 0.0;
}

static int build(nm_window *w, nm_error *err)
{
    return nm_window_build_records(&F.req, F.recs, F.f, F.n, w, err);
}

TestSuite(window, .init = setup);

Test(window, layers_keep_the_region_and_the_last_clearance)
{
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    uint32_t c = cellno(1, 1);
    cr_expect_eq(w.lay[c], 1);
    cr_expect_eq(w.core[c], 1);
    /* region 1's records in order: Fill clr 0, floor clr2 4, roof clr2 36: the last wins */
    cr_expect_float_eq(w.dist[c], 1.5f, 1e-6);
    cr_expect_float_eq(w.dist[cellno(0, 0)], 2.0f, 1e-6);
    cr_expect_eq(w.medial[cellno(3, 0)], 1);
    cr_expect_eq(w.medial[cellno(2, 0)], 0);
    cr_expect_eq(w.win.x0, GX0 * 0.25);
    cr_expect_eq(w.win.y0, GY0 * 0.25);
    nm_window_free(&w);
}

Test(window, span_table_drops_fill_and_other_ghosts_and_marks_vis3)
{
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    uint32_t first, n = nm_span_cell_spans(&w.spans, cellno(1, 1), &first);
    cr_assert_eq(n, 3); /* floor 0.5 (r1), floor 5 (r2), roof 10 (r1) */
    cr_expect_float_eq(w.spans.sp_h[first], 0.5f, 1e-6);
    cr_expect_eq(w.sp_bits[first] & NM_SP_VIS3, NM_SP_VIS3);
    cr_expect_float_eq(w.spans.sp_h[first + 1], 5.0f, 1e-6);
    cr_expect_eq(w.sp_bits[first + 1] & NM_SP_VIS3, 0);
    cr_expect_float_eq(w.spans.sp_h[first + 2], 10.0f, 1e-6);
    cr_expect_null(w.sp_scc, "the component column goes with the reach set (step 12)");
    /* every occupied cell appears; spans sorted by cell */
    for (uint32_t k = 1; k < w.spans.nspans; k++) cr_assert_leq(w.spans.sp_cell[k - 1], w.spans.sp_cell[k]);
    cr_expect_eq(w.spans.nocc, NX * NY);
    cr_expect_eq(w.spans.nspans, NX * NY + 2);
    cr_expect_eq(w.spans.max_col, 3, "the largest column: cell (1, 1)'s three spans");
    nm_window_free(&w);
}

/* The span index (cell starts, occupancy bits and ranks, face) on stacks of one to four spans, some
 * cells empty, some stacks spread over more than kClimb: the definition's, cell by cell. */
Test(window, span_index_is_the_definition_of_every_cell)
{
    memset(F.recs, 0, sizeof F.recs);
    F.n = 0;
    const uint8_t WC = NM_GRID_WALK | NM_GRID_CORE;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            const int k = (i + 3 * j) % 5; /* spans in the cell: 0 (empty) to 4 */
            if (k == 0 && !(i == 0 && j == 0)) continue; /* the seed cell keeps a span */
            for (int s = 0; s < (k ? k : 1); s++) /* 1.6 m apart (3 or 4 make a face), 0.2 on odd rows */
                add(i, j, REG, (float)s * (j % 2 ? 0.2f : 1.6f), WC, 0, 64, 1, 0, 0, 0);
        }
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    const nm_span_table *t = &w.spans;
    uint32_t q = 0, faces = 0;
    for (uint32_t c = 0; c < NX * NY; c++) {
        uint32_t first, n = nm_span_cell_spans(t, c, &first);
        const bool occ = (t->occ_bits[c / 64] >> (c % 64)) & 1u;
        cr_assert_eq(occ, n > 0, "cell %u: occupancy", c);
        if (!n) continue;
        cr_assert_lt(q, t->nocc);
        cr_expect_eq(t->cs[q], first, "cell %u: first span", c);
        cr_expect_eq(t->cs[q + 1] - t->cs[q], n, "cell %u: span count", c);
        float lo = t->sp_h[first], hi = lo;
        for (uint32_t k = first; k < first + n; k++) {
            cr_expect_eq(t->sp_cell[k], c);
            lo = fminf(lo, t->sp_h[k]);
            hi = fmaxf(hi, t->sp_h[k]);
        }
        const bool face = n >= 3 && (double)hi - (double)lo > NM_kClimb;
        cr_expect_eq(t->face[q], face, "cell %u (%u spans over %.2f m): face", c, n, (double)(hi - lo));
        faces += face;
        q++;
    }
    cr_expect_eq(q, t->nocc);
    cr_expect_eq(t->cs[t->nocc], t->nspans);
    cr_expect_gt(faces, 3, "faces in several ranges");
    uint32_t rank = 0;
    for (size_t wd = 0; wd < (NX * NY + 63) / 64; wd++) {
        cr_expect_eq(t->occ_rank[wd], rank, "word %zu: rank", wd);
        rank += (uint32_t)__builtin_popcountll(t->occ_bits[wd]);
    }
    nm_window_free(&w);
}

Test(window, forbidden_steps_need_the_main_bits_and_facades_only_orthogonal)
{
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(w.stepbits[cellno(2, 3)], 0x01 | 0x20);
    cr_expect_eq(w.stepbits[cellno(4, 3)], 0); /* main 0: sidecar bits ignored */
    cr_assert_eq(w.nsegs, 1);
    cr_assert_eq(w.nwalls_kept, 0);
    nm_window_seg s = w.segs[0];
    cr_expect_eq(s.kind, NM_SEG_FACADE);
    double ex = GX0 * 0.25 + 3 * 0.25;
    cr_expect_float_eq(s.ax, ex, 1e-9);
    cr_expect_float_eq(s.bx, ex, 1e-9);
    cr_expect_float_eq(fmin(s.ay, s.by), GY0 * 0.25 + 3 * 0.25, 1e-9);
    cr_expect_float_eq(fmax(s.ay, s.by), GY0 * 0.25 + 4 * 0.25, 1e-9);
    nm_window_free(&w);
}

/* Step 9 keeps a direction's re-judged bits only where the main pack names that direction, each
 * of the four on its own, and clears a cell off the layer (its facade bits give no segment). */
Test(window, step_bits_stay_in_the_directions_the_main_bits_name_and_only_on_the_layer)
{
    for (size_t k = 0; k < F.n; k++) {
        const int32_t c = F.recs[k].cell;
        for (int d = 0; d < 4; d++)
            if (c == (int32_t)cellno(2 + d, 4)) {
                F.recs[k].steps = (uint8_t)(3u << (2 * d));
                F.f[k].steps2 = 0xFF;
            }
        if (c == (int32_t)cellno(5, 2)) { /* core without walk: off the layer */
            F.recs[k].flags = NM_GRID_CORE;
            F.recs[k].steps = 0xFF;
            F.f[k].steps2 = 0xFF;
            F.f[k].seg = 0x03;
        }
    }
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    for (int d = 0; d < 4; d++)
        cr_expect_eq(w.stepbits[cellno(2 + d, 4)], 3u << (2 * d), "direction %d", d);
    cr_expect_eq(w.lay[cellno(5, 2)], 0);
    cr_expect_eq(w.stepbits[cellno(5, 2)], 0, "off the layer");
    cr_expect_eq(w.nsegs, 1, "no facade segment off the layer");
    nm_window_free(&w);
}

Test(window, authored_polygon_is_even_odd_and_zeroes_core_lay_dist)
{
    /* square over cells i in [2,3], j in [1,2] (centres inside) */
    double x0 = GX0 * 0.25, y0 = GY0 * 0.25;
    double sq[8] = {x0 + 0.5, y0 + 0.25, x0 + 1.0, y0 + 0.25, x0 + 1.0, y0 + 0.75, x0 + 0.5, y0 + 0.75};
    nm_nogo_poly p = {sq, 4, false, 0.0, "sq"};
    F.req.polys = &p;
    F.req.npolys = 1;
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            bool in = i >= 2 && i <= 3 && j >= 1 && j <= 2;
            uint32_t c = cellno(i, j);
            if (i == 6 && j == 4) continue; /* the non-core Dead cell */
            cr_expect_eq(w.core[c], in ? 0 : 1, "cell %d,%d", i, j);
            if (in) cr_expect_eq(w.dist[c], 0.0f);
            if (in) cr_expect_eq(w.lay[c], 0);
        }
    cr_expect_eq(w.nogo_cells, 4);
    nm_window_free(&w);

    /* a pentagram: its centre is outside under the even-odd rule, a tip inside */
    double star[10];
    for (int k = 0; k < 5; k++) {
        double a = M_PI / 2 + k * 4 * M_PI / 5;
        star[2 * k] = 10 * cos(a);
        star[2 * k + 1] = 10 * sin(a);
    }
    nm_nogo_poly ps = {star, 5, false, 0, NULL};
    cr_expect_not(nm_nogo_poly_contains(&ps, 0, 0));
    cr_expect(nm_nogo_poly_contains(&ps, 0, 8));
}

/* A small deterministic generator for the ring tests. */
static uint64_t g_lcg;
static uint32_t lcg(void)
{
    g_lcg = g_lcg * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(g_lcg >> 33);
}

/* A ring coordinate near base: mostly on eighths of a cell (so vertices sit on cell-centre rows
 * and columns and edges run along them), sometimes anywhere, now and then astronomically far. */
static double ring_coord(double base, double span)
{
    const uint32_t kind = lcg() % 16;
    if (kind == 0) return (lcg() & 1 ? 1.0 : -1.0) * (lcg() & 1 ? 1e150 : 1e300);
    if (kind < 5) return base + span * (double)lcg() / 4294967296.0;
    return base + (double)(lcg() % (uint32_t)(span / 0.03125 + 1)) * 0.03125;
}

static uint32_t random_ring(double *xy, uint32_t cap, double bx, double by, double span)
{
    const uint32_t n = 3 + lcg() % (cap - 2);
    for (uint32_t k = 0; k < n; k++) {
        if (k && lcg() % 8 == 0) { /* a repeated point or a horizontal edge */
            xy[2 * k] = lcg() & 1 ? xy[2 * k - 2] : ring_coord(bx, span);
            xy[2 * k + 1] = xy[2 * k - 1];
            continue;
        }
        xy[2 * k] = ring_coord(bx, span);
        xy[2 * k + 1] = ring_coord(by, span);
    }
    return n;
}

/* nm_nogo_poly_row gives, a row at a time, every answer nm_nogo_poly_contains gives per point:
 * self-crossing rings, repeated points, edges along a row of centres, vertices far enough for
 * the crossing's arithmetic to overflow, origins far from the ring. */
Test(window, a_ring_s_row_of_answers_is_the_per_point_test_s)
{
    g_lcg = 7;
    double xy[2 * 40], xs[40];
    uint8_t in[64];
    const double origins[3] = {GX0 * 0.25, -1e6 - 0.3, 3.3};
    size_t inside = 0, cells = 0;
    for (int r = 0; r < 3000; r++) {
        const nm_nogo_poly p = {xy, random_ring(xy, 40, GX0 * 0.25 - 1.0, GY0 * 0.25 - 1.0, 12.0), false, 0.0, NULL};
        for (int q = 0; q < 16; q++) {
            const double x0 = origins[q % 3];
            /* rows through centres, through a vertex, anywhere */
            const double y = q < 8 ? GY0 * 0.25 + ((double)(q % 8) * 5 + 0.5) * 0.25
                                   : q < 12 ? xy[2 * (lcg() % p.n) + 1] : ring_coord(GY0 * 0.25 - 1.0, 12.0);
            const int64_t i0 = (x0 == 3.3 ? 80 : x0 < 0 ? 4000000 : -4) + (int64_t)(lcg() % 16);
            nm_nogo_poly_row(&p, y, x0, 0.25, i0, i0 + 63, xs, in);
            for (int64_t i = i0; i <= i0 + 63; i++) {
                const bool want = nm_nogo_poly_contains(&p, x0 + ((double)i + 0.5) * 0.25, y);
                cr_assert_eq(in[i - i0], want, "ring %d row %d cell %lld", r, q, (long long)i);
                inside += want;
                cells++;
            }
        }
    }
    cr_expect_gt(inside, cells / 50, "rings that hold centres: %zu of %zu", inside, cells);
    cr_expect_lt(inside, cells / 2);
}

/* The fixture's window without stamps: its core layer and its origin. */
static void unstamped(uint8_t core0[NX * NY], double *x0, double *y0)
{
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    memcpy(core0, w.core, NX * NY);
    *x0 = w.win.x0;
    *y0 = w.win.y0;
    nm_window_free(&w);
}

/* Builds the window with F.req's polygons and discs and checks that exactly the cells want[]
 * names are stamped (core, lay and clearance 0), each once; returns how many. */
static uint32_t check_stamps(const uint8_t *core0, const bool *want, int set)
{
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    uint32_t n = 0;
    for (uint32_t c = 0; c < NX * NY; c++) {
        n += want[c];
        if (want[c])
            cr_assert(w.core[c] == 0 && w.lay[c] == 0 && w.dist[c] == 0.0f, "set %d cell %u", set, c);
        else
            cr_assert_eq(w.core[c], core0[c], "set %d cell %u", set, c);
    }
    cr_assert_eq(w.nogo_cells, n, "set %d: each cell stamped once", set);
    nm_window_free(&w);
    return n;
}

/* 建窗 step 7 stamps exactly the cells whose centre the ring holds, whatever the ring; a ring with
 * vertices far outside the window (1e150 px) covers it whole (their cell numbers do not fit an
 * integer: the box is clamped before it is converted). */
Test(window, step_7_stamps_the_cells_whose_centre_the_ring_holds)
{
    uint8_t core0[NX * NY];
    double x0, y0;
    unstamped(core0, &x0, &y0);
    g_lcg = 11;
    double xy[2 * 24];
    nm_nogo_poly p = {xy, 0, false, 0.0, NULL};
    F.req.polys = &p;
    F.req.npolys = 1;
    bool want[NX * NY];
    uint32_t stamped_any = 0;
    for (int r = 0; r < 300; r++) {
        p.n = random_ring(xy, 24, x0 - 0.5, y0 - 0.5, 3.0);
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++)
                want[cellno(i, j)] = nm_nogo_poly_contains(&p, x0 + (i + 0.5) * 0.25, y0 + (j + 0.5) * 0.25);
        stamped_any += check_stamps(core0, want, r) > 0;
    }
    cr_expect_gt(stamped_any, 30);
    const double far[6] = {-1e150, -1e150, 1e150, -1e150, 0.0, 1e150};
    p = (nm_nogo_poly){far, 3, false, 0.0, "far"};
    for (uint32_t c = 0; c < NX * NY; c++) want[c] = true;
    cr_expect_eq(check_stamps(core0, want, -1), NX * NY, "a ring around the whole window stamps every cell");
}

Test(window, tier_polygon_stamps_only_cells_within_the_floor_band)
{
    /* raise column (5,2) to 20 m: a polygon on floor 0 must leave it */
    for (size_t k = 0; k < F.n; k++)
        if (F.recs[k].cell == (int32_t)cellno(5, 2)) F.recs[k].h = 20.0f;
    double x0 = GX0 * 0.25, y0 = GY0 * 0.25;
    double sq[8] = {x0 + 1.0, y0 + 0.25, x0 + 1.5, y0 + 0.25, x0 + 1.5, y0 + 0.75, x0 + 1.0, y0 + 0.75};
    nm_nogo_poly p = {sq, 4, true, 0.0, "tier"};
    F.req.polys = &p;
    F.req.npolys = 1;
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(w.core[cellno(4, 1)], 0);
    cr_expect_eq(w.core[cellno(4, 2)], 0);
    cr_expect_eq(w.core[cellno(5, 1)], 0);
    cr_expect_eq(w.core[cellno(5, 2)], 1, "lh 20 is outside 0 +- 12");
    nm_window_free(&w);
    /* the same polygon unbanded stamps every layer */
    p.banded = false;
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(w.core[cellno(5, 2)], 0);
    nm_window_free(&w);
}

Test(window, runtime_disc_stamps_by_planar_distance)
{
    double x0 = GX0 * 0.25, y0 = GY0 * 0.25;
    /* centre of cell (5,3), radius just over one cell: the 4-neighbours in, diagonals out */
    nm_nogo_disc d = {x0 + 5.5 * 0.25, y0 + 3.5 * 0.25, 0.26};
    F.req.discs = &d;
    F.req.ndiscs = 1;
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(w.lay[cellno(5, 3)], 0);
    cr_expect_eq(w.lay[cellno(4, 3)], 0);
    cr_expect_eq(w.lay[cellno(5, 4)], 0);
    cr_expect_eq(w.lay[cellno(4, 4)], 1);
    cr_expect_eq(w.nogo_cells, 5);
    nm_window_free(&w);
}

/* The disc test of 建窗 step 8, per cell: inside the disc's box (in cells, as the window rounds
 * it), and the centre's planar distance (whose squares overflow for far discs: the box decides
 * there). */
static bool disc_holds_cell(const nm_nogo_disc *d, double x0, double y0, int i, int j)
{
    if ((double)i < floor((d->x - d->r - x0) / 0.25) || (double)i > floor((d->x + d->r - x0) / 0.25) ||
        (double)j < floor((d->y - d->r - y0) / 0.25) || (double)j > floor((d->y + d->r - y0) / 0.25))
        return false;
    const double cx = x0 + (i + 0.5) * 0.25 - d->x, cy = y0 + (j + 0.5) * 0.25 - d->y;
    return !(cx * cx + cy * cy > d->r * d->r);
}

/* Step 8 stamps, once each, exactly the cells whose centre some disc holds, for discs on cell
 * centres and edges, anywhere, far away, of radius 0, tiny, or large enough for the squares to
 * overflow; thousands of discs over the whole window stamp each cell once. */
Test(window, step_8_stamps_once_the_cells_some_disc_holds)
{
    uint8_t core0[NX * NY];
    double x0, y0;
    unstamped(core0, &x0, &y0);
    g_lcg = 13;
    nm_nogo_disc d[6];
    const double radii[6] = {0.0, 1e154, 1e200, 1e308, 0.125, 0.26};
    bool want[NX * NY];
    uint32_t partial = 0;
    for (int r = 0; r < 400; r++) {
        const uint32_t n = 1 + lcg() % 6;
        for (uint32_t k = 0; k < n; k++) {
            d[k].x = ring_coord(x0 - 0.5, 3.0);
            d[k].y = ring_coord(y0 - 0.5, 2.5);
            const uint32_t kind = lcg() % 8;
            d[k].r = kind < 6 && lcg() % 4 == 0 ? radii[kind] : (double)(lcg() % 40) * 0.03125;
        }
        F.req.discs = d;
        F.req.ndiscs = n;
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                bool in = false;
                for (uint32_t k = 0; k < n; k++) in = in || disc_holds_cell(&d[k], x0, y0, i, j);
                want[cellno(i, j)] = in;
            }
        const uint32_t got = check_stamps(core0, want, r);
        partial += got > 0 && got < NX * NY;
    }
    cr_expect_gt(partial, 100);
    enum { MANY = 5000 };
    nm_nogo_disc *many = malloc(MANY * sizeof *many);
    cr_assert_not_null(many);
    for (int k = 0; k < MANY; k++) many[k] = (nm_nogo_disc){x0 - 1000.0, y0 - 1000.0 + 0.001 * k, 2000.0};
    F.req.discs = many;
    F.req.ndiscs = MANY;
    for (uint32_t c = 0; c < NX * NY; c++) want[c] = true;
    cr_expect_eq(check_stamps(core0, want, -1), NX * NY);
    free(many);
}

Test(window, fopn_opens_a_dead_record_after_the_sealed_clearance)
{
    F.opens[0] = (nm_bnvf_open){GX0 + 6, GY0 + 4, 0.0f, 25, NM_GRID_WALK, 0};
    F.open_zones[0] = (nm_bnvf_range){7, 0, 1};
    F.fields.opens = F.opens;
    F.fields.open_count = 1;
    F.fields.open_zones = F.open_zones;
    F.fields.open_zone_count = 1;
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    uint32_t first, n = nm_span_cell_spans(&w.spans, cellno(6, 4), &first);
    cr_assert_eq(n, 1);
    cr_expect_eq(w.sp_bits[first] & NM_SP_WALK, NM_SP_WALK);
    cr_expect_float_eq(w.dist[cellno(6, 4)], 1.25f, 1e-6);
    nm_window_free(&w);
    /* another zone's open record is not applied */
    F.open_zones[0].zone_id = 8;
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_float_eq(w.dist[cellno(6, 4)], 0.0f, 1e-6);
    nm_window_free(&w);
}

Test(window, seed_span_is_the_region_span_nearest_the_pick_height)
{
    F.req.seed_gx = GX0 + 1;
    F.req.seed_gy = GY0 + 1;
    F.req.seed_h = 9.0;
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_float_eq(w.spans.sp_h[w.seed_span], 10.0f, 1e-6);
    cr_expect_eq(w.seed_cell, cellno(1, 1));
    nm_window_free(&w);
    /* the region-2 span at 5 m is closer to 6 m but not of the region */
    F.req.seed_h = 6.0;
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_float_eq(w.spans.sp_h[w.seed_span], 10.0f, 1e-6);
    nm_window_free(&w);
}

Test(window, seed_cell_outside_or_without_region_span_fails)
{
    nm_window w;
    nm_error err = {0};
    F.req.seed_gx = GX0 + NX;
    cr_expect_eq(build(&w, &err), NM_ERR_STATE);
    cr_expect(strstr(err.msg, "step 4") != NULL, "%s", err.msg);
    cr_expect_null(w.lay);
    F.req.seed_gx = GX0 + 1;
    F.req.seed_gy = GY0 + 1;
    F.req.region = 3; /* no span of region 3 anywhere */
    cr_expect_neq(build(&w, &err), NM_OK);
    cr_expect(strstr(err.msg, "step 10") != NULL, "%s", err.msg);
}

Test(window, links_land_within_the_band_and_close_the_reach_set)
{
    /* seed comp 1 reaches 1, 2; comp 3 (roof of (1,1)) and 4 only through a link */
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    uint32_t first;
    nm_span_cell_spans(&w.spans, cellno(1, 1), &first);
    cr_expect_eq(w.sp_bits[first] & NM_SP_REACH, NM_SP_REACH);
    cr_expect_eq(w.sp_bits[first + 2] & NM_SP_REACH, 0, "comp 3 not reached without the link");
    cr_expect_eq(w.reach_comps, 2);
    nm_window_free(&w);

    /* link lo: cell (0,0) at 0.5 m (comp 1) -> hi: cell (1,1) declared 9 m (lands on the roof,
       comp 3); bidirectional, modifier 0.5 (taken as 1) */
    nm_bnvf_link L = {0};
    L.boml_index = 11;
    L.zone_id = 7;
    L.valid = 3;
    L.bidirectional = 1;
    L.cost_modifier = 0.5f;
    L.lo = (nm_bnvf_link_side){GX0 + 0, GY0 + 0, 0.5f, 0.5f, REG, 0, 0, 0};
    L.hi = (nm_bnvf_link_side){GX0 + 1, GY0 + 1, 9.0f, 9.0f, REG, 0, 0, 0};
    F.links[0] = L;
    /* a one-sided link (valid 1): ignored */
    F.links[1] = L;
    F.links[1].valid = 1;
    /* a link whose hi end finds no span within 8 m: counted, not stored */
    F.links[2] = L;
    F.links[2].hi.decl_h = 40.0f;
    /* a link with modifier 3 from (7,5) to (7,0): cost 3 * 5 */
    F.links[3] = L;
    F.links[3].bidirectional = 0;
    F.links[3].cost_modifier = 3.0f;
    F.links[3].lo = (nm_bnvf_link_side){GX0 + 7, GY0 + 5, 0.0f, 0.0f, REG, 0, 0, 0};
    F.links[3].hi = (nm_bnvf_link_side){GX0 + 7, GY0 + 0, 0.0f, 0.0f, REG, 0, 0, 0};
    F.link_zones[0] = (nm_bnvf_range){7, 0, 4};
    F.fields.links = F.links;
    F.fields.link_count = 4;
    F.fields.link_zones = F.link_zones;
    F.fields.link_zone_count = 1;
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(w.nlinks, 3);
    cr_expect_eq(w.links_without_landing, 1);
    cr_expect_eq(w.links[0].from_cell, cellno(0, 0));
    cr_expect_eq(w.links[0].to_cell, cellno(1, 1));
    cr_expect_float_eq(w.links[0].cost, sqrt(2.0), 1e-12);
    cr_expect_eq(w.links[1].from_cell, cellno(1, 1));
    cr_expect_eq(w.links[1].to_cell, cellno(0, 0));
    cr_expect_float_eq(w.spans.sp_h[w.links[0].to_span], 10.0f, 1e-6);
    cr_expect_float_eq(w.links[2].cost, 15.0, 1e-12);
    cr_expect_eq(w.links[2].boml_index, 11);
    cr_expect_eq(w.sp_bits[first + 2] & NM_SP_REACH, NM_SP_REACH, "comp 3 reached over the link");
    cr_expect_eq(w.reach_comps, 4); /* 1, 2, 3 and 4 (3 -> 4); never 5 */
    nm_window_free(&w);
}

Test(window, temporaries_are_released_in_the_article_order)
{
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_expect_eq(w.free_step[NM_WTMP_CELLHEAD], 0, "no per-cell list heads: the records come in cell order");
    cr_expect_eq(w.free_step[NM_WTMP_RECORDS], 5);
    cr_expect_eq(w.free_step[NM_WTMP_WALLS], 6);
    cr_expect_eq(w.free_step[NM_WTMP_LH], 0, "lh is held only for a polygon drawn on a floor");
    cr_expect_eq(w.free_step[NM_WTMP_BITMAPS], 9);
    cr_expect_eq(w.free_step[NM_WTMP_SEGSRC], 13);
    cr_expect_eq(w.free_step[NM_WTMP_SCC], 12);
    cr_expect_eq(w.free_step[NM_WTMP_CLR], 12, "the clearance is 2 B a cell until the span index");
    cr_expect_geq(w.peak_bytes, (size_t)(NX * NY * 9), "the build holds 9 B a cell of layers");
    cr_expect_float_eq(w.peak_bytes_per_cell, (double)w.peak_bytes / (NX * NY), 1e-9);
    nm_window_free(&w);
    cr_expect_null(w.lay);
    cr_expect_null(w.segs);
}

/* ---- wall selection through FWAL on a hand-made ZoneClean ---- */
Test(window, walls_are_kept_per_region_through_the_sidecar_table)
{
    /* two triangles inside the window; triangle 0 edge 0 and triangle 1 edge 2 are boundaries */
    double x0 = GX0 * 0.25, y0 = GY0 * 0.25;
    nm_vertex v[4] = {{(float)(x0 + 0.1), (float)(y0 + 0.1), 0}, {(float)(x0 + 1.0), (float)(y0 + 0.1), 0},
                      {(float)(x0 + 1.0), (float)(y0 + 1.0), 0}, {(float)(x0 + 0.1), (float)(y0 + 1.0), 0}};
    uint32_t tri_v[6] = {0, 1, 2, 0, 2, 3};
    uint8_t tflags[2] = {NM_ZT_WALKABLE | 0x01, NM_ZT_WALKABLE | 0x04};
    uint32_t bstart[2] = {0, 2}, btris[2] = {0, 1};
    nm_zone_clean zc;
    memset(&zc, 0, sizeof zc);
    zc.tri_count = 2;
    zc.verts = v;
    zc.vert_count = 4;
    zc.tri_v = tri_v;
    zc.tflags = tflags;
    zc.grid_x0 = 0;
    zc.grid_y0 = 0;
    zc.grid_nx = 1;
    zc.grid_ny = 1;
    zc.bucket_start = bstart;
    zc.bucket_tris = btris;
    /* keys 0 (t0 e0) kept by regions {1}, 5 (t1 e2) kept by {2} */
    uint64_t keys[2] = {0, 5};
    uint32_t row[3] = {0, 1, 2}, rids[2] = {1, 2};
    F.zd.wall_keys = keys;
    F.zd.wall_row = row;
    F.zd.wall_rids = rids;
    F.zd.wall_count = 2;
    zc.grid_x0 = floor(x0 / 24.0) * 24.0;
    zc.grid_y0 = floor(y0 / 24.0) * 24.0;
    F.req.zc = &zc;
    nm_window w;
    nm_error err = {0};
    cr_assert_eq(build(&w, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(w.nwalls_kept, 1);
    cr_expect_eq(w.segs[0].kind, NM_SEG_WALL);
    cr_expect_float_eq(w.segs[0].ax, (float)(x0 + 0.1), 1e-6);
    cr_expect_float_eq(w.segs[0].bx, (float)(x0 + 1.0), 1e-6);
    cr_expect_eq(w.nsegs, 2); /* + the facade of cell (2,3) */
    nm_window_free(&w);
    /* an edge missing from the table: the sidecar does not match the mesh */
    F.zd.wall_count = 1;
    cr_expect_eq(build(&w, &err), NM_ERR_CORRUPT);
    cr_expect(strstr(err.msg, "step 6") != NULL, "%s", err.msg);
}

Test(window, frame_from_px_rounds_the_size_up_and_the_origin_to_the_grid)
{
    nm_window_request r;
    memset(&r, 0, sizeof r);
    nm_error err = {0};
    cr_assert_eq(nm_window_frame_px(10.1, 20.0, 12.0, 20.3, &r, &err), NM_OK);
    cr_expect_eq(r.gx0, 40);
    cr_expect_eq(r.gy0, 80);
    cr_expect_eq(r.nx, 8);  /* 1.9 / 0.25 = 7.6 -> 8 */
    cr_expect_eq(r.ny, 2);  /* 0.3 / 0.25 = 1.2 -> 2 */
    cr_expect_eq(nm_window_frame_px(1, 1, 1, 2, &r, &err), NM_ERR_ARG);
}

Test(window, out_of_memory_at_any_allocation_fails_cleanly)
{
    for (size_t k = 1; k < 80; k++) {
        nm_window w;
        nm_error err = {0};
        nm_alloc_fail_after(k);
        int rc = build(&w, &err);
        nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            nm_window_free(&w);
            break;
        }
        cr_expect_eq(rc, NM_ERR_NOMEM, "allocation %zu: %s", k, err.msg);
        cr_expect_null(w.lay);
    }
}
