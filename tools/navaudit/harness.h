/* harness.h — ours against Detour on random legs of one zone (issue 12 part 2), with the audit of
 * every route ours returns. Legs join area-weighted random points of Detour's walkable polygons
 * (the same surfaces ours bakes; fixed xorshift seed). Each leg is planned by the route engine on
 * the pack (start / goal floor heights = the sampled points' heights) and by Detour, then
 * classified (nm_cmp_class). Nothing here prints: the caller prints the legs.
 *
 * Units: world metres unless a name says px. */
#ifndef NM_TOOLS_HARNESS_H
#define NM_TOOLS_HARNESS_H

#include "audit.h"
#include "detour_oracle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nm_cmp_class {
    NM_CMP_AGREE = 0,        /* both succeed (ours within the length bound) or neither does */
    NM_CMP_NARROW,           /* explained: Detour completes, ours fails or is longer, and Detour's
                                path passes a place narrower than our grid resolves (width_m) */
    NM_CMP_OURS_DROP,        /* explained: ours succeeds with a drop, a link or a step down over
                                Recast's climb (nm_cmp_steps_down), Detour does not */
    NM_CMP_CHANNEL_LONGER,   /* explained: ours over the length bound, but the article's baseline on
                                our grid is within it (nm_cmp_channel_longer): the two-stage
                                search kept to its topology channel (base_len) */
    NM_CMP_GOAL_SNAPPED,     /* explained: Detour partial, and ours reaches the goal only by the
                                article's end rule, its walk stopping short as Detour's does
                                (nm_cmp_goal_snapped) */
    NM_CMP_START_SNAPPED,    /* explained: Detour partial, and ours starts only by the article's final
                                verdict, its start anchor up to kSnapRadius away behind what its
                                walk could cross (nm_cmp_start_snapped) */
    NM_CMP_RECAST_LEDGE,     /* explained: Detour partial, ours walks where Recast's ledge filter
                                or erosion took a walkable surface off (nm_cmp_recast_ledge) */
    NM_CMP_RECAST_RADIUS,    /* explained: the same, and ours passes nearer a wall than the agent's
                                radius where the agent fits across (nm_cmp_recast_radius) */
    NM_CMP_OURS_FAILS,       /* unexplained: Detour completes, ours fails */
    NM_CMP_OURS_LONGER,      /* unexplained: ours over kLengthRatio x Detour's length, not channel_longer */
    NM_CMP_OURS_ONLY,        /* unexplained: ours succeeds without any of those, Detour does not */
    NM_CMP_OTHER_LAYER,      /* unexplained: ours ends (or starts) on another surface than asked */
    NM_CMP_NO_POLY,          /* not compared: Detour places no polygon at an end */
    NM_CMP_CLASS_COUNT
} nm_cmp_class;
const char *nm_cmp_class_name(nm_cmp_class c);
bool nm_cmp_class_explained(nm_cmp_class c);

#define NM_CMP_kLengthRatio 1.25
#define NM_CMP_kLengthSlack 0.5   /* m added to the bound: endpoint snapping on both sides */
/* The most a channel detour may lengthen the baseline and still count as one: the topology
 * layer's price bounds (kClrWide / kClrNarrow = 4, 两段搜索 拓扑层: a route all in narrow places
 * costs at most 4 times its length, so the layer takes wider ways up to 4 times as long). A broken
 * channel (a deck cut by a wrongly kept wall: 3 m -> 168 m) goes far beyond it. */
#define NM_CMP_kChannelDetour 4.0

/* Is ours' extra length the two-stage search's (两段搜索) and not the grid's? True when ours is over
 * the bound (kLengthRatio x Detour + kLengthSlack), the baseline's length on our grid (the
 * article's first solve: shortest by length under the same reachability rules, unit price, the
 * whole window) is within it, and ours is at most kChannelDetour x the baseline. Lengths in m. */
bool nm_cmp_channel_longer(double ours_len, double base_len, double dt_len);

/* Where a foot of ours' walk stands in Detour's Recast build (nm_cmp_foot_why): on a span of its
 * regions, or why not: the first of Recast's steps that took the walkable surface there off. */
typedef enum nm_cmp_foot {
    NM_CMP_FOOT_ON = 0,       /* on a span of Recast's regions (what its contours and polygons cover) */
    NM_CMP_FOOT_NEVER,        /* no span walkable at that height after any step: not rasterised walkable */
    NM_CMP_FOOT_LOW_HANGING,  /* walkable only by the low-hanging-obstacle filter */
    NM_CMP_FOOT_LOW_CEILING,  /* less free height than the agent's (the low-height filter's test) */
    NM_CMP_FOOT_LEDGE,        /* removed by the ledge filter */
    NM_CMP_FOOT_ERODE,        /* removed by the erosion */
    NM_CMP_FOOT_REGION,       /* in a region Recast dropped (under its minimum area) */
    NM_CMP_FOOT_COLUMN,       /* under a ceiling lower than the agent only in Recast's column: nothing
                                 of the level over the foot itself (nm_cmp_foot_judge) */
    NM_CMP_FOOT_BODY,         /* removed by the ledge filter or the erosion, and the agent's body does
                                 not fit there: a triangle of the level within its radius */
    NM_CMP_FOOT_COUNT
} nm_cmp_foot;
const char *nm_cmp_foot_name(nm_cmp_foot f);
/* The verdict for a foot from its span's steps (nm_dt_span_steps) and, for a span the ledge filter
 * or the erosion removed, whether the agent's body fits there (nm_audit_body_fits). */
nm_cmp_foot nm_cmp_foot_why(unsigned steps, bool body_fits);

/* The verdict for ours' foot at world (x, z), height h (nm_cmp_foot_why on its span's steps, within
 * the audit's reach). A span removed by the ledge filter, the erosion or the region's minimum area
 * gets the body test (nm_audit_body_fits: the agent's radius, from its climb to body_hi). A "low
 * ceiling" with nothing of the level over the foot itself (within half a sample, from one Recast
 * cell height to body_hi above it) is Recast's column (0.205 m wide) holding a ceiling beside the
 * foot (navcat-bridges: an island's bevelled lip 0.11-0.21 m away over the water): judged as
 * NM_CMP_FOOT_COLUMN, with the body test. */
nm_cmp_foot nm_cmp_foot_judge(const nm_audit_level *lv, const nm_dt_oracle *dt, double x, double z, double h,
                              const nm_audit_params *ap, const nm_bake_agent *agent);

/* Ours' walk (the audit's feet) against Detour's Recast build. */
typedef struct nm_cmp_trace {
    uint32_t feet;                       /* feet walked */
    uint32_t by[NM_CMP_FOOT_COUNT];      /* feet by verdict (by[NM_CMP_FOOT_ON]: on Recast's regions) */
    double first[NM_CMP_FOOT_COUNT][3];  /* the first foot of each verdict: world x, z and height, m */
    /* the narrowest free width (nm_audit_free_width) at a foot whose body does not fit, m (INFINITY:
     * no such foot), and that foot: world x, z and height, m */
    double narrowest, narrowest_at[3];
} nm_cmp_trace;
/* Walks route r as the audit does (params ap) and judges every foot in Detour's build (its span
 * within the audit's reach); the body test at a foot: nothing of the level within the agent's
 * radius from its climb (a higher edge is a wall, a lower one a step) to body_hi above the foot.
 * Returns NM_OK or NM_ERR_NOMEM. */
int nm_cmp_trace_walk(const nm_audit_level *lv, const nm_dt_oracle *dt, const nm_route_result *r,
                      const nm_audit_params *ap, const nm_bake_agent *agent, nm_cmp_trace *out);

typedef struct nm_cmp_leg {
    double s[3], g[3];        /* sampled ends, world m */
    double su, sv, gu, gv;    /* the same, px */
    bool ours_ok;
    char ours_error[512];
    double ours_len;          /* m */
    double base_len;          /* m: the baseline's length on our grid, anchor to anchor (base_cost) */
    uint32_t ours_drops;
    bool ours_link;           /* crosses an off-mesh link (audit's link segments) */
    bool ours_steps_down;     /* steps down more than Recast climbs (nm_cmp_steps_down) */
    bool ours_climbs;         /* steps up more than the agent climbs (within the audit's step) */
    bool climb_one_step;      /* that climb is on one grid step RiseOk passes (nm_cmp_one_step_climb) */
    double climb_h0, climb_h1; /* that step's ends: the level's surfaces under its two points, m */
    double ours_end_h;        /* height of ours' last point */
    nm_dt_status dt_status;
    double dt_len;            /* m */
    bool dt_link;
    nm_cmp_class cls;
    double width_m;           /* NARROW / OURS_FAILS: free width at Detour's narrowest place */
    double wx, wz;            /* where */
    nm_audit_report audit;    /* ours ok: the audit (kind OK = passed) */
    double snap_goal_px;      /* ours ok: the goal anchor's distance from the goal's cell, px */
    nm_audit_report join;     /* snap_goal_px >= kCS: the audit with the last segment (the goal's
                                 join from its anchor) walked, not excepted */
    double snap_start_px;     /* ours ok: the start anchor's distance from the start's cell, px */
    nm_audit_report join_start; /* snap_start_px >= kCS: the audit with the first segment (the start's
                                 join to its anchor) walked, not excepted */
    nm_cmp_trace trace;       /* ours ok, Detour partial: ours' walk in Detour's Recast build */
} nm_cmp_leg;

typedef struct nm_cmp_opts {
    const nm_obj *obj;
    const nm_bake_config *cfg; /* NULL = defaults */
    double scale;
    const char *pack_path;
    const char *zone;
    uint32_t legs;
    uint64_t seed;
    int workers;
    /* legs given instead of random ones: 6 doubles each, start u, v px, height m, goal u, v, height
     * (NAN height: the highest walkable surface there); NULL = random legs */
    const double *given;
} nm_cmp_opts;

typedef struct nm_cmp_summary {
    uint32_t legs, ours_ok, dt_complete, audited, audit_failures;
    uint32_t by_class[NM_CMP_CLASS_COUNT];
    uint32_t unexplained;
    uint32_t dt_polys;
    double dt_build_s;
} nm_cmp_summary;

/* Does ours reach the goal only by the article's end rule, stopping where Detour's partial path
 * does? 收尾检查 1: a goal whose cell is not Walk is an author's point off the surface (作者点位
 * 的误差), and the route's last segment joins it straight from the goal anchor, the reach set's
 * nearest cell, unwalked (a Walk goal cell outside the reach set is "cut off" and fails instead).
 * True when ours succeeded, its walked route passes the audit, the anchor is another cell than
 * the goal's (snap_goal >= kCS), that join fails the audit walked like any segment (join: it is
 * no walk onto the goal's surface: a rise, a fall, another layer), and Detour's path is
 * partial: neither reaches the goal. */
bool nm_cmp_goal_snapped(const nm_cmp_leg *l);

/* Does ours leave the start only by the article's final verdict, where Detour stays in the start's
 * polygons? 掩膜与吸附锚点: with a declared start deck the start anchor is the window's nearest cell
 * with a usable span of the route's class within kDeckBand of the deck, with no radius; 最终判定
 * only asks that it lie within kSnapRadius (8 px) of the start, and has no "start cut off" twin of
 * the goal's (收尾检查 1), so the route's first segment joins the start to an anchor behind a wall
 * (recast-dungeon seed 2 leg 35: out of a closed room, through a 4.9 m door slab, 7 px). True when
 * ours succeeded, its walked route passes the audit, the anchor is another cell than the start's
 * (snap_start >= kCS), that join fails the audit walked like any segment (join_start: it is no
 * walk), and Detour's path is partial. The harness asks it after ours_drop_or_link: a leg that
 * also drops or takes a link Detour cannot express is that class (recast-navtest seed 2 leg 2:
 * Detour leaves the start, 4.98 m, and stops at ours' drop; its start join is 1.12 px). */
bool nm_cmp_start_snapped(const nm_cmp_leg *l);

/* Is the audit's highest step up of route r, taken at world (ax, az), on one grid step that the
 * article's RiseOk passes on the level's own heights? A segment of r with an end within reach m
 * of (ax, az) joins two cells next to each other (at most a cell's diagonal, √2·kCS px) and the
 * level's surfaces right under its two points (those nearest the reported heights: *h0, *h1) rise
 * by at most kStepUp (RiseOk step 6). RiseOk judges a step by the heights at the two cell centres;
 * where a face's height changes along its edge (navcat-bridges' steep grass block: 0.39 m on one
 * row's centre line, 0.58 m on the next) the face a diagonal step crosses between the centres is
 * higher than their difference, and the audit's walk (its foot on the highest surface within
 * reach of each sample) measures that face. */
bool nm_cmp_one_step_climb(const nm_audit_level *lv, const nm_route_result *r, double ax, double az, double reach,
                           double *h0, double *h1);

/* Does ours' route (audited) step down further than the agent's climb without a declared drop,
 * and nowhere up further than it (but on one grid step RiseOk passes: climb_one_step)? The article
 * walks down up to kClimb (垂直可达判据 向下一步: drops start beyond it); Detour climbs neither way
 * over its climb (in 0.1 m voxels, so a step just over it may already be refused): a drop Detour
 * cannot express. */
bool nm_cmp_steps_down(const nm_cmp_leg *l, const nm_bake_agent *agent);

/* Does ours walk where Detour's Recast build took a walkable surface off only by its ledge filter
 * or its erosion, and otherwise as Detour may? True when Detour is partial; ours succeeded with no
 * drop or link, passes the audit and steps neither up nor down more than the agent's climb (but
 * up on one grid step RiseOk passes: climb_one_step); some
 * feet of its walk are on no span of Recast's regions, and every such foot stands on a span
 * rasterised walkable (slope) with the agent's free height above, that the ledge filter, the
 * erosion or the minimum region area removed (or that the low-height filter removed for a ceiling
 * beside the foot in its column: NM_CMP_FOOT_COLUMN), where the agent's body fits (no triangle within its radius at body height: what
 * Recast kept the agent off is a ledge, which the article walks down up to kClimb, not a wall).
 * Recast's ledge filter takes off every span next to a drop over its climb, and the erosion the
 * radius from there (and from the spans the filter took), so a 1 m ramp standing in the water
 * (navcat-bridges' platform-ramp) has no span left; the article keeps the agent's clearance from
 * walls (预烘场: boundary edges), not from ledges (垂直可达判据 向下一步). */
bool nm_cmp_recast_ledge(const nm_cmp_leg *l, const nm_bake_agent *agent);

/* Is ours off Recast's regions only where its ledge filter or erosion took the surface off, and
 * nearer a wall than the agent's radius only where the agent fits across? As nm_cmp_recast_ledge,
 * but some feet stand where the agent's body does not fit (a wall within its radius: Recast's
 * erosion keeps the agent's centre a radius off every wall, the article keeps no such margin:
 * Dead cells stay Walk, clearance is a price, 预烘场), and at each of them the free width across
 * (nm_audit_free_width: walls and ledges on the level's own triangles) is at least 2 x radius, so
 * the agent fits through there beside ours' line. A place narrower than the agent stays
 * unexplained. navcat-bridges: the 1.04 m corridor between block-grass-curve.001 and the middle
 * island's 0.7 m edge, the island's west face in the water. */
bool nm_cmp_recast_radius(const nm_cmp_leg *l, const nm_bake_agent *agent);

/* Runs the comparison; *legs (nm_free) gets one record per leg. */
int nm_cmp_run(const nm_cmp_opts *o, nm_cmp_leg **legs, nm_cmp_summary *sum, nm_error *err);
/* One line describing a leg (for reports). */
void nm_cmp_leg_text(const nm_cmp_leg *l, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
