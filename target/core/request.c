/* SPDX-License-Identifier: MIT */
/*
 * Requests: the data direction and SGL length transports size a capsule's data with, data
 * movement between core buffers and req->iov, and completion (CID/SQID/SQHD, the error
 * log, handing the response to the transport), and the end of a mapped read's hold on its
 * namespace (nvmf_req_release_data()). Dispatch is in dispatch.c.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/iov.h"
#include "dispatch.h"
#include "reactor/reactor.h"

/* From the command's row (dispatch.h); the opcode's low bits for a command without one, so
 * that its data can still be received and the command refused. */
enum nvme_data_xfer nvmf_req_xfer(const struct nvme_cmd *cmd, bool admin)
{
	const struct nvmf_cmd_desc *d;

	if (cmd->opc == NVME_OPC_FABRICS) {
		const struct nvmf_cmd *f = (const struct nvmf_cmd *)cmd;

		d = nvmf_cmd_lookup(nvmf_fabrics_cmds, f->fctype, NVMF_ON_ANY);
		return d ? d->xfer : (enum nvme_data_xfer)(f->fctype & 0x3);
	}
	d = admin ? nvmf_cmd_lookup(nvmf_admin_cmds, cmd->opc, NVMF_ON_ADMIN)
		  : nvmf_cmd_lookup(nvmf_io_cmds, cmd->opc, NVMF_ON_IO);
	return d ? d->xfer : nvme_opc_xfer(cmd->opc);
}

uint32_t nvmf_req_sgl_length(const struct nvme_cmd *cmd)
{
	const struct nvme_sgl_desc *sgl = &cmd->dptr.sgl1;

	if ((sgl->type >> 4) == NVME_SGL_TYPE_KEYED_DATA_BLOCK)
		return (uint32_t)sgl->length[0] | (uint32_t)sgl->length[1] << 8 |
		       (uint32_t)sgl->length[2] << 16;
	return get_le32(sgl->length);
}

size_t nvmf_req_copy_to(struct nvmf_req *req, size_t off, const void *buf, size_t len)
{
	if (off >= req->length)
		return 0;
	if (len > req->length - off)
		len = req->length - off;
	return iov_copy_from_buf(req->iov, req->iovcnt, off, buf, len);
}

size_t nvmf_req_copy_from(struct nvmf_req *req, size_t off, void *buf, size_t len)
{
	if (off >= req->length)
		return 0;
	if (len > req->length - off)
		len = req->length - off;
	return iov_copy_to_buf(req->iov, req->iovcnt, off, buf, len);
}

void nvmf_req_zero(struct nvmf_req *req, size_t off)
{
	iov_memset(req->iov, req->iovcnt, off, 0, SIZE_MAX);
}

void nvmf_req_reply(struct nvmf_req *req, const void *buf, size_t len)
{
	size_t n = nvmf_req_copy_to(req, 0, buf, len);

	nvmf_req_zero(req, n);
}

void nvmf_req_complete(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	uint16_t status;

	if (req->rl.state != NVMF_RL_NONE)
		nvmf_range_unlock(req);
	if (req->ns) {
		nvmf_ns_iostat_record(req, get_le16(&req->rsp.status) & 0xfffe);
		if (!req->data_mapped) { /* else held until nvmf_req_release_data() */
			nvmf_ns_put(req->ns, qp->reactor);
			req->ns = NULL;
		}
	}
	if (req->scratch) {
		reactor_buf_put(qp->reactor, req->scratch);
		req->scratch = NULL;
	}
	req->rsp.cid = req->cmd.cid; /* both little-endian as on the wire */
	put_le16(&req->rsp.sqid, req->local_admin ? 0 : qp->qid);
	if (!qp->sq_flow_disabled && qp->sqsize)
		qp->sqhd = (uint16_t)((qp->sqhd + 1u) % qp->sqsize);
	put_le16(&req->rsp.sqhd, qp->sq_flow_disabled ? 0 : qp->sqhd);

	status = get_le16(&req->rsp.status) & 0xfffe;
	if (status && qp->ctrlr && status != ST_ABORTED_SQ)
		nvmf_ctrlr_record_error(qp->ctrlr, req);
	qp->ops->req_complete(req);
}

void nvmf_req_release_data(struct nvmf_req *req)
{
	if (!req->data_mapped)
		return;
	req->data_mapped = false;
	req->iovcnt = 0; /* pointed into the namespace: nothing to read any more */
	nvmf_ns_put(req->ns, req->qpair->reactor);
	req->ns = NULL;
}

struct nvmf_ns *nvmf_req_take_data(struct nvmf_req *req)
{
	struct nvmf_ns *ns = req->ns;

	if (!req->data_mapped)
		return NULL;
	req->data_mapped = false;
	req->ns = NULL;
	return ns;
}

void nvmf_req_done(struct nvmf_req *req, uint16_t status)
{
	put_le16(&req->rsp.status, status);
	nvmf_req_complete(req);
}

void nvmf_req_complete_status(struct nvmf_req *req, uint8_t sct, uint8_t sc, bool dnr)
{
	nvmf_req_done(req, (uint16_t)(NVME_STATUS(sct, sc) | (dnr ? NVME_STATUS_DNR : 0)));
}
