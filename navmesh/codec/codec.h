/* codec.h — the encodings every pack shares (design article 数据包 / 公共编码):
 * a bounds-checked little-endian cursor (the only way any reader touches file bytes), a growable
 * output buffer for writers, unsigned LEB128 varints, zigzag, FNV-1a 64, "streams" (varint
 * compressed length + zlib data, inflated with libdeflate) and whole files (gzip when the name
 * ends in ".gz", raw otherwise). */
#ifndef NM_CODEC_H
#define NM_CODEC_H

#include "../base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading: the cursor ----------------------------------------------------------------------
 * A view of [p, p + size). Every read checks the bounds; a failed read sets `bad`, reads as 0 and
 * leaves pos unchanged, so a parser can read a whole header and check `bad` once. */
typedef struct nm_cursor {
    const uint8_t *p;
    size_t size;
    size_t pos;
    bool bad;
} nm_cursor;

nm_cursor nm_cur(const void *p, size_t size);
static inline size_t nm_cur_left(const nm_cursor *c) { return c->size - c->pos; }
bool nm_cur_skip(nm_cursor *c, size_t n);
bool nm_cur_seek(nm_cursor *c, size_t pos);              /* pos <= size */
/* A sub-cursor over the next n bytes (consumed from c); bad (and empty) if fewer are left. */
nm_cursor nm_cur_sub(nm_cursor *c, size_t n);
/* A cursor over [off, off + n) of c's bytes, independent of c's position; bad if out of range. */
nm_cursor nm_cur_slice(const nm_cursor *c, uint64_t off, uint64_t n);
const uint8_t *nm_cur_bytes(nm_cursor *c, size_t n);     /* NULL and bad if fewer are left */
uint8_t nm_cur_u8(nm_cursor *c);
uint16_t nm_cur_u16(nm_cursor *c);
uint32_t nm_cur_u32(nm_cursor *c);
uint64_t nm_cur_u64(nm_cursor *c);
int32_t nm_cur_i32(nm_cursor *c);
int64_t nm_cur_i64(nm_cursor *c);
float nm_cur_f32(nm_cursor *c);
double nm_cur_f64(nm_cursor *c);
/* Unsigned LEB128: 7 bits a byte, low group first, 0x80 = more. More than 10 bytes or a value
 * needing a shift past 63 bits is corrupt (sets bad). The one-byte case (most values of the
 * packs' streams) inline, the rest out of line. */
uint64_t nm_cur_varint_long(nm_cursor *c);
static inline uint64_t nm_cur_varint(nm_cursor *c)
{
    if (!c->bad && c->pos < c->size && c->p[c->pos] < 0x80) return c->p[c->pos++];
    return nm_cur_varint_long(c);
}
/* A varint that must fit in 32 bits (bad otherwise). */
uint32_t nm_cur_varint32(nm_cursor *c);

static inline int64_t nm_unzig(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }
static inline uint64_t nm_zig(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* ---- writing: the buffer ----------------------------------------------------------------------
 * Growable byte buffer. An allocation failure sets `oom`; later writes are ignored, so a writer
 * checks `oom` once at the end. */
typedef struct nm_buf {
    uint8_t *p;
    size_t size;
    size_t cap;
    bool oom;
} nm_buf;

void nm_buf_free(nm_buf *b);
bool nm_buf_reserve(nm_buf *b, size_t extra);
void nm_buf_bytes(nm_buf *b, const void *p, size_t n);
void nm_buf_zeros(nm_buf *b, size_t n);
void nm_buf_u8(nm_buf *b, uint8_t v);
void nm_buf_u16(nm_buf *b, uint16_t v);
void nm_buf_u32(nm_buf *b, uint32_t v);
void nm_buf_u64(nm_buf *b, uint64_t v);
void nm_buf_i32(nm_buf *b, int32_t v);
void nm_buf_i64(nm_buf *b, int64_t v);
void nm_buf_f32(nm_buf *b, float v);
void nm_buf_f64(nm_buf *b, double v);
void nm_buf_varint_slow(nm_buf *b, uint64_t v);
/* LEB128 varint; inline, for the grid encoders write one per record and field. */
static inline void nm_buf_varint(nm_buf *b, uint64_t v)
{
    if (b->oom || b->cap - b->size < 10) {
        nm_buf_varint_slow(b, v);
        return;
    }
    uint8_t *o = b->p + b->size;
    while (v > 0x7f) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    b->size = (size_t)(o - b->p);
}
/* Overwrite already-written bytes at pos (pos + width <= size). */
void nm_buf_put_u32(nm_buf *b, size_t pos, uint32_t v);
void nm_buf_put_u64(nm_buf *b, size_t pos, uint64_t v);

/* ---- FNV-1a 64 ------------------------------------------------------------------------------- */
#define NM_FNV_OFFSET 14695981039346656037ull
#define NM_FNV_PRIME 1099511628211ull
static inline uint64_t nm_fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *s = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * NM_FNV_PRIME;
    return h;
}

/* ---- streams: varint compressed length + zlib-wrapped deflate --------------------------------
 * Decoding reads the varint length L (L = 0 is corrupt) and the next L bytes from c; they must
 * hold exactly one zlib stream that ends at byte L (anything left over, either way, is corrupt).
 * The inflated bytes go to `out` (reused between calls; grown as needed, up to max_out bytes,
 * beyond which the stream is corrupt). *out_n receives the inflated size. The caller then parses
 * the bytes with a cursor and must use them up exactly (nm_cur_done). */
typedef struct nm_bytes {
    uint8_t *p;
    size_t cap;
} nm_bytes;
void nm_bytes_free(nm_bytes *b);
bool nm_bytes_reserve(nm_bytes *b, size_t n);

int nm_stream_decode(nm_cursor *c, nm_bytes *out, size_t max_out, size_t *out_n, nm_error *err);
/* The same when the exact inflated size is known: anything else is corrupt. */
int nm_stream_decode_exact(nm_cursor *c, nm_bytes *out, size_t expect_n, nm_error *err);
/* Appends varint(length) + zlib(p[0..n)) at the given libdeflate level (1..12; the grid and sidecar use NM_GRID_LEVEL, the geometry 12). */
int nm_stream_encode(nm_buf *b, const void *p, size_t n, int level, nm_error *err);

/* Corrupt unless c is unbroken and used up exactly; names `what` in the message. */
int nm_cur_done(const nm_cursor *c, const char *what, nm_error *err);

/* ---- files ----------------------------------------------------------------------------------
 * Reads a whole file into a new heap buffer (free with nm_free). Names ending in ".gz" are read
 * through zlib's gz reader (which also takes an uncompressed file and concatenated members), in
 * 4 MiB heap chunks, with the gzip ISIZE trailer used to reserve the buffer; other names raw.
 * max_size bounds the decompressed size (0 = 4 GiB). */
int nm_file_read(const char *path, size_t max_size, uint8_t **data, size_t *size, nm_error *err);
/* Writes a whole file: gzip (deterministic header, mtime 0) when the name ends in ".gz", raw
 * otherwise. Writes to "path.tmp" and renames, so a failed write never leaves a half file. */
int nm_file_write(const char *path, const void *data, size_t size, nm_error *err);
bool nm_path_has_suffix(const char *path, const char *suffix);

#ifdef __cplusplus
}
#endif
#endif
