/* base.c — errors, the allocation hook, and the deterministic static-chunk worker pool. */
#define _DEFAULT_SOURCE /* madvise */
#include "base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int nm_fail(nm_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void nm_error_prefix(nm_error *err, const char *fmt, ...)
{
    if (!err) return;
    char head[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* Truncation is fine here: the outermost context comes first and matters most. */
    size_t h = strlen(head);
    if (h > sizeof err->msg - 3) h = sizeof err->msg - 3;
    memcpy(err->msg, head, h);
    memcpy(err->msg + h, ": ", 2);
    size_t room = sizeof err->msg - h - 3, o = strlen(old);
    if (o > room) o = room;
    memcpy(err->msg + h + 2, old, o);
    err->msg[h + 2 + o] = 0;
}

void nm_error_clear(nm_error *err)
{
    if (err) {
        err->code = NM_OK;
        err->msg[0] = 0;
    }
}

const char *nm_status_name(int code)
{
    switch (code) {
    case NM_OK: return "ok";
    case NM_ERR_CORRUPT: return "corrupt";
    case NM_ERR_IO: return "io";
    case NM_ERR_NOMEM: return "out of memory";
    case NM_ERR_ARG: return "bad argument";
    case NM_ERR_STATE: return "unusable";
    default: return "unknown";
    }
}

/* ---- allocation hook: tests fail the n-th allocation to exercise every error path ------------ */
/* Atomic so that planning threads can allocate at once (the count is a test aid only). */
static _Atomic size_t g_alloc_count, g_alloc_fail_at;

static bool alloc_should_fail(void)
{
    size_t now = atomic_fetch_add_explicit(&g_alloc_count, 1, memory_order_relaxed) + 1;
    size_t at = atomic_load_explicit(&g_alloc_fail_at, memory_order_relaxed);
    return at != 0 && now == at;
}

size_t nm_alloc_fail_after(size_t n)
{
    size_t was = atomic_exchange(&g_alloc_count, 0);
    atomic_store(&g_alloc_fail_at, n);
    return was;
}

/* Blocks of NM_HUGE_BLOCK_MIN bytes or more (window layers, decoded tiles, search records) are read
 * and written over most of their length soon after they are allocated: on 4 KB pages each page
 * costs a fault, and where the machine is virtualised those faults were a fifth of a plan's time.
 * Their 2 MB-aligned interior is advised for transparent huge pages, whether glibc mapped the block
 * apart or took it from its heap; a refusal changes nothing. 2 MB rather than 4: the blocks of 2 to
 * 4 MB (a tile's records, the masks of a small window) made plans 2-3 % faster on both benchmark
 * worlds, same peak (tools/navbench/README.md, twelfth session). */
static void *large_block(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    const uintptr_t b = ((uintptr_t)p + n) & ~(huge - 1);
    if (p && n >= NM_HUGE_BLOCK_MIN && b > a)
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
    return p;
}

void *nm_malloc(size_t n)
{
    if (alloc_should_fail()) return NULL;
    return large_block(malloc(n ? n : 1), n);
}

void *nm_calloc(size_t count, size_t size)
{
    size_t total;
    if (!nm_mul_ok(count, size, &total) || alloc_should_fail()) return NULL;
    return large_block(calloc(total ? total : 1, 1), total);
}

void *nm_realloc(void *p, size_t n)
{
    if (alloc_should_fail()) return NULL;
    return large_block(realloc(p, n ? n : 1), n);
}

void nm_free(void *p) { free(p); }

bool nm_mul_ok(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b) return false;
    *out = a * b;
    return true;
}

/* ---- NavParallel: static chunks, caller takes worker 0, output independent of thread count --- */
int nm_workers_for(size_t n, int requested)
{
    if (n < NM_SERIAL_FLOOR) return 1;
    int w = requested;
    if (w <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        w = cores > 0 ? (int)cores : 1;
    }
    return w < 1 ? 1 : (w > NM_WORKER_LIMIT ? NM_WORKER_LIMIT : w);
}

typedef struct chunk_job {
    size_t chunks;
    int workers, worker;
    nm_chunk_fn fn;
    void *ctx;
    int *rc; /* per chunk */
} chunk_job;

static void *run_share(void *arg)
{
    chunk_job *j = (chunk_job *)arg;
    for (size_t c = (size_t)j->worker; c < j->chunks; c += (size_t)j->workers)
        j->rc[c] = j->fn(j->ctx, c);
    return NULL;
}

int nm_parallel_chunks(size_t chunks, int workers, nm_chunk_fn fn, void *ctx)
{
    if (chunks == 0) return NM_OK;
    if (workers < 1) workers = 1;
    if (workers > NM_WORKER_LIMIT) workers = NM_WORKER_LIMIT;
    if ((size_t)workers > chunks) workers = (int)chunks;
    if (workers == 1) {
        for (size_t c = 0; c < chunks; c++) {
            int rc = fn(ctx, c);
            if (rc) return rc;
        }
        return NM_OK;
    }
    int *rc = (int *)nm_calloc(chunks, sizeof *rc);
    if (!rc) return NM_ERR_NOMEM;
    chunk_job jobs[NM_WORKER_LIMIT];
    pthread_t th[NM_WORKER_LIMIT];
    bool started[NM_WORKER_LIMIT] = {false};
    for (int w = 0; w < workers; w++)
        jobs[w] = (chunk_job){chunks, workers, w, fn, ctx, rc};
    for (int w = 1; w < workers; w++)
        started[w] = pthread_create(&th[w], NULL, run_share, &jobs[w]) == 0;
    run_share(&jobs[0]);
    /* A worker that could not start: its share runs here, so the result never depends on it. */
    for (int w = 1; w < workers; w++) {
        if (started[w]) pthread_join(th[w], NULL);
        else run_share(&jobs[w]);
    }
    int first = NM_OK;
    for (size_t c = 0; c < chunks && !first; c++) first = rc[c];
    nm_free(rc);
    return first;
}
