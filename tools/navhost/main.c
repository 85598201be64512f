/* navhost — the reference host: reads a MapNavigator-style route file, expands every NAVMESH leg
 * by planning through the dlopen'ed plugin (start recovery with a 32 px snap and one retry, the
 * no-go and failure-code rules of shared/docs/host.md), passes every other entry through, prints
 * the expanded route as JSON and optionally one overlay PNG per leg.
 *
 *   navhost --pack P --route ROUTE.json [--zone Z] [--nogo F] [--overlay-dir D]
 *           [--overlay-crop auto|on|off] [--plugin SO]
 *
 * Output: {"ok": true, "route": [...], "legs": [...]} or {"ok": false, "code": ..., "message": ...,
 * "entry": i, "route": [what was expanded so far], "legs": [...]}. Exit 0 on success, 1 on an
 * expansion failure, 2 on bad arguments. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "host_load.h"
#include "pack/pack.h"
#include "route_file.h"
#ifdef NM_HAVE_OVERLAY
#include "leg_overlay.h"
#endif

#define kStartRecoveryPx 32.0   /* kStartRecoveryMaxBlindWalk */
#define kArrivalSlackPx 0.5     /* kWaypointArrivalSlack */

typedef struct host {
    const nm_plugin_api *api;
    const char *pack_path, *nogo, *overlay_dir;
    nm_plugin_engine *engine;
    char zone[256];
    nm_pack tiers;              /* zone-scoped load for target_tier projection */
    bool has_tiers;
#ifdef NM_HAVE_OVERLAY
    nm_leg_canvas *canvas;
#endif
    int crop;                   /* nm_leg_crop of the overlays */
    cJSON *route, *legs;
    char code[64], message[1024];
    unsigned plans;             /* plan calls made, and the plugin's own time for them */
    double plan_ms;
} host;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? (char *)malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static int fail(host *h, const char *code, const char *fmt, const char *detail)
{
    snprintf(h->code, sizeof h->code, "%s", code);
    snprintf(h->message, sizeof h->message, fmt, detail ? detail : "");
    return -1;
}

static void close_zone(host *h)
{
    if (h->engine) h->api->close(h->engine);
    h->engine = NULL;
    if (h->has_tiers) nm_pack_free(&h->tiers);
    h->has_tiers = false;
#ifdef NM_HAVE_OVERLAY
    nm_leg_canvas_close(h->canvas);
    h->canvas = NULL;
#endif
}

static int open_zone(host *h, const char *zone)
{
    if (h->engine && strcmp(h->zone, zone) == 0) return 0;
    close_zone(h);
    snprintf(h->zone, sizeof h->zone, "%s", zone);
    h->engine = h->api->open(h->pack_path, zone, h->nogo);
    if (!h->engine) return fail(h, "navmesh_load_failed", "%s", h->api->last_error());
    /* the zone's cleaned mesh and sidecar data built at load, as the reference host does, not in
     * the first leg's plan; a failure here is the first plan's failure too and is reported there */
    (void)h->api->warm(h->engine);
    nm_pack_load_opts lo = {0};
    lo.zone = zone;
    nm_error err = {0};
    h->has_tiers = nm_pack_load(h->pack_path, &lo, &h->tiers, &err) == NM_OK;
#ifdef NM_HAVE_OVERLAY
    if (h->overlay_dir && nm_leg_canvas_open(h->pack_path, zone, h->nogo, &h->canvas, &err) != NM_OK)
        fprintf(stderr, "navhost: overlays off for zone %s: %s\n", zone, err.msg);
#endif
    return 0;
}

static cJSON *xy(double x, double y)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(x));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(y));
    return a;
}

static cJSON *run_json(double x, double y, int strict, double clearance, double floor_y)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "action", "RUN");
    cJSON_AddNumberToObject(o, "x", x);
    cJSON_AddNumberToObject(o, "y", y);
    cJSON_AddBoolToObject(o, "strict", strict);
    cJSON_AddNumberToObject(o, "clearance", clearance);
    if (floor_y > NM_PLUGIN_VALID_MIN) cJSON_AddNumberToObject(o, "floor_y", floor_y);
    else cJSON_AddNullToObject(o, "floor_y");
    return o;
}

static void append_run(host *h, const nm_plugin_result *r)
{
    for (uint32_t i = 0; i < r->n_run; i++) {
        const nm_plugin_run *w = &r->run[i];
        cJSON *o = run_json(w->x, w->y, w->strict, w->clearance, w->floor_y);
        if (w->target_deck_y > NM_PLUGIN_VALID_MIN) cJSON_AddNumberToObject(o, "target_deck_y", w->target_deck_y);
        if (w->has_drop_from) cJSON_AddItemToObject(o, "drop_from", xy(w->drop_from_x, w->drop_from_y));
        cJSON_AddItemToArray(h->route, o);
    }
}

static void draw(host *h, const nm_plugin_result *r, const nm_plugin_request *q, size_t entry, int attempt,
                 cJSON *leg)
{
#ifdef NM_HAVE_OVERLAY
    if (!h->overlay_dir || !h->canvas) return;
    char path[1024], title[64];
    snprintf(path, sizeof path, "%s/leg_%03zu%s.png", h->overlay_dir, entry, attempt ? "_retry" : "");
    snprintf(title, sizeof title, "entry %zu%s", entry, attempt ? " (retry)" : "");
    nm_error err = {0};
    if (nm_leg_overlay_write(h->canvas, r, q->start_x, q->start_y, q->goal_x, q->goal_y, q->no_go_discs,
                             q->n_no_go_discs, title, h->crop, path, NULL, &err) != NM_OK)
        fprintf(stderr, "navhost: overlay %s: %s\n", path, err.msg);
    else
        cJSON_AddStringToObject(leg, "overlay", path);
#else
    (void)h, (void)r, (void)q, (void)entry, (void)attempt, (void)leg;
#endif
}

/* One NAVMESH leg (host.md "Expansion per NAVMESH leg"). Updates the position on success. */
static int expand_leg(host *h, size_t idx, const nm_rt_entry *e, double *px, double *py, double *floor_y)
{
    double gx = e->x, gy = e->y, goal_floor = h->api->zone_floor_y(h->engine);
    if (e->tier) {
        int t = h->has_tiers ? nm_pack_find_zone(&h->tiers, e->tier) : -1;
        if (t < 0 || !(h->tiers.zones[t].flags & NM_ZONE_FLAG_TIER))
            return fail(h, "unknown_target_tier", "target_tier %s is not a tier zone of this zone", e->tier);
        const nm_zone *z = &h->tiers.zones[t];
        gx = (double)z->t[0] * e->x + (double)z->t[1];
        gy = (double)z->t[2] * e->y + (double)z->t[3];
        if (z->floor_y > NM_kFloorYValidMin) goal_floor = z->floor_y;
    }
    nm_plugin_request q;
    h->api->request_init(&q, *px, *py, gx, gy);
    q.start_floor_y = *floor_y;
    q.goal_floor_y = goal_floor;
    if (e->has_deck) q.goal_deck_y = e->deck_y;
    cJSON *leg = cJSON_CreateObject();
    cJSON_AddItemToArray(h->legs, leg);
    cJSON_AddNumberToObject(leg, "entry", (double)idx);
    cJSON_AddItemToObject(leg, "from", xy(*px, *py));
    cJSON_AddItemToObject(leg, "to", xy(gx, gy));
    for (int attempt = 0; attempt < 2; attempt++) {
        nm_plugin_result *r = NULL;
        if (h->api->plan(h->engine, &q, &r) != NM_PLUGIN_OK)
            return fail(h, "route_unreachable", "%s", h->api->last_error());
        h->plans++;
        h->plan_ms += r->ms_total;
        draw(h, r, &q, idx, attempt, leg);
        cJSON_AddBoolToObject(leg, attempt ? "ok_retry" : "ok", r->ok);
        if (r->ok) {
            cJSON_AddNumberToObject(leg, "length", r->length);
            cJSON_AddNumberToObject(leg, "run_waypoints", r->n_run);
            cJSON_AddStringToObject(leg, "tier", r->tier_kind);
            append_run(h, r);
            *px = r->points.xy[2 * (r->points.n - 1)];
            *py = r->points.xy[2 * (r->points.n - 1) + 1];
            if (r->n_run) *floor_y = r->run[r->n_run - 1].floor_y;
            h->api->result_free(r);
            return 0;
        }
        cJSON_AddStringToObject(leg, attempt ? "error_retry" : "error", r->error);
        const char *pcode = r->code ? r->code : "";
        cJSON_AddStringToObject(leg, attempt ? "code_retry" : "code", pcode);
        int rc = 0;
        if (r->cancelled || !strcmp(pcode, "cancelled")) rc = fail(h, "cancelled", "%s", r->error);
        /* no_go is terminal: no recovery, no fallback */
        else if (r->no_go) rc = fail(h, "route_no_go", "%s", r->error);
        /* the engine cannot plan on this zone at all: retrying from another start cannot help */
        else if (!strcmp(pcode, "engine_unusable")) rc = fail(h, "navmesh_load_failed", "%s", r->error);
        /* a declared target deck is never blind-walked: disconnected when a gap was located, else
         * unreachable (host.md step 4), whatever the planner's own code */
        else if (attempt == 1 && e->has_deck)
            rc = fail(h, r->has_gap ? "route_disconnected" : "target_deck_unreachable", "%s", r->error);
        else if (attempt == 1)
            rc = fail(h, r->has_gap ? "route_disconnected" : "route_unreachable", "%s", r->error);
        h->api->result_free(r);
        if (rc) return rc;
        /* start recovery: snap the start back onto the mesh within 32 px, walk there, retry once */
        double sx, sy, d;
        if (h->api->snap(h->engine, q.start_x, q.start_y, q.start_floor_y, kStartRecoveryPx, &sx, &sy, &d) != NM_PLUGIN_OK)
            return fail(h, "route_unreachable", "start recovery: %s", h->api->last_error());
        if (d > kArrivalSlackPx) cJSON_AddItemToArray(h->route, run_json(sx, sy, 0, 0, *floor_y));
        q.start_x = sx;
        q.start_y = sy;
    }
    return fail(h, "route_unreachable", "%s", "no route after start recovery");
}

static int expand(host *h, const nm_route_file *f, const char *zone_arg, size_t *at)
{
    bool have_pos = false;
    double px = 0, py = 0, floor_y = NM_PLUGIN_NONE;
    if (f->n == 0) return fail(h, "empty_route", "%s", "the route file has no entries");
    if (zone_arg && open_zone(h, zone_arg)) return -1;
    if (h->engine) floor_y = h->api->zone_floor_y(h->engine);
    for (size_t i = 0; i < f->n; i++) {
        *at = i;
        const nm_rt_entry *e = &f->entries[i];
        switch (e->kind) {
        case NM_RT_ZONE:
            if (open_zone(h, e->zone)) return -1;
            floor_y = h->api->zone_floor_y(h->engine);
            cJSON_AddItemToArray(h->route, cJSON_Duplicate(e->raw, 1));
            break;
        case NM_RT_POINT:
            px = e->x;
            py = e->y;
            have_pos = true;
            cJSON_AddItemToArray(h->route, cJSON_Duplicate(e->raw, 1));
            break;
        case NM_RT_NAVMESH:
            if (!h->engine) return fail(h, "zone_unresolved", "%s", "a NAVMESH leg before any ZONE entry (or --zone)");
            if (!have_pos) return fail(h, "empty_route", "%s", "a NAVMESH leg with no position before it");
            if (expand_leg(h, i, e, &px, &py, &floor_y)) return -1;
            break;
        default:
            cJSON_AddItemToArray(h->route, cJSON_Duplicate(e->raw, 1));
        }
    }
    return 0;
}

static void print_usage(FILE *f)
{
    fprintf(f, "usage: navhost --pack P --route ROUTE.json [--zone Z] [--nogo F] [--overlay-dir D]\n"
               "               [--overlay-crop auto|on|off] [--plugin SO]\n"
               "       navhost --help\n");
}

/* A bad argument: what was wrong, then the usage. */
static int bad(const char *opt, const char *val, const char *why)
{
    fprintf(stderr, "navhost: %s%s%s: %s\n", opt, val ? " " : "", val ? val : "", why);
    print_usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    host h;
    memset(&h, 0, sizeof h);
    const char *route_path = NULL, *zone = NULL, *plugin = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) return bad(a, NULL, "needs a value (or is unknown)");
        const char *v = argv[i + 1];
        if (!strcmp(a, "--pack")) h.pack_path = v;
        else if (!strcmp(a, "--route")) route_path = v;
        else if (!strcmp(a, "--zone")) zone = v;
        else if (!strcmp(a, "--nogo")) h.nogo = v;
        else if (!strcmp(a, "--overlay-dir")) h.overlay_dir = v;
        else if (!strcmp(a, "--plugin")) plugin = v;
        else if (!strcmp(a, "--overlay-crop")) {
#ifdef NM_HAVE_OVERLAY
            if ((h.crop = nm_leg_crop_parse(v)) < 0) return bad(a, v, "expected auto, on or off");
#endif
        } else return bad(a, NULL, "unknown option");
    }
    if (!h.pack_path || !route_path) return bad("--pack and --route", NULL, "required");
    if (h.overlay_dir) mkdir(h.overlay_dir, 0755);
    char why[512];
    void *so = NULL;
    h.api = nm_host_load_plugin(plugin, &so, why, sizeof why);
    if (!h.api) {
        fprintf(stderr, "navhost: %s\n", why);
        return 2;
    }
    h.route = cJSON_CreateArray();
    h.legs = cJSON_CreateArray();
    char *text = read_text(route_path);
    nm_route_file f;
    memset(&f, 0, sizeof f);
    size_t at = 0;
    int rc = -1;
    if (!text) fail(&h, "empty_route", "cannot read the route file %s", route_path);
    else if (nm_route_file_parse(text, &f, why, sizeof why)) fail(&h, "expansion_failed", "%s", why);
    else rc = expand(&h, &f, zone, &at);
    free(text);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddBoolToObject(out, "ok", rc == 0);
    if (rc) {
        cJSON_AddStringToObject(out, "code", h.code);
        cJSON_AddStringToObject(out, "message", h.message);
        cJSON_AddNumberToObject(out, "entry", (double)at);
    }
    cJSON_AddItemToObject(out, "route", h.route);
    cJSON_AddItemToObject(out, "legs", h.legs);
    char *s = cJSON_Print(out);
    if (s) printf("%s\n", s);
    cJSON_free(s);
    cJSON_Delete(out);
    if (rc) fprintf(stderr, "navhost: %s: %s\n", h.code, h.message);
    /* the legs' own planning time (the plugin's figure; overlays and the pack's open excluded) */
    fprintf(stderr, "navhost: %u plan calls, %.0f ms planning\n", h.plans, h.plan_ms);
    nm_route_file_free(&f);
    close_zone(&h);
    dlclose(so);
    return rc ? 1 : 0;
}
