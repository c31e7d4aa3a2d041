#!/bin/bash
# kernel-host-digest.sh - as kernel-host-tcp.sh with header and data digests (CRC32C) on
# every PDU (nvme connect -g -G): the connect only succeeds when the target's ICResp grants
# exactly what was asked, every PDU is checked by both sides, and the target's log must
# show both digests enabled on each queue of both connections.
. "$(dirname "$0")/lib.sh"
ix_init
ix_kernel_host hdgst+ddgst 2
ix_finish
