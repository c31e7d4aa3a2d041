#!/bin/bash
# guest-nvmet-target.sh - runs as root inside the interop lab guest (run-in-guest.sh).
#
# Sets up the Linux kernel NVMe/TCP target (nvmet-tcp, configfs) on ADDR:PORT exporting NQN
# with two namespaces backed by loop devices on guest RAM files:
#   NSID 1: 64 MiB, 512-byte blocks      NSID 2: 32 MiB, 4096-byte blocks
# then signals the host (/mnt/host/target-ready) and serves until the host creates
# /mnt/host/host-done (or WAIT seconds pass). The guest's kernel log about nvmet is copied
# to /mnt/host/guest-dmesg.txt.
#
# Usage: guest-nvmet-target.sh ADDR PORT NQN [WAIT]
set -u
ADDR=$1 PORT=$2 NQN=$3 WAIT=${4:-900}
OUT=${LAB_SHARE_DIR:-/mnt/host}
N=/sys/kernel/config/nvmet

fail() {
	echo "guest: $*"
	echo "$*" > "$OUT/target-failed"
	dmesg > "$OUT/guest-dmesg.txt"
	exit 1
}

modprobe -a nvmet nvmet-tcp loop || fail "modprobe nvmet nvmet-tcp loop failed"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
	fail "cannot mount configfs"

truncate -s 64M /tmp/ns1.img
truncate -s 32M /tmp/ns2.img
loop1=$(losetup -f --show /tmp/ns1.img) || fail "losetup ns1 failed"
loop2=$(losetup -f --show -b 4096 /tmp/ns2.img) || fail "losetup ns2 failed"

set -e
mkdir "$N/subsystems/$NQN"
echo 1 > "$N/subsystems/$NQN/attr_allow_any_host"
mkdir "$N/subsystems/$NQN/namespaces/1"
echo -n "$loop1" > "$N/subsystems/$NQN/namespaces/1/device_path"
echo 1 > "$N/subsystems/$NQN/namespaces/1/enable"
mkdir "$N/subsystems/$NQN/namespaces/2"
echo -n "$loop2" > "$N/subsystems/$NQN/namespaces/2/device_path"
echo 1 > "$N/subsystems/$NQN/namespaces/2/enable"
mkdir "$N/ports/1"
echo tcp > "$N/ports/1/addr_trtype"
echo ipv4 > "$N/ports/1/addr_adrfam"
echo "$ADDR" > "$N/ports/1/addr_traddr"
echo "$PORT" > "$N/ports/1/addr_trsvcid"
ln -s "$N/subsystems/$NQN" "$N/ports/1/subsystems/$NQN"
set +e

echo "guest: nvmet-tcp serving $NQN on $ADDR:$PORT ($loop1, $loop2)"
touch "$OUT/target-ready"
for _ in $(seq "$((WAIT * 2))"); do
	[ -e "$OUT/host-done" ] && break
	sleep 0.5
done
[ -e "$OUT/host-done" ] || echo "guest: no host-done after $WAIT s"
dmesg | grep -iE 'nvme|nvmet' > "$OUT/guest-dmesg.txt"
echo "guest: done"
