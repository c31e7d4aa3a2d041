/* SPDX-License-Identifier: MIT */
/*
 * iSCSI login (iscsi_login.c) against the fake target over a socketpair: negotiation
 * results, CHAP (MD5, SHA-256), and malformed or hostile answers, each of which must end
 * in an error with a message, never a crash or a hang.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/scsi/host_iscsi.h"
#include "iscsi_fake_target.h"
#include "ut.h"

struct login_case {
	const char *name;
	struct ft_config ft;
	const char *target;	/* NULL: FT_IQN */
	const char *user, *secret;
	bool hdgst, ddgst, md5_only;
	int timeout_ms;		/* 0: 2000 */
	int want;
	const char *msg;	/* substring of the error message */
};

static const struct login_case cases[] = {
	{ "plain", { 0 }, NULL, NULL, NULL, false, false, false, 0, 0, NULL },
	{ "digests", { .allow_digests = true }, NULL, NULL, NULL, true, true, false, 0, 0, NULL },
	{ "header digest declined", { 0 }, NULL, NULL, NULL, true, false, false, 0,
	  -EPROTONOSUPPORT, "declined header digests" },
	{ "data digest declined", { 0 }, NULL, NULL, NULL, false, true, false, 0,
	  -EPROTONOSUPPORT, "declined data digests" },
	{ "CHAP MD5",
	  { .chap = true, .chap_user = "u1", .chap_secret = "sekrit-12345", .chap_alg = 5 },
	  NULL, "u1", "sekrit-12345", false, false, false, 0, 0, NULL },
	{ "CHAP SHA-256",
	  { .chap = true, .chap_user = "u1", .chap_secret = "sekrit-12345", .chap_alg = 7 },
	  NULL, "u1", "sekrit-12345", false, false, false, 0, 0, NULL },
	{ "CHAP MD5 only", { .chap = true, .chap_user = "u1", .chap_secret = "s3cr3t-s3cr3t" },
	  NULL, "u1", "s3cr3t-s3cr3t", false, false, true, 0, 0, NULL },
	{ "CHAP wrong secret",
	  { .chap = true, .chap_user = "u1", .chap_secret = "right-secret", .chap_alg = 5 },
	  NULL, "u1", "wrong-secret", false, false, false, 0, -EACCES, "authentication failed" },
	{ "CHAP wrong user",
	  { .chap = true, .chap_user = "u1", .chap_secret = "right-secret", .chap_alg = 7 },
	  NULL, "u2", "right-secret", false, false, false, 0, -EACCES, "authentication failed" },
	{ "CHAP required, no credentials", { .chap = true, .chap_user = "u", .chap_secret = "s" },
	  NULL, NULL, NULL, false, false, false, 0, -EACCES, "authentication failed" },
	{ "CHAP_A not offered",
	  { .chap = true, .chap_user = "u", .chap_secret = "s", .login_fault = FT_L_CHAP_ALG },
	  NULL, "u", "s", false, false, false, 0, -EPROTO, "CHAP_A=99" },
	{ "CHAP challenge missing",
	  { .chap = true, .chap_user = "u", .chap_secret = "s",
	    .login_fault = FT_L_CHAP_NO_CHALLENGE },
	  NULL, "u", "s", false, false, false, 0, -EPROTO, "CHAP challenge incomplete" },
	{ "unknown target", { 0 }, "iqn.2026-11.io.nvmeof:nope", NULL, NULL, false, false, false,
	  0, -ENOENT, "target not found" },
	{ "status out of resources", { .login_fault = FT_L_STATUS, .status = 0x0302 }, NULL, NULL,
	  NULL, false, false, false, 0, -EAGAIN, "out of resources" },
	{ "status authorization", { .login_fault = FT_L_STATUS, .status = 0x0202 }, NULL, NULL,
	  NULL, false, false, false, 0, -EACCES, "not authorized" },
	{ "connection closed", { .login_fault = FT_L_CLOSE }, NULL, NULL, NULL, false, false,
	  false, 0, -ECONNRESET, "closed the connection" },
	{ "silent target", { .login_fault = FT_L_SILENT }, NULL, NULL, NULL, false, false, false,
	  300, -ETIMEDOUT, "no answer" },
	{ "wrong opcode", { .login_fault = FT_L_BAD_OPCODE }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "unexpected PDU" },
	{ "reject", { .login_fault = FT_L_REJECT }, NULL, NULL, NULL, false, false, false, 0,
	  -EPROTO, "rejected" },
	{ "truncated text", { .login_fault = FT_L_TRUNCATED }, NULL, NULL, NULL, false, false,
	  false, 0, -ECONNRESET, "closed the connection" },
	{ "16 MiB of text", { .login_fault = FT_L_HUGE_DLEN }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "login text" },
	{ "text without '='", { .login_fault = FT_L_BAD_TEXT }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "malformed login text" },
	{ "unterminated text", { .login_fault = FT_L_UNTERMINATED }, NULL, NULL, NULL, false,
	  false, false, 0, -EPROTO, "malformed login text" },
	{ "other ITT", { .login_fault = FT_L_ITT }, NULL, NULL, NULL, false, false, false, 0,
	  -EPROTO, "ITT" },
	{ "other ISID", { .login_fault = FT_L_ISID }, NULL, NULL, NULL, false, false, false, 0,
	  -EPROTO, "ISID" },
	{ "version", { .login_fault = FT_L_VERSION }, NULL, NULL, NULL, false, false, false, 0,
	  -EPROTONOSUPPORT, "version" },
	{ "T and C", { .login_fault = FT_L_BOTH_TC }, NULL, NULL, NULL, false, false, false, 0,
	  -EPROTO, "both T and C" },
	{ "skipped stage", { .login_fault = FT_L_SKIP_STAGE }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "stage 3" },
	{ "CSG of the next stage", { .login_fault = FT_L_CSG_NEXT }, NULL, NULL, NULL, false, false,
	  false, 0, 0, NULL },
	{ "CSG of another stage", { .login_fault = FT_L_CSG_WRONG }, NULL, NULL, NULL, false,
	  false, false, 0, -EPROTO, "for stage 3, not 0" },
	{ "no TSIH", { .login_fault = FT_L_NO_TSIH }, NULL, NULL, NULL, false, false, false, 0,
	  -EPROTO, "TSIH" },
	{ "digest forced", { .login_fault = FT_L_FORCE_DIGEST }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "HeaderDigest=CRC32C" },
	{ "number not a number", { .login_fault = FT_L_BAD_NUMBER }, NULL, NULL, NULL, false,
	  false, false, 0, -EPROTO, "MaxBurstLength=lots" },
	{ "burst above the offer", { .login_fault = FT_L_BURST_TOO_BIG }, NULL, NULL, NULL, false,
	  false, false, 0, -EPROTO, "MaxBurstLength" },
	{ "MaxRecvDataSegmentLength 0", { .login_fault = FT_L_MRDSL_ZERO }, NULL, NULL, NULL,
	  false, false, false, 0, -EPROTO, "MaxRecvDataSegmentLength=0" },
	{ "out of order data", { .login_fault = FT_L_NO_ORDER }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "DataPDUInOrder=No" },
	{ "never transits", { .login_fault = FT_L_NEVER_TRANSIT }, NULL, NULL, NULL, false, false,
	  false, 0, -EPROTO, "did not finish" },
	{ "continued answer", { .login_fault = FT_L_CONTINUE, .max_recv_dsl = 65536 }, NULL, NULL,
	  NULL, false, false, false, 0, 0, NULL },
	{ "target offers keys", { .login_fault = FT_L_OFFER_KEYS }, NULL, NULL, NULL, false, false,
	  false, 0, 0, NULL },
};

static int run_case(const struct login_case *c, struct iscsi_session *s, struct fake_target **ftp)
{
	struct iscsi_login_cfg cfg = { 0 };
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -errno;
	*ftp = ft_serve_fd(&c->ft, sv[1]);
	cfg.initiator_name = "iqn.2014-08.org.nvmexpress:uuid:test";
	cfg.target_name = c->target ? c->target : FT_IQN;
	cfg.user = c->user;
	cfg.secret = c->secret;
	memcpy(cfg.isid, "\x80\x01\x02\x03\x00\x00", 6);
	cfg.cmdsn = 1;
	cfg.hdgst = c->hdgst;
	cfg.ddgst = c->ddgst;
	cfg.chap_md5_only = c->md5_only;
	clear_error();
	rc = iscsi_login(sv[0], &cfg, c->timeout_ms ? c->timeout_ms : 2000, s);
	close(sv[0]);
	ft_join(*ftp);
	return rc;
}

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct login_case *c = &cases[i];
		struct iscsi_session s;
		struct fake_target *ft;
		int rc = run_case(c, &s, &ft);
		const char *err = nvmeof_last_error();

		if (rc != c->want || (c->msg && !strstr(err, c->msg)))
			fprintf(stderr, "\n  case '%s': rc %d (want %d), error '%s'\n", c->name, rc,
				c->want, err);
		CU_ASSERT_EQUAL(rc, c->want);
		if (c->msg)
			CU_ASSERT_PTR_NOT_NULL(strstr(err, c->msg));
		if (c->want == 0)
			CU_ASSERT_EQUAL(s.tsih, 0x1234);
		ft_free(ft);
	}
}

/* What the initiator offers, and what it makes of the target's answers. */
static void test_negotiated(void)
{
	const struct login_case plain = { "plain", { 0 }, NULL, NULL, NULL, false, false, false,
					   0, 0, NULL };
	struct login_case big = plain;
	const struct ft_stats *st;
	struct iscsi_session s;
	struct fake_target *ft;

	CU_ASSERT_EQUAL_FATAL(run_case(&plain, &s, &ft), 0);
	st = ft_stats(ft);
	CU_ASSERT_PTR_NOT_NULL(strstr(st->op_keys,
				      "HeaderDigest=None;DataDigest=None;"
				      "InitialR2T=No;ImmediateData=Yes;"
				      "MaxRecvDataSegmentLength=262144;"
				      "MaxBurstLength=1048576;FirstBurstLength=262144;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(st->op_keys, "MaxOutstandingR2T=1;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(st->op_keys, "ErrorRecoveryLevel=0;"));
	CU_ASSERT_STRING_EQUAL(st->initiator_name, "iqn.2014-08.org.nvmexpress:uuid:test");
	CU_ASSERT_EQUAL(st->protocol_errors, 0);
	/* The fake target's defaults: 8 KiB segments, 256 KiB bursts, 64 KiB first burst. */
	CU_ASSERT_FALSE(s.hdgst);
	CU_ASSERT_FALSE(s.ddgst);
	CU_ASSERT_TRUE(s.immediate_data);
	CU_ASSERT_FALSE(s.initial_r2t);
	CU_ASSERT_EQUAL(s.max_xmit_dsl, 8192);
	CU_ASSERT_EQUAL(s.max_recv_dsl, ISCSI_INIT_MAX_RECV_DSL);
	CU_ASSERT_EQUAL(s.max_burst, 262144);
	CU_ASSERT_EQUAL(s.first_burst, 65536);
	CU_ASSERT_EQUAL(s.chap_alg, 0);
	CU_ASSERT_EQUAL(s.cmdsn, 1);
	CU_ASSERT_EQUAL(s.exp_cmdsn, 1);
	CU_ASSERT_EQUAL(s.max_cmdsn, 64);
	CU_ASSERT_EQUAL(s.tpgt, 1);
	ft_free(ft);

	/* A target as large as what we ask. */
	big.ft.max_recv_dsl = 262144;
	big.ft.max_burst = 1048576;
	big.ft.first_burst = 262144;
	CU_ASSERT_EQUAL_FATAL(run_case(&big, &s, &ft), 0);
	CU_ASSERT_EQUAL(s.max_xmit_dsl, 262144);
	CU_ASSERT_EQUAL(s.max_burst, 1048576);
	CU_ASSERT_EQUAL(s.first_burst, 262144);
	ft_free(ft);

	/* A conservative target: InitialR2T=Yes, ImmediateData=No. */
	big = plain;
	big.ft.initial_r2t = true;
	big.ft.no_immediate_data = true;
	CU_ASSERT_EQUAL_FATAL(run_case(&big, &s, &ft), 0);
	CU_ASSERT_TRUE(s.initial_r2t);
	CU_ASSERT_FALSE(s.immediate_data);
	ft_free(ft);

	/* Digests. */
	big = plain;
	big.ft.allow_digests = true;
	big.hdgst = big.ddgst = true;
	CU_ASSERT_EQUAL_FATAL(run_case(&big, &s, &ft), 0);
	CU_ASSERT_TRUE(s.hdgst);
	CU_ASSERT_TRUE(s.ddgst);
	CU_ASSERT_PTR_NOT_NULL(strstr(ft_stats(ft)->op_keys,
				      "HeaderDigest=CRC32C;DataDigest=CRC32C;"));
	ft_free(ft);

	/* Keys the target offers on its own get answers. */
	big = plain;
	big.ft.login_fault = FT_L_OFFER_KEYS;
	CU_ASSERT_EQUAL_FATAL(run_case(&big, &s, &ft), 0);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(ft_stats(ft)->answers, "X-org.example.Feature=NotUnderstood;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ft_stats(ft)->answers, "IFMarker=No;"));
	ft_free(ft);
}

static void test_chap_offer(void)
{
	struct login_case c = { "chap", { .chap = true, .chap_user = "u", .chap_secret = "pw-pw-pw",
					  .chap_alg = 5 },
				NULL, "u", "pw-pw-pw", false, false, false, 0, 0, NULL };
	struct iscsi_session s;
	struct fake_target *ft;

	CU_ASSERT_EQUAL_FATAL(run_case(&c, &s, &ft), 0);
	CU_ASSERT_STRING_EQUAL(ft_stats(ft)->chap_a_offer, "7,5"); /* SHA-256 preferred */
	CU_ASSERT_EQUAL(s.chap_alg, ISCSI_CHAP_MD5);
	ft_free(ft);
	c.md5_only = true;
	CU_ASSERT_EQUAL_FATAL(run_case(&c, &s, &ft), 0);
	CU_ASSERT_STRING_EQUAL(ft_stats(ft)->chap_a_offer, "5");
	ft_free(ft);
	c.md5_only = false;
	c.ft.chap_alg = 7;
	CU_ASSERT_EQUAL_FATAL(run_case(&c, &s, &ft), 0);
	CU_ASSERT_EQUAL(s.chap_alg, ISCSI_CHAP_SHA256);
	ft_free(ft);
}

/* CHAP_R against digests computed elsewhere (Python hashlib) and by the fake target. */
static void test_chap_vectors(void)
{
	static const uint8_t md5[16] = { 0x74, 0x0e, 0x86, 0x46, 0x3b, 0xda, 0x3a, 0x4d,
					 0x70, 0x17, 0xd6, 0xe0, 0xfb, 0xa0, 0x69, 0x9d };
	static const uint8_t sha[32] = { 0x28, 0xb9, 0x6c, 0x91, 0x6c, 0xf7, 0x84, 0x52,
					 0x8b, 0xbf, 0xaa, 0x6a, 0xd7, 0xe0, 0x12, 0xca,
					 0xb2, 0x93, 0x43, 0x76, 0x04, 0xaa, 0xe8, 0xd6,
					 0x6a, 0x32, 0x95, 0xb3, 0x19, 0x13, 0x2c, 0xef };
	uint8_t chal[16], out[32], ref[32];
	size_t n;

	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	CU_ASSERT_EQUAL(host_iscsi_chap_response(ISCSI_CHAP_MD5, 1, (const uint8_t *)"secret", 6,
						 chal, 16, out, &n),
			0);
	CU_ASSERT_EQUAL(n, 16);
	CU_ASSERT_EQUAL(memcmp(out, md5, 16), 0);
	CU_ASSERT_EQUAL(host_iscsi_chap_response(ISCSI_CHAP_SHA256, 1, (const uint8_t *)"secret", 6,
						 chal, 16, out, &n),
			0);
	CU_ASSERT_EQUAL(n, 32);
	CU_ASSERT_EQUAL(memcmp(out, sha, 32), 0);
	CU_ASSERT_EQUAL(ft_chap_digest(7, 1, "secret", chal, 16, ref), 32);
	CU_ASSERT_EQUAL(memcmp(out, ref, 32), 0);
	CU_ASSERT_EQUAL(host_iscsi_chap_response(6, 1, (const uint8_t *)"s", 1, chal, 16, out, &n),
			-EINVAL);
}

static void test_initiator_name(void)
{
	char name[ISCSI_NAME_MAX + 1];

	iscsi_initiator_name("nqn.2014-08.org.nvmexpress:uuid:AB12-cd", name, sizeof(name));
	CU_ASSERT_STRING_EQUAL(name, "iqn.2014-08.org.nvmexpress:uuid:ab12-cd");
	iscsi_initiator_name("host_1 name", name, sizeof(name));
	CU_ASSERT_STRING_EQUAL(name, "iqn.2026-11.io.nvmeof:host-1-name");
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "login cases", test_cases },
		{ "negotiated values", test_negotiated },
		{ "CHAP_A offer", test_chap_offer },
		{ "CHAP digests", test_chap_vectors },
		{ "initiator name", test_initiator_name },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_login", NULL, NULL, tests);
}
