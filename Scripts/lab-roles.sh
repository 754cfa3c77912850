# lab-roles.sh - the checks of the roles section (25-28: the peripheral sends, the central receives, several
# centrals at once) not yet moved to Tests/LabTests/Roles (which lab-test.sh runs first), sourced by
# Scripts/lab-test.sh (kernel backend: bluetoothd is not running) and alone with LAB_ONLY=roles. Uses lab-test.sh's helpers (expect, skip, result, wait_for,
# wait_bounded, no_links, stop, up, secs_of, ratio) and its A/B/C/D/OUT/MSGPIPE. Every msgpipe command names --backend kernel:
# the CLI picks bluez by itself when bluetoothd runs. hci0 = A (the peripheral), hci1 = B, hci2 = C, hci3 = D.

KB=(--backend kernel)
# bps BYTES SECS: bytes per second, "?" when a number is missing (secs_of and ratio: lab-test.sh)
bps() { [ -n "$1" ] && [ -n "$2" ] && awk "BEGIN{ if ($2 > 0) printf \"%d\", $1/$2; else print \"?\" }" || echo "?"; }
# max A B: the larger of two numbers (empty when one is missing)
max() { [ -n "$1" ] && [ -n "$2" ] && awk "BEGIN{ print ($1 > $2) ? $1 : $2 }"; }
if [ -z "$C" ]; then
	skip "checks 25-28: the peripheral sends to several centrals" "the lab has no third controller"
else
echo "== [$(up)] checks 25-28: the peripheral sends, the central receives, several centrals at once"
# blelab.sh leaves hci0's global advertising on (checks 9-10 switch it off in the full run): it would hide the
# advertising instances msgpipe adds, so the names could not be found.
btmgmt --index 0 advertising off > /dev/null 2>&1
no_links
[ -e "$OUT/mib.bin" ] || head -c 1048576 /dev/urandom > "$OUT/mib.bin"

# 25, 25c and 28f run as Swift tests before this file (Tests/LabTests/Roles); 25's send --json lines (OUT/t25.json)
# give the times check 28's note compares against.
PUSH2B=$(secs_of "$OUT/t25.json" "\"peer\":\"$B"); PUSH2C=$(secs_of "$OUT/t25.json" "\"peer\":\"$C")

# 25d. Three centrals (hci1, hci2, hci3) send 1 MiB each at once into one listen --max-centrals 3 (the other
#      direction of 25c): all three files intact; the aggregate goodput against two at once (check 19) and one
#      alone (check 12): "how many phones can one terminal serve". listen ends after three messages (--count), not
#      three links: a link that drops under load must be able to come back and resume.
if [ -z "${D:-}" ]; then
	skip "three msgpipe sends (hci1-hci3) of 1 MiB each at once into one listen" "the lab has no fourth controller"
else
	head -c 1048576 /dev/urandom > "$OUT/mib_c3.bin"
	head -c 1048576 /dev/urandom > "$OUT/mib_d3.bin"
	rm -rf "$OUT/many3_out"; mkdir -p "$OUT/many3_out"
	"$MSGPIPE" listen "${KB[@]}" --adapter hci0 --name msgpipe-three --max-centrals 3 --count 3 --verbose \
		--out-dir "$OUT/many3_out" > /dev/null 2> "$OUT/many3_listen.log" & LST=$!
	wait_for "$OUT/many3_listen.log" "advertising"
	# Memory per connection: listen's resident set now, and its peak (VmHWM, sampled until it exits) with the
	# three centrals and their 1 MiB messages (each message's reassembly included).
	RSS0=$(awk '/^VmRSS/ {print $2}' "/proc/$LST/status")
	( while [ -e "/proc/$LST/status" ]; do awk '/^VmHWM/ {print $2}' "/proc/$LST/status" 2>/dev/null; sleep 0.2; done ) \
		> "$OUT/t25d_hwm.txt" 2>/dev/null & HWM_SAMPLER=$!
	t25d=$(up)
	for h in 1 2 3; do
		f=$OUT/mib.bin; [ $h = 2 ] && f=$OUT/mib_c3.bin; [ $h = 3 ] && f=$OUT/mib_d3.bin
		timeout 600 "$MSGPIPE" send "${KB[@]}" --adapter hci$h --to msgpipe-three --json "$f" > "$OUT/t25d_$h.json" 2> "$OUT/t25d_$h.log" &
		eval "S$h=\$!"
	done
	: > "$OUT/t25d.log"
	for h in 1 2 3; do eval "wait \$S$h"; echo "send hci$h exit $?" >> "$OUT/t25d.log"; done
	THREE=$(awk "BEGIN{printf \"%.1f\", $(up)-$t25d}")
	wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t25d.log"
	wait_bounded $HWM_SAMPLER 5
	HWM=$(grep -E '^[0-9]+$' "$OUT/t25d_hwm.txt" | sort -n | tail -1)
	PER=$(awk "BEGIN{printf \"%d\", (${HWM:-0}-${RSS0:-0})/3}")
	echo "   memory: listen's RSS ${RSS0:-?} KiB before the centrals came, peak ${HWM:-?} KiB with three sending 1 MiB each (links: $(grep -ho '"link":"[a-z0-9]*"' "$OUT"/t25d_[123].json | cut -d'"' -f4 | tr '\n' ' ')): ${PER} KiB per connection, its message included" |
		tee -a "$OUT/results.txt" >> "$OUT/t25d.log"
	[ -n "$HWM" ] && [ -n "$RSS0" ] && [ "$PER" -gt 0 ] && [ "$PER" -lt 16384 ] && echo "memory per connection under 16 MiB" >> "$OUT/t25d.log"
	for f in "$OUT"/many3_out/*; do
		for g in mib mib_c3 mib_d3; do cmp -s "$f" "$OUT/$g.bin" && echo "$g intact" >> "$OUT/t25d.log"; done
	done
	cat "$OUT"/t25d_[123].json "$OUT"/t25d_[123].log "$OUT/many3_listen.log" >> "$OUT/t25d.log"
	SEND3=$(for h in 1 2 3; do secs_of "$OUT/t25d_$h.json"; done | sort -g | tail -1)
	echo "   three sends of 1 MiB at once into one listen: each $(for h in 1 2 3; do printf '%s ' "$(secs_of "$OUT/t25d_$h.json")"; done)s, aggregate $(bps 3145728 "$SEND3") B/s ($THREE s wall clock); two at once (check 19) ${PAIR:-?} s wall clock; one alone (check 12) ${SECS:-?} s" |
		tee -a "$OUT/results.txt"
	expect "three msgpipe sends (hci1, hci2, hci3) of 1 MiB each at once into one listen --max-centrals 3: all intact" \
		"$OUT/t25d.log" "send hci1 exit 0" "send hci2 exit 0" "send hci3 exit 0" "listen exit 0" "mib intact" "mib_c3 intact" "mib_d3 intact" \
		"memory per connection under 16 MiB"
	no_links
fi

# 25g. Is a pair of centrals slower because of msgpipe or because of the lab? The raw C baseline (att_blast: Write
#      Commands straight on the kernel's ATT channel, no msgpipe, no GATT) sends 2 MiB from hci1 alone, then from
#      hci1 and hci2 at once into one sink on hci0 (att_blast sink A 2, poll), both started together through a
#      FIFO after they connected. results.txt: each time and the pair's against one alone, beside msgpipe's
#      (checks 19, 25, 25d): where the raw pair also takes about twice one alone, the lab's single emulated
#      controller is shared and the pair cannot be faster; where it does not, msgpipe's own cost (a debug build
#      in a TCG VM) is the limit.
GATE=$(mktemp -u /tmp/t25g.XXXXXX); mkfifo "$GATE"   # not in $OUT: its 9p share has no FIFOs
btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
"$LABBIN/att_blast" sink "$A" > "$OUT/t25g_sink1.log" 2>&1 & SINK=$!
wait_for "$OUT/t25g_sink1.log" "listening"
timeout 120 "$LABBIN/att_blast" send "$B" "$A" 2097152 > "$OUT/t25g_one.log" 2>&1; echo "one exit $?" > "$OUT/t25g.log"
wait_bounded $SINK 30; echo "sink one exit $?" >> "$OUT/t25g.log"
no_links
"$LABBIN/att_blast" sink "$A" 2 > "$OUT/t25g_sink2.log" 2>&1 & SINK=$!
wait_for "$OUT/t25g_sink2.log" "listening"
btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
timeout 120 "$LABBIN/att_blast" send "$B" "$A" 2097152 "$GATE" > "$OUT/t25g_b.log" 2>&1 & P1=$!
wait_for "$OUT/t25g_b.log" "connected|rror"
btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
timeout 120 "$LABBIN/att_blast" send "$C" "$A" 2097152 "$GATE" > "$OUT/t25g_c.log" 2>&1 & P2=$!
wait_for "$OUT/t25g_c.log" "connected|rror"
timeout 10 sh -c "echo go > '$GATE'"
wait $P1; echo "B exit $?" >> "$OUT/t25g.log"
wait $P2; echo "C exit $?" >> "$OUT/t25g.log"
wait_bounded $SINK 30; echo "sink two exit $?" >> "$OUT/t25g.log"
btmgmt --index 0 rm-adv 1 > /dev/null 2>&1
cat "$OUT"/t25g_one.log "$OUT"/t25g_sink1.log "$OUT"/t25g_b.log "$OUT"/t25g_c.log "$OUT"/t25g_sink2.log >> "$OUT/t25g.log"
expect "raw C baseline: 2 MiB from one central, then from two at once (hci1, hci2) into one sink on hci0: all arrives" \
	"$OUT/t25g.log" "one exit 0" "B exit 0" "C exit 0" "sink got 2097152 bytes" "sink got 4194304 bytes"
raw_secs() { sed -n 's/.*sent [0-9]* bytes in \([0-9.]*\) s.*/\1/p' "$1" | head -1; }
RAW1=$(raw_secs "$OUT/t25g_one.log"); RAWB=$(raw_secs "$OUT/t25g_b.log"); RAWC=$(raw_secs "$OUT/t25g_c.log")
echo "   raw C baseline (no msgpipe), 2 MiB: one alone ${RAW1:-?} s; two at once ${RAWB:-?} s and ${RAWC:-?} s, $(ratio "$(max "$RAWB" "$RAWC")" "$RAW1") times one alone" |
	tee -a "$OUT/results.txt"
rm -f "$GATE"
no_links

# 28. A central that stops reading slows only itself: send --name --centrals 2 (256 KiB) on hci0 to listen --to on
#     hci2 and then hci1. hci2's listen subscribes first and is stopped (SIGSTOP) once send says so: send sends
#     nothing before both subscribed, so hci2 reads nothing at all however fast the build and the machine. hci1
#     then subscribes and must finish while hci2 stays stopped (a sender that waited for its slowest central would
#     never let it); hci2 continues once hci1 wrote its whole message, and both files arrive intact. The stop
#     lasts at most 20 s after hci1 subscribed: a hang guard, several times hci1's 256 KiB on a loaded lab (1-4 s),
#     and below the ~26 s of retransmission timeouts after which send gives a silent central up.
head -c 262144 "$OUT/mib.bin" > "$OUT/kib256.bin"
"$MSGPIPE" send "${KB[@]}" --adapter hci0 --name msgpipe-slow --centrals 2 --json --verbose "$OUT/kib256.bin" \
	> "$OUT/t28.json" 2> "$OUT/t28_send.log" & SND=$!
wait_for "$OUT/t28_send.log" "advertising"
subscribed() { grep -c "^msgpipe: central .* subscribed$" "$OUT/t28_send.log"; }
timeout 300 "$MSGPIPE" listen "${KB[@]}" --adapter hci2 --to msgpipe-slow --count 1 > "$OUT/slow_c.bin" 2> "$OUT/t28_c.log" & L2=$!
until=$((SECONDS + 60))
while [ "$(subscribed)" -lt 1 ] && [ $SECONDS -lt $until ]; do sleep 0.2; done
# `timeout` runs listen as its child: stop that one (the process that reads the link).
L2P=$(pgrep -P $L2 | head -1); L2P=${L2P:-$L2}
FIRST=$(grep -m1 "^msgpipe: central .* subscribed$" "$OUT/t28_send.log" | sed 's/^msgpipe: //')
kill -STOP "$L2P" &&
	echo "stopped hci2's listen at $(up): $(subscribed) of 2 centrals subscribed ($FIRST), nothing sent yet" > "$OUT/t28.log"
timeout 300 "$MSGPIPE" listen "${KB[@]}" --adapter hci1 --to msgpipe-slow --count 1 > "$OUT/slow_b.bin" 2> "$OUT/t28_b.log" & L1=$!
until=$((SECONDS + 60))
while [ "$(subscribed)" -lt 2 ] && [ $SECONDS -lt $until ]; do sleep 0.2; done
# hci1 has its message once listen wrote all of it (listen then waits up to 2 s for the peripheral to hang up).
until=$((SECONDS + 20))
# (the size first: cmp reads both files over the VM's 9p share, slow on a loaded host)
until { [ "$(stat -c %s "$OUT/slow_b.bin" 2>/dev/null)" = 262144 ] && cmp -s "$OUT/kib256.bin" "$OUT/slow_b.bin"; } ||
	[ $SECONDS -ge $until ]; do sleep 0.2; done
cmp -s "$OUT/kib256.bin" "$OUT/slow_b.bin" && echo "hci1 had its whole message while hci2 was stopped, at $(up)" >> "$OUT/t28.log"
kill -CONT "$L2P" && echo "continued hci2's listen at $(up)" >> "$OUT/t28.log"
wait $L1; echo "listen B exit $?" >> "$OUT/t28.log"
wait $L2; echo "listen C exit $?" >> "$OUT/t28.log"
wait_bounded $SND 120; echo "send exit $?" >> "$OUT/t28.log"
cmp "$OUT/kib256.bin" "$OUT/slow_b.bin" >> "$OUT/t28.log" 2>&1 && echo "B byte-identical" >> "$OUT/t28.log"
cmp "$OUT/kib256.bin" "$OUT/slow_c.bin" >> "$OUT/t28.log" 2>&1 && echo "C byte-identical" >> "$OUT/t28.log"
B28=$(secs_of "$OUT/t28.json" "\"peer\":\"$B"); C28=$(secs_of "$OUT/t28.json" "\"peer\":\"$C")
cat "$OUT/t28.json" "$OUT/t28_send.log" "$OUT/t28_b.log" "$OUT/t28_c.log" >> "$OUT/t28.log"
expect "a central that stops reading (hci2) slows only itself: hci1 finishes while hci2 is stopped, both intact" \
	"$OUT/t28.log" "stopped hci2's listen at [0-9.]+: 1 of 2 centrals subscribed \(central $C .*subscribed\), nothing sent yet" "hci1 had its whole message while hci2 was stopped" "listen B exit 0" "listen C exit 0" \
	"send exit 0" "B byte-identical" "C byte-identical"
echo "   a central stopped until the other finished, 256 KiB: hci1 ${B28:-?} s, hci2 (stopped) ${C28:-?} s (1 MiB in check 25: ${PUSH2B:-?} s and ${PUSH2C:-?} s)" |
	tee -a "$OUT/results.txt"
no_links

# 28k. Only known phones, over Bluetooth: listen on hci0 with --identity and --authorized-keys (hci1 and hci2's
#      keys, and hci3's); hci1 sends over the L2CAP channel, hci2 over GATT (--link-mode gatt), then a stranger
#      (an unknown key, hci3) and a phone without keys (hci1), both refused (exit 77, nothing written), then
#      hci2 with the third known key. listen --json names each message's key; the refusals are logged with the
#      central's address.
if [ -z "${D:-}" ]; then
	skip "only known phones over Bluetooth: three keys accepted, a stranger and a keyless phone refused" "the lab has no fourth controller"
else
	KD=$(mktemp -d /tmp/keys.XXXXXX)   # the guest's own file system: key files must not be world-writable
	"$MSGPIPE" keygen --x25519 --out "$KD/server.id" > "$KD/server.pub"
	: > "$KD/authorized_keys"
	for n in b c d; do "$MSGPIPE" keygen --x25519 --out "$KD/$n.id" | sed "s/\$/ till-$n/" >> "$KD/authorized_keys"; done
	"$MSGPIPE" keygen --x25519 --out "$KD/stranger.id" > /dev/null
	chmod 600 "$KD"/*
	SPUB=$(cat "$KD/server.pub")
	for n in b c d s; do head -c $((20000 + RANDOM)) /dev/urandom > "$OUT/key_$n.bin"; done
	"$MSGPIPE" listen "${KB[@]}" --adapter hci0 --name msgpipe-keys --identity "$KD/server.id" \
		--authorized-keys "$KD/authorized_keys" --json --count 3 > "$OUT/t28k.jsonl" 2> "$OUT/t28k_listen.log" & LST=$!
	wait_for "$OUT/t28k_listen.log" "advertising"
	: > "$OUT/t28k.log"
	key_send() {  # key_send HCI LABEL FILE ARGS...: one send, its exit code logged
		local h=$1 label=$2 file=$3; shift 3
		timeout 120 "$MSGPIPE" send "${KB[@]}" --adapter "$h" --to msgpipe-keys --json "$@" "$file" \
			> "$OUT/t28k_$label.json" 2> "$OUT/t28k_$label.log"
		echo "$label exit $?" >> "$OUT/t28k.log"
	}
	key_send hci1 b "$OUT/key_b.bin" --identity "$KD/b.id" --peer-key "$SPUB"
	key_send hci2 c "$OUT/key_c.bin" --identity "$KD/c.id" --peer-key "$SPUB" --link-mode gatt
	key_send hci3 stranger "$OUT/key_s.bin" --identity "$KD/stranger.id" --peer-key "$SPUB"
	key_send hci1 keyless "$OUT/key_s.bin" --reconnects 1
	# d from hci2, whose last handshake succeeded: hci3's stranger has just failed one, and listen refuses that
	# address without a handshake for a while (HandshakeBackoff), which would judge how soon d came.
	key_send hci2 d "$OUT/key_d.bin" --identity "$KD/d.id" --peer-key "$SPUB"
	wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t28k.log"
	for n in b c d; do
		grep "\"peer_name\":\"till-$n\"" "$OUT/t28k.jsonl" | grep -q "\"crc32\":\"$(python3 -c "import zlib,sys;print('%08x'%zlib.crc32(open(sys.argv[1],'rb').read()))" "$OUT/key_$n.bin")\"" &&
			echo "till-$n intact and named" >> "$OUT/t28k.log"
	done
	grep -q "$(python3 -c "import zlib,sys;print('%08x'%zlib.crc32(open(sys.argv[1],'rb').read()))" "$OUT/key_s.bin")" "$OUT/t28k.jsonl" ||
		echo "nothing of the stranger or the keyless phone written" >> "$OUT/t28k.log"
	[ "$(grep -c . "$OUT/t28k.jsonl")" = 3 ] && echo "three lines" >> "$OUT/t28k.log"
	[ "$(grep -c "refused" "$OUT/t28k_listen.log")" -ge 2 ] && echo "both refusals logged" >> "$OUT/t28k.log"
	grep -ho '"link":"[a-z0-9]*"' "$OUT"/t28k_[bcd].json | tr '\n' ' ' >> "$OUT/t28k.log"; echo >> "$OUT/t28k.log"
	cat "$OUT"/t28k_*.json "$OUT"/t28k_*.log >> "$OUT/t28k.log"
	expect "only known phones over Bluetooth: three keys accepted (channel and GATT), a stranger and a keyless phone refused" \
		"$OUT/t28k.log" "^b exit 0" "^c exit 0" "^d exit 0" "^stranger exit 77" "^keyless exit 77" "listen exit 0" \
		"till-b intact and named" "till-c intact and named" "till-d intact and named" "three lines" \
		"nothing of the stranger or the keyless phone written" "both refusals logged" '"link":"l2cap"' '"link":"gatt"'
	no_links
	# The cost of sealing on this link: 256 KiB from hci1 into a plain listen, then into a keyed one (each
	# send's own seconds, and its whole run with connect and handshake).
	: > "$OUT/t28s.log"
	for mode in plain sealed; do
		LK=(); SK=()
		[ $mode = sealed ] && LK=(--identity "$KD/server.id" --authorized-keys "$KD/authorized_keys") && SK=(--identity "$KD/b.id" --peer-key "$SPUB")
		"$MSGPIPE" listen "${KB[@]}" --adapter hci0 --name msgpipe-seal "${LK[@]}" --count 1 > "$OUT/seal_$mode.bin" \
			2> "$OUT/t28s_l_$mode.log" & LST=$!
		wait_for "$OUT/t28s_l_$mode.log" "advertising"
		t0=$(up)
		timeout 120 "$MSGPIPE" send "${KB[@]}" --adapter hci1 --to msgpipe-seal "${SK[@]}" --json "$OUT/kib256.bin" \
			> "$OUT/t28s_$mode.json" 2> "$OUT/t28s_$mode.log"
		echo "$mode exit $? whole run $(awk "BEGIN{printf \"%.2f\", $(up)-$t0}") s message $(secs_of "$OUT/t28s_$mode.json") s" >> "$OUT/t28s.log"
		wait_bounded $LST 60
		cmp -s "$OUT/kib256.bin" "$OUT/seal_$mode.bin" && echo "$mode intact" >> "$OUT/t28s.log"
		no_links
	done
	cat "$OUT"/t28s_*.json "$OUT"/t28s_*.log >> "$OUT/t28s.log"
	expect "256 KiB sealed and plain over the same link: both intact" "$OUT/t28s.log" "plain exit 0" "sealed exit 0" "plain intact" "sealed intact"
	echo "   sealing on the air, 256 KiB hci1 -> hci0: $(grep -E '^(plain|sealed) exit' "$OUT/t28s.log" | tr '\n' ';')" | tee -a "$OUT/results.txt"
	rm -rf "$KD"
fi
fi  # third controller
