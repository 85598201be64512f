/* helpers.h — shared helpers of the grid tests: a seeded PRNG and a span table built from a
 * hand-written list of (i, j, h) spans. */
#ifndef NM_TEST_GRID_HELPERS_H
#define NM_TEST_GRID_HELPERS_H

#include "grid/grid.h"

typedef struct span_def {
    int i, j;
    double h;
} span_def;

/* xorshift64*: deterministic across runs and machines. */
uint64_t rng_next(uint64_t *s);
/* Uniform in [0, 1). */
double rng_unit(uint64_t *s);

/* PackSpans over the given spans in a window nx x ny at origin (0, 0); asserts success. */
void table_from_defs(nm_span_table *t, int nx, int ny, const span_def *defs, size_t n);
/* Same from a profile along +x in row 0 of an nx x 1 window: heights[i] per column, with NAN
 * meaning "no span"; extra adds second spans (i, h) pairs, terminated by i < 0. */
void table_from_profile(nm_span_table *t, int nx, const double *heights, const span_def *extra);

#endif
