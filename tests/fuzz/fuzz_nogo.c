/* fuzz_nogo.c — fuzz target for the authored no-go table (nogo_zones.json): any bytes give a table
 * or a message, never a crash; every ring of a table answers rows of cell centres through
 * nm_nogo_poly_row (建窗 step 7) exactly as the per-point test does, wherever its points lie. */
#include <stdint.h>
#include <stdlib.h>

#include "route/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rows through the ring's first points and between them, 64 cells from left of its first point. */
static void check_rows(const nm_nogo_entry *e)
{
    const nm_nogo_poly p = {e->xy, e->n, false, 0.0, e->id};
    double *xs = malloc((size_t)e->n * sizeof *xs);
    if (!xs) return;
    uint8_t in[64];
    const double x0 = e->xy[0] - 8.0;
    for (uint32_t k = 0; k < e->n && k < 4; k++)
        for (int half = 0; half < 2; half++) {
            const double y = e->xy[2 * k + 1] + (half ? 0.125 : 0.0);
            nm_nogo_poly_row(&p, y, x0, 0.25, 0, 63, xs, in);
            for (int64_t i = 0; i < 64; i++)
                if (in[i] != nm_nogo_poly_contains(&p, x0 + ((double)i + 0.5) * 0.25, y))
                    abort(); /* the row disagrees with the per-point test */
        }
    free(xs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nm_nogo_table t;
    nm_error err = {0};
    if (nm_nogo_parse((const char *)data, size, "fuzz", &t, &err) != NM_OK) {
        if (!err.msg[0]) abort(); /* a refusal always says why */
        return 0;
    }
    for (uint32_t z = 0; z < t.nzones; z++) {
        const nm_nogo_zone *zn = &t.zones[z];
        if (!zn->name || !nm_nogo_find_zone(&t, zn->name)) abort();
        for (uint32_t k = 0; k < zn->npolys; k++) {
            if (!zn->polys[k].xy || zn->polys[k].n < 3) abort();
            check_rows(&zn->polys[k]);
        }
    }
    nm_nogo_table_free(&t);
    return 0;
}
