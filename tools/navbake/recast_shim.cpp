// recast_shim.cpp — the only C++ in navbake: runs Recast's standard pipeline (rasterise, filter,
// compact, open (erode and give back), watershed regions, contours, polygon mesh, detail mesh) on
// one zone's triangles and hands the detail triangles back through the C API of recast_shim.h.
// Nothing here throws out of the C API, prints or exits; every Recast failure becomes a status
// and a message.
#include "recast_shim.h"

#include "base/base.h"

#include <Recast.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

// Frees every Recast object on every path out of nm_rc_build.
struct RecastObjects {
    rcHeightfield *hf = nullptr;
    rcCompactHeightfield *chf = nullptr;
    rcContourSet *cset = nullptr;
    rcPolyMesh *pmesh = nullptr;
    rcPolyMeshDetail *dmesh = nullptr;
    int *tris = nullptr;
    unsigned char *areas = nullptr;
    ~RecastObjects()
    {
        rcFreeHeightField(hf);
        rcFreeCompactHeightfield(chf);
        rcFreeContourSet(cset);
        rcFreePolyMesh(pmesh);
        rcFreePolyMeshDetail(dmesh);
        nm_free(tris);
        nm_free(areas);
    }
};

int fail(char *msg, size_t cap, int code, const char *what)
{
    if (msg && cap) std::snprintf(msg, cap, "%s", what);
    return code;
}

// Recast's own walkable test (rcMarkWalkableTriangles), written out so the area of each walkable
// triangle can be our area + 1 instead of RC_WALKABLE_AREA.
bool walkable_slope(const float *a, const float *b, const float *c, float cos_slope)
{
    float e0[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float e1[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0]};
    float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len <= 0.0f) return false;
    return n[1] / len > cos_slope;
}

constexpr int RC_VERTS_PER_POLYGON_MAX = 6;

// Barycentric weights (l1, l2) in plan (x, z) of (x, z) in triangle a b c, the third being
// 1 - l1 - l2; false for a triangle with no area in plan.
bool plan_weights(const float *a, const float *b, const float *c, double x, double z, double *l1, double *l2)
{
    double det = ((double)b[0] - a[0]) * ((double)c[2] - a[2]) - ((double)c[0] - a[0]) * ((double)b[2] - a[2]);
    if (std::fabs(det) < 1e-12) return false;
    *l1 = (((double)b[0] - x) * ((double)c[2] - z) - ((double)c[0] - x) * ((double)b[2] - z)) / det;
    *l2 = (((double)c[0] - x) * ((double)a[2] - z) - ((double)a[0] - x) * ((double)c[2] - z)) / det;
    return true;
}

// Height h of input triangle t at (x, z), when (x, z) lies over it in plan (within 1e-6 of its
// barycentric range).
bool height_over(const float *in_verts, const int *tris, int t, double x, double z, double *h)
{
    const float *a = in_verts + 3 * (size_t)tris[3 * t], *b = in_verts + 3 * (size_t)tris[3 * t + 1],
                *c = in_verts + 3 * (size_t)tris[3 * t + 2];
    double l1, l2;
    if (!plan_weights(a, b, c, x, z, &l1, &l2)) return false;
    double l3 = 1.0 - l1 - l2;
    const double eps = -1e-6;
    if (l1 < eps || l2 < eps || l3 < eps) return false;
    *h = l1 * a[1] + l2 * b[1] + l3 * c[1];
    return true;
}

// Height of triangle t's surface at its point q nearest to p in plan (on its edges), when q is
// within cs of p, p is not over t, and t is a separate surface from `under`, the triangle under p
// the snap chose: no corner in common with it, and t's height at q off under's plane extended by
// more than kSeparate. A slat beside the slat under p is one; the next triangle of the same slope or
// of a bend (a shared corner or edge, the same plane) is not, so the heights of a continuous surface
// are left as the point's own. q and under's plane at q go out too: snap_heights still refuses t
// when p's own surface goes on under q (surface_at: then t is a level over it, not across a gap).
constexpr double kSeparate = 0.01; // m

bool beside_height(const float *in_verts, const int *tris, int t, int under, const float *p, double cs, double *h_out,
                   double *q_out, double *plane_out)
{
    if (t == under) return false;
    const float *c[3], *u[3];
    for (int k = 0; k < 3; k++) {
        c[k] = in_verts + 3 * (size_t)tris[3 * t + k];
        u[k] = in_verts + 3 * (size_t)tris[3 * under + k];
    }
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 3; m++)
            if (c[k][0] == u[m][0] && c[k][1] == u[m][1] && c[k][2] == u[m][2]) return false;
    double l1, l2;
    if (!plan_weights(c[0], c[1], c[2], p[0], p[2], &l1, &l2)) return false;
    if (l1 >= 0 && l2 >= 0 && 1.0 - l1 - l2 >= 0) return false; // under p: the snap's own case
    double best = INFINITY, qx = 0, qz = 0, qh = 0;
    for (int e = 0; e < 3; e++) {
        const float *a = c[e], *b = c[(e + 1) % 3];
        double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2], l2e = ex * ex + ez * ez;
        double s = l2e > 0 ? (((double)p[0] - a[0]) * ex + ((double)p[2] - a[2]) * ez) / l2e : 0.0;
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        double x = a[0] + s * ex, z = a[2] + s * ez, dx = x - p[0], dz = z - p[2], d = std::sqrt(dx * dx + dz * dz);
        if (d < best) {
            best = d;
            qx = x;
            qz = z;
            qh = a[1] + s * ((double)b[1] - a[1]);
        }
    }
    if (best > cs) return false;
    // under's plane at (qx, qz)
    double m1, m2;
    if (!plan_weights(u[0], u[1], u[2], qx, qz, &m1, &m2)) return false;
    double plane = m1 * u[0][1] + m2 * u[1][1] + (1.0 - m1 - m2) * u[2][1];
    if (std::fabs(qh - plane) <= kSeparate) return false;
    *h_out = qh;
    q_out[0] = qx;
    q_out[1] = qz;
    *plane_out = plane;
    return true;
}

// Is there a walkable triangle over (x, z) in list[lo, hi) whose height there is within kSeparate
// of h?
bool surface_at(const float *in_verts, const int *tris, const uint32_t *list, uint32_t lo, uint32_t hi, double x,
                double z, double h)
{
    for (uint32_t k = lo; k < hi; k++) {
        double ht;
        if (height_over(in_verts, tris, (int)list[k], x, z, &ht) && std::fabs(ht - h) <= kSeparate) return true;
    }
    return false;
}

// Puts every output vertex back on the walkable input surface. Recast's vertex heights are voxel
// tops (up to one cell height above the surface) and, on slopes, the highest span around the
// corner. The surface under (x, z) whose height is closest to y - ch/2 within
// [y - climb - ch, y + ch] wins (lowest triangle id on ties); a vertex with no surface there
// keeps Recast's height. A vertex on the mesh's boundary (`boundary[i]`, see boundary_vertices)
// may also take a separate surface beside it (beside_height: within one Recast cell `cs` in plan,
// at that surface's point nearest the vertex, no corner shared with the surface under the vertex,
// which does not go on under that point), when it lies within one cell height ch of the surface
// under the vertex (one voxel layer for Recast: its column there was that surface too) and is
// closer to y - ch/2. Why: Rasterize's clamped sample gives a grid cell the boundary reaches
// into the boundary corner's height (formula 31), and at a slat gap the lower slat under the
// corner made a 0.56 m climb look like 0.50 m (navmesh/bake/README.md "Eighth session: the slat
// gap"). Triangles are found through a bucket grid over the vertices' extent.
bool snap_heights(const float *in_verts, const int *tris, const unsigned char *areas, int nt, float *verts, int nv,
                  const unsigned char *boundary, float cs, float ch, float climb)
{
    if (nv <= 0) return true;
    float minx = verts[0], maxx = verts[0], minz = verts[2], maxz = verts[2];
    for (int i = 1; i < nv; i++) {
        minx = std::fmin(minx, verts[3 * i]);
        maxx = std::fmax(maxx, verts[3 * i]);
        minz = std::fmin(minz, verts[3 * i + 2]);
        maxz = std::fmax(maxz, verts[3 * i + 2]);
    }
    const int kMaxSide = 256;
    double bs = std::fmax(2.0, std::fmax((double)maxx - minx, (double)maxz - minz) / kMaxSide); // bucket, m
    int bw = (int)(((double)maxx - minx) / bs) + 1, bh = (int)(((double)maxz - minz) / bs) + 1;
    auto cell_of = [&](double x, double lo, int n) {
        int c = (int)std::floor((x - lo) / bs);
        return c < 0 ? 0 : c >= n ? n - 1 : c;
    };
    // Pass 0 counts the entries of each bucket, pass 1 fills them (CSR, triangle order).
    uint32_t *start = (uint32_t *)nm_calloc((size_t)bw * bh + 1, sizeof(uint32_t));
    if (!start) return false;
    uint32_t *list = nullptr;
    for (int pass = 0; pass < 2; pass++) {
        for (int t = 0; t < nt; t++) {
            if (areas[t] == RC_NULL_AREA) continue;
            const float *a = in_verts + 3 * (size_t)tris[3 * t], *b = in_verts + 3 * (size_t)tris[3 * t + 1],
                        *c = in_verts + 3 * (size_t)tris[3 * t + 2];
            // grown by one cell: a boundary vertex also looks at the surfaces within cs beside it
            double tx0 = std::fmin(a[0], std::fmin(b[0], c[0])) - cs, tx1 = std::fmax(a[0], std::fmax(b[0], c[0])) + cs;
            double tz0 = std::fmin(a[2], std::fmin(b[2], c[2])) - cs, tz1 = std::fmax(a[2], std::fmax(b[2], c[2])) + cs;
            if (tx1 < minx || tx0 > maxx || tz1 < minz || tz0 > maxz) continue;
            int x0 = cell_of(tx0, minx, bw), x1 = cell_of(tx1, minx, bw);
            int z0 = cell_of(tz0, minz, bh), z1 = cell_of(tz1, minz, bh);
            for (int z = z0; z <= z1; z++)
                for (int x = x0; x <= x1; x++) {
                    size_t cell = (size_t)z * bw + x;
                    if (pass == 0) start[cell + 1]++;
                    else list[start[cell]++] = (uint32_t)t;
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < (size_t)bw * bh; c++) start[c + 1] += start[c];
            list = (uint32_t *)nm_malloc(sizeof(uint32_t) * (start[(size_t)bw * bh] ? start[(size_t)bw * bh] : 1));
            if (!list) {
                nm_free(start);
                return false;
            }
        }
    }
    // After filling, start[c] is the end of bucket c, i.e. the start of bucket c + 1.
    for (int i = 0; i < nv; i++) {
        float *p = verts + 3 * (size_t)i;
        size_t cell = (size_t)cell_of(p[2], minz, bh) * bw + cell_of(p[0], minx, bw);
        uint32_t lo = cell ? start[cell - 1] : 0, hi = start[cell];
        double want = (double)p[1] - ch / 2, best = INFINITY, best_h = p[1];
        int under = -1; // the triangle that won under the point
        for (uint32_t k = lo; k < hi; k++) {
            int t = (int)list[k];
            double h;
            if (!height_over(in_verts, tris, t, p[0], p[2], &h)) continue;
            if (h < (double)p[1] - climb - ch || h > (double)p[1] + ch) continue;
            double d = std::fabs(h - want);
            if (d < best) {
                best = d;
                best_h = h;
                under = t;
            }
        }
        const double under_h = best_h;
        if (boundary[i] && under >= 0)
            for (uint32_t k = lo; k < hi; k++) {
                double h, q[2], plane;
                if (!beside_height(in_verts, tris, (int)list[k], under, p, cs, &h, q, &plane)) continue;
                if (h < (double)p[1] - climb - ch || h > (double)p[1] + ch) continue;
                if (std::fabs(h - under_h) > ch) continue; // one voxel layer with the surface under p
                if (surface_at(in_verts, tris, list, lo, hi, q[0], q[1], plane)) continue;
                double d = std::fabs(h - want);
                if (d < best) {
                    best = d;
                    best_h = h;
                }
            }
        p[1] = (float)best_h;
    }
    nm_free(start);
    nm_free(list);
    return true;
}

// Marks the vertices on the boundary of Recast's detail mesh: the ends of a triangle edge no other
// triangle has (vertices compared by position: Recast gives each polygon its own copies, and samples
// a shared polygon edge identically from both sides). flag[i] = 1 on the boundary. Memory: nv + 3 nt
// entries, freed before it returns.
bool boundary_vertices(const float *verts, int nv, const uint32_t *tris, size_t nt, unsigned char *flag)
{
    struct vk { float p[3]; int id; };
    struct ek { int lo, hi; };
    vk *v = (vk *)nm_malloc(sizeof(vk) * (size_t)(nv ? nv : 1));
    int *rep = (int *)nm_malloc(sizeof(int) * (size_t)(nv ? nv : 1));
    ek *e = (ek *)nm_malloc(sizeof(ek) * (nt ? 3 * nt : 1));
    bool ok = v && rep && e;
    if (ok) {
        for (int i = 0; i < nv; i++) {
            for (int a = 0; a < 3; a++) v[i].p[a] = verts[3 * (size_t)i + a] + 0.0f; // -0 -> +0
            v[i].id = i;
            flag[i] = 0;
        }
        auto vless = [](const void *pa, const void *pb) {
            const vk *a = (const vk *)pa, *b = (const vk *)pb;
            int c = std::memcmp(a->p, b->p, sizeof a->p);
            return c ? (c < 0 ? -1 : 1) : (a->id < b->id ? -1 : a->id > b->id);
        };
        std::qsort(v, (size_t)nv, sizeof *v, vless);
        for (int i = 0; i < nv; i++)
            rep[v[i].id] = (i > 0 && !std::memcmp(v[i - 1].p, v[i].p, sizeof v[i].p)) ? rep[v[i - 1].id] : v[i].id;
        for (size_t t = 0; t < nt; t++)
            for (int k = 0; k < 3; k++) {
                int a = rep[tris[3 * t + k]], b = rep[tris[3 * t + (k + 1) % 3]];
                e[3 * t + k] = ek{a < b ? a : b, a < b ? b : a};
            }
        auto eless = [](const void *pa, const void *pb) {
            const ek *a = (const ek *)pa, *b = (const ek *)pb;
            return a->lo != b->lo ? (a->lo < b->lo ? -1 : 1) : (a->hi < b->hi ? -1 : a->hi > b->hi);
        };
        std::qsort(e, 3 * nt, sizeof *e, eless);
        for (size_t i = 0; i < 3 * nt;) {
            size_t j = i + 1;
            while (j < 3 * nt && e[j].lo == e[i].lo && e[j].hi == e[i].hi) j++;
            if (j - i == 1) flag[e[i].lo] = flag[e[i].hi] = 1;
            i = j;
        }
        for (int i = 0; i < nv; i++) flag[i] = flag[rep[i]];
    }
    nm_free(v);
    nm_free(rep);
    nm_free(e);
    return ok;
}

// Is span i within `radius` cells (straight along one axis, through connected spans) of a thin
// barrier or a low ledge: a boundary beyond which, within `far` columns, lies a walkable span
// within `band` voxels (kClimb) of the floor it was reached from? A wall, fence or crate thinner
// than `far`, or the top or foot of a rise the planner walks (up to kClimb, no drop) although
// Recast's climb does not.
bool near_thin_barrier(const rcCompactHeightfield &chf, const unsigned char *orig, const int *cx, const int *cz, int i,
                       int radius, int far, int band)
{
    for (int dir = 0; dir < 4; dir++) {
        const int dx = rcGetDirOffsetX(dir), dz = rcGetDirOffsetY(dir);
        int j = i;
        for (int step = 0; step <= radius; step++) {
            const rcCompactSpan &s = chf.spans[j];
            if (rcGetCon(s, dir) != RC_NOT_CONNECTED) {
                j = (int)chf.cells[(cx[j] + dx) + (cz[j] + dz) * chf.width].index + rcGetCon(s, dir);
                continue;
            }
            const int y = (int)chf.spans[j].y;
            for (int k = 1; k <= far; k++) {
                const int x = cx[j] + k * dx, z = cz[j] + k * dz;
                if (x < 0 || z < 0 || x >= chf.width || z >= chf.height) break;
                const rcCompactCell &c = chf.cells[x + z * chf.width];
                for (int m = (int)c.index, nm = (int)(c.index + c.count); m < nm; m++)
                    if (orig[m] != RC_NULL_AREA && std::abs((int)chf.spans[m].y - y) <= band) return true;
            }
            break;
        }
    }
    return false;
}

// Morphological opening of the walkable area: Recast's erosion by the agent radius, then every
// eroded span within `radius` cells (straight-line, cell centre to cell centre, reached through
// connected spans of the original walkable area) of a span that survived the erosion gets its
// area back, unless it lies near a thin barrier or a low ledge (near_thin_barrier, `far`
// columns, `band` voxels). What stays eroded: what no disc of the agent's radius fits into (slots
// and gaps narrower than the agent, wall tops, beams); the strip along both faces of walls,
// fences and crates thinner than `far` (the grid closes cracks and bridges seams up to about 1 m,
// CloseCracks and AppendSeamBridge, and the mesh gives it no other sign that a wall stands in such
// a gap); and the strip at rises Recast does not climb but the grid would walk (up to kClimb:
// there is no drop to declare, so the surfaces stay apart as Recast and Detour keep them). The
// strip at ledges higher than kClimb (top and foot) and along thick walls comes back, so the
// take-off row at a ledge's top and the landing row at its foot stay grid neighbours (台沿下落);
// keeping the agent off walls is the grid's own clearance field's job.
bool open_walkable_area(rcContext *ctx, int radius, int far, int band, rcCompactHeightfield &chf)
{
    const int n = chf.spanCount;
    if (radius <= 0 || n <= 0) return true;
    unsigned char *orig = (unsigned char *)nm_malloc((size_t)n);
    int *cx = (int *)nm_malloc(sizeof(int) * (size_t)n), *cz = (int *)nm_malloc(sizeof(int) * (size_t)n);
    int *queue = (int *)nm_malloc(sizeof(int) * (size_t)n), *seen = (int *)nm_malloc(sizeof(int) * (size_t)n);
    bool ok = orig && cx && cz && queue && seen;
    if (ok) {
        std::memcpy(orig, chf.areas, (size_t)n);
        for (int z = 0; z < chf.height; z++)
            for (int x = 0; x < chf.width; x++) {
                const rcCompactCell &c = chf.cells[x + z * chf.width];
                for (int i = (int)c.index, ni = (int)(c.index + c.count); i < ni; i++) {
                    cx[i] = x;
                    cz[i] = z;
                }
            }
        ok = rcErodeWalkableArea(ctx, radius, chf);
    }
    if (ok) {
        // seen[j] == i marks span j visited by the search from eroded span i (no clearing needed).
        for (int i = 0; i < n; i++) seen[i] = -1;
        const int r2 = radius * radius;
        for (int i = 0; i < n; i++) {
            if (orig[i] == RC_NULL_AREA || chf.areas[i] != RC_NULL_AREA) continue;
            int head = 0, tail = 0;
            queue[tail++] = i;
            seen[i] = i;
            bool found = false;
            while (head < tail && !found) {
                int j = queue[head++];
                const rcCompactSpan &s = chf.spans[j];
                for (int dir = 0; dir < 4 && !found; dir++) {
                    if (rcGetCon(s, dir) == RC_NOT_CONNECTED) continue;
                    int nx = cx[j] + rcGetDirOffsetX(dir), nz = cz[j] + rcGetDirOffsetY(dir);
                    int k = (int)chf.cells[nx + nz * chf.width].index + rcGetCon(s, dir);
                    if (seen[k] == i || orig[k] == RC_NULL_AREA) continue;
                    int dx = nx - cx[i], dz = nz - cz[i];
                    if (dx * dx + dz * dz > r2) continue; // outside the disc: no path back in
                    seen[k] = i;
                    if (chf.areas[k] != RC_NULL_AREA && !(chf.areas[k] & 0x80u)) found = true; // a survivor within the radius
                    else queue[tail++] = k;
                }
            }
            // Marked for now (bit 7 is free: our areas are 1..32), so spans restored in this pass
            // do not seed others.
            if (found && !near_thin_barrier(chf, orig, cx, cz, i, radius, far, band))
                chf.areas[i] = (unsigned char)(0x80u | orig[i]);
        }
        for (int i = 0; i < n; i++)
            if (chf.areas[i] & 0x80u) chf.areas[i] = orig[i];
    }
    nm_free(orig);
    nm_free(cx);
    nm_free(cz);
    nm_free(queue);
    nm_free(seen);
    return ok;
}

} // namespace

extern "C" bool nm_rc_available(void) { return true; }

extern "C" void nm_rc_mesh_free(nm_rc_mesh *m)
{
    if (!m) return;
    nm_free(m->verts);
    nm_free(m->tris);
    nm_free(m->areas);
    std::memset(m, 0, sizeof *m);
}

extern "C" int nm_rc_build(const nm_rc_input *in, const nm_rc_params *p, nm_rc_mesh *out, char *msg, size_t msg_cap)
{
    std::memset(out, 0, sizeof *out);
    if (!(p->agent_height > 0) || !(p->agent_radius >= 0) || !(p->agent_climb >= 0) ||
        !(p->slope_deg >= 0 && p->slope_deg < 90))
        return fail(msg, msg_cap, NM_ERR_ARG, "recast: bad agent (height > 0, radius >= 0, climb >= 0, slope 0..90)");
    if (in->tri_count == 0 || in->vert_count == 0) return NM_OK;
    if (in->vert_count > INT32_MAX / 3 || in->tri_count > INT32_MAX / 3)
        return fail(msg, msg_cap, NM_ERR_ARG, "recast: too many vertices or triangles");

    try {
        RecastObjects o;
        rcContext ctx(false);
        const float cos_slope = (float)std::cos(p->slope_deg * 3.14159265358979323846 / 180.0);
        const int nt = (int)in->tri_count;

        // Input: walkable triangles carry our area + 1; steep ones and obstacles are solid only.
        o.tris = (int *)nm_malloc(sizeof(int) * 3 * (size_t)nt);
        o.areas = (unsigned char *)nm_malloc((size_t)nt);
        if (!o.tris || !o.areas) return fail(msg, msg_cap, NM_ERR_NOMEM, "recast: out of memory");
        bool any_walkable = false;
        for (int t = 0; t < nt; t++) {
            const uint32_t *ti = in->tris + 3 * (size_t)t;
            for (int k = 0; k < 3; k++) {
                if (ti[k] >= in->vert_count) return fail(msg, msg_cap, NM_ERR_ARG, "recast: vertex index out of range");
                o.tris[3 * t + k] = (int)ti[k];
            }
            uint8_t a = in->areas[t];
            bool walk = a != NM_RC_OBSTACLE && a < 32 &&
                        walkable_slope(in->verts + 3 * ti[0], in->verts + 3 * ti[1], in->verts + 3 * ti[2], cos_slope);
            o.areas[t] = walk ? (unsigned char)(a + 1) : RC_NULL_AREA;
            any_walkable |= walk;
        }
        if (!any_walkable) return NM_OK;

        float bmin[3], bmax[3];
        rcCalcBounds(in->verts, (int)in->vert_count, bmin, bmax);
        // Cell size: a quarter of the agent radius, grown only when the grid would exceed
        // max_cells. Recast's mesh edge lies up to one cell off the surface's edge (the ledge-span
        // filter takes the partly covered ring off a ledge's top, contours move edges by up to
        // max_error), and at half the radius (0.205 m) a ledge's top and its foot ended two
        // planner cells (kCS = 1/3 m) apart: no hop between them. A quarter keeps them neighbours.
        double cs = p->cell_size > 0 ? p->cell_size : std::fmax(p->agent_radius / 4.0, 0.05);
        double ch = p->cell_height > 0 ? p->cell_height : 0.1;
        // Span heights have 13 bits in Recast: a very tall zone gets a coarser cell height
        // rather than clipped spans.
        const double ey = (double)bmax[1] - bmin[1];
        if (ey / ch > 8000.0) ch = ey / 8000.0;
        const double max_cells = p->max_cells ? (double)p->max_cells : (double)(1u << 24);
        const double ex = (double)bmax[0] - bmin[0], ez = (double)bmax[2] - bmin[2];
        if ((ex / cs + 1) * (ez / cs + 1) > max_cells) cs = std::sqrt(ex * ez / max_cells) * 1.05 + 0.01;
        const float fcs = (float)cs, fch = (float)ch;
        int gw = 0, gh = 0;
        rcCalcGridSize(bmin, bmax, fcs, &gw, &gh);
        if (gw <= 0 || gh <= 0) return fail(msg, msg_cap, NM_ERR_ARG, "recast: empty grid");

        const int walkable_height = (int)std::ceil(p->agent_height / ch - 1e-6);
        const int walkable_climb = (int)std::floor(p->agent_climb / ch + 1e-6);
        const int walkable_radius = (int)std::ceil(p->agent_radius / cs - 1e-6);
        // Regions: islands under 1 m^2 go, regions under 10 m^2 merge into neighbours.
        const int min_region = (int)std::ceil(1.0 / (cs * cs));
        const int merge_region = (int)std::ceil(10.0 / (cs * cs));
        const float max_error = 1.3f;                  // contour simplification, cells
        const int max_edge = (int)std::ceil(12.0 / cs); // longest contour edge, cells (12 m)
        const int nvp = RC_VERTS_PER_POLYGON_MAX;

        o.hf = rcAllocHeightfield();
        if (!o.hf || !rcCreateHeightfield(&ctx, *o.hf, gw, gh, bmin, bmax, fcs, fch))
            return fail(msg, msg_cap, NM_ERR_NOMEM, "recast: heightfield allocation failed");
        if (!rcRasterizeTriangles(&ctx, in->verts, (int)in->vert_count, o.tris, o.areas, nt, *o.hf, walkable_climb))
            return fail(msg, msg_cap, NM_ERR_STATE, "recast: rasterising failed");

        rcFilterLowHangingWalkableObstacles(&ctx, walkable_climb, *o.hf);
        rcFilterLedgeSpans(&ctx, walkable_height, walkable_climb, *o.hf);
        rcFilterWalkableLowHeightSpans(&ctx, walkable_height, *o.hf);

        o.chf = rcAllocCompactHeightfield();
        if (!o.chf || !rcBuildCompactHeightfield(&ctx, walkable_height, walkable_climb, *o.hf, *o.chf))
            return fail(msg, msg_cap, NM_ERR_STATE, "recast: compact heightfield failed");
        rcFreeHeightField(o.hf); o.hf = nullptr;
        // Barriers thinner than 2 m and rises up to kClimb keep Recast's eroded strip (see
        // open_walkable_area): 2 m leaves at least 4 empty planner cells across the gap.
        const int thin_far = (int)std::ceil(2.0 / cs);
        const int band = (int)std::floor(NM_kClimb / ch + 1e-6);
        if (!open_walkable_area(&ctx, walkable_radius, thin_far, band, *o.chf))
            return fail(msg, msg_cap, NM_ERR_NOMEM, "recast: erosion failed (out of memory?)");
        if (!rcBuildDistanceField(&ctx, *o.chf))
            return fail(msg, msg_cap, NM_ERR_STATE, "recast: distance field failed");
        if (!rcBuildRegions(&ctx, *o.chf, 0, min_region, merge_region))
            return fail(msg, msg_cap, NM_ERR_STATE, "recast: watershed regions failed");

        o.cset = rcAllocContourSet();
        if (!o.cset || !rcBuildContours(&ctx, *o.chf, max_error, max_edge, *o.cset, RC_CONTOUR_TESS_WALL_EDGES))
            return fail(msg, msg_cap, NM_ERR_STATE, "recast: contours failed");
        if (o.cset->nconts == 0) { out->cell_size = cs; return NM_OK; }
        o.pmesh = rcAllocPolyMesh();
        if (!o.pmesh || !rcBuildPolyMesh(&ctx, *o.cset, nvp, *o.pmesh))
            return fail(msg, msg_cap, NM_ERR_STATE,
                        "recast: polygon mesh failed (more than 65535 vertices in one zone? split the level into zones)");

        // Heights from Recast's detail mesh (Detour's own source of heights): the polygon
        // interiors and edges are sampled from the compact heightfield every 6 cells and
        // re-triangulated where the surface departs from the polygon's plane by more than one
        // cell height. Planar polygons alone put a ramp-to-deck bend or rolling terrain metres off
        // the surface. Vertices come per polygon (shared edges are sampled identically, so the
        // weld joins them).
        o.dmesh = rcAllocPolyMeshDetail();
        if (!o.dmesh || !rcBuildPolyMeshDetail(&ctx, *o.pmesh, *o.chf, fcs * 6.0f, fch, *o.dmesh))
            return fail(msg, msg_cap, NM_ERR_STATE, "recast: detail mesh failed");
        const rcPolyMesh &pm = *o.pmesh;
        const rcPolyMeshDetail &dm = *o.dmesh;
        out->verts = (float *)nm_malloc(sizeof(float) * 3 * (size_t)(dm.nverts ? dm.nverts : 1));
        out->tris = (uint32_t *)nm_malloc(sizeof(uint32_t) * 3 * (size_t)(dm.ntris ? dm.ntris : 1));
        out->areas = (uint8_t *)nm_malloc(dm.ntris ? (size_t)dm.ntris : 1);
        if (!out->verts || !out->tris || !out->areas) {
            nm_rc_mesh_free(out);
            return fail(msg, msg_cap, NM_ERR_NOMEM, "recast: out of memory");
        }
        // The detail vertices stand one cell height above the voxel tops (Recast's offset).
        for (int i = 0; i < dm.nverts; i++) {
            out->verts[3 * i + 0] = dm.verts[3 * i + 0];
            out->verts[3 * i + 1] = dm.verts[3 * i + 1] - fch;
            out->verts[3 * i + 2] = dm.verts[3 * i + 2];
        }
        out->vert_count = (uint32_t)dm.nverts;
        size_t t = 0;
        for (int i = 0; i < dm.nmeshes && i < pm.npolys; i++) {
            const unsigned int *sm = dm.meshes + 4 * (size_t)i;
            for (unsigned int k = 0; k < sm[3]; k++, t++) {
                const unsigned char *dt = dm.tris + 4 * (size_t)(sm[2] + k);
                for (int c = 0; c < 3; c++) out->tris[3 * t + c] = sm[0] + dt[c];
                out->areas[t] = (uint8_t)(pm.areas[i] - 1);
            }
        }
        out->tri_count = (uint32_t)t;
        // The boundary, found on Recast's own heights (before the snap moves them), so the copies
        // of a vertex on a shared polygon edge are still equal.
        unsigned char *bnd = (unsigned char *)nm_malloc(dm.nverts ? (size_t)dm.nverts : 1);
        bool snapped = bnd && boundary_vertices(out->verts, dm.nverts, out->tris, t, bnd) &&
                       snap_heights(in->verts, o.tris, o.areas, nt, out->verts, dm.nverts, bnd, fcs, fch,
                                    (float)(walkable_climb * ch));
        nm_free(bnd);
        if (!snapped) {
            nm_rc_mesh_free(out);
            return fail(msg, msg_cap, NM_ERR_NOMEM, "recast: out of memory");
        }
        out->cell_size = cs;
        return NM_OK;
    } catch (const std::bad_alloc &) {
        nm_rc_mesh_free(out);
        return fail(msg, msg_cap, NM_ERR_NOMEM, "recast: out of memory");
    } catch (...) {
        nm_rc_mesh_free(out);
        return fail(msg, msg_cap, NM_ERR_STATE, "recast: unexpected failure");
    }
}
