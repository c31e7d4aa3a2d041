// SPDX-License-Identifier: MIT
/* Get LBA Status (admin 86h) and Get LBA Allocation Status (vendor 82h): see lba_status.h. */
#include "lba_status.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"

static uint64_t cmd_slba(const struct nvmf_req *req)
{
	return (uint64_t)get_le32(&req->cmd.cdw11) << 32 | get_le32(&req->cmd.cdw10);
}

/* ---- Get LBA Status (admin 86h) ------------------------------------------------------------- */

static void get_lba_status_exec(struct nvmf_req *req)
{
	uint8_t hdr[NVMF_LBA_STATUS_HDR];

	/* Nothing is tracked and a scan finds nothing: an empty, complete list. */
	nvmf_lba_status_put_hdr(hdr, 0, NVME_LBA_STATUS_CMPC_COMPLETE);
	nvmf_req_copy_to(req, 0, hdr, sizeof(hdr));
	nvmf_req_zero(req, sizeof(hdr));
	nvmf_req_done(req, ST_OK);
}

uint16_t nvmf_get_lba_status_parse(struct nvmf_req *req)
{
	uint32_t cdw13 = get_le32(&req->cmd.cdw13);
	uint8_t atype = (uint8_t)(cdw13 >> 24);
	uint64_t bytes = ((uint64_t)get_le32(&req->cmd.cdw12) + 1) * 4;

	if (atype != NVME_LBA_STATUS_ATYPE_SCAN && atype != NVME_LBA_STATUS_ATYPE_TRACKED)
		return ST_INVALID_FIELD;
	if (bytes < NVMF_LBA_STATUS_HDR)
		return ST_INVALID_FIELD;
	if (cmd_slba(req) >= req->ns->nblocks)
		return ST_LBA_RANGE;
	if (req->length < NVMF_LBA_STATUS_HDR)
		return ST_SGL_LEN;
	req->execute = get_lba_status_exec;
	return ST_OK;
}

/* ---- Get LBA Allocation Status (vendor 82h) ------------------------------------------------- */

struct alloc_query {
	struct bdev_lba_query q;
	struct nvmf_req *req;
	struct bdev_lba_extent ext[];
};

static void alloc_query_done(struct bdev_lba_query *q, int status)
{
	struct alloc_query *a = q->cb_arg;
	struct nvmf_req *req = a->req;
	struct nvmf_ns *ns = req->ns;
	uint8_t hdr[NVMF_LBA_STATUS_HDR];
	uint32_t n = 0;

	if (status) {
		free(a);
		nvmf_req_done(req, status == -EOPNOTSUPP ? ST_INVALID_FIELD : ST_INTERNAL);
		return;
	}
	for (uint32_t i = 0; i < q->n; i++) {
		uint8_t d[NVMF_LBA_STATUS_DESC];
		uint64_t blocks = a->ext[i].len >> ns->block_shift;

		if (!blocks)
			break;
		if (blocks > UINT32_MAX)
			blocks = UINT32_MAX; /* the next run starts where this one is cut */
		nvmf_lba_status_put_desc(d, a->ext[i].offset >> ns->block_shift, (uint32_t)blocks,
					 a->ext[i].deallocated ? NVMF_LBA_STATUS_DEALLOCATED : 0);
		nvmf_req_copy_to(req, NVMF_LBA_STATUS_HDR + (size_t)n * NVMF_LBA_STATUS_DESC, d,
				 sizeof(d));
		n++;
		if (blocks != a->ext[i].len >> ns->block_shift)
			break;
	}
	/* Complete when the last run reaches the end of the namespace. */
	nvmf_lba_status_put_hdr(hdr, n,
				n && n == q->n && a->ext[n - 1].offset + a->ext[n - 1].len >= q->end
					? NVME_LBA_STATUS_CMPC_COMPLETE
					: NVME_LBA_STATUS_CMPC_MORE);
	nvmf_req_copy_to(req, 0, hdr, sizeof(hdr));
	nvmf_req_zero(req, NVMF_LBA_STATUS_HDR + (size_t)n * NVMF_LBA_STATUS_DESC);
	free(a);
	nvmf_req_done(req, ST_OK);
}

static void lba_status_exec(struct nvmf_req *req)
{
	struct nvmf_ns *ns = req->ns;
	uint32_t max = (get_le32(&req->cmd.cdw12) & 0xffff) + 1;
	uint32_t room = (req->length - NVMF_LBA_STATUS_HDR) / NVMF_LBA_STATUS_DESC;
	struct alloc_query *a;

	if (max > room)
		max = room;
	a = calloc(1, sizeof(*a) + (size_t)max * sizeof(a->ext[0]));
	if (!a) {
		nvmf_req_done(req, ST_INTERNAL);
		return;
	}
	a->req = req;
	a->q.offset = cmd_slba(req) << ns->block_shift;
	a->q.end = ns->nblocks << ns->block_shift;
	a->q.ext = a->ext;
	a->q.max = max;
	a->q.cb = alloc_query_done;
	a->q.cb_arg = a;
	bdev_lba_query(ns->bdev, &a->q);
}

uint16_t nvmf_lba_status_parse(struct nvmf_req *req)
{
	if (cmd_slba(req) >= req->ns->nblocks)
		return ST_LBA_RANGE;
	if (req->length < NVMF_LBA_STATUS_HDR + NVMF_LBA_STATUS_DESC)
		return ST_SGL_LEN;
	req->execute = lba_status_exec;
	return ST_OK;
}
