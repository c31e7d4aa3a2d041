/* SPDX-License-Identifier: MIT */
/*
 * The threads that do the Diffie-Hellman work of DH-HMAC-CHAP (our key pair for a
 * Challenge, the shared secret of a Reply) off the reactors: a small fixed pool
 * (--auth-threads) with two lanes. The re-authentication of queues that authenticated
 * before is served first; the work of queues that have not is admitted by
 * target/auth/dhchap_admit.h (per host NQN, per peer address, in all) or refused at once,
 * and a free thread takes from it the oldest job of the host and address with the fewest
 * jobs running (dhchap_admit_pick()), not simply the oldest. With two threads or more,
 * one is kept for the re-authentication lane: such work never waits for the other's.
 * A job runs on a pool thread, then its done() runs on its reactor.
 */
#ifndef NVMEOF_TARGET_AUTH_POOL_H
#define NVMEOF_TARGET_AUTH_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/dhchap_admit.h"
#include "nvmf.h"

struct reactor;

struct auth_job {
	struct dhchap_admit_key key;
	void (*run)(struct auth_job *j); /* on a pool thread */
	void (*done)(void *job);         /* then on @reactor, with the job */
	struct reactor *reactor;
	/* the pool's */
	struct auth_job *next;
	unsigned int slot; /* index in the shared lane's pending list */
	enum dhchap_admit_verdict lane;
	bool running;
	uint64_t queued_ns;
};

struct auth_pool;

/* A pool of @threads (1..AUTH_POOL_MAX_THREADS) threads, signals blocked in them. */
#define AUTH_POOL_MAX_THREADS 64
#define AUTH_POOL_MAX_PENDING 4096 /* the largest total limit taken */
int auth_pool_create(unsigned int threads, struct auth_pool **out);
/* Stop and join the threads; jobs still queued are dropped (their queues are gone). */
void auth_pool_destroy(struct auth_pool *p);

/*
 * Queue @j under @lim (its key filled in). Returns the lane (DHCHAP_ADMIT_SHARED or
 * _PRIORITY) when queued, else the refusal, counted, with @j untouched.
 */
enum dhchap_admit_verdict
auth_pool_submit(struct auth_pool *p, const struct dhchap_admit_limits *lim, struct auth_job *j);

void auth_pool_stats(struct auth_pool *p, struct nvmf_auth_stats *out);

#endif
