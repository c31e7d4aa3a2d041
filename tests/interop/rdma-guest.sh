#!/bin/bash
# rdma-guest.sh - runs as root inside the interop lab guest (through run-in-guest.sh).
#
# NVMe/RDMA over soft-RoCE: rdma_rxe on the guest's eth0 (10.0.2.15; rdma_cm cannot use an
# rxe device on lo). The programs under test were copied by the host into the shared
# folder (/mnt/host/bin, with libnvmeof.so) because the guest's /tmp is its own.
#
# Usage: rdma-guest.sh MODE NQN NSBYTES [NQUEUES]
#   kernel-host  nvmeof-target on rdma://10.0.2.15:4420 with a file-backed namespace of
#                NSBYTES; the Linux kernel host (nvme-rdma): discover -> connect with
#                NQUEUES I/O queues -> mkfs.ext4 -> mount -> write files and checksums ->
#                umount -> fsck -f -n -> disconnect -> reconnect -> mount -> verify every
#                checksum -> umount -> disconnect; then SIGTERM, clean target exit.
#   initiator    the Linux kernel target (nvmet-rdma) on 10.0.2.15:4421 and the nvmeof CLI
#                against it (discover, identify, write, read back, compare, initiator_io
#                --loose, also with registered buffers: MSDBD 1, one descriptor); then
#                nvmeof-target on 10.0.2.15:4420 and initiator_io at QD 32 on two queues
#                (every byte checked), again with registered buffers (MSDBD 16: lists of
#                keyed descriptors), a short nvmeof-bench --verify run, and nvmeof-bench
#                at 64K/128K with registered and with plain buffers, alternated
#                (bench-{registered,plain}-{randread,randwrite}-N.json for the host).
#   fault        nvmeof-target on rdma://10.0.2.15:4420 with a RAM namespace of NSBYTES and
#                rdma_fault_client's scenarios (die, qp-error, short-capsule, bad-rkey),
#                each followed by a liveness check, the CLI's write + read back + compare
#                and a healthy raw host; then SIGTERM, clean target exit.
#   preconnect   nvmeof-target with --max-connecting 8 --connect-timeout 5 and 64 KiB of
#                in-capsule data; rdma_fault_client opens 20 queues asking for the deepest
#                I/O queue that never send Connect: at most 8 open at once, the target pins
#                at most 2 MiB for them (VmPin), all closed at the deadline (the rdma
#                statistics agree, nothing left registered); then a healthy
#                raw host and the CLI do I/O; Connects whose QID differs from the CM
#                request's are refused; then SIGTERM, clean target exit.
#
# Results go to /mnt/host: guest-results (one "ok NAME" / "not ok NAME: why" line per
# check), target.log, guest-dmesg.txt. Exit status: the number of failed checks.
set -u
if [ $# -lt 3 ]; then
	echo "usage: $0 kernel-host|initiator|fault|preconnect NQN NSBYTES [NQUEUES]" >&2
	exit 2
fi
MODE=$1 NQN=$2 NSBYTES=$3 NQUEUES=${4:-2}
OUT=${LAB_SHARE_DIR:-/mnt/host}
BIN=$OUT/bin
RES=$OUT/guest-results
IP=${LAB_GUEST_IP:-10.0.2.15}
PORT=4420
MNT=/mnt/nvmeof-test
export LD_LIBRARY_PATH=$BIN
: > "$RES"
pass=0
fail=0
ctrl=
ns=
tpid=
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
stop_target() {   # stop_target CHECKNAME: SIGTERM, the target must exit 0 within 20 s
	local i rc
	[ -n "$tpid" ] || return 0
	kill -TERM "$tpid" 2> /dev/null
	for i in $(seq 200); do
		kill -0 "$tpid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$tpid" 2> /dev/null; then
		kill -KILL "$tpid"
		wait "$tpid" 2> /dev/null
		[ -n "${1:-}" ] && not_ok "$1" "nvmeof-target did not exit within 20 s of SIGTERM"
	else
		wait "$tpid"
		rc=$?
		if [ -n "${1:-}" ]; then
			if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1" "nvmeof-target exit status $rc"; fi
		fi
	fi
	tpid=
}
finish() {
	mountpoint -q "$MNT" && umount "$MNT"
	[ -n "$ctrl" ] && [ -e "/sys/class/nvme/$ctrl" ] && nvme disconnect -n "$NQN" > /dev/null 2>&1
	stop_target
	dmesg > "$OUT/guest-dmesg.txt"
	echo "--- guest kernel log since the script started (nvme, rdma, ext4) ---"
	tail -n +"$((dmesg_start + 1))" "$OUT/guest-dmesg.txt" |
		grep -iE 'nvme|rdma|rxe|ext4|I/O error|Call Trace|WARNING|BUG' | tail -40
	echo "guest checks: $pass passed, $fail failed"
	exit "$fail"
}
# fatal NAME WHY: record the failure and the checks that can no longer run, then stop
fatal() {
	local rest
	not_ok "$1" "$2"
	for rest in "${PLAN[@]}"; do
		grep -q -e "^ok $rest\$" -e "^not ok $rest:" "$RES" || not_ok "$rest" "not run (earlier failure)"
	done
	finish
}
run() {   # run NAME CMD...: the command must succeed (fatal otherwise)
	local name=$1
	shift
	echo "[+$(now)s] \$ $*"
	if "$@"; then ok "$name"; else fatal "$name" "exit status $? from: $*"; fi
}
check() {   # check NAME CMD...: the command must succeed (not fatal)
	local name=$1
	shift
	echo "[+$(now)s] \$ $*"
	if "$@"; then ok "$name"; else not_ok "$name" "exit status $? from: $*"; fi
}

# soft-RoCE on eth0, userspace verbs and the kernel's NVMe/RDMA pieces
setup_rxe() {
	local i
	modprobe -a rdma_rxe rdma_ucm ib_uverbs nvme-rdma nvmet nvmet-rdma ||
		fatal rxe "modprobe rdma_rxe rdma_ucm ib_uverbs nvme-rdma nvmet-rdma failed"
	rdma link add rxe0 type rxe netdev eth0 || fatal rxe "rdma link add rxe0 failed"
	for i in $(seq 50); do
		ibv_devinfo -d rxe0 2> /dev/null | grep -q PORT_ACTIVE && break
		sleep 0.1
	done
	ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || fatal rxe "rxe0 port not active"
	ok rxe
}

# start_target ARGS...: nvmeof-target on rdma://$IP:$PORT; waits for its "listening" line
start_target() {
	local i
	echo "[+$(now)s] \$ nvmeof-target --listen rdma://$IP:$PORT $*"
	"$BIN/nvmeof-target" --listen "rdma://$IP:$PORT" --discovery-port 0 --log-level info "$@" \
		>> "$OUT/target.log" 2>&1 &
	tpid=$!
	for i in $(seq 100); do
		grep -q "listening on rdma://$IP:$PORT" "$OUT/target.log" && { ok target-start; return 0; }
		kill -0 "$tpid" 2> /dev/null || break
		sleep 0.1
	done
	tail -n 20 "$OUT/target.log"
	tpid=
	fatal target-start "nvmeof-target is not listening on rdma://$IP:$PORT"
}

# ---- kernel host against nvmeof-target --------------------------------------------------
find_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] || continue
		[ "$(cat "$c/transport" 2> /dev/null)" = rdma ] || continue
		grep -q "traddr=$IP,trsvcid=$PORT" "$c/address" 2> /dev/null || continue
		basename "$c"
		return 0
	done
	return 1
}
find_ns() {
	local i s d maj min
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
connect() {   # connect CHECKNAME
	local cmd=(nvme connect -t rdma -a "$IP" -s "$PORT" -n "$NQN" -i "$NQUEUES" -l 120)
	echo "[+$(now)s] \$ ${cmd[*]}"
	"${cmd[@]}" || fatal "$1" "nvme connect failed (exit $?)"
	ctrl=$(find_ctrl) || fatal "$1" "no /sys/class/nvme controller for $NQN over rdma"
	ns=$(find_ns) || fatal "$1" "controller $ctrl: no namespace block device appeared in 30 s"
	ok "$1"
}
disconnect() {   # disconnect CHECKNAME
	local out
	out=$(nvme disconnect -n "$NQN" 2>&1)
	echo "$out"
	grep -q 'disconnected 1 controller' <<< "$out" || fatal "$1" "unexpected output: $out"
	find_ctrl > /dev/null && fatal "$1" "controller still present after disconnect"
	ctrl=
	ns=
	ok "$1"
}
write_files() (
	set -e
	mkdir -p "$MNT/small"
	head -c 1048576 /dev/urandom > "$MNT/one-mib"
	head -c 3145728 /dev/urandom > "$MNT/three-mib"
	head -c 8388608 /dev/urandom > "$MNT/eight-mib"
	head -c 777777 /dev/urandom > "$MNT/odd-size"
	for i in $(seq 48); do head -c $((i * 512 + 17)) /dev/urandom > "$MNT/small/f$i"; done
	(cd "$MNT" && find . -type f | sort | xargs sha256sum) > "$OUT/checksums"
	sync
	echo "$(wc -l < "$OUT/checksums") files written"
)

kernel_host() {
	local disc qc size idc errs
	PLAN=(rxe target-start discover connect io-queues namespace-size id-ctrl-sgls mkfs mount
	      write umount fsck disconnect reconnect remount verify final-umount final-disconnect
	      target-exit kernel-log)
	setup_rxe
	truncate -s "$NSBYTES" /tmp/ns.img
	# the guest's /tmp is a tmpfs, which refuses O_DIRECT before Linux 6.6: buffered, as
	# nvmet would need too
	start_target --ns /tmp/ns.img,buffered_io

	echo "[+$(now)s] \$ nvme discover -t rdma -a $IP -s $PORT"
	disc=$(timeout 120 nvme discover -t rdma -a "$IP" -s "$PORT" 2>&1)
	echo "$disc"
	if ! grep -qE "^subnqn: +$NQN\$" <<< "$disc"; then
		fatal discover "discovery log has no entry with subnqn $NQN"
	elif ! grep -qE '^trtype: +rdma' <<< "$disc" || ! grep -qE '^rdma_cms: +rdma-cm' <<< "$disc" ||
		! grep -qE '^rdma_qptype: +connected' <<< "$disc"; then
		not_ok discover "discovery log entry lacks trtype rdma / rdma_cms rdma-cm / qptype connected"
	else
		ok discover
	fi

	connect connect
	qc=$(cat "/sys/class/nvme/$ctrl/queue_count")
	if [ "$qc" = $((NQUEUES + 1)) ]; then ok io-queues; else
		not_ok io-queues "queue_count $qc, expected $((NQUEUES + 1))"; fi
	size=$(blockdev --getsize64 "/dev/$ns")
	if [ "$size" = "$NSBYTES" ]; then ok namespace-size; else
		not_ok namespace-size "/dev/$ns has $size bytes, expected $NSBYTES"; fi
	idc=$(nvme id-ctrl "/dev/$ctrl" 2>&1)
	grep -E '^(mn|fr|mdts|ioccsz|iorcsz|sgls|msdbd) ' <<< "$idc"
	# SGLS bit 2: keyed SGL data blocks; MSDBD 16 (descriptor lists in the capsule)
	if (( ($(awk '/^sgls /{print $3}' <<< "$idc") & 4) != 0 )) &&
		grep -qE '^msdbd +: 16$' <<< "$idc"; then
		ok id-ctrl-sgls
	else
		not_ok id-ctrl-sgls "Identify Controller lacks keyed SGLs (SGLS bit 2) or MSDBD 16"
	fi

	mkdir -p "$MNT"
	run mkfs mkfs.ext4 -q -F "/dev/$ns"
	run mount mount "/dev/$ns" "$MNT"
	run write write_files
	run umount umount "$MNT"
	run fsck fsck.ext4 -f -n "/dev/$ns"
	disconnect disconnect

	connect reconnect
	echo 3 > /proc/sys/vm/drop_caches
	run remount mount "/dev/$ns" "$MNT"
	run verify bash -c "cd '$MNT' && sha256sum --quiet -c '$OUT/checksums'"
	run final-umount umount "$MNT"
	disconnect final-disconnect
	stop_target target-exit

	errs=$(dmesg | tail -n +"$((dmesg_start + 1))" | grep -iE \
		'I/O Error|error recovery|timeout|reset|Reconnecting|failed|Call Trace|WARNING|BUG')
	if [ -z "$errs" ]; then ok kernel-log; else
		not_ok kernel-log "guest kernel reported: $(head -n 3 <<< "$errs" | tr '\n' '|')"; fi
	finish
}

# ---- our initiator against nvmet-rdma and against nvmeof-target ----------------------------
nvmet_setup() {
	local N=/sys/kernel/config/nvmet S=$1 dev
	set -e
	modprobe loop
	truncate -s "$NSBYTES" /tmp/nvmet-ns.img
	dev=$(losetup -f --show /tmp/nvmet-ns.img)
	mkdir "$N/subsystems/$S"
	echo 1 > "$N/subsystems/$S/attr_allow_any_host"
	mkdir "$N/subsystems/$S/namespaces/1"
	echo -n "$dev" > "$N/subsystems/$S/namespaces/1/device_path"
	echo 1 > "$N/subsystems/$S/namespaces/1/enable"
	mkdir "$N/ports/1"
	echo rdma > "$N/ports/1/addr_trtype"
	echo ipv4 > "$N/ports/1/addr_adrfam"
	echo "$IP" > "$N/ports/1/addr_traddr"
	echo 4421 > "$N/ports/1/addr_trsvcid"
	ln -s "$N/subsystems/$S" "$N/ports/1/subsystems/$S"
}
cli_rw() {   # cli_rw URI: write 1 MiB of random data at LBA 100, read it back, compare
	head -c 1048576 /dev/urandom > /tmp/cli-src
	rm -f /tmp/cli-dst
	timeout 120 "$BIN/nvmeof" write "$1" --lba 100 --blocks 2048 -i /tmp/cli-src &&
		timeout 120 "$BIN/nvmeof" read "$1" --lba 100 --blocks 2048 -o /tmp/cli-dst &&
		cmp /tmp/cli-src /tmp/cli-dst
}
initiator() {
	local K=nqn.2014-08.org.nvmexpress:nvmeof-interop-nvmet out
	PLAN=(rxe nvmet cli-discover-nvmet cli-identify-nvmet cli-rw-nvmet initiator-io-nvmet
	      initiator-io-nvmet-registered target-start cli-discover cli-identify cli-rw
	      initiator-io-qd32 initiator-io-registered bench bench-buffers target-exit)
	setup_rxe
	(nvmet_setup "$K") || fatal nvmet "nvmet-rdma configfs set-up failed"
	ok nvmet

	echo "[+$(now)s] \$ nvmeof discover nvme+rdma://$IP:4421"
	out=$(timeout 60 "$BIN/nvmeof" discover "nvme+rdma://$IP:4421" 2>&1)
	echo "$out"
	if grep -q "$K" <<< "$out"; then ok cli-discover-nvmet; else
		not_ok cli-discover-nvmet "discovery log does not list $K"; fi
	check cli-identify-nvmet timeout 60 "$BIN/nvmeof" identify "nvme+rdma://$IP:4421/$K"
	check cli-rw-nvmet cli_rw "nvme+rdma://$IP:4421/$K/1"
	check initiator-io-nvmet timeout 400 "$BIN/initiator_io" "nvme+rdma://$IP:4421/$K/1" \
		--queues 2 --qd 32 --seconds 2 --loose
	check initiator-io-nvmet-registered timeout 400 "$BIN/initiator_io" \
		"nvme+rdma://$IP:4421/$K/1" --queues 2 --qd 32 --seconds 1 --loose --registered

	truncate -s "$NSBYTES" /tmp/ns.img
	start_target --ns /tmp/ns.img,buffered_io --nqn "$NQN" # tmpfs: see above
	echo "[+$(now)s] \$ nvmeof discover nvme+rdma://$IP:$PORT"
	out=$(timeout 60 "$BIN/nvmeof" discover "nvme+rdma://$IP:$PORT" 2>&1)
	echo "$out"
	if grep -q "$NQN" <<< "$out"; then ok cli-discover; else
		not_ok cli-discover "discovery log does not list $NQN"; fi
	check cli-identify timeout 60 "$BIN/nvmeof" identify "nvme+rdma://$IP:$PORT/$NQN"
	check cli-rw cli_rw "nvme+rdma://$IP:$PORT/$NQN/1"
	check initiator-io-qd32 timeout 400 "$BIN/initiator_io" "nvme+rdma://$IP:$PORT/$NQN/1" \
		--queues 2 --qd 32 --seconds 3
	check initiator-io-registered timeout 400 "$BIN/initiator_io" \
		"nvme+rdma://$IP:$PORT/$NQN/1" --queues 2 --qd 32 --seconds 1 --registered
	check bench timeout 300 "$BIN/nvmeof-bench" --native "nvme+rdma://$IP:$PORT/$NQN/1" \
		--rw randread --bs 4k --qd 32 --time 2 --warmup 0.5 --repeat 1 --size 16M --verify \
		--no-progress
	check bench-buffers bench_buffers "nvme+rdma://$IP:$PORT/$NQN/1"
	stop_target target-exit
	finish
}
# bench_buffers URI: initiator CPU per I/O with registered vs plain buffers, same target,
# alternated (registered, plain, plain, registered), 64K and 128K, reads and writes
bench_buffers() {
	local i mode rw flag
	rm -f "$OUT"/bench-registered-*.json "$OUT"/bench-plain-*.json
	for rw in randread randwrite; do
		i=0
		for mode in registered plain plain registered; do
			i=$((i + 1))
			flag=
			[ "$mode" = plain ] && flag=--plain-buffers
			echo "[+$(now)s] \$ nvmeof-bench $rw 64k,128k $mode"
			timeout 300 "$BIN/nvmeof-bench" --native "$1" --rw "$rw" --bs 64k,128k --qd 8 \
				--time 3 --warmup 0.5 --repeat 3 --size 64M --no-progress $flag \
				--json "$OUT/bench-$mode-$rw-$i.json" > /dev/null || return 1
		done
	done
}

# ---- fault injection (rdma_fault_client) against nvmeof-target ----------------------------
fault() {
	local s u="nvme+rdma://$IP:$PORT/$NQN/1"
	PLAN=(rxe target-start healthy-first)
	for s in die qp-error short-capsule bad-rkey; do
		PLAN+=("$s" "alive-after-$s" "cli-rw-after-$s" "healthy-after-$s")
	done
	PLAN+=(target-exit)
	setup_rxe
	start_target --ns "ram:$NSBYTES" --nqn "$NQN"
	run healthy-first timeout 60 "$BIN/rdma_fault_client" "$IP" "$PORT" "$NQN" healthy
	for s in die qp-error short-capsule bad-rkey; do
		check "$s" timeout 120 "$BIN/rdma_fault_client" "$IP" "$PORT" "$NQN" "$s"
		sleep 1
		kill -0 "$tpid" 2> /dev/null || fatal "alive-after-$s" "nvmeof-target died during $s"
		ok "alive-after-$s"
		check "cli-rw-after-$s" cli_rw "$u"
		check "healthy-after-$s" timeout 60 "$BIN/rdma_fault_client" "$IP" "$PORT" "$NQN" \
			healthy
	done
	stop_target target-exit
	finish
}

# ---- queues that never send Connect, and Connect QIDs that differ from the CM request's --
preconnect() {
	local u="nvme+rdma://$IP:$PORT/$NQN/1" n
	PLAN=(rxe target-start preconnect-flood alive-after-flood flood-logged flood-stats
	      healthy-after-flood cli-rw-after-flood qid-mismatch alive-after-qid-mismatch
	      healthy-after-qid-mismatch target-exit)
	setup_rxe
	start_target --ns "ram:$NSBYTES" --nqn "$NQN" --max-connecting 8 --connect-timeout 5 \
		--in-capsule 65536 --stats-socket /tmp/nvmeof-stats.sock
	check preconnect-flood timeout 120 "$BIN/rdma_fault_client" "$IP" "$PORT" "$NQN" \
		preconnect-flood 20 8 "$tpid" 2048 15
	kill -0 "$tpid" 2> /dev/null || fatal alive-after-flood "nvmeof-target died during the flood"
	ok alive-after-flood
	n=$(grep -c 'no Connect in time' "$OUT/target.log")
	if [ "$n" -ge 1 ] && grep -q 'refused: 8 connections still connecting' "$OUT/target.log"
	then
		ok flood-logged
	else
		not_ok flood-logged "target log: $n 'no Connect in time', refusals not logged"
	fi
	# the statistics: every accepted queue timed out, the rest refused, nothing left
	if python3 - /tmp/nvmeof-stats.sock << 'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"\n")
buf = b""
while not buf.endswith(b"\n"):
    buf += s.recv(65536)
r = json.loads(buf)["rdma"]
print("rdma statistics:", json.dumps(r))
sys.exit(0 if r["connect_timeouts"] >= 8 and r["rejected"] >= 1 and r["connecting"] == 0
         and r["live"] == 0 and r["registered_bytes"] == 0 else 1)
EOF
	then
		ok flood-stats
	else
		not_ok flood-stats "rdma statistics: connect_timeouts, rejected or leftovers wrong"
	fi
	check healthy-after-flood timeout 60 "$BIN/rdma_fault_client" "$IP" "$PORT" "$NQN" healthy
	check cli-rw-after-flood cli_rw "$u"
	check qid-mismatch timeout 60 "$BIN/rdma_fault_client" "$IP" "$PORT" "$NQN" qid-mismatch
	kill -0 "$tpid" 2> /dev/null ||
		fatal alive-after-qid-mismatch "nvmeof-target died during qid-mismatch"
	ok alive-after-qid-mismatch
	check healthy-after-qid-mismatch timeout 60 "$BIN/rdma_fault_client" "$IP" "$PORT" \
		"$NQN" healthy
	stop_target target-exit
	finish
}

case "$MODE" in
kernel-host) kernel_host ;;
initiator) initiator ;;
fault) fault ;;
preconnect) preconnect ;;
*) echo "unknown mode $MODE" >&2; exit 2 ;;
esac
