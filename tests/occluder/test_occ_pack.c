/* test_occ_pack.c — the occluder pack's bytes: every scene check of the reference readers on
 * hand-assembled OCLZ bodies, the container's own checks, truncation at every offset, flipped
 * bytes, failed allocations, and the (path, zone) scene cache with its cached failures. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "occ_fixture.h"

/* ---- hand-assembled scenes --------------------------------------------------------------------- */
typedef struct hand {
    char magic[4];
    uint32_t version, tc, ic, bc, bn;
    double pos_q, cell, a, b;
    uint32_t rot, shift;
    int64_t ox, oz;
    nm_buf st[NM_OCC_kStreamCount];
    size_t extra; /* zero bytes after the 12th stream */
} hand;

static void put_varints(nm_buf *b, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) nm_buf_varint(b, v[i]);
}
#define VARINTS(buf, ...)                                                                     \
    do {                                                                                      \
        const uint64_t v_[] = {__VA_ARGS__};                                                  \
        put_varints(buf, v_, sizeof v_ / sizeof v_[0]);                                       \
    } while (0)

/* One triangle (0,0,0) (1,0,0) (0,0,1), one identity instance, no blocks. */
static void hand_init(hand *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, "OCLZ", 4);
    h->version = 1;
    h->tc = 1;
    h->ic = 1;
    h->pos_q = 1.0 / 1024;
    h->cell = 1;
    h->b = 1.0 / 64;
    h->rot = 1000;
    h->shift = 10;
    VARINTS(&h->st[0], 3, 1, 0);
    VARINTS(&h->st[1], 0, 2, 1, 0, 0, 0, 0, 0, 2);
    VARINTS(&h->st[2], 0, 0, 0);
    VARINTS(&h->st[3], 1);
    VARINTS(&h->st[4], 0, 0, 0);
    nm_buf_u8(&h->st[5], 3);
    VARINTS(&h->st[6], 0, 0, 0);
    VARINTS(&h->st[7], 1, 2048, 2048, 2048, 0);
}

static void hand_reset(hand *h, int s)
{
    nm_buf_free(&h->st[s]);
    memset(&h->st[s], 0, sizeof h->st[s]);
}

static void hand_free(hand *h)
{
    for (int i = 0; i < NM_OCC_kStreamCount; i++) nm_buf_free(&h->st[i]);
}

static void hand_body(const hand *h, nm_buf *o)
{
    nm_buf_bytes(o, h->magic, 4);
    nm_buf_u32(o, h->version);
    nm_buf_u32(o, h->tc);
    nm_buf_u32(o, h->ic);
    nm_buf_u32(o, h->bc);
    nm_buf_u32(o, h->bn);
    nm_buf_f64(o, h->pos_q);
    nm_buf_f64(o, h->cell);
    nm_buf_f64(o, h->a);
    nm_buf_f64(o, h->b);
    nm_buf_u32(o, h->rot);
    nm_buf_u32(o, h->shift);
    nm_buf_i64(o, h->ox);
    nm_buf_i64(o, h->oz);
    for (int i = 0; i < NM_OCC_kStreamCount; i++) {
        nm_buf_u32(o, (uint32_t)h->st[i].size);
        nm_buf_bytes(o, h->st[i].p, h->st[i].size);
    }
    nm_buf_zeros(o, h->extra);
}

/* A container with one record "z" holding `body`. */
static void container(const nm_buf *body, nm_buf *o)
{
    nm_buf_bytes(o, "OCLS", 4);
    nm_buf_u32(o, 1);
    nm_buf_u32(o, 1);
    nm_buf_u16(o, 1);
    nm_buf_bytes(o, "z", 1);
    nm_buf_u32(o, (uint32_t)body->size);
    nm_buf_bytes(o, body->p, body->size);
}

/* Loads the hand scene; returns the status and the message. */
static int hand_load(const hand *h, nm_error *err)
{
    nm_buf body = {0}, file = {0};
    hand_body(h, &body);
    container(&body, &file);
    nm_occ_scene *s = NULL;
    nm_error_clear(err);
    int rc = nm_occ_load_bytes(file.p, file.size, "z", "hand.occluder", &s, err);
    if (rc == NM_OK) cr_assert_not_null(s);
    else cr_assert_null(s);
    nm_occ_free(s);
    nm_buf_free(&body);
    nm_buf_free(&file);
    return rc;
}

static void expect_corrupt(const hand *h, const char *needle)
{
    nm_error err;
    int rc = hand_load(h, &err);
    cr_assert_eq(rc, NM_ERR_CORRUPT, "expected corrupt (%s), got %d: %s", needle, rc, err.msg);
    cr_assert_not_null(strstr(err.msg, needle), "message \"%s\" should mention \"%s\"", err.msg, needle);
    cr_assert_not_null(strstr(err.msg, "hand.occluder"), "message names the file: %s", err.msg);
}

Test(scene_checks, the_hand_scene_itself_loads)
{
    hand h;
    hand_init(&h);
    nm_buf body = {0}, file = {0};
    hand_body(&h, &body);
    container(&body, &file);
    nm_occ_scene *s = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_occ_load_bytes(file.p, file.size, "z", NULL, &s, &err), NM_OK, "%s", err.msg);
    nm_occ_info info;
    nm_occ_scene_info(s, &info);
    cr_assert_eq(info.triangles, 1);
    double p0[3] = {0.25, -1, 0.25}, p1[3] = {0.25, 1, 0.25};
    nm_occ_hit hit;
    cr_assert_eq(nm_occ_segment_hits(s, p0, p1, &hit, 1), 1);
    cr_assert(hit.up, "(1,0,0)×(0,0,1) has y = −1: up");
    nm_occ_free(s);
    nm_buf_free(&body);
    nm_buf_free(&file);
    hand_free(&h);
}

Test(scene_checks, header_fields)
{
    hand h;
    hand_init(&h);
    memcpy(h.magic, "OCLX", 4);
    expect_corrupt(&h, "magic");
    memcpy(h.magic, "OCLZ", 4);
    h.version = 2;
    expect_corrupt(&h, "version");
    h.version = 1;
    h.cell = 0;
    expect_corrupt(&h, "terrain cell");
    h.cell = NAN;
    expect_corrupt(&h, "terrain cell");
    h.cell = 1;
    h.rot = 0;
    expect_corrupt(&h, "rot_scale is 0");
    h.rot = 1000;
    h.shift = 53;
    expect_corrupt(&h, "scale_shift");
    h.shift = 52;
    hand_reset(&h, 7);
    VARINTS(&h.st[7], 1, 0, 0, 0, 0);
    nm_error err;
    cr_assert_eq(hand_load(&h, &err), NM_OK, "scale_shift 52 is allowed: %s", err.msg);
    hand_free(&h);
}

Test(scene_checks, stream_framing)
{
    hand h;
    hand_init(&h);
    h.extra = 1;
    expect_corrupt(&h, "after the 12th stream");
    h.extra = 0;
    nm_buf_u8(&h.st[0], 0);
    expect_corrupt(&h, "left over");
    hand_free(&h);
    /* A stream length running past the body. */
    hand_init(&h);
    nm_buf body = {0}, file = {0};
    hand_body(&h, &body);
    nm_buf_put_u32(&body, body.size - 4, 1); /* the last stream (hole, empty) claims 1 byte */
    container(&body, &file);
    nm_occ_scene *s = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_occ_load_bytes(file.p, file.size, "z", NULL, &s, &err), NM_ERR_CORRUPT);
    cr_assert_not_null(strstr(err.msg, "runs past"), "%s", err.msg);
    nm_buf_free(&body);
    nm_buf_free(&file);
    hand_free(&h);
}

Test(scene_checks, templates)
{
    hand h;
    hand_init(&h);
    h.tc = 2; /* 3 template bytes cannot hold 2 templates */
    expect_corrupt(&h, "2 templates");
    h.tc = 1;
    hand_reset(&h, 0);
    VARINTS(&h.st[0], 3, 1, 122); /* zigzag 61 */
    expect_corrupt(&h, "exponent 61");
    hand_reset(&h, 0);
    VARINTS(&h.st[0], 3, 1, 0);
    hand_reset(&h, 2);
    VARINTS(&h.st[2], 0, 0, 3);
    expect_corrupt(&h, "refers back");
    hand_reset(&h, 2);
    VARINTS(&h.st[2], 0, 1, 1); /* only 1 vertex introduced of 3 */
    expect_corrupt(&h, "introduce 1 vertices");
    hand_reset(&h, 2);
    VARINTS(&h.st[2], 0, 0, 0);
    hand_reset(&h, 0);
    VARINTS(&h.st[0], 3, 2, 0); /* 2 triangles need 6 index bytes */
    expect_corrupt(&h, "triangles exceed");
    hand_reset(&h, 0);
    VARINTS(&h.st[0], 4, 1, 0); /* 4 vertices need 12 vertex bytes */
    expect_corrupt(&h, "vertices exceed");
    hand_reset(&h, 1);
    for (int i = 0; i < 11; i++) nm_buf_u8(&h.st[1], 0x80);
    nm_buf_u8(&h.st[1], 0);
    hand_reset(&h, 0);
    VARINTS(&h.st[0], 3, 1, 0);
    expect_corrupt(&h, "stream 1 (vertex)");
    hand_free(&h);
}

Test(scene_checks, instances)
{
    hand h;
    hand_init(&h);
    h.ic = 2;
    expect_corrupt(&h, "rotation code");
    h.ic = 1;
    hand_reset(&h, 5);
    nm_buf_u8(&h.st[5], 5);
    expect_corrupt(&h, "code 5 > 4");
    hand_reset(&h, 5);
    nm_buf_u8(&h.st[5], 3);
    hand_reset(&h, 6);
    VARINTS(&h.st[6], 0, 2001, 0); /* −1001 against rot_scale 1000 */
    expect_corrupt(&h, "rot_scale 1000");
    hand_reset(&h, 6);
    VARINTS(&h.st[6], 0, 2000, 0); /* exactly −1000 is fine */
    nm_error err;
    cr_assert_eq(hand_load(&h, &err), NM_OK, "%s", err.msg);
    hand_reset(&h, 7);
    VARINTS(&h.st[7], 1, 2048, 2048, 2048, 1);
    expect_corrupt(&h, "scale index 1 >= palette size 1");
    hand_reset(&h, 7);
    VARINTS(&h.st[7], 1, 2048, 2048, 2048, 0);
    hand_reset(&h, 3);
    VARINTS(&h.st[3], 2);
    expect_corrupt(&h, "overrun");
    hand_reset(&h, 3);
    VARINTS(&h.st[3], 1);
    /* A code-4 instance needs 36 matrix bytes. */
    hand_reset(&h, 5);
    nm_buf_u8(&h.st[5], 4);
    hand_reset(&h, 6);
    hand_reset(&h, 7);
    VARINTS(&h.st[7], 0);
    expect_corrupt(&h, "stream 8 (matrix)");
    for (int i = 0; i < 9; i++) nm_buf_f32(&h.st[8], i % 4 == 0 ? 1.0f : 0.0f);
    cr_assert_eq(hand_load(&h, &err), NM_OK, "%s", err.msg);
    hand_free(&h);
}

static void hand_blocks(hand *h, uint32_t n)
{
    h->bc = 1;
    h->bn = n;
    hand_reset(h, 9);
    VARINTS(&h->st[9], 0, 0);
    nm_buf_u8(&h->st[9], 0);
    hand_reset(h, 10);
    hand_reset(h, 11);
    for (uint32_t i = 0; i < n * n; i++) nm_buf_varint(&h->st[10], 0);
}

Test(scene_checks, blocks)
{
    hand h;
    hand_init(&h);
    hand_blocks(&h, 3);
    nm_error err;
    cr_assert_eq(hand_load(&h, &err), NM_OK, "%s", err.msg);
    h.bc = 2;
    expect_corrupt(&h, "2 blocks need");
    hand_blocks(&h, 3);
    h.bn = 4; /* 16 samples, 9 height bytes */
    expect_corrupt(&h, "block_n");
    hand_blocks(&h, 1);
    expect_corrupt(&h, "block_n 1 < 2");
    hand_blocks(&h, 3);
    h.st[9].p[2] = 2;
    expect_corrupt(&h, "hole flag 2 > 1");
    h.st[9].p[2] = 1; /* holes flagged: 4 cells → 1 bitmap byte */
    expect_corrupt(&h, "stream 11 (hole)");
    nm_buf_u8(&h.st[11], 0x9);
    cr_assert_eq(hand_load(&h, &err), NM_OK, "%s", err.msg);
    nm_buf_u8(&h.st[11], 0);
    expect_corrupt(&h, "stream 11 (hole)");
    hand_blocks(&h, 2);
    hand_reset(&h, 10);
    VARINTS(&h.st[10], nm_zig((int64_t)1 << 31), 0, 0, 0);
    expect_corrupt(&h, "int32");
    hand_reset(&h, 10);
    VARINTS(&h.st[10], nm_zig(INT32_MAX), 0, nm_zig(-(int64_t)INT32_MAX - 1 - INT32_MAX), 1);
    expect_corrupt(&h, "sample (1, 1)");
    hand_reset(&h, 10);
    VARINTS(&h.st[10], nm_zig(INT32_MAX), 0, nm_zig(-(int64_t)INT32_MAX - 1 - INT32_MAX), 0);
    cr_assert_eq(hand_load(&h, &err), NM_OK, "INT32_MIN itself fits: %s", err.msg);
    hand_free(&h);
}

/* ---- the container ------------------------------------------------------------------------------ */
static void small_pack(nm_buf *out)
{
    static soup box;
    memset(&box, 0, sizeof box);
    soup_box(&box, 0, 0, 0, 1, 2, 3);
    double local[3 * 24];
    for (uint32_t i = 0; i < box.nv * 3; i++) local[i] = box.xyz[i];
    nm_occ_template_in tm = {local, box.nv, box.tri, box.nt};
    nm_occ_instance_in in[2] = {0};
    in[0].q[0] = 0.2;
    in[0].q[3] = 0.9;
    in[0].scale[0] = 1.5;
    in[0].scale[1] = -2;
    in[0].scale[2] = 1;
    in[0].t[0] = 4;
    in[1].use_matrix = 1;
    for (int i = 0; i < 9; i++) in[1].matrix[i] = (float)(i + 1) * 0.25f;
    in[1].matrix[8] = 7;
    nm_occ_group g = soup_group(&box);
    float h[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t holes[4] = {0, 1, 0, 0};
    nm_occ_terrain_in tr = {.x0 = 0, .z0 = 0, .spacing = 1, .nx = 3, .nz = 3, .heights = h, .holes = holes, .block_n = 3};
    nm_occ_zone_in z[2] = {{.name = "other", .groups = &g, .group_count = 1},
                           {.name = "z", .templates = &tm, .template_count = 1, .instances = in,
                            .instance_count = 2, .groups = &g, .group_count = 1, .terrain = &tr}};
    nm_error err = {0};
    cr_assert_eq(nm_occ_encode(z, 2, out, &err), NM_OK, "%s", err.msg);
}

Test(container, magic_version_records_and_trailing_bytes)
{
    nm_buf b = {0};
    small_pack(&b);
    nm_occ_scene *s = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err), NM_OK, "%s", err.msg);
    nm_occ_info info;
    nm_occ_scene_info(s, &info);
    cr_assert_eq(info.instances, 3);
    cr_assert_eq(info.triangles, 36 + 6);
    nm_occ_free(s);

    b.p[0] = 'X';
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err), NM_ERR_CORRUPT);
    cr_assert_not_null(strstr(err.msg, "magic"), "%s", err.msg);
    b.p[0] = 'O';
    b.p[4] = 2;
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err), NM_ERR_CORRUPT);
    cr_assert_not_null(strstr(err.msg, "version"), "%s", err.msg);
    b.p[4] = 1;
    b.p[8] = 3; /* three records announced, two present */
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err), NM_ERR_CORRUPT);
    cr_assert_not_null(strstr(err.msg, "record 2 of 3"), "%s", err.msg);
    b.p[8] = 1; /* one record announced: the second is trailing garbage */
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "other", NULL, &s, &err), NM_ERR_CORRUPT);
    cr_assert_not_null(strstr(err.msg, "after record"), "%s", err.msg);
    b.p[8] = 2;
    nm_buf_u8(&b, 0);
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err), NM_ERR_CORRUPT,
                 "the container must be used up exactly");
    nm_buf_free(&b);
}

Test(container, only_the_requested_zone_is_decoded)
{
    nm_buf b = {0};
    small_pack(&b);
    /* Break the "z" record's OCLZ magic: "other" still loads, "z" fails naming its record. */
    size_t at = 12 + 2 + 5 + 4;
    uint32_t len = (uint32_t)b.p[at - 4] | (uint32_t)b.p[at - 3] << 8 | (uint32_t)b.p[at - 2] << 16 |
                   (uint32_t)b.p[at - 1] << 24;
    size_t zbody = at + len + 2 + 1 + 4;
    cr_assert_eq(memcmp(b.p + zbody, "OCLZ", 4), 0);
    b.p[zbody] = 'x';
    nm_occ_scene *s = NULL;
    nm_error err = {0};
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "other", NULL, &s, &err), NM_OK, "%s", err.msg);
    nm_occ_free(s);
    cr_assert_eq(nm_occ_load_bytes(b.p, b.size, "z", "p.gz", &s, &err), NM_ERR_CORRUPT);
    cr_assert_not_null(strstr(err.msg, "p.gz: OCLS record 1: zone 'z'"), "%s", err.msg);
    nm_buf_free(&b);
}

Test(container, truncation_at_every_offset_fails_cleanly)
{
    nm_buf b = {0};
    small_pack(&b);
    for (size_t n = 0; n < b.size; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, b.p, n);
        nm_occ_scene *s = NULL;
        nm_error err = {0};
        int rc = nm_occ_load_bytes(copy, n, "z", NULL, &s, &err);
        cr_assert_eq(rc, NM_ERR_CORRUPT, "prefix of %zu bytes: %d", n, rc);
        cr_assert_null(s);
        cr_assert_neq(err.msg[0], 0);
        free(copy);
    }
    /* The same inside the record: every shortened body (its length fixed up) is corrupt too. */
    size_t at = 12 + 2 + 5;
    uint32_t other = (uint32_t)b.p[at] | (uint32_t)b.p[at + 1] << 8 | (uint32_t)b.p[at + 2] << 16 |
                     (uint32_t)b.p[at + 3] << 24;
    size_t zhead = at + 4 + other, zbody = zhead + 2 + 1 + 4, zlen = b.size - zbody;
    for (size_t n = 0; n < zlen; n++) {
        nm_buf c = {0};
        nm_buf_bytes(&c, b.p, zbody);
        nm_buf_put_u32(&c, zbody - 4, (uint32_t)n);
        nm_buf_bytes(&c, b.p + zbody, n);
        nm_occ_scene *s = NULL;
        nm_error err = {0};
        cr_assert_eq(nm_occ_load_bytes(c.p, c.size, "z", NULL, &s, &err), NM_ERR_CORRUPT,
                     "body of %zu of %zu bytes", n, zlen);
        nm_buf_free(&c);
    }
    nm_buf_free(&b);
}

Test(container, flipped_bytes_never_crash)
{
    nm_buf b = {0};
    small_pack(&b);
    static const uint8_t masks[] = {0x01, 0x02, 0x10, 0x40, 0x80, 0xff};
    size_t failures = 0, loads = 0;
    for (size_t i = 0; i < b.size; i++)
        for (size_t m = 0; m < sizeof masks; m++) {
            b.p[i] ^= masks[m];
            nm_occ_scene *s = NULL;
            nm_error err = {0};
            int rc = nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err);
            if (rc == NM_OK) {
                /* Whatever decoded must answer queries without trouble. */
                double take[3] = {0.5, 1, 0.5}, land[3] = {3, 0, 2};
                (void)nm_occ_drop_blocked(s, take, land);
                loads++;
            } else {
                cr_assert(rc == NM_ERR_CORRUPT || rc == NM_ERR_NOMEM, "byte %zu: status %d", i, rc);
                cr_assert_neq(err.msg[0], 0);
                failures++;
            }
            nm_occ_free(s);
            b.p[i] ^= masks[m];
        }
    cr_assert_gt(failures, b.size, "most flips must be caught (%zu of %zu)", failures, failures + loads);
    nm_buf_free(&b);
}

Test(container, every_failed_allocation_is_reported)
{
    nm_buf b = {0};
    small_pack(&b);
    int n = 1;
    for (;; n++) {
        nm_alloc_fail_after((size_t)n);
        nm_occ_scene *s = NULL;
        nm_error err = {0};
        int rc = nm_occ_load_bytes(b.p, b.size, "z", NULL, &s, &err);
        nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            nm_occ_free(s);
            break;
        }
        cr_assert_eq(rc, NM_ERR_NOMEM, "allocation %d: %s", n, err.msg);
        cr_assert_null(s);
        cr_assert_lt(n, 1000);
    }
    cr_assert_gt(n, 5, "the load allocates (%d)", n);
    nm_buf_free(&b);
}

/* ---- the cache ------------------------------------------------------------------------------------ */
static void tmp_name(char *p, size_t n, const char *tag)
{
    snprintf(p, n, "/tmp/occ_cache_%s_%d.occluder.gz", tag, (int)getpid());
}

typedef struct race {
    const char *path;
    const nm_occ_scene *got;
    int rc;
} race;

static void *race_get(void *arg)
{
    race *r = (race *)arg;
    nm_error err;
    r->rc = nm_occ_cache_get(r->path, "z", &r->got, &err);
    return NULL;
}

Test(cache, same_scene_per_path_and_zone_and_failures_stay_cached)
{
    nm_buf b = {0};
    small_pack(&b);
    char good[256], bad[256], none[256];
    tmp_name(good, sizeof good, "good");
    tmp_name(bad, sizeof bad, "bad");
    tmp_name(none, sizeof none, "none");
    nm_error err = {0};
    cr_assert_eq(nm_file_write(good, b.p, b.size, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_file_write(bad, b.p, b.size / 2, &err), NM_OK, "%s", err.msg);
    remove(none);

    race r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i].path = good;
        pthread_create(&th[i], NULL, race_get, &r[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(r[i].rc, NM_OK);
        cr_assert_not_null(r[i].got);
        cr_assert_eq(r[i].got, r[0].got, "one decode shared by every thread");
    }
    const nm_occ_scene *s2 = NULL, *o = NULL, *n = (const nm_occ_scene *)1, *m = (const nm_occ_scene *)1;
    char rel[300];
    snprintf(rel, sizeof rel, "/tmp/../tmp/%s", good + 5);
    cr_assert_eq(nm_occ_cache_get(rel, "z", &s2, &err), NM_OK);
    cr_assert_eq(s2, r[0].got, "the key is the absolute path");
    cr_assert_eq(nm_occ_cache_get(good, "other", &o, &err), NM_OK);
    cr_assert(o && o != s2);
    cr_assert_eq(nm_occ_cache_get(good, "missing", &m, &err), NM_OK);
    cr_assert_null(m, "no record: no scene");
    cr_assert_eq(nm_occ_cache_get(none, "z", &n, &err), NM_OK);
    cr_assert_null(n, "no occluder file: every drop allowed");
    double take[3] = {0, 5, 0}, land[3] = {3, 0, 0};
    cr_assert_not(nm_occ_drop_blocked(n, take, land));

    const nm_occ_scene *x = NULL;
    cr_assert_eq(nm_occ_cache_get(bad, "z", &x, &err), NM_ERR_CORRUPT);
    char first[sizeof err.msg];
    memcpy(first, err.msg, sizeof first);
    /* Repairing the file changes nothing until the cache is released: the failure is cached. */
    cr_assert_eq(nm_file_write(bad, b.p, b.size, &err), NM_OK);
    nm_error_clear(&err);
    cr_assert_eq(nm_occ_cache_get(bad, "z", &x, &err), NM_ERR_CORRUPT);
    cr_assert_str_eq(err.msg, first);
    nm_occ_cache_release_all();
    cr_assert_eq(nm_occ_cache_get(bad, "z", &x, &err), NM_OK, "%s", err.msg);
    cr_assert_not_null(x);
    nm_occ_cache_release_all();
    remove(good);
    remove(bad);
    nm_buf_free(&b);
}

/* The fuzz seeds (tests/occluder/corpus, made by gen_occ_seeds) stay valid packs. */
Test(container, fuzz_seeds_decode)
{
    const char *root = getenv("NM_SOURCE_ROOT");
    if (!root) cr_skip_test("NM_SOURCE_ROOT not set");
    static const char *const seeds[] = {"full.ocls", "group.ocls", "terrain.ocls", "two_zones.ocls"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/occluder/corpus/%s", root, seeds[i]);
        nm_occ_scene *s = NULL;
        nm_error err = {0};
        cr_assert_eq(nm_occ_load(path, "z", &s, &err), NM_OK, "%s", err.msg);
        cr_assert_not_null(s, "%s has zone z", seeds[i]);
        nm_occ_info info;
        nm_occ_scene_info(s, &info);
        cr_assert_gt(info.triangles, 0);
        nm_occ_free(s);
    }
}

Test(writer, bad_input_is_an_argument_error_naming_the_zone)
{
    static soup box;
    memset(&box, 0, sizeof box);
    soup_box(&box, 0, 0, 0, 1, 1, 1);
    nm_occ_group g = soup_group(&box);
    nm_occ_zone_in z = {.name = "zz", .groups = &g, .group_count = 1};
    nm_buf b = {0};
    nm_error err = {0};
    box.tri[5] = 999;
    cr_assert_eq(nm_occ_encode(&z, 1, &b, &err), NM_ERR_ARG);
    cr_assert_not_null(strstr(err.msg, "zone 'zz'"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "vertex 999"), "%s", err.msg);
    box.tri[5] = 0;
    box.xyz[4] = NAN;
    nm_buf_free(&b);
    memset(&b, 0, sizeof b);
    cr_assert_eq(nm_occ_encode(&z, 1, &b, &err), NM_ERR_ARG);
    cr_assert_not_null(strstr(err.msg, "not finite"), "%s", err.msg);
    nm_buf_free(&b);
    memset(&b, 0, sizeof b);
    float h[4] = {0, 0, 0, 0};
    nm_occ_terrain_in tr = {.spacing = 0, .nx = 2, .nz = 2, .heights = h};
    nm_occ_zone_in t = {.name = "t", .terrain = &tr};
    cr_assert_eq(nm_occ_encode(&t, 1, &b, &err), NM_ERR_ARG, "zero spacing");
    nm_buf_free(&b);
    memset(&b, 0, sizeof b);
    tr.spacing = 1;
    h[3] = 1e30f;
    cr_assert_eq(nm_occ_encode(&t, 1, &b, &err), NM_ERR_ARG, "a height beyond int32 steps");
    nm_buf_free(&b);
    h[3] = 0;
    cr_assert_eq(nm_occ_write("/nonexistent-dir/x.occluder.gz", &t, 1, &err), NM_ERR_IO);
}
