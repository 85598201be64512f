/* gridio_fixture.h — hand-made zones for the BGRD / BNVF tests: a zone's records as a CSR over
 * its cell rectangle, built from a per-cell generator, plus sidecar columns derived from the
 * records so the merged fields can be predicted exactly. */
#ifndef GRIDIO_FIXTURE_H
#define GRIDIO_FIXTURE_H

#include "pack/grid_io.h"

typedef struct fx_rng { uint64_t s; } fx_rng;
uint32_t fx_next(fx_rng *r);
double fx_unit(fx_rng *r); /* [0, 1) */

/* Fills up to 8 records of zone-local cell (x, y) into out and returns how many. */
typedef int (*fx_cell_fn)(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out);

typedef struct fx_zone {
    nm_grid_zone_src src;
    uint32_t *start;
    nm_grid_rec *recs;
    size_t n;
    /* sidecar columns aligned with recs */
    uint32_t *scc;
    uint8_t *steps2x, *seg, *tax, *medial;
    uint16_t *clr2d;
} fx_zone;

/* Builds a w x h zone at origin (x0, y0) px; every cell's records sorted with nm_grid_layer_cmp. */
void fx_zone_build(fx_zone *z, const char *name, double x0, double y0, int w, int h,
                   uint32_t global_regions, fx_cell_fn fn, void *ctx, uint64_t seed);
/* Derives sidecar columns from the records (deterministic, clr2d <= clr). */
void fx_zone_columns(fx_zone *z, uint64_t seed);
void fx_zone_free(fx_zone *z);

/* A generator of mixed cells: 0..4 layers, several regions, Fill records, random fields. */
int fx_mixed_cell(void *ctx, int x, int y, fx_rng *rng, nm_grid_rec *out);

/* Writes the zones into a BGRD section (tests assert success). */
void fx_write_bgrd(const fx_zone *zones, int count, const nm_bgrd_write_opts *o, nm_buf *out);

/* Checks that out (a rectangle decode) holds exactly the zone's records of the rectangle, in
 * stored order per cell, heights within half a quantum; fields too when with_fields. Returns the
 * number of records compared; asserts on any difference. */
size_t fx_check_rect(const fx_zone *z, const nm_bgrd_out *out, bool with_fields);

#endif
