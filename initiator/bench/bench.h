/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench: the same workloads over native NVMe/TCP and over SCSI commands through
 * iSCSI, against the same target, in alternation.
 *
 * A job is a thread; it drives --queues I/O queue pairs of the path's one connection (as
 * a Linux host drives one controller with a queue per CPU): native, I/O queues of one
 * controller; SCSI, one iSCSI session (one TCP connection) per queue pair. --qd is per
 * queue pair.
 *
 *   bench_main.c    the workload matrix, alternation and repeats, progress
 *   bench_opts.c    options: parsing and every check made before anything runs
 *   bench_run.c     connections, job threads (--queues queue pairs each), one measured run
 *   bench_hist.c    latency histograms
 *   bench_stats.c   per-run metrics, median/min/max over repeats, differences
 *   bench_target.c  the target's statistics socket, and the tcp-ceiling reference run
 *   bench_report.c  terminal tables and the JSON file
 *   bench_svg.c     the SVG chart
 */
#ifndef NVMEOF_BENCH_H
#define NVMEOF_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_hist.h"
#include "lib/nvmeof.h"

#define BENCH_MAX_JOBS 64
#define BENCH_MAX_QPAIRS   64 /* --jobs x --queues */
#define BENCH_MAX_REACTORS 64 /* target reactors reported one by one */
#define BENCH_MAX_REPEAT 25
#define BENCH_MAX_CELLS 64
#define BENCH_DEFAULT_SIZE (1ull << 30) /* I/O range: the namespace, at most 1 GiB */
#define BENCH_MAX_BS       8            /* --bs list entries */
#define BENCH_MAX_PCT      24           /* --percentiles entries */
#define BENCH_CEILING_PROG "nvmeof-tcp-ceiling"

enum bench_path { BENCH_NATIVE, BENCH_SCSI, BENCH_NPATHS };

enum bench_rw { BENCH_RANDREAD, BENCH_RANDWRITE, BENCH_SEQREAD, BENCH_SEQWRITE, BENCH_RANDRW };

struct bench_workload {
	enum bench_rw rw;
	uint32_t bs;          /* bytes per I/O */
	unsigned int qd;      /* per queue pair */
	unsigned int mixread; /* BENCH_RANDRW: % of I/Os that read */
};

enum bench_format { BENCH_FMT_NORMAL, BENCH_FMT_JSON };

/* ---- options (bench_main.c) ---------------------------------------------------------- */
struct bench_opts {
	const char *uri[BENCH_NPATHS]; /* --native, --scsi (either may be NULL) */
	double time_s;		       /* measured seconds per run */
	double warmup_s;
	unsigned int repeat;
	unsigned int qd; /* 0: the matrix's (32 and 1) */
	unsigned int jobs;
	unsigned int queues; /* --queues: I/O queue pairs per job (default 1) */
	uint64_t size; /* 0: namespace size, at most BENCH_DEFAULT_SIZE */
	bool custom;   /* --rw/--bs: these workloads instead of the matrix */
	enum bench_rw rw;
	uint32_t bs;                    /* the first of bs_list */
	uint32_t bs_list[BENCH_MAX_BS]; /* --bs 4k,64k: one workload each */
	unsigned int nbs;
	unsigned int rwmixread;    /* --rwmixread, with --rw randrw (default 50) */
	double pct[BENCH_MAX_PCT]; /* --percentiles, ascending */
	unsigned int npct;
	enum bench_format format; /* --output-format */
	const char *output_path;  /* --output: stdout goes there */
	bool detail;              /* --detail: a table per metric as well */
	bool verify;
	bool precondition;    /* --precondition: write the I/O range once before the runs */
	unsigned int poll_us; /* --poll-us: keep polling this long after a completion */
	bool plain_buffers;   /* --plain-buffers: I/O buffers not registered (copied on RDMA) */
	bool quick;
	bool hdgst, ddgst;
	const char *tls_key_file; /* --tls-key-file: the native path over TLS 1.3 */
	int tls_identity;         /* --tls-identity (default 1) */
	const char *json_path, *svg_path, *png_path;
	const char *target_stats;   /* the target's --stats-socket */
	const char *hostnqn;        /* --hostnqn (NULL: the library's default) */
	const char *ceiling;        /* tcp-ceiling binary (resolved by bench_opts_check) */
	char ceiling_buf[4096];
	int target_cpu, client_cpu; /* --pin S,C; -1: not pinned */
	int progress;		    /* -1: when stderr is a terminal */
	const char *target_label;   /* --target-label: what the target is, for the report */
	int target_pid;		    /* --target-pid: CPU time of any target process */
	/* --reconnect-delay, --ctrl-loss-tmo, --fast-io-fail-tmo (seconds; -2: the
	 * library's defaults) */
	int reconnect_delay, ctrl_loss_tmo, fast_io_fail_tmo;
	/* --dhchap-secret, --dhchap-ctrl-secret: DH-HMAC-CHAP on the native path */
	const char *dhchap_secret, *dhchap_ctrl_secret;
};

/* Parse the command line into @o (help and version go to stdout, *exit_now set). 0, or
 * -EINVAL with a message naming the option and its value in @err. */
int bench_opts_parse(int argc, char **argv, struct bench_opts *o, bool *exit_now, char *err,
		     size_t errlen);
/* What can be checked before anything runs: output files writable, the ceiling program
 * found (fills o->ceiling). 0 or -errno with a message in @err. */
int bench_opts_check(struct bench_opts *o, char *err, size_t errlen);
/* @name beside this program's own executable, else in PATH: its path into @out. */
int bench_find_tool(const char *name, char *out, size_t len);
/* "1:5:99.9" or "1,5,99.9": ascending, each in (0, 100]. */
int bench_parse_percentiles(const char *s, double *pct, unsigned int *n);
void bench_usage(FILE *f);

/* ---- one measured run ------------------------------------------------------------------ */
/* One direction of a run (fio's "read"/"write"). */
struct bench_dir {
	uint64_t ios, bytes;
	double lat_mean_ns, lat_stddev_ns;
	uint64_t lat_min_ns, lat_max_ns;
	uint64_t pct_ns[BENCH_MAX_PCT]; /* at opts.pct[] */
};

struct bench_sample {
	struct bench_dir dir[2]; /* 0: reads, 1: writes */
	double secs;
	uint64_t ios, bytes;
	uint64_t errors, verify_errors;
	uint64_t reconnects; /* controller reconnects during the sample */
	uint64_t outage_ms;  /* time without a connection during the sample */
	double lat_avg_ns;
	uint64_t lat_min_ns, lat_p50_ns, lat_p99_ns, lat_p999_ns, lat_max_ns;
	double init_cpu_ns;   /* job threads' CPU time, summed */
	double init_ucpu_ns;  /* the user-mode part of it */
	bool have_init_xlate; /* the library reported translation counters */
	double init_xlate_ns;
	uint64_t init_xlate_calls;
	bool have_target;	/* target statistics were read around the run */
	double tgt_cpu_ns;	/* reactor CPU time */
	double tgt_proc_cpu_ns; /* whole daemon */
	double tgt_xlate_ns;
	uint64_t tgt_xlate_calls;
	uint64_t tgt_cmds;   /* the path's commands, per the target */
	double tgt_probe_ns; /* cost of one translation probe */
	bool have_pid_cpu;   /* --target-pid CPU time over the run */
	double pid_cpu_ns;
	bool tgt_pid_only; /* target figures are that process's CPU time only */
	/* each queue pair's measured I/Os: job j's queue q at [j * queues + q] */
	unsigned int nqueues;
	uint64_t q_ios[BENCH_MAX_QPAIRS];
	/* each target reactor over the measurement (with have_target): CPU time, and the
	 * path's I/O commands it served (native: its NVMe-oF queue pairs' reads and writes;
	 * SCSI: the SCSI commands it started) */
	unsigned int nreactors;
	double r_cpu_ns[BENCH_MAX_REACTORS];
	double r_ios[BENCH_MAX_REACTORS];
};

/* ---- metrics (bench_stats.c) ------------------------------------------------------------- */
enum bench_metric {
	BM_IOPS,
	BM_MIBS,
	BM_LAT_AVG, /* microseconds */
	BM_LAT_P50,
	BM_LAT_P99,
	BM_LAT_P999,
	BM_INIT_CPU,   /* initiator CPU microseconds per I/O */
	BM_TGT_CPU,    /* target reactor CPU microseconds per I/O */
	BM_TGT_XLATE,  /* target translation microseconds per I/O */
	BM_INIT_XLATE, /* initiator translation microseconds per I/O */
	BM_PROBE_PCT,  /* translation probes' cost, % of target CPU */
	BM_CEIL_FRAC,  /* IOPS / tcp-ceiling IOPS */
	BM_INIT_UCPU,  /* initiator user-mode CPU microseconds per I/O (the library's own work,
			* without the kernel's: soft-RoCE does its copies there) */
	BM_COUNT
};

struct bench_metric_info {
	const char *key;   /* JSON member */
	const char *title; /* table heading */
	const char *unit;
	bool higher_better;
};

extern const struct bench_metric_info bench_metrics[BM_COUNT];

struct bench_stat {
	unsigned int n; /* samples with a value */
	double median, min, max;
};

struct bench_path_result {
	bool ran;
	char error[256]; /* why it did not run, or failed */
	unsigned int nsamples;
	struct bench_sample samples[BENCH_MAX_REPEAT];
	struct bench_stat stat[BM_COUNT];
};

struct bench_ceiling_result {
	bool ran;
	char error[256];
	uint32_t req, resp, resp2; /* PDU shapes used */
	unsigned int n;
	double iops[BENCH_MAX_REPEAT];
	double srv_cpu_us[BENCH_MAX_REPEAT]; /* server CPU per request */
	struct bench_stat stat;		     /* of iops */
};

struct bench_cell {
	struct bench_workload w;
	char label[48]; /* "4K random read QD32" */
	struct bench_path_result path[BENCH_NPATHS];
	struct bench_ceiling_result ceiling;
};

/* What each path negotiated: printed with the results. */
struct bench_settings {
	bool connected;
	char uri[640];
	char transport[8];
	bool hdgst, ddgst;
	uint32_t queue_depth;
	uint32_t mdts;
	uint32_t in_capsule; /* NVMe/TCP in-capsule data bytes */
	bool have_iscsi;     /* iSCSI session parameters below are known */
	bool immediate_data, initial_r2t;
	uint32_t first_burst, max_burst, max_xmit_dsl;
	uint64_t ns_bytes;
	uint32_t block_size;
};

struct bench_report {
	const struct bench_opts *o;
	char started[32]; /* ISO 8601 */
	char host[240];	  /* "Linux 6.1.0 x86_64, 2 CPUs" */
	uint64_t size;	  /* I/O range used */
	struct bench_settings set[BENCH_NPATHS];
	char unfair[400]; /* how the paths' transfer settings differ ("": they do not) */
	unsigned int ncells;
	struct bench_cell cells[BENCH_MAX_CELLS];
};

const char *bench_path_name(enum bench_path p); /* "native", "SCSI" */
const char *bench_path_key(enum bench_path p);	/* "native", "scsi" */
const char *bench_rw_name(enum bench_rw rw);	/* "randread" */
/* Job @j's queue pairs are qp[j * queues + q], q < queues. */
static inline unsigned int bench_qpairs(const struct bench_opts *o)
{
	return o->jobs * (o->queues ? o->queues : 1);
}
/* Spread of a statistic: half the min-max range, % of the median (NAN: unknown). */
double bench_spread_pct(const struct bench_stat *s);
void bench_cell_label(const struct bench_workload *w, char *buf, size_t len);

/* A metric of one sample; NAN when it was not measured. */
double bench_sample_metric(const struct bench_sample *s, enum bench_metric m, double ceil_iops);
/* Median, min and max of the non-NAN values among @v[0..n). */
void bench_stat_compute(const double *v, unsigned int n, struct bench_stat *out);
/* Fill res->stat[] from its samples. */
void bench_path_aggregate(struct bench_path_result *res, const struct bench_ceiling_result *c);
void bench_ceiling_aggregate(struct bench_ceiling_result *c);
/* (scsi - native) / native in %, NAN when either is missing or native is 0. */
double bench_diff_pct(double native, double scsi);

/* ---- running (bench_run.c) ----------------------------------------------------------------- */
struct bench_conn {
	enum bench_path path;
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns;
	uint32_t block_size;
	uint64_t nblocks;
	unsigned int nqp; /* jobs x queues */
	struct nvmeof_qpair *qp[BENCH_MAX_QPAIRS];
};

int bench_conn_open(struct bench_conn *c, enum bench_path path, const char *uri,
		    const struct bench_opts *o, unsigned int depth, struct bench_settings *set,
		    char *err, size_t errlen);
void bench_conn_close(struct bench_conn *c);
/* Keep-alive: service the admin queue (any thread; waits at most @max_ms). */
void bench_conn_service(struct bench_conn *c, int max_ms);

enum bench_phase { BENCH_PHASE_WARMUP, BENCH_PHASE_MEASURE, BENCH_PHASE_STOP };

/* Callbacks from the controlling thread during a run. */
struct bench_run_ctl {
	/* At the measurement's start (before jobs count) and end (after they stop). */
	void (*mark)(void *arg, enum bench_phase phase);
	/* About every 200 ms: phase, seconds into it, I/Os completed in it so far. */
	void (*tick)(void *arg, enum bench_phase phase, double secs, uint64_t ios);
	void *arg;
	struct bench_conn *other; /* an idle connection whose keep-alive is serviced too */
};

/* One measured run of @w on @c over the first @size bytes: warm-up, then o->time_s. */
int bench_run_sample(struct bench_conn *c, const struct bench_workload *w,
		     const struct bench_opts *o, uint64_t size, const struct bench_run_ctl *ctl,
		     struct bench_sample *out, char *err, size_t errlen);
/* Write the verification pattern over the first @size bytes. */
int bench_prefill(struct bench_conn *c, uint64_t size, char *err, size_t errlen);

/* Pure helpers (unit tested). */
uint64_t bench_xorshift(uint64_t *state);
/* Byte offset of the next I/O: random ones aligned to @bs in [0, size), sequential ones
 * walking @region_len bytes from @region_off and wrapping. */
uint64_t bench_next_offset(enum bench_rw rw, uint32_t bs, uint64_t size, uint64_t region_off,
			   uint64_t region_len, uint64_t *cursor, uint64_t *rng);
/* The pattern of block @lba (the same whichever path writes it). */
void bench_pattern_fill(void *buf, uint64_t lba, uint32_t nblocks, uint32_t block_size);
/* Index of the first block that differs from the pattern, or -1. */
int64_t bench_pattern_check(const void *buf, uint64_t lba, uint32_t nblocks, uint32_t block_size);

/* ---- target statistics and the ceiling (bench_target.c) ------------------------------- */
struct bench_tstats {
	double time_ns;
	double cpu_ns; /* reactor CPU, all reactors */
	double proc_cpu_ns;
	double xlate_ns, xlate_calls;
	double probe_ns;
	double cmds[BENCH_NPATHS];
	unsigned int nreactors;
	/* per reactor (the first BENCH_MAX_REACTORS): CPU time, NVMe-oF I/O commands of its
	 * live queue pairs ("fabric_io_cmds"; 0 from a target without it), SCSI commands */
	double r_cpu_ns[BENCH_MAX_REACTORS];
	double r_ios[BENCH_NPATHS][BENCH_MAX_REACTORS];
};

/* The number at @path ("paths.scsi.cmds", "reactors.0.cpu_ns") of the JSON text @json. */
int bench_json_number(const char *json, const char *path, double *out);
/* Parse a statistics line of nvmeof-target into @st. */
int bench_tstats_parse(const char *json, struct bench_tstats *st);
/* CPU time of every thread of process @pid so far (/proc/PID/task/N/schedstat). */
int bench_pid_cpu_ns(int pid, double *ns);
/* Connect to the statistics socket (returns an fd) and ask for one snapshot. */
int bench_tstats_connect(const char *path, char *err, size_t errlen);
int bench_tstats_query(int fd, struct bench_tstats *st, char *err, size_t errlen);

/* The tcp-ceiling run matching @w's PDU shapes (@in_capsule: the native path's). */
void bench_ceiling_shape(const struct bench_workload *w, uint32_t in_capsule, uint32_t *req,
			 uint32_t *resp, uint32_t *resp2);
int bench_ceiling_run(const struct bench_opts *o, const struct bench_workload *w,
		      uint32_t in_capsule, double *iops, double *srv_cpu_us, char *err,
		      size_t errlen);

/* ---- output (bench_report.c, bench_svg.c) ---------------------------------------------- */
/* "123.4k", "1.23M", "987" */
char *bench_fmt_count(double v, char *buf, size_t len);
/* "+12.3%", "-4.0%", "n/a" */
char *bench_fmt_pct(double v, char *buf, size_t len);
void bench_report_settings(FILE *f, const struct bench_report *r);
void bench_report_table(FILE *f, const struct bench_report *r);
/* The one table: workloads as rows, native | SCSI | difference for IOPS, average latency
 * and target CPU per I/O, the translation time and the spread of the runs. */
void bench_report_summary(FILE *f, const struct bench_report *r);
/* The largest spread over the summary's figures (NAN: one run each). */
double bench_report_max_spread(const struct bench_report *r);
/* The run of @res whose IOPS is the median (NULL: none). */
const struct bench_sample *bench_median_sample(const struct bench_path_result *res);
/* fio-style JSON: a job per workload and path with read/write iops, bw, lat_ns. */
int bench_report_fio_json(FILE *f, const struct bench_report *r);
int bench_report_json(FILE *f, const struct bench_report *r);
/* Per queue pair IOPS and each target reactor's CPU and I/O share, of the median run of
 * every workload and path (nothing with one queue pair and no per-reactor figures). */
void bench_report_queues(FILE *f, const struct bench_report *r);
int bench_svg_write(FILE *f, const struct bench_report *r);

#endif
