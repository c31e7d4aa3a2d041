/* SPDX-License-Identifier: MIT */
/* The DH-HMAC-CHAP work threads (see auth_pool.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "auth_pool.h"
#include "common/log.h"
#include "reactor/reactor.h"

struct lane {
	struct auth_job *head, **tail;
};

struct auth_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	unsigned int nthreads;
	pthread_t threads[AUTH_POOL_MAX_THREADS];
	struct lane prio, shared;
	/* the shared lane's jobs, queued or running: what admission counts */
	const struct dhchap_admit_key *pending[AUTH_POOL_MAX_PENDING];
	struct auth_job *pending_job[AUTH_POOL_MAX_PENDING];
	unsigned int npending;
	const struct dhchap_admit_key *qkeys[AUTH_POOL_MAX_PENDING]; /* shared_take()'s */
	const struct dhchap_admit_key *rkeys[AUTH_POOL_MAX_THREADS];
	unsigned int npending_prio;
	unsigned int shared_running; /* shared lane jobs on a thread now ... */
	unsigned int shared_cap;     /* ... at most this many: one thread is kept for the
				      * re-authentication lane when there are two or more */
	struct nvmf_auth_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lane_push(struct lane *l, struct auth_job *j)
{
	j->next = NULL;
	*l->tail = j;
	l->tail = &j->next;
}

static struct auth_job *lane_pop(struct lane *l)
{
	struct auth_job *j = l->head;

	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = &l->head;
	}
	return j;
}

/* Under the lock: @j leaves the shared lane's pending list. */
static void pending_remove(struct auth_pool *p, struct auth_job *j)
{
	unsigned int last = --p->npending;

	if (j->slot != last) {
		p->pending[j->slot] = p->pending[last];
		p->pending_job[j->slot] = p->pending_job[last];
		p->pending_job[j->slot]->slot = j->slot;
	}
}

/* Under the lock: the shared lane's job a free thread takes (dhchap_admit_pick()). */
static struct auth_job *shared_take(struct auth_pool *p)
{
	struct auth_job **pp = &p->shared.head, *j;
	unsigned int nq = 0, nr = 0, pick;

	for (j = p->shared.head; j; j = j->next)
		p->qkeys[nq++] = &j->key;
	for (unsigned int i = 0; i < p->npending && nr < AUTH_POOL_MAX_THREADS; i++)
		if (p->pending_job[i]->running)
			p->rkeys[nr++] = p->pending[i];
	pick = dhchap_admit_pick(p->qkeys, nq, p->rkeys, nr);
	while (pick--)
		pp = &(*pp)->next;
	j = *pp;
	*pp = j->next;
	if (p->shared.tail == &j->next)
		p->shared.tail = pp;
	j->running = true;
	return j;
}

static void *worker(void *arg)
{
	struct auth_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct auth_job *j;
		uint64_t t0, t1;

		while (!p->stop && !p->prio.head &&
		       !(p->shared.head && p->shared_running < p->shared_cap))
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->stop)
			break;
		j = lane_pop(&p->prio);
		if (!j) {
			j = shared_take(p);
			p->shared_running++;
		}
		pthread_mutex_unlock(&p->lock);

		t0 = now_ns();
		j->run(j);
		t1 = now_ns();

		pthread_mutex_lock(&p->lock);
		if (j->lane == DHCHAP_ADMIT_PRIORITY) {
			p->npending_prio--;
		} else {
			pending_remove(p, j);
			if (p->shared_running-- == p->shared_cap && p->shared.head)
				pthread_cond_signal(&p->cond); /* a thread may take the next */
		}
		p->st.done++;
		p->st.run_ns += t1 - t0;
		p->st.wait_ns += t0 - j->queued_ns;
		if (t1 - t0 > p->st.run_max_ns)
			p->st.run_max_ns = t1 - t0;
		if (t0 - j->queued_ns > p->st.wait_max_ns)
			p->st.wait_max_ns = t0 - j->queued_ns;
		pthread_mutex_unlock(&p->lock);
		/* The queue waits for this command: @j stays valid until done() has run. */
		if (reactor_send_msg(j->reactor, j->done, j))
			log_err("DH-HMAC-CHAP: reactor %u is gone, result dropped", j->reactor->id);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int auth_pool_create(unsigned int threads, struct auth_pool **out)
{
	struct auth_pool *p;
	sigset_t all, old;
	int rc = 0;

	*out = NULL;
	if (threads < 1 || threads > AUTH_POOL_MAX_THREADS)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->shared_cap = threads > 1 ? threads - 1 : 1;
	p->prio.tail = &p->prio.head;
	p->shared.tail = &p->shared.head;
	sigfillset(&all); /* signals stay with the daemon's own threads */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; p->nthreads < threads; p->nthreads++) {
		rc = -pthread_create(&p->threads[p->nthreads], NULL, worker, p);
		if (rc)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		auth_pool_destroy(p);
		return rc;
	}
	p->st.threads = threads;
	*out = p;
	return 0;
}

void auth_pool_destroy(struct auth_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

enum dhchap_admit_verdict
auth_pool_submit(struct auth_pool *p, const struct dhchap_admit_limits *lim, struct auth_job *j)
{
	struct dhchap_admit_limits l = *lim;
	enum dhchap_admit_verdict v;

	if (l.total > AUTH_POOL_MAX_PENDING)
		l.total = AUTH_POOL_MAX_PENDING;
	pthread_mutex_lock(&p->lock);
	v = dhchap_admit(&l, p->pending, p->npending, &j->key);
	switch (v) {
	case DHCHAP_ADMIT_PRIORITY:
		p->npending_prio++;
		p->st.queued_priority++;
		j->lane = v;
		j->queued_ns = now_ns();
		lane_push(&p->prio, j);
		pthread_cond_signal(&p->cond);
		break;
	case DHCHAP_ADMIT_SHARED:
		j->running = false;
		j->slot = p->npending;
		p->pending[p->npending] = &j->key;
		p->pending_job[p->npending++] = j;
		p->st.queued++;
		j->lane = v;
		j->queued_ns = now_ns();
		lane_push(&p->shared, j);
		pthread_cond_signal(&p->cond);
		break;
	case DHCHAP_ADMIT_FULL_HOST:
		p->st.refused_host++;
		break;
	case DHCHAP_ADMIT_FULL_ADDR:
		p->st.refused_addr++;
		break;
	default:
		p->st.refused_total++;
		break;
	}
	pthread_mutex_unlock(&p->lock);
	return v;
}

void auth_pool_stats(struct auth_pool *p, struct nvmf_auth_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	out->pending = p->npending;
	out->pending_priority = p->npending_prio;
	pthread_mutex_unlock(&p->lock);
}
