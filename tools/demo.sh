#!/usr/bin/env bash
# demo.sh — the README's main command: installs what is missing, builds, bakes the bundled demo
# town, expands the demo route (resources/routes/demo.json: legs over the low bridge, up and down
# stairs, round an authored no-go zone, onto the high bridge's deck, up a ledge and off it by a
# drop) through the plugin with the reference host navhost, prints the RUN waypoints and writes
# one overlay PNG per leg to out/demo/overlays/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
out=out/demo
mkdir -p "$out"
build/tools/scenegen/scenegen resources/demo/scene.json --out "$out" --picture "$out/town.png"
build/tools/navbake/navbake --obj "$out/level.obj" --zone "$out/zone.json" --out "$out" --walkable-as-is
build/tools/navbake/navbake --info "$out/base.nav.gz"
echo "demo: pack written to $out/base.nav.gz; expanding resources/routes/demo.json"
status=0
build/tools/navhost/navhost --pack "$out/base.nav.gz" --route resources/routes/demo.json \
  --nogo resources/routes/demo_nogo.json --overlay-dir "$out/overlays" \
  --plugin build/plugin/libnavmesh_plugin.so > "$out/route.json" || status=$?
# The RUN waypoints, one a line (python3 is only used for printing; the JSON is in route.json).
if command -v python3 >/dev/null; then
  python3 - "$out/route.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["route"]:
    if isinstance(e, dict) and e.get("action") == "RUN":
        extra = ""
        if "target_deck_y" in e: extra += "  target_deck_y=%g" % e["target_deck_y"]
        if "drop_from" in e: extra += "  drop_from=(%.2f, %.2f)" % tuple(e["drop_from"])
        fy = e.get("floor_y")
        print("RUN  (%8.2f, %8.2f)  %-6s clearance %5.2f  floor %s%s" % (e["x"], e["y"],
              "strict" if e["strict"] else "", e["clearance"], "?" if fy is None else "%g" % fy, extra))
    else:
        print("     %s" % json.dumps(e))
print("legs: %d, ok: %s%s" % (len(d["legs"]), d["ok"], "" if d["ok"] else " (%s: %s)" % (d["code"], d["message"])))
PY
else
  cat "$out/route.json"
fi
echo "demo: expanded route in $out/route.json, overlays in $out/overlays/"
exit $status
