/* pack_write.c — writes the main pack as BNAV v5 (design article 数据包: 主包头与段目录, 几何段,
 * 面属性与离网连接): the 80-byte header, the section directory, BGEO (zone table, chunked vertex,
 * triangle and link tables, each chunk a set of zlib streams), BSRF, BOML v2 and every extra
 * section verbatim. Chunks are encoded in parallel into their own buffers and joined in order, so
 * the bytes never depend on the worker count. build_hash is computed over the canonical records. */
#include "pack_internal.h"

#include <string.h>

/* ---- checks: refuse what the reader would reject ------------------------------------------- */
static int check_pack(const nm_pack *p, nm_error *err)
{
    if (p->link_count == 0)
        return nm_fail(err, NM_ERR_ARG, "link count is 0 (BNAV requires at least one link)");
    if (p->tri_count > (uint32_t)INT32_MAX)
        return nm_fail(err, NM_ERR_ARG, "%u triangles: more than neighbour ids can hold", p->tri_count);
    if ((p->vert_count && !p->verts) || (p->tri_count && !p->tris) || !p->links ||
        (p->zone_count && !p->zones) || (p->offmesh_count && !p->offmesh) ||
        (p->section_count && !p->sections))
        return nm_fail(err, NM_ERR_ARG, "a table with a non-zero count has no array");
    for (uint32_t i = 0; i < p->zone_count; i++) {
        const nm_zone *z = &p->zones[i];
        if (z->name_len && !z->name) return nm_fail(err, NM_ERR_ARG, "zone %u: name is NULL", i);
        if ((uint64_t)z->first_tri + z->tri_count > p->tri_count)
            return nm_fail(err, NM_ERR_ARG, "zone %u: triangles [%u, +%u) past triangle count %u", i,
                           z->first_tri, z->tri_count, p->tri_count);
        if ((z->flags & NM_ZONE_FLAG_TIER) && z->tri_count)
            return nm_fail(err, NM_ERR_ARG, "zone %u: tier zone with %u triangles", i, z->tri_count);
        for (uint32_t j = 0; j < i; j++)
            if (p->zones[j].id == z->id)
                return nm_fail(err, NM_ERR_ARG, "zones %u and %u share zone id %u", j, i, z->id);
    }
    for (uint32_t t = 0; t < p->tri_count; t++) {
        const nm_tri *tr = &p->tris[t];
        for (int k = 0; k < 3; k++) {
            if (tr->v[k] >= p->vert_count)
                return nm_fail(err, NM_ERR_ARG, "triangle %u: vertex %u >= vertex count %u", t,
                               tr->v[k], p->vert_count);
            if (tr->nb[k] < -1 || (tr->nb[k] >= 0 && (uint32_t)tr->nb[k] >= p->tri_count))
                return nm_fail(err, NM_ERR_ARG, "triangle %u: neighbour %d out of range", t, tr->nb[k]);
        }
    }
    for (uint32_t i = 0; i < p->link_count; i++) {
        const nm_link *l = &p->links[i];
        if (l->src >= p->tri_count || l->dst >= p->tri_count)
            return nm_fail(err, NM_ERR_ARG, "link %u: %u -> %u past triangle count %u", i, l->src,
                           l->dst, p->tri_count);
        if (i && l->src < p->links[i - 1].src)
            return nm_fail(err, NM_ERR_ARG, "link %u: links not sorted by source", i);
    }
    if (p->surface_count && (p->surface_count != p->tri_count || !p->surfaces))
        return nm_fail(err, NM_ERR_ARG, "BSRF has %u records for %u triangles", p->surface_count,
                       p->tri_count);
    for (uint32_t i = 0; i < p->offmesh_count; i++) {
        const nm_offmesh *o = &p->offmesh[i];
        if (nm_pack_find_zone_id(p, o->zone_id) < 0)
            return nm_fail(err, NM_ERR_ARG, "off-mesh link %u: unknown zone id %u", i, o->zone_id);
        if ((o->start_tri != NM_BOML_NO_TRI && o->start_tri >= p->tri_count) ||
            (o->end_tri != NM_BOML_NO_TRI && o->end_tri >= p->tri_count))
            return nm_fail(err, NM_ERR_ARG, "off-mesh link %u: triangle id past triangle count", i);
    }
    for (uint32_t i = 0; i < p->section_count; i++) {
        const nm_section *s = &p->sections[i];
        if (!s->bytes) continue;
        if (!memcmp(s->tag, "BGEO", 4) || !memcmp(s->tag, "BSRF", 4) || !memcmp(s->tag, "BOML", 4))
            return nm_fail(err, NM_ERR_ARG, "section %u: %.4s is written from the tables, not as bytes",
                           i, s->tag);
    }
    return NM_OK;
}

/* ---- chunk encoders --------------------------------------------------------------------------- */
typedef struct enc_ctx {
    const nm_pack *p;
    uint32_t chunk_len, total;
    int level;
    nm_buf *out; /* one buffer per chunk */
} enc_ctx;

static uint32_t chunk_records(uint32_t len, uint32_t total, size_t c)
{
    uint64_t lo = (uint64_t)c * len, hi = lo + len;
    if (hi > total) hi = total;
    return (uint32_t)(hi - lo);
}

/* Encodes the streams of a chunk one after another into e->out[c]. */
static int put_streams(enc_ctx *e, size_t c, nm_buf *s, int n, nm_error *err)
{
    for (int k = 0; k < n; k++) {
        if (s[k].oom) return nm_fail(err, NM_ERR_NOMEM, "out of memory for stream %d", k);
        int rc = nm_stream_encode(&e->out[c], s[k].p, s[k].size, e->level, err);
        if (rc) {
            nm_error_prefix(err, "stream %d", k);
            return rc;
        }
    }
    return NM_OK;
}

/* Vertex chunk: one stream of the n x 12 record matrix stored transposed (12 x n). */
static int enc_vert_chunk(void *arg, size_t c, nm_error *err)
{
    enc_ctx *e = (enc_ctx *)arg;
    uint32_t n = chunk_records(e->chunk_len, e->total, c);
    const nm_vertex *v = e->p->verts + (size_t)c * e->chunk_len;
    nm_buf s = {0};
    if (!nm_buf_reserve(&s, (size_t)n * NM_VERTEX_RECORD_SIZE))
        return nm_fail(err, NM_ERR_NOMEM, "vertex chunk %zu: out of memory", c);
    s.size = (size_t)n * NM_VERTEX_RECORD_SIZE;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t rec[NM_VERTEX_RECORD_SIZE];
        nm_pack_vertex_record(&v[i], rec);
        for (uint32_t j = 0; j < NM_VERTEX_RECORD_SIZE; j++) s.p[(size_t)j * n + i] = rec[j];
    }
    int rc = put_streams(e, c, &s, 1, err);
    nm_buf_free(&s);
    if (rc) nm_error_prefix(err, "vertex chunk %zu", c);
    return rc;
}

/* Triangle chunk: the 7 streams of 几何段 (v0 run, v1, v2, neighbour bitmap, neighbours,
 * component RLE values, run lengths); every running value restarts at 0 in each chunk. */
static int enc_tri_chunk(void *arg, size_t c, nm_error *err)
{
    enc_ctx *e = (enc_ctx *)arg;
    const nm_pack *p = e->p;
    uint32_t n = chunk_records(e->chunk_len, e->total, c);
    uint32_t g0 = (uint32_t)(c * e->chunk_len);
    nm_buf s[NM_TRI_STREAMS] = {{0}};
    nm_buf_zeros(&s[3], ((size_t)n * 3 + 7) / 8);
    int64_t run = 0, comp_run = 0;
    uint32_t i = 0;
    for (uint32_t t = 0; t < n; t++) {
        const nm_tri *tr = &p->tris[g0 + t];
        nm_buf_varint(&s[0], nm_zig((int64_t)tr->v[0] - run));
        run = tr->v[0];
        nm_buf_varint(&s[1], nm_zig((int64_t)tr->v[1] - (int64_t)tr->v[0]));
        nm_buf_varint(&s[2], nm_zig((int64_t)tr->v[2] - (int64_t)tr->v[0]));
        for (int k = 0; k < 3; k++) {
            if (tr->nb[k] < 0) continue;
            size_t bit = (size_t)t * 3 + (size_t)k;
            if (!s[3].oom) s[3].p[bit / 8] |= (uint8_t)(0x80u >> (bit % 8)); /* MSB first */
            nm_buf_varint(&s[4], nm_zig((int64_t)tr->nb[k] - (int64_t)(g0 + t)));
        }
    }
    /* Component ids as runs: value (running zigzag delta) and length >= 1. */
    while (i < n) {
        uint32_t v = p->components ? p->components[g0 + i] : 0, len = 1;
        while (i + len < n && (p->components ? p->components[g0 + i + len] : 0) == v) len++;
        nm_buf_varint(&s[5], nm_zig((int64_t)v - comp_run));
        comp_run = v;
        nm_buf_varint(&s[6], len);
        i += len;
    }
    int rc = put_streams(e, c, s, NM_TRI_STREAMS, err);
    for (int k = 0; k < NM_TRI_STREAMS; k++) nm_buf_free(&s[k]);
    if (rc) nm_error_prefix(err, "triangle chunk %zu", c);
    return rc;
}

/* Link chunk: sources (first absolute, then unsigned steps), targets as zigzag from source. */
static int enc_link_chunk(void *arg, size_t c, nm_error *err)
{
    enc_ctx *e = (enc_ctx *)arg;
    uint32_t n = chunk_records(e->chunk_len, e->total, c);
    const nm_link *l = e->p->links + (size_t)c * e->chunk_len;
    nm_buf s[NM_LINK_STREAMS] = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        nm_buf_varint(&s[0], i == 0 ? l[i].src : l[i].src - l[i - 1].src);
        nm_buf_varint(&s[1], nm_zig((int64_t)l[i].dst - (int64_t)l[i].src));
    }
    int rc = put_streams(e, c, s, NM_LINK_STREAMS, err);
    for (int k = 0; k < NM_LINK_STREAMS; k++) nm_buf_free(&s[k]);
    if (rc) nm_error_prefix(err, "link chunk %zu", c);
    return rc;
}

typedef struct table_out {
    size_t chunks;
    nm_buf *bufs;
} table_out;

static void table_free(table_out *t)
{
    for (size_t i = 0; t->bufs && i < t->chunks; i++) nm_buf_free(&t->bufs[i]);
    nm_free(t->bufs);
    t->bufs = NULL;
}

static int encode_table(const nm_pack *p, uint32_t total, uint32_t chunk_len, int level, int workers,
                        nm_pack_chunk_fn fn, table_out *t, nm_error *err)
{
    t->chunks = total ? ((size_t)total + chunk_len - 1) / chunk_len : 0;
    t->bufs = (nm_buf *)nm_calloc(t->chunks ? t->chunks : 1, sizeof *t->bufs);
    if (!t->bufs) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %zu chunks", t->chunks);
    enc_ctx e = {p, chunk_len, total, level, t->bufs};
    int rc = nm_pack_run_chunks(t->chunks, workers, fn, &e, err);
    for (size_t i = 0; !rc && i < t->chunks; i++) {
        if (t->bufs[i].oom) rc = nm_fail(err, NM_ERR_NOMEM, "chunk %zu: out of memory", i);
        else if (t->bufs[i].size > UINT32_MAX) rc = nm_fail(err, NM_ERR_ARG, "chunk %zu over 4 GiB", i);
    }
    return rc;
}

/* ---- build_hash: zone table, vertices, triangles, links (canonical bytes, in that order) ---- */
static uint64_t build_hash(const nm_pack *p, const uint8_t *zone_table, size_t zone_table_size)
{
    uint64_t h = nm_fnv1a(NM_FNV_OFFSET, zone_table, zone_table_size);
    uint8_t rec[NM_TRI_RECORD_SIZE];
    for (uint32_t i = 0; i < p->vert_count; i++) {
        nm_pack_vertex_record(&p->verts[i], rec);
        h = nm_fnv1a(h, rec, NM_VERTEX_RECORD_SIZE);
    }
    for (uint32_t i = 0; i < p->tri_count; i++) {
        nm_pack_tri_record(p->verts, &p->tris[i], p->components ? p->components[i] : 0, rec);
        h = nm_fnv1a(h, rec, NM_TRI_RECORD_SIZE);
    }
    for (uint32_t i = 0; i < p->link_count; i++) {
        nm_pack_link_record(&p->links[i], rec);
        h = nm_fnv1a(h, rec, NM_LINK_RECORD_SIZE);
    }
    return h;
}

static void write_zone_table(const nm_pack *p, nm_buf *b)
{
    for (uint32_t i = 0; i < p->zone_count; i++) {
        const nm_zone *z = &p->zones[i];
        nm_buf_u16(b, z->id);
        nm_buf_u16(b, z->flags);
        nm_buf_u32(b, z->name_len);
        nm_buf_u32(b, z->first_tri);
        nm_buf_u32(b, z->tri_count);
        nm_buf_u32(b, z->component_count);
        nm_buf_f32(b, z->width);
        nm_buf_f32(b, z->height);
        for (int k = 0; k < 4; k++) nm_buf_f32(b, z->t[k]);
        nm_buf_f32(b, z->floor_y);
        nm_buf_bytes(b, z->name, z->name_len);
    }
}

static void write_chunk_dir(nm_buf *b, const table_out *t, uint64_t data_off, const uint32_t *aux)
{
    uint64_t off = data_off;
    for (size_t i = 0; i < t->chunks; i++) {
        nm_buf_u64(b, off);
        nm_buf_u32(b, (uint32_t)t->bufs[i].size);
        nm_buf_u32(b, aux ? aux[i] : 0);
        off += t->bufs[i].size;
    }
}

static uint64_t table_bytes(const table_out *t)
{
    uint64_t n = 0;
    for (size_t i = 0; i < t->chunks; i++) n += t->bufs[i].size;
    return n;
}

/* 几何段: 72-byte header, zone table, three chunk directories, then the chunks. */
static int write_bgeo(const nm_pack *p, const nm_pack_write_opts *o, nm_buf *b, uint64_t *hash,
                      nm_error *err)
{
    uint32_t vc = o && o->vert_chunk ? o->vert_chunk : NM_DEFAULT_VERT_CHUNK;
    uint32_t tc = o && o->tri_chunk ? o->tri_chunk : NM_DEFAULT_TRI_CHUNK;
    uint32_t lc = o && o->link_chunk ? o->link_chunk : NM_DEFAULT_LINK_CHUNK;
    int level = o && o->level ? o->level : NM_DEFAULT_LEVEL;
    int req = o ? o->workers : 0;
    table_out tv = {0}, tt = {0}, tl = {0};
    nm_buf zt = {0};
    uint32_t *aux = NULL;
    int rc = encode_table(p, p->vert_count, vc, level, nm_pack_workers(req, p->vert_count),
                          enc_vert_chunk, &tv, err);
    if (rc) nm_error_prefix(err, "BGEO: vertices");
    if (!rc) {
        rc = encode_table(p, p->tri_count, tc, level, nm_pack_workers(req, p->tri_count),
                          enc_tri_chunk, &tt, err);
        if (rc) nm_error_prefix(err, "BGEO: triangles");
    }
    if (!rc) {
        rc = encode_table(p, p->link_count, lc, level, nm_pack_workers(req, p->link_count),
                          enc_link_chunk, &tl, err);
        if (rc) nm_error_prefix(err, "BGEO: links");
    }
    if (!rc) {
        aux = (uint32_t *)nm_calloc(tl.chunks ? tl.chunks : 1, sizeof *aux);
        if (!aux) rc = nm_fail(err, NM_ERR_NOMEM, "BGEO: out of memory");
        for (size_t i = 0; aux && i < tl.chunks; i++) aux[i] = p->links[i * lc].src; /* first source */
    }
    if (!rc) {
        write_zone_table(p, &zt);
        if (zt.oom) rc = nm_fail(err, NM_ERR_NOMEM, "BGEO: zone table: out of memory");
        else if (zt.size > UINT32_MAX) rc = nm_fail(err, NM_ERR_ARG, "BGEO: zone table over 4 GiB");
    }
    if (!rc) {
        *hash = build_hash(p, zt.p, zt.size);
        size_t base = b->size;
        uint64_t zt_off = NM_BGEO_HEADER_SIZE;
        uint64_t vdir = zt_off + zt.size;
        uint64_t tdir = vdir + (uint64_t)tv.chunks * NM_CHUNK_ENTRY_SIZE;
        uint64_t ldir = tdir + (uint64_t)tt.chunks * NM_CHUNK_ENTRY_SIZE;
        uint64_t data = ldir + (uint64_t)tl.chunks * NM_CHUNK_ENTRY_SIZE;
        nm_buf_bytes(b, "BGEO", 4);
        nm_buf_u32(b, NM_BGEO_VERSION);
        nm_buf_u32(b, p->vert_count);
        nm_buf_u32(b, p->tri_count);
        nm_buf_u32(b, p->link_count);
        nm_buf_u32(b, vc);
        nm_buf_u32(b, tc);
        nm_buf_u32(b, lc);
        nm_buf_u32(b, (uint32_t)zt.size);
        nm_buf_u32(b, 0);
        nm_buf_u64(b, vdir);
        nm_buf_u64(b, tdir);
        nm_buf_u64(b, ldir);
        nm_buf_u64(b, zt_off);
        nm_buf_bytes(b, zt.p, zt.size);
        write_chunk_dir(b, &tv, data, NULL);
        write_chunk_dir(b, &tt, data + table_bytes(&tv), NULL);
        write_chunk_dir(b, &tl, data + table_bytes(&tv) + table_bytes(&tt), aux);
        const table_out *all[3] = {&tv, &tt, &tl};
        for (int k = 0; k < 3; k++)
            for (size_t i = 0; i < all[k]->chunks; i++)
                nm_buf_bytes(b, all[k]->bufs[i].p, all[k]->bufs[i].size);
        if (!b->oom && b->size - base != data + table_bytes(&tv) + table_bytes(&tt) + table_bytes(&tl))
            rc = nm_fail(err, NM_ERR_STATE, "BGEO: layout size mismatch"); /* cannot happen */
    }
    nm_buf_free(&zt);
    nm_free(aux);
    table_free(&tv);
    table_free(&tt);
    table_free(&tl);
    return rc;
}

/* 面属性: 16-byte header, then 8 bytes per triangle. */
static void write_bsrf(const nm_pack *p, nm_buf *b)
{
    nm_buf_bytes(b, "BSRF", 4);
    nm_buf_u16(b, NM_BSRF_VERSION);
    nm_buf_u16(b, NM_BSRF_RECORD_SIZE);
    nm_buf_u32(b, p->surface_count);
    nm_buf_u32(b, 0);
    for (uint32_t i = 0; i < p->surface_count; i++) {
        const nm_surface *s = &p->surfaces[i];
        nm_buf_u8(b, s->area);
        nm_buf_u8(b, s->poly_type);
        nm_buf_u16(b, s->pad);
        nm_buf_u32(b, s->flags);
    }
}

/* 离网连接: BOML v2, 88-byte records (v1's 80 bytes with dir_ok and the two triangle ids). */
static void write_boml(const nm_pack *p, nm_buf *b)
{
    nm_buf_bytes(b, "BOML", 4);
    nm_buf_u16(b, 2);
    nm_buf_u16(b, NM_BOML_V2_RECORD_SIZE);
    nm_buf_u32(b, p->offmesh_count);
    nm_buf_u32(b, 0);
    for (uint32_t i = 0; i < p->offmesh_count; i++) {
        const nm_offmesh *o = &p->offmesh[i];
        nm_buf_u16(b, o->zone_id);
        nm_buf_u8(b, o->kind);
        nm_buf_u8(b, 0);
        nm_buf_i32(b, o->is_ext);
        nm_buf_i32(b, o->bidirectional);
        nm_buf_i32(b, o->area);
        nm_buf_u16(b, o->link_type);
        nm_buf_u8(b, o->direction);
        nm_buf_u8(b, 0);
        nm_buf_f32(b, o->radius);
        nm_buf_f32(b, o->cost_modifier);
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++) nm_buf_f32(b, o->pts[k][j]);
        nm_buf_u8(b, o->dir_ok);
        nm_buf_zeros(b, 3);
        nm_buf_u32(b, o->start_tri);
        nm_buf_u32(b, o->end_tri);
    }
}

/* ---- the whole file --------------------------------------------------------------------------- */
int nm_pack_serialize(nm_pack *p, const nm_pack_write_opts *opts, nm_buf *out, nm_error *err)
{
    if (!p || !out) return nm_fail(err, NM_ERR_ARG, "nm_pack_serialize: NULL argument");
    if (opts && opts->level && (opts->level < 1 || opts->level > 12))
        return nm_fail(err, NM_ERR_ARG, "compression level %d not in 1..12", opts->level);
    int rc = check_pack(p, err);
    if (rc) return rc;

    /* Section bodies first; the header and directory need their sizes. */
    nm_buf bgeo = {0}, bsrf = {0}, boml = {0};
    uint64_t hash = 0;
    rc = write_bgeo(p, opts, &bgeo, &hash, err);
    if (!rc && p->surface_count) write_bsrf(p, &bsrf);
    if (!rc && p->offmesh_count) write_boml(p, &boml);
    if (!rc && (bgeo.oom || bsrf.oom || boml.oom)) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory");

    uint32_t nsec = 1 + (p->surface_count ? 1 : 0) + (p->offmesh_count ? 1 : 0);
    for (uint32_t i = 0; i < p->section_count; i++) nsec += p->sections[i].bytes ? 1 : 0;

    size_t base = out->size;
    if (!rc) {
        uint64_t dir = NM_BNAV_HEADER_SIZE, off = dir + (uint64_t)nsec * NM_SECTION_ENTRY_SIZE;
        nm_buf_bytes(out, "BNAV", 4);
        nm_buf_u16(out, NM_BNAV_VERSION);
        nm_buf_u16(out, p->flags);
        nm_buf_u32(out, p->zone_count);
        nm_buf_u32(out, p->vert_count);
        nm_buf_u32(out, p->tri_count);
        nm_buf_u32(out, p->link_count);
        nm_buf_zeros(out, 32); /* legacy table offsets: obsolete since v5 */
        nm_buf_u64(out, hash);
        nm_buf_u64(out, dir);
        nm_buf_u32(out, nsec);
        nm_buf_u32(out, 0);
        /* Directory: BGEO, BSRF, BOML, then the extra sections in their order. */
        struct { const char *tag; uint32_t flags; const void *p; size_t n; } ent[3] = {
            {"BGEO", 0, bgeo.p, bgeo.size}, {"BSRF", 0, bsrf.p, bsrf.size}, {"BOML", 0, boml.p, boml.size}};
        for (int k = 0; k < 3; k++) {
            if (k > 0 && ent[k].n == 0) continue;
            nm_buf_bytes(out, ent[k].tag, 4);
            nm_buf_u32(out, ent[k].flags);
            nm_buf_u64(out, off);
            nm_buf_u64(out, ent[k].n);
            off += ent[k].n;
        }
        for (uint32_t i = 0; i < p->section_count; i++) {
            const nm_section *s = &p->sections[i];
            if (!s->bytes) continue;
            nm_buf_bytes(out, s->tag, 4);
            nm_buf_u32(out, s->flags);
            nm_buf_u64(out, off);
            nm_buf_u64(out, s->size);
            off += s->size;
        }
        for (int k = 0; k < 3; k++) nm_buf_bytes(out, ent[k].p, ent[k].n);
        for (uint32_t i = 0; i < p->section_count; i++)
            if (p->sections[i].bytes) nm_buf_bytes(out, p->sections[i].bytes, p->sections[i].size);
        if (out->oom) rc = nm_fail(err, NM_ERR_NOMEM, "out of memory for the pack bytes");
    }
    nm_buf_free(&bgeo);
    nm_buf_free(&bsrf);
    nm_buf_free(&boml);
    if (rc) {
        if (out->size > base && !out->oom) out->size = base;
        return rc;
    }
    p->build_hash = hash;
    p->file_fnv = nm_fnv1a(NM_FNV_OFFSET, out->p + base, out->size - base);
    return NM_OK;
}

int nm_pack_append_section(nm_pack *p, const uint8_t *in, size_t n, const char tag[4], const void *bytes,
                           size_t size, nm_buf *out, nm_error *err)
{
    if (!p || !in || !tag || (!bytes && size) || !out) return nm_fail(err, NM_ERR_ARG, "nm_pack_append_section: NULL argument");
    /* `in` is nm_pack_serialize's: header, directory right after it, bodies in directory order */
    nm_cursor c = nm_cur(in, n);
    const uint8_t *magic = nm_cur_bytes(&c, 4);
    nm_cur_seek(&c, 64);
    const uint64_t dir = nm_cur_u64(&c);
    const uint32_t nsec = nm_cur_u32(&c);
    const size_t body = NM_BNAV_HEADER_SIZE + (size_t)nsec * NM_SECTION_ENTRY_SIZE;
    uint64_t end = 0; /* where the last section ends */
    if (!c.bad && nsec && body <= n) {
        nm_cur_seek(&c, body - 16);
        end = nm_cur_u64(&c);
        end += nm_cur_u64(&c);
    }
    if (c.bad || memcmp(magic, "BNAV", 4) != 0 || dir != NM_BNAV_HEADER_SIZE || end != n)
        return nm_fail(err, NM_ERR_ARG, "nm_pack_append_section: not a serialised pack");
    size_t base = out->size;
    nm_buf_bytes(out, in, 72);
    nm_buf_u32(out, nsec + 1);
    nm_buf_bytes(out, in + 76, 4);
    nm_cur_seek(&c, NM_BNAV_HEADER_SIZE);
    for (uint32_t i = 0; i < nsec; i++) { /* tag and flags, offset moved by the new entry, size */
        nm_buf_bytes(out, nm_cur_bytes(&c, 8), 8);
        nm_buf_u64(out, nm_cur_u64(&c) + NM_SECTION_ENTRY_SIZE);
        nm_buf_u64(out, nm_cur_u64(&c));
    }
    nm_buf_bytes(out, tag, 4);
    nm_buf_u32(out, 0);
    nm_buf_u64(out, n + NM_SECTION_ENTRY_SIZE);
    nm_buf_u64(out, size);
    nm_buf_bytes(out, in + body, n - body);
    nm_buf_bytes(out, bytes, size);
    if (out->oom) {
        if (out->size > base) out->size = base;
        return nm_fail(err, NM_ERR_NOMEM, "out of memory for the pack bytes");
    }
    p->file_fnv = nm_fnv1a(NM_FNV_OFFSET, out->p + base, out->size - base);
    return NM_OK;
}

int nm_pack_save(nm_pack *p, const nm_pack_write_opts *opts, const char *path, nm_error *err)
{
    if (!path) return nm_fail(err, NM_ERR_ARG, "nm_pack_save: NULL path");
    nm_buf b = {0};
    int rc = nm_pack_serialize(p, opts, &b, err);
    if (!rc) rc = nm_file_write(path, b.p, b.size, err);
    if (rc) nm_error_prefix(err, "%s", path);
    nm_buf_free(&b);
    return rc;
}
