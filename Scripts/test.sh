#!/usr/bin/env bash
# msgpipe's test suite: a warning-free build, then unit, property and fault-injection tests (swift test).
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
if ! swift build --build-tests >"$log" 2>&1; then cat "$log"; exit 1; fi
if grep -E "(warning|error):" "$log" | grep -v "^warning: 'package-benchmark'" ; then
  echo "the build produced the warnings above: msgpipe builds without warnings" >&2; exit 1
fi
swift test
