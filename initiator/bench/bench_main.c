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
	{ BENCH_RANDREAD, 4096, 0 },   { BENCH_RANDWRITE, 4096, 0 },  { BENCH_RANDREAD, 65536, 0 },
	{ BENCH_RANDWRITE, 65536, 0 }, { BENCH_SEQREAD, 65536, 0 },   { BENCH_SEQWRITE, 65536, 0 },
	{ BENCH_SEQREAD, 131072, 0 },  { BENCH_SEQWRITE, 131072, 0 },
};
static const struct bench_workload quick_loads[] = {
	{ BENCH_RANDREAD, 4096, 0 },
	{ BENCH_RANDWRITE, 4096, 0 },
	{ BENCH_SEQREAD, 65536, 0 },
	{ BENCH_SEQWRITE, 65536, 0 },
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
};

static void usage(FILE *f)
{
	fputs("Usage: nvmeof-bench [--native URI] [--scsi URI] [OPTIONS]\n"
	      "Run each workload over native NVMe/TCP and over SCSI commands through iSCSI,\n"
	      "alternating the two paths, and compare IOPS, latency and CPU per I/O.\n"
	      "\n"
	      "  --native URI          nvme+tcp://HOST[:PORT]/NQN[/NSID] (or nvme+rdma://)\n"
	      "  --scsi URI            iscsi://HOST[:PORT]/IQN/LUN\n"
	      "\n"
	      "Workloads (default: 4K random, 64K random, 64K sequential and 128K sequential,\n"
	      "each read and write, at QD 32 and QD 1):\n"
	      "  --quick               a short subset: 4K random and 64K sequential at QD 32 and "
	      "1,\n"
	      "                        1 s per run, 0.3 s warm-up, one repeat\n"
	      "  --rw RW --bs SIZE     one workload: randread, randwrite, read or write\n"
	      "  --qd N                queue depth per job (default: the matrix's 32 and 1)\n"
	      "  --jobs N              queue pairs (iSCSI sessions), one thread each (default 1)\n"
	      "  --time S              measured seconds per run (default 3)\n"
	      "  --warmup S            seconds before measuring (default 1)\n"
	      "  --repeat N            runs per path and workload; median (min-max) (default 3)\n"
	      "  --size SIZE           I/O range (default: the namespace, at most 1G)\n"
	      "  --verify              write a pattern first; check every block read\n"
	      "  --digest              ask for header and data digests on both paths\n"
	      "\n"
	      "Measuring:\n"
	      "  --target-stats PATH   the target's --stats-socket: target CPU per I/O and\n"
	      "                        SCSI translation time\n"
	      "  --ceiling PROG        run tcp-ceiling with each workload's PDU shapes as well\n"
	      "  --pin S,C             initiator threads on CPU C (and up); tcp-ceiling's server\n"
	      "                        on S (pin the target's reactor there too)\n"
	      "  --target-pid PID      target CPU per I/O from that process's CPU time (any\n"
	      "                        target, e.g. tgtd; used where --target-stats does not "
	      "apply)\n"
	      "  --target-label TEXT   what the target is, for the report\n"
	      "\n"
	      "Output:\n"
	      "  --json FILE           every number, as JSON\n"
	      "  --svg FILE            grouped bar charts (IOPS, latency, CPU per I/O)\n"
	      "  --png FILE            the same as PNG (needs rsvg-convert)\n"
	      "  --progress, --no-progress   the live line on stderr (default: on a terminal)\n"
	      "  -h, --help, -V, --version\n",
	      f);
}

/* ---- option parsing ----------------------------------------------------------------------- */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;
	uint64_t mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ull << 30;
		end++;
		break;
	case 't':
	case 'T':
		mul = 1ull << 40;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (*end)
		return -EINVAL;
	*out = (uint64_t)(v * (double)mul);
	return 0;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int parse_secs(const char *s, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min) || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_rw(const char *s, enum bench_rw *rw)
{
	static const struct {
		const char *name;
		enum bench_rw rw;
	} names[] = {
		{ "randread", BENCH_RANDREAD }, { "randwrite", BENCH_RANDWRITE },
		{ "read", BENCH_SEQREAD },	{ "write", BENCH_SEQWRITE },
		{ "seqread", BENCH_SEQREAD },	{ "seqwrite", BENCH_SEQWRITE },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			*rw = names[i].rw;
			return 0;
		}
	return -EINVAL;
}

enum {
	OPT_NATIVE = 256,
	OPT_SCSI,
	OPT_TIME,
	OPT_WARMUP,
	OPT_REPEAT,
	OPT_QD,
	OPT_JOBS,
	OPT_SIZE,
	OPT_RW,
	OPT_BS,
	OPT_VERIFY,
	OPT_QUICK,
	OPT_DIGEST,
	OPT_JSON,
	OPT_SVG,
	OPT_PNG,
	OPT_TSTATS,
	OPT_CEILING,
	OPT_PIN,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_LABEL,
	OPT_TARGET_PID,
};

static int parse_args(int argc, char **argv, struct bench_opts *o, bool *exit_now)
{
	static const struct option lo[] = {
		{ "native", required_argument, NULL, OPT_NATIVE },
		{ "scsi", required_argument, NULL, OPT_SCSI },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "qd", required_argument, NULL, OPT_QD },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "rw", required_argument, NULL, OPT_RW },
		{ "bs", required_argument, NULL, OPT_BS },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "digest", no_argument, NULL, OPT_DIGEST },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "png", required_argument, NULL, OPT_PNG },
		{ "target-stats", required_argument, NULL, OPT_TSTATS },
		{ "ceiling", required_argument, NULL, OPT_CEILING },
		{ "pin", required_argument, NULL, OPT_PIN },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "target-label", required_argument, NULL, OPT_LABEL },
		{ "target-pid", required_argument, NULL, OPT_TARGET_PID },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool time_set = false, warm_set = false, rep_set = false, rw_set = false, bs_set = false;
	unsigned int pid = 0;
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->time_s = 3;
	o->warmup_s = 1;
	o->repeat = 3;
	o->jobs = 1;
	o->rw = BENCH_RANDREAD;
	o->bs = 4096;
	o->target_cpu = o->client_cpu = -1;
	o->progress = -1;
	*exit_now = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", lo, NULL)) != -1) {
		const char *a = optarg;
		int bad = 0;

		switch (c) {
		case OPT_NATIVE:
			o->uri[BENCH_NATIVE] = a;
			break;
		case OPT_SCSI:
			o->uri[BENCH_SCSI] = a;
			break;
		case OPT_TIME:
			bad = parse_secs(a, 0.1, &o->time_s);
			time_set = true;
			break;
		case OPT_WARMUP:
			bad = parse_secs(a, 0, &o->warmup_s);
			warm_set = true;
			break;
		case OPT_REPEAT:
			bad = parse_uint(a, 1, BENCH_MAX_REPEAT, &o->repeat);
			rep_set = true;
			break;
		case OPT_QD:
			bad = parse_uint(a, 1, 1024, &o->qd);
			break;
		case OPT_JOBS:
			bad = parse_uint(a, 1, BENCH_MAX_JOBS, &o->jobs);
			break;
		case OPT_SIZE:
			bad = parse_size(a, &o->size) || o->size < 4096;
			break;
		case OPT_RW:
			bad = parse_rw(a, &o->rw);
			rw_set = true;
			break;
		case OPT_BS:
			bad = parse_size(a, &v) || v < 512 || v > (16u << 20) || v % 512;
			o->bs = (uint32_t)v;
			bs_set = true;
			break;
		case OPT_VERIFY:
			o->verify = true;
			break;
		case OPT_QUICK:
			o->quick = true;
			break;
		case OPT_DIGEST:
			o->hdgst = o->ddgst = true;
			break;
		case OPT_JSON:
			o->json_path = a;
			break;
		case OPT_SVG:
			o->svg_path = a;
			break;
		case OPT_PNG:
			o->png_path = a;
			break;
		case OPT_TSTATS:
			o->target_stats = a;
			break;
		case OPT_CEILING:
			o->ceiling = a;
			break;
		case OPT_PIN:
			bad = sscanf(a, "%d,%d", &o->target_cpu, &o->client_cpu) != 2 ||
			      o->target_cpu < 0 || o->client_cpu < 0;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o->progress = 0;
			break;
		case OPT_LABEL:
			o->target_label = a;
			break;
		case OPT_TARGET_PID:
			bad = parse_uint(a, 1, 1u << 30, &pid);
			o->target_pid = (int)pid;
			break;
		case 'h':
			usage(stdout);
			*exit_now = true;
			return 0;
		case 'V':
			printf(PROG " %s\n", PACKAGE_VERSION);
			*exit_now = true;
			return 0;
		case ':':
			fprintf(stderr, PROG ": %s: missing argument\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, PROG ": %s: unknown option (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
		if (bad) {
			fprintf(stderr, PROG ": %s: bad value '%s' (see --help)\n",
				argv[optind - 1], a);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->uri[BENCH_NATIVE] && !o->uri[BENCH_SCSI]) {
		fprintf(stderr, PROG ": give --native URI and/or --scsi URI (see --help)\n");
		return -EINVAL;
	}
	o->custom = rw_set || bs_set;
	if (o->quick) {
		if (!time_set)
			o->time_s = 1;
		if (!warm_set)
			o->warmup_s = 0.3;
		if (!rep_set)
			o->repeat = 1;
	}
	return 0;
}

/* ---- the matrix -------------------------------------------------------------------------- */
static void build_cells(const struct bench_opts *o, struct bench_report *r)
{
	const struct bench_workload *loads = o->quick ? quick_loads : matrix_loads;
	size_t nloads = o->quick ? sizeof(quick_loads) / sizeof(quick_loads[0])
				 : sizeof(matrix_loads) / sizeof(matrix_loads[0]);
	struct bench_workload one = { o->rw, o->bs, 0 };
	unsigned int qds[2] = { matrix_qds[0], matrix_qds[1] }, nqd = 2;

	if (o->custom) {
		loads = &one;
		nloads = 1;
	}
	if (o->qd) {
		qds[0] = o->qd;
		nqd = 1;
	}
	r->ncells = 0;
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
	char iops[32];

	if (!x->tty)
		return;
	bench_fmt_count(secs > 0.05 ? (double)ios / secs : NAN, iops, sizeof(iops));
	fprintf(stderr, "\r\033[K[%2u/%u] %-26s %-6s rep %u/%u  %s %4.1f/%.1f s  %s IOPS",
		x->cell_idx + 1, x->rep->ncells, c->label, bench_path_name(x->cur_path),
		x->rep_idx + 1, x->o.repeat, ph == BENCH_PHASE_WARMUP ? "warm-up" : "measure", secs,
		ph == BENCH_PHASE_WARMUP ? x->o.warmup_s : x->o.time_s, iops);
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
	progress_clear(x);
	if (rc != 0) {
		snprintf(res->error, sizeof(res->error), "%s", err);
		fprintf(stderr, PROG ": %s, %s: %s\n", c->label, bench_path_name(p), err);
		path_down(x, p, err);
		return;
	}
	if (x->tstats_err[0])
		fprintf(stderr, PROG ": %s\n", x->tstats_err);
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
			printf("\nchart: %s\n", o->svg_path);
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
			printf("%schart: %s\n", o->svg_path ? "" : "\n", o->png_path);
		}
	}
	if (svg == svgtmp)
		unlink(svgtmp);
	return rc;
}

int main(int argc, char **argv)
{
	struct bench_ctx *x = calloc(1, sizeof(*x));
	bool exit_now, complete = true;
	int rc;

	if (!x)
		return 1;
	x->tstats_fd = -1;
	if (parse_args(argc, argv, &x->o, &exit_now) != 0)
		return 2;
	if (exit_now)
		return 0;
	signal(SIGPIPE, SIG_IGN);
	x->tty = x->o.progress < 0 ? isatty(STDERR_FILENO) : x->o.progress;
	x->rep = calloc(1, sizeof(*x->rep));
	if (!x->rep)
		return 1;
	x->rep->o = &x->o;
	describe_host(x->rep);
	build_cells(&x->o, x->rep);

	if (x->o.target_stats) {
		char err[300];
		struct bench_tstats ts;

		x->tstats_fd = bench_tstats_connect(x->o.target_stats, err, sizeof(err));
		if (x->tstats_fd < 0 || bench_tstats_query(x->tstats_fd, &ts, err, sizeof(err))) {
			fprintf(stderr, PROG ": %s\n", err);
			return 1;
		}
	}
	if (connect_paths(x) != 0)
		return 1;
	if (x->o.verify) {
		/* Through each path: they may reach different namespaces (another target). */
		for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
			char err[300];

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

	bench_report_settings(stdout, x->rep);
	for (unsigned int p = 0; p < BENCH_NPATHS; p++) {
		if (!x->o.uri[p])
			continue;
		for (unsigned int i = 0; i < x->rep->ncells; i++)
			if (!x->rep->cells[i].path[p].ran || x->rep->cells[i].path[p].error[0])
				complete = false;
		if (!x->up[p])
			printf("%s path unavailable: %s\n", bench_path_name((enum bench_path)p),
			       x->down_why[p]);
	}
	bench_report_table(stdout, x->rep);
	rc = write_outputs(x);
	fflush(stdout);

	for (unsigned int p = 0; p < BENCH_NPATHS; p++)
		if (x->conn[p].ctrlr)
			bench_conn_close(&x->conn[p]);
	if (x->tstats_fd >= 0)
		close(x->tstats_fd);
	free(x->rep);
	free(x);
	return rc != 0 || !complete ? 1 : 0;
}
