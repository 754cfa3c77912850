#!/bin/bash
# two_centrals.sh - runs INSIDE the blelab VM (three controllers): two centrals (hci1, hci2) connected to one
# peripheral (hci0) at the same time, first with the C peers only, then msgpipe's listen with two centrals.
#   Scripts/blelab.sh -o OUT -- Tests/lab/two_centrals.sh
# Logs to $BLELAB_OUT (btmon.txt, c_*.log, m_*.log); prints the lines that show what happened.
# BLELAB_STOCK_BTVIRT=1 on the host runs it on Debian's btvirt (both links get HCI handle 42 on hci0).
set -u
A=$BLELAB_ADDR_A; B=$BLELAB_ADDR_B; C=$BLELAB_ADDR_C; OUT=$BLELAB_OUT
MSGPIPE=${MSGPIPE:-$PWD/.build/debug/msgpipe}
LABBIN=${LABBIN:-$PWD/.build/lab}
up() { cut -d' ' -f1 /proc/uptime; }
wait_for() {
	local until=$((SECONDS + ${3:-60}))
	while [ $SECONDS -lt $until ]; do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
	echo "   gave up waiting for /$2/ in $1"; return 1
}
btmon -T > "$OUT/btmon.txt" 2>&1 & MON=$!
sleep 1
echo "== [$(up)] C peers: att_server on hci0, att_client hci1 holds its link 20 s, att_client hci2 connects meanwhile"
btmgmt --index 0 advertising off > /dev/null 2>&1
"$LABBIN/att_server" "$A" 2 > "$OUT/c_server.log" 2>&1 & SRV=$!
wait_for "$OUT/c_server.log" listening
btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
"$LABBIN/att_client" "$B" "$A" 20 > "$OUT/c_client_b.log" 2>&1 & CB=$!
wait_for "$OUT/c_client_b.log" "holding"
# An advertising instance, as msgpipe's (the kernel resumes an instance while a central is linked, not the
# global Set Advertising).
btmgmt --index 0 add-adv -c -g 1 > /dev/null 2>&1
t0=$(up)
timeout 60 "$LABBIN/att_client" "$C" "$A" > "$OUT/c_client_c.log" 2>&1; echo "exit $?" >> "$OUT/c_client_c.log"
echo "   client C took $(awk "BEGIN{print $(up)-$t0}") s"
wait $CB; echo "exit $?" >> "$OUT/c_client_b.log"
kill $SRV 2>/dev/null; wait $SRV 2>/dev/null
btmgmt --index 0 rm-adv 1 > /dev/null 2>&1
for f in c_server c_client_b c_client_c; do echo "-- $f"; grep -E '^att_|^exit' "$OUT/$f.log" | head -20; done
grep -c "RX \[1\]" "$OUT/c_server.log" | sed 's/^/   PDUs on connection 1: /'
grep -c "RX \[2\]" "$OUT/c_server.log" | sed 's/^/   PDUs on connection 2: /'
sleep 3

if [ -x "$MSGPIPE" ] && [ "${SKIP_MSGPIPE:-0}" != 1 ]; then
	echo "== [$(up)] msgpipe: send 8 MiB hci1 -> listen hci0; gatttool --primary from hci2 during the transfer"
	head -c $((8 * 1048576)) /dev/urandom > "$OUT/8mib.bin"
	"$MSGPIPE" listen --adapter hci0 --name msgpipe-two --json > "$OUT/m_listen.json" 2> "$OUT/m_listen.log" & LST=$!
	wait_for "$OUT/m_listen.log" advertising
	t0=$(up)
	timeout 900 "$MSGPIPE" send --adapter hci1 --to msgpipe-two --json "$OUT/8mib.bin" > "$OUT/m_send.json" 2> "$OUT/m_send.log" & SND=$!
	sleep 20
	t1=$(up)
	timeout 60 gatttool -i hci2 -b "$A" -t public --primary > "$OUT/m_gatttool.log" 2>&1; echo "exit $?" >> "$OUT/m_gatttool.log"
	echo "   gatttool took $(awk "BEGIN{print $(up)-$t1}") s"
	wait $SND; echo "send exit $? after $(awk "BEGIN{print $(up)-$t0}") s" >> "$OUT/m_send.log"
	kill $LST 2>/dev/null; wait $LST 2>/dev/null
	for f in m_send.log m_send.json m_gatttool.log m_listen.log; do echo "-- $f"; tail -8 "$OUT/$f"; done
fi
kill $MON; wait $MON 2>/dev/null
echo "== LE Connection Complete on hci0:"
grep -A3 "LE Connection Complete" "$OUT/btmon.txt" | grep -B1 -A2 "hci0\]" | grep -E "hci0|Handle" | head -20
