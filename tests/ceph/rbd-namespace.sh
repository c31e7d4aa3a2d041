#!/bin/bash
# tests/ceph/rbd-namespace.sh - nvmeof-target serving a Ceph RBD image (rbd: namespaces)
# from a one-node cluster (ceph-cluster.sh), driven by our CLI and nvmeof-bench:
#   - bad rbd: specs are refused at start-up with a message naming the bad part
#   - gateway A: --ns rbd:POOL/IMAGE:id=..:conf=..:keyring=.. and a RAM namespace; write,
#     read back and compare over NVMe/TCP, and across NVMe/TCP and iSCSI (LUN 0)
#   - gateway B on the same image found the way the Ceph tools find it (CEPH_CONF and
#     CEPH_ARGS --id), same subsystem NQN: the same NGUID/UUID as A; data written through
#     one reads back through the other (no cache in either)
#   - kill -9 of A right after acknowledged writes: rbd export holds them; a restarted A
#     (exclusive-lock takeover) reads them back
#   - Compare and Write: NACWU in Identify Namespace, libiscsi's CompareAndWrite tests on
#     the RBD LUN (when iscsi-test-cu is installed); an rbd resize seen by the namespace
#   - 4K QD32 random read and write IOPS of the RBD namespace and the RAM namespace
# Prints "ok NAME" / "not ok NAME: why". Exit: 0 all passed, 1 a check failed, 77 skipped
# without the Ceph packages or a build without librbd (failing instead under CI=true).

. "$(dirname "$0")/../integration/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER=$HERE/ceph-cluster.sh
BENCH=$top_builddir/initiator/nvmeof-bench
NQN=nqn.2026-11.io.nvmeof:rbd
IQN=iqn.2026-11.io.nvmeof:default
IMG=nvmeof-ns
BENCH_S=${BENCH_S:-3}

missing=
for t in ceph-mon ceph-mgr ceph-osd ceph rbd python3; do
	command -v $t > /dev/null || missing="$missing $t"
done
grep -q '^#define HAVE_RBD 1' "$top_builddir/config.h" 2> /dev/null ||
	missing="$missing librbd(configure found no librbd-dev/librados-dev)"
if [ -n "$missing" ]; then
	if [ "${CI:-}" = true ]; then
		echo "$IT_NAME: missing:$missing (CI=true: failing instead of skipping)" >&2
		exit 1
	fi
	echo "$IT_NAME: missing:$missing: skipped"
	exit 77
fi

it_init
CDIR=
B_PID=
cleanup_all() {
	local rc=$?
	if [ -n "$B_PID" ] && kill -0 "$B_PID" 2> /dev/null; then
		kill -KILL "$B_PID"
		wait "$B_PID" 2> /dev/null
	fi
	if [ -n "$IT_PID" ] && kill -0 "$IT_PID" 2> /dev/null; then
		kill -KILL "$IT_PID"
		wait "$IT_PID" 2> /dev/null
	fi
	IT_PID=
	if [ -n "$CDIR" ] && compgen -G "$CDIR/run/*.pid" > /dev/null; then
		if [ "$IT_FAIL" != 0 ] || [ "$rc" != 0 ]; then
			for f in "$CDIR"/log/*.log; do
				[ -s "$f" ] && { echo "# --- tail of $f"; tail -n 10 "$f" | sed 's/^/#   /'; }
			done
		fi
		"$CLUSTER" stop "$CDIR" 2>&1 | sed 's/^/# /'
	fi
	(exit "$rc")
	it_cleanup
}
trap cleanup_all EXIT

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# The cluster under a short path (daemon sockets live there).
CDIR=$IT_DIR/c
T0=$(now)
if ! vars=$("$CLUSTER" start "$CDIR" 2> "$IT_DIR/start.err"); then
	sed 's/^/#   /' "$IT_DIR/start.err"
	it_not_ok cluster-start "ceph-cluster.sh start failed"
	exit 1
fi
eval "$vars"
it_ok "cluster-start ($(since "$T0") s)"
RBD() { CEPH_ARGS="--id $NVMEOF_CEPH_ID" timeout 60 rbd -c "$CEPH_CONF" "$@"; }
it_check rbd-create RBD create "$NVMEOF_CEPH_POOL/$IMG" --size 256M
SPEC="rbd:$NVMEOF_CEPH_POOL/$IMG:id=$NVMEOF_CEPH_ID:conf=$CEPH_CONF:keyring=$NVMEOF_CEPH_KEYRING"
unset CEPH_ARGS

# Bad specs: refused at start-up, naming what is wrong.
bad_spec() {
	local name=$1 want=$2 spec=$3 out=$IT_DIR/bad.log
	timeout 60 "$IT_TARGET_BIN" --listen tcp://127.0.0.1:0 --discovery-port 0 --ns "$spec" \
		> "$out" 2>&1
	if [ $? != 0 ] && grep -q -- "$want" "$out"; then
		it_ok "$name"
	else
		it_not_ok "$name" "expected a failed start mentioning '$want'"
		sed 's/^/#   /' "$out" | tail -n 5
	fi
}
bad_spec bad-option 'unknown option "cache"' "$SPEC:cache=on"
bad_spec bad-image "image nosuch in pool $NVMEOF_CEPH_POOL" \
	"rbd:$NVMEOF_CEPH_POOL/nosuch:id=$NVMEOF_CEPH_ID:conf=$CEPH_CONF"
bad_spec bad-snapshot "snapshots" "rbd:$NVMEOF_CEPH_POOL/$IMG@s1"
bad_spec bad-id "client.nobody" "rbd:$NVMEOF_CEPH_POOL/$IMG:id=nobody:conf=$CEPH_CONF"

# Gateway A: the RBD image (NSID 1, LUN 0) and a RAM namespace (NSID 2).
start_a() {
	it_start_target --nqn "$NQN" --listen iscsi://127.0.0.1:0 --reactors 2 \
		--ns "$SPEC" --ns ram:256M || return 1
	A_PORT=$IT_PORT
	A_ISCSI=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' \
		"$IT_LOG" | head -n 1)
}
T0=$(now)
start_a || exit 1
A_LOG=$IT_LOG
it_log "gateway A up in $(since "$T0") s (nvme+tcp $A_PORT, iscsi $A_ISCSI)"
A=nvme+tcp://127.0.0.1:$A_PORT/$NQN/1

head -c $((1024 * 1024)) /dev/urandom > "$IT_DIR/d1"
it_cli nvme-write 0 write "$A" --lba 2048 --blocks 2048 -i "$IT_DIR/d1"
it_cli nvme-read 0 read "$A" --lba 2048 --blocks 2048 -o "$IT_DIR/r1"
it_check nvme-data cmp -s "$IT_DIR/d1" "$IT_DIR/r1"
# across paths: written over NVMe/TCP, read over iSCSI, and the other way
it_cli iscsi-read 0 read "iscsi://127.0.0.1:$A_ISCSI/$IQN/0" --lba 2048 --blocks 2048 \
	-o "$IT_DIR/r1i"
it_check iscsi-sees-nvme-data cmp -s "$IT_DIR/d1" "$IT_DIR/r1i"
head -c $((64 * 1024)) /dev/urandom > "$IT_DIR/d2"
it_cli iscsi-write 0 write "iscsi://127.0.0.1:$A_ISCSI/$IQN/0" --lba 8192 --blocks 128 \
	-i "$IT_DIR/d2"
it_cli nvme-read-iscsi-data 0 read "$A" --lba 8192 --blocks 128 -o "$IT_DIR/r2"
it_check nvme-sees-iscsi-data cmp -s "$IT_DIR/d2" "$IT_DIR/r2"

# Compare and Write on the image is librbd's (atomic across gateways), one 512-byte block:
# NACWU valid in Identify Namespace, and libiscsi's COMPARE AND WRITE tests on LUN 0.
it_cli id-ns-nacwu 0 id-ns "$A" -o json
if python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
sys.exit(0 if d["nsfeat"] & 2 and d.get("nacwu", 0) == 0 else 1)' "$IT_OUT" 2> /dev/null; then
	it_ok "compare-and-write-unit (NSFEAT NSABP, NACWU 0: one block)"
else
	it_not_ok compare-and-write-unit "Identify Namespace: $(tr -d '\n' < "$IT_OUT" | head -c 300)"
fi
if command -v iscsi-test-cu > /dev/null; then
	if timeout 300 iscsi-test-cu --dataloss -t ALL.CompareAndWrite \
		"iscsi://127.0.0.1:$A_ISCSI/$IQN/0" > "$IT_DIR/caw.out" 2>&1 &&
		grep -qE 'tests +[0-9]+ +[0-9]+ +[0-9]+ +0 ' "$IT_DIR/caw.out"; then
		it_ok "libiscsi CompareAndWrite on the RBD LUN"
	else
		it_not_ok libiscsi-compare-and-write "iscsi-test-cu ALL.CompareAndWrite failed"
		tail -n 25 "$IT_DIR/caw.out" | sed 's/^/#   /'
	fi
fi

# A resize in the cluster reaches the namespace (Namespace Attribute Changed to hosts).
it_check rbd-resize RBD resize "$NVMEOF_CEPH_POOL/$IMG" --size 320M
for _ in $(seq 150); do
	grep -q 'namespace 1 resized by its backend' "$IT_LOG" && break
	sleep 0.1
done
it_cli id-ns-after-resize 0 id-ns "$A" -o json
if grep -qE '"nsze": 655360,' "$IT_OUT"; then
	it_ok "resize seen: 320 MiB, 655360 blocks"
else
	it_not_ok resize-seen "Identify Namespace after rbd resize: $(grep nsze "$IT_OUT")"
fi

# Gateway B: same image and NQN, cluster found through CEPH_CONF and CEPH_ARGS.
B_LOG=$IT_DIR/b.log
CEPH_ARGS="--id $NVMEOF_CEPH_ID --keyring $NVMEOF_CEPH_KEYRING" CEPH_CONF=$CEPH_CONF \
	"$IT_TARGET_BIN" --nqn "$NQN" --listen tcp://127.0.0.1:0 --discovery-port 0 \
	--reactors 1 --ns "rbd:$NVMEOF_CEPH_POOL/$IMG" > "$B_LOG" 2>&1 &
B_PID=$!
B_PORT=
for _ in $(seq 300); do
	B_PORT=$(sed -n 's/.*listening on tcp:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$B_LOG" |
		head -n 1)
	[ -n "$B_PORT" ] && break
	kill -0 "$B_PID" 2> /dev/null || break
	sleep 0.1
done
if [ -z "$B_PORT" ]; then
	it_not_ok gateway-b "did not start"
	sed 's/^/#   b: /' "$B_LOG" | tail -n 5
else
	it_ok "gateway-b (CEPH_CONF + CEPH_ARGS --id, port $B_PORT)"
	B=nvme+tcp://127.0.0.1:$B_PORT/$NQN/1
	"$IT_CLI" identify "$A" --json > "$IT_DIR/ida" 2>&1
	"$IT_CLI" identify "$B" --json > "$IT_DIR/idb" 2>&1
	ids() { python3 -c '
import json, re, sys
t = open(sys.argv[1]).read()
n = re.findall(r"\"(nguid|uuid|eui64)\": \"([0-9a-fA-F-]+)\"", t)
print(" ".join("%s=%s" % kv for kv in n))' "$1"; }
	ia=$(ids "$IT_DIR/ida")
	ib=$(ids "$IT_DIR/idb")
	it_log "A: $ia"
	it_log "B: $ib"
	case "$ia" in
	*nguid=*uuid=*) if [ "$ia" = "$ib" ] && ! echo "$ia" | grep -q 'nguid=0\{32\}'; then
		it_ok "same-identity (non-zero NGUID and a UUID on both gateways)"
	else
		it_not_ok same-identity "A: $ia / B: $ib"
	fi ;;
	*) it_not_ok same-identity "no nguid/uuid in identify output: $(head -c 300 "$IT_DIR/ida")" ;;
	esac
	it_cli b-reads-a 0 read "$B" --lba 2048 --blocks 2048 -o "$IT_DIR/rb1"
	it_check b-sees-a-data cmp -s "$IT_DIR/d1" "$IT_DIR/rb1"
	head -c $((128 * 1024)) /dev/urandom > "$IT_DIR/d3"
	T0=$(now)
	it_cli b-write 0 write "$B" --lba 16384 --blocks 256 -i "$IT_DIR/d3"
	it_log "B's write (exclusive lock moved from A) took $(since "$T0") s"
	it_cli a-reads-b 0 read "$A" --lba 16384 --blocks 256 -o "$IT_DIR/ra3"
	it_check a-sees-b-data cmp -s "$IT_DIR/d3" "$IT_DIR/ra3"
	kill -TERM "$B_PID"
	wait "$B_PID"
	it_check b-exit test $? = 0
	B_PID=
fi

# Durability: acknowledged writes, then kill -9 of gateway A.
head -c $((4 * 1024 * 1024)) /dev/urandom > "$IT_DIR/d4"
it_cli before-kill-write 0 write "$A" --lba 65536 --blocks 8192 -i "$IT_DIR/d4"
kill -KILL "$IT_PID"
wait "$IT_PID" 2> /dev/null
IT_PID=
it_ok "kill -9 gateway A after the acknowledged write"
T0=$(now)
if RBD export --no-progress "$NVMEOF_CEPH_POOL/$IMG" "$IT_DIR/export" 2> "$IT_DIR/export.err"
then
	it_log "rbd export in $(since "$T0") s"
	it_check export-holds-acked-write \
		cmp -s "$IT_DIR/d4" <(dd if="$IT_DIR/export" bs=512 skip=65536 count=8192 2> /dev/null)
	it_check export-holds-earlier-writes \
		cmp -s "$IT_DIR/d1" <(dd if="$IT_DIR/export" bs=512 skip=2048 count=2048 2> /dev/null)
	it_check export-holds-iscsi-write \
		cmp -s "$IT_DIR/d2" <(dd if="$IT_DIR/export" bs=512 skip=8192 count=128 2> /dev/null)
else
	it_not_ok rbd-export "$(tail -n 1 "$IT_DIR/export.err")"
fi
rm -f "$IT_DIR/export"

T0=$(now)
start_a || exit 1
it_cli after-restart-read 0 read "nvme+tcp://127.0.0.1:$A_PORT/$NQN/1" --lba 65536 \
	--blocks 8192 -o "$IT_DIR/r4"
it_check after-restart-data cmp -s "$IT_DIR/d4" "$IT_DIR/r4"
head -c 4096 /dev/urandom > "$IT_DIR/d5"
it_cli after-restart-write 0 write "nvme+tcp://127.0.0.1:$A_PORT/$NQN/1" --lba 0 --blocks 8 \
	-i "$IT_DIR/d5"
it_log "restart to first write done (lock takeover from the killed gateway): $(since "$T0") s"

# 4K QD32 random IOPS: the RBD namespace and the RAM namespace of the same target.
bench() { # NAME NSID RW
	local json=$IT_DIR/bench-$1-$3.json iops
	if "$BENCH" --native "nvme+tcp://127.0.0.1:$A_PORT/$NQN/$2" --rw "$3" --bs 4K --qd 32 \
		--time "$BENCH_S" --warmup 0.5 --repeat 1 --size 64M --no-progress \
		--json "$json" > "$IT_DIR/bench.out" 2> "$IT_DIR/bench.err"; then
		iops=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = d["cells"][0]["native"]["median"]
s = d["cells"][0]["native"]["samples"]
bad = sum(x["errors"] for x in s)
print("%.0f %.0f %d" % (m["iops"] or 0, m["lat_p99_us"] or 0, bad))' "$json" 2>&1)
		set -- "$1" "$2" "$3" $iops
		if [ "${4%.*}" -gt 0 ] 2> /dev/null && [ "$6" = 0 ]; then
			it_ok "bench $1 4K $3 QD32: $4 IOPS, p99 $5 us"
		else
			it_not_ok "bench-$1-$3" "IOPS/errors: $iops"
		fi
	else
		it_not_ok "bench-$1-$3" "nvmeof-bench failed: $(tail -n 1 "$IT_DIR/bench.err")"
	fi
}
bench rbd 1 randwrite
bench rbd 1 randread
bench ram 2 randwrite
bench ram 2 randread

it_stop_target
echo "# $IT_PASS passed, $IT_FAIL failed"
[ "$IT_FAIL" = 0 ]
