#!/bin/bash
# SPDX-License-Identifier: MIT
#
# libnvmeof rides through a target restart, over NVMe/TCP and over iSCSI: reconnect_client
# writes, reads back and compares blocks of a file-backed namespace while nvmeof-target
# is killed (-9) and restarted on the same ports about 2 s later. The client must resume
# (the controller reconnects, I/O held across the outage completes), report an outage of
# about the restart time, and every block must hold what was last written to it.
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/../require.sh"
TGT=$top_builddir/target/nvmeof-target
CLIENT=$top_builddir/tests/integration/reconnect_client
IQN=iqn.2026-11.io.nvmeof:default
NQN=nqn.2026-11.io.nvmeof:default

for b in "$TGT" "$CLIENT"; do
	[ -x "$b" ] || { echo "ERROR: $b is not built"; exit 99; }
done

TMP=$(mktemp -d /tmp/nvmeof-reconnect.XXXXXX)
TGT_PID=
CLIENT_PID=
FAILS=0
cleanup() {
	for p in $CLIENT_PID $TGT_PID; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

truncate -s 64M "$TMP/ns.img"

logged_port() { # SCHEME
	sed -n "s/.*listening on $1:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$TMP/target.log" |
		head -n 1
}

start_target() { # TCP-PORT ISCSI-PORT
	"$TGT" --ns "$TMP/ns.img" --listen "tcp://127.0.0.1:$1" --listen "iscsi://127.0.0.1:$2" \
		--discovery-port 0 >"$TMP/target.log" 2>&1 &
	TGT_PID=$!
	TPORT= IPORT=
	for _ in $(seq 200); do
		TPORT=$(logged_port tcp)
		IPORT=$(logged_port iscsi)
		[ -n "$TPORT" ] && [ -n "$IPORT" ] && return 0
		if ! kill -0 "$TGT_PID" 2>/dev/null; then
			if grep -q "iscsi:// listeners are not available" "$TMP/target.log"; then
				nv_cannot_run "this nvmeof-target build has no iSCSI listener"
			fi
			echo "nvmeof-target exited:"
			tail -n 20 "$TMP/target.log"
			exit 1
		fi
		sleep 0.05
	done
	echo "nvmeof-target did not report its listeners"
	exit 1
}

start_target 0 0
TCP_PORT=$TPORT
ISCSI_PORT=$IPORT
echo "# target on tcp $TCP_PORT, iscsi $ISCSI_PORT"

# run_case NAME URI
run_case() {
	local name=$1 uri=$2 out=$TMP/$1.out t0 t1 line
	"$CLIENT" "$uri" --secs 9 --blocks 2048 --qd 8 --reconnect-delay 1 >"$out" 2>"$TMP/$name.err" &
	CLIENT_PID=$!
	sleep 2.5
	kill -9 "$TGT_PID"
	wait "$TGT_PID" 2>/dev/null
	t0=$(date +%s%N)
	sleep 2
	start_target "$TCP_PORT" "$ISCSI_PORT"
	t1=$(date +%s%N)
	echo "# $name: target down for $(((t1 - t0) / 1000000)) ms"
	wait "$CLIENT_PID"
	local rc=$?
	CLIENT_PID=
	line=$(cat "$out")
	echo "# $name: $line"
	sed 's/^/#   /' "$TMP/$name.err" | head -n 12
	set -- $line
	# ios N errors E verify_errors V verified_blocks B reconnects R attempts A requeued Q
	# last_outage_ms O max_stall_ms S
	local ios=${2:-0} reconnects=${10:-0} outage=${16:-0} stall=${18:-0}
	if [ "$rc" -ne 0 ]; then
		echo "not ok $name: client exit status $rc"
		FAILS=$((FAILS + 1))
	elif [ "$reconnects" -lt 1 ]; then
		echo "not ok $name: no reconnect reported"
		FAILS=$((FAILS + 1))
	elif [ "$outage" -lt 1500 ] || [ "$outage" -gt 8000 ]; then
		echo "not ok $name: outage $outage ms (the target was down about 2 s)"
		FAILS=$((FAILS + 1))
	elif [ "$ios" -lt 100 ]; then
		echo "not ok $name: only $ios I/Os"
		FAILS=$((FAILS + 1))
	else
		echo "ok $name: resumed after $outage ms outage (longest stall $stall ms), $ios I/Os verified"
	fi
}

run_case tcp "nvme+tcp://127.0.0.1:$TCP_PORT/$NQN/1"
run_case iscsi "iscsi://127.0.0.1:$ISCSI_PORT/$IQN/0"

# nvmeof-bench through the same outage, on both paths: it keeps running, and its result
# (stderr and the JSON) reports the reconnect and how long it went without a connection.
BENCH=$top_builddir/initiator/nvmeof-bench
"$BENCH" --native "nvme+tcp://127.0.0.1:$TCP_PORT/$NQN/1" \
	--scsi "iscsi://127.0.0.1:$ISCSI_PORT/$IQN/0" --rw randwrite --qd 8 --time 8 \
	--warmup 0 --repeat 1 --reconnect-delay 1 --no-progress --json "$TMP/bench.json" \
	>"$TMP/bench.out" 2>"$TMP/bench.err" &
CLIENT_PID=$!
sleep 3
kill -9 "$TGT_PID"
wait "$TGT_PID" 2>/dev/null
sleep 2
start_target "$TCP_PORT" "$ISCSI_PORT"
wait "$CLIENT_PID"
rc=$?
CLIENT_PID=
sed 's/^/#   bench: /' "$TMP/bench.err" | head -n 8
if [ "$rc" -ne 0 ]; then
	echo "not ok bench: exit status $rc"
	FAILS=$((FAILS + 1))
elif grep -q 'reconnect(s), [0-9]* ms without a connection' "$TMP/bench.err" &&
	grep -q '"reconnects":[1-9]' "$TMP/bench.json"; then
	echo "ok bench: ran through the outage and reported it"
else
	echo "not ok bench: no reconnect reported"
	FAILS=$((FAILS + 1))
fi
[ "$FAILS" -eq 0 ]
