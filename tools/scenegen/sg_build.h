/* sg_build.h — scenegen's construction state shared by the scene reader (sg_scene.c) and the
 * Moving AI reader (sg_movingai.c): surfaces with a height model, cuts that remove surface
 * cells, boxes (solids and props), vertical walkable faces; sg_build_finish turns them into the
 * world's triangles. */
#ifndef NM_SCENEGEN_SG_BUILD_H
#define NM_SCENEGEN_SG_BUILD_H

#include "sg.h"

typedef struct sg_rect {
    double x0, y0, x1, y1;
} sg_rect;

enum { SG_H_CONST, SG_H_RAMP, SG_H_EXPR, SG_H_GRID };

typedef struct sg_surf {
    int group;
    sg_rect r;
    int hk;           /* SG_H_* */
    double h0, h1;    /* const: h0; ramp: h0 at r's min along axis, h1 at its max */
    int axis;         /* ramp: 0 = x, 1 = y */
    nm_sg_expr *expr; /* borrowed from the build's expression list */
    double dh;        /* expr / grid: added height */
    const double *grid;
    int gcols, grows;
    double block; /* mesh block edge, m */
    int owner;
    bool terrain;
} sg_surf;

typedef struct sg_cut {
    sg_rect r;
    double lo, hi; /* surfaces whose height at a cell centre is in [lo, hi) lose the cell */
    int only;      /* >= 0: only surfaces of this owner */
    int except;    /* >= 0: never surfaces of this owner */
    bool terrain_only;
} sg_cut;

typedef struct sg_box {
    sg_rect r;
    double base, top;
    int group;
} sg_box;

typedef struct sg_vface {
    double x0, y0, x1, y1, lo, hi, strip;
    int group;
} sg_vface;

typedef struct nm_sg_build {
    sg_surf *s;
    size_t ns, cs;
    sg_cut *c;
    size_t nc, cc;
    sg_box *b;
    size_t nb, cb;
    sg_vface *f;
    size_t nf, cf;
    nm_sg_expr **ex;
    size_t nex, cex;
    double **grids;
    size_t ngr, cgr;
    int owners;
} nm_sg_build;

int sg_add_surf(nm_sg_world *w, const sg_surf *s, nm_error *err);
int sg_add_cut(nm_sg_world *w, const sg_cut *c, nm_error *err);
int sg_add_box(nm_sg_world *w, const sg_box *b, nm_error *err);
int sg_add_vface(nm_sg_world *w, const sg_vface *f, nm_error *err);
int sg_add_link(nm_sg_world *w, const nm_sg_link *l, nm_error *err);
int sg_new_owner(nm_sg_world *w);
sg_rect sg_rect_norm(double x0, double y0, double x1, double y1);
/* Meshes everything added so far, repairs T-junctions and frees the build state. */
int sg_build_finish(nm_sg_world *w, nm_error *err);
void sg_build_free(nm_sg_build *b);

#endif
