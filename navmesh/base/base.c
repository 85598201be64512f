/* base.c — errors, the allocation hook, and the deterministic static-chunk worker pool. */
/* madvise, mremap and malloc_usable_size come with _GNU_SOURCE (meson.build defines it) */
#include "base.h"

#include <malloc.h>
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

/* ---- kept pages ------------------------------------------------------------------------------
 * Large blocks are mapped here and when freed they stay mapped (up to nm_kept_max's bytes in all)
 * for the next ones instead of going back to the kernel. Why: on a guest with free page reporting
 * (the benchmark machines: a virtio balloon) memory freed for about two seconds is handed back to
 * the host, and the next touch of each of its pages then faults on the host too: 96 MB first
 * touched in 107-152 ms against 6 ms for pages freed a moment earlier. Plans in a row paid it for
 * every block larger than the last plan's, and a host that replans every few seconds on every
 * plan. A request takes the smallest kept block that holds it (cut to size, its tail kept), else a
 * fresh mapping into whose start the kept blocks are moved, largest first (mremap moves their
 * pages without touching them). 128 MB kept by default (fourteenth session: the large world's
 * legs 0.82-0.91 of their time for +3 % peak memory); a route engine keeps more
 * (NM_ROUTE_KEPT_BYTES).
 * Small pages: the mappings are advised against transparent huge pages. A huge page the host has
 * taken back cost 3-6 ms to fault (0.33-0.68 GB/s) against 0.9 ms for the same 2 MB on small
 * pages, while a huge page the host still backs costs 0.23 ms and small pages 0.77 ms: the cold
 * case loses far more than the warm one gains. The demo route through navhost after a pause:
 * 1.29-1.44 s of planning on huge pages, 0.68-0.90 s on small ones; the large world's bake,
 * system time 5.7-6.3 -> 1.6-2.6 s (tools/navbench/README.md, thirty-ninth session). Blocks stay
 * 2 MB-aligned: the alignment tells our blocks from the C library's.
 * Under AddressSanitizer the C library's allocator is used instead, so the sanitizer still bounds
 * every block. */
#if defined(__linux__) && defined(MREMAP_FIXED) && !defined(__SANITIZE_ADDRESS__)
#define NM_KEPT_PAGES 1
#endif

#ifdef NM_KEPT_PAGES
#define KEPT_ALIGN ((size_t)2 << 20)
#define KEPT_LIVE 4096 /* open-addressed table of the blocks in use (a power of two) */
#define KEPT_FREE 64

typedef struct kept_block {
    void *p;
    size_t cap; /* a multiple of KEPT_ALIGN */
    size_t n;   /* the bytes asked for (blocks in use) */
} kept_block;

static pthread_mutex_t g_kept_mu = PTHREAD_MUTEX_INITIALIZER;
static kept_block g_live[KEPT_LIVE];
static size_t g_nlive;
static kept_block g_kept[KEPT_FREE];
static size_t g_nkept, g_kept_bytes, g_kept_max = NM_KEPT_MAX;

static size_t live_slot(const void *p) { return ((uintptr_t)p >> 21) * 0x9E3779B97F4A7C15u >> 52 & (KEPT_LIVE - 1); }

/* The slot holding p, or the empty slot where it would go. Under g_kept_mu. */
static size_t live_find(const void *p)
{
    size_t i = live_slot(p);
    while (g_live[i].p && g_live[i].p != p) i = (i + 1) & (KEPT_LIVE - 1);
    return i;
}

/* Removes slot i, shifting back the entries of its probe run (no tombstones). Under g_kept_mu. */
static void live_remove(size_t i)
{
    g_live[i].p = NULL;
    g_nlive--;
    for (size_t j = (i + 1) & (KEPT_LIVE - 1); g_live[j].p; j = (j + 1) & (KEPT_LIVE - 1)) {
        const size_t home = live_slot(g_live[j].p);
        /* j's entry may fill the hole at i unless its home lies cyclically in (i, j] */
        const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            g_live[i] = g_live[j];
            g_live[j].p = NULL;
            i = j;
        }
    }
}

/* A block's size for n bytes: whole 2 MB pages, at least one; 0 when n is too large to map. */
static size_t kept_size(size_t n)
{
    if (n > SIZE_MAX - 2 * KEPT_ALIGN) return 0;
    return n < KEPT_ALIGN ? KEPT_ALIGN : (n + KEPT_ALIGN - 1) & ~(KEPT_ALIGN - 1);
}

/* A fresh 2 MB-aligned mapping of cap bytes on small pages; NULL when refused. */
static void *map_aligned(size_t cap)
{
    char *m = mmap(NULL, cap + KEPT_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    char *a = (char *)(((uintptr_t)m + KEPT_ALIGN - 1) & ~(uintptr_t)(KEPT_ALIGN - 1));
    if (a > m) munmap(m, (size_t)(a - m));
    if (a + cap < m + cap + KEPT_ALIGN) munmap(a + cap, (size_t)(m + cap + KEPT_ALIGN - (a + cap)));
#ifdef MADV_NOHUGEPAGE
    (void)madvise(a, cap, MADV_NOHUGEPAGE); /* where the kernel's default is huge pages */
#endif
    return a;
}

/* Moves the pages of [src, src + len) to dst, inside a mapping of ours; 1 when moved, else 0 with
 * dst fresh (zeros) again: an older kernel unmaps the destination before it refuses a source that
 * spans two mappings, so dst is mapped anew; -1 when even that is refused (dst is a hole). */
static int move_pages(void *src, size_t len, char *dst)
{
    if (mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst) != MAP_FAILED) return 1;
    void *m = mmap(dst, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return m == MAP_FAILED ? -1 : 0;
}

/* Keeps b (under g_kept_max and the list's length), else unmaps it. Under g_kept_mu. */
static void keep(kept_block b)
{
    if (g_nkept < KEPT_FREE && g_kept_bytes + b.cap <= g_kept_max) {
        g_kept[g_nkept++] = b;
        g_kept_bytes += b.cap;
    } else {
        munmap(b.p, b.cap);
    }
}

/* Kept block i taken off the list, its first `take` bytes used and the rest kept. Under
 * g_kept_mu. */
static kept_block unkeep(size_t i, size_t take)
{
    const kept_block b = g_kept[i];
    g_kept[i] = g_kept[--g_nkept];
    g_kept_bytes -= b.cap;
    if (take < b.cap) keep((kept_block){(char *)b.p + take, b.cap - take, 0});
    return b;
}

/* cap bytes (a multiple of KEPT_ALIGN) from kept pages where there are some: the smallest kept
 * block that holds them (its tail stays kept), else a fresh mapping into whose start kept blocks
 * are moved, largest first, until one will not move. *used: the bytes at the start that held
 * earlier blocks. NULL when the kernel refuses. Under g_kept_mu. */
static char *assemble(size_t cap, size_t *used)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < g_nkept; i++)
        if (g_kept[i].cap >= cap && (best == SIZE_MAX || g_kept[i].cap < g_kept[best].cap)) best = i;
    if (best != SIZE_MAX) {
        *used = cap;
        return unkeep(best, cap).p;
    }
    char *p = map_aligned(cap);
    size_t off = 0;
    while (p && off < cap && g_nkept) {
        size_t big = 0;
        for (size_t i = 1; i < g_nkept; i++)
            if (g_kept[i].cap > g_kept[big].cap) big = i;
        const size_t take = g_kept[big].cap < cap - off ? g_kept[big].cap : cap - off;
        const int moved = move_pages(g_kept[big].p, take, p + off);
        if (moved < 0) {
            munmap(p, cap);
            p = NULL;
        }
        if (moved <= 0) break;
        unkeep(big, take);
        off += take;
    }
    *used = off;
    return p;
}

/* A block of n bytes made by assemble, for n of NM_LARGE_BLOCK_MIN and more; its first *dirty bytes
 * may hold an earlier block's data (the rest reads as zeros). NULL: use malloc. */
static void *kept_take(size_t n, size_t *dirty)
{
    *dirty = 0;
    const size_t cap = kept_size(n);
    if (n < NM_LARGE_BLOCK_MIN || !cap) return NULL;
    pthread_mutex_lock(&g_kept_mu);
    size_t used = 0;
    char *p = g_nlive < KEPT_LIVE / 2 ? assemble(cap, &used) : NULL;
    if (p) {
        g_live[live_find(p)] = (kept_block){p, cap, n};
        g_nlive++;
        *dirty = used < n ? used : n;
    }
    pthread_mutex_unlock(&g_kept_mu);
    return p;
}

/* Frees p when it is a block of ours (kept, or unmapped past the cap); false otherwise. *n:
 * the bytes it was asked for. */
static bool kept_give(void *p, size_t *n)
{
    *n = 0;
    if (!p || ((uintptr_t)p & (KEPT_ALIGN - 1))) return false;
    pthread_mutex_lock(&g_kept_mu);
    const size_t i = live_find(p);
    const kept_block b = g_live[i];
    if (b.p) {
        live_remove(i);
        keep((kept_block){b.p, b.cap, 0});
    }
    pthread_mutex_unlock(&g_kept_mu);
    *n = b.n;
    return b.p != NULL;
}

/* The usable bytes of p when it is a block of ours, else 0; *n: the bytes it was asked for. */
static size_t kept_cap(void *p, size_t *n)
{
    *n = 0;
    if (!p || ((uintptr_t)p & (KEPT_ALIGN - 1))) return 0;
    pthread_mutex_lock(&g_kept_mu);
    const kept_block b = g_live[live_find(p)];
    pthread_mutex_unlock(&g_kept_mu);
    *n = b.n;
    return b.p ? b.cap : 0;
}

/* Our block p (cap bytes) cut to hold n bytes (its tail kept, or unmapped past the cap). */
static void *kept_shrink(void *p, size_t cap, size_t n)
{
    const size_t ncap = kept_size(n);
    pthread_mutex_lock(&g_kept_mu);
    kept_block *b = &g_live[live_find(p)];
    b->n = n;
    if (ncap < cap) {
        b->cap = ncap;
        keep((kept_block){(char *)p + ncap, cap - ncap, 0});
    }
    pthread_mutex_unlock(&g_kept_mu);
    return p;
}

/* Our block p (cap bytes) grown to hold n: its pages moved to the start of a fresh mapping, or
 * copied when the kernel will not move them (a block assembled from moved pieces may span several
 * mappings); NULL when refused (p is then unchanged). */
static void *kept_grow(void *p, size_t cap, size_t n)
{
    const size_t ncap = kept_size(n);
    pthread_mutex_lock(&g_kept_mu);
    char *q = ncap ? map_aligned(ncap) : NULL;
    const int moved = q ? move_pages(p, cap, q) : 0;
    if (moved < 0) {
        munmap(q, ncap);
        q = NULL;
    }
    if (q) {
        if (!moved) memcpy(q, p, cap);
        g_live[live_find(q)] = (kept_block){q, ncap, n};
        g_nlive++;
        live_remove(live_find(p));
        if (!moved) keep((kept_block){p, cap, 0});
    }
    pthread_mutex_unlock(&g_kept_mu);
    return q;
}

size_t nm_kept_bytes(void)
{
    pthread_mutex_lock(&g_kept_mu);
    const size_t n = g_kept_bytes;
    pthread_mutex_unlock(&g_kept_mu);
    return n;
}

size_t nm_kept_max(size_t bytes)
{
    pthread_mutex_lock(&g_kept_mu);
    const size_t was = g_kept_max;
    if (bytes) g_kept_max = bytes; /* blocks kept past a lower cap go at their next take */
    pthread_mutex_unlock(&g_kept_mu);
    return was;
}

void nm_kept_release(void)
{
    pthread_mutex_lock(&g_kept_mu);
    for (size_t i = 0; i < g_nkept; i++) munmap(g_kept[i].p, g_kept[i].cap);
    g_nkept = g_kept_bytes = 0;
    pthread_mutex_unlock(&g_kept_mu);
}
#else
static void *kept_take(size_t n, size_t *dirty) { (void)n; *dirty = 0; return NULL; }
static bool kept_give(void *p, size_t *n) { (void)p; *n = 0; return false; }
static size_t kept_cap(void *p, size_t *n) { (void)p; *n = 0; return 0; }
static void *kept_grow(void *p, size_t cap, size_t n) { (void)p; (void)cap; (void)n; return NULL; }
static void *kept_shrink(void *p, size_t cap, size_t n) { (void)cap; (void)n; return p; }
size_t nm_kept_bytes(void) { return 0; }
size_t nm_kept_max(size_t bytes) { (void)bytes; return 0; }
void nm_kept_release(void) {}
#endif

/* ---- bytes held: every block's asked-for size (the C library's usable size for its own blocks),
 * process-wide, for navbench's whole-plan peak (nm_alloc_held). Relaxed atomics: a figure, not a
 * synchronisation. */
static _Atomic size_t g_held, g_held_peak;

static void held_add(size_t n)
{
    const size_t now = atomic_fetch_add_explicit(&g_held, n, memory_order_relaxed) + n;
    size_t peak = atomic_load_explicit(&g_held_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&g_held_peak, &peak, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        ;
}

static void held_sub(size_t n) { atomic_fetch_sub_explicit(&g_held, n, memory_order_relaxed); }

size_t nm_alloc_held(size_t *peak)
{
    if (peak) *peak = atomic_load_explicit(&g_held_peak, memory_order_relaxed);
    return atomic_load_explicit(&g_held, memory_order_relaxed);
}

void nm_alloc_peak_reset(void)
{
    atomic_store_explicit(&g_held_peak, atomic_load_explicit(&g_held, memory_order_relaxed),
                          memory_order_relaxed);
}

/* A C library block's counted size (NULL: none). */
static size_t libc_held(void *p) { return p ? malloc_usable_size(p) : 0; }

void *nm_malloc(size_t n)
{
    if (alloc_should_fail()) return NULL;
    size_t dirty;
    void *p = kept_take(n, &dirty);
    if (p) return held_add(n), p;
    p = malloc(n ? n : 1);
    held_add(libc_held(p));
    return p;
}

void *nm_calloc(size_t count, size_t size)
{
    size_t total, dirty;
    if (!nm_mul_ok(count, size, &total) || alloc_should_fail()) return NULL;
    void *p = kept_take(total, &dirty);
    if (p) return held_add(total), memset(p, 0, dirty), p;
    p = calloc(total ? total : 1, 1);
    held_add(libc_held(p));
    return p;
}

void *nm_realloc(void *p, size_t n)
{
    if (alloc_should_fail()) return NULL;
    size_t had_n;
    const size_t cap = kept_cap(p, &had_n);
    if (cap) {
        void *q = n <= cap ? kept_shrink(p, cap, n) : kept_grow(p, cap, n);
        if (q) held_sub(had_n), held_add(n);
        return q;
    }
    size_t dirty;
    const size_t had = libc_held(p);
    void *q = kept_take(n, &dirty);
    if (!q) {
        q = realloc(p, n ? n : 1);
        if (q) held_sub(had), held_add(libc_held(q));
        return q;
    }
    held_add(n);
    if (p) { /* the C library's block moves to one of ours */
        memcpy(q, p, had < n ? had : n);
        held_sub(had);
        free(p);
    }
    return q;
}

void nm_free(void *p)
{
    size_t n;
    if (kept_give(p, &n)) {
        held_sub(n);
        return;
    }
    held_sub(libc_held(p));
    free(p);
}

/* nm_sparse_calloc's block: a header of SPARSE_HEAD bytes (the mapping's length, 0 for a block of
 * the C library) before the caller's bytes, which keeps their 64-byte alignment. Why a mapping of
 * its own: an access chain touches a few cells of five arrays of a window's size; on huge pages
 * each touch cleared 2 MB, 20-75 ms an end on the demo town's Full windows (tools/navbench/README.md,
 * seventeenth session), and kept pages would be cleared whole for calloc. */
enum { SPARSE_HEAD = 64 };

void *nm_sparse_calloc(size_t count, size_t size)
{
    size_t total;
    if (!nm_mul_ok(count, size, &total) || total > SIZE_MAX - SPARSE_HEAD || alloc_should_fail())
        return NULL;
    total += SPARSE_HEAD;
    char *p = NULL;
#ifdef NM_KEPT_PAGES
    if (total >= NM_LARGE_BLOCK_MIN) {
        void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
#ifdef MADV_NOHUGEPAGE
        (void)madvise(m, total, MADV_NOHUGEPAGE); /* where the kernel's default is huge pages */
#endif
        p = m;
        memcpy(p, &total, sizeof total);
        held_add(total);
        return p + SPARSE_HEAD;
    }
#endif
    if (!(p = calloc(total, 1))) return NULL;
    const size_t heap = 0;
    memcpy(p, &heap, sizeof heap);
    held_add(libc_held(p));
    return p + SPARSE_HEAD;
}

void nm_sparse_free(void *q)
{
    if (!q) return;
    char *p = (char *)q - SPARSE_HEAD;
    size_t len;
    memcpy(&len, p, sizeof len);
    held_sub(len ? len : libc_held(p));
    if (len) munmap(p, len);
    else free(p);
}

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

/* The threads for `chunks` chunks: 1 .. NM_WORKER_LIMIT, no more than the chunks. */
static int chunk_workers(size_t chunks, int workers)
{
    if (workers < 1) workers = 1;
    if (workers > NM_WORKER_LIMIT) workers = NM_WORKER_LIMIT;
    return (size_t)workers > chunks ? (int)chunks : workers;
}

int nm_parallel_chunks(size_t chunks, int workers, nm_chunk_fn fn, void *ctx)
{
    if (chunks == 0) return NM_OK;
    workers = chunk_workers(chunks, workers);
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

typedef struct claim_job {
    size_t chunks;
    const uint32_t *order;
    atomic_size_t *next; /* the next place in order, shared */
    int worker;
    nm_claim_fn fn;
    void *ctx;
    int *rc; /* per chunk */
} claim_job;

static void *run_claims(void *arg)
{
    claim_job *j = (claim_job *)arg;
    for (size_t k; (k = atomic_fetch_add_explicit(j->next, 1, memory_order_relaxed)) < j->chunks;) {
        const size_t c = j->order ? j->order[k] : k;
        j->rc[c] = j->fn(j->ctx, c, j->worker);
    }
    return NULL;
}

int nm_parallel_claim(size_t chunks, const uint32_t *order, int workers, nm_claim_fn fn, void *ctx)
{
    if (chunks == 0) return NM_OK;
    workers = chunk_workers(chunks, workers);
    int *rc = (int *)nm_calloc(chunks, sizeof *rc);
    if (!rc) return NM_ERR_NOMEM;
    atomic_size_t next;
    atomic_init(&next, 0);
    claim_job jobs[NM_WORKER_LIMIT];
    pthread_t th[NM_WORKER_LIMIT];
    bool started[NM_WORKER_LIMIT] = {false};
    for (int w = 0; w < workers; w++) jobs[w] = (claim_job){chunks, order, &next, w, fn, ctx, rc};
    for (int w = 1; w < workers; w++) started[w] = pthread_create(&th[w], NULL, run_claims, &jobs[w]) == 0;
    run_claims(&jobs[0]); /* a worker that could not start leaves its chunks to the others */
    for (int w = 1; w < workers; w++)
        if (started[w]) pthread_join(th[w], NULL);
    int first = NM_OK;
    for (size_t c = 0; c < chunks && !first; c++) first = rc[c];
    nm_free(rc);
    return first;
}
