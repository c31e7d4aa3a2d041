#!/bin/bash
# qos.sh - per-namespace QoS under load: one reactor serves two RAM namespaces, the first
# limited to LIMIT IOPS in the config file, the second unlimited. nvmeof-bench runs 4K
# random reads at QD 32 on both at once: the limited one must stay within +-15% of LIMIT
# (the target aims at +-10%; the margin is for a shared machine) and the unlimited one
# reach 3x LIMIT or more. Then a SIGHUP reload doubles the limit, which must hold too.
# The unlimited client runs at lower CPU priority so that, on a small machine, it does not
# starve the limited client of CPU (that would measure the scheduler, not the target).
# Then per-host QoS: nvmeof-ctl qos set limits one host (by host NQN) on the unlimited
# namespace to HOST_LIMIT IOPS while a second host on the same namespace is unlimited;
# the limited host must stay within +-10% of HOST_LIMIT and the other reach 3x; the limit
# shows in qos get and in a saved configuration, and qos clear lifts it.

. "$(dirname "$0")/lib.sh"

BENCH=$top_builddir/initiator/nvmeof-bench
NQN=nqn.2026-11.io.nvmeof:qos
LIMIT=2000
HOST_LIMIT=1500
HOST_A=nqn.2014-08.org.nvmeof.test:qos-host-a
HOST_B=nqn.2014-08.org.nvmeof.test:qos-host-b
CTL=$top_builddir/target/nvmeof-ctl
SOCK=$IT_DIR/ctl.sock

it_init
[ -x "$BENCH" ] || { echo "$IT_NAME: $BENCH is missing" >&2; exit 99; }
nv_require python3

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
"$IT_TARGET_BIN" -c "$IT_DIR/qos.json" --discovery-port 0 --reactors 1 \
	--control-socket "$SOCK" > "$IT_LOG" 2>&1 &
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

# in_range N LO HI: N is a number within [LO, HI]. A limit must hold (at most +10%); how
# close below it a host gets depends on how soon a loaded machine schedules the bench to
# send the next command, so the floor is looser (-25%). The log keeps the measured rates.
in_range() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

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
	lo=$((limit * 75 / 100))
	hi=$((limit * 110 / 100))
	it_check "$name-limited ($lim IOPS, limit $limit: at most +10%, at least -25%)" \
		in_range "$lim" $lo $hi
	it_check "$name-unlimited ($unl IOPS >= $((3 * limit)))" in_range "$unl" $((3 * limit)) 999999999
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

# ---- per host: one host limited on namespace 2, another host on it unlimited
ctl() { "$CTL" -s "$SOCK" "$@" > "$IT_DIR/ctl.out" 2> "$IT_DIR/ctl.err"; }
it_check host-qos-set ctl qos set "$NQN" 2 --host "$HOST_A" --rw-ios $HOST_LIMIT
it_check host-qos-get ctl qos get "$NQN" 2
it_check host-qos-get-shows grep -q "host $HOST_A: rw_ios_per_sec $HOST_LIMIT" "$IT_DIR/ctl.out"
ctl qos set "$NQN" 2 --rw-ios abc
it_check host-qos-bad-value [ $? = 2 ]
ctl qos set "$NQN" 9 --host "$HOST_A" --rw-ios 10
it_check host-qos-no-such-ns [ $? = 1 ]
it_check host-qos-no-such-ns-msg grep -q 'no namespace 9' "$IT_DIR/ctl.err"
"$BENCH" --native "nvme+tcp://127.0.0.1:$port/$NQN/2" --hostnqn "$HOST_A" --rw randread --bs 4k \
	--qd 32 --time 3 --warmup 0.5 --repeat 1 --output-format json --no-progress \
	> "$IT_DIR/host-a.json" 2> "$IT_DIR/host-a.err" &
p1=$!
nice -n 10 "$BENCH" --native "nvme+tcp://127.0.0.1:$port/$NQN/2" --hostnqn "$HOST_B" \
	--rw randread --bs 4k --qd 32 --time 3 --warmup 0.5 --repeat 1 --output-format json \
	--no-progress > "$IT_DIR/host-b.json" 2> "$IT_DIR/host-b.err" &
p2=$!
wait $p1 $p2
a=$(iops "$IT_DIR/host-a.json")
b=$(iops "$IT_DIR/host-b.json")
it_log "per host: host A $a IOPS (limit $HOST_LIMIT), host B $b IOPS (unlimited), same namespace"
it_check "host-limited ($a IOPS, limit $HOST_LIMIT: at most +10%, at least -25%)" \
	in_range "$a" $((HOST_LIMIT * 75 / 100)) $((HOST_LIMIT * 110 / 100))
it_check "host-unlimited ($b IOPS >= $((3 * HOST_LIMIT)))" in_range "$b" $((3 * HOST_LIMIT)) 999999999
it_check host-qos-save ctl save "$IT_DIR/saved.json"
it_check host-qos-saved python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ns = [n for n in d["subsystems"][0]["namespaces"] if n["nsid"] == 2][0]
sys.exit(0 if ns["qos"]["hosts"] == [{"host": sys.argv[2], "rw_ios_per_sec": int(sys.argv[3])}] else 1)' \
	"$IT_DIR/saved.json" "$HOST_A" $HOST_LIMIT
it_check host-qos-clear ctl qos clear "$NQN" 2 --host "$HOST_A"
ctl qos get "$NQN" 2 -o json
it_check host-qos-cleared ctl -o json qos get "$NQN" 2
it_check host-qos-none python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["hosts"] == [] else 1)' "$IT_DIR/ctl.out"

it_stop_target
it_finish
