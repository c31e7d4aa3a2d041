/* SPDX-License-Identifier: MIT */
/* initiator/bench/bench_report.c: number formats, the terminal tables and the JSON file. */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ut.h"

static struct bench_opts g_opts;

static struct bench_sample sample(double iops, double lat_us, double cpu_us)
{
	struct bench_sample s = { 0 };

	s.secs = 1.0;
	s.ios = (uint64_t)iops;
	s.bytes = s.ios * 4096;
	s.lat_avg_ns = lat_us * 1000;
	s.lat_p50_ns = (uint64_t)(lat_us * 900);
	s.lat_p99_ns = (uint64_t)(lat_us * 3000);
	s.lat_p999_ns = (uint64_t)(lat_us * 5000);
	s.init_cpu_ns = cpu_us * 1000 * iops;
	s.have_target = true;
	s.tgt_cpu_ns = cpu_us * 2000 * iops;
	s.tgt_cmds = s.ios;
	return s;
}

/* Two cells: the first on both paths, the second native only (SCSI failed). */
static struct bench_report *make_report(void)
{
	struct bench_report *r = calloc(1, sizeof(*r));
	struct bench_cell *c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	memset(&g_opts, 0, sizeof(g_opts));
	g_opts.uri[BENCH_NATIVE] = "nvme+tcp://127.0.0.1:4420/nqn.2026-11.io.nvmeof:default";
	g_opts.uri[BENCH_SCSI] = "iscsi://127.0.0.1:3260/iqn.2026-11.io.nvmeof:default/0";
	g_opts.time_s = 1;
	g_opts.warmup_s = 0.5;
	g_opts.repeat = 2;
	g_opts.jobs = 1;
	g_opts.target_cpu = g_opts.client_cpu = -1;
	r->o = &g_opts;
	snprintf(r->started, sizeof(r->started), "2026-11-29T12:00:00Z");
	snprintf(r->host, sizeof(r->host), "Linux test x86_64, 2 CPUs");
	r->size = 1ull << 30;
	r->set[BENCH_NATIVE].connected = true;
	snprintf(r->set[BENCH_NATIVE].transport, sizeof(r->set[0].transport), "tcp");
	r->set[BENCH_NATIVE].in_capsule = 8192;
	r->set[BENCH_SCSI].connected = true;
	snprintf(r->set[BENCH_SCSI].transport, sizeof(r->set[1].transport), "iscsi");
	r->set[BENCH_SCSI].have_iscsi = true;
	r->set[BENCH_SCSI].immediate_data = true;
	r->set[BENCH_SCSI].first_burst = 262144;
	r->ncells = 2;

	c = &r->cells[0];
	c->w = (struct bench_workload){ BENCH_RANDREAD, 4096, 32 };
	bench_cell_label(&c->w, c->label, sizeof(c->label));
	c->path[BENCH_NATIVE].ran = true;
	c->path[BENCH_NATIVE].samples[0] = sample(100000, 300, 2);
	c->path[BENCH_NATIVE].samples[1] = sample(100000, 320, 2);
	c->path[BENCH_NATIVE].nsamples = 2;
	c->path[BENCH_SCSI].ran = true;
	c->path[BENCH_SCSI].samples[0] = sample(80000, 400, 2.5);
	c->path[BENCH_SCSI].samples[1] = sample(80000, 400, 2.5);
	c->path[BENCH_SCSI].nsamples = 2;
	c->ceiling.ran = true;
	c->ceiling.iops[0] = c->ceiling.iops[1] = 200000;
	c->ceiling.srv_cpu_us[0] = c->ceiling.srv_cpu_us[1] = 2.0;
	c->ceiling.n = 2;

	c = &r->cells[1];
	c->w = (struct bench_workload){ BENCH_SEQWRITE, 131072, 1 };
	bench_cell_label(&c->w, c->label, sizeof(c->label));
	c->path[BENCH_NATIVE].ran = true;
	c->path[BENCH_NATIVE].samples[0] = sample(5000, 200, 10);
	c->path[BENCH_NATIVE].nsamples = 1;
	snprintf(c->path[BENCH_SCSI].error, sizeof(c->path[1].error),
		 "I/O failed: \"Medium Error\" \\ at LBA 8");

	for (unsigned int i = 0; i < r->ncells; i++) {
		bench_ceiling_aggregate(&r->cells[i].ceiling);
		for (unsigned int p = 0; p < BENCH_NPATHS; p++)
			bench_path_aggregate(&r->cells[i].path[p], &r->cells[i].ceiling);
	}
	return r;
}

static void test_formats(void)
{
	static const struct {
		double v;
		const char *s;
	} counts[] = {
		{ 0, "0" },	    { 987, "987" },	  { 9999, "9999" },
		{ 10000, "10.0k" }, { 123456, "123.5k" }, { 12345678, "12.35M" },
	};
	static const struct {
		double v;
		const char *s;
	} pcts[] = {
		{ -20, "-20.0%" },
		{ 3.14159, "+3.1%" },
		{ 0, "+0.0%" },
		{ 150, "+150.0%" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		CU_ASSERT_STRING_EQUAL(bench_fmt_count(counts[i].v, buf, sizeof(buf)), counts[i].s);
	CU_ASSERT_STRING_EQUAL(bench_fmt_count(NAN, buf, sizeof(buf)), "-");
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		CU_ASSERT_STRING_EQUAL(bench_fmt_pct(pcts[i].v, buf, sizeof(buf)), pcts[i].s);
	CU_ASSERT_STRING_EQUAL(bench_fmt_pct(NAN, buf, sizeof(buf)), "n/a");
}

static char *render(void (*fn)(FILE *, const struct bench_report *), struct bench_report *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fn(f, r);
	fclose(f);
	return out;
}

/* The line of @table (a title) for @label. */
static const char *row(const char *text, const char *table, const char *label)
{
	const char *t = strstr(text, table);

	return t ? strstr(t, label) : NULL;
}

/* @s appears on the line that starts at @l. */
static bool in_line(const char *l, const char *s)
{
	const char *hit = strstr(l, s), *nl = strchr(l, '\n');

	return hit && (!nl || hit < nl);
}

static void test_table(void)
{
	struct bench_report *r = make_report();
	char *out = render(bench_report_table, r);
	const char *l;

	/* IOPS: 100.0k vs 80.0k, -20.0% */
	l = row(out, "\nIOPS\n", "4K random read QD32");
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT(in_line(l, "100.0k"));
	CU_ASSERT(in_line(l, "80.0k"));
	CU_ASSERT(in_line(l, "-20.0%"));
	/* the column header */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "workload"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "difference"));
	/* latency with a range over the two repeats: 310 (300-320) vs 400, +29.0% */
	l = row(out, "\nAverage latency (us)\n", "4K random read QD32");
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT(in_line(l, "310.0 (300.0-320.0)"));
	CU_ASSERT(in_line(l, "+29.0%"));
	/* target CPU per I/O: 4 vs 5 us, +25.0% */
	l = row(out, "\nTarget CPU per I/O (us)\n", "4K random read QD32");
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT(in_line(l, "+25.0%"));
	/* the SCSI run that failed: a dash and n/a */
	l = row(out, "\nIOPS\n", "128K seq write QD1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT(in_line(l, "n/a"));
	/* the ceiling table: 200.0k, native at 0.50x, SCSI at 0.40x */
	l = row(out, "tcp-ceiling", "4K random read QD32");
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT(in_line(l, "200.0k"));
	CU_ASSERT(in_line(l, "0.50x"));
	CU_ASSERT(in_line(l, "0.40x"));
	/* target CPU per I/O (4 and 5 us) over the ceiling server's 2 us per request */
	CU_ASSERT(in_line(l, "2.00x"));
	CU_ASSERT(in_line(l, "2.50x"));
	free(out);
	out = render(bench_report_settings, r);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(out, "ImmediateData=Yes, InitialR2T=No, FirstBurstLength=262144"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "in-capsule data 8192 B"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 repeats (median, min-max)"));
	free(out);
	free(r);
}

static int json_of(struct bench_report *r, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	rc = bench_report_json(f, r);
	fclose(f);
	return rc;
}

static void test_json(void)
{
	static const struct {
		const char *path;
		double want;
	} nums[] = {
		{ "version", 1 },
		{ "options.jobs", 1 },
		{ "options.repeat", 2 },
		{ "options.size_bytes", 1073741824 },
		{ "paths.native.in_capsule", 8192 },
		{ "paths.scsi.iscsi.first_burst_length", 262144 },
		{ "cells.0.bs", 4096 },
		{ "cells.0.qd", 32 },
		{ "cells.0.native.median.iops", 100000 },
		{ "cells.0.native.min.lat_avg_us", 300 },
		{ "cells.0.native.max.lat_avg_us", 320 },
		{ "cells.0.scsi.median.iops", 80000 },
		{ "cells.0.scsi.median.target_cpu_us_per_io", 5 },
		{ "cells.0.diff_pct.iops", -20 },
		{ "cells.0.diff_pct.target_cpu_us_per_io", 25 },
		{ "cells.0.native.samples.1.ios", 100000 },
		{ "cells.0.native.samples.0.lat_p99_ns", 900000 },
		{ "cells.0.native.median.ceiling_fraction", 0.5 },
		{ "cells.0.ceiling.iops_median", 200000 },
		{ "cells.1.bs", 131072 },
		{ "cells.1.native.median.iops", 5000 },
	};
	struct bench_report *r = make_report();
	char *out = NULL;
	double v;

	CU_ASSERT_EQUAL(json_of(r, &out), 0);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		int rc = bench_json_number(out, nums[i].path, &v);

		CU_ASSERT_EQUAL(rc, 0);
		if (rc == 0) {
			CU_ASSERT_DOUBLE_EQUAL(v, nums[i].want, fabs(nums[i].want) * 1e-6);
		} else {
			fprintf(stderr, "missing %s\n", nums[i].path);
		}
	}
	/* a metric that was not measured is null; a path that did not run has no stats */
	CU_ASSERT_EQUAL(
		bench_json_number(out, "cells.0.native.median.initiator_xlate_us_per_io", &v),
		-EINVAL);
	CU_ASSERT_EQUAL(bench_json_number(out, "cells.1.scsi.median.iops", &v), -ENOENT);
	CU_ASSERT_EQUAL(bench_json_number(out, "cells.1.diff_pct.iops", &v), -EINVAL);
	/* the error string with quotes and a backslash is escaped */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "I/O failed: \\\"Medium Error\\\" \\\\ at LBA 8"));
	free(out);
	free(r);
}

/* --jobs 2 --queues 2 on two reactors: each sample's queue pairs and reactors, in the JSON
 * and in the normal output. */
static void test_queues_and_reactors(void)
{
	static const struct {
		const char *path;
		double want;
	} nums[] = {
		{ "options.queues", 2 },
		{ "cells.0.queues", 2 },
		{ "cells.0.native.samples.0.queues.0.job", 0 },
		{ "cells.0.native.samples.0.queues.1.queue", 1 },
		{ "cells.0.native.samples.0.queues.2.job", 1 },
		{ "cells.0.native.samples.0.queues.3.ios", 10000 },
		{ "cells.0.native.samples.0.queues.3.iops", 10000 },
		{ "cells.0.native.samples.0.queues.0.ios", 40000 },
		{ "cells.0.native.samples.0.reactors.1.id", 1 },
		{ "cells.0.native.samples.0.reactors.0.cpu_ns", 300e6 },
		{ "cells.0.native.samples.0.reactors.0.cpu_share", 0.75 },
		{ "cells.0.native.samples.0.reactors.1.io_share", 0.25 },
		{ "cells.0.native.samples.0.reactors.0.cpu_util", 0.3 },
		{ "cells.0.native.samples.0.reactors.1.cpu_ns_per_io", 4000 },
	};
	static const uint64_t q_ios[4] = { 40000, 30000, 20000, 10000 };
	struct bench_report *r = make_report();
	char *out = NULL;
	double v;

	g_opts.jobs = 2;
	g_opts.queues = 2;
	for (unsigned int k = 0; k < 2; k++) {
		struct bench_sample *s = &r->cells[0].path[BENCH_NATIVE].samples[k];

		s->nqueues = 4;
		memcpy(s->q_ios, q_ios, sizeof(q_ios));
		s->nreactors = 2;
		s->r_cpu_ns[0] = 300e6;
		s->r_cpu_ns[1] = 100e6;
		s->r_ios[0] = 75000;
		s->r_ios[1] = 25000;
	}
	CU_ASSERT_EQUAL(json_of(r, &out), 0);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		int rc = bench_json_number(out, nums[i].path, &v);

		CU_ASSERT_EQUAL(rc, 0);
		if (rc == 0) {
			CU_ASSERT_DOUBLE_EQUAL(v, nums[i].want, fabs(nums[i].want) * 1e-6);
		} else {
			fprintf(stderr, "missing %s\n", nums[i].path);
		}
	}
	CU_ASSERT_EQUAL(bench_json_number(out, "cells.0.native.samples.0.queues.4.ios", &v),
			-ENOENT);
	/* no per-reactor figures where the target's were not read */
	CU_ASSERT_EQUAL(bench_json_number(out, "cells.0.scsi.samples.0.reactors.0.id", &v),
			-ENOENT);
	free(out);
	out = render(bench_report_queues, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "queues j0q0 40.0k j0q1 30.0k j1q0 20.0k j1q1 10.0k"
					   " = 100.0k IOPS"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "reactors r0 CPU 75% (0.30) I/O 75%, r1 CPU 25% (0.10) "
					   "I/O 25%"));
	free(out);
	out = render(bench_report_settings, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 jobs x 2 queue pairs"));
	free(out);
	free(r);
	g_opts.jobs = 1;
	g_opts.queues = 0;
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "counts and percentages", test_formats },
		{ "terminal tables", test_table },
		{ "JSON file", test_json },
		{ "per queue pair and per reactor", test_queues_and_reactors },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_report", NULL, NULL, tests);
}
