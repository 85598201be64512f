// detour_oracle.cpp — the Detour oracle (detour_oracle.h). The Recast part repeats the pipeline
// and parameters of tools/navbake/recast_shim.cpp (kept separate on purpose: the oracle stays the
// reference build with the game's agent while the bake path itself is being changed), then adds
// the detail mesh and hands both to dtCreateNavMeshData. Nothing here throws out of the C API.
#include "detour_oracle.h"

#include "base/base.h"

#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <Recast.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace {

constexpr unsigned short kFlagWalk = 1, kFlagOff = 2;

int fail(char *msg, size_t cap, int code, const char *what)
{
    if (msg && cap) std::snprintf(msg, cap, "%s", what);
    return code;
}

bool walkable_slope(const float *a, const float *b, const float *c, float cos_slope)
{
    float e0[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float e1[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0]};
    float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len <= 0.0f) return false;
    return n[1] / len > cos_slope;
}

struct Built {
    rcHeightfield *hf = nullptr;
    rcCompactHeightfield *chf = nullptr;
    rcContourSet *cset = nullptr;
    rcPolyMesh *pmesh = nullptr;
    rcPolyMeshDetail *dmesh = nullptr;
    ~Built()
    {
        rcFreeHeightField(hf);
        rcFreeCompactHeightfield(chf);
        rcFreeContourSet(cset);
        rcFreePolyMesh(pmesh);
        rcFreePolyMeshDetail(dmesh);
    }
};

uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

} // namespace

struct nm_dt_oracle {
    // Recast's steps (nm_dt_span_steps): the heightfield's columns (gw x gh from bmin, cs x ch
    // voxels) and, per column, every span walkable after some step: its top (voxels) and the
    // steps after which it was walkable (NM_DT_STEP_* bits)
    int gw = 0, gh = 0;
    float bmin[3] = {0, 0, 0};
    float ch = 0;
    double slope_tan = 0;
    std::vector<uint32_t> col_start; // gw * gh + 1
    std::vector<uint16_t> span_top;
    std::vector<uint8_t> span_steps;
    dtNavMesh *nav = nullptr;
    dtNavMeshQuery *query = nullptr;
    dtQueryFilter filter;
    double cs = 0, radius = 0;
    uint32_t npolys = 0;
    // fan triangles of the walkable polygons for random points
    std::vector<float> tri;      // 9 per triangle
    std::vector<dtPolyRef> tref;
    std::vector<double> cum;     // cumulative area
    ~nm_dt_oracle()
    {
        dtFreeNavMeshQuery(query);
        dtFreeNavMesh(nav);
    }
};

extern "C" void nm_dt_free(nm_dt_oracle *o) { delete o; }
extern "C" uint32_t nm_dt_poly_count(const nm_dt_oracle *o) { return o ? o->npolys : 0; }
extern "C" double nm_dt_cell_size(const nm_dt_oracle *o) { return o ? o->cs : 0; }

extern "C" int nm_dt_build(const nm_rc_input *in, const nm_rc_params *p, const nm_dt_link *links, uint32_t nlinks,
                           uint32_t walkable_flags, nm_dt_oracle **out, char *msg, size_t msg_cap)
{
    *out = nullptr;
    if (!(p->agent_height > 0) || !(p->agent_radius >= 0) || !(p->agent_climb >= 0) ||
        !(p->slope_deg >= 0 && p->slope_deg < 90))
        return fail(msg, msg_cap, NM_ERR_ARG, "detour: bad agent");
    if (in->tri_count == 0 || in->vert_count == 0) return fail(msg, msg_cap, NM_ERR_ARG, "detour: no triangles");
    if (in->vert_count > INT32_MAX / 3 || in->tri_count > INT32_MAX / 3)
        return fail(msg, msg_cap, NM_ERR_ARG, "detour: too many vertices or triangles");
    try {
        Built o;
        rcContext ctx(false);
        const float cos_slope = (float)std::cos(p->slope_deg * 3.14159265358979323846 / 180.0);
        const int nt = (int)in->tri_count;
        std::vector<int> tris((size_t)nt * 3);
        std::vector<unsigned char> areas((size_t)nt);
        for (int t = 0; t < nt; t++) {
            const uint32_t *ti = in->tris + 3 * (size_t)t;
            for (int k = 0; k < 3; k++) {
                if (ti[k] >= in->vert_count) return fail(msg, msg_cap, NM_ERR_ARG, "detour: vertex index out of range");
                tris[3 * (size_t)t + k] = (int)ti[k];
            }
            uint8_t a = in->areas[t];
            bool walk = a != NM_RC_OBSTACLE && a < 32 &&
                        walkable_slope(in->verts + 3 * ti[0], in->verts + 3 * ti[1], in->verts + 3 * ti[2], cos_slope);
            areas[(size_t)t] = walk ? (unsigned char)(a + 1) : RC_NULL_AREA;
        }
        float bmin[3], bmax[3];
        rcCalcBounds(in->verts, (int)in->vert_count, bmin, bmax);
        // navbake's voxel sizes (recast_shim.cpp)
        double cs = p->cell_size > 0 ? p->cell_size : std::fmax(p->agent_radius / 2.0, 0.05);
        double ch = p->cell_height > 0 ? p->cell_height : 0.1;
        const double ey = (double)bmax[1] - bmin[1];
        if (ey / ch > 8000.0) ch = ey / 8000.0;
        const double max_cells = p->max_cells ? (double)p->max_cells : (double)(1u << 24);
        const double ex = (double)bmax[0] - bmin[0], ez = (double)bmax[2] - bmin[2];
        if ((ex / cs + 1) * (ez / cs + 1) > max_cells) cs = std::sqrt(ex * ez / max_cells) * 1.05 + 0.01;
        const float fcs = (float)cs, fch = (float)ch;
        int gw = 0, gh = 0;
        rcCalcGridSize(bmin, bmax, fcs, &gw, &gh);
        const int walkable_height = (int)std::ceil(p->agent_height / ch - 1e-6);
        const int walkable_climb = (int)std::floor(p->agent_climb / ch + 1e-6);
        const int walkable_radius = (int)std::ceil(p->agent_radius / cs - 1e-6);
        const int min_region = (int)std::ceil(1.0 / (cs * cs));
        const int merge_region = (int)std::ceil(10.0 / (cs * cs));
        const int nvp = 6;

        o.hf = rcAllocHeightfield();
        if (!o.hf || !rcCreateHeightfield(&ctx, *o.hf, gw, gh, bmin, bmax, fcs, fch))
            return fail(msg, msg_cap, NM_ERR_NOMEM, "detour: heightfield allocation failed");
        if (!rcRasterizeTriangles(&ctx, in->verts, (int)in->vert_count, tris.data(), areas.data(), nt, *o.hf,
                                  walkable_climb))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: rasterising failed");
        // Each step's verdict is kept per span (steps[k], heightfield order; the filters change
        // areas only, never the spans), so a route point off Detour's mesh can be traced to the
        // step that removed its surface.
        std::vector<uint8_t> steps;
        auto note_hf = [&](uint8_t bit) {
            size_t k = 0;
            for (int c = 0; c < gw * gh; c++)
                for (const rcSpan *s = o.hf->spans[c]; s; s = s->next, k++) {
                    if (bit == NM_DT_STEP_RASTER) {
                        steps.push_back(0);
                        const int top = s->next ? (int)s->next->smin : 0xffff;
                        if (top - (int)s->smax >= walkable_height) steps[k] |= NM_DT_STEP_CLEAR;
                    }
                    if (s->area != RC_NULL_AREA) steps[k] |= bit;
                }
        };
        note_hf(NM_DT_STEP_RASTER);
        rcFilterLowHangingWalkableObstacles(&ctx, walkable_climb, *o.hf);
        note_hf(NM_DT_STEP_LOW_HANGING);
        rcFilterLedgeSpans(&ctx, walkable_height, walkable_climb, *o.hf);
        note_hf(NM_DT_STEP_LEDGE);
        rcFilterWalkableLowHeightSpans(&ctx, walkable_height, *o.hf);
        note_hf(NM_DT_STEP_LOW_HEIGHT);
        o.chf = rcAllocCompactHeightfield();
        if (!o.chf || !rcBuildCompactHeightfield(&ctx, walkable_height, walkable_climb, *o.hf, *o.chf))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: compact heightfield failed");
        if (walkable_radius > 0 && !rcErodeWalkableArea(&ctx, walkable_radius, *o.chf))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: erosion failed");
        if (!rcBuildDistanceField(&ctx, *o.chf) || !rcBuildRegions(&ctx, *o.chf, 0, min_region, merge_region))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: regions failed");
        // the compact heightfield holds the spans walkable after the low-height filter, in the
        // same column order
        std::vector<uint32_t> col_start((size_t)gw * gh + 1, 0);
        std::vector<uint16_t> span_top;
        std::vector<uint8_t> span_steps;
        {
            size_t k = 0;
            for (int c = 0; c < gw * gh; c++) {
                int ci = (int)o.chf->cells[c].index;
                for (const rcSpan *s = o.hf->spans[c]; s; s = s->next, k++) {
                    if (steps[k] & NM_DT_STEP_LOW_HEIGHT) {
                        if (o.chf->areas[ci] != RC_NULL_AREA) steps[k] |= NM_DT_STEP_ERODE;
                        if (o.chf->areas[ci] != RC_NULL_AREA && o.chf->spans[ci].reg != 0) steps[k] |= NM_DT_STEP_REGION;
                        ci++;
                    }
                    if (steps[k] & ~NM_DT_STEP_CLEAR) {
                        span_top.push_back(s->smax);
                        span_steps.push_back(steps[k]);
                    }
                }
                col_start[(size_t)c + 1] = (uint32_t)span_top.size();
            }
        }
        o.cset = rcAllocContourSet();
        if (!o.cset || !rcBuildContours(&ctx, *o.chf, 1.3f, (int)std::ceil(12.0 / cs), *o.cset, RC_CONTOUR_TESS_WALL_EDGES))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: contours failed");
        if (o.cset->nconts == 0) return fail(msg, msg_cap, NM_ERR_ARG, "detour: no walkable polygons");
        o.pmesh = rcAllocPolyMesh();
        if (!o.pmesh || !rcBuildPolyMesh(&ctx, *o.cset, nvp, *o.pmesh))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: polygon mesh failed (over 65535 vertices?)");
        o.dmesh = rcAllocPolyMeshDetail();
        // detail sampling: every 6 cells, 1 cell height of error (RecastDemo's defaults)
        if (!o.dmesh || !rcBuildPolyMeshDetail(&ctx, *o.pmesh, *o.chf, fcs * 6.0f, fch * 1.0f, *o.dmesh))
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: detail mesh failed");
        rcPolyMesh &pm = *o.pmesh;
        if (pm.nverts >= 0xffff) return fail(msg, msg_cap, NM_ERR_ARG, "detour: too many vertices for one tile");
        for (int i = 0; i < pm.npolys; i++) {
            unsigned a = pm.areas[i];
            bool ok = a >= 1 && a <= 32 && ((walkable_flags >> (a - 1)) & 1u);
            pm.flags[i] = ok ? kFlagWalk : kFlagOff;
        }
        std::vector<float> cv(6 * (size_t)nlinks), cr(nlinks);
        std::vector<unsigned short> cf(nlinks, kFlagWalk);
        std::vector<unsigned char> ca(nlinks, 1), cd(nlinks);
        std::vector<unsigned int> cu(nlinks);
        for (uint32_t i = 0; i < nlinks; i++) {
            std::memcpy(&cv[6 * (size_t)i], links[i].a, 3 * sizeof(float));
            std::memcpy(&cv[6 * (size_t)i + 3], links[i].b, 3 * sizeof(float));
            cr[i] = links[i].radius > 0 ? links[i].radius : (float)p->agent_radius;
            cd[i] = links[i].bidirectional ? DT_OFFMESH_CON_BIDIR : 0;
            cu[i] = i;
        }
        dtNavMeshCreateParams cp;
        std::memset(&cp, 0, sizeof cp);
        cp.verts = pm.verts;
        cp.vertCount = pm.nverts;
        cp.polys = pm.polys;
        cp.polyAreas = pm.areas;
        cp.polyFlags = pm.flags;
        cp.polyCount = pm.npolys;
        cp.nvp = pm.nvp;
        cp.detailMeshes = o.dmesh->meshes;
        cp.detailVerts = o.dmesh->verts;
        cp.detailVertsCount = o.dmesh->nverts;
        cp.detailTris = o.dmesh->tris;
        cp.detailTriCount = o.dmesh->ntris;
        cp.offMeshConVerts = nlinks ? cv.data() : nullptr;
        cp.offMeshConRad = nlinks ? cr.data() : nullptr;
        cp.offMeshConFlags = nlinks ? cf.data() : nullptr;
        cp.offMeshConAreas = nlinks ? ca.data() : nullptr;
        cp.offMeshConDir = nlinks ? cd.data() : nullptr;
        cp.offMeshConUserID = nlinks ? cu.data() : nullptr;
        cp.offMeshConCount = (int)nlinks;
        cp.walkableHeight = (float)p->agent_height;
        cp.walkableRadius = (float)p->agent_radius;
        cp.walkableClimb = (float)p->agent_climb;
        rcVcopy(cp.bmin, pm.bmin);
        rcVcopy(cp.bmax, pm.bmax);
        cp.cs = pm.cs;
        cp.ch = pm.ch;
        cp.buildBvTree = true;
        std::unique_ptr<nm_dt_oracle> d(new nm_dt_oracle());
        unsigned char *data = nullptr;
        int size = 0;
        if (!dtCreateNavMeshData(&cp, &data, &size)) return fail(msg, msg_cap, NM_ERR_STATE, "detour: dtCreateNavMeshData failed");
        d->cs = cs;
        d->radius = p->agent_radius;
        d->gw = gw, d->gh = gh, d->ch = fch;
        d->slope_tan = std::tan(p->slope_deg * 3.14159265358979323846 / 180.0);
        rcVcopy(d->bmin, bmin);
        d->col_start.swap(col_start);
        d->span_top.swap(span_top);
        d->span_steps.swap(span_steps);
        d->nav = dtAllocNavMesh();
        if (!d->nav || dtStatusFailed(d->nav->init(data, size, DT_TILE_FREE_DATA))) {
            dtFree(data); // not taken by the navmesh
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: navmesh init failed");
        }
        d->query = dtAllocNavMeshQuery();
        if (!d->query || dtStatusFailed(d->query->init(d->nav, 65535))) {
            return fail(msg, msg_cap, NM_ERR_STATE, "detour: query init failed");
        }
        d->filter.setIncludeFlags(kFlagWalk);
        d->filter.setExcludeFlags(0);
        // fan triangles of the walkable ground polygons
        const dtNavMesh *cnav = d->nav;
        const dtMeshTile *tile = cnav->getTile(0);
        double acc = 0;
        if (tile && tile->header) {
            dtPolyRef base = d->nav->getPolyRefBase(tile);
            for (int i = 0; i < tile->header->polyCount; i++) {
                const dtPoly *poly = &tile->polys[i];
                if (poly->getType() != DT_POLYTYPE_GROUND || !(poly->flags & kFlagWalk)) continue;
                d->npolys++;
                for (int k = 1; k + 1 < poly->vertCount; k++) {
                    const float *a = &tile->verts[3 * poly->verts[0]], *b = &tile->verts[3 * poly->verts[k]],
                                *c = &tile->verts[3 * poly->verts[k + 1]];
                    double ar = 0.5 * std::fabs(((double)b[0] - a[0]) * ((double)c[2] - a[2]) -
                                                ((double)c[0] - a[0]) * ((double)b[2] - a[2]));
                    if (!(ar > 0)) continue;
                    acc += ar;
                    d->tri.insert(d->tri.end(), a, a + 3);
                    d->tri.insert(d->tri.end(), b, b + 3);
                    d->tri.insert(d->tri.end(), c, c + 3);
                    d->tref.push_back(base | (dtPolyRef)i);
                    d->cum.push_back(acc);
                }
            }
        }
        *out = d.release();
        return NM_OK;
    } catch (const std::bad_alloc &) {
        return fail(msg, msg_cap, NM_ERR_NOMEM, "detour: out of memory");
    } catch (...) {
        return fail(msg, msg_cap, NM_ERR_STATE, "detour: unexpected failure");
    }
}

extern "C" unsigned nm_dt_span_steps(const nm_dt_oracle *o, double x, double z, double h, double reach, double *top)
{
    if (!o || o->col_start.empty() || !std::isfinite(x) || !std::isfinite(z) || !std::isfinite(h) || !(reach >= 0))
        return 0;
    // a span's top is the highest surface in its column rounded up to the voxel: it stands for
    // surfaces up to one voxel below it, plus a walkable slope's rise across the column
    const double lo = -(o->ch + M_SQRT2 * o->cs * o->slope_tan), hi = 0.5 * o->ch;
    auto col = [o](double v, double v0, int n) { // clamped before the cast: far points stay defined
        return (int)std::fmax(-1.0, std::fmin(std::floor((v - v0) / o->cs), (double)n));
    };
    const int x0 = col(x - reach, o->bmin[0], o->gw), x1 = col(x + reach, o->bmin[0], o->gw);
    const int z0 = col(z - reach, o->bmin[2], o->gh), z1 = col(z + reach, o->bmin[2], o->gh);
    unsigned best = 0;
    double best_key = INFINITY;
    for (int cz = std::max(z0, 0); cz <= std::min(z1, o->gh - 1); cz++)
        for (int cx = std::max(x0, 0); cx <= std::min(x1, o->gw - 1); cx++) {
            // the column's distance from (x, z): a point within reach of the column stands on it
            const double qx = std::fmin(std::fmax(x, o->bmin[0] + cx * o->cs), o->bmin[0] + (cx + 1) * o->cs);
            const double qz = std::fmin(std::fmax(z, o->bmin[2] + cz * o->cs), o->bmin[2] + (cz + 1) * o->cs);
            const double dist = std::hypot(qx - x, qz - z);
            if (dist > reach) continue;
            const size_t c = (size_t)cz * (size_t)o->gw + (size_t)cx;
            for (uint32_t k = o->col_start[c]; k < o->col_start[c + 1]; k++) {
                const double t = o->bmin[1] + (double)o->span_top[k] * o->ch, d = h - t;
                if (d < lo || d > hi) continue;
                // a span of Recast's regions first, then the nearest column, then the nearest top
                const double key = (o->span_steps[k] & NM_DT_STEP_REGION ? 0 : 1e6) + dist * 1e3 + std::fabs(d);
                if (key >= best_key) continue;
                best_key = key;
                best = o->span_steps[k];
                if (top) *top = t;
            }
        }
    return best;
}

extern "C" bool nm_dt_random_point(const nm_dt_oracle *o, uint64_t *rng, float out[3])
{
    if (!o || o->cum.empty()) return false;
    double r = rng_unit(rng) * o->cum.back();
    size_t lo = 0, hi = o->cum.size() - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (o->cum[mid] <= r) lo = mid + 1;
        else hi = mid;
    }
    double s = rng_unit(rng), t = rng_unit(rng);
    if (s + t > 1) s = 1 - s, t = 1 - t;
    const float *a = &o->tri[9 * lo], *b = a + 3, *c = a + 6;
    for (int k = 0; k < 3; k++) out[k] = (float)(a[k] + s * ((double)b[k] - a[k]) + t * ((double)c[k] - a[k]));
    float h = out[1];
    if (dtStatusSucceed(o->query->getPolyHeight(o->tref[lo], out, &h))) out[1] = h;
    return true;
}

extern "C" void nm_dt_path_free(nm_dt_path *p)
{
    if (!p) return;
    nm_free(p->pts);
    p->pts = nullptr;
    p->npts = 0;
}

extern "C" int nm_dt_find_path(nm_dt_oracle *o, const float start[3], const float goal[3], nm_dt_path *out)
{
    std::memset(out, 0, sizeof *out);
    out->status = NM_DT_FAILED;
    try {
        const float ext[3] = {1.0f, 4.0f, 1.0f};
        dtPolyRef sref = 0, gref = 0;
        float sp[3], gp[3];
        o->query->findNearestPoly(start, ext, &o->filter, &sref, sp);
        if (!sref) {
            out->status = NM_DT_NO_START;
            return NM_OK;
        }
        o->query->findNearestPoly(goal, ext, &o->filter, &gref, gp);
        if (!gref) {
            out->status = NM_DT_NO_GOAL;
            return NM_OK;
        }
        std::memcpy(out->start, sp, sizeof sp);
        std::memcpy(out->goal, gp, sizeof gp);
        const int kMaxPath = 8192;
        std::vector<dtPolyRef> path(kMaxPath);
        int np = 0;
        dtStatus st = o->query->findPath(sref, gref, sp, gp, &o->filter, path.data(), &np, kMaxPath);
        if (dtStatusFailed(st) || np == 0) return NM_OK;
        bool complete = path[(size_t)np - 1] == gref && !(st & DT_PARTIAL_RESULT);
        float end[3];
        std::memcpy(end, gp, sizeof gp);
        if (!complete) {
            bool over = false;
            o->query->closestPointOnPoly(path[(size_t)np - 1], gp, end, &over);
        }
        std::vector<float> sp3((size_t)kMaxPath * 3);
        std::vector<unsigned char> flags(kMaxPath);
        std::vector<dtPolyRef> refs(kMaxPath);
        int ns = 0;
        st = o->query->findStraightPath(sp, end, path.data(), np, sp3.data(), flags.data(), refs.data(), &ns, kMaxPath);
        if (dtStatusFailed(st) || ns == 0) return NM_OK;
        out->pts = (float *)nm_malloc(sizeof(float) * 3 * (size_t)ns);
        if (!out->pts) return NM_ERR_NOMEM;
        std::memcpy(out->pts, sp3.data(), sizeof(float) * 3 * (size_t)ns);
        out->npts = (uint32_t)ns;
        double len = 0;
        for (int i = 0; i + 1 < ns; i++) {
            len += std::hypot((double)sp3[3 * (size_t)i + 3] - sp3[3 * (size_t)i],
                              (double)sp3[3 * (size_t)i + 5] - sp3[3 * (size_t)i + 2]);
            if (flags[(size_t)i] & DT_STRAIGHTPATH_OFFMESH_CONNECTION) out->uses_link = true;
        }
        out->length = len;
        out->status = complete ? NM_DT_COMPLETE : NM_DT_PARTIAL;
        return NM_OK;
    } catch (const std::bad_alloc &) {
        return NM_ERR_NOMEM;
    } catch (...) {
        return NM_ERR_STATE;
    }
}

extern "C" double nm_dt_min_width(nm_dt_oracle *o, const nm_dt_path *p, float at[3])
{
    // The corridor across the path: rays both ways perpendicular to each straight-path leg, from
    // samples every 0.25 m; the two distances to Detour's wall add up to the eroded width there
    // wherever the path runs in it (a corner-hugging path has 0 on one side).
    double best = -1;
    const float ext[3] = {0.5f, 2.0f, 0.5f};
    const double reach = 8.0;
    for (uint32_t i = 0; i + 1 < p->npts; i++) {
        const float *a = p->pts + 3 * (size_t)i, *b = a + 3;
        double dx = (double)b[0] - a[0], dz = (double)b[2] - a[2], len = std::hypot(dx, dz);
        if (!(len > 1e-6)) continue;
        double nx = -dz / len, nz = dx / len;
        int ns = (int)std::ceil(len / 0.25);
        for (int k = 0; k <= ns; k++) {
            double f = (double)k / ns;
            float q[3] = {(float)(a[0] + f * dx), (float)(a[1] + f * ((double)b[1] - a[1])), (float)(a[2] + f * dz)};
            dtPolyRef ref = 0;
            float np[3];
            o->query->findNearestPoly(q, ext, &o->filter, &ref, np);
            if (!ref) continue;
            double w = 0;
            for (int side = -1; side <= 1; side += 2) {
                float e[3] = {(float)(np[0] + side * reach * nx), np[1], (float)(np[2] + side * reach * nz)};
                float t = 0, hn[3];
                dtPolyRef path[64];
                int npath = 0;
                if (dtStatusFailed(o->query->raycast(ref, np, e, &o->filter, &t, hn, path, &npath, 64))) {
                    w = -1;
                    break;
                }
                w += (t > 1.0f ? 1.0 : (double)t) * reach;
            }
            if (w < 0) continue;
            if (best < 0 || w < best) {
                best = w;
                std::memcpy(at, np, sizeof np);
            }
        }
    }
    return best;
}
