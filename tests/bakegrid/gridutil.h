/* gridutil.h — helpers of the grid bake tests: hand-made meshes as OBJ text in plan pixels
 * (zone transform [1, 0, 1, 0], so 1 m = 1 px and a cell is 0.25 m), baking them into a loaded
 * pack and one baked zone, and record look-ups by global cell. */
#ifndef NM_TESTS_GRIDUTIL_H
#define NM_TESTS_GRIDUTIL_H

#include "bake.h"
#include "bake/bake.h"

typedef struct sb {
    char *s;
    size_t n, cap;
    uint32_t nv; /* OBJ vertices written */
} sb;

void sb_printf(sb *b, const char *fmt, ...);
void sb_free(sb *b);
/* "g name" line */
void mesh_group(sb *b, const char *name);
/* A flat rectangle [u0, u1] x [v0, v1] at height h, cut into squares of `step` px (shared corners,
 * so the inside has no boundary edges); squares whose centre lies in the hole rectangle
 * [hu0, hu1] x [hv0, hv1] are left out (pass an empty hole to keep all). */
void mesh_rect(sb *b, double u0, double v0, double u1, double v1, double h, double step,
               double hu0, double hv0, double hu1, double hv1);
/* A quad with four corner heights (u0,v0) (u1,v0) (u1,v1) (u0,v1). */
void mesh_quad4(sb *b, double u0, double v0, double u1, double v1, double h00, double h10,
                double h11, double h01);

/* zone.json of one zone "t" with transform [1, 0, 1, 0]. */
extern const char *kZoneJson;

/* Bakes OBJ text as is into a pack, serialises it and reads it back (*loaded, whole pack). */
void bake_loaded(const char *obj, nm_pack *loaded);
/* Bakes zone 0 of the loaded pack into *z (asserts success). */
void bake_grid0(const nm_pack *loaded, int workers, nm_bake_grid_zone *z);

/* Records of global cell (gx, gy px*4): *n records from the returned pointer (NULL when outside). */
const nm_grid_rec *recs_at(const nm_bake_grid_zone *z, int32_t gx, int32_t gy, uint32_t *n,
                           uint32_t *first);
/* Global cell of a plan position in px. */
static inline int32_t cell_of(double px) { return (int32_t)__builtin_floor(px / NM_kCS); }

/* Runs a command line; returns the exit status (-1 when it did not run). */
int run_cmd(const char *cmd);
/* build root (NM_BUILD_ROOT, else "."). */
const char *build_root(void);

#endif
