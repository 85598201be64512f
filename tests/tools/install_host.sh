#!/usr/bin/env bash
# install_host.sh — `meson install` into a DESTDIR gives a host what it needs: the header under
# include/navmesh-plugin, navmesh-plugin.pc (cflags, the plugin's path) and the plugin itself;
# the README's host example compiles with `pkg-config --cflags navmesh-plugin` against it.
set -u
build=${NM_BUILD_ROOT:?} src=${NM_SOURCE_ROOT:?}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
meson install -C "$build" --destdir "$t/root" --no-rebuild --quiet > "$t/install.log" 2>&1 || {
  cat "$t/install.log"; echo "FAIL: meson install"; exit 1; }
pc=$(find "$t/root" -name navmesh-plugin.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no navmesh-plugin.pc installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$t/root"
cflags=$(pkg-config --cflags navmesh-plugin) || { echo "FAIL: pkg-config --cflags"; exit 1; }
plugin=$(pkg-config --variable=plugin navmesh-plugin)
echo "cflags: $cflags; plugin: $plugin"
case $plugin in "$t/root"*) ;; *) plugin="$t/root$plugin" ;; esac # pkgconf applies the sysroot to variables too
[ -f "$plugin" ] || { echo "FAIL: the .pc's plugin $plugin is not installed"; exit 1; }
hdr=$(find "$t/root" -path '*/navmesh-plugin/navmesh_plugin.h' | head -n 1)
[ -n "$hdr" ] || { echo "FAIL: navmesh_plugin.h not installed under include/navmesh-plugin"; exit 1; }
# The README's host: the first ```c block after "A host:"
awk '/A host:/ { want = 1 } want && /^```c$/ { on = 1; next } on && /^```$/ { exit } on { print }' \
  "$src/README.md" > "$t/host.c"
[ -s "$t/host.c" ] || { echo "FAIL: no host example in README.md"; exit 1; }
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror $cflags "$t/host.c" -o "$t/host" -ldl || {
  echo "FAIL: the README's host does not compile against the installed header"; exit 1; }
echo "ok: README host built against $hdr"
