/* navplan — plans one leg through the plugin, loaded with dlopen exactly like a host, and prints
 * the result JSON (field names of shared/docs/host.md); optionally draws the leg's overlay.
 *
 *   navplan --pack P --zone Z --from X,Y --to X,Y [--start-floor H] [--goal-floor H]
 *           [--goal-deck H] [--start-deck H] [--disc X,Y,R]... [--nogo F] [--overlay OUT.png]
 *           [--overlay-crop auto|on|off] [--plugin SO]
 *
 * Exit status: 0 when a route came out, 1 when the planner failed, 2 on bad arguments or loads. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_load.h"
#ifdef NM_HAVE_OVERLAY
#include "leg_overlay.h"
#endif

#define MAX_DISCS 64

static void print_usage(FILE *f)
{
    fprintf(f, "usage: navplan --pack P --zone Z --from X,Y --to X,Y [--start-floor H] [--goal-floor H]\n"
               "               [--goal-deck H] [--start-deck H] [--disc X,Y,R]... [--nogo F]\n"
               "               [--overlay OUT.png] [--overlay-crop auto|on|off] [--plugin SO]\n"
               "       navplan --help\n");
}

/* A bad argument: what was wrong, then the usage. */
static int bad(const char *opt, const char *val, const char *why)
{
    fprintf(stderr, "navplan: %s%s%s: %s\n", opt, val ? " " : "", val ? val : "", why);
    print_usage(stderr);
    return 2;
}

static int parse_xy(const char *s, double *x, double *y)
{
    char *e;
    *x = strtod(s, &e);
    if (e == s || *e != ',') return -1;
    const char *t = e + 1;
    *y = strtod(t, &e);
    return e == t || *e ? -1 : 0;
}

static int parse_num(const char *s, double *v)
{
    char *e;
    *v = strtod(s, &e);
    return e == s || *e ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *pack = NULL, *zone = NULL, *nogo = NULL, *overlay = NULL, *plugin = NULL;
    double sx = 0, sy = 0, gx = 0, gy = 0;
    int have_from = 0, have_to = 0;
    double heights[4] = {NM_PLUGIN_NONE, NM_PLUGIN_NONE, NM_PLUGIN_NONE, NM_PLUGIN_NONE};
    nm_plugin_disc discs[MAX_DISCS];
    uint32_t ndiscs = 0;
    int crop = 0; /* NM_LEG_CROP_AUTO */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(stdout);
            return 0;
        }
        if (!v) return bad(a, NULL, "needs a value (or is unknown)");
        i++;
        if (!strcmp(a, "--pack")) pack = v;
        else if (!strcmp(a, "--zone")) zone = v;
        else if (!strcmp(a, "--nogo")) nogo = v;
        else if (!strcmp(a, "--overlay")) overlay = v;
        else if (!strcmp(a, "--plugin")) plugin = v;
        else if (!strcmp(a, "--overlay-crop")) {
#ifdef NM_HAVE_OVERLAY
            if ((crop = nm_leg_crop_parse(v)) < 0) return bad(a, v, "expected auto, on or off");
#endif
        }
        else if (!strcmp(a, "--from")) {
            if (parse_xy(v, &sx, &sy)) return bad(a, v, "expected X,Y (px)");
            have_from = 1;
        } else if (!strcmp(a, "--to")) {
            if (parse_xy(v, &gx, &gy)) return bad(a, v, "expected X,Y (px)");
            have_to = 1;
        }
        else if (!strcmp(a, "--start-floor") || !strcmp(a, "--goal-floor") || !strcmp(a, "--goal-deck") ||
                 !strcmp(a, "--start-deck")) {
            int k = !strcmp(a, "--start-floor") ? 0 : !strcmp(a, "--goal-floor") ? 1 : !strcmp(a, "--goal-deck") ? 2 : 3;
            if (parse_num(v, &heights[k])) return bad(a, v, "expected a height (m)");
        } else if (!strcmp(a, "--disc")) {
            if (ndiscs == MAX_DISCS) return bad(a, v, "at most 64 discs");
            nm_plugin_disc *d = &discs[ndiscs++];
            if (sscanf(v, "%lf,%lf,%lf", &d->x, &d->y, &d->radius) != 3) return bad(a, v, "expected X,Y,R (px)");
        } else {
            return bad(a, NULL, "unknown option");
        }
    }
    if (!pack || !zone || !have_from || !have_to) return bad("--pack, --zone, --from and --to", NULL, "required");

    char why[512];
    void *so = NULL;
    const nm_plugin_api *api = nm_host_load_plugin(plugin, &so, why, sizeof why);
    if (!api) {
        fprintf(stderr, "navplan: %s\n", why);
        return 2;
    }
    nm_plugin_engine *e = api->open(pack, zone, nogo);
    if (!e) {
        fprintf(stderr, "navplan: %s\n", api->last_error());
        dlclose(so);
        return 2;
    }
    nm_plugin_request q;
    api->request_init(&q, sx, sy, gx, gy);
    q.start_floor_y = heights[0];
    q.goal_floor_y = heights[1];
    q.goal_deck_y = heights[2];
    q.start_deck_y = heights[3];
    q.no_go_discs = discs;
    q.n_no_go_discs = ndiscs;
    nm_plugin_result *r = NULL;
    int status = 2;
    if (api->plan(e, &q, &r) != NM_PLUGIN_OK) {
        fprintf(stderr, "navplan: %s\n", api->last_error());
    } else {
        char *js = api->result_json(r);
        if (js) printf("%s\n", js);
        api->string_free(js);
        status = r->ok ? 0 : 1;
        if (!r->ok) fprintf(stderr, "navplan: %s: %s\n", r->code ? r->code : "internal", r->error);
        if (overlay) {
#ifdef NM_HAVE_OVERLAY
            nm_leg_canvas *cv = NULL;
            nm_error err = {0};
            if (nm_leg_canvas_open(pack, zone, nogo, &cv, &err) != NM_OK ||
                nm_leg_overlay_write(cv, r, sx, sy, gx, gy, discs, ndiscs, "navplan", crop, overlay, NULL, &err) != NM_OK) {
                fprintf(stderr, "navplan: overlay: %s\n", err.msg);
                status = 2;
            }
            nm_leg_canvas_close(cv);
#else
            (void)crop;
            fprintf(stderr, "navplan: built without OpenCV, no overlay\n");
#endif
        }
        api->result_free(r);
    }
    api->close(e);
    dlclose(so);
    return status;
}
