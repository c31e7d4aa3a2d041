/* SPDX-License-Identifier: MIT */
/* Control methods for what is connected now: NVMe controllers and iSCSI sessions,
 * listed and disconnected. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_file.h"
#include "control.h"
#include "control_internal.h"
#include "core/nvmf.h"
#include "iscsi/iscsi.h"

static void ctrlr_to_json(const struct nvmf_ctrlr_info *ci, void *arg)
{
	json_object *o = json_object_new_object(), *st = json_object_new_object();
	char hostid[40];

	json_object_object_add(o, "cntlid", json_object_new_int(ci->cntlid));
	json_object_object_add(o, "nqn", json_object_new_string(ci->subnqn));
	json_object_object_add(o, "hostnqn", json_object_new_string(ci->hostnqn));
	for (int i = 0, off = 0; i < 16; i++)
		off += snprintf(hostid + off, sizeof(hostid) - (size_t)off, "%s%02x",
				i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", ci->hostid[i]);
	json_object_object_add(o, "hostid", json_object_new_string(hostid));
	json_object_object_add(o, "trtype", json_object_new_string(ci->trtype));
	json_object_object_add(o, "traddr", json_object_new_string(ci->traddr));
	json_object_object_add(o, "trsvcid", json_object_new_string(ci->trsvcid));
	json_object_object_add(o, "peer", json_object_new_string(ci->peer));
	json_object_object_add(o, "ready", json_object_new_boolean(ci->ready));
	json_object_object_add(o, "io_queues", json_object_new_int((int)ci->io_queues));
	json_object_object_add(o, "kato_ms", json_object_new_int64(ci->kato_ms));
	json_object_object_add(st, "read_cmds",
			       json_object_new_int64((int64_t)ci->stats.read_cmds));
	json_object_object_add(st, "write_cmds",
			       json_object_new_int64((int64_t)ci->stats.write_cmds));
	json_object_object_add(st, "other_cmds",
			       json_object_new_int64((int64_t)ci->stats.other_cmds));
	json_object_object_add(st, "read_bytes",
			       json_object_new_int64((int64_t)ci->stats.read_bytes));
	json_object_object_add(st, "write_bytes",
			       json_object_new_int64((int64_t)ci->stats.write_bytes));
	json_object_object_add(o, "stats", st);
	json_object_array_add(arg, o);
}

int m_get_controllers(struct control_ctx *ctx, json_object *params, json_object **result,
		      struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD];
	int has = p_str(params, "nqn", false, nqn, sizeof(nqn), e);

	if (has < 0 || !ctx->tgt)
		return has < 0 ? -1 : 0;
	if (has && !nvmf_subsys_find(ctx->tgt, nqn))
		return rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist",
				nqn);
	*result = json_object_new_array();
	nvmf_tgt_list_ctrlrs(ctx->tgt, has ? nqn : NULL, ctrlr_to_json, *result);
	return 0;
}

struct find_cntlid {
	uint16_t cntlid;
	unsigned int n;
	char nqn[NVME_NQN_FIELD];
};

static void find_cntlid_cb(const struct nvmf_ctrlr_info *ci, void *arg)
{
	struct find_cntlid *f = arg;

	if (ci->cntlid == f->cntlid) {
		f->n++;
		snprintf(f->nqn, sizeof(f->nqn), "%s", ci->subnqn);
	}
}

int m_disconnect_controller(struct control_ctx *ctx, json_object *params, json_object **result,
			    struct rpc_err *e)
{
	struct find_cntlid f = { 0 };
	struct nvmf_subsys *s;
	uint64_t cntlid;
	int has;

	if (p_uint(params, "cntlid", true, 1, 0xffef, &cntlid, e) < 0 ||
	    (has = p_str(params, "nqn", false, f.nqn, sizeof(f.nqn), e)) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	f.cntlid = (uint16_t)cntlid;
	if (!has) {
		nvmf_tgt_list_ctrlrs(ctx->tgt, NULL, find_cntlid_cb, &f);
		if (f.n > 1)
			return rpc_fail(e, RPC_INVALID_PARAMS,
					"parameter \"cntlid\": %llu is used "
					"by %u subsystems; give \"nqn\" too",
					(unsigned long long)cntlid, f.n);
		if (!f.n)
			return rpc_fail(e, -ENOENT, "parameter \"cntlid\": no controller %llu",
					(unsigned long long)cntlid);
	}
	s = nvmf_subsys_find(ctx->tgt, f.nqn);
	if (!s)
		return rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist",
				f.nqn);
	if (nvmf_ctrlr_disconnect(s, f.cntlid))
		return rpc_fail(e, -ENOENT, "parameter \"cntlid\": %s has no controller %llu",
				f.nqn, (unsigned long long)cntlid);
	*result = json_object_new_boolean(true);
	return 0;
}

/* ---- iSCSI sessions ------------------------------------------------------------------------ */

static void session_cb(const struct iscsi_session_info *si, void *arg)
{
	json_object *o = json_object_new_object(), *st = json_object_new_object();
	char isid[13];

	for (unsigned int i = 0; i < 6; i++)
		snprintf(isid + 2 * i, 3, "%02x", si->isid[i]);
	json_object_object_add(o, "initiator", json_object_new_string(si->initiator));
	json_object_object_add(o, "target", json_object_new_string(si->target));
	json_object_object_add(o, "isid", json_object_new_string(isid));
	json_object_object_add(o, "tsih", json_object_new_int(si->tsih));
	json_object_object_add(o, "peer", json_object_new_string(si->peer));
	json_object_object_add(o, "portal_addr", json_object_new_string(si->local_addr));
	json_object_object_add(o, "portal_port", json_object_new_string(si->local_port));
	json_object_object_add(o, "connections", json_object_new_int((int)si->connections));
	json_object_object_add(o, "header_digest", json_object_new_boolean(si->hdigest));
	json_object_object_add(o, "data_digest", json_object_new_boolean(si->ddigest));
	json_object_object_add(st, "read_cmds", json_object_new_int64((int64_t)si->read_cmds));
	json_object_object_add(st, "write_cmds", json_object_new_int64((int64_t)si->write_cmds));
	json_object_object_add(st, "other_cmds", json_object_new_int64((int64_t)si->other_cmds));
	json_object_object_add(st, "read_bytes", json_object_new_int64((int64_t)si->read_bytes));
	json_object_object_add(st, "write_bytes", json_object_new_int64((int64_t)si->write_bytes));
	json_object_object_add(o, "stats", st);
	json_object_array_add(arg, o);
}

/* iscsi_get_sessions {[target]}: sessions in full feature phase. */
int m_get_sessions(struct control_ctx *ctx, json_object *params, json_object **result,
		   struct rpc_err *e)
{
	char target[256] = "";
	json_object *all, *out;

	if (p_str(params, "target", false, target, sizeof(target), e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	all = json_object_new_array();
	iscsi_list_sessions(session_cb, all);
	if (!target[0]) {
		*result = all;
		return 0;
	}
	out = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(all); i++) {
		json_object *o = json_object_array_get_idx(all, i), *t;

		if (json_object_object_get_ex(o, "target", &t) &&
		    !strcmp(json_object_get_string(t), target))
			json_object_array_add(out, json_object_get(o));
	}
	json_object_put(all);
	*result = out;
	return 0;
}

/* iscsi_disconnect_session {tsih} */
int m_disconnect_session(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e)
{
	uint64_t tsih;
	int rc;

	if (p_uint(params, "tsih", true, 1, 0xffff, &tsih, e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	rc = iscsi_session_disconnect((uint16_t)tsih);
	if (rc)
		return rpc_fail(e, rc, "parameter \"tsih\": %s",
				rc == -ENOENT ? "no iSCSI session has that TSIH" : strerror(-rc));
	*result = json_object_new_boolean(true);
	return 0;
}
