/* test_loaded.c — a ZoneClean built from a pack that went through the writer and the reader, once
 * loaded whole and once zone-scoped: both loads must give the same cleaned mesh (same triangles,
 * corners, components, flags, links, buckets) and report the same whole-pack triangle numbers. */
#include <criterion/criterion.h>

#include "fixture.h"

/* Zone "a" (id 1): a 4 x 3 grid of quads; zone "z" (id 2): a 5 x 4 grid with water and a gap in
 * its links; one link crosses the zones. */
static void quad_grid(fx *f, int nx, int ny, double x0, bool holes)
{
    uint32_t v0 = f->p.vert_count, t0 = f->p.tri_count;
    for (int j = 0; j <= ny; j++)
        for (int i = 0; i <= nx; i++) fx_vert(f, x0 + 10.0 * i, 10.0 * j, 0.5 * i);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            uint32_t bl = v0 + (uint32_t)(j * (nx + 1) + i), br = bl + 1, tl = bl + (uint32_t)(nx + 1), tr = tl + 1;
            fx_tri(f, bl, br, tr);
            fx_tri(f, bl, tr, tl);
        }
    for (uint32_t a = t0; a < f->p.tri_count; a++)
        for (uint32_t b = a + 1; b < f->p.tri_count; b++) fx_pair(f, a, b);
    for (uint32_t a = t0; a < f->p.tri_count; a++)
        for (int k = 0; k < 3; k++) {
            int32_t b = f->p.tris[a].nb[k];
            if (b > (int32_t)a && !(holes && (a - t0) % 5 == 2)) fx_link(f, a, (uint32_t)b);
        }
    if (holes) fx_area(f, t0 + 7, 12);
}

Test(zone_loaded, whole_and_zone_scoped_loads_clean_the_same)
{
    fx f;
    fx_init(&f, false, true);
    quad_grid(&f, 4, 3, 0, false);
    uint32_t za = f.p.tri_count;
    quad_grid(&f, 5, 4, 100, true);
    fx_zone(&f, 1, "a", 0, za, 0);
    fx_zone(&f, 2, "z", za, f.p.tri_count - za, 0);
    fx_link(&f, 0, za); /* crosses zones: dropped by the scoped load, refused by rule 1 */
    fx_finish(&f);

    nm_buf buf = {0};
    nm_error e = {0};
    int rc = nm_pack_serialize(&f.p, NULL, &buf, &e);
    cr_assert_eq(rc, NM_OK, "%s", e.msg);
    nm_pack whole = {0}, part = {0};
    nm_pack_load_opts ow = {NULL, 1}, oz = {"z", 1};
    rc = nm_pack_parse(buf.p, buf.size, "mem.nav", &ow, &whole, &e);
    cr_assert_eq(rc, NM_OK, "%s", e.msg);
    rc = nm_pack_parse(buf.p, buf.size, "mem.nav", &oz, &part, &e);
    cr_assert_eq(rc, NM_OK, "%s", e.msg);
    cr_assert(part.zone_scoped);

    nm_zone_clean *a = NULL, *b = NULL;
    cr_assert_eq(nm_zone_clean_build(&whole, "z", 1, &a, &e), NM_OK, "%s", e.msg);
    cr_assert_eq(nm_zone_clean_build(&part, "z", 1, &b, &e), NM_OK, "%s", e.msg);
    uint32_t n = a->tri_count;
    cr_assert_eq(n, 40);
    cr_assert_eq(b->tri_count, n);
    cr_assert_eq(a->tri_global_base, za);
    cr_assert_eq(b->tri_global_base, za);
    cr_assert_eq(a->verts, whole.verts, "a loaded v5 pack has BGEO: vertices are borrowed");
    for (uint32_t t = 0; t < n; t++)
        for (int k = 0; k < 3; k++) {
            const nm_vertex *p = nm_zone_vertex(a, t, k), *q = nm_zone_vertex(b, t, k);
            cr_assert(p->u == q->u && p->v == q->v && p->h == q->h, "triangle %u corner %d", t, k);
        }
    cr_assert(memcmp(a->comp, b->comp, 4 * (size_t)n) == 0);
    cr_assert(memcmp(a->tflags, b->tflags, n) == 0);
    cr_assert_eq(a->bridge_count, b->bridge_count);
    cr_assert_eq(a->grid_nx, b->grid_nx);
    cr_assert_eq(a->grid_ny, b->grid_ny);
    cr_assert_not(nm_zone_walkable(a, 7));
    /* the missing links split the zone; the water triangle stands alone */
    uint32_t roots = 0;
    for (uint32_t t = 0; t < n; t++) roots += a->comp[t] == t;
    cr_assert_gt(roots, 1);
    cr_assert_eq(a->comp[7], 7);

    nm_zone_snap_result ra, rb;
    cr_assert_eq(nm_zone_snap(a, 112, 3, NULL, &ra, NULL), NM_OK);
    cr_assert_eq(nm_zone_snap(b, 112, 3, NULL, &rb, NULL), NM_OK);
    cr_assert_eq(ra.tri, rb.tri);
    cr_assert_eq(ra.tri_global, rb.tri_global);
    cr_assert_eq(ra.tri_global, za + ra.tri);

    nm_zone_clean_free(a);
    nm_zone_clean_free(b);
    nm_pack_free(&whole);
    nm_pack_free(&part);
    nm_buf_free(&buf);
    fx_free(&f);
}
