/* leg_overlay.h — the per-leg diagnostic picture of the reference host (诊断): the accepted window
 * at one image pixel per cell, its walk / core / dead cells and clearance re-decoded from the pack's
 * grid, the no-go discs, the stage polylines the result carries, waypoints, drop landings with
 * their take-off points, the located gap of a failure, and a legend with tier, window size and
 * stage times. Shared by navplan and navhost. */
#ifndef NM_LEG_OVERLAY_H
#define NM_LEG_OVERLAY_H

#include "navmesh_plugin.h"
#include "base/base.h"

/* Colours of the drawn lists (tests read pixels back). */
#define NM_LEG_RGB_FINAL 255, 40, 200      /* final polyline */
#define NM_LEG_RGB_PULLED 255, 220, 0
#define NM_LEG_RGB_TAUT 0, 220, 255
#define NM_LEG_RGB_TOPOLOGY 60, 90, 255

/* The zone's grid as the overlay reads it (a private zone-scoped load of the pack). */
typedef struct nm_leg_canvas nm_leg_canvas;

/* nogo_path: the authored no-go table whose polygons of this zone are drawn (NULL = none). */
int nm_leg_canvas_open(const char *pack_path, const char *zone, const char *nogo_path,
                       nm_leg_canvas **out, nm_error *err);
void nm_leg_canvas_close(nm_leg_canvas *c);

/* Writes the PNG of one leg. start/goal: the request's points (px); discs: the request's runtime
 * discs; title: a line for the legend (e.g. "leg 2"). */
int nm_leg_overlay_write(nm_leg_canvas *c, const nm_plugin_result *r, double sx, double sy,
                         double gx, double gy, const nm_plugin_disc *discs, uint32_t ndiscs,
                         const char *title, const char *path, nm_error *err);

#endif
