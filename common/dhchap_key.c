/* SPDX-License-Identifier: MIT */
#include "dhchap_key.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "dhchap_crypto.h"

static const char transform_seed[] = "NVMe-over-Fabrics";

/* Key length NN requires: 0 = any allowed length. */
static size_t hash_key_len(uint8_t hash)
{
	return hash ? nvme_auth_hash_len(hash) : 0;
}

int nvme_dhchap_key_parse(const char *text, struct nvme_dhchap_key *out, char *err, size_t errlen)
{
	struct nvme_secret *s;
	size_t want;
	uint8_t hash;
	int rc;

	out->hash = 0;
	out->secret = NULL;
	rc = nvme_key_parse_text(NVME_DHCHAP_KEY_PREFIX, "DH-HMAC-CHAP secret", "transformation",
				 NVME_AUTH_HASH_SHA512, text, &hash, &s, err, errlen);
	if (rc)
		return rc;
	want = hash_key_len(hash);
	if (want && s->len != want) {
		rc = nvme_key_error(-EMSGSIZE, err, errlen,
				    "DH-HMAC-CHAP secret: %zu-byte key, transformation %02u needs "
				    "%zu",
				    s->len, hash, want);
		nvme_secret_free(s);
		return rc;
	}
	out->hash = hash;
	out->secret = s;
	return 0;
}

int nvme_dhchap_key_format(const struct nvme_dhchap_key *key, char *buf, size_t len)
{
	if (!key->secret || key->hash > NVME_AUTH_HASH_SHA512)
		return -EINVAL;
	if (hash_key_len(key->hash) && key->secret->len != hash_key_len(key->hash))
		return -EINVAL;
	return nvme_key_format_text(NVME_DHCHAP_KEY_PREFIX, key->hash, key->secret, buf, len);
}

void nvme_dhchap_key_clear(struct nvme_dhchap_key *key)
{
	nvme_secret_free(key->secret);
	key->secret = NULL;
	key->hash = 0;
}

/* @out (hash length bytes) = HMAC_hash(@key, @nqn || "NVMe-over-Fabrics"). */
static int transform(uint8_t hash, const uint8_t *key, size_t klen, const char *nqn, uint8_t *out)
{
	struct iovec iov[2] = {
		{ (void *)nqn, strlen(nqn) },
		{ (void *)transform_seed, sizeof(transform_seed) - 1 },
	};

	return nvme_auth_hmac_iov(hash, key, klen, iov, 2, out);
}

int nvme_dhchap_key_transform(const struct nvme_dhchap_key *key, const char *nqn,
			      struct nvme_secret **out)
{
	struct nvme_secret *t;
	int rc;

	*out = NULL;
	if (!key->secret || !nqn)
		return -EINVAL;
	if (key->hash == 0) {
		*out = nvme_secret_from(key->secret->key, key->secret->len);
		return *out ? 0 : -ENOMEM;
	}
	if (!nvme_auth_hash_len(key->hash))
		return -EINVAL;
	t = nvme_secret_alloc(nvme_auth_hash_len(key->hash));
	if (!t)
		return -ENOMEM;
	rc = transform(key->hash, key->secret->key, key->secret->len, nqn, t->key);
	if (rc) {
		nvme_secret_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int nvme_dhchap_key_generate(const uint8_t *secret, size_t len, uint8_t hash, const char *nqn,
			     struct nvme_dhchap_key *out)
{
	uint8_t raw[NVME_SECRET_MAX];
	struct nvme_secret *s;
	int rc = 0;

	out->hash = 0;
	out->secret = NULL;
	if (!nvme_key_len_valid(len) || hash > NVME_AUTH_HASH_SHA512 ||
	    (hash && (len != nvme_auth_hash_len(hash) || !nqn)))
		return -EINVAL;
	if (secret)
		memcpy(raw, secret, len);
	else if (RAND_priv_bytes(raw, (int)len) != 1)
		return -EIO;
	s = nvme_secret_alloc(len);
	if (!s) {
		rc = -ENOMEM;
		goto out;
	}
	if (hash)
		rc = transform(hash, raw, len, nqn, s->key);
	else
		memcpy(s->key, raw, len);
	if (rc) {
		nvme_secret_free(s);
		goto out;
	}
	out->hash = hash;
	out->secret = s;
out:
	OPENSSL_cleanse(raw, sizeof(raw));
	return rc;
}
