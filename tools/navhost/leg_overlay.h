/* leg_overlay.h — the per-leg diagnostic picture of the reference host (诊断): the accepted window
 * (or, for a failed leg, the last window tried) scaled so cells are blocks of whole pixels and the
 * map is at least 1000 px on its long side, its walk / core / dead cells and clearance re-decoded
 * from the pack's grid, the no-go polygons and discs, the stage polylines the result carries, the
 * route in a colour scale of its height with the other storeys dimmed, waypoints, drop landings
 * with their take-off points, the located gap of a failure; in their own margins a header (tier,
 * window, stage times, error), a legend (keys, height scale, scale bar, gap heights, a thumbnail
 * of the whole window when the map is cropped to the route) and a side profile strip (height
 * against distance along the route, drops marked). Shared by navplan and navhost. */
#ifndef NM_LEG_OVERLAY_H
#define NM_LEG_OVERLAY_H

#include <stdbool.h>

#include "navmesh_plugin.h"
#include "base/base.h"

/* Colours of the drawn lists (tests read pixels back). The final polyline is drawn in this colour
 * when its heights span less than NM_LEG_FLAT_M, else in the height colour scale (turbo). */
#define NM_LEG_RGB_FINAL 255, 40, 200
#define NM_LEG_RGB_PULLED 255, 220, 0
#define NM_LEG_RGB_TAUT 0, 220, 255
#define NM_LEG_RGB_TOPOLOGY 60, 90, 255
#define NM_LEG_RGB_BG 24, 24, 28    /* picture background (margins and cells without a surface) */
#define NM_LEG_FLAT_M 0.25
#define NM_LEG_MIN_LONG_PX 1000     /* the map's long side is at least this (cells permitting) */

/* The zone's grid as the overlay reads it (a private zone-scoped load of the pack). */
typedef struct nm_leg_canvas nm_leg_canvas;

/* nogo_path: the authored no-go table whose polygons of this zone are drawn (NULL = none). */
int nm_leg_canvas_open(const char *pack_path, const char *zone, const char *nogo_path,
                       nm_leg_canvas **out, nm_error *err);
void nm_leg_canvas_close(nm_leg_canvas *c);

/* What part of the window the map shows: AUTO crops to the route's box (with a margin) when the
 * window is much larger than it, ON always crops, OFF always shows the whole window. */
typedef enum nm_leg_crop { NM_LEG_CROP_AUTO = 0, NM_LEG_CROP_ON = 1, NM_LEG_CROP_OFF = 2 } nm_leg_crop;
/* "auto" / "on" / "off" -> the mode; -1 for anything else. */
int nm_leg_crop_parse(const char *s);

typedef struct nm_leg_rect {
    int x, y, w, h; /* image pixels; w = h = 0 when absent */
} nm_leg_rect;

/* Where the picture put things (tests check that no margin overlaps the map). */
typedef struct nm_leg_layout {
    int width, height;     /* the whole picture */
    nm_leg_rect header;    /* title, status, tier, window, times, error */
    nm_leg_rect map;       /* the drawn window (cells and everything on them) */
    nm_leg_rect legend;    /* keys, height scale, scale bar, gap, thumbnail */
    nm_leg_rect thumb;     /* inside legend: the whole window, when the map is cropped */
    nm_leg_rect profile;   /* under the map: height against distance along the route */
    int cell_px;           /* image pixels per cell side on the map */
    bool cropped;          /* the map shows part of the window */
    bool window_tried;     /* the result reported a window (else the endpoints' box is drawn) */
    double view_x0, view_y0; /* px of the map's top-left corner */
    int view_nx, view_ny;  /* cells shown */
    size_t dimmed;         /* cells shown dimmed: their surface is on another storey than the route */
} nm_leg_layout;

/* Writes the PNG of one leg. start/goal: the request's points (px); discs: the request's runtime
 * discs; title: the header's first words (e.g. "leg 2"); crop: nm_leg_crop; layout: filled when
 * not NULL. */
int nm_leg_overlay_write(nm_leg_canvas *c, const nm_plugin_result *r, double sx, double sy,
                         double gx, double gy, const nm_plugin_disc *discs, uint32_t ndiscs,
                         const char *title, int crop, const char *path, nm_leg_layout *layout,
                         nm_error *err);

#endif
