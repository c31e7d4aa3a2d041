#!/bin/bash
# SPDX-License-Identifier: MIT
#
# libnvmeof's SCSI path against nvmeof-target's own iSCSI front end: one RAM namespace,
# served as LUN 0 of iqn.2026-11.io.nvmeof:default over iSCSI and as NSID 1 of
# nqn.2026-11.io.nvmeof:default over NVMe/TCP. iscsi_init_rw (2 sessions, QD 32) writes,
# reads back and verifies through iscsi://; then what one path writes the other must
# read back, both ways. Skipped (77) while the daemon has no iSCSI listener.
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/../require.sh"
TGT=$top_builddir/target/nvmeof-target
RW=$top_builddir/tests/integration/iscsi_init_rw
CLI=$top_builddir/initiator/nvmeof
IQN=iqn.2026-11.io.nvmeof:default
NQN=nqn.2026-11.io.nvmeof:default

if [ ! -x "$TGT" ]; then
	echo "ERROR: $TGT is not built"
	exit 99
fi

TMP=$(mktemp -d /tmp/iscsi-tgt-nvmeof.XXXXXX)
TGT_PID=
cleanup() {
	if [ -n "$TGT_PID" ]; then
		kill "$TGT_PID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$TGT_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$TGT_PID" 2>/dev/null
		wait "$TGT_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	echo "---- nvmeof-target log ----"
	tail -n 30 "$TMP/target.log"
	exit 1
}

port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Both listeners on port 0 (the kernel picks free ports): read them back from the log.
logged_port() { # SCHEME
	sed -n "s/.*listening on $1:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$TMP/target.log" |
		head -n 1
}

"$TGT" --ns ram:128M --listen "iscsi://127.0.0.1:0" --listen "tcp://127.0.0.1:0" \
	--discovery-port 0 >"$TMP/target.log" 2>&1 &
TGT_PID=$!
IPORT= TPORT=
for _ in $(seq 200); do
	IPORT=$(logged_port iscsi)
	TPORT=$(logged_port tcp)
	[ -n "$IPORT" ] && [ -n "$TPORT" ] && break
	if ! kill -0 "$TGT_PID" 2>/dev/null; then
		wait "$TGT_PID" 2>/dev/null
		TGT_PID=
		if grep -q "iscsi:// listeners are not available" "$TMP/target.log"; then
			nv_cannot_run "this nvmeof-target build has no iSCSI listener"
		fi
		fail "nvmeof-target exited"
	fi
	sleep 0.05
done
[ -n "$IPORT" ] && [ -n "$TPORT" ] || fail "nvmeof-target did not report its listeners"
port_in_use "$IPORT" || fail "no iSCSI portal on 127.0.0.1:$IPORT"

ISCSI="iscsi://127.0.0.1:$IPORT/$IQN/0"
NATIVE="nvme+tcp://127.0.0.1:$TPORT/$NQN/1"

echo "== write, read back, verify through iSCSI: 2 sessions, QD 32"
"$RW" "$ISCSI" --sessions 2 --qd 32 --mib 16 || fail "iscsi_init_rw"

echo "== the same with CRC32C digests"
"$RW" "$ISCSI" --sessions 2 --qd 32 --mib 8 --hdgst --ddgst || fail "iscsi_init_rw digests"

echo "== written through iSCSI, read through NVMe/TCP, and back"
head -c $((1024 * 1024)) /dev/urandom >"$TMP/a"
head -c $((1024 * 1024)) /dev/urandom >"$TMP/b"
"$CLI" write "$ISCSI" --lba 50000 --blocks 2048 -i "$TMP/a" || fail "write via iSCSI"
"$CLI" read "$NATIVE" --lba 50000 --blocks 2048 -o "$TMP/a.back" || fail "read via NVMe/TCP"
cmp "$TMP/a" "$TMP/a.back" || fail "NVMe/TCP reads other bytes than iSCSI wrote"
"$CLI" write "$NATIVE" --lba 60000 --blocks 2048 -i "$TMP/b" || fail "write via NVMe/TCP"
"$CLI" read "$ISCSI" --lba 60000 --blocks 2048 -o "$TMP/b.back" || fail "read via iSCSI"
cmp "$TMP/b" "$TMP/b.back" || fail "iSCSI reads other bytes than NVMe/TCP wrote"

echo "== 4 KiB random reads, QD 32 on 2 sessions (1 s each path)"
"$RW" "$ISCSI" --sessions 2 --qd 32 --bench-only --bench 1 || fail "iSCSI benchmark"
"$RW" "$NATIVE" --sessions 2 --qd 32 --bench-only --bench 1 || fail "NVMe/TCP benchmark"

echo "PASS"
exit 0
