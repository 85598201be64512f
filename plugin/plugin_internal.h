/* plugin_internal.h — what the plugin's source files share: the engine record of the registry, the
 * result box behind a public nm_plugin_result, the thread's last error and request checks. Not
 * installed; nothing here is exported from the shared object. */
#ifndef NM_PLUGIN_INTERNAL_H
#define NM_PLUGIN_INTERNAL_H

#include <pthread.h>

#include "navmesh_plugin.h"
#include "base/base.h"
#include "pack/pack.h"
#include "route/route.h"

struct nm_shared_grid;
struct nm_shared_fields;

struct nm_plugin_engine {
    char *path;                  /* absolute, normalised pack path (the registry key with zone) */
    char *zone;
    int refs;                    /* opens of this (path, zone) not yet closed */
    nm_pack pack;                /* the zone-scoped load */
    nm_route_engine eng;
    pthread_mutex_t mu;          /* plan, warm and regions_near run one at a time per engine */
    struct nm_shared_grid *grid; /* the BGRD bytes shared with other engines on the pack */
    int bgrd_section;            /* index of the section whose bytes are borrowed, -1 = none */
    struct nm_shared_fields *fields; /* the parsed sidecar shared likewise (NULL = its own) */
    double floor_y;
    struct nm_plugin_engine *next;
};

/* Records msg as the calling thread's last error and returns code. */
int nm_plugin_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void nm_plugin_clear_error(void);
const char *nm_plugin_last_error(void);

/* Checks a request (finite points, radii >= 0, heights finite or absent). */
int nm_plugin_check_request(const nm_plugin_request *q);

int nm_plugin_plan(nm_plugin_engine *e, const nm_plugin_request *q, nm_plugin_result **out);
void nm_plugin_result_free(nm_plugin_result *r);

/* JSON adapter (plugin_json.c). */
char *nm_plugin_result_json(const nm_plugin_result *r);
char *nm_plugin_plan_json(nm_plugin_engine *e, const char *request_json, nm_plugin_stop_fn stop,
                          void *stop_ctx);
void nm_plugin_string_free(char *s);
/* Parses a request JSON into q; discs are nm_malloc'd into *discs (free with nm_free). */
int nm_plugin_parse_request(const char *json, const char *zone, nm_plugin_request *q,
                            nm_plugin_disc **discs);
/* {"ok": false, "error": msg} as an nm_malloc'd string. */
char *nm_plugin_error_json(const char *code, const char *msg);

#endif
