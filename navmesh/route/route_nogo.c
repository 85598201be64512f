/* route_nogo.c — the authored no-go table (reference-maaend.md §4.9, article 端点在虚拟禁区内):
 * reading nogo_zones.json, resolving tier polygons to a height band on the tier's floor, and the
 * endpoint test. A missing file means no zones; a file that cannot be read makes the engine
 * unusable, since a misread table would open what the author closed. */
#include "route.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = (char *)nm_malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

void nm_nogo_table_free(nm_nogo_table *t)
{
    if (!t) return;
    for (uint32_t z = 0; z < t->nzones; z++) {
        nm_nogo_zone *zn = &t->zones[z];
        for (uint32_t p = 0; p < zn->npolys; p++) {
            nm_free(zn->polys[p].xy);
            nm_free(zn->polys[p].id);
            nm_free(zn->polys[p].tier);
        }
        nm_free(zn->polys);
        nm_free(zn->name);
    }
    nm_free(t->zones);
    memset(t, 0, sizeof *t);
}

static int parse_entry(const cJSON *e, const char *name, const char *zone, uint32_t idx,
                       nm_nogo_entry *out, nm_error *err)
{
    if (!cJSON_IsObject(e))
        return nm_fail(err, NM_ERR_CORRUPT, "%s: zone '%s': entry %u: not an object", name, zone, idx);
    const cJSON *poly = cJSON_GetObjectItemCaseSensitive(e, "poly");
    if (!cJSON_IsArray(poly))
        return nm_fail(err, NM_ERR_CORRUPT, "%s: zone '%s': entry %u: field 'poly' missing or not an array",
                       name, zone, idx);
    int n = cJSON_GetArraySize(poly);
    if (n < 3)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: zone '%s': entry %u: field 'poly' has %d points (need >= 3)",
                       name, zone, idx, n);
    out->xy = (double *)nm_calloc((size_t)n * 2, sizeof(double));
    if (!out->xy) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    out->n = (uint32_t)n;
    int k = 0;
    const cJSON *pt;
    cJSON_ArrayForEach(pt, poly) {
        const cJSON *x = cJSON_GetArrayItem(pt, 0), *y = cJSON_GetArrayItem(pt, 1);
        if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2 || !cJSON_IsNumber(x) ||
            !cJSON_IsNumber(y) || !isfinite(x->valuedouble) || !isfinite(y->valuedouble))
            return nm_fail(err, NM_ERR_CORRUPT,
                           "%s: zone '%s': entry %u: field 'poly' point %d is not [x, y] numbers",
                           name, zone, idx, k);
        out->xy[2 * k] = x->valuedouble;
        out->xy[2 * k + 1] = y->valuedouble;
        k++;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    if (id && !cJSON_IsNull(id)) {
        if (!cJSON_IsString(id))
            return nm_fail(err, NM_ERR_CORRUPT, "%s: zone '%s': entry %u: field 'id' is not a string",
                           name, zone, idx);
        if (!(out->id = dup_str(id->valuestring))) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    }
    const cJSON *tier = cJSON_GetObjectItemCaseSensitive(e, "tier");
    if (tier && !cJSON_IsNull(tier)) {
        if (!cJSON_IsString(tier))
            return nm_fail(err, NM_ERR_CORRUPT, "%s: zone '%s': entry %u: field 'tier' is not a string",
                           name, zone, idx);
        if (!(out->tier = dup_str(tier->valuestring)))
            return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    }
    return NM_OK;
}

int nm_nogo_parse(const char *json, size_t len, const char *name, nm_nogo_table *out,
                  nm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "nogo table";
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) return nm_fail(err, NM_ERR_CORRUPT, "%s: not valid JSON", name);
    int rc = NM_OK;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *zones = cJSON_GetObjectItemCaseSensitive(root, "zones");
    if (!cJSON_IsObject(root)) {
        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: top level is not an object", name);
    } else if (!cJSON_IsNumber(ver) || ver->valuedouble != 1.0) {
        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: field 'version' missing or not 1", name);
    } else if (!cJSON_IsObject(zones)) {
        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: field 'zones' missing or not an object", name);
    } else {
        int nz = cJSON_GetArraySize(zones);
        out->zones = (nm_nogo_zone *)nm_calloc(nz ? (size_t)nz : 1, sizeof *out->zones);
        if (!out->zones) rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
        const cJSON *z;
        cJSON_ArrayForEach(z, zones) {
            if (rc) break;
            nm_nogo_zone *zn = &out->zones[out->nzones++];
            if (!(zn->name = dup_str(z->string))) {
                rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
                break;
            }
            if (!cJSON_IsArray(z)) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "%s: zone '%s': not an array of polygons", name, z->string);
                break;
            }
            int np = cJSON_GetArraySize(z);
            zn->polys = (nm_nogo_entry *)nm_calloc(np ? (size_t)np : 1, sizeof *zn->polys);
            if (!zn->polys) {
                rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
                break;
            }
            const cJSON *e;
            cJSON_ArrayForEach(e, z) {
                rc = parse_entry(e, name, z->string, zn->npolys, &zn->polys[zn->npolys], err);
                zn->npolys++;
                if (rc) break;
            }
        }
    }
    cJSON_Delete(root);
    if (rc) nm_nogo_table_free(out);
    return rc;
}

int nm_nogo_load(const char *path, nm_nogo_table *out, bool *missing, nm_error *err)
{
    memset(out, 0, sizeof *out);
    *missing = false;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) {
            *missing = true; /* no table: no authored zones */
            return NM_OK;
        }
        return nm_fail(err, NM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = NM_OK;
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 4096;
            char *nb = (char *)nm_realloc(buf, nc);
            if (!nb) {
                rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            buf = nb;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = nm_fail(err, NM_ERR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (rc == NM_OK) rc = nm_nogo_parse(buf, n, path, out, err);
    nm_free(buf);
    return rc;
}

const nm_nogo_zone *nm_nogo_find_zone(const nm_nogo_table *t, const char *zone)
{
    for (uint32_t z = 0; t && z < t->nzones; z++)
        if (strcmp(t->zones[z].name, zone) == 0) return &t->zones[z];
    return NULL;
}

int nm_nogo_resolve(const nm_nogo_table *t, const nm_pack *pack, const char *zone,
                    nm_nogo_poly **polys, uint32_t *n, nm_error *err)
{
    *polys = NULL;
    *n = 0;
    const nm_nogo_zone *zn = nm_nogo_find_zone(t, zone);
    if (!zn || zn->npolys == 0) return NM_OK;
    nm_nogo_poly *p = (nm_nogo_poly *)nm_calloc(zn->npolys, sizeof *p);
    if (!p) return nm_fail(err, NM_ERR_NOMEM, "no-go table: out of memory");
    for (uint32_t i = 0; i < zn->npolys; i++) {
        const nm_nogo_entry *e = &zn->polys[i];
        p[i] = (nm_nogo_poly){e->xy, e->n, false, 0.0, e->id};
        if (e->tier) {
            int ti = pack ? nm_pack_find_zone(pack, e->tier) : -1;
            if (ti < 0) {
                nm_free(p);
                return nm_fail(err, NM_ERR_CORRUPT, "no-go table: zone '%s': entry %u (%s): tier '%s' not in the pack",
                               zone, i, e->id ? e->id : "-", e->tier);
            }
            float fy = pack->zones[ti].floor_y;
            if (fy > NM_kFloorYValidMin) {
                p[i].banded = true;
                p[i].floor_y = fy;
            }
        }
    }
    *polys = p;
    *n = zn->npolys;
    return NM_OK;
}

int nm_nogo_hit(const nm_nogo_poly *polys, uint32_t n, double x, double y, double h)
{
    for (uint32_t i = 0; i < n; i++) {
        if (polys[i].banded && !(fabs(h - polys[i].floor_y) <= NM_kBaseNavFloorBand)) continue;
        if (nm_nogo_poly_contains(&polys[i], x, y)) return (int)i;
    }
    return -1;
}
