/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA connection (queue pair) on its reactor: set-up from a connection request
 * (private data checks, CQ + completion channel, QP, registered capsule and response
 * buffers, receives posted, accept), completion processing driven by the completion
 * channel's file descriptor, the per-request state machine, and teardown.
 *
 * A request slot is tied to one receive buffer: a command capsule arrives by SEND into it,
 * write data comes in the capsule (in-capsule data) or by RDMA READ from the host's keyed
 * buffer into a registered pool chunk, read data goes back by RDMA WRITE, and the response
 * capsule by SEND (with Invalidate when the host asked for it), after which the receive
 * buffer is posted again. Work requests queued during one loop iteration are posted with
 * one ibv_post_send()/ibv_post_recv() call each, as reactor deferred work.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/log.h"
#include "rdma_internal.h"

static const char *const req_state_names[RDMA_REQ_NSTATES] = {
	[RDMA_REQ_FREE] = "FREE",
	[RDMA_REQ_NEED_BUFFER] = "NEED_BUFFER",
	[RDMA_REQ_TRANSFERRING_H2C] = "TRANSFERRING_H2C",
	[RDMA_REQ_EXECUTING] = "EXECUTING",
	[RDMA_REQ_TRANSFERRING_C2H] = "TRANSFERRING_C2H",
};

const char *rdma_req_state_name(enum rdma_req_state s)
{
	return s < RDMA_REQ_NSTATES ? req_state_names[s] : "?";
}

/* Legal transitions (from -> bit set of targets); others are logged (a bug here). */
#define B(s) (1u << (s))
static const uint32_t req_next[RDMA_REQ_NSTATES] = {
	[RDMA_REQ_FREE] = B(RDMA_REQ_NEED_BUFFER) | B(RDMA_REQ_TRANSFERRING_H2C) |
			  B(RDMA_REQ_EXECUTING),
	[RDMA_REQ_NEED_BUFFER] = B(RDMA_REQ_TRANSFERRING_H2C) | B(RDMA_REQ_EXECUTING) |
				 B(RDMA_REQ_FREE),
	[RDMA_REQ_TRANSFERRING_H2C] = B(RDMA_REQ_EXECUTING) | B(RDMA_REQ_FREE),
	[RDMA_REQ_EXECUTING] = B(RDMA_REQ_TRANSFERRING_C2H) | B(RDMA_REQ_FREE),
	[RDMA_REQ_TRANSFERRING_C2H] = B(RDMA_REQ_FREE),
};
#undef B

static void req_set_state(struct rdma_req *rr, enum rdma_req_state s)
{
	struct rdma_qpair *rq = rr->rq;

	if (!(req_next[rr->state] & (1u << s))) {
		static struct log_ratelimit rl;

		log_msg_rl(&rl, LOG_LVL_ERR, "%s: rdma request cid %u: illegal transition %s -> %s",
			   rq->qp.peer, rr->cid, rdma_req_state_name(rr->state),
			   rdma_req_state_name(s));
	}
	if (rr->state == RDMA_REQ_EXECUTING)
		rq->executing--;
	if (s == RDMA_REQ_EXECUTING)
		rq->executing++;
	rr->state = s;
}

static int rdma_qpair_connected(struct rdma_qpair *rq);

/* ---- batched posting ------------------------------------------------------------------------- */

static void queue_send(struct rdma_qpair *rq, struct ibv_send_wr *first, struct ibv_send_wr *last)
{
	last->next = NULL;
	if (rq->send_tail)
		rq->send_tail->next = first;
	else
		rq->send_head = first;
	rq->send_tail = last;
	reactor_defer(rq->r, &rq->flush_work);
}

static void queue_recv(struct rdma_qpair *rq, struct rdma_recv *rv)
{
	rv->wr.next = NULL;
	if (rq->recv_tail)
		rq->recv_tail->next = &rv->wr;
	else
		rq->recv_head = &rv->wr;
	rq->recv_tail = &rv->wr;
	reactor_defer(rq->r, &rq->flush_work);
}

/* Reactor deferred work: post what this loop iteration queued (receives first, so the host
 * can send again as soon as possible). */
static void rdma_flush(void *arg)
{
	struct rdma_qpair *rq = arg;
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	int rc;

	if (rq->closing)
		return;
	if (rq->recv_head) {
		rc = ibv_post_recv(rq->cm_id->qp, rq->recv_head, &rbad);
		rq->recv_head = rq->recv_tail = NULL;
		rq->stats.post_recv_calls++;
		if (rc) {
			log_peer("%s: ibv_post_recv: %s", rq->qp.peer, strerror(rc));
			rdma_qpair_close(rq, "cannot post receive buffers");
			return;
		}
	}
	if (rq->send_head) {
		rc = ibv_post_send(rq->cm_id->qp, rq->send_head, &sbad);
		rq->send_head = rq->send_tail = NULL;
		rq->stats.post_send_calls++;
		if (rc) {
			log_peer("%s: ibv_post_send: %s", rq->qp.peer, strerror(rc));
			rdma_qpair_close(rq, "cannot post work requests");
		}
	}
}

/* ---- requests -------------------------------------------------------------------------------- */

static void check_done(struct rdma_qpair *rq)
{
	if (rq->closing && rq->executing == 0 && !rq->freed)
		reactor_defer(rq->r, &rq->fini_work);
}

static void req_release(struct rdma_req *rr)
{
	struct rdma_qpair *rq = rr->rq;

	if (rr->state == RDMA_REQ_FREE)
		return;
	if (rr->state == RDMA_REQ_NEED_BUFFER)
		rdma_pool_wait_cancel(rq->pool, rr);
	if (rr->chunk) {
		rdma_pool_give(rq->pool, rr->chunk);
		rr->chunk = NULL;
	}
	if (rr->recv && !rq->closing)
		queue_recv(rq, rr->recv);
	rr->recv = NULL;
	rr->req.iovcnt = 0;
	req_set_state(rr, RDMA_REQ_FREE);
	TAILQ_INSERT_HEAD(&rq->free_reqs, rr, link); /* LIFO: warm slots first */
	rq->outstanding--;
	if (rq->pending_count && !rq->closing)
		reactor_defer(rq->r, &rq->rx_work);
}

static void req_execute(struct rdma_req *rr)
{
	uint16_t st = rr->err_status;

	req_set_state(rr, RDMA_REQ_EXECUTING);
	if (st) {
		nvmf_req_complete_status(&rr->req, NVME_STATUS_SCT(st), NVME_STATUS_SC(st),
					 !!(st & NVME_STATUS_DNR));
		return;
	}
	nvmf_req_exec(&rr->req);
}

/* The request has its data buffer: fetch write data, or run the command. */
/*
 * Chain one RDMA @op per keyed descriptor over the first @len bytes of the request's
 * buffer, unsignaled (the caller signals the last, or the SEND after it: an RC send queue
 * completes in order). Returns the last work request, NULL when nothing moves.
 */
static struct ibv_send_wr *data_wrs(struct rdma_req *rr, enum ibv_wr_opcode op,
				    enum rdma_wr_kind kind, uint32_t len)
{
	struct ibv_send_wr *last = NULL;
	uint32_t off = 0;

	for (uint32_t i = 0; i < rr->sgl.ndesc && off < len; i++) {
		struct ibv_send_wr *wr = &rr->data_wr[i];
		struct ibv_sge *sge = &rr->data_sge[i];
		uint32_t n = rr->sgl.desc[i].len;

		if (n > len - off)
			n = len - off;
		sge->addr = (uintptr_t)rr->chunk->addr + off;
		sge->length = n;
		sge->lkey = rr->chunk->lkey;
		wr->wr_id = RDMA_WR_ID(rr->idx, kind);
		wr->sg_list = sge;
		wr->num_sge = 1;
		wr->opcode = op;
		wr->send_flags = 0;
		wr->wr.rdma.remote_addr = rr->sgl.desc[i].addr;
		wr->wr.rdma.rkey = rr->sgl.desc[i].key;
		if (last)
			last->next = wr;
		last = wr;
		off += n;
	}
	if (last)
		last->next = NULL;
	return last;
}

static void req_data_start(struct rdma_req *rr)
{
	struct rdma_qpair *rq = rr->rq;
	struct ibv_send_wr *last;

	rr->req.iov[0].iov_base = rr->chunk->addr;
	rr->req.iov[0].iov_len = rr->req.length;
	rr->req.iovcnt = 1;
	if (rr->req.xfer != NVME_XFER_HOST_TO_CTRLR) {
		req_execute(rr);
		return;
	}
	last = data_wrs(rr, IBV_WR_RDMA_READ, RDMA_WR_READ, rr->req.length);
	if (!last) {
		req_execute(rr);
		return;
	}
	last->send_flags = IBV_SEND_SIGNALED;
	req_set_state(rr, RDMA_REQ_TRANSFERRING_H2C);
	rq->stats.rdma_reads += rr->sgl.ndesc;
	queue_send(rq, &rr->data_wr[0], last);
}

void rdma_req_buffer_ready(struct rdma_req *rr)
{
	req_data_start(rr);
}

/* A command capsule of @len bytes arrived in @rv: start the free request @rr on it. */
static void rx_capsule(struct rdma_qpair *rq, struct rdma_req *rr, struct rdma_recv *rv,
		       uint32_t len)
{
	struct nvmf_req *req = &rr->req;
	struct rdma_sgl_limits lim = {
		.max_io = rq->qp.tgt->opts.max_io_size,
		.max_desc = rq->desc_max,
	};
	uint32_t dw0;
	uint16_t st;

	TAILQ_REMOVE(&rq->free_reqs, rr, link);
	rq->outstanding++;
	rr->recv = rv;
	memcpy(&req->cmd, rv->capsule, sizeof(req->cmd));
	rr->cid = get_le16(&req->cmd.cid);
	rr->err_status = 0;
	rr->chunk = NULL;
	req->length = 0;
	req->iovcnt = 0;
	memset(&req->rsp, 0, sizeof(req->rsp));
	req->xfer = nvmf_req_xfer(&req->cmd, rq->cm.qid == 0);
	st = rdma_connect_qid_check(&req->cmd, rq->cm.qid, &dw0);
	if (st) {
		log_peer("%s: Connect for queue %u on the queue the RDMA CM request set up as %u",
			 rq->qp.peer, get_le16(&((const struct nvmf_connect_cmd *)&req->cmd)->qid),
			 rq->cm.qid);
		put_le32(&req->rsp.dw0, dw0);
		rr->err_status = st;
		memset(&rr->sgl, 0, sizeof(rr->sgl));
		req_execute(rr);
		return;
	}
	st = rdma_sgl_parse(&req->cmd, req->xfer, rv->capsule + sizeof(struct nvme_cmd),
			    len - (uint32_t)sizeof(struct nvme_cmd), &lim, &rr->sgl);
	if (st) {
		log_debug("%s: cid %u: SGL type 0x%02x rejected (status 0x%04x)", rq->qp.peer,
			  rr->cid, req->cmd.dptr.sgl1.type, st);
		rr->err_status = st;
		memset(&rr->sgl, 0, sizeof(rr->sgl));
		req_execute(rr);
		return;
	}
	switch (rr->sgl.kind) {
	case RDMA_SGL_NONE:
		req_execute(rr);
		return;
	case RDMA_SGL_INLINE:
		req->length = rr->sgl.len;
		req->iov[0].iov_base = rv->capsule + sizeof(struct nvme_cmd) + rr->sgl.offset;
		req->iov[0].iov_len = rr->sgl.len;
		req->iovcnt = 1;
		rq->stats.inline_writes++;
		req_execute(rr);
		return;
	case RDMA_SGL_KEYED:
		req->length = rr->sgl.len;
		/* Keep arrival order: nobody overtakes requests already waiting. */
		if (TAILQ_EMPTY(&rq->pool->waiters))
			rr->chunk = rdma_pool_take(rq->pool);
		if (!rr->chunk) {
			req_set_state(rr, RDMA_REQ_NEED_BUFFER);
			rdma_pool_wait(rq->pool, rr);
			return;
		}
		req_data_start(rr);
		return;
	}
}

/* A receive completed: serve it now, or queue it until a request is free. */
static void rx_recv(struct rdma_qpair *rq, uint32_t idx, uint32_t len)
{
	struct rdma_req *rr = TAILQ_FIRST(&rq->free_reqs);

	rq->stats.recv_capsules++;
	if (len < sizeof(struct nvme_cmd)) {
		log_peer("%s: command capsule of %u bytes", rq->qp.peer, len);
		rdma_qpair_close(rq, "short command capsule");
		return;
	}
	if (rr && rq->pending_count == 0) {
		rx_capsule(rq, rr, &rq->recvs[idx], len);
		return;
	}
	if (rq->pending_count == rq->nrecvs) {
		rdma_qpair_close(rq, "more capsules than receive buffers");
		return;
	}
	rq->pending[(rq->pending_head + rq->pending_count) % rq->nrecvs] = idx;
	rq->pending_len[(rq->pending_head + rq->pending_count) % rq->nrecvs] = len;
	rq->pending_count++;
}

/* Reactor deferred work: capsules that waited for a free request. */
static void rx_pending(void *arg)
{
	struct rdma_qpair *rq = arg;
	struct rdma_req *rr;

	while (!rq->closing && rq->pending_count && (rr = TAILQ_FIRST(&rq->free_reqs)) != NULL) {
		uint32_t idx = rq->pending[rq->pending_head];
		uint32_t len = rq->pending_len[rq->pending_head];

		rq->pending_head = (rq->pending_head + 1) % rq->nrecvs;
		rq->pending_count--;
		rx_capsule(rq, rr, &rq->recvs[idx], len);
	}
}

/* ops->req_complete: send read data (if any) and the response, then recycle. */
void rdma_req_complete(struct nvmf_req *req)
{
	struct rdma_req *rr = rdma_req_of(req);
	struct rdma_qpair *rq = rr->rq;
	struct ibv_send_wr *first = &rr->rsp_wr;
	uint16_t status = get_le16(&req->rsp.status) & ~1u;
	bool ok = NVME_STATUS_SCT(status) == NVME_SCT_GENERIC &&
		  NVME_STATUS_SC(status) == NVME_SC_SUCCESS;

	if (rq->closing) {
		req_release(rr);
		check_done(rq);
		return;
	}
	/* Connect went through: every receive buffer is posted before the host hears so. */
	if (!rq->connect_seen && rq->qp.connected && rdma_qpair_connected(rq) != 0) {
		req_release(rr);
		check_done(rq);
		return;
	}
	/* The capsule is consumed: its buffer can take the next command before we answer. */
	if (rr->recv) {
		queue_recv(rq, rr->recv);
		rr->recv = NULL;
	}
	memcpy(rr->rsp, &req->rsp, sizeof(*rr->rsp));
	if (ok && req->xfer == NVME_XFER_CTRLR_TO_HOST && req->length && rr->chunk) {
		/* The response SEND after the writes is signaled. */
		struct ibv_send_wr *last =
			data_wrs(rr, IBV_WR_RDMA_WRITE, RDMA_WR_WRITE, req->length);

		if (last) {
			last->next = &rr->rsp_wr;
			first = &rr->data_wr[0];
			rq->stats.rdma_writes += rr->sgl.ndesc;
		}
	}
	if (rr->sgl.invalidate) {
		rr->rsp_wr.opcode = IBV_WR_SEND_WITH_INV;
		rr->rsp_wr.invalidate_rkey = rr->sgl.key;
		rq->stats.send_inv++;
	} else {
		rr->rsp_wr.opcode = IBV_WR_SEND;
	}
	rr->rsp_wr.send_flags = IBV_SEND_SIGNALED | (rq->send_inline ? IBV_SEND_INLINE : 0);
	req_set_state(rr, RDMA_REQ_TRANSFERRING_C2H);
	rq->stats.sends++;
	queue_send(rq, first, &rr->rsp_wr);
}

/* ---- completions ----------------------------------------------------------------------------- */

static const char *wr_kind_name(enum rdma_wr_kind k)
{
	switch (k) {
	case RDMA_WR_RECV:
		return "receive";
	case RDMA_WR_READ:
		return "RDMA READ";
	case RDMA_WR_SEND:
		return "response SEND";
	default:
		return "RDMA WRITE";
	}
}

static void handle_wc(struct rdma_qpair *rq, const struct ibv_wc *wc)
{
	enum rdma_wr_kind kind = RDMA_WR_KIND(wc->wr_id);
	uint32_t idx = RDMA_WR_IDX(wc->wr_id);
	struct rdma_req *rr;

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			log_peer("%s: %s failed: %s (vendor error 0x%x)", rq->qp.peer,
				 wr_kind_name(kind), ibv_wc_status_str(wc->status), wc->vendor_err);
		rdma_qpair_close(rq, wc->status == IBV_WC_WR_FLUSH_ERR ? "queue pair flushed"
								       : "RDMA transfer error");
		return;
	}
	if (idx >= (kind == RDMA_WR_RECV ? rq->nrecvs_ready : rq->nreqs_ready)) {
		log_err("%s: completion for unknown work request %#llx", rq->qp.peer,
			(unsigned long long)wc->wr_id);
		rdma_qpair_close(rq, "bad work completion");
		return;
	}
	if (kind == RDMA_WR_RECV) {
		rx_recv(rq, idx, wc->byte_len);
		return;
	}
	rr = &rq->reqs[idx];
	switch (kind) {
	case RDMA_WR_RECV:
		break;
	case RDMA_WR_READ:
		if (rr->state == RDMA_REQ_TRANSFERRING_H2C)
			req_execute(rr);
		break;
	case RDMA_WR_SEND:
		if (rr->state == RDMA_REQ_TRANSFERRING_C2H)
			req_release(rr);
		break;
	case RDMA_WR_WRITE:
		break;
	}
}

/* Poll until the CQ is empty or *@budget is used; returns completions handled. */
static int poll_cq(struct rdma_qpair *rq, int *budget)
{
	struct ibv_wc wc[RDMA_CQ_BATCH];
	int total = 0;

	while (*budget > 0 && !rq->closing) {
		int want = *budget < RDMA_CQ_BATCH ? *budget : RDMA_CQ_BATCH;
		int n = ibv_poll_cq(rq->cq, want, wc);

		rq->stats.cq_polls++;
		if (n < 0) {
			rdma_qpair_close(rq, "cannot poll the completion queue");
			break;
		}
		for (int i = 0; i < n && !rq->closing; i++)
			handle_wc(rq, &wc[i]);
		total += n;
		*budget -= n;
		if (n < want)
			break;
	}
	return total;
}

static void cq_process(struct rdma_qpair *rq)
{
	int budget = RDMA_CQ_BUDGET;

	for (;;) {
		poll_cq(rq, &budget);
		if (rq->closing)
			return;
		if (budget <= 0) {
			/* More may be waiting: come back after the loop has looked at others. */
			if (!rq->cq_more_on) {
				ev_idle_start(rq->loop, &rq->cq_more);
				rq->cq_more_on = true;
			}
			return;
		}
		/* Empty: ask for an event, then look once more for what raced the request. */
		if (ibv_req_notify_cq(rq->cq, 0) != 0) {
			rdma_qpair_close(rq, "cannot arm the completion queue");
			return;
		}
		if (poll_cq(rq, &budget) == 0)
			break;
	}
	if (rq->cq_more_on) {
		ev_idle_stop(rq->loop, &rq->cq_more);
		rq->cq_more_on = false;
	}
}

static void cq_event_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rdma_qpair *rq = w->data;
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(rq->cc, &cq, &ctx) == 0) {
		rq->cq_unacked++;
		rq->stats.cq_events++;
	}
	if (rq->cq_unacked >= 64) {
		ibv_ack_cq_events(rq->cq, rq->cq_unacked);
		rq->cq_unacked = 0;
	}
	cq_process(rq);
}

static void cq_more_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	cq_process(w->data);
}

/* ---- teardown -------------------------------------------------------------------------------- */

/* Verbs objects and buffers; the QP goes first so nothing touches the buffers after. */
static void free_resources(struct rdma_qpair *rq)
{
	if (rq->cm_id && rq->cm_id->qp)
		rdma_destroy_qp(rq->cm_id);
	if (rq->reqs) {
		for (uint32_t i = 0; i < rq->nreqs_ready; i++) {
			struct rdma_req *rr = &rq->reqs[i];

			if (rr->chunk)
				rdma_pool_give(rq->pool, rr->chunk);
			rr->chunk = NULL;
		}
	}
	if (rq->cq) {
		if (rq->cq_unacked)
			ibv_ack_cq_events(rq->cq, rq->cq_unacked);
		ibv_destroy_cq(rq->cq);
	}
	if (rq->cc)
		ibv_destroy_comp_channel(rq->cc);
	if (rq->mr)
		ibv_dereg_mr(rq->mr);
	if (rq->mr_rest)
		ibv_dereg_mr(rq->mr_rest);
	rdma_registered_add(-(ssize_t)rq->registered);
	rq->registered = 0;
	free(rq->bufs);
	free(rq->bufs_rest);
	if (rq->reqs)
		munmap(rq->reqs, rq->reqs_len);
	free(rq->recvs);
	free(rq->pending);
	free(rq->pending_len);
	rq->recvs = NULL;
	rq->pending = rq->pending_len = NULL;
	if (rq->cm_id)
		rdma_destroy_id(rq->cm_id);
	rdma_device_put(rq->dev);
	rq->cq = NULL;
	rq->cc = NULL;
	rq->mr = rq->mr_rest = NULL;
	rq->bufs = rq->bufs_rest = NULL;
	rq->reqs = NULL;
	rq->nreqs_ready = rq->nrecvs_ready = 0;
	rq->cm_id = NULL;
	rq->dev = NULL;
}

static void qpair_fini(void *arg)
{
	struct rdma_qpair *rq = arg;

	if (rq->freed)
		return;
	rq->freed = true;
	if (rq->started)
		nvmf_qpair_fini(&rq->qp);
	if (rq->rr) {
		TAILQ_REMOVE(&rq->rr->conns, rq, link);
		rq->rr->nconns--;
	}
	free_resources(rq);
	log_debug("%s: rdma queue pair freed (%llu capsules, %llu RDMA READs, %llu RDMA WRITEs, "
		  "%llu post_send calls)",
		  rq->qp.peer, (unsigned long long)rq->stats.recv_capsules,
		  (unsigned long long)rq->stats.rdma_reads,
		  (unsigned long long)rq->stats.rdma_writes,
		  (unsigned long long)rq->stats.post_send_calls);
	rdma_conn_gone(rq);
	free(rq);
}

/*
 * Stop all I/O on the connection: the QP goes to the error state (rdma_disconnect), no
 * completion is looked at any more, requests waiting for buffers are dropped. Requests the
 * core owns (EXECUTING) finish on their own; once none is left the QP is destroyed (which
 * ends every transfer into our buffers) and everything is freed.
 */
void rdma_qpair_close(struct rdma_qpair *rq, const char *why)
{
	if (rq->closing)
		return;
	rq->closing = true;
	log_info("%s: rdma connection closed (%s)", rq->qp.peer, why);
	ev_timer_stop(rq->loop, &rq->connect_timer);
	if (rq->cq_io_on)
		ev_io_stop(rq->loop, &rq->cq_io);
	if (rq->cq_more_on)
		ev_idle_stop(rq->loop, &rq->cq_more);
	rq->cq_io_on = rq->cq_more_on = false;
	reactor_defer_cancel(rq->r, &rq->flush_work);
	reactor_defer_cancel(rq->r, &rq->rx_work);
	rq->pending_count = 0;
	rq->send_head = rq->send_tail = NULL;
	rq->recv_head = rq->recv_tail = NULL;
	rdma_disconnect(rq->cm_id);
	for (uint32_t i = 0; i < rq->nreqs_ready; i++)
		if (rq->reqs[i].state == RDMA_REQ_NEED_BUFFER)
			req_release(&rq->reqs[i]);
	/* The core completes what it parks (AERs) now; those completions just release. */
	if (rq->started)
		nvmf_qpair_disconnected(&rq->qp);
	check_done(rq);
}

void rdma_qpair_disconnect(struct nvmf_qpair *qp)
{
	rdma_qpair_close(rdma_qpair_of(qp), "disconnected by the target");
}

void rdma_qpair_cm_event(struct rdma_qpair *rq, enum rdma_cm_event_type ev, int status)
{
	switch (ev) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rq->established = true;
		log_debug("%s: rdma connection established", rq->qp.peer);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_qpair_close(rq, "host disconnected");
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rdma_qpair_close(rq, "RDMA device removed");
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		log_peer("%s: rdma connection failed: %s (%d)", rq->qp.peer, rdma_event_str(ev),
			 status);
		rdma_qpair_close(rq, rdma_event_str(ev));
		break;
	default:
		log_debug("%s: CM event %s (%d)", rq->qp.peer, rdma_event_str(ev), status);
		break;
	}
}

void rdma_local_traddr(const struct nvmf_qpair *qp, char *buf, size_t len)
{
	const struct rdma_qpair *rq = container_of(qp, struct rdma_qpair, qp);
	struct sockaddr *sa = rq->cm_id ? rdma_get_local_addr(rq->cm_id) : NULL;

	if (len)
		buf[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)len);
}

/* ---- set-up ---------------------------------------------------------------------------------- */

/* Receive buffer @i at @capsule (registered under @lkey), queued for posting. */
static void recv_init(struct rdma_qpair *rq, uint32_t i, uint8_t *capsule, uint32_t lkey)
{
	struct rdma_recv *rv = &rq->recvs[i];

	rv->capsule = capsule;
	rv->sge.addr = (uintptr_t)capsule;
	rv->sge.length = rq->capsule_size;
	rv->sge.lkey = lkey;
	rv->wr.wr_id = RDMA_WR_ID(i, RDMA_WR_RECV);
	rv->wr.sg_list = &rv->sge;
	rv->wr.num_sge = 1;
	queue_recv(rq, rv);
}

/* Request slot @i answering from @rsp (registered under @lkey), onto the free list. */
static void slot_init(struct rdma_qpair *rq, uint32_t i, struct nvme_cpl *rsp, uint32_t lkey)
{
	struct rdma_req *rr = &rq->reqs[i];

	rr->rq = rq;
	rr->idx = i;
	rr->state = RDMA_REQ_FREE;
	rr->req.qpair = &rq->qp;
	rr->rsp = rsp;
	rr->rsp_sge.addr = (uintptr_t)rr->rsp;
	rr->rsp_sge.length = sizeof(struct nvme_cpl);
	rr->rsp_sge.lkey = lkey;
	rr->rsp_wr.wr_id = RDMA_WR_ID(i, RDMA_WR_SEND);
	rr->rsp_wr.sg_list = &rr->rsp_sge;
	rr->rsp_wr.num_sge = 1;
	rr->rsp_wr.opcode = IBV_WR_SEND;
	TAILQ_INSERT_TAIL(&rq->free_reqs, rr, link);
}

/*
 * Register @count more receive buffers and the responses of their two request slots each
 * in one region (capsules, then responses) kept in *@mem / *@mr; the buffers are queued
 * for posting and the slots put on the free list.
 */
static int bufs_add(struct rdma_qpair *rq, uint32_t count, uint8_t **mem, struct ibv_mr **mr)
{
	size_t bytes = rdma_capsule_region_bytes(count, rq->capsule_size);
	struct nvme_cpl *rsp;

	if (count == 0)
		return 0;
	if (posix_memalign((void **)mem, 4096, bytes) != 0) {
		*mem = NULL;
		return -ENOMEM;
	}
	memset(*mem, 0, bytes);
	*mr = ibv_reg_mr(rq->dev->pd, *mem, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr)
		return -errno ? -errno : -ENOMEM;
	rq->registered += bytes;
	rdma_registered_add((ssize_t)bytes);
	rsp = (struct nvme_cpl *)(*mem + (size_t)count * rq->stride);
	for (uint32_t i = 0; i < count; i++)
		recv_init(rq, rq->nrecvs_ready + i, *mem + (size_t)i * rq->stride, (*mr)->lkey);
	for (uint32_t i = 0; i < 2 * count; i++)
		slot_init(rq, rq->nreqs_ready + i, &rsp[i], (*mr)->lkey);
	rq->nrecvs_ready += count;
	rq->nreqs_ready += 2 * count;
	return 0;
}

static int setup_verbs(struct rdma_qpair *rq)
{
	struct nvmf_tgt *tgt = rq->qp.tgt;
	struct ibv_qp_init_attr qpa;
	struct ibv_context *ctx = rq->cm_id->verbs;
	uint32_t nr = rq->nrecvs, n = rq->nreqs;
	/* A request has a data WR per descriptor and its SEND out at most; a flush completes
	 * the unsignaled ones too, so the CQ has room for all. */
	uint32_t send_wr, cqe;
	struct ibv_recv_wr *bad;
	int fl, rc;

	rq->dev = rdma_device_get(ctx);
	if (!rq->dev)
		return -ENODEV;
	/* Descriptor lists as long as the send queue the device gives us allows. */
	rq->desc_max = RDMA_SGL_DESC_MAX;
	while (rq->desc_max > 1 &&
	       ((rq->desc_max + 1) * n + 1 > (uint32_t)rq->dev->attr.max_qp_wr ||
		(rq->desc_max + 1) * n + 1 + nr > (uint32_t)rq->dev->attr.max_cqe))
		rq->desc_max /= 2;
	send_wr = (rq->desc_max + 1) * n + 1;
	cqe = send_wr + nr;
	if (send_wr > (uint32_t)rq->dev->attr.max_qp_wr || cqe > (uint32_t)rq->dev->attr.max_cqe) {
		log_peer("%s: queue of %u entries exceeds the device limits", rq->qp.peer, nr);
		return -ENOSPC;
	}
	rq->pool = rdma_pool_get(rq->rr, rq->dev, tgt->opts.max_io_size);
	if (!rq->pool)
		return -ENOMEM;
	rq->cc = ibv_create_comp_channel(ctx);
	if (!rq->cc)
		return -errno ? -errno : -ENOMEM;
	fl = fcntl(rq->cc->fd, F_GETFL);
	if (fl < 0 || fcntl(rq->cc->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	rq->cq = ibv_create_cq(ctx, (int)cqe, rq, rq->cc, 0);
	if (!rq->cq)
		return -errno ? -errno : -ENOMEM;

	memset(&qpa, 0, sizeof(qpa));
	qpa.qp_type = IBV_QPT_RC;
	qpa.send_cq = rq->cq;
	qpa.recv_cq = rq->cq;
	qpa.cap.max_send_wr = send_wr;
	qpa.cap.max_recv_wr = nr;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	qpa.cap.max_inline_data = RDMA_RSP_INLINE;
	if (rdma_create_qp(rq->cm_id, rq->dev->pd, &qpa) != 0) {
		/* Some devices have no inline data: registered responses work everywhere. */
		qpa.cap.max_inline_data = 0;
		if (rdma_create_qp(rq->cm_id, rq->dev->pd, &qpa) != 0)
			return -errno ? -errno : -ENOMEM;
	}
	rq->send_inline = qpa.cap.max_inline_data >= RDMA_RSP_INLINE;

	rq->recvs = calloc(nr, sizeof(*rq->recvs));
	rq->pending = calloc(nr, sizeof(*rq->pending));
	rq->pending_len = calloc(nr, sizeof(*rq->pending_len));
	if (!rq->recvs || !rq->pending || !rq->pending_len)
		return -ENOMEM;
	/* Request slots: one mapping for the whole depth, touched as slots are set up. */
	rq->reqs_len = (size_t)n * sizeof(*rq->reqs);
	rq->reqs = mmap(NULL, rq->reqs_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			0);
	if (rq->reqs == MAP_FAILED) {
		rq->reqs = NULL;
		return -ENOMEM;
	}
	TAILQ_INIT(&rq->free_reqs);
	rc = bufs_add(rq, rq->nrecvs_pre, &rq->bufs, &rq->mr);
	if (rc)
		return rc;
	/* The first receive buffers posted before the host may send (now, not deferred). */
	rc = ibv_post_recv(rq->cm_id->qp, rq->recv_head, &bad);
	rq->recv_head = rq->recv_tail = NULL;
	reactor_defer_cancel(rq->r, &rq->flush_work);
	rq->stats.post_recv_calls++;
	return rc ? -rc : 0;
}

/*
 * Connect went through (the core marked the queue connected; its response is not out
 * yet): count the queue established, and register and post the receive buffers (and set
 * up the request slots) past the first few, up to the CRQSIZE the CM accept announced, so
 * they are there before the host hears of the Connect and sends more. Non-zero: the queue
 * was closed.
 */
static int rdma_qpair_connected(struct rdma_qpair *rq)
{
	static struct log_ratelimit rl;
	int rc;

	rq->connect_seen = true;
	ev_timer_stop(rq->loop, &rq->connect_timer);
	if (!rdma_conn_established(rq->qp.tgt)) {
		log_info("%s: closed: %u established connections already", rq->qp.peer,
			 rq->qp.tgt->opts.max_connections);
		rdma_qpair_close(rq, "connection limit");
		return -ENOSPC;
	}
	rc = bufs_add(rq, rq->nrecvs - rq->nrecvs_ready, &rq->bufs_rest, &rq->mr_rest);
	if (rc) {
		log_msg_rl(&rl, LOG_LVL_ERR, "%s: cannot register %u receive buffers: %s",
			   rq->qp.peer, rq->nrecvs - rq->nrecvs_ready, strerror(-rc));
		rdma_qpair_close(rq, "cannot register receive buffers");
		return rc;
	}
	return 0;
}

/* The host did not finish Connect in time: its slot (and buffers) go to someone else. */
static void connect_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct rdma_qpair *rq = w->data;

	if (rq->connect_seen || rq->closing)
		return;
	rdma_conn_timed_out();
	rdma_qpair_close(rq, rq->established ? "no Connect in time"
					     : "connection not established in time");
}

static int accept_conn(struct rdma_qpair *rq)
{
	struct rdma_conn_param p;
	struct nvme_rdma_cm_rep rep;
	const struct ibv_device_attr *a = &rq->dev->attr;

	nvme_rdma_cm_rep_build(&rep, (uint16_t)rq->nrecvs);
	memset(&p, 0, sizeof(p));
	p.private_data = &rep;
	p.private_data_len = sizeof(rep);
	/* We issue RDMA READs (bounded by what the host can answer); the host issues none. */
	p.initiator_depth = rq->initiator_depth < a->max_qp_init_rd_atom
				    ? rq->initiator_depth
				    : (uint8_t)a->max_qp_init_rd_atom;
	p.responder_resources = rq->responder_resources < a->max_qp_rd_atom
					? rq->responder_resources
					: (uint8_t)a->max_qp_rd_atom;
	p.rnr_retry_count = 7;
	p.flow_control = 1;
	if (rdma_accept(rq->cm_id, &p) != 0)
		return -errno ? -errno : -EIO;
	return 0;
}

/* Refuse the request: reject with @sts, free what was set up. */
static void setup_fail(struct rdma_qpair *rq, uint16_t sts)
{
	rdma_cm_reject_sts(rq->cm_id, sts);
	free_resources(rq);
	rdma_conn_refused();
	free(rq);
}

void rdma_qpair_setup(void *arg)
{
	struct rdma_qpair *rq = arg;
	struct reactor *r = reactor_self();
	struct nvmf_tgt *tgt = rq->qp.tgt;
	struct rdma_cm_limits lim = {
		.max_admin_entries = tgt->opts.max_admin_depth,
		.max_io_entries = tgt->opts.max_queue_depth,
		.max_qid = tgt->opts.max_io_queues,
	};
	int sts, rc;

	rq->r = r;
	rq->loop = r->loop;
	ev_init(&rq->connect_timer, connect_timer_cb);
	rq->connect_timer.data = rq;
	rq->rr = rdma_reactor_get(r);
	if (!rq->rr || rdma_migrate_id(rq->cm_id, rq->rr->ch) != 0) {
		log_peer("rdma %s: refused: cannot take the connection on reactor %u", rq->qp.peer,
			 r->id);
		setup_fail(rq, NVME_RDMA_CM_NO_RSC);
		return;
	}
	sts = rq->cm.recfmt == 0xffff ? NVME_RDMA_CM_INVALID_LEN : rdma_cm_check(&rq->cm, &lim);
	if (sts) {
		log_peer("rdma %s: rejected: %s (qid %u, hsqsize %u, hrqsize %u)", rq->qp.peer,
			 nvme_rdma_cm_status_name(sts), rq->cm.qid, rq->cm.hsqsize, rq->cm.hrqsize);
		setup_fail(rq, (uint16_t)sts);
		return;
	}
	rq->nrecvs = (uint32_t)rq->cm.hsqsize + 1;
	rq->nrecvs_pre = rdma_preconnect_recvs(rq->nrecvs);
	rq->nreqs = 2 * rq->nrecvs;
	rq->icsz = rdma_port_icsz(tgt, rq->qp.port);
	rq->capsule_size = (uint32_t)sizeof(struct nvme_cmd) + rq->icsz;
	rq->stride = rdma_capsule_stride(rq->capsule_size);
	rq->flush_work.fn = rdma_flush;
	rq->flush_work.arg = rq;
	rq->rx_work.fn = rx_pending;
	rq->rx_work.arg = rq;
	rq->fini_work.fn = qpair_fini;
	rq->fini_work.arg = rq;
	rc = setup_verbs(rq);
	if (rc) {
		log_peer("rdma %s: refused: cannot set up the queue pair: %s", rq->qp.peer,
			 strerror(-rc));
		setup_fail(rq, NVME_RDMA_CM_NO_RSC);
		return;
	}
	rq->qp.ops = &nvmf_rdma_transport_ops;
	nvmf_qpair_init(&rq->qp, &nvmf_rdma_transport_ops, tgt, rq->qp.port, r);
	rq->started = true;
	TAILQ_INSERT_TAIL(&rq->rr->conns, rq, link);
	rq->rr->nconns++;

	ev_io_init(&rq->cq_io, cq_event_cb, rq->cc->fd, EV_READ);
	rq->cq_io.data = rq;
	ev_idle_init(&rq->cq_more, cq_more_cb);
	rq->cq_more.data = rq;
	ev_io_start(rq->loop, &rq->cq_io);
	rq->cq_io_on = true;
	if (ibv_req_notify_cq(rq->cq, 0) != 0) {
		rdma_qpair_close(rq, "cannot arm the completion queue");
		return;
	}

	rc = accept_conn(rq);
	if (rc) {
		log_peer("rdma %s: rdma_accept: %s", rq->qp.peer, strerror(-rc));
		rdma_qpair_close(rq, "accept failed");
		return;
	}
	rdma_count_accepted();
	if (tgt->opts.connect_timeout_ms) {
		ev_timer_set(&rq->connect_timer, tgt->opts.connect_timeout_ms / 1000.0, 0.);
		ev_timer_start(rq->loop, &rq->connect_timer);
	}
	log_info("%s: rdma connected on reactor %u (queue %u, %u entries, %u bytes in-capsule, "
		 "device %s)",
		 rq->qp.peer, r->id, rq->cm.qid, rq->nrecvs, rq->icsz,
		 ibv_get_device_name(rq->dev->ctx->device));
}
