/* gridutil.c — see gridutil.h. */
#include "gridutil.h"
#include "util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *kZoneJson = "{\"zones\": [{\"name\": \"t\", \"transform\": [1, 0, 1, 0]}]}";

void sb_printf(sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)n + 1 > b->cap) {
        b->cap = (b->n + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void sb_free(sb *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

void mesh_group(sb *b, const char *name) { sb_printf(b, "g %s\n", name); }

/* plan (u, v, h) -> OBJ (x = u, y = h, z = -v) */
static uint32_t vert(sb *b, double u, double v, double h)
{
    sb_printf(b, "v %.6f %.6f %.6f\n", u, h, -v);
    return ++b->nv;
}

void mesh_rect(sb *b, double u0, double v0, double u1, double v1, double h, double step,
               double hu0, double hv0, double hu1, double hv1)
{
    int nu = (int)lround((u1 - u0) / step), nv = (int)lround((v1 - v0) / step);
    uint32_t base = b->nv + 1;
    for (int j = 0; j <= nv; j++)
        for (int i = 0; i <= nu; i++) vert(b, u0 + i * step, v0 + j * step, h);
    for (int j = 0; j < nv; j++)
        for (int i = 0; i < nu; i++) {
            double cu = u0 + (i + 0.5) * step, cv = v0 + (j + 0.5) * step;
            if (cu > hu0 && cu < hu1 && cv > hv0 && cv < hv1) continue;
            uint32_t a = base + (uint32_t)(j * (nu + 1) + i), c = a + 1, d = a + (uint32_t)(nu + 1), e = d + 1;
            sb_printf(b, "f %u %u %u\nf %u %u %u\n", a, d, e, a, e, c);
        }
}

void mesh_quad4(sb *b, double u0, double v0, double u1, double v1, double h00, double h10,
                double h11, double h01)
{
    uint32_t a = vert(b, u0, v0, h00), c = vert(b, u1, v0, h10), e = vert(b, u1, v1, h11), d = vert(b, u0, v1, h01);
    sb_printf(b, "f %u %u %u\nf %u %u %u\n", a, d, e, a, e, c);
}

void bake_loaded(const char *obj, nm_pack *loaded)
{
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(obj, kZoneJson, true, 1, &p, &err), NM_OK, "%s", err.msg);
    nm_buf b = {0};
    nm_pack_write_opts w = {.workers = 1, .level = 1};
    cr_assert_eq(nm_pack_serialize(&p, &w, &b, &err), NM_OK, "%s", err.msg);
    nm_pack_load_opts lo = {.workers = 1};
    cr_assert_eq(nm_pack_parse(b.p, b.size, "t.nav", &lo, loaded, &err), NM_OK, "%s", err.msg);
    nm_buf_free(&b);
    nm_pack_free(&p);
}

void bake_grid0(const nm_pack *loaded, int workers, nm_bake_grid_zone *z)
{
    nm_error err = {0};
    nm_zone_clean *zc = NULL;
    cr_assert_eq(nm_zone_clean_build_at(loaded, 0, workers, &zc, &err), NM_OK, "%s", err.msg);
    nm_bake_grid_opts o = {.workers = workers, .keep_records = true};
    cr_assert_eq(nm_bake_grid_zone_bake(zc, &o, z, &err), NM_OK, "%s", err.msg);
    nm_zone_clean_free(zc);
}

const nm_grid_rec *recs_at(const nm_bake_grid_zone *z, int32_t gx, int32_t gy, uint32_t *n,
                           uint32_t *first)
{
    int64_t i = (int64_t)gx - z->gx0, j = (int64_t)gy - z->gy0;
    *n = 0;
    if (first) *first = 0;
    if (i < 0 || j < 0 || i >= z->w || j >= z->h) return NULL;
    size_t c = (size_t)j * (size_t)z->w + (size_t)i;
    *n = z->cell_start[c + 1] - z->cell_start[c];
    if (first) *first = z->cell_start[c];
    return &z->recs[z->cell_start[c]];
}

int run_cmd(const char *cmd)
{
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

const char *build_root(void)
{
    const char *r = getenv("NM_BUILD_ROOT");
    return r && *r ? r : ".";
}
