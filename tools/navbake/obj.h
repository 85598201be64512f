/* obj.h — a small Wavefront OBJ reader for level geometry: positions (v), faces (f, n-gons
 * fan-triangulated; v, v/vt, v//vn, v/vt/vn; negative indices relative to the vertices read so
 * far) and groups (g / o lines set the current group; faces before any group go to "default").
 * Everything else (vt, vn, usemtl, mtllib, s, l, p, ...) is ignored. Used by navbake, scenegen
 * tests and the occluder writer.
 *
 * Units: whatever the file holds (navbake treats them as world metres after --scale). */
#ifndef NM_TOOLS_OBJ_H
#define NM_TOOLS_OBJ_H

#include "base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_obj {
    float *pos;            /* x, y, z per vertex [Size: 3 * vert_count] */
    uint32_t vert_count;
    uint32_t *tris;        /* three vertex indices per triangle, 0-based [Size: 3 * tri_count] */
    uint32_t *tri_group;   /* group index per triangle [Size: tri_count] */
    uint32_t tri_count;
    char **groups;         /* group names in order of their first face [Size: group_count] */
    uint32_t group_count;
} nm_obj;

/* Parses OBJ text (not necessarily NUL-terminated). `name` is used in messages, which carry the
 * line number: "level.obj:12: face index 9 out of range (8 vertices)". Malformed numbers, NaN /
 * infinite / out-of-float-range coordinates, index 0 or out of range and faces with fewer than
 * three corners are errors (NM_ERR_CORRUPT). On error *out is left empty. */
int nm_obj_parse(const char *text, size_t size, const char *name, nm_obj *out, nm_error *err);
/* Reads a file (gzip when the name ends in .gz) and parses it. */
int nm_obj_load(const char *path, nm_obj *out, nm_error *err);
void nm_obj_free(nm_obj *o);
/* Index of the group with this exact name, or -1. */
int nm_obj_find_group(const nm_obj *o, const char *name);

#ifdef __cplusplus
}
#endif
#endif
