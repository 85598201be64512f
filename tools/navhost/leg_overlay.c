/* leg_overlay.c — draws one leg's diagnostic picture (诊断). The planner frees the window's raster
 * layers before it returns, so the cells are re-decoded here from the pack's grid (and sidecar for
 * the medial axis) over the window rectangle the result reports; everything else is what the
 * result carries. Cells are s × s pixel blocks (s a whole number, so a cell is never smaller than
 * a pixel); x right, y down like the map. Text lives only in the margins: the map is drawn on its
 * own image and copied in, so nothing drawn for the map can reach the header or legend. */
#include "leg_overlay.h"

#include <math.h>
#include <stdarg.h>
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

int nm_leg_crop_parse(const char *s)
{
    if (!s) return -1;
    if (!strcmp(s, "auto")) return NM_LEG_CROP_AUTO;
    if (!strcmp(s, "on")) return NM_LEG_CROP_ON;
    if (!strcmp(s, "off")) return NM_LEG_CROP_OFF;
    return -1;
}

static nm_ov_rgb rgb(uint8_t r, uint8_t g, uint8_t b) { return (nm_ov_rgb){r, g, b}; }

/* ---- constants of the picture ---------------------------------------------------------------- */
#define kPad 12                 /* margin between blocks, px */
#define kText 1.0               /* body text scale (Hershey simplex, ~13 px capitals) */
#define kTitle 1.3
#define kThumbLong 240          /* thumbnail's long side, px */
#define kProfileH 210           /* profile strip height, px */
#define kDimM 0.6               /* a cell whose surface is more than a step (m) from the route's: dimmed */
#define kCropFactor 2.0         /* AUTO crops when the window's long side exceeds the box's by this */
#define kCropMarginPx 2.0       /* crop box margin: at least this (px), or a quarter of the box */
#define kThumbMaxCells (16u << 20) /* no cells in the thumbnail beyond this (decode cost) */
#define kMaxCellPx 64
#define kInset 3                /* text and keys start this far inside their block (anti-aliasing) */
#define kCellMute 0.3          /* cell colours mixed this far toward the background: lines stand out */

/* The part of the window drawn: top-left in px, cells, image pixels per cell. */
typedef struct view {
    double x0, y0;
    int nx, ny, s;
} view;

static double vx(const view *v, double x) { return (x - v->x0) / NM_kCS * v->s; }
static double vy(const view *v, double y) { return (y - v->y0) / NM_kCS * v->s; }

static bool valid_h(double h) { return h > NM_PLUGIN_VALID_MIN && isfinite(h); }

/* Per cell of the view, the height of the route nearest to it (multi-source breadth-first fill
 * from the cells the final polyline crosses), so each cell shows the surface of the route's storey
 * and surfaces on other storeys are dimmed. NULL when the route has no heights inside the view. */
static float *route_ref(const view *v, const nm_plugin_result *r)
{
    if (!r->points.heights || r->points.n == 0) return NULL;
    size_t cells = (size_t)v->nx * (size_t)v->ny;
    float *ref = (float *)nm_malloc(cells * sizeof *ref);
    uint8_t *seen = (uint8_t *)nm_calloc(cells, 1);
    uint32_t *q = (uint32_t *)nm_malloc(cells * sizeof *q);
    if (!ref || !seen || !q) {
        nm_free(ref);
        nm_free(seen);
        nm_free(q);
        return NULL;
    }
    size_t head = 0, tail = 0;
    const double *xy = r->points.xy, *hs = r->points.heights;
    for (uint32_t i = 0; i < r->points.n; i++) {
        uint32_t j = i + 1 < r->points.n ? i + 1 : i;
        if (!valid_h(hs[i]) || !valid_h(hs[j])) continue;
        double len = hypot(xy[2 * j] - xy[2 * i], xy[2 * j + 1] - xy[2 * i + 1]) / NM_kCS;
        int steps = (int)fmin(1e6, ceil(len * 2.0)) + 1;
        for (int k = 0; k <= steps; k++) {
            double t = (double)k / steps;
            double x = xy[2 * i] + (xy[2 * j] - xy[2 * i]) * t, y = xy[2 * i + 1] + (xy[2 * j + 1] - xy[2 * i + 1]) * t;
            double cx = floor((x - v->x0) / NM_kCS), cy = floor((y - v->y0) / NM_kCS);
            if (cx < 0 || cy < 0 || cx >= v->nx || cy >= v->ny) continue;
            size_t c = (size_t)cy * (size_t)v->nx + (size_t)cx;
            if (seen[c]) continue;
            seen[c] = 1;
            ref[c] = (float)(hs[i] + (hs[j] - hs[i]) * t);
            q[tail++] = (uint32_t)c;
        }
    }
    if (tail == 0) {
        nm_free(ref);
        nm_free(seen);
        nm_free(q);
        return NULL;
    }
    while (head < tail) {
        uint32_t c = q[head++];
        int cx = (int)(c % (uint32_t)v->nx), cy = (int)(c / (uint32_t)v->nx);
        const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
        for (int k = 0; k < 4; k++) {
            int nx = cx + dx[k], ny = cy + dy[k];
            if (nx < 0 || ny < 0 || nx >= v->nx || ny >= v->ny) continue;
            size_t n = (size_t)ny * (size_t)v->nx + (size_t)nx;
            if (seen[n]) continue;
            seen[n] = 1;
            ref[n] = ref[c];
            q[tail++] = (uint32_t)n;
        }
    }
    nm_free(seen);
    nm_free(q);
    return ref;
}

/* Decodes the view's cells into c->out. */
static int decode_view(nm_leg_canvas *c, const view *v, nm_error *err)
{
    int32_t gx0 = (int32_t)llround(v->x0 / NM_kCS), gy0 = (int32_t)llround(v->y0 / NM_kCS);
    return nm_bgrd_decode_rect(&c->grid, (uint32_t)c->zone, gx0, gy0, gx0 + v->nx, gy0 + v->ny,
                               c->has_fields ? &c->fields : NULL, 0, &c->out, err);
}

static nm_ov_rgb mix(nm_ov_rgb a, nm_ov_rgb b, double t)
{
    return rgb((uint8_t)lround(a.r + (b.r - a.r) * t), (uint8_t)lround(a.g + (b.g - a.g) * t),
               (uint8_t)lround(a.b + (b.b - a.b) * t));
}

/* Cells of the view (decoded into c->out): Core by clearance colour, dead (walkable, not core) dim
 * red, medial axis lighter; per cell the walkable record nearest the route's height there (ref, or
 * ref_h everywhere when ref is NULL), dimmed when that surface is on another storey. *dimmed:
 * how many cells were. */
static int draw_cells(nm_leg_canvas *c, nm_ov_image *img, const view *v, const float *ref, double ref_h,
                      size_t *dimmed, nm_error *err)
{
    *dimmed = 0;
    size_t cells = (size_t)v->nx * (size_t)v->ny;
    uint32_t *px = (uint32_t *)nm_calloc(cells, sizeof *px); /* 0 = nothing, else 0x01RRGGBB */
    if (!px) return nm_fail(err, NM_ERR_NOMEM, "overlay: out of memory");
    /* the colour map sampled once: one OpenCV call per cell would dominate the picture's time */
    nm_ov_rgb lut[49];
    for (int k = 0; k < 49; k++) nm_ov_colormap(NM_OV_CMAP_VIRIDIS, k / 48.0, &lut[k], err);
    size_t i = 0;
    while (i < c->out.n) {
        int32_t cell = c->out.recs[i].cell;
        double want = ref && cell >= 0 && (size_t)cell < cells ? (double)ref[cell] : ref_h;
        size_t best = SIZE_MAX;
        double bd = 0;
        size_t j = i;
        for (; j < c->out.n && c->out.recs[j].cell == cell; j++) {
            const nm_grid_rec *r = &c->out.recs[j];
            if (!(r->flags & NM_GRID_WALK) || (r->flags & NM_GRID_FILL)) continue;
            double d = fabs((double)r->h - want);
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
            col = mix(col, rgb(NM_LEG_RGB_BG), kCellMute);
            /* the medial axis lightens its cell: the shape of the room stays readable under it */
            if (c->has_fields && c->out.fields && (c->out.fields[best].medial & 1))
                col = mix(col, rgb(255, 255, 255), 0.4);
            if (ref && bd > kDimM) {
                col = mix(col, rgb(NM_LEG_RGB_BG), 0.75);
                ++*dimmed;
            }
            px[cell] = 0x01000000u | ((uint32_t)col.r << 16) | ((uint32_t)col.g << 8) | col.b;
        }
        i = j;
    }
    for (int y = 0; y < v->ny; y++) {
        int x = 0;
        while (x < v->nx) {
            uint32_t val = px[(size_t)y * v->nx + x];
            int e = x;
            while (e + 1 < v->nx && px[(size_t)y * v->nx + e + 1] == val) e++;
            if (val)
                nm_ov_rect(img, x * v->s, y * v->s, (e + 1) * v->s - 1, (y + 1) * v->s - 1,
                           rgb((val >> 16) & 255, (val >> 8) & 255, val & 255), 0, err);
            x = e + 1;
        }
    }
    nm_free(px);
    return NM_OK;
}

/* The walkable heights of the cell under (x, y) in c->out (at most 4, ascending). */
static int cell_heights(const nm_leg_canvas *c, const view *v, double x, double y, double *h)
{
    double cx = floor((x - v->x0) / NM_kCS), cy = floor((y - v->y0) / NM_kCS);
    if (cx < 0 || cy < 0 || cx >= v->nx || cy >= v->ny) return 0;
    int32_t cell = (int32_t)(cy * v->nx + cx);
    int n = 0;
    for (size_t i = 0; i < c->out.n && n < 4; i++) {
        const nm_grid_rec *r = &c->out.recs[i];
        if (r->cell != cell || !(r->flags & NM_GRID_WALK) || (r->flags & NM_GRID_FILL)) continue;
        int k = n++;
        while (k > 0 && h[k - 1] > r->h) {
            h[k] = h[k - 1];
            k--;
        }
        h[k] = r->h;
    }
    return n;
}

static void draw_list(nm_ov_image *img, const view *v, const nm_plugin_points *p, nm_ov_rgb col,
                      int thick, nm_error *err)
{
    if (p->n < 2) return;
    double *xy = (double *)nm_malloc(sizeof(double) * 2 * p->n);
    if (!xy) return;
    for (uint32_t i = 0; i < p->n; i++) {
        xy[2 * i] = vx(v, p->xy[2 * i]);
        xy[2 * i + 1] = vy(v, p->xy[2 * i + 1]);
    }
    nm_ov_polyline(img, xy, p->n, 0, col, thick, err);
    nm_free(xy);
}

/* ---- the route's heights -------------------------------------------------------------------- */
typedef struct hscale {
    double lo, hi; /* heights of the route */
    bool any, flat;
} hscale;

static hscale route_heights(const nm_plugin_result *r)
{
    hscale s = {0, 0, false, true};
    for (uint32_t i = 0; r->points.heights && i < r->points.n; i++) {
        double h = r->points.heights[i];
        if (!valid_h(h)) continue;
        if (!s.any || h < s.lo) s.lo = h;
        if (!s.any || h > s.hi) s.hi = h;
        s.any = true;
    }
    s.flat = !s.any || s.hi - s.lo < NM_LEG_FLAT_M;
    return s;
}

/* The route colour of height h: turbo over the route's range, its darkest ends left out so the
 * line stays visible on the dark background. */
static nm_ov_rgb height_rgb(const hscale *s, double h)
{
    if (s->flat || !valid_h(h)) return rgb(NM_LEG_RGB_FINAL);
    nm_ov_rgb c;
    nm_error e = {0};
    nm_ov_colormap(NM_OV_CMAP_TURBO, 0.15 + 0.75 * (h - s->lo) / (s->hi - s->lo), &c, &e);
    return c;
}

static void draw_route(nm_ov_image *img, const view *v, const nm_plugin_result *r, const hscale *hs, int thick,
                       nm_error *err)
{
    const nm_plugin_points *p = &r->points;
    if (p->n < 2) return;
    draw_list(img, v, p, rgb(0, 0, 0), thick + 2, err); /* dark outline: the line reads on any cell colour */
    if (hs->flat) {
        draw_list(img, v, p, rgb(NM_LEG_RGB_FINAL), thick, err);
        return;
    }
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        double h = valid_h(p->heights[i]) && valid_h(p->heights[i + 1]) ? 0.5 * (p->heights[i] + p->heights[i + 1])
                                                                          : p->heights[i];
        nm_ov_line(img, vx(v, p->xy[2 * i]), vy(v, p->xy[2 * i + 1]), vx(v, p->xy[2 * i + 2]),
                   vy(v, p->xy[2 * i + 3]), height_rgb(hs, h), thick, err);
    }
}

/* ---- text blocks ------------------------------------------------------------------------------ */
#define kMaxLines 48

typedef struct tline {
    char text[200];
    nm_ov_rgb col;
    double scale;
    int swatch;            /* 0 none, 1 line key, 2 ring key */
    nm_ov_rgb key;
} tline;

typedef struct tblock {
    tline l[kMaxLines];
    int n;
} tblock;

static tline *add_line(tblock *b, double scale, nm_ov_rgb col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tline *add_line(tblock *b, double scale, nm_ov_rgb col, const char *fmt, ...)
{
    if (b->n == kMaxLines) return NULL;
    tline *l = &b->l[b->n++];
    memset(l, 0, sizeof *l);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof l->text, fmt, ap);
    va_end(ap);
    l->col = col;
    l->scale = scale;
    return l;
}

static int text_w(const char *t, double scale)
{
    int w = 0, a = 0, b = 0;
    nm_error e = {0};
    if (nm_ov_text_size(t, scale, &w, &a, &b, &e) != NM_OK) return 0;
    return w;
}

static int line_h(double scale)
{
    int w = 0, a = 0, b = 0;
    nm_error e = {0};
    nm_ov_text_size("Hgy|", scale, &w, &a, &b, &e);
    return a + b + 5;
}

/* Adds text wrapped at spaces so no line is wider than width px. */
static void add_wrapped(tblock *b, double scale, nm_ov_rgb col, const char *text, int width)
{
    const char *p = text;
    while (*p && b->n < kMaxLines) {
        while (*p == ' ') p++;
        if (!*p) break;
        char buf[200];
        size_t n = strlen(p), take = n < sizeof buf - 1 ? n : sizeof buf - 1;
        /* the longest prefix (cut at a space when possible) that fits */
        for (;;) {
            snprintf(buf, sizeof buf, "%.*s", (int)take, p);
            if (take <= 1 || text_w(buf, scale) <= width) break;
            size_t cut = take - 1;
            while (cut > 0 && p[cut] != ' ') cut--;
            take = cut > 0 ? cut : take - 1;
        }
        tline *l = add_line(b, scale, col, "%s", buf);
        (void)l;
        p += take;
    }
}

static int block_w(const tblock *b)
{
    int w = 0;
    for (int i = 0; i < b->n; i++) {
        int lw = text_w(b->l[i].text, b->l[i].scale) + (b->l[i].swatch ? 30 : 0);
        if (lw > w) w = lw;
    }
    return w;
}

static int block_h(const tblock *b)
{
    int h = 0;
    for (int i = 0; i < b->n; i++) h += line_h(b->l[i].scale);
    return h;
}

/* Draws the block from (x, y) (top-left); returns the y below it. */
static int draw_block(nm_ov_image *img, const tblock *b, int x, int y, nm_error *err)
{
    for (int i = 0; i < b->n; i++) {
        const tline *l = &b->l[i];
        int w = 0, a = 0, d = 0;
        nm_ov_text_size("Hgy|", l->scale, &w, &a, &d, err);
        int base = y + a + 2, tx = x;
        if (l->swatch == 1) {
            nm_ov_line(img, x + 2, base - a / 2.0, x + 22, base - a / 2.0, l->key, 3, err);
            tx += 30;
        } else if (l->swatch == 2) {
            nm_ov_disc(img, x + 12, base - a / 2.0, 6, l->key, 2, err);
            tx += 30;
        }
        nm_ov_text(img, tx, base, l->text, l->scale, l->col, err);
        y += line_h(l->scale);
    }
    return y;
}

/* A round length of map px whose bar is 80..250 image px long. */
static double scale_bar_px(int cell_px)
{
    static const double steps[] = {0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
    double per_px = cell_px / NM_kCS; /* image px per map px */
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        if (steps[i] * per_px >= 80) return steps[i];
    return steps[sizeof steps / sizeof *steps - 1];
}

/* ---- the side profile ------------------------------------------------------------------------- */
static void draw_profile(nm_ov_image *img, const nm_leg_rect *R, const nm_plugin_result *r, const hscale *hs,
                         nm_error *err)
{
    const nm_plugin_points *p = &r->points;
    nm_ov_rgb white = rgb(230, 230, 230), grey = rgb(110, 110, 120);
    nm_ov_rect(img, R->x, R->y, R->x + R->w - 1, R->y + R->h - 1, rgb(34, 34, 40), 0, err);
    int lh = line_h(kText);
    nm_ov_text(img, R->x + 8, R->y + lh - 4, "profile: height (m) against distance along the route (px)", kText,
               white, err);
    if (p->n < 2 || !hs->any) {
        nm_ov_text(img, R->x + 8, R->y + 2 * lh, "no route heights: nothing to draw", kText, grey, err);
        return;
    }
    double *d = (double *)nm_malloc(sizeof(double) * p->n);
    if (!d) return;
    d[0] = 0;
    for (uint32_t i = 1; i < p->n; i++)
        d[i] = d[i - 1] + hypot(p->xy[2 * i] - p->xy[2 * i - 2], p->xy[2 * i + 1] - p->xy[2 * i - 1]);
    double L = d[p->n - 1] > 0 ? d[p->n - 1] : 1.0;
    double lo = hs->lo, hi = hs->hi;
    if (hi - lo < 1.0) {
        double m = 0.5 * (lo + hi);
        lo = m - 0.5;
        hi = m + 0.5;
    }
    char a[64], b[64];
    snprintf(a, sizeof a, "%.2f", hi);
    snprintf(b, sizeof b, "%.2f", lo);
    int left = (text_w(a, kText) > text_w(b, kText) ? text_w(a, kText) : text_w(b, kText)) + 16;
    int x0 = R->x + left, x1 = R->x + R->w - 16;
    int y0 = R->y + lh + 12, y1 = R->y + R->h - lh - 10;
    if (x1 <= x0 + 10 || y1 <= y0 + 10) {
        nm_free(d);
        return;
    }
    nm_ov_line(img, x0, y0, x1, y0, grey, 1, err);
    nm_ov_line(img, x0, y1, x1, y1, grey, 1, err);
    nm_ov_line(img, x0, y0, x0, y1, grey, 1, err);
    nm_ov_text(img, R->x + 8, y0 + lh / 2.0, a, kText, white, err);
    nm_ov_text(img, R->x + 8, y1 + 2, b, kText, white, err);
    snprintf(a, sizeof a, "%.1f px", d[p->n - 1]);
    nm_ov_text(img, x0, y1 + lh + 2, "0", kText, white, err);
    nm_ov_text(img, x1 - text_w(a, kText), y1 + lh + 2, a, kText, white, err);
#define PX(i) (x0 + (x1 - x0) * d[i] / L)
#define PY(h) (y1 - (y1 - y0) * ((h) - lo) / (hi - lo))
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        double ha = p->heights[i], hb = p->heights[i + 1];
        if (!valid_h(ha) || !valid_h(hb)) continue;
        nm_ov_line(img, PX(i), PY(ha), PX(i + 1), PY(hb), height_rgb(hs, 0.5 * (ha + hb)), 3, err);
    }
    for (uint32_t k = 0; k < r->n_drops; k++) {
        uint32_t i = r->drops[k].index;
        if (i == 0 || i >= p->n || !valid_h(p->heights[i - 1]) || !valid_h(p->heights[i])) continue;
        double xa = PX(i - 1), xb = PX(i), ya = PY(p->heights[i - 1]), yb = PY(p->heights[i]);
        nm_ov_line(img, xa, ya, xb, yb, rgb(255, 140, 0), 3, err);
        nm_ov_disc(img, xa, ya, 5, rgb(255, 140, 0), 0, err);
        nm_ov_disc(img, xb, yb, 6, rgb(255, 140, 0), 2, err);
        char t[64];
        snprintf(t, sizeof t, "drop %.2f m", p->heights[i - 1] - p->heights[i]);
        double tx = fmin(xa + 8, x1 - text_w(t, kText));
        nm_ov_text(img, tx, fmax(y0 + lh, fmin(ya, yb) - 6), t, kText, rgb(255, 170, 60), err);
    }
#undef PX
#undef PY
    nm_free(d);
}

/* ---- the picture ------------------------------------------------------------------------------ */
int nm_leg_overlay_write(nm_leg_canvas *c, const nm_plugin_result *r, double sx, double sy,
                         double gx, double gy, const nm_plugin_disc *discs, uint32_t ndiscs,
                         const char *title, int crop, const char *path, nm_leg_layout *layout,
                         nm_error *err)
{
    nm_leg_layout L;
    memset(&L, 0, sizeof L);
    /* the window (or, before any tier, the endpoints' box grown by 16 px) */
    view win;
    L.window_tried = r->win_nx > 0 && r->win_ny > 0 && r->win_nx <= 16384 && r->win_ny <= 16384;
    if (L.window_tried) {
        win.x0 = r->win_x0;
        win.y0 = r->win_y0;
        win.nx = (int)r->win_nx;
        win.ny = (int)r->win_ny;
    } else {
        double x0 = fmin(sx, gx) - 16, y0 = fmin(sy, gy) - 16;
        win.x0 = floor(x0 / NM_kCS) * NM_kCS;
        win.y0 = floor(y0 / NM_kCS) * NM_kCS;
        win.nx = (int)fmin(16384, ceil((fmax(sx, gx) + 16 - win.x0) / NM_kCS));
        win.ny = (int)fmin(16384, ceil((fmax(sy, gy) + 16 - win.y0) / NM_kCS));
    }
    win.s = 1;
    /* the route's box: final points, endpoints, the gap */
    double bx0 = fmin(sx, gx), by0 = fmin(sy, gy), bx1 = fmax(sx, gx), by1 = fmax(sy, gy);
    for (uint32_t i = 0; i < r->points.n; i++) {
        bx0 = fmin(bx0, r->points.xy[2 * i]);
        bx1 = fmax(bx1, r->points.xy[2 * i]);
        by0 = fmin(by0, r->points.xy[2 * i + 1]);
        by1 = fmax(by1, r->points.xy[2 * i + 1]);
    }
    if (r->has_gap) {
        bx0 = fmin(bx0, fmin(r->gap_start_x, r->gap_goal_x));
        bx1 = fmax(bx1, fmax(r->gap_start_x, r->gap_goal_x));
        by0 = fmin(by0, fmin(r->gap_start_y, r->gap_goal_y));
        by1 = fmax(by1, fmax(r->gap_start_y, r->gap_goal_y));
    }
    double margin = fmax(kCropMarginPx, 0.25 * fmax(bx1 - bx0, by1 - by0));
    bx0 -= margin;
    by0 -= margin;
    bx1 += margin;
    by1 += margin;
    /* the box in whole cells of the window, clipped to it */
    int ci0 = (int)fmax(0, floor((bx0 - win.x0) / NM_kCS)), cj0 = (int)fmax(0, floor((by0 - win.y0) / NM_kCS));
    int ci1 = (int)fmin(win.nx, ceil((bx1 - win.x0) / NM_kCS)), cj1 = (int)fmin(win.ny, ceil((by1 - win.y0) / NM_kCS));
    view v = win;
    if (ci1 > ci0 && cj1 > cj0) {
        int box_long = ci1 - ci0 > cj1 - cj0 ? ci1 - ci0 : cj1 - cj0;
        int win_long = win.nx > win.ny ? win.nx : win.ny;
        bool want = crop == NM_LEG_CROP_ON || (crop == NM_LEG_CROP_AUTO && win_long > kCropFactor * box_long);
        if (want && (ci1 - ci0 < win.nx || cj1 - cj0 < win.ny)) {
            v.x0 = win.x0 + ci0 * NM_kCS;
            v.y0 = win.y0 + cj0 * NM_kCS;
            v.nx = ci1 - ci0;
            v.ny = cj1 - cj0;
            L.cropped = true;
        }
    }
    int vlong = v.nx > v.ny ? v.nx : v.ny;
    v.s = (NM_LEG_MIN_LONG_PX + vlong - 1) / vlong;
    if (v.s > kMaxCellPx) v.s = kMaxCellPx;
    if (v.s < 1) v.s = 1;
    L.cell_px = v.s;
    L.view_x0 = v.x0;
    L.view_y0 = v.y0;
    L.view_nx = v.nx;
    L.view_ny = v.ny;
    int mw = v.nx * v.s, mh = v.ny * v.s;
    if (mw > 32768 || mh > 32768)
        return nm_fail(err, NM_ERR_ARG, "overlay: %d x %d cells at %d px per cell is too large", v.nx, v.ny, v.s);

    /* ---- the map, on its own image ---- */
    nm_ov_image *map = NULL;
    int rc = nm_ov_create(&map, mw, mh, rgb(NM_LEG_RGB_BG), err);
    if (rc != NM_OK) return rc;
    hscale hs = route_heights(r);
    double ref_h = hs.any ? r->points.heights[0] : 0.0;
    if (!valid_h(ref_h)) ref_h = hs.any ? hs.lo : 0.0;
    float *ref = route_ref(&v, r);
    size_t dimmed = 0;
    double gap_h[2][4];
    int gap_n[2] = {0, 0};
    bool have_cells = c && c->has_grid && c->zone >= 0;
    if (have_cells) {
        rc = decode_view(c, &v, err);
        if (rc == NM_OK) rc = draw_cells(c, map, &v, ref, ref_h, &dimmed, err);
        if (rc == NM_OK && r->has_gap) {
            gap_n[0] = cell_heights(c, &v, r->gap_start_x, r->gap_start_y, gap_h[0]);
            gap_n[1] = cell_heights(c, &v, r->gap_goal_x, r->gap_goal_y, gap_h[1]);
        }
        if (rc != NM_OK) {
            nm_free(ref);
            nm_ov_destroy(map);
            return rc;
        }
    }
    nm_free(ref);
    L.dimmed = dimmed;
    /* authored no-go polygons (any tier) and the request's runtime discs */
    for (uint32_t i = 0; c && c->nogo_zone && i < c->nogo_zone->npolys; i++) {
        const nm_nogo_entry *pe = &c->nogo_zone->polys[i];
        double *q = (double *)nm_malloc(sizeof(double) * 2 * pe->n);
        if (!q) continue;
        for (uint32_t k = 0; k < pe->n; k++) {
            q[2 * k] = vx(&v, pe->xy[2 * k]);
            q[2 * k + 1] = vy(&v, pe->xy[2 * k + 1]);
        }
        nm_ov_polyline(map, q, pe->n, 1, rgb(140, 0, 255), 3, err);
        nm_free(q);
    }
    for (uint32_t i = 0; i < ndiscs; i++)
        nm_ov_disc(map, vx(&v, discs[i].x), vy(&v, discs[i].y), discs[i].radius / NM_kCS * v.s, rgb(140, 0, 255), 2,
                   err);
    int thick = v.s / 2 + 2;
    if (thick > 7) thick = 7;
    draw_list(map, &v, &r->dbg_topology, rgb(NM_LEG_RGB_TOPOLOGY), 1, err);
    draw_list(map, &v, &r->dbg_taut, rgb(NM_LEG_RGB_TAUT), 1, err);
    draw_list(map, &v, &r->dbg_pulled, rgb(NM_LEG_RGB_PULLED), 2, err);
    draw_route(map, &v, r, &hs, thick, err);
    for (uint32_t i = 0; i < r->n_run; i++)
        nm_ov_disc(map, vx(&v, r->run[i].x), vy(&v, r->run[i].y), 6, rgb(255, 255, 255), 1, err);
    for (uint32_t i = 0; i < r->n_drops; i++) {
        const nm_plugin_drop *d = &r->drops[i];
        if (d->index >= r->points.n) continue;
        double lx = vx(&v, r->points.xy[2 * d->index]), ly = vy(&v, r->points.xy[2 * d->index + 1]);
        nm_ov_line(map, vx(&v, d->from_x), vy(&v, d->from_y), lx, ly, rgb(255, 140, 0), 2, err);
        nm_ov_disc(map, vx(&v, d->from_x), vy(&v, d->from_y), 5, rgb(255, 140, 0), 0, err);
        nm_ov_disc(map, lx, ly, 8, rgb(0, 0, 0), 4, err);
        nm_ov_disc(map, lx, ly, 8, rgb(255, 140, 0), 2, err); /* landing: an orange ring (green is the start) */
    }
    if (r->has_gap) {
        double ax = vx(&v, r->gap_start_x), ay = vy(&v, r->gap_start_y);
        double bx = vx(&v, r->gap_goal_x), by = vy(&v, r->gap_goal_y);
        nm_ov_line(map, ax, ay, bx, by, rgb(0, 0, 0), 5, err);
        nm_ov_line(map, ax, ay, bx, by, rgb(255, 40, 40), 3, err);
        nm_ov_disc(map, ax, ay, 5, rgb(255, 40, 40), 0, err);
        nm_ov_disc(map, bx, by, 5, rgb(255, 40, 40), 0, err);
    }
    /* raw endpoints as rings (green start, red goal): the route stays visible through them */
    nm_ov_disc(map, vx(&v, sx), vy(&v, sy), 9, rgb(0, 0, 0), 4, err);
    nm_ov_disc(map, vx(&v, sx), vy(&v, sy), 9, rgb(0, 220, 0), 2, err);
    nm_ov_disc(map, vx(&v, gx), vy(&v, gy), 9, rgb(0, 0, 0), 4, err);
    nm_ov_disc(map, vx(&v, gx), vy(&v, gy), 9, rgb(240, 30, 30), 2, err);

    /* ---- the thumbnail of the whole window (cropped maps only) ---- */
    nm_ov_image *thumb = NULL;
    if (L.cropped) {
        int wl = win.nx > win.ny ? win.nx : win.ny;
        int tw = (int)fmax(1, lround((double)win.nx * kThumbLong / wl)), th = (int)fmax(1, lround((double)win.ny * kThumbLong / wl));
        nm_ov_image *full = NULL;
        bool cells_ok = have_cells && (uint64_t)win.nx * (uint64_t)win.ny <= kThumbMaxCells;
        if (nm_ov_create(&full, cells_ok ? win.nx : tw, cells_ok ? win.ny : th, rgb(NM_LEG_RGB_BG), err) == NM_OK) {
            size_t dd = 0;
            nm_error terr = {0};
            if (cells_ok && decode_view(c, &win, &terr) == NM_OK) draw_cells(c, full, &win, NULL, ref_h, &dd, &terr);
            if (!cells_ok) {
                thumb = full; /* already thumbnail-sized, no cells */
            } else {
                nm_ov_resized(&thumb, full, tw, th, err); /* on failure: no thumbnail */
                nm_ov_destroy(full);
            }
        }
        if (thumb) {
            view tv = win;
            tv.s = 1;
            double k = (double)tw / win.nx; /* thumbnail px per cell */
            double rx0 = (v.x0 - win.x0) / NM_kCS * k, ry0 = (v.y0 - win.y0) / NM_kCS * k;
            double *xy = r->points.n >= 2 ? (double *)nm_malloc(sizeof(double) * 2 * r->points.n) : NULL;
            for (uint32_t i = 0; xy && i < r->points.n; i++) {
                xy[2 * i] = vx(&tv, r->points.xy[2 * i]) * k;
                xy[2 * i + 1] = vy(&tv, r->points.xy[2 * i + 1]) * k;
            }
            if (xy) nm_ov_polyline(thumb, xy, r->points.n, 0, rgb(NM_LEG_RGB_FINAL), 1, err);
            nm_free(xy);
            nm_ov_rect(thumb, (int)lround(rx0), (int)lround(ry0), (int)lround(rx0 + v.nx * k),
                       (int)lround(ry0 + v.ny * k), rgb(255, 230, 0), 1, err);
            nm_ov_rect(thumb, 0, 0, tw - 1, th - 1, rgb(110, 110, 120), 1, err);
        }
    }

    /* ---- legend ---- */
    nm_ov_rgb white = rgb(235, 235, 235), grey = rgb(150, 150, 160);
    tblock lg;
    lg.n = 0;
    tline *l;
    add_line(&lg, kText, white, "legend");
    if (hs.flat) {
        l = add_line(&lg, kText, white, "final route");
        if (l) l->swatch = 1, l->key = rgb(NM_LEG_RGB_FINAL);
    } else {
        l = add_line(&lg, kText, white, "final route: colour = height");
        if (l) l->swatch = 1, l->key = height_rgb(&hs, 0.5 * (hs.lo + hs.hi));
    }
    static const struct { const char *name; uint8_t c[3]; int ring; } keys[] = {
        {"pulled", {NM_LEG_RGB_PULLED}, 0},      {"taut chain", {NM_LEG_RGB_TAUT}, 0},
        {"topology path", {NM_LEG_RGB_TOPOLOGY}, 0}, {"dead cell", {91, 35, 36}, 0},
        {"medial axis (lighter cell)", {200, 200, 205}, 0},      {"drop take-off -> landing", {255, 140, 0}, 0},
        {"no-go", {140, 0, 255}, 0},              {"located gap", {255, 40, 40}, 0},
        {"start", {0, 220, 0}, 1},                {"goal", {240, 30, 30}, 1},
        {"RUN waypoint", {255, 255, 255}, 1},
    };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        l = add_line(&lg, kText, white, "%s", keys[k].name);
        if (l) l->swatch = keys[k].ring ? 2 : 1, l->key = rgb(keys[k].c[0], keys[k].c[1], keys[k].c[2]);
    }
    if (dimmed) add_line(&lg, kText, grey, "dim cells: another storey (%zu)", dimmed);
    int bars_at = lg.n; /* the two colour bars go after these lines */
    add_line(&lg, kText, white, "clearance 0 .. 12 px");
    add_line(&lg, kText, white, " "); /* its bar */
    if (!hs.flat) {
        add_line(&lg, kText, white, "route height %.2f .. %.2f m", hs.lo, hs.hi);
        add_line(&lg, kText, white, " ");
    } else if (hs.any) {
        add_line(&lg, kText, white, "route height %.2f m", hs.lo);
    }
    double bar = scale_bar_px(v.s);
    add_line(&lg, kText, white, "scale: %g px (%g cells)", bar, bar / NM_kCS);
    int scale_at = lg.n;
    add_line(&lg, kText, white, " ");
    add_line(&lg, kText, grey, "%d image px per cell (%g px)", v.s, NM_kCS);
    if (r->has_gap) {
        add_line(&lg, kText, rgb(255, 90, 90), "gap %.2f px", r->gap_distance);
        for (int e = 0; e < 2; e++) {
            char hb[96] = "";
            size_t o = 0;
            for (int k = 0; k < gap_n[e] && o < sizeof hb; k++)
                o += (size_t)snprintf(hb + o, sizeof hb - o, "%s%.2f", k ? ", " : "", gap_h[e][k]);
            add_line(&lg, kText, rgb(255, 90, 90), "%s (%.1f, %.1f) h %s%s", e ? "to" : "from",
                     e ? r->gap_goal_x : r->gap_start_x, e ? r->gap_goal_y : r->gap_start_y,
                     gap_n[e] ? hb : "none", gap_n[e] ? " m" : "");
        }
    }
    int thumb_at = lg.n;
    if (thumb) add_line(&lg, kText, white, "whole window (yellow: shown)");
    int lw = block_w(&lg);
    if (lw < 200) lw = 200;
    int thumb_w = thumb ? nm_ov_width(thumb) : 0, thumb_h = thumb ? nm_ov_height(thumb) : 0;
    if (lw < thumb_w) lw = thumb_w;
    lw += 2 * kInset;
    int legend_h = block_h(&lg) + (thumb ? thumb_h + 6 : 0) + kInset;

    /* ---- header ---- */
    int W = kPad + mw + kPad + lw + kPad;
    int hw = W - 2 * kPad, hw_text = hw - 2 * kInset;
    tblock hd;
    hd.n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s  %s", title && title[0] ? title : "leg", r->ok ? "ok" : "FAILED");
    add_wrapped(&hd, kTitle, r->ok ? white : rgb(255, 110, 110), buf, hw_text);
    if (r->ok)
        snprintf(buf, sizeof buf, "tier %d %s  window %lld x %lld cells at (%.2f, %.2f) px", r->tier,
                 r->tier_kind ? r->tier_kind : "", (long long)r->win_nx, (long long)r->win_ny, r->win_x0, r->win_y0);
    else if (L.window_tried)
        snprintf(buf, sizeof buf, "last window tried %lld x %lld cells at (%.2f, %.2f) px", (long long)r->win_nx,
                 (long long)r->win_ny, r->win_x0, r->win_y0);
    else
        snprintf(buf, sizeof buf, "no window tried (a check before the tiers failed): drawn the endpoints' box, "
                                  "%d x %d cells", win.nx, win.ny);
    add_wrapped(&hd, kText, white, buf, hw_text);
    if (L.cropped)
        snprintf(buf, sizeof buf, "shown: %d x %d cells around the route (crop), %d px per cell", v.nx, v.ny, v.s);
    else
        snprintf(buf, sizeof buf, "shown: the whole window, %d px per cell", v.s);
    add_wrapped(&hd, kText, grey, buf, hw_text);
    snprintf(buf, sizeof buf, "ms: checks %.1f  window %.1f  topology %.1f  geometry %.1f  pull %.1f  lift %.1f  total %.1f",
             r->ms_checks, r->ms_window, r->ms_topology, r->ms_geometry, r->ms_pull, r->ms_lift, r->ms_total);
    add_wrapped(&hd, kText, grey, buf, hw_text);
    if (r->ok && r->points.n) {
        snprintf(buf, sizeof buf, "length %.2f px, %u points, %u RUN waypoints, %u drop%s", r->length, r->points.n,
                 r->n_run, r->n_drops, r->n_drops == 1 ? "" : "s");
        add_wrapped(&hd, kText, grey, buf, hw_text);
    }
    if (!r->ok) {
        add_wrapped(&hd, kText, rgb(255, 110, 110), r->error ? r->error : "", hw_text);
        if (r->tier_notes && r->tier_notes[0]) add_wrapped(&hd, kText, grey, r->tier_notes, hw_text);
    }
    int header_h = kPad + block_h(&hd);
    bool profile = r->points.n >= 2;
    int body_h = mh > legend_h ? mh : legend_h;
    int H = header_h + kPad + body_h + (profile ? kPad + kProfileH : 0) + kPad;
    L.width = W;
    L.height = H;
    L.header = (nm_leg_rect){kPad, kPad, hw, block_h(&hd)};
    L.map = (nm_leg_rect){kPad, header_h + kPad, mw, mh};
    L.legend = (nm_leg_rect){kPad + mw + kPad, header_h + kPad, lw, legend_h};
    if (profile) L.profile = (nm_leg_rect){kPad, header_h + kPad + body_h + kPad, mw, kProfileH};

    nm_ov_image *img = NULL;
    rc = nm_ov_create(&img, W, H, rgb(NM_LEG_RGB_BG), err);
    if (rc != NM_OK) {
        nm_ov_destroy(map);
        nm_ov_destroy(thumb);
        return rc;
    }
    draw_block(img, &hd, L.header.x + kInset, L.header.y, err);
    nm_ov_rect(img, L.map.x - 1, L.map.y - 1, L.map.x + mw, L.map.y + mh, rgb(90, 90, 100), 1, err);
    nm_ov_blit(img, map, L.map.x, L.map.y, err);
    nm_ov_destroy(map);
    /* legend lines, with the colour bars, scale bar and thumbnail in the rows reserved for them */
    int y = L.legend.y + kInset, x = L.legend.x + kInset;
    for (int i = 0; i < lg.n; i++) {
        tblock one;
        one.n = 1;
        one.l[0] = lg.l[i];
        int lh = line_h(lg.l[i].scale);
        bool clr_bar = i == bars_at + 1, h_bar = !hs.flat && i == bars_at + 3;
        if (clr_bar || h_bar) {
            for (int k = 0; k < 200; k++) {
                nm_ov_rgb col;
                if (clr_bar) {
                    nm_ov_colormap(NM_OV_CMAP_VIRIDIS, k / 199.0, &col, err);
                    col = mix(col, rgb(NM_LEG_RGB_BG), kCellMute);
                }
                else col = height_rgb(&hs, hs.lo + (hs.hi - hs.lo) * k / 199.0);
                nm_ov_rect(img, x + k, y + 2, x + k, y + lh - 4, col, 0, err);
            }
        } else if (i == scale_at) {
            int len = (int)lround(bar / NM_kCS * v.s);
            if (len > lw) len = lw;
            nm_ov_rect(img, x, y + lh / 2 - 2, x + len - 1, y + lh / 2 + 2, white, 0, err);
            nm_ov_rect(img, x, y + 2, x + 1, y + lh - 3, white, 0, err);
            nm_ov_rect(img, x + len - 2, y + 2, x + len - 1, y + lh - 3, white, 0, err);
        } else {
            draw_block(img, &one, x, y, err);
        }
        y += lh;
        if (thumb && i == thumb_at) {
            L.thumb = (nm_leg_rect){x, y + 2, thumb_w, thumb_h};
            nm_ov_blit(img, thumb, x, y + 2, err);
            y += thumb_h + 6;
        }
    }
    nm_ov_destroy(thumb);
    if (profile) draw_profile(img, &L.profile, r, &hs, err);
    rc = nm_ov_write_png(img, path, err);
    nm_ov_destroy(img);
    if (layout) *layout = L;
    return rc;
}
