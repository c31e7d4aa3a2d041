// SPDX-License-Identifier: MIT
/*
 * Normal sessions: the session's in-process NVMe controller (its host identity is the
 * iSCSI I_T nexus), the logical units described by Identify Controller/Namespace through
 * the admin path of that controller, and the task pool sized by the CmdSN window. And the
 * end of sessions a reloaded configuration no longer allows (iscsi_sessions_revoke).
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"
#include "core/fused.h"
#include "common/log.h"
#include "core/reservation.h"

#define ISCSI_HOSTNQN_PREFIX "nqn.2026-11.io.nvmeof:iscsi:"

/* Host identifier of the I_T nexus: SHA-256(initiator name, ISID, target name). */
static int nexus_hostid(const struct iscsi_conn *c, uint8_t out[16])
{
	uint8_t md[32];
	unsigned int len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(ctx, c->initiator, strlen(c->initiator) + 1) &&
	     EVP_DigestUpdate(ctx, c->isid, sizeof(c->isid)) &&
	     EVP_DigestUpdate(ctx, c->target->name, strlen(c->target->name) + 1) &&
	     EVP_DigestFinal_ex(ctx, md, &len);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -EIO;
	memcpy(out, md, 16);
	return 0;
}

/* ---- Identify through the local controller's admin path ---------------------------------- */

static int identify(struct iscsi_conn *c, uint8_t cns, uint32_t nsid, void *buf)
{
	struct nvmf_req *req = calloc(1, sizeof(*req));
	uint16_t status;

	if (!req)
		return -ENOMEM;
	req->qpair = &c->qp;
	req->cmd.opc = NVME_ADMIN_IDENTIFY;
	put_le16(&req->cmd.cid, ISCSI_ADMIN_CID); /* not a task's (iscsi_task_of_req) */
	put_le32(&req->cmd.nsid, nsid);
	put_le32(&req->cmd.cdw10, cns);
	put_le32(req->cmd.dptr.sgl1.length, NVME_IDENTIFY_DATA_SIZE);
	req->cmd.dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	req->xfer = NVME_XFER_CTRLR_TO_HOST;
	req->length = NVME_IDENTIFY_DATA_SIZE;
	req->iov[0].iov_base = buf;
	req->iov[0].iov_len = NVME_IDENTIFY_DATA_SIZE;
	req->iovcnt = 1;
	c->admin_req = req;
	c->admin_done = false;
	nvmf_local_admin_exec(req);
	/* Identify is answered from controller state: it completes before returning. A late
	 * completion frees the request (iscsi_task_req_complete). */
	if (!c->admin_done) {
		c->admin_req = NULL;
		return -EINPROGRESS;
	}
	c->admin_req = NULL;
	status = get_le16(&req->rsp.status) & 0xfffe;
	free(req);
	return status ? -EIO : 0;
}

static void copy_trimmed(char *dst, size_t cap, const char *src, size_t len)
{
	while (len && (src[len - 1] == ' ' || src[len - 1] == '\0'))
		len--;
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static void lu_from_identify(struct iscsi_lu *lu, const struct nvme_id_ctrl *ic, const struct nvme_id_ns *in,
			     const struct iscsi_lun_map *map)
{
	struct scsi_lu *s = &lu->info;
	uint16_t oncs = get_le16(&ic->oncs);
	uint32_t bs = 1u << in->lbaf[in->flbas & 0xf].lbads;
	uint64_t max_bytes = reactor_buf_size();
	uint64_t mdts = ic->mdts ? 4096ull << ic->mdts : 0;

	memset(s, 0, sizeof(*s));
	lu->lun = map->lun;
	s->lun = map->lun;
	s->nsid = map->nsid;
	s->nblocks = get_le64(&in->nsze);
	s->block_size = bs;
	if (mdts && mdts < max_bytes)
		max_bytes = mdts;
	/* one NVMe data command: MDTS within one buffer; one SCSI command: a few buffers */
	s->max_cmd_blocks = (uint32_t)(max_bytes / bs);
	if (s->max_cmd_blocks > SCSI_NVME_MAX_NLB)
		s->max_cmd_blocks = SCSI_NVME_MAX_NLB;
	s->max_xfer_blocks = (uint32_t)(reactor_buf_size() * ISCSI_TASK_BUFS / bs);
	if (s->max_xfer_blocks > 0xffff)
		s->max_xfer_blocks = 0xffff;
	s->thin = (oncs & NVME_CTRL_ONCS_DSM) && (in->nsfeat & NVME_NS_NSFEAT_THIN) &&
		  (in->dlfeat & 0x7) == NVME_NS_DLFEAT_READ_ZEROES;
	s->max_unmap_blocks = UINT32_MAX;
	s->max_unmap_descs = NVME_DSM_MAX_RANGES;
	if ((reactor_buf_size() / 2 - 8) / 16 < s->max_unmap_descs)
		s->max_unmap_descs = (uint32_t)((reactor_buf_size() / 2 - 8) / 16);
	/* WRITE SAME: up to 65535 blocks per command (as a 16-bit NUMBER OF LOGICAL BLOCKS
	 * of WRITE SAME(10) can express), each command a bounded number of NVMe commands */
	s->max_ws_blocks = s->nblocks < 0xffff ? (uint32_t)s->nblocks : 0xffff;
	s->write_cache = ic->vwc & NVME_CTRL_VWC_PRESENT;
	s->read_only = in->nsattr & 0x1;
	s->reservations = oncs & NVME_CTRL_ONCS_RESERVATIONS;
	s->ptpl = s->reservations && (in->rescap & 0x01); /* RESCAP: Persist Through Power Loss */
	s->compare_write = get_le16(&ic->fuses) & NVME_CTRL_FUSES_COMPARE_WRITE;
	if (in->nsfeat & NVME_NS_NSFEAT_NSABP)
		s->max_caw_blocks = get_le16(&in->nacwu) + 1u;
	s->verify_cmd = oncs & NVME_CTRL_ONCS_VERIFY;
	s->write_zeroes = oncs & NVME_CTRL_ONCS_WRITE_ZEROES;
	s->lba_status = s->thin;
	/* physical block: the preferred write granularity, when reported */
	if (in->nsfeat & NVME_NS_NSFEAT_OPTPERF) {
		uint32_t npwg = get_le16(&in->npwg) + 1u;

		while (npwg > 1 && s->phys_exp < 15) {
			npwg >>= 1;
			s->phys_exp++;
		}
	}
	memcpy(s->nguid, in->nguid, 16);
	memcpy(s->eui64, in->eui64, 8);
	copy_trimmed(s->serial, sizeof(s->serial), ic->sn, sizeof(ic->sn));
	copy_trimmed(s->model, sizeof(s->model), ic->mn, sizeof(ic->mn));
	copy_trimmed(s->firmware, sizeof(s->firmware), ic->fr, sizeof(ic->fr));
	s->mode = (struct scsi_lu_mode *)&map->mode;
	lu->ready = s->nblocks != 0;
}

/* ---- tasks ------------------------------------------------------------------------------ */

int iscsi_session_alloc_tasks(struct iscsi_conn *c)
{
	unsigned int depth = g_iscsi.opts.queue_depth;
	int rc;

	if (depth < 1)
		depth = 1;
	if (depth > ISCSI_MAX_TASKS)
		depth = ISCSI_MAX_TASKS;
	/* the table only: slots come as the initiator uses them (iscsi_task_pool.c) */
	rc = iscsi_task_pool_init(c, depth + ISCSI_IMMEDIATE_SLOTS);
	if (rc)
		return rc;
	c->free_immediate = ISCSI_IMMEDIATE_SLOTS;
	/* the CmdSN window: one slot per regular task */
	c->max_cmdsn = c->exp_cmdsn + depth - 1;
	return 0;
}

void iscsi_session_free_tasks(struct iscsi_conn *c)
{
	iscsi_task_pool_fini(c);
	c->ntasks = 0;
}

/* ---- start/stop -------------------------------------------------------------------------- */

int iscsi_session_start(struct iscsi_conn *c, char *err, size_t errlen)
{
	struct iscsi_target *t = c->target;
	struct nvmf_subsys *subsys = NULL;
	char subnqn[NVME_NQN_FIELD], hostnqn[NVME_NQN_FIELD];
	uint8_t *buf = NULL;
	int rc;

	pthread_mutex_lock(&g_iscsi.lock);
	snprintf(subnqn, sizeof(subnqn), "%s", t->subnqn);
	c->nlus = t->nluns;
	pthread_mutex_unlock(&g_iscsi.lock);

	c->lus = calloc(c->nlus ? c->nlus : 1, sizeof(*c->lus));
	c->lun_list = calloc(c->nlus ? c->nlus : 1, sizeof(*c->lun_list));
	if (!c->lus || !c->lun_list) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = iscsi_session_alloc_tasks(c);
	if (rc) {
		snprintf(err, errlen, "out of memory for tasks");
		return rc;
	}
	rc = nexus_hostid(c, c->hostid);
	if (rc) {
		snprintf(err, errlen, "host identifier: %s", strerror(-rc));
		return rc;
	}
	iscsi_nexus_register(c->hostid, c->initiator, c->isid);
	c->port.transport_id = iscsi_transport_id;
	c->port.arg = NULL;
	c->port.target_name = t->name;
	c->port.rel_port_id = 1;
	c->port.tpgt = ISCSI_TPGT;
	c->port.luns = c->lun_list;
	c->port.nluns = 0;
	if (!c->nlus)
		return 0; /* a target without LUNs: REPORT LUNS and INQUIRY only */

	subsys = nvmf_subsys_find(g_iscsi.tgt, subnqn);
	if (!subsys) {
		snprintf(err, errlen, "subsystem %s not found", subnqn);
		return -ENOENT;
	}
	c->subsys = subsys;
	snprintf(hostnqn, sizeof(hostnqn), "%s%.*s", ISCSI_HOSTNQN_PREFIX,
		 (int)(NVME_NQN_MAX - strlen(ISCSI_HOSTNQN_PREFIX)), c->initiator);
	nvmf_qpair_init(&c->qp, &nvmf_iscsi_transport_ops, g_iscsi.tgt, NULL, c->r);
	snprintf(c->qp.peer, sizeof(c->qp.peer), "%s", c->peer);
	c->qp.map_read_data = !c->ddigest; /* as in enter_full_feature() */
	c->qp_initialized = true;
	rc = nvmf_local_connect(&c->qp, subsys, hostnqn, c->hostid);
	if (rc) {
		snprintf(err, errlen, "local controller on %s: %s", subnqn, strerror(-rc));
		return rc;
	}
	c->ctrl_connected = true;

	buf = reactor_buf_get(c->r);
	if (!buf || reactor_buf_size() < 2 * NVME_IDENTIFY_DATA_SIZE) {
		if (buf)
			reactor_buf_put(c->r, buf);
		snprintf(err, errlen, "no buffer for Identify");
		return -ENOMEM;
	}
	rc = identify(c, NVME_ID_CNS_CTRL, 0, buf);
	for (unsigned int i = 0; !rc && i < c->nlus; i++) {
		struct iscsi_lun_map *map = &t->luns[i];

		rc = identify(c, NVME_ID_CNS_NS, map->nsid, buf + NVME_IDENTIFY_DATA_SIZE);
		if (rc)
			break;
		lu_from_identify(&c->lus[i], (const struct nvme_id_ctrl *)buf,
				 (const struct nvme_id_ns *)(buf + NVME_IDENTIFY_DATA_SIZE), map);
		if (c->lus[i].ready)
			c->lun_list[c->port.nluns++] = map->lun;
		else
			log_warn("%s: LUN %llu: namespace %u of %s is not active", c->peer,
				 (unsigned long long)map->lun, map->nsid, subnqn);
	}
	if (rc != -EINPROGRESS)
		reactor_buf_put(c->r, buf);
	if (rc) {
		snprintf(err, errlen, "Identify failed: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* The session ends (logout, connection loss, reinstatement): its I_T nexus loses any
 * RESERVE(6) reservation; persistent reservations stay. */
void iscsi_session_stop(struct iscsi_conn *c)
{
	if (c->subsys) {
		for (unsigned int i = 0; i < c->nlus; i++) {
			struct nvmf_ns *ns = nvmf_ns_get(c->subsys, c->lus[i].info.nsid, c->r);

			if (ns) {
				nvmf_resv_legacy_release(ns, c->hostid);
				nvmf_ns_put(ns, c->r);
			}
		}
	}
	if (c->qp_initialized) {
		nvmf_fused_abort(&c->qp);
		nvmf_qpair_disconnected(&c->qp);
		nvmf_qpair_fini(&c->qp);
		c->qp_initialized = false;
		c->ctrl_connected = false;
	}
	free(c->lus);
	c->lus = NULL;
	free(c->lun_list);
	c->lun_list = NULL;
	c->subsys = NULL;
}

/* ---- Revocation ---------------------------------------------------------------------------- */

/* Why @c no longer has access under the current configuration, or NULL. */
static const char *revoke_reason_locked(const struct iscsi_conn *c)
{
	const struct iscsi_target *t = c->target;

	if (c->state == CONN_CLOSING || c->state == CONN_LOGGED_OUT)
		return NULL;
	if (c->discovery) {
		const struct iscsi_auth *a = &g_iscsi.disc_auth;

		if (c->auth_done && a->chap && c->auth_gen != a->gen)
			return c->chap_used ? "the discovery CHAP secret changed"
					    : "discovery sessions now need CHAP";
		return NULL;
	}
	if (!t)
		return NULL;
	if (t->removed)
		return "its target was removed";
	if (!iscsi_target_initiator_allowed_locked(t, c->initiator))
		return "the initiator is no longer allowed";
	if (c->auth_done && t->auth.chap && c->auth_gen != t->auth.gen)
		return c->chap_used ? "its CHAP secret changed" : "the target now needs CHAP";
	return NULL;
}

/* RFC 7143 11.9: AsyncEvent 3, the target drops all connections of the session;
 * Parameter2 is the Time2Wait before the initiator may reconnect. */
static void send_drop_all(struct iscsi_conn *c)
{
	struct iscsi_tx *tx = iscsi_ctl_get(c);

	if (!tx)
		return;
	iscsi_bhs_init(tx->hdr, ISCSI_OP_ASYNC_MSG, ISCSI_FLAG_FINAL);
	put_be32(tx->hdr + 16, ISCSI_TAG_RESERVED);
	put_be32(tx->hdr + 20, ISCSI_TAG_RESERVED);
	iscsi_put_sn(c, tx->hdr, true);
	tx->hdr[36] = ISCSI_ASYNC_DROP_ALL_CONNECTIONS;
	put_be16(tx->hdr + 40, (uint16_t)c->params.default_time2wait);
	put_be16(tx->hdr + 42, 0);
	iscsi_tx_send(c, tx);
}

/* On the session's reactor (it may have gone by itself: connections are freed on their
 * own reactor, so the lookup cannot race with that). */
static void revoke_msg(void *arg)
{
	struct iscsi_conn *c;
	const char *why = NULL;

	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(c, &g_iscsi.conns, link)
	if (c == arg)
		break;
	if (c && c->r == reactor_self())
		why = c->revoke_why;
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!why || c->state == CONN_CLOSING)
		return;
	log_notice("%s: iSCSI %s session of %.64s%s%.64s ended: %s", c->peer,
		   c->discovery ? "discovery" : "normal", c->initiator, c->target ? " to " : "",
		   c->target ? c->target->name : "", why);
	if (c->state == CONN_FULL)
		send_drop_all(c);
	iscsi_conn_close_flushed(c, "access revoked");
}

unsigned int iscsi_sessions_revoke(void)
{
	struct iscsi_conn *c;
	unsigned int n = 0;

	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(c, &g_iscsi.conns, link)
	{
		const char *why;

		if (c->revoke_why || !c->r)
			continue;
		why = revoke_reason_locked(c);
		if (!why)
			continue;
		c->revoke_why = why;
		if (reactor_send_msg(c->r, revoke_msg, c) == 0)
			n++;
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	__atomic_add_fetch(&g_iscsi.revoked, n, __ATOMIC_RELAXED);
	return n;
}
