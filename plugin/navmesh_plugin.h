/* navmesh_plugin.h — the public C ABI of the planner plugin (design article 输入与输出; fields as in
 * shared/docs/host.md). A host dlopens the shared object, calls nm_plugin_get(NM_PLUGIN_ABI_VERSION)
 * and uses only the returned function table. Plain C, no library types leak through.
 *
 * Units: points in base-map pixels (px), heights in metres. An absent height is the sentinel
 * NM_PLUGIN_NONE (-1e30); a value is present when > NM_PLUGIN_VALID_MIN (-1e29).
 * Ownership: results and strings returned by the plugin are owned by it and released with the
 * matching free call; nothing returned points into engine memory, so results outlive close(). */
#ifndef NM_PLUGIN_H
#define NM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NM_PLUGIN_ABI_VERSION 1
#define NM_PLUGIN_NONE (-1.0e30)
#define NM_PLUGIN_VALID_MIN (-1.0e29)

/* Status codes (same values as the library's NM_OK / NM_ERR_*). */
#define NM_PLUGIN_OK 0
#define NM_PLUGIN_ERR_CORRUPT (-1)
#define NM_PLUGIN_ERR_IO (-2)
#define NM_PLUGIN_ERR_NOMEM (-3)
#define NM_PLUGIN_ERR_ARG (-4)
#define NM_PLUGIN_ERR_STATE (-5)

/* One engine per (absolute pack path, zone); opaque. */
typedef struct nm_plugin_engine nm_plugin_engine;

/* Cancel callback: returns non-zero to stop. Polled before every window tier and between ledge-hop
 * attempts, on the planning thread. */
typedef int (*nm_plugin_stop_fn)(void *ctx);

/* A runtime no-go disc: cells whose centre lies within radius px of (x, y) are unwalkable; an
 * endpoint inside a disc still plans. [Limits: radius >= 0, finite] */
typedef struct nm_plugin_disc {
    double x, y, radius;
} nm_plugin_disc;

/* One leg (host.md "Plan request"). The zone is the engine's. */
typedef struct nm_plugin_request {
    double start_x, start_y, goal_x, goal_y;   /* px [Limits: finite] */
    double start_floor_y, goal_floor_y;        /* m, NM_PLUGIN_NONE = absent */
    double goal_deck_y, start_deck_y;          /* m, NM_PLUGIN_NONE = absent */
    const nm_plugin_disc *no_go_discs;
    uint32_t n_no_go_discs;
    nm_plugin_stop_fn should_stop;             /* may be NULL */
    void *stop_ctx;
} nm_plugin_request;

/* Fills r with an empty request from start to goal (every height absent). */
typedef void (*nm_plugin_request_init_fn)(nm_plugin_request *r, double sx, double sy, double gx,
                                          double gy);

typedef struct nm_plugin_drop {
    uint32_t index;            /* landing: index into points */
    double height;             /* lower surface, m */
    double from_x, from_y;     /* take-off point, px */
} nm_plugin_drop;

/* What the host acts on (host.md "RUN waypoints"): action is always RUN. */
typedef struct nm_plugin_run {
    double x, y;               /* px */
    int strict;                /* 1 for the last point and drop landings */
    double clearance;          /* px, capped at 12 */
    double floor_y;            /* m, NM_PLUGIN_NONE when unknown */
    double target_deck_y;      /* m, drop landings only, else NM_PLUGIN_NONE */
    int has_drop_from;
    double drop_from_x, drop_from_y; /* take-off point when has_drop_from */
} nm_plugin_run;

/* A debug point list: xy[2i], xy[2i+1]; heights[i] or NULL. */
typedef struct nm_plugin_points {
    const double *xy;
    const double *heights;
    uint32_t n;
} nm_plugin_points;

typedef struct nm_plugin_result {
    int ok;                    /* a route came out */
    int no_go;                 /* an endpoint is in an authored no-go zone: terminal */
    int cancelled;             /* should_stop said stop */
    const char *error;         /* one sentence; "" on success */
    nm_plugin_points points;   /* first = original start, last = original goal */
    const double *clearance;   /* per point, px */
    uint32_t n_waypoints;
    const uint32_t *waypoints; /* indices into points, ends with n-1 */
    uint32_t n_drops;
    const nm_plugin_drop *drops;
    double length, snap_start, snap_goal; /* px */
    uint32_t n_warnings;
    const char *const *warnings;
    uint32_t n_run;
    const nm_plugin_run *run;  /* RUN waypoints built by the host rule */
    /* debug (诊断) */
    double win_x0, win_y0, cell_size; /* px */
    int64_t win_nx, win_ny;    /* cells */
    int tier;                  /* accepted round, -1 = none */
    const char *tier_kind;     /* "Tentative" / "Capped" / "Full" (the article's names), "" without a tier */
    const char *tier_notes;    /* why earlier tiers were rejected */
    double ms_checks, ms_window, ms_topology, ms_geometry, ms_pull, ms_assemble, ms_lift,
        ms_post, ms_total;
    nm_plugin_points dbg_topology, dbg_taut, dbg_pulled, dbg_assembled;
    int has_gap;
    double gap_start_x, gap_start_y, gap_goal_x, gap_goal_y, gap_distance; /* px */
    /* Why the plan failed, one word a host can act on ("" on success; README "Failure codes"):
     * engine_unusable, start_off_mesh, goal_off_mesh, route_no_go, off_walkable_layer,
     * grid_decode_failed, no_walkable_near_start, region_empty, region_too_large, cancelled,
     * route_disconnected (no goal deck, the ends are not connected; has_gap when the gap was
     * located), route_unreachable (an end more than 8 px from the start's reach set, or the goal
     * cut off, no ledge drop connected), target_deck_unreachable (a declared goal deck that no
     * route ends on; the error lists the heights found at the goal), start_deck_unreachable (no
     * unblocked surface within 2 m of the declared start deck near the start), internal (a bug:
     * a step failed on well-formed data). A declared start deck is where an ok route starts and
     * a declared goal deck where it ends (within 2 m, kDeckBand); every point of an ok route has
     * a height. Appended after the ABI 1 fields: the plugin allocates results, so older hosts
     * keep working. */
    const char *code;
} nm_plugin_result;

/* What an engine shares with the other engines of the plugin (diagnostics and tests): engines on
 * one pack file read one copy of its grid bytes (BGRD) and one parsed sidecar. The pointers are
 * identities only, never to be read through. */
typedef struct nm_plugin_shared_info {
    const void *grid_bytes;    /* the engine's BGRD bytes (NULL: none, or e NULL) */
    uint64_t grid_size;
    uint32_t grid_holders;     /* engines reading these bytes (0 when not shared) */
    const void *fields;        /* the engine's parsed sidecar (NULL when not shared) */
    uint32_t fields_holders;
    uint32_t live_engines, live_grids, live_fields; /* in the whole plugin */
} nm_plugin_shared_info;

typedef struct nm_plugin_api {
    int abi_version;
    size_t struct_size;        /* sizeof(nm_plugin_api) of the plugin */

    /* Opens (or shares) the engine of (pack, zone). nogo_path: the authored no-go table, NULL =
     * none (a file that exists but cannot be parsed makes the open fail). NULL on failure: read
     * last_error(). Every successful open needs one close. Engines of other zones of the same
     * pack file share its grid bytes and parsed sidecar, loaded once and freed with the last
     * close (see shared_info). */
    nm_plugin_engine *(*open)(const char *pack_path, const char *zone, const char *nogo_path);
    void (*close)(nm_plugin_engine *e);
    nm_plugin_request_init_fn request_init;
    /* Plans one leg. Returns NM_PLUGIN_OK with *out set (check (*out)->ok), or an error status
     * with *out NULL (bad request: NaN, negative radius...; last_error() says why). */
    int (*plan)(nm_plugin_engine *e, const nm_plugin_request *q, nm_plugin_result **out);
    void (*result_free)(nm_plugin_result *r);
    /* The same through JSON: request {"start": [x, y], "goal": [x, y], "zone"?, "start_floor_y"?,
     * "goal_floor_y"?, "goal_deck_y"?, "start_deck_y"?, "no_go_discs"?: [{"center": [x, y],
     * "radius": r}]} -> result JSON (host.md names). Never NULL except out of memory; a bad
     * request gives {"ok": false, "error": ...}. Free with string_free. */
    char *(*plan_json)(nm_plugin_engine *e, const char *request_json, nm_plugin_stop_fn stop,
                       void *stop_ctx);
    /* A result as JSON (the same text plan_json returns). */
    char *(*result_json)(const nm_plugin_result *r);
    void (*string_free)(char *s);
    /* Builds the zone's cleaned mesh and sidecar data ahead of the first plan, every region's
     * bounding box and the zone's collision scene (the occluder pack), and, when the zone's
     * decoded tiles fit the engine's tile cache (160 MB: the demo town's do), decodes them all,
     * so that no plan pays a first decode. */
    int (*warm)(nm_plugin_engine *e);
    /* regionsNear: for each point i (xy[2i], xy[2i+1]) the sorted region ids within 8 px:
     * (*rids)[start[i] .. start[i+1]); start holds n + 1 entries (caller array); *rids is freed
     * with ids_free. An empty set means "cannot tell". */
    int (*regions_near)(nm_plugin_engine *e, const double *xy, uint32_t n, uint32_t *start,
                        uint32_t **rids);
    void (*ids_free)(uint32_t *rids);
    /* Snaps (x, y) onto the zone's walkable triangle mesh within radius px (<= 0: 16 px), preferring
     * triangles near floor_y (NM_PLUGIN_NONE = none): the host's start recovery. Writes the
     * snapped point and its planar distance; NM_PLUGIN_ERR_STATE when nothing is in range. */
    int (*snap)(nm_plugin_engine *e, double x, double y, double floor_y, double radius,
                double *sx, double *sy, double *dist);
    /* The zone's main floor height (m) or NM_PLUGIN_NONE. */
    double (*zone_floor_y)(nm_plugin_engine *e);
    /* The last error message of the calling thread ("" when none). */
    const char *(*last_error)(void);
    /* Fills *out with what e shares (e NULL: only the plugin-wide counts). */
    int (*shared_info)(nm_plugin_engine *e, nm_plugin_shared_info *out);
} nm_plugin_api;

/* The entry symbol: the function table of this ABI version, or NULL when the plugin does not
 * speak it. */
const nm_plugin_api *nm_plugin_get(int abi_version);
typedef const nm_plugin_api *(*nm_plugin_get_fn)(int abi_version);

#ifdef __cplusplus
}
#endif
#endif
