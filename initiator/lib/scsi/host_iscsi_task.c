/* SPDX-License-Identifier: MIT */
/*
 * iSCSI host transport, tasks: one per wire slot (plus one for controller setup), each
 * carrying an NVMe command as one or more SCSI commands. The CmdSN window (commands beyond
 * MaxCmdSN wait locally, in order), completion (status to NVMe status, UNIT ATTENTION
 * retries, the next step of a multi-command translation) and internal commands run
 * synchronously during controller setup.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "host_iscsi.h"
#include "queue/host_transport.h"

#define ISCSI_UA_RETRIES 5 /* UNIT ATTENTION: send the command again */

/* ---- CmdSN window --------------------------------------------------------------------------- */
static bool window_open(const struct iscsi_qpair *iq)
{
	return iscsi_sn_le(iq->s.cmdsn, iq->s.max_cmdsn);
}

/* Send now if the CmdSN window allows, else wait (in order) for it to open. */
static void task_dispatch(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	t->gen++;
	t->itt = (uint32_t)t->gen << 16 | t->index;
	if (t->kind == ISCSI_TASK_NOP) {
		t->cmdsn = iq->s.cmdsn; /* immediate: no CmdSN of its own */
		iscsi_task_issue(iq, t);
		return;
	}
	if (TAILQ_EMPTY(&iq->windowq) && window_open(iq)) {
		t->cmdsn = iq->s.cmdsn++;
		iscsi_task_issue(iq, t);
		return;
	}
	iscsi_task_set_state(t, ISCSI_TASK_WINDOW);
	TAILQ_INSERT_TAIL(&iq->windowq, t, wlink);
}

void iscsi_window_drain(struct iscsi_qpair *iq)
{
	struct host_iscsi_task *t;

	while ((t = TAILQ_FIRST(&iq->windowq)) && window_open(iq)) {
		TAILQ_REMOVE(&iq->windowq, t, wlink);
		t->cmdsn = iq->s.cmdsn++;
		iscsi_task_issue(iq, t);
	}
}

/* ---- Completion ----------------------------------------------------------------------------- */
void iscsi_complete_local(struct nvmeof_req *req, uint16_t status, bool dnr, uint32_t dw0,
			  uint32_t dw1)
{
	struct nvme_cpl cqe = { 0 };
	uint16_t st = NVME_STATUS(NVMEOF_SCT(status), NVMEOF_SC(status));

	put_le32(&cqe.dw0, dw0);
	put_le32(&cqe.dw1, dw1);
	put_le16(&cqe.cid, req->cid);
	put_le16(&cqe.status, (uint16_t)(st | (dnr && status ? NVME_STATUS_DNR : 0)));
	req_complete(req, &cqe, 0);
}

void iscsi_task_free(struct host_iscsi_task *t)
{
	t->req = NULL;
	iscsi_task_set_state(t, ISCSI_TASK_FREE);
}

static int task_build(struct iscsi_qpair *iq, struct host_iscsi_task *t);

/* Status arrived and every PDU of the task is out: decide what it means. */
void iscsi_task_finish(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	struct nvmeof_req *req = t->req;
	uint16_t st;
	uint64_t xt;
	bool dnr;

	if (!req) { /* internal: the caller looks at the outcome */
		t->done = true;
		iscsi_task_set_state(t, ISCSI_TASK_WAIT);
		return;
	}
	if (t->ddgst_err) {
		iscsi_task_free(t);
		req_complete(req, NULL, -EBADMSG);
		return;
	}
	if (t->kind == ISCSI_TASK_NOP) {
		iscsi_task_free(t);
		iscsi_complete_local(req, 0, false, 0, 0);
		return;
	}
	if (t->response != ISCSI_RESPONSE_COMPLETED) {
		iscsi_task_free(t);
		nlog_warn("queue %u: iSCSI target failure (response 0x%02x) for CDB 0x%02x",
			  iq->qp.qid, t->response, t->enc.cdb[0]);
		iscsi_complete_local(req, NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL), false,
				     0, 0);
		return;
	}
	if (scsi_is_unit_attention(t->status, t->sense, t->sense_len) &&
	    t->retries < ISCSI_UA_RETRIES) {
		uint16_t asc = 0;
		uint8_t key;

		scsi_sense_parse(t->sense, t->sense_len, &key, &asc);
		nlog_debug("queue %u: unit attention (ASC/ASCQ %02x/%02x), sending CDB 0x%02x "
			   "again",
			   iq->qp.qid, asc >> 8, asc & 0xff, t->enc.cdb[0]);
		t->retries++;
		task_dispatch(iq, t);
		return;
	}
	xt = qpair_xlate_begin(&iq->qp);
	st = scsi_status_to_nvme(req->sqe.opc, t->status, t->sense, t->sense_len, &dnr);
	qpair_xlate_end(&iq->qp, xt);
	if (t->kind == ISCSI_TASK_SHUTDOWN) {
		if (st)
			nlog_warn("SYNCHRONIZE CACHE at shutdown failed: %s",
				  nvmeof_status_name(st));
		iscsi_task_free(t);
		iscsi_complete_local(req, 0, false, 0, 0);
		return;
	}
	/* Residuals matter where the data is the caller's blocks (as in Linux sd); some
	 * targets report one for the parameter list of a successful UNMAP. */
	if (st == 0 &&
	    ((t->read && t->in_next != t->edtl) ||
	     ((t->enc.data == SCSI_DATA_OUT || t->enc.data == SCSI_DATA_OUT_TWICE) &&
	      (t->rflags & (ISCSI_RSP_UNDERFLOW | ISCSI_RSP_OVERFLOW)) && t->residual))) {
		nlog_warn("queue %u: CDB 0x%02x moved %u of %u bytes (residual %u)", iq->qp.qid,
			  t->enc.cdb[0], t->read ? t->in_next : t->edtl - t->residual, t->edtl,
			  t->residual);
		st = NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR);
	}
	if (st == 0 && !t->enc.last) {
		t->step++;
		t->retries = 0;
		if (task_build(iq, t) == 0)
			task_dispatch(iq, t);
		return;
	}
	iscsi_task_free(t);
	iscsi_complete_local(req, st, dnr, 0, 0);
}

/* Status for @t: finish now, or once its half-sent PDU has gone out. */
int iscsi_task_status(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	t->r2t_pending = false;
	t->out_end = t->out_next;
	if (t->state == ISCSI_TASK_SEND && t->pdu.queued) {
		if (t->pdu.sent) {
			t->finish_after_send = true;
			return 0;
		}
		TAILQ_REMOVE(&iq->sendq, &t->pdu, link);
		t->pdu.queued = false;
	}
	iscsi_task_finish(iq, t);
	return 0;
}

/* ---- Tasks for NVMe commands ---------------------------------------------------------------- */
/* Translate the task's current step; 0, or 1 when the request was completed locally. */
static int task_build(struct iscsi_qpair *iq, struct host_iscsi_task *t)
{
	struct nvmeof_req *req = t->req;
	struct iovec v[NVMEOF_IOV_MAX];
	const struct iovec *iov = req->iov;
	int iovcnt = req->iovcnt, rc;
	uint32_t avail;
	uint64_t xt;

	if (req->data_off && req->data_len) {
		iovcnt = iov_slice(req->iov, req->iovcnt, req->data_off, req->data_len, v,
				   NVMEOF_IOV_MAX);
		iov = v;
		if (iovcnt < 0)
			iovcnt = 0;
	}
	xt = qpair_xlate_begin(&iq->qp);
	rc = scsi_encap_build(&req->sqe, &iq->lu->lim, t->step, iov, iovcnt, req->data_len,
			      t->param, &t->enc);
	qpair_xlate_end(&iq->qp, xt);
	if (rc) {
		iscsi_task_free(t);
		iscsi_complete_local(req, rc == SCSI_ENCAP_DONE ? 0 : (uint16_t)rc, true, 0, 0);
		return 1;
	}
	t->read = t->enc.data == SCSI_DATA_IN;
	t->write = t->enc.data != SCSI_DATA_IN && t->enc.data != SCSI_DATA_NONE;
	t->edtl = t->enc.xfer_len;
	memset(&t->src, 0, sizeof(t->src));
	avail = req->data_len;
	switch (t->enc.data) {
	case SCSI_DATA_NONE:
		break;
	case SCSI_DATA_IN:
	case SCSI_DATA_OUT:
	case SCSI_DATA_OUT_TWICE:
		if (t->enc.data_off > avail ||
		    (t->enc.data == SCSI_DATA_OUT_TWICE ? t->enc.part_len : t->edtl) >
			    avail - t->enc.data_off) {
			iscsi_task_free(t);
			iscsi_complete_local(req,
					     NVMEOF_STATUS(NVME_SCT_GENERIC,
							   NVME_SC_DATA_SGL_LENGTH_INVALID),
					     true, 0, 0);
			return 1;
		}
		t->src.iov = req->iov;
		t->src.iovcnt = req->iovcnt;
		t->src.off = req->data_off + t->enc.data_off;
		t->src.part = t->enc.data == SCSI_DATA_OUT_TWICE ? t->enc.part_len : 0;
		break;
	case SCSI_DATA_OUT_PARAM:
		t->internal_iov.iov_base = t->param;
		t->internal_iov.iov_len = SCSI_ENCAP_PARAM_LEN;
		t->src.iov = &t->internal_iov;
		t->src.iovcnt = 1;
		break;
	case SCSI_DATA_OUT_ZERO_BLOCK:
		if (t->edtl > ISCSI_ZERO_BLOCK_MAX) {
			iscsi_task_free(t);
			iscsi_complete_local(req, NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL),
					     false, 0, 0);
			return 1;
		}
		t->src.iov = &iq->zero_iov;
		t->src.iovcnt = 1;
		break;
	}
	return 0;
}

int iscsi_start_task(struct iscsi_qpair *iq, struct nvmeof_req *req, enum iscsi_task_kind kind)
{
	struct host_iscsi_task *t = &iq->tasks[req->slot];

	if (t->state != ISCSI_TASK_FREE)
		return -EBUSY;
	t->req = req;
	t->kind = kind;
	t->step = 0;
	t->retries = 0;
	if (kind == ISCSI_TASK_NOP) {
		t->read = t->write = false;
		t->edtl = 0;
		memset(&t->src, 0, sizeof(t->src));
	} else if (kind == ISCSI_TASK_SHUTDOWN) {
		static const struct scsi_lu_limits any;
		struct nvme_cmd flush = { .opc = NVME_OPC_FLUSH };

		scsi_encap_build(&flush, &any, 0, NULL, 0, 0, t->param, &t->enc);
		t->read = t->write = false;
		t->edtl = 0;
		memset(&t->src, 0, sizeof(t->src));
	} else if (!iq->lu) {
		t->req = NULL;
		return -ENODEV;
	} else if (task_build(iq, t)) {
		return 0; /* completed locally */
	}
	task_dispatch(iq, t);
	return 0;
}

/* ---- Internal commands (controller setup) --------------------------------------------------- */
int iscsi_exec_internal(struct iscsi_qpair *iq, const uint8_t *cdb, uint8_t cdb_len, void *buf,
			uint32_t len, bool write, uint8_t *status, uint8_t *sense,
			uint32_t *sense_len, uint32_t *got, int timeout_ms)
{
	struct host_iscsi_task *t = &iq->tasks[iq->qp.nreqs];
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int rc = 0;

	if (iq->fd < 0)
		return -ENOTCONN;
	if (t->state != ISCSI_TASK_FREE || cdb_len > SCSI_CDB_MAX)
		return -EINVAL;
	memset(&t->enc, 0, sizeof(t->enc));
	memcpy(t->enc.cdb, cdb, cdb_len);
	t->enc.cdb_len = cdb_len;
	t->enc.last = true;
	t->req = NULL;
	t->kind = ISCSI_TASK_SCSI;
	t->read = len && !write;
	t->write = len && write;
	t->edtl = len;
	t->internal_iov.iov_base = buf;
	t->internal_iov.iov_len = len;
	t->src.iov = &t->internal_iov;
	t->src.iovcnt = 1;
	t->src.off = 0;
	t->src.part = 0;
	t->done = false;
	task_dispatch(iq, t);

	while (!t->done) {
		struct pollfd pfd;
		uint64_t now;

		rc = iscsi_io(iq, POLLIN | POLLOUT);
		if (rc < 0 || t->done)
			break;
		now = now_ms();
		if (now >= deadline) {
			iscsi_fatal(iq, -ETIMEDOUT, "SCSI command 0x%02x timed out after %d ms",
				    cdb[0], timeout_ms);
			rc = -ETIMEDOUT;
			break;
		}
		pfd.fd = iq->fd;
		pfd.events = iscsi_which_events(&iq->qp);
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
	}
	if (!t->done) {
		if (t->state == ISCSI_TASK_WINDOW)
			TAILQ_REMOVE(&iq->windowq, t, wlink);
		iscsi_task_free(t);
		return rc < 0 ? rc : -ECONNRESET;
	}
	*status = t->response == ISCSI_RESPONSE_COMPLETED ? t->status : SCSI_STATUS_BUSY;
	if (sense && sense_len) {
		memcpy(sense, t->sense, t->sense_len);
		*sense_len = t->sense_len;
	}
	if (got)
		*got = t->in_next;
	t->done = false;
	iscsi_task_free(t);
	return 0;
}
