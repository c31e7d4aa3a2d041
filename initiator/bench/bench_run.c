/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench: connections and measured runs.
 *
 * A run starts one thread per job, each owning --queues queue pairs of the connection
 * (job j: qp[j * queues .. + queues - 1]). A job keeps every queue pair's depth full: it
 * submits into every free slot, pushes the commands out, then sleeps in poll() on all its
 * queue pairs' descriptors and services those that are ready; completion callbacks record
 * the latency, count the I/O for its queue pair and free the slot. The controlling thread moves every job
 * through warm-up, measurement and stop by one shared phase variable and services the
 * admin queues (keep-alive) meanwhile.
 */
#include "config.h"

#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 200
#define JOB_POLL_MS 50
#define PREFILL_BS (128u * 1024)
#define PREFILL_QD 16u

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* User-mode CPU time of the calling thread (the kernel splits its exact total by samples). */
static uint64_t thread_user_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000;
}

/* ---- pure helpers --------------------------------------------------------------------------- */
uint64_t bench_xorshift(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

uint64_t bench_next_offset(enum bench_rw rw, uint32_t bs, uint64_t size, uint64_t region_off,
			   uint64_t region_len, uint64_t *cursor, uint64_t *rng)
{
	uint64_t off;

	if (rw == BENCH_RANDREAD || rw == BENCH_RANDWRITE || rw == BENCH_RANDRW)
		return bench_xorshift(rng) % (size / bs) * bs;
	if (*cursor + bs > region_len)
		*cursor = 0;
	off = region_off + *cursor;
	*cursor += bs;
	return off;
}

static uint64_t pattern_word(uint64_t lba, uint32_t i)
{
	return (lba * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i * 0xD1B54A32D192ED03ull) ^
	       0x6e766d656f662d62ull;
}

void bench_pattern_fill(void *buf, uint64_t lba, uint32_t nblocks, uint32_t block_size)
{
	uint64_t *w = buf;

	for (uint32_t b = 0; b < nblocks; b++, lba++) {
		w[0] = lba;
		for (uint32_t i = 1; i < block_size / 8; i++)
			w[i] = pattern_word(lba, i);
		w += block_size / 8;
	}
}

int64_t bench_pattern_check(const void *buf, uint64_t lba, uint32_t nblocks, uint32_t block_size)
{
	const uint64_t *w = buf;

	for (uint32_t b = 0; b < nblocks; b++, lba++) {
		if (w[0] != lba)
			return b;
		for (uint32_t i = 1; i < block_size / 8; i++)
			if (w[i] != pattern_word(lba, i))
				return b;
		w += block_size / 8;
	}
	return -1;
}

/* ---- connections ------------------------------------------------------------------------- */
int bench_conn_open(struct bench_conn *c, enum bench_path path, const char *uri,
		    const struct bench_opts *o, unsigned int depth, struct bench_settings *set,
		    char *err, size_t errlen)
{
	struct nvmeof_ctrlr_info info;
	struct nvmeof_opts opts;
	int rc;

	memset(c, 0, sizeof(*c));
	c->path = path;
	nvmeof_opts_init(&opts);
	opts.io_queues = bench_qpairs(o); /* native: one controller; SCSI: a session each */
	opts.queue_depth = depth;
	opts.hdgst = o->hdgst;
	opts.ddgst = o->ddgst;
	opts.hostnqn = o->hostnqn;
	if (path == BENCH_NATIVE) {
		opts.tls_key_file = o->tls_key_file;
		opts.tls_identity = o->tls_identity;
	}
	if (o->reconnect_delay != -2)
		opts.reconnect_delay = o->reconnect_delay;
	if (o->ctrl_loss_tmo != -2)
		opts.ctrl_loss_tmo = o->ctrl_loss_tmo;
	if (o->fast_io_fail_tmo != -2)
		opts.fast_io_fail_tmo = o->fast_io_fail_tmo;
	if (path == BENCH_NATIVE) {
		opts.dhchap_secret = o->dhchap_secret;
		opts.dhchap_ctrl_secret = o->dhchap_ctrl_secret;
	}
	rc = nvmeof_ctrlr_connect(uri, &opts, &c->ctrlr);
	if (rc < 0) {
		snprintf(err, errlen, "cannot connect to %s: %s", uri,
			 *nvmeof_last_error() ? nvmeof_last_error() : nvmeof_strerror(rc));
		c->ctrlr = NULL;
		return rc;
	}
	c->ns = nvmeof_ctrlr_get_ns(c->ctrlr, 0);
	if (!c->ns) {
		snprintf(err, errlen, "%s: no namespace: %s", uri, nvmeof_last_error());
		bench_conn_close(c);
		return -ENOENT;
	}
	c->block_size = nvmeof_ns_get_block_size(c->ns);
	c->nblocks = nvmeof_ns_get_num_blocks(c->ns);
	c->nqp = nvmeof_ctrlr_num_qpairs(c->ctrlr);
	if (c->nqp < bench_qpairs(o) || c->block_size == 0 || c->block_size % 8) {
		snprintf(err, errlen, "%s: %u I/O queue pairs for %u jobs x %u, block size %u", uri,
			 c->nqp, o->jobs, o->queues ? o->queues : 1, c->block_size);
		bench_conn_close(c);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < bench_qpairs(o); i++)
		c->qp[i] = nvmeof_ctrlr_get_qpair(c->ctrlr, i);
	c->nqp = bench_qpairs(o);

	memset(set, 0, sizeof(*set));
	if (nvmeof_ctrlr_get_info(c->ctrlr, &info) == 0) {
		snprintf(set->uri, sizeof(set->uri), "%s", info.uri);
		snprintf(set->transport, sizeof(set->transport), "%s", info.transport);
		set->hdgst = info.hdgst;
		set->ddgst = info.ddgst;
		set->queue_depth = info.queue_depth;
		set->mdts = info.mdts_bytes;
		if (strcmp(info.transport, "tcp") == 0 && info.ioccsz_bytes > 64)
			set->in_capsule = info.ioccsz_bytes - 64;
		set->max_xmit_dsl = info.maxh2cdata;
	}
#ifdef NVMEOF_HAVE_ISCSI_PARAMS
	{
		struct nvmeof_iscsi_params ip;

		if (nvmeof_ctrlr_get_iscsi_params(c->ctrlr, &ip) == 0) {
			set->have_iscsi = true;
			set->immediate_data = ip.immediate_data;
			set->initial_r2t = ip.initial_r2t;
			set->first_burst = ip.first_burst_length;
			set->max_burst = ip.max_burst_length;
			set->max_xmit_dsl = ip.max_xmit_dsl;
		}
	}
#endif
	set->connected = true;
	set->block_size = c->block_size;
	set->ns_bytes = c->nblocks * c->block_size;
	return 0;
}

void bench_conn_close(struct bench_conn *c)
{
	if (c->ctrlr)
		nvmeof_ctrlr_disconnect(c->ctrlr);
	memset(c, 0, sizeof(*c));
}

/* Poll the admin queues of @cs for up to @max_ms and service them. */
static void conns_service(struct bench_conn *const *cs, unsigned int n, int max_ms)
{
	struct pollfd pfd[2];
	unsigned int k = 0;
	int t = max_ms;

	for (unsigned int i = 0; i < n && k < 2; i++) {
		int to;

		if (!cs[i] || !cs[i]->ctrlr)
			continue;
		pfd[k].fd = nvmeof_ctrlr_get_fd(cs[i]->ctrlr);
		pfd[k].events = nvmeof_ctrlr_which_events(cs[i]->ctrlr);
		pfd[k].revents = 0;
		to = nvmeof_ctrlr_timeout_ms(cs[i]->ctrlr);
		if (to >= 0 && to < t)
			t = to;
		if (pfd[k].fd >= 0)
			k++;
	}
	if (k == 0) {
		struct timespec ts = { max_ms / 1000, (long)(max_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		return;
	}
	if (poll(pfd, k, t) < 0)
		return;
	k = 0;
	for (unsigned int i = 0; i < n && k < 2; i++) {
		if (!cs[i] || !cs[i]->ctrlr || pfd[k].fd != nvmeof_ctrlr_get_fd(cs[i]->ctrlr))
			continue;
		nvmeof_ctrlr_service(cs[i]->ctrlr, pfd[k].revents);
		k++;
	}
}

void bench_conn_service(struct bench_conn *c, int max_ms)
{
	struct bench_conn *cs[1] = { c };

	conns_service(cs, 1, max_ms);
}

/* ---- jobs ------------------------------------------------------------------------------------ */
struct bench_queue;

struct bench_slot {
	struct bench_queue *q;
	uint64_t t0;
	uint64_t lba;
	uint32_t nblocks;
	bool read;
	struct iovec iov;
};

struct bench_shared {
	struct bench_conn *c;
	struct bench_workload w;
	bool verify;
	uint64_t size;
	unsigned int queues; /* queue pairs per job */
	int cpu;             /* first CPU to pin jobs to, -1: none */
	uint64_t poll_ns;    /* --poll-us: spin this long after a completion before sleeping */
	bool plain_buffers;  /* --plain-buffers */
	atomic_int phase;    /* enum bench_phase */
	atomic_bool go;
	atomic_bool failed;
};

/* One queue pair and the commands in flight on it (qd slots). */
struct bench_queue {
	struct bench_shared *sh;
	unsigned int idx; /* in c->qp[] */
	struct nvmeof_qpair *qp;
	struct bench_slot *slots;
	unsigned int *free_stack;
	unsigned int nfree;
	void *bufs;
	bool bufs_registered; /* from nvmeof_buf_alloc() */
	uint64_t rng, cursor, region_off, region_len;
	struct bench_hist *hist[2]; /* reads, writes */
	bool measuring;
	uint64_t ios, bytes, errors, verify_errors;
	uint64_t dir_ios[2], dir_bytes[2];
	bool have_xlate;
	struct nvmeof_qpair_stats xlate0, xlate; /* at the start; the difference */
	atomic_uint_fast64_t live;		 /* completions, for the progress line */
	char errmsg[200];
};

/* One thread, driving sh->queues queue pairs. */
struct bench_job {
	struct bench_shared *sh;
	unsigned int idx;
	struct bench_queue *q; /* [sh->queues] */
	pthread_t thread;
	uint64_t cpu0, cpu_ns;
	uint64_t ucpu0, ucpu_ns; /* user-mode part */
};

static bool is_read(enum bench_rw rw)
{
	return rw == BENCH_RANDREAD || rw == BENCH_SEQREAD;
}

static void queue_fail(struct bench_queue *q, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void queue_fail(struct bench_queue *q, const char *fmt, ...)
{
	va_list ap;

	if (!q->errmsg[0]) {
		va_start(ap, fmt);
		vsnprintf(q->errmsg, sizeof(q->errmsg), fmt, ap);
		va_end(ap);
	}
	atomic_store(&q->sh->failed, true);
}

static void io_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct bench_slot *s = arg;
	struct bench_queue *q = s->q;
	uint64_t now = mono_ns();

	if (!nvmeof_cpl_ok(cpl)) {
		char buf[96];

		q->errors++;
		if (cpl->err)
			queue_fail(q, "I/O failed: %s", nvmeof_strerror(cpl->err));
		else
			queue_fail(q, "I/O failed: %s",
				   nvmeof_status_str(cpl->status, buf, sizeof(buf)));
	} else if (q->sh->verify && s->read &&
		   bench_pattern_check(s->iov.iov_base, s->lba, s->nblocks, q->sh->c->block_size) >=
			   0) {
		char where[48];

		q->verify_errors++;
		snprintf(where, sizeof(where), "LBA %llu", (unsigned long long)s->lba);
		queue_fail(q, "data read back differs from the pattern at %s", where);
	}
	if (q->measuring) {
		bench_hist_add(q->hist[!s->read], now - s->t0);
		q->ios++;
		q->bytes += s->iov.iov_len;
		q->dir_ios[!s->read]++;
		q->dir_bytes[!s->read] += s->iov.iov_len;
	}
	atomic_store_explicit(&q->live, atomic_load_explicit(&q->live, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	q->free_stack[q->nfree++] = (unsigned int)(s - q->slots);
}

/* Fill every free slot. 0, or -errno when the queue pair refuses commands. */
static int queue_submit(struct bench_queue *q)
{
	const struct bench_shared *sh = q->sh;
	uint32_t bsz = sh->c->block_size;

	while (q->nfree) {
		struct bench_slot *s = &q->slots[q->free_stack[q->nfree - 1]];
		uint64_t off = bench_next_offset(sh->w.rw, sh->w.bs, sh->size, q->region_off,
						 q->region_len, &q->cursor, &q->rng);
		int rc;

		s->lba = off / bsz;
		s->nblocks = sh->w.bs / bsz;
		s->read = sh->w.rw == BENCH_RANDRW ? bench_xorshift(&q->rng) % 100 < sh->w.mixread
						   : is_read(sh->w.rw);
		if (sh->verify && !s->read)
			bench_pattern_fill(s->iov.iov_base, s->lba, s->nblocks, bsz);
		s->t0 = mono_ns();
		if (s->read)
			rc = nvmeof_read(q->qp, sh->c->ns, s->lba, s->nblocks, &s->iov, 1, 0,
					 io_done, s);
		else
			rc = nvmeof_write(q->qp, sh->c->ns, s->lba, s->nblocks, &s->iov, 1, 0,
					  io_done, s);
		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return rc;
		q->nfree--;
	}
	return 0;
}

static void queue_phase(struct bench_queue *q, enum bench_phase ph)
{
	if (ph == BENCH_PHASE_MEASURE) {
		bench_hist_reset(q->hist[0]);
		bench_hist_reset(q->hist[1]);
		q->dir_ios[0] = q->dir_ios[1] = q->dir_bytes[0] = q->dir_bytes[1] = 0;
		/* the first call calibrates the counter's rate: not inside the measurement */
		q->ios = q->bytes = 0;
		q->have_xlate = nvmeof_qpair_get_stats(q->qp, &q->xlate0) == 0;
		q->measuring = true;
	} else if (ph == BENCH_PHASE_STOP && q->measuring) {
		q->measuring = false;
		if (q->have_xlate && nvmeof_qpair_get_stats(q->qp, &q->xlate) == 0) {
			q->xlate.xlate_calls -= q->xlate0.xlate_calls;
			q->xlate.xlate_ns -= q->xlate0.xlate_ns;
		} else {
			q->have_xlate = false;
		}
	}
}

static void job_phase(struct bench_job *j, enum bench_phase ph)
{
	bool was = j->q[0].measuring;

	for (unsigned int i = 0; i < j->sh->queues; i++)
		queue_phase(&j->q[i], ph);
	if (ph == BENCH_PHASE_MEASURE) {
		j->cpu0 = thread_cpu_ns();
		j->ucpu0 = thread_user_ns();
	} else if (ph == BENCH_PHASE_STOP && was) {
		j->cpu_ns = thread_cpu_ns() - j->cpu0;
		j->ucpu_ns = thread_user_ns() - j->ucpu0;
	}
}

static int poll_timeout(struct nvmeof_qpair *qp, int t)
{
	int to = nvmeof_qpair_timeout_ms(qp);

	return to >= 0 && to < t ? to : t;
}

/* One pass over the job's queue pairs: fill them, push commands out, wait for any of them
 * and service it. 1: go on; 0: stopped and drained; -1: a queue pair failed. */
static int job_pass(struct bench_job *j, enum bench_phase ph, uint64_t *last_done)
{
	struct bench_shared *sh = j->sh;
	struct pollfd pfd[BENCH_MAX_QPAIRS];
	struct bench_queue *pq[BENCH_MAX_QPAIRS];
	unsigned int np = 0, busy = 0;
	bool again = false;
	int t = JOB_POLL_MS, rc;

	for (unsigned int i = 0; i < sh->queues; i++) {
		struct bench_queue *q = &j->q[i];
		short ev;
		int fd;

		if (ph != BENCH_PHASE_STOP) {
			if (queue_submit(q) < 0) {
				queue_fail(q, "submission failed: %s", nvmeof_qpair_error(q->qp));
				return -1;
			}
		} else if (q->nfree == sh->w.qd) {
			continue;
		}
		busy++;
		fd = nvmeof_qpair_get_fd(q->qp);
		ev = nvmeof_qpair_which_events(q->qp);
		if (fd < 0 || !ev) {
			/* No connection: the controller is reconnecting (I/O is held) or the
			 * queue pair has failed for good (service says which). */
			if (nvmeof_qpair_service(q->qp, 0) < 0) {
				queue_fail(q, "queue pair failed: %s", nvmeof_qpair_error(q->qp));
				return -1;
			}
			t = poll_timeout(q->qp, t);
			continue;
		}
		if (ev & POLLOUT) {
			/* The socket is nearly always writable: send without asking poll(). */
			rc = nvmeof_qpair_service(q->qp, POLLOUT);
			if (rc < 0) {
				queue_fail(q, "queue pair failed: %s", nvmeof_qpair_error(q->qp));
				return -1;
			}
			if (rc > 0 && q->nfree && ph != BENCH_PHASE_STOP)
				again = true;
			ev = nvmeof_qpair_which_events(q->qp);
		}
		pfd[np].fd = fd;
		pfd[np].events = ev;
		pfd[np].revents = 0;
		pq[np++] = q;
		t = poll_timeout(q->qp, t);
	}
	if (!busy)
		return 0;
	/* Completions freed slots: refill before waiting. With one queue pair, straight away;
	 * with more, after a look (no wait) at the others' replies, so that a busy queue
	 * pair never starves the rest. */
	if (again && sh->queues == 1)
		return 1;
	if (again || (sh->poll_ns && mono_ns() - *last_done < sh->poll_ns))
		t = 0; /* or a completion came lately: the next one likely soon */
	rc = poll(np ? pfd : NULL, np, t);
	if (rc < 0 && errno != EINTR) {
		queue_fail(&j->q[0], "poll: %s", strerror(errno));
		return -1;
	}
	for (unsigned int k = 0; k < np; k++) {
		int n = nvmeof_qpair_service(pq[k]->qp, rc > 0 ? pfd[k].revents : 0);

		if (n < 0) {
			queue_fail(pq[k], "queue pair failed: %s", nvmeof_qpair_error(pq[k]->qp));
			return -1;
		}
		if (n > 0 && sh->poll_ns)
			*last_done = mono_ns();
	}
	return 1;
}

static void *job_main(void *arg)
{
	struct bench_job *j = arg;
	struct bench_shared *sh = j->sh;
	enum bench_phase cur = BENCH_PHASE_WARMUP;
	uint64_t last_done = 0; /* mono_ns() of the last completion (with --poll-us) */

	if (sh->cpu >= 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((unsigned int)(sh->cpu + (int)j->idx) %
				(ncpu > 0 ? (unsigned int)ncpu : 1u),
			&set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!atomic_load(&sh->go))
		sched_yield();
	for (;;) {
		enum bench_phase ph =
			(enum bench_phase)atomic_load_explicit(&sh->phase, memory_order_acquire);

		if (ph != cur) {
			job_phase(j, ph);
			cur = ph;
		}
		if (atomic_load_explicit(&sh->failed, memory_order_relaxed) &&
		    ph != BENCH_PHASE_STOP)
			ph = BENCH_PHASE_STOP; /* another job failed: just drain */
		if (job_pass(j, ph, &last_done) <= 0)
			break;
	}
	if (cur != BENCH_PHASE_STOP)
		job_phase(j, BENCH_PHASE_STOP);
	return NULL;
}

static void queue_free(struct bench_queue *q)
{
	free(q->slots);
	free(q->free_stack);
	if (q->bufs_registered)
		nvmeof_buf_free(q->sh->c->ctrlr, q->bufs);
	else
		free(q->bufs);
	free(q->hist[0]);
	free(q->hist[1]);
	q->slots = NULL;
	q->free_stack = NULL;
	q->bufs = NULL;
	q->bufs_registered = false;
	q->hist[0] = q->hist[1] = NULL;
}

/* Queue pair @idx of @nq: its own region of the I/O range for sequential workloads. */
static int queue_init(struct bench_queue *q, struct bench_shared *sh, unsigned int idx,
		      unsigned int nq)
{
	const struct bench_workload *w = &sh->w;
	uint64_t per_q = sh->size / nq / w->bs * w->bs;

	memset(q, 0, sizeof(*q));
	q->sh = sh;
	q->idx = idx;
	q->qp = sh->c->qp[idx];
	q->rng = 0x9E3779B97F4A7C15ull * (idx + 1) ^ (uint64_t)mono_ns();
	if (!q->rng)
		q->rng = 1;
	q->region_off = per_q * idx;
	q->region_len = per_q;
	q->slots = calloc(w->qd, sizeof(*q->slots));
	q->free_stack = calloc(w->qd, sizeof(*q->free_stack));
	q->hist[0] = calloc(1, sizeof(*q->hist[0]));
	q->hist[1] = calloc(1, sizeof(*q->hist[1]));
	/* Registered memory: NVMe/RDMA names it in the commands and copies nothing. Plain
	 * memory when asked, or when the library's region table is full. */
	if (!sh->plain_buffers && sh->c->ctrlr) {
		q->bufs = nvmeof_buf_alloc(sh->c->ctrlr, (size_t)w->qd * w->bs);
		q->bufs_registered = q->bufs != NULL;
	}
	if (!q->slots || !q->free_stack || !q->hist[0] || !q->hist[1] ||
	    (!q->bufs && posix_memalign(&q->bufs, 4096, (size_t)w->qd * w->bs) != 0)) {
		if (!q->bufs_registered)
			q->bufs = NULL;
		queue_free(q);
		return -ENOMEM;
	}
	/* Non-zero data for writes; verified writes fill their buffer per I/O. */
	for (size_t i = 0; i < (size_t)w->qd * w->bs; i += 8)
		*(uint64_t *)((char *)q->bufs + i) = i * 0x9E3779B97F4A7C15ull + 1;
	for (unsigned int i = 0; i < w->qd; i++) {
		q->slots[i].q = q;
		q->slots[i].iov.iov_base = (char *)q->bufs + (size_t)i * w->bs;
		q->slots[i].iov.iov_len = w->bs;
		q->free_stack[i] = w->qd - 1 - i;
	}
	q->nfree = w->qd;
	return 0;
}

static uint64_t live_total(struct bench_queue *qs, unsigned int n)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < n; i++)
		t += atomic_load_explicit(&qs[i].live, memory_order_relaxed);
	return t;
}

/* Let @secs pass (ticking, servicing admin queues); false when a job failed. */
static bool run_phase(struct bench_shared *sh, struct bench_queue *qs, unsigned int n,
		      const struct bench_run_ctl *ctl, enum bench_phase ph, double secs)
{
	struct bench_conn *cs[2] = { sh->c, ctl ? ctl->other : NULL };
	uint64_t t0 = mono_ns(), base = live_total(qs, n);
	uint64_t end = t0 + (uint64_t)(secs * 1e9);

	for (;;) {
		uint64_t now = mono_ns();
		int ms;

		if (atomic_load(&sh->failed))
			return false;
		if (ctl && ctl->tick)
			ctl->tick(ctl->arg, ph, (double)(now - t0) / 1e9, live_total(qs, n) - base);
		if (now >= end)
			return true;
		ms = (int)((end - now + 999999) / 1000000);
		conns_service(cs, 2, ms < TICK_MS ? ms : TICK_MS);
	}
}

int bench_run_sample(struct bench_conn *c, const struct bench_workload *w,
		     const struct bench_opts *o, uint64_t size, const struct bench_run_ctl *ctl,
		     struct bench_sample *out, char *err, size_t errlen)
{
	unsigned int nq = c->nqp, per = o->queues ? o->queues : 1;
	struct bench_shared sh = { .c = c,
				   .w = *w,
				   .verify = o->verify,
				   .size = size,
				   .queues = per,
				   .cpu = o->client_cpu,
				   .poll_ns = (uint64_t)o->poll_us * 1000,
				   .plain_buffers = o->plain_buffers };
	struct bench_queue *qs;
	struct bench_job *jobs;
	struct bench_hist *merged;
	unsigned int njobs = nq / per, ready = 0, started = 0;
	uint64_t t_meas, t_end;
	struct nvmeof_ctrlr_stats rs0, rs1;
	bool ok;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (nq == 0 || nq % per || nq > BENCH_MAX_QPAIRS) {
		snprintf(err, errlen, "%u queue pairs for %u per job", nq, per);
		return -EINVAL;
	}
	if (w->bs % c->block_size || w->bs > size || size / nq < w->bs) {
		snprintf(err, errlen,
			 "I/O size %u does not fit blocks of %u in %llu bytes / %u queue pairs",
			 w->bs, c->block_size, (unsigned long long)size, nq);
		return -EINVAL;
	}
	nvmeof_ctrlr_get_stats(c->ctrlr, &rs0);
	atomic_init(&sh.phase, BENCH_PHASE_WARMUP);
	atomic_init(&sh.go, false);
	atomic_init(&sh.failed, false);
	qs = calloc(nq, sizeof(*qs));
	jobs = calloc(njobs, sizeof(*jobs));
	merged = calloc(3, sizeof(*merged)); /* reads, writes, both */
	if (!qs || !jobs || !merged) {
		free(qs);
		free(jobs);
		free(merged);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (; ready < nq; ready++)
		if (queue_init(&qs[ready], &sh, ready, nq) != 0) {
			snprintf(err, errlen, "out of memory for %u x %u-byte buffers", w->qd,
				 w->bs);
			rc = -ENOMEM;
			break;
		}
	for (; rc == 0 && started < njobs; started++) {
		jobs[started].sh = &sh;
		jobs[started].idx = started;
		jobs[started].q = &qs[started * per];
		if (pthread_create(&jobs[started].thread, NULL, job_main, &jobs[started]) != 0) {
			snprintf(err, errlen, "cannot start a job thread");
			rc = -EAGAIN;
			break;
		}
	}
	if (rc) {
		atomic_store(&sh.phase, BENCH_PHASE_STOP);
		atomic_store(&sh.go, true);
		for (unsigned int i = 0; i < started; i++)
			pthread_join(jobs[i].thread, NULL);
		for (unsigned int i = 0; i < ready; i++)
			queue_free(&qs[i]);
		free(qs);
		free(jobs);
		free(merged);
		return rc;
	}

	atomic_store(&sh.go, true);
	ok = run_phase(&sh, qs, nq, ctl, BENCH_PHASE_WARMUP, o->warmup_s);
	if (ok && ctl && ctl->mark)
		ctl->mark(ctl->arg, BENCH_PHASE_MEASURE);
	atomic_store_explicit(&sh.phase, BENCH_PHASE_MEASURE, memory_order_release);
	t_meas = mono_ns();
	if (ok)
		ok = run_phase(&sh, qs, nq, ctl, BENCH_PHASE_MEASURE, o->time_s);
	atomic_store_explicit(&sh.phase, BENCH_PHASE_STOP, memory_order_release);
	t_end = mono_ns();
	if (ok && ctl && ctl->mark)
		ctl->mark(ctl->arg, BENCH_PHASE_STOP);
	for (unsigned int i = 0; i < njobs; i++) {
		pthread_join(jobs[i].thread, NULL);
		out->init_cpu_ns += (double)jobs[i].cpu_ns;
		out->init_ucpu_ns += (double)jobs[i].ucpu_ns;
	}

	for (unsigned int d = 0; d < 3; d++)
		bench_hist_reset(&merged[d]);
	out->nqueues = nq;
	for (unsigned int i = 0; i < nq; i++) {
		struct bench_queue *q = &qs[i];

		for (unsigned int d = 0; d < 2; d++) {
			bench_hist_merge(&merged[d], q->hist[d]);
			bench_hist_merge(&merged[2], q->hist[d]);
			out->dir[d].ios += q->dir_ios[d];
			out->dir[d].bytes += q->dir_bytes[d];
		}
		out->q_ios[i] = q->ios;
		out->ios += q->ios;
		out->bytes += q->bytes;
		out->errors += q->errors;
		out->verify_errors += q->verify_errors;
		if (q->have_xlate && (i == 0 || out->have_init_xlate)) {
			out->have_init_xlate = true;
			out->init_xlate_ns += (double)q->xlate.xlate_ns;
			out->init_xlate_calls += q->xlate.xlate_calls;
		} else {
			out->have_init_xlate = false;
		}
		if (q->errmsg[0] && rc == 0) {
			if (per > 1)
				snprintf(err, errlen, "job %u, queue %u: %s", i / per, i % per,
					 q->errmsg);
			else
				snprintf(err, errlen, "job %u: %s", i, q->errmsg);
			rc = -EIO;
		}
		queue_free(q);
	}
	out->secs = (double)(t_end - t_meas) / 1e9;
	nvmeof_ctrlr_get_stats(c->ctrlr, &rs1);
	out->reconnects = rs1.reconnects - rs0.reconnects;
	out->outage_ms = rs1.total_outage_ms + rs1.current_outage_ms - rs0.total_outage_ms -
			 rs0.current_outage_ms;
	for (unsigned int d = 0; d < 2; d++) {
		struct bench_dir *bd = &out->dir[d];
		const struct bench_hist *h = &merged[d];

		if (!h->count)
			continue;
		bd->lat_mean_ns = bench_hist_mean(h);
		bd->lat_stddev_ns = bench_hist_stddev(h);
		bd->lat_min_ns = h->min;
		bd->lat_max_ns = h->max;
		for (unsigned int k = 0; k < o->npct && k < BENCH_MAX_PCT; k++)
			bd->pct_ns[k] = bench_hist_percentile(h, o->pct[k]);
	}
	out->lat_avg_ns = bench_hist_mean(&merged[2]);
	out->lat_min_ns = merged[2].min;
	out->lat_max_ns = merged[2].max;
	out->lat_p50_ns = bench_hist_percentile(&merged[2], 50);
	out->lat_p99_ns = bench_hist_percentile(&merged[2], 99);
	out->lat_p999_ns = bench_hist_percentile(&merged[2], 99.9);
	free(qs);
	free(jobs);
	free(merged);
	if (rc == 0 && !ok) {
		snprintf(err, errlen, "a job failed");
		rc = -EIO;
	}
	if (rc == 0 && out->ios == 0) {
		snprintf(err, errlen, "no I/O completed in %.1f s", o->time_s);
		rc = -ETIMEDOUT;
	}
	return rc;
}

/* ---- pre-fill for --verify ------------------------------------------------------------------ */
struct fill_slot {
	bool busy;
	int status; /* 0, -errno or an NVMe status */
	struct iovec iov;
};

static void fill_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct fill_slot *s = arg;

	s->busy = false;
	if (cpl->err)
		s->status = cpl->err;
	else if (cpl->status)
		s->status = cpl->status;
}

int bench_prefill(struct bench_conn *c, uint64_t size, char *err, size_t errlen)
{
	struct nvmeof_qpair *qp = c->qp[0];
	struct fill_slot slots[PREFILL_QD];
	uint32_t bsz = c->block_size, bs = PREFILL_BS;
	uint64_t off = 0;
	void *bufs;
	int rc = 0;

	if (posix_memalign(&bufs, 4096, (size_t)PREFILL_QD * bs) != 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memset(slots, 0, sizeof(slots));
	for (unsigned int i = 0; i < PREFILL_QD; i++) {
		slots[i].iov.iov_base = (char *)bufs + (size_t)i * bs;
		slots[i].iov.iov_len = bs;
	}
	for (;;) {
		unsigned int busy = 0;

		for (unsigned int i = 0; i < PREFILL_QD && rc == 0; i++) {
			struct fill_slot *s = &slots[i];
			uint32_t len;

			if (s->status) {
				rc = s->status < 0 ? s->status : -EIO;
				break;
			}
			if (s->busy || off >= size)
				continue;
			len = size - off < bs ? (uint32_t)(size - off) / bsz * bsz : bs;
			if (!len) {
				off = size;
				continue;
			}
			bench_pattern_fill(s->iov.iov_base, off / bsz, len / bsz, bsz);
			s->iov.iov_len = len;
			rc = nvmeof_write(qp, c->ns, off / bsz, len / bsz, &s->iov, 1, 0, fill_done,
					  s);
			if (rc == -EAGAIN) {
				rc = 0;
				break;
			}
			if (rc == 0) {
				s->busy = true;
				off += len;
			}
		}
		for (unsigned int i = 0; i < PREFILL_QD; i++)
			busy += slots[i].busy;
		if (!busy && (off >= size || rc))
			break;
		if (busy) {
			struct pollfd pfd = { nvmeof_qpair_get_fd(qp),
					      nvmeof_qpair_which_events(qp), 0 };
			int n;

			if (pfd.fd < 0) {
				rc = -ENOTCONN;
				break;
			}
			n = poll(&pfd, 1, JOB_POLL_MS);
			if (nvmeof_qpair_service(qp, n > 0 ? pfd.revents : 0) < 0) {
				rc = -ENOTCONN;
				break;
			}
		}
	}
	if (rc)
		snprintf(err, errlen, "writing the verification pattern failed: %s",
			 rc == -EIO ? "error status" : nvmeof_strerror(rc));
	free(bufs);
	return rc;
}
