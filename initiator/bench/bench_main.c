/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench: run each workload over native NVMe/TCP and over SCSI through iSCSI,
 * alternating the paths, and report both side by side.
 */
#include "config.h"

#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "nvmeof-bench"

static const struct bench_workload matrix_loads[] = {
	{ .rw = BENCH_RANDREAD, .bs = 4096 },  { .rw = BENCH_RANDWRITE, .bs = 4096 },
	{ .rw = BENCH_RANDREAD, .bs = 65536 }, { .rw = BENCH_RANDWRITE, .bs = 65536 },
	{ .rw = BENCH_SEQREAD, .bs = 65536 },  { .rw = BENCH_SEQWRITE, .bs = 65536 },
	{ .rw = BENCH_SEQREAD, .bs = 131072 }, { .rw = BENCH_SEQWRITE, .bs = 131072 },
};
/* --quick: the rows of the published Windows native-NVMe comparison. */
static const struct bench_workload quick_loads[] = {
	{ .rw = BENCH_RANDREAD, .bs = 4096, .qd = 32 },
	{ .rw = BENCH_RANDWRITE, .bs = 4096, .qd = 32 },
	{ .rw = BENCH_RANDREAD, .bs = 4096, .qd = 1 },
	{ .rw = BENCH_RANDWRITE, .bs = 4096, .qd = 1 },
	{ .rw = BENCH_RANDREAD, .bs = 65536, .qd = 32 },
	{ .rw = BENCH_SEQREAD, .bs = 65536, .qd = 32 },
	{ .rw = BENCH_SEQWRITE, .bs = 65536, .qd = 32 },
	{ .rw = BENCH_SEQREAD, .bs = 131072, .qd = 32 },
	{ .rw = BENCH_SEQWRITE, .bs = 131072, .qd = 32 },
};
static const unsigned int matrix_qds[] = { 32, 1 };

/* Everything one invocation uses, passed around explicitly. */
struct bench_ctx {
	struct bench_opts o;
	struct bench_report *rep;
	struct bench_conn conn[BENCH_NPATHS];
	bool up[BENCH_NPATHS]; /* connected and not failed */
	char down_why[BENCH_NPATHS][300];
	int tstats_fd; /* -1: no target statistics */
	bool tty;      /* progress line on stderr */
	/* the run in progress */
	unsigned int cell_idx, rep_idx;
	enum bench_path cur_path;
	struct bench_sample *cur;
	struct bench_tstats ts0;
	bool ts0_ok;
	double pid0_ns; /* --target-pid CPU time at the start */
	bool pid0_ok;
	char tstats_err[256];
	bool tstats_foreign[BENCH_NPATHS]; /* said once: the statistics are another target's */
	/* progress: runs done and to do, wall clock */
	unsigned int runs_done, runs_total;
	double t_start, run_secs; /* run_secs: measured seconds per run so far, for the ETA */
	FILE *out;                /* tables and JSON: stdout or --output */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "42 s", "3m05s" */
static char *fmt_secs(double s, char *buf, size_t len)
{
	unsigned int t = s > 0 ? (unsigned int)(s + 0.5) : 0;

	if (t < 100)
		snprintf(buf, len, "%u s", t);
	else
		snprintf(buf, len, "%um%02us", t / 60, t % 60);
	return buf;
}

/* Seconds left: the runs to do at the pace so far (before any run: at the nominal one). */
static double eta_s(const struct bench_ctx *x, double into_run)
{
	double per = x->runs_done ? (now_s() - x->t_start - into_run) / x->runs_done
				  : x->o.time_s + x->o.warmup_s + 0.1;
	double left = (double)(x->runs_total - x->runs_done) * per - into_run;

	return left > 0 ? left : 0;
}

/* ---- the matrix -------------------------------------------------------------------------- */
static void build_cells(const struct bench_opts *o, struct bench_report *r)
{
	const struct bench_workload *loads = matrix_loads;
	size_t nloads = sizeof(matrix_loads) / sizeof(matrix_loads[0]);
	struct bench_workload custom[sizeof(quick_loads) / sizeof(quick_loads[0]) + BENCH_MAX_BS];
	unsigned int qds[2] = { matrix_qds[0], matrix_qds[1] }, nqd = 2;

	r->ncells = 0;
	if (o->quick && !o->qd) {
		for (size_t i = 0; i < sizeof(quick_loads) / sizeof(quick_loads[0]); i++) {
			struct bench_cell *c = &r->cells[r->ncells++];

			c->w = quick_loads[i];
			bench_cell_label(&c->w, c->label, sizeof(c->label));
		}
		return;
	}
	if (o->quick) {
		/* --quick --qd N: its workloads once each, at that depth */
		nloads = 0;
		for (size_t i = 0; i < sizeof(quick_loads) / sizeof(quick_loads[0]); i++)
			if (quick_loads[i].qd == 32)
				custom[nloads++] = quick_loads[i];
		loads = custom;
	} else if (o->custom) {
		for (unsigned int i = 0; i < o->nbs; i++)
			custom[i] = (struct bench_workload){ .rw = o->rw,
							     .bs = o->bs_list[i],
							     .mixread = o->rwmixread };
		loads = custom;
		nloads = o->nbs;
	}
	if (o->qd) {
		qds[0] = o->qd;
		nqd = 1;
	}
	for (unsigned int q = 0; q < nqd; q++)
		for (size_t i = 0; i < nloads && r->ncells < BENCH_MAX_CELLS; i++) {
			struct bench_cell *c = &r->cells[r->ncells++];

			c->w = loads[i];
			c->w.qd = qds[q];
			bench_cell_label(&c->w, c->label, sizeof(c->label));
		}
}

/* ---- progress and target statistics ------------------------------------------------------- */
static void progress_clear(struct bench_ctx *x)
{
	if (x->tty)
		fputs("\r\033[K", stderr);
}

static void on_tick(void *arg, enum bench_phase ph, double secs, uint64_t ios)
{
	struct bench_ctx *x = arg;
	const struct bench_cell *c = &x->rep->cells[x->cell_idx];
	double into = ph == BENCH_PHASE_WARMUP ? secs : x->o.warmup_s + secs;
	char iops[32], eta[16];

	if (!x->tty)
		return;
	bench_fmt_count(secs > 0.05 ? (double)ios / secs : NAN, iops, sizeof(iops));
	fprintf(stderr, "\r\033[K[%2u/%u] %-26s %-6s run %u/%u  %s %4.1f/%.1f s  %7s IOPS  ETA %s",
		x->cell_idx + 1, x->rep->ncells, c->label, bench_path_name(x->cur_path),
		x->rep_idx + 1, x->o.repeat, ph == BENCH_PHASE_WARMUP ? "warm-up" : "measure", secs,
		ph == BENCH_PHASE_WARMUP ? x->o.warmup_s : x->o.time_s, iops,
		fmt_secs(eta_s(x, into), eta, sizeof(eta)));
	fflush(stderr);
}

/* A line per finished workload, whatever stderr is: a log of a long run shows its pace. */
static void cell_done(struct bench_ctx *x, unsigned int ci)
{
	const struct bench_cell *c = &x->rep->cells[ci];
	double med[BENCH_NPATHS];
	char el[16], eta[16], a[32], b[32], d[16];

	if (x->o.progress == 0)
		return;
	for (unsigned int p = 0; p < BENCH_NPATHS; p++)
		med[p] = c->path[p].ran && c->path[p].stat[BM_IOPS].n
				 ? c->path[p].stat[BM_IOPS].median
				 : NAN;
	progress_clear(x);
	fprintf(stderr, "[%2u/%u] %-26s native %7s  SCSI %7s IOPS  %-7s  elapsed %s, ETA %s\n",
		ci + 1, x->rep->ncells, c->label, bench_fmt_count(med[BENCH_NATIVE], a, sizeof(a)),
		bench_fmt_count(med[BENCH_SCSI], b, sizeof(b)),
		bench_fmt_pct(bench_diff_pct(med[BENCH_NATIVE], med[BENCH_SCSI]), d, sizeof(d)),
		fmt_secs(now_s() - x->t_start, el, sizeof(el)),
		fmt_secs(eta_s(x, 0), eta, sizeof(eta)));
	fflush(stderr);
}

static void on_mark(void *arg, enum bench_phase ph)
{
	struct bench_ctx *x = arg;
	struct bench_tstats ts;
	struct bench_sample *s = x->cur;

	if (x->o.target_pid > 0) {
		double ns;

		if (bench_pid_cpu_ns(x->o.target_pid, &ns) != 0) {
			x->pid0_ok = false;
		} else if (ph == BENCH_PHASE_MEASURE) {
			x->pid0_ns = ns;
			x->pid0_ok = true;
		} else if (x->pid0_ok) {
			s->pid_cpu_ns = ns - x->pid0_ns;
			s->have_pid_cpu = true;
		}
	}
	if (x->tstats_fd < 0)
		return;
	if (bench_tstats_query(x->tstats_fd, &ts, x->tstats_err, sizeof(x->tstats_err)) != 0) {
		x->ts0_ok = false;
		return;
	}
	if (ph == BENCH_PHASE_MEASURE) {
		x->ts0 = ts;
		x->ts0_ok = true;
		return;
	}
	if (!x->ts0_ok)
		return;
	s->have_target = true;
	s->tgt_cpu_ns = ts.cpu_ns - x->ts0.cpu_ns;
	s->tgt_proc_cpu_ns = ts.proc_cpu_ns - x->ts0.proc_cpu_ns;
	s->tgt_xlate_ns = ts.xlate_ns - x->ts0.xlate_ns;
	s->tgt_xlate_calls = (uint64_t)(ts.xlate_calls - x->ts0.xlate_calls);
	s->tgt_cmds = (uint64_t)(ts.cmds[x->cur_path] - x->ts0.cmds[x->cur_path]);
	s->tgt_probe_ns = ts.probe_ns;
	s->nreactors = ts.nreactors < x->ts0.nreactors ? ts.nreactors : x->ts0.nreactors;
	if (s->nreactors > BENCH_MAX_REACTORS)
		s->nreactors = BENCH_MAX_REACTORS;
	for (unsigned int i = 0; i < s->nreactors; i++) {
		double io = ts.r_ios[x->cur_path][i] - x->ts0.r_ios[x->cur_path][i];

		s->r_cpu_ns[i] = ts.r_cpu_ns[i] - x->ts0.r_cpu_ns[i];
		/* a queue pair that closed meanwhile takes its count away */
		s->r_ios[i] = io > 0 ? io : 0;
	}
}

/* ---- running ---------------------------------------------------------------------------- */
static void path_down(struct bench_ctx *x, enum bench_path p, const char *why)
{
	x->up[p] = false;
	snprintf(x->down_why[p], sizeof(x->down_why[p]), "%s", why);
}

static void run_one(struct bench_ctx *x, unsigned int ci, unsigned int rep, enum bench_path p)
{
	struct bench_cell *c = &x->rep->cells[ci];
	struct bench_path_result *res = &c->path[p];
	struct bench_run_ctl ctl = {
		.mark = on_mark, .tick = on_tick, .arg = x, .other = x->up[!p] ? &x->conn[!p] : NULL
	};
	char err[sizeof(res->error)];
	int rc;

	if (!x->o.uri[p])
		return;
	if (!x->up[p]) {
		snprintf(res->error, sizeof(res->error), "%s", x->down_why[p]);
		return;
	}
	x->cell_idx = ci;
	x->rep_idx = rep;
	x->cur_path = p;
	x->cur = &res->samples[res->nsamples];
	x->ts0_ok = false;
	x->pid0_ok = false;
	x->tstats_err[0] = '\0';
	rc = bench_run_sample(&x->conn[p], &c->w, &x->o, x->rep->size, &ctl, x->cur, err,
			      sizeof(err));
	x->runs_done++;
	progress_clear(x);
	if (rc != 0) {
		snprintf(res->error, sizeof(res->error), "%s", err);
		fprintf(stderr, PROG ": %s, %s: %s\n", c->label, bench_path_name(p), err);
		path_down(x, p, err);
		return;
	}
	if (x->tstats_err[0])
		fprintf(stderr, PROG ": %s\n", x->tstats_err);
	if (x->cur->reconnects || x->cur->outage_ms)
		fprintf(stderr, PROG ": %s, %s: %llu reconnect(s), %llu ms without a connection\n",
			c->label, bench_path_name(p), (unsigned long long)x->cur->reconnects,
			(unsigned long long)x->cur->outage_ms);
	/* Another target served this path: the statistics say nothing about it. */
	if (x->cur->have_target && x->cur->tgt_cmds < x->cur->ios / 2) {
		x->cur->have_target = false;
		if (!x->tstats_foreign[p])
			fprintf(stderr,
				PROG ": the --target-stats target did not see the %s path's "
				     "commands: no target figures for it\n",
				bench_path_name(p));
		x->tstats_foreign[p] = true;
	}
	/* --target-pid: the CPU time of every thread of that process (any target). */
	if (!x->cur->have_target && x->cur->have_pid_cpu) {
		x->cur->have_target = true;
		x->cur->tgt_pid_only = true;
		x->cur->tgt_cpu_ns = x->cur->tgt_proc_cpu_ns = x->cur->pid_cpu_ns;
	}
	res->nsamples++;
	res->ran = true;
}

static void run_ceiling(struct bench_ctx *x, unsigned int ci)
{
	struct bench_cell *c = &x->rep->cells[ci];
	struct bench_ceiling_result *ce = &c->ceiling;
	uint32_t icd = x->rep->set[BENCH_NATIVE].in_capsule;
	double iops, cpu;

	if (!icd)
		icd = 8192;
	bench_ceiling_shape(&c->w, icd, &ce->req, &ce->resp, &ce->resp2);
	if (x->tty)
		fprintf(stderr, "\r\033[K[%2u/%u] %-26s tcp-ceiling %.0f s", ci + 1, x->rep->ncells,
			c->label, ceil(x->o.time_s) + 1);
	if (bench_ceiling_run(&x->o, &c->w, icd, &iops, &cpu, ce->error, sizeof(ce->error)) == 0 &&
	    ce->n < BENCH_MAX_REPEAT) {
		ce->iops[ce->n] = iops;
		ce->srv_cpu_us[ce->n] = cpu;
		ce->n++;
		ce->ran = true;
		ce->error[0] = '\0';
	}
	progress_clear(x);
}

static void run_matrix(struct bench_ctx *x)
{
	x->t_start = now_s();
	x->runs_done = 0;
	x->runs_total = 0;
	for (unsigned int p = 0; p < BENCH_NPATHS; p++)
		if (x->o.uri[p] && x->up[p])
			x->runs_total += x->rep->ncells * x->o.repeat;
	for (unsigned int ci = 0; ci < x->rep->ncells; ci++) {
		struct bench_cell *c = &x->rep->cells[ci];

		for (unsigned int rep = 0; rep < x->o.repeat; rep++) {
			/* A B, then B A: drift and order effects hit both paths alike. */
			enum bench_path first = rep % 2 ? BENCH_SCSI : BENCH_NATIVE;

			run_one(x, ci, rep, first);
			run_one(x, ci, rep, (enum bench_path) !first);
			if (x->o.ceiling)
				run_ceiling(x, ci);
		}
		bench_ceiling_aggregate(&c->ceiling);
		for (unsigned int p = 0; p < BENCH_NPATHS; p++)
			bench_path_aggregate(&c->path[p], &c->ceiling);
		cell_done(x, ci);
	}
}

static int connect_paths(struct bench_ctx *x)
{
	unsigned int depth = 1;
	uint64_t ns_min = UINT64_MAX;
	int nup = 0;

	for (unsigned int i = 0; i < x->rep->ncells; i++)
		if (x->rep->cells[i].w.qd > depth)
			depth = x->rep->cells[i].w.qd;
	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		char err[300];

		if (!x->o.uri[p])
			continue;
		if (bench_conn_open(&x->conn[p], (enum bench_path)p, x->o.uri[p], &x->o, depth,
				    &x->rep->set[p], err, sizeof(err)) != 0) {
			fprintf(stderr, "%s path unavailable: %s\n",
				bench_path_name((enum bench_path)p), err);
			path_down(x, (enum bench_path)p, err);
			continue;
		}
		x->up[p] = true;
		nup++;
		if (x->rep->set[p].ns_bytes < ns_min)
			ns_min = x->rep->set[p].ns_bytes;
	}
	if (!nup)
		return -ENOTCONN;
	if (x->o.size && x->o.size > ns_min) {
		fprintf(stderr, PROG ": --size %llu is larger than the namespace (%llu bytes)\n",
			(unsigned long long)x->o.size, (unsigned long long)ns_min);
		return -EINVAL;
	}
	x->rep->size = x->o.size		     ? x->o.size
		       : ns_min < BENCH_DEFAULT_SIZE ? ns_min
						     : BENCH_DEFAULT_SIZE;
	return 0;
}

static void describe_host(struct bench_report *r)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(r->started, sizeof(r->started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (uname(&u) == 0)
		snprintf(r->host, sizeof(r->host), "%s %s %s, %ld CPUs", u.sysname, u.release,
			 u.machine, sysconf(_SC_NPROCESSORS_ONLN));
}

static int write_outputs(struct bench_ctx *x)
{
	const struct bench_opts *o = &x->o;
	char svgtmp[] = "/tmp/nvmeof-bench-XXXXXX.svg";
	const char *svg = o->svg_path;
	FILE *msg = o->format == BENCH_FMT_JSON ? stderr : x->out; /* JSON stays JSON */
	int rc = 0;
	FILE *f;

	if (o->json_path) {
		f = fopen(o->json_path, "w");
		if (!f || bench_report_json(f, x->rep) != 0 || fclose(f) != 0) {
			fprintf(stderr, PROG ": cannot write %s: %s\n", o->json_path,
				strerror(errno));
			rc = -EIO;
		}
	}
	if (!svg && o->png_path) {
		int fd = mkstemps(svgtmp, 4);

		if (fd < 0)
			return -errno;
		close(fd);
		svg = svgtmp;
	}
	if (svg) {
		f = fopen(svg, "w");
		if (!f || bench_svg_write(f, x->rep) != 0 || fclose(f) != 0) {
			fprintf(stderr, PROG ": cannot write %s: %s\n", svg, strerror(errno));
			rc = -EIO;
		} else if (o->svg_path) {
			fprintf(msg, "\nchart: %s\n", o->svg_path);
		}
	}
	if (o->png_path && rc == 0) {
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			execlp("rsvg-convert", "rsvg-convert", "-b", "white", "-o", o->png_path,
			       svg, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, PROG ": --png: rsvg-convert failed%s\n",
				WIFEXITED(st) && WEXITSTATUS(st) == 127
					? " (not installed: apt-get install librsvg2-bin)"
					: "");
			rc = -EIO;
		} else {
			fprintf(msg, "%schart: %s\n", o->svg_path ? "" : "\n", o->png_path);
		}
	}
	if (svg == svgtmp)
		unlink(svgtmp);
	return rc;
}

/* Both paths should move data the same way: unsolicited data up to the same size. */
static void check_fairness(struct bench_ctx *x)
{
	const struct bench_settings *n = &x->rep->set[BENCH_NATIVE], *sc = &x->rep->set[BENCH_SCSI];
	uint32_t unsol;

	if (!n->connected || !sc->connected || !sc->have_iscsi)
		return;
	unsol = sc->immediate_data || !sc->initial_r2t ? sc->first_burst : 0;
	if (unsol != n->in_capsule)
		snprintf(x->rep->unfair, sizeof(x->rep->unfair),
			 "the paths differ in unsolicited data: NVMe/TCP in-capsule %u B, iSCSI "
			 "FirstBurstLength %u B (ImmediateData=%s, InitialR2T=%s); writes favour "
			 "the larger (give the target --in-capsule %u)",
			 n->in_capsule, unsol, sc->immediate_data ? "Yes" : "No",
			 sc->initial_r2t ? "Yes" : "No", unsol);
	else if (n->hdgst != sc->hdgst || n->ddgst != sc->ddgst)
		snprintf(x->rep->unfair, sizeof(x->rep->unfair),
			 "the paths differ in digests: native header %s data %s, SCSI header %s "
			 "data %s",
			 n->hdgst ? "on" : "off", n->ddgst ? "on" : "off", sc->hdgst ? "on" : "off",
			 sc->ddgst ? "on" : "off");
	if (x->rep->unfair[0])
		fprintf(stderr, PROG ": warning: %s\n", x->rep->unfair);
}

int main(int argc, char **argv)
{
	struct bench_ctx *x = calloc(1, sizeof(*x));
	bool exit_now, complete = true;
	char err[400];
	int rc;

	if (!x)
		return 1;
	x->tstats_fd = -1;
	if (bench_opts_parse(argc, argv, &x->o, &exit_now, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		free(x);
		return 2;
	}
	if (exit_now) { /* --help, --version */
		free(x);
		return 0;
	}
	if (bench_opts_check(&x->o, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		free(x);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	x->tty = x->o.progress != 0 && isatty(STDERR_FILENO);
	x->out = stdout;
	if (x->o.output_path && !(x->out = fopen(x->o.output_path, "w"))) {
		fprintf(stderr, PROG ": --output: cannot write '%s': %s\n", x->o.output_path,
			strerror(errno));
		return 2;
	}
	x->rep = calloc(1, sizeof(*x->rep));
	if (!x->rep)
		return 1;
	x->rep->o = &x->o;
	describe_host(x->rep);
	build_cells(&x->o, x->rep);

	if (x->o.target_stats) {
		struct bench_tstats ts;

		x->tstats_fd = bench_tstats_connect(x->o.target_stats, err, sizeof(err));
		if (x->tstats_fd < 0 || bench_tstats_query(x->tstats_fd, &ts, err, sizeof(err))) {
			fprintf(stderr, PROG ": --target-stats: %s\n", err);
			return 1;
		}
	}
	if (connect_paths(x) != 0)
		return 1;
	check_fairness(x);
	if (x->o.verify || x->o.precondition) {
		/* Through each path: they may reach different namespaces (another target). */
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			if (!x->up[p])
				continue;
			if (x->tty)
				fprintf(stderr, "\r\033[Kwriting the pattern over %llu MiB (%s)",
					(unsigned long long)(x->rep->size >> 20),
					bench_path_name((enum bench_path)p));
			if (bench_prefill(&x->conn[p], x->rep->size, err, sizeof(err)) != 0) {
				progress_clear(x);
				fprintf(stderr, PROG ": %s: %s\n",
					bench_path_name((enum bench_path)p), err);
				return 1;
			}
			progress_clear(x);
		}
	}
	run_matrix(x);

	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		if (!x->o.uri[p])
			continue;
		for (unsigned int i = 0; i < x->rep->ncells; i++)
			if (!x->rep->cells[i].path[p].ran || x->rep->cells[i].path[p].error[0])
				complete = false;
	}
	if (x->o.format == BENCH_FMT_JSON) {
		bench_report_fio_json(x->out, x->rep);
	} else {
		bench_report_settings(x->out, x->rep);
		for (unsigned int p = 0; p < BENCH_NPATHS; p++)
			if (x->o.uri[p] && !x->up[p])
				fprintf(x->out, "%s path unavailable: %s\n",
					bench_path_name((enum bench_path)p), x->down_why[p]);
		bench_report_summary(x->out, x->rep);
		bench_report_queues(x->out, x->rep);
		if (x->o.detail)
			bench_report_table(x->out, x->rep);
	}
	rc = write_outputs(x);
	if (fflush(x->out) != 0 || (x->out != stdout && fclose(x->out) != 0)) {
		fprintf(stderr, PROG ": writing the output: %s\n", strerror(errno));
		rc = -EIO;
	}

	for (unsigned int p = 0; p < BENCH_NPATHS; p++)
		if (x->conn[p].ctrlr)
			bench_conn_close(&x->conn[p]);
	if (x->tstats_fd >= 0)
		close(x->tstats_fd);
	free(x->rep);
	free(x);
	return rc != 0 || !complete ? 1 : 0;
}
