/* sg_expr.c — the formula of a heightfield terrain: a tiny expression language in x and y (plan
 * metres) compiled to a tree. Numbers, x, y, pi, + - * / ^, unary minus, comparisons (< <= >
 * >= give 1 or 0), parentheses and the functions sin cos sqrt abs floor exp min max clamp
 * smoothstep. */
#include "sg.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { E_NUM, E_X, E_Y, E_NEG, E_BIN, E_FN };

typedef struct enode {
    int kind;
    char op;    /* E_BIN: + - * / ^ < l(<=) > g(>=) */
    int fn;     /* E_FN: index into fns */
    double num;
    struct enode *a[3];
} enode;

struct nm_sg_expr {
    enode *root;
};

static const struct {
    const char *name;
    int args;
} fns[] = {{"sin", 1},  {"cos", 1}, {"sqrt", 1}, {"abs", 1},   {"floor", 1},
           {"exp", 1},  {"min", 2}, {"max", 2},  {"clamp", 3}, {"smoothstep", 3}};

typedef struct {
    const char *s, *p;
    nm_error *err;
    int rc;
    int depth;
} parser;

static void node_free(enode *n)
{
    if (!n) return;
    for (int i = 0; i < 3; i++) node_free(n->a[i]);
    nm_free(n);
}

static enode *mk(parser *ps, int kind)
{
    enode *n = nm_calloc(1, sizeof *n);
    if (!n && !ps->rc) ps->rc = nm_fail(ps->err, NM_ERR_NOMEM, "formula: out of memory");
    if (n) n->kind = kind;
    return n;
}

static void fail(parser *ps, const char *what)
{
    if (!ps->rc)
        ps->rc = nm_fail(ps->err, NM_ERR_ARG, "formula \"%.80s\": %s at offset %d", ps->s, what,
                         (int)(ps->p - ps->s));
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static enode *parse_cmp(parser *ps);

static enode *parse_primary(parser *ps)
{
    skip(ps);
    if (ps->rc) return NULL;
    if (++ps->depth > 200) {
        fail(ps, "nested too deeply");
        return NULL;
    }
    enode *n = NULL;
    const char *p = ps->p;
    if (*p == '(') {
        ps->p++;
        n = parse_cmp(ps);
        skip(ps);
        if (*ps->p != ')') fail(ps, "expected ')'");
        else ps->p++;
    } else if (*p == '-') {
        ps->p++;
        n = mk(ps, E_NEG);
        if (n) n->a[0] = parse_primary(ps);
    } else if (isdigit((unsigned char)*p) || *p == '.') {
        char *end;
        double v = strtod(p, &end);
        if (end == p) fail(ps, "bad number");
        ps->p = end;
        n = mk(ps, E_NUM);
        if (n) n->num = v;
    } else if (isalpha((unsigned char)*p)) {
        const char *q = p;
        while (isalnum((unsigned char)*q) || *q == '_') q++;
        size_t len = (size_t)(q - p);
        ps->p = q;
        if (len == 1 && *p == 'x') n = mk(ps, E_X);
        else if (len == 1 && *p == 'y') n = mk(ps, E_Y);
        else if (len == 2 && strncmp(p, "pi", 2) == 0) {
            n = mk(ps, E_NUM);
            if (n) n->num = 3.14159265358979323846;
        } else {
            int f = -1;
            for (int i = 0; i < (int)(sizeof fns / sizeof fns[0]); i++)
                if (strlen(fns[i].name) == len && strncmp(fns[i].name, p, len) == 0) f = i;
            if (f < 0) {
                fail(ps, "unknown name");
            } else {
                n = mk(ps, E_FN);
                if (n) n->fn = f;
                skip(ps);
                if (*ps->p != '(') fail(ps, "expected '(' after function");
                else ps->p++;
                for (int i = 0; n && i < fns[f].args && !ps->rc; i++) {
                    if (i > 0) {
                        skip(ps);
                        if (*ps->p != ',') fail(ps, "expected ','");
                        else ps->p++;
                    }
                    n->a[i] = parse_cmp(ps);
                }
                skip(ps);
                if (*ps->p != ')') fail(ps, "expected ')' after arguments");
                else ps->p++;
            }
        }
    } else {
        fail(ps, "unexpected character");
    }
    ps->depth--;
    return n;
}

static enode *bin(parser *ps, char op, enode *l, enode *r)
{
    enode *n = mk(ps, E_BIN);
    if (!n) {
        node_free(l);
        node_free(r);
        return NULL;
    }
    n->op = op;
    n->a[0] = l;
    n->a[1] = r;
    return n;
}

static enode *parse_pow(parser *ps)
{
    enode *l = parse_primary(ps);
    skip(ps);
    if (*ps->p == '^') {
        ps->p++;
        l = bin(ps, '^', l, parse_pow(ps)); /* right-associative */
    }
    return l;
}

static enode *parse_mul(parser *ps)
{
    enode *l = parse_pow(ps);
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (c != '*' && c != '/') return l;
        ps->p++;
        l = bin(ps, c, l, parse_pow(ps));
    }
}

static enode *parse_add(parser *ps)
{
    enode *l = parse_mul(ps);
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (c != '+' && c != '-') return l;
        ps->p++;
        l = bin(ps, c, l, parse_mul(ps));
    }
}

static enode *parse_cmp(parser *ps)
{
    enode *l = parse_add(ps);
    skip(ps);
    char c = *ps->p;
    if (c == '<' || c == '>') {
        ps->p++;
        if (*ps->p == '=') {
            ps->p++;
            c = c == '<' ? 'l' : 'g';
        }
        l = bin(ps, c, l, parse_add(ps));
    }
    return l;
}

int nm_sg_expr_compile(const char *src, nm_sg_expr **out, nm_error *err)
{
    *out = NULL;
    parser ps = {src, src, err, NM_OK, 0};
    enode *root = parse_cmp(&ps);
    skip(&ps);
    if (!ps.rc && *ps.p) fail(&ps, "trailing text");
    if (!ps.rc && !root) fail(&ps, "empty");
    if (ps.rc) {
        node_free(root);
        return ps.rc;
    }
    nm_sg_expr *e = nm_malloc(sizeof *e);
    if (!e) {
        node_free(root);
        return nm_fail(err, NM_ERR_NOMEM, "formula: out of memory");
    }
    e->root = root;
    *out = e;
    return NM_OK;
}

static double ev(const enode *n, double x, double y)
{
    switch (n->kind) {
    case E_NUM: return n->num;
    case E_X: return x;
    case E_Y: return y;
    case E_NEG: return -ev(n->a[0], x, y);
    case E_BIN: {
        double a = ev(n->a[0], x, y), b = ev(n->a[1], x, y);
        switch (n->op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return b == 0 ? 0 : a / b;
        case '^': return pow(a, b);
        case '<': return a < b;
        case 'l': return a <= b;
        case '>': return a > b;
        case 'g': return a >= b;
        }
        return 0;
    }
    case E_FN: {
        double a = ev(n->a[0], x, y);
        double b = n->a[1] ? ev(n->a[1], x, y) : 0, c = n->a[2] ? ev(n->a[2], x, y) : 0;
        switch (n->fn) {
        case 0: return sin(a);
        case 1: return cos(a);
        case 2: return a > 0 ? sqrt(a) : 0;
        case 3: return fabs(a);
        case 4: return floor(a);
        case 5: return exp(a);
        case 6: return fmin(a, b);
        case 7: return fmax(a, b);
        case 8: return fmin(fmax(a, b), c);
        case 9: { /* smoothstep(e0, e1, v) */
            double d = b - a;
            double s = d == 0 ? (c >= b) : (c - a) / d;
            s = fmin(fmax(s, 0), 1);
            return s * s * (3 - 2 * s);
        }
        }
        return 0;
    }
    }
    return 0;
}

double nm_sg_expr_eval(const nm_sg_expr *e, double x, double y)
{
    double v = ev(e->root, x, y);
    return isfinite(v) ? v : 0.0;
}

void nm_sg_expr_free(nm_sg_expr *e)
{
    if (!e) return;
    node_free(e->root);
    nm_free(e);
}
