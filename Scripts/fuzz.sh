#!/usr/bin/env bash
# Fuzzes every parser that reads a peer's or a disk's bytes with libFuzzer, SECONDS each (default 60):
#   Scripts/fuzz.sh [SECONDS] [TARGET...] [-- libFuzzer flags...]
#   Scripts/fuzz.sh --build-only            (the targets' build alone: Scripts/test.sh runs it beside the lab)
# Targets (Fuzz/Sources/<target>, one executable each; all of them unless named):
#   ATTFuzzer          ATT PDU decoder and the GATT server (module GATT)
#   MsgPipeFuzzer      msgpipe packet, message header and control packet decoder; MsgPipeReassembler
#   TextFormatsFuzzer  legacy Start/End, EOM and lines decoders
#   StreamFramesFuzzer the stream deframer (packet boundaries on an L2CAP channel)
#   TransportFuzzer    Transport control packets; a TransportEndpoint fed a peer's packets
#   SecureFuzzer       Secure handshake messages and sealed records
#   AuthorizedKeysFuzzer the authorized-keys file parser (module Secure)
#   ExchangeFuzzer     Exchange request/response envelopes, journal records, the journal read from disk
#   InboxFuzzer        the inbox's delivery journal (records, the file read from disk) and the outbox's state file (module MsgPipe)
#   BlueZFuzzer        bluetoothd's D-Bus values (built as sd-bus hands them over): Device1 properties into
#                      DiscoveredPeer, UUIDs, addresses, device paths, Acquire MTUs (module BlueZLink)
#   BondStoreFuzzer    the bond store's file (BondFile, BondStore.load), the mgmt key events and New Connection
#                      Parameter (module BLELink)
# The targets are a package of their own (Fuzz/), built together in one release build with
# -sanitize=fuzzer,address into Fuzz/.build/fuzz, so the main build never compiles them. Each input gets at
# most 5 s (-timeout: a hang is a finding) and the process 1 GiB (-rss_limit_mb: so is unbounded memory).
# The corpus grows in Fuzz/corpus/<target> (not committed; seeded from the spec vectors on first run); a
# finding is saved as Fuzz/findings/<target>/crash-* (or timeout-*, oom-*) and the script exits non-zero after
# running the other targets. Replay one without libFuzzer (a debug build that runs each file once):
#   swift run --package-path Fuzz MsgPipeFuzzer Fuzz/findings/MsgPipeFuzzer/crash-...
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
# A trap goes straight to libFuzzer's handler (Swift's backtracer would trip AddressSanitizer).
export SWIFT_BACKTRACE=enable=no
all=(ATTFuzzer MsgPipeFuzzer TextFormatsFuzzer StreamFramesFuzzer TransportFuzzer SecureFuzzer AuthorizedKeysFuzzer ExchangeFuzzer InboxFuzzer BlueZFuzzer BondStoreFuzzer)
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
seconds=${1:-60}
shift || true
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do targets+=("$1"); shift; done
if [ "${1:-}" = -- ]; then shift; fi
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi
flags=(-c release --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING)
log=$(mktemp)
if ! swift build "${flags[@]}" >"$log" 2>&1; then cat "$log"; exit 1; fi
if [ "$build_only" = 1 ]; then exit 0; fi
bin=$(swift build "${flags[@]}" --show-bin-path)
failed=()
for target in "${targets[@]}"; do
  if [ ! -x "$bin/$target" ]; then echo "no fuzz target $target (targets: ${all[*]})" >&2; exit 2; fi
  mkdir -p "corpus/$target" "findings/$target"
  if [ -z "$(ls -A "corpus/$target")" ]; then "$bin/$target" --write-seeds "corpus/$target"; fi
  echo "== $target: $seconds s"
  if ! "$bin/$target" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 -max_len=4096 \
      -artifact_prefix="findings/$target/" -print_final_stats=1 "$@" "corpus/$target"; then
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found crashes, hangs or unbounded memory in: ${failed[*]} (see Fuzz/findings/)" >&2
  exit 1
fi
