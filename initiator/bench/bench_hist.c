/* SPDX-License-Identifier: MIT */
#include "bench_hist.h"

#include <math.h>
#include <string.h>

void bench_hist_reset(struct bench_hist *h)
{
	memset(h, 0, sizeof(*h));
}

unsigned int bench_hist_index(uint64_t v)
{
	unsigned int msb, shift;

	if (v > BENCH_HIST_MAX_VALUE)
		v = BENCH_HIST_MAX_VALUE;
	if (v < 2 * BENCH_HIST_HALF)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	shift = msb - (BENCH_HIST_SUB_BITS - 1);
	return (shift + 1) * BENCH_HIST_HALF + (unsigned int)((v >> shift) - BENCH_HIST_HALF);
}

uint64_t bench_hist_bucket_low(unsigned int idx)
{
	unsigned int shift;

	if (idx < 2 * BENCH_HIST_HALF)
		return idx;
	shift = idx / BENCH_HIST_HALF - 1;
	return (uint64_t)(idx % BENCH_HIST_HALF + BENCH_HIST_HALF) << shift;
}

uint64_t bench_hist_bucket_width(unsigned int idx)
{
	if (idx < 2 * BENCH_HIST_HALF)
		return 1;
	return 1ull << (idx / BENCH_HIST_HALF - 1);
}

void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src)
{
	if (!src->count)
		return;
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (unsigned int i = 0; i < BENCH_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
}

uint64_t bench_hist_percentile(const struct bench_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (unsigned int i = 0; i < BENCH_HIST_BUCKETS; i++) {
		uint64_t v;

		seen += h->buckets[i];
		if (seen < rank)
			continue;
		v = bench_hist_bucket_low(i) + bench_hist_bucket_width(i) / 2;
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		return v;
	}
	return h->max;
}

double bench_hist_mean(const struct bench_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0;
}

double bench_hist_stddev(const struct bench_hist *h)
{
	double mean = bench_hist_mean(h), acc = 0;

	if (h->count < 2)
		return 0;
	for (unsigned int i = 0; i < BENCH_HIST_BUCKETS; i++) {
		double mid, d;

		if (!h->buckets[i])
			continue;
		mid = (double)bench_hist_bucket_low(i) + (double)bench_hist_bucket_width(i) / 2;
		d = mid - mean;
		acc += d * d * (double)h->buckets[i];
	}
	return sqrt(acc / (double)(h->count - 1));
}
