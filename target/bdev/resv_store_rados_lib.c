/* SPDX-License-Identifier: MIT */
/*
 * The reservation store's library table (resv_store_rados_internal.h) on librados: a
 * cluster handle of its own (found as the rbd namespace's, through bdev_rbd_lib_connect)
 * whose OSD and monitor operations time out, so that an unreachable cluster fails a
 * reservation command instead of holding it forever; the guarded write is one write
 * operation (assert_version + write_full), the read one read operation.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rados/librados.h>

#include "resv_store_rados_internal.h"

static int lib_connect(const struct rbd_spec *spec, unsigned int op_timeout_s, void **cluster,
		       char *err, size_t errlen)
{
	char t[16];
	const char *opts[] = { "rados_osd_op_timeout", t, "rados_mon_op_timeout", t, NULL };

	snprintf(t, sizeof(t), "%u", op_timeout_s);
	return bdev_rbd_lib_connect(spec, opts, cluster, err, errlen);
}

static void lib_shutdown(void *cluster)
{
	rados_shutdown(cluster);
}

static int lib_ioctx(void *cluster, const char *pool, const char *nspace, void **io)
{
	rados_ioctx_t ctx;
	int r = rados_ioctx_create(cluster, pool, &ctx);

	if (r < 0)
		return r;
	rados_ioctx_set_namespace(ctx, nspace && nspace[0] ? nspace : NULL);
	*io = ctx;
	return 0;
}

static void lib_ioctx_destroy(void *io)
{
	rados_ioctx_destroy(io);
}

static int lib_create(void *io, const char *oid)
{
	rados_write_op_t op = rados_create_write_op();
	int r;

	if (!op)
		return -ENOMEM;
	rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
	r = rados_write_op_operate(op, io, oid, NULL, 0);
	rados_release_write_op(op);
	return r;
}

static int lib_read(void *io, const char *oid, void *buf, size_t cap, uint64_t *ver)
{
	rados_read_op_t op = rados_create_read_op();
	size_t got = 0;
	int prval = 0, r;

	if (!op)
		return -ENOMEM;
	rados_read_op_read(op, 0, cap, buf, &got, &prval);
	r = rados_read_op_operate(op, io, oid, 0);
	rados_release_read_op(op);
	if (r < 0)
		return r;
	if (prval < 0)
		return prval;
	if (got >= cap)
		return -EFBIG;
	*ver = rados_get_last_version(io);
	return (int)got;
}

/* One aio call in flight. */
struct lib_call {
	resv_rados_cb cb;
	void *arg;
	rados_read_op_t rop;
	rados_write_op_t wop;
	size_t got;
	size_t cap;
	int prval;
	char *reply;
	size_t reply_len;
};

/* Runs on a librados thread. */
static void lib_complete(rados_completion_t c, void *arg)
{
	struct lib_call *k = arg;
	int r = rados_aio_get_return_value(c);
	uint64_t ver = rados_aio_get_version(c);

	rados_aio_release(c);
	if (k->rop) {
		if (r >= 0 && k->prval < 0)
			r = k->prval;
		if (r >= 0)
			r = k->got >= k->cap ? -EFBIG : (int)k->got;
		rados_release_read_op(k->rop);
	}
	if (k->wop)
		rados_release_write_op(k->wop);
	if (k->reply)
		rados_buffer_free(k->reply);
	k->cb(k->arg, r, ver);
	free(k);
}

static struct lib_call *call_new(resv_rados_cb cb, void *arg, rados_completion_t *c)
{
	struct lib_call *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->cb = cb;
	k->arg = arg;
	if (rados_aio_create_completion2(k, lib_complete, c) < 0) {
		free(k);
		return NULL;
	}
	return k;
}

static int call_failed(struct lib_call *k, rados_completion_t c, int r)
{
	rados_aio_release(c);
	if (k->rop)
		rados_release_read_op(k->rop);
	if (k->wop)
		rados_release_write_op(k->wop);
	free(k);
	return r;
}

static int lib_aio_read(void *io, const char *oid, void *buf, size_t cap, resv_rados_cb cb,
			void *arg)
{
	rados_completion_t c;
	struct lib_call *k = call_new(cb, arg, &c);
	int r;

	if (!k)
		return -ENOMEM;
	k->cap = cap;
	k->rop = rados_create_read_op();
	if (!k->rop)
		return call_failed(k, c, -ENOMEM);
	rados_read_op_read(k->rop, 0, cap, buf, &k->got, &k->prval);
	r = rados_aio_read_op_operate(k->rop, io, c, oid, 0);
	return r < 0 ? call_failed(k, c, r) : 0;
}

static int lib_aio_write(void *io, const char *oid, const void *buf, size_t len, uint64_t ver,
			 resv_rados_cb cb, void *arg)
{
	rados_completion_t c;
	struct lib_call *k = call_new(cb, arg, &c);
	int r;

	if (!k)
		return -ENOMEM;
	k->wop = rados_create_write_op();
	if (!k->wop)
		return call_failed(k, c, -ENOMEM);
	rados_write_op_assert_version(k->wop, ver);
	rados_write_op_write_full(k->wop, buf, len);
	r = rados_aio_write_op_operate(k->wop, io, c, oid, NULL, 0);
	return r < 0 ? call_failed(k, c, r) : 0;
}

static int lib_aio_notify(void *io, const char *oid, unsigned int timeout_ms, resv_rados_cb cb,
			  void *arg)
{
	rados_completion_t c;
	struct lib_call *k = call_new(cb, arg, &c);
	int r;

	if (!k)
		return -ENOMEM;
	r = rados_aio_notify(io, oid, c, NULL, 0, timeout_ms, &k->reply, &k->reply_len);
	return r < 0 ? call_failed(k, c, r) : 0;
}

/*
 * The OSD drops a watch it has not heard from for this long. Pings go every
 * objecter_tick_interval (5 s): a cluster's osd_client_watch_timeout set that low (as for
 * quick exclusive-lock takeovers) would drop ours between two pings. A dead gateway's
 * watch stays as long: its peers' notifications wait NOTIFY_TIMEOUT_MS for it meanwhile.
 */
#define WATCH_TIMEOUT_S 15

/* rados_watch3 passes the callbacks one argument: the store's. */
struct lib_watch {
	void (*notify)(void *arg, uint64_t notify_id, uint64_t cookie);
	void (*error)(void *arg, uint64_t cookie, int err);
	void *arg;
};

static void lib_watch_cb(void *arg, uint64_t notify_id, uint64_t handle, uint64_t notifier_id,
			 void *data, size_t data_len)
{
	struct lib_watch *w = arg;

	(void)notifier_id;
	(void)data;
	(void)data_len;
	w->notify(w->arg, notify_id, handle);
}

static void lib_watch_err(void *arg, uint64_t cookie, int err)
{
	struct lib_watch *w = arg;

	w->error(w->arg, cookie, err);
}

/* The watch's callback data, one per watch (freed by unwatch): keyed by cookie. */
#define MAX_WATCHES 1024
static struct {
	uint64_t cookie;
	struct lib_watch *w;
} g_watches[MAX_WATCHES];
static pthread_mutex_t g_watch_lock = PTHREAD_MUTEX_INITIALIZER;

static int lib_watch(void *io, const char *oid,
		     void (*notify)(void *arg, uint64_t notify_id, uint64_t cookie),
		     void (*error)(void *arg, uint64_t cookie, int err), void *arg,
		     uint64_t *cookie)
{
	struct lib_watch *w = calloc(1, sizeof(*w));
	unsigned int i;
	int r;

	if (!w)
		return -ENOMEM;
	w->notify = notify;
	w->error = error;
	w->arg = arg;
	pthread_mutex_lock(&g_watch_lock);
	for (i = 0; i < MAX_WATCHES && g_watches[i].w; i++)
		;
	if (i == MAX_WATCHES) {
		pthread_mutex_unlock(&g_watch_lock);
		free(w);
		return -ENOSPC;
	}
	g_watches[i].w = w; /* reserve the slot */
	g_watches[i].cookie = 0;
	pthread_mutex_unlock(&g_watch_lock);
	r = rados_watch3(io, oid, cookie, lib_watch_cb, lib_watch_err, WATCH_TIMEOUT_S, w);
	pthread_mutex_lock(&g_watch_lock);
	if (r < 0) {
		g_watches[i].w = NULL;
		free(w);
	} else {
		g_watches[i].cookie = *cookie;
	}
	pthread_mutex_unlock(&g_watch_lock);
	return r;
}

static int lib_watch_check(void *io, uint64_t cookie)
{
	return rados_watch_check(io, cookie);
}

static int lib_unwatch(void *io, uint64_t cookie)
{
	struct lib_watch *w = NULL;
	int r = rados_unwatch2(io, cookie);

	/* no more callbacks once rados_unwatch2 returned; flush the ones under way */
	rados_watch_flush(rados_ioctx_get_cluster(io));
	pthread_mutex_lock(&g_watch_lock);
	for (unsigned int i = 0; i < MAX_WATCHES; i++)
		if (g_watches[i].w && g_watches[i].cookie == cookie) {
			w = g_watches[i].w;
			g_watches[i].w = NULL;
			break;
		}
	pthread_mutex_unlock(&g_watch_lock);
	free(w);
	return r;
}

static void lib_notify_ack(void *io, const char *oid, uint64_t notify_id, uint64_t cookie)
{
	rados_notify_ack(io, oid, notify_id, cookie, NULL, 0);
}

static const struct resv_rados_api lib_api = {
	.connect = lib_connect,
	.shutdown = lib_shutdown,
	.ioctx = lib_ioctx,
	.ioctx_destroy = lib_ioctx_destroy,
	.create = lib_create,
	.read = lib_read,
	.aio_read = lib_aio_read,
	.aio_write = lib_aio_write,
	.aio_notify = lib_aio_notify,
	.watch = lib_watch,
	.watch_check = lib_watch_check,
	.unwatch = lib_unwatch,
	.notify_ack = lib_notify_ack,
};

const struct resv_rados_api *const resv_rados_lib_api = &lib_api;
