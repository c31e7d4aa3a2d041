/* SPDX-License-Identifier: MIT */
/* The null backend: every valid request succeeds inline and touches no data. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "bdev/bdev.h"
#include "ut.h"

static int ncb;
static int last_status;

static void cb(struct bdev_io *io, int status)
{
	ncb++;
	last_status = status;
}

static const struct {
	enum bdev_op op;
	bool fua;
	uint64_t off, len;
	int status;
} cases[] = {
	{ BDEV_OP_READ, false, 0, 8192, 0 },
	{ BDEV_OP_WRITE, false, 4096, 8192, 0 },
	{ BDEV_OP_WRITE, true, (1ull << 40) - 8192, 8192, 0 },
	{ BDEV_OP_FLUSH, false, 0, 0, 0 },
	{ BDEV_OP_WRITE_ZEROES, false, 0, 1ull << 40, 0 },
	{ BDEV_OP_DISCARD, false, 1ull << 30, 1ull << 30, 0 },
	{ BDEV_OP_READ, false, 1ull << 40, 4096, -ERANGE },
	{ BDEV_OP_DISCARD, false, 4096, 512, -EINVAL }, /* 4096-byte blocks */
};

static void test_requests(void)
{
	static uint8_t buf[8192], copy[8192];
	struct iovec iov[2] = { { buf, 100 }, { buf + 100, sizeof(buf) - 100 } };
	struct bdev *b = NULL;
	char err[128];

	CU_ASSERT_EQUAL_FATAL(bdev_open("null:1T", 4096, &b, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(b->ops->name, "null");
	CU_ASSERT_EQUAL(b->size, 1ull << 40);
	CU_ASSERT_FALSE(b->volatile_cache);
	CU_ASSERT_FALSE(b->persistent);
	CU_ASSERT_PTR_NULL(b->ops->lba_status);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i ^ 0x5a);
	memcpy(copy, buf, sizeof(buf));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool data = cases[i].op == BDEV_OP_READ || cases[i].op == BDEV_OP_WRITE;
		struct bdev_io io = {
			.op = cases[i].op, .fua = cases[i].fua, .offset = cases[i].off,
			.len = cases[i].len, .iov = data ? iov : NULL, .iovcnt = data ? 2 : 0,
			.cb = cb,
		};

		ncb = 0;
		last_status = 1;
		bdev_submit(b, &io);
		/* Completed before bdev_submit() returned. */
		CU_ASSERT_EQUAL(ncb, 1);
		CU_ASSERT_EQUAL(last_status, cases[i].status);
		/* Reads leave the buffer as it was (no zero fill). */
		CU_ASSERT_EQUAL(memcmp(buf, copy, sizeof(buf)), 0);
	}
	bdev_close(b);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "requests complete inline without data", test_requests },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bdev_null", NULL, NULL, tests);
}
