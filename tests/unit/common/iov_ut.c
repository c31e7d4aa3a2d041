/* SPDX-License-Identifier: MIT */
/*
 * common/iov.c: every helper against a plain byte-array model, over windows that start and
 * end inside, on and across element boundaries, including empty elements and windows past
 * the end of the data.
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <string.h>

#include "common/iov.h"
#include "ut.h"

/* Elements of 3, 0, 5, 1 and 7 bytes carved from one 16-byte backing store. */
#define TOTAL 16
static uint8_t store[TOTAL];
static struct iovec vec[5];

static void setup_vec(void)
{
	static const size_t lens[] = { 3, 0, 5, 1, 7 };
	size_t off = 0;

	for (int i = 0; i < 5; i++) {
		vec[i].iov_base = store + off;
		vec[i].iov_len = lens[i];
		off += lens[i];
	}
	for (int i = 0; i < TOTAL; i++)
		store[i] = (uint8_t)(0xa0 + i);
}

static size_t expect_len(size_t off, size_t len)
{
	if (off >= TOTAL)
		return 0;
	return len < TOTAL - off ? len : TOTAL - off;
}

static void test_length(void)
{
	setup_vec();
	CU_ASSERT_EQUAL(iov_length(vec, 5), TOTAL);
	CU_ASSERT_EQUAL(iov_length(vec, 2), 3);
	CU_ASSERT_EQUAL(iov_length(vec, 0), 0);
}

static void test_copy_to_buf(void)
{
	for (size_t off = 0; off <= TOTAL + 1; off++) {
		for (size_t len = 0; len <= TOTAL + 2; len++) {
			uint8_t buf[TOTAL + 4];
			size_t n, want = expect_len(off, len);

			setup_vec();
			memset(buf, 0x55, sizeof(buf));
			n = iov_copy_to_buf(vec, 5, off, buf, len);
			CU_ASSERT_EQUAL(n, want);
			CU_ASSERT(memcmp(buf, store + off, want) == 0);
			CU_ASSERT_EQUAL(buf[want], 0x55); /* nothing written past the count */
		}
	}
}

static void test_copy_from_buf(void)
{
	uint8_t src[TOTAL + 4];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(0x10 + i);
	for (size_t off = 0; off <= TOTAL + 1; off++) {
		for (size_t len = 0; len <= TOTAL + 2; len++) {
			uint8_t model[TOTAL];
			size_t n, want = expect_len(off, len);

			setup_vec();
			memcpy(model, store, TOTAL);
			if (want)
				memcpy(model + off, src, want);
			n = iov_copy_from_buf(vec, 5, off, src, len);
			CU_ASSERT_EQUAL(n, want);
			CU_ASSERT(memcmp(store, model, TOTAL) == 0);
		}
	}
}

static void test_cmp_buf(void)
{
	setup_vec();
	for (size_t off = 0; off <= TOTAL; off++) {
		for (size_t len = 0; len + off <= TOTAL; len++) {
			uint8_t buf[TOTAL];

			memcpy(buf, store + off, len);
			CU_ASSERT_EQUAL(iov_cmp_buf(vec, 5, off, buf, len), 0);
			if (!len)
				continue;
			/* a difference in the first, last or a middle byte is found */
			for (size_t k = 0; k < len; k += (len > 2 ? len / 2 : 1)) {
				buf[k] ^= 0xff;
				CU_ASSERT_NOT_EQUAL(iov_cmp_buf(vec, 5, off, buf, len), 0);
				buf[k] ^= 0xff;
			}
			buf[len - 1] ^= 1;
			CU_ASSERT_NOT_EQUAL(iov_cmp_buf(vec, 5, off, buf, len), 0);
		}
	}
	/* the iovecs ending first is a difference, not a match of the shorter part */
	{
		uint8_t buf[TOTAL + 1];

		memcpy(buf, store, TOTAL);
		buf[TOTAL] = 0;
		CU_ASSERT_NOT_EQUAL(iov_cmp_buf(vec, 5, 0, buf, TOTAL + 1), 0);
		CU_ASSERT_NOT_EQUAL(iov_cmp_buf(vec, 5, TOTAL, buf, 1), 0);
	}
}

static void test_memset(void)
{
	for (size_t off = 0; off <= TOTAL + 1; off++) {
		for (size_t len = 0; len <= TOTAL + 2; len++) {
			uint8_t model[TOTAL];
			size_t n, want = expect_len(off, len);

			setup_vec();
			memcpy(model, store, TOTAL);
			if (want)
				memset(model + off, 0, want);
			n = iov_memset(vec, 5, off, 0, len);
			CU_ASSERT_EQUAL(n, want);
			CU_ASSERT(memcmp(store, model, TOTAL) == 0);
		}
	}
	/* SIZE_MAX: to the end of the data, with the given byte */
	setup_vec();
	CU_ASSERT_EQUAL(iov_memset(vec, 5, 4, 0x7e, SIZE_MAX), TOTAL - 4);
	CU_ASSERT_EQUAL(store[3], 0xa3);
	for (int i = 4; i < TOTAL; i++)
		CU_ASSERT_EQUAL(store[i], 0x7e);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "length", test_length },
		{ "copy to a buffer", test_copy_to_buf },
		{ "copy from a buffer", test_copy_from_buf },
		{ "compare with a buffer", test_cmp_buf },
		{ "fill", test_memset },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iov", NULL, NULL, tests);
}
