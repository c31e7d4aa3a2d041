#!/bin/bash
# guest-ctl-kernel-host.sh - runs as root inside the interop lab guest (ctl-kernel-host.sh).
#
# Connects the kernel NVMe/TCP host to NQN at ADDR:PORT (one namespace), then waits for
# the host side to add a second namespace through nvmeof-ctl (file "added" in the share)
# and to resize it ("resized"): each time the kernel must see the change by itself, on the
# Namespace Attribute Changed event, without reconnecting: the new block device appears
# with its size, then its size changes (sysfs, in 512-byte sectors), with the same
# controller (name and controller ID) all along. nvme list is printed before and after.
#
# Usage: guest-ctl-kernel-host.sh ADDR PORT NQN ADD_BYTES RESIZE_BYTES
# Results: one "ok NAME" / "not ok NAME: why" line per check in /mnt/host/guest-results.
set -u
ADDR=$1 PORT=$2 NQN=$3 ADD_BYTES=$4 RESIZE_BYTES=$5
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
: > "$RES"
fail=0
dmesg_start=$(dmesg | wc -l)
ok() { echo "ok $1" >> "$RES"; echo "ok $1"; }
not_ok() { echo "not ok $1: $2" >> "$RES"; echo "not ok $1: $2"; fail=$((fail + 1)); }
finish() {
	touch "$OUT/guest-done"
	nvme disconnect -n "$NQN" > /dev/null 2>&1
	dmesg > "$OUT/guest-dmesg.txt"
	echo "--- guest kernel log since the script started ---"
	tail -n +"$((dmesg_start + 1))" "$OUT/guest-dmesg.txt" | grep -iE 'nvme|capacity|WARNING|BUG' | tail -40
	exit "$fail"
}
# wait_file NAME SECONDS: the host side created it
wait_file() {
	for _ in $(seq $(($2 * 5))); do
		[ -e "$OUT/$1" ] && return 0
		[ -e "$OUT/host-gave-up" ] && return 1
		sleep 0.2
	done
	return 1
}

modprobe nvme-tcp 2> /dev/null
if nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" -i 2 -l 120; then
	ok connect
else
	not_ok connect "nvme connect failed"
	finish
fi
subsys=
for _ in $(seq 50); do
	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ "$(cat "$s/subsysnqn" 2> /dev/null)" = "$NQN" ] && subsys=$s
	done
	[ -n "$subsys" ] && break
	sleep 0.2
done
ctrl=
for c in "$subsys"/nvme[0-9]*; do
	c=$(basename "$c")
	[[ $c =~ ^nvme[0-9]+$ ]] && ctrl=$c
done
[ -n "$ctrl" ] || { not_ok controller "no controller under $subsys"; finish; }
cntlid=$(cat "/sys/class/nvme/$ctrl/cntlid")
ok "controller-$ctrl-cntlid-$cntlid"

# disk_of NSID: the block device of that namespace of the subsystem (head or plain disk)
disk_of() {
	local d
	for d in /sys/class/block/nvme*n*; do
		d=$(basename "$d")
		[[ $d =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "/sys/class/block/$d/nsid" 2> /dev/null)" = "$1" ] || continue
		# ours: the disk's subsystem (multipath head) or controller has our NQN
		if [ "$(cat "/sys/class/block/$d/device/subsysnqn" 2> /dev/null)" = "$NQN" ]; then
			echo "$d"
			return
		fi
	done
}
# sectors NSID: its size in 512-byte sectors, or nothing
sectors() {
	local d
	d=$(disk_of "$1")
	[ -n "$d" ] && cat "/sys/class/block/$d/size"
}
same_controller() { # NAME: still the controller we connected, live, same controller ID
	if [ "$(cat "/sys/class/nvme/$ctrl/state" 2> /dev/null)" = live ] &&
		[ "$(cat "/sys/class/nvme/$ctrl/cntlid" 2> /dev/null)" = "$cntlid" ]; then
		ok "$1"
	else
		not_ok "$1" "controller $ctrl: state $(cat "/sys/class/nvme/$ctrl/state" 2>&1)," \
			"cntlid $(cat "/sys/class/nvme/$ctrl/cntlid" 2>&1) (was $cntlid)"
	fi
}

for _ in $(seq 50); do
	[ -n "$(sectors 1)" ] && break
	sleep 0.2
done
echo "\$ nvme list   (before)"
nvme list
[ -n "$(sectors 1)" ] && ok "namespace-1-$(disk_of 1)" || not_ok namespace-1 "no block device"
[ -z "$(sectors 2)" ] && ok no-namespace-2-yet || not_ok no-namespace-2-yet "$(disk_of 2) exists"

touch "$OUT/connected"
wait_file added 120 || { not_ok added "the host side never added the namespace"; finish; }
want=$((ADD_BYTES / 512))
got=
for _ in $(seq 150); do
	got=$(sectors 2)
	[ "$got" = "$want" ] && break
	sleep 0.2
done
echo "\$ nvme list   (after namespace add)"
nvme list
if [ "$got" = "$want" ]; then
	ok "namespace-2-appeared-$(disk_of 2)-$got-sectors"
else
	not_ok namespace-2-appeared "sysfs size '${got}', expected $want sectors"
	finish
fi
same_controller same-controller-after-add

touch "$OUT/seen-added"
wait_file resized 120 || { not_ok resized "the host side never resized the namespace"; finish; }
want=$((RESIZE_BYTES / 512))
for _ in $(seq 150); do
	got=$(sectors 2)
	[ "$got" = "$want" ] && break
	sleep 0.2
done
echo "\$ nvme list   (after namespace resize)"
nvme list
if [ "$got" = "$want" ]; then
	ok "namespace-2-resized-$got-sectors"
else
	not_ok namespace-2-resized "sysfs size '${got}', expected $want sectors"
fi
same_controller same-controller-after-resize
# written and read back at the new end: the host uses the new size
d=$(disk_of 2)
if [ -n "$d" ] && [ ! -b "/dev/$d" ]; then
	IFS=: read -r maj min < "/sys/class/block/$d/dev"
	mknod "/dev/$d" b "$maj" "$min"
fi
off=$((RESIZE_BYTES / 4096 - 1))
head -c 4096 /dev/urandom > /tmp/blk
if [ -n "$d" ] && [ -b "/dev/$d" ] &&
	dd if=/tmp/blk of="/dev/$d" bs=4096 seek=$off count=1 oflag=direct status=none &&
	dd if="/dev/$d" of=/tmp/back bs=4096 skip=$off count=1 iflag=direct status=none &&
	cmp -s /tmp/blk /tmp/back; then
	ok last-block-of-new-size-round-trips
else
	not_ok last-block-of-new-size-round-trips "write/read of block $off of /dev/$d failed"
fi
if tail -n +"$((dmesg_start + 1))" <(dmesg) | grep -iE "reconnect|I/O error" > /dev/null; then
	not_ok no-reconnect "the kernel log shows a reconnect or an I/O error"
else
	ok no-reconnect-no-io-error
fi
finish
