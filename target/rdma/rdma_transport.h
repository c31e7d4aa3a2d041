/* SPDX-License-Identifier: MIT */
/* NVMe/RDMA target transport: what main() needs (built only with HAVE_RDMA). */
#ifndef NVMEOF_TARGET_RDMA_TRANSPORT_H
#define NVMEOF_TARGET_RDMA_TRANSPORT_H

#include <stdint.h>

#include "core/transport.h"

extern const struct nvmf_transport_ops nvmf_rdma_transport_ops;

/* Transport-wide counters (any thread, approximate). */
struct nvmf_rdma_stats {
	uint64_t accepted, rejected, closed;
	uint64_t connect_timeouts; /* closed for not finishing Connect in time */
	unsigned int live;         /* queue pairs not yet torn down */
	unsigned int connecting;   /* of which not yet through Connect */
	uint64_t registered_bytes; /* capsule and response buffers registered now (the data
				     * pools are apart) */
	uint64_t recv_capsules, inline_writes, rdma_reads, rdma_writes, sends, send_inv;
	uint64_t post_send_calls, post_recv_calls, cq_polls, cq_events;
};
void nvmf_rdma_get_stats(struct nvmf_rdma_stats *st);

/* Close every NVMe/RDMA connection and wait up to @timeout_ms for them to go (shutdown,
 * main thread, reactors running). 0 or -ETIMEDOUT. */
int nvmf_rdma_close_all(unsigned int timeout_ms);

#endif
