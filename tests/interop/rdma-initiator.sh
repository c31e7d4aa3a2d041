#!/bin/bash
# rdma-initiator.sh - libnvmeof's NVMe/RDMA transport inside the qemu lab guest over
# soft-RoCE (rdma_rxe on eth0): the nvmeof CLI against the Linux kernel target (nvmet-rdma)
# (discover, identify, write + read back + compare, initiator_io --loose), then against
# nvmeof-target: the CLI again, initiator_io with two queues at QD 32 checking every byte
# (plus SGL, Compare, Write Zeroes, Deallocate, Flush and error cases), and a short
# nvmeof-bench --verify run; no errors in the target log; clean target shutdown.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdma-lib.sh"
rdma_init
LAB_SMP=2 ix_guest "$top_srcdir/tests/interop/rdma-guest.sh" initiator "$IX_NQN" \
	$((128 * 1024 * 1024)) 2
ix_guest_results
IX_TARGET_LOG=$IX_DIR/target.log
if [ -s "$IX_TARGET_LOG" ]; then
	ix_expect_log rdma-queue-pairs 3 'rdma connected on reactor' "admin + 2 I/O queues at least"
	rdma_target_log_clean
	rdma_show_target_log
else
	ix_not_ok target-log "the guest left no target log"
fi
ix_finish
