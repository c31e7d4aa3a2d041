/* SPDX-License-Identifier: MIT */
/*
 * NVM command set I/O commands: Read, Write, Flush, Write Zeroes, Dataset Management,
 * Compare and Verify. Parse validates (namespace, LBA range, MDTS, SGL length) and builds
 * the bdev_io; execute submits it. The namespace stays held (req->ns) until completion.
 * Nothing here allocates memory or takes a lock.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/iov.h"
#include "fused.h"
#include "lba_status.h"
#include "common/log.h"
#include "reactor/reactor.h"
#include "reservation.h"

#define ST_COMPARE_FAILURE NVMF_ST_DNR(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE)
#define ST_INTERRUPTED NVMF_ST(NVME_SCT_GENERIC, NVME_SC_COMMAND_INTERRUPTED)

static uint64_t cmd_slba(const struct nvmf_req *req)
{
	return (uint64_t)get_le32(&req->cmd.cdw11) << 32 | get_le32(&req->cmd.cdw10);
}

static uint32_t cmd_nlb(const struct nvmf_req *req)
{
	return (get_le32(&req->cmd.cdw12) & NVME_RW_NLB_MASK) + 1;
}

static bool lba_range_ok(const struct nvmf_ns *ns, uint64_t slba, uint64_t nlb)
{
	return slba <= ns->nblocks && nlb <= ns->nblocks - slba;
}

static uint16_t errno_status(int rc, bool write)
{
	switch (rc) {
	case -EIO:
		return write ? NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT)
			     : NVMF_ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR);
	case -ENOSPC:
		return NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED);
	default:
		return ST_INTERNAL;
	}
}

/* Writes must be durable before completion unless the host sees an enabled volatile cache. */
static bool need_fua(const struct nvmf_req *req)
{
	const struct nvmf_ctrlr *c = req->qpair->ctrlr;

	if (get_le32(&req->cmd.cdw12) & NVME_RW_FUA)
		return true;
	return req->ns->bdev->volatile_cache &&
	       !(__atomic_load_n(&c->vwc_present, __ATOMIC_RELAXED) &&
		 __atomic_load_n(&c->wce, __ATOMIC_RELAXED));
}

static void bio_setup(struct nvmf_req *req, enum bdev_op op, uint64_t offset, uint64_t len,
		      void (*cb)(struct bdev_io *, int))
{
	struct bdev_io *bio = &req->bio;

	bio->op = op;
	bio->fua = false;
	bio->offset = offset;
	bio->len = len;
	bio->iov = req->iov;
	bio->iovcnt = req->iovcnt;
	bio->reactor = req->qpair->reactor;
	bio->cb = cb;
	bio->cb_arg = req;
}

/* Multi-step commands: run @step until it stops asking for another round (a backend may
 * complete inside submit; this keeps the stack flat). */
static void run_steps(struct nvmf_req *req, void (*step)(struct nvmf_req *))
{
	req->in_submit = true;
	do {
		req->again = false;
		step(req);
	} while (req->again);
	req->in_submit = false;
}

static void next_step(struct nvmf_req *req, void (*step)(struct nvmf_req *))
{
	if (req->in_submit)
		req->again = true;
	else
		run_steps(req, step);
}

/* ---- Read / Write --------------------------------------------------------------------------- */

static void rw_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;
	struct nvmf_qpair_stats *st = &req->qpair->stats;
	bool write = bio->op == BDEV_OP_WRITE;

	if (rc) {
		nvmf_req_done(req, errno_status(rc, write));
		return;
	}
	if (write) {
		NVMF_STAT_ADD(st->write_cmds, 1);
		NVMF_STAT_ADD(st->write_bytes, bio->len);
	} else {
		NVMF_STAT_ADD(st->read_cmds, 1);
		NVMF_STAT_ADD(st->read_bytes, bio->len);
	}
	nvmf_req_done(req, ST_OK);
}

static void submit_exec(struct nvmf_req *req)
{
	bdev_submit(req->ns->bdev, &req->bio);
}

/* Range, MDTS and SGL checks shared by commands that move data; returns the length. */
static uint16_t data_cmd_check(struct nvmf_req *req, uint64_t *len)
{
	struct nvmf_ns *ns = req->ns;
	uint64_t slba = cmd_slba(req);
	uint32_t nlb = cmd_nlb(req);

	if (!lba_range_ok(ns, slba, nlb))
		return ST_LBA_RANGE;
	*len = (uint64_t)nlb << ns->block_shift;
	if (*len > req->qpair->tgt->opts.max_io_size)
		return ST_INVALID_FIELD;
	if (req->length != *len)
		return ST_SGL_LEN;
	return ST_OK;
}

static uint16_t rw_parse(struct nvmf_req *req, bool write)
{
	uint64_t len;
	uint16_t status = data_cmd_check(req, &len);

	if (status)
		return status;
	bio_setup(req, write ? BDEV_OP_WRITE : BDEV_OP_READ, cmd_slba(req) << req->ns->block_shift,
		  len, rw_done);
	if (write)
		req->bio.fua = need_fua(req);
	req->execute = submit_exec;
	return ST_OK;
}

/* ---- Write Zeroes --------------------------------------------------------------------------- */

static void wz_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;

	if (rc) {
		nvmf_req_done(req, errno_status(rc, true));
		return;
	}
	NVMF_STAT_ADD(req->qpair->stats.write_cmds, 1);
	nvmf_req_done(req, ST_OK);
}

static uint16_t wz_parse(struct nvmf_req *req)
{
	struct nvmf_ns *ns = req->ns;
	uint64_t slba = cmd_slba(req);
	uint32_t nlb = cmd_nlb(req);
	bool deac = get_le32(&req->cmd.cdw12) & NVME_RW_DEAC;

	if (!lba_range_ok(ns, slba, nlb))
		return ST_LBA_RANGE;
	/* Deallocated blocks read back as zeroes (DLFEAT), so DEAC may simply discard. */
	bio_setup(req, deac ? BDEV_OP_DISCARD : BDEV_OP_WRITE_ZEROES, slba << ns->block_shift,
		  (uint64_t)nlb << ns->block_shift, wz_done);
	req->bio.iov = NULL;
	req->bio.iovcnt = 0;
	req->bio.fua = need_fua(req);
	req->execute = submit_exec;
	return ST_OK;
}

/* ---- Flush ---------------------------------------------------------------------------------- */

static void flush_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;

	NVMF_STAT_ADD(req->qpair->stats.other_cmds, 1);
	nvmf_req_done(req, rc ? errno_status(rc, true) : ST_OK);
}

static void flush_all_step(struct nvmf_req *req);

static void flush_all_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;

	nvmf_ns_put(req->ns, req->qpair->reactor);
	req->ns = NULL;
	if (rc) {
		nvmf_req_done(req, errno_status(rc, true));
		return;
	}
	next_step(req, flush_all_step);
}

/* Flush with NSID FFFFFFFFh: every active namespace, one after the other. */
static void flush_all_step(struct nvmf_req *req)
{
	struct nvmf_subsys *s = req->qpair->ctrlr->subsys;
	struct nvmf_ns *ns = NULL;
	uint32_t nsid;

	for (nsid = req->step; nsid <= NVMF_MAX_NAMESPACES && !ns; nsid++)
		ns = nvmf_ns_get(s, nsid, req->qpair->reactor);
	if (!ns) {
		NVMF_STAT_ADD(req->qpair->stats.other_cmds, 1);
		nvmf_req_done(req, ST_OK);
		return;
	}
	req->step = nsid;
	req->ns = ns;
	bio_setup(req, BDEV_OP_FLUSH, 0, 0, flush_all_done);
	req->bio.iov = NULL;
	req->bio.iovcnt = 0;
	bdev_submit(ns->bdev, &req->bio);
}

static void flush_all_exec(struct nvmf_req *req)
{
	req->step = 1;
	run_steps(req, flush_all_step);
}

/* ---- Dataset Management --------------------------------------------------------------------- */

static void dsm_range(struct nvmf_req *req, uint32_t i, uint64_t *slba, uint32_t *nlb)
{
	struct nvme_dsm_range r;

	nvmf_req_copy_from(req, (size_t)i * sizeof(r), &r, sizeof(r));
	*slba = get_le64(&r.slba);
	*nlb = get_le32(&r.nlb);
}

static void dsm_step(struct nvmf_req *req);

static void dsm_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;

	if (rc) {
		nvmf_req_done(req, errno_status(rc, true));
		return;
	}
	next_step(req, dsm_step);
}

static void dsm_step(struct nvmf_req *req)
{
	uint64_t slba = 0;
	uint32_t nlb = 0;

	while (req->step < req->total) {
		dsm_range(req, req->step++, &slba, &nlb);
		if (nlb)
			break;
	}
	if (!nlb) {
		NVMF_STAT_ADD(req->qpair->stats.other_cmds, 1);
		nvmf_req_done(req, ST_OK);
		return;
	}
	bio_setup(req, BDEV_OP_DISCARD, slba << req->ns->block_shift,
		  (uint64_t)nlb << req->ns->block_shift, dsm_done);
	req->bio.iov = NULL;
	req->bio.iovcnt = 0;
	bdev_submit(req->ns->bdev, &req->bio);
}

static void dsm_exec(struct nvmf_req *req)
{
	bool deallocate = get_le32(&req->cmd.cdw11) & NVME_DSM_ATTR_AD;

	/* Check every range before touching any. */
	for (uint32_t i = 0; i < req->total; i++) {
		uint64_t slba;
		uint32_t nlb;

		dsm_range(req, i, &slba, &nlb);
		if (nlb && !lba_range_ok(req->ns, slba, nlb)) {
			nvmf_req_done(req, ST_LBA_RANGE);
			return;
		}
	}
	if (!deallocate) { /* only access hints: nothing to do */
		NVMF_STAT_ADD(req->qpair->stats.other_cmds, 1);
		nvmf_req_done(req, ST_OK);
		return;
	}
	req->step = 0;
	run_steps(req, dsm_step);
}

static uint16_t dsm_parse(struct nvmf_req *req)
{
	uint32_t nr = (get_le32(&req->cmd.cdw10) & 0xff) + 1;

	if (req->length < nr * sizeof(struct nvme_dsm_range))
		return ST_SGL_LEN;
	req->total = nr;
	req->execute = dsm_exec;
	return ST_OK;
}

/* ---- Compare and Verify: read into a scratch buffer, chunk by chunk ------------------------- */

static void read_chunk_step(struct nvmf_req *req);

static void read_chunk_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;
	bool compare = req->cmd.opc == NVME_OPC_COMPARE;

	if (rc) {
		nvmf_req_done(req, errno_status(rc, false));
		return;
	}
	if (compare && iov_cmp_buf(req->iov, req->iovcnt, req->step, req->scratch, bio->len)) {
		nvmf_req_done(req, ST_COMPARE_FAILURE);
		return;
	}
	req->step += (uint32_t)bio->len;
	next_step(req, read_chunk_step);
}

static void read_chunk_step(struct nvmf_req *req)
{
	uint64_t base = cmd_slba(req) << req->ns->block_shift;
	uint64_t left = req->total - req->step;
	size_t chunk = reactor_buf_size();

	if (!left) {
		NVMF_STAT_ADD(req->qpair->stats.read_cmds, 1);
		NVMF_STAT_ADD(req->qpair->stats.read_bytes, req->total);
		nvmf_req_done(req, ST_OK);
		return;
	}
	/* Whole blocks per chunk. */
	chunk &= ~(((size_t)1 << req->ns->block_shift) - 1);
	if (chunk > left)
		chunk = left;
	req->scratch_iov.iov_base = req->scratch;
	req->scratch_iov.iov_len = chunk;
	bio_setup(req, BDEV_OP_READ, base + req->step, chunk, read_chunk_done);
	req->bio.iov = &req->scratch_iov;
	req->bio.iovcnt = 1;
	bdev_submit(req->ns->bdev, &req->bio);
}

static void read_chunks_exec(struct nvmf_req *req)
{
	req->scratch = reactor_buf_get(req->qpair->reactor);
	if (!req->scratch || (reactor_buf_size() >> req->ns->block_shift) == 0) {
		nvmf_req_done(req, ST_INTERRUPTED); /* retryable: buffers are busy */
		return;
	}
	req->step = 0;
	run_steps(req, read_chunk_step);
}

static uint16_t compare_parse(struct nvmf_req *req)
{
	uint64_t len;
	uint16_t status = data_cmd_check(req, &len);

	if (status)
		return status;
	req->total = len;
	req->execute = read_chunks_exec;
	return ST_OK;
}

static void verify_ok_exec(struct nvmf_req *req)
{
	NVMF_STAT_ADD(req->qpair->stats.read_cmds, 1);
	NVMF_STAT_ADD(req->qpair->stats.read_bytes, req->total);
	nvmf_req_done(req, ST_OK);
}

static uint16_t verify_parse(struct nvmf_req *req)
{
	uint64_t slba = cmd_slba(req);
	uint32_t nlb = cmd_nlb(req);

	if (!lba_range_ok(req->ns, slba, nlb))
		return ST_LBA_RANGE;
	req->total = (uint64_t)nlb << req->ns->block_shift;
	/* Memory-backed namespaces cannot have unreadable blocks: the range check is all. */
	req->execute = req->ns->bdev->persistent ? read_chunks_exec : verify_ok_exec;
	return ST_OK;
}

/* ---- Dispatch ------------------------------------------------------------------------------- */

uint16_t nvmf_io_parse(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	struct nvmf_ctrlr *c = qp->ctrlr;
	uint32_t nsid = get_le32(&req->cmd.nsid);
	uint8_t opc = req->cmd.opc;
	uint16_t status;

	if (!nvmf_ctrlr_ready(c))
		return ST_CMD_SEQ;
	/* The second command of a fused pair must follow the first immediately. */
	if (req->cmd.flags & NVME_CMD_FUSE_MASK)
		return nvmf_fused_parse(req);
	if (qp->fused_first)
		nvmf_fused_abort(qp);

	switch (opc) {
	case NVME_OPC_FLUSH:
		if (nsid == NVMF_NSID_ALL) {
			req->execute = flush_all_exec;
			return ST_OK;
		}
		break;
	case NVME_OPC_READ:
	case NVME_OPC_WRITE:
	case NVME_OPC_COMPARE:
	case NVME_OPC_WRITE_ZEROES:
	case NVME_OPC_DATASET_MANAGEMENT:
	case NVME_OPC_VERIFY:
	case NVME_OPC_RESERVATION_REGISTER:
	case NVME_OPC_RESERVATION_REPORT:
	case NVME_OPC_RESERVATION_ACQUIRE:
	case NVME_OPC_RESERVATION_RELEASE:
	case NVMF_OPC_VS_LBA_STATUS:
		break;
	default:
		return ST_INVALID_OPCODE;
	}

	req->ns = nvmf_ns_get(c->subsys, nsid, qp->reactor);
	if (!req->ns)
		return ST_INVALID_NS;

	switch (opc) {
	case NVME_OPC_RESERVATION_REGISTER:
	case NVME_OPC_RESERVATION_REPORT:
	case NVME_OPC_RESERVATION_ACQUIRE:
	case NVME_OPC_RESERVATION_RELEASE:
		return nvmf_resv_parse(req);
	}
	status = nvmf_resv_check(req);
	if (status)
		return status;

	switch (opc) {
	case NVMF_OPC_VS_LBA_STATUS:
		return nvmf_lba_status_parse(req);
	case NVME_OPC_READ:
		return rw_parse(req, false);
	case NVME_OPC_WRITE:
		return rw_parse(req, true);
	case NVME_OPC_FLUSH:
		bio_setup(req, BDEV_OP_FLUSH, 0, 0, flush_done);
		req->bio.iov = NULL;
		req->bio.iovcnt = 0;
		req->execute = submit_exec;
		return ST_OK;
	case NVME_OPC_WRITE_ZEROES:
		return wz_parse(req);
	case NVME_OPC_DATASET_MANAGEMENT:
		return dsm_parse(req);
	case NVME_OPC_COMPARE:
		return compare_parse(req);
	default:
		return verify_parse(req);
	}
}
