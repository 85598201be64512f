/* bake_pack.c — the bake of a whole pack and its two outputs: off-mesh links resolved to landing
 * records (FLNK) and openable cells (FOPN) of a baked zone, every geometry zone baked in turn,
 * and the BGRD section and BNVF sidecar bytes written from the baked zones. */
#include "bake.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Resolves one link end (u, v px, declared height h) to a record of the zone (FLNK why codes):
 * 1 out of the zone rectangle, 2 no record in the cell, 3 none within kMcHBand of the declared
 * height, 4 only non-core records in the band, 0 the nearest Core record in the band. Fill
 * records have no height and never count. */
static void resolve_side(const nm_bake_grid_zone *z, nm_bake_cell_fn cell_recs, void *ctx, const float pt[3],
                         nm_bnvf_link_side *s)
{
    memset(s, 0, sizeof *s);
    double fx = floor(pt[0] / NM_kCS), fy = floor(pt[1] / NM_kCS);
    s->decl_h = pt[2];
    if (!isfinite(fx) || !isfinite(fy) || fx < -2e9 || fy < -2e9 || fx > 2e9 || fy > 2e9) {
        s->why = 1;
        return;
    }
    s->gx = (int32_t)fx;
    s->gy = (int32_t)fy;
    int64_t i = (int64_t)s->gx - z->gx0, j = (int64_t)s->gy - z->gy0;
    if (i < 0 || j < 0 || i >= z->w || j >= z->h) { s->why = 1; return; }
    uint32_t n;
    const nm_grid_rec *recs = cell_recs(ctx, (size_t)j * (size_t)z->w + (size_t)i, &n);
    int32_t best = -1, best_nc = -1;
    double bd = INFINITY, bdn = INFINITY;
    bool any = false;
    for (uint32_t k = 0; k < n; k++) {
        const nm_grid_rec *r = &recs[k];
        if (r->flags & NM_GRID_FILL) continue;
        any = true;
        double d = fabs((double)r->h - (double)pt[2]);
        if (d > NM_kMcHBand) continue;
        if (r->flags & NM_GRID_CORE) {
            if (d < bd) { bd = d; best = (int32_t)k; }
        } else if (d < bdn) {
            bdn = d;
            best_nc = (int32_t)k;
        }
    }
    int32_t pick = best >= 0 ? best : best_nc;
    s->why = best >= 0 ? 0 : best_nc >= 0 ? 4 : any ? 3 : 2;
    if (pick >= 0) {
        const nm_grid_rec *r = &recs[pick];
        s->h = r->h;
        s->rid = r->rid;
        s->clr = r->clr;
        s->flags = r->flags;
    }
}

static int cmp_open(const void *a, const void *b)
{
    const nm_bnvf_open *x = a, *y = b;
    if (x->gy != y->gy) return x->gy < y->gy ? -1 : 1;
    if (x->gx != y->gx) return x->gx < y->gx ? -1 : 1;
    uint32_t hx, hy;
    memcpy(&hx, &x->h, 4);
    memcpy(&hy, &y->h, 4);
    return hx < hy ? -1 : hx > hy;
}

/* Landing span of a link end for the region join: the span of the end's cell nearest in height
 * to the declared height within kMcHBand (lower span on ties), as the window lands it; -1 when
 * the cell is outside or has none. */
static int64_t join_landing(const nm_bake_grid_zone *z, const nm_span_table *T, const float pt[3])
{
    double fx = floor(pt[0] / NM_kCS) - z->gx0, fy = floor(pt[1] / NM_kCS) - z->gy0;
    if (!(fx >= 0 && fy >= 0 && fx < z->w && fy < z->h)) return -1;
    uint32_t first, n = nm_span_cell_spans(T, (uint32_t)fy * (uint32_t)z->w + (uint32_t)fx, &first);
    int64_t best = -1;
    double bd = INFINITY;
    for (uint32_t k = first; k < first + n; k++) {
        double d = fabs((double)T->sp_h[k] - (double)pt[2]);
        if (d <= NM_kMcHBand && d < bd) {
            bd = d;
            best = k;
        }
    }
    return best;
}

static uint32_t join_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

int nm_bake_link_regions(const nm_zone_clean *zc, const nm_bake_grid_zone *z, const nm_span_table *T,
                         uint32_t *rid, uint32_t *nreg, nm_error *err);

/* Regions joined by off-mesh links: the window searches one region and lands a link only on
 * that region's spans, so a link whose two ends land in different regions (an island reached
 * only by a link) joins them into one; the component graph stays without links and the window
 * closes the reach set over them. Regions are renumbered in order of their first span, as
 * LabelRegions numbers them; without such links the numbers do not change. */
int nm_bake_link_regions(const nm_zone_clean *zc, const nm_bake_grid_zone *z, const nm_span_table *T,
                         uint32_t *rid, uint32_t *nreg, nm_error *err)
{
    const nm_pack *P = zc->pack;
    uint32_t n = *nreg, *par = NULL, *num = NULL;
    bool joined = false;
    for (uint32_t i = 0; i < P->offmesh_count; i++) {
        const nm_offmesh *o = &P->offmesh[i];
        if (o->zone_id != z->zone_id) continue;
        int64_t a = join_landing(z, T, o->pts[0]), b = join_landing(z, T, o->pts[1]);
        if (a < 0 || b < 0 || rid[a] == rid[b]) continue;
        if (!par) {
            par = nm_malloc(((size_t)n + 1) * sizeof *par);
            if (!par) return nm_fail(err, NM_ERR_NOMEM, "%s: link regions: out of memory", z->name);
            for (uint32_t r = 0; r <= n; r++) par[r] = r;
        }
        uint32_t ra = join_find(par, rid[a]), rb = join_find(par, rid[b]);
        if (ra == rb) continue;
        if (ra < rb) par[rb] = ra; else par[ra] = rb; /* smaller root: order independent */
        joined = true;
    }
    if (joined) {
        num = nm_calloc((size_t)n + 1, sizeof *num);
        if (!num) {
            nm_free(par);
            return nm_fail(err, NM_ERR_NOMEM, "%s: link regions: out of memory", z->name);
        }
        uint32_t next = 0;
        for (uint32_t k = 0; k < T->nspans; k++) {
            uint32_t r = join_find(par, rid[k]);
            if (!num[r]) num[r] = ++next;
            rid[k] = num[r];
        }
        *nreg = next;
    }
    nm_free(par);
    nm_free(num);
    return NM_OK;
}

int nm_bake_links(const nm_zone_clean *zc, nm_bake_grid_zone *z, nm_bake_cell_fn cell_recs, void *ctx,
                  nm_error *err);

int nm_bake_links(const nm_zone_clean *zc, nm_bake_grid_zone *z, nm_bake_cell_fn cell_recs, void *ctx,
                  nm_error *err)
{
    const nm_pack *P = zc->pack;
    uint32_t n = 0;
    for (uint32_t i = 0; i < P->offmesh_count; i++) n += P->offmesh[i].zone_id == z->zone_id;
    z->links = nm_calloc((size_t)n + 1, sizeof *z->links);
    z->opens = nm_calloc(2 * (size_t)n + 1, sizeof *z->opens);
    if (!z->links || !z->opens) return nm_fail(err, NM_ERR_NOMEM, "%s: links: out of memory", z->name);
    uint32_t m = 0, no = 0;
    for (uint32_t i = 0; i < P->offmesh_count; i++) {
        const nm_offmesh *o = &P->offmesh[i];
        if (o->zone_id != z->zone_id) continue;
        nm_bnvf_link *L = &z->links[m++];
        L->boml_index = i;
        L->zone_id = o->zone_id;
        L->kind = o->kind;
        L->is_ext = o->is_ext;
        L->bidirectional = o->bidirectional;
        L->area = o->area;
        L->link_type = o->link_type;
        L->direction = o->direction;
        L->radius = o->radius;
        L->cost_modifier = o->cost_modifier;
        resolve_side(z, cell_recs, ctx, o->pts[0], &L->lo);
        resolve_side(z, cell_recs, ctx, o->pts[1], &L->hi);
        L->valid = (uint8_t)((L->lo.why == 0 ? 1 : 0) | (L->hi.why == 0 ? 2 : 0));
        /* a landing on a non-core record is openable (FOPN source 1): the window opens it */
        const nm_bnvf_link_side *sd[2] = {&L->lo, &L->hi};
        for (int k = 0; k < 2; k++)
            if (sd[k]->why == 4) {
                nm_bnvf_open *op = &z->opens[no++];
                op->gx = sd[k]->gx;
                op->gy = sd[k]->gy;
                op->h = sd[k]->h;
                op->clr = sd[k]->clr;
                op->flags = (uint8_t)(sd[k]->flags | NM_GRID_CORE | NM_GRID_WALK);
                op->src = 1;
            }
    }
    z->link_count = m;
    qsort(z->opens, no, sizeof *z->opens, cmp_open);
    uint32_t u = 0;
    for (uint32_t k = 0; k < no; k++)
        if (!u || cmp_open(&z->opens[u - 1], &z->opens[k]) != 0) z->opens[u++] = z->opens[k];
    z->open_count = u;
    return NM_OK;
}

int nm_bake_grid_pack(const nm_pack *p, const nm_bake_grid_opts *opts, nm_bake_grid_zone **zones,
                      uint32_t *count, nm_error *err)
{
    *zones = NULL;
    *count = 0;
    nm_bake_grid_zone *Z = nm_calloc((size_t)p->zone_count + 1, sizeof *Z);
    if (!Z) return nm_fail(err, NM_ERR_NOMEM, "grid bake: out of memory");
    uint32_t n = 0;
    int rc = NM_OK;
    for (uint32_t zi = 0; zi < p->zone_count; zi++) {
        if (p->zones[zi].flags & NM_ZONE_FLAG_TIER) continue;
        nm_zone_clean *zc = NULL;
        rc = nm_zone_clean_build_at(p, zi, opts ? opts->workers : 0, &zc, err);
        if (rc == NM_ERR_STATE) { rc = NM_OK; continue; } /* no walkable triangle: no grid */
        if (rc != NM_OK) break;
        rc = nm_bake_grid_zone_bake(zc, opts, &Z[n], err);
        nm_zone_clean_free(zc);
        if (rc != NM_OK) break;
        n++;
    }
    if (rc != NM_OK) {
        for (uint32_t i = 0; i < n; i++) nm_bake_grid_zone_free(&Z[i]);
        nm_free(Z);
        return rc;
    }
    *zones = Z;
    *count = n;
    return NM_OK;
}

int nm_bake_grid_write_bgrd(const nm_bake_grid_zone *zones, uint32_t count, int workers,
                            nm_buf *out, nm_error *err)
{
    nm_grid_zone_src *src = nm_calloc((size_t)count + 1, sizeof *src);
    if (!src) return nm_fail(err, NM_ERR_NOMEM, "BGRD: out of memory");
    for (uint32_t i = 0; i < count; i++) src[i] = nm_bake_grid_src(&zones[i]);
    nm_bgrd_write_opts o;
    memset(&o, 0, sizeof o);
    o.workers = workers;
    int rc = nm_bgrd_write(src, count, &o, out, err);
    nm_free(src);
    return rc;
}

int nm_bake_grid_write_bnvf(const nm_bake_grid_zone *zones, uint32_t count, uint64_t build_hash,
                            uint64_t file_fnv, int workers, nm_buf *out, nm_error *err)
{
    int rc = NM_OK;
    nm_grid_zone_src *gs = nm_calloc((size_t)count + 1, sizeof *gs);
    nm_bnvf_zone_src *zs = nm_calloc((size_t)count + 1, sizeof *zs);
    nm_bnvf_range *lz = nm_calloc((size_t)count + 1, sizeof *lz);
    nm_bnvf_range *oz = nm_calloc((size_t)count + 1, sizeof *oz);
    size_t nl = 0, no = 0;
    for (uint32_t i = 0; i < count; i++) {
        nl += zones[i].link_count;
        no += zones[i].open_count;
    }
    nm_bnvf_link *links = nm_calloc(nl + 1, sizeof *links);
    nm_bnvf_open *opens = nm_calloc(no + 1, sizeof *opens);
    if (!gs || !zs || !lz || !oz || !links || !opens) {
        rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
        goto done;
    }
    uint32_t nlz = 0, noz = 0;
    nl = no = 0;
    for (uint32_t i = 0; i < count; i++) {
        const nm_bake_grid_zone *z = &zones[i];
        gs[i] = nm_bake_grid_src(z);
        nm_bnvf_zone_src *s = &zs[i];
        s->grid = &gs[i];
        s->scc = z->scc;
        s->steps2x = z->steps2x;
        s->seg = z->seg;
        s->tax = z->tax;
        s->medial = z->medial;
        s->clr2d = z->clr2d;
        s->regions = z->regions;
        s->region_count = z->global_regions;
        s->wall_keys = z->wall_keys;
        s->wall_count = z->wall_count;
        s->wall_row = z->wall_row;
        s->wall_rids = z->wall_rids;
        if (z->link_count) {
            lz[nlz].zone_id = z->zone_id;
            lz[nlz].first = (uint32_t)nl;
            lz[nlz].len = z->link_count;
            nlz++;
            memcpy(links + nl, z->links, z->link_count * sizeof *links);
            nl += z->link_count;
        }
        if (z->open_count) {
            oz[noz].zone_id = z->zone_id;
            oz[noz].first = (uint32_t)no;
            oz[noz].len = z->open_count;
            noz++;
            memcpy(opens + no, z->opens, z->open_count * sizeof *opens);
            no += z->open_count;
        }
    }
    nm_bnvf_write_src w;
    memset(&w, 0, sizeof w);
    w.build_hash = build_hash;
    w.fnv = file_fnv;
    w.zones = zs;
    w.zone_count = count;
    /* FLNK and FOPN are always written (possibly empty) so readers see the same layout */
    w.links = links;
    w.link_count = (uint32_t)nl;
    w.link_zones = lz;
    w.link_zone_count = nlz;
    w.opens = opens;
    w.open_count = (uint32_t)no;
    w.open_zones = oz;
    w.open_zone_count = noz;
    nm_bgrd_write_opts o;
    memset(&o, 0, sizeof o);
    o.workers = workers;
    rc = nm_bnvf_write(&w, &o, out, err);
done:
    nm_free(gs); nm_free(zs); nm_free(lz); nm_free(oz); nm_free(links); nm_free(opens);
    return rc;
}
