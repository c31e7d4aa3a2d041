/* SPDX-License-Identifier: MIT */
/*
 * Secret key material and the text framing both NVMe key interchange formats share.
 *
 * struct nvme_secret holds a key (DH-HMAC-CHAP secret, TLS PSK, session key): it is wiped
 * with OPENSSL_cleanse() when freed and has no formatting function, so it is never
 * printed or logged. Callers keep it behind a pointer and free it with nvme_secret_free().
 *
 * "DHHC-1:NN:<b64>:" and "NVMeTLSkey-1:HH:<b64>:" both carry <b64> = base64(key ||
 * CRC-32(key)), the CRC being the IEEE/zlib CRC-32 stored little-endian, and a key of 32,
 * 48 or 64 bytes.
 */
#ifndef NVMEOF_SECRET_H
#define NVMEOF_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVME_SECRET_MAX 64 /* bytes: SHA-512 sized keys */

struct nvme_secret {
	size_t len;
	uint8_t key[]; /* @len bytes */
};

/* A zeroed secret of @len bytes (1..NVME_SECRET_MAX * 16), or NULL (errno ENOMEM/EINVAL). */
struct nvme_secret *nvme_secret_alloc(size_t len);

/* A secret holding a copy of @len bytes at @key, or NULL. */
struct nvme_secret *nvme_secret_from(const void *key, size_t len);

/* Wipes and frees; NULL is allowed. */
void nvme_secret_free(struct nvme_secret *s);

/* Same length and bytes, compared in constant time. */
bool nvme_secret_equal(const struct nvme_secret *a, const struct nvme_secret *b);

/* The IEEE 802.3 / zlib CRC-32 of @len bytes (check value of "123456789": 0xcbf43926). */
uint32_t nvme_key_crc32(const void *buf, size_t len);

/* Characters of base64(key || crc) for a key of @len bytes. */
#define NVME_KEY_B64_LEN(len) ((((size_t)(len) + 4 + 2) / 3) * 4)

/*
 * Writes base64(@key || le32 crc32(@key)) NUL-terminated into @out. Returns the number of
 * characters, -EINVAL for a key length other than 32, 48 or 64, -ENOSPC if @outlen is short.
 */
int nvme_key_encode_b64crc(const uint8_t *key, size_t len, char *out, size_t outlen);

/* The text form both key formats share, "PREFIXNN:base64(key || crc):" (DHHC-1:NN:...,
 * NVMeTLSkey-1:NN:...). Returns its length, or -ENOSPC. */
int nvme_key_format_text(const char *prefix, unsigned int nn, const struct nvme_secret *s,
			 char *buf, size_t len);

/* Format a message into @err (NULL or @errlen 0: dropped); returns @rc. */
int nvme_key_error(int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Parses the text form "PREFIXNN:base64(key || crc):" of @what ("DH-HMAC-CHAP secret",
 * "TLS PSK"): NN (two digits, at most @max_nn, @nn_name in messages) into *@nn and the key
 * into *@out (free with nvme_secret_free()). 0, or a negative errno with a message naming
 * @what (never the key) in @err: -EINVAL malformed text, and nvme_key_decode_b64crc()'s.
 */
int nvme_key_parse_text(const char *prefix, const char *what, const char *nn_name,
			unsigned int max_nn, const char *text, uint8_t *nn,
			struct nvme_secret **out, char *err, size_t errlen);

/*
 * Decodes @n characters of base64(key || crc). On success stores the key in *@out (free
 * with nvme_secret_free()) and its CRC in *@crc (when not NULL) and returns 0. Errors:
 *   -EILSEQ   not canonical base64 (bad character, truncated, misplaced padding)
 *   -EMSGSIZE the key is not 32, 48 or 64 bytes long
 *   -EBADMSG  the CRC does not match the key
 *   -ENOMEM
 */
int nvme_key_decode_b64crc(const char *b64, size_t n, struct nvme_secret **out, uint32_t *crc);

/* True for the key lengths the interchange formats allow: 32, 48, 64. */
static inline bool nvme_key_len_valid(size_t len)
{
	return len == 32 || len == 48 || len == 64;
}

#endif
