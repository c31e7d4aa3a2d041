/* SPDX-License-Identifier: MIT */
/*
 * iSCSI host transport, send path: PDUs are queued with their header digest, data source,
 * padding and data digest computed up front; one sendmsg() gathers as many queued PDUs as
 * fit (headers, the caller's buffers, padding, digests). Builds the SCSI Command (with
 * immediate data), NOP-Out, and Data-Out PDUs (unsolicited up to FirstBurstLength, or
 * answering an R2T).
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
#include "queue/host_transport.h"

#define ISCSI_SEND_IOV   64         /* iovecs per sendmsg() */
#define ISCSI_SEND_BYTES (1u << 20) /* bytes per sendmsg() */

static const uint8_t zero_pad[4];

/* ---- Data sources --------------------------------------------------------------------------- */
/* Fill @out (room for @max) with the part of @src covering [@off, @off + @len); stops when
 * @max entries are used. *@covered says how far it got. */
int iscsi_src_slice(const struct iscsi_src *src, uint32_t off, uint32_t len, struct iovec *out,
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
		int k = iscsi_src_slice(src, off, left, v, 16, &cov);

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
void iscsi_pdu_queue(struct iscsi_qpair *iq, struct iscsi_pdu_out *p, uint32_t data_off,
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

void iscsi_put_exp_statsn(struct iscsi_qpair *iq, uint8_t *bhs)
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
	iscsi_put_exp_statsn(iq, p->hdr);
	put_be32(&h->datasn, t->out_datasn++);
	put_be32(&h->buffer_offset, t->out_next);
	p->src = t->src;
	iscsi_pdu_queue(iq, p, t->out_next, len);
	t->out_next += len;
}

void iscsi_start_r2t(struct iscsi_qpair *iq, struct host_iscsi_task *t, uint32_t off, uint32_t len,
		     uint32_t ttt)
{
	t->r2t_pending = false;
	t->out_next = off;
	t->out_end = off + len;
	t->out_ttt = ttt;
	t->out_datasn = 0;
	iscsi_task_set_state(t, ISCSI_TASK_SEND);
	queue_data_out(iq, t);
}

/* The task got its CmdSN: queue its SCSI Command (with immediate data) or NOP-Out. */
void iscsi_task_issue(struct iscsi_qpair *iq, struct host_iscsi_task *t)
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
		iscsi_put_exp_statsn(iq, p->hdr);
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
		iscsi_put_exp_statsn(iq, p->hdr);
		memcpy(h->cdb, t->enc.cdb, t->enc.cdb_len);
		t->out_next = imm;
		t->out_end = unsol;
	}
	iscsi_task_set_state(t, ISCSI_TASK_SEND);
	iscsi_pdu_queue(iq, p, 0, imm);
}

/* The task's PDU went out completely. */
static void task_pdu_sent(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	if (t->finish_after_send) {
		iscsi_task_finish(iq, t);
		return;
	}
	if (t->out_next < t->out_end) {
		queue_data_out(iq, t);
		return;
	}
	if (t->r2t_pending) {
		iscsi_start_r2t(iq, t, t->r2t_off, t->r2t_len, t->r2t_ttt);
		return;
	}
	iscsi_task_set_state(t, ISCSI_TASK_WAIT);
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
		int k = iscsi_src_slice(&p->src, p->data_off + skip, p->data_len - skip, iov + n,
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

int iscsi_send(struct iscsi_qpair *iq)
{
	while (!TAILQ_EMPTY(&iq->sendq) && iq->fd >= 0) {
		struct iovec iov[ISCSI_SEND_IOV];
		struct msghdr msg = { 0 };
		struct iscsi_pdu_out *p;
		size_t want = 0;
		ssize_t n, sent;
		int cnt = 0;

		TAILQ_FOREACH(p, &iq->sendq, link)
		{
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

struct iscsi_pdu_out *host_iscsi_ctl_get(struct iscsi_qpair *iq)
{
	for (int i = 0; i < ISCSI_CTL_PDUS; i++)
		if (!iq->ctl[i].queued)
			return &iq->ctl[i];
	return NULL;
}
