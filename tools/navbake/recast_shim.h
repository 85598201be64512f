/* recast_shim.h — C API over Recast (Debian librecast-dev) for navbake: raw level triangles in,
 * the walkable polygon mesh's detail triangles out, the way a game's navmesh exporter builds
 * it (agent height / radius / climb / slope, one area id per triangle).
 *
 * Units: world metres, +Y up, Recast's winding convention (a triangle is walkable when the y of
 * (v1 - v0) x (v2 - v0), normalised, exceeds cos(slope)). */
#ifndef NM_TOOLS_RECAST_SHIM_H
#define NM_TOOLS_RECAST_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NM_RC_OBSTACLE 0xFFu /* input area: rasterised as solid, never walkable */

typedef struct nm_rc_params {
    double agent_height;   /* m [Limit: > 0] */
    double agent_radius;   /* m [Limit: >= 0] */
    double agent_climb;    /* m [Limit: >= 0] */
    double slope_deg;      /* degrees [Limit: 0..90) */
    double cell_size;      /* horizontal voxel, m; 0 = agent_radius / 4 (at least 0.05 m) */
    double cell_height;    /* vertical voxel, m; 0 = 0.1 m (coarser when the zone is over 800 cells tall) */
    uint32_t max_cells;    /* grid width * height cap; the cell size grows to fit; 0 = 2^24 */
} nm_rc_params;

typedef struct nm_rc_input {
    const float *verts;     /* x, y, z per vertex, m [Size: 3 * vert_count] */
    uint32_t vert_count;
    const uint32_t *tris;   /* [Size: 3 * tri_count] */
    const uint8_t *areas;   /* our area id 0..31 per triangle, or NM_RC_OBSTACLE */
    uint32_t tri_count;
} nm_rc_input;

/* The walkable mesh: the detail triangles of every polygon, vertices per polygon (the ones on a
 * shared edge are identical floats, which the weld joins). */
typedef struct nm_rc_mesh {
    float *verts;           /* x, y, z per vertex, m (allocated with nm_malloc) */
    uint32_t vert_count;
    uint32_t *tris;
    uint8_t *areas;         /* our area id per triangle */
    uint32_t tri_count;
    double cell_size;       /* the cell size used, m */
} nm_rc_mesh;

/* Returns true when the Recast path is compiled in. */
bool nm_rc_available(void);
/* Builds the walkable mesh. Returns 0 on success, else a negative NM_ERR_* with a message naming
 * the Recast stage in msg. An input with no walkable triangles gives an empty mesh (0 on return). */
int nm_rc_build(const nm_rc_input *in, const nm_rc_params *p, nm_rc_mesh *out, char *msg, size_t msg_cap);
void nm_rc_mesh_free(nm_rc_mesh *m);

#ifdef __cplusplus
}
#endif
#endif
