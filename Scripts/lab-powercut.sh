#!/bin/bash
# lab-powercut.sh - the lab's power cut (docs/LAB.md "A power cut"), run on the host by Scripts/lab.sh (its section
# "powercut"; LAB_ONLY=powercut runs only it, LAB_POWERCUT=0 leaves it out of the full run):
#   Scripts/lab-powercut.sh OUT        MSGPIPE=PATH: the msgpipe the guest runs; BLELAB_*: see blelab.sh
# `listen --out-dir` writes into an ext4 file system on a virtio disk (BLELAB_DISK) while `send --spool --json`
# (its spool on the same disk) records each acknowledgement in OUT/powercut/runK/acks.jsonl, on the host (9p); once
# that file holds LAB_POWERCUT_CUTS' Kth number of lines, the guest resets itself without a sync (sysrq b): its
# page cache dies as on a power loss. The next boot mounts the disk (ext4 replays its journal) and lists the
# output directory; then listen starts again on it and send --spool goes on with what its spool still holds (the
# same Transport session), and the directory is listed again. The host checks, from those listings and the JSON
# lines: every acknowledged message there exactly once and byte-identical, every visible *.msg a whole message;
# after going on, all messages there exactly once and the spool empty.
# Runs are chained: boot K+1 checks run K and then runs K+1 into new directories on the same (cut) file system,
# so N runs take N+1 boots. Appends "ok - ..." / "not ok - ..." lines and the numbers to OUT/results.txt, its
# line to OUT/sections.txt, and "PASSED FAILED" to OUT/powercut/tally. Environment: LAB_POWERCUT_CUTS (default
# "15": one run, cut once 15 acknowledgements are recorded; "15 4 30": three runs).
#   Scripts/lab-powercut.sh --guest    (inside the VM, from the host side's blelab.sh call)
set -uo pipefail
cd "$(dirname "$0")/.."
COUNT=40   # messages a run sends

# ------------------------------------------------------------------------------------------ guest side --
# PC_VERIFY=K (>0): list run K's output directory into OUT/runK/listing.txt ("NAME SIZE SHA256", hidden files too),
#   go on (listen and send --spool again), list it into listing_again.txt and the spool into spool_again.txt.
# PC_RUN=K (>0): run K: listen on hci0 into the disk, send the messages from hci1, cut the power after PC_CUT acks.
if [ "${1:-}" = --guest ]; then
	OUT=$BLELAB_OUT; D=/mnt/powercut
	up() { cut -d' ' -f1 /proc/uptime; }
	mkdir -p "$D"
	[ -n "${BLELAB_DISK:-}" ] && mount -t ext4 "$BLELAB_DISK" "$D" || { echo "cannot mount the disk (${BLELAB_DISK:-none})"; exit 3; }
	echo "== [$(up)] disk mounted: $(dmesg | grep -c 'recovery complete') journal recoveries in dmesg"
	# listing DIR FILE: "NAME SIZE SHA256" of every entry of DIR, hidden ones too
	listing() { (cd "$1" 2>/dev/null && for f in $(ls -A); do echo "$f $(stat -c %s "$f") $(sha256sum < "$f" | cut -d' ' -f1)"; done) > "$2"; }
	if [ "${PC_VERIFY:-0}" -gt 0 ]; then
		V=$PC_VERIFY; R=$OUT/run$V
		[ -d "$D/inbox$V" ] || echo "   no $D/inbox$V"
		listing "$D/inbox$V" "$R/listing.txt"
		echo "== [$(up)] run $V: $(wc -l < "$R/listing.txt") entries listed"
		# Then as a rebooted gateway would: listen again on the same directory, send --spool goes on with what its
		# spool (on the same disk) still holds, in the same Transport session; the journal drops what was kept.
		btmgmt --index 0 advertising off > /dev/null 2>&1
		"$MSGPIPE" listen --backend kernel --adapter hci0 --name "msgpipe-again$V" --out-dir "$D/inbox$V" \
			> /dev/null 2> "$R/listen_again.log" & LST=$!
		for i in $(seq 1 300); do grep -q advertising "$R/listen_again.log" && break; sleep 0.2; done
		timeout 120 "$MSGPIPE" send --backend kernel --adapter hci1 --to "msgpipe-again$V" --spool "$D/spool$V" --json \
			> "$R/acks_again.jsonl" 2> "$R/send_again.log"
		echo "$?" > "$R/send_again.rc"
		kill -INT $LST 2>/dev/null; for i in $(seq 1 100); do kill -0 $LST 2>/dev/null || break; sleep 0.1; done; kill -9 $LST 2>/dev/null
		listing "$D/inbox$V" "$R/listing_again.txt"
		listing "$D/spool$V" "$R/spool_again.txt"
		echo "== [$(up)] run $V again: send --spool exit $(cat "$R/send_again.rc"), $(wc -l < "$R/acks_again.jsonl") more acknowledgements"
	fi
	if [ "${PC_RUN:-0}" -gt 0 ]; then
		R=$OUT/run$PC_RUN; mkdir -p "$R"
		# hci0's global advertising (blelab.sh turns it on) would hide the instance listen adds for its name.
		btmgmt --index 0 advertising off > /dev/null 2>&1
		"$MSGPIPE" listen --backend kernel --adapter hci0 --name "msgpipe-cut$PC_RUN" --out-dir "$D/inbox$PC_RUN" \
			> /dev/null 2> "$R/listen.log" & LST=$!
		for i in $(seq 1 300); do grep -q advertising "$R/listen.log" && break; sleep 0.2; done
		t0=$(up)
		# The acknowledgements land on the host as send prints them (OUT is 9p, cache=none).
		: > "$R/acks.jsonl"
		"$MSGPIPE" send --backend kernel --adapter hci1 --to "msgpipe-cut$PC_RUN" --spool "$D/spool$PC_RUN" --json "$OUT"/msgs/*.bin \
			> "$R/acks.jsonl" 2> "$R/send.log" & SND=$!
		until=$((SECONDS + 120))
		while [ $SECONDS -lt $until ] && [ "$(wc -l < "$R/acks.jsonl")" -lt "$PC_CUT" ] && kill -0 $SND 2>/dev/null; do sleep 0.05; done
		n=$(wc -l < "$R/acks.jsonl")
		if [ "$n" -ge "$PC_CUT" ]; then
			# The marker tells the host that the cut was ours; then a reset without a sync (qemu -no-reboot exits).
			# (builtins only: every command started here lets more acknowledgements in before the reset)
			read -r t _ < /proc/uptime; echo "$n acknowledgements recorded when the cut was ordered, send started at $t0 s, cut at $t s" > "$R/cut"
			echo 1 > /proc/sys/kernel/sysrq; echo b > /proc/sysrq-trigger
			sleep 30
		fi
		echo "run $PC_RUN: only $n of $PC_CUT acknowledgements after $(awk "BEGIN{printf \"%.0f\", $(up)-$t0}") s; no cut"
		kill $SND $LST 2>/dev/null; tail -n 5 "$R/send.log" "$R/listen.log"
		umount "$D"; exit 1
	fi
	umount "$D"
	exit 0
fi

# ------------------------------------------------------------------------------------------- host side --
OUT=${1:?usage: Scripts/lab-powercut.sh OUT}
MSGPIPE=${MSGPIPE:-$PWD/.build/debug/msgpipe}
read -ra CUTS <<< "${LAB_POWERCUT_CUTS:-15}"
PC=$OUT/powercut; IMG=$OUT/powercut.img   # the image beside the share, not in it
rm -rf "$PC"; mkdir -p "$PC/msgs"
PASSED=0; FAILED=0; CUT_OK=(); BOOT_SECS=()
now() { date +%s.%N; }
result() {  # result NAME STATUS SECS (the line's "[SECS s]" feeds lab.sh's table of the slowest checks)
	if [ "$2" = 0 ]; then PASSED=$((PASSED + 1)); echo "ok - $1 [$3 s]" | tee -a "$OUT/results.txt"
	else FAILED=$((FAILED + 1)); echo "not ok - $1 [$3 s]" | tee -a "$OUT/results.txt"; fi
}

# COUNT messages, 1 B to 1 MiB (about 2.3 MB), the same bytes every run, all different; OUT/powercut/expected.txt:
# "INDEX SIZE SHA256" (INDEX: the message's place among send's inputs, send's "index").
/usr/bin/python3 - "$PC" "$COUNT" <<'PY' || { echo "lab-powercut: cannot make the messages"; exit 1; }
import hashlib, random, sys
pc, count = sys.argv[1], int(sys.argv[2])
sizes = [1, 100, 2000, 30000, 7, 65536, 512, 250000, 4095, 12345]
seen = set()
with open(f"{pc}/expected.txt", "w") as e:
    for i in range(1, count + 1):
        size = 1048576 if i == 17 else sizes[i % len(sizes)]
        data = bytes([i]) * size if size < 4 else random.Random(i).randbytes(size)
        digest = hashlib.sha256(data).hexdigest()
        assert digest not in seen
        seen.add(digest)
        open(f"{pc}/msgs/{i:02d}.bin", "wb").write(data)
        e.write(f"{i} {size} {digest}\n")
PY
rm -f "$IMG"; truncate -s 128M "$IMG" && mkfs.ext4 -F -q "$IMG" || { echo "lab-powercut: mkfs.ext4 failed"; exit 1; }

# check K LISTING WHAT ACKS...: run K's verdict from the JSON lines of ACKS (send's, recorded on the host), the
# output directory's LISTING and expected.txt; prints the numbers. WHAT "cut": every acknowledged message there;
# "again" (after listen and send --spool went on): all of them there. Both: each at most once, each *.msg whole.
check() {
	/usr/bin/python3 - "$PC" "$@" <<'PY'
import json, os, sys
pc, k, listing, what, acks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
expected, size_of = {}, {}
for line in open(f"{pc}/expected.txt"):
    i, size, digest = line.split()
    expected[digest] = int(i)
    size_of[int(i)] = int(size)
acked, torn = set(), 0
for name in acks:
    for line in open(name):
        try:
            j = json.loads(line)
        except ValueError:
            torn += 1   # a line cut by the power: not a recorded acknowledgement
            continue
        # send --spool: spool_id N is the Nth input of a fresh spool (its size says so too)
        i = j["spool_id"]
        assert j["bytes"] == size_of[i], line
        acked.add(i)
found, part, other, bad = {}, 0, [], []
for line in open(f"{pc}/run{k}/{listing}"):
    name, size, digest = line.split()
    if name.endswith(".part"): part += 1; continue
    if not name.endswith(".msg"): other.append(name); continue
    if digest in expected: found.setdefault(expected[digest], []).append(name)
    else: bad.append(f"{name} ({size} B)")
want = set(size_of) if what == "again" else acked
lost = sorted(i for i in want if i not in found)
dup = sorted(i for i, names in found.items() if len(names) > 1)
if what == "cut":
    cut = open(f"{pc}/run{k}/cut").read().split()[0] if os.path.exists(f"{pc}/run{k}/cut") else "?"
    print(f"power cut {k}: {len(acked)} acknowledgements recorded (the cut ordered at {cut}{', a torn last line' if torn else ''}), "
          f"{sum(len(v) for v in found.values())} messages found ({len(set(found) - acked)} not acknowledged), ", end="")
else:
    print(f"power cut {k} again: {len(acked)} of {len(want)} acknowledged in all, {sum(len(v) for v in found.values())} messages found, ", end="")
print(f"lost {len(lost)}, duplicated {len(dup)}, not a whole message {len(bad)}, hidden .part {part}, "
      f"other files {' '.join(other) or 'none'}")
for label, items in (("lost", lost), ("duplicated", dup), ("not a whole message", bad)):
    if items: print(f"   {label}: {items}")
sys.exit(0 if acked and not lost and not dup and not bad else 1)
PY
}

t0=$(now)
for ((b = 0; b <= ${#CUTS[@]}; b++)); do
	run=$((b + 1)); [ $b -lt ${#CUTS[@]} ] || run=0
	tb=$(now)
	BLELAB_DISK=$IMG Scripts/blelab.sh -o "$PC" -t 300 -- \
		env MSGPIPE="$MSGPIPE" PC_VERIFY=$b PC_RUN=$run PC_CUT="${CUTS[$b]:-0}" Scripts/lab-powercut.sh --guest \
		> "$PC/boot$((b + 1)).log" 2>&1
	rc=$?
	BOOT_SECS[b]=$(awk "BEGIN{printf \"%.0f\", $(now)-$tb}")
	grep -v '^\[blelab\]' "$PC/boot$((b + 1)).log" | grep -E '^(==|run |cannot|   )' | sed 's/^/   /'
	if [ $b -gt 0 ]; then
		v=$b
		R=$PC/run$v
		if [ -e "$R/listing.txt" ]; then
			check "$v" listing.txt cut "$R/acks.jsonl" > "$R/verdict.txt" 2>&1; st=$?
		else
			echo "power cut $v: the next boot listed nothing (exit $rc)" > "$R/verdict.txt"; st=1
		fi
		[ "${CUT_OK[v]:-0}" = 1 ] || st=1
		sed 's/^/   /' "$R/verdict.txt" | tee -a "$OUT/results.txt"
		echo "   power cut $v: boot with the cut ${BOOT_SECS[v - 1]} s, boot that listed it and went on ${BOOT_SECS[b]} s" | tee -a "$OUT/results.txt"
		result "power cut $v (VM reset once send --spool recorded ${CUTS[v - 1]} acknowledgements from listen --out-dir on ext4): every acknowledged message there once, byte-identical, no partial file" \
			$st $((BOOT_SECS[v - 1] + BOOT_SECS[b]))
		# The same directory after listen and send --spool went on: all messages once, the spool empty.
		if [ -e "$R/listing_again.txt" ]; then
			check "$v" listing_again.txt again "$R/acks.jsonl" "$R/acks_again.jsonl" > "$R/verdict_again.txt" 2>&1; st=$?
		else
			echo "power cut $v again: nothing listed" > "$R/verdict_again.txt"; st=1
		fi
		left=$(grep -c '\.msg ' "$R/spool_again.txt" 2>/dev/null)
		echo "   power cut $v again: send --spool exit $(cat "$R/send_again.rc" 2>/dev/null), ${left:-?} messages left in the spool" >> "$R/verdict_again.txt"
		[ "$(cat "$R/send_again.rc" 2>/dev/null)" = 0 ] && [ "$left" = 0 ] || st=1
		sed 's/^/   /' "$R/verdict_again.txt" | tee -a "$OUT/results.txt"
		result "power cut $v, then listen again on the same directory and send --spool going on (same session): all $COUNT messages there once, byte-identical" $st 0
	fi
	# A boot with a run ends in our reset: no exit status (125) and the marker. Anything else fails the run.
	if [ $run -gt 0 ]; then
		CUT_OK[run]=0
		if [ $rc = 125 ] && [ -s "$PC/run$run/cut" ]; then CUT_OK[run]=1
		else echo "   power cut $run: no cut (blelab.sh exit $rc); see $PC/boot$((b + 1)).log"; tail -8 "$PC/boot$((b + 1)).log" | sed 's/^/   | /'; fi
	fi
	if [ $run = 0 ] && [ $rc != 0 ]; then
		result "power cut: the last boot lists the disk (blelab.sh exit $rc, see $PC/boot$((b + 1)).log)" 1 "${BOOT_SECS[b]}"
	fi
done
# The file system after the replays and the clean unmount: e2fsck finds nothing to fix.
e2fsck -fn "$IMG" > "$PC/e2fsck.log" 2>&1
result "power cut: ext4 clean after the cuts (e2fsck -fn)" $? 0
secs=$(awk "BEGIN{printf \"%.0f\", $(now)-$t0}")
echo "   power cut: ${#CUTS[@]} runs in $secs s ($((${#CUTS[@]} + 1)) boots)" | tee -a "$OUT/results.txt"
echo "powercut $secs $((PASSED + FAILED))" >> "$OUT/sections.txt"   # lab.sh's table
[ "$FAILED" = 0 ] && rm -f "$IMG"
echo "$PASSED $FAILED" > "$PC/tally"
[ "$FAILED" = 0 ]
