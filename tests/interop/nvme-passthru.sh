#!/bin/bash
# nvme-passthru.sh - nvmeof-target on a real NVMe controller (qemu's emulated one, over a
# raw image, LAB_NVME_IMAGE) inside the lab guest: the drive served by NVMe passthrough
# (/dev/ng0n1) and as a direct block device (/dev/nvme0n1); the checks are in
# guest-nvme-passthru.sh.
. "$(dirname "$0")/lib.sh"
ix_init
truncate -s 256M "$IX_DIR/drive.img"
LAB_NVME_IMAGE=$IX_DIR/drive.img ix_guest "$top_srcdir/tests/interop/guest-nvme-passthru.sh" \
	"$(cd "$top_builddir" && pwd)"
ix_guest_results
ix_finish
