/* SPDX-License-Identifier: MIT */
/*
 * MSG_ZEROCOPY for large read data on plain connections (tcp_opts.tcp_zerocopy_min).
 *
 * A batch of C2HData responses carrying at least the threshold of data bytes leaves with
 * MSG_ZEROCOPY: the kernel pins the pages instead of copying them, so the request and its
 * buffers must stay untouched until the kernel says it is done with that send. Each
 * successful zero-copy sendmsg takes the next number of the socket's 32-bit counter; the
 * kernel confirms ranges [ee_info, ee_data] of those numbers on the socket's error queue
 * (SO_EE_ORIGIN_ZEROCOPY; SO_EE_CODE_ZEROCOPY_COPIED when it copied after all, which is
 * what loopback does). The send path puts a fully sent item on tcp_zc.waitq instead of
 * running its done; the error queue is read when the socket's watcher fires (EPOLLERR
 * wakes it: libev reports it as readable and writable), and from a short timer while
 * anything is due, since the read watcher is stopped while the receive machine waits for
 * a slot or a buffer.
 *
 * Closing with confirmations due keeps the socket and the requests off the pool until they
 * arrive. The socket goes the way close() would take it: shut down (FIN after the queued
 * data) or, with received bytes unread, reset at once. Resetting is a disconnect
 * (connect(AF_UNSPEC)): the kernel drops its queues, and with them its references to the
 * buffers, and its confirmations still arrive on the open descriptor. A shut-down socket
 * whose peer takes longer than TCP_ZC_DRAIN_S is reset the same way; after another such
 * wait the buffers go back regardless.
 */
#include <errno.h>
#include <time.h> /* before linux/errqueue.h */

#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "tcp_internal.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

/* ---- send numbers --------------------------------------------------------------------- */

bool tcp_zc_ring_full(const struct tcp_zc_ring *r)
{
	return r->next - r->head >= TCP_ZC_RING;
}

uint32_t tcp_zc_ring_push(struct tcp_zc_ring *r)
{
	return r->next++;
}

/* Send @id is confirmed, and so is every one before it. */
bool tcp_zc_ring_passed(const struct tcp_zc_ring *r, uint32_t id)
{
	return (int32_t)(r->head - id) > 0;
}

static bool ring_bit(const struct tcp_zc_ring *r, uint32_t id)
{
	return r->bits[(id % TCP_ZC_RING) / 64] >> (id % 64) & 1;
}

/*
 * The kernel confirmed sends [@lo, @hi] (inclusive, the counter may wrap between them).
 * Numbers outside the unconfirmed window are ignored. Returns how many sends became
 * confirmed in order (head moved by that much).
 */
uint32_t tcp_zc_ring_confirm(struct tcp_zc_ring *r, uint32_t lo, uint32_t hi)
{
	uint32_t span = hi - lo, moved = 0;

	for (uint32_t id = r->head; id != r->next; id++)
		if (id - lo <= span)
			r->bits[(id % TCP_ZC_RING) / 64] |= (uint64_t)1 << (id % 64);
	while (r->head != r->next && ring_bit(r, r->head)) {
		r->bits[(r->head % TCP_ZC_RING) / 64] &= ~((uint64_t)1 << (r->head % 64));
		r->head++;
		moved++;
	}
	return moved;
}

/* ---- per connection ------------------------------------------------------------------- */

static void zc_poll_cb(struct ev_loop *loop, ev_timer *w, int revents);

void tcp_zc_init(struct tcp_qpair *tq)
{
	struct tcp_zc *zc = &tq->zc;
	uint32_t min = __atomic_load_n(&tq->qp.tgt->opts.tcp_zerocopy_min, __ATOMIC_RELAXED);
	int one = 1;

	TAILQ_INIT(&zc->waitq);
	zc->fd = -1;
	ev_init(&zc->poll, zc_poll_cb);
	zc->poll.data = tq;
	if (!min || (tq->qp.port && tq->qp.port->sectype != NVMF_TCP_SECTYPE_NONE))
		return;
	if (setsockopt(tq->fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
		log_debug("%s: SO_ZEROCOPY: %s; sending by copy", tq->qp.peer, strerror(errno));
		return;
	}
	zc->min = min;
}

/* Should the send about to go out (@data_bytes of read data, 0: not eligible) be zero-copy? */
bool tcp_zc_arm(struct tcp_qpair *tq, size_t data_bytes)
{
	struct tcp_zc *zc = &tq->zc;

	zc->arm = zc->min && data_bytes >= zc->min && tq->sock == &tcp_sock_plain &&
		  !tcp_zc_ring_full(&zc->ring);
	return zc->arm;
}

/* After a send that returned @n: did it go zero-copy, and under which number. */
bool tcp_zc_sent(struct tcp_qpair *tq, ssize_t n, uint32_t *id)
{
	struct tcp_zc *zc = &tq->zc;
	bool used = n > 0 && zc->arm && zc->used; /* a failed one took no number */

	zc->arm = zc->used = false;
	if (!used)
		return false;
	*id = tcp_zc_ring_push(&zc->ring);
	TCP_STAT_ADD(tq, zc_sends, 1);
	if (!ev_is_active(&zc->poll)) {
		ev_timer_set(&zc->poll, TCP_ZC_POLL_S, TCP_ZC_POLL_S);
		ev_timer_start(tq->loop, &zc->poll);
	}
	return true;
}

/*
 * @tx (a response: only those go zero-copy) is on the wire. The host has the response and
 * may reuse its command ID and submission queue entry at once; the slot and its buffers
 * wait for the kernel.
 */
void tcp_zc_hold(struct tcp_qpair *tq, struct tcp_tx *tx)
{
	struct tcp_req *tr = container_of(tx, struct tcp_req, tx);

	if (tr->cid_owned) {
		tq->cid_bits[tr->cid >> 6] &= ~(1ull << (tr->cid & 63));
		tr->cid_owned = false;
	}
	tq->zc.held++;
	TAILQ_INSERT_TAIL(&tq->zc.waitq, tx, link);
}

/* Run done for the items every send of which is confirmed. */
static void zc_complete(struct tcp_qpair *tq, bool all)
{
	struct tcp_zc *zc = &tq->zc;
	struct tcp_tx *tx;

	while ((tx = TAILQ_FIRST(&zc->waitq)) != NULL &&
	       (all || tcp_zc_ring_passed(&zc->ring, tx->zc_id))) {
		TAILQ_REMOVE(&zc->waitq, tx, link);
		tx->zc = false;
		zc->held--;
		if (tx->done)
			tx->done(tq, tx);
	}
}

/* Read the confirmations queued on @fd; false once the socket has nothing more to say. */
static void zc_read_errqueue(struct tcp_qpair *tq, int fd)
{
	struct tcp_zc *zc = &tq->zc;

	for (int i = 0; i < 64; i++) {
		union {
			char buf[CMSG_SPACE(sizeof(struct sock_extended_err)) + 64];
			struct cmsghdr align;
		} ctl;
		struct msghdr msg = { .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *cm;

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN: nothing more queued */
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err ee;
			uint32_t n;

			if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
				continue;
			if (cm->cmsg_len < CMSG_LEN(sizeof(ee)))
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee.ee_errno != 0)
				continue;
			n = ee.ee_data - ee.ee_info + 1;
			TCP_STAT_ADD(tq, zc_completions, n);
			if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				TCP_STAT_ADD(tq, zc_copied, n);
			tcp_zc_ring_confirm(&zc->ring, ee.ee_info, ee.ee_data);
		}
	}
}

/* The kernel may be done with some sends: read its confirmations, finish those items. */
void tcp_zc_reap(struct tcp_qpair *tq)
{
	struct tcp_zc *zc = &tq->zc;
	int fd = tq->fd >= 0 ? tq->fd : zc->fd;

	if (TAILQ_EMPTY(&zc->waitq) && zc->ring.head == zc->ring.next)
		return;
	if (fd >= 0)
		zc_read_errqueue(tq, fd);
	zc_complete(tq, false);
	if (zc->ring.head == zc->ring.next && TAILQ_EMPTY(&zc->waitq))
		ev_timer_stop(tq->loop, &zc->poll);
}

/* Reset the connection but keep the descriptor: the kernel drops what it still holds. */
static void zc_abort(struct tcp_qpair *tq)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };

	tq->zc.aborted = true;
	tq->zc.drain_start = ev_now(tq->loop);
	if (connect(tq->zc.fd, &sa, sizeof(sa)) < 0)
		log_debug("%s: disconnect: %s", tq->qp.peer, strerror(errno));
}

/* Closed: the kept socket goes once nothing is due. */
static void zc_drain_step(struct tcp_qpair *tq)
{
	struct tcp_zc *zc = &tq->zc;
	bool late = ev_now(tq->loop) - zc->drain_start >= TCP_ZC_DRAIN_S;

	zc_read_errqueue(tq, zc->fd);
	zc_complete(tq, false);
	if (!TAILQ_EMPTY(&zc->waitq)) {
		if (!late)
			return;
		if (!zc->aborted) {
			log_info("%s: peer slow to take the last data; resetting", tq->qp.peer);
			zc_abort(tq);
			return;
		}
		log_warn("%s: zero-copy sends unconfirmed %.0f s after the reset", tq->qp.peer,
			 TCP_ZC_DRAIN_S);
	}
	ev_timer_stop(tq->loop, &zc->poll);
	close(zc->fd);
	zc->fd = -1;
	zc_complete(tq, true); /* nothing left in the kernel's queues */
}

static void zc_poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcp_qpair *tq = w->data;

	if (tq->zc.fd >= 0)
		zc_drain_step(tq);
	else
		tcp_zc_reap(tq);
}

/*
 * tcp_qpair_close(), before the queue is dropped and the socket closed: an item partly
 * sent zero-copy waits with the others, and while any wait the socket stays open (only
 * shut down), tq->fd = -1, so that confirmations can still be read. Requests whose tx is
 * zc are left to this file.
 */
void tcp_zc_close(struct tcp_qpair *tq)
{
	struct tcp_zc *zc = &tq->zc;
	struct tcp_tx *tx = TAILQ_FIRST(&tq->txq);
	int unread = 0;

	if (!zc->min || tq->fd < 0)
		return;
	if (tx && tx->zc) {
		TAILQ_REMOVE(&tq->txq, tx, link);
		tq->tx_off = 0;
		tcp_zc_hold(tq, tx);
	}
	zc_read_errqueue(tq, tq->fd);
	zc_complete(tq, false);
	if (TAILQ_EMPTY(&zc->waitq)) {
		ev_timer_stop(tq->loop, &zc->poll);
		return;
	}
	zc->fd = tq->fd;
	tq->fd = -1;
	zc->drain_start = ev_now(tq->loop);
	if (ioctl(zc->fd, FIONREAD, &unread) == 0 && unread > 0)
		zc_abort(tq); /* close() would reset the connection: the same, minus the close */
	else
		shutdown(zc->fd, SHUT_RDWR);
	ev_timer_stop(tq->loop, &zc->poll);
	ev_timer_set(&zc->poll, TCP_ZC_POLL_S, TCP_ZC_POLL_S);
	ev_timer_start(tq->loop, &zc->poll);
}
