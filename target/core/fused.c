// SPDX-License-Identifier: MIT
/*
 * Fused Compare and Write: the first command is parked on its queue pair until the second
 * arrives; then the pair takes an exclusive LBA range lock (range_lock.h), and
 *   - on a backend whose compare-and-write is atomic against every client of the data
 *     (bdev->caw_shared: an RBD image other gateways serve too) the pair is one
 *     BDEV_OP_COMPARE_AND_WRITE; a pair longer than that atomic unit (bdev->caw_unit) is
 *     refused with Invalid Field (it would be atomic per unit only, and a mismatch in a
 *     later unit would leave the earlier ones written);
 *   - elsewhere the range is read into a reactor buffer, compared with the first
 *     command's data and, if equal, written with the second command's data (the range
 *     lock keeps every other writer of this target out).
 * Completions: first, second; the lock goes with the second. A Compare Failure of a pair
 * from the in-process front end (iSCSI) carries in the first command's DW0 the offset of
 * the first differing byte, for the SCSI sense INFORMATION field.
 */
#include "fused.h"

#include <errno.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/iov.h"
#include "reactor/reactor.h"
#include "reservation.h"

#define ST_FUSED_FAILED NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED)
#define ST_FUSED_MISSING NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_MISSING_FUSED)
#define ST_COMPARE_FAILURE NVMF_ST_DNR(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE)
#define ST_INTERRUPTED NVMF_ST(NVME_SCT_GENERIC, NVME_SC_COMMAND_INTERRUPTED)

static uint64_t slba(const struct nvmf_req *req)
{
	return (uint64_t)get_le32(&req->cmd.cdw11) << 32 | get_le32(&req->cmd.cdw10);
}

static uint32_t nlb(const struct nvmf_req *req)
{
	return (get_le32(&req->cmd.cdw12) & NVME_RW_NLB_MASK) + 1;
}

/* Complete the pair: first with @st1, then second with @st2. */
static void pair_done(struct nvmf_req *first, struct nvmf_req *second, uint16_t st1,
		      uint16_t st2)
{
	nvmf_req_done(first, st1);
	nvmf_req_done(second, st2);
}

static void write_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *second = bio->cb_arg;
	struct nvmf_req *first = second->fused_peer;

	if (rc) {
		pair_done(first, second, ST_OK,
			  rc == -ENOSPC ? NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED)
					: NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
		return;
	}
	NVMF_STAT_ADD(second->qpair->stats.write_cmds, 1);
	NVMF_STAT_ADD(second->qpair->stats.write_bytes, bio->len);
	pair_done(first, second, ST_OK, ST_OK);
}

/* Offset of the first byte of @first's data that differs from its scratch buffer. */
static uint32_t miscompare_at(const struct nvmf_req *first, uint64_t len)
{
	const uint8_t *b = first->scratch;
	uint64_t off = 0;

	for (int i = 0; i < first->iovcnt && off < len; i++) {
		const uint8_t *p = first->iov[i].iov_base;
		uint64_t n = first->iov[i].iov_len < len - off ? first->iov[i].iov_len : len - off;

		for (uint64_t j = 0; j < n; j++)
			if (p[j] != b[off + j])
				return (uint32_t)(off + j);
		off += n;
	}
	return (uint32_t)off;
}

static void compare_failed(struct nvmf_req *first, struct nvmf_req *second, uint32_t at)
{
	if (first->qpair->ctrlr->local)
		put_le32(&first->rsp.dw0, at);
	pair_done(first, second, ST_COMPARE_FAILURE, ST_FUSED_FAILED);
}

/* The backend's own compare-and-write finished (caw_shared). */
static void caw_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *second = bio->cb_arg;
	struct nvmf_req *first = second->fused_peer;

	if (rc == -EILSEQ) {
		compare_failed(first, second, (uint32_t)bio->caw_miscompare);
		return;
	}
	if (rc) {
		/* the pair failed as a unit: the cause on the first, which the host (and the
		 * SCSI translation) reads first */
		pair_done(first, second,
			  rc == -ENOSPC ? NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED)
					: NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT),
			  ST_FUSED_FAILED);
		return;
	}
	NVMF_STAT_ADD(first->qpair->stats.read_cmds, 1);
	NVMF_STAT_ADD(first->qpair->stats.read_bytes, bio->len);
	NVMF_STAT_ADD(second->qpair->stats.write_cmds, 1);
	NVMF_STAT_ADD(second->qpair->stats.write_bytes, bio->len);
	pair_done(first, second, ST_OK, ST_OK);
}

static void compare_read_done(struct bdev_io *bio, int rc)
{
	struct nvmf_req *first = bio->cb_arg;
	struct nvmf_req *second = first->fused_peer;

	if (rc) {
		pair_done(first, second, NVMF_ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR),
			  ST_FUSED_FAILED);
		return;
	}
	if (iov_cmp_buf(first->iov, first->iovcnt, 0, first->scratch, bio->len)) {
		compare_failed(first, second, miscompare_at(first, bio->len));
		return;
	}
	NVMF_STAT_ADD(first->qpair->stats.read_cmds, 1);
	NVMF_STAT_ADD(first->qpair->stats.read_bytes, bio->len);
	/* the Write: the second command's own bio and data */
	second->bio.op = BDEV_OP_WRITE;
	second->bio.fua = (get_le32(&second->cmd.cdw12) & NVME_RW_FUA) ||
			  second->ns->bdev->volatile_cache;
	second->bio.offset = bio->offset;
	second->bio.len = bio->len;
	second->bio.iov = second->iov;
	second->bio.iovcnt = second->iovcnt;
	second->bio.reactor = second->qpair->reactor;
	second->bio.cb = write_done;
	second->bio.cb_arg = second;
	bdev_submit(second->ns->bdev, &second->bio);
}

/* The pair holds its range exclusively: read, compare and write see no other writer. */
static void fused_locked(struct nvmf_req *second)
{
	struct nvmf_req *first = second->fused_peer;
	struct nvmf_ns *ns = second->ns;
	uint64_t len = (uint64_t)nlb(second) << ns->block_shift;

	if (ns->bdev->caw_shared) {
		second->bio.op = BDEV_OP_COMPARE_AND_WRITE;
		second->bio.fua = true; /* caw_shared backends have no volatile cache */
		second->bio.offset = slba(second) << ns->block_shift;
		second->bio.len = len;
		second->bio.iov = second->iov;
		second->bio.iovcnt = second->iovcnt;
		second->bio.cmp_iov = first->iov;
		second->bio.cmp_iovcnt = first->iovcnt;
		second->bio.caw_miscompare = 0;
		second->bio.reactor = second->qpair->reactor;
		second->bio.cb = caw_done;
		second->bio.cb_arg = second;
		bdev_submit(ns->bdev, &second->bio);
		return;
	}
	first->scratch = reactor_buf_get(second->qpair->reactor);
	if (!first->scratch || len > reactor_buf_size()) {
		pair_done(first, second, ST_INTERRUPTED, ST_FUSED_FAILED);
		return;
	}
	first->scratch_iov.iov_base = first->scratch;
	first->scratch_iov.iov_len = len;
	first->bio.op = BDEV_OP_READ;
	first->bio.fua = false;
	first->bio.map_ok = false; /* compared from scratch: the data must be copied there */
	first->bio.mapped = false;
	first->bio.offset = slba(first) << ns->block_shift;
	first->bio.len = len;
	first->bio.iov = &first->scratch_iov;
	first->bio.iovcnt = 1;
	first->bio.reactor = first->qpair->reactor;
	first->bio.cb = compare_read_done;
	first->bio.cb_arg = first;
	bdev_submit(ns->bdev, &first->bio);
}

static void fused_exec(struct nvmf_req *second)
{
	struct nvmf_req *first = second->qpair->fused_first;

	second->qpair->fused_first = NULL;
	first->fused_peer = second;
	second->fused_peer = first;
	/* The Write holds the lock (released when it completes, after the Compare). */
	nvmf_range_lock(second, slba(second), nlb(second), true, fused_locked);
}

static void park_exec(struct nvmf_req *req)
{
	/* the first command waits on its queue pair for the second */
}

uint16_t nvmf_fused_parse(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	struct nvmf_req *first = qp->fused_first;
	uint8_t fuse = req->cmd.flags & NVME_CMD_FUSE_MASK;
	uint64_t len;
	uint16_t st;

	if (fuse == NVME_CMD_FUSE_FIRST) {
		if (first) { /* the previous first never got its second */
			qp->fused_first = NULL;
			nvmf_req_done(first, ST_FUSED_MISSING);
		}
		if (req->cmd.opc != NVME_OPC_COMPARE)
			return ST_INVALID_FIELD;
		qp->fused_first = req;
		req->execute = park_exec;
		return ST_OK;
	}
	if (fuse != NVME_CMD_FUSE_SECOND)
		return ST_INVALID_FIELD;
	if (!first)
		return ST_FUSED_MISSING;
	if (req->cmd.opc != NVME_OPC_WRITE || first->cmd.nsid != req->cmd.nsid ||
	    slba(first) != slba(req) || nlb(first) != nlb(req)) {
		qp->fused_first = NULL;
		nvmf_req_done(first, ST_FUSED_FAILED);
		return ST_INVALID_FIELD;
	}
	st = ST_INVALID_NS;
	req->ns = nvmf_ns_get(qp->ctrlr->subsys, get_le32(&req->cmd.nsid), qp->reactor);
	first->ns = req->ns ? nvmf_ns_get(qp->ctrlr->subsys, get_le32(&req->cmd.nsid),
					  qp->reactor) : NULL;
	if (!req->ns || !first->ns)
		goto fail;
	len = (uint64_t)nlb(req) << req->ns->block_shift;
	st = ST_LBA_RANGE;
	if (slba(req) > req->ns->nblocks || nlb(req) > req->ns->nblocks - slba(req))
		goto fail;
	st = ST_INVALID_FIELD;
	if (len > qp->tgt->opts.max_io_size)
		goto fail;
	st = ST_SGL_LEN;
	if (req->length != len || first->length != len)
		goto fail;
	/* Longer than the backend's atomic unit: refused (both commands), not split. */
	if (req->ns->bdev->caw_shared && len > req->ns->bdev->caw_unit) {
		qp->fused_first = NULL;
		nvmf_req_done(first, ST_INVALID_FIELD);
		return ST_INVALID_FIELD;
	}
	st = nvmf_resv_check(req); /* Write: the stricter of the two */
	if (st)
		goto fail;
	req->execute = fused_exec;
	return ST_OK;
fail:
	qp->fused_first = NULL;
	nvmf_req_done(first, st == ST_SGL_LEN || st == ST_LBA_RANGE ? st : ST_FUSED_FAILED);
	return st;
}

void nvmf_fused_abort(struct nvmf_qpair *qp)
{
	struct nvmf_req *first = qp->fused_first;

	if (first) {
		qp->fused_first = NULL;
		nvmf_req_done(first, ST_FUSED_MISSING);
	}
}
