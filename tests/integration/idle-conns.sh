#!/bin/sh
# SPDX-License-Identifier: MIT
# 10,000 idle NVMe/TCP connections (2,500 hosts: an enabled admin queue and three I/O
# queues of 128 entries each, nothing in flight) against nvmeof-target on a free
# 127.0.0.1 port: the daemon's resident memory with all of them open must stay under
# IDLE_RSS_MIB (default 512 MiB; 2048 MiB when built with AddressSanitizer), and a fresh
# host must still connect and do verified I/O at once. IDLE_CONNS changes the count.
set -u

builddir=${top_builddir:-.}
target=$builddir/target/nvmeof-target
client=$builddir/tests/integration/idle_conns
nqn=nqn.2026-11.io.nvmeof:idle-test
work=$(mktemp -d)
pid=
nconns=${IDLE_CONNS:-10000}

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || :
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Descriptors on both ends: one per connection in each process.
ulimit -n $((nconns + 256)) 2>/dev/null || ulimit -n "$(ulimit -H -n)" 2>/dev/null || :
fds=$(ulimit -n)
if [ "$fds" != unlimited ] && [ "$fds" -lt $((nconns + 256)) ]; then
	echo "only $fds file descriptors: running $((fds - 256)) connections instead of $nconns"
	nconns=$((fds - 256))
fi

asan=no
if grep -q __asan_init "$target" 2>/dev/null || grep -q __asan_init "$builddir/target/.libs/nvmeof-target" 2>/dev/null; then
	asan=yes
fi
rss_mib=${IDLE_RSS_MIB:-512}
[ "$asan" = yes ] && rss_mib=${IDLE_RSS_MIB:-2048}

log=$work/log
# every connection is from the client's one host NQN: lift the per-host limit to match
"$target" --listen tcp://127.0.0.1:0 --discovery-port 0 --nqn "$nqn" --ns ram:64M \
	--reactors 2 --no-pin --no-control-socket --state-dir "$work" \
	--max-connections $((nconns + 64)) --max-host-connections $((nconns + 64)) \
	--connect-timeout 0 >"$log" 2>&1 &
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

status=0
echo "$nconns idle connections, VmRSS limit $rss_mib MiB (AddressSanitizer: $asan)"
"$client" "$port" "$nqn" "$nconns" "$pid" "$rss_mib" || status=1
kill -0 "$pid" 2>/dev/null || { echo "FAIL: nvmeof-target died" >&2; status=1; }
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
if [ "$rc" -ne 0 ]; then
	echo "FAIL: nvmeof-target exited with status $rc after SIGTERM" >&2
	status=1
fi
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$log"; then
	echo "FAIL: sanitizer report in the daemon log" >&2
	status=1
fi
if [ "$status" -ne 0 ]; then
	echo "--- daemon log (last 40 lines) ---" >&2
	tail -n 40 "$log" >&2
fi
exit $status
