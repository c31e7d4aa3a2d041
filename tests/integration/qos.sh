#!/bin/bash
# qos.sh - per-namespace QoS under load: one reactor serves two RAM namespaces, the first
# limited to LIMIT IOPS in the config file, the second unlimited. nvmeof-bench runs 4K
# random reads at QD 32 on both at once: the limited one must stay within +-15% of LIMIT
# (the target aims at +-10%; the margin is for a shared machine) and the unlimited one
# reach 3x LIMIT or more. Then a SIGHUP reload doubles the limit, which must hold too.
# The unlimited client runs at lower CPU priority so that, on a small machine, it does not
# starve the limited client of CPU (that would measure the scheduler, not the target).

. "$(dirname "$0")/lib.sh"

BENCH=$top_builddir/initiator/nvmeof-bench
NQN=nqn.2026-11.io.nvmeof:qos
LIMIT=2000

it_init
[ -x "$BENCH" ] || { echo "$IT_NAME: $BENCH is missing" >&2; exit 99; }
command -v python3 > /dev/null || { echo "$IT_NAME: python3 is needed" >&2; exit 77; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
write_config() { # LIMIT
	cat > "$IT_DIR/qos.json" << EOF2
{"hosts": [],
 "ports": [{"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
            "trsvcid": "$port", "treq": "not specified"},
            "param": {}, "subsystems": ["$NQN"], "referrals": []}],
 "subsystems": [{"nqn": "$NQN", "allowed_hosts": [], "attr": {"allow_any_host": "1"},
   "namespaces": [
     {"nsid": 1, "enable": 1, "device": {"path": "ram:64M"}, "qos": {"rw_ios_per_sec": $1}},
     {"nsid": 2, "enable": 1, "device": {"path": "ram:64M"}}]}]}
EOF2
}
write_config $LIMIT
IT_LOG=$IT_DIR/target.log
"$IT_TARGET_BIN" -c "$IT_DIR/qos.json" --discovery-port 0 --reactors 1 > "$IT_LOG" 2>&1 &
IT_PID=$!
for _ in $(seq 100); do
	grep -q "listening on tcp://127.0.0.1:$port" "$IT_LOG" && break
	kill -0 "$IT_PID" 2> /dev/null || break
	sleep 0.05
done
if ! grep -q "listening on tcp://127.0.0.1:$port" "$IT_LOG"; then
	it_not_ok target-start "nvmeof-target -c qos.json did not start"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "target-start (port $port)"

iops() { python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' "$1" 2> /dev/null; }

run_pair() { # NAME LIMIT
	local name=$1 limit=$2 p1 p2 lim unl lo hi
	"$BENCH" --native "nvme+tcp://127.0.0.1:$port/$NQN/1" --rw randread --bs 4k --qd 32 \
		--time 3 --warmup 0.5 --repeat 1 --output-format json --no-progress \
		> "$IT_DIR/$name-1.json" 2> "$IT_DIR/$name-1.err" &
	p1=$!
	nice -n 10 "$BENCH" --native "nvme+tcp://127.0.0.1:$port/$NQN/2" --rw randread --bs 4k \
		--qd 32 --time 3 --warmup 0.5 --repeat 1 --output-format json --no-progress \
		> "$IT_DIR/$name-2.json" 2> "$IT_DIR/$name-2.err" &
	p2=$!
	wait $p1 $p2
	lim=$(iops "$IT_DIR/$name-1.json")
	unl=$(iops "$IT_DIR/$name-2.json")
	it_log "$name: limited namespace $lim IOPS (limit $limit), unlimited namespace $unl IOPS"
	lo=$((limit * 85 / 100))
	hi=$((limit * 115 / 100))
	it_check "$name-limited ($lim IOPS, limit $limit, +-15%)" \
		[ -n "$lim" ] && [ "$lim" -ge $lo ] && [ "$lim" -le $hi ]
	it_check "$name-unlimited ($unl IOPS >= $((3 * limit)))" \
		[ -n "$unl" ] && [ "$unl" -ge $((3 * limit)) ]
}

run_pair config $LIMIT
write_config $((2 * LIMIT))
kill -HUP "$IT_PID"
for _ in $(seq 50); do
	[ "$(grep -c 'QoS limits set' "$IT_LOG")" -ge 2 ] && break
	sleep 0.1
done
it_check reload-applied [ "$(grep -c 'QoS limits set' "$IT_LOG")" -ge 2 ]
run_pair reload $((2 * LIMIT))

it_stop_target
it_finish
