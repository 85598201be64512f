/* sg_scene.c — reads a declarative scene.json (README.md) into scenegen's construction state:
 * zones, placement transforms (offset + quarter turns, nested groups and repeats) and the
 * primitives — terrain, boxes and platforms, walls, fences, saw-toothed walls, railings, lips,
 * slabs, ramps, stairs, blocks and facades, bridges, buildings, water, gaps, cracks, holes and
 * off-mesh links. Every error names the scene file and the object's path in it. */
#include "sg_build.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A placement: rotate by k quarter turns (+x towards +y), then offset. */
typedef struct {
    int k;
    double dx, dy, dh;
} xform;

typedef struct {
    nm_sg_world *w;
    const char *label;
    nm_error *err;
    char path[256]; /* "objects[3].objects[1]" of the object being read */
} ctx;

#define FAIL(C, ...)                                                                              \
    do {                                                                                          \
        char m_[300];                                                                             \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                     \
        return nm_fail((C)->err, NM_ERR_ARG, "%s: %s: %s", (C)->label, (C)->path, m_);            \
    } while (0)

static void rot(int k, double *x, double *y)
{
    for (int i = 0; i < (k & 3); i++) {
        double t = *x;
        *x = -*y;
        *y = t;
    }
}

static void apply(const xform *T, double *x, double *y, double *h)
{
    rot(T->k, x, y);
    *x += T->dx;
    *y += T->dy;
    if (h) *h += T->dh;
}

static xform compose(const xform *P, const xform *C)
{
    xform r;
    r.k = (P->k + C->k) & 3;
    double x = C->dx, y = C->dy;
    rot(P->k, &x, &y);
    r.dx = x + P->dx;
    r.dy = y + P->dy;
    r.dh = C->dh + P->dh;
    return r;
}

/* ---- JSON helpers ------------------------------------------------------------------------ */

static int num(ctx *c, const cJSON *o, const char *key, double def, bool required, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (required) FAIL(c, "missing \"%s\"", key);
        *out = def;
        return NM_OK;
    }
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return NM_OK;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) FAIL(c, "\"%s\" must be a number", key);
    *out = v->valuedouble;
    return NM_OK;
}

static bool flag(const cJSON *o, const char *key, bool def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return def;
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    if (cJSON_IsNumber(v)) return v->valuedouble != 0;
    return def;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int nums(ctx *c, const cJSON *o, const char *key, int nmin, int nmax, double *out, int *n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(v)) FAIL(c, "\"%s\" must be an array of %d numbers", key, nmin);
    int k = cJSON_GetArraySize(v);
    if (k < nmin || k > nmax) FAIL(c, "\"%s\" must have %d..%d numbers, has %d", key, nmin, nmax, k);
    for (int i = 0; i < k; i++) {
        const cJSON *e = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            FAIL(c, "\"%s\"[%d] must be a number", key, i);
        out[i] = e->valuedouble;
    }
    if (n) *n = k;
    return NM_OK;
}

static int get_rect(ctx *c, const cJSON *o, const char *key, const xform *T, sg_rect *r)
{
    double a[4];
    int rc = nums(c, o, key, 4, 4, a, NULL);
    if (rc) return rc;
    apply(T, &a[0], &a[1], NULL);
    apply(T, &a[2], &a[3], NULL);
    *r = sg_rect_norm(a[0], a[1], a[2], a[3]);
    if (r->x1 - r->x0 < 1e-6 || r->y1 - r->y0 < 1e-6) FAIL(c, "\"%s\" is empty", key);
    return NM_OK;
}

/* A plan point [x, y] or [x, y, h]; h defaults to def_h (before the offset). */
static int get_point(ctx *c, const cJSON *o, const char *key, const xform *T, double def_h,
                     nm_sg_vec *p)
{
    double a[3] = {0, 0, def_h};
    int n;
    int rc = nums(c, o, key, 2, 3, a, &n);
    if (rc) return rc;
    apply(T, &a[0], &a[1], &a[2]);
    *p = (nm_sg_vec){a[0], a[1], a[2]};
    return NM_OK;
}

/* "+x" "-x" "+y" "-y" → axis (0 x, 1 y) and sign, rotated by T. */
static int get_dir(ctx *c, const cJSON *o, const char *key, const xform *T, int *axis, int *sign)
{
    const char *s = str(o, key);
    if (!s || strlen(s) != 2 || (s[0] != '+' && s[0] != '-') || (s[1] != 'x' && s[1] != 'y'))
        FAIL(c, "\"%s\" must be one of \"+x\", \"-x\", \"+y\", \"-y\"", key);
    double x = s[1] == 'x' ? 1 : 0, y = s[1] == 'y' ? 1 : 0;
    if (s[0] == '-') x = -x, y = -y;
    rot(T->k, &x, &y);
    *axis = fabs(x) > 0.5 ? 0 : 1;
    *sign = (x + y) > 0 ? 1 : -1;
    return NM_OK;
}

/* Group name "<role>_<zone>[_<id>]". */
static int group_for(ctx *c, int role, int zone, const char *id, int area)
{
    static const char *rn[] = {"walk", "water", "solid", "prop"};
    char name[160];
    if (id && *id)
        snprintf(name, sizeof name, "%s_%s_%s", rn[role], c->w->zones[zone].name, id);
    else
        snprintf(name, sizeof name, "%s_%s", rn[role], c->w->zones[zone].name);
    return nm_sg_group_get(c->w, name, role, zone, area, c->err);
}

/* ---- emit helpers ------------------------------------------------------------------------ */

typedef struct {
    int zone;
    const char *id;
} obj_info;

static int flat(ctx *c, const obj_info *oi, sg_rect r, double h, int owner, bool terrain,
                int role, int area)
{
    int g = group_for(c, role, oi->zone, oi->id, area);
    if (g < 0) return g;
    sg_surf s = {0};
    s.group = g;
    s.r = r;
    s.hk = SG_H_CONST;
    s.h0 = h;
    s.block = 16;
    s.owner = owner;
    s.terrain = terrain;
    return sg_add_surf(c->w, &s, c->err);
}

static int solid(ctx *c, const obj_info *oi, sg_rect r, double base, double top, bool cuts)
{
    int g = group_for(c, NM_SG_SOLID, oi->zone, oi->id, 0);
    if (g < 0) return g;
    sg_box b = {r, base, top, g};
    int rc = sg_add_box(c->w, &b, c->err);
    if (rc || !cuts) return rc;
    sg_cut k = {r, base - 0.05, top - 0.05, -1, -1, false};
    return sg_add_cut(c->w, &k, c->err);
}

static int prop(ctx *c, const obj_info *oi, sg_rect r, double base, double top)
{
    int g = group_for(c, NM_SG_PROP, oi->zone, oi->id, 0);
    if (g < 0) return g;
    sg_box b = {r, base, top, g};
    return sg_add_box(c->w, &b, c->err);
}

static int cut(ctx *c, sg_rect r, double lo, double hi, int only, int except, bool terrain_only)
{
    sg_cut k = {r, lo, hi, only, except, terrain_only};
    return sg_add_cut(c->w, &k, c->err);
}

/* Cuts r from every other surface at height h (±0.05): used where a primitive lays its own
 * floor over ground that may already be there, so the two never overlap. */
static int replace_floor(ctx *c, sg_rect r, double h, int owner)
{
    return cut(c, r, h - 0.05, h + 0.05, -1, owner, false);
}

/* A vertical walkable face over the plan segment (x0, y0) -> (x1, y1) from lo to hi. Its winding
 * follows the segment, so pass it with the UPPER surface on its left (and the lower one on its
 * right): then the face's bottom edge is the reverse of the lower surface's counter-clockwise edge
 * and its top edge the reverse of the upper one's, and the pieces are neighbours in the mesh (a
 * face wound the other way repeats their directed edges and ZoneClean cuts it off, 规则 1). */
static int vface(ctx *c, const obj_info *oi, double x0, double y0, double x1, double y1,
                 double lo, double hi, double strip)
{
    int g = group_for(c, NM_SG_WALK, oi->zone, oi->id, 0);
    if (g < 0) return g;
    sg_vface f = {x0, y0, x1, y1, fmin(lo, hi), fmax(lo, hi), strip, g};
    if (fabs(hi - lo) < 1e-6) return NM_OK;
    return sg_add_vface(c->w, &f, c->err);
}

/* A segment from..to, axis-aligned, thickened across and extended by `cap` at both ends: the
 * footprint of walls and railings. Walls take cap = thickness/2 so that two walls meeting at a
 * corner overlap: had they met at a single point, the cell on that point would touch the ground
 * outside the corner (conservative rasterisation) and leak a diagonal step through the corner. */
static int seg_rect(ctx *c, const cJSON *o, const xform *T, double thick, double cap, sg_rect *r,
                    int *axis)
{
    nm_sg_vec a, b;
    int rc = get_point(c, o, "from", T, 0, &a);
    if (!rc) rc = get_point(c, o, "to", T, 0, &b);
    if (rc) return rc;
    bool ax = fabs(a.y - b.y) < 1e-9, ay = fabs(a.x - b.x) < 1e-9;
    if (!ax && !ay) FAIL(c, "\"from\"/\"to\" must be axis-aligned");
    if (ax && ay) FAIL(c, "\"from\" equals \"to\"");
    if (ax) {
        *r = sg_rect_norm(a.x, a.y - thick / 2, b.x, b.y + thick / 2);
        r->x0 -= cap, r->x1 += cap;
    } else {
        *r = sg_rect_norm(a.x - thick / 2, a.y, b.x + thick / 2, b.y);
        r->y0 -= cap, r->y1 += cap;
    }
    if (axis) *axis = ax ? 0 : 1;
    return NM_OK;
}

/* ---- primitives -------------------------------------------------------------------------- */

static int p_terrain(ctx *c, const cJSON *o, const xform *T, const obj_info *oi, bool terrain)
{
    sg_rect r;
    int rc = get_rect(c, o, "rect", T, &r);
    if (rc) return rc;
    double area = 0, block = 0;
    if ((rc = num(c, o, "area", 0, false, &area))) return rc;
    if ((rc = num(c, o, "block", 0, false, &block))) return rc;
    int role = area != 0 ? NM_SG_WATER : NM_SG_WALK;
    int g = group_for(c, role, oi->zone, oi->id, (int)area);
    if (g < 0) return g;
    nm_sg_build *B = c->w->build;
    sg_surf s = {0};
    s.group = g;
    s.r = r;
    s.owner = sg_new_owner(c->w);
    s.terrain = terrain;
    if (terrain) c->w->g[g].terrain = true;
    s.dh = T->dh;
    const char *f = str(o, "formula");
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(o, "grid");
    if (f) {
        nm_sg_expr *e;
        rc = nm_sg_expr_compile(f, &e, c->err);
        if (rc) {
            nm_error_prefix(c->err, "%s: %s", c->label, c->path);
            return rc;
        }
        if (B->nex == B->cex) {
            size_t nc = B->cex ? B->cex * 2 : 8;
            nm_sg_expr **q = nm_realloc(B->ex, nc * sizeof *q);
            if (!q) {
                nm_sg_expr_free(e);
                return nm_fail(c->err, NM_ERR_NOMEM, "scenegen: out of memory");
            }
            B->ex = q, B->cex = nc;
        }
        B->ex[B->nex++] = e;
        s.hk = SG_H_EXPR;
        s.expr = e;
        s.block = block > 0 ? block : 4;
    } else if (grid) {
        double cols, rows;
        if ((rc = num(c, grid, "cols", 0, true, &cols))) return rc;
        if ((rc = num(c, grid, "rows", 0, true, &rows))) return rc;
        const cJSON *hv = cJSON_GetObjectItemCaseSensitive(grid, "h");
        if (cols < 1 || rows < 1 || cols > 4096 || rows > 4096 || !cJSON_IsArray(hv) ||
            cJSON_GetArraySize(hv) != (int)cols * (int)rows)
            FAIL(c, "\"grid\" needs cols, rows (1..4096) and h with cols*rows numbers");
        double *vals = nm_malloc((size_t)cols * (size_t)rows * sizeof *vals);
        if (!vals) return nm_fail(c->err, NM_ERR_NOMEM, "scenegen: out of memory");
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, hv) vals[i++] = cJSON_IsNumber(e) ? e->valuedouble : 0;
        if (B->ngr == B->cgr) {
            size_t nc = B->cgr ? B->cgr * 2 : 8;
            double **q = nm_realloc(B->grids, nc * sizeof *q);
            if (!q) {
                nm_free(vals);
                return nm_fail(c->err, NM_ERR_NOMEM, "scenegen: out of memory");
            }
            B->grids = q, B->cgr = nc;
        }
        B->grids[B->ngr++] = vals;
        s.hk = SG_H_GRID;
        s.grid = vals;
        s.gcols = (int)cols;
        s.grows = (int)rows;
        s.block = block > 0 ? block : 4;
    } else {
        double h;
        if ((rc = num(c, o, "h", 0, false, &h))) return rc;
        s.hk = SG_H_CONST;
        s.h0 = h + T->dh;
        s.block = block > 0 ? block : 16;
    }
    return sg_add_surf(c->w, &s, c->err);
}

static int p_box(ctx *c, const cJSON *o, const xform *T, const obj_info *oi, bool platform)
{
    sg_rect r;
    int rc = get_rect(c, o, "rect", T, &r);
    double base, top, height;
    if (!rc) rc = num(c, o, "base", 0, false, &base);
    if (!rc) rc = num(c, o, "height", NAN, false, &height);
    if (!rc) rc = num(c, o, "top", isnan(height) ? NAN : base + height, false, &top);
    if (rc) return rc;
    if (isnan(top)) FAIL(c, "needs \"top\" or \"height\"");
    if (top <= base) FAIL(c, "top %.3f must be above base %.3f", top, base);
    base += T->dh, top += T->dh;
    const char *role = str(o, "role");
    bool is_prop = role && strcmp(role, "prop") == 0;
    if (role && !is_prop && strcmp(role, "solid") != 0) FAIL(c, "\"role\" must be solid or prop");
    if (is_prop) return prop(c, oi, r, base, top);
    rc = solid(c, oi, r, base, top, flag(o, "cuts", true));
    if (!rc && flag(o, "walkable_top", platform))
        rc = flat(c, oi, r, top, sg_new_owner(c->w), false, NM_SG_WALK, 0);
    return rc;
}

static int p_wall(ctx *c, const cJSON *o, const xform *T, const obj_info *oi, double dthick,
                  double dheight, int role)
{
    double thick = 0, height = 0, base = 0;
    int rc = num(c, o, "thickness", dthick, false, &thick);
    if (!rc) rc = num(c, o, "height", dheight, false, &height);
    if (!rc) rc = num(c, o, "base", 0, false, &base);
    if (rc) return rc;
    if (thick <= 0 || height <= 0) FAIL(c, "thickness and height must be positive");
    sg_rect r;
    if ((rc = seg_rect(c, o, T, thick, role == NM_SG_SOLID ? thick / 2 : 0, &r, NULL))) return rc;
    base += T->dh;
    if (role == NM_SG_PROP) return prop(c, oi, r, base, base + height);
    return solid(c, oi, r, base, base + height, true);
}

static int p_sawwall(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    double thick = 0, height = 0, base = 0, tooth = 0, pitch = 0;
    int rc = num(c, o, "thickness", 0.5, false, &thick);
    if (!rc) rc = num(c, o, "height", 3, false, &height);
    if (!rc) rc = num(c, o, "base", 0, false, &base);
    if (!rc) rc = num(c, o, "tooth", 1, false, &tooth);
    if (!rc) rc = num(c, o, "pitch", 2, false, &pitch);
    if (rc) return rc;
    if (pitch <= 0.1 || tooth <= 0) FAIL(c, "pitch and tooth must be positive");
    const char *side = str(o, "side");
    int sgn = side && side[0] == '-' ? -1 : 1;
    nm_sg_vec a, b;
    if ((rc = get_point(c, o, "from", T, 0, &a)) || (rc = get_point(c, o, "to", T, 0, &b)))
        return rc;
    /* "side" is in the world frame: "+" puts the teeth towards +y (walls along x) or +x. */
    sg_rect r;
    int axis;
    if ((rc = seg_rect(c, o, T, thick, 0, &r, &axis))) return rc;
    base += T->dh;
    double lo = axis == 0 ? r.x0 : r.y0, hi = axis == 0 ? r.x1 : r.y1;
    sg_rect capped = r;
    if (axis == 0) capped.x0 -= thick / 2, capped.x1 += thick / 2;
    else capped.y0 -= thick / 2, capped.y1 += thick / 2;
    if ((rc = solid(c, oi, capped, base, base + height, true))) return rc;
    for (double s = lo; s + pitch / 2 <= hi + 1e-9; s += pitch) {
        sg_rect t;
        if (axis == 0)
            t = sgn > 0 ? sg_rect_norm(s, r.y1, s + pitch / 2, r.y1 + tooth)
                        : sg_rect_norm(s, r.y0 - tooth, s + pitch / 2, r.y0);
        else
            t = sgn > 0 ? sg_rect_norm(r.x1, s, r.x1 + tooth, s + pitch / 2)
                        : sg_rect_norm(r.x0 - tooth, s, r.x0, s + pitch / 2);
        if ((rc = solid(c, oi, t, base, base + height, true))) return rc;
    }
    return NM_OK;
}

static int p_slab(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    sg_rect r;
    double h, th;
    int rc = get_rect(c, o, "rect", T, &r);
    if (!rc) rc = num(c, o, "h", 0, true, &h);
    if (!rc) rc = num(c, o, "thickness", 0.3, false, &th);
    if (rc) return rc;
    if (th <= 0) FAIL(c, "thickness must be positive");
    return prop(c, oi, r, h + T->dh, h + th + T->dh);
}

/* Ramp surface over r rising along (axis, sign) from h0 to h1; its body cuts what is below. */
static int ramp_surf(ctx *c, const obj_info *oi, sg_rect r, int axis, int sign, double h0,
                     double h1)
{
    int g = group_for(c, NM_SG_WALK, oi->zone, oi->id, 0);
    if (g < 0) return g;
    sg_surf s = {0};
    s.group = g;
    s.r = r;
    s.hk = SG_H_RAMP;
    s.axis = axis;
    s.h0 = sign > 0 ? h0 : h1;
    s.h1 = sign > 0 ? h1 : h0;
    s.block = 16;
    s.owner = sg_new_owner(c->w);
    int rc = sg_add_surf(c->w, &s, c->err);
    if (!rc) rc = cut(c, r, fmin(h0, h1) - 0.05, fmax(h0, h1) - 0.05, -1, s.owner, false);
    return rc;
}

static int p_ramp(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    sg_rect r;
    int axis, sign;
    double h0, h1, slope;
    int rc = get_rect(c, o, "rect", T, &r);
    if (!rc) rc = get_dir(c, o, "dir", T, &axis, &sign);
    if (!rc) rc = num(c, o, "h0", 0, false, &h0);
    if (!rc) rc = num(c, o, "slope_deg", NAN, false, &slope);
    if (rc) return rc;
    double len = axis == 0 ? r.x1 - r.x0 : r.y1 - r.y0;
    if (!isnan(slope)) {
        if (slope <= -89 || slope >= 89) FAIL(c, "slope_deg must be in (-89, 89)");
        h1 = h0 + tan(slope * 3.14159265358979323846 / 180.0) * len;
    } else if ((rc = num(c, o, "h1", 0, true, &h1))) {
        return rc;
    }
    return ramp_surf(c, oi, r, axis, sign, h0 + T->dh, h1 + T->dh);
}

/* A flight of `steps` treads over r rising along (axis, sign): tread k (1..steps) at
 * h0 + k·riser, the riser in front of it a vertical walkable face; the first riser stands on
 * the flight's low edge, the last tread ends on its high edge. */
static int stairs(ctx *c, const obj_info *oi, sg_rect r, int axis, int sign, double h0,
                  double riser, int steps, int faces, bool body_cut, int *owner_out)
{
    /* faces < 0: automatic. A riser a character can step up (<= kStepUp) joins its treads with
     * a vertical walkable face, as a game's exporter stitches walkable steps; a taller riser
     * leaves the treads as separate pieces whose edges are boundary edges, so no sample between
     * the two tread heights can turn it into two walkable half-steps. */
    bool with_faces = faces < 0 ? fabs(riser) <= NM_kStepUp + 1e-9 : faces > 0;
    int owner = sg_new_owner(c->w);
    if (owner_out) *owner_out = owner;
    int g = group_for(c, NM_SG_WALK, oi->zone, oi->id, 0);
    if (g < 0) return g;
    double lo = axis == 0 ? r.x0 : r.y0, hi = axis == 0 ? r.x1 : r.y1, L = hi - lo;
    for (int k = 1; k <= steps; k++) {
        /* distance from the low edge: [L(k-1)/n, Lk/n] */
        double a = L * (k - 1) / steps, b = L * k / steps;
        double p0 = sign > 0 ? lo + a : hi - b, p1 = sign > 0 ? lo + b : hi - a;
        sg_rect t = axis == 0 ? sg_rect_norm(p0, r.y0, p1, r.y1) : sg_rect_norm(r.x0, p0, r.x1, p1);
        double h = h0 + k * riser;
        sg_surf s = {0};
        s.group = g;
        s.r = t;
        s.hk = SG_H_CONST;
        s.h0 = h;
        s.block = 16;
        s.owner = owner;
        int rc = sg_add_surf(c->w, &s, c->err);
        if (rc) return rc;
        double e = sign > 0 ? p0 : p1; /* riser line: the tread's low-side edge */
        if (!with_faces) continue;
        /* the upper tread lies left of the face (see vface): +x rises -> run towards -y */
        bool up = (sign > 0) == (riser > 0);
        if (axis == 0) rc = up ? vface(c, oi, e, r.y1, e, r.y0, h - riser, h, 0)
                               : vface(c, oi, e, r.y0, e, r.y1, h - riser, h, 0);
        else rc = up ? vface(c, oi, r.x0, e, r.x1, e, h - riser, h, 0)
                     : vface(c, oi, r.x1, e, r.x0, e, h - riser, h, 0);
        if (rc) return rc;
    }
    if (!body_cut) return NM_OK;
    double top = h0 + steps * riser;
    return cut(c, r, fmin(h0, top) - 0.05, fmax(h0, top) - 0.05, -1, owner, false);
}

static int p_stairs(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    sg_rect r;
    int axis, sign;
    double h0, riser, steps;
    int rc = get_rect(c, o, "rect", T, &r);
    if (!rc) rc = get_dir(c, o, "dir", T, &axis, &sign);
    if (!rc) rc = num(c, o, "h0", 0, false, &h0);
    if (!rc) rc = num(c, o, "riser", 0, true, &riser);
    if (!rc) rc = num(c, o, "steps", 0, true, &steps);
    if (rc) return rc;
    if (steps < 1 || steps > 1000 || riser == 0) FAIL(c, "steps 1..1000 and a non-zero riser");
    const cJSON *fc = cJSON_GetObjectItemCaseSensitive(o, "faces");
    int faces = fc ? (cJSON_IsTrue(fc) ? 1 : 0) : -1;
    return stairs(c, oi, r, axis, sign, h0 + T->dh, riser, (int)steps, faces, true, NULL);
}

/* A block (bump, step, pit) or facade: a top surface at h over r with vertical walkable sides
 * down (or up) to base; facades split the sides into strips so they rasterise as stacks. */
static int p_block(ctx *c, const cJSON *o, const xform *T, const obj_info *oi, double dstrip)
{
    sg_rect r;
    double base, h, strip;
    int rc = get_rect(c, o, "rect", T, &r);
    if (!rc) rc = num(c, o, "base", 0, false, &base);
    if (!rc) rc = num(c, o, "h", 0, true, &h);
    if (!rc) rc = num(c, o, "strip", dstrip, false, &strip);
    if (rc) return rc;
    base += T->dh, h += T->dh;
    int owner = sg_new_owner(c->w);
    if ((rc = flat(c, oi, r, h, owner, false, NM_SG_WALK, 0))) return rc;
    if ((rc = cut(c, r, fmin(base, h) - 0.05, fmax(base, h) + 0.05, -1, owner, false))) return rc;
    /* Sides are walkable faces for facades (strip > 0) and for blocks no higher than a step;
     * "faces": true/false overrides (see stairs for why tall risers stay open). */
    bool faces = flag(o, "faces", strip > 0 || fabs(h - base) <= NM_kStepUp + 1e-9);
    if (!faces) return NM_OK;
    const cJSON *sides = cJSON_GetObjectItemCaseSensitive(o, "sides");
    bool side[4] = {true, true, true, true}; /* -x +x -y +y in world */
    if (cJSON_IsArray(sides)) {
        side[0] = side[1] = side[2] = side[3] = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, sides)
        {
            const char *s = cJSON_IsString(e) ? e->valuestring : "";
            if (strlen(s) != 2 || (s[0] != '+' && s[0] != '-') || (s[1] != 'x' && s[1] != 'y'))
                FAIL(c, "\"sides\" entries must be \"+x\", \"-x\", \"+y\" or \"-y\"");
            double x = s[1] == 'x' ? (s[0] == '+' ? 1 : -1) : 0;
            double y = s[1] == 'y' ? (s[0] == '+' ? 1 : -1) : 0;
            rot(T->k, &x, &y);
            side[x < -0.5 ? 0 : x > 0.5 ? 1 : y < -0.5 ? 2 : 3] = true;
        }
    }
    /* each side runs along the rectangle counter-clockwise (inside on its left), reversed when
     * the top is the lower surface: the upper surface lies left of the face (see vface) */
    bool up = h > base;
    if (side[0] && (rc = up ? vface(c, oi, r.x0, r.y1, r.x0, r.y0, base, h, strip)
                            : vface(c, oi, r.x0, r.y0, r.x0, r.y1, base, h, strip))) return rc;
    if (side[1] && (rc = up ? vface(c, oi, r.x1, r.y0, r.x1, r.y1, base, h, strip)
                            : vface(c, oi, r.x1, r.y1, r.x1, r.y0, base, h, strip))) return rc;
    if (side[2] && (rc = up ? vface(c, oi, r.x0, r.y0, r.x1, r.y0, base, h, strip)
                            : vface(c, oi, r.x1, r.y0, r.x0, r.y0, base, h, strip))) return rc;
    if (side[3] && (rc = up ? vface(c, oi, r.x1, r.y1, r.x0, r.y1, base, h, strip)
                            : vface(c, oi, r.x0, r.y1, r.x1, r.y1, base, h, strip))) return rc;
    return NM_OK;
}

static int p_bridge(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    nm_sg_vec a, b;
    double width, h, thick, railing, pillars, psize, ramps, ground;
    int rc = get_point(c, o, "from", T, 0, &a);
    if (!rc) rc = get_point(c, o, "to", T, 0, &b);
    if (!rc) rc = num(c, o, "width", 4, false, &width);
    if (!rc) rc = num(c, o, "h", 0, true, &h);
    if (!rc) rc = num(c, o, "thickness", 0.5, false, &thick);
    if (!rc) rc = num(c, o, "railing", 0, false, &railing);
    if (!rc) rc = num(c, o, "pillars", 0, false, &pillars);
    if (!rc) rc = num(c, o, "pillar_size", 1, false, &psize);
    if (!rc) rc = num(c, o, "ramps", 0, false, &ramps);
    if (!rc) rc = num(c, o, "ground", 0, false, &ground);
    if (rc) return rc;
    h += T->dh, ground += T->dh;
    bool ax = fabs(a.y - b.y) < 1e-9, ay = fabs(a.x - b.x) < 1e-9;
    if (ax == ay) FAIL(c, "\"from\"/\"to\" must be distinct and axis-aligned");
    int axis = ax ? 0 : 1;
    double lo = axis == 0 ? fmin(a.x, b.x) : fmin(a.y, b.y);
    double hi = axis == 0 ? fmax(a.x, b.x) : fmax(a.y, b.y);
    double mid = axis == 0 ? a.y : a.x, w2 = width / 2;
#define ALONG(p0, p1, q0, q1) (axis == 0 ? sg_rect_norm(p0, q0, p1, q1) : sg_rect_norm(q0, p0, q1, p1))
    sg_rect deck = ALONG(lo, hi, mid - w2, mid + w2);
    int owner = sg_new_owner(c->w);
    if ((rc = flat(c, oi, deck, h, owner, false, NM_SG_WALK, 0))) return rc;
    if (thick > 0 && (rc = prop(c, oi, deck, h - thick, h))) return rc;
    if (railing > 0) {
        if ((rc = prop(c, oi, ALONG(lo, hi, mid - w2, mid - w2 + 0.1), h, h + railing))) return rc;
        if ((rc = prop(c, oi, ALONG(lo, hi, mid + w2 - 0.1, mid + w2), h, h + railing))) return rc;
    }
    if (pillars > 0) {
        for (double p = lo + pillars / 2; p < hi - 1e-9; p += pillars) {
            sg_rect pr = ALONG(p - psize / 2, p + psize / 2, mid - psize / 2, mid + psize / 2);
            if ((rc = solid(c, oi, pr, ground, h - thick, true))) return rc;
        }
    }
    if (ramps > 0) {
        if ((rc = ramp_surf(c, oi, ALONG(lo - ramps, lo, mid - w2, mid + w2), axis, 1, ground, h)))
            return rc;
        if ((rc = ramp_surf(c, oi, ALONG(hi, hi + ramps, mid - w2, mid + w2), axis, -1, ground, h)))
            return rc;
    }
#undef ALONG
    return NM_OK;
}

/* ---- building ---------------------------------------------------------------------------- */

typedef struct {
    double a, b;
} ival;

/* Subtracts holes from [lo, hi] along a wall side and emits the remaining wall pieces. */
static int wall_side(ctx *c, const obj_info *oi, int axis, double lo, double hi, double q0,
                     double q1, const ival *holes, int nh, double base, double top)
{
    double s = lo;
    for (;;) {
        double e = hi, nexts = hi;
        for (int i = 0; i < nh; i++)
            if (holes[i].b > s && holes[i].a < e) {
                e = fmax(s, holes[i].a);
                nexts = holes[i].b;
            }
        if (e > s + 1e-6) {
            sg_rect r = axis == 0 ? sg_rect_norm(s, q0, e, q1) : sg_rect_norm(q0, s, q1, e);
            int rc = solid(c, oi, r, base, top, true);
            if (rc) return rc;
        }
        if (e >= hi - 1e-9) return NM_OK;
        s = fmax(nexts, e);
        if (s >= hi - 1e-9) return NM_OK;
    }
}

/* Props under a floor: the interior minus the stairwell opening (up to four rectangles). */
static int slab_around(ctx *c, const obj_info *oi, sg_rect in, const sg_rect *hole, double h)
{
    if (!hole) return prop(c, oi, in, h - 0.3, h);
    sg_rect hs = {fmax(hole->x0, in.x0), fmax(hole->y0, in.y0), fmin(hole->x1, in.x1),
                  fmin(hole->y1, in.y1)};
    sg_rect parts[4] = {{in.x0, in.y0, in.x1, hs.y0},
                        {in.x0, hs.y1, in.x1, in.y1},
                        {in.x0, hs.y0, hs.x0, hs.y1},
                        {hs.x1, hs.y0, in.x1, hs.y1}};
    for (int i = 0; i < 4; i++) {
        int rc = prop(c, oi, parts[i], h - 0.3, h);
        if (rc) return rc;
    }
    return NM_OK;
}

enum { MAXDOORS = 32 };

static int side_index(const char *s, const xform *T)
{
    if (!s || strlen(s) != 2 || (s[0] != '+' && s[0] != '-') || (s[1] != 'x' && s[1] != 'y'))
        return -1;
    double x = s[1] == 'x' ? (s[0] == '+' ? 1 : -1) : 0;
    double y = s[1] == 'y' ? (s[0] == '+' ? 1 : -1) : 0;
    rot(T->k, &x, &y);
    return x < -0.5 ? 0 : x > 0.5 ? 1 : y < -0.5 ? 2 : 3; /* -x +x -y +y */
}

typedef ival side_holes[4][MAXDOORS];

/* Openings, walls, floors and stairs of a building (p_building has read its frame). */
static int building_body(ctx *c, const cJSON *o, const xform *T, const obj_info *oi, sg_rect R,
                         sg_rect I, int n, double s, double t, double base, bool has_sw,
                         sg_rect W, int waxis, int wsign, double riser, side_holes *holes,
                         int nholes[64][4])
{
    int rc;
    bool roof = flag(o, "roof", true), roof_access = flag(o, "roof_access", false);
    const cJSON *doors = cJSON_GetObjectItemCaseSensitive(o, "doors");
    const cJSON *balc = cJSON_GetObjectItemCaseSensitive(o, "balconies");
    const cJSON *lists[2] = {doors, balc};
    for (int li = 0; li < 2; li++) {
        const cJSON *d;
        cJSON_ArrayForEach(d, lists[li])
        {
            double st, at, width;
            if ((rc = num(c, d, "storey", 0, false, &st))) return rc;
            if ((rc = num(c, d, "at", 0, true, &at))) return rc;
            if ((rc = num(c, d, "width", 3, false, &width))) return rc;
            int side = side_index(str(d, "side"), T);
            if (side < 0) FAIL(c, "door/balcony \"side\" must be +x, -x, +y or -y");
            int k = (int)st;
            if (k < 0 || k >= n || k >= 64) FAIL(c, "door/balcony storey %d out of range", k);
            if (li == 1 && k == 0) FAIL(c, "balconies start at storey 1");
            if (nholes[k][side] >= MAXDOORS) FAIL(c, "too many openings");
            /* Offsets run from the side's world-minimum end. */
            double lo = side < 2 ? R.y0 : R.x0;
            double a = lo + at, b = lo + at + width;
            if (li == 1) a += 0.5, b -= 0.5; /* the balcony door is a little narrower */
            holes[k][side][nholes[k][side]++] = (ival){a, b};
            int owner = sg_new_owner(c->w);
            double h = base + k * s;
            sg_rect th = side == 0   ? sg_rect_norm(R.x0, a, R.x0 + t, b)
                         : side == 1 ? sg_rect_norm(R.x1 - t, a, R.x1, b)
                         : side == 2 ? sg_rect_norm(a, R.y0, b, R.y0 + t)
                                     : sg_rect_norm(a, R.y1 - t, b, R.y1);
            if ((rc = flat(c, oi, th, h, owner, false, NM_SG_WALK, 0))) return rc;
            if ((rc = replace_floor(c, th, h, owner))) return rc;
            if (li == 1) {
                double depth, rail;
                if ((rc = num(c, d, "depth", 2.5, false, &depth))) return rc;
                if ((rc = num(c, d, "railing", 1.1, false, &rail))) return rc;
                double A = lo + at, Bn = lo + at + width;
                sg_rect br = side == 0   ? sg_rect_norm(R.x0 - depth, A, R.x0, Bn)
                             : side == 1 ? sg_rect_norm(R.x1, A, R.x1 + depth, Bn)
                             : side == 2 ? sg_rect_norm(A, R.y0 - depth, Bn, R.y0)
                                         : sg_rect_norm(A, R.y1, Bn, R.y1 + depth);
                int bo = sg_new_owner(c->w);
                if ((rc = flat(c, oi, br, h, bo, false, NM_SG_WALK, 0))) return rc;
                if ((rc = prop(c, oi, br, h - 0.3, h))) return rc;
                if (rail > 0) {
                    double e = 0.1;
                    sg_rect rl[3];
                    if (side == 0 || side == 1) {
                        double outer = side == 0 ? br.x0 : br.x1 - e;
                        rl[0] = sg_rect_norm(outer, br.y0, outer + e, br.y1);
                        rl[1] = sg_rect_norm(br.x0, br.y0, br.x1, br.y0 + e);
                        rl[2] = sg_rect_norm(br.x0, br.y1 - e, br.x1, br.y1);
                    } else {
                        double outer = side == 2 ? br.y0 : br.y1 - e;
                        rl[0] = sg_rect_norm(br.x0, outer, br.x1, outer + e);
                        rl[1] = sg_rect_norm(br.x0, br.y0, br.x0 + e, br.y1);
                        rl[2] = sg_rect_norm(br.x1 - e, br.y0, br.x1, br.y1);
                    }
                    for (int i = 0; i < 3; i++)
                        if ((rc = prop(c, oi, rl[i], h, h + rail))) return rc;
                }
            }
        }
    }

    /* Walls, storey by storey; -x/+x sides run along y between the -y/+y sides. */
    for (int k = 0; k < n; k++) {
        double b0 = base + k * s, b1 = b0 + s;
        int lim = k < 64 ? k : 63;
        if ((rc = wall_side(c, oi, 1, R.y0 + t, R.y1 - t, R.x0, R.x0 + t, holes[lim][0],
                            nholes[lim][0], b0, b1)))
            return rc;
        if ((rc = wall_side(c, oi, 1, R.y0 + t, R.y1 - t, R.x1 - t, R.x1, holes[lim][1],
                            nholes[lim][1], b0, b1)))
            return rc;
        if ((rc = wall_side(c, oi, 0, R.x0, R.x1, R.y0, R.y0 + t, holes[lim][2], nholes[lim][2],
                            b0, b1)))
            return rc;
        if ((rc = wall_side(c, oi, 0, R.x0, R.x1, R.y1 - t, R.y1, holes[lim][3], nholes[lim][3],
                            b0, b1)))
            return rc;
    }

    /* Floors: the ground floor replaces whatever ground lies inside; upper floors have the
     * stairwell opening; the roof covers the whole footprint. */
    for (int k = 0; k <= n; k++) {
        if (k == n && !roof) break;
        double h = base + k * s;
        sg_rect fr = k == n ? R : I;
        int owner = sg_new_owner(c->w);
        if ((rc = flat(c, oi, fr, h, owner, false, NM_SG_WALK, 0))) return rc;
        if (k == 0 && (rc = replace_floor(c, fr, h, owner))) return rc;
        /* Stacked flights do not cut (each would cut the one below); the floors they pass
         * through have the stairwell opening instead, the ground floor included. */
        bool opening = has_sw && (k < n || roof_access);
        if (opening && (rc = cut(c, W, -1e30, 1e30, owner, -1, false))) return rc;
        if (k > 0 && (rc = slab_around(c, oi, fr, opening ? &W : NULL, h))) return rc;
    }
    if (has_sw) {
        int flights = roof && roof_access ? n : n - 1;
        int steps = (int)lround(s / riser);
        if (steps < 1) steps = 1;
        for (int k = 0; k < flights; k++)
            if ((rc = stairs(c, oi, W, waxis, wsign, base + k * s, s / steps, steps, -1, false, NULL)))
                return rc;
    }
    return NM_OK;
}


static int p_building(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    sg_rect R;
    double n_, s, t, base, riser = 0.25;
    int rc = get_rect(c, o, "rect", T, &R);
    if (!rc) rc = num(c, o, "storeys", 3, false, &n_);
    if (!rc) rc = num(c, o, "storey_h", 4, false, &s);
    if (!rc) rc = num(c, o, "wall", 0.4, false, &t);
    if (!rc) rc = num(c, o, "base", 0, false, &base);
    if (rc) return rc;
    int n = (int)n_;
    if (n < 1 || n > 50 || s < 2.5 || t <= 0) FAIL(c, "storeys 1..50, storey_h >= 2.5, wall > 0");
    base += T->dh;
    sg_rect I = {R.x0 + t, R.y0 + t, R.x1 - t, R.y1 - t};
    if (I.x1 - I.x0 < 2 || I.y1 - I.y0 < 2) FAIL(c, "building too small for its walls");
    /* Stairwell. */
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(o, "stairwell");
    sg_rect W = {0};
    int waxis = 0, wsign = 1;
    bool has_sw = cJSON_IsObject(sw);
    if (has_sw) {
        if ((rc = get_rect(c, sw, "rect", T, &W))) return rc;
        if ((rc = get_dir(c, sw, "dir", T, &waxis, &wsign))) return rc;
        /* Stacked flights make every stairwell column a facade (>= 3 spans over > 3 m), where
         * RiseOk allows only the slope rule (0.25 m per orthogonal cell): hence 0.25 m risers. */
        if ((rc = num(c, sw, "riser", 0.25, false, &riser))) return rc;
        if (riser <= 0) FAIL(c, "stairwell riser must be positive");
        if (W.x0 < I.x0 || W.y0 < I.y0 || W.x1 > I.x1 || W.y1 > I.y1)
            FAIL(c, "stairwell must lie inside the building's interior");
    }

    /* Openings per storey and side: doors and balcony doors. */
    side_holes *holes = nm_calloc(64, sizeof *holes);
    if (!holes) return nm_fail(c->err, NM_ERR_NOMEM, "scenegen: out of memory");
    int nholes[64][4];
    memset(nholes, 0, sizeof nholes);
    rc = building_body(c, o, T, oi, R, I, n, s, t, base, has_sw, W, waxis, wsign, riser, holes, nholes);
    nm_free(holes);
    return rc;
}
static int p_water(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    sg_rect r;
    double level, area;
    int rc = get_rect(c, o, "rect", T, &r);
    if (!rc) rc = num(c, o, "level", -0.5, false, &level);
    if (!rc) rc = num(c, o, "area", 12, false, &area);
    if (rc) return rc;
    if (area < 1 || area > 31) FAIL(c, "water area id must be 1..31");
    level += T->dh;
    int owner = sg_new_owner(c->w);
    if ((rc = flat(c, oi, r, level, owner, false, NM_SG_WATER, (int)area))) return rc;
    /* Water replaces terrain (not decks or platforms) from 2 m below to 2 m above its level. */
    return cut(c, r, level - 2, level + 2, -1, owner, true);
}

/* Cell-aligned cut over cells [cx, cx+wc) × [cy, cy+hc) of the zone's 0.25 px lattice.
 * Along each axis the cut is either "whole" (widened by 1 % of a cell, so exactly those cells
 * see no walkable triangle: holes) or "centres" (from 5 % of a cell before the first cell's
 * centre to 5 % after the last one's: exactly those cell centres fall in the gap while the end
 * cells still touch the triangles on either side — a crack in the sense of CloseCracks). */
static int cell_cut(ctx *c, const obj_info *oi, nm_sg_vec at, int wc, int hc, bool centres_x,
                    bool centres_y, double lo, double hi)
{
    const nm_sg_zone *z = &c->w->zones[oi->zone];
    double sx = z->tf[0], tx = z->tf[1], sy = z->tf[2], ty = z->tf[3];
    if (sx <= 0 || sy <= 0) FAIL(c, "cell-aligned cuts need a zone transform with sx, sy > 0");
    double cs = NM_kCS, d = 0.01 * cs, e = 0.05 * cs;
    long cx = (long)floor((sx * at.x + tx) / cs), cy = (long)floor((ty + sy * at.y) / cs);
    double u0 = centres_x ? (cx + 0.5) * cs - e : cx * cs - d;
    double u1 = centres_x ? (cx + wc - 0.5) * cs + e : (cx + wc) * cs + d;
    double v0 = centres_y ? (cy + 0.5) * cs - e : cy * cs - d;
    double v1 = centres_y ? (cy + hc - 0.5) * cs + e : (cy + hc) * cs + d;
    sg_rect r = {(u0 - tx) / sx, (v0 - ty) / sy, (u1 - tx) / sx, (v1 - ty) / sy};
    return cut(c, r, lo, hi, -1, -1, false);
}

static int p_cut(ctx *c, const cJSON *o, const xform *T, const obj_info *oi, const char *type)
{
    double lo = -1e30, hi = 1e30;
    int rc = num(c, o, "lo", -1e30, false, &lo);
    if (!rc) rc = num(c, o, "hi", 1e30, false, &hi);
    if (rc) return rc;
    if (lo > -1e29) lo += T->dh;
    if (hi < 1e29) hi += T->dh;
    if (strcmp(type, "gap") == 0) {
        sg_rect r;
        if ((rc = get_rect(c, o, "rect", T, &r))) return rc;
        return cut(c, r, lo, hi, -1, -1, false);
    }
    nm_sg_vec at;
    if ((rc = get_point(c, o, "at", T, 0, &at))) return rc;
    int wc, hc;
    bool cenx = false, ceny = false;
    if (strcmp(type, "crack") == 0) {
        double cells, len;
        int axis, sign;
        if ((rc = num(c, o, "cells", 0, true, &cells))) return rc;
        if ((rc = num(c, o, "length_cells", 8, false, &len))) return rc;
        if ((rc = get_dir(c, o, "dir", T, &axis, &sign))) return rc;
        if (cells < 1 || len < 1 || cells > 1e5 || len > 1e6) FAIL(c, "cells and length_cells >= 1");
        /* A crack running along x is `cells` cell centres wide in y. */
        wc = axis == 0 ? (int)len : (int)cells;
        hc = axis == 0 ? (int)cells : (int)len;
        cenx = axis == 1, ceny = axis == 0;
    } else {
        double a[2];
        if ((rc = nums(c, o, "cells", 2, 2, a, NULL))) return rc;
        if (a[0] < 1 || a[1] < 1 || a[0] > 1e5 || a[1] > 1e5) FAIL(c, "hole cells must be >= 1");
        double x = a[0], y = a[1];
        if (T->k & 1) { /* a quarter turn swaps the sides */
            double t = x;
            x = y;
            y = t;
        }
        wc = (int)x, hc = (int)y;
    }
    return cell_cut(c, oi, at, wc, hc, cenx, ceny, lo, hi);
}

static int p_link(ctx *c, const cJSON *o, const xform *T, const obj_info *oi)
{
    nm_sg_link l;
    memset(&l, 0, sizeof l);
    double area, type;
    int rc = get_point(c, o, "from", T, 0, &l.a);
    if (!rc) rc = get_point(c, o, "to", T, 0, &l.b);
    if (!rc) rc = num(c, o, "radius", 0.6, false, &l.radius);
    if (!rc) rc = num(c, o, "cost", 1.0, false, &l.cost);
    if (!rc) rc = num(c, o, "area", 0, false, &area);
    if (!rc) rc = num(c, o, "link_type", 0, false, &type);
    if (rc) return rc;
    l.bidir = flag(o, "bidirectional", false);
    l.area = (int)area;
    l.type = (int)type;
    l.zone = oi->zone;
    snprintf(l.id, sizeof l.id, "%.63s", oi->id ? oi->id : "");
    return sg_add_link(c->w, &l, c->err);
}

/* ---- objects ----------------------------------------------------------------------------- */

static int objects(ctx *c, const cJSON *arr, const xform *T, const char *id_suffix, int depth,
                   int zone);

static int zone_of(ctx *c, const cJSON *o, int def, int *zone)
{
    const char *z = str(o, "zone");
    *zone = def;
    if (!z) return NM_OK;
    for (size_t i = 0; i < c->w->nz; i++)
        if (strcmp(c->w->zones[i].name, z) == 0) {
            *zone = (int)i;
            return NM_OK;
        }
    FAIL(c, "unknown zone \"%s\"", z);
}

static int xform_of(ctx *c, const cJSON *o, xform *L)
{
    double off[3] = {0, 0, 0}, deg;
    int rc = NM_OK;
    if (cJSON_GetObjectItemCaseSensitive(o, "offset")) rc = nums(c, o, "offset", 2, 3, off, NULL);
    if (!rc) rc = num(c, o, "rotate", 0, false, &deg);
    if (rc) return rc;
    long q = lround(deg / 90.0);
    if (fabs(deg - 90.0 * q) > 1e-9) FAIL(c, "\"rotate\" must be a multiple of 90");
    *L = (xform){(int)(((q % 4) + 4) % 4), off[0], off[1], off[2]};
    return NM_OK;
}

static int object(ctx *c, const cJSON *o, const xform *T, const char *id_suffix, int depth,
                  int zone)
{
    if (!cJSON_IsObject(o)) FAIL(c, "must be an object");
    const char *type = str(o, "type");
    if (!type) FAIL(c, "missing \"type\"");
    obj_info oi;
    int rc = zone_of(c, o, zone, &oi.zone);
    if (rc) return rc;
    char idbuf[128];
    const char *id = str(o, "id");
    if (id) {
        for (const char *p = id; *p; p++)
            if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= 'A' && *p <= 'Z')))
                FAIL(c, "\"id\" may hold letters, digits, '_' and '-' only");
        snprintf(idbuf, sizeof idbuf, "%s%s", id, id_suffix ? id_suffix : "");
        id = idbuf;
    }
    oi.id = id;
    if (strcmp(type, "group") == 0 || strcmp(type, "repeat") == 0) {
        if (depth > 16) FAIL(c, "groups nested too deeply");
        xform L = {0, 0, 0, 0};
        if ((rc = xform_of(c, o, &L))) return rc;
        xform G = compose(T, &L);
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(o, "objects");
        if (!cJSON_IsArray(sub)) FAIL(c, "\"objects\" must be an array");
        if (strcmp(type, "group") == 0) return objects(c, sub, &G, id_suffix, depth + 1, oi.zone);
        double cnt[2], step[2], rstep;
        if ((rc = nums(c, o, "count", 2, 2, cnt, NULL))) return rc;
        if ((rc = nums(c, o, "step", 2, 2, step, NULL))) return rc;
        if ((rc = num(c, o, "rotate_step", 0, false, &rstep))) return rc;
        if (cnt[0] < 1 || cnt[1] < 1 || cnt[0] * cnt[1] > 100000) FAIL(c, "bad \"count\"");
        long rq = lround(rstep / 90.0);
        for (int j = 0; j < (int)cnt[1]; j++)
            for (int i = 0; i < (int)cnt[0]; i++) {
                long idx = (long)j * (long)cnt[0] + i;
                /* instance: rotate about its own origin, then move by (i, j) steps */
                xform inst = {(int)(((rq * idx) % 4 + 4) % 4), i * step[0], j * step[1], 0};
                xform R = compose(&G, &inst);
                char suf[64];
                snprintf(suf, sizeof suf, "%s_%d_%d", id_suffix ? id_suffix : "", i, j);
                rc = objects(c, sub, &R, suf, depth + 1, oi.zone);
                if (rc) return rc;
            }
        return NM_OK;
    }
    if (strcmp(type, "terrain") == 0) return p_terrain(c, o, T, &oi, true);
    if (strcmp(type, "floor") == 0) return p_terrain(c, o, T, &oi, false);
    if (strcmp(type, "box") == 0) return p_box(c, o, T, &oi, false);
    if (strcmp(type, "platform") == 0) return p_box(c, o, T, &oi, true);
    if (strcmp(type, "wall") == 0) return p_wall(c, o, T, &oi, 0.5, 3.0, NM_SG_SOLID);
    if (strcmp(type, "fence") == 0) return p_wall(c, o, T, &oi, 0.2, 1.5, NM_SG_SOLID);
    if (strcmp(type, "railing") == 0) return p_wall(c, o, T, &oi, 0.1, 1.1, NM_SG_PROP);
    if (strcmp(type, "lip") == 0) return p_wall(c, o, T, &oi, 0.3, 0.25, NM_SG_PROP);
    if (strcmp(type, "sawwall") == 0) return p_sawwall(c, o, T, &oi);
    if (strcmp(type, "slab") == 0) return p_slab(c, o, T, &oi);
    if (strcmp(type, "ramp") == 0) return p_ramp(c, o, T, &oi);
    if (strcmp(type, "stairs") == 0) return p_stairs(c, o, T, &oi);
    if (strcmp(type, "block") == 0) return p_block(c, o, T, &oi, 0);
    if (strcmp(type, "facade") == 0) return p_block(c, o, T, &oi, 0.5);
    if (strcmp(type, "bridge") == 0) return p_bridge(c, o, T, &oi);
    if (strcmp(type, "building") == 0) return p_building(c, o, T, &oi);
    if (strcmp(type, "water") == 0) return p_water(c, o, T, &oi);
    if (strcmp(type, "gap") == 0 || strcmp(type, "crack") == 0 || strcmp(type, "hole") == 0)
        return p_cut(c, o, T, &oi, type);
    if (strcmp(type, "link") == 0) return p_link(c, o, T, &oi);
    FAIL(c, "unknown type \"%s\"", type);
}

static int objects(ctx *c, const cJSON *arr, const xform *T, const char *id_suffix, int depth,
                   int zone)
{
    size_t plen = strlen(c->path);
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        const char *id = cJSON_IsObject(o) ? str(o, "id") : NULL;
        if (id)
            snprintf(c->path + plen, sizeof c->path - plen, "%sobjects[%d] (\"%.40s\")",
                     plen ? "." : "", i, id);
        else
            snprintf(c->path + plen, sizeof c->path - plen, "%sobjects[%d]", plen ? "." : "", i);
        int rc = object(c, o, T, id_suffix, depth, zone);
        if (rc) return rc;
        c->path[plen] = 0;
        i++;
    }
    return NM_OK;
}

static int zones(ctx *c, const cJSON *root)
{
    nm_sg_world *w = c->w;
    const cJSON *zs = cJSON_GetObjectItemCaseSensitive(root, "zones");
    int n = cJSON_IsArray(zs) ? cJSON_GetArraySize(zs) : 0;
    if (zs && !cJSON_IsArray(zs)) FAIL(c, "\"zones\" must be an array");
    w->zones = nm_calloc(n ? (size_t)n : 1, sizeof *w->zones);
    if (!w->zones) return nm_fail(c->err, NM_ERR_NOMEM, "scenegen: out of memory");
    if (n == 0) {
        w->nz = 1;
        snprintf(w->zones[0].name, sizeof w->zones[0].name, "%s", w->name);
        double d[4] = {0.75, 0, 0.75, 0};
        memcpy(w->zones[0].tf, d, sizeof d);
        return NM_OK;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *z = cJSON_GetArrayItem(zs, i);
        nm_sg_zone *zn = &w->zones[i];
        w->nz = (size_t)i + 1;
        snprintf(c->path, sizeof c->path, "zones[%d]", i);
        const char *name = str(z, "name");
        if (!name || !*name || strlen(name) >= sizeof zn->name) FAIL(c, "needs a \"name\" (< 64)");
        for (int j = 0; j < i; j++)
            if (strcmp(w->zones[j].name, name) == 0) FAIL(c, "duplicate zone name \"%s\"", name);
        snprintf(zn->name, sizeof zn->name, "%s", name);
        double d[4] = {0.75, 0, 0.75, 0};
        int rc = NM_OK;
        if (cJSON_GetObjectItemCaseSensitive(z, "transform"))
            rc = nums(c, z, "transform", 4, 4, d, NULL);
        if (rc) return rc;
        memcpy(zn->tf, d, sizeof d);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(z, "id");
        if (cJSON_IsNumber(id)) zn->has_id = true, zn->id = id->valueint;
        const cJSON *fy = cJSON_GetObjectItemCaseSensitive(z, "floor_y");
        if (cJSON_IsNumber(fy)) zn->has_floor = true, zn->floor_y = fy->valuedouble;
        const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(z, "tiers");
        if (tiers) {
            if (!cJSON_IsArray(tiers)) FAIL(c, "\"tiers\" must be an array");
            zn->tiers = cJSON_Duplicate(tiers, 1);
            if (!zn->tiers) return nm_fail(c->err, NM_ERR_NOMEM, "scenegen: out of memory");
        }
    }
    c->path[0] = 0;
    return NM_OK;
}

int nm_sg_world_from_json(const char *text, const char *label, nm_sg_world **out, nm_error *err)
{
    *out = NULL;
    if (!label) label = "scene.json";
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        const char *e = cJSON_GetErrorPtr();
        return nm_fail(err, NM_ERR_ARG, "%s: not valid JSON near \"%.30s\"", label, e ? e : "");
    }
    nm_sg_world *w = nm_sg_world_new();
    if (!w || !(w->build = nm_calloc(1, sizeof *w->build))) {
        cJSON_Delete(root);
        nm_sg_world_free(w);
        return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    }
    ctx c = {w, label, err, ""};
    int rc = NM_OK;
    const char *name = str(root, "name");
    if (!cJSON_IsObject(root)) rc = nm_fail(err, NM_ERR_ARG, "%s: must be a JSON object", label);
    else if (!name || !*name || strlen(name) >= sizeof w->name)
        rc = nm_fail(err, NM_ERR_ARG, "%s: needs a \"name\" (< 64 characters)", label);
    if (!rc) {
        snprintf(w->name, sizeof w->name, "%s", name);
        rc = zones(&c, root);
    }
    const cJSON *agent = cJSON_GetObjectItemCaseSensitive(root, "agent");
    if (!rc && agent) {
        if (!cJSON_IsObject(agent)) rc = nm_fail(err, NM_ERR_ARG, "%s: \"agent\" must be an object", label);
        else if (!(w->agent = cJSON_Duplicate(agent, 1)))
            rc = nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    }
    const cJSON *objs = cJSON_GetObjectItemCaseSensitive(root, "objects");
    if (!rc && !cJSON_IsArray(objs))
        rc = nm_fail(err, NM_ERR_ARG, "%s: needs an \"objects\" array", label);
    if (!rc) {
        xform I = {0, 0, 0, 0};
        c.path[0] = 0;
        rc = objects(&c, objs, &I, NULL, 0, 0);
    }
    cJSON_Delete(root);
    if (!rc) {
        rc = sg_build_finish(w, err);
        if (rc) nm_error_prefix(err, "%s", label);
    }
    if (rc) {
        sg_build_free(w->build);
        w->build = NULL;
        nm_sg_world_free(w);
        return rc;
    }
    *out = w;
    return NM_OK;
}
