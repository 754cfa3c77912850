# lab-newbluez.sh - checks 34-36 of the guest suite: a stock box with a newer bluetoothd, Debian 13's
# (trixie) BlueZ built by Scripts/blelab.sh (build_bluetoothd_new) beside Debian 12's 5.66. Sourced by
# Scripts/lab-test.sh after the stock-box section (which stopped its bluetoothd and dbus-daemon), and alone with
# LAB_ONLY=newbluez. Uses lab-test.sh's helpers (expect, skip, wait_for, wait_bounded, wait_file, no_links, stop,
# up, secs_of, ratio) and its A/B/C/OUT/MSGPIPE. hci0 = A (listen), hci1 = B and hci2 = C (the centrals).
# bluetoothd runs without -d: its debug log of every PDU slows each transfer several times (check 23 against 23b).
#   34. One 1 MiB send through the newer bluetoothd (EATT off by default since 5.67): its goodput against the
#       kernel backend's (check 12) in the same run.
#   35. Two centrals send 1 MiB each at once into one listen: bluetoothd 5.76 and later give every central its
#       own acquired sockets and notify each only through its own, so listen serves both at once (5.66 served
#       them one after the other, check 33). Both whole, each once, both exit 0.
#   36. BlueZ issue #1452 (5.78 to at least 5.87): when an unbonded central that had subscribed disconnects,
#       bluetoothd clears its subscription with a NULL ATT (clear_ccc_state -> ccc_write_cb), which matches the
#       FIRST client in the characteristic's notify list and closes that one's socket: another central's. hci1
#       sends 1 MiB (subscribed first); hci2 sends 4 KiB meanwhile and disconnects. Both must arrive once, and
#       the 1 MiB send must exit 0.

NEW_BTD=${BLELAB_DIR:-/tmp/blelab}/bluez-new/bluetoothd
if [ -z "$C" ]; then
	skip "checks 34-36: a newer bluetoothd" "the lab has no third controller"
elif ! [ -x "$NEW_BTD" ]; then
	skip "checks 34-36: a newer bluetoothd" "no $NEW_BTD (Scripts/blelab.sh build_bluetoothd_new could not fetch or build Debian trixie's bluez)"
else
echo "== [$(up)] checks 34-36: a stock box with bluetoothd $("$NEW_BTD" --version) (Debian 13's)"
no_links
for i in 0 1 2; do btmgmt --index $i advertising off; btmgmt --index $i rm-adv 0; done > /dev/null 2>&1
mkdir -p /run/dbus
[ -s /etc/machine-id ] || dbus-uuidgen --ensure=/etc/machine-id
rm -f /run/dbus/pid /run/dbus/system_bus_socket
dbus-daemon --system --fork --print-pid > "$OUT/new_dbus-daemon.pid" 2> "$OUT/new_dbus-daemon.log"
NEW_DBUS=$(head -1 "$OUT/new_dbus-daemon.pid" 2>/dev/null)
"$NEW_BTD" -n > "$OUT/new_bluetoothd.log" 2>&1 & NBTD=$!
new_powered() {
	local h
	for h in hci0 hci1 hci2; do
		[ "$(busctl --system get-property org.bluez /org/bluez/$h org.bluez.Adapter1 Powered 2>/dev/null)" = "b true" ] || return 1
	done
}
until=$((SECONDS + 30)); NEW_UP=""
while [ $SECONDS -lt $until ]; do
	new_powered && { NEW_UP=1; break; }
	for h in hci0 hci1 hci2; do
		busctl --system set-property org.bluez /org/bluez/$h org.bluez.Adapter1 Powered b true > /dev/null 2>&1
	done
	sleep 0.2
done
if [ -z "$NEW_UP" ]; then
	result "newer bluetoothd: it takes the bus and powers hci0-hci2 within 30 s (new_bluetoothd.log)" 1
else
	[ -e "$OUT/mib.bin" ] || head -c 1048576 /dev/urandom > "$OUT/mib.bin"
	[ -e "$OUT/mib2.bin" ] || head -c 1048576 /dev/urandom > "$OUT/mib2.bin"
	"$MSGPIPE" listen --backend bluez --adapter hci0 --name msgpipe-new --verbose --out-dir "$OUT/new_inbox" \
		> /dev/null 2> "$OUT/new_listen.log" & NLS=$!
	wait_for "$OUT/new_listen.log" "advertising"

	# 34. One central alone.
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-new --json --verbose "$OUT/mib.bin" \
		> "$OUT/t34.json" 2> "$OUT/t34.err"; echo "send exit $?" > "$OUT/t34.log"
	wait_file "$OUT/new_inbox/00000001.msg"
	cmp "$OUT/mib.bin" "$OUT/new_inbox/00000001.msg" >> "$OUT/t34.log" 2>&1 && echo "byte-identical" >> "$OUT/t34.log"
	grep -q "one central at a time" "$OUT/new_listen.log" || echo "listen serves several centrals at once" >> "$OUT/t34.log"
	cat "$OUT/t34.json" "$OUT/t34.err" >> "$OUT/t34.log"
	N_SECS=$(secs_of "$OUT/t34.json"); KB_SECS=$(secs_of "$OUT/t12.json")
	echo "   newer bluetoothd: 1 MiB in ${N_SECS:-?} s; kernel backend (check 12) ${KB_SECS:-?} s; ratio of goodputs $(ratio "$KB_SECS" "$N_SECS")" |
		tee -a "$OUT/results.txt"
	expect "newer bluetoothd: send (hci1) -> listen (hci0) through it, 1 MiB byte-identical; listen serves several centrals at once" \
		"$OUT/t34.log" "send exit 0" "byte-identical" "listen serves several centrals at once"
	no_links

	# 35. Two centrals at once. hci1's sender stops itself mid-message, hci2's sender starts then, and hci1's goes
	#     on once listen has taken hci2's connection: the two overlap however fast the build (with the release
	#     build 1 MiB took 1.2 s, and hci1 was done before hci2 had connected).
	t_two=$(up)
	: > "$OUT/t35.log"
	"$MSGPIPE_LAB" send --backend bluez --adapter hci1 --to msgpipe-new --json --verbose --stop-after-bytes 400000 \
		"$OUT/mib.bin" > "$OUT/t35_b.json" 2> "$OUT/t35_b.err" & S1=$!
	wait_stopped $S1 120 && echo "hci1's sender stopped itself mid-message at $(up)" >> "$OUT/t35.log"
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci2 --to msgpipe-new --json --verbose "$OUT/mib2.bin" \
		> "$OUT/t35_c.json" 2> "$OUT/t35_c.err" & S2=$!
	wait_for "$OUT/new_listen.log" "^msgpipe: connection from $C$"
	kill -CONT $S1
	wait_bounded $S1 300; echo "send hci1 exit $?" >> "$OUT/t35.log"
	wait $S2; echo "send hci2 exit $?" >> "$OUT/t35.log"
	echo "both done after $(awk "BEGIN{printf \"%.2f s\", $(up)-$t_two}")" >> "$OUT/t35.log"
	# At once: listen took the second central's connection before the first one's ended (its own log's order).
	awk -v b="$B" -v c="$C" '
		/^msgpipe: connection from [0-9A-F:]+( ended)?$/ { up[$4] = ($5 == "ended") ? 0 : 1; if (up[b] && up[c]) both = 1 }
		END { if (both) print "both centrals connected to listen at the same time" }' "$OUT/new_listen.log" >> "$OUT/t35.log"
	cat "$OUT/t35_b.json" "$OUT/t35_c.json" "$OUT/t35_b.err" "$OUT/t35_c.err" >> "$OUT/t35.log"
	echo "   newer bluetoothd: two centrals, 1 MiB each, at once: $(grep '^both done' "$OUT/t35.log") (connects included); transfers $(secs_of "$OUT/t35_b.json") s and $(secs_of "$OUT/t35_c.json") s" |
		tee -a "$OUT/results.txt"
	no_links

	# 36. bluez#1452: hci1 subscribes first and sends 1 MiB; hci2 subscribes and sends 1 MiB too, and its link is
	#     cut from hci2's controller (HCI Disconnect, as a phone that walks away: no unsubscribe first); hci2's
	#     send reconnects and resumes.
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci1 --to msgpipe-new --json --verbose "$OUT/mib.bin" \
		> "$OUT/t36_b.json" 2> "$OUT/t36_b.err" & S1=$!
	wait_for "$OUT/t36_b.err" "link connected"
	timeout 300 "$MSGPIPE" send --backend bluez --adapter hci2 --to msgpipe-new --json --verbose "$OUT/mib2.bin" \
		> "$OUT/t36_c.json" 2> "$OUT/t36_c.err" & S2=$!
	wait_for "$OUT/t36_c.err" "link connected"
	sleep 1
	h=$(hcitool -i hci2 con | sed -n 's/.*LE .* handle \([0-9]*\) .*/\1/p' | head -1)
	t_cut=$(up)
	[ -n "$h" ] && hcitool -i hci2 ledc "$h" && echo "hci2's link (handle $h) cut at $t_cut" > "$OUT/t36.log"
	wait_bounded $S2 300; echo "send hci2 exit $?" >> "$OUT/t36.log"
	wait_bounded $S1 300; echo "send hci1 exit $?" >> "$OUT/t36.log"
	echo "both done $(awk "BEGIN{printf \"%.2f s\", $(up)-$t_cut}") after the cut" >> "$OUT/t36.log"
	cat "$OUT/t36_b.json" "$OUT/t36_c.json" "$OUT/t36_b.err" "$OUT/t36_c.err" >> "$OUT/t36.log"
	echo "   newer bluetoothd, bluez#1452: $(grep '^both done' "$OUT/t36.log"); hci1 $(secs_of "$OUT/t36_b.json") s, hci2 $(secs_of "$OUT/t36_c.json") s" |
		tee -a "$OUT/results.txt"
	no_links

	sleep 1
	stop $NLS; echo "listen exit $?" >> "$OUT/t35.log"
	for f in mib mib2; do
		sum=$(sha256sum < "$OUT/$f.bin")
		n=0; for m in "$OUT"/new_inbox/*.msg; do [ "$(sha256sum < "$m")" = "$sum" ] && n=$((n + 1)); done
		echo "$f arrived $n time(s)" | tee -a "$OUT/t35.log" >> "$OUT/t36.log"
	done
	cat "$OUT/new_listen.log" >> "$OUT/t35.log"
	cat "$OUT/new_listen.log" >> "$OUT/t36.log"
	expect "newer bluetoothd: two centrals (hci1, hci2) send 1 MiB each at once into one listen: both exit 0, served at once" \
		"$OUT/t35.log" "stopped itself mid-message" "send hci1 exit 0" "send hci2 exit 0" "listen exit 0" \
		"both centrals connected to listen at the same time"
	# Every send's file arrived exactly once: mib in 34, 35 and 36, mib2 in 35 and 36.
	expect "newer bluetoothd, bluez#1452: a second central's link is cut during a 1 MiB send: both exit 0, every file once" \
		"$OUT/t36.log" "send hci2 exit 0" "send hci1 exit 0" "mib arrived 3 time" "mib2 arrived 2 time"
fi
stop $NBTD
[ -n "$NEW_DBUS" ] && kill "$NEW_DBUS" 2>/dev/null
fi
