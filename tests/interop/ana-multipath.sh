#!/bin/bash
# ana-multipath.sh - the Linux kernel host's native NVMe multipath against one nvmeof-target
# with two NVMe/TCP ports (portid 1 optimized, portid 2 non-optimized for ANA group 1) and a
# 256 MiB file-backed namespace. The guest connects through both ports with one host NQN,
# checks that list-subsys shows both paths and the kernel sees both ANA states, then runs
# fio --verify=crc32c on the multipath device while this script, through nvmeof-ctl:
#   1. lets I/O run: it goes through port 1 (optimized) only;
#   2. makes port 1 inaccessible and port 2 optimized: I/O moves to port 2;
#   3. puts port 1 through change back to optimized: I/O moves back;
#   4. removes port 1 altogether: I/O moves to port 2 again.
# Each step is checked on the per-port command counters of the stats socket. No fio error,
# no I/O error in the guest's kernel log, clean target shutdown.
. "$(dirname "$0")/lib.sh"
ix_init
command -v python3 > /dev/null || ix_cannot_run "python3 missing"

CTL=$top_builddir/target/nvmeof-ctl
P1=$(ix_free_port) && P2=$(ix_free_port) || exit 99
[ "$P1" != "$P2" ] || P2=$((P1 + 1))
SOCK=$IX_DIR/ctl.sock
STATS=$IX_DIR/stats.sock
NQN=nqn.2026-11.io.nvmeof:ana-multipath
truncate -s "$IX_NSBYTES" "$IX_DIR/ns.img"
cat > "$IX_DIR/config.json" << JSON
{
  "hosts": [],
  "ports": [
    {"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P1"}, "subsystems": ["$NQN"],
      "ana_groups": [{"grpid": 1, "ana": {"state": "optimized"}}]},
    {"portid": 2, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P2"}, "subsystems": ["$NQN"],
      "ana_groups": [{"grpid": 1, "ana": {"state": "non-optimized"}}]}
  ],
  "subsystems": [
    {"nqn": "$NQN", "attr": {"allow_any_host": "1", "serial": "ANAMP1"},
     "namespaces": [{"nsid": 1, "enable": 1, "ana_grpid": 1,
       "device": {"path": "$IX_DIR/ns.img"}}]}
  ]
}
JSON

IX_TARGET_LOG=$IX_DIR/target.log
ix_log "starting nvmeof-target on 127.0.0.1:$P1 and :$P2"
"$IX_TARGET_BIN" -c "$IX_DIR/config.json" --discovery-port 0 --log-level info --control-socket "$SOCK" \
	--stats-socket "$STATS" --state-dir "$IX_DIR/state" > "$IX_TARGET_LOG" 2>&1 9>&- &
IX_TARGET_PID=$!
for _ in $(seq 200); do
	[ -n "$(ss -Htln "( sport = :$P2 )" 2> /dev/null)" ] && [ -S "$STATS" ] && break
	kill -0 "$IX_TARGET_PID" 2> /dev/null || break
	sleep 0.1
done
if [ -z "$(ss -Htln "( sport = :$P1 )" 2> /dev/null)" ]; then
	ix_not_ok target-start "not listening on :$P1"
	cat "$IX_TARGET_LOG"
	ix_finish
fi
ix_ok target-start

# port_cmds PORTID: read+write commands through that port's live connections
port_cmds() {
	"$top_srcdir/tests/stats-snapshot.py" "$STATS" | python3 -c '
import json, sys
snap = json.load(sys.stdin)
for p in snap["ports"]:
    if p["portid"] == int(sys.argv[1]):
        print(p["read_cmds"] + p["write_cmds"])
        break
else:
    print(0)' "$1"
}
ctl() { "$CTL" -s "$SOCK" "$@"; }

# window NAME BUSY IDLE: over 6 s, port BUSY moves I/O and port IDLE does not
window() {
	local name=$1 busy=$2 idle=$3 b0 i0 b1 i1
	sleep 2 # let the host notice the change and requeue
	b0=$(port_cmds "$busy") i0=$(port_cmds "$idle")
	sleep 6
	b1=$(port_cmds "$busy") i1=$(port_cmds "$idle")
	ix_log "$name: port $busy +$((b1 - b0)) commands, port $idle +$((i1 - i0))"
	if [ $((b1 - b0)) -gt 0 ] && [ $((i1 - i0)) -eq 0 ]; then
		ix_ok "$name"
	else
		ix_not_ok "$name" "port $busy +$((b1 - b0)), port $idle +$((i1 - i0)) commands;" \
			"expected I/O on port $busy only"
	fi
}

# The driver: waits for the guest's fio, flips ANA states and closes port 1, then tells
# the guest to stop.
driver() {
	for _ in $(seq 900); do
		[ -e "$IX_DIR/fio-running" ] || [ -e "$IX_DIR/host-done" ] && break
		sleep 0.2
	done
	[ -e "$IX_DIR/fio-running" ] || { ix_not_ok driver "the guest never started fio"; return; }
	ctl ana list
	window io-on-optimized-port 1 2
	ctl ana set "$NQN" 2 1 optimized && ctl ana set "$NQN" 1 1 inaccessible &&
		ix_ok ana-set-inaccessible || ix_not_ok ana-set-inaccessible "nvmeof-ctl failed"
	ctl ana list
	window io-moves-to-port-2 2 1
	ctl ana set "$NQN" 1 1 change && ctl ana set "$NQN" 1 1 optimized &&
		ctl ana set "$NQN" 2 1 non-optimized && ix_ok ana-set-back ||
		ix_not_ok ana-set-back "nvmeof-ctl failed"
	window io-moves-back-to-port-1 1 2
	ctl listener remove "$NQN" "tcp://127.0.0.1:$P1" && ix_ok port-1-removed ||
		ix_not_ok port-1-removed "nvmeof-ctl listener remove failed"
	window io-after-port-1-closed 2 1
	ctl ana list
	touch "$IX_DIR/host-done"
}

# The driver's checks go to a file (it runs beside the guest), counted afterwards.
driver > "$IX_DIR/driver.out" 2>&1 &
DRIVER_PID=$!
LAB_SMP=2 LAB_TIMEOUT=300 LAB_APPEND="nvme_core.multipath=Y ${LAB_APPEND:-}" ix_guest "$top_srcdir/tests/interop/guest-ana-multipath.sh" \
	10.0.2.2 "$P1" "$P2" "$NQN"
touch "$IX_DIR/host-done"
wait "$DRIVER_PID"
sed 's/^/  driver: /' "$IX_DIR/driver.out"
while IFS= read -r line; do
	case "$line" in
	"ok "*) IX_PASS=$((IX_PASS + 1)) ;;
	"not ok "*) IX_FAIL=$((IX_FAIL + 1)) ;;
	esac
done < "$IX_DIR/driver.out"
ix_guest_results
ix_expect_log ana-change-logged 3 'ANA group 1: ' "state changes in the target log"
ix_stop_target
if [ "$IX_TARGET_STATUS" = 0 ]; then
	ix_ok target-exit
else
	ix_not_ok target-exit "nvmeof-target on SIGTERM: exit status $IX_TARGET_STATUS"
fi
echo "--- target log (last 40 lines) ---"
tail -n 40 "$IX_TARGET_LOG" | sed 's/^/  target: /'
ix_finish
