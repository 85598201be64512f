/* test_plugin_overlay.c — the leg overlay (tools/navhost/leg_overlay.c) on the demo town, drawn
 * from results planned through the dlopen'ed plugin: the picture's size and layout (the map at
 * least 1000 px on its long side, header, legend, thumbnail and profile strip in their own
 * margins, never over the map), the route in its height colours, a failed leg drawn with the
 * window it tried and its located gap, other storeys dimmed and a drop marked in the profile. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_testlib.h"
#include "leg_overlay.h"
#include "overlay.h"

static bool same(nm_ov_rgb a, nm_ov_rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }
static const nm_ov_rgb kBg = {NM_LEG_RGB_BG};

static bool meets(nm_leg_rect a, nm_leg_rect b)
{
    if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0) return false;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static bool inside(nm_leg_rect a, int w, int h) { return a.x >= 0 && a.y >= 0 && a.x + a.w <= w && a.y + a.h <= h; }

/* Pixels of rect r in img that are not the background. */
static int inked(const nm_ov_image *img, nm_leg_rect r)
{
    int n = 0;
    nm_error err = {0};
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) {
            nm_ov_rgb c;
            cr_assert_eq(nm_ov_get_pixel(img, x, y, &c, &err), NM_OK);
            n += !same(c, kBg);
        }
    return n;
}

/* Plans one demo leg, draws it, reads the PNG back; *img and *lay out; returns the result. */
static nm_plugin_result *draw_leg_on(const char *pack, const char *zone, nm_plugin_engine *e, double sx, double sy,
                                     double gx, double gy, double floor_y, nm_ov_image **img, nm_leg_layout *lay)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_request q;
    api->request_init(&q, sx, sy, gx, gy);
    q.start_floor_y = floor_y;
    nm_plugin_result *r = NULL;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "%s", api->last_error());
    nm_leg_canvas *cv = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_leg_canvas_open(pack, zone, NULL, &cv, &err), NM_OK, "%s", err.msg);
    char dir[] = "/tmp/nm_plugin_overlay_XXXXXX", png[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(png, sizeof png, "%s/leg.png", dir); /* OpenCV picks the format by the extension */
    cr_assert_eq(nm_leg_overlay_write(cv, r, sx, sy, gx, gy, NULL, 0, "test leg", NM_LEG_CROP_AUTO, png, lay, &err),
                 NM_OK, "%s", err.msg);
    nm_leg_canvas_close(cv);
    cr_assert_eq(nm_ov_read_png(img, png, &err), NM_OK, "%s", err.msg);
    unlink(png);
    rmdir(dir);
    cr_assert_eq(nm_ov_width(*img), lay->width);
    cr_assert_eq(nm_ov_height(*img), lay->height);
    /* the layout: every block inside the picture, none over the map */
    const nm_leg_layout *L = lay;
    cr_assert(inside(L->map, L->width, L->height));
    cr_assert(inside(L->header, L->width, L->height));
    cr_assert(inside(L->legend, L->width, L->height));
    cr_assert_not(meets(L->header, L->map), "header over the map");
    cr_assert_not(meets(L->legend, L->map), "legend over the map");
    cr_assert_not(meets(L->profile, L->map), "profile over the map");
    cr_assert_not(meets(L->thumb, L->map), "thumbnail over the map");
    cr_assert_geq(L->cell_px, 1);
    cr_assert_eq(L->map.w, L->view_nx * L->cell_px);
    cr_assert_eq(L->map.h, L->view_ny * L->cell_px);
    cr_assert_geq(L->map.w > L->map.h ? L->map.w : L->map.h, NM_LEG_MIN_LONG_PX);
    cr_assert_gt(inked(*img, L->header), 100, "no header text");
    cr_assert_gt(inked(*img, L->legend), 100, "no legend");
    /* the column between map and legend stays empty: nothing drawn for either spills across */
    nm_leg_rect gapcol = {L->map.x + L->map.w + 1, L->map.y, L->legend.x - (L->map.x + L->map.w + 1), L->map.h};
    cr_assert_gt(gapcol.w, 0);
    cr_assert_eq(inked(*img, gapcol), 0, "something drawn between the map and the legend");
    return r;
}

static nm_plugin_result *draw_leg(nm_plugin_engine *e, double sx, double sy, double gx, double gy, double floor_y,
                                  nm_ov_image **img, nm_leg_layout *lay)
{
    return draw_leg_on(pt_demo_pack(), "demo", e, sx, sy, gx, gy, floor_y, img, lay);
}

Test(plugin_overlay, a_short_leg_is_cropped_scaled_and_drawn_in_its_height_colours)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pt_demo_pack(), "demo", NULL);
    cr_assert_not_null(e, "%s", api->last_error());
    nm_ov_image *img = NULL;
    nm_leg_layout L;
    nm_plugin_result *r = draw_leg(e, 130, 90, 97, 37, NM_PLUGIN_NONE, &img, &L); /* up the plaza stairs */
    cr_assert(r->ok, "%s", r->error);
    cr_assert(L.window_tried);
    cr_assert(L.cropped, "the window (%lld x %lld cells) is much larger than the leg", (long long)r->win_nx,
              (long long)r->win_ny);
    cr_assert_gt(L.thumb.w, 0);
    cr_assert(inside(L.thumb, L.width, L.height));
    cr_assert_geq(L.thumb.y, L.legend.y);
    cr_assert_gt(L.cell_px, 1, "the cropped map is scaled up");
    /* the profile strip under the map, with the route drawn in it */
    cr_assert_gt(L.profile.h, 0);
    cr_assert_geq(L.profile.y, L.map.y + L.map.h);
    cr_assert_gt(inked(img, L.profile), 2000, "empty profile strip");
    /* the first segment lies at height 0, the lowest of the leg (3 m at the top): its colour is the
     * low end of the height scale; sampled away from its vertices (waypoint rings) */
    double h0 = r->points.heights[0], h1 = r->points.heights[1];
    cr_assert(h0 == 0.0 && h1 == 0.0, "%g %g", h0, h1);
    nm_ov_rgb want;
    nm_error err = {0};
    cr_assert_eq(nm_ov_colormap(NM_OV_CMAP_TURBO, 0.15, &want, &err), NM_OK);
    double ax = L.map.x + (r->points.xy[0] - L.view_x0) / 0.25 * L.cell_px;
    double ay = L.map.y + (r->points.xy[1] - L.view_y0) / 0.25 * L.cell_px;
    double bx = L.map.x + (r->points.xy[2] - L.view_x0) / 0.25 * L.cell_px;
    double by = L.map.y + (r->points.xy[3] - L.view_y0) / 0.25 * L.cell_px;
    double len = hypot(bx - ax, by - ay);
    int samples = 0, hits = 0;
    for (double s = 20; s + 20 < len; s += 5) {
        nm_ov_rgb c;
        cr_assert_eq(nm_ov_get_pixel(img, (int)lround(ax + (bx - ax) * s / len), (int)lround(ay + (by - ay) * s / len),
                                     &c, &err), NM_OK);
        samples++;
        hits += same(c, want);
    }
    cr_assert_geq(samples, 20);
    cr_assert_geq(hits * 10, samples * 9, "%d of %d samples carry the low height colour", hits, samples);
    nm_ov_destroy(img);
    api->result_free(r);
    api->close(e);
}

Test(plugin_overlay, a_failed_leg_draws_the_window_it_tried_and_the_gap)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pt_demo_pack(), "demo", NULL);
    cr_assert_not_null(e, "%s", api->last_error());
    nm_ov_image *img = NULL;
    nm_leg_layout L;
    /* into the walled court joined to nothing */
    nm_plugin_result *r = draw_leg(e, 130, 90, 93.75, 356, NM_PLUGIN_NONE, &img, &L);
    cr_assert_not(r->ok);
    cr_assert(r->has_gap, "%s", r->error);
    cr_assert_gt(r->win_nx, 0, "a failed leg reports the window it tried");
    cr_assert_gt(r->win_ny, 0);
    cr_assert(L.window_tried);
    cr_assert_eq(L.profile.h, 0, "no route, no profile");
    /* the gap line's middle carries the gap colour */
    double mx = 0.5 * (r->gap_start_x + r->gap_goal_x), my = 0.5 * (r->gap_start_y + r->gap_goal_y);
    nm_ov_rgb c;
    nm_error err = {0};
    cr_assert_eq(nm_ov_get_pixel(img, (int)lround(L.map.x + (mx - L.view_x0) / 0.25 * L.cell_px),
                                 (int)lround(L.map.y + (my - L.view_y0) / 0.25 * L.cell_px), &c, &err), NM_OK);
    cr_assert(same(c, ((nm_ov_rgb){255, 40, 40})), "gap pixel %d %d %d", c.r, c.g, c.b);
    nm_ov_destroy(img);
    api->result_free(r);
    api->close(e);
}

Test(plugin_overlay, a_drop_leg_dims_the_other_storey_and_marks_the_drop_in_the_profile)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pt_demo_pack(), "demo", NULL);
    cr_assert_not_null(e, "%s", api->last_error());
    nm_ov_image *img = NULL;
    nm_leg_layout L;
    /* off the 5 m ledge west of the plaza (the demo route's leg 9) */
    nm_plugin_result *r = draw_leg(e, 159, 225, 130, 225, 5.0, &img, &L);
    cr_assert(r->ok, "%s", r->error);
    cr_assert_gt(r->n_drops, 0, "the leg drops");
    cr_assert_gt(L.dimmed, 0, "the surfaces far below or above the route are dimmed");
    int orange = 0;
    nm_error err = {0};
    for (int y = L.profile.y; y < L.profile.y + L.profile.h; y++)
        for (int x = L.profile.x; x < L.profile.x + L.profile.w; x++) {
            nm_ov_rgb c;
            cr_assert_eq(nm_ov_get_pixel(img, x, y, &c, &err), NM_OK);
            orange += same(c, ((nm_ov_rgb){255, 140, 0}));
        }
    cr_assert_gt(orange, 20, "the drop is marked in the profile strip");
    nm_ov_destroy(img);
    api->result_free(r);
    api->close(e);
}

/* A small level (the shared DotRecast house baked with the defaults: a 115 x 76 cell window, which
 * one pixel per cell drew as a picture smaller than its legend): the map is scaled to 1000 px, the
 * route on the roof, the ground floor under it dimmed. Skipped without the shared levels. */
Test(plugin_overlay, a_small_level_is_scaled_up_and_shows_the_storey)
{
    const char *data = getenv("NM_SHARED_DATA");
    char obj[1024];
    snprintf(obj, sizeof obj, "%s/levels/dotrecast-house/house.obj", data ? data : "");
    if (!data || access(obj, R_OK) != 0) cr_skip_test("no shared levels (NM_SHARED_DATA)");
    char dir[] = "/tmp/nm_plugin_house_XXXXXX", cmd[4096], pack[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s' --out '%s' --quiet", getenv("NM_NAVBAKE"), obj, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(pack, sizeof pack, "%s/base.nav.gz", dir);
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pack, "house", NULL);
    cr_assert_not_null(e, "%s", api->last_error());
    nm_ov_image *img = NULL;
    nm_leg_layout L;
    nm_plugin_result *r = draw_leg_on(pack, "house", e, -5, -4, 3, 3, 8.6, &img, &L);
    cr_assert(r->ok, "%s", r->error);
    cr_assert_gt(r->points.heights[0], 5.0, "the leg runs on the roof");
    cr_assert_geq(L.cell_px, 8, "a small window is drawn with large cells");
    cr_assert_gt(L.dimmed, 0, "the ground floor under the roof is dimmed");
    cr_assert_gt(L.profile.h, 0);
    nm_ov_destroy(img);
    api->result_free(r);
    api->close(e);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
