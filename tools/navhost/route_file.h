/* route_file.h — MapNavigator-style route files (shared/docs/host.md "Route files"): a JSON array
 * of [x, y], [x, y, "ACTION"], [x, y, "ACTION", strict], {"action": "NAVMESH", "target": [x, y],
 * "target_tier"?: name, "target_deck_y"?: h} and {"action": "ZONE", "zone_id": name}. Every other
 * object is kept as it is and passed through. */
#ifndef NM_ROUTE_FILE_H
#define NM_ROUTE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef enum nm_rt_kind {
    NM_RT_POINT = 0,   /* [x, y, action?, strict?]: a position the character reaches */
    NM_RT_NAVMESH = 1, /* a leg to plan */
    NM_RT_ZONE = 2,    /* switches the zone */
    NM_RT_OTHER = 3    /* any other object: passed through */
} nm_rt_kind;

typedef struct nm_rt_entry {
    nm_rt_kind kind;
    double x, y;               /* POINT position, NAVMESH target (px) */
    const char *action;        /* POINT: "RUN" when absent */
    int strict;
    const char *tier;          /* NAVMESH: target_tier or NULL */
    int has_deck;
    double deck_y;             /* NAVMESH: target_deck_y when has_deck */
    const char *zone;          /* ZONE: zone_id */
    const cJSON *raw;          /* the entry as written (owned by the file's document) */
} nm_rt_entry;

typedef struct nm_route_file {
    cJSON *doc;
    nm_rt_entry *entries;
    size_t n;
} nm_route_file;

/* Parses and checks the shape of every entry. Returns 0, or -1 with a message naming the entry
 * index and the field in why. */
int nm_route_file_parse(const char *text, nm_route_file *out, char *why, size_t cap);
void nm_route_file_free(nm_route_file *f);

#endif
