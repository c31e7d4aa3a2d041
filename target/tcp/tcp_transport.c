/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport: listeners (main thread, default libev loop), accepting connections
 * and handing each to a reactor, the ops table the core calls, and transport-wide
 * counters and shutdown.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "tcp_internal.h"

#define TCP_ACCEPT_BUDGET 64
#define TCP_MAX_REACTORS 1024

struct tcp_listener {
	struct nvmf_tgt *tgt;
	struct nvmf_port *port;
	struct ev_loop *loop;
	int fd;
	ev_io io;
	ev_timer retry;	/* accept paused after EMFILE/ENFILE */
	char name[300];
};

static struct tcp_reactor *g_tr[TCP_MAX_REACTORS];

static struct {
	atomic_uint_least64_t accepted, rejected, closed, fatal, connect_timeouts;
	atomic_uint live;
	atomic_uint connecting; /* of live, not yet through Connect */
} g_stats;

/* ---- per-reactor state -------------------------------------------------------------------- */

static void tcp_reactor_free(void *arg)
{
	struct tcp_reactor *trr = arg;

	ev_timer_stop(trr->r->loop, &trr->trim);
	ev_timer_stop(trr->r->loop, &trr->tick);
	reactor_defer_cancel(trr->r, &trr->share_work);
	__atomic_store_n(&g_tr[trr->r->id], NULL, __ATOMIC_RELEASE);
	free(trr);
}

/* The calling reactor's transport state, created on first use (on that reactor). */
struct tcp_reactor *tcp_reactor_get(struct reactor *r)
{
	struct tcp_reactor *trr;

	if (!r || r->id >= TCP_MAX_REACTORS)
		return NULL;
	trr = g_tr[r->id];
	if (trr)
		return trr;
	trr = calloc(1, sizeof(*trr));
	if (!trr)
		return NULL;
	trr->r = r;
	TAILQ_INIT(&trr->conns);
	ev_init(&trr->trim, tcp_trim_cb);
	trr->trim.repeat = TCP_TRIM_INTERVAL_S;
	trr->trim.data = trr;
	ev_init(&trr->tick, tcp_tick_cb);
	trr->tick.repeat = TCP_TICK_S;
	trr->tick.data = trr;
	TAILQ_INIT(&trr->share_waitq);
	trr->share_work.fn = tcp_req_share_ready;
	trr->share_work.arg = trr;
	if (reactor_on_exit(r, tcp_reactor_free, trr) != 0) {
		free(trr);
		return NULL;
	}
	__atomic_store_n(&g_tr[r->id], trr, __ATOMIC_RELEASE);
	return trr;
}

/* A connection came into being (tcp_qpair_create): live, and connecting until Connect. */
void tcp_conn_new(void)
{
	atomic_fetch_add_explicit(&g_stats.live, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&g_stats.connecting, 1, memory_order_relaxed);
}

/*
 * A connecting connection finished Connect: it moves to the established count. false when
 * that would pass max_connections (the caller closes it).
 */
bool tcp_conn_established(const struct nvmf_tgt *tgt)
{
	unsigned int live, connecting;

	connecting = atomic_fetch_sub_explicit(&g_stats.connecting, 1, memory_order_relaxed) - 1;
	live = atomic_load_explicit(&g_stats.live, memory_order_relaxed);
	return live - connecting <= tgt->opts.max_connections;
}

void tcp_conn_timed_out(void)
{
	atomic_fetch_add_explicit(&g_stats.connect_timeouts, 1, memory_order_relaxed);
}

void tcp_conn_gone_stats(const struct nvmf_tcp_conn_stats *st, bool fatal, bool established)
{
	if (!established)
		atomic_fetch_sub_explicit(&g_stats.connecting, 1, memory_order_relaxed);
	if (fatal)
		atomic_fetch_add_explicit(&g_stats.fatal, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&g_stats.closed, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&g_stats.live, 1, memory_order_release);
}

#define SUM(f) (st->totals.f += __atomic_load_n(&trr->stats.f, __ATOMIC_RELAXED))

void nvmf_tcp_get_stats(struct nvmf_tcp_stats *st)
{
	unsigned int n = reactor_count();

	memset(st, 0, sizeof(*st));
	st->accepted = atomic_load_explicit(&g_stats.accepted, memory_order_relaxed);
	st->rejected = atomic_load_explicit(&g_stats.rejected, memory_order_relaxed);
	st->closed = atomic_load_explicit(&g_stats.closed, memory_order_relaxed);
	st->fatal = atomic_load_explicit(&g_stats.fatal, memory_order_relaxed);
	st->live = atomic_load_explicit(&g_stats.live, memory_order_relaxed);
	st->connecting = atomic_load_explicit(&g_stats.connecting, memory_order_relaxed);
	st->connect_timeouts =
		atomic_load_explicit(&g_stats.connect_timeouts, memory_order_relaxed);
	for (unsigned int i = 0; i < n && i < TCP_MAX_REACTORS; i++) {
		const struct tcp_reactor *trr = __atomic_load_n(&g_tr[i], __ATOMIC_ACQUIRE);

		if (!trr)
			continue;
		SUM(pdus_rx);
		SUM(pdus_tx);
		SUM(bytes_rx);
		SUM(bytes_tx);
		SUM(recv_calls);
		SUM(send_calls);
		SUM(hdgst_errors);
		SUM(ddgst_errors);
		SUM(term_reqs_tx);
		SUM(zc_sends);
		SUM(zc_completions);
		SUM(zc_copied);
		SUM(c2h_mapped);
		SUM(share_waits);
		SUM(r2t_timeouts);
		SUM(paused_closes);
		for (unsigned int k = 0; k < NVMF_TCP_REQ_NSTATES; k++)
			SUM(req_state_entries[k]);
		for (unsigned int k = 0; k < NVMF_TCP_RX_NSTATES; k++)
			SUM(rx_state_entries[k]);
	}
}

#undef SUM

const char *nvmf_tcp_req_state_name(unsigned int s)
{
	return tcp_req_state_name((enum tcp_req_state)s);
}

const char *nvmf_tcp_rx_state_name(unsigned int s)
{
	return tcp_rx_state_name((enum tcp_rx_state)s);
}

static void close_all_msg(void *arg)
{
	struct tcp_reactor *trr = g_tr[reactor_self()->id];
	struct tcp_qpair *tq, *next;

	if (!trr)
		return;
	for (tq = TAILQ_FIRST(&trr->conns); tq; tq = next) {
		next = TAILQ_NEXT(tq, link);
		tcp_qpair_close(tq, "target shutting down");
	}
}

int nvmf_tcp_close_all(unsigned int timeout_ms)
{
	return reactors_drain(close_all_msg, &g_stats.live, timeout_ms, "NVMe/TCP");
}

/* ---- limits shared with the receive path --------------------------------------------------- */

uint32_t tcp_maxh2cdata(const struct nvmf_tgt *tgt)
{
	uint32_t v = tgt->opts.max_io_size;

	if (v < 4096)
		v = 4096;
	return v & ~3u;
}

uint32_t tcp_io_icdata(const struct nvmf_qpair *qp)
{
	uint32_t v = qp->port && qp->port->in_capsule_size ? qp->port->in_capsule_size
							   : qp->tgt->opts.in_capsule_size;

	return v;
}

/* ---- accept ---------------------------------------------------------------------------------- */

static void format_peer(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(s4->sin_port));
	}
}

static void accept_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcp_listener *l = w->data;

	ev_io_start(loop, &l->io);
}

static void hand_off(struct tcp_listener *l, int fd, const struct sockaddr_storage *ss)
{
	struct tcp_qpair *tq;
	struct reactor *r;
	unsigned int live, connecting;
	char peer[64];
	int one = 1;

	format_peer(ss, peer, sizeof(peer));
	/* Established and connecting connections have limits of their own: sockets that never
	 * finish Connect (and are closed at the deadline) cannot lock a real host out. */
	live = atomic_load(&g_stats.live);
	connecting = atomic_load(&g_stats.connecting);
	if (connecting >= l->tgt->opts.max_connecting) {
		log_peer("%s: refused: %u connections still connecting", peer, connecting);
		atomic_fetch_add(&g_stats.rejected, 1);
		close(fd);
		return;
	}
	if (live - connecting >= l->tgt->opts.max_connections) {
		log_peer("%s: refused: %u connections already", peer, l->tgt->opts.max_connections);
		atomic_fetch_add(&g_stats.rejected, 1);
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r = reactor_next();
	tq = r ? tcp_qpair_create(fd, l->tgt, l->port, peer) : NULL;
	if (!tq) {
		log_peer("%s: refused: out of memory or no reactor", peer);
		atomic_fetch_add(&g_stats.rejected, 1);
		close(fd);
		return;
	}
	atomic_fetch_add(&g_stats.accepted, 1);
	if (reactor_send_msg(r, tcp_qpair_start, tq) != 0) {
		atomic_fetch_sub(&g_stats.live, 1);
		atomic_fetch_sub(&g_stats.connecting, 1);
		atomic_fetch_add(&g_stats.rejected, 1);
		close(fd);
		free(tq);
	}
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct tcp_listener *l = w->data;

	for (int i = 0; i < TCP_ACCEPT_BUDGET; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			hand_off(l, fd, &ss);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			log_peer("%s: accept: %s (pausing for 100 ms)", l->name, strerror(errno));
			ev_io_stop(loop, &l->io);
			ev_timer_set(&l->retry, 0.1, 0.);
			ev_timer_start(loop, &l->retry);
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			log_peer("%s: accept: %s", l->name, strerror(errno));
		}
		return;
	}
}

/* ---- ops ------------------------------------------------------------------------------------- */

static int tcp_listen(struct nvmf_tgt *tgt, struct nvmf_port *port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *ai = NULL;
	struct tcp_listener *l;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1, rc, fd;
	bool v6 = port->adrfam == NVMF_ADRFAM_IPV6;

	if (port->listener)
		return -EBUSY;
	rc = tcp_tls_port_init(port);
	if (rc)
		return rc;
	hints.ai_family = v6 ? AF_INET6 : AF_INET;
	rc = getaddrinfo(port->traddr, port->trsvcid[0] ? port->trsvcid : "4420", &hints, &ai);
	if (rc != 0) {
		log_err("tcp://%s%s%s:%s: bad address: %s", v6 ? "[" : "", port->traddr,
			v6 ? "]" : "", port->trsvcid, gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		freeaddrinfo(ai);
		return rc;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
		rc = -errno;
		log_debug("tcp://%s%s%s:%s: cannot listen: %s", v6 ? "[" : "", port->traddr,
			v6 ? "]" : "", port->trsvcid, strerror(errno));
		close(fd);
		freeaddrinfo(ai);
		return rc;
	}
	freeaddrinfo(ai);
	/* Port 0 asks for any free port: report the one we got. */
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		uint16_t p = ss.ss_family == AF_INET6
				     ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
				     : ntohs(((struct sockaddr_in *)&ss)->sin_port);

		snprintf(port->trsvcid, sizeof(port->trsvcid), "%u", p);
	}

	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->tgt = tgt;
	l->port = port;
	l->fd = fd;
	l->loop = EV_DEFAULT;
	snprintf(l->name, sizeof(l->name), "%s://%s%s%s:%s",
		 port->sectype == NVMF_TCP_SECTYPE_TLS13 ? "tls" : "tcp", v6 ? "[" : "",
		 port->traddr, v6 ? "]" : "", port->trsvcid);
	ev_io_init(&l->io, accept_cb, fd, EV_READ);
	l->io.data = l;
	ev_init(&l->retry, accept_retry_cb);
	l->retry.data = l;
	ev_io_start(l->loop, &l->io);
	port->listener = l;
	log_debug("%s: listening%s", l->name, port->discovery_only ? " (discovery)" : "");
	return 0;
}

static void tcp_stop_listen(struct nvmf_port *port)
{
	struct tcp_listener *l = port->listener;

	if (!l)
		return;
	ev_io_stop(l->loop, &l->io);
	ev_timer_stop(l->loop, &l->retry);
	close(l->fd);
	port->listener = NULL;
	log_debug("%s: stopped listening", l->name);
	free(l);
}

static void tcp_disc_entry(const struct nvmf_port *port, struct nvmf_disc_log_entry *e)
{
	bool tls = port->sectype == NVMF_TCP_SECTYPE_TLS13;

	e->treq = (tls ? port->treq : NVMF_TREQ_SECURE_NOT_REQUIRED) | NVMF_TREQ_DISABLE_SQFLOW;
	memset(e->tsas, 0, sizeof(e->tsas));
	e->tsas[0] = tls ? NVMF_TCP_SECTYPE_TLS13 : NVMF_TCP_SECTYPE_NONE;
}

const struct nvmf_transport_ops nvmf_tcp_transport_ops = {
	.name = "tcp",
	.trtype = NVMF_TRTYPE_TCP,
	.listen = tcp_listen,
	.stop_listen = tcp_stop_listen,
	.req_complete = tcp_req_complete,
	.qpair_disconnect = tcp_qpair_disconnect,
	.req_abort = tcp_req_abort,
	.disc_entry = tcp_disc_entry,
	.connect_allowed = tcp_tls_connect_allowed,
};
