#!/usr/bin/env bash
# msgpipe's test suite, as README gives it and CI runs it:
#   1. a warning-free build of everything (library, CLI, tests, benchmarks),
#   2. swift test: unit, byte-vector, property-based and fault-injection tests (the CLI's process tests apart),
#   3. a short libFuzzer run of every parser that reads a peer's or a disk's bytes (Scripts/fuzz.sh: seven targets,
#      MSGPIPE_FUZZ_SECONDS each, default 8, 0 skips it; their own release build in Fuzz/.build, a few minutes
#      the first time),
#   4. the BLE lab: the real Linux Bluetooth stack in a throw-away VM (Scripts/lab.sh; needs root, qemu and
#      Debian's kernel package, which Scripts/blelab.sh installs and fetches on first use).
# MSGPIPE_LAB=0 skips step 4 (for machines where the lab cannot run).
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
# step NAME: NAME's seconds go into the summary printed at the end (where a run's minutes went)
steps=(); step_t0=$SECONDS; step_name=""
step() {
  [ -z "$step_name" ] || steps+=("$(printf '%-12s %5d s' "$step_name" $((SECONDS - step_t0)))")
  step_name=${1:-}; step_t0=$SECONDS
}
# The lab's one-time setup (apt packages, a kernel, bleak and Bumble: mostly waiting on the network) runs
# beside the build; the lab step waits for it.
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo env PATH="$PATH" "$@"; fi; }
labsetup=""; labsetup_log=$(mktemp)
if [ "${MSGPIPE_LAB:-1}" != 0 ]; then as_root Scripts/lab.sh --setup-only >"$labsetup_log" 2>&1 & labsetup=$!; fi
step build
if ! swift build --build-tests >"$log" 2>&1; then cat "$log"; exit 1; fi
if grep -E "(warning|error):" "$log" | grep -v "^warning: 'package-benchmark'"; then
  echo "the build produced the warnings above: msgpipe builds without warnings" >&2; exit 1
fi
# The CLI tests run msgpipe processes and wait for them on the test process's concurrency pool (one thread per
# core): run apart, they cannot starve the in-process tests, whose ATT and Transport timers keep running.
step "unit tests"
swift test --skip-build --skip CLITests
step "CLI tests"
swift test --skip-build --filter CLITests
step fuzz
if [ "${MSGPIPE_FUZZ_SECONDS:-8}" != 0 ]; then
  Scripts/fuzz.sh "${MSGPIPE_FUZZ_SECONDS:-8}" >"$log" 2>&1 || { tail -60 "$log"; echo "the fuzzer found a crash" >&2; exit 1; }
  grep -E "^(== |Done)" "$log"
fi
step lab
lab_rc=0; lab_line=""
if [ "${MSGPIPE_LAB:-1}" != 0 ]; then
  # A failed setup says why here; lab.sh then tries it once more itself.
  wait "$labsetup" || { cat "$labsetup_log"; echo "test.sh: the lab's setup beside the build failed" >&2; }
  lablog=$(mktemp)
  as_root Scripts/lab.sh | tee "$lablog" || lab_rc=$?
  lab_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$lablog" | tail -1)
fi
step
echo "test.sh: seconds per step"
printf '  %s\n' "${steps[@]}"
# The lab's verdict stays the last line.
[ -z "$lab_line" ] || echo "$lab_line"
exit "$lab_rc"
