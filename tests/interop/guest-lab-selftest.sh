#!/bin/bash
# guest-lab-selftest.sh - runs as root inside the interop lab guest (through
# run-in-guest.sh) for lab-selftest.sh: what the interop tests take for granted there.
#
# Usage: guest-lab-selftest.sh KVER STATUS
#   KVER    the kernel version build-guest.sh prepared (uname -r must match)
#   STATUS  exit with this status once done, whatever the checks found (the host checks
#           that it comes back through run-in-guest.sh)
# Results go to /mnt/host/guest-results (one "ok NAME" or "not ok NAME: why" per check);
# the token the host left in /mnt/host/token is copied to /mnt/host/token-back.
set -u
[ $# = 2 ] || { echo "usage: $0 KVER STATUS" >&2; exit 2; }
KVER=$1 STATUS=$2
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
: > "$RES"
ok() { echo "ok $1" | tee -a "$RES"; }
not_ok() { echo "not ok $1: $2" | tee -a "$RES"; }
check() {   # check NAME CMD...: ok when CMD succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "exit status $? from: $*"; fi
}

if [ "$(uname -r)" = "$KVER" ]; then ok kernel; else not_ok kernel "running $(uname -r), expected $KVER"; fi
for m in nvme-tcp nvmet-tcp rdma_rxe nvme-rdma nvmet-rdma; do
	check "modprobe-$m" modprobe "$m"
done
check eth0-address bash -c 'ip -4 -o addr show dev eth0 | grep -q " 10\.0\.2\.15/24 "'
if [ -z "$(ip route show default)" ]; then ok no-default-route; else
	not_ok no-default-route "$(ip route show default)"
fi
check rxe-on-eth0 rdma link add rxe0 type rxe netdev eth0
check rxe-active bash -c 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
P=/sys/kernel/config/nvmet/ports/1
check nvmet-port bash -c "mkdir $P && echo tcp > $P/addr_trtype && echo ipv4 > $P/addr_adrfam &&
	echo 127.0.0.1 > $P/addr_traddr && echo 4420 > $P/addr_trsvcid && rmdir $P"
check share-copy cp "$OUT/token" "$OUT/token-back"
check root-overlay bash -c 'touch /usr/lab-selftest && rm /usr/lab-selftest'
echo "guest: $(grep -c '^ok ' "$RES") ok, $(grep -c '^not ok ' "$RES") not ok"
exit "$STATUS"
