/* SPDX-License-Identifier: MIT */
/*
 * The discovery log page (70h) and its generation counter: one entry per (port, exported
 * subsystem the host may connect to), a "current discovery subsystem" entry per port the
 * host can use, and the referrals. Discovery controllers that enabled the notice get an asynchronous event
 * whenever the generation counter moves.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"

void nvmf_tgt_changed_locked(struct nvmf_tgt *tgt)
{
	tgt->genctr++;
}

/* Every live discovery controller, however many: the notice is posted with the message
 * embedded in the controller (no allocation that could fail and drop it), at most one in
 * flight per controller; a change while one is in flight is covered by it, since the host
 * reads the log after the event. */
void nvmf_disc_notify(struct nvmf_tgt *tgt)
{
	struct nvmf_subsys *d = tgt->discovery;
	struct nvmf_ctrlr *c;

	pthread_mutex_lock(&d->lock);
	for (c = TAILQ_FIRST(&d->ctrlrs); c; c = TAILQ_NEXT(c, link))
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != NVMF_CTRLR_DEAD)
			nvmf_ctrlr_notify_disc_changed(c);
	pthread_mutex_unlock(&d->lock);
}

void nvmf_tgt_changed(struct nvmf_tgt *tgt)
{
	pthread_mutex_lock(&tgt->lock);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);
}

static bool wildcard_addr(const char *a)
{
	return !a[0] || !strcmp(a, "0.0.0.0") || !strcmp(a, "::") || !strcmp(a, "[::]");
}

static void fill_port_entry(struct nvmf_disc_log_entry *e, const struct nvmf_tgt *tgt,
			    const struct nvmf_port *port, const struct nvmf_qpair *qp,
			    uint8_t subtype, const char *subnqn)
{
	const char *addr = port->advertise[0] ? port->advertise : port->traddr;
	char local[256] = "";

	if (wildcard_addr(addr) && qp && qp->port == port && qp->ops && qp->ops->local_traddr) {
		qp->ops->local_traddr(qp, local, sizeof(local));
		if (local[0])
			addr = local;
	}
	memset(e, 0, sizeof(*e));
	e->trtype = port->ops->trtype;
	e->adrfam = port->adrfam;
	e->subtype = subtype;
	e->treq = NVMF_TREQ_SECURE_NOT_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW;
	put_le16(&e->portid, port->portid);
	put_le16(&e->cntlid, NVMF_CNTLID_DYNAMIC);
	put_le16(&e->asqsz, (uint16_t)tgt->opts.max_admin_depth);
	strncpy(e->trsvcid, port->trsvcid, sizeof(e->trsvcid));
	snprintf(e->subnqn, sizeof(e->subnqn), "%s", subnqn);
	snprintf(e->traddr, sizeof(e->traddr), "%s", addr);
	if (e->trtype == NVMF_TRTYPE_TCP)
		e->tsas[0] = NVMF_TCP_SECTYPE_NONE;
	if (port->ops->disc_entry)
		port->ops->disc_entry(port, e);
}

bool nvmf_disc_port_listed(const struct nvmf_port *port, const char *hostnqn,
			   const struct nvmf_qpair *qp)
{
	if (port->ops && port->ops->trtype == NVMF_TRTYPE_TCP) {
		bool tls = port->sectype == NVMF_TCP_SECTYPE_TLS13;
		bool psk = nvmf_tgt_host_has_psk_locked(port->tgt, hostnqn);

		if (!tls && psk)
			return false; /* a host with a PSK is never admitted over plain TCP */
		if (tls && port->treq == NVMF_TREQ_SECURE_REQUIRED && !psk)
			return false; /* no PSK here: no handshake can succeed */
	}
	if (port->discovery_only || (qp && qp->port == port))
		return true;
	for (unsigned int i = 0; i < port->nsubsys; i++)
		if (nvmf_subsys_host_allowed_locked(port->subsys[i], hostnqn))
			return true;
	return false;
}

/* Caller holds tgt->lock. Counts entries when @log is NULL. Only what @hostnqn can
 * connect to: on each port the subsystems it is allowed on, and the port's own discovery
 * entry when it has one of those, serves discovery only, or is where the host asks from. */
static uint64_t build_entries(struct nvmf_tgt *tgt, const char *hostnqn,
			      const struct nvmf_qpair *qp, struct nvmf_disc_log_entry *log)
{
	const struct nvmf_port *port;
	const struct nvmf_referral *r;
	uint64_t n = 0;

	TAILQ_FOREACH (port, &tgt->ports, link) {
		if (!nvmf_disc_port_listed(port, hostnqn, qp))
			continue;
		if (log)
			fill_port_entry(&log[n], tgt, port, qp, NVMF_SUBTYPE_DISCOVERY_CURRENT,
					NVME_DISCOVERY_NQN);
		n++;
		if (port->discovery_only)
			continue;
		for (unsigned int i = 0; i < port->nsubsys; i++) {
			struct nvmf_subsys *s = port->subsys[i];

			if (!nvmf_subsys_host_allowed_locked(s, hostnqn))
				continue;
			if (log)
				fill_port_entry(&log[n], tgt, port, qp, NVMF_SUBTYPE_NVME, s->nqn);
			n++;
		}
	}
	TAILQ_FOREACH (r, &tgt->referrals, link) {
		if (log) {
			struct nvmf_disc_log_entry *e = &log[n];

			memset(e, 0, sizeof(*e));
			e->trtype = r->trtype;
			e->adrfam = r->adrfam;
			e->subtype = NVMF_SUBTYPE_DISCOVERY_REFERRAL;
			e->treq = NVMF_TREQ_SECURE_NOT_REQUIRED;
			put_le16(&e->portid, r->portid);
			put_le16(&e->cntlid, NVMF_CNTLID_DYNAMIC);
			put_le16(&e->asqsz, (uint16_t)tgt->opts.max_admin_depth);
			strncpy(e->trsvcid, r->trsvcid, sizeof(e->trsvcid));
			snprintf(e->subnqn, sizeof(e->subnqn), "%s", NVME_DISCOVERY_NQN);
			snprintf(e->traddr, sizeof(e->traddr), "%s", r->traddr);
		}
		n++;
	}
	return n;
}

void *nvmf_disc_log_build(struct nvmf_tgt *tgt, const char *hostnqn, const struct nvmf_qpair *qp,
			  size_t *len)
{
	struct nvmf_disc_log_hdr *hdr;
	uint64_t n;
	size_t size;

	pthread_mutex_lock(&tgt->lock);
	n = build_entries(tgt, hostnqn, qp, NULL);
	size = sizeof(*hdr) + n * sizeof(struct nvmf_disc_log_entry);
	hdr = calloc(1, size);
	if (hdr) {
		build_entries(tgt, hostnqn, qp, (struct nvmf_disc_log_entry *)(hdr + 1));
		put_le64(&hdr->genctr, tgt->genctr);
		put_le64(&hdr->numrec, n);
		put_le16(&hdr->recfmt, 0);
	}
	pthread_mutex_unlock(&tgt->lock);
	*len = size;
	return hdr;
}
