/* route_engine.c — the planner's engine (design article 引擎装载, 前置检查与选类, 窗口分档):
 * loading the grid section, the paired sidecar and the no-go table; a cache of the two most
 * recently used zones; planLocked with the eleven checks before the window in the article's
 * order, then the tier loop (buildWindow -> routeWindow searches -> post-processing), recording
 * which tier was taken and why each earlier one was rejected. */
#include "route.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../zone/zone.h"
#include "../search/search.h"
#include "../window/window_gate.h"
#include "../sight/sight.h"
#include "post.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

char *nm_fields_sidecar_path(const char *p)
{
    size_t n = strlen(p);
    char *out = (char *)nm_malloc(n + 16);
    if (!out) return NULL;
    if (n >= 7 && strcmp(p + n - 7, ".nav.gz") == 0)
        snprintf(out, n + 16, "%.*s.fields.nav.gz", (int)(n - 7), p);
    else if (n >= 4 && strcmp(p + n - 4, ".nav") == 0)
        snprintf(out, n + 16, "%.*s.fields.nav", (int)(n - 4), p);
    else
        snprintf(out, n + 16, "%s.fields", p);
    return out;
}

static void entry_free(nm_route_zone_entry *z)
{
    nm_free(z->name);
    nm_zone_clean_free(z->zc);
    if (z->fz_rc == NM_OK) nm_bnvf_zone_data_free(&z->fz);
    nm_free(z->polys);
    nm_free(z->bbox_rid);
    nm_free(z->bbox);
    memset(z, 0, sizeof *z);
}

/* 引擎装载: grid section, sidecar (own or borrowed), no-go table; any failure makes the engine
 * unusable. */
int nm_route_engine_open_shared(nm_route_engine *e, const nm_pack *pack, const char *pack_path,
                                const nm_bnvf *fields, const char *nogo_path, int workers,
                                nm_error *err)
{
    memset(e, 0, sizeof *e);
    e->pack = pack;
    e->workers = workers;
    if (nm_kept_max(0) < NM_ROUTE_KEPT_BYTES) nm_kept_max(NM_ROUTE_KEPT_BYTES);
    const nm_section *s = nm_pack_section(pack, "BGRD");
    if (!s || !s->bytes) {
        e->status = nm_fail(&e->err, NM_ERR_STATE, "the pack has no pre-baked grid section (BGRD)");
    } else if ((e->status = nm_bgrd_parse(s->bytes, (size_t)s->size, &e->grid, &e->err)) == NM_OK) {
        e->has_grid = true;
        if (fields) {
            /* the lender validated it against the same bytes; pairing is still checked here */
            if (fields->build_hash != pack->build_hash || fields->fnv != pack->file_fnv ||
                fields->bgrd_zone_count != e->grid.zone_count) {
                e->status = nm_fail(&e->err, NM_ERR_ARG, "the shared fields sidecar belongs to another pack");
            } else {
                e->fields = *fields;
                e->has_fields = true;
                e->fields_borrowed = true;
            }
        } else {
            char *side = nm_fields_sidecar_path(pack_path ? pack_path : "");
            if (!side) {
                e->status = nm_fail(&e->err, NM_ERR_NOMEM, "out of memory");
            } else {
                e->status = nm_bnvf_load(side, pack->build_hash, pack->file_fnv, &e->grid, &e->fields, &e->err);
                if (e->status == NM_OK) e->has_fields = true;
                else nm_error_prefix(&e->err, "fields sidecar %s", side);
                nm_free(side);
            }
        }
    } else {
        nm_error_prefix(&e->err, "grid section");
    }
    if (e->status == NM_OK && nogo_path) {
        bool missing = false;
        e->status = nm_nogo_load(nogo_path, &e->nogo, &missing, &e->err);
        if (e->status) nm_error_prefix(&e->err, "no-go table (engine disabled: a misread table would open closed areas)");
    }
    if (e->status == NM_OK) {
        /* the FallGate's occluder next to the pack; a missing one leaves every drop open */
        nm_error gerr = {0};
        if (nm_window_gate_attach(e, pack_path, &gerr) == NM_ERR_NOMEM)
            e->status = nm_fail(&e->err, NM_ERR_NOMEM, "fall gate: %.400s", gerr.msg);
    }
    if (e->status && err) *err = e->err;
    return e->status;
}

int nm_route_engine_open(nm_route_engine *e, const nm_pack *pack, const char *pack_path,
                         const char *nogo_path, int workers, nm_error *err)
{
    return nm_route_engine_open_shared(e, pack, pack_path, NULL, nogo_path, workers, err);
}

bool nm_route_engine_take_fields(nm_route_engine *e, nm_bnvf *out)
{
    if (!e || !out || !e->has_fields || e->fields_borrowed) return false;
    *out = e->fields;
    e->fields_borrowed = true;
    return true;
}

/* A heap blocker set (the kept window's). */
static void blockers_free(nm_sight_blockers *b)
{
    if (!b) return;
    nm_sight_blockers_free(b);
    nm_free(b);
}

/* *out: 障碍线段 of window w (they depend on the window alone). */
static int blockers_new(const nm_window *w, nm_sight_blockers **out, nm_error *err)
{
    nm_sight_blockers *b = (nm_sight_blockers *)nm_calloc(1, sizeof *b);
    int rc = b ? nm_sight_blockers_build(b, w, err) : nm_fail(err, NM_ERR_NOMEM, "post-processing: out of memory");
    if (rc) nm_free(b);
    else *out = b;
    return rc;
}

void nm_route_engine_close(nm_route_engine *e)
{
    if (!e) return;
    nm_window_gate_detach(e);
    for (int i = 0; i < NM_ROUTE_ZONE_CACHE; i++) entry_free(&e->cache[i]);
    if (e->has_fields && !e->fields_borrowed) nm_bnvf_free(&e->fields);
    if (e->has_grid) nm_bgrd_free(&e->grid);
    nm_nogo_table_free(&e->nogo);
    nm_bgrd_out_free(&e->patch_start);
    nm_bgrd_out_free(&e->patch_goal);
    nm_bgrd_out_free(&e->decode);
    nm_bgrd_cache_free(&e->tiles);
    nm_window_free(&e->kept);
    nm_free(e->kept_key.discs);
    nm_search_state_free(e->kept_state);
    blockers_free(e->kept_blk);
    memset(e, 0, sizeof *e);
    nm_kept_release(); /* a closed zone's pages go back (another engine's plans map theirs anew) */
}

void nm_route_result_free(nm_route_result *r)
{
    if (!r) return;
    nm_free(r->xy);
    nm_free(r->clearance);
    nm_free(r->heights);
    nm_free(r->waypoints);
    nm_free(r->drops);
    nm_route_points *lists[] = {&r->dbg_topology, &r->dbg_taut, &r->dbg_pulled, &r->dbg_assembled};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        nm_free(lists[i]->xy);
        nm_free(lists[i]->heights);
        lists[i]->xy = NULL;
        lists[i]->heights = NULL;
        lists[i]->n = 0;
    }
    r->xy = NULL;
    r->clearance = r->heights = NULL;
    r->npoints = 0;
    r->waypoints = NULL;
    r->nwaypoints = 0;
    r->drops = NULL;
    r->ndrops = 0;
}

nm_route_request nm_route_request_defaults(const char *zone, double sx, double sy, double gx,
                                           double gy)
{
    nm_route_request q;
    memset(&q, 0, sizeof q);
    q.zone = zone;
    q.sx = sx;
    q.sy = sy;
    q.gx = gx;
    q.gy = gy;
    q.start_floor_y = q.goal_floor_y = q.goal_deck_y = q.start_deck_y = NM_kFloorYNone;
    return q;
}

/* zoneEntry: LRU of two; the least recently used entry is freed before a new one is built. */
static nm_route_zone_entry *zone_entry(nm_route_engine *e, const char *zone, int bgrd_zone)
{
    e->clock++;
    for (int i = 0; i < NM_ROUTE_ZONE_CACHE; i++)
        if (e->cache[i].valid && strcmp(e->cache[i].name, zone) == 0) {
            e->cache[i].used = e->clock;
            return &e->cache[i];
        }
    int victim = 0;
    for (int i = 0; i < NM_ROUTE_ZONE_CACHE; i++) {
        if (!e->cache[i].valid) {
            victim = i;
            break;
        }
        /* invalid ZoneCleans go first, then the least recently used */
        bool bad_i = e->cache[i].zc_rc != NM_OK, bad_v = e->cache[victim].zc_rc != NM_OK;
        if ((bad_i && !bad_v) || (bad_i == bad_v && e->cache[i].used < e->cache[victim].used)) victim = i;
    }
    nm_route_zone_entry *z = &e->cache[victim];
    entry_free(z); /* evict before building */
    size_t n = strlen(zone);
    z->name = (char *)nm_malloc(n + 1);
    if (!z->name) return NULL;
    memcpy(z->name, zone, n + 1);
    z->valid = true;
    z->used = e->clock;
    z->bgrd_zone = bgrd_zone;
    z->pack_zone = nm_pack_find_zone(e->pack, zone);
    z->zc_rc = nm_zone_clean_build(e->pack, zone, e->workers, &z->zc, &z->zc_err);
    z->fzon = bgrd_zone < (int)e->fields.bgrd_zone_count ? e->fields.zone_of_bgrd[bgrd_zone] : -1;
    if (z->fzon < 0)
        z->fz_rc = nm_fail(&z->fz_err, NM_ERR_CORRUPT, "the fields sidecar has no zone '%s'", zone);
    else
        z->fz_rc = nm_bnvf_zone_load(&e->fields, (uint32_t)z->fzon, &z->fz, &z->fz_err);
    z->polys_rc = nm_nogo_resolve(&e->nogo, e->pack, zone, &z->polys, &z->npolys, &z->polys_err);
    return z;
}

/* Out of memory only means the box is not kept (the value is still right). */
static void keep_bbox(nm_route_zone_entry *z, uint32_t rid, const nm_cell_rect *box)
{
    if (z->nbbox == z->bbox_cap) {
        uint32_t nc = z->bbox_cap ? 2 * z->bbox_cap : 8;
        uint32_t *nr = (uint32_t *)nm_realloc(z->bbox_rid, nc * sizeof *nr);
        if (nr) z->bbox_rid = nr;
        nm_cell_rect *nb = (nm_cell_rect *)nm_realloc(z->bbox, nc * sizeof *nb);
        if (nb) z->bbox = nb;
        if (!nr || !nb) return;
        z->bbox_cap = nc;
    }
    z->bbox_rid[z->nbbox] = rid;
    z->bbox[z->nbbox++] = *box;
}

static int cached_bbox(nm_route_engine *e, nm_route_zone_entry *z, uint32_t rid, nm_cell_rect *out,
                       nm_error *err)
{
    for (uint32_t i = 0; i < z->nbbox; i++)
        if (z->bbox_rid[i] == rid) {
            *out = z->bbox[i];
            return NM_OK;
        }
    int rc = nm_region_bbox(&e->grid, (uint32_t)z->bgrd_zone, rid, e->workers, out, err);
    if (rc) return rc;
    keep_bbox(z, rid, out);
    return NM_OK;
}

static void fail_check(nm_route_result *r, int check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_check(nm_route_result *r, int check, const char *fmt, ...)
{
    static const int code_of_check[12] = {
        NM_ROUTE_INTERNAL,        NM_ROUTE_ENGINE_UNUSABLE, NM_ROUTE_ENGINE_UNUSABLE,
        NM_ROUTE_ENGINE_UNUSABLE, NM_ROUTE_ENGINE_UNUSABLE, NM_ROUTE_START_OFF_MESH,
        NM_ROUTE_GOAL_OFF_MESH,   NM_ROUTE_NO_GO,           NM_ROUTE_OFF_WALKABLE,
        NM_ROUTE_GRID_DECODE,     NM_ROUTE_NO_WALKABLE_NEAR_START, NM_ROUTE_REGION_EMPTY};
    r->ok = false;
    r->check = check;
    r->code = check >= 0 && check < 12 ? code_of_check[check] : NM_ROUTE_INTERNAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

static int64_t gcell(double px) { return (int64_t)floor(px / NM_kCS); }

const char *nm_route_code_name(int code)
{
    static const char *const names[NM_ROUTE_CODE_COUNT] = {
        "ok",                   "engine_unusable",        "start_off_mesh",
        "goal_off_mesh",        "route_no_go",            "off_walkable_layer",
        "grid_decode_failed",   "no_walkable_near_start", "region_empty",
        "region_too_large",     "cancelled",              "route_disconnected",
        "route_unreachable",    "target_deck_unreachable", "start_deck_unreachable",
        "internal"};
    return code >= 0 && code < NM_ROUTE_CODE_COUNT ? names[code] : "internal";
}

/* The code of a search that ended the tiers without a route (失败的情形 5). */
static int search_fail_code(const nm_search_result *sr, bool goal_deck, bool start_deck)
{
    if (sr->status != NM_SEARCH_FAIL) return NM_ROUTE_INTERNAL; /* an escalation in the last tier */
    switch (sr->fail_kind) {
    case NM_SEARCH_FAIL_DECK_UNREACHABLE: return NM_ROUTE_TARGET_DECK_UNREACHABLE;
    case NM_SEARCH_FAIL_DISCONNECTED: return goal_deck ? NM_ROUTE_TARGET_DECK_UNREACHABLE : NM_ROUTE_DISCONNECTED;
    case NM_SEARCH_FAIL_NO_SNAP:
        if (start_deck && strstr(sr->message, "start deck")) return NM_ROUTE_START_DECK_UNREACHABLE;
        if (goal_deck) return NM_ROUTE_TARGET_DECK_UNREACHABLE;
        return NM_ROUTE_UNREACHABLE;
    default: return NM_ROUTE_INTERNAL;
    }
}

/* A patch around one or two points: global cells within r of each, as one rectangle. */
static int decode_patch(nm_route_engine *e, int zone, double x0, double y0, double x1, double y1,
                        int64_t r, nm_bgrd_out *out, nm_error *err)
{
    int64_t lx = gcell(fmin(x0, x1)) - r, hx = gcell(fmax(x0, x1)) + r + 1;
    int64_t ly = gcell(fmin(y0, y1)) - r, hy = gcell(fmax(y0, y1)) + r + 1;
    if (lx < INT32_MIN || hx > INT32_MAX || ly < INT32_MIN || hy > INT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "patch out of range");
    out->cache = &e->tiles;
    return nm_bgrd_decode_rect(&e->grid, (uint32_t)zone, (int32_t)lx, (int32_t)ly, (int32_t)hx,
                               (int32_t)hy, NULL, e->workers, out, err);
}

/* Does the patch cell of global cell (gx, gy) hold a non-Fill record of the region? (the spans
 * the window's seed step can take: vis3 is the region's own records without Fill) */
static bool cell_has_region(const nm_bgrd_out *patch, int64_t gx, int64_t gy, uint32_t region)
{
    if (gx < patch->gx0 || gy < patch->gy0 || gx >= patch->gx1 || gy >= patch->gy1) return false;
    const int64_t w = (int64_t)patch->gx1 - patch->gx0;
    int64_t cell = (gy - patch->gy0) * w + (gx - patch->gx0);
    for (size_t k = 0; k < patch->n; k++) {
        const nm_grid_rec *rc = &patch->recs[k];
        if (rc->cell == cell && rc->rid == region && !(rc->flags & NM_GRID_FILL)) return true;
    }
    return false;
}

/* Is there a non-Fill record of the region within kDeckBand of deck_y in the pick box (8 px)
 * around global cell (cgx, cgy)? */
static bool region_near_deck(const nm_bgrd_out *patch, int64_t cgx, int64_t cgy, uint32_t region, double deck_y)
{
    const int64_t w = (int64_t)patch->gx1 - patch->gx0;
    if (w <= 0) return false;
    for (size_t k = 0; k < patch->n; k++) {
        const nm_grid_rec *rc = &patch->recs[k];
        if (rc->rid != region || (rc->flags & NM_GRID_FILL) || fabs((double)rc->h - deck_y) > NM_kDeckBand) continue;
        int64_t gx = patch->gx0 + rc->cell % w, gy = patch->gy0 + rc->cell / w;
        if (llabs(gx - cgx) <= NM_PICK_RADIUS && llabs(gy - cgy) <= NM_PICK_RADIUS) return true;
    }
    return false;
}

/* Appends " h1 h2 ..." (the non-Fill records of the patch cell, m) to r->error. */
static void list_cell_heights(nm_route_result *r, const nm_bgrd_out *patch, int64_t gx, int64_t gy)
{
    size_t len = strlen(r->error);
    if (gx < patch->gx0 || gy < patch->gy0 || gx >= patch->gx1 || gy >= patch->gy1) return;
    const int64_t w = (int64_t)patch->gx1 - patch->gx0;
    int64_t cell = (gy - patch->gy0) * w + (gx - patch->gx0);
    for (size_t k = 0; k < patch->n && len + 12 < sizeof r->error; k++) {
        const nm_grid_rec *rc = &patch->recs[k];
        if (rc->cell != cell || (rc->flags & NM_GRID_FILL)) continue;
        int n = snprintf(r->error + len, sizeof r->error - len, " %.2f", (double)rc->h);
        if (n > 0) len += (size_t)n;
    }
}

/* 起点所在的面 step 2: a start triangle counts only when its seed cell holds a non-Fill span of
 * the goal deck's region. The seed is found as 选类 finds it (around the raw start's cell first,
 * then around the closest point, at the triangle's height), so an accepted triangle gives the
 * seed the window build then uses. */
typedef struct deck_accept {
    const nm_zone_clean *zc;
    const nm_bgrd_out *patch;
    uint32_t region;
    double sx, sy;            /* the raw start */
} deck_accept;

static bool accept_deck(void *ctx, uint32_t tri, double px, double py)
{
    deck_accept *d = (deck_accept *)ctx;
    double h = nm_zone_tri_height(d->zc, tri);
    nm_pick_rec r;
    if (!nm_pick_start_rec(d->patch, gcell(d->sx), gcell(d->sy), h, &r) &&
        !nm_pick_start_rec(d->patch, gcell(px), gcell(py), h, &r))
        return false;
    return cell_has_region(d->patch, r.gx, r.gy, d->region);
}

typedef struct los_ctx {
    nm_sight_view view;
    uint8_t *ground;         /* nm_sight_plain_ground of the window (los_prep, else the first
                                chord), NULL when it could not be made */
    bool ground_tried;
    const uint8_t *on_mask;  /* the on mask `on_far` is made from */
    uint8_t *on_far;         /* nm_sight_far of it once made, else NULL (the chords are then
                                walked sample by sample: the same answers) */
    /* With two threads the on field is made on a thread of its own while the first chords are
     * checked without it: far_buf until far_done, then on_far. The first such thread then makes
     * the window's blockers for post-processing (want_blk: none kept with the window), which
     * would otherwise be made after the search while the second core waits: 10-80 ms on a large
     * world's window, the geometry layer's Lazy Theta* covers them. */
    bool two;
    bool far_running;
    pthread_t far_th;
    atomic_bool far_done;
    uint8_t *far_buf;
    bool want_blk;
    nm_sight_blockers *blk; /* the thread's blockers once joined, NULL when it made none */
} los_ctx;

/* Reads far_buf (a copy of the on mask made before it starts) and the window only: the search
 * may free its open area before this thread is joined (a small window's geometry layer
 * escalating), and takes the field once far_done is set, without waiting for the blockers. */
static void *far_main(void *p)
{
    los_ctx *c = (los_ctx *)p;
    const nm_window *w = c->view.w;
    nm_sight_far(w->win.nx, w->win.ny, c->far_buf);
    atomic_store_explicit(&c->far_done, true, memory_order_release);
    if (c->want_blk) {
        nm_error e; /* a failure leaves them to post-processing, which reports it */
        (void)blockers_new(w, &c->blk, &e);
    }
    return NULL;
}

/* The on field's thread joined; its field dropped unless the search took it (los_adapter). */
static void far_join(los_ctx *c)
{
    if (!c->far_running) return;
    pthread_join(c->far_th, NULL);
    c->far_running = false;
    c->want_blk = false; /* the blockers are made once */
    nm_free(c->far_buf);
    c->far_buf = NULL;
}

static uint8_t *ground_field(const nm_window *w)
{
    nm_error e;
    uint8_t *g = nm_malloc((size_t)w->win.nx * (size_t)w->win.ny);
    if (g && nm_sight_plain_ground(w, g, &e) != NM_OK) {
        nm_free(g);
        g = NULL; /* the chords are then walked cell by cell */
    }
    return g;
}

/* The search's los_prep: the ground field, made while the corridor is built. */
static void los_prep(void *ctx)
{
    los_ctx *c = (los_ctx *)ctx;
    if (!c->ground_tried)
        c->ground = ground_field(c->view.w);
    c->ground_tried = true;
}

static bool los_adapter(void *ctx, const uint8_t *solidc, uint32_t a, uint32_t b)
{
    los_ctx *c = (los_ctx *)ctx;
    const nm_window *w = c->view.w;
    los_prep(c); /* when the search did not */
    if (c->on_mask != solidc) { /* a new open area: its on field, once */
        const size_t n = (size_t)w->win.nx * (size_t)w->win.ny;
        far_join(c);
        nm_free(c->on_far);
        c->on_far = NULL;
        c->on_mask = solidc;
        uint8_t *f = solidc ? nm_malloc(n) : NULL;
        if (f)
            memcpy(f, solidc, n);
        c->far_buf = f;
        atomic_store_explicit(&c->far_done, false, memory_order_relaxed);
        c->far_running = f && c->two && pthread_create(&c->far_th, NULL, far_main, c) == 0;
        if (f && !c->far_running) {
            nm_sight_far(w->win.nx, w->win.ny, f);
            c->on_far = f;
            c->far_buf = NULL;
        }
    }
    if (c->far_buf && atomic_load_explicit(&c->far_done, memory_order_acquire)) {
        c->on_far = c->far_buf; /* the thread is done with it (and may be making the blockers) */
        c->far_buf = NULL;
    }
    c->view.on = solidc;
    c->view.on_far = c->on_far; /* vis crosses the stretches the fields vouch for in jumps */
    c->view.ground_far = c->ground;
    return nm_sight_vis(&c->view, a, b);
}

static void note(nm_route_result *r, const char *fmt, int tier, const char *kind, uint64_t cells,
                 const char *why)
{
    size_t n = strlen(r->tier_notes);
    if (n + 1 >= sizeof r->tier_notes) return;
    snprintf(r->tier_notes + n, sizeof r->tier_notes - n, fmt, tier, kind,
             (unsigned long long)cells, why);
}

/* One warning line of the result (输入与输出: warnings travel with the route). */
static void add_warning(nm_route_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(nm_route_result *r, const char *fmt, ...)
{
    size_t n = strlen(r->warnings);
    if (n + 2 >= sizeof r->warnings) return;
    if (n) r->warnings[n++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings + n, sizeof r->warnings - n, fmt, ap);
    va_end(ap);
    r->nwarnings++;
}

static void search_warnings(nm_route_result *r, const nm_search_result *sr)
{
    uint32_t f = sr->warnings;
    if (f & NM_SEARCH_WARN_CORE) add_warning(r, "a search fell back to the core mask");
    if (f & NM_SEARCH_WARN_CELL) add_warning(r, "the baseline fell back to the cell level");
    if (f & NM_SEARCH_WARN_TOPO_FULL) add_warning(r, "the topology layer was re-solved on the whole window");
    if (f & NM_SEARCH_WARN_TOPO_BASE) add_warning(r, "the topology layer kept the baseline path");
    if (f & NM_SEARCH_WARN_GEO_FREE) add_warning(r, "the geometry layer was re-solved without the corridor");
    if (f & NM_SEARCH_WARN_GEO_TOPO) add_warning(r, "the geometry layer kept the topology cell path");
    if (f & NM_SEARCH_WARN_FACADE) add_warning(r, "the route crosses %u facade step(s)", sr->facade_steps);
    if (f & NM_SEARCH_WARN_NO_LANDING) add_warning(r, "%u off-mesh link(s) without a landing", sr->links_without_landing);
    if (f & NM_SEARCH_WARN_ALL_LINKS) add_warning(r, "access chains were opened for every off-mesh link");
}

/* 断开处: the located gap of a failed leg travels with the error. */
static void copy_gap(nm_route_result *r, const nm_search_result *sr)
{
    r->has_gap = sr->has_gap;
    if (!sr->has_gap) return;
    r->gap_sx = sr->gap_sx;
    r->gap_sy = sr->gap_sy;
    r->gap_gx = sr->gap_gx;
    r->gap_gy = sr->gap_gy;
    r->gap_dist = sr->gap_dist;
}

/* A diagnostic point list: xy interleaved, or x / y columns; heights optional. */
static int dbg_points(nm_route_points *p, const double *x, const double *y, const double *xy,
                      const float *h, uint32_t n)
{
    if (n == 0) return NM_OK;
    p->xy = (double *)nm_malloc((size_t)n * 2 * sizeof *p->xy);
    p->heights = h ? (float *)nm_malloc((size_t)n * sizeof *p->heights) : NULL;
    if (!p->xy || (h && !p->heights)) return NM_ERR_NOMEM;
    for (uint32_t k = 0; k < n; k++) {
        p->xy[2 * k] = xy ? xy[2 * k] : x[k];
        p->xy[2 * k + 1] = xy ? xy[2 * k + 1] : y[k];
        if (h) p->heights[k] = h[k];
    }
    p->n = n;
    return NM_OK;
}

/* The topology cell path as cell centres. */
static int dbg_path(nm_route_points *p, const nm_window *w, const nm_search_path *sp)
{
    if (sp->n == 0) return NM_OK;
    p->xy = (double *)nm_malloc((size_t)sp->n * 2 * sizeof *p->xy);
    p->heights = sp->h ? (float *)nm_malloc((size_t)sp->n * sizeof *p->heights) : NULL;
    if (!p->xy || (sp->h && !p->heights)) return NM_ERR_NOMEM;
    for (uint32_t k = 0; k < sp->n; k++) {
        uint32_t c = sp->cell[k];
        p->xy[2 * k] = w->win.x0 + ((double)(c % (uint32_t)w->win.nx) + 0.5) * NM_kCS;
        p->xy[2 * k + 1] = w->win.y0 + ((double)(c / (uint32_t)w->win.nx) + 0.5) * NM_kCS;
        if (sp->h) p->heights[k] = sp->h[k];
    }
    p->n = sp->n;
    return NM_OK;
}

static void check_fail(nm_route_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check_fail(nm_route_result *r, const char *fmt, ...)
{
    r->self_check_failures++;
    size_t n = strlen(r->self_check_msg);
    if (n + 2 >= sizeof r->self_check_msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->self_check_msg + n, sizeof r->self_check_msg - n, fmt, ap);
    va_end(ap);
    n = strlen(r->self_check_msg);
    if (n + 2 < sizeof r->self_check_msg) memcpy(r->self_check_msg + n, "; ", 3);
}

/* The self check of request.self_check (see route.h), in the window the route came from. */
static int self_check(nm_route_result *r, const nm_window *w, const nm_post_input *in,
                      const nm_post_output *po, const float *halong)
{
    const double *xy = r->xy;
    const uint32_t n = r->npoints;
    /* layers on the heights along the route, else (a drop broke that column) the search ones */
    const float *hl = halong ? halong : r->heights;
    nm_sight_view hard = {w, in->blk, NULL, in->oracle, true, hl != NULL};
    float *hout = (float *)nm_malloc(((size_t)in->oracle->cap + 1) * sizeof *hout);
    if (!hout) return NM_ERR_NOMEM;
    /* 1. every segment: vis_hard with layers, a drop's segment in the drop-permitting mode */
    if (!hl && in->kind != NM_POST_CELL_PATH) {
        r->self_checks++;
        check_fail(r, "the route has no heights");
    }
    /* the first and last segments join the raw ends (端点拼接: up to kSnapRadius off the reach
     * set, not walked by the planner); they are only counted when they fail */
    for (uint32_t k = 0; k + 1 < n; k++) {
        if (k == 0 || k + 2 == n) {
            hard.blk = in->blk;
            double ax = xy[2 * k], ay = xy[2 * k + 1], bx = xy[2 * k + 2], by = xy[2 * k + 3];
            if (!nm_sight_ok(&hard, ax, ay, bx, by, hl ? hl[k] : 0.0f, hl ? hl[k + 1] : 0.0f)) r->self_check_ends++;
            continue;
        }
        /* an off-mesh link's segment has no ground between its ends: not walked */
        if (po->link && po->link[k + 1]) continue;
        bool drop = false, after = false;
        for (uint32_t d = 0; d < r->ndrops; d++) {
            drop |= r->drops[d].index == k + 1;
            after |= r->drops[d].index == k;
        }
        /* the segment leaving a moved landing was chosen by the height walk alone (挪落点 step 2:
         * blockers and facades are flat, the upper layer's walls would block it): no blockers */
        hard.blk = after ? NULL : in->blk;
        double ax = xy[2 * k], ay = xy[2 * k + 1], bx = xy[2 * k + 2], by = xy[2 * k + 3];
        r->self_checks++;
        if (!drop) {
            if (!nm_sight_ok(&hard, ax, ay, bx, by, hl ? hl[k] : 0.0f, hl ? hl[k + 1] : 0.0f)) {
                /* which check: core contours (the first segments), kept walls, facades, steps, layers */
                const uint32_t ncore = in->blk->nsegs - w->nsegs;
                int hit = -1;
                for (uint32_t g = 0; g < in->blk->nsegs && hit < 0; g++)
                    if (nm_sight_seg_hits(ax, ay, bx, by, &in->blk->segs[g])) hit = (int)g;
                bool st = nm_sight_crosses_step(w, ax, ay, bx, by);
                nm_sight_view nb = hard;
                nb.blk = NULL;
                bool rest = nm_sight_ok(&nb, ax, ay, bx, by, hl ? hl[k] : 0.0f, hl ? hl[k + 1] : 0.0f);
                if (hit >= 0 && (uint32_t)hit >= ncore && in->blk->segs[hit].kind == NM_SEG_WALL && rest) {
                    r->self_check_walls++;
                } else {
                    const nm_window_seg *sg = hit >= 0 ? &in->blk->segs[hit] : NULL;
                    check_fail(r, "segment %u (%.2f, %.2f %.2f m) -> (%.2f, %.2f %.2f m) fails:%s%s%s", k, ax, ay,
                               hl ? (double)hl[k] : 0.0, bx, by, hl ? (double)hl[k + 1] : 0.0,
                               !sg ? "" : (uint32_t)hit < ncore ? " core contour" : sg->kind == NM_SEG_FACADE ? " facade" : " wall",
                               st ? " forbidden step" : "", !rest && !st ? " layer break" : "");
                }
            }
        } else {
            /* a drop is judged by the drop-permitting height walk alone: blockers and facades are
             * flat and the upper layer's edge lies across every drop (落点留余量) */
            bool ok = true;
            if (hl) {
                double pts[4] = {ax, ay, bx, by};
                float h0 = hl[k];
                uint32_t nh = 0;
                ok = nm_sight_walk(in->oracle, pts, 2, &h0, 1, true, hout, &nh);
                bool hit = false;
                for (uint32_t m = 0; m < nh; m++) hit |= fabsf(hout[m] - hl[k + 1]) <= 1e-3f;
                ok = ok && hit;
            }
            if (!ok) check_fail(r, "drop segment %u (%.2f, %.2f) -> (%.2f, %.2f) fails", k, ax, ay, bx, by);
        }
    }
    /* 2. lifting never lowers the smallest segment clearance (it only moves points); the segments
     * into and out of a drop's landing are left out: 落点留余量 moves the landing after lifting */
    if (po->spliced_xy && po->nspliced == n && n >= 2) {
        double before = INFINITY, after = INFINITY;
        for (uint32_t k = 0; k + 1 < n; k++) {
            bool landing = false;
            for (uint32_t d = 0; d < r->ndrops; d++)
                landing |= r->drops[d].index == k || r->drops[d].index == k + 1;
            if (landing)
                continue;
            const double *a = po->spliced_xy + 2 * k;
            before = fmin(before, nm_sight_seg_min_clr(w->dist, &w->win, a[0], a[1], a[2], a[3]));
            after = fmin(after, nm_sight_seg_min_clr(w->dist, &w->win, xy[2 * k], xy[2 * k + 1], xy[2 * k + 2],
                                                    xy[2 * k + 3]));
        }
        r->self_checks++;
        if (after < before - 1e-9) check_fail(r, "lifting lowered the clearance %.3f -> %.3f px", before, after);
    }
    /* 3. StringPull is idempotent: its output, pulled again with the same view, keeps every point */
    if (po->pulled_xy && po->npulled >= 1) {
        uint32_t m = po->npulled;
        float *ph = (float *)nm_malloc((size_t)m * sizeof *ph);
        uint32_t *keep = (uint32_t *)nm_malloc((size_t)m * sizeof *keep);
        uint8_t *plink = po->link ? (uint8_t *)nm_calloc(m, 1) : NULL;
        uint32_t *next_link = po->link ? (uint32_t *)nm_malloc((size_t)m * sizeof *next_link) : NULL;
        if (!ph || !keep || (po->link && (!plink || !next_link))) {
            nm_free(ph);
            nm_free(keep);
            nm_free(plink);
            nm_free(next_link);
            nm_free(hout);
            return NM_ERR_NOMEM;
        }
        /* heights of the pulled points: the pull input point with the same coordinates */
        uint32_t at = 0;
        bool matched = true;
        for (uint32_t k = 0; k < m && matched; k++) {
            while (at < in->n && (in->xy[2 * at] != po->pulled_xy[2 * k] || in->xy[2 * at + 1] != po->pulled_xy[2 * k + 1]))
                at++;
            if (at == in->n) {
                matched = false;
            } else {
                ph[k] = in->h ? in->h[at] : 0.0f;
                if (plink && in->link) plink[k] = in->link[at]; /* the pull never crosses a link */
            }
        }
        if (next_link) nm_post_next_links(plink, m, next_link);
        nm_sight_view view = {w, in->blk, NULL, in->oracle, false, false};
        if (in->kind == NM_POST_PARENT_CHAIN) {
            view.on = in->tm;
            view.steps = true;
            view.layers = true;
        } else if (in->kind == NM_POST_SPAN_PATH) {
            view.layers = true;
        }
        nm_post_link_vis pv = {{&view, po->pulled_xy, in->h ? ph : NULL}, next_link};
        r->self_checks++;
        if (!matched) check_fail(r, "a pulled point is not a pull input point");
        else if (nm_post_string_pull(m, nm_post_vis_points_links, &pv, keep) != m)
            check_fail(r, "StringPull is not idempotent (%u points)", m);
        nm_free(ph);
        nm_free(keep);
        nm_free(plink);
        nm_free(next_link);
    }
    /* 4. drop landings: waypoints, below the point before */
    for (uint32_t d = 0; d < r->ndrops; d++) {
        uint32_t i = r->drops[d].index;
        bool wp = false;
        for (uint32_t k = 0; k < r->nwaypoints; k++) wp |= r->waypoints[k] == i;
        r->self_checks++;
        if (i == 0 || i >= n || !wp) check_fail(r, "drop landing %u is not a waypoint", i);
        else if (hl && !((double)hl[i - 1] - r->drops[d].height > NM_kClimb))
            check_fail(r, "drop landing %u is not below its take-off (%.2f -> %.2f m)", i, (double)hl[i - 1],
                       r->drops[d].height);
    }
    nm_free(hout);
    return NM_OK;
}

/* Post-processing of an accepted window result into the route's points. *blkp: the window's
 * blockers when kept with it, else built here; left in *blkp for the window's keeper. */
static int finish_route(nm_route_engine *e, nm_route_zone_entry *z, const nm_window *w,
                        const nm_route_request *q, const nm_search_result *sr, nm_route_result *r,
                        nm_sight_blockers **blkp, nm_error *err)
{
    double t0 = now_ms();
    const size_t cells = (size_t)w->win.nx * (size_t)w->win.ny;
    nm_sight_oracle orc;
    memset(&orc, 0, sizeof orc);
    uint8_t *tm = NULL;
    double *xy = NULL;
    float *hh = NULL;
    nm_post_output po;
    memset(&po, 0, sizeof po);
    int rc = NM_OK;
    if (!*blkp) /* kept with the window, or made beside the search (tier_search), else now */
        rc = blockers_new(w, blkp, err);
    nm_sight_blockers *const blk = *blkp;
    if (rc == NM_OK) rc = nm_sight_oracle_init(&orc, w, err);
    if (rc) goto out;
    bool chain = sr->chain.n >= 2;
    /* 拉直的输入: the parent chain, else the span-level cell path, else the cell-level fallback */
    bool cell_level = !chain && (sr->final.n == 0 || !sr->final.span || sr->final.span[0] == UINT32_MAX);
    uint32_t n = chain ? sr->chain.n : sr->final.n;
    tm = (uint8_t *)nm_calloc(cells, 1);
    xy = (double *)nm_calloc((size_t)n * 2 + 2, sizeof *xy);
    hh = (float *)nm_calloc((size_t)n + 1, sizeof *hh);
    if (!tm || !xy || !hh) {
        rc = nm_fail(err, NM_ERR_NOMEM, "post-processing: out of memory");
        goto out;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (chain) {
            xy[2 * k] = sr->chain.x[k];
            xy[2 * k + 1] = sr->chain.y[k];
            hh[k] = sr->chain.h[k];
        } else {
            uint32_t c = sr->final.cell[k];
            xy[2 * k] = w->win.x0 + ((double)(c % (uint32_t)w->win.nx) + 0.5) * NM_kCS;
            xy[2 * k + 1] = w->win.y0 + ((double)(c / (uint32_t)w->win.nx) + 0.5) * NM_kCS;
            hh[k] = sr->final.h ? sr->final.h[k] : 0.0f;
        }
    }
    /* 路线掩膜 tm, four steps: solidc | access, & the final solve's mask, + the path's 3x3.
     * Without a final mask (should not happen) the region's layer bounds it. */
    nm_sight_route_mask(w->win.nx, w->win.ny, sr->solidc, sr->access, sr->naccess,
                        sr->final_mask ? sr->final_mask : w->lay, sr->final.cell, sr->final.n, tm);
    nm_post_input in;
    memset(&in, 0, sizeof in);
    in.w = w;
    in.kind = chain ? NM_POST_PARENT_CHAIN : cell_level ? NM_POST_CELL_PATH : NM_POST_SPAN_PATH;
    in.xy = xy;
    in.h = cell_level ? NULL : hh;
    in.n = n;
    in.sx = q->sx;
    in.sy = q->sy;
    in.gx = q->gx;
    in.gy = q->gy;
    in.h_start = n ? hh[0] : 0.0f;
    in.blk = blk;
    in.tm = tm;
    in.oracle = &orc;
    in.drivable = nm_post_zone_drivable;
    in.drivable_ctx = (void *)z->zc;
    in.scale_x = z->pack_zone >= 0 ? (double)e->pack->zones[z->pack_zone].t[0] : 0.0;
    in.link = chain ? sr->chain.link : sr->final.link;
    rc = nm_post_run(&in, &po, err);
    if (rc) goto out;
    r->npoints = po.n;
    r->xy = po.xy;
    po.xy = NULL;
    r->clearance = po.clr;
    po.clr = NULL;
    const float *halong = po.halong; /* stays alive (in po or r) until the end */
    /* the search heights go out with the route; the heights along it stand in when the search
     * column is empty */
    if (po.hsearch) {
        r->heights = po.hsearch;
        po.hsearch = NULL;
    } else if (po.hroute) { /* per piece: the search heights, else the walk held to the search's surfaces */
        r->heights = po.hroute;
        po.hroute = NULL;
    } else {
        r->heights = po.halong;
        po.halong = NULL;
    }
    if (po.ndrops) {
        r->drops = (nm_route_drop *)nm_malloc((size_t)po.ndrops * sizeof *r->drops);
        if (!r->drops) {
            rc = nm_fail(err, NM_ERR_NOMEM, "post-processing: out of memory");
            goto out;
        }
        for (uint32_t k = 0; k < po.ndrops; k++) {
            uint32_t i = po.drops[k].index, f = i > 0 ? i - 1 : 0; /* take-off: the point before */
            r->drops[k] = (nm_route_drop){i, po.drops[k].height, r->xy[2 * f], r->xy[2 * f + 1]};
        }
        r->ndrops = po.ndrops;
    }
    if (po.nwaypoints) {
        r->waypoints = po.waypoints;
        r->nwaypoints = po.nwaypoints;
        po.waypoints = NULL;
    }
    r->base_cost = sr->base_cost;
    r->win_x0 = w->win.x0;
    r->win_y0 = w->win.y0;
    r->win_nx = w->win.nx;
    r->win_ny = w->win.ny;
    rc = dbg_path(&r->dbg_topology, w, &sr->topo);
    if (rc == NM_OK) rc = dbg_points(&r->dbg_taut, sr->chain.x, sr->chain.y, NULL, sr->chain.h, sr->chain.n);
    if (rc == NM_OK) rc = dbg_points(&r->dbg_pulled, NULL, NULL, po.pulled_xy, NULL, po.npulled);
    if (rc == NM_OK) rc = dbg_points(&r->dbg_assembled, NULL, NULL, po.spliced_xy, NULL, po.nspliced);
    if (rc) {
        rc = nm_fail(err, NM_ERR_NOMEM, "post-processing: out of memory");
        goto out;
    }
    r->ms_pull += po.ms_pull;
    r->ms_assemble += po.ms_splice;
    r->ms_lift += po.ms_lift;
    search_warnings(r, sr);
    if (in.kind == NM_POST_CELL_PATH) add_warning(r, "the route follows a cell-level path (heights from the walk along it)");
    if (r->nwaypoints == 0) add_warning(r, "no waypoints (the heights along the route break)");
    if (q->self_check) {
        rc = self_check(r, w, &in, &po, halong);
        if (rc) {
            rc = nm_fail(err, rc, "self check: out of memory");
            goto out;
        }
    }
    r->length = 0;
    r->min_clearance = INFINITY;
    for (uint32_t k = 0; k + 1 < r->npoints; k++)
        r->length += nm_hypot(r->xy[2 * k + 2] - r->xy[2 * k], r->xy[2 * k + 3] - r->xy[2 * k + 1]);
    for (uint32_t k = 0; r->clearance && k < r->npoints; k++)
        if (r->clearance[k] < r->min_clearance) r->min_clearance = r->clearance[k];
    if (!isfinite(r->min_clearance)) r->min_clearance = 0;
out:
    nm_post_output_free(&po);
    nm_sight_oracle_free(&orc);
    nm_free(tm);
    nm_free(xy);
    nm_free(hh);
    r->ms_post += now_ms() - t0;
    return rc;
}


/* ---- 台沿下落换类: a ledge from the start's region down into the goal's ---------------------- */
typedef struct hop {
    double tx, ty, th;  /* take-off cell centre (px) and span height */
    double lx, ly, lh;  /* landing cell centre and span height */
    double score;       /* |take-off - start| + |landing - goal| */
    uint32_t comp;      /* landing component in the goal region */
} hop;

static int cmp_hop(const void *a, const void *b)
{
    const hop *x = (const hop *)a, *y = (const hop *)b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    if (x->ty != y->ty) return x->ty < y->ty ? -1 : 1;
    return x->tx < y->tx ? -1 : x->tx > y->tx;
}

/* A take-off to judge: span k steps in direction d to cell b, which holds a span of another
 * region more than kClimb lower; best: the highest such span of the goal region. */
typedef struct hop_try {
    uint32_t k, b, best;
    uint32_t tile;   /* index into the window's tile list (UINT32_MAX: no tile owns b) */
    uint8_t d;
} hop_try;

/* The regions of other regions' spans are not kept in the window: read them from the tiles (the
 * engine's cache), one tile at a time, and pick each try's best span. A cell's spans are its
 * records in stored order that enter the span table (nm_window_record_is_span). */
static int pick_goal_spans(nm_route_engine *e, int bz, const nm_window *w, uint16_t zone_id, uint32_t goal_region,
                           hop_try *tr, size_t nt, nm_error *err)
{
    const nm_bgrd_zone *z = &e->grid.zones[bz];
    uint32_t *tl = NULL, ntl = 0; /* tiles owning cells of the window */
    size_t *order = NULL;
    int rc = NM_OK;
    tl = (uint32_t *)nm_malloc(((size_t)z->tile_count + 1) * sizeof *tl);
    order = (size_t *)nm_malloc((nt ? nt : 1) * sizeof *order);
    if (!tl || !order) {
        nm_free(tl);
        nm_free(order);
        return nm_fail(err, NM_ERR_NOMEM, "ledge drop: out of memory");
    }
    for (uint32_t t = 0; t < z->tile_count; t++) {
        const nm_bgrd_tile *T = &z->tiles[t];
        int64_t ox0 = (int64_t)T->gx0 + T->px0, ox1 = (int64_t)T->gx0 + T->px1 + 1;
        int64_t oy0 = (int64_t)T->gy0 + T->py0, oy1 = (int64_t)T->gy0 + T->py1 + 1;
        if (T->records && ox1 > w->gx0 && ox0 < w->gx0 + w->win.nx && oy1 > w->gy0 && oy0 < w->gy0 + w->win.ny)
            tl[ntl++] = t;
    }
    uint32_t last = 0; /* neighbouring tries mostly share a tile: try the last one first */
    for (size_t q = 0; q < nt; q++) {
        int64_t gx = w->gx0 + tr[q].b % (uint32_t)w->win.nx, gy = w->gy0 + tr[q].b / (uint32_t)w->win.nx;
        tr[q].tile = UINT32_MAX;
        tr[q].best = UINT32_MAX;
        for (uint32_t i = 0; i < ntl && tr[q].tile == UINT32_MAX; i++) {
            uint32_t u = i == 0 ? last : (i <= last ? i - 1 : i);
            const nm_bgrd_tile *T = &z->tiles[tl[u]];
            if (gx >= (int64_t)T->gx0 + T->px0 && gx <= (int64_t)T->gx0 + T->px1 && gy >= (int64_t)T->gy0 + T->py0 &&
                gy <= (int64_t)T->gy0 + T->py1)
                tr[q].tile = last = u;
        }
    }
    /* the tries grouped by tile, in their order inside a tile (a counting sort: starts[u]) */
    size_t *starts = (size_t *)nm_calloc((size_t)ntl + 2, sizeof *starts);
    if (!starts) rc = nm_fail(err, NM_ERR_NOMEM, "ledge drop: out of memory");
    for (size_t q = 0; q < nt && rc == NM_OK; q++)
        if (tr[q].tile != UINT32_MAX) starts[tr[q].tile + 2]++;
    for (uint32_t u = 0; u < ntl && rc == NM_OK; u++) starts[u + 2] += starts[u + 1];
    for (size_t q = 0; q < nt && rc == NM_OK; q++)
        if (tr[q].tile != UINT32_MAX) order[starts[tr[q].tile + 1]++] = q;
    for (uint32_t u = 0; u < ntl && rc == NM_OK; u++) {
        const size_t o0 = starts[u], no = starts[u + 1] - o0;
        if (!no) continue;
        const nm_bgrd_tile *T = &z->tiles[tl[u]];
        nm_bgrd_tile_view v;
        rc = nm_bgrd_view_tiles(&e->grid, (uint32_t)bz, &tl[u], 1, NULL, &e->tiles, e->workers, &e->decode, &v, err);
        if (rc == NM_OK && !v.recs) /* the cache had no room: a buffer of its own */
            rc = nm_bgrd_view_tiles(&e->grid, (uint32_t)bz, &tl[u], 1, NULL, NULL, e->workers, &e->decode, &v, err);
        if (rc) break;
        for (size_t o = 0; o < no; o++) {
            hop_try *h = &tr[order[o0 + o]];
            int64_t gx = w->gx0 + h->b % (uint32_t)w->win.nx, gy = w->gy0 + h->b / (uint32_t)w->win.nx;
            int64_t lc = (gy - T->gy0) * (int64_t)T->nx + (gx - T->gx0);
            size_t lo = 0, hi = v.n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if ((int64_t)v.recs[mid].cell < lc) lo = mid + 1;
                else hi = mid;
            }
            uint32_t first, n = nm_span_cell_spans(&w->spans, h->b, &first), m = first;
            double hk = w->spans.sp_h[h->k];
            for (size_t r = lo; r < v.n && v.recs[r].cell == lc && m < first + n; r++) {
                const nm_grid_rec *rr = &v.recs[r];
                if (!nm_window_record_is_span(&e->fields, zone_id, w->region, rr, gx, gy)) continue;
                if (!(w->sp_bits[m] & NM_SP_VIS3) && rr->rid == goal_region &&
                    (double)w->spans.sp_h[m] < hk - NM_kClimb &&
                    (h->best == UINT32_MAX || w->spans.sp_h[m] > w->spans.sp_h[h->best]))
                    h->best = m;
                m++;
            }
        }
        nm_bgrd_tile_view_free(&v);
    }
    nm_free(starts);
    nm_free(tl);
    nm_free(order);
    return rc;
}

/* 找起跳点 steps 2-5 on the last window: reachable core spans whose orthogonal neighbour holds a
 * span of another region more than kClimb lower, the step not forbidden; landing spans checked
 * against the goal region's walkable surfaces (decoded with the sidecar), RiseOk with the fall
 * gate; sorted by the distance sum, one per landing component, at most kDropHopTries. */
static int collect_hops(nm_route_engine *e, int bz, const nm_window *w, uint16_t zone_id, uint32_t goal_region,
                        const nm_route_request *q, hop *out, uint32_t *nout, nm_error *err)
{
    *nout = 0;
    static const int dx4[4] = {1, -1, 0, 0}, dy4[4] = {0, 0, 1, -1};
    const int32_t nx = w->win.nx, ny = w->win.ny;
    hop *cand = NULL;
    size_t nc = 0, cap = 0;
    hop_try *tr = NULL;
    size_t nt = 0, tcap = 0;
    int rc = NM_OK;
    for (uint32_t k = 0; k < w->spans.nspans && rc == NM_OK; k++) {
        if ((w->sp_bits[k] & (NM_SP_VIS3 | NM_SP_REACH)) != (NM_SP_VIS3 | NM_SP_REACH)) continue;
        uint32_t c = w->spans.sp_cell[k];
        if (!w->core[c]) continue;
        int32_t i = (int32_t)(c % (uint32_t)nx), j = (int32_t)(c / (uint32_t)nx);
        double hk = w->spans.sp_h[k];
        for (int d = 0; d < 4; d++) {
            int32_t bi = i + dx4[d], bj = j + dy4[d];
            if (bi < 0 || bj < 0 || bi >= nx || bj >= ny) continue;
            uint32_t b = (uint32_t)bj * (uint32_t)nx + (uint32_t)bi;
            /* the step c -> b may not be forbidden: (1,0) and (0,1) are directions 0 and 1 */
            bool forbid = d == 0 ? (w->stepbits[c] & 0x01) : d == 1 ? (w->stepbits[b] & 0x02)
                        : d == 2 ? (w->stepbits[c] & 0x04) : (w->stepbits[b] & 0x08);
            if (forbid) continue;
            uint32_t first, n = nm_span_cell_spans(&w->spans, b, &first);
            bool lower = false;
            for (uint32_t m = first; m < first + n && !lower; m++)
                lower = !(w->sp_bits[m] & NM_SP_VIS3) && (double)w->spans.sp_h[m] < hk - NM_kClimb;
            if (!lower) continue;
            if (nt == tcap) {
                size_t ncap = tcap ? 2 * tcap : 64;
                hop_try *nh = (hop_try *)nm_realloc(tr, ncap * sizeof *nh);
                if (!nh) {
                    rc = nm_fail(err, NM_ERR_NOMEM, "ledge drop: out of memory");
                    break;
                }
                tr = nh;
                tcap = ncap;
            }
            tr[nt++] = (hop_try){k, b, UINT32_MAX, UINT32_MAX, (uint8_t)d};
        }
    }
    if (rc == NM_OK && nt) rc = pick_goal_spans(e, bz, w, zone_id, goal_region, tr, nt, err);
    for (size_t t = 0; t < nt && rc == NM_OK; t++) {
        if (tr[t].best == UINT32_MAX) continue;
        uint32_t k = tr[t].k, c = w->spans.sp_cell[k], b = tr[t].b, best = tr[t].best;
        int d = tr[t].d;
        int32_t i = (int32_t)(c % (uint32_t)nx), j = (int32_t)(c / (uint32_t)nx);
        int32_t bi = (int32_t)(b % (uint32_t)nx), bj = (int32_t)(b / (uint32_t)nx);
        double hk = w->spans.sp_h[k], hb = w->spans.sp_h[best];
        if (!nm_grid_rise_ok(&w->spans, &w->gate, i, j, dx4[d], dy4[d], hk, hb)) continue;
        if (nc == cap) {
            size_t ncap = cap ? 2 * cap : 32;
            hop *nh = (hop *)nm_realloc(cand, ncap * sizeof *nh);
            if (!nh) {
                rc = nm_fail(err, NM_ERR_NOMEM, "ledge drop: out of memory");
                break;
            }
            cand = nh;
            cap = ncap;
        }
        hop h;
        h.tx = w->win.x0 + (i + 0.5) * NM_kCS;
        h.ty = w->win.y0 + (j + 0.5) * NM_kCS;
        h.th = hk;
        h.lx = w->win.x0 + (bi + 0.5) * NM_kCS;
        h.ly = w->win.y0 + (bj + 0.5) * NM_kCS;
        h.lh = hb;
        h.score = nm_hypot(h.tx - q->sx, h.ty - q->sy) + nm_hypot(h.lx - q->gx, h.ly - q->gy);
        h.comp = 0;
        cand[nc++] = h;
    }
    nm_free(tr);
    if (rc == NM_OK && nc > 0) {
        /* landing surfaces of the goal region (Walk, no Ghost / Fill) and their components */
        int64_t lx = INT64_MAX, ly = INT64_MAX, hx = INT64_MIN, hy = INT64_MIN;
        for (size_t k = 0; k < nc; k++) {
            int64_t gx = gcell(cand[k].lx), gy = gcell(cand[k].ly);
            if (gx < lx) lx = gx;
            if (gx > hx) hx = gx;
            if (gy < ly) ly = gy;
            if (gy > hy) hy = gy;
        }
        nm_bgrd_out o;
        memset(&o, 0, sizeof o);
        o.cache = &e->tiles;
        rc = nm_bgrd_decode_rect(&e->grid, (uint32_t)bz, (int32_t)lx, (int32_t)ly, (int32_t)hx + 1, (int32_t)hy + 1,
                                 &e->fields, e->workers, &o, err);
        uint32_t *head = NULL;
        int64_t wd = hx + 1 - lx, area = wd * (hy + 1 - ly);
        if (rc == NM_OK && !(head = (uint32_t *)nm_calloc((size_t)area + 1, sizeof *head)))
            rc = nm_fail(err, NM_ERR_NOMEM, "ledge drop: out of memory");
        if (rc == NM_OK) {
            /* records of one cell are contiguous: index the first of each cell (+1, 0 = none) */
            for (size_t m = o.n; m-- > 0;) head[o.recs[m].cell] = (uint32_t)m + 1;
            size_t kept = 0;
            for (size_t k = 0; k < nc; k++) {
                int64_t cell = (gcell(cand[k].ly) - ly) * wd + (gcell(cand[k].lx) - lx);
                bool ok = false;
                for (size_t m = head[cell] ? head[cell] - 1 : o.n; m < o.n && o.recs[m].cell == cell && !ok; m++) {
                    const nm_grid_rec *rr = &o.recs[m];
                    if (rr->rid != goal_region || !(rr->flags & NM_GRID_WALK) ||
                        (rr->flags & (NM_GRID_GHOST | NM_GRID_FILL)) || fabs((double)rr->h - cand[k].lh) > 1e-3)
                        continue;
                    ok = true;
                    cand[k].comp = o.fields[m].scc;
                }
                if (ok) cand[kept++] = cand[k];
            }
            nc = kept;
        }
        nm_free(head);
        nm_bgrd_out_free(&o);
        if (rc == NM_OK) {
            qsort(cand, nc, sizeof *cand, cmp_hop);
            for (size_t k = 0; k < nc && *nout < NM_kDropHopTries; k++) {
                bool seen = false;
                for (uint32_t m = 0; m < *nout; m++) seen |= out[m].comp == cand[k].comp;
                if (!seen) out[(*nout)++] = cand[k];
            }
        }
    }
    nm_free(cand);
    return rc;
}

static int plan_locked(nm_route_engine *e, const nm_route_request *q, nm_route_result *r,
                       nm_error *err, bool hopping);

/* The joined route's drops (the hop's landing between the parts' own), waypoints (the front
 * part's, the landing kept, then the back part's shifted), warnings and diagnostics. */
static int join_hop(nm_route_result *r, const nm_route_result *ra, const nm_route_result *rb,
                    const hop *h)
{
    const uint32_t off = ra->npoints;
    r->ndrops = 0;
    r->drops = (nm_route_drop *)nm_malloc(((size_t)ra->ndrops + rb->ndrops + 1) * sizeof *r->drops);
    r->waypoints = (uint32_t *)nm_malloc(((size_t)ra->nwaypoints + rb->nwaypoints + 2) * sizeof *r->waypoints);
    if (!r->drops || !r->waypoints) return NM_ERR_NOMEM;
    for (uint32_t k = 0; k < ra->ndrops; k++) r->drops[r->ndrops++] = ra->drops[k];
    r->drops[r->ndrops++] = (nm_route_drop){off, h->lh, h->tx, h->ty};
    for (uint32_t k = 0; k < rb->ndrops; k++) {
        r->drops[r->ndrops] = rb->drops[k];
        r->drops[r->ndrops++].index += off;
    }
    r->nwaypoints = 0;
    for (uint32_t k = 0; k < ra->nwaypoints; k++) r->waypoints[r->nwaypoints++] = ra->waypoints[k];
    if (r->nwaypoints == 0 || r->waypoints[r->nwaypoints - 1] != off - 1) r->waypoints[r->nwaypoints++] = off - 1;
    r->waypoints[r->nwaypoints++] = off; /* the landing is a waypoint: never jumped over */
    for (uint32_t k = 0; k < rb->nwaypoints; k++)
        if (rb->waypoints[k] + off > r->waypoints[r->nwaypoints - 1]) r->waypoints[r->nwaypoints++] = rb->waypoints[k] + off;
    if (r->waypoints[r->nwaypoints - 1] != off + rb->npoints - 1) r->waypoints[r->nwaypoints++] = off + rb->npoints - 1;
    r->warnings[0] = 0;
    r->nwarnings = 0;
    add_warning(r, "the plan switched region by a ledge drop at (%.2f, %.2f) -> (%.2f, %.2f), %.2f m down", h->tx,
                h->ty, h->lx, h->ly, h->th - h->lh);
    const nm_route_result *parts[2] = {ra, rb};
    for (int p = 0; p < 2; p++) {
        const char *w = parts[p]->warnings;
        while (*w) {
            const char *nl = strchr(w, '\n');
            int len = nl ? (int)(nl - w) : (int)strlen(w);
            add_warning(r, "%.*s", len, w);
            w += len + (nl ? 1 : 0);
        }
    }
    r->base_cost = ra->base_cost + rb->base_cost;
    r->win_x0 = ra->win_x0;
    r->win_y0 = ra->win_y0;
    r->win_nx = ra->win_nx;
    r->win_ny = ra->win_ny;
    r->tier = ra->tier;
    r->kind = ra->kind;
    /* the window figures of the part with the larger peak, so bytes per cell stay one window's */
    const nm_route_result *big = rb->peak_window_bytes > ra->peak_window_bytes ? rb : ra;
    r->window_cells = big->window_cells;
    r->peak_window_bytes = big->peak_window_bytes;
    r->self_checks = ra->self_checks + rb->self_checks;
    r->self_check_failures = ra->self_check_failures + rb->self_check_failures;
    r->self_check_walls = ra->self_check_walls + rb->self_check_walls;
    r->self_check_ends = ra->self_check_ends + rb->self_check_ends;
    snprintf(r->self_check_msg, sizeof r->self_check_msg, "%.250s%.250s", ra->self_check_msg, rb->self_check_msg);
    r->ms_pull += ra->ms_pull + rb->ms_pull;
    r->ms_assemble += ra->ms_assemble + rb->ms_assemble;
    r->ms_lift += ra->ms_lift + rb->ms_lift;
    nm_route_points *dst[4] = {&r->dbg_topology, &r->dbg_taut, &r->dbg_pulled, &r->dbg_assembled};
    const nm_route_points *sa[4] = {&ra->dbg_topology, &ra->dbg_taut, &ra->dbg_pulled, &ra->dbg_assembled};
    const nm_route_points *sb[4] = {&rb->dbg_topology, &rb->dbg_taut, &rb->dbg_pulled, &rb->dbg_assembled};
    for (int i = 0; i < 4; i++) { /* the two parts' lists, one after the other */
        uint32_t n = sa[i]->n + sb[i]->n;
        if (n == 0) continue;
        dst[i]->xy = (double *)nm_malloc((size_t)n * 2 * sizeof(double));
        if (!dst[i]->xy) return NM_ERR_NOMEM;
        if (sa[i]->n) memcpy(dst[i]->xy, sa[i]->xy, (size_t)sa[i]->n * 2 * sizeof(double));
        if (sb[i]->n) memcpy(dst[i]->xy + 2 * sa[i]->n, sb[i]->xy, (size_t)sb[i]->n * 2 * sizeof(double));
        dst[i]->n = n;
    }
    return NM_OK;
}

/* 逐处试: two extra plans a place; both must succeed, then the parts are joined. */
static int try_hops(nm_route_engine *e, const nm_route_request *q, const hop *hops, uint32_t nh,
                    nm_route_result *r, nm_error *err)
{
    for (uint32_t k = 0; k < nh; k++) {
        if (q->should_stop && q->should_stop(q->stop_ctx)) {
            snprintf(r->error, sizeof r->error, "planning cancelled");
            r->code = NM_ROUTE_CANCELLED;
            return NM_OK;
        }
        nm_route_request a = *q, b = *q;
        a.gx = hops[k].tx;
        a.gy = hops[k].ty;
        a.goal_floor_y = NM_kFloorYNone;
        a.goal_deck_y = (float)hops[k].th;
        b.sx = hops[k].lx;
        b.sy = hops[k].ly;
        b.start_floor_y = NM_kFloorYNone;
        b.start_deck_y = (float)hops[k].lh;
        b.goal_deck_y = NM_kFloorYNone;
        nm_route_result ra, rb;
        int rc = plan_locked(e, &a, &ra, err, true);
        if (rc) return rc;
        if (!ra.ok) {
            nm_route_result_free(&ra);
            continue;
        }
        rc = plan_locked(e, &b, &rb, err, true);
        if (rc) {
            nm_route_result_free(&ra);
            return rc;
        }
        if (!rb.ok) {
            nm_route_result_free(&ra);
            nm_route_result_free(&rb);
            continue;
        }
        uint32_t n = ra.npoints + rb.npoints;
        double *xy = (double *)nm_malloc((size_t)n * 2 * sizeof *xy);
        float *cl = (ra.clearance && rb.clearance) ? (float *)nm_malloc((size_t)n * sizeof *cl) : NULL;
        float *hh = (ra.heights && rb.heights) ? (float *)nm_malloc((size_t)n * sizeof *hh) : NULL;
        if (!xy || (ra.clearance && rb.clearance && !cl) || (ra.heights && rb.heights && !hh)) {
            nm_free(xy);
            nm_free(cl);
            nm_free(hh);
            nm_route_result_free(&ra);
            nm_route_result_free(&rb);
            return nm_fail(err, NM_ERR_NOMEM, "ledge drop: out of memory");
        }
        memcpy(xy, ra.xy, (size_t)ra.npoints * 2 * sizeof *xy);
        memcpy(xy + 2 * ra.npoints, rb.xy, (size_t)rb.npoints * 2 * sizeof *xy);
        if (cl) {
            memcpy(cl, ra.clearance, ra.npoints * sizeof *cl);
            memcpy(cl + ra.npoints, rb.clearance, rb.npoints * sizeof *cl);
        }
        if (hh) {
            memcpy(hh, ra.heights, ra.npoints * sizeof *hh);
            memcpy(hh + ra.npoints, rb.heights, rb.npoints * sizeof *hh);
        }
        nm_route_result_free(r);
        r->xy = xy;
        r->clearance = cl;
        r->heights = hh;
        r->npoints = n;
        r->length = ra.length + rb.length +
                    nm_hypot(rb.xy[0] - ra.xy[2 * (ra.npoints - 1)], rb.xy[1] - ra.xy[2 * (ra.npoints - 1) + 1]);
        r->min_clearance = fmin(ra.min_clearance, rb.min_clearance);
        r->ok = true;
        r->code = NM_ROUTE_OK;
        r->error[0] = 0;
        r->hop_index = ra.npoints; /* the landing: the back part's first point */
        r->hop_height = hops[k].lh;
        rc = join_hop(r, &ra, &rb, &hops[k]);
        if (rc) {
            nm_route_result_free(&ra);
            nm_route_result_free(&rb);
            return nm_fail(err, rc, "ledge drop: out of memory");
        }
        r->ms_window += ra.ms_window + rb.ms_window;
        r->windows_kept += ra.windows_kept + rb.windows_kept;
        r->topo_from = rb.topo_from;
        r->ms_topo += ra.ms_topo + rb.ms_topo;
        r->ms_geo += ra.ms_geo + rb.ms_geo;
        r->ms_post += ra.ms_post + rb.ms_post;
        size_t tn = strlen(r->tier_notes);
        snprintf(r->tier_notes + tn, sizeof r->tier_notes - tn,
                 "changed region by a ledge drop at (%.2f, %.2f) -> (%.2f, %.2f); ", hops[k].tx, hops[k].ty,
                 hops[k].lx, hops[k].ly);
        nm_route_result_free(&ra);
        nm_route_result_free(&rb);
        return NM_OK;
    }
    return NM_OK;
}

int nm_route_plan(nm_route_engine *e, const nm_route_request *q, nm_route_result *r, nm_error *err)
{
    int rc = plan_locked(e, q, r, err, false);
    /* The decoded records serve every tier and nested hop plan of this plan; between plans they
     * are dead weight (tens of MB), so they go with the plan, as the article returns free pages. */
    nm_bgrd_out_free(&e->decode);
    return rc;
}

/* What the checks before the window hand to the tiers. */
typedef struct plan_start {
    int bz;                      /* grid zone */
    nm_route_zone_entry *z;
    bool deck;                   /* a goal deck is declared */
    bool deck_snapped;           /* 起点所在的面 step 2 gave the start */
    nm_zone_snap_result ss, gs;  /* the snapped start and goal */
    nm_region_pick pk;
    nm_cell_rect bbox;           /* the region's bounding box */
} plan_start;

/* 前置检查与选类: checks 1-11 in the article's order, the region pick and the region's bounding
 * box. NM_OK with *pass = false when a check ended the leg (r says which); an error code only for
 * out of memory. */
static int plan_checks(nm_route_engine *e, const nm_route_request *q, nm_route_result *r, plan_start *ps,
                       bool *pass, nm_error *err)
{
    int rc;
    *pass = false;
    /* 1. engine usable */
    if (e->status) {
        fail_check(r, 1, "%.400s", e->err.msg);
        return NM_OK;
    }
    /* 2. the zone has a grid */
    int bz = nm_bgrd_find_zone(&e->grid, q->zone);
    if (bz < 0) {
        fail_check(r, 2, "zone '%s' has no pre-baked grid", q->zone);
        return NM_OK;
    }
    nm_route_zone_entry *z = zone_entry(e, q->zone, bz);
    if (!z) return nm_fail(err, NM_ERR_NOMEM, "plan: out of memory");
    /* 3. ZoneClean */
    if (z->zc_rc) {
        fail_check(r, 3, "%.400s", z->zc_err.msg);
        return NM_OK;
    }
    /* 4. the sidecar has the zone */
    if (z->fz_rc) {
        fail_check(r, 4, "the fields sidecar cannot read zone '%.64s': %.400s", q->zone, z->fz_err.msg);
        return NM_OK;
    }
    if (z->polys_rc) {
        fail_check(r, 1, "%.400s", z->polys_err.msg);
        return NM_OK;
    }
    bool deck = q->goal_deck_y > NM_kFloorYValidMin;
    bool early = false;
    uint32_t deck_region = 0;
    nm_error perr = {0};
    /* goal deck: the two patches move before snapping (start patch radius 16 + 8 px) */
    if (deck) {
        if (decode_patch(e, bz, q->sx, q->sy, q->sx, q->sy, 4 * (int64_t)(NM_kSnapFallbackRadius + NM_kSnapRadius),
                         &e->patch_start, &perr) == NM_OK &&
            decode_patch(e, bz, q->gx, q->gy, q->gx, q->gy, NM_PICK_RADIUS, &e->patch_goal, &perr) == NM_OK) {
            early = true;
            nm_pick_rec d;
            if (nm_pick_deck_rec(&e->patch_goal, gcell(q->gx), gcell(q->gy), q->goal_deck_y, &d))
                deck_region = d.rid;
        }
    }
    /* 5, 6. snapping */
    nm_zone_snap_result ss, gs;
    nm_zone_snap_opts so = nm_zone_snap_defaults(), go = nm_zone_snap_defaults();
    so.floor_y = q->start_floor_y;
    so.deck_y = q->start_deck_y;
    go.floor_y = q->goal_floor_y;
    nm_error serr = {0};
    int src = NM_ZONE_NOT_FOUND;
    bool deck_snapped = false; /* 起点所在的面 step 2 gave the start */
    if (q->start_deck_y <= NM_kFloorYValidMin && early && deck_region) {
        deck_accept da = {z->zc, &e->patch_start, deck_region, q->sx, q->sy};
        nm_zone_snap_opts fo = so;
        fo.accept = accept_deck;
        fo.accept_ctx = &da;
        src = nm_zone_snap(z->zc, q->sx, q->sy, &fo, &ss, &serr);
        deck_snapped = src == NM_OK;
    }
    if (src != NM_OK) src = nm_zone_snap(z->zc, q->sx, q->sy, &so, &ss, &serr);
    if (src != NM_OK) {
        fail_check(r, 5, "the start (%.2f, %.2f) is too far from the mesh (no triangle within 16 px)", q->sx, q->sy);
        return NM_OK;
    }
    if (nm_zone_snap(z->zc, q->gx, q->gy, &go, &gs, &serr) != NM_OK) {
        fail_check(r, 6, "the goal (%.2f, %.2f) is too far from the mesh (no triangle within 16 px)", q->gx, q->gy);
        return NM_OK;
    }
    double h0 = ss.h;
    /* 7. authored no-go on the raw points, heights of the snapped triangles */
    int hs = nm_nogo_hit(z->polys, z->npolys, q->sx, q->sy, ss.h);
    int hg = hs >= 0 ? -1 : nm_nogo_hit(z->polys, z->npolys, q->gx, q->gy, gs.h);
    if (hs >= 0 || hg >= 0) {
        const nm_nogo_poly *p = &z->polys[hs >= 0 ? hs : hg];
        r->no_go = true;
        fail_check(r, 7, "the %s is inside an authored no-go zone (%.200s)", hs >= 0 ? "start" : "goal",
                   p->id ? p->id : "-");
        return NM_OK;
    }
    /* 8. both ends within 8 px of a core cell on the whole zone */
    double dcs, dcg;
    rc = nm_core_anchor_px_cached(&e->grid, (uint32_t)bz, &e->tiles, q->sx, q->sy, q->gx, q->gy, &dcs, &dcg, &perr);
    if (rc == NM_ERR_NOMEM) return nm_fail(err, rc, "%s", perr.msg);
    if (rc) {
        fail_check(r, 9, "grid decode failed: %.400s", perr.msg);
        return NM_OK;
    }
    if (dcs > NM_kSnapRadius || dcg > NM_kSnapRadius) {
        fail_check(r, 8, "the ends do not reach the walkable layer (start %.2f px / goal %.2f px from the nearest core cell, limit 8)",
                   dcs, dcg);
        return NM_OK;
    }
    /* 9. the two small patches (again when the early decode failed) */
    if (!early) {
        rc = decode_patch(e, bz, q->sx, q->sy, ss.x, ss.y, NM_PICK_RADIUS, &e->patch_start, &perr);
        if (rc == NM_OK && deck) rc = decode_patch(e, bz, q->gx, q->gy, q->gx, q->gy, NM_PICK_RADIUS, &e->patch_goal, &perr);
        if (rc) {
            fail_check(r, 9, "grid decode failed: %.400s", perr.msg);
            return NM_OK;
        }
    }
    /* 10. region pick */
    nm_region_pick pk;
    if (nm_pick_region(&e->patch_start, q->sx, q->sy, ss.x, ss.y, h0, &e->patch_goal, q->gx, q->gy,
                       deck, q->goal_deck_y, &pk, &perr) != NM_OK) {
        fail_check(r, 10, "%.400s", perr.msg);
        if (strstr(perr.msg, "declared deck")) r->code = NM_ROUTE_TARGET_DECK_UNREACHABLE;
        return NM_OK;
    }
    r->region = pk.region;
    /* 选类 step 4 takes effect in the window build: the seed cell must hold a span of the goal
     * deck's region, else the build fails in every tier and the leg ends on that error. Said here,
     * from the start patch (it covers the seed cell), as what it means: the declared deck's region
     * does not reach the start. */
    if (pk.deck_region && !cell_has_region(&e->patch_start, pk.seed_gx, pk.seed_gy, pk.region)) {
        fail_check(r, 10, "target deck unreachable: the declared goal deck %.2f m lies in region %u, which has no "
                          "surface at the start (%.2f, %.2f); the start stands at %.2f m; heights at the goal:",
                   q->goal_deck_y, pk.region, q->sx, q->sy, pk.seed_h);
        r->code = NM_ROUTE_TARGET_DECK_UNREACHABLE;
        list_cell_heights(r, &e->patch_goal, gcell(q->gx), gcell(q->gy));
        return NM_OK;
    }
    /* Both decks declared: the route runs in the goal deck's region, so the start deck must be a
     * surface of that region within the snap radius of the start (the window's start anchor is
     * taken within kDeckBand of it and must lie within 8 px). When the start deck is another
     * region's surface, the goal deck cannot be reached from it (a region change is a ledge drop,
     * never tried towards a declared goal deck): target_deck_unreachable, not a missing start. */
    if (pk.deck_region && q->start_deck_y > NM_kFloorYValidMin &&
        !region_near_deck(&e->patch_start, gcell(q->sx), gcell(q->sy), pk.region, q->start_deck_y)) {
        fail_check(r, 10, "target deck unreachable: the declared goal deck %.2f m lies in region %u, which has no "
                          "surface within %.0f m of the declared start deck %.2f m near the start (%.2f, %.2f); "
                          "heights at the goal:",
                   q->goal_deck_y, pk.region, NM_kDeckBand, q->start_deck_y, q->sx, q->sy);
        r->code = NM_ROUTE_TARGET_DECK_UNREACHABLE;
        list_cell_heights(r, &e->patch_goal, gcell(q->gx), gcell(q->gy));
        return NM_OK;
    }
    /* the patches are spent (选完类后立刻释放) */
    nm_bgrd_out_free(&e->patch_start);
    nm_bgrd_out_free(&e->patch_goal);
    /* 11. the region's bounding box */
    nm_cell_rect bbox;
    rc = cached_bbox(e, z, pk.region, &bbox, &perr);
    if (rc == NM_ERR_NOMEM) return nm_fail(err, rc, "%s", perr.msg);
    if (rc || nm_cell_rect_empty(&bbox)) {
        fail_check(r, 11, "region %u has no grid", pk.region);
        return NM_OK;
    }
    ps->bz = bz;
    ps->z = z;
    ps->deck = deck;
    ps->deck_snapped = deck_snapped;
    ps->ss = ss;
    ps->gs = gs;
    ps->pk = pk;
    ps->bbox = bbox;
    *pass = true;
    return NM_OK;
}

/* 建窗's request for one tier: the tier's rectangle, the region pick's seed, the zone's authored
 * no-go polygons and the leg's runtime discs. The window reads its tiles in place from the
 * engine's tile cache (decoded once for every tier and the next plans). */
static nm_window_request tier_window_request(nm_route_engine *e, const nm_route_request *q, const plan_start *ps,
                                             const nm_tier_choice *ch)
{
    const nm_route_zone_entry *z = ps->z;
    nm_window_request wr;
    memset(&wr, 0, sizeof wr);
    wr.grid = &e->grid;
    wr.bgrd_zone = (uint32_t)ps->bz;
    wr.fields = &e->fields;
    wr.fzone = &z->fz;
    wr.zone_id = z->pack_zone >= 0 ? e->pack->zones[z->pack_zone].id : 0;
    wr.zc = z->zc;
    wr.gx0 = ch->rect.x0;
    wr.gy0 = ch->rect.y0;
    wr.nx = (int32_t)(ch->rect.x1 - ch->rect.x0 + 1);
    wr.ny = (int32_t)(ch->rect.y1 - ch->rect.y0 + 1);
    wr.region = ps->pk.region;
    wr.seed_gx = ps->pk.seed_gx;
    wr.seed_gy = ps->pk.seed_gy;
    wr.seed_h = ps->pk.seed_h;
    wr.polys = z->polys;
    wr.npolys = z->npolys;
    wr.discs = q->discs;
    wr.ndiscs = q->ndiscs;
    wr.workers = e->workers;
    wr.reuse = &e->decode; /* decode scratch kept across the tiers of a plan */
    e->decode.cache = &e->tiles;
    return wr;
}

/* The kept window goes (before a different window is built: two are never held at once). */
static void drop_kept(nm_route_engine *e)
{
    nm_search_state_free(e->kept_state);
    e->kept_state = NULL;
    blockers_free(e->kept_blk);
    e->kept_blk = NULL;
    nm_window_free(&e->kept);
    nm_free(e->kept_key.discs);
    memset(&e->kept_key, 0, sizeof e->kept_key);
    e->has_kept = false;
}

/* Whether the kept window was built for the same rectangle, region, zone and no-go state as wr. */
static bool kept_same(const nm_route_engine *e, const nm_window_request *wr)
{
    const struct nm_kept_key *k = &e->kept_key;
    return e->has_kept && k->bgrd_zone == wr->bgrd_zone && k->region == wr->region && k->zone_id == wr->zone_id &&
           k->gx0 == wr->gx0 && k->gy0 == wr->gy0 && k->nx == wr->nx && k->ny == wr->ny && k->polys == wr->polys &&
           k->npolys == wr->npolys && k->ndiscs == wr->ndiscs &&
           (!wr->ndiscs || memcmp(k->discs, wr->discs, wr->ndiscs * sizeof *wr->discs) == 0);
}

/* 建窗 for one tier: the kept window when it is this request's (nm_window_reseed), with the
 * search state kept with it (*state), else a new build; a new Full window replaces the kept one,
 * which goes first (two Full windows are never held at once). build_ms is the time either took. */
static int tier_window(nm_route_engine *e, const nm_window_request *wr, nm_tier_kind kind, nm_window *w,
                       bool *kept, struct nm_sctx **state, nm_sight_blockers **blk, nm_error *err)
{
    *kept = false;
    *state = NULL;
    *blk = NULL;
    const bool same = kept_same(e, wr);
    if (same) {
        double t0 = now_ms();
        bool fits = false;
        int rc = nm_window_reseed(&e->kept, wr, &fits, err);
        if (rc == NM_ERR_NOMEM) return rc;
        if (rc == NM_OK && fits) {
            *w = e->kept;
            memset(&e->kept, 0, sizeof e->kept);
            e->has_kept = false;
            *state = e->kept_state;
            e->kept_state = NULL;
            *blk = e->kept_blk;
            e->kept_blk = NULL;
            w->build_ms = now_ms() - t0;
            *kept = true;
            return NM_OK;
        }
    }
    if (kind == NM_TIER_FULL || same) drop_kept(e);
    return nm_window_build(wr, w, err);
}

/* The tier is done with w. A Full window of at most NM_KEPT_WINDOW_BYTES stays with the engine
 * for the next request of the same window (route expansion and navbench plan leg after leg in one
 * region); any other goes. */
static void keep_window(nm_route_engine *e, const nm_window_request *wr, nm_tier_kind kind, nm_window *w,
                        struct nm_sctx *state, nm_sight_blockers *blk)
{
    nm_nogo_disc *d = NULL;
    if (kind != NM_TIER_FULL || w->peak_bytes > NM_KEPT_WINDOW_BYTES ||
        (wr->ndiscs && !(d = (nm_nogo_disc *)nm_malloc(wr->ndiscs * sizeof *d)))) {
        nm_search_state_free(state);
        blockers_free(blk);
        nm_window_free(w);
        return;
    }
    drop_kept(e);
    if (nm_search_state_bytes(state) > NM_KEPT_STATE_BYTES) {
        nm_search_state_free(state);
        state = NULL;
    }
    e->kept_state = state; /* the search's work arrays and the blockers go with the window */
    e->kept_blk = blk;
    if (d) memcpy(d, wr->discs, wr->ndiscs * sizeof *d);
    e->kept = *w;
    memset(w, 0, sizeof *w);
    e->kept.gate.fn = NULL; /* set again by the tier that takes it */
    e->kept.gate.ctx = NULL;
    e->kept_key = (struct nm_kept_key){wr->bgrd_zone, wr->region, wr->zone_id, wr->gx0, wr->gy0, wr->nx, wr->ny,
                                       wr->polys, wr->npolys, d, wr->ndiscs};
    e->has_kept = true;
}

/* The window search's request for one tier (小窗结果的检查): the leg, the decks, the switches
 * of the tier's kind and the trust limits of the window, whose sides on the region rectangle cut
 * no route (no trust edge there). */
static nm_search_request tier_search_request(const nm_route_request *q, const plan_start *ps, const nm_tier_choice *ch,
                                             const nm_cell_rect *region_rect, const nm_window *w)
{
    /* endpoint cells of the window (trunc) */
    int64_t si = (int64_t)((q->sx - w->win.x0) / NM_kCS), sj = (int64_t)((q->sy - w->win.y0) / NM_kCS);
    int64_t gi = (int64_t)((q->gx - w->win.x0) / NM_kCS), gj = (int64_t)((q->gy - w->win.y0) / NM_kCS);
    nm_search_request sq;
    memset(&sq, 0, sizeof sq);
    sq.sx = q->sx;
    sq.sy = q->sy;
    sq.gx = q->gx;
    sq.gy = q->gy;
    sq.h0 = ps->pk.seed_h;
    sq.start_deck_set = q->start_deck_y > NM_kFloorYValidMin;
    sq.start_deck = q->start_deck_y;
    sq.goal_deck_set = ps->deck;
    sq.goal_deck = q->goal_deck_y;
    sq.small = ch->kind == NM_TIER_TENTATIVE;
    sq.region_sides = nm_route_region_sides(&ch->rect, region_rect);
    sq.limit1 = nm_route_limit1_sides(w->win.nx, w->win.ny, si, sj, gi, gj, sq.region_sides);
    sq.limit2 = nm_route_limit2_sides(w->win.nx, w->win.ny, si, sj, gi, gj, sq.region_sides);
    sq.give_up = 0; /* the search applies limit2 - (ds + dg)/kCS + 1 itself */
    return sq;
}

/* 窗内求路 for one tier: the sight oracle for the geometry layer, then the three solves. The search
 * takes the window's kept state and hands back the one to keep (*wstate); *wblk: the window's
 * blockers, made beside the geometry layer when none are kept with it and two threads run. */
static int tier_search(nm_route_engine *e, const nm_route_request *q, const plan_start *ps,
                       const nm_tier_choice *ch, const nm_cell_rect *R, nm_window *w, struct nm_sctx **wstate,
                       nm_sight_blockers **wblk, nm_search_result *sr, nm_route_result *r, nm_error *err)
{
    los_ctx lc;
    memset(&lc, 0, sizeof lc);
    nm_sight_oracle orc;
    memset(&orc, 0, sizeof orc);
    bool have_orc = nm_sight_oracle_init(&orc, w, err) == NM_OK;
    lc.view = (nm_sight_view){w, NULL, NULL, have_orc ? &orc : NULL, true, have_orc};
    lc.two = nm_search_two_threads(e->workers, w->spans.nspans);
    lc.want_blk = !*wblk;
    atomic_init(&lc.far_done, false);
    nm_search_request sq = tier_search_request(q, ps, ch, R, w);
    sq.workers = e->workers;
    sq.los = los_adapter;
    sq.los_ctx = &lc;
    sq.los_prep = los_prep;
    sq.state = *wstate;
    sq.keep_state = ch->kind == NM_TIER_FULL; /* only a Full window is kept */
    memset(sr, 0, sizeof *sr);
    int qrc = nm_search_route_window(w, &sq, sr, err);
    *wstate = sr->state; /* the search took the old one; this is the one to keep */
    sr->state = NULL;
    far_join(&lc);
    if (lc.blk) *wblk = lc.blk; /* want_blk: *wblk was NULL */
    r->blockers_beside = lc.blk != NULL;
    nm_free(lc.on_far);
    nm_free(lc.ground);
    if (have_orc) nm_sight_oracle_free(&orc);
    r->ms_topo += sr->ms_topo;
    r->ms_geo += sr->ms_geo;
    r->topo_from = (int)sr->topo_from;
    return qrc;
}

/* A tier whose result is not taken: its note, and the leg's error when no tier is left. */
static void tier_refused(const nm_route_request *q, const plan_start *ps, const nm_search_result *sr,
                         nm_tier_action a, int round, const char *kname, uint64_t wcells, nm_route_result *r)
{
    const char *why = sr->status == NM_SEARCH_ESCALATE ? nm_escalation_name(nm_escalation_from_search(sr->reason))
                                                       : (sr->message[0] ? sr->message : "no route");
    /* an escalation also names the layer that asked for it (the search's message) */
    char whyl[320];
    if (sr->status == NM_SEARCH_ESCALATE && sr->message[0])
        snprintf(whyl, sizeof whyl, "%.100s (%.200s)", why, sr->message);
    else
        snprintf(whyl, sizeof whyl, "%.300s", why);
    note(r, "tier %d (%s, %llu cells): %s; ", round, kname, wcells, whyl);
    if (a == NM_TIER_FAIL) {
        snprintf(r->error, sizeof r->error, "%.400s", sr->message[0] ? sr->message : why);
        r->code = search_fail_code(sr, ps->deck, q->start_deck_y > NM_kFloorYValidMin);
        copy_gap(r, sr);
    }
}

/* 最终判定, refused: an end too far from the reach set, or the goal cut off. The error, its code
 * and the gap; then 台沿下落换类 (only the goal side short, the goal not cut off, no goal deck, the
 * outermost plan) collects the ledge drops to try. Fails only for out of memory. */
static int final_refusal(nm_route_engine *e, const nm_route_request *q, const plan_start *ps, const nm_window *w,
                         uint16_t zone_id, const nm_search_result *sr, bool hopping, hop *hops, uint32_t *nhops,
                         nm_route_result *r, nm_error *err)
{
    snprintf(r->error, sizeof r->error,
             "cannot reach the goal: cannot walk from the start to the goal (start %.2f px / goal %.2f px from the reach set%s)",
             sr->snap_start, sr->snap_goal, sr->goal_cut_off ? "; the goal is cut off" : "");
    r->code = q->start_deck_y > NM_kFloorYValidMin && sr->snap_start > NM_kSnapRadius ? NM_ROUTE_START_DECK_UNREACHABLE
              : ps->deck ? NM_ROUTE_TARGET_DECK_UNREACHABLE
                         : NM_ROUTE_UNREACHABLE;
    copy_gap(r, sr);
    if (!r->has_gap && sr->snap_goal > NM_kSnapRadius) {
        /* 断开处: where the reach set comes closest to the goal, and the goal */
        uint32_t c = sr->goal_anchor;
        r->has_gap = true;
        r->gap_sx = w->win.x0 + ((double)(c % (uint32_t)w->win.nx) + 0.5) * NM_kCS;
        r->gap_sy = w->win.y0 + ((double)(c / (uint32_t)w->win.nx) + 0.5) * NM_kCS;
        r->gap_gx = q->gx;
        r->gap_gy = q->gy;
        r->gap_dist = nm_hypot(r->gap_gx - r->gap_sx, r->gap_gy - r->gap_sy);
    }
    if (hopping || ps->deck || sr->goal_cut_off || sr->snap_start > NM_kSnapRadius) return NM_OK;
    nm_pick_rec gr;
    nm_error herr = {0}; /* a drop that cannot be looked for is only not tried */
    int hrc = decode_patch(e, ps->bz, q->gx, q->gy, q->gx, q->gy, NM_PICK_RADIUS, &e->patch_goal, &herr);
    if (hrc == NM_OK && nm_pick_start_rec(&e->patch_goal, gcell(q->gx), gcell(q->gy), ps->gs.h, &gr) &&
        gr.rid != ps->pk.region)
        hrc = collect_hops(e, ps->bz, w, zone_id, gr.rid, q, hops, nhops, &herr);
    nm_bgrd_out_free(&e->patch_goal);
    return hrc == NM_ERR_NOMEM ? nm_fail(err, hrc, "%s", herr.msg) : NM_OK;
}

/* 最终判定, taken: the route's post-processing, and a warning when the route starts or ends on
 * another storey than the floor asked for (floors only rank triangles: the host can declare the
 * deck it means). Fails only for out of memory. */
static int accept_route(nm_route_engine *e, const nm_route_request *q, const plan_start *ps, const nm_window *w,
                        nm_search_result *sr, nm_sight_blockers **wblk, nm_route_result *r, nm_error *err)
{
    nm_error perr = {0};
    int prc = finish_route(e, ps->z, w, q, sr, r, wblk, &perr);
    if (prc == NM_ERR_NOMEM) return nm_fail(err, prc, "%s", perr.msg);
    if (prc) snprintf(r->error, sizeof r->error, "post-processing failed: %.400s", perr.msg);
    else if (r->npoints < 2) snprintf(r->error, sizeof r->error, "the route has fewer than 2 points");
    else r->ok = true;
    r->code = r->ok ? NM_ROUTE_OK : NM_ROUTE_INTERNAL;
    const nm_zone_snap_result *ss = &ps->ss, *gs = &ps->gs;
    if (r->ok && ps->deck_snapped && q->start_floor_y > NM_kFloorYValidMin && fabs(ss->h - q->start_floor_y) > NM_kClimb)
        add_warning(r, "the start snapped %.2f px onto the goal deck's region at %.2f m, not the start floor "
                       "%.2f m (declare start_deck_y to start on that floor)",
                    ss->dist, ss->h, (double)q->start_floor_y);
    if (r->ok && !ps->deck && q->goal_floor_y > NM_kFloorYValidMin && r->heights &&
        fabs(r->heights[r->npoints - 1] - gs->h) > NM_kClimb)
        add_warning(r, "the route ends at %.2f m, %.2f px from the goal, whose floor triangle is at %.2f m "
                       "(declare goal_deck_y to end on that surface)",
                    (double)r->heights[r->npoints - 1], r->snap_goal, gs->h);
    return NM_OK;
}

/* 窗口分档: the tier loop. Each round builds its window, searches it, and either takes the result
 * (最终判定), or moves on as nm_tier_after says. Ledge drops found by a refusal come back in hops. */
static int plan_tiers(nm_route_engine *e, const nm_route_request *q, const plan_start *ps, bool hopping,
                      hop *hops, uint32_t *nhops, nm_route_result *r, nm_error *err)
{
    nm_cell_rect R = nm_tier_region_rect(&ps->bbox);
    nm_tier_leg leg = {q->sx, q->sy, q->gx, q->gy, ps->ss.x, ps->ss.y};
    nm_tier_state st;
    nm_tier_state_init(&st);
    st.force_full = q->force_full;
    const uint64_t plan_id = e->clock; /* zone_entry ticks once per plan */
    bool gate_noted = false;
    for (;;) {
        nm_tier_choice ch;
        nm_error terr = {0};
        if (nm_tier_next(&st, &leg, &R, &ch, &terr) != NM_OK) {
            snprintf(r->error, sizeof r->error, "%.400s", terr.msg);
            r->code = NM_ROUTE_REGION_TOO_LARGE;
            return NM_OK;
        }
        if (q->should_stop && q->should_stop(q->stop_ctx)) {
            snprintf(r->error, sizeof r->error, "planning cancelled");
            r->code = NM_ROUTE_CANCELLED;
            return NM_OK;
        }
        uint64_t wcells = nm_cell_rect_area(&ch.rect);
        const char *kname = nm_tier_kind_name(ch.kind);
        nm_window_request wr = tier_window_request(e, q, ps, &ch);
        nm_window w;
        nm_error werr = {0};
        int round = st.tier;
        bool kept;
        struct nm_sctx *wstate;  /* the search state kept with the window */
        nm_sight_blockers *wblk; /* and its blockers */
        int brc = tier_window(e, &wr, ch.kind, &w, &kept, &wstate, &wblk, &werr);
        r->windows_kept += kept;
        if (brc == NM_ERR_NOMEM) return nm_fail(err, brc, "%s", werr.msg);
        if (brc) {
            nm_tier_action a = nm_tier_after(&st, &ch, &R, NM_TIER_BUILD_FAILED);
            note(r, "tier %d (%s, %llu cells): window build failed: %s; ", round, kname, wcells, werr.msg);
            if (a == NM_TIER_FAIL) {
                snprintf(r->error, sizeof r->error, "window build failed: %.400s", werr.msg);
                r->code = NM_ROUTE_INTERNAL;
                return NM_OK;
            }
            continue;
        }
        /* FallGate for the searches' RiseOk (台沿下落); the caches live for this plan's tiers */
        nm_error gerr = {0};
        if (nm_window_set_gate(&w, e, plan_id, ps->z->zc, &gerr) != NM_OK && !gate_noted) {
            note(r, "tier %d (%s, %llu cells): fall gate unavailable: %s; ", round, kname, wcells, gerr.msg);
            gate_noted = true;
        }
        r->ms_window += w.build_ms;
        if (w.peak_bytes > r->peak_window_bytes) r->peak_window_bytes = w.peak_bytes;
        /* the last window tried: a failed leg's overlay draws it (an accepted route sets it again) */
        r->win_x0 = w.win.x0;
        r->win_y0 = w.win.y0;
        r->win_nx = w.win.nx;
        r->win_ny = w.win.ny;
        nm_search_result sr;
        int qrc = tier_search(e, q, ps, &ch, &R, &w, &wstate, &wblk, &sr, r, &werr);
        if (qrc) {
            nm_search_result_free(&sr);
            keep_window(e, &wr, ch.kind, &w, wstate, wblk);
            if (qrc == NM_ERR_NOMEM) return nm_fail(err, qrc, "%s", werr.msg);
            nm_tier_action a = nm_tier_after(&st, &ch, &R, NM_TIER_NO_PATH);
            note(r, "tier %d (%s, %llu cells): search error: %s; ", round, kname, wcells, werr.msg);
            if (a == NM_TIER_FAIL) {
                snprintf(r->error, sizeof r->error, "%.400s", werr.msg);
                r->code = NM_ROUTE_INTERNAL;
                return NM_OK;
            }
            continue;
        }
        nm_tier_outcome oc = sr.status == NM_SEARCH_OK ? NM_TIER_ROUTE
                             : sr.status == NM_SEARCH_ESCALATE ? NM_TIER_ESCALATE : NM_TIER_NO_PATH;
        nm_tier_action a = nm_tier_after(&st, &ch, &R, oc);
        if (a != NM_TIER_ACCEPT) {
            tier_refused(q, ps, &sr, a, round, kname, wcells, r);
            nm_search_result_free(&sr);
            keep_window(e, &wr, ch.kind, &w, wstate, wblk);
            if (a == NM_TIER_FAIL) return NM_OK;
            continue;
        }
        /* 最终判定: both ends near the reach set and the goal not cut off */
        r->tier = round;
        r->kind = ch.kind;
        r->window_cells = wcells;
        r->snap_start = sr.snap_start;
        r->snap_goal = sr.snap_goal;
        int frc = nm_search_final_refuses(&sr)
                      ? final_refusal(e, q, ps, &w, wr.zone_id, &sr, hopping, hops, nhops, r, err)
                      : accept_route(e, q, ps, &w, &sr, &wblk, r, err);
        nm_search_result_free(&sr);
        keep_window(e, &wr, ch.kind, &w, wstate, wblk);
        return frc;
    }
}

/* planLocked: 前置检查与选类, 窗口分档, then the ledge drops a refusal found (台沿下落换类). */
static int plan_locked(nm_route_engine *e, const nm_route_request *q, nm_route_result *r,
                       nm_error *err, bool hopping)
{
    double t0 = now_ms();
    memset(r, 0, sizeof *r);
    r->tier = -1;
    r->hop_index = UINT32_MAX;
    if (!q || !q->zone || !isfinite(q->sx) || !isfinite(q->sy) || !isfinite(q->gx) || !isfinite(q->gy))
        return nm_fail(err, NM_ERR_ARG, "plan: bad request (zone or non-finite point)");
    plan_start ps;
    bool go;
    int rc = plan_checks(e, q, r, &ps, &go, err);
    if (rc || !go) {
        r->ms_total = now_ms() - t0;
        return rc;
    }
    r->ms_checks = now_ms() - t0;
    hop hops[NM_kDropHopTries];
    uint32_t nhops = 0;
    rc = plan_tiers(e, q, &ps, hopping, hops, &nhops, r, err);
    if (rc == NM_OK && nhops > 0) {
        rc = try_hops(e, q, hops, nhops, r, err);
        if (rc == NM_OK && !r->ok && strstr(r->error, "cancelled") == NULL) {
            size_t tn = strlen(r->tier_notes);
            snprintf(r->tier_notes + tn, sizeof r->tier_notes - tn, "%u ledge drop(s) tried, none connected; ",
                     nhops);
        }
    }
    r->ms_total = now_ms() - t0;
    return rc;
}

/* warm's second part: a zone whose decoded tiles all fit the tile cache has them decoded now,
 * with its sidecar columns as the windows read them: the host loads a zone once and plans many
 * legs on it, and otherwise each plan in a new part of the zone paid its first decodes (a third
 * of the demo route's planning time). A zone too large for the cache is left to the plans, which
 * keep what they decode. Then every region's bounding box (类的包围盒), from those tiles or, for
 * a zone too large, from the tiles' region fields decoded on the engine's workers (a region's
 * first plan paid it otherwise: 115 ms on the large world). Nothing here can fail warm: a tile that does not decode
 * (or no memory) leaves the cache and the boxes as they were, and the plan that reads the tile
 * reports it. */
static void warm_tiles(nm_route_engine *e, nm_route_zone_entry *z)
{
    const nm_bgrd_zone *gz = &e->grid.zones[z->bgrd_zone];
    const size_t budget = e->tiles.budget ? e->tiles.budget : NM_BGRD_CACHE_BYTES;
    size_t need = 0;
    for (uint32_t t = 0; t < gz->tile_count; t++)
        need += (size_t)gz->tiles[t].records * (sizeof(nm_grid_rec) + sizeof(nm_span_fields));
    const bool fits = e->has_fields && need <= budget - (e->tiles.bytes < budget ? e->tiles.bytes : budget);
    uint32_t *ids = (uint32_t *)nm_malloc(((size_t)gz->tile_count + 1) * sizeof *ids);
    nm_bgrd_tile_view *views = (nm_bgrd_tile_view *)nm_calloc((size_t)gz->tile_count + 1, sizeof *views);
    uint32_t *rids = NULL, nr = 0;
    nm_cell_rect *box = NULL;
    nm_error err;
    int rc = ids && views ? NM_OK : NM_ERR_NOMEM;
    for (uint32_t t = 0; rc == NM_OK && t < gz->tile_count; t++) ids[t] = t;
    if (rc == NM_OK && fits)
        rc = nm_bgrd_view_tiles(&e->grid, (uint32_t)z->bgrd_zone, ids, gz->tile_count, &e->fields, &e->tiles,
                                e->workers, &e->decode, views, &err);
    if (rc == NM_OK) rc = nm_region_bboxes(&e->grid, (uint32_t)z->bgrd_zone, views, e->workers, &rids, &box, &nr, &err);
    for (uint32_t k = 0; rc == NM_OK && k < nr; k++) { /* the boxes not kept yet */
        bool kept = false;
        for (uint32_t i = 0; i < z->nbbox && !kept; i++) kept = z->bbox_rid[i] == rids[k];
        if (!kept && !nm_cell_rect_empty(&box[k])) keep_bbox(z, rids[k], &box[k]);
    }
    nm_free(rids);
    for (uint32_t t = 0; views && t < gz->tile_count; t++) nm_bgrd_tile_view_free(&views[t]);
    nm_bgrd_out_free(&e->decode);
    nm_free(ids);
    nm_free(views);
    nm_free(box);
}

int nm_route_warm(nm_route_engine *e, const char *zone, nm_error *err)
{
    if (e->status) return nm_fail(err, e->status, "%.400s", e->err.msg);
    int bz = nm_bgrd_find_zone(&e->grid, zone);
    if (bz < 0) return nm_fail(err, NM_ERR_ARG, "zone '%.200s' has no pre-baked grid", zone);
    nm_route_zone_entry *z = zone_entry(e, zone, bz);
    if (!z) return nm_fail(err, NM_ERR_NOMEM, "warm: out of memory");
    if (z->zc_rc) return nm_fail(err, z->zc_rc, "%.400s", z->zc_err.msg);
    if (z->fz_rc) return nm_fail(err, z->fz_rc, "%.400s", z->fz_err.msg);
    warm_tiles(e, z);
    nm_window_gate_warm(e, z->zc); /* the zone's collision scene read now, not by the first plan */
    return NM_OK;
}

typedef struct pt_rid {
    uint32_t pt, rid;
} pt_rid;

static int cmp_pt_rid(const void *a, const void *b)
{
    const pt_rid *x = (const pt_rid *)a, *y = (const pt_rid *)b;
    if (x->pt != y->pt) return x->pt < y->pt ? -1 : 1;
    return x->rid < y->rid ? -1 : x->rid > y->rid;
}

/* regionsNear (选类 / regionsNear): every non-Fill record within kSnapRadius counts; a region
 * too many only keeps a leg, a region missed would drop a leg that works. */
int nm_route_regions_near(nm_route_engine *e, const char *zone, const double *xy, uint32_t n,
                          uint32_t *start, uint32_t **rids, nm_error *err)
{
    *rids = NULL;
    for (uint32_t i = 0; i <= n; i++) start[i] = 0;
    if (e->status || !e->has_grid) return NM_OK;
    int bz = nm_bgrd_find_zone(&e->grid, zone);
    if (bz < 0) return NM_OK;
    const nm_bgrd_zone *z = &e->grid.zones[bz];
    const int64_t r = NM_PICK_RADIUS + 1;
    const double r2 = NM_kSnapRadius * NM_kSnapRadius;
    pt_rid *pr = NULL;
    size_t npr = 0, cap = 0, bcap = 0;
    nm_grid_rec *buf = NULL;
    nm_bgrd_scratch sc;
    memset(&sc, 0, sizeof sc);
    int rc = NM_OK;
    for (uint32_t ti = 0; ti < z->tile_count && rc == NM_OK; ti++) {
        const nm_bgrd_tile *t = &z->tiles[ti];
        if (t->records == 0) continue;
        int64_t ox0 = (int64_t)t->gx0 + t->px0, ox1 = (int64_t)t->gx0 + t->px1;
        int64_t oy0 = (int64_t)t->gy0 + t->py0, oy1 = (int64_t)t->gy0 + t->py1;
        bool decoded = false;
        for (uint32_t p = 0; p < n && rc == NM_OK; p++) {
            if (!isfinite(xy[2 * p]) || !isfinite(xy[2 * p + 1])) continue;
            int64_t cx = gcell(xy[2 * p]), cy = gcell(xy[2 * p + 1]);
            if (ox1 < cx - r || ox0 > cx + r || oy1 < cy - r || oy0 > cy + r) continue;
            if (!decoded) { /* each tile decoded once for the whole batch */
                if (bcap < t->records) {
                    nm_grid_rec *nb = (nm_grid_rec *)nm_realloc(buf, (size_t)t->records * sizeof *nb);
                    if (!nb) {
                        rc = nm_fail(err, NM_ERR_NOMEM, "regionsNear: out of memory");
                        break;
                    }
                    buf = nb;
                    bcap = t->records;
                }
                rc = nm_bgrd_decode_tile(&e->grid, (uint32_t)bz, ti, &sc, buf, err);
                if (rc) break;
                decoded = true;
            }
            for (uint32_t k = 0; k < t->records; k++) {
                if (buf[k].flags & NM_GRID_FILL) continue;
                int64_t lx = buf[k].cell % t->nx, ly = buf[k].cell / t->nx;
                if (lx < t->px0 || lx > t->px1 || ly < t->py0 || ly > t->py1) continue;
                double ux = ((double)(t->gx0 + lx) + 0.5) * NM_kCS - xy[2 * p];
                double uy = ((double)(t->gy0 + ly) + 0.5) * NM_kCS - xy[2 * p + 1];
                if (ux * ux + uy * uy > r2) continue;
                if (npr == cap) {
                    size_t nc = cap ? 2 * cap : 256;
                    pt_rid *np = (pt_rid *)nm_realloc(pr, nc * sizeof *np);
                    if (!np) {
                        rc = nm_fail(err, NM_ERR_NOMEM, "regionsNear: out of memory");
                        break;
                    }
                    pr = np;
                    cap = nc;
                }
                pr[npr++] = (pt_rid){p, buf[k].rid};
            }
        }
    }
    nm_free(buf);
    nm_bgrd_scratch_free(&sc);
    if (rc) {
        nm_free(pr);
        return rc;
    }
    if (npr) qsort(pr, npr, sizeof *pr, cmp_pt_rid);
    uint32_t *out = (uint32_t *)nm_malloc((npr ? npr : 1) * sizeof *out);
    if (!out) {
        nm_free(pr);
        return nm_fail(err, NM_ERR_NOMEM, "regionsNear: out of memory");
    }
    size_t m = 0;
    for (size_t k = 0; k < npr; k++) {
        if (k > 0 && pr[k].pt == pr[k - 1].pt && pr[k].rid == pr[k - 1].rid) continue;
        out[m++] = pr[k].rid;
        start[pr[k].pt + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) start[i + 1] += start[i];
    nm_free(pr);
    *rids = out;
    return NM_OK;
}
