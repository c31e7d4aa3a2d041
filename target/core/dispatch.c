/* SPDX-License-Identifier: MIT */
/*
 * Command dispatch: the one path every command takes from nvmf_req_exec() (and
 * nvmf_local_admin_exec()) to its handler. The checks that hold for any command of a queue
 * come first (PSDT, fused bits), then the command's row in the Fabrics, admin or I/O
 * table (dispatch.h) says what else it needs; an opcode without a row is refused here, in
 * one place, with Invalid Command Opcode. Also the Commands Supported and Effects log page,
 * built from the same rows.
 */
#include "config.h"

#include <string.h>

#include "ana.h"
#include "ctrlr.h"
#include "common/endian.h"
#include "dispatch.h"
#include "qos.h"
#include "fused.h"
#include "reservation.h"

/*
 * What a command without a row on its queue goes through before it is refused: a queue
 * that is not connected, or (admin and I/O) a controller that is not enabled, answers
 * Command Sequence Error first, as for any command of that set; any admin command counts
 * as keep-alive traffic.
 */
static const struct nvmf_cmd_desc fabrics_unsupported = { .needs = NVMF_NEED_CONNECTED };
static const struct nvmf_cmd_desc admin_unsupported = { .needs = NVMF_NEED_ADMIN };
static const struct nvmf_cmd_desc io_unsupported = { .needs = NVMF_NEED_IO };

const struct nvmf_cmd_desc *nvmf_cmd_lookup(const struct nvmf_cmd_desc *table, uint8_t idx,
					    unsigned int on)
{
	const struct nvmf_cmd_desc *d = &table[idx];

	return d->name && (d->on & on) ? d : NULL;
}

unsigned int nvmf_ctrlr_admin_on(const struct nvmf_ctrlr *c)
{
	if (c->local)
		return NVMF_ON_LOCAL;
	return c->discovery ? NVMF_ON_DISC : NVMF_ON_NVM;
}

void nvmf_cmd_effects_fill(struct nvme_cmd_effects_log *log, unsigned int admin_on)
{
	memset(log, 0, sizeof(*log));
	for (unsigned int i = 0; i < NVMF_CMD_TABLE_SIZE; i++) {
		const struct nvmf_cmd_desc *a, *io;

		a = nvmf_cmd_lookup(nvmf_admin_cmds, (uint8_t)i, admin_on);
		io = nvmf_cmd_lookup(nvmf_io_cmds, (uint8_t)i, NVMF_ON_IO);

		if (a)
			put_le32(&log->acs[i], NVME_CMD_EFFECTS_CSUPP | a->effects);
		if (io && admin_on != NVMF_ON_DISC) /* a discovery controller has no I/O queues */
			put_le32(&log->iocs[i], NVME_CMD_EFFECTS_CSUPP | io->effects);
	}
}

/* Queue and controller state the command needs (@d: its row or the set's unsupported row). */
static uint16_t cmd_check_queue(struct nvmf_req *req, const struct nvmf_cmd_desc *d)
{
	struct nvmf_qpair *qp = req->qpair;

	if ((d->needs & NVMF_NEED_UNCONNECTED) && qp->connected)
		return ST_CMD_SEQ;
	if ((d->needs & NVMF_NEED_CONNECTED) && (!qp->connected || !qp->ctrlr))
		return ST_CMD_SEQ;
	if (qp->auth_pending && !d->before_auth)
		return ST_AUTH_REQUIRED;
	if ((d->needs & NVMF_NEED_ENABLED) && !nvmf_ctrlr_ready(qp->ctrlr))
		return ST_CMD_SEQ;
	if (d->needs & NVMF_NEED_KATO)
		nvmf_ctrlr_ka_restart(qp->ctrlr);
	return ST_OK;
}

/* The command's namespace and reservation, then its handler. */
static uint16_t cmd_run_row(struct nvmf_req *req, const struct nvmf_cmd_desc *d)
{
	struct nvmf_qpair *qp = req->qpair;
	uint16_t status;

	if (!d->parse && !d->execute)
		return ST_INVALID_OPCODE; /* the only place an opcode is refused as unknown */
	if (d->needs & NVMF_NEED_NS) {
		uint32_t nsid = get_le32(&req->cmd.nsid);

		if (!(d->needs & NVMF_NEED_NS_OR_ALL) || nsid != NVMF_NSID_ALL) {
			req->ns = nvmf_ns_get(qp->ctrlr->subsys, nsid, qp->reactor);
			if (!req->ns)
				return ST_INVALID_NS;
		}
	}
	if (d->needs & NVMF_NEED_RESV) {
		status = nvmf_resv_check(req);
		if (status)
			return status;
	}
	if (d->parse) {
		status = d->parse(req);
		if (status == ST_OK && d->passthru && req->ns && req->ns->bdev->nvme)
			status = nvmf_io_passthru(req);
		return status;
	}
	req->execute = d->execute;
	return ST_OK;
}

static uint16_t cmd_dispatch(struct nvmf_req *req, const struct nvmf_cmd_desc *d)
{
	uint16_t status = cmd_check_queue(req, d);

	return status ? status : cmd_run_row(req, d);
}

/* Fabrics commands, by fctype; before Connect the queue's kind is not known yet (QID 0). */
static uint16_t fabrics_dispatch(struct nvmf_req *req)
{
	const struct nvmf_cmd *cmd = (const struct nvmf_cmd *)&req->cmd;
	const struct nvmf_qpair *qp = req->qpair;
	unsigned int on = qp->qid     ? NVMF_ON_IO
			  : qp->ctrlr ? nvmf_ctrlr_admin_on(qp->ctrlr)
				      : NVMF_ON_NVM;
	const struct nvmf_cmd_desc *d = nvmf_cmd_lookup(nvmf_fabrics_cmds, cmd->fctype, on);

	return cmd_dispatch(req, d ? d : &fabrics_unsupported);
}

/* Admin queue commands, and admin commands of local controllers. */
static uint16_t admin_dispatch(struct nvmf_req *req)
{
	const struct nvmf_ctrlr *c = req->qpair->ctrlr;
	const struct nvmf_cmd_desc *d =
		c ? nvmf_cmd_lookup(nvmf_admin_cmds, req->cmd.opc, nvmf_ctrlr_admin_on(c)) : NULL;

	return cmd_dispatch(req, d ? d : &admin_unsupported);
}

static uint16_t io_dispatch(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	const struct nvmf_cmd_desc *d = nvmf_cmd_lookup(nvmf_io_cmds, req->cmd.opc, NVMF_ON_IO);
	uint16_t status;

	if (!d && req->cmd.opc == NVME_OPC_WRITE_UNCORRECTABLE)
		d = &nvmf_io_wu_cmd; /* Invalid Opcode unless a drive runs it (passthrough) */
	if (!d)
		d = &io_unsupported;
	status = cmd_check_queue(req, d);
	if (status)
		return status;
	/* The path's ANA state, for every command of a namespace (fused pairs included). */
	if (d->needs & NVMF_NEED_NS) {
		status = nvmf_ana_io_status(qp, get_le32(&req->cmd.nsid));
		if (status)
			return status;
	}
	/* The second command of a fused pair must follow the first immediately. */
	if (req->cmd.flags & NVME_CMD_FUSE_MASK)
		return nvmf_fused_parse(req);
	if (qp->fused_first)
		nvmf_fused_abort(qp);
	return cmd_run_row(req, d);
}

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

	req->start_ns = nvmf_now_ns();
	req->ns = NULL;
	req->execute = NULL;
	req->scratch = NULL;
	req->step = 0;
	req->fused_peer = NULL;
	req->rl.state = NVMF_RL_NONE;
	memset(&req->rsp, 0, sizeof(req->rsp));

	if (!req_psdt_ok(req))
		status = ST_INVALID_FIELD;
	else if ((req->cmd.flags & NVME_CMD_FUSE_MASK) &&
		 (qp->qid == 0 || req->local_admin || req->cmd.opc == NVME_OPC_FABRICS))
		status = ST_INVALID_FIELD; /* fused operations are NVM commands only */
	else if (req->cmd.opc == NVME_OPC_FABRICS && !req->local_admin)
		status = fabrics_dispatch(req);
	else if (qp->qid == 0 || req->local_admin)
		status = admin_dispatch(req);
	else
		status = io_dispatch(req);

	if (status) {
		nvmf_req_done(req, status);
		return;
	}
	if (req->ns && nvmf_qos_submit(req))
		return; /* waits for tokens (qos.c) */
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
