/* SPDX-License-Identifier: MIT */
/* JSON output helpers (json_writer.h). */
#include "common/json_writer.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* The escape of byte @ch into @out (at most 7 bytes), or 0 when it needs none. */
static size_t escape_byte(unsigned char ch, char out[8])
{
	static const char hex[] = "0123456789abcdef";
	static const char short_form[0x20] = {
		['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
	};

	if (ch == '"' || ch == '\\') {
		out[0] = '\\';
		out[1] = (char)ch;
		return 2;
	}
	if (ch >= 0x20)
		return 0;
	if (short_form[ch]) {
		out[0] = '\\';
		out[1] = short_form[ch];
		return 2;
	}
	memcpy(out, "\\u00", 4);
	out[4] = hex[ch >> 4];
	out[5] = hex[ch & 15];
	return 6;
}

void json_write_strn(FILE *f, const char *s, size_t n)
{
	char esc[8];

	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		size_t k = escape_byte((unsigned char)s[i], esc);

		if (k)
			fwrite(esc, 1, k, f);
		else
			fputc(s[i], f);
	}
	fputc('"', f);
}

void json_write_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	json_write_strn(f, s, strlen(s));
}

void json_write_num(FILE *f, double v, int prec)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.*g", prec > 0 ? prec : 6, v);
}

size_t json_escape(char *buf, size_t len, const char *s)
{
	size_t need = 0, used = 0;
	bool cut = false;
	char esc[8];

	for (; *s; s++) {
		size_t k = escape_byte((unsigned char)*s, esc);
		const char *src = k ? esc : s;

		if (!k)
			k = 1;
		if (!cut && len && used + k < len) {
			memcpy(buf + used, src, k);
			used += k;
		} else {
			cut = true;
		}
		need += k;
	}
	if (len)
		buf[used] = '\0';
	return need;
}
