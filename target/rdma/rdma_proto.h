/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA binding rules the target applies, without verbs: checking the RDMA CM request
 * private data of a new queue pair, and working out where a command's data is from its
 * SGL (in the capsule, or in host memory named by one keyed descriptor, or by a list of
 * keyed descriptors the capsule carries behind a Last Segment descriptor).
 */
#ifndef NVMEOF_TARGET_RDMA_PROTO_H
#define NVMEOF_TARGET_RDMA_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_rdma_spec.h"

/* Queue sizes and IDs this target accepts. */
struct rdma_cm_limits {
	uint32_t max_admin_entries; /* admin SQ entries (HSQSIZE + 1) at most */
	uint32_t max_io_entries;    /* I/O SQ entries at most (MQES + 1) */
	uint32_t max_qid;           /* highest I/O queue ID */
};

/* 0, or the NVME_RDMA_CM_* status to reject the connection with. */
int rdma_cm_check(const struct nvme_rdma_cm_params *p, const struct rdma_cm_limits *lim);

/*
 * Receive buffers registered and posted for a queue that has not been through Connect: a
 * host sends nothing but the Connect capsule until it has the response, so a peer that
 * asks for a deep queue (HSQSIZE) and never connects pins this many, not HSQSIZE + 1.
 * The rest, up to the CRQSIZE the CM accept announced, are posted before the Connect
 * response goes out.
 */
#define RDMA_PRECONNECT_RECVS 2

/* Receive buffers of a queue of @nrecvs (HSQSIZE + 1) to set up before Connect. */
uint32_t rdma_preconnect_recvs(uint32_t nrecvs);

/* Bytes between two capsule buffers of @capsule_size (64 + in-capsule data): cache lines. */
uint32_t rdma_capsule_stride(uint32_t capsule_size);

/*
 * Registered bytes for @nrecvs receive buffers of @capsule_size and the responses of
 * their request slots (two per receive buffer: a request outlives its capsule until its
 * response is sent).
 */
size_t rdma_capsule_region_bytes(uint32_t nrecvs, uint32_t capsule_size);

/*
 * A Fabrics Connect must name the queue the RDMA CM request set up (its QID picked the
 * queue's size limits and in-capsule size). 0 for any other command or a matching QID;
 * else Connect Invalid Parameters (with DNR) and, in *@dw0, the offset of the QID field.
 */
uint16_t rdma_connect_qid_check(const struct nvme_cmd *cmd, uint16_t cm_qid, uint32_t *dw0);

enum rdma_sgl_kind {
	RDMA_SGL_NONE,   /* the command moves no data */
	RDMA_SGL_INLINE, /* data in the capsule, after the SQE */
	RDMA_SGL_KEYED,  /* data in host memory: RDMA READ / RDMA WRITE */
};

/* Keyed data block descriptors one command may use (Identify Controller MSDBD). */
#define RDMA_SGL_DESC_MAX 16

/* One piece of host memory: the data's next @len bytes are at @addr under @key. */
struct rdma_sgl_keyed {
	uint64_t addr;
	uint32_t key;
	uint32_t len;
};

struct rdma_sgl {
	enum rdma_sgl_kind kind;
	uint32_t len;    /* bytes */
	uint32_t offset; /* INLINE: where the data starts after the SQE */
	uint32_t ndesc;  /* KEYED: pieces in @desc, in data order */
	struct rdma_sgl_keyed desc[RDMA_SGL_DESC_MAX];
	uint32_t key;    /* KEYED, one descriptor: its remote key */
	bool invalidate; /* KEYED, one descriptor: Send with Invalidate of @key asked for */
};

/* What a command's SGL may use. */
struct rdma_sgl_limits {
	uint32_t max_io;   /* bytes one command moves at most */
	uint32_t max_desc; /* keyed descriptors in a list (1..RDMA_SGL_DESC_MAX) */
};

/*
 * Classify @cmd's SGL for a command moving @xfer. @icd is the in-capsule data after the
 * SQE, @icdata bytes of it (a descriptor list lives there). Returns 0 and fills @out, or
 * an NVMe status (SCT/SC with DNR) to complete the command with.
 */
uint16_t rdma_sgl_parse(const struct nvme_cmd *cmd, enum nvme_data_xfer xfer, const uint8_t *icd,
			uint32_t icdata, const struct rdma_sgl_limits *lim, struct rdma_sgl *out);

#endif
