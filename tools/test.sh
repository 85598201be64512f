#!/usr/bin/env bash
# test.sh — the README's test command: installs what is missing, builds with warnings as errors,
# runs every test suite, then the same suites under AddressSanitizer + UBSan, then the plugin's
# two-thread driver under ThreadSanitizer and under valgrind, then each fuzz target for a bounded time. Prints
# "N passed, M failed" at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
fail=0

run_suite() { # builddir, "meson test extra args", extra setup args...
  local dir=$1 targs=$2; shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dwerror=true "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  fi
  ninja -C "$dir" -j "$jobs" || return 1
  # shellcheck disable=SC2086
  meson test -C "$dir" --print-errorlogs --num-processes "$jobs" $targs || return 1
}

count() { # builddir -> "passed failed"
  python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"): p += 1
        elif r == "SKIP": s += 1
        else: f += 1
except OSError:
    pass
print(p, f, s)
PY
}

run_suite build-test "" || fail=1
read -r p1 f1 s1 < <(count build-test)
p=$p1; f=$f1; s=$s1

if [ "${NM_NO_SANITIZE:-0}" != 1 ]; then
  # The end-to-end suites (whole bakes and plans of scenes) already ran above; under the
  # sanitizers they would take most of CI's time, so the sanitizer pass covers every unit suite
  # and every reader (the readers are also fuzzed below).
  skip=""
  for suite in ${NM_ASAN_SKIP:-plan scenes bakegrid plugin ledges audit_levels}; do skip="$skip --no-suite $suite"; done
  echo "== unit suites under AddressSanitizer + UBSan (skipping:${skip:- none}) =="
  # every malloc'd byte reads 0xbe until written (not only a block's first 4 KB): memory the
  # library leaves unzeroed on purpose (the search's node records) must never be read unwritten
  ASAN_OPTIONS=detect_leaks=1:max_malloc_fill_size=4294967295:malloc_fill_byte=190 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite build-asan "$skip" -Db_sanitize=address,undefined -Db_lundef=false -Doverlay=disabled || fail=1
  read -r p2 f2 s2 < <(count build-asan)
  p=$((p + p2)); f=$((f + f2)); s=$((s + s2))
fi

# Engines of two zones of one pack (sharing its grid bytes and sidecar) planning in two threads at
# once, under ThreadSanitizer. Criterion's runner does not start under TSan, so the plain-C driver
# tests/plugin/plugin_soak runs it (it checks every answer against the one planned alone); only it
# and the plugin are built with -fsanitize=thread, the pack is baked with build-test's tools. Any
# TSan report fails the step (halt_on_error, and the report text is looked for as well).
bake_two_zones() { # -> prints the folder holding the two_zones packs (baked with build-test's tools)
  local work
  work=$(mktemp -d /tmp/nm_soak_XXXXXX)
  if ! { build-test/tools/scenegen/scenegen resources/scenes/two_zones/scene.json --out "$work" >/dev/null &&
         build-test/tools/navbake/navbake --obj "$work/level.obj" --zone "$work/zone.json" --out "$work" \
           --walkable-as-is --quiet; }; then
    echo "baking two_zones failed" >&2; rm -rf "$work"; return 1
  fi
  echo "$work"
}

tsan_plugin() {
  local dir=build-tsan work log
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dwerror=true -Db_sanitize=thread -Db_lundef=false -Doverlay=disabled \
      >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  fi
  ninja -C "$dir" -j "$jobs" plugin/libnavmesh_plugin.so tests/plugin/plugin_soak || return 1
  work=$(bake_two_zones) || return 1
  log="$dir/tsan-plugin.log"
  # No address-space randomisation: gcc's TSan runtime rejects some high-entropy layouts.
  local norand=()
  setarch "$(uname -m)" -R true 2>/dev/null && norand=(setarch "$(uname -m)" -R)
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
    "${norand[@]}" "$dir/tests/plugin/plugin_soak" "$dir/plugin/libnavmesh_plugin.so" \
    "$work/base.nav.gz" west,east "${NM_TSAN_LEGS:-12}" >"$log" 2>&1
  local rc=$?
  rm -rf "$work"
  # The demo town (baked for build-test's plugin suite): its windows are large enough for each
  # plan's own second thread (the topology layer beside the baseline, the sight's on field and
  # the window's blockers beside the geometry layer), which the two small zones never start.
  local demo=build-test/tests/plugin/base.nav.gz
  if [ "$rc" = 0 ] && [ -f "$demo" ]; then
    TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
      "${norand[@]}" "$dir/tests/plugin/plugin_soak" "$dir/plugin/libnavmesh_plugin.so" \
      "$demo" demo "${NM_TSAN_DEMO_LEGS:-3}" >>"$log" 2>&1
    rc=$?
  fi
  cat "$log"
  [ "$rc" = 0 ] && ! grep -q "ThreadSanitizer" "$log"
}

if [ "${NM_NO_SANITIZE:-0}" != 1 ] && [ "${NM_NO_TSAN:-0}" != 1 ]; then
  echo "== plugin: two zones planning in two threads under ThreadSanitizer =="
  if tsan_plugin; then p=$((p + 1)); else f=$((f + 1)); fail=1; fi
fi

# The same driver under valgrind: open both engines, plan N legs a thread (2 zones x 2 threads x
# 25 = 100 plans after the 24 planned alone), close; any leak
# (definitely or indirectly lost) or memory error fails the step.
valgrind_plugin() {
  local work log=build-test/valgrind-plugin.log
  work=$(bake_two_zones) || return 1
  valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    build-test/tests/plugin/plugin_soak build-test/plugin/libnavmesh_plugin.so "$work/base.nav.gz" \
    west,east "${NM_VALGRIND_LEGS:-25}" >"$log" 2>&1
  local rc=$?
  rm -rf "$work"
  cat "$log"
  [ "$rc" = 0 ]
}

if [ "${NM_NO_VALGRIND:-0}" != 1 ] && command -v valgrind >/dev/null; then
  echo "== plugin: open / plan x ${NM_VALGRIND_LEGS:-25} / close under valgrind =="
  if valgrind_plugin; then p=$((p + 1)); else f=$((f + 1)); fail=1; fi
fi

if [ "${NM_NO_FUZZ:-0}" != 1 ] && command -v clang >/dev/null && [ -x tests/fuzz/run_fuzz.sh ]; then
  echo "== fuzz targets, ${NM_FUZZ_SECONDS:-30} s each =="
  if bash tests/fuzz/run_fuzz.sh build-fuzz "${NM_FUZZ_SECONDS:-30}"; then p=$((p + 1)); else f=$((f + 1)); fail=1; fi
fi

[ "$fail" = 0 ] || [ "$f" -gt 0 ] || f=1
echo "tests: $p passed, $f failed, $s skipped"
[ "$fail" = 0 ]
