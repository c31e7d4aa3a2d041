#!/bin/bash
# guest-auth-kernel-host.sh - runs as root inside the interop lab guest (6.12 kernel, through
# run-in-guest.sh), driven by auth-kernel-host.sh: the Linux kernel NVMe/TCP host
# authenticating with DH-HMAC-CHAP against a target at ADDR:PORT.
#
#   host A: nvme connect --dhchap-secret (unidirectional; the target asks hmac(sha256), null)
#           -> ext4 mkfs, files, fsck, checksums -> disconnect
#   host B: nvme connect --dhchap-secret --dhchap-ctrl-secret (bidirectional; hmac(sha512),
#           ffdhe4096) -> host A's files read back, more files, fsck -> disconnect
#   host A with a wrong secret: refused (the kernel logs the controller's AUTH_Failure1)
#   host B with a wrong controller secret: the host refuses the controller
#   host A with no secret at all: refused
#   host A connected while the target's secret for it changes: its controller ends
#
# Usage: guest-auth-kernel-host.sh ADDR PORT NQN (the hosts and keys come from
# /mnt/host/keys.env: HA HIDA KEYA KEYA2 HB HIDB KEYB CKEYB WRONGA WRONGCB); host A's
# secret is changed to KEYA2 on the target while it is connected (flag files a-connected,
# rekeyed)
. "${LAB_SHARE_DIR:-/mnt/host}/guest-prod-lib.sh"
ADDR=$1 PORT=$2 NQN=$3
# shellcheck disable=SC1091
. "$OUT/keys.env"
PLAN=(uni-connect uni-kernel-log uni-io-queues mkfs mount write umount fsck uni-disconnect
      bidi-connect bidi-kernel-log bidi-io-queues bidi-mount bidi-verify bidi-write bidi-umount
      bidi-fsck bidi-disconnect wrong-secret wrong-secret-reason wrong-ctrl-secret
      wrong-ctrl-secret-reason no-secret rekey-connect rekey-revoked rekey-new-secret rekey-disconnect
      kernel-log)
ctrl=
ns=

guest_cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	[ -n "$ctrl" ] && [ -e "/sys/class/nvme/$ctrl" ] && nvme disconnect -d "$ctrl" > /dev/null 2>&1
}

modprobe -a nvme-tcp nvme-fabrics || fatal uni-connect "modprobe nvme-tcp failed"
# the kernel host's AUTH message trace (dev_dbg in drivers/nvme/host/auth.c), if it can
mount -t debugfs none /sys/kernel/debug 2> /dev/null
DYNDBG=/sys/kernel/debug/dynamic_debug/control
if [ -w "$DYNDBG" ] && echo 'file drivers/nvme/host/auth.c +p' > "$DYNDBG" 2> /dev/null; then
	say "dynamic debug on for drivers/nvme/host/auth.c"
else
	DYNDBG=
fi

find_ctrl() {   # find_ctrl HOSTNQN: the controller of NQN at ADDR:PORT for HOSTNQN
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] || continue
		[ "$(cat "$c/hostnqn" 2> /dev/null)" = "$1" ] || continue
		grep -q "traddr=$ADDR,trsvcid=$PORT" "$c/address" 2> /dev/null || continue
		basename "$c"
		return 0
	done
	return 1
}
find_ns() {   # the namespace block device of NQN (multipath head or plain)
	local i s d
	for i in $(seq 150); do
		for s in /sys/class/nvme-subsystem/nvme-subsys* "/sys/class/nvme/$ctrl"; do
			[ -e "$s/subsysnqn" ] && [ "$(cat "$s/subsysnqn")" = "$NQN" ] || continue
			for d in "$s"/nvme*; do
				d=$(basename "$d")
				[[ $d =~ ^nvme[0-9]+n[0-9]+$ ]] && [ -e "/sys/class/block/$d" ] || continue
				if [ ! -b "/dev/$d" ]; then
					IFS=: read -r maj min < "/sys/class/block/$d/dev"
					mknod "/dev/$d" b "$maj" "$min"
				fi
				echo "$d"
				return 0
			done
		done
		sleep 0.2
	done
	return 1
}
# connect CHECK HOSTNQN HOSTID ARGS...: connect with two I/O queues; sets ctrl and ns
connect() {
	local name=$1 h=$2 id=$3
	shift 3
	say "\$ nvme connect -t tcp -a $ADDR -s $PORT -n $NQN --hostnqn=$h -i 2 (secrets elided)"
	nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" --hostnqn="$h" --hostid="$id" -i 2 \
		-l 20 "$@" || fatal "$name" "nvme connect failed (exit $?)"
	ctrl=$(find_ctrl "$h") || fatal "$name" "no controller of $NQN for $h"
	ns=$(find_ns) || fatal "$name" "controller $ctrl: no namespace block device in 30 s"
	ok "$name"
	say "controller $ctrl, namespace /dev/$ns"
}
disconnect() {
	say "\$ nvme disconnect -d $ctrl"
	nvme disconnect -d "$ctrl" || fatal "$1" "nvme disconnect failed"
	ctrl=
	ns=
	ok "$1"
}
# refused CHECK HOSTNQN HOSTID ARGS...: the connect must fail and leave no controller
refused() {
	local name=$1 h=$2 id=$3 rc
	shift 3
	say "\$ nvme connect ... --hostnqn=$h (must be refused)"
	nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" --hostnqn="$h" --hostid="$id" -i 2 \
		-l 5 "$@"
	rc=$?
	sleep 1
	if [ "$rc" = 0 ]; then
		c=$(find_ctrl "$h") && nvme disconnect -d "$c" > /dev/null 2>&1
		not_ok "$name" "nvme connect succeeded"
	elif c=$(find_ctrl "$h"); then
		nvme disconnect -d "$c" > /dev/null 2>&1
		not_ok "$name" "connect failed (exit $rc) but controller $c exists"
	else
		ok "$name"
	fi
}
# log_has CHECK FROM-LINE ERE WHY: the kernel logged a line matching ERE since FROM-LINE
log_has() {
	if kernel_errors "$3" "$2" > /dev/null; then
		ok "$1"
		kernel_errors "$3" "$2" | head -n 3
	else
		not_ok "$1" "$4"
	fi
}
queues() {   # queues CHECK: admin + 2 I/O queues
	local qc
	qc=$(cat "/sys/class/nvme/$ctrl/queue_count")
	check "$1" [ "$qc" = 3 ] "queue_count $qc, expected 3 (admin + 2 I/O)"
}

mkdir -p "$MNT"

# 1. host A, unidirectional
l0=$(dmesg | wc -l)
connect uni-connect "$HA" "$HIDA" --dhchap-secret="$KEYA"
log_has uni-kernel-log "$l0" 'qid 0: authenticated with hash hmac\(sha256\) dhgroup null' \
	"no 'authenticated with hash hmac(sha256) dhgroup null' from the kernel"
queues uni-io-queues
run mkfs mkfs.ext4 -q -F "/dev/$ns"
run mount mount "/dev/$ns" "$MNT"
run write write_files "$MNT/a" "$OUT/sums-a"
run umount umount "$MNT"
run fsck fsck.ext4 -f -n "/dev/$ns"
disconnect uni-disconnect

# 2. host B, bidirectional: host A's files are there, new ones are written
l0=$(dmesg | wc -l)
connect bidi-connect "$HB" "$HIDB" --dhchap-secret="$KEYB" --dhchap-ctrl-secret="$CKEYB"
log_has bidi-kernel-log "$l0" 'qid 0: controller authenticated' \
	"no 'controller authenticated' from the kernel"
kernel_errors 'authenticated with hash' "$l0" | head -n 2
if ! kernel_errors 'authenticated with hash hmac\(sha512\) dhgroup ffdhe4096' "$l0" > /dev/null; then
	not_ok bidi-kernel-log "the kernel did not report hmac(sha512) and ffdhe4096"
fi
queues bidi-io-queues
echo 3 > /proc/sys/vm/drop_caches
run bidi-mount mount "/dev/$ns" "$MNT"
run bidi-verify verify_files "$MNT/a" "$OUT/sums-a"
run bidi-write write_files "$MNT/b" "$OUT/sums-b"
run bidi-umount umount "$MNT"
run bidi-fsck fsck.ext4 -f -n "/dev/$ns"
disconnect bidi-disconnect

# 3. a wrong host secret: the controller answers AUTH_Failure1 and the host gives up
# (6.12: "authentication failed, error -129", -EKEYREJECTED; -111 in older kernels); with
# the kernel's dynamic debug its trace shows the message: AUTH-Type 00h, AUTH-Id F1h
l0=$(dmesg | wc -l)
refused wrong-secret "$HA" "$HIDA" --dhchap-secret="$WRONGA"
if ! kernel_errors 'qid 0: authentication failed, error -(129|111)' "$l0" > /dev/null; then
	not_ok wrong-secret-reason "no 'qid 0: authentication failed, error -129' from the kernel"
elif kernel_errors 'controller authentication failed' "$l0" > /dev/null; then
	not_ok wrong-secret-reason "the host refused the controller instead"
elif [ -n "$DYNDBG" ] && ! kernel_errors 'qid 0 auth_type 0 auth_id f1' "$l0" > /dev/null; then
	not_ok wrong-secret-reason "the kernel's trace shows no AUTH_Failure1 (auth_id f1)"
else
	ok wrong-secret-reason
	kernel_errors 'auth_id f1|authentication failed' "$l0" | head -n 2
fi

# 4. the right host secret, a wrong controller secret: the host refuses the controller
l0=$(dmesg | wc -l)
refused wrong-ctrl-secret "$HB" "$HIDB" --dhchap-secret="$KEYB" --dhchap-ctrl-secret="$WRONGCB"
log_has wrong-ctrl-secret-reason "$l0" 'qid 0: controller authentication failed' \
	"no 'controller authentication failed' from the kernel"

# 5. no secret: the controller requires authentication, the host cannot
refused no-secret "$HA" "$HIDA"

# 7. revocation: host A connected, the target's secret for it changes (SIGHUP); the
# controller ends at once and the host's reconnects with the old secret are refused; the
# new secret works
connect rekey-connect "$HA" "$HIDA" --dhchap-secret="$KEYA" --reconnect-delay=1
tell_host a-connected "$ctrl"
l0=$(dmesg | wc -l)
if wait_host rekeyed 120; then
	gone=
	for _ in $(seq 150); do
		st=$(cat "/sys/class/nvme/$ctrl/state" 2> /dev/null || echo deleted)
		if [ "$st" != live ] && kernel_errors 'qid 0: authentication failed' "$l0" > /dev/null; then
			gone=$st
			break
		fi
		sleep 0.2
	done
	if [ -n "$gone" ]; then
		ok rekey-revoked
		say "controller $ctrl: $gone; $(kernel_errors 'authentication failed' "$l0" | head -n 1)"
	else
		not_ok rekey-revoked "controller $ctrl still $(cat "/sys/class/nvme/$ctrl/state" 2> /dev/null) 30 s after the new secret, or no refused reconnect"
	fi
else
	not_ok rekey-revoked "the host side never changed the secret"
fi
nvme disconnect -d "$ctrl" > /dev/null 2>&1
ctrl=
connect rekey-new-secret "$HA" "$HIDA" --dhchap-secret="$KEYA2"
disconnect rekey-disconnect

# 8. nothing else went wrong in the kernel (the refused reconnects of step 7 aside)
errs=$(kernel_errors 'I/O error|Call Trace|WARNING|BUG|EXT4-fs error')
if [ -z "$errs" ]; then
	ok kernel-log
else
	not_ok kernel-log "guest kernel reported: $(head -n 3 <<< "$errs" | tr '\n' '|')"
fi
finish
