/* sliver.h — split the slivers of a walkable mesh (the Recast path's detail mesh) on their plane.
 *
 * Rasterize (预烘场 栅格化) gives a cell that a triangle only touches the height at the clamped
 * barycentric point (formula 31), which on a sliver (a long edge far longer than the triangle's
 * height over it) can be a vertex metres away: on a slope the cell gets a second span far under
 * the surface. Bisecting such triangles until their longest edge is within `target` keeps the
 * clamped point within a piece of the cell. The surface is unchanged (midpoints of edges); every
 * triangle sharing a split edge is split with it, so the mesh stays conforming (the weld and the
 * neighbour links see the same edges on both sides). */
#ifndef NM_NAVBAKE_SLIVER_H
#define NM_NAVBAKE_SLIVER_H

#include <stdint.h>

/* The zone's map from world metres to base-map pixels: u = sx x + tx, v = ty - sz z (zone.json's
 * transform [sx, tx, sz, ty]); the planner's cells are kCS px squares from u = v = 0. */
typedef struct nm_sliver_grid {
    double sx, tx, sz, ty;
} nm_sliver_grid;

/* The mesh in world metres (x, y up, z), triangles as vertex ids with an area each; vertices with
 * equal bits count as one. A triangle is cut when
 * - it is a sliver: its longest edge in plan (x, z) is over two planner cells (2 kCS px in metres
 *   along the map's finer axis) and over kSliverRatio times its height in plan over that edge, and
 *   its vertices span more than NM_kMergeH in y (a flat sliver gives the right height wherever it
 *   clamps); or
 * - a cell it only touches (its centre outside) gets a clamped sample more than NM_kStepUp from
 *   the triangle's own height nearest that centre, in any vertex order (a thinner-than-usual
 *   triangle on a steep slope that is not a sliver by the ratio: recast-undulating at 0.71 px/m).
 * Its longest edge is cut at its midpoint, and so are the triangles sharing the edge; a triangle
 * cut anywhere is cut at its longest edge too (longest-edge bisection, so the neighbours do not
 * turn into fans of thin pieces); round after round until none is left. The arrays are replaced
 * only when something was split; *changed tells. A transform without a finite, non-zero scale
 * splits nothing. Deterministic (triangle order). NM_OK or NM_ERR_NOMEM. */
int nm_bake_split_slivers(float **verts, uint32_t *nv, uint32_t **tris, uint8_t **areas, uint32_t *nt,
                          const nm_sliver_grid *g, int *changed);

/* recast-undulating (seed 2, legs 24 and 25): 8 and 16 fix it, 32 does not (and a target of 8
 * cells does not); 4 costs far more triangles. */
#define NM_kSliverRatio 8.0

#endif
