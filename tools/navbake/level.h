/* level.h — a level file of any format into navbake's nm_obj (positions, triangles, groups).
 * Wavefront OBJ (.obj, .obj.gz) goes through obj.c (exact, see README "One importer?"); every
 * other format (glTF 2.0 / GLB, FBX, Collada, ...) goes through assimp: the whole node hierarchy
 * with each node's world transform applied (in double, rounded to float once), mirrored nodes
 * (negative determinant) with corners 1 and 2 swapped so up-facing stays up-facing, faces
 * triangulated, identical vertices merged, faces with a repeated vertex dropped, points and
 * lines ignored. Each node's name is the group of the triangles it holds (nodes without a name:
 * their mesh's name, else "default"); groups are numbered in order of their first triangle,
 * triangles in depth-first node order (children in file order), per node mesh by mesh.
 *
 * Units: world metres, +Y up. glTF is metres; FBX coordinates are multiplied by the file's
 * UnitScaleFactor / 100 (FBX counts centimetres); Collada's <unit meter> is applied by assimp. */
#ifndef NM_TOOLS_LEVEL_H
#define NM_TOOLS_LEVEL_H

#include "obj.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_level_opts {
    const char *const *nodes;  /* --node: keep only these subtrees ("x*" = prefix); NULL = all */
    uint32_t node_count;
    const char *const *skip;   /* --skip-node: drop these subtrees (wins over nodes) */
    uint32_t skip_count;
    bool obj_via_assimp;       /* OBJ through assimp too (measurements, tests) */
} nm_level_opts;

typedef struct nm_level_info {
    char importer[32];         /* "obj" or "assimp <format>" */
    uint32_t nodes;            /* nodes in the file (0 for OBJ) */
    uint32_t nodes_kept;       /* nodes with meshes whose triangles were taken (OBJ: groups) */
    uint32_t nodes_skipped;    /* nodes with meshes dropped by --node / --skip-node (OBJ: groups) */
    uint32_t faces_dropped;    /* points, lines and faces with a repeated vertex */
    uint32_t mirrored;         /* kept nodes with a negative determinant */
    double unit_scale;         /* file units -> metres applied (1 when none) */
    float bmin[3], bmax[3];    /* bounds of the vertices used (0 when none) */
} nm_level_info;

/* Reads a level file: .obj / .obj.gz through obj.c (unless opts->obj_via_assimp; --node and
 * --skip-node then select OBJ groups), anything else through assimp, in a child process with a
 * CPU limit and (not in sanitizer builds) an address-space limit, so that assimp crashing on a
 * damaged file, or looping or growing on it, is an error (README "Level files"). Uses fork: call it
 * before starting threads. Messages name the file: "level.glb: assimp: ...",
 * "level.glb: --node 'x' matches no node". info may be NULL. */
int nm_level_load(const char *path, const nm_level_opts *opts, nm_obj *out, nm_level_info *info, nm_error *err);
/* The same from memory; `hint` is the format's file extension ("glb", "gltf", "fbx", "dae",
 * "obj") and `name` names it in messages. assimp runs in the calling process (the fuzz target's
 * way in: it must see assimp's crashes). */
int nm_level_parse(const void *data, size_t size, const char *hint, const char *name,
                   const nm_level_opts *opts, nm_obj *out, nm_level_info *info, nm_error *err);
/* true when this build reads formats other than OBJ (assimp found at build time). */
bool nm_level_have_assimp(void);
/* true when nm_level_load caps the import's address space (false in sanitizer builds, whose
 * shadow memory is address space, and without assimp). */
bool nm_level_caps_address_space(void);

#ifdef __cplusplus
}
#endif
#endif
