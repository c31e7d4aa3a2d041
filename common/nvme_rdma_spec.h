/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA transport binding (NVM Express RDMA Transport Specification 1.0): the RDMA CM
 * private data exchanged when a queue pair is connected, and the keyed SGL data block
 * descriptor that names host memory for RDMA READ/WRITE. Structures, constants and small
 * encode/decode helpers; no verbs, so both sides and the unit tests can use it anywhere.
 */
#ifndef NVMEOF_NVME_RDMA_SPEC_H
#define NVMEOF_NVME_RDMA_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "endian.h"
#include "nvme_spec.h"

#define NVME_RDMA_CM_FMT_1_0 0x0
#define NVME_RDMA_DEFAULT_PORT 4420
#define NVME_RDMA_KEYED_LEN_MAX 0xffffffu /* keyed SGL length is 24 bits */

/* Reject status (STS) in the RDMA_CM_REJECT private data. */
enum nvme_rdma_cm_status {
	NVME_RDMA_CM_INVALID_LEN = 0x01,     /* private data too short */
	NVME_RDMA_CM_INVALID_RECFMT = 0x02,  /* record format not supported */
	NVME_RDMA_CM_INVALID_QID = 0x03,     /* queue ID out of range */
	NVME_RDMA_CM_INVALID_HSQSIZE = 0x04, /* host submission queue size */
	NVME_RDMA_CM_INVALID_HRQSIZE = 0x05, /* host receive queue size */
	NVME_RDMA_CM_NO_RSC = 0x06,	     /* no resources */
	NVME_RDMA_CM_INVALID_IRD = 0x07,     /* inbound RDMA read depth */
	NVME_RDMA_CM_INVALID_ORD = 0x08,     /* outbound RDMA read depth */
	NVME_RDMA_CM_INVALID_CNTLID = 0x09,  /* controller ID */
};

/* RDMA_CM_REQUEST private data (host -> controller), 32 bytes. */
struct nvme_rdma_cm_req {
	uint8_t recfmt[2];  /* LE16: record format, 0 */
	uint8_t qid[2];	    /* LE16: 0 = admin queue */
	uint8_t hrqsize[2]; /* LE16: host receive queue size (responses it can take) */
	uint8_t hsqsize[2]; /* LE16: host submission queue size, 0's based */
	uint8_t cntlid[2];  /* LE16: controller ID (informational; FFFFh = any) */
	uint8_t rsvd10[22];
};
static_assert(sizeof(struct nvme_rdma_cm_req) == 32, "RDMA CM request private data");
static_assert(offsetof(struct nvme_rdma_cm_req, qid) == 2, "cm req qid");
static_assert(offsetof(struct nvme_rdma_cm_req, hrqsize) == 4, "cm req hrqsize");
static_assert(offsetof(struct nvme_rdma_cm_req, hsqsize) == 6, "cm req hsqsize");
static_assert(offsetof(struct nvme_rdma_cm_req, cntlid) == 8, "cm req cntlid");

/* RDMA_CM_ACCEPT private data (controller -> host), 32 bytes. */
struct nvme_rdma_cm_rep {
	uint8_t recfmt[2];  /* LE16 */
	uint8_t crqsize[2]; /* LE16: controller receive queue size (capsules it can take) */
	uint8_t rsvd4[28];
};
static_assert(sizeof(struct nvme_rdma_cm_rep) == 32, "RDMA CM accept private data");
static_assert(offsetof(struct nvme_rdma_cm_rep, crqsize) == 2, "cm rep crqsize");

/* RDMA_CM_REJECT private data (controller -> host), 4 bytes. */
struct nvme_rdma_cm_rej {
	uint8_t recfmt[2]; /* LE16 */
	uint8_t sts[2];	   /* LE16: enum nvme_rdma_cm_status */
};
static_assert(sizeof(struct nvme_rdma_cm_rej) == 4, "RDMA CM reject private data");
static_assert(offsetof(struct nvme_rdma_cm_rej, sts) == 2, "cm rej sts");

/* Decoded RDMA_CM_REQUEST private data. */
struct nvme_rdma_cm_params {
	uint16_t recfmt;
	uint16_t qid;
	uint16_t hrqsize;
	uint16_t hsqsize;
	uint16_t cntlid;
};

static inline void nvme_rdma_cm_req_build(struct nvme_rdma_cm_req *r, uint16_t qid,
					  uint16_t hrqsize, uint16_t hsqsize, uint16_t cntlid)
{
	memset(r, 0, sizeof(*r));
	put_le16(r->recfmt, NVME_RDMA_CM_FMT_1_0);
	put_le16(r->qid, qid);
	put_le16(r->hrqsize, hrqsize);
	put_le16(r->hsqsize, hsqsize);
	put_le16(r->cntlid, cntlid);
}

/* Decode @len bytes of request private data. Returns 0 or NVME_RDMA_CM_INVALID_LEN. The
 * values are not checked against any limit here. */
static inline int nvme_rdma_cm_req_parse(const void *buf, size_t len,
					 struct nvme_rdma_cm_params *p)
{
	const struct nvme_rdma_cm_req *r = buf;

	memset(p, 0, sizeof(*p));
	if (!buf || len < sizeof(*r))
		return NVME_RDMA_CM_INVALID_LEN;
	p->recfmt = get_le16(r->recfmt);
	p->qid = get_le16(r->qid);
	p->hrqsize = get_le16(r->hrqsize);
	p->hsqsize = get_le16(r->hsqsize);
	p->cntlid = get_le16(r->cntlid);
	return 0;
}

static inline void nvme_rdma_cm_rep_build(struct nvme_rdma_cm_rep *r, uint16_t crqsize)
{
	memset(r, 0, sizeof(*r));
	put_le16(r->recfmt, NVME_RDMA_CM_FMT_1_0);
	put_le16(r->crqsize, crqsize);
}

/* CRQSIZE from accept private data; -1 when it is too short or has another format. */
static inline int nvme_rdma_cm_rep_crqsize(const void *buf, size_t len)
{
	const struct nvme_rdma_cm_rep *r = buf;

	if (!buf || len < 4 || get_le16(r->recfmt) != NVME_RDMA_CM_FMT_1_0)
		return -1;
	return get_le16(r->crqsize);
}

static inline void nvme_rdma_cm_rej_build(struct nvme_rdma_cm_rej *r, uint16_t sts)
{
	put_le16(r->recfmt, NVME_RDMA_CM_FMT_1_0);
	put_le16(r->sts, sts);
}

/* STS from reject private data; -1 when it is too short or has another format. */
static inline int nvme_rdma_cm_rej_status(const void *buf, size_t len)
{
	const struct nvme_rdma_cm_rej *r = buf;

	if (!buf || len < sizeof(*r) || get_le16(r->recfmt) != NVME_RDMA_CM_FMT_1_0)
		return -1;
	return get_le16(r->sts);
}

static inline const char *nvme_rdma_cm_status_name(int sts)
{
	switch (sts) {
	case NVME_RDMA_CM_INVALID_LEN:
		return "invalid private data length";
	case NVME_RDMA_CM_INVALID_RECFMT:
		return "invalid record format";
	case NVME_RDMA_CM_INVALID_QID:
		return "invalid queue ID";
	case NVME_RDMA_CM_INVALID_HSQSIZE:
		return "invalid host submission queue size";
	case NVME_RDMA_CM_INVALID_HRQSIZE:
		return "invalid host receive queue size";
	case NVME_RDMA_CM_NO_RSC:
		return "no resources";
	case NVME_RDMA_CM_INVALID_IRD:
		return "invalid IRD";
	case NVME_RDMA_CM_INVALID_ORD:
		return "invalid ORD";
	case NVME_RDMA_CM_INVALID_CNTLID:
		return "invalid controller ID";
	default:
		return "unknown reason";
	}
}

/*
 * Keyed SGL data block descriptor (SGL type 4): ADDR (LE64) at 0, LENGTH (LE24) at 8,
 * KEY (LE32) at 11, type/subtype at 15. Subtype 0 names a plain address, subtype Fh asks
 * the controller to invalidate KEY when it sends the response (Send with Invalidate).
 */
static inline bool nvme_sgl_is_keyed(const struct nvme_sgl_desc *sgl)
{
	return (sgl->type >> 4) == NVME_SGL_TYPE_KEYED_DATA_BLOCK;
}

static inline uint32_t nvme_sgl_keyed_len(const struct nvme_sgl_desc *sgl)
{
	return (uint32_t)sgl->length[0] | (uint32_t)sgl->length[1] << 8 |
	       (uint32_t)sgl->length[2] << 16;
}

static inline uint32_t nvme_sgl_keyed_key(const struct nvme_sgl_desc *sgl)
{
	return get_le32(&sgl->length[3]);
}

static inline uint64_t nvme_sgl_addr(const struct nvme_sgl_desc *sgl)
{
	return get_le64(&sgl->addr);
}

static inline bool nvme_sgl_keyed_invalidate(const struct nvme_sgl_desc *sgl)
{
	return (sgl->type & 0xf) == NVME_SGL_SUBTYPE_INVALIDATE_KEY;
}

/* Fill @sgl as a keyed data block. Returns 0, or -1 when @len does not fit 24 bits. */
static inline int nvme_sgl_set_keyed(struct nvme_sgl_desc *sgl, uint64_t addr, uint32_t len,
				     uint32_t key, bool invalidate)
{
	if (len > NVME_RDMA_KEYED_LEN_MAX)
		return -1;
	memset(sgl, 0, sizeof(*sgl));
	put_le64(&sgl->addr, addr);
	sgl->length[0] = (uint8_t)len;
	sgl->length[1] = (uint8_t)(len >> 8);
	sgl->length[2] = (uint8_t)(len >> 16);
	put_le32(&sgl->length[3], key);
	sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK,
				  invalidate ? NVME_SGL_SUBTYPE_INVALIDATE_KEY
					     : NVME_SGL_SUBTYPE_ADDRESS);
	return 0;
}

/* Fill @sgl as in-capsule data at @offset (data block, offset subtype). */
static inline void nvme_sgl_set_inline(struct nvme_sgl_desc *sgl, uint64_t offset, uint32_t len)
{
	memset(sgl, 0, sizeof(*sgl));
	put_le64(&sgl->addr, offset);
	put_le32(sgl->length, len);
	sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
}

#endif
