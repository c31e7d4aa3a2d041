// SPDX-License-Identifier: MIT
/* Unit tests for target/iscsi_chap.c: CHAP responses for every digest (MD5 and SHA-256
 * against fixed values, all four against an independent OpenSSL one-shot computation of
 * H(id || secret || challenge), RFC 1994 section 4.1), the choice of the strongest digest
 * both sides allow, the check of CHAP_R, and mutual CHAP with the reflection check. */
#include <CUnit/Basic.h>
#include <openssl/evp.h>
#include <string.h>

#include "iscsi/iscsi_internal.h"
#include "ut.h"

#define SECRET "it-secret-0123"

/* H(id || secret || challenge) computed without iscsi_chap.c */
static unsigned int reference(const char *md_name, uint8_t id, const char *secret,
			      const uint8_t *chal, size_t clen, uint8_t *out)
{
	uint8_t msg[1 + 64 + 1024];
	size_t sl = strlen(secret);
	unsigned int len = 0;

	msg[0] = id;
	memcpy(msg + 1, secret, sl);
	memcpy(msg + 1 + sl, chal, clen);
	CU_ASSERT_FATAL(EVP_Digest(msg, 1 + sl + clen, out, &len, EVP_get_digestbyname(md_name),
				   NULL) == 1);
	return len;
}

static void test_vectors(void)
{
	static const struct {
		uint8_t alg;
		const char *md;
		const char *expect; /* CHAP_R as sent: 0x + hex, NULL: reference only */
	} t[] = {
		{ ISCSI_CHAP_MD5, "MD5", "0x3c473d831706722a78b79e08493ab11e" },
		{ ISCSI_CHAP_SHA1, "SHA1", NULL },
		{ ISCSI_CHAP_SHA256, "SHA256",
		  "0xca585ba36a1ac22dd6b28adab69503c7d4b42208a288c027f88c36399decfbfc" },
		{ ISCSI_CHAP_SHA3_256, "SHA3-256", NULL },
	};
	uint8_t challenge[32], out[64], dec[64], ref[64];
	char hex[2 * 64 + 3];

	for (int i = 0; i < 32; i++)
		challenge[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		unsigned int dl = iscsi_chap_digest_len(t[i].alg);

		CU_ASSERT_EQUAL(iscsi_chap_response(t[i].alg, 0x2a, SECRET, challenge, 16, out), 0);
		CU_ASSERT_EQUAL(reference(t[i].md, 0x2a, SECRET, challenge, 16, ref), dl);
		CU_ASSERT_EQUAL(memcmp(out, ref, dl), 0);
		iscsi_text_encode_hex(out, dl, hex);
		if (t[i].expect) {
			CU_ASSERT_STRING_EQUAL(hex, t[i].expect);
			CU_ASSERT_EQUAL(iscsi_text_decode_binary(t[i].expect, dec, sizeof(dec)),
					(int)dl);
			CU_ASSERT_EQUAL(memcmp(dec, out, dl), 0);
		}
		/* a 32-byte challenge and another identifier */
		CU_ASSERT_EQUAL(iscsi_chap_response(t[i].alg, 0xff, SECRET, challenge, 32, out), 0);
		reference(t[i].md, 0xff, SECRET, challenge, 32, ref);
		CU_ASSERT_EQUAL(memcmp(out, ref, dl), 0);
	}
}

static void test_algorithms(void)
{
	uint8_t out[64], c = 0;

	CU_ASSERT_EQUAL(iscsi_chap_digest_len(ISCSI_CHAP_MD5), 16);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(ISCSI_CHAP_SHA1), 20);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(ISCSI_CHAP_SHA256), 32);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(ISCSI_CHAP_SHA3_256), 32);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(0), 0);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(9), 0);
	CU_ASSERT_EQUAL(iscsi_chap_response(9, 1, "s", &c, 1, out), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_chap_alg_parse("SHA3-256"), ISCSI_CHAP_SHA3_256);
	CU_ASSERT_EQUAL(iscsi_chap_alg_parse("sha256"), ISCSI_CHAP_SHA256);
	CU_ASSERT_EQUAL(iscsi_chap_alg_parse("SHA-1"), ISCSI_CHAP_SHA1);
	CU_ASSERT_EQUAL(iscsi_chap_alg_parse("MD5"), ISCSI_CHAP_MD5);
	CU_ASSERT_EQUAL(iscsi_chap_alg_parse("SHA512"), -EINVAL);
	CU_ASSERT_STRING_EQUAL(iscsi_chap_alg_name(ISCSI_CHAP_SHA3_256), "SHA3-256");
}

static void test_choose(void)
{
	const uint32_t all = (1u << ISCSI_CHAP_MD5) | (1u << ISCSI_CHAP_SHA1) |
			     ISCSI_CHAP_ALGS_DEFAULT;
	static const struct {
		const char *chap_a;
		uint32_t allowed;
		uint8_t want;
	} t[] = {
		/* open-iscsi's default list, strongest first */
		{ "8,7,6,5", ISCSI_CHAP_ALGS_DEFAULT, ISCSI_CHAP_SHA3_256 },
		/* the strongest, whatever the initiator's order */
		{ "5,6,7", ISCSI_CHAP_ALGS_DEFAULT, ISCSI_CHAP_SHA256 },
		{ "5,7,8", all, ISCSI_CHAP_SHA3_256 },
		/* weak digests only when allowed */
		{ "5", ISCSI_CHAP_ALGS_DEFAULT, 0 },
		{ "6,5", ISCSI_CHAP_ALGS_DEFAULT, 0 },
		{ "5", all, ISCSI_CHAP_MD5 },
		{ "6,5", all, ISCSI_CHAP_SHA1 },
		{ "8", 1u << ISCSI_CHAP_SHA256, 0 },
		/* unknown and malformed values are skipped */
		{ "1,x,99,7", ISCSI_CHAP_ALGS_DEFAULT, ISCSI_CHAP_SHA256 },
		{ "7x,5", all, ISCSI_CHAP_MD5 },
		{ "", all, 0 },
		{ NULL, all, 0 },
	};
	uint32_t offered;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t got = iscsi_chap_choose(t[i].chap_a, t[i].allowed, NULL);

		if (got != t[i].want)
			printf("case %zu: CHAP_A=%s -> %u, want %u\n", i,
			       t[i].chap_a ? t[i].chap_a : "(null)", got, t[i].want);
		CU_ASSERT_EQUAL(got, t[i].want);
	}
	iscsi_chap_choose("5,6", ISCSI_CHAP_ALGS_DEFAULT, &offered);
	CU_ASSERT_EQUAL(offered, (1u << ISCSI_CHAP_MD5) | (1u << ISCSI_CHAP_SHA1));
}

static void test_check(void)
{
	uint8_t chal[33], rsp[32]; /* one more: the "wrong challenge" case starts at chal + 1 */
	char hex[2 * 32 + 3];

	for (int i = 0; i < 33; i++)
		chal[i] = (uint8_t)(0xa0 + i);
	for (uint8_t alg = ISCSI_CHAP_MD5; alg <= ISCSI_CHAP_SHA3_256; alg++) {
		unsigned int dl = iscsi_chap_digest_len(alg);

		CU_ASSERT_EQUAL(iscsi_chap_response(alg, 7, SECRET, chal, dl, rsp), 0);
		iscsi_text_encode_hex(rsp, dl, hex);
		CU_ASSERT_EQUAL(iscsi_chap_check(alg, 7, SECRET, chal, dl, hex), 0);
		/* wrong identifier, secret, challenge */
		CU_ASSERT_EQUAL(iscsi_chap_check(alg, 8, SECRET, chal, dl, hex), -EACCES);
		CU_ASSERT_EQUAL(iscsi_chap_check(alg, 7, "it-secret-0124", chal, dl, hex), -EACCES);
		CU_ASSERT_EQUAL(iscsi_chap_check(alg, 7, SECRET, chal + 1, dl, hex), -EACCES);
		/* a response of another digest's length */
		hex[2 + 2 * 16] = '\0';
		if (dl != 16)
			CU_ASSERT_EQUAL(iscsi_chap_check(alg, 7, SECRET, chal, dl, hex), -EACCES);
	}
	CU_ASSERT_EQUAL(iscsi_chap_check(ISCSI_CHAP_SHA256, 7, SECRET, chal, 32, "0xzz"), -EACCES);
	CU_ASSERT_EQUAL(iscsi_chap_check(ISCSI_CHAP_SHA256, 7, SECRET, chal, 32, NULL), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_chap_check(9, 7, SECRET, chal, 32, "0x00"), -EINVAL);
}

static void test_mutual(void)
{
	const char *tsecret = "target-secret-456";
	uint8_t ours[32], theirs[32], ref[32], dec[32];
	char hex[2 * 32 + 3], chap_c[2 * 32 + 3];

	for (int i = 0; i < 32; i++) {
		ours[i] = (uint8_t)i;
		theirs[i] = (uint8_t)(0x55 ^ i);
	}
	iscsi_text_encode_hex(theirs, sizeof(theirs), chap_c);
	/* the answer to the initiator's CHAP_I/CHAP_C, with the target's secret */
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_SHA3_256, "77", chap_c, tsecret, ours, 32, hex,
					  sizeof(hex)),
			0);
	reference("SHA3-256", 77, tsecret, theirs, 32, ref);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary(hex, dec, sizeof(dec)), 32);
	CU_ASSERT_EQUAL(memcmp(dec, ref, 32), 0);
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_MD5, "0", chap_c, tsecret, ours, 16, hex,
					  sizeof(hex)),
			0);
	reference("MD5", 0, tsecret, theirs, 32, ref);
	CU_ASSERT_EQUAL(iscsi_text_decode_binary(hex, dec, sizeof(dec)), 16);
	CU_ASSERT_EQUAL(memcmp(dec, ref, 16), 0);
	/* reflection: our own challenge sent back to us */
	iscsi_text_encode_hex(ours, sizeof(ours), chap_c);
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_SHA256, "1", chap_c, tsecret, ours, 32, hex,
					  sizeof(hex)),
			-EACCES);
	/* malformed: no CHAP_I, CHAP_I out of range, short or missing challenge */
	iscsi_text_encode_hex(theirs, sizeof(theirs), chap_c);
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_SHA256, NULL, chap_c, tsecret, ours, 32, hex,
					  sizeof(hex)),
			-EPROTO);
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_SHA256, "256", chap_c, tsecret, ours, 32, hex,
					  sizeof(hex)),
			-EPROTO);
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_SHA256, "1", "0x0102", tsecret, ours, 32, hex,
					  sizeof(hex)),
			-EPROTO);
	CU_ASSERT_EQUAL(iscsi_chap_answer(ISCSI_CHAP_SHA256, "1", NULL, tsecret, ours, 32, hex,
					  sizeof(hex)),
			-EPROTO);
}

static void test_random(void)
{
	uint8_t a[32] = { 0 }, b[32] = { 0 };

	CU_ASSERT_EQUAL(iscsi_chap_random(a, sizeof(a)), 0);
	CU_ASSERT_EQUAL(iscsi_chap_random(b, sizeof(b)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, b, sizeof(a)), 0);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "known responses", test_vectors },
		{ "algorithms", test_algorithms },
		{ "strongest digest both allow", test_choose },
		{ "CHAP_R check", test_check },
		{ "mutual CHAP and reflection", test_mutual },
		{ "challenges", test_random },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_chap", NULL, NULL, tests);
}
