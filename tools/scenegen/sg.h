/* sg.h — scenegen's internal API: a generated test world (walkable surfaces, water, solids and
 * collision-only props as one OBJ vertex pool with named groups, zones, off-mesh links), built
 * from a declarative scene.json or a Moving AI map, and written as level.obj + zone.json for
 * navbake --walkable-as-is, or drawn as a top-view picture.
 *
 * Plan coordinates: x east and y south in metres (y grows down the map like pixel v); heights h
 * in metres. The OBJ vertex of plan point (x, y, h) is (x, h, -y), so a zone transform
 * [s, tx, s, ty] gives u = s·x + tx and v = ty + s·y. */
#ifndef NM_SCENEGEN_SG_H
#define NM_SCENEGEN_SG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "base/base.h"

typedef struct cJSON cJSON;

/* What a group is for navbake: walkable (area 0), water (walkable geometry, non-walkable area),
 * solid (obstacle: cuts the walkable surface, listed in "obstacles"), prop (collision-only). */
enum { NM_SG_WALK = 0, NM_SG_WATER = 1, NM_SG_SOLID = 2, NM_SG_PROP = 3 };

typedef struct nm_sg_vec {
    double x, y, h; /* plan metres, height metres */
} nm_sg_vec;

typedef struct nm_sg_group {
    char name[128];
    int role; /* NM_SG_* */
    int zone; /* index into zones */
    int area; /* area id for water groups */
    bool terrain; /* holds a "terrain" object: listed in zone.json "heightfields" */
} nm_sg_group;

typedef struct nm_sg_tri {
    uint32_t v[3];
    uint32_t group;
} nm_sg_tri;

typedef struct nm_sg_zone {
    char name[64];
    bool has_id;
    int id;
    double tf[4]; /* sx, tx, sy, ty: u = sx·x + tx, v = ty + sy·y (plan y) */
    bool has_floor;
    double floor_y;
    cJSON *tiers; /* owned copy of the scene's tier list, or NULL */
} nm_sg_zone;

typedef struct nm_sg_link {
    int zone;
    nm_sg_vec a, b; /* plan metres */
    bool bidir;
    double radius, cost;
    int area, type;
    char id[64];
} nm_sg_link;

/* A generated world. The arrays are public so tests can check the geometry's facts. */
typedef struct nm_sg_world {
    char name[64];
    nm_sg_vec *v;
    size_t nv, cv;
    nm_sg_tri *t;
    size_t nt, ct;
    nm_sg_group *g;
    size_t ng, cg;
    nm_sg_zone *zones;
    size_t nz;
    nm_sg_link *links;
    size_t nl, cl;
    cJSON *agent; /* owned */
    /* vertex dedup hash (open addressing over quantised positions) */
    uint32_t *vh;
    size_t vhcap;
    struct nm_sg_build *build; /* construction state, freed when the world is finished */
} nm_sg_world;

/* Builds a world from scene.json text; label names the file in messages. */
int nm_sg_world_from_json(const char *text, const char *label, nm_sg_world **out, nm_error *err);
/* Builds a world from a Moving AI .map text: tile (x, y) covers plan [x, x+1) × [y, y+1) metres
 * and the zone transform is [T, 0, T, 0], T = NM_SG_MOVINGAI_TILE_PX px per tile; passable tiles
 * ('.', 'G', 'S') are floor at h = 0, every other tile is a 3 m solid whose footprint is cut
 * out. */
int nm_sg_world_from_movingai(const char *text, const char *label, nm_sg_world **out,
                              nm_error *err);
/* The same with tile_px pixels per tile (zone transform [tile_px, 0, tile_px, 0]; a tile stays
 * 1 m, so heights and the agent keep their metres). */
int nm_sg_world_from_movingai_px(const char *text, const char *label, double tile_px,
                                 nm_sg_world **out, nm_error *err);
/* Default px per tile: the benchmark's agent fits a one-tile corridor; the planner's keeps
 * kClrPref = 1.75 px on each side, so a tile must be >= 3.5 px (4 keeps tile edges on cells). */
#define NM_SG_MOVINGAI_TILE_PX 4.0
void nm_sg_world_free(nm_sg_world *w);

/* The OBJ text (vertices "%.6f", groups in creation order). Caller frees *out with nm_free. */
int nm_sg_obj_text(const nm_sg_world *w, char **out, size_t *len, nm_error *err);
/* The zone.json text for navbake (tools/navbake/ZONE_JSON.md). Caller frees with nm_free. */
int nm_sg_zone_json_text(const nm_sg_world *w, char **out, nm_error *err);
/* Writes DIR/level.obj and DIR/zone.json (creating DIR), or explicit paths when obj_path /
 * zone_path are given (dir may then be NULL). */
int nm_sg_write(const nm_sg_world *w, const char *dir, const char *obj_path,
                const char *zone_path, nm_error *err);

/* Top-view picture: base-map pixels of zone 0 times scale; walkable surfaces coloured by height,
 * water, solids, props and links. Returns NM_ERR_STATE when built without OpenCV. */
int nm_sg_picture(const nm_sg_world *w, const char *png_path, double scale, nm_error *err);

/* Picture colours, fixed so tests can look for them. */
#define NM_SG_WATER_RGB 40, 110, 230
#define NM_SG_SOLID_RGB 70, 70, 70
#define NM_SG_PROP_RGB 255, 140, 0
#define NM_SG_LINK_RGB 230, 30, 200
#define NM_SG_BG_RGB 255, 255, 255

/* Formula terrain: compiles an expression in x, y (plan metres). */
typedef struct nm_sg_expr nm_sg_expr;
int nm_sg_expr_compile(const char *src, nm_sg_expr **out, nm_error *err);
double nm_sg_expr_eval(const nm_sg_expr *e, double x, double y);
void nm_sg_expr_free(nm_sg_expr *e);

/* Moving AI scenario: parses "version 1" + lines into legs, writes "sx sy gx gy opt" per line
 * in px at NM_SG_MOVINGAI_TILE_PX px per tile (tile centres (x + 0.5)·T, opt·T). */
int nm_sg_scen_convert(const char *scen_text, const char *label, char **out, nm_error *err);
/* The same with tile_px pixels per tile: positions (x + 0.5) * tile_px, opt * tile_px. */
int nm_sg_scen_convert_px(const char *scen_text, const char *label, double tile_px, char **out,
                          nm_error *err);

/* Helpers shared by the builders (sg_mesh.c). */
int nm_sg_group_get(nm_sg_world *w, const char *name, int role, int zone, int area,
                    nm_error *err);
int nm_sg_vertex(nm_sg_world *w, double x, double y, double h, uint32_t *idx, nm_error *err);
int nm_sg_tri_add(nm_sg_world *w, uint32_t a, uint32_t b, uint32_t c, int group, nm_error *err);
int nm_sg_fix_tjunctions(nm_sg_world *w, nm_error *err);
nm_sg_world *nm_sg_world_new(void);
int nm_sg_group_find(const nm_sg_world *w, const char *name);

#endif
