/* SPDX-License-Identifier: MIT */
/*
 * The RADOS reservation store (resv_store_rados.c) against a fake librados (the table in
 * resv_store_rados_internal.h), through the contract of core/resv_store.h only: the
 * object encoding, open (object created, watched, read) and its errors, save then load,
 * two gateways on one object (the other one reloads before a save completes; the loser of
 * a race gets -EAGAIN and then sees the winner's state), an unreachable cluster (saves
 * refused with -ENOTCONN until it answers again), a lost watch re-established, and a save
 * from a reactor completing on that reactor.
 *
 * The fake keeps one object in memory with a version that every write bumps, refuses a
 * write whose version guard is stale as the OSD does (-ERANGE), and completes a
 * notification when every watcher acknowledged it (deaf watchers are not waited for).
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bdev/resv_store_rados_internal.h"
#include "reactor/reactor.h"
#include "ut.h"

#define MAX_W 8

struct fwatch {
	bool used, deaf, lost;
	void (*notify)(void *arg, uint64_t id, uint64_t cookie);
	void (*error)(void *arg, uint64_t cookie, int err);
	void *arg;
	uint64_t cookie;
};

struct fnotify {
	bool active;
	uint64_t id;
	unsigned int waiting;
	resv_rados_cb cb;
	void *arg;
};

static struct {
	pthread_mutex_t lock;
	bool exists;
	uint8_t data[RESV_OBJ_MAX];
	size_t len;
	uint64_t ver;
	bool down;
	int connect_rc, watch_rc;
	char oid[128];
	struct fwatch w[MAX_W];
	struct fnotify nt[MAX_W];
	uint64_t next_cookie, next_notify;
	unsigned int writes, reads, watches, unwatches, acks, connects, shutdowns;
	unsigned int timeout_s;
} fr = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void fr_reset(void)
{
	pthread_mutex_lock(&fr.lock);
	fr.exists = false;
	fr.len = 0;
	fr.ver = 0;
	fr.down = false;
	fr.connect_rc = fr.watch_rc = 0;
	memset(fr.w, 0, sizeof(fr.w));
	memset(fr.nt, 0, sizeof(fr.nt));
	fr.writes = fr.reads = fr.watches = fr.unwatches = fr.acks = 0;
	fr.connects = fr.shutdowns = 0;
	pthread_mutex_unlock(&fr.lock);
}

static int f_connect(const struct rbd_spec *spec, unsigned int op_timeout_s, void **cluster,
		     char *err, size_t errlen)
{
	if (fr.connect_rc) {
		snprintf(err, errlen, "cannot connect to the cluster as client.%s", spec->id);
		return fr.connect_rc;
	}
	fr.timeout_s = op_timeout_s;
	fr.connects++;
	*cluster = &fr;
	return 0;
}

static void f_shutdown(void *c)
{
	fr.shutdowns++;
}

static int f_ioctx(void *cluster, const char *pool, const char *nspace, void **io)
{
	if (strcmp(pool, "rbd"))
		return -ENOENT;
	*io = &fr;
	return 0;
}

static void f_ioctx_destroy(void *io)
{
}

static int f_create(void *io, const char *oid)
{
	int rc = 0;

	pthread_mutex_lock(&fr.lock);
	if (fr.down) {
		rc = -ETIMEDOUT;
	} else if (!fr.exists) {
		fr.exists = true;
		fr.ver++;
		snprintf(fr.oid, sizeof(fr.oid), "%s", oid);
	}
	pthread_mutex_unlock(&fr.lock);
	return rc;
}

static int do_read(void *buf, size_t cap, uint64_t *ver)
{
	int rc;

	pthread_mutex_lock(&fr.lock);
	fr.reads++;
	if (fr.down)
		rc = -ETIMEDOUT;
	else if (!fr.exists)
		rc = -ENOENT;
	else if (fr.len >= cap)
		rc = -EFBIG;
	else {
		memcpy(buf, fr.data, fr.len);
		rc = (int)fr.len;
		*ver = fr.ver;
	}
	pthread_mutex_unlock(&fr.lock);
	return rc;
}

static int f_read(void *io, const char *oid, void *buf, size_t cap, uint64_t *ver)
{
	return do_read(buf, cap, ver);
}

static int f_aio_read(void *io, const char *oid, void *buf, size_t cap, resv_rados_cb cb, void *arg)
{
	uint64_t ver = 0;
	int rc = do_read(buf, cap, &ver);

	cb(arg, rc, ver);
	return 0;
}

static int f_aio_write(void *io, const char *oid, const void *buf, size_t len, uint64_t ver,
		       resv_rados_cb cb, void *arg)
{
	uint64_t now = 0;
	int rc = 0;

	pthread_mutex_lock(&fr.lock);
	fr.writes++;
	if (fr.down) {
		rc = -ETIMEDOUT;
	} else if (ver != fr.ver) {
		rc = ver < fr.ver ? -ERANGE : -EOVERFLOW;
	} else {
		memcpy(fr.data, buf, len);
		fr.len = len;
		now = ++fr.ver;
	}
	pthread_mutex_unlock(&fr.lock);
	cb(arg, rc, now);
	return 0;
}

static int f_aio_notify(void *io, const char *oid, unsigned int timeout_ms, resv_rados_cb cb,
			void *arg)
{
	struct fwatch hear[MAX_W];
	unsigned int n = 0, slot;
	uint64_t id;

	pthread_mutex_lock(&fr.lock);
	for (slot = 0; slot < MAX_W && fr.nt[slot].active; slot++)
		;
	CU_ASSERT_FATAL(slot < MAX_W);
	id = ++fr.next_notify;
	for (unsigned int i = 0; i < MAX_W; i++)
		if (fr.w[i].used && !fr.w[i].deaf && !fr.w[i].lost)
			hear[n++] = fr.w[i];
	if (n) {
		fr.nt[slot] = (struct fnotify){
			.active = true, .id = id, .waiting = n, .cb = cb, .arg = arg
		};
	}
	pthread_mutex_unlock(&fr.lock);
	if (!n)
		cb(arg, 0, 0);
	for (unsigned int i = 0; i < n; i++)
		hear[i].notify(hear[i].arg, id, hear[i].cookie);
	return 0;
}

static int f_watch(void *io, const char *oid, void (*notify)(void *, uint64_t, uint64_t),
		   void (*error)(void *, uint64_t, int), void *arg, uint64_t *cookie)
{
	int rc = 0;

	pthread_mutex_lock(&fr.lock);
	fr.watches++;
	if (fr.down || fr.watch_rc) {
		rc = fr.down ? -ETIMEDOUT : fr.watch_rc;
	} else {
		for (unsigned int i = 0; i < MAX_W; i++)
			if (!fr.w[i].used) {
				fr.w[i] = (struct fwatch){ .used = true,
							   .notify = notify,
							   .error = error,
							   .arg = arg,
							   .cookie = ++fr.next_cookie };
				*cookie = fr.w[i].cookie;
				break;
			}
	}
	pthread_mutex_unlock(&fr.lock);
	return rc;
}

static struct fwatch *find_w(uint64_t cookie)
{
	for (unsigned int i = 0; i < MAX_W; i++)
		if (fr.w[i].used && fr.w[i].cookie == cookie)
			return &fr.w[i];
	return NULL;
}

static int f_watch_check(void *io, uint64_t cookie)
{
	struct fwatch *w;
	int rc;

	pthread_mutex_lock(&fr.lock);
	w = find_w(cookie);
	rc = fr.down ? -ETIMEDOUT : !w || w->lost ? -ENOTCONN : 10;
	pthread_mutex_unlock(&fr.lock);
	return rc;
}

static int f_unwatch(void *io, uint64_t cookie)
{
	struct fwatch *w;

	pthread_mutex_lock(&fr.lock);
	fr.unwatches++;
	w = find_w(cookie);
	if (w)
		w->used = false;
	pthread_mutex_unlock(&fr.lock);
	return 0;
}

static void f_notify_ack(void *io, const char *oid, uint64_t id, uint64_t cookie)
{
	resv_rados_cb cb = NULL;
	void *arg = NULL;

	pthread_mutex_lock(&fr.lock);
	fr.acks++;
	for (unsigned int i = 0; i < MAX_W; i++)
		if (fr.nt[i].active && fr.nt[i].id == id && !--fr.nt[i].waiting) {
			fr.nt[i].active = false;
			cb = fr.nt[i].cb;
			arg = fr.nt[i].arg;
		}
	pthread_mutex_unlock(&fr.lock);
	if (cb)
		cb(arg, 0, 0);
}

static const struct resv_rados_api fake_api = {
	.connect = f_connect,
	.shutdown = f_shutdown,
	.ioctx = f_ioctx,
	.ioctx_destroy = f_ioctx_destroy,
	.create = f_create,
	.read = f_read,
	.aio_read = f_aio_read,
	.aio_write = f_aio_write,
	.aio_notify = f_aio_notify,
	.watch = f_watch,
	.watch_check = f_watch_check,
	.unwatch = f_unwatch,
	.notify_ack = f_notify_ack,
};

/* ---- helpers ---- */

static struct rbd_spec spec = { .pool = "rbd", .image = "vm1", .id = "nvmeof" };
/* Namespaces are opaque to the store: stand-ins, told apart by address. */
static char ns_a, ns_b;

/* The core's changed() hook, counted per namespace. */
static pthread_mutex_t g_changed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct nvmf_ns *ns;
	unsigned int n;
} g_changed[8];

static void count_changed(struct nvmf_resv_store *st)
{
	pthread_mutex_lock(&g_changed_lock);
	for (unsigned int i = 0; i < 8; i++)
		if (g_changed[i].ns == st->ns || !g_changed[i].ns) {
			g_changed[i].ns = st->ns;
			g_changed[i].n++;
			break;
		}
	pthread_mutex_unlock(&g_changed_lock);
}

static unsigned int fake_reloads(struct nvmf_ns *ns)
{
	unsigned int n = 0;

	pthread_mutex_lock(&g_changed_lock);
	for (unsigned int i = 0; i < 8; i++)
		if (g_changed[i].ns == ns)
			n = g_changed[i].n;
	pthread_mutex_unlock(&g_changed_lock);
	return n;
}

/* A store as the core attaches it: its namespace and the changed() hook set. */
static struct nvmf_resv_store *open_store(struct nvmf_ns *ns)
{
	struct nvmf_resv_store *st = NULL;
	char err[256] = "";

	CU_ASSERT_EQUAL(
		resv_store_rados_open(&spec, "1234abcd", "rbd:rbd/vm1", &st, err, sizeof(err)), 0);
	if (st) {
		st->ns = ns;
		st->changed = count_changed;
	}
	return st;
}

struct saved {
	int rc;
	bool done;
	struct reactor *on;
	sem_t sem;
};

static void save_cb(void *arg, int rc)
{
	struct saved *s = arg;

	s->rc = rc;
	s->done = true;
	s->on = reactor_self();
	sem_post(&s->sem);
}

/* Save off-reactor: the store completes on this thread before save() returns. */
static int save(struct nvmf_resv_store *st, const struct nvmf_resv_image *img)
{
	struct saved s = { .rc = 1 };

	sem_init(&s.sem, 0, 0);
	st->ops->save(st, img, save_cb, &s);
	CU_ASSERT_TRUE(s.done);
	sem_destroy(&s.sem);
	return s.rc;
}

static void image(struct nvmf_resv_image *img, uint32_t gen, uint8_t rtype, unsigned int nregs)
{
	memset(img, 0, sizeof(*img));
	img->gen = gen;
	img->rtype = rtype;
	img->nregs = nregs;
	for (unsigned int i = 0; i < nregs; i++) {
		memset(img->regs[i].hostid, (int)(0x10 + i), 16);
		img->regs[i].key = 0xabcd0000u + i;
	}
	if (rtype)
		memcpy(img->holder, img->regs[0].hostid, 16);
}

static bool wait_for(bool (*cond)(void), unsigned int ms)
{
	for (unsigned int i = 0; i < ms / 10; i++) {
		if (cond())
			return true;
		usleep(10000);
	}
	return cond();
}

/* ---- tests ---- */

static void test_encoding(void)
{
	struct nvmf_resv_image in, out;
	uint8_t buf[RESV_OBJ_MAX];
	size_t n;

	image(&in, 7, 2, 3);
	in.ptpl = true;
	n = resv_rados_encode(&in, buf);
	CU_ASSERT_EQUAL(n, 40 + 3 * 24);
	CU_ASSERT_EQUAL(resv_rados_decode(buf, n, &out), 0);
	CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);
	/* the largest state fits the read buffer */
	image(&in, 1, 0, NVMF_RESV_MAX_REGS);
	CU_ASSERT_TRUE(resv_rados_encode(&in, buf) < RESV_OBJ_MAX);
	CU_ASSERT_EQUAL(resv_rados_decode(buf, 0, &out), -ENOENT);
	/* damaged: short, magic, length, count, type */
	image(&in, 7, 2, 3);
	n = resv_rados_encode(&in, buf);
	CU_ASSERT_EQUAL(resv_rados_decode(buf, 39, &out), -EINVAL);
	CU_ASSERT_EQUAL(resv_rados_decode(buf, n - 1, &out), -EINVAL);
	buf[20] = 200;
	CU_ASSERT_EQUAL(resv_rados_decode(buf, n, &out), -EINVAL);
	buf[20] = 3;
	buf[16] = 9;
	CU_ASSERT_EQUAL(resv_rados_decode(buf, n, &out), -EINVAL);
	buf[16] = 2;
	buf[0] = 'X';
	CU_ASSERT_EQUAL(resv_rados_decode(buf, n, &out), -EINVAL);
}

static void test_open(void)
{
	struct nvmf_resv_store *st;
	struct nvmf_resv_image img;
	struct rbd_spec bad = spec;
	char err[256];

	fr_reset();
	st = open_store((struct nvmf_ns *)&ns_a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	CU_ASSERT_STRING_EQUAL(st->ops->name, "rados");
	CU_ASSERT_TRUE(st->ops->always);
	CU_ASSERT_TRUE(fr.exists);
	CU_ASSERT_STRING_EQUAL(fr.oid, "nvmeof_resv.1234abcd");
	CU_ASSERT_EQUAL(fr.watches, 1);
	CU_ASSERT_TRUE(fr.timeout_s > 0 && fr.timeout_s < 30);
	CU_ASSERT_EQUAL(st->ops->load(st, &img), -ENOENT); /* nothing stored yet */
	st->ops->close(st);
	CU_ASSERT_EQUAL(fr.unwatches, 1);
	CU_ASSERT_EQUAL(fr.shutdowns, 1);

	/* errors name the namespace and what failed */
	fr.connect_rc = -ETIMEDOUT;
	CU_ASSERT_EQUAL(resv_store_rados_open(&spec, "1234abcd", "rbd:rbd/vm1", &st, err,
					      sizeof(err)),
			-ETIMEDOUT);
	CU_ASSERT_PTR_NULL(st);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "rbd:rbd/vm1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "client.nvmeof"));
	fr.connect_rc = 0;
	snprintf(bad.pool, sizeof(bad.pool), "nopool");
	CU_ASSERT_EQUAL(resv_store_rados_open(&bad, "1234abcd", "x", &st, err, sizeof(err)),
			-ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nopool"));
	fr.watch_rc = -EPERM;
	CU_ASSERT_EQUAL(resv_store_rados_open(&spec, "1234abcd", "x", &st, err, sizeof(err)),
			-EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nvmeof_resv.1234abcd"));
	fr.watch_rc = 0;
	/* an object that is not a reservation state is not taken for one */
	memcpy(fr.data, "garbage!", 8);
	fr.len = 8;
	CU_ASSERT_EQUAL(resv_store_rados_open(&spec, "1234abcd", "x", &st, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a reservation state"));
	CU_ASSERT_EQUAL(resv_store_rados_open(&spec, "", "x", &st, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(fr.connects, fr.shutdowns); /* every failed open let go of its handle */
}

static void test_save_load(void)
{
	struct nvmf_resv_store *st;
	struct nvmf_resv_image in, out;
	uint64_t ver;

	fr_reset();
	st = open_store((struct nvmf_ns *)&ns_a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	ver = fr.ver;
	image(&in, 1, 0, 2);
	CU_ASSERT_EQUAL(save(st, &in), 0);
	CU_ASSERT_EQUAL(fr.ver, ver + 1);
	CU_ASSERT_EQUAL(st->ops->load(st, &out), 0);
	CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);
	CU_ASSERT_EQUAL(resv_rados_decode(fr.data, fr.len, &out), 0);
	CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);
	image(&in, 2, 1, 2);
	CU_ASSERT_EQUAL(save(st, &in), 0);
	CU_ASSERT_EQUAL(st->ops->load(st, &out), 0);
	CU_ASSERT_EQUAL(out.rtype, 1);
	/* its own notification does not make it reload */
	usleep(100000);
	CU_ASSERT_EQUAL(fake_reloads((struct nvmf_ns *)&ns_a), 0);
	st->ops->close(st);

	/* a new store (a restarted gateway) reads what was saved */
	st = open_store((struct nvmf_ns *)&ns_a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	CU_ASSERT_EQUAL(st->ops->load(st, &out), 0);
	CU_ASSERT_EQUAL(out.gen, 2);
	CU_ASSERT_EQUAL(out.rtype, 1);
	st->ops->close(st);
}

static void test_two_gateways(void)
{
	struct nvmf_resv_store *a, *b;
	struct nvmf_resv_image in, out;
	unsigned int before;

	fr_reset();
	a = open_store((struct nvmf_ns *)&ns_a);
	b = open_store((struct nvmf_ns *)&ns_b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	before = fake_reloads((struct nvmf_ns *)&ns_b);
	image(&in, 5, 1, 1);
	/* A's save completes only once B has reloaded and acknowledged */
	CU_ASSERT_EQUAL(save(a, &in), 0);
	CU_ASSERT_EQUAL(fake_reloads((struct nvmf_ns *)&ns_b), before + 1);
	CU_ASSERT_EQUAL(b->ops->load(b, &out), 0);
	CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);

	/* B saves on top of A's state: fine, its version is current */
	image(&in, 6, 0, 2);
	CU_ASSERT_EQUAL(save(b, &in), 0);
	CU_ASSERT_EQUAL(a->ops->load(a, &out), 0);
	CU_ASSERT_EQUAL(out.gen, 6);

	/* A race: B misses A's notification, then saves with a stale version guard. */
	pthread_mutex_lock(&fr.lock);
	for (unsigned int i = 0; i < MAX_W; i++)
		if (fr.w[i].used && fr.w[i].arg == (void *)b)
			fr.w[i].deaf = true;
	pthread_mutex_unlock(&fr.lock);
	image(&in, 7, 1, 1);
	CU_ASSERT_EQUAL(save(a, &in), 0);
	image(&in, 7, 3, 3);
	CU_ASSERT_EQUAL(save(b, &in), -EAGAIN); /* nothing written over A's */
	CU_ASSERT_EQUAL(resv_rados_decode(fr.data, fr.len, &out), 0);
	CU_ASSERT_EQUAL(out.rtype, 1);
	CU_ASSERT_EQUAL(b->ops->load(b, &out), 0); /* and B now holds A's state */
	CU_ASSERT_EQUAL(out.gen, 7);
	CU_ASSERT_EQUAL(out.rtype, 1);
	image(&in, 8, 3, 3); /* the retry */
	CU_ASSERT_EQUAL(save(b, &in), 0);
	CU_ASSERT_EQUAL(a->ops->load(a, &out), 0);
	CU_ASSERT_EQUAL(out.rtype, 3);
	a->ops->close(a);
	b->ops->close(b);
}

static void test_unreachable(void)
{
	struct nvmf_resv_store *st;
	struct nvmf_resv_image in, out;
	unsigned int writes, i;
	int rc;

	fr_reset();
	resv_store_rados_set_check_interval(1);
	st = open_store((struct nvmf_ns *)&ns_a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	image(&in, 1, 0, 1);
	CU_ASSERT_EQUAL(save(st, &in), 0);

	fr.down = true;
	image(&in, 2, 1, 1);
	CU_ASSERT_EQUAL(save(st, &in), -ENOTCONN);
	writes = fr.writes;
	CU_ASSERT_EQUAL(save(st, &in), -ENOTCONN); /* refused at once */
	CU_ASSERT_EQUAL(fr.writes, writes);
	CU_ASSERT_EQUAL(st->ops->load(st, &out), 0); /* the last state known */
	CU_ASSERT_EQUAL(out.gen, 1);

	/* the store thread reads the object again within a second or so; until then
	 * saves are still refused without a write */
	fr.down = false;
	for (i = 0; i < 100 && (rc = save(st, &in)) == -ENOTCONN; i++)
		usleep(50000);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(i > 0);
	CU_ASSERT_EQUAL(fr.writes, writes + 1);
	st->ops->close(st);
}

static bool rewatched(void)
{
	return fr.watches >= 2 && fr.reads >= 2;
}

static void test_watch_lost(void)
{
	struct nvmf_resv_store *st;
	struct nvmf_resv_image in;
	struct fwatch w;

	fr_reset();
	resv_store_rados_set_check_interval(1);
	st = open_store((struct nvmf_ns *)&ns_a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	pthread_mutex_lock(&fr.lock);
	fr.w[0].lost = true;
	w = fr.w[0];
	pthread_mutex_unlock(&fr.lock);
	w.error(w.arg, w.cookie, -ENOTCONN);
	image(&in, 1, 0, 1);
	CU_ASSERT_TRUE(wait_for(rewatched, 5000));
	usleep(50000);
	CU_ASSERT_EQUAL(fr.unwatches, 1); /* the old watch was dropped */
	CU_ASSERT_EQUAL(save(st, &in), 0);
	st->ops->close(st);
}

static struct {
	struct nvmf_resv_store *st;
	struct nvmf_resv_image img;
	struct saved s;
	struct reactor *r;
} rj;

static void reactor_save(void *arg)
{
	rj.r = reactor_self();
	rj.st->ops->save(rj.st, &rj.img, save_cb, &rj.s);
	/* the guarded write was inline in the fake, the notification is not */
}

static void test_on_reactor(void)
{
	struct timespec ts;

	fr_reset();
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	rj.st = open_store((struct nvmf_ns *)&ns_a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rj.st);
	image(&rj.img, 3, 2, 2);
	sem_init(&rj.s.sem, 0, 0);
	CU_ASSERT_EQUAL(reactor_send_msg(reactor_get(0), reactor_save, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	CU_ASSERT_EQUAL(sem_timedwait(&rj.s.sem, &ts), 0);
	CU_ASSERT_EQUAL(rj.s.rc, 0);
	CU_ASSERT_PTR_EQUAL(rj.s.on, rj.r); /* completed on the reactor that saved */
	sem_destroy(&rj.s.sem);
	rj.st->ops->close(rj.st);
	reactors_stop();
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "encoding", test_encoding },
		{ "open: created, watched, read; errors", test_open },
		{ "save then load", test_save_load },
		{ "two gateways: reload before completion, lost race", test_two_gateways },
		{ "unreachable cluster refuses saves", test_unreachable },
		{ "lost watch re-established", test_watch_lost },
		{ "save on a reactor completes there", test_on_reactor },
		CU_TEST_INFO_NULL,
	};

	resv_store_rados_set_api(&fake_api);
	return ut_run("resv_store_rados (fake librados)", NULL, NULL, tests);
}
