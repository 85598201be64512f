#!/usr/bin/env bash
# setup_quiet.sh SETUP — runs tools/setup.sh against fake dpkg-query / apt-get (every package
# missing, apt printing hundreds of lines) and checks: one line per step on the terminal, apt's
# full output in the log file only; a failing step prints the log and fails; nothing missing
# gives one line and installs nothing.
set -u
setup=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/bin"
cat > "$t/bin/dpkg-query" <<'SH'
#!/bin/sh
[ -n "${FAKE_INSTALLED:-}" ] && { printf 'install ok installed'; exit 0; }
exit 1
SH
cat > "$t/bin/apt-get" <<'SH'
#!/bin/sh
echo "apt-get $*" >> "$FAKE_CALLS"
i=0
while [ $i -lt 300 ]; do echo "Unpacking fake-package-$i (1.0) ..."; i=$((i + 1)); done
case "$*" in *install*) [ -n "${FAKE_FAIL:-}" ] && { echo "E: Unable to locate package fake" >&2; exit 100; } ;; esac
exit 0
SH
printf '#!/bin/sh\nexec "$@"\n' > "$t/bin/sudo"
chmod +x "$t/bin/"*
export PATH="$t/bin:$PATH" NM_SETUP_LOG="$t/setup.log" FAKE_CALLS="$t/calls"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }

bash "$setup" > "$t/out" 2>&1
rc=$?
cat "$t/out"
check "fresh machine: exit 0 (got $rc)" '[ $rc -eq 0 ]'
lines=$(wc -l < "$t/out")
check "fresh machine: at most 5 lines on the terminal (got $lines)" '[ "$lines" -le 5 ]'
check "no apt output on the terminal" '! grep -q Unpacking "$t/out"'
check "one line per step" '[ "$(grep -c "^setup: .* \.\.\. ok" "$t/out")" -eq 3 ]'
check "the log keeps apt's output" '[ "$(grep -c Unpacking "$t/setup.log")" -ge 900 ]'
check "the terminal names the log" 'grep -q "$t/setup.log" "$t/out"'

FAKE_FAIL=1 bash "$setup" > "$t/out" 2>&1
rc=$?
check "a failing step fails the script (got $rc)" '[ $rc -ne 0 ]'
check "a failing step prints the log" 'grep -q "E: Unable to locate package fake" "$t/out" && grep -q Unpacking "$t/out"'
check "the failing step is named" 'grep -q "FAILED" "$t/out"'

: > "$FAKE_CALLS"
FAKE_INSTALLED=1 bash "$setup" > "$t/out" 2>&1
rc=$?
check "nothing missing: exit 0" '[ $rc -eq 0 ]'
check "nothing missing: one line" '[ "$(wc -l < "$t/out")" -eq 1 ] && grep -q "all packages present" "$t/out"'
check "nothing missing: apt not run" '[ ! -s "$FAKE_CALLS" ]'
exit $fail
