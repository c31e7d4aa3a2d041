#!/bin/bash
# bench-quick.sh - nvmeof-bench end to end: one nvmeof-target serving the same RAM
# namespace over NVMe/TCP and iSCSI (free ports on 127.0.0.1) with its statistics socket;
# a short --quick matrix over both paths with --verify; then every cell of the JSON must
# hold sane numbers for both paths (non-zero IOPS, p50 <= p99 <= p99.9, target figures),
# the iSCSI session must have the fair-comparison settings, and the SVG must be complete.

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

sock=$IT_DIR/stats.sock
it_start_target --listen iscsi://127.0.0.1:0 --ns ram:64M --reactors 1 --in-capsule 65536 \
	--stats-socket "$sock" || exit 1
iport=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" |
	head -n 1)
if [ -z "$iport" ]; then
	it_not_ok iscsi-listener "no 'listening on iscsi://127.0.0.1:PORT' line from the target"
	sed 's/^/#   target: /' "$IT_LOG"
fi
it_check stats-socket test -S "$sock"

it_log "nvmeof-bench --quick over nvme+tcp port $IT_PORT and iscsi port ${iport:-none}"
start=$(date +%s)
"$BENCH" --native "nvme+tcp://127.0.0.1:$IT_PORT/$NQN" \
	--scsi "iscsi://127.0.0.1:${iport:-3260}/$IQN/0" \
	--quick --time 0.3 --warmup 0.1 --repeat 2 --verify --target-stats "$sock" \
	--json "$IT_DIR/bench.json" --svg "$IT_DIR/bench.svg" \
	> "$IT_DIR/bench.out" 2> "$IT_DIR/bench.err"
rc=$?
secs=$(($(date +%s) - start))
sed 's/^/#   bench: /' "$IT_DIR/bench.err"
if [ $rc = 0 ]; then
	it_ok "bench-exit (${secs} s)"
else
	it_not_ok bench-exit "nvmeof-bench exit status $rc"
	sed 's/^/#   bench: /' "$IT_DIR/bench.out" | head -n 20
fi
it_check bench-table grep -q '^native NVMe/TCP vs SCSI over iSCSI' "$IT_DIR/bench.out"
it_check bench-spread grep -q 'spread' "$IT_DIR/bench.out"
# the same unsolicited data on both paths: no warning that they differ
it_check bench-fair sh -c "! grep -q differ '$IT_DIR/bench.err'"
# a line per finished workload on stderr, even though it is a file
it_check bench-progress sh -c "[ \$(grep -c '^\[ *[0-9]*/9\] .*ETA' '$IT_DIR/bench.err') = 9 ]"
# stderr is a file: no progress line (carriage returns) there
it_check bench-quiet sh -c "! grep -q \"$(printf '\r')\" '$IT_DIR/bench.err'"

# The JSON: every cell, both paths, sane numbers.
if [ -s "$IT_DIR/bench.json" ]; then
	python3 - "$IT_DIR/bench.json" > "$IT_DIR/check.out" 2>&1 << 'EOF'
import json, sys

d = json.load(open(sys.argv[1]))
bad = []
cells = d.get("cells", [])
if len(cells) != 9:
    bad.append("%d cells, want the 9 of --quick" % len(cells))
native, scsi = d["paths"]["native"], d["paths"]["scsi"]
for name, p in (("native", native), ("scsi", scsi)):
    if not p.get("connected"):
        bad.append("path %s not connected" % name)
isc = scsi.get("iscsi")
if not isc:
    bad.append("no iSCSI session parameters")
else:
    if not isc["immediate_data"]:
        bad.append("iSCSI ImmediateData=No")
    if isc["initial_r2t"]:
        bad.append("iSCSI InitialR2T=Yes")
    if isc["first_burst_length"] < native.get("in_capsule", 0):
        bad.append("FirstBurstLength %d < NVMe/TCP in-capsule %d"
                   % (isc["first_burst_length"], native["in_capsule"]))
if native.get("header_digest") != scsi.get("header_digest") or \
        native.get("data_digest") != scsi.get("data_digest"):
    bad.append("digest settings differ between the paths")
for c in cells:
    for name in ("native", "scsi"):
        where = "%s, %s" % (c["label"], name)
        r = c.get(name, {})
        if not r.get("ran") or r.get("error"):
            bad.append("%s: did not run: %s" % (where, r.get("error")))
            continue
        m = r["median"]
        if not (m["iops"] or 0) > 0:
            bad.append("%s: IOPS %s" % (where, m["iops"]))
            continue
        if abs(m["mib_s"] - m["iops"] * c["bs"] / 1048576.0) > 0.01 * m["mib_s"]:
            bad.append("%s: MiB/s %s does not match IOPS" % (where, m["mib_s"]))
        lat = [m["lat_p50_us"], m["lat_p99_us"], m["lat_p999_us"]]
        if None in lat or not (0 < lat[0] <= lat[1] <= lat[2]):
            bad.append("%s: latency p50/p99/p99.9 %s" % (where, lat))
        if not (m["lat_avg_us"] or 0) > 0:
            bad.append("%s: average latency %s" % (where, m["lat_avg_us"]))
        if not (m["initiator_cpu_us_per_io"] or 0) > 0:
            bad.append("%s: initiator CPU per I/O %s" % (where, m["initiator_cpu_us_per_io"]))
        if not (m["target_cpu_us_per_io"] or 0) > 0:
            bad.append("%s: target CPU per I/O %s" % (where, m["target_cpu_us_per_io"]))
        xl = m["target_xlate_us_per_io"]
        if name == "scsi" and not (xl or 0) > 0:
            bad.append("%s: no target SCSI translation time" % where)
        if name == "native" and xl:
            bad.append("%s: translation time %s on the native path" % (where, xl))
        if name == "scsi" and not (m["initiator_xlate_us_per_io"] or 0) > 0:
            bad.append("%s: no initiator SCSI translation time" % where)
        for s in r["samples"]:
            if s["errors"] or s["verify_errors"]:
                bad.append("%s: %d errors, %d verify errors" % (where, s["errors"],
                                                                s["verify_errors"]))
            # the target's window is the bench's, give or take the commands in flight
            if s.get("target_cmds", 0) < 0.9 * s["ios"]:
                bad.append("%s: the target counted %s commands for %d I/Os"
                           % (where, s.get("target_cmds"), s["ios"]))
    if c["diff_pct"]["iops"] is None:
        bad.append("%s: no native vs SCSI difference" % c["label"])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
	if [ $? = 0 ]; then
		it_ok "bench-json (9 cells x 2 paths)"
	else
		it_not_ok bench-json "$(wc -l < "$IT_DIR/check.out") problems"
		sed 's/^/#   /' "$IT_DIR/check.out" | head -n 40
	fi
else
	it_not_ok bench-json "no JSON file written"
fi
it_check bench-svg sh -c "grep -q '<svg' '$IT_DIR/bench.svg' && tail -n 1 '$IT_DIR/bench.svg' | grep -q '</svg>'"

it_stop_target
exit $((IT_FAIL > 0))
