/* SPDX-License-Identifier: MIT */
/*
 * libnvmeof's SCSI path against a real iSCSI target, through the public API only:
 *
 *   iscsi_init_rw URI [--sessions N] [--qd N] [--mib N] [--hdgst] [--ddgst]
 *                     [--bench SECONDS] [--bench-only] [--ctrl-loss-tmo SECONDS]
 *
 * Check mode (default): N sessions (I/O queue pairs) at queue depth QD write a region
 * with a per-block pattern in chunks of varying size, read it back in differently sized
 * chunks and verify every byte; then a transfer larger than MDTS/MaxBurstLength with
 * unaligned iovecs, Write Zeroes, Compare and Deallocate when the LU supports them,
 * Flush, and a read past the end (must fail with LBA Out of Range).
 * Bench mode: 4 KiB random reads at QD per session for SECONDS, IOPS printed as
 * "randread-4k iops=N mib_s=N".
 * Exit status: 0 success, 1 a check failed, 2 usage, 3 connection failure.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/nvmeof.h"

#define MAX_SESSIONS 16
#define MAX_QD 256
#define MAX_CHUNK_BLOCKS 128

struct slot {
	struct session *s;
	bool busy;
	uint64_t lba;
	uint32_t nblocks;
	uint8_t *buf;
};

struct session {
	struct job *job;
	struct nvmeof_qpair *qp;
	struct slot slots[MAX_QD];
	unsigned int inflight;
};

enum job_kind { JOB_WRITE, JOB_READ_VERIFY, JOB_BENCH };

struct job {
	enum job_kind kind;
	struct nvmeof_ns *ns;
	uint32_t bs;
	uint64_t base, end, next;	/* region and the next LBA to hand out */
	uint32_t chunk_seed;
	uint64_t done_ios, done_bytes;
	unsigned int errors;
	uint64_t rng;
	uint64_t deadline_ns;
	bool stop;
};

static int g_verbose;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* The expected content of block @lba: 8-byte words derived from the LBA and offset. */
static void fill_block(uint8_t *p, uint64_t lba, uint32_t bs)
{
	for (uint32_t o = 0; o < bs; o += 8) {
		uint64_t v = (lba * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)o << 40) ^ 0x5a5a;

		memcpy(p + o, &v, 8);
	}
}

static bool check_block(const uint8_t *p, uint64_t lba, uint32_t bs)
{
	uint8_t want[65536];

	fill_block(want, lba, bs);
	return memcmp(p, want, bs) == 0;
}

static const char *cpl_str(const struct nvmeof_cpl *cpl, char *buf, size_t len)
{
	if (cpl->err)
		snprintf(buf, len, "%s", nvmeof_strerror(cpl->err));
	else
		nvmeof_status_str(cpl->status, buf, len);
	return buf;
}

/* Chunk sizes vary between 1 and MAX_CHUNK_BLOCKS blocks, differently per pass. */
static uint32_t next_chunk(struct job *j)
{
	uint64_t left = j->end - j->next;
	uint32_t n = (uint32_t)(xorshift(&j->rng) % MAX_CHUNK_BLOCKS) + 1;

	return left < n ? (uint32_t)left : n;
}

static void io_done(void *arg, const struct nvmeof_cpl *cpl);

static int submit_one(struct session *s, struct slot *sl)
{
	struct job *j = s->job;
	struct iovec iov;
	int rc;

	if (j->kind == JOB_BENCH) {
		uint64_t blocks = nvmeof_ns_get_num_blocks(j->ns);

		sl->nblocks = 4096 / j->bs ? 4096 / j->bs : 1;
		sl->lba = (xorshift(&j->rng) % (blocks / sl->nblocks)) * sl->nblocks;
	} else {
		if (j->next >= j->end)
			return 1;
		sl->lba = j->next;
		sl->nblocks = next_chunk(j);
		j->next += sl->nblocks;
	}
	iov.iov_base = sl->buf;
	iov.iov_len = (size_t)sl->nblocks * j->bs;
	if (j->kind == JOB_WRITE) {
		for (uint32_t b = 0; b < sl->nblocks; b++)
			fill_block(sl->buf + (size_t)b * j->bs, sl->lba + b, j->bs);
		rc = nvmeof_write(s->qp, j->ns, sl->lba, sl->nblocks, &iov, 1, 0, io_done, sl);
	} else {
		memset(sl->buf, 0xee, iov.iov_len);
		rc = nvmeof_read(s->qp, j->ns, sl->lba, sl->nblocks, &iov, 1, 0, io_done, sl);
	}
	if (rc) {
		fprintf(stderr, "submit failed: %s (%s)\n", nvmeof_strerror(rc),
			nvmeof_qpair_error(s->qp));
		j->errors++;
		j->stop = true;
		return rc;
	}
	sl->busy = true;
	s->inflight++;
	return 0;
}

static void io_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct slot *sl = arg;
	struct session *s = sl->s;
	struct job *j = s->job;
	char msg[96];

	sl->busy = false;
	s->inflight--;
	if (!nvmeof_cpl_ok(cpl)) {
		fprintf(stderr, "%s of %u blocks at LBA %" PRIu64 " failed: %s\n",
			j->kind == JOB_WRITE ? "write" : "read", sl->nblocks, sl->lba,
			cpl_str(cpl, msg, sizeof(msg)));
		j->errors++;
		j->stop = true;
		return;
	}
	if (j->kind == JOB_READ_VERIFY) {
		for (uint32_t b = 0; b < sl->nblocks; b++) {
			if (!check_block(sl->buf + (size_t)b * j->bs, sl->lba + b, j->bs)) {
				fprintf(stderr, "data mismatch in block %" PRIu64 "\n",
					sl->lba + b);
				j->errors++;
				j->stop = true;
				return;
			}
		}
	}
	j->done_ios++;
	j->done_bytes += (uint64_t)sl->nblocks * j->bs;
	if (j->kind == JOB_BENCH && now_ns() >= j->deadline_ns)
		j->stop = true;
	if (!j->stop)
		submit_one(s, sl);
}

/* Keep every session's QD slots busy until the job ends; poll all sessions at once. */
static int run_job(struct nvmeof_ctrlr *ctrlr, struct session *ss, unsigned int nsess,
		   unsigned int qd)
{
	struct pollfd pfd[MAX_SESSIONS + 1];

	for (unsigned int i = 0; i < nsess; i++)
		for (unsigned int k = 0; k < qd; k++)
			if (submit_one(&ss[i], &ss[i].slots[k]))
				break;
	for (;;) {
		unsigned int busy = 0;
		int n;

		for (unsigned int i = 0; i < nsess; i++) {
			busy += ss[i].inflight;
			pfd[i].fd = nvmeof_qpair_get_fd(ss[i].qp);
			pfd[i].events = nvmeof_qpair_which_events(ss[i].qp);
			pfd[i].revents = 0;
		}
		if (!busy)
			break;
		pfd[nsess].fd = nvmeof_ctrlr_get_fd(ctrlr);
		pfd[nsess].events = nvmeof_ctrlr_which_events(ctrlr);
		pfd[nsess].revents = 0;
		n = poll(pfd, nsess + 1, 1000);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (unsigned int i = 0; i < nsess; i++) {
			int rc = nvmeof_qpair_service(ss[i].qp, pfd[i].revents);

			if (rc < 0) {
				fprintf(stderr, "session %u failed: %s\n", i,
					nvmeof_qpair_error(ss[i].qp));
				return rc;
			}
		}
		nvmeof_ctrlr_service(ctrlr, pfd[nsess].revents);
	}
	return 0;
}

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                             \
			fputc('\n', stderr);                                               \
			return 1;                                                          \
		}                                                                          \
	} while (0)

/* A transfer beyond MDTS and MaxBurstLength through the blocking calls. */
static int check_large(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba, uint32_t bs)
{
	uint32_t nblocks = (3u << 20) / bs, len = nblocks * bs;
	uint8_t *w = malloc(len), *r = calloc(1, len);
	int rc = 1;

	if (!w || !r)
		goto out;
	for (uint32_t b = 0; b < nblocks; b++)
		fill_block(w + (size_t)b * bs, lba + b, bs);
	rc = nvmeof_write_sync(qp, ns, lba, nblocks, w, 0);
	if (rc) {
		fprintf(stderr, "FAIL: 3 MiB write: %d\n", rc);
		goto out;
	}
	rc = nvmeof_read_sync(qp, ns, lba, nblocks, r, 0);
	if (rc || memcmp(w, r, len)) {
		fprintf(stderr, "FAIL: 3 MiB read back: %d\n", rc);
		rc = 1;
	}
out:
	free(w);
	free(r);
	return rc;
}

struct wait {
	bool done;
	struct nvmeof_cpl cpl;
};

static void wait_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct wait *w = arg;

	w->cpl = *cpl;
	w->done = true;
}

static int wait_for(struct nvmeof_qpair *qp, struct wait *w)
{
	while (!w->done) {
		struct pollfd pfd = { .fd = nvmeof_qpair_get_fd(qp),
				      .events = nvmeof_qpair_which_events(qp) };

		if (nvmeof_qpair_service(qp, POLLIN | POLLOUT) < 0 && !w->done)
			return -1;
		if (!w->done)
			poll(&pfd, 1, 100);
	}
	return 0;
}

/* The same through awkward iovec boundaries on both sides (asynchronous calls). */
static int check_scattered(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			   uint32_t bs)
{
	uint32_t nblocks = (3u << 20) / bs, len = nblocks * bs;
	uint8_t *w = malloc(len), *r = calloc(1, len);
	struct iovec wv[3], rv[4];
	struct wait ww = { 0 }, rw = { 0 };
	char msg[96];
	int rc = 1;

	if (!w || !r)
		goto out;
	for (uint32_t b = 0; b < nblocks; b++)
		fill_block(w + (size_t)b * bs, lba + b, bs);
	wv[0] = (struct iovec){ w, 1000 };
	wv[1] = (struct iovec){ w + 1000, len / 2 - 1000 + 7 };
	wv[2] = (struct iovec){ w + len / 2 + 7, len - len / 2 - 7 };
	rv[0] = (struct iovec){ r, 4099 };
	rv[1] = (struct iovec){ r + 4099, 1 };
	rv[2] = (struct iovec){ r + 4100, len - 4100 - 777 };
	rv[3] = (struct iovec){ r + len - 777, 777 };
	if (nvmeof_write(qp, ns, lba, nblocks, wv, 3, 0, wait_cb, &ww) || wait_for(qp, &ww) ||
	    !nvmeof_cpl_ok(&ww.cpl)) {
		fprintf(stderr, "FAIL: scattered 3 MiB write: %s\n", cpl_str(&ww.cpl, msg, 96));
		goto out;
	}
	if (nvmeof_read(qp, ns, lba, nblocks, rv, 4, 0, wait_cb, &rw) || wait_for(qp, &rw) ||
	    !nvmeof_cpl_ok(&rw.cpl)) {
		fprintf(stderr, "FAIL: scattered 3 MiB read: %s\n", cpl_str(&rw.cpl, msg, 96));
		goto out;
	}
	if (memcmp(w, r, len)) {
		fprintf(stderr, "FAIL: scattered 3 MiB read back differs\n");
		goto out;
	}
	rc = 0;
out:
	free(w);
	free(r);
	return rc;
}

static int check_commands(struct nvmeof_ctrlr *ctrlr, struct nvmeof_qpair *qp,
			  struct nvmeof_ns *ns, uint64_t lba)
{
	struct nvmeof_ctrlr_info ci;
	uint32_t bs = nvmeof_ns_get_block_size(ns);
	uint64_t nsze = nvmeof_ns_get_num_blocks(ns);
	uint8_t *buf = malloc(64 * 65536), *zero = calloc(1, 64 * 65536);
	int rc;

	CHECK(buf && zero, "out of memory");
	nvmeof_ctrlr_get_info(ctrlr, &ci);

	CHECK(check_large(qp, ns, lba, bs) == 0, "large transfer");
	CHECK(check_scattered(qp, ns, lba + (4u << 20) / bs, bs) == 0, "scattered transfer");
	printf("large and scattered transfers: ok\n");

	/* Write Zeroes (WRITE SAME): the blocks must read back as zeroes. */
	for (uint32_t b = 0; b < 64; b++)
		fill_block(buf + (size_t)b * bs, lba + b, bs);
	CHECK(nvmeof_write_sync(qp, ns, lba, 64, buf, 0) == 0, "write before Write Zeroes");
	rc = nvmeof_write_zeroes_sync(qp, ns, lba + 8, 48, 0);
	if (rc == NVMEOF_STATUS(NVMEOF_SCT_GENERIC, 0x01)) {
		printf("write zeroes: not supported by the LU\n");
	} else {
		CHECK(rc == 0, "Write Zeroes: %d", rc);
		CHECK(nvmeof_read_sync(qp, ns, lba, 64, buf, 0) == 0, "read after Write Zeroes");
		CHECK(check_block(buf, lba, bs) && check_block(buf + 7 * bs, lba + 7, bs) &&
			      check_block(buf + 56 * bs, lba + 56, bs),
		      "Write Zeroes touched blocks outside its range");
		CHECK(memcmp(buf + 8 * bs, zero, 48 * bs) == 0, "Write Zeroes left data behind");
		printf("write zeroes: ok\n");
	}

	/* Compare (COMPARE AND WRITE): equal data passes, different data fails. */
	for (uint32_t b = 0; b < 8; b++)
		fill_block(buf + (size_t)b * bs, lba + 100 + b, bs);
	CHECK(nvmeof_write_sync(qp, ns, lba + 100, 8, buf, 0) == 0, "write before Compare");
	rc = nvmeof_compare_sync(qp, ns, lba + 100, 8, buf, 0);
	if (!(ci.oncs & 1)) {
		printf("compare: not supported by the LU (status 0x%x)\n", rc);
	} else {
		CHECK(rc == 0, "Compare of equal data: %d", rc);
		buf[3 * bs + 17] ^= 0xff;
		rc = nvmeof_compare_sync(qp, ns, lba + 100, 8, buf, 0);
		CHECK(rc == NVMEOF_STATUS(NVMEOF_SCT_MEDIA, NVMEOF_SC_COMPARE_FAILURE),
		      "Compare of different data: status 0x%x", rc);
		CHECK(nvmeof_read_sync(qp, ns, lba + 100, 8, buf, 0) == 0 &&
			      check_block(buf + 3 * bs, lba + 103, bs),
		      "Compare changed the data");
		printf("compare: ok\n");
	}

	/* Deallocate (UNMAP) when the LU has it. */
	if (ci.oncs & 4) {
		struct nvmeof_ns_info ni;

		for (uint32_t b = 0; b < 16; b++)
			fill_block(buf + (size_t)b * bs, lba + 200 + b, bs);
		CHECK(nvmeof_write_sync(qp, ns, lba + 200, 16, buf, 0) == 0, "write before UNMAP");
		rc = nvmeof_deallocate_sync(qp, ns, lba + 200, 16);
		CHECK(rc == 0, "Deallocate: %d", rc);
		nvmeof_ns_get_info(ns, &ni);
		if (ni.dlfeat & 1) { /* deallocated blocks read as zeroes */
			CHECK(nvmeof_read_sync(qp, ns, lba + 200, 16, buf, 0) == 0, "read");
			CHECK(memcmp(buf, zero, 16 * bs) == 0, "deallocated blocks not zero");
		}
		printf("deallocate: ok%s\n", ni.dlfeat & 1 ? " (reads back zeroes)" : "");
	} else {
		printf("deallocate: not supported by the LU\n");
	}

	CHECK(nvmeof_flush_sync(qp, ns) == 0, "Flush");
	printf("flush: ok\n");

	/* Past the end: CHECK CONDITION / LBA OUT OF RANGE must come back as NVMe status. */
	rc = nvmeof_read_sync(qp, ns, nsze - 1, 2, buf, 0);
	CHECK(rc == NVMEOF_STATUS(NVMEOF_SCT_GENERIC, NVMEOF_SC_LBA_OUT_OF_RANGE),
	      "read past the end: expected LBA Out of Range, got 0x%x", rc);
	printf("read past the end: LBA Out of Range: ok\n");
	free(buf);
	free(zero);
	return 0;
}

static void log_fn(enum nvmeof_log_level level, const char *msg, void *arg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "libnvmeof: %s\n", msg);
}

static void usage(void)
{
	fprintf(stderr, "usage: iscsi_init_rw URI [--sessions N] [--qd N] [--mib N] [--hdgst] "
			"[--ddgst] [--bench SECONDS] [--bench-only] [--ctrl-loss-tmo SECONDS] "
			"[-v]\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "sessions", required_argument, NULL, 's' },
		{ "qd", required_argument, NULL, 'q' },
		{ "mib", required_argument, NULL, 'm' },
		{ "hdgst", no_argument, NULL, 'H' },
		{ "ddgst", no_argument, NULL, 'D' },
		{ "bench", required_argument, NULL, 'b' },
		{ "bench-only", no_argument, NULL, 'B' },
		{ "ctrl-loss-tmo", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int nsess = 2, qd = 32, mib = 16, bench = 0;
	bool bench_only = false;
	struct nvmeof_opts opts;
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ctrlr_info ci;
	struct session *ss;
	struct nvmeof_ns *ns;
	struct job job;
	uint64_t t0;
	int c, rc;

	nvmeof_opts_init(&opts);
	while ((c = getopt_long(argc, argv, "v", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			nsess = (unsigned int)atoi(optarg);
			break;
		case 'q':
			qd = (unsigned int)atoi(optarg);
			break;
		case 'm':
			mib = (unsigned int)atoi(optarg);
			break;
		case 'H':
			opts.hdgst = true;
			break;
		case 'D':
			opts.ddgst = true;
			break;
		case 'b':
			bench = (unsigned int)atoi(optarg);
			break;
		case 'B':
			bench_only = true;
			break;
		case 'L': /* 0: no reconnect, I/O fails when the session is lost */
			opts.ctrl_loss_tmo = atoi(optarg);
			break;
		case 'v':
			g_verbose++;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind + 1 != argc || nsess < 1 || nsess > MAX_SESSIONS || qd < 1 || qd > MAX_QD ||
	    mib < 1) {
		usage();
		return 2;
	}
	if (g_verbose)
		nvmeof_set_log_fn(log_fn, NULL,
				  g_verbose > 1 ? NVMEOF_LOG_DEBUG : NVMEOF_LOG_INFO);
	opts.io_queues = nsess;
	opts.queue_depth = qd;
	rc = nvmeof_ctrlr_connect(argv[optind], &opts, &ctrlr);
	if (rc) {
		fprintf(stderr, "connect %s: %s\n", argv[optind], nvmeof_last_error());
		return 3;
	}
	nvmeof_ctrlr_get_info(ctrlr, &ci);
	ns = nvmeof_ctrlr_get_ns(ctrlr, 0);
	if (!ns || nvmeof_ctrlr_num_qpairs(ctrlr) != nsess) {
		fprintf(stderr, "no namespace or queue pairs: %s\n", nvmeof_last_error());
		nvmeof_ctrlr_disconnect(ctrlr);
		return 3;
	}
	printf("connected: %s transport %s, model '%s' serial '%s', %" PRIu64 " x %u bytes, "
	       "%u sessions at QD %u, digests %s/%s\n", ci.uri, ci.transport, ci.mn, ci.sn,
	       nvmeof_ns_get_num_blocks(ns), nvmeof_ns_get_block_size(ns), nsess, qd,
	       ci.hdgst ? "on" : "off", ci.ddgst ? "on" : "off");

	memset(&job, 0, sizeof(job));
	job.ns = ns;
	job.bs = nvmeof_ns_get_block_size(ns);
	ss = calloc(nsess, sizeof(*ss));
	if (!ss)
		return 3;
	for (unsigned int i = 0; i < nsess; i++) {
		ss[i].job = &job;
		ss[i].qp = nvmeof_ctrlr_get_qpair(ctrlr, i);
		for (unsigned int k = 0; k < qd; k++) {
			ss[i].slots[k].s = &ss[i];
			ss[i].slots[k].buf = aligned_alloc(4096, (size_t)MAX_CHUNK_BLOCKS * 65536);
			if (!ss[i].slots[k].buf)
				return 3;
		}
	}

	rc = 0;
	if (!bench_only) {
		uint64_t region = ((uint64_t)mib << 20) / job.bs;

		if (region + ((16u << 20) / job.bs) > nvmeof_ns_get_num_blocks(ns)) {
			fprintf(stderr, "namespace too small for a %u MiB region\n", mib);
			rc = 2;
			goto out;
		}
		job.kind = JOB_WRITE;
		job.base = job.next = 0;
		job.end = region;
		job.rng = 0x1234567;
		t0 = now_ns();
		if (run_job(ctrlr, ss, nsess, qd) || job.errors) {
			fprintf(stderr, "FAIL: pattern write\n");
			rc = 1;
			goto out;
		}
		printf("write %u MiB in %" PRIu64 " commands: ok (%.1f MiB/s)\n", mib, job.done_ios,
		       (double)job.done_bytes / 1048576.0 / ((double)(now_ns() - t0) / 1e9));
		job.kind = JOB_READ_VERIFY;
		job.next = 0;
		job.rng = 0x7654321;
		job.done_ios = job.done_bytes = 0;
		t0 = now_ns();
		if (run_job(ctrlr, ss, nsess, qd) || job.errors) {
			fprintf(stderr, "FAIL: read back and verify\n");
			rc = 1;
			goto out;
		}
		printf("read back and verify %u MiB in %" PRIu64 " commands: ok (%.1f MiB/s)\n",
		       mib, job.done_ios,
		       (double)job.done_bytes / 1048576.0 / ((double)(now_ns() - t0) / 1e9));
		if (check_commands(ctrlr, ss[nsess - 1].qp, ns, region)) {
			rc = 1;
			goto out;
		}
	}
	if (bench) {
		job.kind = JOB_BENCH;
		job.rng = 0xabcdef;
		job.done_ios = job.done_bytes = 0;
		job.stop = false;
		t0 = now_ns();
		job.deadline_ns = t0 + (uint64_t)bench * 1000000000ull;
		if (run_job(ctrlr, ss, nsess, qd) || job.errors) {
			fprintf(stderr, "FAIL: benchmark\n");
			rc = 1;
			goto out;
		}
		{
			double secs = (double)(now_ns() - t0) / 1e9;

			printf("randread-4k sessions=%u qd=%u iops=%.0f mib_s=%.1f\n", nsess, qd,
			       (double)job.done_ios / secs,
			       (double)job.done_bytes / 1048576.0 / secs);
		}
	}
out:
	nvmeof_ctrlr_disconnect(ctrlr);
	for (unsigned int i = 0; i < nsess; i++)
		for (unsigned int k = 0; k < qd; k++)
			free(ss[i].slots[k].buf);
	free(ss);
	if (rc == 0)
		printf("PASS\n");
	return rc;
}
