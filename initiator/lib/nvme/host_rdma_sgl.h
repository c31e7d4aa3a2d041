/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA data pointer of a command whose data lies in registered memory, without verbs:
 * the keyed data block descriptors naming the caller's buffers, and how the SQE carries
 * them (one descriptor in SGL1; several as a Last Segment descriptor in SGL1 pointing at
 * a list in the capsule, at offset 0 of the in-capsule data).
 */
#ifndef NVMEOF_INITIATOR_HOST_RDMA_SGL_H
#define NVMEOF_INITIATOR_HOST_RDMA_SGL_H

#include <stdint.h>
#include <sys/uio.h>

#include "common/nvme_spec.h"
#include "queue/host_mem.h"

/* Most descriptors one command carries (the controller's MSDBD may allow fewer). */
#define HOST_RDMA_SGL_MAX 16

/*
 * Keyed descriptors for @len bytes of @iov from @off, adjacent pieces of one region
 * merged. Returns the number of descriptors (1..@max), 0 when some of the data is not
 * registered memory (the command takes the bounce path), or -E2BIG when it needs more
 * than @max descriptors.
 */
int host_rdma_sgl_build(const struct host_mem *m, const struct iovec *iov, int iovcnt, size_t off,
			uint32_t len, struct nvme_sgl_desc *descs, unsigned int max);

/* Point @sqe's SGL1 at @n descriptors: the descriptor itself for one, else a Last Segment
 * of @n * 16 bytes at in-capsule offset 0 (the caller sends @descs after the SQE). */
void host_rdma_sgl_set(struct nvme_cmd *sqe, const struct nvme_sgl_desc *descs, unsigned int n);

#endif
