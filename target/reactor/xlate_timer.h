/* SPDX-License-Identifier: MIT */
/*
 * What the SCSI path costs a reactor beyond the NVMe command itself, sampled per I/O.
 *
 * One SCSI command in STATS_XLATE_SAMPLE, picked at random on its reactor when it starts,
 * is timed in full: every span of SCSI-side work it causes (task set-up and buffer
 * split, CDB decoding, parameter data, each NVMe command planned, each completion mapped
 * back, sense and response building) adds to the command's own tick count, and when the
 * command is released its total goes into the reactor's counters. The other commands are
 * only counted. The snapshot (daemon/stats.c) scales the mean of the timed commands up to
 * all of them, after taking off what an empty span measures.
 *
 * Sampling whole commands at random cannot alias with the number of translator calls a
 * command makes (sampling one call in N did: a 4K write makes five or six calls, and the
 * estimate swung by 15x between identical runs). Everything is a plain store to the
 * reactor's own counters: no atomic read-modify-write, no shared cache line.
 *
 *     struct stats_xlate_io *x = &task->xio;
 *     stats_xlate_io_start(x);                 at the start of the command
 *     uint64_t t = stats_xlate_begin(x);       around each piece of SCSI-side work
 *     ...
 *     stats_xlate_end(x, t);
 *     stats_xlate_io_done(x);                  when the command is released
 */
#ifndef NVMEOF_TARGET_XLATE_TIMER_H
#define NVMEOF_TARGET_XLATE_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "reactor.h"

/* A cheap monotonic tick: the time-stamp counter on x86 (stats_tick_hz() calibrates it),
 * CLOCK_MONOTONIC nanoseconds elsewhere. */
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

#define STATS_XLATE_SAMPLE 16 /* one command in this many is timed, at random */

/* A span longer than this was preempted or interrupted: its command leaves the sample
 * (about 1.6 ms at 2.6 GHz; 4 ms where ticks are nanoseconds). */
#define STATS_XLATE_MAX_TICKS (1ull << 22)

/* Per command: is it timed, and what its spans added up to. */
struct stats_xlate_io {
	uint64_t ticks;
	uint32_t spans;
	bool timed;
};

static inline void relaxed_set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* xorshift64* on the reactor's own state: 1 in STATS_XLATE_SAMPLE, independent of what
 * the commands are. */
static inline bool stats_xlate_pick(struct reactor_stats *st)
{
	uint64_t x = st->xlate_rng ? st->xlate_rng : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	st->xlate_rng = x;
	return ((x * 0x2545f4914f6cdd1dull) >> 32) % STATS_XLATE_SAMPLE == 0;
}

static inline void stats_xlate_io_start_on(struct reactor_stats *st, struct stats_xlate_io *io)
{
	io->ticks = 0;
	io->spans = 0;
	io->timed = stats_xlate_pick(st);
	relaxed_set(&st->xlate_ios, st->xlate_ios + 1);
}

static inline void stats_xlate_io_done_on(struct reactor_stats *st, struct stats_xlate_io *io)
{
	if (!io->timed)
		return;
	io->timed = false; /* a command is released once, but be safe */
	relaxed_set(&st->xlate_ticks, st->xlate_ticks + io->ticks);
	relaxed_set(&st->xlate_spans, st->xlate_spans + io->spans);
	relaxed_set(&st->xlate_sampled, st->xlate_sampled + 1);
}

/* Add one span of @ticks to a timed command; an interrupted span drops the command. */
static inline void stats_xlate_span(struct stats_xlate_io *io, uint64_t ticks)
{
	if (ticks > STATS_XLATE_MAX_TICKS) {
		io->timed = false;
		return;
	}
	io->ticks += ticks;
	io->spans++;
}

/* Off a reactor (there are none in some tests) nothing is counted. */
static inline void stats_xlate_io_start(struct stats_xlate_io *io)
{
	struct reactor *r = reactor_self();

	if (r) {
		stats_xlate_io_start_on(&r->stats, io);
	} else {
		io->timed = false;
		io->ticks = 0;
		io->spans = 0;
	}
}

static inline void stats_xlate_io_done(struct stats_xlate_io *io)
{
	struct reactor *r = reactor_self();

	if (r)
		stats_xlate_io_done_on(&r->stats, io);
}

static inline uint64_t stats_xlate_begin(const struct stats_xlate_io *io)
{
	return io->timed ? stats_ticks() | 1 : 0;
}

static inline void stats_xlate_end(struct stats_xlate_io *io, uint64_t t0)
{
	if (t0)
		stats_xlate_span(io, stats_ticks() - t0);
}

#endif
