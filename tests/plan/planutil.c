/* planutil.c — the helpers of planutil.h: baking through the built tools, the engine, requests in
 * scene metres and the route invariants checked on every plan of the end-to-end tests. */
#include "planutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *env_or(const char *k, const char *d)
{
    const char *v = getenv(k);
    return v ? v : d;
}

static void tool_path(char *out, size_t n, const char *tool)
{
    snprintf(out, n, "%s/tools/%s/%s", env_or("NM_BUILD_ROOT", "."), tool, tool);
}

bool pu_tools_present(void)
{
    char a[600], b[600];
    tool_path(a, sizeof a, "scenegen");
    tool_path(b, sizeof b, "navbake");
    return access(a, X_OK) == 0 && access(b, X_OK) == 0;
}

static void run(const char *cmd)
{
    cr_assert_eq(system(cmd), 0, "command failed: %s", cmd);
}

static void open_world(pu_world *W, const char *zone, const char *nogo_path, int workers)
{
    snprintf(W->pack_path, sizeof W->pack_path, "%s/out/base.nav.gz", W->dir);
    nm_pack_load_opts lo = {0};
    lo.workers = workers;
    nm_error err = {0};
    cr_assert_eq(nm_pack_load(W->pack_path, &lo, &W->pack, &err), NM_OK, "%s", err.msg);
    snprintf(W->zone, sizeof W->zone, "%s", zone);
    int zi = nm_pack_find_zone(&W->pack, zone);
    cr_assert_geq(zi, 0, "zone %s not in the pack", zone);
    W->scale = W->pack.zones[zi].t[0];
    cr_assert_eq(nm_route_engine_open(&W->e, &W->pack, W->pack_path, nogo_path, workers, &err), NM_OK,
                 "%s", err.msg);
    W->open = true;
}

static void make_dir(pu_world *W)
{
    memset(W, 0, sizeof *W);
    snprintf(W->dir, sizeof W->dir, "/tmp/nm_plan_XXXXXX");
    cr_assert_not_null(mkdtemp(W->dir));
}

/* the zone: the first "name" of the baked scene's zone.json */
static void first_zone(const pu_world *W, char zone[64])
{
    char zpath[600], buf[4096] = {0};
    zone[0] = 0;
    snprintf(zpath, sizeof zpath, "%s/zone.json", W->dir);
    FILE *f = fopen(zpath, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strstr(buf, "\"name\"");
    cr_assert_not_null(p, "zone.json has no zone name");
    p = strchr(p + 6, '"');
    cr_assert_not_null(p);
    sscanf(p + 1, "%63[^\"]", zone);
}

static void bake_scene(pu_world *W, const char *name, const char *nogo_json, int workers, bool as_is)
{
    make_dir(W);
    char sg[600], nb[600], scene[800], cmd[4096], nogo[600];
    tool_path(sg, sizeof sg, "scenegen");
    tool_path(nb, sizeof nb, "navbake");
    if (strchr(name, '/'))
        snprintf(scene, sizeof scene, "%s/%s", env_or("NM_SOURCE_ROOT", "."), name);
    else
        snprintf(scene, sizeof scene, "%s/resources/scenes/%s/scene.json", env_or("NM_SOURCE_ROOT", "."), name);
    snprintf(cmd, sizeof cmd, "'%s' '%s' --out '%s' > /dev/null", sg, scene, W->dir);
    run(cmd);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s/level.obj' --zone '%s/zone.json' --out '%s/out'%s --quiet", nb, W->dir,
             W->dir, W->dir, as_is ? " --walkable-as-is" : "");
    run(cmd);
    char zone[64];
    first_zone(W, zone);
    const char *np = NULL;
    if (nogo_json) {
        snprintf(nogo, sizeof nogo, "%s/nogo.json", W->dir);
        FILE *f = fopen(nogo, "w");
        cr_assert_not_null(f);
        fputs(nogo_json, f);
        fclose(f);
        np = nogo;
    }
    open_world(W, zone, np, workers);
}

void pu_bake_scene(pu_world *W, const char *name, const char *nogo_json, int workers)
{
    bake_scene(W, name, nogo_json, workers, true);
}

void pu_bake_scene_default(pu_world *W, const char *name, int workers)
{
    bake_scene(W, name, NULL, workers, false);
}

void pu_bake_obj(pu_world *W, const char *obj, const char *zone_json, const char *zone_name,
                 double scale, int workers)
{
    make_dir(W);
    char nb[600], cmd[4096], zarg[700] = "", sarg[64] = "";
    tool_path(nb, sizeof nb, "navbake");
    if (zone_json) snprintf(zarg, sizeof zarg, "--zone '%s'", zone_json);
    if (scale > 0) snprintf(sarg, sizeof sarg, "--scale %g", scale);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s' %s %s --out '%s/out' --walkable-as-is --quiet", nb, obj, zarg, sarg,
             W->dir);
    run(cmd);
    open_world(W, zone_name, NULL, workers);
}

const char *pu_bundled_level(const char *rel, char *buf, size_t n)
{
    snprintf(buf, n, "%s/resources/levels/%s", env_or("NM_SOURCE_ROOT", "."), rel);
    return buf;
}

void pu_bake_obj_recast(pu_world *W, const char *obj, const char *zone_name, double scale, int workers)
{
    make_dir(W);
    char nb[600], cmd[4096], sarg[64] = "";
    tool_path(nb, sizeof nb, "navbake");
    if (scale > 0) snprintf(sarg, sizeof sarg, "--scale %g", scale);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s' %s --out '%s/out' --quiet", nb, obj, sarg, W->dir);
    run(cmd);
    open_world(W, zone_name, NULL, workers);
}

void pu_bake_movingai(pu_world *W, const char *map, const char *scen, double tile_px, const char **legs_path)
{
    make_dir(W);
    static char legs[600];
    char sg[600], nb[600], cmd[4096];
    tool_path(sg, sizeof sg, "scenegen");
    tool_path(nb, sizeof nb, "navbake");
    snprintf(cmd, sizeof cmd, "'%s' --movingai '%s' --scen '%s' --tile %.17g --out '%s' > /dev/null", sg, map, scen,
             tile_px, W->dir);
    run(cmd);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s/level.obj' --zone '%s/zone.json' --out '%s/out' --walkable-as-is --quiet",
             nb, W->dir, W->dir, W->dir);
    run(cmd);
    snprintf(legs, sizeof legs, "%s/legs.txt", W->dir);
    *legs_path = legs;
    char zone[64];
    first_zone(W, zone);
    open_world(W, zone, NULL, 0);
}

void pu_close(pu_world *W)
{
    if (W->open) {
        nm_route_engine_close(&W->e);
        nm_pack_free(&W->pack);
    }
    W->open = false;
    if (W->dir[0] && !getenv("NM_KEEP_TMP")) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", W->dir);
        if (system(cmd) != 0) {
        }
    }
}

nm_route_request pu_req(const pu_world *W, double sx, double sy, double gx, double gy)
{
    nm_route_request q = nm_route_request_defaults(W->zone, sx * W->scale, sy * W->scale, gx * W->scale,
                                                   gy * W->scale);
    q.self_check = true;
    return q;
}

void pu_plan_q(pu_world *W, const nm_route_request *q, nm_route_result *r)
{
    nm_error err = {0};
    cr_assert_eq(nm_route_plan(&W->e, q, r, &err), NM_OK, "plan: %s", err.msg);
}

void pu_plan(pu_world *W, double sx, double sy, double gx, double gy, nm_route_result *r)
{
    nm_route_request q = pu_req(W, sx, sy, gx, gy);
    pu_plan_q(W, &q, r);
}

bool pu_check_route(const nm_route_result *r, const char *what)
{
    bool ok = true;
#define PU_EXPECT(c, ...)             \
    do {                              \
        if (!(c)) {                   \
            ok = false;               \
            cr_expect(c, __VA_ARGS__); \
        }                             \
    } while (0)
    PU_EXPECT(r->ok, "%s: %s", what, r->error);
    if (!r->ok) return false;
    PU_EXPECT(r->npoints >= 2, "%s: %u points", what, r->npoints);
    PU_EXPECT(r->self_checks > 0, "%s: no self check made", what);
    PU_EXPECT(r->self_check_failures == 0, "%s: %u self check failures: %s", what, r->self_check_failures,
              r->self_check_msg);
    double len = 0;
    for (uint32_t k = 0; k < r->npoints; k++)
        PU_EXPECT(isfinite(r->xy[2 * k]) && isfinite(r->xy[2 * k + 1]), "%s: point %u not finite", what, k);
    for (uint32_t k = 0; k + 1 < r->npoints; k++)
        len += hypot(r->xy[2 * k + 2] - r->xy[2 * k], r->xy[2 * k + 3] - r->xy[2 * k + 1]);
    PU_EXPECT(fabs(len - r->length) <= 1e-6 * fmax(1, len), "%s: length %f vs %f", what, r->length, len);
    if (r->nwaypoints) {
        PU_EXPECT(r->waypoints[r->nwaypoints - 1] == r->npoints - 1, "%s: last waypoint %u of %u", what,
                  r->waypoints[r->nwaypoints - 1], r->npoints);
        for (uint32_t k = 0; k < r->nwaypoints; k++)
            PU_EXPECT(r->waypoints[k] > 0 && (k == 0 || r->waypoints[k] > r->waypoints[k - 1]),
                      "%s: waypoint %u = %u out of order", what, k, r->waypoints[k]);
    }
    for (uint32_t d = 0; d < r->ndrops; d++) {
        PU_EXPECT(d == 0 || r->drops[d].index > r->drops[d - 1].index, "%s: drops out of order", what);
        bool wp = false;
        for (uint32_t k = 0; k < r->nwaypoints; k++) wp |= r->waypoints[k] == r->drops[d].index;
        PU_EXPECT(wp, "%s: drop landing %u is not a waypoint", what, r->drops[d].index);
    }
#undef PU_EXPECT
    return ok;
}

double pu_min_x(const pu_world *W, const nm_route_result *r)
{
    double m = INFINITY;
    for (uint32_t k = 0; k < r->npoints; k++) m = fmin(m, r->xy[2 * k] / W->scale);
    return m;
}

double pu_max_x(const pu_world *W, const nm_route_result *r)
{
    double m = -INFINITY;
    for (uint32_t k = 0; k < r->npoints; k++) m = fmax(m, r->xy[2 * k] / W->scale);
    return m;
}

double pu_max_y(const pu_world *W, const nm_route_result *r)
{
    double m = -INFINITY;
    for (uint32_t k = 0; k < r->npoints; k++) m = fmax(m, r->xy[2 * k + 1] / W->scale);
    return m;
}

double pu_y_at_x(const pu_world *W, const nm_route_result *r, double xm)
{
    double x = xm * W->scale;
    for (uint32_t k = 0; k + 1 < r->npoints; k++) {
        double ax = r->xy[2 * k], bx = r->xy[2 * k + 2];
        if ((ax - x) * (bx - x) <= 0 && ax != bx) {
            double t = (x - ax) / (bx - ax);
            return (r->xy[2 * k + 1] + t * (r->xy[2 * k + 3] - r->xy[2 * k + 1])) / W->scale;
        }
    }
    return NAN;
}

float pu_min_h(const nm_route_result *r)
{
    float m = INFINITY;
    for (uint32_t k = 0; r->heights && k < r->npoints; k++) m = fminf(m, r->heights[k]);
    return m;
}

float pu_max_h(const nm_route_result *r)
{
    float m = -INFINITY;
    for (uint32_t k = 0; r->heights && k < r->npoints; k++) m = fmaxf(m, r->heights[k]);
    return m;
}
