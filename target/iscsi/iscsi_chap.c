// SPDX-License-Identifier: MIT
/* CHAP (RFC 1994) for iSCSI login: MD5 (CHAP_A=5) and SHA-256 (CHAP_A=7) via OpenSSL EVP. */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "iscsi_internal.h"

unsigned int iscsi_chap_digest_len(uint8_t alg)
{
	switch (alg) {
	case ISCSI_CHAP_MD5:
		return 16;
	case ISCSI_CHAP_SHA256:
		return 32;
	default:
		return 0;
	}
}

int iscsi_chap_response(uint8_t alg, uint8_t id, const char *secret, const uint8_t *challenge,
			size_t clen, uint8_t *out)
{
	const EVP_MD *md = alg == ISCSI_CHAP_MD5 ? EVP_md5() :
			   alg == ISCSI_CHAP_SHA256 ? EVP_sha256() : NULL;
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
