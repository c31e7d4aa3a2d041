/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP secret representation and transformation (common/dhchap_key.h).
 *
 * The interop vectors were produced by nvme-cli 2.3 / libnvme 1.3 (Debian 12), with
 *   S32 = 000102...1f, S48 = 404142...6f, S64 = 808182...bf,
 *   NQN = nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6:
 *
 *   nvme gen-dhchap-key --secret=<S> --key-length=<L> --hmac=<H> --nqn=<NQN>
 *
 * and checked with `nvme check-dhchap-key --key=<K>`, which printed the CRCs below.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/dhchap_crypto.h"
#include "common/dhchap_key.h"
#include "ut.h"

#define NQN  "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
#define NQN2 "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000002"

struct cli_case {
	uint8_t first; /* secret = first, first + 1, ... */
	size_t len;
	uint8_t hmac;
	const char *nqn;
	const char *out; /* what nvme gen-dhchap-key printed */
	uint32_t crc;    /* what nvme check-dhchap-key printed, 0 = not checked */
};

static const struct cli_case cli_cases[] = {
	{ 0x00, 32, 0, NQN, "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", 0 },
	{ 0x40, 48, 0, NQN,
	  "DHHC-1:00:QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZ2hpamtsbW5v"
	  "oBXMjQ==:",
	  0 },
	{ 0x80, 64, 0, NQN,
	  "DHHC-1:00:gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1tre4"
	  "ubq7vL2+v6rfDIU=:",
	  0 },
	{ 0x00, 32, 1, NQN,
	  "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", 0xe6580a66 },
	{ 0x40, 48, 2, NQN,
	  "DHHC-1:02:Ycyi6NFMdr7npRY/2yykR3R/KhI9ULQBfGnlfomr+vFYtK33xBjqCJHQautzrwpD"
	  "6optSw==:",
	  0 },
	{ 0x80, 64, 3, NQN,
	  "DHHC-1:03:ostrXQ+0trqFK1VKYhOlDpeBeKP6+X34rref2yQTbuVzIK8EF1vFXGdHyAapualNqzt5cJzx1CQQ"
	  "rSA85uLXXpVmW/k=:",
	  0xf95b6695 },
	{ 0x00, 32, 1, NQN2, "DHHC-1:01:Gr02kDq2ZAV6ZBSjCUNratE9rBG+MYhyBGtvuOa2ndDrgj/0:", 0 },
};

static void fill(uint8_t *buf, uint8_t first, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(first + i);
}

/* Our generator reproduces nvme gen-dhchap-key, and parse/format round-trip its output. */
static void test_nvme_cli_vectors(void)
{
	for (size_t i = 0; i < sizeof(cli_cases) / sizeof(cli_cases[0]); i++) {
		const struct cli_case *c = &cli_cases[i];
		struct nvme_dhchap_key gen, parsed;
		char text[NVME_DHCHAP_KEY_TEXT_MAX], err[128] = "";
		const char *colon = strrchr(c->out, ':');
		struct nvme_secret *s = NULL;
		uint8_t secret[64];
		uint32_t crc = 0;

		fill(secret, c->first, c->len);
		CU_ASSERT_EQUAL(nvme_dhchap_key_generate(secret, c->len, c->hmac, c->nqn, &gen), 0);
		CU_ASSERT_EQUAL(nvme_dhchap_key_format(&gen, text, sizeof(text)),
				(int)strlen(c->out));
		CU_ASSERT_STRING_EQUAL(text, c->out);

		CU_ASSERT_EQUAL(nvme_dhchap_key_parse(c->out, &parsed, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(parsed.hash, c->hmac);
		CU_ASSERT(nvme_secret_equal(parsed.secret, gen.secret));
		CU_ASSERT_EQUAL(nvme_dhchap_key_format(&parsed, text, sizeof(text)),
				(int)strlen(c->out));
		CU_ASSERT_STRING_EQUAL(text, c->out);
		if (c->hmac == 0)
			CU_ASSERT(parsed.secret && memcmp(parsed.secret->key, secret, c->len) == 0);

		if (c->crc) {
			CU_ASSERT_EQUAL(nvme_key_decode_b64crc(c->out + 10,
							       (size_t)(colon - (c->out + 10)), &s,
							       &crc),
					0);
			CU_ASSERT_EQUAL(crc, c->crc);
			nvme_secret_free(s);
		}
		nvme_dhchap_key_clear(&gen);
		nvme_dhchap_key_clear(&parsed);
		CU_ASSERT_PTR_NULL(parsed.secret);
	}
}

/*
 * The transformation on its own: nvme-cli printed HMAC(S, NQN || "NVMe-over-Fabrics") for
 * --hmac=H, which is what nvme_dhchap_key_transform() computes for {H, S}.
 */
static void test_transform(void)
{
	for (size_t i = 3; i < sizeof(cli_cases) / sizeof(cli_cases[0]); i++) {
		const struct cli_case *c = &cli_cases[i];
		struct nvme_dhchap_key raw = { .hash = c->hmac }, printed;
		struct nvme_secret *t = NULL;
		uint8_t secret[64];

		fill(secret, c->first, c->len);
		raw.secret = nvme_secret_from(secret, c->len);
		CU_ASSERT_EQUAL(nvme_dhchap_key_parse(c->out, &printed, NULL, 0), 0);
		CU_ASSERT_EQUAL(nvme_dhchap_key_transform(&raw, c->nqn, &t), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_EQUAL(t->len, nvme_auth_hash_len(c->hmac));
		CU_ASSERT(nvme_secret_equal(t, printed.secret));
		nvme_secret_free(t);
		/* Another NQN, another key. */
		CU_ASSERT_EQUAL(nvme_dhchap_key_transform(&raw, "nqn.other", &t), 0);
		CU_ASSERT(!nvme_secret_equal(t, printed.secret));
		nvme_secret_free(t);
		nvme_dhchap_key_clear(&raw);
		nvme_dhchap_key_clear(&printed);
	}
}

/* NN = 00: the key used in the HMAC is the secret itself. */
static void test_transform_none(void)
{
	struct nvme_dhchap_key k;
	struct nvme_secret *t = NULL;

	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(cli_cases[0].out, &k, NULL, 0), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_key_transform(&k, NQN, &t), 0);
	CU_ASSERT(nvme_secret_equal(t, k.secret));
	CU_ASSERT_PTR_NOT_EQUAL(t, k.secret);
	nvme_secret_free(t);
	CU_ASSERT_EQUAL(nvme_dhchap_key_transform(&k, NULL, &t), -EINVAL);
	nvme_dhchap_key_clear(&k);
}

struct bad_case {
	const char *in;
	int rc;
	const char *msg;
};

static const struct bad_case bad_cases[] = {
	/* prefix */
	{ "", -EINVAL, "does not start with" },
	{ "DHHC-2:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EINVAL, "DHHC-1" },
	{ "dhhc-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EINVAL, "DHHC-1" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EINVAL, "DHHC-1" },
	{ "DHHC-1:1:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EINVAL, "two digits" },
	{ "DHHC-1:001:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EINVAL, "two digits" },
	{ "DHHC-1:04:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EINVAL, "unknown" },
	/* framing */
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm", -EINVAL, "truncated" },
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:\n", -EINVAL, "after" },
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm::", -EINVAL, "after" },
	/* base64: truncated by one character, bad character */
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmClj:", -EILSEQ, "base64" },
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmC*jm:", -EILSEQ, "base64" },
	{ "DHHC-1:01:jWiK0NeS weQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EILSEQ, "base64" },
	/* lengths: truncated by four characters, empty, 16-byte key, NN/length mismatch */
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlm:", -EMSGSIZE, "length" },
	{ "DHHC-1:00::", -EMSGSIZE, "length" },
	{ "DHHC-1:00:AAECAwQFBgcICQoLDA0OD4jizs4=:", -EMSGSIZE, "length" },
	{ "DHHC-1:01:QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZ2hpamtsbW5voBXMjQ==:",
	  -EMSGSIZE, "needs 32" },
	{ "DHHC-1:03:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", -EMSGSIZE, "needs 64" },
	/* CRC: what nvme check-dhchap-key rejects with "CRC mismatch (key e7580a66, ...)" */
	{ "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljn:", -EBADMSG, "CRC" },
	{ "DHHC-1:01:kWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", -EBADMSG, "CRC" },
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct nvme_dhchap_key k = { .hash = 9, .secret = (struct nvme_secret *)1 };
		char err[160] = "";
		int rc = nvme_dhchap_key_parse(c->in, &k, err, sizeof(err));

		CU_ASSERT_EQUAL(rc, c->rc);
		CU_ASSERT_PTR_NULL(k.secret);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, c->msg));
		CU_ASSERT_PTR_NULL(strchr(err, '\n'));
		/* The message never echoes the key material. */
		CU_ASSERT_PTR_NULL(strstr(err, "jWiK"));
		CU_ASSERT_PTR_NULL(strstr(err, "QEFC"));
		if (rc != c->rc || !strstr(err, c->msg))
			fprintf(stderr, "case %zu '%s': rc %d '%s'\n", i, c->in, rc, err);
	}
	CU_ASSERT_EQUAL(nvme_dhchap_key_parse(NULL, &(struct nvme_dhchap_key){ 0 }, NULL, 0),
			-EINVAL);
}

static void test_generate_random(void)
{
	struct nvme_dhchap_key a, b, p;
	char ta[NVME_DHCHAP_KEY_TEXT_MAX], tb[NVME_DHCHAP_KEY_TEXT_MAX];

	CU_ASSERT_EQUAL(nvme_dhchap_key_generate(NULL, 48, NVME_AUTH_HASH_SHA384, NQN, &a), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_key_generate(NULL, 48, NVME_AUTH_HASH_SHA384, NQN, &b), 0);
	CU_ASSERT(!nvme_secret_equal(a.secret, b.secret));
	CU_ASSERT(nvme_dhchap_key_format(&a, ta, sizeof(ta)) > 0);
	CU_ASSERT(nvme_dhchap_key_format(&b, tb, sizeof(tb)) > 0);
	CU_ASSERT_EQUAL(strncmp(ta, "DHHC-1:02:", 10), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_key_parse(ta, &p, NULL, 0), 0);
	CU_ASSERT(nvme_secret_equal(a.secret, p.secret));
	nvme_dhchap_key_clear(&p);
	CU_ASSERT_EQUAL(nvme_dhchap_key_format(&a, ta, 20), -ENOSPC);
	nvme_dhchap_key_clear(&a);
	nvme_dhchap_key_clear(&b);

	/* nvme-cli's "Invalid key length 48 for SHA(256)", unknown hash, bad length */
	CU_ASSERT_EQUAL(nvme_dhchap_key_generate(NULL, 48, NVME_AUTH_HASH_SHA256, NQN, &a),
			-EINVAL);
	CU_ASSERT_EQUAL(nvme_dhchap_key_generate(NULL, 32, 4, NQN, &a), -EINVAL);
	CU_ASSERT_EQUAL(nvme_dhchap_key_generate(NULL, 16, 0, NQN, &a), -EINVAL);
	CU_ASSERT_EQUAL(nvme_dhchap_key_generate(NULL, 32, NVME_AUTH_HASH_SHA256, NULL, &a),
			-EINVAL);
	CU_ASSERT_PTR_NULL(a.secret);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "nvme gen-dhchap-key vectors", test_nvme_cli_vectors },
		{ "transformation", test_transform },
		{ "no transformation", test_transform_none },
		{ "malformed secrets", test_bad },
		{ "random keys", test_generate_random },
		CU_TEST_INFO_NULL,
	};

	return ut_run("dhchap_key", NULL, NULL, tests);
}
