/* SPDX-License-Identifier: MIT */
#include "nvme_tcp_pdu.h"

#include <errno.h>
#include <string.h>

#include "crc32c.h"
#include "endian.h"

static const uint8_t pdu_hlen[] = {
	[NVME_TCP_PDU_ICREQ] = sizeof(struct nvme_tcp_icreq),
	[NVME_TCP_PDU_ICRESP] = sizeof(struct nvme_tcp_icresp),
	[NVME_TCP_PDU_H2C_TERM_REQ] = sizeof(struct nvme_tcp_term_req),
	[NVME_TCP_PDU_C2H_TERM_REQ] = sizeof(struct nvme_tcp_term_req),
	[NVME_TCP_PDU_CAPSULE_CMD] = sizeof(struct nvme_tcp_cmd),
	[NVME_TCP_PDU_CAPSULE_RESP] = sizeof(struct nvme_tcp_rsp),
	[NVME_TCP_PDU_H2C_DATA] = sizeof(struct nvme_tcp_data_hdr),
	[NVME_TCP_PDU_C2H_DATA] = sizeof(struct nvme_tcp_data_hdr),
	[NVME_TCP_PDU_R2T] = sizeof(struct nvme_tcp_r2t_hdr),
};

uint8_t nvme_tcp_pdu_hlen(uint8_t pdu_type)
{
	return pdu_type < sizeof(pdu_hlen) ? pdu_hlen[pdu_type] : 0;
}

static bool pdu_is_ic(uint8_t type)
{
	return type == NVME_TCP_PDU_ICREQ || type == NVME_TCP_PDU_ICRESP;
}

static bool pdu_is_term(uint8_t type)
{
	return type == NVME_TCP_PDU_H2C_TERM_REQ || type == NVME_TCP_PDU_C2H_TERM_REQ;
}

/* PDU types that may carry data after the header. */
static bool pdu_has_data(uint8_t type)
{
	return type == NVME_TCP_PDU_CAPSULE_CMD || type == NVME_TCP_PDU_H2C_DATA ||
	       type == NVME_TCP_PDU_C2H_DATA;
}

static bool pdu_legal_for(uint8_t type, enum nvme_tcp_side side)
{
	switch (type) {
	case NVME_TCP_PDU_ICREQ:
	case NVME_TCP_PDU_H2C_TERM_REQ:
	case NVME_TCP_PDU_CAPSULE_CMD:
	case NVME_TCP_PDU_H2C_DATA:
		return side == NVME_TCP_CTRLR;
	case NVME_TCP_PDU_ICRESP:
	case NVME_TCP_PDU_C2H_TERM_REQ:
	case NVME_TCP_PDU_CAPSULE_RESP:
	case NVME_TCP_PDU_C2H_DATA:
	case NVME_TCP_PDU_R2T:
		return side == NVME_TCP_HOST;
	default:
		return false;
	}
}

static int fail(struct nvme_tcp_pdu_err *err, uint16_t fes, uint32_t fei)
{
	err->fes = fes;
	err->fei = fei;
	return -EPROTO;
}

size_t nvme_tcp_psh_len(const struct nvme_tcp_common_hdr *ch, bool hdgst)
{
	bool digest = hdgst && !pdu_is_ic(ch->pdu_type) && !pdu_is_term(ch->pdu_type);

	return ch->hlen + (digest ? NVME_TCP_DIGEST_LEN : 0);
}

int nvme_tcp_check_ch(const struct nvme_tcp_common_hdr *ch, enum nvme_tcp_side side,
		      bool ic_done, const struct nvme_tcp_params *p, struct nvme_tcp_pdu_err *err)
{
	uint8_t type = ch->pdu_type;
	uint32_t plen = get_le32(&ch->plen);
	uint8_t hlen = nvme_tcp_pdu_hlen(type);
	size_t psh;
	uint32_t data, limit, align;

	if (!pdu_legal_for(type, side))
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, pdu_type));
	/* IC exactly once, first; everything but a TermReq only after it. */
	if (pdu_is_ic(type) == ic_done && !pdu_is_term(type))
		return fail(err, NVME_TCP_FES_PDU_SEQ_ERR, 0);
	if (ch->hlen != hlen)
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, hlen));

	if (pdu_is_ic(type)) {
		if (plen != hlen)
			return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
				    offsetof(struct nvme_tcp_common_hdr, plen));
		if (ch->pdo != 0)
			return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
				    offsetof(struct nvme_tcp_common_hdr, pdo));
		return 0;
	}
	if (pdu_is_term(type)) {
		if (plen < hlen || plen > NVME_TCP_TERM_REQ_PLEN_MAX)
			return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
				    offsetof(struct nvme_tcp_common_hdr, plen));
		return 0;
	}

	/* The header digest flag follows the negotiation exactly. */
	if (!!(ch->flags & NVME_TCP_F_HDGST) != p->hdgst)
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, flags));
	psh = nvme_tcp_psh_len(ch, p->hdgst);
	if (plen < psh)
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, plen));

	if (!pdu_has_data(type) || plen == psh) {
		/* No data: no data digest flag, no PDO, and nothing after the header. */
		if (plen != psh)
			return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
				    offsetof(struct nvme_tcp_common_hdr, plen));
		if (type == NVME_TCP_PDU_H2C_DATA || type == NVME_TCP_PDU_C2H_DATA)
			return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
				    offsetof(struct nvme_tcp_common_hdr, plen));
		if (ch->flags & NVME_TCP_F_DDGST)
			return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
				    offsetof(struct nvme_tcp_common_hdr, flags));
		return 0;
	}

	if (!!(ch->flags & NVME_TCP_F_DDGST) != p->ddgst)
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, flags));
	align = ((side == NVME_TCP_CTRLR ? p->cpda : p->hpda) + 1u) * 4u;
	if (ch->pdo < psh || ch->pdo % align != 0 || ch->pdo > plen)
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, pdo));
	if (plen < ch->pdo + (p->ddgst ? NVME_TCP_DIGEST_LEN : 0u) + 1u)
		return fail(err, NVME_TCP_FES_INVALID_PDU_HDR,
			    offsetof(struct nvme_tcp_common_hdr, plen));
	data = plen - ch->pdo - (p->ddgst ? NVME_TCP_DIGEST_LEN : 0);

	switch (type) {
	case NVME_TCP_PDU_CAPSULE_CMD:
		limit = p->max_icdata;
		break;
	case NVME_TCP_PDU_H2C_DATA:
		limit = p->maxh2cdata;
		break;
	default:
		limit = p->max_c2hdata ? p->max_c2hdata : UINT32_MAX;
		break;
	}
	if (data > limit)
		return fail(err, NVME_TCP_FES_DATA_LIMIT_EXCEEDED,
			    offsetof(struct nvme_tcp_common_hdr, plen));
	return 0;
}

uint32_t nvme_tcp_data_len(const struct nvme_tcp_common_hdr *ch, bool ddgst)
{
	uint32_t plen = get_le32(&ch->plen);

	if (!pdu_has_data(ch->pdu_type) || ch->pdo == 0 || plen <= ch->pdo)
		return 0;
	return plen - ch->pdo - (ddgst ? NVME_TCP_DIGEST_LEN : 0);
}

uint32_t nvme_tcp_pad_len(const struct nvme_tcp_common_hdr *ch, bool hdgst)
{
	size_t psh = nvme_tcp_psh_len(ch, hdgst);

	if (!pdu_has_data(ch->pdu_type) || ch->pdo == 0 || ch->pdo < psh)
		return 0;
	return (uint32_t)(ch->pdo - psh);
}

uint32_t nvme_tcp_hdgst(const void *hdr, size_t hlen)
{
	return crc32c(hdr, hlen);
}

bool nvme_tcp_hdgst_ok(const void *hdr, size_t hlen)
{
	return get_le32((const uint8_t *)hdr + hlen) == nvme_tcp_hdgst(hdr, hlen);
}

static void set_ch(void *buf, uint8_t type, uint8_t flags, uint8_t hlen, uint8_t pdo, uint32_t plen)
{
	struct nvme_tcp_common_hdr *ch = buf;

	ch->pdu_type = type;
	ch->flags = flags;
	ch->hlen = hlen;
	ch->pdo = pdo;
	put_le32(&ch->plen, plen);
}

/* Finish a header: append the digest, zero the padding up to @pdo; return header bytes. */
static size_t finish_hdr(void *buf, size_t hlen, bool hdgst, size_t pdo)
{
	size_t len = hlen;

	if (hdgst) {
		put_le32((uint8_t *)buf + hlen, nvme_tcp_hdgst(buf, hlen));
		len += NVME_TCP_DIGEST_LEN;
	}
	if (pdo > len) {
		memset((uint8_t *)buf + len, 0, pdo - len);
		len = pdo;
	}
	return len;
}

size_t nvme_tcp_build_icreq(void *buf, bool hdgst, bool ddgst, uint8_t hpda, uint32_t maxr2t)
{
	struct nvme_tcp_icreq *ic = buf;

	memset(ic, 0, sizeof(*ic));
	set_ch(ic, NVME_TCP_PDU_ICREQ, 0, sizeof(*ic), 0, sizeof(*ic));
	put_le16(&ic->pfv, NVME_TCP_PFV_1_0);
	ic->hpda = hpda;
	ic->dgst = (hdgst ? NVME_TCP_DGST_HDR : 0) | (ddgst ? NVME_TCP_DGST_DATA : 0);
	put_le32(&ic->maxr2t, maxr2t);
	return sizeof(*ic);
}

size_t nvme_tcp_build_icresp(void *buf, bool hdgst, bool ddgst, uint8_t cpda, uint32_t maxh2cdata)
{
	struct nvme_tcp_icresp *ic = buf;

	memset(ic, 0, sizeof(*ic));
	set_ch(ic, NVME_TCP_PDU_ICRESP, 0, sizeof(*ic), 0, sizeof(*ic));
	put_le16(&ic->pfv, NVME_TCP_PFV_1_0);
	ic->cpda = cpda;
	ic->dgst = (hdgst ? NVME_TCP_DGST_HDR : 0) | (ddgst ? NVME_TCP_DGST_DATA : 0);
	put_le32(&ic->maxh2cdata, maxh2cdata);
	return sizeof(*ic);
}

static uint8_t data_flags(const struct nvme_tcp_params *p, uint32_t datal)
{
	return (p->hdgst ? NVME_TCP_F_HDGST : 0) | (p->ddgst && datal ? NVME_TCP_F_DDGST : 0);
}

static size_t aligned_pdo(size_t psh, uint8_t pda)
{
	size_t a = ((size_t)pda + 1) * 4;

	return (psh + a - 1) / a * a;
}

size_t nvme_tcp_build_capsule_cmd(void *buf, const struct nvme_cmd *sqe, uint32_t icdata_len,
				  const struct nvme_tcp_params *p)
{
	struct nvme_tcp_cmd *pdu = buf;
	size_t hlen = sizeof(*pdu);
	size_t psh = hlen + (p->hdgst ? NVME_TCP_DIGEST_LEN : 0);
	size_t pdo = icdata_len ? aligned_pdo(psh, p->cpda) : 0;
	uint32_t plen = (uint32_t)(icdata_len ? pdo + icdata_len + (p->ddgst ? 4 : 0) : psh);

	set_ch(pdu, NVME_TCP_PDU_CAPSULE_CMD, data_flags(p, icdata_len), (uint8_t)hlen,
	       (uint8_t)pdo, plen);
	memcpy(&pdu->sqe, sqe, sizeof(*sqe));
	return finish_hdr(pdu, hlen, p->hdgst, pdo);
}

size_t nvme_tcp_build_capsule_resp(void *buf, const struct nvme_cpl *cqe, bool hdgst)
{
	struct nvme_tcp_rsp *pdu = buf;
	size_t hlen = sizeof(*pdu);

	set_ch(pdu, NVME_TCP_PDU_CAPSULE_RESP, hdgst ? NVME_TCP_F_HDGST : 0, (uint8_t)hlen, 0,
	       (uint32_t)(hlen + (hdgst ? NVME_TCP_DIGEST_LEN : 0)));
	memcpy(&pdu->cqe, cqe, sizeof(*cqe));
	return finish_hdr(pdu, hlen, hdgst, 0);
}

size_t nvme_tcp_build_data(void *buf, uint8_t type, uint16_t cccid, uint16_t ttag, uint32_t datao,
			   uint32_t datal, uint8_t flags, const struct nvme_tcp_params *p)
{
	struct nvme_tcp_data_hdr *pdu = buf;
	size_t hlen = sizeof(*pdu);
	size_t psh = hlen + (p->hdgst ? NVME_TCP_DIGEST_LEN : 0);
	uint8_t pda = type == NVME_TCP_PDU_H2C_DATA ? p->cpda : p->hpda;
	size_t pdo = aligned_pdo(psh, pda);

	set_ch(pdu, type, (uint8_t)(data_flags(p, datal) | flags), (uint8_t)hlen, (uint8_t)pdo,
	       (uint32_t)(pdo + datal + (p->ddgst ? NVME_TCP_DIGEST_LEN : 0)));
	put_le16(&pdu->cccid, cccid);
	put_le16(&pdu->ttag, ttag);
	put_le32(&pdu->datao, datao);
	put_le32(&pdu->datal, datal);
	memset(pdu->rsvd20, 0, sizeof(pdu->rsvd20));
	return finish_hdr(pdu, hlen, p->hdgst, pdo);
}

size_t nvme_tcp_build_r2t(void *buf, uint16_t cccid, uint16_t ttag, uint32_t r2to, uint32_t r2tl,
			  bool hdgst)
{
	struct nvme_tcp_r2t_hdr *pdu = buf;
	size_t hlen = sizeof(*pdu);

	set_ch(pdu, NVME_TCP_PDU_R2T, hdgst ? NVME_TCP_F_HDGST : 0, (uint8_t)hlen, 0,
	       (uint32_t)(hlen + (hdgst ? NVME_TCP_DIGEST_LEN : 0)));
	put_le16(&pdu->cccid, cccid);
	put_le16(&pdu->ttag, ttag);
	put_le32(&pdu->r2to, r2to);
	put_le32(&pdu->r2tl, r2tl);
	memset(pdu->rsvd20, 0, sizeof(pdu->rsvd20));
	return finish_hdr(pdu, hlen, hdgst, 0);
}

size_t nvme_tcp_build_term_req(void *buf, uint8_t type, uint16_t fes, uint32_t fei,
			       const void *bad_hdr, size_t bad_len)
{
	struct nvme_tcp_term_req *pdu = buf;
	size_t hlen = sizeof(*pdu);

	if (!bad_hdr)
		bad_len = 0;
	if (bad_len > NVME_TCP_TERM_REQ_DATA_MAX)
		bad_len = NVME_TCP_TERM_REQ_DATA_MAX;
	memset(pdu, 0, hlen);
	set_ch(pdu, type, 0, (uint8_t)hlen, 0, (uint32_t)(hlen + bad_len));
	put_le16(&pdu->fes, fes);
	/* FEI is the offending field's offset for these two; reserved otherwise. */
	if (fes == NVME_TCP_FES_INVALID_PDU_HDR || fes == NVME_TCP_FES_UNSUPPORTED_PARAM)
		put_le32(pdu->fei, fei);
	if (bad_len)
		memcpy((uint8_t *)pdu + hlen, bad_hdr, bad_len);
	return hlen + bad_len;
}

const char *nvme_tcp_pdu_type_name(uint8_t pdu_type)
{
	static const char *const names[] = {
		[NVME_TCP_PDU_ICREQ] = "ICReq",
		[NVME_TCP_PDU_ICRESP] = "ICResp",
		[NVME_TCP_PDU_H2C_TERM_REQ] = "H2CTermReq",
		[NVME_TCP_PDU_C2H_TERM_REQ] = "C2HTermReq",
		[NVME_TCP_PDU_CAPSULE_CMD] = "CapsuleCmd",
		[NVME_TCP_PDU_CAPSULE_RESP] = "CapsuleResp",
		[NVME_TCP_PDU_H2C_DATA] = "H2CData",
		[NVME_TCP_PDU_C2H_DATA] = "C2HData",
		[NVME_TCP_PDU_R2T] = "R2T",
	};

	if (pdu_type < sizeof(names) / sizeof(names[0]) && names[pdu_type])
		return names[pdu_type];
	return "unknown";
}

const char *nvme_tcp_fes_name(uint16_t fes)
{
	switch (fes) {
	case NVME_TCP_FES_INVALID_PDU_HDR:
		return "invalid PDU header field";
	case NVME_TCP_FES_PDU_SEQ_ERR:
		return "PDU sequence error";
	case NVME_TCP_FES_HDR_DIGEST_ERR:
		return "header digest error";
	case NVME_TCP_FES_DATA_OUT_OF_RANGE:
		return "data transfer out of range";
	case NVME_TCP_FES_DATA_LIMIT_EXCEEDED:
		return "data transfer limit exceeded";
	case NVME_TCP_FES_UNSUPPORTED_PARAM:
		return "unsupported parameter";
	default:
		return "unknown";
	}
}
