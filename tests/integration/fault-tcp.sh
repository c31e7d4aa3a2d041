#!/bin/sh
# SPDX-License-Identifier: MIT
# Fault injection against nvmeof-target on a free 127.0.0.1 port: hosts that disconnect
# mid-PDU and mid-transfer, bad header digests, PDU lengths beyond what was negotiated,
# R2T abuse, H2CData for no command and before its R2T, a host that stops reading (backpressure, then an SQ
# overrun), an idle admin queue past KATO, and 1,000 idle connections (the daemon's
# resident memory must stay under FAULT_RSS_MIB, default 256 MiB; 1024 MiB when built
# with AddressSanitizer). After each case the daemon must still be up and serve a healthy
# host (verified writes and reads); at the end it must exit cleanly on SIGTERM with
# nothing reported by the sanitizers. A second daemon with --max-connections 8, and a
# third with "limits": {"max_connections": 8} in its configuration file, must refuse
# the ninth connection and keep serving.
set -u

builddir=${top_builddir:-.}
target=$builddir/target/nvmeof-target
client=$builddir/tests/integration/fault_client
nqn=nqn.2026-11.io.nvmeof:fault-test
work=$(mktemp -d)
pid=
nconns=${FAULT_CONNS:-1000}

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || :
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# 1,000 connections need descriptors on both ends.
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -H -n)" 2>/dev/null || :
fds=$(ulimit -n)
if [ "$fds" != unlimited ] && [ "$fds" -lt $((nconns + 64)) ]; then
	echo "only $fds file descriptors: running $((fds - 64)) connections instead of $nconns"
	nconns=$((fds - 64))
fi

asan=no
if grep -q __asan_init "$target" 2>/dev/null || grep -q __asan_init "$builddir/target/.libs/nvmeof-target" 2>/dev/null; then
	asan=yes
fi
rss_mib=${FAULT_RSS_MIB:-256}
[ "$asan" = yes ] && rss_mib=${FAULT_RSS_MIB:-1024}

start() { # LOG ARGS...
	log=$1
	shift
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$target" --listen tcp://127.0.0.1:0 \
		--discovery-port 0 --nqn "$nqn" --ns ram:64M --reactors 2 --no-pin "$@" \
		>"$log" 2>&1 &
	pid=$!
	port=
	for _ in $(seq 1 100); do
		port=$(sed -n 's/.*listening on tcp:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log" | head -n 1)
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		echo "nvmeof-target did not start:" >&2
		cat "$log" >&2
		exit 1
	fi
}

stop() { # LOG
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	pid=
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: nvmeof-target exited with status $rc after SIGTERM" >&2
		status=1
	fi
	if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$1"; then
		echo "FAIL: sanitizer report in the daemon log" >&2
		status=1
	fi
}

status=0
# no connect deadline here: the 1,000-connection memory check keeps its sockets idle after ICReq
start "$work/log" --connect-timeout 0
for s in mid-pdu mid-transfer bad-hdgst big-plen r2t-abuse h2c-no-cmd h2c-early no-read kato; do
	"$client" "$port" "$nqn" "$s" || status=1
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: nvmeof-target died during '$s'" >&2
		status=1
		break
	fi
done
grep -q 'PDU sequence error' "$work/log" || {
	echo "FAIL: no SQ overrun (PDU sequence error) logged for the host that did not read" >&2
	status=1
}
if kill -0 "$pid" 2>/dev/null; then
	echo "$nconns connections, VmRSS limit $rss_mib MiB (AddressSanitizer: $asan)"
	"$client" "$port" "$nqn" conns "$nconns" "$pid" "$rss_mib" || status=1
	sleep 1
	"$client" "$port" "$nqn" healthy || status=1
	stop "$work/log"
fi
if [ "$status" -ne 0 ]; then
	echo "--- daemon log (last 60 lines) ---" >&2
	tail -n 60 "$work/log" >&2
fi

start "$work/log2" --max-connections 8 --connect-timeout 2
"$client" "$port" "$nqn" limit 8 || status=1
# 1,000 sockets that never send ICReq take connecting slots, not the 8 established ones,
# and are closed at the 2 s deadline.
"$client" "$port" "$nqn" silent 1000 2 || status=1
grep -q 'refused' "$work/log2" || {
	echo "FAIL: no log line for the refused connection" >&2
	status=1
}
stop "$work/log2"

# The same limit from the configuration file's "limits" object, on the port just freed.
cport=$port
printf '%s\n' \
	'{"limits": {"max_connections": 8, "max_queue_depth": 64}, "hosts": [],' \
	' "ports": [{"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4",' \
	"   \"traddr\": \"127.0.0.1\", \"trsvcid\": \"$cport\", \"treq\": \"not specified\"}," \
	"   \"param\": {}, \"subsystems\": [\"$nqn\"], \"referrals\": []}]," \
	" \"subsystems\": [{\"nqn\": \"$nqn\", \"allowed_hosts\": []," \
	'   "attr": {"allow_any_host": "1"},' \
	'   "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "ram:64M"}}]}]}' \
	>"$work/limits.json"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$target" -c "$work/limits.json" --discovery-port 0 --reactors 2 \
	--no-pin >"$work/log3" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	grep -q "listening on tcp://127.0.0.1:$cport" "$work/log3" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if grep -q "listening on tcp://127.0.0.1:$cport" "$work/log3"; then
	"$client" "$cport" "$nqn" limit 8 || status=1
	stop "$work/log3"
else
	echo "FAIL: nvmeof-target with limits.json did not start:" >&2
	cat "$work/log3" >&2
	status=1
fi
[ "$status" -ne 0 ] && tail -n 30 "$work/log2" "$work/log3" >&2
exit $status
