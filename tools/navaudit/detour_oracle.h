/* detour_oracle.h — Detour as an oracle (issue 12 part 2): a single-tile Detour navmesh built by
 * Recast's standard pipeline from the level's triangles with navbake's agent and voxel sizes
 * (recast_shim.cpp's parameters: cell = radius / 2, cell height 0.1 m, same filters, erosion,
 * watershed regions, contours, polygons of <= 6 vertices), plus the detail mesh Detour needs for
 * heights, and the zone's off-mesh links as Detour off-mesh connections. Queries: area-weighted
 * random points on the mesh, findNearestPoly / findPath / findStraightPath, the distance to the
 * mesh's wall along a path.
 *
 * Units: world metres, y up. The C API never throws, prints or exits. */
#ifndef NM_TOOLS_DETOUR_ORACLE_H
#define NM_TOOLS_DETOUR_ORACLE_H

#include "recast_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_dt_oracle nm_dt_oracle;

typedef struct nm_dt_link {
    float a[3], b[3];      /* world m */
    float radius;          /* m */
    bool bidirectional;
} nm_dt_link;

/* Area ids in the input are ours (0..31, or NM_RC_OBSTACLE); polygons whose area is outside
 * walkable_flags (bit per area, the planner's whitelist) are excluded by the query filter. */
int nm_dt_build(const nm_rc_input *in, const nm_rc_params *p, const nm_dt_link *links, uint32_t nlinks,
                uint32_t walkable_flags, nm_dt_oracle **out, char *msg, size_t msg_cap);
void nm_dt_free(nm_dt_oracle *o);
uint32_t nm_dt_poly_count(const nm_dt_oracle *o);
double nm_dt_cell_size(const nm_dt_oracle *o);

/* Recast's steps in the oracle's build, one bit each: the span was walkable after that step
 * (CLEAR: its free height in the heightfield is at least the agent's, the low-height filter's
 * test, whatever the other filters did). RASTER: rasterised walkable (the slope test);
 * LOW_HANGING: rcFilterLowHangingWalkableObstacles; LEDGE: rcFilterLedgeSpans (a drop over the
 * climb to a neighbour, or neighbours within the climb more than the climb apart); LOW_HEIGHT:
 * rcFilterWalkableLowHeightSpans (= in the compact heightfield); ERODE: rcErodeWalkableArea;
 * REGION: in a watershed region (rcBuildRegions drops regions under 1 m²). */
enum {
    NM_DT_STEP_RASTER = 1,
    NM_DT_STEP_LOW_HANGING = 2,
    NM_DT_STEP_LEDGE = 4,
    NM_DT_STEP_LOW_HEIGHT = 8,
    NM_DT_STEP_ERODE = 16,
    NM_DT_STEP_REGION = 32,
    NM_DT_STEP_CLEAR = 64,
};
/* The steps after which a span standing for a surface at height h (its top within a voxel and a
 * walkable slope's rise across its column above h, half a voxel below) in a heightfield column
 * within `reach` m of world (x, z) was walkable: a span of Recast's regions if there is one, else
 * the nearest column's; 0 when no such span was walkable after any step. *top (may be NULL) gets
 * its top, m. */
unsigned nm_dt_span_steps(const nm_dt_oracle *o, double x, double z, double h, double reach, double *top);

/* A random point of the walkable polygons (area-weighted, detail heights) from the caller's
 * xorshift state. Returns false when the mesh is empty. */
bool nm_dt_random_point(const nm_dt_oracle *o, uint64_t *rng, float out[3]);

typedef enum nm_dt_status {
    NM_DT_COMPLETE = 0,    /* the path reaches the goal's polygon */
    NM_DT_PARTIAL = 1,     /* Detour's best effort ends elsewhere */
    NM_DT_NO_START = 2,    /* no polygon near the start */
    NM_DT_NO_GOAL = 3,
    NM_DT_FAILED = 4,
} nm_dt_status;

typedef struct nm_dt_path {
    nm_dt_status status;
    float start[3], goal[3]; /* the points on the mesh Detour used */
    double length;           /* horizontal length of the straight path, m */
    float *pts;              /* straight path corners, x y z */
    uint32_t npts;
    bool uses_link;          /* crosses an off-mesh connection */
} nm_dt_path;

/* Plans start -> goal (search box: 2 m across, 4 m up and down). */
int nm_dt_find_path(nm_dt_oracle *o, const float start[3], const float goal[3], nm_dt_path *out);
void nm_dt_path_free(nm_dt_path *p);
/* Narrowest place along the straight path (samples every 0.25 m): the width of Detour's mesh
 * across the path (rays to the wall on both sides, perpendicular to the path, up to 8 m each).
 * The mesh is already eroded by the agent radius, so the free width there is that plus 2 radii.
 * *at gets its position. Returns -1 when no sample is on the mesh. */
double nm_dt_min_width(nm_dt_oracle *o, const nm_dt_path *p, float at[3]);

#ifdef __cplusplus
}
#endif
#endif
