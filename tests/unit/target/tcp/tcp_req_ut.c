/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP requests without a socket: the data plan over its table of cases (direction,
 * in-capsule bytes, SGL type and offset, length against the in-capsule size, MAXH2CDATA
 * and MDTS, zero length), the request state machine's transition table, its per-state
 * counters, the assertion on an illegal transition, tcp_req_start() following each
 * plan, the queue's and host's shares of the reactor pool (and the slots' own buffers,
 * which are outside it) with the wake-ups of queues waiting for their share, and when an
 * R2T counts as unanswered. The send path, connection teardown and the core are recording
 * stubs.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/endian.h"
#include "tcp/tcp_internal.h"
#include "ut.h"

#define MAX_IO      (128 * 1024) /* MDTS; the target's MAXH2CDATA is the same */
#define ICDATA_SIZE 8192         /* in-capsule size of an I/O queue */

/* ---- stubs for tcp_req.c's neighbours ------------------------------------------------------ */

static int n_r2t, n_exec, n_status, n_check_done;
static uint16_t last_status;

void tcp_send_r2t(struct tcp_req *tr)
{
	n_r2t++;
	tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_H2C);
}

void tcp_qpair_check_done(struct tcp_qpair *tq)
{
	n_check_done++;
}

void nvmf_req_exec(struct nvmf_req *req)
{
	n_exec++;
}

void nvmf_req_release_data(struct nvmf_req *req)
{
	req->data_mapped = false;
}

void nvmf_req_complete_status(struct nvmf_req *req, uint8_t sct, uint8_t sc, bool dnr)
{
	n_status++;
	last_status = NVME_STATUS(sct, sc) | (dnr ? NVME_STATUS_DNR : 0);
}

/* ---- the data plan -------------------------------------------------------------------------- */

#define ICD   NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET)
#define TDB   NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK, NVME_SGL_SUBTYPE_TRANSPORT)
#define KEYED (NVME_SGL_TYPE_KEYED_DATA_BLOCK << 4)
#define W     NVME_XFER_HOST_TO_CTRLR
#define R     NVME_XFER_CTRLR_TO_HOST
#define N     NVME_XFER_NONE

static const struct plan_case {
	const char *what;
	enum nvme_data_xfer xfer;
	uint8_t sgl_type;
	uint64_t addr;
	uint32_t len, icdata;
	enum tcp_data_plan plan;
	uint32_t length;
	uint8_t sc; /* with TCP_PLAN_FAIL */
} plan_cases[] = {
	/* no data */
	{ "flush", N, TDB, 0, 0, 0, TCP_PLAN_NONE, 0, 0 },
	{ "no-data opcode, SGL length set", N, TDB, 0, 4096, 0, TCP_PLAN_NONE, 0, 0 },
	{ "zero-length write", W, TDB, 0, 0, 0, TCP_PLAN_NONE, 0, 0 },
	{ "zero-length read", R, TDB, 0, 0, 0, TCP_PLAN_NONE, 0, 0 },
	{ "zero-length read, in-capsule SGL", R, ICD, 0, 0, 0, TCP_PLAN_NONE, 0, 0 },
	/* in-capsule writes */
	{ "in-capsule 512", W, ICD, 0, 512, 512, TCP_PLAN_IN_CAPSULE, 512, 0 },
	{ "in-capsule = in-capsule size", W, ICD, 0, ICDATA_SIZE, ICDATA_SIZE, TCP_PLAN_IN_CAPSULE,
	  ICDATA_SIZE, 0 },
	{ "in-capsule, SGL longer than data", W, ICD, 0, 8192, 4096, TCP_PLAN_FAIL, 0,
	  NVME_SC_DATA_SGL_LENGTH_INVALID },
	{ "in-capsule, SGL shorter than data", W, ICD, 0, 2048, 4096, TCP_PLAN_FAIL, 0,
	  NVME_SC_DATA_SGL_LENGTH_INVALID },
	{ "in-capsule, offset 16", W, ICD, 16, 4096, 4096, TCP_PLAN_FAIL, 0,
	  NVME_SC_INVALID_SGL_OFFSET },
	{ "in-capsule bytes, transport SGL", W, TDB, 0, 4096, 4096, TCP_PLAN_FAIL, 0,
	  NVME_SC_SGL_DESC_TYPE_INVALID },
	{ "in-capsule bytes with a read", R, ICD, 0, 4096, 4096, TCP_PLAN_FAIL, 0,
	  NVME_SC_SGL_DESC_TYPE_INVALID },
	{ "in-capsule bytes with no-data opcode", N, ICD, 0, 4096, 4096, TCP_PLAN_FAIL, 0,
	  NVME_SC_SGL_DESC_TYPE_INVALID },
	{ "in-capsule SGL, no bytes carried", W, ICD, 0, 4096, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_DATA_SGL_LENGTH_INVALID },
	/* writes by R2T */
	{ "R2T write under in-capsule size", W, TDB, 0, 4096, 0, TCP_PLAN_R2T, 4096, 0 },
	{ "R2T write over in-capsule size", W, TDB, 0, ICDATA_SIZE + 512, 0, TCP_PLAN_R2T,
	  ICDATA_SIZE + 512, 0 },
	{ "R2T write = MAXH2CDATA = MDTS", W, TDB, 0, MAX_IO, 0, TCP_PLAN_R2T, MAX_IO, 0 },
	{ "R2T write over MDTS", W, TDB, 0, MAX_IO + 4096, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_DATA_SGL_LENGTH_INVALID },
	{ "write, keyed SGL", W, KEYED, 0, 4096, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_SGL_DESC_TYPE_INVALID },
	/* reads */
	{ "read 4K", R, TDB, 0, 4096, 0, TCP_PLAN_C2H, 4096, 0 },
	{ "read = MDTS", R, TDB, 0, MAX_IO, 0, TCP_PLAN_C2H, MAX_IO, 0 },
	{ "read over MDTS", R, TDB, 0, MAX_IO + 1, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_DATA_SGL_LENGTH_INVALID },
	{ "read, in-capsule SGL", R, ICD, 0, 4096, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_SGL_DESC_TYPE_INVALID },
	{ "read, keyed SGL", R, KEYED, 0, 4096, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_SGL_DESC_TYPE_INVALID },
	/* direction */
	{ "bidirectional", NVME_XFER_BIDIRECTIONAL, TDB, 0, 4096, 0, TCP_PLAN_FAIL, 0,
	  NVME_SC_INVALID_OPCODE },
};

static void test_data_plan(void)
{
	for (size_t i = 0; i < sizeof(plan_cases) / sizeof(plan_cases[0]); i++) {
		const struct plan_case *c = &plan_cases[i];
		struct tcp_data_ask a = {
			.xfer = c->xfer,
			.sgl_type = c->sgl_type,
			.sgl_addr = c->addr,
			.sgl_len = c->len,
			.icdata = c->icdata,
			.max_io = MAX_IO,
		};
		uint16_t want = c->plan == TCP_PLAN_FAIL
					? (NVME_STATUS(NVME_SCT_GENERIC, c->sc) | NVME_STATUS_DNR)
					: 0;
		uint32_t length = 12345;
		uint16_t status = 0xffff;
		enum tcp_data_plan plan = tcp_req_data_plan(&a, &length, &status);

		if (plan != c->plan || length != c->length || status != want)
			fprintf(stderr, "%s: plan %d length %u status 0x%x, want %d %u 0x%x\n",
				c->what, plan, length, status, c->plan, c->length, want);
		CU_ASSERT_EQUAL(plan, c->plan);
		CU_ASSERT_EQUAL(length, c->length);
		CU_ASSERT_EQUAL(status, want);
	}
}

/* ---- the state machine ---------------------------------------------------------------------- */

static struct tcp_reactor trr;
static struct tcp_qpair tq;
static struct tcp_req tr;

static void fixture(void)
{
	memset(&trr, 0, sizeof(trr));
	memset(&tq, 0, sizeof(tq));
	memset(&tr, 0, sizeof(tr));
	tq.tr = &trr;
	snprintf(tq.qp.peer, sizeof(tq.qp.peer), "ut");
	tr.tq = &tq;
	tr.req.qpair = &tq.qp;
	tr.state = TCP_REQ_FREE;
	n_r2t = n_exec = n_status = n_check_done = 0;
	last_status = 0;
}

/* The machine as documented: every edge the transport may take, and no other. */
static const struct {
	enum tcp_req_state from, to;
} legal[] = {
	{ TCP_REQ_FREE, TCP_REQ_NEED_BUFFER },
	{ TCP_REQ_FREE, TCP_REQ_TRANSFERRING_H2C },
	{ TCP_REQ_FREE, TCP_REQ_READY_TO_EXECUTE },
	{ TCP_REQ_NEED_BUFFER, TCP_REQ_TRANSFERRING_H2C },
	{ TCP_REQ_NEED_BUFFER, TCP_REQ_READY_TO_EXECUTE },
	{ TCP_REQ_NEED_BUFFER, TCP_REQ_FREE },
	{ TCP_REQ_TRANSFERRING_H2C, TCP_REQ_READY_TO_EXECUTE },
	{ TCP_REQ_TRANSFERRING_H2C, TCP_REQ_FREE },
	{ TCP_REQ_READY_TO_EXECUTE, TCP_REQ_EXECUTING },
	{ TCP_REQ_EXECUTING, TCP_REQ_READY_TO_COMPLETE },
	{ TCP_REQ_EXECUTING, TCP_REQ_FREE },
	{ TCP_REQ_READY_TO_COMPLETE, TCP_REQ_TRANSFERRING_C2H },
	{ TCP_REQ_READY_TO_COMPLETE, TCP_REQ_FREE },
	{ TCP_REQ_TRANSFERRING_C2H, TCP_REQ_COMPLETED },
	{ TCP_REQ_TRANSFERRING_C2H, TCP_REQ_FREE },
	{ TCP_REQ_COMPLETED, TCP_REQ_FREE },
};

static void test_transition_table(void)
{
	int nlegal = 0;

	for (int f = 0; f < TCP_REQ_NSTATES; f++) {
		for (int t = 0; t < TCP_REQ_NSTATES; t++) {
			bool want = false;

			for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
				want |= legal[i].from == (enum tcp_req_state)f &&
					legal[i].to == (enum tcp_req_state)t;
			nlegal += want;
			if (tcp_req_transition_ok(f, t) != want)
				fprintf(stderr, "%s -> %s: %s, want %s\n", tcp_req_state_name(f),
					tcp_req_state_name(t), want ? "illegal" : "legal",
					want ? "legal" : "illegal");
			CU_ASSERT_EQUAL(tcp_req_transition_ok(f, t), want);
		}
	}
	CU_ASSERT_EQUAL(nlegal, (int)(sizeof(legal) / sizeof(legal[0])));
	/* Out of range either way. */
	CU_ASSERT_FALSE(tcp_req_transition_ok(TCP_REQ_NSTATES, TCP_REQ_FREE));
	CU_ASSERT_FALSE(tcp_req_transition_ok(TCP_REQ_FREE, TCP_REQ_NSTATES));
	/* Every state has a name for logs and the stats output. */
	for (int s = 0; s < TCP_REQ_NSTATES; s++)
		CU_ASSERT_STRING_NOT_EQUAL(tcp_req_state_name(s), "?");
	CU_ASSERT_STRING_EQUAL(tcp_req_state_name(TCP_REQ_NSTATES), "?");
}

/* A write's whole life: each state entered once, on the connection and on its reactor. */
static void test_state_counts(void)
{
	static const enum tcp_req_state path[] = {
		TCP_REQ_NEED_BUFFER,       TCP_REQ_TRANSFERRING_H2C,
		TCP_REQ_READY_TO_EXECUTE,  TCP_REQ_EXECUTING,
		TCP_REQ_READY_TO_COMPLETE, TCP_REQ_TRANSFERRING_C2H,
		TCP_REQ_COMPLETED,         TCP_REQ_FREE,
	};

	fixture();
	for (int round = 1; round <= 3; round++) {
		for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
			uint64_t before = tq.stats.req_state_entries[path[i]];

			tcp_req_set_state(&tr, path[i]);
			CU_ASSERT_EQUAL(tr.state, path[i]);
			CU_ASSERT_EQUAL(tq.stats.req_state_entries[path[i]], before + 1);
		}
		for (int s = 0; s < TCP_REQ_NSTATES; s++) {
			CU_ASSERT_EQUAL(tq.stats.req_state_entries[s], (uint64_t)round);
			CU_ASSERT_EQUAL(trr.stats.req_state_entries[s], (uint64_t)round);
		}
	}
	/* A second connection on the same reactor adds to the reactor's sums only. */
	{
		struct tcp_qpair tq2 = { .tr = &trr };
		struct tcp_req tr2 = { .tq = &tq2, .state = TCP_REQ_FREE };

		tcp_req_set_state(&tr2, TCP_REQ_READY_TO_EXECUTE);
		CU_ASSERT_EQUAL(tq2.stats.req_state_entries[TCP_REQ_READY_TO_EXECUTE], 1);
		CU_ASSERT_EQUAL(tq.stats.req_state_entries[TCP_REQ_READY_TO_EXECUTE], 3);
		CU_ASSERT_EQUAL(trr.stats.req_state_entries[TCP_REQ_READY_TO_EXECUTE], 4);
	}
}

/* An illegal transition is caught: an assertion in a debug build (checked in a child
 * process, which must die of SIGABRT); logged and carried out in a release build. */
static void test_illegal_transition(void)
{
	fixture();
	CU_ASSERT_FALSE(tcp_req_transition_ok(TCP_REQ_FREE, TCP_REQ_EXECUTING));
#ifndef NDEBUG
	{
		pid_t pid;
		int st = 0;

		fflush(NULL);
		pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			/* Keep the expected assertion message out of the test log. */
			if (!freopen("/dev/null", "w", stderr))
				_exit(3);
			tcp_req_set_state(&tr, TCP_REQ_EXECUTING);
			_exit(0); /* not caught: the parent sees a normal exit */
		}
		CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
		CU_ASSERT_TRUE(WIFSIGNALED(st));
		if (WIFSIGNALED(st))
			CU_ASSERT_EQUAL(WTERMSIG(st), SIGABRT);
		/* The parent's machine is untouched. */
		CU_ASSERT_EQUAL(tr.state, TCP_REQ_FREE);
		CU_ASSERT_EQUAL(tq.stats.req_state_entries[TCP_REQ_EXECUTING], 0);
	}
#else
	tcp_req_set_state(&tr, TCP_REQ_EXECUTING);
	CU_ASSERT_EQUAL(tr.state, TCP_REQ_EXECUTING);
	CU_ASSERT_EQUAL(tq.stats.req_state_entries[TCP_REQ_EXECUTING], 1);
#endif
}

/* tcp_req_start() takes each plan's next step, buffers in hand. */
static void test_start(void)
{
	fixture();
	tr.plan = TCP_PLAN_R2T;
	tcp_req_start(&tr);
	CU_ASSERT_EQUAL(n_r2t, 1);
	CU_ASSERT_EQUAL(n_exec + n_status, 0);
	CU_ASSERT_EQUAL(tr.state, TCP_REQ_TRANSFERRING_H2C);

	fixture();
	tr.plan = TCP_PLAN_IN_CAPSULE;
	tcp_req_start(&tr);
	CU_ASSERT_EQUAL(tr.state, TCP_REQ_TRANSFERRING_H2C);
	CU_ASSERT_EQUAL(n_r2t + n_exec + n_status, 0);

	fixture();
	tr.plan = TCP_PLAN_C2H;
	tcp_req_start(&tr);
	CU_ASSERT_EQUAL(n_exec, 1);
	CU_ASSERT_EQUAL(tr.state, TCP_REQ_EXECUTING);
	CU_ASSERT_EQUAL(tq.stats.req_state_entries[TCP_REQ_READY_TO_EXECUTE], 1);

	fixture();
	tr.plan = TCP_PLAN_NONE;
	tcp_req_start(&tr);
	CU_ASSERT_EQUAL(n_exec, 1);
	CU_ASSERT_EQUAL(n_r2t + n_status, 0);

	/* A failed plan completes with its status and never reaches the core. */
	fixture();
	tr.plan = TCP_PLAN_FAIL;
	tr.err_status = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_SGL_OFFSET) | NVME_STATUS_DNR;
	tcp_req_start(&tr);
	CU_ASSERT_EQUAL(n_exec, 0);
	CU_ASSERT_EQUAL(n_status, 1);
	CU_ASSERT_EQUAL(last_status, tr.err_status);
	CU_ASSERT_EQUAL(tr.state, TCP_REQ_EXECUTING);

	/* Data digest mismatch: a retryable transport error instead of the core. */
	fixture();
	tr.plan = TCP_PLAN_IN_CAPSULE;
	tcp_req_set_state(&tr, TCP_REQ_TRANSFERRING_H2C);
	tr.ddgst_err = true;
	tcp_req_execute(&tr);
	CU_ASSERT_EQUAL(n_exec, 0);
	CU_ASSERT_EQUAL(n_status, 1);
	CU_ASSERT_EQUAL(last_status,
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT_ERROR));
}

/* ---- shares of the reactor pool ----------------------------------------------------------- */

static struct reactor *g_r;
static sem_t on_reactor_done;
static struct tcp_qpair q[3];   /* three queues of one host */
static struct tcp_req rq[3][8]; /* their requests */
static struct nvmf_host_share host;
static struct nvmf_host_share_r host_r[1];
static uint8_t icd_mem[3][8][ICDATA_SIZE];

static void run_msg(void *arg)
{
	((void (*)(void))arg)();
	sem_post(&on_reactor_done);
}

/* @fn on the reactor (the pool's owner), then whatever it deferred there. */
static void on_reactor(void (*fn)(void))
{
	CU_ASSERT_EQUAL_FATAL(reactor_send_msg(g_r, run_msg, (void *)fn), 0);
	sem_wait(&on_reactor_done);
	CU_ASSERT_EQUAL_FATAL(reactor_send_msg(g_r, run_msg, (void *)(void (*)(void))sched_yield),
			      0);
	sem_wait(&on_reactor_done); /* the deferred work of the first ran before this message */
}

static void share_setup(void)
{
	memset(&trr, 0, sizeof(trr));
	trr.r = g_r;
	TAILQ_INIT(&trr.share_waitq);
	trr.share_work.fn = tcp_req_share_ready;
	trr.share_work.arg = &trr;
	memset(&host, 0, sizeof(host));
	memset(host_r, 0, sizeof(host_r));
	host.per_r = host_r;
	host.nr = 1;
	for (int i = 0; i < 3; i++) {
		struct tcp_qpair *t = &q[i];

		memset(t, 0, sizeof(*t));
		t->r = g_r;
		t->tr = &trr;
		t->qp.qid = 1;
		t->qp.connected = true;
		t->qp.host = &host;
		t->icd = &icd_mem[i][0][0];
		t->icd_size = ICDATA_SIZE;
		TAILQ_INIT(&t->free_reqs);
		TAILQ_INIT(&t->buf_waitq);
		t->buf_work.fn = tcp_req_buf_ready;
		t->buf_work.arg = t;
		snprintf(t->qp.peer, sizeof(t->qp.peer), "ut%d", i);
		/* a pool of 64 chunks of MDTS: 4 per queue, 8 per host */
		tcp_req_share_caps(t, 64, MAX_IO, MAX_IO);
		for (int k = 0; k < 8; k++) {
			struct tcp_req *r = &rq[i][k];

			memset(r, 0, sizeof(*r));
			r->tq = t;
			r->ttag = (uint16_t)k;
			r->req.qpair = &t->qp;
			r->state = TCP_REQ_FREE;
			r->plan = TCP_PLAN_R2T;
			r->req.length = MAX_IO;
		}
	}
	n_r2t = n_exec = n_status = 0;
}

/* A request the queue took: counted outstanding, as tcp_req_get() does. */
static int take(struct tcp_req *r)
{
	int rc = tcp_req_get_buffers(r);

	if (rc == 0) {
		r->tq->outstanding++;
		tcp_req_set_state(r, TCP_REQ_TRANSFERRING_H2C);
	}
	return rc;
}

static void share_step1(void)
{
	struct reactor_buf_stats st;

	share_setup();
	CU_ASSERT_EQUAL(q[0].queue_cap, 64 / TCP_POOL_QUEUE_SHARE);
	CU_ASSERT_EQUAL(q[0].host_cap, 64 / TCP_POOL_HOST_SHARE);

	/* a read of no more than a slot's own buffer: never the pool, whatever the shares */
	rq[0][7].req.length = 4096;
	rq[0][7].plan = TCP_PLAN_C2H;
	CU_ASSERT_EQUAL(take(&rq[0][7]), 0);
	CU_ASSERT_TRUE(rq[0][7].icd);
	CU_ASSERT_PTR_EQUAL(rq[0][7].req.iov[0].iov_base, icd_mem[0][7]);
	CU_ASSERT_EQUAL(rq[0][7].req.iov[0].iov_len, 4096);
	CU_ASSERT_EQUAL(q[0].bufs_held, 0);

	/* queue 0: 4 chunks, the fifth waits for the queue's own */
	for (int k = 0; k < 4; k++)
		CU_ASSERT_EQUAL(take(&rq[0][k]), 0);
	CU_ASSERT_EQUAL(take(&rq[0][4]), -EAGAIN);
	q[0].outstanding++;
	tcp_req_wait_buffers(&rq[0][4], -EAGAIN);
	CU_ASSERT_TRUE(q[0].share_waiting);
	CU_ASSERT_EQUAL(rq[0][4].state, TCP_REQ_NEED_BUFFER);
	/* queue 1 of the same host: 4 more, then the host's 8 are used */
	for (int k = 0; k < 4; k++)
		CU_ASSERT_EQUAL(take(&rq[1][k]), 0);
	CU_ASSERT_EQUAL(q[1].bufs_held, 4);
	CU_ASSERT_EQUAL(host_r[0].bufs, 8);
	/* queue 2 holds nothing, but its host has its share: it waits too */
	CU_ASSERT_EQUAL(take(&rq[2][0]), -EAGAIN);
	q[2].outstanding++;
	tcp_req_wait_buffers(&rq[2][0], -EAGAIN);
	CU_ASSERT_TRUE(q[2].share_waiting);
	/* in-capsule data larger than a slot's buffer is on the wire already: not held back */
	rq[2][1].plan = TCP_PLAN_IN_CAPSULE;
	CU_ASSERT_EQUAL(take(&rq[2][1]), 0);
	CU_ASSERT_EQUAL(host_r[0].bufs, 9);
	/* a small write by R2T on an I/O queue: the pool, within the shares (the host decides
	 * when its data comes); on the admin queue, the slot's buffer */
	rq[1][6].req.length = 4096;
	CU_ASSERT_EQUAL(take(&rq[1][6]), -EAGAIN);
	q[1].qp.qid = 0;
	CU_ASSERT_EQUAL(take(&rq[1][6]), 0);
	CU_ASSERT_TRUE(rq[1][6].icd);
	q[1].qp.qid = 1;
	/* a queue before Connect has no pool share at all */
	q[1].qp.connected = false;
	CU_ASSERT_EQUAL(take(&rq[1][4]), -EAGAIN);
	q[1].qp.connected = true;
	/* nobody took more than the shares: the pool itself is far from empty */
	reactor_buf_stats(g_r, &st);
	CU_ASSERT_EQUAL(st.allocated - st.free, 9);
	CU_ASSERT_EQUAL(st.exhausted, 0);
	CU_ASSERT_EQUAL(n_r2t, 0);

	/* the in-capsule write and one of queue 0's are done: queue 0's waiting write goes on
	 * (after this message), queue 2's finds its host at its share again */
	tcp_req_release(&rq[2][1]);
	tcp_req_release(&rq[0][0]);
	CU_ASSERT_EQUAL(q[0].bufs_held, 3);
	CU_ASSERT_EQUAL(host_r[0].bufs, 7);
}

static void share_step2(void)
{
	CU_ASSERT_FALSE(q[0].share_waiting);
	CU_ASSERT_EQUAL(rq[0][4].state, TCP_REQ_TRANSFERRING_H2C);
	CU_ASSERT_EQUAL(n_r2t, 1);
	CU_ASSERT_EQUAL(q[0].bufs_held, 4);
	/* still over the host's share: queue 2 waits on */
	CU_ASSERT_TRUE(q[2].share_waiting);
	CU_ASSERT_EQUAL(rq[2][0].state, TCP_REQ_NEED_BUFFER);
	/* one of queue 1's goes: the host is under its share, queue 2 goes on */
	tcp_req_release(&rq[1][0]);
}

static void share_step3(void)
{
	struct reactor_buf_stats st;

	CU_ASSERT_FALSE(q[2].share_waiting);
	CU_ASSERT_EQUAL(rq[2][0].state, TCP_REQ_TRANSFERRING_H2C);
	CU_ASSERT_EQUAL(n_r2t, 2);
	CU_ASSERT_EQUAL(host_r[0].bufs, 8);
	/* everything back: the counts return to zero, every chunk to the pool */
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 8; k++)
			tcp_req_release(&rq[i][k]);
	CU_ASSERT_EQUAL(host_r[0].bufs, 0);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(q[i].bufs_held, 0);
		CU_ASSERT_EQUAL(q[i].outstanding, 0);
	}
	reactor_buf_stats(g_r, &st);
	CU_ASSERT_EQUAL(st.allocated, st.free);
}

static void test_pool_shares(void)
{
	sem_init(&on_reactor_done, 0, 0);
	reactors_configure(MAX_IO, 64, REACTOR_PIN_OFF);
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	g_r = reactor_get(0);
	on_reactor(share_step1);
	on_reactor(share_step2);
	on_reactor(share_step3);
	reactors_stop();
}

/* When the host owes data for an R2T (or an aborted write's late data) past the limit. */
static void test_r2t_late(void)
{
	static const struct {
		enum tcp_req_state state;
		enum tcp_data_plan plan;
		bool drain;
		double at, now, limit;
		bool late;
	} c[] = {
		{ TCP_REQ_TRANSFERRING_H2C, TCP_PLAN_R2T, false, 100, 109.9, 10, false },
		{ TCP_REQ_TRANSFERRING_H2C, TCP_PLAN_R2T, false, 100, 110, 10, true },
		{ TCP_REQ_TRANSFERRING_H2C, TCP_PLAN_R2T, false, 100, 500, 0, false }, /* off */
		{ TCP_REQ_TRANSFERRING_H2C, TCP_PLAN_IN_CAPSULE, false, 100, 500, 10, false },
		{ TCP_REQ_NEED_BUFFER, TCP_PLAN_R2T, false, 0, 500, 10, false }, /* no R2T yet */
		{ TCP_REQ_EXECUTING, TCP_PLAN_R2T, false, 100, 500, 10, false }, /* data all in */
		{ TCP_REQ_FREE, TCP_PLAN_R2T, true, 100, 111, 10, true },        /* parked */
		{ TCP_REQ_FREE, TCP_PLAN_R2T, true, 100, 105, 10, false },
		{ TCP_REQ_TRANSFERRING_C2H, TCP_PLAN_R2T, true, 100, 111, 10, true }, /* aborted */
		{ TCP_REQ_FREE, TCP_PLAN_NONE, false, 0, 500, 10, false },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct tcp_req r = { .state = c[i].state, .plan = c[i].plan };

		r.h2c_drain = c[i].drain;
		r.r2t_at = c[i].at;
		CU_ASSERT_EQUAL(tcp_req_r2t_late(&r, c[i].now, c[i].limit), c[i].late);
		if (tcp_req_r2t_late(&r, c[i].now, c[i].limit) != c[i].late)
			fprintf(stderr, "case %zu\n", i);
	}
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "data plan table", test_data_plan },
		{ "request transition table", test_transition_table },
		{ "per-state entry counts", test_state_counts },
		{ "illegal transition caught", test_illegal_transition },
		{ "start follows the plan", test_start },
		{ "pool shares of a queue and a host", test_pool_shares },
		{ "R2T deadline passed", test_r2t_late },
		CU_TEST_INFO_NULL,
	};

	return ut_run("tcp_req", NULL, NULL, tests);
}
