/* fuzz_occluder.c — libFuzzer target for the occluder pack reader: the input is a whole
 * (decompressed) OCLS container; the scene of zone "z" is decoded, asked a few questions (two
 * columns, a curtain, a drop) and freed. Any crash, hang, out-of-bounds read or leak is a bug:
 * a malformed pack must only ever produce an error. */
#include <stddef.h>
#include <stdint.h>

#include "occluder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nm_occ_scene *scene = NULL;
    nm_error err;
    if (nm_occ_load_bytes(data, size, "z", "fuzz", &scene, &err) == NM_OK && scene) {
        const double take[3] = {0.5, 1.0, 0.5}, land[3] = {3.0, -2.0, 2.0};
        nm_occ_hit hits[8];
        (void)nm_occ_segment_hits(scene, take, land, hits, 8);
        (void)nm_occ_drop_blocked(scene, take, land);
        (void)nm_occ_curtain_crossed(scene, land, take, -1.0, 1.0);
        nm_occ_info info;
        nm_occ_scene_info(scene, &info);
    }
    nm_occ_free(scene);
    return 0;
}
