/* SPDX-License-Identifier: MIT */
/*
 * NVM command set I/O commands: the I/O command table, and Read, Write, Flush, Write
 * Zeroes, Dataset Management, Compare and Verify (reservations in reservation.c, Get LBA
 * Allocation Status in lba_status.c, fused Compare and Write in fused.c). Parse validates
 * (LBA range, MDTS, SGL length) and builds the bdev_io; execute submits it. The dispatcher
 * holds the namespace (req->ns) until completion. Commands that modify blocks take a shared
 * LBA range lock first (range_lock.h: a counter bump unless a Compare and Write is active
 * on the namespace). Nothing here allocates memory. A Read on a queue that takes mapped data
 * (qp->map_read_data) lets the backend lend its memory instead of copying into req->iov.
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
#include "dispatch.h"
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
	bio->map_ok = false;
	bio->mapped = false;
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
		if (bio->mapped) {
			/* bio->iov is req->iov: it now describes the namespace memory. */
			req->iovcnt = bio->iovcnt;
			req->data_mapped = true;
		}
	}
	nvmf_req_done(req, ST_OK);
}

static void submit_exec(struct nvmf_req *req)
{
	bdev_submit(req->ns->bdev, &req->bio);
}

/* Commands that modify blocks hold their range shared (range_lock.h): they cannot land
 * between the compare and the write of a Compare and Write. */
static void write_locked_exec(struct nvmf_req *req)
{
	nvmf_range_lock(req, req->bio.offset >> req->ns->block_shift,
			req->bio.len >> req->ns->block_shift, false, submit_exec);
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
	else /* the data may be sent from the namespace memory (nvmf_req_release_data()) */
		req->bio.map_ok = req->qpair->map_read_data && !req->map_denied && req->iovcnt > 0;
	req->execute = write ? write_locked_exec : submit_exec;
	return ST_OK;
}

static uint16_t read_parse(struct nvmf_req *req)
{
	return rw_parse(req, false);
}

static uint16_t write_parse(struct nvmf_req *req)
{
	return rw_parse(req, true);
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
	req->execute = write_locked_exec;
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

static uint16_t flush_parse(struct nvmf_req *req)
{
	if (!req->ns) { /* NSID FFFFFFFFh */
		req->execute = flush_all_exec;
		return ST_OK;
	}
	bio_setup(req, BDEV_OP_FLUSH, 0, 0, flush_done);
	req->bio.iov = NULL;
	req->bio.iovcnt = 0;
	req->execute = submit_exec;
	return ST_OK;
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

static void dsm_start(struct nvmf_req *req)
{
	req->step = 0;
	run_steps(req, dsm_step);
}

static void dsm_exec(struct nvmf_req *req)
{
	bool deallocate = get_le32(&req->cmd.cdw11) & NVME_DSM_ATTR_AD;
	uint64_t lo = UINT64_MAX, hi = 0;

	/* Check every range before touching any. */
	for (uint32_t i = 0; i < req->total; i++) {
		uint64_t slba;
		uint32_t nlb;

		dsm_range(req, i, &slba, &nlb);
		if (nlb && !lba_range_ok(req->ns, slba, nlb)) {
			nvmf_req_done(req, ST_LBA_RANGE);
			return;
		}
		if (nlb && slba < lo)
			lo = slba;
		if (nlb && slba + nlb > hi)
			hi = slba + nlb;
	}
	if (!deallocate) { /* only access hints: nothing to do */
		NVMF_STAT_ADD(req->qpair->stats.other_cmds, 1);
		nvmf_req_done(req, ST_OK);
		return;
	}
	if (lo >= hi) { /* no range with blocks */
		dsm_start(req);
		return;
	}
	/* One shared lock over the span of all ranges: simple, and only ever too wide. */
	nvmf_range_lock(req, lo, hi - lo, false, dsm_start);
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

/* ---- Write Uncorrectable: only a passthrough namespace's drive runs it ---------------------- */

static uint16_t wu_parse(struct nvmf_req *req)
{
	const struct bdev_nvme_id *d = req->ns->bdev->nvme;

	if (!d || !(d->oncs & NVME_CTRL_ONCS_WRITE_UNCORRECTABLE))
		return ST_INVALID_OPCODE;
	if (!lba_range_ok(req->ns, cmd_slba(req), cmd_nlb(req)))
		return ST_LBA_RANGE;
	return ST_OK; /* the dispatcher passes it through */
}

/* Outside the table: only a passthrough namespace runs it, so the Commands Supported and
 * Effects log (built from the table) does not list it; io_dispatch() looks here. */
const struct nvmf_cmd_desc nvmf_io_wu_cmd = {
	.name = "Write Uncorrectable",
	.parse = wu_parse,
	.xfer = NVME_XFER_NONE,
	.on = NVMF_ON_IO,
	.needs = NVMF_NEED_IO | NVMF_NEED_NS | NVMF_NEED_RESV | NVMF_NEED_RESV_WRITE,
	.effects = NVME_CMD_EFFECTS_LBCC,
	.passthru = true,
};

/* ---- NVMe passthrough (bdev->nvme): the drive runs the host's command ---------------------- */

static bool pt_modifies(uint8_t opc)
{
	return opc == NVME_OPC_WRITE || opc == NVME_OPC_WRITE_ZEROES ||
	       opc == NVME_OPC_DATASET_MANAGEMENT || opc == NVME_OPC_WRITE_UNCORRECTABLE;
}

/* The drive's status goes back as it is; a kernel error becomes one of ours. */
static void pt_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *req = bio->cb_arg;
	struct nvmf_qpair_stats *st = &req->qpair->stats;
	uint8_t opc = req->cmd.opc;

	if (bio->nvme_status) {
		nvmf_req_done(req, bio->nvme_status);
		return;
	}
	if (rc) {
		nvmf_req_done(req, errno_status(rc, pt_modifies(opc)));
		return;
	}
	if (opc == NVME_OPC_WRITE) {
		NVMF_STAT_ADD(st->write_cmds, 1);
		NVMF_STAT_ADD(st->write_bytes, bio->len);
	} else if (opc == NVME_OPC_READ) {
		NVMF_STAT_ADD(st->read_cmds, 1);
		NVMF_STAT_ADD(st->read_bytes, bio->len);
	}
	nvmf_req_done(req, ST_OK);
}

/* Commands that modify blocks hold their range shared, as the native ones do; Dataset
 * Management names several ranges and holds the whole namespace shared. */
static void pt_locked_exec(struct nvmf_req *req)
{
	if (req->cmd.opc == NVME_OPC_DATASET_MANAGEMENT)
		nvmf_range_lock(req, 0, req->ns->nblocks, false, submit_exec);
	else
		nvmf_range_lock(req, cmd_slba(req), cmd_nlb(req), false, submit_exec);
}

uint16_t nvmf_io_passthru(struct nvmf_req *req)
{
	const struct bdev_nvme_id *d = req->ns->bdev->nvme;
	uint8_t opc = req->cmd.opc;
	bool lba = opc != NVME_OPC_FLUSH && opc != NVME_OPC_DATASET_MANAGEMENT;
	struct bdev_io *bio = &req->bio;

	bio_setup(req, BDEV_OP_NVME, lba ? cmd_slba(req) << req->ns->block_shift : 0,
		  opc & 3 ? req->length : 0, pt_done);
	if (!bio->len) {
		bio->iov = NULL;
		bio->iovcnt = 0;
	}
	if (d->max_xfer && bio->len > d->max_xfer)
		return ST_INVALID_FIELD; /* beyond the drive's MDTS (Identify reports the smaller) */
	bio->nvme_cmd = &req->cmd;
	bio->nvme_status = 0;
	bio->fua = opc == NVME_OPC_WRITE && need_fua(req);
	req->execute = pt_modifies(opc) ? pt_locked_exec : submit_exec;
	return ST_OK;
}

/* ---- The NVM command table (see dispatch.h) ------------------------------------------------ */

/* Commands on the data of one namespace: it must be active and the host not fenced off. */
#define NEED_NS_IO (NVMF_NEED_IO | NVMF_NEED_NS | NVMF_NEED_RESV)
/* ... and modify it: fenced off by write-exclusive reservations too. */
#define NEED_NS_WRITE (NEED_NS_IO | NVMF_NEED_RESV_WRITE)
/* Reservation commands: the namespace, but no reservation check (they manage it). */
#define NEED_NS_RESV (NVMF_NEED_IO | NVMF_NEED_NS)
#define LBCC         NVME_CMD_EFFECTS_LBCC

const struct nvmf_cmd_desc nvmf_io_cmds[NVMF_CMD_TABLE_SIZE] = {
	[NVME_OPC_FLUSH] = { .name = "Flush",
			     .parse = flush_parse,
			     .xfer = NVME_XFER_NONE,
			     .on = NVMF_ON_IO,
			     .needs = NEED_NS_WRITE | NVMF_NEED_NS_OR_ALL,
			     .passthru = true },
	[NVME_OPC_WRITE] = { .name = "Write",
			     .parse = write_parse,
			     .xfer = NVME_XFER_HOST_TO_CTRLR,
			     .on = NVMF_ON_IO,
			     .needs = NEED_NS_WRITE,
			     .effects = LBCC,
			     .passthru = true },
	[NVME_OPC_READ] = { .name = "Read",
			    .parse = read_parse,
			    .xfer = NVME_XFER_CTRLR_TO_HOST,
			    .on = NVMF_ON_IO,
			    .needs = NEED_NS_IO,
			    .passthru = true },
	[NVME_OPC_COMPARE] = { .name = "Compare",
			       .parse = compare_parse,
			       .xfer = NVME_XFER_HOST_TO_CTRLR,
			       .on = NVMF_ON_IO,
			       .needs = NEED_NS_IO,
			       .passthru = true },
	[NVME_OPC_WRITE_ZEROES] = { .name = "Write Zeroes",
				    .parse = wz_parse,
				    .xfer = NVME_XFER_NONE,
				    .on = NVMF_ON_IO,
				    .needs = NEED_NS_WRITE,
				    .effects = LBCC,
				    .passthru = true },
	[NVME_OPC_DATASET_MANAGEMENT] = { .name = "Dataset Management",
					  .parse = dsm_parse,
					  .xfer = NVME_XFER_HOST_TO_CTRLR,
					  .on = NVMF_ON_IO,
					  .needs = NEED_NS_WRITE,
					  .effects = LBCC,
					  .passthru = true },
	[NVME_OPC_VERIFY] = { .name = "Verify",
			      .parse = verify_parse,
			      .xfer = NVME_XFER_NONE,
			      .on = NVMF_ON_IO,
			      .needs = NEED_NS_IO,
			      .passthru = true },
	[NVME_OPC_RESERVATION_REGISTER] = { .name = "Reservation Register",
					    .parse = nvmf_resv_register_parse,
					    .xfer = NVME_XFER_HOST_TO_CTRLR,
					    .on = NVMF_ON_IO,
					    .needs = NEED_NS_RESV },
	[NVME_OPC_RESERVATION_REPORT] = { .name = "Reservation Report",
					  .parse = nvmf_resv_report_parse,
					  .xfer = NVME_XFER_CTRLR_TO_HOST,
					  .on = NVMF_ON_IO,
					  .needs = NEED_NS_RESV },
	[NVME_OPC_RESERVATION_ACQUIRE] = { .name = "Reservation Acquire",
					   .parse = nvmf_resv_acquire_parse,
					   .xfer = NVME_XFER_HOST_TO_CTRLR,
					   .on = NVMF_ON_IO,
					   .needs = NEED_NS_RESV },
	[NVME_OPC_RESERVATION_RELEASE] = { .name = "Reservation Release",
					   .parse = nvmf_resv_release_parse,
					   .xfer = NVME_XFER_HOST_TO_CTRLR,
					   .on = NVMF_ON_IO,
					   .needs = NEED_NS_RESV },
	[NVMF_OPC_VS_LBA_STATUS] = { .name = "Get LBA Allocation Status (vendor)",
				     .parse = nvmf_lba_status_parse,
				     .xfer = NVME_XFER_CTRLR_TO_HOST,
				     .on = NVMF_ON_IO,
				     .needs = NEED_NS_IO },
};
