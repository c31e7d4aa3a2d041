/* SPDX-License-Identifier: MIT */
/* In-band authentication wire formats (common/nvme_auth_spec.h): layouts byte for byte. */
#include <CUnit/Basic.h>
#include <string.h>

#include "common/endian.h"
#include "common/nvme_auth_spec.h"
#include "common/nvme_spec.h"
#include "ut.h"

/* A DH-HMAC-CHAP_Challenge for SHA-256 and ffdhe2048 as a Linux target sends it. */
static void test_challenge_wire(void)
{
	static const uint8_t want[16] = {
		0x01, 0x01,             /* DH-HMAC-CHAP, Challenge */
		0x00, 0x00, 0x34, 0x12, /* T_ID */
		0x20, 0x00,             /* HL 32 */
		0x01, 0x01,             /* SHA-256, ffdhe2048 */
		0x00, 0x01,             /* DHVLEN 256 */
		0x78, 0x56, 0x34, 0x12, /* S1 */
	};
	struct nvme_dhchap_challenge c;

	memset(&c, 0, sizeof(c));
	c.auth_type = NVME_AUTH_TYPE_DHCHAP;
	c.auth_id = NVME_AUTH_ID_CHALLENGE;
	put_le16(c.t_id, 0x1234);
	c.hl = 32;
	c.hashid = NVME_AUTH_HASH_SHA256;
	c.dhgid = NVME_AUTH_DHGROUP_FFDHE2048;
	put_le16(c.dhvlen, 256);
	put_le32(c.seqnum, 0x12345678);
	CU_ASSERT_EQUAL(memcmp(&c, want, sizeof(want)), 0);
	CU_ASSERT_EQUAL(NVME_DHCHAP_CHALLENGE_CVAL_OFF, 16);
	CU_ASSERT_EQUAL(NVME_DHCHAP_CHALLENGE_DHV_OFF(32), 48);
	CU_ASSERT_EQUAL(NVME_DHCHAP_CHALLENGE_LEN(32, 256), 304);
}

static void test_negotiate_wire(void)
{
	uint8_t buf[NVME_AUTH_NEGOTIATE_LEN(1)];
	struct nvme_auth_negotiate *n = (struct nvme_auth_negotiate *)buf;
	struct nvme_auth_protocol_desc *d = (struct nvme_auth_protocol_desc *)(n + 1);

	CU_ASSERT_EQUAL(sizeof(buf), 72);
	memset(buf, 0, sizeof(buf));
	n->auth_type = NVME_AUTH_TYPE_COMMON;
	n->auth_id = NVME_AUTH_ID_NEGOTIATE;
	put_le16(n->t_id, 7);
	n->sc_c = NVME_AUTH_SC_C_NONE;
	n->napd = 1;
	d->authid = NVME_AUTH_PROTO_DHCHAP;
	d->halen = 3;
	d->dhlen = 6;
	d->idlist[0] = NVME_AUTH_HASH_SHA256;
	d->idlist[NVME_AUTH_DESC_DH_OFF + 5] = NVME_AUTH_DHGROUP_FFDHE8192;
	CU_ASSERT_EQUAL(buf[4], 7);
	CU_ASSERT_EQUAL(buf[7], 1);
	CU_ASSERT_EQUAL(buf[8], 0x01);  /* descriptor AUTHID */
	CU_ASSERT_EQUAL(buf[10], 3);    /* HALEN */
	CU_ASSERT_EQUAL(buf[11], 6);    /* DHLEN */
	CU_ASSERT_EQUAL(buf[12], 0x01); /* first hash id */
	CU_ASSERT_EQUAL(buf[12 + 35], 0x05);
}

static void test_reply_success_failure(void)
{
	struct nvme_dhchap_reply r;
	struct nvme_dhchap_success1 s1;
	struct nvme_auth_failure f;
	const uint8_t *b;

	memset(&r, 0, sizeof(r));
	r.cvalid = NVME_DHCHAP_REPLY_CVALID;
	put_le16(r.dhvlen, 1024);
	put_le32(r.seqnum, 0xa1b2c3d4);
	b = (const uint8_t *)&r;
	CU_ASSERT_EQUAL(b[8], 1);
	CU_ASSERT_EQUAL(get_le16(b + 10), 1024);
	CU_ASSERT_EQUAL(get_le32(b + 12), 0xa1b2c3d4);
	CU_ASSERT_EQUAL(NVME_DHCHAP_REPLY_CVAL_OFF(48), 64);
	CU_ASSERT_EQUAL(NVME_DHCHAP_REPLY_DHV_OFF(48), 112);
	CU_ASSERT_EQUAL(NVME_DHCHAP_REPLY_LEN(64, 1024), 16 + 128 + 1024);

	memset(&s1, 0, sizeof(s1));
	s1.hl = 64;
	s1.rvalid = NVME_DHCHAP_SUCCESS1_RVALID;
	b = (const uint8_t *)&s1;
	CU_ASSERT_EQUAL(b[6], 64);
	CU_ASSERT_EQUAL(b[8], 1);
	CU_ASSERT_EQUAL(NVME_DHCHAP_SUCCESS1_LEN(64), 80);

	memset(&f, 0, sizeof(f));
	f.auth_id = NVME_AUTH_ID_FAILURE1;
	f.rescode = NVME_AUTH_FAIL_REASON_FAILED;
	f.rescode_exp = NVME_AUTH_FAIL_DHGROUP_UNUSABLE;
	b = (const uint8_t *)&f;
	CU_ASSERT_EQUAL(b[1], 0xf1);
	CU_ASSERT_EQUAL(b[6], 0x01);
	CU_ASSERT_EQUAL(b[7], 0x05);
}

static void test_command_and_connect(void)
{
	struct nvmf_auth_cmd c;
	const uint8_t *b = (const uint8_t *)&c;
	uint32_t dw0 = 0x0001 | NVMF_CONNECT_AUTHREQ_ATR;

	memset(&c, 0, sizeof(c));
	c.opc = 0x7f;
	c.fctype = NVMF_FCTYPE_AUTH_SEND;
	c.secp = NVMF_AUTH_SECP;
	c.spsp0 = NVMF_AUTH_SPSP0;
	c.spsp1 = NVMF_AUTH_SPSP1;
	put_le32(c.len, 72);
	/* CDW10 = SECP << 24 | SPSP1 << 16 | SPSP0 << 8, CDW11 = TL. */
	CU_ASSERT_EQUAL(get_le32(b + 40), 0xe9010100u);
	CU_ASSERT_EQUAL(get_le32(b + 44), 72);
	CU_ASSERT_EQUAL(b[4], 0x05);
	/* Connect response DW0: CNTLID in bits 15:0, AUTHREQ.ATR is bit 17, ASCR bit 18. */
	CU_ASSERT_EQUAL(dw0 >> 16, 0x2);
	CU_ASSERT_EQUAL(NVMF_CONNECT_AUTHREQ_ASCR >> 16, 0x4);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "challenge layout", test_challenge_wire },
		{ "negotiate layout", test_negotiate_wire },
		{ "reply/success1/failure layout", test_reply_success_failure },
		{ "auth send command and AUTHREQ", test_command_and_connect },
		CU_TEST_INFO_NULL,
	};

	return ut_run("nvme_auth_spec", NULL, NULL, tests);
}
