#!/bin/bash
# SPDX-License-Identifier: MIT
# How the target scales with reactors, jobs and queue pairs: for each R x J x Q of a grid,
# nvmeof-target --reactors R --pin with a 1 GiB RAM namespace, and nvmeof-bench --jobs J
# --queues Q (J initiator threads, each driving Q I/O queue pairs of one controller; the
# target places the J x Q connections on its reactors round robin) running one workload
# over NVMe/TCP with --target-stats. Prints per grid point IOPS, target and initiator CPU
# per I/O, IOPS per queue pair, and each reactor's CPU (in cores), share of the I/O and CPU
# per I/O over the median run, so a larger machine can check that IOPS grows with R while
# CPU per I/O stays flat and the reactors are evenly loaded.
#
#   scripts/bench-scaling.sh [-o DIR] [BUILDDIR] [-- BENCH OPTIONS...]
#
# GRID: "RxJxQ ..." (default for N CPUs: 1x1x1 1x1x2 NxNx1 Nx1xN NxNx2; on 2 CPUs
# 1x1x1 1x1x2 2x2x1 2x1x2 2x2x2). -o DIR keeps each point's nvmeof-bench JSON
# (rRjJqQ.json), its output and the target's log there (default: a temporary directory,
# removed). BENCH OPTIONS default to --rw randread --bs 4k --qd 32 --time 2 --warmup 0.5
# --repeat 3 (--qd is per queue pair). PORT chooses the listening port (default 24430, on
# 127.0.0.1). Needs python3.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
out=
opts=(--rw randread --bs 4k --qd 32 --time 2 --warmup 0.5 --repeat 3)
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; opts=("$@"); break ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	-o) out=$2; shift 2 ;;
	*) b=$(cd "$1" && pwd); shift ;;
	esac
done
port=${PORT:-24430}
n=$(nproc)
grid=${GRID:-"1x1x1 1x1x2 ${n}x${n}x1 ${n}x1x${n} ${n}x${n}x2"}
work=$(mktemp -d)
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
	out=$(cd "$out" && pwd)
else
	out=$work
fi
tpid=
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "load average before: $(cat /proc/loadavg), $n CPUs; bench: ${opts[*]}"
for point in $grid; do
	IFS=x read -r r j q <<<"$point"
	case "$r$j$q" in
	''|*[!0-9]*) echo "GRID: '$point' is not RxJxQ" >&2; exit 2 ;;
	esac
	name=r${r}j${j}q${q}
	sock=$work/stats.sock
	rm -f "$sock"
	"$b/target/nvmeof-target" --reactors "$r" --pin --ns ram:1G --discovery-port 0 \
		--no-control-socket --state-dir "$work" --listen "tcp://127.0.0.1:$port" \
		--stats-socket "$sock" >"$out/$name.target.log" 2>&1 &
	tpid=$!
	for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
	[ -S "$sock" ] || { cat "$out/$name.target.log" >&2; exit 1; }
	"$b/initiator/nvmeof-bench" --no-progress --jobs "$j" --queues "$q" \
		--target-stats "$sock" \
		--native "nvme+tcp://127.0.0.1:$port/nqn.2026-11.io.nvmeof:default" "${opts[@]}" \
		--json "$out/$name.json" >"$out/$name.txt" 2>&1 ||
		{ cat "$out/$name.txt" >&2; exit 1; }
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	tpid=
	python3 - "$r" "$j" "$q" "$out/$name.json" <<'PY'
import json, sys
r, j, q, res = sys.argv[1:]
d = json.load(open(res))
c = d["cells"][0]["native"]
m = c["median"]
# the run whose IOPS is the median, as nvmeof-bench's own per-queue table
s = min(c["samples"], key=lambda s: abs(s["ios"] / s["secs"] - m["iops"]))
qs = " ".join("j%dq%d %.0fk" % (x["job"], x["queue"], x["iops"] / 1e3) for x in s["queues"])
rs = ", ".join("r%d %.2f core %.0f%% of I/O %.2f us/IO"
               % (x["id"], x["cpu_util"], 100 * (x["io_share"] or 0),
                  (x["cpu_ns_per_io"] or 0) / 1e3) for x in s.get("reactors", []))
print("R%s J%s Q%s: %.0f IOPS, target %.2f us/IO, initiator %.2f us/IO\n"
      "    queues: %s\n    reactors: %s" % (r, j, q, m["iops"], m["target_cpu_us_per_io"],
                                           m["initiator_cpu_us_per_io"], qs, rs))
PY
done
echo "load average after: $(cat /proc/loadavg)"
[ "$out" != "$work" ] && echo "raw JSON and output in $out"
exit 0
