#!/usr/bin/env bash
# Fuzzes the ATT decoder and the GATT server with libFuzzer (Fuzz/Sources/ATTFuzzer) for SECONDS (default 60).
#   Scripts/fuzz.sh [SECONDS] [libFuzzer flags...]
# The target is a package of its own (Fuzz/), built in release with -sanitize=fuzzer,address into
# Fuzz/.build/fuzz, so the main build never compiles it. The corpus grows in Fuzz/corpus (not committed);
# a finding is saved as Fuzz/findings/crash-* and the script exits non-zero. Replay one without libFuzzer:
#   swift run --package-path Fuzz ATTFuzzer Fuzz/findings/crash-...
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds=${1:-60}
shift || true
flags=(-c release --product ATTFuzzer --scratch-path .build/fuzz
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING)
log=$(mktemp)
if ! swift build "${flags[@]}" >"$log" 2>&1; then cat "$log"; exit 1; fi
fuzzer="$(swift build "${flags[@]}" --show-bin-path)/ATTFuzzer"
mkdir -p corpus findings
if [ -z "$(ls -A corpus)" ]; then
  # Seeds: an MTU exchange, discovery, a subscription, a long read, prepared writes, a notification, an indication.
  printf '\x03\x02\x05\x02\x07\x10\x01\x00\xff\xff\x00\x28\x05\x12\x0b\x00\x03\x00\xf0\x20\xf1\x02\x01\x1e' >corpus/seed-session
  printf '\x05\x0c\x0f\x00\x10\x00\x06\x16\x0f\x00\x00\x00\x61\x02\x18\x01\x05\x04\x01\x00\xff\xff' >corpus/seed-writes
fi
"$fuzzer" -max_total_time="$seconds" -artifact_prefix=findings/ -print_final_stats=1 "$@" corpus
