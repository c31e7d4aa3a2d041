/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA binding rules the target applies, without verbs: checking the RDMA CM request
 * private data of a new queue pair, and working out where a command's data is from its
 * SGL (in the capsule, or in host memory named by a keyed descriptor).
 */
#ifndef NVMEOF_TARGET_RDMA_PROTO_H
#define NVMEOF_TARGET_RDMA_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "common/nvme_rdma_spec.h"

/* Queue sizes and IDs this target accepts. */
struct rdma_cm_limits {
	uint32_t max_admin_entries; /* admin SQ entries (HSQSIZE + 1) at most */
	uint32_t max_io_entries;    /* I/O SQ entries at most (MQES + 1) */
	uint32_t max_qid;	    /* highest I/O queue ID */
};

/* 0, or the NVME_RDMA_CM_* status to reject the connection with. */
int rdma_cm_check(const struct nvme_rdma_cm_params *p, const struct rdma_cm_limits *lim);

enum rdma_sgl_kind {
	RDMA_SGL_NONE,	 /* the command moves no data */
	RDMA_SGL_INLINE, /* data in the capsule, after the SQE */
	RDMA_SGL_KEYED,	 /* data in host memory: RDMA READ / RDMA WRITE */
};

struct rdma_sgl {
	enum rdma_sgl_kind kind;
	uint32_t len;	 /* bytes */
	uint32_t offset; /* INLINE: where the data starts after the SQE */
	uint64_t addr;	 /* KEYED: host address */
	uint32_t key;	 /* KEYED: remote key */
	bool invalidate; /* KEYED: the host asked for Send with Invalidate of @key */
};

/*
 * Classify @cmd's SGL for a command moving @xfer. @icdata is the number of bytes the
 * capsule carried after the SQE, @max_io the largest transfer allowed. Returns 0 and fills
 * @out, or an NVMe status (SCT/SC with DNR) to complete the command with.
 */
uint16_t rdma_sgl_parse(const struct nvme_cmd *cmd, enum nvme_data_xfer xfer, uint32_t icdata,
			uint32_t max_io, struct rdma_sgl *out);

#endif
