/* SPDX-License-Identifier: MIT */
/* The ram backend: data round trips, inline completion, discard/zeroes, lba_status,
 * memory cost, mapped reads. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdev/bdev.h"
#include "ut.h"

static int ncb;
static int last_status;
static bool in_submit;
static bool cb_inside_submit;

static void cb(struct bdev_io *io, int status)
{
	ncb++;
	last_status = status;
	cb_inside_submit = in_submit;
}

/* Submit and return the status; ram completes before bdev_submit() returns. */
static int run(struct bdev *b, enum bdev_op op, bool fua, uint64_t off, uint64_t len,
	       struct iovec *iov, int iovcnt)
{
	struct bdev_io io = {
		.op = op, .fua = fua, .offset = off, .len = len, .iov = iov, .iovcnt = iovcnt,
		.cb = cb,
	};

	ncb = 0;
	last_status = 1;
	in_submit = true;
	bdev_submit(b, &io);
	in_submit = false;
	CU_ASSERT_EQUAL(ncb, 1);
	CU_ASSERT_TRUE(cb_inside_submit);
	return last_status;
}

static int rw(struct bdev *b, enum bdev_op op, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return run(b, op, false, off, len, &iov, 1);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 9));
}

static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void test_geometry(void)
{
	struct bdev *b = NULL;

	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:8M", 4096, &b, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(b->ops->name, "ram");
	CU_ASSERT_EQUAL(b->size, 8 << 20);
	CU_ASSERT_EQUAL(b->block_size, 4096);
	CU_ASSERT_FALSE(b->volatile_cache);
	CU_ASSERT_FALSE(b->persistent);
	CU_ASSERT_PTR_NOT_NULL(b->ops->lba_status);
	bdev_close(b);
}

/* Scatter a write over uneven iovecs, gather it back through a different split. */
static void test_round_trip_iov(void)
{
	static uint8_t src[16384], dst[16384 + 4096], around[4096];
	size_t wsplit[] = { 512, 1000, 24, 3560, 3096 }; /* 8192 */
	size_t rsplit[] = { 100, 4000, 8192 };		  /* more than 8192: only 8192 used */
	struct iovec wiov[5], riov[3];
	struct bdev *b = NULL;
	size_t pos = 0;

	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:1M", 512, &b, NULL, 0), 0);
	fill(src, sizeof(src), 1);
	for (int i = 0; i < 5; i++) {
		wiov[i] = (struct iovec){ src + pos, wsplit[i] };
		pos += wsplit[i];
	}
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE, false, 4096, 8192, wiov, 5), 0);

	memset(dst, 0xee, sizeof(dst));
	pos = 0;
	for (int i = 0; i < 3; i++) {
		riov[i] = (struct iovec){ dst + pos, rsplit[i] };
		pos += rsplit[i];
	}
	CU_ASSERT_EQUAL(run(b, BDEV_OP_READ, false, 4096, 8192, riov, 3), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 8192), 0);
	CU_ASSERT_EQUAL(dst[8192], 0xee); /* the buffer past len is untouched */

	/* Neighbours were not written. */
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, around, 4096), 0);
	CU_ASSERT_TRUE(all_zero(around, 4096));
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 12288, around, 4096), 0);
	CU_ASSERT_TRUE(all_zero(around, 4096));

	/* FUA and Flush are accepted and change nothing. */
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE, true, 0, 512, wiov, 1), 0);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_FLUSH, false, 0, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, dst, 512), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 512), 0);

	/* The last block of the namespace, and one past it. */
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, (1 << 20) - 512, src, 512), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, (1 << 20) - 512, dst, 512), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 512), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 1 << 20, dst, 512), -ERANGE);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 100, dst, 512), -EINVAL);
	bdev_close(b);
}

/* A large write (copied with streaming stores) over iovecs of odd lengths and addresses,
 * next to data written through the cache: both read back, the neighbours untouched. */
static void test_large_write(void)
{
	static uint8_t src[65536 + 64], dst[65536 + 1024], small[512];
	size_t split[] = { 1, 63, 4033, 61439 }; /* 65536, each segment unaligned */
	struct iovec iov[4];
	struct bdev *b = NULL;
	size_t pos = 3;

	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:1M", 512, &b, NULL, 0), 0);
	fill(src, sizeof(src), 5);
	fill(small, sizeof(small), 6);
	for (int i = 0; i < 4; i++) {
		iov[i] = (struct iovec){ src + pos, split[i] };
		pos += split[i];
	}
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 65536 - 512, small, 512), 0);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE, false, 65536, 65536, iov, 4), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 65536 - 512, dst, sizeof(dst)), 0);
	CU_ASSERT_EQUAL(memcmp(dst, small, 512), 0);
	CU_ASSERT_EQUAL(memcmp(dst + 512, src + 3, 65536), 0);
	CU_ASSERT_TRUE(all_zero(dst + 512 + 65536, 512));
	bdev_close(b);
}

/* Discard / Write Zeroes over whole and partial pages read back as zeroes. */
static const struct {
	uint32_t bs;
	enum bdev_op op;
	uint64_t off, len;
} zero_cases[] = {
	{ 512, BDEV_OP_DISCARD, 1536, 512 },	    /* inside one page */
	{ 512, BDEV_OP_DISCARD, 3584, 9216 },	    /* partial, whole, partial page */
	{ 512, BDEV_OP_DISCARD, 0, 65536 },	    /* everything */
	{ 512, BDEV_OP_WRITE_ZEROES, 512, 30208 },
	{ 4096, BDEV_OP_DISCARD, 8192, 16384 },
	{ 4096, BDEV_OP_WRITE_ZEROES, 4096, 4096 },
};

static void test_zero_ranges(void)
{
	static uint8_t pat[65536], buf[65536];

	for (size_t i = 0; i < sizeof(zero_cases) / sizeof(zero_cases[0]); i++) {
		uint64_t off = zero_cases[i].off, len = zero_cases[i].len;
		struct bdev *b = NULL;

		CU_ASSERT_EQUAL_FATAL(bdev_open("ram:64K", zero_cases[i].bs, &b, NULL, 0), 0);
		fill(pat, sizeof(pat), (unsigned int)i);
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 0, pat, sizeof(pat)), 0);
		CU_ASSERT_EQUAL(run(b, zero_cases[i].op, false, off, len, NULL, 0), 0);
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, buf, sizeof(buf)), 0);
		CU_ASSERT_EQUAL(memcmp(buf, pat, off), 0);
		CU_ASSERT_TRUE(all_zero(buf + off, len));
		CU_ASSERT_EQUAL(memcmp(buf + off + len, pat + off + len, sizeof(buf) - off - len),
				0);
		/* Writable again afterwards. */
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, off, pat, zero_cases[i].bs), 0);
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, off, buf, zero_cases[i].bs), 0);
		CU_ASSERT_EQUAL(memcmp(buf, pat, zero_cases[i].bs), 0);
		bdev_close(b);
	}
}

struct run_want {
	uint64_t off;
	bool dealloc;
	uint64_t len;
};

static void check_runs(struct bdev *b, const struct run_want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t len = 0;
		bool dealloc = !w[i].dealloc;

		CU_ASSERT_EQUAL(bdev_lba_status(b, w[i].off, &len, &dealloc), 0);
		if (dealloc != w[i].dealloc || len != w[i].len)
			fprintf(stderr, "\n  at %llu: dealloc %d len %llu, want %d %llu\n",
				(unsigned long long)w[i].off, dealloc, (unsigned long long)len,
				w[i].dealloc, (unsigned long long)w[i].len);
		CU_ASSERT_EQUAL(dealloc, w[i].dealloc);
		CU_ASSERT_EQUAL(len, w[i].len);
	}
}

static void test_lba_status(void)
{
	static uint8_t buf[128 * 512];
	struct bdev *b = NULL;
	const uint64_t B = 512, N = 1024; /* 512 KiB namespace */

	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:512K", 512, &b, NULL, 0), 0);
	fill(buf, sizeof(buf), 3);
	{
		const struct run_want fresh[] = {
			{ 0, true, N * B },
			{ 700 * B, true, (N - 700) * B },
			{ (N - 1) * B, true, B },
		};
		check_runs(b, fresh, 3);
	}
	/* Written: blocks 8..15 and 60..139 (crosses bitmap words); zeroed: 200..201. */
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 8 * B, buf, 8 * B), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 60 * B, buf, 80 * B), 0);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE_ZEROES, false, 200 * B, 2 * B, NULL, 0), 0);
	{
		const struct run_want w[] = {
			{ 0, true, 8 * B },	      { 8 * B, false, 8 * B },
			{ 12 * B, false, 4 * B },     { 16 * B, true, 44 * B },
			{ 60 * B, false, 80 * B },    { 64 * B, false, 76 * B },
			{ 139 * B, false, B },	      { 140 * B, true, 60 * B },
			{ 200 * B, false, 2 * B },    { 202 * B, true, (N - 202) * B },
		};
		check_runs(b, w, sizeof(w) / sizeof(w[0]));
	}
	/* Discard the middle of the written run and one block at its start. */
	CU_ASSERT_EQUAL(run(b, BDEV_OP_DISCARD, false, 63 * B, 66 * B, NULL, 0), 0);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_DISCARD, false, 8 * B, B, NULL, 0), 0);
	{
		const struct run_want w[] = {
			{ 0, true, 9 * B },
			{ 9 * B, false, 7 * B },
			{ 60 * B, false, 3 * B },
			{ 63 * B, true, 66 * B },  { 129 * B, false, 11 * B },
		};
		check_runs(b, w, sizeof(w) / sizeof(w[0]));
	}
	/* Writing the whole namespace leaves one mapped run. */
	for (uint64_t off = 0; off < N * B; off += sizeof(buf))
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, off, buf, sizeof(buf)), 0);
	{
		const struct run_want w[] = { { 0, false, N * B }, { 1000 * B, false, 24 * B } };
		check_runs(b, w, 2);
	}
	bdev_close(b);

	/* 4096-byte blocks: one bit per 4 KiB block. */
	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:1M", 4096, &b, NULL, 0), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 4096, buf, 8192), 0);
	{
		const struct run_want w[] = {
			{ 0, true, 4096 },
			{ 4096, false, 8192 },
			{ 12288, true, (1 << 20) - 12288 },
		};
		check_runs(b, w, 3);
	}
	bdev_close(b);
}

/* A large namespace costs nothing until written; Discard gives the memory back. */
static void test_memory_cost(void)
{
	const size_t chunk = 1 << 20, total = 32 << 20;
	static uint8_t buf[1 << 20];
	struct bdev *b = NULL;
	long before, written, discarded;

	before = rss_kib();
	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:16G", 4096, &b, NULL, 0), 0);
	CU_ASSERT_TRUE(rss_kib() - before < 4096);
	fill(buf, sizeof(buf), 5);
	for (size_t off = 0; off < total; off += chunk)
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, (8ull << 30) + off, buf, chunk), 0);
	written = rss_kib();
	CU_ASSERT_TRUE(written - before >= (long)(total / 1024) - 1024);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_DISCARD, false, 8ull << 30, total, NULL, 0), 0);
	discarded = rss_kib();
	CU_ASSERT_TRUE(written - discarded >= (long)(total / 1024) - 1024);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, (8ull << 30) + total - chunk, buf, chunk), 0);
	CU_ASSERT_TRUE(all_zero(buf, chunk));
	bdev_close(b);
}

/* Submit @io (fields set by the caller) and return the status. */
static int run_io(struct bdev *b, struct bdev_io *io)
{
	ncb = 0;
	last_status = 1;
	io->cb = cb;
	bdev_submit(b, io);
	CU_ASSERT_EQUAL(ncb, 1);
	return last_status;
}

/* A READ whose submitter accepts mapped data gets iov[0] pointing at the namespace bytes,
 * nothing copied into its buffers; out of range it is refused and nothing is mapped; every
 * other op ignores map_ok, and without it a READ still copies. */
static void test_mapped_read(void)
{
	static uint8_t src[8192], buf[8192], buf2[4096];
	struct iovec iov[2];
	struct bdev_io io;
	struct bdev *b = NULL;
	const uint8_t *m;

	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:1M", 512, &b, NULL, 0), 0);
	fill(src, sizeof(src), 5);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 8192, src, sizeof(src)), 0);

	/* mapped: two caller iovecs become one describing offset 8192 + 512 */
	memset(buf, 0xee, sizeof(buf));
	memset(buf2, 0xee, sizeof(buf2));
	iov[0] = (struct iovec){ buf, 4096 };
	iov[1] = (struct iovec){ buf2, 3584 };
	io = (struct bdev_io){ .op = BDEV_OP_READ,
			       .offset = 8192 + 512,
			       .len = 7680,
			       .iov = iov,
			       .iovcnt = 2,
			       .map_ok = true };
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_TRUE(io.mapped);
	CU_ASSERT_EQUAL(io.iovcnt, 1);
	CU_ASSERT_PTR_EQUAL(io.iov, iov);
	CU_ASSERT_EQUAL(iov[0].iov_len, 7680);
	m = iov[0].iov_base;
	CU_ASSERT_TRUE(m != buf && m != buf2);
	CU_ASSERT_EQUAL(memcmp(m, src + 512, 7680), 0);
	CU_ASSERT_EQUAL(buf[0], 0xee); /* nothing copied */
	CU_ASSERT_EQUAL(buf2[0], 0xee);

	/* it is the namespace itself: a later write shows through the same pointer */
	fill(src, 512, 9);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 8192 + 512, src, 512), 0);
	CU_ASSERT_EQUAL(memcmp(m, src, 512), 0);

	/* the last block maps too; one past the end is refused, not mapped */
	iov[0] = (struct iovec){ buf, 512 };
	io = (struct bdev_io){ .op = BDEV_OP_READ,
			       .offset = (1 << 20) - 512,
			       .len = 512,
			       .iov = iov,
			       .iovcnt = 1,
			       .map_ok = true };
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_TRUE(io.mapped);
	CU_ASSERT_PTR_EQUAL((const uint8_t *)iov[0].iov_base, m - 8192 - 512 + (1 << 20) - 512);
	iov[0] = (struct iovec){ buf, 1024 };
	io = (struct bdev_io){ .op = BDEV_OP_READ,
			       .offset = (1 << 20) - 512,
			       .len = 1024,
			       .iov = iov,
			       .iovcnt = 1,
			       .map_ok = true };
	CU_ASSERT_EQUAL(run_io(b, &io), -ERANGE);
	CU_ASSERT_FALSE(io.mapped);
	CU_ASSERT_PTR_EQUAL(iov[0].iov_base, buf);
	io = (struct bdev_io){ .op = BDEV_OP_READ,
			       .offset = 100,
			       .len = 512,
			       .iov = iov,
			       .iovcnt = 1,
			       .map_ok = true };
	CU_ASSERT_EQUAL(run_io(b, &io), -EINVAL);
	CU_ASSERT_FALSE(io.mapped);
	CU_ASSERT_PTR_EQUAL(iov[0].iov_base, buf);

	/* without map_ok a READ copies and leaves the iovecs alone */
	memset(buf, 0, sizeof(buf));
	iov[0] = (struct iovec){ buf, 512 };
	io = (struct bdev_io){
		.op = BDEV_OP_READ, .offset = 8192 + 512, .len = 512, .iov = iov, .iovcnt = 1
	};
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_FALSE(io.mapped);
	CU_ASSERT_PTR_EQUAL(iov[0].iov_base, buf);
	CU_ASSERT_EQUAL(memcmp(buf, src, 512), 0);

	/* WRITE with map_ok set writes from the caller's buffer, maps nothing */
	fill(buf, 512, 11);
	iov[0] = (struct iovec){ buf, 512 };
	io = (struct bdev_io){
		.op = BDEV_OP_WRITE, .offset = 0, .len = 512, .iov = iov, .iovcnt = 1, .map_ok = true
	};
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_FALSE(io.mapped);
	CU_ASSERT_PTR_EQUAL(iov[0].iov_base, buf);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, buf2, 512), 0);
	CU_ASSERT_EQUAL(memcmp(buf2, buf, 512), 0);

	/* COMPARE_AND_WRITE likewise */
	iov[1] = (struct iovec){ buf2, 512 };
	io = (struct bdev_io){ .op = BDEV_OP_COMPARE_AND_WRITE,
			       .offset = 0,
			       .len = 512,
			       .iov = &iov[0],
			       .iovcnt = 1,
			       .cmp_iov = &iov[1],
			       .cmp_iovcnt = 1,
			       .map_ok = true };
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_FALSE(io.mapped);
	CU_ASSERT_PTR_EQUAL(iov[0].iov_base, buf);
	bdev_close(b);
}

/* A resize never takes mapped memory away: after a shrink past a lent range it still reads
 * (as zeroes), and growing back leaves the pointer valid. */
static void test_mapped_read_resize(void)
{
	static uint8_t src[4096], buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	struct bdev_io io = { .op = BDEV_OP_READ,
			      .offset = (1 << 20) - 4096,
			      .len = 4096,
			      .iov = &iov,
			      .iovcnt = 1,
			      .map_ok = true };
	struct bdev *b = NULL;
	const volatile uint8_t *m;
	unsigned int sum = 0;

	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:1M", 512, &b, NULL, 0), 0);
	fill(src, sizeof(src), 3);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, (1 << 20) - 4096, src, sizeof(src)), 0);
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_TRUE_FATAL(io.mapped);
	m = iov.iov_base;
	CU_ASSERT_EQUAL(memcmp((const void *)m, src, sizeof(src)), 0);
	CU_ASSERT_EQUAL(bdev_resize(b, 512 * 1024, NULL, 0), 0);
	for (size_t i = 0; i < 4096; i++)
		sum += m[i];
	CU_ASSERT_EQUAL(sum, 0); /* the tail went back to the kernel: zeroes, no fault */
	CU_ASSERT_EQUAL(bdev_resize(b, 2 << 20, NULL, 0), 0);
	for (size_t i = 0; i < 4096; i++)
		sum += m[i];
	CU_ASSERT_EQUAL(sum, 0);
	bdev_close(b);
}

/* The null backend does not map: it fills the caller's buffers as before. */
static void test_null_does_not_map(void)
{
	static uint8_t buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	struct bdev_io io = { .op = BDEV_OP_READ,
			      .offset = 0,
			      .len = sizeof(buf),
			      .iov = &iov,
			      .iovcnt = 1,
			      .map_ok = true };
	struct bdev *b = NULL;

	CU_ASSERT_EQUAL_FATAL(bdev_open("null:1M", 512, &b, NULL, 0), 0);
	CU_ASSERT_EQUAL(run_io(b, &io), 0);
	CU_ASSERT_FALSE(io.mapped);
	CU_ASSERT_PTR_EQUAL(iov.iov_base, buf);
	bdev_close(b);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "geometry and flags", test_geometry },
		{ "multi-iovec round trip, inline completion", test_round_trip_iov },
		{ "large write over odd iovecs", test_large_write },
		{ "discard and write zeroes read back zeroes", test_zero_ranges },
		{ "lba_status runs", test_lba_status },
		{ "sparse memory, discard frees", test_memory_cost },
		{ "READ with map_ok lends the namespace memory", test_mapped_read },
		{ "mapped memory stays valid across resizes", test_mapped_read_resize },
		{ "null backend ignores map_ok", test_null_does_not_map },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bdev_ram", NULL, NULL, tests);
}
