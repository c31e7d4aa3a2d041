#!/bin/bash
# guest-nvme-passthru.sh - runs as root inside the interop lab guest (nvme-passthru.sh),
# which has an emulated NVMe drive (LAB_NVME_IMAGE). nvmeof-target serves the drive twice:
# NSID 1 by NVMe passthrough (/dev/ng0n1), NSID 2 as a direct block device (/dev/nvme0n1).
# The nvmeof CLI writes a pattern through NSID 1 and reads it back through both; a read
# past the end fails with LBA Out of Range; then the guest's kernel host connects over
# loopback NVMe/TCP: nvme compare against the pattern (match, then a Compare Failure that
# the drive reported), mkfs.ext4 and fsck on the passthrough namespace.
#
# Usage: guest-nvme-passthru.sh BUILDDIR
# Results: one "ok NAME" / "not ok NAME: why" line per check in /mnt/host/guest-results.
set -u
B=$1
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
NQN=nqn.2026-11.io.nvmeof:passthru
URI=nvme+tcp://127.0.0.1:4420/$NQN
: > "$RES"
fail=0
ok() { echo "ok $1" >> "$RES"; echo "ok $1"; }
not_ok() { echo "not ok $1: $2" >> "$RES"; echo "not ok $1: $2"; fail=$((fail + 1)); }
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@" > /tmp/check.out 2>&1; then ok "$name"; else not_ok "$name" "$(tail -n 3 /tmp/check.out)"; fi
}

modprobe nvme
for _ in $(seq 100); do [ -c /dev/ng0n1 ] && [ -b /dev/nvme0n1 ] && break; sleep 0.2; done
check "emulated drive present" test -c /dev/ng0n1 -a -b /dev/nvme0n1
"$B/target/nvmeof-target" --nqn "$NQN" --ns /dev/ng0n1 --ns /dev/nvme0n1 \
	--listen tcp://127.0.0.1:4420 --discovery-port 0 --no-control-socket --reactors 1 \
	--state-dir /tmp/state > /tmp/target.log 2>&1 &
TP=$!
for _ in $(seq 200); do grep -q "listening on tcp://" /tmp/target.log && break; sleep 0.1; done
cat /tmp/target.log
check "target serves /dev/ng0n1 and /dev/nvme0n1" grep -q "listening on tcp://" /tmp/target.log
check "block device namespace is direct" grep -q "namespace 2: /dev/nvme0n1, .*direct I/O" /tmp/target.log
"$B/initiator/nvmeof" identify "$URI" > /tmp/id.txt 2>&1
cat /tmp/id.txt
head -c 1048576 /dev/urandom > /tmp/pat
check "write 1 MiB through passthrough" "$B/initiator/nvmeof" write "$URI/1" --lba 8 --blocks 2048 -i /tmp/pat
check "read back through the block device" "$B/initiator/nvmeof" read "$URI/2" --lba 8 --blocks 2048 -o /tmp/b2
check "block device data equal" cmp /tmp/pat /tmp/b2
check "read back through passthrough" "$B/initiator/nvmeof" read "$URI/1" --lba 8 --blocks 2048 -o /tmp/b1
check "passthrough data equal" cmp /tmp/pat /tmp/b1
check "flush through passthrough" "$B/initiator/nvmeof" flush "$URI/1"
blocks=$(($(blockdev --getsz /dev/nvme0n1)))
if "$B/initiator/nvmeof" read "$URI/1" --lba $((blocks - 1)) --blocks 2 -o /tmp/x 2> /tmp/e; then
	not_ok "read past the end" "succeeded"
else
	check "read past the end: LBA Out of Range" grep -q "LBA Out of Range" /tmp/e
fi

if modprobe nvme-tcp && nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN"; then
	H=
	for _ in $(seq 50); do
		for d in /sys/block/nvme*n1; do
			[ "$(cat "$d/device/subsysnqn" 2> /dev/null)" = "$NQN" ] && H=/dev/${d##*/}
		done
		[ -n "$H" ] && break
		sleep 0.2
	done
	nvme list
	if [ -n "$H" ]; then
		ok "kernel host sees the passthrough namespace as $H"
		head -c 1024 /tmp/pat > /tmp/p1k
		check "nvme compare: match" nvme compare "$H" --start-block=8 --block-count=1 \
			--data-size=1024 --data=/tmp/p1k
		head -c 1024 /dev/zero > /tmp/z1k
		nvme compare "$H" --start-block=8 --block-count=1 --data-size=1024 --data=/tmp/z1k \
			> /tmp/cmp.out 2>&1
		cat /tmp/cmp.out
		check "nvme compare: the drive's Compare Failure comes back" grep -q "0x285\|Compare Failure" /tmp/cmp.out
		check "mkfs.ext4 on the passthrough namespace" mkfs.ext4 -q -F "$H"
		check "fsck.ext4 clean" fsck.ext4 -fn "$H"
	else
		not_ok "kernel host" "no block device of $NQN"
	fi
	nvme disconnect -n "$NQN"
else
	not_ok "kernel host" "nvme connect failed"
fi
kill "$TP"
wait "$TP"
rc=$?
[ "$rc" = 0 ] && ok "target exit 0" || not_ok "target exit" "status $rc"
tail -n 20 /tmp/target.log
touch "$OUT/guest-done"
exit "$fail"
