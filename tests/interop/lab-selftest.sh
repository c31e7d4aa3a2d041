#!/bin/bash
# lab-selftest.sh - the interop lab harness itself (tests/interop/lab), in one boot of the
# guest kernel the tests use (NVMEOF_LAB_KERNEL / LAB_KERNEL, default stable): the guest
# runs the kernel build-guest.sh prepared, loads nvme-tcp, nvmet-tcp and rdma_rxe (and
# the NVMe/RDMA modules), brings up soft-RoCE on eth0 and an nvmet port in configfs, has
# no default route, reads a token the host wrote to the share and writes it back; the
# guest script's own exit status (42) comes back as run-in-guest.sh's. The kernel's NVMe
# authentication and TLS options are logged for reference.
. "$(dirname "$0")/lib.sh"
NVMEOF_INTEROP_TARGET=nvmet # checks the lab only: nvmeof-target not needed
ix_init

ENVF=${LAB_CACHE:-/var/cache/nvmeof-lab}/$LAB_KERNEL/guest.env
KVER=$(sed -n 's/^LAB_KVER=//p' "$ENVF" 2> /dev/null)
[ -n "$KVER" ] || ix_cannot_run "build-guest.sh left no kernel version in $ENVF"
KCONFIG=$(sed -n 's/^LAB_CONFIG=//p' "$ENVF")
opts=
for o in NVME_AUTH NVME_HOST_AUTH NVME_TARGET_AUTH NVME_TCP_TLS NVME_TARGET_TCP_TLS; do
	v=$(sed -n "s/^CONFIG_$o=//p" "$KCONFIG" 2> /dev/null)
	grep -q "^# CONFIG_$o is not set" "$KCONFIG" 2> /dev/null && v=n
	opts+=" $o=${v:-absent}"
done
ix_log "guest kernel $KVER:$opts"

TOKEN=lab-$RANDOM$RANDOM-$$
echo "$TOKEN" > "$IX_DIR/token"
t0=$(date +%s)
ix_guest "$top_srcdir/tests/interop/guest-lab-selftest.sh" "$KVER" 42
ix_log "guest run took $(($(date +%s) - t0)) s"
if [ "$IX_GUEST_RC" = 42 ]; then
	ix_ok guest-exit-status
	IX_GUEST_RC=0
else
	ix_not_ok guest-exit-status "run-in-guest.sh returned $IX_GUEST_RC, the guest script 42"
fi
ix_guest_results
if [ "$(cat "$IX_DIR/token-back" 2> /dev/null)" = "$TOKEN" ]; then
	ix_ok share-write-back
else
	ix_not_ok share-write-back "the guest did not write the token back to the share"
fi
ix_finish
