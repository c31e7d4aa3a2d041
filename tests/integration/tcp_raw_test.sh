#!/bin/sh
# SPDX-License-Identifier: MIT
# Start nvmeof-target on a free 127.0.0.1 port and drive it with raw NVMe/TCP PDUs:
# ICReq/ICResp, admin Connect, properties, Identify, I/O queue write/read (in-capsule and
# R2T, with and without digests) and malformed PDUs answered with C2HTermReq. Then stop
# the daemon with SIGTERM and expect a clean exit.
set -eu

builddir=${top_builddir:-.}
target=$builddir/target/nvmeof-target
client=$builddir/tests/integration/tcp_raw_client
nqn=nqn.2026-11.io.nvmeof:tcp-raw-test
work=$(mktemp -d)
pid=

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || :
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$target" --listen tcp://127.0.0.1:0 --discovery-port 0 --nqn "$nqn" --ns ram:64M \
	--reactors 2 --no-pin >"$work/log" 2>&1 &
pid=$!

port=
for _ in $(seq 1 100); do
	port=$(sed -n 's/.*listening on tcp:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$work/log" | head -n 1)
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "nvmeof-target did not start:" >&2
	cat "$work/log" >&2
	exit 1
fi

status=0
"$client" "$port" "$nqn" all || status=1

if ! kill -TERM "$pid" 2>/dev/null; then
	echo "nvmeof-target died during the test" >&2
	status=1
fi
rc=0
wait "$pid" || rc=$?
pid=
if [ "$rc" -ne 0 ]; then
	echo "nvmeof-target exited with status $rc" >&2
	status=1
fi
if [ "$status" -ne 0 ]; then
	echo "--- daemon log ---" >&2
	cat "$work/log" >&2
fi
exit $status
