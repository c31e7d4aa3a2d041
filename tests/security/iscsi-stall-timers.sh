#!/bin/bash
# SPDX-License-Identifier: MIT
# iscsi-stall-timers.sh - the clocks of a full feature iSCSI session, with short settings
# (iscsi.options: dataout_timeout 2, nopin_interval 2, nopin_timeout 2,
# max_sessions_per_initiator 4), each played by a raw initiator (iscsi_fault_client):
#   - a WRITE whose R2T is never answered, the session left open: the connection is
#     dropped within 4 s (ERL 0, as LIO does) and the daemon says why;
#   - an idle session that answers the target's NOP-In pings lives on and still does I/O;
#     one that does not is ended within interval + timeout + 2 s;
#   - a fifth session of one InitiatorName is refused (status 0302, Out of Resources)
#     while another initiator still logs in;
# the three run at the same time; the daemon must exit cleanly afterwards.
. "$(dirname "$0")/../integration/lib.sh"
it_init
CLIENT=$top_builddir/tests/integration/iscsi_fault_client
NQN=nqn.2026-11.io.nvmeof:stall
IQN=iqn.2026-11.io.nvmeof:stall
if [ ! -x "$CLIENT" ]; then
	[ "${CI:-}" = true ] && { echo "missing: $CLIENT" >&2; exit 1; }
	echo "SKIP: $CLIENT not built"
	exit 77
fi
cat > "$IT_DIR/stall.json" << JSON
{ "hosts": [], "ports": [],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [], "attr": { "allow_any_host": "1" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:256M" } } ] } ],
  "iscsi": {
    "portals": [ { "addr": "127.0.0.1", "port": 0 } ],
    "targets": [ { "iqn": "$IQN", "luns": [ { "lun": 0, "subsystem": "$NQN", "nsid": 1 } ] } ],
    "options": { "dataout_timeout": 2, "nopin_interval": 2, "nopin_timeout": 2,
                 "max_sessions_per_initiator": 4 } } }
JSON
IT_LOG=$IT_DIR/target.log
"$IT_TARGET_BIN" -c "$IT_DIR/stall.json" --discovery-port 0 --reactors 2 --no-pin \
	> "$IT_LOG" 2>&1 &
IT_PID=$!
PORT=
for _ in $(seq 200); do
	PORT=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" | head -n 1)
	[ -n "$PORT" ] && break
	kill -0 "$IT_PID" 2> /dev/null || break
	sleep 0.05
done
if [ -z "$PORT" ]; then
	grep -q "iscsi:// listeners are not available" "$IT_LOG" && { echo "SKIP: no iSCSI"; exit 77; }
	it_not_ok target-start "nvmeof-target -c did not start"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "target started, iSCSI portal on port $PORT"

# the cases run side by side, each a raw initiator with its own InitiatorName
"$CLIENT" "$PORT" "$IQN" dataout-stall 2 > "$IT_DIR/dout.out" 2>&1 &
P1=$!
"$CLIENT" "$PORT" "$IQN" nop-answer 2 2 > "$IT_DIR/nopa.out" 2>&1 &
P2=$!
"$CLIENT" "$PORT" "$IQN" nop-silent 2 2 > "$IT_DIR/nops.out" 2>&1 &
P3=$!
"$CLIENT" "$PORT" "$IQN" initiator-limit 4 > "$IT_DIR/lim.out" 2>&1 &
P4=$!
result() { # NAME PID OUT
	if wait "$2"; then
		it_ok "$1: $(tr '\n' ' ' < "$3")"
	else
		it_not_ok "$1" "$(tr '\n' ' ' < "$3")"
	fi
}
result "unanswered R2T drops the connection" $P1 "$IT_DIR/dout.out"
result "a session answering NOP-In pings lives on" $P2 "$IT_DIR/nopa.out"
result "a session ignoring NOP-In pings is ended" $P3 "$IT_DIR/nops.out"
result "max_sessions_per_initiator" $P4 "$IT_DIR/lim.out"
it_grep "Data-Out timeout logged" "$IT_LOG" "no Data-Out within 2000 ms"
it_grep "ping timeout logged" "$IT_LOG" "NOP-In ping .* unanswered"
it_grep "initiator limit logged" "$IT_LOG" "max_sessions_per_initiator"
it_stop_target
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG"; then
	it_not_ok sanitizers "reports in the daemon log"
fi
it_finish
