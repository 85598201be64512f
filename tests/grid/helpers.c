/* helpers.c — shared helpers of the grid tests (see helpers.h). */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>

uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

void table_from_defs(nm_span_table *t, int nx, int ny, const span_def *defs, size_t n)
{
    nm_grid_window w = {0.0, 0.0, nx, ny};
    nm_grid_samples s = {0};
    nm_error err = {0};
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(nm_grid_samples_push(&s, (uint32_t)(defs[k].j * nx + defs[k].i),
                                          (float)defs[k].h, 1, &err), NM_OK);
    cr_assert_eq(nm_grid_pack_spans(&w, &s, t, &err), NM_OK, "%s", err.msg);
}

void table_from_profile(nm_span_table *t, int nx, const double *heights, const span_def *extra)
{
    span_def defs[256];
    size_t n = 0;
    for (int i = 0; i < nx; i++)
        if (!isnan(heights[i]))
            defs[n++] = (span_def){i, 0, heights[i]};
    for (; extra && extra->i >= 0; extra++)
        defs[n++] = *extra;
    cr_assert_leq(n, 256);
    table_from_defs(t, nx, 1, defs, n);
}
