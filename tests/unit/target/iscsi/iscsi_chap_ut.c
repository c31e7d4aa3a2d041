// SPDX-License-Identifier: MIT
/* Unit tests for target/iscsi_chap.c: CHAP responses (MD5, SHA-256) against known values,
 * as the initiator computes them and as a CHAP_R text value decodes. */
#include <CUnit/Basic.h>
#include <string.h>

#include "iscsi/iscsi_internal.h"

static void test_vectors(void)
{
	static const struct {
		uint8_t alg;
		const char *expect; /* CHAP_R as sent: 0x + hex */
	} t[] = {
		{ ISCSI_CHAP_MD5, "0x3c473d831706722a78b79e08493ab11e" },
		{ ISCSI_CHAP_SHA256,
		  "0xca585ba36a1ac22dd6b28adab69503c7d4b42208a288c027f88c36399decfbfc" },
	};
	uint8_t challenge[16], out[64], dec[64];
	char hex[2 * 64 + 3];

	for (int i = 0; i < 16; i++)
		challenge[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		unsigned int dl = iscsi_chap_digest_len(t[i].alg);

		CU_ASSERT_EQUAL(iscsi_chap_response(t[i].alg, 0x2a, "it-secret-0123", challenge,
						    sizeof(challenge), out), 0);
		iscsi_text_encode_hex(out, dl, hex);
		CU_ASSERT_STRING_EQUAL(hex, t[i].expect);
		CU_ASSERT_EQUAL(iscsi_text_decode_binary(t[i].expect, dec, sizeof(dec)), (int)dl);
		CU_ASSERT_EQUAL(memcmp(dec, out, dl), 0);
	}
}

static void test_algorithms(void)
{
	uint8_t out[64], c = 0;

	CU_ASSERT_EQUAL(iscsi_chap_digest_len(ISCSI_CHAP_MD5), 16);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(ISCSI_CHAP_SHA256), 32);
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(6), 0);	/* SHA-1: not offered */
	CU_ASSERT_EQUAL(iscsi_chap_digest_len(0), 0);
	CU_ASSERT_EQUAL(iscsi_chap_response(6, 1, "s", &c, 1, out), -EINVAL);
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
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("iscsi_chap", NULL, NULL);
	CU_add_test(s, "known responses", test_vectors);
	CU_add_test(s, "algorithms", test_algorithms);
	CU_add_test(s, "challenges", test_random);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
