/* route_file.c — reads and checks the shapes of a route file (see route_file.h). */
#include "route_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *why, size_t cap, const char *fmt, size_t i, const char *what)
{
    char m[256];
    snprintf(m, sizeof m, fmt, what);
    snprintf(why, cap, "route entry %zu: %s", i, m);
    return -1;
}

static int read_xy(const cJSON *a, double *x, double *y)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 2) return -1;
    const cJSON *cx = cJSON_GetArrayItem(a, 0), *cy = cJSON_GetArrayItem(a, 1);
    if (!cJSON_IsNumber(cx) || !cJSON_IsNumber(cy)) return -1;
    *x = cx->valuedouble;
    *y = cy->valuedouble;
    return isfinite(*x) && isfinite(*y) ? 0 : -1;
}

static int parse_entry(const cJSON *it, size_t i, nm_rt_entry *e, char *why, size_t cap)
{
    memset(e, 0, sizeof *e);
    e->raw = it;
    if (cJSON_IsArray(it)) {
        int n = cJSON_GetArraySize(it);
        if (n < 2 || n > 4 || read_xy(it, &e->x, &e->y))
            return bad(why, cap, "%s", i, "a waypoint array must be [x, y], [x, y, \"ACTION\"] or [x, y, \"ACTION\", strict] with finite numbers");
        e->kind = NM_RT_POINT;
        e->action = "RUN";
        if (n >= 3) {
            const cJSON *a = cJSON_GetArrayItem(it, 2);
            if (!cJSON_IsString(a)) return bad(why, cap, "%s", i, "the third item (action) must be a string");
            e->action = a->valuestring;
        }
        if (n == 4) {
            const cJSON *s = cJSON_GetArrayItem(it, 3);
            if (!cJSON_IsBool(s)) return bad(why, cap, "%s", i, "the fourth item (strict) must be true or false");
            e->strict = cJSON_IsTrue(s);
        }
        return 0;
    }
    if (!cJSON_IsObject(it)) return bad(why, cap, "%s", i, "must be an array or an object");
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(it, "action");
    if (!cJSON_IsString(act)) return bad(why, cap, "%s", i, "an object needs a string field action");
    if (strcmp(act->valuestring, "NAVMESH") == 0) {
        e->kind = NM_RT_NAVMESH;
        if (read_xy(cJSON_GetObjectItemCaseSensitive(it, "target"), &e->x, &e->y))
            return bad(why, cap, "%s", i, "NAVMESH needs target [x, y] with finite numbers");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "target_tier");
        if (t && !cJSON_IsString(t)) return bad(why, cap, "%s", i, "target_tier must be a string");
        e->tier = t ? t->valuestring : NULL;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "target_deck_y");
        if (d && (!cJSON_IsNumber(d) || !isfinite(d->valuedouble)))
            return bad(why, cap, "%s", i, "target_deck_y must be a finite number");
        e->has_deck = d != NULL;
        e->deck_y = d ? d->valuedouble : 0;
        return 0;
    }
    if (strcmp(act->valuestring, "ZONE") == 0) {
        const cJSON *z = cJSON_GetObjectItemCaseSensitive(it, "zone_id");
        if (!cJSON_IsString(z) || !z->valuestring[0]) return bad(why, cap, "%s", i, "ZONE needs a non-empty string zone_id");
        e->kind = NM_RT_ZONE;
        e->zone = z->valuestring;
        return 0;
    }
    e->kind = NM_RT_OTHER;
    return 0;
}

int nm_route_file_parse(const char *text, nm_route_file *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->doc = cJSON_Parse(text ? text : "");
    if (!out->doc) {
        snprintf(why, cap, "route file: not valid JSON");
        return -1;
    }
    if (!cJSON_IsArray(out->doc)) {
        snprintf(why, cap, "route file: must be a JSON array of waypoints");
        nm_route_file_free(out);
        return -1;
    }
    int n = cJSON_GetArraySize(out->doc);
    out->entries = (nm_rt_entry *)calloc(n > 0 ? (size_t)n : 1, sizeof *out->entries);
    if (!out->entries) {
        snprintf(why, cap, "route file: out of memory");
        nm_route_file_free(out);
        return -1;
    }
    size_t i = 0;
    for (const cJSON *it = out->doc->child; it; it = it->next, i++)
        if (parse_entry(it, i, &out->entries[i], why, cap)) {
            nm_route_file_free(out);
            return -1;
        }
    out->n = i;
    return 0;
}

void nm_route_file_free(nm_route_file *f)
{
    cJSON_Delete(f->doc);
    free(f->entries);
    memset(f, 0, sizeof *f);
}
