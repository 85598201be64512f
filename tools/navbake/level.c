/* level.c — level files into nm_obj (see level.h): OBJ through obj.c, the rest through assimp's
 * C API with our own node walk (not aiProcess_PreTransformVertices, which merges meshes and
 * loses the node names that carry the level's groups). */
#include "level.h"
#include "bake.h"

#include "codec/codec.h"

#include <math.h>
#include <float.h>
#include <stdio.h>
#include <string.h>

#ifdef NM_HAVE_ASSIMP
#include <cjson/cJSON.h>
#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/version.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

/* "dir/Level.GLB.gz" -> "glb"; the extension after dropping ".gz", lower case. */
static void file_ext(const char *path, char *out, size_t cap, bool *gz)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    *gz = n > 3 && (strcmp(base + n - 3, ".gz") == 0 || strcmp(base + n - 3, ".GZ") == 0);
    if (*gz) n -= 3;
    size_t dot = n;
    while (dot > 0 && base[dot - 1] != '.') dot--;
    out[0] = 0;
    if (dot == 0) return;
    size_t k = 0;
    for (size_t i = dot; i < n && k + 1 < cap; i++) {
        char c = base[i];
        out[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[k] = 0;
}

static bool name_in(const char *name, const char *const *pats, uint32_t n, uint8_t *hit)
{
    bool any = false;
    for (uint32_t i = 0; i < n; i++)
        if (nm_bake_pattern_match(pats[i], name)) {
            if (hit) hit[i] = 1;
            any = true;
        }
    return any;
}

static int check_all_matched(const char *name, const char *opt, const char *const *pats, uint32_t n,
                             const uint8_t *hit, const char *what, nm_error *err)
{
    for (uint32_t i = 0; i < n; i++)
        if (!hit[i]) return nm_fail(err, NM_ERR_ARG, "%s: %s '%s' matches no %s", name, opt, pats[i], what);
    return NM_OK;
}

static void bounds(const nm_obj *o, nm_level_info *info)
{
    bool any = false;
    for (uint32_t t = 0; t < 3 * o->tri_count; t++) {
        const float *p = o->pos + 3 * (size_t)o->tris[t];
        for (int a = 0; a < 3; a++) {
            if (!any || p[a] < info->bmin[a]) info->bmin[a] = p[a];
            if (!any || p[a] > info->bmax[a]) info->bmax[a] = p[a];
        }
        any = true;
    }
}

/* Drops the vertices no triangle uses, the others keep their order: Recast's bounds (hence the
 * pack) cover every vertex, so a skipped node must leave none behind. */
static void drop_unused_vertices(nm_obj *o)
{
    uint32_t *map = nm_malloc(((size_t)o->vert_count + 1) * sizeof *map);
    if (!map) return; /* unused vertices are harmless, only less tidy */
    for (uint32_t v = 0; v < o->vert_count; v++) map[v] = UINT32_MAX;
    for (size_t k = 0; k < 3 * (size_t)o->tri_count; k++) map[o->tris[k]] = 0;
    uint32_t n = 0;
    for (uint32_t v = 0; v < o->vert_count; v++) {
        if (map[v] == UINT32_MAX) continue;
        memmove(o->pos + 3 * (size_t)n, o->pos + 3 * (size_t)v, 3 * sizeof *o->pos);
        map[v] = n++;
    }
    for (size_t k = 0; k < 3 * (size_t)o->tri_count; k++) o->tris[k] = map[o->tris[k]];
    o->vert_count = n;
    nm_free(map);
}

/* --node / --skip-node on OBJ groups: keeps the triangles of the selected groups (order kept),
 * renumbers the groups that still have triangles in order of their first triangle. */
static int select_groups(nm_obj *o, const nm_level_opts *opts, const char *name, nm_level_info *info, nm_error *err)
{
    uint32_t nn = opts ? opts->node_count : 0, ns = opts ? opts->skip_count : 0;
    if (!nn && !ns) {
        info->nodes_kept = o->group_count;
        return NM_OK;
    }
    uint8_t *hit = nm_calloc((size_t)nn + ns + 1, 1);
    int32_t *map = nm_malloc(((size_t)o->group_count + 1) * sizeof *map);
    if (!hit || !map) {
        nm_free(hit);
        nm_free(map);
        return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    }
    for (uint32_t g = 0; g < o->group_count; g++) {
        bool keep = nn == 0 || name_in(o->groups[g], opts->nodes, nn, hit);
        if (name_in(o->groups[g], opts->skip, ns, hit + nn)) keep = false;
        map[g] = keep ? 0 : -1;
    }
    int rc = check_all_matched(name, "--node", opts->nodes, nn, hit, "group", err);
    if (rc == NM_OK) rc = check_all_matched(name, "--skip-node", opts->skip, ns, hit + nn, "group", err);
    if (rc == NM_OK) {
        uint32_t nt = 0, ng = 0;
        for (uint32_t g = 0; g < o->group_count; g++) map[g] = map[g] < 0 ? -1 : -2; /* -2: kept, unnumbered */
        for (uint32_t t = 0; t < o->tri_count; t++) {
            uint32_t g = o->tri_group[t];
            if (map[g] == -1) continue;
            if (map[g] == -2) map[g] = (int32_t)ng++;
            memmove(o->tris + 3 * (size_t)nt, o->tris + 3 * (size_t)t, 3 * sizeof *o->tris);
            o->tri_group[nt++] = (uint32_t)map[g];
        }
        char **groups = o->groups;
        uint32_t old = o->group_count;
        char **kept = nm_calloc((size_t)ng + 1, sizeof *kept);
        if (!kept) {
            rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
        } else {
            for (uint32_t g = 0; g < old; g++) {
                if (map[g] >= 0) {
                    kept[map[g]] = groups[g];
                } else {
                    nm_free(groups[g]);
                    info->nodes_skipped++;
                }
            }
            nm_free(groups);
            o->groups = kept;
            o->group_count = ng;
            o->tri_count = nt;
            info->nodes_kept = ng;
            drop_unused_vertices(o);
        }
    }
    nm_free(hit);
    nm_free(map);
    return rc;
}

static int load_obj(const char *path, const void *data, size_t size, const nm_level_opts *opts, nm_obj *out,
                    nm_level_info *info, nm_error *err)
{
    int rc = data ? nm_obj_parse(data, size, path, out, err) : nm_obj_load(path, out, err);
    if (rc != NM_OK) return rc;
    snprintf(info->importer, sizeof info->importer, "obj");
    rc = select_groups(out, opts, path, info, err);
    if (rc != NM_OK) nm_obj_free(out);
    return rc;
}

#ifdef NM_HAVE_ASSIMP
bool nm_level_have_assimp(void) { return true; }

/* A node to take, with its world transform (row-major 3x4, v' = M v) and mirror flag. */
typedef struct take {
    const struct aiNode *node;
    double m[12];
    bool mirrored;
} take;

typedef struct walk_item {
    const struct aiNode *node;
    double m[12];
    bool selected, skipped;
} walk_item;

/* out = a * b for row-major 3x4 affine matrices */
static void mat_mul(const double a[12], const double b[12], double out[12])
{
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 4; c++) {
            double s = a[4 * r + 0] * b[0 + c] + a[4 * r + 1] * b[4 + c] + a[4 * r + 2] * b[8 + c];
            if (c == 3) s += a[4 * r + 3];
            out[4 * r + c] = s;
        }
    }
}

static double det3(const double m[12])
{
    return m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
           m[2] * (m[4] * m[9] - m[5] * m[8]);
}

static const char *node_group_name(const struct aiNode *n, const struct aiScene *sc)
{
    if (n->mName.length > 0) return n->mName.data;
    for (unsigned i = 0; i < n->mNumMeshes; i++) {
        unsigned mi = n->mMeshes[i];
        if (mi < sc->mNumMeshes && sc->mMeshes[mi] && sc->mMeshes[mi]->mName.length > 0)
            return sc->mMeshes[mi]->mName.data;
    }
    return "default";
}

/* The file's unit in metres from its metadata: FBX's UnitScaleFactor counts centimetres. Other
 * formats: 1 (glTF is metres; assimp applies Collada's <unit meter> to the root node itself). */
static double unit_scale(const struct aiScene *sc, const char *ext)
{
    if (strcmp(ext, "fbx") != 0 || !sc->mMetaData) return 1.0;
    const struct aiMetadata *md = sc->mMetaData;
    for (unsigned i = 0; i < md->mNumProperties; i++) {
        if (strcmp(md->mKeys[i].data, "UnitScaleFactor") != 0 || !md->mValues[i].mData) continue;
        double f = 0;
        if (md->mValues[i].mType == AI_DOUBLE) f = *(const double *)md->mValues[i].mData;
        else if (md->mValues[i].mType == AI_FLOAT) f = *(const float *)md->mValues[i].mData;
        else if (md->mValues[i].mType == AI_INT32) f = *(const int32_t *)md->mValues[i].mData;
        if (isfinite(f) && f > 0) return f / 100.0;
    }
    return 1.0;
}

/* Group names -> index: open addressing on FNV-1a (scenes with 10^5 named nodes exist). */
typedef struct group_map {
    uint32_t *slot; /* group index + 1, 0 = empty [Size: cap] */
    uint32_t cap;   /* power of two, at least twice the groups */
} group_map;

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static bool map_grow(group_map *m, const nm_obj *o)
{
    uint32_t nc = m->cap ? 2 * m->cap : 64;
    uint32_t *s = nm_calloc(nc, sizeof *s);
    if (!s) return false;
    for (uint32_t g = 0; g < o->group_count; g++) {
        uint32_t i = name_hash(o->groups[g]) & (nc - 1);
        while (s[i]) i = (i + 1) & (nc - 1);
        s[i] = g + 1;
    }
    nm_free(m->slot);
    m->slot = s;
    m->cap = nc;
    return true;
}

static int find_or_add_group(nm_obj *o, uint32_t *cap, group_map *map, const char *gname, uint32_t *out,
                             const char *name, nm_error *err)
{
    if (2 * ((uint64_t)o->group_count + 1) > map->cap && !map_grow(map, o))
        return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    uint32_t i = name_hash(gname) & (map->cap - 1);
    for (; map->slot[i]; i = (i + 1) & (map->cap - 1))
        if (strcmp(o->groups[map->slot[i] - 1], gname) == 0) {
            *out = map->slot[i] - 1;
            return NM_OK;
        }
    if (o->group_count == *cap) {
        uint32_t nc = *cap ? 2 * *cap : 16;
        char **g = nm_realloc(o->groups, (size_t)nc * sizeof *g);
        if (!g) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
        o->groups = g;
        *cap = nc;
    }
    size_t n = strlen(gname);
    char *s = nm_malloc(n + 1);
    if (!s) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    memcpy(s, gname, n + 1);
    o->groups[o->group_count] = s;
    map->slot[i] = o->group_count + 1;
    *out = o->group_count++;
    return NM_OK;
}

/* Depth-first walk (explicit stack: a hostile file cannot overflow ours), children in order. */
static int collect_nodes(const struct aiScene *sc, const nm_level_opts *opts, const char *name, double unit,
                         take **takes, uint32_t *take_count, nm_level_info *info, nm_error *err)
{
    uint32_t nn = opts ? opts->node_count : 0, ns = opts ? opts->skip_count : 0;
    uint8_t *hit = nm_calloc((size_t)nn + ns + 1, 1);
    size_t cap = 64, top = 0, tcap = 64;
    walk_item *st = nm_malloc(cap * sizeof *st);
    take *tk = nm_malloc(tcap * sizeof *tk);
    int rc = NM_OK;
    if (!hit || !st || !tk) {
        rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    *take_count = 0;
    st[top].node = sc->mRootNode;
    memset(st[top].m, 0, sizeof st[top].m);
    st[top].m[0] = st[top].m[5] = st[top].m[10] = unit;
    st[top].selected = nn == 0;
    st[top].skipped = false;
    top++;
    while (top > 0 && rc == NM_OK) {
        walk_item it = st[--top];
        const struct aiNode *n = it.node;
        if (!n) continue;
        if (++info->nodes > 10000000u) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "%s: more than 10000000 nodes", name);
            break;
        }
        const char *nname = n->mName.data;
        /* skipped subtrees are still walked, so the counts cover the whole file */
        bool skipped = it.skipped || name_in(nname, opts ? opts->skip : NULL, ns, hit + nn);
        bool selected = it.selected || name_in(nname, opts ? opts->nodes : NULL, nn, hit);
        const struct aiMatrix4x4 *T = &n->mTransformation;
        double local[12] = {T->a1, T->a2, T->a3, T->a4, T->b1, T->b2, T->b3, T->b4, T->c1, T->c2, T->c3, T->c4};
        double world[12];
        mat_mul(it.m, local, world);
        for (int k = 0; k < 12; k++)
            if (!isfinite(world[k])) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "%s: node '%s': transform is not finite", name, nname);
                break;
            }
        if (rc) break;
        if (n->mNumMeshes > 0) {
            if (!selected || skipped) {
                info->nodes_skipped++;
            } else {
                if (*take_count == tcap) {
                    take *t2 = nm_realloc(tk, 2 * tcap * sizeof *tk);
                    if (!t2) { rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name); break; }
                    tk = t2;
                    tcap *= 2;
                }
                take *t = &tk[(*take_count)++];
                t->node = n;
                memcpy(t->m, world, sizeof world);
                t->mirrored = det3(world) < 0;
                info->mirrored += t->mirrored;
                info->nodes_kept++;
            }
        }
        if (top + n->mNumChildren > cap) {
            size_t nc = cap;
            while (nc < top + n->mNumChildren) nc *= 2;
            walk_item *s2 = nm_realloc(st, nc * sizeof *st);
            if (!s2) { rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name); break; }
            st = s2;
            cap = nc;
        }
        for (unsigned c = n->mNumChildren; c-- > 0;) { /* reversed: the first child pops first */
            st[top].node = n->mChildren ? n->mChildren[c] : NULL;
            memcpy(st[top].m, world, sizeof world);
            st[top].selected = selected;
            st[top].skipped = skipped;
            top++;
        }
    }
    if (rc == NM_OK) rc = check_all_matched(name, "--node", opts ? opts->nodes : NULL, nn, hit, "node", err);
    if (rc == NM_OK) rc = check_all_matched(name, "--skip-node", opts ? opts->skip : NULL, ns, hit + nn, "node", err);
done:
    nm_free(hit);
    nm_free(st);
    if (rc == NM_OK) {
        *takes = tk;
    } else {
        nm_free(tk);
        *takes = NULL;
    }
    return rc;
}

static int scene_to_obj(const struct aiScene *sc, const char *ext, const char *name, const nm_level_opts *opts,
                        nm_obj *o, nm_level_info *info, nm_error *err)
{
    if (!sc->mRootNode) return nm_fail(err, NM_ERR_CORRUPT, "%s: no scene nodes", name);
    double unit = unit_scale(sc, ext);
    info->unit_scale = unit;
    take *tk = NULL;
    uint32_t nt = 0, gcap = 0;
    group_map gmap = {0};
    int rc = collect_nodes(sc, opts, name, unit, &tk, &nt, info, err);
    if (rc) return rc;
    /* sizes first, so the arrays are allocated once */
    uint64_t verts = 0, faces = 0;
    for (uint32_t i = 0; i < nt; i++)
        for (unsigned k = 0; k < tk[i].node->mNumMeshes; k++) {
            unsigned mi = tk[i].node->mMeshes[k];
            if (mi >= sc->mNumMeshes || !sc->mMeshes[mi]) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "%s: node '%s': mesh %u out of range", name, tk[i].node->mName.data, mi);
                goto done;
            }
            verts += sc->mMeshes[mi]->mNumVertices;
            faces += sc->mMeshes[mi]->mNumFaces;
        }
    if (verts >= UINT32_MAX / 3 || faces >= UINT32_MAX / 3) {
        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: too many vertices or faces (%llu, %llu)", name,
                     (unsigned long long)verts, (unsigned long long)faces);
        goto done;
    }
    o->pos = nm_malloc(3 * (size_t)verts * sizeof *o->pos + 4);
    o->tris = nm_malloc(3 * (size_t)faces * sizeof *o->tris + 4);
    o->tri_group = nm_malloc((size_t)faces * sizeof *o->tri_group + 4);
    if (!o->pos || !o->tris || !o->tri_group) {
        rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    for (uint32_t i = 0; i < nt && rc == NM_OK; i++) {
        const take *t = &tk[i];
        const char *gname = node_group_name(t->node, sc);
        uint32_t group = 0;
        bool have_group = false;
        for (unsigned k = 0; k < t->node->mNumMeshes && rc == NM_OK; k++) {
            const struct aiMesh *m = sc->mMeshes[t->node->mMeshes[k]];
            if ((!m->mVertices && m->mNumVertices) || (!m->mFaces && m->mNumFaces)) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "%s: mesh '%s' has no positions or faces", name, m->mName.data);
                break;
            }
            uint32_t base = o->vert_count;
            for (unsigned v = 0; v < m->mNumVertices; v++) {
                const struct aiVector3D *p = &m->mVertices[v];
                for (int a = 0; a < 3; a++) {
                    const double *r = t->m + 4 * a;
                    double w = r[0] * p->x + r[1] * p->y + r[2] * p->z + r[3];
                    if (!isfinite(w) || fabs(w) > FLT_MAX) {
                        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: node '%s': vertex %u is not a finite float", name,
                                     t->node->mName.data, v);
                        break;
                    }
                    o->pos[3 * (size_t)o->vert_count + (size_t)a] = (float)w;
                }
                if (rc) break;
                o->vert_count++;
            }
            for (unsigned f = 0; f < m->mNumFaces && rc == NM_OK; f++) {
                const struct aiFace *F = &m->mFaces[f];
                if (F->mNumIndices != 3 || !F->mIndices) { info->faces_dropped++; continue; }
                uint32_t c[3] = {0, 0, 0};
                for (int q = 0; q < 3; q++) {
                    if (F->mIndices[q] >= m->mNumVertices) {
                        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: mesh '%s': face %u index out of range", name,
                                     m->mName.data, f);
                        break;
                    }
                    c[q] = base + F->mIndices[q];
                }
                if (rc) break;
                if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) { info->faces_dropped++; continue; }
                if (!have_group) {
                    rc = find_or_add_group(o, &gcap, &gmap, gname, &group, name, err);
                    if (rc) break;
                    have_group = true;
                }
                uint32_t *d = o->tris + 3 * (size_t)o->tri_count;
                d[0] = c[0];
                d[1] = t->mirrored ? c[2] : c[1]; /* mirrored: the winding flips back */
                d[2] = t->mirrored ? c[1] : c[2];
                o->tri_group[o->tri_count++] = group;
            }
        }
    }
    if (rc == NM_OK) drop_unused_vertices(o); /* of dropped faces */
    if (rc == NM_OK && o->tri_count == 0)
        rc = nm_fail(err, NM_ERR_CORRUPT, "%s: no triangles in the kept nodes (%u nodes, %u kept, %u skipped)", name,
                     info->nodes, info->nodes_kept, info->nodes_skipped);
done:
    nm_free(gmap.slot);
    nm_free(tk);
    return rc;
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* GLB's header and chunk lengths against the bytes there are: assimp allocates what a chunk
 * header claims before reading it (a 60-byte file asking for 2 GiB took 100 s). */
static int check_glb(const uint8_t *d, size_t size, const char *name, nm_error *err)
{
    if (size < 20 || memcmp(d, "glTF", 4) != 0)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: not a GLB file (no 'glTF' header)", name);
    uint32_t version = le32(d + 4), length = le32(d + 8);
    if (version != 2) return nm_fail(err, NM_ERR_CORRUPT, "%s: GLB version %u (2 expected)", name, version);
    if (length > size || length < 20)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: GLB length %u but the file has %zu bytes", name, length, size);
    for (size_t at = 12; at < length;) {
        if (length - at < 8) return nm_fail(err, NM_ERR_CORRUPT, "%s: GLB chunk header at byte %zu cut off", name, at);
        uint32_t n = le32(d + at);
        if (n > length - at - 8)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: GLB chunk at byte %zu: length %u past the end (%u bytes)", name,
                           at, n, length);
        at += 8 + (size_t)n;
    }
    return NM_OK;
}

/* glTF points and lines with an index accessor are refused: assimp 5.2 reads their indices
 * unchecked (a LINE_LOOP with out-of-range indices crashed it; found by fuzz_level), and
 * navbake ignores points and lines anyway. Malformed JSON is left to assimp's own message. */
static int check_gltf_json(const char *js, size_t n, const char *name, nm_error *err)
{
    cJSON *root = cJSON_ParseWithLength(js, n);
    if (!root) return NM_OK;
    int rc = NM_OK;
    const cJSON *meshes = cJSON_GetObjectItemCaseSensitive(root, "meshes");
    int mi = 0;
    for (const cJSON *m = cJSON_IsArray(meshes) ? meshes->child : NULL; m && rc == NM_OK; m = m->next, mi++) {
        const cJSON *prims = cJSON_GetObjectItemCaseSensitive(m, "primitives");
        int pi = 0;
        for (const cJSON *p = cJSON_IsArray(prims) ? prims->child : NULL; p && rc == NM_OK; p = p->next, pi++) {
            const cJSON *mode = cJSON_GetObjectItemCaseSensitive(p, "mode");
            double md = cJSON_IsNumber(mode) ? mode->valuedouble : 4;
            if (cJSON_GetObjectItemCaseSensitive(p, "indices") && !(md >= 4 && md <= 6))
                rc = nm_fail(err, NM_ERR_CORRUPT,
                             "%s: meshes[%d].primitives[%d]: indexed points or lines (mode %g) are not read "
                             "(export without loose edges / points)", name, mi, pi, md);
        }
    }
    cJSON_Delete(root);
    return rc;
}

/* Collada index lists (<p>, <vcount>, <v>, <h>) hold digits and blanks only: assimp 5.2 loops
 * for ever on any other character there (found by fuzz_level: "<p>0 x 2</p>"). */
static int check_dae(const uint8_t *d, size_t size, const char *name, nm_error *err)
{
    static const char *const kTags[] = {"<p>", "<vcount>", "<v>", "<h>"};
    /* counts too: a count="" that is not a number crashed it (fuzz_level) */
    static const char *const kAttrs[] = {" count=\"", " stride=\"", " offset=\""};
    for (size_t i = 0; i < size; i++) {
        if (d[i] == ' ')
            for (int a = 0; a < 3; a++) {
                size_t n = strlen(kAttrs[a]);
                if (size - i < n || memcmp(d + i, kAttrs[a], n) != 0) continue;
                size_t k = i + n;
                while (k < size && d[k] >= '0' && d[k] <= '9') k++;
                if (k == i + n || k >= size || d[k] != '"')
                    return nm_fail(err, NM_ERR_CORRUPT, "%s: byte %zu: %.*s not a number", name, i + 1, (int)n - 3,
                                   kAttrs[a] + 1);
            }
        if (d[i] != '<') continue;
        for (int t = 0; t < 4; t++) {
            size_t n = strlen(kTags[t]);
            if (size - i < n || memcmp(d + i, kTags[t], n) != 0) continue;
            for (size_t k = i + n; k < size && d[k] != '<'; k++) {
                uint8_t c = d[k];
                if ((c < '0' || c > '9') && c != ' ' && c != '\t' && c != '\r' && c != '\n')
                    return nm_fail(err, NM_ERR_CORRUPT, "%s: byte %zu: %s holds '%c', not an index list", name, k,
                                   kTags[t], c >= 32 && c < 127 ? c : '?');
            }
        }
    }
    return NM_OK;
}

/* assimp's import and our walk of its scene, in this process. */
static int import_here(const char *path, const void *data, size_t size, const char *ext, const nm_level_opts *opts,
                       nm_obj *out, nm_level_info *info, nm_error *err)
{
    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", path);
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_FD_REMOVE, 1);    /* degenerate faces go, not lines */
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_FD_CHECKAREA, 0); /* the weld decides on areas */
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_USE_COLLADA_NAMES, 1);
    /* only positions matter: without normals, UVs, ... identical vertices are identical positions */
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_RVC_FLAGS,
                               aiComponent_NORMALS | aiComponent_TANGENTS_AND_BITANGENTS | aiComponent_COLORS |
                                   aiComponent_TEXCOORDS | aiComponent_BONEWEIGHTS | aiComponent_ANIMATIONS |
                                   aiComponent_TEXTURES | aiComponent_LIGHTS | aiComponent_CAMERAS);
    unsigned flags = aiProcess_RemoveComponent | aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                     aiProcess_FindDegenerates | aiProcess_ValidateDataStructure;
    const struct aiScene *sc = data ? aiImportFileFromMemoryWithProperties(data, (unsigned)size, flags, ext, props)
                                    : aiImportFileExWithProperties(path, flags, NULL, props);
    aiReleasePropertyStore(props);
    if (!sc) {
        const char *why = aiGetErrorString();
        if (why && strstr(why, "bad_alloc"))
            return nm_fail(err, NM_ERR_NOMEM, "%s: assimp: %s: out of memory reading the file (a damaged file, or "
                           "more than the import may take)", path, why);
        return nm_fail(err, NM_ERR_CORRUPT, "%s: assimp: %s", path, why && why[0] ? why : "cannot read the file");
    }
    snprintf(info->importer, sizeof info->importer, "assimp %s", ext[0] ? ext : "?");
    int rc = scene_to_obj(sc, ext, path, opts, out, info, err);
    aiReleaseImport(sc);
    if (rc) nm_obj_free(out);
    return rc;
}

/* ---- assimp in a child process ---------------------------------------------------------------
 * assimp 5.2 still crashes, and loops for ever, on some damaged files (fuzz_level finds new ones
 * within minutes; the checks above stop the ones known). So navbake imports in a forked child
 * that sends the result back through a pipe: a crash, or a run past the CPU limit, ends the child
 * alone and comes back as an error naming the file. Both ends are this binary, so the result
 * goes as it is in memory: the header, then the arrays, then each group name with its length. */
typedef struct apart_head {
    int rc;
    nm_error err;
    nm_level_info info;
    uint32_t vert_count, tri_count, group_count;
} apart_head;

/* All n bytes through the pipe, written or read; false at its end or on an error. */
static bool pipe_all(int fd, char *c, size_t n, bool out)
{
    while (n) {
        const ssize_t k = out ? write(fd, c, n) : read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= (size_t)k;
    }
    return true;
}

static bool put(int fd, const void *p, size_t n) { return pipe_all(fd, (char *)(uintptr_t)p, n, true); }
static bool get(int fd, void *p, size_t n) { return pipe_all(fd, p, n, false); }

static void send_result(int fd, int rc, const nm_error *err, const nm_obj *o, const nm_level_info *info)
{
    apart_head h = {rc, *err, *info, 0, 0, 0};
    if (rc == NM_OK) {
        h.vert_count = o->vert_count;
        h.tri_count = o->tri_count;
        h.group_count = o->group_count;
    }
    bool ok = put(fd, &h, sizeof h);
    if (ok && rc == NM_OK)
        ok = put(fd, o->pos, 3 * (size_t)o->vert_count * sizeof *o->pos) &&
             put(fd, o->tris, 3 * (size_t)o->tri_count * sizeof *o->tris) &&
             put(fd, o->tri_group, (size_t)o->tri_count * sizeof *o->tri_group);
    for (uint32_t g = 0; ok && rc == NM_OK && g < o->group_count; g++) {
        const uint32_t n = (uint32_t)strlen(o->groups[g]);
        ok = put(fd, &n, sizeof n) && put(fd, o->groups[g], n);
    }
}

/* The child's answer: false when the pipe ended early (the child died: the caller reads why from
 * its status), else true with *rc: NM_OK and *out / *info, the child's error in *err, or this
 * process's own want of memory for the answer. */
static bool take_result(int fd, const char *path, nm_obj *out, nm_level_info *info, int *rc, nm_error *err)
{
    apart_head h;
    if (!get(fd, &h, sizeof h)) return false;
    if (h.rc != NM_OK) {
        h.err.msg[sizeof h.err.msg - 1] = 0;
        if (err) *err = h.err;
        *rc = h.rc;
        return true;
    }
    size_t nv, nt, ng; /* bytes of the three arrays */
    if (!nm_mul_ok(h.vert_count, 3 * sizeof *out->pos, &nv) || !nm_mul_ok(h.tri_count, 3 * sizeof *out->tris, &nt) ||
        !nm_mul_ok(h.tri_count, sizeof *out->tri_group, &ng))
        return false;
    out->pos = nm_malloc(nv ? nv : 1);
    out->tris = nm_malloc(nt ? nt : 1);
    out->tri_group = nm_malloc(ng ? ng : 1);
    out->groups = nm_calloc((size_t)h.group_count + 1, sizeof *out->groups);
    bool ok = out->pos && out->tris && out->tri_group && out->groups;
    if (ok) {
        out->vert_count = h.vert_count;
        out->tri_count = h.tri_count;
        if (!get(fd, out->pos, nv) || !get(fd, out->tris, nt) || !get(fd, out->tri_group, ng)) {
            nm_obj_free(out);
            return false;
        }
    }
    for (uint32_t g = 0; ok && g < h.group_count; g++) {
        uint32_t n;
        if (!get(fd, &n, sizeof n) || n >= (1u << 20)) {
            nm_obj_free(out);
            return false;
        }
        if (!(ok = (out->groups[g] = nm_malloc((size_t)n + 1)) != NULL)) break;
        out->group_count = g + 1;
        if (!get(fd, out->groups[g], n)) {
            nm_obj_free(out);
            return false;
        }
        out->groups[g][n] = 0;
    }
    if (!ok) {
        nm_obj_free(out);
        *rc = nm_fail(err, NM_ERR_NOMEM, "%s: out of memory for the imported level", path);
        return true;
    }
    *info = h.info;
    *rc = NM_OK;
    return true;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NM_SANITIZED 1 /* the sanitizers' shadow memory is address space: no cap on it */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define NM_SANITIZED 1
#endif
#endif

bool nm_level_caps_address_space(void)
{
#ifdef NM_SANITIZED
    return false;
#else
    return true;
#endif
}

/* What the child may take, for a file of `size` bytes (0: the file at path, and a .gltf's buffers
 * are not counted).
 * - CPU: two minutes and four seconds more a MiB, or a lower soft limit the process has; below the
 *   hard limit, which is then set a few seconds above it, so that the child gets SIGXCPU first and
 *   SIGKILL if it outlives that.
 * - Address space: what the process holds now plus the largest of 4 GiB, 64 bytes a byte of the
 *   file and the machine's memory, or a lower limit the process has. A valid file may need far
 *   more than its size (4 MB of Collada placing one mesh 1 200 times took 5.2 GB); the cap is
 *   there to stop the growth without end of some damaged files at the machine's size. No cap
 *   when what the process holds cannot be read or the cap does not fit an rlim_t. */
static void child_limits(const char *path, size_t size, struct rlimit *cpu, struct rlimit *as)
{
    struct stat st;
    if (!size && stat(path, &st) == 0 && st.st_size > 0) size = (size_t)st.st_size;
    const uint64_t secs = 120 + ((uint64_t)size >> 18 < (1u << 20) ? (uint64_t)size >> 18 : (1u << 20));
    if (getrlimit(RLIMIT_CPU, cpu) != 0) cpu->rlim_cur = cpu->rlim_max = RLIM_INFINITY;
    if (cpu->rlim_cur == RLIM_INFINITY || (uint64_t)cpu->rlim_cur > secs) cpu->rlim_cur = (rlim_t)secs;
    if (cpu->rlim_max != RLIM_INFINITY && cpu->rlim_cur + 1 > cpu->rlim_max) /* equal: SIGKILL alone */
        cpu->rlim_cur = cpu->rlim_max > 1 ? cpu->rlim_max - 1 : cpu->rlim_max;
    if (cpu->rlim_max == RLIM_INFINITY || cpu->rlim_max > cpu->rlim_cur + 5) cpu->rlim_max = cpu->rlim_cur + 5;
    if (getrlimit(RLIMIT_AS, as) != 0) as->rlim_cur = as->rlim_max = RLIM_INFINITY;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    const long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES);
    if (!pages || page <= 0) return;
    uint64_t more = (uint64_t)4 << 30;
    if ((uint64_t)size > more / 64) more = (uint64_t)size * 64;
    if (phys > 0 && (uint64_t)phys * (uint64_t)page > more) more = (uint64_t)phys * (uint64_t)page;
    const uint64_t cap = (uint64_t)pages * (uint64_t)page + more;
    if (cap >= (uint64_t)RLIM_INFINITY) return;
    if (as->rlim_cur == RLIM_INFINITY || (uint64_t)as->rlim_cur > cap) as->rlim_cur = (rlim_t)cap;
}

/* The child's side: its limits, no core file, killed with its parent, SIGXCPU as the kernel
 * means it; then the import and the answer. */
static _Noreturn void child_main(int fd, pid_t parent, const struct rlimit *cpu, const struct rlimit *as,
                                 const char *path, const void *data, size_t size, const char *ext,
                                 const nm_level_opts *opts, nm_obj *out, nm_level_info *info)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    const struct rlimit none = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)setrlimit(RLIMIT_CPU, cpu);
    const bool capped = nm_level_caps_address_space() && as->rlim_cur != RLIM_INFINITY;
    if (capped) (void)setrlimit(RLIMIT_AS, as);
    signal(SIGXCPU, SIG_DFL);
    sigset_t xcpu;
    sigemptyset(&xcpu);
    sigaddset(&xcpu, SIGXCPU);
    sigprocmask(SIG_UNBLOCK, &xcpu, NULL);
    FILE *adj = fopen("/proc/self/oom_score_adj", "w"); /* if memory runs out, this process goes first */
    if (adj) {
        fputs("1000", adj);
        fclose(adj);
    }
    nm_error e = {0};
    const int rc = import_here(path, data, size, ext, opts, out, info, &e);
    const size_t n = strlen(e.msg);
    if (rc == NM_ERR_NOMEM && capped) /* the cap is this process's: say which it was */
        snprintf(e.msg + n, sizeof e.msg - n, " (the import may take %.1f GiB here)",
                 (double)as->rlim_cur / (double)(1u << 30));
    send_result(fd, rc, &e, out, info);
    _exit(0); /* no atexit handlers, no stdio of the parent's */
}

/* import_here in a child process; in this one when no child can be made. */
static int import_apart(const char *path, const void *data, size_t size, const char *ext, const nm_level_opts *opts,
                        nm_obj *out, nm_level_info *info, nm_error *err)
{
    struct rlimit cpu, as;
    child_limits(path, size, &cpu, &as);
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) return import_here(path, data, size, ext, opts, out, info, err);
    fflush(NULL); /* nothing buffered is written twice */
    const pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return import_here(path, data, size, ext, opts, out, info, err);
    }
    if (pid == 0) {
        close(fd[0]);
        child_main(fd[1], parent, &cpu, &as, path, data, size, ext, opts, out, info);
    }
    close(fd[1]);
    int rc = NM_OK;
    const bool answered = take_result(fd[0], path, out, info, &rc, err);
    close(fd[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t w;
    while ((w = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR) {}
    if (answered) return rc;
    if (w != pid)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: the assimp import process ended without a result", path);
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    const double used = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                        1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    if (sig == SIGXCPU || (sig == SIGKILL && used + 0.5 >= (double)cpu.rlim_cur))
        return nm_fail(err, NM_ERR_CORRUPT, "%s: assimp did not finish reading the file in %llu s of CPU time "
                       "(a damaged file it loops on?)", path, (unsigned long long)cpu.rlim_cur);
    char how[64];
    if (sig) snprintf(how, sizeof how, "signal %d, %s", sig, strsignal(sig));
    else snprintf(how, sizeof how, "exit status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return nm_fail(err, NM_ERR_CORRUPT, "%s: assimp %u.%u stopped reading the file (%s): the file is damaged or "
                   "uses something assimp cannot read; try exporting it again, or as OBJ or glTF",
                   path, aiGetVersionMajor(), aiGetVersionMinor(), how);
}

/* apart: in a child process (nm_level_load), else in this one (nm_level_parse). */
static int load_assimp(const char *path, const void *data, size_t size, const char *ext, const nm_level_opts *opts,
                       bool apart, nm_obj *out, nm_level_info *info, nm_error *err)
{
    if (data && size == 0) return nm_fail(err, NM_ERR_CORRUPT, "%s: empty file", path);
    if (data && size > UINT32_MAX) return nm_fail(err, NM_ERR_CORRUPT, "%s: larger than 4 GiB", path);
    if (data && (strcmp(ext, "glb") == 0 || (size >= 4 && memcmp(data, "glTF", 4) == 0))) {
        int rc = check_glb(data, size, path, err); /* assimp reads GLB bytes whatever the name */
        if (rc == NM_OK) rc = check_gltf_json((const char *)data + 20, le32((const uint8_t *)data + 12), path, err);
        if (rc) return rc;
    } else if (data && strcmp(ext, "gltf") == 0) {
        int rc = check_gltf_json(data, size, path, err);
        if (rc) return rc;
    }
    if (data && strcmp(ext, "dae") == 0) {
        int rc = check_dae(data, size, path, err);
        if (rc) return rc;
    }
    return apart ? import_apart(path, data, size, ext, opts, out, info, err)
                 : import_here(path, data, size, ext, opts, out, info, err);
}
#else
bool nm_level_have_assimp(void) { return false; }
bool nm_level_caps_address_space(void) { return false; }

static int load_assimp(const char *path, const void *data, size_t size, const char *ext, const nm_level_opts *opts,
                       bool apart, nm_obj *out, nm_level_info *info, nm_error *err)
{
    (void)data; (void)size; (void)opts; (void)apart; (void)out; (void)info;
    return nm_fail(err, NM_ERR_ARG, "%s: .%s needs assimp (libassimp-dev), not found when navbake was built; "
                   "only OBJ can be read", path, ext);
}
#endif

static bool is_obj_ext(const char *ext) { return strcmp(ext, "obj") == 0; }

/* true when the file starts with GLB's magic (a binary glTF under another name) */
static bool starts_glb(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char m[4];
    bool yes = fread(m, 1, 4, f) == 4 && memcmp(m, "glTF", 4) == 0;
    fclose(f);
    return yes;
}

int nm_level_parse(const void *data, size_t size, const char *hint, const char *name, const nm_level_opts *opts,
                   nm_obj *out, nm_level_info *info, nm_error *err)
{
    nm_level_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    info->unit_scale = 1.0;
    memset(out, 0, sizeof *out);
    char ext[16];
    snprintf(ext, sizeof ext, "%s", hint ? hint : "");
    if (!data) data = ""; /* from memory, always (NULL would mean "open `name`" below) */
    int rc = is_obj_ext(ext) && !(opts && opts->obj_via_assimp)
                 ? load_obj(name, data, size, opts, out, info, err)
                 : load_assimp(name, data, size, ext, opts, false, out, info, err);
    if (rc == NM_OK) bounds(out, info);
    return rc;
}

int nm_level_load(const char *path, const nm_level_opts *opts, nm_obj *out, nm_level_info *info, nm_error *err)
{
    nm_level_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    info->unit_scale = 1.0;
    memset(out, 0, sizeof *out);
    char ext[16];
    bool gz = false;
    file_ext(path, ext, sizeof ext, &gz);
    int rc;
    if (is_obj_ext(ext) && !(opts && opts->obj_via_assimp)) {
        rc = load_obj(path, NULL, 0, opts, out, info, err);
    } else if (gz || is_obj_ext(ext) || strcmp(ext, "glb") == 0 || strcmp(ext, "dae") == 0 || starts_glb(path)) {
        /* assimp reads no gzip: unpack here (OBJ through assimp from memory too, so both
         * importers see the same bytes; GLB and Collada too, checked first) */
        uint8_t *data = NULL;
        size_t size = 0;
        rc = nm_file_read(path, 0, &data, &size, err);
        if (rc == NM_OK && size == 0) rc = nm_fail(err, NM_ERR_CORRUPT, "%s: empty file", path);
        if (rc == NM_OK) rc = load_assimp(path, data, size, ext, opts, true, out, info, err);
        nm_free(data);
    } else {
        /* by path, so a .gltf finds its .bin files; its JSON checked first */
        rc = NM_OK;
        if (strcmp(ext, "gltf") == 0) {
            uint8_t *data = NULL;
            size_t size = 0;
            rc = nm_file_read(path, 0, &data, &size, err);
            if (rc == NM_OK) rc = check_gltf_json((const char *)data, size, path, err);
            nm_free(data);
        }
        if (rc == NM_OK) rc = load_assimp(path, NULL, 0, ext, opts, true, out, info, err);
    }
    if (rc == NM_OK) bounds(out, info);
    return rc;
}
