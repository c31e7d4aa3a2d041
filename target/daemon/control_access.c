/* SPDX-License-Identifier: MIT */
/* Control methods for who may connect and where: hosts of a subsystem (with their
 * DH-HMAC-CHAP keys) and listeners. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/uri.h"
#include "config/config_file.h"
#include "control.h"
#include "control_internal.h"
#include "core/nvmf.h"

int m_add_host(struct control_ctx *ctx, json_object *params, json_object **result,
	       struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], host[NVME_NQN_FIELD], what[600];
	struct config_host_key k = { 0 };
	struct config_subsys *cs;
	struct tgt_config *next;
	int rc;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_str(params, "host", true, host, sizeof(host), e) < 0 ||
	    p_str(params, "dhchap_key", false, k.key, sizeof(k.key), e) < 0 ||
	    p_str(params, "dhchap_ctrlr_key", false, k.ctrl_key, sizeof(k.ctrl_key), e) < 0)
		goto fail;
	/* Checked fully when the reload applies them (the core refuses a bad secret). */
	if ((k.key[0] && strncmp(k.key, "DHHC-1:", 7)) ||
	    (k.ctrl_key[0] && strncmp(k.ctrl_key, "DHHC-1:", 7))) {
		rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"%s\": not a DHHC-1 secret",
			 k.key[0] && strncmp(k.key, "DHHC-1:", 7) ? "dhchap_key"
								  : "dhchap_ctrlr_key");
		goto fail;
	}
	if (k.ctrl_key[0] && !k.key[0]) {
		rpc_fail(e, RPC_INVALID_PARAMS,
			 "parameter \"dhchap_ctrlr_key\": needs "
			 "\"dhchap_key\" as well");
		goto fail;
	}
	if (!ctx->tgt)
		goto ok;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		goto fail;
	if (cs->allow_any_host) {
		rpc_fail(e, -EINVAL,
			 "parameter \"nqn\": %s allows any host; a host list would "
			 "not restrict it",
			 nqn);
		goto fail;
	}
	if (host_in_list(cs->allowed_hosts, cs->nallowed_hosts, host) && !k.key[0]) {
		rpc_fail(e, -EEXIST, "parameter \"host\": %s is already allowed on %s", host, nqn);
		goto fail;
	}
	if (!(next = model_begin(ctx, e)))
		goto fail;
	cs = &next->subsystems[subsys_index(next, nqn)];
	rc = 0;
	if (!host_in_list(next->hosts, next->nhosts, host))
		rc = push_nqn(&next->hosts, &next->nhosts, host);
	if (!rc && !host_in_list(cs->allowed_hosts, cs->nallowed_hosts, host))
		rc = push_nqn(&cs->allowed_hosts, &cs->nallowed_hosts, host);
	if (!rc && k.key[0]) {
		struct config_host_key *hk =
			(struct config_host_key *)config_find_host_key(next, host);

		if (!hk) {
			hk = realloc(next->host_keys, (next->nhost_keys + 1) * sizeof(*hk));
			if (hk) {
				next->host_keys = hk;
				hk = &hk[next->nhost_keys++];
			} else {
				rc = -ENOMEM;
			}
		}
		if (hk) {
			snprintf(k.nqn, sizeof(k.nqn), "%s", host);
			*hk = k;
		}
	}
	if (rc) {
		config_free(next);
		rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		goto fail;
	}
	snprintf(what, sizeof(what), "%s: host %s allowed%s", nqn, host,
		 k.key[0] ? " (with DH-HMAC-CHAP keys)" : "");
	if (model_commit(ctx, next, what, e))
		goto fail;
ok:
	explicit_bzero(&k, sizeof(k));
	*result = json_object_new_boolean(true);
	return 0;
fail:
	explicit_bzero(&k, sizeof(k));
	return -1;
}

struct host_count {
	const char *hostnqn;
	int n;
};

static void count_host_ctrlr(const struct nvmf_ctrlr_info *ci, void *arg)
{
	struct host_count *hc = arg;

	if (!ci->local && !strcmp(ci->hostnqn, hc->hostnqn))
		hc->n++;
}

int m_remove_host(struct control_ctx *ctx, json_object *params, json_object **result,
		  struct rpc_err *e)
{
	struct host_count hc = { 0 };
	char nqn[NVME_NQN_FIELD], host[NVME_NQN_FIELD], what[600];
	struct config_subsys *cs;
	struct tgt_config *next;
	struct nvmf_subsys *s;
	json_object *r;
	int n = 0;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_str(params, "host", true, host, sizeof(host), e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		return -1;
	if (!host_in_list(cs->allowed_hosts, cs->nallowed_hosts, host))
		return rpc_fail(e, -ENOENT, "parameter \"host\": %s is not allowed on %s", host,
				nqn);
	if (!(next = model_begin(ctx, e)))
		return -1;
	cs = &next->subsystems[subsys_index(next, nqn)];
	drop_nqn(cs->allowed_hosts, &cs->nallowed_hosts, host);
	drop_unused_host(next, host);
	snprintf(what, sizeof(what), "%s: host %s no longer allowed", nqn, host);
	/* Revocation: its next Connect is refused, and its live controllers end now (the
	 * reload ends those of hosts no longer allowed; any still there are ended here). */
	hc.hostnqn = host;
	nvmf_tgt_list_ctrlrs(ctx->tgt, nqn, count_host_ctrlr, &hc);
	if (model_commit(ctx, next, what, e))
		return -1;
	s = nvmf_subsys_find(ctx->tgt, nqn);
	if (s)
		nvmf_subsys_disconnect_host(s, host);
	n = hc.n;
	r = json_object_new_object();
	json_object_object_add(r, "disconnected_controllers", json_object_new_int(n));
	*result = r;
	return 0;
}

/* The port of @cfg listening on @u's address, or -1. */
static int port_for(const struct tgt_config *cfg, const struct uri_listen *u, const char *svc)
{
	for (unsigned int i = 0; i < cfg->nports; i++) {
		const struct config_addr *a = &cfg->ports[i].addr;

		if (!strcmp(a->trtype, uri_transport_name(u->transport)) &&
		    !strcmp(a->traddr, u->addr) && !strcmp(a->trsvcid, svc))
			return (int)i;
	}
	return -1;
}

static int parse_listener(json_object *params, char *nqn, struct uri_listen *u, char *svc,
			  char *uri, struct rpc_err *e)
{
	char uerr[256];

	if (p_str(params, "nqn", true, nqn, NVME_NQN_FIELD, e) < 0 ||
	    p_str(params, "uri", true, uri, 512, e) < 0)
		return -1;
	if (uri_parse_listen(uri, u, uerr, sizeof(uerr)))
		return rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"uri\": \"%s\": %s", uri, uerr);
	if (u->transport == URI_TRANSPORT_ISCSI)
		return rpc_fail(e, -EOPNOTSUPP,
				"parameter \"uri\": \"%s\": iSCSI portals are set "
				"in the configuration file's iscsi section and need a restart",
				uri);
	snprintf(svc, 16, "%u", u->port);
	return 0;
}

int m_add_listener(struct control_ctx *ctx, json_object *params, json_object **result,
		   struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], svc[16], uri[512], what[800];
	struct tgt_config *next;
	struct config_port *p;
	struct uri_listen u;
	int i;

	if (parse_listener(params, nqn, &u, svc, uri, e))
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!need_subsys(*ctx->cfg, nqn, e))
		return -1;
	if (!(next = model_begin(ctx, e)))
		return -1;
	/* Port 0 asks the kernel for a free port: always a new listener. */
	i = u.port ? port_for(next, &u, svc) : -1;
	if (i < 0) {
		uint16_t portid = 1;

		for (unsigned int j = 0; j < next->nports; j++)
			if (next->ports[j].portid >= portid &&
			    next->ports[j].portid < CONFIG_PORTID_RESERVED - 1)
				portid = (uint16_t)(next->ports[j].portid + 1);
		p = realloc(next->ports, (next->nports + 1) * sizeof(*p));
		if (!p) {
			config_free(next);
			return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		}
		next->ports = p;
		i = (int)next->nports++;
		p = &p[i];
		memset(p, 0, sizeof(*p));
		p->portid = portid;
		snprintf(p->addr.trtype, sizeof(p->addr.trtype), "%s",
			 uri_transport_name(u.transport));
		snprintf(p->addr.adrfam, sizeof(p->addr.adrfam), "%s", u.ipv6 ? "ipv6" : "ipv4");
		snprintf(p->addr.traddr, sizeof(p->addr.traddr), "%s", u.addr);
		snprintf(p->addr.trsvcid, sizeof(p->addr.trsvcid), "%s", svc);
		p->addr.treq = u.tls ? NVMF_TREQ_SECURE_REQUIRED : NVMF_TREQ_SECURE_NOT_SPECIFIED;
		p->addr.sectype = u.tls ? NVMF_TCP_SECTYPE_TLS13 : NVMF_TCP_SECTYPE_NONE;
	}
	p = &next->ports[i];
	/* tls:// needs a TLS port there; tcp:// a port that serves plain hosts. */
	if (u.tls ? p->addr.sectype != NVMF_TCP_SECTYPE_TLS13
		  : p->addr.treq == NVMF_TREQ_SECURE_REQUIRED) {
		unsigned int portid = p->portid; /* p goes with next */

		config_free(next);
		return rpc_fail(e, -EINVAL, "parameter \"uri\": port %u at that address %s", portid,
				u.tls ? "does not use TLS" : "requires TLS (use tls://)");
	}
	if (host_in_list(p->subsystems, p->nsubsystems, nqn)) {
		config_free(next);
		return rpc_fail(e, -EEXIST, "parameter \"uri\": %s already listens on %s", nqn,
				uri);
	}
	if (push_nqn(&p->subsystems, &p->nsubsystems, nqn)) {
		config_free(next);
		return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
	}
	snprintf(what, sizeof(what), "%s: listening on %s (port %u)", nqn, uri, p->portid);
	i = p->portid;
	if (model_commit(ctx, next, what, e))
		return -1;
	/* The model (and so save) records the port the kernel picked. */
	if (!u.port) {
		struct nvmf_port *np = nvmf_port_find(ctx->tgt, (uint16_t)i);

		for (unsigned int j = 0; np && j < (*ctx->cfg)->nports; j++)
			if ((*ctx->cfg)->ports[j].portid == i)
				snprintf((*ctx->cfg)->ports[j].addr.trsvcid,
					 sizeof((*ctx->cfg)->ports[j].addr.trsvcid), "%s",
					 np->trsvcid);
	}
	*result = json_object_new_object();
	json_object_object_add(*result, "portid", json_object_new_int(i));
	return 0;
}

int m_remove_listener(struct control_ctx *ctx, json_object *params, json_object **result,
		      struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], svc[16], uri[512], what[800];
	struct tgt_config *next;
	struct uri_listen u;
	int i;

	if (parse_listener(params, nqn, &u, svc, uri, e))
		return -1;
	if (!ctx->tgt)
		return 0;
	i = port_for(*ctx->cfg, &u, svc);
	if (i < 0 ||
	    !host_in_list((*ctx->cfg)->ports[i].subsystems, (*ctx->cfg)->ports[i].nsubsystems, nqn))
		return rpc_fail(e, -ENOENT, "parameter \"uri\": %s does not listen on %s", nqn,
				uri);
	if (!(next = model_begin(ctx, e)))
		return -1;
	drop_nqn(next->ports[i].subsystems, &next->ports[i].nsubsystems, nqn);
	drop_empty_ports(next);
	snprintf(what, sizeof(what), "%s: no longer listening on %s", nqn, uri);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_boolean(true);
	return 0;
}
