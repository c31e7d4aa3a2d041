/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench options: parsed, then checked as far as they can be before anything runs
 * (output files writable, the ceiling program found), each error naming the option and
 * the value it got. fio's names where fio has the same thing: --rw, --bs (a list),
 * --rwmixread, --percentiles (fio's percentile_list), --output, --output-format.
 */
#include "config.h"

#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "nvmeof-bench"

/* fio's default percentile_list */
static const double default_pct[] = { 1,  5,  10, 20, 30,   40,   50,    60,   70,
				      80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99 };

void bench_usage(FILE *f)
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
	      "  --quick               the comparison set: 4K random read/write at QD 32 and 1,\n"
	      "                        64K random read, 64K and 128K sequential read/write at\n"
	      "                        QD 32; 1 s per run, 0.3 s warm-up, 5 repeats\n"
	      "  --rw RW               randread, randwrite, randrw, read or write\n"
	      "  --bs SIZE[,SIZE...]   bytes per I/O, one workload each (default 4k)\n"
	      "  --rwmixread PCT       with --rw randrw: % of I/Os that read (default 50)\n"
	      "  --qd N                queue depth per queue pair (default: the matrix's 32\n"
	      "                        and 1); a job keeps --queues x N commands in flight\n"
	      "  --jobs N              threads, each with its own --queues queue pairs\n"
	      "                        (default 1)\n"
	      "  --queues M            I/O queue pairs per job (default 1): native, I/O queues\n"
	      "                        of the path's one controller; SCSI, one iSCSI session\n"
	      "                        (one connection) each; jobs x M at most 64\n"
	      "  --time S              measured seconds per run (default 3)\n"
	      "  --warmup S            seconds before measuring (default 1)\n"
	      "  --repeat N            runs per path and workload; median (min-max) (default 3)\n"
	      "  --size SIZE           I/O range (default: the namespace, at most 1G)\n"
	      "  --verify              write a pattern first; check every block read\n"
	      "  --precondition        write the I/O range once before measuring (a RAM\n"
	      "                        namespace's first writes fault its pages in)\n"
	      "  --poll-us US          initiator threads keep polling, without sleeping, for\n"
	      "                        US after a completion (default 0: sleep in poll())\n"
	      "  --plain-buffers       I/O buffers from plain memory, not nvmeof_buf_alloc():\n"
	      "                        NVMe/RDMA copies them through its own buffers\n"
	      "  --digest              ask for header and data digests on both paths\n"
	      "  --hostnqn NQN         the host NQN to connect as (default: the library's,\n"
	      "                        /etc/nvme/hostnqn or a generated one)\n"
	      "  --tls-key-file PATH   the native path over TLS 1.3 with this PSK (a file of\n"
	      "                        mode 0600 holding NVMeTLSkey-1:HH:...:)\n"
	      "  --tls-identity N      PSK identity version 1 (default) or 0\n"
	      "\n"
	      "Measuring:\n"
	      "  --target-stats PATH   the target's --stats-socket: target CPU per I/O and\n"
	      "                        SCSI translation time\n"
	      "  --ceiling[=PROG]      run the tcp-ceiling reference with each workload's PDU\n"
	      "                        shapes (default " BENCH_CEILING_PROG ", looked up beside\n"
	      "                        nvmeof-bench, then in PATH)\n"
	      "  --pin S,C             initiator threads on CPU C (and up); tcp-ceiling's server\n"
	      "                        on S (pin the target's reactor there too)\n"
	      "  --reconnect-delay S   seconds between reconnect attempts (default 2)\n"
	      "  --ctrl-loss-tmo S     give up reconnecting after S seconds, -1 never (600)\n"
	      "  --fast-io-fail-tmo S  fail held I/O after S seconds of outage (default off)\n"
	      "  --dhchap-secret KEY   DH-HMAC-CHAP host secret (DHHC-1:NN:...:) on the native\n"
	      "                        path; --dhchap-ctrl-secret KEY: the controller's too\n"
	      "  --target-pid PID      target CPU per I/O from that process's CPU time (any\n"
	      "                        target, e.g. tgtd; used where --target-stats does not "
	      "apply)\n"
	      "  --target-label TEXT   what the target is, for the report\n"
	      "\n"
	      "Output:\n"
	      "  --output-format FMT   normal (tables) or json (fio-style: jobs, read/write,\n"
	      "                        iops, bw, lat_ns percentiles)\n"
	      "  --output FILE         write that output to FILE instead of stdout\n"
	      "  --percentiles LIST    latency percentiles for the JSON, as 1:50:99.9\n"
	      "                        (default fio's, 1 to 99.99)\n"
	      "  --detail              a table per metric after the summary\n"
	      "  --json FILE           every number and every run, as nvmeof-bench's JSON\n"
	      "  --svg FILE            the chart: differences, IOPS, latency, CPU per I/O\n"
	      "  --png FILE            the same as PNG (needs rsvg-convert)\n"
	      "  --progress, --no-progress   a line per finished workload on stderr (default\n"
	      "                        on; a terminal gets a live line as well)\n"
	      "  -h, --help, -V, --version\n",
	      f);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- values ------------------------------------------------------------------------------ */
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
		{ "read", BENCH_SEQREAD },      { "write", BENCH_SEQWRITE },
		{ "seqread", BENCH_SEQREAD },   { "seqwrite", BENCH_SEQWRITE },
		{ "randrw", BENCH_RANDRW },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			*rw = names[i].rw;
			return 0;
		}
	return -EINVAL;
}

int bench_parse_percentiles(const char *s, double *pct, unsigned int *n)
{
	const char *p = s;

	*n = 0;
	while (*p) {
		char *end;
		double v;

		errno = 0;
		v = strtod(p, &end);
		if (errno || end == p || !(v > 0) || v > 100 || *n == BENCH_MAX_PCT)
			return -EINVAL;
		if (*n && v <= pct[*n - 1])
			return -EINVAL;
		pct[(*n)++] = v;
		if (*end == ':' || *end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return *n ? 0 : -EINVAL;
}

/* "4k,64k": each a multiple of 512 between 512 B and 16 MiB. */
static int parse_bs_list(const char *s, struct bench_opts *o, char *why, size_t whylen)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	o->nbs = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->nbs == BENCH_MAX_BS) {
			snprintf(why, whylen, "at most %d sizes", BENCH_MAX_BS);
			return -EINVAL;
		}
		if (parse_size(tok, &v) || v < 512 || v > (16u << 20) || v % 512) {
			snprintf(why, whylen, "'%s' is not a multiple of 512 from 512 to 16M", tok);
			return -EINVAL;
		}
		o->bs_list[o->nbs++] = (uint32_t)v;
	}
	if (!o->nbs)
		return -EINVAL;
	o->bs = o->bs_list[0];
	return 0;
}

/* ---- the command line ---------------------------------------------------------------------- */
enum {
	OPT_NATIVE = 256,
	OPT_SCSI,
	OPT_TIME,
	OPT_WARMUP,
	OPT_REPEAT,
	OPT_QD,
	OPT_JOBS,
	OPT_QUEUES,
	OPT_SIZE,
	OPT_RW,
	OPT_BS,
	OPT_RWMIX,
	OPT_VERIFY,
	OPT_PRECONDITION,
	OPT_POLL_US,
	OPT_QUICK,
	OPT_DIGEST,
	OPT_HOSTNQN,
	OPT_TLS_KEY_FILE,
	OPT_TLS_IDENTITY,
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
	OPT_RECONNECT_DELAY,
	OPT_CTRL_LOSS_TMO,
	OPT_FAST_IO_FAIL_TMO,
	OPT_DHCHAP_SECRET,
	OPT_DHCHAP_CTRL_SECRET,
	OPT_FORMAT,
	OPT_OUTPUT,
	OPT_PCT,
	OPT_DETAIL,
	OPT_PLAIN_BUFFERS,
};

static const struct option long_opts[] = {
	{ "native", required_argument, NULL, OPT_NATIVE },
	{ "scsi", required_argument, NULL, OPT_SCSI },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "runtime", required_argument, NULL, OPT_TIME }, /* fio's name */
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "ramp_time", required_argument, NULL, OPT_WARMUP }, /* fio's name */
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "qd", required_argument, NULL, OPT_QD },
	{ "iodepth", required_argument, NULL, OPT_QD }, /* fio's name */
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "numjobs", required_argument, NULL, OPT_JOBS }, /* fio's name */
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "rwmixread", required_argument, NULL, OPT_RWMIX },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "precondition", no_argument, NULL, OPT_PRECONDITION },
	{ "plain-buffers", no_argument, NULL, OPT_PLAIN_BUFFERS },
	{ "poll-us", required_argument, NULL, OPT_POLL_US },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "digest", no_argument, NULL, OPT_DIGEST },
	{ "hostnqn", required_argument, NULL, OPT_HOSTNQN },
	{ "tls-key-file", required_argument, NULL, OPT_TLS_KEY_FILE },
	{ "tls-identity", required_argument, NULL, OPT_TLS_IDENTITY },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "png", required_argument, NULL, OPT_PNG },
	{ "target-stats", required_argument, NULL, OPT_TSTATS },
	{ "ceiling", optional_argument, NULL, OPT_CEILING },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "target-label", required_argument, NULL, OPT_LABEL },
	{ "target-pid", required_argument, NULL, OPT_TARGET_PID },
	{ "reconnect-delay", required_argument, NULL, OPT_RECONNECT_DELAY },
	{ "ctrl-loss-tmo", required_argument, NULL, OPT_CTRL_LOSS_TMO },
	{ "fast-io-fail-tmo", required_argument, NULL, OPT_FAST_IO_FAIL_TMO },
	{ "dhchap-secret", required_argument, NULL, OPT_DHCHAP_SECRET },
	{ "dhchap-ctrl-secret", required_argument, NULL, OPT_DHCHAP_CTRL_SECRET },
	{ "output-format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "percentiles", required_argument, NULL, OPT_PCT },
	{ "percentile_list", required_argument, NULL, OPT_PCT }, /* fio's name */
	{ "detail", no_argument, NULL, OPT_DETAIL },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* "--rw" for the option getopt just returned. */
static const char *opt_name(int c, int idx, char *buf, size_t len)
{
	if (idx >= 0)
		snprintf(buf, len, "--%s", long_opts[idx].name);
	else
		snprintf(buf, len, "-%c", c);
	return buf;
}

int bench_opts_parse(int argc, char **argv, struct bench_opts *o, bool *exit_now, char *err,
		     size_t errlen)
{
	bool time_set = false, warm_set = false, rep_set = false, rw_set = false, bs_set = false;
	bool mix_set = false;
	unsigned int pid = 0;
	char name[48], why[128];
	int c, idx;

	memset(o, 0, sizeof(*o));
	o->time_s = 3;
	o->warmup_s = 1;
	o->repeat = 3;
	o->jobs = 1;
	o->queues = 1;
	o->tls_identity = 1;
	o->rw = BENCH_RANDREAD;
	o->bs = o->bs_list[0] = 4096;
	o->nbs = 1;
	o->rwmixread = 50;
	o->target_cpu = o->client_cpu = -1;
	o->progress = -1;
	o->reconnect_delay = o->ctrl_loss_tmo = o->fast_io_fail_tmo = -2;
	memcpy(o->pct, default_pct, sizeof(default_pct));
	o->npct = sizeof(default_pct) / sizeof(default_pct[0]);
	*exit_now = false;
	opterr = 0;
	optind = 0; /* glibc: start over (unit tests parse several command lines) */
	for (;;) {
		const char *a;
		int bad = 0;

		idx = -1;
		c = getopt_long(argc, argv, ":hV", long_opts, &idx);
		if (c == -1)
			break;
		a = optarg;
		why[0] = '\0';
		switch (c) {
		case OPT_NATIVE:
			o->uri[BENCH_NATIVE] = a;
			bad = !*a;
			break;
		case OPT_SCSI:
			o->uri[BENCH_SCSI] = a;
			bad = !*a;
			break;
		case OPT_TIME:
			bad = parse_secs(a, 0.1, &o->time_s);
			snprintf(why, sizeof(why), "seconds from 0.1 to 86400");
			time_set = true;
			break;
		case OPT_WARMUP:
			bad = parse_secs(a, 0, &o->warmup_s);
			snprintf(why, sizeof(why), "seconds from 0 to 86400");
			warm_set = true;
			break;
		case OPT_REPEAT:
			bad = parse_uint(a, 1, BENCH_MAX_REPEAT, &o->repeat);
			snprintf(why, sizeof(why), "1 to %d", BENCH_MAX_REPEAT);
			rep_set = true;
			break;
		case OPT_QD:
			bad = parse_uint(a, 1, 1024, &o->qd);
			snprintf(why, sizeof(why), "1 to 1024");
			break;
		case OPT_JOBS:
			bad = parse_uint(a, 1, BENCH_MAX_JOBS, &o->jobs);
			snprintf(why, sizeof(why), "1 to %d", BENCH_MAX_JOBS);
			break;
		case OPT_QUEUES:
			bad = parse_uint(a, 1, BENCH_MAX_QPAIRS, &o->queues);
			snprintf(why, sizeof(why), "1 to %d queue pairs per job", BENCH_MAX_QPAIRS);
			break;
		case OPT_SIZE:
			bad = parse_size(a, &o->size) || o->size < 4096;
			snprintf(why, sizeof(why), "bytes (K, M, G suffixes), at least 4K");
			break;
		case OPT_RW:
			bad = parse_rw(a, &o->rw);
			snprintf(why, sizeof(why), "randread, randwrite, randrw, read or write");
			rw_set = true;
			break;
		case OPT_BS:
			bad = parse_bs_list(a, o, why, sizeof(why));
			bs_set = true;
			break;
		case OPT_RWMIX:
			bad = parse_uint(a, 0, 100, &o->rwmixread);
			snprintf(why, sizeof(why), "a percentage, 0 to 100");
			mix_set = true;
			break;
		case OPT_VERIFY:
			o->verify = true;
			break;
		case OPT_PRECONDITION:
			o->precondition = true;
			break;
		case OPT_PLAIN_BUFFERS:
			o->plain_buffers = true;
			break;
		case OPT_POLL_US:
			bad = parse_uint(a, 0, 100000, &o->poll_us);
			snprintf(why, sizeof(why), "0 to 100000 microseconds");
			break;
		case OPT_QUICK:
			o->quick = true;
			break;
		case OPT_DIGEST:
			o->hdgst = o->ddgst = true;
			break;
		case OPT_HOSTNQN:
			o->hostnqn = a;
			bad = !*a;
			break;
		case OPT_TLS_KEY_FILE:
			o->tls_key_file = a;
			bad = !*a;
			break;
		case OPT_TLS_IDENTITY: {
			unsigned int v;

			bad = parse_uint(a, 0, 1, &v);
			o->tls_identity = (int)v;
			snprintf(why, sizeof(why), "0 or 1");
			break;
		}
		case OPT_JSON:
			o->json_path = a;
			bad = !*a;
			break;
		case OPT_SVG:
			o->svg_path = a;
			bad = !*a;
			break;
		case OPT_PNG:
			o->png_path = a;
			bad = !*a;
			break;
		case OPT_TSTATS:
			o->target_stats = a;
			bad = !*a;
			break;
		case OPT_CEILING:
			/* "--ceiling PROG" as well as "--ceiling=PROG": there are no operands */
			if (!a && optind < argc && argv[optind][0] != '-')
				a = argv[optind++];
			o->ceiling = a ? a : BENCH_CEILING_PROG;
			bad = a && !*a;
			break;
		case OPT_PIN:
			bad = sscanf(a, "%d,%d", &o->target_cpu, &o->client_cpu) != 2 ||
			      o->target_cpu < 0 || o->client_cpu < 0;
			snprintf(why, sizeof(why), "TARGET_CPU,INITIATOR_CPU");
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
		case OPT_DHCHAP_SECRET:
			o->dhchap_secret = a; /* checked by the library at connect */
			break;
		case OPT_DHCHAP_CTRL_SECRET:
			o->dhchap_ctrl_secret = a;
			break;
		case OPT_RECONNECT_DELAY:
			bad = parse_uint(a, 0, 86400, &pid);
			o->reconnect_delay = (int)pid;
			snprintf(why, sizeof(why), "seconds (0-86400)");
			break;
		case OPT_CTRL_LOSS_TMO:
		case OPT_FAST_IO_FAIL_TMO: {
			int *dst = c == OPT_CTRL_LOSS_TMO ? &o->ctrl_loss_tmo
							  : &o->fast_io_fail_tmo;

			bad = strcmp(a, "-1") != 0 && parse_uint(a, 0, 86400 * 365, &pid);
			*dst = strcmp(a, "-1") == 0 ? -1 : (int)pid;
			snprintf(why, sizeof(why), "seconds, or -1");
			break;
		}
		case OPT_TARGET_PID:
			bad = parse_uint(a, 1, 1u << 30, &pid);
			o->target_pid = (int)pid;
			snprintf(why, sizeof(why), "a process ID");
			break;
		case OPT_FORMAT:
			if (strcmp(a, "normal") == 0)
				o->format = BENCH_FMT_NORMAL;
			else if (strcmp(a, "json") == 0)
				o->format = BENCH_FMT_JSON;
			else
				bad = 1;
			snprintf(why, sizeof(why), "normal or json");
			break;
		case OPT_OUTPUT:
			o->output_path = a;
			bad = !*a;
			break;
		case OPT_PCT:
			bad = bench_parse_percentiles(a, o->pct, &o->npct);
			snprintf(why, sizeof(why),
				 "ascending percentages in (0, 100] as 50:99:99.9, at most %d",
				 BENCH_MAX_PCT);
			break;
		case OPT_DETAIL:
			o->detail = true;
			break;
		case 'h':
			bench_usage(stdout);
			*exit_now = true;
			return 0;
		case 'V':
			printf(PROG " %s\n", PACKAGE_VERSION);
			*exit_now = true;
			return 0;
		case ':':
			return fail(err, errlen, "%s: missing value", argv[optind - 1]);
		default:
			return fail(err, errlen, "%s: unknown option (see --help)",
				    argv[optind - 1]);
		}
		if (bad)
			return fail(err, errlen, "%s: bad value '%s'%s%s",
				    opt_name(c, idx, name, sizeof(name)), a ? a : "",
				    why[0] ? ": " : "", why);
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s'", argv[optind]);
	if (!o->uri[BENCH_NATIVE] && !o->uri[BENCH_SCSI])
		return fail(err, errlen, "give --native URI and/or --scsi URI (see --help)");
	if (o->jobs * o->queues > BENCH_MAX_QPAIRS)
		return fail(err, errlen, "--jobs %u x --queues %u: at most %d queue pairs in all",
			    o->jobs, o->queues, BENCH_MAX_QPAIRS);
	if (mix_set && o->rw != BENCH_RANDRW)
		return fail(err, errlen, "--rwmixread: only with --rw randrw");
	if (o->quick && (rw_set || bs_set))
		return fail(err, errlen,
			    "--quick is a fixed set of workloads: not with --rw or --bs");
	o->custom = rw_set || bs_set;
	if (o->quick) {
		if (!time_set)
			o->time_s = 1;
		if (!warm_set)
			o->warmup_s = 0.3;
		if (!rep_set)
			o->repeat = 5;
	}
	return 0;
}

/* ---- checks before running ------------------------------------------------------------------ */
/* Can @path be created or overwritten? */
static int check_writable(const char *opt, const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;
	const char *slash;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return fail(err, errlen, "%s: '%s' is a directory", opt, path);
		if (access(path, W_OK) != 0)
			return fail(err, errlen, "%s: cannot write '%s': %s", opt, path,
				    strerror(errno));
		return 0;
	}
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return fail(err, errlen, "%s: cannot create '%s': no directory '%s'", opt, path,
			    dir);
	if (access(dir, W_OK | X_OK) != 0)
		return fail(err, errlen, "%s: cannot create '%s': %s", opt, path, strerror(errno));
	return 0;
}

static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int bench_find_tool(const char *name, char *out, size_t len)
{
	char self[PATH_MAX], *slash;
	const char *path = getenv("PATH");
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, len, "%s/%s", self, name) < len &&
			    executable(out))
				return 0;
			/* a libtool build tree runs the program from .libs/ */
			slash = strrchr(self, '/');
			if (slash && strcmp(slash, "/.libs") == 0) {
				*slash = '\0';
				if ((size_t)snprintf(out, len, "%s/%s", self, name) < len &&
				    executable(out))
					return 0;
			}
		}
	}
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t dl = end ? (size_t)(end - path) : strlen(path);

		if ((size_t)snprintf(out, len, "%.*s/%s", (int)dl, dl ? path : ".", name) < len &&
		    executable(out))
			return 0;
		path = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int bench_opts_check(struct bench_opts *o, char *err, size_t errlen)
{
	static const struct {
		const char *opt;
		size_t off;
	} outs[] = {
		{ "--json", offsetof(struct bench_opts, json_path) },
		{ "--svg", offsetof(struct bench_opts, svg_path) },
		{ "--png", offsetof(struct bench_opts, png_path) },
		{ "--output", offsetof(struct bench_opts, output_path) },
	};
	int rc;

	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		const char *p = *(const char *const *)((const char *)o + outs[i].off);

		if (p && (rc = check_writable(outs[i].opt, p, err, errlen)) != 0)
			return rc;
	}
	if (o->png_path) {
		char tool[PATH_MAX];

		if (bench_find_tool("rsvg-convert", tool, sizeof(tool)) != 0)
			return fail(err, errlen,
				    "--png: needs rsvg-convert (apt-get install "
				    "librsvg2-bin), not found in PATH");
	}
	if (o->target_stats) {
		struct stat st;
		bool gone = stat(o->target_stats, &st) != 0;

		if (gone || !S_ISSOCK(st.st_mode))
			return fail(err, errlen, "--target-stats: '%s' is not a socket%s",
				    o->target_stats,
				    gone ? " (not there: is the target running with "
					   "--stats-socket?)"
					 : "");
	}
	if (o->ceiling) {
		if (strchr(o->ceiling, '/')) {
			if (!executable(o->ceiling))
				return fail(err, errlen,
					    "--ceiling: '%s' is not an executable file",
					    o->ceiling);
		} else if (bench_find_tool(o->ceiling, o->ceiling_buf, sizeof(o->ceiling_buf)) ==
			   0) {
			o->ceiling = o->ceiling_buf;
		} else {
			return fail(err, errlen,
				    "--ceiling: '%s' not found beside nvmeof-bench or in PATH "
				    "(make builds it; give --ceiling=PATH)",
				    o->ceiling);
		}
	}
	return 0;
}
