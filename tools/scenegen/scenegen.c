/* scenegen.c — the command line of the test-world generator:
 *   scenegen SCENE.json --out DIR [--picture PNG] [--scale S]
 *   scenegen SCENE.json --obj FILE --zone FILE [--picture PNG]
 *   scenegen --movingai MAP.map --out DIR [--scen MAP.map.scen] [--tile PX] [--picture PNG]
 * writes DIR/level.obj and DIR/zone.json for navbake --walkable-as-is (and DIR/legs.txt for a
 * Moving AI scenario). */
#include "sg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, nm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        nm_fail(err, NM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (n + 1 < cap) break;
        cap *= 2;
        char *q = realloc(buf, cap);
        if (!q) free(buf);
        buf = q;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        nm_fail(err, NM_ERR_IO, "%s: cannot read", path);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: scenegen SCENE.json --out DIR [--picture PNG] [--scale S]\n"
            "       scenegen SCENE.json --obj FILE --zone FILE [--picture PNG] [--scale S]\n"
            "       scenegen --movingai MAP.map --out DIR [--scen FILE.scen] [--tile PX] [--picture PNG]\n");
}

int main(int argc, char **argv)
{
    const char *scene = NULL, *out = NULL, *obj = NULL, *zone = NULL, *pic = NULL;
    const char *mai = NULL, *scen = NULL;
    double scale = 0, tile = NM_SG_MOVINGAI_TILE_PX;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && next) out = argv[++i];
        else if (!strcmp(a, "--obj") && next) obj = argv[++i];
        else if (!strcmp(a, "--zone") && next) zone = argv[++i];
        else if (!strcmp(a, "--picture") && next) pic = argv[++i];
        else if (!strcmp(a, "--scale") && next) scale = atof(argv[++i]);
        else if (!strcmp(a, "--movingai") && next) mai = argv[++i];
        else if (!strcmp(a, "--scen") && next) scen = argv[++i];
        else if (!strcmp(a, "--tile") && next) tile = atof(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (a[0] != '-' && !scene) scene = a;
        else {
            usage();
            return 2;
        }
    }
    if ((!scene && !mai) || (scene && mai) || (!out && (!obj || !zone))) {
        usage();
        return 2;
    }
    nm_error err = {0};
    const char *src = scene ? scene : mai;
    char *text = slurp(src, &err);
    nm_sg_world *w = NULL;
    int rc = text ? NM_OK : err.code;
    if (!rc) {
        rc = scene ? nm_sg_world_from_json(text, src, &w, &err)
                   : nm_sg_world_from_movingai_px(text, src, tile, &w, &err);
    }
    free(text);
    if (!rc) rc = nm_sg_write(w, out, obj, zone, &err);
    if (!rc && scen) {
        char *st = slurp(scen, &err), *legs = NULL;
        rc = st ? nm_sg_scen_convert_px(st, scen, tile, &legs, &err) : err.code;
        free(st);
        if (!rc) {
            char path[4096];
            snprintf(path, sizeof path, "%s/legs.txt", out ? out : ".");
            FILE *f = fopen(path, "wb");
            if (!f || fputs(legs, f) < 0) rc = nm_fail(&err, NM_ERR_IO, "%s: cannot write", path);
            if (f && fclose(f) != 0 && !rc) rc = nm_fail(&err, NM_ERR_IO, "%s: cannot write", path);
        }
        nm_free(legs);
    }
    if (!rc && pic) {
        if (scale <= 0) {
            /* about 1600 image pixels across unless asked otherwise */
            double span = 0;
            for (size_t i = 0; i < w->nv; i++) {
                double u = w->zones[0].tf[0] * w->v[i].x, v = w->zones[0].tf[2] * w->v[i].y;
                if (u > span) span = u;
                if (v > span) span = v;
            }
            scale = span > 0 ? 1600.0 / span : 1;
            if (scale > 8) scale = 8;
            if (scale < 0.25) scale = 0.25;
        }
        rc = nm_sg_picture(w, pic, scale, &err);
    }
    if (!rc) {
        size_t nw = 0;
        for (size_t i = 0; i < w->nt; i++)
            if (w->g[w->t[i].group].role <= NM_SG_WATER) nw++;
        fprintf(stderr, "scenegen: %s: %zu vertices, %zu triangles (%zu walkable/water), %zu groups, %zu links\n",
                w->name, w->nv, w->nt, nw, w->ng, w->nl);
    }
    nm_sg_world_free(w);
    if (rc) {
        fprintf(stderr, "scenegen: %s\n", err.msg);
        return 1;
    }
    return 0;
}
