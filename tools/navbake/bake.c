/* bake.c — the main-pack bake as a list of stages (kStages below): sort OBJ groups into zones and
 * roles, build each zone's walkable mesh (Recast or the OBJ as is), move it to pixels and weld it,
 * find neighbours and raw components, then assemble the pack: zone table with tier zones, links,
 * BSRF and BOML v2. Later outputs (grid, fields, occluder) add stages to the list.
 *
 * Everything is deterministic: zones are built independently (one chunk each) and every order is
 * fixed by triangle order, never by which worker ran what. */
#include "bake.h"

#include "recast_shim.h"
#include "grid_stage.h"
#include "sliver.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { ROLE_WALK = 0, ROLE_COLLISION = 1, ROLE_OBSTACLE = 2 };

/* One zone's walkable mesh as it moves through the stages. */
typedef struct zone_mesh {
    float *v;          /* world x, y, z (walkable stage), then u, v, h (weld stage) */
    uint32_t nv;
    uint32_t *t;       /* 3 per triangle, zone-local vertex ids */
    uint8_t *area;
    uint32_t nt;
    int32_t *nb;       /* 3 per triangle, zone-local triangle ids, -1 = none */
    uint32_t *comp;    /* raw component per triangle, numbered in order of first triangle */
    uint32_t ncomp;
    nm_error err;      /* per-zone error (zones run in parallel) */
} zone_mesh;

typedef struct bake_ctx {
    const nm_bake_opts *o;
    const nm_bake_config *cfg;
    const nm_obj *obj;
    float scale;
    int workers;
    uint8_t *group_role;   /* per OBJ group */
    uint8_t *group_area;
    bool *in_zone;         /* zone_count x group_count */
    zone_mesh *zm;
    nm_pack *pack;
} bake_ctx;

static void progress(bake_ctx *b, const char *stage, double frac)
{
    if (b->o->progress) b->o->progress(b->o->progress_ctx, stage, frac);
}

/* ---- stage: groups ----------------------------------------------------------------------------
 * Each OBJ group gets a role (collision_only beats obstacle beats walkable), an area (first
 * matching pattern of "areas", else 0) and the zones that take it: the zones whose patterns match
 * it, or, when no explicit pattern matches, every zone without a "groups" key. */
static bool match_any(char **pats, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (nm_bake_pattern_match(pats[i], name)) return true;
    return false;
}

static int stage_groups(bake_ctx *b, nm_error *err)
{
    const nm_obj *obj = b->obj;
    const nm_bake_config *c = b->cfg;
    uint32_t g = obj->group_count;
    b->group_role = nm_calloc(g ? g : 1, 1);
    b->group_area = nm_calloc(g ? g : 1, 1);
    b->in_zone = nm_calloc((size_t)c->zone_count * (g ? g : 1), sizeof(bool));
    if (!b->group_role || !b->group_area || !b->in_zone) return nm_fail(err, NM_ERR_NOMEM, "groups: out of memory");
    for (uint32_t i = 0; i < g; i++) {
        const char *name = obj->groups[i];
        b->group_role[i] = match_any(c->collision_only, c->collision_count, name) ? ROLE_COLLISION
                           : match_any(c->obstacles, c->obstacle_count, name)   ? ROLE_OBSTACLE
                                                                                 : ROLE_WALK;
        for (uint32_t a = 0; a < c->area_count; a++)
            if (nm_bake_pattern_match(c->areas[a].pattern, name)) {
                b->group_area[i] = c->areas[a].area;
                break;
            }
        bool claimed = false;
        for (uint32_t z = 0; z < c->zone_count; z++)
            if (c->zones[z].groups_given && match_any(c->zones[z].groups, c->zones[z].group_count, name)) {
                b->in_zone[(size_t)z * g + i] = true;
                claimed = true;
            }
        if (!claimed)
            for (uint32_t z = 0; z < c->zone_count; z++)
                if (!c->zones[z].groups_given) b->in_zone[(size_t)z * g + i] = true;
    }
    return NM_OK;
}

/* ---- stage: walkable mesh ---------------------------------------------------------------------
 * Per zone, in world metres. Recast: the zone's groups except collision_only ones, obstacles as
 * solids. As is: the triangles of the zone's walkable groups, corners copied (the weld joins them). */
static int walkable_as_is(bake_ctx *b, uint32_t zi, zone_mesh *m)
{
    const nm_obj *obj = b->obj;
    uint32_t g = obj->group_count;
    uint32_t n = 0;
    for (uint32_t t = 0; t < obj->tri_count; t++) {
        uint32_t gr = obj->tri_group[t];
        n += b->in_zone[(size_t)zi * g + gr] && b->group_role[gr] == ROLE_WALK;
    }
    m->v = nm_malloc(sizeof(float) * 9 * (size_t)(n ? n : 1));
    m->t = nm_malloc(sizeof(uint32_t) * 3 * (size_t)(n ? n : 1));
    m->area = nm_malloc(n ? n : 1);
    if (!m->v || !m->t || !m->area) return nm_fail(&m->err, NM_ERR_NOMEM, "out of memory");
    uint32_t k = 0;
    for (uint32_t t = 0; t < obj->tri_count; t++) {
        uint32_t gr = obj->tri_group[t];
        if (!(b->in_zone[(size_t)zi * g + gr] && b->group_role[gr] == ROLE_WALK)) continue;
        for (int c = 0; c < 3; c++) {
            const float *p = obj->pos + 3 * (size_t)obj->tris[3 * (size_t)t + c];
            for (int a = 0; a < 3; a++) m->v[9 * (size_t)k + 3 * c + a] = p[a] * b->scale;
            m->t[3 * (size_t)k + c] = 3 * k + (uint32_t)c;
        }
        m->area[k++] = b->group_area[gr];
    }
    m->nv = 3 * k;
    m->nt = k;
    return NM_OK;
}

static int walkable_recast(bake_ctx *b, uint32_t zi, zone_mesh *m)
{
    const nm_obj *obj = b->obj;
    uint32_t g = obj->group_count;
    uint32_t n = 0;
    for (uint32_t t = 0; t < obj->tri_count; t++) {
        uint32_t gr = obj->tri_group[t];
        n += b->in_zone[(size_t)zi * g + gr] && b->group_role[gr] != ROLE_COLLISION;
    }
    if (n == 0) return NM_OK;
    float *pos = nm_malloc(sizeof(float) * 3 * (size_t)(obj->vert_count ? obj->vert_count : 1));
    uint32_t *tris = nm_malloc(sizeof(uint32_t) * 3 * (size_t)n);
    uint8_t *areas = nm_malloc(n);
    int rc = NM_OK;
    if (!pos || !tris || !areas) {
        rc = nm_fail(&m->err, NM_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < 3 * (size_t)obj->vert_count; i++) pos[i] = obj->pos[i] * b->scale;
    uint32_t k = 0;
    for (uint32_t t = 0; t < obj->tri_count; t++) {
        uint32_t gr = obj->tri_group[t];
        if (!b->in_zone[(size_t)zi * g + gr] || b->group_role[gr] == ROLE_COLLISION) continue;
        memcpy(tris + 3 * (size_t)k, obj->tris + 3 * (size_t)t, 3 * sizeof(uint32_t));
        areas[k++] = b->group_role[gr] == ROLE_OBSTACLE ? NM_RC_OBSTACLE : b->group_area[gr];
    }
    const nm_bake_agent *a = &b->cfg->agent;
    nm_rc_params p = {.agent_height = a->height, .agent_radius = a->radius, .agent_climb = a->climb,
                      .slope_deg = a->slope_deg};
    nm_rc_input in = {pos, obj->vert_count, tris, areas, n};
    nm_rc_mesh out;
    char msg[256] = "";
    rc = nm_rc_build(&in, &p, &out, msg, sizeof msg);
    if (rc) {
        nm_fail(&m->err, rc, "%s", msg);
        goto done;
    }
    m->v = out.verts;
    m->nv = out.vert_count;
    m->t = out.tris;
    m->area = out.areas;
    m->nt = out.tri_count;
    /* Recast's detail mesh has slivers and thin triangles on steep slopes, which Rasterize's
     * clamped samples turn into spans far under the slope (sliver.h): split them on the zone's
     * cells. */
    const float *t4 = b->cfg->zones[zi].t;
    const nm_sliver_grid grid = {t4[0], t4[1], t4[2], t4[3]};
    int changed;
    rc = nm_bake_split_slivers(&m->v, &m->nv, &m->t, &m->area, &m->nt, &grid, &changed);
    if (rc) nm_fail(&m->err, rc, "sliver split: out of memory");
done:
    nm_free(pos);
    nm_free(tris);
    nm_free(areas);
    return rc;
}

static int walkable_chunk(void *ctx, size_t zi)
{
    bake_ctx *b = ctx;
    zone_mesh *m = &b->zm[zi];
    return b->o->walkable_as_is ? walkable_as_is(b, (uint32_t)zi, m) : walkable_recast(b, (uint32_t)zi, m);
}

static int stage_walkable(bake_ctx *b, nm_error *err)
{
    if (!b->o->walkable_as_is && !nm_rc_available())
        return nm_fail(err, NM_ERR_ARG, "navbake was built without Recast (librecast-dev): bake with --walkable-as-is");
    int rc = nm_parallel_chunks(b->cfg->zone_count, b->workers, walkable_chunk, b);
    if (rc == NM_OK) return NM_OK;
    for (uint32_t z = 0; z < b->cfg->zone_count; z++)
        if (b->zm[z].err.code) {
            *err = b->zm[z].err;
            nm_error_prefix(err, "zone '%s': walkable mesh", b->cfg->zones[z].name);
            return err->code;
        }
    return nm_fail(err, rc, "walkable mesh: failed (%s)", nm_status_name(rc));
}

/* ---- stage: weld ------------------------------------------------------------------------------
 * World -> pixels (u = sx*x + tx, v = ty - sy*z, h = y), then identical vertices (exact float
 * equality; -0 counts as 0) become one, triangles with a repeated vertex or no area in space are
 * dropped, vertical ones only when taller than kStepUp, and the vertices left are numbered in
 * order of first use. */
typedef struct weld_map {
    uint32_t *slot;    /* vertex id + 1, 0 = empty */
    uint32_t mask;
} weld_map;

static uint32_t fbits(float f)
{
    f += 0.0f; /* -0 -> +0 */
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t vhash(const float *p)
{
    uint64_t h = NM_FNV_OFFSET;
    for (int a = 0; a < 3; a++) {
        uint32_t u = fbits(p[a]);
        h = nm_fnv1a(h, &u, 4);
    }
    return h;
}

static bool same_vertex(const float *a, const float *b)
{
    return fbits(a[0]) == fbits(b[0]) && fbits(a[1]) == fbits(b[1]) && fbits(a[2]) == fbits(b[2]);
}

static int weld_zone(bake_ctx *b, uint32_t zi, nm_error *err)
{
    zone_mesh *m = &b->zm[zi];
    const float *t4 = b->cfg->zones[zi].t;
    int rc = NM_OK;
    if (m->nt == 0) return NM_OK;
    if (m->nv > (1u << 30))
        return nm_fail(err, NM_ERR_ARG, "zone '%s': %u vertices, more than the weld handles", b->cfg->zones[zi].name, m->nv);
    /* To pixels, in place. */
    for (uint32_t i = 0; i < m->nv; i++) {
        float *p = m->v + 3 * (size_t)i;
        double x = p[0], y = p[1], z = p[2];
        float u = (float)((double)t4[0] * x + (double)t4[1]);
        float v = (float)((double)t4[3] - (double)t4[2] * z);
        if (!isfinite(u) || !isfinite(v) || !isfinite((float)y))
            return nm_fail(err, NM_ERR_ARG, "zone '%s': vertex %u is not finite in pixels (scale or transform too large)",
                           b->cfg->zones[zi].name, i);
        p[0] = u;
        p[1] = v;
        p[2] = (float)y;
    }
    /* Weld: hash of the bits -> first vertex with them. */
    weld_map wm = {0};
    uint32_t cap = 16;
    while (cap < 2 * m->nv && cap < (1u << 31)) cap *= 2;
    wm.slot = nm_calloc(cap, sizeof(uint32_t));
    wm.mask = cap - 1;
    uint32_t *rep = nm_malloc(sizeof(uint32_t) * (size_t)m->nv);
    uint32_t *newid = nm_malloc(sizeof(uint32_t) * (size_t)m->nv);
    float *nv = nm_malloc(sizeof(float) * 3 * (size_t)m->nv);
    if (!wm.slot || !rep || !newid || !nv) {
        rc = nm_fail(err, NM_ERR_NOMEM, "weld: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < m->nv; i++) {
        const float *p = m->v + 3 * (size_t)i;
        uint32_t h = (uint32_t)vhash(p) & wm.mask;
        while (wm.slot[h] && !same_vertex(m->v + 3 * (size_t)(wm.slot[h] - 1), p)) h = (h + 1) & wm.mask;
        if (!wm.slot[h]) wm.slot[h] = i + 1;
        rep[i] = wm.slot[h] - 1;
        newid[i] = UINT32_MAX;
    }
    uint32_t kept = 0, used = 0;
    for (uint32_t t = 0; t < m->nt; t++) {
        uint32_t a = rep[m->t[3 * (size_t)t]], c1 = rep[m->t[3 * (size_t)t + 1]], c2 = rep[m->t[3 * (size_t)t + 2]];
        if (a == c1 || a == c2 || c1 == c2) continue;
        const float *pa = m->v + 3 * (size_t)a, *pb = m->v + 3 * (size_t)c1, *pc = m->v + 3 * (size_t)c2;
        /* A vertical triangle (no area in the (u, v) plane) stays when it is no taller than a
         * step (kStepUp): a riser that joins its two treads, a strip of a walkable facade (预烘场
         * 栅格化 rasterises it into stacked spans). Taller ones are walls, not walkable faces, and
         * go like triangles without area in space. */
        double e1[3] = {(double)pb[0] - pa[0], (double)pb[1] - pa[1], (double)pb[2] - pa[2]};
        double e2[3] = {(double)pc[0] - pa[0], (double)pc[1] - pa[1], (double)pc[2] - pa[2]};
        double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2];
        double cz = e1[0] * e2[1] - e1[1] * e2[0];
        if (cx == 0.0 && cy == 0.0 && cz == 0.0) continue;
        if (cz == 0.0) {
            double hlo = fmin(pa[2], fmin(pb[2], pc[2])), hhi = fmax(pa[2], fmax(pb[2], pc[2]));
            if (hhi - hlo > NM_kStepUp + 1e-6) continue;
        }
        uint32_t ids[3] = {a, c1, c2};
        for (int k = 0; k < 3; k++) {
            if (newid[ids[k]] == UINT32_MAX) {
                memcpy(nv + 3 * (size_t)used, m->v + 3 * (size_t)ids[k], 3 * sizeof(float));
                newid[ids[k]] = used++;
            }
            m->t[3 * (size_t)kept + k] = newid[ids[k]];
        }
        m->area[kept++] = m->area[t];
    }
    nm_free(m->v);
    m->v = nv;
    nv = NULL;
    m->nv = used;
    m->nt = kept;
done:
    nm_free(wm.slot);
    nm_free(rep);
    nm_free(newid);
    nm_free(nv);
    return rc;
}

static int stage_weld(bake_ctx *b, nm_error *err)
{
    for (uint32_t z = 0; z < b->cfg->zone_count; z++) {
        int rc = weld_zone(b, z, err);
        if (rc) return rc;
        if (b->zm[z].nt == 0)
            return nm_fail(err, NM_ERR_STATE, "zone '%s': no walkable triangles (check its groups, the areas, the agent and --scale)",
                           b->cfg->zones[z].name);
    }
    return NM_OK;
}

/* ---- stage: neighbours ------------------------------------------------------------------------
 * Edge k of a triangle is v[k] -> v[(k+1)%3]. Two triangles are neighbours across an edge when one
 * has a -> b and the other b -> a and no third triangle uses that edge (non-manifold edges get no
 * neighbour, and neither do two triangles using the edge in the same direction). */
typedef struct edge_rec {
    uint32_t lo, hi;
    uint32_t slot;     /* tri * 3 + k */
    uint32_t fwd;      /* 1 when v[k] == lo */
} edge_rec;

static int edge_cmp(const void *pa, const void *pb)
{
    const edge_rec *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static int neighbours_zone(zone_mesh *m, nm_error *err)
{
    size_t ne = 3 * (size_t)m->nt;
    edge_rec *e = nm_malloc(sizeof(edge_rec) * ne);
    m->nb = nm_malloc(sizeof(int32_t) * ne);
    if (!e || !m->nb) {
        nm_free(e);
        return nm_fail(err, NM_ERR_NOMEM, "neighbours: out of memory");
    }
    for (size_t s = 0; s < ne; s++) {
        uint32_t t = (uint32_t)(s / 3), k = (uint32_t)(s % 3);
        uint32_t a = m->t[3 * (size_t)t + k], c = m->t[3 * (size_t)t + (k + 1) % 3];
        e[s] = (edge_rec){a < c ? a : c, a < c ? c : a, (uint32_t)s, a < c};
        m->nb[s] = -1;
    }
    qsort(e, ne, sizeof *e, edge_cmp);
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && e[j].lo == e[i].lo && e[j].hi == e[i].hi) j++;
        if (j - i == 2 && e[i].fwd != e[i + 1].fwd) {
            m->nb[e[i].slot] = (int32_t)(e[i + 1].slot / 3);
            m->nb[e[i + 1].slot] = (int32_t)(e[i].slot / 3);
        }
        i = j;
    }
    nm_free(e);
    return NM_OK;
}

static int stage_neighbours(bake_ctx *b, nm_error *err)
{
    for (uint32_t z = 0; z < b->cfg->zone_count; z++) {
        int rc = neighbours_zone(&b->zm[z], err);
        if (rc) return rc;
    }
    return NM_OK;
}

/* ---- stage: components ------------------------------------------------------------------------
 * Raw components: connected by neighbours, numbered 0.. in order of their first triangle. */
static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static int components_zone(zone_mesh *m, nm_error *err)
{
    uint32_t *parent = nm_malloc(sizeof(uint32_t) * (size_t)m->nt);
    uint32_t *label = nm_malloc(sizeof(uint32_t) * (size_t)m->nt);
    m->comp = nm_malloc(sizeof(uint32_t) * (size_t)m->nt);
    if (!parent || !label || !m->comp) {
        nm_free(parent);
        nm_free(label);
        return nm_fail(err, NM_ERR_NOMEM, "components: out of memory");
    }
    for (uint32_t t = 0; t < m->nt; t++) parent[t] = t, label[t] = UINT32_MAX;
    for (uint32_t t = 0; t < m->nt; t++)
        for (int k = 0; k < 3; k++) {
            int32_t n = m->nb[3 * (size_t)t + k];
            if (n < 0) continue;
            uint32_t ra = uf_find(parent, t), rb = uf_find(parent, (uint32_t)n);
            if (ra != rb) parent[ra < rb ? rb : ra] = ra < rb ? ra : rb;
        }
    m->ncomp = 0;
    for (uint32_t t = 0; t < m->nt; t++) {
        uint32_t r = uf_find(parent, t);
        if (label[r] == UINT32_MAX) label[r] = m->ncomp++;
        m->comp[t] = label[r];
    }
    nm_free(parent);
    nm_free(label);
    return NM_OK;
}

static int stage_components(bake_ctx *b, nm_error *err)
{
    for (uint32_t z = 0; z < b->cfg->zone_count; z++) {
        int rc = components_zone(&b->zm[z], err);
        if (rc) return rc;
    }
    return NM_OK;
}

/* ---- stage: pack ------------------------------------------------------------------------------
 * The zone table (each geometry zone followed by its tier zones, zone.json order), vertices and
 * triangles contiguous per zone, components, links (every (t, neighbour) pair, by source then
 * target) and BSRF {area, 0, 1 << area}. */
static char *name_copy(const char *s, uint32_t *len)
{
    size_t n = strlen(s);
    char *d = nm_malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    *len = (uint32_t)n;
    return d;
}

static int stage_pack(bake_ctx *b, nm_error *err)
{
    const nm_bake_config *c = b->cfg;
    nm_pack *p = b->pack;
    uint64_t nv = 0, nt = 0, nl = 0;
    uint32_t nz = 0;
    for (uint32_t z = 0; z < c->zone_count; z++) {
        nv += b->zm[z].nv;
        nt += b->zm[z].nt;
        nz += 1 + c->zones[z].tier_count;
        for (size_t s = 0; s < 3 * (size_t)b->zm[z].nt; s++) nl += b->zm[z].nb[s] >= 0;
    }
    if (nv > UINT32_MAX || nt > INT32_MAX || nl > UINT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "pack: too many vertices / triangles / links");
    if (nl == 0)
        return nm_fail(err, NM_ERR_STATE, "level has no adjacent triangles (a pack needs at least one link)");
    p->version = NM_BNAV_VERSION;
    p->zones = nm_calloc(nz, sizeof *p->zones);
    p->verts = nm_malloc(sizeof(nm_vertex) * (size_t)nv);
    p->tris = nm_malloc(sizeof(nm_tri) * (size_t)nt);
    p->components = nm_malloc(sizeof(uint32_t) * (size_t)nt);
    p->links = nm_malloc(sizeof(nm_link) * (size_t)nl);
    p->surfaces = nm_calloc((size_t)nt, sizeof(nm_surface));
    if (!p->zones || !p->verts || !p->tris || !p->components || !p->links || !p->surfaces)
        return nm_fail(err, NM_ERR_NOMEM, "pack: out of memory");
    p->zone_count = nz;
    uint32_t vbase = 0, tbase = 0, zpos = 0;
    nm_link *lk = p->links;
    for (uint32_t zi = 0; zi < c->zone_count; zi++) {
        const nm_bake_zone *bz = &c->zones[zi];
        const zone_mesh *m = &b->zm[zi];
        nm_zone *z = &p->zones[zpos++];
        float maxu = 1.0f, maxv = 1.0f;
        for (uint32_t i = 0; i < m->nv; i++) {
            const float *q = m->v + 3 * (size_t)i;
            p->verts[vbase + i] = (nm_vertex){q[0], q[1], q[2]};
            if (q[0] > maxu) maxu = q[0];
            if (q[1] > maxv) maxv = q[1];
        }
        for (uint32_t t = 0; t < m->nt; t++) {
            nm_tri *tr = &p->tris[tbase + t];
            for (int k = 0; k < 3; k++) {
                tr->v[k] = vbase + m->t[3 * (size_t)t + k];
                int32_t n = m->nb[3 * (size_t)t + k];
                tr->nb[k] = n < 0 ? -1 : (int32_t)(tbase + (uint32_t)n);
            }
            p->components[tbase + t] = m->comp[t];
            p->surfaces[tbase + t] = (nm_surface){.area = m->area[t], .poly_type = 0, .flags = 1u << m->area[t]};
            /* Links of t: its neighbours in ascending order (sources ascend with t). */
            int32_t s[3] = {tr->nb[0], tr->nb[1], tr->nb[2]};
            for (int i = 0; i < 3; i++)
                for (int j = i + 1; j < 3; j++)
                    if (s[j] < s[i]) { int32_t x = s[i]; s[i] = s[j]; s[j] = x; }
            for (int i = 0; i < 3; i++)
                if (s[i] >= 0) *lk++ = (nm_link){tbase + t, (uint32_t)s[i]};
        }
        z->id = bz->id;
        z->flags = 0;
        z->first_tri = tbase;
        z->tri_count = m->nt;
        z->component_count = m->ncomp;
        z->width = bz->has_size ? bz->width : maxu;
        z->height = bz->has_size ? bz->height : maxv;
        memcpy(z->t, bz->t, sizeof z->t);
        z->floor_y = bz->floor_y;
        z->name = name_copy(bz->name, &z->name_len);
        if (!z->name) return nm_fail(err, NM_ERR_NOMEM, "pack: out of memory");
        float pw = z->width, ph = z->height;
        vbase += m->nv;
        tbase += m->nt;
        for (uint32_t ti = 0; ti < bz->tier_count; ti++) {
            const nm_bake_tier *bt = &bz->tiers[ti];
            nm_zone *tz = &p->zones[zpos++];
            tz->id = bt->id;
            tz->flags = NM_ZONE_FLAG_TIER;
            tz->first_tri = tbase;
            tz->tri_count = 0;
            tz->component_count = bz->id; /* a tier zone names its parent here */
            tz->width = bt->has_size ? bt->width : pw;
            tz->height = bt->has_size ? bt->height : ph;
            memcpy(tz->t, bt->t, sizeof tz->t);
            tz->floor_y = bt->floor_y;
            tz->name = name_copy(bt->name, &tz->name_len);
            if (!tz->name) return nm_fail(err, NM_ERR_NOMEM, "pack: out of memory");
        }
    }
    p->vert_count = (uint32_t)nv;
    p->tri_count = (uint32_t)nt;
    p->link_count = (uint32_t)nl;
    p->surface_count = (uint32_t)nt;
    return NM_OK;
}

/* ---- stage: off-mesh links --------------------------------------------------------------------
 * BOML v2 records from zone.json. Each end goes to the nearest triangle of its zone: the smallest
 * (distance in the (u, v) plane, px) + (height difference at the closest point, m), walkable
 * triangles first, lowest id on ties. */
static double seg_closest(const double p[2], const double a[2], const double b[2], double *s)
{
    double dx = b[0] - a[0], dy = b[1] - a[1];
    double l2 = dx * dx + dy * dy;
    double t = l2 > 0 ? ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double qx = a[0] + t * dx - p[0], qy = a[1] + t * dy - p[1];
    *s = t;
    return sqrt(qx * qx + qy * qy);
}

/* Distance score of point (u, v, h) to triangle t. */
static double tri_score(const nm_pack *pk, uint32_t t, const double q[3])
{
    const nm_vertex *v[3];
    for (int k = 0; k < 3; k++) v[k] = &pk->verts[pk->tris[t].v[k]];
    double a[2] = {v[0]->u, v[0]->v}, b[2] = {v[1]->u, v[1]->v}, c[2] = {v[2]->u, v[2]->v};
    double det = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    double l1 = ((b[0] - q[0]) * (c[1] - q[1]) - (b[1] - q[1]) * (c[0] - q[0])) / det;
    double l2 = ((c[0] - q[0]) * (a[1] - q[1]) - (c[1] - q[1]) * (a[0] - q[0])) / det;
    double l3 = 1.0 - l1 - l2;
    if (l1 >= 0 && l2 >= 0 && l3 >= 0) {
        double h = l1 * v[0]->h + l2 * v[1]->h + l3 * v[2]->h;
        return fabs(q[2] - h);
    }
    double best = INFINITY, hbest = 0;
    const double *pts[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        double s;
        double d = seg_closest(q, pts[k], pts[(k + 1) % 3], &s);
        if (d < best) {
            best = d;
            hbest = v[k]->h + s * (v[(k + 1) % 3]->h - v[k]->h);
        }
    }
    return best + fabs(q[2] - hbest);
}

/* The nearest triangle of zone z to q. A triangle whose box is farther from q in the plane than
 * the best score so far (less a margin far above rounding) can neither win nor tie, so it is
 * skipped without its score: box[4t..4t+3] = min u, min v, max u, max v. */
static uint32_t nearest_tri(const nm_pack *pk, const nm_zone *z, const float *box, const double q[3])
{
    uint32_t best = NM_BOML_NO_TRI;
    for (int pass = 0; pass < 2 && best == NM_BOML_NO_TRI; pass++) {
        double bs = INFINITY;
        for (uint32_t t = z->first_tri; t < z->first_tri + z->tri_count; t++) {
            bool walk = (pk->surfaces[t].flags & NM_kWalkableFlags) != 0;
            if (pass == 0 && !walk) continue;
            const float *b = &box[4 * (size_t)t];
            double du = q[0] < b[0] ? b[0] - q[0] : q[0] > b[2] ? q[0] - b[2] : 0.0;
            double dv = q[1] < b[1] ? b[1] - q[1] : q[1] > b[3] ? q[1] - b[3] : 0.0;
            if (du * du + dv * dv > (bs + 1e-3) * (bs + 1e-3)) continue;
            double s = tri_score(pk, t, q);
            if (s < bs) bs = s, best = t;
        }
    }
    return best;
}

static int stage_offmesh(bake_ctx *b, nm_error *err)
{
    const nm_bake_config *c = b->cfg;
    nm_pack *p = b->pack;
    if (c->offmesh_count == 0) return NM_OK;
    p->offmesh = nm_calloc(c->offmesh_count, sizeof *p->offmesh);
    float *box = nm_malloc(((size_t)p->tri_count + 1) * 4 * sizeof *box);
    if (!p->offmesh || !box) {
        nm_free(box);
        return nm_fail(err, NM_ERR_NOMEM, "off-mesh links: out of memory");
    }
    for (uint32_t t = 0; t < p->tri_count; t++) {
        float *b = &box[4 * (size_t)t];
        b[0] = b[1] = INFINITY;
        b[2] = b[3] = -INFINITY;
        for (int k = 0; k < 3; k++) {
            const nm_vertex *v = &p->verts[p->tris[t].v[k]];
            b[0] = v->u < b[0] ? v->u : b[0];
            b[1] = v->v < b[1] ? v->v : b[1];
            b[2] = v->u > b[2] ? v->u : b[2];
            b[3] = v->v > b[3] ? v->v : b[3];
        }
    }
    int rc = NM_OK;
    for (uint32_t i = 0; i < c->offmesh_count; i++) {
        const nm_bake_offmesh *l = &c->offmesh[i];
        const nm_bake_zone *bz = &c->zones[l->zone];
        int zi = nm_pack_find_zone(p, bz->name);
        if (zi < 0) {
            rc = nm_fail(err, NM_ERR_ARG, "offmesh[%u]: zone '%s' missing from the pack", i, bz->name);
            break;
        }
        const nm_zone *z = &p->zones[zi];
        nm_offmesh *o = &p->offmesh[i];
        o->zone_id = z->id;
        o->kind = 0;
        o->is_ext = 0;
        o->bidirectional = l->bidirectional;
        o->area = l->area;
        o->link_type = l->type;
        o->direction = l->bidirectional ? 1 : 0;
        o->radius = l->radius;
        o->cost_modifier = l->cost;
        double q[2][3];
        const double *ends[2] = {l->from, l->to};
        for (int e = 0; e < 2; e++) {
            float u = (float)((double)bz->t[0] * ends[e][0] + (double)bz->t[1]);
            float v = (float)((double)bz->t[3] - (double)bz->t[2] * ends[e][2]);
            float h = (float)ends[e][1];
            if (!isfinite(u) || !isfinite(v) || !isfinite(h)) {
                rc = nm_fail(err, NM_ERR_ARG, "offmesh[%u].%s: not finite in pixels", i, e ? "to" : "from");
                break;
            }
            q[e][0] = u, q[e][1] = v, q[e][2] = h;
            /* pts = start, end, start, end (the last two matter for extended links only). */
            o->pts[e][0] = o->pts[e + 2][0] = u;
            o->pts[e][1] = o->pts[e + 2][1] = v;
            o->pts[e][2] = o->pts[e + 2][2] = h;
        }
        if (rc != NM_OK) break;
        o->dir_ok = (uint8_t)(1u | (l->bidirectional ? 2u : 0u));
        o->start_tri = nearest_tri(p, z, box, q[0]);
        o->end_tri = nearest_tri(p, z, box, q[1]);
    }
    nm_free(box);
    if (rc != NM_OK) return rc;
    p->offmesh_count = c->offmesh_count;
    p->boml_version = 2;
    return NM_OK;
}

/* ---- the stage list ---------------------------------------------------------------------------*/
typedef struct bake_stage {
    const char *name;
    int (*run)(bake_ctx *b, nm_error *err);
} bake_stage;

static const bake_stage kStages[] = {
    {"groups", stage_groups},
    {"walkable mesh", stage_walkable},
    {"weld", stage_weld},
    {"neighbours", stage_neighbours},
    {"components", stage_components},
    {"pack", stage_pack},
    {"off-mesh links", stage_offmesh},
};

static int machine_workers(int requested)
{
    if (requested <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        requested = n > 0 ? (int)n : 1;
    }
    return requested > NM_WORKER_LIMIT ? NM_WORKER_LIMIT : requested;
}

int nm_bake_main_pack(const nm_bake_opts *opts, nm_pack *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!opts || !opts->obj || !opts->cfg || opts->cfg->zone_count == 0)
        return nm_fail(err, NM_ERR_ARG, "bake: missing OBJ or zone configuration");
    double scale = opts->scale == 0 ? 1.0 : opts->scale;
    if (!isfinite(scale) || scale <= 0 || scale > 1e6) return nm_fail(err, NM_ERR_ARG, "bake: --scale must be a positive number");
    bake_ctx b = {.o = opts, .cfg = opts->cfg, .obj = opts->obj, .scale = (float)scale,
                  .workers = machine_workers(opts->workers), .pack = out};
    b.zm = nm_calloc(opts->cfg->zone_count, sizeof *b.zm);
    if (!b.zm) return nm_fail(err, NM_ERR_NOMEM, "bake: out of memory");
    int rc = NM_OK;
    size_t ns = sizeof kStages / sizeof kStages[0];
    for (size_t s = 0; s < ns && rc == NM_OK; s++) {
        progress(&b, kStages[s].name, 0.0);
        rc = kStages[s].run(&b, err);
        if (rc == NM_OK) progress(&b, kStages[s].name, 1.0);
    }
    for (uint32_t z = 0; z < opts->cfg->zone_count; z++) {
        zone_mesh *m = &b.zm[z];
        nm_free(m->v);
        nm_free(m->t);
        nm_free(m->area);
        nm_free(m->nb);
        nm_free(m->comp);
    }
    nm_free(b.zm);
    nm_free(b.group_role);
    nm_free(b.group_area);
    nm_free(b.in_zone);
    if (rc) nm_pack_free(out);
    return rc;
}

/* mkdir -p */
static int make_dirs(const char *dir, nm_error *err)
{
    size_t n = strlen(dir);
    char *path = nm_malloc(n + 1);
    if (!path) return nm_fail(err, NM_ERR_NOMEM, "out of memory");
    memcpy(path, dir, n + 1);
    int rc = NM_OK;
    for (size_t i = 1; i <= n && rc == NM_OK; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        char keep = path[i];
        path[i] = 0;
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            rc = nm_fail(err, NM_ERR_IO, "%s: cannot create directory: %s", path, strerror(errno));
        path[i] = keep;
    }
    struct stat st;
    if (rc == NM_OK && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = nm_fail(err, NM_ERR_IO, "%s: not a directory", dir);
    nm_free(path);
    return rc;
}

/* dir + "/" + name in a new buffer */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = nm_malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The pack's own bytes (level 12, slow) on a thread of its own beside the grid bake, whose
 * single-threaded stretches leave a core idle. At normal priority: at idle priority (measured
 * no faster) it could starve behind other processes once the grid is done. */
typedef struct serialize_job {
    nm_pack *pack;
    nm_pack_write_opts w;
    nm_buf out;
    nm_error err;
    int rc;
} serialize_job;

static void *serialize_beside(void *arg)
{
    serialize_job *j = arg;
    j->rc = nm_pack_serialize(j->pack, &j->w, &j->out, &j->err);
    return NULL;
}

/* The grid, fields and occluder outputs. The grid bakes from exactly what the planner will load:
 * the pack serialised and read back, here from level-1 bytes (the pack read back does not depend
 * on the level; build_hash covers the inflated bytes) while the level-12 bytes are made beside the
 * grid bake. BGRD is appended to them as a section (build_hash does not cover it; the file FNV
 * does), and the sidecar is bound to the final file. `pack` is the serialising thread's until it
 * is joined. */
static int write_with_grid(const nm_bake_opts *opts, nm_pack *pack, const char *dir, int workers,
                           nm_error *err)
{
    nm_buf b0 = {0}, occ = {0}, bg = {0}, b2 = {0}, bf = {0};
    nm_pack loaded;
    memset(&loaded, 0, sizeof loaded);
    nm_bake_grid_zone *zones = NULL;
    uint32_t nz = 0;
    char *pnav = join(dir, "base.nav.gz"), *pocc = join(dir, "base.occluder.gz"),
         *pfld = join(dir, "base.fields.nav.gz");
    int rc = (pnav && pocc && pfld) ? NM_OK : nm_fail(err, NM_ERR_NOMEM, "out of memory");
    nm_pack_write_opts fast = {.workers = workers, .level = 1};
    if (rc == NM_OK) rc = nm_pack_serialize(pack, &fast, &b0, err);
    serialize_job sj = {.pack = pack, .w = {.workers = 1}};
    pthread_t th;
    bool started = false;
    if (rc == NM_OK) started = pthread_create(&th, NULL, serialize_beside, &sj) == 0;
    if (rc == NM_OK) {
        nm_pack_load_opts lo = {.workers = workers};
        rc = nm_pack_parse(b0.p, b0.size, "base.nav", &lo, &loaded, err);
    }
    nm_buf_free(&b0);
    if (rc == NM_OK && !opts->no_occluder) {
        if (opts->progress) opts->progress(opts->progress_ctx, "occluder", 0.0);
        rc = nm_bake_occluder(opts->obj, opts->cfg, opts->scale, &occ, err);
        if (rc == NM_OK && occ.oom) rc = nm_fail(err, NM_ERR_NOMEM, "occluder: out of memory");
        if (rc == NM_OK) rc = nm_file_write(pocc, occ.p, occ.size, err);
        if (rc == NM_OK && opts->progress) opts->progress(opts->progress_ctx, "occluder", 1.0);
    }
    if (rc == NM_OK) {
        if (opts->progress) opts->progress(opts->progress_ctx, "grid", 0.0);
        rc = navbake_grid_stage(opts, &loaded, opts->no_occluder ? NULL : occ.p, occ.size, workers, &zones,
                                &nz, err);
        if (rc == NM_OK) rc = nm_bake_grid_write_bgrd(zones, nz, workers, &bg, err);
        if (rc == NM_OK && bg.oom) rc = nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
        if (rc == NM_OK && opts->progress) opts->progress(opts->progress_ctx, "grid", 1.0);
    }
    nm_buf_free(&occ);
    if (started) pthread_join(th, NULL);
    else if (rc == NM_OK) serialize_beside(&sj);
    if (rc == NM_OK && sj.rc != NM_OK) {
        *err = sj.err;
        rc = sj.rc;
    }
    if (rc == NM_OK) {
        if (opts->progress) opts->progress(opts->progress_ctx, "write base.nav.gz", 0.0);
        rc = nm_pack_append_section(pack, sj.out.p, sj.out.size, "BGRD", bg.p, bg.size, &b2, err);
        if (rc == NM_OK) rc = nm_file_write(pnav, b2.p, b2.size, err);
        if (rc == NM_OK && opts->progress) opts->progress(opts->progress_ctx, "write base.nav.gz", 1.0);
    }
    nm_buf_free(&sj.out);
    nm_buf_free(&bg);
    nm_buf_free(&b2);
    if (rc == NM_OK) {
        if (opts->progress) opts->progress(opts->progress_ctx, "write base.fields.nav.gz", 0.0);
        rc = nm_bake_grid_write_bnvf(zones, nz, pack->build_hash, pack->file_fnv, workers, &bf, err);
        if (rc == NM_OK && bf.oom) rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
        if (rc == NM_OK) rc = nm_file_write(pfld, bf.p, bf.size, err);
        if (rc == NM_OK && opts->progress) opts->progress(opts->progress_ctx, "write base.fields.nav.gz", 1.0);
    }
    nm_buf_free(&bf);
    for (uint32_t i = 0; i < nz; i++) nm_bake_grid_zone_free(&zones[i]);
    nm_free(zones);
    nm_pack_free(&loaded);
    nm_free(pnav); nm_free(pocc); nm_free(pfld);
    return rc;
}

int nm_bake_to_dir(const nm_bake_opts *opts, const char *dir, nm_error *err)
{
    nm_pack pack;
    int rc = nm_bake_main_pack(opts, &pack, err);
    if (rc) return rc;
    rc = make_dirs(dir, err);
    if (rc == NM_OK && !opts->no_grid) {
        rc = write_with_grid(opts, &pack, dir, machine_workers(opts->workers), err);
        nm_pack_free(&pack);
        return rc;
    }
    char *path = NULL;
    if (rc == NM_OK) {
        path = join(dir, "base.nav.gz");
        if (!path) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory");
    }
    if (rc == NM_OK) {
        if (opts->progress) opts->progress(opts->progress_ctx, "write base.nav.gz", 0.0);
        nm_pack_write_opts w = {.workers = machine_workers(opts->workers)};
        rc = nm_pack_save(&pack, &w, path, err);
        if (rc == NM_OK && opts->progress) opts->progress(opts->progress_ctx, "write base.nav.gz", 1.0);
    }
    nm_free(path);
    nm_pack_free(&pack);
    return rc;
}
