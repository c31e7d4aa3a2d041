/* SPDX-License-Identifier: MIT */
/*
 * NVM command set I/O: Read, Write, Compare, Write Zeroes, Dataset Management
 * (deallocate), Flush and pass-through, built here once for every transport. Transfers
 * beyond MDTS (or 65536 blocks) are split by host_qpair.c into commands of io_max_blocks().
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "common/endian.h"
#include "common/iov.h"
#include "host_internal.h"
#include "host_transport.h"

uint32_t io_max_blocks(uint32_t max_xfer, uint32_t block_shift)
{
	uint32_t max = NVME_RW_NLB_MASK + 1u;

	if (max_xfer) {
		uint32_t b = max_xfer >> block_shift;

		if (b == 0)
			b = 1;
		if (b < max)
			max = b;
	}
	return max;
}

void io_build_rw(struct nvme_cmd *sqe, uint8_t opc, uint32_t nsid, uint64_t lba,
		 uint32_t nblocks, unsigned int flags)
{
	uint32_t cdw12 = (nblocks - 1) & NVME_RW_NLB_MASK;

	if (flags & NVMEOF_IO_FUA)
		cdw12 |= NVME_RW_FUA;
	if (flags & NVMEOF_IO_LIMITED_RETRY)
		cdw12 |= NVME_RW_LR;
	if ((flags & NVMEOF_IO_DEALLOCATE) && opc == NVME_OPC_WRITE_ZEROES)
		cdw12 |= NVME_RW_DEAC;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = opc;
	put_le32(&sqe->nsid, nsid);
	put_le32(&sqe->cdw10, (uint32_t)lba);
	put_le32(&sqe->cdw11, (uint32_t)(lba >> 32));
	put_le32(&sqe->cdw12, cdw12);
}

static int check_ns(struct nvmeof_qpair *qp, struct nvmeof_ns *ns)
{
	if (!qp || !ns || ns->ctrlr != qp->ctrlr || qp->qid == 0)
		return -EINVAL;
	if (!qpair_accepts(qp))
		return -ENOTCONN;
	return 0;
}

static int submit_lba(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint8_t opc, uint64_t lba,
		      uint32_t nblocks, const struct iovec *iov, int iovcnt, unsigned int flags,
		      nvmeof_cb cb, void *arg)
{
	bool data = opc != NVME_OPC_WRITE_ZEROES;
	struct nvmeof_ureq *u;
	int rc = check_ns(qp, ns);

	if (rc)
		return rc;
	if (nblocks == 0 || lba + nblocks < lba)
		return -EINVAL;
	if (data) {
		if (!iov || iovcnt <= 0 || iovcnt > NVMEOF_IOV_MAX)
			return -EINVAL;
		if (iov_length(iov, iovcnt) < (size_t)nblocks << ns->block_shift)
			return -EINVAL;
	}
	u = ureq_get(qp);
	if (!u)
		return -EAGAIN;
	u->cb = cb;
	u->arg = arg;
	u->kind = data ? UREQ_LBA_DATA : UREQ_LBA_NODATA;
	io_build_rw(&u->tmpl, opc, ns->info.nsid, lba, nblocks, flags);
	u->xfer = data ? nvme_opc_xfer(opc) : NVME_XFER_NONE;
	u->next_lba = lba;
	u->left = nblocks;
	u->next_off = 0;
	u->block_shift = ns->block_shift;
	u->max_blocks = io_max_blocks(qp->max_xfer, ns->block_shift);
	if (data) {
		memcpy(u->iov, iov, (size_t)iovcnt * sizeof(*iov));
		u->iovcnt = iovcnt;
	}
	ureq_submit(qp, u);
	return 0;
}

int nvmeof_read(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba, uint32_t nblocks,
		const struct iovec *iov, int iovcnt, unsigned int flags, nvmeof_cb cb, void *arg)
{
	return submit_lba(qp, ns, NVME_OPC_READ, lba, nblocks, iov, iovcnt, flags, cb, arg);
}

int nvmeof_write(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba, uint32_t nblocks,
		 const struct iovec *iov, int iovcnt, unsigned int flags, nvmeof_cb cb, void *arg)
{
	return submit_lba(qp, ns, NVME_OPC_WRITE, lba, nblocks, iov, iovcnt, flags, cb, arg);
}

int nvmeof_compare(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		   uint32_t nblocks, const struct iovec *iov, int iovcnt, unsigned int flags,
		   nvmeof_cb cb, void *arg)
{
	return submit_lba(qp, ns, NVME_OPC_COMPARE, lba, nblocks, iov, iovcnt, flags, cb, arg);
}

int nvmeof_write_zeroes(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			uint32_t nblocks, unsigned int flags, nvmeof_cb cb, void *arg)
{
	return submit_lba(qp, ns, NVME_OPC_WRITE_ZEROES, lba, nblocks, NULL, 0, flags, cb, arg);
}

int nvmeof_deallocate(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		      uint32_t nblocks, nvmeof_cb cb, void *arg)
{
	struct nvmeof_ureq *u;
	int rc = check_ns(qp, ns);

	if (rc)
		return rc;
	if (nblocks == 0 || lba + nblocks < lba)
		return -EINVAL;
	u = ureq_get(qp);
	if (!u)
		return -EAGAIN;
	u->cb = cb;
	u->arg = arg;
	u->kind = UREQ_SINGLE;
	u->tmpl.opc = NVME_OPC_DATASET_MANAGEMENT;
	put_le32(&u->tmpl.nsid, ns->info.nsid);
	put_le32(&u->tmpl.cdw10, 0); /* one range (0's based) */
	put_le32(&u->tmpl.cdw11, NVME_DSM_ATTR_AD);
	memset(u->inline_buf, 0, sizeof(u->inline_buf));
	put_le32(u->inline_buf + offsetof(struct nvme_dsm_range, nlb), nblocks);
	put_le64(u->inline_buf + offsetof(struct nvme_dsm_range, slba), lba);
	u->iov[0].iov_base = u->inline_buf;
	u->iov[0].iov_len = sizeof(struct nvme_dsm_range);
	u->iovcnt = 1;
	u->data_len = sizeof(struct nvme_dsm_range);
	u->xfer = NVME_XFER_HOST_TO_CTRLR;
	ureq_submit(qp, u);
	return 0;
}

int nvmeof_flush(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, nvmeof_cb cb, void *arg)
{
	struct nvme_cmd sqe = { .opc = NVME_OPC_FLUSH };
	int rc = check_ns(qp, ns);

	if (rc)
		return rc;
	put_le32(&sqe.nsid, ns->info.nsid);
	return qpair_submit_cmd(qp, &sqe, NULL, 0, 0, NVME_XFER_NONE, cb, arg);
}

void cmd_to_sqe(const struct nvmeof_cmd *cmd, uint32_t nsid, struct nvme_cmd *sqe)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = cmd->opc;
	put_le32(&sqe->nsid, nsid);
	put_le32(&sqe->cdw2, cmd->cdw2);
	put_le32(&sqe->cdw3, cmd->cdw3);
	put_le32(&sqe->cdw10, cmd->cdw10);
	put_le32(&sqe->cdw11, cmd->cdw11);
	put_le32(&sqe->cdw12, cmd->cdw12);
	put_le32(&sqe->cdw13, cmd->cdw13);
	put_le32(&sqe->cdw14, cmd->cdw14);
	put_le32(&sqe->cdw15, cmd->cdw15);
}

int nvmeof_io_cmd(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, const struct nvmeof_cmd *cmd,
		  const struct iovec *iov, int iovcnt, nvmeof_cb cb, void *arg)
{
	enum nvme_data_xfer xfer = nvme_opc_xfer(cmd->opc);
	struct nvme_cmd sqe;
	size_t len = iov ? iov_length(iov, iovcnt) : 0;
	int rc = check_ns(qp, ns);

	if (rc)
		return rc;
	if (cmd->opc == NVME_OPC_FABRICS || xfer == NVME_XFER_BIDIRECTIONAL || len > UINT32_MAX)
		return -EINVAL;
	if (xfer == NVME_XFER_NONE && len)
		return -EINVAL;
	cmd_to_sqe(cmd, cmd->nsid ? cmd->nsid : ns->info.nsid, &sqe);
	return qpair_submit_cmd(qp, &sqe, iov, iovcnt, (uint32_t)len, xfer, cb, arg);
}

/* ---- Blocking wrappers ---------------------------------------------------------------- */
struct sync_ctx {
	bool done;
	struct nvmeof_cpl cpl;
};

static void sync_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct sync_ctx *ctx = arg;

	ctx->cpl = *cpl;
	ctx->done = true;
}

/* The queue pair may be full of the caller's own asynchronous commands: make room. */
static int sync_make_room(struct nvmeof_qpair *qp)
{
	struct pollfd pfd = { .fd = qp->ops->get_fd(qp), .events = POLLIN };

	if (qpair_poll(qp, POLLIN | POLLOUT, 0) < 0)
		return qp->err ? qp->err : -ENOTCONN;
	if (qp->nr_ureqs >= qp->nreqs)
		poll(&pfd, 1, 10);
	return 0;
}

static int sync_finish(struct nvmeof_qpair *qp, struct sync_ctx *ctx)
{
	int rc = qpair_wait(qp, &ctx->done);

	if (!ctx->done)
		return rc;
	return cpl_result(&ctx->cpl);
}

#define SYNC_SUBMIT(qp, call)                                                              \
	do {                                                                               \
		int rc_;                                                                   \
		while ((rc_ = (call)) == -EAGAIN) {                                        \
			rc_ = sync_make_room(qp);                                          \
			if (rc_)                                                           \
				return rc_;                                                \
		}                                                                          \
		if (rc_)                                                                   \
			return rc_;                                                        \
	} while (0)

static int rw_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint8_t opc, uint64_t lba,
		   uint32_t nblocks, void *buf, unsigned int flags)
{
	struct sync_ctx ctx = { 0 };
	struct iovec iov;

	if (!ns)
		return -EINVAL;
	iov.iov_base = buf;
	iov.iov_len = (size_t)nblocks << ns->block_shift;
	SYNC_SUBMIT(qp, submit_lba(qp, ns, opc, lba, nblocks, &iov, 1, flags, sync_done, &ctx));
	return sync_finish(qp, &ctx);
}

int nvmeof_read_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		     uint32_t nblocks, void *buf, unsigned int flags)
{
	return rw_sync(qp, ns, NVME_OPC_READ, lba, nblocks, buf, flags);
}

int nvmeof_write_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		      uint32_t nblocks, const void *buf, unsigned int flags)
{
	return rw_sync(qp, ns, NVME_OPC_WRITE, lba, nblocks, (void *)buf, flags);
}

int nvmeof_compare_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			uint32_t nblocks, const void *buf, unsigned int flags)
{
	return rw_sync(qp, ns, NVME_OPC_COMPARE, lba, nblocks, (void *)buf, flags);
}

int nvmeof_write_zeroes_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			     uint32_t nblocks, unsigned int flags)
{
	struct sync_ctx ctx = { 0 };

	SYNC_SUBMIT(qp, nvmeof_write_zeroes(qp, ns, lba, nblocks, flags, sync_done, &ctx));
	return sync_finish(qp, &ctx);
}

int nvmeof_deallocate_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			   uint32_t nblocks)
{
	struct sync_ctx ctx = { 0 };

	SYNC_SUBMIT(qp, nvmeof_deallocate(qp, ns, lba, nblocks, sync_done, &ctx));
	return sync_finish(qp, &ctx);
}

int nvmeof_flush_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns)
{
	struct sync_ctx ctx = { 0 };

	SYNC_SUBMIT(qp, nvmeof_flush(qp, ns, sync_done, &ctx));
	return sync_finish(qp, &ctx);
}
