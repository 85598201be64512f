/* zone_internal.h — pieces of the ZoneClean build shared with the unit tests (not a public
 * header): the one-way adjacency rule, which a mesh whose adjacency comes from slot buckets never
 * triggers by itself (reverse edges are mutual once duplicate edges are cut), so the tests drive it
 * with a hand-made adjacency. */
#ifndef NM_ZONE_INTERNAL_H
#define NM_ZONE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Rule 2 (单向邻接) for slot s = 3i + k: nb1 holds each slot's neighbour triangle after rule 1
 * (UINT32_MAX = none). If i -> j but none of j's three slots points back to i, i's side is
 * cleared. Returns the slot's neighbour after the rule. */
static inline uint32_t nm_zone_rule_one_way(const uint32_t *nb1, size_t s)
{
    uint32_t i = (uint32_t)(s / 3), j = nb1[s];
    if (j == UINT32_MAX) return j;
    const uint32_t *back = &nb1[3 * (size_t)j];
    return (back[0] == i || back[1] == i || back[2] == i) ? j : UINT32_MAX;
}

#endif
