/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP requests: the per-request state machine (one transition helper that checks a
 * table and counts entries per state), the data plan taken from the command capsule, the
 * request slot pool, data buffers from the reactor pool, and handing a request to the core.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "tcp_internal.h"

static const char *const req_state_names[TCP_REQ_NSTATES] = {
	[TCP_REQ_FREE] = "FREE",
	[TCP_REQ_NEED_BUFFER] = "NEED_BUFFER",
	[TCP_REQ_TRANSFERRING_H2C] = "TRANSFERRING_H2C",
	[TCP_REQ_READY_TO_EXECUTE] = "READY_TO_EXECUTE",
	[TCP_REQ_EXECUTING] = "EXECUTING",
	[TCP_REQ_READY_TO_COMPLETE] = "READY_TO_COMPLETE",
	[TCP_REQ_TRANSFERRING_C2H] = "TRANSFERRING_C2H",
	[TCP_REQ_COMPLETED] = "COMPLETED",
};

const char *tcp_req_state_name(enum tcp_req_state s)
{
	return s < TCP_REQ_NSTATES ? req_state_names[s] : "?";
}

/*
 * Legal transitions (from -> bit set of targets). Anything else is a bug in this file set:
 * an assertion without NDEBUG; logged (rate-limited) and allowed in a release build so a
 * production daemon keeps running.
 */
#define B(s) (1u << (s))
static const uint32_t req_next[TCP_REQ_NSTATES] = {
	[TCP_REQ_FREE] = B(TCP_REQ_NEED_BUFFER) | B(TCP_REQ_TRANSFERRING_H2C) |
			 B(TCP_REQ_READY_TO_EXECUTE),
	[TCP_REQ_NEED_BUFFER] = B(TCP_REQ_TRANSFERRING_H2C) | B(TCP_REQ_READY_TO_EXECUTE) |
				B(TCP_REQ_FREE),
	[TCP_REQ_TRANSFERRING_H2C] = B(TCP_REQ_READY_TO_EXECUTE) | B(TCP_REQ_FREE),
	[TCP_REQ_READY_TO_EXECUTE] = B(TCP_REQ_EXECUTING),
	[TCP_REQ_EXECUTING] = B(TCP_REQ_READY_TO_COMPLETE) | B(TCP_REQ_FREE),
	[TCP_REQ_READY_TO_COMPLETE] = B(TCP_REQ_TRANSFERRING_C2H) | B(TCP_REQ_FREE),
	[TCP_REQ_TRANSFERRING_C2H] = B(TCP_REQ_COMPLETED) | B(TCP_REQ_FREE),
	[TCP_REQ_COMPLETED] = B(TCP_REQ_FREE),
};
#undef B

bool tcp_req_transition_ok(enum tcp_req_state from, enum tcp_req_state to)
{
	return from < TCP_REQ_NSTATES && to < TCP_REQ_NSTATES && (req_next[from] & (1u << to));
}

void tcp_req_set_state(struct tcp_req *tr, enum tcp_req_state s)
{
	if (!tcp_req_transition_ok(tr->state, s)) {
		static struct log_ratelimit rl;

		log_msg_rl(&rl, LOG_LVL_ERR, "%s: request cid %u: illegal transition %s -> %s",
			   tr->tq->qp.peer, tr->cid, tcp_req_state_name(tr->state),
			   tcp_req_state_name(s));
		assert(!"illegal NVMe/TCP request state transition");
	}
	if (s < TCP_REQ_NSTATES)
		TCP_STAT_ADD(tr->tq, req_state_entries[s], 1);
	tr->state = s;
}

/* ---- data plan ------------------------------------------------------------------------------ */

static enum tcp_data_plan plan_fail(uint16_t *status, uint8_t sc)
{
	*status = NVME_STATUS(NVME_SCT_GENERIC, sc) | NVME_STATUS_DNR;
	return TCP_PLAN_FAIL;
}

/*
 * The one place that decides how a command's data moves: in the capsule, by R2T, as
 * C2HData, not at all, or not (an NVMe status, *status). *length is the data length the
 * request's buffers must hold.
 */
enum tcp_data_plan tcp_req_data_plan(const struct tcp_data_ask *a, uint32_t *length,
				     uint16_t *status)
{
	const uint8_t incapsule = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	const uint8_t transport =
		NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK, NVME_SGL_SUBTYPE_TRANSPORT);

	*length = 0;
	*status = 0;
	if (a->xfer == NVME_XFER_BIDIRECTIONAL)
		return plan_fail(status, NVME_SC_INVALID_OPCODE);
	if (a->icdata) {
		if (a->xfer != NVME_XFER_HOST_TO_CTRLR || a->sgl_type != incapsule)
			return plan_fail(status, NVME_SC_SGL_DESC_TYPE_INVALID);
		if (a->sgl_addr != 0)
			return plan_fail(status, NVME_SC_INVALID_SGL_OFFSET);
		if (a->sgl_len != a->icdata)
			return plan_fail(status, NVME_SC_DATA_SGL_LENGTH_INVALID);
		*length = a->icdata;
		return TCP_PLAN_IN_CAPSULE;
	}
	if (a->xfer == NVME_XFER_NONE || a->sgl_len == 0)
		return TCP_PLAN_NONE;
	if (a->sgl_type == incapsule)
		/* In-capsule data announced, none carried (or a read asking for it). */
		return plan_fail(status, a->xfer == NVME_XFER_HOST_TO_CTRLR
						 ? NVME_SC_DATA_SGL_LENGTH_INVALID
						 : NVME_SC_SGL_DESC_TYPE_INVALID);
	if (a->sgl_type != transport)
		return plan_fail(status, NVME_SC_SGL_DESC_TYPE_INVALID);
	if (a->sgl_len > a->max_io)
		return plan_fail(status, NVME_SC_DATA_SGL_LENGTH_INVALID);
	*length = a->sgl_len;
	return a->xfer == NVME_XFER_HOST_TO_CTRLR ? TCP_PLAN_R2T : TCP_PLAN_C2H;
}

/* The request holds the buffers its plan needs (if any): take the plan's next step. */
void tcp_req_start(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;

	switch (tr->plan) {
	case TCP_PLAN_IN_CAPSULE:
		tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_H2C);
		/* A receive machine parked at this request's payload goes on. */
		if (tq->rx_paused)
			reactor_defer(tq->r, &tq->resume_work);
		break;
	case TCP_PLAN_R2T:
		tcp_send_r2t(tr);
		break;
	case TCP_PLAN_FAIL:
	case TCP_PLAN_NONE:
	case TCP_PLAN_C2H:
		tcp_req_execute(tr);
		break;
	}
}

/* ---- request slots ------------------------------------------------------------------- */

static void bufs_return(struct tcp_req *tr);

/* Slot @i for first use (its memory is zero: never touched, or returned by a trim). */
static struct tcp_req *slot_init(struct tcp_qpair *tq, uint32_t i)
{
	struct tcp_req *tr = &tq->reqs[i];

	tr->tq = tq;
	tr->ttag = (uint16_t)i;
	tr->req.qpair = &tq->qp;
	tr->state = TCP_REQ_FREE;
	return tr;
}

struct tcp_req *tcp_req_get(struct tcp_qpair *tq)
{
	struct tcp_req *tr = TAILQ_FIRST(&tq->free_reqs);

	if (tr) {
		TAILQ_REMOVE(&tq->free_reqs, tr, link);
	} else {
		/* All set-up slots are busy: the queue grows by one, up to its depth. */
		if (tq->nreqs_ready >= tq->nreqs_limit)
			return NULL;
		tr = slot_init(tq, tq->nreqs_ready++);
	}
	tq->outstanding++;
	tr->plan = TCP_PLAN_NONE;
	tr->ddgst_err = false;
	tr->err_status = 0;
	tr->cid_owned = false;
	tr->h2c_next = 0;
	tr->r2t_end = 0;
	tr->c2h_len = 0;
	tr->r2t_queued = false;
	tr->h2c_drain = false;
	tr->icd = false;
	tr->r2t_at = 0;
	tr->req.xfer = NVME_XFER_NONE;
	tr->req.length = 0;
	tr->req.iovcnt = 0;
	memset(&tr->req.rsp, 0, sizeof(tr->req.rsp));
	return tr;
}

static void cid_clear(struct tcp_qpair *tq, uint16_t cid)
{
	tq->cid_bits[cid >> 6] &= ~(1ull << (cid & 63));
}

void tcp_req_release(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;

	if (tr->state == TCP_REQ_FREE)
		return;
	if (tr->state == TCP_REQ_NEED_BUFFER)
		TAILQ_REMOVE(&tq->buf_waitq, tr, link);
	if (nvmf_req_data_mapped(&tr->req)) {
		/* Sent (or dropped): the namespace may go now. */
		TCP_STAT_ADD(tq, c2h_mapped, 1);
		nvmf_req_release_data(&tr->req);
	}
	bufs_return(tr);
	if (tr->cid_owned)
		cid_clear(tq, tr->cid);
	tr->cid_owned = false;
	tcp_req_set_state(tr, TCP_REQ_FREE);
	tq->outstanding--;
	if (tr->h2c_drain && !tq->closing) {
		/* parked until the host's late H2CData is in (tcp_req_drained), or until the
		 * R2T deadline ends the queue (tcp_qpair_r2t_check) */
		tq->parked++;
		return;
	}
	tr->h2c_drain = false;
	TAILQ_INSERT_HEAD(&tq->free_reqs, tr, link); /* LIFO: warm slots first */

	if (tq->closing)
		tcp_qpair_check_done(tq);
	else if (tq->rx_paused)
		reactor_defer(tq->r, &tq->resume_work);
}

/*
 * A request's data (req.iov) comes from one of two places:
 *  - its slot's own buffer of icd_size bytes (the in-capsule data size, as SPDK keeps per
 *    request): in-capsule data, Connect, admin commands and reads that move no more than
 *    that (tcp_req_icd_fits).
 *    These never wait for the reactor pool, so hosts that fill the pool can neither stall
 *    another host's Connect and admin commands nor park a receive machine at in-capsule
 *    data behind writes whose data is still to come;
 *  - chunks of the reactor pool, within two shares: a queue holds at most queue_cap
 *    chunks, and all queues of one host on this reactor at most host_cap. A request over
 *    a share waits (share_wait) until its own queue or host gives chunks back; it never
 *    takes those the other hosts' I/O needs. In-capsule data larger than a slot's buffer
 *    (in_capsule_size above TCP_ICD_MAX) is already on the wire and is not held back by a
 *    share, only by an empty pool. A queue not yet through Connect has no pool share.
 */
void tcp_req_share_caps(struct tcp_qpair *tq, uint32_t pool_limit, size_t chunk, uint32_t max_io)
{
	uint32_t per_io = chunk ? (uint32_t)((max_io + chunk - 1) / chunk) : 1;

	if (per_io == 0)
		per_io = 1;
	/* at least one largest command, or nothing could ever be served */
	tq->queue_cap = pool_limit / TCP_POOL_QUEUE_SHARE;
	if (tq->queue_cap < per_io)
		tq->queue_cap = per_io;
	tq->host_cap = pool_limit / TCP_POOL_HOST_SHARE;
	if (tq->host_cap < per_io)
		tq->host_cap = per_io;
}

/* Small enough for the slot's own buffer, and not an I/O write by R2T: the host decides
 * when (and whether) that data comes, so those stay within the pool shares rather than
 * let a host fill every slot's buffer of every queue it has. */
bool tcp_req_icd_fits(const struct tcp_qpair *tq, const struct tcp_req *tr)
{
	return tq->icd && tr->req.length <= tq->icd_size &&
	       (tr->plan != TCP_PLAN_R2T || tq->qp.qid == 0 || !tq->qp.connected ||
		tr->req.cmd.opc == NVME_OPC_FABRICS);
}

static unsigned int *host_bufs(struct tcp_qpair *tq)
{
	return nvmf_host_share_bufs(tq->qp.host, tq->r->id);
}

/* Give back what the request holds; queues waiting for their share may go on. */
static void bufs_return(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;

	if (tr->nbufs) {
		unsigned int *hb = host_bufs(tq);

		for (int i = 0; i < tr->nbufs; i++)
			reactor_buf_put(tq->r, tr->bufs[i]);
		tq->bufs_held -= (uint32_t)tr->nbufs;
		if (hb)
			*hb -= (unsigned int)tr->nbufs;
		if (tq->tr && !TAILQ_EMPTY(&tq->tr->share_waitq))
			reactor_defer(tq->r, &tq->tr->share_work);
	}
	tr->icd = false;
	tr->nbufs = 0;
	tr->req.iovcnt = 0;
}

/*
 * Buffers covering req.length, described by req.iov. 0; -EAGAIN: over the queue's or the
 * host's share: wait for this queue's or host's own buffers; -ENOMEM: the pool is empty.
 */
int tcp_req_get_buffers(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;
	size_t chunk = reactor_buf_size();
	uint32_t left = tr->req.length;
	uint32_t need = (uint32_t)((left + chunk - 1) / chunk);
	unsigned int *hb;
	int n = 0;

	if (tcp_req_icd_fits(tq, tr)) {
		tr->icd = true;
		tq->icd_dirty = true;
		tr->req.iov[0].iov_base = tq->icd + (size_t)tr->ttag * tq->icd_size;
		tr->req.iov[0].iov_len = left;
		tr->req.iovcnt = left ? 1 : 0;
		return 0;
	}
	if (need > NVMF_REQ_MAX_IOV)
		return -ENOMEM;
	hb = host_bufs(tq);
	if (tr->plan != TCP_PLAN_IN_CAPSULE &&
	    (!tq->qp.connected || tq->bufs_held + need > tq->queue_cap ||
	     (hb && *hb + need > tq->host_cap)))
		return -EAGAIN;
	while (left) {
		void *b;
		size_t len = left < chunk ? left : chunk;

		b = reactor_buf_get(tq->r);
		if (!b)
			goto fail;
		tr->bufs[n] = b;
		tr->req.iov[n].iov_base = b;
		tr->req.iov[n].iov_len = len;
		n++;
		left -= (uint32_t)len;
	}
	tr->nbufs = n;
	tr->req.iovcnt = n;
	tq->bufs_held += (uint32_t)n;
	if (hb)
		*hb += (unsigned int)n;
	return 0;
fail:
	while (n--)
		reactor_buf_put(tq->r, tr->bufs[n]);
	tr->nbufs = 0;
	tr->req.iovcnt = 0;
	return -ENOMEM;
}

/* The queue's next request is over its share: try again when buffers come back here. */
static void share_wait(struct tcp_qpair *tq)
{
	if (tq->share_waiting || !tq->tr)
		return;
	tq->share_waiting = true;
	TAILQ_INSERT_TAIL(&tq->tr->share_waitq, tq, share_link);
	TCP_STAT_ADD(tq, share_waits, 1);
}

static void buf_wait(struct tcp_qpair *tq, int why)
{
	if (why == -EAGAIN)
		share_wait(tq);
	else if (why == -ENOMEM)
		reactor_buf_wait(tq->r, &tq->buf_work);
	/* 0: not tried, a request ahead of it waits already */
}

void tcp_req_wait_buffers(struct tcp_req *tr, int why)
{
	struct tcp_qpair *tq = tr->tq;

	tcp_req_set_state(tr, TCP_REQ_NEED_BUFFER);
	TAILQ_INSERT_TAIL(&tq->buf_waitq, tr, link);
	buf_wait(tq, why);
}

/* Buffers came back to the pool: serve waiting requests in arrival order. */
void tcp_req_buf_ready(void *arg)
{
	struct tcp_qpair *tq = arg;
	struct tcp_req *tr;

	while (!tq->closing && (tr = TAILQ_FIRST(&tq->buf_waitq)) != NULL) {
		int rc = tcp_req_get_buffers(tr);

		if (rc != 0) {
			buf_wait(tq, rc);
			return;
		}
		TAILQ_REMOVE(&tq->buf_waitq, tr, link);
		tcp_req_start(tr);
	}
}

/* A queue on this reactor gave buffers back: the queues waiting for a share try again
 * (those still over it go back to the end of the list). */
void tcp_req_share_ready(void *arg)
{
	struct tcp_reactor *trr = arg;
	struct tcp_qpair *tq;
	unsigned int n = 0;

	TAILQ_FOREACH(tq, &trr->share_waitq, share_link)
	n++;
	while (n-- && (tq = TAILQ_FIRST(&trr->share_waitq)) != NULL) {
		TAILQ_REMOVE(&trr->share_waitq, tq, share_link);
		tq->share_waiting = false;
		tcp_req_buf_ready(tq);
	}
}

void tcp_req_execute(struct tcp_req *tr)
{
	uint16_t st = tr->err_status;

	if (tr->state != TCP_REQ_READY_TO_EXECUTE)
		tcp_req_set_state(tr, TCP_REQ_READY_TO_EXECUTE);
	tcp_req_set_state(tr, TCP_REQ_EXECUTING);
	if (st) {
		nvmf_req_complete_status(&tr->req, NVME_STATUS_SCT(st), NVME_STATUS_SC(st),
					 !!(st & NVME_STATUS_DNR));
		return;
	}
	if (tr->ddgst_err) {
		/* Data digest mismatch: the command fails and may be retried (TCP transport
		 * spec: Transient Transport Error), the connection stays up. */
		nvmf_req_complete_status(&tr->req, NVME_SCT_GENERIC,
					 NVME_SC_TRANSIENT_TRANSPORT_ERROR, false);
		return;
	}
	nvmf_req_exec(&tr->req);
}

void tcp_req_drained(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;

	tr->h2c_drain = false;
	if (tr->state != TCP_REQ_FREE)
		return; /* its response is still going out: released as usual */
	tq->parked--;
	TAILQ_INSERT_HEAD(&tq->free_reqs, tr, link);
	if (tq->rx_paused)
		reactor_defer(tq->r, &tq->resume_work);
}

/*
 * ops->req_abort: a command the transport still holds back is completed with Command
 * Abort Requested. Waiting for buffers: it leaves the wait list (in-capsule data it
 * carries is read and dropped). Receiving in-capsule data or H2CData after R2T: its
 * buffers go back now and the rest of its data is dropped as it arrives; an R2T not
 * yet on the wire is withdrawn; the slot (TTAG) is reused only once the host has sent
 * all it was asked for, so late H2CData PDUs are recognised and discarded.
 */
bool tcp_req_abort(struct nvmf_qpair *qp, uint16_t cid)
{
	struct tcp_qpair *tq = tcp_qpair_of(qp);
	const uint16_t st = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED);
	struct tcp_req *tr = NULL;
	bool rx_here;

	if (tq->closing || tq->rx_state >= TCP_RX_QUIESCING)
		return false;
	for (uint32_t i = 0; i < tq->nreqs_ready; i++) {
		struct tcp_req *t = &tq->reqs[i];

		if (t->state != TCP_REQ_FREE && t->cid_owned && t->cid == cid) {
			tr = t;
			break;
		}
	}
	if (!tr)
		return false;
	rx_here = tq->rx_state == TCP_RX_AWAIT_PAYLOAD && tq->rx_req == tr;
	switch (tr->state) {
	case TCP_REQ_NEED_BUFFER:
		if (tr->plan == TCP_PLAN_IN_CAPSULE && !rx_here)
			return false;
		TAILQ_REMOVE(&tq->buf_waitq, tr, link);
		tr->err_status = st;
		if (tr->plan == TCP_PLAN_IN_CAPSULE) {
			/* the receive machine is parked at its payload: drop it, then complete */
			tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_H2C);
			tq->rx_discard = true;
			reactor_defer(tq->r, &tq->resume_work);
			return true;
		}
		tcp_req_execute(tr);
		return true;
	case TCP_REQ_TRANSFERRING_H2C:
		if (tr->plan == TCP_PLAN_IN_CAPSULE) {
			if (!rx_here)
				return false;
			tr->err_status = st;
			tq->rx_discard = true; /* completes when the capsule's payload is in */
			return true;
		}
		if (tr->r2t_queued) {
			if (TAILQ_FIRST(&tq->txq) == &tr->tx && tq->tx_off)
				return false; /* partly on the wire */
			TAILQ_REMOVE(&tq->txq, &tr->tx, link);
			tr->r2t_queued = false;
			tr->r2t_end = tr->h2c_next; /* the host never saw it */
		}
		if (rx_here)
			tq->rx_discard = true; /* a PDU of its data is arriving right now */
		tr->h2c_drain = tr->h2c_next < tr->r2t_end;
		bufs_return(tr); /* the slot may wait for late data, its buffers do not */
		tr->err_status = st;
		tcp_req_execute(tr);
		return true;
	default:
		return false; /* executing, or completing */
	}
}

/* Allow slots up to @upto; they are set up when commands need them (tcp_req_get). */
void tcp_req_slots_add(struct tcp_qpair *tq, uint32_t upto)
{
	if (upto > tq->nreqs)
		upto = tq->nreqs;
	if (upto > tq->nreqs_limit)
		tq->nreqs_limit = upto;
}

/* The host owes H2CData for an R2T (or, aborted, still owes what an R2T asked for) and
 * has not sent it for @limit seconds. */
bool tcp_req_r2t_late(const struct tcp_req *tr, ev_tstamp now, ev_tstamp limit)
{
	bool owed = tr->h2c_drain ||
		    (tr->state == TCP_REQ_TRANSFERRING_H2C && tr->plan == TCP_PLAN_R2T);

	return limit > 0 && owed && now - tr->r2t_at >= limit;
}
