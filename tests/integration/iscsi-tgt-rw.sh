#!/bin/bash
# SPDX-License-Identifier: MIT
#
# libnvmeof's SCSI path against Debian's tgt: tgtd on 127.0.0.1 with a file-backed LUN,
# then iscsi_init_rw (2 sessions, QD 32) writes patterns, reads them back and verifies
# them, with and without CRC32C digests and with CHAP; the nvmeof CLI writes through an
# iscsi:// URI and the bytes are compared with the backing file. Skipped (77) when tgt is
# not installed or we may not run it.
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/../require.sh"
RW=$top_builddir/tests/integration/iscsi_init_rw
CLI=$top_builddir/initiator/nvmeof
IQN=iqn.2026-11.io.nvmeof:tgt-rw
IQN_CHAP=iqn.2026-11.io.nvmeof:tgt-rw-chap
CHAP_USER=rwuser
CHAP_SECRET=rw-secret-0123456789

TGTD=$(command -v tgtd || echo /usr/sbin/tgtd)
TGTADM=$(command -v tgtadm || echo /usr/sbin/tgtadm)
if [ ! -x "$TGTD" ] || [ ! -x "$TGTADM" ]; then
	nv_cannot_run "tgt (tgtd, tgtadm) is not installed (apt-get install tgt)"
fi
if [ "$(id -u)" != 0 ]; then
	nv_cannot_run "tgtd needs root"
fi

TMP=$(mktemp -d /tmp/iscsi-tgt-rw.XXXXXX)
TGTD_PID=
CPORT=
# tgtd may ignore SIGTERM while it starts up: SIGKILL after 5 s, so nothing waits forever.
stop_tgtd() {
	[ -n "$TGTD_PID" ] || return 0
	"$TGTADM" -C "$CPORT" --mode system --op delete --force >/dev/null 2>&1
	kill "$TGTD_PID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$TGTD_PID" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$TGTD_PID" 2>/dev/null
	wait "$TGTD_PID" 2>/dev/null
	TGTD_PID=
}
cleanup() {
	stop_tgtd
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	echo "---- tgtd log ----"
	tail -n 30 "$TMP/tgtd.log"
	exit 1
}

port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 20000))
		port_in_use "$p" || { echo "$p"; return 0; }
	done
	return 1
}

adm() {
	"$TGTADM" -C "$CPORT" --lld iscsi "$@"
}

# tgtd's management channel is a UNIX socket numbered by -C (at most 32767); another
# tgtd may hold the number or the portal port: try again with others.
start_tgtd() {
	PORT=$(pick_port) || return 1
	CPORT=$((1000 + RANDOM % 30000))
	"$TGTD" -f -C "$CPORT" --iscsi "portal=127.0.0.1:$PORT" >"$TMP/tgtd.log" 2>&1 &
	TGTD_PID=$!
	for _ in $(seq 300); do
		adm --mode target --op show >/dev/null 2>&1 && port_in_use "$PORT" && return 0
		if ! kill -0 "$TGTD_PID" 2>/dev/null; then
			wait "$TGTD_PID" 2>/dev/null
			TGTD_PID=
			return 1
		fi
		sleep 0.1
	done
	return 1
}

truncate -s 64M "$TMP/lun1.img" "$TMP/lun2.img"
for attempt in 1 2 3 4 5; do
	start_tgtd && break
	stop_tgtd
	[ "$attempt" = 5 ] && fail "tgtd did not start"
done

# Target 1: open to any initiator, tuned as the benchmark wants it (ImmediateData=Yes,
# InitialR2T=No, large segments and bursts, digests allowed).
adm --mode target --op new --tid 1 --targetname "$IQN" || fail "tgtadm target new"
adm --mode logicalunit --op new --tid 1 --lun 1 --backing-store "$TMP/lun1.img" ||
	fail "tgtadm lun new"
adm --mode logicalunit --op update --tid 1 --lun 1 --params thin_provisioning=1 ||
	fail "tgtadm thin provisioning" # UNMAP
adm --mode target --op bind --tid 1 -I ALL || fail "tgtadm bind"
for kv in InitialR2T=No ImmediateData=Yes MaxRecvDataSegmentLength=262144 \
	MaxXmitDataSegmentLength=262144 FirstBurstLength=262144 MaxBurstLength=1048576 \
	HeaderDigest=CRC32C,None DataDigest=CRC32C,None; do
	adm --mode target --op update --tid 1 --name "${kv%%=*}" --value "${kv#*=}" ||
		fail "tgtadm update $kv"
done
# Target 2: CHAP required, tgt's default session parameters (InitialR2T=Yes, 8 KiB
# segments: the R2T-solicited Data-Out path).
adm --mode target --op new --tid 2 --targetname "$IQN_CHAP" || fail "tgtadm target 2"
adm --mode logicalunit --op new --tid 2 --lun 1 --backing-store "$TMP/lun2.img" ||
	fail "tgtadm lun 2"
adm --mode target --op bind --tid 2 -I ALL || fail "tgtadm bind 2"
adm --mode account --op new --user "$CHAP_USER" --password "$CHAP_SECRET" ||
	fail "tgtadm account"
adm --mode account --op bind --tid 2 --user "$CHAP_USER" || fail "tgtadm account bind"

URI="iscsi://127.0.0.1:$PORT/$IQN/1"
URI_CHAP="iscsi://$CHAP_USER%$CHAP_SECRET@127.0.0.1:$PORT/$IQN_CHAP/1"

echo "== write, read back, verify: 2 sessions, QD 32"
"$RW" "$URI" --sessions 2 --qd 32 --mib 16 || fail "iscsi_init_rw"

echo "== the same with CRC32C header and data digests"
"$RW" "$URI" --sessions 2 --qd 32 --mib 8 --hdgst --ddgst || fail "iscsi_init_rw digests"

echo "== CHAP, InitialR2T=Yes, 8 KiB segments"
"$RW" "$URI_CHAP" --sessions 2 --qd 32 --mib 8 || fail "iscsi_init_rw CHAP"

echo "== CHAP with a wrong secret must be refused"
if "$RW" "iscsi://$CHAP_USER%wrong-secret-000@127.0.0.1:$PORT/$IQN_CHAP/1" --mib 1 \
	>"$TMP/wrong.out" 2>&1; then
	fail "login with a wrong CHAP secret succeeded"
fi
grep -q "authentication failed" "$TMP/wrong.out" || { cat "$TMP/wrong.out"; fail "wrong message"; }

echo "== the nvmeof CLI through iscsi://, checked against the backing file"
head -c $((1024 * 1024)) /dev/urandom >"$TMP/pattern"
"$CLI" write "$URI" --lba 40000 --blocks 2048 -i "$TMP/pattern" || fail "nvmeof write"
"$CLI" read "$URI" --lba 40000 --blocks 2048 -o "$TMP/back" || fail "nvmeof read"
cmp "$TMP/pattern" "$TMP/back" || fail "nvmeof read returned other bytes"
"$CLI" flush "$URI" || fail "nvmeof flush"
dd if="$TMP/lun1.img" of="$TMP/disk" bs=512 skip=40000 count=2048 status=none
cmp "$TMP/pattern" "$TMP/disk" || fail "the backing file does not hold what was written"
"$CLI" identify "$URI" >"$TMP/identify" || fail "nvmeof identify"
# the SCSI unit's own facts, as tgt reports them
grep -q "^SCSI logical unit 1 of $IQN\$" "$TMP/identify" &&
	grep -qE "^  capacity: +[1-9][0-9]* blocks x 512 bytes" "$TMP/identify" &&
	grep -qE "^  vendor: +[^ ]" "$TMP/identify" || { cat "$TMP/identify"; fail "identify"; }

echo "== 4 KiB random reads, QD 32 on 2 sessions (1 s)"
"$RW" "$URI" --sessions 2 --qd 32 --bench-only --bench 1 || fail "benchmark"

echo "PASS"
exit 0
