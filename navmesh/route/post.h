/* post.h — post-processing of a leg (design article 后处理): StringPull, endpoint splice, search
 * heights matched back, LiftCorners, per-point heights along the route and clearance, drop
 * margins (落点留余量) and PullWaypoints, plus nm_post_run chaining them with per-stage timings.
 *
 * Frames: points are px, xy interleaved (x0, y0, x1, y1, ...), in the window's frame (the same
 * as nm_window.win.x0/y0). Heights in m; a height column is an array of one float per point.
 * Memory: each step works in place or in caller arrays; nm_post_run allocates its outputs once. */
#ifndef NM_POST_H
#define NM_POST_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "../sight/sight.h"
#include "../window/window.h"
#include "../zone/zone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 拉直 (StringPull) ----------------------------------------------------------------------- */
/* Can point i see point j (i < j)? */
typedef bool (*nm_post_vis_fn)(void *ctx, uint32_t i, uint32_t j);

/* StringPull over n points: from anchor i, scan j from the last point back to i + 2 and keep the
 * first visible one; none visible = take i + 1 unchecked; jump to it; repeat. keep (capacity n)
 * receives the kept indices, first 0 and last n - 1 (n >= 1). Idempotent. Returns the count. */
uint32_t nm_post_string_pull(uint32_t n, nm_post_vis_fn vis, void *ctx, uint32_t *keep);

/* Visibility between points of a polyline through a view: ok(p_i, p_j, h_i, h_j); h NULL = no
 * heights (the view must then have layers off). */
typedef struct nm_post_points_vis {
    nm_sight_view *view;
    const double *xy;
    const float *h;
} nm_post_points_vis;
bool nm_post_vis_points(void *ctx, uint32_t i, uint32_t j);

/* The same, never across an off-mesh link (离网连接段不展开: no ground between its ends), so
 * StringPull keeps both ends of every link and takes the link step itself unchecked.
 * next_link (NULL = no links): per point i, the first point after i reached over a link, else n
 * (nm_post_next_links from per-point flags: 1 = reached over a link from the previous point). */
typedef struct nm_post_link_vis {
    nm_post_points_vis pv;
    const uint32_t *next_link;
} nm_post_link_vis;
bool nm_post_vis_points_links(void *ctx, uint32_t i, uint32_t j);
void nm_post_next_links(const uint8_t *link, uint32_t n, uint32_t *next_link);

/* ---- 端点拼接 ---------------------------------------------------------------------------------- */
/* out = raw start, the n points of xy, raw goal; middle points within 0.4 px of either raw end
 * removed; neighbours closer than 1e-9 px deduplicated; with parent_chain, b is removed when
 * |(b - a) x (c - a)| <= 1e-9 * max(1, |c - a|) (a = last kept point). out: capacity 2*(n + 2)
 * doubles. Returns the point count (>= 1). */
uint32_t nm_post_splice(double sx, double sy, const double *xy, uint32_t n, double gx, double gy,
                        bool parent_chain, double *out);

/* ---- 对回搜索面高 ------------------------------------------------------------------------------ */
/* Search heights of the spliced points (n): ends take the pull input's first / last height; the
 * middle points take the height of the pull input point (m points pin, heights hin) with the same
 * coordinates, the match position only moving forward. false (hout undefined) when a point has
 * no match: the column is then empty. */
bool nm_post_match_heights(const double *xy, uint32_t n, const double *pin, const float *hin,
                           uint32_t m, float *hout);

/* ---- 拐点抬升 (LiftCorners) -------------------------------------------------------------------- */
/* Moves each intermediate corner of xy (n >= 3, in place, in order) to the first of the 12 cells
 * within 2 cells that passes the five checks, candidates ordered by clearance (desc) then cell
 * number; stops at the first layer break. hard = vis_hard (blockers and steps are used; layers are
 * checked here with o). h_start = the start span height. hsearch (NULL = none): moved points get
 * the new cell's span nearest to their old height within kQH; *hsearch_ok = false when there is
 * none. Returns the number of moved corners. */
uint32_t nm_post_lift_corners(const nm_window *w, nm_sight_view *hard, nm_sight_oracle *o,
                              double *xy, uint32_t n, float h_start, float *hsearch,
                              bool *hsearch_ok);

/* ---- 逐点高度 / 净空 --------------------------------------------------------------------------- */
/* Heights along the route: from {h_start}, each segment walks from the previous segment's whole
 * set; each point takes the set member nearest to the previous point's height. false = a segment
 * breaks (column empty). scratch: o->cap floats. */
bool nm_post_heights_along(nm_sight_oracle *o, const double *xy, uint32_t n, float h_start,
                           float *h, float *scratch);
/* The same walk in the drop-permitting mode, so it never breaks at a ledge, each point taking the
 * set member nearest to the search height of the nearest pull input point (pin, hin: m points,
 * searched forward only; the last point takes hin[m-1], the goal span): the column used when the
 * search heights do not match (a lifted corner), so every ok route has a height for every point on
 * the surfaces the search walked — the nearest-to-previous rule of the heights along can stay on
 * a floor the route passes under. false only for a non-finite point. */
bool nm_post_heights_walk(nm_sight_oracle *o, const double *xy, uint32_t n, float h_start,
                          const double *pin, const float *hin, uint32_t m, float *h, float *scratch);
/* Per-point clearance: floor cell clamped into the window, min(dist, kEdtCap); 0 in no-go zones
 * (dist is 0 there). */
void nm_post_clearance(const nm_window *w, const double *xy, uint32_t n, float *clr);

/* ---- 落点留余量 -------------------------------------------------------------------------------- */
typedef struct nm_post_drop {
    uint32_t index; /* landing point */
    double height;  /* lower surface, m */
} nm_post_drop;

/* Drop margins when scale_x != 0 (px per m of the zone transform; 0 = skip): drop candidates
 * (previous point more than kClimb higher), the ledge found by following the upper surface every
 * 1/16 px, the landing moved on the lower surface (4-neighbour growth by distance, within 8r,
 * straight-walkable to the next point) to the first cell at least 4r from the upper surface
 * (r = kFallRadius * |scale_x| px), else the farthest. Heights are rewritten in hsearch and/or
 * halong (either may be NULL; decisions use hsearch, then halong, then a drop-mode walk), clr
 * (may be NULL) takes the new cell's clearance. drops: capacity n. */
int nm_post_drop_margins(const nm_window *w, nm_sight_oracle *o, double *xy, uint32_t n,
                         double scale_x, float h_start, float *hsearch, float *halong, float *clr,
                         nm_post_drop *drops, uint32_t *ndrops, nm_error *err);

/* ---- 路点 (PullWaypoints) ---------------------------------------------------------------------- */
/* isRouteSegmentDrivable-style test: can a character drive a -> b with flanks at half_width
 * (0 = centre line only), anchored at h_start (NAN = none)? */
typedef bool (*nm_post_drivable_fn)(void *ctx, double ax, double ay, double bx, double by,
                                    double half_width, double h_start);
/* The zone mesh version (ctx = const nm_zone_clean *): samples every ~0.5 px must lie on
 * walkable triangles, height steps <= kClimb between samples (each sample takes the triangle
 * height nearest to the previous one; the first nearest h_start, or the lowest); flanks offset
 * by +-half_width and shrunk by min(half_width, L/2) at both ends. */
bool nm_post_zone_drivable(void *ctx, double ax, double ay, double bx, double by,
                           double half_width, double h_start);

/* Greedy waypoints: from the current waypoint extend while the chord is drivable (half-width =
 * the smallest clearance of the skipped vertices) and passes `blk` (the pull's blockers and route
 * mask: the view's steps/layers are not used), at most kMaxPullSpan vertices, never past the next
 * drop landing; no progress = take the next vertex. out (capacity n) excludes the start and ends
 * with n - 1. halong NULL = no layer oracle: no waypoints (returns 0). Returns the count. */
uint32_t nm_post_pull_waypoints(const double *xy, uint32_t n, const float *clr,
                                const float *halong, const nm_post_drop *drops, uint32_t ndrops,
                                nm_post_drivable_fn drivable, void *dctx, nm_sight_view *blk,
                                uint32_t *out);

/* ---- 后处理 as one call ------------------------------------------------------------------------ */
/* The three pull inputs (拉直的输入). */
enum {
    NM_POST_PARENT_CHAIN = 0, /* geometry search succeeded: vis_geo, heights */
    NM_POST_SPAN_PATH = 1,    /* span-level cell path: blockers + layers, no steps */
    NM_POST_CELL_PATH = 2     /* cell-level fallback: blockers only, no heights */
};

typedef struct nm_post_input {
    const nm_window *w;
    int kind;                 /* NM_POST_* */
    const double *xy;         /* pull input points (cell centres), px */
    const float *h;           /* their span heights (NULL for NM_POST_CELL_PATH) */
    uint32_t n;
    double sx, sy, gx, gy;    /* raw (unsnapped) endpoints, px */
    float h_start;            /* start span height */
    nm_sight_blockers *blk;   /* core contours + walls + facades (shared by vis_geo/vis_hard) */
    const uint8_t *tm;        /* route mask */
    nm_sight_oracle *oracle;
    double scale_x;           /* zone transform x scale, px per m (0 = no drop margins) */
    nm_post_drivable_fn drivable; /* NULL = every chord drivable */
    void *drivable_ctx;
    const uint8_t *link;      /* NULL or per point: 1 = reached over an off-mesh link from the
                               * previous point (no ground between them: never pulled across) */
} nm_post_input;

typedef struct nm_post_output {
    double *xy;            /* final route, n points */
    uint32_t n;
    float *hsearch;        /* search heights, NULL when the column is empty */
    float *halong;         /* heights along the route, NULL when empty */
    float *hroute;         /* heights for every point: per piece the search heights, else the
                              heights along, else the drop-permitting walk with each drop landing
                              at its lower height; NULL only when the walk cannot run */
    float *clr;            /* per-point clearance */
    nm_post_drop *drops;
    uint32_t ndrops;
    uint32_t *waypoints;
    uint32_t nwaypoints;
    uint8_t *link;         /* NULL without links, else per point: 1 = reached over a link */
    uint32_t lifted;
    /* diagnostics: the intermediate polylines (after the pull, after the splice) */
    double *pulled_xy;
    uint32_t npulled;
    double *spliced_xy;
    uint32_t nspliced;
    double ms_pull, ms_splice, ms_lift, ms_total; /* per-stage timings */
} nm_post_output;

int nm_post_run(const nm_post_input *in, nm_post_output *out, nm_error *err);
void nm_post_output_free(nm_post_output *out);

#ifdef __cplusplus
}
#endif
#endif
