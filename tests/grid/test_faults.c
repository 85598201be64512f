/* test_faults.c — allocation failures injected into every grid operator in turn (SQLite's
 * habit): each one reports NM_ERR_NOMEM with a message, leaks nothing (checked under ASan) and
 * the same pipeline succeeds once no allocation fails. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define NM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NM_TEST_ASAN 1
#endif
#endif
#if defined(NM_TEST_ASAN)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

/* The whole operator chain on a small terrain of two triangles plus a bridge deck. */
static int pipeline(nm_error *err)
{
    nm_grid_window w = {0.0, 0.0, 24, 20};
    const float v[] = {0, 0, 0, 6, 0, 1, 0, 5, 0, 6, 5, 1, 1, 1, 6, 5, 1, 6, 1, 2.1f, 6};
    const uint32_t tri[] = {0, 1, 2, 1, 3, 2, 4, 5, 6};
    const uint8_t bnd[] = {1, 6, 7};
    nm_grid_mesh m = {v, 7, tri, 3, NULL};
    nm_grid_samples s = {0};
    nm_span_table pre = {0}, t = {0};
    uint32_t *rid = NULL;
    uint8_t *mask = NULL, *dead = NULL;
    uint16_t *q = NULL;
    nm_grid_wall *walls = NULL;
    size_t nwalls = 0;
    nm_scc scc = {0};
    int rc = nm_grid_rasterize(&w, &m, &s, err);
    if (!rc)
        rc = nm_grid_build_spans(&w, &s, &pre, err);
    if (!rc)
        rc = nm_grid_append_seam_bridge(&pre, &s, err);
    if (!rc)
        rc = nm_grid_build_spans(&w, &s, &t, err);
    uint32_t nr = 0;
    if (!rc) {
        rid = malloc((t.nspans + 1) * sizeof *rid);
        dead = calloc(t.nspans + 1, 1);
        rc = nm_grid_label_regions(&t, 1, rid, &nr, err);
    }
    if (!rc)
        rc = nm_grid_bake_walls(&w, &m, bnd, &walls, &nwalls, err);
    if (!rc)
        rc = nm_grid_stamp_walls(&t, walls, nwalls, dead, NULL, err);
    size_t n = (size_t)w.nx * w.ny;
    mask = calloc(n, 1);
    q = malloc(n * sizeof *q);
    if (!rc) {
        for (uint32_t o = 0; o < t.nocc; o++)
            mask[t.sp_cell[t.cs[o]]] = 1;
        rc = nm_grid_fill_holes(w.nx, w.ny, mask, NULL, NULL, err);
    }
    if (!rc)
        rc = nm_grid_close_cracks(w.nx, w.ny, mask, NULL, NULL, NULL, err);
    if (!rc) {
        for (size_t c = 0; c < n; c++)
            mask[c] = !mask[c];
        rc = nm_grid_clearance(w.nx, w.ny, mask, q, 1, err);
    }
    if (!rc) {
        uint8_t *med = malloc(n);
        rc = nm_grid_medial_axis(w.nx, w.ny, mask, med, err);
        free(med);
    }
    if (!rc) {
        /* graph: spans linked to +x neighbours where RiseOk passes */
        uint32_t *off = calloc(t.nspans + 1, sizeof *off), *adj = malloc((t.nspans + 1) * 8 * 4);
        size_t e = 0;
        for (uint32_t k = 0; k < t.nspans; k++) {
            off[k] = (uint32_t)e;
            uint32_t c = t.sp_cell[k], f, cnt;
            if (c % 24 + 1 < 24 && (cnt = nm_span_cell_spans(&t, c + 1, &f)))
                for (uint32_t u = f; u < f + cnt; u++)
                    if (nm_grid_rise_ok(&t, NULL, (int)(c % 24), (int)(c / 24), 1, 0, t.sp_h[k],
                                        t.sp_h[u]))
                        adj[e++] = u;
        }
        off[t.nspans] = (uint32_t)e;
        nm_graph g = {t.nspans, off, adj};
        rc = nm_grid_scc(&g, &scc, err);
        free(off);
        free(adj);
    }
    nm_scc_free(&scc);
    nm_free(walls);
    free(mask);
    free(q);
    free(rid);
    free(dead);
    nm_span_table_free(&pre);
    nm_span_table_free(&t);
    nm_grid_samples_free(&s);
    return rc;
}

Test(faults, every_allocation_failure_is_reported_and_leaks_nothing)
{
    nm_error err = {0};
    nm_alloc_fail_after(0);
    cr_assert_eq(pipeline(&err), NM_OK, "%s", err.msg);
    size_t total = nm_alloc_fail_after(0);
    cr_assert_gt(total, 10);
    for (size_t k = 1; k <= total; k++) {
        nm_error e = {0};
        nm_alloc_fail_after(k);
        int rc = pipeline(&e);
        nm_alloc_fail_after(0);
        cr_assert_eq(rc, NM_ERR_NOMEM, "allocation %zu of %zu: rc %d", k, total, rc);
        cr_assert_neq(e.msg[0], '\0', "allocation %zu: message", k);
    }
    cr_assert_eq(LEAK_CHECK(), 0, "LeakSanitizer found leaks (see its report above)");
}
