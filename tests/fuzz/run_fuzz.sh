#!/bin/sh
# run_fuzz.sh BUILDDIR SECONDS — builds the libFuzzer targets with clang (ASan + UBSan) and runs
# fuzz_pack for SECONDS over a temporary copy of the seed corpus. Exits non-zero on a crash.
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 BUILDDIR SECONDS" >&2
    exit 2
fi
build=$1
seconds=$2
src=$(cd "$(dirname "$0")/../.." && pwd)

setup() {
    CC=clang CXX=clang++ meson setup "$build" "$src" -Dfuzz=true -Dtests="$1" -Drecast=disabled \
        -Doverlay=disabled
}
if [ ! -f "$build/build.ninja" ]; then
    setup disabled
fi
# The top-level meson.build only enters tests/ when Criterion is enabled; if the fuzz target is
# missing for that reason, configure again with tests enabled (only fuzz_pack is built below).
if ! ninja -C "$build" -t targets all 2>/dev/null | grep -q '^tests/fuzz/fuzz_pack:'; then
    meson configure "$build" -Dtests=enabled
fi
ninja -C "$build" tests/fuzz/fuzz_pack

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp "$src"/tests/fuzz/corpus/pack/* "$work/corpus/"
status=0
"$build/tests/fuzz/fuzz_pack" -max_total_time="$seconds" -max_len=16384 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" || status=$?
if [ "$status" -ne 0 ]; then
    mkdir -p "$build/fuzz-artifacts"
    cp "$work"/artifacts/* "$build/fuzz-artifacts/" 2>/dev/null || true
    echo "fuzz_pack failed (status $status); crash inputs in $build/fuzz-artifacts" >&2
    exit 1
fi
echo "fuzz_pack: no crash in $seconds s"
