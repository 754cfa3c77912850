#!/usr/bin/env bash
# msgpipe's test suite, as README gives it and CI runs it:
#   1. a warning-free build of everything (library, CLI, tests, benchmarks),
#   2. swift test: unit, byte-vector, property-based and fault-injection tests (the MQTT and CLI process tests apart),
#   3. the DocC documentation of the library, without a warning (Scripts/docs.sh),
#   4. the BLE lab: the real Linux Bluetooth stack in a throw-away VM (Scripts/lab.sh; needs root, qemu and
#      Debian's kernel package, which Scripts/blelab.sh installs and fetches on first use),
#   5. a short libFuzzer run of every parser that reads a peer's or a disk's bytes (Scripts/fuzz.sh, twice
#      MSGPIPE_FUZZ_SECONDS each beside the lab and once after it, default 8, 0 skips it; their own release
#      build in Fuzz/.build),
#   6. the Debian package end to end (Scripts/package-test.sh: build, lintian, install, use, purge).
# The package's release build comes before the lab, whose checks run that msgpipe: in the VM's emulated CPU the
# debug build's own work was a large part of each check. The fuzzers' release build and runs go beside the lab
# at a low CPU priority: the lab's checks judge behaviour, not speed, and they only take what the VM leaves.
# The lab's one-time setup runs beside step 1.
# MSGPIPE_LAB=0 skips the lab (for machines where it cannot run), MSGPIPE_PACKAGE=0 steps 3 and 6 (the lab then
# runs the debug build's msgpipe).
# It ends with the seconds of each step and, last, the lab's "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
# step NAME: NAME's seconds go into the summary printed at the end (where a run's minutes went)
steps=(); step_t0=$SECONDS; step_name=""
step() {
  [ -z "$step_name" ] || steps+=("$(printf '%-14s %5d s' "$step_name" $((SECONDS - step_t0)))")
  step_name=${1:-}; step_t0=$SECONDS
}
# bounded_tests LIMIT ARGS...: `swift test --skip-build ARGS`, stopped after LIMIT seconds (four times its time on
# a busy machine) with the names of the tests that started and never ended: a hang fails the step in minutes.
# In a session of its own, all of which ends with it: swift test starts the test process in a process group of
# its own, which timeout does not reach, and that orphan, holding tee's pipe, kept the step waiting.
bounded_tests() {
  local limit=$1 out rc=0; shift
  out=$(mktemp)
  setsid --wait bash -c 'timeout --kill-after=10 "$@"; rc=$?
    for pid in $(pgrep -s $$); do [ "$pid" = $$ ] || kill -KILL "$pid" 2> /dev/null; done; exit $rc' \
    bounded "$limit" swift test --skip-build "$@" 2>&1 | tee "$out" || rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "swift test $*: still running after $limit s; these tests started and never ended:" >&2
    awk '/^◇ Test .* started\.$/ { n = $0; sub(/^◇ Test /, "", n); sub(/ started\.$/, "", n)
           if (n !~ /^case passing/) started[n] = 1 }
         /^(✔|✘) Test .* (passed|failed) after / { n = $0; sub(/^(✔|✘) Test /, "", n)
           sub(/ (with [0-9]+ test cases? )?(passed|failed) after .*/, "", n); delete started[n] }
         /^(➜|↷)? ?Test .* skipped/ { n = $0; sub(/^.*Test /, "", n); sub(/ skipped.*/, "", n); delete started[n] }
         END { for (n in started) if (n != "run") print "  " n }' "$out" >&2
  fi
  rm -f "$out"
  return "$rc"
}
# sudo keeps the caller's PATH (a Swift under /opt or ~/.local) and adds sbin, where root's tools live.
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo env PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" "$@"; fi; }
fuzz=${MSGPIPE_FUZZ_SECONDS:-8}
package=${MSGPIPE_PACKAGE:-1}

# The lab's setup (apt packages, a kernel, bleak and Bumble: mostly waiting on the network) beside the build.
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
# At most 8 tests at once (Swift Testing otherwise starts all of them together): a job a timer wakes then
# queues behind 8 tests' work on the pool, not the whole suite's.
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=8 bounded_tests 600 --skip CLITests --skip MQTTTests
# The MQTT gateway against a real mosquitto, apart too: its reconnects wait on the same pool, and beside the whole
# unit suite a broker restart was once not noticed within two minutes (it is in seconds alone).
step "MQTT tests"
bounded_tests 300 --filter MQTTTests
step "CLI tests"
bounded_tests 600 --filter CLITests
release_msgpipe=""
if [ "$package" != 0 ]; then
  step docs
  Scripts/docs.sh
  # The package's msgpipe, for the lab and step 6. In the lab the core checks took 166 s with it, 285 s with the
  # debug build.
  step "release build"
  release_msgpipe=$(Scripts/package.sh --build-only 2>"$log") || { cat "$log"; exit 1; }
fi

# lowest CMD...: CMD beside the lab at a low CPU priority: nice 10, in a session of its own whose CPU group
# (the kernel's autogroup, one per session) is niced too. Niced in test.sh's own session, the release builds
# still slowed the lab's first section about twice; with their group niced, by about a tenth. Nice 10, not 19:
# the lab's group at -10 still outweighs it 87 to 1, and beside other work at nice 0 it gets a tenth of what
# that work leaves (at 19, a seventieth: the fuzzers' build waited for the lab to end). Each session's PID goes
# into $lowered, so that `normal` can give the groups their share back once the lab is done.
lowered=$(mktemp); lab_done=$lowered.done
lowest() {
  setsid --wait bash -c 'echo $$ >> "$1"; [ -e "$2" ] && exec "${@:3}"
    echo 10 > /proc/self/autogroup 2> /dev/null; exec nice -n 10 "${@:3}"' lowest "$lowered" "$lab_done" "$@"
}
# normal: what lowest started gets a normal share of the CPU from now on (lowest's later sessions too). On a
# machine busy with other work a group at nice 10 gets about a tenth of it: the fuzzers' build, niced beside the
# lab, would wait for that work to end. Twice, a second apart, for a session that started meanwhile.
normal() {
  local pid pass
  touch "$lab_done"
  for pass in 1 2; do
    for pid in $(cat "$lowered"); do
      # A session that has ended has no /proc entry: nothing to give back (and no reason to stop the run).
      { echo 0 > "/proc/$pid/autogroup"; } 2> /dev/null || true
      renice -n 0 -g "$pid" > /dev/null 2>&1 || true  # without autogroups, as root
    done
    [ "$pass" = 2 ] || sleep 1
  done
}

# The fuzzers' release build, then their runs, at a low priority beside the lab (in its own build folder;
# the fuzzers' verdict is read once the lab is done).
step lab
builds=""; builds_log=$(mktemp); fuzz_log=$(mktemp); fuzz_rc=$(mktemp)
if [ "$fuzz" != 0 ]; then
  (
    lowest Scripts/fuzz.sh --build-only
    # Twice the seconds beside the lab, where a fuzzer made 43-91 % of the runs it makes alone; the seconds
    # themselves once the lab is done (on a busy machine the build ends after it, and the runs are then the step).
    seconds=$((fuzz * 2)); [ ! -e "$lab_done" ] || seconds=$fuzz
    rc=0; lowest Scripts/fuzz.sh "$seconds" >"$fuzz_log" 2>&1 || rc=$?; echo "$rc" >"$fuzz_rc"
  ) >"$builds_log" 2>&1 & builds=$!
fi
lab_rc=0; lab_line=""
if [ "${MSGPIPE_LAB:-1}" != 0 ]; then
  # A failed setup says why here; lab.sh then tries it once more itself.
  wait "$labsetup" || { cat "$labsetup_log"; echo "test.sh: the lab's setup beside the build failed" >&2; }
  lablog=$(mktemp)
  # The VM at a higher CPU priority than the machine's other work (nice -10 for it and for its session's CPU
  # group): it emulates controllers and links in real time, and starved by a build beside it, it took 36 minutes
  # instead of 22. Our own builds beside it stay at nice 10 (lowest).
  as_root env LAB_MSGPIPE="$release_msgpipe" setsid --wait bash -c \
    'echo -10 > /proc/self/autogroup 2> /dev/null; exec nice -n -10 "$@"' favoured Scripts/lab.sh |
    tee "$lablog" || lab_rc=$?
  lab_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$lablog" | tail -1)
fi
if [ -n "$builds" ]; then
  step "fuzz"  # what of the fuzzers' build and runs the lab did not hide
  normal
  wait "$builds" || { cat "$builds_log"; echo "test.sh: the fuzzers' release build failed" >&2; exit 1; }
fi
if [ "$fuzz" != 0 ]; then
  [ "$(cat "$fuzz_rc")" = 0 ] || { tail -60 "$fuzz_log"; echo "the fuzzer found a crash" >&2; exit 1; }
  grep -E "^(== |Done)" "$fuzz_log"
fi
if [ "$package" != 0 ]; then
  step package
  Scripts/package-test.sh   # as the user: it builds here, and asks sudo only to install and purge
fi
step
echo "test.sh: seconds per step"
printf '  %s\n' "${steps[@]}"
# The lab's verdict stays the last line.
[ -z "$lab_line" ] || echo "$lab_line"
exit "$lab_rc"
