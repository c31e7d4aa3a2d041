#!/bin/bash
# SPDX-License-Identifier: MIT
# One host NQN must not be able to take every --max-connections slot. With
# --max-host-connections 8 (and --max-connections 20), a host gets 8 queues and its next
# Connect fails with Controller Busy (logged, counted as host_conn_refused); another host
# is still served at once. The same limit from the configuration file's "limits" object.
. "$(dirname "$0")/../integration/lib.sh"
it_init
client=$top_builddir/tests/integration/fault_client
nqn=nqn.2026-11.io.nvmeof:host-limit-test
if [ ! -x "$client" ]; then
	echo "$client is missing (build the check programs first)" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi

stats() { # SOCKET
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"stats\n")
print(s.makefile().readline())' "$1"
}

it_start_target --nqn "$nqn" --ns ram:64M --reactors 2 --no-pin --max-connections 20 \
	--max-host-connections 8 --stats-socket "$IT_DIR/stats.sock" || it_finish
timeout 60 "$client" "$IT_PORT" "$nqn" host-limit 8 > "$IT_DIR/limit.out" 2>&1
rc=$?
sed 's/^/#   /' "$IT_DIR/limit.out"
if [ "$rc" = 0 ]; then
	it_ok "one host held to --max-host-connections, another served"
else
	it_not_ok host-limit "exit status $rc"
fi
it_grep "refusal logged" "$IT_LOG" 'refused: 8 queues connected already \(max_host_connections\)'
if command -v python3 > /dev/null; then
	stats "$IT_DIR/stats.sock" > "$IT_DIR/stats.json" 2>&1
	it_grep "refusal counted" "$IT_DIR/stats.json" '"host_conn_refused":1,'
fi
it_stop_target
it_check "no sanitizer report in the daemon log" \
	bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$IT_LOG'"

# limits.max_host_connections in the configuration file
port=$IT_PORT
printf '%s\n' \
	'{"limits": {"max_host_connections": 3}, "hosts": [],' \
	' "ports": [{"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4",' \
	"   \"traddr\": \"127.0.0.1\", \"trsvcid\": \"$port\", \"treq\": \"not specified\"}," \
	"   \"param\": {}, \"subsystems\": [\"$nqn\"], \"referrals\": []}]," \
	" \"subsystems\": [{\"nqn\": \"$nqn\", \"allowed_hosts\": []," \
	'   "attr": {"allow_any_host": "1"},' \
	'   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "ram:64M"}}]}]}' \
	> "$IT_DIR/limits.json"
IT_LOG=$IT_DIR/target-conf.log
"$IT_TARGET_BIN" -c "$IT_DIR/limits.json" --discovery-port 0 --reactors 2 --no-pin \
	> "$IT_LOG" 2>&1 &
IT_PID=$!
for _ in $(seq 100); do
	grep -q "listening on tcp://127.0.0.1:$port" "$IT_LOG" && break
	kill -0 "$IT_PID" 2> /dev/null || break
	sleep 0.1
done
if grep -q "listening on tcp://127.0.0.1:$port" "$IT_LOG"; then
	timeout 60 "$client" "$port" "$nqn" host-limit 3 > "$IT_DIR/limit3.out" 2>&1
	rc=$?
	sed 's/^/#   /' "$IT_DIR/limit3.out"
	if [ "$rc" = 0 ]; then
		it_ok "limits.max_host_connections from the configuration file"
	else
		it_not_ok host-limit-config "exit status $rc"
	fi
	it_stop_target
	it_check "no sanitizer report in the daemon log" \
		bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$IT_LOG'"
else
	it_not_ok target-start-config "nvmeof-target -c limits.json did not start"
	sed 's/^/#   target: /' "$IT_LOG" | tail -n 20
fi
it_finish
