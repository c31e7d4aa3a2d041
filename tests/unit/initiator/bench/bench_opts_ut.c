/* SPDX-License-Identifier: MIT */
/* initiator/bench/bench_opts.c: parsing, each error naming the option and its value, and
 * the checks made before anything runs. Also the fio-style JSON (bench_report.c). */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "ut.h"

#define N "--native", "nvme+tcp://127.0.0.1/nqn.x"

static int parse(struct bench_opts *o, char *err, size_t errlen, ...)
{
	char *argv[32];
	int argc = 0;
	bool exit_now;
	va_list ap;
	const char *a;

	argv[argc++] = (char *)"nvmeof-bench";
	va_start(ap, errlen);
	while ((a = va_arg(ap, const char *)) && argc < 31)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	return bench_opts_parse(argc, argv, o, &exit_now, err, errlen);
}

static void test_errors_name_option_and_value(void)
{
	static const struct {
		const char *opt, *val, *want;
	} cases[] = {
		{ "--rw", "randrd", "--rw: bad value 'randrd'" },
		{ "--bs", "4k,1000", "--bs: bad value '4k,1000': '1000' is not a multiple of 512" },
		{ "--bs", "32M", "--bs: bad value '32M'" },
		{ "--qd", "0", "--qd: bad value '0': 1 to 1024" },
		{ "--iodepth", "abc", "--iodepth: bad value 'abc'" },
		{ "--time", "0.01", "--time: bad value '0.01'" },
		{ "--repeat", "99", "--repeat: bad value '99'" },
		{ "--percentiles", "99:50", "--percentiles: bad value '99:50'" },
		{ "--percentiles", "0", "--percentiles: bad value '0'" },
		{ "--output-format", "xml", "--output-format: bad value 'xml': normal or json" },
		{ "--pin", "1", "--pin: bad value '1'" },
		{ "--size", "1x", "--size: bad value '1x'" },
		{ "--poll-us", "200000",
		  "--poll-us: bad value '200000': 0 to 100000 microseconds" },
	};
	struct bench_opts o;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, cases[i].opt, cases[i].val, NULL),
				-EINVAL);
		if (!strstr(err, cases[i].want))
			fprintf(stderr, "\n%s %s: got \"%s\"\n", cases[i].opt, cases[i].val, err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
	}
	/* the same in --opt=value form */
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--rw=randrd", NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--rw: bad value 'randrd'"));
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--rwmixread", "70", NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--rwmixread: only with --rw randrw"));
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), "--quick", NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--native"));
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--bogus", NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--bogus: unknown option"));
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--rw", NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--rw: missing value"));
}

/* --queues M: M queue pairs per job, --jobs unchanged, at most 64 queue pairs in all. */
static void test_queues(void)
{
	static const struct {
		const char *val, *want;
	} bad[] = {
		{ "0", "--queues: bad value '0': 1 to 64 queue pairs per job" },
		{ "65", "--queues: bad value '65'" },
		{ "-1", "--queues: bad value '-1'" },
		{ "2x", "--queues: bad value '2x'" },
		{ "", "--queues: bad value ''" },
	};
	struct bench_opts o;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(parse(&o, err, sizeof(err), N, NULL), 0);
	CU_ASSERT_EQUAL(o.queues, 1);
	CU_ASSERT_EQUAL(o.jobs, 1);
	CU_ASSERT_EQUAL(bench_qpairs(&o), 1);
	CU_ASSERT_EQUAL_FATAL(parse(&o, err, sizeof(err), N, "--jobs", "2", "--queues", "3", NULL),
			      0);
	CU_ASSERT_EQUAL(o.jobs, 2);
	CU_ASSERT_EQUAL(o.queues, 3);
	CU_ASSERT_EQUAL(bench_qpairs(&o), 6);
	CU_ASSERT_EQUAL_FATAL(parse(&o, err, sizeof(err), N, "--queues=64", NULL), 0);
	CU_ASSERT_EQUAL(bench_qpairs(&o), 64);
	/* the order of --jobs and --queues does not matter, the product is checked */
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--queues", "8", "--jobs", "9", NULL),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--jobs 9 x --queues 8: at most 64 queue pairs"));
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--jobs", "8", "--queues", "8", NULL), 0);
	CU_ASSERT_EQUAL(bench_qpairs(&o), 64);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--queues", bad[i].val, NULL),
				-EINVAL);
		if (!strstr(err, bad[i].want))
			fprintf(stderr, "\n--queues %s: got \"%s\"\n", bad[i].val, err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
	}
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--queues", NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--queues: missing value"));
}

static void test_fio_options(void)
{
	struct bench_opts o;
	char err[256];

	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--rw", "randrw", "--rwmixread", "70",
			      "--bs", "4k,64K,128KiB", "--percentile_list", "50:99.9",
			      "--output-format=json", "--iodepth", "8", "--runtime", "2", NULL),
			0);
	CU_ASSERT_EQUAL(o.rw, BENCH_RANDRW);
	CU_ASSERT_EQUAL(o.rwmixread, 70);
	CU_ASSERT_EQUAL(o.nbs, 3);
	CU_ASSERT_EQUAL(o.bs_list[0], 4096);
	CU_ASSERT_EQUAL(o.bs_list[1], 65536);
	CU_ASSERT_EQUAL(o.bs_list[2], 131072);
	CU_ASSERT_EQUAL(o.npct, 2);
	CU_ASSERT_DOUBLE_EQUAL(o.pct[1], 99.9, 1e-9);
	CU_ASSERT_EQUAL(o.format, BENCH_FMT_JSON);
	CU_ASSERT_EQUAL(o.qd, 8);
	CU_ASSERT_DOUBLE_EQUAL(o.time_s, 2, 1e-9);
	CU_ASSERT_TRUE(o.custom);
	/* defaults: fio's percentile list, --quick's runs */
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--quick", NULL), 0);
	CU_ASSERT_EQUAL(o.npct, 17);
	CU_ASSERT_DOUBLE_EQUAL(o.pct[16], 99.99, 1e-9);
	CU_ASSERT_EQUAL(o.repeat, 5);
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--quick", "--rw", "read", NULL), -EINVAL);
	/* --ceiling with no value, with a separate value, with =value */
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--ceiling", NULL), 0);
	CU_ASSERT_STRING_EQUAL(o.ceiling, BENCH_CEILING_PROG);
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--ceiling", "/x/tcp-ceiling", NULL), 0);
	CU_ASSERT_STRING_EQUAL(o.ceiling, "/x/tcp-ceiling");
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), "--ceiling=/y", N, NULL), 0);
	CU_ASSERT_STRING_EQUAL(o.ceiling, "/y");
	/* preconditioning and initiator polling: off unless asked for */
	CU_ASSERT_FALSE(o.precondition);
	CU_ASSERT_EQUAL(o.poll_us, 0);
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--precondition", "--poll-us", "100", NULL),
			0);
	CU_ASSERT_TRUE(o.precondition);
	CU_ASSERT_EQUAL(o.poll_us, 100);
}

static void test_checks_before_running(void)
{
	char dir[] = "/tmp/bench_opts_ut.XXXXXX", path[256], ro[160], err[256], tool[4096];
	struct bench_opts o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--json", path, NULL), 0);
	CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(access(path, F_OK), -1); /* checked, not created */

	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--svg", "/nonexistent-dir/x.svg", NULL), 0);
	CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--svg: cannot create '/nonexistent-dir/x.svg'"));

	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--output", dir, NULL), 0);
	CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is a directory"));

	if (geteuid() != 0) { /* root writes anywhere */
		snprintf(ro, sizeof(ro), "%s/ro", dir);
		CU_ASSERT_EQUAL(mkdir(ro, 0555), 0);
		snprintf(path, sizeof(path), "%s/x.json", ro);
		CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--json", path, NULL), 0);
		CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "--json: cannot create"));
		rmdir(ro);
	}

	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--target-stats", dir, NULL), 0);
	CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--target-stats:"));

	/* the ceiling: a missing program is named; one in PATH is found */
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--ceiling=no-such-ceiling-prog", NULL), 0);
	CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--ceiling: 'no-such-ceiling-prog' not found"));
	snprintf(path, sizeof(path), "%s/fake-ceiling", dir);
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("#!/bin/sh\n", f);
	fclose(f);
	chmod(path, 0755);
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char newpath[4200];

	snprintf(newpath, sizeof(newpath), "/nonexistent:%s", dir);
	setenv("PATH", newpath, 1);
	CU_ASSERT_EQUAL(bench_find_tool("fake-ceiling", tool, sizeof(tool)), 0);
	CU_ASSERT_STRING_EQUAL(tool, path);
	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--ceiling=fake-ceiling", NULL), 0);
	CU_ASSERT_EQUAL(bench_opts_check(&o, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(o.ceiling, path);
	if (old) {
		setenv("PATH", old, 1);
		free(old);
	}
	unlink(path);
	rmdir(dir);
}

/* A report of one randrw cell, both paths, three runs each. */
static void test_fio_json(void)
{
	static struct bench_opts o;
	static struct bench_report r;
	struct bench_cell *c = &r.cells[0];
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	CU_ASSERT_EQUAL(parse(&o, err, sizeof(err), N, "--scsi", "iscsi://h/iqn.x/0", "--rw",
			      "randrw", "--rwmixread", "75", "--percentiles", "50:99", NULL),
			0);
	memset(&r, 0, sizeof(r));
	r.o = &o;
	r.ncells = 1;
	c->w = (struct bench_workload){ BENCH_RANDRW, 4096, 16, 75 };
	bench_cell_label(&c->w, c->label, sizeof(c->label));
	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		struct bench_path_result *res = &c->path[p];

		res->ran = true;
		res->nsamples = 3;
		for (unsigned int i = 0; i < 3; i++) {
			struct bench_sample *s = &res->samples[i];
			uint64_t rd = 3000 + 1000 * i + 100 * p, wr = 1000 + 300 * i;

			s->secs = 2.0;
			s->dir[0].ios = rd;
			s->dir[0].bytes = rd * 4096;
			s->dir[0].lat_mean_ns = 50000;
			s->dir[0].lat_min_ns = 10000;
			s->dir[0].lat_max_ns = 900000;
			s->dir[0].pct_ns[0] = 40000 + i;
			s->dir[0].pct_ns[1] = 200000 + i;
			s->dir[1].ios = wr;
			s->dir[1].bytes = wr * 4096;
			s->dir[1].lat_mean_ns = 70000;
			s->dir[1].pct_ns[0] = 60000;
			s->dir[1].pct_ns[1] = 300000;
			s->ios = rd + wr;
			s->bytes = s->ios * 4096;
		}
		bench_path_aggregate(res, NULL);
	}
	f = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(bench_report_fio_json(f, &r), 0);
	fclose(f);

	json_object *root = json_tokener_parse(buf), *jobs, *j, *rd, *wr, *lat, *pct, *v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_TRUE(json_object_object_get_ex(root, "fio version", &v));
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(root, "jobs", &jobs));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(jobs), 2);
	j = json_object_array_get_idx(jobs, 1);
	CU_ASSERT_TRUE(json_object_object_get_ex(j, "jobname", &v));
	CU_ASSERT_STRING_EQUAL(json_object_get_string(v), "4K random r/w 75/25 QD16 SCSI");
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(j, "read", &rd));
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(j, "write", &wr));
	/* the median run (by IOPS) is the second: 4100 reads, 1300 writes over 2 s */
	CU_ASSERT_TRUE(json_object_object_get_ex(rd, "iops", &v));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(v), 2050, 1e-6);
	CU_ASSERT_TRUE(json_object_object_get_ex(rd, "total_ios", &v));
	CU_ASSERT_EQUAL(json_object_get_int64(v), 4100);
	CU_ASSERT_TRUE(json_object_object_get_ex(rd, "bw", &v)); /* KiB/s */
	CU_ASSERT_EQUAL(json_object_get_int64(v), 4100 * 4 / 2);
	CU_ASSERT_TRUE(json_object_object_get_ex(rd, "runtime", &v)); /* ms */
	CU_ASSERT_EQUAL(json_object_get_int64(v), 2000);
	CU_ASSERT_TRUE(json_object_object_get_ex(wr, "iops", &v));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(v), 650, 1e-6);
	CU_ASSERT_TRUE(json_object_object_get_ex(rd, "iops_min", &v));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(v), 1550, 1e-6);
	CU_ASSERT_TRUE(json_object_object_get_ex(rd, "iops_max", &v));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(v), 2550, 1e-6);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(rd, "lat_ns", &lat));
	CU_ASSERT_TRUE(json_object_object_get_ex(lat, "mean", &v));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(v), 50000, 1e-6);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(lat, "percentile", &pct));
	CU_ASSERT_EQUAL(json_object_object_length(pct), 2);
	CU_ASSERT_TRUE(json_object_object_get_ex(pct, "50.000000", &v));
	CU_ASSERT_EQUAL(json_object_get_int64(v), 40001);
	CU_ASSERT_TRUE(json_object_object_get_ex(pct, "99.000000", &v));
	CU_ASSERT_EQUAL(json_object_get_int64(v), 200001);
	CU_ASSERT_TRUE(json_object_object_get_ex(j, "job options", &v));
	CU_ASSERT_TRUE(json_object_object_get_ex(v, "rwmixread", &v));
	CU_ASSERT_STRING_EQUAL(json_object_get_string(v), "75");
	json_object_put(root);
	free(buf);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "errors name the option and the value", test_errors_name_option_and_value },
		{ "fio's options", test_fio_options },
		{ "--queues", test_queues },
		{ "checks before running", test_checks_before_running },
		{ "fio-style JSON", test_fio_json },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_opts", NULL, NULL, tests);
}
