#!/bin/bash
# bench-queues.sh - nvmeof-bench --jobs 2 --queues 2 against a real nvmeof-target with two
# reactors, over NVMe/TCP and iSCSI (free ports on 127.0.0.1): every run's JSON sample
# must list the four queue pairs (job 0 and 1, queue 0 and 1) with I/O on each, their
# I/Os must add up to the run's, the target's two reactors must be listed with CPU time and
# the path's I/O, adding up to the target's own count (give or take the commands in
# flight); the normal output must show the per-queue line; and bad --queues values are
# usage errors (exit status 2).

. "$(dirname "$0")/lib.sh"

BENCH=$top_builddir/initiator/nvmeof-bench
NQN=nqn.2026-11.io.nvmeof:default
IQN=iqn.2026-11.io.nvmeof:default

it_init
if [ ! -x "$BENCH" ]; then
	echo "$IT_NAME: $BENCH is missing (build first)" >&2
	exit 99
fi
nv_require python3

# usage errors first: no target needed
for bad in 0 65 x ""; do
	"$BENCH" --native "nvme+tcp://127.0.0.1:1/$NQN" --queues "$bad" \
		> /dev/null 2> "$IT_DIR/usage.err"
	rc=$?
	if [ $rc = 2 ] && grep -q -- "--queues: bad value '$bad'" "$IT_DIR/usage.err"; then
		it_ok "usage-queues-'$bad'"
	else
		it_not_ok "usage-queues-'$bad'" "exit $rc: $(head -n 1 "$IT_DIR/usage.err")"
	fi
done
"$BENCH" --native "nvme+tcp://127.0.0.1:1/$NQN" --jobs 9 --queues 8 \
	> /dev/null 2> "$IT_DIR/usage.err"
rc=$?
if [ $rc = 2 ] && grep -q "at most 64 queue pairs" "$IT_DIR/usage.err"; then
	it_ok usage-jobs-x-queues
else
	it_not_ok usage-jobs-x-queues "exit $rc: $(head -n 1 "$IT_DIR/usage.err")"
fi
it_check help-queues sh -c "'$BENCH' --help | grep -q -- '--queues M'"

sock=$IT_DIR/stats.sock
it_start_target --listen iscsi://127.0.0.1:0 --ns ram:64M --reactors 2 --in-capsule 65536 \
	--stats-socket "$sock" || exit 1
iport=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" |
	head -n 1)
if [ -z "$iport" ]; then
	it_not_ok iscsi-listener "no 'listening on iscsi://127.0.0.1:PORT' line from the target"
	sed 's/^/#   target: /' "$IT_LOG"
fi

it_log "nvmeof-bench --jobs 2 --queues 2 over nvme+tcp port $IT_PORT and iscsi ${iport:-none}"
"$BENCH" --no-progress --native "nvme+tcp://127.0.0.1:$IT_PORT/$NQN" \
	--scsi "iscsi://127.0.0.1:${iport:-3260}/$IQN/0" \
	--rw randread --bs 4k --qd 4 --jobs 2 --queues 2 --time 0.3 --warmup 0.1 --repeat 2 \
	--target-stats "$sock" --json "$IT_DIR/bench.json" \
	> "$IT_DIR/bench.out" 2> "$IT_DIR/bench.err"
rc=$?
sed 's/^/#   bench: /' "$IT_DIR/bench.err"
if [ $rc = 0 ]; then
	it_ok bench-exit
else
	it_not_ok bench-exit "nvmeof-bench exit status $rc"
	sed 's/^/#   bench: /' "$IT_DIR/bench.out" | head -n 20
fi
it_check bench-runs-line grep -q 'runs    2 jobs x 2 queue pairs' "$IT_DIR/bench.out"
it_check bench-queue-line grep -q 'queues j0q0 .* j0q1 .* j1q0 .* j1q1 .* IOPS' \
	"$IT_DIR/bench.out"
it_check bench-reactor-line grep -q 'reactors r0 CPU .* I/O .*, r1 CPU' "$IT_DIR/bench.out"

if [ -s "$IT_DIR/bench.json" ]; then
	python3 - "$IT_DIR/bench.json" > "$IT_DIR/check.out" 2>&1 << 'EOF'
import json, sys

d = json.load(open(sys.argv[1]))
bad = []
if d["options"].get("jobs") != 2 or d["options"].get("queues") != 2:
    bad.append("options: jobs %s queues %s" % (d["options"].get("jobs"),
                                               d["options"].get("queues")))
for c in d["cells"]:
    if c.get("queues") != 2:
        bad.append("%s: queues %s" % (c["label"], c.get("queues")))
    for name in ("native", "scsi"):
        r = c[name]
        where = "%s, %s" % (c["label"], name)
        if not r.get("ran") or r.get("error"):
            bad.append("%s: did not run: %s" % (where, r.get("error")))
            continue
        for n, s in enumerate(r["samples"]):
            w = "%s, run %d" % (where, n)
            qs = s.get("queues", [])
            if [(q["job"], q["queue"]) for q in qs] != [(0, 0), (0, 1), (1, 0), (1, 1)]:
                bad.append("%s: queues %s" % (w, qs))
                continue
            if sum(q["ios"] for q in qs) != s["ios"]:
                bad.append("%s: queue I/Os %s add up to %d, not %d"
                           % (w, [q["ios"] for q in qs], sum(q["ios"] for q in qs), s["ios"]))
            for q in qs:
                if not q["ios"] > 0 or not q["iops"] > 0:
                    bad.append("%s: job %d queue %d did no I/O" % (w, q["job"], q["queue"]))
            rs = s.get("reactors", [])
            if [x["id"] for x in rs] != [0, 1]:
                bad.append("%s: reactors %s" % (w, rs))
                continue
            if not all(x["cpu_ns"] > 0 for x in rs):
                bad.append("%s: a reactor without CPU time: %s" % (w, rs))
            rios = sum(x["ios"] for x in rs)
            # the reactors' count is the target's, read a moment apart in the same
            # snapshot: they differ by at most the commands in flight (4 queues x QD 4)
            # at each end of the run
            if abs(rios - s["target_cmds"]) > 2 * 4 * 4:
                bad.append("%s: reactors' I/O %s != the target's %s"
                           % (w, rios, s["target_cmds"]))
            if abs(sum(x["cpu_share"] for x in rs) - 1) > 1e-3 or \
                    abs(sum(x["io_share"] for x in rs) - 1) > 1e-3:
                bad.append("%s: shares do not add up to 1: %s" % (w, rs))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
	if [ $? = 0 ]; then
		it_ok "bench-json (per queue pair and per reactor)"
	else
		it_not_ok bench-json "$(wc -l < "$IT_DIR/check.out") problems"
		sed 's/^/#   /' "$IT_DIR/check.out" | head -n 40
	fi
else
	it_not_ok bench-json "no JSON file written"
fi

it_stop_target
exit $((IT_FAIL > 0))
