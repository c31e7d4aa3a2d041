#!/bin/bash
# tests/ceph/ceph-smoke.sh - a one-node Ceph cluster (ceph-cluster.sh) serving an RBD
# image, and librbd's asynchronous C API against it (rbd_aio_probe):
#   - start the cluster, then rbd create (default features: exclusive-lock on), rbd bench,
#     rbd import/export of random data compared byte for byte, as client.nvmeof
#   - rbd_aio_probe check: QD32 4K writes/reads through an eventfd, compare_and_write,
#     write_zeroes, discard, flush
#   - exclusive-lock takeover: a client holding the lock is SIGKILLed, another writes;
#     the time from the kill to that write's completion is printed (and must stay under
#     TAKEOVER_MAX_S, default 20, which osd_client_watch_timeout = 5 allows)
#   - stop the cluster, and check that no daemon it started is left
# Prints "ok NAME" / "not ok NAME: why". Exit status: 0 all passed, 1 one failed, 77
# skipped: the Ceph packages or the probe (configure found no librbd) are missing, except
# under CI=true where that fails.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER=$HERE/ceph-cluster.sh
PROBE=$top_builddir/tests/ceph/rbd_aio_probe
TAKEOVER_MAX_S=${TAKEOVER_MAX_S:-20}
PASS=0
FAIL=0
DIR=
CDIR=
HOLD_PID=

log() { echo "# [ceph-smoke $(date +%T)] $*"; }
ok() {
	PASS=$((PASS + 1))
	echo "ok $1"
}
not_ok() {
	FAIL=$((FAIL + 1))
	echo "not ok $1: $2"
}
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

missing=
for t in ceph-mon ceph-mgr ceph-osd ceph rbd; do
	command -v $t > /dev/null || missing="$missing $t"
done
[ -x "$PROBE" ] || missing="$missing $PROBE(configure found no librbd-dev/librados-dev)"
if [ -n "$missing" ]; then
	if [ "${CI:-}" = true ]; then
		echo "ceph-smoke: missing:$missing (CI=true: failing instead of skipping)" >&2
		exit 1
	fi
	echo "ceph-smoke: missing:$missing: skipped" \
		"(apt-get install ceph-mon ceph-mgr ceph-osd ceph-common librbd-dev librados-dev)"
	exit 77
fi

cleanup() {
	local rc=$?
	if [ -n "$HOLD_PID" ] && kill -0 "$HOLD_PID" 2> /dev/null; then
		kill -KILL "$HOLD_PID"
		wait "$HOLD_PID" 2> /dev/null
	fi
	if [ -n "$DIR" ]; then
		compgen -G "$CDIR/run/*.pid" > /dev/null && "$CLUSTER" stop "$CDIR" 2>&1 | sed 's/^/# /'
		if [ $FAIL != 0 ] || [ $rc != 0 ]; then
			for f in "$CDIR"/log/*.out "$CDIR"/log/*.mkfs "$CDIR"/log/*.log; do
				[ -s "$f" ] && { echo "# --- tail of $f"; tail -n 15 "$f" | sed 's/^/#   /'; }
			done
		fi
		rm -rf "$DIR"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# a short path: the daemons' unix sockets live under it
DIR=$(mktemp -d /tmp/nvmeof-ceph.XXXXXX) || exit 99
CDIR=$DIR/cluster
T0=$(now)
vars=$("$CLUSTER" start "$CDIR" 2> "$DIR/start.err")
rc=$?
sed 's/^/# /' "$DIR/start.err"
[ $rc = 0 ] || { not_ok cluster-start "ceph-cluster.sh start failed (status $rc)"; exit 1; }
eval "$vars"
ok "cluster-start: HEALTH_OK, PGs active+clean in $(since "$T0") s ($NVMEOF_CEPH_MON)"

CEPH_ARGS="--id $NVMEOF_CEPH_ID"
export CEPH_ARGS
IMG=$NVMEOF_CEPH_POOL/smoke
mode=$(stat -c %a "$NVMEOF_CEPH_KEYRING")
if [ "$mode" = 600 ]; then ok "client.$NVMEOF_CEPH_ID keyring mode 0600"; else not_ok keyring "mode $mode"; fi
if timeout 60 rbd create "$IMG" --size 1G && timeout 60 rbd info "$IMG" | grep -q 'features:.*exclusive-lock'; then
	ok "rbd create as client.$NVMEOF_CEPH_ID (exclusive-lock on)"
else
	not_ok "rbd create" "failed or exclusive-lock missing"
fi

out=$(timeout 60 rbd bench --io-type write --io-size 4K --io-threads 32 --io-total 32M \
	--io-pattern rand "$IMG" 2>&1 | tail -n 1)
case "$out" in
elapsed:*) ok "rbd bench write 4K QD32: $out" ;;
*) not_ok "rbd bench" "$out" ;;
esac

head -c $((8 << 20)) /dev/urandom > "$DIR/data"
if timeout 60 rbd import --no-progress "$DIR/data" "$NVMEOF_CEPH_POOL/imported" &&
	timeout 60 rbd export --no-progress "$NVMEOF_CEPH_POOL/imported" "$DIR/back" 2> /dev/null &&
	cmp -s "$DIR/data" "$DIR/back"; then
	ok "rbd import/export of 8 MiB: identical"
else
	not_ok "rbd import/export" "failed or the data differ"
fi

log "rbd_aio_probe check $IMG"
"$PROBE" -n 4096 check "$IMG" > "$DIR/probe.out" 2>&1
rc=$?
sed 's/^/#   /' "$DIR/probe.out"
if [ $rc = 0 ]; then ok "rbd_aio_probe check"; else not_ok "rbd_aio_probe check" "status $rc"; fi

# exclusive-lock takeover: the holder is SIGKILLed, the next writer must break its lock
"$PROBE" hold "$IMG" > "$DIR/hold.out" 2>&1 &
HOLD_PID=$!
for _ in $(seq 300); do
	grep -q '^holding' "$DIR/hold.out" && break
	kill -0 $HOLD_PID 2> /dev/null || break
	sleep 0.1
done
if grep -q '^holding' "$DIR/hold.out"; then
	kill -KILL $HOLD_PID
	wait $HOLD_PID 2> /dev/null
	HOLD_PID=
	t1=$(now)
	"$PROBE" write1 "$IMG" > "$DIR/write1.out" 2>&1
	rc=$?
	took=$(since "$t1")
	sed 's/^/#   /' "$DIR/write1.out"
	if [ $rc = 0 ] && awk -v t="$took" -v m="$TAKEOVER_MAX_S" 'BEGIN { exit !(t < m) }'; then
		ok "exclusive-lock takeover: a write $took s after the holder was SIGKILLed"
	else
		not_ok "exclusive-lock takeover" "status $rc after $took s (max $TAKEOVER_MAX_S s)"
	fi
else
	sed 's/^/#   /' "$DIR/hold.out"
	not_ok "exclusive-lock takeover" "the holder never took the lock"
fi

"$CLUSTER" status "$CDIR" 2>&1 | sed 's/^/# /'
pids=$(cat "$CDIR"/run/*.pid)
t1=$(now)
"$CLUSTER" stop "$CDIR" 2>&1 | sed 's/^/# /'
left=
for p in $pids; do # a zombie not yet reaped by init counts as stopped
	read -r _ _ st _ 2> /dev/null < "/proc/$p/stat" && [ "$st" != Z ] && left="$left $p"
done
if [ -z "$left" ]; then
	ok "cluster-stop in $(since "$t1") s, no daemon left"
else
	not_ok cluster-stop "still running:$left"
fi
echo "# ceph-smoke: $PASS passed, $FAIL failed in $(since "$T0") s"
[ $FAIL = 0 ]
