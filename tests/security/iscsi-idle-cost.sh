#!/bin/bash
# SPDX-License-Identifier: MIT
# iscsi-idle-cost.sh - what an idle iSCSI session costs the daemon. A raw initiator
# (iscsi_fault_client idle) opens 300 sessions, 50 per InitiatorName, each reading 4 KiB
# once as an initiator's first scan would, then leaves them idle. The daemon's VmRSS may
# grow by at most IDLE_KIB_MAX (64; 160 with AddressSanitizer) KiB per session: task
# slots are allocated as commands arrive, not a queue depth of them at login (which cost
# some 627 KiB a session), and an idle session holds no buffer chunk. When the sessions
# close, the descriptors go back.
. "$(dirname "$0")/../integration/lib.sh"
it_init
CLIENT=$top_builddir/tests/integration/iscsi_fault_client
IQN=iqn.2026-11.io.nvmeof:default
SESSIONS=300
MAX_KIB=${IDLE_KIB_MAX:-64}
# AddressSanitizer's redzones and quarantine about double what an allocation costs
if grep -q __asan_init "$IT_TARGET_BIN" 2> /dev/null ||
	grep -q __asan_init "$top_builddir/target/.libs/nvmeof-target" 2> /dev/null; then
	MAX_KIB=${IDLE_KIB_MAX:-160}
fi
if [ ! -x "$CLIENT" ]; then
	[ "${CI:-}" = true ] && { echo "missing: $CLIENT" >&2; exit 1; }
	echo "SKIP: $CLIENT not built"
	exit 77
fi
ulimit -n 4096 2> /dev/null || :
IPID=
stop_idle() {
	[ -n "$IPID" ] && kill "$IPID" 2> /dev/null && wait "$IPID" 2> /dev/null
	IPID=
}
trap 'st=$?; stop_idle; (exit $st); it_cleanup' EXIT
nfd() { ls "/proc/$IT_PID/fd" | wc -l; }
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$IT_PID/status"; }

it_start_target --listen iscsi://127.0.0.1:0 --ns ram:64M --reactors 2 --no-pin || it_finish
IPORT=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" | head -n 1)
if [ -z "$IPORT" ]; then
	grep -q "iscsi:// listeners are not available" "$IT_LOG" && { echo "SKIP: no iSCSI"; exit 77; }
	it_not_ok iscsi-portal "no iSCSI portal in the log"
	it_finish
fi
it_check "a session before" "$CLIENT" "$IPORT" "$IQN" healthy
sleep 1
FD0=$(nfd) RSS0=$(rss)
"$CLIENT" "$IPORT" "$IQN" idle "$SESSIONS" 50 > "$IT_DIR/idle.out" 2>&1 &
IPID=$!
for _ in $(seq 300); do
	grep -q '^idle' "$IT_DIR/idle.out" && break
	kill -0 "$IPID" 2> /dev/null || break
	sleep 0.1
done
if ! grep -q '^idle' "$IT_DIR/idle.out"; then
	it_not_ok "$SESSIONS idle sessions" "$(tr '\n' ' ' < "$IT_DIR/idle.out")"
	it_finish
fi
sleep 1
FD1=$(nfd) RSS1=$(rss)
PER=$(((RSS1 - RSS0) / SESSIONS))
it_log "VmRSS $RSS0 -> $RSS1 KiB, descriptors $FD0 -> $FD1 with $SESSIONS idle sessions"
if [ "$PER" -le "$MAX_KIB" ]; then
	it_ok "an idle session costs $PER KiB (at most $MAX_KIB)"
else
	it_not_ok "idle session cost" "$PER KiB a session, more than $MAX_KIB"
fi
it_check "a session while $SESSIONS idle ones are open" "$CLIENT" "$IPORT" "$IQN" healthy
stop_idle
for _ in $(seq 20); do
	[ "$(nfd)" -le "$FD0" ] && break
	sleep 0.5
done
FD2=$(nfd)
it_check "descriptors back ($FD0 -> $FD1 -> $FD2)" test "$FD2" -le "$FD0"
it_stop_target
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG"; then
	it_not_ok sanitizers "reports in the daemon log"
fi
it_finish
