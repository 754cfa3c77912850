#!/bin/bash
# lab-powercut.sh - the lab's power cut (docs/LAB.md "A power cut"), run on the host by Scripts/lab.sh (its section
# "powercut"; LAB_ONLY=powercut runs only it, LAB_POWERCUT=0 leaves it out of the full run):
#   Scripts/lab-powercut.sh OUT        MSGPIPE=PATH: the msgpipe the guest runs; BLELAB_*: see blelab.sh
# This script is the VM's set-up only: an ext4 image as the VM's virtio disk (BLELAB_DISK), the boots, and the disk
# mounted in each. What runs in the guest and every verdict are the Swift lab tests Lab.PowerCut
# (Tests/LabTests/PowerCut), which Scripts/lab-test.sh runs (LAB_ONLY=powercut): run K sends while listen writes to
# the disk and resets the VM at its cut point (test cut); the next boot judges run K from send's records
# (OUT/powercut/runK, on the host) and the disk (afterTheCut), goes on and judges again (afterGoingOn), then starts
# run K+1; the last boot checks the file system (fileSystemClean). N runs take N+1 boots. Appends each boot's
# "ok - ..." / "not ok - ..." lines to OUT/results.txt, its line to OUT/sections.txt, and "PASSED FAILED" to
# OUT/powercut/tally. Environment: LAB_POWERCUT_CUTS (default "15": one run, cut once 15 acknowledgements are
# recorded; "15 4 30": three runs).
#   Scripts/lab-powercut.sh --guest    (inside the VM, from the host side's blelab.sh call)
set -uo pipefail
cd "$(dirname "$0")/.."

# ------------------------------------------------------------------------------------------ guest side --
# Mounts the disk (ext4 replays its journal after a cut) and runs Lab.PowerCut's tests of this boot through
# lab-test.sh: LAB_POWERCUT_VERIFY, LAB_POWERCUT_CUT_EXIT, LAB_POWERCUT_RUN and LAB_POWERCUT_CUT come from the host.
if [ "${1:-}" = --guest ]; then
	D=/mnt/powercut
	mkdir -p "$D"
	[ -n "${BLELAB_DISK:-}" ] && mount -t ext4 "$BLELAB_DISK" "$D" || { echo "cannot mount the disk (${BLELAB_DISK:-none})"; exit 3; }
	echo "== [$(cut -d' ' -f1 /proc/uptime)] disk mounted: $(dmesg | grep -c 'recovery complete') journal recoveries in dmesg"
	LAB_ONLY=powercut LAB_POWERCUT_DISK=$D Scripts/lab-test.sh; rc=$?
	umount "$D" 2> /dev/null   # (the last boot's fileSystemClean unmounted it already)
	exit $rc
fi

# ------------------------------------------------------------------------------------------- host side --
OUT=${1:?usage: Scripts/lab-powercut.sh OUT}
MSGPIPE=${MSGPIPE:-$PWD/.build/debug/msgpipe}
read -ra CUTS <<< "${LAB_POWERCUT_CUTS:-15}"
PC=$OUT/powercut; IMG=$OUT/powercut.img   # the image beside the share, not in it
rm -rf "$PC"; mkdir -p "$PC"
# The tests run from the debug test bundle as built (lab.sh builds msgpipe only): without it, no verdict.
ls -d .build/debug/*PackageTests.xctest > /dev/null 2>&1 || { echo "lab-powercut: no test build (swift build --build-tests)"; exit 1; }
PASSED=0; FAILED=0; BOOT_SECS=()
now() { date +%s.%N; }
rm -f "$IMG"; truncate -s 128M "$IMG" && mkfs.ext4 -F -q "$IMG" || { echo "lab-powercut: mkfs.ext4 failed"; exit 1; }

t0=$(now); rc=""
for ((b = 0; b <= ${#CUTS[@]}; b++)); do
	run=$((b + 1)); [ $b -lt ${#CUTS[@]} ] || run=0
	n=$((b + 1)); tb=$(now)
	BLELAB_DISK=$IMG Scripts/blelab.sh -o "$PC" -t 900 -- \
		env MSGPIPE="$MSGPIPE" LAB_POWERCUT_VERIFY=$b LAB_POWERCUT_CUT_EXIT="$rc" LAB_POWERCUT_RUN=$run LAB_POWERCUT_CUT="${CUTS[$b]:-0}" \
		Scripts/lab-powercut.sh --guest > "$PC/boot$n.log" 2>&1
	rc=$?
	BOOT_SECS[b]=$(awk "BEGIN{printf \"%.0f\", $(now)-$tb}")
	# This boot's files (lab-test.sh writes them into the share) into bootN/; its result lines into OUT/results.txt.
	mkdir -p "$PC/boot$n"
	for f in results.txt sections.txt no_links.txt btmon.txt labtests.log labtests.results labtests; do
		[ -e "$PC/$f" ] && mv "$PC/$f" "$PC/boot$n/"
	done
	R=$PC/boot$n/results.txt
	grep -vE '^[0-9]+ passed, [0-9]+ failed$' "$R" 2> /dev/null | tee -a "$OUT/results.txt"
	PASSED=$((PASSED + $(grep -c '^ok - ' "$R" 2> /dev/null))); FAILED=$((FAILED + $(grep -c '^not ok - ' "$R" 2> /dev/null)))
	[ $b -gt 0 ] && echo "   power cut $b: boot with the cut ${BOOT_SECS[b - 1]} s, boot that judged it and went on ${BOOT_SECS[b]} s" | tee -a "$OUT/results.txt"
	# A boot ends with lab-test.sh's summary, or (a run) in the cut's reset: blelab.sh's 125 and the marker, which the
	# next boot's afterTheCut judges. Anything else (a boot that never got to its tests) fails here.
	if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$R" 2> /dev/null && ! { [ $run -gt 0 ] && [ $rc = 125 ] && [ -s "$PC/run$run/cut" ]; }; then
		FAILED=$((FAILED + 1))
		echo "not ok - power cut: boot $n ran its tests (blelab.sh exit $rc, see $PC/boot$n.log) [${BOOT_SECS[b]} s]" | tee -a "$OUT/results.txt"
		tail -8 "$PC/boot$n.log" | sed 's/^/   | /'
	fi
done
secs=$(awk "BEGIN{printf \"%.0f\", $(now)-$t0}")
echo "   power cut: ${#CUTS[@]} runs in $secs s ($((${#CUTS[@]} + 1)) boots)" | tee -a "$OUT/results.txt"
echo "powercut $secs $((PASSED + FAILED))" >> "$OUT/sections.txt"   # lab.sh's table
[ "$FAILED" = 0 ] && rm -f "$IMG"
echo "$PASSED $FAILED" > "$PC/tally"
[ "$FAILED" = 0 ]
