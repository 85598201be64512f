/* pack_internal.h — what the BNAV v5 reader and writer share and nobody else needs: record and
 * header sizes of the byte layouts (design article 主包头与段目录, 几何段, 面属性与离网连接),
 * default chunk lengths and the bound used to refuse counts the input cannot hold. */
#ifndef NM_PACK_INTERNAL_H
#define NM_PACK_INTERNAL_H

#include "pack.h"

#define NM_BNAV_HEADER_SIZE 80u
#define NM_SECTION_ENTRY_SIZE 24u
#define NM_BGEO_HEADER_SIZE 72u
#define NM_BGEO_VERSION 1u
#define NM_CHUNK_ENTRY_SIZE 16u
#define NM_ZONE_PREFIX_SIZE 48u /* 44 bytes + floor_y (v3 on) */
#define NM_BSRF_HEADER_SIZE 16u
#define NM_BSRF_VERSION 1u
#define NM_BSRF_RECORD_SIZE 8u
#define NM_BOML_HEADER_SIZE 16u
#define NM_BOML_V1_RECORD_SIZE 80u
#define NM_BOML_V2_RECORD_SIZE 88u

#define NM_VERTEX_RECORD_SIZE 12u
#define NM_TRI_RECORD_SIZE 36u /* canonical, hashed: v[3], nb[3], component, centre u, v */
#define NM_LINK_RECORD_SIZE 8u
#define NM_TRI_STREAMS 7
#define NM_LINK_STREAMS 2

/* Default records per chunk. A chunk is the unit of parallel decoding and of what a zone load
 * must decode beyond its own range, so it is kept at a few hundred KB of inflated bytes:
 * 16384 vertices = 192 KB, 16384 triangles ~ 100-200 KB of varints, 65536 links ~ 200 KB. */
#define NM_DEFAULT_VERT_CHUNK 16384u
#define NM_DEFAULT_TRI_CHUNK 16384u
#define NM_DEFAULT_LINK_CHUNK 65536u
#define NM_DEFAULT_LEVEL 12

/* 读取路径: triangles are decoded in batches of at most 2^20 records (formulas.md item 5). */
#define NM_TRI_BATCH_RECORDS (1u << 20)

/* Deflate cannot expand more than 1032:1, so a chunk of S stored bytes inflates to at most
 * 1032*S bytes. With each table's minimal inflated bytes per record this bounds the record count
 * a chunk can really hold, so a crafted count cannot make the reader allocate gigabytes. */
#define NM_DEFLATE_MAX_RATIO 1032u
#define NM_VERT_MIN_BYTES 12u /* 12 raw bytes */
#define NM_TRI_MIN_BYTES 3u   /* three varints of streams 0-2 */
#define NM_LINK_MIN_BYTES 2u  /* one varint in each stream */

/* Largest inflated size of a varint stream holding n values (10 bytes each at most). */
static inline size_t nm_varint_stream_cap(size_t n) { return n * 10u + 16u; }

/* Canonical bytes of one triangle as hashed in build_hash (36 bytes, little-endian). */
void nm_pack_tri_record(const nm_vertex *verts, const nm_tri *t, uint32_t component,
                        uint8_t out[NM_TRI_RECORD_SIZE]);
void nm_pack_vertex_record(const nm_vertex *v, uint8_t out[NM_VERTEX_RECORD_SIZE]);
void nm_pack_link_record(const nm_link *l, uint8_t out[NM_LINK_RECORD_SIZE]);
/* Centre of the triangle with vertices a, b, c: ((a+b)+c)/3 in float, the order matters. */
void nm_pack_centre(const nm_vertex *verts, const nm_tri *t, float *cu, float *cv);

/* Runs fn over chunks [0, n) on `workers` threads (nm_parallel_chunks). Workers run without an
 * error record; when a chunk fails, the first failing chunk (in chunk order) is run again on the
 * calling thread with err, so the message is the same for any worker count. */
typedef int (*nm_pack_chunk_fn)(void *ctx, size_t chunk, nm_error *err);
int nm_pack_run_chunks(size_t n, int workers, nm_pack_chunk_fn fn, void *ctx, nm_error *err);
/* Worker count: an explicit request (1..4) is honoured; <= 0 picks by record count. */
int nm_pack_workers(int requested, size_t records);

static inline void nm_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
