/* SPDX-License-Identifier: MIT */
/*
 * Reactors: one thread per core, each with its own libev loop. A connection (queue pair)
 * lives on exactly one reactor and runs to completion there, so nothing on the I/O path
 * takes a lock. Other threads talk to a reactor only through reactor_send_msg().
 */
#ifndef NVMEOF_TARGET_REACTOR_H
#define NVMEOF_TARGET_REACTOR_H

#include <ev.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reactor;
typedef void (*reactor_msg_fn)(void *arg);

/* Per-reactor CPU and work counters, read by the stats interface (relaxed atomics). */
struct reactor_stats {
	uint64_t loops;
	uint64_t msgs;
};

struct reactor {
	unsigned int id;
	pthread_t thread;
	struct ev_loop *loop;
	struct reactor_stats stats;
	void *priv; /* reactor.c internals (message queue, buffer pool, exit hooks) */
};

/* Start @n reactor threads (0 = one per online CPU). The calling thread is not one. */
int reactors_start(unsigned int n);
/* Ask every reactor to run its exit hooks and stop; joins the threads. */
void reactors_stop(void);
unsigned int reactor_count(void);
struct reactor *reactor_get(unsigned int idx);
/* The reactor running the calling thread, or NULL off-reactor. */
struct reactor *reactor_self(void);
/* Round-robin choice for a new connection. */
struct reactor *reactor_next(void);

/* Run @fn(@arg) on @r's thread soon. Thread-safe; never blocks the caller for long.
 * Returns 0 or -ENOMEM. */
int reactor_send_msg(struct reactor *r, reactor_msg_fn fn, void *arg);
/* Same on every reactor; @done (may be NULL) runs on the calling reactor (or main loop
 * thread when called off-reactor... see reactor.c) after all have run @fn. */
int reactor_for_each(reactor_msg_fn fn, void *arg);

/* Called on @r's thread when it stops (e.g. a backend closing its io_uring). */
int reactor_on_exit(struct reactor *r, reactor_msg_fn fn, void *arg);

/* CPU time used so far by @r's thread, in nanoseconds (CLOCK_THREAD_CPUTIME of it). */
uint64_t reactor_cpu_ns(const struct reactor *r);

/*
 * Data buffers: a per-reactor pool of fixed-size chunks (NVMF_BUF_SIZE), grown lazily up
 * to a limit so idle connections cost no memory. Only the owning reactor calls these.
 * Returns NULL when the pool is exhausted: the caller queues the request and retries
 * from reactor_buf_wait() callbacks.
 */
void *reactor_buf_get(struct reactor *r);
void reactor_buf_put(struct reactor *r, void *buf);
size_t reactor_buf_size(void);

#endif
