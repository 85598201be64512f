/* config.c — zone.json (ZONE_JSON.md): the agent, the zones with their transforms, groups and
 * tier zones, the area map, collision-only and obstacle groups, and off-mesh links. Parsed with
 * cJSON; every error names the key path ("zone.json: zones[0].tiers[1].id: ..."). */
#include "bake.h"

#include <cjson/cJSON.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct jctx {
    const char *file;
    nm_error *err;
} jctx;

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = nm_malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static int jfail(jctx *j, const char *path, const char *what)
{
    return nm_fail(j->err, NM_ERR_ARG, "%s: %s: %s", j->file, path, what);
}

static int oom(jctx *j) { return nm_fail(j->err, NM_ERR_NOMEM, "%s: out of memory", j->file); }

/* A finite number that fits a float. */
static int get_num(jctx *j, const cJSON *v, const char *path, double *out)
{
    if (!cJSON_IsNumber(v)) return jfail(j, path, "must be a number");
    double d = v->valuedouble;
    if (!isfinite(d) || fabs(d) > FLT_MAX) return jfail(j, path, "must be a finite number");
    *out = d;
    return NM_OK;
}

static int get_int(jctx *j, const cJSON *v, const char *path, long lo, long hi, long *out)
{
    double d = 0.0; /* set by get_num on success (gcc -O2 warns otherwise) */
    int rc = get_num(j, v, path, &d);
    if (rc) return rc;
    if (d != floor(d) || d < (double)lo || d > (double)hi) {
        char what[96];
        snprintf(what, sizeof what, "must be an integer in %ld..%ld", lo, hi);
        return jfail(j, path, what);
    }
    *out = (long)d;
    return NM_OK;
}

static int get_vec(jctx *j, const cJSON *v, const char *path, int n, double *out)
{
    char what[64];
    snprintf(what, sizeof what, "must be an array of %d numbers", n);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) return jfail(j, path, what);
    for (int i = 0; i < n; i++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s[%d]", path, i);
        int rc = get_num(j, cJSON_GetArrayItem(v, i), sub, &out[i]);
        if (rc) return rc;
    }
    return NM_OK;
}

static int get_transform(jctx *j, const cJSON *v, const char *path, float t[4])
{
    double d[4];
    int rc = get_vec(j, v, path, 4, d); /* a zero scale is allowed: the planner handles it */
    if (rc) return rc;
    for (int i = 0; i < 4; i++) t[i] = (float)d[i];
    return NM_OK;
}

/* Array of non-empty strings -> new string array. */
static int get_strings(jctx *j, const cJSON *v, const char *path, char ***out, uint32_t *count)
{
    if (!cJSON_IsArray(v)) return jfail(j, path, "must be an array of strings");
    int n = cJSON_GetArraySize(v);
    *out = nm_calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!*out) return oom(j);
    *count = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *s = cJSON_GetArrayItem(v, i);
        char sub[512];
        snprintf(sub, sizeof sub, "%s[%d]", path, i);
        if (!cJSON_IsString(s) || !s->valuestring[0]) return jfail(j, sub, "must be a non-empty string");
        (*out)[i] = dup_str(s->valuestring);
        if (!(*out)[i]) return oom(j);
        (*count)++;
    }
    return NM_OK;
}

/* Keys starting with '_' and "comment" / "description" are notes for people. */
static bool is_note_key(const char *k)
{
    return k[0] == '_' || strcmp(k, "comment") == 0 || strcmp(k, "description") == 0;
}

static int check_keys(jctx *j, const cJSON *obj, const char *path, const char *const *allowed)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (is_note_key(it->string)) continue;
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, it->string) == 0;
        if (!ok) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", it->string);
            return jfail(j, sub, "unknown key");
        }
    }
    return NM_OK;
}

static int get_name(jctx *j, const cJSON *obj, const char *path, char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "name");
    char sub[512];
    snprintf(sub, sizeof sub, "%s.name", path);
    if (!v) return jfail(j, sub, "missing (every zone needs a name)");
    if (!cJSON_IsString(v) || !v->valuestring[0]) return jfail(j, sub, "must be a non-empty string");
    if (strlen(v->valuestring) > 4096) return jfail(j, sub, "too long");
    *out = dup_str(v->valuestring);
    return *out ? NM_OK : oom(j);
}

/* Optional id; *given false when absent. */
static int get_id(jctx *j, const cJSON *obj, const char *path, uint16_t *id, bool *given)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "id");
    *given = v != NULL;
    if (!v) return NM_OK;
    char sub[512];
    snprintf(sub, sizeof sub, "%s.id", path);
    long l = 0;
    int rc = get_int(j, v, sub, 0, 65535, &l);
    if (rc) return rc;
    *id = (uint16_t)l;
    return NM_OK;
}

static int get_opt_num(jctx *j, const cJSON *obj, const char *path, const char *key, double *out, bool *given)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (given) *given = v != NULL;
    if (!v) return NM_OK;
    char sub[512];
    snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", key);
    return get_num(j, v, sub, out);
}

static int get_size(jctx *j, const cJSON *obj, const char *path, bool *has, float *w, float *h)
{
    double dw = 0, dh = 0;
    bool gw, gh;
    int rc = get_opt_num(j, obj, path, "width", &dw, &gw);
    if (!rc) rc = get_opt_num(j, obj, path, "height", &dh, &gh);
    if (rc) return rc;
    if (gw != gh) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s.%s", path, gw ? "height" : "width");
        return jfail(j, sub, "missing (width and height go together)");
    }
    if (gw && (dw <= 0 || dh <= 0)) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s.width", path);
        return jfail(j, sub, "width and height must be > 0");
    }
    *has = gw;
    *w = (float)dw;
    *h = (float)dh;
    return NM_OK;
}

static int parse_tier(jctx *j, const cJSON *o, const char *path, nm_bake_tier *t, bool *id_given)
{
    static const char *const keys[] = {"name", "id", "floor_y", "transform", "width", "height", NULL};
    if (!cJSON_IsObject(o)) return jfail(j, path, "must be an object");
    int rc = check_keys(j, o, path, keys);
    if (!rc) rc = get_name(j, o, path, &t->name);
    if (!rc) rc = get_id(j, o, path, &t->id, id_given);
    if (rc) return rc;
    t->t[0] = 1; t->t[1] = 0; t->t[2] = 1; t->t[3] = 0;
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "transform");
    char sub[512];
    snprintf(sub, sizeof sub, "%s.transform", path);
    if (tr && (rc = get_transform(j, tr, sub, t->t))) return rc;
    double fy = 0;
    bool has_fy;
    if ((rc = get_opt_num(j, o, path, "floor_y", &fy, &has_fy))) return rc;
    t->floor_y = has_fy ? (float)fy : NM_kFloorYNone;
    return get_size(j, o, path, &t->has_size, &t->width, &t->height);
}

static int parse_zone(jctx *j, const cJSON *o, const char *path, nm_bake_zone *z, bool *id_given, bool *tier_ids)
{
    static const char *const keys[] = {"name", "id", "floor_y", "transform", "width", "height", "groups", "tiers", NULL};
    if (!cJSON_IsObject(o)) return jfail(j, path, "must be an object");
    int rc = check_keys(j, o, path, keys);
    if (!rc) rc = get_name(j, o, path, &z->name);
    if (!rc) rc = get_id(j, o, path, &z->id, id_given);
    if (rc) return rc;
    z->t[0] = 0.75f; z->t[1] = 0; z->t[2] = 0.75f; z->t[3] = 0;
    char sub[512];
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "transform");
    snprintf(sub, sizeof sub, "%s.transform", path);
    if (tr && (rc = get_transform(j, tr, sub, z->t))) return rc;
    double fy = 0;
    bool has_fy;
    if ((rc = get_opt_num(j, o, path, "floor_y", &fy, &has_fy))) return rc;
    z->floor_y = has_fy ? (float)fy : NM_kFloorYNone;
    if ((rc = get_size(j, o, path, &z->has_size, &z->width, &z->height))) return rc;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "groups");
    if (g) {
        snprintf(sub, sizeof sub, "%s.groups", path);
        if ((rc = get_strings(j, g, sub, &z->groups, &z->group_count))) return rc;
        z->groups_given = true;
    }
    const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(o, "tiers");
    if (tiers) {
        snprintf(sub, sizeof sub, "%s.tiers", path);
        if (!cJSON_IsArray(tiers)) return jfail(j, sub, "must be an array of tier zones");
        int n = cJSON_GetArraySize(tiers);
        if (n > 65535) return jfail(j, sub, "too many tier zones");
        z->tiers = nm_calloc((size_t)(n ? n : 1), sizeof *z->tiers);
        if (!z->tiers) return oom(j);
        for (int i = 0; i < n; i++) {
            char tp[256];
            snprintf(tp, sizeof tp, "%s.tiers[%d]", path, i);
            z->tier_count++;
            if ((rc = parse_tier(j, cJSON_GetArrayItem(tiers, i), tp, &z->tiers[i], &tier_ids[i]))) return rc;
        }
    }
    return NM_OK;
}

static int parse_agent(jctx *j, const cJSON *o, nm_bake_agent *a)
{
    static const char *const keys[] = {"height", "radius", "climb", "slope_deg", NULL};
    if (!cJSON_IsObject(o)) return jfail(j, "agent", "must be an object");
    int rc = check_keys(j, o, "agent", keys);
    if (!rc) rc = get_opt_num(j, o, "agent", "height", &a->height, NULL);
    if (!rc) rc = get_opt_num(j, o, "agent", "radius", &a->radius, NULL);
    if (!rc) rc = get_opt_num(j, o, "agent", "climb", &a->climb, NULL);
    if (!rc) rc = get_opt_num(j, o, "agent", "slope_deg", &a->slope_deg, NULL);
    if (rc) return rc;
    if (!(a->height > 0)) return jfail(j, "agent.height", "must be > 0");
    if (a->radius < 0) return jfail(j, "agent.radius", "must be >= 0");
    if (a->climb < 0) return jfail(j, "agent.climb", "must be >= 0");
    if (a->slope_deg < 0 || a->slope_deg >= 90) return jfail(j, "agent.slope_deg", "must be in [0, 90)");
    return NM_OK;
}

static int parse_areas(jctx *j, const cJSON *o, nm_bake_config *c)
{
    if (!cJSON_IsObject(o)) return jfail(j, "areas", "must be an object {group pattern: area id}");
    int n = cJSON_GetArraySize(o);
    c->areas = nm_calloc((size_t)(n ? n : 1), sizeof *c->areas);
    if (!c->areas) return oom(j);
    for (const cJSON *it = o->child; it; it = it->next) {
        char sub[512];
        snprintf(sub, sizeof sub, "areas.%s", it->string);
        long a = 0;
        int rc = get_int(j, it, sub, 0, 31, &a);
        if (rc) return rc;
        nm_bake_area *ar = &c->areas[c->area_count];
        ar->pattern = dup_str(it->string);
        if (!ar->pattern) return oom(j);
        ar->area = (uint8_t)a;
        c->area_count++;
    }
    return NM_OK;
}

static int zone_index(const nm_bake_config *c, const char *name)
{
    for (uint32_t i = 0; i < c->zone_count; i++)
        if (strcmp(c->zones[i].name, name) == 0) return (int)i;
    return -1;
}

static int parse_offmesh(jctx *j, const cJSON *arr, nm_bake_config *c)
{
    static const char *const keys[] = {"zone", "from", "to", "bidirectional", "radius", "cost", "area", "type", NULL};
    if (!cJSON_IsArray(arr)) return jfail(j, "offmesh", "must be an array of links");
    int n = cJSON_GetArraySize(arr);
    c->offmesh = nm_calloc((size_t)(n ? n : 1), sizeof *c->offmesh);
    if (!c->offmesh) return oom(j);
    for (int i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        char path[64], sub[128];
        snprintf(path, sizeof path, "offmesh[%d]", i);
        if (!cJSON_IsObject(o)) return jfail(j, path, "must be an object");
        int rc = check_keys(j, o, path, keys);
        if (rc) return rc;
        nm_bake_offmesh *l = &c->offmesh[i];
        const cJSON *zv = cJSON_GetObjectItemCaseSensitive(o, "zone");
        snprintf(sub, sizeof sub, "%s.zone", path);
        if (zv && !cJSON_IsString(zv)) return jfail(j, sub, "must be a zone name");
        if (!zv && c->zone_count != 1) return jfail(j, sub, "missing (the level has several zones)");
        int zi = zv ? zone_index(c, zv->valuestring) : 0;
        if (zi < 0) {
            char what[300];
            snprintf(what, sizeof what, "unknown zone '%.200s' (not a geometry zone of this level)", zv->valuestring);
            return jfail(j, sub, what);
        }
        l->zone = (uint32_t)zi;
        snprintf(sub, sizeof sub, "%s.from", path);
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "from");
        if (!f) return jfail(j, sub, "missing");
        if ((rc = get_vec(j, f, sub, 3, l->from))) return rc;
        snprintf(sub, sizeof sub, "%s.to", path);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "to");
        if (!t) return jfail(j, sub, "missing");
        if ((rc = get_vec(j, t, sub, 3, l->to))) return rc;
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bidirectional");
        snprintf(sub, sizeof sub, "%s.bidirectional", path);
        if (b && !cJSON_IsBool(b)) return jfail(j, sub, "must be true or false");
        l->bidirectional = b && cJSON_IsTrue(b);
        double radius = c->agent.radius, cost = 1.0;
        if ((rc = get_opt_num(j, o, path, "radius", &radius, NULL))) return rc;
        if ((rc = get_opt_num(j, o, path, "cost", &cost, NULL))) return rc;
        if (radius < 0) { snprintf(sub, sizeof sub, "%s.radius", path); return jfail(j, sub, "must be >= 0"); }
        if (cost < 0) { snprintf(sub, sizeof sub, "%s.cost", path); return jfail(j, sub, "must be >= 0"); }
        l->radius = (float)radius;
        l->cost = (float)cost;
        long a = 0, ty = 0;
        const cJSON *av = cJSON_GetObjectItemCaseSensitive(o, "area");
        snprintf(sub, sizeof sub, "%s.area", path);
        if (av && (rc = get_int(j, av, sub, 0, 31, &a))) return rc;
        const cJSON *tv = cJSON_GetObjectItemCaseSensitive(o, "type");
        snprintf(sub, sizeof sub, "%s.type", path);
        if (tv && (rc = get_int(j, tv, sub, 0, 65535, &ty))) return rc;
        l->area = (int32_t)a;
        l->type = (uint16_t)ty;
        c->offmesh_count++;
    }
    return NM_OK;
}

static void agent_defaults(nm_bake_agent *a)
{
    a->height = NM_kFallHeight;
    a->radius = NM_kFallRadius;
    a->climb = NM_kStepUp;
    a->slope_deg = 45.0;
}

static int add_default_zone(nm_bake_config *c, const char *zone_name, nm_error *err)
{
    c->zones = nm_calloc(1, sizeof *c->zones);
    if (!c->zones) return nm_fail(err, NM_ERR_NOMEM, "zone config: out of memory");
    c->zone_count = 1;
    nm_bake_zone *z = &c->zones[0];
    z->name = dup_str(zone_name && zone_name[0] ? zone_name : "zone");
    if (!z->name) return nm_fail(err, NM_ERR_NOMEM, "zone config: out of memory");
    z->id = 1;
    z->t[0] = 0.75f; z->t[1] = 0; z->t[2] = 0.75f; z->t[3] = 0;
    z->floor_y = NM_kFloorYNone;
    return NM_OK;
}

int nm_bake_config_default(const char *zone_name, nm_bake_config *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    agent_defaults(&c->agent);
    int rc = add_default_zone(c, zone_name, err);
    if (rc) nm_bake_config_free(c);
    return rc;
}

/* Default ids (1-based position among all zones and tiers) and uniqueness of names and ids. */
static int settle_ids(jctx *j, nm_bake_config *c, bool **given)
{
    uint32_t pos = 0;
    for (uint32_t zi = 0; zi < c->zone_count; zi++) {
        nm_bake_zone *z = &c->zones[zi];
        pos++;
        if (!given[zi][0]) {
            if (pos > 65535) return jfail(j, "zones", "too many zones for default ids");
            z->id = (uint16_t)pos;
        }
        for (uint32_t ti = 0; ti < z->tier_count; ti++) {
            pos++;
            if (!given[zi][1 + ti]) {
                if (pos > 65535) return jfail(j, "zones", "too many zones for default ids");
                z->tiers[ti].id = (uint16_t)pos;
            }
        }
    }
    /* Quadratic checks: a level has a handful of zones. */
    for (uint32_t a = 0; a < c->zone_count; a++) {
        for (int ta = -1; ta < (int)c->zones[a].tier_count; ta++) {
            const char *na = ta < 0 ? c->zones[a].name : c->zones[a].tiers[ta].name;
            uint16_t ia = ta < 0 ? c->zones[a].id : c->zones[a].tiers[ta].id;
            for (uint32_t b = a; b < c->zone_count; b++) {
                for (int tb = (b == a ? ta + 1 : -1); tb < (int)c->zones[b].tier_count; tb++) {
                    const char *nb = tb < 0 ? c->zones[b].name : c->zones[b].tiers[tb].name;
                    uint16_t ib = tb < 0 ? c->zones[b].id : c->zones[b].tiers[tb].id;
                    char what[300];
                    if (strcmp(na, nb) == 0) {
                        snprintf(what, sizeof what, "duplicate zone name '%.200s'", na);
                        return jfail(j, "zones", what);
                    }
                    if (ia == ib) {
                        snprintf(what, sizeof what, "duplicate zone id %u ('%.100s' and '%.100s')", ia, na, nb);
                        return jfail(j, "zones", what);
                    }
                }
            }
        }
    }
    return NM_OK;
}

static int parse_root(jctx *j, const cJSON *root, const char *default_zone, nm_bake_config *c)
{
    static const char *const keys[] = {"agent", "zones", "areas", "collision_only", "obstacles", "offmesh", "heightfields", NULL};
    if (!cJSON_IsObject(root)) return jfail(j, "(top level)", "must be a JSON object");
    int rc = check_keys(j, root, "", keys);
    if (rc) return rc;
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "agent")) && (rc = parse_agent(j, v, &c->agent))) return rc;
    v = cJSON_GetObjectItemCaseSensitive(root, "zones");
    if (!v) {
        if ((rc = add_default_zone(c, default_zone, j->err))) return rc;
    } else {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) return jfail(j, "zones", "must be a non-empty array of zones");
        int n = cJSON_GetArraySize(v);
        if (n > 65535) return jfail(j, "zones", "too many zones");
        c->zones = nm_calloc((size_t)n, sizeof *c->zones);
        bool **given = nm_calloc((size_t)n, sizeof(bool *));
        if (!c->zones || !given) { nm_free(given); return oom(j); }
        for (int i = 0; i < n && !rc; i++) {
            const cJSON *zo = cJSON_GetArrayItem(v, i);
            const cJSON *tiers = cJSON_IsObject(zo) ? cJSON_GetObjectItemCaseSensitive(zo, "tiers") : NULL;
            int nt = cJSON_IsArray(tiers) ? cJSON_GetArraySize(tiers) : 0;
            given[i] = nm_calloc((size_t)nt + 1, sizeof(bool));
            if (!given[i]) { rc = oom(j); break; }
            char path[64];
            snprintf(path, sizeof path, "zones[%d]", i);
            c->zone_count++;
            rc = parse_zone(j, zo, path, &c->zones[i], &given[i][0], &given[i][1]);
        }
        if (!rc) rc = settle_ids(j, c, given);
        for (int i = 0; i < n; i++) nm_free(given[i]);
        nm_free(given);
        if (rc) return rc;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "areas")) && (rc = parse_areas(j, v, c))) return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "collision_only")) &&
        (rc = get_strings(j, v, "collision_only", &c->collision_only, &c->collision_count)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "obstacles")) &&
        (rc = get_strings(j, v, "obstacles", &c->obstacles, &c->obstacle_count)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "heightfields")) &&
        (rc = get_strings(j, v, "heightfields", &c->heightfields, &c->heightfield_count)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "offmesh")) && (rc = parse_offmesh(j, v, c))) return rc;
    return NM_OK;
}

int nm_bake_config_parse(const char *text, size_t size, const char *name, const char *default_zone,
                         nm_bake_config *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    agent_defaults(&c->agent);
    jctx j = {name ? name : "zone.json", err};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, false);
    if (!root) {
        size_t off = end && end >= text && end <= text + size ? (size_t)(end - text) : 0;
        size_t line = 1;
        for (size_t i = 0; i < off; i++) line += text[i] == '\n';
        return nm_fail(err, NM_ERR_ARG, "%s:%zu: not valid JSON (near byte %zu)", j.file, line, off);
    }
    int rc = parse_root(&j, root, default_zone, c);
    cJSON_Delete(root);
    if (rc) nm_bake_config_free(c);
    return rc;
}

int nm_bake_config_load(const char *path, const char *default_zone, nm_bake_config *c, nm_error *err)
{
    memset(c, 0, sizeof *c);
    uint8_t *data = NULL;
    size_t size = 0;
    int rc = nm_file_read(path, 64u << 20, &data, &size, err);
    if (rc) return rc;
    rc = nm_bake_config_parse((const char *)data, size, path, default_zone, c, err);
    nm_free(data);
    return rc;
}

static void free_strings(char **s, uint32_t n)
{
    if (!s) return;
    for (uint32_t i = 0; i < n; i++) nm_free(s[i]);
    nm_free(s);
}

void nm_bake_config_free(nm_bake_config *c)
{
    if (!c) return;
    for (uint32_t i = 0; i < c->zone_count; i++) {
        nm_bake_zone *z = &c->zones[i];
        nm_free(z->name);
        free_strings(z->groups, z->group_count);
        for (uint32_t t = 0; t < z->tier_count; t++) nm_free(z->tiers[t].name);
        nm_free(z->tiers);
    }
    nm_free(c->zones);
    for (uint32_t i = 0; i < c->area_count; i++) nm_free(c->areas[i].pattern);
    nm_free(c->areas);
    free_strings(c->collision_only, c->collision_count);
    free_strings(c->heightfields, c->heightfield_count);
    free_strings(c->obstacles, c->obstacle_count);
    nm_free(c->offmesh);
    memset(c, 0, sizeof *c);
}

bool nm_bake_pattern_match(const char *pattern, const char *name)
{
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*') return strncmp(pattern, name, n - 1) == 0;
    return strcmp(pattern, name) == 0;
}
