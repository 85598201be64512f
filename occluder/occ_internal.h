/* occ_internal.h — the decoded scene as the occluder folder's .c files share it: templates with
 * their vertex and index pools, placed instances, terrain blocks, and the box trees over them.
 * Not installed; only occluder/ includes it. */
#ifndef NM_OCC_INTERNAL_H
#define NM_OCC_INTERNAL_H

#include "occluder.h"

/* A box-tree node: leaf when count > 0 (items[start .. start + count)), else children left/right.
 * Boxes are floats rounded outward from the double boxes they cover. */
typedef struct occ_node {
    float lo[3], hi[3];
    uint32_t start, count;
    uint32_t left, right;
} occ_node;

typedef struct occ_tree {
    occ_node *nodes;
    uint32_t *items;
    uint32_t node_count;
} occ_tree;

typedef struct occ_template {
    uint32_t nv, nt;
    size_t voff, toff;     /* into scene->verts (3 doubles a vertex) and scene->idx (3 a triangle) */
    double lo[3], hi[3];   /* vertex box, local units (empty when nv == 0: lo > hi) */
    bool has_tree;
    occ_tree tree;
} occ_template;

typedef struct occ_instance {
    uint32_t tmpl;
    uint8_t code;          /* 0..3 smallest-three, 4 raw matrix */
    bool local;            /* invertible: segments go into the template's frame */
    int sgn;               /* -1 for a mirroring placement (det < 0), else +1 */
    double A[9], Ainv[9], t[3];
    float lo[3], hi[3];    /* world box, rounded outward */
} occ_instance;

typedef struct occ_block {
    double x0, z0;
    size_t hoff;           /* into scene->heights, n·n samples */
    size_t holeoff;        /* into scene->holes, or SIZE_MAX: no holes */
    float lo[3], hi[3];
} occ_block;

struct nm_occ_scene {
    uint32_t template_count, instance_count, block_count, block_n;
    double pos_q, cell, lat_a, lat_b;
    uint32_t rot_scale, scale_shift;
    int64_t origin_x, origin_z;
    occ_template *templates;
    occ_instance *instances;
    occ_block *blocks;
    double *verts;
    uint32_t *idx;
    int32_t *heights;
    uint8_t *holes;
    occ_tree inst_tree;
    size_t triangles;
};

/* occ_tree.c */
/* Builds a tree over n boxes (boxes[6i .. 6i+6) = lo xyz, hi xyz); deterministic. */
int occ_tree_build(occ_tree *tree, const double *boxes, uint32_t n, nm_error *err);
void occ_tree_free(occ_tree *tree);
float occ_down(double x);
float occ_up(double x);
/* Visits the items whose leaf boxes the segment p + s·d (s in [0,1]) touches (boxes padded by
 * kBoxPad). fn returns false to stop. */
typedef bool (*occ_item_fn)(void *ctx, uint32_t item);
void occ_tree_segment(const occ_tree *tree, const double p[3], const double d[3], occ_item_fn fn,
                      void *ctx);
/* Visits the items whose leaf boxes overlap [lo, hi] (padded by kBoxPad). */
void occ_tree_box(const occ_tree *tree, const double lo[3], const double hi[3], occ_item_fn fn,
                  void *ctx);
bool occ_seg_box(const double p[3], const double d[3], const float lo[3], const float hi[3]);
bool occ_box_box(const double lo[3], const double hi[3], const float blo[3], const float bhi[3]);

/* occ_query.c: world corners of template triangle `k` placed by instance `in`. */
void occ_place_triangle(const nm_occ_scene *s, const occ_instance *in, uint32_t k, double v[9]);
/* World corners of terrain cell (u, v) triangle h (0 or 1) of block b. */
void occ_terrain_triangle(const nm_occ_scene *s, const occ_block *b, uint32_t u, uint32_t v, int h,
                          double out[9]);
bool occ_block_hole(const nm_occ_scene *s, const occ_block *b, uint32_t u, uint32_t v);
bool occ_placed_up(const double v[9], int sgn);

#endif
