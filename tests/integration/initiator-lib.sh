#!/bin/bash
# initiator-lib.sh - libnvmeof against nvmeof-target on 127.0.0.1 (initiator_io.c):
# 4 queue pairs at QD 32 from one event loop and from one thread each (patterns written,
# read back and compared), scatter-gather across MDTS, Compare success and failure,
# Write Zeroes, Deallocate, Flush, LBA Out of Range; again with header and data digests
# and QD 64, and against 4096-byte blocks on a file namespace, also with registered
# buffers (nvmeof_mem_register / nvmeof_buf_alloc are plain memory on NVMe/TCP: the same
# code path must work and place nothing directly).
. "$(dirname "$0")/lib.sh"
it_init
IO=$top_builddir/tests/integration/initiator_io
NQN=nqn.2026-11.io.nvmeof:it-lib

run_io() {   # run_io NAME ARGS...
	local name=$1
	shift
	if "$IO" "$@" > "$IT_DIR/io.log" 2>&1; then
		it_ok "$name"
	else
		it_not_ok "$name" "initiator_io $* failed:"
	fi
	sed 's/^/#   /' "$IT_DIR/io.log" | grep -vE '^#   ok ' || :
}

it_start_target --nqn "$NQN" --ns ram:256M || it_finish
run_io "4 queues x QD 32" "nvme+tcp://127.0.0.1:$IT_PORT/$NQN" --queues 4 --qd 32 --seconds 1
run_io "2 queues x QD 64, digests" "nvme+tcp://127.0.0.1:$IT_PORT/$NQN" --queues 2 --qd 64 \
	--seconds 1 --digests
it_stop_target

truncate -s 64M "$IT_DIR/ns4k.img"
it_start_target --nqn "$NQN" --ns "$IT_DIR/ns4k.img" --block-size 4096 || it_finish
run_io "3 queues x QD 32, 4 KiB blocks, file" "nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" \
	--queues 3 --qd 32 --seconds 1
run_io "2 queues x QD 32, 4 KiB blocks, registered buffers" \
	"nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" --queues 2 --qd 32 --seconds 1 --registered
it_stop_target
it_finish
