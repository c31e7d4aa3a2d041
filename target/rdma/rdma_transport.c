/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA transport: listeners on one RDMA CM event channel watched by the main thread's
 * default loop, connection requests handed to reactors, per-reactor CM event channels,
 * the RDMA devices (protection domains) in use, the ops table the core calls, counters and
 * shutdown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "rdma_internal.h"

static struct rdma_reactor *g_rr[RDMA_MAX_REACTORS];

/* Listeners' event channel (main thread). */
static struct {
	struct rdma_event_channel *ch;
	ev_io io;
	TAILQ_HEAD(, rdma_listener) listeners;
	bool init;
} g_main;

static pthread_mutex_t g_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, rdma_device) g_devices = TAILQ_HEAD_INITIALIZER(g_devices);

static struct {
	atomic_uint_least64_t accepted, rejected, closed, connect_timeouts;
	atomic_uint live;
	atomic_uint connecting; /* of live, not yet through Connect */
	atomic_int_least64_t registered;
	atomic_uint_least64_t recv_capsules, inline_writes, rdma_reads, rdma_writes;
	atomic_uint_least64_t sends, send_inv;
	atomic_uint_least64_t post_send_calls, post_recv_calls, cq_polls, cq_events;
} g_stats;

#define ADD(f, v) atomic_fetch_add_explicit(&g_stats.f, (v), memory_order_relaxed)
#define GET(f) atomic_load_explicit(&g_stats.f, memory_order_relaxed)

void nvmf_rdma_get_stats(struct nvmf_rdma_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->accepted = GET(accepted);
	st->rejected = GET(rejected);
	st->closed = GET(closed);
	st->connect_timeouts = GET(connect_timeouts);
	st->live = GET(live);
	st->connecting = GET(connecting);
	st->registered_bytes = (uint64_t)GET(registered);
	st->recv_capsules = GET(recv_capsules);
	st->inline_writes = GET(inline_writes);
	st->rdma_reads = GET(rdma_reads);
	st->rdma_writes = GET(rdma_writes);
	st->sends = GET(sends);
	st->send_inv = GET(send_inv);
	st->post_send_calls = GET(post_send_calls);
	st->post_recv_calls = GET(post_recv_calls);
	st->cq_polls = GET(cq_polls);
	st->cq_events = GET(cq_events);
}

void rdma_conn_gone(const struct rdma_qpair *rq)
{
	const struct rdma_conn_stats *s = &rq->stats;

	ADD(recv_capsules, s->recv_capsules);
	ADD(inline_writes, s->inline_writes);
	ADD(rdma_reads, s->rdma_reads);
	ADD(rdma_writes, s->rdma_writes);
	ADD(sends, s->sends);
	ADD(send_inv, s->send_inv);
	ADD(post_send_calls, s->post_send_calls);
	ADD(post_recv_calls, s->post_recv_calls);
	ADD(cq_polls, s->cq_polls);
	ADD(cq_events, s->cq_events);
	ADD(closed, 1);
	if (!rq->connect_seen)
		atomic_fetch_sub_explicit(&g_stats.connecting, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&g_stats.live, 1, memory_order_release);
}

/* Refused on its reactor: never through Connect. */
void rdma_conn_refused(void)
{
	ADD(rejected, 1);
	atomic_fetch_sub_explicit(&g_stats.connecting, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&g_stats.live, 1, memory_order_release);
}

/*
 * A connecting queue pair finished Connect: it moves to the established count. false when
 * that would pass max_connections (the caller closes it).
 */
bool rdma_conn_established(const struct nvmf_tgt *tgt)
{
	unsigned int live, connecting;

	connecting = atomic_fetch_sub_explicit(&g_stats.connecting, 1, memory_order_relaxed) - 1;
	live = atomic_load_explicit(&g_stats.live, memory_order_relaxed);
	return live - connecting <= tgt->opts.max_connections;
}

void rdma_conn_timed_out(void)
{
	ADD(connect_timeouts, 1);
}

void rdma_registered_add(ssize_t bytes)
{
	ADD(registered, (int_least64_t)bytes);
}

/* ---- devices --------------------------------------------------------------------------------- */

struct rdma_device *rdma_device_get(struct ibv_context *ctx)
{
	struct rdma_device *dev;

	pthread_mutex_lock(&g_dev_lock);
	TAILQ_FOREACH (dev, &g_devices, link)
		if (dev->ctx == ctx) {
			dev->refs++;
			pthread_mutex_unlock(&g_dev_lock);
			return dev;
		}
	dev = calloc(1, sizeof(*dev));
	if (dev) {
		dev->ctx = ctx;
		dev->pd = ibv_alloc_pd(ctx);
		if (!dev->pd || ibv_query_device(ctx, &dev->attr) != 0) {
			log_err("rdma: %s: cannot set up the device: %s",
				ibv_get_device_name(ctx->device), strerror(errno));
			if (dev->pd)
				ibv_dealloc_pd(dev->pd);
			free(dev);
			dev = NULL;
		} else {
			dev->refs = 1;
			TAILQ_INSERT_TAIL(&g_devices, dev, link);
			log_debug("rdma: using device %s (max_qp_wr %d, max_cqe %d, rd_atom %d)",
				  ibv_get_device_name(ctx->device), dev->attr.max_qp_wr,
				  dev->attr.max_cqe, dev->attr.max_qp_rd_atom);
		}
	}
	pthread_mutex_unlock(&g_dev_lock);
	return dev;
}

void rdma_device_put(struct rdma_device *dev)
{
	if (!dev)
		return;
	pthread_mutex_lock(&g_dev_lock);
	if (--dev->refs == 0) {
		TAILQ_REMOVE(&g_devices, dev, link);
		ibv_dealloc_pd(dev->pd);
		free(dev);
	}
	pthread_mutex_unlock(&g_dev_lock);
}

uint32_t rdma_port_icsz(const struct nvmf_tgt *tgt, const struct nvmf_port *port)
{
	return port && port->in_capsule_size ? port->in_capsule_size : tgt->opts.in_capsule_size;
}

/* ---- per-reactor state ----------------------------------------------------------------------- */

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* CM events of this reactor's connections. */
static void reactor_cm_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rdma_reactor *rr = w->data;
	struct rdma_cm_event *ev;

	for (int i = 0; i < 64 && rdma_get_cm_event(rr->ch, &ev) == 0; i++) {
		struct rdma_qpair *rq = ev->id ? ev->id->context : NULL;
		enum rdma_cm_event_type type = ev->event;
		int status = ev->status;

		rdma_ack_cm_event(ev);
		if (rq && rq->kind == RDMA_OBJ_QPAIR)
			rdma_qpair_cm_event(rq, type, status);
	}
}

static void rdma_reactor_free(void *arg)
{
	struct rdma_reactor *rr = arg;

	ev_io_stop(rr->r->loop, &rr->cm_io);
	rdma_pools_free(rr);
	rdma_destroy_event_channel(rr->ch);
	g_rr[rr->r->id] = NULL;
	free(rr);
}

/* The calling reactor's transport state, created on first use (on that reactor). */
struct rdma_reactor *rdma_reactor_get(struct reactor *r)
{
	struct rdma_reactor *rr;

	if (!r || r->id >= RDMA_MAX_REACTORS)
		return NULL;
	if (g_rr[r->id])
		return g_rr[r->id];
	rr = calloc(1, sizeof(*rr));
	if (!rr)
		return NULL;
	rr->r = r;
	TAILQ_INIT(&rr->conns);
	TAILQ_INIT(&rr->pools);
	rr->ch = rdma_create_event_channel();
	if (!rr->ch) {
		log_err("rdma: reactor %u: cannot create an RDMA CM event channel: %s", r->id,
			strerror(errno));
		free(rr);
		return NULL;
	}
	set_nonblock(rr->ch->fd);
	if (reactor_on_exit(r, rdma_reactor_free, rr) != 0) {
		rdma_destroy_event_channel(rr->ch);
		free(rr);
		return NULL;
	}
	ev_io_init(&rr->cm_io, reactor_cm_cb, rr->ch->fd, EV_READ);
	rr->cm_io.data = rr;
	ev_io_start(r->loop, &rr->cm_io);
	g_rr[r->id] = rr;
	return rr;
}

/* ---- connection requests (main thread) ------------------------------------------------------- */

void rdma_cm_reject_sts(struct rdma_cm_id *id, uint16_t sts)
{
	struct nvme_rdma_cm_rej rej;

	nvme_rdma_cm_rej_build(&rej, sts);
	rdma_reject(id, &rej, sizeof(rej));
}

static void format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(s6->sin6_port));
	} else if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(s4->sin_port));
	} else {
		snprintf(buf, len, "?");
	}
}

static void connect_request(struct rdma_listener *l, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_qpair *rq;
	struct reactor *r;
	unsigned int live, connecting;
	char peer[64];
	int rc;

	format_addr(rdma_get_peer_addr(id), peer, sizeof(peer));
	/* Established and connecting queue pairs have limits of their own, as on NVMe/TCP:
	 * requests that never go on to Connect (closed at the deadline) cannot lock a real
	 * host out, nor make the target register more than max_connecting small sets of
	 * receive buffers. */
	live = atomic_load(&g_stats.live);
	connecting = atomic_load(&g_stats.connecting);
	if (connecting >= l->tgt->opts.max_connecting) {
		log_peer("rdma %s: refused: %u connections still connecting", peer, connecting);
		goto reject;
	}
	if (live - connecting >= l->tgt->opts.max_connections) {
		log_peer("rdma %s: refused: %u connections already", peer,
			 l->tgt->opts.max_connections);
		goto reject;
	}
	rq = calloc(1, sizeof(*rq));
	r = reactor_next();
	if (!rq || !r) {
		log_peer("rdma %s: refused: out of memory or no reactor", peer);
		free(rq);
		goto reject;
	}
	rq->kind = RDMA_OBJ_QPAIR;
	rq->cm_id = id;
	rq->qp.tgt = l->tgt;
	rq->qp.port = l->port;
	snprintf(rq->qp.peer, sizeof(rq->qp.peer), "%s", peer);
	rc = nvme_rdma_cm_req_parse(ev->param.conn.private_data, ev->param.conn.private_data_len,
				    &rq->cm);
	if (rc) {
		/* Checked again (and rejected) on the reactor with the rest. */
		rq->cm.recfmt = 0xffff;
	}
	rq->initiator_depth = ev->param.conn.initiator_depth;
	rq->responder_resources = ev->param.conn.responder_resources;
	id->context = rq;
	atomic_fetch_add(&g_stats.live, 1);
	atomic_fetch_add(&g_stats.connecting, 1);
	rdma_ack_cm_event(ev);
	if (reactor_send_msg(r, rdma_qpair_setup, rq) != 0) {
		atomic_fetch_sub(&g_stats.connecting, 1);
		atomic_fetch_sub(&g_stats.live, 1);
		rdma_cm_reject_sts(id, NVME_RDMA_CM_NO_RSC);
		ADD(rejected, 1);
		rdma_destroy_id(id);
		free(rq);
	}
	return;
reject:
	rdma_cm_reject_sts(id, NVME_RDMA_CM_NO_RSC);
	ADD(rejected, 1);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
}

static void main_cm_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rdma_cm_event *ev;

	for (int i = 0; i < 64 && rdma_get_cm_event(g_main.ch, &ev) == 0; i++) {
		void *ctx = ev->listen_id ? ev->listen_id->context
					  : (ev->id ? ev->id->context : NULL);
		struct rdma_listener *l = ctx;

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && l &&
		    l->kind == RDMA_OBJ_LISTENER) {
			connect_request(l, ev); /* acks */
			continue;
		}
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL && l && l->kind == RDMA_OBJ_LISTENER)
			log_warn("%s: RDMA device removed: no new connections here", l->name);
		else
			log_debug("rdma: CM event %s (%d) ignored on the listener channel",
				  rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
}

static int main_channel(void)
{
	if (g_main.init)
		return 0;
	g_main.ch = rdma_create_event_channel();
	if (!g_main.ch) {
		int rc = -errno;

		log_err("rdma: cannot open the RDMA CM (%s); is the rdma_ucm module loaded?",
			strerror(errno));
		return rc ? rc : -ENODEV;
	}
	set_nonblock(g_main.ch->fd);
	TAILQ_INIT(&g_main.listeners);
	ev_io_init(&g_main.io, main_cm_cb, g_main.ch->fd, EV_READ);
	ev_io_start(EV_DEFAULT, &g_main.io);
	g_main.init = true;
	return 0;
}

/* ---- ops ------------------------------------------------------------------------------------- */

static int rdma_listen_port(struct nvmf_tgt *tgt, struct nvmf_port *port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *ai = NULL;
	struct rdma_listener *l;
	bool v6 = port->adrfam == NVMF_ADRFAM_IPV6;
	int rc;

	if (port->listener)
		return -EBUSY;
	rc = main_channel();
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->kind = RDMA_OBJ_LISTENER;
	l->tgt = tgt;
	l->port = port;
	snprintf(l->name, sizeof(l->name), "rdma://%s%s%s:%s", v6 ? "[" : "", port->traddr,
		 v6 ? "]" : "", port->trsvcid);
	hints.ai_family = v6 ? AF_INET6 : AF_INET;
	rc = getaddrinfo(port->traddr, port->trsvcid[0] ? port->trsvcid : "4420", &hints, &ai);
	if (rc != 0) {
		log_err("%s: bad address: %s", l->name, gai_strerror(rc));
		free(l);
		return -EINVAL;
	}
	if (rdma_create_id(g_main.ch, &l->id, l, RDMA_PS_TCP) != 0) {
		rc = -errno;
		log_err("%s: cannot create an RDMA CM id: %s", l->name, strerror(errno));
		goto fail;
	}
	if (ai->ai_family == AF_INET6) {
		int one = 1;

		rdma_set_option(l->id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one));
	}
	if (rdma_bind_addr(l->id, ai->ai_addr) != 0) {
		rc = -errno;
		log_err("%s: cannot bind: %s%s", l->name, strerror(errno),
			errno == EADDRNOTAVAIL || errno == ENODEV
				? " (no RDMA device has this address)"
				: "");
		goto fail;
	}
	if (rdma_listen(l->id, RDMA_LISTEN_BACKLOG) != 0) {
		rc = -errno;
		log_err("%s: cannot listen: %s", l->name, strerror(errno));
		goto fail;
	}
	freeaddrinfo(ai);
	/* Port 0 asks for any free port: report the one we got. */
	snprintf(port->trsvcid, sizeof(port->trsvcid), "%u", ntohs(rdma_get_src_port(l->id)));
	snprintf(l->name, sizeof(l->name), "rdma://%s%s%s:%s", v6 ? "[" : "", port->traddr,
		 v6 ? "]" : "", port->trsvcid);
	TAILQ_INSERT_TAIL(&g_main.listeners, l, link);
	port->listener = l;
	log_debug("%s: listening%s", l->name, port->discovery_only ? " (discovery)" : "");
	return 0;
fail:
	if (l->id)
		rdma_destroy_id(l->id);
	freeaddrinfo(ai);
	free(l);
	return rc ? rc : -EIO;
}

static void rdma_stop_listen(struct nvmf_port *port)
{
	struct rdma_listener *l = port->listener;

	if (!l)
		return;
	rdma_destroy_id(l->id);
	TAILQ_REMOVE(&g_main.listeners, l, link);
	port->listener = NULL;
	log_debug("%s: stopped listening", l->name);
	free(l);
}

static void rdma_disc_entry(const struct nvmf_port *port, struct nvmf_disc_log_entry *e)
{
	e->treq = NVMF_TREQ_SECURE_NOT_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW;
	memset(e->tsas, 0, sizeof(e->tsas));
	e->tsas[0] = NVMF_RDMA_QPTYPE_CONNECTED;
	e->tsas[1] = NVMF_RDMA_PRTYPE_NOT_SPECIFIED;
	e->tsas[2] = NVMF_RDMA_CMS_RDMA_CM;
	/* RDMA_PKEY (bytes 8-9) 0: not used on RoCE/iWARP */
}

static void close_all_msg(void *arg)
{
	struct rdma_reactor *rr = g_rr[reactor_self()->id];
	struct rdma_qpair *rq, *next;

	if (!rr)
		return;
	for (rq = TAILQ_FIRST(&rr->conns); rq; rq = next) {
		next = TAILQ_NEXT(rq, link);
		rdma_qpair_close(rq, "target shutting down");
	}
}

int nvmf_rdma_close_all(unsigned int timeout_ms)
{
	return reactors_drain(close_all_msg, &g_stats.live, timeout_ms, "NVMe/RDMA");
}

void rdma_count_accepted(void)
{
	ADD(accepted, 1);
}

const struct nvmf_transport_ops nvmf_rdma_transport_ops = {
	.name = "rdma",
	.trtype = NVMF_TRTYPE_RDMA,
	.listen = rdma_listen_port,
	.stop_listen = rdma_stop_listen,
	.req_complete = rdma_req_complete,
	.qpair_disconnect = rdma_qpair_disconnect,
	.disc_entry = rdma_disc_entry,
	.sgls = NVME_CTRL_SGLS_KEYED,
	.msdbd = RDMA_SGL_DESC_MAX,
	.local_traddr = rdma_local_traddr,
};
