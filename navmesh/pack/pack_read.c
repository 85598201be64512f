/* pack_read.c — reads the main pack BNAV v5 (design article 数据包: 主包头与段目录, 几何段,
 * 面属性与离网连接, 读取路径). Two paths: the whole pack (zone table, vertex chunks, triangle
 * chunks in batches with recomputed centres, link chunks, streamed build_hash checked against the
 * header) and one zone (its triangle chunks first to learn the vertex range, then only the vertex
 * chunks in range, then the window of link chunks found by aux and a binary search on source; all
 * indices relabelled zone-local). Every byte is read through nm_cursor; counts are bounded by what
 * the input can hold before anything is allocated; every failure names file, section, chunk,
 * stream and field. */
#include "pack_internal.h"

#include <string.h>

/* One chunked table of BGEO (vertices, triangles or links). */
typedef struct chunk_table {
    const char *what;        /* "vertex", "triangle", "link" (for messages) */
    uint32_t total, len;     /* records, records per chunk (块长) */
    size_t chunks;
    uint64_t *off;           /* per chunk, relative to BGEO */
    uint32_t *size, *aux;
} chunk_table;

typedef struct reader {
    const char *name;
    nm_cursor file;
    uint32_t zone_count, vert_count, tri_count, link_count;
    nm_cursor geo;           /* the BGEO section in use (last entry wins) */
    nm_cursor zone_table;    /* its zone table bytes (hashed whole) */
    chunk_table tv, tt, tl;
    int workers;
    /* Inflate buffers per worker, reused from chunk to chunk: nm_parallel_chunks hands job j to
     * worker j % workers, so a job's slot is never in use by another thread. */
    nm_bytes scratch[NM_WORKER_LIMIT][3];
} reader;

static nm_bytes *scratch_of(reader *r, size_t job) { return r->scratch[job % (size_t)r->workers]; }

static uint32_t records_of(const chunk_table *t, size_t c)
{
    uint64_t lo = (uint64_t)c * t->len, hi = lo + t->len;
    if (hi > t->total) hi = t->total;
    return (uint32_t)(hi - lo);
}

static void table_free(chunk_table *t)
{
    nm_free(t->off);
    nm_free(t->size);
    nm_free(t->aux);
    t->off = NULL;
    t->size = t->aux = NULL;
}

/* A varint added to a running value that must stay in [0, limit). */
static bool step_in_range(int64_t *run, int64_t delta, uint64_t limit)
{
    if (delta > (int64_t)1 << 40 || delta < -((int64_t)1 << 40)) return false;
    int64_t v = *run + delta;
    if (v < 0 || (uint64_t)v >= limit) return false;
    *run = v;
    return true;
}

/* ---- 主包头与段目录: header and section directory ---------------------------------------- */
static int read_header(reader *r, nm_pack *p, uint64_t *dir_off, nm_error *err)
{
    nm_cursor c = r->file;
    const uint8_t *magic = nm_cur_bytes(&c, 4);
    if (!magic) return nm_fail(err, NM_ERR_CORRUPT, "header: %zu bytes, too short for a BNAV header", c.size);
    if (memcmp(magic, "BNAV", 4) != 0)
        return nm_fail(err, NM_ERR_CORRUPT, "header: bad magic (not a BNAV main pack)");
    p->version = nm_cur_u16(&c);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "header: truncated at version");
    if (p->version != NM_BNAV_VERSION)
        return nm_fail(err, NM_ERR_CORRUPT,
                       "header: version %u not supported (this reader reads BNAV v5; v4 and older keep "
                       "geometry outside BGEO and must be re-baked)", p->version);
    if (r->file.size < NM_BNAV_HEADER_SIZE)
        return nm_fail(err, NM_ERR_CORRUPT, "header: truncated (%zu of %u bytes)", r->file.size,
                       NM_BNAV_HEADER_SIZE);
    p->flags = nm_cur_u16(&c);
    r->zone_count = nm_cur_u32(&c);
    r->vert_count = nm_cur_u32(&c);
    r->tri_count = nm_cur_u32(&c);
    r->link_count = nm_cur_u32(&c);
    nm_cur_skip(&c, 32); /* legacy table offsets: obsolete since v5, never read */
    p->build_hash = nm_cur_u64(&c);
    *dir_off = nm_cur_u64(&c);
    p->section_count = nm_cur_u32(&c);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "header: truncated");
    if (r->link_count == 0) return nm_fail(err, NM_ERR_CORRUPT, "header: link count is 0");
    if (r->tri_count > (uint32_t)INT32_MAX)
        return nm_fail(err, NM_ERR_CORRUPT, "header: triangle count %u too large", r->tri_count);
    return NM_OK;
}

static int read_directory(reader *r, nm_pack *p, uint64_t dir_off, nm_error *err)
{
    nm_cursor d = nm_cur_slice(&r->file, dir_off, (uint64_t)p->section_count * NM_SECTION_ENTRY_SIZE);
    if (d.bad)
        return nm_fail(err, NM_ERR_CORRUPT, "section directory: %u entries at offset %llu run past the "
                       "end of the file (%zu bytes)", p->section_count, (unsigned long long)dir_off,
                       r->file.size);
    p->sections = (nm_section *)nm_calloc(p->section_count ? p->section_count : 1, sizeof *p->sections);
    if (!p->sections) return nm_fail(err, NM_ERR_NOMEM, "section directory: out of memory");
    for (uint32_t i = 0; i < p->section_count; i++) {
        nm_section *s = &p->sections[i];
        memcpy(s->tag, nm_cur_bytes(&d, 4), 4);
        s->flags = nm_cur_u32(&d);
        s->offset = nm_cur_u64(&d);
        s->size = nm_cur_u64(&d);
        /* Every entry, unknown tags included, must lie inside the file. */
        if (s->offset > r->file.size || s->size > r->file.size - s->offset)
            return nm_fail(err, NM_ERR_CORRUPT, "section directory: entry %u (%.4s): [%llu, +%llu) "
                           "outside the file (%zu bytes)", i, s->tag, (unsigned long long)s->offset,
                           (unsigned long long)s->size, r->file.size);
    }
    return NM_OK;
}

/* ---- 几何段: BGEO header, chunk directories, zone table ------------------------------------ */
static int read_chunk_dir(reader *r, chunk_table *t, uint64_t dir, uint32_t min_bytes, nm_error *err)
{
    if (t->len == 0) return nm_fail(err, NM_ERR_CORRUPT, "%s chunk length is 0", t->what);
    t->chunks = t->total ? ((size_t)t->total + t->len - 1) / t->len : 0;
    nm_cursor d = nm_cur_slice(&r->geo, dir, (uint64_t)t->chunks * NM_CHUNK_ENTRY_SIZE);
    if (d.bad)
        return nm_fail(err, NM_ERR_CORRUPT, "%s chunk directory: %zu entries at offset %llu run past "
                       "the section end", t->what, t->chunks, (unsigned long long)dir);
    size_t n = t->chunks ? t->chunks : 1;
    t->off = (uint64_t *)nm_calloc(n, sizeof *t->off);
    t->size = (uint32_t *)nm_calloc(n, sizeof *t->size);
    t->aux = (uint32_t *)nm_calloc(n, sizeof *t->aux);
    if (!t->off || !t->size || !t->aux) return nm_fail(err, NM_ERR_NOMEM, "%s chunk directory: out of memory", t->what);
    uint64_t sum = 0;
    for (size_t c = 0; c < t->chunks; c++) {
        t->off[c] = nm_cur_u64(&d);
        t->size[c] = nm_cur_u32(&d);
        t->aux[c] = nm_cur_u32(&d);
        if (t->off[c] > r->geo.size || t->size[c] > r->geo.size - t->off[c])
            return nm_fail(err, NM_ERR_CORRUPT, "%s chunk %zu: [%llu, +%u) outside the section (%zu bytes)",
                           t->what, c, (unsigned long long)t->off[c], t->size[c], r->geo.size);
        /* The records a chunk claims must fit what its bytes can inflate to. */
        if ((uint64_t)records_of(t, c) * min_bytes > (uint64_t)t->size[c] * NM_DEFLATE_MAX_RATIO)
            return nm_fail(err, NM_ERR_CORRUPT, "%s chunk %zu: %u records cannot fit in %u bytes",
                           t->what, c, records_of(t, c), t->size[c]);
        /* Chunks do not share bytes, so together they fit the section; this keeps the records
         * (and what we allocate for them) linear in the input size. */
        sum += t->size[c];
        if (sum > r->geo.size)
            return nm_fail(err, NM_ERR_CORRUPT, "%s chunks 0..%zu hold more bytes than the section (%zu)",
                           t->what, c, r->geo.size);
    }
    return NM_OK;
}

static int read_bgeo_header(reader *r, const nm_section *s, nm_error *err)
{
    r->geo = nm_cur_slice(&r->file, s->offset, s->size);
    nm_cursor c = r->geo;
    const uint8_t *tag = nm_cur_bytes(&c, 4);
    uint32_t version = nm_cur_u32(&c);
    r->tv.total = nm_cur_u32(&c);
    r->tt.total = nm_cur_u32(&c);
    r->tl.total = nm_cur_u32(&c);
    r->tv.len = nm_cur_u32(&c);
    r->tt.len = nm_cur_u32(&c);
    r->tl.len = nm_cur_u32(&c);
    uint32_t zt_size = nm_cur_u32(&c);
    nm_cur_skip(&c, 4); /* reserved */
    uint64_t vdir = nm_cur_u64(&c), tdir = nm_cur_u64(&c), ldir = nm_cur_u64(&c), zt_off = nm_cur_u64(&c);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "header: truncated (%zu of %u bytes)", r->geo.size, NM_BGEO_HEADER_SIZE);
    if (memcmp(tag, "BGEO", 4) != 0) return nm_fail(err, NM_ERR_CORRUPT, "header: bad tag");
    if (version != NM_BGEO_VERSION) return nm_fail(err, NM_ERR_CORRUPT, "header: version %u, expected 1", version);
    if (r->tv.total != r->vert_count || r->tt.total != r->tri_count || r->tl.total != r->link_count)
        return nm_fail(err, NM_ERR_CORRUPT, "header: totals (vertices %u, triangles %u, links %u) differ "
                       "from the BNAV header (%u, %u, %u)", r->tv.total, r->tt.total, r->tl.total,
                       r->vert_count, r->tri_count, r->link_count);
    r->zone_table = nm_cur_slice(&r->geo, zt_off, zt_size);
    if (r->zone_table.bad)
        return nm_fail(err, NM_ERR_CORRUPT, "zone table: [%llu, +%u) outside the section",
                       (unsigned long long)zt_off, zt_size);
    int rc = read_chunk_dir(r, &r->tv, vdir, NM_VERT_MIN_BYTES, err);
    if (!rc) rc = read_chunk_dir(r, &r->tt, tdir, NM_TRI_MIN_BYTES, err);
    if (!rc) rc = read_chunk_dir(r, &r->tl, ldir, NM_LINK_MIN_BYTES, err);
    return rc;
}

static int read_zone_table(reader *r, nm_pack *p, nm_error *err)
{
    nm_cursor c = r->zone_table;
    if ((uint64_t)r->zone_count * NM_ZONE_PREFIX_SIZE > c.size)
        return nm_fail(err, NM_ERR_CORRUPT, "zone table: %u zones cannot fit in %zu bytes", r->zone_count, c.size);
    p->zones = (nm_zone *)nm_calloc(r->zone_count ? r->zone_count : 1, sizeof *p->zones);
    if (!p->zones) return nm_fail(err, NM_ERR_NOMEM, "zone table: out of memory");
    uint8_t *seen = (uint8_t *)nm_calloc(65536 / 8, 1);
    if (!seen) return nm_fail(err, NM_ERR_NOMEM, "zone table: out of memory");
    int rc = NM_OK;
    for (uint32_t i = 0; i < r->zone_count && !rc; i++) {
        nm_zone *z = &p->zones[i];
        z->id = nm_cur_u16(&c);
        z->flags = nm_cur_u16(&c);
        z->name_len = nm_cur_u32(&c);
        z->first_tri = nm_cur_u32(&c);
        z->tri_count = nm_cur_u32(&c);
        z->component_count = nm_cur_u32(&c);
        z->width = nm_cur_f32(&c);
        z->height = nm_cur_f32(&c);
        for (int k = 0; k < 4; k++) z->t[k] = nm_cur_f32(&c);
        z->floor_y = nm_cur_f32(&c);
        const uint8_t *name = c.bad ? NULL : nm_cur_bytes(&c, z->name_len);
        p->zone_count = i + 1; /* so nm_pack_free sees the names allocated so far */
        if (!name) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "zone table: zone %u: truncated", i);
            break;
        }
        z->name = (char *)nm_malloc((size_t)z->name_len + 1);
        if (!z->name) {
            rc = nm_fail(err, NM_ERR_NOMEM, "zone table: out of memory");
            break;
        }
        memcpy(z->name, name, z->name_len);
        z->name[z->name_len] = 0;
        if ((uint64_t)z->first_tri + z->tri_count > r->tri_count)
            rc = nm_fail(err, NM_ERR_CORRUPT, "zone table: zone %u '%s': triangles [%u, +%u) past "
                         "triangle count %u", i, z->name, z->first_tri, z->tri_count, r->tri_count);
        else if ((z->flags & NM_ZONE_FLAG_TIER) && z->tri_count)
            rc = nm_fail(err, NM_ERR_CORRUPT, "zone table: zone %u '%s': tier zone with %u triangles",
                         i, z->name, z->tri_count);
        else if (seen[z->id >> 3] & (1u << (z->id & 7)))
            rc = nm_fail(err, NM_ERR_CORRUPT, "zone table: zone %u '%s': duplicate zone id %u", i,
                         z->name, z->id);
        seen[z->id >> 3] |= (uint8_t)(1u << (z->id & 7));
    }
    nm_free(seen);
    return rc;
}

/* ---- chunk decoders (each chunk alone: its deltas restart at 0) ---------------------------- */
typedef struct dec_ctx {
    reader *r;
    size_t first;            /* chunk index of job 0 */
    const size_t *list;      /* or: explicit chunk indices (links of a zone), NULL = consecutive */
    nm_vertex *verts;        /* output for the job's records, from record out_base on */
    nm_tri *tris;
    uint32_t *comps;
    nm_link *links;
    uint64_t out_base;       /* global index of output element 0 */
    const uint64_t *out_at;  /* with list: output position of each listed chunk */
} dec_ctx;

static size_t job_chunk(const dec_ctx *d, size_t job) { return d->list ? d->list[job] : d->first + job; }

static int stream_fail(int rc, nm_error *err, int k)
{
    nm_error_prefix(err, "stream %d", k);
    return rc;
}

static int dec_vert_chunk(void *arg, size_t job, nm_error *err)
{
    dec_ctx *d = (dec_ctx *)arg;
    const chunk_table *t = &d->r->tv;
    size_t c = job_chunk(d, job);
    uint32_t n = records_of(t, c);
    nm_cursor cc = nm_cur_slice(&d->r->geo, t->off[c], t->size[c]);
    nm_bytes *sb = scratch_of(d->r, job), b = sb[0];
    int rc = nm_stream_decode_exact(&cc, &b, (size_t)n * NM_VERTEX_RECORD_SIZE, err);
    if (rc) rc = stream_fail(rc, err, 0);
    if (!rc) rc = nm_cur_done(&cc, "chunk bytes after the last stream", err);
    if (!rc) {
        nm_vertex *out = d->verts + ((uint64_t)c * t->len - d->out_base);
        for (uint32_t i = 0; i < n; i++) {
            uint8_t rec[NM_VERTEX_RECORD_SIZE];
            for (uint32_t j = 0; j < NM_VERTEX_RECORD_SIZE; j++) rec[j] = b.p[(size_t)j * n + i];
            nm_cursor rc_ = nm_cur(rec, sizeof rec);
            out[i].u = nm_cur_f32(&rc_);
            out[i].v = nm_cur_f32(&rc_);
            out[i].h = nm_cur_f32(&rc_);
        }
    }
    sb[0] = b;
    if (rc) nm_error_prefix(err, "vertex chunk %zu", c);
    return rc;
}

/* Triangle chunk: 7 streams (几何段). Vertex ids are checked against the vertex count,
 * neighbour ids against the triangle count, component ids must fit 32 bits. */
static int dec_tri_chunk_streams(reader *r, size_t c, nm_cursor *cc, nm_tri *out, uint32_t *comp,
                                 nm_bytes *b, nm_bytes *bm, nm_bytes *vals, nm_error *err)
{
    const chunk_table *t = &r->tt;
    uint32_t n = records_of(t, c);
    uint64_t g0 = (uint64_t)c * t->len;
    size_t got = 0;
    int rc;
    /* Streams 0-2: v0 as a running zigzag delta, v1 and v2 as zigzag offsets from v0. */
    for (int k = 0; k < 3; k++) {
        if ((rc = nm_stream_decode(cc, b, nm_varint_stream_cap(n), &got, err))) return stream_fail(rc, err, k);
        nm_cursor s = nm_cur(b->p, got);
        int64_t run = 0;
        for (uint32_t i = 0; i < n; i++) {
            int64_t d = nm_unzig(nm_cur_varint(&s));
            if (s.bad)
                return nm_fail(err, NM_ERR_CORRUPT, "stream %d: triangle %u: truncated or overlong varint", k, i);
            if (k > 0) run = out[i].v[0];
            if (!step_in_range(&run, d, r->vert_count))
                return nm_fail(err, NM_ERR_CORRUPT, "stream %d: triangle %llu: vertex %lld not below vertex count %u",
                               k, (unsigned long long)(g0 + i), (long long)(run + d), r->vert_count);
            out[i].v[k] = (uint32_t)run;
        }
        if ((rc = nm_cur_done(&s, k == 0 ? "stream 0" : k == 1 ? "stream 1" : "stream 2", err))) return rc;
    }
    /* Stream 3: neighbour-present bitmap, 3 bits per triangle, MSB first; padding bits zero. */
    size_t bm_n = ((size_t)n * 3 + 7) / 8;
    if ((rc = nm_stream_decode_exact(cc, bm, bm_n, err))) return stream_fail(rc, err, 3);
    if ((n * 3) % 8 && (bm->p[bm_n - 1] & (0xFFu >> ((n * 3) % 8))))
        return nm_fail(err, NM_ERR_CORRUPT, "stream 3: padding bits after the last triangle are set");
    size_t present = 0;
    for (size_t i = 0; i < bm_n; i++) present += (size_t)__builtin_popcount(bm->p[i]);
    /* Stream 4: present neighbours as zigzag deltas from the triangle's own global index. */
    if ((rc = nm_stream_decode(cc, b, nm_varint_stream_cap(present), &got, err))) return stream_fail(rc, err, 4);
    nm_cursor s4 = nm_cur(b->p, got);
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            size_t bit = (size_t)i * 3 + (size_t)k;
            out[i].nb[k] = -1;
            if (!(bm->p[bit / 8] & (0x80u >> (bit % 8)))) continue;
            int64_t d = nm_unzig(nm_cur_varint(&s4)), nb = (int64_t)(g0 + i);
            if (s4.bad)
                return nm_fail(err, NM_ERR_CORRUPT, "stream 4: triangle %llu: truncated or overlong varint",
                               (unsigned long long)(g0 + i));
            if (!step_in_range(&nb, d, r->tri_count))
                return nm_fail(err, NM_ERR_CORRUPT, "stream 4: triangle %llu: neighbour %lld not below "
                               "triangle count %u", (unsigned long long)(g0 + i), (long long)(nb + d), r->tri_count);
            out[i].nb[k] = (int32_t)nb;
        }
    }
    if ((rc = nm_cur_done(&s4, "stream 4", err))) return rc;
    /* Streams 5-6: component ids as runs (value: running zigzag delta; length >= 1). */
    size_t got5 = 0;
    if ((rc = nm_stream_decode(cc, vals, nm_varint_stream_cap(n), &got5, err))) return stream_fail(rc, err, 5);
    if ((rc = nm_stream_decode(cc, b, nm_varint_stream_cap(n), &got, err))) return stream_fail(rc, err, 6);
    nm_cursor s5 = nm_cur(vals->p, got5), s6 = nm_cur(b->p, got);
    int64_t value = 0;
    for (uint32_t i = 0; i < n;) {
        uint64_t len = nm_cur_varint(&s6);
        if (s6.bad) return nm_fail(err, NM_ERR_CORRUPT, "stream 6: runs end at triangle %u of %u", i, n);
        if (len == 0 || len > n - i)
            return nm_fail(err, NM_ERR_CORRUPT, "stream 6: run length %llu at triangle %u (1..%u allowed)",
                           (unsigned long long)len, i, n - i);
        int64_t d = nm_unzig(nm_cur_varint(&s5));
        if (s5.bad) return nm_fail(err, NM_ERR_CORRUPT, "stream 5: fewer component values than runs");
        if (!step_in_range(&value, d, (uint64_t)1 << 32))
            return nm_fail(err, NM_ERR_CORRUPT, "stream 5: component id out of 32-bit range");
        for (uint64_t j = 0; j < len; j++) comp[i++] = (uint32_t)value;
    }
    if ((rc = nm_cur_done(&s5, "stream 5", err))) return rc;
    if ((rc = nm_cur_done(&s6, "stream 6", err))) return rc;
    return nm_cur_done(cc, "chunk bytes after the last stream", err);
}

static int dec_tri_chunk(void *arg, size_t job, nm_error *err)
{
    dec_ctx *d = (dec_ctx *)arg;
    const chunk_table *t = &d->r->tt;
    size_t c = job_chunk(d, job);
    uint64_t at = (uint64_t)c * t->len - d->out_base;
    nm_cursor cc = nm_cur_slice(&d->r->geo, t->off[c], t->size[c]);
    nm_bytes *sb = scratch_of(d->r, job);
    int rc = dec_tri_chunk_streams(d->r, c, &cc, d->tris + at, d->comps + at, &sb[0], &sb[1], &sb[2], err);
    if (rc) nm_error_prefix(err, "triangle chunk %zu", c);
    return rc;
}

/* Link chunk: sources (first absolute, then unsigned steps), targets zigzag from source. The
 * chunk's aux must be its first source: zone loads skip chunks by it. */
static int dec_link_chunk(void *arg, size_t job, nm_error *err)
{
    dec_ctx *d = (dec_ctx *)arg;
    const chunk_table *t = &d->r->tl;
    size_t c = job_chunk(d, job);
    uint32_t n = records_of(t, c);
    nm_link *out = d->links + (d->out_at ? d->out_at[job] : (uint64_t)c * t->len - d->out_base);
    nm_cursor cc = nm_cur_slice(&d->r->geo, t->off[c], t->size[c]);
    nm_bytes *sb = scratch_of(d->r, job), b = sb[0];
    size_t got = 0;
    int rc = nm_stream_decode(&cc, &b, nm_varint_stream_cap(n), &got, err);
    if (rc) rc = stream_fail(rc, err, 0);
    nm_cursor s = nm_cur(b.p, got);
    int64_t src = 0;
    for (uint32_t i = 0; !rc && i < n; i++) {
        uint64_t u = nm_cur_varint(&s);
        if (s.bad) rc = nm_fail(err, NM_ERR_CORRUPT, "stream 0: link %u: truncated or overlong varint", i);
        else if (u > UINT32_MAX || !step_in_range(&src, (int64_t)u, (uint64_t)1 << 32))
            rc = nm_fail(err, NM_ERR_CORRUPT, "stream 0: link %u: source past 32 bits", i);
        else out[i].src = (uint32_t)src;
    }
    if (!rc) rc = nm_cur_done(&s, "stream 0", err);
    if (!rc && n && out[0].src != t->aux[c])
        rc = nm_fail(err, NM_ERR_CORRUPT, "aux %u is not the first source %u", t->aux[c], out[0].src);
    if (!rc && (rc = nm_stream_decode(&cc, &b, nm_varint_stream_cap(n), &got, err))) rc = stream_fail(rc, err, 1);
    s = nm_cur(b.p, got);
    for (uint32_t i = 0; !rc && i < n; i++) {
        int64_t dst = out[i].src, dd = nm_unzig(nm_cur_varint(&s));
        if (s.bad) rc = nm_fail(err, NM_ERR_CORRUPT, "stream 1: link %u: truncated or overlong varint", i);
        else if (!step_in_range(&dst, dd, (uint64_t)1 << 32))
            rc = nm_fail(err, NM_ERR_CORRUPT, "stream 1: link %u: target out of 32-bit range", i);
        else out[i].dst = (uint32_t)dst;
    }
    if (!rc) rc = nm_cur_done(&s, "stream 1", err);
    if (!rc) rc = nm_cur_done(&cc, "chunk bytes after the last stream", err);
    sb[0] = b;
    if (rc) nm_error_prefix(err, "link chunk %zu", c);
    return rc;
}

/* ---- 读取路径 / 整包: the whole pack ----------------------------------------------------------- */
static int load_whole(reader *r, nm_pack *p, nm_error *err)
{
    uint64_t h = nm_fnv1a(NM_FNV_OFFSET, r->zone_table.p, r->zone_table.size);
    uint8_t rec[NM_TRI_RECORD_SIZE];
    int rc;
    /* Vertices first: the triangle centres hashed below need them. */
    p->vert_count = r->vert_count;
    p->verts = (nm_vertex *)nm_calloc(r->vert_count ? r->vert_count : 1, sizeof *p->verts);
    if (!p->verts) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %u vertices", r->vert_count);
    dec_ctx dv = {.r = r, .verts = p->verts};
    if ((rc = nm_pack_run_chunks(r->tv.chunks, r->workers, dec_vert_chunk, &dv, err))) return rc;
    for (uint32_t i = 0; i < p->vert_count; i++) {
        nm_pack_vertex_record(&p->verts[i], rec);
        h = nm_fnv1a(h, rec, NM_VERTEX_RECORD_SIZE);
    }

    /* Triangles in batches of at most 2^20 records (or fewer chunks than workers), each batch's
     * chunks decoded in parallel, then hashed in order with the centres recomputed. */
    p->tri_count = r->tri_count;
    p->tris = (nm_tri *)nm_calloc(r->tri_count ? r->tri_count : 1, sizeof *p->tris);
    p->components = (uint32_t *)nm_calloc(r->tri_count ? r->tri_count : 1, sizeof *p->components);
    if (!p->tris || !p->components) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %u triangles", r->tri_count);
    for (size_t c = 0; c < r->tt.chunks;) {
        size_t e = c;
        uint64_t recs = 0;
        do recs += records_of(&r->tt, e++);
        while (e < r->tt.chunks &&
               (recs + records_of(&r->tt, e) <= NM_TRI_BATCH_RECORDS || e - c < (size_t)r->workers));
        dec_ctx dt = {.r = r, .first = c, .tris = p->tris, .comps = p->components};
        if ((rc = nm_pack_run_chunks(e - c, r->workers, dec_tri_chunk, &dt, err))) return rc;
        uint64_t lo = (uint64_t)c * r->tt.len, hi = lo + recs;
        for (uint64_t i = lo; i < hi; i++) {
            nm_pack_tri_record(p->verts, &p->tris[i], p->components[i], rec);
            h = nm_fnv1a(h, rec, NM_TRI_RECORD_SIZE);
        }
        c = e;
    }

    /* Links: sorted by source across chunks, hashed, then those naming a triangle past the
     * triangle count dropped in place (the reference reader does the same). */
    p->links = (nm_link *)nm_calloc(r->link_count, sizeof *p->links);
    if (!p->links) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %u links", r->link_count);
    dec_ctx dl = {.r = r, .links = p->links};
    if ((rc = nm_pack_run_chunks(r->tl.chunks, r->workers, dec_link_chunk, &dl, err))) return rc;
    for (size_t c = 1; c < r->tl.chunks; c++) {
        uint64_t first = (uint64_t)c * r->tl.len;
        if (p->links[first].src < p->links[first - 1].src)
            return nm_fail(err, NM_ERR_CORRUPT, "link chunk %zu: links not sorted by source (%u after %u)",
                           c, p->links[first].src, p->links[first - 1].src);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->link_count; i++) {
        nm_pack_link_record(&p->links[i], rec);
        h = nm_fnv1a(h, rec, NM_LINK_RECORD_SIZE);
        if (p->links[i].src < r->tri_count && p->links[i].dst < r->tri_count) p->links[kept++] = p->links[i];
    }
    p->link_count = kept;
    if (h != p->build_hash)
        return nm_fail(err, NM_ERR_CORRUPT, "build_hash %016llx does not match the decoded tables (%016llx)",
                       (unsigned long long)p->build_hash, (unsigned long long)h);
    return NM_OK;
}

/* ---- 读取路径 / 按区: one zone and its tier children ----------------------------------------- */
static int load_zone_tris(reader *r, nm_pack *p, uint32_t lo, uint32_t hi, uint32_t *vlo, uint32_t *vhi,
                          nm_error *err)
{
    /* Decode the chunks covering [lo, hi) into place, then slide the zone's records to the front. */
    const chunk_table *t = &r->tt;
    size_t c0 = lo / t->len, c1 = (hi - 1) / t->len + 1;
    uint64_t base = (uint64_t)c0 * t->len, end = (uint64_t)c1 * t->len;
    if (end > t->total) end = t->total;
    size_t n = (size_t)(end - base);
    p->tris = (nm_tri *)nm_calloc(n, sizeof *p->tris);
    p->components = (uint32_t *)nm_calloc(n, sizeof *p->components);
    if (!p->tris || !p->components) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %zu triangles", n);
    dec_ctx dt = {.r = r, .first = c0, .tris = p->tris, .comps = p->components, .out_base = base};
    int rc = nm_pack_run_chunks(c1 - c0, r->workers, dec_tri_chunk, &dt, err);
    if (rc) return rc;
    uint32_t count = hi - lo;
    memmove(p->tris, p->tris + (lo - base), (size_t)count * sizeof *p->tris);
    memmove(p->components, p->components + (lo - base), (size_t)count * sizeof *p->components);
    p->tri_count = count;
    uint32_t mn = UINT32_MAX, mx = 0;
    for (uint32_t i = 0; i < count; i++) {
        nm_tri *tr = &p->tris[i];
        for (int k = 0; k < 3; k++) {
            if (tr->v[k] < mn) mn = tr->v[k];
            if (tr->v[k] > mx) mx = tr->v[k];
            /* Neighbours outside the zone become "none". */
            tr->nb[k] = tr->nb[k] >= (int32_t)lo && tr->nb[k] < (int32_t)hi ? tr->nb[k] - (int32_t)lo : -1;
        }
    }
    *vlo = mn;
    *vhi = mx + 1;
    return NM_OK;
}

static int load_zone_verts(reader *r, nm_pack *p, uint32_t vlo, uint32_t vhi, nm_error *err)
{
    const chunk_table *t = &r->tv;
    size_t c0 = vlo / t->len, c1 = (vhi - 1) / t->len + 1;
    uint64_t base = (uint64_t)c0 * t->len, end = (uint64_t)c1 * t->len;
    if (end > t->total) end = t->total;
    p->verts = (nm_vertex *)nm_calloc((size_t)(end - base), sizeof *p->verts);
    if (!p->verts) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %llu vertices", (unsigned long long)(end - base));
    dec_ctx dv = {.r = r, .first = c0, .verts = p->verts, .out_base = base};
    int rc = nm_pack_run_chunks(c1 - c0, r->workers, dec_vert_chunk, &dv, err);
    if (rc) return rc;
    p->vert_count = vhi - vlo;
    memmove(p->verts, p->verts + (vlo - base), (size_t)p->vert_count * sizeof *p->verts);
    p->vert_base = vlo;
    for (uint32_t i = 0; i < p->tri_count; i++)
        for (int k = 0; k < 3; k++) p->tris[i].v[k] -= vlo;
    return NM_OK;
}

/* Links of [lo, hi): skip chunks whose successor starts below lo (by aux), stop at the first
 * chunk starting at or past hi, binary-search lo inside each decoded chunk. */
static int load_zone_links(reader *r, nm_pack *p, uint32_t lo, uint32_t hi, nm_error *err)
{
    const chunk_table *t = &r->tl;
    size_t *list = (size_t *)nm_calloc(t->chunks ? t->chunks : 1, sizeof *list);
    uint64_t *at = (uint64_t *)nm_calloc(t->chunks ? t->chunks : 1, sizeof *at);
    nm_link *buf = NULL;
    int rc = NM_OK;
    if (!list || !at) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory for the link window");
    size_t nl = 0;
    uint64_t total = 0;
    for (size_t c = 0; !rc && c < t->chunks; c++) {
        if (c + 1 < t->chunks && t->aux[c + 1] < lo) continue;
        if (t->aux[c] >= hi) break;
        list[nl] = c;
        at[nl++] = total;
        total += records_of(t, c);
    }
    if (!rc && total) {
        buf = (nm_link *)nm_calloc((size_t)total, sizeof *buf);
        if (!buf) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory for %llu links", (unsigned long long)total);
    }
    if (!rc && nl) {
        dec_ctx dl = {.r = r, .list = list, .links = buf, .out_at = at};
        rc = nm_pack_run_chunks(nl, r->workers, dec_link_chunk, &dl, err);
    }
    uint32_t kept = 0;
    for (size_t j = 0; !rc && j < nl; j++) {
        const nm_link *l = buf + at[j];
        uint32_t n = records_of(t, list[j]), a = 0, b = n;
        while (a < b) { /* first source >= lo; sources never decrease inside a chunk */
            uint32_t m = a + (b - a) / 2;
            if (l[m].src < lo) a = m + 1;
            else b = m;
        }
        for (uint32_t i = a; i < n && l[i].src < hi; i++)
            if (l[i].dst >= lo && l[i].dst < hi) buf[kept++] = (nm_link){l[i].src - lo, l[i].dst - lo};
    }
    nm_free(list);
    nm_free(at);
    if (rc) {
        nm_free(buf);
        return rc;
    }
    p->links = buf ? buf : (nm_link *)nm_calloc(1, sizeof *buf);
    if (!p->links) return nm_fail(err, NM_ERR_NOMEM, "out of memory for links");
    p->link_count = kept;
    return NM_OK;
}

/* Keeps the selected zone and its tier children (tier zones whose component_count is its id). */
static int select_zone(nm_pack *p, const char *zone, uint32_t *lo, uint32_t *hi, nm_error *err)
{
    int zi = nm_pack_find_zone(p, zone);
    if (zi < 0) return nm_fail(err, NM_ERR_ARG, "zone '%s' not in the zone table", zone);
    uint16_t id = p->zones[zi].id;
    *lo = p->zones[zi].first_tri;
    *hi = *lo + p->zones[zi].tri_count;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p->zone_count; i++) {
        nm_zone *z = &p->zones[i];
        bool keep = (int)i == zi || ((z->flags & NM_ZONE_FLAG_TIER) && z->component_count == id);
        if (keep) p->zones[kept++] = *z;
        else nm_free(z->name);
    }
    p->zone_count = kept;
    return NM_OK;
}

/* ---- 面属性与离网连接: BSRF and BOML ---------------------------------------------------------- */
static int read_bsrf(reader *r, const nm_section *s, nm_pack *p, bool zone, uint32_t lo, uint32_t hi,
                     nm_error *err)
{
    nm_cursor c = nm_cur_slice(&r->file, s->offset, s->size);
    const uint8_t *tag = nm_cur_bytes(&c, 4);
    uint16_t version = nm_cur_u16(&c), rs = nm_cur_u16(&c);
    uint32_t count = nm_cur_u32(&c);
    nm_cur_skip(&c, 4);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "header: truncated (%zu bytes)", c.size);
    if (memcmp(tag, "BSRF", 4) != 0) return nm_fail(err, NM_ERR_CORRUPT, "header: bad tag");
    if (version != NM_BSRF_VERSION) return nm_fail(err, NM_ERR_CORRUPT, "header: version %u, expected 1", version);
    if (rs != NM_BSRF_RECORD_SIZE) return nm_fail(err, NM_ERR_CORRUPT, "header: record size %u, expected 8", rs);
    if (count != r->tri_count)
        return nm_fail(err, NM_ERR_CORRUPT, "count %u differs from triangle count %u", count, r->tri_count);
    if (s->size != NM_BSRF_HEADER_SIZE + (uint64_t)count * NM_BSRF_RECORD_SIZE)
        return nm_fail(err, NM_ERR_CORRUPT, "section size %llu, expected 16 + %u x 8",
                       (unsigned long long)s->size, count);
    uint32_t from = zone ? lo : 0, n = zone ? hi - lo : count;
    nm_surface *out = (nm_surface *)nm_calloc(n ? n : 1, sizeof *out);
    if (!out) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %u records", n);
    nm_cur_skip(&c, (size_t)from * NM_BSRF_RECORD_SIZE);
    for (uint32_t i = 0; i < n; i++) {
        out[i].area = nm_cur_u8(&c);
        out[i].poly_type = nm_cur_u8(&c);
        out[i].pad = nm_cur_u16(&c);
        out[i].flags = nm_cur_u32(&c);
    }
    nm_free(p->surfaces); /* the last BSRF entry wins */
    p->surfaces = out;
    p->surface_count = n;
    return NM_OK;
}

static int read_boml(reader *r, const nm_section *s, nm_pack *p, const nm_zone *all, uint32_t nall,
                     bool zone, uint32_t lo, uint32_t hi, nm_error *err)
{
    nm_cursor c = nm_cur_slice(&r->file, s->offset, s->size);
    const uint8_t *tag = nm_cur_bytes(&c, 4);
    uint16_t version = nm_cur_u16(&c), rs = nm_cur_u16(&c);
    uint32_t count = nm_cur_u32(&c);
    nm_cur_skip(&c, 4);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "header: truncated (%zu bytes)", c.size);
    if (memcmp(tag, "BOML", 4) != 0) return nm_fail(err, NM_ERR_CORRUPT, "header: bad tag");
    if (version != 1 && version != 2) return nm_fail(err, NM_ERR_CORRUPT, "header: version %u not 1 or 2", version);
    uint32_t want = version == 1 ? NM_BOML_V1_RECORD_SIZE : NM_BOML_V2_RECORD_SIZE;
    if (rs != want) return nm_fail(err, NM_ERR_CORRUPT, "header: record size %u, v%u needs %u", rs, version, want);
    if (s->size != NM_BOML_HEADER_SIZE + (uint64_t)count * rs)
        return nm_fail(err, NM_ERR_CORRUPT, "section size %llu differs from 16 + count %u x %u",
                       (unsigned long long)s->size, count, rs);
    nm_offmesh *out = (nm_offmesh *)nm_calloc(count ? count : 1, sizeof *out);
    if (!out) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %u records", count);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count; i++) {
        nm_offmesh o = {0};
        nm_cursor rc_ = nm_cur_sub(&c, rs);
        o.zone_id = nm_cur_u16(&rc_);
        o.kind = nm_cur_u8(&rc_);
        nm_cur_skip(&rc_, 1);
        o.is_ext = nm_cur_i32(&rc_);
        o.bidirectional = nm_cur_i32(&rc_);
        o.area = nm_cur_i32(&rc_);
        o.link_type = nm_cur_u16(&rc_);
        o.direction = nm_cur_u8(&rc_);
        nm_cur_skip(&rc_, 1);
        o.radius = nm_cur_f32(&rc_);
        o.cost_modifier = nm_cur_f32(&rc_);
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++) o.pts[k][j] = nm_cur_f32(&rc_);
        o.start_tri = o.end_tri = NM_BOML_NO_TRI;
        if (version == 2) { /* v2 keeps v1's first 76 bytes and adds dir_ok and the end triangles */
            o.dir_ok = nm_cur_u8(&rc_);
            nm_cur_skip(&rc_, 3);
            o.start_tri = nm_cur_u32(&rc_);
            o.end_tri = nm_cur_u32(&rc_);
        }
        bool known = false, mine = false;
        for (uint32_t z = 0; z < nall; z++) known |= all[z].id == o.zone_id;
        for (uint32_t z = 0; z < p->zone_count; z++) mine |= p->zones[z].id == o.zone_id;
        if (!known) {
            nm_free(out);
            return nm_fail(err, NM_ERR_CORRUPT, "record %u: unknown zone id %u", i, o.zone_id);
        }
        uint32_t *ends[2] = {&o.start_tri, &o.end_tri};
        for (int k = 0; k < 2; k++) {
            if (*ends[k] != NM_BOML_NO_TRI && *ends[k] >= r->tri_count) {
                nm_free(out);
                return nm_fail(err, NM_ERR_CORRUPT, "record %u: triangle %u past triangle count %u", i,
                               *ends[k], r->tri_count);
            }
            /* Whole-pack ids are rebased like the link table; ends outside the zone -> sentinel. */
            if (zone && *ends[k] != NM_BOML_NO_TRI)
                *ends[k] = *ends[k] >= lo && *ends[k] < hi ? *ends[k] - lo : NM_BOML_NO_TRI;
        }
        if (!zone || mine) out[kept++] = o;
    }
    nm_free(p->offmesh); /* the last BOML entry wins */
    p->offmesh = out;
    p->offmesh_count = kept;
    p->boml_version = version;
    return NM_OK;
}

/* ---- the whole file --------------------------------------------------------------------------- */
static int parse(reader *r, const nm_pack_load_opts *opts, nm_pack *p, nm_error *err)
{
    uint64_t dir_off = 0;
    int rc = read_header(r, p, &dir_off, err);
    if (!rc) rc = read_directory(r, p, dir_off, err);
    if (rc) return rc;
    const nm_section *geo = NULL;
    for (uint32_t i = 0; i < p->section_count; i++) /* BGEO: the last entry wins */
        if (!memcmp(p->sections[i].tag, "BGEO", 4)) geo = &p->sections[i];
    if (!geo) return nm_fail(err, NM_ERR_CORRUPT, "no BGEO section");
    if ((rc = read_bgeo_header(r, geo, err)) || (rc = read_zone_table(r, p, err))) {
        nm_error_prefix(err, "BGEO");
        return rc;
    }
    bool zone = opts && opts->zone;
    const char *zname = zone ? opts->zone : NULL;
    r->workers = nm_pack_workers(opts ? opts->workers : 0, r->tri_count);

    /* A copy of the whole zone table: BOML zone ids are checked against every zone. */
    nm_zone *all = (nm_zone *)nm_calloc(p->zone_count ? p->zone_count : 1, sizeof *all);
    if (!all) return nm_fail(err, NM_ERR_NOMEM, "out of memory");
    uint32_t nall = p->zone_count;
    for (uint32_t i = 0; i < nall; i++) all[i] = (nm_zone){.id = p->zones[i].id};
    uint32_t lo = 0, hi = 0;
    if (!zone) {
        rc = load_whole(r, p, err);
        if (rc) nm_error_prefix(err, "BGEO");
    } else if (!(rc = select_zone(p, zname, &lo, &hi, err))) {
        p->zone_scoped = true;
        p->tri_base = lo;
        if (hi > lo) {
            uint32_t vlo = 0, vhi = 0;
            rc = load_zone_tris(r, p, lo, hi, &vlo, &vhi, err);
            if (!rc) rc = load_zone_verts(r, p, vlo, vhi, err);
            if (!rc) rc = load_zone_links(r, p, lo, hi, err);
        } else {
            /* A zone without triangles (tier zones): empty tables, never NULL. */
            p->verts = (nm_vertex *)nm_calloc(1, sizeof *p->verts);
            p->tris = (nm_tri *)nm_calloc(1, sizeof *p->tris);
            p->components = (uint32_t *)nm_calloc(1, sizeof *p->components);
            p->links = (nm_link *)nm_calloc(1, sizeof *p->links);
            if (!p->verts || !p->tris || !p->components || !p->links) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory");
        }
        if (rc && rc != NM_ERR_ARG) nm_error_prefix(err, "BGEO: zone '%s'", zname);
    }
    /* BSRF and BOML: every entry is parsed, the last one kept; other sections keep their bytes. */
    for (uint32_t i = 0; !rc && i < p->section_count; i++) {
        nm_section *s = &p->sections[i];
        if (!memcmp(s->tag, "BSRF", 4)) {
            if ((rc = read_bsrf(r, s, p, zone, lo, hi, err))) nm_error_prefix(err, "BSRF (section %u)", i);
        } else if (!memcmp(s->tag, "BOML", 4)) {
            if ((rc = read_boml(r, s, p, all, nall, zone, lo, hi, err))) nm_error_prefix(err, "BOML (section %u)", i);
        } else if (memcmp(s->tag, "BGEO", 4) != 0) {
            s->bytes = (uint8_t *)nm_malloc((size_t)s->size);
            if (!s->bytes) rc = nm_fail(err, NM_ERR_NOMEM, "section %.4s: out of memory", s->tag);
            else memcpy(s->bytes, r->file.p + s->offset, (size_t)s->size);
        }
    }
    nm_free(all);
    return rc;
}

int nm_pack_parse(const uint8_t *data, size_t size, const char *name, const nm_pack_load_opts *opts,
                  nm_pack *out, nm_error *err)
{
    if (!out) return nm_fail(err, NM_ERR_ARG, "nm_pack_parse: NULL output");
    memset(out, 0, sizeof *out);
    if (!name) name = "(memory)";
    if (!data && size) return nm_fail(err, NM_ERR_ARG, "%s: NULL data", name);
    reader r = {.name = name, .file = nm_cur(data, size)};
    r.tv.what = "vertex";
    r.tt.what = "triangle";
    r.tl.what = "link";
    nm_pack p = {0};
    /* 两种加载方式都对全部解压字节算 FNV: the sidecars check it. */
    p.file_fnv = nm_fnv1a(NM_FNV_OFFSET, data, size);
    int rc = parse(&r, opts, &p, err);
    table_free(&r.tv);
    table_free(&r.tt);
    table_free(&r.tl);
    for (int w = 0; w < NM_WORKER_LIMIT; w++)
        for (int k = 0; k < 3; k++) nm_bytes_free(&r.scratch[w][k]);
    if (rc) {
        nm_error_prefix(err, "%s", name);
        nm_pack_free(&p);
        return rc;
    }
    *out = p;
    return NM_OK;
}

int nm_pack_load(const char *path, const nm_pack_load_opts *opts, nm_pack *out, nm_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (!path) return nm_fail(err, NM_ERR_ARG, "nm_pack_load: NULL path");
    uint8_t *data = NULL;
    size_t size = 0;
    int rc = nm_file_read(path, 0, &data, &size, err);
    if (!rc) rc = nm_pack_parse(data, size, path, opts, out, err);
    nm_free(data);
    return rc;
}
