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
# SKIP), one at a time. Each test appends "STATUS SECONDS LOGDIR ITSFILTER NAME" to $OUT/labtests.results; each
# becomes a result line here, a failing one with its own report (LOGDIR/failure.txt), a skip ("skip") with its
# reason (LOGDIR/skip.txt), its notes after it. The bundle's whole output goes to $OUT/labtests.log. A bundle that
# fails without a failing test (a crash) fails too. A test that failed while the guest kernel oopsed
# (LOGDIR/kernel-oops.txt, docs/LAB.md) runs once more, alone: the result line is the rerun's, with a note.
lab_tests() {
	local results=$OUT/labtests.results status seconds dir filter name rc n=0 bad=0 oops again
	if [ -z "$TESTBIN" ]; then skip "the Swift lab tests matching $1" "no test build (swift build --build-tests)"; return; fi
	test_bundle "$results" "$1" "${2:-}"; rc=$?
	while read -r -u 3 status seconds dir filter name; do
		n=$((n + 1))
		if [ "$status" = skip ]; then skip "$name" "$(cat "$dir/skip.txt" 2>/dev/null)"
		else
			[ "$status" = 0 ] || bad=$((bad + 1))
			oops=""
			if [ "$status" != 0 ] && [ -s "$dir/kernel-oops.txt" ]; then
				oops=$(grep -m1 -E 'BUG|Oops:|general protection' "$dir/kernel-oops.txt" || head -1 "$dir/kernel-oops.txt")
				rm -rf "$dir.oops"; mv "$dir" "$dir.oops"
				no_links
				test_bundle "$OUT/labtests.rerun" "$filter"
				read -r again seconds _ < "$OUT/labtests.rerun"; status=${again:-1}
			fi
			result "$name" "$status" "$seconds"
			if [ -n "$oops" ]; then
				[ -n "$again" ] && again="this result is the rerun's" || again="the rerun reported no result"
				echo "   rerun: the first run failed during a guest kernel oops (\"$oops\"; its logs in $dir.oops); $again" |
					tee -a "$OUT/results.txt"
			fi
			[ "$status" = 0 ] || sed 's/^/   | /' "$dir/failure.txt" 2>/dev/null | head -60
		fi
		sed 's/^/   /' "$dir/notes.txt" 2>/dev/null | tee -a "$OUT/results.txt"
	done 3< "$results"
	if [ "$n" = 0 ] || { [ "$rc" != 0 ] && [ "$bad" = 0 ]; }; then
		tail -20 "$OUT/labtests.log" | sed 's/^/   | /'
		result "the Swift lab tests matching $1 ran ($n tests, bundle exit $rc)" 1
	fi
}
# test_bundle RESULTS FILTER [SKIP]: one run of the test bundle; its tests' verdict lines go to RESULTS
test_bundle() {
	: > "$1"
	echo "== [$(up)] Swift lab tests: --filter '$2'${3:+ --skip '$3'}" | tee -a "$OUT/labtests.log"
	LAB_RESULTS=$1 LAB_MSGPIPE=$MSGPIPE LAB_MSGPIPE_LAB=$MSGPIPE_LAB LAB_PEERS=$LABBIN timeout 1800 "$TESTBIN" \
		--testing-library swift-testing --filter "$2" ${3:+--skip "$3"} >> "$OUT/labtests.log" 2>&1
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
# (not in a power cut's boot: its tests read no frames, and btmon's dump of a 2.3 MB transfer over 9p slows the run)
BTMON=""; [ "${LAB_ONLY:-}" = powercut ] || { btmon_watch & BTMON=$!; }
echo "== [$(up)] controllers: A=hci0 $A  B=hci1 $B"

# LAB_ONLY=stockbox (Scripts/lab.sh passes it through) skips checks 1-20 and runs only the stock-box section at
# the end: quicker while working on the D-Bus backend. (Checks 1-20 are deliberately not re-indented.)
# LAB_ONLY=roles runs only checks 25-28 (the peripheral sends, the central receives, several centrals at once)
# and skips checks 1-20 and the stock box. LAB_ONLY=newbluez runs only checks 34-36 (a newer bluetoothd, Tests/LabTests/NewBluez).
# LAB_ONLY=bumble runs only the Bumble section (Google's Bumble as the phone, Tests/LabTests/Bumble).
# LAB_ONLY=coc runs only the channel section (msgpipe over an LE credit-based channel, Tests/LabTests/Coc).
# LAB_ONLY=bonding runs only the bonding section (a Bumble phone that pairs with bonding, Tests/LabTests/Bonding).
# LAB_ONLY=core runs only checks 1-20 (kernel backend, no bluetoothd).
# LAB_ONLY=check runs only the Swift lab tests matching LAB_CHECK (Scripts/lab.sh --check FILTER).
# LAB_ONLY=kills runs only the kills over Bluetooth (Tests/LabTests/Kills).
# LAB_ONLY=powercut runs only one boot's tests of the power cut (Scripts/lab-powercut.sh starts it so).
if [ -n "${LAB_ONLY:-}" ] && [ "$LAB_ONLY" != core ]; then
	echo "== LAB_ONLY=${LAB_ONLY}: checks 1-20 skipped"
else
section core

# 1-14 (Tests/LabTests/Core), one run of the test bundle (each start costs 10-15 s in the guest): the raw ATT
# probes and C peers in both roles, scan, gatttool, connect by name, security medium, the hostile client against
# the probe and against listen, the raw goodput baseline (its number in $OUT/t9.log for check 15), gatttool against
# listen's GATT service, the GATT stack's goodput, send -> listen both ways (send's JSON line in $OUT/t12.json for
# checks 15 and 19b), a killed sender, a dropped link.
lab_tests 'Lab/Core/(centralReadsCServer|busyATTChannel|scanListsPeripheral|scanFilterFindsNothing|gatttoolReads|connectByName|servedTwoInTurn|reverseRoles|securityMedium|hostileClientProbe|rawGoodput|gattDiscovery|gattReadWrite|gattStackGoodput|sendListen|transferReverseRoles|killedSenderOnce|droppedLinkResumes|hostileClientListen)'
no_links

# 15. Goodput of msgpipe send (Transport + GATT, 1 MiB, time from the first write to the acknowledgement as
#     send --json reports it, check 12's $OUT/t12.json) against the raw C sender of check 9 ($OUT/t9.log) over
#     the same virtual link. A debug build under TCG: the ratio, not the absolute number, is what this shows.
#     A note, not a check (no result line): it stays here, where both numbers are at hand.
SECS=$(secs_of "$OUT/t12.json")
RAW=$(sed -n 's/.*goodput \([0-9]*\) bytes.*/\1/p' "$OUT/t9.log" 2>/dev/null | head -1)
if [ -n "$RAW" ] && [ -n "$SECS" ]; then
	SEND=$(awk "BEGIN{printf \"%d\", 1048576/$SECS}")
	echo "   goodput: msgpipe send 1 MiB $SEND B/s vs raw C $RAW B/s, ratio $(awk "BEGIN{printf \"%.2f\", $SEND/$RAW}")" | tee -a "$OUT/results.txt"
fi

# 16-19d (Tests/LabTests/Core), one run of the bundle: encrypted request/serve with a wrong key refused; with a
# third controller, two C centrals at once on the C server (a skip with the emulator's evidence under stock
# btvirt), a second central during a 2 MiB send -> listen, two gatttools at once on listen --max-centrals 2, two
# sends at once into it, two started at the same instant; BLELink's BLEPeripheral serving two centrals in-process
# (check 20, a skip under stock btvirt); Transport over StreamLink on an LE credit-based channel (l2test's raw channel the baseline in its note; LAB_COC=0 leaves it out).
later='encryptedRequest'
if [ -n "$C" ]; then later="$later|twoCCentralsAtOnce|secondCentralDuringTransfer|twoGatttoolsOnListen|twoSendsAtOnce|twoSendsSameInstant|peripheralServesTwoAtOnce"
else skip "two centrals at once, several centrals at once on msgpipe listen" "the lab has no third controller"; fi
if [ "${LAB_COC:-1}" = 0 ]; then skip "1 MiB through Transport over an LE credit-based channel (StreamLink)" "LAB_COC=0"
else later="$later|channelBaseline"; fi
lab_tests "Lab/Core/($later)"
no_links

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

# Checks 25-28 (roles: the peripheral sends, the central receives, several centrals at once; kernel backend,
# bluetoothd not running): Tests/LabTests/Roles in one run of the bundle; without a third controller one skip.
# LAB_ONLY=roles runs only them.
if [ -z "${LAB_ONLY:-}" ] || [ "${LAB_ONLY:-}" = roles ]; then
section roles
if [ -n "$C" ]; then
	lab_tests 'Lab/Roles/(pushToOneCentral|pushToTwoCentrals|pushToThreeCentrals|benchToPeripheral|benchToCentrals|legacyIntoGatttool|legacyIntoListen|cutLinkResumes|connectionParameters|centralIntervalKept|oneCentralThreePeripherals|threeSendsIntoListen|rawPairBaseline|stoppedCentral|knownPhones|sealedAndPlain)'
	[ -n "$D" ] || for name in "send --name --centrals 3 pushes 1 MiB to three subscribed centrals" \
		"one central on three peripherals (send --to x3, a killed peripheral, listen --to x3)"; do
		skip "$name" "the lab has no fourth controller"
	done
else
	skip "checks 25-28: the peripheral sends to several centrals" "the lab has no third controller"
fi
fi  # LAB_ONLY (checks 25-28)

# Google's Bumble as the phone (Tests/LabTests/Bumble, kernel backend, about 2-3 minutes): part of the full run
# (LAB_BUMBLE=0 leaves it out); LAB_ONLY=bumble runs only it. Without Bumble each test skips with the reason.
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_BUMBLE:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = bumble ]; then
section bumble
lab_tests 'Lab/Bumble/'
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
# anything of ours starts, as on every Raspberry Pi OS, Debian and Ubuntu box (Tests/LabTests/StockBox: each test
# starts its own bus and bluetoothd, -d where it reads bluetoothd's log, and stops them; LAB_GATT_CHANNELS=N and
# LAB_STOCKBOX_KILL=0 as before). LAB_ONLY=stockbox runs only it. Logs in OUT/labtests/TEST/.
section stockbox
lab_tests 'Lab/StockBox/'

fi  # LAB_ONLY (stock box)

# A newer bluetoothd beside Debian's (Tests/LabTests/NewBluez: each test starts its own bus and bluetoothd). LAB_ONLY=newbluez runs only it.
if [ -z "${LAB_ONLY:-}" ] || [ "${LAB_ONLY:-}" = newbluez ]; then
section newbluez
if [ -z "$C" ]; then
	skip "checks 34-36: a newer bluetoothd" "the lab has no third controller"
elif ! [ -x "${BLELAB_DIR:-/tmp/blelab}/bluez-new/bluetoothd" ]; then
	skip "checks 34-36: a newer bluetoothd" "no ${BLELAB_DIR:-/tmp/blelab}/bluez-new/bluetoothd (Scripts/blelab.sh build_bluetoothd_new could not fetch or build Debian trixie's bluez)"
else
	lab_tests 'Lab/NewBluez/'
fi
fi  # LAB_ONLY (checks 34-36)

# Kills over Bluetooth (Tests/LabTests/Kills: listen and send --spool killed mid-transfer, kernel backend and beside
# bluetoothd): last, once every bluetoothd before it is gone. LAB_ONLY=kills runs only it; LAB_KILLS=0 leaves it out.
# LAB_KILLS_N kills per test (the tests read it: default 5 alone, 3 in the full run). Kills 5, beside Debian's
# bluetoothd 5.66 (which fails it now and then on its own), joins the full run only with LAB_KILLS5=1.
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_KILLS:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = kills ]; then
section kills
lab_tests 'Lab/Kills/' 'listenKilledBesideBluetoothd'
if [ "${LAB_ONLY:-}" = kills ] || [ "${LAB_KILLS5:-0}" = 1 ]; then
	lab_tests 'Lab/Kills/listenKilledBesideBluetoothd'
else
	skip "beside bluetoothd, listen --backend bluez --out-dir killed mid-transfer over GATT (listenKilledBesideBluetoothd)" \
		"in the full run only with LAB_KILLS5=1; LAB_ONLY=kills runs it"
fi
fi  # LAB_ONLY (kills)

# A boot of the power cut (Scripts/lab-powercut.sh boots the VM for each step and mounts its disk; Tests/LabTests/PowerCut):
# the verdicts on run LAB_POWERCUT_VERIFY, then run LAB_POWERCUT_RUN, which ends in the VM's reset, in a run of its own
# (the bundle never reports after it), or in the last boot the file system's check.
if [ "${LAB_ONLY:-}" = powercut ]; then
section powercut
if [ "${LAB_POWERCUT_RUN:-0}" -gt 0 ]; then
	[ "${LAB_POWERCUT_VERIFY:-0}" = 0 ] || lab_tests 'Lab/PowerCut/(afterTheCut|afterGoingOn)'
	lab_tests 'Lab/PowerCut/cut'
elif [ "${LAB_POWERCUT_VERIFY:-0}" = 0 ]; then lab_tests 'Lab/PowerCut/fileSystemClean'
else lab_tests 'Lab/PowerCut/(afterTheCut|afterGoingOn|fileSystemClean)'
fi
fi  # LAB_ONLY (powercut)

section
[ -z "$BTMON" ] || { kill "$BTMON" 2>/dev/null; wait "$BTMON" 2>/dev/null; pkill -x btmon; }
echo "   ATT PDUs on the air: $(grep -c 'ATT:' "$OUT/btmon.txt")"
[ "$SKIPPED" = 0 ] || echo "   $SKIPPED skipped (see the skip lines)"
echo "$PASSED passed, $FAILED failed" | tee -a "$OUT/results.txt"
[ "$FAILED" = 0 ]
