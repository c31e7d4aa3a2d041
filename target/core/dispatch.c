/* SPDX-License-Identifier: MIT */
/*
 * Command dispatch: the one path every command takes from nvmf_req_exec() (and
 * nvmf_local_admin_exec()) to its parse handler, and the checks that apply to a queue
 * before any command table is consulted.
 */
#include "config.h"

#include <string.h>

#include "ctrlr.h"
#include "fused.h"

/* PSDT must say "SGL" on fabric queues (01b); 00b is tolerated since fabrics have no PRPs. */
static bool req_psdt_ok(const struct nvmf_req *req)
{
	unsigned int psdt = req->cmd.flags >> NVME_CMD_PSDT_SHIFT;

	if (req->qpair->ctrlr && req->qpair->ctrlr->local)
		return true;
	return psdt == 0 || psdt == NVME_CMD_PSDT_SGL_MPTR_CONTIG;
}

static void req_exec(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	uint16_t status;

	req->ns = NULL;
	req->execute = NULL;
	req->scratch = NULL;
	req->step = 0;
	memset(&req->rsp, 0, sizeof(req->rsp));

	if (!req_psdt_ok(req))
		status = ST_INVALID_FIELD;
	else if ((req->cmd.flags & NVME_CMD_FUSE_MASK) &&
		 (qp->qid == 0 || req->local_admin || req->cmd.opc == NVME_OPC_FABRICS))
		status = ST_INVALID_FIELD; /* fused operations are NVM commands only */
	else if (req->cmd.opc == NVME_ADMIN_FABRICS && !req->local_admin)
		status = nvmf_fabrics_parse(req);
	else if (!qp->connected || !qp->ctrlr)
		status = ST_CMD_SEQ;
	else if (qp->qid == 0 || req->local_admin)
		status = nvmf_admin_parse(req);
	else
		status = nvmf_io_parse(req);

	if (status) {
		nvmf_req_done(req, status);
		return;
	}
	req->execute(req);
}

void nvmf_req_exec(struct nvmf_req *req)
{
	req->local_admin = false;
	req_exec(req);
}

void nvmf_local_admin_exec(struct nvmf_req *req)
{
	req->local_admin = true;
	req_exec(req);
}
