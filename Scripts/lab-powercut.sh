#!/bin/bash
# lab-powercut.sh - the lab's power cut (docs/LAB.md "A power cut"), run on the host by Scripts/lab.sh (its section
# "powercut"; LAB_ONLY=powercut runs only it, LAB_POWERCUT=0 leaves it out of the full run):
#   Scripts/lab-powercut.sh OUT        MSGPIPE=PATH: the msgpipe the guest runs; BLELAB_*: see blelab.sh
# `listen --out-dir` writes into an ext4 file system on a virtio disk (BLELAB_DISK) while `send --json` records each
# acknowledgement in OUT/runK/acks.jsonl, on the host (9p); once LAB_POWERCUT_CUTS' Kth number of acknowledgements
# is recorded, the guest resets itself without a sync (sysrq b): its page cache dies as on a power loss. The next
# boot mounts the disk (ext4 replays its journal) and lists the output directory; the host then checks that every
# acknowledged message is there exactly once and byte-identical and that every visible *.msg file is a whole message.
# Runs are chained: boot K+1 lists run K and then runs K+1 into a new directory on the same (cut) file system,
# so N runs take N+1 boots. Appends "ok - ..." / "not ok - ..." lines and the numbers to OUT/results.txt, writes
# "PASSED FAILED" to OUT/powercut/tally. Environment: LAB_POWERCUT_CUTS (default "15 4": two runs, cut after 15,
# then after 4 acknowledgements).
#   Scripts/lab-powercut.sh --guest    (inside the VM, from the host side's blelab.sh call)
set -uo pipefail
cd "$(dirname "$0")/.."
COUNT=40   # messages a run sends

# ------------------------------------------------------------------------------------------ guest side --
# PC_VERIFY=K (>0): list run K's output directory into OUT/runK/listing.txt ("NAME SIZE SHA256", hidden files too).
# PC_RUN=K (>0): run K: listen on hci0 into the disk, send the messages from hci1, cut the power after PC_CUT acks.
if [ "${1:-}" = --guest ]; then
	OUT=$BLELAB_OUT; D=/mnt/powercut
	up() { cut -d' ' -f1 /proc/uptime; }
	mkdir -p "$D"
	[ -n "${BLELAB_DISK:-}" ] && mount -t ext4 "$BLELAB_DISK" "$D" || { echo "cannot mount the disk (${BLELAB_DISK:-none})"; exit 3; }
	echo "== [$(up)] disk mounted: $(dmesg | grep -c 'recovery complete') journal recoveries in dmesg"
	if [ "${PC_VERIFY:-0}" -gt 0 ]; then
		dir=$D/inbox$PC_VERIFY
		[ -d "$dir" ] || echo "   no $dir"
		(cd "$dir" 2>/dev/null && for f in $(ls -A); do echo "$f $(stat -c %s "$f") $(sha256sum < "$f" | cut -d' ' -f1)"; done) \
			> "$OUT/run$PC_VERIFY/listing.txt"
		echo "== [$(up)] run $PC_VERIFY: $(wc -l < "$OUT/run$PC_VERIFY/listing.txt") entries listed"
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
		"$MSGPIPE" send --backend kernel --adapter hci1 --to "msgpipe-cut$PC_RUN" --json "$OUT"/msgs/*.bin \
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
read -ra CUTS <<< "${LAB_POWERCUT_CUTS:-15 4}"
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

# check K: run K's verdict from its acks.jsonl, its listing and expected.txt; prints the numbers line.
check() {
	/usr/bin/python3 - "$PC" "$1" <<'PY'
import json, os, sys
pc, k = sys.argv[1], sys.argv[2]
expected = {}
for line in open(f"{pc}/expected.txt"):
    i, size, digest = line.split()
    expected[digest] = (int(i), int(size))
acked, torn = set(), 0
for line in open(f"{pc}/run{k}/acks.jsonl"):
    try:
        j = json.loads(line)
    except ValueError:
        torn += 1   # a line cut by the power: not a recorded acknowledgement
        continue
    assert j["file"].endswith(f"/{j['index']:02d}.bin"), line
    acked.add(j["index"])
found, part, other, bad = {}, 0, [], []
for line in open(f"{pc}/run{k}/listing.txt"):
    name, size, digest = line.split()
    if name.endswith(".part"): part += 1; continue
    if not name.endswith(".msg"): other.append(name); continue
    if digest in expected: found.setdefault(expected[digest][0], []).append(name)
    else: bad.append(f"{name} ({size} B)")
lost = sorted(i for i in acked if i not in found)
dup = sorted(i for i, names in found.items() if len(names) > 1)
cut = open(f"{pc}/run{k}/cut").read().split()[0] if os.path.exists(f"{pc}/run{k}/cut") else "?"
print(f"power cut {k}: {len(acked)} acknowledgements recorded (the cut ordered at {cut}{', a torn last line' if torn else ''}), "
      f"{sum(len(v) for v in found.values())} messages found ({len(set(found) - acked)} not acknowledged), "
      f"lost {len(lost)}, duplicated {len(dup)}, not a whole message {len(bad)}, hidden .part {part}, "
      f"other files {' '.join(other) or 'none'}")
for what, items in (("lost", lost), ("duplicated", dup), ("not a whole message", bad)):
    if items: print(f"   {what}: {items}")
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
		if [ -e "$PC/run$v/listing.txt" ]; then
			check "$v" > "$PC/run$v/verdict.txt" 2>&1; st=$?
		else
			echo "power cut $v: the next boot listed nothing (exit $rc)" > "$PC/run$v/verdict.txt"; st=1
		fi
		[ "${CUT_OK[v]:-0}" = 1 ] || st=1
		sed 's/^/   /' "$PC/run$v/verdict.txt" | tee -a "$OUT/results.txt"
		echo "   power cut $v: boot with the cut ${BOOT_SECS[v - 1]} s, boot that listed it ${BOOT_SECS[b]} s" | tee -a "$OUT/results.txt"
		result "power cut $v (VM reset once send recorded ${CUTS[v - 1]} acknowledgements from listen --out-dir on ext4): every acknowledged message there once, byte-identical, no partial file" \
			$st $((BOOT_SECS[v - 1] + BOOT_SECS[b]))
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
