/* test_route_nogo.c — the authored no-go table (reference-maaend.md §4.9): parsing, the errors
 * naming zone / entry / field, a missing file as no zones, tier polygons banded on the tier's
 * floor, and the endpoint test (even-odd, band). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "route/route.h"

static const char *k_table =
    "{\"version\": 1, \"zones\": {"
    " \"map01\": [{\"poly\": [[0,0],[10,0],[10,10],[0,10]], \"id\": \"pit\"},"
    "            {\"poly\": [[20,0],[30,0],[30,10]], \"tier\": \"map01_f2\"}],"
    " \"map02\": []}}";

Test(nogo, parses_zones_polygons_ids_and_tiers)
{
    nm_nogo_table t;
    nm_error err = {0};
    cr_assert_eq(nm_nogo_parse(k_table, strlen(k_table), "t.json", &t, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(t.nzones, 2);
    const nm_nogo_zone *z = nm_nogo_find_zone(&t, "map01");
    cr_assert_not_null(z);
    cr_assert_eq(z->npolys, 2);
    cr_expect_eq(z->polys[0].n, 4);
    cr_expect_str_eq(z->polys[0].id, "pit");
    cr_expect_null(z->polys[0].tier);
    cr_expect_str_eq(z->polys[1].tier, "map01_f2");
    cr_expect_float_eq(z->polys[1].xy[4], 30.0, 1e-12);
    cr_expect_null(nm_nogo_find_zone(&t, "map03"));
    nm_nogo_table_free(&t);
}

static void expect_error(const char *json, const char *needle)
{
    nm_nogo_table t;
    nm_error err = {0};
    cr_expect_eq(nm_nogo_parse(json, strlen(json), "t.json", &t, &err), NM_ERR_CORRUPT, "%s", json);
    cr_expect(strstr(err.msg, needle) != NULL, "'%s' not in '%s'", needle, err.msg);
    cr_expect_eq(t.nzones, 0);
}

Test(nogo, errors_name_the_zone_entry_and_field)
{
    expect_error("{\"version\": 2, \"zones\": {}}", "version");
    expect_error("{\"version\": 1}", "zones");
    expect_error("not json", "JSON");
    expect_error("{\"version\": 1, \"zones\": {\"a\": [{\"poly\": [[0,0],[1,1]]}]}}", "zone 'a': entry 0: field 'poly' has 2");
    expect_error("{\"version\": 1, \"zones\": {\"a\": [{\"poly\": [[0,0],[1,1],[2,\"x\"]]}]}}", "point 2");
    expect_error("{\"version\": 1, \"zones\": {\"a\": [{\"poly\": [[0,0],[1,1],[2,2]]}, {\"id\": 3}]}}",
                 "zone 'a': entry 1: field 'poly'");
    expect_error("{\"version\": 1, \"zones\": {\"a\": [{\"poly\": [[0,0],[1,1],[2,2]], \"tier\": 5}]}}", "'tier'");
}

Test(nogo, missing_file_is_no_zones_unreadable_is_an_error)
{
    nm_nogo_table t;
    nm_error err = {0};
    bool missing = false;
    cr_expect_eq(nm_nogo_load("/nonexistent/dir/nogo_zones.json", &t, &missing, &err), NM_OK);
    cr_expect(missing);
    cr_expect_eq(t.nzones, 0);
    char path[] = "/tmp/nogo_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "{\"version\":1,", 13), 13);
    close(fd);
    cr_expect_eq(nm_nogo_load(path, &t, &missing, &err), NM_ERR_CORRUPT);
    cr_expect_not(missing);
    unlink(path);
}

Test(nogo, tier_polygons_are_banded_on_the_tier_floor)
{
    nm_nogo_table t;
    nm_error err = {0};
    cr_assert_eq(nm_nogo_parse(k_table, strlen(k_table), "t.json", &t, &err), NM_OK);
    nm_zone zones[2];
    memset(zones, 0, sizeof zones);
    zones[0].name = "map01";
    zones[0].name_len = 5;
    zones[0].floor_y = NM_kFloorYNone;
    zones[1].name = "map01_f2";
    zones[1].name_len = 8;
    zones[1].flags = 1;
    zones[1].floor_y = 20.0f;
    nm_pack pack;
    memset(&pack, 0, sizeof pack);
    pack.zones = zones;
    pack.zone_count = 2;
    nm_nogo_poly *p = NULL;
    uint32_t n = 0;
    cr_assert_eq(nm_nogo_resolve(&t, &pack, "map01", &p, &n, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(n, 2);
    cr_expect_not(p[0].banded);
    cr_expect(p[1].banded);
    cr_expect_float_eq(p[1].floor_y, 20.0, 1e-12);
    /* base-map polygon: any height */
    cr_expect_eq(nm_nogo_hit(p, n, 5, 5, -100.0), 0);
    /* tier polygon: inside the triangle at (28, 2), only within 20 +- 12 */
    cr_expect_eq(nm_nogo_hit(p, n, 28, 2, 31.0), 1);
    cr_expect_eq(nm_nogo_hit(p, n, 28, 2, 33.0), -1);
    cr_expect_eq(nm_nogo_hit(p, n, 28, 2, 7.5), -1);
    cr_expect_eq(nm_nogo_hit(p, n, 22, 8, 20.0), -1, "outside the triangle");
    nm_free(p);
    /* a tier the pack does not have */
    pack.zone_count = 1;
    cr_expect_eq(nm_nogo_resolve(&t, &pack, "map01", &p, &n, &err), NM_ERR_CORRUPT);
    cr_expect(strstr(err.msg, "map01_f2") != NULL, "%s", err.msg);
    nm_nogo_table_free(&t);
}
