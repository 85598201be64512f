/* sg_testlib.h — helpers for the scene tests: load a scene from resources/, query walkable
 * heights at a plan point, connected components of the walkable mesh (shared edges), a
 * conservative cell test on the 0.25 px lattice, and a tiny OBJ reader. */
#ifndef NM_SG_TESTLIB_H
#define NM_SG_TESTLIB_H

#include "sg.h"

nm_sg_world *tl_load(const char *rel_path); /* relative to NM_SOURCE_ROOT; NULL on failure */
char *tl_read(const char *path);            /* whole file, malloc'd, or NULL */
const char *tl_src(void);

/* Heights of the walkable (role WALK, or WATER when water) non-vertical triangles over plan
 * point (x, y), ascending, at most cap; group_prefix filters by group name (NULL = all). */
int tl_heights(const nm_sg_world *w, double x, double y, const char *group_prefix, bool water,
               double *out, int cap);
/* Component label (>= 0) of the walkable/water triangle over (x, y) whose height is within
 * 0.05 m of h, or -1. Components join triangles that share an edge. */
typedef struct tl_comp tl_comp;
tl_comp *tl_components(const nm_sg_world *w);
int tl_comp_at(const tl_comp *c, const nm_sg_world *w, double x, double y, double h);
int tl_comp_count(const tl_comp *c);
void tl_comp_free(tl_comp *c);
/* True when some walkable/water triangle of zone z touches the closed cell square (cx, cy) of
 * the zone's 0.25 px lattice (conservative rasterisation, separating axes); *centre_in is set
 * when the cell centre lies inside one. */
bool tl_cell_touched(const nm_sg_world *w, int z, long cx, long cy, bool *centre_in);
/* Triangles of group g whose plan projection is degenerate (vertical faces). */
size_t tl_vertical_tris(const nm_sg_world *w, int g, double *hmin, double *hmax);
/* Sorted distinct heights of the non-vertical triangles' vertices of group g (at most cap). */
int tl_group_heights(const nm_sg_world *w, int g, double *out, int cap);
/* Parses OBJ text: counts v and f lines and groups. */
void tl_obj_counts(const char *text, size_t *nv, size_t *nf, size_t *ng);

#endif
