// SPDX-License-Identifier: MIT
/* Get LBA Allocation Status (vendor specific NVM command 82h): see lba_status.h. */
#include "lba_status.h"

#include <errno.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"

static void lba_status_exec(struct nvmf_req *req)
{
	struct nvmf_ns *ns = req->ns;
	uint64_t lba = (uint64_t)get_le32(&req->cmd.cdw11) << 32 | get_le32(&req->cmd.cdw10);
	uint32_t max = (get_le32(&req->cmd.cdw12) & 0xffff) + 1;
	uint32_t room = (req->length - NVMF_LBA_STATUS_HDR) / NVMF_LBA_STATUS_DESC;
	uint32_t n = 0;
	uint8_t hdr[NVMF_LBA_STATUS_HDR] = { 0 };

	if (max > room)
		max = room;
	while (n < max && lba < ns->nblocks) {
		uint8_t d[NVMF_LBA_STATUS_DESC] = { 0 };
		uint64_t len, blocks;
		bool dealloc;
		int rc = bdev_lba_status(ns->bdev, lba << ns->block_shift, &len, &dealloc);

		if (rc) {
			nvmf_req_done(req, rc == -EOPNOTSUPP ? ST_INVALID_FIELD : ST_INTERNAL);
			return;
		}
		blocks = len >> ns->block_shift;
		if (!blocks)
			break;
		if (blocks > UINT32_MAX)
			blocks = UINT32_MAX;
		put_le64(&d[0], lba);
		put_le32(&d[8], (uint32_t)blocks);
		d[12] = dealloc ? NVMF_LBA_STATUS_DEALLOCATED : 0;
		nvmf_req_copy_to(req, NVMF_LBA_STATUS_HDR + (size_t)n * NVMF_LBA_STATUS_DESC, d,
				 sizeof(d));
		lba += blocks;
		n++;
	}
	put_le32(&hdr[0], n);
	nvmf_req_copy_to(req, 0, hdr, sizeof(hdr));
	nvmf_req_zero(req, NVMF_LBA_STATUS_HDR + (size_t)n * NVMF_LBA_STATUS_DESC);
	nvmf_req_done(req, ST_OK);
}

uint16_t nvmf_lba_status_parse(struct nvmf_req *req)
{
	uint64_t lba = (uint64_t)get_le32(&req->cmd.cdw11) << 32 | get_le32(&req->cmd.cdw10);

	if (lba >= req->ns->nblocks)
		return ST_LBA_RANGE;
	if (req->length < NVMF_LBA_STATUS_HDR + NVMF_LBA_STATUS_DESC)
		return ST_SGL_LEN;
	req->execute = lba_status_exec;
	return ST_OK;
}
