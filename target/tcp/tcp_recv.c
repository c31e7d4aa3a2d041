/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP receive path: the per-connection PDU receive state machine.
 *
 * Bytes arrive with large recv() calls into a per-connection buffer that usually holds
 * many PDUs; headers are checked (nvme_tcp_check_ch) before any length is trusted, then
 * copied out and dispatched. Payload goes straight into the owning request's data
 * buffers: copied from the receive buffer when it is already there, otherwise read in
 * place with readv() (data first, then whatever follows into the receive buffer).
 *
 * Protocol violations end the connection with a C2HTermReq carrying the Fatal Error
 * Status and the offending header; errors confined to one command (bad SGL, CID in use,
 * data digest mismatch) complete that command with an NVMe status instead.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/log.h"
#include "tcp_internal.h"

enum rx_rc {
	RX_MORE,	/* need bytes from the socket */
	RX_NEXT,	/* a PDU (or part) was handled: keep going */
	RX_PAUSE,	/* waiting for a request slot or a buffer */
	RX_STOP,	/* connection quiescing or closed */
};

static const char *const rx_state_names[TCP_RX_NSTATES] = {
	[TCP_RX_AWAIT_CH] = "AWAIT_PDU_CH",
	[TCP_RX_AWAIT_PSH] = "AWAIT_PDU_PSH",
	[TCP_RX_AWAIT_PAYLOAD] = "AWAIT_PDU_PAYLOAD",
	[TCP_RX_QUIESCING] = "QUIESCING",
	[TCP_RX_ERROR] = "ERROR",
};

const char *tcp_rx_state_name(enum tcp_rx_state s)
{
	return s < TCP_RX_NSTATES ? rx_state_names[s] : "?";
}

#define B(s) (1u << (s))
static const uint32_t rx_next[TCP_RX_NSTATES] = {
	[TCP_RX_AWAIT_CH] = B(TCP_RX_AWAIT_PSH) | B(TCP_RX_QUIESCING) | B(TCP_RX_ERROR),
	[TCP_RX_AWAIT_PSH] = B(TCP_RX_AWAIT_CH) | B(TCP_RX_AWAIT_PAYLOAD) | B(TCP_RX_QUIESCING) |
			     B(TCP_RX_ERROR),
	[TCP_RX_AWAIT_PAYLOAD] = B(TCP_RX_AWAIT_CH) | B(TCP_RX_QUIESCING) | B(TCP_RX_ERROR),
	[TCP_RX_QUIESCING] = B(TCP_RX_ERROR),
	[TCP_RX_ERROR] = B(TCP_RX_ERROR),
};
#undef B

bool tcp_rx_transition_ok(enum tcp_rx_state from, enum tcp_rx_state to)
{
	return from < TCP_RX_NSTATES && to < TCP_RX_NSTATES && (rx_next[from] & (1u << to));
}

/* Every receive-state change: checked against rx_next (asserted without NDEBUG, logged
 * in a release build) and counted; staying in a state is not an entry. */
void tcp_rx_set_state(struct tcp_qpair *tq, enum tcp_rx_state s)
{
	if (tq->rx_state == s)
		return;
	if (!tcp_rx_transition_ok(tq->rx_state, s)) {
		static struct log_ratelimit rl;

		log_msg_rl(&rl, LOG_LVL_ERR, "%s: receive state: illegal transition %s -> %s",
			   tq->qp.peer, tcp_rx_state_name(tq->rx_state), tcp_rx_state_name(s));
		assert(!"illegal NVMe/TCP receive state transition");
	}
	if (s < TCP_RX_NSTATES)
		TCP_STAT_ADD(tq, rx_state_entries[s], 1);
	tq->rx_state = s;
}

static inline bool rx_dead(const struct tcp_qpair *tq)
{
	return tq->closing || tq->rx_state >= TCP_RX_QUIESCING;
}

static void fatal_stop(struct tcp_qpair *tq, uint16_t fes, uint32_t fei, const void *hdr,
		       size_t hdr_len)
{
	TCP_STAT_ADD(tq, term_reqs_tx, 1);
	tcp_rx_set_state(tq, TCP_RX_QUIESCING);
	if (tq->rio_on) {
		ev_io_stop(tq->loop, &tq->rio);
		tq->rio_on = false;
	}
	reactor_defer_cancel(tq->r, &tq->resume_work);
	tcp_send_term_req(tq, fes, fei, hdr, hdr_len);
	tq->close_after_flush = true;
	tcp_qpair_linger(tq);
}

/*
 * Fatal transport error: queue a C2HTermReq quoting the current header, stop reading,
 * and close once it has been sent (or after a short linger).
 */
void tcp_fatal(struct tcp_qpair *tq, uint16_t fes, uint32_t fei)
{
	if (rx_dead(tq))
		return;
	log_peer("%s: %s in %s PDU (field offset %u): terminating the connection",
		 tq->qp.peer, nvme_tcp_fes_name(fes), nvme_tcp_pdu_type_name(tq->hdr.ch.pdu_type),
		 fei);
	fatal_stop(tq, fes, fei, tq->hdr.raw, tq->hdr_have);
}

/*
 * The H2CData an R2T asked for did not come within --r2t-timeout. The command cannot just
 * fail: the host still holds the R2T's transfer tag and may send the data at any time, for
 * a tag the target would by then have given to another command, and NVMe/TCP has no way
 * to withdraw an R2T. So the queue ends as on a protocol error (C2HTermReq, PDU Sequence
 * Error), which gives back its buffers and slots; a host that is merely slow reconnects.
 */
void tcp_r2t_expired(struct tcp_qpair *tq, const struct tcp_req *tr, ev_tstamp waited)
{
	if (rx_dead(tq))
		return;
	log_peer("%s: no H2CData for %.1f s after the R2T of command %u%s (r2t timeout %u ms): "
		 "terminating the connection",
		 tq->qp.peer, (double)waited, tr->cid, tr->h2c_drain ? " (aborted)" : "",
		 tq->qp.tgt->opts.r2t_timeout_ms);
	TCP_STAT_ADD(tq, r2t_timeouts, 1);
	fatal_stop(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0, NULL, 0);
}

/* ---- payload placement ------------------------------------------------------------------- */

/* Point the payload cursor at rx_datao within rx_req's data. */
static void rx_bind_cursor(struct tcp_qpair *tq)
{
	const struct nvmf_req *req = &tq->rx_req->req;
	size_t off = tq->rx_datao;
	int i = 0;

	while (i < req->iovcnt && off >= req->iov[i].iov_len) {
		off -= req->iov[i].iov_len;
		i++;
	}
	tq->rx_iov_idx = i;
	tq->rx_iov_off = off;
}

static void rx_advance_cursor(struct tcp_qpair *tq, size_t n)
{
	const struct nvmf_req *req = &tq->rx_req->req;

	while (n) {
		size_t room = req->iov[tq->rx_iov_idx].iov_len - tq->rx_iov_off;
		size_t step = n < room ? n : room;

		tq->rx_iov_off += step;
		n -= step;
		if (tq->rx_iov_off == req->iov[tq->rx_iov_idx].iov_len) {
			tq->rx_iov_idx++;
			tq->rx_iov_off = 0;
		}
	}
}

static void rx_copy_out(struct tcp_qpair *tq, const uint8_t *src, size_t n)
{
	const struct nvmf_req *req = &tq->rx_req->req;

	while (n) {
		const struct iovec *v = &req->iov[tq->rx_iov_idx];
		size_t room = v->iov_len - tq->rx_iov_off;
		size_t step = n < room ? n : room;

		memcpy((uint8_t *)v->iov_base + tq->rx_iov_off, src, step);
		src += step;
		n -= step;
		rx_advance_cursor(tq, step);
	}
}

/* Set up the payload phase of the current PDU for @tr (NULL / @discard: drop data). */
static void rx_expect_payload(struct tcp_qpair *tq, struct tcp_req *tr, bool discard,
			      uint32_t datao, uint32_t datal)
{
	const struct nvme_tcp_common_hdr *ch = &tq->hdr.ch;

	tq->rx_req = tr;
	tq->rx_discard = discard || !tr;
	tq->rx_datao = datao;
	tq->rx_datal = datal;
	tq->pad_left = nvme_tcp_pad_len(ch, tq->p.hdgst);
	tq->data_left = datal;
	tq->ddgst_left = tq->p.ddgst ? NVME_TCP_DIGEST_LEN : 0;
	if (!tq->rx_discard && tr->state != TCP_REQ_NEED_BUFFER)
		rx_bind_cursor(tq);
	tcp_rx_set_state(tq, TCP_RX_AWAIT_PAYLOAD);
}

/* ---- header handlers ---------------------------------------------------------------------- */

static enum rx_rc rx_icreq(struct tcp_qpair *tq)
{
	const struct nvme_tcp_icreq *ic = &tq->hdr.icreq;
	uint32_t maxr2t = get_le32(&ic->maxr2t);

	if (get_le16(&ic->pfv) != NVME_TCP_PFV_1_0) {
		tcp_fatal(tq, NVME_TCP_FES_UNSUPPORTED_PARAM, offsetof(struct nvme_tcp_icreq, pfv));
		return RX_STOP;
	}
	if (ic->hpda > 31) {
		tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvme_tcp_icreq, hpda));
		return RX_STOP;
	}
	if (ic->dgst & ~(NVME_TCP_DGST_HDR | NVME_TCP_DGST_DATA)) {
		tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvme_tcp_icreq, dgst));
		return RX_STOP;
	}
	if (tcp_tls_plain_refused(tq)) {
		/* The port requires TLS: a plain ICReq gets a TermReq, never a controller. */
		log_peer("%s: plain NVMe/TCP on a port that requires TLS: refused", tq->qp.peer);
		__atomic_add_fetch(&tq->qp.port->plain_refused, 1, __ATOMIC_RELAXED);
		tcp_fatal(tq, NVME_TCP_FES_UNSUPPORTED_PARAM, 0);
		return RX_STOP;
	}
	tq->p.hdgst = ic->dgst & NVME_TCP_DGST_HDR;
	tq->p.ddgst = ic->dgst & NVME_TCP_DGST_DATA;
	/* Read data may go out straight from a RAM namespace: sendmsg (or TLS) copies it at
	 * send time. Not with a data digest: that is computed at completion, and a Write to
	 * the same blocks before the send would make the digest disagree with the data. */
	tq->qp.map_read_data = !tq->p.ddgst;
	tq->p.hpda = ic->hpda;
	tq->p.cpda = 0;
	tq->maxr2t = maxr2t == UINT32_MAX ? UINT32_MAX : maxr2t + 1;
	tq->ic_done = true;
	tcp_rx_set_state(tq, TCP_RX_AWAIT_CH);
	tcp_send_icresp(tq);
	log_info("%s: ICReq hpda %u maxr2t %u digests %s%s%s%s", tq->qp.peer, ic->hpda, maxr2t,
		 tq->p.hdgst ? "header " : "", tq->p.ddgst ? "data" : "",
		 tq->p.hdgst || tq->p.ddgst ? "" : "none", tcp_tls_describe(tq));
	return RX_NEXT;
}

static bool cid_test_and_set(struct tcp_qpair *tq, uint16_t cid)
{
	uint64_t bit = 1ull << (cid & 63);
	uint64_t *w = &tq->cid_bits[cid >> 6];

	if (*w & bit)
		return true;
	*w |= bit;
	return false;
}

/*
 * @cid, in use, belongs to an Asynchronous Event Request the host gave up on (it reuses
 * the CID, as SPDK's host does when it shuts the controller down): retire that AER
 * without a response, which the host could only take for the new command's, and hand the
 * CID to the new command. False when @cid is not such an AER (a real conflict).
 */
static bool cid_reclaim_aer(struct tcp_qpair *tq, uint16_t cid)
{
	struct nvmf_req *aer = tq->qp.qid == 0 ? nvmf_qpair_aer_take(&tq->qp, cid) : NULL;
	struct tcp_req *old;

	if (!aer)
		return false;
	old = tcp_req_of(aer);
	old->cid_owned = false; /* the CID bit stays set, now for the new command */
	tcp_req_release(old);
	return true;
}

/* A request that has its command (and maybe its in-capsule data) wants buffers. */
static bool req_buffers_now(struct tcp_qpair *tq, struct tcp_req *tr)
{
	int rc = 0;

	/* Keep arrival order for the pool: nobody overtakes requests already waiting for it.
	 * In-capsule data is on the wire already: it goes on at once (a slot buffer, or a
	 * chunk beyond the shares), or the receive machine, parked at it, could not read the
	 * data of the writes holding this queue's share. */
	if ((TAILQ_EMPTY(&tq->buf_waitq) || tr->plan == TCP_PLAN_IN_CAPSULE ||
	     tcp_req_icd_fits(tq, tr)) &&
	    (rc = tcp_req_get_buffers(tr)) == 0)
		return true;
	tcp_req_wait_buffers(tr, rc);
	return false;
}

/* Ask the data plan where the command's data comes from. */
static void capsule_plan(struct tcp_qpair *tq, struct tcp_req *tr, uint32_t icdata)
{
	const struct nvme_cmd *cmd = &tr->req.cmd;
	struct tcp_data_ask a = {
		.xfer = nvmf_req_xfer(cmd, tq->qp.qid == 0),
		.sgl_type = cmd->dptr.sgl1.type,
		.sgl_addr = get_le64(&cmd->dptr.sgl1.addr),
		.sgl_len = nvmf_req_sgl_length(cmd),
		.icdata = icdata,
		.max_io = tq->qp.tgt->opts.max_io_size,
	};

	tr->req.xfer = a.xfer;
	tr->plan = tcp_req_data_plan(&a, &tr->req.length, &tr->err_status);
	/* Before Connect a queue has only its slots' own buffers (tcp_req_get_buffers): larger
	 * data would be refused by the core anyway, so it takes nothing from the pool. */
	if (!tq->qp.connected && tr->plan != TCP_PLAN_FAIL && tr->plan != TCP_PLAN_NONE &&
	    !tcp_req_icd_fits(tq, tr)) {
		tr->plan = TCP_PLAN_FAIL;
		tr->err_status = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR) |
				 NVME_STATUS_DNR;
	}
}

static enum rx_rc rx_capsule(struct tcp_qpair *tq)
{
	const struct nvme_tcp_cmd *pdu = &tq->hdr.cmd;
	uint32_t icdata = nvme_tcp_data_len(&pdu->ch, tq->p.ddgst);
	uint32_t limit = tq->qp.connected && tq->qp.sqsize ? tq->qp.sqsize : tq->nreqs;
	struct tcp_req *tr;

	if (tq->outstanding - tq->zc.held >= limit) {
		/* More commands than the submission queue holds. */
		tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0);
		return RX_STOP;
	}
	tr = tcp_req_get(tq);
	if (!tr)
		return RX_PAUSE; /* header stays in the buffer; parsed again on resume */

	memcpy(&tr->req.cmd, &pdu->sqe, sizeof(tr->req.cmd));
	tr->cid = get_le16(&pdu->sqe.cid);
	if (cid_test_and_set(tq, tr->cid) && !cid_reclaim_aer(tq, tr->cid)) {
		log_peer("%s: command ID %u already in use", tq->qp.peer, tr->cid);
		tr->plan = TCP_PLAN_FAIL;
		tr->err_status = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CID_CONFLICT) | NVME_STATUS_DNR;
	} else {
		tr->cid_owned = true;
		capsule_plan(tq, tr, icdata);
	}

	switch (tr->plan) {
	case TCP_PLAN_FAIL:
		if (!icdata)
			break;
		/* Take the in-capsule bytes off the stream, then fail the command. */
		tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_H2C);
		rx_expect_payload(tq, tr, true, 0, icdata);
		return RX_NEXT;
	case TCP_PLAN_IN_CAPSULE:
		if (req_buffers_now(tq, tr))
			tcp_req_start(tr);
		rx_expect_payload(tq, tr, false, 0, icdata);
		return RX_NEXT;
	case TCP_PLAN_R2T:
	case TCP_PLAN_C2H:
		tcp_rx_set_state(tq, TCP_RX_AWAIT_CH);
		if (req_buffers_now(tq, tr))
			tcp_req_start(tr);
		return RX_NEXT;
	case TCP_PLAN_NONE:
		break;
	}
	tcp_rx_set_state(tq, TCP_RX_AWAIT_CH);
	tcp_req_start(tr);
	return RX_NEXT;
}

static enum rx_rc rx_h2c_data(struct tcp_qpair *tq)
{
	const struct nvme_tcp_data_hdr *h = &tq->hdr.data;
	uint16_t ttag = get_le16(&h->ttag);
	uint32_t datao = get_le32(&h->datao);
	uint32_t datal = get_le32(&h->datal);
	struct tcp_req *tr;

	if (ttag < tq->nreqs_ready && tq->reqs[ttag].h2c_drain) {
		/* Data for an R2T of an aborted command: checked as usual, then dropped. */
		tr = &tq->reqs[ttag];
		if (get_le16(&h->cccid) != tr->cid ||
		    datal != nvme_tcp_data_len(&h->ch, tq->p.ddgst) || datao != tr->h2c_next ||
		    datal > tr->r2t_end - datao) {
			tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR, 0);
			return RX_STOP;
		}
		rx_expect_payload(tq, tr, true, datao, datal);
		return RX_NEXT;
	}
	if (ttag >= tq->nreqs_ready || tq->reqs[ttag].state != TCP_REQ_TRANSFERRING_H2C ||
	    tq->reqs[ttag].plan == TCP_PLAN_IN_CAPSULE) {
		tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvme_tcp_data_hdr, ttag));
		return RX_STOP;
	}
	tr = &tq->reqs[ttag];
	if (tr->r2t_queued) {
		/* Data for an R2T the host cannot have seen yet: its tx is still queued, and
		 * completing the command now would queue that tx a second time. */
		tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0);
		return RX_STOP;
	}
	if (get_le16(&h->cccid) != tr->cid) {
		tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
			  offsetof(struct nvme_tcp_data_hdr, cccid));
		return RX_STOP;
	}
	if (datal != nvme_tcp_data_len(&h->ch, tq->p.ddgst)) {
		tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
			  offsetof(struct nvme_tcp_data_hdr, datal));
		return RX_STOP;
	}
	if (datao != tr->h2c_next || datal > tr->r2t_end - datao) {
		tcp_fatal(tq, NVME_TCP_FES_DATA_OUT_OF_RANGE, 0);
		return RX_STOP;
	}
	rx_expect_payload(tq, tr, false, datao, datal);
	return RX_NEXT;
}

static enum rx_rc rx_header(struct tcp_qpair *tq)
{
	const struct nvme_tcp_common_hdr *ch = &tq->hdr.ch;

	TCP_STAT_ADD(tq, pdus_rx, 1);
	if (tq->p.hdgst && ch->pdu_type != NVME_TCP_PDU_ICREQ &&
	    ch->pdu_type != NVME_TCP_PDU_H2C_TERM_REQ && !nvme_tcp_hdgst_ok(ch, ch->hlen)) {
		TCP_STAT_ADD(tq, hdgst_errors, 1);
		tcp_fatal(tq, NVME_TCP_FES_HDR_DIGEST_ERR, 0);
		return RX_STOP;
	}
	switch (ch->pdu_type) {
	case NVME_TCP_PDU_ICREQ:
		return rx_icreq(tq);
	case NVME_TCP_PDU_CAPSULE_CMD:
		return rx_capsule(tq);
	case NVME_TCP_PDU_H2C_DATA:
		return rx_h2c_data(tq);
	case NVME_TCP_PDU_H2C_TERM_REQ:
		log_peer("%s: host terminated the connection: %s", tq->qp.peer,
			 nvme_tcp_fes_name(get_le16(&tq->hdr.term.fes)));
		tcp_qpair_close(tq, "H2CTermReq");
		return RX_STOP;
	default:
		/* nvme_tcp_check_ch() admits nothing else on the controller side. */
		tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR, 0);
		return RX_STOP;
	}
}

/* ---- payload -------------------------------------------------------------------------------- */

static void rx_payload_done(struct tcp_qpair *tq)
{
	struct tcp_req *tr = tq->rx_req;
	bool capsule = tq->hdr.ch.pdu_type == NVME_TCP_PDU_CAPSULE_CMD;

	tcp_rx_set_state(tq, TCP_RX_AWAIT_CH);
	tq->rx_req = NULL;
	if (!tr)
		return;
	if (tq->p.ddgst && !tq->rx_discard &&
	    tcp_iov_crc(tr->req.iov, tr->req.iovcnt, tq->rx_datao, tq->rx_datal) !=
		    get_le32(tq->rx_ddgst)) {
		TCP_STAT_ADD(tq, ddgst_errors, 1);
		tr->ddgst_err = true;
		log_peer("%s: data digest error (cid %u, offset %u, %u bytes)", tq->qp.peer,
			 tr->cid, tq->rx_datao, tq->rx_datal);
	}
	if (capsule) {
		tcp_req_execute(tr);
		return;
	}
	tr->h2c_next += tq->rx_datal;
	if (tr->h2c_drain) {
		/* aborted (tcp_req_abort): its late data only counts toward the window */
		if (tr->h2c_next >= tr->r2t_end)
			tcp_req_drained(tr);
		return;
	}
	tcp_h2c_data_done(tr);
}

void tcp_h2c_data_done(struct tcp_req *tr)
{
	if (tr->h2c_next == tr->req.length)
		tcp_req_execute(tr);
	else if (tr->h2c_next == tr->r2t_end)
		tcp_send_r2t(tr);
}

static enum rx_rc rx_payload(struct tcp_qpair *tq)
{
	uint32_t avail = tq->rend - tq->rpos;
	uint32_t n;

	if (tq->rx_req && !tq->rx_discard && tq->rx_req->state == TCP_REQ_NEED_BUFFER)
		return RX_PAUSE;
	if (tq->pad_left) {
		n = avail < tq->pad_left ? avail : tq->pad_left;
		tq->rpos += n;
		tq->pad_left -= n;
		avail -= n;
		if (tq->pad_left)
			return RX_MORE;
	}
	if (tq->data_left) {
		n = avail < tq->data_left ? avail : tq->data_left;
		if (n && !tq->rx_discard)
			rx_copy_out(tq, tq->rbuf + tq->rpos, n);
		tq->rpos += n;
		tq->data_left -= n;
		avail -= n;
		if (tq->data_left)
			return RX_MORE;
	}
	if (tq->ddgst_left) {
		n = avail < tq->ddgst_left ? avail : tq->ddgst_left;
		memcpy(tq->rx_ddgst + (NVME_TCP_DIGEST_LEN - tq->ddgst_left), tq->rbuf + tq->rpos,
		       n);
		tq->rpos += n;
		tq->ddgst_left -= n;
		if (tq->ddgst_left)
			return RX_MORE;
	}
	rx_payload_done(tq);
	return RX_NEXT;
}

/* ---- the machine ---------------------------------------------------------------------------- */

static void rx_keep_hdr(struct tcp_qpair *tq, uint32_t len)
{
	if (len > sizeof(tq->hdr.raw))
		len = sizeof(tq->hdr.raw);
	memcpy(tq->hdr.raw, tq->rbuf + tq->rpos, len);
	tq->hdr_have = len;
}

/* Consume what the receive buffer holds. */
static enum rx_rc rx_process(struct tcp_qpair *tq)
{
	for (;;) {
		uint32_t avail = tq->rend - tq->rpos;
		const struct nvme_tcp_common_hdr *ch;
		struct nvme_tcp_pdu_err err;
		enum rx_rc rc;

		if (rx_dead(tq))
			return RX_STOP;
		switch (tq->rx_state) {
		case TCP_RX_AWAIT_CH:
			if (avail < sizeof(struct nvme_tcp_common_hdr))
				return RX_MORE;
			/* PDUs sit at any byte offset in the buffer: check an aligned copy. */
			memcpy(tq->hdr.raw, tq->rbuf + tq->rpos, sizeof(*ch));
			ch = &tq->hdr.ch;
			if (nvme_tcp_check_ch(ch, NVME_TCP_CTRLR, tq->ic_done, &tq->p, &err) != 0) {
				uint32_t keep = ch->hlen > sizeof(*ch) ? ch->hlen : sizeof(*ch);

				rx_keep_hdr(tq, keep < avail ? keep : avail);
				tcp_fatal(tq, err.fes, err.fei);
				return RX_STOP;
			}
			tq->psh_len = (uint32_t)nvme_tcp_psh_len(ch, tq->p.hdgst);
			tq->rx_big = get_le32(&ch->plen) - ch->hlen >= TCP_DIRECT_TAIL_MIN;
			tcp_rx_set_state(tq, TCP_RX_AWAIT_PSH);
			/* fall through */
		case TCP_RX_AWAIT_PSH:
			if (avail < tq->psh_len)
				return RX_MORE;
			rx_keep_hdr(tq, tq->psh_len);
			rc = rx_header(tq);
			if (rc == RX_PAUSE)
				return RX_PAUSE;
			tq->rpos += tq->psh_len;
			if (rc == RX_STOP)
				return RX_STOP;
			break;
		case TCP_RX_AWAIT_PAYLOAD:
			rc = rx_payload(tq);
			if (rc != RX_NEXT)
				return rc;
			break;
		default:
			return RX_STOP;
		}
	}
}

/*
 * How much of what follows a payload read in place may go to the receive buffer. Behind
 * a large PDU (tq->rx_big) the next one is most likely large too: reading only its header
 * (after this payload's data digest), and only a header when the buffer is empty, lets
 * that payload be read in place as well instead of landing in the receive buffer and
 * being copied out. Behind a small PDU, take as much as the buffer holds: many small
 * PDUs per recv matter more than one copy each.
 */
#define RX_HDR_READ (sizeof(struct nvme_tcp_cmd) + NVME_TCP_DIGEST_LEN)

static bool rx_headers_alone(const struct tcp_qpair *tq)
{
	/* Not inside TLS: a short read there leaves plaintext above the socket that no
	 * read event announces. */
	return tq->rx_big && !tq->tls;
}

static size_t rx_direct_tail(const struct tcp_qpair *tq)
{
	if (!rx_headers_alone(tq))
		return TCP_RBUF_SIZE;
	return tq->ddgst_left + RX_HDR_READ;
}

/* Read more: into the receive buffer, or straight into a request's data when a large
 * payload is next. Returns bytes read, 0 when the socket is drained, -1 when closed. */
static ssize_t rx_fill(struct tcp_qpair *tq, bool *drained)
{
	struct iovec v[NVMF_REQ_MAX_IOV + 1];
	size_t asked;
	bool direct;
	ssize_t n;
	int cnt;

	if (tq->rpos == tq->rend) {
		tq->rpos = tq->rend = 0;
	} else if (TCP_RBUF_SIZE - tq->rend < 4096) {
		memmove(tq->rbuf, tq->rbuf + tq->rpos, tq->rend - tq->rpos);
		tq->rend -= tq->rpos;
		tq->rpos = 0;
	}
	if (tq->rend == TCP_RBUF_SIZE)
		return 0; /* cannot happen: no header is that long and payload is consumed */
	direct = tq->rx_state == TCP_RX_AWAIT_PAYLOAD && tq->pad_left == 0 &&
		 tq->data_left >= TCP_DIRECT_READ_MIN && !tq->rx_discard && tq->rx_req &&
		 tq->rpos == tq->rend;
	for (;;) {
		if (direct) {
			const struct nvmf_req *req = &tq->rx_req->req;

			cnt = tcp_iov_slice(v, NVMF_REQ_MAX_IOV, req->iov + tq->rx_iov_idx,
					    req->iovcnt - tq->rx_iov_idx, tq->rx_iov_off,
					    tq->data_left);
			v[cnt].iov_base = tq->rbuf;
			v[cnt].iov_len = rx_direct_tail(tq);
			asked = tq->data_left + v[cnt].iov_len;
			n = tq->sock->readv(tq, v, cnt + 1);
		} else {
			asked = TCP_RBUF_SIZE - tq->rend;
			if (rx_headers_alone(tq) && tq->rpos == tq->rend && asked > RX_HDR_READ)
				asked = RX_HDR_READ;
			v[0].iov_base = tq->rbuf + tq->rend;
			v[0].iov_len = asked;
			n = tq->sock->readv(tq, v, 1);
		}
		if (n >= 0 || errno != EINTR)
			break;
	}
	TCP_STAT_ADD(tq, recv_calls, 1);
	if (n == 0) {
		tcp_qpair_close(tq, "peer closed");
		return -1;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		tcp_qpair_close(tq, strerror(errno));
		return -1;
	}
	TCP_STAT_ADD(tq, bytes_rx, (uint64_t)n);
	/* Less than asked for: the socket is (very likely) empty, so the next recv() would
	 * only say EAGAIN; the loop will report new data. */
	*drained = (size_t)n < asked;
	if (!direct) {
		tq->rend += (uint32_t)n;
		return n;
	}
	if ((size_t)n <= tq->data_left) {
		rx_advance_cursor(tq, (size_t)n);
		tq->data_left -= (uint32_t)n;
	} else {
		/* The payload is complete; the rest went to the receive buffer. */
		rx_advance_cursor(tq, tq->data_left);
		tq->rpos = 0;
		tq->rend = (uint32_t)((size_t)n - tq->data_left);
		tq->data_left = 0;
	}
	return n;
}

static void rx_pause(struct tcp_qpair *tq)
{
	tq->rx_paused = true;
	if (tq->rio_on) {
		ev_io_stop(tq->loop, &tq->rio);
		tq->rio_on = false;
	}
}

static void rx_run(struct tcp_qpair *tq)
{
	bool drained = false;

	for (unsigned int n = 0;; n++) {
		enum rx_rc rc = rx_process(tq);

		if (rc == RX_PAUSE)
			rx_pause(tq);
		if (rc == RX_MORE && n == TCP_RECV_BUDGET && !drained && tq->sock->pending(tq)) {
			/* Budget spent with bytes above the socket (TLS records read ahead)
			 * that no read event would announce: go on after the other work. */
			reactor_defer(tq->r, &tq->resume_work);
			tq->rx_paused = true;
			return;
		}
		if (rc != RX_MORE || n == TCP_RECV_BUDGET || drained)
			return;
		if (rx_fill(tq, &drained) <= 0)
			return;
	}
}

/* After a fatal error and the TermReq: read and drop until the peer closes. */
static void rx_drain(struct tcp_qpair *tq)
{
	for (int i = 0; i < TCP_RECV_BUDGET; i++) {
		struct iovec v = { .iov_base = tq->rbuf, .iov_len = TCP_RBUF_SIZE };
		ssize_t n = tq->sock->readv(tq, &v, 1);

		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		tcp_qpair_close(tq, "fatal transport error");
		return;
	}
}

void tcp_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct tcp_qpair *tq = w->data;

	tq->rx_since_trim = true;
	tcp_zc_reap(tq); /* EPOLLERR: zero-copy confirmations on the error queue */
	if (tq->rx_state == TCP_RX_QUIESCING)
		rx_drain(tq);
	else
		rx_run(tq);
}

void tcp_rx_resume(void *arg)
{
	struct tcp_qpair *tq = arg;

	if (!tq->rx_paused || rx_dead(tq))
		return;
	tq->rx_paused = false;
	/* Paused before its first payload byte, waiting for buffers that are now there. */
	if (tq->rx_state == TCP_RX_AWAIT_PAYLOAD && tq->rx_req && !tq->rx_discard &&
	    tq->rx_req->state != TCP_REQ_NEED_BUFFER)
		rx_bind_cursor(tq);
	if (!tq->rio_on) {
		ev_io_start(tq->loop, &tq->rio);
		tq->rio_on = true;
	}
	rx_run(tq);
}
