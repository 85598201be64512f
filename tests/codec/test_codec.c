/* test_codec.c — the shared encodings: cursor bounds, varints, zigzag, FNV-1a, zlib streams,
 * gzip / raw files, the worker pool, the error record and the allocator. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "base/base.h"
#include "codec/codec.h"

/* ---- cursor -------------------------------------------------------------------------------- */
Test(cursor, reads_little_endian_values)
{
    const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x00, 0x80, 0x3f};
    nm_cursor c = nm_cur(b, sizeof b);
    cr_assert_eq(nm_cur_u16(&c), 0x0201);
    cr_assert_eq(nm_cur_u16(&c), 0x0403);
    cr_assert_eq(nm_cur_u32(&c), 0x08070605u);
    cr_assert_eq(nm_cur_f32(&c), 1.0f);
    cr_assert_not(c.bad);
    cr_assert_eq(nm_cur_left(&c), 0);
}

Test(cursor, a_read_past_the_end_sets_bad_and_reads_zero_without_moving)
{
    const uint8_t b[] = {1, 2, 3};
    nm_cursor c = nm_cur(b, sizeof b);
    cr_assert_eq(nm_cur_u16(&c), 0x0201);
    cr_assert_eq(nm_cur_u32(&c), 0);
    cr_assert(c.bad);
    cr_assert_eq(c.pos, 2);
    /* Once bad, every later read fails too, even one that would fit. */
    cr_assert_eq(nm_cur_u8(&c), 0);
    nm_error e;
    cr_assert_eq(nm_cur_done(&c, "header", &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "header"));
}

Test(cursor, slices_and_subcursors_stay_inside)
{
    const uint8_t b[8] = {0};
    nm_cursor c = nm_cur(b, sizeof b);
    cr_assert_not(nm_cur_slice(&c, 4, 4).bad);
    cr_assert(nm_cur_slice(&c, 5, 4).bad);
    cr_assert(nm_cur_slice(&c, UINT64_MAX, 2).bad);
    cr_assert(nm_cur_slice(&c, 2, UINT64_MAX).bad);
    nm_cursor s = nm_cur_sub(&c, 6);
    cr_assert_eq(s.size, 6);
    cr_assert(nm_cur_sub(&c, 3).bad);
    cr_assert(c.bad);
}

Test(cursor, done_reports_left_over_bytes)
{
    const uint8_t b[4] = {0};
    nm_cursor c = nm_cur(b, sizeof b);
    nm_cur_u16(&c);
    nm_error e;
    cr_assert_eq(nm_cur_done(&c, "stream 4", &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "2 bytes left over"), "%s", e.msg);
}

/* ---- varint / zigzag ------------------------------------------------------------------------- */
Test(varint, round_trips_edge_values)
{
    const uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)1 << 56, UINT64_MAX};
    nm_buf b = {0};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) nm_buf_varint(&b, vals[i]);
    nm_cursor c = nm_cur(b.p, b.size);
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) cr_assert_eq(nm_cur_varint(&c), vals[i]);
    cr_assert_eq(nm_cur_done(&c, "varints", NULL), NM_OK);
    nm_buf_free(&b);
}

Test(varint, uint64_max_takes_ten_bytes)
{
    nm_buf b = {0};
    nm_buf_varint(&b, UINT64_MAX);
    cr_assert_eq(b.size, 10);
    cr_assert_eq(b.p[9], 0x01);
    nm_buf_free(&b);
}

Test(varint, eleven_bytes_is_corrupt)
{
    uint8_t b[11];
    memset(b, 0x80, 10);
    b[10] = 0x00;
    nm_cursor c = nm_cur(b, sizeof b);
    nm_cur_varint(&c);
    cr_assert(c.bad);
}

Test(varint, a_tenth_byte_that_shifts_past_63_bits_is_corrupt)
{
    uint8_t b[10];
    memset(b, 0xff, 9);
    b[9] = 0x02; /* bit 64 */
    nm_cursor c = nm_cur(b, sizeof b);
    nm_cur_varint(&c);
    cr_assert(c.bad);
}

Test(varint, a_varint_cut_short_is_corrupt)
{
    const uint8_t b[] = {0x80, 0x80};
    nm_cursor c = nm_cur(b, sizeof b);
    nm_cur_varint(&c);
    cr_assert(c.bad);
}

Test(varint, varint32_rejects_wider_values)
{
    nm_buf b = {0};
    nm_buf_varint(&b, (uint64_t)UINT32_MAX + 1);
    nm_cursor c = nm_cur(b.p, b.size);
    nm_cur_varint32(&c);
    cr_assert(c.bad);
    nm_buf_free(&b);
}

Test(zigzag, maps_small_signed_to_small_unsigned)
{
    cr_assert_eq(nm_zig(0), 0);
    cr_assert_eq(nm_zig(-1), 1);
    cr_assert_eq(nm_zig(1), 2);
    cr_assert_eq(nm_zig(-2), 3);
    const int64_t vals[] = {0, 1, -1, 12345, -12345, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) cr_assert_eq(nm_unzig(nm_zig(vals[i])), vals[i]);
    cr_assert_eq(nm_unzig(UINT64_MAX), INT64_MIN);
}

/* ---- FNV-1a 64 ------------------------------------------------------------------------------- */
Test(fnv, matches_published_vectors)
{
    cr_assert_eq(nm_fnv1a(NM_FNV_OFFSET, "", 0), 0xcbf29ce484222325ull);
    cr_assert_eq(nm_fnv1a(NM_FNV_OFFSET, "a", 1), 0xaf63dc4c8601ec8cull);
    cr_assert_eq(nm_fnv1a(NM_FNV_OFFSET, "foobar", 6), 0x85944171f73967e8ull);
    /* Streaming in pieces gives the same hash. */
    cr_assert_eq(nm_fnv1a(nm_fnv1a(NM_FNV_OFFSET, "foo", 3), "bar", 3), 0x85944171f73967e8ull);
}

/* ---- streams -------------------------------------------------------------------------------- */
static void fill_pattern(uint8_t *p, size_t n)
{
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)((i % 7 == 0) ? (x >> 24) : (i & 0x3f));
    }
}

Test(stream, round_trips_and_reuses_the_output_buffer)
{
    enum { N = 100000 };
    uint8_t *src = malloc(N);
    fill_pattern(src, N);
    nm_buf b = {0};
    cr_assert_eq(nm_stream_encode(&b, src, N, 12, NULL), NM_OK);
    cr_assert_eq(nm_stream_encode(&b, src, 10, 6, NULL), NM_OK);
    nm_cursor c = nm_cur(b.p, b.size);
    nm_bytes out = {0};
    size_t n = 0;
    nm_error e;
    cr_assert_eq(nm_stream_decode(&c, &out, 1 << 20, &n, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(n, N);
    cr_assert_eq(memcmp(out.p, src, N), 0);
    cr_assert_eq(nm_stream_decode_exact(&c, &out, 10, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(memcmp(out.p, src, 10), 0);
    cr_assert_eq(nm_cur_done(&c, "two streams", NULL), NM_OK);
    nm_bytes_free(&out);
    nm_buf_free(&b);
    free(src);
}

Test(stream, the_standard_zlib_decoder_reads_what_we_write)
{
    enum { N = 50000 };
    uint8_t *src = malloc(N), *back = malloc(N);
    fill_pattern(src, N);
    nm_buf b = {0};
    cr_assert_eq(nm_stream_encode(&b, src, N, 12, NULL), NM_OK);
    nm_cursor c = nm_cur(b.p, b.size);
    uint64_t len = nm_cur_varint(&c);
    cr_assert_eq(len, nm_cur_left(&c));
    uLongf back_n = N;
    cr_assert_eq(uncompress(back, &back_n, b.p + c.pos, (uLong)len), Z_OK);
    cr_assert_eq(back_n, N);
    cr_assert_eq(memcmp(back, src, N), 0);
    nm_buf_free(&b);
    free(src);
    free(back);
}

Test(stream, we_read_what_the_standard_zlib_encoder_writes)
{
    const char *text = "the same zlib-wrapped deflate format";
    uint8_t z[128];
    uLongf zn = sizeof z;
    cr_assert_eq(compress2(z, &zn, (const Bytef *)text, strlen(text), 9), Z_OK);
    nm_buf b = {0};
    nm_buf_varint(&b, zn);
    nm_buf_bytes(&b, z, zn);
    nm_cursor c = nm_cur(b.p, b.size);
    nm_bytes out = {0};
    cr_assert_eq(nm_stream_decode_exact(&c, &out, strlen(text), NULL), NM_OK);
    cr_assert_eq(memcmp(out.p, text, strlen(text)), 0);
    nm_bytes_free(&out);
    nm_buf_free(&b);
}

Test(stream, zlib_data_ending_before_the_stated_length_is_corrupt)
{
    uint8_t src[64] = {1, 2, 3};
    nm_buf one = {0};
    nm_stream_encode(&one, src, sizeof src, 12, NULL);
    nm_cursor c = nm_cur(one.p, one.size);
    uint64_t len = nm_cur_varint(&c);
    nm_buf b = {0};
    nm_buf_varint(&b, len + 2);
    nm_buf_bytes(&b, one.p + c.pos, (size_t)len);
    nm_buf_u16(&b, 0);
    nm_cursor d = nm_cur(b.p, b.size);
    nm_bytes out = {0};
    size_t n;
    nm_error e;
    cr_assert_eq(nm_stream_decode(&d, &out, 1 << 20, &n, &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "before its stated length"), "%s", e.msg);
    nm_bytes_free(&out);
    nm_buf_free(&b);
    nm_buf_free(&one);
}

Test(stream, stated_length_past_the_end_zero_or_truncated_data_is_corrupt)
{
    uint8_t src[64] = {0};
    nm_buf one = {0};
    nm_stream_encode(&one, src, sizeof src, 12, NULL);
    nm_bytes out = {0};
    size_t n;
    nm_error e;
    /* Every truncation of a stream is an error, never a crash. */
    for (size_t cut = 0; cut < one.size; cut++) {
        nm_cursor c = nm_cur(one.p, cut);
        cr_assert_neq(nm_stream_decode(&c, &out, 1 << 20, &n, &e), NM_OK, "cut at %zu", cut);
    }
    const uint8_t zero[] = {0x00, 0x78, 0x9c};
    nm_cursor z = nm_cur(zero, sizeof zero);
    cr_assert_eq(nm_stream_decode(&z, &out, 1 << 20, &n, &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "length is 0"), "%s", e.msg);
    nm_bytes_free(&out);
    nm_buf_free(&one);
}

Test(stream, raw_deflate_without_the_zlib_header_is_rejected)
{
    const uint8_t raw[] = {0x03, 0x03, 0x63, 0x00, 0x00}; /* raw deflate, not zlib */
    nm_cursor c = nm_cur(raw, sizeof raw);
    nm_bytes out = {0};
    size_t n;
    cr_assert_eq(nm_stream_decode(&c, &out, 1 << 20, &n, NULL), NM_ERR_CORRUPT);
    nm_bytes_free(&out);
}

Test(stream, exact_decode_rejects_other_sizes_and_max_out_bounds_bombs)
{
    uint8_t src[1000] = {0};
    nm_buf b = {0};
    nm_stream_encode(&b, src, sizeof src, 12, NULL);
    nm_bytes out = {0};
    nm_error e;
    nm_cursor c = nm_cur(b.p, b.size);
    cr_assert_eq(nm_stream_decode_exact(&c, &out, 999, &e), NM_ERR_CORRUPT);
    c = nm_cur(b.p, b.size);
    cr_assert_eq(nm_stream_decode_exact(&c, &out, 1001, &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "expected 1001"), "%s", e.msg);
    c = nm_cur(b.p, b.size);
    size_t n;
    cr_assert_eq(nm_stream_decode(&c, &out, 500, &n, &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "more than 500"), "%s", e.msg);
    nm_bytes_free(&out);
    nm_buf_free(&b);
}

/* ---- files ---------------------------------------------------------------------------------- */
static char *tmp_path(const char *suffix)
{
    static int k;
    char *p = malloc(256);
    snprintf(p, 256, "/tmp/nm_codec_%d_%d%s", (int)getpid(), k++, suffix);
    return p;
}

Test(file, gzip_round_trip_is_byte_identical_and_deterministic)
{
    enum { N = 9 << 20 }; /* more than two 4 MiB read pieces */
    uint8_t *src = malloc(N);
    fill_pattern(src, N);
    char *a = tmp_path(".gz"), *b = tmp_path(".gz");
    cr_assert_eq(nm_file_write(a, src, N, NULL), NM_OK);
    cr_assert_eq(nm_file_write(b, src, N, NULL), NM_OK);
    uint8_t *fa, *fb, *back;
    size_t na, nb, n;
    cr_assert_eq(nm_file_read(a, 0, &back, &n, NULL), NM_OK);
    cr_assert_eq(n, N);
    cr_assert_eq(memcmp(back, src, N), 0);
    /* The gzip files themselves are identical (no timestamp). */
    char *ra = malloc(strlen(a) + 1);
    strcpy(ra, a);
    ra[strlen(ra) - 3] = 0;
    rename(a, ra);
    cr_assert_eq(nm_file_read(ra, 0, &fa, &na, NULL), NM_OK);
    char *rb = malloc(strlen(b) + 1);
    strcpy(rb, b);
    rb[strlen(rb) - 3] = 0;
    rename(b, rb);
    cr_assert_eq(nm_file_read(rb, 0, &fb, &nb, NULL), NM_OK);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(fa, fb, na), 0);
    cr_assert_eq(fa[0], 0x1f);
    cr_assert_eq(fa[1], 0x8b);
    unlink(ra);
    unlink(rb);
    nm_free(fa);
    nm_free(fb);
    nm_free(back);
    free(src);
    free(a);
    free(b);
    free(ra);
    free(rb);
}

Test(file, a_gz_name_also_reads_uncompressed_and_concatenated_members)
{
    char *p = tmp_path(".gz");
    FILE *f = fopen(p, "wb");
    fputs("plain bytes", f);
    fclose(f);
    uint8_t *d;
    size_t n;
    cr_assert_eq(nm_file_read(p, 0, &d, &n, NULL), NM_OK);
    cr_assert_eq(n, 11);
    cr_assert_eq(memcmp(d, "plain bytes", 11), 0);
    nm_free(d);
    gzFile g = gzopen(p, "wb");
    gzwrite(g, "abc", 3);
    gzclose(g);
    g = gzopen(p, "ab");
    gzwrite(g, "def", 3);
    gzclose(g);
    cr_assert_eq(nm_file_read(p, 0, &d, &n, NULL), NM_OK);
    cr_assert_eq(n, 6);
    cr_assert_eq(memcmp(d, "abcdef", 6), 0);
    nm_free(d);
    unlink(p);
    free(p);
}

Test(file, truncated_gzip_and_missing_files_are_clear_errors)
{
    enum { N = 200000 };
    uint8_t *src = malloc(N);
    fill_pattern(src, N);
    char *p = tmp_path(".gz");
    cr_assert_eq(nm_file_write(p, src, N, NULL), NM_OK);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    cr_assert_eq(truncate(p, len / 2), 0);
    uint8_t *d = NULL;
    size_t n;
    nm_error e;
    cr_assert_eq(nm_file_read(p, 0, &d, &n, &e), NM_ERR_CORRUPT);
    cr_assert_null(d);
    cr_assert(strstr(e.msg, p), "%s", e.msg);
    unlink(p);
    cr_assert_eq(nm_file_read(p, 0, &d, &n, &e), NM_ERR_IO);
    cr_assert(strstr(e.msg, "cannot open"), "%s", e.msg);
    free(src);
    free(p);
}

Test(file, raw_files_and_the_size_bound)
{
    char *p = tmp_path(".nav");
    cr_assert_eq(nm_file_write(p, "0123456789", 10, NULL), NM_OK);
    uint8_t *d;
    size_t n;
    cr_assert_eq(nm_file_read(p, 10, &d, &n, NULL), NM_OK);
    cr_assert_eq(n, 10);
    nm_free(d);
    nm_error e;
    cr_assert_eq(nm_file_read(p, 9, &d, &n, &e), NM_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "larger than 9"), "%s", e.msg);
    unlink(p);
    free(p);
}

Test(file, a_failed_write_leaves_no_file)
{
    nm_error e;
    cr_assert_eq(nm_file_write("/nonexistent-dir/x.nav.gz", "a", 1, &e), NM_ERR_IO);
    cr_assert(access("/nonexistent-dir/x.nav.gz.tmp", F_OK) != 0);
}

/* ---- workers -------------------------------------------------------------------------------- */
typedef struct {
    uint64_t out[64];
} sum_ctx;

static int square_chunk(void *ctx, size_t c)
{
    sum_ctx *s = ctx;
    s->out[c] = (uint64_t)c * c + 7;
    return c == 50 ? 0 : NM_OK;
}

static int fail_chunk(void *ctx, size_t c)
{
    (void)ctx;
    return c == 9 ? NM_ERR_CORRUPT : (c == 30 ? NM_ERR_IO : NM_OK);
}

Test(parallel, output_is_the_same_for_any_worker_count)
{
    sum_ctx a = {0}, b = {0};
    cr_assert_eq(nm_parallel_chunks(64, 1, square_chunk, &a), NM_OK);
    cr_assert_eq(nm_parallel_chunks(64, 4, square_chunk, &b), NM_OK);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    cr_assert_eq(a.out[63], 63u * 63u + 7u);
}

Test(parallel, reports_the_first_failing_chunk_in_chunk_order)
{
    cr_assert_eq(nm_parallel_chunks(40, 4, fail_chunk, NULL), NM_ERR_CORRUPT);
    cr_assert_eq(nm_parallel_chunks(40, 1, fail_chunk, NULL), NM_ERR_CORRUPT);
}

/* Claimed chunks: each chunk runs once, on a worker in range, each worker's chunks in the order
 * it claimed them (so in `order`), and a long first chunk does not hold back the rest. */
typedef struct {
    _Atomic int runs[64];
    int worker[64];
    size_t seen[NM_WORKER_LIMIT][64]; /* per worker: the chunks it ran, in turn */
    size_t nseen[NM_WORKER_LIMIT];
    _Atomic int done;
    int workers, bad_worker;
} claim_ctx;

static int claim_chunk(void *ctx, size_t c, int w)
{
    claim_ctx *s = ctx;
    if (w < 0 || w >= NM_WORKER_LIMIT) {
        s->bad_worker = 1;
        return NM_OK;
    }
    s->worker[c] = w;
    s->seen[w][s->nseen[w]++] = c;
    atomic_fetch_add(&s->runs[c], 1);
    atomic_fetch_add(&s->done, 1);
    /* the heaviest, claimed first, waits for the other 63 (up to 10 s): with two workers or more
     * the others take them all meanwhile; a static share would leave some for this one */
    for (int t = 0; c == 63 && s->workers > 1 && atomic_load(&s->done) < 64 && t < 10000; t++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    return c == 9 ? NM_ERR_CORRUPT : (c == 5 ? NM_ERR_IO : NM_OK);
}

Test(parallel, claimed_chunks_run_once_each_in_order_and_report_the_first_failure_in_chunk_order)
{
    uint32_t order[64];
    for (uint32_t k = 0; k < 64; k++) order[k] = 63 - k;
    for (int workers = 1; workers <= 4; workers++) {
        claim_ctx *s = calloc(1, sizeof *s);
        cr_assert_not_null(s);
        s->workers = workers;
        /* chunk 5 fails after chunk 9 in `order`, but comes first in chunk order */
        cr_assert_eq(nm_parallel_claim(64, order, workers, claim_chunk, s), NM_ERR_IO, "workers %d", workers);
        cr_assert_eq(s->bad_worker, 0);
        size_t total = 0;
        for (size_t c = 0; c < 64; c++) {
            cr_assert_eq(atomic_load(&s->runs[c]), 1, "chunk %zu ran %d times", c, atomic_load(&s->runs[c]));
            cr_assert_lt(s->worker[c], workers);
        }
        for (int w = 0; w < NM_WORKER_LIMIT; w++) {
            total += s->nseen[w];
            for (size_t k = 1; k < s->nseen[w]; k++) /* order is descending */
                cr_assert_gt(s->seen[w][k - 1], s->seen[w][k], "worker %d", w);
        }
        cr_assert_eq(total, 64u);
        if (workers > 1) /* while chunk 63 waited, the other workers ran everything else */
            cr_assert_eq(s->nseen[s->worker[63]], 1u, "workers %d: the waiting worker ran %zu chunks",
                         workers, s->nseen[s->worker[63]]);
        free(s);
    }
    cr_assert_eq(nm_parallel_claim(0, NULL, 4, claim_chunk, NULL), NM_OK);
}

Test(parallel, small_inputs_run_serially_and_the_limit_is_four)
{
    cr_assert_eq(nm_workers_for(100, 4), 1);
    cr_assert_eq(nm_workers_for(1 << 20, 16), 4);
    cr_assert_eq(nm_workers_for(1 << 20, 2), 2);
}

/* ---- hypot ------------------------------------------------------------------------------------ */
static uint64_t hyp_state = 0x9E3779B97F4A7C15u;
static uint64_t hyp_next(void) /* xorshift64: the same pairs on every run */
{
    hyp_state ^= hyp_state << 13;
    hyp_state ^= hyp_state >> 7;
    hyp_state ^= hyp_state << 17;
    return hyp_state;
}

static double hyp_unit(void)
{
    return (double)(hyp_next() >> 11) * 0x1p-53;
}

/* A pair of the kinds the planner and the bake pass: cell offsets, px coordinates, values of
 * every magnitude, one far smaller than the other, quarter cells, and any bits at all. */
static void hyp_pair(long k, double *x, double *y)
{
    switch (k % 6) {
    case 0:
        *x = (double)((int64_t)(hyp_next() % 200001) - 100000);
        *y = (double)((int64_t)(hyp_next() % 200001) - 100000);
        break;
    case 1:
        *x = (hyp_unit() - 0.5) * 4000.0;
        *y = (hyp_unit() - 0.5) * 4000.0;
        break;
    case 2:
        *x = ldexp(hyp_unit(), (int)(hyp_next() % 1200) - 600);
        *y = ldexp(hyp_unit(), (int)(hyp_next() % 1200) - 600);
        break;
    case 3:
        *x = (hyp_unit() - 0.5) * 1e7;
        *y = *x * ldexp(hyp_unit(), -(int)(hyp_next() % 70));
        break;
    case 4:
        *x = (double)(hyp_next() % 4000) * 0.25;
        *y = (double)(hyp_next() % 4000) * 0.125;
        break;
    default: {
        const uint64_t a = hyp_next(), b = hyp_next();
        memcpy(x, &a, sizeof a);
        memcpy(y, &b, sizeof b);
    }
    }
}

Test(hypot, gives_the_c_librarys_bits_where_glibc_is_2_35_or_later)
{
#if defined(__GLIBC__) && defined(__x86_64__) /* glibc's kernel without fused multiply-add */
    int major = 0, minor = 0;
    if (sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major < 2 ||
        (major == 2 && minor < 35))
        cr_skip_test("glibc %s computes hypot another way", gnu_get_libc_version());
    long differ = 0;
    for (long k = 0; k < 3000000; k++) {
        double x, y;
        hyp_pair(k, &x, &y);
        const double a = hypot(x, y), b = nm_hypot(x, y);
        if (memcmp(&a, &b, sizeof a) != 0 && !(isnan(a) && isnan(b)) && differ++ < 5)
            cr_log_error("hypot(%.17g, %.17g): C library %.17g, ours %.17g", x, y, a, b);
    }
    cr_assert_eq(differ, 0, "%ld of 3 M pairs differ", differ);
#else
    cr_skip_test("not glibc on x86-64 (where the machine has fused multiply-add, glibc uses it)");
#endif
}

Test(hypot, is_within_an_ulp_of_the_root_and_keeps_the_edge_values)
{
    /* below 2^26 an integer pair's squares and their sum are exact, so sqrt rounds the root once */
    for (long k = 0; k < 1000000; k++) {
        const double x = (double)((int64_t)(hyp_next() % 120001) - 60000);
        const double y = (double)((int64_t)(hyp_next() % 120001) - 60000);
        const double r = sqrt(x * x + y * y), h = nm_hypot(x, y);
        cr_assert(fabs(h - r) <= nextafter(r, INFINITY) - r, "hypot(%g, %g) = %.17g, root %.17g", x, y, h, r);
        cr_assert(h == nm_hypot(y, x) && h == nm_hypot(-x, y) && h == nm_hypot(x, -y));
    }
    cr_assert_eq(nm_hypot(3.0, 4.0), 5.0);
    cr_assert_eq(nm_hypot(0.0, -7.5), 7.5);
    cr_assert_eq(nm_hypot(0.0, 0.0), 0.0);
    cr_assert_eq(nm_hypot(1e300, 1e300), hypot(1e300, 1e300)); /* past the kernel: the library */
    cr_assert(isinf(nm_hypot(INFINITY, NAN)) && isinf(nm_hypot(-1.0, -INFINITY)));
    cr_assert(isnan(nm_hypot(NAN, 1.0)));
}

/* ---- errors and the allocation hook ---------------------------------------------------------- */
Test(error, prefixes_put_the_outer_context_first)
{
    nm_error e;
    nm_fail(&e, NM_ERR_CORRUPT, "%d bytes left over", 2);
    nm_error_prefix(&e, "stream %d", 4);
    nm_error_prefix(&e, "%s", "base.nav.gz: BGEO");
    cr_assert_str_eq(e.msg, "base.nav.gz: BGEO: stream 4: 2 bytes left over");
    cr_assert_eq(e.code, NM_ERR_CORRUPT);
}

Test(error, long_messages_are_truncated_not_overflowed)
{
    nm_error e;
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    nm_fail(&e, NM_ERR_IO, "%s", big);
    nm_error_prefix(&e, "%s", big);
    cr_assert_lt(strlen(e.msg), sizeof e.msg);
}

Test(alloc, the_hook_fails_the_nth_allocation_and_writers_notice)
{
    nm_alloc_fail_after(1);
    nm_buf b = {0};
    nm_buf_u32(&b, 7);
    cr_assert(b.oom);
    nm_buf_u32(&b, 8);
    cr_assert_eq(b.size, 0);
    nm_alloc_fail_after(0);
    nm_buf_free(&b);
    cr_assert_null(nm_calloc(SIZE_MAX / 2, 4));
}

/* The VmFlags line of the mapping holding address a, from /proc/self/smaps; false when not found. */
static bool vm_flags_of(uintptr_t a, char *flags, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return false;
    char line[512];
    bool in = false, found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's first line */
            in = a >= lo && a < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, cap, "%.200s", line + 8);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* Forward: kept_pages_on below. */
static bool kept_pages_on(void);

Test(alloc, a_large_block_is_on_small_pages)
{
    /* a huge page the host has taken back costs several times more to fault than its 2 MB on
     * small pages (base.c): the library's mappings are advised against huge pages */
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        cr_skip_test("no transparent huge pages on this kernel");
    if (!kept_pages_on())
        cr_skip_test("the C library's blocks on this build (AddressSanitizer)");
    const size_t n = ((size_t)4 << 20) - 1;
    cr_assert_geq(n, (size_t)NM_LARGE_BLOCK_MIN);
    unsigned char *p = nm_malloc(n);
    cr_assert_not_null(p);
    char flags[256] = "";
    if (!vm_flags_of((uintptr_t)p, flags, sizeof flags)) {
        nm_free(p);
        cr_skip_test("no /proc/self/smaps VmFlags");
    }
    cr_expect(strstr(flags, " nh") != NULL && strstr(flags, " hg") == NULL,
              "VmFlags of the block: %s", flags);
    nm_free(p);
    nm_kept_release();
}

/* Are freed large blocks kept on this build (none under AddressSanitizer)? Leaves none kept. */
static bool kept_pages_on(void)
{
    nm_kept_release();
    void *p = nm_malloc(NM_LARGE_BLOCK_MIN);
    nm_free(p);
    const bool on = nm_kept_bytes() > 0;
    nm_kept_release();
    return on;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The resident kB of the mapping holding address a (its smaps Rss line); -1 when not found. */
static long rss_kb_of(uintptr_t a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    bool in = false;
    long kb = -1;
    while (kb < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = a >= lo && a < hi;
        else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

/* A sparse block reads zeros at both ends, and a touch in the middle of a large one makes a small
 * page resident, not a 2 MB one (the access chains touch a few cells of window-sized arrays). */
Test(alloc, a_sparse_block_reads_zeros_and_a_touch_costs_a_small_page)
{
    const size_t small = 1000, big = (size_t)64 << 20;
    unsigned char *p = nm_sparse_calloc(small, 1);
    cr_assert_not_null(p);
    cr_expect(all_zero(p, small));
    memset(p, 0xEE, small);
    nm_sparse_free(p);
    uint32_t *q = nm_sparse_calloc(big / 4, 4);
    cr_assert_not_null(q);
    cr_expect_eq(((uintptr_t)q & 63), 0, "64-byte aligned");
    cr_expect_eq(q[0], 0);
    cr_expect_eq(q[big / 4 - 1], 0);
    q[big / 8] = 7; /* 32 MB in: one write */
    cr_expect_eq(q[big / 8], 7);
    const long kb = rss_kb_of((uintptr_t)&q[big / 8]);
    char flags[256] = "";
    const bool huge_kernel = access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0;
    if (kb >= 0 && huge_kernel && vm_flags_of((uintptr_t)&q[big / 8], flags, sizeof flags))
        cr_expect_lt(kb, 2048, "resident after three touches: %ld kB (VmFlags %s)", kb, flags);
    nm_sparse_free(q);
    nm_sparse_free(NULL);
    nm_alloc_fail_after(1);
    cr_expect_null(nm_sparse_calloc(big, 1), "the allocation hook fails it too");
    nm_alloc_fail_after(0);
    cr_expect_null(nm_sparse_calloc(SIZE_MAX / 2, 4));
}

/* Two large blocks of a and b MB, written with non-zero bytes and freed (kept): their addresses. */
static void keep_two(size_t a, size_t b, unsigned char **pa, unsigned char **pb)
{
    const size_t mb = (size_t)1 << 20;
    *pa = nm_malloc(a * mb);
    *pb = nm_malloc(b * mb);
    cr_assert(*pa && *pb);
    memset(*pa, 0xAB, a * mb);
    memset(*pb, 0xCD, b * mb);
    nm_free(*pa);
    nm_free(*pb);
}

/* A freed large block stays mapped and serves the next one: the smallest that holds it is cut (its
 * tail stays kept), and nm_calloc's block reads zeros although the pages held another block's
 * bytes. */
Test(alloc, a_kept_block_serves_the_next_one_zeroed)
{
    if (!kept_pages_on())
        cr_skip_test("no kept pages on this build (AddressSanitizer)");
    const size_t mb = (size_t)1 << 20;
    unsigned char *small, *big;
    keep_two(4, 10, &small, &big);
    cr_assert_eq(nm_kept_bytes(), 14 * mb);
    unsigned char *q = nm_calloc(3, mb); /* 3 MB: the 4 MB block, cut to 4 (2 MB pages) */
    cr_assert_eq(q, small, "the smallest kept block that holds the request");
    cr_expect(all_zero(q, 3 * mb), "nm_calloc from kept pages reads zeros");
    cr_expect_eq(nm_kept_bytes(), 10 * mb);
    unsigned char *r = nm_calloc(5, mb); /* the 10 MB block cut to 6; its 4 MB tail stays kept */
    cr_assert_eq(r, big);
    cr_expect(all_zero(r, 5 * mb));
    cr_expect_eq(nm_kept_bytes(), 4 * mb);
    nm_free(q);
    nm_free(r);
    cr_expect_eq(nm_kept_bytes(), 14 * mb);
    nm_kept_release();
    cr_expect_eq(nm_kept_bytes(), 0);
}

/* A request larger than every kept block takes their pages (moved into its mapping) and reads
 * zeros; nothing is kept past the cap (nm_kept_max). */
Test(alloc, a_block_larger_than_the_kept_ones_takes_their_pages)
{
    if (!kept_pages_on())
        cr_skip_test("no kept pages on this build (AddressSanitizer)");
    const size_t mb = (size_t)1 << 20;
    unsigned char *a, *b;
    keep_two(4, 6, &a, &b);
    unsigned char *c = nm_calloc(1, 15 * mb);
    cr_assert_not_null(c);
    cr_expect_eq(nm_kept_bytes(), 0, "both kept blocks moved into the new one");
    cr_expect(all_zero(c, 15 * mb));
    memset(c, 0x33, 15 * mb);
    nm_free(c);
    cr_expect_eq(nm_kept_bytes(), 16 * mb);
    /* more than the cap freed: the rest is unmapped; a raised cap keeps more */
    for (int round = 0; round < 2; round++) {
        const size_t cap = round ? 3 * NM_KEPT_MAX : NM_KEPT_MAX;
        const size_t was = nm_kept_max(cap);
        const size_t n = cap / (8 * mb) + 4;
        void **v = nm_calloc(n, sizeof *v);
        cr_assert_not_null(v);
        for (size_t i = 0; i < n; i++)
            cr_assert_not_null(v[i] = nm_malloc(8 * mb));
        for (size_t i = 0; i < n; i++)
            nm_free(v[i]);
        nm_free(v);
        cr_expect_leq(nm_kept_bytes(), cap);
        cr_expect_geq(nm_kept_bytes(), cap - 8 * mb);
        cr_expect_eq(nm_kept_max(was), cap);
        nm_kept_release();
    }
}

/* A kept block made of moved pieces (several mappings, which the kernel may refuse to move as
 * one) still serves: moved into a larger block, or that block gets fresh pages; grown by
 * nm_realloc, moved or copied. Nothing reads garbage, nothing faults. */
Test(alloc, a_block_made_of_moved_pieces_serves_again)
{
    if (!kept_pages_on())
        cr_skip_test("no kept pages on this build (AddressSanitizer)");
    const size_t mb = (size_t)1 << 20;
    unsigned char *a, *b;
    keep_two(4, 4, &a, &b);
    unsigned char *c = nm_malloc(10 * mb); /* a's and b's pages, then fresh ones */
    cr_assert_not_null(c);
    memset(c, 3, 10 * mb);
    nm_free(c);
    unsigned char *d = nm_calloc(12, mb);
    cr_assert_not_null(d);
    cr_expect(all_zero(d, 12 * mb));
    memset(d, 4, 12 * mb);
    nm_free(d);
    unsigned char *e = nm_malloc(12 * mb);
    cr_assert_not_null(e);
    for (size_t i = 0; i < 12 * mb; i++)
        e[i] = (unsigned char)(i * 7);
    unsigned char *f = nm_realloc(e, 30 * mb);
    cr_assert_not_null(f);
    for (size_t i = 0; i < 12 * mb; i++)
        cr_assert_eq(f[i], (unsigned char)(i * 7), "byte %zu", i);
    memset(f + 12 * mb, 5, 18 * mb);
    nm_free(f);
    nm_kept_release();
    /* a kept block the kernel will not move (a hole in it, made here by hand): the larger block
     * takes fresh pages instead, whole */
    unsigned char *g = nm_malloc(8 * mb);
    cr_assert_not_null(g);
    memset(g, 6, 8 * mb);
    cr_assert_eq(munmap(g + 2 * mb, 2 * mb), 0);
    nm_free(g);
    unsigned char *h = nm_calloc(1, 12 * mb);
    cr_assert_not_null(h);
    cr_expect(all_zero(h, 12 * mb));
    memset(h, 7, 12 * mb);
    unsigned char *k = nm_realloc(h, 20 * mb);
    cr_assert_not_null(k);
    for (size_t i = 0; i < 12 * mb; i += 4096)
        cr_assert_eq(k[i], 7);
    nm_free(k);
    nm_kept_release();
}

/* nm_realloc keeps a block's bytes whichever allocator holds it: grown from a small block into a
 * large one, grown again (kept pages or not); a shrink keeps the block in place and hands its
 * tail to the kept pages. */
Test(alloc, realloc_keeps_the_bytes_across_the_large_block_threshold)
{
    const bool kept = kept_pages_on();
    const size_t mb = (size_t)1 << 20;
    uint32_t *p = nm_malloc(1000 * sizeof *p);
    cr_assert_not_null(p);
    for (uint32_t i = 0; i < 1000; i++)
        p[i] = i * 2654435761u;
    size_t n = 1000;
    const size_t grow[] = {3 * mb, 9 * mb, 9 * mb + 5, 20 * mb};
    for (size_t g = 0; g < sizeof grow / sizeof *grow; g++) {
        p = nm_realloc(p, grow[g]);
        cr_assert_not_null(p);
        for (uint32_t i = 0; i < n; i++)
            cr_assert_eq(p[i], i * 2654435761u, "word %u after growing to %zu bytes", i, grow[g]);
        const size_t m = grow[g] / sizeof *p;
        for (size_t i = n; i < m; i++)
            p[i] = (uint32_t)i * 2654435761u;
        n = m;
    }
    uint32_t *q = nm_realloc(p, 3 * mb);
    cr_assert_not_null(q);
    for (uint32_t i = 0; i < 3 * mb / sizeof *q; i++)
        cr_assert_eq(q[i], i * 2654435761u);
    if (kept) {
        cr_expect_eq(q, p, "a shrink stays in place");
        cr_expect_geq(nm_kept_bytes(), 16 * mb, "the 20 MB block's last 16 MB are kept");
    }
    nm_free(q);
    nm_kept_release();
}

/* A directory opens for reading on Linux and sizes as a huge file: the error names it, raw or
 * gzip by name (it said "larger than 4294967296 bytes"). */
Test(file, a_directory_is_named_not_sized)
{
    const char *suffix[2] = {"", ".nav.gz"};
    for (int k = 0; k < 2; k++) {
        char *p = tmp_path(suffix[k]);
        cr_assert_eq(mkdir(p, 0700), 0, "%s", p);
        uint8_t *d = (uint8_t *)"untouched";
        size_t n = 7;
        nm_error e;
        cr_expect_eq(nm_file_read(p, 0, &d, &n, &e), NM_ERR_IO);
        cr_expect(strstr(e.msg, "is a directory"), "%s", e.msg);
        cr_expect_null(d);
        cr_expect_eq(n, 0);
        rmdir(p);
        free(p);
    }
}

/* nm_alloc_held counts every kind of block while it is held and nothing once freed: small and
 * large (kept) blocks, a C library block moved to kept pages by nm_realloc, a kept block grown and
 * cut, a sparse block; the peak is the most held at once (navbench's whole-plan figure). The C
 * library may count a little more than asked (its usable size), never less. */
Test(alloc, held_bytes_follow_every_kind_of_block_and_return_to_zero)
{
    const size_t mb = (size_t)1 << 20, slack = 8192;
    const size_t h0 = nm_alloc_held(NULL);
    nm_alloc_peak_reset();
    unsigned char *a = nm_malloc(100);
    cr_assert_not_null(a);
    size_t d = nm_alloc_held(NULL) - h0;
    cr_expect(d >= 100 && d <= 100 + slack, "a small block: %zu", d);
    unsigned char *b = nm_calloc(3, mb);
    cr_assert_not_null(b);
    d = nm_alloc_held(NULL) - h0;
    cr_expect(d >= 100 + 3 * mb && d <= 100 + 3 * mb + 2 * slack, "and 3 MB: %zu", d);
    unsigned char *c = nm_realloc(b, 5 * mb); /* grown */
    cr_assert_not_null(c);
    unsigned char *e = nm_realloc(c, 5 * mb / 2); /* cut */
    cr_assert_not_null(e);
    d = nm_alloc_held(NULL) - h0;
    cr_expect(d >= 100 + 5 * mb / 2 && d <= 100 + 5 * mb / 2 + 2 * slack, "cut to 2.5 MB: %zu", d);
    unsigned char *f = nm_malloc(1000);
    cr_assert_not_null(f);
    unsigned char *g = nm_realloc(f, 3 * mb); /* a C library block to a large one */
    cr_assert_not_null(g);
    uint32_t *s = nm_sparse_calloc(4 * mb, 4);
    cr_assert_not_null(s);
    const size_t top = 100 + 5 * mb / 2 + 3 * mb + 16 * mb;
    d = nm_alloc_held(NULL) - h0;
    cr_expect(d >= top && d <= top + 4 * slack, "all four: %zu", d);
    nm_sparse_free(s);
    nm_free(g);
    nm_free(e);
    nm_free(a);
    cr_expect_eq(nm_alloc_held(NULL), h0, "every block freed: the count is back where it began");
    size_t peak;
    nm_alloc_held(&peak);
    cr_expect(peak - h0 >= top && peak - h0 <= top + 4 * slack, "peak %zu over %zu", peak - h0, top);
    nm_alloc_peak_reset();
    nm_alloc_held(&peak);
    cr_expect_eq(peak, h0, "a reset peak is the bytes held now");
    nm_kept_release();
}
