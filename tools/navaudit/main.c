/* navaudit — ours against the level's own geometry and against Detour on one zone:
 *
 *   navaudit --obj LEVEL.obj [--scale S] [--config ZONE.json] --pack P --zone Z
 *            (--legs F | --random N [--seed S]) [--workers N] [--report] [--all]
 *
 * --legs F: one leg a line, "sx sy gx gy" px, or "sx sy sh gx gy gh" with the heights in m ('#'
 * starts a comment). --random N: N legs between random points of Detour's walkable polygons.
 * Prints every disagreement and every audit failure (--all: every leg), then one summary line
 * (--report: the summary as a JSON object). Exit 0 when the run finished (whatever the counts),
 * 1 on an error, 2 on bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void usage(void)
{
    fprintf(stderr, "usage: navaudit --obj LEVEL.obj [--scale S] [--config ZONE.json] --pack P --zone Z\n"
                    "                (--legs F | --random N [--seed S]) [--workers N] [--report] [--all]\n");
}

static int read_legs(const char *path, double **out, uint32_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "navaudit: cannot open %s\n", path);
        return 1;
    }
    char line[512];
    size_t cap = 0;
    *n = 0;
    *out = NULL;
    unsigned lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        double v[6];
        int k = sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
        if (k <= 0) continue;
        double leg[6];
        if (k == 4) leg[0] = v[0], leg[1] = v[1], leg[2] = NAN, leg[3] = v[2], leg[4] = v[3], leg[5] = NAN;
        else if (k == 6) memcpy(leg, v, sizeof leg);
        else {
            fprintf(stderr, "navaudit: %s:%u: a leg is 'sx sy gx gy' or 'sx sy sh gx gy gh'\n", path, lineno);
            fclose(f);
            free(*out);
            return 1;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            double *p = realloc(*out, cap * 6 * sizeof(double));
            if (!p) {
                fclose(f);
                free(*out);
                return 1;
            }
            *out = p;
        }
        memcpy(*out + 6 * (size_t)*n, leg, sizeof leg);
        (*n)++;
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *obj_path = NULL, *cfg_path = NULL, *pack_path = NULL, *zone = NULL, *legs_path = NULL;
    double scale = 1.0;
    long nrandom = -1;
    unsigned long long seed = 1;
    int workers = 0;
    bool report = false, all = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (v && !strcmp(a, "--obj")) obj_path = argv[++i];
        else if (v && !strcmp(a, "--config")) cfg_path = argv[++i];
        else if (v && !strcmp(a, "--zone") && strlen(v) > 5 && !strcmp(v + strlen(v) - 5, ".json")) cfg_path = argv[++i];
        else if (v && !strcmp(a, "--zone")) zone = argv[++i];
        else if (v && !strcmp(a, "--pack")) pack_path = argv[++i];
        else if (v && !strcmp(a, "--legs")) legs_path = argv[++i];
        else if (v && !strcmp(a, "--scale")) scale = strtod(argv[++i], NULL);
        else if (v && !strcmp(a, "--random")) nrandom = strtol(argv[++i], NULL, 10);
        else if (v && !strcmp(a, "--seed")) seed = strtoull(argv[++i], NULL, 10);
        else if (v && !strcmp(a, "--workers")) workers = atoi(argv[++i]);
        else if (!strcmp(a, "--report")) report = true;
        else if (!strcmp(a, "--all")) all = true;
        else {
            fprintf(stderr, "navaudit: unknown or incomplete option '%s'\n", a);
            usage();
            return 2;
        }
    }
    if (!obj_path || !pack_path || !zone || (!legs_path && nrandom < 0) || (legs_path && nrandom >= 0) ||
        !(scale > 0)) {
        usage();
        return 2;
    }
    nm_error err = {0};
    nm_obj obj;
    if (nm_obj_load(obj_path, &obj, &err)) {
        fprintf(stderr, "navaudit: %s\n", err.msg);
        return 1;
    }
    nm_bake_config cfg;
    bool have_cfg = false;
    if (cfg_path) {
        if (nm_bake_config_load(cfg_path, zone, &cfg, &err)) {
            fprintf(stderr, "navaudit: %s\n", err.msg);
            nm_obj_free(&obj);
            return 1;
        }
        have_cfg = true;
    }
    double *given = NULL;
    uint32_t ngiven = 0;
    if (legs_path && read_legs(legs_path, &given, &ngiven)) {
        nm_obj_free(&obj);
        if (have_cfg) nm_bake_config_free(&cfg);
        return 1;
    }
    nm_cmp_opts o = {.obj = &obj, .cfg = have_cfg ? &cfg : NULL, .scale = scale, .pack_path = pack_path,
                     .zone = zone, .legs = legs_path ? ngiven : (uint32_t)nrandom, .seed = seed,
                     .workers = workers, .given = given};
    nm_cmp_leg *legs = NULL;
    nm_cmp_summary s;
    int rc = nm_cmp_run(&o, &legs, &s, &err);
    if (rc) {
        fprintf(stderr, "navaudit: %s\n", err.msg);
    } else {
        char line[2400];
        for (uint32_t i = 0; i < s.legs; i++) {
            const nm_cmp_leg *l = &legs[i];
            bool bad = !nm_cmp_class_explained(l->cls) || (l->ours_ok && l->audit.kind != NM_AUDIT_OK);
            if (!all && !bad && l->cls == NM_CMP_AGREE) continue;
            nm_cmp_leg_text(l, line, sizeof line);
            printf("leg %u %s%s\n", i, bad ? "UNEXPLAINED " : "", line);
        }
        if (report) {
            printf("{\"zone\":\"%s\",\"legs\":%u,\"ours_ok\":%u,\"detour_complete\":%u,\"audited\":%u,"
                   "\"audit_failures\":%u,\"unexplained\":%u,\"detour_polys\":%u,\"detour_build_s\":%.3f,\"classes\":{",
                   zone, s.legs, s.ours_ok, s.dt_complete, s.audited, s.audit_failures, s.unexplained, s.dt_polys,
                   s.dt_build_s);
            for (int c = 0; c < NM_CMP_CLASS_COUNT; c++)
                printf("%s\"%s\":%u", c ? "," : "", nm_cmp_class_name((nm_cmp_class)c), s.by_class[c]);
            printf("}}\n");
        } else {
            printf("summary: %u legs, ours ok %u, detour complete %u, audit failures %u of %u, unexplained %u;",
                   s.legs, s.ours_ok, s.dt_complete, s.audit_failures, s.audited, s.unexplained);
            for (int c = 0; c < NM_CMP_CLASS_COUNT; c++)
                printf(" %s %u", nm_cmp_class_name((nm_cmp_class)c), s.by_class[c]);
            printf("\n");
        }
    }
    nm_free(legs);
    free(given);
    nm_obj_free(&obj);
    if (have_cfg) nm_bake_config_free(&cfg);
    return rc ? 1 : 0;
}
