/* SPDX-License-Identifier: MIT */
/*
 * iSCSI host transport, receive path: the PDU receive state machine (header, segment,
 * Data-In payload, trailing digest) and the handlers of SCSI Response, Data-In, R2T,
 * NOP-In, Logout Response, Reject and Asynchronous Message. Headers and small segments
 * land in a staging buffer that one readv() fills with many PDUs at once; when a Data-In
 * payload is still to come, the readv() points at the task's buffers first and the staging
 * buffer after them.
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

#define ISCSI_RECV_ROUNDS    8 /* readv() calls per progress call */
#define ISCSI_ITT_INDEX_MASK 0xffffu

static const char *const rx_state_names[] = {
	[ISCSI_RX_HDR] = "hdr",     [ISCSI_RX_SEG] = "seg",   [ISCSI_RX_DATA] = "data",
	[ISCSI_RX_TRAIL] = "trail", [ISCSI_RX_DEAD] = "dead",
};

void iscsi_rx_set_state(struct iscsi_qpair *iq, enum iscsi_rx_state s)
{
	if (iq->rx_state == ISCSI_RX_DEAD)
		return;
	if (s == ISCSI_RX_DEAD)
		nlog_debug("queue %u: iSCSI rx %s -> dead", iq->qp.qid,
			   rx_state_names[iq->rx_state]);
	iq->rx_state = s;
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
	iscsi_window_drain(iq);
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
	return iscsi_task_status(iq, t);
}

/* Data-In header: checks, then its payload goes into the task's buffers. */
static int handle_data_in(struct iscsi_qpair *iq)
{
	const struct iscsi_data_in *d = (const void *)iq->rx_hdr;
	uint32_t itt = get_be32(&d->itt), off = get_be32(&d->buffer_offset);
	uint32_t datasn = get_be32(&d->datasn), dlen = iq->rx_dlen;
	struct host_iscsi_task *t = host_task_by_itt(iq, itt);

	if (!t || !t->read)
		return iscsi_fatal(iq, -EPROTO, "Data-In for ITT 0x%08x, which reads nothing", itt);
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
	return iscsi_task_status(iq, t);
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
		return iscsi_fatal(iq, -EPROTO,
				   "R2T [%u, +%u) for ITT 0x%08x of %u bytes "
				   "(MaxBurstLength %u)",
				   off, len, itt, t->edtl, iq->s.max_burst);
	t->exp_r2tsn++;
	if (t->state == ISCSI_TASK_SEND) {
		if (t->r2t_pending)
			return iscsi_fatal(iq, -EPROTO,
					   "more R2Ts than MaxOutstandingR2T for "
					   "ITT 0x%08x",
					   itt);
		t->r2t_pending = true;
		t->r2t_off = off;
		t->r2t_len = len;
		t->r2t_ttt = ttt;
		return 0;
	}
	iscsi_start_r2t(iq, t, off, len, ttt);
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
		return iscsi_task_status(iq, t);
	}
	sn_update(iq, iq->rx_hdr, false);
	if (ttt == ISCSI_TAG_RESERVED)
		return 0; /* just a window update */
	/* The target pings: answer with a NOP-Out carrying its TTT and LUN. */
	p = host_iscsi_ctl_get(iq);
	if (!p)
		return iscsi_fatal(iq, -EPROTO, "too many NOP-In pings unanswered");
	h = (struct iscsi_nop_out *)p->hdr;
	iscsi_bhs_init(h, ISCSI_OP_NOP_OUT | ISCSI_FLAG_IMMEDIATE, ISCSI_FLAG_FINAL);
	memcpy(h->lun, n->lun, sizeof(h->lun));
	put_be32(&h->itt, ISCSI_TAG_RESERVED);
	put_be32(&h->ttt, ttt);
	put_be32(&h->cmdsn, iq->s.cmdsn);
	iscsi_put_exp_statsn(iq, p->hdr);
	p->task = NULL;
	memset(&p->src, 0, sizeof(p->src));
	iscsi_pdu_queue(iq, p, 0, 0);
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
		return iscsi_fatal(iq, -ECONNRESET,
				   "the iSCSI target drops the connection "
				   "(asynchronous event %u)",
				   a->async_event);
	case ISCSI_ASYNC_NEGOTIATE:
		return iscsi_fatal(iq, -ECONNRESET,
				   "the iSCSI target asks for renegotiation, "
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

		return iscsi_fatal(iq, -EPROTO,
				   "the iSCSI target rejected a PDU (reason 0x%02x, "
				   "opcode 0x%02x, ITT 0x%08x)",
				   r->reason, iq->rx_dlen ? iscsi_bhs_opcode(seg) : 0, ritt);
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
		return iscsi_fatal(iq, -EPROTO,
				   "%u-byte data segment beyond our "
				   "MaxRecvDataSegmentLength %u",
				   dlen, iq->s.max_recv_dsl);
	iq->rx_dlen = dlen;
	if (iscsi_bhs_opcode(p) == ISCSI_OP_DATA_IN && dlen) {
		if (handle_data_in(iq))
			return -1;
		iscsi_rx_set_state(iq, ISCSI_RX_DATA);
		return 0;
	}
	iq->rx_seg_len = dlen ? iscsi_data_wire_len(dlen, iq->s.ddgst) : 0;
	if (iq->rx_seg_len > ISCSI_RBUF_SIZE)
		return iscsi_fatal(iq, -EPROTO, "%u-byte %s segment too large for this initiator",
				   dlen, "PDU");
	if (iq->rx_seg_len == 0) {
		int rc = handle_pdu(iq, NULL);

		if (rc == 0)
			iscsi_rx_set_state(iq, ISCSI_RX_HDR);
		return rc;
	}
	iscsi_rx_set_state(iq, ISCSI_RX_SEG);
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
			int k = iscsi_src_slice(&iq->rx_task->src, off, left, v, 16, &cov);

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
		iscsi_rx_set_state(iq, ISCSI_RX_TRAIL);
		return 0;
	}
	iscsi_rx_set_state(iq, ISCSI_RX_HDR);
	return data_in_done(iq);
}

static int data_copy(struct iscsi_qpair *iq, const uint8_t *src, uint32_t n)
{
	uint32_t off = iq->rx_off, left = n;

	while (left) {
		struct iovec v[16];
		size_t cov;
		int k = iscsi_src_slice(&iq->rx_task->src, off, left, v, 16, &cov);

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
	iscsi_rx_set_state(iq, ISCSI_RX_HDR);
	return data_in_done(iq);
}

bool iscsi_rx_alive(const struct iscsi_qpair *iq)
{
	return iq->rx_state != ISCSI_RX_DEAD && iq->fd >= 0;
}

/* Parse what is staged. 0 when more bytes are needed, <0 once the queue failed. */
static int rx_parse(struct iscsi_qpair *iq)
{
	while (iscsi_rx_alive(iq)) {
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
					return iscsi_fatal(iq, -EPROTO,
							   "data digest mismatch on "
							   "opcode 0x%02x",
							   iscsi_bhs_opcode(iq->rx_hdr));
			}
			rc = handle_pdu(iq, p);
			if (rc == 0 && iq->rx_state == ISCSI_RX_SEG)
				iscsi_rx_set_state(iq, ISCSI_RX_HDR);
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
		int k = iscsi_src_slice(&iq->rx_task->src, iq->rx_off, iq->rx_left, iov,
					NVMEOF_IOV_MAX, &cov);

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

int iscsi_recv(struct iscsi_qpair *iq)
{
	for (int round = 0; round < ISCSI_RECV_ROUNDS && iscsi_rx_alive(iq); round++) {
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
