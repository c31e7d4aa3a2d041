#!/bin/bash
# disc-notify.sh - discovery log change notices reach every discovery controller. One
# host holds 64 discovery controllers (the old limit of controllers notified per change),
# then another host connects a discovery controller, enables the change notice and waits
# with an Asynchronous Event Request; a reload that adds a referral must complete that
# AER within seconds.
. "$(dirname "$0")/../integration/lib.sh"
it_init
RAW=$top_builddir/tests/integration/tcp_raw_client
NQN=nqn.2026-11.io.nvmeof:sec-disc
HOLD=${DISC_HOLD:-64}
for t in python3 "$RAW"; do
	if ! command -v "$t" > /dev/null; then
		echo "# $t is missing"
		[ "${CI:-}" = true ] && exit 1
		exit 77
	fi
done
freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
conf() { # REFERRALS-JSON
	cat > "$IT_DIR/disc.json" << JSON
{ "ports": [ { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P1" }, "subsystems": [ "$NQN" ], "referrals": [ $1 ] } ],
  "subsystems": [ { "nqn": "$NQN", "attr": { "allow_any_host": "1" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } } ] } ] }
JSON
}
for attempt in 1 2 3 4 5; do
	P1=$(freeport)
	conf ""
	IT_LOG=$IT_DIR/target.log
	"$IT_TARGET_BIN" -c "$IT_DIR/disc.json" --discovery-port 0 --no-control-socket \
		> "$IT_LOG" 2>&1 &
	IT_PID=$!
	up=
	for _ in $(seq 200); do
		grep -q "listening on tcp://127.0.0.1:$P1" "$IT_LOG" && { up=1; break; }
		kill -0 "$IT_PID" 2> /dev/null || break
		sleep 0.05
	done
	[ -n "$up" ] && break
	kill -KILL "$IT_PID" 2> /dev/null
	wait "$IT_PID" 2> /dev/null
	IT_PID=
	grep -q 'Address already in use' "$IT_LOG" || break
done
if [ -z "$up" ]; then
	it_not_ok target-start "nvmeof-target -c did not start listening"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "target started on $P1"

TCP_RAW_DISC_HOLD=$HOLD TCP_RAW_WAIT_S=10 \
	TCP_RAW_HOSTNQN=nqn.2014-08.org.nvmeof.test:disc-victim \
	timeout 60 "$RAW" "$P1" nqn.2014-08.org.nvmexpress.discovery disc-aer \
	> "$IT_DIR/raw.out" 2> "$IT_DIR/raw.err" &
RAW_PID=$!
for _ in $(seq 400); do
	grep -q '^ready' "$IT_DIR/raw.out" && break
	kill -0 "$RAW_PID" 2> /dev/null || break
	sleep 0.05
done
it_grep "$HOLD discovery controllers held by one host, the victim's AER outstanding" \
	"$IT_DIR/raw.out" '^ready'
conf '{ "name": "r1", "enable": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4",
      "traddr": "192.0.2.1", "trsvcid": "8009", "portid": 9 } }'
kill -HUP "$IT_PID"
t0=$(date +%s.%N)
wait "$RAW_PID"
rc=$?
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if [ "$rc" = 0 ] && grep -q '^AER completed' "$IT_DIR/raw.out"; then
	it_ok "the victim's AER completed $t s after the change: $(grep '^AER' "$IT_DIR/raw.out")"
else
	it_not_ok victim-aer "exit $rc after $t s:"
	sed 's/^/#   /' "$IT_DIR/raw.out" "$IT_DIR/raw.err" | head -n 10
fi
it_grep "the reload was applied" "$IT_LOG" 'reloaded'
it_stop_target
it_finish
