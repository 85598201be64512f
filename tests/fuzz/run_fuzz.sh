#!/bin/sh
# run_fuzz.sh BUILDDIR SECONDS — builds every libFuzzer target with clang (ASan + UBSan) and runs
# each for SECONDS over a temporary copy of its seed corpus. Exits non-zero on any crash.
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 BUILDDIR SECONDS" >&2
    exit 2
fi
build=$1
seconds=$2
src=$(cd "$(dirname "$0")/../.." && pwd)

if [ ! -f "$build/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$build" "$src" -Dfuzz=true -Dtests=enabled -Drecast=disabled \
        -Doverlay=disabled >"/tmp/nm_fuzz_setup.log" 2>&1 || { cat /tmp/nm_fuzz_setup.log >&2; exit 1; }
fi

# target:corpus-dir pairs (relative to the source tree)
targets="fuzz_pack:tests/fuzz/corpus/pack
fuzz_occluder:tests/occluder/corpus
fuzz_nogo:tests/route/corpus/nogo
fuzz_bgrd:tests/gridio/corpus/bgrd
fuzz_bnvf:tests/gridio/corpus/bnvf
fuzz_bake:tests/bake/corpus
fuzz_request:tests/plugin/corpus/request
fuzz_route:tests/plugin/corpus/route"
# fuzz_level drives assimp (Debian's, not ours), which still has crashes of its own that a run
# of minutes finds (three were worked around in level.c): opt-in until the next is handled.
[ "${NM_FUZZ_LEVEL:-0}" = 1 ] && targets="$targets
fuzz_level:tests/bake/corpus_level"

status=0
for entry in $targets; do
    name=${entry%%:*}
    corpus=${entry#*:}
    path=$(ninja -C "$build" -t targets all 2>/dev/null | sed -n "s|^\(.*/$name\): .*|\1|p" | head -n 1)
    if [ -z "$path" ]; then
        echo "$name: not built in this configuration, skipped"
        continue
    fi
    if ! ninja -C "$build" "$path" >"$build/$name.build.log" 2>&1; then
        tail -n 20 "$build/$name.build.log" >&2; echo "$name: BUILD FAILED" >&2; status=1; continue
    fi
    work=$(mktemp -d)
    mkdir -p "$work/corpus" "$work/artifacts"
    [ -d "$src/$corpus" ] && cp "$src/$corpus"/* "$work/corpus/" 2>/dev/null || true
    rc=0
    "$build/$path" -rss_limit_mb=2048 -max_total_time="$seconds" -max_len=16384 -timeout=20 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        mkdir -p "$build/fuzz-artifacts"
        cp "$work"/artifacts/* "$build/fuzz-artifacts/" 2>/dev/null || true
        tail -n 40 "$work/log" >&2
        echo "$name: FAILED (status $rc); crash inputs in $build/fuzz-artifacts" >&2
        status=1
    else
        echo "$name: no crash in $seconds s ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo '?') runs)"
    fi
    rm -rf "$work"
done
exit $status
