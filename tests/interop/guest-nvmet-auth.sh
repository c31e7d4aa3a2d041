#!/bin/bash
# guest-nvmet-auth.sh - runs as root inside the interop lab guest (run-in-guest.sh) on a
# kernel with NVMe in-band authentication (LAB_KERNEL=backports: CONFIG_NVME_TARGET_AUTH).
#
# Sets up the Linux kernel NVMe/TCP target (nvmet-tcp, configfs) on ADDR:PORT exporting
# NQN, one 64 MiB namespace of 512-byte blocks on a loop device, reachable only by
# HOSTNQN, which must authenticate with DH-HMAC-CHAP, configured as nvmetcli does it:
#   hosts/HOSTNQN/dhchap_key      HOSTKEY (the host's secret)
#   hosts/HOSTNQN/dhchap_ctrl_key CTRLKEY (the controller's: used when the host asks)
#   hosts/HOSTNQN/dhchap_hash     HASH    (e.g. hmac(sha512))
#   hosts/HOSTNQN/dhchap_dhgroup  DHGROUP (e.g. ffdhe4096)
# then signals the host (/mnt/host/target-ready) and serves until the host creates
# /mnt/host/host-done (or WAIT seconds pass). The guest's kernel log about nvmet is copied
# to /mnt/host/guest-dmesg.txt.
#
# Usage: guest-nvmet-auth.sh ADDR PORT NQN HOSTNQN HOSTKEY CTRLKEY HASH DHGROUP [WAIT]
set -u
ADDR=$1 PORT=$2 NQN=$3 HOSTNQN=$4 HOSTKEY=$5 CTRLKEY=$6 HASH=$7 DHGROUP=$8 WAIT=${9:-900}
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
loop1=$(losetup -f --show /tmp/ns1.img) || fail "losetup ns1 failed"

mkdir "$N/hosts/$HOSTNQN" || fail "cannot create hosts/$HOSTNQN"
[ -e "$N/hosts/$HOSTNQN/dhchap_key" ] ||
	fail "this kernel's nvmet has no DH-HMAC-CHAP (CONFIG_NVME_TARGET_AUTH)"
echo -n "$HOSTKEY" > "$N/hosts/$HOSTNQN/dhchap_key" || fail "dhchap_key refused"
echo -n "$CTRLKEY" > "$N/hosts/$HOSTNQN/dhchap_ctrl_key" || fail "dhchap_ctrl_key refused"
echo -n "$HASH" > "$N/hosts/$HOSTNQN/dhchap_hash" || fail "dhchap_hash $HASH refused"
echo -n "$DHGROUP" > "$N/hosts/$HOSTNQN/dhchap_dhgroup" || fail "dhchap_dhgroup $DHGROUP refused"

set -e
mkdir "$N/subsystems/$NQN"
echo 0 > "$N/subsystems/$NQN/attr_allow_any_host"
ln -s "$N/hosts/$HOSTNQN" "$N/subsystems/$NQN/allowed_hosts/$HOSTNQN"
mkdir "$N/subsystems/$NQN/namespaces/1"
echo -n "$loop1" > "$N/subsystems/$NQN/namespaces/1/device_path"
echo 1 > "$N/subsystems/$NQN/namespaces/1/enable"
mkdir "$N/ports/1"
echo tcp > "$N/ports/1/addr_trtype"
echo ipv4 > "$N/ports/1/addr_adrfam"
echo "$ADDR" > "$N/ports/1/addr_traddr"
echo "$PORT" > "$N/ports/1/addr_trsvcid"
ln -s "$N/subsystems/$NQN" "$N/ports/1/subsystems/$NQN"
set +e

echo "guest: nvmet-tcp serving $NQN on $ADDR:$PORT to $HOSTNQN with DH-HMAC-CHAP" \
	"($HASH, $DHGROUP)"
touch "$OUT/target-ready"
for _ in $(seq "$((WAIT * 2))"); do
	[ -e "$OUT/host-done" ] && break
	sleep 0.5
done
[ -e "$OUT/host-done" ] || echo "guest: no host-done after $WAIT s"
dmesg | grep -iE 'nvme|nvmet' > "$OUT/guest-dmesg.txt"
echo "guest: done"
