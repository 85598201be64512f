/* fuzz_bake.c — libFuzzer target for navbake's readers and the as-is bake: the input is OBJ text,
 * optionally followed by "\n---\n" and zone.json text. Whatever parses must bake or fail with a
 * message; whatever bakes must serialise and read back with the same counts. */
#include "bake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_bake: property broken: %s\n", what);
        abort(); /* a harness, not library code: the fuzzer needs the crash */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (64u << 10)) return 0; /* keep iterations fast */
    const char *text = (const char *)data;
    size_t obj_n = size, json_off = size;
    for (size_t i = 0; i + 5 <= size; i++)
        if (memcmp(text + i, "\n---\n", 5) == 0) {
            obj_n = i;
            json_off = i + 5;
            break;
        }
    nm_obj obj;
    nm_bake_config cfg;
    nm_error err = {0};
    int orc = nm_obj_parse(text, obj_n, "fuzz.obj", &obj, &err);
    check(orc == NM_OK || err.msg[0], "OBJ error without a message");
    int crc = json_off < size ? nm_bake_config_parse(text + json_off, size - json_off, "zone.json", "fuzz", &cfg, &err)
                              : nm_bake_config_default("fuzz", &cfg, &err);
    check(crc == NM_OK || err.msg[0], "zone.json error without a message");
    if (orc == NM_OK && crc == NM_OK && obj.tri_count <= 4096) {
        nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .walkable_as_is = true, .workers = 1};
        nm_pack p;
        int rc = nm_bake_main_pack(&o, &p, &err);
        check(rc == NM_OK || err.msg[0], "bake error without a message");
        if (rc == NM_OK) {
            nm_buf b = {0};
            nm_pack_write_opts w = {.workers = 1, .level = 1};
            rc = nm_pack_serialize(&p, &w, &b, &err);
            check(rc == NM_OK, "a baked pack does not serialise");
            nm_pack q;
            nm_pack_load_opts lo = {.workers = 1};
            rc = nm_pack_parse(b.p, b.size, "fuzz.nav", &lo, &q, &err);
            check(rc == NM_OK, "a baked pack does not read back");
            check(q.tri_count == p.tri_count && q.link_count == p.link_count && q.zone_count == p.zone_count &&
                      q.offmesh_count == p.offmesh_count && q.build_hash == p.build_hash,
                  "read-back counts differ");
            nm_pack_free(&q);
            nm_buf_free(&b);
            nm_pack_free(&p);
        }
    }
    if (orc == NM_OK) nm_obj_free(&obj);
    if (crc == NM_OK) nm_bake_config_free(&cfg);
    return 0;
}
