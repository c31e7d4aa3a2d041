/* SPDX-License-Identifier: MIT */
/*
 * Reactor threads: one libev loop per thread, a mutex-protected message list woken by an
 * ev_async (cross-thread traffic is rare: connection hand-off, teardown, events), deferred
 * work run before each poll (the I/O batching point), a lock-free per-reactor pool of
 * data buffers that only the owning thread touches, and the poll mode: how long the loop
 * keeps polling without sleeping after an event (reactors_configure_poll()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#endif
#include "reactor.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

#define REACTOR_DEFAULT_BUF_SIZE (128u * 1024)
#define REACTOR_DEFAULT_BUF_BYTES (256ull * 1024 * 1024) /* per reactor */
#define REACTOR_DEFER_BUDGET 4096 /* deferred items run per prepare before yielding */
#define REACTOR_BUF_TRIM_S        2.0  /* pool chunks unused this long go back to the system */

struct reactor_msg {
	struct reactor_msg *next;
	reactor_msg_fn fn;
	void *arg;
};

struct reactor_exit_hook {
	struct reactor_exit_hook *next;
	reactor_msg_fn fn;
	void *arg;
};

struct reactor_priv {
	struct reactor *r;
	ev_async wake;
	ev_prepare prepare;
	ev_idle kick;
	ev_check check; /* after each poll: did it find events? (the poll mode's input) */
	ev_idle spin;   /* active while polling without sleeping */
	bool spinning;
	ev_tstamp last_event; /* ev_now() of the last iteration that found events */
	ev_tstamp gap;        /* moving average of the time between such iterations */
	ev_tstamp window;     /* how long to keep spinning after the last event */
	bool pin;
	int cpu;

	pthread_mutex_t lock;	/* protects msgs only */
	struct reactor_msg *head, *tail;
	struct reactor_post *phead, *ptail; /* reactor_post() items (embedded, not freed) */
	bool stopping;

	struct reactor_exit_hook *exit_hooks;
	TAILQ_HEAD(, reactor_work) deferred;

	/* buffer pool (owner thread only); the free list is a stack of pointers, so taking
	 * a chunk does not touch (cold) chunk memory */
	void **free_stack;
	void **chunks;		/* every chunk obtained, to release at exit */
	unsigned int allocated, nfree, limit;
	uint64_t exhausted;
	TAILQ_HEAD(, reactor_work) buf_waiters;
	unsigned int nwaiters;
	/* Giving idle chunks' memory back (buf_trim_cb): free_stack[0, cold) have been
	 * madvise(MADV_DONTNEED)ed since they were last used; low_free is the fewest chunks
	 * free since the last tick, so free_stack[0, low_free) were not used during it. */
	unsigned int cold, low_free;
	uint64_t trimmed;
	ev_timer trim;
};

static struct reactor *g_reactors;
static unsigned int g_nreactors;
static unsigned int g_nalloc; /* reactors set up (g_nreactors counts running ones) */
static atomic_uint g_next;
static _Thread_local struct reactor *tls_self;
static size_t g_buf_size = REACTOR_DEFAULT_BUF_SIZE;
static unsigned int g_buf_limit;
static enum reactor_pin g_pin = REACTOR_PIN_AUTO;
static enum reactor_poll g_poll = REACTOR_POLL_ADAPTIVE;
static ev_tstamp g_poll_max = REACTOR_POLL_DEFAULT_US * 1e-6;

/* Counters only this thread writes: a relaxed load and store (no locked instruction). */
static inline void stat_inc(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static inline struct reactor_priv *priv_of(const struct reactor *r)
{
	return r->priv;
}

void reactors_configure(size_t buf_size, unsigned int buf_limit, enum reactor_pin pin)
{
	if (buf_size) {
		buf_size = (buf_size + 4095) & ~(size_t)4095;
		g_buf_size = buf_size;
	}
	g_buf_limit = buf_limit;
	g_pin = pin;
}

void reactors_configure_poll(enum reactor_poll mode, unsigned int max_us)
{
	g_poll = mode;
	if (max_us > REACTOR_POLL_MAX_US)
		max_us = REACTOR_POLL_MAX_US;
	g_poll_max = (max_us ? max_us : REACTOR_POLL_DEFAULT_US) * 1e-6;
}

const char *reactor_poll_name(enum reactor_poll mode)
{
	switch (mode) {
	case REACTOR_POLL_OFF:
		return "off";
	case REACTOR_POLL_ADAPTIVE:
		return "adaptive";
	case REACTOR_POLL_BUSY:
		return "busy";
	}
	return "?";
}

size_t reactor_buf_size(void)
{
	return g_buf_size;
}

unsigned int reactor_count(void)
{
	return g_nreactors;
}

struct reactor *reactor_get(unsigned int idx)
{
	return idx < g_nreactors ? &g_reactors[idx] : NULL;
}

struct reactor *reactor_self(void)
{
	return tls_self;
}

struct reactor *reactor_next(void)
{
	if (g_nreactors == 0)
		return NULL;
	return &g_reactors[atomic_fetch_add_explicit(&g_next, 1, memory_order_relaxed) %
			   g_nreactors];
}

/* ---- deferred work -------------------------------------------------------------------- */

void reactor_defer(struct reactor *r, struct reactor_work *w)
{
	struct reactor_priv *p = priv_of(r);

	if (w->queued)
		return;
	w->queued = true;
	TAILQ_INSERT_TAIL(&p->deferred, w, link);
}

void reactor_defer_cancel(struct reactor *r, struct reactor_work *w)
{
	struct reactor_priv *p = priv_of(r);

	if (!w->queued)
		return;
	TAILQ_REMOVE(&p->deferred, w, link);
	w->queued = false;
}

static void run_deferred(struct reactor_priv *p)
{
	unsigned int budget = REACTOR_DEFER_BUDGET;
	struct reactor_work *w;

	while (budget-- && (w = TAILQ_FIRST(&p->deferred)) != NULL) {
		TAILQ_REMOVE(&p->deferred, w, link);
		w->queued = false;
		w->fn(w->arg);
	}
	/* Work left (or queued by other prepare watchers): poll without blocking. */
	if (!TAILQ_EMPTY(&p->deferred))
		ev_idle_start(p->r->loop, &p->kick);
	else
		ev_idle_stop(p->r->loop, &p->kick);
}

static void prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct reactor_priv *p = w->data;

	stat_inc(&p->r->stats.loops);
	if (!TAILQ_EMPTY(&p->deferred))
		run_deferred(p);
}

static void kick_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	run_deferred(w->data);
}

/* ---- poll mode ------------------------------------------------------------------------- */

static void spin_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	/* Nothing to do: being active makes the next poll non-blocking. */
}

static void spin_stop(struct reactor_priv *p)
{
	if (!p->spinning)
		return;
	ev_idle_stop(p->r->loop, &p->spin);
	p->spinning = false;
	stat_inc(&p->r->stats.poll_sleeps);
}

/*
 * Runs first after every poll. Events found: fold the time since the previous events into
 * the moving average and, if events come closer together than the cap, keep polling for
 * twice that gap (the next event most likely comes within it); otherwise sleep. Nothing
 * found: keep spinning until the window since the last event has passed.
 */
static void check_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	struct reactor_priv *p = w->data;
	/* What is pending besides our own idle watchers is real work (I/O, timers, async). */
	unsigned int own =
		(unsigned int)ev_is_pending(&p->spin) + (unsigned int)ev_is_pending(&p->kick);
	ev_tstamp now = ev_now(loop), gap;

	if (ev_pending_count(loop) > own) {
		stat_inc(&p->r->stats.poll_events);
		gap = now - p->last_event;
		if (gap > 4 * g_poll_max)
			gap = 4 * g_poll_max; /* a long silence counts as "slow", no more */
		if (gap < 0)
			gap = 0;
		p->gap += (gap - p->gap) / 8;
		p->last_event = now;
		if (p->gap <= g_poll_max) {
			p->window = 2 * p->gap + 5e-6;
			if (p->window > g_poll_max)
				p->window = g_poll_max;
			if (!p->spinning) {
				ev_idle_start(loop, &p->spin);
				p->spinning = true;
			}
		} else {
			spin_stop(p);
		}
	} else if (p->spinning) {
		if (now - p->last_event > p->window)
			spin_stop(p);
		else
			stat_inc(&p->r->stats.poll_empty);
	}
}

/* ---- messages ----------------------------------------------------------------------------- */

int reactor_send_msg(struct reactor *r, reactor_msg_fn fn, void *arg)
{
	struct reactor_priv *p;
	struct reactor_msg *m;

	if (!r || !r->priv)
		return -EINVAL;
	p = priv_of(r);
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->fn = fn;
	m->arg = arg;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = m;
	else
		p->head = m;
	p->tail = m;
	pthread_mutex_unlock(&p->lock);
	ev_async_send(r->loop, &p->wake);
	return 0;
}

int reactor_for_each(reactor_msg_fn fn, void *arg)
{
	int rc = 0;

	for (unsigned int i = 0; i < g_nreactors; i++) {
		int r = reactor_send_msg(&g_reactors[i], fn, arg);

		if (r && !rc)
			rc = r;
	}
	return rc;
}

void reactor_post(struct reactor *r, struct reactor_post *m)
{
	struct reactor_priv *p = priv_of(r);

	m->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->ptail)
		p->ptail->next = m;
	else
		p->phead = m;
	p->ptail = m;
	pthread_mutex_unlock(&p->lock);
	ev_async_send(r->loop, &p->wake);
}

static void wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct reactor_priv *p = w->data;
	struct reactor_msg *m, *next;
	struct reactor_post *pm, *pnext;

	pthread_mutex_lock(&p->lock);
	m = p->head;
	p->head = p->tail = NULL;
	pm = p->phead;
	p->phead = p->ptail = NULL;
	pthread_mutex_unlock(&p->lock);

	for (; pm; pm = pnext) {
		pnext = pm->next; /* @pm may be reused by its callback */
		stat_inc(&p->r->stats.msgs);
		pm->fn(pm->arg);
	}

	for (; m; m = next) {
		next = m->next;
		stat_inc(&p->r->stats.msgs);
		m->fn(m->arg);
		free(m);
	}
}

int reactor_on_exit(struct reactor *r, reactor_msg_fn fn, void *arg)
{
	struct reactor_exit_hook *h;

	if (!r || !r->priv)
		return -EINVAL;
	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->fn = fn;
	h->arg = arg;
	/* Only the owner thread (or the starter before the thread runs) adds hooks. */
	h->next = priv_of(r)->exit_hooks;
	priv_of(r)->exit_hooks = h;
	return 0;
}

uint64_t reactor_cpu_ns(const struct reactor *r)
{
	clockid_t cid;
	struct timespec ts;

	if (!r || pthread_getcpuclockid(r->thread, &cid) != 0)
		return 0;
	if (clock_gettime(cid, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- buffer pool -------------------------------------------------------------------------- */

void *reactor_buf_get(struct reactor *r)
{
	struct reactor_priv *p = priv_of(r);
	void *chunk;

	if (p->nfree) {
		chunk = p->free_stack[--p->nfree];
		if (p->nfree < p->low_free)
			p->low_free = p->nfree;
		if (p->nfree < p->cold)
			p->cold = p->nfree; /* a returned chunk: its pages fault in as zeroes */
		return chunk;
	}
	p->low_free = 0;
	if (p->allocated >= p->limit) {
		p->exhausted++;
		return NULL;
	}
	/* a mapping of its own, not the heap: the pages a chunk never used (a command that
	 * held it without data coming) cost nothing, and no allocator header beside it is
	 * touched; page-aligned as before */
	chunk = mmap(NULL, g_buf_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (chunk == MAP_FAILED) {
		p->exhausted++;
		return NULL;
	}
	p->chunks[p->allocated++] = chunk;
	return chunk;
}

static void wake_buf_waiters(struct reactor_priv *p)
{
	unsigned int n = p->nfree;
	struct reactor_work *w;

	/* One waiter per free chunk: each retries reactor_buf_get() and waits again if
	 * another took the chunk first. */
	while (n-- && (w = TAILQ_FIRST(&p->buf_waiters)) != NULL) {
		TAILQ_REMOVE(&p->buf_waiters, w, link);
		w->waiting = false;
		p->nwaiters--;
		reactor_defer(p->r, w);
	}
}

void reactor_buf_put(struct reactor *r, void *buf)
{
	struct reactor_priv *p = priv_of(r);

	if (!buf)
		return;
	if (p->nfree >= p->allocated) {
		log_err("reactor %u: buffer returned twice", r->id);
		return;
	}
	p->free_stack[p->nfree++] = buf;
	if (p->nwaiters)
		wake_buf_waiters(p);
}

void reactor_buf_wait(struct reactor *r, struct reactor_work *w)
{
	struct reactor_priv *p = priv_of(r);

	if (w->waiting || w->queued)
		return;
	w->waiting = true;
	TAILQ_INSERT_TAIL(&p->buf_waiters, w, link);
	p->nwaiters++;
	/* A chunk may have come back between the failed get and this call. */
	if (p->nfree)
		wake_buf_waiters(p);
}

void reactor_buf_wait_cancel(struct reactor *r, struct reactor_work *w)
{
	struct reactor_priv *p = priv_of(r);

	if (w->waiting) {
		TAILQ_REMOVE(&p->buf_waiters, w, link);
		w->waiting = false;
		p->nwaiters--;
	}
	reactor_defer_cancel(r, w);
}

/*
 * The pool grows with demand up to its limit and never shrinks, but the memory of chunks
 * nobody used for a whole tick goes back to the system: after a burst (or a host that
 * held many buffers) has passed, the daemon's resident size returns to what its steady
 * load needs. Free chunks are a stack, so the unused ones are at its bottom.
 */
static void buf_trim_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct reactor_priv *p = w->data;
	size_t len = g_buf_size & ~(size_t)4095;

	if (p->low_free > p->nfree)
		p->low_free = p->nfree;
	for (unsigned int i = p->cold; i < p->low_free && len; i++) {
		madvise(p->free_stack[i], len, MADV_DONTNEED);
		p->trimmed++;
	}
	if (p->low_free > p->cold)
		p->cold = p->low_free;
	p->low_free = p->nfree;
}

void reactor_buf_stats(const struct reactor *r, struct reactor_buf_stats *st)
{
	const struct reactor_priv *p = priv_of(r);

	st->allocated = p->allocated;
	st->free = p->nfree;
	st->limit = p->limit;
	st->exhausted = p->exhausted;
	st->trimmed = p->trimmed;
}

/* ---- threads -------------------------------------------------------------------------- */

static void pin_self(struct reactor_priv *p)
{
	cpu_set_t set;
	int rc;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc)
		log_warn("reactor %u: cannot pin to CPU %d: %s", p->r->id, p->cpu, strerror(rc));
}

static void *reactor_main(void *arg)
{
	struct reactor *r = arg;
	struct reactor_priv *p = priv_of(r);

	tls_self = r;
	if (p->pin)
		pin_self(p);
	ev_run(r->loop, 0);
	tls_self = NULL;
	return NULL;
}

static void stop_msg(void *arg)
{
	struct reactor *r = arg;
	struct reactor_priv *p = priv_of(r);
	struct reactor_exit_hook *h;

	p->stopping = true;
	/* Pending deferred work first (e.g. final socket flushes), then the exit hooks. */
	while (!TAILQ_EMPTY(&p->deferred))
		run_deferred(p);
	while ((h = p->exit_hooks) != NULL) {
		p->exit_hooks = h->next;
		h->fn(h->arg);
		free(h);
	}
	ev_break(r->loop, EVBREAK_ALL);
}

static void reactor_free(struct reactor *r)
{
	struct reactor_priv *p = priv_of(r);
	struct reactor_msg *m;

	if (!p)
		return;
	while ((m = p->head) != NULL) {
		p->head = m->next;
		free(m);
	}
	for (unsigned int i = 0; i < p->allocated; i++)
		munmap(p->chunks[i], g_buf_size);
	free(p->chunks);
	free(p->free_stack);
	if (r->loop)
		ev_loop_destroy(r->loop);
	pthread_mutex_destroy(&p->lock);
	free(p);
	r->priv = NULL;
	r->loop = NULL;
}

static int reactor_init(struct reactor *r, unsigned int id, unsigned int ncpu, bool pin)
{
	struct reactor_priv *p = calloc(1, sizeof(*p));
	uint64_t limit;

	if (!p)
		return -ENOMEM;
	r->id = id;
	r->priv = p;
	p->r = r;
	pthread_mutex_init(&p->lock, NULL);
	TAILQ_INIT(&p->deferred);
	TAILQ_INIT(&p->buf_waiters);
	p->pin = pin;
	p->cpu = (int)(id % ncpu);

	limit = g_buf_limit ? g_buf_limit : REACTOR_DEFAULT_BUF_BYTES / g_buf_size;
	if (limit < 64)
		limit = 64;
	p->limit = (unsigned int)limit;
	p->chunks = calloc(p->limit, sizeof(*p->chunks));
	p->free_stack = calloc(p->limit, sizeof(*p->free_stack));
	if (!p->chunks || !p->free_stack)
		return -ENOMEM;

	r->loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_NOSIGMASK);
	if (!r->loop)
		return -ENOMEM;
	ev_async_init(&p->wake, wake_cb);
	p->wake.data = p;
	ev_async_start(r->loop, &p->wake);
	ev_prepare_init(&p->prepare, prepare_cb);
	p->prepare.data = p;
	ev_prepare_start(r->loop, &p->prepare);
	ev_idle_init(&p->kick, kick_cb);
	p->kick.data = p;
	ev_timer_init(&p->trim, buf_trim_cb, REACTOR_BUF_TRIM_S, REACTOR_BUF_TRIM_S);
	p->trim.data = p;
	ev_timer_start(r->loop, &p->trim);
	ev_unref(r->loop); /* the tick alone does not keep a loop running */
	ev_idle_init(&p->spin, spin_cb);
	p->spin.data = p;
	p->gap = 4 * g_poll_max;
	if (g_poll == REACTOR_POLL_BUSY) {
		ev_idle_start(r->loop, &p->spin);
		p->spinning = true;
	} else if (g_poll == REACTOR_POLL_ADAPTIVE) {
		ev_check_init(&p->check, check_cb);
		ev_set_priority(&p->check, EV_MAXPRI);
		p->check.data = p;
		ev_check_start(r->loop, &p->check);
	}
	return 0;
}

int reactors_start(unsigned int n)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int ncpu = online > 0 ? (unsigned int)online : 1;
	sigset_t all, old;
	bool pin;
	int rc = 0;

	if (g_reactors)
		return -EBUSY;
	if (n == 0)
		n = ncpu;
	if (n > 1024)
		return -EINVAL;
	pin = g_pin == REACTOR_PIN_ON || (g_pin == REACTOR_PIN_AUTO && n == ncpu && ncpu > 1);

	g_reactors = calloc(n, sizeof(*g_reactors));
	if (!g_reactors)
		return -ENOMEM;
	g_nalloc = n;
	for (unsigned int i = 0; i < n; i++) {
		rc = reactor_init(&g_reactors[i], i, ncpu, pin);
		if (rc)
			goto fail;
	}

	/* Reactors never take process signals: the main loop handles them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned int i = 0; i < n; i++) {
		rc = -pthread_create(&g_reactors[i].thread, NULL, reactor_main, &g_reactors[i]);
		if (rc) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			g_nreactors = i;
			reactors_stop();
			return rc;
		}
		g_nreactors = i + 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_info("started %u reactor%s%s, poll %s", n, n == 1 ? "" : "s", pin ? " (pinned)" : "",
		 reactor_poll_name(g_poll));
	return 0;

fail:
	for (unsigned int i = 0; i < n; i++)
		reactor_free(&g_reactors[i]);
	free(g_reactors);
	g_reactors = NULL;
	g_nalloc = 0;
	return rc;
}

void reactors_stop(void)
{
	unsigned int n = g_nreactors;

	if (!g_reactors)
		return;
	for (unsigned int i = 0; i < n; i++)
		if (reactor_send_msg(&g_reactors[i], stop_msg, &g_reactors[i]) != 0)
			log_err("reactor %u: cannot post the stop message", i);
	for (unsigned int i = 0; i < n; i++)
		pthread_join(g_reactors[i].thread, NULL);
	g_nreactors = 0;
	for (unsigned int i = 0; i < g_nalloc; i++)
		reactor_free(&g_reactors[i]);
	free(g_reactors);
	g_reactors = NULL;
	g_nalloc = 0;
}

int reactors_drain(reactor_msg_fn close_fn, const atomic_uint *live, unsigned int timeout_ms,
		   const char *what)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	unsigned int waited = 0;

	if (atomic_load(live) == 0)
		return 0;
	reactor_for_each(close_fn, NULL);
	while (atomic_load_explicit(live, memory_order_acquire) != 0) {
		if (waited >= timeout_ms) {
			log_warn("%u %s connection(s) still busy after %u ms", atomic_load(live),
				 what, timeout_ms);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		waited += 5;
	}
	return 0;
}
