#!/usr/bin/env bash
# demo.sh — the README's main command: installs what is missing, builds, bakes the bundled demo
# world and prints the pack summary. (Route planning and overlays join as the planner lands.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
out=out/demo
mkdir -p "$out"
if [ -f resources/demo/scene.json ] && [ -x build/tools/scenegen/scenegen ]; then
  build/tools/scenegen/scenegen resources/demo/scene.json --out "$out" --picture "$out/town.png"
  build/tools/navbake/navbake --obj "$out/level.obj" --zone "$out/zone.json" --out "$out" --walkable-as-is
else
  build/tools/navbake/navbake --obj resources/levels/recast-navtest/nav_test.obj --out "$out"
fi
build/tools/navbake/navbake --info "$out/base.nav.gz"
echo "demo: pack written to $out/base.nav.gz"
