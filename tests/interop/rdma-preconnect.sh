#!/bin/bash
# rdma-preconnect.sh - NVMe/RDMA queues that never send Connect, inside the qemu lab guest
# over soft-RoCE (rdma_rxe on eth0). rdma_fault_client opens 20 queues whose RDMA CM
# request asks for the deepest I/O queue (HSQSIZE 127, 64 KiB of in-capsule data: 8 MiB of
# receive buffers each if registered up front) and never sends Connect, against
# nvmeof-target --max-connecting 8 --connect-timeout 5: at most 8 are open at once and the
# rest refused, the target pins at most 2 MiB for them (VmPin), and every accepted one is
# closed at the deadline (the statistics count them, nothing stays registered); a healthy raw host and the nvmeof CLI then do I/O. Connects
# whose QID differs from the QID of the queue's CM request are refused with Connect
# Invalid Parameters. The daemon must exit cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdma-lib.sh"
rdma_init
src=$(rdma_real_bin "$top_builddir/tests/interop" rdma_fault_client) || {
	ix_log "no $top_builddir/tests/interop/rdma_fault_client (make check builds it)"
	exit 99
}
cp "$src" "$IX_DIR/bin/rdma_fault_client"
chmod a+rx "$IX_DIR/bin/rdma_fault_client"
LAB_SMP=2 ix_guest "$top_srcdir/tests/interop/rdma-guest.sh" preconnect "$IX_NQN" \
	$((64 * 1024 * 1024))
ix_guest_results
IX_TARGET_LOG=$IX_DIR/target.log
if [ -s "$IX_TARGET_LOG" ]; then
	ix_expect_log connect-deadline 1 'rdma connection closed \(no Connect in time\)' \
		"queues without Connect are closed at the deadline"
	ix_expect_log qid-mismatch-logged 1 'Connect for queue [0-9]+ on the queue the RDMA CM' \
		"a Connect for another queue is logged"
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
