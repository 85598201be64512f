/* pack_fixture.c — builds test packs, the expected result of zone loads, pack comparison and the
 * section / chunk patcher used by the corruption tests (see pack_fixture.h). */
#include "pack_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static float frand(uint32_t *s, float lo, float hi) { return lo + (hi - lo) * (float)(rng(s) % 100000) / 100000.0f; }

static void *xcalloc(size_t n, size_t sz)
{
    void *p = nm_calloc(n ? n : 1, sz);
    if (!p) abort(); /* test fixture only */
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = (char *)xcalloc(strlen(s) + 1, 1);
    memcpy(d, s, strlen(s));
    return d;
}

static int zone_of_tri(const nm_pack *p, uint32_t t)
{
    for (uint32_t i = 0; i < p->zone_count; i++)
        if (t >= p->zones[i].first_tri && t < p->zones[i].first_tri + p->zones[i].tri_count) return (int)i;
    return -1;
}

static int cmp_link(const void *a, const void *b)
{
    const nm_link *x = (const nm_link *)a, *y = (const nm_link *)b;
    return x->src < y->src ? -1 : x->src > y->src;
}

void fx_build(nm_pack *p, uint32_t seed, uint32_t s)
{
    memset(p, 0, sizeof *p);
    uint32_t r = seed * 2654435761u + 1;
    p->version = NM_BNAV_VERSION;
    p->flags = 0x0003;
    /* Zones: two geometry zones, a tier child of "alpha", and two zones named "gamma" (the last
     * one wins a lookup by name). */
    struct { uint16_t id, flags; const char *name; uint32_t first, count, comp; } zs[5] = {
        {1, 0, "alpha", 0, 40 * s, 3},
        {2, 0, "beta", 40 * s, 60 * s, 5},
        {3, NM_ZONE_FLAG_TIER, "alpha_tier1", 0, 0, 1},
        {4, 0, "gamma", 100 * s, 30 * s, 2},
        {7, 0, "gamma", 130 * s, 20 * s, 1},
    };
    p->zone_count = 5;
    p->zones = (nm_zone *)xcalloc(5, sizeof *p->zones);
    for (int i = 0; i < 5; i++) {
        nm_zone *z = &p->zones[i];
        z->id = zs[i].id;
        z->flags = zs[i].flags;
        z->first_tri = zs[i].first;
        z->tri_count = zs[i].count;
        z->component_count = zs[i].comp;
        z->width = frand(&r, 100, 4000);
        z->height = frand(&r, 100, 4000);
        float t[4] = {frand(&r, 0.5f, 2), frand(&r, -50, 50), frand(&r, 0.5f, 2), frand(&r, -50, 50)};
        memcpy(z->t, t, sizeof t);
        z->floor_y = i == 1 ? frand(&r, -10, 30) : NM_kFloorYNone;
        z->name = xstrdup(zs[i].name);
        z->name_len = (uint32_t)strlen(zs[i].name);
    }
    p->vert_count = 120 * s;
    p->verts = (nm_vertex *)xcalloc(p->vert_count, sizeof *p->verts);
    for (uint32_t i = 0; i < p->vert_count; i++)
        p->verts[i] = (nm_vertex){frand(&r, 0, 1000), frand(&r, 0, 1000), frand(&r, -20, 80)};
    p->tri_count = 150 * s;
    p->tris = (nm_tri *)xcalloc(p->tri_count, sizeof *p->tris);
    p->components = (uint32_t *)xcalloc(p->tri_count, sizeof *p->components);
    uint32_t comp = 0;
    int geo_zone = 0;
    for (uint32_t zi = 0; zi < p->zone_count; zi++) {
        nm_zone *z = &p->zones[zi];
        if (z->tri_count == 0) continue;
        /* Each zone's vertices come from a window that overlaps its neighbours' windows. */
        uint32_t vbase = (uint32_t)geo_zone++ * 20 * s, vw = 40 * s;
        for (uint32_t t = z->first_tri; t < z->first_tri + z->tri_count; t++) {
            nm_tri *tr = &p->tris[t];
            for (int k = 0; k < 3; k++) {
                tr->v[k] = vbase + rng(&r) % vw;
                switch (rng(&r) % 4) {
                case 0: tr->nb[k] = -1; break;
                case 1: tr->nb[k] = (int32_t)(z->first_tri + rng(&r) % z->tri_count); break;
                case 2: tr->nb[k] = (int32_t)(rng(&r) % p->tri_count); break;
                default: tr->nb[k] = (int32_t)(t + 1 < p->tri_count ? t + 1 : t); break;
                }
            }
            if (rng(&r) % 4 == 0) comp = rng(&r) % 3 == 0 ? 0x80000000u + rng(&r) : rng(&r) % 50;
            p->components[t] = comp;
        }
    }
    p->link_count = 300 * s;
    p->links = (nm_link *)xcalloc(p->link_count, sizeof *p->links);
    for (uint32_t i = 0; i < p->link_count; i++) {
        uint32_t src = rng(&r) % p->tri_count, dst = rng(&r) % p->tri_count;
        int zi = zone_of_tri(p, src);
        if (zi >= 0 && rng(&r) % 3) dst = p->zones[zi].first_tri + rng(&r) % p->zones[zi].tri_count;
        p->links[i] = (nm_link){src, dst};
    }
    qsort(p->links, p->link_count, sizeof *p->links, cmp_link);
    /* qsort is not stable; make equal sources deterministic by their targets' order. */
    for (uint32_t i = 1; i < p->link_count; i++)
        for (uint32_t j = i; j > 0 && p->links[j].src == p->links[j - 1].src && p->links[j].dst < p->links[j - 1].dst; j--) {
            nm_link t = p->links[j];
            p->links[j] = p->links[j - 1];
            p->links[j - 1] = t;
        }
    p->surface_count = p->tri_count;
    p->surfaces = (nm_surface *)xcalloc(p->surface_count, sizeof *p->surfaces);
    for (uint32_t i = 0; i < p->surface_count; i++) {
        uint8_t area = (uint8_t)(rng(&r) % 8);
        p->surfaces[i] = (nm_surface){area, (uint8_t)(rng(&r) % 3), (uint16_t)(rng(&r) % 2), 1u << area};
    }
    uint16_t ids[8] = {1, 2, 3, 4, 7, 1, 2, 4};
    p->offmesh_count = 8;
    p->boml_version = 2;
    p->offmesh = (nm_offmesh *)xcalloc(8, sizeof *p->offmesh);
    for (int i = 0; i < 8; i++) {
        nm_offmesh *o = &p->offmesh[i];
        o->zone_id = ids[i];
        o->kind = (uint8_t)(i % 2);
        o->is_ext = i % 2;
        o->bidirectional = i % 3 == 0;
        o->area = (int32_t)(rng(&r) % 10);
        o->link_type = (uint16_t)(rng(&r) % 5);
        o->direction = (uint8_t)(rng(&r) % 4);
        o->radius = frand(&r, 0.5f, 3);
        o->cost_modifier = frand(&r, 1, 4);
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++) o->pts[k][j] = frand(&r, -100, 1000);
        o->dir_ok = (uint8_t)(rng(&r) % 4);
        int zi = nm_pack_find_zone_id(p, o->zone_id);
        const nm_zone *z = &p->zones[zi];
        o->start_tri = z->tri_count ? z->first_tri + rng(&r) % z->tri_count : NM_BOML_NO_TRI;
        o->end_tri = i % 3 == 0 ? NM_BOML_NO_TRI : rng(&r) % p->tri_count;
    }
    p->section_count = 2;
    p->sections = (nm_section *)xcalloc(2, sizeof *p->sections);
    const char *tags[2] = {"XTRA", "BGRD"};
    size_t sizes[2] = {33, 50};
    for (int i = 0; i < 2; i++) {
        nm_section *sec = &p->sections[i];
        memcpy(sec->tag, tags[i], 4);
        sec->flags = (uint32_t)(7 * i + 1);
        sec->size = sizes[i];
        sec->bytes = (uint8_t *)xcalloc(sizes[i], 1);
        for (size_t j = 0; j < sizes[i]; j++) sec->bytes[j] = (uint8_t)rng(&r);
    }
}

bool fx_expect_zone(const nm_pack *w, const char *zone, nm_pack *o)
{
    memset(o, 0, sizeof *o);
    int zi = nm_pack_find_zone(w, zone);
    if (zi < 0) return false;
    const nm_zone *sel = &w->zones[zi];
    uint32_t lo = sel->first_tri, hi = lo + sel->tri_count;
    o->version = w->version;
    o->flags = w->flags;
    o->build_hash = w->build_hash;
    o->zone_scoped = true;
    o->tri_base = lo;
    o->zones = (nm_zone *)xcalloc(w->zone_count, sizeof *o->zones);
    for (uint32_t i = 0; i < w->zone_count; i++) {
        const nm_zone *z = &w->zones[i];
        if ((int)i == zi || ((z->flags & NM_ZONE_FLAG_TIER) && z->component_count == sel->id)) {
            o->zones[o->zone_count] = *z;
            o->zones[o->zone_count++].name = xstrdup(z->name);
        }
    }
    uint32_t vmin = UINT32_MAX, vmax = 0;
    for (uint32_t t = lo; t < hi; t++)
        for (int k = 0; k < 3; k++) {
            if (w->tris[t].v[k] < vmin) vmin = w->tris[t].v[k];
            if (w->tris[t].v[k] > vmax) vmax = w->tris[t].v[k];
        }
    if (hi == lo) vmin = 0, vmax = 0;
    o->vert_base = vmin;
    o->vert_count = hi > lo ? vmax - vmin + 1 : 0;
    o->verts = (nm_vertex *)xcalloc(o->vert_count, sizeof *o->verts);
    if (o->vert_count) memcpy(o->verts, w->verts + vmin, o->vert_count * sizeof *o->verts);
    o->tri_count = hi - lo;
    o->tris = (nm_tri *)xcalloc(o->tri_count, sizeof *o->tris);
    o->components = (uint32_t *)xcalloc(o->tri_count, sizeof *o->components);
    for (uint32_t t = lo; t < hi; t++) {
        nm_tri *d = &o->tris[t - lo];
        for (int k = 0; k < 3; k++) {
            d->v[k] = w->tris[t].v[k] - vmin;
            int32_t nb = w->tris[t].nb[k];
            d->nb[k] = nb >= (int32_t)lo && nb < (int32_t)hi ? nb - (int32_t)lo : -1;
        }
        o->components[t - lo] = w->components ? w->components[t] : 0;
    }
    o->links = (nm_link *)xcalloc(w->link_count, sizeof *o->links);
    for (uint32_t i = 0; i < w->link_count; i++) {
        nm_link l = w->links[i];
        if (l.src >= lo && l.src < hi && l.dst >= lo && l.dst < hi)
            o->links[o->link_count++] = (nm_link){l.src - lo, l.dst - lo};
    }
    if (w->surface_count) {
        o->surface_count = hi - lo;
        o->surfaces = (nm_surface *)xcalloc(o->surface_count, sizeof *o->surfaces);
        if (o->surface_count) memcpy(o->surfaces, w->surfaces + lo, o->surface_count * sizeof *o->surfaces);
    }
    if (w->offmesh_count) {
        o->boml_version = w->boml_version ? w->boml_version : 2;
        o->offmesh = (nm_offmesh *)xcalloc(w->offmesh_count, sizeof *o->offmesh);
        for (uint32_t i = 0; i < w->offmesh_count; i++) {
            nm_offmesh m = w->offmesh[i];
            bool mine = false;
            for (uint32_t z = 0; z < o->zone_count; z++) mine |= o->zones[z].id == m.zone_id;
            if (!mine) continue;
            uint32_t *ends[2] = {&m.start_tri, &m.end_tri};
            for (int k = 0; k < 2; k++)
                if (*ends[k] != NM_BOML_NO_TRI) *ends[k] = *ends[k] >= lo && *ends[k] < hi ? *ends[k] - lo : NM_BOML_NO_TRI;
            o->offmesh[o->offmesh_count++] = m;
        }
    }
    o->sections = (nm_section *)xcalloc(w->section_count, sizeof *o->sections);
    for (uint32_t i = 0; i < w->section_count; i++) {
        if (!w->sections[i].bytes) continue;
        nm_section *d = &o->sections[o->section_count++];
        *d = w->sections[i];
        d->bytes = (uint8_t *)xcalloc(d->size, 1);
        memcpy(d->bytes, w->sections[i].bytes, d->size);
    }
    return true;
}

#define DIFF(...) do { if (why) snprintf(why, why_n, __VA_ARGS__); return false; } while (0)

static bool feq(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

bool fx_pack_equal(const nm_pack *a, const nm_pack *b, char *why, size_t why_n)
{
    if (a->version != b->version || a->flags != b->flags) DIFF("version/flags");
    if (a->build_hash != b->build_hash) DIFF("build_hash");
    if (a->zone_scoped != b->zone_scoped || a->tri_base != b->tri_base || a->vert_base != b->vert_base)
        DIFF("zone scope %d/%d tri_base %u/%u vert_base %u/%u", a->zone_scoped, b->zone_scoped,
             a->tri_base, b->tri_base, a->vert_base, b->vert_base);
    if (a->zone_count != b->zone_count) DIFF("zone count %u vs %u", a->zone_count, b->zone_count);
    for (uint32_t i = 0; i < a->zone_count; i++) {
        const nm_zone *x = &a->zones[i], *y = &b->zones[i];
        bool same = x->id == y->id && x->flags == y->flags && x->first_tri == y->first_tri &&
                    x->tri_count == y->tri_count && x->component_count == y->component_count &&
                    feq(x->width, y->width) && feq(x->height, y->height) && feq(x->floor_y, y->floor_y) &&
                    memcmp(x->t, y->t, sizeof x->t) == 0 && x->name_len == y->name_len &&
                    memcmp(x->name, y->name, x->name_len) == 0;
        if (!same) DIFF("zone %u differs", i);
    }
    if (a->vert_count != b->vert_count) DIFF("vertex count %u vs %u", a->vert_count, b->vert_count);
    for (uint32_t i = 0; i < a->vert_count; i++)
        if (!feq(a->verts[i].u, b->verts[i].u) || !feq(a->verts[i].v, b->verts[i].v) || !feq(a->verts[i].h, b->verts[i].h))
            DIFF("vertex %u differs", i);
    if (a->tri_count != b->tri_count) DIFF("triangle count %u vs %u", a->tri_count, b->tri_count);
    for (uint32_t i = 0; i < a->tri_count; i++) {
        if (memcmp(&a->tris[i], &b->tris[i], sizeof a->tris[i]) != 0) DIFF("triangle %u differs", i);
        uint32_t ca = a->components ? a->components[i] : 0, cb = b->components ? b->components[i] : 0;
        if (ca != cb) DIFF("component %u differs (%u vs %u)", i, ca, cb);
    }
    if (a->link_count != b->link_count) DIFF("link count %u vs %u", a->link_count, b->link_count);
    for (uint32_t i = 0; i < a->link_count; i++)
        if (a->links[i].src != b->links[i].src || a->links[i].dst != b->links[i].dst) DIFF("link %u differs", i);
    if (a->surface_count != b->surface_count) DIFF("surface count %u vs %u", a->surface_count, b->surface_count);
    for (uint32_t i = 0; i < a->surface_count; i++) {
        const nm_surface *x = &a->surfaces[i], *y = &b->surfaces[i];
        if (x->area != y->area || x->poly_type != y->poly_type || x->pad != y->pad || x->flags != y->flags)
            DIFF("surface %u differs", i);
    }
    if (a->boml_version != b->boml_version) DIFF("BOML version %u vs %u", a->boml_version, b->boml_version);
    if (a->offmesh_count != b->offmesh_count) DIFF("off-mesh count %u vs %u", a->offmesh_count, b->offmesh_count);
    for (uint32_t i = 0; i < a->offmesh_count; i++) {
        const nm_offmesh *x = &a->offmesh[i], *y = &b->offmesh[i];
        bool same = x->zone_id == y->zone_id && x->kind == y->kind && x->is_ext == y->is_ext &&
                    x->bidirectional == y->bidirectional && x->area == y->area &&
                    x->link_type == y->link_type && x->direction == y->direction &&
                    feq(x->radius, y->radius) && feq(x->cost_modifier, y->cost_modifier) &&
                    memcmp(x->pts, y->pts, sizeof x->pts) == 0 && x->dir_ok == y->dir_ok &&
                    x->start_tri == y->start_tri && x->end_tri == y->end_tri;
        if (!same) DIFF("off-mesh link %u differs", i);
    }
    /* Sections that carry bytes, in order. */
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < a->section_count && !a->sections[i].bytes) i++;
        while (j < b->section_count && !b->sections[j].bytes) j++;
        if (i == a->section_count || j == b->section_count) break;
        const nm_section *x = &a->sections[i++], *y = &b->sections[j++];
        if (memcmp(x->tag, y->tag, 4) || x->flags != y->flags || x->size != y->size ||
            memcmp(x->bytes, y->bytes, (size_t)x->size))
            DIFF("section %.4s differs", x->tag);
    }
    if (i != a->section_count || j != b->section_count) DIFF("section lists differ");
    return true;
}

/* ---- patching serialised packs ---------------------------------------------------------------- */
bool fx_split(const uint8_t *data, size_t size, fx_file *f)
{
    memset(f, 0, sizeof *f);
    if (size < 80) return false;
    memcpy(f->header, data, 80);
    uint64_t dir = fx_get64(data + 64);
    f->count = fx_get32(data + 72);
    if (f->count > 16 || dir + 24ull * f->count > size) return false;
    for (uint32_t i = 0; i < f->count; i++) {
        const uint8_t *e = data + dir + 24 * i;
        uint64_t off = fx_get64(e + 8), n = fx_get64(e + 16);
        if (off + n > size) return false;
        memcpy(f->sec[i].tag, e, 4);
        f->sec[i].flags = fx_get32(e + 4);
        f->sec[i].size = (size_t)n;
        f->sec[i].bytes = (uint8_t *)xcalloc((size_t)n, 1);
        memcpy(f->sec[i].bytes, data + off, (size_t)n);
    }
    return true;
}

void fx_join(const fx_file *f, nm_buf *out)
{
    out->size = 0;
    uint8_t h[80];
    memcpy(h, f->header, 80);
    fx_put64(h + 64, 80);
    fx_put32(h + 72, f->count);
    nm_buf_bytes(out, h, 80);
    uint64_t off = 80 + 24ull * f->count;
    for (uint32_t i = 0; i < f->count; i++) {
        nm_buf_bytes(out, f->sec[i].tag, 4);
        nm_buf_u32(out, f->sec[i].flags);
        nm_buf_u64(out, off);
        nm_buf_u64(out, f->sec[i].size);
        off += f->sec[i].size;
    }
    for (uint32_t i = 0; i < f->count; i++) nm_buf_bytes(out, f->sec[i].bytes, f->sec[i].size);
}

void fx_file_free(fx_file *f)
{
    for (uint32_t i = 0; i < f->count; i++) nm_free(f->sec[i].bytes);
    memset(f, 0, sizeof *f);
}

int fx_find(const fx_file *f, const char *tag)
{
    for (uint32_t i = 0; i < f->count; i++)
        if (!memcmp(f->sec[i].tag, tag, 4)) return (int)i;
    return -1;
}

uint64_t fx_chunk_dir(const fx_file *f, int table)
{
    int g = fx_find(f, "BGEO");
    return g < 0 ? 0 : fx_get64(f->sec[g].bytes + 40 + 8 * table);
}

bool fx_replace_chunk(fx_file *f, int table, size_t chunk, const void *bytes, size_t n)
{
    int g = fx_find(f, "BGEO");
    if (g < 0) return false;
    uint64_t dir = fx_chunk_dir(f, table), e = dir + 16 * chunk;
    if (e + 16 > f->sec[g].size) return false;
    size_t old = f->sec[g].size;
    uint8_t *nb = (uint8_t *)nm_realloc(f->sec[g].bytes, old + n + 1);
    if (!nb) return false;
    memcpy(nb + old, bytes, n);
    f->sec[g].bytes = nb;
    f->sec[g].size = old + n;
    fx_put64(nb + e, old);
    fx_put32(nb + e + 8, (uint32_t)n);
    return true;
}
