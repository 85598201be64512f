/* plugin.c — the entry symbol and the engine registry (引擎装载 as the host sees it): one engine per
 * (absolute pack path, zone), opened once and reference-counted; engines on one pack share one
 * copy of its BGRD bytes (by the file's FNV, checked byte for byte) and one parsed sidecar (by
 * file identity), both freed with the last holder; the thread's last error; warm and
 * regions_near under the engine's lock. */
#include "plugin_internal.h"
#include "zone/zone.h"
#include "occluder.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NM_API __attribute__((visibility("default")))

/* ---- last error (per thread: two hosts threads never see each other's message) ------------ */

static _Thread_local char g_last_error[1024];

int nm_plugin_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
    va_end(ap);
    return code;
}

void nm_plugin_clear_error(void) { g_last_error[0] = '\0'; }
const char *nm_plugin_last_error(void) { return g_last_error; }

/* ---- what engines on one pack share (引擎装载, #6219) ----------------------------------------
 * The BGRD section bytes, keyed by the whole file's FNV and checked byte for byte on a hit; the
 * parsed sidecar, keyed by its file identity (absolute path, size, modification time, the main
 * pack's build_hash and FNV) and by the grid bytes it was validated against. The caches hold
 * weak references: an entry lives as long as an engine holds it and goes with the last one. */

typedef struct nm_shared_grid {
    uint64_t fnv;
    uint8_t *bytes;
    uint64_t size;
    int refs;
    struct nm_shared_grid *next;
} nm_shared_grid;

typedef struct nm_fields_id {
    char *path;                  /* absolute sidecar path */
    uint64_t size;
    int64_t mtime_s, mtime_ns;
    uint64_t build_hash, fnv;
} nm_fields_id;

typedef struct nm_shared_fields {
    nm_fields_id id;
    const nm_shared_grid *grid;  /* the bytes it was validated against */
    nm_bnvf fields;
    int refs;
    struct nm_shared_fields *next;
} nm_shared_fields;

/* The registry is the plugin's only global mutable state (architecture.md, Conventions). */
static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static nm_plugin_engine *g_engines;
static nm_shared_grid *g_grids;
static nm_shared_fields *g_fields;

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)nm_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Makes the pack's BGRD section borrow the bytes another engine already holds when the file's FNV
 * and the bytes are the same; else the pack's copy becomes the shared one. Called with g_reg_mu. */
static void share_grid(nm_plugin_engine *e)
{
    e->bgrd_section = -1;
    for (uint32_t i = 0; i < e->pack.section_count; i++) {
        nm_section *s = &e->pack.sections[i];
        if (memcmp(s->tag, "BGRD", 4) != 0) continue;
        if (!s->bytes) return; /* the first BGRD entry is the one the engine reads */
        for (nm_shared_grid *g = g_grids; g; g = g->next) {
            /* identity byte for byte, not by hash alone: a colliding file must not reuse bytes */
            if (g->fnv != e->pack.file_fnv || g->size != s->size ||
                memcmp(g->bytes, s->bytes, (size_t)s->size) != 0)
                continue;
            nm_free(s->bytes);
            s->bytes = g->bytes;
            g->refs++;
            e->grid = g;
            e->bgrd_section = (int)i;
            return;
        }
        nm_shared_grid *g = (nm_shared_grid *)nm_calloc(1, sizeof *g);
        if (!g) return; /* the engine keeps its own copy */
        g->fnv = e->pack.file_fnv;
        g->bytes = s->bytes;
        g->size = s->size;
        g->refs = 1;
        g->next = g_grids;
        g_grids = g;
        e->grid = g;
        e->bgrd_section = (int)i;
        return;
    }
}

/* Gives the borrowed bytes back before the pack is freed. Called with g_reg_mu. */
static void unshare_grid(nm_plugin_engine *e)
{
    if (!e->grid) return;
    if (e->bgrd_section >= 0 && (uint32_t)e->bgrd_section < e->pack.section_count)
        e->pack.sections[e->bgrd_section].bytes = NULL;
    nm_shared_grid *g = e->grid;
    e->grid = NULL;
    if (--g->refs > 0) return;
    for (nm_shared_grid **p = &g_grids; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    nm_free(g->bytes);
    nm_free(g);
}

/* The identity of the sidecar paired with the pack at abs; false when it cannot be told (no
 * file: the engine's own load then reports why). */
static bool fields_identity(const char *abs, const nm_pack *pack, nm_fields_id *id)
{
    memset(id, 0, sizeof *id);
    char *side = nm_fields_sidecar_path(abs);
    char real[PATH_MAX];
    struct stat st;
    bool ok = side && realpath(side, real) && stat(real, &st) == 0 && S_ISREG(st.st_mode);
    nm_free(side);
    if (!ok || !(id->path = dup_str(real))) return false;
    id->size = (uint64_t)st.st_size;
    id->mtime_s = (int64_t)st.st_mtim.tv_sec;
    id->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
    id->build_hash = pack->build_hash;
    id->fnv = pack->file_fnv;
    return true;
}

static bool fields_id_equal(const nm_fields_id *a, const nm_fields_id *b)
{
    return strcmp(a->path, b->path) == 0 && a->size == b->size && a->mtime_s == b->mtime_s &&
           a->mtime_ns == b->mtime_ns && a->build_hash == b->build_hash && a->fnv == b->fnv;
}

/* The parsed sidecar another engine on these grid bytes already holds, or NULL. g_reg_mu. */
static nm_shared_fields *find_fields(const nm_fields_id *id, const nm_shared_grid *grid)
{
    for (nm_shared_fields *f = g_fields; f; f = f->next)
        if (f->grid == grid && fields_id_equal(&f->id, id)) return f;
    return NULL;
}

/* After the engine loaded its own sidecar: it becomes the shared one when the file did not change
 * during the load (same identity before and after). Called with g_reg_mu. */
static void publish_fields(nm_plugin_engine *e, nm_fields_id *before)
{
    nm_fields_id after;
    if (!fields_identity(e->path, &e->pack, &after)) return;
    bool same = fields_id_equal(before, &after);
    nm_free(after.path);
    if (!same) return;
    nm_shared_fields *f = (nm_shared_fields *)nm_calloc(1, sizeof *f);
    if (!f) return; /* the engine keeps its own */
    if (!nm_route_engine_take_fields(&e->eng, &f->fields)) {
        nm_free(f);
        return;
    }
    f->id = *before;
    before->path = NULL;
    f->grid = e->grid;
    f->refs = 1;
    f->next = g_fields;
    g_fields = f;
    e->fields = f;
}

/* Called with g_reg_mu, after the engine's close. */
static void unshare_fields(nm_plugin_engine *e)
{
    nm_shared_fields *f = e->fields;
    if (!f) return;
    e->fields = NULL;
    if (--f->refs > 0) return;
    for (nm_shared_fields **p = &g_fields; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    nm_bnvf_free(&f->fields);
    nm_free(f->id.path);
    nm_free(f);
}

static void engine_destroy(nm_plugin_engine *e)
{
    nm_route_engine_close(&e->eng);
    unshare_fields(e);
    unshare_grid(e);
    nm_pack_free(&e->pack);
    pthread_mutex_destroy(&e->mu);
    nm_free(e->path);
    nm_free(e->zone);
    nm_free(e);
}

static nm_plugin_engine *api_open(const char *pack_path, const char *zone, const char *nogo_path)
{
    nm_plugin_clear_error();
    if (!pack_path || !*pack_path || !zone || !*zone) {
        nm_plugin_fail(NM_ERR_ARG, "open: the pack path and the zone name are required");
        return NULL;
    }
    char abs[PATH_MAX];
    if (!realpath(pack_path, abs)) {
        nm_plugin_fail(NM_ERR_IO, "open: pack %s: cannot be found", pack_path);
        return NULL;
    }
    pthread_mutex_lock(&g_reg_mu);
    for (nm_plugin_engine *e = g_engines; e; e = e->next)
        if (strcmp(e->path, abs) == 0 && strcmp(e->zone, zone) == 0) {
            e->refs++;
            pthread_mutex_unlock(&g_reg_mu);
            return e;
        }
    /* Loads happen under the registry lock: two opens of one pack must see each other's bytes. */
    nm_plugin_engine *e = (nm_plugin_engine *)nm_calloc(1, sizeof *e);
    if (!e || pthread_mutex_init(&e->mu, NULL) != 0) {
        nm_free(e);
        pthread_mutex_unlock(&g_reg_mu);
        nm_plugin_fail(NM_ERR_NOMEM, "open: out of memory");
        return NULL;
    }
    e->refs = 1;
    e->bgrd_section = -1;
    e->path = dup_str(abs);
    e->zone = dup_str(zone);
    nm_error err = {0};
    int rc = NM_OK;
    if (!e->path || !e->zone) {
        rc = nm_fail(&err, NM_ERR_NOMEM, "out of memory");
    } else {
        nm_pack_load_opts lo = {0};
        lo.zone = zone;
        rc = nm_pack_load(abs, &lo, &e->pack, &err);
        if (rc == NM_OK && nm_pack_find_zone(&e->pack, zone) < 0)
            rc = nm_fail(&err, NM_ERR_ARG, "zone %s is not in the pack", zone);
    }
    nm_fields_id fid = {0};
    if (rc == NM_OK) {
        share_grid(e);
        /* the sidecar is shared only over shared grid bytes: it was validated against them */
        nm_shared_fields *f = NULL;
        if (e->grid && fields_identity(abs, &e->pack, &fid)) f = find_fields(&fid, e->grid);
        rc = nm_route_engine_open_shared(&e->eng, &e->pack, abs, f ? &f->fields : NULL, nogo_path,
                                         0, &err);
        if (rc == NM_OK && f) {
            f->refs++;
            e->fields = f;
        } else if (rc == NM_OK && fid.path) {
            publish_fields(e, &fid);
        }
    }
    nm_free(fid.path);
    if (rc != NM_OK) {
        nm_plugin_fail(rc, "open %s zone %s: %s", pack_path, zone, err.msg);
        engine_destroy(e);
        pthread_mutex_unlock(&g_reg_mu);
        return NULL;
    }
    int zi = nm_pack_find_zone(&e->pack, zone);
    float fy = e->pack.zones[zi].floor_y;
    e->floor_y = fy > NM_kFloorYValidMin ? (double)fy : NM_PLUGIN_NONE;
    e->next = g_engines;
    g_engines = e;
    pthread_mutex_unlock(&g_reg_mu);
    return e;
}

static void api_close(nm_plugin_engine *e)
{
    if (!e) return;
    pthread_mutex_lock(&g_reg_mu);
    if (--e->refs > 0) {
        pthread_mutex_unlock(&g_reg_mu);
        return;
    }
    for (nm_plugin_engine **p = &g_engines; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    /* The last holder: no plan can be running (the host must not close during a call), but
     * take the engine's lock so a late call on another thread finishes first. */
    pthread_mutex_lock(&e->mu);
    pthread_mutex_unlock(&e->mu);
    engine_destroy(e);
    /* The decoded occluder scenes outlive single engines (one decode per pack and zone); with
     * no engine left nothing can use them, and a host that unloads the plugin loses nothing. */
    if (!g_engines) nm_occ_cache_release_all();
    pthread_mutex_unlock(&g_reg_mu);
}

static void api_request_init(nm_plugin_request *r, double sx, double sy, double gx, double gy)
{
    if (!r) return;
    memset(r, 0, sizeof *r);
    r->start_x = sx;
    r->start_y = sy;
    r->goal_x = gx;
    r->goal_y = gy;
    r->start_floor_y = r->goal_floor_y = r->goal_deck_y = r->start_deck_y = NM_PLUGIN_NONE;
}

static int api_warm(nm_plugin_engine *e)
{
    nm_plugin_clear_error();
    if (!e) return nm_plugin_fail(NM_ERR_ARG, "warm: no engine");
    nm_error err = {0};
    pthread_mutex_lock(&e->mu);
    int rc = nm_route_warm(&e->eng, e->zone, &err);
    pthread_mutex_unlock(&e->mu);
    if (rc != NM_OK) return nm_plugin_fail(rc, "warm zone %s: %s", e->zone, err.msg);
    return NM_OK;
}

static int api_regions_near(nm_plugin_engine *e, const double *xy, uint32_t n, uint32_t *start,
                            uint32_t **rids)
{
    nm_plugin_clear_error();
    if (rids) *rids = NULL;
    if (!e || !start || !rids || (n > 0 && !xy))
        return nm_plugin_fail(NM_ERR_ARG, "regions_near: missing engine, points or output");
    for (uint32_t i = 0; i < 2 * n; i++)
        if (!isfinite(xy[i]))
            return nm_plugin_fail(NM_ERR_ARG, "regions_near: point %u is not finite", i / 2);
    nm_error err = {0};
    pthread_mutex_lock(&e->mu);
    int rc = nm_route_regions_near(&e->eng, e->zone, xy, n, start, rids, &err);
    pthread_mutex_unlock(&e->mu);
    if (rc != NM_OK) return nm_plugin_fail(rc, "regions_near zone %s: %s", e->zone, err.msg);
    return NM_OK;
}

/* Start recovery's snap on the engine's cleaned zone (built by warm when not cached yet). */
static int api_snap(nm_plugin_engine *e, double x, double y, double floor_y, double radius,
                    double *sx, double *sy, double *dist)
{
    nm_plugin_clear_error();
    if (!e || !sx || !sy || !dist) return nm_plugin_fail(NM_ERR_ARG, "snap: missing engine or output");
    if (!isfinite(x) || !isfinite(y) || isnan(radius) || isnan(floor_y))
        return nm_plugin_fail(NM_ERR_ARG, "snap: (%g, %g) is not a finite point", x, y);
    nm_error err = {0};
    pthread_mutex_lock(&e->mu);
    int rc = nm_route_warm(&e->eng, e->zone, &err);
    const nm_zone_clean *zc = NULL;
    for (int i = 0; rc == NM_OK && i < NM_ROUTE_ZONE_CACHE; i++) {
        const nm_route_zone_entry *z = &e->eng.cache[i];
        if (z->valid && z->name && strcmp(z->name, e->zone) == 0 && z->zc_rc == NM_OK) zc = z->zc;
    }
    nm_zone_snap_result sr;
    if (rc == NM_OK && !zc) rc = nm_fail(&err, NM_ERR_STATE, "the zone has no cleaned mesh");
    if (rc == NM_OK) {
        nm_zone_snap_opts o = nm_zone_snap_defaults();
        o.floor_y = floor_y > NM_PLUGIN_VALID_MIN ? (float)floor_y : NM_kFloorYNone;
        o.radius = radius > 0 ? radius : 0;
        o.fallback_radius = radius > 0 ? radius : 0;
        rc = nm_zone_snap(zc, x, y, &o, &sr, &err);
    }
    pthread_mutex_unlock(&e->mu);
    if (rc != NM_OK) return nm_plugin_fail(rc, "snap (%.2f, %.2f) in zone %s: %s", x, y, e->zone, err.msg);
    *sx = sr.x;
    *sy = sr.y;
    *dist = sr.dist;
    return NM_OK;
}

static void api_ids_free(uint32_t *rids) { nm_free(rids); }

static double api_zone_floor_y(nm_plugin_engine *e) { return e ? e->floor_y : NM_PLUGIN_NONE; }

static int api_shared_info(nm_plugin_engine *e, nm_plugin_shared_info *out)
{
    nm_plugin_clear_error();
    if (!out) return nm_plugin_fail(NM_ERR_ARG, "shared_info: no output");
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g_reg_mu);
    for (nm_plugin_engine *p = g_engines; p; p = p->next) out->live_engines++;
    for (nm_shared_grid *g = g_grids; g; g = g->next) out->live_grids++;
    for (nm_shared_fields *f = g_fields; f; f = f->next) out->live_fields++;
    if (e) {
        const nm_section *s = nm_pack_section(&e->pack, "BGRD");
        out->grid_bytes = s ? s->bytes : NULL;
        out->grid_size = s ? s->size : 0;
        out->grid_holders = e->grid ? (uint32_t)e->grid->refs : 0;
        out->fields = e->fields ? (const void *)&e->fields->fields : NULL;
        out->fields_holders = e->fields ? (uint32_t)e->fields->refs : 0;
    }
    pthread_mutex_unlock(&g_reg_mu);
    return NM_OK;
}

static const nm_plugin_api g_api_v1 = {
    .abi_version = NM_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(nm_plugin_api),
    .open = api_open,
    .close = api_close,
    .request_init = api_request_init,
    .plan = nm_plugin_plan,
    .result_free = nm_plugin_result_free,
    .plan_json = nm_plugin_plan_json,
    .result_json = nm_plugin_result_json,
    .string_free = nm_plugin_string_free,
    .warm = api_warm,
    .regions_near = api_regions_near,
    .ids_free = api_ids_free,
    .snap = api_snap,
    .zone_floor_y = api_zone_floor_y,
    .last_error = nm_plugin_last_error,
    .shared_info = api_shared_info,
};

NM_API const nm_plugin_api *nm_plugin_get(int abi_version)
{
    return abi_version == NM_PLUGIN_ABI_VERSION ? &g_api_v1 : NULL;
}
