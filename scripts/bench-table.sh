#!/bin/bash
# SPDX-License-Identifier: MIT
# Re-measure the benchmark table of docs/benchmarks.md: the published comparison (one
# reactor pinned to CPU 0, the initiator on CPU 1, a 1 GiB RAM namespace written once
# before measuring, in-capsule data 64 KiB, nvmeof-tcp-ceiling after each pair of runs)
# for every workload of nvmeof-bench's default matrix, and the Markdown table from the
# JSON it wrote.
#
#   scripts/bench-table.sh [-o DIR] [--before BUILDDIR] [BUILDDIR] [-- BENCH OPTIONS...]
#
# BUILDDIR (default build/) holds the target to measure; with --before, the target of an
# earlier build is measured too, workload by workload in turn with the other (before, then
# after), so that a busy machine's drift hits both alike, and the table gets before/after
# columns. Both use BUILDDIR's nvmeof-bench and nvmeof-tcp-ceiling. DIR (default
# bench/results/) receives before.json, after.json, table.md and load.txt (load average and
# CPU count before and after). BENCH OPTIONS replace the default run length
# (--time 2 --warmup 0.5 --repeat 3). PORT and ISCSI_PORT choose the listening ports
# (default 24420 and 24260, on 127.0.0.1); CELLS="randread 4k 32;write 128k 1" runs only
# those workloads.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/results
before=
after=$top/build
runopts=(--time 2 --warmup 0.5 --repeat 3)
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--before) before=$(cd "$2" && pwd); shift 2 ;;
	--) shift; runopts=("$@"); break ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) after=$(cd "$1" && pwd); shift ;;
	esac
done
port=${PORT:-24420}
iport=${ISCSI_PORT:-24260}
bench=$after/initiator/nvmeof-bench
ceiling=$after/initiator/nvmeof-tcp-ceiling
for b in "$after" $before; do
	[ -x "$b/target/nvmeof-target" ] || { echo "no $b/target/nvmeof-target" >&2; exit 2; }
done
mkdir -p "$out"
work=$(mktemp -d)
tpid=
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The default matrix: 4K random, 64K random, 64K and 128K sequential, read and write, QD 32
# then QD 1.
cells=()
for qd in 32 1; do
	for w in "randread 4k" "randwrite 4k" "randread 64k" "randwrite 64k" "read 64k" \
		"write 64k" "read 128k" "write 128k"; do
		cells+=("$w $qd")
	done
done
if [ -n "${CELLS:-}" ]; then
	IFS=';' read -r -a cells <<<"$CELLS"
fi

run_cell() { # BUILDDIR SIDE INDEX RW BS QD
	local b=$1 side=$2 i=$3 rw=$4 bs=$5 qd=$6 sock=$work/stats.sock
	rm -f "$sock"
	"$b/target/nvmeof-target" --reactors 1 --pin --ns ram:1G --in-capsule 65536 \
		--listen "tcp://127.0.0.1:$port" --listen "iscsi://127.0.0.1:$iport" \
		--discovery-port 0 --no-control-socket --state-dir "$work" \
		--stats-socket "$sock" >"$work/target.log" 2>&1 &
	tpid=$!
	for _ in $(seq 1 100); do
		[ -S "$sock" ] && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -S "$sock" ]; then
		echo "the $side target did not start:" >&2
		cat "$work/target.log" >&2
		exit 1
	fi
	"$bench" --pin 0,1 --target-stats "$sock" --ceiling="$ceiling" --no-progress \
		--native "nvme+tcp://127.0.0.1:$port/nqn.2026-11.io.nvmeof:default" \
		--scsi "iscsi://127.0.0.1:$iport/iqn.2026-11.io.nvmeof:default/0" \
		--precondition --rw "$rw" --bs "$bs" --qd "$qd" "${runopts[@]}" \
		--json "$work/$side.$i.json" >"$work/$side.$i.txt" 2>&1 ||
		{ echo "nvmeof-bench failed ($side, $rw $bs QD$qd):" >&2; cat "$work/$side.$i.txt" >&2; }
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	tpid=
}

{ echo "start: $(date -u +%FT%TZ) $(cat /proc/loadavg) CPUs $(nproc)"; } >"$out/load.txt"
i=0
for c in "${cells[@]}"; do
	set -- $c
	echo "[$((i + 1))/${#cells[@]}] $1 $2 QD$3" >&2
	[ -n "$before" ] && run_cell "$before" before $i "$@"
	run_cell "$after" after $i "$@"
	i=$((i + 1))
done
{ echo "end:   $(date -u +%FT%TZ) $(cat /proc/loadavg) CPUs $(nproc)"; } >>"$out/load.txt"

python3 "$top/scripts/bench-table.py" merge "$out/after.json" "$work"/after.*.json
args=("$out/after.json")
if [ -n "$before" ]; then
	python3 "$top/scripts/bench-table.py" merge "$out/before.json" "$work"/before.*.json
	args+=("$out/before.json")
fi
python3 "$top/scripts/bench-table.py" "${args[@]}" | tee "$out/table.md"
cat "$out/load.txt"
