/* pack_fixture.h — hand-built main packs for the pack tests and the fuzz seed generator: several
 * zones (one a tier zone, two sharing a name), BSRF, BOML v2, an unknown extra section and a fake
 * BGRD section; plus an independent expectation of what a zone-scoped load must return, a
 * field-by-field comparison, and a file patcher that swaps section or chunk bytes of a serialised
 * pack (rebuilding the directory) so tests can plant precise faults. */
#ifndef PACK_FIXTURE_H
#define PACK_FIXTURE_H

#include "pack/pack.h"

/* Fills p (all arrays owned by p; free with nm_pack_free). `scale` multiplies the table sizes. */
void fx_build(nm_pack *p, uint32_t seed, uint32_t scale);
/* The pack a zone load of `zone` must give (computed from the whole pack by the rules, not by
 * the reader's code). Returns false when the zone is unknown. */
bool fx_expect_zone(const nm_pack *whole, const char *zone, nm_pack *out);
/* Field-by-field comparison; on difference writes what differs into why (if not NULL). Compares
 * sections by tag, flags and bytes (only sections that carry bytes). */
bool fx_pack_equal(const nm_pack *a, const nm_pack *b, char *why, size_t why_n);

/* A serialised pack split into its sections, so a test can change one and join them again. */
typedef struct fx_file {
    uint8_t header[80];
    uint32_t count;
    struct { char tag[4]; uint32_t flags; uint8_t *bytes; size_t size; } sec[16];
} fx_file;
bool fx_split(const uint8_t *data, size_t size, fx_file *f);
void fx_join(const fx_file *f, nm_buf *out); /* header + directory + sections, offsets rewritten */
void fx_file_free(fx_file *f);
int fx_find(const fx_file *f, const char *tag); /* first section with this tag, or -1 */
/* Replaces chunk `chunk` of BGEO table `table` (0 vertices, 1 triangles, 2 links) with the given
 * bytes: they are appended to BGEO and the chunk's directory entry pointed at them. */
bool fx_replace_chunk(fx_file *f, int table, size_t chunk, const void *bytes, size_t n);
/* Offset inside BGEO of chunk directory `table` (for reading entries). */
uint64_t fx_chunk_dir(const fx_file *f, int table);

static inline void fx_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void fx_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t fx_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t fx_get64(const uint8_t *p) { return fx_get32(p) | (uint64_t)fx_get32(p + 4) << 32; }
static inline void fx_put64(uint8_t *p, uint64_t v)
{
    fx_put32(p, (uint32_t)v);
    fx_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
