/* SPDX-License-Identifier: MIT */
/* Secret buffers, CRC-32 and the base64(key || crc) framing (common/secret.h). */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/secret.h"
#include "ut.h"

static void test_crc32(void)
{
	/* The CRC-32 check value (IEEE 802.3, zlib crc32()). */
	CU_ASSERT_EQUAL(nvme_key_crc32("123456789", 9), 0xcbf43926u);
	CU_ASSERT_EQUAL(nvme_key_crc32("", 0), 0);
	CU_ASSERT_EQUAL(nvme_key_crc32("a", 1), 0xe8b7be43u);
}

static void test_secret(void)
{
	static const uint8_t k[4] = { 1, 2, 3, 4 };
	struct nvme_secret *a = nvme_secret_from(k, sizeof(k));
	struct nvme_secret *b = nvme_secret_from(k, sizeof(k));
	struct nvme_secret *c = nvme_secret_alloc(4);

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(a->len, 4);
	CU_ASSERT(nvme_secret_equal(a, b));
	CU_ASSERT(!nvme_secret_equal(a, c)); /* zeroed */
	c->key[0] = 1;
	CU_ASSERT(!nvme_secret_equal(a, c));
	CU_ASSERT(!nvme_secret_equal(a, NULL));
	CU_ASSERT_PTR_NULL(nvme_secret_alloc(0));
	nvme_secret_free(a);
	nvme_secret_free(b);
	nvme_secret_free(c);
	nvme_secret_free(NULL);
}

/* The key of `nvme gen-dhchap-key --secret=000102...1f --hmac=0` (nvme-cli 2.3). */
#define KEY32_B64 "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR"

static void test_b64crc(void)
{
	uint8_t key[32];
	char out[NVME_KEY_B64_LEN(64) + 1];
	struct nvme_secret *s;
	uint32_t crc = 0;

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	CU_ASSERT_EQUAL(nvme_key_encode_b64crc(key, 32, out, sizeof(out)), 48);
	CU_ASSERT_STRING_EQUAL(out, KEY32_B64);
	CU_ASSERT_EQUAL(nvme_key_decode_b64crc(KEY32_B64, strlen(KEY32_B64), &s, &crc), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->len, 32);
	CU_ASSERT_EQUAL(memcmp(s->key, key, 32), 0);
	CU_ASSERT_EQUAL(crc, nvme_key_crc32(key, 32));
	nvme_secret_free(s);

	CU_ASSERT_EQUAL(nvme_key_encode_b64crc(key, 16, out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(nvme_key_encode_b64crc(key, 32, out, 48), -ENOSPC);
}

static const struct {
	const char *b64;
	int rc;
} bad_b64crc[] = {
	/* last character changed: CRC mismatch */
	{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS", -EBADMSG },
	/* a key byte changed */
	{ "AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR", -EBADMSG },
	/* one character short */
	{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kfia", -EILSEQ },
	/* four characters short: 33 bytes decode, 29-byte key */
	{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+K", -EMSGSIZE },
	{ "", -EMSGSIZE },
	{ "AAEC", -EMSGSIZE },
	/* longer than any key */
	{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR"
	  "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR"
	  "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR",
	  -EMSGSIZE },
	{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kfia*", -EILSEQ },
};

static void test_b64crc_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_b64crc) / sizeof(bad_b64crc[0]); i++) {
		struct nvme_secret *s = (struct nvme_secret *)1;
		int rc = nvme_key_decode_b64crc(bad_b64crc[i].b64, strlen(bad_b64crc[i].b64), &s,
						NULL);

		CU_ASSERT_EQUAL(rc, bad_b64crc[i].rc);
		CU_ASSERT_PTR_NULL(s);
		if (rc != bad_b64crc[i].rc)
			fprintf(stderr, "case %zu: rc %d\n", i, rc);
	}
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "CRC-32", test_crc32 },
		{ "secret buffers", test_secret },
		{ "base64(key || crc)", test_b64crc },
		{ "bad base64(key || crc)", test_b64crc_bad },
		CU_TEST_INFO_NULL,
	};

	return ut_run("secret", NULL, NULL, tests);
}
