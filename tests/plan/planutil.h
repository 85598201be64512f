/* planutil.h — shared helpers of the end-to-end planner tests: baking a scene (scenegen +
 * navbake, --walkable-as-is or the default Recast path) into a temporary folder, opening the
 * pack and the engine, planning in scene metres with the route's self check on, and the
 * invariants every route must keep. */
#ifndef NM_TEST_PLANUTIL_H
#define NM_TEST_PLANUTIL_H

#include <stdbool.h>

#include "route/route.h"

typedef struct pu_world {
    char dir[256];          /* temporary folder (removed by pu_close) */
    char pack_path[512];
    char zone[64];
    double scale;           /* px per metre of the zone transform */
    nm_pack pack;
    nm_route_engine e;
    bool open;
} pu_world;

/* Are the two tools built? (the tests skip when not) */
bool pu_tools_present(void);
/* Bakes resources/scenes/NAME/scene.json (or any scene.json path when name holds a '/') and
 * opens it with `workers` decode workers; zone = the scene's first zone. Fails the test on a
 * bake or load error. nogo_json: optional no-go table text written next to the pack. */
void pu_bake_scene(pu_world *W, const char *name, const char *nogo_json, int workers);
/* The same through navbake's default path (Recast builds the walkable mesh, no --walkable-as-is). */
void pu_bake_scene_default(pu_world *W, const char *name, int workers);
/* Bakes an OBJ (+ zone json, may be NULL) with navbake --walkable-as-is (scale: --scale, 0 =
 * none). */
void pu_bake_obj(pu_world *W, const char *obj, const char *zone_json, const char *zone_name,
                 double scale, int workers);
/* The path of a bundled real level, $NM_SOURCE_ROOT/resources/levels/REL, in buf (returned). */
const char *pu_bundled_level(const char *rel, char *buf, size_t n);
/* Bakes an OBJ the default way (Recast builds the walkable mesh), as a user would. */
void pu_bake_obj_recast(pu_world *W, const char *obj, const char *zone_name, double scale, int workers);
/* Bakes a Moving AI map with its scenario at tile_px pixels per tile (scenegen --tile); *legs_path
 * gets the legs file (static buffer; positions and optimal lengths in px). */
void pu_bake_movingai(pu_world *W, const char *map, const char *scen, double tile_px, const char **legs_path);
void pu_close(pu_world *W);

/* A request in scene metres (self check on). */
nm_route_request pu_req(const pu_world *W, double sx, double sy, double gx, double gy);
/* Plans; fails the test on an engine error. */
void pu_plan_q(pu_world *W, const nm_route_request *q, nm_route_result *r);
void pu_plan(pu_world *W, double sx, double sy, double gx, double gy, nm_route_result *r);

/* The invariants of a successful route (item 4): self check clean, waypoints increasing and
 * ending at the last point, drops in route order and kept as waypoints, finite points, length
 * the sum of the segments. Reports through cr_expect; returns false on any failure. */
bool pu_check_route(const nm_route_result *r, const char *what);

/* Route facts in metres. */
double pu_min_x(const pu_world *W, const nm_route_result *r);
double pu_max_x(const pu_world *W, const nm_route_result *r);
double pu_max_y(const pu_world *W, const nm_route_result *r);
/* y (m) where the route first crosses x = xm (m); NAN when it does not. */
double pu_y_at_x(const pu_world *W, const nm_route_result *r, double xm);
/* Smallest / largest height along the route. */
float pu_min_h(const nm_route_result *r);
float pu_max_h(const nm_route_result *r);

#endif
