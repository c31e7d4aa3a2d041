/* SPDX-License-Identifier: MIT */
/*
 * The file backend against temporary files. The data tests run twice: off-reactor (the
 * synchronous fallback) and through io_uring driven by a plain libev loop in this thread
 * (bdev_file_attach_loop). Then the ring's queueing under load, and real reactors.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <ev.h>

#include "bdev/bdev.h"
#include "bdev/bdev_internal.h"
#include "reactor/reactor.h"

#define TMPFS_MAGIC 0x01021994

static struct ev_loop *g_loop;
static bool g_async; /* submitting through the ring on g_loop */

struct waiter {
	int done;
	int status;
	bool inline_cb;
};

static bool g_in_submit;

static void wait_cb(struct bdev_io *io, int status)
{
	struct waiter *w = io->cb_arg;

	w->done++;
	w->status = status;
	w->inline_cb = g_in_submit;
}

static void loop_until(const int *done, int want)
{
	while (*done < want)
		ev_run(g_loop, EVRUN_ONCE);
}

static int submit_wait(struct bdev *b, struct bdev_io *io)
{
	struct waiter w = { 0 };

	io->cb = wait_cb;
	io->cb_arg = &w;
	g_in_submit = true;
	bdev_submit(b, io);
	g_in_submit = false;
	if (g_async && !w.done) {
		CU_ASSERT_EQUAL(bdev_file_pending(), 1);
		loop_until(&w.done, 1);
		CU_ASSERT_EQUAL(bdev_file_pending(), 0);
	}
	CU_ASSERT_EQUAL(w.done, 1);
	/* Valid requests complete from the loop on the ring path, inline off-reactor. */
	if (w.status == 0)
		CU_ASSERT_EQUAL(w.inline_cb, !g_async);
	return w.status;
}

static int run(struct bdev *b, enum bdev_op op, bool fua, uint64_t off, uint64_t len,
	       struct iovec *iov, int iovcnt)
{
	struct bdev_io io = {
		.op = op, .fua = fua, .offset = off, .len = len, .iov = iov, .iovcnt = iovcnt,
	};

	return submit_wait(b, &io);
}

static int rw(struct bdev *b, enum bdev_op op, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return run(b, op, false, off, len, &iov, 1);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 9) + 1);
}

static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* A sparse temporary file of @size bytes in @dir; returns an fd (kept for checks). */
static int make_file(const char *dir, uint64_t size, char *path, size_t pathlen)
{
	int fd;

	snprintf(path, pathlen, "%s/bdev_file_ut.XXXXXX", dir);
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(ftruncate(fd, (off_t)size) == 0);
	return fd;
}

static struct bdev *open_file(const char *path, uint32_t bs)
{
	struct bdev *b = NULL;
	char err[256] = "";
	int rc = bdev_open(path, bs, &b, err, sizeof(err));

	if (rc)
		fprintf(stderr, "\n  bdev_open %s: %s\n", path, err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return b;
}

static void drop(struct bdev *b, int fd, const char *path)
{
	bdev_close(b);
	close(fd);
	unlink(path);
}

/* ---- geometry ---- */

static void test_geometry(void)
{
	char path[64], real[4096], err[256];
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", (1 << 20) + 700, path, sizeof(path));
	b = open_file(path, 0);
	CU_ASSERT_STRING_EQUAL(b->ops->name, "file");
	CU_ASSERT_EQUAL(b->block_size, 512);
	CU_ASSERT_EQUAL(b->size, (1 << 20) + 512); /* rounded down to whole blocks */
	CU_ASSERT_TRUE(b->volatile_cache);
	CU_ASSERT_TRUE(b->persistent);
	CU_ASSERT_FATAL(realpath(path, real) != NULL);
	CU_ASSERT_STRING_EQUAL(b->path, real);
	bdev_close(b);

	b = open_file(path, 4096);
	CU_ASSERT_EQUAL(b->block_size, 4096);
	CU_ASSERT_EQUAL(b->size, 1 << 20);
	bdev_close(b);

	/* Smaller than one block. */
	CU_ASSERT_EQUAL(ftruncate(fd, 4000), 0);
	CU_ASSERT_EQUAL(bdev_open(path, 4096, &b, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "smaller than one 4096-byte block"));
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(bdev_open(path, 0, &b, err, sizeof(err)), -EINVAL);

	/* Not writable. */
	CU_ASSERT_EQUAL(ftruncate(fd, 8192), 0);
	CU_ASSERT_EQUAL(chmod(path, 0400), 0);
	if (geteuid() != 0) {
		CU_ASSERT_EQUAL(bdev_open(path, 0, &b, err, sizeof(err)), -EACCES);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
	}
	close(fd);
	unlink(path);
}

/* ---- direct I/O: alignment and bounce decisions ---- */

static uint8_t dio_mem[3 * 8192] __attribute__((aligned(4096)));

static const struct dio_case {
	const char *what;
	int n;                 /* iovecs */
	size_t off[3], len[3]; /* at dio_mem + off, len bytes */
	uint64_t req;          /* request length */
	bool aligned;
} dio_cases[] = {
	{ "one page-aligned iovec", 1, { 0 }, { 4096 }, 4096, true },
	{ "512-aligned address and lengths", 2, { 512, 8192 }, { 1024, 3072 }, 4096, true },
	{ "address off by one", 1, { 1 }, { 4096 }, 4096, false },
	{ "address 8-aligned only", 1, { 8 }, { 4096 }, 4096, false },
	{ "length not a block multiple mid-list", 2, { 0, 8192 }, { 1000, 3096 }, 4096, false },
	{ "second iovec misaligned", 2, { 0, 4100 }, { 2048, 2048 }, 4096, false },
	{ "only the used part of a long iovec", 1, { 0 }, { 8000 }, 4096, true },
	{ "used part of the last iovec", 2, { 0, 8192 }, { 512, 8000 }, 4096, true },
	{ "empty iovec in the middle is skipped", 3, { 0, 5, 8192 }, { 2048, 0, 2048 }, 4096, true },
	{ "iovecs hold less than the request", 1, { 0 }, { 2048 }, 4096, false },
};

static void test_dio_aligned(void)
{
	for (size_t i = 0; i < sizeof(dio_cases) / sizeof(dio_cases[0]); i++) {
		const struct dio_case *c = &dio_cases[i];
		struct iovec iov[3];
		int n;

		for (n = 0; n < c->n; n++)
			iov[n] = (struct iovec){ dio_mem + c->off[n], c->len[n] };
		if (bdev_dio_aligned(iov, n, c->req, 512, 512) != c->aligned)
			fprintf(stderr, "\n  %s: want %s\n", c->what,
				c->aligned ? "aligned" : "bounce");
		CU_ASSERT_EQUAL(bdev_dio_aligned(iov, n, c->req, 512, 512), c->aligned);
	}
	/* A 4096-byte memory alignment refuses what 512 accepts; unknown alignment never
	 * passes. */
	CU_ASSERT_FALSE(
		bdev_dio_aligned(&(struct iovec){ dio_mem + 512, 4096 }, 1, 4096, 4096, 512));
	CU_ASSERT_TRUE(
		bdev_dio_aligned(&(struct iovec){ dio_mem + 4096, 4096 }, 1, 4096, 4096, 4096));
	CU_ASSERT_FALSE(bdev_dio_aligned(&(struct iovec){ dio_mem, 4096 }, 1, 4096, 0, 512));
}

/* Direct by default, buffered when asked; the page cache must not keep direct data. */
static void test_dio_open(void)
{
	const struct bdev_open_opts buffered = { .block_size = 512, .buffered_io = true };
	char path[64];
	struct bdev *b = NULL;
	char err[256] = "";
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	b = open_file(path, 0);
	CU_ASSERT_TRUE(b->direct);
	CU_ASSERT_TRUE(b->dio_mem_align >= 1 && b->dio_mem_align <= 4096);
	CU_ASSERT_TRUE(b->volatile_cache); /* a file: metadata and the disk's cache */
	bdev_close(b);
	CU_ASSERT_EQUAL(bdev_open_ex(path, &buffered, &b, err, sizeof(err)), 0);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_FALSE(b->direct);
	CU_ASSERT_TRUE(b->volatile_cache);
	bdev_close(b);
	drop(NULL, fd, path);
	/* Not a file or block device: the message names the path, O_DIRECT or not. */
	CU_ASSERT_EQUAL(bdev_open("/dev/zero", 0, &b, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/dev/zero: not a regular file or block device"));
	CU_ASSERT_EQUAL(bdev_open_ex("/dev/zero", &buffered, &b, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/dev/zero: not a regular file or block device"));
}

/* Misaligned buffers are bounced (and counted), aligned ones are not; data is exact. */
static void test_bounce(void)
{
	static uint8_t src[16384 + 64] __attribute__((aligned(4096)));
	static uint8_t dst[16384 + 64] __attribute__((aligned(4096)));
	static uint8_t chk[16384];
	struct iovec split[2];
	char path[64];
	struct bdev *b;
	uint64_t before;
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	b = open_file(path, 512);
	CU_ASSERT_FATAL(b->direct);
	fill(src, sizeof(src), 11);

	/* Page-aligned both ways: straight to O_DIRECT. */
	before = b->bounced;
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 0, src, 8192), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, dst, 8192), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 8192), 0);
	CU_ASSERT_EQUAL(b->bounced, before);

	/* Write from an odd address, read into another odd address: two bounces. */
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 16384, src + 3, 8192), 0);
	memset(dst, 0xee, sizeof(dst));
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 16384, dst + 17, 8192), 0);
	CU_ASSERT_EQUAL(memcmp(dst + 17, src + 3, 8192), 0);
	CU_ASSERT_EQUAL(dst[16], 0xee);
	CU_ASSERT_EQUAL(dst[17 + 8192], 0xee);
	CU_ASSERT_EQUAL(b->bounced, before + 2);
	CU_ASSERT_EQUAL(pread(fd, chk, 8192, 16384), 8192);
	CU_ASSERT_EQUAL(memcmp(chk, src + 3, 8192), 0);

	/* Aligned addresses but a split that is not a block multiple (an SGL cut mid-block). */
	split[0] = (struct iovec){ src, 1000 };
	split[1] = (struct iovec){ src + 8192, 3096 };
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE, true, 65536, 4096, split, 2), 0);
	CU_ASSERT_EQUAL(b->bounced, before + 3);
	CU_ASSERT_EQUAL(pread(fd, chk, 4096, 65536), 4096);
	CU_ASSERT_EQUAL(memcmp(chk, src, 1000), 0);
	CU_ASSERT_EQUAL(memcmp(chk + 1000, src + 8192, 3096), 0);

	/* A failed bounced read leaves the caller's buffer alone. */
	memset(dst, 0xee, sizeof(dst));
	CU_ASSERT_EQUAL(ftruncate(fd, 32768), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 32768, dst + 1, 4096), -EIO);
	CU_ASSERT_EQUAL(dst[1], 0xee);
	CU_ASSERT_EQUAL(b->bounced, before + 4);
	drop(b, fd, path);
}

/* ---- data path (run synchronously and through the ring) ---- */

static void test_round_trip(void)
{
	static uint8_t src[16384], dst[20480], chk[16384];
	size_t wsplit[] = { 512, 1000, 24, 3560, 3096 }; /* 8192 */
	size_t rsplit[] = { 100, 4000, 12000 };		  /* more than 8192 */
	struct iovec wiov[5], riov[3];
	char path[64];
	size_t pos = 0;
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	b = open_file(path, 512);
	fill(src, sizeof(src), 1);
	for (int i = 0; i < 5; i++) {
		wiov[i] = (struct iovec){ src + pos, wsplit[i] };
		pos += wsplit[i];
	}
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE, false, 4096, 8192, wiov, 5), 0);
	/* The bytes really are in the file, and nothing around them. */
	CU_ASSERT_EQUAL(pread(fd, chk, 16384, 0), 16384);
	CU_ASSERT_TRUE(all_zero(chk, 4096));
	CU_ASSERT_EQUAL(memcmp(chk + 4096, src, 8192), 0);
	CU_ASSERT_TRUE(all_zero(chk + 12288, 4096));

	memset(dst, 0xee, sizeof(dst));
	pos = 0;
	for (int i = 0; i < 3; i++) {
		riov[i] = (struct iovec){ dst + pos, rsplit[i] };
		pos += rsplit[i];
	}
	CU_ASSERT_EQUAL(run(b, BDEV_OP_READ, false, 4096, 8192, riov, 3), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 8192), 0);
	CU_ASSERT_EQUAL(dst[8192], 0xee); /* only len bytes are moved */

	/* FUA write, then Flush; the data reads back through the backend and the fd. */
	CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE, true, 65536, 4096, &(struct iovec){ src, 4096 }, 1),
			0);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_FLUSH, false, 0, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 65536, dst, 4096), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 4096), 0);
	CU_ASSERT_EQUAL(pread(fd, chk, 4096, 65536), 4096);
	CU_ASSERT_EQUAL(memcmp(chk, src, 4096), 0);

	/* The last block, then past the end and misaligned. */
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, (1 << 20) - 512, src, 512), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, (1 << 20) - 512, dst, 512), 0);
	CU_ASSERT_EQUAL(memcmp(dst, src, 512), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 1 << 20, dst, 512), -ERANGE);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 100, dst, 512), -EINVAL);
	CU_ASSERT_EQUAL(run(b, BDEV_OP_READ, false, 0, 4096, &(struct iovec){ dst, 512 }, 1),
			-EINVAL);
	drop(b, fd, path);
}

static void test_block_4096(void)
{
	static uint8_t src[32768], dst[32768];
	char path[64];
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	b = open_file(path, 4096);
	fill(src, sizeof(src), 4);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 8192, src, sizeof(src)), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 8192, dst, sizeof(dst)), 0);
	CU_ASSERT_EQUAL(memcmp(src, dst, sizeof(src)), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 512, dst, 4096), -EINVAL);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 4096, dst, 512), -EINVAL);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, (1 << 20) - 4096, dst, 8192), -ERANGE);
	drop(b, fd, path);
}

struct zero_case {
	enum bdev_op op;
	uint64_t off, len;
	bool fua; /* then fdatasync before completion */
};

/* Zero @c's range of a fully written file and check every byte. */
static void check_zeroing(const char *dir, uint32_t bs, const struct zero_case *c)
{
	static uint8_t pat[262144], buf[262144];
	char path[64];
	struct bdev *b;
	int fd;

	fd = make_file(dir, sizeof(pat), path, sizeof(path));
	b = open_file(path, bs);
	fill(pat, sizeof(pat), (unsigned int)c->off);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 0, pat, sizeof(pat)), 0);
	CU_ASSERT_EQUAL(run(b, c->op, c->fua, c->off, c->len, NULL, 0), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(memcmp(buf, pat, c->off), 0);
	CU_ASSERT_TRUE(all_zero(buf + c->off, c->len));
	CU_ASSERT_EQUAL(memcmp(buf + c->off + c->len, pat + c->off + c->len,
			       sizeof(buf) - c->off - c->len), 0);
	/* The file keeps its size. */
	CU_ASSERT_EQUAL(lseek(fd, 0, SEEK_END), (off_t)sizeof(pat));
	drop(b, fd, path);
}

static const struct zero_case zero_cases[] = {
	{ BDEV_OP_DISCARD, 4096, 8192, false },	 /* punch whole file system blocks */
	{ BDEV_OP_DISCARD, 1536, 10240, false }, /* partial blocks at both ends */
	{ BDEV_OP_DISCARD, 0, 262144, false },
	{ BDEV_OP_WRITE_ZEROES, 512, 512, false },
	{ BDEV_OP_WRITE_ZEROES, 8192, 200704, false },
	{ BDEV_OP_WRITE_ZEROES, 4096, 4096, true },
	{ BDEV_OP_DISCARD, 4096, 65536, true },
};

static void test_discard_write_zeroes(void)
{
	for (size_t i = 0; i < sizeof(zero_cases) / sizeof(zero_cases[0]); i++)
		check_zeroing("/tmp", 512, &zero_cases[i]);
}

/* tmpfs cannot fallocate(ZERO_RANGE): Write Zeroes falls back to writing zeroes (more
 * than one 1 MiB chunk here). */
static void test_zero_fill_fallback(void)
{
	const struct zero_case big = { BDEV_OP_WRITE_ZEROES, 4096, 262144 - 8192, false };
	const struct zero_case big_fua = { BDEV_OP_WRITE_ZEROES, 512, 262144 - 1024, true };
	struct statfs sf;

	if (statfs("/dev/shm", &sf) || sf.f_type != TMPFS_MAGIC) {
		fprintf(stderr, "\n  /dev/shm is not tmpfs: fallback not exercised\n");
		return;
	}
	check_zeroing("/dev/shm", 512, &big);
	check_zeroing("/dev/shm", 512, &big_fua);
	check_zeroing("/dev/shm", 4096, &(struct zero_case){ BDEV_OP_DISCARD, 4096, 8192, false });
	{
		static uint8_t pat[3 << 20], buf[3 << 20];
		char path[64];
		struct bdev *b;
		int fd;

		fd = make_file("/dev/shm", sizeof(pat), path, sizeof(path));
		b = open_file(path, 4096);
		fill(pat, sizeof(pat), 9);
		CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 0, pat, sizeof(pat)), 0);
		CU_ASSERT_EQUAL(run(b, BDEV_OP_WRITE_ZEROES, false, 4096, sizeof(pat) - 8192,
				    NULL, 0), 0);
		CU_ASSERT_EQUAL(pread(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
		CU_ASSERT_EQUAL(memcmp(buf, pat, 4096), 0);
		CU_ASSERT_TRUE(all_zero(buf + 4096, sizeof(buf) - 8192));
		CU_ASSERT_EQUAL(memcmp(buf + sizeof(buf) - 4096, pat + sizeof(buf) - 4096, 4096),
				0);
		drop(b, fd, path);
	}
}

/* The file shrinks under the namespace: reads past its end fail, writes extend it. */
static void test_short_file(void)
{
	static uint8_t buf[8192];
	char path[64];
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", 65536, path, sizeof(path));
	b = open_file(path, 512);
	CU_ASSERT_EQUAL(b->size, 65536);
	CU_ASSERT_EQUAL(ftruncate(fd, 32768), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 28672, buf, 4096), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 32768, buf, 4096), -EIO);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 28672, buf, 8192), -EIO); /* short, then EOF */
	fill(buf, sizeof(buf), 2);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 57344, buf, 8192), 0);
	CU_ASSERT_EQUAL(lseek(fd, 0, SEEK_END), 65536);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 32768, buf, 4096), 0);
	CU_ASSERT_TRUE(all_zero(buf, 4096));
	drop(b, fd, path);
}

struct run_want {
	uint64_t off;
	bool dealloc;
	uint64_t len;
};

static void test_lba_status(void)
{
	static uint8_t buf[65536];
	char path[64];
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	b = open_file(path, 512);
	{
		uint64_t len = 0;
		bool dealloc = false;

		CU_ASSERT_EQUAL(bdev_lba_status(b, 0, &len, &dealloc), 0);
		CU_ASSERT_TRUE(dealloc);
		CU_ASSERT_EQUAL(len, 1 << 20);
	}
	fill(buf, sizeof(buf), 6);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 65536, buf, 65536), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 1032192, buf, 16384), 0); /* the last 16 KiB */
	CU_ASSERT_EQUAL(run(b, BDEV_OP_DISCARD, false, 81920, 8192, NULL, 0), 0);
	CU_ASSERT_EQUAL(fsync(fd), 0); /* settle delayed allocation before SEEK_DATA */
	{
		const struct run_want w[] = {
			{ 0, true, 65536 },	  { 4096, true, 61440 },    { 65536, false, 16384 },
			{ 66048, false, 15872 },  { 81920, true, 8192 },    { 90112, false, 40960 },
			{ 131072, true, 1032192 - 131072 },
			{ 1032192, false, 16384 },
			{ (1 << 20) - 512, false, 512 },
		};

		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
			uint64_t len = 0;
			bool dealloc = !w[i].dealloc;

			CU_ASSERT_EQUAL(bdev_lba_status(b, w[i].off, &len, &dealloc), 0);
			if (dealloc != w[i].dealloc || len != w[i].len)
				fprintf(stderr, "\n  at %llu: dealloc %d len %llu, want %d %llu\n",
					(unsigned long long)w[i].off, dealloc,
					(unsigned long long)len, w[i].dealloc,
					(unsigned long long)w[i].len);
			CU_ASSERT_EQUAL(dealloc, w[i].dealloc);
			CU_ASSERT_EQUAL(len, w[i].len);
		}
	}
	{
		uint64_t len;
		bool dealloc;

		CU_ASSERT_EQUAL(bdev_lba_status(b, 1 << 20, &len, &dealloc), -ERANGE);
		/* After the file shrinks, its tail reads as deallocated. */
		CU_ASSERT_EQUAL(ftruncate(fd, 98304), 0);
		CU_ASSERT_EQUAL(bdev_lba_status(b, 131072, &len, &dealloc), 0);
		CU_ASSERT_TRUE(dealloc);
		CU_ASSERT_EQUAL(len, (1 << 20) - 131072);
	}
	drop(b, fd, path);
}

/* ---- ring-only behaviour ---- */

#define NMANY 2000

/* Far more requests than the ring holds at once: all complete, none lost, data right. */
static void test_ring_many(void)
{
	static struct bdev_io ios[NMANY];
	static struct iovec iovs[NMANY];
	static uint8_t data[NMANY][512], back[NMANY][512];
	struct waiter w = { 0 };
	char path[64];
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", NMANY * 512, path, sizeof(path));
	b = open_file(path, 512);
	for (int pass = 0; pass < 2; pass++) {
		memset(&w, 0, sizeof(w));
		for (int i = 0; i < NMANY; i++) {
			if (pass == 0)
				fill(data[i], 512, (unsigned int)i);
			iovs[i] = (struct iovec){ pass ? back[i] : data[i], 512 };
			ios[i] = (struct bdev_io){
				.op = pass ? BDEV_OP_READ : BDEV_OP_WRITE,
				/* Scattered order: neighbours are not submitted together. */
				.offset = (uint64_t)((i * 7) % NMANY) * 512,
				.len = 512, .iov = &iovs[i], .iovcnt = 1,
				.cb = wait_cb, .cb_arg = &w,
			};
			bdev_submit(b, &ios[i]);
		}
		CU_ASSERT_EQUAL(w.done, 0);
		CU_ASSERT_EQUAL(bdev_file_pending(), NMANY);
		loop_until(&w.done, NMANY);
		CU_ASSERT_EQUAL(w.status, 0);
		CU_ASSERT_EQUAL(bdev_file_pending(), 0);
	}
	for (int i = 0; i < NMANY; i++)
		CU_ASSERT_EQUAL(memcmp(data[i], back[i], 512), 0);
	drop(b, fd, path);
}

/* Detaching waits for what is in flight and runs the callbacks. */
static void test_ring_detach_drains(void)
{
	static uint8_t buf[8][4096];
	struct bdev_io ios[8];
	struct iovec iov[8];
	struct waiter w = { 0 };
	char path[64];
	struct bdev *b;
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	b = open_file(path, 512);
	for (int i = 0; i < 8; i++) {
		fill(buf[i], 4096, (unsigned int)i);
		iov[i] = (struct iovec){ buf[i], 4096 };
		ios[i] = (struct bdev_io){ .op = BDEV_OP_WRITE, .offset = (uint64_t)i * 4096,
					   .len = 4096, .iov = &iov[i], .iovcnt = 1,
					   .cb = wait_cb, .cb_arg = &w };
		bdev_submit(b, &ios[i]);
	}
	CU_ASSERT_EQUAL(w.done, 0);
	bdev_file_detach_loop();
	CU_ASSERT_EQUAL(w.done, 8);
	CU_ASSERT_EQUAL(w.status, 0);
	CU_ASSERT_EQUAL(bdev_file_pending(), 0);
	for (int i = 0; i < 8; i++) {
		uint8_t chk[4096];

		CU_ASSERT_EQUAL(pread(fd, chk, 4096, i * 4096), 4096);
		CU_ASSERT_EQUAL(memcmp(chk, buf[i], 4096), 0);
	}
	/* Attach again for the rest of the suite; a second attach is refused. */
	CU_ASSERT_EQUAL(bdev_file_attach_loop(g_loop), 0);
	CU_ASSERT_EQUAL(bdev_file_attach_loop(g_loop), -EBUSY);
	drop(b, fd, path);
}

/* A request issued from another prepare watcher (like a reactor's deferred work) is
 * submitted before the loop sleeps, not after some unrelated wakeup. Runs on a fresh
 * thread with its own loop and ring, so no leftover io_uring task work interrupts the
 * wait and hides a missed submission. */
struct prep_job {
	ev_prepare w;
	struct bdev *bdev;
	struct bdev_io io;
	struct iovec iov;
	struct waiter wt;
	uint8_t buf[4096];
	bool timed_out;
	unsigned int iterations;
	int attach_rc;
};

static void prep_submit_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct prep_job *j = w->data;

	ev_prepare_stop(loop, w);
	bdev_submit(j->bdev, &j->io);
}

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	*(bool *)w->data = true;
}

static void *prep_thread(void *arg)
{
	struct prep_job *j = arg;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	ev_timer guard;

	j->attach_rc = bdev_file_attach_loop(loop);
	if (j->attach_rc)
		return NULL;
	ev_timer_init(&guard, timeout_cb, 2.0, 0);
	guard.data = &j->timed_out;
	ev_timer_start(loop, &guard);
	for (int i = 0; i < 3; i++)
		ev_run(loop, EVRUN_NOWAIT);
	ev_prepare_init(&j->w, prep_submit_cb);
	j->w.data = j;
	ev_prepare_start(loop, &j->w);
	while (!j->wt.done && !j->timed_out) {
		ev_run(loop, EVRUN_ONCE);
		j->iterations++;
	}
	ev_timer_stop(loop, &guard);
	bdev_file_detach_loop();
	ev_loop_destroy(loop);
	return NULL;
}

static void test_ring_submit_from_prepare(void)
{
	static struct prep_job j;
	char path[64];
	pthread_t t;
	int fd;

	fd = make_file("/tmp", 1 << 20, path, sizeof(path));
	memset(&j, 0, sizeof(j));
	j.bdev = open_file(path, 512);
	j.iov = (struct iovec){ j.buf, sizeof(j.buf) };
	j.io = (struct bdev_io){ .op = BDEV_OP_READ, .offset = 8192, .len = 4096, .iov = &j.iov,
				 .iovcnt = 1, .cb = wait_cb, .cb_arg = &j.wt };
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, prep_thread, &j), 0);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(j.attach_rc, 0);
	CU_ASSERT_FALSE(j.timed_out);
	CU_ASSERT_EQUAL(j.iterations, 1);
	CU_ASSERT_EQUAL(j.wt.done, 1);
	CU_ASSERT_EQUAL(j.wt.status, 0);
	drop(j.bdev, fd, path);
}

/* ---- real reactors ---- */

#define RPER 64

struct reactor_job {
	struct bdev *bdev;
	unsigned int idx;
	struct bdev_io ios[RPER];
	struct iovec iov[RPER];
	uint8_t data[RPER][4096];
	uint8_t back[RPER][4096];
	int done;
	int errors;
	bool inline_cb;
	bool on_reactor;
	bool submitting;
	struct reactor *r;
	sem_t *sem;
};

static void job_read_cb(struct bdev_io *io, int status)
{
	struct reactor_job *j = io->cb_arg;

	j->inline_cb |= j->submitting;
	j->on_reactor &= reactor_self() == j->r;
	j->errors += status != 0;
	if (++j->done == 2 * RPER)
		sem_post(j->sem);
}

static void job_write_cb(struct bdev_io *io, int status)
{
	struct reactor_job *j = io->cb_arg;
	int i = (int)(io - j->ios);

	j->inline_cb |= j->submitting;
	j->on_reactor &= reactor_self() == j->r;
	j->errors += status != 0;
	j->done++;
	/* Read the block back from the write's callback, on the same reactor. */
	j->iov[i] = (struct iovec){ j->back[i], 4096 };
	io->op = BDEV_OP_READ;
	io->cb = job_read_cb;
	j->submitting = true;
	bdev_submit(j->bdev, io);
	j->submitting = false;
}

static void job_start(void *arg)
{
	struct reactor_job *j = arg;

	j->r = reactor_self();
	j->on_reactor = j->r != NULL;
	j->submitting = true;
	for (int i = 0; i < RPER; i++) {
		fill(j->data[i], 4096, j->idx * RPER + (unsigned int)i);
		j->iov[i] = (struct iovec){ j->data[i], 4096 };
		j->ios[i] = (struct bdev_io){
			.op = BDEV_OP_WRITE, .fua = i % 2, .reactor = j->r,
			.offset = ((uint64_t)j->idx * RPER + (uint64_t)i) * 4096, .len = 4096,
			.iov = &j->iov[i], .iovcnt = 1, .cb = job_write_cb, .cb_arg = j,
		};
		bdev_submit(j->bdev, &j->ios[i]);
	}
	j->submitting = false;
}

static void test_reactors(void)
{
	static struct reactor_job jobs[2];
	char path[64];
	struct bdev *b;
	sem_t sem;
	int fd;

	sem_init(&sem, 0, 0);
	fd = make_file("/tmp", 2 * RPER * 4096, path, sizeof(path));
	b = open_file(path, 4096);
	CU_ASSERT_EQUAL_FATAL(reactors_start(2), 0);
	for (unsigned int i = 0; i < 2; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].bdev = b;
		jobs[i].idx = i;
		jobs[i].sem = &sem;
		CU_ASSERT_EQUAL_FATAL(reactor_send_msg(reactor_get(i), job_start, &jobs[i]), 0);
	}
	sem_wait(&sem);
	sem_wait(&sem);
	for (unsigned int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(jobs[i].done, 2 * RPER);
		CU_ASSERT_EQUAL(jobs[i].errors, 0);
		CU_ASSERT_FALSE(jobs[i].inline_cb);
		CU_ASSERT_TRUE(jobs[i].on_reactor);
		for (int k = 0; k < RPER; k++)
			CU_ASSERT_EQUAL(memcmp(jobs[i].data[k], jobs[i].back[k], 4096), 0);
	}
	/* Exit hooks close each reactor's ring. */
	reactors_stop();
	drop(b, fd, path);
	sem_destroy(&sem);
}

/* ---- suites ---- */

static int sync_init(void)
{
	g_async = false;
	return 0;
}

static int ring_init(void)
{
	g_loop = ev_loop_new(EVFLAG_AUTO);
	if (!g_loop || bdev_file_attach_loop(g_loop))
		return 1;
	g_async = true;
	return 0;
}

static int ring_fini(void)
{
	bdev_file_detach_loop();
	ev_loop_destroy(g_loop);
	g_loop = NULL;
	g_async = false;
	return 0;
}

static void add_data_tests(CU_pSuite s)
{
	CU_add_test(s, "multi-iovec round trip, FUA, flush", test_round_trip);
	CU_add_test(s, "4096-byte blocks", test_block_4096);
	CU_add_test(s, "discard and write zeroes", test_discard_write_zeroes);
	CU_add_test(s, "zero-fill fallback on tmpfs", test_zero_fill_fallback);
	CU_add_test(s, "file shorter than the namespace", test_short_file);
	CU_add_test(s, "lba_status from SEEK_DATA/SEEK_HOLE", test_lba_status);
	CU_add_test(s, "O_DIRECT: misaligned buffers bounced, aligned not", test_bounce);
}

int main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("bdev_file", NULL, NULL);
	CU_add_test(s, "geometry, canonical path, open errors", test_geometry);
	CU_add_test(s, "O_DIRECT alignment decisions", test_dio_aligned);
	CU_add_test(s, "O_DIRECT by default, buffered_io on request", test_dio_open);
	s = CU_add_suite("bdev_file off-reactor (synchronous)", sync_init, NULL);
	add_data_tests(s);
	s = CU_add_suite("bdev_file io_uring on a libev loop", ring_init, ring_fini);
	add_data_tests(s);
	CU_add_test(s, "thousands in flight", test_ring_many);
	CU_add_test(s, "detach drains", test_ring_detach_drains);
	CU_add_test(s, "submitted from another prepare watcher", test_ring_submit_from_prepare);
	s = CU_add_suite("bdev_file on reactors", NULL, NULL);
	CU_add_test(s, "write then read back from callbacks", test_reactors);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
