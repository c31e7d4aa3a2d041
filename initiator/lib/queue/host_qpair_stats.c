/* SPDX-License-Identifier: MIT */
/* libnvmeof: queue pair counters (translation time). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "host_internal.h"
#include "host_transport.h"

#define CALIBRATE_NS 20000000ull
#define OVERHEAD_SAMPLES 1001

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t qpair_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return mono_ns();
#endif
}

/* Ticks per nanosecond, measured once against CLOCK_MONOTONIC (1 without a TSC), and the
 * ticks an empty timed interval measures (median of back-to-back reads). */
static pthread_once_t g_cal_once = PTHREAD_ONCE_INIT;
static double g_ticks_per_ns = 1;
static uint64_t g_overhead;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void calibrate(void)
{
	uint64_t d[OVERHEAD_SAMPLES];
#if defined(__x86_64__) || defined(__i386__)
	uint64_t n0 = mono_ns(), t0 = qpair_ticks(), n1, t1;

	do {
		n1 = mono_ns();
	} while (n1 - n0 < CALIBRATE_NS);
	t1 = qpair_ticks();
	g_ticks_per_ns = (double)(t1 - t0) / (double)(n1 - n0);
#endif
	for (unsigned int i = 0; i < OVERHEAD_SAMPLES; i++) {
		uint64_t a = qpair_ticks();

		d[i] = qpair_ticks() - a;
	}
	qsort(d, OVERHEAD_SAMPLES, sizeof(d[0]), cmp_u64);
	g_overhead = d[OVERHEAD_SAMPLES / 2];
}

int nvmeof_qpair_get_stats(const struct nvmeof_qpair *qp, struct nvmeof_qpair_stats *st)
{
	if (!qp || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->xlate_calls = qp->xlate_calls;
	st->direct_cmds = qp->direct_cmds;
	st->direct_descs = qp->direct_descs;
	if (qp->xlate_sampled) {
		double per;

		pthread_once(&g_cal_once, calibrate);
		per = (double)qp->xlate_ticks / (double)qp->xlate_sampled - (double)g_overhead;
		if (per > 0)
			st->xlate_ns = (uint64_t)(per / g_ticks_per_ns * (double)qp->xlate_calls);
	}
	return 0;
}
