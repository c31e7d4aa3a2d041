/* SPDX-License-Identifier: MIT */
#include "secret.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <isa-l/crc.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "endian.h"

#define SECRET_ALLOC_MAX (NVME_SECRET_MAX * 16) /* room for DH shared secrets (1024 bytes) */

struct nvme_secret *nvme_secret_alloc(size_t len)
{
	struct nvme_secret *s;

	if (len == 0 || len > SECRET_ALLOC_MAX) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s) + len);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->len = len;
	return s;
}

struct nvme_secret *nvme_secret_from(const void *key, size_t len)
{
	struct nvme_secret *s = nvme_secret_alloc(len);

	if (s)
		memcpy(s->key, key, len);
	return s;
}

void nvme_secret_free(struct nvme_secret *s)
{
	if (!s)
		return;
	OPENSSL_cleanse(s, sizeof(*s) + s->len);
	free(s);
}

bool nvme_secret_equal(const struct nvme_secret *a, const struct nvme_secret *b)
{
	if (!a || !b || a->len != b->len)
		return false;
	return CRYPTO_memcmp(a->key, b->key, a->len) == 0;
}

uint32_t nvme_key_crc32(const void *buf, size_t len)
{
	/* ISA-L's reflected IEEE CRC takes the zlib-style seed 0 and does the inversions. */
	return crc32_gzip_refl(0, (const unsigned char *)buf, len);
}

int nvme_key_encode_b64crc(const uint8_t *key, size_t len, char *out, size_t outlen)
{
	uint8_t buf[NVME_SECRET_MAX + 4];
	int rc;

	if (!nvme_key_len_valid(len))
		return -EINVAL;
	memcpy(buf, key, len);
	put_le32(buf + len, nvme_key_crc32(key, len));
	rc = base64_encode(buf, len + 4, out, outlen);
	OPENSSL_cleanse(buf, sizeof(buf));
	return rc;
}

int nvme_key_decode_b64crc(const char *b64, size_t n, struct nvme_secret **out, uint32_t *crc)
{
	uint8_t buf[BASE64_DECODED_MAX(NVME_KEY_B64_LEN(NVME_SECRET_MAX))];
	size_t klen;
	int rc;

	*out = NULL;
	if (n > NVME_KEY_B64_LEN(NVME_SECRET_MAX)) /* longer than any allowed key */
		return -EMSGSIZE;
	rc = base64_decode(b64, n, buf, sizeof(buf));
	if (rc < 0)
		goto out;
	if (rc < 4 || !nvme_key_len_valid((size_t)rc - 4)) {
		rc = -EMSGSIZE;
		goto out;
	}
	klen = (size_t)rc - 4;
	if (get_le32(buf + klen) != nvme_key_crc32(buf, klen)) {
		rc = -EBADMSG;
		goto out;
	}
	*out = nvme_secret_from(buf, klen);
	if (!*out) {
		rc = -ENOMEM;
		goto out;
	}
	if (crc)
		*crc = get_le32(buf + klen);
	rc = 0;
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	return rc;
}

int nvme_key_format_text(const char *prefix, unsigned int nn, const struct nvme_secret *s,
			 char *buf, size_t len)
{
	int n, rc;

	n = snprintf(buf, len, "%s%02u:", prefix, nn);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	rc = nvme_key_encode_b64crc(s->key, s->len, buf + n, len - (size_t)n);
	if (rc < 0)
		return rc;
	n += rc;
	if ((size_t)n + 1 >= len)
		return -ENOSPC;
	buf[n++] = ':';
	buf[n] = '\0';
	return n;
}

int nvme_key_error(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int nvme_key_parse_text(const char *prefix, const char *what, const char *nn_name,
			unsigned int max_nn, const char *text, uint8_t *nn,
			struct nvme_secret **out, char *err, size_t errlen)
{
	const size_t plen = strlen(prefix);
	const char *b64, *end;
	unsigned int v;
	int rc;

	*out = NULL;
	*nn = 0;
	if (!text || strncmp(text, prefix, plen) != 0)
		return nvme_key_error(-EINVAL, err, errlen, "%s: does not start with \"%s\"", what,
				      prefix);
	text += plen;
	if (text[0] < '0' || text[0] > '9' || text[1] < '0' || text[1] > '9' || text[2] != ':')
		return nvme_key_error(-EINVAL, err, errlen,
				      "%s: expected two digits and ':' after \"%s\"", what, prefix);
	v = (unsigned int)((text[0] - '0') * 10 + (text[1] - '0'));
	if (v > max_nn)
		return nvme_key_error(-EINVAL, err, errlen, "%s: unknown %s %02u (00-%02u)", what,
				      nn_name, v, max_nn);
	b64 = text + 3;
	end = strchr(b64, ':');
	if (!end)
		return nvme_key_error(-EINVAL, err, errlen, "%s: truncated (no closing ':')", what);
	if (end[1] != '\0')
		return nvme_key_error(-EINVAL, err, errlen,
				      "%s: unexpected text after the closing ':'", what);
	rc = nvme_key_decode_b64crc(b64, (size_t)(end - b64), out, NULL);
	switch (rc) {
	case 0:
		*nn = (uint8_t)v;
		return 0;
	case -EILSEQ:
		return nvme_key_error(rc, err, errlen, "%s: invalid base64", what);
	case -EMSGSIZE:
		return nvme_key_error(rc, err, errlen, "%s: key length is not 32, 48 or 64 bytes",
				      what);
	case -EBADMSG:
		return nvme_key_error(rc, err, errlen, "%s: CRC mismatch", what);
	default:
		return nvme_key_error(rc, err, errlen, "%s: %s", what, strerror(-rc));
	}
}
