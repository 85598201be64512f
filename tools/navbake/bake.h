/* bake.h — navbake's pipeline for the main pack: the level description (zone.json, see
 * ZONE_JSON.md), and the bake from an OBJ plus that description to an in-memory BNAV pack
 * (walkable mesh per zone, weld, neighbours, components, links, BSRF, BOML v2, zone table).
 * The pipeline is a list of stages (bake.c) so later outputs (grid, fields, occluder) add stages.
 *
 * Units: OBJ and zone.json positions in world metres (after --scale), pack u/v in base-map
 * pixels, heights in metres. */
#ifndef NM_TOOLS_BAKE_H
#define NM_TOOLS_BAKE_H

#include "obj.h"
#include "pack/pack.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_bake_agent {
    double height, radius, climb; /* m; defaults 2.1, 0.41, 0.5 */
    double slope_deg;             /* degrees; default 45 */
} nm_bake_agent;

typedef struct nm_bake_tier {
    char *name;
    uint16_t id;
    float t[4];                   /* tier px -> parent px; default {1, 0, 1, 0} */
    float floor_y;                /* NM_kFloorYNone when absent */
    bool has_size;
    float width, height;          /* px; default: the parent's */
} nm_bake_tier;

typedef struct nm_bake_zone {
    char *name;
    uint16_t id;
    float t[4];                   /* sx, tx, sy, ty: u = sx*x + tx, v = ty - sy*z; default {0.75, 0, 0.75, 0} */
    float floor_y;                /* NM_kFloorYNone when absent */
    bool has_size;
    float width, height;          /* px; default: pixel extent of the zone's triangles (>= 1) */
    char **groups;                /* group patterns ("x*" = prefix); NULL = unclaimed groups */
    uint32_t group_count;
    bool groups_given;
    nm_bake_tier *tiers;
    uint32_t tier_count;
} nm_bake_zone;

typedef struct nm_bake_area { char *pattern; uint8_t area; } nm_bake_area;

typedef struct nm_bake_offmesh {
    uint32_t zone;                /* index into zones */
    double from[3], to[3];        /* world m */
    bool bidirectional;           /* default false */
    float radius, cost;           /* default agent radius, 1.0 */
    int32_t area;                 /* default 0 */
    uint16_t type;                /* link_type, default 0 */
} nm_bake_offmesh;

typedef struct nm_bake_config {
    nm_bake_agent agent;
    nm_bake_zone *zones;          uint32_t zone_count;
    nm_bake_area *areas;          uint32_t area_count;    /* first matching pattern wins */
    char **collision_only;        uint32_t collision_count;
    char **obstacles;             uint32_t obstacle_count;
    char **heightfields;          uint32_t heightfield_count; /* groups whose square cells become terrain blocks */
    nm_bake_offmesh *offmesh;     uint32_t offmesh_count;
} nm_bake_config;

/* One zone named `zone_name`, defaults everywhere. */
int nm_bake_config_default(const char *zone_name, nm_bake_config *c, nm_error *err);
/* Parses zone.json text; `name` is used in messages ("zone.json: zones[1].transform[2]: ...").
 * Without a "zones" key the level is one zone named default_zone. */
int nm_bake_config_parse(const char *text, size_t size, const char *name, const char *default_zone,
                         nm_bake_config *c, nm_error *err);
int nm_bake_config_load(const char *path, const char *default_zone, nm_bake_config *c, nm_error *err);
void nm_bake_config_free(nm_bake_config *c);
/* "x*" matches every name starting with x; anything else matches exactly. */
bool nm_bake_pattern_match(const char *pattern, const char *name);

/* Progress report: stage name and fraction done (0..1). Called from the calling thread only. */
typedef void (*nm_bake_progress_fn)(void *ctx, const char *stage, double frac);

typedef struct nm_bake_opts {
    const nm_obj *obj;
    const nm_bake_config *cfg;
    double scale;                 /* OBJ coordinates times this (0 = 1) */
    bool walkable_as_is;          /* OBJ triangles are the navmesh (no Recast) */
    int workers;                  /* 0 = machine cores (at most 4); output does not depend on it */
    nm_bake_progress_fn progress; /* may be NULL */
    void *progress_ctx;
    bool no_grid;                 /* nm_bake_to_dir: skip the grid, fields and occluder stages */
    bool no_occluder;             /* no base.occluder.gz, and the grid's drops are not gated by
                                     collision geometry (tests of the planner's FallGate) */
} nm_bake_opts;

/* Bakes the main pack into *out (free with nm_pack_free). build_hash / file_fnv are filled by
 * nm_pack_serialize / nm_pack_save. */
int nm_bake_main_pack(const nm_bake_opts *opts, nm_pack *out, nm_error *err);

/* Per-zone numbers of the grid stage (for progress lines and tests). */
typedef struct nm_bake_grid_report {
    uint64_t cells, records, regions, tiles;
    double seconds;
} nm_bake_grid_report;

/* Everything the navbake command does: bake and write dir/base.nav.gz (creating dir); unless
 * opts->no_grid, also the BGRD section inside it (grid stage: every geometry zone through
 * navmesh/bake), dir/base.fields.nav.gz (BNVF bound to the written pack's build_hash and file
 * FNV) and dir/base.occluder.gz (occluder stage: ALL OBJ groups of each zone, world metres). */
int nm_bake_to_dir(const nm_bake_opts *opts, const char *dir, nm_error *err);

/* The occluder of a level: each configured zone gets every OBJ group it takes (any role) as one
 * world-space triangle group (OBJ coordinates times scale). Appends OCLS bytes to out. */
int nm_bake_occluder(const nm_obj *obj, const nm_bake_config *cfg, double scale, nm_buf *out,
                     nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
