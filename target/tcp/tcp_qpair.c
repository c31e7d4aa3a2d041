/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP connection (queue pair) lifetime: creation on accept, binding to a reactor,
 * and teardown (stop I/O, wait for requests the backend still owns, then
 * nvmf_qpair_fini() and free). Requests live in tcp_req.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "tcp_internal.h"

#define TCP_LINGER_S       2.0 /* how long a C2HTermReq may take to leave before we close */
#define TCP_CID_BITS_BYTES (65536 / 8)

static size_t page_size(void)
{
	static size_t ps;

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);

		ps = v > 0 ? (size_t)v : 4096;
	}
	return ps;
}

/* ---- connection lifetime ---------------------------------------------------------------- */

struct tcp_qpair *tcp_qpair_create(int fd, struct nvmf_tgt *tgt, struct nvmf_port *port,
				   const char *peer)
{
	struct tcp_qpair *tq = calloc(1, sizeof(*tq));

	if (!tq)
		return NULL;
	tcp_conn_new();
	tq->fd = fd;
	tq->sock = &tcp_sock_plain;
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

/* The host did not finish ICReq and Connect in time: its slot goes to someone else. */
static void tcp_connect_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcp_qpair *tq = w->data;
	const char *why = "no ICReq in time";

	if (tq->connected_seen || tq->closing)
		return;
	tcp_conn_timed_out();
	if (tq->ic_done)
		why = "no Connect in time";
	else if (tq->tls_state == TCP_TLS_HANDSHAKE)
		why = "TLS handshake not finished in time";
	else if (tq->tls_state == TCP_TLS_DETECT)
		why = "no ClientHello or ICReq in time";
	tcp_qpair_close(tq, why);
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
	tcp_conn_gone_stats(&tq->stats, tq->stats.term_reqs_tx != 0, tq->connected_seen);
	nvmf_qpair_fini(&tq->qp);
	tcp_tls_free(tq);
	if (tq->mem)
		munmap(tq->mem, tq->mem_len);
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
	size_t slots_len;

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
	/* A data buffer per slot for in-capsule data and small commands (tcp_req.c). */
	icsz = tcp_io_icdata(&tq->qp);
	tq->icd_size = icsz > TCP_ADMIN_ICDATA ? icsz : TCP_ADMIN_ICDATA;
	if (tq->icd_size > TCP_ICD_MAX)
		tq->icd_size = TCP_ICD_MAX;
	tq->icd_size = (uint32_t)((tq->icd_size + page_size() - 1) & ~(page_size() - 1));
	/* One mapping: [receive buffer | CID bit set | request slots | slot data buffers].
	 * Untouched pages cost no memory, so a queue pays for the slots it has used, not for
	 * its depth. */
	slots_len = (size_t)n * sizeof(*tq->reqs);
	slots_len = (slots_len + page_size() - 1) & ~(page_size() - 1);
	tq->mem_len = TCP_RBUF_SIZE + TCP_CID_BITS_BYTES + slots_len + (size_t)n * tq->icd_size;
	tq->mem_len = (tq->mem_len + page_size() - 1) & ~(page_size() - 1);
	tq->mem =
		mmap(NULL, tq->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tq->mem == MAP_FAILED) {
		tq->mem = NULL;
	} else {
		tq->rbuf = tq->mem;
		tq->cid_bits = (uint64_t *)(tq->mem + TCP_RBUF_SIZE);
		tq->reqs = (struct tcp_req *)(tq->mem + TCP_RBUF_SIZE + TCP_CID_BITS_BYTES);
		tq->icd = tq->mem + TCP_RBUF_SIZE + TCP_CID_BITS_BYTES + slots_len;
	}
	{
		struct reactor_buf_stats bs;

		reactor_buf_stats(r, &bs);
		tcp_req_share_caps(tq, bs.limit, reactor_buf_size(), tgt->opts.max_io_size);
	}
	TAILQ_INIT(&tq->free_reqs);
	TAILQ_INIT(&tq->buf_waitq);
	TAILQ_INIT(&tq->txq);
	tq->buf_work.fn = tcp_req_buf_ready;
	tq->buf_work.arg = tq;
	tq->resume_work.fn = tcp_rx_resume;
	tq->resume_work.arg = tq;
	tq->flush_work.fn = tcp_flush;
	tq->flush_work.arg = tq;
	tq->fini_work.fn = tcp_qpair_free;
	tq->fini_work.arg = tq;
	ev_init(&tq->linger, tcp_linger_cb);
	tq->linger.data = tq;
	ev_init(&tq->connect_timer, tcp_connect_timer_cb);
	tq->connect_timer.data = tq;
	if (tq->tr) {
		TAILQ_INSERT_TAIL(&tq->tr->conns, tq, link);
		tq->tr->nconns++;
		if (!ev_is_active(&tq->tr->trim))
			ev_timer_again(tq->loop, &tq->tr->trim);
		if (!ev_is_active(&tq->tr->tick))
			ev_timer_again(tq->loop, &tq->tr->tick);
	}

	if (!tq->mem || !tq->tr) {
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

	tcp_zc_init(tq);
	ev_io_init(&tq->rio, tcp_read_cb, tq->fd, EV_READ);
	tq->rio.data = tq;
	ev_io_init(&tq->wio, tcp_write_cb, tq->fd, EV_WRITE);
	tq->wio.data = tq;
	if (tq->qp.port && tq->qp.port->sectype == NVMF_TCP_SECTYPE_TLS13)
		tcp_tls_begin(tq); /* the first byte says TLS or plain */
	ev_io_start(tq->loop, &tq->rio);
	tq->rio_on = true;
	if (tgt->opts.connect_timeout_ms) {
		ev_timer_set(&tq->connect_timer, tgt->opts.connect_timeout_ms / 1000.0, 0.);
		ev_timer_start(tq->loop, &tq->connect_timer);
	}
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
	ev_timer_stop(tq->loop, &tq->connect_timer);
	reactor_defer_cancel(tq->r, &tq->flush_work);
	reactor_defer_cancel(tq->r, &tq->resume_work);
	reactor_buf_wait_cancel(tq->r, &tq->buf_work);
	if (tq->share_waiting) {
		TAILQ_REMOVE(&tq->tr->share_waitq, tq, share_link);
		tq->share_waiting = false;
	}
	tcp_zc_close(tq); /* the kernel may still hold read data: keep it until it is done */
	tcp_tx_drop_all(tq);
	if (tq->fd >= 0) {
		close(tq->fd);
		tq->fd = -1;
	}

	for (uint32_t i = 0; i < tq->nreqs_ready; i++) {
		struct tcp_req *tr = &tq->reqs[i];

		if (tr->state != TCP_REQ_FREE && tr->state != TCP_REQ_EXECUTING && !tr->tx.zc)
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

/* ---- giving idle memory back ------------------------------------------------------------ */

/* madvise(MADV_DONTNEED) the whole pages inside [@from, @to): they read as zero again. */
static void drop_pages(uint8_t *from, uint8_t *to)
{
	uintptr_t a = ((uintptr_t)from + page_size() - 1) & ~(uintptr_t)(page_size() - 1);
	uintptr_t b = (uintptr_t)to & ~(uintptr_t)(page_size() - 1);

	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/*
 * A connection that received nothing for a trim interval keeps the request slots below
 * its highest one in use (an AER, a request the backend still owns) and at least
 * TCP_TRIM_KEEP; the pages of the others go back to the system, to be faulted in as
 * zeroes (which is what slot_init() expects) when the queue is busy again. So do the
 * data buffers of those slots and, when used since, of the free slots kept. The receive
 * buffer goes back too when it holds no partial PDU.
 */
void tcp_qpair_trim(struct tcp_qpair *tq)
{
	uint32_t keep = TCP_TRIM_KEEP;

	if (tq->closing || !tq->mem || tq->rx_state >= TCP_RX_QUIESCING)
		return;
	for (uint32_t i = 0; i < tq->nreqs_ready; i++)
		if ((tq->reqs[i].state != TCP_REQ_FREE || tq->reqs[i].h2c_drain) && i + 1 > keep)
			keep = i + 1;
	if (tq->icd_dirty) {
		/* the buffers of the free slots kept set up, in runs of free slots */
		uint32_t n = keep < tq->nreqs_ready ? keep : tq->nreqs_ready, run = 0;

		tq->icd_dirty = false;
		for (uint32_t i = 0; i <= n; i++) {
			const struct tcp_req *tr = i < n ? &tq->reqs[i] : NULL;

			if (tr && tr->state == TCP_REQ_FREE && !tr->h2c_drain)
				continue;
			if (tr && tr->icd)
				tq->icd_dirty = true;
			drop_pages(tq->icd + (size_t)run * tq->icd_size,
				   tq->icd + (size_t)i * tq->icd_size);
			run = i + 1;
		}
	}
	if (keep < tq->nreqs_ready) {
		TAILQ_INIT(&tq->free_reqs);
		for (uint32_t i = keep; i-- > 0;)
			if (tq->reqs[i].state == TCP_REQ_FREE && !tq->reqs[i].h2c_drain)
				TAILQ_INSERT_TAIL(&tq->free_reqs, &tq->reqs[i], link);
		drop_pages((uint8_t *)&tq->reqs[keep], (uint8_t *)&tq->reqs[tq->nreqs_ready]);
		drop_pages(tq->icd + (size_t)keep * tq->icd_size,
			   tq->icd + (size_t)tq->nreqs_ready * tq->icd_size);
		tq->nreqs_ready = keep;
	}
	if (tq->rx_state == TCP_RX_AWAIT_CH && tq->rpos == tq->rend && !tq->rx_paused) {
		tq->rpos = tq->rend = 0;
		drop_pages(tq->rbuf, tq->rbuf + TCP_RBUF_SIZE);
	}
}

/* The reactor's trim tick: connections quiet since the last one give memory back. */
void tcp_trim_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcp_reactor *trr = w->data;
	struct tcp_qpair *tq;

	if (TAILQ_EMPTY(&trr->conns)) {
		ev_timer_stop(loop, w);
		return;
	}
	TAILQ_FOREACH(tq, &trr->conns, link)
	{
		if (tq->rx_since_trim)
			tq->rx_since_trim = false;
		else
			tcp_qpair_trim(tq);
	}
}

/* ---- deadlines -------------------------------------------------------------------------- */

/*
 * End the queue when the host has let an R2T (or the late data of an aborted write) go
 * unanswered for opts.r2t_timeout_ms: that is what bounds how long a host can hold pool
 * buffers and request slots by asking to write and then not sending the data.
 */
bool tcp_qpair_r2t_check(struct tcp_qpair *tq, ev_tstamp now)
{
	uint32_t ms = __atomic_load_n(&tq->qp.tgt->opts.r2t_timeout_ms, __ATOMIC_RELAXED);

	if (!ms || tq->closing || tq->rx_state >= TCP_RX_QUIESCING ||
	    (tq->outstanding == 0 && tq->parked == 0))
		return false;
	for (uint32_t i = 0; i < tq->nreqs_ready; i++) {
		const struct tcp_req *tr = &tq->reqs[i];

		if (tcp_req_r2t_late(tr, now, ms / 1000.0)) {
			tcp_r2t_expired(tq, tr, now - tr->r2t_at);
			return true;
		}
	}
	return false;
}

/* The peer has closed (FIN or reset) a connection whose reading is paused, so the close
 * would otherwise be seen only when reading resumes. */
static bool peer_gone(const struct tcp_qpair *tq)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (tq->fd < 0 || getsockopt(tq->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return false;
	return ti.tcpi_state == TCP_CLOSE_WAIT || ti.tcpi_state == TCP_CLOSE ||
	       ti.tcpi_state == TCP_LAST_ACK;
}

/* The reactor's deadline tick (TCP_TICK_S): no work per I/O, a scan of the busy queues. */
void tcp_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcp_reactor *trr = w->data;
	ev_tstamp now = ev_now(loop);
	struct tcp_qpair *tq;

	if (TAILQ_EMPTY(&trr->conns)) {
		ev_timer_stop(loop, w);
		return;
	}
	TAILQ_FOREACH(tq, &trr->conns, link)
	{
		if (tcp_qpair_r2t_check(tq, now))
			continue;
		if (tq->rx_paused && !tq->closing && tq->rx_state < TCP_RX_QUIESCING &&
		    peer_gone(tq)) {
			TCP_STAT_ADD(tq, paused_closes, 1);
			tcp_qpair_close(tq, "peer closed while reading was paused");
		}
	}
}

/* ---- ops: disconnect ------------------------------------------------------------------ */

void tcp_qpair_disconnect(struct nvmf_qpair *qp)
{
	tcp_qpair_close(tcp_qpair_of(qp), "disconnected by the target");
}
