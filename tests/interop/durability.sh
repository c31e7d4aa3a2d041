#!/bin/bash
# durability.sh - durability across a power cut, not just a process kill (after kill -9 the
# page cache still holds every write, so that proves nothing).
#
# nvmeof-target runs in the qemu lab guest with its namespace on the raw virtio disk
# /dev/vda, backed by a host file with cache=none. From the host, durability_writer drives
# 4 KiB writes over NVMe/TCP and over iSCSI at the same time (every fourth with FUA, a
# Flush / SYNCHRONIZE CACHE after every eighth), logging each acknowledgement to a host
# file before the next command. Then qemu is killed with SIGKILL mid-workload (the power
# cut: whatever the guest kernel only held in its page cache is gone), the guest boots
# again on the same disk, and every write acknowledged with FUA or before an acknowledged
# Flush must read back intact, through the same protocol.
#
# Then the same with the target started with --unsafe-ignore-flush (FUA and Flush
# ignored): the verifier must report lost writes on both paths, or the test cannot tell a
# durable target from one that is not.
#
# Boots: 1 positive workload, cut; 2 verify it, negative workload, cut; 3 verify that.
. "$(dirname "$0")/lib.sh"
ix_init

DW=$top_builddir/tests/interop/durability_writer
[ -x "$DW" ] || { ix_log "no $DW (make check builds it)"; exit 99; }
IQN=iqn.2026-11.io.nvmeof:default
WORK_SECONDS=${DURABILITY_SECONDS:-8}   # workload time before each power cut
MAX_WRITES=4000                         # per region (16 MiB): more than fit in WORK_SECONDS
IMG=$IX_DIR/disk.img
truncate -s 64M "$IMG"
dd if=/dev/zero of="$IMG" bs=4096 count=1 oflag=direct conv=notrunc status=none 2> /dev/null ||
	ix_cannot_run "O_DIRECT not supported under ${TMPDIR:-/tmp} (needed for cache=none)"

# the guest runs copies of the programs from the share (the host / may look stale there)
mkdir -p "$IX_DIR/bin"
for f in "$top_builddir/target/.libs/nvmeof-target" "$top_builddir/target/nvmeof-target"; do
	if [ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		cp "$f" "$IX_DIR/bin/nvmeof-target"
		break
	fi
done
cp -a "$top_builddir"/.libs/libnvmeof.so* "$IX_DIR/bin/" 2> /dev/null
chmod -R a+rX "$IX_DIR/bin"

if ! P_NVME=$(ix_free_port) || ! P_ISCSI=$(ix_free_port); then
	ix_log "no free port"
	exit 99
fi
[ "$P_NVME" != "$P_ISCSI" ] || P_ISCSI=$((P_NVME + 1))
URI_NVME=nvme+tcp://127.0.0.1:$P_NVME/$IX_NQN
URI_ISCSI=iscsi://127.0.0.1:$P_ISCSI/$IQN/0
BOOT=0

# boot: start the guest on the disk image in the background
boot() {
	BOOT=$((BOOT + 1))
	rm -f "$IX_DIR"/go-* "$IX_DIR"/ready-* "$IX_DIR"/stop-* "$IX_DIR/end"
	ix_log "boot $BOOT (disk $IMG, cache=none)"
	LAB_SHARE=$IX_DIR LAB_TIMEOUT=${LAB_TIMEOUT:-600} LAB_APPEND="oops=panic ${LAB_APPEND:-}" \
		LAB_HOSTFWD="tcp:127.0.0.1:$P_NVME-:4420,tcp:127.0.0.1:$P_ISCSI-:3260" \
		LAB_QEMU_ARGS="-drive file=$IMG,if=virtio,format=raw,cache=none" \
		"$IX_LAB/run-in-guest.sh" "$top_srcdir/tests/interop/guest-durability.sh" \
		> "$IX_DIR/console-$BOOT.log" 2>&1 9>&- &
	IX_GUEST_PID=$!
}

# phase N OPTIONS...: start the target (phase N of this boot) and wait until it listens
phase() {
	local n=$1
	shift
	echo "$*" > "$IX_DIR/go-$n"
	for _ in $(seq 1800); do
		[ -e "$IX_DIR/ready-$n" ] && { ix_log "boot $BOOT: target up ($*)"; return 0; }
		kill -0 "$IX_GUEST_PID" 2> /dev/null || break
		sleep 0.1
	done
	cat "$IX_DIR/console-$BOOT.log"
	ix_cannot_run "the lab guest did not bring the target up (boot $BOOT)"
}

# power_cut: SIGKILL the qemu of this test (found by its unique disk image path)
power_cut() {
	local p qpid=
	command -v pgrep > /dev/null || ix_cannot_run "pgrep is missing (apt-get install procps)"
	for p in $(pgrep -f -- "file=$IMG,"); do
		case "$(cat "/proc/$p/comm" 2> /dev/null)" in
		qemu-system*) qpid=$p ;;
		esac
	done
	if [ -z "$qpid" ]; then
		ix_not_ok "power-cut-$BOOT" "no qemu process with $IMG"
		return
	fi
	kill -KILL "$qpid"
	wait "$IX_GUEST_PID" 2> /dev/null
	IX_GUEST_PID=
	ix_log "boot $BOOT: power cut (qemu pid $qpid killed with SIGKILL)"
	ix_ok "power-cut-$BOOT"
}

shutdown_guest() {
	touch "$IX_DIR/end"
	wait "$IX_GUEST_PID"
	IX_GUEST_RC=$?
	IX_GUEST_PID=
	if [ "$IX_GUEST_RC" = 0 ]; then
		ix_ok "guest-exit-$BOOT"
	else
		ix_not_ok "guest-exit-$BOOT" "run-in-guest.sh status $IX_GUEST_RC"
	fi
}

# workload TAG REGION_LBA_NVME REGION_LBA_ISCSI: both writers for WORK_SECONDS, then the cut
workload() {
	local tag=$1 rid=$RANDOM$RANDOM pn pi
	timeout 120 "$DW" write "$URI_NVME" "$IX_DIR/$tag-nvme.log" "$rid" "$2" "$MAX_WRITES" \
		> "$IX_DIR/$tag-nvme.out" 2>&1 &
	pn=$!
	timeout 120 "$DW" write "$URI_ISCSI" "$IX_DIR/$tag-iscsi.log" "$((rid + 1))" "$3" \
		"$MAX_WRITES" > "$IX_DIR/$tag-iscsi.out" 2>&1 &
	pi=$!
	sleep "$WORK_SECONDS"
	power_cut
	wait "$pn"
	ix_expect_rc "$tag-nvme-writer" $? "$IX_DIR/$tag-nvme.out"
	wait "$pi"
	ix_expect_rc "$tag-iscsi-writer" $? "$IX_DIR/$tag-iscsi.out"
}

ix_expect_rc() {   # NAME RC OUTFILE
	sed 's/^/  /' "$3"
	grep -q " $MAX_WRITES writes" "$3" &&
		ix_log "note: $1 finished before the power cut (the cut did not land mid-workload)"
	if [ "$2" = 0 ]; then
		ix_ok "$1"
	else
		ix_not_ok "$1" "durability_writer status $2"
	fi
}

# verify TAG PROTO URI EXPECT: EXPECT intact (status 0) or lost (status 1, lost > 0)
verify() {
	local out rc acked required
	out=$("$DW" verify "$3" "$IX_DIR/$1-$2.log" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  /'
	acked=$(echo "$out" | sed -n 's/.* acked=\([0-9]*\) required=\([0-9]*\).*/\1/p')
	required=$(echo "$out" | sed -n 's/.* acked=\([0-9]*\) required=\([0-9]*\).*/\2/p')
	if [ -z "$required" ] || [ "$required" -lt 8 ]; then
		ix_not_ok "$1-$2-verify" "too little durable work acknowledged (${required:-?}" \
			"required writes of ${acked:-?}) for the check to mean anything"
		return
	fi
	case "$4:$rc" in
	intact:0) ix_ok "$1-$2-verify ($required required writes intact)" ;;
	lost:1)
		if echo "$out" | grep -q 'corrupt_blocks=0 '; then
			ix_ok "$1-$2-caught (the verifier found acknowledged writes lost)"
		else
			ix_not_ok "$1-$2-caught" "corrupt blocks, not only lost writes"
		fi
		;;
	intact:*) ix_not_ok "$1-$2-verify" "acknowledged durable writes lost (status $rc)" ;;
	lost:*) ix_not_ok "$1-$2-caught" "a target ignoring FUA and Flush was not caught" \
		"(status $rc)" ;;
	esac
}

# regions of the 64 MiB disk, in 512-byte blocks: 16 MiB each
boot
phase 1 --block-size 512
workload safe 0 32768

boot
phase 1 --block-size 512
verify safe nvme "$URI_NVME" intact
verify safe iscsi "$URI_ISCSI" intact
touch "$IX_DIR/stop-1"
phase 2 --block-size 512 --unsafe-ignore-flush
workload unsafe 65536 98304

boot
phase 1 --block-size 512
verify unsafe nvme "$URI_NVME" lost
verify unsafe iscsi "$URI_ISCSI" lost
shutdown_guest

for f in "$IX_DIR"/target-*.log; do
	grep -q 'unsafe-ignore-flush' "$f" && echo "--- $(basename "$f") (negative run) ---" &&
		sed 's/^/  target: /' "$f" | tail -n 5
done
ix_finish
