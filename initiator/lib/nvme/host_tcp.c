/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP host transport: connection and ICReq/ICResp, the PDU send path (CapsuleCmd
 * with in-capsule data, H2CData answering R2T within MAXH2CDATA) and the PDU receive
 * state machine (CapsuleResp, C2HData straight into the request's iovecs, R2T,
 * C2HTermReq), with header and data digests. PDU headers are built and checked by the
 * shared codec in common/nvme_tcp_pdu.c.
 *
 * Receive: headers (and small payloads that arrive with them) land in a staging buffer
 * that one readv() fills with many PDUs at once; when a C2HData payload is still to
 * come, the readv() points at the request's own buffers first and at the staging buffer
 * after them, so large reads are not copied. Send: one loop (host_tcp_flush) for every
 * PDU the host sends, ICReq and H2CTermReq included: sendmsg() gathers the queued PDUs
 * (headers, the caller's data buffers, digests) and a partial write resumes where it
 * stopped.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/nvme_tcp_pdu.h"
#include "host_sock.h"
#include "host_nvme.h"

#define HOST_TCP_HDR_BUF      136         /* PDU header + digest + padding (PDO <= 128) */
#define HOST_TCP_RBUF_SIZE    (64 * 1024) /* receive staging buffer */
#define HOST_TCP_SEND_IOV     64          /* iovecs per sendmsg() */
#define HOST_TCP_SEND_BYTES   (1u << 20)  /* bytes per sendmsg() */
#define HOST_TCP_RECV_ROUNDS  8           /* readv() calls per progress call */
#define HOST_TCP_ADMIN_ICDATA 8192        /* in-capsule data assumed on the admin queue */

/* Per-request transmit machine. */
enum host_tcp_slot_state {
	HOST_TCP_SLOT_IDLE,     /* slot not in use */
	HOST_TCP_SLOT_SEND_CMD, /* CapsuleCmd (and in-capsule data) queued or partly sent */
	HOST_TCP_SLOT_WAIT,     /* waiting for R2T, C2HData or CapsuleResp */
	HOST_TCP_SLOT_SEND_H2C, /* H2CData PDUs answering an R2T queued or partly sent */
};

/* Receive machine, one PDU at a time. */
enum host_tcp_rx_state {
	HOST_TCP_RX_CH,    /* common header (8 bytes) */
	HOST_TCP_RX_PSH,   /* rest of the header and its digest (TermReq: the whole PDU) */
	HOST_TCP_RX_PAD,   /* padding between header and PDO */
	HOST_TCP_RX_DATA,  /* C2HData payload, into the request's buffers */
	HOST_TCP_RX_DDGST, /* data digest */
	HOST_TCP_RX_DEAD,  /* fatal error or closed: nothing more is parsed */
};

/* The one PDU a request is sending. */
struct host_tcp_send {
	const uint8_t *hdr; /* the slot's header, or the queue pair's control buffer */
	uint32_t hdr_len;
	uint32_t data_off; /* in the request's data */
	uint32_t data_len;
	bool ddgst;
	uint32_t total;
	uint32_t sent;
};

struct host_tcp_slot {
	struct nvmeof_req *req;
	enum host_tcp_slot_state state;
	uint8_t hdr[HOST_TCP_HDR_BUF] __attribute__((aligned(8))); /* read as PDU structs */
	uint8_t ddgst[4];
	struct host_tcp_send send;
	uint32_t icdata;   /* in-capsule bytes */
	uint32_t c2h_next; /* next C2HData offset expected */
	uint32_t h2c_done; /* data bytes delivered to the controller */
	uint32_t h2c_next; /* next H2CData offset for the current R2T */
	uint32_t r2t_end;
	uint16_t ttag;
	bool ddgst_err;
	TAILQ_ENTRY(host_tcp_slot) link; /* send queue */
};

struct host_tcp_rx {
	enum host_tcp_rx_state state;
	uint8_t hdr[NVME_TCP_TERM_REQ_PLEN_MAX + 8] __attribute__((aligned(8)));
	uint32_t psh_len;
	uint32_t pad_left;
	struct host_tcp_slot *slot; /* C2HData destination */
	uint32_t data_off;
	uint32_t data_left;
	uint32_t crc;
	uint8_t ddgst[4];
	uint32_t ddgst_got;
	uint8_t flags;
};

struct host_tcp_qpair {
	struct nvmeof_qpair qp;
	int fd;
	struct host_sock sock; /* the stream over fd: plain or TLS (host_tls.c) */
	struct nvme_tcp_params p;
	uint32_t icdata_max;
	struct host_tcp_slot *slots;
	TAILQ_HEAD(, host_tcp_slot) sendq;
	struct host_tcp_rx rx;
	uint8_t *rbuf;
	uint32_t rpos, rlen;
	uint64_t ddgst_errors;
	/* ICReq and H2CTermReq: queued and sent like any PDU, owned by no request */
	struct host_tcp_slot ctl;
	uint8_t ctl_buf[NVME_TCP_TERM_REQ_PLEN_MAX] __attribute__((aligned(8)));
};

static_assert(sizeof(struct nvme_tcp_icreq) <= NVME_TCP_TERM_REQ_PLEN_MAX, "ICReq in ctl_buf");

static struct host_tcp_qpair *host_tcp_qp(const struct nvmeof_qpair *qp)
{
	return container_of(qp, struct host_tcp_qpair, qp);
}

static const char *const host_tcp_rx_state_names[] = {
	[HOST_TCP_RX_CH] = "ch",     [HOST_TCP_RX_PSH] = "psh",     [HOST_TCP_RX_PAD] = "pad",
	[HOST_TCP_RX_DATA] = "data", [HOST_TCP_RX_DDGST] = "ddgst", [HOST_TCP_RX_DEAD] = "dead",
};

static void host_tcp_rx_set_state(struct host_tcp_qpair *tq, enum host_tcp_rx_state s)
{
	if (tq->rx.state == HOST_TCP_RX_DEAD)
		return;
	if (nlog_enabled(NVMEOF_LOG_DEBUG) && s == HOST_TCP_RX_DEAD)
		nlog_debug("queue %u: rx %s -> dead", tq->qp.qid,
			   host_tcp_rx_state_names[tq->rx.state]);
	tq->rx.state = s;
}

/* Legal transmit-machine transitions; anything else is a bug in this file. */
static bool slot_transition_ok(enum host_tcp_slot_state from, enum host_tcp_slot_state to)
{
	switch (to) {
	case HOST_TCP_SLOT_SEND_CMD:
		return from == HOST_TCP_SLOT_IDLE;
	case HOST_TCP_SLOT_WAIT:
		return from == HOST_TCP_SLOT_SEND_CMD || from == HOST_TCP_SLOT_SEND_H2C;
	case HOST_TCP_SLOT_SEND_H2C:
		return from == HOST_TCP_SLOT_WAIT;
	case HOST_TCP_SLOT_IDLE:
		return from == HOST_TCP_SLOT_WAIT;
	}
	return false;
}

static void slot_set_state(struct host_tcp_slot *slot, enum host_tcp_slot_state s)
{
	if (!slot_transition_ok(slot->state, s))
		nlog_err("internal error: request state %d -> %d", slot->state, s);
	slot->state = s;
}

/* ---- Send path ------------------------------------------------------------------------ */
static void slot_set_digest(struct host_tcp_slot *slot)
{
	struct nvmeof_req *req = slot->req;
	struct iovec v[NVMEOF_IOV_MAX];
	int n;

	n = iov_slice(req->iov, req->iovcnt, req->data_off + slot->send.data_off,
		      slot->send.data_len, v, NVMEOF_IOV_MAX);
	put_le32(slot->ddgst, crc32c_iov(v, n < 0 ? 0 : n, slot->send.data_len));
}

static void slot_queue_pdu(struct host_tcp_qpair *tq, struct host_tcp_slot *slot, uint32_t hdr_len,
			   uint32_t data_off, uint32_t data_len)
{
	slot->send.hdr = slot->hdr;
	slot->send.hdr_len = hdr_len;
	slot->send.data_off = data_off;
	slot->send.data_len = data_len;
	slot->send.ddgst = tq->p.ddgst && data_len;
	slot->send.total = hdr_len + data_len + (slot->send.ddgst ? NVME_TCP_DIGEST_LEN : 0);
	slot->send.sent = 0;
	if (slot->send.ddgst)
		slot_set_digest(slot);
	TAILQ_INSERT_TAIL(&tq->sendq, slot, link);
}

/* A control PDU (ICReq, H2CTermReq) built in tq->ctl_buf. */
static void ctl_queue(struct host_tcp_qpair *tq, size_t len)
{
	struct host_tcp_slot *c = &tq->ctl;

	c->req = NULL;
	memset(&c->send, 0, sizeof(c->send));
	c->send.hdr = tq->ctl_buf;
	c->send.hdr_len = (uint32_t)len;
	c->send.total = (uint32_t)len;
	TAILQ_INSERT_TAIL(&tq->sendq, c, link);
}

static void queue_h2c(struct host_tcp_qpair *tq, struct host_tcp_slot *slot)
{
	uint32_t len = slot->r2t_end - slot->h2c_next;
	uint8_t flags = 0;
	size_t hl;

	if (len > tq->p.maxh2cdata)
		len = tq->p.maxh2cdata;
	if (slot->h2c_next + len == slot->r2t_end)
		flags = NVME_TCP_F_DATA_LAST;
	hl = nvme_tcp_build_data(slot->hdr, NVME_TCP_PDU_H2C_DATA, slot->req->cid, slot->ttag,
				 slot->h2c_next, len, flags, &tq->p);
	slot_queue_pdu(tq, slot, (uint32_t)hl, slot->h2c_next, len);
}

static int host_tcp_submit(struct nvmeof_qpair *qp, struct nvmeof_req *req)
{
	struct host_tcp_qpair *tq = host_tcp_qp(qp);
	struct host_tcp_slot *slot = &tq->slots[req->slot];
	struct nvme_sgl_desc *sgl = &req->sqe.dptr.sgl1;
	size_t hl;

	if (tq->fd < 0)
		return -ENOTCONN;
	slot->req = req;
	slot->icdata = 0;
	slot->c2h_next = 0;
	slot->h2c_done = 0;
	slot->ddgst_err = false;
	memset(sgl, 0, sizeof(*sgl));
	if (req->xfer == NVME_XFER_HOST_TO_CTRLR && req->data_len &&
	    req->data_len <= tq->icdata_max) {
		slot->icdata = req->data_len;
		sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	} else {
		sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
					  NVME_SGL_SUBTYPE_TRANSPORT);
	}
	put_le32(sgl->length, req->data_len);
	req->sqe.flags = (uint8_t)((req->sqe.flags & ~(3u << NVME_CMD_PSDT_SHIFT)) |
				   NVME_CMD_PSDT_SGL_MPTR_CONTIG << NVME_CMD_PSDT_SHIFT);
	hl = nvme_tcp_build_capsule_cmd(slot->hdr, &req->sqe, slot->icdata, &tq->p);
	slot_set_state(slot, HOST_TCP_SLOT_SEND_CMD);
	slot_queue_pdu(tq, slot, (uint32_t)hl, 0, slot->icdata);
	return 0;
}

/* A PDU went out completely. */
static void slot_sent(struct host_tcp_qpair *tq, struct host_tcp_slot *slot)
{
	if (slot == &tq->ctl)
		return;
	if (slot->state == HOST_TCP_SLOT_SEND_CMD) {
		slot->h2c_done = slot->icdata;
		slot_set_state(slot, HOST_TCP_SLOT_WAIT);
		return;
	}
	/* H2CData */
	slot->h2c_next += slot->send.data_len;
	slot->h2c_done += slot->send.data_len;
	if (slot->h2c_next < slot->r2t_end)
		queue_h2c(tq, slot);
	else
		slot_set_state(slot, HOST_TCP_SLOT_WAIT);
}

/* The unsent part of @slot's PDU as iovecs; returns entries added (0 if no room). */
static int pdu_iov(struct host_tcp_slot *slot, struct iovec *iov, int room, size_t *bytes)
{
	const struct host_tcp_send *s = &slot->send;
	uint32_t skip = s->sent;
	int n = 0;

	*bytes = 0;
	if (skip < s->hdr_len) {
		if (n == room)
			return n;
		iov[n].iov_base = (void *)(s->hdr + skip);
		iov[n].iov_len = s->hdr_len - skip;
		*bytes += iov[n++].iov_len;
		skip = 0;
	} else {
		skip -= s->hdr_len;
	}
	if (s->data_len && skip < s->data_len) {
		struct nvmeof_req *req = slot->req;
		size_t covered;
		int k = iov_slice_upto(req->iov, req->iovcnt, req->data_off + s->data_off + skip,
				       s->data_len - skip, iov + n, room - n, &covered);

		*bytes += covered;
		n += k;
		if (covered < s->data_len - skip)
			return n; /* out of entries: the rest goes next time */
		skip = 0;
	} else if (s->data_len) {
		skip -= s->data_len;
	}
	if (s->ddgst && skip < NVME_TCP_DIGEST_LEN && n < room) {
		iov[n].iov_base = (uint8_t *)slot->ddgst + skip;
		iov[n].iov_len = NVME_TCP_DIGEST_LEN - skip;
		*bytes += iov[n++].iov_len;
	}
	return n;
}

/* The send loop: gather what is queued (a partly sent PDU from where it stopped) into
 * sendmsg() calls until the queue is empty or the socket is full. 0, or -errno. */
static int host_tcp_flush(struct host_tcp_qpair *tq)
{
	while (!TAILQ_EMPTY(&tq->sendq) && tq->fd >= 0) {
		struct iovec iov[HOST_TCP_SEND_IOV];
		struct host_tcp_slot *slot;
		size_t want = 0;
		ssize_t n, sent;
		int cnt = 0;

		TAILQ_FOREACH(slot, &tq->sendq, link) {
			size_t b;
			int k = pdu_iov(slot, iov + cnt, HOST_TCP_SEND_IOV - cnt, &b);

			cnt += k;
			want += b;
			if (cnt == HOST_TCP_SEND_IOV || want >= HOST_TCP_SEND_BYTES ||
			    slot->send.sent + b < slot->send.total)
				break;
		}
		n = tq->sock.ops->writev(&tq->sock, iov, cnt);
		sent = n;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		while (n > 0 && (slot = TAILQ_FIRST(&tq->sendq))) {
			uint32_t left = slot->send.total - slot->send.sent;

			if ((size_t)n < left) {
				slot->send.sent += (uint32_t)n;
				break;
			}
			n -= left;
			slot->send.sent = slot->send.total;
			TAILQ_REMOVE(&tq->sendq, slot, link);
			slot_sent(tq, slot);
		}
		if ((size_t)sent < want)
			return 0; /* socket buffer full */
	}
	return 0;
}

/* I/O: the send loop; a failure fails the queue pair. 0, or -1 after qpair_fail(). */
static int host_tcp_send(struct host_tcp_qpair *tq)
{
	int rc = host_tcp_flush(tq);

	if (rc == 0)
		return 0;
	qpair_fail(&tq->qp, rc == -EPIPE ? -ECONNRESET : rc, "send failed: %s", strerror(-rc));
	return -1;
}

/* ---- Fatal errors ----------------------------------------------------------------------- */
/* A PDU we cannot accept: tell the controller with an H2CTermReq when the stream is at a
 * PDU boundary, then fail the queue pair. */
__attribute__((format(printf, 6, 7))) static int host_tcp_fatal(struct host_tcp_qpair *tq,
								uint16_t fes, uint32_t fei,
								const void *bad, size_t bad_len,
								const char *fmt, ...)
{
	struct host_tcp_slot *head = TAILQ_FIRST(&tq->sendq);
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (tq->fd >= 0 && (!head || head->send.sent == 0)) {
		/* At a PDU boundary: the TermReq goes out alone (nothing queued behind it would
		 * be answered), through the send loop, as far as the socket takes it now. */
		TAILQ_INIT(&tq->sendq);
		ctl_queue(tq, nvme_tcp_build_term_req(tq->ctl_buf, NVME_TCP_PDU_H2C_TERM_REQ, fes,
						      fei, bad, bad_len));
		(void)host_tcp_flush(tq);
	}
	host_tcp_rx_set_state(tq, HOST_TCP_RX_DEAD);
	qpair_fail(&tq->qp, -EPROTO, "protocol error: %s (%s)", msg, nvme_tcp_fes_name(fes));
	return -EPROTO;
}

/* ---- Receive path ---------------------------------------------------------------------- */
static struct host_tcp_slot *slot_for_cid(struct host_tcp_qpair *tq, uint16_t cid)
{
	struct nvmeof_req *req = qpair_find_req(&tq->qp, cid);

	return req ? &tq->slots[req->slot] : NULL;
}

static void slot_finish(struct host_tcp_slot *slot, const struct nvme_cpl *cqe, int err)
{
	struct nvmeof_req *req = slot->req;

	slot_set_state(slot, HOST_TCP_SLOT_IDLE);
	slot->req = NULL;
	req_complete(req, cqe, err);
}

static int handle_resp(struct host_tcp_qpair *tq)
{
	const struct nvme_tcp_rsp *pdu = (const void *)tq->rx.hdr;
	uint16_t cid = get_le16(&pdu->cqe.cid);
	struct host_tcp_slot *slot = slot_for_cid(tq, cid);
	struct nvmeof_req *req;

	if (!slot)
		return host_tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
				      offsetof(struct nvme_tcp_rsp, cqe) +
					      offsetof(struct nvme_cpl, cid),
				      pdu, sizeof(*pdu), "CapsuleResp for unknown CID %u", cid);
	req = slot->req;
	if (slot->state != HOST_TCP_SLOT_WAIT)
		return host_tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0, pdu, sizeof(*pdu),
				      "CapsuleResp for CID %u while its data is still being sent",
				      cid);
	if (cqe_status(&pdu->cqe) == 0) {
		if (req->xfer == NVME_XFER_CTRLR_TO_HOST && slot->c2h_next != req->data_len)
			return host_tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0, pdu, sizeof(*pdu),
					      "CID %u completed with %u of %u data bytes", cid,
					      slot->c2h_next, req->data_len);
		if (req->xfer == NVME_XFER_HOST_TO_CTRLR && slot->h2c_done != req->data_len)
			return host_tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0, pdu, sizeof(*pdu),
					      "CID %u completed after %u of %u data bytes", cid,
					      slot->h2c_done, req->data_len);
	}
	if (slot->ddgst_err)
		slot_finish(slot, NULL, -EBADMSG);
	else
		slot_finish(slot, &pdu->cqe, 0);
	host_tcp_rx_set_state(tq, HOST_TCP_RX_CH);
	return 0;
}

static int handle_c2h(struct host_tcp_qpair *tq)
{
	const struct nvme_tcp_data_hdr *pdu = (const void *)tq->rx.hdr;
	uint16_t cid = get_le16(&pdu->cccid);
	uint32_t datao = get_le32(&pdu->datao), datal = get_le32(&pdu->datal);
	uint32_t plen_data = nvme_tcp_data_len(&pdu->ch, tq->p.ddgst);
	struct host_tcp_slot *slot = slot_for_cid(tq, cid);
	struct nvmeof_req *req;

	if (!slot)
		return host_tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
				      offsetof(struct nvme_tcp_data_hdr, cccid), pdu, sizeof(*pdu),
				      "C2HData for unknown CID %u", cid);
	req = slot->req;
	if (req->xfer != NVME_XFER_CTRLR_TO_HOST || slot->state != HOST_TCP_SLOT_WAIT)
		return host_tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0, pdu, sizeof(*pdu),
				      "C2HData for CID %u, which reads no data", cid);
	if (datal != plen_data)
		return host_tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
				      offsetof(struct nvme_tcp_data_hdr, datal), pdu, sizeof(*pdu),
				      "C2HData DATAL %u but PDU carries %u bytes", datal,
				      plen_data);
	if (datao != slot->c2h_next || datao > req->data_len || datal > req->data_len - datao)
		return host_tcp_fatal(tq, NVME_TCP_FES_DATA_OUT_OF_RANGE,
				      offsetof(struct nvme_tcp_data_hdr, datao), pdu, sizeof(*pdu),
				      "C2HData [%u, +%u) for CID %u: expected offset %u of %u",
				      datao, datal, cid, slot->c2h_next, req->data_len);
	if ((pdu->ch.flags & NVME_TCP_F_DATA_SUCCESS) &&
	    (!(pdu->ch.flags & NVME_TCP_F_DATA_LAST) || datao + datal != req->data_len))
		return host_tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
				      offsetof(struct nvme_tcp_common_hdr, flags), pdu,
				      sizeof(*pdu), "C2HData SUCCESS flag before the last data");
	tq->rx.slot = slot;
	tq->rx.data_off = datao;
	tq->rx.data_left = datal;
	tq->rx.crc = CRC32C_SEED;
	tq->rx.ddgst_got = 0;
	tq->rx.flags = pdu->ch.flags;
	tq->rx.pad_left = nvme_tcp_pad_len(&pdu->ch, tq->p.hdgst);
	host_tcp_rx_set_state(tq, tq->rx.pad_left ? HOST_TCP_RX_PAD : HOST_TCP_RX_DATA);
	return 0;
}

static int handle_r2t(struct host_tcp_qpair *tq)
{
	const struct nvme_tcp_r2t_hdr *pdu = (const void *)tq->rx.hdr;
	uint16_t cid = get_le16(&pdu->cccid);
	uint32_t r2to = get_le32(&pdu->r2to), r2tl = get_le32(&pdu->r2tl);
	struct host_tcp_slot *slot = slot_for_cid(tq, cid);
	struct nvmeof_req *req;

	if (!slot)
		return host_tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR,
				      offsetof(struct nvme_tcp_r2t_hdr, cccid), pdu, sizeof(*pdu),
				      "R2T for unknown CID %u", cid);
	req = slot->req;
	if (req->xfer != NVME_XFER_HOST_TO_CTRLR)
		return host_tcp_fatal(tq, NVME_TCP_FES_PDU_SEQ_ERR, 0, pdu, sizeof(*pdu),
				      "R2T for CID %u, which writes no data", cid);
	if (slot->state != HOST_TCP_SLOT_WAIT)
		return host_tcp_fatal(tq, NVME_TCP_FES_DATA_LIMIT_EXCEEDED, 0, pdu, sizeof(*pdu),
				      "R2T for CID %u while another transfer is in progress", cid);
	if (r2tl == 0 || r2to != slot->h2c_done || r2to > req->data_len ||
	    r2tl > req->data_len - r2to)
		return host_tcp_fatal(tq, NVME_TCP_FES_DATA_OUT_OF_RANGE,
				      offsetof(struct nvme_tcp_r2t_hdr, r2to), pdu, sizeof(*pdu),
				      "R2T [%u, +%u) for CID %u: expected offset %u of %u", r2to,
				      r2tl, cid, slot->h2c_done, req->data_len);
	slot->ttag = get_le16(&pdu->ttag);
	slot->h2c_next = r2to;
	slot->r2t_end = r2to + r2tl;
	slot_set_state(slot, HOST_TCP_SLOT_SEND_H2C);
	queue_h2c(tq, slot);
	host_tcp_rx_set_state(tq, HOST_TCP_RX_CH);
	return 0;
}

static int handle_term(struct host_tcp_qpair *tq)
{
	const struct nvme_tcp_term_req *pdu = (const void *)tq->rx.hdr;
	uint16_t fes = get_le16(&pdu->fes);

	host_tcp_rx_set_state(tq, HOST_TCP_RX_DEAD);
	qpair_fail(&tq->qp, -ECONNRESET, "controller terminated the connection: %s (FEI %u)",
		   nvme_tcp_fes_name(fes), get_le32(pdu->fei));
	return -ECONNRESET;
}

static int handle_header(struct host_tcp_qpair *tq)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)tq->rx.hdr;

	if (ch->pdu_type == NVME_TCP_PDU_C2H_TERM_REQ)
		return handle_term(tq);
	if (tq->p.hdgst && !nvme_tcp_hdgst_ok(tq->rx.hdr, ch->hlen))
		return host_tcp_fatal(tq, NVME_TCP_FES_HDR_DIGEST_ERR, 0, tq->rx.hdr, ch->hlen,
				      "%s header digest mismatch",
				      nvme_tcp_pdu_type_name(ch->pdu_type));
	switch (ch->pdu_type) {
	case NVME_TCP_PDU_CAPSULE_RESP:
		return handle_resp(tq);
	case NVME_TCP_PDU_C2H_DATA:
		return handle_c2h(tq);
	case NVME_TCP_PDU_R2T:
		return handle_r2t(tq);
	default:
		return host_tcp_fatal(tq, NVME_TCP_FES_INVALID_PDU_HDR, 0, tq->rx.hdr, ch->hlen,
				      "unexpected %s", nvme_tcp_pdu_type_name(ch->pdu_type));
	}
}

/* The C2HData payload (and its digest) is in. */
static void c2h_done(struct host_tcp_qpair *tq)
{
	struct host_tcp_slot *slot = tq->rx.slot;

	if (tq->p.ddgst && get_le32(tq->rx.ddgst) != crc32c_final(tq->rx.crc)) {
		/* The controller decides how often this happens: keep the log bounded. */
		if (++tq->ddgst_errors <= 10 || tq->ddgst_errors % 1000 == 0)
			nlog_warn("queue %u: C2HData data digest mismatch for CID %u (%llu so far)",
				  tq->qp.qid, slot->req->cid, (unsigned long long)tq->ddgst_errors);
		slot->ddgst_err = true;
	}
	tq->rx.slot = NULL;
	host_tcp_rx_set_state(tq, HOST_TCP_RX_CH);
	if (tq->rx.flags & NVME_TCP_F_DATA_SUCCESS) {
		struct nvme_cpl cqe = { 0 };

		put_le16(&cqe.cid, slot->req->cid);
		slot_finish(slot, slot->ddgst_err ? NULL : &cqe, slot->ddgst_err ? -EBADMSG : 0);
	}
}

/* @n payload bytes were placed at the request's data offset: digest and advance. */
static void data_advance(struct host_tcp_qpair *tq, uint32_t n)
{
	struct nvmeof_req *req = tq->rx.slot->req;

	if (tq->p.ddgst) {
		struct iovec v[NVMEOF_IOV_MAX];
		int k = iov_slice(req->iov, req->iovcnt, req->data_off + tq->rx.data_off, n, v,
				  NVMEOF_IOV_MAX);

		for (int i = 0; i < k; i++)
			tq->rx.crc = crc32c_update(tq->rx.crc, v[i].iov_base, v[i].iov_len);
	}
	tq->rx.data_off += n;
	tq->rx.data_left -= n;
	tq->rx.slot->c2h_next += n;
	if (tq->rx.data_left == 0) {
		if (tq->p.ddgst)
			host_tcp_rx_set_state(tq, HOST_TCP_RX_DDGST);
		else
			c2h_done(tq);
	}
}

/* Copy @n staged bytes into the request's buffers at the current data offset. */
static void data_copy(struct host_tcp_qpair *tq, const uint8_t *src, uint32_t n)
{
	struct nvmeof_req *req = tq->rx.slot->req;
	struct iovec v[NVMEOF_IOV_MAX];
	int k = iov_slice(req->iov, req->iovcnt, req->data_off + tq->rx.data_off, n, v,
			  NVMEOF_IOV_MAX);

	for (int i = 0; i < k; i++) {
		memcpy(v[i].iov_base, src, v[i].iov_len);
		src += v[i].iov_len;
	}
	data_advance(tq, n);
}

/* Parse what is staged. 0 when more bytes are needed, <0 once the queue failed. */
static int host_tcp_rx_parse(struct host_tcp_qpair *tq)
{
	struct nvme_tcp_pdu_err perr;
	int rc;

	for (;;) {
		uint8_t *p = tq->rbuf + tq->rpos;
		uint32_t avail = tq->rlen - tq->rpos, n;
		const struct nvme_tcp_common_hdr *ch;

		switch (tq->rx.state) {
		case HOST_TCP_RX_CH:
			if (avail < sizeof(*ch))
				return 0;
			/* PDUs start at any offset of the staging buffer: read the header
			 * through an aligned copy. */
			memcpy(tq->rx.hdr, p, sizeof(*ch));
			ch = (const void *)tq->rx.hdr;
			if (nvme_tcp_check_ch(ch, NVME_TCP_HOST, true, &tq->p, &perr))
				return host_tcp_fatal(tq, perr.fes, perr.fei, ch, sizeof(*ch),
						      "bad %s header (type %u, hlen %u, pdo %u, "
						      "plen %u)",
						      nvme_tcp_pdu_type_name(ch->pdu_type),
						      ch->pdu_type, ch->hlen, ch->pdo,
						      get_le32(&ch->plen));
			if (ch->pdu_type == NVME_TCP_PDU_C2H_TERM_REQ)
				tq->rx.psh_len = get_le32(&ch->plen);
			else
				tq->rx.psh_len = (uint32_t)nvme_tcp_psh_len(ch, tq->p.hdgst);
			host_tcp_rx_set_state(tq, HOST_TCP_RX_PSH);
			break;
		case HOST_TCP_RX_PSH:
			if (avail < tq->rx.psh_len)
				return 0;
			memcpy(tq->rx.hdr, p, tq->rx.psh_len);
			tq->rpos += tq->rx.psh_len;
			rc = handle_header(tq);
			if (rc)
				return rc;
			break;
		case HOST_TCP_RX_PAD:
			n = avail < tq->rx.pad_left ? avail : tq->rx.pad_left;
			if (!n)
				return 0;
			tq->rpos += n;
			tq->rx.pad_left -= n;
			if (!tq->rx.pad_left)
				host_tcp_rx_set_state(tq, HOST_TCP_RX_DATA);
			break;
		case HOST_TCP_RX_DATA:
			n = avail < tq->rx.data_left ? avail : tq->rx.data_left;
			if (!n)
				return 0;
			tq->rpos += n;
			data_copy(tq, p, n);
			break;
		case HOST_TCP_RX_DDGST:
			n = NVME_TCP_DIGEST_LEN - tq->rx.ddgst_got;
			if (avail < n)
				n = avail;
			if (!n)
				return 0;
			memcpy(tq->rx.ddgst + tq->rx.ddgst_got, p, n);
			tq->rpos += n;
			tq->rx.ddgst_got += n;
			if (tq->rx.ddgst_got == NVME_TCP_DIGEST_LEN)
				c2h_done(tq);
			break;
		case HOST_TCP_RX_DEAD:
			return -1;
		}
		if (tq->rx.state == HOST_TCP_RX_DEAD || tq->fd < 0)
			return -1;
	}
}

/* One readv(): payload still owed to a request goes straight into its buffers, the rest
 * into the staging buffer. Returns bytes read, 0 at EOF, -1 with errno. */
static ssize_t host_tcp_rx_fill(struct host_tcp_qpair *tq, size_t *asked)
{
	struct iovec iov[NVMEOF_IOV_MAX + 2];
	uint32_t direct = 0, dgst = 0;
	int cnt = 0;
	ssize_t n;

	if (tq->rpos == tq->rlen) {
		tq->rpos = tq->rlen = 0;
	} else if (tq->rpos) {
		memmove(tq->rbuf, tq->rbuf + tq->rpos, tq->rlen - tq->rpos);
		tq->rlen -= tq->rpos;
		tq->rpos = 0;
	}
	if (tq->rlen == 0 && tq->rx.state == HOST_TCP_RX_DATA) {
		struct nvmeof_req *req = tq->rx.slot->req;
		int k = iov_slice(req->iov, req->iovcnt, req->data_off + tq->rx.data_off,
				  tq->rx.data_left, iov, NVMEOF_IOV_MAX);

		if (k > 0) {
			cnt = k;
			direct = tq->rx.data_left;
			if (tq->p.ddgst) {
				iov[cnt].iov_base = tq->rx.ddgst;
				iov[cnt++].iov_len = dgst = NVME_TCP_DIGEST_LEN;
			}
		}
	} else if (tq->rlen == 0 && tq->rx.state == HOST_TCP_RX_DDGST) {
		dgst = NVME_TCP_DIGEST_LEN - tq->rx.ddgst_got;
		iov[cnt].iov_base = tq->rx.ddgst + tq->rx.ddgst_got;
		iov[cnt++].iov_len = dgst;
	}
	iov[cnt].iov_base = tq->rbuf + tq->rlen;
	iov[cnt++].iov_len = HOST_TCP_RBUF_SIZE - tq->rlen;
	*asked = direct + dgst + (HOST_TCP_RBUF_SIZE - tq->rlen);

	n = tq->sock.ops->readv(&tq->sock, iov, cnt);
	if (n <= 0)
		return n;

	{
		size_t left = (size_t)n;
		uint32_t d = left < direct ? (uint32_t)left : direct;

		if (d) {
			left -= d;
			data_advance(tq, d);
		}
		if (dgst && (d == direct || direct == 0)) {
			uint32_t g = left < dgst ? (uint32_t)left : dgst;

			if (g) {
				left -= g;
				tq->rx.ddgst_got += g;
				if (tq->rx.ddgst_got == NVME_TCP_DIGEST_LEN)
					c2h_done(tq);
			}
		}
		tq->rlen += (uint32_t)left;
	}
	return n;
}

static int host_tcp_recv(struct host_tcp_qpair *tq)
{
	/* Past the budget only while bytes wait above the socket (TLS records read ahead),
	 * which no poll() would report. */
	for (int round = 0; tq->fd >= 0; round++) {
		size_t asked;

		if (round >= HOST_TCP_RECV_ROUNDS && !tq->sock.ops->pending(&tq->sock))
			return 0;
		ssize_t n = host_tcp_rx_fill(tq, &asked);

		if (n == 0) {
			qpair_fail(&tq->qp, -ECONNRESET, "connection closed by the controller");
			return -1;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			qpair_fail(&tq->qp, -errno, "receive failed: %s", strerror(errno));
			return -1;
		}
		if (tq->rx.state == HOST_TCP_RX_DEAD || tq->fd < 0)
			return -1;
		if (host_tcp_rx_parse(tq) < 0)
			return -1;
		if ((size_t)n < asked)
			return 0;
	}
	return 0;
}

static int host_tcp_progress(struct nvmeof_qpair *qp, short revents)
{
	struct host_tcp_qpair *tq = host_tcp_qp(qp);

	if (tq->fd < 0)
		return -ENOTCONN;
	if (!TAILQ_EMPTY(&tq->sendq) && host_tcp_send(tq) < 0)
		return qp->err;
	if ((revents & POLLIN) && host_tcp_recv(tq) < 0)
		return qp->err;
	/* R2Ts just received want their data out now. */
	if (tq->fd >= 0 && !TAILQ_EMPTY(&tq->sendq) && host_tcp_send(tq) < 0)
		return qp->err;
	return 0;
}

static int host_tcp_get_fd(const struct nvmeof_qpair *qp)
{
	return host_tcp_qp(qp)->fd;
}

static short host_tcp_which_events(const struct nvmeof_qpair *qp)
{
	const struct host_tcp_qpair *tq = host_tcp_qp(qp);

	if (tq->fd < 0)
		return 0;
	return (short)(POLLIN | (TAILQ_EMPTY(&tq->sendq) ? 0 : POLLOUT));
}

/* ---- Connection and ICReq/ICResp -------------------------------------------------------- */
/* Connection setup: the send loop until the queue is out, waiting for room until
 * @deadline. 0 or -errno. */
static int host_tcp_flush_wait(struct host_tcp_qpair *tq, uint64_t deadline)
{
	for (;;) {
		int rc = host_tcp_flush(tq);

		if (rc || TAILQ_EMPTY(&tq->sendq))
			return rc;
		rc = sock_wait_fd(tq->fd, POLLOUT, deadline);
		if (rc)
			return rc;
	}
}

static int host_tcp_handshake(struct host_tcp_qpair *tq, uint64_t deadline)
{
	const struct nvmeof_opts *o = &tq->qp.ctrlr->opts;
	uint8_t buf[NVME_TCP_TERM_REQ_PLEN_MAX + 8] __attribute__((aligned(8)));
	const struct nvme_tcp_icresp *ic = (const void *)buf;
	const struct nvme_tcp_common_hdr *ch = (const void *)buf;
	struct nvme_tcp_pdu_err perr;
	uint32_t plen, maxh2c;
	bool hd, dd;
	int rc;

	if (tq->qp.ctrlr->tls_key) {
		rc = host_sock_tls_connect(&tq->sock, tq->qp.ctrlr, deadline);
		if (rc)
			return rc;
	}
	ctl_queue(tq, nvme_tcp_build_icreq(tq->ctl_buf, o->hdgst, o->ddgst, 0, 0));
	rc = host_tcp_flush_wait(tq, deadline);
	if (rc == 0)
		rc = host_sock_recv_all(&tq->sock, buf, sizeof(*ch), deadline);
	if (rc)
		return set_error(rc, "NVMe/TCP connection setup (ICReq) failed: %s",
				 rc == -ETIMEDOUT ? "no answer from the controller"
						  : strerror(-rc));
	if (nvme_tcp_check_ch(ch, NVME_TCP_HOST, false, &tq->p, &perr))
		return set_error(-EPROTO, "controller answered ICReq with a bad %s PDU (%s)",
				 nvme_tcp_pdu_type_name(ch->pdu_type), nvme_tcp_fes_name(perr.fes));
	plen = get_le32(&ch->plen);
	rc = host_sock_recv_all(&tq->sock, buf + sizeof(*ch), plen - sizeof(*ch), deadline);
	if (rc)
		return set_error(rc, "NVMe/TCP connection setup (ICResp) failed: %s",
				 strerror(-rc));
	if (ch->pdu_type == NVME_TCP_PDU_C2H_TERM_REQ) {
		const struct nvme_tcp_term_req *t = (const void *)buf;

		return set_error(-ECONNREFUSED, "controller rejected ICReq: %s%s",
				 nvme_tcp_fes_name(get_le16(&t->fes)),
				 tq->sock.tls ? "" : " (does the port require TLS? see --tls)");
	}
	hd = ic->dgst & NVME_TCP_DGST_HDR;
	dd = ic->dgst & NVME_TCP_DGST_DATA;
	maxh2c = get_le32(&ic->maxh2cdata);
	if (get_le16(&ic->pfv) != NVME_TCP_PFV_1_0)
		return set_error(-EPROTO, "controller speaks NVMe/TCP PFV %u, not 0",
				 get_le16(&ic->pfv));
	if (ic->cpda > 31)
		return set_error(-EPROTO, "ICResp CPDA %u out of range", ic->cpda);
	if (maxh2c < 4096 || maxh2c % 4)
		return set_error(-EPROTO, "ICResp MAXH2CDATA %u invalid", maxh2c);
	if ((hd && !o->hdgst) || (dd && !o->ddgst))
		return set_error(-EPROTO, "controller enabled a digest the host did not ask for");
	if (o->hdgst && !hd)
		return set_error(-EPROTONOSUPPORT, "controller declined header digests");
	if (o->ddgst && !dd)
		return set_error(-EPROTONOSUPPORT, "controller declined data digests");
	tq->p.hdgst = hd;
	tq->p.ddgst = dd;
	tq->p.cpda = ic->cpda;
	tq->p.hpda = 0;
	tq->p.maxh2cdata = maxh2c;
	nlog_debug("queue %u: ICResp cpda %u maxh2cdata %u hdgst %d ddgst %d%s%s", tq->qp.qid,
		   ic->cpda, maxh2c, hd, dd, tq->sock.tls ? " over TLS 1.3 " : "",
		   tq->sock.tls_cipher);
	return 0;
}

int host_tcp_qpair_connect_fd(struct nvmeof_qpair *qp, int fd, int timeout_ms)
{
	struct host_tcp_qpair *tq = host_tcp_qp(qp);
	int one = 1, fl;

	tq->fd = fd;
	host_sock_init(&tq->sock, fd);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return set_error(-errno, "fcntl: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* A reconnect reuses the slots and the staging buffer of the lost connection. */
	if (!tq->slots)
		tq->slots = calloc(qp->nreqs, sizeof(*tq->slots));
	else
		memset(tq->slots, 0, qp->nreqs * sizeof(*tq->slots));
	if (!tq->rbuf)
		tq->rbuf = malloc(HOST_TCP_RBUF_SIZE);
	if (!tq->slots || !tq->rbuf)
		return set_error(-ENOMEM, "out of memory");
	TAILQ_INIT(&tq->sendq);
	memset(&tq->rx, 0, sizeof(tq->rx));
	tq->rpos = tq->rlen = 0;
	tq->rx.state = HOST_TCP_RX_CH;
	tq->icdata_max = qp->qid == 0 ? HOST_TCP_ADMIN_ICDATA : 0;
	return host_tcp_handshake(tq, now_ms() + (uint64_t)timeout_ms);
}

static int host_tcp_qpair_connect(struct nvmeof_qpair *qp, int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int fd = sock_dial(&qp->ctrlr->uri, timeout_ms, deadline);

	if (fd < 0)
		return fd;
	return host_tcp_qpair_connect_fd(qp, fd,
					 (int)(deadline > now_ms() ? deadline - now_ms() : 1));
}

static void host_tcp_qpair_close(struct nvmeof_qpair *qp)
{
	struct host_tcp_qpair *tq = host_tcp_qp(qp);

	if (tq->fd >= 0)
		close(tq->fd);
	tq->fd = -1;
	host_sock_tls_free(&tq->sock);
	TAILQ_INIT(&tq->sendq);
	tq->rx.state = HOST_TCP_RX_DEAD;
	tq->rx.slot = NULL;
	if (tq->slots)
		for (uint16_t i = 0; i < qp->nreqs; i++)
			tq->slots[i].state = HOST_TCP_SLOT_IDLE;
}

static struct nvmeof_qpair *host_tcp_qpair_alloc(void)
{
	struct host_tcp_qpair *tq = calloc(1, sizeof(*tq));

	if (!tq)
		return NULL;
	tq->fd = -1;
	tq->qp.ops = &host_tcp_transport_ops;
	TAILQ_INIT(&tq->sendq);
	return &tq->qp;
}

static void host_tcp_qpair_free(struct nvmeof_qpair *qp)
{
	struct host_tcp_qpair *tq = host_tcp_qp(qp);

	if (tq->fd >= 0)
		close(tq->fd);
	host_sock_tls_free(&tq->sock);
	free(tq->slots);
	free(tq->rbuf);
	free(tq);
}

static void host_tcp_set_icdata(struct nvmeof_qpair *qp, uint32_t bytes)
{
	host_tcp_qp(qp)->icdata_max = bytes;
}

static void host_tcp_get_info(const struct nvmeof_qpair *qp, struct nvmeof_ctrlr_info *info)
{
	const struct host_tcp_qpair *tq = host_tcp_qp(qp);

	snprintf(info->transport, sizeof(info->transport), "tcp");
	info->hdgst = tq->p.hdgst;
	info->ddgst = tq->p.ddgst;
	info->maxh2cdata = tq->p.maxh2cdata;
}

const struct nvmeof_transport_ops host_tcp_transport_ops = {
	.name = "tcp",
	.uri_transport = URI_TRANSPORT_TCP,
	.qpair_alloc = host_tcp_qpair_alloc,
	.qpair_connect = host_tcp_qpair_connect,
	.qpair_close = host_tcp_qpair_close,
	.qpair_free = host_tcp_qpair_free,
	.get_fd = host_tcp_get_fd,
	.which_events = host_tcp_which_events,
	.submit = host_tcp_submit,
	.progress = host_tcp_progress,
	.set_icdata = host_tcp_set_icdata,
	.get_info = host_tcp_get_info,
};
