/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport PDUs (NVM Express TCP Transport Specification 1.0).
 * Structures and constants only; encode/decode helpers live in nvme_tcp_pdu.[ch].
 */
#ifndef NVMEOF_NVME_TCP_SPEC_H
#define NVMEOF_NVME_TCP_SPEC_H

#include "nvme_spec.h"

#define NVME_TCP_PFV_1_0 0
#define NVME_TCP_DIGEST_LEN 4
#define NVME_TCP_DEFAULT_PORT 4420
#define NVME_TCP_DISCOVERY_PORT 8009

enum nvme_tcp_pdu_type {
	NVME_TCP_PDU_ICREQ = 0x00,
	NVME_TCP_PDU_ICRESP = 0x01,
	NVME_TCP_PDU_H2C_TERM_REQ = 0x02,
	NVME_TCP_PDU_C2H_TERM_REQ = 0x03,
	NVME_TCP_PDU_CAPSULE_CMD = 0x04,
	NVME_TCP_PDU_CAPSULE_RESP = 0x05,
	NVME_TCP_PDU_H2C_DATA = 0x06,
	NVME_TCP_PDU_C2H_DATA = 0x07,
	NVME_TCP_PDU_R2T = 0x09,
};

/* Common header flags */
#define NVME_TCP_F_HDGST (1u << 0)
#define NVME_TCP_F_DDGST (1u << 1)
#define NVME_TCP_F_DATA_LAST (1u << 2)	  /* H2CData / C2HData */
#define NVME_TCP_F_DATA_SUCCESS (1u << 3) /* C2HData only */

/* ICReq/ICResp DGST field */
#define NVME_TCP_DGST_HDR (1u << 0)
#define NVME_TCP_DGST_DATA (1u << 1)

/* Fatal error status in a TermReq */
enum nvme_tcp_fes {
	NVME_TCP_FES_INVALID_PDU_HDR = 0x01,
	NVME_TCP_FES_PDU_SEQ_ERR = 0x02,
	NVME_TCP_FES_HDR_DIGEST_ERR = 0x03,
	NVME_TCP_FES_DATA_OUT_OF_RANGE = 0x04,
	NVME_TCP_FES_DATA_LIMIT_EXCEEDED = 0x05, /* also "R2T limit exceeded" */
	NVME_TCP_FES_UNSUPPORTED_PARAM = 0x06,
};

struct nvme_tcp_common_hdr {
	uint8_t pdu_type;
	uint8_t flags;
	uint8_t hlen;
	uint8_t pdo;
	uint32_t plen; /* LE: whole PDU, header + digests + padding + data */
};
static_assert(sizeof(struct nvme_tcp_common_hdr) == 8, "common header");
static_assert(offsetof(struct nvme_tcp_common_hdr, plen) == 4, "plen");

struct nvme_tcp_icreq {
	struct nvme_tcp_common_hdr ch;
	uint16_t pfv;
	uint8_t hpda; /* host PDU data alignment, dwords - 1 */
	uint8_t dgst;
	uint32_t maxr2t; /* 0's based */
	uint8_t rsvd16[112];
};
static_assert(sizeof(struct nvme_tcp_icreq) == 128, "ICReq");
static_assert(offsetof(struct nvme_tcp_icreq, pfv) == 8, "ICReq pfv");
static_assert(offsetof(struct nvme_tcp_icreq, hpda) == 10, "ICReq hpda");
static_assert(offsetof(struct nvme_tcp_icreq, dgst) == 11, "ICReq dgst");
static_assert(offsetof(struct nvme_tcp_icreq, maxr2t) == 12, "ICReq maxr2t");

struct nvme_tcp_icresp {
	struct nvme_tcp_common_hdr ch;
	uint16_t pfv;
	uint8_t cpda;
	uint8_t dgst;
	uint32_t maxh2cdata; /* bytes */
	uint8_t rsvd16[112];
};
static_assert(sizeof(struct nvme_tcp_icresp) == 128, "ICResp");
static_assert(offsetof(struct nvme_tcp_icresp, cpda) == 10, "ICResp cpda");
static_assert(offsetof(struct nvme_tcp_icresp, maxh2cdata) == 12, "ICResp maxh2cdata");

struct nvme_tcp_term_req {
	struct nvme_tcp_common_hdr ch;
	uint16_t fes;
	uint8_t fei[4];
	uint8_t rsvd14[10];
	/* followed by up to NVME_TCP_TERM_REQ_DATA_MAX bytes of the offending header */
};
static_assert(sizeof(struct nvme_tcp_term_req) == 24, "TermReq");
static_assert(offsetof(struct nvme_tcp_term_req, fes) == 8, "TermReq fes");
static_assert(offsetof(struct nvme_tcp_term_req, fei) == 10, "TermReq fei");
#define NVME_TCP_TERM_REQ_DATA_MAX 128
#define NVME_TCP_TERM_REQ_PLEN_MAX (sizeof(struct nvme_tcp_term_req) + NVME_TCP_TERM_REQ_DATA_MAX)

struct nvme_tcp_cmd {
	struct nvme_tcp_common_hdr ch;
	struct nvme_cmd sqe;
};
static_assert(sizeof(struct nvme_tcp_cmd) == 72, "CapsuleCmd");
static_assert(offsetof(struct nvme_tcp_cmd, sqe) == 8, "CapsuleCmd sqe");

struct nvme_tcp_rsp {
	struct nvme_tcp_common_hdr ch;
	struct nvme_cpl cqe;
};
static_assert(sizeof(struct nvme_tcp_rsp) == 24, "CapsuleResp");

/* H2CData and C2HData share a layout. */
struct nvme_tcp_data_hdr {
	struct nvme_tcp_common_hdr ch;
	uint16_t cccid;
	uint16_t ttag; /* H2CData only */
	uint32_t datao;
	uint32_t datal;
	uint8_t rsvd20[4];
};
static_assert(sizeof(struct nvme_tcp_data_hdr) == 24, "data PDU header");
static_assert(offsetof(struct nvme_tcp_data_hdr, cccid) == 8, "data cccid");
static_assert(offsetof(struct nvme_tcp_data_hdr, ttag) == 10, "data ttag");
static_assert(offsetof(struct nvme_tcp_data_hdr, datao) == 12, "data datao");
static_assert(offsetof(struct nvme_tcp_data_hdr, datal) == 16, "data datal");

struct nvme_tcp_r2t_hdr {
	struct nvme_tcp_common_hdr ch;
	uint16_t cccid;
	uint16_t ttag;
	uint32_t r2to;
	uint32_t r2tl;
	uint8_t rsvd20[4];
};
static_assert(sizeof(struct nvme_tcp_r2t_hdr) == 24, "R2T");
static_assert(offsetof(struct nvme_tcp_r2t_hdr, r2to) == 12, "R2T r2to");
static_assert(offsetof(struct nvme_tcp_r2t_hdr, r2tl) == 16, "R2T r2tl");

/* Largest PDU header we ever receive or send (ICReq/ICResp), plus a header digest. */
#define NVME_TCP_MAX_HDR_LEN 128
#define NVME_TCP_PSH_MAX (NVME_TCP_MAX_HDR_LEN + NVME_TCP_DIGEST_LEN)

#endif
