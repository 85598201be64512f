/* codec.c — the bounds-checked cursor, the writer buffer, LEB128 varints and zlib streams
 * (design article 数据包 / 公共编码). Streams are inflated and deflated with libdeflate, the same
 * zlib-wrapped format any zlib decoder reads. */
#include "codec.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

/* ---- cursor ---------------------------------------------------------------------------------- */
nm_cursor nm_cur(const void *p, size_t size)
{
    nm_cursor c = {(const uint8_t *)p, p ? size : 0, 0, false};
    return c;
}

bool nm_cur_skip(nm_cursor *c, size_t n)
{
    if (c->bad || n > c->size - c->pos) {
        c->bad = true;
        return false;
    }
    c->pos += n;
    return true;
}

bool nm_cur_seek(nm_cursor *c, size_t pos)
{
    if (c->bad || pos > c->size) {
        c->bad = true;
        return false;
    }
    c->pos = pos;
    return true;
}

nm_cursor nm_cur_sub(nm_cursor *c, size_t n)
{
    nm_cursor s = {NULL, 0, 0, true};
    const uint8_t *p = nm_cur_bytes(c, n);
    if (p) s = nm_cur(p, n);
    return s;
}

nm_cursor nm_cur_slice(const nm_cursor *c, uint64_t off, uint64_t n)
{
    nm_cursor s = {NULL, 0, 0, true};
    if (off <= c->size && n <= c->size - off) s = nm_cur(c->p + off, (size_t)n);
    return s;
}

const uint8_t *nm_cur_bytes(nm_cursor *c, size_t n)
{
    if (c->bad || n > c->size - c->pos) {
        c->bad = true;
        return NULL;
    }
    const uint8_t *p = c->p + c->pos;
    c->pos += n;
    return p;
}

static uint64_t read_le(nm_cursor *c, size_t n)
{
    const uint8_t *p = nm_cur_bytes(c, n);
    uint64_t v = 0;
    if (p)
        for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint8_t nm_cur_u8(nm_cursor *c) { return (uint8_t)read_le(c, 1); }
uint16_t nm_cur_u16(nm_cursor *c) { return (uint16_t)read_le(c, 2); }
uint32_t nm_cur_u32(nm_cursor *c) { return (uint32_t)read_le(c, 4); }
uint64_t nm_cur_u64(nm_cursor *c) { return read_le(c, 8); }
int32_t nm_cur_i32(nm_cursor *c) { return (int32_t)nm_cur_u32(c); }
int64_t nm_cur_i64(nm_cursor *c) { return (int64_t)nm_cur_u64(c); }

float nm_cur_f32(nm_cursor *c)
{
    uint32_t u = nm_cur_u32(c);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double nm_cur_f64(nm_cursor *c)
{
    uint64_t u = nm_cur_u64(c);
    double f;
    memcpy(&f, &u, 8);
    return f;
}

uint64_t nm_cur_varint_long(nm_cursor *c)
{
    uint64_t v = 0;
    size_t pos = c->pos;
    if (c->bad) return 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (pos >= c->size) break;
        uint8_t b = c->p[pos++];
        uint64_t bits = (uint64_t)(b & 0x7f);
        /* The 10th byte may only carry the top bit of a 64-bit value. */
        if (shift == 63 && bits > 1) break;
        v |= bits << shift;
        if (!(b & 0x80)) {
            c->pos = pos;
            return v;
        }
    }
    c->bad = true;
    return 0;
}

uint32_t nm_cur_varint32(nm_cursor *c)
{
    uint64_t v = nm_cur_varint(c);
    if (v > UINT32_MAX) {
        c->bad = true;
        return 0;
    }
    return (uint32_t)v;
}

int nm_cur_done(const nm_cursor *c, const char *what, nm_error *err)
{
    if (c->bad) return nm_fail(err, NM_ERR_CORRUPT, "%s: truncated or malformed", what);
    if (c->pos != c->size)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: %zu bytes left over", what, c->size - c->pos);
    return NM_OK;
}

/* ---- buffer ---------------------------------------------------------------------------------- */
void nm_buf_free(nm_buf *b)
{
    nm_free(b->p);
    memset(b, 0, sizeof *b);
}

bool nm_buf_reserve(nm_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (extra <= b->cap - b->size) return true;
    if (extra > SIZE_MAX / 2 - b->size) {
        b->oom = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->size < extra) cap *= 2;
    uint8_t *p = (uint8_t *)nm_realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void nm_buf_bytes(nm_buf *b, const void *p, size_t n)
{
    if (n == 0 || !nm_buf_reserve(b, n)) return;
    memcpy(b->p + b->size, p, n);
    b->size += n;
}

void nm_buf_zeros(nm_buf *b, size_t n)
{
    if (n == 0 || !nm_buf_reserve(b, n)) return;
    memset(b->p + b->size, 0, n);
    b->size += n;
}

static void write_le(nm_buf *b, uint64_t v, size_t n)
{
    uint8_t t[8];
    for (size_t i = 0; i < n; i++) t[i] = (uint8_t)(v >> (8 * i));
    nm_buf_bytes(b, t, n);
}

void nm_buf_u8(nm_buf *b, uint8_t v) { write_le(b, v, 1); }
void nm_buf_u16(nm_buf *b, uint16_t v) { write_le(b, v, 2); }
void nm_buf_u32(nm_buf *b, uint32_t v) { write_le(b, v, 4); }
void nm_buf_u64(nm_buf *b, uint64_t v) { write_le(b, v, 8); }
void nm_buf_i32(nm_buf *b, int32_t v) { write_le(b, (uint32_t)v, 4); }
void nm_buf_i64(nm_buf *b, int64_t v) { write_le(b, (uint64_t)v, 8); }

void nm_buf_f32(nm_buf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    write_le(b, u, 4);
}

void nm_buf_f64(nm_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    write_le(b, u, 8);
}

/* nm_buf_varint when the buffer may have to grow (a copy and a call per varint were a sixth of
 * the tile encoding, so the common case is inline in codec.h). */
void nm_buf_varint_slow(nm_buf *b, uint64_t v)
{
    if (!nm_buf_reserve(b, 10)) return;
    uint8_t *o = b->p + b->size;
    while (v > 0x7f) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    b->size = (size_t)(o - b->p);
}

static void put_le(nm_buf *b, size_t pos, uint64_t v, size_t n)
{
    if (b->oom || pos > b->size || n > b->size - pos) return;
    for (size_t i = 0; i < n; i++) b->p[pos + i] = (uint8_t)(v >> (8 * i));
}

void nm_buf_put_u32(nm_buf *b, size_t pos, uint32_t v) { put_le(b, pos, v, 4); }
void nm_buf_put_u64(nm_buf *b, size_t pos, uint64_t v) { put_le(b, pos, v, 8); }

/* ---- streams ----------------------------------------------------------------------------------- */
void nm_bytes_free(nm_bytes *b)
{
    nm_free(b->p);
    b->p = NULL;
    b->cap = 0;
}

bool nm_bytes_reserve(nm_bytes *b, size_t n)
{
    if (n <= b->cap && b->p) return true;
    uint8_t *p = (uint8_t *)nm_realloc(b->p, n ? n : 1);
    if (!p) return false;
    b->p = p;
    b->cap = n ? n : 1;
    return true;
}

/* One libdeflate decompressor and one compressor per level for each thread: cheap but not free
 * to make (a compressor is hundreds of KB to allocate and fault in, and a bake encodes some 10^5
 * streams), and the pool runs up to NM_WORKER_LIMIT threads at once. Output never depends on
 * them (libdeflate starts every call afresh). A thread's coders are freed when it exits. When
 * the library unloads (the plugin's dlclose, or the process's exit) the key is deleted first: a
 * host thread exiting after a dlclose would otherwise call a destructor whose code is gone. Only
 * the unloading thread's own coders are freed then; another thread may still be decoding (an
 * exit with a plan in flight), so its coders (a decompressor, about 10 KB) are left to it. Like
 * libdeflate's blocks, the record is the C library's memory, outside nm_malloc's accounting. */
#include <pthread.h>
typedef struct coders {
    struct libdeflate_decompressor *d;
    struct libdeflate_compressor *z[13]; /* by level, 1 to 12 */
} coders;
#define NM_CODER_LEVELS (sizeof ((coders *)0)->z / sizeof ((coders *)0)->z[0])
static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_key_ok;

static void coders_free(void *v)
{
    coders *c = (coders *)v;
    if (c->d) libdeflate_free_decompressor(c->d);
    for (size_t k = 0; k < NM_CODER_LEVELS; k++)
        if (c->z[k]) libdeflate_free_compressor(c->z[k]);
    free(c);
}

static void make_key(void) { g_key_ok = pthread_key_create(&g_key, coders_free) == 0; }

__attribute__((destructor)) static void unload(void)
{
    if (!g_key_ok) return;
    coders *c = (coders *)pthread_getspecific(g_key);
    g_key_ok = false;
    pthread_key_delete(g_key);
    if (c) coders_free(c);
}

static coders *thread_coders(void)
{
    pthread_once(&g_once, make_key);
    if (!g_key_ok) return NULL;
    coders *c = (coders *)pthread_getspecific(g_key);
    if (c) return c;
    c = (coders *)calloc(1, sizeof *c);
    if (c && pthread_setspecific(g_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static struct libdeflate_decompressor *thread_decompressor(void)
{
    coders *c = thread_coders();
    if (c && !c->d) c->d = libdeflate_alloc_decompressor();
    return c ? c->d : NULL;
}

static struct libdeflate_compressor *thread_compressor(int level)
{
    coders *c = thread_coders();
    if (c && !c->z[level]) c->z[level] = libdeflate_alloc_compressor(level);
    return c ? c->z[level] : NULL;
}

/* Reads the stream header: varint L (> 0) and the L bytes. */
static int stream_input(nm_cursor *c, const uint8_t **in, size_t *in_n, nm_error *err)
{
    uint64_t len = nm_cur_varint(c);
    if (c->bad) return nm_fail(err, NM_ERR_CORRUPT, "stream length: truncated or overlong varint");
    if (len == 0) return nm_fail(err, NM_ERR_CORRUPT, "stream length is 0");
    if (len > nm_cur_left(c)) {
        c->bad = true;
        return nm_fail(err, NM_ERR_CORRUPT, "stream of %llu bytes runs past the end (%zu left)",
                       (unsigned long long)len, nm_cur_left(c));
    }
    *in = nm_cur_bytes(c, (size_t)len);
    *in_n = (size_t)len;
    return NM_OK;
}

static int inflate_into(const uint8_t *in, size_t in_n, uint8_t *out, size_t avail, size_t *out_n,
                        nm_error *err, bool *too_small)
{
    struct libdeflate_decompressor *d = thread_decompressor();
    if (!d) return nm_fail(err, NM_ERR_NOMEM, "cannot allocate a decompressor");
    size_t used_in = 0;
    *too_small = false;
    enum libdeflate_result r = libdeflate_zlib_decompress_ex(d, in, in_n, out, avail, &used_in, out_n);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
        *too_small = true;
        return NM_ERR_CORRUPT;
    }
    if (r != LIBDEFLATE_SUCCESS) return nm_fail(err, NM_ERR_CORRUPT, "stream is not valid zlib data");
    if (used_in != in_n)
        return nm_fail(err, NM_ERR_CORRUPT, "stream: zlib data ends %zu bytes before its stated length",
                       in_n - used_in);
    return NM_OK;
}

int nm_stream_decode(nm_cursor *c, nm_bytes *out, size_t max_out, size_t *out_n, nm_error *err)
{
    const uint8_t *in = NULL;
    size_t in_n = 0;
    int rc = stream_input(c, &in, &in_n, err);
    if (rc) return rc;
    /* Deflate expands at most ~1032:1; start from a guess and grow. */
    size_t guess = in_n < SIZE_MAX / 4 ? in_n * 4 : in_n;
    if (guess < 4096) guess = 4096;
    if (out->cap > guess) guess = out->cap;
    for (;;) {
        if (guess > max_out) guess = max_out;
        if (!nm_bytes_reserve(out, guess)) return nm_fail(err, NM_ERR_NOMEM, "stream: out of memory");
        bool too_small = false;
        rc = inflate_into(in, in_n, out->p, guess, out_n, err, &too_small);
        if (!too_small) return rc;
        if (guess >= max_out)
            return nm_fail(err, NM_ERR_CORRUPT, "stream inflates to more than %zu bytes", max_out);
        guess = guess > SIZE_MAX / 2 ? SIZE_MAX : guess * 2;
    }
}

int nm_stream_decode_exact(nm_cursor *c, nm_bytes *out, size_t expect_n, nm_error *err)
{
    const uint8_t *in = NULL;
    size_t in_n = 0, got = 0;
    int rc = stream_input(c, &in, &in_n, err);
    if (rc) return rc;
    if (!nm_bytes_reserve(out, expect_n)) return nm_fail(err, NM_ERR_NOMEM, "stream: out of memory");
    bool too_small = false;
    rc = inflate_into(in, in_n, out->p, expect_n, &got, err, &too_small);
    if (too_small)
        return nm_fail(err, NM_ERR_CORRUPT, "stream inflates to more than the expected %zu bytes", expect_n);
    if (rc) return rc;
    if (got != expect_n)
        return nm_fail(err, NM_ERR_CORRUPT, "stream inflates to %zu bytes, expected %zu", got, expect_n);
    return NM_OK;
}

int nm_stream_encode(nm_buf *b, const void *p, size_t n, int level, nm_error *err)
{
    if (level < 1 || level > 12) level = 12;
    struct libdeflate_compressor *z = thread_compressor(level);
    if (!z) return nm_fail(err, NM_ERR_NOMEM, "cannot allocate a compressor");
    size_t bound = libdeflate_zlib_compress_bound(z, n);
    uint8_t *tmp = (uint8_t *)nm_malloc(bound);
    if (!tmp) return nm_fail(err, NM_ERR_NOMEM, "stream: out of memory");
    size_t m = libdeflate_zlib_compress(z, p, n, tmp, bound);
    if (m == 0) {
        nm_free(tmp);
        return nm_fail(err, NM_ERR_STATE, "stream: compression failed");
    }
    nm_buf_varint(b, m);
    nm_buf_bytes(b, tmp, m);
    nm_free(tmp);
    return b->oom ? nm_fail(err, NM_ERR_NOMEM, "stream: out of memory") : NM_OK;
}
