// SPDX-License-Identifier: MIT
/*
 * CHAP (RFC 1994, RFC 7143 section 12.1.3) for iSCSI login: the digests of the IANA PPP
 * authentication algorithm registry that initiators offer in CHAP_A (MD5 = 5, SHA-1 = 6,
 * SHA-256 = 7, SHA3-256 = 8) through OpenSSL EVP, the choice of the strongest one both
 * sides allow, the check of the initiator's CHAP_R and the answer to its own challenge
 * (mutual CHAP) with the reflection check. Pure functions: no connection state, nothing
 * logged.
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "iscsi_internal.h"

static const struct {
	uint8_t alg;
	const char *name; /* as open-iscsi's node.session.auth.chap_algs spells it */
	const char *alt;  /* also accepted */
	unsigned int len;
} g_algs[] = {
	/* strongest first: the order iscsi_chap_choose() prefers */
	{ ISCSI_CHAP_SHA3_256, "SHA3-256", "SHA3_256", 32 },
	{ ISCSI_CHAP_SHA256, "SHA256", "SHA-256", 32 },
	{ ISCSI_CHAP_SHA1, "SHA1", "SHA-1", 20 },
	{ ISCSI_CHAP_MD5, "MD5", "MD-5", 16 },
};
#define NALGS (sizeof(g_algs) / sizeof(g_algs[0]))

unsigned int iscsi_chap_digest_len(uint8_t alg)
{
	for (size_t i = 0; i < NALGS; i++)
		if (g_algs[i].alg == alg)
			return g_algs[i].len;
	return 0;
}

const char *iscsi_chap_alg_name(uint8_t alg)
{
	for (size_t i = 0; i < NALGS; i++)
		if (g_algs[i].alg == alg)
			return g_algs[i].name;
	return "?";
}

int iscsi_chap_alg_parse(const char *name)
{
	for (size_t i = 0; i < NALGS; i++)
		if (!strcasecmp(name, g_algs[i].name) || !strcasecmp(name, g_algs[i].alt))
			return g_algs[i].alg;
	return -EINVAL;
}

static const EVP_MD *chap_md(uint8_t alg)
{
	switch (alg) {
	case ISCSI_CHAP_MD5:
		return EVP_md5();
	case ISCSI_CHAP_SHA1:
		return EVP_sha1();
	case ISCSI_CHAP_SHA256:
		return EVP_sha256();
	case ISCSI_CHAP_SHA3_256:
		return EVP_sha3_256();
	default:
		return NULL;
	}
}

int iscsi_chap_response(uint8_t alg, uint8_t id, const char *secret, const uint8_t *challenge,
			size_t clen, uint8_t *out)
{
	const EVP_MD *md = chap_md(alg);
	EVP_MD_CTX *ctx;
	unsigned int len = 0;
	int ok;

	if (!md)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, md, NULL) && EVP_DigestUpdate(ctx, &id, 1) &&
	     EVP_DigestUpdate(ctx, secret, strlen(secret)) &&
	     EVP_DigestUpdate(ctx, challenge, clen) && EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
	return ok && len == iscsi_chap_digest_len(alg) ? 0 : -EINVAL;
}

int iscsi_chap_random(uint8_t *buf, size_t len)
{
	return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}

uint8_t iscsi_chap_choose(const char *chap_a, uint32_t allowed, uint32_t *offered)
{
	uint32_t seen = 0;

	/* CHAP_A=<A1,A2,...>: collect every value we know, whatever the order */
	for (const char *p = chap_a; p && *p;) {
		char *end;
		unsigned long a = strtoul(p, &end, 10);

		if (end != p && (*end == ',' || !*end) && a < 32 &&
		    iscsi_chap_digest_len((uint8_t)a))
			seen |= 1u << a;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	if (offered)
		*offered = seen;
	for (size_t i = 0; i < NALGS; i++)
		if (seen & allowed & (1u << g_algs[i].alg))
			return g_algs[i].alg;
	return 0;
}

int iscsi_chap_check(uint8_t alg, uint8_t id, const char *secret, const uint8_t *challenge,
		     size_t clen, const char *chap_r)
{
	uint8_t want[ISCSI_CHAP_DIGEST_MAX], got[ISCSI_CHAP_DIGEST_MAX];
	unsigned int dl = iscsi_chap_digest_len(alg);
	int n, rc;

	if (!dl || !chap_r)
		return -EINVAL;
	n = iscsi_text_decode_binary(chap_r, got, sizeof(got));
	if (n != (int)dl)
		return -EACCES;
	rc = iscsi_chap_response(alg, id, secret, challenge, clen, want);
	if (!rc && CRYPTO_memcmp(want, got, dl))
		rc = -EACCES;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

int iscsi_chap_answer(uint8_t alg, const char *chap_i, const char *chap_c, const char *secret,
		      const uint8_t *ours, size_t ours_len, char *hex, size_t hexlen)
{
	uint8_t chal[ISCSI_CHAP_CHALLENGE_MAX], rsp[ISCSI_CHAP_DIGEST_MAX];
	unsigned int dl = iscsi_chap_digest_len(alg);
	uint32_t id;
	int cl, rc;

	if (!dl || hexlen < 2 * dl + 3)
		return -EINVAL;
	if (!chap_i || !chap_c || iscsi_text_parse_u32(chap_i, &id) || id > 255)
		return -EPROTO;
	cl = iscsi_text_decode_binary(chap_c, chal, sizeof(chal));
	if (cl < ISCSI_CHAP_CHALLENGE_MIN)
		return -EPROTO;
	/* our own challenge reflected back: whoever sent it wants us to answer it for them */
	if ((size_t)cl == ours_len && !CRYPTO_memcmp(chal, ours, ours_len))
		return -EACCES;
	rc = iscsi_chap_response(alg, (uint8_t)id, secret, chal, (size_t)cl, rsp);
	if (!rc)
		iscsi_text_encode_hex(rsp, dl, hex);
	OPENSSL_cleanse(rsp, sizeof(rsp));
	return rc;
}
