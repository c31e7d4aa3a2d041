/* SPDX-License-Identifier: MIT */
/*
 * Latency histogram of nvmeof-bench: log-linear buckets in the manner of HdrHistogram.
 * Values (nanoseconds) below 2^BENCH_HIST_SUB_BITS have a bucket each; above, every power
 * of two is split into 2^(BENCH_HIST_SUB_BITS - 1) equal buckets, so a bucket is at most
 * 1/128 of its values wide: a percentile read from it is within 0.4% of the true value
 * (the bucket's midpoint is reported). Recording is an index computation and an increment;
 * one histogram per thread, merged at the end.
 */
#ifndef NVMEOF_BENCH_HIST_H
#define NVMEOF_BENCH_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define BENCH_HIST_SUB_BITS 8				  /* 256 sub-buckets */
#define BENCH_HIST_HALF (1u << (BENCH_HIST_SUB_BITS - 1)) /* 128 */
#define BENCH_HIST_MAX_BITS 43				  /* values up to ~2.4 h */
#define BENCH_HIST_BUCKETS ((BENCH_HIST_MAX_BITS - BENCH_HIST_SUB_BITS + 2) * BENCH_HIST_HALF)
#define BENCH_HIST_MAX_VALUE ((1ull << BENCH_HIST_MAX_BITS) - 1)

struct bench_hist {
	uint64_t count;
	uint64_t sum;	   /* of recorded values (exact, for the mean) */
	uint64_t min, max; /* exact */
	uint64_t buckets[BENCH_HIST_BUCKETS];
};

void bench_hist_reset(struct bench_hist *h);
/* Bucket of @v (values above BENCH_HIST_MAX_VALUE land in the last bucket). */
unsigned int bench_hist_index(uint64_t v);
/* Smallest value of bucket @idx and its width. */
uint64_t bench_hist_bucket_low(unsigned int idx);
uint64_t bench_hist_bucket_width(unsigned int idx);

static inline void bench_hist_add(struct bench_hist *h, uint64_t v)
{
	if (v > BENCH_HIST_MAX_VALUE)
		v = BENCH_HIST_MAX_VALUE;
	h->buckets[bench_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min || h->count == 1)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* @dst += @src. */
void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src);
/* The value at percentile @p (0..100]: the midpoint of the bucket holding the
 * ceil(p/100 * count)-th smallest value, clamped to [min, max]. 0 when empty. */
uint64_t bench_hist_percentile(const struct bench_hist *h, double p);
double bench_hist_mean(const struct bench_hist *h);
/* Standard deviation from the buckets' midpoints (0 below two values). */
double bench_hist_stddev(const struct bench_hist *h);

#endif
