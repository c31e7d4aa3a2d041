/* SPDX-License-Identifier: MIT */
#include "base64.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+"
				   "/";

int base64_encode(const void *src, size_t len, char *dst, size_t dstlen)
{
	const uint8_t *s = src;
	size_t out = BASE64_ENCODED_LEN(len), o = 0;

	if (len > (size_t)INT32_MAX / 2 || dstlen < out + 1)
		return -ENOSPC;
	for (size_t i = 0; i < len; i += 3) {
		size_t rem = len - i;
		uint32_t v = (uint32_t)s[i] << 16;

		if (rem > 1)
			v |= (uint32_t)s[i + 1] << 8;
		if (rem > 2)
			v |= s[i + 2];
		dst[o++] = b64_alphabet[(v >> 18) & 0x3f];
		dst[o++] = b64_alphabet[(v >> 12) & 0x3f];
		dst[o++] = rem > 1 ? b64_alphabet[(v >> 6) & 0x3f] : '=';
		dst[o++] = rem > 2 ? b64_alphabet[v & 0x3f] : '=';
	}
	dst[o] = '\0';
	return (int)o;
}

/* 0..63, or -1 for anything outside the alphabet (including '='). */
static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int base64_decode(const char *src, size_t n, void *dst, size_t dstlen)
{
	uint8_t *d = dst;
	size_t o = 0;

	if (n % 4 != 0 || n > (size_t)INT32_MAX)
		return -EILSEQ;
	for (size_t i = 0; i < n; i += 4) {
		bool last = i + 4 == n;
		int v[4], pad = 0;
		uint32_t w;

		for (int k = 0; k < 4; k++) {
			char c = src[i + k];

			if (c == '=' && last && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad) /* data after padding */
				return -EILSEQ;
			v[k] = b64_value(c);
			if (v[k] < 0)
				return -EILSEQ;
		}
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
		    (uint32_t)v[3];
		/* Non-canonical: bits the padding leaves unused must be zero. */
		if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
			return -EILSEQ;
		if (dstlen - o < (size_t)(3 - pad))
			return -ENOSPC;
		d[o++] = (uint8_t)(w >> 16);
		if (pad < 2)
			d[o++] = (uint8_t)(w >> 8);
		if (pad < 1)
			d[o++] = (uint8_t)w;
	}
	return (int)o;
}
