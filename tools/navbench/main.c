/* navbench — runs the planner over a set of legs of one zone and prints one JSON line per leg
 * (ok, error, tier, window cells, per-stage ms, length, points after each stage, corners lifted
 * and by how much, pull steps taken unchecked, drop / hop use, self check, the window build's and
 * the whole plan's peak bytes per cell) and a summary line (success rate, p50 / p90 per stage,
 * the stage point totals of the article's 点数的变化, lift displacements, the unchecked share,
 * legs with a drop / a hop).
 *
 *   navbench --pack P --zone Z (--legs FILE | --random N --seed S) [--nogo F] [--workers N]
 *            [--self-check] [--compare OLD.jsonl] [--audit LEVEL.obj [--audit-config ZONE.json]
 *            [--audit-scale S]]
 *
 * Per leg and in the summary, each search stage also as nanoseconds per window cell (ns_per_cell:
 * the stage's time over the accepted window's cells, so legs of different sizes compare); the
 * summary gives the process's peak RSS and the plans' minor page faults (getrusage: sum, p50 and
 * p90 a leg: the kernel's fresh pages, nearly deterministic for one binary), and warm_ms, the
 * zone's warm before leg 0 (as a host warms a zone it loads: nm_route_warm). --compare reads an
 * earlier run's output (the same legs: matched by leg number and end points) and prints per leg
 * the ratio new / old of each stage's time, and their geometric means (stderr: a table; stdout:
 * "compare" in the summary).
 *
 * --audit checks every ok route against the level's own triangles (tools/navaudit/audit.h): each
 * leg line gets "audit": {"kind", "msg"}, the summary "audit": {"checked", "failures"}.
 *
 * A legs file holds one leg a line: "sx sy gx gy" in px ('#' starts a comment). Random legs join
 * centres of random triangles of the zone a character can stand on (xorshift64* from the seed,
 * so runs repeat; a triangle drawn that is steep or unwalkable gives way to the next one that is
 * not, nm_tri_standable). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "route/route.h"
#include "window/window_gate.h"
#ifdef NM_HAVE_AUDIT
#include "audit.h"
#endif

typedef struct leg {
    double sx, sy, gx, gy;
} leg;

/* The zone's first triangle from local number k on (cyclically) that a character can stand on:
 * a leg never starts or ends inside a facade's vertical strip or on water (issue 12, large world
 * leg 11 asked for the centre of a facade triangle). Walking on from the drawn number, rather
 * than drawing again, keeps every other leg of a seed as it was. The zone's own first triangle
 * when none is standable. */
static uint32_t standable_from(const nm_pack *p, const nm_zone *z, uint32_t k)
{
    for (uint32_t n = 0; n < z->tri_count; n++) {
        uint32_t t = z->first_tri + (k + n) % z->tri_count;
        if (nm_tri_standable(p, t)) return t;
    }
    return z->first_tri + k;
}

static void usage(void)
{
    fprintf(stderr, "usage: navbench --pack P --zone Z (--legs FILE | --random N --seed S) "
                    "[--nogo F] [--workers N] [--self-check] [--compare OLD.jsonl] "
                    "[--audit LEVEL.obj [--audit-config ZONE.json] [--audit-scale S]]\n");
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_d);
    size_t k = (size_t)ceil(p * (double)n) - 1;
    if (k >= n) k = n - 1;
    return v[k];
}

enum { ST_CHECKS, ST_WINDOW, ST_TOPO, ST_GEO, ST_PULL, ST_ASSEMBLE, ST_LIFT, ST_POST, ST_TOTAL, ST_N };
static const char *k_stage[ST_N] = {"checks", "window", "topology", "geometry", "pull", "assemble",
                                    "lift", "post", "total"};

/* One leg of an earlier run (--compare). */
typedef struct old_leg {
    double sx, sy, gx, gy;
    double ms[ST_N];
    double cpu_ms;  /* NAN when the old run did not record it */
    bool ok;
} old_leg;

/* The number after "key": in s (the first one), or NAN. */
static double json_num(const char *s, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(s, k);
    return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* Reads the per-leg lines of a navbench output; NULL (message printed) when unreadable. */
static old_leg *read_old(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "navbench: cannot open %s\n", path);
        return NULL;
    }
    old_leg *v = NULL;
    size_t cap = 0;
    *n = 0;
    static char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "{\"leg\":", 7) != 0) continue;
        size_t i = (size_t)strtoul(line + 7, NULL, 10);
        if (i >= *n) {
            if (i >= cap) {
                size_t nc = cap ? cap : 64;
                while (nc <= i) nc *= 2;
                old_leg *nv = (old_leg *)realloc(v, nc * sizeof *v);
                if (!nv) break;
                v = nv;
                cap = nc;
            }
            for (size_t k = *n; k <= i; k++) v[k].sx = NAN;
            *n = i + 1;
        }
        old_leg *o = &v[i];
        o->sx = json_num(line, "sx");
        o->sy = json_num(line, "sy");
        o->gx = json_num(line, "gx");
        o->gy = json_num(line, "gy");
        o->ok = strstr(line, "\"ok\":true") != NULL;
        const char *ms = strstr(line, "\"ms\":{");
        for (int k = 0; k < ST_N; k++) o->ms[k] = ms ? json_num(ms, k_stage[k]) : NAN;
        o->cpu_ms = json_num(line, "cpu_ms");
    }
    fclose(f);
    if (!v) fprintf(stderr, "navbench: no legs in %s\n", path);
    return v;
}

/* Stages shown as ns per window cell: the window build and the two searches. */
static const int k_per_cell[] = {ST_WINDOW, ST_TOPO, ST_GEO, ST_TOTAL};
#define N_PER_CELL (sizeof k_per_cell / sizeof *k_per_cell)

/* Pull steps taken unchecked (拉直 step 3): a pulled segment joining two neighbours of the taut
 * chain (StringPull only takes i + 1 when nothing further is visible). */
/* plan_digest: FNV-1a over every bit of a plan a host reads, and of the stage point lists, so two
 * runs (a speed change before and after) compare bit for bit with one field. */
static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001B3ULL;
    return h;
}

static uint64_t fnv_points(uint64_t h, const nm_route_points *p)
{
    h = fnv_bytes(h, &p->n, sizeof p->n);
    if (p->xy) h = fnv_bytes(h, p->xy, (size_t)p->n * 2 * sizeof *p->xy);
    if (p->heights) h = fnv_bytes(h, p->heights, (size_t)p->n * sizeof *p->heights);
    return h;
}

/* nm_route_result.topo_from as navbench prints it. */
static const char *topo_from_name(int f)
{
    static const char *const k_names[] = {"one", "beside", "proved", "again"};
    return f >= 0 && f < 4 ? k_names[f] : "?";
}

static uint64_t plan_digest(const nm_route_result *r)
{
    uint64_t h = 0xCBF29CE484222325ULL;
    h = fnv_bytes(h, &r->ok, sizeof r->ok);
    h = fnv_bytes(h, r->error, strlen(r->error));
    if (!r->ok) return h;
    const nm_route_points final = {r->xy, r->heights, r->npoints};
    h = fnv_points(h, &final);
    if (r->clearance) h = fnv_bytes(h, r->clearance, (size_t)r->npoints * sizeof *r->clearance);
    if (r->waypoints) h = fnv_bytes(h, r->waypoints, (size_t)r->nwaypoints * sizeof *r->waypoints);
    for (uint32_t i = 0; i < r->ndrops; i++) {
        const nm_route_drop *d = &r->drops[i];
        h = fnv_bytes(h, &d->index, sizeof d->index);
        h = fnv_bytes(h, &d->height, sizeof d->height);
        h = fnv_bytes(h, &d->from_x, sizeof d->from_x);
        h = fnv_bytes(h, &d->from_y, sizeof d->from_y);
    }
    h = fnv_bytes(h, &r->length, sizeof r->length);
    h = fnv_bytes(h, &r->snap_start, sizeof r->snap_start);
    h = fnv_bytes(h, &r->snap_goal, sizeof r->snap_goal);
    h = fnv_bytes(h, &r->base_cost, sizeof r->base_cost);
    h = fnv_bytes(h, r->warnings, strlen(r->warnings));
    h = fnv_points(h, &r->dbg_topology);
    h = fnv_points(h, &r->dbg_taut);
    h = fnv_points(h, &r->dbg_pulled);
    return fnv_points(h, &r->dbg_assembled);
}

static void unchecked_steps(const nm_route_points *taut, const nm_route_points *pulled,
                            uint32_t *unchecked, uint32_t *segs)
{
    *unchecked = *segs = 0;
    if (taut->n < 2 || pulled->n < 2) return;
    uint32_t at = 0, prev = UINT32_MAX;
    for (uint32_t k = 0; k < pulled->n; k++) {
        while (at < taut->n && (taut->xy[2 * at] != pulled->xy[2 * k] || taut->xy[2 * at + 1] != pulled->xy[2 * k + 1]))
            at++;
        if (at == taut->n) return; /* not a subset (joined parts): leave it */
        if (prev != UINT32_MAX) {
            (*segs)++;
            *unchecked += at == prev + 1;
        }
        prev = at;
    }
}

int main(int argc, char **argv)
{
    const char *pack_path = NULL, *zone = NULL, *legs_path = NULL, *nogo = NULL, *compare = NULL;
    long nrandom = -1;
    unsigned long long seed = 1;
    int workers = 0;
    bool self_check = false;
    const char *audit_obj = NULL, *audit_cfg = NULL;
    double audit_scale = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (v && !strcmp(a, "--pack")) pack_path = argv[++i];
        else if (v && !strcmp(a, "--zone")) zone = argv[++i];
        else if (v && !strcmp(a, "--legs")) legs_path = argv[++i];
        else if (v && !strcmp(a, "--nogo")) nogo = argv[++i];
        else if (v && !strcmp(a, "--random")) nrandom = strtol(argv[++i], NULL, 10);
        else if (v && !strcmp(a, "--seed")) seed = strtoull(argv[++i], NULL, 10);
        else if (v && !strcmp(a, "--workers")) workers = atoi(argv[++i]);
        else if (v && !strcmp(a, "--compare")) compare = argv[++i];
        else if (!strcmp(a, "--self-check")) self_check = true;
        else if (v && !strcmp(a, "--audit")) audit_obj = argv[++i];
        else if (v && !strcmp(a, "--audit-config")) audit_cfg = argv[++i];
        else if (v && !strcmp(a, "--audit-scale")) audit_scale = strtod(argv[++i], NULL);
        else {
            fprintf(stderr, "navbench: unknown or incomplete option '%s'\n", a);
            usage();
            return 2;
        }
    }
    if (!pack_path || !zone || (!legs_path && nrandom < 0) || (legs_path && nrandom >= 0)) {
        usage();
        return 2;
    }
    nm_pack pack;
    nm_error err = {0};
    nm_pack_load_opts lo = {0};
    lo.workers = workers;
    if (nm_pack_load(pack_path, &lo, &pack, &err) != NM_OK) {
        fprintf(stderr, "navbench: %s\n", err.msg);
        return 1;
    }
    int zi = nm_pack_find_zone(&pack, zone);
    if (zi < 0) {
        fprintf(stderr, "navbench: zone '%s' not in the pack\n", zone);
        nm_pack_free(&pack);
        return 1;
    }
#ifdef NM_HAVE_AUDIT
    nm_audit_level *audit = NULL;
    nm_audit_params audit_p;
    uint64_t audit_checked = 0, audit_failures = 0;
    if (audit_obj) {
        nm_obj ao;
        nm_bake_config ac;
        if (nm_obj_load(audit_obj, &ao, &err) ||
            (audit_cfg && nm_bake_config_load(audit_cfg, zone, &ac, &err))) {
            fprintf(stderr, "navbench: --audit: %s\n", err.msg);
            nm_pack_free(&pack);
            return 1;
        }
        int arc = nm_audit_level_build(&ao, audit_cfg ? &ac : NULL, audit_scale, &pack, zone, &audit, &err);
        nm_bake_agent ag = {2.1, 0.41, 0.5, 45};
        if (audit_cfg) ag = ac.agent;
        nm_obj_free(&ao);
        if (audit_cfg) nm_bake_config_free(&ac);
        if (arc) {
            fprintf(stderr, "navbench: --audit: %s\n", err.msg);
            nm_pack_free(&pack);
            return 1;
        }
        audit_p = nm_audit_params_default(&ag, nm_audit_px_per_m(audit));
    }
#else
    if (audit_obj) {
        fprintf(stderr, "navbench: --audit needs the Recast / Detour build (tools/navaudit)\n");
        nm_pack_free(&pack);
        return 2;
    }
    (void)audit_cfg;
    (void)audit_scale;
#endif
    /* the legs */
    leg *legs = NULL;
    size_t nlegs = 0, cap = 0;
    if (legs_path) {
        FILE *f = fopen(legs_path, "r");
        if (!f) {
            fprintf(stderr, "navbench: cannot open %s\n", legs_path);
            nm_pack_free(&pack);
            return 1;
        }
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *h = strchr(line, '#');
            if (h) *h = 0;
            leg l;
            if (sscanf(line, "%lf %lf %lf %lf", &l.sx, &l.sy, &l.gx, &l.gy) != 4) continue;
            if (nlegs == cap) {
                cap = cap ? 2 * cap : 64;
                legs = (leg *)realloc(legs, cap * sizeof *legs);
                if (!legs) return 1;
            }
            legs[nlegs++] = l;
        }
        fclose(f);
    } else {
        const nm_zone *z = &pack.zones[zi];
        uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
        legs = (leg *)calloc(nrandom ? (size_t)nrandom : 1, sizeof *legs);
        if (!legs || z->tri_count == 0) {
            fprintf(stderr, "navbench: zone has no triangles\n");
            return 1;
        }
        for (long k = 0; k < nrandom; k++) {
            float u, v;
            uint32_t t = standable_from(&pack, z, (uint32_t)(rng_next(&s) % z->tri_count));
            nm_tri_centre(&pack, t, &u, &v);
            legs[k].sx = u;
            legs[k].sy = v;
            t = standable_from(&pack, z, (uint32_t)(rng_next(&s) % z->tri_count));
            nm_tri_centre(&pack, t, &u, &v);
            legs[k].gx = u;
            legs[k].gy = v;
        }
        nlegs = (size_t)nrandom;
    }

    old_leg *old = NULL;
    size_t nold = 0;
    if (compare && !(old = read_old(compare, &nold))) {
        free(legs);
        nm_pack_free(&pack);
        return 1;
    }
    /* log ratios new / old per stage over the legs both runs planned */
    double lsum[ST_N] = {0};
    size_t lcount[ST_N] = {0};
    double *npc[N_PER_CELL];
    for (size_t k = 0; k < N_PER_CELL; k++) npc[k] = (double *)calloc(nlegs ? nlegs : 1, sizeof(double));
    size_t nnpc = 0;
    double *cpu = (double *)calloc(nlegs ? nlegs : 1, sizeof(double));
    double *flt = (double *)calloc(nlegs ? nlegs : 1, sizeof(double)); /* minor page faults a plan */
    double flt_sum = 0;
    double lsum_cpu = 0;
    size_t lcount_cpu = 0;
    if (old)
        fprintf(stderr, "%5s %10s %10s %7s %7s %7s %7s %7s\n", "leg", "old ms", "new ms", "total", "window", "topo",
                "geo", "cpu");

    nm_route_engine e;
    nm_route_engine_open(&e, &pack, pack_path, nogo, workers, &err); /* errors show per leg */
    /* the zone warmed as the hosts do when they load it (navhost, the reference host): its entry,
     * and its tiles when they fit the tile cache; the time is the summary's warm_ms */
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    nm_error werr = {0};
    (void)nm_route_warm(&e, zone, &werr); /* a zone that does not load fails its legs */
    clock_gettime(CLOCK_MONOTONIC, &w1);
    const double warm_ms = (double)(w1.tv_sec - w0.tv_sec) * 1e3 + (double)(w1.tv_nsec - w0.tv_nsec) * 1e-6;
    double *st[ST_N];
    for (int k = 0; k < ST_N; k++) st[k] = (double *)calloc(nlegs ? nlegs : 1, sizeof(double));
    size_t nok = 0;
    /* totals over the successful legs (点数的变化, 拐点抬升的位移, 直接收下的邻步) */
    uint64_t pts[5] = {0}, lifted = 0, corners = 0, lift_by[3] = {0}, unchecked = 0, psegs = 0;
    uint64_t legs_drop = 0, legs_hop = 0, kept_windows = 0, sc_fail = 0, sc_walls = 0, sc_ends = 0, legs_sc_fail = 0;
    double lift_max = 0, *bpc = (double *)calloc(nlegs ? nlegs : 1, sizeof(double));
    double *ppc = (double *)calloc(nlegs ? nlegs : 1, sizeof(double));
    size_t nbpc = 0;
    for (size_t i = 0; i < nlegs; i++) {
        nm_route_request q = nm_route_request_defaults(zone, legs[i].sx, legs[i].sy, legs[i].gx, legs[i].gy);
        q.self_check = self_check;
        nm_route_result r;
        nm_error perr = {0};
        /* the plan's CPU time: on a shared machine the stage (wall) times swell with the load */
        struct timespec c0, c1;
        struct rusage u0, u1; /* fresh pages: the kernel's share of a plan, nearly deterministic */
        /* everything the plan holds at its peak, over what was held before it (the zone's tile
         * cache grows inside a plan and counts; the result's own arrays count) */
        const size_t held0 = nm_alloc_held(NULL);
        size_t held_peak;
        nm_alloc_peak_reset();
        getrusage(RUSAGE_SELF, &u0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        int rc = nm_route_plan(&e, &q, &r, &perr);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        getrusage(RUSAGE_SELF, &u1);
        nm_alloc_held(&held_peak);
        const size_t plan_bytes = held_peak > held0 ? held_peak - held0 : 0;
        flt[i] = (double)(u1.ru_minflt - u0.ru_minflt);
        flt_sum += flt[i];
        double cpu_ms = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-6;
        cpu[i] = cpu_ms;
        if (rc) snprintf(r.error, sizeof r.error, "%s", perr.msg);
        nok += r.ok;
        double ms[ST_N] = {r.ms_checks, r.ms_window, r.ms_topo, r.ms_geo, r.ms_pull, r.ms_assemble, r.ms_lift,
                           r.ms_post, r.ms_total};
        for (int k = 0; k < ST_N; k++) st[k][i] = ms[k];
        /* corners lifted: the assembled list against the final points (lifting only moves) */
        uint32_t nl = 0;
        double lmax = 0;
        if (r.ok && r.dbg_assembled.n == r.npoints)
            for (uint32_t k = 1; k + 1 < r.npoints; k++) {
                double d = hypot(r.xy[2 * k] - r.dbg_assembled.xy[2 * k], r.xy[2 * k + 1] - r.dbg_assembled.xy[2 * k + 1]);
                if (d <= 1e-9) continue;
                nl++;
                lmax = fmax(lmax, d);
                lift_by[d < 0.3 ? 0 : d < 0.4 ? 1 : 2]++;
            }
        uint32_t unc = 0, segs = 0;
        if (r.ok) unchecked_steps(&r.dbg_taut, &r.dbg_pulled, &unc, &segs);
        double cells = (double)r.window_cells;
        double bytes_per_cell = cells > 0 ? (double)r.peak_window_bytes / cells : 0;
        double plan_per_cell = cells > 0 ? (double)plan_bytes / cells : 0;
        if (r.ok) {
            pts[0] += r.dbg_topology.n;
            pts[1] += r.dbg_taut.n;
            pts[2] += r.dbg_pulled.n;
            pts[3] += r.dbg_assembled.n;
            pts[4] += r.npoints;
            lifted += nl;
            corners += r.npoints > 2 ? r.npoints - 2 : 0;
            lift_max = fmax(lift_max, lmax);
            unchecked += unc;
            psegs += segs;
            legs_drop += r.ndrops > 0;
            legs_hop += r.hop_index != UINT32_MAX;
            kept_windows += r.windows_kept;
            sc_fail += r.self_check_failures;
            sc_walls += r.self_check_walls;
            sc_ends += r.self_check_ends;
            legs_sc_fail += r.self_check_failures > 0;
        }
        if (cells > 0) bpc[nbpc] = bytes_per_cell, ppc[nbpc++] = plan_per_cell;
        printf("{\"leg\":%zu,\"sx\":%.3f,\"sy\":%.3f,\"gx\":%.3f,\"gy\":%.3f,\"ok\":%s,\"error\":", i,
               legs[i].sx, legs[i].sy, legs[i].gx, legs[i].gy, r.ok ? "true" : "false");
        json_str(r.ok ? "" : r.error);
        printf(",\"check\":%d,\"no_go\":%s,\"tier\":%d,\"kind\":\"%s\",\"window_cells\":%llu,\"ms\":{", r.check,
               r.no_go ? "true" : "false", r.tier, r.tier >= 0 ? nm_tier_kind_name(r.kind) : "",
               (unsigned long long)r.window_cells);
        for (int k = 0; k < ST_N; k++) printf("%s\"%s\":%.3f", k ? "," : "", k_stage[k], ms[k]);
        printf("},\"cpu_ms\":%.3f", cpu_ms);
        printf(",\"length\":%.3f,\"points\":{\"topology\":%u,\"taut\":%u,\"pulled\":%u,\"assembled\":%u,"
               "\"final\":%u},\"lifted\":%u,\"lift_max_px\":%.3f,\"unchecked_steps\":%u,\"pull_segments\":%u,"
               "\"drops\":%u,\"hop\":%s,\"waypoints\":%u,\"min_clearance\":%.3f,\"peak_window_bytes\":%zu,"
               "\"windows_kept\":%u,\"topo_from\":\"%s\","
               "\"bytes_per_cell\":%.2f,\"plan_peak_bytes\":%zu,\"plan_bytes_per_cell\":%.2f,\"self_check\":{\"checks\":%u,\"failures\":%u,\"walls\":%u,\"ends\":%u},"
               "\"warnings\":",
               r.length, r.dbg_topology.n, r.dbg_taut.n, r.dbg_pulled.n, r.dbg_assembled.n, r.npoints, nl, lmax, unc,
               segs, r.ndrops, r.hop_index != UINT32_MAX ? "true" : "false", r.nwaypoints, r.min_clearance,
               r.peak_window_bytes, r.windows_kept, topo_from_name(r.topo_from), bytes_per_cell, plan_bytes, plan_per_cell, r.self_checks, r.self_check_failures, r.self_check_walls,
               r.self_check_ends);
        json_str(r.warnings);
        printf(",\"plan_digest\":\"%016llx\"", (unsigned long long)plan_digest(&r));
        printf(",\"ns_per_cell\":{");
        for (size_t k = 0; k < N_PER_CELL; k++)
            printf("%s\"%s\":%.3f", k ? "," : "", k_stage[k_per_cell[k]], cells > 0 ? ms[k_per_cell[k]] * 1e6 / cells : 0.0);
        printf("}");
        if (r.ok && cells > 0) {
            for (size_t k = 0; k < N_PER_CELL; k++) npc[k][nnpc] = ms[k_per_cell[k]] * 1e6 / cells;
            nnpc++;
        }
        /* the same leg in the earlier run: same number, same end points */
        if (old && i < nold && old[i].sx == old[i].sx && fabs(old[i].sx - legs[i].sx) < 1e-3 &&
            fabs(old[i].sy - legs[i].sy) < 1e-3 && fabs(old[i].gx - legs[i].gx) < 1e-3 &&
            fabs(old[i].gy - legs[i].gy) < 1e-3) {
            double ratio[ST_N];
            printf(",\"compare\":{");
            for (int k = 0; k < ST_N; k++) {
                ratio[k] = old[i].ms[k] > 0 && ms[k] > 0 ? ms[k] / old[i].ms[k] : NAN;
                if (ratio[k] == ratio[k]) {
                    lsum[k] += log(ratio[k]);
                    lcount[k]++;
                }
                printf("%s\"%s\":%.4f", k ? "," : "", k_stage[k], ratio[k] == ratio[k] ? ratio[k] : 0.0);
            }
            double rcpu = old[i].cpu_ms > 0 && cpu_ms > 0 ? cpu_ms / old[i].cpu_ms : NAN;
            if (rcpu == rcpu) {
                lsum_cpu += log(rcpu);
                lcount_cpu++;
            }
            printf(",\"cpu\":%.4f}", rcpu == rcpu ? rcpu : 0.0);
            fprintf(stderr, "%5zu %10.1f %10.1f %7.3f %7.3f %7.3f %7.3f %7.3f%s\n", i, old[i].ms[ST_TOTAL], ms[ST_TOTAL],
                    ratio[ST_TOTAL], ratio[ST_WINDOW], ratio[ST_TOPO], ratio[ST_GEO], rcpu,
                    old[i].ok != r.ok ? "  (ok differs)" : "");
        }
        printf(",\"self_check_msg\":");
        json_str(r.self_check_msg);
        printf(",\"tier_notes\":");
        json_str(r.tier_notes);
#ifdef NM_HAVE_AUDIT
        if (audit && r.ok) {
            nm_audit_report ar;
            if (nm_audit_result(audit, &r, &audit_p, &ar) == NM_OK) {
                audit_checked++;
                audit_failures += ar.kind != NM_AUDIT_OK;
                printf(",\"audit\":{\"kind\":\"%s\",\"msg\":", nm_audit_kind_name(ar.kind));
                json_str(ar.msg);
                printf("}");
            }
        }
#endif
        printf("}\n");
        nm_route_result_free(&r);
    }
    printf("{\"summary\":true,\"legs\":%zu,\"ok\":%zu,\"success_rate\":%.4f", nlegs, nok,
           nlegs ? (double)nok / (double)nlegs : 0.0);
    for (int p = 0; p < 2; p++) {
        printf(",\"%s\":{", p ? "p90" : "p50");
        for (int k = 0; k < ST_N; k++) {
            /* pct sorts in place: the per-leg lines are already printed */
            printf("%s\"%s\":%.3f", k ? "," : "", k_stage[k], pct(st[k], nlegs, p ? 0.9 : 0.5));
        }
        printf("}");
    }
    printf(",\"points\":{\"topology\":%llu,\"taut\":%llu,\"pulled\":%llu,\"assembled\":%llu,\"final\":%llu}",
           (unsigned long long)pts[0], (unsigned long long)pts[1], (unsigned long long)pts[2],
           (unsigned long long)pts[3], (unsigned long long)pts[4]);
    printf(",\"lift\":{\"corners\":%llu,\"lifted\":%llu,\"by_0.25\":%llu,\"by_0.354\":%llu,\"by_0.5\":%llu,\"max_px\":%.3f}",
           (unsigned long long)corners, (unsigned long long)lifted, (unsigned long long)lift_by[0],
           (unsigned long long)lift_by[1], (unsigned long long)lift_by[2], lift_max);
    printf(",\"pull\":{\"segments\":%llu,\"unchecked\":%llu,\"unchecked_share\":%.4f}", (unsigned long long)psegs,
           (unsigned long long)unchecked, psegs ? (double)unchecked / (double)psegs : 0.0);
    printf(",\"legs_with_drop\":%llu,\"legs_with_hop\":%llu,\"windows_kept\":%llu", (unsigned long long)legs_drop,
           (unsigned long long)legs_hop, (unsigned long long)kept_windows);
    nm_gate_stats gs;
    nm_window_gate_stats(&e, &gs);
    printf(",\"fall_gate\":{\"asked\":%llu,\"cache_hits\":%llu,\"hit_rate\":%.4f,\"blocked\":%llu}",
           (unsigned long long)gs.asked, (unsigned long long)gs.hits,
           gs.asked ? (double)gs.hits / (double)gs.asked : 0.0, (unsigned long long)gs.blocked);
    if (self_check)
        printf(",\"self_check\":{\"failures\":%llu,\"legs_failing\":%llu,\"wall_crossings\":%llu,\"end_segments\":%llu}",
               (unsigned long long)sc_fail, (unsigned long long)legs_sc_fail, (unsigned long long)sc_walls,
               (unsigned long long)sc_ends);
    double bmax = 0;
    for (size_t k = 0; k < nbpc; k++) bmax = fmax(bmax, bpc[k]);
    printf(",\"window_bytes_per_cell\":{\"p50\":%.2f,\"max\":%.2f}", pct(bpc, nbpc, 0.5), bmax);
    double pmax = 0;
    for (size_t k = 0; k < nbpc; k++) pmax = fmax(pmax, ppc[k]);
    printf(",\"plan_bytes_per_cell\":{\"p50\":%.2f,\"max\":%.2f}", pct(ppc, nbpc, 0.5), pmax);
#ifdef NM_HAVE_AUDIT
    if (audit)
        printf(",\"audit\":{\"checked\":%llu,\"failures\":%llu}", (unsigned long long)audit_checked,
               (unsigned long long)audit_failures);
    nm_audit_level_free(audit);
#endif
    for (int p = 0; p < 2; p++) {
        printf(",\"ns_per_cell_%s\":{", p ? "p90" : "p50");
        for (size_t k = 0; k < N_PER_CELL; k++)
            printf("%s\"%s\":%.3f", k ? "," : "", k_stage[k_per_cell[k]], pct(npc[k], nnpc, p ? 0.9 : 0.5));
        printf("}");
    }
    struct rusage ru;
    long rss_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
    printf(",\"peak_rss_mb\":%.1f,\"warm_ms\":%.3f", (double)rss_kb / 1024.0, warm_ms);
    printf(",\"cpu_ms\":{\"p50\":%.3f,\"p90\":%.3f}", pct(cpu, nlegs, 0.5), pct(cpu, nlegs, 0.9));
    printf(",\"minor_faults\":{\"sum\":%.0f,\"p50\":%.0f,\"p90\":%.0f}", flt_sum, pct(flt, nlegs, 0.5),
           pct(flt, nlegs, 0.9));
    if (old) {
        printf(",\"compare\":{\"legs\":%zu,\"geomean\":{", lcount[ST_TOTAL]);
        fprintf(stderr, "geometric mean of new / old over %zu legs:", lcount[ST_TOTAL]);
        for (int k = 0; k < ST_N; k++) {
            double g = lcount[k] ? exp(lsum[k] / (double)lcount[k]) : 0.0;
            printf("%s\"%s\":%.4f", k ? "," : "", k_stage[k], g);
            fprintf(stderr, " %s %.3f", k_stage[k], g);
        }
        double gc = lcount_cpu ? exp(lsum_cpu / (double)lcount_cpu) : 0.0;
        printf(",\"cpu\":%.4f}}", gc);
        fprintf(stderr, " cpu %.3f (%zu legs)\n", gc, lcount_cpu);
    }
    printf("}\n");
    for (size_t k = 0; k < N_PER_CELL; k++) free(npc[k]);
    free(old);
    free(cpu);
    free(flt);
    free(bpc);
    free(ppc);
    for (int k = 0; k < ST_N; k++) free(st[k]);
    free(legs);
    nm_route_engine_close(&e);
    nm_pack_free(&pack);
    return 0;
}
