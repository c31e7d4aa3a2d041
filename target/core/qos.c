/* SPDX-License-Identifier: MIT */
/*
 * Per-namespace and per-(namespace, host) QoS (see nvmf.h for the policy): token buckets
 * per (limit set, reactor), the waiting commands of each bucket in arrival order, and a
 * 1 ms timer per bucket that runs only while commands wait. Limits change from any thread
 * (relaxed stores of whole fields); buckets read them on each refill. Buckets are touched
 * by their reactor only.
 *
 * A command of a host with its own limits on the namespace passes two stages: its host's
 * buckets, then the namespace's (when the namespace has limits too). Released from the
 * first, it may wait again in the second; it executes once through both.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "qos.h"
#include "reactor/reactor.h"

#define QOS_TICK_S     0.001
#define QOS_ACTIVE_NS  200000000ull /* a reactor counts for the split this long after I/O */
#define QOS_RECOUNT_NS 50000000ull  /* how often a bucket re-counts the active reactors */
#define QOS_BURST_MS   10           /* tokens an idle bucket may save up, in ms of its rate */
#define QOS_LATE_MS    1000         /* ... and a busy one, whose timer ran late */
#define MIB            (1024ull * 1024ull)

enum qos_kind { Q_RW_IOS, Q_R_IOS, Q_W_IOS, Q_RW_BYTES, Q_R_BYTES, Q_W_BYTES, Q_NKINDS };

struct qos_bucket {
	/* owner reactor only */
	struct nvmf_ns *ns;
	struct nvmf_qos *q; /* the limit set it belongs to */
	struct reactor *r;
	int64_t tokens[Q_NKINDS]; /* thousandths of a command / of a byte */
	uint64_t last_ns;         /* last refill */
	unsigned int share;       /* reactors the limit is split among */
	uint64_t share_ns;        /* when it was counted */
	TAILQ_HEAD(, nvmf_req) waiting;
	ev_timer timer;
	bool timer_on;
	TAILQ_ENTRY(qos_bucket) link; /* this reactor's buckets with waiting commands */
	/* read by other threads (relaxed) */
	uint64_t last_use_ns;
	uint64_t nwaiting;
	uint64_t delayed;
} __attribute__((aligned(64)));

struct nvmf_qos {
	uint64_t lim[Q_NKINDS]; /* per second: commands, or bytes; 0 = none */
	unsigned int nslots;
	struct qos_bucket *b; /* [nslots], by reactor id */
	bool host;            /* a host's limits (first stage), not the namespace's */
};

/* The hosts with limits of their own on a namespace. Slots are taken in order and keep
 * their host for the namespace's lifetime (readers on the I/O path compare names without
 * a lock); limits removed leave the slot with all-zero limits. */
struct qos_host {
	char nqn[NVME_NQN_FIELD];
	uint64_t hash;
	struct nvmf_qos *q;
};

struct nvmf_qos_hosts {
	unsigned int n; /* atomic: slots in use */
	struct qos_host h[NVMF_QOS_MAX_HOSTS];
};

/* Buckets of the calling reactor that have commands waiting. */
static __thread TAILQ_HEAD(qos_busy, qos_bucket) t_busy;
static __thread bool t_busy_init;

static struct qos_busy *busy(void)
{
	if (!t_busy_init) {
		TAILQ_INIT(&t_busy);
		t_busy_init = true;
	}
	return &t_busy;
}

static void limits_to_kinds(const struct nvmf_qos_limits *l, uint64_t *k)
{
	k[Q_RW_IOS] = l->rw_ios_per_sec;
	k[Q_R_IOS] = l->r_ios_per_sec;
	k[Q_W_IOS] = l->w_ios_per_sec;
	k[Q_RW_BYTES] = l->rw_mbytes_per_sec * MIB;
	k[Q_R_BYTES] = l->r_mbytes_per_sec * MIB;
	k[Q_W_BYTES] = l->w_mbytes_per_sec * MIB;
}

/* A new limit set with a bucket per reactor (freed with the namespace only: reactors may
 * hold it any time). */
static struct nvmf_qos *qos_alloc(bool host)
{
	unsigned int n = reactor_count() ? reactor_count() : 1;
	struct nvmf_qos *q = calloc(1, sizeof(*q));

	if (!q || posix_memalign((void **)&q->b, 64, n * sizeof(*q->b))) {
		free(q);
		return NULL;
	}
	memset(q->b, 0, n * sizeof(*q->b));
	q->nslots = n;
	q->host = host;
	return q;
}

static void qos_free(struct nvmf_qos *q)
{
	if (!q)
		return;
	free(q->b);
	free(q);
}

static void qos_store(struct nvmf_qos *q, const uint64_t *k)
{
	for (unsigned int i = 0; i < Q_NKINDS; i++)
		__atomic_store_n(&q->lim[i], k[i], __ATOMIC_RELAXED);
}

static void qos_load(const struct nvmf_qos *q, struct nvmf_qos_limits *out)
{
	memset(out, 0, sizeof(*out));
	if (!q)
		return;
	out->rw_ios_per_sec = __atomic_load_n(&q->lim[Q_RW_IOS], __ATOMIC_RELAXED);
	out->r_ios_per_sec = __atomic_load_n(&q->lim[Q_R_IOS], __ATOMIC_RELAXED);
	out->w_ios_per_sec = __atomic_load_n(&q->lim[Q_W_IOS], __ATOMIC_RELAXED);
	out->rw_mbytes_per_sec = __atomic_load_n(&q->lim[Q_RW_BYTES], __ATOMIC_RELAXED) / MIB;
	out->r_mbytes_per_sec = __atomic_load_n(&q->lim[Q_R_BYTES], __ATOMIC_RELAXED) / MIB;
	out->w_mbytes_per_sec = __atomic_load_n(&q->lim[Q_W_BYTES], __ATOMIC_RELAXED) / MIB;
}

static bool limits_any(const uint64_t *k)
{
	bool any = false;

	for (unsigned int i = 0; i < Q_NKINDS; i++)
		any |= k[i] != 0;
	return any;
}

int nvmf_ns_set_qos(struct nvmf_subsys *s, uint32_t nsid, const struct nvmf_qos_limits *lim)
{
	struct nvmf_ns *ns;
	struct nvmf_qos *q;
	uint64_t k[Q_NKINDS];
	bool any;

	limits_to_kinds(lim, k);
	any = limits_any(k);
	pthread_mutex_lock(&s->lock);
	ns = nsid && nsid <= NVMF_MAX_NAMESPACES ? s->ns[nsid] : NULL;
	if (!ns) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	q = ns->qos;
	if (!q && !any) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (!q && !(q = qos_alloc(false))) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	qos_store(q, k);
	__atomic_store_n(&ns->qos, q, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	log_notice("%s: namespace %u: QoS %s", s->nqn, nsid, any ? "limits set" : "limits removed");
	return 0;
}

uint64_t nvmf_qos_nqn_hash(const char *nqn)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*nqn)
		h = (h ^ (uint8_t)*nqn++) * 0x100000001b3ull;
	return h;
}

static struct qos_host *host_find(struct nvmf_qos_hosts *hs, const char *nqn, uint64_t hash)
{
	unsigned int n = hs ? __atomic_load_n(&hs->n, __ATOMIC_ACQUIRE) : 0;

	for (unsigned int i = 0; i < n; i++)
		if (hs->h[i].hash == hash && !strcmp(hs->h[i].nqn, nqn))
			return &hs->h[i];
	return NULL;
}

int nvmf_ns_set_host_qos(struct nvmf_subsys *s, uint32_t nsid, const char *hostnqn,
			 const struct nvmf_qos_limits *lim)
{
	uint64_t k[Q_NKINDS], hash;
	struct nvmf_qos_hosts *hs;
	struct qos_host *h;
	struct nvmf_ns *ns;
	bool any;

	if (!hostnqn || !hostnqn[0] || strlen(hostnqn) > NVME_NQN_MAX)
		return -EINVAL;
	limits_to_kinds(lim, k);
	any = limits_any(k);
	hash = nvmf_qos_nqn_hash(hostnqn);
	pthread_mutex_lock(&s->lock);
	ns = nsid && nsid <= NVMF_MAX_NAMESPACES ? s->ns[nsid] : NULL;
	if (!ns) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	hs = ns->qos_hosts;
	h = host_find(hs, hostnqn, hash);
	if (!h && !any) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (!hs) {
		hs = calloc(1, sizeof(*hs));
		if (!hs) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		__atomic_store_n(&ns->qos_hosts, hs, __ATOMIC_RELEASE);
	}
	if (!h) {
		if (hs->n == NVMF_QOS_MAX_HOSTS) {
			pthread_mutex_unlock(&s->lock);
			return -ENOSPC;
		}
		h = &hs->h[hs->n];
		h->q = qos_alloc(true);
		if (!h->q) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		snprintf(h->nqn, sizeof(h->nqn), "%s", hostnqn);
		h->hash = hash;
		qos_store(h->q, k);
		__atomic_store_n(&hs->n, hs->n + 1, __ATOMIC_RELEASE); /* published whole */
	} else {
		qos_store(h->q, k);
	}
	pthread_mutex_unlock(&s->lock);
	log_notice("%s: namespace %u: QoS of host %s %s", s->nqn, nsid, hostnqn,
		   any ? "limits set" : "limits removed");
	return 0;
}

int nvmf_ns_get_host_qos(struct nvmf_subsys *s, uint32_t nsid, const char *hostnqn,
			 struct nvmf_qos_limits *out)
{
	struct qos_host *h;
	struct nvmf_ns *ns;

	memset(out, 0, sizeof(*out));
	if (!hostnqn)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ns = nsid && nsid <= NVMF_MAX_NAMESPACES ? s->ns[nsid] : NULL;
	if (!ns) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	h = host_find(ns->qos_hosts, hostnqn, nvmf_qos_nqn_hash(hostnqn));
	if (h)
		qos_load(h->q, out);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int nvmf_ns_list_host_qos(struct nvmf_subsys *s, uint32_t nsid,
			  void (*cb)(const char *hostnqn, const struct nvmf_qos_limits *lim,
				     void *arg),
			  void *arg)
{
	struct nvmf_qos_hosts *hs;
	struct nvmf_qos_limits l;
	struct nvmf_ns *ns;
	uint64_t k[Q_NKINDS];
	int n = 0;

	pthread_mutex_lock(&s->lock);
	ns = nsid && nsid <= NVMF_MAX_NAMESPACES ? s->ns[nsid] : NULL;
	if (!ns) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	hs = ns->qos_hosts;
	for (unsigned int i = 0; hs && i < hs->n; i++) {
		qos_load(hs->h[i].q, &l);
		limits_to_kinds(&l, k);
		if (!limits_any(k))
			continue; /* removed */
		cb(hs->h[i].nqn, &l, arg);
		n++;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

int nvmf_ns_get_qos(struct nvmf_subsys *s, uint32_t nsid, struct nvmf_qos_limits *out)
{
	struct nvmf_ns *ns;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	ns = nsid && nsid <= NVMF_MAX_NAMESPACES ? s->ns[nsid] : NULL;
	if (!ns) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	qos_load(__atomic_load_n(&ns->qos, __ATOMIC_ACQUIRE), out);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void qos_counts(const struct nvmf_qos *q, uint64_t *queued, uint64_t *delayed)
{
	if (!q)
		return;
	for (unsigned int i = 0; i < q->nslots; i++) {
		*queued += __atomic_load_n(&q->b[i].nwaiting, __ATOMIC_RELAXED);
		*delayed += __atomic_load_n(&q->b[i].delayed, __ATOMIC_RELAXED);
	}
}

void nvmf_ns_qos_counts(const struct nvmf_ns *ns, uint64_t *queued, uint64_t *delayed)
{
	const struct nvmf_qos_hosts *hs = __atomic_load_n(&ns->qos_hosts, __ATOMIC_ACQUIRE);
	unsigned int n = hs ? __atomic_load_n(&hs->n, __ATOMIC_ACQUIRE) : 0;

	*queued = *delayed = 0;
	qos_counts(__atomic_load_n(&ns->qos, __ATOMIC_ACQUIRE), queued, delayed);
	for (unsigned int i = 0; i < n; i++)
		qos_counts(hs->h[i].q, queued, delayed);
}

void nvmf_qos_free(struct nvmf_ns *ns)
{
	if (ns->qos_hosts) {
		for (unsigned int i = 0; i < ns->qos_hosts->n; i++)
			qos_free(ns->qos_hosts->h[i].q);
		free(ns->qos_hosts);
		ns->qos_hosts = NULL;
	}
	qos_free(ns->qos);
	ns->qos = NULL;
}

/* ---- buckets (owner reactor) ------------------------------------------------------------- */
static void bucket_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

static struct qos_bucket *bucket_of(struct nvmf_qos *q, struct nvmf_req *req)
{
	struct reactor *r = req->qpair->reactor;
	struct qos_bucket *b = &q->b[(r ? r->id : 0) % q->nslots];

	if (!b->ns) {
		b->ns = req->ns;
		b->q = q;
		b->r = r;
		b->last_ns = nvmf_now_ns();
		b->share = 1;
		TAILQ_INIT(&b->waiting);
		ev_timer_init(&b->timer, bucket_timer_cb, QOS_TICK_S, QOS_TICK_S);
		b->timer.data = b;
	}
	return b;
}

/* Reactors that sent I/O to the namespace lately (this one included). */
static unsigned int count_active(const struct nvmf_qos *q, uint64_t now)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < q->nslots; i++) {
		uint64_t t = __atomic_load_n(&q->b[i].last_use_ns, __ATOMIC_RELAXED);

		if (t && now - t < QOS_ACTIVE_NS)
			n++;
	}
	return n ? n : 1;
}

static void refill(struct nvmf_qos *q, struct qos_bucket *b, uint64_t now)
{
	uint64_t dt = now - b->last_ns;

	if (now - b->share_ns >= QOS_RECOUNT_NS) {
		b->share = count_active(q, now);
		b->share_ns = now;
	}
	b->last_ns = now;
	for (unsigned int k = 0; k < Q_NKINDS; k++) {
		uint64_t rate = __atomic_load_n(&q->lim[k], __ATOMIC_RELAXED) / b->share;
		int64_t cap;

		if (!rate) {
			b->tokens[k] = 0;
			continue;
		}
		/* thousandths: rate/s * dt ns * 1000 / 1e9 */
		/* Idle, a bucket saves little (no burst after a quiet spell); with commands
		 * waiting, the time since the last refill was all busy time: a timer that ran
		 * late (a loaded reactor, a descheduled thread) must not cost the host its
		 * tokens, or the rate falls short of the limit. */
		cap = (int64_t)(rate * (TAILQ_EMPTY(&b->waiting) ? QOS_BURST_MS : QOS_LATE_MS));
		if (cap < 1000)
			cap = 1000;
		b->tokens[k] += (int64_t)((double)rate * (double)dt / 1e6);
		if (b->tokens[k] > cap)
			b->tokens[k] = cap;
	}
}

static bool is_read(const struct nvmf_req *req)
{
	return req->cmd.opc == NVME_OPC_READ;
}

static uint64_t req_bytes(const struct nvmf_req *req)
{
	return (uint64_t)((get_le32(&req->cmd.cdw12) & NVME_RW_NLB_MASK) + 1)
	       << req->ns->block_shift;
}

/* The kinds that apply to @req: its direction's and the combined ones. */
static bool kind_applies(unsigned int k, bool rd)
{
	switch (k) {
	case Q_R_IOS:
	case Q_R_BYTES:
		return rd;
	case Q_W_IOS:
	case Q_W_BYTES:
		return !rd;
	default:
		return true;
	}
}

/* Take the tokens of @req when every limit that applies has some left. */
static bool take_tokens(struct nvmf_qos *q, struct qos_bucket *b, const struct nvmf_req *req)
{
	bool rd = is_read(req);
	uint64_t bytes = req_bytes(req);

	for (unsigned int k = 0; k < Q_NKINDS; k++)
		if (kind_applies(k, rd) && __atomic_load_n(&q->lim[k], __ATOMIC_RELAXED) &&
		    b->tokens[k] <= 0)
			return false;
	for (unsigned int k = 0; k < Q_NKINDS; k++) {
		if (!kind_applies(k, rd) || !__atomic_load_n(&q->lim[k], __ATOMIC_RELAXED))
			continue;
		b->tokens[k] -= k <= Q_W_IOS ? 1000 : (int64_t)(bytes * 1000);
	}
	return true;
}

static bool limited(const struct nvmf_qos *q, bool rd)
{
	for (unsigned int k = 0; k < Q_NKINDS; k++)
		if (kind_applies(k, rd) && __atomic_load_n(&q->lim[k], __ATOMIC_RELAXED))
			return true;
	return false;
}

static void bucket_wait_start(struct qos_bucket *b)
{
	if (b->timer_on)
		return;
	TAILQ_INSERT_TAIL(busy(), b, link);
	if (b->r && b->r->loop)
		ev_timer_start(b->r->loop, &b->timer);
	b->timer_on = true;
}

static void bucket_wait_stop(struct qos_bucket *b)
{
	if (!b->timer_on)
		return;
	TAILQ_REMOVE(busy(), b, link);
	if (b->r && b->r->loop)
		ev_timer_stop(b->r->loop, &b->timer);
	b->timer_on = false;
}

static void unqueue(struct qos_bucket *b, struct nvmf_req *req)
{
	TAILQ_REMOVE(&b->waiting, req, qos_link);
	req->qos_queued = false;
	req->qos_wait = NULL;
	__atomic_store_n(&b->nwaiting, b->nwaiting - 1, __ATOMIC_RELAXED);
	if (TAILQ_EMPTY(&b->waiting))
		bucket_wait_stop(b);
}

/* One stage: true when @req waits in @q's bucket of its reactor. */
static bool qos_stage(struct nvmf_qos *q, struct nvmf_req *req)
{
	struct qos_bucket *b = bucket_of(q, req);
	uint64_t now;

	if (!limited(q, is_read(req)) && TAILQ_EMPTY(&b->waiting))
		return false;
	now = nvmf_now_ns();
	__atomic_store_n(&b->last_use_ns, now, __ATOMIC_RELAXED);
	if (TAILQ_EMPTY(&b->waiting)) {
		refill(q, b, now);
		if (take_tokens(q, b, req))
			return false;
	}
	TAILQ_INSERT_TAIL(&b->waiting, req, qos_link);
	req->qos_queued = true;
	req->qos_wait = b;
	__atomic_store_n(&b->nwaiting, b->nwaiting + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&b->delayed, b->delayed + 1, __ATOMIC_RELAXED);
	bucket_wait_start(b);
	return true;
}

/* The limits of the host @req came from on its namespace, if it has its own. */
static struct nvmf_qos *host_qos(const struct nvmf_req *req)
{
	struct nvmf_qos_hosts *hs = __atomic_load_n(&req->ns->qos_hosts, __ATOMIC_ACQUIRE);
	const struct nvmf_ctrlr *c = req->qpair->ctrlr;
	struct qos_host *h;

	if (!hs || !c)
		return NULL;
	h = host_find(hs, c->hostnqn, c->hostnqn_hash);
	return h ? h->q : NULL;
}

bool nvmf_qos_submit(struct nvmf_req *req)
{
	struct nvmf_qos *q = __atomic_load_n(&req->ns->qos, __ATOMIC_ACQUIRE);
	struct nvmf_qos *hq;

	req->qos_queued = false;
	req->qos_wait = NULL;
	if (req->cmd.opc != NVME_OPC_READ && req->cmd.opc != NVME_OPC_WRITE)
		return false;
	hq = host_qos(req);
	if (hq && qos_stage(hq, req))
		return true;
	return q && qos_stage(q, req);
}

/* Release the head of @b's queue while tokens last (or limits went away). */
static void bucket_release(struct qos_bucket *b)
{
	struct nvmf_qos *q = b->q;
	struct nvmf_req *req;

	refill(q, b, nvmf_now_ns());
	while ((req = TAILQ_FIRST(&b->waiting))) {
		struct nvmf_qos *next;

		if (limited(q, is_read(req)) && !take_tokens(q, b, req))
			break;
		unqueue(b, req);
		/* out of the host's stage: through the namespace's next */
		next = q->host ? __atomic_load_n(&req->ns->qos, __ATOMIC_ACQUIRE) : NULL;
		if (!next || !qos_stage(next, req))
			req->execute(req); /* may complete inline; b stays valid (ns held by
					    * others or by nothing waiting) */
		if (!b->timer_on)
			break;
	}
}

static void bucket_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	bucket_release(w->data);
}

void nvmf_qos_poll(void)
{
	struct qos_bucket *v[64], *b;
	unsigned int n = 0;

	/* Commands released may complete inline and change the list: work on a copy. */
	TAILQ_FOREACH(b, busy(), link)
	if (n < 64)
		v[n++] = b;
	for (unsigned int i = 0; i < n; i++)
		if (v[i]->timer_on)
			bucket_release(v[i]);
}

struct nvmf_req *nvmf_qos_take(struct nvmf_qpair *qp, uint16_t cid)
{
	struct qos_bucket *b;
	struct nvmf_req *req;

	TAILQ_FOREACH(b, busy(), link)
	TAILQ_FOREACH(req, &b->waiting, qos_link)
	if (req->qpair == qp && get_le16(&req->cmd.cid) == cid) {
		unqueue(req->qos_wait, req);
		return req;
	}
	return NULL;
}

void nvmf_qos_qpair_gone(struct nvmf_qpair *qp)
{
	struct qos_bucket *b, *bnext;
	struct nvmf_req *req, *rnext;

	for (b = TAILQ_FIRST(busy()); b; b = bnext) {
		bnext = TAILQ_NEXT(b, link);
		for (req = TAILQ_FIRST(&b->waiting); req; req = rnext) {
			rnext = TAILQ_NEXT(req, qos_link);
			if (req->qpair == qp) {
				unqueue(b, req);
				nvmf_req_done(req, ST_ABORTED_SQ);
			}
		}
	}
}
