/* SPDX-License-Identifier: MIT */
/*
 * The reservation state of an RBD namespace in a RADOS object beside the image
 * ("nvmeof_resv.IMAGE_ID"), shared by every gateway exporting the image (the cluster store
 * of core/resv_store.h).
 *
 * Saving: the new state is written with a version guard (the object version this gateway
 * last read or wrote), so two gateways never overwrite each other: the one that loses the
 * race gets -ERANGE from the OSD, re-reads the object and reports -EAGAIN (the caller
 * reloads and retries). After a successful write the other gateways are notified, and the
 * save completes once they acknowledged (each acknowledges after its changed() hook ran),
 * so a host that got the completion through gateway A finds gateway B enforcing the new
 * state. A gateway that does not answer within NOTIFY_TIMEOUT_MS (one that died keeps its
 * watch until the OSD drops it) does not hold the save up longer.
 *
 * Threads: save() runs on the reactor that called it; the write, the re-read and the
 * notification are librados aio calls whose completions are posted back to that reactor
 * (reactor_post), which calls @done. Off a reactor, save() waits for the chain to end.
 * Each store has a thread of its own for the blocking work: watching (re-watching when
 * the watch is lost), reading the object when another gateway notified, and checking the
 * watch every few seconds. A notification makes it read the object; a newer version
 * becomes the cached state, the changed() hook runs on reactor 0 (inline without
 * reactors), and the notifications are acknowledged after it. load() returns the cached
 * state and never touches the cluster.
 *
 * Unreachable: when a read, a write or the watch fails because the cluster does not
 * answer (operations time out after OP_TIMEOUT_S), the store goes offline: save() fails
 * at once with -ENOTCONN (reservation commands are refused) until the thread has watched
 * and read the object again. Each change between online and offline is logged once.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/endian.h"
#include "common/log.h"
#include "bdev_internal.h"
#include "reactor/reactor.h"
#include "resv_store_rados_internal.h"

#define OP_TIMEOUT_S      10   /* a RADOS operation that takes longer fails */
#define NOTIFY_TIMEOUT_MS 5000 /* waiting for the other gateways' acknowledgements */
#define MAX_ACKS          32   /* notifications waiting for the reload */

#define ENC_MAGIC   "NVMFRESV"
#define ENC_VERSION 1u
#define ENC_HDR     40u /* magic 8, version 4, gen 4, rtype 1, ptpl 1, rsvd 2, nregs 4, holder 16 */
#define ENC_REG     24u /* hostid 16, key 8 */

static const struct resv_rados_api *g_api;
static bool g_api_set;
static unsigned int g_check_s = 5;

void resv_store_rados_set_api(const struct resv_rados_api *api)
{
	g_api = api;
	g_api_set = api != NULL;
}

void resv_store_rados_set_check_interval(unsigned int seconds)
{
	g_check_s = seconds ? seconds : 1;
}

/* ---- Encoding ------------------------------------------------------------------------------ */

size_t resv_rados_encode(const struct nvmf_resv_image *img, uint8_t *buf)
{
	unsigned int n = img->nregs < NVMF_RESV_MAX_REGS ? img->nregs : NVMF_RESV_MAX_REGS;
	uint8_t *p = buf + ENC_HDR;

	memset(buf, 0, ENC_HDR);
	memcpy(buf, ENC_MAGIC, 8);
	put_le32(&buf[8], ENC_VERSION);
	put_le32(&buf[12], img->gen);
	buf[16] = img->rtype;
	buf[17] = img->ptpl;
	put_le32(&buf[20], n);
	memcpy(&buf[24], img->holder, 16);
	for (unsigned int i = 0; i < n; i++, p += ENC_REG) {
		memcpy(p, img->regs[i].hostid, 16);
		put_le64(&p[16], img->regs[i].key);
	}
	return (size_t)(p - buf);
}

int resv_rados_decode(const uint8_t *buf, size_t len, struct nvmf_resv_image *img)
{
	uint32_t n;

	memset(img, 0, sizeof(*img));
	if (len == 0)
		return -ENOENT;
	if (len < ENC_HDR || memcmp(buf, ENC_MAGIC, 8) || get_le32(&buf[8]) != ENC_VERSION)
		return -EINVAL;
	n = get_le32(&buf[20]);
	if (n > NVMF_RESV_MAX_REGS || len != ENC_HDR + (size_t)n * ENC_REG || buf[16] > 6 ||
	    buf[17] > 1)
		return -EINVAL;
	img->gen = get_le32(&buf[12]);
	img->rtype = buf[16];
	img->ptpl = buf[17];
	memcpy(img->holder, &buf[24], 16);
	img->nregs = n;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p = buf + ENC_HDR + (size_t)i * ENC_REG;

		memcpy(img->regs[i].hostid, p, 16);
		img->regs[i].key = get_le64(&p[16]);
	}
	return 0;
}

/* ---- The store ----------------------------------------------------------------------------- */

/* One save from save() to @done. */
enum save_state {
	SAVE_IDLE,       /* no save in progress */
	SAVE_WRITING,    /* the guarded write is with the OSD */
	SAVE_REFRESHING, /* lost the race: reading the other gateway's state before -EAGAIN */
	SAVE_NOTIFYING,  /* written: waiting for the other gateways to reload */
	SAVE_DONE,       /* result on its way to the caller */
};

struct rados_store {
	struct nvmf_resv_store base;
	const struct resv_rados_api *api;
	void *cluster;
	void *io;
	char oid[sizeof(RESV_OBJ_PREFIX) + 64];
	char label[256];

	pthread_mutex_t lock; /* everything below */
	pthread_cond_t cond;

	/* The state as last read or written, and the object version it has. */
	struct nvmf_resv_image img;
	int img_rc; /* 0, or -ENOENT: the object is empty */
	uint64_t ver;
	bool offline;
	unsigned int failures; /* set_offline(true) calls: a read older than one proves nothing */

	/* The store thread. */
	pthread_t thr;
	bool thr_started;
	bool stop;
	bool refresh; /* a notification came: read the object */
	bool watch_lost;
	bool watching;
	uint64_t cookie;
	struct {
		uint64_t id, cookie;
	} acks[MAX_ACKS];
	unsigned int nacks;
	uint8_t tbuf[RESV_OBJ_MAX];

	/* Reload on reactor 0. */
	struct reactor_post reload_post;
	bool reload_posted;
	bool reload_changed;

	/* The save in progress. */
	enum save_state save;
	nvmf_resv_store_done done;
	void *done_arg;
	struct reactor *caller; /* NULL: save() waits on cond */
	int save_rc;
	uint64_t save_ver;
	struct nvmf_resv_image save_img;
	struct reactor_post save_post;
	uint8_t wbuf[RESV_OBJ_MAX];
	uint8_t rbuf[RESV_OBJ_MAX];
};

static void set_save_state(struct rados_store *s, enum save_state to)
{
	static const unsigned int legal[] = {
		[SAVE_IDLE] = 1u << SAVE_WRITING | 1u << SAVE_DONE,
		[SAVE_WRITING] = 1u << SAVE_REFRESHING | 1u << SAVE_NOTIFYING | 1u << SAVE_DONE,
		[SAVE_REFRESHING] = 1u << SAVE_DONE,
		[SAVE_NOTIFYING] = 1u << SAVE_DONE,
		[SAVE_DONE] = 1u << SAVE_IDLE,
	};

	assert(legal[s->save] & (1u << to));
	(void)legal;
	s->save = to;
}

/* Lock held. Log each change between reachable and not once. */
static void set_offline(struct rados_store *s, bool offline, int why)
{
	if (offline)
		s->failures++;
	if (s->offline == offline)
		return;
	s->offline = offline;
	if (offline)
		log_err("%s: reservation state %s unreachable (%s): reservation commands are "
			"refused until the cluster answers",
			s->label, s->oid, strerror(-why));
	else
		log_notice("%s: reservation state %s reachable again", s->label, s->oid);
}

static bool unreachable_rc(int rc)
{
	return rc == -ETIMEDOUT || rc == -ENOTCONN || rc == -ESHUTDOWN || rc == -ECONNREFUSED ||
	       rc == -EIO; /* -ESHUTDOWN: blocklisted */
}

/* Lock held: a read of version @ver gave @buf/@len. true when the cached state changed. */
static bool take_read(struct rados_store *s, const uint8_t *buf, int len, uint64_t ver)
{
	struct nvmf_resv_image img;
	int rc;

	if (ver && ver <= s->ver)
		return false; /* what we have is as new (our own write, say) */
	rc = resv_rados_decode(buf, (size_t)len, &img);
	if (rc == -EINVAL) {
		log_err("%s: %s does not hold a reservation state (%d bytes): ignored", s->label,
			s->oid, len);
		return false;
	}
	s->img = img;
	s->img_rc = rc;
	s->ver = ver;
	return true;
}

/* ---- Saving -------------------------------------------------------------------------------- */

static void save_deliver(void *arg)
{
	struct rados_store *s = arg;
	nvmf_resv_store_done done;
	void *done_arg;
	int rc;

	pthread_mutex_lock(&s->lock);
	done = s->done;
	done_arg = s->done_arg;
	rc = s->save_rc;
	set_save_state(s, SAVE_IDLE);
	pthread_mutex_unlock(&s->lock);
	done(done_arg, rc);
}

/* Any thread: the save ended with @rc. */
static void save_finish(struct rados_store *s, int rc)
{
	struct reactor *r;

	pthread_mutex_lock(&s->lock);
	s->save_rc = rc;
	set_save_state(s, SAVE_DONE);
	r = s->caller;
	if (!r)
		pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (r) {
		s->save_post.fn = save_deliver;
		s->save_post.arg = s;
		reactor_post(r, &s->save_post);
	}
}

static void notify_done(void *arg, int rc, uint64_t ver)
{
	struct rados_store *s = arg;

	(void)ver;
	if (rc == -ETIMEDOUT)
		log_warn("%s: a gateway watching %s did not confirm the new reservation state "
			 "within %u ms",
			 s->label, s->oid, NOTIFY_TIMEOUT_MS);
	else if (rc < 0)
		log_warn("%s: notifying the gateways watching %s: %s", s->label, s->oid,
			 strerror(-rc));
	save_finish(s, 0); /* the state is stored either way */
}

static void refresh_done(void *arg, int rc, uint64_t ver)
{
	struct rados_store *s = arg;
	bool changed = false;

	pthread_mutex_lock(&s->lock);
	if (rc >= 0)
		changed = take_read(s, s->rbuf, rc, ver);
	else if (unreachable_rc(rc))
		set_offline(s, true, rc);
	pthread_mutex_unlock(&s->lock);
	(void)changed;
	save_finish(s, rc >= 0 ? -EAGAIN : unreachable_rc(rc) ? -ENOTCONN : rc);
}

static void write_done(void *arg, int rc, uint64_t ver)
{
	struct rados_store *s = arg;

	if (rc == -ERANGE || rc == -EOVERFLOW) {
		/* Another gateway wrote first: fetch its state, so the reload sees it. */
		pthread_mutex_lock(&s->lock);
		set_save_state(s, SAVE_REFRESHING);
		pthread_mutex_unlock(&s->lock);
		rc = s->api->aio_read(s->io, s->oid, s->rbuf, sizeof(s->rbuf), refresh_done, s);
		if (rc)
			save_finish(s, rc);
		return;
	}
	if (rc < 0) {
		pthread_mutex_lock(&s->lock);
		if (unreachable_rc(rc))
			set_offline(s, true, rc);
		pthread_mutex_unlock(&s->lock);
		save_finish(s, unreachable_rc(rc) ? -ENOTCONN : rc);
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (!ver || ver > s->ver) {
		s->img = s->save_img;
		s->img_rc = 0;
		s->ver = ver ? ver : s->ver + 1;
	}
	set_save_state(s, SAVE_NOTIFYING);
	pthread_mutex_unlock(&s->lock);
	rc = s->api->aio_notify(s->io, s->oid, NOTIFY_TIMEOUT_MS, notify_done, s);
	if (rc)
		notify_done(s, rc, 0);
}

static void store_save(struct nvmf_resv_store *st, const struct nvmf_resv_image *img,
		       nvmf_resv_store_done done, void *arg)
{
	struct rados_store *s = (struct rados_store *)st;
	struct reactor *self = reactor_self();
	size_t len;
	uint64_t ver;
	int rc;

	pthread_mutex_lock(&s->lock);
	if (s->save != SAVE_IDLE) { /* the caller queues: a second save is a bug */
		pthread_mutex_unlock(&s->lock);
		done(arg, -EBUSY);
		return;
	}
	if (s->offline) {
		pthread_mutex_unlock(&s->lock);
		done(arg, -ENOTCONN);
		return;
	}
	s->done = done;
	s->done_arg = arg;
	s->caller = self;
	s->save_img = *img;
	ver = s->ver;
	set_save_state(s, SAVE_WRITING);
	pthread_mutex_unlock(&s->lock);

	len = resv_rados_encode(img, s->wbuf);
	rc = s->api->aio_write(s->io, s->oid, s->wbuf, len, ver, write_done, s);
	if (rc)
		write_done(s, rc, 0);
	if (self)
		return;
	/* Off a reactor: wait here, complete on this thread. */
	pthread_mutex_lock(&s->lock);
	while (s->save != SAVE_DONE)
		pthread_cond_wait(&s->cond, &s->lock);
	rc = s->save_rc;
	set_save_state(s, SAVE_IDLE);
	pthread_mutex_unlock(&s->lock);
	done(arg, rc);
}

static int store_load(struct nvmf_resv_store *st, struct nvmf_resv_image *img)
{
	struct rados_store *s = (struct rados_store *)st;
	int rc;

	pthread_mutex_lock(&s->lock);
	*img = s->img;
	rc = s->img_rc;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- Watching ------------------------------------------------------------------------------ */

static void watch_notify(void *arg, uint64_t notify_id, uint64_t cookie)
{
	struct rados_store *s = arg;
	bool ack_now = false;

	pthread_mutex_lock(&s->lock);
	if (s->nacks < MAX_ACKS) {
		s->acks[s->nacks].id = notify_id;
		s->acks[s->nacks].cookie = cookie;
		s->nacks++;
	} else {
		ack_now = true; /* the reload to come covers it */
	}
	s->refresh = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (ack_now)
		s->api->notify_ack(s->io, s->oid, notify_id, cookie);
}

static void watch_error(void *arg, uint64_t cookie, int err)
{
	struct rados_store *s = arg;

	(void)cookie;
	pthread_mutex_lock(&s->lock);
	s->watch_lost = true;
	set_offline(s, true, err < 0 ? err : -ENOTCONN);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Reload the namespace (if the state changed), then acknowledge the notifications that
 * were waiting for it. Reactor 0, or the store thread without reactors. */
static void reload_run(void *arg)
{
	struct rados_store *s = arg;
	struct {
		uint64_t id, cookie;
	} acks[MAX_ACKS];
	unsigned int n;
	bool changed;

	pthread_mutex_lock(&s->lock);
	s->reload_posted = false;
	changed = s->reload_changed;
	s->reload_changed = false;
	n = s->nacks;
	memcpy(acks, s->acks, n * sizeof(acks[0]));
	s->nacks = 0;
	pthread_mutex_unlock(&s->lock);
	if (changed && s->base.changed)
		s->base.changed(&s->base);
	for (unsigned int i = 0; i < n; i++)
		s->api->notify_ack(s->io, s->oid, acks[i].id, acks[i].cookie);
}

/* Store thread, lock held. */
static void reload_schedule(struct rados_store *s, bool changed)
{
	s->reload_changed |= changed;
	if (!s->reload_changed && !s->nacks)
		return;
	if (reactor_count() == 0) {
		pthread_mutex_unlock(&s->lock);
		reload_run(s);
		pthread_mutex_lock(&s->lock);
		return;
	}
	if (s->reload_posted)
		return; /* the posted run takes this change too */
	s->reload_posted = true;
	s->reload_post.fn = reload_run;
	s->reload_post.arg = s;
	reactor_post(reactor_get(0), &s->reload_post);
}

/* Store thread, lock held (dropped around the calls). Watch anew; 0 or -errno. */
static int rewatch(struct rados_store *s)
{
	uint64_t old = s->cookie, cookie = 0;
	bool had = s->watching;
	int rc;

	s->watching = false;
	s->watch_lost = false;
	pthread_mutex_unlock(&s->lock);
	if (had)
		s->api->unwatch(s->io, old);
	rc = s->api->watch(s->io, s->oid, watch_notify, watch_error, s, &cookie);
	pthread_mutex_lock(&s->lock);
	if (rc == 0) {
		s->watching = true;
		s->cookie = cookie;
	}
	return rc;
}

static void *store_main(void *arg)
{
	struct rados_store *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts;
		bool read = false;
		uint64_t ver = 0;
		unsigned int failures;
		int rc;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += s->offline ? 1 : g_check_s;
		while (!s->stop && !s->refresh && !s->watch_lost)
			if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
				break;
		if (s->stop)
			break;
		if (s->watching && !s->watch_lost) {
			uint64_t cookie = s->cookie;

			pthread_mutex_unlock(&s->lock);
			rc = s->api->watch_check(s->io, cookie);
			pthread_mutex_lock(&s->lock);
			if (rc < 0) {
				s->watch_lost = true;
				set_offline(s, true, rc);
			}
		}
		if (!s->watching || s->watch_lost) {
			rc = rewatch(s);
			if (rc) {
				set_offline(s, true, rc);
				continue;
			}
			read = true; /* notifications may have been missed */
		}
		read |= s->refresh || s->offline;
		s->refresh = false;
		if (!read)
			continue;
		failures = s->failures;
		pthread_mutex_unlock(&s->lock);
		rc = s->api->read(s->io, s->oid, s->tbuf, sizeof(s->tbuf), &ver);
		pthread_mutex_lock(&s->lock);
		if (rc < 0) {
			set_offline(s, true, rc);
			continue;
		}
		reload_schedule(s, take_read(s, s->tbuf, rc, ver));
		if (!s->watch_lost && s->failures == failures)
			set_offline(s, false, 0);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- Open / close -------------------------------------------------------------------------- */

static void store_close(struct nvmf_resv_store *st)
{
	struct rados_store *s = (struct rados_store *)st;

	if (!s)
		return;
	if (s->thr_started) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thr, NULL);
	}
	if (s->watching)
		s->api->unwatch(s->io, s->cookie);
	if (s->io)
		s->api->ioctx_destroy(s->io);
	if (s->cluster)
		s->api->shutdown(s->cluster);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct nvmf_resv_store_ops rados_store_ops = {
	.name = "rados",
	.load = store_load,
	.save = store_save,
	.always = true,
	.close = store_close,
};

int resv_store_rados_open(const struct rbd_spec *spec, const char *image_id, const char *label,
			  struct nvmf_resv_store **out, char *err, size_t errlen)
{
	const struct resv_rados_api *api = g_api_set ? g_api : resv_rados_lib_api;
	struct rados_store *s;
	char msg[512] = "";
	int rc;

	*out = NULL;
	if (!api)
		return bdev_err(err, errlen, -EOPNOTSUPP, "%s: this build has no librados", label);
	if (!image_id[0] || strlen(image_id) > 64)
		return bdev_err(err, errlen, -EINVAL, "%s: bad image id", label);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.ops = &rados_store_ops;
	s->api = api;
	s->save = SAVE_IDLE;
	snprintf(s->oid, sizeof(s->oid), RESV_OBJ_PREFIX "%s", image_id);
	snprintf(s->label, sizeof(s->label), "%s", label);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);

	rc = api->connect(spec, OP_TIMEOUT_S, &s->cluster, msg, sizeof(msg));
	if (rc) {
		s->cluster = NULL;
		bdev_err(err, errlen, rc, "%s: reservation state: %s", label,
			 msg[0] ? msg : strerror(-rc));
		goto fail;
	}
	rc = api->ioctx(s->cluster, spec->pool, spec->nspace, &s->io);
	if (rc) {
		s->io = NULL;
		bdev_err(err, errlen, rc, "%s: reservation state: pool %s: %s", label, spec->pool,
			 strerror(-rc));
		goto fail;
	}
	rc = api->create(s->io, s->oid);
	if (!rc)
		rc = api->watch(s->io, s->oid, watch_notify, watch_error, s, &s->cookie);
	if (rc) {
		bdev_err(err, errlen, rc, "%s: reservation state %s: %s", label, s->oid,
			 strerror(-rc));
		goto fail;
	}
	s->watching = true;
	rc = api->read(s->io, s->oid, s->tbuf, sizeof(s->tbuf), &s->ver);
	if (rc >= 0) {
		s->img_rc = resv_rados_decode(s->tbuf, (size_t)rc, &s->img);
		rc = s->img_rc == -EINVAL ? -EINVAL : 0;
	}
	if (rc) {
		bdev_err(err, errlen, rc, "%s: reservation state %s: %s", label, s->oid,
			 rc == -EINVAL ? "not a reservation state (remove the object to start "
					 "afresh)"
				       : strerror(-rc));
		goto fail;
	}
	if (pthread_create(&s->thr, NULL, store_main, s)) {
		rc = bdev_err(err, errlen, -EAGAIN, "%s: reservation state: no thread", label);
		goto fail;
	}
	s->thr_started = true;
	log_info("%s: reservations kept in %s (pool %s%s%s)", label, s->oid, spec->pool,
		 spec->nspace[0] ? "/" : "", spec->nspace);
	*out = &s->base;
	return 0;
fail:
	store_close(&s->base);
	return rc;
}

#ifndef HAVE_RBD
const struct resv_rados_api *const resv_rados_lib_api = NULL;
#endif
