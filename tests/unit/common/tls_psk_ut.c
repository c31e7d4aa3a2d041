/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP TLS PSKs (common/tls_psk.h).
 *
 * Vector sources:
 *  [cli]    nvme-cli 2.3 / libnvme 1.3 (Debian 12): `nvme gen-tls-key --hmac=1|2` (random
 *           secret) and `nvme check-tls-key --key=<K>`, which printed "Key is valid (HMAC h,
 *           length n, CRC c)". That nvme-cli has no --identity/--hostnqn/--subsysnqn.
 *  [libnvme] libnvme test/psk.c: interchange strings and the version 1 identities (normal and
 *           --compat derivation) of a fixed configured PSK.
 *  [kunit]  Linux drivers/nvme/common/tests/auth_kunit.c: PSK digest and TLS PSK of a
 *           generated PSK.
 *  [py]     computed with Python's `cryptography` HKDF and hmac modules from the formulas in
 *           tls_psk.h (no tool derives these in the versions at hand); each agrees with the
 *           [libnvme] identities, which depend on the same retained PSK.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/dhchap_crypto.h"
#include "common/tls_psk.h"
#include "ut_hex.h"
#include "ut.h"

#define K32    "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03"
#define K48    K32 "ffc344bcf442e2dd6d8bc4870b5d5b03"
#define HOST   "nqn.psk-test-host"
#define SUBSYS "nqn.psk-test-subsys"

static struct nvme_secret *secret_hex(const char *hex)
{
	uint8_t buf[128];
	int n = ut_unhex(hex, buf, sizeof(buf));

	return n > 0 ? nvme_secret_from(buf, (size_t)n) : NULL;
}

/* ---- Interchange format ------------------------------------------------------------- */

struct interchange_case {
	const char *text;
	uint8_t hmac;
	const char *key_hex; /* NULL: not known (random) */
	size_t len;
	uint32_t crc; /* from nvme check-tls-key, 0 = not checked */
};

static const struct interchange_case interchange[] = {
	/* [libnvme] */
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", 0, K32, 32, 0 },
	/* [libnvme], CRC from [cli] check-tls-key */
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", 1, K32, 32,
	  0xd9baf45f },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcL"
	  "XVsDn8kXZQ==:",
	  2, K48, 48, 0x6517c99f },
	/* [cli] gen-tls-key --hmac=1 / --hmac=2 */
	{ "NVMeTLSkey-1:01:BSxxkCIiC1P/xyZbS1OUyGm1Yc5ImKltU96XevzO2vcJCwuh:", 1, NULL, 32,
	  0xa10b0b09 },
	{ "NVMeTLSkey-1:02:UDHBUwaB/w38SC60PsVVtE177JelNom8Rl+hnLSp0/qsqgG+n1SJlGrfFF2y"
	  "+QHyyd0E+w==:",
	  2, NULL, 48, 0xfb04ddc9 },
};

static void test_interchange(void)
{
	for (size_t i = 0; i < sizeof(interchange) / sizeof(interchange[0]); i++) {
		const struct interchange_case *c = &interchange[i];
		const char *b64 = c->text + 16, *colon = strrchr(c->text, ':');
		char text[NVME_TLS_KEY_TEXT_MAX], err[128] = "";
		struct nvme_tls_key k, f = { .hmac = c->hmac };
		struct nvme_secret *s = NULL;
		uint32_t crc = 0;

		CU_ASSERT_EQUAL(nvme_tls_key_parse(c->text, &k, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(k.hmac, c->hmac);
		CU_ASSERT_PTR_NOT_NULL_FATAL(k.psk);
		CU_ASSERT_EQUAL(k.psk->len, c->len);
		if (c->key_hex)
			CU_ASSERT(ut_hex_eq(k.psk->key, k.psk->len, c->key_hex));
		CU_ASSERT_EQUAL(nvme_tls_key_format(&k, text, sizeof(text)), (int)strlen(c->text));
		CU_ASSERT_STRING_EQUAL(text, c->text);
		if (c->key_hex) {
			f.psk = secret_hex(c->key_hex);
			CU_ASSERT_EQUAL(nvme_tls_key_format(&f, text, sizeof(text)),
					(int)strlen(c->text));
			CU_ASSERT_STRING_EQUAL(text, c->text);
			nvme_tls_key_clear(&f);
		}
		if (c->crc) {
			CU_ASSERT_EQUAL(
				nvme_key_decode_b64crc(b64, (size_t)(colon - b64), &s, &crc), 0);
			CU_ASSERT_EQUAL(crc, c->crc);
			nvme_secret_free(s);
		}
		CU_ASSERT_EQUAL(nvme_tls_key_cipher(&k), c->len == 48 ? 2 : 1);
		nvme_tls_key_clear(&k);
	}
}

struct bad_case {
	const char *in;
	int rc;
	const char *msg;
};

static const struct bad_case bad_keys[] = {
	{ "", -EINVAL, "does not start" },
	{ "NVMeTLSkey-2:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EINVAL, "start" },
	{ "DHHC-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EINVAL, "start" },
	{ "NVMeTLSkey-1:1:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EINVAL, "digits" },
	{ "NVMeTLSkey-1:03:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EINVAL, "unknown" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ", -EINVAL,
	  "truncated" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ: ", -EINVAL, "after" },
	/* [cli] check-tls-key: "CRC mismatch (key c0baf45f, crc d9baf45f)" */
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrA:", -EBADMSG, "CRC" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9Lr:", -EILSEQ, "base64" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9L#Z:", -EILSEQ, "base64" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtd:", -EMSGSIZE, "length" },
	/* [cli] check-tls-key: "Invalid key length ... for SHA(256)" */
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcL"
	  "XVsDn8kXZQ==:",
	  -EMSGSIZE, "does not fit" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EMSGSIZE, "fit" },
	/* a 64-byte key is valid DH-HMAC-CHAP but not a TLS PSK */
	{ "NVMeTLSkey-1:00:gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1"
	  "tre4ubq7vL2+v6rfDIU=:",
	  -EMSGSIZE, "fit" },
};

static void test_interchange_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++) {
		const struct bad_case *c = &bad_keys[i];
		struct nvme_tls_key k;
		char err[160] = "";
		int rc = nvme_tls_key_parse(c->in, &k, err, sizeof(err));

		CU_ASSERT_EQUAL(rc, c->rc);
		CU_ASSERT_PTR_NULL(k.psk);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, c->msg));
		CU_ASSERT_PTR_NULL(strstr(err, "VRLb"));
		if (rc != c->rc || !strstr(err, c->msg))
			fprintf(stderr, "case %zu '%s': rc %d '%s'\n", i, c->in, rc, err);
	}
}

/* ---- Derivations of a configured PSK ------------------------------------------------ */

struct derive_case {
	const char *key_hex;
	uint8_t hmac;
	unsigned int flags;
	const char *retained; /* [py] */
	const char *id1;      /* [libnvme] */
	const char *tls1;     /* [py] */
	const char *tls0;     /* [py] */
};

static const struct derive_case derive_cases[] = {
	{ K32, 1, 0, "073311dec37e219ff3acd43f130130c5bdd443c066e1cc3424e49030234ff7d5",
	  "NVMe1R01 " HOST " " SUBSYS " iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=",
	  "8fc3c0badfd4c0c66fa3ca33aadd0314f85536cc9bc47338b60f3e6e563786ca",
	  "05c6503551ad136e6ee32e6eeb3f6d500b69701d84ec71e328f65c7f51566f68" },
	{ K48, 2, 0,
	  "73973a1b51a9acdde29a0610ac6a3ef852cf45936cca6830a661d18f68502f1a"
	  "4c7a8ecb37524e0b1f7087cb4d680ad9",
	  "NVMe1R02 " HOST " " SUBSYS " QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+"
	  "XUD8f9td1VeH5h53yz2wKJG1a",
	  "a2b2f943f479fc682555cec89857c80ed004ce92f32a973d5764155bb7e36b17"
	  "a85368a0666d250afac9282dda2e62ca",
	  "f42ba63824cdfe421914c582921f85b5b5b7e2d4df084caeedc9be20b212e8bb"
	  "0fe8a23e9d59a1c8fc6449da4970a78d" },
	{ K32, 1, NVME_TLS_COMPAT,
	  "ad4cdadfcbaf4e353fcbd09aac891c4d75c5300fe5ee7bb04ae87726a312eddc",
	  "NVMe1R01 " HOST " " SUBSYS " 66GuqV08TsAGII39teWUfwQwizjv06Jy8jOcX3NAAzM=",
	  "b9f5ab2a41ba6e72a23a12066302a2f775fa6c0942c8e0b18ca8ac07edf305e2",
	  "09fb1983ac6d6d0353e7cae4f23daddd651c367fa347c59d9cf6936f5a83eafb" },
	{ K48, 2, NVME_TLS_COMPAT,
	  "12d2452bc4783f50286bf940ad1caa05a304065e379024d9278ca7c9d8a42400"
	  "c47029f198bfcdf5f14c07cb04eb7306",
	  "NVMe1R02 " HOST " " SUBSYS " RsKmYJ3nAn1ApjjMloJFbAkLPivONDAX/"
	  "xW327YBUsn2eGShXSjCZvBaOxscLqmz",
	  "fcefe2e2a2e682b1447dcabf1ec268f78f08c63cd075753abcc8bda2c5c34d48"
	  "d3014aa8d76ad80107e4f5c9f27e2149",
	  "2ee4754186a625b28a3936ef4a40d839c3ad958b2e017562ee07e2501f172ce9"
	  "99dc9c29033ea7ee33f814f192c13f47" },
};

static void test_derive(void)
{
	for (size_t i = 0; i < sizeof(derive_cases) / sizeof(derive_cases[0]); i++) {
		const struct derive_case *c = &derive_cases[i];
		struct nvme_tls_key k = { .hmac = c->hmac, .psk = secret_hex(c->key_hex) };
		char id[NVME_TLS_IDENTITY_MAX], id0[NVME_TLS_IDENTITY_MAX];
		struct nvme_secret *r = NULL, *t = NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(k.psk);
		CU_ASSERT_EQUAL(nvme_tls_retained_psk(&k, HOST, c->flags, &r), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT(ut_hex_eq(r->key, r->len, c->retained));
		nvme_secret_free(r);

		CU_ASSERT_EQUAL(nvme_tls_derive(&k, 1, HOST, SUBSYS, c->flags, id, sizeof(id), &t),
				0);
		CU_ASSERT_STRING_EQUAL(id, c->id1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT(ut_hex_eq(t->key, t->len, c->tls1));
		nvme_secret_free(t);

		snprintf(id0, sizeof(id0), "NVMe0R%02u " HOST " " SUBSYS, c->hmac);
		CU_ASSERT_EQUAL(nvme_tls_derive(&k, 0, HOST, SUBSYS, c->flags, id, sizeof(id), &t),
				0);
		CU_ASSERT_STRING_EQUAL(id, id0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT(ut_hex_eq(t->key, t->len, c->tls0));
		nvme_secret_free(t);

		CU_ASSERT_EQUAL(nvme_tls_derive(&k, 2, HOST, SUBSYS, c->flags, id, sizeof(id), &t),
				-EINVAL);
		CU_ASSERT_EQUAL(nvme_tls_derive(&k, 1, HOST, SUBSYS, c->flags, id, 20, &t),
				-ENOSPC);
		CU_ASSERT_PTR_NULL(t);
		nvme_tls_key_clear(&k);
	}
}

/* HH 00: the configured PSK is the retained PSK; the cipher follows the key length. */
static void test_derive_untransformed(void)
{
	struct nvme_tls_key k = { .hmac = 0, .psk = secret_hex(K32) };
	struct nvme_secret *r = NULL, *t = NULL, *t2 = NULL;
	char id[NVME_TLS_IDENTITY_MAX], digest[NVME_TLS_DIGEST_MAX];

	CU_ASSERT_EQUAL(nvme_tls_retained_psk(&k, HOST, 0, &r), 0);
	CU_ASSERT(nvme_secret_equal(r, k.psk));
	CU_ASSERT_EQUAL(nvme_tls_key_cipher(&k), NVME_AUTH_HASH_SHA256);
	CU_ASSERT_EQUAL(nvme_tls_derive(&k, 1, HOST, SUBSYS, 0, id, sizeof(id), &t), 0);
	/* the same as deriving by hand from the configured PSK */
	CU_ASSERT_EQUAL(nvme_tls_psk_digest(1, k.psk, HOST, SUBSYS, digest, sizeof(digest)), 44);
	CU_ASSERT_EQUAL(strncmp(id, "NVMe1R01 " HOST " " SUBSYS " ", 9 + 18 + 20), 0);
	CU_ASSERT_STRING_EQUAL(id + 9 + 18 + 20, digest);
	CU_ASSERT_EQUAL(nvme_tls_psk_derive(k.psk, id, 0, &t2), 0);
	CU_ASSERT(nvme_secret_equal(t, t2));
	nvme_secret_free(r);
	nvme_secret_free(t);
	nvme_secret_free(t2);
	nvme_tls_key_clear(&k);
}

/* ---- Generated PSK of secure concatenation: [kunit] --------------------------------- */

static void test_generated_kunit(void)
{
	static const struct {
		uint8_t hash;
		const char *psk, *digest, *tls;
	} cases[] = {
		{ 1, "1733c59fa7f48fcf37f5f26fc4ff0268ad4f78e030f4f3b0bfd1d47e7bb1447a",
		  "OldoKuTfKddMuyCznAZojkWD7P4D9/AtzDzLimtOxqI=",
		  "3c17da628474a04d2247c4cab47968c915388193f7c071bd9489cc3666cd7cc8" },
		{ 2,
		  "f14b2dd3234c459694d3bc63f8968bd6b37c2c6de849e22e118749001ce4bbe8"
		  "640b9e3a748cb11ce4b1d71d359cce39",
		  "cffMWk8TSS7HOQebjgYEIkrPrjWPV4JE5cdPB8WhEvY4JBW5YynKyv66XscN4A9n",
		  "2774753233537b3fa50eb7d16a8e43457d85f4906c005b2236616c5d80939d08"
		  "98fff15bb8b77119d2be0aac423e7590" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvme_secret *psk = secret_hex(cases[i].psk), *tls = NULL;
		char digest[NVME_TLS_DIGEST_MAX], id[NVME_TLS_IDENTITY_MAX];

		CU_ASSERT_PTR_NOT_NULL_FATAL(psk);
		CU_ASSERT_EQUAL(nvme_tls_psk_digest(cases[i].hash, psk, "hostnqn", "subsysnqn",
						    digest, sizeof(digest)),
				(int)strlen(cases[i].digest));
		CU_ASSERT_STRING_EQUAL(digest, cases[i].digest);
		CU_ASSERT(nvme_tls_psk_identity(1, true, cases[i].hash, "hostnqn", "subsysnqn",
						digest, id, sizeof(id)) > 0);
		CU_ASSERT_EQUAL(strncmp(id, "NVMe1G0", 7), 0);
		CU_ASSERT_EQUAL(nvme_tls_psk_derive(psk, id, 0, &tls), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(tls);
		CU_ASSERT(ut_hex_eq(tls->key, tls->len, cases[i].tls));
		nvme_secret_free(tls);
		nvme_secret_free(psk);
	}
	/* no digest for SHA-512 (no TLS 1.3 cipher suite) */
	{
		struct nvme_secret *p = secret_hex(K32);
		char d[NVME_TLS_DIGEST_MAX];

		CU_ASSERT_EQUAL(nvme_tls_psk_digest(3, p, "h", "s", d, sizeof(d)), -EINVAL);
		CU_ASSERT_EQUAL(nvme_tls_psk_digest(1, p, "h", "s", d, 44), -ENOSPC);
		nvme_secret_free(p);
	}
}

/* ---- Identities ----------------------------------------------------------------------- */

static void test_identity_format(void)
{
	char id[NVME_TLS_IDENTITY_MAX], nqn[NVME_NQN_MAX + 1];
	const char *dig48 = "QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a";

	CU_ASSERT_EQUAL(nvme_tls_psk_identity(0, false, 1, HOST, SUBSYS, NULL, id, sizeof(id)),
			9 + 17 + 1 + 19);
	CU_ASSERT_STRING_EQUAL(id, "NVMe0R01 " HOST " " SUBSYS);
	CU_ASSERT(nvme_tls_psk_identity(0, true, 2, HOST, SUBSYS, "ignored", id, sizeof(id)) > 0);
	CU_ASSERT_STRING_EQUAL(id, "NVMe0G02 " HOST " " SUBSYS);
	CU_ASSERT_EQUAL(nvme_tls_psk_identity(1, false, 1, HOST, SUBSYS, NULL, id, sizeof(id)),
			-EINVAL);
	CU_ASSERT_EQUAL(nvme_tls_psk_identity(2, false, 1, HOST, SUBSYS, "x", id, sizeof(id)),
			-EINVAL);
	CU_ASSERT_EQUAL(nvme_tls_psk_identity(0, false, 3, HOST, SUBSYS, NULL, id, sizeof(id)),
			-EINVAL);
	CU_ASSERT_EQUAL(nvme_tls_psk_identity(0, false, 1, "", SUBSYS, NULL, id, sizeof(id)),
			-EINVAL);
	/* the longest identity fits NVME_TLS_IDENTITY_MAX */
	memset(nqn, 'n', NVME_NQN_MAX);
	nqn[NVME_NQN_MAX] = '\0';
	CU_ASSERT_EQUAL(nvme_tls_psk_identity(1, false, 2, nqn, nqn, dig48, id, sizeof(id)),
			NVME_TLS_IDENTITY_MAX - 1);
}

static void test_identity_parse(void)
{
	static const struct bad_case bad_ids[] = {
		{ "", -EINVAL, "expected" },
		{ "NVMe0R01", -EINVAL, "expected" },
		{ "nvme0R01 h s", -EINVAL, "expected" },
		{ "NVMe2R01 h s", -EINVAL, "version" },
		{ "NVMe0X01 h s", -EINVAL, "type" },
		{ "NVMe0R03 h s", -EINVAL, "hash" },
		{ "NVMe0R00 h s", -EINVAL, "hash" },
		{ "NVMe0R01 h", -EINVAL, "subsystem" },
		{ "NVMe0R01 h ", -EINVAL, "subsystem" },
		{ "NVMe0R01  s", -EINVAL, "subsystem" },
		{ "NVMe0R01 h s d", -EINVAL, "version 0" },
		{ "NVMe1R01 h s", -EINVAL, "without digest" },
		{ "NVMe1R01 h s d", -EINVAL, "digest length" },
		{ "NVMe1R02 h s iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=", -EINVAL, "length" },
		{ "NVMe1R01 h s iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU= x", -EINVAL,
		  "malformed" },
	};
	struct nvme_tls_identity id;
	char err[128];

	CU_ASSERT_EQUAL(nvme_tls_identity_parse(derive_cases[0].id1, &id, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(id.version, 1);
	CU_ASSERT(!id.generated);
	CU_ASSERT_EQUAL(id.hash_id, 1);
	CU_ASSERT_STRING_EQUAL(id.hostnqn, HOST);
	CU_ASSERT_STRING_EQUAL(id.subsysnqn, SUBSYS);
	CU_ASSERT_STRING_EQUAL(id.digest, "iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=");
	CU_ASSERT_EQUAL(nvme_tls_identity_parse("NVMe0G02 " HOST " " SUBSYS, &id, err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(id.version, 0);
	CU_ASSERT(id.generated);
	CU_ASSERT_EQUAL(id.hash_id, 2);
	CU_ASSERT_STRING_EQUAL(id.subsysnqn, SUBSYS);
	CU_ASSERT_PTR_NULL(id.digest);

	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		int rc;

		err[0] = '\0';
		rc = nvme_tls_identity_parse(bad_ids[i].in, &id, err, sizeof(err));
		CU_ASSERT_EQUAL(rc, bad_ids[i].rc);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad_ids[i].msg));
		if (rc != bad_ids[i].rc || !strstr(err, bad_ids[i].msg))
			fprintf(stderr, "case '%s': rc %d '%s'\n", bad_ids[i].in, rc, err);
	}
	CU_ASSERT_EQUAL(nvme_tls_psk_derive(NULL, derive_cases[0].id1, 0,
					    &(struct nvme_secret *){ NULL }),
			-EINVAL);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "interchange format vectors", test_interchange },
		{ "malformed interchange keys", test_interchange_bad },
		{ "retained PSK, identity v0/v1, TLS PSK", test_derive },
		{ "untransformed configured PSK", test_derive_untransformed },
		{ "generated PSK (Linux KUnit vectors)", test_generated_kunit },
		{ "identity formatting", test_identity_format },
		{ "identity parsing", test_identity_parse },
		CU_TEST_INFO_NULL,
	};

	return ut_run("tls_psk", NULL, NULL, tests);
}
