/* test_plugin_heights.c — heights that are a round value up to rounding noise come out as that
 * value: the demo's leg across the town (190, 75) -> (250, 290) lies on the surface at 0, which
 * the zone transform turned into -1.1e-16 before; the struct, the JSON and the RUN list agree. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_testlib.h"

/* Round up to noise but not round: the values that must not come out. */
static bool noisy(double h) { return h != nearbyint(h) && fabs(h - nearbyint(h)) <= 1e-9; }

Test(plugin_heights, round_heights_lose_their_rounding_noise)
{
    const nm_plugin_api *api = pt_api();
    nm_plugin_engine *e = api->open(pt_demo_pack(), "demo", NULL);
    cr_assert_not_null(e, "open: %s", api->last_error());
    nm_plugin_request q;
    api->request_init(&q, 190, 75, 250, 290);
    nm_plugin_result *r = NULL;
    cr_assert_eq(api->plan(e, &q, &r), NM_PLUGIN_OK, "%s", api->last_error());
    cr_assert(r->ok, "%s", r->error);
    cr_assert_not_null(r->points.heights);
    int zeros = 0;
    for (uint32_t i = 0; i < r->points.n; i++) {
        double h = r->points.heights[i];
        cr_assert_not(noisy(h), "point %u height %.17g", i, h);
        zeros += h == 0.0 && !signbit(h);
    }
    cr_assert_gt(zeros, 0, "the leg lies on the surface at 0");
    for (uint32_t i = 0; i < r->n_run; i++) {
        cr_assert_not(noisy(r->run[i].floor_y), "RUN %u floor_y %.17g", i, r->run[i].floor_y);
        cr_assert_not(noisy(r->run[i].target_deck_y), "RUN %u target_deck_y %.17g", i, r->run[i].target_deck_y);
    }
    for (uint32_t i = 0; i < r->n_drops; i++) cr_assert_not(noisy(r->drops[i].height));
    char *js = api->result_json(r);
    cr_assert_not_null(js);
    cr_assert_null(strstr(js, "e-16"), "%s", js);
    cr_assert_null(strstr(js, "e-17"), "%s", js);
    cJSON *o = cJSON_Parse(js);
    cr_assert_not_null(o);
    cJSON *run = cJSON_GetObjectItem(o, "run_waypoints"), *w;
    cr_assert_gt(cJSON_GetArraySize(run), 0);
    cJSON_ArrayForEach(w, run)
    {
        cJSON *f = cJSON_GetObjectItem(w, "floor_y");
        if (cJSON_IsNumber(f)) cr_assert_not(noisy(f->valuedouble), "JSON floor_y %.17g", f->valuedouble);
    }
    cJSON_Delete(o);
    api->string_free(js);
    api->result_free(r);
    api->close(e);
}
