/* occluder.h — the occluder pack (design article OccluderPack and 台沿下落): the OCLS v1 container
 * of per-zone OCLZ v1 scenes (templates placed by instances, plus terrain height blocks), its
 * writer and reader, the two-level bounding-box tree over the decoded scene, closed segment tests,
 * the vertical-curtain test and dropBlocked, and a process-wide cache of decoded scenes.
 *
 * Units: metres, y up, the zone's world frame (the one the zone's plane-to-world transform maps
 * pixels into). A NULL scene means "this zone has no collision geometry": every drop is allowed.
 * Nothing here prints, exits or aborts; every failure is a status plus a message in nm_error. */
#ifndef NM_OCCLUDER_H
#define NM_OCCLUDER_H

#include "base/base.h"
#include "codec/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants of OccluderPack (reference-maaend.md §3; formulas.md items 14–22, 64–69) ------ */
#define NM_OCC_kContainerVersion 1u
#define NM_OCC_kSceneVersion 1u
#define NM_OCC_kContainerHeader 12    /* "OCLS", u32 version, u32 scene count */
#define NM_OCC_kSceneHeader 80        /* OCLZ header bytes before the 12 streams */
#define NM_OCC_kStreamCount 12
#define NM_OCC_kParallelSin2 1e-24    /* segment ∥ triangle plane when sin² of the angle <= this */
#define NM_OCC_kBoxPad 1e-6           /* segment / box tests pad every box by this (tree units) */
#define NM_OCC_kTriangleBoxPad 1e-3   /* template triangle boxes padded by this (template units) */
#define NM_OCC_kTreeMinTriangles 8    /* a template gets its own tree above this many triangles */
#define NM_OCC_kLeafSize 4            /* items per tree leaf, at most */
#define NM_OCC_kClipMaxVertices 8     /* triangle section clipped to the curtain: vertex bound */
#define NM_OCC_kColumnEdge 1e-6       /* dropBlocked sampling columns widened by this, m */
#define NM_OCC_kCurtainMinLength 1e-9 /* take-off to landing shorter than this: no curtain, m */
#define NM_OCC_kExponentMax 60        /* template step 2^e, e in [-60, 60] */
#define NM_OCC_kScaleShiftMax 52      /* scale fixed-point bits, at most */

/* ---- the decoded scene ----------------------------------------------------------------------- */
typedef struct nm_occ_scene nm_occ_scene;

/* Decodes the scene of `zone` from a whole (decompressed) OCLS container held in memory.
 * Only that zone's record is decoded; the others are skipped by length; of several records with
 * the zone's name the last wins; the container must be used up exactly. `what` names the bytes in
 * messages (a file name; NULL = "occluder"). On NM_OK *out is the scene, or NULL when the
 * container has no record for the zone (no collision geometry there). Free with nm_occ_free. */
int nm_occ_load_bytes(const void *data, size_t size, const char *zone, const char *what,
                      nm_occ_scene **out, nm_error *err);
/* The same from a file (gzip when the name ends in ".gz"). A missing file is NM_ERR_IO here; the
 * cache below turns it into a NULL scene. */
int nm_occ_load(const char *path, const char *zone, nm_occ_scene **out, nm_error *err);
void nm_occ_free(nm_occ_scene *scene);

typedef struct nm_occ_info {
    uint32_t templates, instances, blocks, block_n;
    uint32_t world_instances;  /* instances whose placement is singular / non-finite (world space) */
    uint32_t template_trees;   /* templates with more than kTreeMinTriangles triangles */
    size_t triangles;          /* placed triangles, instances plus terrain (holes excluded) */
    size_t terrain_triangles;  /* of which terrain (2 per cell that is not a hole) */
} nm_occ_info;
void nm_occ_scene_info(const nm_occ_scene *scene, nm_occ_info *info);

/* Every placed triangle in world space (x,y,z of 3 corners, as stored: corner order kept), with
 * its facing: instances in file order then terrain blocks (cells row by row, holes skipped).
 * `up` is the article's 朝上: terrain always; a mesh face when the y of (v1−v0)×(v2−v0) of the
 * placed triangle is negative, sign flipped for mirroring placements (det < 0). */
typedef void (*nm_occ_tri_fn)(void *ctx, const double v[9], bool up);
void nm_occ_foreach_triangle(const nm_occ_scene *scene, nm_occ_tri_fn fn, void *ctx);

/* ---- geometric queries ----------------------------------------------------------------------- */
/* Closed segment–triangle test (Möller–Trumbore on both sides; edges, vertices and the segment's
 * endpoints count; a segment within sin² <= kParallelSin2 of the plane never hits). On a hit
 * returns true and *t in [0, 1] along p0 → p1. */
bool nm_occ_segment_triangle(const double p0[3], const double p1[3], const double a[3],
                             const double b[3], const double c[3], double *t);

typedef struct nm_occ_hit {
    double t;  /* along the segment, [0, 1] */
    bool up;   /* facing of the face hit */
} nm_occ_hit;
/* All faces of the scene crossed by the closed segment p0 → p1 (tree-culled, never missing one).
 * Writes up to `cap` hits in scene order and returns how many there are in all. NULL scene: 0. */
size_t nm_occ_segment_hits(const nm_occ_scene *scene, const double p0[3], const double p1[3],
                           nm_occ_hit *hits, size_t cap);

/* The vertical curtain over the horizontal segment a → b (x, z; a[1], b[1] ignored) between
 * heights (y_lo, y_hi): true when any face's section with the curtain (clipped to the segment's
 * ends) has y_max > y_lo and y_min < y_hi. A segment shorter than kCurtainMinLength has no
 * curtain (false). */
bool nm_occ_curtain_crossed(const nm_occ_scene *scene, const double a[3], const double b[3],
                            double y_lo, double y_hi);

/* 台沿下落 dropBlocked: may a character standing at `take` (x, y = take-off height, z; metres)
 * drop to `land`? Returns true when blocked. climb and height are the character's (the planner
 * passes NM_kFallClimb = 0.39 and NM_kFallHeight = 2.1). NULL scene: never blocked. Order:
 * (1) sampling columns at both ends; (2) no up face within land.y ± climb → allowed; (3) a down
 * face above land.y + climb and below take.y on the landing column → blocked; (4) no up face
 * within take.y ± climb → allowed; (5) b = max(take floor, take.y): a down face on the landing
 * column above land.y + climb and below b (the fall starts from the take-off's floor), or any
 * face crossing the curtain take → land at heights (b + climb, b + height) → blocked; (6) allowed. */
bool nm_occ_drop_blocked_with(const nm_occ_scene *scene, const double take[3],
                              const double land[3], double climb, double height);
bool nm_occ_drop_blocked(const nm_occ_scene *scene, const double take[3], const double land[3]);

/* ---- writer ----------------------------------------------------------------------------------- */
/* A template: a triangle soup in its own local units. */
typedef struct nm_occ_template_in {
    const double *xyz;        /* vertex_count × (x, y, z) */
    uint32_t vertex_count;
    const uint32_t *tri;      /* triangle_count × 3 vertex indices (< vertex_count) */
    uint32_t triangle_count;
} nm_occ_template_in;

/* A placement p_world = A·p_local + t. With use_matrix == 0, A = R(q)·diag(scale) (rotation
 * stored smallest-three, scale through the palette; negative scale = mirrored); with use_matrix
 * != 0 the 9 floats are stored raw (rotation code 4). */
typedef struct nm_occ_instance_in {
    uint32_t template_index;
    double t[3];              /* world translation, m (quantised to the position step) */
    int use_matrix;
    double q[4];              /* x, y, z, w; normalised by the writer */
    double scale[3];
    float matrix[9];          /* rows of A */
} nm_occ_instance_in;

/* A triangle soup already in world metres: written as one template plus one instance with the
 * identity rotation and scale 1, translated to the group's lower corner. */
typedef struct nm_occ_group {
    const float *xyz;         /* vertex_count × (x, y, z), m */
    uint32_t vertex_count;
    const uint32_t *tri;      /* triangle_count × 3 */
    uint32_t triangle_count;
} nm_occ_group;

/* A regular heightfield: nx × nz samples at (x0 + u·spacing, h[v·nx + u], z0 + v·spacing),
 * cut into blocks of block_n × block_n samples (default 17); cells outside the field become
 * holes. holes: (nx−1)·(nz−1) cells, row by row, non-zero = hole; NULL = none. Heights are
 * stored as integers k with y = k·height_step (default 2^-10 m). */
typedef struct nm_occ_terrain_in {
    double x0, z0, spacing;
    uint32_t nx, nz;
    const float *heights;
    const uint8_t *holes;
    uint32_t block_n;
    double height_step;
} nm_occ_terrain_in;

typedef struct nm_occ_zone_in {
    const char *name;
    const nm_occ_template_in *templates;
    uint32_t template_count;
    const nm_occ_instance_in *instances;
    uint32_t instance_count;
    const nm_occ_group *groups;
    uint32_t group_count;
    const nm_occ_terrain_in *terrain;  /* NULL = no terrain blocks */
} nm_occ_zone_in;

/* Appends the whole OCLS container (uncompressed) to `out`. Deterministic bytes. */
int nm_occ_encode(const nm_occ_zone_in *zones, size_t zone_count, nm_buf *out, nm_error *err);
/* nm_occ_encode then nm_file_write (gzip when the name ends in ".gz"). */
int nm_occ_write(const char *path, const nm_occ_zone_in *zones, size_t zone_count, nm_error *err);

/* ---- cache ------------------------------------------------------------------------------------
 * Decoded scenes by (absolute path, zone), failures cached too, safe from any thread. On NM_OK
 * *scene is the zone's scene or NULL (no file, or no record for the zone: every drop allowed);
 * it stays valid until nm_occ_cache_release_all. A cached failure returns its status and message
 * again without rereading. */
int nm_occ_cache_get(const char *path, const char *zone, const nm_occ_scene **scene, nm_error *err);
void nm_occ_cache_release_all(void);

#ifdef __cplusplus
}
#endif
#endif
