/* SPDX-License-Identifier: MIT */
/*
 * Error Information log: every failed command is recorded in the controller's ring of
 * NVMF_ERRLOG_ENTRIES entries (read by Get Log Page 01h in log_page.c).
 */
#include "config.h"

#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"

void nvmf_ctrlr_record_error(struct nvmf_ctrlr *c, const struct nvmf_req *req)
{
	const struct nvme_cmd *cmd = &req->cmd;
	struct nvme_error_log_entry *e;
	bool io = req->qpair->qid && !req->local_admin && cmd->opc != NVME_OPC_FABRICS;

	pthread_mutex_lock(&c->err_lock);
	e = &c->errlog[c->err_head];
	c->err_head = (c->err_head + 1) % NVMF_ERRLOG_ENTRIES;
	memset(e, 0, sizeof(*e));
	put_le64(&e->error_count, ++c->err_count);
	put_le16(&e->sqid, req->local_admin ? 0 : req->qpair->qid);
	e->cid = cmd->cid;
	put_le16(&e->status, get_le16(&req->rsp.status) & 0xfffe);
	put_le16(&e->error_location, 0xffff);
	if (io && cmd->opc != NVME_OPC_FLUSH && cmd->opc != NVME_OPC_DATASET_MANAGEMENT)
		put_le64(&e->lba, (uint64_t)get_le32(&cmd->cdw11) << 32 | get_le32(&cmd->cdw10));
	e->nsid = cmd->nsid;
	e->trtype = req->qpair->ops ? req->qpair->ops->trtype : 0;
	pthread_mutex_unlock(&c->err_lock);
}
