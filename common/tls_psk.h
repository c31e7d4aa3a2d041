/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP TLS pre-shared keys (NVMe/TCP Transport Specification 1.1 section 3.6, TP 8011
 * and TP 8018), as nvme-cli/libnvme and Linux produce and use them:
 *
 * PSK interchange format of a configured PSK:
 *     NVMeTLSkey-1:HH:<base64(psk || le32 crc32(psk))>:
 * HH = 00: no transform (the configured PSK is the retained PSK), 32 or 48 bytes;
 * HH = 01: SHA-256, 32 bytes; HH = 02: SHA-384, 48 bytes.
 *
 * Retained PSK (from a configured PSK, HH 01/02):
 *     PRK = HKDF-Extract(0, configured); retained = HKDF-Expand-Label(PRK, "HostNQN",
 *     NQNh, len(configured))
 *
 * PSK identity, <hh> being the hash of the cipher suite (01 SHA-256, 02 SHA-384), 'R' for a
 * retained and 'G' for a generated (secure concatenation) PSK:
 *     version 0:  "NVMe0R<hh> <NQNh> <NQNc>"
 *     version 1:  "NVMe1R<hh> <NQNh> <NQNc> <PSK digest>"
 * PSK digest = base64(HMAC_hh(input PSK, NQNh || " " || NQNc || " " || "NVMe-over-Fabrics"))
 * (44 characters for SHA-256, 64 for SHA-384).
 *
 * TLS PSK (what TLS 1.3 uses as the external PSK for that identity):
 *     PRK = HKDF-Extract(0, input PSK);
 *     TLS PSK = HKDF-Expand-Label(PRK, "nvme-tls-psk", context, hash length)
 * context = the whole identity for version 0 (TP 8011), "<hh> <PSK digest>" for version 1.
 *
 * NVME_TLS_COMPAT reproduces the HkdfLabel encoding of libnvme before 1.11 (nvme-cli
 * gen-tls-key/check-tls-key --compat): little-endian length and label/context without their
 * length bytes. Keys such hosts put into the kernel keyring were derived that way.
 *
 * Errors are -errno as for the DH-HMAC-CHAP keys (dhchap_key.h): -EINVAL format, -EILSEQ
 * base64, -EMSGSIZE length, -EBADMSG CRC. Messages in @err never contain key material.
 */
#ifndef NVMEOF_TLS_PSK_H
#define NVMEOF_TLS_PSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_spec.h"
#include "common/secret.h"

#define NVME_TLS_KEY_PREFIX   "NVMeTLSkey-1:"
#define NVME_TLS_KEY_TEXT_MAX (16 + NVME_KEY_B64_LEN(48) + 2)

/* "NVMe1R02 " + two NQNs and a space + " " + 64-character digest + NUL */
#define NVME_TLS_IDENTITY_MAX (9 + 2 * NVME_NQN_MAX + 1 + 1 + 64 + 1)
/* base64 of a SHA-384 digest + NUL */
#define NVME_TLS_DIGEST_MAX (64 + 1)

#define NVME_TLS_COMPAT (1u << 0) /* libnvme < 1.11 HkdfLabel encoding */

/* A configured PSK in interchange format. */
struct nvme_tls_key {
	uint8_t hmac;            /* HH: 0, NVME_AUTH_HASH_SHA256 or NVME_AUTH_HASH_SHA384 */
	struct nvme_secret *psk; /* 32 or 48 bytes */
};

int nvme_tls_key_parse(const char *text, struct nvme_tls_key *out, char *err, size_t errlen);
int nvme_tls_key_format(const struct nvme_tls_key *key, char *buf, size_t len);
void nvme_tls_key_clear(struct nvme_tls_key *key);

/* The cipher suite hash of a configured key: HH, or by length (32: 01, 48: 02) for 00. */
uint8_t nvme_tls_key_cipher(const struct nvme_tls_key *key);

/* Retained PSK for @hostnqn (a copy for HH 00). @flags: NVME_TLS_COMPAT. */
int nvme_tls_retained_psk(const struct nvme_tls_key *key, const char *hostnqn, unsigned int flags,
			  struct nvme_secret **out);

/* PSK digest (base64, NUL-terminated) into @out; returns its length or -errno. */
int nvme_tls_psk_digest(uint8_t hash_id, const struct nvme_secret *psk, const char *hostnqn,
			const char *subsysnqn, char *out, size_t outlen);

/*
 * PSK identity of @version 0 or 1 into @out; @digest is required for version 1 and ignored
 * for version 0. Returns its length or -errno (-ENOSPC when @outlen is short).
 */
int nvme_tls_psk_identity(int version, bool generated, uint8_t hash_id, const char *hostnqn,
			  const char *subsysnqn, const char *digest, char *out, size_t outlen);

/* A PSK identity taken apart; the strings point into @buf. */
struct nvme_tls_identity {
	int version;     /* 0 or 1 */
	bool generated;  /* 'G' rather than 'R' */
	uint8_t hash_id; /* 01 or 02 */
	const char *hostnqn;
	const char *subsysnqn;
	const char *digest; /* version 1 only, else NULL */
	char buf[NVME_TLS_IDENTITY_MAX];
};

/* Returns 0, or -EINVAL with a message for anything that is not an identity above. */
int nvme_tls_identity_parse(const char *identity, struct nvme_tls_identity *out, char *err,
			    size_t errlen);

/*
 * TLS PSK for @identity (version 0 or 1, hash taken from it) from the input PSK (retained
 * or generated). @flags: NVME_TLS_COMPAT.
 */
int nvme_tls_psk_derive(const struct nvme_secret *input_psk, const char *identity,
			unsigned int flags, struct nvme_secret **out);

/*
 * The whole chain for a configured key, as libnvme does when it inserts a key into the
 * keyring: retained PSK, digest (version 1), identity into @identity, and the TLS PSK.
 */
int nvme_tls_derive(const struct nvme_tls_key *key, int version, const char *hostnqn,
		    const char *subsysnqn, unsigned int flags, char *identity, size_t idlen,
		    struct nvme_secret **tls_psk);

#endif
