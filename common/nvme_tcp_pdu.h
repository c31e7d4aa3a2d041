/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP PDU codec shared by the target and the initiator: header checks that every
 * receive path runs before trusting a length, digest helpers and PDU builders.
 * No sockets here: callers own buffers and I/O.
 */
#ifndef NVMEOF_NVME_TCP_PDU_H
#define NVMEOF_NVME_TCP_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvme_tcp_spec.h"

/* What one connection negotiated at ICReq/ICResp time. */
struct nvme_tcp_params {
	bool hdgst;		/* header digest on every PDU after IC */
	bool ddgst;		/* data digest on every PDU carrying data */
	uint8_t cpda;		/* PDU data alignment the controller asks of the host (dwords - 1) */
	uint8_t hpda;		/* PDU data alignment the host asks of the controller */
	uint32_t maxh2cdata;	/* largest H2CData payload */
	uint32_t max_icdata;	/* largest in-capsule data in a CapsuleCmd on this queue */
	uint32_t max_c2hdata;	/* largest C2HData payload the host accepts (host side check) */
};

/* Which end is receiving: that decides which PDU types are legal. */
enum nvme_tcp_side {
	NVME_TCP_CTRLR, /* target receives host-to-controller PDUs */
	NVME_TCP_HOST,	/* initiator receives controller-to-host PDUs */
};

/* A fatal PDU error: the TermReq's FES and FEI (byte offset of the bad field). */
struct nvme_tcp_pdu_err {
	uint16_t fes;
	uint32_t fei;
};

/* Fixed header length of a PDU type, or 0 for a type no one sends. */
uint8_t nvme_tcp_pdu_hlen(uint8_t pdu_type);

/*
 * Validate the 8-byte common header of a received PDU before anything else is read.
 * @ic_done: whether ICReq/ICResp is complete (before it, only ICReq/ICResp/TermReq).
 * Checks type (legal for @side and phase), hlen, digest flags against @p, PDO and PLEN
 * bounds, and the data length against the negotiated limits.
 * Returns 0, or -EPROTO with @err set for the TermReq.
 */
int nvme_tcp_check_ch(const struct nvme_tcp_common_hdr *ch, enum nvme_tcp_side side,
		      bool ic_done, const struct nvme_tcp_params *p, struct nvme_tcp_pdu_err *err);

/* Bytes of header to read in total: hlen plus the header digest when in force. */
size_t nvme_tcp_psh_len(const struct nvme_tcp_common_hdr *ch, bool hdgst);

/* Data carried by a PDU that passed nvme_tcp_check_ch() (0 when none). */
uint32_t nvme_tcp_data_len(const struct nvme_tcp_common_hdr *ch, bool ddgst);

/* Padding between header(+digest) and data, i.e. PDO - psh_len (0 when no data). */
uint32_t nvme_tcp_pad_len(const struct nvme_tcp_common_hdr *ch, bool hdgst);

/* Header digest over the hlen bytes at @hdr; stored LE right after the header. */
uint32_t nvme_tcp_hdgst(const void *hdr, size_t hlen);
bool nvme_tcp_hdgst_ok(const void *hdr, size_t hlen);

/*
 * Builders write a complete PDU header (with header digest and padding when in force)
 * into @buf (at least NVME_TCP_PSH_MAX bytes) and return its length. Data and the data
 * digest, when any, are the caller's to send after it; plen accounts for them.
 */
size_t nvme_tcp_build_icreq(void *buf, bool hdgst, bool ddgst, uint8_t hpda, uint32_t maxr2t);
size_t nvme_tcp_build_icresp(void *buf, bool hdgst, bool ddgst, uint8_t cpda, uint32_t maxh2cdata);
size_t nvme_tcp_build_capsule_cmd(void *buf, const struct nvme_cmd *sqe, uint32_t icdata_len,
				  const struct nvme_tcp_params *p);
size_t nvme_tcp_build_capsule_resp(void *buf, const struct nvme_cpl *cqe, bool hdgst);
/* @type is NVME_TCP_PDU_H2C_DATA or NVME_TCP_PDU_C2H_DATA; @flags may add LAST/SUCCESS.
 * Data alignment follows p->cpda for H2C and p->hpda for C2H. */
size_t nvme_tcp_build_data(void *buf, uint8_t type, uint16_t cccid, uint16_t ttag, uint32_t datao,
			   uint32_t datal, uint8_t flags, const struct nvme_tcp_params *p);
size_t nvme_tcp_build_r2t(void *buf, uint16_t cccid, uint16_t ttag, uint32_t r2to, uint32_t r2tl,
			  bool hdgst);
/* @type is H2C or C2H TermReq; @bad_hdr (may be NULL) is the offending PDU header. */
size_t nvme_tcp_build_term_req(void *buf, uint8_t type, uint16_t fes, uint32_t fei,
			       const void *bad_hdr, size_t bad_len);

const char *nvme_tcp_pdu_type_name(uint8_t pdu_type);
const char *nvme_tcp_fes_name(uint16_t fes);

#endif
