/* bake.h — the whole-zone voxel bake (design article 预烘场, 垂直可达判据, 格图段, 旁包): turns
 * one geometry zone's cleaned triangle mesh (ZoneClean) into the records of the BGRD grid section
 * and the six per-record columns, component DAGs, wall-keep table, resolved off-mesh links and
 * openable cells of the BNVF fields sidecar. The construction of every flag is written down in
 * navmesh/bake/README.md.
 *
 * Units: cells NM_kCS = 0.25 px on the global cell grid (global cell gx covers
 * [gx*kCS, (gx+1)*kCS) px); heights in metres; clearance as squared cell distance.
 * The output never depends on the worker count. The library never prints: progress goes through
 * the optional callback. */
#ifndef NM_BAKE_H
#define NM_BAKE_H

#include "../base/base.h"
#include "../codec/codec.h"
#include "../pack/pack.h"
#include "../pack/grid_io.h"
#include "../zone/zone.h"
#include "../grid/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress: step name and fraction (0..1) of the zone's bake. Called from the calling thread. */
typedef void (*nm_bake_grid_progress_fn)(void *ctx, const char *step, double frac);

/* Fall gate of the bake (FallGate of RiseOk) in zone pixels: take-off cell centre (u0, v0) px at
 * height h0 m, landing cell centre (u1, v1) at h1. True = the collision geometry blocks the drop.
 * Called from worker threads at once: must be read-only on its context. */
typedef bool (*nm_bake_drop_fn)(void *ctx, double u0, double v0, double h0, double u1, double v1,
                                double h1);

/* Solid test of the bake in zone pixels: true when the collision geometry crosses the vertical
 * curtain between the cell centres (u0, v0) and (u1, v1) from height lo to hi m (a thin wall over
 * a crack of the walkable mesh: CloseCracks must not join it; a rise's face or a wall in a one-cell
 * gap: the seam bridge must not). Called from worker threads at once: read-only on its context. */
typedef bool (*nm_bake_gap_fn)(void *ctx, double u0, double v0, double u1, double v1, double lo, double hi);

typedef struct nm_bake_grid_opts {
    int workers;                     /* <= 0: machine's cores, at most 4 */
    nm_bake_drop_fn drop_blocked;    /* NULL: every drop passes the gate */
    void *drop_ctx;                  /* also gap_blocked's context */
    nm_bake_gap_fn gap_blocked;      /* NULL: every crack may be closed */
    nm_bake_grid_progress_fn progress;
    void *progress_ctx;
    uint32_t band_cells;             /* raster band size, cells (0 = 4 Mi); results never depend on it */
    bool keep_records;               /* also keep the whole zone's records and sidecar columns
                                      * (tests; 27 bytes a record and 4 a cell more): the bake
                                      * encodes the tiles itself and never needs them */
} nm_bake_grid_opts;

/* Counters of one zone bake (reported by navbake --info / progress). */
typedef struct nm_bake_grid_stats {
    uint64_t cells;                  /* w * h */
    uint64_t spans;                  /* real spans (records without Ghost/Fill) */
    uint64_t ghosts, fills;          /* Ghost and Fill records */
    uint64_t dead, walk, core;       /* records with that flag */
    uint64_t components;             /* SCCs over all regions */
    uint64_t walls, walls_kept;      /* boundary edges, (edge, region) keep pairs */
} nm_bake_grid_stats;

/* The baked zone: its BGRD and FSPN tiles already encoded (tiles), the per-region DAGs, FWAL,
 * FLNK and FOPN of the zone, and with opts->keep_records the grid records too (CSR over the zone
 * rectangle, each cell in nm_grid_layer_cmp order) with the sidecar columns aligned to the
 * records (else cell_start, recs and the columns are NULL). Free with nm_bake_grid_zone_free. */
typedef struct nm_bake_grid_zone {
    char *name;
    uint16_t zone_id;
    int32_t gx0, gy0;                /* global cell of the zone rectangle's corner */
    int32_t w, h;                    /* zone rectangle, cells */
    uint32_t global_regions;
    uint32_t *cell_start;            /* w*h + 1 */
    nm_grid_rec *recs;               /* cell_start[w*h]; .cell = zone-local cell number */
    size_t rec_count;
    uint32_t *scc;                   /* per record: component in its region, 1-based; 0 Fill */
    uint8_t *steps2x, *seg, *tax, *medial;
    uint16_t *clr2d;                 /* clr - sealed clearance (>= 0) */
    nm_bnvf_region_src *regions;     /* global_regions entries, rid ascending (edges owned) */
    uint64_t *wall_keys;             /* 3*t + k, ascending */
    uint32_t *wall_row;              /* wall_count + 1 */
    uint32_t *wall_rids;
    uint32_t wall_count;
    nm_bnvf_link *links; uint32_t link_count;   /* FLNK records of this zone (BOML order) */
    nm_bnvf_open *opens; uint32_t open_count;   /* FOPN records, (gy, gx, bits of h) order */
    nm_grid_tiles tiles;             /* the default tiling's tiles, encoded (nm_grid_tiles) */
    nm_bake_grid_stats stats;
} nm_bake_grid_zone;

/* The records of zone cell c (zone-local cell number) in canonical order, valid until the next
 * call; *n receives their count. */
typedef const nm_grid_rec *(*nm_bake_cell_fn)(void *ctx, size_t c, uint32_t *n);

/* Bakes one geometry zone (nm_bake_grid_zone is filled only on success). The zone's BOML links
 * are taken from zc->pack (whole-pack index = boml_index). Errors: NM_ERR_ARG (zone too large
 * for 32-bit cell numbers), NM_ERR_NOMEM, and the grid operators' errors prefixed with the zone
 * name and step. */
int nm_bake_grid_zone_bake(const nm_zone_clean *zc, const nm_bake_grid_opts *opts,
                           nm_bake_grid_zone *out, nm_error *err);
void nm_bake_grid_zone_free(nm_bake_grid_zone *z); /* NULL-safe, zeroes */

/* The BGRD writer's view of a baked zone (borrows z; its encoded tiles when it has them). */
nm_grid_zone_src nm_bake_grid_src(const nm_bake_grid_zone *z);

/* Bakes every geometry zone of a whole pack (tier zones skipped) in zone-table order.
 * *zones (nm_malloc'd array, free each with nm_bake_grid_zone_free then nm_free) and *count get
 * the results. */
int nm_bake_grid_pack(const nm_pack *p, const nm_bake_grid_opts *opts, nm_bake_grid_zone **zones,
                      uint32_t *count, nm_error *err);

/* The BGRD section bytes of the baked zones (default tiling). */
int nm_bake_grid_write_bgrd(const nm_bake_grid_zone *zones, uint32_t count, int workers,
                            nm_buf *out, nm_error *err);

/* The (uncompressed) BNVF sidecar of the baked zones bound to the main pack's build_hash and
 * whole-file FNV (the pack as written, BGRD included). */
int nm_bake_grid_write_bnvf(const nm_bake_grid_zone *zones, uint32_t count, uint64_t build_hash,
                            uint64_t file_fnv, int workers, nm_buf *out, nm_error *err);

#ifdef __cplusplus
}
#endif
#endif
