/* SPDX-License-Identifier: MIT */
/*
 * iSCSI host transport: connection and login, tasks preallocated by queue depth (one per
 * wire slot plus one for controller setup), the CmdSN window (commands beyond MaxCmdSN
 * wait locally), the send path (SCSI Command with immediate data, unsolicited Data-Out up
 * to FirstBurstLength, Data-Out answering R2T, NOP-Out) and the receive state machine
 * (Data-In straight into the caller's iovecs, SCSI Response, R2T, NOP-In, Logout
 * Response, Reject, Asynchronous Message), with CRC32C header and data digests.
 *
 * Receive: headers and small segments land in a staging buffer that one readv() fills
 * with many PDUs at once; when a Data-In payload is still to come, the readv() points at
 * the task's buffers first and the staging buffer after them. Send: one sendmsg()
 * gathers the queued PDUs (headers, the caller's buffers, padding, digests).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "host_iscsi.h"
#include "host_transport.h"

#define ISCSI_SEND_IOV 64	     /* iovecs per sendmsg() */
#define ISCSI_SEND_BYTES (1u << 20)  /* bytes per sendmsg() */
#define ISCSI_RECV_ROUNDS 8	     /* readv() calls per progress call */
#define ISCSI_UA_RETRIES 5	     /* UNIT ATTENTION: send the command again */
#define ISCSI_LOGOUT_TIMEOUT_MS 2000
#define ISCSI_ITT_INDEX_MASK 0xffffu
#define ISCSI_LOGOUT_ITT 0x0000ffffu /* never a task's ITT (index 0xffff is out of range) */

static const uint8_t zero_pad[4];

static const char *const rx_state_names[] = {
	[ISCSI_RX_HDR] = "hdr",	    [ISCSI_RX_SEG] = "seg",   [ISCSI_RX_DATA] = "data",
	[ISCSI_RX_TRAIL] = "trail", [ISCSI_RX_DEAD] = "dead",
};

static void rx_set_state(struct iscsi_qpair *iq, enum iscsi_rx_state s)
{
	if (iq->rx_state == ISCSI_RX_DEAD)
		return;
	if (s == ISCSI_RX_DEAD)
		nlog_debug("queue %u: iSCSI rx %s -> dead", iq->qp.qid,
			   rx_state_names[iq->rx_state]);
	iq->rx_state = s;
}

static void task_set_state(struct host_iscsi_task *t, enum iscsi_task_state s)
{
	t->state = s;
}

/* A PDU or condition we cannot accept: the queue pair fails (during Logout, quietly). */
static int iscsi_fatal(struct iscsi_qpair *iq, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int iscsi_fatal(struct iscsi_qpair *iq, int err, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rx_set_state(iq, ISCSI_RX_DEAD);
	if (iq->closing) {
		nlog_debug("queue %u: during logout: %s", iq->qp.qid, msg);
		if (iq->fd >= 0)
			close(iq->fd);
		iq->fd = -1;
		return err;
	}
	qpair_fail(&iq->qp, err, "%s", msg);
	return err;
}

/* ---- Data sources --------------------------------------------------------------------------- */
/* Fill @out (room for @max) with the part of @src covering [@off, @off + @len); stops when
 * @max entries are used. *@covered says how far it got. */
static int src_slice(const struct iscsi_src *src, uint32_t off, uint32_t len, struct iovec *out,
		     int max, size_t *covered)
{
	int n = 0;

	*covered = 0;
	while (len && n < max) {
		uint32_t o = src->off + off, l = len;
		size_t cov;

		if (src->part) {
			o = src->off + off % src->part;
			l = src->part - off % src->part < len ? src->part - off % src->part : len;
		}
		n += iov_slice_upto(src->iov, src->iovcnt, o, l, out + n, max - n, &cov);
		*covered += cov;
		off += (uint32_t)cov;
		len -= (uint32_t)cov;
		if (cov < l)
			break;
	}
	return n;
}

/* CRC32C data digest over @len bytes of @src and the padding after them. */
static uint32_t src_digest(const struct iscsi_src *src, uint32_t off, uint32_t len)
{
	uint32_t crc = CRC32C_SEED, left = len;

	while (left) {
		struct iovec v[16];
		size_t cov;
		int k = src_slice(src, off, left, v, 16, &cov);

		for (int i = 0; i < k; i++)
			crc = crc32c_update(crc, v[i].iov_base, v[i].iov_len);
		if (!cov)
			break;
		off += (uint32_t)cov;
		left -= (uint32_t)cov;
	}
	crc = crc32c_update(crc, zero_pad, ISCSI_PAD(len) - len);
	return crc32c_final(crc);
}

/* ---- Send path ------------------------------------------------------------------------------ */
static void pdu_queue(struct iscsi_qpair *iq, struct iscsi_pdu_out *p, uint32_t data_off,
		      uint32_t data_len)
{
	uint32_t pad = ISCSI_PAD(data_len) - data_len;

	iscsi_bhs_set_dlen(p->hdr, data_len);
	p->hdr_len = ISCSI_BHS_LEN;
	if (iq->s.hdgst) {
		iscsi_put_digest(p->hdr + ISCSI_BHS_LEN,
				 iscsi_header_digest(p->hdr, ISCSI_BHS_LEN));
		p->hdr_len += ISCSI_DIGEST_LEN;
	}
	p->data_off = data_off;
	p->data_len = data_len;
	memset(p->trail, 0, pad);
	p->trail_len = pad;
	if (iq->s.ddgst && data_len) {
		iscsi_put_digest(p->trail + pad, src_digest(&p->src, data_off, data_len));
		p->trail_len += ISCSI_DIGEST_LEN;
	}
	p->total = p->hdr_len + data_len + p->trail_len;
	p->sent = 0;
	p->queued = true;
	TAILQ_INSERT_TAIL(&iq->sendq, p, link);
}

static void put_exp_statsn(struct iscsi_qpair *iq, uint8_t *bhs)
{
	put_be32(bhs + 28, iq->s.exp_statsn);
}

static void queue_data_out(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	struct iscsi_pdu_out *p = &t->pdu;
	struct iscsi_data_out *h = (struct iscsi_data_out *)p->hdr;
	uint32_t len = t->out_end - t->out_next;

	if (len > iq->s.max_xmit_dsl)
		len = iq->s.max_xmit_dsl;
	iscsi_bhs_init(h, ISCSI_OP_DATA_OUT,
		       t->out_next + len == t->out_end ? ISCSI_FLAG_FINAL : 0);
	iscsi_lun_encode(h->lun, iq->qp.ctrlr->uri.lun);
	put_be32(&h->itt, t->itt);
	put_be32(&h->ttt, t->out_ttt);
	put_exp_statsn(iq, p->hdr);
	put_be32(&h->datasn, t->out_datasn++);
	put_be32(&h->buffer_offset, t->out_next);
	p->src = t->src;
	pdu_queue(iq, p, t->out_next, len);
	t->out_next += len;
}

static void start_r2t(struct iscsi_qpair *iq, struct host_iscsi_task *t, uint32_t off, uint32_t len,
		      uint32_t ttt)
{
	t->r2t_pending = false;
	t->out_next = off;
	t->out_end = off + len;
	t->out_ttt = ttt;
	t->out_datasn = 0;
	task_set_state(t, ISCSI_TASK_SEND);
	queue_data_out(iq, t);
}

/* The task got its CmdSN: queue its SCSI Command (with immediate data) or NOP-Out. */
static void task_issue(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	struct iscsi_pdu_out *p = &t->pdu;
	uint32_t imm = 0, unsol = 0;

	t->out_next = t->out_end = 0;
	t->out_ttt = ISCSI_TAG_RESERVED;
	t->out_datasn = 0;
	t->r2t_pending = false;
	t->exp_r2tsn = 0;
	t->in_next = t->in_datasn = 0;
	t->ddgst_err = false;
	t->finish_after_send = false;
	t->done = false;
	t->status = t->response = t->rflags = 0;
	t->residual = 0;
	t->sense_len = 0;
	p->src = t->src;

	if (t->kind == ISCSI_TASK_NOP) {
		struct iscsi_nop_out *h = (struct iscsi_nop_out *)p->hdr;

		iscsi_bhs_init(h, ISCSI_OP_NOP_OUT | ISCSI_FLAG_IMMEDIATE, ISCSI_FLAG_FINAL);
		put_be32(&h->itt, t->itt);
		put_be32(&h->ttt, ISCSI_TAG_RESERVED);
		put_be32(&h->cmdsn, t->cmdsn);
		put_exp_statsn(iq, p->hdr);
	} else {
		struct iscsi_scsi_cmd *h = (struct iscsi_scsi_cmd *)p->hdr;
		uint8_t flags = ISCSI_FLAG_FINAL | 1; /* ATTR: simple */

		if (t->write) {
			uint32_t fb = iq->s.first_burst;

			if (iq->s.immediate_data) {
				imm = t->edtl < fb ? t->edtl : fb;
				if (imm > iq->s.max_xmit_dsl)
					imm = iq->s.max_xmit_dsl;
			}
			unsol = imm;
			if (!iq->s.initial_r2t)
				unsol = t->edtl < fb ? t->edtl : fb;
			if (unsol > imm)
				flags &= (uint8_t)~ISCSI_FLAG_FINAL; /* Data-Out follows */
			flags |= ISCSI_SCSI_CMD_WRITE;
		}
		if (t->read)
			flags |= ISCSI_SCSI_CMD_READ;
		iscsi_bhs_init(h, ISCSI_OP_SCSI_CMD, flags);
		iscsi_lun_encode(h->lun, iq->qp.ctrlr->uri.lun);
		put_be32(&h->itt, t->itt);
		put_be32(&h->edtl, t->edtl);
		put_be32(&h->cmdsn, t->cmdsn);
		put_exp_statsn(iq, p->hdr);
		memcpy(h->cdb, t->enc.cdb, t->enc.cdb_len);
		t->out_next = imm;
		t->out_end = unsol;
	}
	task_set_state(t, ISCSI_TASK_SEND);
	pdu_queue(iq, p, 0, imm);
}

static bool window_open(const struct iscsi_qpair *iq)
{
	return iscsi_sn_le(iq->s.cmdsn, iq->s.max_cmdsn);
}

/* Send now if the CmdSN window allows, else wait (in order) for it to open. */
static void task_dispatch(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	t->gen++;
	t->itt = (uint32_t)t->gen << 16 | t->index;
	if (t->kind == ISCSI_TASK_NOP) {
		t->cmdsn = iq->s.cmdsn; /* immediate: no CmdSN of its own */
		task_issue(iq, t);
		return;
	}
	if (TAILQ_EMPTY(&iq->windowq) && window_open(iq)) {
		t->cmdsn = iq->s.cmdsn++;
		task_issue(iq, t);
		return;
	}
	task_set_state(t, ISCSI_TASK_WINDOW);
	TAILQ_INSERT_TAIL(&iq->windowq, t, wlink);
}

static void window_drain(struct iscsi_qpair *iq)
{
	struct host_iscsi_task *t;

	while ((t = TAILQ_FIRST(&iq->windowq)) && window_open(iq)) {
		TAILQ_REMOVE(&iq->windowq, t, wlink);
		t->cmdsn = iq->s.cmdsn++;
		task_issue(iq, t);
	}
}

static void task_finish(struct iscsi_qpair *iq, struct host_iscsi_task *t);

/* The task's PDU went out completely. */
static void task_pdu_sent(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	if (t->finish_after_send) {
		task_finish(iq, t);
		return;
	}
	if (t->out_next < t->out_end) {
		queue_data_out(iq, t);
		return;
	}
	if (t->r2t_pending) {
		start_r2t(iq, t, t->r2t_off, t->r2t_len, t->r2t_ttt);
		return;
	}
	task_set_state(t, ISCSI_TASK_WAIT);
}

static void pdu_sent(struct iscsi_qpair *iq, struct iscsi_pdu_out *p)
{
	p->queued = false;
	if (p->task)
		task_pdu_sent(iq, p->task);
}

/* The unsent part of @p as iovecs; returns entries added (0 if no room). */
static int pdu_iov(const struct iscsi_pdu_out *p, struct iovec *iov, int room, size_t *bytes)
{
	uint32_t skip = p->sent;
	int n = 0;

	*bytes = 0;
	if (skip < p->hdr_len) {
		if (n == room)
			return n;
		iov[n].iov_base = (uint8_t *)p->hdr + skip;
		iov[n].iov_len = p->hdr_len - skip;
		*bytes += iov[n++].iov_len;
		skip = 0;
	} else {
		skip -= p->hdr_len;
	}
	if (p->data_len && skip < p->data_len) {
		size_t covered;
		int k = src_slice(&p->src, p->data_off + skip, p->data_len - skip, iov + n,
				  room - n, &covered);

		*bytes += covered;
		n += k;
		if (covered < p->data_len - skip)
			return n; /* out of entries: the rest goes next time */
		skip = 0;
	} else {
		skip -= p->data_len;
	}
	if (skip < p->trail_len && n < room) {
		iov[n].iov_base = (uint8_t *)p->trail + skip;
		iov[n].iov_len = p->trail_len - skip;
		*bytes += iov[n++].iov_len;
	}
	return n;
}

static int iscsi_send(struct iscsi_qpair *iq)
{
	while (!TAILQ_EMPTY(&iq->sendq) && iq->fd >= 0) {
		struct iovec iov[ISCSI_SEND_IOV];
		struct msghdr msg = { 0 };
		struct iscsi_pdu_out *p;
		size_t want = 0;
		ssize_t n, sent;
		int cnt = 0;

		TAILQ_FOREACH(p, &iq->sendq, link) {
			size_t b;
			int k = pdu_iov(p, iov + cnt, ISCSI_SEND_IOV - cnt, &b);

			cnt += k;
			want += b;
			if (cnt == ISCSI_SEND_IOV || want >= ISCSI_SEND_BYTES ||
			    p->sent + b < p->total)
				break;
		}
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)cnt;
		n = sendmsg(iq->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		sent = n;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return iscsi_fatal(iq, errno == EPIPE ? -ECONNRESET : -errno,
					   "send failed: %s", strerror(errno));
		}
		while (n > 0 && (p = TAILQ_FIRST(&iq->sendq))) {
			uint32_t left = p->total - p->sent;

			if ((size_t)n < left) {
				p->sent += (uint32_t)n;
				break;
			}
			n -= left;
			p->sent = p->total;
			TAILQ_REMOVE(&iq->sendq, p, link);
			pdu_sent(iq, p);
		}
		if ((size_t)sent < want)
			return 0; /* socket buffer full */
	}
	return 0;
}

static struct iscsi_pdu_out *ctl_get(struct iscsi_qpair *iq)
{
	for (int i = 0; i < ISCSI_CTL_PDUS; i++)
		if (!iq->ctl[i].queued)
			return &iq->ctl[i];
	return NULL;
}

/* ---- Completion ----------------------------------------------------------------------------- */
void iscsi_complete_local(struct nvmeof_req *req, uint16_t status, bool dnr, uint32_t dw0,
			  uint32_t dw1)
{
	struct nvme_cpl cqe = { 0 };
	uint16_t st = NVME_STATUS(NVMEOF_SCT(status), NVMEOF_SC(status));

	put_le32(&cqe.dw0, dw0);
	put_le32(&cqe.dw1, dw1);
	put_le16(&cqe.cid, req->cid);
	put_le16(&cqe.status, (uint16_t)(st | (dnr && status ? NVME_STATUS_DNR : 0)));
	req_complete(req, &cqe, 0);
}

static void task_free(struct host_iscsi_task *t)
{
	t->req = NULL;
	task_set_state(t, ISCSI_TASK_FREE);
}

static int task_build(struct iscsi_qpair *iq, struct host_iscsi_task *t);

/* Status arrived and every PDU of the task is out: decide what it means. */
static void task_finish(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	struct nvmeof_req *req = t->req;
	uint16_t st;
	uint64_t xt;
	bool dnr;

	if (!req) { /* internal: the caller looks at the outcome */
		t->done = true;
		task_set_state(t, ISCSI_TASK_WAIT);
		return;
	}
	if (t->ddgst_err) {
		task_free(t);
		req_complete(req, NULL, -EBADMSG);
		return;
	}
	if (t->kind == ISCSI_TASK_NOP) {
		task_free(t);
		iscsi_complete_local(req, 0, false, 0, 0);
		return;
	}
	if (t->response != ISCSI_RESPONSE_COMPLETED) {
		task_free(t);
		nlog_warn("queue %u: iSCSI target failure (response 0x%02x) for CDB 0x%02x",
			  iq->qp.qid, t->response, t->enc.cdb[0]);
		iscsi_complete_local(req, NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL), false,
				     0, 0);
		return;
	}
	if (scsi_is_unit_attention(t->status, t->sense, t->sense_len) &&
	    t->retries < ISCSI_UA_RETRIES) {
		uint16_t asc = 0;
		uint8_t key;

		scsi_sense_parse(t->sense, t->sense_len, &key, &asc);
		nlog_debug(
			"queue %u: unit attention (ASC/ASCQ %02x/%02x), sending CDB 0x%02x again",
			iq->qp.qid, asc >> 8, asc & 0xff, t->enc.cdb[0]);
		t->retries++;
		task_dispatch(iq, t);
		return;
	}
	xt = qpair_xlate_begin(&iq->qp);
	st = scsi_status_to_nvme(req->sqe.opc, t->status, t->sense, t->sense_len, &dnr);
	qpair_xlate_end(&iq->qp, xt);
	if (t->kind == ISCSI_TASK_SHUTDOWN) {
		if (st)
			nlog_warn("SYNCHRONIZE CACHE at shutdown failed: %s",
				  nvmeof_status_name(st));
		task_free(t);
		iscsi_complete_local(req, 0, false, 0, 0);
		return;
	}
	/* Residuals matter where the data is the caller's blocks (as in Linux sd); some
	 * targets report one for the parameter list of a successful UNMAP. */
	if (st == 0 &&
	    ((t->read && t->in_next != t->edtl) ||
	     ((t->enc.data == SCSI_DATA_OUT || t->enc.data == SCSI_DATA_OUT_TWICE) &&
	      (t->rflags & (ISCSI_RSP_UNDERFLOW | ISCSI_RSP_OVERFLOW)) && t->residual))) {
		nlog_warn("queue %u: CDB 0x%02x moved %u of %u bytes (residual %u)", iq->qp.qid,
			  t->enc.cdb[0], t->read ? t->in_next : t->edtl - t->residual, t->edtl,
			  t->residual);
		st = NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR);
	}
	if (st == 0 && !t->enc.last) {
		t->step++;
		t->retries = 0;
		if (task_build(iq, t) == 0)
			task_dispatch(iq, t);
		return;
	}
	task_free(t);
	iscsi_complete_local(req, st, dnr, 0, 0);
}

/* Status for @t: finish now, or once its half-sent PDU has gone out. */
static int task_status(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	t->r2t_pending = false;
	t->out_end = t->out_next;
	if (t->state == ISCSI_TASK_SEND && t->pdu.queued) {
		if (t->pdu.sent) {
			t->finish_after_send = true;
			return 0;
		}
		TAILQ_REMOVE(&iq->sendq, &t->pdu, link);
		t->pdu.queued = false;
	}
	task_finish(iq, t);
	return 0;
}

/* ---- Receive path --------------------------------------------------------------------------- */
static struct host_iscsi_task *host_task_by_itt(struct iscsi_qpair *iq, uint32_t itt)
{
	uint32_t idx = itt & ISCSI_ITT_INDEX_MASK;
	struct host_iscsi_task *t;

	if (idx >= iq->ntasks)
		return NULL;
	t = &iq->tasks[idx];
	if (t->itt != itt || (t->state != ISCSI_TASK_SEND && t->state != ISCSI_TASK_WAIT) ||
	    t->done)
		return NULL;
	return t;
}

/* StatSN, ExpCmdSN and MaxCmdSN (at the same offsets in every target PDU that has them). */
static void sn_update(struct iscsi_qpair *iq, const uint8_t *bhs, bool statsn_valid)
{
	uint32_t statsn = get_be32(bhs + 24), exp = get_be32(bhs + 28), max = get_be32(bhs + 32);

	if (statsn_valid && !iscsi_sn_lt(statsn, iq->s.exp_statsn))
		iq->s.exp_statsn = statsn + 1;
	if (iscsi_sn_lt(max, exp - 1))
		return; /* RFC 7143 section 4.2.2.1: ignore both */
	if (iscsi_sn_gt(exp, iq->s.exp_cmdsn))
		iq->s.exp_cmdsn = exp;
	if (iscsi_sn_gt(max, iq->s.max_cmdsn))
		iq->s.max_cmdsn = max;
	window_drain(iq);
}

static int handle_scsi_rsp(struct iscsi_qpair *iq, const uint8_t *seg)
{
	const struct iscsi_scsi_rsp *r = (const void *)iq->rx_hdr;
	uint32_t itt = get_be32(&r->itt), dlen = iq->rx_dlen;
	struct host_iscsi_task *t = host_task_by_itt(iq, itt);

	if (!t || t->kind == ISCSI_TASK_NOP)
		return iscsi_fatal(iq, -EPROTO, "SCSI Response for unknown ITT 0x%08x", itt);
	sn_update(iq, iq->rx_hdr, true);
	t->response = r->response;
	t->status = r->status;
	t->rflags = r->flags;
	t->residual = get_be32(&r->residual);
	t->sense_len = 0;
	if (dlen) {
		uint32_t sl;

		if (dlen < 2)
			return iscsi_fatal(iq, -EPROTO, "SCSI Response with a %u-byte segment",
					   dlen);
		sl = get_be16(seg);
		if (sl > dlen - 2)
			return iscsi_fatal(iq, -EPROTO, "SCSI Response sense length %u in %u bytes",
					   sl, dlen);
		t->sense_len = sl < sizeof(t->sense) ? sl : sizeof(t->sense);
		memcpy(t->sense, seg + 2, t->sense_len);
	}
	return task_status(iq, t);
}

/* Data-In header: checks, then its payload goes into the task's buffers. */
static int handle_data_in(struct iscsi_qpair *iq)
{
	const struct iscsi_data_in *d = (const void *)iq->rx_hdr;
	uint32_t itt = get_be32(&d->itt), off = get_be32(&d->buffer_offset);
	uint32_t datasn = get_be32(&d->datasn), dlen = iq->rx_dlen;
	struct host_iscsi_task *t = host_task_by_itt(iq, itt);

	if (!t || !t->read)
		return iscsi_fatal(iq, -EPROTO, "Data-In for ITT 0x%08x, which reads nothing",
				   itt);
	if (datasn != t->in_datasn)
		return iscsi_fatal(iq, -EPROTO, "Data-In DataSN %u for ITT 0x%08x, expected %u",
				   datasn, itt, t->in_datasn);
	if (off != t->in_next || off > t->edtl || dlen > t->edtl - off)
		return iscsi_fatal(iq, -EPROTO,
				   "Data-In [%u, +%u) for ITT 0x%08x: expected "
				   "offset %u of %u",
				   off, dlen, itt, t->in_next, t->edtl);
	if ((d->flags & ISCSI_DATA_STATUS) && !(d->flags & ISCSI_FLAG_FINAL))
		return iscsi_fatal(iq, -EPROTO, "Data-In with S but not F");
	iq->rx_task = t;
	iq->rx_off = off;
	iq->rx_left = dlen;
	iq->rx_crc = CRC32C_SEED;
	return 0;
}

/* The whole Data-In payload is in. */
static int data_in_done(struct iscsi_qpair *iq)
{
	const struct iscsi_data_in *d = (const void *)iq->rx_hdr;
	struct host_iscsi_task *t = iq->rx_task;

	iq->rx_task = NULL;
	t->in_next += iq->rx_dlen;
	t->in_datasn++;
	if (!(d->flags & ISCSI_DATA_STATUS)) {
		sn_update(iq, iq->rx_hdr, false);
		return 0;
	}
	sn_update(iq, iq->rx_hdr, true);
	t->response = ISCSI_RESPONSE_COMPLETED;
	t->status = d->status;
	t->rflags = d->flags & (ISCSI_DATA_OVERFLOW | ISCSI_DATA_UNDERFLOW);
	t->residual = get_be32(&d->residual);
	t->sense_len = 0;
	return task_status(iq, t);
}

static int handle_r2t(struct iscsi_qpair *iq)
{
	const struct iscsi_r2t *r = (const void *)iq->rx_hdr;
	uint32_t itt = get_be32(&r->itt), ttt = get_be32(&r->ttt);
	uint32_t off = get_be32(&r->buffer_offset), len = get_be32(&r->desired_len);
	uint32_t r2tsn = get_be32(&r->r2tsn);
	struct host_iscsi_task *t = host_task_by_itt(iq, itt);

	if (!t || !t->write)
		return iscsi_fatal(iq, -EPROTO, "R2T for ITT 0x%08x, which writes nothing", itt);
	sn_update(iq, iq->rx_hdr, false);
	if (r2tsn != t->exp_r2tsn)
		return iscsi_fatal(iq, -EPROTO, "R2TSN %u for ITT 0x%08x, expected %u", r2tsn, itt,
				   t->exp_r2tsn);
	if (ttt == ISCSI_TAG_RESERVED || len == 0 || off > t->edtl || len > t->edtl - off ||
	    len > iq->s.max_burst)
		return iscsi_fatal(iq, -EPROTO, "R2T [%u, +%u) for ITT 0x%08x of %u bytes "
						"(MaxBurstLength %u)", off, len, itt, t->edtl,
				   iq->s.max_burst);
	t->exp_r2tsn++;
	if (t->state == ISCSI_TASK_SEND) {
		if (t->r2t_pending)
			return iscsi_fatal(iq, -EPROTO, "more R2Ts than MaxOutstandingR2T for "
							"ITT 0x%08x", itt);
		t->r2t_pending = true;
		t->r2t_off = off;
		t->r2t_len = len;
		t->r2t_ttt = ttt;
		return 0;
	}
	start_r2t(iq, t, off, len, ttt);
	return 0;
}

static int handle_nop_in(struct iscsi_qpair *iq)
{
	const struct iscsi_nop_in *n = (const void *)iq->rx_hdr;
	uint32_t itt = get_be32(&n->itt), ttt = get_be32(&n->ttt);
	struct iscsi_pdu_out *p;
	struct iscsi_nop_out *h;
	struct host_iscsi_task *t;

	if (itt != ISCSI_TAG_RESERVED) {
		t = host_task_by_itt(iq, itt);
		if (!t || t->kind != ISCSI_TASK_NOP)
			return iscsi_fatal(iq, -EPROTO, "NOP-In for unknown ITT 0x%08x", itt);
		sn_update(iq, iq->rx_hdr, true);
		return task_status(iq, t);
	}
	sn_update(iq, iq->rx_hdr, false);
	if (ttt == ISCSI_TAG_RESERVED)
		return 0; /* just a window update */
	/* The target pings: answer with a NOP-Out carrying its TTT and LUN. */
	p = ctl_get(iq);
	if (!p)
		return iscsi_fatal(iq, -EPROTO, "too many NOP-In pings unanswered");
	h = (struct iscsi_nop_out *)p->hdr;
	iscsi_bhs_init(h, ISCSI_OP_NOP_OUT | ISCSI_FLAG_IMMEDIATE, ISCSI_FLAG_FINAL);
	memcpy(h->lun, n->lun, sizeof(h->lun));
	put_be32(&h->itt, ISCSI_TAG_RESERVED);
	put_be32(&h->ttt, ttt);
	put_be32(&h->cmdsn, iq->s.cmdsn);
	put_exp_statsn(iq, p->hdr);
	p->task = NULL;
	memset(&p->src, 0, sizeof(p->src));
	pdu_queue(iq, p, 0, 0);
	return 0;
}

static int handle_async(struct iscsi_qpair *iq)
{
	const struct iscsi_async_msg *a = (const void *)iq->rx_hdr;

	sn_update(iq, iq->rx_hdr, true);
	switch (a->async_event) {
	case ISCSI_ASYNC_SCSI_EVENT:
		nlog_info("queue %u: iSCSI asynchronous SCSI event", iq->qp.qid);
		return 0;
	case ISCSI_ASYNC_LOGOUT_REQUEST:
		return iscsi_fatal(iq, -ECONNRESET, "the iSCSI target requests a logout");
	case ISCSI_ASYNC_DROP_CONNECTION:
	case ISCSI_ASYNC_DROP_ALL_CONNECTIONS:
		return iscsi_fatal(iq, -ECONNRESET, "the iSCSI target drops the connection "
						    "(asynchronous event %u)", a->async_event);
	case ISCSI_ASYNC_NEGOTIATE:
		return iscsi_fatal(iq, -ECONNRESET, "the iSCSI target asks for renegotiation, "
						    "which this initiator does not do");
	default:
		nlog_info("queue %u: iSCSI asynchronous event %u ignored", iq->qp.qid,
			  a->async_event);
		return 0;
	}
}

/* A complete PDU other than a Data-In with payload; @seg is its data segment. */
static int handle_pdu(struct iscsi_qpair *iq, const uint8_t *seg)
{
	uint8_t op = iscsi_bhs_opcode(iq->rx_hdr);

	switch (op) {
	case ISCSI_OP_SCSI_RSP:
		return handle_scsi_rsp(iq, seg);
	case ISCSI_OP_DATA_IN: /* no payload: status only */
		if (handle_data_in(iq))
			return -1;
		return data_in_done(iq);
	case ISCSI_OP_R2T:
		return handle_r2t(iq);
	case ISCSI_OP_NOP_IN:
		return handle_nop_in(iq);
	case ISCSI_OP_LOGOUT_RSP:
		if (!iq->closing)
			return iscsi_fatal(iq, -EPROTO, "unsolicited Logout Response");
		iq->logout_done = true;
		return 0;
	case ISCSI_OP_REJECT: {
		const struct iscsi_reject *r = (const void *)iq->rx_hdr;
		uint32_t ritt = iq->rx_dlen >= ISCSI_BHS_LEN ? iscsi_bhs_itt(seg) : 0;

		return iscsi_fatal(iq, -EPROTO, "the iSCSI target rejected a PDU (reason 0x%02x, "
						"opcode 0x%02x, ITT 0x%08x)", r->reason,
				   iq->rx_dlen ? iscsi_bhs_opcode(seg) : 0, ritt);
	}
	case ISCSI_OP_ASYNC_MSG:
		return handle_async(iq);
	default:
		return iscsi_fatal(iq, -EPROTO, "unexpected iSCSI PDU opcode 0x%02x", op);
	}
}

/* A full header is staged at @p: check it and pick the next state. */
static int rx_header(struct iscsi_qpair *iq, const uint8_t *p)
{
	uint32_t ahs = iscsi_bhs_ahs_len(p), dlen = iscsi_bhs_dlen(p);

	memcpy(iq->rx_hdr, p, iq->rx_hdr_len);
	if (iq->s.hdgst) {
		uint32_t want = iscsi_header_digest(p, ISCSI_BHS_LEN + ahs);

		if (iscsi_get_digest(p + ISCSI_BHS_LEN + ahs) != want)
			return iscsi_fatal(iq, -EPROTO, "header digest mismatch (opcode 0x%02x)",
					   iscsi_bhs_opcode(p));
	}
	if (dlen > iq->s.max_recv_dsl)
		return iscsi_fatal(iq, -EPROTO, "%u-byte data segment beyond our "
						"MaxRecvDataSegmentLength %u", dlen,
				   iq->s.max_recv_dsl);
	iq->rx_dlen = dlen;
	if (iscsi_bhs_opcode(p) == ISCSI_OP_DATA_IN && dlen) {
		if (handle_data_in(iq))
			return -1;
		rx_set_state(iq, ISCSI_RX_DATA);
		return 0;
	}
	iq->rx_seg_len = dlen ? iscsi_data_wire_len(dlen, iq->s.ddgst) : 0;
	if (iq->rx_seg_len > ISCSI_RBUF_SIZE)
		return iscsi_fatal(iq, -EPROTO, "%u-byte %s segment too large for this initiator",
				   dlen, "PDU");
	if (iq->rx_seg_len == 0) {
		int rc = handle_pdu(iq, NULL);

		if (rc == 0)
			rx_set_state(iq, ISCSI_RX_HDR);
		return rc;
	}
	rx_set_state(iq, ISCSI_RX_SEG);
	return 0;
}

/* @n payload bytes were placed at the Data-In's offset: digest and advance. */
static int data_advance(struct iscsi_qpair *iq, uint32_t n)
{
	if (iq->s.ddgst) {
		uint32_t off = iq->rx_off, left = n;

		while (left) {
			struct iovec v[16];
			size_t cov;
			int k = src_slice(&iq->rx_task->src, off, left, v, 16, &cov);

			for (int i = 0; i < k; i++)
				iq->rx_crc = crc32c_update(iq->rx_crc, v[i].iov_base, v[i].iov_len);
			if (!cov)
				break;
			off += (uint32_t)cov;
			left -= (uint32_t)cov;
		}
	}
	iq->rx_off += n;
	iq->rx_left -= n;
	if (iq->rx_left)
		return 0;
	if (ISCSI_PAD(iq->rx_dlen) != iq->rx_dlen || iq->s.ddgst) {
		rx_set_state(iq, ISCSI_RX_TRAIL);
		return 0;
	}
	rx_set_state(iq, ISCSI_RX_HDR);
	return data_in_done(iq);
}

static int data_copy(struct iscsi_qpair *iq, const uint8_t *src, uint32_t n)
{
	uint32_t off = iq->rx_off, left = n;

	while (left) {
		struct iovec v[16];
		size_t cov;
		int k = src_slice(&iq->rx_task->src, off, left, v, 16, &cov);

		for (int i = 0; i < k; i++) {
			memcpy(v[i].iov_base, src, v[i].iov_len);
			src += v[i].iov_len;
		}
		if (!cov)
			break;
		off += (uint32_t)cov;
		left -= (uint32_t)cov;
	}
	return data_advance(iq, n);
}

/* Padding and data digest after a Data-In payload, all staged at @p. */
static int data_trail(struct iscsi_qpair *iq, const uint8_t *p)
{
	uint32_t pad = ISCSI_PAD(iq->rx_dlen) - iq->rx_dlen;

	if (iq->s.ddgst) {
		uint32_t crc = crc32c_final(crc32c_update(iq->rx_crc, p, pad));

		if (iscsi_get_digest(p + pad) != crc) {
			nlog_warn("queue %u: Data-In data digest mismatch for ITT 0x%08x",
				  iq->qp.qid, iq->rx_task->itt);
			iq->rx_task->ddgst_err = true;
		}
	}
	rx_set_state(iq, ISCSI_RX_HDR);
	return data_in_done(iq);
}

static bool rx_alive(const struct iscsi_qpair *iq)
{
	return iq->rx_state != ISCSI_RX_DEAD && iq->fd >= 0;
}

/* Parse what is staged. 0 when more bytes are needed, <0 once the queue failed. */
static int rx_parse(struct iscsi_qpair *iq)
{
	while (rx_alive(iq)) {
		uint8_t *p = iq->rbuf + iq->rpos;
		uint32_t avail = iq->rlen - iq->rpos, n;
		int rc = 0;

		switch (iq->rx_state) {
		case ISCSI_RX_HDR:
			if (avail < ISCSI_BHS_LEN)
				return 0;
			iq->rx_hdr_len = ISCSI_BHS_LEN + iscsi_bhs_ahs_len(p) +
					 (iq->s.hdgst ? ISCSI_DIGEST_LEN : 0);
			if (iq->rx_hdr_len > sizeof(iq->rx_hdr))
				return iscsi_fatal(iq, -EPROTO, "AHS too long");
			if (avail < iq->rx_hdr_len)
				return 0;
			iq->rpos += iq->rx_hdr_len;
			rc = rx_header(iq, p);
			break;
		case ISCSI_RX_SEG:
			if (avail < iq->rx_seg_len)
				return 0;
			iq->rpos += iq->rx_seg_len;
			if (iq->s.ddgst) {
				uint32_t pl = ISCSI_PAD(iq->rx_dlen);

				if (iscsi_get_digest(p + pl) != crc32c(p, pl))
					return iscsi_fatal(iq, -EPROTO, "data digest mismatch on "
									"opcode 0x%02x",
							   iscsi_bhs_opcode(iq->rx_hdr));
			}
			rc = handle_pdu(iq, p);
			if (rc == 0 && iq->rx_state == ISCSI_RX_SEG)
				rx_set_state(iq, ISCSI_RX_HDR);
			break;
		case ISCSI_RX_DATA:
			n = avail < iq->rx_left ? avail : iq->rx_left;
			if (!n)
				return 0;
			iq->rpos += n;
			rc = data_copy(iq, p, n);
			break;
		case ISCSI_RX_TRAIL:
			n = ISCSI_PAD(iq->rx_dlen) - iq->rx_dlen +
			    (iq->s.ddgst ? ISCSI_DIGEST_LEN : 0);
			if (avail < n)
				return 0;
			iq->rpos += n;
			rc = data_trail(iq, p);
			break;
		case ISCSI_RX_DEAD:
			return -1;
		}
		if (rc)
			return -1;
	}
	return -1;
}

/* One readv(): payload still owed to a task goes straight into its buffers, the rest into
 * the staging buffer. Returns bytes read, 0 at EOF, -1 with errno. */
static ssize_t rx_fill(struct iscsi_qpair *iq, size_t *asked)
{
	struct iovec iov[NVMEOF_IOV_MAX + 2];
	uint32_t direct = 0;
	int cnt = 0;
	ssize_t n;

	if (iq->rpos == iq->rlen) {
		iq->rpos = iq->rlen = 0;
	} else if (iq->rpos) {
		memmove(iq->rbuf, iq->rbuf + iq->rpos, iq->rlen - iq->rpos);
		iq->rlen -= iq->rpos;
		iq->rpos = 0;
	}
	if (iq->rlen == 0 && iq->rx_state == ISCSI_RX_DATA) {
		size_t cov;
		int k = src_slice(&iq->rx_task->src, iq->rx_off, iq->rx_left, iov, NVMEOF_IOV_MAX,
				  &cov);

		if (k > 0) {
			cnt = k;
			direct = (uint32_t)cov;
		}
	}
	iov[cnt].iov_base = iq->rbuf + iq->rlen;
	iov[cnt++].iov_len = ISCSI_RBUF_SIZE - iq->rlen;
	*asked = direct + (ISCSI_RBUF_SIZE - iq->rlen);

	do {
		n = readv(iq->fd, iov, cnt);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n;
	if (direct) {
		uint32_t d = (size_t)n < direct ? (uint32_t)n : direct;

		if (data_advance(iq, d))
			return -2;
		iq->rlen += (uint32_t)((size_t)n - d);
	} else {
		iq->rlen += (uint32_t)n;
	}
	return n;
}

static int iscsi_recv(struct iscsi_qpair *iq)
{
	for (int round = 0; round < ISCSI_RECV_ROUNDS && rx_alive(iq); round++) {
		size_t asked;
		ssize_t n = rx_fill(iq, &asked);

		if (n == 0)
			return iscsi_fatal(iq, -ECONNRESET,
					   "connection closed by the iSCSI target");
		if (n == -2)
			return iq->qp.err ? iq->qp.err : -EPROTO;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return iscsi_fatal(iq, -errno, "receive failed: %s", strerror(errno));
		}
		if (rx_parse(iq) < 0)
			return iq->qp.err ? iq->qp.err : -ECONNRESET;
		if ((size_t)n < asked)
			return 0;
	}
	return 0;
}

/* Send and receive what @revents allows. 0 or -errno once the connection is gone. */
static int iscsi_io(struct iscsi_qpair *iq, short revents)
{
	int rc;

	if (iq->fd < 0)
		return -ENOTCONN;
	if (!TAILQ_EMPTY(&iq->sendq) && (rc = iscsi_send(iq)) < 0)
		return rc;
	if ((revents & POLLIN) && (rc = iscsi_recv(iq)) < 0)
		return rc;
	/* R2Ts and NOP-Ins just received want their answers out now. */
	if (iq->fd >= 0 && !TAILQ_EMPTY(&iq->sendq) && (rc = iscsi_send(iq)) < 0)
		return rc;
	return 0;
}

static int iscsi_progress(struct nvmeof_qpair *qp, short revents)
{
	return iscsi_io(iscsi_qp(qp), revents);
}

static int iscsi_get_fd(const struct nvmeof_qpair *qp)
{
	return iscsi_qp(qp)->fd;
}

static short iscsi_which_events(const struct nvmeof_qpair *qp)
{
	const struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd < 0)
		return 0;
	return (short)(POLLIN | (TAILQ_EMPTY(&iq->sendq) ? 0 : POLLOUT));
}

/* ---- Tasks for NVMe commands ---------------------------------------------------------------- */
/* Translate the task's current step; 0, or 1 when the request was completed locally. */
static int task_build(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	struct nvmeof_req *req = t->req;
	struct iovec v[NVMEOF_IOV_MAX];
	const struct iovec *iov = req->iov;
	int iovcnt = req->iovcnt, rc;
	uint32_t avail;
	uint64_t xt;

	if (req->data_off && req->data_len) {
		iovcnt = iov_slice(req->iov, req->iovcnt, req->data_off, req->data_len, v,
				   NVMEOF_IOV_MAX);
		iov = v;
		if (iovcnt < 0)
			iovcnt = 0;
	}
	xt = qpair_xlate_begin(&iq->qp);
	rc = scsi_encap_build(&req->sqe, &iq->lu->lim, t->step, iov, iovcnt, req->data_len,
			      t->param, &t->enc);
	qpair_xlate_end(&iq->qp, xt);
	if (rc) {
		task_free(t);
		iscsi_complete_local(req, rc == SCSI_ENCAP_DONE ? 0 : (uint16_t)rc, true, 0, 0);
		return 1;
	}
	t->read = t->enc.data == SCSI_DATA_IN;
	t->write = t->enc.data != SCSI_DATA_IN && t->enc.data != SCSI_DATA_NONE;
	t->edtl = t->enc.xfer_len;
	memset(&t->src, 0, sizeof(t->src));
	avail = req->data_len;
	switch (t->enc.data) {
	case SCSI_DATA_NONE:
		break;
	case SCSI_DATA_IN:
	case SCSI_DATA_OUT:
	case SCSI_DATA_OUT_TWICE:
		if (t->enc.data_off > avail ||
		    (t->enc.data == SCSI_DATA_OUT_TWICE ? t->enc.part_len : t->edtl) >
			    avail - t->enc.data_off) {
			task_free(t);
			iscsi_complete_local(req, NVMEOF_STATUS(NVME_SCT_GENERIC,
								NVME_SC_DATA_SGL_LENGTH_INVALID),
					     true, 0, 0);
			return 1;
		}
		t->src.iov = req->iov;
		t->src.iovcnt = req->iovcnt;
		t->src.off = req->data_off + t->enc.data_off;
		t->src.part = t->enc.data == SCSI_DATA_OUT_TWICE ? t->enc.part_len : 0;
		break;
	case SCSI_DATA_OUT_PARAM:
		t->internal_iov.iov_base = t->param;
		t->internal_iov.iov_len = SCSI_ENCAP_PARAM_LEN;
		t->src.iov = &t->internal_iov;
		t->src.iovcnt = 1;
		break;
	case SCSI_DATA_OUT_ZERO_BLOCK:
		if (t->edtl > ISCSI_ZERO_BLOCK_MAX) {
			task_free(t);
			iscsi_complete_local(req, NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL),
					     false, 0, 0);
			return 1;
		}
		t->src.iov = &iq->zero_iov;
		t->src.iovcnt = 1;
		break;
	}
	return 0;
}

int iscsi_start_task(struct iscsi_qpair *iq, struct nvmeof_req *req, enum iscsi_task_kind kind)
{
	struct host_iscsi_task *t = &iq->tasks[req->slot];

	if (t->state != ISCSI_TASK_FREE)
		return -EBUSY;
	t->req = req;
	t->kind = kind;
	t->step = 0;
	t->retries = 0;
	if (kind == ISCSI_TASK_NOP) {
		t->read = t->write = false;
		t->edtl = 0;
		memset(&t->src, 0, sizeof(t->src));
	} else if (kind == ISCSI_TASK_SHUTDOWN) {
		static const struct scsi_lu_limits any;
		struct nvme_cmd flush = { .opc = NVME_OPC_FLUSH };

		scsi_encap_build(&flush, &any, 0, NULL, 0, 0, t->param, &t->enc);
		t->read = t->write = false;
		t->edtl = 0;
		memset(&t->src, 0, sizeof(t->src));
	} else if (!iq->lu) {
		t->req = NULL;
		return -ENODEV;
	} else if (task_build(iq, t)) {
		return 0; /* completed locally */
	}
	task_dispatch(iq, t);
	return 0;
}

static int iscsi_submit(struct nvmeof_qpair *qp, struct nvmeof_req *req)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd < 0)
		return -ENOTCONN;
	if (qp->qid == 0 || req->sqe.opc == NVME_OPC_FABRICS)
		return iscsi_admin_submit(iq, req);
	return iscsi_start_task(iq, req, ISCSI_TASK_SCSI);
}

/* ---- Internal commands (controller setup) --------------------------------------------------- */
int iscsi_exec_internal(struct iscsi_qpair *iq, const uint8_t *cdb, uint8_t cdb_len, void *buf,
			uint32_t len, bool write, uint8_t *status, uint8_t *sense,
			uint32_t *sense_len, uint32_t *got, int timeout_ms)
{
	struct host_iscsi_task *t = &iq->tasks[iq->qp.nreqs];
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int rc = 0;

	if (iq->fd < 0)
		return -ENOTCONN;
	if (t->state != ISCSI_TASK_FREE || cdb_len > SCSI_CDB_MAX)
		return -EINVAL;
	memset(&t->enc, 0, sizeof(t->enc));
	memcpy(t->enc.cdb, cdb, cdb_len);
	t->enc.cdb_len = cdb_len;
	t->enc.last = true;
	t->req = NULL;
	t->kind = ISCSI_TASK_SCSI;
	t->read = len && !write;
	t->write = len && write;
	t->edtl = len;
	t->internal_iov.iov_base = buf;
	t->internal_iov.iov_len = len;
	t->src.iov = &t->internal_iov;
	t->src.iovcnt = 1;
	t->src.off = 0;
	t->src.part = 0;
	t->done = false;
	task_dispatch(iq, t);

	while (!t->done) {
		struct pollfd pfd;
		uint64_t now;

		rc = iscsi_io(iq, POLLIN | POLLOUT);
		if (rc < 0 || t->done)
			break;
		now = now_ms();
		if (now >= deadline) {
			iscsi_fatal(iq, -ETIMEDOUT, "SCSI command 0x%02x timed out after %d ms",
				    cdb[0], timeout_ms);
			rc = -ETIMEDOUT;
			break;
		}
		pfd.fd = iq->fd;
		pfd.events = iscsi_which_events(&iq->qp);
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
	}
	if (!t->done) {
		if (t->state == ISCSI_TASK_WINDOW)
			TAILQ_REMOVE(&iq->windowq, t, wlink);
		task_free(t);
		return rc < 0 ? rc : -ECONNRESET;
	}
	*status = t->response == ISCSI_RESPONSE_COMPLETED ? t->status : SCSI_STATUS_BUSY;
	if (sense && sense_len) {
		memcpy(sense, t->sense, t->sense_len);
		*sense_len = t->sense_len;
	}
	if (got)
		*got = t->in_next;
	t->done = false;
	task_free(t);
	return 0;
}

/* ---- Logout and close ----------------------------------------------------------------------- */
static bool tasks_idle(const struct iscsi_qpair *iq)
{
	for (uint16_t i = 0; i < iq->ntasks; i++)
		if (iq->tasks[i].state != ISCSI_TASK_FREE)
			return false;
	return true;
}

/* Close the session politely: Logout (reason: close the session) and wait a little. */
static void iscsi_logout(struct iscsi_qpair *iq)
{
	uint64_t deadline = now_ms() + ISCSI_LOGOUT_TIMEOUT_MS;
	struct iscsi_pdu_out *p = ctl_get(iq);
	struct iscsi_logout_req *h;

	if (!p)
		return;
	iq->closing = true;
	iq->logout_done = false;
	h = (struct iscsi_logout_req *)p->hdr;
	iscsi_bhs_init(h, ISCSI_OP_LOGOUT_REQ | ISCSI_FLAG_IMMEDIATE,
		       ISCSI_FLAG_FINAL | ISCSI_LOGOUT_CLOSE_SESSION);
	put_be32(&h->itt, ISCSI_LOGOUT_ITT);
	put_be16(&h->cid, 0);
	put_be32(&h->cmdsn, iq->s.cmdsn);
	put_exp_statsn(iq, p->hdr);
	p->task = NULL;
	memset(&p->src, 0, sizeof(p->src));
	pdu_queue(iq, p, 0, 0);
	while (!iq->logout_done && iq->fd >= 0 && rx_alive(iq)) {
		struct pollfd pfd = { .fd = iq->fd, .events = iscsi_which_events(&iq->qp) };
		uint64_t now = now_ms();

		if (iscsi_io(iq, POLLIN | POLLOUT) < 0 || iq->logout_done)
			break;
		if (now >= deadline) {
			nlog_debug("queue %u: no Logout Response in %d ms", iq->qp.qid,
				   ISCSI_LOGOUT_TIMEOUT_MS);
			break;
		}
		poll(&pfd, 1, (int)(deadline - now));
	}
	iq->closing = false;
}

static void iscsi_qpair_close(struct nvmeof_qpair *qp)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd >= 0 && iq->logged_in && rx_alive(iq) && !iq->closing &&
	    (qp->state == QP_READY || qp->state == QP_CONNECTING) && tasks_idle(iq))
		iscsi_logout(iq);
	if (iq->fd >= 0)
		close(iq->fd);
	iq->fd = -1;
	iq->logged_in = false;
	TAILQ_INIT(&iq->sendq);
	TAILQ_INIT(&iq->windowq);
	iq->rx_state = ISCSI_RX_DEAD;
	iq->rx_task = NULL;
	for (int i = 0; i < ISCSI_CTL_PDUS; i++)
		iq->ctl[i].queued = false;
	if (iq->tasks)
		for (uint16_t i = 0; i < iq->ntasks; i++) {
			iq->tasks[i].pdu.queued = false;
			task_free(&iq->tasks[i]);
		}
}

static void iscsi_set_icdata(struct nvmeof_qpair *qp, uint32_t bytes)
{
	(void)qp;
	(void)bytes; /* immediate data follows the negotiated FirstBurstLength */
}

static void iscsi_get_info(const struct nvmeof_qpair *qp, struct nvmeof_ctrlr_info *info)
{
	const struct iscsi_qpair *iq = iscsi_qp(qp);

	snprintf(info->transport, sizeof(info->transport), "iscsi");
	info->hdgst = iq->s.hdgst;
	info->ddgst = iq->s.ddgst;
	info->maxh2cdata = iq->s.max_xmit_dsl;
}

const struct nvmeof_transport_ops iscsi_transport_ops = {
	.name = "iscsi",
	.uri_transport = URI_TRANSPORT_ISCSI,
	.qpair_alloc = iscsi_qpair_alloc,
	.qpair_connect = iscsi_qpair_connect,
	.qpair_close = iscsi_qpair_close,
	.qpair_free = iscsi_qpair_free,
	.get_fd = iscsi_get_fd,
	.which_events = iscsi_which_events,
	.submit = iscsi_submit,
	.progress = iscsi_progress,
	.set_icdata = iscsi_set_icdata,
	.get_info = iscsi_get_info,
	.ctrlr_setup = iscsi_ctrlr_setup,
};
