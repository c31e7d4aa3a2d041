/* SPDX-License-Identifier: MIT */
/* initiator/bench/bench_hist.c: bucket layout, percentiles, merging. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_hist.h"
#include "ut.h"

static struct bench_hist *hist_new(void)
{
	struct bench_hist *h = calloc(1, sizeof(*h));

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	return h;
}

/* Every value falls in a bucket that holds it, and buckets are narrow. */
static void test_buckets(void)
{
	static const uint64_t values[] = {
		0,
		1,
		2,
		127,
		128,
		255,
		256,
		257,
		300,
		511,
		512,
		1000,
		1023,
		1024,
		4095,
		4096,
		12345,
		65535,
		65536,
		999999,
		1000000,
		123456789,
		1000000000ull,
		10000000000ull,
		(1ull << 42) - 1,
		1ull << 42,
		BENCH_HIST_MAX_VALUE,
	};

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint64_t v = values[i];
		unsigned int idx = bench_hist_index(v);
		uint64_t lo = bench_hist_bucket_low(idx), w = bench_hist_bucket_width(idx);

		CU_ASSERT(idx < BENCH_HIST_BUCKETS);
		CU_ASSERT(lo <= v);
		CU_ASSERT(v < lo + w);
		/* at most 1/128 of the value */
		CU_ASSERT(v < 256 ? w == 1 : w * 128 <= lo);
	}
	CU_ASSERT_EQUAL(bench_hist_index(255), 255);
	CU_ASSERT_EQUAL(bench_hist_index(256), 256);
	CU_ASSERT_EQUAL(bench_hist_index(BENCH_HIST_MAX_VALUE), BENCH_HIST_BUCKETS - 1);
	CU_ASSERT_EQUAL(bench_hist_index(UINT64_MAX), BENCH_HIST_BUCKETS - 1);
}

/* Indexes never decrease and never skip a bucket as values grow. */
static void test_monotonic(void)
{
	unsigned int prev = 0;

	for (uint64_t v = 0; v < (1u << 20); v++) {
		unsigned int idx = bench_hist_index(v);

		CU_ASSERT_FATAL(idx == prev || idx == prev + 1);
		prev = idx;
	}
	for (unsigned int i = 1; i < BENCH_HIST_BUCKETS; i++)
		CU_ASSERT_FATAL(bench_hist_bucket_low(i) ==
				bench_hist_bucket_low(i - 1) + bench_hist_bucket_width(i - 1));
}

static void assert_close(double got, double want, double rel)
{
	CU_ASSERT(fabs(got - want) <= want * rel);
}

static void test_uniform(void)
{
	struct bench_hist *h = hist_new();
	static const struct {
		double p;
		double want;
	} cases[] = {
		{ 1, 1000 },   { 10, 10000 },	{ 50, 50000 },	  { 90, 90000 },
		{ 99, 99000 }, { 99.9, 99900 }, { 99.99, 99990 },
	};

	for (uint64_t v = 1; v <= 100000; v++)
		bench_hist_add(h, v);
	CU_ASSERT_EQUAL(h->count, 100000);
	CU_ASSERT_EQUAL(h->min, 1);
	CU_ASSERT_EQUAL(h->max, 100000);
	CU_ASSERT_DOUBLE_EQUAL(bench_hist_mean(h), 50000.5, 1e-9);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_close((double)bench_hist_percentile(h, cases[i].p), cases[i].want, 0.005);
	CU_ASSERT_EQUAL(bench_hist_percentile(h, 100), 100000);
	CU_ASSERT_EQUAL(bench_hist_percentile(h, 0), 1);
	free(h);
}

/* 99% fast, 1% slow: p99 is still fast, p99.9 is slow. */
static void test_bimodal(void)
{
	struct bench_hist *h = hist_new();

	for (int i = 0; i < 9900; i++)
		bench_hist_add(h, 10000);
	for (int i = 0; i < 100; i++)
		bench_hist_add(h, 5000000);
	assert_close((double)bench_hist_percentile(h, 50), 10000, 0.004);
	assert_close((double)bench_hist_percentile(h, 99), 10000, 0.004);
	assert_close((double)bench_hist_percentile(h, 99.5), 5000000, 0.004);
	assert_close((double)bench_hist_percentile(h, 99.9), 5000000, 0.004);
	assert_close(bench_hist_mean(h), (9900.0 * 10000 + 100.0 * 5000000) / 10000, 1e-12);
	free(h);
}

static void test_small(void)
{
	struct bench_hist *h = hist_new();

	CU_ASSERT_EQUAL(bench_hist_percentile(h, 50), 0);
	CU_ASSERT_EQUAL(bench_hist_mean(h), 0);
	bench_hist_add(h, 123457);
	/* one value: every percentile is that value (clamped to min/max) */
	CU_ASSERT_EQUAL(bench_hist_percentile(h, 1), 123457);
	CU_ASSERT_EQUAL(bench_hist_percentile(h, 50), 123457);
	CU_ASSERT_EQUAL(bench_hist_percentile(h, 99.9), 123457);
	bench_hist_reset(h);
	CU_ASSERT_EQUAL(h->count, 0);
	bench_hist_add(h, UINT64_MAX); /* clamped */
	CU_ASSERT_EQUAL(h->max, BENCH_HIST_MAX_VALUE);
	CU_ASSERT_EQUAL(h->buckets[BENCH_HIST_BUCKETS - 1], 1);
	free(h);
}

static void test_merge(void)
{
	struct bench_hist *a = hist_new(), *b = hist_new(), *all = hist_new();
	uint64_t x = 88172645463325252ull;

	for (int i = 0; i < 50000; i++) {
		uint64_t v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = 1000 + x % 10000000;
		bench_hist_add(i % 3 ? a : b, v);
		bench_hist_add(all, v);
	}
	bench_hist_merge(a, b);
	CU_ASSERT_EQUAL(a->count, all->count);
	CU_ASSERT_EQUAL(a->sum, all->sum);
	CU_ASSERT_EQUAL(a->min, all->min);
	CU_ASSERT_EQUAL(a->max, all->max);
	CU_ASSERT(memcmp(a->buckets, all->buckets, sizeof(a->buckets)) == 0);
	CU_ASSERT_EQUAL(bench_hist_percentile(a, 99), bench_hist_percentile(all, 99));
	/* merging into an empty histogram takes min from the source */
	bench_hist_reset(b);
	bench_hist_merge(b, all);
	CU_ASSERT_EQUAL(b->min, all->min);
	/* merging an empty one changes nothing */
	bench_hist_reset(all);
	bench_hist_merge(b, all);
	CU_ASSERT_EQUAL(b->count, a->count);
	free(a);
	free(b);
	free(all);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "bucket bounds and width", test_buckets },
		{ "contiguous buckets", test_monotonic },
		{ "uniform distribution percentiles", test_uniform },
		{ "bimodal distribution percentiles", test_bimodal },
		{ "empty, single value, clamping", test_small },
		{ "merge equals recording together", test_merge },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_hist", NULL, NULL, tests);
}
