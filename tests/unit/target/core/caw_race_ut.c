/* SPDX-License-Identifier: MIT */
/*
 * Compare and Write against plain writes, with the real core, the real backends (ram and
 * file/io_uring) and two real reactors: queue pairs of local controllers on both reactors
 * race fused Compare+Write with Writes to the same few blocks, and the history they see
 * must be one a serial execution could produce.
 *
 * Block b holds a 16-byte pattern repeated over the whole block: (epoch, count, b, ~b).
 *  - One writer per block writes (e, 0) with e = 1, 2, 3, ... one Write after the other,
 *    and publishes floor[b] = e once the Write completed.
 *  - Compare-and-write workers loop: load floor[b], Read b, Compare (e, c) and Write
 *    (e, c + 1) as a fused pair; record each success.
 * With atomic Compare and Write the epoch of a block never goes back, so:
 *  (1) a Read submitted after floor[b] = e was loaded sees an epoch >= e (a pair whose
 *      compare passed against data a Write had already replaced writes an old epoch back);
 *  (2) no (b, e, c) is the compare value of two successful pairs (two pairs interleaved);
 *  (3) at the end every block is one whole pattern (a Read racing a Write may see part
 *      of each and is only retried), with an epoch >= that of its last Write.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/endian.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "ut.h"

#define NQN   "nqn.2026-11.io.nvmeof:caw-race"
#define NBLK  4 /* contended blocks */
#define NCAW  4 /* compare-and-write workers (2 per reactor) */
#define BS    512
#define RACES 100000 /* compare-and-write pairs per backend, at least */

struct pat {
	uint64_t epoch;
	uint32_t count;
	uint16_t blk, nblk;
};

struct worker;

struct wreq {
	struct nvmf_req req;
	struct worker *w;
};

struct worker {
	struct nvmf_qpair qp;
	struct reactor *r;
	struct reactor_work work;
	bool caw; /* a compare-and-write worker, else the writer of block blk */
	unsigned int blk;
	unsigned int step;    /* caw: 0 read, 1 pair; writer: 0 write */
	unsigned int pending; /* completions awaited */
	struct wreq rq[2];
	uint8_t buf[3][BS]; /* read data / compare data / write data */
	struct pat seen;
	uint64_t floor;
	uint64_t epoch;      /* writer: last epoch written */
	uint64_t last_pairs; /* writer: g_pairs when it last wrote */
	bool parked;         /* writer: waiting for the pairs to catch up */
	uint64_t rng;
	/* results */
	uint64_t pairs, ok, miscompare, errors, torn, stale, read_torn;
	struct pat *succ; /* successes: compare values */
	size_t nsucc, cap;
};

static struct nvmf_tgt *g_tgt;
static struct nvmf_subsys *g_sub;
static uint32_t g_nsid;
static uint64_t g_floor[NBLK]; /* atomic: epoch of the last completed Write */
static unsigned int g_running; /* atomic: workers not yet finished */
static unsigned int g_stop;    /* atomic: compare-and-write workers reached RACES */
static uint64_t g_pairs;       /* atomic */
static struct worker *g_ws;    /* all workers: caw ones first, then the writers */
static unsigned int g_gone;    /* atomic: queue pairs released */

static void fill(uint8_t *b, const struct pat *p)
{
	for (size_t off = 0; off < BS; off += sizeof(*p))
		memcpy(b + off, p, sizeof(*p));
}

/* One whole pattern of block @blk? */
static bool parse(const uint8_t *b, unsigned int blk, struct pat *out)
{
	memcpy(out, b, sizeof(*out));
	for (size_t off = sizeof(*out); off < BS; off += sizeof(*out))
		if (memcmp(b + off, out, sizeof(*out)))
			return false;
	/* a never-written block reads as zeroes: epoch 0, count 0 */
	if (out->epoch == 0 && out->count == 0 && out->blk == 0 && out->nblk == 0) {
		out->blk = (uint16_t)blk;
		out->nblk = (uint16_t)~blk;
		return true;
	}
	return out->blk == blk && out->nblk == (uint16_t)~blk;
}

static void set_rw(struct wreq *q, uint8_t opc, uint8_t fuse, unsigned int blk, void *buf,
		   enum nvme_data_xfer xfer)
{
	struct nvme_cmd *c = &q->req.cmd;

	memset(c, 0, sizeof(*c));
	c->opc = opc;
	c->flags = fuse;
	put_le16(&c->cid, (uint16_t)(q - q->w->rq));
	put_le32(&c->nsid, g_nsid);
	put_le32(&c->cdw10, blk);
	put_le32(&c->cdw11, 0);
	put_le32(&c->cdw12, 0); /* one block */
	q->req.xfer = xfer;
	q->req.length = BS;
	q->req.iov[0].iov_base = buf;
	q->req.iov[0].iov_len = BS;
	q->req.iovcnt = 1;
}

static void next(void *arg);

static void finish(struct worker *w)
{
	(void)w;
	__atomic_sub_fetch(&g_running, 1, __ATOMIC_SEQ_CST);
}

static void record(struct worker *w, const struct pat *p)
{
	if (w->nsucc == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 4096;
		w->succ = realloc(w->succ, w->cap * sizeof(*w->succ));
		if (!w->succ)
			abort();
	}
	w->succ[w->nsucc++] = *p;
}

/* Writers parked on @w's reactor whose turn has come write again (or finish). */
static void kick_writers(struct worker *w)
{
	uint64_t pairs = __atomic_load_n(&g_pairs, __ATOMIC_SEQ_CST);
	bool stop = __atomic_load_n(&g_stop, __ATOMIC_SEQ_CST);

	for (unsigned int i = NCAW; i < NCAW + NBLK; i++) {
		struct worker *wr = &g_ws[i];

		if (wr->r != w->r || !wr->parked || (!stop && pairs < wr->last_pairs + NBLK))
			continue;
		wr->parked = false;
		if (stop)
			finish(wr);
		else
			reactor_defer(wr->r, &wr->work);
	}
}

/* Both requests (or the one) of the current step are done: look at the results. */
static void step_done(struct worker *w)
{
	uint16_t st0 = get_le16(&w->rq[0].req.rsp.status) & 0xfffe;
	uint16_t st1 = get_le16(&w->rq[1].req.rsp.status) & 0xfffe;

	if (!w->caw) {
		if (st0)
			w->errors++;
		else
			__atomic_store_n(&g_floor[w->blk], w->epoch, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&g_stop, __ATOMIC_SEQ_CST)) {
			finish(w);
			return;
		}
		/* About one Write per block per NBLK pairs: half the pairs see one. */
		w->last_pairs = __atomic_load_n(&g_pairs, __ATOMIC_SEQ_CST);
		w->parked = true;
		return;
	}
	if (w->step == 0) { /* the Read */
		if (st0) {
			w->errors++;
		} else if (!parse(w->buf[0], w->blk, &w->seen)) {
			/* A Read is not ordered against a Write of the same block: it may see
			 * part of each; only what a pair compared against counts. */
			w->read_torn++;
		} else if (w->seen.epoch < w->floor) {
			w->stale++;
		} else {
			w->step = 1;
		}
		reactor_defer(w->r, &w->work);
		return;
	}
	/* the pair */
	w->pairs++;
	if (!st0 && !st1) {
		w->ok++;
		record(w, &w->seen);
	} else if (NVME_STATUS_SCT(st0) == NVME_SCT_MEDIA &&
		   NVME_STATUS_SC(st0) == NVME_SC_COMPARE_FAILURE) {
		w->miscompare++;
	} else {
		w->errors++;
	}
	w->step = 0;
	if (__atomic_add_fetch(&g_pairs, 1, __ATOMIC_SEQ_CST) >= RACES)
		__atomic_store_n(&g_stop, 1, __ATOMIC_SEQ_CST);
	kick_writers(w);
	if (__atomic_load_n(&g_stop, __ATOMIC_SEQ_CST)) {
		finish(w);
		return;
	}
	reactor_defer(w->r, &w->work);
}

static void req_complete(struct nvmf_req *req)
{
	struct wreq *q = container_of(req, struct wreq, req);
	struct worker *w = q->w;

	if (--w->pending == 0)
		step_done(w);
}

static void qp_disconnect(struct nvmf_qpair *qp)
{
	(void)qp;
}

static const struct nvmf_transport_ops ops = {
	.name = "caw-race",
	.req_complete = req_complete,
	.qpair_disconnect = qp_disconnect,
};

/* The worker's next command(s), from its reactor's loop (a backend may complete inline). */
static void next(void *arg)
{
	struct worker *w = arg;

	if (!w->caw) {
		struct pat p = { .epoch = ++w->epoch,
				 .blk = (uint16_t)w->blk,
				 .nblk = (uint16_t)~w->blk };

		fill(w->buf[2], &p);
		set_rw(&w->rq[0], NVME_OPC_WRITE, 0, w->blk, w->buf[2], NVME_XFER_HOST_TO_CTRLR);
		w->pending = 1;
		nvmf_req_exec(&w->rq[0].req);
		return;
	}
	if (w->step == 0) {
		w->rng = w->rng * 6364136223846793005ull + 1442695040888963407ull;
		w->blk = (unsigned int)(w->rng >> 33) % NBLK;
		w->floor = __atomic_load_n(&g_floor[w->blk], __ATOMIC_SEQ_CST);
		set_rw(&w->rq[0], NVME_OPC_READ, 0, w->blk, w->buf[0], NVME_XFER_CTRLR_TO_HOST);
		w->pending = 1;
		nvmf_req_exec(&w->rq[0].req);
		return;
	}
	{
		struct pat nw = w->seen;

		nw.count++;
		memcpy(w->buf[1], w->buf[0], BS);
		fill(w->buf[2], &nw);
	}
	set_rw(&w->rq[0], NVME_OPC_COMPARE, NVME_CMD_FUSE_FIRST, w->blk, w->buf[1],
	       NVME_XFER_HOST_TO_CTRLR);
	set_rw(&w->rq[1], NVME_OPC_WRITE, NVME_CMD_FUSE_SECOND, w->blk, w->buf[2],
	       NVME_XFER_HOST_TO_CTRLR);
	w->pending = 2;
	nvmf_req_exec(&w->rq[0].req);
	nvmf_req_exec(&w->rq[1].req);
}

static void start_msg(void *arg)
{
	next(arg);
}

static void release_msg(void *arg)
{
	struct worker *w = arg;

	nvmf_qpair_disconnected(&w->qp);
	nvmf_qpair_fini(&w->qp);
	__atomic_add_fetch(&g_gone, 1, __ATOMIC_SEQ_CST);
}

static void wait_for(unsigned int *v, unsigned int want)
{
	struct timespec ts = { 0, 1000 * 1000 };

	for (unsigned int i = 0; i < 600000 && __atomic_load_n(v, __ATOMIC_SEQ_CST) != want; i++)
		nanosleep(&ts, NULL);
}

static void final_read_done(struct bdev_io *bio, int rc)
{
	*(int *)bio->cb_arg = rc;
}

static int cmp_pat(const void *a, const void *b)
{
	const struct pat *x = a, *y = b;

	if (x->blk != y->blk)
		return x->blk < y->blk ? -1 : 1;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return x->count < y->count ? -1 : x->count > y->count;
}

static void race(const char *path)
{
	struct nvmf_ns_opts no = { .path = path, .block_size = BS, .enabled = true };
	struct worker *ws = calloc(NCAW + NBLK, sizeof(*ws));
	unsigned int n = NCAW + NBLK;
	uint64_t pairs = 0, ok = 0, mis = 0, errors = 0, torn = 0, stale = 0, dup = 0, rt = 0;
	size_t nsucc = 0, k = 0;
	struct pat *all;
	char err[256];
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ws);
	g_ws = ws;
	rc = nvmf_subsys_add_ns(g_sub, &no, err, sizeof(err));
	CU_ASSERT_FATAL(rc > 0);
	g_nsid = (uint32_t)rc;
	memset(g_floor, 0, sizeof(g_floor));
	g_stop = 0;
	g_pairs = 0;
	g_gone = 0;
	g_running = n;
	for (unsigned int i = 0; i < n; i++) {
		struct worker *w = &ws[i];

		w->caw = i < NCAW;
		w->blk = w->caw ? 0 : i - NCAW;
		w->r = reactor_get(i % 2);
		w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
		w->rq[0].w = w->rq[1].w = w;
		w->rq[0].req.qpair = w->rq[1].req.qpair = &w->qp;
		w->work.fn = next;
		w->work.arg = w;
		nvmf_qpair_init(&w->qp, &ops, g_tgt, NULL, w->r);
		CU_ASSERT_EQUAL_FATAL(
			nvmf_local_connect(&w->qp, g_sub, "nqn.2026-11.io.nvmeof:h", NULL), 0);
	}
	for (unsigned int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(reactor_send_msg(ws[i].r, start_msg, &ws[i]), 0);
	wait_for(&g_running, 0);
	CU_ASSERT_EQUAL_FATAL(__atomic_load_n(&g_running, __ATOMIC_SEQ_CST), 0);
	for (unsigned int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(reactor_send_msg(ws[i].r, release_msg, &ws[i]), 0);
	wait_for(&g_gone, n);

	for (unsigned int i = 0; i < n; i++) {
		pairs += ws[i].pairs;
		ok += ws[i].ok;
		mis += ws[i].miscompare;
		errors += ws[i].errors;
		torn += ws[i].torn;
		stale += ws[i].stale;
		rt += ws[i].read_torn;
		nsucc += ws[i].nsucc;
	}
	all = malloc((nsucc ? nsucc : 1) * sizeof(*all));
	CU_ASSERT_PTR_NOT_NULL_FATAL(all);
	for (unsigned int i = 0; i < n; i++) {
		if (ws[i].nsucc)
			memcpy(all + k, ws[i].succ, ws[i].nsucc * sizeof(*all));
		k += ws[i].nsucc;
		free(ws[i].succ);
	}
	/* the blocks as they stay */
	{
		struct nvmf_ns *ns = nvmf_ns_get(g_sub, g_nsid, NULL);

		CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
		for (unsigned int b = 0; b < NBLK; b++) {
			uint8_t buf[BS];
			struct iovec iov = { buf, BS };
			struct bdev_io bio = { .op = BDEV_OP_READ,
					       .offset = (uint64_t)b * BS,
					       .len = BS,
					       .iov = &iov,
					       .iovcnt = 1,
					       .cb = final_read_done,
					       .cb_arg = &rc };
			struct pat p;

			rc = 1;
			bdev_submit(ns->bdev, &bio);
			CU_ASSERT_EQUAL(rc, 0);
			if (!parse(buf, b, &p))
				torn++;
			else if (p.epoch < g_floor[b])
				stale++;
		}
		nvmf_ns_put(ns, NULL);
	}
	qsort(all, nsucc, sizeof(*all), cmp_pat);
	for (size_t i = 1; i < nsucc; i++)
		if (!cmp_pat(&all[i - 1], &all[i])) {
			if (!dup)
				printf("\n  block %u epoch %llu count %u compared twice\n",
				       all[i].blk, (unsigned long long)all[i].epoch, all[i].count);
			dup++;
		}
	free(all);
	printf("\n  %s: %llu pairs (%llu written, %llu miscompared), %llu torn, %llu stale, "
	       "%llu duplicate, %llu errors, %llu writes, %llu reads overlapped a write\n",
	       path, (unsigned long long)pairs, (unsigned long long)ok, (unsigned long long)mis,
	       (unsigned long long)torn, (unsigned long long)stale, (unsigned long long)dup,
	       (unsigned long long)errors,
	       (unsigned long long)(ws[NCAW].epoch + ws[NCAW + 1].epoch + ws[NCAW + 2].epoch +
				    ws[NCAW + 3].epoch),
	       (unsigned long long)rt);
	CU_ASSERT(pairs >= RACES);
	CU_ASSERT(ok > 0);
	CU_ASSERT(mis > 0); /* the writers did get in between reads and pairs */
	CU_ASSERT_EQUAL(torn, 0);
	CU_ASSERT_EQUAL(stale, 0);
	CU_ASSERT_EQUAL(dup, 0);
	CU_ASSERT_EQUAL(errors, 0);
	CU_ASSERT_EQUAL(nvmf_subsys_remove_ns(g_sub, g_nsid), 0);
	free(ws);
}

static void test_race_ram(void)
{
	race("ram:1M");
}

static void test_race_file(void)
{
	char path[] = "/tmp/caw_race_ut.XXXXXX";
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(ftruncate(fd, 1 << 20), 0);
	close(fd);
	race(path);
	unlink(path);
}

static int suite_init(void)
{
	struct nvmf_tgt_opts to;

	reactors_configure(128 * 1024, 0, REACTOR_PIN_OFF);
	if (reactors_start(2) != 0)
		return -1;
	nvmf_tgt_opts_default(&to);
	g_tgt = nvmf_tgt_create(&to);
	if (!g_tgt)
		return -1;
	g_sub = nvmf_subsys_create(g_tgt, NQN);
	if (!g_sub)
		return -1;
	nvmf_subsys_set_allow_any_host(g_sub, true);
	return 0;
}

static int suite_fini(void)
{
	nvmf_tgt_destroy(g_tgt);
	reactors_stop();
	return 0;
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "compare-and-write vs writes, ram, 2 reactors", test_race_ram },
		{ "compare-and-write vs writes, file, 2 reactors", test_race_file },
		CU_TEST_INFO_NULL,
	};

	return ut_run("caw_race", suite_init, suite_fini, tests);
}
