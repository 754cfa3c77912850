#!/bin/bash
# lab-test.sh - msgpipe's guest-side lab suite: runs INSIDE the blelab VM (Scripts/lab.sh starts it with
# `Scripts/blelab.sh -o OUT -- Scripts/lab-test.sh`), from the repository root, against the real kernel
# Bluetooth stack: hci0 (A), hci1 (B), hci2 (C) and hci3 (D) are virtual LE controllers on one virtual air.
# Prints "ok - NAME" / "not ok - NAME" per check, logs to $BLELAB_OUT, and ends with "N passed, N failed".
set -u
A=$BLELAB_ADDR_A; B=$BLELAB_ADDR_B; C=${BLELAB_ADDR_C:-}; D=${BLELAB_ADDR_D:-}; OUT=$BLELAB_OUT
MSGPIPE=${MSGPIPE:-$PWD/.build/debug/msgpipe}
# The lab tool beside it: the raw probes and the fault-injection options (--kill-after-bytes, --drop-after-bytes).
MSGPIPE_LAB=${MSGPIPE_LAB:-${MSGPIPE}-lab}
LABBIN=${LABBIN:-$PWD/.build/lab}
SERVICE=12345678-1234-5678-1234-56789abcdef0
PASSED=0; FAILED=0; SKIPPED=0
: > "$OUT/results.txt"

up() { cut -d' ' -f1 /proc/uptime; }
# LAB_TRACE=1: every command the suite runs, after the time it started, into $OUT/trace.txt (where a check's
# seconds go: Scripts/lab-trace.py sums the gaps by line)
if [ -n "${LAB_TRACE:-}" ]; then
	exec {TRACE_FD}> "$OUT/trace.txt"; BASH_XTRACEFD=$TRACE_FD
	PS4='+ $EPOCHREALTIME $BASHPID ${BASH_SOURCE[0]##*/}:$LINENO ${FUNCNAME[0]:-main} '; set -x
fi
CHECK_T0=$(up)
# took: DT = seconds since the previous check ended (each result line carries it: the lab's time per check)
took() { local t; t=$(up); DT=$(awk "BEGIN{printf \"%.0f\", $t-$CHECK_T0}"); CHECK_T0=$t; }
result() {  # result NAME STATUS [SECONDS]: SECONDS, when given, is the check's own time
	took; DT=${3:-$DT}
	if [ "$2" = 0 ]; then PASSED=$((PASSED + 1)); echo "ok - $1 [$DT s]" | tee -a "$OUT/results.txt"
	else FAILED=$((FAILED + 1)); echo "not ok - $1 [$DT s]" | tee -a "$OUT/results.txt"; fi
}
# section NAME: the checks that follow belong to NAME (one word); each section's seconds and number of checks go
# to $OUT/sections.txt, which Scripts/lab.sh prints as a table at the end ("section" alone closes the last one)
SECTION=""; SECTION_T0=$(up); SECTION_N0=0
section() {
	local t; t=$(up)
	[ -n "$SECTION" ] && echo "$SECTION $(awk "BEGIN{printf \"%.0f\", $t-$SECTION_T0}") $((PASSED + FAILED + SKIPPED - SECTION_N0))" >> "$OUT/sections.txt"
	SECTION=${1:-}; SECTION_T0=$t; SECTION_N0=$((PASSED + FAILED + SKIPPED))
}
: > "$OUT/sections.txt"; : > "$OUT/no_links.txt"
# skip NAME WHY: a check this lab cannot run (counted apart, never as passed)
skip() { SKIPPED=$((SKIPPED + 1)); took; echo "skip - $1 ($2) [$DT s]" | tee -a "$OUT/results.txt"; }
# expect NAME LOGFILE PATTERN... : passes when every pattern occurs in LOGFILE
expect() {
	local name=$1 file=$2 p ok=0; shift 2
	for p in "$@"; do grep -qE -- "$p" "$file" || { echo "   missing /$p/ in $file"; ok=1; }; done
	# A log starts with what its check found (exit codes, times), then what the programs printed.
	[ $ok = 0 ] || { sed 's/^/   | /' "$file" | head -12; [ "$(wc -l < "$file")" -le 12 ] || { echo "   | ..."; sed 's/^/   | /' "$file" | tail -12; }; }
	result "$name" $ok
}
# The Swift lab tests (Tests/LabTests) run from the debug test bundle, which sees the host's build over 9p.
TESTBIN=$(ls -d "$PWD"/.build/debug/*PackageTests.xctest 2>/dev/null | head -1)
# lab_tests FILTER [SKIP]: runs the Swift lab tests whose names match the regular expression FILTER (and not
# SKIP), one at a time. Each test appends "STATUS SECONDS LOGDIR NAME" to $OUT/labtests.results; each becomes a
# result line here, a failing one with its own report (LOGDIR/failure.txt), its notes after it. The bundle's
# whole output goes to $OUT/labtests.log. A bundle that fails without a failing test (a crash) fails too.
lab_tests() {
	local results=$OUT/labtests.results status seconds dir name rc n=0 bad=0
	if [ -z "$TESTBIN" ]; then skip "the Swift lab tests matching $1" "no test build (swift build --build-tests)"; return; fi
	: > "$results"
	echo "== [$(up)] Swift lab tests: --filter '$1'${2:+ --skip '$2'}" | tee -a "$OUT/labtests.log"
	LAB_RESULTS=$results LAB_MSGPIPE=$MSGPIPE LAB_MSGPIPE_LAB=$MSGPIPE_LAB timeout 1800 "$TESTBIN" \
		--testing-library swift-testing --filter "$1" ${2:+--skip "$2"} >> "$OUT/labtests.log" 2>&1; rc=$?
	while read -r status seconds dir name; do
		n=$((n + 1)); [ "$status" = 0 ] || bad=$((bad + 1))
		result "$name" "$status" "$seconds"
		[ "$status" = 0 ] || sed 's/^/   | /' "$dir/failure.txt" 2>/dev/null | head -60
		sed 's/^/   /' "$dir/notes.txt" 2>/dev/null | tee -a "$OUT/results.txt"
	done < "$results"
	if [ "$n" = 0 ] || { [ "$rc" != 0 ] && [ "$bad" = 0 ]; }; then
		tail -20 "$OUT/labtests.log" | sed 's/^/   | /'
		result "the Swift lab tests matching $1 ran ($n tests, bundle exit $rc)" 1
	fi
}
# no_links: waits until no controller has an LE link (an idle link lingers ~2 s after its last socket). After
# 20 s it names the links and ends them (Disconnect, then a power cycle of the controller if that did not do it):
# on a radio a link nobody serves ends at its supervision timeout, btvirt has none, and one stuck link would
# otherwise cost every later check 20 s.
# Each wait's seconds go to $OUT/no_links.txt (Scripts/lab.sh prints their sum: the lab's time spent between checks).
no_links() {
	local i h busy handle t0; t0=$(up)
	for i in $(seq 1 100); do
		# One hcitool for every controller that is up (a down one has no link): a poll costs ~0.15 s here, not 0.6.
		[ "$(hcitool con 2>/dev/null | grep -c LE)" = 0 ] && { echo "$t0 $(up)" >> "$OUT/no_links.txt"; return 0; }
		sleep 0.2
	done
	busy=""
	for h in hci0 hci1 ${C:+hci2} ${D:+hci3}; do [ "$(hcitool -i $h con 2>/dev/null | grep -c LE)" = 0 ] || busy="$busy $h"; done
	echo "$t0 $(up)" >> "$OUT/no_links.txt"
	echo "   links still up after $(awk "BEGIN{printf \"%.0f\", $(up) - $t0}") s on$busy: $(for h in $busy; do hcitool -i $h con 2>/dev/null | grep LE | tr -s ' \t' ' '; done)"
	for h in $busy; do
		for handle in $(hcitool -i $h con 2>/dev/null | sed -n 's/.* LE .* handle \([0-9]*\).*/\1/p'); do
			hcitool -i $h ledc "$handle" > /dev/null 2>&1
		done
	done
	sleep 2
	for h in $busy; do
		[ "$(hcitool -i $h con 2>/dev/null | grep -c LE)" = 0 ] && continue
		echo "   $h: still linked after Disconnect: power cycle"
		btmgmt --index "${h#hci}" power off > /dev/null 2>&1; btmgmt --index "${h#hci}" power on > /dev/null 2>&1
	done
	return 1
}
stop() { kill "$@" 2>/dev/null; wait "$@" 2>/dev/null; }
# wait_bounded PID SECS: waits for PID's exit status, killing it after SECS (a wedged peer fails, not hangs):
# then 124, whatever the killed program returned (listen exits 0 on SIGTERM), and a line saying so
wait_bounded() {
	local fired="$OUT/.watchdog.$1"; rm -f "$fired"
	( sleep "$2"; touch "$fired"; kill "$1" 2>/dev/null || rm -f "$fired" ) & local watchdog=$!
	wait "$1"; local rc=$?
	kill $watchdog 2>/dev/null; wait $watchdog 2>/dev/null
	if [ -e "$fired" ]; then rm -f "$fired"; echo "   pid $1 did not exit within $2 s: killed"; return 124; fi
	return $rc
}
# secs_of JSONFILE [PEER]: the "seconds" of send --json's line (for PEER when given)
secs_of() { grep -h -- "${2:-}" "$1" 2>/dev/null | sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' | head -1; }
# ratio A B: A/B, "?" when a number is missing
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk "BEGIN{ if ($2 > 0) printf \"%.2f\", $1/$2; else print \"?\" }" || echo "?"; }
# wait_file PATH: until PATH exists (listen --out-dir renames a message into place once it is whole), at most 60 s
wait_file() { local i; for i in $(seq 1 300); do [ -e "$1" ] && return 0; sleep 0.2; done; echo "   no $1 after 60 s"; return 1; }
ctl_wait() {  # ctl_wait LOG PATTERN SECS: bounded wait inside a command feeder (prints nothing: its output is the command stream)
	local i
	for ((i = 0; i < $3 * 5; i++)); do grep -qaE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
	return 1
}
# wait_for FILE PATTERN: until PATTERN shows up in FILE (a peer is ready), at most 60 s (slow emulated CPU)
wait_for() {
	local until=$((SECONDS + 60))
	while [ $SECONDS -lt $until ]; do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
	echo "   gave up waiting for /$2/ in $1"; return 1
}

# wait_for_more FILE PATTERN N: until FILE has more than N lines matching PATTERN, at most 60 s
wait_for_more() {
	local until=$((SECONDS + 60))
	while [ $SECONDS -lt $until ]; do [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -gt "$3" ] && return 0; sleep 0.2; done
	echo "   gave up waiting for more than $3 lines /$2/ in $1"; return 1
}

# wait_stopped PID SECS: until PID is stopped (msgpipe-lab send --stop-after-bytes stops itself mid-message), at
# most SECS; fails when it exited or did not stop
wait_stopped() {
	local until=$((SECONDS + $2))
	until [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = T ]; do
		[ -e "/proc/$1" ] && [ $SECONDS -lt "$until" ] || return 1
		sleep 0.1
	done
}
# btmon_sync: returns once btmon.txt holds every frame of the air that came before the call. The monitor hands
# btmon its frames in order, and btmon writes its file in 4 KiB blocks: an LE Encrypt whose plaintext is this
# call's own goes to hci0 (the controller only computes; nothing changes) every 0.2 s until btmon wrote one.
BTMON_SYNCS=0
btmon_sync() {
	local i tag
	BTMON_SYNCS=$((BTMON_SYNCS + 1)); tag=$(printf '%08x' "$BTMON_SYNCS")
	for i in $(seq 1 150); do
		hcitool -i hci0 cmd 0x08 0x0017 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \
			6d 73 67 70 69 70 65 00 00 00 00 00 ${tag:0:2} ${tag:2:2} ${tag:4:2} ${tag:6:2} > /dev/null 2>&1
		grep -q "Plaintext data: 6d7367706970650000000000$tag" "$OUT/btmon.txt" && return 0
		sleep 0.2
	done
	echo "   btmon wrote none of its sync markers in 30 s"; return 1
}
# btmon_connects FROM OUT: btmon's header lines (with times) after line FROM of btmon.txt for LE Create Connection,
# LE (Enhanced) Connection Complete, Add Advertising and LE Set (Extended) Advertising Enable, into OUT: what an
# overlapping connect did (the second Create Connection pending until the peripheral advertised again)
btmon_connects() {
	btmon_sync
	tail -n +"$(($1 + 1))" "$OUT/btmon.txt" |
		grep -E '^[<>@].*(\(0x08\|0x000d\)|\(0x08\|0x000a\)|\(0x08\|0x0039\)|\(0x3e\) plen (19|31)|MGMT Command.*\(0x003e\))' |
		head -40 > "$2"
}
# btmon: what goes over the air, for the checks that read it. BlueZ 5.66's btmon segfaults now and then in a
# long run (in 21 of 44 logged lab runs here, mostly after 1,000 s); it is started again at once, so the checks
# after a crash still see the air. A line in btmon.txt marks each restart.
btmon_watch() {
	local rc
	while :; do
		btmon -T >> "$OUT/btmon.txt" 2>&1; rc=$?
		# (on a line of its own: a crash can leave btmon's last line half written)
		printf '\n== [%s] btmon exited (%s): started again\n' "$(up)" "$rc" >> "$OUT/btmon.txt"
		sleep 0.5
	done
}
: > "$OUT/btmon.txt"
btmon_watch & BTMON=$!
echo "== [$(up)] controllers: A=hci0 $A  B=hci1 $B"

# LAB_ONLY=stockbox (Scripts/lab.sh passes it through) skips checks 1-20 and runs only the stock-box section at
# the end: quicker while working on the D-Bus backend. (Checks 1-20 are deliberately not re-indented.)
# LAB_ONLY=roles runs only checks 25-28 (the peripheral sends, the central receives, several centrals at once)
# and skips checks 1-20 and the stock box. LAB_ONLY=newbluez runs only checks 34-36 (a newer bluetoothd, Tests/LabTests/NewBluez).
# LAB_ONLY=bumble runs only the Bumble section (Google's Bumble as the phone, Scripts/lab-bumble.sh).
# LAB_ONLY=coc runs only the channel section (msgpipe over an LE credit-based channel, Tests/LabTests/Coc).
# LAB_ONLY=bonding runs only the bonding section (a Bumble phone that pairs with bonding, Tests/LabTests/Bonding).
# LAB_ONLY=core runs only checks 1-20 (kernel backend, no bluetoothd).
# LAB_ONLY=check runs only the Swift lab tests matching LAB_CHECK (Scripts/lab.sh --check FILTER).
# LAB_ONLY=kills runs only the kills over Bluetooth (Scripts/lab-kills.sh).
if [ -n "${LAB_ONLY:-}" ] && [ "$LAB_ONLY" != core ]; then
	echo "== LAB_ONLY=${LAB_ONLY}: checks 1-20 skipped"
else
section core

# 1. Swift central (hci1) -> reference C ATT server (hci0, advertising via btmgmt): Exchange MTU + Read.
"$LABBIN/att_server" "$A" 0 > "$OUT/att_server.log" 2>&1 & SRV=$!
wait_for "$OUT/att_server.log" "listening"
timeout 90 "$MSGPIPE_LAB" lab-probe connect --adapter hci1 --to "$A" > "$OUT/t1.log" 2>&1
expect "swift L2CAP central exchanges MTU and reads from the C ATT server" "$OUT/t1.log" \
	"connected to $A" "server MTU 185" "hello-from-att-server"

# 2. The ATT channel of hci0 is held by att_server: a clear error with the remedy, exit status 2.
timeout 60 "$MSGPIPE_LAB" lab-probe serve --adapter hci0 > "$OUT/t2.log" 2>&1; echo "exit $?" >> "$OUT/t2.log"
expect "a busy ATT channel is reported with the remedy" "$OUT/t2.log" "already in use" "stop bluetoothd" "exit 2"
stop $SRV
no_links

# 3. Swift peripheral on hci0 (Add Advertising: name + 128-bit service); msgpipe scan on hci1 lists it.
"$MSGPIPE_LAB" lab-probe serve --adapter hci0 --name msgpipe-lab --service "$SERVICE" --connections 2 \
	> "$OUT/serve_a.log" 2>&1 & PROBE=$!
wait_for "$OUT/serve_a.log" "advertising"
# A scan response can be missed (emulated CPU, duplicate filtering in the controller): one retry.
for try in 1 2; do
	timeout 60 "$MSGPIPE" scan --adapter hci1 --name msgpipe-lab --timeout 8 --json > "$OUT/t3.json" 2> "$OUT/t3.err" && break
	echo "   scan attempt $try found nothing"
done
cat "$OUT/t3.json" "$OUT/t3.err" > "$OUT/t3.log"
expect "msgpipe scan on hci1 lists hci0's advertised name, service, RSSI and distance" "$OUT/t3.log" \
	"\"address\":\"$A\"" '"name":"msgpipe-lab"' "\"services\":\\[\"${SERVICE^^}\"\\]" '"rssi":-?[0-9]+' \
	'"distanceMetres":'
timeout 60 "$MSGPIPE" scan --adapter hci1 --service FFF0 --timeout 3 > "$OUT/t3b.log" 2>&1; echo "exit $?" >> "$OUT/t3b.log"
expect "msgpipe scan filtered by an absent service finds nothing (exit 1)" "$OUT/t3b.log" "exit 1"

# 4. BlueZ's gatttool (hci1) reads handle 3 from the Swift peripheral (connection 1 of 2).
timeout 60 gatttool -i hci1 -b "$A" -t public --char-read -a 0x0003 > "$OUT/t4.log" 2>&1
expect "gatttool reads from the Swift L2CAP peripheral" "$OUT/t4.log" "6d 73 67 70 69 70 65"

# 5. Swift central connects by advertised name (scan, then connect): advertising came back after gatttool left.
#    (Wait for gatttool's link to drop first, or the central may simply reuse that link.)
no_links
timeout 90 "$MSGPIPE_LAB" lab-probe connect --adapter hci1 --to msgpipe-lab > "$OUT/t5.log" 2>&1
expect "swift central finds the peripheral by name after it re-advertised, and exchanges MTU" "$OUT/t5.log" \
	"connected to $A" "server MTU 185" "msgpipe-lab-probe"
wait_bounded $PROBE 60; echo "exit $?" >> "$OUT/serve_a.log"
expect "swift peripheral served two centrals in turn" "$OUT/serve_a.log" \
	"connection from $B" "RX 02 f7 00" "RX 0a 03 00" "exit 0"
no_links

# 6. Reverse roles: Swift peripheral on hci1, Swift central on hci0 by address.
"$MSGPIPE_LAB" lab-probe serve --adapter hci1 --name msgpipe-lab-b --connections 1 > "$OUT/serve_b.log" 2>&1 & PROBE=$!
wait_for "$OUT/serve_b.log" "advertising"
timeout 90 "$MSGPIPE_LAB" lab-probe connect --adapter hci0 --to "$B" > "$OUT/t6.log" 2>&1
expect "reverse roles: swift central on hci0 -> swift peripheral on hci1" "$OUT/t6.log" \
	"connected to $B" "server MTU 185"
stop $PROBE
no_links

# 7. Security medium (SMP Just Works, needs the lab's pairing agent: BLELAB_AUTOCONFIRM=1).
if [ -e "$OUT/.blelab/autoconfirm.log" ]; then
	"$MSGPIPE_LAB" lab-probe serve --adapter hci1 --name msgpipe-sec --security medium > "$OUT/serve_sec.log" 2>&1 & PROBE=$!
	wait_for "$OUT/serve_sec.log" "advertising"
	timeout 90 "$MSGPIPE_LAB" lab-probe connect --adapter hci0 --to "$B" --security medium > "$OUT/t7.log" 2>&1
	expect "security medium: the link pairs and the ATT exchange works encrypted" "$OUT/t7.log" \
		"connected to $B" "server MTU 185" "msgpipe-lab-probe"
	stop $PROBE
fi

# 8. A hostile raw ATT client (malformed, truncated, oversized, out-of-order, seeded random PDUs) neither
#    crashes nor wedges the Swift peripheral: it serves the next client.
btmgmt --index 1 rm-adv 0 > /dev/null 2>&1
no_links
"$MSGPIPE_LAB" lab-probe serve --adapter hci0 --name msgpipe-hostile --connections 0 > "$OUT/serve_h.log" 2>&1 & PROBE=$!
wait_for "$OUT/serve_h.log" "advertising"
timeout 120 "$LABBIN/att_hostile" "$B" "$A" 200 7 > "$OUT/t8.log" 2>&1
no_links   # else the next client may reuse the hostile client's link (one ATT connection)
timeout 90 "$MSGPIPE_LAB" lab-probe connect --adapter hci1 --to msgpipe-hostile >> "$OUT/t8.log" 2>&1
kill -0 $PROBE 2>/dev/null && echo "serve still running" >> "$OUT/t8.log"
stop $PROBE
expect "a hostile raw ATT client neither crashes nor wedges the Swift peripheral" "$OUT/t8.log" \
	"att_hostile: done" "server MTU 185" "serve still running"
no_links

# 9. Goodput baseline: the raw C sender (Write Commands at ATT_MTU 247) to a raw C sink over this virtual
#    link. msgpipe send's goodput is to be reported against it (the controllers have no radio timing).
btmgmt --index 0 advertising on > /dev/null 2>&1
"$LABBIN/att_blast" sink "$A" > "$OUT/blast_sink.log" 2>&1 & SINK=$!
wait_for "$OUT/blast_sink.log" "listening"
BYTES=${LAB_BLAST_BYTES:-131072}
timeout 300 "$LABBIN/att_blast" send "$B" "$A" "$BYTES" > "$OUT/t9.log" 2>&1
wait_bounded $SINK 60; cat "$OUT/blast_sink.log" >> "$OUT/t9.log"
expect "raw ATT baseline: $BYTES bytes of Write Commands arrive" "$OUT/t9.log" "goodput [0-9]+ bytes/s" "got $BYTES bytes"
grep -h "goodput" "$OUT/t9.log" | sed 's/^/   /'
btmgmt --index 0 advertising off > /dev/null 2>&1

no_links

# 10. `msgpipe listen` (the msgpipe GATT service: GATTLink + GATT server over ATTBearer on the kernel's ATT
#     channel): BlueZ's gatttool on hci1 discovers it, its characteristics and descriptors, reads info and
#     writes RX. The listener speaks --format lines, so the written "hi\n" comes out as a message.
MSVC=4d500001-8c5d-4e2b-9f1a-6d7367706970
# gatttool runs back to back may share one LE link (it lingers ~2 s), i.e. one ATT connection: the listener
# serves any number of centrals (no --connections) and is stopped with SIGTERM at the end (exit 0).
"$MSGPIPE" listen --adapter hci0 --name msgpipe-gatt --format lines --json > "$OUT/gatt_listen.json" 2> "$OUT/gatt_listen.log" & GATT=$!
wait_for "$OUT/gatt_listen.log" "advertising"
gt() { timeout 60 gatttool -i hci1 -b "$A" -t public "$@"; }
{ echo "-- primary"; gt --primary; echo "-- characteristics"; gt --characteristics; echo "-- descriptors"; gt --char-desc; } > "$OUT/t10.log" 2>&1
INFO=$(sed -n 's/.*char value handle = \(0x[0-9a-f]*\), uuid = 4d500004.*/\1/p' "$OUT/t10.log" | head -1)
RX=$(sed -n 's/.*char value handle = \(0x[0-9a-f]*\), uuid = 4d500002.*/\1/p' "$OUT/t10.log" | head -1)
{ echo "-- read info $INFO"; gt --char-read -a "${INFO:-0x0000}"; echo "-- write RX $RX"; gt --char-write-req -a "${RX:-0x0000}" -n 68690a; } >> "$OUT/t10.log" 2>&1
no_links
stop $GATT; echo "listen exit $?" >> "$OUT/t10.log"
cat "$OUT/gatt_listen.json" >> "$OUT/t10.log"
expect "gatttool discovers the msgpipe service of msgpipe listen, its characteristics and descriptors" "$OUT/t10.log" \
	"uuid: $MSVC" "uuid = 4d500002-" "uuid = 4d500003-" "uuid = 4d500004-" "uuid = 00002902-"
# The info value is layout 2 (PROTOCOL.md 5.2): listen's L2CAP channel PSM (0x80-0xff, little-endian) comes last.
expect "gatttool reads listen's info characteristic and writes RX; the write comes out as a message" "$OUT/t10.log" \
	"Characteristic value/descriptor: 02 01 08 ([0-9a-f]{2} ){7}[89a-f][0-9a-f] 00 $" "uuid = abdd3056-" "written successfully" \
	'"data":"aGk="' "listen exit 0"

# 11. Goodput of our GATT stack (GATT client -> GATTLink server, Write Commands at ATT_MTU 247) against the
#     raw C baseline of check 9, over the same virtual link (lab-probe gatt-serve counts the raw writes).
"$MSGPIPE_LAB" lab-probe gatt-serve --adapter hci0 --name msgpipe-gatt --connections 0 > "$OUT/gatt_serve.log" 2>&1 & GATT=$!
wait_for "$OUT/gatt_serve.log" "advertising"
timeout 300 "$MSGPIPE_LAB" lab-probe gatt-send --adapter hci1 --to msgpipe-gatt --bytes "$BYTES" > "$OUT/t11.log" 2>&1
no_links
wait_for "$OUT/gatt_serve.log" "received $BYTES bytes"
stop $GATT
cat "$OUT/gatt_serve.log" >> "$OUT/t11.log"
expect "the GATT stack moves $BYTES bytes through GATTLink; the writes showed up as RX packets" "$OUT/t11.log" \
	"goodput [0-9]+ bytes/s" "RX packet 6d 6d" "received $BYTES bytes"
RAW=$(sed -n 's/.*goodput \([0-9]*\) bytes.*/\1/p' "$OUT/t9.log" | head -1)
OURS=$(sed -n 's/.*goodput \([0-9]*\) bytes.*/\1/p' "$OUT/t11.log" | head -1)
[ -n "$RAW" ] && [ -n "$OURS" ] && echo "   goodput: raw C $RAW B/s, msgpipe GATT stack $OURS B/s, ratio $(awk "BEGIN{printf \"%.2f\", $OURS/$RAW}")" | tee -a "$OUT/results.txt"
no_links

# 12. msgpipe send (hci1, central, by advertised name) -> msgpipe listen (hci0, peripheral): a 1 MiB random
#     file arrives byte-identical; then the reverse roles (listen on hci1, send from hci0 by address).
head -c 1048576 /dev/urandom > "$OUT/mib.bin"
"$MSGPIPE" listen --adapter hci0 --name msgpipe-listen --connections 1 > "$OUT/listen_a.bin" 2> "$OUT/listen_a.log" & LST=$!
wait_for "$OUT/listen_a.log" "advertising"
timeout 300 "$MSGPIPE" send --adapter hci1 --to msgpipe-listen --json "$OUT/mib.bin" > "$OUT/t12.json" 2> "$OUT/t12.log"
echo "send exit $?" >> "$OUT/t12.log"
# listen --connections 1 ends once its central left: the channel's accept loop stops with the GATT one.
# 15 s is a hang guard, not a speed test: listen ends ~2 s after send here, the hang it catches never ends.
t12=$(up)
wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t12.log"
awk "BEGIN{ d = $(up) - $t12; printf \"listen ended %.1f s after send\n\", d; if (d < 15) print \"listen ended promptly\" }" >> "$OUT/t12.log"
cmp "$OUT/mib.bin" "$OUT/listen_a.bin" >> "$OUT/t12.log" 2>&1 && echo "byte-identical" >> "$OUT/t12.log"
cat "$OUT/t12.json" "$OUT/listen_a.log" >> "$OUT/t12.log"
expect "msgpipe send (hci1, --to NAME) -> msgpipe listen (hci0): 1 MiB arrives byte-identical; listen --connections 1 then exits" "$OUT/t12.log" \
	"send exit 0" "listen exit 0" "listen ended promptly" "byte-identical" '"bytes":1048576'
no_links
"$MSGPIPE" listen --adapter hci1 --name msgpipe-listen-b --connections 1 > "$OUT/listen_b.bin" 2> "$OUT/listen_b.log" & LST=$!
wait_for "$OUT/listen_b.log" "advertising"
timeout 300 "$MSGPIPE" send --adapter hci0 --to "$B" "$OUT/mib.bin" > "$OUT/t12b.log" 2>&1; echo "send exit $?" >> "$OUT/t12b.log"
wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t12b.log"
cmp "$OUT/mib.bin" "$OUT/listen_b.bin" >> "$OUT/t12b.log" 2>&1 && echo "byte-identical" >> "$OUT/t12b.log"
expect "reverse roles: msgpipe send (hci0, --to ADDRESS) -> msgpipe listen (hci1): 1 MiB byte-identical" "$OUT/t12b.log" \
	"send exit 0" "listen exit 0" "byte-identical"
no_links

# 13. The sender is killed (SIGKILL, as kill -9) after 400 000 bytes went out, then run again: the still running
#     listener writes the message exactly once (a new sender session; the dead one's partial message is never
#     written: its session waits out the resume window at the listener). The re-run may ride the link the
#     killed one left (the kernel keeps an idle link ~2 s), so listen is stopped with SIGTERM 2 s after it.
"$MSGPIPE" listen --adapter hci0 --name msgpipe-once > "$OUT/listen_once.bin" 2> "$OUT/listen_once.log" & LST=$!
wait_for "$OUT/listen_once.log" "advertising"
timeout 300 "$MSGPIPE_LAB" send --adapter hci1 --to msgpipe-once --kill-after-bytes 400000 "$OUT/mib.bin" > "$OUT/t13.log" 2>&1
echo "killed send exit $?" >> "$OUT/t13.log"
timeout 300 "$MSGPIPE" send --adapter hci1 --to msgpipe-once "$OUT/mib.bin" >> "$OUT/t13.log" 2>&1; echo "send again exit $?" >> "$OUT/t13.log"
sleep 2; kill $LST 2>/dev/null
wait_bounded $LST 30; echo "listen exit $?" >> "$OUT/t13.log"
cmp "$OUT/mib.bin" "$OUT/listen_once.bin" >> "$OUT/t13.log" 2>&1 && echo "exactly once, byte-identical" >> "$OUT/t13.log"
cat "$OUT/listen_once.log" >> "$OUT/t13.log"
expect "send killed mid-transfer and run again: listen holds the 1 MiB message exactly once" "$OUT/t13.log" \
	"killed send exit 137" "send again exit 0" "listen exit 0" "exactly once, byte-identical"
no_links

# 13b. The connection drops mid-transfer (listen --drop-after-bytes closes it: the channel, or GATT's link):
#     send reconnects (scan by name, backoff) and Transport resumes the same session's message; it arrives
#     once, byte-identical. A channel's central comes back over the link still up, so listen is stopped with
#     SIGTERM 2 s after send.
"$MSGPIPE_LAB" listen --adapter hci0 --name msgpipe-drop --drop-after-bytes 600000 --verbose > "$OUT/listen_drop.bin" 2> "$OUT/listen_drop.log" & LST=$!
wait_for "$OUT/listen_drop.log" "advertising"
timeout 300 "$MSGPIPE" send --adapter hci1 --to msgpipe-drop --verbose "$OUT/mib.bin" > "$OUT/t13b.log" 2>&1; echo "send exit $?" >> "$OUT/t13b.log"
sleep 2; kill $LST 2>/dev/null
wait_bounded $LST 30; echo "listen exit $?" >> "$OUT/t13b.log"
cmp "$OUT/mib.bin" "$OUT/listen_drop.bin" >> "$OUT/t13b.log" 2>&1 && echo "byte-identical" >> "$OUT/t13b.log"
cat "$OUT/listen_drop.log" >> "$OUT/t13b.log"
expect "a link dropped mid-transfer: send reconnects and Transport resumes; 1 MiB arrives once" "$OUT/t13b.log" \
	"send exit 0" "listen exit 0" "byte-identical" "reconnected to" "dropping the connection"
no_links

# 14. The hostile raw ATT client against msgpipe listen: afterwards msgpipe send still delivers a message.
btmgmt --index 1 rm-adv 0 > /dev/null 2>&1
"$MSGPIPE" listen --adapter hci0 --name msgpipe-hostile-l --json > "$OUT/listen_h.json" 2> "$OUT/listen_h.log" & LST=$!
wait_for "$OUT/listen_h.log" "advertising"
timeout 120 "$LABBIN/att_hostile" "$B" "$A" 200 7 > "$OUT/t14.log" 2>&1
no_links
printf 'after the storm' > "$OUT/storm.txt"
timeout 120 "$MSGPIPE" send --adapter hci1 --to msgpipe-hostile-l "$OUT/storm.txt" >> "$OUT/t14.log" 2>&1; echo "send exit $?" >> "$OUT/t14.log"
kill -0 $LST 2>/dev/null && echo "listen still running" >> "$OUT/t14.log"
stop $LST
cat "$OUT/listen_h.json" >> "$OUT/t14.log"
expect "a hostile raw ATT client neither crashes nor wedges msgpipe listen; the next send is delivered" "$OUT/t14.log" \
	"att_hostile: done" "send exit 0" "listen still running" '"data":"YWZ0ZXIgdGhlIHN0b3Jt"'
no_links

# 15. Goodput of msgpipe send (Transport + GATT, 1 MiB, time from the first write to the acknowledgement as
#     send --json reports it) against the raw C sender of check 9 over the same virtual link. A debug build
#     under TCG: the ratio, not the absolute number, is what this shows.
SECS=$(secs_of "$OUT/t12.json")
if [ -n "$RAW" ] && [ -n "$SECS" ]; then
	SEND=$(awk "BEGIN{printf \"%d\", 1048576/$SECS}")
	echo "   goodput: msgpipe send 1 MiB $SEND B/s vs raw C $RAW B/s, ratio $(awk "BEGIN{printf \"%.2f\", $SEND/$RAW}")" | tee -a "$OUT/results.txt"
fi

# 16. End-to-end encrypted request/serve between the controllers: serve on hci0 with a pre-shared
#     key runs a command; request on hci1 gets its output back sealed (the plaintext never shows in btmon's
#     ATT dump); a client with another key gets exit 6 "not authenticated" and nothing runs for it.
no_links
SKEY="$OUT/secure.key"; OKEY="$OUT/secure_other.key"; rm -rf "$SKEY" "$OKEY" "$OUT/secure_state"
"$MSGPIPE" keygen --out "$SKEY"; "$MSGPIPE" keygen --out "$OKEY"
"$MSGPIPE" serve --adapter hci0 --name msgpipe-secure --key-file "$SKEY" --state "$OUT/secure_state" --json \
	--exec 'echo ran >> '"$OUT/secure_ran"'; printf "approved:"; cat' > "$OUT/secure_serve.log" 2>&1 & SECURE=$!
wait_for "$OUT/secure_serve.log" "advertising"
printf 'pay 12.50 EUR' | timeout 150 "$MSGPIPE" request --adapter hci1 --to "$A" --key-file "$SKEY" --id lab-1 \
	--timeout 120 > "$OUT/t16.log" 2>&1; echo "exit $?" >> "$OUT/t16.log"
no_links
printf 'pay 1.00 EUR' | timeout 150 "$MSGPIPE" request --adapter hci1 --to "$A" --key-file "$OKEY" --id lab-2 \
	--timeout 120 >> "$OUT/t16.log" 2>&1; echo "wrong key exit $?" >> "$OUT/t16.log"
no_links
stop $SECURE
btmon_sync
cat "$OUT/secure_serve.log" >> "$OUT/t16.log"
echo "plaintext on air: $(grep -ciE '70 ?61 ?79 ?20 ?31 ?32 ?2e ?35 ?30' "$OUT/btmon.txt")" >> "$OUT/t16.log"
echo "commands run: $(wc -l < "$OUT/secure_ran" 2>/dev/null || echo 0)" >> "$OUT/t16.log"
expect "encrypted request/serve between the controllers; a wrong key is refused and runs nothing" "$OUT/t16.log" \
	"approved:pay 12.50 EUR" "exit 0$" "wrong key exit 6" '"status":"ok"' "handshake-failed" \
	"plaintext on air: 0" "commands run: 1"
no_links

# 17. Two centrals at once on one peripheral, C peers only: att_server on hci0 serves both at once
#     (poll); hci1's att_client holds its link while hci2's connects (hci0 advertises an instance again: the
#     kernel resumes a connectable instance while a central is linked). Both must get every answer. Stock
#     btvirt (BlueZ 5.66 emulator/btdev.c le_conn_complete) gives the peripheral the central's handle: both
#     links arrive as handle 42 (btdev's own is 43, its Disconnect Complete says so) and the kernel routes
#     both centrals' ACL data to one of them; then this check is reported as a skip with that evidence.
if [ -n "$C" ]; then
	"$LABBIN/att_server" "$A" 2 > "$OUT/two_server.log" 2>&1 & SRV=$!
	wait_for "$OUT/two_server.log" "listening"
	btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
	"$LABBIN/att_client" "$B" "$A" 15 > "$OUT/two_b.log" 2>&1 & CLB=$!
	wait_for "$OUT/two_b.log" "holding"
	btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
	timeout 60 "$LABBIN/att_client" "$C" "$A" > "$OUT/two_c.log" 2>&1; echo "client C exit $?" >> "$OUT/two_c.log"
	wait_bounded $CLB 60; echo "client B exit $?" >> "$OUT/two_b.log"
	btmgmt --index 0 rm-adv 1 > /dev/null 2>&1
	stop $SRV
	cat "$OUT/two_b.log" "$OUT/two_c.log" "$OUT/two_server.log" > "$OUT/t17.log"
	HANDLES=$(sed -n 's/.*hci handle \([0-9]*\).*/\1/p' "$OUT/two_server.log" | tr '\n' ' ')
	echo "   two C centrals at once: server saw connections with HCI handles: ${HANDLES:-none}"
	if grep -q "client B exit 0" "$OUT/t17.log" && grep -q "client C exit 0" "$OUT/t17.log"; then
		expect "two C centrals (hci1, hci2) connected at once to one C peripheral both get every answer" "$OUT/t17.log" \
			"connection 1 from $B" "connection 2 from $C" "still answered after 15 s"
	elif [ "$(echo $HANDLES | wc -w)" = 2 ] && [ "$(echo $HANDLES | tr ' ' '\n' | sort -u | wc -l)" = 1 ]; then
		skip "two C centrals (hci1, hci2) connected at once to one C peripheral both get every answer" \
			"btvirt gave both links HCI handle $(echo $HANDLES | cut -d' ' -f1): the emulator's bug, see docs/LAB.md"
		# The kernel is left with two links of one handle that never go down: power-cycle the controllers.
		for i in 0 1 2; do btmgmt --index $i power off > /dev/null 2>&1; btmgmt --index $i power on > /dev/null 2>&1; done
	else
		result "two C centrals (hci1, hci2) connected at once to one C peripheral both get every answer" 1
		sed 's/^/   | /' "$OUT/t17.log" | grep -v " [RT]X " | tail -30
	fi
	no_links

	# 18. A second central during a transfer: while msgpipe send (hci1) moves 2 MiB into msgpipe listen (hci0, one central at a
	#     time), a second central (gatttool on hci2) tries to connect. Listen no longer advertises while it
	#     serves its one central (the kernel used to resume its instance ~1 s after the connection), so the
	#     second central cannot land on a listener that will not answer it: the transfer arrives intact and
	#     gatttool is either answered or never connected ("no answer for 30 s" was the bug). listen ends after the
	#     message (--count 1), not after one link (--connections 1): a send whose link drops under load comes
	#     back and resumes (docs/LAB.md, the channel that ends on a loaded host); the reconnects are logged.
	head -c 2097152 /dev/urandom > "$OUT/2mib.bin"
	"$MSGPIPE" listen --adapter hci0 --name msgpipe-busy --count 1 > "$OUT/listen_busy.bin" 2> "$OUT/listen_busy.log" & LST=$!
	wait_for "$OUT/listen_busy.log" "advertising"
	timeout 600 "$MSGPIPE" send --adapter hci1 --to msgpipe-busy --json "$OUT/2mib.bin" > "$OUT/t18.json" 2> "$OUT/t18.log" & SND=$!
	for i in $(seq 1 300); do [ "$(hcitool -i hci0 con | grep -c LE)" != 0 ] && break; sleep 0.2; done
	sleep 3
	# gatttool tries for at most 60 s; once send and listen are done (listen then no longer exists, so nothing
	# can leave gatttool unanswered) it gets 2 s more to print what it got, then it is stopped.
	t18=$(up)
	( timeout 60 gatttool -i hci2 -b "$A" -t public --primary > "$OUT/t18_gatttool.log" 2>&1
	  echo "gatttool exit $? after $(awk "BEGIN{printf \"%.1f\", $(up)-$t18}") s" >> "$OUT/t18_gatttool.log" ) & GTT=$!
	wait_bounded $SND 600; echo "send exit $?" >> "$OUT/t18.log"
	wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t18.log"
	for i in $(seq 1 10); do kill -0 $GTT 2>/dev/null || break; sleep 0.2; done
	pkill -f "gatttool -i hci2 -b $A -t public --primary"; wait $GTT
	grep -q "gatttool exit" "$OUT/t18_gatttool.log" ||
		echo "gatttool exit (stopped: still connecting when listen had ended) after $(awk "BEGIN{printf \"%.1f\", $(up)-$t18}") s" >> "$OUT/t18_gatttool.log"
	cmp "$OUT/2mib.bin" "$OUT/listen_busy.bin" >> "$OUT/t18.log" 2>&1 && echo "byte-identical" >> "$OUT/t18.log"
	grep -q "Discover all primary services failed" "$OUT/t18_gatttool.log" || echo "gatttool never left unanswered" >> "$OUT/t18.log"
	cat "$OUT/t18_gatttool.log" "$OUT/t18.json" "$OUT/listen_busy.log" >> "$OUT/t18.log"
	grep "gatttool exit" "$OUT/t18_gatttool.log" | sed 's/^/   second central: /'
	grep -q "reconnecting" "$OUT/t18.log" && echo "   second central: send's link dropped and it resumed: $(grep -m1 "link dropped" "$OUT/t18.log")"
	expect "a second central during a 2 MiB send -> listen neither breaks the transfer nor waits unanswered" "$OUT/t18.log" \
		"send exit 0" "listen exit 0" "byte-identical" "gatttool never left unanswered"
	no_links
else
	skip "two centrals at once" "the lab has no third controller"
fi

# 19. Several centrals at once on one msgpipe listen (`listen --max-centrals`, the
#     concurrent accept loop on BLEPeripheral.connections(maximumConcurrent:)). a) gatttool on hci1 holds its
#     link (interactive) while gatttool on hci2 discovers the service: both answered, two links on hci0 at
#     once. b) msgpipe send from hci1 and hci2, 1 MiB each at the same time: both files intact, and the time
#     of the pair against check 12's one alone. Needs the lab's btvirt (two links on one controller).
if [ -z "$C" ]; then
	skip "several centrals at once on msgpipe listen" "the lab has no third controller"
elif ! "$MSGPIPE" listen --help 2>&1 | grep -q -- "--max-centrals"; then
	skip "several centrals at once on msgpipe listen" "listen has no --max-centrals yet (the coordinator's concurrent listen)"
else
	"$MSGPIPE" listen --adapter hci0 --name msgpipe-many --max-centrals 2 --format lines --json \
		> "$OUT/many_listen.json" 2> "$OUT/many_listen.log" & LST=$!
	wait_for "$OUT/many_listen.log" "advertising"
	# The first gatttool's commands wait for what they need (bounded polls): its link, then the second's end.
	rm -f "$OUT/many_g2.done"
	{ echo connect; ctl_wait "$OUT/many_g1.log" "Connection successful" 30; echo primary
	  ctl_wait "$OUT/many_g2.done" done 90; echo primary
	  for i in $(seq 1 100); do [ "$(grep -ac "$MSVC" "$OUT/many_g1.log")" -ge 2 ] && break; sleep 0.2; done
	  echo disconnect; sleep 1; echo exit; } |
		timeout 150 gatttool -i hci1 -b "$A" -t public -I > "$OUT/many_g1.log" 2>&1 & G1=$!
	wait_for "$OUT/many_g1.log" "$MSVC"
	timeout 60 gatttool -i hci2 -b "$A" -t public --primary > "$OUT/many_g2.log" 2>&1; echo "second exit $?" >> "$OUT/many_g2.log"
	echo "links on hci0 at once: $(hcitool -i hci0 con | grep -c LE)" >> "$OUT/many_g2.log"
	echo done > "$OUT/many_g2.done"
	wait_bounded $G1 150
	echo "first central answered $(grep -o "$MSVC" "$OUT/many_g1.log" | wc -l) times" >> "$OUT/many_g2.log"
	cat "$OUT/many_g2.log" > "$OUT/t19.log"
	expect "two gatttool centrals connected at once to msgpipe listen --max-centrals 2 are both answered" "$OUT/t19.log" \
		"second exit 0" "uuid: $MSVC" "links on hci0 at once: 2" "first central answered [2-9] times"
	no_links
	stop $LST
	no_links

	head -c 1048576 /dev/urandom > "$OUT/mib_c.bin"
	rm -rf "$OUT/many_out"; mkdir -p "$OUT/many_out"
	"$MSGPIPE" listen --adapter hci0 --name msgpipe-many --max-centrals 2 --connections 2 --out-dir "$OUT/many_out" \
		> /dev/null 2> "$OUT/many_listen2.log" & LST=$!
	wait_for "$OUT/many_listen2.log" "advertising"
	t19=$(up)
	timeout 600 "$MSGPIPE" send --adapter hci1 --to msgpipe-many --json --verbose "$OUT/mib.bin" > "$OUT/t19b_b.json" 2> "$OUT/t19b_b.log" & S1=$!
	# hci2 starts once hci1's link is up: started together, hci1's Create Connection hung in the emulator (one run:
	# five 20 s connects failed while hci2 finished in 3.3 s, and hci1 stayed wedged through check 20), as two
	# connects at once did in checks 25, 25f and 33. Both transfers still run at the same time.
	wait_for "$OUT/t19b_b.log" "link connected"
	timeout 600 "$MSGPIPE" send --adapter hci2 --to msgpipe-many --json "$OUT/mib_c.bin" > "$OUT/t19b_c.json" 2> "$OUT/t19b_c.log" & S2=$!
	wait $S1; echo "send B exit $?" > "$OUT/t19b.log"
	wait $S2; echo "send C exit $?" >> "$OUT/t19b.log"
	PAIR=$(awk "BEGIN{printf \"%.1f\", $(up)-$t19}")
	wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t19b.log"
	for f in "$OUT"/many_out/*; do
		cmp -s "$f" "$OUT/mib.bin" && echo "B's file intact" >> "$OUT/t19b.log"
		cmp -s "$f" "$OUT/mib_c.bin" && echo "C's file intact" >> "$OUT/t19b.log"
	done
	cat "$OUT/t19b_b.json" "$OUT/t19b_c.json" "$OUT/many_listen2.log" >> "$OUT/t19b.log"
	echo "   two sends of 1 MiB at once: $PAIR s for the pair (wall clock, from starting the first); one alone: ${SECS:-?} s (check 12, first write to acknowledgement)" | tee -a "$OUT/results.txt"
	expect "two msgpipe sends (hci1, hci2) of 1 MiB each at once into one listen: both files intact" "$OUT/t19b.log" \
		"send B exit 0" "send C exit 0" "listen exit 0" "B's file intact" "C's file intact"
	no_links

	# 19c. Two centrals started at the same instant (both Create Connections in flight at once): the lab's btvirt
	#      keeps a Create Connection pending until its target advertises, as a radio does, and a central tries a
	#      failed first connect again within --connect-timeout; both are served.
	head -c 262144 "$OUT/mib.bin" > "$OUT/kib256_b.bin"; head -c 262144 "$OUT/mib_c.bin" > "$OUT/kib256_c.bin"
	rm -rf "$OUT/same_out"; mkdir -p "$OUT/same_out"
	"$MSGPIPE" listen --adapter hci0 --name msgpipe-same --max-centrals 2 --connections 2 --out-dir "$OUT/same_out" --verbose \
		> /dev/null 2> "$OUT/same_listen.log" & LST=$!
	wait_for "$OUT/same_listen.log" "advertising"
	BTMON_FROM=$(wc -l < "$OUT/btmon.txt")
	t19c=$(up)
	timeout 120 "$MSGPIPE" send --adapter hci1 --to msgpipe-same --json --verbose "$OUT/kib256_b.bin" > "$OUT/t19c_b.json" 2> "$OUT/t19c_b.log" & S1=$!
	timeout 120 "$MSGPIPE" send --adapter hci2 --to msgpipe-same --json --verbose "$OUT/kib256_c.bin" > "$OUT/t19c_c.json" 2> "$OUT/t19c_c.log" & S2=$!
	wait $S1; echo "send B exit $?" > "$OUT/t19c.log"
	wait $S2; echo "send C exit $?" >> "$OUT/t19c.log"
	echo "both done after $(awk "BEGIN{printf \"%.1f s\", $(up)-$t19c}")" >> "$OUT/t19c.log"
	wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t19c.log"
	for f in "$OUT"/same_out/*; do
		cmp -s "$f" "$OUT/kib256_b.bin" && echo "B's file intact" >> "$OUT/t19c.log"
		cmp -s "$f" "$OUT/kib256_c.bin" && echo "C's file intact" >> "$OUT/t19c.log"
	done
	btmon_connects "$BTMON_FROM" "$OUT/t19c_btmon.txt"
	grep -h "trying again\|connected to" "$OUT/t19c_b.log" "$OUT/t19c_c.log" | sed 's/^/   19c: /' >> "$OUT/t19c.log"
	cat "$OUT/t19c_b.json" "$OUT/t19c_c.json" "$OUT/t19c_b.log" "$OUT/t19c_c.log" "$OUT/same_listen.log" "$OUT/t19c_btmon.txt" >> "$OUT/t19c.log"
	echo "   two sends started at the same instant: $(grep '^both done' "$OUT/t19c.log"); retries: $(grep -c 'trying again' "$OUT/t19c.log")" | tee -a "$OUT/results.txt"
	expect "two msgpipe sends (hci1, hci2) started at the same instant into one listen: both served, both files intact" "$OUT/t19c.log" \
		"send B exit 0" "send C exit 0" "listen exit 0" "B's file intact" "C's file intact"
	no_links
fi

# 19d. An LE credit-based L2CAP channel (the phones' fast path): msgpipe-lab's coc-serve on hci0 (a dynamic PSM)
#      takes Transport over StreamLink (PROTOCOL.md 7.1 frames) from coc-send on hci1: 1 MiB acknowledged, the
#      CRC-32 the same on both sides; l2test's raw LE channel between the same controllers is the baseline.
if [ "${LAB_COC:-1}" = 0 ]; then
	skip "1 MiB through Transport over an LE credit-based channel (StreamLink)" "LAB_COC=0"
else
	no_links
	# A channel rides an LE link, which the central creates to a connectable advertiser: hci0's own advertising.
	btmgmt --index 0 connectable on > /dev/null 2>&1; btmgmt --index 0 advertising on > /dev/null 2>&1
	"$MSGPIPE_LAB" lab-probe coc-serve --adapter hci0 > "$OUT/coc_serve.log" 2>&1 & COC=$!
	wait_for "$OUT/coc_serve.log" "listening on hci0 PSM"
	PSM=$(sed -n 's/.*PSM \(0x[0-9a-f]*\).*/\1/p' "$OUT/coc_serve.log" | head -1)
	timeout 300 "$MSGPIPE_LAB" lab-probe coc-send --adapter hci1 --to "$A" --psm "$((PSM))" --bytes 1048576 \
		> "$OUT/coc_send.log" 2>&1; echo "coc-send exit $?" > "$OUT/t19d.log"
	wait_bounded $COC 30; echo "coc-serve exit $?" >> "$OUT/t19d.log"
	SENT_CRC=$(sed -n 's/.*acknowledged.*crc32 \([0-9a-f]*\).*/\1/p' "$OUT/coc_send.log")
	grep -q "crc32 ${SENT_CRC:-none}\$" "$OUT/coc_serve.log" && echo "same crc32 on both sides" >> "$OUT/t19d.log"
	grep -c "LE Connection Request\|LE Credit Based Connection\|LE Flow Control Credit" "$OUT/btmon.txt" |
		sed 's/^/LE credit-based signalling in btmon: /' >> "$OUT/t19d.log"
	cat "$OUT/coc_serve.log" "$OUT/coc_send.log" >> "$OUT/t19d.log"
	COC_RATE=$(sed -n 's/.* s, \([0-9]*\) B\/s.*/\1/p' "$OUT/coc_send.log")
	no_links
	# The raw baseline: l2test's LE channel, 1 MiB in 512-byte SDUs.
	l2test -r -V le_public -P 133 -i hci0 > "$OUT/l2test_r.log" 2>&1 & L2R=$!
	sleep 1
	t_l2=$(up)
	timeout 120 l2test -s -V le_public -P 133 -i hci1 -b 512 -N 2048 "$A" > "$OUT/l2test_s.log" 2>&1
	echo "l2test send exit $?" >> "$OUT/l2test_s.log"
	L2_SECS=$(awk "BEGIN{printf \"%.2f\", $(up)-$t_l2}")
	stop $L2R
	btmgmt --index 0 advertising off > /dev/null 2>&1
	echo "   LE credit-based channel: Transport over StreamLink ${COC_RATE:-?} B/s for 1 MiB; l2test raw 1 MiB sent in ${L2_SECS} s ($(awk "BEGIN{printf \"%d\", 1048576/$L2_SECS}") B/s, connect included)" | tee -a "$OUT/results.txt"
	expect "1 MiB through Transport over an LE credit-based channel (StreamLink), acknowledged, same CRC-32" "$OUT/t19d.log" \
		"coc-send exit 0" "coc-serve exit 0" "same crc32 on both sides"
	no_links
fi

# 20. BLELink's own API for several centrals (Tests/BLELinkTests/KernelPeripheralLabTests, skipped outside the
#     lab): BLEPeripheral on hci0 hands out the centrals on hci1 and hci2 at once (both links carry their own
#     PDUs), advertises nothing at its maximum of two (a third accept times out), and takes hci1 again after
#     it left. Needs the lab's btvirt (check 17 passed) and the test build (swift build --build-tests).
TESTBIN=$(ls -d "$PWD"/.build/debug/*PackageTests.xctest 2>/dev/null | head -1)
if [ -z "$C" ] || [ -z "$TESTBIN" ] || ! grep -q "^ok - two C centrals" "$OUT/results.txt"; then
	skip "BLEPeripheral serves two centrals at once (KernelPeripheralLabTests)" \
		"needs three controllers, the lab's btvirt and the test build (swift build --build-tests)"
else
	no_links
	timeout 300 "$TESTBIN" --testing-library swift-testing --filter KernelPeripheralLabTests > "$OUT/t20.log" 2>&1
	echo "exit $?" >> "$OUT/t20.log"
	expect "BLEPeripheral serves two centrals at once, stops advertising at its maximum, takes one again after it left" \
		"$OUT/t20.log" "twoCentralsAtOnceThenRoomAgainWhenOneLeaves.*passed" "exit 0"
	no_links
fi

fi  # LAB_ONLY (checks 1-20)

# msgpipe over an LE credit-based channel: LAB_ONLY=coc runs only it;
# LAB_COC=0 leaves it (and check 19d) out of the full run.
# Tests/LabTests/Coc; its test beside bluetoothd last and only with LAB_ONLY=coc (later sections need bluetoothd gone).
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_COC:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = coc ]; then
section coc
lab_tests 'Lab/Coc/' 'besideBluetoothd'
[ "${LAB_ONLY:-}" = coc ] && lab_tests 'Lab/Coc/besideBluetoothd'
fi  # LAB_ONLY (coc)

# LAB_ONLY=check (Scripts/lab.sh --check FILTER): only the Swift lab tests matching LAB_CHECK.
if [ "${LAB_ONLY:-}" = check ]; then
section check
lab_tests "$LAB_CHECK"
fi  # LAB_ONLY (check)

if [ -z "${LAB_ONLY:-}" ] || [ "${LAB_ONLY:-}" = roles ]; then
section roles
. "$PWD/Scripts/lab-roles.sh"
fi  # LAB_ONLY (checks 25-28)

# Google's Bumble as the phone (Scripts/lab-bumble.sh, kernel backend, about 1.5-2.5 minutes): part of the full run
# (LAB_BUMBLE=0 leaves it out); LAB_ONLY=bumble runs only it.
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_BUMBLE:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = bumble ]; then
section bumble
. "$PWD/Scripts/lab-bumble.sh"
fi  # LAB_ONLY (Bumble)
# A phone that pairs with bonding (Tests/LabTests/Bonding, kernel backend, Bumble as the phone): LAB_ONLY=bonding
# runs only it; the full run includes it unless LAB_BONDING=0. Its lost bond (boxLostTheBond) last, and only with
# LAB_ONLY=bonding or LAB_BONDING_LOST=1: the guest kernel oopses in it, which must not disturb the sections after it.
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_BONDING:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = bonding ]; then
section bonding
if ! "${BLELAB_DIR:-/tmp/blelab}/bumble/bin/python" -c 'import bumble' > /dev/null 2>&1; then
	skip "bonding: a Bumble phone pairs with bonding" "no Bumble in ${BLELAB_DIR:-/tmp/blelab}/bumble (a venv of Debian's python3 with pip install bumble)"
else
	lab_tests 'Lab/Bonding/' 'boxLostTheBond'
	BOND_LOST_DEFAULT=0; [ "${LAB_ONLY:-}" = bonding ] && BOND_LOST_DEFAULT=1
	if [ "${LAB_BONDING_LOST:-$BOND_LOST_DEFAULT}" = 0 ]; then
		skip "a phone whose bond the box lost (boxLostTheBond)" "not in the full run (the guest kernel oopses in it; LAB_ONLY=bonding or LAB_BONDING_LOST=1 runs it)"
	else
		lab_tests 'Lab/Bonding/boxLostTheBond'
	fi
fi
fi  # LAB_ONLY (bonding)

if [ -z "${LAB_ONLY:-}" ] || [ "${LAB_ONLY:-}" = stockbox ]; then

# ======================================================================================== stock box ==
# A stock Linux box: `dbus-daemon --system` and BlueZ's bluetoothd (Debian's 5.66) own the adapters before
# anything of ours starts, as on every Raspberry Pi OS, Debian and Ubuntu box. Checks 1-20 bind the kernel's
# ATT channel themselves and need bluetoothd NOT running, so this section comes last (LAB_ONLY=stockbox runs
# only it). Logs in OUT: dbus-daemon.log, bluetoothd.log (bluetoothd -n -d), stockbox_*.log, t21*.log, t22.log.
section stockbox
echo "== [$(up)] stock box: dbus-daemon --system and bluetoothd take the adapters"
no_links
# blelab.sh leaves hci0's global advertising setting on (checks 1-20 use it); on a stock box it is off, and it
# would override the advertisements registered with bluetoothd.
for i in 0 1 2; do btmgmt --index $i advertising off; btmgmt --index $i rm-adv 0; done > /dev/null 2>&1
STOCK_ADAPTERS="hci0 hci1${C:+ hci2}"
powered_all() {
	local h
	for h in $STOCK_ADAPTERS; do
		[ "$(busctl --system get-property org.bluez /org/bluez/$h org.bluez.Adapter1 Powered 2>/dev/null)" = "b true" ] || return 1
	done
}
# power_all: powers every adapter through bluetoothd (it may have already: AutoEnable); at most 30 s
power_all() {
	local until=$((SECONDS + 30)) h
	while [ $SECONDS -lt $until ]; do
		powered_all && return 0
		for h in $STOCK_ADAPTERS; do
			busctl --system set-property org.bluez /org/bluez/$h org.bluez.Adapter1 Powered b true > /dev/null 2>&1
		done
		sleep 0.2
	done
	return 1
}
mkdir -p /run/dbus
[ -s /etc/machine-id ] || dbus-uuidgen --ensure=/etc/machine-id
t_sb=$(up)
dbus-daemon --system --fork --print-pid > "$OUT/dbus-daemon.pid" 2> "$OUT/dbus-daemon.log"
DBUS_PID=$(head -1 "$OUT/dbus-daemon.pid" 2>/dev/null)
# LAB_GATT_CHANNELS=N runs every bluetoothd with main.conf's [GATT] Channels = N (1: no EATT, only the fixed
# ATT channel; Debian's default is 3, i.e. EATT where both sides support it).
BTD_CONF=()
if [ -n "${LAB_GATT_CHANNELS:-}" ]; then
	printf '[GATT]\nChannels = %s\n' "$LAB_GATT_CHANNELS" > "$OUT/main.conf"
	BTD_CONF=(-f "$OUT/main.conf")
	echo "   stock box: bluetoothd with [GATT] Channels = $LAB_GATT_CHANNELS" | tee -a "$OUT/results.txt"
fi
t_btd=$(up)
/usr/libexec/bluetooth/bluetoothd -n -d "${BTD_CONF[@]}" > "$OUT/bluetoothd.log" 2>&1 & BTD=$!
SB_NAME=""; SB_POWERED=""
until=$((SECONDS + 30))
while [ $SECONDS -lt $until ]; do
	# (`busctl status org.bluez` fails here, "Failed to get credentials: No medium found": no systemd/cgroups.)
	[ "$(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s org.bluez 2>/dev/null)" = "b true" ] &&
		{ SB_NAME=$(up); break; }
	sleep 0.1
done
# The adapters' objects come once bluetoothd has read the controllers through mgmt; then power them (bluetoothd
# may already have: AutoEnable).
until=$((SECONDS + 30))
while [ -n "$SB_NAME" ] && [ $SECONDS -lt $until ]; do
	powered_all && { SB_POWERED=$(up); break; }
	for h in $STOCK_ADAPTERS; do
		busctl --system set-property org.bluez /org/bluez/$h org.bluez.Adapter1 Powered b true > /dev/null 2>&1
	done
	sleep 0.2
done
sb_secs() { [ -n "$2" ] && awk "BEGIN{printf \"%.2f s\", $2-$1}" || echo "never"; }
echo "   stock box: dbus-daemon up in $(sb_secs "$t_sb" "$t_btd"); org.bluez on the bus $(sb_secs "$t_btd" "$SB_NAME") after bluetoothd started; $STOCK_ADAPTERS powered $(sb_secs "$t_btd" "$SB_POWERED") after" |
	tee -a "$OUT/results.txt"
bluetoothctl list > "$OUT/t21.log" 2>&1
echo "bluetoothd $(bluetoothd --version 2>/dev/null)" >> "$OUT/t21.log"
[ -n "$SB_POWERED" ] && echo "all powered" >> "$OUT/t21.log"
expect "stock box: dbus-daemon and bluetoothd up, bluetoothctl lists hci0 and hci1, all powered" "$OUT/t21.log" \
	"Controller $A" "Controller $B" "all powered"

# 21b. The arrangement works end to end with BlueZ's own client: bluetoothctl on hci0 registers an advertisement
#      (LEAdvertisingManager1, name msgpipe-ctl), bluetoothctl on hci1 scans (Adapter1.StartDiscovery) and sees
#      it. Each bluetoothctl reads its commands from a pipe that waits for what it needs (bounded polls).
#      "discoverable on": bluetoothd's discovery without a filter (bluetoothctl's scan, a desktop's) ignores LE
#      advertisers without the LE General Discoverable flag (src/adapter.c device_is_discoverable).
rm -f "$OUT/t21b.done"
{
	ctl_wait "$OUT/stockbox_adv.log" "Controller $A" 10
	echo "select $A"; echo "menu advertise"; echo "name msgpipe-ctl"; echo "discoverable on"; echo "back"
	echo "advertise on"
	ctl_wait "$OUT/t21b.done" "done" 90
	echo "advertise off"; sleep 0.5; echo "quit"
} | timeout 120 bluetoothctl > "$OUT/stockbox_adv.log" 2>&1 & ADV=$!
wait_for "$OUT/stockbox_adv.log" "Advertising object registered|Failed to register"
{
	ctl_wait "$OUT/stockbox_scan.log" "Controller $B" 10
	echo "select $B"; echo "scan on"
	ctl_wait "$OUT/stockbox_scan.log" "Device $A.*msgpipe-ctl|Device $A Name: msgpipe-ctl" 40
	echo "scan off"; echo "devices"; sleep 0.5; echo "quit"
} | timeout 90 bluetoothctl > "$OUT/stockbox_scan.log" 2>&1
echo "done" > "$OUT/t21b.done"
wait_bounded $ADV 30
sed 's/\x1b\[[0-9;]*m//g' "$OUT/stockbox_adv.log" "$OUT/stockbox_scan.log" > "$OUT/t21b.log"
expect "stock box: bluetoothctl on hci1 scans and finds the advertisement bluetoothctl registered on hci0" "$OUT/t21b.log" \
	"Advertising object registered" "Device $A.*msgpipe-ctl|Device $A Name: msgpipe-ctl"
no_links

# 22. msgpipe's BlueZ peripheral against the real bluetoothd (Tests/BlueZTests/BlueZPeripheralLabTests, run from
#     the test build like check 20; BLELAB_STOCKBOX=1 enables it): BlueZPeripheral.start registers the msgpipe
#     service and its advertisement on hci0 (time printed); gatttool on hci1 discovers the service; bleak (PyPI,
#     Tests/lab/bleak_central.py) on hci1 scans, connects, subscribes, writes 20 packets up to ATT_MTU-3 that
#     arrive whole on the AcquiredLink, and receives a notification of exactly maximumPacketSize (ATT_MTU-5)
#     bytes whole: the MTU-5 choice against bluetoothd 5.66.
TESTBIN=$(ls -d "$PWD"/.build/debug/*PackageTests.xctest 2>/dev/null | head -1)
SB_PYTHON=$(command -v python3)
BLEAK_WHY=""
if [ -z "$SB_PYTHON" ]; then
	BLEAK_WHY="no python3 in the lab"
elif ! PYTHONPATH=${BLELAB_DIR:-/tmp/blelab}/python "$SB_PYTHON" -c 'import bleak' > "$OUT/bleak_import.log" 2>&1; then
	BLEAK_WHY="bleak is not installed: Scripts/blelab.sh --setup-bleak (pip install --target \$BLELAB_DIR/python bleak) failed or was not run"
fi
if [ -z "$SB_POWERED" ] || [ -z "$TESTBIN" ]; then
	skip "BlueZPeripheral registered with bluetoothd: gatttool and bleak (BlueZPeripheralLabTests)" \
		"needs bluetoothd up with powered adapters and the test build (swift build --build-tests)"
else
	if [ -z "$BLEAK_WHY" ]; then
		export PYTHONPATH=${BLELAB_DIR:-/tmp/blelab}/python BLELAB_PYTHON=$SB_PYTHON
		export BLELAB_BLEAK_SCRIPT=$PWD/Tests/lab/bleak_central.py
	fi
	# What bluetoothd on hci1 emits on D-Bus (the Value bleak is notified with): tells a notification bleak
	# dropped apart from one that never arrived (the test then records a known issue, not a failure).
	dbus-monitor --system "type='signal',member='PropertiesChanged',path_namespace='/org/bluez/hci1'" \
		> "$OUT/t22_dbus.log" 2>&1 & MON=$!
	BLELAB_DBUS_MONITOR=$OUT/t22_dbus.log BLELAB_STOCKBOX=1 timeout 400 "$TESTBIN" --testing-library swift-testing \
		--filter BlueZPeripheralLabTests > "$OUT/t22.log" 2>&1
	echo "exit $?" >> "$OUT/t22.log"
	stop $MON
	grep -E "^stockbox: (BlueZPeripheral.start|AcquiredLink|received|bluetoothd)|^(found|connected ATT_MTU|wrote|connect attempt) " "$OUT/t22.log" |
		sed 's/^/   /' | tee -a "$OUT/results.txt"
	expect "stock box: gatttool on hci1 discovers the msgpipe service BlueZPeripheral registered with bluetoothd on hci0" \
		"$OUT/t22.log" "gatttoolFromHci1FindsTheRegisteredService.*passed"
	# bluetoothd 5.66's EATT now and then drops the link during bleak's service discovery (docs/LAB.md); when it
	# did in every one of bleak's tries, nothing of msgpipe was exercised: reported as a skip with that evidence.
	if [ -z "$BLEAK_WHY" ] && grep -qE "^[[:space:]]*error: BleakError: failed to discover services, device disconnected" "$OUT/t22.log"; then
		BLEAK_WHY="bluetoothd 5.66 dropped the link during bleak's service discovery in all of its tries (EATT, not msgpipe)"
	fi
	if [ -n "$BLEAK_WHY" ]; then
		skip "stock box: bleak central -> BlueZPeripheral: packets whole both ways, notification of ATT_MTU-5" "$BLEAK_WHY"
	else
		expect "stock box: bleak central -> BlueZPeripheral: packets whole both ways, notification of ATT_MTU-5" \
			"$OUT/t22.log" "bleakCentralWritesAndReceivesWholePackets.*passed" "exit 0"
	fi
	unset PYTHONPATH
fi
no_links

# 23-24. msgpipe's own commands on the D-Bus backend beside bluetoothd, hci1 a central that met hci0 before
#     (checks 21-22 left hci0 among hci1's known devices, as a phone the box met yesterday): it must be found
#     again by name.
#     24. scan --backend bluez --adapter hci1 --name lists hci0's listen (address, name, RSSI)
#     23. listen --backend bluez --adapter hci0 <- send --backend bluez --adapter hci1 --to NAME: 1 MiB
#         byte-identical (bluetoothd at -d: every PDU logged), over the L2CAP channel listen publishes: send reads
#         the PSM over D-Bus and opens the kernel socket beside bluetoothd's connection
#     23b. bluetoothd stops and comes back (now without -d) while listen keeps running: listen registers again
#         ("bluetoothd restarted: registered again") and takes a second 1 MiB byte-identical; its time is the
#         stock-box goodput set against check 12's kernel backend in the same run.
#     (A btvirt that reported an advertiser only right after a scan enable raced the kernel's discovery state
#     and hid it from bluetoothd's discovery in some runs; the lab's btvirt reports every 500 ms, docs/LAB.md.)
if ! "$MSGPIPE" listen --help 2>&1 | grep -q -- "--backend"; then
	skip "stock box: msgpipe listen/send/scan --backend bluez" "msgpipe has no --backend yet"
else
	[ -e "$OUT/mib.bin" ] || head -c 1048576 /dev/urandom > "$OUT/mib.bin"
	no_links
	"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-sb --verbose --out-dir "$OUT/sb_inbox" \
		> /dev/null 2> "$OUT/sb_listen.log" & LST=$!
	wait_for "$OUT/sb_listen.log" "advertising"
	# 24 first, while listen advertises and before a central connects to it.
	timeout 60 "$MSGPIPE" scan --backend bluez --adapter hci1 --name msgpipe-sb --timeout 10 --json \
		> "$OUT/t24.json" 2> "$OUT/t24.err"; echo "scan exit $?" >> "$OUT/t24.err"
	cat "$OUT/t24.json" "$OUT/t24.err" > "$OUT/t24.log"
	expect "stock box: msgpipe scan --backend bluez on hci1 lists hci0's listen (a device hci1 knew)" "$OUT/t24.log" \
		"\"address\":\"$A\"" '"name":"msgpipe-sb"' "scan exit 0"
	# 24b. msgpipe scan beside another client's discovery: bluetoothctl's scan on hci1 holds a discovery session
	#      of its own; msgpipe scan runs through bluetoothd, then on the kernel backend (mgmt); afterwards hci1
	#      still discovers (Adapter1.Discovering true; bluetoothd may take a few seconds to restart the remaining
	#      session's discovery when the merged filter changed: the time is logged).
	rm -f "$OUT/t24b.done"
	{
		ctl_wait "$OUT/t24b_ctl.log" "Controller $B" 10
		echo "select $B"; echo "scan on"
		ctl_wait "$OUT/t24b.done" "done" 120
		echo "scan off"; sleep 0.5; echo "quit"
	} | timeout 150 bluetoothctl > "$OUT/t24b_ctl.log" 2>&1 & CTL=$!
	wait_for "$OUT/t24b_ctl.log" "Discovering: yes"
	discovering() {
		dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci1 org.freedesktop.DBus.Properties.Get \
			string:org.bluez.Adapter1 string:Discovering 2>&1 | grep -oE "boolean (true|false)|Error.*"
	}
	echo "before: $(discovering)" > "$OUT/t24b.log"
	for backend in bluez kernel; do
		timeout 30 "$MSGPIPE" scan --backend $backend --adapter hci1 --timeout 4 > /dev/null 2>> "$OUT/t24b.log"
		echo "scan --backend $backend exit $?" >> "$OUT/t24b.log"
		T0=$SECONDS
		for i in $(seq 1 60); do [ "$(discovering)" = "boolean true" ] && break; sleep 0.25; done
		echo "after $backend: $(discovering) (waited $((SECONDS - T0)) s)" >> "$OUT/t24b.log"
	done
	echo done > "$OUT/t24b.done"; wait_bounded $CTL 20
	sed 's/\x1b\[[0-9;]*m//g' "$OUT/t24b_ctl.log" | grep -E "Discovering|Discovery" >> "$OUT/t24b.log"
	grep "^after" "$OUT/t24b.log" | sed 's/^/   stock box: discovering /' | tee -a "$OUT/results.txt"
	expect "stock box: msgpipe scan (through bluetoothd, then on the kernel backend) beside bluetoothctl's scan on hci1 leaves hci1 discovering" \
		"$OUT/t24b.log" "^before: boolean true" "^after bluez: boolean true" "^after kernel: boolean true"
	t23_send() {
		timeout 300 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-sb --json --verbose "$OUT/mib.bin" \
			> "$OUT/t23.json" 2> "$OUT/t23.err"; echo "send exit $?" >> "$OUT/t23.err"
	}
	t23_send
	# Debian's bluetoothd 5.66 segfaults now and then here, in its own GATT client set-up for the new link
	# (docs/LAB.md). Then it is started again, as a service manager would, and the send runs once more; the
	# listen must have registered again by itself. The line in results.txt says it happened.
	if ! grep -q "^send exit 0$" "$OUT/t23.err" && ! kill -0 "$BTD" 2> /dev/null; then
		wait "$BTD"; t23_btd=$?
		cp "$OUT/t23.err" "$OUT/t23_first.err"
		echo "   stock box: bluetoothd died by itself (exit $t23_btd) during check 23's send: started again, the send run once more" |
			tee -a "$OUT/results.txt"
		/usr/libexec/bluetooth/bluetoothd -n -d "${BTD_CONF[@]}" >> "$OUT/bluetoothd.log" 2>&1 & BTD=$!
		power_all
		wait_for "$OUT/sb_listen.log" "registered again"
		no_links
		t23_send
	fi
	wait_file "$OUT/sb_inbox/00000001.msg"
	cmp "$OUT/mib.bin" "$OUT/sb_inbox/00000001.msg" > "$OUT/t23.cmp" 2>&1 && echo "byte-identical" >> "$OUT/t23.cmp"
	cat "$OUT/t23.json" "$OUT/t23.err" "$OUT/t23.cmp" > "$OUT/t23.log"
	SB_SECS=$(secs_of "$OUT/t23.json")
	echo "   stock box: 1 MiB through bluetoothd (-d) on both sides in ${SB_SECS:-?} s (first write to acknowledgement)" | tee -a "$OUT/results.txt"
	expect "stock box: msgpipe send --backend bluez (hci1, --to NAME) -> listen --backend bluez (hci0): 1 MiB byte-identical over the L2CAP channel" \
		"$OUT/t23.log" "send exit 0" "byte-identical" '"link":"l2cap"' "data over l2cap channel PSM 0x[89a-f][0-9a-f]"
	no_links

	# 23b. bluetoothd restarts under the running listen (the counts: a restart in check 23 logged these lines once).
	sb_left=$(grep -c "bluetoothd left the bus" "$OUT/sb_listen.log"); sb_again=$(grep -c "registered again" "$OUT/sb_listen.log")
	t_gone=$(up)
	stop $BTD
	wait_for_more "$OUT/sb_listen.log" "bluetoothd left the bus" "$sb_left"
	/usr/libexec/bluetooth/bluetoothd -n "${BTD_CONF[@]}" > "$OUT/bluetoothd2.log" 2>&1 & BTD=$!
	power_all
	wait_for_more "$OUT/sb_listen.log" "registered again" "$sb_again"
	echo "   stock box: bluetoothd stopped and started again: listen registered again $(sb_secs "$t_gone" "$(up)") after it left" |
		tee -a "$OUT/results.txt"
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-sb --json --verbose "$OUT/mib.bin" \
		> "$OUT/t23b.json" 2> "$OUT/t23b.err"; echo "send exit $?" >> "$OUT/t23b.err"
	wait_file "$OUT/sb_inbox/00000002.msg"
	cmp "$OUT/mib.bin" "$OUT/sb_inbox/00000002.msg" > "$OUT/t23b.cmp" 2>&1 && echo "byte-identical" >> "$OUT/t23b.cmp"

	# 23c. bluetoothd killed (SIGKILL) in the middle of a 512 KiB send and started again a second later: the
	#      central reconnects (through the new bluetoothd: discovery, Connect, acquire) and resumes its
	#      Transport session, listen registers again; the message arrives once, byte-identical. On GATT
	#      (--link-mode gatt): the data of a channel does not pass through bluetoothd, and a killed bluetoothd
	#      does not end the kernel's link, so over the channel there is nothing to resume.
	#      Runs by default (4.6-74 s, the slowest beside a unit test run and two busy loops; the slow resumes are
	#      EATT's one-credit-at-a-time mode, docs/LAB.md; two stalls until the guard were Transport's timers
	#      stopping, now fixed; send --verbose logs Transport's state at every timer). The guard, 180 s, is
	#      2.4 times the slowest seen. LAB_STOCKBOX_KILL=0 skips it.
	#      512 KiB, killed 0.5 s in: over GATT that is under a third of the fastest transfer seen, and "reconnected
	#      to" in send's log proves the kill landed mid-transfer (1 MiB spent ~80 s in EATT's slow mode).
	if [ "${LAB_STOCKBOX_KILL:-1}" = 0 ]; then
		skip "stock box: bluetoothd killed mid-transfer and restarted: send reconnects and resumes, 512 KiB arrives once" \
			"LAB_STOCKBOX_KILL=0"
	else
		head -c 524288 "$OUT/mib.bin" > "$OUT/kib512.bin"
		timeout 180 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-sb --json --verbose --reconnects 30 \
			--link-mode gatt "$OUT/kib512.bin" > "$OUT/t23c.json" 2> "$OUT/t23c.err" & SND=$!
		wait_for "$OUT/t23c.err" "link connected"
		sleep 0.5
		kill -9 $BTD; wait $BTD 2> /dev/null
		echo "bluetoothd killed at $(up)" >> "$OUT/t23c.cmp"
		sleep 1
		/usr/libexec/bluetooth/bluetoothd -n "${BTD_CONF[@]}" > "$OUT/bluetoothd3.log" 2>&1 & BTD=$!
		power_all
		wait_bounded $SND 180; echo "send exit $?" >> "$OUT/t23c.cmp"
		wait_file "$OUT/sb_inbox/00000003.msg"
		sleep 1
		cmp "$OUT/kib512.bin" "$OUT/sb_inbox/00000003.msg" >> "$OUT/t23c.cmp" 2>&1 && echo "byte-identical" >> "$OUT/t23c.cmp"
		echo "messages in the inbox: $(ls "$OUT/sb_inbox" | grep -c '\.msg$')" >> "$OUT/t23c.cmp"
		grep -cE "reconnect|link connected" "$OUT/t23c.err" | sed 's/^/reconnect lines: /' >> "$OUT/t23c.cmp"
		C_SECS=$(secs_of "$OUT/t23c.json")
		echo "   stock box: bluetoothd killed mid-transfer: 512 KiB delivered once after the reconnect in ${C_SECS:-?} s" | tee -a "$OUT/results.txt"
		cat "$OUT/t23c.cmp" "$OUT/t23c.json" "$OUT/t23c.err" > "$OUT/t23c.log"
		expect "stock box: bluetoothd killed mid-transfer and restarted: send reconnects and resumes, 512 KiB arrives once" \
			"$OUT/t23c.log" "send exit 0" "byte-identical" "messages in the inbox: 3" "reconnected to "
		no_links
	fi
	stop $LST; echo "listen exit $?" >> "$OUT/t23b.cmp"
	cat "$OUT/t23b.json" "$OUT/t23b.err" "$OUT/t23b.cmp" "$OUT/sb_listen.log" > "$OUT/t23b.log"
	SB2_SECS=$(secs_of "$OUT/t23b.json")
	KB_SECS=$(secs_of "$OUT/t12.json")
	echo "   stock box: 1 MiB through bluetoothd (no -d) in ${SB2_SECS:-?} s; kernel backend (check 12) ${KB_SECS:-?} s; ratio of goodputs $(ratio "$KB_SECS" "$SB2_SECS")" |
		tee -a "$OUT/results.txt"
	expect "stock box: bluetoothd restarts under listen: it registers again and takes another 1 MiB byte-identical" \
		"$OUT/t23b.log" "bluetoothd left the bus" "registered again" "send exit 0" "byte-identical" "listen exit 0"
	no_links

	# 23d. Day two on a stock box, as a normal user (nobody, no groups, Debian's D-Bus policy): one listen on hci0,
	#      six sends in a row from hci1 without waiting for links to go, alternately --to NAME and --to ADDRESS,
	#      100 KiB and 1 KiB, --connect-timeout 15 --reconnects 2. Each must arrive, once: a central ends the link it
	#      made, and a peripheral serving one central at a time advertises again when that central's session ends.
	AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	rm -rf /tmp/day2 && mkdir -p /tmp/day2/inbox && chown -R 65534:65534 /tmp/day2
	head -c 102400 /dev/urandom > /tmp/day2/big.bin; head -c 1024 /dev/urandom > /tmp/day2/small.bin
	chmod 644 /tmp/day2/*.bin
	"${AS_USER[@]}" "$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-day2 --verbose --out-dir /tmp/day2/inbox \
		> /dev/null 2> "$OUT/t23d_listen.log" & DAY2=$!
	wait_for "$OUT/t23d_listen.log" "advertising"
	t_day2=$(up)
	for i in 1 2 3 4 5 6; do
		if [ $((i % 2)) = 1 ]; then to=msgpipe-day2; file=/tmp/day2/big.bin; else to=$A; file=/tmp/day2/small.bin; fi
		t_send=$(up)
		timeout 120 "${AS_USER[@]}" "$MSGPIPE" send --backend bluez --adapter hci1 --to "$to" --connect-timeout 15 \
			--reconnects 2 --json --verbose "$file" > "$OUT/t23d_$i.json" 2> "$OUT/t23d_$i.err"
		echo "send $i (--to $to) exit $? after $(sb_secs "$t_send" "$(up)")" >> "$OUT/t23d.log"
	done
	echo "six sends done after $(sb_secs "$t_day2" "$(up)")" >> "$OUT/t23d.log"
	sleep 1
	stop $DAY2; echo "listen exit $?" >> "$OUT/t23d.log"
	echo "messages in the inbox: $(ls /tmp/day2/inbox | grep -c '\.msg$')" >> "$OUT/t23d.log"
	for f in big small; do
		sum=$(sha256sum < "/tmp/day2/$f.bin")
		n=0; for m in /tmp/day2/inbox/*.msg; do [ "$(sha256sum < "$m")" = "$sum" ] && n=$((n + 1)); done
		echo "$f arrived $n time(s)" >> "$OUT/t23d.log"
	done
	grep -h "exit\|done" "$OUT/t23d.log" | sed 's/^/   day two: /' | tee -a "$OUT/results.txt" > /dev/null
	for i in 1 2 3 4 5 6; do cat "$OUT/t23d_$i.err" >> "$OUT/t23d.log"; done
	cat "$OUT/t23d_listen.log" >> "$OUT/t23d.log"
	expect "stock box, day two as a normal user: six sends in a row into one listen, by name and by address, each arrives once" \
		"$OUT/t23d.log" "send 1 .* exit 0" "send 2 .* exit 0" "send 3 .* exit 0" "send 4 .* exit 0" "send 5 .* exit 0" \
		"send 6 .* exit 0" "messages in the inbox: 6" "big arrived 3 time" "small arrived 3 time" "listen exit 0" \
		"data over l2cap channel"
	no_links
fi

# 29. Plain formats into a NUS peripheral made the ordinary way on Linux: Tests/lab/nus_peripheral.py
#     registers the Nordic UART Service and an advertisement with bluetoothd on hci0 through dbus-fast (bleak's
#     D-Bus library), and bluetoothd hands it every written value through WriteValue. msgpipe send --backend
#     bluez --adapter hci1 --to NAME --profile nus --format lines|legacy|eom sends 10 B, 1 KiB and 100 KiB (lines
#     and eom: the three in one send; legacy: a send each): each send exits 0 and the peripheral holds every message whole (lines: the bytes and a newline each; legacy:
#     Tests/lab/legacy_decode.py reassembles the Start/End values it logged; eom: the values between the
#     values "EOM" it logged).
NUS_PY=${BLELAB_DIR:-/tmp/blelab}/python
if [ -n "$BLEAK_WHY" ] || [ -z "$SB_POWERED" ]; then
	skip "stock box: plain formats into a Python NUS peripheral registered with bluetoothd" "${BLEAK_WHY:-bluetoothd is not up}"
else
	for size in 10 1024 102400; do
		head -c $((size * 2)) /dev/urandom | base64 -w0 | head -c $size > "$OUT/nus_$size.txt"
	done
	for fmt in lines legacy eom; do
		no_links
		: > "$OUT/t29_$fmt.log"
		PYTHONPATH=$NUS_PY "$SB_PYTHON" Tests/lab/nus_peripheral.py --adapter hci0 --name "nus-$fmt" \
			--out "$OUT/nus_$fmt.bin" > "$OUT/nus_$fmt.log" 2>&1 & NUS=$!
		wait_for "$OUT/nus_$fmt.log" "^registered|^error"
		# legacy: one send per message (legacy_decode.py takes one message per log); lines and eom: one send of
		# the three messages over one connection.
		if [ $fmt = legacy ]; then SIZES=(10 1024 102400); else SIZES=(all); fi
		for size in "${SIZES[@]}"; do
			from=$(wc -l < "$OUT/nus_$fmt.log")
			if [ $size = all ]; then FILES=("$OUT"/nus_10.txt "$OUT"/nus_1024.txt "$OUT"/nus_102400.txt); else FILES=("$OUT/nus_$size.txt"); fi
			timeout 120 "$MSGPIPE" send --backend bluez --adapter hci1 --to "nus-$fmt" --profile nus --format $fmt \
				"${FILES[@]}" >> "$OUT/t29_$fmt.log" 2>&1
			echo "$fmt $size send exit $?" >> "$OUT/t29_$fmt.log"
			if [ $fmt = legacy ]; then
				sleep 0.5
				tail -n +$((from + 1)) "$OUT/nus_$fmt.log" > "$OUT/nus_legacy_$size.log"
				python3 Tests/lab/legacy_decode.py "$OUT/nus_legacy_$size.log" "$OUT/nus_legacy_$size.out" >> "$OUT/t29_$fmt.log" 2>&1
				cmp "$OUT/nus_$size.txt" "$OUT/nus_legacy_$size.out" >> "$OUT/t29_$fmt.log" 2>&1 && echo "$fmt $size whole" >> "$OUT/t29_$fmt.log"
			fi
			no_links
		done
		stop $NUS
		if [ $fmt = lines ]; then
			for size in 10 1024 102400; do cat "$OUT/nus_$size.txt"; echo; done > "$OUT/nus_lines.expected"
			cmp "$OUT/nus_lines.expected" "$OUT/nus_lines.bin" >> "$OUT/t29_$fmt.log" 2>&1 && echo "lines all whole" >> "$OUT/t29_$fmt.log"
		fi
		if [ $fmt = eom ]; then  # PROTOCOL 4.2: a message's values, then one value that is exactly "EOM"
			python3 - "$OUT/nus_eom.log" "$OUT"/nus_10.txt "$OUT"/nus_1024.txt "$OUT"/nus_102400.txt >> "$OUT/t29_$fmt.log" 2>&1 <<-'PY'
				import sys
				values = [bytes.fromhex(l.split(":", 1)[1].replace(" ", "").strip())
				          for l in open(sys.argv[1]) if l.startswith("write value:")]
				messages, current = [], b""
				for v in values:
				    if v == b"EOM":
				        messages.append(current); current = b""
				    else:
				        current += v
				wanted = [open(f, "rb").read() for f in sys.argv[2:]]
				print(f"eom: {len(values)} values, {len(messages)} messages, {len(current)} bytes after the last EOM")
				if messages == wanted and not current:
				    print("eom all whole")
			PY
		fi
		grep -v "^write value" "$OUT/nus_$fmt.log" | head -5 >> "$OUT/t29_$fmt.log"
	done
	expect "stock box: send --profile nus --format lines into a Python NUS peripheral: 10 B, 1 KiB, 100 KiB whole, exit 0" \
		"$OUT/t29_lines.log" "lines all send exit 0" "lines all whole"
	expect "stock box: send --profile nus --format legacy into a Python NUS peripheral: 10 B, 1 KiB, 100 KiB whole, exit 0" \
		"$OUT/t29_legacy.log" "legacy 10 send exit 0" "legacy 1024 send exit 0" "legacy 102400 send exit 0" \
		"legacy 10 whole" "legacy 1024 whole" "legacy 102400 whole"
	expect "stock box: send --profile nus --format eom into a Python NUS peripheral: 10 B, 1 KiB, 100 KiB whole, exit 0" \
		"$OUT/t29_eom.log" "eom all send exit 0" "eom all whole"
fi

# 30. The reverse roles through bluetoothd (the D-Bus backend): send --backend bluez --adapter hci0
#     --name pushes 1 MiB by notification to listen --backend bluez --adapter hci1 --to NAME --count 1, which
#     subscribed through AcquireNotify: byte-identical, both exit 0.
no_links
"$MSGPIPE" send --backend bluez --adapter hci0 --name msgpipe-rev --json "$OUT/mib.bin" \
	> "$OUT/t30.json" 2> "$OUT/t30_send.log" & REV=$!
wait_for "$OUT/t30_send.log" "advertising"
timeout 300 "$MSGPIPE" listen --backend bluez --adapter hci1 --to msgpipe-rev --count 1 \
	> "$OUT/t30.bin" 2> "$OUT/t30_listen.log"; echo "listen exit $?" >> "$OUT/t30.log"
wait_bounded $REV 60; echo "send exit $?" >> "$OUT/t30.log"
cmp "$OUT/mib.bin" "$OUT/t30.bin" >> "$OUT/t30.log" 2>&1 && echo "byte-identical" >> "$OUT/t30.log"
cat "$OUT/t30.json" "$OUT/t30_send.log" "$OUT/t30_listen.log" >> "$OUT/t30.log"
REV_SECS=$(secs_of "$OUT/t30.json")
echo "   stock box: 1 MiB from send --name (hci0) to listen --to (hci1) through bluetoothd in ${REV_SECS:-?} s" | tee -a "$OUT/results.txt"
expect "stock box: send --name (peripheral, hci0) -> listen --to (central, hci1) through bluetoothd: 1 MiB byte-identical" \
	"$OUT/t30.log" "listen exit 0" "send exit 0" "byte-identical"
no_links

# 30b. The seeds' receiving phone through bluetoothd: send --backend bluez --name on hci0 pushes
#      4 KiB in the legacy format, seed 000_*'s layout (custom:FFF0:FFF2:FFF1), to bleak on hci1: an independent
#      central that only subscribes and writes nothing, so bluetoothd acquires only the notify descriptor (before,
#      that never made a link and send waited for ever). send exit 0, and bleak's notification values (checked by
#      legacy_decode.py, not our Framing) are exactly the file's pieces, each once. Their order is bluetoothd's:
#      in one full run two data values reached bleak before the Start value (bluetoothd 5.66 spreads
#      notifications over its several ATT bearers, EATT), so the seeds' unnumbered framing arrived scrambled;
#      results.txt says whether they came in order (docs/LAB.md).
if [ -z "$SB_PYTHON" ] || ! PYTHONPATH=${BLELAB_DIR:-/tmp/blelab}/python "$SB_PYTHON" -c 'import bleak' > /dev/null 2>&1; then
	skip "stock box: send --name --format legacy to bleak that only subscribes" "bleak is not installed (Scripts/blelab.sh --setup-bleak)"
else
	head -c 4096 /dev/urandom > "$OUT/kib4.bin"
	"$MSGPIPE" send --backend bluez --adapter hci0 --name msgpipe-plain --format legacy --profile custom:FFF0:FFF2:FFF1 \
		"$OUT/kib4.bin" > /dev/null 2> "$OUT/t30b_send.log" & PLN=$!
	wait_for "$OUT/t30b_send.log" "advertising"
	PYTHONPATH=${BLELAB_DIR:-/tmp/blelab}/python timeout 120 "$SB_PYTHON" Tests/lab/bleak_central.py --adapter hci1 \
		--name msgpipe-plain --rx 0000fff2-0000-1000-8000-00805f9b34fb --tx 0000fff1-0000-1000-8000-00805f9b34fb \
		--hold 8 > "$OUT/t30b_bleak.log" 2>&1; echo "bleak exit $?" > "$OUT/t30b.log"
	wait_bounded $PLN 30; echo "send exit $?" >> "$OUT/t30b.log"
	"$SB_PYTHON" Tests/lab/legacy_decode.py "$OUT/t30b_bleak.log" "$OUT/t30b.bin" --tiles "$OUT/kib4.bin" >> "$OUT/t30b.log" 2>&1
	cat "$OUT/t30b_bleak.log" "$OUT/t30b_send.log" >> "$OUT/t30b.log"
	grep -h "legacy_decode:" "$OUT/t30b.log" | sed 's/^/   stock box: legacy to bleak through bluetoothd: /' | tee -a "$OUT/results.txt"
	expect "stock box: send --name --format legacy (hci0, through bluetoothd) to bleak (hci1) that only subscribes: every piece once" \
		"$OUT/t30b.log" "bleak exit 0" "send exit 0" "values tile the 4096 bytes" "may carry values over several ATT"
	no_links
fi

# 31. Encrypted request/serve through bluetoothd: serve --backend bluez on hci0 runs its command for a request
#     from request --backend bluez on hci1; the same --id again gets the journal's answer, the command ran once.
SBKEY="$OUT/sb_secure.key"; rm -rf "$SBKEY" "$OUT/sb_state" "$OUT/sb_ran"
"$MSGPIPE" keygen --out "$SBKEY"
"$MSGPIPE" serve --backend bluez --adapter hci0 --name msgpipe-srv --key-file "$SBKEY" --state "$OUT/sb_state" \
	--exec 'echo ran >> '"$OUT/sb_ran"'; printf "approved:"; cat' > "$OUT/t31_serve.log" 2>&1 & SRV=$!
wait_for "$OUT/t31_serve.log" "advertising"
for try in 1 2; do
	printf 'pay 3.00 EUR' | timeout 150 "$MSGPIPE" request --backend bluez --adapter hci1 --to msgpipe-srv \
		--key-file "$SBKEY" --id sb-1 --timeout 120 >> "$OUT/t31.log" 2>&1; echo " request $try exit $?" >> "$OUT/t31.log"
	no_links
done
stop $SRV
echo "commands run: $(wc -l < "$OUT/sb_ran" 2>/dev/null || echo 0)" >> "$OUT/t31.log"
cat "$OUT/t31_serve.log" >> "$OUT/t31.log"
expect "stock box: request -> serve through bluetoothd; the same id again is answered from the journal" "$OUT/t31.log" \
	"approved:pay 3.00 EUR request 1 exit 0" "approved:pay 3.00 EUR request 2 exit 0" "commands run: 1"
no_links

# 32. --security medium through bluetoothd, pairing from the other adapter, then a bonded reconnect. The lab's
#     mgmt pairing agent (BLELAB_AUTOCONFIRM) is stopped first: hci0's confirmation must come from msgpipe's
#     own NoInputNoOutput agent registered with bluetoothd; hci1's bluetoothd raises the link's security when
#     the CCC write is refused for insufficient encryption, with no agent of its own. Device1.Paired on hci1
#     must be true after the first send, and a second send over the bond must deliver too.
pkill -x mgmt_autoconfirm 2> /dev/null
no_links
head -c 4096 /dev/urandom > "$OUT/sec1.bin"; head -c 4096 /dev/urandom > "$OUT/sec2.bin"
"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-sec --security medium --verbose \
	--out-dir "$OUT/sec_inbox" > /dev/null 2> "$OUT/t32_listen.log" & SEC=$!
wait_for "$OUT/t32_listen.log" "advertising"
for n in 1 2; do
	timeout 120 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-sec "$OUT/sec$n.bin" >> "$OUT/t32.log" 2>&1
	echo "send $n exit $?" >> "$OUT/t32.log"
	echo "paired after $n: $(busctl --system get-property org.bluez "/org/bluez/hci1/dev_$(echo "$A" | tr : _)" \
		org.bluez.Device1 Paired 2>&1)" >> "$OUT/t32.log"
	wait_file "$OUT/sec_inbox/0000000$n.msg"
	cmp "$OUT/sec$n.bin" "$OUT/sec_inbox/0000000$n.msg" >> "$OUT/t32.log" 2>&1 && echo "message $n whole" >> "$OUT/t32.log"
	no_links
done
stop $SEC
cat "$OUT/t32_listen.log" >> "$OUT/t32.log"
expect "stock box: --security medium pairs hci1 with msgpipe's agent on hci0 (Just Works), then a bonded reconnect delivers" \
	"$OUT/t32.log" "send 1 exit 0" "paired after 1: b true" "message 1 whole" "send 2 exit 0" "message 2 whole"

# 32b. A phone that bonds, through bluetoothd: Bumble (Tests/lab/bumble_bond.py, a fixed random static address and
#      a key store of its own) on hci3 (hci1 without a fourth controller), taken from bluetoothd (mgmt power off,
#      hciconfig down, then Bumble's HCI user channel). It writes before pairing and must get the ATT error of
#      bluetoothd's GATT server (0x05 or 0x0F), pairs with bonding (bluetoothd's SMP, msgpipe's agent on hci0
#      answering Just Works), and writes again. listen restarts; the phone encrypts with its stored key without
#      pairing again and writes. Both lines arrive.
SBB_PY=${BLELAB_DIR:-/tmp/blelab}/bumble/bin/python
if [ -n "$D" ]; then SBB_INDEX=3; else SBB_INDEX=1; fi
if ! [ -x "$SBB_PY" ] || ! "$SBB_PY" -c 'import bumble' > /dev/null 2>&1; then
	skip "stock box: a Bumble phone bonds through bluetoothd (msgpipe's agent), then reconnects encrypted after listen restarts" \
		"no Bumble in $SBB_PY"
else
	no_links
	head -c 3072 /dev/urandom | base64 -w0 > "$OUT/sbb_text.txt"
	rm -f "$OUT/sbb_keys.json" "$OUT/t32b.log"
	for n in 1 2; do
		"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-sbb --security medium --profile nus \
			--format lines --count 1 --out-dir "$OUT/sbb_inbox$n" --verbose > /dev/null 2> "$OUT/t32b_listen$n.log" & SBB=$!
		wait_for "$OUT/t32b_listen$n.log" "advertising"
		# bluetoothd powers the controller again once Bumble let it go: take it away before each phone
		btmgmt --index "$SBB_INDEX" power off > /dev/null 2>&1
		for i in $(seq 1 50); do hciconfig "hci$SBB_INDEX" 2>/dev/null | grep -q DOWN && break; sleep 0.1; done
		hciconfig "hci$SBB_INDEX" down 2> /dev/null
		timeout 150 "$SBB_PY" Tests/lab/bumble_bond.py --transport "hci-socket:$SBB_INDEX" --to msgpipe-sbb \
			--keystore "$OUT/sbb_keys.json" --address C0:5B:0D:00:00:05 --send "$OUT/sbb_text.txt" \
			$([ $n = 1 ] && echo --write-first) > "$OUT/t32b_bumble$n.log" 2>&1
		echo "bumble $n exit $?" >> "$OUT/t32b.log"
		wait_bounded $SBB 30; echo "listen $n exit $?" >> "$OUT/t32b.log"
		cmp "$OUT/sbb_text.txt" "$OUT/sbb_inbox$n/00000001.msg" >> "$OUT/t32b.log" 2>&1 && echo "message $n byte-identical" >> "$OUT/t32b.log"
		sed "s/^/phone $n: /" "$OUT/t32b_bumble$n.log" >> "$OUT/t32b.log"
		sed "s/^/listen $n: /" "$OUT/t32b_listen$n.log" >> "$OUT/t32b.log"
		no_links
	done
	btmgmt --index "$SBB_INDEX" le on > /dev/null 2>&1; btmgmt --index "$SBB_INDEX" power on > /dev/null 2>&1
	grep -qE "^phone 2: (paired and bonded|pairing)" "$OUT/t32b.log" && echo "phone 2 paired again" >> "$OUT/t32b.log" ||
		echo "phone 2 did not pair again" >> "$OUT/t32b.log"
	grep -E "^phone [12]: (write before pairing|done:)" "$OUT/t32b.log" | sed 's/^/   stock box: bonding /' | tee -a "$OUT/results.txt"
	expect "stock box: a Bumble phone writing before pairing gets an ATT error from bluetoothd, bonds (msgpipe's agent), writes; after listen restarts it encrypts with its stored key and writes" \
		"$OUT/t32b.log" "^phone 1: write before pairing: ATT error 0x(05|0F)" "^phone 1: paired and bonded" "message 1 byte-identical" \
		"^phone 2: encrypted with the stored key" "^phone 2 did not pair again" "message 2 byte-identical" "bumble 2 exit 0"
fi

# 33. Two centrals at once into one listen through bluetoothd (hci1 and hci2 each send 256 KiB to hci0): both files
#     arrive whole, each once, both sends exit 0. bluetoothd 5.66 keeps ONE acquired write socket and ONE notify
#     socket per characteristic for all devices (src/gatt-database.c write_io/notify_io; per-device sockets came
#     in 5.69, notifications only to the socket's own device in 5.76), so listen serves one central at a time
#     through it: it takes its advertisement away while a central has its turn and registers it again after, and
#     the second send connects once the first is done, within its --connect-timeout (before this, both sends
#     hung until killed at 300 s). The lab's btdev fails a Create Connection to a device that does not advertise
#     at once (a radio would keep it pending), after which bluetoothd 5.66 answered the second send's
#     Device1.Connect not at all until the kernel cancelled ~40 s later: BlueZCentral asks again (10 s per attempt).
#     256 KiB each, not 1 MiB (as earlier): bluetoothd 5.66's EATT bearers carried one 1 MiB in 73 s in one run,
#     while the second send waited for its turn within --connect-timeout; check 23 carries 1 MiB through
#     5.66, check 35 two of them at once through 5.82.
if [ -z "$C" ]; then
	skip "stock box: two centrals at once through bluetoothd" "needs a third controller (BLELAB_BTVIRT=-L -l3)"
else
	no_links
	head -c 262144 "$OUT/mib.bin" > "$OUT/kib256.bin"
	head -c 262144 /dev/urandom > "$OUT/kib256b.bin"
	"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-two --verbose --out-dir "$OUT/two_inbox" \
		> /dev/null 2> "$OUT/t33_listen.log" & TWO=$!
	wait_for "$OUT/t33_listen.log" "advertising"
	t_two=$(up)
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-two --connect-timeout 150 --verbose --json "$OUT/kib256.bin" \
		> "$OUT/t33_b.json" 2> "$OUT/t33_b.err" & S1=$!
	# The second send starts once the first one's link is up (listen has taken its advertisement away): started
	# together, hci2's Create Connection to an advertiser that stopped at that moment hung in the emulator, and
	# in one run bluetoothd 5.66 on hci2 never connected again, failing checks 33 and 33b.
	wait_for "$OUT/t33_b.err" "link connected"
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci2 --to msgpipe-two --connect-timeout 150 --verbose --json "$OUT/kib256b.bin" \
		> "$OUT/t33_c.json" 2> "$OUT/t33_c.err" & S2=$!
	wait $S1; echo "send hci1 exit $?" >> "$OUT/t33.log"
	wait $S2; echo "send hci2 exit $?" >> "$OUT/t33.log"
	echo "both done after $(sb_secs "$t_two" "$(up)")" >> "$OUT/t33.log"
	sleep 1
	stop $TWO
	for f in kib256 kib256b; do
		sum=$(sha256sum < "$OUT/$f.bin")
		n=0; for m in "$OUT"/two_inbox/*.msg; do [ "$(sha256sum < "$m")" = "$sum" ] && n=$((n + 1)); done
		echo "$f arrived $n time(s)" >> "$OUT/t33.log"
	done
	cat "$OUT/t33_b.json" "$OUT/t33_c.json" "$OUT/t33_b.err" "$OUT/t33_c.err" "$OUT/t33_listen.log" >> "$OUT/t33.log"
	echo "   stock box: two centrals, 256 KiB each, at once through bluetoothd: $(grep '^both done' "$OUT/t33.log"); each $(secs_of "$OUT/t33_b.json") s and $(secs_of "$OUT/t33_c.json") s" |
		tee -a "$OUT/results.txt"
	expect "stock box: two centrals (hci1, hci2) send 256 KiB each at once into one listen through bluetoothd 5.66: served one at a time, both whole, once" \
		"$OUT/t33.log" "one central at a time .bluetoothd 5" "send hci1 exit 0" "send hci2 exit 0" "kib256 arrived 1 time" "kib256b arrived 1 time"
	no_links
fi

# 33f. One central on three peripherals through bluetoothd: listen --backend bluez on hci1, hci2 and hci3 (one
#      central each), send --backend bluez on hci0 with --to three times, 256 KiB: every file whole, exit 0, one
#      JSON result per peer. The connects take their turns (one Device1.Connect at a time from this process).
if [ -z "${D:-}" ]; then
	skip "stock box: one central on three peripherals through bluetoothd" "needs a fourth controller"
else
	no_links
	: > "$OUT/t33f.log"
	for h in 1 2 3; do
		"$MSGPIPE" listen --backend bluez --adapter "hci$h" --name "sb-fan$h" --count 1 > "$OUT/sbfan_$h.bin" \
			2> "$OUT/t33f_l$h.log" &
		eval "L$h=\$!"
	done
	for h in 1 2 3; do wait_for "$OUT/t33f_l$h.log" "advertising"; done
	t_fan=$(up)
	timeout 400 "$MSGPIPE" send --backend bluez --adapter hci0 --to sb-fan1 --to sb-fan2 --to sb-fan3 --connect-timeout 120 \
		--json "$OUT/kib256.bin" > "$OUT/t33f.json" 2> "$OUT/t33f_send.log"
	echo "send exit $?" >> "$OUT/t33f.log"
	echo "done after $(sb_secs "$t_fan" "$(up)")" >> "$OUT/t33f.log"
	for h in 1 2 3; do eval "wait_bounded \$L$h 60"; cmp -s "$OUT/kib256.bin" "$OUT/sbfan_$h.bin" && echo "hci$h intact" >> "$OUT/t33f.log"; done
	[ "$(grep -c '"peer":"sb-fan' "$OUT/t33f.json")" = 3 ] && echo "three results" >> "$OUT/t33f.log"
	cat "$OUT/t33f.json" "$OUT/t33f_send.log" "$OUT"/t33f_l*.log >> "$OUT/t33f.log"
	echo "   stock box: 256 KiB to three peripherals at once through bluetoothd: $(grep '^done after' "$OUT/t33f.log")" | tee -a "$OUT/results.txt"
	expect "stock box: one central (hci0) on three peripherals (hci1-hci3) through bluetoothd: 256 KiB to each, all whole" \
		"$OUT/t33f.log" "send exit 0" "hci1 intact" "hci2 intact" "hci3 intact" "three results"
	no_links
fi

# 33b. An independent second central takes the turn: bleak (Tests/lab/bleak_central.py --hold 12, PyPI,
#      through hci2's bluetoothd) connects to listen --backend bluez on hci0, subscribes and holds its link 12 s
#      writing nothing, while msgpipe send on hci1 (--connect-timeout 90) waits: listen takes its advertisement
#      away during bleak's turn and refuses another device's acquire; a connection without a hello is closed
#      after 10 s (TransportListener), which ends the turn, so a silent central cannot hold listen. bleak keeps
#      its link the whole time (held, connected True; msgpipe never disconnects a device), the send gets its turn
#      after that and delivers 256 KiB once (exit 0). Not 1 MiB: the turn is what this check is about, and
#      bluetoothd 5.66's EATT bearers drained one 1 MiB send at about 26 packets a second for half a minute
#      (and a CI run's past the send's 300 s); checks 23 and 33 carry 1 MiB through the same bluetoothd.
if [ -z "$C" ]; then
	skip "stock box: bleak holds the turn while msgpipe send waits" "needs a third controller (BLELAB_BTVIRT=-L -l3)"
elif [ -z "$SB_PYTHON" ] || ! PYTHONPATH=${BLELAB_DIR:-/tmp/blelab}/python "$SB_PYTHON" -c 'import bleak' > /dev/null 2>&1; then
	skip "stock box: bleak holds the turn while msgpipe send waits" "bleak is not installed (Scripts/blelab.sh --setup-bleak)"
else
	no_links
	head -c 262144 "$OUT/mib.bin" > "$OUT/kib256.bin"
	"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-held --verbose --out-dir "$OUT/held_inbox" \
		> /dev/null 2> "$OUT/t33b_listen.log" & HELD=$!
	wait_for "$OUT/t33b_listen.log" "advertising"
	PYTHONPATH=${BLELAB_DIR:-/tmp/blelab}/python timeout 120 "$SB_PYTHON" Tests/lab/bleak_central.py --adapter hci2 \
		--name msgpipe-held --hold 12 > "$OUT/t33b_bleak.log" 2>&1 & BLK=$!
	wait_for "$OUT/t33b_bleak.log" "subscribed TX|error|not found"
	t_held=$(up)
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-held --connect-timeout 90 --verbose --json \
		"$OUT/kib256.bin" > "$OUT/t33b.json" 2> "$OUT/t33b_send.err"
	echo "send exit $?" > "$OUT/t33b.log"
	held_secs=$(awk "BEGIN{printf \"%.2f\", $(up)-$t_held}")
	echo "send done $held_secs s after bleak subscribed" >> "$OUT/t33b.log"
	# A lower bound: bleak holds its turn 12 s, and a slow machine only makes send wait longer.
	awk "BEGIN{ exit !($held_secs >= 11) }" && echo "send waited for bleak's turn" >> "$OUT/t33b.log"
	wait_bounded $BLK 60; echo "bleak exit $?" >> "$OUT/t33b.log"
	sleep 1
	stop $HELD
	sum=$(sha256sum < "$OUT/kib256.bin")
	n=0; for m in "$OUT"/held_inbox/*.msg; do [ "$(sha256sum < "$m")" = "$sum" ] && n=$((n + 1)); done
	echo "kib256 arrived $n time(s)" >> "$OUT/t33b.log"
	cat "$OUT/t33b_bleak.log" "$OUT/t33b.json" "$OUT/t33b_send.err" "$OUT/t33b_listen.log" >> "$OUT/t33b.log"
	echo "   stock box: bleak connected 12 s writing nothing; msgpipe send from hci1 done $held_secs s after bleak subscribed (transfer $(secs_of "$OUT/t33b.json") s)" |
		tee -a "$OUT/results.txt"
	if grep -q "failed to discover services, device disconnected" "$OUT/t33b_bleak.log" && ! grep -q "^subscribed TX" "$OUT/t33b_bleak.log"; then
		skip "stock box: bleak holds the turn while msgpipe send waits" "bluetoothd 5.66 dropped bleak's link during service discovery in all of its tries (EATT, not msgpipe)"
	else
		expect "stock box: bleak (hci2) subscribes to listen through bluetoothd and writes nothing; the waiting send (hci1) gets the turn, 256 KiB once" \
			"$OUT/t33b.log" "^held 12.0 s, connected True" "bleak exit 0" "send exit 0" "send waited for bleak's turn" "kib256 arrived 1 time"
	fi
	no_links
fi

# Stop bluetoothd, then dbus-daemon (SIGTERM; bounded), and keep bluetoothd's lines that matter for the notes.
stop $BTD
[ -n "$DBUS_PID" ] && kill "$DBUS_PID" 2>/dev/null
grep -aE "Registering application|application registered|Registered advertisement|Acquire|MTU|EATT channel connected|unexpected ATT|Write Cmd|sending notification|[Ee]rror|[Ff]ailed|truncat" \
	"$OUT/bluetoothd.log" | grep -v "plugin" | awk '!seen[$0]++' | head -80 > "$OUT/bluetoothd_notes.log"
echo "   stock box: bluetoothd.log $(wc -l < "$OUT/bluetoothd.log") lines; the ones that matter in bluetoothd_notes.log"

fi  # LAB_ONLY (stock box)

# A newer bluetoothd beside Debian's (Tests/LabTests/NewBluez: each test starts its own bus and bluetoothd), once
# the stock box's bluetoothd and bus are gone. LAB_ONLY=newbluez runs only it.
if [ -z "${LAB_ONLY:-}" ] || [ "${LAB_ONLY:-}" = newbluez ]; then
[ -n "${DBUS_PID:-}" ] && for i in $(seq 1 50); do kill -0 "$DBUS_PID" 2> /dev/null || break; sleep 0.1; done
section newbluez
if [ -z "$C" ]; then
	skip "checks 34-36: a newer bluetoothd" "the lab has no third controller"
elif ! [ -x "${BLELAB_DIR:-/tmp/blelab}/bluez-new/bluetoothd" ]; then
	skip "checks 34-36: a newer bluetoothd" "no ${BLELAB_DIR:-/tmp/blelab}/bluez-new/bluetoothd (Scripts/blelab.sh build_bluetoothd_new could not fetch or build Debian trixie's bluez)"
else
	lab_tests 'Lab/NewBluez/'
fi
fi  # LAB_ONLY (checks 34-36)

# Kills over Bluetooth (Scripts/lab-kills.sh: listen and send --spool killed mid-transfer, kernel backend and beside
# bluetoothd): last, once every bluetoothd before it is gone. LAB_ONLY=kills runs only it; LAB_KILLS=0 leaves it out.
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_KILLS:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = kills ]; then
section kills
. "$PWD/Scripts/lab-kills.sh"
fi  # LAB_ONLY (kills)

section
kill "$BTMON" 2>/dev/null; wait "$BTMON" 2>/dev/null; pkill -x btmon
echo "   ATT PDUs on the air: $(grep -c 'ATT:' "$OUT/btmon.txt")"
[ "$SKIPPED" = 0 ] || echo "   $SKIPPED skipped (see the skip lines)"
echo "$PASSED passed, $FAILED failed" | tee -a "$OUT/results.txt"
[ "$FAILED" = 0 ]
