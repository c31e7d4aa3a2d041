#!/bin/bash
# SPDX-License-Identifier: MIT
# A host that asks to write and then never sends (all of) the data must not drain the
# reactors' data pools. With the defaults (2 reactors, queue depth 128, MDTS 128 KiB: 2,048
# chunks of 128 KiB per reactor), one host connects 32 I/O queues and sends 128 writes of
# 128 KiB on each, answering every R2T with all but the last 4 KiB. While it holds that,
# a host connected before it must get Identify, a write and a read done within a second,
# and a new host its Connect and verified I/O within a second; once the hoarder has
# closed its sockets, the daemon's descriptors and resident memory must be back within
# 10% of what they were before it came, within 30 s (resident memory within 50% when built
# with AddressSanitizer, whose shadow and allocator keep some of what the hoarder used).
. "$(dirname "$0")/../integration/lib.sh"
it_init
client=$top_builddir/tests/integration/fault_client
nqn=nqn.2026-11.io.nvmeof:hoard-test
if [ ! -x "$client" ]; then
	echo "$client is missing (build the check programs first)" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
ulimit -n 4096 2> /dev/null || :
rss_pct=10
if grep -q __asan_init "$IT_TARGET_BIN" 2> /dev/null ||
	grep -q __asan_init "$top_builddir/target/.libs/nvmeof-target" 2> /dev/null; then
	rss_pct=50
fi

it_start_target --nqn "$nqn" --ns ram:64M --reactors 2 --no-pin \
	--stats-socket "$IT_DIR/stats.sock" || it_finish
timeout 120 "$client" "$IT_PORT" "$nqn" hoard 32 128 "$IT_PID" "$rss_pct" \
	> "$IT_DIR/hoard.out" 2>&1
rc=$?
sed 's/^/#   /' "$IT_DIR/hoard.out"
if [ "$rc" = 0 ]; then
	it_ok "hoarding host: the others served at once, its memory and descriptors given back"
else
	it_not_ok hoard "exit status $rc"
fi
# The waits for a share are counted (nvmeof-ctl stats, metrics).
if command -v python3 > /dev/null; then
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"stats\n")
print(s.makefile().readline())' "$IT_DIR/stats.sock" > "$IT_DIR/stats.json" 2>&1
	it_grep "share waits counted" "$IT_DIR/stats.json" '"share_waits":[1-9]'
fi
it_stop_target
it_check "no sanitizer report in the daemon log" \
	bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$IT_LOG'"
it_finish
