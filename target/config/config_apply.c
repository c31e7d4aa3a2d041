/* SPDX-License-Identifier: MIT */
/*
 * Applying a configuration model to the running target: at start (from nothing) and on
 * SIGHUP (from the model applied last). Both are one operation, "move from @old to @new":
 *
 *   1. check: refuse what cannot change live (a port's address, a subsystem's serial)
 *      before touching anything;
 *   2. additions, each recorded in an undo log: new subsystems (complete with hosts and
 *      namespaces), new/replaced namespaces, new allowed hosts, new ports (listening),
 *      subsystems newly exported on kept ports, referrals. Ports and referrals that go
 *      away are removed here, first, so that new ones may take over their address. Any
 *      failure plays the undo log backwards and the target is as it was;
 *   3. removals, which cannot fail: namespaces (the core sends Namespace Attribute
 *      Changed and fails their I/O cleanly), hosts, exports, subsystems.
 *
 * Everything runs on the main thread, as nvmf.h requires for these calls.
 */
#include "config_file.h"
#include "config_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/tls_psk.h"
#include "core/nvmf.h"

enum undo_kind {
	UNDO_SUBSYS_DESTROY,	/* a subsystem we created */
	UNDO_NS_REMOVE,		/* a namespace we added */
	UNDO_NS_READD,		/* a namespace we removed to replace it */
	UNDO_HOST_REMOVE,	/* an allowed host we added */
	UNDO_PORT_DESTROY,	/* a port we created */
	UNDO_PORT_RECREATE,	/* a port we closed */
	UNDO_PORT_UNEXPORT,	/* a subsystem we exported on a kept port */
	UNDO_REFERRAL_REMOVE,	/* a referral we added */
	UNDO_REFERRAL_READD,	/* a referral we removed */
};

struct undo {
	enum undo_kind kind;
	struct nvmf_subsys *subsys;
	struct nvmf_port *port;
	const struct config_ns *ns;	/* UNDO_NS_READD: what to add back */
	const struct config_port *cport; /* UNDO_PORT_RECREATE */
	const struct config_referral *ref; /* UNDO_REFERRAL_READD */
	uint32_t nsid;
	const char *str;		/* host NQN; referral traddr */
	const char *str2;		/* referral trsvcid */
};

struct apply_ctx {
	struct nvmf_tgt *tgt;
	const struct tgt_config *old, *new_cfg;
	char *err;
	size_t errlen;
	struct undo *undo;
	unsigned int nundo, undo_cap;
	/* Counters for the summary line. */
	unsigned int ns_added, ns_removed, ports_added, ports_removed, subsys_added, subsys_removed,
		ctrlrs_revoked;
};

static const struct tgt_config empty_config;

__attribute__((format(printf, 3, 4))) static int aerr(struct apply_ctx *a, int rc,
						      const char *fmt, ...)
{
	const char *name = a->new_cfg->path[0] ? a->new_cfg->path : "config";
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (a->err && a->errlen)
		snprintf(a->err, a->errlen, "%s: %s", name, msg);
	return rc;
}

static int push_undo(struct apply_ctx *a, const struct undo *u)
{
	if (a->nundo == a->undo_cap) {
		unsigned int cap = a->undo_cap ? a->undo_cap * 2 : 32;
		struct undo *n = realloc(a->undo, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		a->undo = n;
		a->undo_cap = cap;
	}
	a->undo[a->nundo++] = *u;
	return 0;
}

/* ---- Building blocks ------------------------------------------------------------------------- */

static void ns_opts(const struct config_ns *ns, struct nvmf_ns_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nsid = ns->nsid;
	o->path = ns->path;
	o->has_nguid = ns->has_nguid;
	o->has_uuid = ns->has_uuid;
	o->has_eui64 = ns->has_eui64;
	memcpy(o->nguid, ns->nguid, sizeof(o->nguid));
	memcpy(o->uuid, ns->uuid, sizeof(o->uuid));
	memcpy(o->eui64, ns->eui64, sizeof(o->eui64));
	o->enabled = ns->enable;
	o->anagrpid = ns->ana_grpid;
	o->buffered_io = ns->buffered_io;
}

static bool ns_same(const struct config_ns *x, const struct config_ns *y)
{
	return x->enable == y->enable && !strcmp(x->path, y->path) &&
	       x->ana_grpid == y->ana_grpid && x->buffered_io == y->buffered_io &&
	       x->has_nguid == y->has_nguid && x->has_uuid == y->has_uuid &&
	       x->has_eui64 == y->has_eui64 && !memcmp(x->nguid, y->nguid, sizeof(x->nguid)) &&
	       !memcmp(x->uuid, y->uuid, sizeof(x->uuid)) &&
	       !memcmp(x->eui64, y->eui64, sizeof(x->eui64));
}

static void qos_limits(const struct config_qos *q, struct nvmf_qos_limits *l)
{
	l->rw_ios_per_sec = q->rw_ios_per_sec;
	l->r_ios_per_sec = q->r_ios_per_sec;
	l->w_ios_per_sec = q->w_ios_per_sec;
	l->rw_mbytes_per_sec = q->rw_mbytes_per_sec;
	l->r_mbytes_per_sec = q->r_mbytes_per_sec;
	l->w_mbytes_per_sec = q->w_mbytes_per_sec;
}

static void host_qos_limits(const struct config_host_qos *q, struct nvmf_qos_limits *l)
{
	l->rw_ios_per_sec = q->rw_ios_per_sec;
	l->r_ios_per_sec = q->r_ios_per_sec;
	l->w_ios_per_sec = q->w_ios_per_sec;
	l->rw_mbytes_per_sec = q->rw_mbytes_per_sec;
	l->r_mbytes_per_sec = q->r_mbytes_per_sec;
	l->w_mbytes_per_sec = q->w_mbytes_per_sec;
}

static const struct config_host_qos *find_host_qos(const struct config_qos *q, const char *host)
{
	for (unsigned int i = 0; i < q->nhosts; i++)
		if (!strcmp(q->hosts[i].host, host))
			return &q->hosts[i];
	return NULL;
}

/* The namespace's QoS limits and its hosts', when they differ from @was's (NULL: a new
 * namespace); a host @was limited and the file no longer names is unlimited again. */
static int apply_qos(struct apply_ctx *a, struct nvmf_subsys *s, const struct config_ns *ns,
		     const struct config_ns *was, unsigned int si, unsigned int ni)
{
	static const struct config_qos none;
	const struct config_qos *old = was ? &was->qos : &none;
	struct nvmf_qos_limits l;
	int rc;

	if (!memcmp(&ns->qos, old, sizeof(ns->qos)))
		return 0;
	qos_limits(&ns->qos, &l);
	rc = nvmf_ns_set_qos(s, ns->nsid, &l);
	if (rc)
		return aerr(a, rc, "subsystems[%u].namespaces[%u].qos: %s", si, ni, strerror(-rc));
	for (unsigned int i = 0; i < ns->qos.nhosts; i++) {
		const struct config_host_qos *h = &ns->qos.hosts[i],
					     *o = find_host_qos(old, h->host);

		if (o && !memcmp(o, h, sizeof(*h)))
			continue;
		host_qos_limits(h, &l);
		rc = nvmf_ns_set_host_qos(s, ns->nsid, h->host, &l);
		if (rc)
			return aerr(a, rc, "subsystems[%u].namespaces[%u].qos.hosts[%u]: %s", si,
				    ni, i, strerror(-rc));
	}
	for (unsigned int i = 0; i < old->nhosts; i++) {
		if (find_host_qos(&ns->qos, old->hosts[i].host))
			continue;
		memset(&l, 0, sizeof(l));
		nvmf_ns_set_host_qos(s, ns->nsid, old->hosts[i].host, &l);
	}
	return 0;
}

static int add_ns(struct apply_ctx *a, struct nvmf_subsys *s, const struct config_ns *ns,
		  unsigned int si, unsigned int ni)
{
	struct nvmf_ns_opts o;
	char msg[512] = "";
	int rc;

	ns_opts(ns, &o);
	rc = nvmf_subsys_add_ns(s, &o, msg, sizeof(msg));
	if (rc < 0)
		return aerr(a, rc, "subsystems[%u].namespaces[%u] (NSID %u, %s): %s", si, ni,
			    ns->nsid, ns->path, msg[0] ? msg : strerror(-rc));
	a->ns_added++;
	return apply_qos(a, s, ns, NULL, si, ni);
}

static bool host_listed(const struct config_subsys *cs, const char *nqn)
{
	unsigned int i;

	for (i = 0; i < cs->nallowed_hosts; i++)
		if (!strcmp(cs->allowed_hosts[i], nqn))
			return true;
	return false;
}

static bool port_exports(const struct config_port *cp, const char *nqn)
{
	unsigned int i;

	for (i = 0; i < cp->nsubsystems; i++)
		if (!strcmp(cp->subsystems[i], nqn))
			return true;
	return false;
}

static bool addr_same(const struct config_addr *x, const struct config_addr *y)
{
	return !strcmp(x->trtype, y->trtype) && !strcmp(x->adrfam, y->adrfam) &&
	       !strcmp(x->traddr, y->traddr) && !strcmp(x->trsvcid, y->trsvcid) &&
	       x->treq == y->treq && x->sectype == y->sectype;
}

/* A whole new subsystem: attributes, hosts, enabled namespaces. Not exported yet. */
static int create_subsys(struct apply_ctx *a, const struct config_subsys *cs, unsigned int si)
{
	struct undo u = {.kind = UNDO_SUBSYS_DESTROY};
	struct nvmf_subsys *s;
	unsigned int i;
	int rc;

	errno = 0;
	s = nvmf_subsys_create(a->tgt, cs->nqn);
	if (!s) {
		int e = errno ? errno : ENOMEM;

		return aerr(a, -e, "subsystems[%u].nqn: cannot create subsystem \"%s\": %s", si,
			    cs->nqn, strerror(e));
	}
	u.subsys = s;
	rc = push_undo(a, &u);
	if (rc) {
		nvmf_subsys_destroy(s);
		return aerr(a, rc, "out of memory");
	}
	a->subsys_added++;
	/* Attributes are plain fields until the subsystem is exported. */
	if (cs->serial[0])
		snprintf(s->serial, sizeof(s->serial), "%s", cs->serial);
	if (cs->model[0])
		snprintf(s->model, sizeof(s->model), "%s", cs->model);
	if (cs->cntlid_min && cs->cntlid_max) { /* 0/0: models not from a file keep the default */
		s->cntlid_min = cs->cntlid_min;
		s->cntlid_max = cs->cntlid_max;
	}
	nvmf_subsys_set_allow_any_host(s, cs->allow_any_host);
	for (i = 0; i < cs->nallowed_hosts; i++) {
		rc = nvmf_subsys_add_host(s, cs->allowed_hosts[i]);
		if (rc)
			return aerr(a, rc, "subsystems[%u].allowed_hosts[%u] (%s): %s", si, i,
				    cs->allowed_hosts[i], strerror(-rc));
	}
	for (i = 0; i < cs->nnamespaces; i++) {
		if (!cs->namespaces[i].enable)
			continue;
		rc = add_ns(a, s, &cs->namespaces[i], si, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* Namespaces and hosts a kept subsystem gains (or whose definition changed). */
static int grow_subsys(struct apply_ctx *a, struct nvmf_subsys *s,
		       const struct config_subsys *old, const struct config_subsys *cs,
		       unsigned int si)
{
	unsigned int i;
	int rc;

	for (i = 0; i < cs->nallowed_hosts; i++) {
		struct undo u = {.kind = UNDO_HOST_REMOVE, .subsys = s};

		if (host_listed(old, cs->allowed_hosts[i]))
			continue;
		rc = nvmf_subsys_add_host(s, cs->allowed_hosts[i]);
		if (rc)
			return aerr(a, rc, "subsystems[%u].allowed_hosts[%u] (%s): %s", si, i,
				    cs->allowed_hosts[i], strerror(-rc));
		u.str = cs->allowed_hosts[i];
		if (push_undo(a, &u)) {
			nvmf_subsys_remove_host(s, u.str);
			return aerr(a, -ENOMEM, "out of memory");
		}
	}
	for (i = 0; i < cs->nnamespaces; i++) {
		const struct config_ns *ns = &cs->namespaces[i];
		const struct config_ns *was = config_find_ns(old, ns->nsid);
		struct undo u = {.subsys = s, .nsid = ns->nsid};

		if (was && ns_same(was, ns)) {
			/* limits change in place; not undone if a later step fails */
			if (ns->enable) {
				rc = apply_qos(a, s, ns, was, si, i);
				if (rc)
					return rc;
			}
			continue;
		}
		if (was && was->enable) {
			/* Replaced: the old one goes first, and comes back on failure. */
			u.kind = UNDO_NS_READD;
			u.ns = was;
			if (push_undo(a, &u))
				return aerr(a, -ENOMEM, "out of memory");
			nvmf_subsys_remove_ns(s, ns->nsid);
			a->ns_removed++;
		}
		if (!ns->enable)
			continue;
		u.kind = UNDO_NS_REMOVE;
		if (push_undo(a, &u))
			return aerr(a, -ENOMEM, "out of memory");
		rc = add_ns(a, s, ns, si, i);
		if (rc) {
			a->nundo--; /* nothing to remove */
			return rc;
		}
	}
	return 0;
}

/* Create, export and listen; 0 with *@out set, or -errno with @err set. */
static int open_port(struct apply_ctx *a, const struct config_port *cp, const char *what,
		     struct nvmf_port **out)
{
	struct nvmf_port_opts o = {
		.portid = cp->portid,
		.trtype = cp->addr.trtype,
		.adrfam = cp->addr.adrfam,
		.traddr = cp->addr.traddr,
		.trsvcid = cp->addr.trsvcid,
		.advertise = cp->advertise[0] ? cp->advertise : NULL,
		.in_capsule_size = cp->inline_data_size,
		.sectype = cp->addr.sectype,
		.treq = cp->addr.treq,
	};
	struct nvmf_port *p;
	char msg[512] = "";
	unsigned int i;
	int rc;

	p = nvmf_port_create(a->tgt, &o, msg, sizeof(msg));
	if (!p)
		return aerr(a, -EINVAL, "%s (portid %u, %s %s:%s): %s", what, cp->portid,
			    cp->addr.trtype, cp->addr.traddr, cp->addr.trsvcid,
			    msg[0] ? msg : "cannot create the port");
	for (i = 0; i < cp->nsubsystems; i++) {
		struct nvmf_subsys *s = nvmf_subsys_find(a->tgt, cp->subsystems[i]);

		rc = s ? nvmf_port_add_subsys(p, s) : -ENOENT;
		if (rc) {
			nvmf_port_destroy(p);
			return aerr(a, rc, "%s.subsystems[%u] (%s): cannot export: %s", what, i,
				    cp->subsystems[i], strerror(-rc));
		}
	}
	rc = nvmf_port_listen(p);
	if (rc) {
		nvmf_port_destroy(p);
		return aerr(a, rc, "%s (portid %u): cannot listen on %s %s:%s: %s", what,
			    cp->portid, cp->addr.trtype, cp->addr.traddr, cp->addr.trsvcid,
			    strerror(-rc));
	}
	*out = p;
	return 0;
}

/* ---- Referrals: one set for the whole target, keyed by address ------------------------------- */

static const struct config_referral *find_referral(const struct tgt_config *cfg,
						   const struct config_referral *r)
{
	unsigned int i, j;

	for (i = 0; i < cfg->nports; i++)
		for (j = 0; j < cfg->ports[i].nreferrals; j++) {
			const struct config_referral *x = &cfg->ports[i].referrals[j];

			if (x->enable && x->portid == r->portid && addr_same(&x->addr, &r->addr))
				return x;
		}
	return NULL;
}

/* The first enabled referral of @cfg equal to @r (so duplicates count once). */
static bool first_referral(const struct tgt_config *cfg, const struct config_referral *r)
{
	return find_referral(cfg, r) == r;
}

static int add_referral(struct apply_ctx *a, const struct config_referral *r)
{
	return nvmf_referral_add(a->tgt, r->portid, r->addr.trtype, r->addr.adrfam,
				 r->addr.traddr, r->addr.trsvcid);
}

/* Referrals that go (or change) are removed first: the core keys them by address. */
static int update_referrals(struct apply_ctx *a)
{
	const struct tgt_config *old = a->old, *cfg = a->new_cfg;
	unsigned int i, j;
	int rc;

	for (i = 0; i < old->nports; i++)
		for (j = 0; j < old->ports[i].nreferrals; j++) {
			const struct config_referral *r = &old->ports[i].referrals[j];
			struct undo u = {.kind = UNDO_REFERRAL_READD, .ref = r};

			if (!r->enable || !first_referral(old, r) || find_referral(cfg, r))
				continue;
			if (push_undo(a, &u))
				return aerr(a, -ENOMEM, "out of memory");
			nvmf_referral_remove(a->tgt, r->addr.traddr, r->addr.trsvcid);
		}
	for (i = 0; i < cfg->nports; i++)
		for (j = 0; j < cfg->ports[i].nreferrals; j++) {
			const struct config_referral *r = &cfg->ports[i].referrals[j];
			struct undo u = {.kind = UNDO_REFERRAL_REMOVE};

			if (!r->enable || !first_referral(cfg, r) || find_referral(old, r))
				continue;
			rc = add_referral(a, r);
			if (rc)
				return aerr(a, rc, "ports[%u].referrals[%u] (%s %s:%s): %s", i, j,
					    r->addr.trtype, r->addr.traddr, r->addr.trsvcid,
					    strerror(-rc));
			u.str = r->addr.traddr;
			u.str2 = r->addr.trsvcid;
			if (push_undo(a, &u)) {
				nvmf_referral_remove(a->tgt, u.str, u.str2);
				return aerr(a, -ENOMEM, "out of memory");
			}
		}
	return 0;
}

/* ---- The three phases ------------------------------------------------------------------------ */

static int check_live(struct apply_ctx *a)
{
	const struct tgt_config *old = a->old, *cfg = a->new_cfg;
	const char *oi = old->iscsi_json ? old->iscsi_json : "";
	const char *ni = cfg->iscsi_json ? cfg->iscsi_json : "";
	unsigned int i;

	for (i = 0; i < cfg->nports; i++) {
		const struct config_port *p = &cfg->ports[i];
		const struct config_port *was = config_find_port(old, p->portid);
		const char *key = NULL;

		if (!was)
			continue;
		if (!addr_same(&was->addr, &p->addr))
			key = "addr";
		else if (strcmp(was->advertise, p->advertise))
			key = "advertise";
		else if (was->inline_data_size != p->inline_data_size)
			key = "param.inline_data_size";
		if (key)
			return aerr(a, -EBUSY,
				    "ports[%u].%s: portid %u is running with a different value; "
				    "remove the port, or give the changed one a new portid",
				    i, key, p->portid);
	}
	for (i = 0; i < cfg->nsubsystems; i++) {
		const struct config_subsys *s = &cfg->subsystems[i];
		const struct config_subsys *was = config_find_subsys(old, s->nqn);
		const char *key = NULL;

		if (!was)
			continue;
		if (strcmp(was->serial, s->serial))
			key = "serial";
		else if (strcmp(was->model, s->model))
			key = "model";
		else if (was->cntlid_min != s->cntlid_min || was->cntlid_max != s->cntlid_max)
			key = "cntlid_min/cntlid_max";
		if (key)
			return aerr(a, -EBUSY,
				    "subsystems[%u].attr.%s: cannot change while %s is exported "
				    "(hosts cache it); restart the target to change it",
				    i, key, s->nqn);
		if (!nvmf_subsys_find(a->tgt, s->nqn))
			return aerr(a, -ENOENT, "subsystems[%u]: %s is not running", i, s->nqn);
	}
	for (i = 0; i < cfg->nports; i++)
		if (config_find_port(old, cfg->ports[i].portid) &&
		    !nvmf_port_find(a->tgt, cfg->ports[i].portid))
			return aerr(a, -ENOENT, "ports[%u]: portid %u is not running", i,
				    cfg->ports[i].portid);
	/* targets' initiators and CHAP, and the options, change live (iscsi_config_reload) */
	if (a->old != &empty_config && strcmp(oi, ni)) {
		char ierr[512];
		int rc = cfg_iscsi_check_live(old->iscsi_json, cfg->iscsi_json, ierr, sizeof(ierr));

		if (rc)
			return aerr(a, rc, "%s", ierr);
	}
	return 0;
}

static void close_discovery_ports(struct nvmf_tgt *tgt)
{
	struct nvmf_port *p, *found;

	do {
		found = NULL;
		pthread_mutex_lock(&tgt->lock);
		TAILQ_FOREACH(p, &tgt->ports, link)
			if (p->discovery_only) {
				found = p;
				break;
			}
		pthread_mutex_unlock(&tgt->lock);
		if (found)
			nvmf_port_destroy(found);
	} while (found);
}

static int grow(struct apply_ctx *a)
{
	const struct tgt_config *old = a->old, *cfg = a->new_cfg;
	char what[64];
	unsigned int i, j;
	int rc;

	/* A configured port on 8009 takes precedence over the built-in discovery listeners:
	 * close them all, config_add_default_discovery_ports() reopens what is still due. */
	for (i = 0; i < cfg->nports; i++)
		if (!config_find_port(old, cfg->ports[i].portid) &&
		    !strcmp(cfg->ports[i].addr.trsvcid, CONFIG_DISCOVERY_TRSVCID)) {
			close_discovery_ports(a->tgt);
			break;
		}

	/* Ports that go away close first, so that their address is free for new ones. */
	for (i = 0; i < old->nports; i++) {
		const struct config_port *cp = &old->ports[i];
		struct undo u = {.kind = UNDO_PORT_RECREATE, .cport = cp};
		struct nvmf_port *p;

		if (config_find_port(cfg, cp->portid))
			continue;
		p = nvmf_port_find(a->tgt, cp->portid);
		if (!p)
			continue;
		if (push_undo(a, &u))
			return aerr(a, -ENOMEM, "out of memory");
		nvmf_port_destroy(p);
		a->ports_removed++;
	}

	for (i = 0; i < cfg->nsubsystems; i++) {
		const struct config_subsys *cs = &cfg->subsystems[i];
		const struct config_subsys *was = config_find_subsys(old, cs->nqn);

		rc = was ? grow_subsys(a, nvmf_subsys_find(a->tgt, cs->nqn), was, cs, i)
			 : create_subsys(a, cs, i);
		if (rc)
			return rc;
	}

	for (i = 0; i < cfg->nports; i++) {
		const struct config_port *cp = &cfg->ports[i];
		const struct config_port *was = config_find_port(old, cp->portid);
		struct undo u = {0};
		struct nvmf_port *p = NULL;

		snprintf(what, sizeof(what), "ports[%u]", i);
		if (!was) {
			rc = open_port(a, cp, what, &p);
			if (rc)
				return rc;
			u.kind = UNDO_PORT_DESTROY;
			u.port = p;
			if (push_undo(a, &u)) {
				nvmf_port_destroy(p);
				return aerr(a, -ENOMEM, "out of memory");
			}
			a->ports_added++;
			continue;
		}
		p = nvmf_port_find(a->tgt, cp->portid);
		for (j = 0; j < cp->nsubsystems; j++) {
			struct nvmf_subsys *s;

			if (port_exports(was, cp->subsystems[j]))
				continue;
			s = nvmf_subsys_find(a->tgt, cp->subsystems[j]);
			rc = s ? nvmf_port_add_subsys(p, s) : -ENOENT;
			if (rc)
				return aerr(a, rc,
					    "ports[%u].subsystems[%u] (%s): cannot export: %s", i,
					    j, cp->subsystems[j], strerror(-rc));
			u.kind = UNDO_PORT_UNEXPORT;
			u.port = p;
			u.subsys = s;
			if (push_undo(a, &u)) {
				nvmf_port_remove_subsys(p, s);
				return aerr(a, -ENOMEM, "out of memory");
			}
		}
	}
	return update_referrals(a);
}

/* The hosts' DH-HMAC-CHAP settings: the target's whole table replaced at once (the hosts
 * whose settings changed lose their live controllers in shrink(), revoke_rekeyed_hosts). */
static int apply_host_keys(struct apply_ctx *a)
{
	const struct tgt_config *cfg = a->new_cfg;
	struct nvmf_host_dhchap *v = NULL;
	char why[400];
	int rc;

	if (cfg->nhost_keys && !(v = calloc(cfg->nhost_keys, sizeof(*v))))
		return aerr(a, -ENOMEM, "out of memory");
	for (unsigned int i = 0; i < cfg->nhost_keys; i++) {
		const struct config_host_key *k = &cfg->host_keys[i];

		v[i] = (struct nvmf_host_dhchap){ .hostnqn = k->nqn,
						  .key = k->key,
						  .ctrl_key = k->ctrl_key,
						  .hash = k->hash,
						  .dhgroup = k->dhgroup };
	}
	rc = nvmf_tgt_set_host_keys(a->tgt, v, cfg->nhost_keys, why, sizeof(why));
	free(v);
	if (rc < 0)
		return aerr(a, rc, "hosts: %s", why);
	return 0;
}

static void rollback(struct apply_ctx *a)
{
	char what[32];

	while (a->nundo) {
		struct undo *u = &a->undo[--a->nundo];
		struct nvmf_ns_opts o;
		char msg[256];

		switch (u->kind) {
		case UNDO_SUBSYS_DESTROY:
			nvmf_subsys_destroy(u->subsys);
			break;
		case UNDO_NS_REMOVE:
			nvmf_subsys_remove_ns(u->subsys, u->nsid);
			break;
		case UNDO_NS_READD:
			ns_opts(u->ns, &o);
			if (nvmf_subsys_add_ns(u->subsys, &o, msg, sizeof(msg)) < 0)
				log_err("config: could not restore namespace %u of %s: %s", u->nsid,
					u->subsys->nqn, msg);
			break;
		case UNDO_HOST_REMOVE:
			nvmf_subsys_remove_host(u->subsys, u->str);
			break;
		case UNDO_PORT_DESTROY:
			nvmf_port_destroy(u->port);
			break;
		case UNDO_PORT_RECREATE: {
			/* Report through the log: @err already holds the original failure. */
			struct apply_ctx tmp = *a;
			char err[512];

			struct nvmf_port *p;

			tmp.err = err;
			tmp.errlen = sizeof(err);
			snprintf(what, sizeof(what), "portid %u", u->cport->portid);
			if (open_port(&tmp, u->cport, what, &p))
				log_err("%s", err);
			break;
		}
		case UNDO_PORT_UNEXPORT:
			nvmf_port_remove_subsys(u->port, u->subsys);
			break;
		case UNDO_REFERRAL_REMOVE:
			nvmf_referral_remove(a->tgt, u->str, u->str2);
			break;
		case UNDO_REFERRAL_READD:
			if (add_referral(a, u->ref))
				log_err("config: could not restore referral %s:%s",
					u->ref->addr.traddr, u->ref->addr.trsvcid);
			break;
		}
	}
}

/* End @nqn's controllers on the subsystems that stay, so that it connects (and
 * authenticates, or makes its TLS handshake) again with what is configured now. */
static void revoke_host(struct apply_ctx *a, const char *nqn, const char *why)
{
	unsigned int n = 0;

	for (unsigned int j = 0; j < a->new_cfg->nsubsystems; j++) {
		const char *snqn = a->new_cfg->subsystems[j].nqn;
		struct nvmf_subsys *s;
		int k;

		if (!config_find_subsys(a->old, snqn))
			continue;
		s = nvmf_subsys_find(a->tgt, snqn);
		k = s ? nvmf_subsys_disconnect_host(s, nqn) : 0;
		n += k > 0 ? (unsigned int)k : 0;
	}
	if (n)
		log_notice("host %s: %s changed: %u controller%s ended", nqn, why, n,
			   n == 1 ? "" : "s");
	a->ctrlrs_revoked += n;
}

/* Hosts whose authentication keys changed, in @set's host keys. */
static void revoke_rekeyed_in(struct apply_ctx *a, const struct tgt_config *set)
{
	for (unsigned int i = 0; i < set->nhost_keys; i++) {
		const char *nqn = set->host_keys[i].nqn;

		/* listed in both: count it once, from the new model */
		if (set == a->old && config_find_host_key(a->new_cfg, nqn))
			continue;
		if (config_host_keys_changed(a->old, a->new_cfg, nqn))
			revoke_host(a, nqn, "authentication keys");
	}
	for (unsigned int i = 0; i < set->nhost_psks; i++) {
		const char *nqn = set->host_psks[i].nqn;

		if (set == a->old && config_find_host_psk(a->new_cfg, nqn))
			continue;
		if (config_host_psk_changed(a->old, a->new_cfg, nqn))
			revoke_host(a, nqn, "TLS PSK");
	}
}

static void revoke_rekeyed_hosts(struct apply_ctx *a)
{
	if (a->old->nhost_keys || a->new_cfg->nhost_keys || a->old->nhost_psks ||
	    a->new_cfg->nhost_psks) {
		revoke_rekeyed_in(a, a->new_cfg);
		revoke_rekeyed_in(a, a->old);
	}
}

static void shrink(struct apply_ctx *a)
{
	const struct tgt_config *old = a->old, *cfg = a->new_cfg;
	unsigned int i, j;

	for (i = 0; i < cfg->nports; i++) {
		const struct config_port *cp = &cfg->ports[i];
		const struct config_port *was = config_find_port(old, cp->portid);
		struct nvmf_port *p;

		if (!was)
			continue;
		p = nvmf_port_find(a->tgt, cp->portid);
		for (j = 0; j < was->nsubsystems; j++) {
			struct nvmf_subsys *s;

			if (port_exports(cp, was->subsystems[j]))
				continue;
			s = nvmf_subsys_find(a->tgt, was->subsystems[j]);
			if (p && s)
				nvmf_port_remove_subsys(p, s);
		}
	}

	for (i = 0; i < cfg->nsubsystems; i++) {
		const struct config_subsys *cs = &cfg->subsystems[i];
		const struct config_subsys *was = config_find_subsys(old, cs->nqn);
		struct nvmf_subsys *s;

		if (!was)
			continue;
		s = nvmf_subsys_find(a->tgt, cs->nqn);
		for (j = 0; j < was->nnamespaces; j++) {
			const struct config_ns *ns = &was->namespaces[j];

			/* Changed ones were replaced while growing. */
			if (ns->enable && !config_find_ns(cs, ns->nsid)) {
				nvmf_subsys_remove_ns(s, ns->nsid);
				a->ns_removed++;
			}
		}
		for (j = 0; j < was->nallowed_hosts; j++)
			if (!host_listed(cs, was->allowed_hosts[j]))
				nvmf_subsys_remove_host(s, was->allowed_hosts[j]);
		if (was->allow_any_host != cs->allow_any_host)
			nvmf_subsys_set_allow_any_host(s, cs->allow_any_host);
		/* Revocation bites: a host no longer allowed loses its live controllers now,
		 * not only its next Connect. */
		a->ctrlrs_revoked += nvmf_subsys_revoke(s);
	}
	revoke_rekeyed_hosts(a);

	for (i = 0; i < old->nsubsystems; i++) {
		struct nvmf_subsys *s;

		if (config_find_subsys(cfg, old->subsystems[i].nqn))
			continue;
		s = nvmf_subsys_find(a->tgt, old->subsystems[i].nqn);
		if (s) {
			nvmf_subsys_destroy(s);
			a->subsys_removed++;
		}
	}
}

/* ---- TLS PSKs: the hosts' keys onto the target (config_tls.c parses them) ---------------- */

int config_apply_psks(struct nvmf_tgt *tgt, const struct tgt_config *old,
		      const struct tgt_config *cfg, char *err, size_t errlen)
{
	int rc = 0;

	for (unsigned int i = 0; old && i < old->nhost_psks; i++)
		if (!config_find_host_psk(cfg, old->host_psks[i].nqn))
			nvmf_tgt_set_host_psk(tgt, old->host_psks[i].nqn, NULL);
	for (unsigned int i = 0; i < cfg->nhost_psks; i++) {
		struct nvme_tls_key key = { 0 };
		char perr[160];
		int r = nvme_tls_key_parse(cfg->host_psks[i].psk, &key, perr, sizeof(perr));

		if (!r)
			r = nvmf_tgt_set_host_psk(tgt, cfg->host_psks[i].nqn, &key);
		nvme_tls_key_clear(&key);
		if (r && !rc) {
			rc = r;
			snprintf(err, errlen, "TLS PSK of host %s not installed: %s",
				 cfg->host_psks[i].nqn, strerror(-r));
		}
	}
	return rc;
}

static int move(struct nvmf_tgt *tgt, const struct tgt_config *old, const struct tgt_config *cfg,
		char *err, size_t errlen, const char *verb)
{
	struct apply_ctx a = {.tgt = tgt, .old = old, .new_cfg = cfg, .err = err, .errlen = errlen};
	char derr[256];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	rc = check_live(&a);
	if (!rc && (rc = config_ana_check(tgt, old, cfg, err, errlen)))
		log_debug("%s", err);
	if (rc)
		return rc; /* nothing touched */
	rc = grow(&a);
	if (!rc)
		rc = apply_host_keys(&a);
	if (rc) {
		rollback(&a);
		free(a.undo);
		/* grow() may have closed them to make room for a configured 8009 port. */
		if (config_add_default_discovery_ports(tgt, derr, sizeof(derr)))
			log_warn("%s", derr);
		return rc;
	}
	free(a.undo);
	if (config_apply_psks(tgt, old, cfg, derr, sizeof(derr)))
		log_warn("%s", derr);
	shrink(&a);
	config_ana_apply(tgt, old, cfg);
	if (config_add_default_discovery_ports(tgt, derr, sizeof(derr)))
		log_warn("%s", derr);
	log_notice("%s %s: namespaces +%u -%u, subsystems +%u -%u, ports +%u -%u%s", verb,
		   cfg->path[0] ? cfg->path : "configuration", a.ns_added, a.ns_removed,
		   a.subsys_added, a.subsys_removed, a.ports_added, a.ports_removed,
		   a.ctrlrs_revoked ? ", controllers of revoked hosts ended" : "");
	return 0;
}

int config_apply(struct nvmf_tgt *tgt, const struct tgt_config *cfg, char *err, size_t errlen)
{
	return move(tgt, &empty_config, cfg, err, errlen, "applied");
}

int config_reload(struct nvmf_tgt *tgt, const struct tgt_config *old,
		  const struct tgt_config *new_cfg, char *err, size_t errlen)
{
	return move(tgt, old ? old : &empty_config, new_cfg, err, errlen, "reloaded");
}

int config_reload_file(struct nvmf_tgt *tgt, struct tgt_config **cur, char *err, size_t errlen)
{
	struct tgt_config *next = NULL;
	int rc;

	rc = config_load((*cur)->path, &next, err, errlen);
	if (rc)
		return rc;
	rc = config_reload(tgt, *cur, next, err, errlen);
	if (rc) {
		config_free(next);
		return rc;
	}
	config_free(*cur);
	*cur = next;
	return 0;
}

/* ---- Default discovery listeners (8009) ------------------------------------------------------ */

static bool is_wildcard(const char *traddr)
{
	return !strcmp(traddr, "0.0.0.0") || !strcmp(traddr, "::") || !traddr[0];
}

/* Does a listener at @b cover address @a (same family assumed)? */
static bool covers(const char *b, const char *a)
{
	return is_wildcard(b) || is_wildcard(a) || !strcmp(a, b);
}

struct disc_want {
	uint8_t adrfam;
	char traddr[256];
	char advertise[256];	/* what the ports there advertise (hosts behind NAT) */
	bool have;	/* a port already serves 8009 there */
};

static bool is_tcp_port(const struct nvmf_port *p)
{
	return p->ops && p->ops->trtype == NVMF_TRTYPE_TCP;
}

/* nvmeof-target -c FILE --discovery-port 0: no default discovery listeners at all. */
static bool g_default_discovery = true;

void config_set_default_discovery(bool on)
{
	g_default_discovery = on;
}

int config_add_default_discovery_ports(struct nvmf_tgt *tgt, char *err, size_t errlen)
{
	struct disc_want *want = NULL;
	struct nvmf_port **stale = NULL;
	unsigned int nwant = 0, nstale = 0, nports = 0, i, j;
	struct nvmf_port *p;
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!g_default_discovery)
		return 0;
	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(p, &tgt->ports, link)
		nports++;
	want = calloc(nports ? nports : 1, sizeof(*want));
	stale = calloc(nports ? nports : 1, sizeof(*stale));
	if (!want || !stale) {
		pthread_mutex_unlock(&tgt->lock);
		free(want);
		free(stale);
		if (err && errlen)
			snprintf(err, errlen, "default discovery listeners: out of memory");
		return -ENOMEM;
	}
	/* Addresses with a TCP port; a wildcard replaces the specific ones of its family. */
	TAILQ_FOREACH(p, &tgt->ports, link) {
		if (p->discovery_only || !is_tcp_port(p))
			continue;
		for (j = 0; j < nwant; j++)
			if (want[j].adrfam == p->adrfam && covers(want[j].traddr, p->traddr))
				break;
		if (j < nwant) {
			if (is_wildcard(p->traddr))
				snprintf(want[j].traddr, sizeof(want[j].traddr), "%s", p->traddr);
			if (!want[j].advertise[0])
				snprintf(want[j].advertise, sizeof(want[j].advertise), "%s",
					 p->advertise);
			continue;
		}
		want[nwant].adrfam = p->adrfam;
		snprintf(want[nwant].traddr, sizeof(want[nwant].traddr), "%s", p->traddr);
		snprintf(want[nwant].advertise, sizeof(want[nwant].advertise), "%s", p->advertise);
		nwant++;
	}
	/* Already served on 8009 by a configured port: nothing to add there. */
	TAILQ_FOREACH(p, &tgt->ports, link) {
		if (p->discovery_only || !is_tcp_port(p) ||
		    strcmp(p->trsvcid, CONFIG_DISCOVERY_TRSVCID))
			continue;
		for (j = 0; j < nwant; j++)
			if (want[j].adrfam == p->adrfam && covers(p->traddr, want[j].traddr))
				want[j].have = true;
	}
	/* Our listeners: keep those still wanted, drop the rest. */
	TAILQ_FOREACH(p, &tgt->ports, link) {
		if (!p->discovery_only)
			continue;
		for (j = 0; j < nwant; j++)
			if (!want[j].have && want[j].adrfam == p->adrfam &&
			    !strcmp(want[j].traddr, p->traddr))
				break;
		if (j < nwant)
			want[j].have = true;
		else
			stale[nstale++] = p;
	}
	pthread_mutex_unlock(&tgt->lock);

	for (i = 0; i < nstale; i++) {
		log_info("closing discovery listener %s:%s", stale[i]->traddr, stale[i]->trsvcid);
		nvmf_port_destroy(stale[i]);
	}
	for (i = 0; i < nwant; i++) {
		struct nvmf_port_opts o = {
			.trtype = "tcp",
			.adrfam = want[i].adrfam == NVMF_ADRFAM_IPV6 ? "ipv6" : "ipv4",
			.traddr = want[i].traddr,
			.trsvcid = CONFIG_DISCOVERY_TRSVCID,
			.advertise = want[i].advertise[0] ? want[i].advertise : NULL,
			.discovery_only = true,
		};
		char msg[256] = "";
		unsigned int id;

		if (want[i].have)
			continue;
		for (id = 0xffff; id >= CONFIG_PORTID_RESERVED; id--)
			if (!nvmf_port_find(tgt, (uint16_t)id))
				break;
		if (id < CONFIG_PORTID_RESERVED) {
			if (err && errlen)
				snprintf(err, errlen,
					 "default discovery listeners: no free portid");
			rc = -ENOSPC;
			break;
		}
		o.portid = (uint16_t)id;
		p = nvmf_port_create(tgt, &o, msg, sizeof(msg));
		if (!p) {
			log_warn("no discovery listener on %s:%s: %s", o.traddr, o.trsvcid,
				 msg[0] ? msg : "cannot create the port");
			continue;
		}
		rc = nvmf_port_listen(p);
		if (rc) {
			log_warn("no discovery listener on %s:%s: %s", o.traddr, o.trsvcid,
				 strerror(-rc));
			nvmf_port_destroy(p);
			rc = 0;
			continue;
		}
		log_info("discovery listener on %s:%s (portid %u)", o.traddr, o.trsvcid, id);
	}
	free(want);
	free(stale);
	return rc;
}
