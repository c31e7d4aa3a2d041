/* SPDX-License-Identifier: MIT */
#include "tls_psk.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#include "base64.h"
#include "dhchap_crypto.h"
#include "endian.h"

static const char digest_seed[] = "NVMe-over-Fabrics";

static bool cipher_hash_ok(uint8_t hash_id)
{
	return hash_id == NVME_AUTH_HASH_SHA256 || hash_id == NVME_AUTH_HASH_SHA384;
}

/* ---- Interchange format ------------------------------------------------------------- */

int nvme_tls_key_parse(const char *text, struct nvme_tls_key *out, char *err, size_t errlen)
{
	struct nvme_secret *s;
	uint8_t hmac;
	int rc;

	out->hmac = 0;
	out->psk = NULL;
	rc = nvme_key_parse_text(NVME_TLS_KEY_PREFIX, "TLS PSK", "hash", NVME_AUTH_HASH_SHA384,
				 text, &hmac, &s, err, errlen);
	if (rc)
		return rc;
	if ((hmac == 0 && s->len != 32 && s->len != 48) ||
	    (hmac != 0 && s->len != nvme_auth_hash_len(hmac))) {
		rc = nvme_key_error(-EMSGSIZE, err, errlen,
				    "TLS PSK: %zu-byte key does not fit hash %02u", s->len, hmac);
		nvme_secret_free(s);
		return rc;
	}
	out->hmac = hmac;
	out->psk = s;
	return 0;
}

int nvme_tls_key_format(const struct nvme_tls_key *key, char *buf, size_t len)
{
	if (!key->psk || key->hmac > NVME_AUTH_HASH_SHA384 ||
	    (key->hmac && key->psk->len != nvme_auth_hash_len(key->hmac)) ||
	    (key->psk->len != 32 && key->psk->len != 48))
		return -EINVAL;
	return nvme_key_format_text(NVME_TLS_KEY_PREFIX, key->hmac, key->psk, buf, len);
}

void nvme_tls_key_clear(struct nvme_tls_key *key)
{
	nvme_secret_free(key->psk);
	key->psk = NULL;
	key->hmac = 0;
}

uint8_t nvme_tls_key_cipher(const struct nvme_tls_key *key)
{
	if (key->hmac)
		return key->hmac;
	if (!key->psk)
		return 0;
	return key->psk->len == 48 ? NVME_AUTH_HASH_SHA384 : NVME_AUTH_HASH_SHA256;
}

/* ---- Derivations -------------------------------------------------------------------- */

/* HKDF-Expand-Label, or the libnvme < 1.11 encoding of its info with NVME_TLS_COMPAT. */
static int expand_label(uint8_t hash_id, const struct nvme_secret *ikm, const char *label,
			const char *context, unsigned int flags, struct nvme_secret *out)
{
	uint8_t info[2 + 6 + 32 + 512];
	size_t llen = strlen(label), clen = strlen(context);
	int rc;

	if (!(flags & NVME_TLS_COMPAT))
		return nvme_auth_hkdf_expand_label(hash_id, ikm->key, ikm->len, label, context,
						   clen, out->key, out->len);
	if (llen > 32 || clen > 512)
		return -EINVAL;
	put_le16(info, (uint16_t)out->len);
	memcpy(info + 2, "tls13 ", 6);
	memcpy(info + 8, label, llen);
	memcpy(info + 8 + llen, context, clen);
	rc = nvme_auth_hkdf(hash_id, NULL, 0, ikm->key, ikm->len, info, 8 + llen + clen, out->key,
			    out->len);
	OPENSSL_cleanse(info, sizeof(info));
	return rc;
}

int nvme_tls_retained_psk(const struct nvme_tls_key *key, const char *hostnqn, unsigned int flags,
			  struct nvme_secret **out)
{
	struct nvme_secret *r;
	int rc;

	*out = NULL;
	if (!key->psk || !hostnqn || strlen(hostnqn) > NVME_NQN_MAX)
		return -EINVAL;
	if (key->hmac == 0) {
		*out = nvme_secret_from(key->psk->key, key->psk->len);
		return *out ? 0 : -ENOMEM;
	}
	if (!cipher_hash_ok(key->hmac))
		return -EINVAL;
	r = nvme_secret_alloc(key->psk->len);
	if (!r)
		return -ENOMEM;
	rc = expand_label(key->hmac, key->psk, "HostNQN", hostnqn, flags, r);
	if (rc) {
		nvme_secret_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int nvme_tls_psk_digest(uint8_t hash_id, const struct nvme_secret *psk, const char *hostnqn,
			const char *subsysnqn, char *out, size_t outlen)
{
	uint8_t mac[NVME_AUTH_HASH_MAX_LEN];
	struct iovec iov[5] = {
		{ (void *)hostnqn, hostnqn ? strlen(hostnqn) : 0 },       { (void *)" ", 1 },
		{ (void *)subsysnqn, subsysnqn ? strlen(subsysnqn) : 0 }, { (void *)" ", 1 },
		{ (void *)digest_seed, sizeof(digest_seed) - 1 },
	};
	int rc;

	if (!cipher_hash_ok(hash_id) || !psk || !hostnqn || !subsysnqn)
		return -EINVAL;
	rc = nvme_auth_hmac_iov(hash_id, psk->key, psk->len, iov, 5, mac);
	if (rc == 0)
		rc = base64_encode(mac, nvme_auth_hash_len(hash_id), out, outlen);
	OPENSSL_cleanse(mac, sizeof(mac));
	return rc;
}

int nvme_tls_psk_identity(int version, bool generated, uint8_t hash_id, const char *hostnqn,
			  const char *subsysnqn, const char *digest, char *out, size_t outlen)
{
	char type = generated ? 'G' : 'R';
	int n;

	if (!cipher_hash_ok(hash_id) || !hostnqn || !subsysnqn || !*hostnqn || !*subsysnqn)
		return -EINVAL;
	if (version == 0)
		n = snprintf(out, outlen, "NVMe0%c%02u %s %s", type, hash_id, hostnqn, subsysnqn);
	else if (version == 1 && digest && *digest)
		n = snprintf(out, outlen, "NVMe1%c%02u %s %s %s", type, hash_id, hostnqn, subsysnqn,
			     digest);
	else
		return -EINVAL;
	if (n < 0 || (size_t)n >= outlen)
		return -ENOSPC;
	return n;
}

int nvme_tls_identity_parse(const char *identity, struct nvme_tls_identity *out, char *err,
			    size_t errlen)
{
	char *p, *sp1, *sp2, *sp3;
	size_t len;

	memset(out, 0, offsetof(struct nvme_tls_identity, buf));
	len = identity ? strlen(identity) : 0;
	if (len >= sizeof(out->buf))
		return nvme_key_error(-EINVAL, err, errlen,
				      "PSK identity: too long (%zu characters)", len);
	if (len < 9 || strncmp(identity, "NVMe", 4) != 0 || identity[8] != ' ')
		return nvme_key_error(-EINVAL, err, errlen,
				      "PSK identity: expected \"NVMe<v><R|G><hh> \"");
	if (identity[4] != '0' && identity[4] != '1')
		return nvme_key_error(-EINVAL, err, errlen, "PSK identity: unknown version '%c'",
				      identity[4]);
	if (identity[5] != 'R' && identity[5] != 'G')
		return nvme_key_error(-EINVAL, err, errlen, "PSK identity: unknown PSK type '%c'",
				      identity[5]);
	if (identity[6] != '0' || (identity[7] != '1' && identity[7] != '2'))
		return nvme_key_error(-EINVAL, err, errlen, "PSK identity: unknown hash \"%.2s\"",
				      identity + 6);
	memcpy(out->buf, identity, len + 1);
	out->version = identity[4] - '0';
	out->generated = identity[5] == 'G';
	out->hash_id = (uint8_t)(identity[7] - '0');
	p = out->buf + 9;
	sp1 = strchr(p, ' ');
	if (!sp1 || sp1 == p)
		return nvme_key_error(-EINVAL, err, errlen, "PSK identity: missing subsystem NQN");
	*sp1 = '\0';
	sp2 = strchr(sp1 + 1, ' ');
	if (out->version == 0 && sp2)
		return nvme_key_error(-EINVAL, err, errlen,
				      "PSK identity: version 0 has no field after the NQNs");
	if (out->version == 1 && !sp2)
		return nvme_key_error(-EINVAL, err, errlen,
				      "PSK identity: version 1 without digest");
	if (sp2) {
		*sp2 = '\0';
		sp3 = strchr(sp2 + 1, ' ');
		if (sp3 || !sp2[1])
			return nvme_key_error(-EINVAL, err, errlen,
					      "PSK identity: malformed digest");
		if (strlen(sp2 + 1) != (out->hash_id == NVME_AUTH_HASH_SHA256 ? 44u : 64u))
			return nvme_key_error(-EINVAL, err, errlen,
					      "PSK identity: digest length does not fit hash %02u",
					      out->hash_id);
		out->digest = sp2 + 1;
	}
	if (!sp1[1])
		return nvme_key_error(-EINVAL, err, errlen, "PSK identity: missing subsystem NQN");
	if (strlen(p) > NVME_NQN_MAX || strlen(sp1 + 1) > NVME_NQN_MAX)
		return nvme_key_error(-EINVAL, err, errlen, "PSK identity: NQN too long");
	out->hostnqn = p;
	out->subsysnqn = sp1 + 1;
	return 0;
}

int nvme_tls_psk_derive(const struct nvme_secret *input_psk, const char *identity,
			unsigned int flags, struct nvme_secret **out)
{
	char context[4 + NVME_TLS_DIGEST_MAX];
	struct nvme_tls_identity id;
	struct nvme_secret *t;
	int rc;

	*out = NULL;
	if (!input_psk)
		return -EINVAL;
	rc = nvme_tls_identity_parse(identity, &id, NULL, 0);
	if (rc)
		return rc;
	t = nvme_secret_alloc(nvme_auth_hash_len(id.hash_id));
	if (!t)
		return -ENOMEM;
	if (id.version == 0) {
		rc = expand_label(id.hash_id, input_psk, "nvme-tls-psk", identity, flags, t);
	} else {
		snprintf(context, sizeof(context), "%02u %s", id.hash_id, id.digest);
		rc = expand_label(id.hash_id, input_psk, "nvme-tls-psk", context, flags, t);
	}
	if (rc) {
		nvme_secret_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int nvme_tls_derive(const struct nvme_tls_key *key, int version, const char *hostnqn,
		    const char *subsysnqn, unsigned int flags, char *identity, size_t idlen,
		    struct nvme_secret **tls_psk)
{
	char digest[NVME_TLS_DIGEST_MAX] = "";
	struct nvme_secret *retained;
	uint8_t cipher = nvme_tls_key_cipher(key);
	int rc;

	*tls_psk = NULL;
	if (version != 0 && version != 1)
		return -EINVAL;
	rc = nvme_tls_retained_psk(key, hostnqn, flags, &retained);
	if (rc)
		return rc;
	if (version == 1) {
		rc = nvme_tls_psk_digest(cipher, retained, hostnqn, subsysnqn, digest,
					 sizeof(digest));
		if (rc < 0)
			goto out;
	}
	rc = nvme_tls_psk_identity(version, false, cipher, hostnqn, subsysnqn, digest, identity,
				   idlen);
	if (rc < 0)
		goto out;
	rc = nvme_tls_psk_derive(retained, identity, flags, tls_psk);
out:
	nvme_secret_free(retained);
	return rc < 0 ? rc : 0;
}
