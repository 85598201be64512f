/* pack.h — the main pack BNAV v5 (design article 数据包; byte layouts in
 * shared/docs/reference-maaend.md §4.2–4.5): header, section directory, BGEO (chunked vertex,
 * triangle and link tables), the zone table, BSRF surface flags, BOML off-mesh links. Sections
 * this module does not parse (BGRD and any unknown tag) are kept as raw bytes so later stages can
 * read them without touching this code.
 *
 * Units: u, v in base-map pixels (px), heights in metres. */
#ifndef NM_PACK_H
#define NM_PACK_H

#include "../base/base.h"
#include "../codec/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NM_BNAV_VERSION 5
#define NM_ZONE_FLAG_TIER 0x0001u

typedef struct nm_vertex { float u, v, h; } nm_vertex;

/* In memory a triangle keeps the first 24 bytes of its 36-byte canonical record: three vertex
 * indices and three neighbours (-1 = none). Neighbour k is across edge k = v[k] -> v[(k+1)%3]. */
typedef struct nm_tri {
    uint32_t v[3];
    int32_t nb[3];
} nm_tri;

typedef struct nm_link { uint32_t src, dst; } nm_link; /* sorted by src (non-decreasing) */

typedef struct nm_zone {
    uint16_t id;
    uint16_t flags;          /* bit 0: tier zone (no triangles; component_count = parent id) */
    uint32_t first_tri;      /* [first_tri, first_tri + tri_count) in the whole pack */
    uint32_t tri_count;
    uint32_t component_count;
    float width, height;     /* px */
    float t[4];              /* sx, tx, sy, ty: u = sx*x + tx, v = ty - sy*z (world m -> px);
                                for tier zones: tier px -> parent px, x' = sx*x + tx, y' = sy*y + ty */
    float floor_y;           /* NM_kFloorYNone when absent */
    char *name;              /* NUL-terminated copy of the name bytes */
    uint32_t name_len;
} nm_zone;

typedef struct nm_surface {  /* BSRF record, 8 bytes on disk */
    uint8_t area, poly_type;
    uint16_t pad;
    uint32_t flags;          /* the exporter writes 1 << area */
} nm_surface;

#define NM_BOML_NO_TRI 0xFFFFFFFFu /* v2 triangle id outside the loaded zone */
typedef struct nm_offmesh {  /* BOML record (v1 80 bytes, v2 88 bytes) */
    uint16_t zone_id;
    uint8_t kind;            /* 0 regular, 1 extended */
    int32_t is_ext, bidirectional, area;
    uint16_t link_type;
    uint8_t direction;
    float radius, cost_modifier;
    float pts[4][3];         /* {u, v, height} x 4: start, end, and two more for extended links */
    uint8_t dir_ok;          /* v2: bit 0 start->end walkable, bit 1 end->start */
    uint32_t start_tri, end_tri; /* v2: whole-pack ids on disk; zone-local after a zone load */
} nm_offmesh;

/* A section directory entry. `bytes` holds the section's bytes for tags this module does not
 * parse (BGRD, unknown); NULL for BGEO/BSRF/BOML after parsing. */
typedef struct nm_section {
    char tag[4];
    uint32_t flags;
    uint64_t offset, size;
    uint8_t *bytes;
} nm_section;

typedef struct nm_pack {
    uint16_t version, flags;
    nm_zone *zones;        uint32_t zone_count;
    nm_vertex *verts;      uint32_t vert_count;
    nm_tri *tris;          uint32_t tri_count;
    uint32_t *components;  /* per triangle, as stored (the planner recomputes its own) */
    nm_link *links;        uint32_t link_count;
    nm_surface *surfaces;  uint32_t surface_count;  /* 0 = no BSRF (all walkable) */
    nm_offmesh *offmesh;   uint32_t offmesh_count;
    uint16_t boml_version;                           /* 0 = no BOML */
    nm_section *sections;  uint32_t section_count;
    uint64_t build_hash;   /* from the header (verified on whole-pack loads) */
    uint64_t file_fnv;     /* FNV-1a 64 of the whole decompressed file */
    /* Zone-scoped loads: the whole-pack index of local triangle / vertex 0 (0 for whole loads). */
    uint32_t tri_base, vert_base;
    bool zone_scoped;
} nm_pack;

void nm_pack_free(nm_pack *p);     /* frees everything p owns and zeroes it; NULL-safe members */

/* Index of the zone with this name (the last of equal names wins), or -1. */
int nm_pack_find_zone(const nm_pack *p, const char *name);
/* Index of the zone with this id, or -1. */
int nm_pack_find_zone_id(const nm_pack *p, uint16_t id);
/* The section with this tag (the first for BGRD, the last for others), or NULL. */
const nm_section *nm_pack_section(const nm_pack *p, const char tag[4]);
/* Canonical triangle centre: ((a + b) + c) / 3 in float (part of build_hash). */
void nm_tri_centre(const nm_pack *p, uint32_t tri, float *cu, float *cv);
/* Can a character stand on triangle tri (a random leg's end, say)? Its area is walkable (BSRF
 * flags AND the whitelist, or no BSRF record) and its plane is no steeper than kSlope metres a
 * pixel (the grid's slope step, 垂直可达判据): not a facade's vertical strip, which covers no
 * ground on the map, nor a wall or water. False for a triangle out of range. */
bool nm_tri_standable(const nm_pack *p, uint32_t tri);

/* ---- reading ----------------------------------------------------------------------------------
 * Parses a decompressed BNAV file. zone == NULL: whole pack, build_hash verified over the
 * canonical bytes. zone != NULL: only that zone and its tier children (tier zones whose
 * component_count is its id); triangles, vertices, links relabelled zone-local, links leaving the
 * zone dropped, BOML filtered by zone id, BSRF sliced; no build_hash check. file_fnv is computed
 * either way. workers <= 0: the machine's cores (at most 4); results do not depend on it.
 * `name` is used in messages (e.g. the file name). */
typedef struct nm_pack_load_opts {
    const char *zone;   /* NULL = whole pack */
    int workers;        /* 0 = default */
} nm_pack_load_opts;

int nm_pack_parse(const uint8_t *data, size_t size, const char *name, const nm_pack_load_opts *opts,
                  nm_pack *out, nm_error *err);
/* Reads the file (gzip when *.gz) and parses it. */
int nm_pack_load(const char *path, const nm_pack_load_opts *opts, nm_pack *out, nm_error *err);

/* ---- writing ----------------------------------------------------------------------------------
 * Serialises p as BNAV v5 (BGEO + BSRF if surface_count + BOML v2 if offmesh_count + every
 * section in p->sections that has bytes, in order). Computes and stores build_hash (also written
 * back to p->build_hash) and file_fnv. Deterministic: the same pack gives the same bytes. */
typedef struct nm_pack_write_opts {
    uint32_t vert_chunk, tri_chunk, link_chunk; /* records per chunk; 0 = defaults */
    int level;                                   /* libdeflate level, 0 = 12 */
    int workers;                                 /* 0 = default */
} nm_pack_write_opts;

int nm_pack_serialize(nm_pack *p, const nm_pack_write_opts *opts, nm_buf *out, nm_error *err);
int nm_pack_save(nm_pack *p, const nm_pack_write_opts *opts, const char *path, nm_error *err);
/* The bytes nm_pack_serialize would give for p with one more section (tag, bytes) after all of
 * p->sections, made from in[0..n), nm_pack_serialize's bytes for p: the encoded sections are
 * copied, not encoded again (the bake adds BGRD after the geometry it was baked from). Appends
 * to out and stores the new file_fnv; p->sections is left as it is. */
int nm_pack_append_section(nm_pack *p, const uint8_t *in, size_t n, const char tag[4], const void *bytes,
                           size_t size, nm_buf *out, nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
