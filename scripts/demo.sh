#!/bin/bash
# scripts/demo.sh - install the dependencies (Debian 12), build, then show nvmeof at work:
# start nvmeof-target on 127.0.0.1 with its defaults (one subsystem with an embedded 1 GiB
# RAM namespace, NVMe/TCP on port 4420 and the same namespace over iSCSI on port 3260),
# use it over NVMe/TCP with the nvmeof CLI (discover, identify, write a pattern, read it
# back and compare), then run nvmeof-bench --quick: the same workloads natively and as
# SCSI commands over iSCSI, with one comparison table and a chart. Both paths get the same
# transfer settings: the target's NVMe/TCP in-capsule data size is set to the iSCSI
# FirstBurstLength it negotiates (64 KiB), with ImmediateData=Yes and InitialR2T=No. The
# daemon is stopped at the end. Environment: DEMO_REPEAT, DEMO_TIME (runs per path and
# workload, seconds per run; default 5 and 1).

. "$(dirname "$0")/lib.sh"

builddir=$NV_TOP/build
TARGET=$builddir/target/nvmeof-target
CLI=$builddir/initiator/nvmeof
BENCH=$builddir/initiator/nvmeof-bench
IQN=iqn.2026-11.io.nvmeof:default
NQN=nqn.2026-11.io.nvmeof:default
work=
target_pid=

cleanup() {
	if [ -n "$target_pid" ] && kill -0 "$target_pid" 2> /dev/null; then
		kill -TERM "$target_pid"
		wait "$target_pid" 2> /dev/null
	fi
	[ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

listening() { [ -n "$(ss -Htln "( sport = :$1 )" 2> /dev/null)" ]; }

# show CMD...: print a command as typed, then run it
show() {
	echo
	echo "\$ $*"
	"$@"
}

nv_step dependencies nv_deps "${NV_DEMO_DEPS[@]}" || nv_die "installing the dependencies failed"
nv_build "$builddir" || nv_die "the build failed"

work=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-demo.XXXXXX")
port=4420
iport=3260
# One reactor, and on a machine with 2 CPUs or more the reactor on CPU 0 and the bench's
# initiator thread on CPU 1: the two do not fight over a CPU, which is most of the noise.
# 64 KiB of in-capsule data: the same unsolicited data as the iSCSI FirstBurstLength.
args=(--stats-socket "$work/stats.sock" --reactors 1 --in-capsule 65536)
bench_pin=()
if [ "$(nproc)" -ge 2 ]; then
	args+=(--pin)
	bench_pin=(--pin 0,1)
fi
free_port() {
	seq 20000 60000 | shuf | while read -r p; do listening "$p" || { echo "$p"; break; }; done
}
if listening 4420 || listening 8009 || listening 3260; then
	# something already serves a default port (NVMe/TCP 4420, discovery 8009, iSCSI 3260):
	# take free ones rather than disturb it
	port=$(free_port)
	iport=$(free_port)
	args+=(--listen "tcp://127.0.0.1:$port" --listen "iscsi://127.0.0.1:$iport"
		--discovery-port 0)
	echo "port 4420, 8009 or 3260 is in use here; the demo target listens on" \
		"tcp://127.0.0.1:$port and iscsi://127.0.0.1:$iport"
fi

nv_log "starting the target: ${TARGET#"$NV_TOP"/} ${args[*]}"
"$TARGET" "${args[@]}" > "$work/target.log" 2>&1 &
target_pid=$!
for _ in $(seq 100); do
	listening "$port" && break
	kill -0 "$target_pid" 2> /dev/null || break
	sleep 0.1
done
if ! listening "$port"; then
	cat "$work/target.log"
	nv_die "nvmeof-target did not start listening on 127.0.0.1:$port"
fi
sed 's/^/   target: /' "$work/target.log"

URI=nvme+tcp://127.0.0.1:$port
nv_log "the initiator: ${CLI#"$NV_TOP"/}"
show "$CLI" discover "$URI" || nv_die "discover failed"
show "$CLI" identify "$URI/$NQN" || nv_die "identify failed"
show "$CLI" list-ns "$URI/$NQN" || nv_die "list-ns failed"

# Write 4 MiB of a pattern at LBA 2048 of namespace 1, read it back, compare.
bs=$("$CLI" list-ns "$URI/$NQN/1" --json | grep -o '"block_size": *[0-9]*' | grep -o '[0-9]*$')
[ -n "$bs" ] || nv_die "no block size in 'nvmeof list-ns --json'"
blocks=$((4 * 1024 * 1024 / bs))
awk 'BEGIN { for (i = 0; i < 65536; i++)
	printf "nvmeof demo pattern, 64-byte record %010d ................\n", i }' > "$work/pattern"
show "$CLI" write "$URI/$NQN/1" --lba 2048 --blocks $blocks -i "$work/pattern" ||
	nv_die "write failed"
show "$CLI" read "$URI/$NQN/1" --lba 2048 --blocks $blocks -o "$work/readback" ||
	nv_die "read failed"

echo
echo "== results"
echo "   namespace 1 block size:  $bs bytes"
echo "   written at LBA 2048:      $blocks blocks, $(stat -c %s "$work/pattern") bytes," \
	"sha256 $(sha256sum < "$work/pattern" | cut -c1-16)"
echo "   read back from LBA 2048:  $(stat -c %s "$work/readback") bytes," \
	"sha256 $(sha256sum < "$work/readback" | cut -c1-16)"
echo "   first record read back:   $(head -n 1 "$work/readback")"
if cmp -s "$work/pattern" "$work/readback"; then
	echo "   compare:                  identical"
else
	cmp "$work/pattern" "$work/readback" | head -n 3
	nv_die "the data read back differs from the data written"
fi

nv_log "native NVMe/TCP against SCSI over iSCSI: nvmeof-bench --quick (about 2 minutes)"
png=()
command -v rsvg-convert > /dev/null && png=(--png "$NV_TOP/nvmeof-bench.png")
nv_step "nvmeof-bench --quick" show "$BENCH" --quick \
	--repeat "${DEMO_REPEAT:-5}" --time "${DEMO_TIME:-1}" "${bench_pin[@]}" \
	--native "$URI/$NQN/1" \
	--scsi "iscsi://127.0.0.1:$iport/$IQN/0" \
	--target-stats "$work/stats.sock" \
	--svg "$NV_TOP/nvmeof-bench.svg" "${png[@]}" --json "$NV_TOP/nvmeof-bench.json" ||
	nv_die "nvmeof-bench failed"
nv_log "stopping the target"
kill -TERM "$target_pid"
wait "$target_pid"
rc=$?
target_pid=
echo "   nvmeof-target exit status $rc; $(wc -l < "$work/target.log") lines of log," \
	"its warnings and errors:"
grep -E ': (warning|error|err|warn):' "$work/target.log" | sed 's/^/   target: /'
nv_times
echo
echo "chart: $NV_TOP/nvmeof-bench.svg${png[*]:+ and $NV_TOP/nvmeof-bench.png}" \
	"  raw numbers: $NV_TOP/nvmeof-bench.json"
[ $rc = 0 ]
