#!/bin/bash
# rdma-initiator.sh - libnvmeof's NVMe/RDMA transport inside the qemu lab guest over
# soft-RoCE (rdma_rxe on eth0): the nvmeof CLI against the Linux kernel target (nvmet-rdma)
# (discover, identify, write + read back + compare, initiator_io --loose), then against
# nvmeof-target: the CLI again, initiator_io with two queues at QD 32 checking every byte
# (plus SGL, Compare, Write Zeroes, Deallocate, Flush and error cases), the same with
# registered buffers against both targets (nvmet-rdma: MSDBD 1, one keyed descriptor;
# nvmeof-target: MSDBD 16, scatter-gather lists of keyed descriptors, byte-checked), and
# nvmeof-bench --verify; then nvmeof-bench with registered vs plain buffers (reported:
# the initiator's CPU per I/O, a ratio of the same run, not a pass/fail check); no
# errors in the target log; clean target shutdown.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rdma-lib.sh"
rdma_init
LAB_SMP=2 ix_guest "$top_srcdir/tests/interop/rdma-guest.sh" initiator "$IX_NQN" \
	$((128 * 1024 * 1024)) 2
ix_guest_results
# Initiator CPU per I/O, registered vs plain buffers (medians of the alternated runs).
if ls "$IX_DIR"/bench-registered-*.json > /dev/null 2>&1; then
	python3 - "$IX_DIR" << 'EOF' | while read -r line; do ix_log "$line"; done
import glob, json, statistics, sys
cpu = {}
keys = (("initiator_cpu_us_per_io", "CPU"), ("initiator_user_cpu_us_per_io", "user CPU"))
for f in sorted(glob.glob(sys.argv[1] + "/bench-*.json")):
    mode, rw = f.rsplit("/", 1)[1].split("-")[1:3]
    for c in json.load(open(f))["cells"]:
        for key, _ in keys:
            v = c["native"]["median"].get(key)
            if c["native"]["ran"] and v:
                cpu.setdefault((key, rw, c["bs"], mode), []).append(v)
for key, name in keys:
    for rw, bs in sorted({(k[1], k[2]) for k in cpu if k[0] == key}):
        r, p = cpu.get((key, rw, bs, "registered")), cpu.get((key, rw, bs, "plain"))
        if r and p:
            mr, mp = statistics.median(r), statistics.median(p)
            print("initiator %s per I/O, %s %dK: registered %.1f us, plain %.1f us, "
                  "registered/plain %.2f (%d+%d runs)" % (name, rw, bs // 1024, mr, mp,
                                                          mr / mp, len(r), len(p)))
EOF
fi
IX_TARGET_LOG=$IX_DIR/target.log
if [ -s "$IX_TARGET_LOG" ]; then
	ix_expect_log rdma-queue-pairs 3 'rdma connected on reactor' "admin + 2 I/O queues at least"
	rdma_target_log_clean
	rdma_show_target_log
else
	ix_not_ok target-log "the guest left no target log"
fi
ix_finish
