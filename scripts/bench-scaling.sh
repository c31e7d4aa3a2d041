#!/bin/bash
# SPDX-License-Identifier: MIT
# How the target scales with reactors: for N = 1 .. REACTORS (default: the online CPUs),
# nvmeof-target --reactors N --pin with a 1 GiB RAM namespace, and nvmeof-bench --jobs N
# (N queue pairs, one thread each, placed on the reactors round robin) running one
# workload over NVMe/TCP; prints IOPS, target CPU per I/O and each reactor's CPU use
# (from the statistics socket) per N, so a larger machine can check that IOPS grows with N
# while CPU per I/O stays flat and the reactors are evenly loaded.
#
#   scripts/bench-scaling.sh [BUILDDIR] [-- BENCH OPTIONS...]
#
# BENCH OPTIONS default to --rw randread --bs 4k --qd 32 --time 2 --warmup 0.5 --repeat 3.
# PORT chooses the listening port (default 24430, on 127.0.0.1). Needs python3.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
opts=(--rw randread --bs 4k --qd 32 --time 2 --warmup 0.5 --repeat 3)
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; opts=("$@"); break ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
	*) b=$(cd "$1" && pwd); shift ;;
	esac
done
port=${PORT:-24430}
max=${REACTORS:-$(nproc)}
work=$(mktemp -d)
tpid=
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

snap() { # SOCK: one statistics line
	python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"\n"); d=b""
while not d.endswith(b"\n"): d+=s.recv(65536)
print(d.decode().strip())' "$1"
}

echo "load average before: $(cat /proc/loadavg), $(nproc) CPUs"
for n in $(seq 1 "$max"); do
	sock=$work/stats.sock
	rm -f "$sock"
	"$b/target/nvmeof-target" --reactors "$n" --pin --ns ram:1G --discovery-port 0 \
		--no-control-socket --state-dir "$work" --listen "tcp://127.0.0.1:$port" \
		--stats-socket "$sock" >"$work/target.log" 2>&1 &
	tpid=$!
	for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
	[ -S "$sock" ] || { cat "$work/target.log" >&2; exit 1; }
	snap "$sock" >"$work/s0"
	t0=$(date +%s.%N)
	"$b/initiator/nvmeof-bench" --no-progress --jobs "$n" --target-stats "$sock" \
		--native "nvme+tcp://127.0.0.1:$port/nqn.2026-11.io.nvmeof:default" "${opts[@]}" \
		--json "$work/r$n.json" >"$work/r$n.txt" 2>&1 || { cat "$work/r$n.txt" >&2; exit 1; }
	t1=$(date +%s.%N)
	snap "$sock" >"$work/s1"
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	tpid=
	python3 - "$n" "$work/r$n.json" "$work/s0" "$work/s1" "$t0" "$t1" <<'PY'
import json, sys
n, res, s0, s1, t0, t1 = sys.argv[1:]
d = json.load(open(res))
m = d["cells"][0]["native"]["median"]
a, b = json.load(open(s0)), json.load(open(s1))
wall = (float(t1) - float(t0)) * 1e9
share = []
for i, (r0, r1) in enumerate(zip(a["reactors"], b["reactors"])):
    share.append("r%d %.0f%%" % (i, 100.0 * (r1["cpu_ns"] - r0["cpu_ns"]) / wall))
print("reactors %s, jobs %s: %s IOPS, target CPU %.2f us/IO, initiator %.2f us/IO; "
      "reactor CPU over the whole run: %s" % (n, n, "%.0f" % m["iops"],
      m["target_cpu_us_per_io"], m["initiator_cpu_us_per_io"], ", ".join(share)))
PY
done
echo "load average after: $(cat /proc/loadavg)"
