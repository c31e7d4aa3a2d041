// SPDX-License-Identifier: MIT
/*
 * iSCSI connections: the PDU receive state machine (BHS, AHS + header digest, data segment
 * + padding + data digest), dispatch by opcode, the transmit queue (many PDUs per
 * sendmsg, partial writes), and teardown once the executor has returned every command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "iscsi_internal.h"
#include "common/log.h"

static const char *const rx_state_names[] = {
	[RX_BHS] = "BHS", [RX_AHS] = "AHS", [RX_DATA] = "DATA", [RX_WAIT] = "WAIT",
	[RX_STOPPED] = "STOPPED",
};

static void rx_set_state(struct iscsi_conn *c, enum iscsi_rx_state s)
{
	/* RX_STOPPED is final; everything else may follow anything but it. */
	if (c->rx_state == RX_STOPPED && s != RX_STOPPED) {
		log_debug("%s: receive state %s -> %s ignored", c->peer,
			  rx_state_names[c->rx_state], rx_state_names[s]);
		return;
	}
	c->rx_state = s;
}

/* ---- sequence numbers in target PDUs --------------------------------------------------- */

void iscsi_put_sn(struct iscsi_conn *c, uint8_t *bhs, bool adv)
{
	put_be32(bhs + 24, adv ? c->statsn++ : c->statsn);
	put_be32(bhs + 28, c->exp_cmdsn);
	put_be32(bhs + 32, c->max_cmdsn);
}

/* ---- transmit --------------------------------------------------------------------------- */

static void conn_flush(void *arg);

struct iscsi_tx *iscsi_ctl_get(struct iscsi_conn *c)
{
	struct iscsi_tx *tx = TAILQ_FIRST(&c->ctl_free);

	if (tx) {
		TAILQ_REMOVE(&c->ctl_free, tx, link);
		tx->data = NULL;
		tx->diovcnt = 0;
		tx->dlen = 0;
		tx->sent = NULL;
		tx->owner = NULL;
	}
	return tx;
}

static bool is_ctl(const struct iscsi_conn *c, const struct iscsi_tx *tx)
{
	return tx >= c->ctl && tx < c->ctl + ISCSI_CTL_PDUS;
}

void iscsi_tx_queue(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	tx->queued = true;
	TAILQ_INSERT_TAIL(&c->txq, tx, link);
	if (!c->tx_blocked)
		reactor_defer(c->r, &c->flush_work);
}

void iscsi_tx_send(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	iscsi_tx_finish(tx, c->hdigest, c->ddigest);
	iscsi_tx_queue(c, tx);
}

/* @tx went out whole (already off the queue). */
static void tx_done(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	if (tx->sent)
		tx->sent(c, tx);
	if (is_ctl(c, tx) && !tx->queued) {
		TAILQ_INSERT_TAIL(&c->ctl_free, tx, link);
		if (c->rx_state == RX_WAIT)
			reactor_defer(c->r, &c->rx_work);
	}
}

/* Skip @skip bytes of a piece, else gather it; returns the new iovec count. */
static int tx_seg(struct iovec *iov, int n, const void *p, size_t len, size_t *skip)
{
	if (*skip >= len) {
		*skip -= len;
		return n;
	}
	iov[n].iov_base = (uint8_t *)p + *skip;
	iov[n].iov_len = len - *skip;
	*skip = 0;
	return n + 1;
}

/* Build iovecs for the queue from the partially sent head on. */
static int tx_iov(struct iscsi_conn *c, struct iovec *iov)
{
	struct iscsi_tx *tx;
	size_t skip = c->tx_off;
	int n = 0;

	TAILQ_FOREACH(tx, &c->txq, link) {
		if (n + 2 + tx->diovcnt > ISCSI_TX_IOV)
			break;
		n = tx_seg(iov, n, tx->hdr, tx->hlen, &skip);
		for (int i = 0; i < tx->diovcnt; i++)
			n = tx_seg(iov, n, tx->diov[i].iov_base, tx->diov[i].iov_len, &skip);
		n = tx_seg(iov, n, tx->trailer, tx->tlen, &skip);
	}
	return n;
}

static void conn_flush(void *arg)
{
	struct iscsi_conn *c = arg;
	struct iovec iov[ISCSI_TX_IOV];
	TAILQ_HEAD(, iscsi_tx) done;

	for (int round = 0; round < 16 && !TAILQ_EMPTY(&c->txq); round++) {
		struct msghdr msg = { 0 };
		ssize_t sent;
		int n = tx_iov(c, iov);

		if (c->fd < 0)
			return;
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)n;
		sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				c->tx_blocked = true;
				ev_io_start(c->loop, &c->wio);
				return;
			}
			iscsi_conn_close(c, strerror(errno));
			return;
		}
		/* retire what went out: every PDU sent whole leaves the queue before any sent
		 * callback runs, since one may release a task and drop its PDUs still queued */
		TAILQ_INIT(&done);
		while (sent > 0) {
			struct iscsi_tx *tx = TAILQ_FIRST(&c->txq);
			uint32_t total = tx->hlen + tx->dlen + tx->tlen - c->tx_off;

			if ((size_t)sent < total) {
				c->tx_off += (uint32_t)sent;
				break;
			}
			sent -= total;
			c->tx_off = 0;
			TAILQ_REMOVE(&c->txq, tx, link);
			tx->queued = false;
			TAILQ_INSERT_TAIL(&done, tx, link);
		}
		while (!TAILQ_EMPTY(&done)) {
			struct iscsi_tx *tx = TAILQ_FIRST(&done);

			TAILQ_REMOVE(&done, tx, link);
			tx_done(c, tx);
			if (c->state == CONN_CLOSING && c->fd < 0)
				return;
		}
	}
	if (!TAILQ_EMPTY(&c->txq))
		reactor_defer(c->r, &c->flush_work);
}

static void write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct iscsi_conn *c = w->data;

	ev_io_stop(loop, &c->wio);
	c->tx_blocked = false;
	conn_flush(c);
}

void iscsi_send_reject(struct iscsi_conn *c, uint8_t reason, const uint8_t *bhs)
{
	struct iscsi_tx *tx = iscsi_ctl_get(c);

	if (!tx) {
		iscsi_conn_close(c, "no control PDU for a Reject");
		return;
	}
	iscsi_bhs_init(tx->hdr, ISCSI_OP_REJECT, ISCSI_FLAG_FINAL);
	tx->hdr[2] = reason;
	put_be32(tx->hdr + 16, ISCSI_TAG_RESERVED);
	iscsi_put_sn(c, tx->hdr, true);
	/* the data segment carries the rejected header (copied: rx_hdr is reused) */
	memcpy(tx->inline_data, bhs, ISCSI_BHS_LEN);
	tx->data = tx->inline_data;
	tx->dlen = ISCSI_BHS_LEN;
	iscsi_tx_send(c, tx);
}

/* ---- receive --------------------------------------------------------------------------------- */

/* Padding and data digest of a PDU, then the next one's BHS and header digest. */
#define RX_HDR_READ (3 + ISCSI_DIGEST_LEN + ISCSI_BHS_LEN + ISCSI_DIGEST_LEN)

/*
 * How much a read into the staging buffer may take. Behind a large data segment the
 * next PDU most likely carries one too: taking only its header (with this PDU's padding
 * and digest, and the short rest of this segment if that is what is missing) lets that
 * data be read straight into place as well, instead of landing in the staging buffer and
 * being copied out. Behind small PDUs, many per recv.
 */
static size_t rx_stage_room(const struct iscsi_conn *c)
{
	size_t rest;

	if (!c->rx_big)
		return ISCSI_RX_STAGE;
	if (c->rx_state != RX_DATA || c->rx_have >= c->rx_dlen)
		return RX_HDR_READ;
	rest = (size_t)(c->rx_dlen - c->rx_have) + RX_HDR_READ;
	return rest < ISCSI_RX_STAGE ? rest : ISCSI_RX_STAGE;
}

/*
 * Move up to @n received bytes to @dst (NULL: look at them in the staging buffer, at
 * *@where). Returns the count, -EAGAIN when nothing is readable, or another -errno.
 */
static ssize_t rx_get(struct iscsi_conn *c, uint8_t *dst, uint32_t n, const uint8_t **where)
{
	uint32_t avail = c->rx_stage_len - c->rx_stage_off;
	uint32_t m;

	if (!avail) {
		ssize_t r;

		/* the last read came back short: the socket is empty until it polls readable
		 * again (level-triggered), so no read just to learn EAGAIN */
		if (c->rx_drained)
			return -EAGAIN;
		if (dst && n >= 4096) {
			/* Large data straight into place, and what follows it (the next PDUs'
			 * headers, small data) into the staging buffer, in one call. */
			struct iovec v[2] = { { dst, n },
					      { c->rx_stage,
						c->rx_big ? RX_HDR_READ : ISCSI_RX_STAGE } };
			struct msghdr msg = { .msg_iov = v, .msg_iovlen = 2 };

			c->rx_calls++;
			r = recvmsg(c->fd, &msg, MSG_DONTWAIT);
			if (r > 0) {
				/* short of what was asked: the socket is empty */
				c->rx_drained = (size_t)r < (size_t)n + v[1].iov_len;
				*where = dst;
				if ((size_t)r > n) {
					c->rx_stage_off = 0;
					c->rx_stage_len = (uint32_t)((size_t)r - n);
					r = (ssize_t)n;
				}
				return r;
			}
		} else {
			size_t room = rx_stage_room(c);

			c->rx_calls++;
			r = recv(c->fd, c->rx_stage, room, MSG_DONTWAIT);
			if (r > 0) {
				c->rx_drained = (size_t)r < room;
				c->rx_stage_off = 0;
				c->rx_stage_len = (uint32_t)r;
				avail = (uint32_t)r;
			}
		}
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
	m = avail < n ? avail : n;
	*where = c->rx_stage + c->rx_stage_off;
	if (dst)
		memcpy(dst, *where, m);
	c->rx_stage_off += m;
	return m;
}

static uint32_t rx_data_limit(const struct iscsi_conn *c)
{
	return reactor_buf_size() < ISCSI_MAX_DATA_SEG_LEN ? (uint32_t)reactor_buf_size()
							    : ISCSI_MAX_DATA_SEG_LEN;
}

/* Where the data segment of the PDU in rx_hdr goes; may pause (-EAGAIN). */
static int rx_header_dispatch(struct iscsi_conn *c)
{
	const uint8_t *bhs = c->rx_hdr;
	uint8_t op = iscsi_bhs_opcode(bhs);

	c->rx_dst = NULL;
	c->rx_task = NULL;
	if (c->rx_dlen > rx_data_limit(c)) {
		log_peer("%s: data segment of %u bytes exceeds %u", c->peer, c->rx_dlen,
			 rx_data_limit(c));
		return -EPROTO;
	}
	if (c->state == CONN_LOGIN && op != ISCSI_OP_LOGIN_REQ) {
		log_peer("%s: opcode %#x during login", c->peer, op);
		return -EPROTO;
	}
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		if (c->discovery)
			return -EPROTO;
		return iscsi_scsi_cmd_rx(c, bhs);
	case ISCSI_OP_DATA_OUT:
		if (c->discovery)
			return -EPROTO;
		return iscsi_data_out_rx(c, bhs);
	case ISCSI_OP_LOGIN_REQ:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_NOP_OUT:
		if (!c->rx_data) {
			c->rx_data = reactor_buf_get(c->r);
			if (!c->rx_data) {
				reactor_buf_wait(c->r, &c->rx_buf_work);
				return -EAGAIN;
			}
		}
		c->rx_dst = c->rx_data;
		return 0;
	default:
		return 0; /* any data of other PDUs is read and dropped */
	}
}

/* Login, text and NOP-Out data has been used (copied where kept): the chunk goes back to
 * the pool, so an idle session holds none. */
static int rx_data_done(struct iscsi_conn *c, int rc)
{
	if (c->rx_data) {
		reactor_buf_put(c->r, c->rx_data);
		c->rx_data = NULL;
	}
	return rc;
}

static int rx_pdu_done(struct iscsi_conn *c)
{
	const uint8_t *bhs = c->rx_hdr;

	c->rx_seen = true;
	switch (iscsi_bhs_opcode(bhs)) {
	case ISCSI_OP_LOGIN_REQ:
		return rx_data_done(c, iscsi_login_rx(c, bhs, c->rx_data, c->rx_dlen));
	case ISCSI_OP_TEXT_REQ:
		return rx_data_done(c, iscsi_text_rx(c, bhs, c->rx_data, c->rx_dlen));
	case ISCSI_OP_NOP_OUT:
		return rx_data_done(c, iscsi_nop_out_rx(c, bhs, c->rx_data, c->rx_dlen));
	case ISCSI_OP_SCSI_CMD:
		if (c->rx_task)
			iscsi_scsi_cmd_data_done(c, c->rx_task);
		return 0;
	case ISCSI_OP_DATA_OUT:
		if (c->rx_task)
			iscsi_data_out_done(c, c->rx_task, bhs);
		return 0;
	case ISCSI_OP_TMF_REQ:
		return iscsi_tmf_rx(c, bhs);
	case ISCSI_OP_LOGOUT_REQ:
		return iscsi_logout_rx(c, bhs);
	case ISCSI_OP_SNACK:
		/* ERL 0: SNACK is not supported */
		iscsi_send_reject(c, ISCSI_REJECT_CMD_NOT_SUPPORTED, bhs);
		return 0;
	default:
		log_peer("%s: unknown opcode %#x", c->peer, iscsi_bhs_opcode(bhs));
		iscsi_send_reject(c, ISCSI_REJECT_CMD_NOT_SUPPORTED, bhs);
		return 0;
	}
}

static void rx_begin(struct iscsi_conn *c)
{
	rx_set_state(c, RX_BHS);
	c->rx_have = 0;
	c->rx_need = ISCSI_BHS_LEN;
}

/* Header complete: check the digest, then decide where the data goes. */
static int rx_header_complete(struct iscsi_conn *c)
{
	uint32_t ahs = iscsi_bhs_ahs_len(c->rx_hdr);
	bool hd = c->hdigest;
	int rc;

	if (hd) {
		uint32_t want = iscsi_get_digest(c->rx_hdr + ISCSI_BHS_LEN + ahs);

		if (want != iscsi_header_digest(c->rx_hdr, ISCSI_BHS_LEN + ahs)) {
			log_peer("%s: header digest error", c->peer);
			return -EBADMSG;
		}
	}
	c->rx_dlen = iscsi_bhs_dlen(c->rx_hdr);
	c->rx_big = c->rx_dlen >= ISCSI_RX_BIG;
	rc = rx_header_dispatch(c);
	if (rc == -EAGAIN) {
		rx_set_state(c, RX_WAIT);
		return rc;
	}
	if (rc)
		return rc;
	rx_set_state(c, RX_DATA);
	c->rx_have = 0;
	c->rx_need = c->rx_dlen ? iscsi_data_wire_len(c->rx_dlen, c->ddigest) : 0;
	c->rx_crc = CRC32C_SEED;
	return 0;
}

/* Feed received bytes through the state machine; returns -EAGAIN when out of input. */
static int rx_step(struct iscsi_conn *c)
{
	const uint8_t *where;
	ssize_t got;

	switch (c->rx_state) {
	case RX_BHS:
	case RX_AHS:
		got = rx_get(c, c->rx_hdr + c->rx_have, c->rx_need - c->rx_have, &where);
		if (got < 0)
			return (int)got;
		c->rx_have += (uint32_t)got;
		if (c->rx_have < c->rx_need)
			return 0;
		if (c->rx_state == RX_BHS) {
			uint32_t extra = iscsi_bhs_ahs_len(c->rx_hdr) +
					 (c->hdigest ? ISCSI_DIGEST_LEN : 0);

			if (extra) {
				rx_set_state(c, RX_AHS);
				c->rx_need += extra;
				return 0;
			}
		}
		return rx_header_complete(c);
	case RX_DATA: {
		bool dd = c->ddigest;
		uint32_t pad_end = ISCSI_PAD(c->rx_dlen);

		if (c->rx_have < c->rx_dlen) {
			uint8_t *dst = c->rx_dst ? c->rx_dst + c->rx_have : NULL;

			got = rx_get(c, dst, c->rx_dlen - c->rx_have, &where);
			if (got < 0)
				return (int)got;
			if (dd)
				c->rx_crc = crc32c_update(c->rx_crc, where, (size_t)got);
			c->rx_have += (uint32_t)got;
		} else if (c->rx_have < c->rx_need) {
			uint32_t off = c->rx_have - c->rx_dlen;

			got = rx_get(c, c->rx_trailer + off, c->rx_need - c->rx_have, &where);
			if (got < 0)
				return (int)got;
			if (dd && c->rx_have < pad_end) {
				uint32_t pad = pad_end - c->rx_have;

				c->rx_crc = crc32c_update(c->rx_crc, where,
							  (size_t)got < pad ? (size_t)got : pad);
			}
			c->rx_have += (uint32_t)got;
		}
		if (c->rx_have < c->rx_need)
			return 0;
		if (dd && c->rx_dlen) {
			uint32_t want = iscsi_get_digest(c->rx_trailer + (pad_end - c->rx_dlen));

			if (want != crc32c_final(c->rx_crc)) {
				log_peer("%s: data digest error", c->peer);
				iscsi_send_reject(c, ISCSI_REJECT_DATA_DIGEST, c->rx_hdr);
				return -EBADMSG;
			}
		}
		rx_begin(c);
		return rx_pdu_done(c);
	}
	case RX_WAIT:
	case RX_STOPPED:
	default:
		return -EAGAIN;
	}
}

/*
 * A receive error ends the connection (ErrorRecoveryLevel 0). A protocol error in the
 * full feature phase is answered first with a Reject (Protocol Error) carrying the
 * offending header, so the initiator learns why; what is queued (that Reject, or the
 * Data-Digest-Error one) goes out with one non-blocking flush before the close, never
 * waiting on an initiator that does not read.
 */
static void rx_fail(struct iscsi_conn *c, int rc)
{
	if (rc == -ECONNRESET) {
		iscsi_conn_close(c, "closed by the initiator");
		return;
	}
	if (rc == -EPROTO && c->state == CONN_FULL)
		iscsi_send_reject(c, ISCSI_REJECT_PROTOCOL_ERROR, c->rx_hdr);
	if (c->state != CONN_CLOSING && !c->tx_blocked)
		conn_flush(c);
	iscsi_conn_close(c, rc == -EBADMSG ? "digest error" : "protocol error");
}

void iscsi_conn_close_flushed(struct iscsi_conn *c, const char *why)
{
	if (c->state != CONN_CLOSING && !c->tx_blocked)
		conn_flush(c);
	iscsi_conn_close(c, why);
}

static void rx_process(struct iscsi_conn *c)
{
	c->rx_calls = 0;
	for (int i = 0; i < ISCSI_RX_BUDGET * 4 && c->rx_calls < ISCSI_RECV_BUDGET; i++) {
		int rc;

		if (c->state == CONN_CLOSING || c->rx_state == RX_WAIT ||
		    c->rx_state == RX_STOPPED)
			return;
		rc = rx_step(c);
		if (rc == -EAGAIN) {
			if (c->rx_state == RX_WAIT)
				iscsi_conn_rx_pause(c);
			return;
		}
		if (rc) {
			rx_fail(c, rc);
			return;
		}
	}
	/* budget used: come back after other connections had their turn */
	reactor_defer(c->r, &c->rx_work);
}

static void read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct iscsi_conn *c = w->data;

	c->rx_drained = false;
	rx_process(c);
}

/* Resume a paused header (task, buffer or control PDU became available). */
static void rx_resume_work(void *arg)
{
	struct iscsi_conn *c = arg;
	int rc;

	if (c->state == CONN_CLOSING)
		return;
	if (c->rx_state == RX_WAIT) {
		rx_set_state(c, RX_AHS);
		rc = rx_header_complete(c);
		if (rc == -EAGAIN)
			return;
		if (rc) {
			rx_fail(c, rc);
			return;
		}
		if (c->rx_state != RX_STOPPED) {
			c->rx_paused = false;
			ev_io_start(c->loop, &c->rio);
		}
	}
	rx_process(c);
}

/*
 * Not reading: the socket is not watched for input, so an initiator that closes its end
 * is not seen here; the liveness tick (iscsi_watch.c) looks for that while paused.
 */
void iscsi_conn_rx_pause(struct iscsi_conn *c)
{
	c->rx_paused = true;
	ev_io_stop(c->loop, &c->rio);
}

void iscsi_rx_resume(struct iscsi_conn *c)
{
	if (c->rx_state == RX_WAIT)
		reactor_defer(c->r, &c->rx_work);
}

/* ---- lifetime ------------------------------------------------------------------------------- */

/* Accept to full feature phase took too long: a login that stalled (half a PDU, a CHAP
 * exchange that stopped half way, nothing at all) gives its slot back. */
static void login_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct iscsi_conn *c = w->data;

	if (c->state != CONN_LOGIN)
		return;
	__atomic_add_fetch(&g_iscsi.login_timeouts, 1, __ATOMIC_RELAXED);
	log_peer("%s: iSCSI login not finished within %u ms", c->peer,
		 g_iscsi.tgt ? g_iscsi.tgt->opts.login_timeout_ms : 0);
	iscsi_conn_close(c, "login timed out");
}

void iscsi_conn_established(struct iscsi_conn *c)
{
	if (c->loop)
		ev_timer_stop(c->loop, &c->login_timer);
	if (c->connecting) {
		c->connecting = false;
		__atomic_sub_fetch(&g_iscsi.nconnecting, 1, __ATOMIC_RELAXED);
	}
}

struct iscsi_conn *iscsi_conn_create(int fd, const char *peer)
{
	struct iscsi_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rx_stage = malloc(ISCSI_RX_STAGE);
	if (!c->rx_stage) {
		free(c);
		return NULL;
	}
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	return c;
}

void iscsi_conn_start(void *arg)
{
	struct iscsi_conn *c = arg;
	uint32_t timeout;

	c->r = reactor_self();
	c->loop = c->r->loop;
	c->state = CONN_LOGIN;
	c->login_first = true;
	iscsi_params_default(&c->params);
	TAILQ_INIT(&c->txq);
	TAILQ_INIT(&c->ctl_free);
	TAILQ_INIT(&c->free_tasks);
	TAILQ_INIT(&c->active);
	TAILQ_INIT(&c->pending);
	for (int i = 0; i < ISCSI_CTL_PDUS; i++)
		TAILQ_INSERT_TAIL(&c->ctl_free, &c->ctl[i], link);
	c->flush_work.fn = conn_flush;
	c->flush_work.arg = c;
	c->rx_work.fn = rx_resume_work;
	c->rx_work.arg = c;
	c->rx_buf_work.fn = rx_resume_work;
	c->rx_buf_work.arg = c;
	ev_io_init(&c->rio, read_cb, c->fd, EV_READ);
	c->rio.data = c;
	ev_io_init(&c->wio, write_cb, c->fd, EV_WRITE);
	c->wio.data = c;
	ev_init(&c->login_timer, login_timer_cb);
	c->login_timer.data = c;
	ev_init(&c->tick, NULL);
	c->tick.data = c;
	timeout = g_iscsi.tgt
			  ? __atomic_load_n(&g_iscsi.tgt->opts.login_timeout_ms, __ATOMIC_RELAXED)
			  : 0;
	if (timeout) {
		ev_timer_set(&c->login_timer, timeout / 1000.0, 0.);
		ev_timer_start(c->loop, &c->login_timer);
	}
	rx_begin(c);
	ev_io_start(c->loop, &c->rio);
	log_debug("%s: iSCSI connection on reactor %u", c->peer, c->r->id);
}

static void conn_free(void *arg)
{
	struct iscsi_conn *c = arg;

	reactor_defer_cancel(c->r, &c->flush_work);
	reactor_defer_cancel(c->r, &c->rx_work);
	reactor_buf_wait_cancel(c->r, &c->rx_buf_work);
	iscsi_conn_established(c); /* out of the connecting count, timer stopped */
	iscsi_watch_stop(c);
	iscsi_initiator_leave(c);
	iscsi_session_stop(c);
	iscsi_session_free_tasks(c);
	iscsi_login_fini(c);
	if (c->rx_data)
		reactor_buf_put(c->r, c->rx_data);
	if (c->nop_data)
		reactor_buf_put(c->r, c->nop_data);
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_REMOVE(&g_iscsi.conns, c, link);
	if (c->target)
		iscsi_target_put_locked(c->target);
	pthread_mutex_unlock(&g_iscsi.lock);
	__atomic_sub_fetch(&g_iscsi.nconns, 1, __ATOMIC_RELEASE);
	log_debug("%s: connection freed", c->peer);
	free(c->rx_stage);
	free(c);
}

/* Called whenever the executor returns a command of a closing connection. */
static void conn_check_done(struct iscsi_conn *c)
{
	if (c->state == CONN_CLOSING && c->nvme_out == 0) {
		c->fini_work.fn = conn_free;
		c->fini_work.arg = c;
		reactor_defer(c->r, &c->fini_work);
	}
}

void iscsi_conn_close(struct iscsi_conn *c, const char *why)
{
	struct iscsi_task *t, *next;

	if (c->state == CONN_CLOSING)
		return;
	log_info("%s: iSCSI connection closed: %s", c->peer, why);
	c->state = CONN_CLOSING;
	rx_set_state(c, RX_STOPPED);
	ev_timer_stop(c->loop, &c->login_timer);
	iscsi_watch_stop(c);
	if (c->fd >= 0) {
		ev_io_stop(c->loop, &c->rio);
		ev_io_stop(c->loop, &c->wio);
		close(c->fd);
		c->fd = -1;
	}
	/* the transmit queue dies with the socket */
	while (!TAILQ_EMPTY(&c->txq)) {
		struct iscsi_tx *tx = TAILQ_FIRST(&c->txq);

		TAILQ_REMOVE(&c->txq, tx, link);
		tx->queued = false;
		if (is_ctl(c, tx))
			TAILQ_INSERT_TAIL(&c->ctl_free, tx, link);
	}
	for (t = TAILQ_FIRST(&c->pending); t; t = next) {
		next = TAILQ_NEXT(t, link);
		iscsi_task_release(t);
	}
	for (t = TAILQ_FIRST(&c->active); t; t = next) {
		next = TAILQ_NEXT(t, link);
		iscsi_task_abort(t);
	}
	conn_check_done(c);
}

void iscsi_conn_nvme_returned(struct iscsi_conn *c)
{
	conn_check_done(c);
}
