/* util.c — see util.h. */
#include "util.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tmp_dir(void)
{
    char tmpl[] = "/tmp/nm_bake_XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d, "mkdtemp failed");
    return strdup(d);
}

void tmp_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) tmp_remove(path);
        else unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

char *write_text(const char *dir, const char *name, const char *text)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fwrite(text, 1, strlen(text), f);
    fclose(f);
    return path;
}

int bake_text(const char *obj_text, const char *zone_json, bool as_is, int workers, nm_pack *out, nm_error *err)
{
    nm_obj obj;
    nm_bake_config cfg;
    int rc = nm_obj_parse(obj_text, strlen(obj_text), "test.obj", &obj, err);
    if (rc) return rc;
    rc = zone_json ? nm_bake_config_parse(zone_json, strlen(zone_json), "zone.json", "demo", &cfg, err)
                   : nm_bake_config_default("demo", &cfg, err);
    if (rc) {
        nm_obj_free(&obj);
        return rc;
    }
    nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .walkable_as_is = as_is, .workers = workers};
    rc = nm_bake_main_pack(&o, out, err);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
    return rc;
}

static bool same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

void expect_same_pack(const nm_pack *w, const nm_pack *g)
{
    cr_assert_eq(g->zone_count, w->zone_count, "zone count");
    for (uint32_t i = 0; i < w->zone_count; i++) {
        const nm_zone *a = &w->zones[i], *b = &g->zones[i];
        cr_assert_str_eq(b->name, a->name, "zone %u name", i);
        cr_assert_eq(b->name_len, a->name_len, "zone %u name_len", i);
        cr_assert_eq(b->id, a->id, "zone %u id", i);
        cr_assert_eq(b->flags, a->flags, "zone %u flags", i);
        cr_assert_eq(b->first_tri, a->first_tri, "zone %u first_tri", i);
        cr_assert_eq(b->tri_count, a->tri_count, "zone %u tri_count", i);
        cr_assert_eq(b->component_count, a->component_count, "zone %u component_count", i);
        cr_assert(same_float(b->width, a->width) && same_float(b->height, a->height), "zone %u size", i);
        for (int k = 0; k < 4; k++) cr_assert(same_float(b->t[k], a->t[k]), "zone %u transform[%d]", i, k);
        cr_assert(same_float(b->floor_y, a->floor_y), "zone %u floor_y", i);
    }
    cr_assert_eq(g->vert_count, w->vert_count, "vertex count");
    cr_assert_eq(memcmp(g->verts, w->verts, sizeof(nm_vertex) * w->vert_count), 0, "vertex table differs");
    cr_assert_eq(g->tri_count, w->tri_count, "triangle count");
    for (uint32_t t = 0; t < w->tri_count; t++)
        for (int k = 0; k < 3; k++) {
            cr_assert_eq(g->tris[t].v[k], w->tris[t].v[k], "triangle %u vertex %d", t, k);
            cr_assert_eq(g->tris[t].nb[k], w->tris[t].nb[k], "triangle %u neighbour %d", t, k);
        }
    cr_assert_eq(memcmp(g->components, w->components, sizeof(uint32_t) * w->tri_count), 0, "components differ");
    cr_assert_eq(g->link_count, w->link_count, "link count");
    for (uint32_t i = 0; i < w->link_count; i++)
        cr_assert(g->links[i].src == w->links[i].src && g->links[i].dst == w->links[i].dst, "link %u", i);
    cr_assert_eq(g->surface_count, w->surface_count, "BSRF count");
    for (uint32_t i = 0; i < w->surface_count; i++) {
        cr_assert_eq(g->surfaces[i].area, w->surfaces[i].area, "BSRF %u area", i);
        cr_assert_eq(g->surfaces[i].poly_type, w->surfaces[i].poly_type, "BSRF %u poly_type", i);
        cr_assert_eq(g->surfaces[i].flags, w->surfaces[i].flags, "BSRF %u flags", i);
    }
    cr_assert_eq(g->offmesh_count, w->offmesh_count, "BOML count");
    if (w->offmesh_count) cr_assert_eq(g->boml_version, w->boml_version, "BOML version");
    for (uint32_t i = 0; i < w->offmesh_count; i++) {
        const nm_offmesh *a = &w->offmesh[i], *b = &g->offmesh[i];
        cr_assert(a->zone_id == b->zone_id && a->kind == b->kind && a->is_ext == b->is_ext &&
                      a->bidirectional == b->bidirectional && a->area == b->area && a->link_type == b->link_type &&
                      a->direction == b->direction && a->dir_ok == b->dir_ok && a->start_tri == b->start_tri &&
                      a->end_tri == b->end_tri,
                  "BOML %u fields", i);
        cr_assert(same_float(a->radius, b->radius) && same_float(a->cost_modifier, b->cost_modifier), "BOML %u radius/cost", i);
        for (int p = 0; p < 4; p++)
            for (int k = 0; k < 3; k++) cr_assert(same_float(a->pts[p][k], b->pts[p][k]), "BOML %u pts[%d][%d]", i, p, k);
    }
    cr_assert_eq(g->build_hash, w->build_hash, "build_hash");
}

static int cmp_link(const void *a, const void *b)
{
    const nm_link *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

void expect_pack_invariants(const nm_pack *p)
{
    /* Neighbours: symmetric, inside the zone, across the same edge reversed. */
    uint32_t nl = 0;
    nm_link *links = malloc(sizeof(nm_link) * 3 * (p->tri_count + 1));
    for (uint32_t zi = 0; zi < p->zone_count; zi++) {
        const nm_zone *z = &p->zones[zi];
        for (uint32_t t = z->first_tri; t < z->first_tri + z->tri_count; t++) {
            const nm_tri *a = &p->tris[t];
            cr_assert(a->v[0] != a->v[1] && a->v[1] != a->v[2] && a->v[0] != a->v[2], "triangle %u degenerate", t);
            for (int k = 0; k < 3; k++) {
                int32_t n = a->nb[k];
                if (n < 0) continue;
                cr_assert((uint32_t)n >= z->first_tri && (uint32_t)n < z->first_tri + z->tri_count,
                          "triangle %u neighbour %d outside its zone", t, n);
                const nm_tri *b = &p->tris[n];
                int back = -1;
                for (int j = 0; j < 3; j++)
                    if (b->nb[j] == (int32_t)t) back = j;
                cr_assert(back >= 0, "triangle %u -> %d not symmetric", t, n);
                cr_assert(b->v[back] == a->v[(k + 1) % 3] && b->v[(back + 1) % 3] == a->v[k],
                          "triangle %u and %d are not neighbours across a reversed edge", t, n);
                cr_assert_eq(p->components[t], p->components[n], "neighbours %u, %d in different components", t, n);
                links[nl++] = (nm_link){t, (uint32_t)n};
            }
        }
        /* Components numbered in order of first triangle, count matches. */
        uint32_t next = 0;
        for (uint32_t t = z->first_tri; t < z->first_tri + z->tri_count; t++) {
            cr_assert(p->components[t] <= next, "component %u of triangle %u not in first-triangle order",
                      p->components[t], t);
            if (p->components[t] == next) next++;
        }
        if (!(z->flags & NM_ZONE_FLAG_TIER)) cr_assert_eq(z->component_count, next, "zone %u component count", zi);
    }
    qsort(links, nl, sizeof *links, cmp_link);
    cr_assert_eq(p->link_count, nl, "links: %u, neighbour pairs: %u", p->link_count, nl);
    for (uint32_t i = 0; i < nl; i++)
        cr_assert(p->links[i].src == links[i].src && p->links[i].dst == links[i].dst, "link %u", i);
    free(links);
    /* Component connectivity: a component's triangles are reachable from its first one. */
    uint32_t *stack = malloc(sizeof(uint32_t) * (p->tri_count + 1));
    uint8_t *seen = calloc(p->tri_count + 1, 1);
    uint64_t roots = 0, comps = 0;
    for (uint32_t zi = 0; zi < p->zone_count; zi++)
        if (!(p->zones[zi].flags & NM_ZONE_FLAG_TIER)) comps += p->zones[zi].component_count;
    for (uint32_t t = 0; t < p->tri_count; t++) {
        if (seen[t]) continue;
        roots++;
        uint32_t sp = 0;
        stack[sp++] = t;
        seen[t] = 1;
        while (sp) {
            uint32_t x = stack[--sp];
            cr_assert_eq(p->components[x], p->components[t], "component not connected at triangle %u", x);
            for (int k = 0; k < 3; k++) {
                int32_t n = p->tris[x].nb[k];
                if (n >= 0 && !seen[n]) seen[n] = 1, stack[sp++] = (uint32_t)n;
            }
        }
    }
    free(stack);
    free(seen);
    cr_assert_eq(roots, comps, "%llu connected sets, %llu components", (unsigned long long)roots,
                 (unsigned long long)comps);
    cr_assert_eq(p->surface_count, p->tri_count, "BSRF has one record per triangle");
    for (uint32_t t = 0; t < p->surface_count; t++)
        cr_assert_eq(p->surfaces[t].flags, 1u << p->surfaces[t].area, "BSRF %u flags", t);
}

const char *shared_data(void)
{
    const char *d = getenv("NM_SHARED_DATA");
    struct stat st;
    if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    return d;
}

const char *source_root(void)
{
    const char *d = getenv("NM_SOURCE_ROOT");
    return d ? d : ".";
}
