/* SPDX-License-Identifier: MIT */
/* nvmeof-bench: the summary and per-metric tables, its own JSON and fio-style JSON. */
#include "config.h"

#include "bench.h"
#include "common/json_writer.h"

#include <math.h>
#include <string.h>
#include <time.h>

char *bench_fmt_count(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (v >= 999.95e3)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 9999.5)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

char *bench_fmt_pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%+.1f%%", v);
	return buf;
}

static char *fmt_metric(enum bench_metric m, double v, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	switch (m) {
	case BM_IOPS:
		return bench_fmt_count(v, buf, len);
	case BM_MIBS:
		snprintf(buf, len, "%.1f", v);
		break;
	case BM_CEIL_FRAC:
		snprintf(buf, len, "%.2fx", v);
		break;
	case BM_PROBE_PCT:
		snprintf(buf, len, "%.2f%%", v);
		break;
	default:
		snprintf(buf, len, v < 10 ? "%.2f" : v < 1000 ? "%.1f" : "%.0f", v);
		break;
	}
	return buf;
}

/* "median" or "median (min-max)" when there were several samples. */
static char *fmt_stat(enum bench_metric m, const struct bench_stat *s, char *buf, size_t len)
{
	char a[32], b[32], c[32];

	fmt_metric(m, s->median, a, sizeof(a));
	if (s->n > 1 && s->min != s->max)
		snprintf(buf, len, "%s (%s-%s)", a, fmt_metric(m, s->min, b, sizeof(b)),
			 fmt_metric(m, s->max, c, sizeof(c)));
	else
		snprintf(buf, len, "%s", a);
	return buf;
}

static bool metric_present(const struct bench_report *r, enum bench_metric m)
{
	for (unsigned int i = 0; i < r->ncells; i++)
		for (unsigned int p = 0; p < BENCH_NPATHS; p++)
			if (r->cells[i].path[p].ran && r->cells[i].path[p].stat[m].n)
				return true;
	return false;
}

static int label_width(const struct bench_report *r)
{
	int w = (int)strlen("workload");

	for (unsigned int i = 0; i < r->ncells; i++)
		if ((int)strlen(r->cells[i].label) > w)
			w = (int)strlen(r->cells[i].label);
	return w;
}

/* One metric: a title line, then workload | native | SCSI | difference. */
static void table(FILE *f, const struct bench_report *r, enum bench_metric m)
{
	const struct bench_metric_info *mi = &bench_metrics[m];
	char v[BENCH_MAX_CELLS][BENCH_NPATHS][64], d[BENCH_MAX_CELLS][16];
	int lw = label_width(r), vw = (int)strlen("native");

	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];
		double med[BENCH_NPATHS];

		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			const struct bench_path_result *res = &c->path[p];

			med[p] = res->ran && res->stat[m].n ? res->stat[m].median : NAN;
			if (res->ran)
				fmt_stat(m, &res->stat[m], v[i][p], sizeof(v[i][p]));
			else
				snprintf(v[i][p], sizeof(v[i][p]), "-");
			if ((int)strlen(v[i][p]) > vw)
				vw = (int)strlen(v[i][p]);
		}
		bench_fmt_pct(bench_diff_pct(med[BENCH_NATIVE], med[BENCH_SCSI]), d[i],
			      sizeof(d[i]));
	}
	if (mi->unit[0] && m != BM_PROBE_PCT && m != BM_CEIL_FRAC)
		fprintf(f, "\n%s (%s)\n", mi->title, mi->unit);
	else
		fprintf(f, "\n%s\n", mi->title);
	fprintf(f, "  %-*s  %*s  %*s  %10s\n", lw, "workload", vw, "native", vw, "SCSI",
		"difference");
	for (unsigned int i = 0; i < r->ncells; i++)
		fprintf(f, "  %-*s  %*s  %*s  %10s\n", lw, r->cells[i].label, vw,
			v[i][BENCH_NATIVE], vw, v[i][BENCH_SCSI], d[i]);
}

/* Target CPU per I/O of a path over the ceiling server's CPU per request. */
static double cpu_ratio(const struct bench_path_result *p, double ceil_cpu_us)
{
	if (!p->ran || !p->stat[BM_TGT_CPU].n || !(ceil_cpu_us > 0))
		return NAN;
	return p->stat[BM_TGT_CPU].median / ceil_cpu_us;
}

static void ceiling_table(FILE *f, const struct bench_report *r)
{
	int lw = label_width(r);

	fprintf(f, "\ntcp-ceiling: the same PDU shapes through an epoll server doing no storage "
		   "work\n(IOPS: path / ceiling; CPU: target CPU per I/O / ceiling server CPU per "
		   "request)\n");
	fprintf(f, "  %-*s  %9s  %8s  %8s  %11s  %10s  %8s\n", lw, "workload", "ceil IOPS",
		"native", "SCSI", "srv us/req", "native CPU", "SCSI CPU");
	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];
		const struct bench_ceiling_result *ce = &c->ceiling;
		const struct bench_path_result *n = &c->path[BENCH_NATIVE],
					       *s = &c->path[BENCH_SCSI];
		char a[32], b[32], d[32], e[32], g[32], h[32];
		struct bench_stat cs;

		if (!ce->ran) {
			fprintf(f, "  %-*s  %s\n", lw, c->label, ce->error[0] ? ce->error : "-");
			continue;
		}
		bench_stat_compute(ce->srv_cpu_us, ce->n, &cs);
		fmt_metric(BM_CEIL_FRAC, n->ran ? n->stat[BM_CEIL_FRAC].median : NAN, b, sizeof(b));
		fmt_metric(BM_CEIL_FRAC, s->ran ? s->stat[BM_CEIL_FRAC].median : NAN, d, sizeof(d));
		snprintf(e, sizeof(e), "%.2f", cs.median);
		fmt_metric(BM_CEIL_FRAC, cpu_ratio(n, cs.median), g, sizeof(g));
		fmt_metric(BM_CEIL_FRAC, cpu_ratio(s, cs.median), h, sizeof(h));
		fprintf(f, "  %-*s  %9s  %8s  %8s  %11s  %10s  %8s\n", lw, c->label,
			bench_fmt_count(ce->stat.median, a, sizeof(a)), b, d, e, g, h);
	}
}

static void settings_line(FILE *f, enum bench_path p, const struct bench_settings *s,
			  const char *err)
{
	fprintf(f, "  %-7s ", bench_path_name(p));
	if (!s->connected) {
		fprintf(f, "%s\n", err && *err ? err : "not run");
		return;
	}
	fprintf(f, "%s (%s), header digest %s, data digest %s, queue depth %u", s->uri,
		s->transport, s->hdgst ? "on" : "off", s->ddgst ? "on" : "off", s->queue_depth);
	if (s->in_capsule)
		fprintf(f, ", in-capsule data %u B", s->in_capsule);
	if (s->mdts)
		fprintf(f, ", MDTS %u KiB", s->mdts / 1024);
	if (s->have_iscsi)
		fprintf(f,
			", ImmediateData=%s, InitialR2T=%s, FirstBurstLength=%u, "
			"MaxBurstLength=%u, "
			"target MaxRecvDataSegmentLength=%u",
			s->immediate_data ? "Yes" : "No", s->initial_r2t ? "Yes" : "No",
			s->first_burst, s->max_burst, s->max_xmit_dsl);
	fprintf(f, "\n");
}

void bench_report_settings(FILE *f, const struct bench_report *r)
{
	const struct bench_opts *o = r->o;
	char qnote[40] = "";

	if (o->queues > 1)
		snprintf(qnote, sizeof(qnote), " x %u queue pairs", o->queues);

	fprintf(f, "nvmeof-bench, %s, %s\n", r->started, r->host);
	if (o->target_label)
		fprintf(f, "  target  %s\n", o->target_label);
	for (unsigned int p = 0; p < BENCH_NPATHS; p++)
		if (o->uri[p])
			settings_line(f, (enum bench_path)p, &r->set[p], NULL);
	fprintf(f,
		"  runs    %u job%s%s, %.1f s measured after %.1f s warm-up, %u repeat%s%s, I/O "
		"range "
		"%llu MiB%s",
		o->jobs, o->jobs == 1 ? "" : "s", qnote, o->time_s, o->warmup_s, o->repeat,
		o->repeat == 1 ? "" : "s", o->repeat > 1 ? " (median, min-max)" : "",
		(unsigned long long)(r->size >> 20),
		o->verify         ? ", data verified"
		: o->precondition ? ", preconditioned"
				  : "");
	if (o->client_cpu >= 0)
		fprintf(f, ", initiator on CPU %d", o->client_cpu);
	if (o->poll_us)
		fprintf(f, ", initiator polls %u us after a completion", o->poll_us);
	if (o->plain_buffers)
		fprintf(f, ", plain (unregistered) I/O buffers");
	fprintf(f, "\n");
}

void bench_report_table(FILE *f, const struct bench_report *r)
{
	static const enum bench_metric shown[] = {
		BM_IOPS,     BM_MIBS,     BM_LAT_AVG, BM_LAT_P50,   BM_LAT_P99,
		BM_LAT_P999, BM_INIT_CPU, BM_TGT_CPU, BM_TGT_XLATE, BM_INIT_XLATE,
	};
	bool any_ceiling = false;

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		if (metric_present(r, shown[i]))
			table(f, r, shown[i]);
		else if (shown[i] == BM_TGT_CPU)
			fprintf(f, "\n%s: not measured (give --target-stats PATH)\n",
				bench_metrics[shown[i]].title);
	}
	for (unsigned int i = 0; i < r->ncells; i++)
		any_ceiling |= r->cells[i].ceiling.ran || r->cells[i].ceiling.error[0];
	if (any_ceiling)
		ceiling_table(f, r);
}

/* ---- the summary -------------------------------------------------------------------------- */
static const enum bench_metric summary_metrics[] = { BM_IOPS, BM_LAT_AVG, BM_TGT_CPU };
#define NOISY_PCT 10.0 /* a row whose runs spread more than this is called noisy */

static double med_of(const struct bench_path_result *res, enum bench_metric m)
{
	return res->ran && res->stat[m].n ? res->stat[m].median : NAN;
}

/* The worst spread of the summary's figures in cell @c. */
static double cell_spread(const struct bench_cell *c)
{
	double worst = NAN;

	for (size_t k = 0; k < sizeof(summary_metrics) / sizeof(summary_metrics[0]); k++)
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			double v;

			if (!c->path[p].ran)
				continue;
			v = bench_spread_pct(&c->path[p].stat[summary_metrics[k]]);
			if (!isnan(v) && (isnan(worst) || v > worst))
				worst = v;
		}
	return worst;
}

double bench_report_max_spread(const struct bench_report *r)
{
	double worst = NAN;

	for (unsigned int i = 0; i < r->ncells; i++) {
		double v = cell_spread(&r->cells[i]);

		if (!isnan(v) && (isnan(worst) || v > worst))
			worst = v;
	}
	return worst;
}

/* "+6.3%", or "+1.4%~" when the runs of the two paths overlap that much. */
static char *fmt_diff(const struct bench_cell *c, enum bench_metric m, char *buf, size_t len)
{
	double d =
		bench_diff_pct(med_of(&c->path[BENCH_NATIVE], m), med_of(&c->path[BENCH_SCSI], m));
	double sn = bench_spread_pct(&c->path[BENCH_NATIVE].stat[m]);
	double ss = bench_spread_pct(&c->path[BENCH_SCSI].stat[m]);

	bench_fmt_pct(d, buf, len);
	if (!isnan(d) && !isnan(sn) && !isnan(ss) && fabs(d) <= sn + ss)
		strncat(buf, "~", len - strlen(buf) - 1);
	return buf;
}

void bench_report_summary(FILE *f, const struct bench_report *r)
{
	const struct bench_opts *o = r->o;
	int lw = label_width(r);
	double worst = bench_report_max_spread(r);
	unsigned int noisy = 0, within = 0, nrows = 0;
	bool have_cpu = metric_present(r, BM_TGT_CPU);

	fprintf(f, "\nnative NVMe/TCP vs SCSI over iSCSI (diff: SCSI relative to native)\n");
	fprintf(f, "  %-*s  %-26s  %-26s  %-24s  %-12s  %s\n", lw, "", "IOPS",
		"average latency (us)", "target CPU per I/O (us)", "translation", "runs");
	fprintf(f, "  %-*s  %8s %8s %8s  %8s %8s %8s  %7s %7s %8s  %-12s  %s\n", lw, "workload",
		"native", "SCSI", "diff", "native", "SCSI", "diff", "native", "SCSI", "diff",
		"us/IO t+i", "spread");
	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];
		const struct bench_path_result *n = &c->path[BENCH_NATIVE],
					       *sc = &c->path[BENCH_SCSI];
		char v[9][32], xl[32], sp[16];
		double spread = cell_spread(c), tx = med_of(sc, BM_TGT_XLATE),
		       ix = med_of(sc, BM_INIT_XLATE);
		unsigned int k = 0;

		for (size_t m = 0; m < sizeof(summary_metrics) / sizeof(summary_metrics[0]); m++) {
			enum bench_metric mm = summary_metrics[m];

			fmt_metric(mm, med_of(n, mm), v[k++], sizeof(v[0]));
			fmt_metric(mm, med_of(sc, mm), v[k++], sizeof(v[0]));
			fmt_diff(c, mm, v[k], sizeof(v[0]));
			if (strchr(v[k], '~'))
				within++;
			k++;
		}
		if (isnan(tx) && isnan(ix))
			snprintf(xl, sizeof(xl), "-");
		else
			snprintf(xl, sizeof(xl), "%.2f+%.2f", isnan(tx) ? 0 : tx,
				 isnan(ix) ? 0 : ix);
		if (isnan(spread))
			snprintf(sp, sizeof(sp), "-");
		else
			snprintf(sp, sizeof(sp), "+-%.1f%%%s", spread,
				 spread > NOISY_PCT ? " !" : "");
		noisy += !isnan(spread) && spread > NOISY_PCT;
		nrows++;
		fprintf(f, "  %-*s  %8s %8s %8s  %8s %8s %8s  %7s %7s %8s  %-12s  %s\n", lw,
			c->label, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], xl, sp);
	}
	fprintf(f,
		"\n  medians of %u run%s per path and workload, %.1f s each after %.1f s of "
		"warm-up, the paths alternated (A B, then B A)\n",
		o->repeat, o->repeat == 1 ? "" : "s", o->time_s, o->warmup_s);
	if (!have_cpu)
		fprintf(f, "  target CPU per I/O: not measured (give --target-stats PATH)\n");
	fprintf(f, "  translation: SCSI<->NVMe translation time per I/O, target + initiator\n");
	if (isnan(worst)) {
		fprintf(f, "  spread: unknown with one run each; differences of a single run are "
			   "not a result (--repeat 3 or more)\n");
	} else {
		fprintf(f,
			"  spread: half the min-max range of the runs, %% of the median, worst "
			"figure of the row; ~ marks a difference inside the two paths' spread "
			"(%u of %u)\n",
			within, nrows * 3);
		if (noisy)
			fprintf(f,
				"  NOISY: the runs spread up to +-%.1f%% (%u of %u workloads over "
				"%.0f%%, marked !): this machine was busy while it ran, read those "
				"differences as noise, not as a result\n",
				worst, noisy, nrows, NOISY_PCT);
		else
			fprintf(f, "  the runs of every workload agree within +-%.1f%%\n", worst);
	}
	if (r->unfair[0])
		fprintf(f, "  WARNING: %s\n", r->unfair);
}

/* ---- JSON ----------------------------------------------------------------------------------- */
static void jnum(FILE *f, double v)
{
	json_write_num(f, v, 6);
}

static void jsettings(FILE *f, const struct bench_settings *s)
{
	fprintf(f, "{\"connected\":%s,\"uri\":", s->connected ? "true" : "false");
	json_write_str(f, s->uri);
	fprintf(f, ",\"transport\":");
	json_write_str(f, s->transport);
	fprintf(f,
		",\"header_digest\":%s,\"data_digest\":%s,\"queue_depth\":%u,\"mdts\":%u,"
		"\"in_capsule\":%u,\"block_size\":%u,\"ns_bytes\":%llu",
		s->hdgst ? "true" : "false", s->ddgst ? "true" : "false", s->queue_depth, s->mdts,
		s->in_capsule, s->block_size, (unsigned long long)s->ns_bytes);
	if (s->have_iscsi)
		fprintf(f,
			",\"iscsi\":{\"immediate_data\":%s,\"initial_r2t\":%s,"
			"\"first_burst_length\":%u,\"max_burst_length\":%u,"
			"\"target_max_recv_data_segment_length\":%u}",
			s->immediate_data ? "true" : "false", s->initial_r2t ? "true" : "false",
			s->first_burst, s->max_burst, s->max_xmit_dsl);
	fputc('}', f);
}

/* "queues":[{"job":0,"queue":0,"ios":N,"iops":X},...]: job j's queue q at j * queues + q */
static void jqueues(FILE *f, const struct bench_sample *s, unsigned int queues)
{
	unsigned int per = queues ? queues : 1;

	fprintf(f, ",\"queues\":[");
	for (unsigned int i = 0; i < s->nqueues; i++) {
		fprintf(f, "%s{\"job\":%u,\"queue\":%u,\"ios\":%llu,\"iops\":", i ? "," : "",
			i / per, i % per, (unsigned long long)s->q_ios[i]);
		jnum(f, s->secs > 0 ? (double)s->q_ios[i] / s->secs : NAN);
		fputc('}', f);
	}
	fputc(']', f);
}

/* Each target reactor over the measurement: CPU time, the path's I/O it served, and both
 * as shares of all reactors' (and CPU as a share of the wall clock: "cpu_util"). */
static void jreactors(FILE *f, const struct bench_sample *s)
{
	double cpu = 0, ios = 0;

	for (unsigned int i = 0; i < s->nreactors; i++) {
		cpu += s->r_cpu_ns[i];
		ios += s->r_ios[i];
	}
	fprintf(f, ",\"reactors\":[");
	for (unsigned int i = 0; i < s->nreactors; i++) {
		fprintf(f, "%s{\"id\":%u,\"cpu_ns\":%.0f,\"ios\":%.0f,\"cpu_share\":", i ? "," : "",
			i, s->r_cpu_ns[i], s->r_ios[i]);
		jnum(f, cpu > 0 ? s->r_cpu_ns[i] / cpu : NAN);
		fprintf(f, ",\"io_share\":");
		jnum(f, ios > 0 ? s->r_ios[i] / ios : NAN);
		fprintf(f, ",\"cpu_util\":");
		jnum(f, s->secs > 0 ? s->r_cpu_ns[i] / (s->secs * 1e9) : NAN);
		fprintf(f, ",\"cpu_ns_per_io\":");
		jnum(f, s->r_ios[i] > 0 ? s->r_cpu_ns[i] / s->r_ios[i] : NAN);
		fputc('}', f);
	}
	fputc(']', f);
}

static void jsample(FILE *f, const struct bench_sample *s, unsigned int queues)
{
	fprintf(f,
		"{\"secs\":%.6f,\"ios\":%llu,\"bytes\":%llu,\"errors\":%llu,\"verify_errors\":%llu,"
		"\"reconnects\":%llu,\"outage_ms\":%llu,"
		"\"lat_avg_ns\":%.1f,\"lat_min_ns\":%llu,\"lat_p50_ns\":%llu,\"lat_p99_ns\":%llu,"
		"\"lat_p999_ns\":%llu,\"lat_max_ns\":%llu,\"initiator_cpu_ns\":%.0f",
		s->secs, (unsigned long long)s->ios, (unsigned long long)s->bytes,
		(unsigned long long)s->errors, (unsigned long long)s->verify_errors,
		(unsigned long long)s->reconnects, (unsigned long long)s->outage_ms, s->lat_avg_ns,
		(unsigned long long)s->lat_min_ns, (unsigned long long)s->lat_p50_ns,
		(unsigned long long)s->lat_p99_ns, (unsigned long long)s->lat_p999_ns,
		(unsigned long long)s->lat_max_ns, s->init_cpu_ns);
	if (s->have_init_xlate)
		fprintf(f, ",\"initiator_xlate_ns\":%.0f,\"initiator_xlate_calls\":%llu",
			s->init_xlate_ns, (unsigned long long)s->init_xlate_calls);
	if (s->have_pid_cpu)
		fprintf(f, ",\"target_pid_cpu_ns\":%.0f", s->pid_cpu_ns);
	if (s->have_target)
		fprintf(f,
			",\"target_cpu_ns\":%.0f,\"target_process_cpu_ns\":%.0f,"
			"\"target_xlate_ns\":%.0f,\"target_xlate_calls\":%llu,\"target_cmds\":%llu,"
			"\"target_probe_ns\":%.2f",
			s->tgt_cpu_ns, s->tgt_proc_cpu_ns, s->tgt_xlate_ns,
			(unsigned long long)s->tgt_xlate_calls, (unsigned long long)s->tgt_cmds,
			s->tgt_probe_ns);
	jqueues(f, s, queues);
	if (s->have_target && s->nreactors)
		jreactors(f, s);
	fputc('}', f);
}

static void jstats(FILE *f, const struct bench_path_result *res, const char *which)
{
	fprintf(f, "\"%s\":{", which);
	for (unsigned int m = 0; m < BM_COUNT; m++) {
		const struct bench_stat *s = &res->stat[m];
		double v = strcmp(which, "median") == 0 ? s->median
			   : strcmp(which, "min") == 0  ? s->min
							: s->max;

		fprintf(f, "%s\"%s\":", m ? "," : "", bench_metrics[m].key);
		jnum(f, s->n ? v : NAN);
	}
	fputc('}', f);
}

static void jpath(FILE *f, const struct bench_path_result *res, unsigned int queues)
{
	fprintf(f, "{\"ran\":%s,\"error\":", res->ran ? "true" : "false");
	json_write_str(f, res->error);
	if (res->ran) {
		fputc(',', f);
		jstats(f, res, "median");
		fputc(',', f);
		jstats(f, res, "min");
		fputc(',', f);
		jstats(f, res, "max");
	}
	fprintf(f, ",\"samples\":[");
	for (unsigned int i = 0; i < res->nsamples; i++) {
		if (i)
			fputc(',', f);
		jsample(f, &res->samples[i], queues);
	}
	fprintf(f, "]}");
}

static void jceiling(FILE *f, const struct bench_ceiling_result *c)
{
	fprintf(f, "{\"ran\":%s,\"error\":", c->ran ? "true" : "false");
	json_write_str(f, c->error);
	fprintf(f,
		",\"req_bytes\":%u,\"resp_bytes\":%u,\"resp2_bytes\":%u,\"iops_median\":", c->req,
		c->resp, c->resp2);
	jnum(f, c->stat.n ? c->stat.median : NAN);
	fprintf(f, ",\"iops\":[");
	for (unsigned int i = 0; i < c->n; i++) {
		if (i)
			fputc(',', f);
		jnum(f, c->iops[i]);
	}
	fprintf(f, "],\"server_cpu_us_per_req\":[");
	for (unsigned int i = 0; i < c->n; i++) {
		if (i)
			fputc(',', f);
		jnum(f, c->srv_cpu_us[i]);
	}
	fprintf(f, "]}");
}

int bench_report_json(FILE *f, const struct bench_report *r)
{
	const struct bench_opts *o = r->o;

	fprintf(f, "{\"tool\":\"nvmeof-bench\",\"version\":1,\"started\":");
	json_write_str(f, r->started);
	fprintf(f, ",\"host\":");
	json_write_str(f, r->host);
	fprintf(f, ",\"target\":");
	json_write_str(f, o->target_label ? o->target_label : "");
	fprintf(f,
		",\n\"options\":{\"time_s\":%.3f,\"warmup_s\":%.3f,\"repeat\":%u,\"jobs\":%u,"
		"\"queues\":%u,"
		"\"size_bytes\":%llu,\"verify\":%s,\"precondition\":%s,\"poll_us\":%u,\"quick\":%s,"
		"\"header_digest\":%s,\"data_digest\":%s,\"client_cpu\":%d,\"target_cpu\":%d},"
		"\n\"paths\":{",
		o->time_s, o->warmup_s, o->repeat, o->jobs, o->queues ? o->queues : 1,
		(unsigned long long)r->size, o->verify ? "true" : "false",
		o->precondition ? "true" : "false", o->poll_us, o->quick ? "true" : "false",
		o->hdgst ? "true" : "false", o->ddgst ? "true" : "false", o->client_cpu,
		o->target_cpu);
	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		fprintf(f, "%s\"%s\":", p ? "," : "", bench_path_key((enum bench_path)p));
		jsettings(f, &r->set[p]);
	}
	fprintf(f, "},\n\"cells\":[");
	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];

		fprintf(f, "%s\n{\"label\":", i ? "," : "");
		json_write_str(f, c->label);
		fprintf(f, ",\"rw\":\"%s\",\"bs\":%u,\"qd\":%u,\"jobs\":%u,\"queues\":%u",
			bench_rw_name(c->w.rw), c->w.bs, c->w.qd, o->jobs,
			o->queues ? o->queues : 1);
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			fprintf(f, ",\n \"%s\":", bench_path_key((enum bench_path)p));
			jpath(f, &c->path[p], o->queues);
		}
		fprintf(f, ",\n \"diff_pct\":{");
		for (unsigned int m = 0; m < BM_COUNT; m++) {
			const struct bench_path_result *a = &c->path[BENCH_NATIVE];
			const struct bench_path_result *b = &c->path[BENCH_SCSI];

			fprintf(f, "%s\"%s\":", m ? "," : "", bench_metrics[m].key);
			jnum(f, bench_diff_pct(a->ran && a->stat[m].n ? a->stat[m].median : NAN,
					       b->ran && b->stat[m].n ? b->stat[m].median : NAN));
		}
		fprintf(f, "},\n \"ceiling\":");
		jceiling(f, &c->ceiling);
		fputc('}', f);
	}
	fprintf(f, "\n]}\n");
	return ferror(f) ? -1 : 0;
}

/* ---- per queue pair and per reactor ------------------------------------------------------ */
static bool has_reactors(const struct bench_sample *s)
{
	return s && s->have_target && !s->tgt_pid_only && s->nreactors > 0;
}

void bench_report_queues(FILE *f, const struct bench_report *r)
{
	const struct bench_opts *o = r->o;
	unsigned int per = o->queues ? o->queues : 1;
	bool any = bench_qpairs(o) > 1;

	for (unsigned int i = 0; i < r->ncells && !any; i++)
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			const struct bench_sample *s = bench_median_sample(&r->cells[i].path[p]);

			any = any || (has_reactors(s) && s->nreactors > 1);
		}
	if (!any)
		return;
	fprintf(f, "\nPer queue pair (job j, queue q: IOPS) and per target reactor (its share "
		   "of the reactors' CPU and of the path's I/O; CPU in cores), median run:\n");
	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];

		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			const struct bench_sample *s = bench_median_sample(&c->path[p]);
			double cpu = 0, ios = 0;
			char a[16];

			if (!s)
				continue;
			fprintf(f, "  %-26s %-6s  queues", c->label,
				bench_path_name((enum bench_path)p));
			for (unsigned int q = 0; q < s->nqueues; q++)
				fprintf(f, " j%uq%u %s", q / per, q % per,
					bench_fmt_count(s->secs > 0 ? (double)s->q_ios[q] / s->secs
								    : NAN,
							a, sizeof(a)));
			fprintf(f, " = %s IOPS\n",
				bench_fmt_count(s->secs > 0 ? (double)s->ios / s->secs : NAN, a,
						sizeof(a)));
			if (!has_reactors(s))
				continue;
			for (unsigned int k = 0; k < s->nreactors; k++) {
				cpu += s->r_cpu_ns[k];
				ios += s->r_ios[k];
			}
			fprintf(f, "  %-26s %-6s  reactors", "", "");
			for (unsigned int k = 0; k < s->nreactors; k++)
				fprintf(f, "%s r%u CPU %.0f%% (%.2f) I/O %.0f%%", k ? "," : "", k,
					cpu > 0 ? 100 * s->r_cpu_ns[k] / cpu : 0,
					s->secs > 0 ? s->r_cpu_ns[k] / (s->secs * 1e9) : 0,
					ios > 0 ? 100 * s->r_ios[k] / ios : 0);
			fputc('\n', f);
		}
	}
}

/* ---- fio-style JSON ----------------------------------------------------------------------- */
const struct bench_sample *bench_median_sample(const struct bench_path_result *res)
{
	const struct bench_sample *best = NULL;
	double med, bestd = INFINITY;

	if (!res->ran || !res->nsamples)
		return NULL;
	med = res->stat[BM_IOPS].median;
	for (unsigned int i = 0; i < res->nsamples; i++) {
		double d = fabs(bench_sample_metric(&res->samples[i], BM_IOPS, 0) - med);

		if (d < bestd) {
			bestd = d;
			best = &res->samples[i];
		}
	}
	return best;
}

/* fio's "lat_ns"/"clat_ns" object: min, max, mean, stddev, N and the percentiles. */
static void fio_lat(FILE *f, const char *key, const struct bench_dir *d, const struct bench_opts *o,
		    bool pct)
{
	fprintf(f, "\"%s\":{\"min\":%llu,\"max\":%llu,\"mean\":", key,
		(unsigned long long)d->lat_min_ns, (unsigned long long)d->lat_max_ns);
	json_write_num(f, d->lat_mean_ns, 9);
	fprintf(f, ",\"stddev\":");
	json_write_num(f, d->lat_stddev_ns, 9);
	fprintf(f, ",\"N\":%llu", (unsigned long long)d->ios);
	if (pct && d->ios) {
		fprintf(f, ",\"percentile\":{");
		for (unsigned int k = 0; k < o->npct; k++)
			fprintf(f, "%s\"%f\":%llu", k ? "," : "", o->pct[k],
				(unsigned long long)d->pct_ns[k]);
		fputc('}', f);
	}
	fputc('}', f);
}

/* fio's "read"/"write"/"trim" object for direction @dir of @s (NULL: all zero). */
static void fio_dir(FILE *f, const char *key, const struct bench_path_result *res,
		    const struct bench_sample *s, unsigned int dir, const struct bench_opts *o)
{
	static const struct bench_dir none;
	const struct bench_dir *d = s && dir < 2 ? &s->dir[dir] : &none;
	double secs = s ? s->secs : 0, iops = secs > 0 ? (double)d->ios / secs : 0;
	double bw = secs > 0 ? (double)d->bytes / secs : 0;
	double imin = INFINITY, imax = 0, isum = 0;
	unsigned int n = 0;

	for (unsigned int i = 0; s && dir < 2 && i < res->nsamples; i++) {
		const struct bench_sample *x = &res->samples[i];
		double v = x->secs > 0 ? (double)x->dir[dir].ios / x->secs : 0;

		imin = v < imin ? v : imin;
		imax = v > imax ? v : imax;
		isum += v;
		n++;
	}
	fprintf(f,
		"\"%s\":{\"io_bytes\":%llu,\"io_kbytes\":%llu,\"bw_bytes\":%.0f,\"bw\":%.0f,"
		"\"iops\":",
		key, (unsigned long long)d->bytes, (unsigned long long)(d->bytes >> 10), bw,
		bw / 1024);
	json_write_num(f, iops, 9);
	fprintf(f,
		",\"runtime\":%.0f,\"total_ios\":%llu,\"short_ios\":0,\"drop_ios\":0,"
		"\"slat_ns\":{\"min\":0,\"max\":0,\"mean\":0,\"stddev\":0,\"N\":0},",
		secs * 1000, (unsigned long long)d->ios);
	fio_lat(f, "clat_ns", d, o, true);
	fputc(',', f);
	fio_lat(f, "lat_ns", d, o, true);
	fprintf(f, ",\"iops_min\":");
	json_write_num(f, n ? imin : 0, 9);
	fprintf(f, ",\"iops_max\":");
	json_write_num(f, imax, 9);
	fprintf(f, ",\"iops_mean\":");
	json_write_num(f, n ? isum / n : 0, 9);
	fprintf(f, ",\"iops_samples\":%u}", n);
}

int bench_report_fio_json(FILE *f, const struct bench_report *r)
{
	const struct bench_opts *o = r->o;
	unsigned int njob = 0;

	fprintf(f, "{\n\"fio version\":\"nvmeof-bench-%s\",\"timestamp\":%lld,\"time\":",
		PACKAGE_VERSION, (long long)time(NULL));
	json_write_str(f, r->started);
	fprintf(f,
		",\n\"global options\":{\"runtime\":\"%g\",\"ramp_time\":\"%g\","
		"\"numjobs\":\"%u\",\"size\":\"%llu\",\"loops\":\"%u\"},\n\"jobs\":[",
		o->time_s, o->warmup_s, o->jobs, (unsigned long long)r->size, o->repeat);
	for (unsigned int i = 0; i < r->ncells; i++) {
		const struct bench_cell *c = &r->cells[i];

		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			const struct bench_path_result *res = &c->path[p];
			const struct bench_sample *s = bench_median_sample(res);
			char name[96];
			bool rd = c->w.rw == BENCH_RANDREAD || c->w.rw == BENCH_SEQREAD ||
				  c->w.rw == BENCH_RANDRW;
			bool wr = c->w.rw != BENCH_RANDREAD && c->w.rw != BENCH_SEQREAD;

			if (!o->uri[p])
				continue;
			snprintf(name, sizeof(name), "%s %s", c->label,
				 bench_path_name((enum bench_path)p));
			fprintf(f, "%s\n{\"jobname\":", njob++ ? "," : "");
			json_write_str(f, name);
			fprintf(f, ",\"groupid\":%u,\"error\":%d,\"eta\":0,\"elapsed\":%.0f,", i,
				s ? 0 : 5 /* EIO, as fio reports a failed job */,
				s ? ceil(s->secs + o->warmup_s) : 0);
			fprintf(f, "\"job options\":{\"name\":");
			json_write_str(f, name);
			fprintf(f, ",\"filename\":");
			json_write_str(f, o->uri[p]);
			fprintf(f, ",\"rw\":\"%s\",\"bs\":\"%u\",\"iodepth\":\"%u\"",
				bench_rw_name(c->w.rw), c->w.bs, c->w.qd);
			if (c->w.rw == BENCH_RANDRW)
				fprintf(f, ",\"rwmixread\":\"%u\"", c->w.mixread);
			fprintf(f, "},\n ");
			fio_dir(f, "read", res, rd ? s : NULL, 0, o);
			fprintf(f, ",\n ");
			fio_dir(f, "write", res, wr ? s : NULL, 1, o);
			fprintf(f, ",\n ");
			fio_dir(f, "trim", res, NULL, 2, o);
			fprintf(f, ",\n \"job_runtime\":%.0f,\"usr_cpu\":", s ? s->secs * 1000 : 0);
			json_write_num(
				f, s && s->secs > 0 ? s->init_cpu_ns / 1e9 / s->secs * 100 : 0, 6);
			fprintf(f,
				",\"sys_cpu\":0,\"ctx\":0,\"majf\":0,\"minf\":0,\n "
				"\"nvmeof\":{\"path\":\"%s\","
				"\"runs\":%u,\"error\":",
				bench_path_key((enum bench_path)p), res->nsamples);
			json_write_str(f, res->error);
			for (size_t m = 0; m < sizeof(summary_metrics) / sizeof(summary_metrics[0]);
			     m++) {
				const struct bench_stat *st = &res->stat[summary_metrics[m]];

				fprintf(f, ",\"%s\":", bench_metrics[summary_metrics[m]].key);
				json_write_num(f, res->ran && st->n ? st->median : NAN, 6);
				fprintf(f, ",\"%s_spread_pct\":",
					bench_metrics[summary_metrics[m]].key);
				json_write_num(f, res->ran ? bench_spread_pct(st) : NAN, 4);
			}
			fprintf(f, ",\"target_xlate_us_per_io\":");
			json_write_num(f, med_of(res, BM_TGT_XLATE), 6);
			fprintf(f, ",\"initiator_xlate_us_per_io\":");
			json_write_num(f, med_of(res, BM_INIT_XLATE), 6);
			fprintf(f, "}}");
		}
	}
	fprintf(f, "\n]}\n");
	return ferror(f) ? -1 : 0;
}
