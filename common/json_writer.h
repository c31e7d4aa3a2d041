/* SPDX-License-Identifier: MIT */
/*
 * JSON output helpers shared by the CLI, the bench and the daemon: strings escaped per
 * RFC 8259 (quote, backslash and every control character below 0x20; \b \f \n \r \t in
 * their short forms, the rest as \u00XX; bytes >= 0x80 pass through, so UTF-8 stays
 * UTF-8) and numbers that are never NaN or Infinity (JSON has neither: null instead).
 */
#ifndef NVMEOF_COMMON_JSON_WRITER_H
#define NVMEOF_COMMON_JSON_WRITER_H

#include <stddef.h>
#include <stdio.h>

/* "@s" with quotes and escapes; NULL writes null. */
void json_write_str(FILE *f, const char *s);
/* The same for @n bytes of @s (which may hold NUL: written as \u0000). */
void json_write_strn(FILE *f, const char *s, size_t n);
/* @v as a JSON number: integral values without a fraction, others with @prec significant
 * digits (0: 6); NaN and infinities as null. */
void json_write_num(FILE *f, double v, int prec);
/* Escape @s (without quotes) into @buf of @len bytes, always NUL-terminated. Returns the
 * length the whole escaped text needs (as snprintf does), so a return >= @len means it
 * was cut; a cut never splits an escape sequence. */
size_t json_escape(char *buf, size_t len, const char *s);

#endif
