/* SPDX-License-Identifier: MIT */
/*
 * initiator_io: drives a controller through libnvmeof's public API and checks every byte.
 *
 *   initiator_io URI [--queues N] [--qd N] [--seconds S] [--loose] [--digests]
 *                [--hostnqn NQN] [--ctrl-loss-tmo S] [--tls-key-file PATH]
 *                [--tls-identity 0|1] [--registered]
 *
 * 1. event loop (one thread, poll() over every queue pair and the admin queue): fill a
 *    region per queue pair with a known pattern, then QD random overlapping-free writes
 *    of 1-32 blocks, then read the whole region back and compare;
 * 2. one thread per queue pair: QD random 4 KiB reads checked against the pattern for
 *    S seconds (reports IOPS), then QD random 4 KiB writes (IOPS);
 * 3. scatter-gather I/O across MDTS (odd iovec sizes), Compare (match and mismatch),
 *    Write Zeroes, Deallocate, Flush, a read past the end of the namespace.
 * --loose accepts any error status for the out-of-range read and skips commands the
 * controller does not list in ONCS (for third-party targets); without it they are
 * required, with the exact status. --digests asks for NVMe/TCP header and data digests.
 * --dhchap-secret KEY (and --dhchap-ctrl-secret KEY) authenticate every queue with
 * DH-HMAC-CHAP; --reauth then authenticates the admin queue again before step 1.
 * --registered takes every I/O buffer from registered memory (nvmeof_buf_alloc), so on
 * NVMe/RDMA the controller moves the data itself, and adds step 4: scatter-gather I/O over
 * two registered regions (several keyed descriptors when the controller's MSDBD allows,
 * the copying path otherwise), checked byte by byte.
 * Prints "ok"/"not ok" lines; exit 0 only if all pass.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/nvmeof.h"

#define MAX_QUEUES 16
#define MAX_QD 256
#define IO_MAX_BLOCKS 32

static int g_pass, g_fail;
static bool g_loose;
static bool g_registered;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		g_pass++;
	else
		g_fail++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Block content: a function of its LBA and how many times it was written. */
static void fill_block(uint8_t *p, uint32_t bs, uint64_t lba, uint32_t gen)
{
	uint64_t v = (lba << 16 | gen) * 0x9e3779b97f4a7c15ull;

	for (uint32_t i = 0; i < bs; i += 8) {
		v ^= v >> 29;
		v *= 0xbf58476d1ce4e5b9ull;
		memcpy(p + i, &v, 8);
	}
}

static bool block_ok(const uint8_t *p, uint32_t bs, uint64_t lba, uint32_t gen)
{
	uint8_t want[65536];

	fill_block(want, bs, lba, gen);
	return memcmp(p, want, bs) == 0;
}

struct slot {
	struct job *job;
	uint8_t *buf;
	uint64_t lba;
	uint32_t n;
	bool busy;
	bool write;
};

struct job {
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint32_t bs;
	uint64_t base, blocks;	    /* this queue pair's region */
	uint32_t *gen;		    /* per block */
	uint8_t *bufs;              /* --registered: every slot's buffer, one region */
	struct slot slots[MAX_QD];
	unsigned int qd;
	uint64_t seed;
	uint64_t submitted, completed, errors, mismatches;
	uint64_t todo;		    /* I/Os still to submit in this phase */
	int phase;		    /* 0 fill, 1 random write, 2 verify read, 3 bench read, 4 bench write */
	uint64_t cursor;	    /* sequential phases */
	char first_error[160];
};

static void job_error(struct job *j, const char *what, const struct nvmeof_cpl *cpl)
{
	char st[128];

	j->errors++;
	if (j->first_error[0])
		return;
	if (cpl->err)
		snprintf(j->first_error, sizeof(j->first_error), "%s: %s (%s)", what,
			 nvmeof_strerror(cpl->err), nvmeof_qpair_error(j->qp));
	else
		snprintf(j->first_error, sizeof(j->first_error), "%s: %s", what,
			 nvmeof_status_str(cpl->status, st, sizeof(st)));
}

static int job_submit(struct job *j, struct slot *s);

static void io_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct slot *s = arg;
	struct job *j = s->job;

	s->busy = false;
	j->completed++;
	if (!nvmeof_cpl_ok(cpl)) {
		job_error(j, s->write ? "write" : "read", cpl);
	} else if (!s->write && j->phase != 4) {
		for (uint32_t i = 0; i < s->n; i++) {
			uint64_t rel = s->lba - j->base + i;

			if (!block_ok(s->buf + (size_t)i * j->bs, j->bs, s->lba + i, j->gen[rel])) {
				if (!j->mismatches++)
					snprintf(j->first_error, sizeof(j->first_error),
						 "data mismatch at LBA %" PRIu64, s->lba + i);
			}
		}
	}
	if (j->todo)
		job_submit(j, s);
}

/* Start the next I/O of the job's phase on slot @s. Slot i owns blocks i, i+qd, ... of the
 * region for random writes, so writes in flight never overlap. */
static int job_submit(struct job *j, struct slot *s)
{
	unsigned int idx = (unsigned int)(s - j->slots);
	struct iovec iov;
	uint64_t r;
	int rc;

	switch (j->phase) {
	case 0: /* fill sequentially */
	case 2: /* read back sequentially */
		s->n = j->blocks - j->cursor < IO_MAX_BLOCKS ? (uint32_t)(j->blocks - j->cursor)
							      : IO_MAX_BLOCKS;
		s->lba = j->base + j->cursor;
		j->cursor += s->n;
		s->write = j->phase == 0;
		break;
	case 1: /* random write inside the slot's stripe */
		r = rnd(&j->seed);
		s->n = 1 + (uint32_t)(r % IO_MAX_BLOCKS);
		{
			uint64_t stripes = j->blocks / IO_MAX_BLOCKS / j->qd;
			uint64_t stripe = (r >> 8) % stripes;

			s->lba = j->base + (stripe * j->qd + idx) * IO_MAX_BLOCKS;
		}
		s->write = true;
		break;
	case 3: /* random 4 KiB read */
	case 4: /* random 4 KiB write (same content as before: verification stays valid) */
		s->n = 4096 / j->bs ? 4096 / j->bs : 1;
		s->lba = j->base + (rnd(&j->seed) % (j->blocks / s->n)) * s->n;
		s->write = j->phase == 4;
		break;
	}
	if (s->write) {
		for (uint32_t i = 0; i < s->n; i++) {
			uint64_t rel = s->lba - j->base + i;

			if (j->phase != 4)
				j->gen[rel]++;
			fill_block(s->buf + (size_t)i * j->bs, j->bs, s->lba + i, j->gen[rel]);
		}
	}
	iov.iov_base = s->buf;
	iov.iov_len = (size_t)s->n * j->bs;
	rc = s->write ? nvmeof_write(j->qp, j->ns, s->lba, s->n, &iov, 1, 0, io_done, s)
		      : nvmeof_read(j->qp, j->ns, s->lba, s->n, &iov, 1, 0, io_done, s);
	if (rc) {
		struct nvmeof_cpl cpl = { .err = rc };

		job_error(j, "submit", &cpl);
		j->todo = 0;
		return rc;
	}
	s->busy = true;
	j->submitted++;
	j->todo--;
	return 0;
}

static unsigned int job_busy(const struct job *j)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < j->qd; i++)
		n += j->slots[i].busy;
	return n;
}

static void job_start(struct job *j, int phase, uint64_t todo)
{
	j->phase = phase;
	j->cursor = 0;
	j->todo = todo;
	for (unsigned int i = 0; i < j->qd && j->todo; i++)
		if (!j->slots[i].busy)
			job_submit(j, &j->slots[i]);
}

/* One thread drives every job through poll(): the event-loop way. */
static int run_event_loop(struct nvmeof_ctrlr *ctrlr, struct job *jobs, unsigned int nq,
			  int phase, bool by_region)
{
	struct pollfd pfd[MAX_QUEUES + 1];
	double deadline = now_s() + 120;

	for (unsigned int q = 0; q < nq; q++) {
		uint64_t todo = by_region ? (jobs[q].blocks + IO_MAX_BLOCKS - 1) / IO_MAX_BLOCKS
					  : jobs[q].blocks / IO_MAX_BLOCKS;

		job_start(&jobs[q], phase, todo);
	}
	for (;;) {
		unsigned int busy = 0;
		int tmo = nvmeof_ctrlr_timeout_ms(ctrlr);

		for (unsigned int q = 0; q < nq; q++) {
			busy += job_busy(&jobs[q]) + (jobs[q].todo > 0);
			pfd[q].fd = nvmeof_qpair_get_fd(jobs[q].qp);
			pfd[q].events = nvmeof_qpair_which_events(jobs[q].qp);
			pfd[q].revents = 0;
			if (nvmeof_qpair_timeout_ms(jobs[q].qp) >= 0 &&
			    (tmo < 0 || nvmeof_qpair_timeout_ms(jobs[q].qp) < tmo))
				tmo = nvmeof_qpair_timeout_ms(jobs[q].qp);
		}
		if (!busy)
			return 0;
		if (now_s() > deadline)
			return -ETIMEDOUT;
		pfd[nq].fd = nvmeof_ctrlr_get_fd(ctrlr);
		pfd[nq].events = nvmeof_ctrlr_which_events(ctrlr);
		pfd[nq].revents = 0;
		if (poll(pfd, nq + 1, tmo < 0 || tmo > 1000 ? 1000 : tmo) < 0 && errno != EINTR)
			return -errno;
		for (unsigned int q = 0; q < nq; q++)
			if (nvmeof_qpair_service(jobs[q].qp, pfd[q].revents) < 0 &&
			    !job_busy(&jobs[q]))
				jobs[q].todo = 0;
		nvmeof_ctrlr_service(ctrlr, pfd[nq].revents);
	}
}

/* One thread per queue pair: process_completions() plus poll() while waiting. */
struct bench_arg {
	struct job *job;
	int phase;
	double seconds;
	double elapsed;
};

static void *bench_thread(void *p)
{
	struct bench_arg *a = p;
	struct job *j = a->job;
	double t0 = now_s(), end = t0 + a->seconds;

	job_start(j, a->phase, UINT64_MAX);
	while (job_busy(j)) {
		struct pollfd pfd = { .fd = nvmeof_qpair_get_fd(j->qp),
				      .events = nvmeof_qpair_which_events(j->qp) };

		if (now_s() >= end)
			j->todo = 0;
		if (nvmeof_qpair_process_completions(j->qp, 0) > 0)
			continue;
		if (pfd.fd < 0)
			break;
		poll(&pfd, 1, 100);
	}
	a->elapsed = now_s() - t0;
	return NULL;
}

static void bench(struct job *jobs, unsigned int nq, int phase, double seconds, const char *what)
{
	pthread_t th[MAX_QUEUES];
	struct bench_arg args[MAX_QUEUES];
	uint64_t before = 0, after = 0, errors = 0, mism = 0;
	double elapsed = 0;

	for (unsigned int q = 0; q < nq; q++) {
		before += jobs[q].completed;
		errors += jobs[q].errors;
		mism += jobs[q].mismatches;
		args[q] = (struct bench_arg){ &jobs[q], phase, seconds, 0 };
		pthread_create(&th[q], NULL, bench_thread, &args[q]);
	}
	for (unsigned int q = 0; q < nq; q++) {
		pthread_join(th[q], NULL);
		after += jobs[q].completed;
		errors -= jobs[q].errors;
		mism -= jobs[q].mismatches;
		if (args[q].elapsed > elapsed)
			elapsed = args[q].elapsed;
	}
	printf("# %s: %u threads x QD %u, %" PRIu64 " I/Os in %.2f s = %.0f IOPS\n", what, nq,
	       jobs[0].qd, after - before, elapsed, (double)(after - before) / elapsed);
	check(errors == 0 && mism == 0 && after > before,
	      "%s: %" PRIu64 " I/Os, no errors, every read matches", what, after - before);
}

/* ---- Single-command checks (blocking API) ---------------------------------------------------- */
static struct nvmeof_cpl done_cpl;

static void store_cpl(void *arg, const struct nvmeof_cpl *cpl)
{
	*(struct nvmeof_cpl *)arg = *cpl;
}

static void sg_checks(struct nvmeof_ctrlr *ctrlr, struct nvmeof_qpair *qp, struct nvmeof_ns *ns,
		      uint64_t lba)
{
	struct nvmeof_ctrlr_info ci;
	uint32_t bs = nvmeof_ns_get_block_size(ns);
	size_t total;
	uint32_t nblocks;
	uint8_t *src, *dst;
	struct iovec iov[8];
	static const size_t cuts[] = { 1000, 3096, 77, 8192, 123, 60000, 512 };
	int rc;

	nvmeof_ctrlr_get_info(ctrlr, &ci);
	/* Bigger than MDTS (if any) so the library has to split, and not a multiple of it. */
	total = ci.mdts_bytes ? (size_t)ci.mdts_bytes * 3 + 8 * bs : (size_t)1 << 20;
	if (total > (8u << 20))
		total = 8u << 20;
	nblocks = (uint32_t)(total / bs);
	total = (size_t)nblocks * bs;
	src = malloc(total);
	dst = malloc(total);
	for (size_t i = 0; i < total; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 9));
	{
		size_t off = 0;
		int n = 0;

		for (; n < 7 && off + cuts[n] < total; n++) {
			iov[n].iov_base = src + off;
			iov[n].iov_len = cuts[n];
			off += cuts[n];
		}
		iov[n].iov_base = src + off;
		iov[n].iov_len = total - off;
		n++;
		done_cpl.err = 1;
		rc = nvmeof_write(qp, ns, lba, nblocks, iov, n, NVMEOF_IO_FUA, store_cpl, &done_cpl);
		if (rc == 0)
			rc = nvmeof_qpair_drain(qp);
		if (rc == 0)
			rc = done_cpl.err ? done_cpl.err : done_cpl.status;
		check(rc == 0, "scatter-gather write of %zu bytes in %d iovecs (FUA), mdts %u",
		      total, n, ci.mdts_bytes);
	}
	memset(dst, 0, total);
	rc = nvmeof_read_sync(qp, ns, lba, nblocks, dst, 0);
	check(rc == 0 && memcmp(src, dst, total) == 0, "read back %u blocks matches (rc %d)",
	      nblocks, rc);

	/* Compare */
	if (!(ci.oncs & 1) && g_loose) {
		printf("# compare: not in ONCS, skipped\n");
	} else {
		rc = nvmeof_compare_sync(qp, ns, lba, 8, src, 0);
		check(rc == 0, "compare of matching data succeeds (rc %d)", rc);
		src[bs + 3] ^= 0x5a;
		rc = nvmeof_compare_sync(qp, ns, lba, 8, src, 0);
		check(rc > 0 && NVMEOF_SCT(rc) == NVMEOF_SCT_MEDIA &&
			      NVMEOF_SC(rc) == NVMEOF_SC_COMPARE_FAILURE,
		      "compare of different data fails with Compare Failure (rc %#x)", rc);
		src[bs + 3] ^= 0x5a;
	}

	/* Write Zeroes */
	if (!(ci.oncs & 8) && g_loose) {
		printf("# write zeroes: not in ONCS, skipped\n");
	} else {
		rc = nvmeof_write_zeroes_sync(qp, ns, lba + 1, 3, 0);
		check(rc == 0, "write zeroes (rc %d)", rc);
		rc = nvmeof_read_sync(qp, ns, lba, 5, dst, 0);
		bool z = rc == 0;

		for (size_t i = bs; i < 4u * bs && z; i++)
			z = dst[i] == 0;
		check(z && !memcmp(dst, src, bs) && !memcmp(dst + 4 * bs, src + 4 * bs, bs),
		      "zeroed blocks read as zeroes, neighbours untouched");
	}

	/* Deallocate */
	if (!(ci.oncs & 4) && g_loose) {
		printf("# deallocate: not in ONCS, skipped\n");
	} else {
		struct nvmeof_ns_info ni;

		rc = nvmeof_deallocate_sync(qp, ns, lba + 8, 8);
		check(rc == 0, "deallocate (rc %d)", rc);
		nvmeof_ns_get_info(ns, &ni);
		if ((ni.dlfeat & 7) == 1) {
			rc = nvmeof_read_sync(qp, ns, lba + 8, 8, dst, 0);
			bool z = rc == 0;

			for (size_t i = 0; i < 8u * bs && z; i++)
				z = dst[i] == 0;
			check(z, "deallocated blocks read as zeroes (DLFEAT 1)");
		}
	}

	rc = nvmeof_flush_sync(qp, ns);
	check(rc == 0, "flush (rc %d)", rc);

	rc = nvmeof_read_sync(qp, ns, nvmeof_ns_get_num_blocks(ns) - 1, 2, dst, 0);
	if (g_loose)
		check(rc > 0, "read past the end fails with an NVMe status (rc %#x)", rc);
	else
		check(rc == NVMEOF_STATUS(NVMEOF_SCT_GENERIC, NVMEOF_SC_LBA_OUT_OF_RANGE),
		      "read past the end: LBA Out of Range (rc %#x)", rc);
	check(nvmeof_qpair_get_fd(qp) >= 0, "queue pair still usable after the error");
	rc = nvmeof_read_sync(qp, ns, lba, 1, dst, 0);
	check(rc == 0 && memcmp(dst, src, bs) == 0, "and reads correctly afterwards");
	free(src);
	free(dst);
}

/* Direct-placement counters of @qp (0 off NVMe/RDMA). */
static void direct_stats(struct nvmeof_qpair *qp, uint64_t *cmds, uint64_t *descs)
{
	struct nvmeof_qpair_stats st;

	memset(&st, 0, sizeof(st));
	nvmeof_qpair_get_stats(qp, &st);
	*cmds = st.direct_cmds;
	*descs = st.direct_descs;
}

/* The @n pieces of @iov hold @total bytes: gather them into @flat. */
static void gather(const struct iovec *iov, int n, uint8_t *flat)
{
	for (int i = 0; i < n; i++) {
		memcpy(flat, iov[i].iov_base, iov[i].iov_len);
		flat += iov[i].iov_len;
	}
}

/* One scattered write then read of @n pieces; how many descriptors the commands used. */
static int sg_direct_rw(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			const struct iovec *wiov, const struct iovec *riov, int n, size_t total,
			uint8_t *want, uint8_t *got, uint64_t *cmds, uint64_t *descs)
{
	uint32_t bs = nvmeof_ns_get_block_size(ns);
	uint64_t c0, d0, c1, d1;
	int rc;

	direct_stats(qp, &c0, &d0);
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < wiov[i].iov_len; k++)
			((uint8_t *)wiov[i].iov_base)[k] = (uint8_t)(rand() >> 4);
	gather(wiov, n, want);
	for (int i = 0; i < n; i++)
		memset(riov[i].iov_base, 0xa5, riov[i].iov_len);
	done_cpl.err = 1;
	rc = nvmeof_write(qp, ns, lba, (uint32_t)(total / bs), wiov, n, 0, store_cpl, &done_cpl);
	if (rc == 0)
		rc = nvmeof_qpair_drain(qp);
	if (rc == 0)
		rc = done_cpl.err ? done_cpl.err : done_cpl.status;
	if (rc == 0) {
		done_cpl.err = 1;
		rc = nvmeof_read(qp, ns, lba, (uint32_t)(total / bs), riov, n, 0, store_cpl,
				 &done_cpl);
		if (rc == 0)
			rc = nvmeof_qpair_drain(qp);
		if (rc == 0)
			rc = done_cpl.err ? done_cpl.err : done_cpl.status;
	}
	gather(riov, n, got);
	direct_stats(qp, &c1, &d1);
	*cmds = c1 - c0;
	*descs = d1 - d0;
	if (rc == 0 && memcmp(want, got, total) != 0)
		rc = -EILSEQ;
	return rc;
}

/*
 * Scatter-gather over registered memory: caller memory (nvmeof_mem_register) and a
 * library buffer (nvmeof_buf_alloc), pieces never adjacent so none merge. @n pieces of
 * 4 KiB each way; the reads land in other places than the writes came from.
 */
static void direct_checks(struct nvmeof_ctrlr *ctrlr, struct nvmeof_qpair *qp, struct nvmeof_ns *ns,
			  uint64_t lba)
{
	const size_t rlen = 1u << 20, piece = 4096;
	static const int counts[] = { 1, 2, 6, 16, 17, 40 };
	struct nvmeof_ctrlr_info ci;
	uint8_t id[4096], *mine, *lib, *want, *got;
	struct iovec wiov[64], riov[64];
	bool rdma;
	unsigned int msdbd = 0, icdata = 0, desc_max;
	int rc;

	nvmeof_ctrlr_get_info(ctrlr, &ci);
	rdma = strcmp(ci.transport, "rdma") == 0;
	if (nvmeof_ctrlr_identify(ctrlr, 1, 0, id) == 0) {
		uint32_t ioccsz = (uint32_t)id[1792] | (uint32_t)id[1793] << 8 |
				  (uint32_t)id[1794] << 16 | (uint32_t)id[1795] << 24;

		msdbd = id[1803];
		icdata = ioccsz >= 4 ? ioccsz * 16 - 64 : 0;
	}
	/* a descriptor list rides in the capsule: MSDBD, the capsule's room, and 16 at most */
	desc_max = msdbd > 1 ? msdbd : 1;
	if (desc_max > 1 && desc_max > icdata / 16)
		desc_max = icdata / 16 > 1 ? icdata / 16 : 1;
	if (desc_max > 16)
		desc_max = 16;
	printf("# %s controller, MSDBD %u, %u in-capsule bytes: %u descriptors per command\n",
	       ci.transport, msdbd, icdata, desc_max);
	mine = aligned_alloc(4096, rlen);
	lib = nvmeof_buf_alloc(ctrlr, rlen);
	want = malloc(64 * piece);
	got = malloc(64 * piece);
	rc = mine ? nvmeof_mem_register(ctrlr, mine, rlen) : -ENOMEM;
	check(rc == 0 && lib != NULL, "register 1 MiB of caller memory and allocate 1 MiB (%s)",
	      rc || !lib ? nvmeof_last_error() : "ok");
	if (rc || !lib || !want || !got)
		goto out;
	check(nvmeof_mem_register(ctrlr, mine + 4096, 4096) == -EEXIST, "overlapping registration "
									"refused");
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		int n = counts[c];
		uint64_t cmds, descs, want_cmds, want_descs;

		for (int i = 0; i < n; i++) {
			/* writes: alternate regions, every third page; reads: the other way round */
			uint8_t *w = (i & 1 ? lib : mine) + (size_t)(3 * i + 1) * piece;
			uint8_t *r = (i & 1 ? mine : lib) + (size_t)(3 * i + 2) * piece + 512;

			wiov[i] = (struct iovec){ w, piece };
			riov[i] = (struct iovec){ r, piece };
		}
		rc = sg_direct_rw(qp, ns, lba, wiov, riov, n, (size_t)n * piece, want, got, &cmds,
				  &descs);
		/* Expected, per command the library splits the I/O into (MDTS): directly
		 * placed when its pieces fit the descriptors allowed (one per piece), copied
		 * otherwise (nothing counted); a write small enough for the capsule goes in
		 * it. */
		want_cmds = 0;
		want_descs = 0;
		for (size_t done = 0; rdma && done < (size_t)n * piece;) {
			size_t len = (size_t)n * piece - done;
			unsigned int k;

			if (ci.mdts_bytes && len > ci.mdts_bytes)
				len = ci.mdts_bytes;
			k = (unsigned int)(len / piece);
			if (k <= desc_max) {
				unsigned int per = len > icdata ? 2 : 1; /* write, read */

				want_cmds += per;
				want_descs += (uint64_t)per * k;
			}
			done += len;
		}
		check(rc == 0 && cmds == want_cmds && descs == want_descs,
		      "registered scatter-gather write + read of %d pieces: rc %d, %" PRIu64
		      " direct commands with %" PRIu64 " descriptors (want %" PRIu64 "/%" PRIu64
		      ")",
		      n, rc, cmds, descs, want_cmds, want_descs);
		lba += 64 * piece / nvmeof_ns_get_block_size(ns);
	}
	/* A region that is gone is plain memory again: the copying path, still correct. */
	check(nvmeof_mem_unregister(ctrlr, mine) == 0, "unregister caller memory");
	{
		uint64_t cmds, descs;

		wiov[0] = (struct iovec){ mine, piece };
		riov[0] = (struct iovec){ mine + 2 * piece, piece };
		rc = sg_direct_rw(qp, ns, lba, wiov, riov, 1, piece, want, got, &cmds, &descs);
		check(rc == 0 && cmds == 0, "unregistered memory: copied, data intact (rc %d)", rc);
	}
	check(nvmeof_mem_unregister(ctrlr, mine) == -ENOENT, "second unregister: -ENOENT");
out:
	nvmeof_buf_free(ctrlr, lib);
	free(mine);
	free(want);
	free(got);
}

int main(int argc, char **argv)
{
	struct nvmeof_opts opts;
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns;
	static struct job jobs[MAX_QUEUES];
	unsigned int nq = 4, qd = 32;
	double seconds = 2;
	const char *uri = NULL, *hostnqn = NULL, *tls_key_file = NULL;
	int tls_identity = 1;
	int ctrl_loss_tmo = -2; /* -2: the library's default */
	uint64_t region;
	bool digests = false;
	const char *dhchap_secret = NULL, *dhchap_ctrl_secret = NULL;
	bool reauth = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--queues") && i + 1 < argc)
			nq = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--qd") && i + 1 < argc)
			qd = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--loose"))
			g_loose = true;
		else if (!strcmp(argv[i], "--registered"))
			g_registered = true;
		else if (!strcmp(argv[i], "--digests"))
			digests = true;
		else if (!strcmp(argv[i], "--dhchap-secret") && i + 1 < argc)
			dhchap_secret = argv[++i];
		else if (!strcmp(argv[i], "--dhchap-ctrl-secret") && i + 1 < argc)
			dhchap_ctrl_secret = argv[++i];
		else if (!strcmp(argv[i], "--reauth"))
			reauth = true;
		else if (!strcmp(argv[i], "--hostnqn") && i + 1 < argc)
			hostnqn = argv[++i];
		else if (!strcmp(argv[i], "--ctrl-loss-tmo") && i + 1 < argc)
			ctrl_loss_tmo = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tls-key-file") && i + 1 < argc)
			tls_key_file = argv[++i];
		else if (!strcmp(argv[i], "--tls-identity") && i + 1 < argc)
			tls_identity = atoi(argv[++i]);
		else if (!uri)
			uri = argv[i];
		else
			uri = NULL, i = argc;
	}
	if (!uri || nq < 1 || nq > MAX_QUEUES || qd < 1 || qd > MAX_QD) {
		fprintf(stderr, "usage: initiator_io URI [--queues 1-16] [--qd 1-256] "
				"[--dhchap-secret KEY [--dhchap-ctrl-secret KEY] [--reauth]] "
				"[--seconds S] [--loose] [--digests] [--hostnqn NQN] "
				"[--ctrl-loss-tmo S] [--tls-key-file PATH] [--tls-identity 0|1]\n");
		return 2;
	}
	nvmeof_opts_init(&opts);
	opts.io_queues = nq;
	opts.queue_depth = qd;
	opts.dhchap_secret = dhchap_secret;
	opts.dhchap_ctrl_secret = dhchap_ctrl_secret;
	opts.kato_ms = 10000;
	opts.hdgst = opts.ddgst = digests;
	opts.hostnqn = hostnqn;
	opts.tls_key_file = tls_key_file;
	opts.tls_identity = tls_identity;
	if (ctrl_loss_tmo != -2)
		opts.ctrl_loss_tmo = ctrl_loss_tmo;
	rc = nvmeof_ctrlr_connect(uri, &opts, &ctrlr);
	check(rc == 0, "connect %s with %u I/O queues of depth %u%s%s", uri, nq, qd,
	      rc ? ": " : "", rc ? nvmeof_last_error() : "");
	if (rc == 0 && reauth) {
		rc = nvmeof_ctrlr_reauthenticate(ctrlr);
		check(rc == 0, "re-authentication of the admin queue%s%s", rc ? ": " : "",
		      rc ? nvmeof_last_error() : "");
		rc = 0;
	}
	if (rc)
		return 1;
	check(nvmeof_ctrlr_num_qpairs(ctrlr) == nq, "%u queue pairs", nq);
	ns = nvmeof_ctrlr_get_ns(ctrlr, 0);
	check(ns != NULL, "namespace found");
	if (!ns)
		return 1;

	/* The controller may allow fewer commands in flight (CAP.MQES) than asked for. */
	if (nvmeof_qpair_depth(nvmeof_ctrlr_get_qpair(ctrlr, 0)) < qd) {
		printf("# queue depth %u reduced to %u by the controller\n", qd,
		       nvmeof_qpair_depth(nvmeof_ctrlr_get_qpair(ctrlr, 0)));
		qd = nvmeof_qpair_depth(nvmeof_ctrlr_get_qpair(ctrlr, 0));
	}

	/* Regions: the first half of the namespace split between the queue pairs, capped;
	 * the second half is left to the single-command checks. */
	region = nvmeof_ns_get_num_blocks(ns) / 2 / nq;
	if (region * nvmeof_ns_get_block_size(ns) > (16u << 20))
		region = (16u << 20) / nvmeof_ns_get_block_size(ns);
	region -= region % ((uint64_t)IO_MAX_BLOCKS * qd);
	check(region > 0, "namespace large enough (%" PRIu64 " blocks per queue)", region);
	if (!region)
		return 1;
	for (unsigned int q = 0; q < nq; q++) {
		struct job *j = &jobs[q];

		j->qp = nvmeof_ctrlr_get_qpair(ctrlr, q);
		j->ns = ns;
		j->bs = nvmeof_ns_get_block_size(ns);
		j->base = q * region;
		j->blocks = region;
		j->qd = qd;
		j->seed = 0x1234567ull * (q + 1);
		j->gen = calloc(region, sizeof(*j->gen));
		if (g_registered) {
			j->bufs = nvmeof_buf_alloc(ctrlr, (size_t)qd * IO_MAX_BLOCKS * j->bs);
			check(j->bufs != NULL, "queue %u: registered buffers%s%s", q,
			      j->bufs ? "" : ": ", j->bufs ? "" : nvmeof_last_error());
			if (!j->bufs)
				return 1;
		}
		for (unsigned int i = 0; i < qd; i++) {
			j->slots[i].job = j;
			j->slots[i].buf =
				g_registered ? j->bufs + (size_t)i * IO_MAX_BLOCKS * j->bs
					     : aligned_alloc(4096, (size_t)IO_MAX_BLOCKS * j->bs);
		}
	}

	static const char *const names[] = { "fill", "random writes", "read back and verify" };
	for (int phase = 0; phase < 3; phase++) {
		uint64_t err = 0, mism = 0;
		double t0 = now_s();

		rc = run_event_loop(ctrlr, jobs, nq, phase, phase != 1);
		for (unsigned int q = 0; q < nq; q++) {
			err += jobs[q].errors;
			mism += jobs[q].mismatches;
			if (jobs[q].first_error[0])
				printf("# queue %u: %s\n", q, jobs[q].first_error);
		}
		check(rc == 0 && err == 0 && mism == 0,
		      "event loop, %u queues x QD %u: %s (%.2f s, %" PRIu64 " errors, %" PRIu64
		      " mismatches)",
		      nq, qd, names[phase], now_s() - t0, err, mism);
	}
	if (seconds > 0) {
		bench(jobs, nq, 3, seconds, "random 4 KiB reads (checked)");
		bench(jobs, nq, 4, seconds, "random 4 KiB writes");
		/* the writes rewrote known content: one more full verification */
		rc = run_event_loop(ctrlr, jobs, nq, 2, true);
		uint64_t mism = 0, err = 0;
		for (unsigned int q = 0; q < nq; q++) {
			mism += jobs[q].mismatches;
			err += jobs[q].errors;
		}
		check(rc == 0 && mism == 0 && err == 0, "verify after the write benchmark");
	}

	sg_checks(ctrlr, nvmeof_ctrlr_get_qpair(ctrlr, 0), ns,
		  nvmeof_ns_get_num_blocks(ns) / 2 + 64);
	if (g_registered) {
		struct nvmeof_ctrlr_info ci;

		nvmeof_ctrlr_get_info(ctrlr, &ci);
		for (unsigned int q = 0; q < nq; q++) {
			uint64_t cmds, descs;

			direct_stats(jobs[q].qp, &cmds, &descs);
			printf("# queue %u: %" PRIu64 " commands placed directly\n", q, cmds);
			if (!strcmp(ci.transport, "rdma"))
				check(cmds > 0, "queue %u: registered I/O placed directly", q);
		}
		direct_checks(ctrlr, nvmeof_ctrlr_get_qpair(ctrlr, 0), ns,
			      nvmeof_ns_get_num_blocks(ns) / 2 + 64 +
				      (10u << 20) / nvmeof_ns_get_block_size(ns));
	}

	for (unsigned int q = 0; q < nq; q++) {
		if (g_registered)
			nvmeof_buf_free(ctrlr, jobs[q].bufs);
		else
			for (unsigned int i = 0; i < qd; i++)
				free(jobs[q].slots[i].buf);
		free(jobs[q].gen);
	}
	nvmeof_ctrlr_disconnect(ctrlr);
	printf("# %d passed, %d failed\n", g_pass, g_fail);
	return g_fail ? 1 : 0;
}
