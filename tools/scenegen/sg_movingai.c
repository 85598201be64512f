/* sg_movingai.c — turns a Moving AI 2-D benchmark map into a scene (tile (x, y) covers plan
 * metres [x, x+1) × [y, y+1) and the zone transform is [T, 0, T, 0], T px per tile (4 by
 * default, so a one-tile corridor holds the agent's kClrPref = 1.75 px either side); passable
 * tiles '.', 'G', 'S' are floor, every other tile a 3 m solid whose footprint is cut from the
 * floor) and its .scen file into legs "sx sy gx gy optimal" in pixels. */
#include "sg_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool passable(char ch) { return ch == '.' || ch == 'G' || ch == 'S'; }

/* Reads one line into buf (without the newline); returns false at the end. */
static bool next_line(const char **p, char *buf, size_t cap)
{
    if (!**p) return false;
    size_t n = 0;
    while (**p && **p != '\n') {
        if (**p != '\r' && n + 1 < cap) buf[n++] = **p;
        (*p)++;
    }
    if (**p == '\n') (*p)++;
    buf[n] = 0;
    return true;
}

int nm_sg_world_from_movingai(const char *text, const char *label, nm_sg_world **out,
                              nm_error *err)
{
    return nm_sg_world_from_movingai_px(text, label, NM_SG_MOVINGAI_TILE_PX, out, err);
}

int nm_sg_world_from_movingai_px(const char *text, const char *label, double tile_px,
                                 nm_sg_world **out, nm_error *err)
{
    *out = NULL;
    if (!label) label = "map";
    if (!(tile_px >= 0.25 && tile_px <= 64))
        return nm_fail(err, NM_ERR_ARG, "%s: tile size %g px out of [0.25, 64]", label, tile_px);
    const char *p = text;
    char line[8192];
    long W = -1, H = -1;
    bool in_map = false;
    while (!in_map && next_line(&p, line, sizeof line)) {
        if (sscanf(line, "height %ld", &H) == 1) continue;
        if (sscanf(line, "width %ld", &W) == 1) continue;
        if (strcmp(line, "map") == 0) in_map = true;
    }
    if (!in_map || W < 1 || H < 1 || W > 8192 || H > 8192)
        return nm_fail(err, NM_ERR_ARG, "%s: not a Moving AI map (header type/height/width/map)",
                       label);
    nm_sg_world *w = nm_sg_world_new();
    if (!w || !(w->build = nm_calloc(1, sizeof *w->build)) ||
        !(w->zones = nm_calloc(1, sizeof *w->zones))) {
        nm_sg_world_free(w);
        return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    }
    /* zone name: the map's file name without folders and ".map" */
    const char *base = strrchr(label, '/');
    base = base ? base + 1 : label;
    size_t bl = strcspn(base, ".");
    if (bl == 0 || bl >= sizeof w->name) bl = 0;
    snprintf(w->name, sizeof w->name, "%.*s", bl ? (int)bl : 8, bl ? base : "movingai");
    for (char *q = w->name; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            *q = '_';
    w->nz = 1;
    snprintf(w->zones[0].name, sizeof w->zones[0].name, "%s", w->name);
    w->zones[0].tf[0] = tile_px, w->zones[0].tf[2] = tile_px;
    int rc = NM_OK;
    char gname[160];
    snprintf(gname, sizeof gname, "walk_%s", w->name);
    int gw = nm_sg_group_get(w, gname, NM_SG_WALK, 0, 0, err);
    snprintf(gname, sizeof gname, "solid_%s", w->name);
    int gs = gw < 0 ? gw : nm_sg_group_get(w, gname, NM_SG_SOLID, 0, 0, err);
    if (gw < 0 || gs < 0) rc = gw < 0 ? gw : gs;
    if (!rc) {
        sg_surf s = {0};
        s.group = gw;
        s.r = (sg_rect){0, 0, (double)W, (double)H};
        s.hk = SG_H_CONST;
        s.block = 16;
        s.terrain = true;
        s.owner = sg_new_owner(w);
        rc = sg_add_surf(w, &s, err);
    }
    /* Blocked tiles, merged into runs along each row: one box and one cut per run. */
    for (long y = 0; !rc && y < H; y++) {
        if (!next_line(&p, line, sizeof line)) {
            rc = nm_fail(err, NM_ERR_ARG, "%s: map has %ld rows, header says %ld", label, y, H);
            break;
        }
        if ((long)strlen(line) < W) {
            rc = nm_fail(err, NM_ERR_ARG, "%s: map row %ld has %zu tiles, header says %ld", label,
                         y, strlen(line), W);
            break;
        }
        for (long x = 0; !rc && x < W;) {
            if (passable(line[x])) {
                x++;
                continue;
            }
            long e = x;
            while (e < W && !passable(line[e])) e++;
            sg_rect r = {(double)x, (double)y, (double)e, (double)y + 1};
            sg_box b = {r, 0, 3, gs};
            sg_cut k = {r, -0.05, 2.95, -1, -1, false};
            rc = sg_add_box(w, &b, err);
            if (!rc) rc = sg_add_cut(w, &k, err);
            x = e;
        }
    }
    if (!rc) rc = sg_build_finish(w, err);
    if (rc) {
        nm_error_prefix(err, "%s", label);
        sg_build_free(w->build);
        w->build = NULL;
        nm_sg_world_free(w);
        return rc;
    }
    *out = w;
    return NM_OK;
}

int nm_sg_scen_convert(const char *scen_text, const char *label, char **out, nm_error *err)
{
    return nm_sg_scen_convert_px(scen_text, label, NM_SG_MOVINGAI_TILE_PX, out, err);
}

int nm_sg_scen_convert_px(const char *scen_text, const char *label, double tile_px, char **out,
                          nm_error *err)
{
    *out = NULL;
    if (!label) label = "scen";
    if (!(tile_px >= 0.25 && tile_px <= 64))
        return nm_fail(err, NM_ERR_ARG, "%s: tile size %g px out of [0.25, 64]", label, tile_px);
    const char *p = scen_text;
    char line[4096];
    if (!next_line(&p, line, sizeof line) || strncmp(line, "version", 7) != 0)
        return nm_fail(err, NM_ERR_ARG, "%s: line 1: expected \"version 1\"", label);
    size_t cap = 1 << 14, n = 0;
    char *buf = nm_malloc(cap);
    if (!buf) return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
    n += (size_t)snprintf(buf, cap,
                          "# legs from %s: sx sy gx gy optimal, pixels (1 tile = %g px, tile "
                          "centres at +0.5 tile)\n",
                          label, tile_px);
    long ln = 1;
    while (next_line(&p, line, sizeof line)) {
        ln++;
        if (!line[0]) continue;
        long bucket, mw, mh, sx, sy, gx, gy;
        double opt;
        char map[1024];
        if (sscanf(line, "%ld %1023s %ld %ld %ld %ld %ld %ld %lf", &bucket, map, &mw, &mh, &sx, &sy,
                   &gx, &gy, &opt) != 9) {
            nm_free(buf);
            return nm_fail(err, NM_ERR_ARG, "%s: line %ld: expected 9 fields", label, ln);
        }
        if (n + 256 > cap) {
            cap *= 2;
            char *q = nm_realloc(buf, cap);
            if (!q) {
                nm_free(buf);
                return nm_fail(err, NM_ERR_NOMEM, "scenegen: out of memory");
            }
            buf = q;
        }
        n += (size_t)snprintf(buf + n, cap - n, "%.4f %.4f %.4f %.4f %.8f\n",
                              ((double)sx + 0.5) * tile_px, ((double)sy + 0.5) * tile_px,
                              ((double)gx + 0.5) * tile_px, ((double)gy + 0.5) * tile_px,
                              opt * tile_px);
    }
    *out = buf;
    return NM_OK;
}
