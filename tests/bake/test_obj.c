/* test_obj.c — the OBJ reader: n-gons, corner forms, negative indices, groups, ignored lines and
 * errors that name the line. */
#include "obj.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(const char *text, nm_obj *o, nm_error *err)
{
    return nm_obj_parse(text, strlen(text), "t.obj", o, err);
}

static void expect_tri(const nm_obj *o, uint32_t t, uint32_t a, uint32_t b, uint32_t c)
{
    cr_assert_lt(t, o->tri_count);
    cr_assert(o->tris[3 * t] == a && o->tris[3 * t + 1] == b && o->tris[3 * t + 2] == c,
              "triangle %u is (%u %u %u), want (%u %u %u)", t, o->tris[3 * t], o->tris[3 * t + 1], o->tris[3 * t + 2], a, b,
              c);
}

static void expect_error(const char *text, const char *want_in_msg)
{
    nm_obj o;
    nm_error err = {0};
    int rc = parse(text, &o, &err);
    cr_assert_eq(rc, NM_ERR_CORRUPT, "'%s' parsed (rc %d)", text, rc);
    cr_assert(strstr(err.msg, want_in_msg) != NULL, "message '%s' lacks '%s'", err.msg, want_in_msg);
    cr_assert_eq(o.tri_count, 0);
    cr_assert_null(o.pos);
}

Test(obj, pentagon_is_fanned_from_its_first_corner)
{
    nm_obj o;
    nm_error err = {0};
    cr_assert_eq(parse("v 0 0 0\nv 1 0 0\nv 2 0 1\nv 1 0 2\nv 0 0 1\nf 1 2 3 4 5\n", &o, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.vert_count, 5);
    cr_assert_eq(o.tri_count, 3);
    expect_tri(&o, 0, 0, 1, 2);
    expect_tri(&o, 1, 0, 2, 3);
    expect_tri(&o, 2, 0, 3, 4);
    cr_assert_float_eq(o.pos[3 * 2 + 0], 2.0f, 0);
    cr_assert_float_eq(o.pos[3 * 2 + 2], 1.0f, 0);
    nm_obj_free(&o);
}

Test(obj, corner_forms_and_negative_indices)
{
    nm_obj o;
    nm_error err = {0};
    const char *text = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n"
                       "vt 0 0\nvn 0 1 0\n"
                       "f 1/1 2/1/1 3//1\n"
                       "f -4 -2 -1\n"
                       "f -4/1/1 -3//1 -2\n";
    cr_assert_eq(parse(text, &o, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.tri_count, 3);
    expect_tri(&o, 0, 0, 1, 2);
    expect_tri(&o, 1, 0, 2, 3);
    expect_tri(&o, 2, 0, 1, 2);
    nm_obj_free(&o);
}

Test(obj, negative_index_counts_vertices_read_so_far)
{
    nm_obj o;
    nm_error err = {0};
    /* -1 in the first face means vertex 3; the later vertices do not change it. */
    cr_assert_eq(parse("v 0 0 0\nv 1 0 0\nv 1 0 1\nf -3 -2 -1\nv 5 5 5\nf -1 -2 -3\n", &o, &err), NM_OK, "%s", err.msg);
    expect_tri(&o, 0, 0, 1, 2);
    expect_tri(&o, 1, 3, 2, 1);
    nm_obj_free(&o);
}

Test(obj, groups_from_g_and_o_with_default_first)
{
    nm_obj o;
    nm_error err = {0};
    const char *text = "v 0 0 0\nv 1 0 0\nv 1 0 1\n"
                       "f 1 2 3\n"          /* default */
                       "g floor extra\n"    /* first name counts */
                       "f 1 2 3\n"
                       "o water\n"
                       "usemtl blue\ns 1\n"
                       "f 1 2 3\n"
                       "g floor\n"          /* back to an existing group */
                       "f 1 2 3\n"
                       "g empty\n"          /* no faces: never registered */
                       "g\n"                /* bare g: default again */
                       "f 1 2 3\n";
    cr_assert_eq(parse(text, &o, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.group_count, 3);
    cr_assert_str_eq(o.groups[0], "default");
    cr_assert_str_eq(o.groups[1], "floor");
    cr_assert_str_eq(o.groups[2], "water");
    uint32_t want[] = {0, 1, 2, 1, 0};
    cr_assert_eq(o.tri_count, 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(o.tri_group[i], want[i], "triangle %d group %u", i, o.tri_group[i]);
    cr_assert_eq(nm_obj_find_group(&o, "water"), 2);
    cr_assert_eq(nm_obj_find_group(&o, "empty"), -1);
    nm_obj_free(&o);
}

Test(obj, comments_blank_lines_crlf_and_unknown_records_are_ignored)
{
    nm_obj o;
    nm_error err = {0};
    const char *text = "# a level\r\nmtllib x.mtl\r\n\r\n   v 0 0 0 1\r\nv 1 0 0 0.5 0.5 0.5\r\n\tv 1 0 1\r\n"
                       "l 1 2\r\np 1\r\ncurv 0 1\r\nf 1 2 3\r\n";
    cr_assert_eq(parse(text, &o, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.vert_count, 3);
    cr_assert_eq(o.tri_count, 1);
    nm_obj_free(&o);
}

Test(obj, empty_text_is_an_empty_mesh)
{
    nm_obj o;
    nm_error err = {0};
    cr_assert_eq(parse("", &o, &err), NM_OK);
    cr_assert_eq(o.vert_count, 0);
    cr_assert_eq(o.tri_count, 0);
    nm_obj_free(&o);
}

Test(obj, index_out_of_range_names_the_line)
{
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\n\nf 1 2 4\n", "t.obj:5: face index 4 out of range");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 0 1 2\n", "t.obj:4: face index 0");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf -4 1 2\n", "t.obj:4: face index -4");
    expect_error("v 0 0 0\nf 1 2 3\nv 1 0 0\nv 1 0 1\n", "t.obj:2:");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 99999999999999999999999 1 2\n", "t.obj:4: malformed face corner");
}

Test(obj, malformed_numbers_and_faces_name_the_line)
{
    expect_error("v 0 0 0\nv 1 x 0\n", "t.obj:2: bad vertex coordinate 'x'");
    expect_error("v 0 0\n", "t.obj:1: vertex needs three coordinates");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1 2\n", "t.obj:4: face needs at least three corners");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1/a 2 3\n", "t.obj:4: malformed face corner '1/a'");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1/2/3/4 2 3\n", "malformed face corner");
    expect_error("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1.5 2 3\n", "malformed face corner");
    expect_error("v 1.0.0 0 0\n", "bad vertex coordinate");
}

Test(obj, nan_inf_and_float_overflow_are_rejected)
{
    expect_error("v nan 0 0\n", "t.obj:1: bad vertex coordinate 'nan'");
    expect_error("v 0 inf 0\n", "t.obj:1: bad vertex coordinate 'inf'");
    expect_error("v 0 0 -infinity\n", "bad vertex coordinate");
    expect_error("v 0 0 0\r\nv 1e39 0 0\r\n", "t.obj:2: bad vertex coordinate '1e39'");
}

Test(obj, nul_byte_is_an_error)
{
    nm_obj o;
    nm_error err = {0};
    const char text[] = "v 0 0 0\nv 1\0 0 0\n";
    cr_assert_eq(nm_obj_parse(text, sizeof text - 1, "t.obj", &o, &err), NM_ERR_CORRUPT);
    cr_assert(strstr(err.msg, "t.obj:2:") != NULL, "%s", err.msg);
}

/* Random OBJ-like token soup: the reader returns OK or an error with a line number, never
 * crashes (run under ASan in CI). */
Test(obj, random_token_soup_never_crashes)
{
    static const char *tok[] = {"v", "f", "g", "o", "vt", "#", "1", "-1", "2", "3", "0", "1/2", "1//3", "/",
                                "-5", "0.5", "1e40", "nan", "x", "\n", "\n", " ", "\t", "\r\n", "4/4/4", "99999999999"};
    unsigned seed = 12345;
    char buf[512];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = 0;
        int count = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 60;
        for (int i = 0; i < count; i++) {
            seed = seed * 1103515245u + 12345u;
            const char *t = tok[(seed >> 16) % (sizeof tok / sizeof tok[0])];
            size_t l = strlen(t);
            if (n + l + 2 >= sizeof buf) break;
            memcpy(buf + n, t, l);
            n += l;
            buf[n++] = ' ';
        }
        nm_obj o;
        nm_error err = {0};
        int rc = nm_obj_parse(buf, n, "soup.obj", &o, &err);
        if (rc == NM_OK) {
            for (uint32_t t = 0; t < 3 * o.tri_count; t++) cr_assert_lt(o.tris[t], o.vert_count);
            for (uint32_t t = 0; t < o.tri_count; t++) cr_assert_lt(o.tri_group[t], o.group_count);
            nm_obj_free(&o);
        } else {
            cr_assert_eq(rc, NM_ERR_CORRUPT);
            cr_assert(strncmp(err.msg, "soup.obj:", 9) == 0, "%s", err.msg);
        }
    }
}

Test(obj, load_reads_a_file_and_reports_a_missing_one)
{
    char path[] = "/tmp/nm_obj_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("v 0 0 0\nv 1 0 0\nv 1 0 1\ng a\nf 1 2 3\n", f);
    fclose(f);
    nm_obj o;
    nm_error err = {0};
    cr_assert_eq(nm_obj_load(path, &o, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(o.tri_count, 1);
    cr_assert_str_eq(o.groups[0], "a");
    nm_obj_free(&o);
    remove(path);
    cr_assert_neq(nm_obj_load(path, &o, &err), NM_OK);
    cr_assert(strstr(err.msg, "nm_obj_") != NULL, "message names the file: %s", err.msg);
}
