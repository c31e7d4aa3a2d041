/* SPDX-License-Identifier: MIT */
/* The "ports" section: listen addresses, port parameters, referrals and ANA groups. */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include "config_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "core/nvmf.h"

/* ---- Addresses ------------------------------------------------------------------------------- */

static const char *const port_addr_keys[] = { "trtype", "adrfam", "traddr", "trsvcid",
					      "treq",   "tsas",   NULL };
static const char *const referral_addr_keys[] = { "trtype", "adrfam", "traddr", "trsvcid",
						  "treq",   "tsas",   "portid", NULL };

static int parse_treq(struct pctx *c, const char *kp, const char *s, uint8_t *treq)
{
	if (!*s || !strcmp(s, "not specified"))
		*treq = NVMF_TREQ_SECURE_NOT_SPECIFIED;
	else if (!strcmp(s, "not required"))
		*treq = NVMF_TREQ_SECURE_NOT_REQUIRED;
	else if (!strcmp(s, "required"))
		*treq = NVMF_TREQ_SECURE_REQUIRED;
	else
		return cfg_err(c, -EINVAL, kp,
			       "\"%s\": expected \"not specified\", \"not required\" or "
			       "\"required\"",
			       s);
	return 0;
}

/*
 * An "addr" object. @listen: it is one of our ports (we must serve the transport);
 * otherwise a referral, which is only reported in the discovery log.
 */
static int parse_addr(struct pctx *c, json_object *obj, const char *kp, struct config_addr *a,
		      bool listen)
{
	char sub[KP_MAX], buf[64];
	int64_t port;
	int rc;

	rc = cfg_check_keys(c, obj, kp, listen ? port_addr_keys : referral_addr_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, obj, kp, "trtype", a->trtype, sizeof(a->trtype), REQ, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "trtype");
	if (!strcmp(a->trtype, "loop") || !strcmp(a->trtype, "fc")) {
		return cfg_err(c, -ENOTSUP, sub, "%s transport is not supported by nvmeof-target%s",
			       a->trtype, listen ? "" : " (referrals may name tcp or rdma ports)");
	} else if (!strcmp(a->trtype, "rdma")) {
#ifndef HAVE_RDMA
		if (listen)
			return cfg_err(c, -ENOTSUP, sub,
				       "rdma transport is not supported by this build of "
				       "nvmeof-target (built without libibverbs/librdmacm)");
#endif
	} else if (strcmp(a->trtype, "tcp")) {
		return cfg_err(c, -EINVAL, sub, "unknown transport \"%s\"", a->trtype);
	}

	rc = cfg_get_str(c, obj, kp, "adrfam", a->adrfam, sizeof(a->adrfam), OPT, false);
	if (rc < 0)
		return rc;
	rc = cfg_get_str(c, obj, kp, "traddr", a->traddr, sizeof(a->traddr), REQ, false);
	if (rc < 0)
		return rc;
	rc = cfg_get_str(c, obj, kp, "trsvcid", a->trsvcid, sizeof(a->trsvcid), OPT, true);
	if (rc < 0)
		return rc;
	buf[0] = '\0';
	rc = cfg_get_str(c, obj, kp, "treq", buf, sizeof(buf), OPT, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "treq");
	rc = parse_treq(c, sub, buf, &a->treq);
	if (rc)
		return rc;
	buf[0] = '\0';
	rc = cfg_get_str(c, obj, kp, "tsas", buf, sizeof(buf), OPT, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "tsas");
	rc = cfg_parse_tsas(c, sub, a->trtype, buf, &a->sectype);
	if (rc)
		return rc;
	if (listen && a->treq == NVMF_TREQ_SECURE_REQUIRED &&
	    a->sectype != NVMF_TCP_SECTYPE_TLS13) {
		cfg_kp_join(sub, kp, "treq");
		return cfg_err(c, -EINVAL, sub,
			       "\"required\" needs a secure channel: \"tsas\": \"tls1.3\"");
	}

	cfg_kp_join(sub, kp, "adrfam");
	if (strcmp(a->adrfam, "ipv4") && strcmp(a->adrfam, "ipv6"))
		return cfg_err(c, -EINVAL, sub, "\"%s\": expected \"ipv4\" or \"ipv6\"", a->adrfam);
	cfg_kp_join(sub, kp, "traddr");
	rc = cfg_check_ip(c, sub, a->adrfam, a->traddr);
	if (rc)
		return rc;
	cfg_kp_join(sub, kp, "trsvcid");
	if (!a->trsvcid[0])
		return cfg_err(c, -EINVAL, sub, "missing (a TCP port number)");
	if (!cfg_parse_dec(a->trsvcid, &port) || port < 1 || port > 65535)
		return cfg_err(c, -EINVAL, sub, "\"%s\": expected a port number 1..65535",
			       a->trsvcid);
	snprintf(a->trsvcid, sizeof(a->trsvcid), "%d", (int)port);
	return 0;
}

/* ---- Ports ----------------------------------------------------------------------------------- */

static const char *const port_keys[] = { "portid",    "addr",       "param",     "subsystems",
					 "referrals", "ana_groups", "advertise", NULL };
static const char *const param_keys[] = { "inline_data_size", "pi_enable", "max_queue_size", NULL };
static const char *const referral_keys[] = { "name", "addr", "enable", NULL };
static const char *const ana_group_keys[] = { "grpid", "ana", NULL };
static const char *const ana_keys[] = { "state", NULL };

static int parse_referral(struct pctx *c, json_object *obj, const char *kp,
			  struct config_referral *r)
{
	json_object *addr;
	char sub[KP_MAX];
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, obj, kp, referral_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, obj, kp, "name", r->name, sizeof(r->name), REQ, true);
	if (rc < 0)
		return rc;
	r->enable = true;
	rc = cfg_get_bool(c, obj, kp, "enable", &r->enable);
	if (rc < 0)
		return rc;
	rc = cfg_get_typed(c, obj, kp, "addr", json_type_object, REQ, &addr);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "addr");
	rc = parse_addr(c, addr, sub, &r->addr, false);
	if (rc)
		return rc;
	rc = cfg_get_int(c, addr, sub, "portid", 0, 65535, &v, OPT);
	if (rc < 0)
		return rc;
	r->portid = rc ? (uint16_t)v : 0;
	return 0;
}

/* nvmet's names (core/ana.h has the values). */
static const char *const ana_states[] = { "optimized",       "non-optimized", "inaccessible",
					  "persistent-loss", "change",        NULL };

static int parse_ana_group(struct pctx *c, json_object *obj, const char *kp,
			   struct config_ana_group *g)
{
	json_object *ana;
	char sub[KP_MAX];
	unsigned int st;
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, obj, kp, ana_group_keys);
	if (rc)
		return rc;
	rc = cfg_get_int(c, obj, kp, "grpid", 1, CONFIG_MAX_ANA_GROUPS, &v, REQ);
	if (rc < 0)
		return rc;
	g->grpid = (uint32_t)v;
	snprintf(g->state, sizeof(g->state), "optimized");
	rc = cfg_get_typed(c, obj, kp, "ana", json_type_object, OPT, &ana);
	if (rc <= 0)
		return rc;
	cfg_kp_join(sub, kp, "ana");
	rc = cfg_check_keys(c, ana, sub, ana_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, ana, sub, "state", g->state, sizeof(g->state), OPT, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, sub, "state");
	for (st = 0; ana_states[st] && strcmp(ana_states[st], g->state); st++)
		;
	if (!ana_states[st])
		return cfg_err(c, -EINVAL, sub,
			       "ANA state \"%s\": expected optimized, non-optimized, "
			       "inaccessible, persistent-loss or change",
			       g->state);
	return 0;
}

static int parse_port_param(struct pctx *c, json_object *param, const char *kp,
			    struct config_port *p)
{
	char sub[KP_MAX];
	bool pi = false;
	int64_t v;
	int rc;

	rc = cfg_check_keys(c, param, kp, param_keys);
	if (rc)
		return rc;
	/* configfs shows -1 for "transport default". */
	rc = cfg_get_int(c, param, kp, "inline_data_size", -1, CONFIG_MAX_INLINE, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && v > 0)
		p->inline_data_size = (uint32_t)v;
	rc = cfg_get_int(c, param, kp, "max_queue_size", -1, 65536, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && v > 0) {
		p->max_queue_size = (uint32_t)v;
		cfg_kp_join(sub, kp, "max_queue_size");
		rc = cfg_warn(c, sub,
			      "per-port queue size is not supported, the target-wide "
			      "limit applies");
		if (rc)
			return rc;
	}
	rc = cfg_get_bool(c, param, kp, "pi_enable", &pi);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "pi_enable");
	if (pi)
		return cfg_err(c, -ENOTSUP, sub,
			       "protection information is not supported by nvmeof-target");
	return 0;
}

int cfg_parse_port(struct pctx *c, json_object *obj, const char *kp, struct config_port *p)
{
	json_object *addr, *param, *arr;
	void *list;
	char sub[KP_MAX], item[KP_MAX];
	unsigned int i, n;
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, obj, kp, port_keys);
	if (rc)
		return rc;
	rc = cfg_get_int(c, obj, kp, "portid", 0, 65535, &v, REQ);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "portid");
	if (v >= CONFIG_PORTID_RESERVED)
		return cfg_err(c, -EINVAL, sub,
			       "portids %u and above are reserved for the built-in discovery "
			       "listeners",
			       CONFIG_PORTID_RESERVED);
	p->portid = (uint16_t)v;

	rc = cfg_get_typed(c, obj, kp, "addr", json_type_object, REQ, &addr);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "addr");
	rc = parse_addr(c, addr, sub, &p->addr, true);
	if (rc)
		return rc;

	rc = cfg_get_str(c, obj, kp, "advertise", p->advertise, sizeof(p->advertise), OPT, false);
	if (rc < 0)
		return rc;
	if (rc && p->advertise[0]) {
		cfg_kp_join(sub, kp, "advertise");
		rc = cfg_check_ip(c, sub, p->addr.adrfam, p->advertise);
		if (rc)
			return rc;
	}

	rc = cfg_get_typed(c, obj, kp, "param", json_type_object, OPT, &param);
	if (rc < 0)
		return rc;
	if (rc) {
		cfg_kp_join(sub, kp, "param");
		rc = parse_port_param(c, param, sub, p);
		if (rc)
			return rc;
	}

	rc = cfg_get_array(c, obj, kp, "subsystems", "subsystems per port", 64,
			   sizeof(*p->subsystems), &arr, &n, &list);
	p->subsystems = list;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		cfg_kp_index(item, kp, "subsystems", i);
		rc = cfg_nqn_item(c, json_object_array_get_idx(arr, i), item, "subsystem",
				  p->subsystems[i]);
		if (rc)
			return rc;
		p->nsubsystems++;
	}

	rc = cfg_get_array(c, obj, kp, "referrals", "referrals", CONFIG_MAX_REFERRALS,
			   sizeof(*p->referrals), &arr, &n, &list);
	p->referrals = list;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		cfg_kp_index(item, kp, "referrals", i);
		rc = parse_referral(c, json_object_array_get_idx(arr, i), item, &p->referrals[i]);
		if (rc)
			return rc;
		p->nreferrals++;
	}

	rc = cfg_get_array(c, obj, kp, "ana_groups", "ANA groups", CONFIG_MAX_ANA_GROUPS,
			   sizeof(*p->ana_groups), &arr, &n, &list);
	p->ana_groups = list;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		unsigned int j;

		cfg_kp_index(item, kp, "ana_groups", i);
		rc = parse_ana_group(c, json_object_array_get_idx(arr, i), item, &p->ana_groups[i]);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (p->ana_groups[j].grpid == p->ana_groups[i].grpid) {
				cfg_kp_join(sub, item, "grpid");
				return cfg_err(c, -EINVAL, sub,
					       "duplicate ANA group %u (also ana_groups[%u])",
					       p->ana_groups[i].grpid, j);
			}
		p->nana_groups++;
	}
	return 0;
}
