/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP connection (queue pair) and request lifetime: creation on accept, binding to a
 * reactor, the request slot pool and its state machine, data buffers from the reactor
 * pool, and teardown (stop I/O, wait for requests the backend still owns, then
 * nvmf_qpair_fini() and free).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "tcp_internal.h"

#define TCP_LINGER_S 2.0 /* how long a C2HTermReq may take to leave before we close */

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
 * Legal transitions (from -> bit set of targets). Anything else is a bug in this file
 * set; it is logged once and allowed so a production daemon keeps running.
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

void tcp_req_set_state(struct tcp_req *tr, enum tcp_req_state s)
{
	if (!(req_next[tr->state] & (1u << s))) {
		static struct log_ratelimit rl;

		log_msg_rl(&rl, LOG_LVL_ERR, "%s: request cid %u: illegal transition %s -> %s",
			   tr->tq->qp.peer, tr->cid, tcp_req_state_name(tr->state),
			   tcp_req_state_name(s));
	}
	tr->state = s;
}

/* ---- request slots ------------------------------------------------------------------- */

struct tcp_req *tcp_req_get(struct tcp_qpair *tq)
{
	struct tcp_req *tr = TAILQ_FIRST(&tq->free_reqs);

	if (!tr)
		return NULL;
	TAILQ_REMOVE(&tq->free_reqs, tr, link);
	tq->outstanding++;
	tr->icdata = false;
	tr->ddgst_err = false;
	tr->err_status = 0;
	tr->cid_owned = false;
	tr->h2c_next = 0;
	tr->r2t_end = 0;
	tr->c2h_len = 0;
	tr->r2t_queued = false;
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
	for (int i = 0; i < tr->nbufs; i++)
		reactor_buf_put(tq->r, tr->bufs[i]);
	tr->nbufs = 0;
	tr->req.iovcnt = 0;
	if (tr->cid_owned)
		cid_clear(tq, tr->cid);
	tr->cid_owned = false;
	tcp_req_set_state(tr, TCP_REQ_FREE);
	TAILQ_INSERT_HEAD(&tq->free_reqs, tr, link); /* LIFO: warm slots first */
	tq->outstanding--;

	if (tq->closing)
		tcp_qpair_check_done(tq);
	else if (tq->rx_paused)
		reactor_defer(tq->r, &tq->resume_work);
}

/* Chunks from the reactor pool covering req.length, described by req.iov. */
int tcp_req_get_buffers(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;
	size_t chunk = reactor_buf_size();
	uint32_t left = tr->req.length;
	int n = 0;

	while (left) {
		void *b;
		size_t len = left < chunk ? left : chunk;

		if (n == NVMF_REQ_MAX_IOV)
			goto fail;
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
	return 0;
fail:
	while (n--)
		reactor_buf_put(tq->r, tr->bufs[n]);
	tr->nbufs = 0;
	tr->req.iovcnt = 0;
	return -ENOMEM;
}

void tcp_req_wait_buffers(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;

	tcp_req_set_state(tr, TCP_REQ_NEED_BUFFER);
	TAILQ_INSERT_TAIL(&tq->buf_waitq, tr, link);
	reactor_buf_wait(tq->r, &tq->buf_work);
}

/* Buffers came back to the pool: serve waiting requests in arrival order. */
static void tcp_buf_ready(void *arg)
{
	struct tcp_qpair *tq = arg;
	struct tcp_req *tr;

	while (!tq->closing && (tr = TAILQ_FIRST(&tq->buf_waitq)) != NULL) {
		if (tcp_req_get_buffers(tr) != 0) {
			reactor_buf_wait(tq->r, &tq->buf_work);
			return;
		}
		TAILQ_REMOVE(&tq->buf_waitq, tr, link);
		if (tr->icdata) {
			/* The receive machine is parked at this request's payload. */
			tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_H2C);
			reactor_defer(tq->r, &tq->resume_work);
		} else if (tr->req.xfer == NVME_XFER_HOST_TO_CTRLR) {
			tcp_send_r2t(tr);
		} else {
			tcp_req_set_state(tr, TCP_REQ_READY_TO_EXECUTE);
			tcp_req_execute(tr);
		}
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

/* Put slots [nreqs_ready, @upto) on the free list (calloc'd: untouched until now). */
void tcp_req_slots_add(struct tcp_qpair *tq, uint32_t upto)
{
	if (upto > tq->nreqs)
		upto = tq->nreqs;
	for (uint32_t i = tq->nreqs_ready; i < upto; i++) {
		struct tcp_req *tr = &tq->reqs[i];

		tr->tq = tq;
		tr->ttag = (uint16_t)i;
		tr->req.qpair = &tq->qp;
		tr->state = TCP_REQ_FREE;
		TAILQ_INSERT_TAIL(&tq->free_reqs, tr, link);
	}
	if (upto > tq->nreqs_ready)
		tq->nreqs_ready = upto;
}

/* ---- connection lifetime ---------------------------------------------------------------- */

struct tcp_qpair *tcp_qpair_create(int fd, struct nvmf_tgt *tgt, struct nvmf_port *port,
				   const char *peer)
{
	struct tcp_qpair *tq = calloc(1, sizeof(*tq));

	if (!tq)
		return NULL;
	tq->fd = fd;
	tq->qp.tgt = tgt;
	tq->qp.port = port;
	snprintf(tq->qp.peer, sizeof(tq->qp.peer), "%s", peer);
	return tq;
}

static void tcp_linger_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcp_qpair *tq = w->data;

	tcp_qpair_close(tq, "peer did not take the termination request");
}

static void tcp_qpair_free(void *arg)
{
	struct tcp_qpair *tq = arg;
	struct tcp_reactor *trr = tq->tr;

	if (tq->freed)
		return;
	tq->freed = true;
	if (trr) {
		TAILQ_REMOVE(&trr->conns, tq, link);
		trr->nconns--;
	}
	tcp_conn_gone_stats(&tq->stats, tq->stats.term_reqs_tx != 0);
	nvmf_qpair_fini(&tq->qp);
	free(tq->reqs);
	free(tq->rbuf);
	free(tq->cid_bits);
	free(tq);
}

void tcp_qpair_check_done(struct tcp_qpair *tq)
{
	if (tq->closing && tq->outstanding == 0 && !tq->freed)
		reactor_defer(tq->r, &tq->fini_work);
}

void tcp_qpair_start(void *arg)
{
	struct tcp_qpair *tq = arg;
	struct reactor *r = reactor_self();
	struct nvmf_tgt *tgt = tq->qp.tgt;
	char peer[sizeof(tq->qp.peer)];
	uint32_t n, icsz;

	memcpy(peer, tq->qp.peer, sizeof(peer));
	nvmf_qpair_init(&tq->qp, &nvmf_tcp_transport_ops, tgt, tq->qp.port, r);
	memcpy(tq->qp.peer, peer, sizeof(peer));
	tq->r = r;
	tq->loop = r->loop;
	tq->tr = tcp_reactor_get(r);

	n = tgt->opts.max_queue_depth > tgt->opts.max_admin_depth ? tgt->opts.max_queue_depth
								   : tgt->opts.max_admin_depth;
	if (n < 2)
		n = 2;
	if (n > 65535)
		n = 65535;
	tq->nreqs = n;
	tq->reqs = calloc(n, sizeof(*tq->reqs));
	tq->rbuf = malloc(TCP_RBUF_SIZE);
	tq->cid_bits = calloc(65536 / 64, sizeof(uint64_t));
	TAILQ_INIT(&tq->free_reqs);
	TAILQ_INIT(&tq->buf_waitq);
	TAILQ_INIT(&tq->txq);
	tq->buf_work.fn = tcp_buf_ready;
	tq->buf_work.arg = tq;
	tq->resume_work.fn = tcp_rx_resume;
	tq->resume_work.arg = tq;
	tq->flush_work.fn = tcp_flush;
	tq->flush_work.arg = tq;
	tq->fini_work.fn = tcp_qpair_free;
	tq->fini_work.arg = tq;
	ev_init(&tq->linger, tcp_linger_cb);
	tq->linger.data = tq;
	if (tq->tr) {
		TAILQ_INSERT_TAIL(&tq->tr->conns, tq, link);
		tq->tr->nconns++;
	}

	if (!tq->reqs || !tq->rbuf || !tq->cid_bits || !tq->tr) {
		log_err("%s: out of memory setting up the connection", tq->qp.peer);
		tq->closing = true;
		close(tq->fd);
		tq->fd = -1;
		nvmf_qpair_disconnected(&tq->qp);
		tcp_qpair_check_done(tq);
		return;
	}
	tcp_req_slots_add(tq, tgt->opts.max_admin_depth < n ? tgt->opts.max_admin_depth : n);

	/* Until Connect says which queue this is, accept the larger in-capsule size. */
	icsz = tcp_io_icdata(&tq->qp);
	tq->p.max_icdata = icsz > TCP_ADMIN_ICDATA ? icsz : TCP_ADMIN_ICDATA;
	tq->p.maxh2cdata = tcp_maxh2cdata(tgt);
	tq->rx_state = TCP_RX_AWAIT_CH;

	ev_io_init(&tq->rio, tcp_read_cb, tq->fd, EV_READ);
	tq->rio.data = tq;
	ev_io_init(&tq->wio, tcp_write_cb, tq->fd, EV_WRITE);
	tq->wio.data = tq;
	ev_io_start(tq->loop, &tq->rio);
	tq->rio_on = true;
	log_info("%s: connected on reactor %u", tq->qp.peer, r->id);
}

/*
 * Stop all I/O on the connection. Requests the core/backend owns (EXECUTING) finish on
 * their own and are released in req_complete; everything else is released now. The
 * queue pair is freed once the last one is gone.
 */
void tcp_qpair_close(struct tcp_qpair *tq, const char *why)
{
	if (tq->closing)
		return;
	tq->closing = true;
	if (tq->rx_state != TCP_RX_QUIESCING)
		log_info("%s: connection closed (%s)", tq->qp.peer, why);
	else
		log_debug("%s: closing after termination request (%s)", tq->qp.peer, why);
	tcp_rx_set_state(tq, TCP_RX_ERROR);

	if (tq->rio_on)
		ev_io_stop(tq->loop, &tq->rio);
	if (tq->wio_on)
		ev_io_stop(tq->loop, &tq->wio);
	tq->rio_on = tq->wio_on = false;
	ev_timer_stop(tq->loop, &tq->linger);
	reactor_defer_cancel(tq->r, &tq->flush_work);
	reactor_defer_cancel(tq->r, &tq->resume_work);
	reactor_buf_wait_cancel(tq->r, &tq->buf_work);
	tcp_tx_drop_all(tq);
	if (tq->fd >= 0) {
		close(tq->fd);
		tq->fd = -1;
	}

	for (uint32_t i = 0; i < tq->nreqs; i++) {
		struct tcp_req *tr = &tq->reqs[i];

		if (tr->state != TCP_REQ_FREE && tr->state != TCP_REQ_EXECUTING)
			tcp_req_release(tr);
	}
	/* The core completes what it parks (AERs) now; those completions just release. */
	nvmf_qpair_disconnected(&tq->qp);
	tcp_qpair_check_done(tq);
}

/* After a fatal error: keep the TermReq going out for a while, then close. */
void tcp_qpair_linger(struct tcp_qpair *tq)
{
	ev_timer_set(&tq->linger, TCP_LINGER_S, 0.);
	ev_timer_start(tq->loop, &tq->linger);
}

/* ---- ops: disconnect ------------------------------------------------------------------ */

void tcp_qpair_disconnect(struct nvmf_qpair *qp)
{
	tcp_qpair_close(tcp_qpair_of(qp), "disconnected by the target");
}
