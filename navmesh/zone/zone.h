/* zone.h — the cleaned per-zone triangle mesh (ZoneClean, design article 网格清洗) and endpoint
 * snapping on it (吸附, 起点所在的面).
 *
 * A ZoneClean is built from a loaded pack (whole or zone-scoped) for one geometry zone: walkable
 * flag per triangle from BSRF, vertices borrowed from the pack (new-generation packs) or welded
 * (old packs), triangles made counter-clockwise, adjacency found through start-vertex slot buckets
 * and cut by the three rules, components by union-find, island flags, one byte of boundary bits per
 * triangle, and a 24 px triangle bucket grid for snapping. The adjacency itself is freed after the
 * build (article 包的内存: 12 bytes a triangle become 1).
 *
 * Units: u, v in base-map pixels (px, v grows downward on the map), heights in metres.
 * Triangle numbers are zone-local (local = global - first triangle of the zone) unless a name says
 * "global". The pack must outlive the ZoneClean: vertices (new packs) and the pack's own neighbour
 * slots (natural-neighbour links) are borrowed from it. */
#ifndef NM_ZONE_H
#define NM_ZONE_H

#include "../base/base.h"
#include "../pack/pack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-triangle flag byte (nm_zone_clean.tflags). */
#define NM_ZT_BOUNDARY_MASK 0x07u /* bit k: edge k (T[k] -> T[(k+1)%3]) has no neighbour */
#define NM_ZT_WALKABLE 0x08u      /* BSRF flags & NM_kWalkableFlags != 0 (or no BSRF) */
#define NM_ZT_ISLAND 0x10u        /* the cleaned component is an island (article 分量与孤岛) */
#define NM_ZT_LINK_SHIFT 5        /* bits 5..7: link table bit of the PACK's neighbour slot k */

/* The cleaned mesh. Read-only for callers; build with nm_zone_clean_build, free with
 * nm_zone_clean_free.
 *
 * Orientation: every non-degenerate triangle is counter-clockwise in the (u, v) coordinates read
 * as a mathematical frame, i.e. cross(T1 - T0, T2 - T0) = (u1-u0)(v2-v0) - (v1-v0)(u2-u0) > 0.
 * Because v grows downward on the map, such a triangle looks clockwise when drawn on the map image;
 * the interior is on the left of every directed edge T[k] -> T[k+1] in the y-up reading (the same
 * convention as the article's contour tracing: 「y 轴向上时外轮廓是逆时针」). */
typedef struct nm_zone_clean {
    const nm_pack *pack;
    uint32_t zone_index;       /* into pack->zones */
    uint16_t zone_id;
    uint32_t tri_count;        /* triangles of the zone, walkable or not, in pack order */
    uint32_t tri_lo;           /* index of local triangle 0 in pack->tris */
    uint32_t tri_global_base;  /* whole-pack number of local triangle 0 */
    uint32_t walkable_count;

    /* Vertices: borrowed (new-generation pack: points at pack->verts) or owned (old pack, welded).
     * tri_v holds each triangle's three indices into verts, in CCW order. */
    const nm_vertex *verts;
    uint32_t vert_count;
    bool welded;               /* old pack: verts is an owned welded copy */
    uint32_t *tri_v;           /* 3 per triangle */

    uint32_t *comp;            /* per triangle: component id = smallest local index in it */
    uint8_t *tflags;           /* per triangle: NM_ZT_* bits */

    /* Link table (hasLink) for links that passed isTraversableLink and are not natural neighbours:
     * sorted unique (src << 32 | tgt), zone-local numbers. */
    uint64_t *bridge_links;
    uint32_t bridge_count;

    /* 24 px triangle buckets over the walkable triangles' bounding boxes (counting sort): cell
     * (cx, cy) = cy * grid_nx + cx lists bucket_tris[bucket_start[c] .. bucket_start[c+1]) in
     * increasing triangle order. */
    double grid_x0, grid_y0;   /* px, origin of cell (0, 0) */
    uint32_t grid_nx, grid_ny;
    uint32_t *bucket_start;    /* grid_nx * grid_ny + 1 */
    uint32_t *bucket_tris;

    uint8_t *owned_verts_mem;  /* internal */
} nm_zone_clean;

/* Builds the ZoneClean of a geometry zone, by name (the last of equal names wins) or by index into
 * pack->zones. workers: threads for the parallel steps (<= 0: the machine's cores, at most 4); the
 * result does not depend on it. Errors: unknown zone or tier zone (NM_ERR_ARG), a zone whose
 * triangles are all unwalkable or that has none (NM_ERR_STATE), the old-pack weld producing a
 * degenerate triangle, a BSRF whose count fits neither the pack nor the zone, non-finite vertex
 * coordinates, out-of-range vertex indices (NM_ERR_CORRUPT), allocation (NM_ERR_NOMEM).
 * *out is set only on success. */
int nm_zone_clean_build(const nm_pack *p, const char *zone, int workers, nm_zone_clean **out,
                        nm_error *err);
int nm_zone_clean_build_at(const nm_pack *p, uint32_t zone_index, int workers,
                           nm_zone_clean **out, nm_error *err);
void nm_zone_clean_free(nm_zone_clean *zc); /* NULL-safe */

/* ---- per-triangle queries (t zone-local, t < tri_count; out of range reads as "nothing") ----- */
static inline uint32_t nm_zone_tri_count(const nm_zone_clean *zc) { return zc->tri_count; }
static inline bool nm_zone_walkable(const nm_zone_clean *zc, uint32_t t)
{
    return t < zc->tri_count && (zc->tflags[t] & NM_ZT_WALKABLE) != 0;
}
static inline bool nm_zone_island(const nm_zone_clean *zc, uint32_t t)
{
    return t < zc->tri_count && (zc->tflags[t] & NM_ZT_ISLAND) != 0;
}
/* Bit k set: edge k = T[k] -> T[(k+1)%3] has no neighbour after cleaning (a wall when walkable). */
static inline uint8_t nm_zone_boundary(const nm_zone_clean *zc, uint32_t t)
{
    return t < zc->tri_count ? (uint8_t)(zc->tflags[t] & NM_ZT_BOUNDARY_MASK) : 0;
}
/* Component id: the smallest local triangle number of the cleaned component; UINT32_MAX if t is
 * out of range. An unwalkable triangle is a component of its own. */
static inline uint32_t nm_zone_component(const nm_zone_clean *zc, uint32_t t)
{
    return t < zc->tri_count ? zc->comp[t] : UINT32_MAX;
}
/* Vertex k (0..2, CCW order) of triangle t. t and k must be in range. */
static inline const nm_vertex *nm_zone_vertex(const nm_zone_clean *zc, uint32_t t, int k)
{
    return &zc->verts[zc->tri_v[3 * (size_t)t + (size_t)k]];
}
/* Triangle height h_T = (h0 + h1 + h2) / 3 in double (computed on demand, not stored). */
double nm_zone_tri_height(const nm_zone_clean *zc, uint32_t t);
/* Closest point (cx, cy) of triangle t to (x, y) in the plane; returns the planar distance, px. */
double nm_zone_closest_on_tri(const nm_zone_clean *zc, uint32_t t, double x, double y,
                              double *cx, double *cy);
/* hasLink(a, b): the planner's link table has a link a -> b that passed isTraversableLink
 * (zone-local numbers). Directional. */
bool nm_zone_has_link(const nm_zone_clean *zc, uint32_t a, uint32_t b);

/* Calls fn(ctx, t) once for every walkable triangle whose bounding box meets the rectangle
 * [x0, x1] x [y0, y1] (px), in bucket order; stops and returns fn's value when it is non-zero. */
typedef int (*nm_zone_tri_fn)(void *ctx, uint32_t t);
int nm_zone_tris_in_rect(const nm_zone_clean *zc, double x0, double y0, double x1, double y1,
                         nm_zone_tri_fn fn, void *ctx);

/* ---- snapping (article 吸附) -------------------------------------------------------------------
 * Two rounds: radius (default NM_kSnapRadius = 8 px), then, only if the first found nothing,
 * fallback_radius (default NM_kSnapFallbackRadius = 16 px). Unwalkable triangles are skipped; a
 * triangle whose closest point is farther than the round's radius is skipped; the rest are ranked
 * by the first key that applies (lexicographic, smallest wins):
 *   start deck y_d given:  ([|h_T - y_d| > NM_kDeckBand], d, |h_T - y_d|, t)
 *   floor y_f given:       ([|h_T - y_f| > NM_kBaseNavFloorBand], d, |h_T - y_f|, isl, t)
 *   neither:               (d, -h_T, isl, t)
 * d = planar distance, h_T = mean vertex height, isl = island flag, t = local triangle number.
 * The band term is a preference: out-of-band triangles still win when no in-band one is in range.
 * The deck band is kDeckBand = 2 m, the declared-deck tolerance used everywhere else
 * (formulas.md #71 leaves it open; kBaseNavFloorBand = 12 m was the other candidate). The floor key
 * has no triangle number in the article; t is appended so the result never depends on bucket
 * order. A deck overrides a floor. A value counts as given when > NM_kFloorYValidMin. */
typedef bool (*nm_zone_accept_fn)(void *ctx, uint32_t tri, double px, double py);
typedef struct nm_zone_snap_opts {
    float floor_y;            /* NM_kFloorYNone = absent */
    float deck_y;             /* start deck; NM_kFloorYNone = absent */
    double radius;            /* px; <= 0 = NM_kSnapRadius */
    double fallback_radius;   /* px; <= 0 = NM_kSnapFallbackRadius */
    /* Optional candidate filter (goal-deck start path): called with the local triangle and the
     * closest point (px, py) on it; false drops the candidate. NULL = accept all. */
    nm_zone_accept_fn accept;
    void *accept_ctx;
} nm_zone_snap_opts;

/* Options with nothing given: no floor, no deck, default radii, no filter. */
nm_zone_snap_opts nm_zone_snap_defaults(void);

typedef struct nm_zone_snap_result {
    uint32_t tri;             /* zone-local */
    uint32_t tri_global;      /* whole-pack number */
    double x, y;              /* snapped point (closest point on the triangle), px */
    double dist;              /* planar distance from the query point, px */
    double h;                 /* h_T of the triangle, m */
    bool island;
    int round;                /* 1 = found within radius, 2 = within fallback_radius */
} nm_zone_snap_result;

/* NM_OK and *out filled, or NM_ZONE_NOT_FOUND (= NM_ERR_STATE) when no walkable triangle is within
 * the fallback radius, or NM_ERR_ARG for a non-finite point. opts NULL = defaults. Read-only on zc:
 * several threads may snap on one ZoneClean at once. */
#define NM_ZONE_NOT_FOUND NM_ERR_STATE
int nm_zone_snap(const nm_zone_clean *zc, double x, double y, const nm_zone_snap_opts *opts,
                 nm_zone_snap_result *out, nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
