/* SPDX-License-Identifier: MIT */
/*
 * Target statistics for operators and for nvmeof-bench.
 *
 * Counters:
 *   - per reactor: CPU time of its thread, loop iterations, messages, and the time spent in
 *     SCSI translation (stats_xlate_begin()/stats_xlate_end() around the scsi_xlate_*()
 *     calls of the iSCSI front end: a plain store per call in the calling reactor's own
 *     counters, two time-stamp-counter reads on one call in 16; no atomic
 *     read-modify-write, no shared cache line);
 *   - per path (native NVMe over Fabrics, and SCSI through iSCSI): controllers, I/O queues,
 *     commands and bytes of the live controllers (from the core's queue pair counters);
 *   - the NVMe/TCP transport's connection counters and the process CPU time.
 *
 * The stats server answers on a UNIX stream socket (nvmeof-target --stats-socket PATH):
 * every line a client sends ("stats", or an empty line) gets one line of JSON back with a
 * snapshot of all counters (see stats_format_json()). It runs on the main thread's event
 * loop; reading the counters never stops a reactor.
 */
#ifndef NVMEOF_TARGET_STATS_H
#define NVMEOF_TARGET_STATS_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "reactor/reactor.h"
#include "tcp/tcp_transport.h"

struct nvmf_tgt;
struct nvmf_qpair_stats;
struct stats_server;

#define STATS_MAX_REACTORS 64 /* reactors listed one by one in a snapshot */
#define STATS_JSON_MAX 16384  /* a snapshot's JSON line fits in this */

/* ---- translation timing ------------------------------------------------------------------ */
/* A cheap monotonic tick: the time-stamp counter on x86 (invariant on any CPU this runs on
 * in practice; stats_tick_hz() calibrates it), CLOCK_MONOTONIC nanoseconds elsewhere. */
static inline uint64_t stats_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/*
 * Around a translation call on a reactor:
 *     uint64_t t = stats_xlate_begin();
 *     scsi_xlate_cdb(...);
 *     stats_xlate_end(t);
 * Every call is counted; one in STATS_XLATE_SAMPLE is timed (a counter read costs about as
 * much as a small translation step), and the snapshot scales the timed share up after
 * taking off what an empty interval measures (stats_tick_overhead()).
 */
#define STATS_XLATE_SAMPLE 16

static inline uint64_t stats_xlate_begin_on(struct reactor_stats *st)
{
	uint64_t n = st->xlate_calls + 1;

	__atomic_store_n(&st->xlate_calls, n, __ATOMIC_RELAXED);
	return n % STATS_XLATE_SAMPLE ? 0 : stats_ticks() | 1;
}

/* A timed call longer than this was preempted or interrupted: it is not counted as timed
 * (about 1.6 ms at 2.6 GHz; 4 ms where ticks are nanoseconds). */
#define STATS_XLATE_MAX_TICKS (1ull << 22)

static inline void stats_xlate_add(struct reactor_stats *st, uint64_t ticks)
{
	if (ticks > STATS_XLATE_MAX_TICKS)
		return;
	__atomic_store_n(&st->xlate_ticks, st->xlate_ticks + ticks, __ATOMIC_RELAXED);
	__atomic_store_n(&st->xlate_sampled, st->xlate_sampled + 1, __ATOMIC_RELAXED);
}

static inline void stats_xlate_end_on(struct reactor_stats *st, uint64_t t0)
{
	if (t0)
		stats_xlate_add(st, stats_ticks() - t0);
}

/* Off-reactor calls are not counted. */
static inline uint64_t stats_xlate_begin(void)
{
	struct reactor *r = reactor_self();

	return r ? stats_xlate_begin_on(&r->stats) : 0;
}

static inline void stats_xlate_end(uint64_t t0)
{
	struct reactor *r;
	uint64_t t1;

	if (!t0)
		return;
	t1 = stats_ticks(); /* before finding the reactor: that is not translation time */
	r = reactor_self();
	if (r)
		stats_xlate_add(&r->stats, t1 - t0);
}

/* Ticks per second of stats_ticks(), measured against CLOCK_MONOTONIC (the first call
 * takes about 20 ms; later calls refine the figure over the time since then). */
double stats_tick_hz(void);
/* Ticks between two back-to-back stats_ticks() reads (median): the bias of a timed call. */
uint64_t stats_tick_overhead(void);
/* Measured CPU cost of one stats_xlate_begin()/stats_xlate_end() pair on this thread, ns,
 * averaged over timed and untimed calls (best of a few rounds). */
double stats_probe_cost_ns(void);

/* Time of @calls translation calls from the @ticks of the @sampled ones that were timed,
 * less @overhead ticks per timed call. */
uint64_t stats_xlate_estimate_ns(uint64_t ticks, uint64_t sampled, uint64_t calls, double hz,
				 uint64_t overhead);

/* ---- snapshots ------------------------------------------------------------------------------ */
struct stats_path {
	uint64_t ctrlrs;    /* live controllers */
	uint64_t io_queues; /* their connected I/O queues */
	uint64_t read_cmds, write_cmds, other_cmds;
	uint64_t read_bytes, write_bytes;
};

struct stats_reactor {
	uint64_t cpu_ns;
	uint64_t loops, msgs;
	uint64_t xlate_ns, xlate_calls;
};

struct stats_snapshot {
	uint64_t time_ns;	 /* CLOCK_MONOTONIC when taken */
	uint64_t uptime_ns;	 /* since the target was created */
	uint64_t process_cpu_ns; /* every thread of the daemon (user + system) */
	unsigned int nreactors;	 /* reactors running (reactor[] holds the first 64) */
	struct stats_reactor reactor[STATS_MAX_REACTORS];
	struct stats_reactor total; /* sums over all reactors */
	double tick_hz;
	double probe_ns;	  /* cost of one translation probe (begin + end) */
	double tick_overhead_ns;  /* taken off each timed call */
	struct stats_path nvme;	  /* native: controllers with a fabric admin queue */
	struct stats_path scsi;	  /* controllers of in-process front ends (iSCSI sessions) */
	unsigned int connections; /* queue pairs bound to the target, all transports */
	struct nvmf_tcp_stats tcp;
};

/* Take a snapshot of @tgt (main thread or any thread; takes the core's list locks briefly). */
void stats_collect(struct nvmf_tgt *tgt, struct stats_snapshot *snap);
/* Fold the counters of one controller into the path it belongs to (stats_collect's step;
 * exposed for the unit tests). */
void stats_path_add(struct stats_path *p, const struct nvmf_qpair_stats *qs,
		    unsigned int io_queues);
/* One line of JSON (with the trailing newline) into @buf; returns its length, or -ENOSPC. */
int stats_format_json(const struct stats_snapshot *snap, char *buf, size_t len);

/* ---- the socket server ------------------------------------------------------------------- */
/*
 * Listen on the UNIX socket @path (an existing socket file there is replaced, any other
 * file is an error) and serve snapshots of @tgt from @loop. Returns the server, or NULL
 * with a message in @err.
 */
struct stats_server *stats_server_start(struct ev_loop *loop, struct nvmf_tgt *tgt,
					const char *path, char *err, size_t errlen);
/* Close every client and the listening socket, and remove the socket file. */
void stats_server_stop(struct stats_server *srv);

#endif
