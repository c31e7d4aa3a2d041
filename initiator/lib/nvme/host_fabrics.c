/* SPDX-License-Identifier: MIT */
/* NVMe over Fabrics commands the host sends: Connect (then DH-HMAC-CHAP when asked for,
 * host_auth.c), Property Get/Set, Disconnect. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "host_auth.h"
#include "host_nvme.h"

/* Name the field a Connect "Invalid Parameters" status points at: DW0 bits 15:0 are the
 * offset (IPO), bit 16 (IATTR) says it is in the connect data rather than the SQE. */
static const char *connect_param_name(bool in_data, uint16_t ipo)
{
	if (in_data) {
		switch (ipo) {
		case offsetof(struct nvmf_connect_data, hostid):
			return "host ID";
		case offsetof(struct nvmf_connect_data, cntlid):
			return "controller ID";
		case offsetof(struct nvmf_connect_data, subnqn):
			return "subsystem NQN";
		case offsetof(struct nvmf_connect_data, hostnqn):
			return "host NQN";
		}
		return "connect data field";
	}
	switch (ipo) {
	case offsetof(struct nvmf_connect_cmd, qid):
		return "queue ID";
	case offsetof(struct nvmf_connect_cmd, sqsize):
		return "queue size";
	case offsetof(struct nvmf_connect_cmd, kato):
		return "keep alive timeout";
	case offsetof(struct nvmf_connect_cmd, cattr):
		return "connect attributes";
	}
	return "connect command field";
}

int fabrics_connect(struct nvmeof_qpair *qp, uint16_t sqsize, uint32_t kato, uint16_t cntlid,
		    uint16_t *cntlid_out)
{
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	struct nvme_cmd sqe = { 0 };
	struct nvmf_connect_cmd *cmd = (struct nvmf_connect_cmd *)&sqe;
	struct nvmf_connect_data *data;
	struct nvmeof_cpl cpl;
	int rc;

	data = calloc(1, sizeof(*data));
	if (!data)
		return set_error(-ENOMEM, "out of memory");
	memcpy(data->hostid, ctrlr->hostid, sizeof(data->hostid));
	put_le16(&data->cntlid, cntlid);
	memcpy(data->subnqn, ctrlr->uri.name, strnlen(ctrlr->uri.name, NVME_NQN_MAX));
	memcpy(data->hostnqn, ctrlr->hostnqn, strnlen(ctrlr->hostnqn, NVME_NQN_MAX));

	cmd->opc = NVME_ADMIN_FABRICS;
	cmd->fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd->recfmt, 0);
	put_le16(&cmd->qid, qp->qid);
	put_le16(&cmd->sqsize, sqsize);
	put_le32(&cmd->kato, kato);

	rc = qpair_exec(qp, &sqe, data, sizeof(*data), NVME_XFER_HOST_TO_CTRLR, &cpl);
	free(data);
	if (rc < 0)
		return set_error(rc, "Connect (queue %u) failed: %s", qp->qid,
				 qp->errmsg[0] ? qp->errmsg : strerror(-rc));
	if (rc > 0) {
		uint16_t st = (uint16_t)rc;

		if (NVMEOF_SCT(st) == NVME_SCT_COMMAND_SPECIFIC &&
		    NVMEOF_SC(st) == NVME_SC_CONNECT_INVALID_PARAMETERS)
			return set_error(-ECONNREFUSED, "Connect rejected: invalid %s (sct 1 sc 0x82)",
					 connect_param_name((cpl.dw0 & NVME_CONNECT_IATTR_DATA) != 0,
							    (uint16_t)cpl.dw0));
		if (NVMEOF_SCT(st) == NVME_SCT_COMMAND_SPECIFIC &&
		    NVMEOF_SC(st) == NVME_SC_CONNECT_INVALID_HOST)
			return set_error(-EACCES,
					 "Connect rejected: host %s may not access %s (sct 1 sc 0x84)",
					 ctrlr->hostnqn, ctrlr->uri.name);
		return set_error(-ECONNREFUSED, "Connect (queue %u) rejected: %s (sct %u sc 0x%02x)",
				 qp->qid, connect_status_name(st), NVMEOF_SCT(st), NVMEOF_SC(st));
	}
	if (cntlid_out)
		*cntlid_out = (uint16_t)cpl.dw0;
	/* AUTHREQ in DW0 bits 31:16: authenticate before anything else goes on the queue. */
	return host_auth_connected(qp, cpl.dw0);
}

int fabrics_prop_get(struct nvmeof_qpair *qp, uint32_t offset, bool eight, uint64_t *value)
{
	struct nvme_cmd sqe = { 0 };
	struct nvmf_property_cmd *cmd = (struct nvmf_property_cmd *)&sqe;
	struct nvmeof_cpl cpl;
	int rc;

	cmd->opc = NVME_ADMIN_FABRICS;
	cmd->fctype = NVMF_FCTYPE_PROPERTY_GET;
	cmd->attrib = eight ? 1 : 0;
	put_le32(&cmd->offset, offset);
	rc = qpair_exec(qp, &sqe, NULL, 0, NVME_XFER_NONE, &cpl);
	if (rc)
		return rc;
	*value = eight ? (uint64_t)cpl.dw1 << 32 | cpl.dw0 : cpl.dw0;
	return 0;
}

int fabrics_prop_set(struct nvmeof_qpair *qp, uint32_t offset, bool eight, uint64_t value)
{
	struct nvme_cmd sqe = { 0 };
	struct nvmf_property_cmd *cmd = (struct nvmf_property_cmd *)&sqe;

	cmd->opc = NVME_ADMIN_FABRICS;
	cmd->fctype = NVMF_FCTYPE_PROPERTY_SET;
	cmd->attrib = eight ? 1 : 0;
	put_le32(&cmd->offset, offset);
	put_le64(&cmd->value, value);
	return qpair_exec(qp, &sqe, NULL, 0, NVME_XFER_NONE, NULL);
}

int fabrics_disconnect(struct nvmeof_qpair *qp)
{
	struct nvme_cmd sqe = { 0 };
	struct nvmf_cmd *cmd = (struct nvmf_cmd *)&sqe;

	cmd->opc = NVME_ADMIN_FABRICS;
	cmd->fctype = NVMF_FCTYPE_DISCONNECT;
	return qpair_exec(qp, &sqe, NULL, 0, NVME_XFER_NONE, NULL);
}
