/* pack.c — the in-memory main pack: freeing it, looking up zones and sections, and the canonical
 * record bytes (vertex 12 B, triangle 36 B with the recomputed centre, link 8 B) that both the
 * reader and the writer feed into build_hash (design article 几何段). */
#include "pack_internal.h"

#include <math.h>
#include <string.h>

void nm_pack_free(nm_pack *p)
{
    if (!p) return;
    for (uint32_t i = 0; p->zones && i < p->zone_count; i++) nm_free(p->zones[i].name);
    nm_free(p->zones);
    nm_free(p->verts);
    nm_free(p->tris);
    nm_free(p->components);
    nm_free(p->links);
    nm_free(p->surfaces);
    nm_free(p->offmesh);
    for (uint32_t i = 0; p->sections && i < p->section_count; i++) nm_free(p->sections[i].bytes);
    nm_free(p->sections);
    memset(p, 0, sizeof *p);
}

int nm_pack_find_zone(const nm_pack *p, const char *name)
{
    if (!p || !name) return -1;
    size_t n = strlen(name);
    int found = -1;
    /* 同名取最后一条: the last of equal names wins. */
    for (uint32_t i = 0; i < p->zone_count; i++) {
        const nm_zone *z = &p->zones[i];
        if (z->name_len == n && (n == 0 || memcmp(z->name, name, n) == 0)) found = (int)i;
    }
    return found;
}

int nm_pack_find_zone_id(const nm_pack *p, uint16_t id)
{
    if (!p) return -1;
    for (uint32_t i = 0; i < p->zone_count; i++)
        if (p->zones[i].id == id) return (int)i;
    return -1;
}

const nm_section *nm_pack_section(const nm_pack *p, const char tag[4])
{
    if (!p || !tag) return NULL;
    const nm_section *found = NULL;
    /* BGRD: the first entry wins; every other tag: the last (reference-maaend.md §4.11). */
    bool first_wins = memcmp(tag, "BGRD", 4) == 0;
    for (uint32_t i = 0; i < p->section_count; i++) {
        if (memcmp(p->sections[i].tag, tag, 4) != 0) continue;
        found = &p->sections[i];
        if (first_wins) break;
    }
    return found;
}

void nm_pack_centre(const nm_vertex *verts, const nm_tri *t, float *cu, float *cv)
{
    const nm_vertex *a = &verts[t->v[0]], *b = &verts[t->v[1]], *c = &verts[t->v[2]];
    /* ((a+b)+c)/3.0f exactly: multiplying by 1/3 rounds differently and breaks build_hash. */
    *cu = ((a->u + b->u) + c->u) / 3.0f;
    *cv = ((a->v + b->v) + c->v) / 3.0f;
}

void nm_tri_centre(const nm_pack *p, uint32_t tri, float *cu, float *cv)
{
    if (!p || tri >= p->tri_count) {
        *cu = *cv = 0.0f;
        return;
    }
    nm_pack_centre(p->verts, &p->tris[tri], cu, cv);
}

bool nm_tri_standable(const nm_pack *p, uint32_t tri)
{
    if (!p || tri >= p->tri_count) return false;
    /* the BSRF record: one per triangle, or the whole pack's left by a zone-scoped load */
    size_t s = tri;
    if (p->surface_count != p->tri_count && p->zone_scoped) s += p->tri_base;
    if (p->surface_count > 0 && s < p->surface_count && !(p->surfaces[s].flags & NM_kWalkableFlags)) return false;
    const nm_vertex *a = &p->verts[p->tris[tri].v[0]], *b = &p->verts[p->tris[tri].v[1]],
                    *c = &p->verts[p->tris[tri].v[2]];
    /* the plane's normal in (px, px, m): its height gradient |(nu, nv)| / |nh| in m per px */
    double e0[3] = {(double)b->u - a->u, (double)b->v - a->v, (double)b->h - a->h};
    double e1[3] = {(double)c->u - a->u, (double)c->v - a->v, (double)c->h - a->h};
    double nu = e0[1] * e1[2] - e0[2] * e1[1], nv = e0[2] * e1[0] - e0[0] * e1[2],
           nh = e0[0] * e1[1] - e0[1] * e1[0];
    return nh != 0 && sqrt(nu * nu + nv * nv) <= NM_kSlope * fabs(nh);
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

void nm_pack_vertex_record(const nm_vertex *v, uint8_t out[NM_VERTEX_RECORD_SIZE])
{
    nm_le32(out, f32_bits(v->u));
    nm_le32(out + 4, f32_bits(v->v));
    nm_le32(out + 8, f32_bits(v->h));
}

void nm_pack_tri_record(const nm_vertex *verts, const nm_tri *t, uint32_t component,
                        uint8_t out[NM_TRI_RECORD_SIZE])
{
    float cu, cv;
    nm_pack_centre(verts, t, &cu, &cv);
    for (int k = 0; k < 3; k++) {
        nm_le32(out + 4 * k, t->v[k]);
        nm_le32(out + 12 + 4 * k, (uint32_t)t->nb[k]);
    }
    nm_le32(out + 24, component);
    nm_le32(out + 28, f32_bits(cu));
    nm_le32(out + 32, f32_bits(cv));
}

void nm_pack_link_record(const nm_link *l, uint8_t out[NM_LINK_RECORD_SIZE])
{
    nm_le32(out, l->src);
    nm_le32(out + 4, l->dst);
}

/* ---- chunk jobs shared by the reader and the writer ------------------------------------------ */
typedef struct run_ctx {
    nm_pack_chunk_fn fn;
    void *ctx;
    int8_t *status; /* per chunk; NULL when serial */
} run_ctx;

static int run_one(void *arg, size_t chunk)
{
    run_ctx *r = (run_ctx *)arg;
    int rc = r->fn(r->ctx, chunk, NULL);
    r->status[chunk] = (int8_t)(rc < 0 ? rc : 0);
    return rc;
}

int nm_pack_run_chunks(size_t n, int workers, nm_pack_chunk_fn fn, void *ctx, nm_error *err)
{
    if (n == 0) return NM_OK;
    if (workers <= 1 || n == 1) {
        for (size_t c = 0; c < n; c++) {
            int rc = fn(ctx, c, err);
            if (rc) return rc;
        }
        return NM_OK;
    }
    run_ctx r = {fn, ctx, (int8_t *)nm_calloc(n, 1)};
    if (!r.status) return nm_fail(err, NM_ERR_NOMEM, "out of memory for %zu chunk states", n);
    int rc = nm_parallel_chunks(n, workers, run_one, &r);
    if (rc) {
        size_t first = n;
        for (size_t c = 0; c < n; c++)
            if (r.status[c]) {
                first = c;
                break;
            }
        /* Rerun the first failing chunk here for a deterministic message; the pool itself may
         * have failed (no chunk state set), then report that. */
        if (first < n) rc = fn(ctx, first, err);
        if (rc == NM_OK || first == n) rc = nm_fail(err, rc ? rc : NM_ERR_NOMEM, "worker pool failed");
    }
    nm_free(r.status);
    return rc;
}

int nm_pack_workers(int requested, size_t records)
{
    if (requested > 0) return requested > NM_WORKER_LIMIT ? NM_WORKER_LIMIT : requested;
    return nm_workers_for(records, 0);
}
