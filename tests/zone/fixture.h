/* fixture.h — builds small nm_pack values in memory for the zone tests: vertices, triangles with
 * explicit pack neighbours, links, BSRF areas, zones and an optional BGEO directory entry. The test
 * owns every array (plain malloc); fx_free releases them. */
#ifndef ZONE_FIXTURE_H
#define ZONE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "pack/pack.h"
#include "zone/zone.h"

typedef struct fx {
    nm_pack p;
    uint32_t vcap, tcap, lcap, zcap, acap;
    uint8_t *areas;     /* per triangle, applied by fx_finish when with_bsrf */
    bool with_bsrf, with_bgeo;
} fx;

static inline void *fx_grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return p;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need) nc *= 2;
    void *q = realloc(p, (size_t)nc * elem);
    if (!q) abort();
    *cap = nc;
    return q;
}

/* A pack with one geometry zone "z" (id 1) covering every triangle added. with_bgeo: a BGEO
 * directory entry (new-generation pack); with_bsrf: one BSRF record per triangle. */
static inline void fx_init(fx *f, bool with_bgeo, bool with_bsrf)
{
    memset(f, 0, sizeof *f);
    f->with_bgeo = with_bgeo;
    f->with_bsrf = with_bsrf;
    f->p.version = 5;
}

static inline uint32_t fx_vert(fx *f, double u, double v, double h)
{
    f->p.verts = (nm_vertex *)fx_grow(f->p.verts, &f->vcap, f->p.vert_count + 1, sizeof(nm_vertex));
    f->p.verts[f->p.vert_count] = (nm_vertex){(float)u, (float)v, (float)h};
    return f->p.vert_count++;
}

static inline uint32_t fx_tri(fx *f, uint32_t a, uint32_t b, uint32_t c)
{
    f->p.tris = (nm_tri *)fx_grow(f->p.tris, &f->tcap, f->p.tri_count + 1, sizeof(nm_tri));
    f->areas = (uint8_t *)fx_grow(f->areas, &f->acap, f->p.tri_count + 1, 1);
    f->p.tris[f->p.tri_count] = (nm_tri){{a, b, c}, {-1, -1, -1}};
    f->areas[f->p.tri_count] = 0;
    return f->p.tri_count++;
}

/* A triangle with its own three new vertices. */
static inline uint32_t fx_tri_at(fx *f, double x0, double y0, double x1, double y1, double x2, double y2,
                          double h)
{
    uint32_t a = fx_vert(f, x0, y0, h), b = fx_vert(f, x1, y1, h), c = fx_vert(f, x2, y2, h);
    return fx_tri(f, a, b, c);
}

static inline void fx_nb(fx *f, uint32_t t, int k, int32_t j) { f->p.tris[t].nb[k] = j; }

/* Sets the pack neighbours of t and u on their shared edge (both directions). */
static inline void fx_pair(fx *f, uint32_t t, uint32_t u)
{
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 3; m++) {
            const nm_tri *a = &f->p.tris[t], *b = &f->p.tris[u];
            if (a->v[k] == b->v[(m + 1) % 3] && a->v[(k + 1) % 3] == b->v[m]) {
                f->p.tris[t].nb[k] = (int32_t)u;
                f->p.tris[u].nb[m] = (int32_t)t;
            }
        }
}

static inline void fx_link(fx *f, uint32_t s, uint32_t d)
{
    f->p.links = (nm_link *)fx_grow(f->p.links, &f->lcap, f->p.link_count + 1, sizeof(nm_link));
    f->p.links[f->p.link_count++] = (nm_link){s, d};
}

static inline void fx_links_both(fx *f, uint32_t s, uint32_t d)
{
    fx_link(f, s, d);
    fx_link(f, d, s);
}

static inline void fx_area(fx *f, uint32_t t, uint8_t area) { f->areas[t] = area; }

static inline uint32_t fx_zone(fx *f, uint16_t id, const char *name, uint32_t first, uint32_t count,
                        uint16_t flags)
{
    f->p.zones = (nm_zone *)fx_grow(f->p.zones, &f->zcap, f->p.zone_count + 1, sizeof(nm_zone));
    nm_zone *z = &f->p.zones[f->p.zone_count];
    memset(z, 0, sizeof *z);
    z->id = id;
    z->flags = flags;
    z->first_tri = first;
    z->tri_count = count;
    z->name = strdup(name);
    z->name_len = (uint32_t)strlen(name);
    z->floor_y = NM_kFloorYNone;
    return f->p.zone_count++;
}

static inline int cmp_link(const void *a, const void *b)
{
    const nm_link *x = (const nm_link *)a, *y = (const nm_link *)b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Adds the default zone "z" (id 1) over all triangles if no zone was added, sorts links, writes
 * BSRF and BGEO as asked. */
static inline void fx_finish(fx *f)
{
    if (f->p.zone_count == 0) fx_zone(f, 1, "z", 0, f->p.tri_count, 0);
    if (f->p.link_count) qsort(f->p.links, f->p.link_count, sizeof(nm_link), cmp_link);
    if (f->with_bsrf) {
        f->p.surfaces = (nm_surface *)calloc(f->p.tri_count ? f->p.tri_count : 1, sizeof(nm_surface));
        for (uint32_t t = 0; t < f->p.tri_count; t++) {
            f->p.surfaces[t].area = f->areas[t];
            f->p.surfaces[t].flags = 1u << f->areas[t];
        }
        f->p.surface_count = f->p.tri_count;
    }
    if (f->with_bgeo) {
        f->p.sections = (nm_section *)calloc(1, sizeof(nm_section));
        memcpy(f->p.sections[0].tag, "BGEO", 4);
        f->p.section_count = 1;
    }
}

/* Under AddressSanitizer, a leak check at the end of each fixture's life: Criterion runs every test
 * in a child process that never reaches LeakSanitizer's exit-time check. */
#if defined(__SANITIZE_ADDRESS__)
#define FX_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FX_LSAN 1
#endif
#endif
#ifdef FX_LSAN
#include <sanitizer/lsan_interface.h>
#endif

static inline void fx_free(fx *f)
{
    for (uint32_t i = 0; i < f->p.zone_count; i++) free(f->p.zones[i].name);
    free(f->p.zones);
    free(f->p.verts);
    free(f->p.tris);
    free(f->p.links);
    free(f->p.surfaces);
    free(f->p.sections);
    free(f->areas);
    memset(f, 0, sizeof *f);
#ifdef FX_LSAN
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (see the report above)");
#endif
}

/* Builds zone "z" with the given workers; fails the test on error. */
#define FX_BUILD(f, workers, zcp)                                                                  \
    do {                                                                                           \
        nm_error e_ = {0};                                                                         \
        int rc_ = nm_zone_clean_build(&(f)->p, "z", (workers), (zcp), &e_);                        \
        cr_assert_eq(rc_, NM_OK, "build failed: %d %s", rc_, e_.msg);                              \
    } while (0)

/* Index of the zone-clean edge of t that runs between pack vertices a and b (either direction),
 * or -1. Works for borrowed vertices. */
static inline int fx_edge_of(const nm_zone_clean *zc, uint32_t t, uint32_t a, uint32_t b)
{
    for (int k = 0; k < 3; k++) {
        uint32_t x = zc->tri_v[3 * t + k], y = zc->tri_v[3 * t + (k + 1) % 3];
        if ((x == a && y == b) || (x == b && y == a)) return k;
    }
    return -1;
}

#endif
