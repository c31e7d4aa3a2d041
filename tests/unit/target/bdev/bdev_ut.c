/* SPDX-License-Identifier: MIT */
/* Backend dispatch: size parsing, spec dispatch and open errors, request checks. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdev/bdev.h"
#include "bdev/bdev_internal.h"
#include "reactor/reactor.h"
#include "ut.h"

#include <pthread.h>
#include <semaphore.h>

/* ---- bdev_parse_size ---- */

static const struct {
	const char *s;
	int rc;
	uint64_t bytes;
} size_cases[] = {
	{ "4096", 0, 4096 },
	{ "1", 0, 1 },
	{ "1K", 0, 1024 },
	{ "1k", 0, 1024 },
	{ "512M", 0, 512ull << 20 },
	{ "1G", 0, 1ull << 30 },
	{ "1g", 0, 1ull << 30 },
	{ "1GiB", 0, 1ull << 30 },
	{ "1GB", 0, 1ull << 30 },
	{ "3T", 0, 3ull << 40 },
	{ "16777215T", 0, 16777215ull << 40 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16777216T", -EINVAL, 0 },		/* 2^64: overflow in the shift */
	{ "18446744073709551616", -EINVAL, 0 }, /* overflow in the digits */
	{ "99999999999999999999999", -EINVAL, 0 },
	{ "0", -EINVAL, 0 },
	{ "0G", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "G", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "1P", -EINVAL, 0 },
	{ "1GG", -EINVAL, 0 },
	{ "1Gi", -EINVAL, 0 },
	{ "1Gx", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "12abc", -EINVAL, 0 },
};

static void test_parse_size(void)
{
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		uint64_t v = 12345;
		int rc = bdev_parse_size(size_cases[i].s, &v);

		if (rc != size_cases[i].rc)
			fprintf(stderr, "\n  \"%s\": rc %d, want %d\n", size_cases[i].s, rc,
				size_cases[i].rc);
		CU_ASSERT_EQUAL(rc, size_cases[i].rc);
		CU_ASSERT_EQUAL(v, rc ? 12345 : size_cases[i].bytes);
	}
	CU_ASSERT_EQUAL(bdev_parse_size(NULL, &(uint64_t){ 0 }), -EINVAL);
}

/* ---- bdev_open dispatch and errors ---- */

static const struct {
	const char *spec;
	uint32_t block_size;
	int rc;
	const char *backend;
	uint64_t size;
	uint32_t bs;
	const char *msg; /* substring of the error */
} open_cases[] = {
	{ "ram:1M", 0, 0, "ram", 1 << 20, 512, NULL },
	{ "ram:64K", 4096, 0, "ram", 64 << 10, 4096, NULL },
	{ "ram:1536", 512, 0, "ram", 1536, 512, NULL },
	{ "null:1G", 0, 0, "null", 1ull << 30, 512, NULL },
	{ "null:2T", 4096, 0, "null", 2ull << 40, 4096, NULL },
	{ "ram:1000", 512, -EINVAL, NULL, 0, 0, "not a multiple of the 512-byte block size" },
	{ "ram:6K", 4096, -EINVAL, NULL, 0, 0, "not a multiple of the 4096-byte" },
	{ "null:100", 0, -EINVAL, NULL, 0, 0, "not a multiple" },
	{ "ram:", 0, -EINVAL, NULL, 0, 0, "bad size \"\"" },
	{ "ram:0", 0, -EINVAL, NULL, 0, 0, "bad size \"0\"" },
	{ "ram:1X", 0, -EINVAL, NULL, 0, 0, "bad size" },
	{ "null:-4096", 0, -EINVAL, NULL, 0, 0, "bad size" },
	{ "ram:1M", 1024, -EINVAL, NULL, 0, 0, "block size 1024 is not supported (512 or 4096)" },
	{ "ram:1M", 520, -EINVAL, NULL, 0, 0, "block size 520" },
	{ "", 0, -EINVAL, NULL, 0, 0, "empty namespace spec" },
	{ "/nonexistent/dir/ns.img", 0, -ENOENT, NULL, 0, 0, "cannot open" },
	{ "/tmp", 0, -EISDIR, NULL, 0, 0, "/tmp" },
	{ "/dev/null", 0, -EINVAL, NULL, 0, 0, "not a regular file or block device" },
};

static void test_open_dispatch(void)
{
	for (size_t i = 0; i < sizeof(open_cases) / sizeof(open_cases[0]); i++) {
		struct bdev *b = (struct bdev *)0x1;
		char err[256] = "";
		int rc = bdev_open(open_cases[i].spec, open_cases[i].block_size, &b, err,
				   sizeof(err));

		if (rc != open_cases[i].rc)
			fprintf(stderr, "\n  \"%s\"/%u: rc %d (%s), want %d\n", open_cases[i].spec,
				open_cases[i].block_size, rc, err, open_cases[i].rc);
		CU_ASSERT_EQUAL(rc, open_cases[i].rc);
		if (rc) {
			CU_ASSERT_PTR_NULL(b);
			CU_ASSERT_PTR_NOT_NULL(strstr(err, open_cases[i].msg));
			continue;
		}
		CU_ASSERT_FATAL(b != NULL);
		CU_ASSERT_STRING_EQUAL(b->ops->name, open_cases[i].backend);
		CU_ASSERT_STRING_EQUAL(b->spec, open_cases[i].spec);
		CU_ASSERT_EQUAL(b->size, open_cases[i].size);
		CU_ASSERT_EQUAL(b->block_size, open_cases[i].bs);
		CU_ASSERT_STRING_EQUAL(b->path, "");
		CU_ASSERT_FALSE(b->volatile_cache);
		CU_ASSERT_FALSE(b->persistent);
		bdev_close(b);
	}
	/* The error buffer is optional. */
	CU_ASSERT_EQUAL(bdev_open("ram:0", 0, &(struct bdev *){ NULL }, NULL, 0), -EINVAL);
	bdev_close(NULL);
}

/* A spec that is not "ram:"/"null:" is a path, even one that looks like a size. */
static void test_open_path_dispatch(void)
{
	char dir[] = "/tmp/bdev_ut.XXXXXX";
	char path[64], spec_rel[64], cwd[4096];
	struct bdev *b = NULL;
	char err[256];
	FILE *f;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/ram:1M", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(ftruncate(fileno(f), 8192), 0);
	fclose(f);
	CU_ASSERT_EQUAL(bdev_open(path, 0, &b, err, sizeof(err)), 0);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_STRING_EQUAL(b->ops->name, "file");
	CU_ASSERT_EQUAL(b->size, 8192);
	CU_ASSERT_STRING_EQUAL(b->path, path);
	bdev_close(b);

	/* A relative path is reported canonical. */
	CU_ASSERT_FATAL(getcwd(cwd, sizeof(cwd)) != NULL);
	CU_ASSERT_EQUAL_FATAL(chdir(dir), 0);
	snprintf(spec_rel, sizeof(spec_rel), "./../%s/ram:1M", strrchr(dir, '/') + 1);
	CU_ASSERT_EQUAL(bdev_open(spec_rel, 4096, &b, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(chdir(cwd), 0);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_STRING_EQUAL(b->spec, spec_rel);
	CU_ASSERT_STRING_EQUAL(b->path, path);
	CU_ASSERT_EQUAL(b->block_size, 4096);
	bdev_close(b);
	unlink(path);
	rmdir(dir);
}

/* ---- request checks (bdev_io_check, through the null backend) ---- */

static int last_status;
static int ncb;

static void count_cb(struct bdev_io *io, int status)
{
	last_status = status;
	ncb++;
}

static const struct {
	enum bdev_op op;
	uint64_t offset, len;
	size_t iov_bytes; /* in two iovecs */
	int status;
} check_cases[] = {
	{ BDEV_OP_READ, 0, 4096, 4096, 0 },
	{ BDEV_OP_READ, 0, 4096, 8192, 0 },	  /* more buffer than needed */
	{ BDEV_OP_READ, 0, 4096, 4000, -EINVAL }, /* not enough buffer */
	{ BDEV_OP_WRITE, 512, 512, 512, 0 },
	{ BDEV_OP_WRITE, 100, 512, 512, -EINVAL }, /* misaligned offset */
	{ BDEV_OP_WRITE, 0, 100, 512, -EINVAL },   /* partial block */
	{ BDEV_OP_READ, 1 << 20, 512, 512, -ERANGE },
	{ BDEV_OP_READ, (1 << 20) - 512, 1024, 1024, -ERANGE },
	{ BDEV_OP_READ, (1 << 20) - 512, 512, 512, 0 },
	{ BDEV_OP_READ, UINT64_MAX - 511, 1024, 1024, -ERANGE },
	{ BDEV_OP_READ, (1 << 20) - 512, UINT64_MAX - 511, 1024, -ERANGE },
	{ BDEV_OP_WRITE_ZEROES, 0, 1 << 20, 0, 0 },
	{ BDEV_OP_WRITE_ZEROES, 512, 1 << 20, 0, -ERANGE },
	{ BDEV_OP_DISCARD, 4096, 8192, 0, 0 },
	{ BDEV_OP_DISCARD, 4096, 1000, 0, -EINVAL },
	{ BDEV_OP_FLUSH, 0, 0, 0, 0 },
	{ BDEV_OP_FLUSH, 12345, 99, 0, 0 }, /* offset/len unused */
	{ (enum bdev_op)42, 0, 512, 0, -EINVAL },
};

static void test_io_check(void)
{
	static uint8_t buf[8192];
	struct bdev *b = NULL;

	CU_ASSERT_EQUAL_FATAL(bdev_open("null:1M", 512, &b, NULL, 0), 0);
	for (size_t i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		size_t half = check_cases[i].iov_bytes / 2;
		struct iovec iov[2] = {
			{ buf, half },
			{ buf + half, check_cases[i].iov_bytes - half },
		};
		struct bdev_io io = {
			.op = check_cases[i].op,
			.offset = check_cases[i].offset,
			.len = check_cases[i].len,
			.iov = iov,
			.iovcnt = check_cases[i].iov_bytes ? 2 : 0,
			.cb = count_cb,
		};

		ncb = 0;
		last_status = 1;
		bdev_submit(b, &io);
		if (last_status != check_cases[i].status)
			fprintf(stderr, "\n  case %zu: status %d, want %d\n", i, last_status,
				check_cases[i].status);
		CU_ASSERT_EQUAL(ncb, 1);
		CU_ASSERT_EQUAL(last_status, check_cases[i].status);
	}
	bdev_close(b);
}

static void test_lba_status_dispatch(void)
{
	struct bdev *b = NULL;
	uint64_t len = 0;
	bool dealloc = false;

	CU_ASSERT_EQUAL_FATAL(bdev_open("null:1M", 0, &b, NULL, 0), 0);
	CU_ASSERT_EQUAL(bdev_lba_status(b, 0, &len, &dealloc), -EOPNOTSUPP);
	bdev_close(b);
	CU_ASSERT_EQUAL_FATAL(bdev_open("ram:1M", 0, &b, NULL, 0), 0);
	CU_ASSERT_EQUAL(bdev_lba_status(b, 0, &len, &dealloc), 0);
	CU_ASSERT_EQUAL(len, 1 << 20);
	CU_ASSERT_TRUE(dealloc);
	CU_ASSERT_EQUAL(bdev_lba_status(b, 1 << 20, &len, &dealloc), -ERANGE);
	CU_ASSERT_EQUAL(bdev_lba_status(b, 100, &len, &dealloc), -ERANGE);
	bdev_close(b);
}

/* ---- bdev_lba_query: where the lookups and the callback run ---- */

/* A backend whose lookups say where they ran: 4 KiB runs, alternating state. */
static struct {
	bool blocks;
	unsigned int calls, on_reactor;
} slow;

static int slow_lba_status(struct bdev *b, uint64_t offset, uint64_t *len, bool *dealloc)
{
	(void)b;
	__atomic_add_fetch(&slow.calls, 1, __ATOMIC_SEQ_CST);
	if (reactor_self())
		__atomic_add_fetch(&slow.on_reactor, 1, __ATOMIC_SEQ_CST);
	*len = 4096;
	*dealloc = (offset / 4096) % 2;
	return 0;
}

struct query_job {
	struct bdev *bdev;
	struct bdev_lba_query q;
	struct bdev_lba_extent ext[8];
	struct reactor *submitted_on, *completed_on;
	bool returned, inline_cb;
	int status;
	sem_t *sem;
};

static void query_cb(struct bdev_lba_query *q, int status)
{
	struct query_job *j = q->cb_arg;

	j->completed_on = reactor_self();
	j->inline_cb = !j->returned;
	j->status = status;
	sem_post(j->sem);
}

static void query_start(void *arg)
{
	struct query_job *j = arg;

	j->submitted_on = reactor_self();
	j->q = (struct bdev_lba_query){
		.offset = 4096, .end = 6 * 4096, .ext = j->ext, .max = 8, .cb = query_cb, .cb_arg = j
	};
	j->returned = false;
	bdev_lba_query(j->bdev, &j->q);
	j->returned = true;
}

static void test_lba_query_threads(void)
{
	static struct bdev_ops slow_ops = { .name = "slow", .lba_status = slow_lba_status };
	struct bdev b = { .ops = &slow_ops, .size = 1 << 20, .block_size = 512 };
	struct query_job j = { .bdev = &b };
	sem_t sem;

	sem_init(&sem, 0, 0);
	j.sem = &sem;
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	for (int blocks = 0; blocks < 2; blocks++) {
		slow_ops.lba_status_blocks = blocks;
		memset(&slow, 0, sizeof(slow));
		CU_ASSERT_EQUAL_FATAL(reactor_send_msg(reactor_get(0), query_start, &j), 0);
		sem_wait(&sem);
		CU_ASSERT_EQUAL(j.status, 0);
		CU_ASSERT_EQUAL(j.q.n, 5); /* 4 KiB runs from 4 KiB to 24 KiB */
		CU_ASSERT_EQUAL(j.ext[0].offset, 4096);
		CU_ASSERT_TRUE(j.ext[0].deallocated);
		CU_ASSERT_FALSE(j.ext[1].deallocated);
		CU_ASSERT_EQUAL(j.ext[4].offset + j.ext[4].len, 6 * 4096);
		CU_ASSERT_EQUAL(slow.calls, 5);
		/* the callback always runs on the submitting reactor */
		CU_ASSERT_PTR_NOT_NULL(j.submitted_on);
		CU_ASSERT_PTR_EQUAL(j.completed_on, j.submitted_on);
		if (blocks) {
			/* lookups that may block never run on the reactor */
			CU_ASSERT_EQUAL(slow.on_reactor, 0);
			CU_ASSERT_FALSE(j.inline_cb);
		} else {
			CU_ASSERT_EQUAL(slow.on_reactor, 5); /* in memory: inline */
			CU_ASSERT_TRUE(j.inline_cb);
		}
	}
	reactors_stop();
	/* off a reactor: inline; a run clipped at q->end; errors */
	slow_ops.lba_status_blocks = true;
	j.returned = false;
	j.q = (struct bdev_lba_query){
		.offset = 0, .end = 6144, .ext = j.ext, .max = 8, .cb = query_cb, .cb_arg = &j
	};
	bdev_lba_query(&b, &j.q);
	sem_wait(&sem);
	CU_ASSERT_TRUE(j.inline_cb);
	CU_ASSERT_EQUAL(j.status, 0);
	CU_ASSERT_EQUAL(j.q.n, 2);
	CU_ASSERT_EQUAL(j.ext[1].len, 2048);
	CU_ASSERT_EQUAL(bdev_lba_query_run(&b, &(struct bdev_lba_query){ .offset = 0,
									 .end = 2 << 20,
									 .ext = j.ext,
									 .max = 8 }),
			-ERANGE);
	slow_ops.lba_status = NULL;
	j.q.offset = 0;
	bdev_lba_query(&b, &j.q);
	sem_wait(&sem);
	CU_ASSERT_EQUAL(j.status, -EOPNOTSUPP);
	sem_destroy(&sem);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "parse size", test_parse_size },
		{ "open: dispatch and errors", test_open_dispatch },
		{ "open: anything else is a path", test_open_path_dispatch },
		{ "request checks", test_io_check },
		{ "lba_status dispatch", test_lba_status_dispatch },
		{ "lba query: helper thread for blocking lookups", test_lba_query_threads },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bdev", NULL, NULL, tests);
}
