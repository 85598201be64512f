/* fuzz_pack.c — libFuzzer target for the main pack reader: parses the input as a whole pack and
 * as a zone load (zone picked by the first byte), and when the whole parse succeeds, writes the
 * pack again and checks that reading it back gives the same tables (round-trip property). */
#include <stddef.h>
#include <stdint.h>

#include "pack/pack.h"
#include "pack_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kZones[] = {"alpha", "beta", "gamma", "alpha_tier1", "z"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nm_pack p, q;
    nm_error err;
    nm_pack_load_opts whole = {.zone = NULL, .workers = 1};
    if (nm_pack_parse(data, size, "fuzz.nav", &whole, &p, &err) == NM_OK) {
        /* Round trip: what we read, we can write, and reading that gives the same pack. */
        nm_buf b = {0};
        /* Default chunk lengths: one stream set per table keeps the target fast (each stream
         * encode builds a compressor). */
        nm_pack_write_opts wo = {.level = 1, .workers = 1};
        uint64_t read_hash = p.build_hash;
        if (nm_pack_serialize(&p, &wo, &b, &err) != NM_OK) __builtin_trap();
        if (nm_pack_parse(b.p, b.size, "fuzz-rt.nav", &whole, &q, &err) != NM_OK) __builtin_trap();
        q.build_hash = p.build_hash = read_hash; /* trailing zone-table bytes and dropped links change it */
        if (!fx_pack_equal(&p, &q, NULL, 0)) __builtin_trap();
        nm_pack_free(&q);
        nm_buf_free(&b);
        nm_pack_free(&p);
    }
    nm_pack_load_opts zone = {.zone = kZones[size ? data[0] % 5 : 0], .workers = 1};
    if (nm_pack_parse(data, size, "fuzz.nav", &zone, &p, &err) == NM_OK) nm_pack_free(&p);
    return 0;
}
