/* SPDX-License-Identifier: MIT */
/*
 * Ports (a transport listening on an address), the subsystems each exports, discovery
 * referrals, and the transport registry.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ana.h"
#include "ctrlr.h"
#include "common/log.h"
#include "reactor/reactor.h"

#define PORT_WAIT_CTRLRS_MS 10000

/* ---- Ports ---------------------------------------------------------------------------------- */

static int parse_adrfam(const char *s, const char *traddr, uint8_t *out)
{
	static const struct {
		const char *name;
		uint8_t v;
	} map[] = {
		{ "ipv4", NVMF_ADRFAM_IPV4 }, { "ipv6", NVMF_ADRFAM_IPV6 },
		{ "ib", NVMF_ADRFAM_IB },     { "fc", NVMF_ADRFAM_FC },
		{ "loop", NVMF_ADRFAM_LOOP },
	};

	if (!s || !*s) {
		*out = traddr && strchr(traddr, ':') ? NVMF_ADRFAM_IPV6 : NVMF_ADRFAM_IPV4;
		return 0;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (!strcasecmp(s, map[i].name)) {
			*out = map[i].v;
			return 0;
		}
	}
	return -EINVAL;
}

struct nvmf_port *nvmf_port_find(struct nvmf_tgt *tgt, uint16_t portid)
{
	struct nvmf_port *p, *found = NULL;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH (p, &tgt->ports, link)
		if (p->portid == portid)
			found = p;
	pthread_mutex_unlock(&tgt->lock);
	return found;
}

struct nvmf_port *nvmf_port_create(struct nvmf_tgt *tgt, const struct nvmf_port_opts *o,
				   char *err, size_t errlen)
{
	const char *trtype = o->trtype ? o->trtype : "tcp";
	const struct nvmf_transport_ops *ops = nvmf_transport_find(trtype);
	struct nvmf_port *port, *p;
	uint16_t portid = o->portid;

	if (!ops) {
		snprintf(err, errlen, "unknown transport '%s'", trtype);
		errno = ENOENT;
		return NULL;
	}
	if (!o->traddr || strlen(o->traddr) >= sizeof(port->traddr) ||
	    (o->trsvcid && strlen(o->trsvcid) >= sizeof(port->trsvcid)) ||
	    (o->advertise && strlen(o->advertise) >= sizeof(port->advertise))) {
		snprintf(err, errlen, "port address missing or too long");
		errno = EINVAL;
		return NULL;
	}
	port = calloc(1, sizeof(*port));
	if (!port) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (parse_adrfam(o->adrfam, o->traddr, &port->adrfam)) {
		snprintf(err, errlen, "unknown address family '%s'", o->adrfam);
		free(port);
		errno = EINVAL;
		return NULL;
	}
	port->tgt = tgt;
	port->ops = ops;
	snprintf(port->traddr, sizeof(port->traddr), "%s", o->traddr);
	snprintf(port->trsvcid, sizeof(port->trsvcid), "%s",
		 o->trsvcid && *o->trsvcid ? o->trsvcid : o->discovery_only ? "8009" : "4420");
	snprintf(port->advertise, sizeof(port->advertise), "%s", o->advertise ? o->advertise : "");
	port->in_capsule_size = o->in_capsule_size;
	port->discovery_only = o->discovery_only;
	port->sectype = o->sectype;
	port->treq = nvmf_port_treq_resolve(o->sectype, o->treq);
	TAILQ_INIT(&port->qpairs);
	nvmf_ana_port_init(port);

	pthread_mutex_lock(&tgt->lock);
	if (!portid) {
		portid = 1;
		TAILQ_FOREACH (p, &tgt->ports, link)
			if (p->portid >= portid)
				portid = (uint16_t)(p->portid + 1);
	}
	TAILQ_FOREACH (p, &tgt->ports, link) {
		if (p->portid == portid) {
			pthread_mutex_unlock(&tgt->lock);
			snprintf(err, errlen, "port %u exists", portid);
			free(port);
			errno = EEXIST;
			return NULL;
		}
	}
	port->portid = portid;
	TAILQ_INSERT_TAIL(&tgt->ports, port, link);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);
	return port;
}

bool nvmf_port_exports(const struct nvmf_port *port, const struct nvmf_subsys *s)
{
	if (s->type == NVMF_SUBSYS_DISCOVERY)
		return true;
	if (port->discovery_only)
		return false;
	for (unsigned int i = 0; i < port->nsubsys; i++)
		if (port->subsys[i] == s)
			return true;
	return false;
}

int nvmf_port_add_subsys(struct nvmf_port *port, struct nvmf_subsys *s)
{
	struct nvmf_tgt *tgt = port->tgt;
	int rc = 0;

	if (s->type == NVMF_SUBSYS_DISCOVERY || port->discovery_only)
		return -EINVAL;
	pthread_mutex_lock(&tgt->lock);
	if (nvmf_port_exports(port, s))
		rc = -EEXIST;
	else if (port->nsubsys >= sizeof(port->subsys) / sizeof(port->subsys[0]))
		rc = -ENOSPC;
	else
		port->subsys[port->nsubsys++] = s;
	if (!rc)
		nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	if (!rc)
		nvmf_disc_notify(tgt);
	return rc == -EEXIST ? 0 : rc;
}

/* Caller holds tgt->lock. */
static bool port_unexport(struct nvmf_port *port, struct nvmf_subsys *s)
{
	for (unsigned int i = 0; i < port->nsubsys; i++) {
		if (port->subsys[i] == s) {
			memmove(&port->subsys[i], &port->subsys[i + 1],
				(port->nsubsys - i - 1) * sizeof(port->subsys[0]));
			port->nsubsys--;
			return true;
		}
	}
	return false;
}

int nvmf_port_remove_subsys(struct nvmf_port *port, struct nvmf_subsys *s)
{
	struct nvmf_tgt *tgt = port->tgt;
	bool found;

	pthread_mutex_lock(&tgt->lock);
	found = port_unexport(port, s);
	if (found)
		nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	if (!found)
		return -ENOENT;
	nvmf_disc_notify(tgt);
	return 0;
}

void nvmf_port_unexport_all(struct nvmf_tgt *tgt, struct nvmf_subsys *s)
{
	struct nvmf_port *port;

	TAILQ_FOREACH (port, &tgt->ports, link)
		port_unexport(port, s);
}

uint8_t nvmf_port_treq_resolve(uint8_t sectype, uint8_t treq)
{
	if (sectype == NVMF_TCP_SECTYPE_TLS13 && treq == NVMF_TREQ_SECURE_NOT_SPECIFIED)
		return NVMF_TREQ_SECURE_REQUIRED;
	return treq;
}

uint32_t nvmf_port_icsz(const struct nvmf_tgt *tgt, const struct nvmf_port *port)
{
	return port && port->in_capsule_size ? port->in_capsule_size : tgt->opts.in_capsule_size;
}

int nvmf_port_listen(struct nvmf_port *port)
{
	int rc;

	if (port->listening)
		return 0;
	rc = port->ops->listen(port->tgt, port);
	if (rc) {
		/* the caller reports it, once, with what it was asked to do */
		log_debug("port %u: cannot listen on %s:%s (%s): %s", port->portid, port->traddr,
			  port->trsvcid, port->ops->name, strerror(-rc));
		return rc;
	}
	port->listening = true;
	if (port->sectype == NVMF_TCP_SECTYPE_TLS13 && port->treq != NVMF_TREQ_SECURE_REQUIRED)
		log_warn("port %u: %s:%s: TLS 1.3 is \"not required\": hosts without a PSK may "
			 "connect in cleartext (hosts with one never are)",
			 port->portid, port->traddr, port->trsvcid);
	log_notice("port %u: listening on %s %s:%s%s%s", port->portid, port->ops->name,
		   port->traddr, port->trsvcid, port->discovery_only ? " (discovery)" : "",
		   port->sectype != NVMF_TCP_SECTYPE_TLS13   ? ""
		   : port->treq == NVMF_TREQ_SECURE_REQUIRED ? " (TLS 1.3 required)"
							     : " (TLS 1.3 or plain)");
	return 0;
}

struct qp_disc_msg {
	struct nvmf_tgt *tgt;
	struct nvmf_port *port;
	struct nvmf_qpair *qp;
};

/* On the queue pair's reactor: still on the port's list means not yet released. */
static void qp_disconnect_msg(void *arg)
{
	struct qp_disc_msg *m = arg;
	struct nvmf_qpair *qp;

	pthread_mutex_lock(&m->tgt->lock);
	TAILQ_FOREACH (qp, &m->port->qpairs, link)
		if (qp == m->qp)
			break;
	pthread_mutex_unlock(&m->tgt->lock);
	if (qp)
		qp->ops->qpair_disconnect(qp);
	free(m);
}

void nvmf_port_disconnect_all(struct nvmf_port *port)
{
	struct nvmf_tgt *tgt = port->tgt;
	struct qp_disc_msg *m, *list = NULL;
	struct nvmf_qpair *qp;
	unsigned int n = 0, i = 0;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH (qp, &port->qpairs, link)
		n++;
	if (n)
		list = calloc(n, sizeof(*list));
	TAILQ_FOREACH (qp, &port->qpairs, link) {
		if (!list)
			break;
		list[i].tgt = tgt;
		list[i].port = port;
		list[i].qp = qp;
		i++;
	}
	pthread_mutex_unlock(&tgt->lock);
	for (unsigned int j = 0; j < i; j++) {
		m = malloc(sizeof(*m));
		if (!m)
			break;
		*m = list[j];
		if (reactor_send_msg(m->qp->reactor, qp_disconnect_msg, m))
			free(m);
	}
	free(list);
}

static bool ctrlrs_on_port(struct nvmf_subsys *s, const struct nvmf_port *port)
{
	struct nvmf_ctrlr *c;
	bool found = false;

	pthread_mutex_lock(&s->lock);
	TAILQ_FOREACH (c, &s->ctrlrs, link)
		if (c->port == port)
			found = true;
	pthread_mutex_unlock(&s->lock);
	return found;
}

/* Connections through @port, or controllers whose admin queue came through it, remain. */
static bool port_busy(struct nvmf_tgt *tgt, const struct nvmf_port *port)
{
	struct nvmf_subsys *s;
	bool busy;

	pthread_mutex_lock(&tgt->lock);
	busy = !TAILQ_EMPTY(&port->qpairs) || ctrlrs_on_port(tgt->discovery, port);
	TAILQ_FOREACH (s, &tgt->subsystems, link)
		busy = busy || ctrlrs_on_port(s, port);
	pthread_mutex_unlock(&tgt->lock);
	return busy;
}

void nvmf_port_destroy(struct nvmf_port *port)
{
	struct nvmf_tgt *tgt = port->tgt;

	if (port->listening && port->ops->stop_listen)
		port->ops->stop_listen(port);
	port->listening = false;
	pthread_mutex_lock(&tgt->lock);
	TAILQ_REMOVE(&tgt->ports, port, link);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);

	/* Close every connection that came in through the port (their controllers go with
	 * their admin queues); ask again now and then for connections still starting up. */
	for (unsigned int t = 0; port_busy(tgt, port); t++) {
		struct timespec ts = { 0, 1000000 };

		if (t % 500 == 0)
			nvmf_port_disconnect_all(port);
		if (t >= PORT_WAIT_CTRLRS_MS) {
			log_err("port %u: connections did not close; keeping it allocated",
				port->portid);
			return;
		}
		nanosleep(&ts, NULL);
	}
	nvmf_reactors_quiesce();
	log_info("port %u removed", port->portid);
	free(port);
}

/* ---- Referrals ------------------------------------------------------------------------------ */

int nvmf_referral_add(struct nvmf_tgt *tgt, uint16_t portid, const char *trtype,
		      const char *adrfam, const char *traddr, const char *trsvcid)
{
	const struct nvmf_transport_ops *ops = nvmf_transport_find(trtype ? trtype : "tcp");
	struct nvmf_referral *r;
	uint8_t af;

	if (!traddr || strlen(traddr) >= sizeof(r->traddr) ||
	    (trsvcid && strlen(trsvcid) >= sizeof(r->trsvcid)) ||
	    parse_adrfam(adrfam, traddr, &af))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->portid = portid;
	if (ops)
		r->trtype = ops->trtype;
	else if (trtype && !strcasecmp(trtype, "rdma"))
		r->trtype = NVMF_TRTYPE_RDMA;
	else
		r->trtype = NVMF_TRTYPE_TCP;
	r->adrfam = af;
	snprintf(r->traddr, sizeof(r->traddr), "%s", traddr);
	snprintf(r->trsvcid, sizeof(r->trsvcid), "%s", trsvcid ? trsvcid : "8009");
	pthread_mutex_lock(&tgt->lock);
	TAILQ_INSERT_TAIL(&tgt->referrals, r, link);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);
	return 0;
}

int nvmf_referral_remove(struct nvmf_tgt *tgt, const char *traddr, const char *trsvcid)
{
	struct nvmf_referral *r;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH (r, &tgt->referrals, link)
		if (!strcmp(r->traddr, traddr) && (!trsvcid || !strcmp(r->trsvcid, trsvcid)))
			break;
	if (r) {
		TAILQ_REMOVE(&tgt->referrals, r, link);
		free(r);
		nvmf_tgt_changed_locked(tgt);
	}
	pthread_mutex_unlock(&tgt->lock);
	if (!r)
		return -ENOENT;
	nvmf_disc_notify(tgt);
	return 0;
}
