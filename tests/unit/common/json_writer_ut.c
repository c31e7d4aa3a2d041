/* SPDX-License-Identifier: MIT */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_writer.h"
#include "ut.h"

/* What a writer call produced, through a memory stream. */
static char *capture_str(const char *s, size_t n, bool use_n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (use_n)
		json_write_strn(f, s, n);
	else
		json_write_str(f, s);
	fclose(f);
	return buf;
}

static const struct {
	const char *in, *out;
} str_cases[] = {
	{ "", "\"\"" },
	{ "plain", "\"plain\"" },
	{ "a\"b", "\"a\\\"b\"" },
	{ "back\\slash", "\"back\\\\slash\"" },
	{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
	{ "\x01\x1f", "\"\\u0001\\u001f\"" },
	{ "\x7f", "\"\x7f\"" },               /* DEL needs no escape */
	{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" }, /* UTF-8 passes through */
	{ "/slash", "\"/slash\"" },           /* the solidus need not be escaped */
	{ "nqn.2026-11.io:x\x1b[0m", "\"nqn.2026-11.io:x\\u001b[0m\"" },
};

static void test_strings(void)
{
	for (size_t i = 0; i < sizeof(str_cases) / sizeof(str_cases[0]); i++) {
		char *got = capture_str(str_cases[i].in, 0, false);

		CU_ASSERT_STRING_EQUAL(got, str_cases[i].out);
		free(got);
	}
	char *got = capture_str(NULL, 0, false);

	CU_ASSERT_STRING_EQUAL(got, "null");
	free(got);
	got = capture_str("a\0b", 3, true);
	CU_ASSERT_STRING_EQUAL(got, "\"a\\u0000b\"");
	free(got);
}

static void test_numbers(void)
{
	static const struct {
		double v;
		int prec;
		const char *out;
	} cases[] = {
		{ 0, 0, "0" },         { 42, 0, "42" },
		{ -7, 0, "-7" },       { 1.5, 0, "1.5" },
		{ 0.125, 3, "0.125" }, { 2.0 / 3, 3, "0.667" },
		{ 1e15, 0, "1e+15" },  { 123456789, 0, "123456789" },
	};
	char *buf;
	size_t len;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = open_memstream(&buf, &len);

		json_write_num(f, cases[i].v, cases[i].prec);
		fclose(f);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].out);
		free(buf);
	}
	double bad[] = { NAN, INFINITY, -INFINITY };

	for (size_t i = 0; i < 3; i++) {
		FILE *f = open_memstream(&buf, &len);

		json_write_num(f, bad[i], 0);
		fclose(f);
		CU_ASSERT_STRING_EQUAL(buf, "null");
		free(buf);
	}
}

static void test_escape_buffer(void)
{
	char buf[16];

	CU_ASSERT_EQUAL(json_escape(buf, sizeof(buf), "a\nb"), 4);
	CU_ASSERT_STRING_EQUAL(buf, "a\\nb");
	/* "x\x01" needs 7 bytes: a 6-byte buffer holds "x" and never half an escape */
	CU_ASSERT_EQUAL(json_escape(buf, 6, "x\x01y"), 8);
	CU_ASSERT_STRING_EQUAL(buf, "x");
	CU_ASSERT_EQUAL(json_escape(buf, 8, "x\x01y"), 8);
	CU_ASSERT_STRING_EQUAL(buf, "x\\u0001");
	CU_ASSERT_EQUAL(json_escape(buf, 9, "x\x01y"), 8);
	CU_ASSERT_STRING_EQUAL(buf, "x\\u0001y");
	CU_ASSERT_EQUAL(json_escape(NULL, 0, "\"\""), 4);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "strings per RFC 8259", test_strings },
		{ "numbers, NaN as null", test_numbers },
		{ "escaping into a buffer", test_escape_buffer },
		CU_TEST_INFO_NULL,
	};

	return ut_run("json_writer", NULL, NULL, tests);
}
