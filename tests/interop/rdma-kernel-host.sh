#!/bin/bash
# rdma-kernel-host.sh - the Linux kernel NVMe/RDMA host against nvmeof-target, both inside
# the qemu lab guest over soft-RoCE (rdma_rxe on eth0, 10.0.2.15): nvme discover shows the
# subsystem with RDMA transport fields, nvme connect -t rdma -i 2 gets two I/O queues,
# Identify reports keyed SGLs, then ext4 mkfs, mount, write files, umount, fsck -f clean,
# disconnect, reconnect, every checksum matches, disconnect; no errors in the guest kernel
# log or the target log; clean target shutdown on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdma-lib.sh"
rdma_init
LAB_SMP=2 ix_guest "$top_srcdir/tests/interop/rdma-guest.sh" kernel-host "$IX_NQN" \
	"$IX_NSBYTES" 2
ix_guest_results
IX_TARGET_LOG=$IX_DIR/target.log
if [ -s "$IX_TARGET_LOG" ]; then
	ix_target_checks none 2
	# discovery + (admin + 2 I/O queues) twice
	ix_expect_log rdma-queue-pairs 7 'rdma connected on reactor' "one per NVMe/RDMA queue"
	rdma_target_log_clean
	rdma_show_target_log
else
	ix_not_ok target-log "the guest left no target log"
fi
ix_finish
