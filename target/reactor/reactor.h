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
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

struct reactor;
typedef void (*reactor_msg_fn)(void *arg);

/* Per-reactor CPU and work counters, read by the stats interface (relaxed atomics). */
struct reactor_stats {
	uint64_t loops;
	uint64_t msgs;
	/* SCSI path cost, sampled per command (xlate_timer.h) */
	uint64_t xlate_ios;     /* SCSI commands started */
	uint64_t xlate_sampled; /* of which timed in full */
	uint64_t xlate_spans;   /* timed spans of SCSI-side work of those */
	uint64_t xlate_ticks;	/* their time, stats_ticks() units */
	uint64_t xlate_rng;     /* the sampler's state */
	/* polling (reactors_configure_poll) */
	uint64_t poll_events; /* loop iterations that found events */
	uint64_t poll_empty;  /* iterations spent spinning that found none */
	uint64_t poll_sleeps; /* times the reactor went back to sleeping in epoll */
};

struct reactor {
	unsigned int id;
	pthread_t thread;
	struct ev_loop *loop;
	struct reactor_stats stats;
	void *priv; /* reactor.c internals (message queue, buffer pool, exit hooks) */
};

/*
 * Settings read by reactors_start(); call before it.
 * @buf_size: bytes per pool chunk (the target's largest I/O, rounded up to 4 KiB).
 * @buf_limit: chunks per reactor at most (memory bound; 0 = default).
 * @pin: REACTOR_PIN_AUTO pins reactor i to CPU i when there are as many reactors as
 * online CPUs; ON always pins (modulo the CPU count); OFF never does.
 */
enum reactor_pin { REACTOR_PIN_AUTO, REACTOR_PIN_ON, REACTOR_PIN_OFF };
void reactors_configure(size_t buf_size, unsigned int buf_limit, enum reactor_pin pin);

/*
 * How a reactor waits for events (set before reactors_start()):
 *  OFF:      sleep in epoll_wait until something happens (no CPU while idle);
 *  ADAPTIVE: after an event, keep polling without sleeping (epoll_wait with timeout 0)
 *            for a window tuned to the observed gap between events, at most @max_us;
 *            when events come further apart than that, sleep at once. An idle reactor
 *            sleeps, so it costs no CPU;
 *  BUSY:     never sleep (one CPU per reactor at 100%, lowest latency).
 * @max_us = 0 keeps the default (REACTOR_POLL_DEFAULT_US).
 */
enum reactor_poll { REACTOR_POLL_OFF, REACTOR_POLL_ADAPTIVE, REACTOR_POLL_BUSY };
#define REACTOR_POLL_DEFAULT_US 100
#define REACTOR_POLL_MAX_US     10000
void reactors_configure_poll(enum reactor_poll mode, unsigned int max_us);
const char *reactor_poll_name(enum reactor_poll mode);

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
/* The allocation-free variant for the I/O path: @m is embedded in the caller's object and
 * must stay valid (and not be posted again) until @m->fn(@m->arg) has started on @r's
 * thread. Thread-safe; @r may be the calling reactor (the call then runs later, from the
 * loop, never inside reactor_post()). */
struct reactor_post {
	struct reactor_post *next;
	reactor_msg_fn fn;
	void *arg;
};
void reactor_post(struct reactor *r, struct reactor_post *m);
/* reactor_send_msg() to every reactor. Returns 0 or the first error. */
int reactor_for_each(reactor_msg_fn fn, void *arg);

/* Off-reactor shutdown helper: run @close_fn on every reactor, then wait up to
 * @timeout_ms for *@live (a count of open connections) to reach 0. Returns 0 or
 * -ETIMEDOUT (logged, naming @what). */
int reactors_drain(reactor_msg_fn close_fn, const atomic_uint *live, unsigned int timeout_ms,
		   const char *what);

/*
 * Deferred work: run @w->fn(@w->arg) on @r's thread before the loop next waits for
 * events (batching point: e.g. flush every socket written during this iteration once).
 * Owner thread only; queuing an already queued item does nothing. The item is embedded
 * in the caller's object, so this never allocates.
 */
struct reactor_work {
	TAILQ_ENTRY(reactor_work) link;
	reactor_msg_fn fn;
	void *arg;
	bool queued;	/* on the deferred list */
	bool waiting;	/* on the buffer wait list */
};
void reactor_defer(struct reactor *r, struct reactor_work *w);
void reactor_defer_cancel(struct reactor *r, struct reactor_work *w);

/* Called on @r's thread when it stops (e.g. a backend closing its io_uring). */
int reactor_on_exit(struct reactor *r, reactor_msg_fn fn, void *arg);

/* CPU time used so far by @r's thread, in nanoseconds (CLOCK_THREAD_CPUTIME of it). */
uint64_t reactor_cpu_ns(const struct reactor *r);

/*
 * Data buffers: a per-reactor pool of fixed-size chunks (reactor_buf_size(), set by
 * reactors_configure()), grown lazily up to a limit so idle connections cost no memory;
 * the memory of chunks left unused for a couple of seconds goes back to the system.
 * Only the owning reactor calls these. reactor_buf_get() returns NULL when the pool is
 * exhausted: the caller queues a waiter with reactor_buf_wait(), whose work item runs
 * (deferred) once a chunk has been returned; it then retries reactor_buf_get().
 */
void *reactor_buf_get(struct reactor *r);
void reactor_buf_put(struct reactor *r, void *buf);
size_t reactor_buf_size(void);
void reactor_buf_wait(struct reactor *r, struct reactor_work *w);
void reactor_buf_wait_cancel(struct reactor *r, struct reactor_work *w);

/* Pool counters for the stats interface (owner thread, or approximate elsewhere). */
struct reactor_buf_stats {
	unsigned int allocated; /* chunks obtained from the system */
	unsigned int free;	/* chunks on the free list */
	unsigned int limit;
	uint64_t exhausted;	/* reactor_buf_get() calls that returned NULL */
	uint64_t trimmed;       /* times an unused free chunk's memory went back to the system */
};
void reactor_buf_stats(const struct reactor *r, struct reactor_buf_stats *st);

#endif
