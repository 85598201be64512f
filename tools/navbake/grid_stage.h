/* grid_stage.h — navbake-internal: the grid stage over a loaded pack (grid_stage.c). */
#ifndef NM_TOOLS_GRID_STAGE_H
#define NM_TOOLS_GRID_STAGE_H

#include "bake.h"
#include "bake/bake.h"

/* Bakes every geometry zone of `loaded` (a whole pack as read back from its bytes); occ/occ_size
 * (may be NULL) is the OCLS container whose zone scenes gate the drops. Reports one progress line
 * per zone with its cell rate. *zones_out: nm_free after nm_bake_grid_zone_free on each. */
int navbake_grid_stage(const nm_bake_opts *opts, const nm_pack *loaded, const uint8_t *occ,
                       size_t occ_size, int workers, nm_bake_grid_zone **zones_out,
                       uint32_t *count, nm_error *err);

#endif
