/* SPDX-License-Identifier: MIT */
/*
 * The rbd backend against a fake librbd (the table in bdev_rbd_internal.h): the spec
 * parser, open and its errors, the identity, how each request becomes library calls
 * (iovecs passed through, discard split at object boundaries, compare-and-write in
 * 512-byte sectors, mismatch offsets, error codes), completions delivered on the
 * submitting reactor through its eventfd (never inside bdev_submit), the bounce-slot
 * queue, and resize reporting.
 *
 * The fake keeps the image in memory and behaves as librbd 16.2 was measured to
 * (tests/ceph/README.md): a discard of part of an object does nothing, compare-and-write
 * takes exactly one 512-byte sector. It completes each call either at once on the
 * calling thread or later from a thread of its own, as librbd does.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdev/bdev.h"
#include "bdev/bdev_internal.h"
#include "bdev/bdev_rbd_internal.h"
#include "reactor/reactor.h"
#include "ut.h"

#define IMG_SIZE (16u << 20)
#define OBJ_SIZE (4u << 20)

/* ---- the fake library ---- */

enum fop { F_READ, F_WRITE, F_FLUSH, F_DISCARD, F_WZ, F_CAW };

struct fcall {
	enum fop op;
	uint64_t off, len;
	const struct iovec *iov;
	int iovcnt;
	bool thick;
	const void *cmp, *buf;
	uint64_t *mismatch;
	void *arg;
};

#define MAX_CALLS 4096

static struct {
	pthread_mutex_t lock;
	uint8_t *img;
	uint64_t size;
	uint64_t stripes;
	struct fcall calls[MAX_CALLS];
	unsigned int ncalls;
	bool deferred; /* queue completions for complete_deferred() */
	struct fcall pending[MAX_CALLS];
	unsigned int npending;
	int refuse;          /* next aio call returns this (0: none) */
	int64_t fail_result; /* complete the next call with this (0: none) */
	int connect_rc, open_rc;
	void (*watch_cb)(void *);
	void *watch_arg;
	bool closed, shut;
} fk = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int f_connect(const struct rbd_spec *spec, void **cluster, char *err, size_t errlen)
{
	if (fk.connect_rc) {
		snprintf(err, errlen, "cannot connect to the cluster as client.%s", spec->id);
		return fk.connect_rc;
	}
	*cluster = &fk;
	return 0;
}

static void f_shutdown(void *c)
{
	fk.shut = true;
}

static int f_open(void *c, const struct rbd_spec *spec, void **image, char *err, size_t el)
{
	if (fk.open_rc) {
		snprintf(err, el, "image %s in pool %s: %s", spec->image, spec->pool,
			 strerror(-fk.open_rc));
		return fk.open_rc;
	}
	*image = &fk;
	return 0;
}

static void f_close(void *image)
{
	fk.closed = true;
}

static int f_get_size(void *image, uint64_t *size)
{
	pthread_mutex_lock(&fk.lock);
	*size = fk.size;
	pthread_mutex_unlock(&fk.lock);
	return 0;
}

static int f_get_id(void *image, char *buf, size_t len)
{
	snprintf(buf, len, "10a2b3c4d5e6");
	return 0;
}

static int64_t f_pool_id(void *image)
{
	return 2;
}

static int f_fsid(void *c, char *buf, size_t len)
{
	snprintf(buf, len, "8e2a1d9c-0000-4000-8000-00000000c3f1");
	return 0;
}

static int f_layout(void *image, uint64_t *obj, uint64_t *stripes)
{
	*obj = OBJ_SIZE;
	*stripes = fk.stripes;
	return 0;
}

/* Carry out @c on the in-memory image; the value librbd would complete it with. */
static int64_t f_exec(const struct fcall *c)
{
	uint64_t off = c->off, done = 0;
	int i;

	switch (c->op) {
	case F_READ:
	case F_WRITE:
		for (i = 0; i < c->iovcnt; i++) {
			if (!c->iov[i].iov_len)
				continue; /* an empty iovec may have no base */
			if (off + c->iov[i].iov_len > fk.size)
				return -EINVAL;
			if (c->op == F_READ)
				memcpy(c->iov[i].iov_base, fk.img + off, c->iov[i].iov_len);
			else
				memcpy(fk.img + off, c->iov[i].iov_base, c->iov[i].iov_len);
			off += c->iov[i].iov_len;
			done += c->iov[i].iov_len;
		}
		return c->op == F_READ ? (int64_t)done : 0;
	case F_FLUSH:
		return 0;
	case F_DISCARD:
		/* librbd skips what does not cover a whole object */
		for (uint64_t o = (off + OBJ_SIZE - 1) / OBJ_SIZE * OBJ_SIZE;
		     o + OBJ_SIZE <= off + c->len; o += OBJ_SIZE)
			memset(fk.img + o, 0, OBJ_SIZE);
		return 0;
	case F_WZ:
		memset(fk.img + off, 0, c->len);
		return 0;
	case F_CAW:
		if (c->len != 512)
			return -EINVAL;
		for (i = 0; i < 512; i++)
			if (fk.img[off + (unsigned)i] != ((const uint8_t *)c->cmp)[i]) {
				*c->mismatch = off + (unsigned)i;
				return -EILSEQ;
			}
		memcpy(fk.img + off, c->buf, 512);
		return 0;
	}
	return -EINVAL;
}

static int f_call(struct fcall c)
{
	int64_t res;

	pthread_mutex_lock(&fk.lock);
	if (fk.refuse) {
		int rc = fk.refuse;

		fk.refuse = 0;
		pthread_mutex_unlock(&fk.lock);
		return rc;
	}
	if (fk.ncalls < MAX_CALLS)
		fk.calls[fk.ncalls++] = c;
	if (fk.deferred) {
		fk.pending[fk.npending++] = c;
		pthread_mutex_unlock(&fk.lock);
		return 0;
	}
	res = fk.fail_result ? fk.fail_result : f_exec(&c);
	fk.fail_result = 0;
	pthread_mutex_unlock(&fk.lock);
	bdev_rbd_aio_done(c.arg, res); /* on the caller's thread, inside the call */
	return 0;
}

static int f_readv(void *im, const struct iovec *iov, int n, uint64_t off, void *arg)
{
	return f_call(
		(struct fcall){ .op = F_READ, .off = off, .iov = iov, .iovcnt = n, .arg = arg });
}

static int f_writev(void *im, const struct iovec *iov, int n, uint64_t off, void *arg)
{
	return f_call(
		(struct fcall){ .op = F_WRITE, .off = off, .iov = iov, .iovcnt = n, .arg = arg });
}

static int f_flush(void *im, void *arg)
{
	return f_call((struct fcall){ .op = F_FLUSH, .arg = arg });
}

static int f_discard(void *im, uint64_t off, uint64_t len, void *arg)
{
	return f_call((struct fcall){ .op = F_DISCARD, .off = off, .len = len, .arg = arg });
}

static int f_wz(void *im, uint64_t off, uint64_t len, bool thick, void *arg)
{
	return f_call(
		(struct fcall){ .op = F_WZ, .off = off, .len = len, .thick = thick, .arg = arg });
}

static int f_caw(void *im, uint64_t off, size_t len, const void *cmp, const void *buf,
		 uint64_t *mismatch, void *arg)
{
	return f_call((struct fcall){ .op = F_CAW,
				      .off = off,
				      .len = len,
				      .cmp = cmp,
				      .buf = buf,
				      .mismatch = mismatch,
				      .arg = arg });
}

static int f_watch(void *im, void (*cb)(void *), void *arg, uint64_t *handle)
{
	fk.watch_cb = cb;
	fk.watch_arg = arg;
	*handle = 7;
	return 0;
}

static int f_unwatch(void *im, uint64_t handle)
{
	fk.watch_cb = NULL;
	return handle == 7 ? 0 : -EINVAL;
}

static const struct rbd_api fake_api = {
	.connect = f_connect,
	.shutdown = f_shutdown,
	.open = f_open,
	.close = f_close,
	.get_size = f_get_size,
	.get_id = f_get_id,
	.pool_id = f_pool_id,
	.fsid = f_fsid,
	.layout = f_layout,
	.aio_readv = f_readv,
	.aio_writev = f_writev,
	.aio_flush = f_flush,
	.aio_discard = f_discard,
	.aio_write_zeroes = f_wz,
	.aio_compare_and_write = f_caw,
	.watch = f_watch,
	.unwatch = f_unwatch,
};

/* Complete up to @max deferred calls, last queued first (librbd does not keep order). */
static unsigned int complete_deferred(unsigned int max)
{
	unsigned int n = 0;

	for (;;) {
		struct fcall c;
		int64_t res;

		pthread_mutex_lock(&fk.lock);
		if (!fk.npending || n == max) {
			pthread_mutex_unlock(&fk.lock);
			return n;
		}
		c = fk.pending[--fk.npending];
		res = f_exec(&c);
		pthread_mutex_unlock(&fk.lock);
		bdev_rbd_aio_done(c.arg, res);
		n++;
	}
}

static void fake_reset(void)
{
	pthread_mutex_lock(&fk.lock);
	if (!fk.img)
		fk.img = calloc(1, IMG_SIZE);
	memset(fk.img, 0, IMG_SIZE);
	fk.size = IMG_SIZE;
	fk.stripes = 1;
	fk.ncalls = fk.npending = 0;
	fk.deferred = false;
	fk.refuse = 0;
	fk.fail_result = 0;
	fk.connect_rc = fk.open_rc = 0;
	fk.closed = fk.shut = false;
	pthread_mutex_unlock(&fk.lock);
	bdev_rbd_set_api(&fake_api);
}

static struct bdev *open_rbd(uint32_t bs)
{
	struct bdev *b = NULL;
	char err[512] = "";

	fake_reset();
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/img:id=nvmeof", bs, &b, err, sizeof(err)), 0);
	if (!b)
		fprintf(stderr, "\n  open: %s\n", err);
	return b;
}

/* ---- spec parsing ---- */

static const struct {
	const char *arg;
	int rc;
	const char *pool, *nspace, *image, *id, *conf, *keyring;
	const char *msg;
} spec_cases[] = {
	{ "rbd/img", 0, "rbd", "", "img", "", "", "", NULL },
	{ "rbd/ns1/img", 0, "rbd", "ns1", "img", "", "", "", NULL },
	{ "rbd/img:id=nvmeof:conf=/etc/c.conf:keyring=/k", 0, "rbd", "", "img", "nvmeof",
	  "/etc/c.conf", "/k", NULL },
	{ "rbd/img:id=client.gw1", 0, "rbd", "", "img", "gw1", "", "", NULL },
	{ "rbd/img:conf=/a\\:b/ceph.conf", 0, "rbd", "", "img", "", "/a:b/ceph.conf", "", NULL },
	{ "p\\/q/i", 0, "p/q", "", "i", "", "", "", NULL },
	{ "", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "expected rbd:POOL/IMAGE" },
	{ "rbd", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "expected POOL/IMAGE" },
	{ "rbd/", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "empty image" },
	{ "/img", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "empty pool" },
	{ "a/b/c/d", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "too many" },
	{ "rbd/img@snap", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "snapshots" },
	{ "rbd/img:user=x", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL,
	  "unknown option \"user\"" },
	{ "rbd/img:id=", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "empty \"id\"" },
	{ "rbd/img:id=a:id=b", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "given twice" },
	{ "rbd/img:conf", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "KEY=VALUE" },
	{ "rbd/img:", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "KEY=VALUE" },
	{ "rbd/img\\", -EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, "bad escape" },
};

static void test_parse_spec(void)
{
	for (size_t i = 0; i < sizeof(spec_cases) / sizeof(spec_cases[0]); i++) {
		struct rbd_spec s;
		char err[512] = "";
		int rc = bdev_rbd_parse_spec(spec_cases[i].arg, &s, err, sizeof(err));

		if (rc != spec_cases[i].rc ||
		    (spec_cases[i].msg && !strstr(err, spec_cases[i].msg)))
			fprintf(stderr, "\n  \"%s\": rc %d \"%s\"\n", spec_cases[i].arg, rc, err);
		CU_ASSERT_EQUAL(rc, spec_cases[i].rc);
		if (rc) {
			CU_ASSERT_PTR_NOT_NULL(strstr(err, spec_cases[i].msg));
			continue;
		}
		CU_ASSERT_STRING_EQUAL(s.pool, spec_cases[i].pool);
		CU_ASSERT_STRING_EQUAL(s.nspace, spec_cases[i].nspace);
		CU_ASSERT_STRING_EQUAL(s.image, spec_cases[i].image);
		CU_ASSERT_STRING_EQUAL(s.id, spec_cases[i].id);
		CU_ASSERT_STRING_EQUAL(s.conf, spec_cases[i].conf);
		CU_ASSERT_STRING_EQUAL(s.keyring, spec_cases[i].keyring);
	}
}

/* ---- open ---- */

static void test_open(void)
{
	struct bdev *b = open_rbd(0);
	char err[512] = "";

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_STRING_EQUAL(b->ops->name, "rbd");
	CU_ASSERT_EQUAL(b->size, IMG_SIZE);
	CU_ASSERT_EQUAL(b->block_size, 512);
	CU_ASSERT_FALSE(b->volatile_cache);
	CU_ASSERT_TRUE(b->persistent);
	CU_ASSERT_EQUAL(b->caw_unit, 512);
	CU_ASSERT_STRING_EQUAL(bdev_identity(b), "rbd:8e2a1d9c-0000-4000-8000-00000000c3f1/2/"
						 "10a2b3c4d5e6");
	CU_ASSERT_EQUAL(bdev_lba_status(b, 0, &(uint64_t){ 0 }, &(bool){ 0 }), -EOPNOTSUPP);
	CU_ASSERT_PTR_NOT_NULL(fk.watch_cb);
	bdev_close(b);
	CU_ASSERT_TRUE(fk.closed);
	CU_ASSERT_TRUE(fk.shut);
	CU_ASSERT_PTR_NULL(fk.watch_cb);

	/* a size that is not a whole number of blocks is rounded down */
	fake_reset();
	fk.size = IMG_SIZE + 1000;
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/img", 4096, &b, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(b->size, IMG_SIZE);
	bdev_close(b);

	/* errors name the spec */
	fake_reset();
	fk.connect_rc = -ETIMEDOUT;
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/img:id=gw", 0, &b, err, sizeof(err)), -ETIMEDOUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "rbd:rbd/img:id=gw"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "client.gw"));
	CU_ASSERT_TRUE(fk.shut || !fk.closed);
	fake_reset();
	fk.open_rc = -ENOENT;
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/nope", 0, &b, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "image nope in pool rbd"));
	CU_ASSERT_TRUE(fk.shut);
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/img:cache=on", 0, &b, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown option \"cache\""));
	fake_reset();
	fk.size = 100;
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/img", 0, &b, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "smaller than one"));
}

/* ---- the request mapping (off-reactor: each step waits) ---- */

static void sync_cb(struct bdev_io *io, int status)
{
	*(int *)io->cb_arg = status;
}

static int run(struct bdev *b, struct bdev_io *io)
{
	int status = 1;

	io->cb = sync_cb;
	io->cb_arg = &status;
	bdev_submit(b, io);
	CU_ASSERT_NOT_EQUAL(status, 1); /* off-reactor: done when submit returns */
	return status;
}

static int rw(struct bdev *b, enum bdev_op op, uint64_t off, void *buf, uint64_t len)
{
	struct iovec iov = { buf, (size_t)len };
	struct bdev_io io = { .op = op, .offset = off, .len = len, .iov = &iov, .iovcnt = 1 };

	return run(b, &io);
}

static int simple(struct bdev *b, enum bdev_op op, uint64_t off, uint64_t len)
{
	struct bdev_io io = { .op = op, .offset = off, .len = len };

	return run(b, &io);
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + 1);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void test_rw_iov(void)
{
	struct bdev *b = open_rbd(512);
	static uint8_t a[1536], c[2560], back[4096], big[8192];
	struct iovec iov[3] = { { a, sizeof(a) }, { NULL, 0 }, { c, sizeof(c) } };
	struct bdev_io io = { .op = BDEV_OP_WRITE,
			      .fua = true,
			      .offset = 8192,
			      .len = 4096,
			      .iov = iov,
			      .iovcnt = 3 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	fill(a, sizeof(a), 1);
	fill(c, sizeof(c), 2);
	CU_ASSERT_EQUAL(run(b, &io), 0);
	/* one call, the caller's iovecs themselves (no copy) */
	CU_ASSERT_EQUAL(fk.ncalls, 1);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_WRITE);
	CU_ASSERT_EQUAL(fk.calls[0].off, 8192);
	CU_ASSERT_PTR_EQUAL(fk.calls[0].iov, iov);
	CU_ASSERT_EQUAL(fk.calls[0].iovcnt, 3);
	CU_ASSERT_EQUAL(memcmp(fk.img + 8192, a, sizeof(a)), 0);
	CU_ASSERT_EQUAL(memcmp(fk.img + 8192 + sizeof(a), c, sizeof(c)), 0);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 8192, back, 4096), 0);
	CU_ASSERT_EQUAL(memcmp(back, a, sizeof(a)), 0);
	CU_ASSERT_EQUAL(memcmp(back + sizeof(a), c, sizeof(c)), 0);

	/* iovecs holding more than len: whole ones in one call, then the part of the last */
	fk.ncalls = 0;
	iov[0] = (struct iovec){ big, 1024 };
	iov[1] = (struct iovec){ big + 1024, 4096 };
	io = (struct bdev_io){
		.op = BDEV_OP_READ, .offset = 8192, .len = 3072, .iov = iov, .iovcnt = 2
	};
	memset(big, 0xEE, sizeof(big));
	CU_ASSERT_EQUAL(run(b, &io), 0);
	CU_ASSERT_EQUAL(fk.ncalls, 2);
	CU_ASSERT_EQUAL(fk.calls[0].off, 8192);
	CU_ASSERT_EQUAL(fk.calls[0].iovcnt, 1);
	CU_ASSERT_PTR_EQUAL(fk.calls[0].iov, iov);
	CU_ASSERT_EQUAL(fk.calls[1].off, 8192 + 1024);
	CU_ASSERT_EQUAL(fk.calls[1].iovcnt, 1);
	CU_ASSERT_EQUAL(fk.calls[1].iov->iov_len, 2048);
	CU_ASSERT_EQUAL(memcmp(big, back, 3072), 0);
	CU_ASSERT_EQUAL(big[3072], 0xEE); /* nothing past len */

	/* flush: one call */
	fk.ncalls = 0;
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_FLUSH, 0, 0), 0);
	CU_ASSERT_EQUAL(fk.ncalls, 1);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_FLUSH);
	bdev_close(b);
}

static void test_zeroes_discard(void)
{
	struct bdev *b = open_rbd(512);
	uint64_t s = 3 * OBJ_SIZE - 4096; /* from 4 KiB before object 3 */

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	/* write zeroes: one call, kept allocated */
	memset(fk.img, 0x55, IMG_SIZE);
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_WRITE_ZEROES, 512, 1 << 20), 0);
	CU_ASSERT_EQUAL(fk.ncalls, 1);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_WZ);
	CU_ASSERT_TRUE(fk.calls[0].thick);
	CU_ASSERT_EQUAL(fk.calls[0].off, 512);
	CU_ASSERT_EQUAL(fk.calls[0].len, 1 << 20);
	CU_ASSERT_TRUE(all_zero(fk.img + 512, 1 << 20));
	CU_ASSERT_EQUAL(fk.img[511], 0x55);
	CU_ASSERT_EQUAL(fk.img[512 + (1 << 20)], 0x55);

	/* discard from inside object 0 to inside object 3: zero the head, discard objects
	 * 1 and 2 whole, zero the tail; everything reads back zero */
	fk.ncalls = 0;
	memset(fk.img, 0x55, IMG_SIZE);
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_DISCARD, OBJ_SIZE - 8192, 2 * OBJ_SIZE + 16384), 0);
	CU_ASSERT_EQUAL_FATAL(fk.ncalls, 3);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_WZ);
	CU_ASSERT_FALSE(fk.calls[0].thick);
	CU_ASSERT_EQUAL(fk.calls[0].off, OBJ_SIZE - 8192);
	CU_ASSERT_EQUAL(fk.calls[0].len, 8192);
	CU_ASSERT_EQUAL(fk.calls[1].op, F_DISCARD);
	CU_ASSERT_EQUAL(fk.calls[1].off, OBJ_SIZE);
	CU_ASSERT_EQUAL(fk.calls[1].len, 2 * OBJ_SIZE);
	CU_ASSERT_EQUAL(fk.calls[2].op, F_WZ);
	CU_ASSERT_EQUAL(fk.calls[2].off, 3 * OBJ_SIZE);
	CU_ASSERT_EQUAL(fk.calls[2].len, 8192);
	CU_ASSERT_TRUE(all_zero(fk.img + OBJ_SIZE - 8192, 2 * OBJ_SIZE + 16384));
	CU_ASSERT_EQUAL(fk.img[OBJ_SIZE - 8193], 0x55);
	CU_ASSERT_EQUAL(fk.img[3 * OBJ_SIZE + 8192], 0x55);

	/* within one object: zeroes only (a discard would be skipped) */
	fk.ncalls = 0;
	memset(fk.img, 0x55, IMG_SIZE);
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_DISCARD, s, 4096), 0);
	CU_ASSERT_EQUAL(fk.ncalls, 1);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_WZ);
	CU_ASSERT_TRUE(all_zero(fk.img + s, 4096));

	/* exactly one object: one discard */
	fk.ncalls = 0;
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_DISCARD, OBJ_SIZE, OBJ_SIZE), 0);
	CU_ASSERT_EQUAL(fk.ncalls, 1);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_DISCARD);
	bdev_close(b);

	/* striped over 2 objects: the unit is an object set (8 MiB) */
	fake_reset();
	fk.stripes = 2;
	CU_ASSERT_EQUAL(bdev_open("rbd:rbd/img", 512, &b, NULL, 0), 0);
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_DISCARD, OBJ_SIZE, 3 * OBJ_SIZE), 0);
	CU_ASSERT_EQUAL_FATAL(fk.ncalls, 2);
	CU_ASSERT_EQUAL(fk.calls[0].op, F_WZ);
	CU_ASSERT_EQUAL(fk.calls[0].len, OBJ_SIZE);
	CU_ASSERT_EQUAL(fk.calls[1].op, F_DISCARD);
	CU_ASSERT_EQUAL(fk.calls[1].off, 2 * OBJ_SIZE);
	CU_ASSERT_EQUAL(fk.calls[1].len, 2 * OBJ_SIZE);
	bdev_close(b);
}

static int caw(struct bdev *b, uint64_t off, uint64_t len, struct iovec *cmp, int ncmp,
	       struct iovec *data, int ndata, uint64_t *mis)
{
	struct bdev_io io = { .op = BDEV_OP_COMPARE_AND_WRITE,
			      .offset = off,
			      .len = len,
			      .iov = data,
			      .iovcnt = ndata,
			      .cmp_iov = cmp,
			      .cmp_iovcnt = ncmp,
			      .caw_miscompare = UINT64_MAX };
	int rc = run(b, &io);

	*mis = io.caw_miscompare;
	return rc;
}

static void test_caw(void)
{
	struct bdev *b = open_rbd(512);
	static uint8_t old[1536], cmp[1536], neu[1536];
	/* compare data split unevenly over iovecs: gathered per sector */
	struct iovec ci[2] = { { cmp, 700 }, { cmp + 700, 836 } };
	struct iovec di[1] = { { neu, sizeof(neu) } };
	uint64_t mis;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	fill(old, sizeof(old), 3);
	fill(neu, sizeof(neu), 4);
	memcpy(fk.img + 4096, old, sizeof(old));
	memcpy(cmp, old, sizeof(cmp));
	CU_ASSERT_EQUAL(caw(b, 4096, 1536, ci, 2, di, 1, &mis), 0);
	CU_ASSERT_EQUAL_FATAL(fk.ncalls, 3);
	for (unsigned int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(fk.calls[i].op, F_CAW);
		CU_ASSERT_EQUAL(fk.calls[i].off, 4096 + 512 * i);
		CU_ASSERT_EQUAL(fk.calls[i].len, 512);
	}
	CU_ASSERT_EQUAL(memcmp(fk.img + 4096, neu, sizeof(neu)), 0);

	/* a mismatch at byte 100 of the second sector: -EILSEQ at 612 of the request; the
	 * first sector was written, the second and third were not */
	fk.ncalls = 0;
	memcpy(fk.img + 4096, old, sizeof(old));
	memcpy(cmp, old, sizeof(cmp));
	cmp[612] ^= 0x40;
	CU_ASSERT_EQUAL(caw(b, 4096, 1536, ci, 2, di, 1, &mis), -EILSEQ);
	CU_ASSERT_EQUAL(mis, 612);
	CU_ASSERT_EQUAL(fk.ncalls, 2);
	CU_ASSERT_EQUAL(memcmp(fk.img + 4096, neu, 512), 0);
	CU_ASSERT_EQUAL(memcmp(fk.img + 4608, old + 512, 1024), 0);

	/* errors: a refused call, a failed one, missing compare data, out of range */
	fk.refuse = -ENOMEM;
	CU_ASSERT_EQUAL(caw(b, 4096, 512, ci, 2, di, 1, &mis), -ENOMEM);
	fk.fail_result = -ESHUTDOWN; /* librbd's -EBLOCKLISTED */
	CU_ASSERT_EQUAL(caw(b, 4096, 512, ci, 2, di, 1, &mis), -ESHUTDOWN);
	CU_ASSERT_EQUAL(caw(b, 4096, 512, NULL, 0, di, 1, &mis), -EINVAL);
	CU_ASSERT_EQUAL(caw(b, IMG_SIZE, 512, ci, 2, di, 1, &mis), -ERANGE);
	bdev_close(b);

	/* 4096-byte blocks: one block is eight sector calls */
	b = open_rbd(4096);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	{
		static uint8_t c4[4096], d4[4096];
		struct iovec c4i = { c4, sizeof(c4) }, d4i = { d4, sizeof(d4) };

		fill(d4, sizeof(d4), 9);
		CU_ASSERT_EQUAL(caw(b, 8192, 4096, &c4i, 1, &d4i, 1, &mis), 0);
		CU_ASSERT_EQUAL(fk.ncalls, 8);
		CU_ASSERT_EQUAL(memcmp(fk.img + 8192, d4, 4096), 0);
	}
	bdev_close(b);

	/* ram offers the op too; file and null refuse it */
	CU_ASSERT_EQUAL(bdev_open("ram:1M", 512, &b, NULL, 0), 0);
	memset(cmp, 0, sizeof(cmp));
	CU_ASSERT_EQUAL(caw(b, 0, 1024, ci, 2, di, 1, &mis), 0);
	CU_ASSERT_EQUAL(caw(b, 0, 1024, ci, 2, di, 1, &mis), -EILSEQ);
	CU_ASSERT_EQUAL(mis, 0);
	bdev_close(b);
	CU_ASSERT_EQUAL(bdev_open("null:1M", 512, &b, NULL, 0), 0);
	CU_ASSERT_EQUAL(caw(b, 0, 512, ci, 2, di, 1, &mis), -EOPNOTSUPP);
	bdev_close(b);
}

static void test_errors(void)
{
	struct bdev *b = open_rbd(512);
	static uint8_t buf[4096];

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	fk.refuse = -EINVAL;
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_WRITE, 0, buf, 4096), -EINVAL);
	fk.fail_result = -EIO;
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, buf, 4096), -EIO);
	fk.fail_result = -ETIMEDOUT;
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_FLUSH, 0, 0), -ETIMEDOUT);
	fk.fail_result = 1024; /* a short read */
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 0, buf, 4096), -EIO);
	fk.ncalls = 0;
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, 100, buf, 512), -EINVAL);
	CU_ASSERT_EQUAL(rw(b, BDEV_OP_READ, IMG_SIZE - 512, buf, 1024), -ERANGE);
	CU_ASSERT_EQUAL(simple(b, BDEV_OP_DISCARD, 0, 0), 0);
	CU_ASSERT_EQUAL(fk.ncalls, 0);
	bdev_close(b);
}

/* ---- completions on reactors ---- */

#define QD 32

struct rjob {
	struct bdev *bdev;
	unsigned int idx;
	struct bdev_io ios[QD];
	struct iovec iov[QD], cmp[QD];
	uint8_t data[QD][512];
	int done, errors, eilseq;
	bool inline_cb, on_reactor, submitting;
	struct reactor *r;
	enum bdev_op op;
	int n;
	sem_t *sem;
};

static void rjob_cb(struct bdev_io *io, int status)
{
	struct rjob *j = io->cb_arg;

	j->inline_cb |= j->submitting;
	j->on_reactor &= reactor_self() == j->r;
	j->errors += status != 0 && status != -EILSEQ;
	j->eilseq += status == -EILSEQ;
	if (++j->done == j->n)
		sem_post(j->sem);
}

static void rjob_start(void *arg)
{
	struct rjob *j = arg;

	j->r = reactor_self();
	j->on_reactor = j->r != NULL;
	j->submitting = true;
	for (int i = 0; i < j->n; i++) {
		j->iov[i] = (struct iovec){ j->data[i], 512 };
		j->cmp[i] = (struct iovec){ j->data[i], 512 };
		j->ios[i] = (struct bdev_io){
			.op = j->op,
			.reactor = j->r,
			.len = 512,
			.offset = ((uint64_t)j->idx * QD + (uint64_t)i) * 512,
			.iov = &j->iov[i],
			.iovcnt = 1,
			.cmp_iov = &j->cmp[i],
			.cmp_iovcnt = 1,
			.cb = rjob_cb,
			.cb_arg = j,
		};
		bdev_submit(j->bdev, &j->ios[i]);
	}
	j->submitting = false;
}

static void run_jobs(struct bdev *b, enum bdev_op op, int n, bool deferred, struct rjob *jobs)
{
	sem_t sem;

	sem_init(&sem, 0, 0);
	fk.deferred = deferred;
	for (unsigned int i = 0; i < 2; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].bdev = b;
		jobs[i].idx = i;
		jobs[i].sem = &sem;
		jobs[i].op = op;
		jobs[i].n = n;
		CU_ASSERT_EQUAL_FATAL(reactor_send_msg(reactor_get(i), rjob_start, &jobs[i]), 0);
	}
	if (deferred) {
		/* this thread plays librbd's: complete in bursts, in reverse order */
		unsigned int total = 0;

		for (int tries = 0; total < 2u * (unsigned int)n && tries < 5000; tries++) {
			unsigned int k = complete_deferred(5);

			total += k;
			if (!k)
				usleep(1000);
		}
		CU_ASSERT_EQUAL(total, 2u * (unsigned int)n);
	}
	sem_wait(&sem);
	sem_wait(&sem);
	sem_destroy(&sem);
	for (unsigned int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(jobs[i].done, n);
		CU_ASSERT_EQUAL(jobs[i].errors, 0);
		CU_ASSERT_FALSE(jobs[i].inline_cb);
		CU_ASSERT_TRUE(jobs[i].on_reactor);
	}
}

static void test_reactors(void)
{
	static struct rjob jobs[2];
	struct bdev *b = open_rbd(512);

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL_FATAL(reactors_start(2), 0);
	/* completed from another thread, out of order */
	run_jobs(b, BDEV_OP_WRITE, QD, true, jobs);
	/* completed inside the library call, on the reactor: still delivered through the
	 * eventfd, after bdev_submit() returned */
	run_jobs(b, BDEV_OP_READ, QD, false, jobs);
	/* compare-and-write of what is there: matches */
	run_jobs(b, BDEV_OP_COMPARE_AND_WRITE, QD, true, jobs);
	CU_ASSERT_EQUAL(jobs[0].eilseq + jobs[1].eilseq, 0);
	reactors_stop();
	bdev_close(b);
}

/* More compare-and-writes than bounce slots: the rest wait, then all complete. */
static struct rjob big_jobs[2];

static void test_caw_slots(void)
{
	struct bdev *b = open_rbd(512);
	sem_t sem;
	unsigned int total = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	sem_init(&sem, 0, 0);
	fk.deferred = true;
	/* three jobs of QD on one reactor: 96 requests for RBD_CAW_SLOTS (64) slots */
	for (int k = 0; k < 3; k++) {
		struct rjob *jj = k < 2 ? &big_jobs[k] : calloc(1, sizeof(*jj));

		memset(jj, 0, sizeof(*jj));
		jj->bdev = b;
		jj->idx = (unsigned int)k;
		jj->sem = &sem;
		jj->op = BDEV_OP_COMPARE_AND_WRITE;
		jj->n = QD;
		CU_ASSERT_EQUAL_FATAL(reactor_send_msg(reactor_get(0), rjob_start, jj), 0);
		if (k == 2) {
			for (int t = 0; t < 2000; t++) {
				pthread_mutex_lock(&fk.lock);
				total = fk.npending;
				pthread_mutex_unlock(&fk.lock);
				if (total >= RBD_CAW_SLOTS)
					break;
				usleep(1000);
			}
			usleep(20000);
			pthread_mutex_lock(&fk.lock);
			total = fk.npending;
			pthread_mutex_unlock(&fk.lock);
			CU_ASSERT_EQUAL(total, RBD_CAW_SLOTS); /* no more than the slots */
			total = 0;
			for (int t = 0; total < 3 * QD && t < 5000; t++) {
				unsigned int n = complete_deferred(7);

				total += n;
				if (!n)
					usleep(1000);
			}
			CU_ASSERT_EQUAL(total, 3 * QD);
			sem_wait(&sem);
			sem_wait(&sem);
			sem_wait(&sem);
			CU_ASSERT_EQUAL(jj->done, QD);
			CU_ASSERT_EQUAL(jj->errors, 0);
			CU_ASSERT_FALSE(jj->inline_cb);
			free(jj);
		}
	}
	CU_ASSERT_EQUAL(big_jobs[0].done + big_jobs[1].done, 2 * QD);
	reactors_stop();
	sem_destroy(&sem);
	bdev_close(b);
}

/* ---- resize ---- */

static sem_t resize_sem;
static uint64_t resize_old, resize_new;

static void on_resize(struct bdev *b, uint64_t old_size, uint64_t new_size, void *arg)
{
	resize_old = old_size;
	resize_new = new_size;
	CU_ASSERT_PTR_EQUAL(arg, &resize_sem);
	sem_post(&resize_sem);
}

static void test_resize(void)
{
	struct bdev *b = open_rbd(512);
	struct timespec ts;

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	sem_init(&resize_sem, 0, 0);
	bdev_set_resize_hook(b, on_resize, &resize_sem);
	/* the update watch fires: seen at once */
	pthread_mutex_lock(&fk.lock);
	fk.size = 2 * IMG_SIZE + 100;
	pthread_mutex_unlock(&fk.lock);
	fk.watch_cb(fk.watch_arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	CU_ASSERT_EQUAL(sem_timedwait(&resize_sem, &ts), 0);
	CU_ASSERT_EQUAL(resize_old, IMG_SIZE);
	CU_ASSERT_EQUAL(resize_new, 2 * IMG_SIZE);
	CU_ASSERT_EQUAL(b->size, 2 * IMG_SIZE);
	/* no notification: the poll finds it (interval 1 s here) */
	pthread_mutex_lock(&fk.lock);
	fk.size = IMG_SIZE;
	pthread_mutex_unlock(&fk.lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 4;
	CU_ASSERT_EQUAL(sem_timedwait(&resize_sem, &ts), 0);
	CU_ASSERT_EQUAL(resize_new, IMG_SIZE);
	bdev_close(b);
	sem_destroy(&resize_sem);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "spec parsing", test_parse_spec },
		{ "open, identity, errors", test_open },
		{ "read/write pass the iovecs through", test_rw_iov },
		{ "write zeroes; discard split at objects", test_zeroes_discard },
		{ "compare-and-write in 512-byte sectors", test_caw },
		{ "error codes", test_errors },
		{ "completions on the submitting reactor", test_reactors },
		{ "compare-and-write bounce slots queue", test_caw_slots },
		{ "resize reported through the hook", test_resize },
		CU_TEST_INFO_NULL,
	};

	bdev_rbd_set_poll_interval(1);
	return ut_run("bdev_rbd (fake librbd)", NULL, NULL, tests);
}
