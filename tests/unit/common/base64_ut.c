/* SPDX-License-Identifier: MIT */
/* Strict base64 codec (common/base64.h): RFC 4648 section 10 vectors and malformed input. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/base64.h"
#include "ut.h"

/* RFC 4648 section 10. */
static const struct {
	const char *plain, *b64;
} rfc4648[] = {
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

static void test_rfc4648(void)
{
	for (size_t i = 0; i < sizeof(rfc4648) / sizeof(rfc4648[0]); i++) {
		const char *p = rfc4648[i].plain, *b = rfc4648[i].b64;
		char enc[16];
		uint8_t dec[16];
		int n;

		n = base64_encode(p, strlen(p), enc, sizeof(enc));
		CU_ASSERT_EQUAL(n, (int)strlen(b));
		CU_ASSERT_STRING_EQUAL(enc, b);
		CU_ASSERT_EQUAL(BASE64_ENCODED_LEN(strlen(p)), strlen(b));
		n = base64_decode(b, strlen(b), dec, sizeof(dec));
		CU_ASSERT_EQUAL(n, (int)strlen(p));
		CU_ASSERT(n >= 0 && memcmp(dec, p, (size_t)n) == 0);
	}
}

static void test_all_bytes(void)
{
	uint8_t in[256], out[256];
	char enc[BASE64_ENCODED_LEN(256) + 1];

	for (int i = 0; i < 256; i++)
		in[i] = (uint8_t)i;
	CU_ASSERT_EQUAL(base64_encode(in, sizeof(in), enc, sizeof(enc)), 344);
	CU_ASSERT_EQUAL(base64_decode(enc, strlen(enc), out, sizeof(out)), 256);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof(in)), 0);
}

static const char *const malformed[] = {
	"Zg=",      /* length not a multiple of 4 (truncated) */
	"Zm9vY",    /* truncated */
	"Zg=a",     /* data after padding */
	"Z===",     /* three padding characters */
	"=Zm9",     /* padding first */
	"Zm=v",     /* padding inside */
	"Zg==Zm8=", /* padding before the last group */
	"Zh==",     /* non-zero unused bits: not what the encoder writes for "f" */
	"Zm9=",     /* same, one padding character */
	"Zm9v!A==", /* outside the alphabet */
	"Zm9v YQ=", /* space */
	"Zm-_",     /* URL-safe alphabet is not accepted */
};

static void test_malformed(void)
{
	uint8_t out[16];

	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		int rc = base64_decode(malformed[i], strlen(malformed[i]), out, sizeof(out));

		CU_ASSERT_EQUAL(rc, -EILSEQ);
		if (rc != -EILSEQ)
			fprintf(stderr, "case '%s': rc %d\n", malformed[i], rc);
	}
}

static void test_space(void)
{
	char enc[8];
	uint8_t out[8];

	CU_ASSERT_EQUAL(base64_encode("foo", 3, enc, 4), -ENOSPC); /* no room for the NUL */
	CU_ASSERT_EQUAL(base64_encode("foo", 3, enc, 5), 4);
	CU_ASSERT_EQUAL(base64_decode("Zm9vYmFy", 8, out, 5), -ENOSPC);
	CU_ASSERT_EQUAL(base64_decode("Zm9vYmE=", 8, out, 5), 5);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "RFC 4648 vectors", test_rfc4648 },
		{ "all byte values", test_all_bytes },
		{ "malformed input", test_malformed },
		{ "output space", test_space },
		CU_TEST_INFO_NULL,
	};

	return ut_run("base64", NULL, NULL, tests);
}
