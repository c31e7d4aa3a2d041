/* SPDX-License-Identifier: MIT */
/* initiator/bench/bench_stats.c: per-run metrics, median/min/max, differences, labels. */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

#include "bench/bench.h"
#include "ut.h"

static void test_stat_compute(void)
{
	static const struct {
		double v[6];
		unsigned int n;
		unsigned int valid;
		double median, min, max;
	} cases[] = {
		{ { 5 }, 1, 1, 5, 5, 5 },
		{ { 3, 1, 2 }, 3, 3, 2, 1, 3 },
		{ { 4, 1, 3, 2 }, 4, 4, 2.5, 1, 4 },
		{ { 10, NAN, 30, 20 }, 4, 3, 20, 10, 30 },
		{ { 7, 7, 7, 1, 100 }, 5, 5, 7, 1, 100 },
		{ { -1, 1 }, 2, 2, 0, -1, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bench_stat s;

		bench_stat_compute(cases[i].v, cases[i].n, &s);
		CU_ASSERT_EQUAL(s.n, cases[i].valid);
		CU_ASSERT_DOUBLE_EQUAL(s.median, cases[i].median, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(s.min, cases[i].min, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(s.max, cases[i].max, 1e-12);
	}
}

static void test_stat_empty(void)
{
	double v[2] = { NAN, NAN };
	struct bench_stat s;

	bench_stat_compute(v, 2, &s);
	CU_ASSERT_EQUAL(s.n, 0);
	CU_ASSERT(isnan(s.median));
	bench_stat_compute(v, 0, &s);
	CU_ASSERT_EQUAL(s.n, 0);
}

static struct bench_sample sample(double secs, uint64_t ios)
{
	struct bench_sample s = { 0 };

	s.secs = secs;
	s.ios = ios;
	s.bytes = ios * 4096;
	s.lat_avg_ns = 250000;
	s.lat_p50_ns = 200000;
	s.lat_p99_ns = 900000;
	s.lat_p999_ns = 1500000;
	s.init_cpu_ns = (double)ios * 3000; /* 3 us per I/O */
	return s;
}

static void test_sample_metrics(void)
{
	struct bench_sample s = sample(2.0, 200000);

	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_IOPS, 0), 100000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_MIBS, 0), 100000.0 * 4096 / 1048576,
			       1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_LAT_AVG, 0), 250, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_LAT_P50, 0), 200, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_LAT_P99, 0), 900, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_LAT_P999, 0), 1500, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_INIT_CPU, 0), 3, 1e-9);
	/* not measured: NAN */
	CU_ASSERT(isnan(bench_sample_metric(&s, BM_TGT_CPU, 0)));
	CU_ASSERT(isnan(bench_sample_metric(&s, BM_TGT_XLATE, 0)));
	CU_ASSERT(isnan(bench_sample_metric(&s, BM_INIT_XLATE, 0)));
	CU_ASSERT(isnan(bench_sample_metric(&s, BM_PROBE_PCT, 0)));
	CU_ASSERT(isnan(bench_sample_metric(&s, BM_CEIL_FRAC, 0)));
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_CEIL_FRAC, 125000), 0.8, 1e-12);

	s.have_target = true;
	s.tgt_cpu_ns = 200000.0 * 5000;	 /* 5 us per I/O */
	s.tgt_xlate_ns = 200000.0 * 250; /* 0.25 us per I/O */
	s.tgt_xlate_calls = 600000;	 /* 3 per I/O */
	s.tgt_probe_ns = 20;		 /* 60 ns per I/O: 1.2% of 5 us */
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_TGT_CPU, 0), 5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_TGT_XLATE, 0), 0.25, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_PROBE_PCT, 0), 1.2, 1e-9);
	s.have_init_xlate = true;
	s.init_xlate_ns = 200000.0 * 100;
	CU_ASSERT_DOUBLE_EQUAL(bench_sample_metric(&s, BM_INIT_XLATE, 0), 0.1, 1e-9);

	/* nothing completed: every metric is missing */
	s.ios = 0;
	for (unsigned int m = 0; m < BM_COUNT; m++)
		CU_ASSERT(isnan(bench_sample_metric(&s, (enum bench_metric)m, 1000)));
}

static void test_aggregate(void)
{
	struct bench_path_result r = { 0 };
	struct bench_ceiling_result c = { 0 };

	r.samples[0] = sample(1.0, 90000);
	r.samples[1] = sample(1.0, 110000);
	r.samples[2] = sample(1.0, 100000);
	r.samples[1].init_cpu_ns = 110000.0 * 2000;
	r.nsamples = 3;
	r.ran = true;
	c.iops[0] = 200000;
	c.iops[1] = 180000;
	c.iops[2] = 220000;
	c.n = 3;
	bench_ceiling_aggregate(&c);
	CU_ASSERT_DOUBLE_EQUAL(c.stat.median, 200000, 1e-9);
	bench_path_aggregate(&r, &c);
	CU_ASSERT_EQUAL(r.stat[BM_IOPS].n, 3);
	CU_ASSERT_DOUBLE_EQUAL(r.stat[BM_IOPS].median, 100000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(r.stat[BM_IOPS].min, 90000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(r.stat[BM_IOPS].max, 110000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(r.stat[BM_INIT_CPU].median, 3, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.stat[BM_INIT_CPU].min, 2, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.stat[BM_CEIL_FRAC].median, 0.5, 1e-9);
	CU_ASSERT_EQUAL(r.stat[BM_TGT_CPU].n, 0);
	/* without a ceiling the fraction is missing */
	bench_path_aggregate(&r, NULL);
	CU_ASSERT_EQUAL(r.stat[BM_CEIL_FRAC].n, 0);
}

static void test_diff(void)
{
	static const struct {
		double native, scsi, want;
	} cases[] = {
		{ 100, 80, -20 },
		{ 100, 125, 25 },
		{ 50, 50, 0 },
		{ 2.5, 3.0, 20 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_DOUBLE_EQUAL(bench_diff_pct(cases[i].native, cases[i].scsi),
				       cases[i].want, 1e-9);
	CU_ASSERT(isnan(bench_diff_pct(0, 5)));
	CU_ASSERT(isnan(bench_diff_pct(NAN, 5)));
	CU_ASSERT(isnan(bench_diff_pct(5, NAN)));
}

static void test_labels(void)
{
	static const struct {
		struct bench_workload w;
		const char *label;
	} cases[] = {
		{ { BENCH_RANDREAD, 4096, 32 }, "4K random read QD32" },
		{ { BENCH_RANDWRITE, 65536, 1 }, "64K random write QD1" },
		{ { BENCH_SEQREAD, 131072, 32 }, "128K seq read QD32" },
		{ { BENCH_SEQWRITE, 1048576, 4 }, "1M seq write QD4" },
		{ { BENCH_RANDREAD, 512, 1 }, "512B random read QD1" },
	};
	char buf[48];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bench_cell_label(&cases[i].w, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, cases[i].label);
	}
	CU_ASSERT_STRING_EQUAL(bench_rw_name(BENCH_SEQWRITE), "write");
	CU_ASSERT_STRING_EQUAL(bench_path_key(BENCH_SCSI), "scsi");
	CU_ASSERT_STRING_EQUAL(bench_path_name(BENCH_NATIVE), "native");
	for (unsigned int m = 0; m < BM_COUNT; m++)
		CU_ASSERT_PTR_NOT_NULL(bench_metrics[m].key);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "median, min and max", test_stat_compute },
		{ "no values", test_stat_empty },
		{ "metrics of one run", test_sample_metrics },
		{ "aggregation over repeats", test_aggregate },
		{ "native vs SCSI difference", test_diff },
		{ "workload labels and names", test_labels },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_stats", NULL, NULL, tests);
}
