/* test_pack.c — the main pack BNAV v5 reader and writer: round trips of hand-built packs (whole
 * and per zone, 1 and 4 workers), the byte format checked against an independent encoder and
 * zlib's own decoder, every truncation, flipped bytes, and each named corruption with its
 * message. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pack/pack.h"
#include "pack_fixture.h"

static const nm_pack_write_opts kSmall = {.vert_chunk = 16, .tri_chunk = 8, .link_chunk = 20, .level = 6};

static void must_serialize(nm_pack *p, const nm_pack_write_opts *o, nm_buf *out)
{
    nm_error err = {0};
    int rc = nm_pack_serialize(p, o, out, &err);
    cr_assert_eq(rc, NM_OK, "serialize: %s", err.msg);
}

/* The standard test pack and its bytes. */
typedef struct fixture {
    nm_pack pack;
    nm_buf bytes;
} fixture;

static void fixture_make(fixture *f, uint32_t scale, const nm_pack_write_opts *o)
{
    memset(f, 0, sizeof *f);
    fx_build(&f->pack, 1, scale);
    must_serialize(&f->pack, o, &f->bytes);
}

static void fixture_free(fixture *f)
{
    nm_pack_free(&f->pack);
    nm_buf_free(&f->bytes);
}

static int parse_buf(const uint8_t *d, size_t n, const char *zone, int workers, nm_pack *out, nm_error *err)
{
    nm_pack_load_opts o = {.zone = zone, .workers = workers};
    return nm_pack_parse(d, n, "test.nav", &o, out, err);
}

static void assert_same(const nm_pack *a, const nm_pack *b)
{
    char why[256] = "";
    cr_assert(fx_pack_equal(a, b, why, sizeof why), "packs differ: %s", why);
}

/* ---- round trips -------------------------------------------------------------------------------- */
Test(pack, whole_load_gives_back_every_table_written)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    nm_pack q;
    nm_error err = {0};
    cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, NULL, 1, &q, &err), NM_OK, "%s", err.msg);
    assert_same(&f.pack, &q);
    cr_assert_eq(q.file_fnv, nm_fnv1a(NM_FNV_OFFSET, f.bytes.p, f.bytes.size));
    cr_assert_eq(q.file_fnv, f.pack.file_fnv, "writer and reader agree on the file fingerprint");
    cr_assert_eq(q.build_hash, f.pack.build_hash);
    cr_assert_eq(q.boml_version, 2);
    cr_assert_not_null(nm_pack_section(&q, "BGEO"), "directory entries stay after parsing");
    cr_assert_null(nm_pack_section(&q, "BGEO")->bytes, "parsed sections keep no bytes");
    cr_assert_eq(nm_pack_section(&q, "BGRD")->size, 50);
    /* Serialising the parsed pack again gives the same bytes. */
    nm_buf again = {0};
    must_serialize(&q, &kSmall, &again);
    cr_assert_eq(again.size, f.bytes.size);
    cr_assert(memcmp(again.p, f.bytes.p, again.size) == 0, "re-serialised pack differs");
    nm_buf_free(&again);
    nm_pack_free(&q);
    fixture_free(&f);
}

Test(pack, writer_bytes_do_not_depend_on_the_worker_count)
{
    nm_pack p;
    fx_build(&p, 3, 2);
    nm_pack_write_opts o1 = kSmall, o4 = kSmall;
    o1.workers = 1;
    o4.workers = 4;
    nm_buf a = {0}, b = {0};
    must_serialize(&p, &o1, &a);
    must_serialize(&p, &o4, &b);
    cr_assert_eq(a.size, b.size);
    cr_assert(memcmp(a.p, b.p, a.size) == 0);
    nm_buf_free(&a);
    nm_buf_free(&b);
    nm_pack_free(&p);
}

Test(pack, a_section_appended_to_the_bytes_gives_the_bytes_of_the_pack_with_it)
{
    nm_pack p;
    fx_build(&p, 2, 1);
    cr_assert_eq(p.section_count, 2);
    p.sections[1].flags = 0; /* an appended section has no flags */
    nm_buf with = {0}, without = {0}, appended = {0};
    must_serialize(&p, &kSmall, &with);
    uint64_t fnv_with = p.file_fnv, hash = p.build_hash;
    p.section_count = 1;
    must_serialize(&p, &kSmall, &without);
    p.section_count = 2;
    nm_error err = {0};
    cr_assert_eq(nm_pack_append_section(&p, without.p, without.size, "BGRD", p.sections[1].bytes, p.sections[1].size,
                                        &appended, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(appended.size, with.size);
    cr_assert(memcmp(appended.p, with.p, with.size) == 0, "appended bytes differ from serialising with the section");
    cr_assert_eq(p.file_fnv, fnv_with);
    cr_assert_eq(p.build_hash, hash);
    /* anything but a serialised pack is refused, and out is left as it was */
    size_t before = appended.size;
    cr_assert_eq(nm_pack_append_section(&p, without.p, without.size - 1, "BGRD", "x", 1, &appended, &err), NM_ERR_ARG);
    cr_assert_eq(nm_pack_append_section(&p, without.p + 1, without.size - 1, "BGRD", "x", 1, &appended, &err),
                 NM_ERR_ARG);
    cr_assert_eq(nm_pack_append_section(&p, without.p, 79, "BGRD", "x", 1, &appended, &err), NM_ERR_ARG);
    cr_assert_eq(appended.size, before);
    nm_buf_free(&with);
    nm_buf_free(&without);
    nm_buf_free(&appended);
    nm_pack_free(&p);
}

Test(pack, whole_and_zone_loads_are_identical_with_1_and_4_workers)
{
    fixture f;
    fixture_make(&f, 3, &kSmall);
    const char *zones[] = {NULL, "alpha", "beta", "gamma"};
    for (int i = 0; i < 4; i++) {
        nm_pack a, b;
        nm_error err = {0};
        cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, zones[i], 1, &a, &err), NM_OK, "%s", err.msg);
        cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, zones[i], 4, &b, &err), NM_OK, "%s", err.msg);
        assert_same(&a, &b);
        nm_pack_free(&a);
        nm_pack_free(&b);
    }
    fixture_free(&f);
}

Test(pack, zone_load_relabels_triangles_vertices_links_and_boml_to_the_zone)
{
    fixture f;
    fixture_make(&f, 2, &kSmall);
    nm_pack whole;
    nm_error err = {0};
    cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, NULL, 1, &whole, &err), NM_OK, "%s", err.msg);
    const char *zones[] = {"alpha", "beta", "gamma", "alpha_tier1"};
    for (int i = 0; i < 4; i++) {
        for (int w = 1; w <= 4; w += 3) {
            nm_pack z, want;
            cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, zones[i], w, &z, &err), NM_OK, "%s: %s", zones[i], err.msg);
            cr_assert(fx_expect_zone(&f.pack, zones[i], &want));
            char why[256] = "";
            cr_assert(fx_pack_equal(&want, &z, why, sizeof why), "zone %s: %s", zones[i], why);
            cr_assert_eq(z.file_fnv, whole.file_fnv, "a zone load fingerprints the whole file");
            cr_assert(z.zone_scoped);
            /* Every zone-local index is in range. */
            for (uint32_t t = 0; t < z.tri_count; t++)
                for (int k = 0; k < 3; k++) {
                    cr_assert_lt(z.tris[t].v[k], z.vert_count);
                    cr_assert(z.tris[t].nb[k] >= -1 && z.tris[t].nb[k] < (int32_t)z.tri_count);
                }
            for (uint32_t l = 0; l < z.link_count; l++) cr_assert_lt(z.links[l].src, z.tri_count);
            nm_pack_free(&z);
            nm_pack_free(&want);
        }
    }
    nm_pack_free(&whole);
    fixture_free(&f);
}

Test(pack, zone_load_keeps_the_tier_children_and_the_last_of_equal_names)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    nm_pack z;
    nm_error err = {0};
    cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, "alpha", 1, &z, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(z.zone_count, 2);
    cr_assert_eq(z.zones[0].id, 1);
    cr_assert_eq(z.zones[1].id, 3, "the tier child of alpha comes along");
    int tier_links = 0;
    for (uint32_t i = 0; i < z.offmesh_count; i++) {
        cr_assert(z.offmesh[i].zone_id == 1 || z.offmesh[i].zone_id == 3);
        tier_links += z.offmesh[i].zone_id == 3;
    }
    cr_assert_eq(tier_links, 1);
    nm_pack_free(&z);

    cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, "gamma", 1, &z, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(z.zone_count, 1);
    cr_assert_eq(z.zones[0].id, 7, "the last zone named gamma wins");
    cr_assert_eq(z.tri_base, f.pack.zones[4].first_tri);
    cr_assert_eq(z.tri_count, f.pack.zones[4].tri_count);
    nm_pack_free(&z);

    cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, "alpha_tier1", 1, &z, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(z.tri_count, 0);
    cr_assert_eq(z.vert_count, 0);
    cr_assert_eq(z.link_count, 0);
    cr_assert_eq(z.offmesh_count, 1, "a tier zone keeps only its own off-mesh links");
    cr_assert_eq(z.offmesh[0].zone_id, 3);
    nm_pack_free(&z);
    fixture_free(&f);
}

Test(pack, save_and_load_through_a_gzip_file)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    char path[256];
    snprintf(path, sizeof path, "/tmp/nm_pack_test_%d.nav.gz", (int)getpid());
    nm_error err = {0};
    cr_assert_eq(nm_pack_save(&f.pack, &kSmall, path, &err), NM_OK, "%s", err.msg);
    nm_pack q;
    cr_assert_eq(nm_pack_load(path, NULL, &q, &err), NM_OK, "%s", err.msg);
    assert_same(&f.pack, &q);
    cr_assert_eq(q.file_fnv, nm_fnv1a(NM_FNV_OFFSET, f.bytes.p, f.bytes.size), "FNV of the decompressed bytes");
    nm_pack_free(&q);
    nm_pack_load_opts zo = {.zone = "beta"};
    cr_assert_eq(nm_pack_load(path, &zo, &q, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(q.tri_count, f.pack.zones[1].tri_count);
    nm_pack_free(&q);
    remove(path);
    fixture_free(&f);
}

/* ---- the byte format, checked independently ------------------------------------------------- */
/* The 7 raw streams of a triangle chunk written from the article's description. */
static void raw_tri_streams(const nm_pack *p, uint32_t first, uint32_t n, nm_buf s[7])
{
    memset(s, 0, 7 * sizeof *s);
    nm_buf_zeros(&s[3], (n * 3 + 7) / 8);
    int64_t prev = 0, prev_c = 0;
    for (uint32_t i = 0; i < n; i++) {
        const nm_tri *t = &p->tris[first + i];
        nm_buf_varint(&s[0], nm_zig((int64_t)t->v[0] - prev));
        prev = t->v[0];
        nm_buf_varint(&s[1], nm_zig((int64_t)t->v[1] - t->v[0]));
        nm_buf_varint(&s[2], nm_zig((int64_t)t->v[2] - t->v[0]));
        for (int k = 0; k < 3; k++)
            if (t->nb[k] >= 0) {
                s[3].p[(i * 3 + k) / 8] |= (uint8_t)(1u << (7 - (i * 3 + k) % 8));
                nm_buf_varint(&s[4], nm_zig((int64_t)t->nb[k] - (int64_t)(first + i)));
            }
    }
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && p->components[first + j] == p->components[first + i]) j++;
        nm_buf_varint(&s[5], nm_zig((int64_t)p->components[first + i] - prev_c));
        prev_c = p->components[first + i];
        nm_buf_varint(&s[6], j - i);
        i = j;
    }
}

static void encode_streams(nm_buf *s, int n, int level, nm_buf *out)
{
    nm_error err = {0};
    for (int k = 0; k < n; k++) cr_assert_eq(nm_stream_encode(out, s[k].p, s[k].size, level, &err), NM_OK);
}

static void free_streams(nm_buf *s, int n)
{
    for (int k = 0; k < n; k++) nm_buf_free(&s[k]);
}

Test(pack, triangle_chunks_match_an_independent_encoding_of_the_article_layout)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    fx_file ff;
    cr_assert(fx_split(f.bytes.p, f.bytes.size, &ff));
    int g = fx_find(&ff, "BGEO");
    const uint8_t *geo = ff.sec[g].bytes;
    cr_assert(memcmp(geo, "BGEO", 4) == 0);
    cr_assert_eq(fx_get32(geo + 12), f.pack.tri_count);
    cr_assert_eq(fx_get32(geo + 24), 8, "triangle chunk length");
    uint64_t tdir = fx_chunk_dir(&ff, 1);
    size_t chunks = (f.pack.tri_count + 7) / 8;
    for (size_t c = 0; c < chunks; c++) {
        const uint8_t *e = geo + tdir + 16 * c;
        uint32_t n = (uint32_t)(c + 1 < chunks ? 8 : f.pack.tri_count - 8 * c);
        nm_buf s[7], enc = {0};
        raw_tri_streams(&f.pack, (uint32_t)(8 * c), n, s);
        encode_streams(s, 7, kSmall.level, &enc);
        cr_assert_eq(fx_get32(e + 8), enc.size, "chunk %zu size", c);
        cr_assert(memcmp(geo + fx_get64(e), enc.p, enc.size) == 0, "chunk %zu bytes", c);
        free_streams(s, 7);
        nm_buf_free(&enc);
    }
    /* build_hash over the canonical bytes, computed here from the article's description:
     * zone table bytes, vertex records, 36-byte triangle records with ((a+b)+c)/3.0f centres,
     * link records. */
    uint64_t h = nm_fnv1a(NM_FNV_OFFSET, geo + fx_get64(geo + 64), fx_get32(geo + 32));
    for (uint32_t i = 0; i < f.pack.vert_count; i++) {
        float rec[3] = {f.pack.verts[i].u, f.pack.verts[i].v, f.pack.verts[i].h};
        h = nm_fnv1a(h, rec, 12);
    }
    for (uint32_t i = 0; i < f.pack.tri_count; i++) {
        const nm_tri *t = &f.pack.tris[i];
        const nm_vertex *a = &f.pack.verts[t->v[0]], *b = &f.pack.verts[t->v[1]], *c = &f.pack.verts[t->v[2]];
        uint32_t rec[9];
        float cu = ((a->u + b->u) + c->u) / 3.0f, cv = ((a->v + b->v) + c->v) / 3.0f;
        memcpy(rec, t->v, 12);
        memcpy(rec + 3, t->nb, 12);
        rec[6] = f.pack.components[i];
        memcpy(rec + 7, &cu, 4);
        memcpy(rec + 8, &cv, 4);
        h = nm_fnv1a(h, rec, 36);
    }
    for (uint32_t i = 0; i < f.pack.link_count; i++) h = nm_fnv1a(h, &f.pack.links[i], 8);
    cr_assert_eq(fx_get64(f.bytes.p + 56), h, "build_hash in the header");
    /* Link chunk aux is the chunk's first source. */
    uint64_t ldir = fx_chunk_dir(&ff, 2);
    for (size_t c = 0; c * 20 < f.pack.link_count; c++)
        cr_assert_eq(fx_get32(geo + ldir + 16 * c + 12), f.pack.links[c * 20].src);
    fx_file_free(&ff);
    fixture_free(&f);
}

Test(pack, zlib_decoder_reads_the_streams_we_write)
{
    fixture f;
    fixture_make(&f, 1, &(nm_pack_write_opts){.vert_chunk = 16, .tri_chunk = 8, .link_chunk = 20});
    fx_file ff;
    cr_assert(fx_split(f.bytes.p, f.bytes.size, &ff));
    const uint8_t *geo = ff.sec[fx_find(&ff, "BGEO")].bytes;
    const uint8_t *e = geo + fx_chunk_dir(&ff, 0) + 16; /* vertex chunk 1: records 16..31 */
    nm_cursor c = nm_cur(geo + fx_get64(e), fx_get32(e + 8));
    uint64_t len = nm_cur_varint(&c);
    const uint8_t *z = nm_cur_bytes(&c, (size_t)len);
    cr_assert_not_null(z);
    cr_assert_eq(nm_cur_left(&c), 0, "a vertex chunk is one stream");
    uint8_t plain[16 * 12 + 8];
    uLongf n = sizeof plain;
    cr_assert_eq(uncompress(plain, &n, z, (uLong)len), Z_OK);
    cr_assert_eq(n, 16 * 12);
    for (int i = 0; i < 16; i++) {
        uint8_t rec[12];
        for (int j = 0; j < 12; j++) rec[j] = plain[j * 16 + i]; /* byte plane j, record i */
        float u, v, h;
        memcpy(&u, rec, 4);
        memcpy(&v, rec + 4, 4);
        memcpy(&h, rec + 8, 4);
        cr_assert(u == f.pack.verts[16 + i].u && v == f.pack.verts[16 + i].v && h == f.pack.verts[16 + i].h);
    }
    fx_file_free(&ff);
    fixture_free(&f);
}

Test(pack, large_pack_decodes_in_batches_identically_with_1_and_4_workers, .timeout = 300)
{
    /* 1.2 M triangles in chunks of 100000: the first batch takes 10 chunks (2^20 records at most),
     * the second the remaining 2. */
    nm_pack p;
    fx_build(&p, 9, 8000);
    nm_pack_write_opts o = {.vert_chunk = 65536, .tri_chunk = 100000, .link_chunk = 65536, .level = 1};
    nm_buf b = {0};
    must_serialize(&p, &o, &b);
    nm_pack a1, a4;
    nm_error err = {0};
    cr_assert_eq(parse_buf(b.p, b.size, NULL, 1, &a1, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(parse_buf(b.p, b.size, NULL, 4, &a4, &err), NM_OK, "%s", err.msg);
    assert_same(&p, &a1);
    assert_same(&a1, &a4);
    nm_pack_free(&a1);
    nm_pack_free(&a4);
    nm_pack z, want;
    cr_assert_eq(parse_buf(b.p, b.size, "beta", 4, &z, &err), NM_OK, "%s", err.msg);
    cr_assert(fx_expect_zone(&p, "beta", &want));
    assert_same(&want, &z);
    nm_pack_free(&z);
    nm_pack_free(&want);
    nm_buf_free(&b);
    nm_pack_free(&p);
}

Test(pack, boml_v1_section_is_readable)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    fx_file ff;
    cr_assert(fx_split(f.bytes.p, f.bytes.size, &ff));
    int bi = fx_find(&ff, "BOML");
    nm_buf v1 = {0};
    nm_buf_bytes(&v1, "BOML", 4);
    nm_buf_u16(&v1, 1);
    nm_buf_u16(&v1, 80);
    nm_buf_u32(&v1, f.pack.offmesh_count);
    nm_buf_u32(&v1, 0);
    for (uint32_t i = 0; i < f.pack.offmesh_count; i++) {
        const nm_offmesh *o = &f.pack.offmesh[i];
        nm_buf_u16(&v1, o->zone_id);
        nm_buf_u8(&v1, o->kind);
        nm_buf_u8(&v1, 0);
        nm_buf_i32(&v1, o->is_ext);
        nm_buf_i32(&v1, o->bidirectional);
        nm_buf_i32(&v1, o->area);
        nm_buf_u16(&v1, o->link_type);
        nm_buf_u8(&v1, o->direction);
        nm_buf_u8(&v1, 0);
        nm_buf_f32(&v1, o->radius);
        nm_buf_f32(&v1, o->cost_modifier);
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++) nm_buf_f32(&v1, o->pts[k][j]);
        nm_buf_u32(&v1, 0);
    }
    nm_free(ff.sec[bi].bytes);
    ff.sec[bi].bytes = v1.p;
    ff.sec[bi].size = v1.size;
    nm_buf out = {0};
    fx_join(&ff, &out);
    nm_pack q;
    nm_error err = {0};
    cr_assert_eq(parse_buf(out.p, out.size, NULL, 1, &q, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(q.boml_version, 1);
    cr_assert_eq(q.offmesh_count, f.pack.offmesh_count);
    for (uint32_t i = 0; i < q.offmesh_count; i++) {
        nm_offmesh want = f.pack.offmesh[i];
        want.dir_ok = 0;
        want.start_tri = want.end_tri = NM_BOML_NO_TRI;
        cr_assert(memcmp(q.offmesh[i].pts, want.pts, sizeof want.pts) == 0);
        cr_assert_eq(q.offmesh[i].zone_id, want.zone_id);
        cr_assert_eq(q.offmesh[i].area, want.area);
        cr_assert_eq(q.offmesh[i].start_tri, NM_BOML_NO_TRI);
        cr_assert_eq(q.offmesh[i].end_tri, NM_BOML_NO_TRI);
        cr_assert_eq(q.offmesh[i].radius, want.radius);
    }
    nm_pack_free(&q);
    nm_pack_load_opts zo = {.zone = "beta"};
    cr_assert_eq(nm_pack_parse(out.p, out.size, "v1.nav", &zo, &q, &err), NM_OK, "%s", err.msg);
    for (uint32_t i = 0; i < q.offmesh_count; i++) cr_assert_eq(q.offmesh[i].zone_id, 2);
    nm_pack_free(&q);
    nm_buf_free(&out);
    fx_file_free(&ff);
    fixture_free(&f);
}

Test(pack, duplicate_sections_last_bgeo_boml_bsrf_win_first_bgrd_wins)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    fx_file ff;
    cr_assert(fx_split(f.bytes.p, f.bytes.size, &ff));
    /* New order: junk BGEO, an empty BOML, the real sections, then a second BGRD. */
    fx_file g = {0};
    memcpy(g.header, ff.header, 80);
    memcpy(g.sec[0].tag, "BGEO", 4);
    g.sec[0].size = 5;
    g.sec[0].bytes = (uint8_t *)nm_calloc(5, 1);
    memcpy(g.sec[1].tag, "BOML", 4);
    g.sec[1].size = 16;
    g.sec[1].bytes = (uint8_t *)nm_calloc(16, 1);
    memcpy(g.sec[1].bytes, "BOML\x02\x00\x58\x00", 8);
    g.count = 2;
    for (uint32_t i = 0; i < ff.count; i++) g.sec[g.count++] = ff.sec[i];
    memcpy(g.sec[g.count].tag, "BGRD", 4);
    g.sec[g.count].size = 3;
    g.sec[g.count++].bytes = (uint8_t *)nm_calloc(3, 1);
    nm_buf out = {0};
    fx_join(&g, &out);
    nm_pack q;
    nm_error err = {0};
    cr_assert_eq(parse_buf(out.p, out.size, NULL, 1, &q, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(q.offmesh_count, f.pack.offmesh_count, "the last BOML wins");
    cr_assert_eq(nm_pack_section(&q, "BGRD")->size, 50, "the first BGRD wins");
    cr_assert_eq(q.tri_count, f.pack.tri_count);
    nm_pack_free(&q);
    nm_free(g.sec[0].bytes);
    nm_free(g.sec[1].bytes);
    nm_free(g.sec[g.count - 1].bytes);
    nm_buf_free(&out);
    fx_file_free(&ff);
    fixture_free(&f);
}

/* ---- corruption ---------------------------------------------------------------------------------- */
Test(pack, every_truncation_is_an_error_naming_the_file, .timeout = 300)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    for (size_t n = 0; n < f.bytes.size; n++) {
        nm_pack q;
        nm_error err = {0};
        int rc = parse_buf(f.bytes.p, n, NULL, 1, &q, &err);
        cr_assert_neq(rc, NM_OK, "truncation at %zu accepted", n);
        cr_assert(strncmp(err.msg, "test.nav: ", 10) == 0, "message names the file: %s", err.msg);
        rc = parse_buf(f.bytes.p, n, n % 2 ? "beta" : "alpha_tier1", 2, &q, &err);
        cr_assert_neq(rc, NM_OK, "zone load of truncation at %zu accepted", n);
    }
    fixture_free(&f);
}

/* Bytes the format defines as not read (so a flip there may change nothing). */
static bool ignored_byte(const fx_file *ff, const uint8_t *file, size_t at)
{
    if (at < 80) return (at >= 24 && at < 56) || at >= 76; /* legacy offsets, reserved */
    uint64_t dir = fx_get64(file + 64);
    uint64_t off = dir + 24ull * ff->count;
    for (uint32_t i = 0; i < ff->count; i++) {
        if (at >= off && at < off + ff->sec[i].size) {
            size_t r = at - off;
            const char *t = ff->sec[i].tag;
            if (!memcmp(t, "BGEO", 4)) {
                if (r >= 36 && r < 40) return true; /* reserved */
                for (int tb = 0; tb < 2; tb++) {    /* vertex and triangle chunk aux */
                    uint64_t d = fx_chunk_dir(ff, tb);
                    uint32_t total = fx_get32(ff->sec[i].bytes + 8 + 4 * tb), len = fx_get32(ff->sec[i].bytes + 20 + 4 * tb);
                    uint64_t chunks = (total + len - 1) / len;
                    if (r >= d && r < d + 16 * chunks && (r - d) % 16 >= 12) return true;
                }
            }
            if (!memcmp(t, "BSRF", 4) || !memcmp(t, "BOML", 4)) {
                if (r >= 12 && r < 16) return true; /* reserved */
            }
            if (!memcmp(t, "BOML", 4) && r >= 16) {
                size_t k = (r - 16) % 88;
                return k == 3 || k == 19 || (k >= 77 && k < 80); /* padding */
            }
            return false;
        }
        off += ff->sec[i].size;
    }
    return false;
}

/* Header, directory and BGEO bytes that hold data we keep (flags) rather than check. */
static bool kept_not_checked(const uint8_t *file, size_t at, uint32_t count)
{
    uint64_t dir = fx_get64(file + 64);
    if (at == 6 || at == 7) return true;                          /* header flags */
    if (at >= dir && at < dir + 24ull * count) return (at - dir) % 24 >= 4 && (at - dir) % 24 < 8; /* entry flags */
    return false;
}

/* Marks the deflate data (between zlib header and Adler-32) of every BGEO chunk stream. */
static bool *deflate_bytes(const fx_file *ff, size_t file_size, uint64_t geo_at)
{
    bool *m = (bool *)calloc(file_size, 1);
    const uint8_t *g = ff->sec[0].bytes;
    for (int t = 0; t < 3; t++) {
        uint64_t d = fx_chunk_dir(ff, t);
        uint32_t total = fx_get32(g + 8 + 4 * t), len = fx_get32(g + 20 + 4 * t);
        for (uint64_t c = 0; c * len < total; c++) {
            const uint8_t *e = g + d + 16 * c;
            nm_cursor cc = nm_cur(g + fx_get64(e), fx_get32(e + 8));
            while (nm_cur_left(&cc)) {
                uint64_t n = nm_cur_varint(&cc);
                size_t start = (size_t)(geo_at + fx_get64(e) + cc.pos);
                for (uint64_t i = 2; i + 4 < n; i++) m[start + i] = true;
                nm_cur_skip(&cc, (size_t)n);
            }
        }
    }
    return m;
}

/* Every directory entry (parsed sections included) as kept by the reader. */
static bool directory_equal(const nm_pack *a, const nm_pack *b)
{
    if (a->section_count != b->section_count) return false;
    for (uint32_t i = 0; i < a->section_count; i++) {
        const nm_section *x = &a->sections[i], *y = &b->sections[i];
        if (memcmp(x->tag, y->tag, 4) || x->flags != y->flags || x->offset != y->offset || x->size != y->size)
            return false;
    }
    return true;
}

Test(pack, flipped_bytes_give_an_error_or_a_different_pack, .timeout = 300)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    fx_file ff;
    cr_assert(fx_split(f.bytes.p, f.bytes.size, &ff));
    uint64_t dir = fx_get64(f.bytes.p + 64), geo_lo = dir + 24ull * ff.count, geo_hi = geo_lo + ff.sec[0].size;
    cr_assert(memcmp(ff.sec[0].tag, "BGEO", 4) == 0);
    nm_pack base;
    nm_error berr = {0};
    cr_assert_eq(parse_buf(f.bytes.p, f.bytes.size, NULL, 1, &base, &berr), NM_OK, "%s", berr.msg);
    uint8_t *d = (uint8_t *)malloc(f.bytes.size);
    bool *deflate = deflate_bytes(&ff, f.bytes.size, geo_lo);
    int harmless = 0;
    const uint8_t masks[3] = {0x01, 0x80, 0x24};
    int errors = 0, changed = 0;
    for (size_t at = 0; at < f.bytes.size; at++) {
        for (int m = 0; m < 3; m++) {
            memcpy(d, f.bytes.p, f.bytes.size);
            d[at] ^= masks[m];
            nm_pack q;
            nm_error err = {0};
            int rc = parse_buf(d, f.bytes.size, NULL, 1, &q, &err);
            bool same = rc == NM_OK && fx_pack_equal(&base, &q, NULL, 0) && directory_equal(&base, &q);
            if (rc == NM_OK) nm_pack_free(&q);
            errors += rc != NM_OK;
            changed += rc == NM_OK && !same;
            if (ignored_byte(&ff, f.bytes.p, at)) continue;
            /* A deflate stream may carry bits no decoder reads (padding after a block); a flip
             * there leaves the same pack and is harmless. Count them; everything else must show. */
            if (same && deflate[at]) {
                harmless++;
                continue;
            }
            cr_assert(!same, "flip %02x at %zu went unnoticed", masks[m], at);
            /* In BGEO (zone table, chunk directories, chunks) the stream checks or build_hash
             * must catch every flip; header and directory flips may instead change what we keep. */
            if (at >= geo_lo && at < geo_hi)
                cr_assert_neq(rc, NM_OK, "flip %02x at BGEO+%zu not detected", masks[m], (size_t)(at - geo_lo));
            else if (at < geo_lo && rc == NM_OK)
                cr_assert(kept_not_checked(f.bytes.p, at, ff.count) || !same);
            /* Zone loads of damaged files must not crash either (ASan/UBSan watch this). */
            rc = parse_buf(d, f.bytes.size, m == 0 ? "beta" : "alpha", 1, &q, &err);
            if (rc == NM_OK) nm_pack_free(&q);
        }
    }
    cr_assert_lt(harmless, (int)(geo_hi - geo_lo) * 3 / 50, "%d harmless flips inside deflate data", harmless);
    free(deflate);
    cr_assert_gt(errors, 0);
    cr_assert_gt(changed, 0, "flags, section bytes and surfaces change without an error");
    free(d);
    nm_pack_free(&base);
    fx_file_free(&ff);
    fixture_free(&f);
}

/* Runs a parse of `out` that must fail with `code` and a message containing `needle`. */
static void expect_error(const nm_buf *b, const char *zone, int code, const char *needle)
{
    nm_pack q;
    nm_error err = {0};
    int rc = parse_buf(b->p, b->size, zone, 1, &q, &err);
    cr_assert_eq(rc, code, "expected %s, got %d (%s)", needle, rc, err.msg);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    cr_assert(strncmp(err.msg, "test.nav: ", 10) == 0, "message names the file: %s", err.msg);
    cr_assert_eq(q.tris, NULL, "output is zeroed on failure");
    /* The same error, word for word, with 4 workers. */
    nm_error err4 = {0};
    cr_assert_eq(parse_buf(b->p, b->size, zone, 4, &q, &err4), code);
    cr_assert_str_eq(err4.msg, err.msg);
}

static void patched(const fixture *f, size_t at, const void *bytes, size_t n, nm_buf *out)
{
    out->size = 0;
    nm_buf_bytes(out, f->bytes.p, f->bytes.size);
    memcpy(out->p + at, bytes, n);
}

static size_t section_at(const fixture *f, const char *tag)
{
    fx_file ff;
    cr_assert(fx_split(f->bytes.p, f->bytes.size, &ff));
    uint64_t dir = fx_get64(f->bytes.p + 64);
    for (uint32_t i = 0; i < ff.count; i++) {
        const uint8_t *e = f->bytes.p + dir + 24 * i;
        if (!memcmp(e, tag, 4)) {
            fx_file_free(&ff);
            return (size_t)fx_get64(e + 8);
        }
    }
    fx_file_free(&ff);
    cr_assert_fail("no %s", tag);
    return 0;
}

Test(pack, header_errors_are_named)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    nm_buf b = {0};
    patched(&f, 0, "BNAX", 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "bad magic");
    uint8_t v[2] = {4, 0};
    patched(&f, 4, v, 2, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "version 4 not supported");
    v[0] = 6;
    patched(&f, 4, v, 2, &b);
    expect_error(&b, "alpha", NM_ERR_CORRUPT, "version 6 not supported");
    uint8_t z[4] = {0};
    patched(&f, 20, z, 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "link count is 0");
    uint8_t c[4];
    fx_put32(c, f.pack.vert_count - 1);
    patched(&f, 12, c, 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "differ from the BNAV header");
    uint8_t h[8];
    fx_put64(h, f.pack.build_hash ^ 1);
    patched(&f, 56, h, 8, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "build_hash");
    /* A zone load does not check build_hash (integrity is left to gzip's CRC). */
    nm_pack q;
    nm_error err = {0};
    cr_assert_eq(parse_buf(b.p, b.size, "beta", 1, &q, &err), NM_OK, "%s", err.msg);
    nm_pack_free(&q);
    uint8_t big[8];
    fx_put64(big, (uint64_t)1 << 40);
    patched(&f, 64, big, 8, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "section directory");
    /* A section entry pointing past the end of the file. */
    fx_put64(big, f.bytes.size - 10);
    patched(&f, 80 + 24 * 4 + 8, big, 8, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "outside the file");
    nm_buf_free(&b);
    fixture_free(&f);
}

Test(pack, bgeo_errors_are_named)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    size_t g = section_at(&f, "BGEO");
    nm_buf b = {0};
    uint8_t z[4] = {0};
    patched(&f, g + 24, z, 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "BGEO: triangle chunk length is 0");
    uint8_t t[4];
    fx_put32(t, f.pack.tri_count + 1);
    patched(&f, g + 12, t, 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "differ from the BNAV header");
    /* Duplicate zone ids: zone 1 ("beta") takes zone 0's id. */
    uint64_t zt = fx_get64(f.bytes.p + g + 64);
    uint8_t id[2] = {1, 0};
    patched(&f, g + zt + 48 + 5, id, 2, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "duplicate zone id 1");
    /* A chunk directory entry pointing outside the section. */
    uint64_t tdir = fx_get64(f.bytes.p + g + 48);
    uint8_t off[8];
    fx_put64(off, 1u << 30);
    patched(&f, g + tdir + 16 * 2, off, 8, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "triangle chunk 2: [1073741824, +");
    /* A crafted count the bytes cannot hold is refused before anything is allocated for it. */
    uint8_t huge[4];
    fx_put32(huge, 0x7FFFFFF0u);
    nm_buf_free(&b);
    patched(&f, 16, huge, 4, &b);
    memcpy(b.p + g + 12, huge, 4);
    memcpy(b.p + g + 24, huge, 4); /* one huge triangle chunk */
    expect_error(&b, NULL, NM_ERR_CORRUPT, "records cannot fit");
    /* An unknown zone name. */
    expect_error(&f.bytes, "no_such_zone", NM_ERR_ARG, "zone 'no_such_zone' not in the zone table");
    nm_buf_free(&b);
    fixture_free(&f);
}

static void replace_and_expect(const fixture *f, int table, size_t chunk, const nm_buf *chunk_bytes,
                               const char *zone, const char *needle)
{
    fx_file ff;
    cr_assert(fx_split(f->bytes.p, f->bytes.size, &ff));
    cr_assert(fx_replace_chunk(&ff, table, chunk, chunk_bytes->p, chunk_bytes->size));
    nm_buf out = {0};
    fx_join(&ff, &out);
    expect_error(&out, zone, NM_ERR_CORRUPT, needle);
    nm_buf_free(&out);
    fx_file_free(&ff);
}

Test(pack, triangle_chunk_errors_name_chunk_and_stream)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    const uint32_t chunk = 3, first = 24, n = 8;
    nm_buf s[7], enc = {0};

    /* Sanity: the untouched independent encoding is accepted (and only then do faults count). */
    raw_tri_streams(&f.pack, first, n, s);
    encode_streams(s, 7, 6, &enc);
    {
        fx_file ff;
        cr_assert(fx_split(f.bytes.p, f.bytes.size, &ff));
        cr_assert(fx_replace_chunk(&ff, 1, chunk, enc.p, enc.size));
        nm_buf out = {0};
        fx_join(&ff, &out);
        nm_pack q;
        nm_error err = {0};
        cr_assert_eq(parse_buf(out.p, out.size, NULL, 1, &q, &err), NM_OK, "%s", err.msg);
        nm_pack_free(&q);
        nm_buf_free(&out);
        fx_file_free(&ff);
    }
    free_streams(s, 7);

    /* Bytes left over in stream 4. */
    raw_tri_streams(&f.pack, first, n, s);
    nm_buf_u8(&s[4], 0);
    enc.size = 0;
    encode_streams(s, 7, 6, &enc);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "BGEO: triangle chunk 3: stream 4: 1 bytes left over");
    replace_and_expect(&f, 1, chunk, &enc, "alpha", "BGEO: zone 'alpha': triangle chunk 3: stream 4: 1 bytes left over");
    free_streams(s, 7);

    /* An overlong varint inside stream 0. */
    raw_tri_streams(&f.pack, first, n, s);
    s[0].size = 0;
    for (int i = 0; i < 10; i++) nm_buf_u8(&s[0], 0x80);
    nm_buf_u8(&s[0], 0x01);
    enc.size = 0;
    encode_streams(s, 7, 6, &enc);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "triangle chunk 3: stream 0: triangle 0: truncated or overlong varint");
    free_streams(s, 7);

    /* A vertex index equal to the vertex count. */
    raw_tri_streams(&f.pack, first, n, s);
    s[1].size = 0;
    for (uint32_t i = 0; i < n; i++)
        nm_buf_varint(&s[1], nm_zig(i == 2 ? (int64_t)f.pack.vert_count - f.pack.tris[first + i].v[0]
                                           : (int64_t)f.pack.tris[first + i].v[1] - f.pack.tris[first + i].v[0]));
    enc.size = 0;
    encode_streams(s, 7, 6, &enc);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "stream 1: triangle 26: vertex 120 not below vertex count 120");
    free_streams(s, 7);

    /* A component run of length 0. */
    raw_tri_streams(&f.pack, first, n, s);
    s[6].size = 0;
    nm_buf_varint(&s[6], 0);
    enc.size = 0;
    encode_streams(s, 7, 6, &enc);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "stream 6: run length 0");
    free_streams(s, 7);

    /* Bytes after the last stream of the chunk. */
    raw_tri_streams(&f.pack, first, n, s);
    enc.size = 0;
    encode_streams(s, 7, 6, &enc);
    nm_buf_u8(&enc, 0x42);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "triangle chunk 3: chunk bytes after the last stream: 1 bytes left over");
    free_streams(s, 7);

    /* A zero-length stream and an overlong stream length. */
    enc.size = 0;
    nm_buf_u8(&enc, 0);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "triangle chunk 3: stream 0: stream length is 0");
    enc.size = 0;
    for (int i = 0; i < 11; i++) nm_buf_u8(&enc, 0xFF);
    nm_buf_u8(&enc, 0x01);
    replace_and_expect(&f, 1, chunk, &enc, NULL, "stream length: truncated or overlong varint");
    nm_buf_free(&enc);
    fixture_free(&f);
}

Test(pack, link_and_vertex_chunk_errors_are_named)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    nm_buf s[2] = {{0}}, enc = {0};
    /* Link chunk 1 whose first source is not the aux of its directory entry. */
    for (uint32_t i = 20; i < 40; i++) {
        nm_buf_varint(&s[0], i == 20 ? f.pack.links[i].src + 1 : f.pack.links[i].src - f.pack.links[i - 1].src);
        nm_buf_varint(&s[1], nm_zig((int64_t)f.pack.links[i].dst - f.pack.links[i].src));
    }
    encode_streams(s, 2, 6, &enc);
    replace_and_expect(&f, 2, 1, &enc, NULL, "link chunk 1: aux");
    free_streams(s, 2);
    /* A vertex chunk whose stream holds one record too few. */
    nm_buf raw = {0};
    nm_buf_zeros(&raw, 15 * 12);
    enc.size = 0;
    encode_streams(&raw, 1, 6, &enc);
    replace_and_expect(&f, 0, 2, &enc, NULL, "vertex chunk 2: stream 0: stream inflates to 180 bytes, expected 192");
    nm_buf_free(&raw);
    nm_buf_free(&enc);
    fixture_free(&f);
}

Test(pack, bsrf_and_boml_errors_are_named)
{
    fixture f;
    fixture_make(&f, 1, &kSmall);
    size_t s = section_at(&f, "BSRF"), o = section_at(&f, "BOML");
    nm_buf b = {0};
    uint8_t c[4];
    fx_put32(c, f.pack.tri_count - 1);
    patched(&f, s + 8, c, 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "BSRF (section 1): count 149 differs from triangle count 150");
    fx_put32(c, f.pack.offmesh_count + 1);
    patched(&f, o + 8, c, 4, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "BOML (section 2): section size 720 differs from 16 + count 9 x 88");
    uint8_t id[2] = {0xE7, 0x03};
    patched(&f, o + 16 + 88 * 5, id, 2, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "BOML (section 2): record 5: unknown zone id 999");
    expect_error(&b, "beta", NM_ERR_CORRUPT, "unknown zone id 999");
    uint8_t v[2] = {3, 0};
    patched(&f, o + 4, v, 2, &b);
    expect_error(&b, NULL, NM_ERR_CORRUPT, "BOML (section 2): header: version 3 not 1 or 2");
    nm_buf_free(&b);
    fixture_free(&f);
}

/* ---- the writer refuses what the reader would reject; allocation failures are clean ------------ */
Test(pack, writer_refuses_packs_the_reader_would_reject)
{
    nm_pack p;
    fx_build(&p, 2, 1);
    nm_buf b = {0};
    nm_error err = {0};
    p.tris[5].v[1] = p.vert_count;
    cr_assert_eq(nm_pack_serialize(&p, NULL, &b, &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "triangle 5: vertex 120"), "%s", err.msg);
    p.tris[5].v[1] = 0;
    nm_link l = p.links[3];
    p.links[3] = p.links[4];
    p.links[4] = l;
    if (p.links[3].src != p.links[4].src) {
        cr_assert_eq(nm_pack_serialize(&p, NULL, &b, &err), NM_ERR_ARG);
        cr_assert(strstr(err.msg, "not sorted"), "%s", err.msg);
    }
    p.links[4] = p.links[3];
    p.links[3] = l;
    p.zones[1].id = p.zones[0].id;
    cr_assert_eq(nm_pack_serialize(&p, NULL, &b, &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "share zone id"), "%s", err.msg);
    p.zones[1].id = 2;
    uint32_t links = p.link_count;
    p.link_count = 0;
    cr_assert_eq(nm_pack_serialize(&p, NULL, &b, &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "link count is 0"), "%s", err.msg);
    p.link_count = links;
    cr_assert_eq(nm_pack_serialize(&p, &kSmall, &b, &err), NM_OK, "%s", err.msg);
    nm_buf_free(&b);
    nm_pack_free(&p);
}

Test(pack, every_allocation_failure_is_reported_and_leaks_nothing, .timeout = 300)
{
    /* Fewer, larger chunks than kSmall: fewer streams, so fewer allocations to fail (slow under ASan). */
    const nm_pack_write_opts big = {.vert_chunk = 64, .tri_chunk = 64, .link_chunk = 256, .level = 1};
    fixture f;
    fixture_make(&f, 1, &big);
    const char *zones[2] = {NULL, "alpha"};
    for (int z = 0; z < 2; z++) {
        int rc = NM_ERR_NOMEM;
        size_t n;
        for (n = 1; n < 100000 && rc != NM_OK; n++) {
            nm_pack q;
            nm_error err = {0};
            nm_alloc_fail_after(n);
            rc = parse_buf(f.bytes.p, f.bytes.size, zones[z], 1, &q, &err);
            nm_alloc_fail_after(0);
            cr_assert(rc == NM_OK || rc == NM_ERR_NOMEM, "failing allocation %zu: %d %s", n, rc, err.msg);
            if (rc == NM_OK) nm_pack_free(&q);
        }
        cr_assert_gt(n, 3, "the parse allocates");
    }
    int rc = NM_ERR_NOMEM;
    for (size_t n = 1; n < 100000 && rc != NM_OK; n++) {
        nm_buf b = {0};
        nm_error err = {0};
        nm_pack_write_opts o = big;
        o.workers = 1;
        nm_alloc_fail_after(n);
        rc = nm_pack_serialize(&f.pack, &o, &b, &err);
        nm_alloc_fail_after(0);
        cr_assert(rc == NM_OK || rc == NM_ERR_NOMEM, "failing allocation %zu: %d %s", n, rc, err.msg);
        if (rc == NM_OK) cr_assert(b.size == f.bytes.size && memcmp(b.p, f.bytes.p, b.size) == 0);
        nm_buf_free(&b);
    }
    fixture_free(&f);
}

/* ---- the fuzz seed corpus stays readable ------------------------------------------------------- */
Test(pack, fuzz_seed_corpus_packs_load_whole_and_per_zone)
{
    const char *root = getenv("NM_SOURCE_ROOT");
    if (!root) cr_skip_test("NM_SOURCE_ROOT not set");
    const char *names[] = {"fixture_small_chunks.nav", "fixture_one_chunk.nav", "minimal.nav", "tiny_all_sections.nav"};
    for (int i = 0; i < 4; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/pack/%s", root, names[i]);
        nm_pack q;
        nm_error err = {0};
        cr_assert_eq(nm_pack_load(path, NULL, &q, &err), NM_OK, "%s", err.msg);
        cr_assert_gt(q.tri_count, 0);
        nm_pack_free(&q);
        nm_pack_load_opts zo = {.zone = "alpha"};
        cr_assert_eq(nm_pack_load(path, &zo, &q, &err), NM_OK, "%s", err.msg);
        cr_assert_gt(q.tri_count, 0);
        nm_pack_free(&q);
    }
}

/* Random leg ends (navbench) must lie where a character can stand: issue 12's large world leg 11
 * asked for the centre of a facade's vertical strip. Triangles in {u, v, h} (px, px, m). */
Test(pack, a_character_stands_on_flat_and_gentle_triangles_not_on_facades_walls_or_water)
{
    nm_vertex v[] = {
        {0, 0, 0}, {4, 0, 0}, {0, 4, 0},       /* 0: flat ground */
        {10, 0, 0}, {10, 0, 8}, {10, 4, 0},    /* 1: a facade strip, vertical: no extent on the map */
        {20, 0, 0}, {24, 0, 4}, {20, 4, 0},    /* 2: 1 m a px, the grid's slope step kSlope: stands */
        {30, 0, 0}, {34, 0, 4.5f}, {30, 4, 0}, /* 3: steeper than kSlope */
        {40, 0, 0}, {44, 0, 0}, {40, 4, 0},    /* 4: flat water (area 12, not in the whitelist) */
        {50, 0, 0}, {50, 4, 0}, {54, 0, 0},    /* 5: flat, the other winding */
    };
    nm_tri t[6];
    nm_surface s[6];
    memset(s, 0, sizeof s);
    for (uint32_t k = 0; k < 6; k++) {
        t[k] = (nm_tri){{3 * k, 3 * k + 1, 3 * k + 2}, {-1, -1, -1}};
        s[k].area = k == 4 ? 12 : 0;
        s[k].flags = 1u << s[k].area;
    }
    nm_pack p = {0};
    p.verts = v, p.vert_count = 18, p.tris = t, p.tri_count = 6, p.surfaces = s, p.surface_count = 6;
    const bool want[6] = {true, false, true, false, false, true};
    for (uint32_t k = 0; k < 6; k++)
        cr_expect_eq(nm_tri_standable(&p, k), want[k], "triangle %u: standable %d, want %d", k,
                     nm_tri_standable(&p, k), want[k]);
    cr_expect_not(nm_tri_standable(&p, 6), "out of range");
    p.surface_count = 0; /* no BSRF: every area walkable */
    cr_expect(nm_tri_standable(&p, 4));
}
