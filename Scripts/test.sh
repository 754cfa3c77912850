#!/usr/bin/env bash
# msgpipe's test suite, as README gives it and CI runs it:
#   1. a warning-free build of everything (library, CLI, tests, benchmarks),
#   2. swift test: unit, byte-vector, property-based and fault-injection tests (the CLI's process tests apart),
#   3. a short libFuzzer run of every parser that reads a peer's or a disk's bytes (Scripts/fuzz.sh: seven targets,
#      MSGPIPE_FUZZ_SECONDS each, default 8, 0 skips it; their own release build in Fuzz/.build, a few minutes
#      the first time),
#   4. the BLE lab: the real Linux Bluetooth stack in a throw-away VM (Scripts/lab.sh; needs root, qemu and
#      Debian's kernel package, which Scripts/blelab.sh installs and fetches on first use),
#   5. the DocC documentation of the library modules, failing on any warning (Scripts/docs.sh),
#   6. the Debian package: one release build, lintian, install, checks, purge (Scripts/package-test.sh; needs root).
# MSGPIPE_LAB=0 skips step 4 (for machines where the lab cannot run); MSGPIPE_PACKAGE=0 skips steps 5 and 6.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
if ! swift build --build-tests >"$log" 2>&1; then cat "$log"; exit 1; fi
if grep -E "(warning|error):" "$log" | grep -v "^warning: 'package-benchmark'"; then
  echo "the build produced the warnings above: msgpipe builds without warnings" >&2; exit 1
fi
# The CLI tests run msgpipe processes and wait for them on the test process's concurrency pool (one thread per
# core): run apart, they cannot starve the in-process tests, whose ATT and Transport timers keep running.
swift test --skip-build --skip CLITests
swift test --skip-build --filter CLITests
# DocC and the package's man pages reuse the debug build above; the package adds one release build.
if [ "${MSGPIPE_PACKAGE:-1}" != 0 ]; then
  Scripts/docs.sh
  if [ "$(id -u)" = 0 ]; then Scripts/package-test.sh; else sudo env PATH="$PATH" Scripts/package-test.sh; fi
fi
if [ "${MSGPIPE_FUZZ_SECONDS:-8}" != 0 ]; then
  Scripts/fuzz.sh "${MSGPIPE_FUZZ_SECONDS:-8}" >"$log" 2>&1 || { tail -60 "$log"; echo "the fuzzer found a crash" >&2; exit 1; }
  grep -E "^(== |Done)" "$log"
fi
if [ "${MSGPIPE_LAB:-1}" != 0 ]; then
  if [ "$(id -u)" = 0 ]; then Scripts/lab.sh; else sudo env PATH="$PATH" Scripts/lab.sh; fi
fi
