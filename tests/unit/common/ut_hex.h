/* SPDX-License-Identifier: MIT */
/* Hex test vectors for the unit tests of common/ (auth and TLS PSK). */
#ifndef NVMEOF_UT_HEX_H
#define NVMEOF_UT_HEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Decodes the hex string @hex into @out; returns the byte count, or -1 on a bad string. */
static inline int ut_unhex(const char *hex, uint8_t *out, size_t outlen)
{
	size_t n = strlen(hex) / 2;

	if (strlen(hex) % 2 || n > outlen)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)n;
}

/* True when @len bytes at @p equal the hex string @hex; prints both when they do not. */
static inline int ut_hex_eq(const uint8_t *p, size_t len, const char *hex)
{
	uint8_t want[1024];
	int n = ut_unhex(hex, want, sizeof(want));

	if (n == (int)len && memcmp(p, want, len) == 0)
		return 1;
	fprintf(stderr, "\n  want %s\n  got  ", hex);
	for (size_t i = 0; i < len; i++)
		fprintf(stderr, "%02x", p[i]);
	fprintf(stderr, "\n");
	return 0;
}

#endif
