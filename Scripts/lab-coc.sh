# lab-coc.sh - checks 19e-19j of the guest suite: msgpipe over an LE credit-based L2CAP channel, chosen by
# itself (link mode auto), forced off (--link-mode gatt), both roles, a drop and resume; goodput beside GATT and
# l2test's raw channel in the same run. Sourced by Scripts/lab-test.sh after checks 1-20 and alone with
# LAB_ONLY=coc. Uses lab-test.sh's helpers (expect, wait_for, wait_bounded, no_links, stop, up, secs_of) and its
# A/B/OUT/MSGPIPE/MSGPIPE_LAB. Kernel backend (bluetoothd is not running); hci0 = A (peripheral), hci1 = B.

KB=(--backend kernel)
echo "== [$(up)] checks 19e-19i: msgpipe over an LE credit-based channel"
btmgmt --index 0 advertising off > /dev/null 2>&1
no_links
[ -e "$OUT/mib.bin" ] || head -c 1048576 /dev/urandom > "$OUT/mib.bin"
# bps BYTES SECS
coc_bps() { [ -n "$1" ] && [ -n "$2" ] && awk "BEGIN{ if ($2 > 0) printf \"%d\", $1/$2; else print \"?\" }" || echo "?"; }

# 19e. send --to (hci1, central, link mode auto) -> listen --name (hci0): the central reads the PSM characteristic,
#      opens the channel, 1 MiB arrives byte-identical; send's JSON says "link":"l2cap".
# listen ends after the message (--count 1): a central whose channel ends under load comes back and resumes
# (with --connections 1 listen stops advertising at the first link; docs/LAB.md).
"$MSGPIPE" listen "${KB[@]}" --adapter hci0 --name msgpipe-coc --count 1 --verbose \
	> "$OUT/coc_listen.bin" 2> "$OUT/coc_listen.log" & LST=$!
wait_for "$OUT/coc_listen.log" "advertising"
timeout 300 "$MSGPIPE" send "${KB[@]}" --adapter hci1 --to msgpipe-coc --json --verbose "$OUT/mib.bin" \
	> "$OUT/t19e.json" 2> "$OUT/t19e_send.log"; echo "send exit $?" > "$OUT/t19e.log"
wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t19e.log"
cmp "$OUT/mib.bin" "$OUT/coc_listen.bin" >> "$OUT/t19e.log" 2>&1 && echo "byte-identical" >> "$OUT/t19e.log"
cat "$OUT/t19e.json" "$OUT/t19e_send.log" "$OUT/coc_listen.log" >> "$OUT/t19e.log"
expect "send --to (hci1) -> listen --name (hci0), link mode auto: the channel carries 1 MiB byte-identical" "$OUT/t19e.log" \
	"send exit 0" "listen exit 0" "byte-identical" '"link":"l2cap"' "PSM 0x[0-9a-f]+ beside GATT" "data over l2cap channel"
COC_SECS=$(secs_of "$OUT/t19e.json")
no_links

# 19f. The same with --link-mode gatt on the central: GATT carries it ("link":"gatt"), for the goodput beside it.
"$MSGPIPE" listen "${KB[@]}" --adapter hci0 --name msgpipe-cocg --count 1 \
	> "$OUT/cocg_listen.bin" 2> "$OUT/cocg_listen.log" & LST=$!
wait_for "$OUT/cocg_listen.log" "advertising"
timeout 300 "$MSGPIPE" send "${KB[@]}" --adapter hci1 --to msgpipe-cocg --link-mode gatt --json "$OUT/mib.bin" \
	> "$OUT/t19f.json" 2> "$OUT/t19f_send.log"; echo "send exit $?" > "$OUT/t19f.log"
wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t19f.log"
cmp "$OUT/mib.bin" "$OUT/cocg_listen.bin" >> "$OUT/t19f.log" 2>&1 && echo "byte-identical" >> "$OUT/t19f.log"
cat "$OUT/t19f.json" "$OUT/t19f_send.log" "$OUT/cocg_listen.log" >> "$OUT/t19f.log"
expect "send --link-mode gatt to the same listener: GATT carries 1 MiB byte-identical" "$OUT/t19f.log" \
	"send exit 0" "listen exit 0" "byte-identical" '"link":"gatt"'
GATT_SECS=$(secs_of "$OUT/t19f.json")
no_links

# 19g. The other way round: send --name (hci0, the peripheral sends) -> listen --to (hci1): the central opens the
#      channel and receives 1 MiB byte-identical.
"$MSGPIPE" send "${KB[@]}" --adapter hci0 --name msgpipe-cocp --json "$OUT/mib.bin" \
	> "$OUT/t19g.json" 2> "$OUT/t19g_send.log" & SND=$!
wait_for "$OUT/t19g_send.log" "advertising"
timeout 300 "$MSGPIPE" listen "${KB[@]}" --adapter hci1 --to msgpipe-cocp --count 1 \
	> "$OUT/cocp.bin" 2> "$OUT/t19g_listen.log"; echo "listen exit $?" > "$OUT/t19g.log"
wait_bounded $SND 120; echo "send exit $?" >> "$OUT/t19g.log"
cmp "$OUT/mib.bin" "$OUT/cocp.bin" >> "$OUT/t19g.log" 2>&1 && echo "byte-identical" >> "$OUT/t19g.log"
cat "$OUT/t19g.json" "$OUT/t19g_send.log" "$OUT/t19g_listen.log" >> "$OUT/t19g.log"
expect "send --name (hci0) -> listen --to (hci1): the peripheral pushes 1 MiB over the channel, byte-identical" \
	"$OUT/t19g.log" "listen exit 0" "send exit 0" "byte-identical" "connected to .* over l2cap"
PUSH_SECS=$(secs_of "$OUT/t19g.json")
no_links

# 19h. A drop mid-transfer (msgpipe-lab listen --drop-after-bytes closes the channel): send reconnects, opens a
#      new channel, and Transport resumes the message; it arrives once, byte-identical. The new channel rides the
#      link still up (one connection for --connections), so listen is stopped with SIGTERM 2 s after send.
"$MSGPIPE_LAB" listen "${KB[@]}" --adapter hci0 --name msgpipe-cocd --drop-after-bytes 600000 \
	--verbose > "$OUT/cocd_listen.bin" 2> "$OUT/cocd_listen.log" & LST=$!
wait_for "$OUT/cocd_listen.log" "advertising"
timeout 300 "$MSGPIPE" send "${KB[@]}" --adapter hci1 --to msgpipe-cocd --verbose --json "$OUT/mib.bin" \
	> "$OUT/t19h.json" 2> "$OUT/t19h_send.log"; echo "send exit $?" > "$OUT/t19h.log"
sleep 2; kill $LST 2>/dev/null
wait_bounded $LST 30; echo "listen exit $?" >> "$OUT/t19h.log"
cmp "$OUT/mib.bin" "$OUT/cocd_listen.bin" >> "$OUT/t19h.log" 2>&1 && echo "exactly once, byte-identical" >> "$OUT/t19h.log"
cat "$OUT/t19h.json" "$OUT/t19h_send.log" "$OUT/cocd_listen.log" >> "$OUT/t19h.log"
expect "a channel dropped mid-transfer: send reconnects over a new channel, Transport resumes, 1 MiB arrives once" \
	"$OUT/t19h.log" "send exit 0" "listen exit 0" "exactly once, byte-identical" "dropping the connection" \
	"reconnected to" '"link":"l2cap"'
no_links

# 19h2. A plain format over the channel: the stream holds the format's own bytes (PROTOCOL.md 7.2). send --to
#      --format lines (hci1) -> listen --name --format lines (hci0): three lines arrive as three messages.
"$MSGPIPE" listen "${KB[@]}" --adapter hci0 --name msgpipe-cocl --format lines --connections 1 \
	> "$OUT/cocl_listen.txt" 2> "$OUT/cocl_listen.log" & LST=$!
wait_for "$OUT/cocl_listen.log" "advertising"
printf 'one' > "$OUT/cocl_1.txt"; printf 'two' > "$OUT/cocl_2.txt"; head -c 3000 /dev/zero | tr '\0' x > "$OUT/cocl_3.txt"
timeout 120 "$MSGPIPE" send "${KB[@]}" --adapter hci1 --to msgpipe-cocl --format lines --json \
	"$OUT/cocl_1.txt" "$OUT/cocl_2.txt" "$OUT/cocl_3.txt" > "$OUT/t19h2.json" 2> "$OUT/t19h2_send.log"
echo "send exit $?" > "$OUT/t19h2.log"
wait_bounded $LST 60; echo "listen exit $?" >> "$OUT/t19h2.log"
{ printf 'one\ntwo\n'; cat "$OUT/cocl_3.txt"; echo; } | cmp - "$OUT/cocl_listen.txt" >> "$OUT/t19h2.log" 2>&1 && echo "three lines intact" >> "$OUT/t19h2.log"
cat "$OUT/t19h2.json" "$OUT/t19h2_send.log" "$OUT/cocl_listen.log" >> "$OUT/t19h2.log"
expect "send --format lines over the channel: the stream carries the lines unframed, three messages arrive" \
	"$OUT/t19h2.log" "send exit 0" "listen exit 0" "three lines intact" '"link":"l2cap"'
no_links

# 19i. btmon saw the LE credit-based connection (its signalling name for it: LE Connection Request).
grep -c "LE Connection Request\|LE Credit Based Connection Request" "$OUT/btmon.txt" |
	sed 's/^/LE credit-based connection requests in btmon: /' > "$OUT/t19i.log"
grep -m2 -A6 "LE Connection Request\|LE Credit Based Connection Request" "$OUT/btmon.txt" >> "$OUT/t19i.log"
expect "btmon shows the LE credit-based connection requests" "$OUT/t19i.log" "requests in btmon: [1-9]" "PSM: [0-9]+"

# The raw baseline in the same run: l2test's LE channel, 1 MiB in 512-byte SDUs (connect included).
btmgmt --index 0 connectable on > /dev/null 2>&1; btmgmt --index 0 advertising on > /dev/null 2>&1
l2test -r -V le_public -P 133 -i hci0 > "$OUT/coc_l2test_r.log" 2>&1 & L2R=$!
sleep 1
t_l2=$(up)
timeout 120 l2test -s -V le_public -P 133 -i hci1 -b 512 -N 2048 "$A" > "$OUT/coc_l2test_s.log" 2>&1
L2_SECS=$(awk "BEGIN{printf \"%.2f\", $(up)-$t_l2}")
stop $L2R
btmgmt --index 0 advertising off > /dev/null 2>&1
echo "   1 MiB goodput, msgpipe send: channel $(coc_bps 1048576 "$COC_SECS") B/s (${COC_SECS:-?} s), GATT $(coc_bps 1048576 "$GATT_SECS") B/s (${GATT_SECS:-?} s); send --name over the channel ${PUSH_SECS:-?} s; l2test raw channel $(coc_bps 1048576 "$L2_SECS") B/s (${L2_SECS} s, connect included)" | tee -a "$OUT/results.txt"
no_links

# 19j. Beside bluetoothd (LAB_ONLY=coc only: the rest of a full run needs bluetoothd gone, and the stock-box
#      section starts its own): `listen --backend bluez` registers the service with the PSM characteristic
#      through the D-Bus API and opens the kernel channel; gatttool on hci1 reads the PSM, and msgpipe-lab's
#      coc-send moves 1 MiB of Transport over that channel into listen, byte-identical.
if [ "${LAB_ONLY:-}" = coc ]; then
	no_links
	for i in 0 1; do btmgmt --index $i advertising off; btmgmt --index $i rm-adv 0; done > /dev/null 2>&1
	mkdir -p /run/dbus
	[ -s /etc/machine-id ] || dbus-uuidgen --ensure=/etc/machine-id
	dbus-daemon --system --fork --print-pid > "$OUT/coc_dbus.pid" 2> "$OUT/coc_dbus.log"
	COC_DBUS=$(head -1 "$OUT/coc_dbus.pid" 2>/dev/null)
	/usr/libexec/bluetooth/bluetoothd -n -d > "$OUT/coc_bluetoothd.log" 2>&1 & COC_BTD=$!
	until=$((SECONDS + 30))
	while [ $SECONDS -lt $until ]; do
		[ "$(busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered 2>/dev/null)" = "b true" ] && break
		busctl --system set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b true > /dev/null 2>&1
		sleep 0.2
	done
	"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-cocz --verbose \
		> "$OUT/cocz_listen.bin" 2> "$OUT/cocz_listen.log" & LST=$!
	wait_for "$OUT/cocz_listen.log" "advertising"
	timeout 60 gatttool -i hci1 -b "$A" -t public --char-read --uuid=abdd3056-28fa-441d-a470-55a75a52553a \
		> "$OUT/t19j.log" 2>&1
	PSM_LE=$(sed -n 's/.*value: \([0-9a-f][0-9a-f]\) \([0-9a-f][0-9a-f]\).*/0x\2\1/p' "$OUT/t19j.log" | head -1)
	echo "PSM read through bluetoothd: ${PSM_LE:-none}" >> "$OUT/t19j.log"
	no_links
	if [ -n "$PSM_LE" ]; then
		timeout 120 "$MSGPIPE_LAB" lab-probe coc-send --adapter hci1 --to "$A" --psm "$((PSM_LE))" --bytes 1048576 \
			>> "$OUT/t19j.log" 2>&1; echo "coc-send exit $?" >> "$OUT/t19j.log"
	fi
	sleep 1
	stop $LST
	# coc-send's message: byte (i * 131 + 7) mod 256 at offset i.
	python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 131 + 7) & 255 for i in range(1048576)))' > "$OUT/cocz_sent.bin"
	cmp "$OUT/cocz_sent.bin" "$OUT/cocz_listen.bin" >> "$OUT/t19j.log" 2>&1 && echo "byte-identical" >> "$OUT/t19j.log"
	cat "$OUT/cocz_listen.log" >> "$OUT/t19j.log"
	expect "beside bluetoothd: listen --backend bluez publishes the PSM through D-Bus; 1 MiB over the channel arrives" \
		"$OUT/t19j.log" "PSM read through bluetoothd: 0x00[89a-f][0-9a-f]" "coc-send exit 0" "byte-identical" \
		"backend: bluez" "beside GATT"
	stop $COC_BTD
	[ -n "$COC_DBUS" ] && kill "$COC_DBUS" 2>/dev/null
	no_links
fi
