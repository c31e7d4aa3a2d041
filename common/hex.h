/* SPDX-License-Identifier: MIT */
/* Hexadecimal digits: the one reader and writer of the identifiers, keys and escapes that
 * config files, state files, URIs and iSCSI text carry in hex. */
#ifndef NVMEOF_COMMON_HEX_H
#define NVMEOF_COMMON_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The value of hex digit @c (either case), or -1. */
static inline int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @n bytes of @b as 2 * @n lowercase digits into @out, NUL-terminated (2 * @n + 1 bytes). */
static inline void hex_put(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

#endif
