/* SPDX-License-Identifier: MIT */
#include "dhchap_crypto.h"

#include <errno.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/opensslv.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <stdlib.h>
#include <string.h>

#include "endian.h"

#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "NVMe in-band authentication needs OpenSSL 3.0 (EVP_MAC, EVP_KDF, OSSL_PARAM)"
#endif

struct hash_desc {
	const char *name; /* OpenSSL digest name */
	size_t len;
};

static const struct hash_desc hash_table[] = {
	[NVME_AUTH_HASH_SHA256] = { "SHA256", 32 },
	[NVME_AUTH_HASH_SHA384] = { "SHA384", 48 },
	[NVME_AUTH_HASH_SHA512] = { "SHA512", 64 },
};

static const struct hash_desc *hash_lookup(uint8_t hash_id)
{
	if (hash_id >= sizeof(hash_table) / sizeof(hash_table[0]) || !hash_table[hash_id].name)
		return NULL;
	return &hash_table[hash_id];
}

size_t nvme_auth_hash_len(uint8_t hash_id)
{
	const struct hash_desc *h = hash_lookup(hash_id);

	return h ? h->len : 0;
}

const char *nvme_auth_hash_name(uint8_t hash_id)
{
	static const char *const names[] = {
		[NVME_AUTH_HASH_SHA256] = "sha256",
		[NVME_AUTH_HASH_SHA384] = "sha384",
		[NVME_AUTH_HASH_SHA512] = "sha512",
	};

	return hash_lookup(hash_id) ? names[hash_id] : NULL;
}

int nvme_auth_hash(uint8_t hash_id, const void *data, size_t len, uint8_t *out)
{
	const struct hash_desc *h = hash_lookup(hash_id);
	EVP_MD *md;
	int ok;

	if (!h)
		return -EINVAL;
	md = EVP_MD_fetch(NULL, h->name, NULL);
	if (!md)
		return -EIO;
	ok = EVP_Digest(data, len, out, NULL, md, NULL);
	EVP_MD_free(md);
	return ok ? 0 : -EIO;
}

int nvme_auth_hmac_iov(uint8_t hash_id, const void *key, size_t klen, const struct iovec *iov,
		       int iovcnt, uint8_t *out)
{
	const struct hash_desc *h = hash_lookup(hash_id);
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx = NULL;
	EVP_MAC *mac;
	size_t outl = 0;
	int rc = -EIO;

	if (!h || !key || klen == 0 || iovcnt < 0)
		return -EINVAL;
	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (!mac)
		return -EIO;
	ctx = EVP_MAC_CTX_new(mac);
	if (!ctx) {
		rc = -ENOMEM;
		goto out;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)h->name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_init(ctx, key, klen, params))
		goto out;
	for (int i = 0; i < iovcnt; i++)
		if (iov[i].iov_len && !EVP_MAC_update(ctx, iov[i].iov_base, iov[i].iov_len))
			goto out;
	if (!EVP_MAC_final(ctx, out, &outl, h->len) || outl != h->len)
		goto out;
	rc = 0;
out:
	EVP_MAC_CTX_free(ctx); /* clears the keyed state */
	EVP_MAC_free(mac);
	return rc;
}

int nvme_auth_hmac(uint8_t hash_id, const void *key, size_t klen, const void *data, size_t len,
		   uint8_t *out)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };

	return nvme_auth_hmac_iov(hash_id, key, klen, &iov, 1, out);
}

int nvme_auth_hkdf(uint8_t hash_id, const void *salt, size_t saltlen, const void *ikm,
		   size_t ikmlen, const void *info, size_t infolen, uint8_t *out, size_t outlen)
{
	const struct hash_desc *h = hash_lookup(hash_id);
	OSSL_PARAM params[5], *p = params;
	EVP_KDF_CTX *ctx;
	EVP_KDF *kdf;
	int rc = -EIO;

	if (!h || !ikm || ikmlen == 0 || outlen == 0 || outlen > 255 * h->len)
		return -EINVAL;
	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (!kdf)
		return -EIO;
	ctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (!ctx)
		return -ENOMEM;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)h->name, 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikmlen);
	/* No salt parameter: HKDF-Extract then uses HashLen zero bytes (RFC 5869 2.2). */
	if (saltlen)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt,
							 saltlen);
	if (infolen)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info,
							 infolen);
	*p = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(ctx, out, outlen, params) == 1)
		rc = 0;
	EVP_KDF_CTX_free(ctx);
	return rc;
}

int nvme_auth_hkdf_expand_label(uint8_t hash_id, const void *ikm, size_t ikmlen, const char *label,
				const void *context, size_t ctxlen, uint8_t *out, size_t outlen)
{
	static const char prefix[] = "tls13 ";
	uint8_t info[2 + 1 + 255 + 1 + 255];
	size_t llen = strlen(label), plen = sizeof(prefix) - 1, n = 0;
	int rc;

	if (llen + plen > 255 || ctxlen > 255 || outlen > 0xffff)
		return -EINVAL;
	put_be16(info, (uint16_t)outlen);
	n = 2;
	info[n++] = (uint8_t)(plen + llen);
	memcpy(info + n, prefix, plen);
	n += plen;
	memcpy(info + n, label, llen);
	n += llen;
	info[n++] = (uint8_t)ctxlen;
	if (ctxlen)
		memcpy(info + n, context, ctxlen);
	n += ctxlen;
	rc = nvme_auth_hkdf(hash_id, NULL, 0, ikm, ikmlen, info, n, out, outlen);
	OPENSSL_cleanse(info, sizeof(info));
	return rc;
}

/* ---- Responses ---------------------------------------------------------------------- */

int nvme_dhchap_augmented_challenge(uint8_t hash_id, const struct nvme_secret *dh_secret,
				    const uint8_t *challenge, uint8_t *out)
{
	uint8_t hashed[NVME_AUTH_HASH_MAX_LEN];
	size_t hl = nvme_auth_hash_len(hash_id);
	int rc;

	if (!hl || !dh_secret || !challenge)
		return -EINVAL;
	rc = nvme_auth_hash(hash_id, dh_secret->key, dh_secret->len, hashed);
	if (rc == 0)
		rc = nvme_auth_hmac(hash_id, hashed, hl, challenge, hl, out);
	OPENSSL_cleanse(hashed, sizeof(hashed));
	return rc;
}

/*
 * HMAC(key, C' || le32(seq) || le16(t_id) || sc_c || @role || @nqn1 || 00h || @nqn2),
 * the common shape of R1 and R2.
 */
static int dhchap_response(const struct nvme_dhchap_resp_in *in, const char *role, const char *nqn1,
			   const char *nqn2, uint8_t *out)
{
	uint8_t aug[NVME_AUTH_HASH_MAX_LEN], seq[4], tid[2], scc = in->sc_c, zero = 0;
	size_t hl = nvme_auth_hash_len(in->hash_id);
	const uint8_t *chal = in->challenge;
	struct iovec iov[8];
	int rc;

	if (!hl || !in->key || !in->challenge || !nqn1 || !nqn2)
		return -EINVAL;
	if (in->dh_secret) {
		rc = nvme_dhchap_augmented_challenge(in->hash_id, in->dh_secret, chal, aug);
		if (rc)
			return rc;
		chal = aug;
	}
	put_le32(seq, in->seqnum);
	put_le16(tid, in->t_id);
	iov[0] = (struct iovec){ (void *)chal, hl };
	iov[1] = (struct iovec){ seq, sizeof(seq) };
	iov[2] = (struct iovec){ tid, sizeof(tid) };
	iov[3] = (struct iovec){ &scc, 1 };
	iov[4] = (struct iovec){ (void *)role, strlen(role) };
	iov[5] = (struct iovec){ (void *)nqn1, strlen(nqn1) };
	iov[6] = (struct iovec){ &zero, 1 };
	iov[7] = (struct iovec){ (void *)nqn2, strlen(nqn2) };
	rc = nvme_auth_hmac_iov(in->hash_id, in->key->key, in->key->len, iov, 8, out);
	OPENSSL_cleanse(aug, sizeof(aug));
	return rc;
}

int nvme_dhchap_host_response(const struct nvme_dhchap_resp_in *in, uint8_t *out)
{
	return dhchap_response(in, "HostHost", in->hostnqn, in->subsysnqn, out);
}

int nvme_dhchap_ctrl_response(const struct nvme_dhchap_resp_in *in, uint8_t *out)
{
	return dhchap_response(in, "Controller", in->subsysnqn, in->hostnqn, out);
}

int nvme_dhchap_response_check(const uint8_t *expected, const uint8_t *received, size_t len)
{
	return CRYPTO_memcmp(expected, received, len) == 0 ? 0 : -EACCES;
}

int nvme_dhchap_generated_psk(uint8_t hash_id, const struct nvme_secret *ks, const uint8_t *c1,
			      const uint8_t *c2, struct nvme_secret **out)
{
	size_t hl = nvme_auth_hash_len(hash_id);
	struct nvme_secret *psk;
	struct iovec iov[2];
	int rc;

	*out = NULL;
	if (!hl || !ks || !c1 || !c2)
		return -EINVAL;
	psk = nvme_secret_alloc(hl);
	if (!psk)
		return -ENOMEM;
	iov[0] = (struct iovec){ (void *)c1, hl };
	iov[1] = (struct iovec){ (void *)c2, hl };
	rc = nvme_auth_hmac_iov(hash_id, ks->key, ks->len, iov, 2, psk->key);
	if (rc) {
		nvme_secret_free(psk);
		return rc;
	}
	*out = psk;
	return 0;
}

/* ---- Diffie-Hellman ----------------------------------------------------------------- */

struct nvme_dh {
	uint8_t dhgid;
	EVP_PKEY *pkey;
};

struct dh_group_desc {
	const char *name;
	size_t len; /* bytes of p */
};

static const struct dh_group_desc dh_table[] = {
	[NVME_AUTH_DHGROUP_NULL] = { "null", 0 },
	[NVME_AUTH_DHGROUP_FFDHE2048] = { "ffdhe2048", 256 },
	[NVME_AUTH_DHGROUP_FFDHE3072] = { "ffdhe3072", 384 },
	[NVME_AUTH_DHGROUP_FFDHE4096] = { "ffdhe4096", 512 },
	[NVME_AUTH_DHGROUP_FFDHE6144] = { "ffdhe6144", 768 },
	[NVME_AUTH_DHGROUP_FFDHE8192] = { "ffdhe8192", 1024 },
};

const char *nvme_auth_dhgroup_name(uint8_t dhgid)
{
	return dhgid < sizeof(dh_table) / sizeof(dh_table[0]) ? dh_table[dhgid].name : NULL;
}

size_t nvme_dh_value_len(uint8_t dhgid)
{
	return dhgid < sizeof(dh_table) / sizeof(dh_table[0]) ? dh_table[dhgid].len : 0;
}

int nvme_dh_generate(uint8_t dhgid, struct nvme_dh **out)
{
	OSSL_PARAM params[2];
	EVP_PKEY_CTX *ctx;
	struct nvme_dh *dh;
	int rc = -EIO;

	*out = NULL;
	if (!nvme_dh_value_len(dhgid))
		return -EINVAL;
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		return -ENOMEM;
	dh->dhgid = dhgid;
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!ctx) {
		free(dh);
		return -ENOMEM;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     (char *)dh_table[dhgid].name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_CTX_set_params(ctx, params) == 1 &&
	    EVP_PKEY_generate(ctx, &dh->pkey) == 1)
		rc = 0;
	EVP_PKEY_CTX_free(ctx);
	if (rc) {
		nvme_dh_free(dh);
		return rc;
	}
	*out = dh;
	return 0;
}

/* p of a named group, from OpenSSL's copy of RFC 7919. */
static int dh_group_p(uint8_t dhgid, BIGNUM **p)
{
	OSSL_PARAM params[2];
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	EVP_PKEY *pkey = NULL;
	int rc = -EIO;

	if (!ctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     (char *)dh_table[dhgid].name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_PKEY_paramgen_init(ctx) == 1 && EVP_PKEY_CTX_set_params(ctx, params) == 1 &&
	    EVP_PKEY_generate(ctx, &pkey) == 1 &&
	    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_P, p) == 1)
		rc = 0;
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

int nvme_dh_from_private(uint8_t dhgid, const uint8_t *priv, size_t len, struct nvme_dh **out)
{
	BIGNUM *p = NULL, *x = NULL, *y = NULL, *g = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BN_CTX *bnctx = NULL;
	struct nvme_dh *dh;
	int rc;

	*out = NULL;
	if (!nvme_dh_value_len(dhgid) || !priv || len == 0 || len > nvme_dh_value_len(dhgid))
		return -EINVAL;
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		return -ENOMEM;
	dh->dhgid = dhgid;
	rc = dh_group_p(dhgid, &p);
	if (rc)
		goto out;
	rc = -ENOMEM;
	x = BN_secure_new();
	y = BN_new();
	g = BN_new();
	bnctx = BN_CTX_secure_new();
	bld = OSSL_PARAM_BLD_new();
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!x || !y || !g || !bnctx || !bld || !ctx || !BN_bin2bn(priv, (int)len, x) ||
	    !BN_set_word(g, 2))
		goto out;
	rc = -EINVAL;
	if (BN_is_zero(x) || BN_cmp(x, p) >= 0 || !BN_mod_exp(y, g, x, p, bnctx))
		goto out;
	rc = -EIO;
	if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, dh_table[dhgid].name,
					     0) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, x) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, y))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	if (!params || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &dh->pkey, EVP_PKEY_KEYPAIR, params) != 1)
		goto out;
	rc = 0;
out:
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX_free(ctx);
	BN_CTX_free(bnctx);
	BN_clear_free(x);
	BN_free(y);
	BN_free(g);
	BN_free(p);
	if (rc) {
		nvme_dh_free(dh);
		return rc;
	}
	*out = dh;
	return 0;
}

void nvme_dh_free(struct nvme_dh *dh)
{
	if (!dh)
		return;
	EVP_PKEY_free(dh->pkey); /* OpenSSL clears the private exponent */
	free(dh);
}

int nvme_dh_public(const struct nvme_dh *dh, uint8_t *out, size_t len)
{
	BIGNUM *pub = NULL;
	int rc = -EIO;

	if (!dh || len != nvme_dh_value_len(dh->dhgid))
		return -EINVAL;
	if (EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_PUB_KEY, &pub) != 1)
		return -EIO;
	if (BN_bn2binpad(pub, out, (int)len) == (int)len)
		rc = 0;
	BN_free(pub);
	return rc;
}

/* The peer's public value as a key of our group. */
static int dh_peer_key(const struct nvme_dh *dh, const uint8_t *peer, size_t len, EVP_PKEY **out)
{
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BIGNUM *pub;
	int rc = -EIO;

	pub = BN_bin2bn(peer, (int)len, NULL);
	if (!pub)
		return -ENOMEM;
	bld = OSSL_PARAM_BLD_new();
	if (!bld ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
					     dh_table[dh->dhgid].name, 0) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, pub))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!params || !ctx)
		goto out;
	if (EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, out, EVP_PKEY_PUBLIC_KEY, params) != 1) {
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
out:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(pub);
	return rc;
}

/*
 * The one check of the peer's public value: 1 < y < p-1 and y^q = 1 mod p, q = (p-1)/2.
 * The RFC 7919 groups are safe primes, where the range check alone keeps the peer from
 * forcing the secret into the subgroup of order 1 or 2 (RFC 7919 section 5.1), and y^q = 1
 * holds exactly when y is a quadratic residue (Euler's criterion): the Legendre symbol
 * (BN_kronecker) decides that without a modular exponentiation. These are the values
 * EVP_PKEY_public_check() accepts, so the derivation below tells OpenSSL not to check them
 * again (EVP_PKEY_derive_set_peer_ex(..., 0)): its full check exponentiates by q, some
 * 130 ms for ffdhe8192, many times the derivation itself, per Reply.
 */
static int dh_peer_check(uint8_t dhgid, const uint8_t *peer, size_t len)
{
	BIGNUM *p = NULL, *y = NULL, *pm1 = NULL;
	BN_CTX *bc = BN_CTX_new();
	int rc;

	if (!bc)
		return -ENOMEM;
	rc = dh_group_p(dhgid, &p);
	if (rc)
		goto out;
	rc = -ENOMEM;
	y = BN_bin2bn(peer, (int)len, NULL);
	pm1 = BN_dup(p);
	if (!y || !pm1 || !BN_sub_word(pm1, 1))
		goto out;
	rc = -EINVAL;
	if (BN_cmp(y, BN_value_one()) <= 0 || BN_cmp(y, pm1) >= 0)
		goto out;
	switch (BN_kronecker(y, p, bc)) {
	case 1:
		rc = 0;
		break;
	case -2:
		rc = -EIO;
		break;
	default:
		rc = -EINVAL;
	}
out:
	BN_free(pm1);
	BN_free(y);
	BN_free(p);
	BN_CTX_free(bc);
	return rc;
}

int nvme_dh_shared_secret(const struct nvme_dh *dh, const uint8_t *peer, size_t peerlen,
			  struct nvme_secret **out)
{
	EVP_PKEY_CTX *ctx = NULL;
	struct nvme_secret *s = NULL;
	EVP_PKEY *peer_key = NULL;
	size_t plen, slen;
	int rc;

	*out = NULL;
	if (!dh || !peer)
		return -EINVAL;
	plen = nvme_dh_value_len(dh->dhgid);
	if (peerlen != plen)
		return -EMSGSIZE;
	rc = dh_peer_check(dh->dhgid, peer, peerlen);
	if (rc)
		return rc;
	rc = dh_peer_key(dh, peer, peerlen, &peer_key);
	if (rc)
		return rc;
	s = nvme_secret_alloc(plen);
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, dh->pkey, NULL);
	if (!s || !ctx) {
		rc = -ENOMEM;
		goto out;
	}
	rc = -EIO;
	slen = plen;
	if (EVP_PKEY_derive_init(ctx) != 1 || EVP_PKEY_CTX_set_dh_pad(ctx, 1) != 1)
		goto out;
	if (EVP_PKEY_derive_set_peer_ex(ctx, peer_key, 0) != 1) {
		rc = -EINVAL;
		goto out;
	}
	if (EVP_PKEY_derive(ctx, s->key, &slen) != 1 || slen != plen)
		goto out;
	*out = s;
	s = NULL;
	rc = 0;
out:
	nvme_secret_free(s);
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(peer_key);
	return rc;
}
