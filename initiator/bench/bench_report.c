/* SPDX-License-Identifier: MIT */
/* nvmeof-bench: the terminal tables (workload | native | SCSI | difference) and the JSON. */
#include "bench.h"

#include <math.h>
#include <string.h>

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

	fprintf(f, "nvmeof-bench, %s, %s\n", r->started, r->host);
	if (o->target_label)
		fprintf(f, "  target  %s\n", o->target_label);
	for (unsigned int p = 0; p < BENCH_NPATHS; p++)
		if (o->uri[p])
			settings_line(f, (enum bench_path)p, &r->set[p], NULL);
	fprintf(f,
		"  runs    %u job%s, %.1f s measured after %.1f s warm-up, %u repeat%s%s, I/O "
		"range "
		"%llu MiB%s",
		o->jobs, o->jobs == 1 ? "" : "s", o->time_s, o->warmup_s, o->repeat,
		o->repeat == 1 ? "" : "s", o->repeat > 1 ? " (median, min-max)" : "",
		(unsigned long long)(r->size >> 20), o->verify ? ", data verified" : "");
	if (o->client_cpu >= 0)
		fprintf(f, ", initiator on CPU %d", o->client_cpu);
	fprintf(f, "\n");
}

void bench_report_table(FILE *f, const struct bench_report *r)
{
	static const enum bench_metric shown[] = {
		BM_IOPS,     BM_MIBS,	 BM_LAT_AVG,   BM_LAT_P50,    BM_LAT_P99,   BM_LAT_P999,
		BM_INIT_CPU, BM_TGT_CPU, BM_TGT_XLATE, BM_INIT_XLATE, BM_PROBE_PCT,
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

/* ---- JSON ----------------------------------------------------------------------------------- */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void jnum(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

static void jsettings(FILE *f, const struct bench_settings *s)
{
	fprintf(f, "{\"connected\":%s,\"uri\":", s->connected ? "true" : "false");
	jstr(f, s->uri);
	fprintf(f, ",\"transport\":");
	jstr(f, s->transport);
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

static void jsample(FILE *f, const struct bench_sample *s)
{
	fprintf(f,
		"{\"secs\":%.6f,\"ios\":%llu,\"bytes\":%llu,\"errors\":%llu,\"verify_errors\":%llu,"
		"\"lat_avg_ns\":%.1f,\"lat_min_ns\":%llu,\"lat_p50_ns\":%llu,\"lat_p99_ns\":%llu,"
		"\"lat_p999_ns\":%llu,\"lat_max_ns\":%llu,\"initiator_cpu_ns\":%.0f",
		s->secs, (unsigned long long)s->ios, (unsigned long long)s->bytes,
		(unsigned long long)s->errors, (unsigned long long)s->verify_errors, s->lat_avg_ns,
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
	fputc('}', f);
}

static void jstats(FILE *f, const struct bench_path_result *res, const char *which)
{
	fprintf(f, "\"%s\":{", which);
	for (unsigned int m = 0; m < BM_COUNT; m++) {
		const struct bench_stat *s = &res->stat[m];
		double v = strcmp(which, "median") == 0 ? s->median
			   : strcmp(which, "min") == 0	? s->min
							: s->max;

		fprintf(f, "%s\"%s\":", m ? "," : "", bench_metrics[m].key);
		jnum(f, s->n ? v : NAN);
	}
	fputc('}', f);
}

static void jpath(FILE *f, const struct bench_path_result *res)
{
	fprintf(f, "{\"ran\":%s,\"error\":", res->ran ? "true" : "false");
	jstr(f, res->error);
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
		jsample(f, &res->samples[i]);
	}
	fprintf(f, "]}");
}

static void jceiling(FILE *f, const struct bench_ceiling_result *c)
{
	fprintf(f, "{\"ran\":%s,\"error\":", c->ran ? "true" : "false");
	jstr(f, c->error);
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
	jstr(f, r->started);
	fprintf(f, ",\"host\":");
	jstr(f, r->host);
	fprintf(f, ",\"target\":");
	jstr(f, o->target_label ? o->target_label : "");
	fprintf(f,
		",\n\"options\":{\"time_s\":%.3f,\"warmup_s\":%.3f,\"repeat\":%u,\"jobs\":%u,"
		"\"size_bytes\":%llu,\"verify\":%s,\"quick\":%s,\"header_digest\":%s,"
		"\"data_digest\":%s,\"client_cpu\":%d,\"target_cpu\":%d},\n\"paths\":{",
		o->time_s, o->warmup_s, o->repeat, o->jobs, (unsigned long long)r->size,
		o->verify ? "true" : "false", o->quick ? "true" : "false",
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
		jstr(f, c->label);
		fprintf(f, ",\"rw\":\"%s\",\"bs\":%u,\"qd\":%u,\"jobs\":%u", bench_rw_name(c->w.rw),
			c->w.bs, c->w.qd, o->jobs);
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			fprintf(f, ",\n \"%s\":", bench_path_key((enum bench_path)p));
			jpath(f, &c->path[p]);
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
