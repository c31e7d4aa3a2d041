/* SPDX-License-Identifier: MIT */
/*
 * Cryptography of NVMe in-band authentication (DH-HMAC-CHAP, NVM Express Base 2.0 section
 * 8.13.5), shared by the host and the controller side:
 *
 *   - the hash functions by HashID: digest, HMAC, and HKDF / HKDF-Expand-Label (RFC 5869,
 *     RFC 8446 section 7.1), which the TLS PSK derivations in tls_psk.h build on;
 *   - the responses R1 (host) and R2 (controller), with the augmented challenge when a DH
 *     group is in use;
 *   - ephemeral Diffie-Hellman in the RFC 7919 ffdhe groups;
 *   - the generated PSK of secure channel concatenation.
 *
 * Built on OpenSSL 3: EVP_Digest, EVP_MAC "HMAC", EVP_KDF "HKDF", and for DH
 * EVP_PKEY_CTX_new_from_name("DH") + OSSL_PKEY_PARAM_GROUP_NAME / EVP_PKEY_generate for
 * keys, EVP_PKEY_fromdata for the peer's value, checked once here (range and
 * Legendre symbol) and EVP_PKEY_derive (with padding, OpenSSL's own check of the peer
 * left out) for the shared secret.
 *
 * All functions return 0 or -errno: -EINVAL for an unknown id or a bad argument, -ENOMEM,
 * -EIO when OpenSSL fails for another reason. Nothing here logs.
 */
#ifndef NVMEOF_DHCHAP_CRYPTO_H
#define NVMEOF_DHCHAP_CRYPTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/nvme_auth_spec.h"
#include "common/secret.h"

/* ---- Hash functions by HashID (enum nvme_auth_hash_id) ------------------------------ */

/* Digest length of @hash_id (32, 48, 64), 0 when unknown. */
size_t nvme_auth_hash_len(uint8_t hash_id);

/* "sha256", "sha384", "sha512"; NULL when unknown. */
const char *nvme_auth_hash_name(uint8_t hash_id);

/* @out (nvme_auth_hash_len() bytes) = H(@data). */
int nvme_auth_hash(uint8_t hash_id, const void *data, size_t len, uint8_t *out);

/* @out (nvme_auth_hash_len() bytes) = HMAC(@key, @data) ... */
int nvme_auth_hmac(uint8_t hash_id, const void *key, size_t klen, const void *data, size_t len,
		   uint8_t *out);
/* ... and over the concatenation of @iovcnt buffers. */
int nvme_auth_hmac_iov(uint8_t hash_id, const void *key, size_t klen, const struct iovec *iov,
		       int iovcnt, uint8_t *out);

/* RFC 5869 HKDF-Extract then HKDF-Expand; an empty @salt means HashLen zero bytes. */
int nvme_auth_hkdf(uint8_t hash_id, const void *salt, size_t saltlen, const void *ikm,
		   size_t ikmlen, const void *info, size_t infolen, uint8_t *out, size_t outlen);

/*
 * HKDF-Expand-Label(HKDF-Extract(0, @ikm), @label, @context, @outlen) as RFC 8446 section
 * 7.1 defines it: the HkdfLabel info is be16(outlen) || u8(6 + len(label)) || "tls13 " ||
 * label || u8(ctxlen) || context. @label at most 249 characters, @ctxlen at most 255.
 */
int nvme_auth_hkdf_expand_label(uint8_t hash_id, const void *ikm, size_t ikmlen, const char *label,
				const void *context, size_t ctxlen, uint8_t *out, size_t outlen);

/* ---- DH-HMAC-CHAP responses --------------------------------------------------------- */

/* Inputs of one response computation. */
struct nvme_dhchap_resp_in {
	uint8_t hash_id;               /* from the Challenge */
	const struct nvme_secret *key; /* transformed: nvme_dhchap_key_transform() */
	const uint8_t *challenge;      /* C1 (host response) or C2 (controller response) */
	uint32_t seqnum;               /* S1 or S2 */
	uint16_t t_id;                 /* transaction identifier */
	uint8_t sc_c;                  /* SC_C of the AUTH_Negotiate */
	const char *hostnqn;
	const char *subsysnqn;
	const struct nvme_secret *dh_secret; /* g^xy mod p; NULL for the NULL DH group */
};

/*
 * R1 = HMAC(Kh', C1' || le32(S1) || le16(T_ID) || SC_C || "HostHost" || NQNh || 00h || NQNc)
 * where C1' is C1, or HMAC(H(g^xy mod p), C1) when @dh_secret is set. @out receives
 * nvme_auth_hash_len(hash_id) bytes.
 */
int nvme_dhchap_host_response(const struct nvme_dhchap_resp_in *in, uint8_t *out);

/*
 * R2 = HMAC(Kc', C2' || le32(S2) || le16(T_ID) || SC_C || "Controller" || NQNc || 00h ||
 * NQNh), C2' as above.
 */
int nvme_dhchap_ctrl_response(const struct nvme_dhchap_resp_in *in, uint8_t *out);

/* @out = HMAC(H(@dh_secret), @challenge): the augmented challenge, hash length bytes. */
int nvme_dhchap_augmented_challenge(uint8_t hash_id, const struct nvme_secret *dh_secret,
				    const uint8_t *challenge, uint8_t *out);

/* Constant-time comparison of two responses of @len bytes: 0 when equal, else -EACCES. */
int nvme_dhchap_response_check(const uint8_t *expected, const uint8_t *received, size_t len);

/*
 * Generated PSK of secure channel concatenation (Base 2.1 8.3.5.5.9):
 * PSK = HMAC(KS, C1 || C2), KS being the DH shared secret as the Linux host and target use
 * it. @out receives a secret of hash length bytes.
 */
int nvme_dhchap_generated_psk(uint8_t hash_id, const struct nvme_secret *ks, const uint8_t *c1,
			      const uint8_t *c2, struct nvme_secret **out);

/* ---- Ephemeral Diffie-Hellman, RFC 7919 groups (enum nvme_auth_dhgroup_id) ---------- */

struct nvme_dh; /* one party's key pair */

/* "null", "ffdhe2048" ... "ffdhe8192"; NULL when unknown. */
const char *nvme_auth_dhgroup_name(uint8_t dhgid);

/* Bytes of a DH value (the size of p) for @dhgid: 256 ... 1024; 0 for NULL or unknown. */
size_t nvme_dh_value_len(uint8_t dhgid);

/* A fresh key pair in @dhgid (not NVME_AUTH_DHGROUP_NULL). */
int nvme_dh_generate(uint8_t dhgid, struct nvme_dh **out);

/*
 * A key pair from a known private exponent (big-endian, at most the size of p), for
 * known-answer tests and test fakes; the public value is computed as 2^x mod p.
 */
int nvme_dh_from_private(uint8_t dhgid, const uint8_t *priv, size_t len, struct nvme_dh **out);

void nvme_dh_free(struct nvme_dh *dh);

/* Writes our public value g^x mod p, big-endian, zero-padded to exactly nvme_dh_value_len(). */
int nvme_dh_public(const struct nvme_dh *dh, uint8_t *out, size_t len);

/*
 * The shared secret (g^y)^x mod p from the peer's value, big-endian and zero-padded to the
 * size of p, as a secret. Errors: -EMSGSIZE when @peerlen is not the size of p, -EINVAL
 * when the value is not a valid public value of the group (0, 1, p-1, >= p, outside the
 * prime-order subgroup).
 */
int nvme_dh_shared_secret(const struct nvme_dh *dh, const uint8_t *peer, size_t peerlen,
			  struct nvme_secret **out);

#endif
