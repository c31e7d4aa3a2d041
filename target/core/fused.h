/* SPDX-License-Identifier: MIT */
/*
 * Fused Compare and Write (NVM Express Base 2.0, 3.4.2): a Compare marked FUSE_FIRST and
 * the Write marked FUSE_SECOND that follows it on the same queue run as one unit: the
 * Write happens only if the Compare matched. Identify Controller reports it in FUSES.
 *
 * Core hooks:
 *   dispatch.c req_exec(): accept FUSE bits on I/O queues (reject them on admin queues);
 *   dispatch.c io_dispatch(): once the queue may take NVM commands,
 *                             if (req->cmd.flags & NVME_CMD_FUSE_MASK)
 *                                 return nvmf_fused_parse(req);
 *   nvmf_qpair_init(): qp->fused_first = NULL;
 *   nvmf_qpair_disconnected(): nvmf_fused_abort(qp);
 *   Identify Controller: FUSES = NVME_CTRL_FUSES_COMPARE_WRITE.
 *
 * Atomicity: the pair holds its blocks with an exclusive LBA range lock (range_lock.h) from
 * before the read of the compare until the write has completed; every command that
 * modifies blocks, from any queue on any reactor, holds its range shared, so none lands in
 * between. That covers this target only: where other targets serve the same data (RBD
 * gateways) the backend's own compare-and-write runs instead (bdev->caw_shared), atomic
 * per bdev->caw_unit against all of them; longer pairs are refused (Identify Namespace
 * reports NACWU, SCSI the MAXIMUM COMPARE AND WRITE LENGTH).
 */
#ifndef NVMEOF_TARGET_FUSED_H
#define NVMEOF_TARGET_FUSED_H

#include <stdint.h>

struct nvmf_req;
struct nvmf_qpair;

uint16_t nvmf_fused_parse(struct nvmf_req *req);
/* The queue goes away: a first command still waiting for its second is aborted. */
void nvmf_fused_abort(struct nvmf_qpair *qp);

#endif
