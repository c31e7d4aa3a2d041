/* SPDX-License-Identifier: MIT */
/* Control methods for ANA states: nvmf_subsystem_set_ana_state, nvmf_get_ana_states. */
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

/* ---- ANA ---------------------------------------------------------------------------------- */

/* Whether port @cp of a model exports @nqn. */
static bool cfg_port_exports(const struct config_port *cp, const char *nqn)
{
	for (unsigned int i = 0; i < cp->nsubsystems; i++)
		if (!strcmp(cp->subsystems[i], nqn))
			return true;
	return false;
}

/*
 * {"nqn", "portid", "grpid", "ana_state"}: the state of ANA group GRPID on port PORTID.
 * Groups are per port, as in nvmet: the state holds for every subsystem the port exports;
 * NQN names the subsystem the caller means and must be exported there. The running model
 * records it (ports[].ana_groups), so save_config keeps it.
 */
int m_set_ana_state(struct control_ctx *ctx, json_object *params, json_object **result,
		    struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], state[32], what[400];
	uint64_t portid, grpid;
	struct config_port *cp = NULL;
	struct tgt_config *next;
	unsigned int i;
	uint8_t st;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_uint(params, "portid", true, 1, 65535, &portid, e) < 0 ||
	    p_uint(params, "grpid", true, 1, NVMF_ANA_MAX_GRPS, &grpid, e) < 0 ||
	    p_str(params, "ana_state", true, state, sizeof(state), e) < 0)
		return -1;
	if (nvmf_ana_state_parse(state, &st))
		return rpc_fail(e, -EINVAL,
				"parameter \"ana_state\": \"%s\": expected optimized, "
				"non-optimized, "
				"inaccessible, persistent-loss or change",
				state);
	if (!ctx->tgt)
		return 0;
	if (!need_subsys(*ctx->cfg, nqn, e))
		return -1;
	next = model_begin(ctx, e);
	if (!next)
		return -1;
	for (i = 0; i < next->nports; i++)
		if (next->ports[i].portid == portid)
			cp = &next->ports[i];
	if (!cp || !cfg_port_exports(cp, nqn)) {
		config_free(next);
		return rpc_fail(e, -ENOENT, "parameter \"portid\": port %llu does not export %s",
				(unsigned long long)portid, nqn);
	}
	for (i = 0; i < cp->nana_groups && cp->ana_groups[i].grpid != grpid; i++)
		;
	if (i == cp->nana_groups) {
		struct config_ana_group *g = realloc(cp->ana_groups, (i + 1) * sizeof(*g));

		if (!g) {
			config_free(next);
			return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		}
		cp->ana_groups = g;
		cp->nana_groups++;
		memset(&g[i], 0, sizeof(g[i]));
		g[i].grpid = (uint32_t)grpid;
	}
	snprintf(cp->ana_groups[i].state, sizeof(cp->ana_groups[i].state), "%s", state);
	snprintf(what, sizeof(what), "port %llu: ANA group %llu %s (%s)",
		 (unsigned long long)portid, (unsigned long long)grpid, state, nqn);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_boolean(true);
	return 0;
}

/* {"nqn"?}: the running state of every ANA group in use, per port: [{"portid", "trsvcid",
 * "grpid", "ana_state", "nqns": [...], "chgcnt", "refused"}]. */
int m_get_ana_states(struct control_ctx *ctx, json_object *params, json_object **result,
		     struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD] = "";
	json_object *arr;
	struct nvmf_port *port;

	if (p_str(params, "nqn", false, nqn, sizeof(nqn), e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	arr = json_object_new_array();
	pthread_mutex_lock(&ctx->tgt->lock);
	TAILQ_FOREACH(port, &ctx->tgt->ports, link)
	{
		if (port->discovery_only)
			continue;
		for (uint32_t g = 1; g <= NVMF_ANA_MAX_GRPS; g++) {
			json_object *o = NULL, *nqns = NULL;

			for (unsigned int i = 0; i < port->nsubsys; i++) {
				struct nvmf_subsys *s = port->subsys[i];
				bool used = false;

				if (nqn[0] && strcmp(nqn, s->nqn))
					continue;
				pthread_mutex_lock(&s->lock);
				for (uint32_t n = 1; n <= NVMF_MAX_NAMESPACES && !used; n++)
					used = s->ns[n] && s->ns[n]->anagrpid == g;
				pthread_mutex_unlock(&s->lock);
				if (!used)
					continue;
				if (!o) {
					o = json_object_new_object();
					nqns = json_object_new_array();
				}
				json_object_array_add(nqns, json_object_new_string(s->nqn));
			}
			if (!o)
				continue;
			json_object_object_add(o, "portid", json_object_new_int(port->portid));
			json_object_object_add(o, "trsvcid", json_object_new_string(port->trsvcid));
			json_object_object_add(o, "grpid", json_object_new_int64(g));
			json_object_object_add(o, "ana_state",
					       json_object_new_string(nvmf_ana_state_name(
						       nvmf_ana_get_state(port, g))));
			json_object_object_add(o, "nqns", nqns);
			json_object_object_add(o, "chgcnt",
					       json_object_new_int64((int64_t)__atomic_load_n(
						       &port->ana_chgcnt, __ATOMIC_ACQUIRE)));
			json_object_object_add(o, "refused",
					       json_object_new_int64((int64_t)__atomic_load_n(
						       &port->ana_refused, __ATOMIC_RELAXED)));
			json_object_array_add(arr, o);
		}
	}
	pthread_mutex_unlock(&ctx->tgt->lock);
	*result = arr;
	return 0;
}
