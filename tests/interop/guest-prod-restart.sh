#!/bin/bash
# guest-prod-restart.sh - runs as root inside the interop lab guest (through run-in-guest.sh):
# the Linux kernel NVMe/TCP host rides through restarts of nvmeof-target on the host.
#   connect (--ctrl-loss-tmo=60 --reconnect-delay=2) -> mkfs.ext4 -> mount -> write set A
#   -> (the host stops the target with SIGTERM and starts it again on the same file and
#   port) -> the controller reconnects by itself, same namespace (same NGUID) -> write set
#   B -> (the host kills the target with SIGKILL and starts it again) -> reconnects ->
#   write set C -> umount -> remount -> sets A, B and C read back -> umount -> fsck -f
#   clean -> disconnect -> no I/O or filesystem errors in the kernel log.
#
# Usage: guest-prod-restart.sh ADDR PORT NQN
# Hand-shake with the host through the share: this side writes "ready1"/"ready2" when the
# filesystem is synced, the host answers "restarted1"/"restarted2" once the new target
# listens.
. "${LAB_SHARE_DIR:-/mnt/host}/guest-prod-lib.sh"
if [ $# -ne 3 ]; then
	echo "usage: $0 ADDR PORT NQN" >&2
	exit 2
fi
ADDR=$1 PORT=$2 NQN=$3
ctrl=
ns=

PLAN=(connect mkfs mount write-a term-reconnect term-same-namespace write-b kill-reconnect
      kill-same-namespace write-c umount remount verify-a verify-b verify-c final-umount fsck
      disconnect kernel-log)

guest_cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	[ -n "$ctrl" ] && nvme disconnect -n "$NQN" > /dev/null 2>&1
}

modprobe -a nvme-tcp nvme-fabrics || skip "the guest kernel $(uname -r) has no nvme-tcp"

find_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2> /dev/null)" = "$NQN" ] || continue
		grep -q "traddr=$ADDR,trsvcid=$PORT" "$c/address" 2> /dev/null || continue
		basename "$c"
		return 0
	done
	return 1
}
find_ns() {
	local i s d
	for i in $(seq 150); do
		for s in /sys/class/nvme-subsystem/nvme-subsys* "/sys/class/nvme/$ctrl"; do
			[ "$(cat "$s/subsysnqn" 2> /dev/null)" = "$NQN" ] || continue
			for d in "$s"/nvme*; do
				d=$(basename "$d")
				[[ $d =~ ^nvme[0-9]+n[0-9]+$ ]] && [ -e "/sys/class/block/$d" ] || continue
				[ -b "/dev/$d" ] || { IFS=: read -r maj min < "/sys/class/block/$d/dev"
					mknod "/dev/$d" b "$maj" "$min"; }
				echo "$d"
				return 0
			done
		done
		sleep 0.2
	done
	return 1
}
ids() { cat "/sys/class/block/$1/nguid" "/sys/class/block/$1/uuid" 2> /dev/null | xargs; }

# restart_round N WHAT: hand over to the host for restart N, then wait for the reconnect
restart_round() {
	local n=$1 what=$2 from st i
	from=$(dmesg | wc -l)
	sync
	tell_host "ready$n"
	wait_host "restarted$n" 300 || fatal "$what-reconnect" "the host did not restart the target"
	say "host: $(cat "$OUT/restarted$n")"
	for i in $(seq 450); do
		st=$(cat "/sys/class/nvme/$ctrl/state" 2> /dev/null)
		kernel_errors 'Successfully reconnected' "$from" > /dev/null && [ "$st" = live ] && break
		sleep 0.2
	done
	kernel_errors 'nvme|reconnect' "$from" | tail -n 6
	if [ "$st" = live ] && kernel_errors 'Successfully reconnected' "$from" > /dev/null; then
		ok "$what-reconnect"
	else
		fatal "$what-reconnect" "controller $ctrl state '$st' 90 s after the restart (or no 'Successfully reconnected' in the kernel log)"
	fi
	if [ -e "/sys/class/block/$ns" ] && [ "$(ids "$ns")" = "$ids0" ] &&
		[ "$(find_ctrl)" = "$ctrl" ]; then
		ok "$what-same-namespace"
	else
		fatal "$what-same-namespace" "namespace /dev/$ns ids now '$(ids "$ns")', were '$ids0'"
	fi
}

say "\$ nvme connect -t tcp -a $ADDR -s $PORT -n $NQN --ctrl-loss-tmo=60 --reconnect-delay=2"
nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" --ctrl-loss-tmo=60 --reconnect-delay=2 ||
	fatal connect "nvme connect failed"
ctrl=$(find_ctrl) || fatal connect "no controller for $NQN"
ns=$(find_ns) || fatal connect "no namespace appeared"
ids0=$(ids "$ns")
ok connect
say "controller $ctrl, namespace /dev/$ns (nguid uuid: $ids0)"
mkdir -p "$MNT"
run mkfs mkfs.ext4 -q -F "/dev/$ns"
run mount mount "/dev/$ns" "$MNT"
run write-a write_files "$MNT/a" "$OUT/sums-a"

restart_round 1 term
run write-b write_files "$MNT/b" "$OUT/sums-b"
restart_round 2 kill
run write-c write_files "$MNT/c" "$OUT/sums-c"

run umount umount "$MNT"
echo 3 > /proc/sys/vm/drop_caches
run remount mount "/dev/$ns" "$MNT"
run verify-a verify_files "$MNT/a" "$OUT/sums-a"
run verify-b verify_files "$MNT/b" "$OUT/sums-b"
run verify-c verify_files "$MNT/c" "$OUT/sums-c"
run final-umount umount "$MNT"
run fsck fsck.ext4 -f -n "/dev/$ns"
out=$(nvme disconnect -n "$NQN" 2>&1)
echo "$out"
if grep -q 'disconnected 1 controller' <<< "$out"; then
	ok disconnect
	ctrl=
else
	not_ok disconnect "unexpected output: $out"
fi
# reconnect messages are expected; data errors are not
errs=$(kernel_errors 'I/O Error|I/O error|EXT4-fs error|EXT4-fs warning|Buffer I/O|lost async page write|Call Trace|WARNING|BUG')
if [ -z "$errs" ]; then
	ok kernel-log
else
	not_ok kernel-log "guest kernel reported: $(head -n 3 <<< "$errs" | tr '\n' '|')"
fi
finish
