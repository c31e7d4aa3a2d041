/* SPDX-License-Identifier: MIT */
/* nvmeof-bench: metrics of a run, aggregation over repeats, differences between paths. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct bench_metric_info bench_metrics[BM_COUNT] = {
	[BM_IOPS] = { "iops", "IOPS", "", true },
	[BM_MIBS] = { "mib_s", "Throughput", "MiB/s", true },
	[BM_LAT_AVG] = { "lat_avg_us", "Average latency", "us", false },
	[BM_LAT_P50] = { "lat_p50_us", "p50 latency", "us", false },
	[BM_LAT_P99] = { "lat_p99_us", "p99 latency", "us", false },
	[BM_LAT_P999] = { "lat_p999_us", "p99.9 latency", "us", false },
	[BM_INIT_CPU] = { "initiator_cpu_us_per_io", "Initiator CPU per I/O", "us", false },
	[BM_TGT_CPU] = { "target_cpu_us_per_io", "Target CPU per I/O", "us", false },
	[BM_TGT_XLATE] = { "target_xlate_us_per_io", "Target SCSI translation per I/O", "us",
			   false },
	[BM_INIT_XLATE] = { "initiator_xlate_us_per_io", "Initiator SCSI translation per I/O", "us",
			    false },
	[BM_PROBE_PCT] = { "xlate_probe_pct_of_target_cpu", "Translation timing cost", "%", false },
	[BM_CEIL_FRAC] = { "ceiling_fraction", "IOPS / tcp-ceiling", "x", true },
	[BM_INIT_UCPU] = { "initiator_user_cpu_us_per_io", "Initiator user CPU per I/O", "us",
			   false },
};

const char *bench_path_name(enum bench_path p)
{
	return p == BENCH_NATIVE ? "native" : "SCSI";
}

const char *bench_path_key(enum bench_path p)
{
	return p == BENCH_NATIVE ? "native" : "scsi";
}

const char *bench_rw_name(enum bench_rw rw)
{
	switch (rw) {
	case BENCH_RANDREAD:
		return "randread";
	case BENCH_RANDWRITE:
		return "randwrite";
	case BENCH_SEQREAD:
		return "read";
	case BENCH_SEQWRITE:
		return "write";
	case BENCH_RANDRW:
		return "randrw";
	}
	return "?";
}

void bench_cell_label(const struct bench_workload *w, char *buf, size_t len)
{
	static const char *const what[] = {
		[BENCH_RANDREAD] = "random read", [BENCH_RANDWRITE] = "random write",
		[BENCH_SEQREAD] = "seq read",     [BENCH_SEQWRITE] = "seq write",
		[BENCH_RANDRW] = "random r/w",
	};
	char size[16], mix[16] = "";

	if (w->bs % (1024 * 1024) == 0)
		snprintf(size, sizeof(size), "%uM", w->bs >> 20);
	else if (w->bs % 1024 == 0)
		snprintf(size, sizeof(size), "%uK", w->bs >> 10);
	else
		snprintf(size, sizeof(size), "%uB", w->bs);
	if (w->rw == BENCH_RANDRW)
		snprintf(mix, sizeof(mix), " %u/%u", w->mixread, 100 - w->mixread);
	snprintf(buf, len, "%s %s%s QD%u", size, what[w->rw], mix, w->qd);
}

double bench_sample_metric(const struct bench_sample *s, enum bench_metric m, double ceil_iops)
{
	double ios = (double)s->ios;

	if (!s->ios || s->secs <= 0)
		return NAN;
	switch (m) {
	case BM_IOPS:
		return ios / s->secs;
	case BM_MIBS:
		return (double)s->bytes / s->secs / (1024.0 * 1024.0);
	case BM_LAT_AVG:
		return s->lat_avg_ns / 1e3;
	case BM_LAT_P50:
		return (double)s->lat_p50_ns / 1e3;
	case BM_LAT_P99:
		return (double)s->lat_p99_ns / 1e3;
	case BM_LAT_P999:
		return (double)s->lat_p999_ns / 1e3;
	case BM_INIT_CPU:
		return s->init_cpu_ns / ios / 1e3;
	case BM_TGT_CPU:
		return s->have_target ? s->tgt_cpu_ns / ios / 1e3 : NAN;
	case BM_TGT_XLATE:
		return s->have_target && !s->tgt_pid_only ? s->tgt_xlate_ns / ios / 1e3 : NAN;
	case BM_INIT_XLATE:
		return s->have_init_xlate ? s->init_xlate_ns / ios / 1e3 : NAN;
	case BM_PROBE_PCT:
		if (!s->have_target || s->tgt_pid_only || s->tgt_cpu_ns <= 0)
			return NAN;
		return 100.0 * (double)s->tgt_xlate_calls * s->tgt_probe_ns / s->tgt_cpu_ns;
	case BM_CEIL_FRAC:
		return ceil_iops > 0 ? ios / s->secs / ceil_iops : NAN;
	case BM_INIT_UCPU:
		return s->init_ucpu_ns > 0 ? s->init_ucpu_ns / ios / 1e3 : NAN;
	case BM_COUNT:
		break;
	}
	return NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_stat_compute(const double *v, unsigned int n, struct bench_stat *out)
{
	double sorted[BENCH_MAX_REPEAT * 4];
	unsigned int k = 0;

	for (unsigned int i = 0; i < n && k < sizeof(sorted) / sizeof(sorted[0]); i++)
		if (!isnan(v[i]))
			sorted[k++] = v[i];
	out->n = k;
	if (!k) {
		out->median = out->min = out->max = NAN;
		return;
	}
	qsort(sorted, k, sizeof(sorted[0]), cmp_double);
	out->min = sorted[0];
	out->max = sorted[k - 1];
	out->median = k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;
}

void bench_ceiling_aggregate(struct bench_ceiling_result *c)
{
	bench_stat_compute(c->iops, c->n, &c->stat);
}

void bench_path_aggregate(struct bench_path_result *res, const struct bench_ceiling_result *c)
{
	double ceil_iops = c && c->stat.n ? c->stat.median : 0;

	for (unsigned int m = 0; m < BM_COUNT; m++) {
		double v[BENCH_MAX_REPEAT];

		for (unsigned int i = 0; i < res->nsamples; i++)
			v[i] = bench_sample_metric(&res->samples[i], (enum bench_metric)m,
						   ceil_iops);
		bench_stat_compute(v, res->nsamples, &res->stat[m]);
	}
}

double bench_diff_pct(double native, double scsi)
{
	if (isnan(native) || isnan(scsi) || native == 0)
		return NAN;
	return (scsi - native) / native * 100.0;
}

double bench_spread_pct(const struct bench_stat *s)
{
	if (s->n < 2 || !(s->median > 0))
		return NAN;
	return (s->max - s->min) / 2 / s->median * 100.0;
}
