/* plugin_json.c — the JSON face of the ABI (输入与输出 for hosts that speak JSON): request JSON ->
 * nm_plugin_request with every field checked (missing, wrong type, not finite), result -> JSON with
 * the field names of host.md. Strings handed out are nm_malloc'd copies of cJSON's text. */
#include "plugin_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

static char *own_copy(char *cjson_text)
{
    if (!cjson_text) return NULL;
    size_t n = strlen(cjson_text) + 1;
    char *s = (char *)nm_malloc(n);
    if (s) memcpy(s, cjson_text, n);
    cJSON_free(cjson_text);
    return s;
}

void nm_plugin_string_free(char *s) { nm_free(s); }

char *nm_plugin_error_json(const char *code, const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddBoolToObject(o, "ok", 0);
    cJSON_AddStringToObject(o, "error", msg ? msg : "");
    if (code) cJSON_AddStringToObject(o, "code", code);
    char *s = own_copy(cJSON_PrintUnformatted(o));
    cJSON_Delete(o);
    return s;
}

/* ---- request ------------------------------------------------------------------------------- */

static int read_point(const cJSON *o, const char *key, double *x, double *y, bool required)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a) return required ? nm_plugin_fail(NM_ERR_ARG, "request: field %s is missing", key) : 1;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(a, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(a, 1)))
        return nm_plugin_fail(NM_ERR_ARG, "request: field %s must be [x, y] numbers", key);
    *x = cJSON_GetArrayItem(a, 0)->valuedouble;
    *y = cJSON_GetArrayItem(a, 1)->valuedouble;
    if (!isfinite(*x) || !isfinite(*y))
        return nm_plugin_fail(NM_ERR_ARG, "request: field %s is not a finite point", key);
    return NM_OK;
}

static int read_height(const cJSON *o, const char *key, double *h)
{
    *h = NM_PLUGIN_NONE;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return NM_OK; /* absent = a missing key */
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return nm_plugin_fail(NM_ERR_ARG, "request: field %s must be a finite number", key);
    *h = v->valuedouble;
    return NM_OK;
}

int nm_plugin_parse_request(const char *json, const char *zone, nm_plugin_request *q,
                            nm_plugin_disc **discs)
{
    *discs = NULL;
    memset(q, 0, sizeof *q);
    if (!json) return nm_plugin_fail(NM_ERR_ARG, "request: no JSON text");
    cJSON *o = cJSON_Parse(json);
    if (!o) return nm_plugin_fail(NM_ERR_ARG, "request: not valid JSON (near byte %zu)",
                                  cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - json) : 0);
    int rc = NM_OK;
    if (!cJSON_IsObject(o)) {
        rc = nm_plugin_fail(NM_ERR_ARG, "request: must be a JSON object");
        goto done;
    }
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(o, "zone");
    if (z && (!cJSON_IsString(z) || strcmp(z->valuestring, zone) != 0)) {
        rc = nm_plugin_fail(NM_ERR_ARG, "request: zone %s is not this engine's zone %s",
                            cJSON_IsString(z) ? z->valuestring : "(not a string)", zone);
        goto done;
    }
    if ((rc = read_point(o, "start", &q->start_x, &q->start_y, true)) != NM_OK) goto done;
    if ((rc = read_point(o, "goal", &q->goal_x, &q->goal_y, true)) != NM_OK) goto done;
    if ((rc = read_height(o, "start_floor_y", &q->start_floor_y)) != NM_OK) goto done;
    if ((rc = read_height(o, "goal_floor_y", &q->goal_floor_y)) != NM_OK) goto done;
    if ((rc = read_height(o, "goal_deck_y", &q->goal_deck_y)) != NM_OK) goto done;
    if ((rc = read_height(o, "start_deck_y", &q->start_deck_y)) != NM_OK) goto done;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "no_go_discs");
    if (d && !cJSON_IsNull(d)) {
        if (!cJSON_IsArray(d)) {
            rc = nm_plugin_fail(NM_ERR_ARG, "request: no_go_discs must be an array");
            goto done;
        }
        int n = cJSON_GetArraySize(d);
        if (n > 0) {
            *discs = (nm_plugin_disc *)nm_calloc((size_t)n, sizeof **discs);
            if (!*discs) {
                rc = nm_plugin_fail(NM_ERR_NOMEM, "request: out of memory");
                goto done;
            }
        }
        for (int i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(d, i);
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "radius");
            if (!cJSON_IsObject(e) || !cJSON_IsNumber(r)) {
                rc = nm_plugin_fail(NM_ERR_ARG, "request: no_go_discs[%d] needs center and radius", i);
                goto done;
            }
            if ((rc = read_point(e, "center", &(*discs)[i].x, &(*discs)[i].y, true)) != NM_OK) {
                char why[512];
                snprintf(why, sizeof why, "%s", nm_plugin_last_error());
                nm_plugin_fail(rc, "no_go_discs[%d]: %s", i, why);
                goto done;
            }
            (*discs)[i].radius = r->valuedouble;
            if (!isfinite(r->valuedouble) || r->valuedouble < 0) {
                rc = nm_plugin_fail(NM_ERR_ARG, "request: no_go_discs[%d]: radius %g must be >= 0", i, r->valuedouble);
                goto done;
            }
        }
        q->no_go_discs = *discs;
        q->n_no_go_discs = (uint32_t)n;
    }
done:
    cJSON_Delete(o);
    if (rc != NM_OK) {
        nm_free(*discs);
        *discs = NULL;
    }
    return rc;
}

/* ---- result -------------------------------------------------------------------------------- */

static cJSON *xy_array(double x, double y)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(x));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(y));
    return a;
}

/* [[x, y] ...] or [[x, y, h] ...] when heights are known. */
static cJSON *points_json(const nm_plugin_points *p)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; a && i < p->n; i++) {
        cJSON *pt = xy_array(p->xy[2 * i], p->xy[2 * i + 1]);
        if (p->heights) cJSON_AddItemToArray(pt, cJSON_CreateNumber(p->heights[i]));
        cJSON_AddItemToArray(a, pt);
    }
    return a;
}

static void add_height(cJSON *o, const char *key, double h)
{
    if (h > NM_PLUGIN_VALID_MIN) cJSON_AddNumberToObject(o, key, h);
    else cJSON_AddNullToObject(o, key);
}

static cJSON *result_obj(const nm_plugin_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddBoolToObject(o, "ok", r->ok);
    cJSON_AddStringToObject(o, "error", r->error ? r->error : "");
    if (!r->ok) cJSON_AddStringToObject(o, "code", r->code ? r->code : "internal");
    cJSON_AddBoolToObject(o, "no_go", r->no_go);
    cJSON_AddBoolToObject(o, "cancelled", r->cancelled);
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    cJSON *clr = cJSON_AddArrayToObject(o, "clearance");
    cJSON *hts = cJSON_AddArrayToObject(o, "heights");
    for (uint32_t i = 0; i < r->points.n; i++) {
        cJSON_AddItemToArray(pts, xy_array(r->points.xy[2 * i], r->points.xy[2 * i + 1]));
        cJSON_AddItemToArray(clr, cJSON_CreateNumber(r->clearance ? r->clearance[i] : 0.0));
        if (r->points.heights) {
            double h = r->points.heights[i];
            cJSON_AddItemToArray(hts, h > NM_PLUGIN_VALID_MIN ? cJSON_CreateNumber(h) : cJSON_CreateNull());
        }
    }
    cJSON *wp = cJSON_AddArrayToObject(o, "waypoints");
    for (uint32_t i = 0; i < r->n_waypoints; i++) cJSON_AddItemToArray(wp, cJSON_CreateNumber(r->waypoints[i]));
    cJSON *dr = cJSON_AddArrayToObject(o, "drops");
    for (uint32_t i = 0; i < r->n_drops; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddNumberToObject(d, "index", r->drops[i].index);
        cJSON_AddNumberToObject(d, "height", r->drops[i].height);
        cJSON_AddItemToObject(d, "from", xy_array(r->drops[i].from_x, r->drops[i].from_y));
        cJSON_AddItemToArray(dr, d);
    }
    cJSON_AddNumberToObject(o, "length", r->length);
    cJSON_AddNumberToObject(o, "snap_start", r->snap_start);
    cJSON_AddNumberToObject(o, "snap_goal", r->snap_goal);
    cJSON *wa = cJSON_AddArrayToObject(o, "warnings");
    for (uint32_t i = 0; i < r->n_warnings; i++) cJSON_AddItemToArray(wa, cJSON_CreateString(r->warnings[i]));
    cJSON *run = cJSON_AddArrayToObject(o, "run_waypoints");
    for (uint32_t i = 0; i < r->n_run; i++) {
        const nm_plugin_run *w = &r->run[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "action", "RUN");
        cJSON_AddNumberToObject(x, "x", w->x);
        cJSON_AddNumberToObject(x, "y", w->y);
        cJSON_AddBoolToObject(x, "strict", w->strict);
        cJSON_AddNumberToObject(x, "clearance", w->clearance);
        add_height(x, "floor_y", w->floor_y);
        if (w->target_deck_y > NM_PLUGIN_VALID_MIN) cJSON_AddNumberToObject(x, "target_deck_y", w->target_deck_y);
        if (w->has_drop_from) cJSON_AddItemToObject(x, "drop_from", xy_array(w->drop_from_x, w->drop_from_y));
        cJSON_AddItemToArray(run, x);
    }
    cJSON *dbg = cJSON_AddObjectToObject(o, "debug");
    cJSON *win = cJSON_AddObjectToObject(dbg, "window");
    cJSON_AddNumberToObject(win, "x0", r->win_x0);
    cJSON_AddNumberToObject(win, "y0", r->win_y0);
    cJSON_AddNumberToObject(win, "nx", (double)r->win_nx);
    cJSON_AddNumberToObject(win, "ny", (double)r->win_ny);
    cJSON_AddNumberToObject(win, "cell_size", r->cell_size);
    cJSON_AddNumberToObject(dbg, "tier", r->tier);
    cJSON_AddStringToObject(dbg, "tier_kind", r->tier_kind ? r->tier_kind : "");
    cJSON_AddStringToObject(dbg, "tier_notes", r->tier_notes ? r->tier_notes : "");
    cJSON *t = cJSON_AddObjectToObject(dbg, "times_ms");
    cJSON_AddNumberToObject(t, "checks", r->ms_checks);
    cJSON_AddNumberToObject(t, "window", r->ms_window);
    cJSON_AddNumberToObject(t, "topology", r->ms_topology);
    cJSON_AddNumberToObject(t, "geometry", r->ms_geometry);
    cJSON_AddNumberToObject(t, "pull", r->ms_pull);
    cJSON_AddNumberToObject(t, "assemble", r->ms_assemble);
    cJSON_AddNumberToObject(t, "lift", r->ms_lift);
    cJSON_AddNumberToObject(t, "post", r->ms_post);
    cJSON_AddNumberToObject(t, "total", r->ms_total);
    cJSON_AddItemToObject(dbg, "topology", points_json(&r->dbg_topology));
    cJSON_AddItemToObject(dbg, "taut", points_json(&r->dbg_taut));
    cJSON_AddItemToObject(dbg, "pulled", points_json(&r->dbg_pulled));
    cJSON_AddItemToObject(dbg, "assembled", points_json(&r->dbg_assembled));
    cJSON_AddItemToObject(dbg, "final", points_json(&r->points));
    if (r->has_gap) {
        cJSON *g = cJSON_AddObjectToObject(dbg, "gap");
        cJSON_AddItemToObject(g, "start", xy_array(r->gap_start_x, r->gap_start_y));
        cJSON_AddItemToObject(g, "goal", xy_array(r->gap_goal_x, r->gap_goal_y));
        cJSON_AddNumberToObject(g, "distance", r->gap_distance);
    }
    return o;
}

char *nm_plugin_result_json(const nm_plugin_result *r)
{
    if (!r) return nm_plugin_error_json("bad_request", "no result");
    cJSON *o = result_obj(r);
    if (!o) return NULL;
    char *s = own_copy(cJSON_PrintUnformatted(o));
    cJSON_Delete(o);
    return s;
}

/* The code of a call that gave no result: the request was refused, or memory ran out. */
static const char *call_code(int rc)
{
    return rc == NM_ERR_NOMEM ? "out_of_memory" : rc == NM_ERR_ARG ? "bad_request" : "internal";
}

char *nm_plugin_plan_json(nm_plugin_engine *e, const char *request_json, nm_plugin_stop_fn stop,
                          void *stop_ctx)
{
    nm_plugin_clear_error();
    if (!e) {
        nm_plugin_fail(NM_ERR_ARG, "plan_json: no engine");
        return nm_plugin_error_json("bad_request", nm_plugin_last_error());
    }
    nm_plugin_request q;
    nm_plugin_disc *discs = NULL;
    int rc = nm_plugin_parse_request(request_json, e->zone, &q, &discs);
    if (rc != NM_OK) return nm_plugin_error_json(call_code(rc), nm_plugin_last_error());
    q.should_stop = stop;
    q.stop_ctx = stop_ctx;
    nm_plugin_result *r = NULL;
    rc = nm_plugin_plan(e, &q, &r);
    nm_free(discs);
    if (rc != NM_OK) return nm_plugin_error_json(call_code(rc), nm_plugin_last_error());
    char *s = nm_plugin_result_json(r);
    nm_plugin_result_free(r);
    return s;
}
