/* window_gate.h — the planner's FallGate (design article 台沿下落): the callback RiseOk step 2 asks
 * about a ledge drop, answered by dropBlocked on the collision geometry of the window's zone
 * (the occluder pack next to the main pack), with the two caches shared by one plan's tiers.
 *
 * An engine (any stable pointer used as a key) attaches the path of its pack once; the occluder
 * is the file next to it ("x.nav.gz" -> "x.occluder.gz", else "base.occluder.gz" in its folder).
 * After each window build the planner calls nm_window_set_gate. No file, no record for the zone,
 * or a zone transform with a zero scale: the gate stays empty and every drop passes. */
#ifndef NM_WINDOW_GATE_H
#define NM_WINDOW_GATE_H

#include "window.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nm_zone_clean;

/* The occluder path of a pack path (nm_malloc'd; NULL on no memory), absolute when its folder
 * exists. */
char *nm_occluder_path_of(const char *pack_path);

/* Binds `engine` to the occluder next to pack_path (NULL = none). Replaces an earlier binding. */
int nm_window_gate_attach(const void *engine, const char *pack_path, nm_error *err);
/* Drops the binding and the caches of `engine` (NULL-safe; unknown engines ignored). */
void nm_window_gate_detach(const void *engine);

/* FallGate for window w of the zone of zc: sets w->gate (fn NULL when the gate is empty). `plan`
 * identifies the plan: the caches are kept while it stays the same (all tiers of one plan) and
 * cleared when it changes. Failing to read the occluder leaves an empty gate and returns the
 * status with a message (the failure is cached: later windows get it again without rereading). */
int nm_window_set_gate(nm_window *w, const void *engine, uint64_t plan,
                       const struct nm_zone_clean *zc, nm_error *err);

/* Reads the collision scene of zc's zone into the process-wide occluder cache ahead of the first
 * plan (the engine's warm). A failure is cached for nm_window_set_gate to report; nothing here
 * fails. */
void nm_window_gate_warm(const void *engine, const struct nm_zone_clean *zc);

/* The gate's counters for `engine` since attach: dropBlocked calls made, decision look-ups
 * answered by the cache, and drops blocked. */
typedef struct nm_gate_stats {
    uint64_t asked, hits, blocked, projections, projection_hits;
} nm_gate_stats;
void nm_window_gate_stats(const void *engine, nm_gate_stats *out);

/* The projection of step 3 (exposed for tests): the cell centre (x, y px) onto the zone's
 * walkable triangles within 0.25 px, skipping triangles whose vertex heights lie more than 2 m
 * from h and closest points whose interpolated height is more than 2 m from h, minimum by (planar
 * distance, height difference, triangle); none: the centre and h. Writes (x, y, h). */
void nm_fall_gate_project(const struct nm_zone_clean *zc, double x, double y, double h,
                          double out[3]);

#ifdef __cplusplus
}
#endif
#endif
