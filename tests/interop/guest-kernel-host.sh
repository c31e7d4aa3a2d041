#!/bin/bash
# guest-kernel-host.sh - runs as root inside the interop lab guest (through run-in-guest.sh).
#
# Drives the guest's Linux kernel NVMe/TCP host against a target at ADDR:PORT:
#   discover -> connect with NQUEUES I/O queues (and digests) -> check the controller ->
#   fio write+verify on the raw namespace ->
#   mkfs.ext4 -> mount -> write files and checksums -> umount -> fsck -> disconnect ->
#   reconnect -> mount -> verify checksums -> umount -> disconnect.
#
# Usage: guest-kernel-host.sh ADDR PORT NQN NQUEUES DIGEST NSBYTES [TARGET]
#   DIGEST   none | hdgst+ddgst (nvme connect -g -G)
#   NSBYTES  expected namespace size in bytes (0: do not check)
#   TARGET   "nvmet": first set up the Linux kernel target (nvmet-tcp) in this guest on
#            ADDR:PORT with a file-backed namespace of NSBYTES (reference run)
#
# Results go to the shared folder (/mnt/host): guest-results (one "ok NAME" or
# "not ok NAME: why" line per check), guest-dmesg.txt, checksums. Exit status: the number
# of failed checks (checks after a fatal failure are reported as failed, not skipped).
set -u
if [ $# -lt 6 ]; then
	echo "usage: $0 ADDR PORT NQN NQUEUES DIGEST NSBYTES [nvmet]" >&2
	exit 2
fi
ADDR=$1 PORT=$2 NQN=$3 NQUEUES=$4 DIGEST=$5 NSBYTES=$6 TARGET=${7:-}
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
MNT=/mnt/nvmeof-test
: > "$RES"
pass=0
fail=0
ctrl=
ns=
t0=$(cut -d' ' -f1 /proc/uptime)
dmesg_start=$(dmesg | wc -l)

now() { awk -v s="$t0" '{printf "%.1f", $1 - s}' /proc/uptime; }
ok() {
	echo "ok $1" >> "$RES"
	echo "[+$(now)s] ok $1"
	pass=$((pass + 1))
}
not_ok() {
	echo "not ok $1: $2" >> "$RES"
	echo "[+$(now)s] not ok $1: $2"
	fail=$((fail + 1))
}
finish() {
	mountpoint -q "$MNT" && umount "$MNT"
	[ -n "$ctrl" ] && [ -e "/sys/class/nvme/$ctrl" ] && nvme disconnect -n "$NQN" > /dev/null 2>&1
	dmesg > "$OUT/guest-dmesg.txt"
	echo "--- guest kernel log since the script started (nvme, ext4, block layer) ---"
	tail -n +"$((dmesg_start + 1))" "$OUT/guest-dmesg.txt" |
		grep -iE 'nvme|ext4|blk_|I/O error|Call Trace|WARNING|BUG' | tail -60
	echo "guest checks: $pass passed, $fail failed"
	exit "$fail"
}
# fatal NAME WHY: record the failure and the checks that can no longer run, then stop
fatal() {
	not_ok "$1" "$2"
	local rest
	for rest in "${PLAN[@]}"; do
		grep -q -e "^ok $rest\$" -e "^not ok $rest:" "$RES" || not_ok "$rest" "not run (earlier failure)"
	done
	finish
}
# run NAME CMD...: run a command, show its output, fail the check (fatal) if it fails
run() {
	local name=$1
	shift
	echo "[+$(now)s] \$ $*"
	if "$@"; then
		ok "$name"
	else
		fatal "$name" "exit status $? from: $*"
	fi
}

PLAN=(discover connect io-queues namespace-size fio-verify mkfs mount write umount fsck disconnect
      reconnect remount verify final-umount final-disconnect kernel-log)

CONNECT=(nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" -i "$NQUEUES" -l 120)
case "$DIGEST" in
none) ;;
hdgst+ddgst) CONNECT+=(-g -G) ;;
*) echo "bad DIGEST $DIGEST" >&2; exit 2 ;;
esac

modprobe -a nvme-tcp nvme-fabrics || fatal discover "modprobe nvme-tcp failed"

if [ "$TARGET" = nvmet ]; then
	# Reference run: the Linux kernel target in this guest, file-backed namespace in RAM.
	N=/sys/kernel/config/nvmet
	modprobe -a nvmet nvmet-tcp || fatal discover "modprobe nvmet-tcp failed"
	modprobe loop
	truncate -s "$NSBYTES" /tmp/nvmet-ns.img
	loopdev=$(losetup -f --show /tmp/nvmet-ns.img) || fatal discover "losetup failed"
	nvmet_setup() {
		set -e
		mkdir "$N/subsystems/$NQN"
		echo 1 > "$N/subsystems/$NQN/attr_allow_any_host"
		mkdir "$N/subsystems/$NQN/namespaces/1"
		echo -n "$loopdev" > "$N/subsystems/$NQN/namespaces/1/device_path"
		echo 1 > "$N/subsystems/$NQN/namespaces/1/enable"
		mkdir "$N/ports/1"
		echo tcp > "$N/ports/1/addr_trtype"
		echo ipv4 > "$N/ports/1/addr_adrfam"
		echo "$ADDR" > "$N/ports/1/addr_traddr"
		echo "$PORT" > "$N/ports/1/addr_trsvcid"
		ln -s "$N/subsystems/$NQN" "$N/ports/1/subsystems/$NQN"
	}
	(nvmet_setup) || fatal discover "nvmet configfs set-up failed"
	echo "[+$(now)s] nvmet target on $ADDR:$PORT ($NQN, $NSBYTES bytes)"
fi

# find_ctrl: the controller device (nvmeX) connected to NQN at ADDR:PORT, or nothing
find_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] || continue
		[ "$(cat "$c/subsysnqn")" = "$NQN" ] || continue
		[ "$(cat "$c/transport" 2>/dev/null)" = tcp ] || continue
		grep -q "traddr=$ADDR,trsvcid=$PORT" "$c/address" 2>/dev/null || continue
		basename "$c"
		return 0
	done
	return 1
}
# find_ns: the namespace block device of NQN (multipath head or plain), waiting for the scan
find_ns() {
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
connect() {   # connect CHECKNAME: connect and set $ctrl and $ns
	echo "[+$(now)s] \$ ${CONNECT[*]}"
	"${CONNECT[@]}" || fatal "$1" "nvme connect failed (exit $?)"
	ctrl=$(find_ctrl) || fatal "$1" "no /sys/class/nvme controller for $NQN at $ADDR:$PORT"
	ns=$(find_ns) || fatal "$1" "controller $ctrl: no namespace block device appeared in 30 s"
	ok "$1"
	echo "[+$(now)s] controller $ctrl ($(cat /sys/class/nvme/"$ctrl"/model 2>/dev/null | xargs)," \
		"fw $(cat /sys/class/nvme/"$ctrl"/firmware_rev 2>/dev/null | xargs)), namespace /dev/$ns"
}
disconnect() {   # disconnect CHECKNAME
	local out
	echo "[+$(now)s] \$ nvme disconnect -n $NQN"
	out=$(nvme disconnect -n "$NQN" 2>&1)
	echo "$out"
	grep -q 'disconnected 1 controller' <<< "$out" || fatal "$1" "unexpected output: $out"
	if find_ctrl > /dev/null; then
		fatal "$1" "controller still present after disconnect"
	fi
	ctrl=
	ns=
	ok "$1"
}

# 1. discovery: the discovery log page lists our subsystem
echo "[+$(now)s] \$ nvme discover -t tcp -a $ADDR -s $PORT"
disc=$(timeout 120 nvme discover -t tcp -a "$ADDR" -s "$PORT" 2>&1)
rc=$?
echo "$disc"
if [ $rc -ne 0 ]; then
	fatal discover "nvme discover exit status $rc"
elif ! grep -qE "^subnqn: +$NQN\$" <<< "$disc"; then
	fatal discover "discovery log has no entry with subnqn $NQN"
else
	ok discover
fi

# 2. connect with NQUEUES I/O queues; the host counts the admin queue too
connect connect
qc=$(cat "/sys/class/nvme/$ctrl/queue_count")
if [ "$qc" = $((NQUEUES + 1)) ]; then
	ok io-queues
else
	not_ok io-queues "queue_count $qc, expected $((NQUEUES + 1)) (admin + $NQUEUES I/O)"
fi
size=$(blockdev --getsize64 "/dev/$ns")
if [ "$NSBYTES" = 0 ] || [ "$size" = "$NSBYTES" ]; then
	ok namespace-size
else
	not_ok namespace-size "/dev/$ns has $size bytes, expected $NSBYTES"
fi
nvme id-ctrl "/dev/$ctrl" 2>&1 | grep -E '^(vid|mn|fr|cntlid|mdts|subnqn|ioccsz|iorcsz|sgls|kas) '

# 3. raw block I/O from both CPUs (so both I/O queues) at queue depth 16, transfers from
# 4 KiB to 1 MiB (larger than MDTS: the host splits them), every block verified (CRC32C
# in the data, checked on read back)
run fio-verify fio --name=verify --filename="/dev/$ns" --direct=1 --ioengine=libaio \
	--rw=randwrite --bsrange=4k-1m --iodepth=16 --numjobs=2 --size=48m --offset_increment=64m \
	--verify=crc32c --verify_fatal=1 --do_verify=1 --group_reporting --eta=never

# 4. filesystem
mkdir -p "$MNT"
run mkfs mkfs.ext4 -q -F "/dev/$ns"
run mount mount "/dev/$ns" "$MNT"
write_files() (
	set -e
	mkdir -p "$MNT/small"
	head -c 1048576 /dev/urandom > "$MNT/one-mib"
	head -c 3145728 /dev/urandom > "$MNT/three-mib"
	head -c 8388608 /dev/urandom > "$MNT/eight-mib"
	head -c 777777 /dev/urandom > "$MNT/odd-size"
	for i in $(seq 64); do head -c $((i * 512 + 17)) /dev/urandom > "$MNT/small/f$i"; done
	(cd "$MNT" && find . -type f | sort | xargs sha256sum) > "$OUT/checksums"
	sync
	df -h "$MNT"
	echo "$(wc -l < "$OUT/checksums") files written"
)
run write write_files
run umount umount "$MNT"
run fsck fsck.ext4 -f -n "/dev/$ns"
disconnect disconnect

# 5. a new connection (new controller, new queues): everything must read back
connect reconnect
echo 3 > /proc/sys/vm/drop_caches
run remount mount "/dev/$ns" "$MNT"
run verify bash -c "cd '$MNT' && sha256sum --quiet -c '$OUT/checksums'"
run final-umount umount "$MNT"
disconnect final-disconnect

# 6. the host logged no I/O errors, timeouts, resets, digest errors or warnings.
# Not counted: "failed nvme_keep_alive_end_io error=4" while the controller is being
# removed (after "Removing ctrl", before the next "new ctrl"). A 6.12 host logs it for a
# keep-alive it cancels during the disconnect, before sending it (its "long keepalive
# RTT" of some 4294 million ms is that of a request that never started).
errs=$(dmesg | tail -n +"$((dmesg_start + 1))" |
	awk '/: Removing ctrl: / {removing = 1} /: new ctrl: / {removing = 0}
		!(removing && /failed nvme_keep_alive_end_io error=4$/)' | grep -iE \
	'I/O Error|I/O error|error recovery|timeout|reset|Reconnecting|digest|failed|Call Trace|WARNING|BUG')
if [ -z "$errs" ]; then
	ok kernel-log
else
	not_ok kernel-log "guest kernel reported: $(head -n 3 <<< "$errs" | tr '\n' '|')"
fi
finish
