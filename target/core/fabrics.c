/* SPDX-License-Identifier: MIT */
/*
 * Fabrics commands (opcode 7Fh): the Fabrics command table, by fctype, and Connect for
 * admin and I/O queues, Property Get/Set and Disconnect.
 */
#include "config.h"

#include <string.h>

#include "auth/dhchap_ctrl.h"
#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "dispatch.h"

#define ST_CONNECT_PARAM                                                                   \
	NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_PARAMETERS)

/* Invalid Parameters: DW0 = IPO (bits 15:0) | IATTR (bit 16: 1 = in the Connect data). */
static uint16_t connect_invalid(struct nvmf_req *req, uint16_t offset, bool data)
{
	put_le32(&req->rsp.dw0, NVME_CONNECT_IPO(offset, data));
	return ST_CONNECT_PARAM;
}

/* Look up @subnqn as reachable through @port for @hostnqn. Returns a status. */
static uint16_t connect_find_subsys(struct nvmf_req *req, const char *subnqn, const char *hostnqn,
				    struct nvmf_subsys **out, struct dhchap_host_conf **auth)
{
	struct nvmf_qpair *qp = req->qpair;
	struct nvmf_tgt *tgt = qp->tgt;
	struct nvmf_subsys *s;
	uint16_t status = ST_OK;
	bool told = false;

	pthread_mutex_lock(&tgt->lock);
	s = nvmf_subsys_find_locked(tgt, subnqn);
	if (!s || (qp->port && !nvmf_port_exports(qp->port, s)) || s->dying)
		status = connect_invalid(req, offsetof(struct nvmf_connect_data, subnqn), true);
	else if (!nvmf_subsys_host_allowed_locked(s, hostnqn))
		status = NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_HOST);
	else if (qp->ops && qp->ops->connect_allowed &&
		 !qp->ops->connect_allowed(qp, hostnqn, subnqn)) {
		status = NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_HOST);
		told = true; /* the transport logged why */
	} else
		*auth = nvmf_auth_host_conf_locked(s, hostnqn); /* NULL: no authentication */
	pthread_mutex_unlock(&tgt->lock);
	if (status == ST_OK)
		*out = s;
	else if (told)
		; /* one line, the transport's */
	else if (s)
		log_peer("%s: host %s refused on %s", qp->peer, hostnqn, subnqn);
	else
		log_peer("%s: connect to unknown subsystem %s", qp->peer, subnqn);
	return status;
}

static uint16_t connect_admin(struct nvmf_req *req, struct nvmf_subsys *s,
			      const struct nvmf_connect_data *d, uint16_t sqsize, uint8_t cattr,
			      uint32_t kato)
{
	struct nvmf_qpair *qp = req->qpair;
	struct nvmf_ctrlr *c;
	uint16_t status;

	if (get_le16(&d->cntlid) != NVMF_CNTLID_DYNAMIC)
		return connect_invalid(req, offsetof(struct nvmf_connect_data, cntlid), true);
	c = nvmf_ctrlr_create(s, qp, d->hostnqn, d->hostid, &status);
	if (!c)
		return status;
	qp->sqsize = (uint16_t)(sqsize + 1);
	qp->sq_flow_disabled = cattr & NVMF_CONNECT_CATTR_DISABLE_SQFLOW;
	qp->qid = 0;
	qp->ctrlr = c;
	qp->connected = true;
	/* KATO 0: none for I/O controllers unless configured; a discovery controller still
	 * goes away after two idle minutes so that vanished hosts do not pile up. */
	if (!kato)
		kato = c->discovery ? NVMF_DISC_KATO_MS : s->tgt->opts.kato_default_ms;
	nvmf_ctrlr_ka_set(c, kato);
	put_le32(&req->rsp.dw0, c->cntlid);
	return ST_OK;
}

static uint16_t connect_io(struct nvmf_req *req, struct nvmf_subsys *s,
			   const struct nvmf_connect_data *d, uint16_t qid, uint16_t sqsize,
			   uint8_t cattr)
{
	struct nvmf_qpair *qp = req->qpair;
	struct nvmf_ctrlr *c = nvmf_ctrlr_lookup(s, get_le16(&d->cntlid));
	uint32_t dw0 = 0;
	uint16_t status;

	if (!c)
		return connect_invalid(req, offsetof(struct nvmf_connect_data, cntlid), true);
	if (strcmp(c->hostnqn, d->hostnqn) || memcmp(c->hostid, d->hostid, sizeof(c->hostid))) {
		nvmf_ctrlr_put(c);
		return connect_invalid(req, offsetof(struct nvmf_connect_data, cntlid), true);
	}
	qp->sqsize = (uint16_t)(sqsize + 1);
	qp->sq_flow_disabled = cattr & NVMF_CONNECT_CATTR_DISABLE_SQFLOW;
	status = nvmf_ctrlr_add_io_qpair(c, qp, qid, &dw0);
	if (status) {
		qp->sqsize = 0;
		qp->sq_flow_disabled = false;
		put_le32(&req->rsp.dw0, dw0);
		nvmf_ctrlr_put(c); /* on success the lookup reference is the queue's */
		return status;
	}
	put_le32(&req->rsp.dw0, c->cntlid);
	return ST_OK;
}

static void connect_exec(struct nvmf_req *req)
{
	const struct nvmf_connect_cmd *cmd = (const struct nvmf_connect_cmd *)&req->cmd;
	const struct nvmf_tgt_opts *o = &req->qpair->tgt->opts;
	uint16_t recfmt = get_le16(&cmd->recfmt);
	uint16_t qid = get_le16(&cmd->qid);
	uint16_t sqsize = get_le16(&cmd->sqsize);
	uint32_t kato = get_le32(&cmd->kato);
	struct nvmf_connect_data d;
	struct dhchap_host_conf *auth = NULL;
	struct nvmf_subsys *s = NULL;
	uint32_t dw0;
	uint16_t status;

	memset(&d, 0, sizeof(d));
	if (recfmt != 0) {
		status = NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC,
				     NVME_SC_CONNECT_INCOMPATIBLE_FORMAT);
		goto out;
	}
	if (nvmf_req_copy_from(req, 0, &d, sizeof(d)) != sizeof(d)) {
		status = ST_SGL_LEN;
		goto out;
	}
	if (strnlen(d.subnqn, sizeof(d.subnqn)) > NVME_NQN_MAX || !d.subnqn[0]) {
		status = connect_invalid(req, offsetof(struct nvmf_connect_data, subnqn), true);
		goto out;
	}
	/* An empty Host NQN (SPDK's host sends one unless told a name) is a host without a
	 * name: served where any host is allowed, refused as an unknown host by an ACL. */
	if (strnlen(d.hostnqn, sizeof(d.hostnqn)) > NVME_NQN_MAX) {
		status = connect_invalid(req, offsetof(struct nvmf_connect_data, hostnqn), true);
		goto out;
	}
	if (sqsize == 0 || (qid == 0 && sqsize >= o->max_admin_depth) ||
	    (qid != 0 && sqsize > o->max_queue_depth - 1)) {
		status = connect_invalid(req, offsetof(struct nvmf_connect_cmd, sqsize), false);
		goto out;
	}
	status = connect_find_subsys(req, d.subnqn, d.hostnqn, &s, &auth);
	if (status)
		goto out;
	/* One host NQN may not hold every connection slot of the target. */
	if (!req->qpair->host &&
	    nvmf_host_share_get(req->qpair->tgt, d.hostnqn, req->qpair->peer, &req->qpair->host)) {
		dhchap_host_conf_put(auth);
		status = NVMF_ST(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_CONTROLLER_BUSY);
		goto out;
	}
	if (qid == 0)
		status = connect_admin(req, s, &d, sqsize, cmd->cattr, kato);
	else
		status = connect_io(req, s, &d, qid, sqsize, cmd->cattr);
	if (status) {
		dhchap_host_conf_put(auth);
		nvmf_host_share_put(req->qpair->tgt, req->qpair->host);
		req->qpair->host = NULL;
		goto out;
	}
	/* A host with DH-HMAC-CHAP settings authenticates the queue next (AUTHREQ.ATR). */
	dw0 = get_le32(&req->rsp.dw0);
	status = nvmf_auth_qpair_start(req->qpair, auth, &dw0);
	put_le32(&req->rsp.dw0, dw0);
out:
	if (status)
		log_peer("%s: connect qid %u to %.223s failed: sct %u sc %#x",
			 req->qpair->peer, qid, d.subnqn,
			 NVME_STATUS_SCT(status), NVME_STATUS_SC(status));
	nvmf_req_done(req, status);
}

static unsigned int prop_size(const struct nvmf_property_cmd *cmd)
{
	switch (cmd->attrib & 0x7) {
	case 0:
		return 4;
	case 1:
		return 8;
	default:
		return 0;
	}
}

static void prop_get_exec(struct nvmf_req *req)
{
	const struct nvmf_property_cmd *cmd = (const struct nvmf_property_cmd *)&req->cmd;
	uint64_t val = 0;
	uint16_t status;

	status = nvmf_ctrlr_prop_get(nvmf_req_ctrlr(req), get_le32(&cmd->offset),
				     prop_size(cmd), &val);
	if (!status) {
		put_le32(&req->rsp.dw0, (uint32_t)val);
		put_le32(&req->rsp.dw1, (uint32_t)(val >> 32));
	}
	nvmf_req_done(req, status);
}

static void prop_set_exec(struct nvmf_req *req)
{
	const struct nvmf_property_cmd *cmd = (const struct nvmf_property_cmd *)&req->cmd;

	nvmf_req_done(req, nvmf_ctrlr_prop_set(nvmf_req_ctrlr(req), get_le32(&cmd->offset),
					       prop_size(cmd), get_le64(&cmd->value)));
}

static void disconnect_exec(struct nvmf_req *req)
{
	const struct nvmf_connect_cmd *cmd = (const struct nvmf_connect_cmd *)&req->cmd;
	struct nvmf_qpair *qp = req->qpair;

	if (get_le16(&cmd->recfmt) != 0) {
		nvmf_req_done(req, NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC,
					       NVME_SC_CONNECT_INCOMPATIBLE_FORMAT));
		return;
	}
	/* The queue leaves the controller now (its QID is free again); the host closes the
	 * connection once it has the response. */
	nvmf_ctrlr_detach_io_qpair(qp->ctrlr, qp);
	nvmf_req_done(req, ST_OK);
}

static uint16_t connect_parse(struct nvmf_req *req)
{
	if (req->qpair->ctrlr) /* after a Disconnect */
		return ST_CMD_SEQ;
	if (req->length < sizeof(struct nvmf_connect_data))
		return ST_SGL_LEN;
	req->execute = connect_exec;
	return ST_OK;
}

static uint16_t disconnect_parse(struct nvmf_req *req)
{
	if (req->qpair->qid == 0)
		return NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_TYPE);
	req->execute = disconnect_exec;
	return ST_OK;
}

/* ---- The Fabrics command table, by fctype (see dispatch.h) ----------------------------------- */

#define ON_FABRIC_ADMIN (NVMF_ON_NVM | NVMF_ON_DISC)

const struct nvmf_cmd_desc nvmf_fabrics_cmds[NVMF_CMD_TABLE_SIZE] = {
	[NVMF_FCTYPE_PROPERTY_SET] = { .name = "Property Set",
				       .execute = prop_set_exec,
				       .xfer = NVME_XFER_NONE,
				       .on = ON_FABRIC_ADMIN,
				       .needs = NVMF_NEED_CONNECTED | NVMF_NEED_KATO },
	/* Before Connect the queue's kind is not known: every queue takes it. */
	[NVMF_FCTYPE_CONNECT] = { .name = "Connect",
				  .parse = connect_parse,
				  .xfer = NVME_XFER_HOST_TO_CTRLR,
				  .on = NVMF_ON_ANY,
				  .needs = NVMF_NEED_UNCONNECTED,
				  .before_auth = true },
	/* In-band authentication (fabrics_auth.c), on every queue of an NVM controller. */
	[NVMF_FCTYPE_AUTH_SEND] = { .name = "Authentication Send",
				    .parse = nvmf_auth_send_parse,
				    .xfer = NVME_XFER_HOST_TO_CTRLR,
				    .on = NVMF_ON_NVM | NVMF_ON_IO,
				    .needs = NVMF_NEED_CONNECTED,
				    .before_auth = true },
	[NVMF_FCTYPE_AUTH_RECV] = { .name = "Authentication Receive",
				    .parse = nvmf_auth_recv_parse,
				    .xfer = NVME_XFER_CTRLR_TO_HOST,
				    .on = NVMF_ON_NVM | NVMF_ON_IO,
				    .needs = NVMF_NEED_CONNECTED,
				    .before_auth = true },
	[NVMF_FCTYPE_PROPERTY_GET] = { .name = "Property Get",
				       .execute = prop_get_exec,
				       .xfer = NVME_XFER_NONE,
				       .on = ON_FABRIC_ADMIN,
				       .needs = NVMF_NEED_CONNECTED | NVMF_NEED_KATO },
	/* On the admin queue: Invalid Queue Type (disconnect_parse), not an unknown command. */
	[NVMF_FCTYPE_DISCONNECT] = { .name = "Disconnect",
				     .parse = disconnect_parse,
				     .xfer = NVME_XFER_NONE,
				     .on = NVMF_ON_ANY,
				     .needs = NVMF_NEED_CONNECTED },
};
