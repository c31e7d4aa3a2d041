/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA binding rules without verbs (see rdma_proto.h): RDMA CM request checks and
 * SGL classification. Pure functions, unit-tested in tests/unit/target/rdma_proto_ut.c.
 */
#include <string.h>

#include "rdma_proto.h"

int rdma_cm_check(const struct nvme_rdma_cm_params *p, const struct rdma_cm_limits *lim)
{
	uint32_t entries = (uint32_t)p->hsqsize + 1;

	if (p->recfmt != NVME_RDMA_CM_FMT_1_0)
		return NVME_RDMA_CM_INVALID_RECFMT;
	if (p->qid > lim->max_qid)
		return NVME_RDMA_CM_INVALID_QID;
	/* A queue of N entries holds N - 1 commands: at least two entries. */
	if (p->hsqsize == 0 ||
	    entries > (p->qid == 0 ? lim->max_admin_entries : lim->max_io_entries))
		return NVME_RDMA_CM_INVALID_HSQSIZE;
	/* The host must be able to take a response for every command it may send. */
	if (p->hrqsize < p->hsqsize)
		return NVME_RDMA_CM_INVALID_HRQSIZE;
	return 0;
}

uint16_t rdma_sgl_parse(const struct nvme_cmd *cmd, enum nvme_data_xfer xfer, uint32_t icdata,
			uint32_t max_io, struct rdma_sgl *out)
{
	const struct nvme_sgl_desc *sgl = &cmd->dptr.sgl1;
	const uint16_t dnr = NVME_STATUS_DNR;
	uint8_t type = sgl->type >> 4, sub = sgl->type & 0xf;

	memset(out, 0, sizeof(*out));
	if (xfer == NVME_XFER_BIDIRECTIONAL)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE) | dnr;

	if (type == NVME_SGL_TYPE_KEYED_DATA_BLOCK) {
		if (sub != NVME_SGL_SUBTYPE_ADDRESS && sub != NVME_SGL_SUBTYPE_INVALIDATE_KEY)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID) | dnr;
		out->invalidate = sub == NVME_SGL_SUBTYPE_INVALIDATE_KEY;
		out->key = nvme_sgl_keyed_key(sgl);
		out->addr = nvme_sgl_addr(sgl);
		out->len = nvme_sgl_keyed_len(sgl);
		if (xfer == NVME_XFER_NONE || out->len == 0) {
			out->len = 0;
			return 0;
		}
		if (out->len > max_io)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID) | dnr;
		out->kind = RDMA_SGL_KEYED;
		return 0;
	}

	if (sgl->type == NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET)) {
		uint64_t off = nvme_sgl_addr(sgl);
		uint32_t len = get_le32(sgl->length);

		if (xfer == NVME_XFER_NONE || len == 0)
			return 0;
		/* In-capsule data only carries write data to the controller. */
		if (xfer != NVME_XFER_HOST_TO_CTRLR)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID) | dnr;
		if (off > icdata)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_SGL_OFFSET) | dnr;
		if (len > icdata - off || len > max_io)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID) | dnr;
		out->kind = RDMA_SGL_INLINE;
		out->offset = (uint32_t)off;
		out->len = len;
		return 0;
	}

	/* Any other descriptor: fine when no data moves, unusable otherwise. */
	if (xfer == NVME_XFER_NONE)
		return 0;
	return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID) | dnr;
}
