// SPDX-License-Identifier: MIT
/*
 * LBA range locks (see range_lock.h for the protocol). Nothing here allocates; the
 * namespace mutex is taken only while some exclusive lock is wanted on that namespace.
 */
#include "config.h"

#include "range_lock.h"

#include "common/endian.h"
#include "ctrlr.h"

#define ST_ABORT_REQ    NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED)
#define ST_FUSED_FAILED NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED)

void nvmf_ns_locks_init(struct nvmf_ns_locks *l)
{
	pthread_mutex_init(&l->lock, NULL);
	TAILQ_INIT(&l->queue);
}

void nvmf_ns_locks_fini(struct nvmf_ns_locks *l)
{
	pthread_mutex_destroy(&l->lock);
}

static struct nvmf_req *req_of(struct nvmf_range_lock *rl)
{
	return container_of(rl, struct nvmf_req, rl);
}

static unsigned int slot_of(const struct nvmf_req *req)
{
	const struct reactor *r = req->qpair->reactor;

	return r ? r->id % NVMF_RL_SLOTS : 0;
}

static uint64_t fast_inflight(const struct nvmf_ns_locks *l)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < NVMF_RL_SLOTS; i++)
		n += __atomic_load_n(&l->fast[i].n, __ATOMIC_SEQ_CST);
	return n;
}

static bool conflicts(const struct nvmf_range_lock *a, const struct nvmf_range_lock *b)
{
	return (a->excl || b->excl) && a->slba < b->end && b->slba < a->end;
}

/* Under l->lock: no earlier request overlaps @rl in a conflicting mode, and for an
 * exclusive request the fast-path writers that started before it are done. */
static bool grantable(const struct nvmf_ns_locks *l, const struct nvmf_range_lock *rl)
{
	const struct nvmf_range_lock *e;

	for (e = TAILQ_FIRST(&l->queue); e && e != rl; e = TAILQ_NEXT(e, link))
		if (conflicts(e, rl))
			return false;
	return !rl->excl || fast_inflight(l) == 0;
}

static void grant_msg(void *arg)
{
	struct nvmf_range_lock *rl = arg;
	struct nvmf_req *req = req_of(rl);

	TAILQ_REMOVE(&req->qpair->rl_waiters, rl, qlink);
	rl->cont(req);
}

/* Under l->lock: grant what can go now, in queue order; each continues on its reactor. */
static void grant_scan(struct nvmf_ns_locks *l)
{
	struct nvmf_range_lock *e;

	TAILQ_FOREACH(e, &l->queue, link)
	{
		if (e->state != NVMF_RL_WAITING || !grantable(l, e))
			continue;
		e->state = NVMF_RL_HELD;
		e->grant.fn = grant_msg;
		e->grant.arg = e;
		reactor_post(req_of(e)->qpair->reactor, &e->grant);
	}
}

/* A fast-path writer is done; an exclusive request may be waiting for exactly that. */
static void fast_put(struct nvmf_ns_locks *l, unsigned int slot)
{
	__atomic_sub_fetch(&l->fast[slot].n, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&l->excl, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&l->lock);
		grant_scan(l);
		pthread_mutex_unlock(&l->lock);
	}
}

void nvmf_range_lock(struct nvmf_req *req, uint64_t slba, uint64_t nlb, bool excl,
		     void (*cont)(struct nvmf_req *req))
{
	struct nvmf_ns_locks *l = &req->ns->locks;
	struct nvmf_range_lock *rl = &req->rl;
	bool now;

	rl->ns = l;
	if (!excl) {
		rl->slot = slot_of(req);
		__atomic_add_fetch(&l->fast[rl->slot].n, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&l->excl, __ATOMIC_SEQ_CST) == 0) {
			rl->state = NVMF_RL_FAST;
			cont(req);
			return;
		}
		fast_put(l, rl->slot);
	} else {
		__atomic_add_fetch(&l->excl, 1, __ATOMIC_SEQ_CST);
	}
	rl->excl = excl;
	rl->slba = slba;
	rl->end = slba + nlb;
	rl->cont = cont;
	pthread_mutex_lock(&l->lock);
	TAILQ_INSERT_TAIL(&l->queue, rl, link);
	now = grantable(l, rl);
	rl->state = now ? NVMF_RL_HELD : NVMF_RL_WAITING;
	if (!now) {
		l->waits++;
		TAILQ_INSERT_TAIL(&req->qpair->rl_waiters, rl, qlink);
	}
	pthread_mutex_unlock(&l->lock);
	if (now)
		cont(req);
}

/* Under l->lock: leave the namespace queue (HELD, or WAITING when aborted) and wake who
 * can go now. */
static void queue_leave_locked(struct nvmf_ns_locks *l, struct nvmf_range_lock *rl)
{
	TAILQ_REMOVE(&l->queue, rl, link);
	if (rl->excl)
		__atomic_sub_fetch(&l->excl, 1, __ATOMIC_SEQ_CST);
	rl->state = NVMF_RL_NONE;
	grant_scan(l);
}

static void queue_leave(struct nvmf_range_lock *rl)
{
	struct nvmf_ns_locks *l = rl->ns;

	pthread_mutex_lock(&l->lock);
	queue_leave_locked(l, rl);
	pthread_mutex_unlock(&l->lock);
}

void nvmf_range_unlock(struct nvmf_req *req)
{
	struct nvmf_range_lock *rl = &req->rl;

	switch (rl->state) {
	case NVMF_RL_NONE:
		return;
	case NVMF_RL_FAST:
		rl->state = NVMF_RL_NONE;
		fast_put(rl->ns, rl->slot);
		return;
	case NVMF_RL_WAITING: /* completed without being granted (queue pair going away) */
		TAILQ_REMOVE(&req->qpair->rl_waiters, rl, qlink);
		queue_leave(rl);
		return;
	case NVMF_RL_HELD:
		queue_leave(rl);
		return;
	}
}

bool nvmf_range_lock_abort(struct nvmf_qpair *qp, uint16_t cid)
{
	struct nvmf_range_lock *rl;
	struct nvmf_req *req = NULL, *peer;
	bool waiting, named;

	TAILQ_FOREACH(rl, &qp->rl_waiters, qlink)
	{
		struct nvmf_req *r = req_of(rl);

		if (get_le16(&r->cmd.cid) == cid ||
		    (r->fused_peer && get_le16(&r->fused_peer->cmd.cid) == cid)) {
			req = r;
			break;
		}
	}
	if (!req)
		return false;
	pthread_mutex_lock(&rl->ns->lock);
	waiting = rl->state == NVMF_RL_WAITING;
	if (waiting)
		queue_leave_locked(rl->ns, rl);
	pthread_mutex_unlock(&rl->ns->lock);
	if (!waiting)
		return false; /* granted: its continuation is already on its way */
	TAILQ_REMOVE(&qp->rl_waiters, rl, qlink);
	peer = req->fused_peer;
	if (peer) {
		/* The Write of a fused pair holds the lock; the Compare completes first. The
		 * command named is aborted, the other fails as its fused partner. */
		named = get_le16(&req->cmd.cid) == cid;
		nvmf_req_done(peer, named ? ST_FUSED_FAILED : ST_ABORT_REQ);
		nvmf_req_done(req, named ? ST_ABORT_REQ : ST_FUSED_FAILED);
	} else {
		nvmf_req_done(req, ST_ABORT_REQ);
	}
	return true;
}
