/* test_audit_levels.c — ours against Detour, with the audit of every route ours returns, on levels
 * nobody here made (issue 12): every shared level (NM_SHARED_DATA; skipped cleanly without it),
 * the bundled resources/levels, the demo town (baked as tools/demo.sh does) and every scene of
 * resources/scenes, one case per zone. Each level is baked by the navbake command the default way
 * (Recast) into a temporary folder; legs are random points of Detour's walkable polygons (fixed
 * seeds).
 *
 * The expectations are the table k_levels below: per level, the most unexplained disagreements
 * and audit failures allowed, with the reason (tighten them when a fix lands). NM_AUDIT_REPORT=1
 * prints every leg that disagrees and the current counts of every level, whatever the expectations. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "../ledges/ledges_util.h"

typedef enum { SRC_SHARED, SRC_BUNDLED, SRC_DEMO, SRC_DEMO_DEFAULT, SRC_SCENE } level_src;

typedef struct level_case {
    const char *name;        /* test name and folder */
    level_src src;
    const char *obj;         /* file in the folder */
    double scale;
    const char *zone;
    uint32_t legs;
    uint64_t seed;
    uint32_t max_unexplained;
    uint32_t max_audit_failures;
    const char *reason;      /* why the counts are not 0 yet */
    double px_per_m;         /* > 0: a zone config with this transform (real zones: 0.70-0.75) */
} level_case;

/* THE EXPECTATIONS (issue 12). Counts measured after the default bake's fixes (erosion strip given
 * back, 0.1 m Recast cells, detail-mesh heights: tools/navbake/recast_shim.cpp) with the legs and
 * seeds here; the reasons are what the disagreeing legs show (NM_AUDIT_REPORT=1). Main at deb8fcb
 * had: navtest 2/2, dungeon 4/2, undulating 14/19, house 2/0, bridges 1/0, pandora 1/1. Before
 * decks kept their clearance over their own region's lower level (navmesh/bake FWAL, the deck
 * cut): navtest 5/1, house 4/0, demo-town-default 10/0. The ours_longer legs of navtest (2), house (4),
 * dungeon (1) and bundled navtest (2) are channel_longer since the harness compares with our own
 * baseline (tools/navaudit/README.md "channel_longer"): navtest 3 -> 1, house 4 -> 0, dungeon 1 -> 0,
 * bundled navtest 2 -> 0. The seam bridge's riser gate (navmesh/bake/README.md "A low rise joined by
 * the seam bridge") took navtest's last one, an audit failure too (leg 3 walked off a 2.84 m box
 * through a second box's corner): navtest 1/1 -> 0/0; it also gave bridges 6/2 -> 6/1 and pandora
 * 4/2 -> 0/0 (their rows belong to another change). h-real: godot-navlevel 2/0 -> 0/0 (the
 * goal_snapped class), navcat-bridges 1/0 -> 0/0 (the bake's crack across a riser, the audit's
 * joint steps, a climb on one grid step); every other row unchanged. h-solid: the seed-2 cases
 * (bridges 45 legs 10/2 -> 10/0, pandora 15 legs 1/1 -> 0/0) and scene-riser-corners (0/1 -> 0/0):
 * step bits on a riser crack's made-up cells, made-up cells under a thin wall kept out of Core, a
 * riser crack's corner levelled (navmesh/bake/README.md "Seed 2"); every other row unchanged. */
static const level_case k_levels[] = {
    /* name, source, OBJ, scale, zone, legs, seed, max unexplained, max audit failures, reason */
    {"recast-navtest", SRC_SHARED, "nav_test.obj", 1.0, "nav_test", 40, 1, 0, 0, ""},
    /* godot-navlevel: legs 22 and 36 (ours_only / other_layer until the goal_snapped class) end
     * on a surface the start does not reach (the 30° ramp under the walkway; the ground below the
     * 45.6° ramp Recast does not walk); Detour partial, and ours too walks only to the reach set's
     * edge and joins the goal 2.25 / 2.76 px away (收尾检查 1, tools/navaudit/README.md) */
    {"godot-navlevel", SRC_SHARED, "level_mesh.obj", 1.0, "level_mesh", 40, 1, 0, 0, ""},
    {"recast-dungeon", SRC_SHARED, "dungeon.obj", 1.0, "dungeon", 40, 1, 0, 0, ""},
    {"recast-undulating", SRC_SHARED, "undulating.obj", 1.0, "undulating", 20, 1, 0, 0, ""},
    {"dotrecast-house", SRC_SHARED, "house.obj", 1.0, "house", 40, 1, 0, 0, ""},
    /* navcat-bridges: leg 20 climbed 0.58 m onto the steep grass block's side at (-6.8, -2.5) m
     * over rim heights in the crack across the rise (navmesh/bake/README.md "A crack across a
     * riser"); the crack's cells now take their own side's height, and what is left is one
     * diagonal grid step RiseOk passes on the level's heights (1.00 -> 1.39 m; the face between the
     * centres is 0.54-0.58 m: tools/navaudit/README.md "A climb on one grid step"). Steps down
     * Detour's 0.5 m climb refuses: 7 (the middle island's 0.7 m side); leg 1 is channel_longer.
     * Since the steps are measured under the route's line (h-climb), 9, 27, 32 and 20 are
     * recast_radius (their 0.58 m step down the grass block's side was the reach's foot on the
     * block's top 0.13 m beside the line; 20's climb is the one grid step), and so is 18: its
     * 0.70 m step down was the same artefact (the island's top 0.13 m beside the line in the
     * water), and its foot at (-2.17, 0.30, -3.60) m is under a "low ceiling" only in Recast's
     * 0.205 m column (the island's bevelled lip 0.13-0.21 m away; nothing over the foot itself):
     * tools/navaudit/README.md, Eighth session (h-climb) */
    {"navcat-bridges", SRC_SHARED, "bridges.obj", 1.0, "bridges", 40, 1, 0, 0, ""},
    {"sauer-pandora", SRC_SHARED, "pandora.obj", 0.12, "pandora", 40, 1, 0, 0, ""},
    /* seed 2 (the sample of tools/audit_levels.sh 60 2), up to the legs the bake fixed: bridges 35
     * and 44 went up the middle island's 0.7 m south face between a riser crack's made-up cells
     * (the pull's chord, no step bits there), pandora 14 into a hollow pillar through a crack of
     * made-up cells CloseCracks closed under its face; both audit `solid` (navmesh/bake/README.md
     * "Seed 2: ..."). navcat-bridges seed 2: legs 24, 28, 29 are recast_radius (within the agent's
     * radius of the middle island's west face and of block-grass-curve.001's foot, where the agent
     * fits across: 2.15 m and 1.01 m). Since the steps are measured under the route's line and a
     * region Recast dropped under its minimum area is its loss (h-climb), 6, 8, 33 (and 34, whose
     * 0.58 m step down was the same reach artefact) are recast_radius: 0.13 m beside the grass
     * block's face, 0.99 m free across. h-slat: 5 -> 0. 20, 35, 39, 43, 44 (ours_only) stepped
     * from the water onto platform-ramp.005's north end at x 2.14-2.17 m, 0.56 m up: the grid's
     * cell there sits in a slat gap past the ramp's end and took the lower slat's 0.79 m from
     * Recast's mesh corner beside it (RiseOk passed 0.50 m). That corner is on the mesh's boundary
     * and now takes the higher west slat's 0.86 m beside it (tools/navbake/recast_shim.cpp
     * snap_heights; navmesh/bake/README.md "Eighth session: the slat gap"): the climb is refused
     * there and the routes go up the ramp's east part; all five are explained now. */
    {"navcat-bridges-seed2", SRC_SHARED, "navcat-bridges/bridges.obj", 1.0, "bridges", 45, 2, 0, 0, ""},
    {"sauer-pandora-seed2", SRC_SHARED, "sauer-pandora/pandora.obj", 0.12, "pandora", 15, 2, 0, 0, ""},
    /* undulating's legs 24 and 25 of seed 2 (audit wrong_height, 2 -> 0): routes on a second span
     * 1.3-1.5 m under the 41° slope, made by Rasterize's clamped samples of Recast's detail-mesh
     * slivers; the Recast path now splits them (tools/navbake/sliver.h) */
    {"recast-undulating-seed2", SRC_SHARED, "recast-undulating/undulating.obj", 1.0, "undulating", 26, 2, 0, 0, ""},
    /* dungeon's leg 35 of seed 2 (ours_only until start_snapped): the start in a closed room, ours
     * joined to a start anchor 7 px away behind the 4.9 m door slab (最终判定's 8 px, no radius for
     * a declared start deck's anchor: tools/navaudit/README.md "start_snapped") */
    {"recast-dungeon-seed2", SRC_SHARED, "recast-dungeon/dungeon.obj", 1.0, "dungeon", 36, 2, 0, 0, ""},
    /* navcat-bridges at a real zone's scale (0.70 px/m, navmesh/bake/README.md "A riser crack's
     * corner"): 4 audit failures (solid) until a made-up cell's step with a solid standing on it
     * was refused (twenty-seventh session): a route left the block's top (1.0 m) west onto a
     * ramp's side at 1.64 m through a made-up cell at 1.35 m */
    {"navcat-bridges-070", SRC_SHARED, "navcat-bridges/bridges.obj", 1.0, "bridges", 150, 13, 0, 0, "", 0.70},
    /* at 0.74 px/m: 2 audit failures (solid) until a raised made-up cell's step with a solid on
     * it was refused too (twenty-eighth session): three records made a stair of 0.2-0.33 m steps
     * up the middle island's chamfered 0.7 m corner. The 6 ours_only legs go up that corner where
     * Recast's regions leave it (body does not fit, low ceiling), Detour partial. */
    {"navcat-bridges-074", SRC_SHARED, "navcat-bridges/bridges.obj", 1.0, "bridges", 150, 13, 6,
     0, "ours_only up the middle island's corner", 0.74},
    /* at 0.72 px/m: leg 56 ends by a 9 m fall onto a goal 4 cm under the ledge (the article never
     * makes the last point a landing); an audit failure (layer) until the audit judged such a fall
     * as a drop (tools/navaudit README, "A fall onto the goal") */
    {"recast-navtest-072", SRC_SHARED, "recast-navtest/nav_test.obj", 1.0, "nav_test", 150, 13, 0, 0, "", 0.72},
    /* at 0.70 px/m, seed 29: leg 79 goes up a ramp, drops off its end and walks back under it to
     * the goal; the endpoint splice's collinear step took the landing out (the chain turns back
     * along its own line) and the route's heights stayed on the ramp: an audit failure (layer)
     * until only a point between its neighbours was taken as collinear (twenty-eighth session) */
    {"recast-navtest-070-seed29", SRC_SHARED, "recast-navtest/nav_test.obj", 1.0, "nav_test", 150, 29, 0, 0, "",
     0.70},
    /* at 0.71 px/m, seed 41: leg 46 read as a body in a stair's riser (solid) until the audit
     * listed the surfaces under a point once per height: the floor's many small triangles filled
     * the list and cut off the step's top (tools/navaudit README, rule 5) */
    {"sauer-pandora-071-seed41", SRC_SHARED, "sauer-pandora/pandora.obj", 0.12, "pandora", 150, 41, 0, 0, "", 0.71},
    /* at 0.71 px/m, seed 53: legs 14 and 75 stood on a span 0.88 m under a 42° slope (audit
     * wrong_height), a clamped sample of a thin walkable-mesh triangle that is no sliver by the
     * ratio, until the Recast path also cut triangles whose clamped samples land more than
     * kStepUp off (twenty-ninth session, navmesh/bake/README.md "Thin triangles on a steep slope") */
    {"recast-undulating-071-seed53", SRC_SHARED, "recast-undulating/undulating.obj", 1.0, "undulating", 150, 53, 0, 0, "",
     0.71},
    {"bundled-godot-navlevel", SRC_BUNDLED, "godot-navlevel/level_mesh.obj", 1.0, "level_mesh", 20, 2, 0, 0, ""},
    {"bundled-recast-navtest", SRC_BUNDLED, "recast-navtest/nav_test.obj", 1.0, "nav_test", 20, 2, 0, 0, ""},
    {"demo-town", SRC_DEMO, "level.obj", 1.0, "demo", 4, 7, 0, 0, ""},
    /* the demo town baked the default way (Recast): 10 of these legs crossed the river 1.3-2.2x
     * Detour's length round by the low bridge, the high bridge's deck being cut at its ramps and
     * river banks (FWAL kept the ground's ends under it as walls of its region) */
    {"demo-town-default", SRC_DEMO_DEFAULT, "level.obj", 1.0, "demo", 40, 3, 0, 0, ""},
    /* the scenes of resources/scenes baked the default way (Recast) with their zone.json, one
     * case per zone, 20 legs seed 1 (as navaudit --random 20 --seed 1). Before the bake's rims
     * under a solid and steep seam bridges (navmesh/bake README, issue 12): bridge 1 and
     * bridge_ramps 2 audit failures. Their ours_longer legs (bump_dip 1, deck_over_river 1, ledges 1,
     * regions 2, stairs 5, thin_walls 2, two_zones 1 + 1: ends near a wall going out to the topology
     * channel and back, corners kept 2.2-2.5 px off) are all channel_longer (tools/navaudit/README.md). */
    {"scene-bridge", SRC_SCENE, "bridge/scene.json", 1.0, "bridge", 20, 1, 0, 0, ""},
    {"scene-bridge-ramps", SRC_SCENE, "bridge_ramps/scene.json", 1.0, "bridge_ramps", 20, 1, 0, 0, ""},
    /* scene-building was 0/1 until the take-off floor's underside counted (occluder dropBlocked,
     * issue 12): leg 11 walked down the stair to 3.67 m (the zone mesh blending the stair into the
     * 4 m slab at the stairwell's south edge) and dropped to the ground under the slab at (33.5,
     * 23.8) m; the slab's underside (3.7 m) lay between that height and the floor the take-off
     * stands on (4.0 m). Now the route walks down the stair. */
    {"scene-building", SRC_SCENE, "building/scene.json", 1.0, "building", 20, 1, 0, 0, ""},
    {"scene-bump-dip", SRC_SCENE, "bump_dip/scene.json", 1.0, "bump_dip", 20, 1, 0, 0, ""},
    {"scene-corridor", SRC_SCENE, "corridor/scene.json", 1.0, "corridor", 20, 1, 0, 0, ""},
    {"scene-cracks-holes", SRC_SCENE, "cracks_holes/scene.json", 1.0, "cracks_holes", 20, 1, 0, 0, ""},
    {"scene-deck-over-river", SRC_SCENE, "deck_over_river/scene.json", 1.0, "deck_over_river", 20, 1, 0, 0, ""},
    {"scene-doorways", SRC_SCENE, "doorways/scene.json", 1.0, "doorways", 20, 1, 0, 0, ""},
    {"scene-facade", SRC_SCENE, "facade/scene.json", 1.0, "facade", 20, 1, 0, 0, ""},
    {"scene-island", SRC_SCENE, "island/scene.json", 1.0, "island", 20, 1, 0, 0, ""},
    {"scene-ledges", SRC_SCENE, "ledges/scene.json", 1.0, "ledges", 20, 1, 0, 0, ""},
    {"scene-low-platforms", SRC_SCENE, "low_platforms/scene.json", 1.0, "low_platforms", 20, 1, 0, 0, ""},
    {"scene-movingai-arena", SRC_SCENE, "movingai/arena.map", 1.0, "arena", 20, 1, 0, 0, ""},
    {"scene-platform-drop", SRC_SCENE, "platform_drop/scene.json", 1.0, "platform_drop", 20, 1, 0, 0, ""},
    {"scene-riser-corners", SRC_SCENE, "riser_corners/scene.json", 1.0, "riser_corners", 20, 1, 0, 0, ""},
    {"scene-regions", SRC_SCENE, "regions/scene.json", 1.0, "regions", 20, 1, 0, 0, ""},
    {"scene-solids", SRC_SCENE, "solids/scene.json", 1.0, "solids", 20, 1, 0, 0, ""},
    {"scene-stairs", SRC_SCENE, "stairs/scene.json", 1.0, "stairs", 20, 1, 0, 0, ""},
    {"scene-stairwell", SRC_SCENE, "stairwell/scene.json", 1.0, "stairwell", 20, 1, 0, 0, ""},
    {"scene-thin-walls", SRC_SCENE, "thin_walls/scene.json", 1.0, "thin_walls", 20, 1, 0, 0, ""},
    {"scene-two-zones-east", SRC_SCENE, "two_zones/scene.json", 1.0, "east", 20, 1, 0, 0, ""},
    {"scene-two-zones-west", SRC_SCENE, "two_zones/scene.json", 1.0, "west", 20, 1, 0, 0, ""},
    {"scene-water-bridge", SRC_SCENE, "water_bridge/scene.json", 1.0, "water_bridge", 20, 1, 0, 0, ""},
};

static const level_case *find_case(const char *name)
{
    for (size_t i = 0; i < sizeof k_levels / sizeof k_levels[0]; i++)
        if (!strcmp(k_levels[i].name, name)) return &k_levels[i];
    cr_assert_fail("no level case %s", name);
    return NULL;
}

static bool report_mode(void)
{
    const char *r = getenv("NM_AUDIT_REPORT");
    return r && *r && strcmp(r, "0") != 0;
}

static void run_case(const char *name)
{
    const level_case *c = find_case(name);
    char src_dir[1200], obj[1400], cfg[1400] = "", dir[256];
    const char *data = getenv("NM_SHARED_DATA");
    if (c->src == SRC_SHARED) {
        /* the OBJ in the level's folder, or "FOLDER/FILE" (a second case of one level) */
        if (strchr(c->obj, '/'))
            snprintf(src_dir, sizeof src_dir, "%s/levels", data ? data : "");
        else
            snprintf(src_dir, sizeof src_dir, "%s/levels/%s", data ? data : "", c->name);
        snprintf(obj, sizeof obj, "%s/%s", src_dir, c->obj);
        if (!data || access(obj, R_OK) != 0) {
            cr_skip_test("no shared level %s (NM_SHARED_DATA unset or ../shared absent)", obj);
            return;
        }
    } else if (c->src == SRC_BUNDLED) {
        snprintf(obj, sizeof obj, "%s/resources/levels/%s", lu_env("NM_SOURCE_ROOT", "."), c->obj);
    }
    if (!lu_tools_present()) {
        cr_skip_test("scenegen / navbake not built");
        return;
    }
    lu_mkdtemp(dir, sizeof dir);
    char extra[64];
    snprintf(extra, sizeof extra, "--scale %.17g", c->scale);
    if (c->src == SRC_DEMO || c->src == SRC_DEMO_DEFAULT) {
        /* as tools/demo.sh: scenegen, then navbake --walkable-as-is with the scene's zone.json
         * (or the default way, as a user's level) */
        lu_scenegen("resources/demo/scene.json", dir);
        snprintf(obj, sizeof obj, "%s/src/level.obj", dir);
        snprintf(cfg, sizeof cfg, "%s/src/zone.json", dir);
        lu_navbake(obj, cfg, dir, c->src == SRC_DEMO ? "--walkable-as-is" : "");
    } else if (c->src == SRC_SCENE) {
        /* a scene of resources/scenes (a Moving AI map through --movingai), baked the default
         * way with its zone.json, as a user's level */
        const char *rel = c->obj;
        size_t L = strlen(rel);
        if (L > 4 && !strcmp(rel + L - 4, ".map")) {
            char sg[600], cmd[4096];
            lu_tool(sg, sizeof sg, "scenegen");
            snprintf(cmd, sizeof cmd, "'%s' --movingai '%s/resources/scenes/%s' --out '%s/src' > /dev/null", sg,
                     lu_env("NM_SOURCE_ROOT", "."), rel, dir);
            lu_run(cmd);
        } else {
            char scene[400];
            snprintf(scene, sizeof scene, "resources/scenes/%s", rel);
            lu_scenegen(scene, dir);
        }
        snprintf(obj, sizeof obj, "%s/src/level.obj", dir);
        snprintf(cfg, sizeof cfg, "%s/src/zone.json", dir);
        lu_navbake(obj, cfg, dir, "");
    } else if (c->px_per_m > 0) { /* a zone config with the case's transform */
        snprintf(cfg, sizeof cfg, "%s/zone.json", dir);
        FILE *f = fopen(cfg, "w");
        cr_assert(f, "%s: cannot write", cfg);
        fprintf(f, "{\"zones\":[{\"name\":\"%s\",\"transform\":[%.17g,0,%.17g,0]}]}\n", c->zone,
                c->px_per_m, c->px_per_m);
        fclose(f);
        lu_navbake(obj, cfg, dir, extra);
    } else {
        lu_navbake(obj, NULL, dir, extra);
    }
    char pack[400];
    snprintf(pack, sizeof pack, "%s/base.nav.gz", dir);
    nm_obj o;
    nm_error err = {0};
    cr_assert_eq(nm_obj_load(obj, &o, &err), NM_OK, "%s", err.msg);
    nm_bake_config bc;
    bool have_cfg = cfg[0] != 0;
    if (have_cfg) cr_assert_eq(nm_bake_config_load(cfg, c->zone, &bc, &err), NM_OK, "%s", err.msg);
    nm_cmp_opts opts = {.obj = &o, .cfg = have_cfg ? &bc : NULL, .scale = c->scale, .pack_path = pack,
                        .zone = c->zone, .legs = c->legs, .seed = c->seed};
    nm_cmp_leg *legs = NULL;
    nm_cmp_summary s;
    int rc = nm_cmp_run(&opts, &legs, &s, &err);
    cr_assert_eq(rc, NM_OK, "%s: %s", c->name, err.msg);
    cr_assert_eq(s.legs, c->legs);
    /* every disagreement and every audit failure, with coordinates */
    char line[2400];
    for (uint32_t i = 0; i < s.legs; i++) {
        const nm_cmp_leg *l = &legs[i];
        bool bad = !nm_cmp_class_explained(l->cls) || (l->ours_ok && l->audit.kind != NM_AUDIT_OK);
        if (!bad && !(report_mode() && l->cls != NM_CMP_AGREE)) continue;
        nm_cmp_leg_text(l, line, sizeof line);
        fprintf(stderr, "%s leg %u %s%s\n", c->name, i, bad ? "UNEXPLAINED " : "", line);
    }
    fprintf(stderr, "%s: legs %u, ours ok %u, detour complete %u, audit failures %u (expected <= %u), "
            "unexplained %u (expected <= %u);", c->name, s.legs, s.ours_ok, s.dt_complete, s.audit_failures,
            c->max_audit_failures, s.unexplained, c->max_unexplained);
    for (int k = 0; k < NM_CMP_CLASS_COUNT; k++) fprintf(stderr, " %s %u", nm_cmp_class_name((nm_cmp_class)k), s.by_class[k]);
    fprintf(stderr, "\n");
    /* the comparison must have compared something */
    cr_assert_gt(s.dt_complete + s.ours_ok, 0, "%s: nothing planned", c->name);
    if (!report_mode()) {
        cr_expect_leq(s.audit_failures, c->max_audit_failures, "%s: %u audit failures on ok routes (expected <= %u: %s)",
                      c->name, s.audit_failures, c->max_audit_failures, c->reason);
        cr_expect_leq(s.unexplained, c->max_unexplained, "%s: %u unexplained disagreements with Detour (expected <= %u: %s)",
                      c->name, s.unexplained, c->max_unexplained, c->reason);
    }
    nm_free(legs);
    if (have_cfg) nm_bake_config_free(&bc);
    nm_obj_free(&o);
    lu_rmdir(dir);
}

Test(audit_levels, recast_navtest, .timeout = 300) { run_case("recast-navtest"); }
Test(audit_levels, godot_navlevel, .timeout = 300) { run_case("godot-navlevel"); }
Test(audit_levels, recast_dungeon, .timeout = 300) { run_case("recast-dungeon"); }
Test(audit_levels, recast_undulating, .timeout = 300) { run_case("recast-undulating"); }
Test(audit_levels, dotrecast_house, .timeout = 300) { run_case("dotrecast-house"); }
Test(audit_levels, navcat_bridges, .timeout = 300) { run_case("navcat-bridges"); }
Test(audit_levels, sauer_pandora, .timeout = 300) { run_case("sauer-pandora"); }
Test(audit_levels, navcat_bridges_seed2, .timeout = 300) { run_case("navcat-bridges-seed2"); }
Test(audit_levels, sauer_pandora_seed2, .timeout = 300) { run_case("sauer-pandora-seed2"); }
Test(audit_levels, recast_dungeon_seed2, .timeout = 300) { run_case("recast-dungeon-seed2"); }
Test(audit_levels, navcat_bridges_070, .timeout = 300) { run_case("navcat-bridges-070"); }
Test(audit_levels, navcat_bridges_074, .timeout = 300) { run_case("navcat-bridges-074"); }
Test(audit_levels, recast_navtest_072, .timeout = 300) { run_case("recast-navtest-072"); }
Test(audit_levels, recast_navtest_070_seed29, .timeout = 300) { run_case("recast-navtest-070-seed29"); }
Test(audit_levels, sauer_pandora_071_seed41, .timeout = 300) { run_case("sauer-pandora-071-seed41"); }
Test(audit_levels, recast_undulating_071_seed53, .timeout = 300) { run_case("recast-undulating-071-seed53"); }
Test(audit_levels, recast_undulating_seed2, .timeout = 300) { run_case("recast-undulating-seed2"); }
Test(audit_levels, bundled_godot_navlevel, .timeout = 300) { run_case("bundled-godot-navlevel"); }
Test(audit_levels, bundled_recast_navtest, .timeout = 300) { run_case("bundled-recast-navtest"); }
Test(audit_levels, demo_town, .timeout = 300) { run_case("demo-town"); }
Test(audit_levels, demo_town_default, .timeout = 300) { run_case("demo-town-default"); }
Test(audit_levels, scene_bridge, .timeout = 300) { run_case("scene-bridge"); }
Test(audit_levels, scene_bridge_ramps, .timeout = 300) { run_case("scene-bridge-ramps"); }
Test(audit_levels, scene_building, .timeout = 300) { run_case("scene-building"); }
Test(audit_levels, scene_bump_dip, .timeout = 300) { run_case("scene-bump-dip"); }
Test(audit_levels, scene_corridor, .timeout = 300) { run_case("scene-corridor"); }
Test(audit_levels, scene_cracks_holes, .timeout = 300) { run_case("scene-cracks-holes"); }
Test(audit_levels, scene_deck_over_river, .timeout = 300) { run_case("scene-deck-over-river"); }
Test(audit_levels, scene_doorways, .timeout = 300) { run_case("scene-doorways"); }
Test(audit_levels, scene_facade, .timeout = 300) { run_case("scene-facade"); }
Test(audit_levels, scene_island, .timeout = 300) { run_case("scene-island"); }
Test(audit_levels, scene_ledges, .timeout = 300) { run_case("scene-ledges"); }
Test(audit_levels, scene_low_platforms, .timeout = 300) { run_case("scene-low-platforms"); }
Test(audit_levels, scene_movingai_arena, .timeout = 300) { run_case("scene-movingai-arena"); }
Test(audit_levels, scene_platform_drop, .timeout = 300) { run_case("scene-platform-drop"); }
Test(audit_levels, scene_riser_corners, .timeout = 300) { run_case("scene-riser-corners"); }
Test(audit_levels, scene_regions, .timeout = 300) { run_case("scene-regions"); }
Test(audit_levels, scene_solids, .timeout = 300) { run_case("scene-solids"); }
Test(audit_levels, scene_stairs, .timeout = 300) { run_case("scene-stairs"); }
Test(audit_levels, scene_stairwell, .timeout = 300) { run_case("scene-stairwell"); }
Test(audit_levels, scene_thin_walls, .timeout = 300) { run_case("scene-thin-walls"); }
Test(audit_levels, scene_two_zones_east, .timeout = 300) { run_case("scene-two-zones-east"); }
Test(audit_levels, scene_two_zones_west, .timeout = 300) { run_case("scene-two-zones-west"); }
Test(audit_levels, scene_water_bridge, .timeout = 300) { run_case("scene-water-bridge"); }

/* Plans each leg (px) of a scene baked with navbake's flags (bake: "--walkable-as-is", or NULL for
 * the default Recast path) with the planner and audits every route (the audit of navbench
 * --audit); returns the audit failures, printing each. */
static uint32_t audit_scene_legs(const char *scene, const char *zone, const char *bake, const double (*legs)[4],
                                 uint32_t n)
{
    char dir[256], path[512], obj[600], cfg[600];
    lu_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "resources/scenes/%s/scene.json", scene);
    lu_scenegen(path, dir);
    snprintf(obj, sizeof obj, "%s/src/level.obj", dir);
    snprintf(cfg, sizeof cfg, "%s/src/zone.json", dir);
    lu_navbake(obj, cfg, dir, bake);
    snprintf(path, sizeof path, "%s/base.nav.gz", dir);
    nm_error err = {0};
    nm_obj o;
    nm_bake_config bc;
    nm_pack pack;
    nm_audit_level *lv = NULL;
    nm_pack_load_opts lo = {0};
    cr_assert_eq(nm_obj_load(obj, &o, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_bake_config_load(cfg, zone, &bc, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_pack_load(path, &lo, &pack, &err), NM_OK, "%s", err.msg);
    cr_assert_eq(nm_audit_level_build(&o, &bc, 1.0, &pack, zone, &lv, &err), NM_OK, "%s", err.msg);
    nm_audit_params p = nm_audit_params_default(&bc.agent, nm_audit_px_per_m(lv));
    nm_route_engine e;
    cr_assert_eq(nm_route_engine_open(&e, &pack, path, NULL, 1, &err), NM_OK, "%s", err.msg);
    uint32_t fails = 0;
    for (uint32_t i = 0; i < n; i++) {
        nm_route_request q = nm_route_request_defaults(zone, legs[i][0], legs[i][1], legs[i][2], legs[i][3]);
        nm_route_result r;
        cr_assert_eq(nm_route_plan(&e, &q, &r, &err), NM_OK, "%s", err.msg);
        cr_expect(r.ok, "%s leg %u: %s", scene, i, r.error);
        nm_audit_report ar;
        if (r.ok && nm_audit_result(lv, &r, &p, &ar) == NM_OK && ar.kind != NM_AUDIT_OK) {
            fprintf(stderr, "%s leg %u (%.3f, %.3f) -> (%.3f, %.3f) px: %s\n", scene, i, legs[i][0], legs[i][1],
                    legs[i][2], legs[i][3], ar.msg);
            fails++;
        }
        nm_route_result_free(&r);
    }
    nm_route_engine_close(&e);
    nm_audit_level_free(lv);
    nm_pack_free(&pack);
    nm_bake_config_free(&bc);
    nm_obj_free(&o);
    lu_rmdir(dir);
    return fails;
}

/* Issue 12, large world leg 28 (--random 30 --seed 7): from the top flight of a garage's stairwell
 * (flights stacked in one well, floors 4 and 8 m) the route stepped off the 8 m floor's edge 3 m
 * down onto the flight below, under the flight above, and on down the well (8 -> 5 -> 4 -> 1.25
 * -> 0 m), every step within kClimb: the audit found the body in the flight above (a "layer" or,
 * folded by the drop search, a drop through two floors). RiseOk now refuses a step down deeper
 * than kBumpUp into a column with a surface within the body above the take-off. */
Test(audit_levels, stairwell_routes_do_not_fall_through_the_stacked_flights, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    /* from the top flight (x 24..36 m, y 24..28 m, 8 -> 12 m) near its foot, to the ground
     * outside west, south (by the door) and east; metres x 0.75 = px */
    static const double from[][2] = {{24.75, 26}, {25.5, 26}, {26, 27}, {24.5, 25}, {25, 27.5}, {27, 26}};
    static const double to[][2] = {{10, 55}, {35, 55}, {60, 10}};
    double legs[18][4];
    for (uint32_t i = 0; i < 18; i++) {
        legs[i][0] = 0.75 * from[i / 3][0], legs[i][1] = 0.75 * from[i / 3][1];
        legs[i][2] = 0.75 * to[i % 3][0], legs[i][3] = 0.75 * to[i % 3][1];
    }
    cr_expect_eq(audit_scene_legs("stairwell", "stairwell", "--walkable-as-is", legs, 18), 0u, "stairwell: audit failures (above)");
}

/* Issue 12, large world leg 9 (--random 30 --seed 7): along a 5 m deck over its own ground (the
 * deck's sides are no walls of the region: FWAL's ledge rule) a route went round a pillar's
 * outline (kept as a wall, a solid under the deck: edge_solid) through the deck's rim cells,
 * inside the collision-only 1.1 m railing. The bake now seals a rim span (Dead, off its surface,
 * over the region's own lower level) with collision across it from the fall gate's kFallClimb. */
Test(audit_levels, deck_routes_keep_inside_the_railing_round_the_pillars, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    /* bridge_ramps: deck x 28..32 m, y 20..50 m at 5 m, railings 28..28.1 and 31.9..32, pillars
     * of 1 m at x 30 every 10 m; ramps y 5..20 and 50..65. Metres x 0.75 = px. On main legs 1
     * and 4 crossed the east railing (31.9 m); the others pass on both. */
    static const double m[][4] = {{30, 21, 30, 49}, {29, 21, 31, 49}, {31.5, 22, 28.5, 48}, {30, 8, 30, 62},
                                  {28.3, 25, 31.7, 45}, {28.2, 21, 28.2, 49}, {30, 10, 30, 30}};
    const uint32_t n = sizeof m / sizeof m[0];
    double legs[sizeof m / sizeof m[0]][4];
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) legs[i][k] = 0.75 * m[i][k];
    cr_expect_eq(audit_scene_legs("bridge_ramps", "bridge_ramps", "--walkable-as-is", legs, n), 0u, "bridge_ramps: audit failures (above)");
}

/* Issue 12 (h-solid): 0.7 m platforms (a riser Recast does not climb, the grid neither: over
 * kStepUp) whose south and east faces lie on cell lines or centres, baked the default way. Where a
 * top's eroded strip meets its side's, the crack's corner cell held no span and no surface within
 * two cells on either axis, so it was not levelled like the crack's other cells and took the mean
 * of the rims round it (0.34 m): the route climbed the platform's corner 0 -> 0.34 -> 0.70 m, body
 * through the face (audit `solid` at (45.83, 12.25) m, legs 8 and 31 of navaudit --random 100
 * --seed 1). Such a cell is judged on the rims beside it now (navmesh/bake/README.md "Seed 2"). */
Test(audit_levels, riser_corners_are_not_climbed_by_half_steps, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    static const double legs[][4] = {{40.73, 1.63, 4.99, 14.61}, {29.47, 1.10, 2.40, 22.57}};
    cr_expect_eq(audit_scene_legs("riser_corners", "riser_corners", NULL, legs, 2), 0u,
                 "riser_corners: audit failures (above)");
}

/* The command: a legs file (px, with and without heights) on a bundled level, --report's JSON,
 * exit codes. */
Test(audit_levels, navaudit_command, .timeout = 300)
{
    if (!lu_tools_present()) cr_skip_test("scenegen / navbake not built");
    char dir[256], obj[1200], tool[600], cmd[4096], legs[400], out[400];
    lu_mkdtemp(dir, sizeof dir);
    snprintf(obj, sizeof obj, "%s/resources/levels/godot-navlevel/level_mesh.obj", lu_env("NM_SOURCE_ROOT", "."));
    lu_navbake(obj, NULL, dir, NULL);
    lu_tool(tool, sizeof tool, "navaudit");
    snprintf(legs, sizeof legs, "%s/legs.txt", dir);
    FILE *f = fopen(legs, "w");
    cr_assert_not_null(f);
    /* two legs of the Godot level: on the ground with heights (px, m), on the raised walkway
     * without (the highest surface there) */
    fprintf(f, "# sx sy [sh] gx gy [gh]\n0.62 -2.26 0.10 0.98 -1.60 0.10\n4.38 0.22 4.25 -1.75\n");
    fclose(f);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s' --pack '%s/base.nav.gz' --zone level_mesh --legs '%s' --report --all > '%s'",
             tool, obj, dir, legs, out);
    lu_run(cmd);
    f = fopen(out, "r");
    cr_assert_not_null(f);
    char line[4096], last[4096] = "";
    unsigned nleg = 0;
    while (fgets(line, sizeof line, f)) {
        nleg += strncmp(line, "leg ", 4) == 0;
        snprintf(last, sizeof last, "%s", line);
    }
    fclose(f);
    cr_assert_eq(nleg, 2, "--all prints every leg");
    cr_assert_not_null(strstr(last, "\"legs\":2"), "%s", last);
    cr_assert_not_null(strstr(last, "\"ours_ok\":2,\"detour_complete\":2,\"audited\":2,\"audit_failures\":0"), "%s", last);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s' --zone level_mesh --random 3 > /dev/null 2>&1", tool, obj);
    cr_assert_eq(WEXITSTATUS(system(cmd)), 2, "no --pack: usage");
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s/none.obj' --pack '%s/base.nav.gz' --zone level_mesh --random 3 > /dev/null 2>&1",
             tool, dir, dir);
    cr_assert_eq(WEXITSTATUS(system(cmd)), 1, "missing OBJ: error");
    lu_rmdir(dir);
}
