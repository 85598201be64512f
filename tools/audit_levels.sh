#!/usr/bin/env bash
# audit_levels.sh — figures for issue 12: bakes every shared level (../shared/data/levels) the
# default way (Recast, no --walkable-as-is), then runs navaudit (ours against Detour, audit of
# every ok route) on random legs, and prints one table row per level: legs planned, ours ok,
# Detour complete, disagreements by class, audit failures, bake time and peak memory (GNU time).
#
#   bash tools/audit_levels.sh [LEGS] [SEED]        # defaults 60 legs, seed 1; build/ must exist
#
# Env: NM_SHARED_DATA (default ../shared/data), NM_AUDIT_OUT (default out/audit_levels), NM_BUILD
# (default build), NM_AUDIT_PX_M (a list of px/m, e.g. "0.70 0.71 0.75": each level is baked once a
# value with a zone transform [s, 0, s, 0] instead of the default config, the real zones' scales;
# the row's level reads name@s).
set -euo pipefail
cd "$(dirname "$0")/.."
legs=${1:-60}
seed=${2:-1}
data=${NM_SHARED_DATA:-../shared/data}
out=${NM_AUDIT_OUT:-out/audit_levels}
build=${NM_BUILD:-build}
bake=$build/tools/navbake/navbake
audit=$build/tools/navaudit/navaudit
[ -x "$bake" ] && [ -x "$audit" ] || { echo "audit_levels: build first (ninja -C $build)" >&2; exit 1; }
[ -d "$data/levels" ] || { echo "audit_levels: no $data/levels" >&2; exit 1; }
mkdir -p "$out"
# level folder, OBJ name, scale (sauer-pandora is in Cube 2 units: see its SOURCE.txt)
levels="recast-navtest:nav_test.obj:1
godot-navlevel:level_mesh.obj:1
recast-dungeon:dungeon.obj:1
recast-undulating:undulating.obj:1
dotrecast-house:house.obj:1
navcat-bridges:bridges.obj:1
sauer-pandora:pandora.obj:0.12"
printf '| level | legs | ours ok | Detour complete | agree | narrow | ours drop/link | channel longer | goal snapped | start snapped | recast ledge | recast radius | ours fails | ours longer | ours only | other layer | no poly | unexplained | audit failures | bake s | bake peak MB |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
pxm=${NM_AUDIT_PX_M:-default}
for px in $pxm; do
while IFS=: read -r name obj scale; do
  zone=${obj%.obj}
  if [ "$px" = default ]; then
    row=$name dir="$out/$name" cfg=()
  else
    row=$name@$px dir="$out/$name@$px"
  fi
  mkdir -p "$dir"
  if [ "$px" != default ]; then
    printf '{"zones":[{"name":"%s","transform":[%s,0,%s,0]}]}\n' "$zone" "$px" "$px" > "$dir/zone.json"
    cfg=(--zone "$dir/zone.json")
  fi
  /usr/bin/time -v -o "$dir/time.txt" "$bake" --obj "$data/levels/$name/$obj" --scale "$scale" "${cfg[@]}" --out "$dir" --quiet \
    > "$dir/bake.log" 2>&1 || { echo "| $row | bake failed: $(tail -1 "$dir/bake.log") |"; continue; }
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$dir/time.txt")
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
  acfg=()
  [ "$px" != default ] && acfg=(--config "$dir/zone.json")
  "$audit" --obj "$data/levels/$name/$obj" --scale "$scale" "${acfg[@]}" --pack "$dir/base.nav.gz" --zone "$zone" \
    --random "$legs" --seed "$seed" --report > "$dir/audit.txt" 2> "$dir/audit.err" || {
    echo "| $row | audit failed: $(tail -1 "$dir/audit.err") |"; continue; }
  python3 - "$dir/audit.txt" "$row" "$secs" "$kb" <<'PY'
import json, sys
rep = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
c = rep["classes"]
print("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f | %.0f |" % (
    sys.argv[2], rep["legs"], rep["ours_ok"], rep["detour_complete"], c["agree"], c["narrow"],
    c["ours_drop_or_link"], c["channel_longer"], c["goal_snapped"], c["start_snapped"], c["recast_ledge"], c["recast_radius"], c["ours_fails"], c["ours_longer"], c["ours_only"],
    c["other_layer"], c["no_poly"], rep["unexplained"], rep["audit_failures"], float(sys.argv[3]),
    int(sys.argv[4]) / 1024.0))
PY
done <<< "$levels"
done
echo "(per-leg disagreements: $out/LEVEL/audit.txt)"
