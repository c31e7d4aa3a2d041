/* SPDX-License-Identifier: MIT */
/* NVMe/TCP PDU codec: header checks per side and phase, lengths, digests, builders. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/nvme_tcp_pdu.h"
#include "ut.h"

enum { CT = NVME_TCP_CTRLR, HO = NVME_TCP_HOST };

/* Negotiated parameters used by the table (index into params[]). */
enum { P_NONE, P_HD, P_DD, P_BOTH, P_CPDA3, P_LIMITS };
static const struct nvme_tcp_params params[] = {
	[P_NONE] = { .maxh2cdata = 131072, .max_icdata = 8192 },
	[P_HD] = { .hdgst = true, .maxh2cdata = 131072, .max_icdata = 8192 },
	[P_DD] = { .ddgst = true, .maxh2cdata = 131072, .max_icdata = 8192 },
	[P_BOTH] = { .hdgst = true, .ddgst = true, .maxh2cdata = 131072, .max_icdata = 8192 },
	[P_CPDA3] = { .cpda = 3, .hpda = 3, .maxh2cdata = 131072, .max_icdata = 8192 },
	[P_LIMITS] = { .maxh2cdata = 4096, .max_icdata = 1024, .max_c2hdata = 2048 },
};

#define OK 0, 0
#define BAD(fes, fei) NVME_TCP_FES_##fes, fei
#define HDR 1  /* INVALID_PDU_HDR shorthand in the table */
#define F_HD NVME_TCP_F_HDGST
#define F_DD NVME_TCP_F_DDGST

struct ch_case {
	const char *name;
	int side;
	bool ic_done;
	int params;
	uint8_t type, flags, hlen, pdo;
	uint32_t plen;
	uint16_t fes; /* 0: accepted */
	uint32_t fei;
};

static const struct ch_case ch_cases[] = {
	/* controller side, before IC */
	{ "ctrl: ICReq", CT, false, P_NONE, 0x00, 0, 128, 0, 128, OK },
	{ "ctrl: H2CTermReq before IC", CT, false, P_NONE, 0x02, 0, 24, 0, 24, OK },
	{ "ctrl: H2CTermReq with data", CT, false, P_NONE, 0x02, 0, 24, 0, 152, OK },
	{ "ctrl: H2CTermReq too long", CT, false, P_NONE, 0x02, 0, 24, 0, 153, BAD(INVALID_PDU_HDR, 4) },
	{ "ctrl: CapsuleCmd before IC", CT, false, P_NONE, 0x04, 0, 72, 0, 72, BAD(PDU_SEQ_ERR, 0) },
	{ "ctrl: H2CData before IC", CT, false, P_NONE, 0x06, 0, 24, 24, 536, BAD(PDU_SEQ_ERR, 0) },
	{ "ctrl: ICResp", CT, false, P_NONE, 0x01, 0, 128, 0, 128, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: C2HTermReq", CT, false, P_NONE, 0x03, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: ICReq plen 132", CT, false, P_NONE, 0x00, 0, 128, 0, 132, BAD(INVALID_PDU_HDR, 4) },
	{ "ctrl: ICReq pdo 8", CT, false, P_NONE, 0x00, 0, 128, 8, 128, BAD(INVALID_PDU_HDR, 3) },
	{ "ctrl: ICReq hlen 127", CT, false, P_NONE, 0x00, 0, 127, 0, 127, BAD(INVALID_PDU_HDR, 2) },
	/* controller side, after IC */
	{ "ctrl: second ICReq", CT, true, P_NONE, 0x00, 0, 128, 0, 128, BAD(PDU_SEQ_ERR, 0) },
	{ "ctrl: CapsuleCmd", CT, true, P_NONE, 0x04, 0, 72, 0, 72, OK },
	{ "ctrl: CapsuleCmd + 8K", CT, true, P_NONE, 0x04, 0, 72, 72, 72 + 8192, OK },
	{ "ctrl: CapsuleCmd + 8K+1", CT, true, P_NONE, 0x04, 0, 72, 72, 72 + 8193,
	  BAD(DATA_LIMIT_EXCEEDED, 4) },
	{ "ctrl: CapsuleCmd hlen 64", CT, true, P_NONE, 0x04, 0, 64, 0, 64, BAD(INVALID_PDU_HDR, 2) },
	{ "ctrl: CapsuleCmd plen 71", CT, true, P_NONE, 0x04, 0, 72, 0, 71, BAD(INVALID_PDU_HDR, 4) },
	{ "ctrl: CapsuleCmd pdo 68", CT, true, P_NONE, 0x04, 0, 72, 68, 600, BAD(INVALID_PDU_HDR, 3) },
	{ "ctrl: CapsuleCmd pdo > plen", CT, true, P_NONE, 0x04, 0, 72, 200, 100,
	  BAD(INVALID_PDU_HDR, 3) },
	{ "ctrl: CapsuleCmd pdo == plen", CT, true, P_NONE, 0x04, 0, 72, 100, 100,
	  BAD(INVALID_PDU_HDR, 4) },
	{ "ctrl: CapsuleCmd DDGST, no data", CT, true, P_DD, 0x04, F_DD, 72, 0, 72,
	  BAD(INVALID_PDU_HDR, 1) },
	{ "ctrl: CapsuleCmd data, DDGST", CT, true, P_DD, 0x04, F_DD, 72, 72, 72 + 512 + 4, OK },
	{ "ctrl: CapsuleCmd data, DDGST flag missing", CT, true, P_DD, 0x04, 0, 72, 72, 72 + 512 + 4,
	  BAD(INVALID_PDU_HDR, 1) },
	{ "ctrl: CapsuleCmd data, DDGST not negotiated", CT, true, P_NONE, 0x04, F_DD, 72, 72,
	  72 + 512, BAD(INVALID_PDU_HDR, 1) },
	{ "ctrl: CapsuleCmd HDGST", CT, true, P_HD, 0x04, F_HD, 72, 0, 76, OK },
	{ "ctrl: CapsuleCmd HDGST missing", CT, true, P_HD, 0x04, 0, 72, 0, 76,
	  BAD(INVALID_PDU_HDR, 1) },
	{ "ctrl: CapsuleCmd HDGST unasked", CT, true, P_NONE, 0x04, F_HD, 72, 0, 76,
	  BAD(INVALID_PDU_HDR, 1) },
	{ "ctrl: CapsuleCmd HDGST plen 72", CT, true, P_HD, 0x04, F_HD, 72, 0, 72,
	  BAD(INVALID_PDU_HDR, 4) },
	{ "ctrl: CapsuleCmd both digests + data", CT, true, P_BOTH, 0x04, F_HD | F_DD, 72, 76,
	  76 + 4096 + 4, OK },
	{ "ctrl: CapsuleCmd pdo 76 with CPDA 3", CT, true, P_CPDA3, 0x04, 0, 72, 76, 76 + 512,
	  BAD(INVALID_PDU_HDR, 3) },
	{ "ctrl: CapsuleCmd pdo 80 with CPDA 3", CT, true, P_CPDA3, 0x04, 0, 72, 80, 80 + 512, OK },
	{ "ctrl: H2CData", CT, true, P_NONE, 0x06, 0, 24, 24, 24 + 4096, OK },
	{ "ctrl: H2CData no data", CT, true, P_NONE, 0x06, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 4) },
	{ "ctrl: H2CData over MAXH2CDATA", CT, true, P_LIMITS, 0x06, 0, 24, 24, 24 + 4100,
	  BAD(DATA_LIMIT_EXCEEDED, 4) },
	{ "ctrl: H2CData at MAXH2CDATA", CT, true, P_LIMITS, 0x06, 0, 24, 24, 24 + 4096, OK },
	{ "ctrl: in-capsule over 1K", CT, true, P_LIMITS, 0x04, 0, 72, 72, 72 + 1025,
	  BAD(DATA_LIMIT_EXCEEDED, 4) },
	{ "ctrl: R2T", CT, true, P_NONE, 0x09, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: C2HData", CT, true, P_NONE, 0x07, 0, 24, 24, 536, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: CapsuleResp", CT, true, P_NONE, 0x05, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: type 08h", CT, true, P_NONE, 0x08, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: type 0Ah", CT, true, P_NONE, 0x0a, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: type FFh", CT, true, P_NONE, 0xff, 0, 24, 0, 24, BAD(INVALID_PDU_HDR, 0) },
	{ "ctrl: H2CTermReq after IC", CT, true, P_HD, 0x02, 0, 24, 0, 40, OK },
	/* host side */
	{ "host: ICResp", HO, false, P_NONE, 0x01, 0, 128, 0, 128, OK },
	{ "host: C2HTermReq", HO, false, P_NONE, 0x03, 0, 24, 0, 24, OK },
	{ "host: CapsuleResp before IC", HO, false, P_NONE, 0x05, 0, 24, 0, 24, BAD(PDU_SEQ_ERR, 0) },
	{ "host: R2T before IC", HO, false, P_NONE, 0x09, 0, 24, 0, 24, BAD(PDU_SEQ_ERR, 0) },
	{ "host: ICReq", HO, false, P_NONE, 0x00, 0, 128, 0, 128, BAD(INVALID_PDU_HDR, 0) },
	{ "host: second ICResp", HO, true, P_NONE, 0x01, 0, 128, 0, 128, BAD(PDU_SEQ_ERR, 0) },
	{ "host: CapsuleResp", HO, true, P_NONE, 0x05, 0, 24, 0, 24, OK },
	{ "host: CapsuleResp hlen 16", HO, true, P_NONE, 0x05, 0, 16, 0, 16, BAD(INVALID_PDU_HDR, 2) },
	{ "host: CapsuleResp with data", HO, true, P_NONE, 0x05, 0, 24, 24, 40,
	  BAD(INVALID_PDU_HDR, 4) },
	{ "host: R2T", HO, true, P_HD, 0x09, F_HD, 24, 0, 28, OK },
	{ "host: C2HData", HO, true, P_NONE, 0x07, 0, 24, 24, 24 + 4096, OK },
	{ "host: C2HData HPDA 3 pdo 24", HO, true, P_CPDA3, 0x07, 0, 24, 24, 24 + 512,
	  BAD(INVALID_PDU_HDR, 3) },
	{ "host: C2HData HPDA 3 pdo 32", HO, true, P_CPDA3, 0x07, 0, 24, 32, 32 + 512, OK },
	{ "host: C2HData over max_c2hdata", HO, true, P_LIMITS, 0x07, 0, 24, 24, 24 + 2049,
	  BAD(DATA_LIMIT_EXCEEDED, 4) },
	{ "host: C2HData unlimited", HO, true, P_NONE, 0x07, 0, 24, 24, 24 + (1u << 24), OK },
	{ "host: CapsuleCmd", HO, true, P_NONE, 0x04, 0, 72, 0, 72, BAD(INVALID_PDU_HDR, 0) },
	{ "host: H2CData", HO, true, P_NONE, 0x06, 0, 24, 24, 536, BAD(INVALID_PDU_HDR, 0) },
};

static void test_check_ch(void)
{
	for (size_t i = 0; i < sizeof(ch_cases) / sizeof(ch_cases[0]); i++) {
		const struct ch_case *c = &ch_cases[i];
		struct nvme_tcp_common_hdr ch = {
			.pdu_type = c->type, .flags = c->flags, .hlen = c->hlen, .pdo = c->pdo
		};
		struct nvme_tcp_pdu_err err = { 0xffff, 0xffffffff };
		int rc;

		put_le32(&ch.plen, c->plen);
		rc = nvme_tcp_check_ch(&ch, (enum nvme_tcp_side)c->side, c->ic_done,
				       &params[c->params], &err);
		if (c->fes == 0) {
			CU_ASSERT_EQUAL(rc, 0);
			if (rc)
				fprintf(stderr, "%s: rejected (FES %u FEI %u)\n", c->name, err.fes,
					err.fei);
		} else {
			CU_ASSERT_EQUAL(rc, -EPROTO);
			CU_ASSERT_EQUAL(err.fes, c->fes);
			if (c->fes == NVME_TCP_FES_INVALID_PDU_HDR ||
			    c->fes == NVME_TCP_FES_DATA_LIMIT_EXCEEDED)
				CU_ASSERT_EQUAL(err.fei, c->fei);
			if (rc != -EPROTO || err.fes != c->fes || err.fei != c->fei)
				fprintf(stderr, "%s: rc %d FES %u FEI %u, expected FES %u FEI %u\n",
					c->name, rc, err.fes, err.fei, c->fes, c->fei);
		}
	}
}

static void test_hlen_and_lengths(void)
{
	static const struct {
		uint8_t type, hlen;
	} t[] = { { 0, 128 }, { 1, 128 }, { 2, 24 }, { 3, 24 }, { 4, 72 }, { 5, 24 },
		  { 6, 24 },  { 7, 24 },  { 8, 0 },  { 9, 24 }, { 10, 0 }, { 255, 0 } };
	struct nvme_tcp_common_hdr ch = { .pdu_type = 4, .hlen = 72, .pdo = 76 };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CU_ASSERT_EQUAL(nvme_tcp_pdu_hlen(t[i].type), t[i].hlen);

	put_le32(&ch.plen, 76 + 4096 + 4);
	CU_ASSERT_EQUAL(nvme_tcp_psh_len(&ch, true), 76);
	CU_ASSERT_EQUAL(nvme_tcp_psh_len(&ch, false), 72);
	CU_ASSERT_EQUAL(nvme_tcp_data_len(&ch, true), 4096);
	CU_ASSERT_EQUAL(nvme_tcp_data_len(&ch, false), 4100);
	CU_ASSERT_EQUAL(nvme_tcp_pad_len(&ch, true), 0);
	CU_ASSERT_EQUAL(nvme_tcp_pad_len(&ch, false), 4);
	ch.pdo = 128;
	CU_ASSERT_EQUAL(nvme_tcp_pad_len(&ch, true), 52);

	/* IC and TermReq never carry a header digest. */
	ch.pdu_type = 0;
	ch.hlen = 128;
	CU_ASSERT_EQUAL(nvme_tcp_psh_len(&ch, true), 128);
	ch.pdu_type = 3;
	ch.hlen = 24;
	CU_ASSERT_EQUAL(nvme_tcp_psh_len(&ch, true), 24);
	/* No data: R2T, CapsuleResp, or a capsule without PDO. */
	ch.pdu_type = 9;
	put_le32(&ch.plen, 28);
	CU_ASSERT_EQUAL(nvme_tcp_data_len(&ch, false), 0);
	ch.pdu_type = 4;
	ch.hlen = 72;
	ch.pdo = 0;
	put_le32(&ch.plen, 76);
	CU_ASSERT_EQUAL(nvme_tcp_data_len(&ch, false), 0);
	CU_ASSERT_EQUAL(nvme_tcp_pad_len(&ch, true), 0);
}

static void test_digests(void)
{
	static const uint8_t zeros[32];
	uint8_t buf[80];

	/* Known CRC32C vectors (RFC 3720 B.4 and the classic check value). */
	CU_ASSERT_EQUAL(crc32c(zeros, 32), 0x8A9136AAu);
	CU_ASSERT_EQUAL(crc32c("123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(nvme_tcp_hdgst(zeros, 32), 0x8A9136AAu);

	memset(buf, 0, sizeof(buf));
	put_le32(buf + 32, 0x8A9136AAu);
	CU_ASSERT_TRUE(nvme_tcp_hdgst_ok(buf, 32));
	buf[32] ^= 1;
	CU_ASSERT_FALSE(nvme_tcp_hdgst_ok(buf, 32));
	buf[32] ^= 1;
	buf[5] = 1;
	CU_ASSERT_FALSE(nvme_tcp_hdgst_ok(buf, 32));
}

static void test_build_ic(void)
{
	uint8_t buf[NVME_TCP_PSH_MAX];
	const struct nvme_tcp_icreq *q = (const void *)buf;
	const struct nvme_tcp_icresp *r = (const void *)buf;
	struct nvme_tcp_pdu_err err;
	struct nvme_tcp_params p = { 0 };

	memset(buf, 0xee, sizeof(buf));
	CU_ASSERT_EQUAL(nvme_tcp_build_icreq(buf, true, false, 5, 3), 128);
	CU_ASSERT_EQUAL(q->ch.pdu_type, NVME_TCP_PDU_ICREQ);
	CU_ASSERT_EQUAL(q->ch.hlen, 128);
	CU_ASSERT_EQUAL(get_le32(&q->ch.plen), 128);
	CU_ASSERT_EQUAL(get_le16(&q->pfv), 0);
	CU_ASSERT_EQUAL(q->hpda, 5);
	CU_ASSERT_EQUAL(q->dgst, NVME_TCP_DGST_HDR);
	CU_ASSERT_EQUAL(get_le32(&q->maxr2t), 3);
	CU_ASSERT_EQUAL(q->rsvd16[111], 0);
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&q->ch, NVME_TCP_CTRLR, false, &p, &err), 0);

	CU_ASSERT_EQUAL(nvme_tcp_build_icresp(buf, false, true, 0, 131072), 128);
	CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_ICRESP);
	CU_ASSERT_EQUAL(r->dgst, NVME_TCP_DGST_DATA);
	CU_ASSERT_EQUAL(r->cpda, 0);
	CU_ASSERT_EQUAL(get_le32(&r->maxh2cdata), 131072);
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&r->ch, NVME_TCP_HOST, false, &p, &err), 0);
}

static void test_build_capsules(void)
{
	uint8_t buf[NVME_TCP_PSH_MAX];
	const struct nvme_tcp_cmd *c = (const void *)buf;
	const struct nvme_tcp_rsp *r = (const void *)buf;
	struct nvme_cmd sqe;
	struct nvme_cpl cqe;
	struct nvme_tcp_params p = { .hdgst = true, .ddgst = true, .cpda = 3,
				     .maxh2cdata = 131072, .max_icdata = 8192 };
	struct nvme_tcp_pdu_err err;
	size_t n;

	memset(&sqe, 0xab, sizeof(sqe));
	n = nvme_tcp_build_capsule_cmd(buf, &sqe, 4096, &p);
	CU_ASSERT_EQUAL(n, 80); /* 72 + 4 digest, padded to 16 */
	CU_ASSERT_EQUAL(c->ch.pdo, 80);
	CU_ASSERT_EQUAL(c->ch.flags, NVME_TCP_F_HDGST | NVME_TCP_F_DDGST);
	CU_ASSERT_EQUAL(get_le32(&c->ch.plen), 80 + 4096 + 4);
	CU_ASSERT_EQUAL(memcmp(&c->sqe, &sqe, 64), 0);
	CU_ASSERT_TRUE(nvme_tcp_hdgst_ok(buf, 72));
	CU_ASSERT_EQUAL(buf[76], 0); /* padding zeroed */
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&c->ch, NVME_TCP_CTRLR, true, &p, &err), 0);
	CU_ASSERT_EQUAL(nvme_tcp_data_len(&c->ch, true), 4096);

	/* Without data: no PDO, no DDGST flag. */
	n = nvme_tcp_build_capsule_cmd(buf, &sqe, 0, &p);
	CU_ASSERT_EQUAL(n, 76);
	CU_ASSERT_EQUAL(c->ch.pdo, 0);
	CU_ASSERT_EQUAL(c->ch.flags, NVME_TCP_F_HDGST);
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&c->ch, NVME_TCP_CTRLR, true, &p, &err), 0);

	memset(&cqe, 0x5c, sizeof(cqe));
	n = nvme_tcp_build_capsule_resp(buf, &cqe, false);
	CU_ASSERT_EQUAL(n, 24);
	CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_CAPSULE_RESP);
	CU_ASSERT_EQUAL(memcmp(&r->cqe, &cqe, 16), 0);
	p.hdgst = false;
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&r->ch, NVME_TCP_HOST, true, &p, &err), 0);
}

static void test_build_data_r2t(void)
{
	uint8_t buf[NVME_TCP_PSH_MAX];
	const struct nvme_tcp_data_hdr *d = (const void *)buf;
	const struct nvme_tcp_r2t_hdr *r = (const void *)buf;
	struct nvme_tcp_params p = { .hdgst = true, .hpda = 31, .maxh2cdata = 65536 };
	struct nvme_tcp_pdu_err err;
	size_t n;

	/* C2HData honours HPDA (128-byte alignment here). */
	n = nvme_tcp_build_data(buf, NVME_TCP_PDU_C2H_DATA, 7, 0, 4096, 8192,
				NVME_TCP_F_DATA_LAST | NVME_TCP_F_DATA_SUCCESS, &p);
	CU_ASSERT_EQUAL(n, 128);
	CU_ASSERT_EQUAL(d->ch.pdo, 128);
	CU_ASSERT_EQUAL(get_le32(&d->ch.plen), 128 + 8192);
	CU_ASSERT_EQUAL(d->ch.flags,
			NVME_TCP_F_HDGST | NVME_TCP_F_DATA_LAST | NVME_TCP_F_DATA_SUCCESS);
	CU_ASSERT_EQUAL(get_le16(&d->cccid), 7);
	CU_ASSERT_EQUAL(get_le32(&d->datao), 4096);
	CU_ASSERT_EQUAL(get_le32(&d->datal), 8192);
	CU_ASSERT_TRUE(nvme_tcp_hdgst_ok(buf, 24));
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&d->ch, NVME_TCP_HOST, true, &p, &err), 0);
	CU_ASSERT_EQUAL(nvme_tcp_pad_len(&d->ch, true), 100);

	/* H2CData follows CPDA (0: right after the header digest). */
	n = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 7, 3, 0, 4096, 0, &p);
	CU_ASSERT_EQUAL(n, 28);
	CU_ASSERT_EQUAL(get_le16(&d->ttag), 3);
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&d->ch, NVME_TCP_CTRLR, true, &p, &err), 0);

	n = nvme_tcp_build_r2t(buf, 9, 4, 8192, 4096, false);
	CU_ASSERT_EQUAL(n, 24);
	CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_R2T);
	CU_ASSERT_EQUAL(r->ch.flags, 0);
	CU_ASSERT_EQUAL(get_le16(&r->cccid), 9);
	CU_ASSERT_EQUAL(get_le16(&r->ttag), 4);
	CU_ASSERT_EQUAL(get_le32(&r->r2to), 8192);
	CU_ASSERT_EQUAL(get_le32(&r->r2tl), 4096);
	p.hdgst = false;
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&r->ch, NVME_TCP_HOST, true, &p, &err), 0);
}

struct term_case {
	uint16_t fes;
	uint32_t fei;
	size_t bad_len;
	uint32_t want_fei;
	size_t want_data;
};

static const struct term_case term_cases[] = {
	{ NVME_TCP_FES_INVALID_PDU_HDR, 2, 72, 2, 72 },
	{ NVME_TCP_FES_UNSUPPORTED_PARAM, 8, 128, 8, 128 },
	{ NVME_TCP_FES_PDU_SEQ_ERR, 5, 24, 0, 24 },
	{ NVME_TCP_FES_HDR_DIGEST_ERR, 5, 76, 0, 76 },
	{ NVME_TCP_FES_DATA_OUT_OF_RANGE, 12, 24, 0, 24 },
	{ NVME_TCP_FES_DATA_LIMIT_EXCEEDED, 4, 200, 0, 128 },
	{ NVME_TCP_FES_INVALID_PDU_HDR, 0, 0, 0, 0 },
};

static void test_term_req(void)
{
	uint8_t bad[256], buf[NVME_TCP_TERM_REQ_PLEN_MAX + 8];
	const struct nvme_tcp_term_req *t = (const void *)buf;
	struct nvme_tcp_params p = { 0 };
	struct nvme_tcp_pdu_err err;

	for (size_t i = 0; i < sizeof(bad); i++)
		bad[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(term_cases) / sizeof(term_cases[0]); i++) {
		const struct term_case *c = &term_cases[i];
		size_t n;

		memset(buf, 0xee, sizeof(buf));
		n = nvme_tcp_build_term_req(buf, NVME_TCP_PDU_C2H_TERM_REQ, c->fes, c->fei,
					    c->bad_len ? bad : NULL, c->bad_len);
		CU_ASSERT_EQUAL(n, 24 + c->want_data);
		CU_ASSERT_EQUAL(t->ch.pdu_type, NVME_TCP_PDU_C2H_TERM_REQ);
		CU_ASSERT_EQUAL(t->ch.hlen, 24);
		CU_ASSERT_EQUAL(t->ch.pdo, 0);
		CU_ASSERT_EQUAL(get_le32(&t->ch.plen), n);
		CU_ASSERT_EQUAL(get_le16(&t->fes), c->fes);
		CU_ASSERT_EQUAL(get_le32(t->fei), c->want_fei);
		CU_ASSERT_EQUAL(t->rsvd14[9], 0);
		CU_ASSERT_EQUAL(memcmp(buf + 24, bad, c->want_data), 0);
		CU_ASSERT_EQUAL(nvme_tcp_check_ch(&t->ch, NVME_TCP_HOST, true, &p, &err), 0);
	}
	/* The host's variant is legal only towards the controller. */
	nvme_tcp_build_term_req(buf, NVME_TCP_PDU_H2C_TERM_REQ, NVME_TCP_FES_PDU_SEQ_ERR, 0, NULL, 0);
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&t->ch, NVME_TCP_CTRLR, false, &p, &err), 0);
	CU_ASSERT_EQUAL(nvme_tcp_check_ch(&t->ch, NVME_TCP_HOST, true, &p, &err), -EPROTO);
}

static void test_names(void)
{
	CU_ASSERT_STRING_EQUAL(nvme_tcp_pdu_type_name(NVME_TCP_PDU_ICREQ), "ICReq");
	CU_ASSERT_STRING_EQUAL(nvme_tcp_pdu_type_name(NVME_TCP_PDU_R2T), "R2T");
	CU_ASSERT_STRING_EQUAL(nvme_tcp_pdu_type_name(8), "unknown");
	CU_ASSERT_STRING_EQUAL(nvme_tcp_pdu_type_name(200), "unknown");
	CU_ASSERT_STRING_EQUAL(nvme_tcp_fes_name(NVME_TCP_FES_HDR_DIGEST_ERR),
			       "header digest error");
	CU_ASSERT_STRING_EQUAL(nvme_tcp_fes_name(0), "unknown");
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "common header checks", test_check_ch },
		{ "header and data lengths", test_hlen_and_lengths },
		{ "CRC32C digests", test_digests },
		{ "ICReq/ICResp builders", test_build_ic },
		{ "capsule builders", test_build_capsules },
		{ "data and R2T builders", test_build_data_r2t },
		{ "TermReq builder", test_term_req },
		{ "names", test_names },
		CU_TEST_INFO_NULL,
	};

	return ut_run("nvme_tcp_pdu", NULL, NULL, tests);
}
