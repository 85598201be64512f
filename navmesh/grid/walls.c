/* walls.c — wall stamping of the grid (design article 预烘场 / 标墙): BakeWalls collects the
 * boundary edges of walkable triangles near a window, StampWalls samples each edge every <= 0.1 px
 * and marks Dead the spans of the sampled cells whose height lies within kMcHBand of the edge's
 * mean height. */
#include "grid/grid.h"

#include <math.h>
#include <string.h>

#define WALL_SAMPLE_SUB 0.4 /* sample spacing, cells (kWallSampleSub): 0.4 * kCS = 0.1 px */

int nm_grid_bake_walls(const nm_grid_window *win, const nm_grid_mesh *mesh,
                       const uint8_t *boundary, nm_grid_wall **walls, size_t *nwalls,
                       nm_error *err)
{
    *walls = NULL;
    *nwalls = 0;
    int rc = nm_grid_window_check(win, err);
    if (rc)
        return rc;
    if (!mesh || (mesh->ntris && (!mesh->tris || !mesh->verts || !boundary)))
        return nm_fail(err, NM_ERR_ARG, "BakeWalls: missing mesh or boundary bits");
    const double bx0 = win->x0 - NM_GRID_WALL_PAD, by0 = win->y0 - NM_GRID_WALL_PAD;
    const double bx1 = win->x0 + win->nx * NM_kCS + NM_GRID_WALL_PAD;
    const double by1 = win->y0 + win->ny * NM_kCS + NM_GRID_WALL_PAD;
    /* Two passes (count, then fill) so the output is allocated once. */
    size_t count = 0;
    nm_grid_wall *out = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (size_t t = 0; t < mesh->ntris; t++) {
            if ((mesh->walkable && !mesh->walkable[t]) || !(boundary[t] & 7u))
                continue;
            for (int k = 0; k < 3; k++) {
                if (!(boundary[t] & (1u << k)))
                    continue;
                uint32_t a = mesh->tris[3 * t + k], b = mesh->tris[3 * t + (k + 1) % 3];
                if (a >= mesh->nverts || b >= mesh->nverts)
                    return nm_fail(err, NM_ERR_ARG, "BakeWalls: triangle %zu: vertex index >= %zu",
                                   t, mesh->nverts);
                const float *p = mesh->verts + 3 * (size_t)a, *q = mesh->verts + 3 * (size_t)b;
                if (fmax(p[0], q[0]) < bx0 || fmin(p[0], q[0]) > bx1 || fmax(p[1], q[1]) < by0 ||
                    fmin(p[1], q[1]) > by1)
                    continue;
                if (pass == 1)
                    out[n] = (nm_grid_wall){p[0], p[1], p[2], q[0], q[1], q[2], (uint32_t)t,
                                            (uint8_t)k};
                n++;
            }
        }
        if (pass == 0) {
            count = n;
            out = nm_malloc((count ? count : 1) * sizeof *out);
            if (!out)
                return nm_fail(err, NM_ERR_NOMEM, "BakeWalls: %zu edges", count);
        }
    }
    *walls = out;
    *nwalls = count;
    return NM_OK;
}

int nm_grid_stamp_walls(const nm_span_table *t, const nm_grid_wall *walls, size_t nwalls,
                        uint8_t *dead, size_t *stamped, nm_error *err)
{
    if (!t || (nwalls && !walls) || (t->nspans && !dead))
        return nm_fail(err, NM_ERR_ARG, "StampWalls: missing table, walls or output");
    size_t count = 0;
    const nm_grid_window *w = &t->win;
    for (size_t e = 0; e < nwalls; e++) {
        const nm_grid_wall *wl = &walls[e];
        if (!isfinite(wl->x0) || !isfinite(wl->y0) || !isfinite(wl->x1) || !isfinite(wl->y1) ||
            !isfinite(wl->h0) || !isfinite(wl->h1))
            return nm_fail(err, NM_ERR_ARG, "StampWalls: wall %zu (triangle %u edge %u): not finite",
                           e, (unsigned)wl->tri, (unsigned)wl->edge);
        double hbar = (wl->h0 + wl->h1) / 2.0;
        double len = nm_hypot(wl->x1 - wl->x0, wl->y1 - wl->y0);
        double steps = ceil(len / (WALL_SAMPLE_SUB * NM_kCS));
        if (steps < 1.0)
            steps = 1.0;
        if (steps > 1e8)
            return nm_fail(err, NM_ERR_ARG, "StampWalls: wall %zu: %.1f px long", e, len);
        size_t npts = (size_t)steps + 1;
        int64_t last = -1;
        for (size_t k = 0; k < npts; k++) {
            double tk = (double)k / (double)(npts - 1);
            double x = wl->x0 + tk * (wl->x1 - wl->x0), y = wl->y0 + tk * (wl->y1 - wl->y0);
            double fi = floor((x - w->x0) / NM_kCS), fj = floor((y - w->y0) / NM_kCS);
            if (fi < 0.0 || fj < 0.0 || fi >= (double)w->nx || fj >= (double)w->ny)
                continue;
            int64_t c = (int64_t)fj * w->nx + (int64_t)fi;
            if (c == last) /* consecutive samples in one cell mark the same spans */
                continue;
            last = c;
            uint32_t f, n = nm_span_cell_spans(t, (uint32_t)c, &f);
            for (uint32_t s = 0; s < n; s++)
                if (fabs((double)t->sp_h[f + s] - hbar) <= NM_kMcHBand && !dead[f + s]) {
                    dead[f + s] = 1;
                    count++;
                }
        }
    }
    if (stamped)
        *stamped = count;
    return NM_OK;
}
