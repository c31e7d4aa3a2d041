/* SPDX-License-Identifier: MIT */
/*
 * "rbd:POOL/IMAGE[:id=NAME][:conf=PATH][:keyring=PATH]": a Ceph RBD image through
 * librbd's asynchronous calls (the library behind the table in bdev_rbd_internal.h).
 *
 * One image handle per namespace, shared by every reactor. librbd's aio calls are safe
 * from any thread, so submitting takes no lock of ours. Per-reactor image handles were
 * rejected: each handle is a separate exclusive-lock owner, and the lock would move back
 * and forth between the handles of one process on every write from another reactor.
 * librbd's own completion eventfd (rbd_set_image_notification) is one per image, so it
 * cannot wake the right reactor either. Instead each request carries a completion
 * callback (compare-and-write has no other way to complete, see tests/ceph/README.md);
 * it runs on a librbd thread, pushes the request onto the submitting reactor's lock-free
 * list and, when the list was empty, signals that reactor's eventfd. An ev_io on the
 * reactor's loop reaps the list and runs the callbacks there. Reactor state (eventfd, list,
 * compare-and-write bounce slots) is created on a reactor's first request, like the file
 * backend's io_uring, and closed by its reactor_on_exit() hook.
 *
 * Mapping (io->be.mode is the step kind; a request is one or a few library calls):
 *   READ/WRITE    rbd_aio_readv/writev on the caller's iovecs (no copy); a request whose
 *                 iovecs hold more than len bytes ends with a step on the partial iovec.
 *   FLUSH         rbd_aio_flush.
 *   WRITE_ZEROES  rbd_aio_write_zeroes with THICK_PROVISION: zeroes, stays allocated.
 *   DISCARD       librbd skips a discard of part of an object (rbd_skip_partial_discard)
 *                 and the data stay. So the whole objects (object sets when striped) in
 *                 the range are discarded with rbd_aio_discard, and the partial ones at
 *                 either end are zeroed with rbd_aio_write_zeroes: reads of discarded
 *                 blocks return zeroes, as DLFEAT promises.
 *   COMPARE_AND_WRITE  rbd_aio_compare_and_write one 512-byte sector at a time (librbd's
 *                 limit), the compare and write data gathered into a per-reactor bounce
 *                 slot; each sector is atomic against every client of the image. A
 *                 mismatch gives -EILSEQ, io->caw_miscompare = its offset in the request.
 * FUA: with librbd's cache off (rbd_cache=false on the handle; an image or pool setting
 * turning it back on is refused at open) a write completes once the OSDs have it on
 * stable storage, so every write is FUA and volatile_cache is false.
 *
 * Off-reactor (tools, tests) each step waits for its completion on a condition variable.
 * A watcher thread per namespace polls the size (woken early by rbd_update_watch) and
 * reports a change through the bdev resize hook.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "bdev.h"
#include "bdev_internal.h"
#include "bdev_rbd_internal.h"
#include "common/log.h"
#include "reactor/reactor.h"
#include "resv_store_rados_internal.h"

#define MAX_RW_IOV      1024 /* IOV_MAX: librbd refuses more */
#define DRAIN_TIMEOUT_S 30   /* waiting for in-flight requests when a reactor stops */

/* io->be.mode */
enum rbd_step {
	STEP_RW,
	STEP_FLUSH,
	STEP_WRITE_ZEROES,
	STEP_DISCARD, /* whole objects discarded, partial ones zeroed */
	STEP_CAW,
};

struct rbd_bdev {
	const struct rbd_api *api;
	void *cluster;
	void *image;
	uint64_t granule; /* bytes a discard deallocates whole: object set size */
	struct rbd_spec spec;
	char image_id[64];
	/* Size watcher (off the reactors). */
	pthread_t thr;
	bool thr_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool changed; /* the update watch fired */
	bool watching;
	uint64_t watch_handle;
};

static const struct rbd_api *g_api;
static bool g_api_set;
static unsigned int g_poll_s = 5;

void bdev_rbd_set_api(const struct rbd_api *api)
{
	g_api = api;
	g_api_set = api != NULL;
}

void bdev_rbd_set_poll_interval(unsigned int seconds)
{
	g_poll_s = seconds ? seconds : 1;
}

static const struct rbd_api *api_get(void)
{
	return g_api_set ? g_api : bdev_rbd_librbd_api;
}

/* ---- Spec -------------------------------------------------------------------------------- */

/* Copy the next token of @*p up to an unescaped char of @stops into @dst (unescaped). */
static int take(const char **p, const char *stops, char *dst, size_t cap)
{
	size_t n = 0;
	const char *s = *p;

	while (*s && !strchr(stops, *s)) {
		char c = *s++;

		if (c == '\\') {
			if (!*s)
				return -EINVAL;
			c = *s++;
		}
		if (n + 1 >= cap)
			return -ENAMETOOLONG;
		dst[n++] = c;
	}
	dst[n] = '\0';
	*p = s;
	return 0;
}

int bdev_rbd_parse_spec(const char *arg, struct rbd_spec *o, char *err, size_t errlen)
{
	char part[3][256];
	const char *p = arg;
	int nparts = 0;

	memset(o, 0, sizeof(*o));
	if (!arg || !*arg)
		return bdev_err(err, errlen, -EINVAL,
				"rbd: expected rbd:POOL/IMAGE[:id=NAME]"
				"[:conf=PATH][:keyring=PATH]");
	for (;;) {
		if (nparts == 3)
			return bdev_err(err, errlen, -EINVAL,
					"rbd:%s: too many '/' (POOL/IMAGE or "
					"POOL/NAMESPACE/IMAGE)",
					arg);
		if (take(&p, "/:@", part[nparts], sizeof(part[0])))
			return bdev_err(err, errlen, -EINVAL, "rbd:%s: name too long or bad escape",
					arg);
		if (!part[nparts][0])
			return bdev_err(err, errlen, -EINVAL, "rbd:%s: empty %s name", arg,
					nparts == 0 ? "pool" : "image");
		nparts++;
		if (*p != '/')
			break;
		p++;
	}
	if (nparts < 2)
		return bdev_err(err, errlen, -EINVAL, "rbd:%s: expected POOL/IMAGE", arg);
	if (*p == '@')
		return bdev_err(err, errlen, -EINVAL,
				"rbd:%s: snapshots are read-only and cannot "
				"be exported",
				arg);
	if (strlen(part[0]) >= sizeof(o->pool) ||
	    (nparts == 3 && strlen(part[1]) >= sizeof(o->nspace)))
		return bdev_err(err, errlen, -EINVAL, "rbd:%s: pool or namespace name too long",
				arg);
	memcpy(o->pool, part[0], strlen(part[0]) + 1);
	if (nparts == 3)
		memcpy(o->nspace, part[1], strlen(part[1]) + 1);
	memcpy(o->image, part[nparts - 1], strlen(part[nparts - 1]) + 1);
	while (*p == ':') {
		char key[32], val[1024];
		char *dst;
		size_t cap;

		p++;
		if (take(&p, "=:", key, sizeof(key)) || *p != '=')
			return bdev_err(err, errlen, -EINVAL,
					"rbd:%s: expected KEY=VALUE after ':'"
					" (id, conf, keyring)",
					arg);
		p++;
		if (take(&p, ":", val, sizeof(val)))
			return bdev_err(err, errlen, -EINVAL,
					"rbd:%s: value of \"%s\" too long or "
					"bad escape",
					arg, key);
		if (!strcmp(key, "id")) {
			dst = o->id;
			cap = sizeof(o->id);
		} else if (!strcmp(key, "conf")) {
			dst = o->conf;
			cap = sizeof(o->conf);
		} else if (!strcmp(key, "keyring")) {
			dst = o->keyring;
			cap = sizeof(o->keyring);
		} else {
			return bdev_err(err, errlen, -EINVAL,
					"rbd:%s: unknown option \"%s\" (id, "
					"conf, keyring)",
					arg, key);
		}
		if (!val[0])
			return bdev_err(err, errlen, -EINVAL, "rbd:%s: empty \"%s\"", arg, key);
		if (dst[0])
			return bdev_err(err, errlen, -EINVAL, "rbd:%s: \"%s\" given twice", arg,
					key);
		if (strlen(val) >= cap)
			return bdev_err(err, errlen, -EINVAL, "rbd:%s: \"%s\" too long", arg, key);
		if (!strcmp(key, "id") && !strncmp(val, "client.", 7))
			memmove(val, val + 7, strlen(val + 7) + 1);
		snprintf(dst, cap, "%s", val);
	}
	if (*p)
		return bdev_err(err, errlen, -EINVAL, "rbd:%s: unexpected \"%s\"", arg, p);
	return 0;
}

/* ---- Steps -------------------------------------------------------------------------------- */

/* Gather @len bytes at offset @off of @iov into @dst. */
static void gather(const struct iovec *iov, int iovcnt, uint64_t off, uint8_t *dst, size_t len)
{
	for (int i = 0; i < iovcnt && len; i++) {
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - off < len ? iov[i].iov_len - (size_t)off : len;
		memcpy(dst, (const uint8_t *)iov[i].iov_base + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

/*
 * Issue the next step of @io (io->be.aux: its length, except for CAW); @bounce holds
 * 2 * RBD_CAW_SECTOR bytes for CAW. 0, or -errno when the library refused the call.
 */
static int step_issue(struct rbd_bdev *rb, struct bdev_io *io, uint8_t *bounce)
{
	const struct rbd_api *api = rb->api;
	uint64_t cur = io->offset + io->be.done;
	uint64_t left = io->len - io->be.done;

	switch ((enum rbd_step)io->be.mode) {
	case STEP_FLUSH:
		return api->aio_flush(rb->image, io);
	case STEP_WRITE_ZEROES:
		io->be.aux = left;
		return api->aio_write_zeroes(rb->image, cur, left, true, io);
	case STEP_DISCARD: {
		uint64_t g = rb->granule;

		if (cur % g == 0 && left >= g) {
			io->be.aux = left / g * g;
			return api->aio_discard(rb->image, cur, io->be.aux, io);
		}
		io->be.aux = (cur / g + 1) * g - cur;
		if (io->be.aux > left)
			io->be.aux = left;
		return api->aio_write_zeroes(rb->image, cur, io->be.aux, false, io);
	}
	case STEP_CAW:
		gather(io->cmp_iov, io->cmp_iovcnt, io->be.done, bounce, RBD_CAW_SECTOR);
		gather(io->iov, io->iovcnt, io->be.done, bounce + RBD_CAW_SECTOR, RBD_CAW_SECTOR);
		io->be.aux = UINT64_MAX;
		return api->aio_compare_and_write(rb->image, cur, RBD_CAW_SECTOR, bounce,
						  bounce + RBD_CAW_SECTOR, &io->be.aux, io);
	case STEP_RW:
		break;
	}
	/* Skip empty iovecs; bdev_io_check() made sure enough bytes follow. */
	while (io->be.iov_off == io->iov[io->be.iov_idx].iov_len) {
		io->be.iov_idx++;
		io->be.iov_off = 0;
	}
	if (io->be.iov_off == 0) {
		/* The longest run of whole iovecs that does not go past the request. */
		uint64_t sum = 0;
		int i = io->be.iov_idx;

		while (i < io->iovcnt && i - io->be.iov_idx < MAX_RW_IOV &&
		       sum + io->iov[i].iov_len <= left)
			sum += io->iov[i++].iov_len;
		if (i > io->be.iov_idx) {
			io->be.aux = sum;
			return io->op == BDEV_OP_READ
				       ? api->aio_readv(rb->image, &io->iov[io->be.iov_idx],
							i - io->be.iov_idx, cur, io)
				       : api->aio_writev(rb->image, &io->iov[io->be.iov_idx],
							 i - io->be.iov_idx, cur, io);
		}
	}
	/* A partly moved iovec, or one reaching past the end of the request. */
	io->be.one.iov_base = (uint8_t *)io->iov[io->be.iov_idx].iov_base + io->be.iov_off;
	io->be.one.iov_len = io->iov[io->be.iov_idx].iov_len - io->be.iov_off;
	if (io->be.one.iov_len > left)
		io->be.one.iov_len = (size_t)left;
	io->be.aux = io->be.one.iov_len;
	return io->op == BDEV_OP_READ ? api->aio_readv(rb->image, &io->be.one, 1, cur, io)
				      : api->aio_writev(rb->image, &io->be.one, 1, cur, io);
}

/* Advance the RW position by @n bytes. */
static void iov_advance(struct bdev_io *io, uint64_t n)
{
	while (n) {
		size_t avail = io->iov[io->be.iov_idx].iov_len - io->be.iov_off;

		if (n < avail) {
			io->be.iov_off += (size_t)n;
			return;
		}
		n -= avail;
		io->be.iov_idx++;
		io->be.iov_off = 0;
	}
}

/* Account a step's result; true when @io is finished, with *@status. */
static bool step_done(struct bdev_io *io, int64_t res, int *status)
{
	uint64_t cur = io->offset + io->be.done;

	if (res < 0) {
		if (res == -EILSEQ && io->be.mode == STEP_CAW) {
			uint64_t m = io->be.aux;

			/* A mismatch outside the sector would be a library bug: blame its start. */
			if (m < cur || m >= cur + RBD_CAW_SECTOR)
				m = cur;
			io->caw_miscompare = m - io->offset;
		} else if (res == -EILSEQ) {
			res = -EIO;
		}
		*status = res < -4095 ? -EIO : (int)res;
		return true;
	}
	switch ((enum rbd_step)io->be.mode) {
	case STEP_FLUSH:
		*status = 0;
		return true;
	case STEP_CAW:
		io->be.done += RBD_CAW_SECTOR;
		break;
	case STEP_RW:
		if (io->op == BDEV_OP_READ && (uint64_t)res != io->be.aux) {
			*status = -EIO; /* short read: the image shrank under us */
			return true;
		}
		iov_advance(io, io->be.aux);
		io->be.done += io->be.aux;
		break;
	case STEP_WRITE_ZEROES:
	case STEP_DISCARD:
		io->be.done += io->be.aux;
		break;
	}
	if (io->be.done < io->len)
		return false;
	*status = 0;
	return true;
}

static void io_start(struct bdev *bdev, struct bdev_io *io)
{
	static const uint32_t modes[] = {
		[BDEV_OP_READ] = STEP_RW,         [BDEV_OP_WRITE] = STEP_RW,
		[BDEV_OP_FLUSH] = STEP_FLUSH,     [BDEV_OP_WRITE_ZEROES] = STEP_WRITE_ZEROES,
		[BDEV_OP_DISCARD] = STEP_DISCARD, [BDEV_OP_COMPARE_AND_WRITE] = STEP_CAW,
	};

	io->be.bdev = bdev;
	io->be.next = NULL;
	io->be.done = 0;
	io->be.iov_idx = 0;
	io->be.iov_off = 0;
	io->be.retries = 0;
	io->be.mode = modes[io->op];
	io->be.result = 0;
	io->be.aux = 0;
}

/* ---- Completion delivery ------------------------------------------------------------------ */

/* Who takes a request's step completion: a reactor's list, or a waiting thread. */
struct rbd_owner {
	void (*deliver)(struct rbd_owner *o, struct bdev_io *io);
};

void bdev_rbd_aio_done(void *arg, int64_t result)
{
	struct bdev_io *io = arg;
	struct rbd_owner *o = io->be.owner;

	io->be.result = result;
	o->deliver(o, io);
}

/* Off-reactor: wait for each step on a condition variable. */
struct rbd_sync {
	struct rbd_owner owner;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static void sync_deliver(struct rbd_owner *o, struct bdev_io *io)
{
	struct rbd_sync *s = (struct rbd_sync *)o;

	pthread_mutex_lock(&s->lock);
	s->done = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void run_sync(struct rbd_bdev *rb, struct bdev_io *io)
{
	struct rbd_sync s = { .owner.deliver = sync_deliver };
	uint8_t bounce[2 * RBD_CAW_SECTOR];
	int status, rc;

	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	io->be.owner = &s.owner;
	for (;;) {
		s.done = false;
		rc = step_issue(rb, io, bounce);
		if (rc) {
			status = rc;
			break;
		}
		pthread_mutex_lock(&s.lock);
		while (!s.done)
			pthread_cond_wait(&s.cond, &s.lock);
		pthread_mutex_unlock(&s.lock);
		if (step_done(io, io->be.result, &status))
			break;
	}
	pthread_cond_destroy(&s.cond);
	pthread_mutex_destroy(&s.lock);
	bdev_io_done(io, status);
}

/* A reactor's completion list and compare-and-write bounce slots (all rbd namespaces). */
struct rbd_reactor {
	struct rbd_owner owner;
	struct bdev_io *done_head; /* pushed by library threads, taken whole by the reactor */
	struct ev_loop *loop;
	struct reactor *reactor;
	int efd;
	ev_io efd_w;
	unsigned int inflight; /* steps issued and not yet reaped (owner thread only) */
	bool loop_ref;
	uint8_t (*slots)[2 * RBD_CAW_SECTOR];
	uint16_t free_slots[RBD_CAW_SLOTS];
	unsigned int nfree;
	struct bdev_io *wait_head; /* CAW requests waiting for a slot (FIFO) */
	struct bdev_io **wait_tail;
};

static __thread struct rbd_reactor *tls_rr;
static __thread bool tls_rr_failed;

static void rr_deliver(struct rbd_owner *o, struct bdev_io *io)
{
	struct rbd_reactor *rr = (struct rbd_reactor *)o;
	struct bdev_io *old = __atomic_load_n(&rr->done_head, __ATOMIC_RELAXED);
	uint64_t one = 1;

	do {
		io->be.next = old;
	} while (!__atomic_compare_exchange_n(&rr->done_head, &old, io, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	/* Only the push onto an empty list wakes the reactor; it takes the whole list. */
	if (!old && write(rr->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("rbd: eventfd: %s", strerror(errno));
}

static void rr_update_ref(struct rbd_reactor *rr)
{
	bool busy = rr->inflight || rr->wait_head;

	if (busy && !rr->loop_ref)
		ev_ref(rr->loop);
	else if (!busy && rr->loop_ref)
		ev_unref(rr->loop);
	rr->loop_ref = busy;
}

static void rr_issue(struct rbd_reactor *rr, struct bdev_io *io);

/* io->be.retries: 1 while a CAW request holds a bounce slot (its index in be.iov_idx). */
static void rr_finish(struct rbd_reactor *rr, struct bdev_io *io, int status)
{
	if (io->be.mode == STEP_CAW && io->be.retries) {
		struct bdev_io *w = rr->wait_head;

		io->be.retries = 0;
		rr->free_slots[rr->nfree++] = (uint16_t)io->be.iov_idx;
		if (w) { /* the oldest waiter gets the slot */
			rr->wait_head = w->be.next;
			if (!rr->wait_head)
				rr->wait_tail = &rr->wait_head;
			rr_issue(rr, w);
		}
	}
	bdev_io_done(io, status);
}

static void rr_issue(struct rbd_reactor *rr, struct bdev_io *io)
{
	struct rbd_bdev *rb = io->be.bdev->ctx;
	uint8_t *bounce = NULL;
	int rc;

	if (io->be.mode == STEP_CAW) {
		if (!io->be.retries) {
			/* Slots go to waiters first as they free up, so none free: wait. */
			if (!rr->nfree) {
				io->be.next = NULL;
				*rr->wait_tail = io;
				rr->wait_tail = &io->be.next;
				rr_update_ref(rr);
				return;
			}
			io->be.iov_idx = rr->free_slots[--rr->nfree];
			io->be.retries = 1;
		}
		bounce = rr->slots[io->be.iov_idx];
	}
	io->be.owner = &rr->owner;
	rr->inflight++;
	rc = step_issue(rb, io, bounce);
	if (rc) {
		rr->inflight--;
		rr_finish(rr, io, rc);
	}
	rr_update_ref(rr);
}

static void rr_reap(struct rbd_reactor *rr)
{
	struct bdev_io *list = __atomic_exchange_n(&rr->done_head, NULL, __ATOMIC_ACQUIRE);
	struct bdev_io *fifo = NULL;

	while (list) { /* pushed newest first: reverse */
		struct bdev_io *next = list->be.next;

		list->be.next = fifo;
		fifo = list;
		list = next;
	}
	while (fifo) {
		struct bdev_io *io = fifo;
		int status;

		fifo = io->be.next;
		rr->inflight--;
		if (step_done(io, io->be.result, &status))
			rr_finish(rr, io, status);
		else
			rr_issue(rr, io);
	}
	rr_update_ref(rr);
}

static void rr_efd_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rbd_reactor *rr = w->data;
	uint64_t v;

	if (read(rr->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_err("rbd: eventfd: %s", strerror(errno));
	rr_reap(rr);
}

static void rr_destroy(struct rbd_reactor *rr)
{
	time_t deadline = time(NULL) + DRAIN_TIMEOUT_S;

	while ((rr->inflight || rr->wait_head) && time(NULL) < deadline) {
		usleep(1000);
		rr_reap(rr);
	}
	if (rr->inflight || rr->wait_head) {
		/* Library threads may still push onto this list: leak it rather than crash. */
		log_err("rbd: reactor stopping with %u requests still pending", rr->inflight);
		return;
	}
	if (rr->loop_ref)
		ev_unref(rr->loop);
	ev_ref(rr->loop);
	ev_io_stop(rr->loop, &rr->efd_w);
	close(rr->efd);
	if (tls_rr == rr)
		tls_rr = NULL;
	free(rr->slots);
	free(rr);
}

static void rr_reactor_exit(void *arg)
{
	rr_destroy(arg);
}

static struct rbd_reactor *rr_create(struct reactor *r)
{
	struct rbd_reactor *rr = calloc(1, sizeof(*rr));

	if (!rr)
		return NULL;
	rr->slots = calloc(RBD_CAW_SLOTS, sizeof(*rr->slots));
	rr->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!rr->slots || rr->efd < 0) {
		if (rr->efd >= 0)
			close(rr->efd);
		free(rr->slots);
		free(rr);
		return NULL;
	}
	rr->owner.deliver = rr_deliver;
	rr->loop = r->loop;
	rr->reactor = r;
	rr->wait_tail = &rr->wait_head;
	for (unsigned int i = 0; i < RBD_CAW_SLOTS; i++)
		rr->free_slots[i] = (uint16_t)(RBD_CAW_SLOTS - 1 - i);
	rr->nfree = RBD_CAW_SLOTS;
	ev_io_init(&rr->efd_w, rr_efd_cb, rr->efd, EV_READ);
	rr->efd_w.data = rr;
	ev_io_start(rr->loop, &rr->efd_w);
	ev_unref(rr->loop); /* pending requests keep the loop alive, not the watcher */
	return rr;
}

/* The calling reactor's state, created on first use; NULL off-reactor (*@on_reactor
 * false) or when it cannot be created. */
static struct rbd_reactor *rr_get(bool *on_reactor)
{
	struct reactor *r;
	struct rbd_reactor *rr;

	*on_reactor = true;
	if (tls_rr)
		return tls_rr;
	r = reactor_self();
	if (!r) {
		*on_reactor = false;
		return NULL;
	}
	if (tls_rr_failed)
		return NULL;
	rr = rr_create(r);
	if (rr && reactor_on_exit(r, rr_reactor_exit, rr)) {
		rr_destroy(rr);
		rr = NULL;
	}
	if (!rr) {
		log_err("reactor %u: no eventfd, rbd namespaces fail every request", r->id);
		tls_rr_failed = true;
		return NULL;
	}
	tls_rr = rr;
	return rr;
}

static void rbd_submit(struct bdev *bdev, struct bdev_io *io)
{
	struct rbd_reactor *rr;
	bool on_reactor;
	int rc;

	rc = bdev_io_check(bdev, io);
	if (rc) {
		bdev_io_done(io, rc);
		return;
	}
	if (io->op != BDEV_OP_FLUSH && io->len == 0) {
		bdev_io_done(io, 0);
		return;
	}
	io_start(bdev, io);
	rr = rr_get(&on_reactor);
	if (rr)
		rr_issue(rr, io);
	else if (!on_reactor)
		run_sync(bdev->ctx, io);
	else
		bdev_io_done(io, -EIO);
}

/* ---- Size watcher ------------------------------------------------------------------------- */

static void watch_cb(void *arg)
{
	struct rbd_bdev *rb = arg;

	pthread_mutex_lock(&rb->lock);
	rb->changed = true;
	pthread_cond_signal(&rb->cond);
	pthread_mutex_unlock(&rb->lock);
}

static void check_size(struct bdev *bdev)
{
	struct rbd_bdev *rb = bdev->ctx;
	uint64_t size, old = __atomic_load_n(&bdev->size, __ATOMIC_RELAXED);
	void (*hook)(struct bdev *, uint64_t, uint64_t, void *);

	if (rb->api->get_size(rb->image, &size))
		return;
	size = size / bdev->block_size * bdev->block_size;
	if (size == old || size == 0)
		return;
	__atomic_store_n(&bdev->size, size, __ATOMIC_RELEASE);
	log_notice("%s: image size changed from %" PRIu64 " to %" PRIu64 " bytes", bdev->spec, old,
		   size);
	hook = __atomic_load_n(&bdev->resize_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook(bdev, old, size, __atomic_load_n(&bdev->resize_arg, __ATOMIC_RELAXED));
}

static void *watch_main(void *arg)
{
	struct bdev *bdev = arg;
	struct rbd_bdev *rb = bdev->ctx;

	pthread_mutex_lock(&rb->lock);
	while (!rb->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += g_poll_s;
		while (!rb->stop && !rb->changed)
			if (pthread_cond_timedwait(&rb->cond, &rb->lock, &ts) == ETIMEDOUT)
				break;
		if (rb->stop)
			break;
		rb->changed = false;
		pthread_mutex_unlock(&rb->lock);
		check_size(bdev);
		pthread_mutex_lock(&rb->lock);
	}
	pthread_mutex_unlock(&rb->lock);
	return NULL;
}

/* ---- Open / close ------------------------------------------------------------------------- */

static void rbd_close(struct bdev *bdev)
{
	struct rbd_bdev *rb = bdev->ctx;

	if (!rb)
		return;
	if (rb->thr_started) {
		pthread_mutex_lock(&rb->lock);
		rb->stop = true;
		pthread_cond_signal(&rb->cond);
		pthread_mutex_unlock(&rb->lock);
		pthread_join(rb->thr, NULL);
	}
	if (rb->watching)
		rb->api->unwatch(rb->image, rb->watch_handle);
	if (rb->image)
		rb->api->close(rb->image);
	if (rb->cluster)
		rb->api->shutdown(rb->cluster);
	pthread_cond_destroy(&rb->cond);
	pthread_mutex_destroy(&rb->lock);
	free(rb);
	bdev->ctx = NULL;
}

static int rbd_identity(struct bdev *bdev, struct rbd_bdev *rb)
{
	char id[64], fsid[64];
	int64_t pool = rb->api->pool_id(rb->image);
	int rc;

	rc = rb->api->get_id(rb->image, id, sizeof(id));
	if (rc || !id[0])
		return bdev_open_msg(rc ? rc : -EINVAL, "%s: cannot read the image id: %s",
				     bdev->spec, strerror(rc ? -rc : EINVAL));
	snprintf(rb->image_id, sizeof(rb->image_id), "%s", id);
	if (pool < 0)
		return bdev_open_msg((int)pool, "%s: cannot read the pool id", bdev->spec);
	if (rb->api->fsid(rb->cluster, fsid, sizeof(fsid)))
		fsid[0] = '\0';
	snprintf(bdev->identity, sizeof(bdev->identity), "rbd:%s/%" PRId64 "/%s", fsid, pool, id);
	return 0;
}

static int rbd_open(struct bdev *bdev, const char *arg)
{
	struct rbd_spec spec;
	struct rbd_bdev *rb;
	char msg[512] = "";
	uint64_t size, obj = 0, stripes = 0;
	int rc;

	rc = bdev_rbd_parse_spec(arg, &spec, msg, sizeof(msg));
	if (rc)
		return bdev_open_msg(rc, "%s", msg);
	if (!api_get())
		return bdev_open_msg(-EOPNOTSUPP,
				     "%s: this build has no Ceph RBD support "
				     "(configure found no librbd)",
				     bdev->spec);
	if (!bdev->block_size)
		bdev->block_size = 512;
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return -ENOMEM;
	rb->api = api_get();
	rb->spec = spec;
	pthread_mutex_init(&rb->lock, NULL);
	pthread_cond_init(&rb->cond, NULL);
	bdev->ctx = rb;
	rc = rb->api->connect(&spec, &rb->cluster, msg, sizeof(msg));
	if (!rc)
		rc = rb->api->open(rb->cluster, &spec, &rb->image, msg, sizeof(msg));
	if (rc) {
		rbd_close(bdev);
		return bdev_open_msg(rc, "%s: %s", bdev->spec, msg[0] ? msg : strerror(-rc));
	}
	rc = rb->api->get_size(rb->image, &size);
	if (!rc)
		rc = rb->api->layout(rb->image, &obj, &stripes);
	if (rc) {
		rbd_close(bdev);
		return bdev_open_msg(rc, "%s: cannot read the image geometry: %s", bdev->spec,
				     strerror(-rc));
	}
	rb->granule = obj * (stripes ? stripes : 1);
	if (!rb->granule || rb->granule % bdev->block_size) {
		rbd_close(bdev);
		return bdev_open_msg(-EINVAL,
				     "%s: object size %" PRIu64 " is not a multiple of "
				     "the %u-byte block size",
				     bdev->spec, obj, bdev->block_size);
	}
	if (size % bdev->block_size)
		log_warn("%s: size %" PRIu64 " is not a multiple of %u: the last %" PRIu64 " bytes "
			 "are "
			 "not "
			 "exporte"
			 "d",
			 bdev->spec, size, bdev->block_size, size % bdev->block_size);
	bdev->size = size / bdev->block_size * bdev->block_size;
	if (!bdev->size) {
		rbd_close(bdev);
		return bdev_open_msg(-EINVAL, "%s: image smaller than one %u-byte block",
				     bdev->spec, bdev->block_size);
	}
	rc = rbd_identity(bdev, rb);
	if (rc) {
		rbd_close(bdev);
		return rc;
	}
	bdev->volatile_cache = false; /* librbd's cache is off: completed means stable */
	bdev->persistent = true;
	bdev->path[0] = '\0';
	bdev->caw_unit = RBD_CAW_SECTOR;
	bdev->caw_shared = true;
	if (bdev->block_size > RBD_CAW_SECTOR)
		log_notice("%s: compare-and-write is atomic per %u bytes only, less than one "
			   "%u-byte block: fused Compare and Write and SCSI COMPARE AND WRITE are "
			   "refused; serve it with 512-byte blocks where they are used (VMware "
			   "ATS)",
			   bdev->spec, RBD_CAW_SECTOR, bdev->block_size);
	if (rb->api->watch(rb->image, watch_cb, rb, &rb->watch_handle) == 0)
		rb->watching = true;
	else
		log_warn("%s: no update watch: size changes are seen by polling only", bdev->spec);
	if (pthread_create(&rb->thr, NULL, watch_main, bdev) == 0)
		rb->thr_started = true;
	else
		log_warn("%s: no size watcher thread: resizes are not noticed", bdev->spec);
	return 0;
}

/* The image's reservation state: "nvmeof_resv.IMAGE_ID" in its pool (resv_store_rados.c). */
static int rbd_resv_store_open(struct bdev *bdev, const char *label, struct nvmf_resv_store **out,
			       char *err, size_t errlen)
{
	struct rbd_bdev *rb = bdev->ctx;

	return resv_store_rados_open(&rb->spec, rb->image_id, label, out, err, errlen);
}

const struct bdev_ops bdev_rbd_ops = {
	.name = "rbd",
	.open = rbd_open,
	.close = rbd_close,
	.submit = rbd_submit,
	.resv_store_open = rbd_resv_store_open,
};

#ifndef HAVE_RBD
const struct rbd_api *const bdev_rbd_librbd_api = NULL;
#endif
