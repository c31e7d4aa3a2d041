#!/bin/bash
# SPDX-License-Identifier: MIT
# iscsi-hoard.sh - one initiator hoards the iSCSI target: 20 sessions (a raw initiator,
# iscsi_fault_client hoard), each with 40 WRITEs of 1 MiB whose R2Ts it never answers,
# reading nothing. Every one of its logins must be answered; meanwhile another iSCSI
# initiator logs in and completes verified I/O within 1 s, and so does an NVMe/TCP host
# (the nvmeof CLI). Then the hoarder goes away (its sockets closed by the kernel, which the
# daemon only sees if it watches paused sockets): within 30 s the daemon's descriptors and
# VmRSS must be back within 10% of what they were before.
. "$(dirname "$0")/../integration/lib.sh"
it_init
CLIENT=$top_builddir/tests/integration/iscsi_fault_client
IQN=iqn.2026-11.io.nvmeof:default
NQN=nqn.2026-11.io.nvmeof:default
SESSIONS=20 WRITES=40
if [ ! -x "$CLIENT" ]; then
	[ "${CI:-}" = true ] && { echo "missing: $CLIENT" >&2; exit 1; }
	echo "SKIP: $CLIENT not built"
	exit 77
fi
HPID=
stop_hoarder() {
	[ -n "$HPID" ] && kill "$HPID" 2> /dev/null && wait "$HPID" 2> /dev/null
	HPID=
}
trap 'st=$?; stop_hoarder; (exit $st); it_cleanup' EXIT

ms() { date +%s%3N; }
nfd() { ls "/proc/$IT_PID/fd" | wc -l; }
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$IT_PID/status"; }

it_start_target --listen iscsi://127.0.0.1:0 --ns ram:256M --reactors 2 --no-pin || it_finish
IPORT=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" | head -n 1)
if [ -z "$IPORT" ]; then
	grep -q "iscsi:// listeners are not available" "$IT_LOG" && { echo "SKIP: no iSCSI"; exit 77; }
	it_not_ok iscsi-portal "no iSCSI portal in the log"
	it_finish
fi
NATIVE="nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1"
head -c 65536 /dev/urandom > "$IT_DIR/data"

victims() { # WHEN: another iSCSI initiator and an NVMe/TCP host, each within 1 s
	local t0 t1 rc
	t0=$(ms)
	timeout 20 "$CLIENT" "$IPORT" "$IQN" healthy > "$IT_DIR/victim.out" 2>&1
	rc=$?
	t1=$(ms)
	if [ "$rc" = 0 ] && [ $((t1 - t0)) -le 1000 ]; then
		it_ok "iSCSI login and verified I/O $1: $((t1 - t0)) ms"
	else
		it_not_ok "iSCSI login and I/O $1" "status $rc after $((t1 - t0)) ms"
		sed 's/^/#   /' "$IT_DIR/victim.out"
	fi
	t0=$(ms)
	timeout 20 "$IT_CLI" write "$NATIVE" --lba 1000 --blocks 128 -i "$IT_DIR/data" \
		> "$IT_DIR/nvme.out" 2>&1 &&
		timeout 20 "$IT_CLI" read "$NATIVE" --lba 1000 --blocks 128 -o "$IT_DIR/back" \
			>> "$IT_DIR/nvme.out" 2>&1 && cmp -s "$IT_DIR/data" "$IT_DIR/back"
	rc=$?
	t1=$(ms)
	if [ "$rc" = 0 ] && [ $((t1 - t0)) -le 1000 ]; then
		it_ok "NVMe/TCP connect and verified I/O $1: $((t1 - t0)) ms"
	else
		it_not_ok "NVMe/TCP connect and I/O $1" "status $rc after $((t1 - t0)) ms"
		sed 's/^/#   /' "$IT_DIR/nvme.out"
	fi
}

# what normal traffic leaves behind is the baseline
victims "before"
sleep 1
FD0=$(nfd) RSS0=$(rss)
it_log "before: $FD0 descriptors, VmRSS $RSS0 KiB"

"$CLIENT" "$IPORT" "$IQN" hoard "$SESSIONS" "$WRITES" 50 > "$IT_DIR/hoard.out" 2>&1 &
HPID=$!
for _ in $(seq 150); do
	grep -q '^hoarding' "$IT_DIR/hoard.out" && break
	kill -0 "$HPID" 2> /dev/null || break
	sleep 0.1
done
if grep -q '^hoarding' "$IT_DIR/hoard.out"; then
	it_ok "every hoarding login answered: $(cat "$IT_DIR/hoard.out")"
else
	it_not_ok "hoarding logins" "$(tr '\n' ' ' < "$IT_DIR/hoard.out")"
fi
sleep 0.5
it_log "hoarding: $(nfd) descriptors, VmRSS $(rss) KiB"
victims "while one initiator hoards"

stop_hoarder
t0=$(ms)
back=
for _ in $(seq 60); do
	FD=$(nfd) RSS=$(rss)
	if [ "$FD" -le $((FD0 + FD0 / 10)) ] && [ "$RSS" -le $((RSS0 + RSS0 / 10)) ]; then
		back=$(($(ms) - t0))
		break
	fi
	sleep 0.5
done
if [ -n "$back" ]; then
	it_ok "descriptors $FD0 -> $FD, VmRSS $RSS0 -> $RSS KiB, $back ms after the hoarder left"
else
	it_not_ok "resources given back" "after 30 s: descriptors $FD0 -> $FD, VmRSS $RSS0 -> $RSS KiB"
fi
victims "after the hoarder left"
it_grep "the daemon saw the hoarder go" "$IT_LOG" "closed a stalled connection|closed by the initiator"
it_stop_target
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG"; then
	it_not_ok sanitizers "reports in the daemon log"
fi
it_finish
