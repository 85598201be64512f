/* leg_overlay.c — draws one leg's diagnostic picture (诊断). The planner frees the window's raster
 * layers before it returns, so the cells are re-decoded here from the pack's grid (and sidecar for
 * the medial axis) over the window rectangle the result reports; everything else is what the
 * result carries. One image pixel per cell; x right, y down like the map. */
#include "leg_overlay.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pack/pack.h"
#include "pack/grid_io.h"
#include "route/route.h"
#include "overlay.h"

struct nm_leg_canvas {
    nm_pack pack;
    nm_bgrd grid;
    bool has_grid;
    nm_bnvf fields;
    bool has_fields;
    int zone;             /* BGRD zone index, -1 = none */
    nm_nogo_table nogo;
    const nm_nogo_zone *nogo_zone;
    nm_bgrd_out out;
};

int nm_leg_canvas_open(const char *pack_path, const char *zone, const char *nogo_path,
                       nm_leg_canvas **out, nm_error *err)
{
    *out = NULL;
    nm_leg_canvas *c = (nm_leg_canvas *)nm_calloc(1, sizeof *c);
    if (!c) return nm_fail(err, NM_ERR_NOMEM, "overlay: out of memory");
    c->zone = -1;
    nm_pack_load_opts lo = {0};
    lo.zone = zone;
    int rc = nm_pack_load(pack_path, &lo, &c->pack, err);
    const nm_section *s = rc == NM_OK ? nm_pack_section(&c->pack, "BGRD") : NULL;
    if (rc == NM_OK && s && s->bytes && nm_bgrd_parse(s->bytes, (size_t)s->size, &c->grid, err) == NM_OK) {
        c->has_grid = true;
        c->zone = nm_bgrd_find_zone(&c->grid, zone);
        char *side = nm_fields_sidecar_path(pack_path);
        nm_error ferr = {0};
        /* the sidecar only adds the medial axis: a missing one is not an error here */
        if (side && nm_bnvf_load(side, c->pack.build_hash, c->pack.file_fnv, &c->grid, &c->fields, &ferr) == NM_OK)
            c->has_fields = true;
        nm_free(side);
    }
    bool missing = false;
    if (rc == NM_OK && nogo_path && (rc = nm_nogo_load(nogo_path, &c->nogo, &missing, err)) == NM_OK)
        c->nogo_zone = nm_nogo_find_zone(&c->nogo, zone);
    if (rc != NM_OK) {
        nm_leg_canvas_close(c);
        return rc;
    }
    *out = c;
    return NM_OK;
}

void nm_leg_canvas_close(nm_leg_canvas *c)
{
    if (!c) return;
    nm_bgrd_out_free(&c->out);
    if (c->has_fields) nm_bnvf_free(&c->fields);
    if (c->has_grid) nm_bgrd_free(&c->grid);
    nm_nogo_table_free(&c->nogo);
    nm_pack_free(&c->pack);
    nm_free(c);
}

static nm_ov_rgb rgb(uint8_t r, uint8_t g, uint8_t b) { return (nm_ov_rgb){r, g, b}; }

typedef struct frame {
    double x0, y0;        /* px of the image's top-left corner */
    int w, h;
} frame;

static double fx(const frame *f, double x) { return (x - f->x0) / NM_kCS; }
static double fy(const frame *f, double y) { return (y - f->y0) / NM_kCS; }

/* Cells of the window: Core by clearance colour, dead (walkable, not core) dim red, medial axis
 * white; per cell the walkable record nearest the leg's reference height. */
static int draw_cells(nm_leg_canvas *c, nm_ov_image *img, const frame *f, double ref_h, nm_error *err)
{
    if (!c || !c->has_grid || c->zone < 0) return NM_OK;
    int32_t gx0 = (int32_t)llround(f->x0 / NM_kCS), gy0 = (int32_t)llround(f->y0 / NM_kCS);
    int rc = nm_bgrd_decode_rect(&c->grid, (uint32_t)c->zone, gx0, gy0, gx0 + f->w, gy0 + f->h,
                                 c->has_fields ? &c->fields : NULL, 0, &c->out, err);
    if (rc != NM_OK) return rc;
    /* one colour per cell first (tiles come in directory order), then runs of a row as polygons */
    size_t cells = (size_t)f->w * (size_t)f->h;
    uint32_t *px = (uint32_t *)nm_calloc(cells, sizeof *px); /* 0 = nothing, else 0x01RRGGBB */
    if (!px) return nm_fail(err, NM_ERR_NOMEM, "overlay: out of memory");
    /* the colour map sampled once: one OpenCV call per cell would dominate the picture's time */
    nm_ov_rgb lut[49];
    for (int k = 0; k < 49; k++) nm_ov_colormap(NM_OV_CMAP_VIRIDIS, k / 48.0, &lut[k], err);
    size_t i = 0;
    while (i < c->out.n) {
        int32_t cell = c->out.recs[i].cell;
        size_t best = SIZE_MAX;
        double bd = 0;
        size_t j = i;
        for (; j < c->out.n && c->out.recs[j].cell == cell; j++) {
            const nm_grid_rec *r = &c->out.recs[j];
            if (!(r->flags & NM_GRID_WALK) || (r->flags & NM_GRID_FILL)) continue;
            double d = fabs((double)r->h - ref_h);
            if (best == SIZE_MAX || d < bd) {
                best = j;
                bd = d;
            }
        }
        if (best != SIZE_MAX && cell >= 0 && (size_t)cell < cells) {
            const nm_grid_rec *r = &c->out.recs[best];
            nm_ov_rgb col = rgb(120, 40, 40);
            if (r->flags & NM_GRID_CORE)
                col = lut[(int)lrintf(nm_grid_rec_clearance(r->clr) * 4.0f)]; /* 0..12 px in quarter px */
            if (c->has_fields && c->out.fields && (c->out.fields[best].medial & 1)) col = rgb(235, 235, 235);
            px[cell] = 0x01000000u | ((uint32_t)col.r << 16) | ((uint32_t)col.g << 8) | col.b;
        }
        i = j;
    }
    for (int y = 0; y < f->h; y++) {
        int x = 0;
        while (x < f->w) {
            uint32_t v = px[(size_t)y * f->w + x];
            int e = x;
            while (e + 1 < f->w && px[(size_t)y * f->w + e + 1] == v) e++;
            if (v) {
                double q[8] = {x, y, e, y, e, y, x, y};
                nm_ov_fill_polygon(img, q, 4, rgb((v >> 16) & 255, (v >> 8) & 255, v & 255), err);
            }
            x = e + 1;
        }
    }
    nm_free(px);
    return NM_OK;
}

static void draw_list(nm_ov_image *img, const frame *f, const nm_plugin_points *p, nm_ov_rgb col,
                      int thick, nm_error *err)
{
    if (p->n < 2) return;
    double *xy = (double *)nm_malloc(sizeof(double) * 2 * p->n);
    if (!xy) return;
    for (uint32_t i = 0; i < p->n; i++) {
        xy[2 * i] = fx(f, p->xy[2 * i]);
        xy[2 * i + 1] = fy(f, p->xy[2 * i + 1]);
    }
    nm_ov_polyline(img, xy, p->n, 0, col, thick, err);
    nm_free(xy);
}

int nm_leg_overlay_write(nm_leg_canvas *c, const nm_plugin_result *r, double sx, double sy,
                         double gx, double gy, const nm_plugin_disc *discs, uint32_t ndiscs,
                         const char *title, const char *path, nm_error *err)
{
    frame f;
    if (r->win_nx > 0 && r->win_ny > 0 && r->win_nx <= 16384 && r->win_ny <= 16384) {
        f.x0 = r->win_x0;
        f.y0 = r->win_y0;
        f.w = (int)r->win_nx;
        f.h = (int)r->win_ny;
    } else {
        /* no window (a check before the tiers failed): the endpoints' box grown by 16 px */
        double x0 = fmin(sx, gx) - 16, y0 = fmin(sy, gy) - 16;
        f.x0 = floor(x0 / NM_kCS) * NM_kCS;
        f.y0 = floor(y0 / NM_kCS) * NM_kCS;
        f.w = (int)fmin(16384, ceil((fmax(sx, gx) + 16 - f.x0) / NM_kCS));
        f.h = (int)fmin(16384, ceil((fmax(sy, gy) + 16 - f.y0) / NM_kCS));
    }
    nm_ov_image *img = NULL;
    int rc = nm_ov_create(&img, f.w, f.h, rgb(24, 24, 28), err);
    if (rc != NM_OK) return rc;
    double ref_h = r->points.heights && r->points.n ? r->points.heights[0] : 0.0;
    if (!(ref_h > NM_PLUGIN_VALID_MIN)) ref_h = 0.0;
    rc = draw_cells(c, img, &f, ref_h, err);
    if (rc != NM_OK) {
        nm_ov_destroy(img);
        return rc;
    }
    /* authored no-go polygons (any tier) and the request's runtime discs */
    for (uint32_t i = 0; c && c->nogo_zone && i < c->nogo_zone->npolys; i++) {
        const nm_nogo_entry *pe = &c->nogo_zone->polys[i];
        double *q = (double *)nm_malloc(sizeof(double) * 2 * pe->n);
        if (!q) continue;
        for (uint32_t k = 0; k < pe->n; k++) {
            q[2 * k] = fx(&f, pe->xy[2 * k]);
            q[2 * k + 1] = fy(&f, pe->xy[2 * k + 1]);
        }
        nm_ov_polyline(img, q, pe->n, 1, rgb(140, 0, 255), 3, err);
        nm_free(q);
    }
    for (uint32_t i = 0; i < ndiscs; i++)
        nm_ov_disc(img, fx(&f, discs[i].x), fy(&f, discs[i].y), discs[i].radius / NM_kCS, rgb(140, 0, 255), 2, err);
    draw_list(img, &f, &r->dbg_topology, rgb(NM_LEG_RGB_TOPOLOGY), 1, err);
    draw_list(img, &f, &r->dbg_taut, rgb(NM_LEG_RGB_TAUT), 1, err);
    draw_list(img, &f, &r->dbg_pulled, rgb(NM_LEG_RGB_PULLED), 2, err);
    draw_list(img, &f, &r->points, rgb(NM_LEG_RGB_FINAL), 3, err);
    for (uint32_t i = 0; i < r->n_run; i++)
        nm_ov_disc(img, fx(&f, r->run[i].x), fy(&f, r->run[i].y), 5, rgb(255, 255, 255), 1, err);
    for (uint32_t i = 0; i < r->n_drops; i++) {
        const nm_plugin_drop *d = &r->drops[i];
        if (d->index >= r->points.n) continue;
        double lx = fx(&f, r->points.xy[2 * d->index]), ly = fy(&f, r->points.xy[2 * d->index + 1]);
        nm_ov_line(img, fx(&f, d->from_x), fy(&f, d->from_y), lx, ly, rgb(255, 140, 0), 2, err);
        nm_ov_disc(img, fx(&f, d->from_x), fy(&f, d->from_y), 6, rgb(255, 140, 0), 0, err);
        nm_ov_disc(img, lx, ly, 8, rgb(0, 255, 120), 2, err);
    }
    /* raw endpoints (green start, red goal) and the snapped ends of the polyline (rings) */
    nm_ov_disc(img, fx(&f, sx), fy(&f, sy), 7, rgb(0, 200, 0), 0, err);
    nm_ov_disc(img, fx(&f, gx), fy(&f, gy), 7, rgb(230, 0, 0), 0, err);
    if (r->has_gap) {
        nm_ov_line(img, fx(&f, r->gap_start_x), fy(&f, r->gap_start_y), fx(&f, r->gap_goal_x),
                   fy(&f, r->gap_goal_y), rgb(255, 0, 0), 2, err);
        char g[64];
        snprintf(g, sizeof g, "gap %.2f px", r->gap_distance);
        nm_ov_text(img, fx(&f, r->gap_goal_x) + 6, fy(&f, r->gap_goal_y), g, 0.5, rgb(255, 80, 80), err);
    }
    /* legend */
    char line[256];
    double y = 16;
    const double step = 14, sc = 0.4;
    snprintf(line, sizeof line, "%s  %s", title ? title : "", r->ok ? "ok" : "FAILED");
    nm_ov_text(img, 4, y, line, sc, rgb(255, 255, 255), err);
    y += step;
    snprintf(line, sizeof line, "tier %d %s  window %lldx%lld cells", r->tier, r->tier_kind ? r->tier_kind : "",
             (long long)r->win_nx, (long long)r->win_ny);
    nm_ov_text(img, 4, y, line, sc, rgb(255, 255, 255), err);
    y += step;
    snprintf(line, sizeof line, "ms win %.1f topo %.1f geo %.1f pull %.1f lift %.1f total %.1f", r->ms_window,
             r->ms_topology, r->ms_geometry, r->ms_pull, r->ms_lift, r->ms_total);
    nm_ov_text(img, 4, y, line, sc, rgb(255, 255, 255), err);
    y += step;
    if (!r->ok) {
        snprintf(line, sizeof line, "%.120s", r->error ? r->error : "");
        nm_ov_text(img, 4, y, line, sc, rgb(255, 90, 90), err);
        y += step;
    }
    static const struct { const char *name; uint8_t c[3]; } keys[] = {
        {"final", {NM_LEG_RGB_FINAL}},   {"pulled", {NM_LEG_RGB_PULLED}}, {"taut", {NM_LEG_RGB_TAUT}},
        {"topology", {NM_LEG_RGB_TOPOLOGY}}, {"dead", {120, 40, 40}},     {"medial", {235, 235, 235}},
        {"drop", {255, 140, 0}},          {"no-go", {140, 0, 255}},
    };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        nm_ov_rgb col = rgb(keys[k].c[0], keys[k].c[1], keys[k].c[2]);
        nm_ov_line(img, 4, y - 4, 20, y - 4, col, 3, err);
        nm_ov_text(img, 24, y, keys[k].name, sc, col, err);
        y += step;
    }
    rc = nm_ov_write_png(img, path, err);
    nm_ov_destroy(img);
    return rc;
}
