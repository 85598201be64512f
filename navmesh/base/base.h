/* base.h — what every stage of the navmesh library shares: status codes, the error record that
 * carries a message naming the file / section / field that is wrong, the allocation hook used by
 * fault-injection tests, the deterministic static-chunk worker pool (NavParallel in the article),
 * and every constant of the design article with its name and meaning.
 *
 * Nothing here prints, exits or aborts: every failure is a status plus a message. */
#ifndef NM_BASE_H
#define NM_BASE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ---------------------------------------------------------------------------------- */
enum {
    NM_OK = 0,
    NM_ERR_CORRUPT = -1, /* malformed input bytes (bad magic, truncation, counts, overlong varint) */
    NM_ERR_IO = -2,      /* file missing, unreadable, unwritable */
    NM_ERR_NOMEM = -3,   /* allocation failed */
    NM_ERR_ARG = -4,     /* bad argument from the caller (unknown zone, NaN, ...) */
    NM_ERR_STATE = -5    /* operation impossible in this state (e.g. all triangles unwalkable) */
};

/* An error: a status and a message. The message names what is wrong, outermost context first,
 * e.g. "base.nav.gz: BGEO: triangle chunk 3: stream 4: 2 bytes left over". */
typedef struct nm_error {
    int code;
    char msg[512];
} nm_error;

/* Sets err (if not NULL) and returns code. printf-style. */
int nm_fail(nm_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prepends "context: " to err->msg (keeps the code). printf-style. */
void nm_error_prefix(nm_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void nm_error_clear(nm_error *err);
const char *nm_status_name(int code);

/* ---- memory ---------------------------------------------------------------------------------- */
/* Every allocation of the library goes through these so tests can fail the n-th one
 * (SQLite's habit). nm_malloc(0) returns a unique non-NULL pointer or NULL on failure. */
void *nm_malloc(size_t n);
void *nm_calloc(size_t count, size_t size); /* overflow-checked */
void *nm_realloc(void *p, size_t n);
void nm_free(void *p);
/* Blocks of at least NM_LARGE_BLOCK_MIN bytes from the calls above are mapped by the library, on
 * small pages (base.c says why). Once freed they stay mapped for the next ones, up to
 * nm_kept_max's bytes in all (kept pages); nm_kept_release unmaps them (an engine's close calls
 * it) and nm_kept_bytes counts them. Builds with AddressSanitizer keep none. */
enum { NM_LARGE_BLOCK_MIN = 2 << 20 };
#define NM_KEPT_MAX ((size_t)128 << 20) /* the default cap */
/* Sets the cap on kept pages for the whole process (0: leaves it) and returns the one before (0
 * where nothing is kept). A route engine raises it (NM_ROUTE_KEPT_BYTES); the bake keeps the
 * default, which bounds its peak. */
size_t nm_kept_max(size_t bytes);
size_t nm_kept_bytes(void);
void nm_kept_release(void);
/* A zeroed array of count * size bytes most of which is never touched (the access chains' cells
 * around an end): from NM_LARGE_BLOCK_MIN bytes it is a mapping of its own on small pages, so a
 * touch costs a 4 KB page instead of a cleared 2 MB one, and nm_sparse_free unmaps it. Counted
 * by the allocation hook like the calls above. */
void *nm_sparse_calloc(size_t count, size_t size);
void nm_sparse_free(void *p);
/* The bytes the calls above hold now (each block's asked-for size; the C library's usable size for
 * its own blocks; a sparse block whole, touched or not), for the whole process; *peak (when not
 * NULL): the most they held since nm_alloc_peak_reset, which sets it to the bytes held now.
 * navbench's whole-plan peak: the peak over a plan less the bytes held at its start. */
size_t nm_alloc_held(size_t *peak);
void nm_alloc_peak_reset(void);
/* Overflow-checked count * size; returns false on overflow. */
bool nm_mul_ok(size_t a, size_t b, size_t *out);
/* Test hook: fail the n-th allocation from now (n >= 1), 0 = never. Returns allocations counted
 * since the last call. Not thread-safe; tests only. */
size_t nm_alloc_fail_after(size_t n);

/* ---- hypot ----------------------------------------------------------------------------------- */
/* sqrt(x² + y²) as glibc 2.35 and later computes it on x86-64 (Borges, "An Improved Algorithm
 * for hypot(a,b)", ACM TOMS 2021: the rounded root, then one correction step from its residual,
 * without fused multiply-add, which glibc uses only where every machine of the target has it),
 * the same operations in the same order, so the same bits: the plans and packs made with that C
 * library's hypot stay bit-identical. Why our own: the distances that decide a search
 * (SpanAstar's heuristic, a chord's cost, a sight line's length) no longer depend on the C library
 * the plugin or the bake runs with (glibc before 2.35, glibc with fused multiply-add and other
 * libraries round some of them the other way, and the pinned plan digests would differ there),
 * and the search's relaxation no longer calls out (1.4 % fewer instructions in SpanAstar).
 * Arguments beyond the kernel's range (non-finite, above 2^511, or the smaller one below 2^-511
 * and not 0) go to the C library, as no coordinate of a zone does. */
static inline double nm_hypot(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    if (ax < ay) {
        const double t = ax;
        ax = ay;
        ay = t;
    }
    if (!(ax <= 0x1p511) || !(ay >= 0x1p-511))
        return ay == 0.0 && ax <= 0x1p511 ? ax : hypot(x, y);
    if (ay <= ax * 0x1p-54) /* ay is below half an ulp of ax */
        return ax + ay;
    const double h = sqrt(ax * ax + ay * ay);
    double t1, t2; /* the residual h² - ax² - ay², split so that each part is exact */
    if (h <= 2.0 * ay) {
        const double d = h - ay;
        t1 = ax * (2.0 * d - ax);
        t2 = (d - 2.0 * (ax - ay)) * d;
    } else {
        const double d = h - ax;
        t1 = 2.0 * d * (ax - 2.0 * ay);
        t2 = (4.0 * d - ay) * ay + d * d;
    }
    return h - (t1 + t2) / (2.0 * h);
}

/* ---- threads (NavParallel) ------------------------------------------------------------------- */
enum { NM_WORKER_LIMIT = 4, NM_SERIAL_FLOOR = 1 << 16 };
/* Worker count for n elements: 1 when n < NM_SERIAL_FLOOR, else min(requested, NM_WORKER_LIMIT),
 * requested <= 0 meaning the machine's core count. */
int nm_workers_for(size_t n, int requested);
/* Runs fn(ctx, chunk) for chunk in [0, chunks) on up to `workers` threads; the calling thread
 * takes its share too. Chunks are handed out statically (chunk c to worker c % workers) so the
 * work each chunk does must not depend on which thread runs it. Returns the first non-zero
 * value returned by a chunk in chunk order, or NM_OK. */
typedef int (*nm_chunk_fn)(void *ctx, size_t chunk);
int nm_parallel_chunks(size_t chunks, int workers, nm_chunk_fn fn, void *ctx);
/* Runs fn(ctx, chunk, worker) for chunk in [0, chunks) on up to `workers` threads, each taking
 * the next chunk of `order` (NULL: ascending) as soon as it is free: for chunks of unequal work,
 * heaviest first (the tiles of a window). `worker` in [0, workers) names the thread, for its
 * scratch; the work a chunk does must not depend on it. Every chunk runs. Returns the first
 * non-zero value returned by a chunk in chunk order, or NM_OK. */
typedef int (*nm_claim_fn)(void *ctx, size_t chunk, int worker);
int nm_parallel_claim(size_t chunks, const uint32_t *order, int workers, nm_claim_fn fn, void *ctx);

/* ---- constants of the design article (spec-notes.md) ----------------------------------------- */
#define NM_kCS 0.25                   /* cell edge, px */
#define NM_kClimb 3.0                 /* region link tolerance, m; drops start beyond it */
#define NM_kSlope 1.0                 /* max climbable slope, m of rise per px of run */
#define NM_kStepUp 0.5                /* step a character walks up, m */
#define NM_kBumpUp 1.25               /* max rise over a narrow bump / shallow dip, m */
#define NM_kBumpCells 3               /* look-ahead cells for bumps */
#define NM_kDipCells 2                /* look-behind cells for dips */
#define NM_kSeamCells 4               /* look-ahead for the start layer before a drop is a ledge */
#define NM_kWallH 1.25                /* (FCON) barrier drop that blocks pull sight lines, m */
#define NM_kMergeH (NM_kSlope * NM_kCS) /* span merge tolerance against the first sample, m */
#define NM_kMcHBand 8.0               /* wall stamping / wall-kept / link landing band, m */
#define NM_kQH 1.0                    /* LayerOracle sampling tolerance, m */
#define NM_kEdtCap 12.0               /* clearance cap, px */
#define NM_kClrPref 1.75              /* character half-width, channel threshold, px */
#define NM_kClrLambda 0.5             /* lambda-medial axis threshold, px (2 cells) */
#define NM_kClrNarrow 1.0             /* topology price lower bound, px */
#define NM_kClrWide 4.0               /* topology price upper bound, px */
#define NM_kChordFrac 0.8             /* open-area threshold fraction of corridor half-width */
#define NM_kGeoMargin 0.0
#define NM_kStepTax 0.0
#define NM_kSnapRadius 8.0            /* snapping / core distance / region pick radius, px */
#define NM_kSnapFallbackRadius 16.0   /* second snapping round, px */
#define NM_kDeckBand 2.0              /* declared deck tolerance, m */
#define NM_kHoleMaxCells 32           /* FillHoles limit, cells */
#define NM_kFieldHalo 32              /* halo around a region window, cells */
#define NM_kTrustMargin 64            /* trust margin, cells */
#define NM_kEdtCells 49               /* floor(kEdtCap / kCS) + 1 */
#define NM_kLocalMaxCells 3000000     /* tentative window area cap */
#define NM_kMaxCells 400000000        /* full-region window cap */
#define NM_kRatio0 2.0
#define NM_kRatioStep 2.0
#define NM_kCostSlack 200.0           /* cells */
#define NM_kMaxLevel 64
#define NM_kLinkChainCells 64
#define NM_kLiftMax 0.5               /* corner lift radius, px */
#define NM_kMaxPullSpan 64
#define NM_kFallClimb 0.39            /* dropBlocked character climb, m */
#define NM_kFallHeight 2.1            /* dropBlocked character height, m */
#define NM_kFallRadius 0.41           /* landing margin radius, m */
#define NM_kDropHopTries 3
#define NM_kBaseNavFloorBand 12.0     /* floor band for snapping and tier no-go polygons, m */
#define NM_kWalkableFlags 0x00020CDDu /* BSRF area-flag whitelist */
#define NM_kFloorYNone (-1.0e30f)     /* "no floor / no deck" sentinel */
#define NM_kFloorYValidMin (-1.0e29f) /* a floor value is valid when > this */
#define NM_kWeldDh 3.0                /* old-pack vertex weld height tolerance, m */
#define NM_kWeldGrid 0.05             /* old-pack vertex weld rounding, px */
#define NM_kSmallComponentTris 512    /* raw components of at most this many triangles are small */
#define NM_kSmallBridgeMaxGap 4.0     /* isTraversableLink: max edge gap, px */
#define NM_kTriBucket 24.0            /* triangle bucket size, px */

#ifdef __cplusplus
}
#endif
#endif
