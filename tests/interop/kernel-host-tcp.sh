#!/bin/bash
# kernel-host-tcp.sh - the Linux kernel NVMe/TCP host (qemu lab guest, 2 vCPUs) against
# nvmeof-target with a 256 MiB file-backed namespace: nvme discover lists the subsystem,
# nvme connect -i 2 gets two I/O queues (the host and the target agree), then ext4 mkfs,
# mount, write files, umount, fsck -f clean, disconnect, reconnect, every checksum matches,
# disconnect; no I/O errors or resets in the guest kernel log; clean target shutdown.
. "$(dirname "$0")/lib.sh"
ix_init
ix_kernel_host none 2
ix_finish
