/* test_bake.c — the main-pack bake on small hand-written levels (--walkable-as-is): counts,
 * neighbours, areas and BSRF flags, transform, components, zone.json features (several zones, tier
 * zones, off-mesh links), zone.json errors, determinism and the file round trip. */
#include "util.h"
#include "recast_shim.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two ground quads sharing the edge x = 10, a water quad next to them, a collision-only railing
 * standing on the first quad's edge. Faces wind counter-clockwise seen from +Y. */
static const char *kLevel =
    "v 0 0 0\nv 10 0 0\nv 10 0 10\nv 0 0 10\nv 20 0 0\nv 20 0 10\nv 30 0 0\nv 30 0 10\n"
    "v 0 1 0\nv 10 1 0\n"
    "g ground_a\nf 1 4 3 2\n"
    "g ground_b\nf 2 3 6 5\n"
    "g water_pool\nf 5 6 8 7\n"
    "g railing\nf 1 2 10 9\n";

static const char *kLevelZone =
    "{\"areas\": {\"water*\": 12}, \"collision_only\": [\"railing*\"]}";

static bool has_nb(const nm_tri *t, int32_t n)
{
    return t->nb[0] == n || t->nb[1] == n || t->nb[2] == n;
}

Test(bake, two_quads_water_and_railing_as_is)
{
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(kLevel, kLevelZone, true, 1, &p, &err), NM_OK, "%s", err.msg);
    /* The railing is left out; 3 quads = 6 triangles on 8 welded vertices. */
    cr_assert_eq(p.tri_count, 6);
    cr_assert_eq(p.vert_count, 8);
    cr_assert_eq(p.zone_count, 1);
    cr_assert_str_eq(p.zones[0].name, "demo");
    cr_assert_eq(p.zones[0].id, 1);
    cr_assert_eq(p.zones[0].flags, 0);
    cr_assert_eq(p.zones[0].tri_count, 6);
    cr_assert_eq(p.zones[0].component_count, 1);
    float want_t[4] = {0.75f, 0, 0.75f, 0};
    for (int k = 0; k < 4; k++) cr_assert_float_eq(p.zones[0].t[k], want_t[k], 0);
    cr_assert(p.zones[0].floor_y < NM_kFloorYValidMin, "no floor_y");
    /* Pixel extent: u up to 0.75 * 30; v = -0.75 z <= 0, so the height is clamped to 1. */
    cr_assert_float_eq(p.zones[0].width, 22.5f, 0);
    cr_assert_float_eq(p.zones[0].height, 1.0f, 0);
    /* Vertex 0 is OBJ vertex 1 (first used), vertex 1 is OBJ vertex 4 = (0, 0, 10) -> (0, -7.5). */
    cr_assert_float_eq(p.verts[1].u, 0.0f, 0);
    cr_assert_float_eq(p.verts[1].v, -7.5f, 0);
    cr_assert_float_eq(p.verts[1].h, 0.0f, 0);
    /* A chain 0-1-2-3-4-5 across the shared edges: 5 adjacencies, 10 links. */
    cr_assert_eq(p.link_count, 10);
    for (int32_t t = 0; t < 5; t++) cr_assert(has_nb(&p.tris[t], t + 1) && has_nb(&p.tris[t + 1], t), "triangles %d, %d", t, t + 1);
    cr_assert(!has_nb(&p.tris[0], 2) && !has_nb(&p.tris[0], 5), "no other neighbours");
    /* Areas: water is 12 with flag 1 << 12, ground 0 with flag 1. */
    for (uint32_t t = 0; t < 6; t++) {
        uint8_t want = t >= 4 ? 12 : 0;
        cr_assert_eq(p.surfaces[t].area, want, "triangle %u area", t);
        cr_assert_eq(p.surfaces[t].flags, 1u << want);
        cr_assert_eq(p.surfaces[t].poly_type, 0);
    }
    cr_assert_eq(p.offmesh_count, 0);
    expect_pack_invariants(&p);
    nm_pack_free(&p);
}

Test(bake, defaults_take_every_group_with_area_zero)
{
    nm_pack p;
    nm_error err = {0};
    /* Without zone.json the railing is walkable geometry too, but it is vertical (no area in the
     * (u, v) plane) and 1 m tall, more than a step (kStepUp): a wall, dropped. The water keeps
     * area 0. */
    cr_assert_eq(bake_text(kLevel, NULL, true, 1, &p, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(p.tri_count, 6);
    for (uint32_t t = 0; t < p.tri_count; t++) cr_assert_eq(p.surfaces[t].area, 0);
    expect_pack_invariants(&p);
    nm_pack_free(&p);
}

Test(bake, a_vertical_face_no_taller_than_a_step_stays)
{
    /* two treads 0.5 m apart joined by a 0.5 m riser (wound against both), and a 1 m wall */
    static const char *lvl =
        "v 0 0 0\nv 1 0 0\nv 1 0 -1\nv 0 0 -1\n"
        "v 1 0.5 0\nv 2 0.5 0\nv 2 0.5 -1\nv 1 0.5 -1\n"
        "v 0 0 -1\nv 0 1 -1\nv 0 1 0\n"
        "g t\nf 1 2 3 4\nf 5 6 7 8\nf 2 5 8 3\n"
        "g wall\nf 1 4 10 11\n";
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(lvl, NULL, true, 1, &p, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(p.tri_count, 6, "2 treads + the riser; the 1 m wall is dropped");
    cr_assert_eq(p.zones[0].component_count, 1, "the riser joins the treads");
    nm_pack_free(&p);
}

Test(bake, islands_are_numbered_in_order_of_first_triangle)
{
    const char *obj = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n"
                      "v 5 0 0\nv 6 0 0\nv 6 0 1\nv 5 0 1\nv 10 0 0\nv 11 0 0\nv 10 0 1\n"
                      "g far\nf 5 8 7 6\n"
                      "g near\nf 1 4 3 2\n"
                      "g single\nf 9 11 10\nf 2 11 6\n"; /* corner contacts only: no shared edge */
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(obj, NULL, true, 1, &p, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(p.tri_count, 6);
    cr_assert_eq(p.zones[0].component_count, 4);
    uint32_t want[] = {0, 0, 1, 1, 2, 3};
    for (int t = 0; t < 6; t++) cr_assert_eq(p.components[t], want[t], "triangle %d component %u", t, p.components[t]);
    expect_pack_invariants(&p);
    nm_pack_free(&p);
}

Test(bake, non_manifold_and_same_direction_edges_get_no_neighbour)
{
    /* Three triangles on edge 1-2 (a fin): no neighbours there. Two proper pairs link. */
    const char *obj = "v 0 0 0\nv 1 0 0\nv 0 0 1\nv 1 0 -1\nv 1 1 1\n"
                      "v 10 0 0\nv 11 0 0\nv 11 0 1\nv 10 0 1\n"
                      "v 20 0 0\nv 21 0 0\nv 21 0 1\nv 20 0 1\n"
                      "f 1 3 2\nf 2 4 1\nf 1 2 5\n"
                      "f 6 9 8\nf 6 8 7\n"       /* 8->6 and 6->8 */
                      "f 10 13 12\nf 12 11 10\n"; /* 12->10 and 10->12 */
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(obj, NULL, true, 1, &p, &err), NM_OK, "%s", err.msg);
    /* Triangle 2 (1 2 5) is (0,0)-(0.75,0)-(0.75,-0.75): kept, so edge 1-2 has 3 users. */
    cr_assert_eq(p.tri_count, 7);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(p.tris[0].nb[k], -1);
        cr_assert_eq(p.tris[1].nb[k], -1);
        cr_assert_eq(p.tris[2].nb[k], -1);
    }
    cr_assert(has_nb(&p.tris[3], 4) && has_nb(&p.tris[4], 3));
    cr_assert(has_nb(&p.tris[5], 6) && has_nb(&p.tris[6], 5));
    cr_assert_eq(p.link_count, 4);
    expect_pack_invariants(&p);
    nm_pack_free(&p);

    /* Two triangles walking the shared edge in the same direction (one flipped): no neighbour. */
    const char *flipped = "v 20 0 0\nv 21 0 0\nv 21 0 1\nv 20 0 1\nv 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n"
                          "f 1 4 3\nf 3 1 2\n"   /* 3->1 in both */
                          "f 5 8 7\nf 5 7 6\n";  /* a proper pair so the pack has a link */
    cr_assert_eq(bake_text(flipped, NULL, true, 1, &p, &err), NM_OK, "%s", err.msg);
    cr_assert(!has_nb(&p.tris[0], 1) && !has_nb(&p.tris[1], 0), "same-direction edge must not link");
    cr_assert_eq(p.link_count, 2);
    nm_pack_free(&p);
}

Test(bake, degenerate_triangles_are_dropped_after_the_weld)
{
    const char *obj = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nv 1 0 0\nv 2 0 0\n"
                      "f 1 4 3 2\n"
                      "f 2 5 3\n"  /* 2 and 5 weld: repeated vertex */
                      "f 1 2 6\n"; /* collinear in (u, v) */
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(obj, NULL, true, 1, &p, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(p.tri_count, 2);
    cr_assert_eq(p.vert_count, 4, "unused vertices are not kept");
    nm_pack_free(&p);
}

Test(bake, a_level_without_adjacent_triangles_is_a_clear_error)
{
    nm_pack p;
    nm_error err = {0};
    int rc = bake_text("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1 3 2\n", NULL, true, 1, &p, &err);
    cr_assert_eq(rc, NM_ERR_STATE);
    cr_assert(strstr(err.msg, "level has no adjacent triangles") != NULL, "%s", err.msg);
    rc = bake_text("v 0 0 0\nv 1 0 0\nv 1 0 1\ng wall\nf 1 3 2\n", "{\"obstacles\": [\"wall\"]}", true, 1, &p, &err);
    cr_assert_eq(rc, NM_ERR_STATE);
    cr_assert(strstr(err.msg, "zone 'demo': no walkable triangles") != NULL, "%s", err.msg);
}

static const char *kZones =
    "{\n"
    " \"agent\": {\"height\": 2.0, \"radius\": 0.5, \"climb\": 0.4, \"slope_deg\": 40},\n"
    " \"zones\": [\n"
    "  {\"name\": \"land\", \"groups\": [\"ground*\"], \"floor_y\": 0.5,\n"
    "   \"tiers\": [{\"name\": \"land_f2\", \"floor_y\": 6.0, \"transform\": [2, 1, 2, 3]},\n"
    "             {\"name\": \"land_f3\", \"id\": 40}]},\n"
    "  {\"name\": \"lake\", \"id\": 9, \"transform\": [1, 100, 1, 50], \"width\": 300, \"height\": 200}\n"
    " ],\n"
    " \"areas\": {\"water*\": 12},\n"
    " \"collision_only\": [\"railing*\"],\n"
    " \"offmesh\": [\n"
    "  {\"zone\": \"land\", \"from\": [2, 0, 7], \"to\": [18, 0, 3], \"bidirectional\": true, \"radius\": 0.6,\n"
    "   \"cost\": 2.5, \"area\": 3, \"type\": 7},\n"
    "  {\"zone\": \"lake\", \"from\": [29, 1, 9], \"to\": [21, 0, 1]}\n"
    " ]\n"
    "}\n";

/* (u, v) of p inside triangle t (inclusive)? */
static bool inside(const nm_pack *p, uint32_t t, float u, float v)
{
    const nm_vertex *a = &p->verts[p->tris[t].v[0]], *b = &p->verts[p->tris[t].v[1]], *c = &p->verts[p->tris[t].v[2]];
    double d1 = (b->u - a->u) * (v - a->v) - (b->v - a->v) * (u - a->u);
    double d2 = (c->u - b->u) * (v - b->v) - (c->v - b->v) * (u - b->u);
    double d3 = (a->u - c->u) * (v - c->v) - (a->v - c->v) * (u - c->u);
    return (d1 >= 0 && d2 >= 0 && d3 >= 0) || (d1 <= 0 && d2 <= 0 && d3 <= 0);
}

Test(bake, zone_json_zones_tiers_and_offmesh_links)
{
    nm_pack p;
    nm_error err = {0};
    cr_assert_eq(bake_text(kLevel, kZones, true, 2, &p, &err), NM_OK, "%s", err.msg);
    /* Zone table: land, its two tiers, lake; ids by position unless given. */
    cr_assert_eq(p.zone_count, 4);
    const char *names[] = {"land", "land_f2", "land_f3", "lake"};
    uint16_t ids[] = {1, 2, 40, 9};
    for (int i = 0; i < 4; i++) {
        cr_assert_str_eq(p.zones[i].name, names[i]);
        cr_assert_eq(p.zones[i].id, ids[i], "zone %d id %u", i, p.zones[i].id);
    }
    const nm_zone *land = &p.zones[0], *f2 = &p.zones[1], *f3 = &p.zones[2], *lake = &p.zones[3];
    cr_assert_eq(land->first_tri, 0);
    cr_assert_eq(land->tri_count, 4);
    cr_assert_float_eq(land->floor_y, 0.5f, 0);
    cr_assert_eq(f2->flags, NM_ZONE_FLAG_TIER);
    cr_assert_eq(f2->tri_count, 0);
    cr_assert_eq(f2->component_count, 1, "a tier zone names its parent id");
    cr_assert_eq(f3->component_count, 1);
    cr_assert_float_eq(f2->floor_y, 6.0f, 0);
    cr_assert(f3->floor_y < NM_kFloorYValidMin);
    float t2[4] = {2, 1, 2, 3}, t3[4] = {1, 0, 1, 0};
    for (int k = 0; k < 4; k++) {
        cr_assert_float_eq(f2->t[k], t2[k], 0);
        cr_assert_float_eq(f3->t[k], t3[k], 0);
    }
    cr_assert_float_eq(f2->width, land->width, 0, "tier size defaults to the parent's");
    cr_assert_eq(lake->first_tri, 4);
    cr_assert_eq(lake->tri_count, 2, "the water quad is the lake (unclaimed group)");
    cr_assert_float_eq(lake->width, 300, 0);
    cr_assert_float_eq(lake->height, 200, 0);
    /* Lake transform: u = x + 100, v = 50 - z. */
    const nm_vertex *lv = &p.verts[p.tris[4].v[0]];
    cr_assert(lv->u >= 120 && lv->u <= 130 && lv->v >= 40 && lv->v <= 50, "lake vertex (%g, %g)", lv->u, lv->v);
    cr_assert_eq(p.surfaces[4].area, 12);
    /* Links never cross zones: land 3 adjacencies, lake 1. */
    cr_assert_eq(p.link_count, 8);
    expect_pack_invariants(&p);

    cr_assert_eq(p.offmesh_count, 2);
    cr_assert_eq(p.boml_version, 2);
    const nm_offmesh *o = &p.offmesh[0];
    cr_assert_eq(o->zone_id, 1);
    cr_assert_eq(o->kind, 0);
    cr_assert_eq(o->bidirectional, 1);
    cr_assert_eq(o->dir_ok, 3);
    cr_assert_eq(o->area, 3);
    cr_assert_eq(o->link_type, 7);
    cr_assert_float_eq(o->radius, 0.6f, 0);
    cr_assert_float_eq(o->cost_modifier, 2.5f, 0);
    cr_assert_float_eq(o->pts[0][0], 1.5f, 0);
    cr_assert_float_eq(o->pts[0][1], -5.25f, 0);
    cr_assert_float_eq(o->pts[1][0], 13.5f, 0);
    cr_assert_float_eq(o->pts[1][1], -2.25f, 0);
    for (int k = 0; k < 3; k++) {
        cr_assert_float_eq(o->pts[2][k], o->pts[0][k], 0);
        cr_assert_float_eq(o->pts[3][k], o->pts[1][k], 0);
    }
    cr_assert_lt(o->start_tri, 4);
    cr_assert(inside(&p, o->start_tri, 1.5f, -5.25f), "start triangle %u holds the start", o->start_tri);
    cr_assert(inside(&p, o->end_tri, 13.5f, -2.25f), "end triangle %u holds the end", o->end_tri);
    const nm_offmesh *o2 = &p.offmesh[1];
    cr_assert_eq(o2->zone_id, 9);
    cr_assert_eq(o2->dir_ok, 1);
    cr_assert_eq(o2->bidirectional, 0);
    cr_assert_float_eq(o2->radius, 0.5f, 0, "radius defaults to the agent's");
    cr_assert_float_eq(o2->cost_modifier, 1.0f, 0);
    cr_assert(o2->start_tri >= 4 && o2->end_tri >= 4, "lake link ends are lake triangles");
    cr_assert(inside(&p, o2->start_tri, 129, 41) && inside(&p, o2->end_tri, 121, 49));
    cr_assert_float_eq(o2->pts[0][2], 1.0f, 0);

    /* Round trip through the file: whole load, then zone-scoped loads. */
    char *dir = tmp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/base.nav.gz", dir);
    cr_assert_eq(nm_pack_save(&p, NULL, path, &err), NM_OK, "%s", err.msg);
    nm_pack q;
    nm_pack_load_opts lo = {0};
    cr_assert_eq(nm_pack_load(path, &lo, &q, &err), NM_OK, "%s", err.msg);
    expect_same_pack(&p, &q);
    nm_pack_free(&q);
    lo.zone = "lake";
    cr_assert_eq(nm_pack_load(path, &lo, &q, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(q.tri_count, 2);
    cr_assert_eq(q.link_count, 2);
    cr_assert_eq(q.offmesh_count, 1);
    cr_assert_eq(q.offmesh[0].start_tri, o2->start_tri - 4, "BOML ids rebased to the zone");
    nm_pack_free(&q);
    lo.zone = "land";
    cr_assert_eq(nm_pack_load(path, &lo, &q, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(q.tri_count, 4);
    cr_assert_eq(q.zone_count, 3, "land and its two tiers");
    nm_pack_free(&q);
    tmp_remove(dir);
    free(dir);
    nm_pack_free(&p);
}

static void expect_config_error(const char *json, const char *want)
{
    nm_bake_config c;
    nm_error err = {0};
    int rc = nm_bake_config_parse(json, strlen(json), "zone.json", "demo", &c, &err);
    cr_assert_neq(rc, NM_OK, "accepted: %s", json);
    cr_assert(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    cr_assert_eq(c.zone_count, 0);
}

Test(bake, zone_json_errors_name_the_key)
{
    expect_config_error("{\"zones\": [{\"name\": \"a\"}], \"offmesh\": [{\"zone\": \"b\", \"from\": [0,0,0], \"to\": [1,0,0]}]}",
                        "zone.json: offmesh[0].zone: unknown zone 'b'");
    expect_config_error("{\"zones\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}", "duplicate zone name 'a'");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"tiers\": [{\"name\": \"a\"}]}]}", "duplicate zone name 'a'");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"id\": 2}, {\"name\": \"b\"}]}", "duplicate zone id 2");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"transform\": [1, \"x\", 1, 0]}]}", "zones[0].transform[1]: must be a number");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"transform\": [1, 0, 1]}]}", "zones[0].transform: must be an array of 4 numbers");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"transform\": [1, 0, 1e999, 0]}]}", "zones[0].transform[2]: must be a finite number");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"tiers\": [{\"name\": \"t\", \"floor_y\": \"high\"}]}]}", "zones[0].tiers[0].floor_y: must be a number");
    expect_config_error("{\"zones\": [{\"id\": 3}]}", "zones[0].name: missing");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"id\": 70000}]}", "zones[0].id: must be an integer in 0..65535");
    expect_config_error("{\"zones\": [{\"name\": \"a\", \"grups\": []}]}", "zones[0].grups: unknown key");
    expect_config_error("{\"areas\": {\"water\": 40}}", "areas.water: must be an integer in 0..31");
    expect_config_error("{\"areas\": [1]}", "areas: must be an object");
    expect_config_error("{\"collision_only\": \"railing\"}", "collision_only: must be an array of strings");
    expect_config_error("{\"agent\": {\"height\": 0}}", "agent.height: must be > 0");
    expect_config_error("{\"agent\": {\"slope_deg\": 90}}", "agent.slope_deg");
    expect_config_error("{\"offmesh\": [{\"from\": [0,0], \"to\": [1,0,0]}]}", "offmesh[0].from: must be an array of 3 numbers");
    expect_config_error("{\"offmesh\": [{\"from\": [0,0,0], \"to\": [1,0,0], \"bidirectional\": 1}]}", "offmesh[0].bidirectional");
    expect_config_error("{\"zones\": []}", "zones: must be a non-empty array");
    expect_config_error("{\"zones\": [1,]}", "zone.json:1: not valid JSON");
    expect_config_error("[]", "must be a JSON object");
}

Test(bake, zone_json_accepts_zero_scale_notes_and_defaults)
{
    const char *json = "{\"_comment\": \"x\", \"zones\": [{\"name\": \"a\", \"transform\": [0, 0, 0, 0], \"description\": \"d\"}],"
                       " \"offmesh\": [{\"from\": [0,0,0], \"to\": [1,0,0]}]}";
    nm_bake_config c;
    nm_error err = {0};
    cr_assert_eq(nm_bake_config_parse(json, strlen(json), "zone.json", "demo", &c, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(c.zone_count, 1);
    cr_assert_float_eq(c.zones[0].t[0], 0.0f, 0);
    cr_assert_eq(c.offmesh[0].zone, 0, "the only zone is the default for links");
    cr_assert_float_eq(c.agent.height, 2.1, 1e-12);
    cr_assert_float_eq(c.agent.radius, 0.41, 1e-12);
    cr_assert_float_eq(c.agent.climb, 0.5, 1e-12);
    cr_assert_float_eq(c.agent.slope_deg, 45.0, 1e-12);
    nm_bake_config_free(&c);
    /* No "zones": one zone named after the level. */
    cr_assert_eq(nm_bake_config_parse("{}", 2, "zone.json", "level7", &c, &err), NM_OK, "%s", err.msg);
    cr_assert_str_eq(c.zones[0].name, "level7");
    cr_assert_float_eq(c.zones[0].t[0], 0.75f, 0);
    cr_assert_float_eq(c.zones[0].t[2], 0.75f, 0);
    nm_bake_config_free(&c);
    cr_assert(nm_bake_pattern_match("water*", "water_pool"));
    cr_assert(nm_bake_pattern_match("water*", "water"));
    cr_assert(!nm_bake_pattern_match("water", "water_pool"));
    cr_assert(!nm_bake_pattern_match("water*", "the_water"));
}

static void serialize(nm_pack *p, int workers, nm_buf *out)
{
    nm_error err = {0};
    nm_pack_write_opts w = {.workers = workers, .tri_chunk = 2, .vert_chunk = 3, .link_chunk = 4};
    cr_assert_eq(nm_pack_serialize(p, &w, out, &err), NM_OK, "%s", err.msg);
}

Test(bake, same_input_gives_the_same_bytes_for_any_worker_count)
{
    nm_buf bytes[3] = {{0}};
    int workers[3] = {1, 4, 1};
    for (int i = 0; i < 3; i++) {
        nm_pack p;
        nm_error err = {0};
        cr_assert_eq(bake_text(kLevel, kZones, true, workers[i], &p, &err), NM_OK, "%s", err.msg);
        serialize(&p, workers[i], &bytes[i]);
        nm_pack_free(&p);
    }
    for (int i = 1; i < 3; i++) {
        cr_assert_eq(bytes[i].size, bytes[0].size);
        cr_assert_eq(memcmp(bytes[i].p, bytes[0].p, bytes[0].size), 0, "run %d differs", i);
    }
    for (int i = 0; i < 3; i++) nm_buf_free(&bytes[i]);
}

/* Every allocation of the bake can fail: the answer is then NM_ERR_NOMEM with a message, never a
 * crash (and, under ASan, never a leak). Runs the as-is and the Recast path on one worker, since
 * the allocation counter is not thread-safe. */
static void fail_each_allocation(bool as_is)
{
    const char *obj = as_is ? kLevel
                            : "v 0 0 0\nv 10 0 0\nv 10 0 10\nv 0 0 10\nv 20 0 0\nv 20 0 10\n"
                              "g ground\nf 1 4 3 2\ng water\nf 2 3 6 5\n";
    int failures = 0;
    for (size_t n = 1; n < 100000; n++) {
        nm_pack p;
        nm_error err = {0};
        nm_alloc_fail_after(n);
        int rc = bake_text(obj, as_is ? kZones : kLevelZone, as_is, 1, &p, &err);
        size_t count = nm_alloc_fail_after(0);
        if (rc == NM_OK) {
            nm_pack_free(&p);
            cr_assert_lt(count, n, "allocation %zu failed but the bake succeeded", n);
            break;
        }
        cr_assert_eq(rc, NM_ERR_NOMEM, "allocation %zu: rc %d (%s)", n, rc, err.msg);
        cr_assert_neq(err.msg[0], 0, "allocation %zu: no message", n);
        failures++;
    }
    cr_assert_gt(failures, 10, "the bake allocates");
}

Test(bake, every_failed_allocation_is_reported_as_is) { fail_each_allocation(true); }

Test(bake, every_failed_allocation_is_reported_recast)
{
    if (!nm_rc_available()) cr_skip_test("built without Recast");
    fail_each_allocation(false);
}

Test(bake, scale_multiplies_obj_coordinates_before_the_transform)
{
    nm_obj obj;
    nm_bake_config cfg;
    nm_error err = {0};
    cr_assert_eq(nm_obj_parse(kLevel, strlen(kLevel), "t.obj", &obj, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bake_config_parse(kLevelZone, strlen(kLevelZone), "zone.json", "demo", &cfg, &err), NM_OK, "%s", err.msg);
    nm_pack p[2];
    double scale[2] = {1.0, 0.12};
    for (int i = 0; i < 2; i++) {
        nm_bake_opts o = {.obj = &obj, .cfg = &cfg, .scale = scale[i], .walkable_as_is = true, .workers = 1};
        cr_assert_eq(nm_bake_main_pack(&o, &p[i], &err), NM_OK, "%s", err.msg);
    }
    cr_assert_eq(p[0].vert_count, p[1].vert_count);
    for (uint32_t v = 0; v < p[0].vert_count; v++) {
        cr_assert_float_eq(p[1].verts[v].u, 0.75f * ((p[0].verts[v].u / 0.75f) * 0.12f), 1e-4);
        cr_assert_float_eq(p[1].verts[v].v, p[0].verts[v].v * 0.12f, 1e-4);
    }
    cr_assert_float_eq(p[1].zones[0].width, 22.5f * 0.12f, 1e-4);
    nm_pack_free(&p[0]);
    nm_pack_free(&p[1]);
    nm_bake_opts bad = {.obj = &obj, .cfg = &cfg, .scale = -1, .walkable_as_is = true};
    cr_assert_eq(nm_bake_main_pack(&bad, &p[0], &err), NM_ERR_ARG);
    cr_assert(strstr(err.msg, "--scale") != NULL, "%s", err.msg);
    nm_bake_config_free(&cfg);
    nm_obj_free(&obj);
}
