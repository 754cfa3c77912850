# lab-bumble.sh - the guest suite's Bumble section: Google's Bumble (PyPI `bumble`, a whole BLE host in Python with
# its own HCI, L2CAP, ATT, GATT and SMP) plays the phone, msgpipe the Linux box, kernel backend (bluetoothd not
# running). Sourced by Scripts/lab-test.sh (LAB_ONLY=bumble alone; in the full run after checks 25-28 unless
# LAB_BUMBLE=0). Uses lab-test.sh's helpers (expect, skip, result, wait_for, wait_bounded, wait_file, no_links, stop,
# up) and its A/B/D/OUT/MSGPIPE. Bumble takes one controller away from the kernel (hci3 = D, else hci1 = B):
# powered off through mgmt, then opened with Bumble's HCI user channel (`hci-socket:N`); msgpipe runs on hci0.
# Bumble runs in $BLELAB_DIR/bumble, a venv of Debian's python3 (Scripts/blelab.sh --setup-bumble).
#   bumble 1. Tests/lab/bumble_central.py (random static address, connects by name) writes a file as Write
#      Commands in the legacy Start/End format into `msgpipe listen --profile custom:FFF0:FFF2:FFF1 --format legacy`
#      at ATT_MTU 23, 185 and 517 (it asks for that MTU): the file arrives byte-identical each time.
#   bumble 2. The same into `listen --profile nus --format lines` (text without a newline, ATT_MTU 185).
#   bumble 3. The same into seed 003's 128-bit QX layout (`--profile custom:UUID:UUID:UUID --format eom`).
#   bumble 4. Tests/lab/bumble_peripheral.py advertises the seeds' FFF0 layout from a random static address and
#      notifies a file in legacy once subscribed; `msgpipe listen --to NAME --count 1` (the central, finding it by
#      name) takes it byte-identical.
#   bumble 5. bumble_central.py subscribes to `msgpipe send --name NAME --profile custom:FFF0:FFF2:FFF1` (msgpipe
#      the notifying peripheral) in legacy and in lines: the decoded message is the file, send exits 0.
#   bumble 5b. One msgpipe central, three peers: `send --to` x3 (nus, lines) to listen on hci1 and hci2 and to
#      bumble_peripheral.py --receive (random static address, found by name): 10 B, 4 KiB and 100 KiB to each,
#      byte-identical everywhere, send exits 0 with one "PEER: 3 of 3" line per peer.
#   bumble 6. Two bumble_central.py on hci2 and hci3 connect at the same instant (--at), by address, into one
#      listen --max-centrals 2: both files arrive (btmon's Create Connection / Connection Complete lines in the log).
#   bumble 7. Tests/lab/bumble_coc.py (a phone app's L2CAP channel) reads the PSM characteristic, opens the LE
#      credit-based channel and writes a line into `listen --format lines`; bumble 8: it receives the line that
#      `send --name --format lines` writes to it over the channel.
# Each check's MTU, bytes and seconds (Bumble's "done:" line) go into results.txt.

BUMBLE_PY=${BLELAB_DIR:-/tmp/blelab}/bumble/bin/python
BKB=(--backend kernel)
BUMBLE_LEGACY=custom:FFF0:FFF2:FFF1   # seed 000_*'s layout: service FFF0, the central writes FFF2, notify FFF1
# seed 003_*'s QX layout (QXMacro.h): the service, the characteristic the central writes, the one it reads/subscribes
BUMBLE_SVC128=68753a44-4d6f-1226-9c60-0050e4c00000
BUMBLE_WR128=68753a44-4d6f-1226-9c60-0050e4c22222
BUMBLE_NT128=68753a44-4d6f-1226-9c60-0050e4c11111
if [ -n "$D" ]; then BUMBLE_INDEX=3; else BUMBLE_INDEX=1; fi

# bumble_numbers LOG WHAT: the "done: MTU M, B bytes, S s" line of a Bumble peer into results.txt
bumble_numbers() {
	local done_line
	done_line=$(sed -n 's/^done: //p' "$1" | tail -1)
	echo "   bumble: $2: ${done_line:-no numbers (see $1)}" | tee -a "$OUT/results.txt"
}
# bumble_controller_free: hciN powered off through mgmt (the kernel keeps it down), so Bumble's user channel can bind it
bumble_controller_free() {
	local i
	btmgmt --index "$BUMBLE_INDEX" power off > /dev/null 2>&1
	for i in $(seq 1 50); do hciconfig "hci$BUMBLE_INDEX" 2>/dev/null | grep -q "DOWN" && return 0; sleep 0.1; done
	hciconfig "hci$BUMBLE_INDEX" down
}
# bumble_central_into_listen NAME PROFILE FORMAT MTU FILE SERVICE WRITE NOTIFY: listen on hci0 (--count 1), the
# Bumble central writes FILE into it; the log $OUT/tbumble_NAME.log holds both sides and the verdict lines.
bumble_central_into_listen() {
	local tag=$1 profile=$2 format=$3 mtu=$4 file=$5 service=$6 write=$7 notify=$8 log=$OUT/tbumble_$1.log LS
	no_links
	rm -rf "$OUT/bumble_inbox_$tag"
	"$MSGPIPE" listen "${BKB[@]}" --adapter hci0 --name "msgpipe-bb$tag" --profile "$profile" --format "$format" \
		--count 1 --out-dir "$OUT/bumble_inbox_$tag" > /dev/null 2> "$OUT/tbumble_${tag}_listen.log" & LS=$!
	wait_for "$OUT/tbumble_${tag}_listen.log" "advertising"
	timeout 180 "$BUMBLE_PY" Tests/lab/bumble_central.py --transport "hci-socket:$BUMBLE_INDEX" --to "msgpipe-bb$tag" \
		--mtu "$mtu" --service "$service" --write "$write" --notify "$notify" --format "$format" --send "$file" \
		> "$OUT/tbumble_${tag}_bumble.log" 2>&1
	echo "bumble exit $?" > "$log"
	wait_bounded $LS 30; echo "listen exit $?" >> "$log"
	cmp "$file" "$OUT/bumble_inbox_$tag/00000001.msg" >> "$log" 2>&1 && echo "byte-identical" >> "$log"
	cat "$OUT/tbumble_${tag}_bumble.log" "$OUT/tbumble_${tag}_listen.log" >> "$log"
}

if ! [ -x "$BUMBLE_PY" ] || ! "$BUMBLE_PY" -c 'import bumble' > /dev/null 2>&1; then
	skip "bumble: Google's Bumble as the phone" "no Bumble in $BUMBLE_PY (Scripts/blelab.sh --setup-bumble)"
else
echo "== [$(up)] Bumble $("$BUMBLE_PY" -m pip show bumble 2>/dev/null | sed -n 's/^Version: //p') as the phone on hci$BUMBLE_INDEX (HCI user channel), msgpipe on hci0"
T_BUMBLE=$SECONDS
btmgmt --index 0 advertising off > /dev/null 2>&1
no_links
bumble_controller_free
[ -e "$OUT/bumble_kib32.bin" ] || head -c 32768 /dev/urandom > "$OUT/bumble_kib32.bin"
[ -e "$OUT/bumble_kib64.bin" ] || head -c 65536 /dev/urandom > "$OUT/bumble_kib64.bin"
# lines carries text without a newline: base64 of random bytes, one line
[ -e "$OUT/bumble_text.txt" ] || head -c 49152 /dev/urandom | base64 -w0 > "$OUT/bumble_text.txt"

# bumble 1: a phone central writes legacy Start/End into msgpipe's GATT server at three ATT MTUs.
for mtu in 23 185 517; do
	file=$OUT/bumble_kib64.bin; [ "$mtu" = 23 ] && file=$OUT/bumble_kib32.bin
	bumble_central_into_listen "c$mtu" "$BUMBLE_LEGACY" legacy "$mtu" "$file" FFF0 FFF2 FFF1
	bumble_numbers "$OUT/tbumble_c$mtu.log" "central -> listen, legacy, asked MTU $mtu"
	expect "bumble central (random address, MTU $mtu) writes legacy Start/End into msgpipe listen custom:FFF0:FFF2:FFF1: byte-identical" \
		"$OUT/tbumble_c$mtu.log" "bumble exit 0" "listen exit 0" "byte-identical" "^own address .* \\(random static\\)" \
		"^ATT_MTU $mtu \\(asked for $mtu\\)"
done

# bumble 2: Nordic UART Service, lines (Bumble writes to NUS RX 6E400002, subscribes to TX 6E400003).
bumble_central_into_listen nus nus lines 185 "$OUT/bumble_text.txt" \
	6E400001-B5A3-F393-E0A9-E50E24DCCA9E 6E400002-B5A3-F393-E0A9-E50E24DCCA9E 6E400003-B5A3-F393-E0A9-E50E24DCCA9E
bumble_numbers "$OUT/tbumble_nus.log" "central -> listen, nus lines, asked MTU 185"
expect "bumble central writes lines into msgpipe listen --profile nus: the line byte-identical" \
	"$OUT/tbumble_nus.log" "bumble exit 0" "listen exit 0" "byte-identical"

# bumble 3: a 128-bit custom service, eom.
bumble_central_into_listen u128 "custom:$BUMBLE_SVC128:$BUMBLE_WR128:$BUMBLE_NT128" eom 247 "$OUT/bumble_kib64.bin" \
	"$BUMBLE_SVC128" "$BUMBLE_WR128" "$BUMBLE_NT128"
bumble_numbers "$OUT/tbumble_u128.log" "central -> listen, 128-bit custom service, eom, asked MTU 247"
expect "bumble central writes eom into msgpipe listen with a 128-bit custom service: byte-identical" \
	"$OUT/tbumble_u128.log" "bumble exit 0" "listen exit 0" "byte-identical"

# bumble 4: a phone peripheral (random static address) pushes legacy to msgpipe's central, found by name.
no_links
rm -rf "$OUT/bumble_inbox_p"
"$BUMBLE_PY" Tests/lab/bumble_peripheral.py --transport "hci-socket:$BUMBLE_INDEX" --name bumble-phone \
	--service FFF0 --write FFF2 --notify FFF1 --format legacy --send "$OUT/bumble_kib64.bin" --timeout 90 \
	> "$OUT/tbumble_p_bumble.log" 2>&1 & BPH=$!
wait_for "$OUT/tbumble_p_bumble.log" "^advertising"
timeout 150 "$MSGPIPE" listen "${BKB[@]}" --adapter hci0 --to bumble-phone --format legacy --profile "$BUMBLE_LEGACY" \
	--count 1 --out-dir "$OUT/bumble_inbox_p" > /dev/null 2> "$OUT/tbumble_p_listen.log"
echo "listen exit $?" > "$OUT/tbumble_p.log"
wait_bounded $BPH 60; echo "bumble exit $?" >> "$OUT/tbumble_p.log"
cmp "$OUT/bumble_kib64.bin" "$OUT/bumble_inbox_p/00000001.msg" >> "$OUT/tbumble_p.log" 2>&1 && echo "byte-identical" >> "$OUT/tbumble_p.log"
cat "$OUT/tbumble_p_bumble.log" "$OUT/tbumble_p_listen.log" >> "$OUT/tbumble_p.log"
bumble_numbers "$OUT/tbumble_p.log" "peripheral -> listen --to, legacy"
expect "bumble peripheral (random address, FFF0 layout) pushes legacy to msgpipe listen --to NAME: byte-identical" \
	"$OUT/tbumble_p.log" "listen exit 0" "bumble exit 0" "byte-identical" "^subscribed by" \
	"^msgpipe: connected to .* \\(random\\)"

# bumble 5: msgpipe send as the notifying peripheral, the Bumble central subscribes and decodes (legacy, lines).
for format in legacy lines; do
	file=$OUT/bumble_kib64.bin; [ "$format" = lines ] && file=$OUT/bumble_text.txt
	no_links
	"$MSGPIPE" send "${BKB[@]}" --adapter hci0 --name "msgpipe-bbs$format" --format "$format" --profile "$BUMBLE_LEGACY" \
		"$file" > /dev/null 2> "$OUT/tbumble_s${format}_send.log" & SND=$!
	wait_for "$OUT/tbumble_s${format}_send.log" "advertising"
	timeout 180 "$BUMBLE_PY" Tests/lab/bumble_central.py --transport "hci-socket:$BUMBLE_INDEX" --to "msgpipe-bbs$format" \
		--mtu 517 --service FFF0 --write FFF2 --notify FFF1 --format "$format" --receive "$OUT/bumble_got_$format" \
		--timeout 120 > "$OUT/tbumble_s${format}_bumble.log" 2>&1
	echo "bumble exit $?" > "$OUT/tbumble_s$format.log"
	wait_bounded $SND 30; echo "send exit $?" >> "$OUT/tbumble_s$format.log"
	cmp "$file" "$OUT/bumble_got_$format" >> "$OUT/tbumble_s$format.log" 2>&1 && echo "byte-identical" >> "$OUT/tbumble_s$format.log"
	cat "$OUT/tbumble_s${format}_bumble.log" "$OUT/tbumble_s${format}_send.log" >> "$OUT/tbumble_s$format.log"
	bumble_numbers "$OUT/tbumble_s$format.log" "send --name -> central, $format, asked MTU 517"
	expect "bumble central subscribes to msgpipe send --name ($format, custom:FFF0:FFF2:FFF1): the message byte-identical" \
		"$OUT/tbumble_s$format.log" "bumble exit 0" "send exit 0" "byte-identical"
done

# bumble 5b: one central, several peers of different hosts: send on hci0 with --to three times, --profile nus
# --format lines, to `listen` on hci1 and hci2 and to Tests/lab/bumble_peripheral.py --receive (random static
# address, found by name). Three messages (10 B, 4 KiB, 100 KiB of text): every peer gets them byte-identical
# (listen: one file each; Bumble: the written bytes, each message followed by its newline), send exits 0.
if [ "$BUMBLE_INDEX" != 3 ] || [ -z "$C" ]; then
	skip "bumble: send --to x3 (nus lines) to two msgpipe listens and a Bumble peripheral" "needs hci1, hci2 and hci3 (btvirt -l4)"
else
	no_links
	log=$OUT/tbumble_fan.log
	NUS_UUIDS=(6E400001-B5A3-F393-E0A9-E50E24DCCA9E 6E400002-B5A3-F393-E0A9-E50E24DCCA9E 6E400003-B5A3-F393-E0A9-E50E24DCCA9E)
	for n in 10 4096 102400; do  # text without a newline: base64 of random bytes
		head -c "$n" /dev/urandom | base64 -w0 | head -c "$n" > "$OUT/bumble_fan_$n.txt"
	done
	FAN_FILES=("$OUT/bumble_fan_10.txt" "$OUT/bumble_fan_4096.txt" "$OUT/bumble_fan_102400.txt")
	for f in "${FAN_FILES[@]}"; do cat "$f"; echo; done > "$OUT/bumble_fan_lines.txt"  # what the wire carries
	for h in 1 2; do
		rm -rf "$OUT/bumble_fan_in$h"
		"$MSGPIPE" listen "${BKB[@]}" --adapter "hci$h" --name "msgpipe-bbfan$h" --profile nus --format lines \
			--count 3 --out-dir "$OUT/bumble_fan_in$h" > /dev/null 2> "$OUT/tbumble_fan_l$h.log" &
		eval "FL$h=\$!"
	done
	"$BUMBLE_PY" Tests/lab/bumble_peripheral.py --transport "hci-socket:$BUMBLE_INDEX" --name bumble-fan \
		--service "${NUS_UUIDS[0]}" --write "${NUS_UUIDS[1]}" --notify "${NUS_UUIDS[2]}" \
		--receive "$OUT/bumble_fan_got" --timeout 120 > "$OUT/tbumble_fan_bumble.log" 2>&1 & BPH=$!
	for h in 1 2; do wait_for "$OUT/tbumble_fan_l$h.log" "advertising"; done
	wait_for "$OUT/tbumble_fan_bumble.log" "^advertising"
	tf=$(up)
	timeout 180 "$MSGPIPE" send "${BKB[@]}" --adapter hci0 --to msgpipe-bbfan1 --to msgpipe-bbfan2 --to bumble-fan \
		--profile nus --format lines --json --verbose "${FAN_FILES[@]}" > "$OUT/tbumble_fan.json" 2> "$OUT/tbumble_fan_send.log"
	echo "send exit $?" > "$log"
	FANT=$(awk "BEGIN{printf \"%.1f\", $(up)-$tf}")
	for h in 1 2; do eval "wait_bounded \$FL$h 30"; echo "listen hci$h exit $?" >> "$log"; done
	wait_bounded $BPH 30; echo "bumble exit $?" >> "$log"
	for h in 1 2; do
		ok=1
		for i in 1 2 3; do cmp -s "${FAN_FILES[$((i - 1))]}" "$OUT/bumble_fan_in$h/0000000$i.msg" || ok=0; done
		[ $ok = 1 ] && echo "hci$h: three messages byte-identical" >> "$log"
	done
	cmp "$OUT/bumble_fan_lines.txt" "$OUT/bumble_fan_got" >> "$log" 2>&1 && echo "bumble: the lines byte-identical" >> "$log"
	# Bumble's random static address, as it advertised it, is the one send connected to for bumble-fan
	BADDR=$(sed -n 's/^advertising bumble-fan as \([0-9A-F:]*\) (random static)$/\1/p' "$OUT/tbumble_fan_bumble.log")
	[ -n "$BADDR" ] && grep -qi "connected to $BADDR" "$OUT/tbumble_fan_send.log" &&
		echo "send reached bumble-fan at its random static address $BADDR" >> "$log"
	grep -qi "^connected from $A" "$OUT/tbumble_fan_bumble.log" && echo "bumble: the central is hci0" >> "$log"
	cat "$OUT/tbumble_fan.json" "$OUT/tbumble_fan_send.log" "$OUT/tbumble_fan_bumble.log" "$OUT"/tbumble_fan_l[12].log >> "$log"
	echo "   bumble: fan-out nus lines (10 B, 4 KiB, 100 KiB) to two listens and Bumble: $FANT s wall clock" | tee -a "$OUT/results.txt"
	for p in msgpipe-bbfan1 msgpipe-bbfan2 bumble-fan; do
		echo "   bumble: fan-out $p: $(grep -h "\"peer\":\"$p\"" "$OUT/tbumble_fan.json" | sed -n 's/.*"bytes":\([0-9]*\).*"seconds":\([0-9.]*\).*/\1 B \2 s/p' | paste -sd, -)" |
			tee -a "$OUT/results.txt"
	done
	bumble_numbers "$log" "fan-out, Bumble's side"
	expect "bumble: send --to x3 (nus lines: 10 B, 4 KiB, 100 KiB) to two msgpipe listens and a Bumble peripheral (random address): all byte-identical" \
		"$log" "send exit 0" "listen hci1 exit 0" "listen hci2 exit 0" "bumble exit 0" \
		"hci1: three messages byte-identical" "hci2: three messages byte-identical" "bumble: the lines byte-identical" \
		"send reached bumble-fan at its random static address" "bumble: the central is hci0" \
		"^msgpipe: msgpipe-bbfan1: 3 of 3 messages acknowledged$" "^msgpipe: msgpipe-bbfan2: 3 of 3 messages acknowledged$" \
		"^msgpipe: bumble-fan: 3 of 3 messages acknowledged$"
	no_links
fi

# bumble 6: two phone centrals (hci2 and hci3, each its own random static address) connect by address at the same
# instant (--at: one wall-clock second for both) into one listen --max-centrals 2: both Create Connections are in flight at once; the lab's
# btvirt keeps the second pending until hci0 advertises again. Both files arrive; btmon's lines go into the log.
if [ "$BUMBLE_INDEX" != 3 ] || [ -z "$C" ]; then
	skip "bumble: two Bumble centrals started at the same instant into one listen are both served" "needs hci2 and hci3 (btvirt -l4)"
else
	no_links
	btmgmt --index 2 power off > /dev/null 2>&1
	for i in $(seq 1 50); do hciconfig hci2 2>/dev/null | grep -q DOWN && break; sleep 0.1; done
	hciconfig hci2 down 2> /dev/null
	rm -rf "$OUT/bumble_two"; mkdir -p "$OUT/bumble_two"
	"$MSGPIPE" listen "${BKB[@]}" --adapter hci0 --name msgpipe-bb2 --profile "$BUMBLE_LEGACY" --format legacy \
		--max-centrals 2 --connections 2 --out-dir "$OUT/bumble_two" --verbose > /dev/null 2> "$OUT/tbumble_two_listen.log" & LS=$!
	wait_for "$OUT/tbumble_two_listen.log" "advertising"
	BTMON_FROM=$(wc -l < "$OUT/btmon.txt")
	t6=$(up)
	AT=$(($(date +%s) + 10))  # both connect at this second, whatever their start-up took
	for h in 2 3; do
		file=$OUT/bumble_kib64.bin; [ $h = 2 ] && file=$OUT/bumble_kib32.bin
		timeout 120 "$BUMBLE_PY" Tests/lab/bumble_central.py --transport "hci-socket:$h" --to "$A" --at "$AT" --mtu 185 \
			--service FFF0 --write FFF2 --notify FFF1 --format legacy --send "$file" > "$OUT/tbumble_two_$h.log" 2>&1 &
		eval "P$h=\$!"
	done
	wait $P2; echo "bumble hci2 exit $?" > "$OUT/tbumble_two.log"
	wait $P3; echo "bumble hci3 exit $?" >> "$OUT/tbumble_two.log"
	echo "both done after $(awk "BEGIN{printf \"%.1f s\", $(up)-$t6}")" >> "$OUT/tbumble_two.log"
	wait_bounded $LS 60; echo "listen exit $?" >> "$OUT/tbumble_two.log"
	for f in "$OUT"/bumble_two/*; do
		cmp -s "$f" "$OUT/bumble_kib32.bin" && echo "hci2's file intact" >> "$OUT/tbumble_two.log"
		cmp -s "$f" "$OUT/bumble_kib64.bin" && echo "hci3's file intact" >> "$OUT/tbumble_two.log"
	done
	btmon_connects "$BTMON_FROM" "$OUT/tbumble_two_btmon.txt"
	for h in 2 3; do sed "s/^/hci$h: /" "$OUT/tbumble_two_$h.log" >> "$OUT/tbumble_two.log"; done
	cat "$OUT/tbumble_two_listen.log" "$OUT/tbumble_two_btmon.txt" >> "$OUT/tbumble_two.log"
	grep -E "^hci[23]: (connected to|done:)" "$OUT/tbumble_two.log" | sed 's/^/   bumble: two at once: /' | tee -a "$OUT/results.txt"
	echo "   bumble: two at once: $(grep '^both done' "$OUT/tbumble_two.log")" | tee -a "$OUT/results.txt"
	expect "bumble: two Bumble centrals (hci2, hci3) started at the same instant into one listen --max-centrals 2 are both served" \
		"$OUT/tbumble_two.log" "bumble hci2 exit 0" "bumble hci3 exit 0" "listen exit 0" "hci2's file intact" "hci3's file intact"
	btmgmt --index 2 le on > /dev/null 2>&1; btmgmt --index 2 power on > /dev/null 2>&1
fi

# coc_listen TAG: `listen --format lines --count 1` on hci0 as msgpipe-bbTAG, into $OUT/bumble_inbox_TAG (sets LS)
coc_listen() {
	no_links
	rm -rf "$OUT/bumble_inbox_$1"
	"$MSGPIPE" listen "${BKB[@]}" --adapter hci0 --name "msgpipe-bb$1" --format lines --count 1 \
		--out-dir "$OUT/bumble_inbox_$1" > /dev/null 2> "$OUT/tbumble_$1_listen.log" & LS=$!
	wait_for "$OUT/tbumble_$1_listen.log" "advertising"
}
# coc_verdict TAG: listen's exit, the line against the file, then both logs, appended to $OUT/tbumble_TAG.log
coc_verdict() {
	local log=$OUT/tbumble_$1.log
	wait_bounded $LS 30; echo "listen exit $?" >> "$log"
	cmp "$OUT/bumble_text.txt" "$OUT/bumble_inbox_$1/00000001.msg" >> "$log" 2>&1 && echo "byte-identical" >> "$log"
	cat "$OUT/tbumble_$1_bumble.log" "$OUT/tbumble_$1_listen.log" >> "$log"
}

# bumble 7: a phone app opens msgpipe's L2CAP channel, as iOS's openL2CAPChannel and Android's
# createInsecureL2capChannel do: it reads the PSM characteristic, opens the LE credit-based channel and writes a
# line into `listen --format lines` (link mode auto publishes the channel).
coc_listen coc
timeout 180 "$BUMBLE_PY" Tests/lab/bumble_coc.py --transport "hci-socket:$BUMBLE_INDEX" --to msgpipe-bbcoc \
	--send "$OUT/bumble_text.txt" > "$OUT/tbumble_coc_bumble.log" 2>&1
echo "bumble exit $?" > "$OUT/tbumble_coc.log"
coc_verdict coc
bumble_numbers "$OUT/tbumble_coc.log" "phone opens the L2CAP channel -> listen, lines"
expect "bumble central reads the PSM characteristic, opens the L2CAP channel and writes a line into listen: byte-identical" \
	"$OUT/tbumble_coc.log" "bumble exit 0" "listen exit 0" "byte-identical" "^psm [0-9]+" "^channel open"

# bumble 7b: the phone opens the channel while listen does not run (SIGSTOP after the PSM read) and writes at
# once, as a phone app does: nothing may be lost. Linux 6.1 gives a channel that nobody accepted yet the
# default receive buffer and drops, silently, an SDU that does not fit; listen answers a channel only once it
# accepted and sized it, so here the phone's open waits until listen runs again. The 5 s stop only makes the
# overlap certain; nothing is judged by time.
coc_listen cocb
timeout 180 "$BUMBLE_PY" Tests/lab/bumble_coc.py --transport "hci-socket:$BUMBLE_INDEX" --to msgpipe-bbcocb \
	--send "$OUT/bumble_text.txt" --hold 1 > "$OUT/tbumble_cocb_bumble.log" 2>&1 & BP=$!
wait_for "$OUT/tbumble_cocb_bumble.log" "^holding"
kill -STOP $LS && echo "stopped listen at $(up)" > "$OUT/tbumble_cocb.log"
sleep 5
kill -CONT $LS && echo "continued listen at $(up)" >> "$OUT/tbumble_cocb.log"
wait $BP; echo "bumble exit $?" >> "$OUT/tbumble_cocb.log"
coc_verdict cocb
bumble_numbers "$OUT/tbumble_cocb.log" "phone writes on a channel opened while listen was stopped, lines"
expect "bumble central opens the L2CAP channel while listen is stopped and writes at once: nothing lost, byte-identical" \
	"$OUT/tbumble_cocb.log" "stopped listen" "bumble exit 0" "listen exit 0" "byte-identical" "^channel open"

# bumble 8: the other way: `send --name --format lines` writes the line to the phone that opened the channel.
no_links
"$MSGPIPE" send "${BKB[@]}" --adapter hci0 --name msgpipe-bbcocs --format lines "$OUT/bumble_text.txt" \
	> /dev/null 2> "$OUT/tbumble_cocs_send.log" & SND=$!
wait_for "$OUT/tbumble_cocs_send.log" "advertising"
timeout 180 "$BUMBLE_PY" Tests/lab/bumble_coc.py --transport "hci-socket:$BUMBLE_INDEX" --to msgpipe-bbcocs \
	--receive "$OUT/bumble_got_coc" --timeout 120 > "$OUT/tbumble_cocs_bumble.log" 2>&1
echo "bumble exit $?" > "$OUT/tbumble_cocs.log"
wait_bounded $SND 30; echo "send exit $?" >> "$OUT/tbumble_cocs.log"
cmp "$OUT/bumble_text.txt" "$OUT/bumble_got_coc" >> "$OUT/tbumble_cocs.log" 2>&1 && echo "byte-identical" >> "$OUT/tbumble_cocs.log"
cat "$OUT/tbumble_cocs_bumble.log" "$OUT/tbumble_cocs_send.log" >> "$OUT/tbumble_cocs.log"
bumble_numbers "$OUT/tbumble_cocs.log" "send --name -> phone over the L2CAP channel, lines"
expect "bumble central opens the L2CAP channel of send --name and receives the line: byte-identical" \
	"$OUT/tbumble_cocs.log" "bumble exit 0" "send exit 0" "byte-identical" "^psm [0-9]+"

# Give the controller back to the kernel (powered, LE) for whatever runs next.
btmgmt --index "$BUMBLE_INDEX" le on > /dev/null 2>&1; btmgmt --index "$BUMBLE_INDEX" power on > /dev/null 2>&1
hciconfig "hci$BUMBLE_INDEX" 2>/dev/null | grep -q "UP RUNNING" ||
	echo "   bumble: hci$BUMBLE_INDEX did not come back up after Bumble ($(hciconfig "hci$BUMBLE_INDEX" 2>&1 | sed -n 3p))"
echo "   bumble: the section took $((SECONDS - T_BUMBLE)) s" | tee -a "$OUT/results.txt"
fi
