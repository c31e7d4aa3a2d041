#!/bin/bash
# rdma-fault.sh - fault injection against nvmeof-target's NVMe/RDMA port inside the qemu
# lab guest over soft-RoCE (rdma_rxe on eth0): rdma_fault_client, a host on librdmacm/
# libibverbs directly, dies mid-transfer (Write/Read posted, then exit without a
# disconnect, sometimes with its memory region deregistered first), moves its QP to the
# error state under outstanding commands, posts a Send with an lkey that does not exist,
# sends a 10-byte capsule, and names unregistered rkeys / addresses outside its region in
# keyed SGLs (the target's RDMA READ/WRITE fails: it must fail the command or drop the
# queue). After each case the daemon must be alive and serve the nvmeof CLI over
# nvme+rdma:// (write, read back, compare) and a healthy raw host; at the end it must
# exit cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdma-lib.sh"
rdma_init
src=$(rdma_real_bin "$top_builddir/tests/interop" rdma_fault_client) || {
	ix_log "no $top_builddir/tests/interop/rdma_fault_client (make check builds it)"
	exit 99
}
cp "$src" "$IX_DIR/bin/rdma_fault_client"
chmod a+rx "$IX_DIR/bin/rdma_fault_client"
LAB_SMP=2 ix_guest "$top_srcdir/tests/interop/rdma-guest.sh" fault "$IX_NQN" \
	$((64 * 1024 * 1024))
ix_guest_results
IX_TARGET_LOG=$IX_DIR/target.log
if [ -s "$IX_TARGET_LOG" ]; then
	ix_expect_log rdma-transfer-errors 1 'RDMA transfer error|queue pair flushed|failed:' \
		"the failed RDMA transfers are logged"
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$IX_TARGET_LOG"; then
		ix_not_ok target-sanitizers "sanitizer report in the target log"
	else
		ix_ok target-sanitizers
	fi
	rdma_show_target_log
else
	ix_not_ok target-log "the guest left no target log"
fi
ix_finish
