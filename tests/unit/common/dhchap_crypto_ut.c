/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP cryptography (common/dhchap_crypto.h).
 *
 * Vectors: RFC 4231 (HMAC-SHA-256/384/512), RFC 5869 appendix A (HKDF-SHA-256), Linux
 * drivers/nvme/common/tests/auth_kunit.c (generated PSK), and responses computed with
 * Python's hmac/hashlib modules from the byte layout of Linux's
 * nvme_auth_dhchap_setup_host_response() / _ctrl_response() (drivers/nvme/host/auth.c).
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "common/dhchap_crypto.h"
#include "ut_hex.h"
#include "ut.h"

/* ---- HMAC: RFC 4231 section 4, test cases 1-4, 6 and 7 ------------------------------ */

struct hmac_case {
	const char *key_hex; /* or NULL: key_byte repeated key_len times */
	uint8_t key_byte;
	size_t key_len;
	const char *data; /* text, or NULL: data_byte repeated 50 times */
	uint8_t data_byte;
	const char *mac[3]; /* SHA-256, SHA-384, SHA-512 */
};

static const struct hmac_case rfc4231[] = {
	{ NULL,
	  0x0b,
	  20,
	  "Hi There",
	  0,
	  { "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
	    "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59c"
	    "faea9ea9076ede7f4af152e8b2fa9cb6",
	    "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
	    "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854" } },
	{ "4a656665",
	  0,
	  4,
	  "what do ya want for nothing?",
	  0,
	  { "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
	    "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e"
	    "8e2240ca5e69e2c78b3239ecfab21649",
	    "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
	    "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737" } },
	{ NULL,
	  0xaa,
	  20,
	  NULL,
	  0xdd,
	  { "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
	    "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b"
	    "2a5ab39dc13814b94e3ab6e101a34f27",
	    "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39"
	    "bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb" } },
	{ "0102030405060708090a0b0c0d0e0f10111213141516171819",
	  0,
	  25,
	  NULL,
	  0xcd,
	  { "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
	    "3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e"
	    "6801dd23c4a7d679ccf8a386c674cffb",
	    "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db"
	    "a91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd" } },
	{ NULL,
	  0xaa,
	  131,
	  "Test Using Larger Than Block-Size Key - Hash Key First",
	  0,
	  { "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
	    "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c6"
	    "0c2ef6ab4030fe8296248df163f44952",
	    "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
	    "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598" } },
	{ NULL,
	  0xaa,
	  131,
	  "This is a test using a larger than block-size key and a larger than block-size "
	  "data. The key needs to be hashed before being used by the HMAC algorithm.",
	  0,
	  { "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
	    "6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5"
	    "a678cc31e799176d3860e6110c46523e",
	    "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944"
	    "b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58" } },
};

static void test_hmac_rfc4231(void)
{
	for (size_t i = 0; i < sizeof(rfc4231) / sizeof(rfc4231[0]); i++) {
		const struct hmac_case *c = &rfc4231[i];
		uint8_t key[131], data[64], mac[64];
		size_t dlen;

		if (c->key_hex)
			ut_unhex(c->key_hex, key, sizeof(key));
		else
			memset(key, c->key_byte, c->key_len);
		if (c->data) {
			dlen = strlen(c->data);
		} else {
			memset(data, c->data_byte, 50);
			dlen = 50;
		}
		for (uint8_t h = NVME_AUTH_HASH_SHA256; h <= NVME_AUTH_HASH_SHA512; h++) {
			const void *d = c->data ? (const void *)c->data : data;

			CU_ASSERT_EQUAL(nvme_auth_hmac(h, key, c->key_len, d, dlen, mac), 0);
			CU_ASSERT(ut_hex_eq(mac, nvme_auth_hash_len(h), c->mac[h - 1]));
		}
	}
}

static void test_hmac_iov_and_ids(void)
{
	/* RFC 4231 case 2 again, the data split over three buffers. */
	struct iovec iov[3] = { { "what do ", 8 }, { "", 0 }, { "ya want for nothing?", 20 } };
	uint8_t mac[64];

	CU_ASSERT_EQUAL(nvme_auth_hmac_iov(NVME_AUTH_HASH_SHA256, "Jefe", 4, iov, 3, mac), 0);
	CU_ASSERT(ut_hex_eq(mac, 32, rfc4231[1].mac[0]));

	CU_ASSERT_EQUAL(nvme_auth_hash_len(NVME_AUTH_HASH_SHA256), 32);
	CU_ASSERT_EQUAL(nvme_auth_hash_len(NVME_AUTH_HASH_SHA384), 48);
	CU_ASSERT_EQUAL(nvme_auth_hash_len(NVME_AUTH_HASH_SHA512), 64);
	CU_ASSERT_EQUAL(nvme_auth_hash_len(0), 0);
	CU_ASSERT_EQUAL(nvme_auth_hash_len(4), 0);
	CU_ASSERT_EQUAL(nvme_auth_hash_len(0xff), 0);
	CU_ASSERT_STRING_EQUAL(nvme_auth_hash_name(NVME_AUTH_HASH_SHA384), "sha384");
	CU_ASSERT_PTR_NULL(nvme_auth_hash_name(0));
	CU_ASSERT_EQUAL(nvme_auth_hmac(0, "k", 1, "d", 1, mac), -EINVAL);
	CU_ASSERT_EQUAL(nvme_auth_hmac(4, "k", 1, "d", 1, mac), -EINVAL);
	CU_ASSERT_EQUAL(nvme_auth_hash(9, "d", 1, mac), -EINVAL);

	/* FIPS 180-2 "abc" */
	CU_ASSERT_EQUAL(nvme_auth_hash(NVME_AUTH_HASH_SHA256, "abc", 3, mac), 0);
	CU_ASSERT(ut_hex_eq(mac, 32,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
}

/* ---- HKDF: RFC 5869 appendix A.1-A.3 (SHA-256) -------------------------------------- */

static void test_hkdf_rfc5869(void)
{
	uint8_t ikm[80], salt[80], info[80], okm[82];

	/* A.1 */
	memset(ikm, 0x0b, 22);
	ut_unhex("000102030405060708090a0b0c", salt, sizeof(salt));
	ut_unhex("f0f1f2f3f4f5f6f7f8f9", info, sizeof(info));
	CU_ASSERT_EQUAL(nvme_auth_hkdf(NVME_AUTH_HASH_SHA256, salt, 13, ikm, 22, info, 10, okm, 42),
			0);
	CU_ASSERT(ut_hex_eq(okm, 42,
			    "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
			    "34007208d5b887185865"));

	/* A.2: 80-byte inputs */
	for (int i = 0; i < 80; i++) {
		ikm[i] = (uint8_t)i;
		salt[i] = (uint8_t)(0x60 + i);
		info[i] = (uint8_t)(0xb0 + i);
	}
	CU_ASSERT_EQUAL(nvme_auth_hkdf(NVME_AUTH_HASH_SHA256, salt, 80, ikm, 80, info, 80, okm, 82),
			0);
	CU_ASSERT(ut_hex_eq(okm, 82,
			    "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
			    "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
			    "cc30c58179ec3e87c14c01d5c1f3434f1d87"));

	/* A.3: no salt, no info */
	memset(ikm, 0x0b, 22);
	CU_ASSERT_EQUAL(nvme_auth_hkdf(NVME_AUTH_HASH_SHA256, NULL, 0, ikm, 22, NULL, 0, okm, 42),
			0);
	CU_ASSERT(ut_hex_eq(okm, 42,
			    "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
			    "9d201395faa4b61a96c8"));

	CU_ASSERT_EQUAL(nvme_auth_hkdf(NVME_AUTH_HASH_SHA256, NULL, 0, ikm, 22, NULL, 0, okm,
				       255 * 32 + 1),
			-EINVAL);
	CU_ASSERT_EQUAL(nvme_auth_hkdf(0, NULL, 0, ikm, 22, NULL, 0, okm, 32), -EINVAL);
}

/* ---- Responses ---------------------------------------------------------------------- */

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
#define SUBNQN  "nqn.2024-01.io.nvmeof:subsys1"

/*
 * Kh' = HMAC-SHA-256(key of "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:",
 * HOSTNQN || "NVMe-over-Fabrics"), see dhchap_key_ut.c; Kc' = the untransformed key
 * 000102...1f of "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:".
 */
#define KH_PRIME "ecd5bfe256a24265613e7e005483c66675344207be9ebfebe6e564da1a7622f4"

static struct nvme_secret *secret_hex(const char *hex)
{
	uint8_t buf[1024];
	int n = ut_unhex(hex, buf, sizeof(buf));

	return n > 0 ? nvme_secret_from(buf, (size_t)n) : NULL;
}

static void test_responses(void)
{
	struct nvme_secret *kh = secret_hex(KH_PRIME), *kc;
	uint8_t c1[32], c2[32], r[64], r2[64];
	struct nvme_dhchap_resp_in in = {
		.hash_id = NVME_AUTH_HASH_SHA256,
		.key = kh,
		.challenge = c1,
		.seqnum = 0x12345678,
		.t_id = 0x0102,
		.sc_c = NVME_AUTH_SC_C_NONE,
		.hostnqn = HOSTNQN,
		.subsysnqn = SUBNQN,
	};

	kc = nvme_secret_alloc(32);
	CU_ASSERT_PTR_NOT_NULL_FATAL(kh);
	CU_ASSERT_PTR_NOT_NULL_FATAL(kc);
	for (int i = 0; i < 32; i++) {
		c1[i] = (uint8_t)i;
		c2[i] = (uint8_t)(0xff - i);
		kc->key[i] = (uint8_t)i;
	}
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r), 0);
	CU_ASSERT(ut_hex_eq(r, 32,
			    "42d63b32969a689dcf5e3db582dda8b9009dcb382512fdd30c3d1d81ba818442"));

	/* The controller checks R1 by computing the same value. */
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r2), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_response_check(r, r2, 32), 0);

	/* Every input is covered by the MAC. */
	in.seqnum++;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r2), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_response_check(r, r2, 32), -EACCES);
	in.seqnum--;
	in.t_id++;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r2), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(r, r2, 32), 0);
	in.t_id--;
	in.sc_c = NVME_AUTH_SC_C_NEWTLSPSK;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r2), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(r, r2, 32), 0);
	in.sc_c = NVME_AUTH_SC_C_NONE;
	in.subsysnqn = SUBNQN "x";
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r2), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(r, r2, 32), 0);
	in.subsysnqn = SUBNQN;

	/* R2: "Controller", NQNc before NQNh, S2 and C2. */
	in.key = kc;
	in.challenge = c2;
	in.seqnum = 0x9abcdef0;
	CU_ASSERT_EQUAL(nvme_dhchap_ctrl_response(&in, r), 0);
	CU_ASSERT(ut_hex_eq(r, 32,
			    "3c8375946bd1d4316f649e8a8cb5b5a54f89f4dd98c622b611c0b7654a3577ab"));
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r2), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(r, r2, 32), 0);

	in.hash_id = 0;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r), -EINVAL);
	in.hash_id = NVME_AUTH_HASH_SHA256;
	in.key = NULL;
	CU_ASSERT_EQUAL(nvme_dhchap_ctrl_response(&in, r), -EINVAL);
	nvme_secret_free(kh);
	nvme_secret_free(kc);
}

/* SHA-384 with a DH shared secret: the augmented challenge HMAC(H(g^xy mod p), C1). */
static void test_augmented_response(void)
{
	uint8_t dh[256], c1[48], aug[48], r[48];
	struct nvme_secret *kh, *skey;
	struct nvme_dhchap_resp_in in;

	for (int i = 0; i < 256; i++)
		dh[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 48; i++)
		c1[i] = (uint8_t)(0x10 + i);
	skey = nvme_secret_from(dh, sizeof(dh));
	/*
	 * HMAC-SHA-384(key of nvme-cli's "DHHC-1:02:Ycyi6NFMdr7npRY/2yykR3R/KhI9ULQBfGnlfomr
	 * +vFYtK33xBjqCJHQautzrwpD6optSw==:", HOSTNQN || "NVMe-over-Fabrics")
	 */
	kh = secret_hex("b6a27706b65e34f9fc224a105d72262f9a360a4bd3d0a428d2bb2b2be7cf49b6"
			"e6b27a4d5214b813d41fed2da7584498");
	CU_ASSERT_PTR_NOT_NULL_FATAL(skey);
	CU_ASSERT_PTR_NOT_NULL_FATAL(kh);
	CU_ASSERT_EQUAL(nvme_dhchap_augmented_challenge(NVME_AUTH_HASH_SHA384, skey, c1, aug), 0);
	CU_ASSERT(ut_hex_eq(aug, 48,
			    "357a829427e47cc109c589b5bfc858a0032fee233110935ebad164a50bd24a9c"
			    "4b0880b57964a9959ca43f95a7bcd3f6"));
	in = (struct nvme_dhchap_resp_in){
		.hash_id = NVME_AUTH_HASH_SHA384,
		.key = kh,
		.challenge = c1,
		.seqnum = 1,
		.t_id = 0xffff,
		.sc_c = NVME_AUTH_SC_C_NEWTLSPSK,
		.hostnqn = HOSTNQN,
		.subsysnqn = SUBNQN,
		.dh_secret = skey,
	};
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r), 0);
	CU_ASSERT(ut_hex_eq(r, 48,
			    "7d5f51aa57cb4d6b380262ab47be8cf69018aac60b01bfda9416026b55c12f37"
			    "35fe68c66d95983c5990f7393284a6b1"));
	CU_ASSERT_EQUAL(nvme_dhchap_augmented_challenge(NVME_AUTH_HASH_SHA384, NULL, c1, aug),
			-EINVAL);
	nvme_secret_free(kh);
	nvme_secret_free(skey);
}

/* ---- Generated PSK: Linux auth_kunit.c ---------------------------------------------- */

static void test_generated_psk(void)
{
	static const char *const want[] = {
		"1733c59fa7f48fcf37f5f26fc4ff0268ad4f78e030f4f3b0bfd1d47e7bb1447a",
		"f14b2dd3234c459694d3bc63f8968bd6b37c2c6de849e22e118749001ce4bbe8"
		"640b9e3a748cb11ce4b1d71d359cce39",
		"9c9f089a618b47d2d75f4b6c28070424487b445dd96e70c4c09b55e8b6000152"
		"a3363c3454043f38f0b85036ded40655350aa87b8b6a282b5c1acae16233dd5b",
	};
	uint8_t skey[64], c1[64], c2[64];

	for (int i = 0; i < 64; i++) {
		skey[i] = (uint8_t)('A' + i);
		c1[i] = (uint8_t)i;
		c2[i] = (uint8_t)(0xff - i);
	}
	for (uint8_t h = NVME_AUTH_HASH_SHA256; h <= NVME_AUTH_HASH_SHA512; h++) {
		size_t hl = nvme_auth_hash_len(h);
		struct nvme_secret *ks = nvme_secret_from(skey, hl), *psk = NULL;

		CU_ASSERT_EQUAL(nvme_dhchap_generated_psk(h, ks, c1, c2, &psk), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(psk);
		CU_ASSERT_EQUAL(psk->len, hl);
		CU_ASSERT(ut_hex_eq(psk->key, psk->len, want[h - 1]));
		nvme_secret_free(psk);
		nvme_secret_free(ks);
	}
}

/* ---- ffdhe ---------------------------------------------------------------------------- */

static void test_dh_agree(void)
{
	CU_ASSERT_STRING_EQUAL(nvme_auth_dhgroup_name(NVME_AUTH_DHGROUP_NULL), "null");
	CU_ASSERT_PTR_NULL(nvme_auth_dhgroup_name(6));
	CU_ASSERT_EQUAL(nvme_dh_value_len(NVME_AUTH_DHGROUP_NULL), 0);
	for (uint8_t g = NVME_AUTH_DHGROUP_FFDHE2048; g <= NVME_AUTH_DHGROUP_FFDHE8192; g++) {
		static const size_t lens[] = { 0, 256, 384, 512, 768, 1024 };
		uint8_t pa[1024], pb[1024];
		struct nvme_dh *a = NULL, *b = NULL;
		struct nvme_secret *sa = NULL, *sb = NULL;
		size_t len = nvme_dh_value_len(g);

		CU_ASSERT_EQUAL(len, lens[g]);
		CU_ASSERT_EQUAL(nvme_dh_generate(g, &a), 0);
		CU_ASSERT_EQUAL(nvme_dh_generate(g, &b), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		CU_ASSERT_PTR_NOT_NULL_FATAL(b);
		CU_ASSERT_EQUAL(nvme_dh_public(a, pa, len), 0);
		CU_ASSERT_EQUAL(nvme_dh_public(b, pb, len), 0);
		CU_ASSERT_EQUAL(nvme_dh_public(a, pa, len - 1), -EINVAL);
		CU_ASSERT_NOT_EQUAL(memcmp(pa, pb, len), 0);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(a, pb, len, &sa), 0);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(b, pa, len, &sb), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
		CU_ASSERT_PTR_NOT_NULL_FATAL(sb);
		CU_ASSERT_EQUAL(sa->len, len);
		CU_ASSERT(nvme_secret_equal(sa, sb));
		nvme_secret_free(sa);
		nvme_secret_free(sb);
		nvme_dh_free(a);
		nvme_dh_free(b);
	}
	CU_ASSERT_EQUAL(nvme_dh_generate(NVME_AUTH_DHGROUP_NULL, &(struct nvme_dh *){ NULL }),
			-EINVAL);
	CU_ASSERT_EQUAL(nvme_dh_generate(6, &(struct nvme_dh *){ NULL }), -EINVAL);
}

/*
 * Known answer in ffdhe2048, computed with Python's pow() on the RFC 7919 prime: private
 * exponents xa, xb; public values 2^xa, 2^xb mod p; a shared secret whose first byte is
 * zero, so it must come out padded to the size of p.
 */
static const char kat_xa[] = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20";
static const char kat_xb[] = "4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e60f7";
static const char kat_ya[] = "0eef0c0eae9c65a3332cdc742b58561d362c0af526f8ad528b19ff39c9143431"
			     "2f83302ed9dc6f2b84b250482dbd80962154f8a6d683741bf8bf4f3fdee22f80"
			     "541a77553d1ae7a096c521f869987ae5eca1090d93e7bdea0b4349f17fee34f4"
			     "775bfb380f426dec937b25825680c6e2b8c4c9eede64b91f5cdc02ba78e75908"
			     "d47cd27fda4b5188c22baf2acd1e861ed0864e9eb9346640d354eada9f7156a6"
			     "01387ba5f1b8609733707803a5ac866fc1bbe54b15a99934727bc5c157f893d8"
			     "67a89abf0ce3dd0cf3d7ce00073db8b3bbae1486faedc462f7edeb3dc44ba303"
			     "36de3d4dbfb4f14f143c46b0ba93f316f50c3377b9a38a27ae048f5605a4dcbf";
static const char kat_yb[] = "925059cc2dd0510b74e00f3e00de42247df60489c844e8b108fd2caddfb3faf8"
			     "3016026b577a793e5b66cecd281c1b5b0438821b8269eb1770235e0b1f1f249e"
			     "4f870c80885fd02780b7d713cf07917d28f8be365c8d739e63a48ad65c66fd7f"
			     "e56d2d713f65eab7218289279be88c1b3c8034593e2cc3f644e0ef1ec1e302e5"
			     "6b189be3400284351f2703e8afe75aca4c163ebf264aaf9ab8f5f5897e4d911d"
			     "ab834b8cc96e51e16c1fdb8dbe64b9738d1ab16643679847e886d884263364cf"
			     "b6e0af9c94679781448bfb2c3b77475302a9918d75872c7e969f1637aca60c4d"
			     "add4d7f1e08d091f4ad3b0be0bcb62d9972e5a5f95d77fffa09ccd02a7abb0db";
static const char kat_s[] = "00972f951f64e3779371b1d21d9d9cf34e8d9324426d19d25cbfe3563775561f"
			    "6eb530e6a70b8d45c7680b6f268ae1bde882f6f51b343af1e1490d26c4d9b02b"
			    "952f7ac79d5d3c9d61085b62d96557e9c19cc38fc692ccd1f4fdf578bb76ffda"
			    "ec3345d548b75112a9e9166692c45d5bfd44ca589da97234b7704f5f843b86e7"
			    "64194831c44d78ff172d2925c6f76ef17a44e04080ceeaafecbf0772032c6bee"
			    "a4b06b17b6a5615eef4308412dfd9d183f759306f6315ca3381dcbd5fed5f127"
			    "d533dce90c878a85fdf1f7af50d9f35f4866512eae6bcd10c3fbeedea502807b"
			    "6b9040a69b602107c87562387840a3bf47bece85ebc7a973c907173114929954";

static void test_dh_kat(void)
{
	uint8_t xa[32], xb[32], ya[256], yb[256], pub[256];
	struct nvme_dh *a = NULL, *b = NULL;
	struct nvme_secret *sa = NULL, *sb = NULL;

	ut_unhex(kat_xa, xa, sizeof(xa));
	ut_unhex(kat_xb, xb, sizeof(xb));
	ut_unhex(kat_ya, ya, sizeof(ya));
	ut_unhex(kat_yb, yb, sizeof(yb));
	CU_ASSERT_EQUAL_FATAL(nvme_dh_from_private(NVME_AUTH_DHGROUP_FFDHE2048, xa, 32, &a), 0);
	CU_ASSERT_EQUAL_FATAL(nvme_dh_from_private(NVME_AUTH_DHGROUP_FFDHE2048, xb, 32, &b), 0);
	CU_ASSERT_EQUAL(nvme_dh_public(a, pub, sizeof(pub)), 0);
	CU_ASSERT(ut_hex_eq(pub, sizeof(pub), kat_ya));
	CU_ASSERT_EQUAL(nvme_dh_public(b, pub, sizeof(pub)), 0);
	CU_ASSERT(ut_hex_eq(pub, sizeof(pub), kat_yb));
	CU_ASSERT_EQUAL(nvme_dh_shared_secret(a, yb, sizeof(yb), &sa), 0);
	CU_ASSERT_EQUAL(nvme_dh_shared_secret(b, ya, sizeof(ya), &sb), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sb);
	CU_ASSERT_EQUAL(sa->key[0], 0);
	CU_ASSERT(ut_hex_eq(sa->key, sa->len, kat_s));
	CU_ASSERT(ut_hex_eq(sb->key, sb->len, kat_s));
	nvme_secret_free(sa);
	nvme_secret_free(sb);
	nvme_dh_free(a);
	nvme_dh_free(b);
	CU_ASSERT_EQUAL(nvme_dh_from_private(NVME_AUTH_DHGROUP_NULL, xa, 32, &a), -EINVAL);
	memset(xa, 0, sizeof(xa));
	CU_ASSERT_EQUAL(nvme_dh_from_private(NVME_AUTH_DHGROUP_FFDHE2048, xa, 32, &a), -EINVAL);
	CU_ASSERT_PTR_NULL(a);
}

/* p of a named group, from OpenSSL's copy of RFC 7919. */
static int group_p(const char *name, uint8_t *out, size_t len)
{
	OSSL_PARAM params[2];
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	EVP_PKEY *pkey = NULL;
	BIGNUM *p = NULL;
	int rc = -1;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (ctx && EVP_PKEY_paramgen_init(ctx) == 1 && EVP_PKEY_CTX_set_params(ctx, params) == 1 &&
	    EVP_PKEY_generate(ctx, &pkey) == 1 &&
	    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_P, &p) == 1 &&
	    BN_bn2binpad(p, out, (int)len) == (int)len)
		rc = 0;
	BN_free(p);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

/* Subtracts the small @v from the big-endian number @n of @len bytes. */
static void be_sub(uint8_t *n, size_t len, unsigned int v)
{
	for (size_t i = len; i-- > 0 && v;) {
		unsigned int d = n[i];

		n[i] = (uint8_t)(d - (v & 0xff));
		v = (v >> 8) + (d < (v & 0xff));
	}
}

static void be_add(uint8_t *n, size_t len, unsigned int v)
{
	for (size_t i = len; i-- > 0 && v;) {
		unsigned int d = n[i] + (v & 0xff);

		n[i] = (uint8_t)d;
		v = (v >> 8) + (d >> 8);
	}
}

/* Random values: accepted exactly when y^q = 1 mod p (q = (p-1)/2), computed here the
 * long way with BN_mod_exp, independently of the library's check. */
static void test_dh_public_check_random(void)
{
	uint8_t g = NVME_AUTH_DHGROUP_FFDHE2048;
	size_t len = nvme_dh_value_len(g);
	uint8_t p[1024], v[1024];
	struct nvme_dh *dh = NULL;
	BIGNUM *bp, *bq, *by, *br;
	BN_CTX *bc = BN_CTX_new();
	int accepted = 0;

	CU_ASSERT_EQUAL_FATAL(group_p(nvme_auth_dhgroup_name(g), p, len), 0);
	CU_ASSERT_EQUAL_FATAL(nvme_dh_generate(g, &dh), 0);
	bp = BN_bin2bn(p, (int)len, NULL);
	bq = BN_dup(bp);
	by = BN_new();
	br = BN_new();
	CU_ASSERT_FATAL(bc && bp && bq && by && br);
	BN_sub_word(bq, 1);
	BN_rshift1(bq, bq);
	for (int i = 0; i < 24; i++) {
		struct nvme_secret *s = NULL;
		int want;

		CU_ASSERT_FATAL(RAND_bytes(v, (int)len) == 1);
		v[0] &= 0x7f; /* below p, whose top bits are all ones */
		BN_bin2bn(v, (int)len, by);
		BN_mod_exp(br, by, bq, bp, bc);
		want = BN_is_one(br) ? 0 : -EINVAL;
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), want);
		accepted += want == 0;
		nvme_secret_free(s);
	}
	CU_ASSERT(accepted > 0 && accepted < 24); /* about half are residues */
	BN_free(br);
	BN_free(by);
	BN_free(bq);
	BN_free(bp);
	BN_CTX_free(bc);
	nvme_dh_free(dh);
}

static void test_dh_bad_public(void)
{
	for (uint8_t g = NVME_AUTH_DHGROUP_FFDHE2048; g <= NVME_AUTH_DHGROUP_FFDHE8192; g++) {
		size_t len = nvme_dh_value_len(g);
		uint8_t p[1024], v[1025];
		struct nvme_dh *dh = NULL;
		struct nvme_secret *s = NULL;

		CU_ASSERT_EQUAL_FATAL(group_p(nvme_auth_dhgroup_name(g), p, len), 0);
		CU_ASSERT_EQUAL_FATAL(nvme_dh_generate(g, &dh), 0);

		memset(v, 0, len); /* 0 */
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		v[len - 1] = 1; /* 1 */
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		memcpy(v, p, len); /* p */
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		be_sub(v, len, 1); /* p - 1, of order 2 */
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		be_sub(v, len, 1); /* p - 2 = -2: a non-residue, outside the order-q subgroup */
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		memset(v, 0xff, len); /* > p */
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		memcpy(v, p, len); /* p + 1 and p + 2: 1 and 2 once reduced, refused as sent */
		be_add(v, len, 1);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		be_add(v, len, 1);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		memset(v, 0, len); /* 2, the generator: a residue (p = 7 mod 8), accepted */
		v[len - 1] = 2;
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), 0);
		nvme_secret_free(s);
		s = NULL;
		memcpy(v, p, len); /* p - 4 = -4: -1 is a non-residue, 4 a residue */
		be_sub(v, len, 4);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), -EINVAL);
		/* wrong lengths */
		CU_ASSERT_EQUAL(nvme_dh_public(dh, v, len), 0);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len - 1, &s), -EMSGSIZE);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len + 1, &s), -EMSGSIZE);
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, 0, &s), -EMSGSIZE);
		CU_ASSERT_PTR_NULL(s);
		/* 4 = 2^2 is in the subgroup: accepted */
		memset(v, 0, len);
		v[len - 1] = 4;
		CU_ASSERT_EQUAL(nvme_dh_shared_secret(dh, v, len, &s), 0);
		CU_ASSERT_PTR_NOT_NULL(s);
		nvme_secret_free(s);
		nvme_dh_free(dh);
	}
}

/* Both sides of a transaction with ffdhe2048: R1 and R2 agree through the DH exchange. */
static void test_dh_transaction(void)
{
	struct nvme_secret *kh = secret_hex(KH_PRIME), *s_host = NULL, *s_ctrl = NULL;
	uint8_t ph[256], pc[256], c1[32], r_host[32], r_ctrl[32];
	struct nvme_dh *host = NULL, *ctrl = NULL;
	struct nvme_dhchap_resp_in in = {
		.hash_id = NVME_AUTH_HASH_SHA256,
		.key = kh,
		.challenge = c1,
		.seqnum = 42,
		.t_id = 1,
		.hostnqn = HOSTNQN,
		.subsysnqn = SUBNQN,
	};

	memset(c1, 0x5a, sizeof(c1));
	CU_ASSERT_EQUAL_FATAL(nvme_dh_generate(NVME_AUTH_DHGROUP_FFDHE2048, &host), 0);
	CU_ASSERT_EQUAL_FATAL(nvme_dh_generate(NVME_AUTH_DHGROUP_FFDHE2048, &ctrl), 0);
	CU_ASSERT_EQUAL(nvme_dh_public(host, ph, sizeof(ph)), 0);
	CU_ASSERT_EQUAL(nvme_dh_public(ctrl, pc, sizeof(pc)), 0);
	CU_ASSERT_EQUAL(nvme_dh_shared_secret(host, pc, sizeof(pc), &s_host), 0);
	CU_ASSERT_EQUAL(nvme_dh_shared_secret(ctrl, ph, sizeof(ph), &s_ctrl), 0);
	in.dh_secret = s_host;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r_host), 0);
	in.dh_secret = s_ctrl;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r_ctrl), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_response_check(r_host, r_ctrl, 32), 0);
	/* Without the DH secret the response differs. */
	in.dh_secret = NULL;
	CU_ASSERT_EQUAL(nvme_dhchap_host_response(&in, r_ctrl), 0);
	CU_ASSERT_EQUAL(nvme_dhchap_response_check(r_host, r_ctrl, 32), -EACCES);
	nvme_secret_free(s_host);
	nvme_secret_free(s_ctrl);
	nvme_dh_free(host);
	nvme_dh_free(ctrl);
	nvme_secret_free(kh);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "HMAC: RFC 4231", test_hmac_rfc4231 },
		{ "HMAC over iovecs, hash ids", test_hmac_iov_and_ids },
		{ "HKDF: RFC 5869", test_hkdf_rfc5869 },
		{ "responses R1/R2", test_responses },
		{ "augmented challenge and response", test_augmented_response },
		{ "generated PSK (Linux KUnit vectors)", test_generated_psk },
		{ "ffdhe: agreement in every group", test_dh_agree },
		{ "ffdhe: known answer, padded secret", test_dh_kat },
		{ "ffdhe: bad public values", test_dh_bad_public },
		{ "ffdhe: the subgroup check on random values", test_dh_public_check_random },
		{ "ffdhe: host and controller responses agree", test_dh_transaction },
		CU_TEST_INFO_NULL,
	};

	return ut_run("dhchap_crypto", NULL, NULL, tests);
}
