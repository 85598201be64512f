/* gltf_write.c — see gltf_write.h. Written from the glTF 2.0 specification's structure: nodes
 * (matrix column-major, or translation / scale), meshes with one indexed triangle primitive,
 * accessors (FLOAT VEC3 positions, UNSIGNED_INT indices) on buffer views of one buffer. */
#include "gltf_write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tg_quad_mesh {
    const char *name;
    int nx, nz;             /* grid of nx * nz quads */
    double x0, z0, dx, dz;  /* world corner and cell size */
    double y;
    /* node: world = M * local */
    int kind;               /* 0 translation, 1 mirrored matrix, 2 TRS scale 2 under props */
    double t[3];
} tg_quad_mesh;

static const tg_quad_mesh kLevel[] = {
    {"ground", 4, 4, 0, 0, 5, 5, 0, 0, {10, 0, 10}},
    {"deck", 2, 2, 20, 0, 3, 3, 0.3, 1, {23, 0.3, 3}},
    {"water", 2, 1, 0, 20, 5, 4, 0, 0, {0, 0, 20}},
    {"crate", 2, 2, 5, -11, 2, 2, 0, 2, {5, 0, -3}}, /* parent props (0, 0, -8) */
};
enum { kMeshes = sizeof kLevel / sizeof kLevel[0] };

/* world corner of grid point (i, k) */
static void world_pt(const tg_quad_mesh *m, int i, int k, double w[3])
{
    w[0] = m->x0 + m->dx * i;
    w[1] = m->y;
    w[2] = m->z0 + m->dz * k;
}

/* local = M^-1 * world for the node of mesh m */
static void local_pt(const tg_quad_mesh *m, const double w[3], double l[3])
{
    switch (m->kind) {
    case 0: l[0] = w[0] - m->t[0]; l[1] = w[1] - m->t[1]; l[2] = w[2] - m->t[2]; break;
    case 1: l[0] = m->t[0] - w[0]; l[1] = w[1] - m->t[1]; l[2] = w[2] - m->t[2]; break;
    default: /* props (0, 0, -8) then translation t and scale 2 */
        l[0] = (w[0] - m->t[0]) / 2;
        l[1] = (w[1] - m->t[1]) / 2;
        l[2] = (w[2] + 8 - m->t[2]) / 2;
        break;
    }
}

/* The two triangles of quad (i, k), counter-clockwise seen from above, as grid point indices. */
static void quad_tris(const tg_quad_mesh *m, int i, int k, int out[6])
{
    int w = m->nx + 1;
    int a = k * w + i, b = k * w + i + 1, c = (k + 1) * w + i + 1, d = (k + 1) * w + i;
    /* (a, d, c): z grows from a to d, x from d to c: y of (d-a) x (c-a) is positive */
    out[0] = a; out[1] = d; out[2] = c;
    out[3] = a; out[4] = c; out[5] = b;
}

static void append(tg_buf *b, const void *p, size_t n)
{
    b->p = realloc(b->p, b->size + n + 1);
    memcpy(b->p + b->size, p, n);
    b->size += n;
    b->p[b->size] = 0;
}

static void appendf(tg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void appendf(tg_buf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    append(b, tmp, (size_t)n);
}

static void base64(tg_buf *out, const uint8_t *p, size_t n)
{
    static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {k[v >> 18 & 63], k[v >> 12 & 63], i + 1 < n ? k[v >> 6 & 63] : '=', i + 2 < n ? k[v & 63] : '='};
        append(out, q, 4);
    }
}

tg_buf tg_level_gltf(bool binary, bool nan_vertex)
{
    tg_buf bin = {0}, js = {0};
    size_t pos_off[kMeshes], idx_off[kMeshes];
    int nverts[kMeshes], nidx[kMeshes];
    for (int mi = 0; mi < kMeshes; mi++) {
        const tg_quad_mesh *m = &kLevel[mi];
        pos_off[mi] = bin.size;
        nverts[mi] = (m->nx + 1) * (m->nz + 1);
        for (int k = 0; k <= m->nz; k++)
            for (int i = 0; i <= m->nx; i++) {
                double w[3], l[3];
                world_pt(m, i, k, w);
                local_pt(m, w, l);
                float f[3] = {(float)l[0], (float)l[1], (float)l[2]};
                if (nan_vertex && mi == 0 && i == 0 && k == 0) f[1] = NAN;
                append(&bin, f, sizeof f);
            }
        idx_off[mi] = bin.size;
        nidx[mi] = 6 * m->nx * m->nz;
        for (int k = 0; k < m->nz; k++)
            for (int i = 0; i < m->nx; i++) {
                int t[6];
                quad_tris(m, i, k, t);
                if (m->kind == 1) { /* mirrored node: counter-clockwise in LOCAL space */
                    int s = t[1]; t[1] = t[2]; t[2] = s;
                    s = t[4]; t[4] = t[5]; t[5] = s;
                }
                uint32_t u[6];
                for (int q = 0; q < 6; q++) u[q] = (uint32_t)t[q];
                append(&bin, u, sizeof u);
            }
    }
    appendf(&js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"navbake tests\"},\"scene\":0,"
                 "\"scenes\":[{\"nodes\":[0,1,2,3]}],\"nodes\":[");
    appendf(&js, "{\"name\":\"ground\",\"mesh\":0,\"translation\":[10,0,10]},");
    /* column-major: scale x -1, translation (23, 0.3, 3) */
    appendf(&js, "{\"name\":\"deck\",\"mesh\":1,\"matrix\":[-1,0,0,0, 0,1,0,0, 0,0,1,0, 23,%.9g,3,1]},", (double)0.3f);
    appendf(&js, "{\"name\":\"water\",\"mesh\":2,\"translation\":[0,0,20]},");
    appendf(&js, "{\"name\":\"props\",\"translation\":[0,0,-8],\"children\":[4]},");
    appendf(&js, "{\"name\":\"crate\",\"mesh\":3,\"translation\":[5,0,-3],\"scale\":[2,2,2]}],\"meshes\":[");
    for (int mi = 0; mi < kMeshes; mi++)
        appendf(&js, "%s{\"name\":\"%s_mesh\",\"primitives\":[{\"attributes\":{\"POSITION\":%d},\"indices\":%d,\"mode\":4}]}",
                mi ? "," : "", kLevel[mi].name, 2 * mi, 2 * mi + 1);
    appendf(&js, "],\"accessors\":[");
    for (int mi = 0; mi < kMeshes; mi++)
        appendf(&js, "%s{\"bufferView\":%d,\"componentType\":5126,\"count\":%d,\"type\":\"VEC3\"},"
                     "{\"bufferView\":%d,\"componentType\":5125,\"count\":%d,\"type\":\"SCALAR\"}",
                mi ? "," : "", 2 * mi, nverts[mi], 2 * mi + 1, nidx[mi]);
    appendf(&js, "],\"bufferViews\":[");
    for (int mi = 0; mi < kMeshes; mi++)
        appendf(&js, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}",
                mi ? "," : "", pos_off[mi], idx_off[mi] - pos_off[mi], idx_off[mi],
                (mi + 1 < kMeshes ? pos_off[mi + 1] : bin.size) - idx_off[mi]);
    appendf(&js, "],\"buffers\":[{\"byteLength\":%zu", bin.size);
    if (!binary) {
        appendf(&js, ",\"uri\":\"data:application/octet-stream;base64,");
        base64(&js, bin.p, bin.size);
        appendf(&js, "\"");
    }
    appendf(&js, "}]}");
    if (!binary) {
        tg_free(&bin);
        return js;
    }
    /* GLB: 12-byte header, JSON chunk padded with spaces, BIN chunk padded with zeros */
    while (js.size % 4) append(&js, " ", 1);
    while (bin.size % 4) append(&bin, "", 1);
    tg_buf glb = {0};
    uint32_t hdr[5] = {0x46546C67u, 2, (uint32_t)(12 + 8 + js.size + 8 + bin.size), (uint32_t)js.size, 0x4E4F534Au};
    append(&glb, hdr, sizeof hdr);
    append(&glb, js.p, js.size);
    uint32_t bh[2] = {(uint32_t)bin.size, 0x004E4942u};
    append(&glb, bh, sizeof bh);
    append(&glb, bin.p, bin.size);
    tg_free(&js);
    tg_free(&bin);
    return glb;
}

tg_buf tg_level_obj(const char *skip)
{
    tg_buf o = {0};
    appendf(&o, "# the glTF test level in world space\n");
    int base = 1;
    for (int mi = 0; mi < kMeshes; mi++) {
        const tg_quad_mesh *m = &kLevel[mi];
        if (skip && strcmp(skip, m->name) == 0) continue;
        appendf(&o, "g %s\n", m->name);
        for (int k = 0; k <= m->nz; k++)
            for (int i = 0; i <= m->nx; i++) {
                double w[3];
                world_pt(m, i, k, w);
                /* the float the glTF holds, so both files carry the same numbers */
                appendf(&o, "v %.9g %.9g %.9g\n", (double)(float)w[0], (double)(float)w[1], (double)(float)w[2]);
            }
        for (int k = 0; k < m->nz; k++)
            for (int i = 0; i < m->nx; i++) {
                int t[6];
                quad_tris(m, i, k, t);
                appendf(&o, "f %d %d %d\nf %d %d %d\n", base + t[0], base + t[1], base + t[2], base + t[3], base + t[4],
                        base + t[5]);
            }
        base += (m->nx + 1) * (m->nz + 1);
    }
    return o;
}

/* A 1 x 1 (file units) quad "ground" at translation (0, 0, 5) in FBX with a given UnitScaleFactor. */
tg_buf tg_level_fbx(const char *unit_scale_factor)
{
    char text[2048];
    int n = snprintf(text, sizeof text,
             "; FBX 7.4.0 project file\n"
             "FBXHeaderExtension:  {\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n}\n"
             "GlobalSettings:  {\n\tVersion: 1000\n\tProperties70:  {\n"
             "\t\tP: \"UpAxis\", \"int\", \"Integer\", \"\",1\n"
             "\t\tP: \"UnitScaleFactor\", \"double\", \"Number\", \"\",%s\n\t}\n}\n"
             "Objects:  {\n"
             "\tGeometry: 1000, \"Geometry::floor\", \"Mesh\" {\n"
             "\t\tVertices: *12 {\n\t\t\ta: 0,0,0,1,0,0,1,0,1,0,0,1\n\t\t}\n"
             "\t\tPolygonVertexIndex: *4 {\n\t\t\ta: 0,3,2,-2\n\t\t}\n\t\tGeometryVersion: 124\n\t}\n"
             "\tModel: 2000, \"Model::ground\", \"Mesh\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n"
             "\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",0,0,5\n\t\t}\n\t}\n}\n"
             "Connections:  {\n\tC: \"OO\",2000,0\n\tC: \"OO\",1000,2000\n}\n",
             unit_scale_factor);
    tg_buf b = {0};
    append(&b, text, (size_t)n);
    return b;
}

static const char kDae[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
    "<asset><unit name=\"centimeter\" meter=\"0.01\"/><up_axis>Z_UP</up_axis></asset>\n"
    "<library_geometries><geometry id=\"g1\" name=\"floor\"><mesh>\n"
    "<source id=\"p\"><float_array id=\"pa\" count=\"12\">0 0 0 100 0 0 100 100 0 0 100 0</float_array>\n"
    "<technique_common><accessor source=\"#pa\" count=\"4\" stride=\"3\"><param name=\"X\" type=\"float\"/>"
    "<param name=\"Y\" type=\"float\"/><param name=\"Z\" type=\"float\"/></accessor></technique_common></source>\n"
    "<vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>\n"
    "<polylist count=\"1\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><vcount>4</vcount><p>0 1 2 3</p></polylist>\n"
    "</mesh></geometry></library_geometries>\n"
    "<library_visual_scenes><visual_scene id=\"s\" name=\"s\">\n"
    "<node id=\"n1\" name=\"ground\"><translate>0 0 500</translate><instance_geometry url=\"#g1\"/></node>\n"
    "</visual_scene></library_visual_scenes><scene><instance_visual_scene url=\"#s\"/></scene></COLLADA>\n";

const char *tg_level_dae(void) { return kDae; }

void tg_free(tg_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->size = 0;
}

char *tg_write(const char *dir, const char *name, const tg_buf *b)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b->p, 1, b->size, f);
        fclose(f);
    }
    return path;
}
