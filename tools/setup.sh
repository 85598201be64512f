#!/usr/bin/env bash
# setup.sh — installs the Debian packages the project needs, only those missing. Idempotent.
# One line per step; apt's full output goes to a log file, printed only when a step fails.
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc g++ python3 zlib1g-dev libdeflate-dev libcjson-dev libcriterion-dev
      librecast-dev libassimp-dev libopencv-imgproc-dev libopencv-imgcodecs-dev)
# Optional tools for the sanitizer and fuzz runs of tools/test.sh (libtsan2: gcc's ThreadSanitizer
# runtime, usually already there with gcc).
extra=(clang libclang-rt-14-dev valgrind libtsan2)
missing=()
for p in "${pkgs[@]}" "${extra[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
log="${NM_SETUP_LOG:-${TMPDIR:-/tmp}/navmesh-setup.log}"
: > "$log"
echo "setup: missing ${missing[*]} (full apt log: $log)"

# step NAME CMD...: one line "setup: NAME ... ok (Ns)"; on failure the log, then status 1.
step() {
  local name=$1 t0=$SECONDS
  shift
  printf 'setup: %s ... ' "$name"
  echo "=== $name: $*" >> "$log"
  if "$@" >> "$log" 2>&1; then
    echo "ok ($((SECONDS - t0)) s)"
    return 0
  fi
  echo "FAILED"
  echo "setup: --- $log ---" >&2
  cat "$log" >&2
  return 1
}

step "apt-get update" $sudo apt-get update -q
# The optional tools may be unavailable on some releases: install the required set first.
step "install required packages (${#pkgs[@]})" $sudo apt-get install -y -q --no-install-recommends "${pkgs[@]}"
if ! step "install optional tools (${extra[*]})" $sudo apt-get install -y -q --no-install-recommends "${extra[@]}"; then
  echo "setup: optional tools not installed (${extra[*]}); the rest is in place"
fi
