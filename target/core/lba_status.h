/* SPDX-License-Identifier: MIT */
/*
 * LBA status, two commands on one descriptor format (struct nvme_lba_status_hdr/desc):
 *
 * Get LBA Status (admin 86h, NVMe Base): the Potentially Unrecoverable LBAs of a range.
 *   CDW10/11 SLBA, CDW12 MNDW (0's based dwords), CDW13 RL (bits 15:0) and ATYPE (bits
 *   31:24: 10h scan, 11h tracked). The backends keep no media error state (a failed read
 *   fails that command, nothing is remembered) and a scan finds nothing a read would not
 *   report, so the list is always empty and complete: NLSD 0, CMPC 2h. LBA Out of Range
 *   for SLBA past the namespace, Invalid Field for another ATYPE or an MNDW too small
 *   for the header. The LBA Status Information log page (0Eh, log_page.c) and the LBA
 *   Status Information Attributes feature (15h, features.c) go with it; Identify reports
 *   it in OACS bit 9.
 *
 * Get LBA Allocation Status (vendor specific NVM command 82h): which logical blocks are
 *   deallocated, so that SCSI GET LBA STATUS (sbc.c) reads the allocation tracked by the
 *   namespace backend through the NVMe command executor.
 *   CDW10/11  starting LBA
 *   CDW12     bits 15:0: maximum number of descriptors, 0's based
 *   data      the same list: NLSD, CMPC (2h when the namespace end was reached, 1h when
 *             more runs follow); descriptors DSLBA, NLB, status bit 0: deallocated. The
 *             runs are contiguous from the starting LBA.
 *   status    LBA Out of Range when the starting LBA is not in the namespace, Invalid
 *             Field when the backend does not track allocation.
 *   The lookups go through bdev_lba_query(): a file namespace's lseek(SEEK_DATA/
 *   SEEK_HOLE) runs on the backend's helper thread and the command completes back on the
 *   reactor.
 *
 * Core hooks: the admin table row (admin.c) parses with nvmf_get_lba_status_parse(), the
 * I/O table row (io.c) with nvmf_lba_status_parse(), both once the namespace is held.
 */
#ifndef NVMEOF_TARGET_LBA_STATUS_H
#define NVMEOF_TARGET_LBA_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/endian.h"
#include "common/nvme_spec.h"

struct nvmf_req;

#define NVMF_OPC_VS_LBA_STATUS      0x82
#define NVMF_LBA_STATUS_HDR         ((uint32_t)sizeof(struct nvme_lba_status_hdr))
#define NVMF_LBA_STATUS_DESC        ((uint32_t)sizeof(struct nvme_lba_status_desc))
#define NVMF_LBA_STATUS_DEALLOCATED 0x01 /* vendor command: descriptor status bit 0 */

/* The descriptor list codec (the little-endian wire layout of nvme_spec.h); inline so
 * that the SCSI translation decodes with it without linking the core. */
static inline void nvmf_lba_status_put_hdr(uint8_t *buf, uint32_t nlsd, uint8_t cmpc)
{
	memset(buf, 0, NVMF_LBA_STATUS_HDR);
	put_le32(buf + offsetof(struct nvme_lba_status_hdr, nlsd), nlsd);
	buf[offsetof(struct nvme_lba_status_hdr, cmpc)] = cmpc;
}

static inline void nvmf_lba_status_put_desc(uint8_t *buf, uint64_t dslba, uint32_t nlb,
					    uint8_t status)
{
	memset(buf, 0, NVMF_LBA_STATUS_DESC);
	put_le64(buf + offsetof(struct nvme_lba_status_desc, dslba), dslba);
	put_le32(buf + offsetof(struct nvme_lba_status_desc, nlb), nlb);
	buf[offsetof(struct nvme_lba_status_desc, status)] = status;
}

static inline void nvmf_lba_status_get_hdr(const uint8_t *buf, uint32_t *nlsd, uint8_t *cmpc)
{
	*nlsd = get_le32(buf + offsetof(struct nvme_lba_status_hdr, nlsd));
	*cmpc = buf[offsetof(struct nvme_lba_status_hdr, cmpc)];
}

static inline void nvmf_lba_status_get_desc(const uint8_t *buf, uint64_t *dslba, uint32_t *nlb,
					    uint8_t *status)
{
	*dslba = get_le64(buf + offsetof(struct nvme_lba_status_desc, dslba));
	*nlb = get_le32(buf + offsetof(struct nvme_lba_status_desc, nlb));
	*status = buf[offsetof(struct nvme_lba_status_desc, status)];
}

uint16_t nvmf_lba_status_parse(struct nvmf_req *req);     /* vendor 82h, I/O queue */
uint16_t nvmf_get_lba_status_parse(struct nvmf_req *req); /* Get LBA Status, admin 86h */

#endif
