#!/bin/bash
# tcp-zerocopy.sh - MSG_ZEROCOPY read data end to end: nvmeof-target on 127.0.0.1 with
# --tcp-zerocopy-min 512, so every read goes zero-copy. Verified reads (4K, 64K and 128K,
# QD 32 and QD 1) must return the data written; the statistics must show zero-copy sends,
# as many confirmations, and (on loopback) copies counted. Then hosts vanish with reads in
# flight (killed initiators) and break in the middle of transfers or stop reading
# (fault_client), the daemon must keep serving verified I/O, every zero-copy send must end
# up confirmed, and it must exit cleanly on SIGTERM with nothing from the sanitizers. With
# the default (off) no send goes zero-copy.

. "$(dirname "$0")/lib.sh"

BENCH=$top_builddir/initiator/nvmeof-bench
FAULT=$top_builddir/tests/integration/fault_client
NQN=nqn.2026-11.io.nvmeof:zc-test

it_init
for bin in "$BENCH" "$FAULT"; do
	if [ ! -x "$bin" ]; then
		echo "$IT_NAME: $bin is missing (build first)" >&2
		exit 99
	fi
done
nv_require python3

sock=$IT_DIR/stats.sock

# zc_counters: "SENDS COMPLETIONS COPIED" from the target's statistics socket
zc_counters() {
	"$top_srcdir/tests/stats-snapshot.py" "$sock" | python3 -c '
import json, sys
t = json.load(sys.stdin)["tcp"]
print(t["zerocopy_sends"], t["zerocopy_completions"], t["zerocopy_copied"])'
}

# zc_settled: wait (bounded) until every zero-copy send is confirmed; sets sends/done/copied
zc_settled() {
	local i
	for i in $(seq 150); do
		read -r sends done copied < <(zc_counters)
		[ -n "$sends" ] && [ "$sends" = "$done" ] && return 0
		sleep 0.1
	done
	return 1
}

# verified NAME BENCH-ARGS... : nvmeof-bench --verify, no errors, no verify errors
verified() {
	local name=$1
	shift
	"$BENCH" --native "nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" --time 0.4 --warmup 0.1 \
		--repeat 1 --verify --size 16M --json "$IT_DIR/$name.json" "$@" \
		> "$IT_DIR/$name.out" 2> "$IT_DIR/$name.err"
	local rc=$?
	if [ $rc != 0 ]; then
		it_not_ok "$name" "nvmeof-bench exit status $rc"
		sed 's/^/#   bench: /' "$IT_DIR/$name.err" | tail -n 10
		return
	fi
	if python3 - "$IT_DIR/$name.json" << 'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
bad = 0
for c in d["cells"]:
    r = c["native"]
    if not r.get("ran") or r.get("error"):
        print("#   %s: did not run: %s" % (c["label"], r.get("error")))
        bad += 1
        continue
    for s in r["samples"]:
        if s["errors"] or s["verify_errors"] or not s["ios"]:
            print("#   %s: %d I/Os, %d errors, %d verify errors"
                  % (c["label"], s["ios"], s["errors"], s["verify_errors"]))
            bad += 1
sys.exit(1 if bad else 0)
EOF
		it_ok "$name"
	else
		it_not_ok "$name" "errors in the verified I/O"
	fi
}

it_start_target --nqn "$NQN" --ns ram:64M --reactors 2 --no-pin --no-control-socket \
	--tcp-zerocopy-min 512 --stats-socket "$sock" || exit 1

verified verify-qd32 --rw randread --bs 4k,64k,128k --qd 32
verified verify-qd1 --rw read --bs 64k --qd 1
if zc_settled; then
	it_ok "zc-confirmed ($sends sends, $copied copied)"
else
	it_not_ok zc-confirmed "sends $sends, confirmed $done"
fi
it_check zc-sends-moved test "${sends:-0}" -gt 0
it_check zc-copied-counted test "${copied:-0}" -gt 0 -a "${copied:-0}" -le "${done:-0}"

# Hosts that vanish with reads in flight: their confirmations arrive after the close.
for i in 1 2 3 4; do
	"$BENCH" --native "nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" --rw randread --bs 128k \
		--qd 32 --time 10 --warmup 0 --repeat 1 --size 16M \
		> /dev/null 2>&1 &
	bpid=$!
	sleep 1
	kill -KILL "$bpid" 2> /dev/null
	wait "$bpid" 2> /dev/null
done
it_check killed-hosts-target-alive kill -0 "$IT_PID"
for s in mid-pdu mid-transfer no-read healthy; do
	it_check "fault-$s" "$FAULT" "$IT_PORT" "$NQN" "$s"
done
it_check faults-target-alive kill -0 "$IT_PID"
before=$sends
verified verify-after-faults --rw randread --bs 64k,128k --qd 32
if zc_settled; then
	it_ok "zc-all-confirmed ($sends sends)"
else
	it_not_ok zc-all-confirmed "sends $sends, confirmed $done: buffers kept for ever"
fi
it_check zc-sends-after-faults test "${sends:-0}" -gt "${before:-0}"

# A host killed right before SIGTERM: the daemon still exits cleanly.
"$BENCH" --native "nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" --rw randread --bs 128k --qd 32 \
	--time 10 --warmup 0 --repeat 1 --size 16M > /dev/null 2>&1 &
bpid=$!
sleep 1
kill -KILL "$bpid" 2> /dev/null
wait "$bpid" 2> /dev/null
it_stop_target
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG"; then
	it_not_ok sanitizers "a sanitizer report in the daemon log"
	grep -E -A20 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG" | sed 's/^/#   /' |
		head -n 40
else
	it_ok sanitizers
fi

# The default: off.
it_start_target --nqn "$NQN" --ns ram:16M --reactors 1 --no-control-socket \
	--stats-socket "$sock" || exit 1
verified verify-off --rw randread --bs 64k --qd 32
read -r sends done copied < <(zc_counters)
it_check zc-off-by-default test "${sends:-1}" = 0
it_stop_target

it_finish
