// SPDX-License-Identifier: MIT
/* Unit tests for common/iscsi_pdu.c: BHS helpers, digests, text codec, key negotiation. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/iscsi_pdu.h"
#include "ut.h"

static void test_bhs_fields(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL);
	CU_ASSERT_EQUAL(iscsi_bhs_opcode(bhs), ISCSI_OP_SCSI_RSP);
	CU_ASSERT_FALSE(iscsi_bhs_immediate(bhs));
	iscsi_bhs_set_dlen(bhs, 0x123456);
	CU_ASSERT_EQUAL(bhs[5], 0x12);
	CU_ASSERT_EQUAL(bhs[6], 0x34);
	CU_ASSERT_EQUAL(bhs[7], 0x56);
	CU_ASSERT_EQUAL(iscsi_bhs_dlen(bhs), 0x123456);
	bhs[4] = 5;
	CU_ASSERT_EQUAL(iscsi_bhs_ahs_len(bhs), 20);
	CU_ASSERT_EQUAL(iscsi_hdr_wire_len(bhs, false), 68);
	CU_ASSERT_EQUAL(iscsi_hdr_wire_len(bhs, true), 72);
	bhs[0] = ISCSI_FLAG_IMMEDIATE | ISCSI_OP_NOP_OUT;
	CU_ASSERT_TRUE(iscsi_bhs_immediate(bhs));
	CU_ASSERT_EQUAL(iscsi_bhs_opcode(bhs), ISCSI_OP_NOP_OUT);
	put_be32(bhs + 16, 0xdeadbeef);
	CU_ASSERT_EQUAL(iscsi_bhs_itt(bhs), 0xdeadbeef);
}

static void test_data_wire_len(void)
{
	static const struct {
		uint32_t dlen;
		bool ddigest;
		uint32_t wire;
	} t[] = {
		{ 0, false, 0 }, { 0, true, 0 }, { 1, false, 4 }, { 3, true, 8 },
		{ 4, true, 8 },	 { 5, false, 8 }, { 8192, true, 8196 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CU_ASSERT_EQUAL(iscsi_data_wire_len(t[i].dlen, t[i].ddigest), t[i].wire);
}

static void test_lun_codec(void)
{
	static const struct {
		uint64_t lun;
		uint8_t b0, b1;
	} t[] = { { 0, 0, 0 }, { 1, 0, 1 }, { 255, 0, 255 }, { 256, 0x41, 0 }, { 16383, 0x7f, 0xff } };
	uint8_t enc[8];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		iscsi_lun_encode(enc, t[i].lun);
		CU_ASSERT_EQUAL(enc[0], t[i].b0);
		CU_ASSERT_EQUAL(enc[1], t[i].b1);
		CU_ASSERT_EQUAL(iscsi_lun_decode(enc), t[i].lun);
	}
	memset(enc, 0, 8);
	enc[0] = 0x80; /* logical unit addressing: not used */
	CU_ASSERT_EQUAL(iscsi_lun_decode(enc), UINT64_MAX);
	enc[0] = 0x01; /* peripheral addressing, bus 1 */
	CU_ASSERT_EQUAL(iscsi_lun_decode(enc), UINT64_MAX);
}

/* RFC 3720 appendix B.4 CRC32C examples, digests as they appear on the wire. */
static void test_digests(void)
{
	uint8_t zeros[32] = { 0 }, ones[32], incr[32], wire[4];
	struct iovec iov[2];

	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		incr[i] = (uint8_t)i;
	iscsi_put_digest(wire, iscsi_header_digest(zeros, 32));
	CU_ASSERT_EQUAL(memcmp(wire, "\xaa\x36\x91\x8a", 4), 0);
	iscsi_put_digest(wire, iscsi_header_digest(ones, 32));
	CU_ASSERT_EQUAL(memcmp(wire, "\x43\xab\xa8\x62", 4), 0);
	iscsi_put_digest(wire, iscsi_header_digest(incr, 32));
	CU_ASSERT_EQUAL(memcmp(wire, "\x4e\x79\xdd\x46", 4), 0);
	CU_ASSERT_EQUAL(iscsi_get_digest(wire), iscsi_header_digest(incr, 32));

	/* Data digest spans iovecs and covers the zero padding. */
	iov[0].iov_base = incr;
	iov[0].iov_len = 10;
	iov[1].iov_base = incr + 10;
	iov[1].iov_len = 22;
	CU_ASSERT_EQUAL(iscsi_data_digest(iov, 2, 32), iscsi_header_digest(incr, 32));
	{
		uint8_t padded[8] = { 1, 2, 3, 4, 5, 0, 0, 0 };

		iov[0].iov_base = padded;
		iov[0].iov_len = 5;
		CU_ASSERT_EQUAL(iscsi_data_digest(iov, 1, 5), iscsi_header_digest(padded, 8));
	}
}

static void test_serial_numbers(void)
{
	CU_ASSERT_TRUE(iscsi_sn_lt(1, 2));
	CU_ASSERT_FALSE(iscsi_sn_lt(2, 2));
	CU_ASSERT_TRUE(iscsi_sn_lt(0xffffffff, 0));
	CU_ASSERT_TRUE(iscsi_sn_gt(0, 0xffffffff));
	CU_ASSERT_TRUE(iscsi_sn_le(5, 5));
	CU_ASSERT_FALSE(iscsi_sn_le(6, 5));
}

static void test_text_parse(void)
{
	static const struct {
		const char *text;
		size_t len;
		int result;
	} t[] = {
		{ "A=1\0B=2\0", 8, 2 },
		{ "Key=\0", 5, 1 },		  /* empty value is allowed by the codec */
		{ "A=1\0\0\0", 6, 1 },		  /* padding NULs */
		{ "A=1", 3, -EINVAL },		  /* unterminated */
		{ "=1\0", 3, -EINVAL },		  /* empty key */
		{ "NoEquals\0", 9, -EINVAL },
		{ "Bad Key=1\0", 10, -EINVAL },	  /* space in key */
		{ "X-com.example.k=v=w\0", 20, 1 }, /* '=' inside a value */
		{ "", 0, 0 },
	};
	struct iscsi_kv kv[4];
	char buf[96];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memcpy(buf, t[i].text, t[i].len);
		CU_ASSERT_EQUAL(iscsi_text_parse(buf, t[i].len, kv, 4), t[i].result);
	}
	memcpy(buf, "A=1\0BB=22\0", 10);
	CU_ASSERT_EQUAL(iscsi_text_parse(buf, 10, kv, 4), 2);
	CU_ASSERT_STRING_EQUAL(kv[0].key, "A");
	CU_ASSERT_STRING_EQUAL(kv[0].val, "1");
	CU_ASSERT_STRING_EQUAL(kv[1].key, "BB");
	CU_ASSERT_STRING_EQUAL(kv[1].val, "22");
	memcpy(buf, "A=1\0B=2\0C=3\0", 12);
	CU_ASSERT_EQUAL(iscsi_text_parse(buf, 12, kv, 2), -E2BIG);
	/* key length limit: 63 ok, 64 rejected */
	memset(buf, 'k', 63);
	memcpy(buf + 63, "=v", 3);
	CU_ASSERT_EQUAL(iscsi_text_parse(buf, 66, kv, 4), 1);
	memset(buf, 'k', 64);
	memcpy(buf + 64, "=v", 3);
	CU_ASSERT_EQUAL(iscsi_text_parse(buf, 67, kv, 4), -EINVAL);
}

static void test_text_add(void)
{
	char buf[16];
	size_t len = 0;

	CU_ASSERT_EQUAL(iscsi_text_add(buf, sizeof(buf), &len, "A", "xyz"), 0);
	CU_ASSERT_EQUAL(len, 6);
	CU_ASSERT_EQUAL(memcmp(buf, "A=xyz\0", 6), 0);
	CU_ASSERT_EQUAL(iscsi_text_add_u32(buf, sizeof(buf), &len, "N", 8192), 0);
	CU_ASSERT_EQUAL(len, 13);
	CU_ASSERT_EQUAL(memcmp(buf + 6, "N=8192\0", 7), 0);
	CU_ASSERT_EQUAL(iscsi_text_add(buf, sizeof(buf), &len, "Long", "x"), -ENOSPC);
	CU_ASSERT_EQUAL(len, 13);
}

static void test_numbers_and_binary(void)
{
	static const struct {
		const char *s;
		int rc;
		uint32_t v;
	} n[] = {
		{ "8192", 0, 8192 }, { "0x10", 0, 16 },	      { "4294967295", 0, 0xffffffff },
		{ "4294967296", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "12a", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 }, { " 1", -EINVAL, 0 },
	};
	uint8_t out[8];
	char hex[32];
	uint32_t v;

	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		v = 0;
		CU_ASSERT_EQUAL(iscsi_text_parse_u32(n[i].s, &v), n[i].rc);
		if (!n[i].rc)
			CU_ASSERT_EQUAL(v, n[i].v);
	}
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0x0aFf10", out, sizeof(out)), 3);
	CU_ASSERT_EQUAL(memcmp(out, "\x0a\xff\x10", 3), 0);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0xabc", out, sizeof(out)), 2);
	CU_ASSERT_EQUAL(memcmp(out, "\x0a\xbc", 2), 0);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0bAQID", out, sizeof(out)), 3);
	CU_ASSERT_EQUAL(memcmp(out, "\x01\x02\x03", 3), 0);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0BAQI=", out, 2), 2);
	CU_ASSERT_EQUAL(memcmp(out, "\x01\x02", 2), 0);
	/* base64 as RFC 4648 writes it, or nothing: no missing padding, no stray bits */
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0bAQI", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0bAQJ=", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0bA=QI", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0b", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0bAQIDBAUG", out, 5), -ENOSPC);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0x", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0xzz", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("1234", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary("0x112233445566778899", out, sizeof(out)),
			-ENOSPC);
	iscsi_text_encode_hex((const uint8_t *)"\x00\x9f\xff", 3, hex);
	CU_ASSERT_STRING_EQUAL(hex, "0x009fff");
}

/* Local (target) preferences used by the negotiation table below. */
static void local_params(struct iscsi_params *l)
{
	iscsi_params_default(l);
	l->header_digest = ISCSI_DIGEST_NONE | ISCSI_DIGEST_CRC32C;
	l->data_digest = ISCSI_DIGEST_NONE;
	l->initial_r2t = 0;
	l->immediate_data = 1;
	l->max_burst_length = 1048576;
	l->first_burst_length = 65536;
	l->max_outstanding_r2t = 4;
	l->default_time2wait = 2;
	l->default_time2retain = 0;
	l->data_pdu_in_order = 1;
	l->data_sequence_in_order = 1;
}

static void test_negotiate_table(void)
{
	static const struct {
		const char *key, *val;
		bool discovery;
		int rc;
		const char *resp;
	} t[] = {
		{ "HeaderDigest", "CRC32C,None", false, ISCSI_NEG_ANSWER, "CRC32C" },
		{ "HeaderDigest", "None,CRC32C", false, ISCSI_NEG_ANSWER, "None" },
		{ "DataDigest", "CRC32C", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "DataDigest", "CRC32C,None", false, ISCSI_NEG_ANSWER, "None" },
		{ "HeaderDigest", "MD5", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "InitialR2T", "Yes", false, ISCSI_NEG_ANSWER, "Yes" },   /* OR */
		{ "InitialR2T", "No", false, ISCSI_NEG_ANSWER, "No" },
		{ "InitialR2T", "maybe", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "ImmediateData", "No", false, ISCSI_NEG_ANSWER, "No" },  /* AND */
		{ "ImmediateData", "Yes", false, ISCSI_NEG_ANSWER, "Yes" },
		{ "MaxBurstLength", "262144", false, ISCSI_NEG_ANSWER, "262144" }, /* min */
		{ "MaxBurstLength", "16776192", false, ISCSI_NEG_ANSWER, "1048576" },
		{ "MaxBurstLength", "511", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "MaxBurstLength", "16777216", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "MaxBurstLength", "lots", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "FirstBurstLength", "262144", false, ISCSI_NEG_ANSWER, "65536" },
		{ "MaxOutstandingR2T", "1", false, ISCSI_NEG_ANSWER, "1" },
		{ "MaxOutstandingR2T", "0", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "DefaultTime2Wait", "0", false, ISCSI_NEG_ANSWER, "2" },	/* max */
		{ "DefaultTime2Wait", "10", false, ISCSI_NEG_ANSWER, "10" },
		{ "DefaultTime2Retain", "20", false, ISCSI_NEG_ANSWER, "0" },	/* min */
		{ "ErrorRecoveryLevel", "2", false, ISCSI_NEG_ANSWER, "0" },
		{ "MaxConnections", "8", false, ISCSI_NEG_ANSWER, "1" },
		{ "DataPDUInOrder", "No", false, ISCSI_NEG_ANSWER, "Yes" },	/* OR */
		{ "DataSequenceInOrder", "Yes", false, ISCSI_NEG_ANSWER, "Yes" },
		{ "iSCSIProtocolLevel", "2", false, ISCSI_NEG_ANSWER, "1" },
		{ "TaskReporting", "ResponseFence,RFC3720", false, ISCSI_NEG_ANSWER, "RFC3720" },
		{ "TaskReporting", "FastAbort", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "MaxRecvDataSegmentLength", "262144", false, ISCSI_NEG_NO_ANSWER, NULL },
		{ "MaxRecvDataSegmentLength", "100", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "X-com.example.foo", "bar", false, ISCSI_NEG_ANSWER, "NotUnderstood" },
		{ "X#vendor", "1", false, ISCSI_NEG_ANSWER, "NotUnderstood" },
		{ "NoSuchKey", "1", false, ISCSI_NEG_ANSWER, "NotUnderstood" },
		{ "IFMarker", "Yes", false, ISCSI_NEG_ANSWER, "No" },
		{ "OFMarkInt", "2048~8192", false, ISCSI_NEG_ANSWER, "Reject" },
		{ "InitiatorName", "iqn.x", false, ISCSI_NEG_NOT_OPERATIONAL, NULL },
		{ "CHAP_A", "5", false, ISCSI_NEG_NOT_OPERATIONAL, NULL },
		{ "MaxBurstLength", "262144", true, ISCSI_NEG_ANSWER, "Irrelevant" },
		{ "ImmediateData", "Yes", true, ISCSI_NEG_ANSWER, "Irrelevant" },
		{ "ErrorRecoveryLevel", "0", true, ISCSI_NEG_ANSWER, "0" },
		{ "HeaderDigest", "None", true, ISCSI_NEG_ANSWER, "None" },
		{ "MaxRecvDataSegmentLength", "4096", true, ISCSI_NEG_NO_ANSWER, NULL },
	};
	struct iscsi_params local, sess;
	char resp[64];

	local_params(&local);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc;

		iscsi_params_default(&sess);
		resp[0] = '\0';
		rc = iscsi_param_negotiate(&sess, &local, t[i].discovery, t[i].key, t[i].val, resp,
					   sizeof(resp));
		CU_ASSERT_EQUAL(rc, t[i].rc);
		if (t[i].resp)
			CU_ASSERT_STRING_EQUAL(resp, t[i].resp);
		if (rc != t[i].rc || (t[i].resp && strcmp(resp, t[i].resp)))
			fprintf(stderr, "case %zu: %s=%s -> %d %s\n", i, t[i].key, t[i].val, rc,
				resp);
	}
}

static void test_negotiate_state(void)
{
	struct iscsi_params local, sess;
	char resp[64];

	local_params(&local);
	iscsi_params_default(&sess);
	CU_ASSERT_EQUAL(sess.max_recv_dsl, 8192);
	CU_ASSERT_EQUAL(iscsi_param_negotiate(&sess, &local, false, "HeaderDigest", "CRC32C",
					      resp, sizeof(resp)), ISCSI_NEG_ANSWER);
	CU_ASSERT_EQUAL(sess.header_digest, 1);
	CU_ASSERT_EQUAL(iscsi_param_negotiate(&sess, &local, false, "MaxRecvDataSegmentLength",
					      "65536", resp, sizeof(resp)),
			ISCSI_NEG_NO_ANSWER);
	CU_ASSERT_EQUAL(sess.max_recv_dsl, 65536);
	/* a key negotiated twice is a protocol error */
	CU_ASSERT_EQUAL(iscsi_param_negotiate(&sess, &local, false, "HeaderDigest", "None", resp,
					      sizeof(resp)), -EPROTO);
	/* FirstBurstLength irrelevant once InitialR2T=Yes and ImmediateData=No */
	local.initial_r2t = 1;
	iscsi_param_negotiate(&sess, &local, false, "InitialR2T", "Yes", resp, sizeof(resp));
	iscsi_param_negotiate(&sess, &local, false, "ImmediateData", "No", resp, sizeof(resp));
	CU_ASSERT_EQUAL(iscsi_param_negotiate(&sess, &local, false, "FirstBurstLength", "65536",
					      resp, sizeof(resp)), ISCSI_NEG_ANSWER);
	CU_ASSERT_STRING_EQUAL(resp, "Irrelevant");
	/* FirstBurstLength clamped to MaxBurstLength */
	iscsi_params_default(&sess);
	sess.max_burst_length = 4096;
	sess.first_burst_length = 65536;
	iscsi_params_finish(&sess);
	CU_ASSERT_EQUAL(sess.first_burst_length, 4096);
	CU_ASSERT_STRING_EQUAL(iscsi_key_name(ISCSI_KEY_MAX_BURST_LENGTH), "MaxBurstLength");
	CU_ASSERT_PTR_NULL(iscsi_key_name(ISCSI_KEY_COUNT));
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "bhs fields", test_bhs_fields },
		{ "data segment wire length", test_data_wire_len },
		{ "LUN codec", test_lun_codec },
		{ "CRC32C digests", test_digests },
		{ "serial numbers", test_serial_numbers },
		{ "text parse", test_text_parse },
		{ "text add", test_text_add },
		{ "numbers and binary values", test_numbers_and_binary },
		{ "key negotiation table", test_negotiate_table },
		{ "key negotiation state", test_negotiate_state },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_pdu", NULL, NULL, tests);
}
