/* obj.c — Wavefront OBJ reader (see obj.h): one pass over the text, line by line, with every
 * number checked and every face index resolved against the vertices read so far, so any input
 * gives either a mesh or an error naming the line. */
#include "obj.h"

#include "codec/codec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <limits.h>

/* Growable array of T: doubles its capacity; false on overflow / out of memory. */
static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return true;
    uint64_t n = *cap ? (uint64_t)*cap : 256;
    while (n < need) n *= 2;
    if (n > UINT32_MAX) n = UINT32_MAX;
    size_t bytes;
    if (!nm_mul_ok((size_t)n, elem, &bytes)) return false;
    void *q = nm_realloc(*p, bytes);
    if (!q) return false;
    *p = q;
    *cap = (uint32_t)n;
    return true;
}

typedef struct parser {
    nm_obj *o;
    uint32_t pos_cap, tri_cap, group_tri_cap, group_cap; /* capacities in elements */
    const char *name;
    size_t line;
    const char *pending_group; /* name set by the last g / o line, registered on first face */
    size_t pending_len;
    int cur_group;             /* -1: the pending name is not registered yet */
    uint32_t *poly;            /* resolved corners of the current face */
    uint32_t poly_cap;
} parser;

static int fail_line(parser *ps, nm_error *err, int code, const char *what)
{
    return nm_fail(err, code, "%s:%zu: %s", ps->name, ps->line, what);
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Next whitespace-separated token of [*s, end): sets *tok / *len, false at the end of the line. */
static bool next_token(const char **s, const char *end, const char **tok, size_t *len)
{
    const char *p = *s;
    while (p < end && is_space(*p)) p++;
    if (p >= end) { *s = p; return false; }
    const char *q = p;
    while (q < end && !is_space(*q)) q++;
    *tok = p;
    *len = (size_t)(q - p);
    *s = q;
    return true;
}

/* A finite float from a token (strtod needs a NUL-terminated copy). */
static bool parse_float(const char *tok, size_t len, float *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, tok, len);
    buf[len] = 0;
    char *endp = NULL;
    errno = 0;
    double d = strtod(buf, &endp);
    if (endp != buf + len || !isfinite(d) || fabs(d) > FLT_MAX) return false;
    /* Underflow to 0 is harmless; ERANGE on overflow is caught by the range check above. */
    *out = (float)d;
    return true;
}

/* A signed decimal integer of [tok, tok + len) (no sign-only, no junk). */
static bool parse_int(const char *tok, size_t len, long long *out)
{
    if (len == 0) return false;
    size_t i = 0;
    bool neg = false;
    if (tok[0] == '-' || tok[0] == '+') { neg = tok[0] == '-'; i = 1; }
    if (i == len) return false;
    long long v = 0;
    for (; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9') return false;
        if (v > (LLONG_MAX - 9) / 10) return false;
        v = v * 10 + (tok[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

static int register_group(parser *ps, nm_error *err)
{
    const char *gname = ps->pending_group ? ps->pending_group : "default";
    size_t glen = ps->pending_group ? ps->pending_len : strlen("default");
    nm_obj *o = ps->o;
    for (uint32_t i = 0; i < o->group_count; i++)
        if (strlen(o->groups[i]) == glen && memcmp(o->groups[i], gname, glen) == 0) {
            ps->cur_group = (int)i;
            return NM_OK;
        }
    if (o->group_count >= (uint32_t)INT32_MAX) return fail_line(ps, err, NM_ERR_CORRUPT, "too many groups");
    if (!grow((void **)&o->groups, &ps->group_cap, o->group_count + 1, sizeof(char *)))
        return fail_line(ps, err, NM_ERR_NOMEM, "out of memory");
    char *s = nm_malloc(glen + 1);
    if (!s) return fail_line(ps, err, NM_ERR_NOMEM, "out of memory");
    memcpy(s, gname, glen);
    s[glen] = 0;
    o->groups[o->group_count] = s;
    ps->cur_group = (int)o->group_count++;
    return NM_OK;
}

static int parse_vertex(parser *ps, const char *s, const char *end, nm_error *err)
{
    nm_obj *o = ps->o;
    float xyz[3];
    for (int k = 0; k < 3; k++) {
        const char *tok;
        size_t len;
        if (!next_token(&s, end, &tok, &len))
            return fail_line(ps, err, NM_ERR_CORRUPT, "vertex needs three coordinates");
        if (!parse_float(tok, len, &xyz[k]))
            return nm_fail(err, NM_ERR_CORRUPT, "%s:%zu: bad vertex coordinate '%.*s' (not a finite number)",
                           ps->name, ps->line, (int)(len > 40 ? 40 : len), tok);
    }
    /* Extra values (w, or vertex colours) are ignored. */
    if (o->vert_count >= UINT32_MAX / 3 - 1) return fail_line(ps, err, NM_ERR_CORRUPT, "too many vertices");
    if (!grow((void **)&o->pos, &ps->pos_cap, 3 * (o->vert_count + 1), sizeof(float)))
        return fail_line(ps, err, NM_ERR_NOMEM, "out of memory");
    memcpy(o->pos + 3 * (size_t)o->vert_count, xyz, sizeof xyz);
    o->vert_count++;
    return NM_OK;
}

/* One face corner "v", "v/vt", "v//vn" or "v/vt/vn": resolves v, checks the others are integers. */
static int parse_corner(parser *ps, const char *tok, size_t len, uint32_t *out, nm_error *err)
{
    const char *part[3] = {tok, NULL, NULL};
    size_t plen[3] = {len, 0, 0};
    int parts = 1;
    for (size_t i = 0; i < len; i++) {
        if (tok[i] != '/') continue;
        if (parts == 3) goto bad;
        plen[parts - 1] = (size_t)(tok + i - part[parts - 1]);
        part[parts] = tok + i + 1;
        plen[parts] = (size_t)(tok + len - part[parts]);
        parts++;
    }
    long long idx, other;
    if (!parse_int(part[0], plen[0], &idx)) goto bad;
    for (int k = 1; k < parts; k++)
        if (plen[k] != 0 && !parse_int(part[k], plen[k], &other)) goto bad;
    long long n = ps->o->vert_count;
    long long r = idx > 0 ? idx - 1 : n + idx;
    if (idx == 0 || r < 0 || r >= n)
        return nm_fail(err, NM_ERR_CORRUPT, "%s:%zu: face index %lld out of range (%lld vertices so far)",
                       ps->name, ps->line, idx, n);
    *out = (uint32_t)r;
    return NM_OK;
bad:
    return nm_fail(err, NM_ERR_CORRUPT, "%s:%zu: malformed face corner '%.*s'", ps->name, ps->line,
                   (int)(len > 40 ? 40 : len), tok);
}

static int parse_face(parser *ps, const char *s, const char *end, nm_error *err)
{
    nm_obj *o = ps->o;
    uint32_t n = 0;
    const char *tok;
    size_t len;
    while (next_token(&s, end, &tok, &len)) {
        if (!grow((void **)&ps->poly, &ps->poly_cap, n + 1, sizeof(uint32_t)))
            return fail_line(ps, err, NM_ERR_NOMEM, "out of memory");
        int rc = parse_corner(ps, tok, len, &ps->poly[n], err);
        if (rc) return rc;
        n++;
    }
    if (n < 3) return fail_line(ps, err, NM_ERR_CORRUPT, "face needs at least three corners");
    if (ps->cur_group < 0) {
        int rc = register_group(ps, err);
        if (rc) return rc;
    }
    uint32_t add = n - 2;
    if ((uint64_t)o->tri_count + add >= UINT32_MAX / 3) return fail_line(ps, err, NM_ERR_CORRUPT, "too many triangles");
    if (!grow((void **)&o->tri_group, &ps->group_tri_cap, o->tri_count + add, sizeof(uint32_t)) ||
        !grow((void **)&o->tris, &ps->tri_cap, 3 * (o->tri_count + add), sizeof(uint32_t)))
        return fail_line(ps, err, NM_ERR_NOMEM, "out of memory");
    /* Fan from the first corner: (0, i, i+1). */
    for (uint32_t i = 1; i + 1 < n; i++) {
        uint32_t *t = o->tris + 3 * (size_t)o->tri_count;
        t[0] = ps->poly[0];
        t[1] = ps->poly[i];
        t[2] = ps->poly[i + 1];
        o->tri_group[o->tri_count++] = (uint32_t)ps->cur_group;
    }
    return NM_OK;
}

static int parse_line(parser *ps, const char *s, const char *end, nm_error *err)
{
    const char *tok;
    size_t len;
    if (!next_token(&s, end, &tok, &len) || tok[0] == '#') return NM_OK;
    if (len == 1 && tok[0] == 'v') return parse_vertex(ps, s, end, err);
    if (len == 1 && tok[0] == 'f') return parse_face(ps, s, end, err);
    if (len == 1 && (tok[0] == 'g' || tok[0] == 'o')) {
        /* The first name of the line; a bare "g" means the default group. */
        const char *gname;
        size_t glen;
        if (next_token(&s, end, &gname, &glen)) {
            ps->pending_group = gname;
            ps->pending_len = glen;
        } else {
            ps->pending_group = NULL;
        }
        ps->cur_group = -1;
    }
    return NM_OK;
}

void nm_obj_free(nm_obj *o)
{
    if (!o) return;
    for (uint32_t i = 0; i < o->group_count; i++) nm_free(o->groups[i]);
    nm_free(o->groups);
    nm_free(o->pos);
    nm_free(o->tris);
    nm_free(o->tri_group);
    memset(o, 0, sizeof *o);
}

int nm_obj_parse(const char *text, size_t size, const char *name, nm_obj *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    parser ps = {.o = out, .name = name ? name : "obj", .cur_group = -1};
    const char *p = text, *end = text + size;
    int rc = NM_OK;
    while (p < end && rc == NM_OK) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        ps.line++;
        if (memchr(p, 0, (size_t)(le - p)))
            rc = fail_line(&ps, err, NM_ERR_CORRUPT, "NUL byte in text");
        else
            rc = parse_line(&ps, p, le, err);
        p = nl ? nl + 1 : end;
    }
    nm_free(ps.poly);
    if (rc) nm_obj_free(out);
    return rc;
}

int nm_obj_load(const char *path, nm_obj *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *data = NULL;
    size_t size = 0;
    int rc = nm_file_read(path, 0, &data, &size, err);
    if (rc) return rc;
    rc = nm_obj_parse((const char *)data, size, path, out, err);
    nm_free(data);
    return rc;
}

int nm_obj_find_group(const nm_obj *o, const char *name)
{
    for (uint32_t i = 0; i < o->group_count; i++)
        if (strcmp(o->groups[i], name) == 0) return (int)i;
    return -1;
}
