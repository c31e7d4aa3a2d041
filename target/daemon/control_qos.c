/* SPDX-License-Identifier: MIT */
/* Control methods for QoS limits of a namespace and of one host on it:
 * nvmf_namespace_set_qos, nvmf_namespace_get_qos, nvmf_namespace_clear_qos. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "config/config_file.h"
#include "control.h"
#include "control_internal.h"
#include "core/ana.h"
#include "core/nvmf.h"

/* ---- QoS: a namespace's limits, and one host's on it ------------------------------------ */

static const char *const qos_names[6] = { "rw_ios_per_sec",   "r_ios_per_sec",
					  "w_ios_per_sec",    "rw_mbytes_per_sec",
					  "r_mbytes_per_sec", "w_mbytes_per_sec" };

static void limits_to_v(const struct nvmf_qos_limits *l, uint64_t v[6])
{
	v[0] = l->rw_ios_per_sec, v[1] = l->r_ios_per_sec, v[2] = l->w_ios_per_sec;
	v[3] = l->rw_mbytes_per_sec, v[4] = l->r_mbytes_per_sec, v[5] = l->w_mbytes_per_sec;
}

static void v_to_limits(const uint64_t v[6], struct nvmf_qos_limits *l)
{
	l->rw_ios_per_sec = v[0], l->r_ios_per_sec = v[1], l->w_ios_per_sec = v[2];
	l->rw_mbytes_per_sec = v[3], l->r_mbytes_per_sec = v[4], l->w_mbytes_per_sec = v[5];
}

static json_object *limits_json(const struct nvmf_qos_limits *l)
{
	json_object *o = json_object_new_object();
	uint64_t v[6];

	limits_to_v(l, v);
	for (unsigned int i = 0; i < 6; i++)
		json_object_object_add(o, qos_names[i], json_object_new_int64((int64_t)v[i]));
	return o;
}

/* The namespace @nsid of @nqn in the model and the target, or an error. */
static int qos_ns(struct control_ctx *ctx, json_object *params, char *nqn, uint64_t *nsid,
		  struct config_ns **cns, struct nvmf_subsys **s, struct rpc_err *e)
{
	struct config_subsys *cs;

	if (p_str(params, "nqn", true, nqn, NVME_NQN_FIELD, e) < 0 ||
	    p_uint(params, "nsid", true, 1, NVMF_MAX_NAMESPACES, nsid, e) < 0)
		return -1;
	if (!ctx->tgt)
		return 1;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		return -1;
	*cns = NULL;
	for (unsigned int i = 0; i < cs->nnamespaces; i++)
		if (cs->namespaces[i].nsid == *nsid)
			*cns = &cs->namespaces[i];
	*s = nvmf_subsys_find(ctx->tgt, nqn);
	if (!*cns || !*s)
		return rpc_fail(e, -ENOENT, "parameter \"nsid\": %s has no namespace %llu", nqn,
				(unsigned long long)*nsid);
	return 0;
}

/* Where the model keeps @host's limits on @q (added when @add); NULL when absent/full. */
static struct config_host_qos *model_host_qos(struct config_qos *q, const char *host, bool add)
{
	for (unsigned int i = 0; i < q->nhosts; i++)
		if (!strcmp(q->hosts[i].host, host))
			return &q->hosts[i];
	if (!add || q->nhosts == CONFIG_QOS_HOSTS)
		return NULL;
	memset(&q->hosts[q->nhosts], 0, sizeof(q->hosts[0]));
	snprintf(q->hosts[q->nhosts].host, NVME_NQN_FIELD, "%s", host);
	return &q->hosts[q->nhosts++];
}

static void model_host_drop(struct config_qos *q, struct config_host_qos *h)
{
	unsigned int i = (unsigned int)(h - q->hosts);

	memmove(&q->hosts[i], &q->hosts[i + 1], (q->nhosts - i - 1) * sizeof(q->hosts[0]));
	memset(&q->hosts[--q->nhosts], 0, sizeof(q->hosts[0]));
}

/* nvmf_namespace_set_qos {nqn, nsid, [host], limits...}: the limits given replace the
 * current ones (SPDK's bdev_set_qos_limit), the others stay; all zero remove them.
 * nvmf_namespace_clear_qos {nqn, nsid, [host]}: all of them off. */
static int qos_change(struct control_ctx *ctx, json_object *params, json_object **result,
		      struct rpc_err *e, bool clear)
{
	char nqn[NVME_NQN_FIELD], host[NVME_NQN_FIELD] = "";
	struct config_host_qos *mh = NULL;
	struct nvmf_qos_limits l;
	struct config_ns *cns = NULL;
	struct nvmf_subsys *s = NULL;
	uint64_t nsid, v[6], given[6];
	bool any_given = false, any = false, existed = false;
	int rc, hrc;

	rc = qos_ns(ctx, params, nqn, &nsid, &cns, &s, e);
	if (rc < 0 || (hrc = p_str(params, "host", false, host, sizeof(host), e)) < 0)
		return -1;
	for (unsigned int i = 0; i < 6 && !clear; i++) {
		json_object *x;

		given[i] = UINT64_MAX;
		if (params && json_object_object_get_ex(params, qos_names[i], &x)) {
			if (p_uint(params, qos_names[i], true, 0, 100000000, &given[i], e) < 0)
				return -1;
			any_given = true;
		}
	}
	if (!clear && !any_given)
		return rpc_fail(e, RPC_INVALID_PARAMS, "no limit given (%s, %s, ...)", qos_names[0],
				qos_names[3]);
	if (rc) /* parse-only */
		return 0;
	existed = hrc && model_host_qos(&cns->qos, host, false);
	if (hrc && !clear && !(mh = model_host_qos(&cns->qos, host, true)))
		return rpc_fail(e, -ENOSPC,
				"parameter \"host\": namespace %llu already limits %u hosts, the "
				"most a configuration keeps",
				(unsigned long long)nsid, CONFIG_QOS_HOSTS);
	if (hrc && clear)
		mh = model_host_qos(&cns->qos, host, false);
	rc = hrc ? nvmf_ns_get_host_qos(s, (uint32_t)nsid, host, &l)
		 : nvmf_ns_get_qos(s, (uint32_t)nsid, &l);
	if (rc)
		return rpc_fail(e, rc, "namespace %llu: %s", (unsigned long long)nsid,
				strerror(-rc));
	limits_to_v(&l, v);
	for (unsigned int i = 0; i < 6; i++) {
		v[i] = clear ? 0 : given[i] != UINT64_MAX ? given[i] : v[i];
		any |= v[i] != 0;
	}
	v_to_limits(v, &l);
	rc = hrc ? nvmf_ns_set_host_qos(s, (uint32_t)nsid, host, &l)
		 : nvmf_ns_set_qos(s, (uint32_t)nsid, &l);
	if (rc) {
		if (mh && !existed)
			model_host_drop(&cns->qos, mh);
		return rpc_fail(e, rc, "namespace %llu%s%s: %s", (unsigned long long)nsid,
				hrc ? ", host " : "", host, strerror(-rc));
	}
	if (mh) {
		uint64_t *f[6] = { &mh->rw_ios_per_sec,   &mh->r_ios_per_sec,
				   &mh->w_ios_per_sec,    &mh->rw_mbytes_per_sec,
				   &mh->r_mbytes_per_sec, &mh->w_mbytes_per_sec };

		for (unsigned int i = 0; i < 6; i++)
			*f[i] = v[i];
		if (!any)
			model_host_drop(&cns->qos, mh);
	} else if (!hrc) {
		cns->qos.rw_ios_per_sec = v[0], cns->qos.r_ios_per_sec = v[1];
		cns->qos.w_ios_per_sec = v[2], cns->qos.rw_mbytes_per_sec = v[3];
		cns->qos.r_mbytes_per_sec = v[4], cns->qos.w_mbytes_per_sec = v[5];
	}
	ctx->dirty = true;
	ctx->changes++;
	log_notice("control: QoS of %s namespace %llu%s%s %s", nqn, (unsigned long long)nsid,
		   hrc ? " for host " : "", host, any ? "set" : "cleared");
	*result = limits_json(&l);
	return 0;
}

int m_set_qos(struct control_ctx *ctx, json_object *params, json_object **result, struct rpc_err *e)
{
	return qos_change(ctx, params, result, e, false);
}

int m_clear_qos(struct control_ctx *ctx, json_object *params, json_object **result,
		struct rpc_err *e)
{
	return qos_change(ctx, params, result, e, true);
}

static void qos_host_cb(const char *hostnqn, const struct nvmf_qos_limits *lim, void *arg)
{
	json_object *h = limits_json(lim);

	json_object_object_add(h, "host", json_object_new_string(hostnqn));
	json_object_array_add(arg, h);
}

/* nvmf_namespace_get_qos {nqn, nsid}: {limits, hosts: [{host, limits...}]} */
int m_get_qos(struct control_ctx *ctx, json_object *params, json_object **result, struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD];
	struct config_ns *cns = NULL;
	struct nvmf_subsys *s = NULL;
	struct nvmf_qos_limits l;
	json_object *hosts;
	uint64_t nsid;
	int rc = qos_ns(ctx, params, nqn, &nsid, &cns, &s, e);

	if (rc)
		return rc < 0 ? -1 : 0;
	if ((rc = nvmf_ns_get_qos(s, (uint32_t)nsid, &l)))
		return rpc_fail(e, rc, "namespace %llu: %s", (unsigned long long)nsid,
				strerror(-rc));
	*result = json_object_new_object();
	json_object_object_add(*result, "nqn", json_object_new_string(nqn));
	json_object_object_add(*result, "nsid", json_object_new_int64((int64_t)nsid));
	json_object_object_add(*result, "limits", limits_json(&l));
	hosts = json_object_new_array();
	nvmf_ns_list_host_qos(s, (uint32_t)nsid, qos_host_cb, hosts);
	json_object_object_add(*result, "hosts", hosts);
	return 0;
}
