/* gltf_write.h — a tiny glTF 2.0 writer for the tests (and small FBX and Collada levels) (.gltf with the buffer as a base64 data URI,
 * or .glb), and the small test level it writes: the same level as world-space OBJ text, so a
 * bake of either can be compared byte for byte.
 *
 * The level (world metres, +Y up, every triangle counter-clockwise seen from above):
 *   ground  20 x 20 m floor at y 0, x, z in [0, 20], node translation (10, 0, 10)
 *   deck    6 x 6 m platform at y 0.3, x in [20, 26], z in [0, 6]; its node is MIRRORED
 *           (matrix scale x -1, translation (23, 0.3, 3)) and its local faces are counter-
 *           clockwise in local space, as an exporter writes a mirrored object
 *   water   10 x 4 m at y 0, x in [0, 10], z in [20, 24], node translation (0, 0, 20)
 *   props   no mesh, translation (0, 0, -8); its child
 *   crate   2 x 2 m local square scaled by 2 (TRS), translation (5, 0, -3): x in [5, 9], z in [-11, -7]
 * Groups (OBJ) = mesh nodes in depth-first order: ground, deck, water, crate. */
#ifndef NM_TESTS_BAKE_GLTF_WRITE_H
#define NM_TESTS_BAKE_GLTF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tg_buf {
    uint8_t *p;
    size_t size;
} tg_buf;

/* The test level as glTF JSON (binary = false: buffer inlined as a data URI) or GLB bytes.
 * nan_vertex: the first ground vertex is a NaN (a malformed file). */
tg_buf tg_level_gltf(bool binary, bool nan_vertex);
/* The same level as OBJ text (NUL-terminated), groups in node order; skip: a group left out
 * (NULL = none). */
tg_buf tg_level_obj(const char *skip);
/* A 1 x 1 (file units) quad node "ground" at translation (0, 0, 5) as ASCII FBX 7.4 with this
 * UnitScaleFactor (centimetres per unit). */
tg_buf tg_level_fbx(const char *unit_scale_factor);
/* The same quad in Collada, 100 x 100 cm, Z up, node "ground" at 500 cm up (NUL-terminated). */
const char *tg_level_dae(void);
void tg_free(tg_buf *b);
/* Writes bytes to dir/name; returns the malloc'ed path. */
char *tg_write(const char *dir, const char *name, const tg_buf *b);

#endif
