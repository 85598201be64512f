/* occ_tree.c — the bounding-box trees of OccluderPack (两级包围盒树): one builder used for the
 * instance tree (world boxes) and the template trees (padded triangle boxes, local units), with
 * segment and box traversals. The trees only save work: boxes are rounded outward to float and
 * padded at query time, so a face the exact test would hit is never culled. */
#include "occ_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounding outward to float keeps every double box inside its float box. */
float occ_down(double x)
{
    float f = (float)x;
    if ((double)f > x) f = nextafterf(f, -INFINITY);
    return f;
}

float occ_up(double x)
{
    float f = (float)x;
    if ((double)f < x) f = nextafterf(f, INFINITY);
    return f;
}

typedef struct sort_key {
    double key;
    uint32_t item;
} sort_key;

/* A total order (NaN keys were replaced before sorting), ties by item number: deterministic. */
static int cmp_key(const void *pa, const void *pb)
{
    const sort_key *a = (const sort_key *)pa, *b = (const sort_key *)pb;
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    return (a->item > b->item) - (a->item < b->item);
}

typedef struct builder {
    occ_tree *t;
    const double *boxes;
    sort_key *keys;
} builder;

static uint32_t build_node(builder *bd, uint32_t start, uint32_t count)
{
    occ_tree *t = bd->t;
    uint32_t me = t->node_count++;
    occ_node *nd = &t->nodes[me];
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = start; i < start + count; i++) {
        const double *b = bd->boxes + 6 * (size_t)t->items[i];
        for (int a = 0; a < 3; a++) {
            if (b[a] < lo[a]) lo[a] = b[a];
            if (b[3 + a] > hi[a]) hi[a] = b[3 + a];
            /* A NaN bound (non-finite placement) makes the box unbounded. */
            if (isnan(b[a])) lo[a] = -INFINITY;
            if (isnan(b[3 + a])) hi[a] = INFINITY;
            double c = 0.5 * b[a] + 0.5 * b[3 + a];
            if (c < clo[a]) clo[a] = c;
            if (c > chi[a]) chi[a] = c;
        }
    }
    for (int a = 0; a < 3; a++) {
        nd->lo[a] = occ_down(lo[a]);
        nd->hi[a] = occ_up(hi[a]);
    }
    nd->start = start;
    nd->count = count;
    nd->left = nd->right = 0;
    if (count <= NM_OCC_kLeafSize) return me;

    /* Median split along the longest extent of the centres. */
    int axis = 0;
    double best = -1.0;
    for (int a = 0; a < 3; a++) {
        double e = chi[a] - clo[a];
        if (e > best) {
            best = e;
            axis = a;
        }
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t it = t->items[start + i];
        const double *b = bd->boxes + 6 * (size_t)it;
        double c = 0.5 * b[axis] + 0.5 * b[3 + axis];
        bd->keys[i].key = isnan(c) ? 0.0 : c;
        bd->keys[i].item = it;
    }
    qsort(bd->keys, count, sizeof *bd->keys, cmp_key);
    for (uint32_t i = 0; i < count; i++) t->items[start + i] = bd->keys[i].item;
    uint32_t half = count / 2;
    nd->count = 0;
    uint32_t l = build_node(bd, start, half);
    uint32_t r = build_node(bd, start + half, count - half);
    t->nodes[me].left = l;
    t->nodes[me].right = r;
    return me;
}

int occ_tree_build(occ_tree *tree, const double *boxes, uint32_t n, nm_error *err)
{
    memset(tree, 0, sizeof *tree);
    if (n == 0) return NM_OK;
    tree->nodes = (occ_node *)nm_calloc(2 * (size_t)n, sizeof *tree->nodes);
    tree->items = (uint32_t *)nm_calloc(n, sizeof *tree->items);
    sort_key *keys = (sort_key *)nm_calloc(n, sizeof *keys);
    if (!tree->nodes || !tree->items || !keys) {
        nm_free(keys);
        occ_tree_free(tree);
        return nm_fail(err, NM_ERR_NOMEM, "out of memory building a box tree of %u items", n);
    }
    for (uint32_t i = 0; i < n; i++) tree->items[i] = i;
    builder bd = {tree, boxes, keys};
    build_node(&bd, 0, n);
    nm_free(keys);
    return NM_OK;
}

void occ_tree_free(occ_tree *tree)
{
    nm_free(tree->nodes);
    nm_free(tree->items);
    memset(tree, 0, sizeof *tree);
}

bool occ_seg_box(const double p[3], const double d[3], const float lo[3], const float hi[3])
{
    double s0 = 0.0, s1 = 1.0;
    for (int a = 0; a < 3; a++) {
        double l = (double)lo[a] - NM_OCC_kBoxPad, h = (double)hi[a] + NM_OCC_kBoxPad;
        if (d[a] == 0.0) {
            if (!(p[a] >= l && p[a] <= h)) return false;
            continue;
        }
        double e0 = (l - p[a]) / d[a], e1 = (h - p[a]) / d[a];
        if (e0 > e1) {
            double x = e0;
            e0 = e1;
            e1 = x;
        }
        if (e0 > s0) s0 = e0;
        if (e1 < s1) s1 = e1;
        if (s0 > s1) return false;
    }
    return true;
}

bool occ_box_box(const double lo[3], const double hi[3], const float blo[3], const float bhi[3])
{
    for (int a = 0; a < 3; a++)
        if (!(lo[a] <= (double)bhi[a] + NM_OCC_kBoxPad && hi[a] >= (double)blo[a] - NM_OCC_kBoxPad))
            return false;
    return true;
}

/* Depth is about log2(n) + 1 <= 34 with median splits, so a fixed stack suffices. */
enum { STACK = 96 };

void occ_tree_segment(const occ_tree *tree, const double p[3], const double d[3], occ_item_fn fn,
                      void *ctx)
{
    if (!tree->nodes) return;
    uint32_t stack[STACK];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const occ_node *nd = &tree->nodes[stack[--top]];
        if (!occ_seg_box(p, d, nd->lo, nd->hi)) continue;
        if (nd->count > 0) {
            for (uint32_t i = nd->start; i < nd->start + nd->count; i++)
                if (!fn(ctx, tree->items[i])) return;
        } else if (top + 2 <= STACK) {
            stack[top++] = nd->right;
            stack[top++] = nd->left;
        }
    }
}

void occ_tree_box(const occ_tree *tree, const double lo[3], const double hi[3], occ_item_fn fn,
                  void *ctx)
{
    if (!tree->nodes) return;
    uint32_t stack[STACK];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const occ_node *nd = &tree->nodes[stack[--top]];
        if (!occ_box_box(lo, hi, nd->lo, nd->hi)) continue;
        if (nd->count > 0) {
            for (uint32_t i = nd->start; i < nd->start + nd->count; i++)
                if (!fn(ctx, tree->items[i])) return;
        } else if (top + 2 <= STACK) {
            stack[top++] = nd->right;
            stack[top++] = nd->left;
        }
    }
}
