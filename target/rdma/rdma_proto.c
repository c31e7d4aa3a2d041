/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA binding rules without verbs (see rdma_proto.h): RDMA CM request checks and
 * SGL classification. Pure functions, unit-tested in tests/unit/target/rdma/rdma_proto_ut.c.
 */
#include <stddef.h>
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

uint32_t rdma_preconnect_recvs(uint32_t nrecvs)
{
	return nrecvs < RDMA_PRECONNECT_RECVS ? nrecvs : RDMA_PRECONNECT_RECVS;
}

uint32_t rdma_capsule_stride(uint32_t capsule_size)
{
	return (capsule_size + 63) & ~63u;
}

size_t rdma_capsule_region_bytes(uint32_t nrecvs, uint32_t capsule_size)
{
	return (size_t)nrecvs * rdma_capsule_stride(capsule_size) +
	       2 * (size_t)nrecvs * sizeof(struct nvme_cpl);
}

uint16_t rdma_connect_qid_check(const struct nvme_cmd *cmd, uint16_t cm_qid, uint32_t *dw0)
{
	const struct nvmf_connect_cmd *c = (const struct nvmf_connect_cmd *)cmd;

	*dw0 = 0;
	if (c->opc != NVME_OPC_FABRICS || c->fctype != NVMF_FCTYPE_CONNECT)
		return 0;
	if (get_le16(&c->qid) == cm_qid)
		return 0;
	*dw0 = NVME_CONNECT_IPO(offsetof(struct nvmf_connect_cmd, qid), false);
	return NVME_STATUS(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_PARAMETERS) |
	       NVME_STATUS_DNR;
}

#define SGL_ERR(sc) (NVME_STATUS(NVME_SCT_GENERIC, (sc)) | NVME_STATUS_DNR)

/*
 * A Last Segment descriptor with the offset subtype: @len bytes of keyed data block
 * descriptors at in-capsule offset @off. Zero-length descriptors move nothing and are
 * skipped; Send with Invalidate is only for a single descriptor, not asked for in a list.
 */
static uint16_t parse_list(const struct nvme_sgl_desc *sgl, const uint8_t *icd, uint32_t icdata,
			   const struct rdma_sgl_limits *lim, struct rdma_sgl *out)
{
	uint64_t off = nvme_sgl_addr(sgl);
	uint32_t len = get_le32(sgl->length), n = len / (uint32_t)sizeof(*sgl);
	uint64_t total = 0;

	if (len == 0 || len % sizeof(*sgl))
		return SGL_ERR(NVME_SC_INVALID_SGL_SEG_DESC);
	if (n > lim->max_desc)
		return SGL_ERR(NVME_SC_INVALID_NUM_SGL_DESC);
	if (off > icdata || !icd)
		return SGL_ERR(NVME_SC_INVALID_SGL_OFFSET);
	if (len > icdata - off)
		return SGL_ERR(NVME_SC_INVALID_SGL_SEG_DESC);
	for (uint32_t i = 0; i < n; i++) {
		struct nvme_sgl_desc d;
		uint32_t dlen;

		memcpy(&d, icd + off + (size_t)i * sizeof(d), sizeof(d));
		if (d.type !=
		    NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK, NVME_SGL_SUBTYPE_ADDRESS))
			return SGL_ERR(NVME_SC_SGL_DESC_TYPE_INVALID);
		dlen = nvme_sgl_keyed_len(&d);
		total += dlen;
		if (total > lim->max_io)
			return SGL_ERR(NVME_SC_DATA_SGL_LENGTH_INVALID);
		if (dlen == 0)
			continue;
		out->desc[out->ndesc].addr = nvme_sgl_addr(&d);
		out->desc[out->ndesc].key = nvme_sgl_keyed_key(&d);
		out->desc[out->ndesc].len = dlen;
		out->ndesc++;
	}
	out->len = (uint32_t)total;
	if (out->len)
		out->kind = RDMA_SGL_KEYED;
	return 0;
}

uint16_t rdma_sgl_parse(const struct nvme_cmd *cmd, enum nvme_data_xfer xfer, const uint8_t *icd,
			uint32_t icdata, const struct rdma_sgl_limits *lim, struct rdma_sgl *out)
{
	const struct nvme_sgl_desc *sgl = &cmd->dptr.sgl1;
	const uint16_t dnr = NVME_STATUS_DNR;
	uint32_t max_io = lim->max_io;
	uint8_t type = sgl->type >> 4, sub = sgl->type & 0xf;

	memset(out, 0, sizeof(*out));
	if (xfer == NVME_XFER_BIDIRECTIONAL)
		return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE) | dnr;

	if (type == NVME_SGL_TYPE_KEYED_DATA_BLOCK) {
		if (sub != NVME_SGL_SUBTYPE_ADDRESS && sub != NVME_SGL_SUBTYPE_INVALIDATE_KEY)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID) | dnr;
		out->invalidate = sub == NVME_SGL_SUBTYPE_INVALIDATE_KEY;
		out->key = nvme_sgl_keyed_key(sgl);
		out->desc[0].addr = nvme_sgl_addr(sgl);
		out->desc[0].key = out->key;
		out->desc[0].len = nvme_sgl_keyed_len(sgl);
		out->len = out->desc[0].len;
		if (xfer == NVME_XFER_NONE || out->len == 0) {
			out->len = 0;
			out->desc[0].len = 0;
			return 0;
		}
		if (out->len > max_io)
			return NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID) | dnr;
		out->ndesc = 1;
		out->kind = RDMA_SGL_KEYED;
		return 0;
	}

	if (sgl->type == NVME_SGL_TYPE(NVME_SGL_TYPE_LAST_SEGMENT, NVME_SGL_SUBTYPE_OFFSET)) {
		uint16_t st;

		if (xfer == NVME_XFER_NONE)
			return 0;
		st = parse_list(sgl, icd, icdata, lim, out);
		if (st)
			memset(out, 0, sizeof(*out));
		return st;
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
