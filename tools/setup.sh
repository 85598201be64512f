#!/usr/bin/env bash
# setup.sh — installs the Debian packages the project needs, only those missing. Idempotent.
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
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# The optional tools may be unavailable on some releases: install the required set first.
$sudo apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
$sudo apt-get install -y -qq --no-install-recommends "${extra[@]}" || echo "setup: optional tools not installed (${extra[*]})"
