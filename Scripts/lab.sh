#!/bin/bash
# lab.sh - msgpipe's lab run on the host: builds msgpipe and the C test peers, sets the VM lab up on first
# use (Scripts/blelab.sh --setup: apt packages, Debian kernel, initramfs), runs the guest suite
# Scripts/lab-test.sh in the VM, and ends with the line "N passed, N failed" (exit 0 only if none failed).
# `Scripts/lab.sh --setup-only` sets the lab up and stops there. `Scripts/lab.sh --check FILTER` boots the VM
# and runs only the Swift lab tests (Tests/LabTests) whose name matches FILTER, a regular expression over
# test ids such as `Lab/Coc/` (a section) or `linesFormat` (one test), from the debug test bundle as built
# (`swift build --build-tests` first).
# Environment: BLELAB_DIR (default /tmp/blelab), LAB_OUT (default .build/lab/out), BLELAB_* (see blelab.sh),
# LAB_ONLY=core (only checks 1-20: the kernel backend, no bluetoothd), stockbox (only the stock-box section of lab-test.sh: bluetoothd and dbus-daemon running), roles, newbluez (Tests/LabTests/NewBluez),
# bumble (Google's Bumble as the phone, Tests/LabTests/Bumble), coc (msgpipe over an LE credit-based channel), LAB_BUMBLE=0 (the full run without the Bumble section),
# bonding (a Bumble phone pairing with bonding, Tests/LabTests/Bonding; LAB_BONDING=0 leaves it out of the full run, LAB_BONDING_LOST=1
# adds its bond 3, which LAB_ONLY=bonding runs anyway),
# powercut (Scripts/lab-powercut.sh on the host boots the VM for Tests/LabTests/PowerCut: the VM reset while listen
# --out-dir writes to a virtio disk, then booted again; the debug test bundle as built; LAB_POWERCUT=0 leaves it out
# of the full run, LAB_POWERCUT_CUTS its cut points),
# LAB_STOCKBOX_KILL=0 (skips check 23c), LAB_GATT_CHANNELS=N (bluetoothd with [GATT] Channels = N; 1: no EATT),
# LAB_TRACE=1 (each command's start time into OUT/trace.txt, Scripts/lab-trace.py sums them),
# kills (Tests/LabTests/Kills: listen and send --spool killed with SIGKILL mid-transfer over Bluetooth, every message
# kept exactly once; LAB_KILLS=0 leaves it out of the full run, LAB_KILLS_N the kills per check, default 5 alone and 3 in the full run; kills 5, beside bluetoothd 5.66, joins the full run only with LAB_KILLS5=1),
# LAB_CONFIGURATION=release (the checks run msgpipe built with -c release; default debug), LAB_MSGPIPE=PATH (the checks
# run that msgpipe, e.g. the package's release build; msgpipe-lab stays LAB_CONFIGURATION's), LAB_MSGPIPE_LAB=PATH
# (the checks run that msgpipe-lab; with both given nothing is built).
set -uo pipefail
# The root tools (modprobe, btmgmt's helpers, ip) live in sbin, which a user's PATH kept through sudo lacks.
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
cd "$(dirname "$0")/.."
# Run through sudo, what the lab builds and writes in the user's tree goes back to the user at the end: root's
# files there would make the user's next swift build fail ("Operation not permitted").
[ -z "${SUDO_UID:-}" ] || trap 'chown -R "$SUDO_UID:$SUDO_GID" .build 2>/dev/null' EXIT
ROOT=$PWD
LAB=${BLELAB_DIR:-/tmp/blelab}
OUT=${LAB_OUT:-$ROOT/.build/lab/out}
now() { date +%s.%N; }
secs() { awk "BEGIN{printf \"%.1f\", $2-$1}"; }
fail() { echo "lab: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

if [ "${1:-}" = --check ]; then
	[ -n "${2:-}" ] || fail "usage: Scripts/lab.sh --check FILTER"
	export LAB_ONLY=check LAB_CHECK=$2
	ls -d .build/debug/*PackageTests.xctest > /dev/null 2>&1 || fail "no test build: swift build --build-tests"
fi
t0=$(now)
if [ -z "$(ls "$LAB"/kernel/boot/vmlinuz-* 2>/dev/null)" ] || ! [ -e "$LAB/initramfs.cpio.gz" ] ||
	! command -v qemu-system-x86_64 > /dev/null || ! command -v btmgmt > /dev/null; then
	Scripts/blelab.sh --setup || fail "lab setup failed (Scripts/blelab.sh --setup)"
fi
# bleak (the stock-box checks' independent central) is installed on first use; the lab skips those checks
# without it.
PYTHONPATH=$LAB/python /usr/bin/python3 -c 'import bleak' > /dev/null 2>&1 || Scripts/blelab.sh --setup-bleak ||
	echo "lab: bleak could not be installed: the stock-box bleak checks will be skipped"
# Bumble (the Bumble checks' phone, a venv of Debian's python3) likewise; without it they are skipped.
"$LAB/bumble/bin/python" -c 'import bumble' > /dev/null 2>&1 || Scripts/blelab.sh --setup-bumble ||
	echo "lab: Bumble could not be installed: the Bumble checks will be skipped"
# --setup-only: only the above (Scripts/test.sh runs it beside the build: it mostly waits on the network).
if [ "${1:-}" = --setup-only ]; then echo "lab: set up in $(secs "$t0" "$(now)") s"; exit 0; fi
t1=$(now)
CONFIGURATION=${LAB_CONFIGURATION:-debug}   # release: the checks run an optimized msgpipe (the test build stays debug)
MSGPIPE_BIN=$PWD/.build/$CONFIGURATION/msgpipe; MSGPIPE_LAB_BIN=$PWD/.build/$CONFIGURATION/msgpipe-lab
products=(msgpipe msgpipe-lab)
[ "${LAB_ONLY:-}" = powercut ] && products=(msgpipe)   # the power cut runs msgpipe alone
drop_product() { local p kept=(); for p in "${products[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done; products=("${kept[@]}"); }
if [ -n "${LAB_MSGPIPE:-}" ]; then  # a msgpipe built elsewhere (the package's); the lab tool stays this build's
	[ -x "$LAB_MSGPIPE" ] || fail "LAB_MSGPIPE=$LAB_MSGPIPE is not an executable"
	MSGPIPE_BIN=$(cd "$(dirname "$LAB_MSGPIPE")" && pwd)/$(basename "$LAB_MSGPIPE"); drop_product msgpipe
fi
if [ -n "${LAB_MSGPIPE_LAB:-}" ]; then  # a msgpipe-lab built elsewhere: nothing is built here when both are given
	[ -x "$LAB_MSGPIPE_LAB" ] || fail "LAB_MSGPIPE_LAB=$LAB_MSGPIPE_LAB is not an executable"
	MSGPIPE_LAB_BIN=$(cd "$(dirname "$LAB_MSGPIPE_LAB")" && pwd)/$(basename "$LAB_MSGPIPE_LAB"); drop_product msgpipe-lab
fi
buildlog=$(mktemp)
for product in "${products[@]}"; do
	swift build -c "$CONFIGURATION" --product "$product" > "$buildlog" 2>&1 || { tail -20 "$buildlog"; fail "swift build failed"; }
	grep -E "error|warning: .*Sources" "$buildlog" || true
done
rm -f "$buildlog"
mkdir -p .build/lab
# The C peers (a second in all) also for --check: Lab.Core's tests run them.
[ "${LAB_ONLY:-}" = powercut ] || for peer in att_server att_client att_hostile att_blast; do
	gcc -O2 -Wall -o ".build/lab/$peer" "Tests/lab/$peer.c" -lbluetooth || fail "cannot build Tests/lab/$peer.c"
done
t2=$(now)
rm -rf "$OUT"; mkdir -p "$OUT"
rc=0; : > .build/lab/console.log
if [ "${LAB_ONLY:-}" != powercut ]; then   # the guest suite (the power cut boots its own VMs, below)
BLELAB_AUTOCONFIRM=${BLELAB_AUTOCONFIRM:-1} Scripts/blelab.sh -o "$OUT" -t "${LAB_TIMEOUT:-3000}" -- \
	env LAB_ONLY="${LAB_ONLY:-}" LAB_BUMBLE="${LAB_BUMBLE:-}" LAB_BONDING="${LAB_BONDING:-1}" LAB_COC="${LAB_COC:-1}" LAB_KILLS="${LAB_KILLS:-1}" LAB_KILLS_N="${LAB_KILLS_N:-}" LAB_KILLS5="${LAB_KILLS5:-}" LAB_BONDING_LOST="${LAB_BONDING_LOST:-}" LAB_STOCKBOX_KILL="${LAB_STOCKBOX_KILL:-1}" LAB_GATT_CHANNELS="${LAB_GATT_CHANNELS:-}" LAB_TRACE="${LAB_TRACE:-}" LAB_CHECK="${LAB_CHECK:-}" \
	MSGPIPE="$MSGPIPE_BIN" MSGPIPE_LAB="$MSGPIPE_LAB_BIN" Scripts/lab-test.sh \
	2>&1 | tee .build/lab/console.log
rc=${PIPESTATUS[0]}
fi
t3=$(now)
boot=$(sed -n 's/.*command starts at \([0-9.]*\)s.*/\1/p' .build/lab/console.log 2>/dev/null | head -1)
echo "lab: setup $(secs "$t0" "$t1") s, build $(secs "$t1" "$t2") s, VM run $(secs "$t2" "$t3") s (guest boot to command: ${boot:-?} s)"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$OUT/results.txt" 2>/dev/null | tail -1)
if [ -z "$line" ] && [ "${LAB_ONLY:-}" != powercut ]; then
	fail "the guest suite reported no result (VM exit status $rc; logs in $OUT)"
fi
# The power cut boots the VM on its own (twice or more), after the suite: its lines go to the same results.txt
# and sections.txt, and the verdict line counts its checks too.
if { [ -z "${LAB_ONLY:-}" ] && [ "${LAB_POWERCUT:-1}" != 0 ]; } || [ "${LAB_ONLY:-}" = powercut ]; then
	echo "== power cut (Scripts/lab-powercut.sh)"
	MSGPIPE="$MSGPIPE_BIN" Scripts/lab-powercut.sh "$OUT" || rc=1
	read -r pp pf < "$OUT/powercut/tally" 2>/dev/null || { pp=0; pf=1; }
	set -- ${line:-0 passed, 0 failed}
	line="$(($1 + pp)) passed, $(($3 + pf)) failed"
	echo "$line" >> "$OUT/results.txt"
	t3=$(now)
fi
# The table: where the lab's minutes went, a section a line, then the slowest checks.
{
	echo "lab: seconds per section"
	printf '  %-10s %6s\n' setup "$(secs "$t0" "$t1")" build "$(secs "$t1" "$t2")" boot "${boot:-?}"
	while read -r name seconds checks; do
		printf '  %-10s %6s  (%s checks)\n' "$name" "$seconds" "$checks"
	done < "$OUT/sections.txt" 2>/dev/null
	printf '  %-10s %6s\n' "VM total" "$(secs "$t2" "$t3")"
	[ -s "$OUT/no_links.txt" ] && awk '{ s += $2 - $1; n++ } END { printf "  of which %.0f s waiting for links to end between checks (%d waits)\n", s, n }' "$OUT/no_links.txt"
	echo "lab: the slowest checks"
	sed -n 's/^\(ok\|not ok\|skip\) - \(.*\) \[\([0-9]*\) s\]$/\3 \1 - \2/p' "$OUT/results.txt" 2>/dev/null | sort -rn | head -8 |
		while read -r seconds rest; do printf '  %5s s  %s\n' "$seconds" "$(echo "$rest" | cut -c1-110)"; done
}
echo "lab: logs in $OUT"
echo "$line"
[ "$rc" = 0 ] && [[ "$line" == *" 0 failed" ]]
