#!/bin/bash
# rbd-gateways.sh - two nvmeof-target gateways exporting one Ceph RBD image under one
# subsystem NQN, and the Linux kernel host (native multipath) in the qemu lab using both.
#
# A one-node cluster (tests/ceph/ceph-cluster.sh, osd_client_watch_timeout 5) holds a
# 256 MiB image. Gateway A listens on 127.0.0.1:PA (portid 1), gateway B on :PB (portid 2);
# the namespace is in ANA group 1, optimized on A's port and non-optimized on B's (group 2,
# for the images B would own, the other way round); cntlids 1-99 on A, 100-199 on B. The
# guest connects through both with one host NQN and checks list-subsys (two paths, their
# ANA states) and that both controllers report the same NGUID and UUID; then it runs fio
# --verify=crc32c passes on the multipath head while this script:
#   1. lets I/O run: it goes through A (optimized) only;
#   2. kill -9s gateway A: I/O moves to B, which takes the image's exclusive lock over from
#      the dead A (the time until B moves I/O is measured: it must be well inside the
#      kernel's 30 s I/O timeout);
#   3. restarts A: its path comes back live and I/O returns to it;
#   4. when fio is done, the guest (host 1) registers and takes a Write Exclusive
#      reservation through its optimized path (A); a second host (our initiator, another
#      host NQN) then writes through gateway B and gets Reservation Conflict, reads, and
#      sees host 1's reservation in B's Reservation Report.
# Per-gateway counters come from each daemon's stats socket. No fio error, no I/O error in
# the guest, both gateways exit cleanly on SIGTERM. Skips (77) without the Ceph packages,
# librbd in the build or the lab, except under CI=true, where that (or a cluster that does
# not start) fails.
. "$(dirname "$0")/lib.sh"

missing=
for t in ceph-mon ceph-mgr ceph-osd ceph rbd python3; do
	command -v $t > /dev/null || missing="$missing $t"
done
grep -q '^#define HAVE_RBD 1' "$top_builddir/config.h" 2> /dev/null ||
	missing="$missing librbd(configure found no librbd-dev/librados-dev)"
[ -z "$missing" ] || ix_cannot_run "missing:$missing"
ix_init

CLUSTER=$top_srcdir/tests/ceph/ceph-cluster.sh
CLI=$top_builddir/initiator/nvmeof
NQN=nqn.2026-11.io.nvmeof:rbd-gateways
IMG=gw-image
H2NQN=nqn.2014-08.org.nvmexpress:uuid:7d1e58c2-52a8-4b8e-9a55-3c1f0f6a9b02
H2ID=7d1e58c2-52a8-4b8e-9a55-3c1f0f6a9b02
PA=$(ix_free_port) && PB=$(ix_free_port) || exit 99
[ "$PA" != "$PB" ] || PB=$((PA + 1))
CDIR=$IX_DIR/c
A_PID=
B_PID=

gw_cleanup() {
	local rc=$?
	for pid in $A_PID $B_PID $(cat "$IX_DIR/a.pid" 2> /dev/null); do
		kill -KILL "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
	done
	A_PID=
	B_PID=
	if [ -d "$CDIR/run" ] && compgen -G "$CDIR/run/*.pid" > /dev/null; then
		"$CLUSTER" stop "$CDIR" 2>&1 | sed 's/^/  cluster: /'
	fi
	(exit "$rc")
	ix_cleanup
}
trap gw_cleanup EXIT

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

T0=$(now)
if ! vars=$("$CLUSTER" start "$CDIR" 2> "$IX_DIR/cluster-start.err"); then
	sed 's/^/  cluster: /' "$IX_DIR/cluster-start.err" | tail -n 30
	ix_cannot_run "the one-node Ceph cluster did not start"
fi
eval "$vars"
ix_ok "cluster-start ($(since "$T0") s)"
RBD() { CEPH_ARGS="--id $NVMEOF_CEPH_ID" timeout 60 rbd -c "$CEPH_CONF" "$@"; }
if RBD create "$NVMEOF_CEPH_POOL/$IMG" --size 256M; then
	ix_ok rbd-create
else
	ix_not_ok rbd-create "rbd create failed"
	ix_finish
fi
SPEC="rbd:$NVMEOF_CEPH_POOL/$IMG:id=$NVMEOF_CEPH_ID:conf=$CEPH_CONF:keyring=$NVMEOF_CEPH_KEYRING"

# gw_config NAME PORTID PORT STATE1 STATE2 CNTLID_MIN CNTLID_MAX
gw_config() {
	cat > "$IX_DIR/$1.json" << JSON
{
  "hosts": [],
  "ports": [
    {"portid": $2, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$3"}, "subsystems": ["$NQN"],
      "ana_groups": [{"grpid": 1, "ana": {"state": "$4"}},
                     {"grpid": 2, "ana": {"state": "$5"}}]}
  ],
  "subsystems": [
    {"nqn": "$NQN", "attr": {"allow_any_host": "1", "serial": "RBDGW1",
       "cntlid_min": "$6", "cntlid_max": "$7"},
     "namespaces": [{"nsid": 1, "enable": 1, "ana_grpid": 1,
       "device": {"path": "$SPEC"}}]}
  ]
}
JSON
}
gw_config a 1 "$PA" optimized non-optimized 1 99
gw_config b 2 "$PB" non-optimized optimized 100 199

# gw_start NAME PORT: start gateway NAME, wait until it listens; sets NAME_PID
gw_start() {
	local name=$1 port=$2 pid
	"$IX_TARGET_BIN" -c "$IX_DIR/$name.json" --discovery-port 0 --log-level info \
		--reactors 2 --control-socket "$IX_DIR/$name.ctl" \
		--stats-socket "$IX_DIR/$name.stats" >> "$IX_DIR/$name.log" 2>&1 9>&- &
	pid=$!
	eval "${name^^}_PID=$pid"
	echo "$pid" > "$IX_DIR/$name.pid"
	for _ in $(seq 600); do
		if ! kill -0 "$pid" 2> /dev/null; then
			ix_not_ok "gateway-$name-start" "exited before listening"
			tail -n 20 "$IX_DIR/$name.log" | sed "s/^/  $name: /"
			eval "${name^^}_PID="
			return 1
		fi
		[ -n "$(ss -Htln "( sport = :$port )" 2> /dev/null)" ] && [ -S "$IX_DIR/$name.stats" ] &&
			{ ix_ok "gateway-$name-start"; return 0; }
		sleep 0.1
	done
	ix_not_ok "gateway-$name-start" "not listening on :$port after 60 s"
	return 1
}
gw_start a "$PA" || ix_finish
gw_start b "$PB" || ix_finish

# io_cmds NAME [write]: read + write (or only write) commands through gateway NAME's port
# (0 when it is down)
io_cmds() {
	local snap

	snap=$("$top_srcdir/tests/stats-snapshot.py" "$IX_DIR/$1.stats") || { echo 0; return; }
	python3 -c '
import json, sys
snap = json.loads(sys.argv[2])
w = sys.argv[1] == "write"
print(sum(p["write_cmds"] + (0 if w else p["read_cmds"]) for p in snap["ports"]))' "${2:-}" "$snap"
}

# window NAME BUSY IDLE: over 6 s gateway BUSY moves I/O and IDLE (if given) none
window() {
	local name=$1 busy=$2 idle=${3:-} b0 i0=0 b1 i1=0
	b0=$(io_cmds "$busy")
	[ -n "$idle" ] && i0=$(io_cmds "$idle")
	sleep 6
	b1=$(io_cmds "$busy")
	[ -n "$idle" ] && i1=$(io_cmds "$idle")
	echo "# $name: gateway $busy +$((b1 - b0)) commands${idle:+, gateway $idle +$((i1 - i0))}"
	if [ $((b1 - b0)) -gt 0 ] && [ $((i1 - i0)) -eq 0 ]; then
		echo "ok $name"
	else
		echo "not ok $name: gateway $busy +$((b1 - b0)), ${idle:-none} +$((i1 - i0))" \
			"commands; expected I/O through $busy only"
	fi
}

# wait_io NAME SECONDS [write]: until gateway NAME moves I/O (writes); prints the seconds
wait_io() {
	local t0 c0 c
	t0=$(now)
	c0=$(io_cmds "$1" "${3:-}")
	for _ in $(seq $(($2 * 5))); do
		c=$(io_cmds "$1" "${3:-}")
		[ "$c" -gt "$c0" ] && { since "$t0"; return 0; }
		sleep 0.2
	done
	return 1
}

# The driver runs beside the guest; its "ok"/"not ok" lines are counted afterwards.
driver() {
	local t
	for _ in $(seq 1500); do
		[ -e "$IX_DIR/fio-running" ] || [ -e "$IX_DIR/host-done" ] && break
		sleep 0.2
	done
	[ -e "$IX_DIR/fio-running" ] || { echo "not ok driver: the guest never started fio"; return; }
	sleep 2
	window io-through-gateway-a a b
	kill -KILL "$A_PID" && echo "ok gateway-a-killed" || echo "not ok gateway-a-killed: kill failed"
	wait "$A_PID" 2> /dev/null
	A_PID=
	rm -f "$IX_DIR/a.pid"
	# Reads go through B at once; a write needs the image's exclusive lock, which B can
	# only break once the OSD dropped the dead A's watch (osd_client_watch_timeout).
	if t=$(wait_io b 60 write); then
		echo "# gateway A kill -9 -> writes through gateway B after $t s (lock taken over)"
		echo "$t" > "$IX_DIR/failover-seconds"
		if awk -v t="$t" 'BEGIN { exit !(t < 20) }'; then
			echo "ok writes-fail-over-to-b-in-${t}s"
		else
			echo "not ok writes-fail-over-to-b: $t s, not well inside the host's 30 s I/O" \
				"timeout"
		fi
	else
		echo "not ok writes-fail-over-to-b: no write through gateway B within 60 s of the kill"
	fi
	window io-through-gateway-b b
	gw_start a "$PA" > "$IX_DIR/restart.out" 2>&1
	cat "$IX_DIR/restart.out"
	if t=$(wait_io a 90); then
		echo "# gateway A restarted -> I/O through it again after $t s"
		echo "ok gateway-a-path-back-in-${t}s"
		sleep 3
		window io-back-on-gateway-a a b
	else
		echo "not ok gateway-a-path-back: no I/O through the restarted gateway A in 90 s"
	fi
	touch "$IX_DIR/host-done"

	# reservations: host 1 (the guest) holds Write Exclusive through A
	for _ in $(seq 600); do
		[ -e "$IX_DIR/resv-held" ] || [ -e "$IX_DIR/guest-finished" ] && break
		sleep 0.5
	done
	if [ ! -e "$IX_DIR/resv-held" ]; then
		echo "not ok resv-held: the guest did not take the reservation"
		touch "$IX_DIR/resv-checked"
		stop_restarted_a
		return
	fi
	local b=nvme+tcp://127.0.0.1:$PB/$NQN/1 out rc
	head -c 512 /dev/zero > "$IX_DIR/zero512"
	out=$("$CLI" write "$b" --lba 0 --blocks 1 -d "$IX_DIR/zero512" --hostnqn "$H2NQN" \
		--hostid "$H2ID" --kato 0 2>&1)
	rc=$?
	echo "# host 2 write through B: status $rc: $out"
	if [ "$rc" = 1 ] && echo "$out" | grep -qi "reservation conflict"; then
		echo "ok host2-write-through-b-reservation-conflict"
	else
		echo "not ok host2-write-through-b-reservation-conflict: exit $rc: $out"
	fi
	if "$CLI" read "$b" --lba 0 --blocks 1 -o "$IX_DIR/r512" --hostnqn "$H2NQN" \
		--hostid "$H2ID" --kato 0 > /dev/null 2>&1; then
		echo "ok host2-read-through-b-allowed"
	else
		echo "not ok host2-read-through-b-allowed: a read under Write Exclusive failed"
	fi
	out=$("$CLI" resv-report "$b" --hostnqn "$H2NQN" --hostid "$H2ID" --kato 0 -o json 2>&1)
	echo "# reservation report through B: $out"
	if echo "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = r.get("rtype") == 1 and r.get("regctl", 0) >= 1
sys.exit(0 if ok else 1)'; then
		echo "ok resv-report-through-b-shows-host1"
	else
		echo "not ok resv-report-through-b-shows-host1: $out"
	fi
	touch "$IX_DIR/resv-checked"
	stop_restarted_a
}

# The restarted gateway A is the driver's child: the driver stops it when told to.
stop_restarted_a() {
	for _ in $(seq 6000); do
		[ -e "$IX_DIR/stop-a" ] && break
		sleep 0.2
	done
	[ -n "$A_PID" ] || return
	IX_TARGET_PID=$A_PID
	ix_stop_target
	rm -f "$IX_DIR/a.pid"
	if [ "$IX_TARGET_STATUS" = 0 ]; then
		echo "ok gateway-a-exit"
	else
		echo "not ok gateway-a-exit: on SIGTERM: exit status $IX_TARGET_STATUS"
	fi
}

driver > "$IX_DIR/driver.out" 2>&1 &
DRIVER_PID=$!
LAB_SMP=2 LAB_TIMEOUT=${LAB_TIMEOUT:-900} LAB_APPEND="nvme_core.multipath=Y ${LAB_APPEND:-}" \
	ix_guest "$top_srcdir/tests/interop/guest-rbd-gateways.sh" 10.0.2.2 "$PA" "$PB" "$NQN"
touch "$IX_DIR/host-done" "$IX_DIR/guest-finished" "$IX_DIR/resv-checked" "$IX_DIR/stop-a"
wait "$DRIVER_PID"
A_PID= # killed by the driver, which also stops the A it restarted
sed 's/^/  driver: /' "$IX_DIR/driver.out"
while IFS= read -r line; do
	case "$line" in
	"ok "*) IX_PASS=$((IX_PASS + 1)) ;;
	"not ok "*) IX_FAIL=$((IX_FAIL + 1)) ;;
	esac
done < "$IX_DIR/driver.out"
ix_guest_results

IX_TARGET_PID=$B_PID
ix_stop_target
B_PID=
if [ "$IX_TARGET_STATUS" = 0 ]; then
	ix_ok gateway-b-exit
else
	ix_not_ok gateway-b-exit "on SIGTERM: exit status $IX_TARGET_STATUS"
fi
for name in a b; do
	IX_TARGET_LOG=$IX_DIR/$name.log
	ix_expect_log "gateway-$name-rados-reservations" 1 "reservations kept in nvmeof_resv\." \
		"the RADOS reservation store attached"
	echo "--- gateway $name log (last 25 lines) ---"
	tail -n 25 "$IX_DIR/$name.log" | sed "s/^/  $name: /"
done
ix_finish
