/* test_overlay.c — the OpenCV overlay binding (tools/overlay) through its C API, and the demo
 * town's picture drawn with it: size, water, solids and links where the scene puts them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlay.h"
#include "sg_testlib.h"

static bool same(nm_ov_rgb a, nm_ov_rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

Test(overlay, draws_reads_back_and_writes_png)
{
    nm_ov_image *img;
    nm_error err = {0};
    nm_ov_rgb white = {255, 255, 255}, red = {250, 10, 20}, blue = {0, 0, 255};
    cr_assert_eq(nm_ov_create(&img, 64, 48, white, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_ov_width(img), 64);
    cr_assert_eq(nm_ov_height(img), 48);
    double sq[] = {10, 10, 30, 10, 30, 30, 10, 30};
    cr_assert_eq(nm_ov_fill_polygon(img, sq, 4, red, &err), NM_OK);
    cr_assert_eq(nm_ov_disc(img, 50, 40, 4, blue, 0, &err), NM_OK);
    cr_assert_eq(nm_ov_line(img, 0, 0, 63, 47, blue, 1, &err), NM_OK);
    double pl[] = {40, 5, 60, 5, 60, 20};
    cr_assert_eq(nm_ov_polyline(img, pl, 3, 0, blue, 2, &err), NM_OK);
    cr_assert_eq(nm_ov_text(img, 2, 46, "ok", 0.5, blue, &err), NM_OK);
    nm_ov_rgb p;
    cr_assert_eq(nm_ov_get_pixel(img, 25, 12, &p, &err), NM_OK);
    cr_assert(same(p, red), "fill: %d %d %d", p.r, p.g, p.b);
    cr_assert_eq(nm_ov_get_pixel(img, 50, 40, &p, &err), NM_OK);
    cr_assert(same(p, blue));
    cr_assert_eq(nm_ov_get_pixel(img, 5, 40, &p, &err), NM_OK);
    cr_assert(same(p, white));
    char path[] = "/tmp/nm_ov_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char png[64];
    snprintf(png, sizeof png, "%s.png", path);
    cr_assert_eq(nm_ov_write_png(img, png, &err), NM_OK, "%s", err.msg);
    nm_ov_image *back;
    cr_assert_eq(nm_ov_read_png(&back, png, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_ov_width(back), 64);
    cr_assert_eq(nm_ov_height(back), 48);
    cr_assert_eq(nm_ov_get_pixel(back, 25, 12, &p, &err), NM_OK);
    cr_assert(same(p, red));
    nm_ov_destroy(back);
    unlink(png);
    unlink(path);
    nm_ov_destroy(img);
}

/* The layout helpers the leg overlay builds on: text extents that contain the drawn text,
 * rectangles, copying one image into another (clipped) and resampling. */
Test(overlay, text_size_rect_blit_and_resize)
{
    nm_ov_image *img, *small, *big;
    nm_error err = {0};
    nm_ov_rgb bg = {0, 0, 0}, white = {255, 255, 255}, red = {255, 0, 0};
    cr_assert_eq(nm_ov_create(&img, 400, 60, bg, &err), NM_OK);
    int w = 0, a = 0, b = 0;
    cr_assert_eq(nm_ov_text_size("Height 9.42 m, gap", 1.0, &w, &a, &b, &err), NM_OK);
    cr_assert_gt(w, 50);
    cr_assert_gt(a, 5);
    cr_assert_geq(b, 0);
    int x0 = 20, base = 30;
    cr_assert_eq(nm_ov_text(img, x0, base, "Height 9.42 m, gap", 1.0, white, &err), NM_OK);
    /* every inked pixel lies inside the reported box */
    int ink = 0;
    for (int y = 0; y < 60; y++)
        for (int x = 0; x < 400; x++) {
            nm_ov_rgb p;
            cr_assert_eq(nm_ov_get_pixel(img, x, y, &p, &err), NM_OK);
            if (same(p, bg)) continue;
            ink++;
            cr_assert(x >= x0 - 1 && x <= x0 + w && y >= base - a && y <= base + b, "ink at (%d, %d)", x, y);
        }
    cr_assert_gt(ink, 50);
    cr_assert_eq(nm_ov_text_size("x", 0, &w, &a, &b, &err), NM_ERR_ARG);
    cr_assert_eq(nm_ov_create(&small, 10, 10, red, &err), NM_OK);
    cr_assert_eq(nm_ov_rect(small, 2, 2, 4, 4, white, 0, &err), NM_OK);
    nm_ov_rgb p;
    cr_assert_eq(nm_ov_get_pixel(small, 4, 4, &p, &err), NM_OK);
    cr_assert(same(p, white));
    cr_assert_eq(nm_ov_get_pixel(small, 5, 5, &p, &err), NM_OK);
    cr_assert(same(p, red), "the rectangle's corners are inclusive");
    cr_assert_eq(nm_ov_blit(img, small, 395, 55, &err), NM_OK); /* clipped at the corner */
    cr_assert_eq(nm_ov_get_pixel(img, 395, 55, &p, &err), NM_OK);
    cr_assert(same(p, red));
    cr_assert_eq(nm_ov_get_pixel(img, 399, 59, &p, &err), NM_OK);
    cr_assert(same(p, white), "source pixel (4, 4)");
    cr_assert_eq(nm_ov_get_pixel(img, 394, 59, &p, &err), NM_OK);
    cr_assert(same(p, bg));
    cr_assert_eq(nm_ov_blit(img, small, 1000, 1000, &err), NM_OK, "fully outside: nothing to do");
    cr_assert_eq(nm_ov_resized(&big, small, 30, 30, &err), NM_OK);
    cr_assert_eq(nm_ov_width(big), 30);
    cr_assert_eq(nm_ov_get_pixel(big, 10, 10, &p, &err), NM_OK);
    cr_assert(same(p, white), "cells stay blocks when enlarged");
    nm_ov_destroy(big);
    cr_assert_eq(nm_ov_resized(&big, small, 0, 3, &err), NM_ERR_ARG);
    cr_assert_null(big);
    nm_ov_destroy(small);
    nm_ov_destroy(img);
}

Test(overlay, colour_maps_run_from_dark_to_bright)
{
    nm_ov_rgb lo, hi, mid;
    nm_error err = {0};
    cr_assert_eq(nm_ov_colormap(NM_OV_CMAP_VIRIDIS, 0, &lo, &err), NM_OK);
    cr_assert_eq(nm_ov_colormap(NM_OV_CMAP_VIRIDIS, 1, &hi, &err), NM_OK);
    cr_assert_eq(nm_ov_colormap(NM_OV_CMAP_VIRIDIS, 0.5, &mid, &err), NM_OK);
    cr_assert_lt(lo.r + lo.g + lo.b, hi.r + hi.g + hi.b);
    cr_assert_gt(lo.b, lo.g, "viridis starts purple");
    cr_assert_gt(hi.r, hi.b, "viridis ends yellow");
    cr_assert_not(same(lo, mid));
    nm_ov_rgb t0, t1;
    cr_assert_eq(nm_ov_colormap(NM_OV_CMAP_TURBO, 0, &t0, &err), NM_OK);
    cr_assert_eq(nm_ov_colormap(NM_OV_CMAP_TURBO, 2.0, &t1, &err), NM_OK); /* clamped */
    cr_assert_not(same(t0, t1));
}

Test(overlay, errors_are_statuses_not_exceptions)
{
    nm_ov_image *img;
    nm_error err = {0};
    nm_ov_rgb c = {0, 0, 0};
    cr_assert_eq(nm_ov_create(&img, 0, 10, c, &err), NM_ERR_ARG);
    cr_assert_null(img);
    cr_assert_eq(nm_ov_create(&img, 8, 8, c, &err), NM_OK);
    nm_ov_rgb p;
    cr_assert_eq(nm_ov_get_pixel(img, 8, 0, &p, &err), NM_ERR_ARG);
    cr_assert_eq(nm_ov_line(img, 0, NAN, 1, 1, c, 1, &err), NM_ERR_ARG);
    double two[] = {0, 0, 1, 1};
    cr_assert_eq(nm_ov_fill_polygon(img, two, 2, c, &err), NM_ERR_ARG);
    cr_assert_eq(nm_ov_colormap((nm_ov_cmap)99, 0.5, &p, &err), NM_ERR_ARG);
    int rc = nm_ov_write_png(img, "/nonexistent-dir/x.png", &err);
    cr_assert_lt(rc, 0);
    cr_assert_not_null(strstr(err.msg, "/nonexistent-dir/x.png"), "%s", err.msg);
    rc = nm_ov_write_png(img, "/tmp/no-extension", &err); /* OpenCV throws here: caught */
    cr_assert_lt(rc, 0);
    cr_assert_lt(nm_ov_read_png(&img, "/nonexistent-dir/x.png", &err), 0);
    nm_ov_destroy(img);
}

Test(overlay, demo_town_picture_shows_water_solids_and_links)
{
    nm_sg_world *w = tl_load("resources/demo/scene.json");
    cr_assert_not_null(w);
    char png[] = "/tmp/nm_town_XXXXXX";
    int fd = mkstemp(png);
    cr_assert_geq(fd, 0);
    close(fd);
    char path[64];
    snprintf(path, sizeof path, "%s.png", png);
    nm_error err = {0};
    const double scale = 2;
    cr_assert_eq(nm_sg_picture(w, path, scale, &err), NM_OK, "%s", err.msg);
    nm_ov_image *img;
    cr_assert_eq(nm_ov_read_png(&img, path, &err), NM_OK, "%s", err.msg);
    double u0 = INFINITY, u1 = -INFINITY, v0 = INFINITY, v1 = -INFINITY;
    for (size_t i = 0; i < w->nv; i++) {
        double u = 0.75 * w->v[i].x, v = 0.75 * w->v[i].y;
        u0 = fmin(u0, u), u1 = fmax(u1, u), v0 = fmin(v0, v), v1 = fmax(v1, v);
    }
    cr_assert_eq(nm_ov_width(img), (int)ceil((u1 - u0) * scale + 32));
    cr_assert_eq(nm_ov_height(img), (int)ceil((v1 - v0) * scale + 32));
    nm_ov_rgb water = {NM_SG_WATER_RGB}, solid = {NM_SG_SOLID_RGB}, link = {NM_SG_LINK_RGB};
    long nw = 0, ns = 0, nl = 0;
    for (int y = 0; y < nm_ov_height(img); y++)
        for (int x = 0; x < nm_ov_width(img); x++) {
            nm_ov_rgb p;
            nm_ov_get_pixel(img, x, y, &p, NULL);
            nw += same(p, water), ns += same(p, solid), nl += same(p, link);
        }
    cr_assert_gt(nw, 10000, "water pixels: %ld", nw);
    cr_assert_gt(ns, 1000, "solid pixels: %ld", ns);
    cr_assert_gt(nl, 20, "link pixels: %ld", nl);
    /* the river's middle (x = 212 m) is water, the plaza (130, 50) is not */
    nm_ov_rgb p;
    cr_assert_eq(nm_ov_get_pixel(img, (int)((0.75 * 212.5 - u0) * scale + 16), (int)((0.75 * 20 - v0) * scale + 16), &p, &err), NM_OK);
    cr_assert(same(p, water), "river pixel %d %d %d", p.r, p.g, p.b);
    cr_assert_eq(nm_ov_get_pixel(img, (int)((0.75 * 130 - u0) * scale + 16), (int)((0.75 * 50 - v0) * scale + 16), &p, &err), NM_OK);
    cr_assert_not(same(p, water));
    nm_ov_destroy(img);
    unlink(path);
    unlink(png);
    nm_sg_world_free(w);
}
