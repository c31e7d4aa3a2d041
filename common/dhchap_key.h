/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP secrets in their text representation (NVM Express Base 2.0 section 8.13.5.8,
 * the format of nvme-cli's gen-dhchap-key and of Linux's dhchap_secret options):
 *
 *     DHHC-1:NN:<base64(key || le32 crc32(key))>:
 *
 * NN = 00: the key is used as it is (32, 48 or 64 bytes); NN = 01/02/03: the key is 32/48/64
 * bytes and is transformed with SHA-256/384/512 before use:
 *
 *     Kh' = HMAC(key, NQN || "NVMe-over-Fabrics")
 *
 * with the host NQN for the host's key and the subsystem NQN for the controller's key
 * (nvme_dhchap_key_transform(), what Linux's nvme_auth_transform_key() does on both sides).
 * Note that nvme-cli's gen-dhchap-key with --hmac already prints the transformed value of
 * its random secret; that printed key is then transformed once more when it is used.
 *
 * The key lives in a struct nvme_secret: wiped when cleared, never printed. Messages put
 * in @err never contain key material.
 */
#ifndef NVMEOF_DHCHAP_KEY_H
#define NVMEOF_DHCHAP_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "common/secret.h"

#define NVME_DHCHAP_KEY_PREFIX "DHHC-1:"
/* "DHHC-1:NN:" + base64 of a 64-byte key and its CRC + ":" + NUL */
#define NVME_DHCHAP_KEY_TEXT_MAX (10 + NVME_KEY_B64_LEN(64) + 2)

struct nvme_dhchap_key {
	uint8_t hash;               /* NN: 0, or the nvme_auth_hash_id used to transform */
	struct nvme_secret *secret; /* 32, 48 or 64 bytes */
};

/*
 * Parses @text into @out (release with nvme_dhchap_key_clear()). Returns 0 or:
 *   -EINVAL   not "DHHC-1:NN:...:" (prefix, NN other than 00-03, missing closing ':',
 *             anything after it)
 *   -EILSEQ   the base64 is malformed or truncated
 *   -EMSGSIZE the key is not 32/48/64 bytes, or not the length NN 01/02/03 demands
 *   -EBADMSG  the CRC does not match
 *   -ENOMEM
 * with a one-line message in @err (when not NULL).
 */
int nvme_dhchap_key_parse(const char *text, struct nvme_dhchap_key *out, char *err, size_t errlen);

/* Writes the text form NUL-terminated; returns its length, -EINVAL or -ENOSPC. */
int nvme_dhchap_key_format(const struct nvme_dhchap_key *key, char *buf, size_t len);

/* Wipes and frees the secret; the key may be parsed into again. */
void nvme_dhchap_key_clear(struct nvme_dhchap_key *key);

/*
 * The key used in the HMAC of a response: a copy of the secret for NN = 00, else
 * HMAC_NN(secret, @nqn || "NVMe-over-Fabrics") (hash length bytes).
 */
int nvme_dhchap_key_transform(const struct nvme_dhchap_key *key, const char *nqn,
			      struct nvme_secret **out);

/*
 * What `nvme gen-dhchap-key --secret=S --key-length=L --hmac=H --nqn=NQN` prints: for H = 0
 * the secret as it is, else its transformation with @nqn, labelled NN = H. @len must be
 * 32, 48 or 64 and equal the hash length for H = 1/2/3. @secret NULL means random bytes.
 */
int nvme_dhchap_key_generate(const uint8_t *secret, size_t len, uint8_t hash, const char *nqn,
			     struct nvme_dhchap_key *out);

#endif
