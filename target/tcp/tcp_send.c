/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP send path. Everything a connection sends (ICResp, R2T, C2HData + data,
 * CapsuleResp, C2HTermReq) is a struct tcp_tx on the connection's queue: header buffers
 * owned by the request plus iovecs pointing straight at its data buffers (no copies).
 * Queueing only marks the connection for a flush; the flush runs as reactor deferred work
 * before the loop next polls, so every completion of one loop iteration leaves in one
 * sendmsg() with many iovecs. Partial writes keep an offset into the first item; on
 * EAGAIN a write watcher takes over until the backlog is gone. A batch of read responses
 * large enough may leave with MSG_ZEROCOPY (tcp_zerocopy.c): its items then finish when
 * the kernel confirms it is done with their buffers, not when sendmsg() returns.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/log.h"
#include "tcp_internal.h"

/* ---- iovec helpers ------------------------------------------------------------------------ */

uint32_t tcp_iov_crc(const struct iovec *iov, int iovcnt, size_t off, size_t len)
{
	uint32_t crc = CRC32C_SEED;

	for (int i = 0; i < iovcnt && len; i++) {
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - off;
		if (n > len)
			n = len;
		crc = crc32c_update(crc, (const uint8_t *)iov[i].iov_base + off, n);
		len -= n;
		off = 0;
	}
	return crc32c_final(crc);
}

/* Describe bytes [off, off+len) of @src in @dst (at most @max entries); returns the count. */
int tcp_iov_slice(struct iovec *dst, int max, const struct iovec *src, int srccnt, size_t off,
		  size_t len)
{
	int n = 0;

	for (int i = 0; i < srccnt && len && n < max; i++) {
		size_t seg;

		if (off >= src[i].iov_len) {
			off -= src[i].iov_len;
			continue;
		}
		seg = src[i].iov_len - off;
		if (seg > len)
			seg = len;
		dst[n].iov_base = (uint8_t *)src[i].iov_base + off;
		dst[n].iov_len = seg;
		n++;
		len -= seg;
		off = 0;
	}
	return n;
}

/* ---- queue and flush ------------------------------------------------------------------------ */

void tcp_tx_queue(struct tcp_qpair *tq, struct tcp_tx *tx)
{
	uint32_t len = 0;

	for (int i = 0; i < tx->iovcnt; i++)
		len += (uint32_t)tx->iov[i].iov_len;
	tx->len = len;
	tx->zc = false;
	TAILQ_INSERT_TAIL(&tq->txq, tx, link);
	TCP_STAT_ADD(tq, pdus_tx, 1);
	if (!tq->wio_on)
		reactor_defer(tq->r, &tq->flush_work);
}

void tcp_tx_drop_all(struct tcp_qpair *tq)
{
	struct tcp_tx *tx;

	while ((tx = TAILQ_FIRST(&tq->txq)) != NULL)
		TAILQ_REMOVE(&tq->txq, tx, link);
	tq->tx_off = 0;
}

static void wio_set(struct tcp_qpair *tq, bool on)
{
	if (on == tq->wio_on)
		return;
	if (on)
		ev_io_start(tq->loop, &tq->wio);
	else
		ev_io_stop(tq->loop, &tq->wio);
	tq->wio_on = on;
}

static void rsp_done(struct tcp_qpair *tq, struct tcp_tx *tx);

/* @sent bytes left (in zero-copy send @zc_id if @zc): complete the items they cover, or
 * once the kernel confirms the send (tcp_zerocopy.c). */
static void tx_consume(struct tcp_qpair *tq, size_t sent, bool zc, uint32_t zc_id)
{
	struct tcp_tx *tx;

	while (sent && (tx = TAILQ_FIRST(&tq->txq)) != NULL) {
		size_t rem = tx->len - tq->tx_off;

		if (zc) {
			tx->zc = true;
			tx->zc_id = zc_id;
		}
		if (sent < rem) {
			tq->tx_off += (uint32_t)sent;
			return;
		}
		sent -= rem;
		tq->tx_off = 0;
		TAILQ_REMOVE(&tq->txq, tx, link);
		if (tx->zc)
			tcp_zc_hold(tq, tx);
		else if (tx->done)
			tx->done(tq, tx);
	}
}

/* Gather queued iovecs (skipping what was already sent) into @v. @zc_data: the read data
 * they carry if every item touched is a response (whose request keeps its buffers until
 * done), else 0: only those may go zero-copy. */
static int tx_gather(struct tcp_qpair *tq, struct iovec *v, int max, size_t *total, size_t *zc_data)
{
	size_t skip = tq->tx_off;
	struct tcp_tx *tx;
	bool zc_ok = true;
	int n = 0;

	*total = *zc_data = 0;
	TAILQ_FOREACH(tx, &tq->txq, link) {
		if (n == max)
			break;
		if (tx->done == rsp_done)
			*zc_data += container_of(tx, struct tcp_req, tx)->c2h_len;
		else
			zc_ok = false;
		for (int i = 0; i < tx->iovcnt; i++) {
			const struct iovec *s = &tx->iov[i];

			if (skip >= s->iov_len) {
				skip -= s->iov_len;
				continue;
			}
			if (n == max)
				break;
			v[n].iov_base = (uint8_t *)s->iov_base + skip;
			v[n].iov_len = s->iov_len - skip;
			*total += v[n].iov_len;
			skip = 0;
			n++;
		}
	}
	if (!zc_ok)
		*zc_data = 0;
	return n;
}

void tcp_flush(void *arg)
{
	struct tcp_qpair *tq = arg;
	struct iovec v[TCP_SENDMSG_IOV];

	if (tq->fd < 0 || tq->closing)
		return;
	for (int b = 0; b < TCP_SEND_BUDGET && !TAILQ_EMPTY(&tq->txq); b++) {
		size_t total, zc_data;
		int cnt = tx_gather(tq, v, TCP_SENDMSG_IOV, &total, &zc_data);
		uint32_t zc_id = 0;
		bool zc;
		ssize_t n;

		tcp_zc_arm(tq, zc_data);
		n = tq->sock->writev(tq, v, cnt);
		zc = tcp_zc_sent(tq, n, &zc_id);
		TCP_STAT_ADD(tq, send_calls, 1);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				wio_set(tq, true);
				return;
			}
			tcp_qpair_close(tq, strerror(errno));
			return;
		}
		TCP_STAT_ADD(tq, bytes_tx, (uint64_t)n);
		tx_consume(tq, (size_t)n, zc, zc_id);
		if ((size_t)n < total) {
			/* Socket buffer full: wait until it drains. */
			wio_set(tq, true);
			return;
		}
	}
	if (!TAILQ_EMPTY(&tq->txq)) {
		reactor_defer(tq->r, &tq->flush_work); /* budget used: later this iteration */
		return;
	}
	wio_set(tq, false);
	if (tq->close_after_flush) {
		/* The C2HTermReq is out: FIN after it, then wait for the peer to close. */
		tq->close_after_flush = false;
		shutdown(tq->fd, SHUT_WR);
		if (!tq->rio_on) {
			ev_io_start(tq->loop, &tq->rio);
			tq->rio_on = true;
		}
	}
}

void tcp_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	tcp_zc_reap(w->data); /* EPOLLERR (zero-copy confirmations) wakes this one too */
	tcp_flush(w->data);
}

/* ---- PDUs ------------------------------------------------------------------------------------- */

static void ic_done(struct tcp_qpair *tq, struct tcp_tx *tx)
{
}

void tcp_send_icresp(struct tcp_qpair *tq)
{
	struct tcp_tx *tx = &tq->ic_tx;

	tx->iov[0].iov_base = tq->ic_buf;
	tx->iov[0].iov_len = nvme_tcp_build_icresp(tq->ic_buf, tq->p.hdgst, tq->p.ddgst,
						   tq->p.cpda, tq->p.maxh2cdata);
	tx->iovcnt = 1;
	tx->done = ic_done;
	tcp_tx_queue(tq, tx);
}

void tcp_send_term_req(struct tcp_qpair *tq, uint16_t fes, uint32_t fei, const void *hdr,
		       size_t hdr_len)
{
	struct tcp_tx *tx = &tq->term_tx;

	tx->iov[0].iov_base = tq->term_buf;
	tx->iov[0].iov_len = nvme_tcp_build_term_req(tq->term_buf, NVME_TCP_PDU_C2H_TERM_REQ, fes,
						     fei, hdr, hdr_len);
	tx->iovcnt = 1;
	tx->done = ic_done;
	tcp_tx_queue(tq, tx);
}

static void r2t_done(struct tcp_qpair *tq, struct tcp_tx *tx)
{
	/* The request stays in TRANSFERRING_H2C until its data has arrived. */
	container_of(tx, struct tcp_req, tx)->r2t_queued = false;
}

/* Ask for the next window of write data: at most MAXH2CDATA, one R2T at a time (within
 * the host's MAXR2T, which is at least one). */
void tcp_send_r2t(struct tcp_req *tr)
{
	struct tcp_qpair *tq = tr->tq;
	uint32_t left = tr->req.length - tr->h2c_next;
	uint32_t r2tl = left < tq->p.maxh2cdata ? left : tq->p.maxh2cdata;
	struct tcp_tx *tx = &tr->tx;

	if (tr->state != TCP_REQ_TRANSFERRING_H2C)
		tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_H2C);
	tr->r2t_end = tr->h2c_next + r2tl;
	tr->r2t_at = ev_now(tq->loop); /* the host has --r2t-timeout to send this window */
	tx->iov[0].iov_base = tr->pdu_hdr;
	tx->iov[0].iov_len = nvme_tcp_build_r2t(tr->pdu_hdr, tr->cid, tr->ttag, tr->h2c_next, r2tl,
						tq->p.hdgst);
	tx->iovcnt = 1;
	tx->done = r2t_done;
	tr->r2t_queued = true;
	tcp_tx_queue(tq, tx);
}

static void rsp_done(struct tcp_qpair *tq, struct tcp_tx *tx)
{
	struct tcp_req *tr = container_of(tx, struct tcp_req, tx);

	tcp_req_set_state(tr, TCP_REQ_COMPLETED);
	tcp_req_release(tr);
}

/* Apply per-queue limits once Connect has said which queue this is. */
static void tcp_connected(struct tcp_qpair *tq)
{
	tq->connected_seen = true;
	ev_timer_stop(tq->loop, &tq->connect_timer);
	if (!tcp_conn_established(tq->qp.tgt)) {
		log_info("%s: closed: %u established connections already", tq->qp.peer,
			 tq->qp.tgt->opts.max_connections);
		tcp_qpair_close(tq, "connection limit");
		return;
	}
	tq->p.max_icdata = tq->qp.qid == 0 ? TCP_ADMIN_ICDATA : tcp_io_icdata(&tq->qp);
	if (tq->qp.qid != 0)
		tcp_req_slots_add(tq, tq->nreqs);
}

/* ops->req_complete: send read data (if any) and the response, then recycle. */
void tcp_req_complete(struct nvmf_req *req)
{
	struct tcp_req *tr = tcp_req_of(req);
	struct tcp_qpair *tq = tr->tq;
	struct tcp_tx *tx = &tr->tx;
	uint16_t status = get_le16(&req->rsp.status) & ~1u;
	bool ok = NVME_STATUS_SCT(status) == NVME_SCT_GENERIC &&
		  NVME_STATUS_SC(status) == NVME_SC_SUCCESS;
	bool rsp = true;
	int n = 0;

	if (tq->closing || tq->rx_state >= TCP_RX_QUIESCING) {
		tcp_req_release(tr);
		return;
	}
	if (!tq->connected_seen && tq->qp.connected) {
		tcp_connected(tq);
		if (tq->closing) { /* over the connection limit */
			tcp_req_release(tr);
			return;
		}
	}
	tcp_req_set_state(tr, TCP_REQ_READY_TO_COMPLETE);

	if (ok && req->xfer == NVME_XFER_CTRLR_TO_HOST && req->length && req->iovcnt) {
		uint8_t flags = NVME_TCP_F_DATA_LAST;
		uint32_t len = req->length;
		size_t hl;

		/* SUCCESS replaces the CapsuleResp only when it would carry nothing else. */
		if (tq->qp.sq_flow_disabled && req->rsp.dw0 == 0 && req->rsp.dw1 == 0) {
			flags |= NVME_TCP_F_DATA_SUCCESS;
			rsp = false;
		}
		hl = nvme_tcp_build_data(tr->pdu_hdr, NVME_TCP_PDU_C2H_DATA, tr->cid, 0, 0, len,
					 flags, &tq->p);
		tx->iov[n].iov_base = tr->pdu_hdr;
		tx->iov[n++].iov_len = hl;
		n += tcp_iov_slice(&tx->iov[n], NVMF_REQ_MAX_IOV, req->iov, req->iovcnt, 0, len);
		if (tq->p.ddgst) {
			put_le32(tr->ddgst, tcp_iov_crc(req->iov, req->iovcnt, 0, len));
			tx->iov[n].iov_base = tr->ddgst;
			tx->iov[n++].iov_len = NVME_TCP_DIGEST_LEN;
		}
		tr->c2h_len = len;
		if (rsp) /* C2HData and CapsuleResp: two PDUs in this item */
			TCP_STAT_ADD(tq, pdus_tx, 1);
	}
	if (rsp) {
		tx->iov[n].iov_base = tr->rsp_hdr;
		tx->iov[n++].iov_len = nvme_tcp_build_capsule_resp(tr->rsp_hdr, &req->rsp,
								   tq->p.hdgst);
	}
	tx->iovcnt = n;
	tx->done = rsp_done;
	tcp_req_set_state(tr, TCP_REQ_TRANSFERRING_C2H);
	tcp_tx_queue(tq, tx);
}
