/* SPDX-License-Identifier: MIT */
/*
 * Get LBA Allocation Status: a vendor specific NVM command (opcode 82h, data from the
 * controller) reporting which logical blocks are deallocated, so that SCSI GET LBA STATUS
 * (and any NVMe host that wants it) reads the allocation tracked by the namespace backend
 * through the NVMe command executor.
 *
 *   CDW10/11  starting LBA
 *   CDW12     bits 15:0: maximum number of descriptors, 0's based
 *   data      8-byte header: number of descriptors returned (LE32), reserved;
 *             then 16-byte descriptors: starting LBA (LE64), number of blocks (LE32),
 *             byte 12 bit 0: deallocated; the runs are contiguous from the starting LBA.
 *   status    LBA Out of Range when the starting LBA is not in the namespace, Invalid
 *             Field when the backend does not track allocation.
 *
 * Core hook: its row in the I/O command table (io.c) parses with nvmf_lba_status_parse()
 * once the namespace is held and reservations are checked.
 */
#ifndef NVMEOF_TARGET_LBA_STATUS_H
#define NVMEOF_TARGET_LBA_STATUS_H

#include <stdint.h>

struct nvmf_req;

#define NVMF_OPC_VS_LBA_STATUS 0x82
#define NVMF_LBA_STATUS_HDR 8
#define NVMF_LBA_STATUS_DESC 16
#define NVMF_LBA_STATUS_DEALLOCATED 0x01

uint16_t nvmf_lba_status_parse(struct nvmf_req *req);

#endif
