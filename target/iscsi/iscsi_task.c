// SPDX-License-Identifier: MIT
/*
 * SCSI tasks of a normal session: CmdSN ordering and the command window, immediate,
 * unsolicited and solicited (R2T) data, translation (scsi_xlate) and the NVMe commands run
 * through the executor; the Data-In or SCSI Response that ends a task is iscsi_datain.c's.
 *
 * Task state machine (iscsi_task_set_state):
 *   FREE -> NEED_BUFFER -> DATA_OUT -> EXECUTING -> DATA_IN -> FREE
 *                                               \-> RESPONSE -> FREE
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"
#include "common/iov.h"
#include "common/log.h"
#include "core/reservation.h"

static const char *const task_state_names[TASK_NSTATES] = {
	[TASK_FREE] = "FREE",
	[TASK_NEED_BUFFER] = "NEED_BUFFER",
	[TASK_DATA_OUT] = "DATA_OUT",
	[TASK_EXECUTING] = "EXECUTING",
	[TASK_DATA_IN] = "DATA_IN",
	[TASK_RESPONSE] = "RESPONSE",
};

#define B(s) (1u << (s))
static const uint32_t task_next[TASK_NSTATES] = {
	[TASK_FREE] = B(TASK_DATA_OUT),
	[TASK_NEED_BUFFER] = B(TASK_DATA_OUT) | B(TASK_EXECUTING) | B(TASK_FREE),
	[TASK_DATA_OUT] = B(TASK_NEED_BUFFER) | B(TASK_EXECUTING) | B(TASK_RESPONSE) |
			  B(TASK_FREE),
	[TASK_EXECUTING] = B(TASK_DATA_IN) | B(TASK_RESPONSE) | B(TASK_FREE),
	[TASK_DATA_IN] = B(TASK_RESPONSE) | B(TASK_FREE),
	[TASK_RESPONSE] = B(TASK_FREE),
};
#undef B

void iscsi_task_set_state(struct iscsi_task *t, enum iscsi_task_state s)
{
	if (!(task_next[t->state] & (1u << s)))
		log_peer("%s: task %#x: illegal transition %s -> %s", t->conn->peer, t->itt,
			 task_state_names[t->state], task_state_names[s]);
	t->state = s;
}

static void task_run(struct iscsi_task *t);
static void data_out_complete(struct iscsi_task *t);
static void send_r2t(struct iscsi_task *t);

/* ---- CmdSN window ----------------------------------------------------------------------- */

int iscsi_cmdsn_check(struct iscsi_conn *c, uint32_t cmdsn, bool immediate)
{
	if (immediate || cmdsn == c->exp_cmdsn)
		return 1;
	if (iscsi_sn_gt(cmdsn, c->exp_cmdsn) && iscsi_sn_le(cmdsn, c->max_cmdsn))
		return 2;
	log_peer("%s: CmdSN %u outside the window [%u, %u]: ignored", c->peer, cmdsn,
		 c->exp_cmdsn, c->max_cmdsn);
	return 0;
}

static void start_pending(struct iscsi_conn *c);

void iscsi_cmdsn_advance(struct iscsi_conn *c)
{
	c->exp_cmdsn++;
	start_pending(c);
}

void iscsi_window_open(struct iscsi_conn *c, unsigned int n)
{
	c->max_cmdsn += n;
}

/* ---- buffer share ------------------------------------------------------------------------ */

/*
 * The chunks of a reactor's pool are shared by every connection on it: one session that
 * never reads its Data-In (or never sends the Data-Out it was asked for) would otherwise
 * hold them all (queue depth x 16 chunks) and stall logins and I/O of every other session
 * there. A session holds at most 1/ISCSI_POOL_SHARE of the pool, and all the sessions of
 * one initiator on the reactor together 1/ISCSI_INITIATOR_SHARE (iscsi_buf_cap()), so
 * opening more sessions buys an initiator no more of it. A share shrinks when another
 * session of the initiator arrives: the oldest task of a session over it still gets its
 * chunks (task_get_buffers), so every session keeps moving.
 */
static unsigned int buf_cap(struct iscsi_conn *c)
{
	const struct iscsi_initiator *in = c->initiator_share;
	unsigned int here = 1;

	if (!c->pool_limit) {
		struct reactor_buf_stats st;

		reactor_buf_stats(c->r, &st);
		c->pool_limit = st.limit;
	}
	if (in && c->r->id < in->nreactors && in->here[c->r->id])
		here = in->here[c->r->id];
	return iscsi_buf_cap(c->pool_limit, here, ISCSI_TASK_BUFS);
}

static uint8_t *task_buf_get(struct iscsi_conn *c)
{
	uint8_t *b = reactor_buf_get(c->r);

	if (b)
		c->bufs_held++;
	return b;
}

static void task_buf_retry(void *arg);

static void task_buf_put(struct iscsi_conn *c, uint8_t *b)
{
	struct iscsi_task *t;

	reactor_buf_put(c->r, b);
	c->bufs_held--;
	if (!c->cap_waiting || c->state == CONN_CLOSING)
		return;
	/* room in the share: the oldest task waiting for it retries (deferred) */
	TAILQ_FOREACH(t, &c->active, link)
	{
		if (t->state == TASK_NEED_BUFFER && t->cap_wait && !t->buf_work.queued) {
			reactor_defer(c->r, &t->buf_work);
			return;
		}
	}
}

static void task_cap_wait_end(struct iscsi_task *t)
{
	if (t->cap_wait) {
		t->cap_wait = false;
		t->conn->cap_waiting--;
	}
}

/* ---- task lifetime ---------------------------------------------------------------------- */

static struct iscsi_task *task_get(struct iscsi_conn *c, bool immediate)
{
	struct iscsi_task *t;

	if (immediate && !c->free_immediate)
		return NULL;
	t = iscsi_task_pool_get(c);
	if (!t)
		return NULL;
	if (immediate)
		c->free_immediate--;
	memset(&t->plan, 0, sizeof(t->plan));
	t->immediate = immediate;
	t->aborted = false;
	t->nvme_pending = 0;
	t->buf = NULL;
	t->nbufs = 0;
	t->scratch = NULL;
	t->out_len = t->out_got = t->out_unsol_end = 0;
	t->out_unsol_done = true;
	t->r2t_out = false;
	t->r2tsn = t->exp_datasn = 0;
	t->in_len = t->datasn = t->residual = 0;
	t->in_iovcnt = 0;
	t->in_iov_len = 0;
	t->in_iov_lost = false;
	t->in_iov_reads = false;
	t->in_iov_mapped = 0;
	t->mapped_ns = NULL;
	t->nmapped = 0;
	t->res_flags = 0;
	t->in_step = t->step_again = false;
	t->started = false;
	t->data_err = false;
	t->cap_wait = false;
	t->lun_idx = -1;
	return t;
}

void iscsi_task_release(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;

	if (t->state == TASK_FREE)
		return;
	stats_xlate_io_done(&t->xio);
	if (t->state == TASK_NEED_BUFFER || t->buf_work.waiting)
		reactor_buf_wait_cancel(c->r, &t->buf_work);
	reactor_defer_cancel(c->r, &t->buf_work);
	task_cap_wait_end(t);
	if (t->tx.queued) {
		TAILQ_REMOVE(&c->txq, &t->tx, link);
		t->tx.queued = false;
	}
	for (unsigned int i = 0; i < ISCSI_DATAIN_PDUS; i++) {
		if (t->din_tx[i].queued) {
			TAILQ_REMOVE(&c->txq, &t->din_tx[i], link);
			t->din_tx[i].queued = false;
		}
	}
	iscsi_task_drop_mapped(t); /* its Data-In is sent or dropped */
	for (unsigned int i = 0; i < t->nbufs; i++)
		task_buf_put(c, t->bufs[i]);
	t->nbufs = 0;
	t->buf = NULL;
	if (t->on_list)
		TAILQ_REMOVE(t->started ? &c->active : &c->pending, t, link);
	t->on_list = false;
	iscsi_task_set_state(t, TASK_FREE);
	TAILQ_INSERT_HEAD(&c->free_tasks, t, link);
	if (t->immediate)
		c->free_immediate++;
	else if (c->state != CONN_CLOSING)
		iscsi_window_open(c, 1);
	if (c->rx_state == RX_WAIT)
		iscsi_rx_resume(c);
}

/* Stop a task: now if the executor does not own one of its commands, else on return. */
void iscsi_task_abort(struct iscsi_task *t)
{
	t->aborted = true;
	if (t->nvme_pending)
		return;
	/* a PDU partly on the wire must finish: its sent callback releases the task (and
	 * drops the task's PDUs queued behind it) */
	if (iscsi_task_tx_on_wire(t))
		return;
	iscsi_task_release(t);
}

bool iscsi_task_tx_on_wire(const struct iscsi_task *t)
{
	const struct iscsi_tx *head = TAILQ_FIRST(&t->conn->txq);

	return head && head->owner == t && head->queued && t->conn->tx_off;
}

unsigned int iscsi_task_tx_queued(const struct iscsi_task *t)
{
	unsigned int n = t->tx.queued;

	for (unsigned int i = 0; i < ISCSI_DATAIN_PDUS; i++)
		n += t->din_tx[i].queued;
	return n;
}

static struct iscsi_task *task_by_itt(struct iscsi_conn *c, uint32_t itt)
{
	struct iscsi_task *t;

	TAILQ_FOREACH(t, &c->active, link)
		if (t->itt == itt)
			return t;
	TAILQ_FOREACH(t, &c->pending, link)
		if (t->itt == itt)
			return t;
	return NULL;
}

unsigned int iscsi_tasks_abort_lun(struct iscsi_conn *c, uint64_t lun, bool all)
{
	struct iscsi_task *t, *next;
	unsigned int busy = 0;

	for (int list = 0; list < 2; list++) {
		for (t = TAILQ_FIRST(list ? &c->pending : &c->active); t; t = next) {
			next = TAILQ_NEXT(t, link);
			if (!all && t->lun != lun)
				continue;
			iscsi_task_abort(t);
			if (t->state != TASK_FREE)
				busy++;
		}
	}
	return busy;
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* Byte @off of the task's data (spread over reactor chunks). */
static uint8_t *task_ptr(const struct iscsi_task *t, uint32_t off)
{
	size_t chunk = reactor_buf_size();

	return t->bufs[off / chunk] + off % chunk;
}

int iscsi_task_iov(const struct iscsi_task *t, uint32_t off, uint32_t len, struct iovec *iov,
		   int max)
{
	size_t chunk = reactor_buf_size();
	int n = 0;

	while (len && n < max) {
		uint32_t in = (uint32_t)(chunk - off % chunk);
		uint32_t l = len < in ? len : in;

		iov[n].iov_base = task_ptr(t, off);
		iov[n].iov_len = l;
		n++;
		off += l;
		len -= l;
	}
	return n;
}

static int lun_index(struct iscsi_conn *c, uint64_t lun)
{
	for (unsigned int i = 0; i < c->nlus; i++)
		if (c->lus[i].ready && c->lus[i].lun == lun)
			return (int)i;
	return -1;
}

/* Data area of the task buffer (the upper half is scratch for commands that need it). */
static void task_split_buffer(struct iscsi_task *t)
{
	size_t chunk = reactor_buf_size();

	switch (t->plan.op) {
	case SCSI_XOP_UNMAP:
	case SCSI_XOP_PR_IN:
	case SCSI_XOP_PR_OUT:
	case SCSI_XOP_GET_LBA_STATUS:
	case SCSI_XOP_WRITE_SAME:
	case SCSI_XOP_MODE_SELECT:
		t->buf_len = (uint32_t)(chunk / 2);
		t->scratch = t->buf + chunk / 2;
		t->scratch_len = (uint32_t)(chunk / 2);
		break;
	default:
		t->buf_len = (uint32_t)chunk;
		t->scratch = t->buf + chunk / 2;
		t->scratch_len = (uint32_t)(chunk / 2);
		break;
	}
}

/* ---- receiving a SCSI Command ------------------------------------------------------------ */

int iscsi_scsi_cmd_rx(struct iscsi_conn *c, const uint8_t *bhs)
{
	const struct iscsi_scsi_cmd *h = (const void *)bhs;
	bool immediate = iscsi_bhs_immediate(bhs);
	uint32_t cmdsn = get_be32(&h->cmdsn), dlen = c->rx_dlen;
	struct iscsi_task *t;
	uint8_t *buf;
	int rc;

	if (c->state != CONN_FULL)
		return -EPROTO;
	rc = iscsi_cmdsn_check(c, cmdsn, immediate);
	if (rc == 0) /* outside the window: silently ignored, data dropped */
		return 0;
	if (dlen && (!(h->flags & ISCSI_SCSI_CMD_WRITE) || !c->params.immediate_data ||
		     dlen > c->params.first_burst_length || dlen > get_be32(&h->edtl))) {
		log_peer("%s: unexpected immediate data (%u bytes)", c->peer, dlen);
		return -EPROTO;
	}
	if (immediate && !c->free_immediate) {
		iscsi_send_reject(c, ISCSI_REJECT_IMMEDIATE_TOO_MANY, bhs);
		return 0;
	}
	/* every command gets a buffer: data-out, data-in or immediate replies; a session at
	 * its share stops reading until one of its tasks gives chunks back (backpressure),
	 * keeping room for one whole command */
	if (c->bufs_held + ISCSI_TASK_BUFS >= buf_cap(c))
		return -EAGAIN; /* resumed by iscsi_task_release() */
	buf = task_buf_get(c);
	if (!buf) { /* resumes the header once a chunk is back */
		reactor_buf_wait(c->r, &c->rx_buf_work);
		return -EAGAIN;
	}
	t = task_get(c, immediate);
	if (!t) { /* cannot happen inside the window; be safe */
		task_buf_put(c, buf);
		iscsi_send_reject(c, ISCSI_REJECT_OUT_OF_RESOURCES, bhs);
		return 0;
	}
	t->bufs[0] = buf;
	t->nbufs = 1;
	t->buf = buf;
	t->buf_len = (uint32_t)reactor_buf_size();
	t->itt = get_be32(&h->itt);
	t->cmdsn = cmdsn;
	t->flags = h->flags;
	t->edtl = get_be32(&h->edtl);
	t->lun = iscsi_lun_decode(h->lun);
	memcpy(t->lun_raw, h->lun, 8);
	memcpy(t->cdb, h->cdb, sizeof(t->cdb));
	t->out_got = dlen;
	/* an unsolicited burst may follow unless F is set (InitialR2T=No) */
	t->out_unsol_done = (h->flags & ISCSI_FLAG_FINAL) || iscsi_edtl_out(t) == 0;
	if (!t->out_unsol_done && c->params.initial_r2t) {
		log_peer("%s: unsolicited data with InitialR2T=Yes", c->peer);
		iscsi_task_release(t);
		return -EPROTO;
	}
	t->out_unsol_end = iscsi_edtl_out(t) < c->params.first_burst_length
				   ? iscsi_edtl_out(t)
				   : c->params.first_burst_length;
	t->exp_datasn = 0;
	t->dout_since = ev_now(c->loop);
	iscsi_task_set_state(t, TASK_DATA_OUT);
	t->on_list = true;
	t->started = false;
	TAILQ_INSERT_TAIL(&c->pending, t, link);
	if (dlen) {
		c->rx_dst = t->buf;
		c->rx_task = t;
	} else {
		c->rx_task = t;
	}
	return 0;
}

/* Start tasks whose turn has come in CmdSN order. */
static void task_start(struct iscsi_task *t);

static void start_pending(struct iscsi_conn *c)
{
	struct iscsi_task *t;
	bool again = true;

	while (again) {
		again = false;
		TAILQ_FOREACH(t, &c->pending, link) {
			if (!t->ready || t->immediate || t->cmdsn != c->exp_cmdsn)
				continue;
			c->exp_cmdsn++;
			task_start(t);
			again = true;
			break;
		}
	}
}

void iscsi_scsi_cmd_data_done(struct iscsi_conn *c, struct iscsi_task *t)
{
	t->ready = true;
	if (t->immediate) {
		task_start(t);
		return;
	}
	if (t->cmdsn == c->exp_cmdsn) {
		c->exp_cmdsn++;
		task_start(t);
		start_pending(c);
	}
}

/* ---- execution ---------------------------------------------------------------------------- */

static void legacy_reserve(struct iscsi_task *t, bool reserve)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_lu *lu = iscsi_task_lu(t);
	struct nvmf_ns *ns = lu ? nvmf_ns_get(c->subsys, lu->info.nsid, c->r) : NULL;
	int rc = 0;

	if (!ns) {
		scsi_plan_check_condition(&t->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_LUN_NOT_SUPPORTED);
		return;
	}
	if (reserve)
		rc = nvmf_resv_legacy_reserve(ns, c->hostid);
	else
		nvmf_resv_legacy_release(ns, c->hostid);
	nvmf_ns_put(ns, c->r);
	t->plan.op = SCSI_XOP_DONE;
	if (rc == -EBUSY)
		t->plan.status = SCSI_STATUS_RESERVATION_CONFLICT;
	else if (rc)
		scsi_plan_check_condition(&t->plan, SCSI_SK_HARDWARE_ERROR,
					  SCSI_ASC_INTERNAL_TARGET_FAILURE);
}

static bool reserve6_conflict(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_lu *lu = iscsi_task_lu(t);
	struct nvmf_ns *ns;
	bool conflict;

	if (!lu || !c->subsys || scsi_xlate_reserve6_exempt(t->cdb[0]))
		return false;
	ns = nvmf_ns_get(c->subsys, lu->info.nsid, c->r);
	if (!ns)
		return false;
	conflict = nvmf_resv_legacy_conflict(ns, c->hostid);
	nvmf_ns_put(ns, c->r);
	return conflict;
}

/* Fit the plan to what the initiator will move (EDTL) before any data flows. */
static void clamp_to_edtl(struct iscsi_task *t)
{
	struct scsi_plan *p = &t->plan;
	struct iscsi_lu *lu = iscsi_task_lu(t);
	uint32_t bs = lu ? lu->info.block_size : 512;

	/* COMPARE AND WRITE and WRITE SAME: the data-out must be exactly what the CDB
	 * describes (the verify and write data; one logical block) */
	if (t->cdb[0] == SCSI_OP_COMPARE_AND_WRITE && p->status == SCSI_STATUS_GOOD &&
	    (p->op == SCSI_XOP_COMPARE_AND_WRITE || p->op == SCSI_XOP_DONE) &&
	    iscsi_edtl_out(t) != p->xfer_len) {
		scsi_plan_invalid_field(p, true, 13, 7);
		return;
	}
	if (p->op == SCSI_XOP_WRITE_SAME && !p->ndob && iscsi_edtl_out(t) != p->xfer_len) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_INVALID_FIELD_IN_IU);
		return;
	}
	if (p->dir != SCSI_DIR_OUT)
		return;
	t->out_len = p->xfer_len < iscsi_edtl_out(t) ? p->xfer_len : iscsi_edtl_out(t);
	if (t->out_len == p->xfer_len)
		return;
	switch (p->op) {
	case SCSI_XOP_WRITE:
	case SCSI_XOP_WRITE_VERIFY:
	case SCSI_XOP_COMPARE:
		if (p->op == SCSI_XOP_COMPARE && p->bytchk == 3)
			goto short_data;
		/* only the blocks the initiator sends are written (overflow residual) */
		p->nblocks = t->out_len / bs;
		p->left = p->nblocks;
		t->out_len = p->nblocks * bs;
		if (!p->nblocks)
			p->op = SCSI_XOP_DONE;
		return;
	case SCSI_XOP_UNMAP:
	case SCSI_XOP_PR_OUT:
	case SCSI_XOP_MODE_SELECT:
		return; /* the parameter list check sees the short list */
	default:
		goto short_data;
	}
short_data:
	/* COMPARE AND WRITE, WRITE SAME and friends need their whole data-out */
	scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB);
}

/* Bytes of task data the plan moves through buffers (data-out or data-in). */
static uint32_t task_data_bytes(const struct iscsi_task *t)
{
	const struct iscsi_lu *lu = t->lun_idx >= 0 ? &t->conn->lus[t->lun_idx] : NULL;

	if (t->plan.op == SCSI_XOP_DONE || !lu)
		return 0;
	if (t->plan.dir == SCSI_DIR_OUT)
		return t->out_len;
	if (t->plan.op == SCSI_XOP_READ)
		return t->plan.nblocks * lu->info.block_size;
	return 0;
}

/* Chunks for the whole transfer; false while the pool is empty (a waiter is queued). */
static bool task_get_buffers(struct iscsi_task *t)
{
	size_t chunk = reactor_buf_size();
	uint32_t need = (uint32_t)((task_data_bytes(t) + chunk - 1) / chunk);

	if (need > ISCSI_TASK_BUFS)
		need = ISCSI_TASK_BUFS;
	task_cap_wait_end(t);
	if (t->nbufs < need && t->conn->bufs_held + need - t->nbufs > buf_cap(t->conn) &&
	    t != TAILQ_FIRST(&t->conn->active)) {
		/* over the session's share: task_buf_put() wakes it */
		t->cap_wait = true;
		t->conn->cap_waiting++;
		return false;
	}
	while (t->nbufs < need) {
		uint8_t *b = task_buf_get(t->conn);

		if (!b) {
			reactor_buf_wait(t->conn->r, &t->buf_work);
			return false;
		}
		t->bufs[t->nbufs++] = b;
	}
	return true;
}

/* Buffers in place: wait for data-out, or run. */
static void task_go(struct iscsi_task *t)
{
	if (t->plan.op == SCSI_XOP_DONE || t->plan.dir != SCSI_DIR_OUT || !t->out_len) {
		/* no data-out to wait for (any unsolicited data is dropped) */
		t->out_len = 0;
		if (!t->out_unsol_done)
			return; /* the response waits for the end of the unsolicited burst */
		iscsi_task_set_state(t, TASK_EXECUTING);
		task_run(t);
		return;
	}
	if (t->out_got >= t->out_len && t->out_unsol_done) {
		data_out_complete(t);
		return;
	}
	if (t->out_unsol_done)
		send_r2t(t);
}

static void task_buf_retry(void *arg)
{
	struct iscsi_task *t = arg;

	if (t->state != TASK_NEED_BUFFER)
		return;
	if (t->aborted || t->conn->state == CONN_CLOSING) {
		iscsi_task_release(t);
		return;
	}
	if (!task_get_buffers(t))
		return;
	iscsi_task_set_state(t, TASK_DATA_OUT);
	task_go(t);
}

static void task_start(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_lu *lu;

	TAILQ_REMOVE(&c->pending, t, link);
	TAILQ_INSERT_TAIL(&c->active, t, link);
	t->started = true;
	stats_xlate_io_start(&t->xio);
	t->lun_idx = t->lun == UINT64_MAX ? -1 : lun_index(c, t->lun);
	lu = iscsi_task_lu(t);
	if (reserve6_conflict(t)) {
		memset(&t->plan, 0, sizeof(t->plan));
		t->plan.op = SCSI_XOP_DONE;
		t->plan.status = SCSI_STATUS_RESERVATION_CONFLICT;
	} else {
		/* set-up, decoding and buffer split: all SCSI-side work */
		uint64_t xt = stats_xlate_begin(&t->xio);

		task_split_buffer(t);
		scsi_xlate_cdb(&c->port, lu ? &lu->info : NULL, t->cdb, sizeof(t->cdb), &t->plan,
			       t->buf, (uint32_t)reactor_buf_size() / 2);
		task_split_buffer(t);
		if (t->plan.op == SCSI_XOP_RESERVE6 || t->plan.op == SCSI_XOP_RELEASE6)
			legacy_reserve(t, t->plan.op == SCSI_XOP_RESERVE6);
		clamp_to_edtl(t);
		stats_xlate_end(&t->xio, xt);
	}
	if (t->data_err)
		scsi_plan_check_condition(&t->plan, SCSI_SK_ABORTED_COMMAND,
					  SCSI_ASC_DATA_PHASE_ERROR);
	t->buf_work.fn = task_buf_retry;
	t->buf_work.arg = t;
	if (!task_get_buffers(t)) {
		iscsi_task_set_state(t, TASK_NEED_BUFFER);
		return;
	}
	task_go(t);
}

/* All data-out in: check parameter data, then run the NVMe commands. */
static void data_out_complete(struct iscsi_task *t)
{
	struct iscsi_lu *lu = iscsi_task_lu(t);
	struct scsi_plan *p = &t->plan;

	iscsi_task_set_state(t, TASK_EXECUTING);
	if (p->op != SCSI_XOP_DONE && p->dir == SCSI_DIR_OUT) {
		uint32_t len = t->out_len < t->out_got ? t->out_len : t->out_got;
		uint64_t xt = stats_xlate_begin(&t->xio);
		bool more = scsi_xlate_data_out(&lu->info, p, t->buf, len, t->scratch,
						t->scratch_len);

		if (more && ((p->op == SCSI_XOP_WRITE_SAME && !p->zero_data) ||
			     (p->op == SCSI_XOP_COMPARE && p->bytchk == 3)))
			scsi_xlate_replicate(t->buf, t->buf_len, lu->info.block_size);
		stats_xlate_end(&t->xio, xt);
	}
	task_run(t);
}

static void nvme_submit(struct iscsi_task *t, struct nvmf_req *req, const struct nvme_cmd *cmd,
			const struct scsi_nvme_io *io)
{
	struct iscsi_conn *c = t->conn;

	req->cmd = *cmd;
	req->qpair = &c->qp;
	req->xfer = io->len ? nvme_opc_xfer(cmd->opc) : NVME_XFER_NONE;
	req->length = io->len;
	req->iovcnt = 0;
	if (io->len && io->buf == SCSI_BUF_SCRATCH) {
		req->iov[0].iov_base = t->scratch + io->off;
		req->iov[0].iov_len = io->len;
		req->iovcnt = 1;
	} else if (io->len) {
		req->iovcnt = iscsi_task_iov(t, io->off, io->len, req->iov, NVMF_REQ_MAX_IOV);
	}
	/* Only a SCSI READ's data goes out untouched; once its pieces overflowed in_iov the
	 * data is sent from the chunks, so the rest must land there. */
	req->map_denied = t->plan.op != SCSI_XOP_READ || t->in_iov_lost;
	put_le16(&req->cmd.cid, (uint16_t)(t->idx * 2 + (req == &t->req[1])));
	t->nvme_pending++;
	c->nvme_out++;
}

/* scsi_xlate_next(), timed for the statistics (reactor/xlate_timer.h). */
static bool xlate_next(struct iscsi_task *t, const struct scsi_lu *lu, struct nvme_cmd *cmd,
		       struct scsi_nvme_io *io)
{
	uint64_t xt = stats_xlate_begin(&t->xio);
	bool more = scsi_xlate_next(lu, &t->plan, t->buf_len, t->scratch, t->scratch_len, cmd, io);

	stats_xlate_end(&t->xio, xt);
	return more;
}

/* Issue the plan's NVMe commands; completions that arrive inline loop here (flat stack). */
static void task_run(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_lu *lu = iscsi_task_lu(t);

	if (t->in_step) {
		t->step_again = true;
		return;
	}
	t->in_step = true;
	do {
		struct nvme_cmd cmd[2];
		struct scsi_nvme_io io[2];

		t->step_again = false;
		if (t->aborted || c->state == CONN_CLOSING || !c->ctrl_connected ||
		    t->plan.op == SCSI_XOP_DONE || !lu ||
		    !xlate_next(t, &lu->info, &cmd[0], &io[0])) {
			t->in_step = false;
			if (t->aborted || c->state == CONN_CLOSING) {
				iscsi_task_release(t);
				return;
			}
			if (t->plan.op != SCSI_XOP_DONE && lu) {
				uint64_t xt = stats_xlate_begin(&t->xio);

				scsi_xlate_finish(&c->port, &lu->info, &t->plan, t->buf, t->buf_len,
						  t->scratch, t->scratch_len);
				stats_xlate_end(&t->xio, xt);
			}
			iscsi_task_respond(t);
			return;
		}
		if (io[0].fused_next && !xlate_next(t, &lu->info, &cmd[1], &io[1]))
			io[0].fused_next = false;
		nvme_submit(t, &t->req[0], &cmd[0], &io[0]);
		if (io[0].fused_next)
			nvme_submit(t, &t->req[1], &cmd[1], &io[1]);
		nvmf_req_exec(&t->req[0]);
		if (io[0].fused_next)
			nvmf_req_exec(&t->req[1]);
		/* a completion inside exec sets step_again when the plan can go on */
	} while (t->step_again);
	t->in_step = false;
}

void iscsi_task_drop_mapped(struct iscsi_task *t)
{
	for (; t->nmapped; t->nmapped--)
		nvmf_ns_put(t->mapped_ns, t->conn->qp.reactor);
	t->mapped_ns = NULL;
	t->in_iov_mapped = 0;
}

/* Copy @len bytes at @src into the task's chunks at data offset @off. */
static void copy_to_chunks(struct iscsi_task *t, uint32_t off, const void *src, size_t len)
{
	struct iovec dst[NVMF_REQ_MAX_IOV];
	int n = iscsi_task_iov(t, off, (uint32_t)len, dst, NVMF_REQ_MAX_IOV);

	iov_copy_from_buf(dst, n, 0, src, len);
}

/* From now on Data-In sends from the chunks: the pieces that are namespace memory are
 * copied into place (the others are there already) and the namespace let go. */
static void in_iov_to_chunks(struct iscsi_task *t)
{
	uint32_t off = 0;

	for (int i = 0; i < t->in_iovcnt; i++) {
		if (t->in_iov_mapped & (1u << i))
			copy_to_chunks(t, off, t->in_iov[i].iov_base, t->in_iov[i].iov_len);
		off += (uint32_t)t->in_iov[i].iov_len;
	}
	iscsi_task_drop_mapped(t);
	t->in_iov_lost = true;
}

/*
 * The data a read left, piece by piece as the request describes it: Data-In sends from
 * these. A namespace may have pointed them into its own memory (nvmf_req_data_mapped()):
 * the task then takes over the request's hold on it, since the request is reused for the
 * next command of the read, and keeps it until the task is released. Pieces that do not
 * fit in in_iov, or a namespace other than the one the task holds, send the data from the
 * chunks instead, copied there.
 */
static void in_iov_add(struct iscsi_task *t, struct nvmf_req *req)
{
	bool mapped = nvmf_req_data_mapped(req);

	if (!t->in_iov_lost && (t->in_iovcnt + req->iovcnt > ISCSI_TASK_IN_IOV ||
				(mapped && t->nmapped && req->ns != t->mapped_ns)))
		in_iov_to_chunks(t);
	if (t->in_iov_lost) {
		for (int i = 0; i < req->iovcnt; i++) {
			if (mapped)
				copy_to_chunks(t, t->in_iov_len, req->iov[i].iov_base,
					       req->iov[i].iov_len);
			t->in_iov_len += (uint32_t)req->iov[i].iov_len;
		}
		nvmf_req_release_data(req);
		return;
	}
	t->in_iov_reads = true;
	for (int i = 0; i < req->iovcnt; i++) {
		if (mapped)
			t->in_iov_mapped |= 1u << t->in_iovcnt;
		t->in_iov[t->in_iovcnt++] = req->iov[i];
		t->in_iov_len += (uint32_t)req->iov[i].iov_len;
	}
	if (mapped) {
		t->mapped_ns = nvmf_req_take_data(req);
		t->nmapped++;
	}
}

void iscsi_task_req_complete(struct nvmf_req *req)
{
	struct iscsi_conn *c = iscsi_conn_of(req->qpair);
	struct iscsi_task *t;
	uint16_t status = get_le16(&req->rsp.status) & 0xfffe;
	uint64_t xt;

	/* Identify on the admin path (iscsi_session.c) */
	t = iscsi_task_of_req(c, req);
	if (!t) {
		if (req == c->admin_req)
			c->admin_done = true;
		else
			free(req); /* completed after its caller gave up waiting */
		return;
	}
	t->nvme_pending--;
	c->nvme_out--;
	if (t->aborted || c->state == CONN_CLOSING) {
		nvmf_req_release_data(req); /* its data goes nowhere now */
		if (!t->nvme_pending) {
			iscsi_task_release(t);
			iscsi_tmf_task_gone(c);
		}
		iscsi_conn_nvme_returned(c);
		return;
	}
	xt = stats_xlate_begin(&t->xio);
	scsi_xlate_nvme_done(&t->plan, status);
	if ((req->cmd.flags & NVME_CMD_FUSE_MASK) == NVME_CMD_FUSE_FIRST &&
	    NVME_STATUS_SCT(status) == NVME_SCT_MEDIA &&
	    NVME_STATUS_SC(status) == NVME_SC_COMPARE_FAILURE)
		scsi_xlate_miscompare_at(&t->plan, get_le32(&req->rsp.dw0));
	stats_xlate_end(&t->xio, xt);
	if (t->plan.op == SCSI_XOP_READ && req->xfer == NVME_XFER_CTRLR_TO_HOST)
		in_iov_add(t, req);
	nvmf_req_release_data(req); /* mapped but not a READ's data: not sent from there */
	if (t->nvme_pending) /* the other command of a fused pair is still out */
		return;
	if (t->in_step)
		t->step_again = true;
	else
		task_run(t);
}

/* ---- data-out ------------------------------------------------------------------------------ */

static void r2t_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	struct iscsi_task *t = tx->owner;

	if (t->state != TASK_FREE && t->aborted && !t->nvme_pending && !iscsi_task_tx_on_wire(t))
		iscsi_task_release(t);
}

static void send_r2t(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_tx *tx = &t->tx;
	uint32_t off = t->out_got < t->out_len ? t->out_got : t->out_len;
	uint32_t len = t->out_len - off;

	if (len > c->params.max_burst_length)
		len = c->params.max_burst_length;
	/* a burst never crosses a buffer chunk, so every Data-Out lands in one piece */
	if (len > reactor_buf_size() - off % reactor_buf_size())
		len = (uint32_t)(reactor_buf_size() - off % reactor_buf_size());
	if (tx->queued) /* previous PDU still going out: the data cannot have come yet */
		return;
	t->ttt = ++c->next_ttt == ISCSI_TAG_RESERVED ? ++c->next_ttt : c->next_ttt;
	t->r2t_off = off;
	t->r2t_len = len;
	t->r2t_out = true;
	t->exp_datasn = 0;
	t->dout_since = ev_now(c->loop);
	iscsi_bhs_init(tx->hdr, ISCSI_OP_R2T, ISCSI_FLAG_FINAL);
	memcpy(tx->hdr + 8, t->lun_raw, 8);
	put_be32(tx->hdr + 16, t->itt);
	put_be32(tx->hdr + 20, t->ttt);
	iscsi_put_sn(c, tx->hdr, false);
	put_be32(tx->hdr + 36, t->r2tsn++);
	put_be32(tx->hdr + 40, off);
	put_be32(tx->hdr + 44, len);
	tx->data = NULL;
	tx->dlen = 0;
	tx->owner = t;
	tx->sent = r2t_sent;
	iscsi_tx_send(c, tx);
}

int iscsi_data_out_rx(struct iscsi_conn *c, const uint8_t *bhs)
{
	const struct iscsi_data_out *h = (const void *)bhs;
	uint32_t itt = get_be32(&h->itt), ttt = get_be32(&h->ttt);
	uint32_t off = get_be32(&h->buffer_offset), datasn = get_be32(&h->datasn);
	uint32_t dlen = c->rx_dlen;
	struct iscsi_task *t;

	if (c->state != CONN_FULL)
		return -EPROTO;
	t = task_by_itt(c, itt);
	if (!t || t->aborted) {
		/* a task that was aborted or never accepted: its data is dropped */
		log_debug("%s: Data-Out for unknown task %#x dropped", c->peer, itt);
		return 0;
	}
	if (ttt == ISCSI_TAG_RESERVED) {
		if (t->out_unsol_done || off != t->out_got || off + dlen > t->out_unsol_end) {
			log_peer("%s: task %#x: bad unsolicited Data-Out (offset %u, %u bytes)",
				 c->peer, itt, off, dlen);
			return -EPROTO;
		}
	} else if (!t->r2t_out || ttt != t->ttt || off != t->out_got ||
		   off + dlen > t->r2t_off + t->r2t_len) {
		log_peer("%s: task %#x: Data-Out does not match the R2T (offset %u, %u bytes)",
			 c->peer, itt, off, dlen);
		return -EPROTO;
	}
	if (datasn != t->exp_datasn && !t->data_err) {
		/* a sequence error: the command fails once its data has gone by */
		log_peer("%s: task %#x: DataSN %u, expected %u", c->peer, itt, datasn,
			 t->exp_datasn);
		t->data_err = true;
	}
	if (off / reactor_buf_size() >= t->nbufs ||
	    off % reactor_buf_size() + dlen > reactor_buf_size()) {
		log_peer("%s: task %#x: Data-Out crosses a buffer (offset %u, %u bytes)", c->peer,
			 itt, off, dlen);
		return -EPROTO;
	}
	c->rx_dst = task_ptr(t, off);
	c->rx_task = t;
	return 0;
}

void iscsi_data_out_done(struct iscsi_conn *c, struct iscsi_task *t, const uint8_t *bhs)
{
	bool final = bhs[1] & ISCSI_FLAG_FINAL;
	bool unsolicited = get_be32(bhs + 20) == ISCSI_TAG_RESERVED;

	t->out_got += c->rx_dlen;
	t->exp_datasn++;
	t->dout_since = ev_now(c->loop);
	if (t->data_err && t->plan.op != SCSI_XOP_DONE && t->started)
		scsi_plan_check_condition(&t->plan, SCSI_SK_ABORTED_COMMAND,
					  SCSI_ASC_DATA_PHASE_ERROR);
	if (unsolicited) {
		if (final || t->out_got >= t->out_unsol_end)
			t->out_unsol_done = true;
	} else if (final || t->out_got >= t->r2t_off + t->r2t_len) {
		t->r2t_out = false;
	}
	if (!t->started || t->state != TASK_DATA_OUT || t->r2t_out || !t->out_unsol_done)
		return;
	if (t->plan.op == SCSI_XOP_DONE || t->out_got >= t->out_len) {
		data_out_complete(t);
		return;
	}
	send_r2t(t);
}
