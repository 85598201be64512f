/* audit.h — the route audit against the level's own geometry (issue 12 part 1), independent of
 * the baked grid: the walkable surfaces and the solid triangles come straight from the OBJ (after
 * --scale, grouped and classified as navbake does with zone.json), the px <-> metre transform from
 * the pack's zone record.
 *
 * A route passes when
 *   - every point (endpoints snapped from off the mesh excepted) lies over a walkable triangle of
 *     the level (within kAuditReach horizontally) whose height is within h_tol of the reported one;
 *   - every segment, walked in samples of `sample` metres from the surface of its first point,
 *     keeps finding a walkable surface within one step (up or down) of the last one (gaps up to
 *     gap_max are crossed: the bake closes cracks that narrow), never meets a descent steeper than
 *     a step (an undeclared drop), arrives on the surface its last point reports, and its body
 *     (the fall gate's: body_lo .. body_hi above the foot) crosses no triangle of the level;
 *   - a declared drop (route drops) is walked on its upper level to the ledge, and the fall from
 *     there is allowed by dropBlocked on the level's own triangles; off-mesh link segments are not
 *     walked.
 *
 * Units: route points in base-map px, heights and level geometry in world metres (y up). Nothing
 * here prints or exits. */
#ifndef NM_TOOLS_AUDIT_H
#define NM_TOOLS_AUDIT_H

#include "bake.h"
#include "obj.h"
#include "pack/pack.h"
#include "route/route.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_audit_level nm_audit_level;

/* The audited zone's geometry. cfg NULL = navbake's defaults (one zone named `zone`); scale 0 = 1.
 * The zone record (transform, links) comes from `pack` (the pack navbake wrote for this OBJ). */
int nm_audit_level_build(const nm_obj *obj, const nm_bake_config *cfg, double scale, const nm_pack *pack,
                         const char *zone, nm_audit_level **out, nm_error *err);
void nm_audit_level_free(nm_audit_level *lv);
/* px per metre of the zone (its transform's sx). */
double nm_audit_px_per_m(const nm_audit_level *lv);
/* px -> world (x, z) and back. */
void nm_audit_px_to_world(const nm_audit_level *lv, double u, double v, double *x, double *z);
void nm_audit_world_to_px(const nm_audit_level *lv, double x, double z, double *u, double *v);
/* Walkable surfaces under world (x, z) within `reach` m: their heights (one entry a height, to
 * 1e-6 m), nearest to `near_h` first. Returns how many there are (writes up to cap). */
uint32_t nm_audit_surfaces(const nm_audit_level *lv, double x, double z, double reach, double near_h,
                           double *h, uint32_t cap);
/* The walkable triangles of the level (world m, 9 floats each) and their count. */
const float *nm_audit_walkable(const nm_audit_level *lv, uint32_t *count);

typedef struct nm_audit_params {
    double h_tol;      /* point height vs. surface, m */
    double reach;      /* horizontal slack to the nearest walkable triangle, m */
    double sample;     /* segment sampling step, m */
    double step;       /* largest height change between two samples that is a step, m */
    double gap_max;    /* longest run without surface a segment may cross, m */
    double body_lo, body_hi; /* body above the foot: the fall gate's climb and height, m */
    double link_tol;   /* a segment is an off-mesh link when its ends are this close to one, m */
    /* called with every foot the walk measures its steps on (under the route's line: within half a
     * sample, else the foot within reach): world x, z and the surface's height, m (the first point
     * of each walked segment and every sample); NULL = not called */
    void (*foot)(void *ctx, double x, double z, double h);
    void *foot_ctx;
} nm_audit_params;
/* The defaults for an agent (see audit.c for why each value). */
nm_audit_params nm_audit_params_default(const nm_bake_agent *agent, double px_per_m);

/* Is nothing of the level within `radius` m of world (x, z) between heights y_lo and y_hi (16
 * curtains from (x, z) out to the radius and the 16 chords round it)? */
bool nm_audit_body_fits(const nm_audit_level *lv, double x, double z, double radius, double y_lo, double y_hi);

/* The free width across world (x, z) for a foot standing at height h, m: along each of 4 axes
 * (0°, 45°, 90°, 135°) the foot walks both ways in 0.01 m steps, each on a walkable surface within
 * `climb` of the last (a drop over the climb or no surface is a ledge and ends it) with nothing of
 * the level crossing the curtain between two steps from `climb` to `body_hi` above the foot (a
 * wall ends it); the width of an axis is the two runs together, each at most NM_AUDIT_kFreeRun;
 * the smallest of the 4 is returned. Walls and ledges bound it, as Recast's erosion is bounded. */
#define NM_AUDIT_kFreeRun 2.0
double nm_audit_free_width(const nm_audit_level *lv, double x, double z, double h, double climb, double body_hi);

typedef enum nm_audit_kind {
    NM_AUDIT_OK = 0,
    NM_AUDIT_NO_HEIGHTS,    /* the route reports no heights */
    NM_AUDIT_OFF_SURFACE,   /* a point with no walkable triangle under it */
    NM_AUDIT_WRONG_HEIGHT,  /* a point whose surface is not at its reported height */
    NM_AUDIT_HOLE,          /* a segment over no surface for more than gap_max */
    NM_AUDIT_UNDECLARED_DROP, /* a descent steeper than a step that is not a declared drop */
    NM_AUDIT_CLIMB,         /* a rise steeper than a step */
    NM_AUDIT_SOLID,         /* the body crosses a triangle of the level */
    NM_AUDIT_LAYER,         /* a segment arrives on another surface than its end point reports */
    NM_AUDIT_DROP_BLOCKED,  /* a declared drop that dropBlocked refuses on the level's triangles */
} nm_audit_kind;
const char *nm_audit_kind_name(nm_audit_kind k);

/* A route to audit. drops: indices of drop landings (the segment index - 1 -> index is the drop). */
typedef struct nm_audit_route {
    const double *xy;        /* n (u, v) px */
    const float *heights;    /* n, m; NULL = none (fails) */
    uint32_t n;
    const uint32_t *drops;   /* landing indices */
    uint32_t ndrops;
    bool start_snapped, goal_snapped; /* the first / last point was snapped from off the mesh */
} nm_audit_route;

typedef struct nm_audit_report {
    nm_audit_kind kind;
    uint32_t segment;        /* the point (kind OFF_SURFACE / WRONG_HEIGHT) or the segment's first point */
    double u, v;             /* the first offending position, px */
    double x, z;             /* the same, world m */
    double h_reported;       /* interpolated reported height there, m */
    double h_surface;        /* the surface the walker was on / found (NAN: none) */
    uint32_t samples;        /* samples walked in all */
    uint32_t drops_checked, links_skipped;
    /* steps are measured under the route's line (the foot within half a sample of it; the foot
     * within reach only where nothing is under it): the reach would stand the foot on a face
     * beside the line.
     * the deepest step down the walk took without a declared drop (the article walks down up to
     * kClimb, 垂直可达判据 向下一步; Recast's climb refuses more than its own), m, and where (world m) */
    double max_descent, descent_x, descent_z;
    /* the highest step up it took, m, and where: a step the audit passes (within `step`, which
     * allows for Recast's voxels) may still be more than the agent climbs */
    double max_ascent, ascent_x, ascent_z;
    char msg[400];
} nm_audit_report;

/* Audits one route. Returns NM_OK (the verdict is in rep->kind) or NM_ERR_NOMEM. */
int nm_audit_route_check(const nm_audit_level *lv, const nm_audit_route *r, const nm_audit_params *p,
                         nm_audit_report *rep);
/* The same for a planner result (points, heights, drops, snaps > 1e-3 px excepted). */
int nm_audit_result(const nm_audit_level *lv, const nm_route_result *r, const nm_audit_params *p,
                    nm_audit_report *rep);

#ifdef __cplusplus
}
#endif
#endif
