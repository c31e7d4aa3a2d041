/* SPDX-License-Identifier: MIT */
/*
 * LBA range locks of a namespace, honoured by every reactor: fused Compare and Write (and
 * with it SCSI COMPARE AND WRITE) holds its range exclusively from the read of the compare
 * to the end of the write; every command that modifies blocks (Write, Write Zeroes,
 * Dataset Management deallocate) holds its range shared. Shared holders never wait for
 * each other.
 *
 * Fast path: while no exclusive lock is wanted anywhere on the namespace (excl == 0), a
 * writer only bumps an in-flight counter of its reactor's slot (own cache line) and runs;
 * nothing is locked or queued. An exclusive request first raises excl, so writers arriving
 * after it take the slow path, then waits until the writers that took the fast path
 * before it have completed (the slot counters sum to 0). Writer: add to slot, then load
 * excl; exclusive requester: add to excl, then sum the slots (both sequentially
 * consistent), so at least one of the two sees the other.
 *
 * Slow path (only while excl > 0): the namespace's queue of lock requests in arrival
 * order, under its small mutex (held for list work only, never across I/O). A request is
 * granted when no earlier request in the queue overlaps it in a conflicting mode (one of
 * the two exclusive); waiting requests are therefore served in order per range, and a
 * writer never overtakes a compare-and-write queued before it on the same blocks. A
 * request granted by another reactor's release is continued on its own reactor through an
 * embedded reactor_post() item: nothing is allocated.
 *
 * Lock states of one request (enum nvmf_rl_state): NONE -> FAST -> NONE (fast path);
 * NONE -> WAITING -> HELD -> NONE, or WAITING -> NONE when aborted. All transitions are in
 * range_lock.c; nvmf_req_complete() releases whatever the request still holds.
 */
#ifndef NVMEOF_TARGET_RANGE_LOCK_H
#define NVMEOF_TARGET_RANGE_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "reactor/reactor.h"

struct nvmf_req;
struct nvmf_qpair;

#define NVMF_RL_SLOTS 16 /* fast-path in-flight counters per namespace (reactor id % slots) */

enum nvmf_rl_state {
	NVMF_RL_NONE,    /* holds nothing */
	NVMF_RL_FAST,    /* shared, by the fast path: counted in its slot only */
	NVMF_RL_WAITING, /* queued on the namespace, and on its queue pair's waiter list */
	NVMF_RL_HELD,    /* queued on the namespace, granted (continuation posted or run) */
};

/* One request's lock (embedded in struct nvmf_req). */
struct nvmf_range_lock {
	enum nvmf_rl_state state;
	bool excl;
	uint64_t slba, end;                 /* blocks [slba, end) */
	unsigned int slot;                  /* NVMF_RL_FAST: the counter it holds */
	struct nvmf_ns_locks *ns;           /* WAITING/HELD/FAST: the namespace's lock table */
	void (*cont)(struct nvmf_req *req); /* runs once granted */
	TAILQ_ENTRY(nvmf_range_lock) link;  /* ns queue (under the ns lock) */
	TAILQ_ENTRY(nvmf_range_lock) qlink; /* qpair waiter list (its reactor only) */
	struct reactor_post grant;          /* continues a request granted elsewhere */
};

struct nvmf_rl_slot {
	uint64_t n; /* fast-path writers in flight */
	uint8_t pad[56];
};

/* A namespace's lock table (embedded in struct nvmf_ns). */
struct nvmf_ns_locks {
	unsigned int excl; /* atomic: exclusive requests queued or held */
	struct nvmf_rl_slot fast[NVMF_RL_SLOTS];
	pthread_mutex_t lock;                /* queue below; slow path only */
	TAILQ_HEAD(, nvmf_range_lock) queue; /* WAITING and HELD, in arrival order */
	uint64_t waits;                      /* requests that had to wait (statistics, tests) */
};

TAILQ_HEAD(nvmf_rl_waiters, nvmf_range_lock);

void nvmf_ns_locks_init(struct nvmf_ns_locks *l);
void nvmf_ns_locks_fini(struct nvmf_ns_locks *l);

/*
 * Lock blocks [@slba, @slba + @nlb) of req->ns (on the request's reactor), shared or
 * exclusive, then run @cont(@req): inline when granted at once, otherwise later on the
 * request's reactor. Never fails. Released by nvmf_range_unlock() (nvmf_req_complete()
 * calls it).
 */
void nvmf_range_lock(struct nvmf_req *req, uint64_t slba, uint64_t nlb, bool excl,
		     void (*cont)(struct nvmf_req *req));
void nvmf_range_unlock(struct nvmf_req *req);
/*
 * Abort the request with @cid of @qp if it is still waiting for a range lock (on @qp's
 * reactor): it leaves the queue and completes with Command Abort Requested (a fused pair
 * both ways: the Compare aborted, the Write "failed fused"). Returns true if it did.
 */
bool nvmf_range_lock_abort(struct nvmf_qpair *qp, uint16_t cid);

#endif
