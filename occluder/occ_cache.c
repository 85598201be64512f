/* occ_cache.c — decoded occluder scenes kept per (absolute path, zone) for the life of the process
 * (until nm_occ_cache_release_all), so each planning call that needs FallGate reuses one decode.
 * Failures are cached with their message, so a corrupt pack is not reread on every plan; a
 * missing file or a zone without a record is a NULL scene (every drop allowed). One mutex guards
 * the list; a load happens under it, so two threads never decode the same scene twice. */
#include "occ_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct cache_entry {
    struct cache_entry *next;
    char *path, *zone;
    int status;
    nm_error error;
    nm_occ_scene *scene;
} cache_entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry *g_head;

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)nm_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The absolute path when the file exists; else the name as given (it is not there to resolve). */
static char *absolute(const char *path)
{
    char *r = realpath(path, NULL);
    if (!r) return dup_str(path);
    char *d = dup_str(r);
    free(r); /* realpath allocates with the C library */
    return d;
}

int nm_occ_cache_get(const char *path, const char *zone, const nm_occ_scene **scene, nm_error *err)
{
    *scene = NULL;
    if (!path || !*path || !zone) return nm_fail(err, NM_ERR_ARG, "occluder cache: no path or zone");
    char *abs = absolute(path);
    if (!abs) return nm_fail(err, NM_ERR_NOMEM, "occluder cache: out of memory");
    pthread_mutex_lock(&g_lock);
    cache_entry *e = g_head;
    while (e && !(strcmp(e->path, abs) == 0 && strcmp(e->zone, zone) == 0)) e = e->next;
    int rc;
    if (!e) {
        e = (cache_entry *)nm_calloc(1, sizeof *e);
        char *z = dup_str(zone);
        if (!e || !z) {
            nm_free(e);
            nm_free(z);
            nm_free(abs);
            pthread_mutex_unlock(&g_lock);
            return nm_fail(err, NM_ERR_NOMEM, "occluder cache: out of memory");
        }
        e->path = abs;
        e->zone = z;
        abs = NULL;
        struct stat st;
        if (stat(e->path, &st) != 0 && errno == ENOENT) {
            e->status = NM_OK; /* no occluder file: no collision geometry */
        } else {
            e->status = nm_occ_load(e->path, zone, &e->scene, &e->error);
            if (e->status == NM_ERR_NOMEM) {
                /* Out of memory is not a property of the file: do not remember it. */
                nm_error tmp = e->error;
                nm_free(e->path);
                nm_free(e->zone);
                nm_free(e);
                pthread_mutex_unlock(&g_lock);
                if (err) *err = tmp;
                return NM_ERR_NOMEM;
            }
        }
        e->next = g_head;
        g_head = e;
    }
    rc = e->status;
    if (rc == NM_OK) *scene = e->scene;
    else if (err) *err = e->error;
    pthread_mutex_unlock(&g_lock);
    nm_free(abs);
    return rc;
}

void nm_occ_cache_release_all(void)
{
    pthread_mutex_lock(&g_lock);
    cache_entry *e = g_head;
    g_head = NULL;
    pthread_mutex_unlock(&g_lock);
    while (e) {
        cache_entry *n = e->next;
        nm_occ_free(e->scene);
        nm_free(e->path);
        nm_free(e->zone);
        nm_free(e);
        e = n;
    }
}
