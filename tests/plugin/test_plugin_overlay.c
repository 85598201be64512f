/* test_plugin_overlay.c — navplan's leg overlay: the PNG exists, has the accepted window's size
 * (one pixel per cell), and the final polyline's pixels carry the polyline colour. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_testlib.h"
#include "leg_overlay.h"
#include "overlay.h"

Test(plugin_overlay, the_leg_picture_has_the_window_size_and_the_final_polyline)
{
    char dir[] = "/tmp/nm_plugin_overlay_XXXXXX", png[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(png, sizeof png, "%s/leg.png", dir); /* OpenCV picks the format by the extension */
    char cmd[4096], *text = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --pack '%s' --zone demo --from 130,90 --to 97,37 --overlay '%s'",
             getenv("NM_NAVPLAN"), pt_demo_pack(), png);
    cr_assert_eq(pt_run(cmd, &text), 0, "%s", cmd);
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cJSON *win = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "debug"), "window");
    int nx = (int)cJSON_GetObjectItem(win, "nx")->valuedouble, ny = (int)cJSON_GetObjectItem(win, "ny")->valuedouble;
    double x0 = cJSON_GetObjectItem(win, "x0")->valuedouble, y0 = cJSON_GetObjectItem(win, "y0")->valuedouble;
    nm_ov_image *img = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_ov_read_png(&img, png, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_ov_width(img), nx);
    cr_assert_eq(nm_ov_height(img), ny);
    /* sample the final polyline away from its vertices (rings) and the legend (top left) */
    cJSON *pts = cJSON_GetObjectItem(o, "points");
    int n = cJSON_GetArraySize(pts), samples = 0, hits = 0;
    cr_assert_geq(n, 2);
    for (int i = 0; i + 1 < n; i++) {
        cJSON *a = cJSON_GetArrayItem(pts, i), *b = cJSON_GetArrayItem(pts, i + 1);
        double ax = (cJSON_GetArrayItem(a, 0)->valuedouble - x0) / 0.25, ay = (cJSON_GetArrayItem(a, 1)->valuedouble - y0) / 0.25;
        double bx = (cJSON_GetArrayItem(b, 0)->valuedouble - x0) / 0.25, by = (cJSON_GetArrayItem(b, 1)->valuedouble - y0) / 0.25;
        double len = hypot(bx - ax, by - ay);
        for (double s = 12; s + 12 < len; s += 3) {
            int x = (int)lround(ax + (bx - ax) * s / len), y = (int)lround(ay + (by - ay) * s / len);
            if (x < 260 && y < 160) continue;
            nm_ov_rgb c;
            cr_assert_eq(nm_ov_get_pixel(img, x, y, &c, &err), NM_OK);
            samples++;
            hits += c.r == 255 && c.g == 40 && c.b == 200;
        }
    }
    cr_assert_geq(samples, 10, "too few samples along the polyline");
    cr_assert_geq(hits * 10, samples * 9, "%d of %d samples carry the final colour", hits, samples);
    /* and a pixel far from the route does not */
    nm_ov_rgb c;
    cr_assert_eq(nm_ov_get_pixel(img, nx - 2, ny - 2, &c, &err), NM_OK);
    cr_assert_not(c.r == 255 && c.g == 40 && c.b == 200);
    nm_ov_destroy(img);
    cJSON_Delete(o);
    free(text);
    unlink(png);
    rmdir(dir);
}
