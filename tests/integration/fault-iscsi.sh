#!/bin/sh
# SPDX-License-Identifier: MIT
# Fault injection against nvmeof-target's iSCSI portal on a free 127.0.0.1 port, one raw
# initiator (iscsi_fault_client) per case: disconnects mid-PDU and mid-transfer, bad
# header and data digests, a data segment beyond MaxRecvDataSegmentLength, a truncated
# data segment and an EDTL shorter than the CDB, R2T/Data-Out abuse (unknown TTT, wrong
# offset, wrong DataSN, beyond the R2T, after the command completed), unsolicited data
# beyond FirstBurstLength (immediate and Data-Out), initiators that never read (the
# daemon's VmRSS must stay under FAULT_RSS_MIB, default 512 MiB, 2048 MiB with
# AddressSanitizer, and other sessions must be served) and logins that stall half way.
# After each case the daemon must be up and serve a healthy session (verified writes
# and reads, with and without digests); at the end it must exit cleanly on SIGTERM with
# nothing reported by the sanitizers.
set -u

builddir=${top_builddir:-.}
. "$(dirname "$0")/../require.sh"
target=$builddir/target/nvmeof-target
client=$builddir/tests/integration/iscsi_fault_client
iqn=iqn.2026-11.io.nvmeof:default
work=$(mktemp -d)
pid=

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || :
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

asan=no
if grep -q __asan_init "$target" 2>/dev/null || grep -q __asan_init "$builddir/target/.libs/nvmeof-target" 2>/dev/null; then
	asan=yes
fi
rss_mib=${FAULT_RSS_MIB:-512}
[ "$asan" = yes ] && rss_mib=${FAULT_RSS_MIB:-2048}

log=$work/log
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$target" --listen iscsi://127.0.0.1:0 \
	--discovery-port 0 --ns ram:64M --reactors 2 --no-pin >"$log" 2>&1 &
pid=$!
port=
for _ in $(seq 1 100); do
	port=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$port" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		if grep -q "iscsi:// listeners are not available" "$log"; then
			nv_cannot_run "this nvmeof-target build has no iSCSI listener"
		fi
		break
	fi
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "nvmeof-target did not start:" >&2
	cat "$log" >&2
	exit 1
fi

status=0
pass=0
run() { # NAME ARGS...
	name=$1
	shift
	if "$client" "$port" "$iqn" "$@"; then
		echo "ok $name"
		pass=$((pass + 1))
	else
		echo "not ok $name"
		status=1
	fi
}

for s in mid-pdu mid-transfer bad-hdgst bad-ddgst big-dseg short-dseg edtl-short \
	r2t-bad-ttt r2t-bad-offset r2t-bad-datasn r2t-beyond data-after-done \
	first-burst-imm first-burst-unsol no-read login-stall; do
	if [ "$s" = no-read ]; then
		echo "VmRSS limit $rss_mib MiB (AddressSanitizer: $asan)"
		run "$s" "$s" "$pid" "$rss_mib"
	else
		run "$s" "$s"
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: nvmeof-target died during '$s'" >&2
		status=1
		break
	fi
	run "healthy after $s" healthy
done
if kill -0 "$pid" 2>/dev/null; then
	run "healthy with digests" healthy digest
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	pid=
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: nvmeof-target exited with status $rc after SIGTERM" >&2
		status=1
	fi
fi
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$log"; then
	echo "FAIL: sanitizer report in the daemon log" >&2
	status=1
fi
echo "# fault-iscsi: $pass passed"
if [ "$status" -ne 0 ]; then
	echo "--- daemon log (last 60 lines) ---" >&2
	tail -n 60 "$log" >&2
fi
exit $status
