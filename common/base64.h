/* SPDX-License-Identifier: MIT */
/*
 * Base64 (RFC 4648 section 4, standard alphabet, '=' padding) for the key interchange
 * formats. The decoder is strict: the length must be a multiple of 4, padding may only
 * close the text, and the bits a final character leaves unused must be zero, so every
 * accepted text is the one the encoder would produce for the same bytes.
 */
#ifndef NVMEOF_BASE64_H
#define NVMEOF_BASE64_H

#include <stddef.h>

/* Characters base64_encode() writes for @len bytes (without the NUL). */
#define BASE64_ENCODED_LEN(len) ((((size_t)(len) + 2) / 3) * 4)
/* Upper bound of the bytes base64_decode() writes for @n characters. */
#define BASE64_DECODED_MAX(n) (((size_t)(n) / 4) * 3)

/*
 * Encode @len bytes into @dst (NUL-terminated). Returns the number of characters written
 * (without the NUL), or -ENOSPC when @dstlen cannot hold them and the NUL.
 */
int base64_encode(const void *src, size_t len, char *dst, size_t dstlen);

/*
 * Decode @n characters of @src into @dst. Returns the number of bytes written, -EILSEQ
 * when @src is not canonical base64 (bad character, misplaced padding, length not a
 * multiple of 4, non-zero unused bits), or -ENOSPC when @dstlen is too small.
 */
int base64_decode(const char *src, size_t n, void *dst, size_t dstlen);

#endif
