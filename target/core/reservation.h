/* SPDX-License-Identifier: MIT */
/*
 * NVMe reservations (NVM Express Base 2.0, 8.19): Reservation Register/Acquire/Release/
 * Report, and the conflict rules every other NVM command is checked against. A host is a
 * Host Identifier (per NVMe host, and per iSCSI I_T nexus through the front end's local
 * controllers). State lives per namespace (ns->resv, created on first use).
 *
 * Also the SPC-2 RESERVE(6)/RELEASE(6) reservation of the iSCSI front end, which has no
 * NVMe command: it is kept beside the NVMe state so that both are enforced on the same
 * I/O path (SPC-4 5.9.3, compatible reservation handling).
 *
 * Core hooks (io.c / admin.c / namespace teardown):
 *   I/O command table: rows 0Dh/0Eh/11h/15h parse with nvmf_resv_*_parse(); rows with
 *                      NVMF_NEED_RESV are checked with nvmf_resv_check() once req->ns is
 *                      held, as writes when they also have NVMF_NEED_RESV_WRITE;
 *   Identify Controller: ONCS |= NVME_CTRL_ONCS_RESERVATIONS;
 *   Identify Namespace:  id->rescap = nvmf_resv_rescap(ns);
 *   Get/Set Features 82h, 83h: nvmf_resv_feat_get/set();
 *   Get Log Page 80h:    nvmf_resv_log_build();
 *   namespace freed:     nvmf_resv_free(ns);
 *
 * Persist Through Power Loss and cluster-wide state: resv_store.h.
 */
#ifndef NVMEOF_TARGET_RESERVATION_H
#define NVMEOF_TARGET_RESERVATION_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

struct nvmf_req;
struct nvmf_ns;
struct nvmf_ctrlr;

#define NVMF_RESV_MAX_REGS 128 /* registrants per namespace */
/* RESCAP: every reservation type; Persist Through Power Loss only with a store. */
#define NVMF_RESV_RESCAP       0x7e
#define NVMF_RESV_RESCAP_PTPL  0x01
#define NVMF_RESV_RESCAP_IEKEY 0x80

/* Reservation Notification log page (80h) types; bit N of the mask (feature 82h) masks
 * type N. */
#define NVMF_RESV_NOTE_REG_PREEMPTED  1
#define NVMF_RESV_NOTE_RESV_RELEASED  2
#define NVMF_RESV_NOTE_RESV_PREEMPTED 3
#define NVMF_RESV_MASK_ALL            0x0eu
#define NVMF_RESV_LOG_ENTRIES         16 /* queued per controller; the oldest go when full */
#define NVMF_RESV_LOG_PAGE_SIZE       64

/* One queued notification (in struct nvmf_ctrlr). */
struct nvmf_resv_log_entry {
	uint64_t count; /* Log Page Count */
	uint32_t nsid;
	uint8_t type;
};

/* Parse a reservation command (sets req->execute) or return its error status. */
uint16_t nvmf_resv_register_parse(struct nvmf_req *req);
uint16_t nvmf_resv_acquire_parse(struct nvmf_req *req);
uint16_t nvmf_resv_release_parse(struct nvmf_req *req);
uint16_t nvmf_resv_report_parse(struct nvmf_req *req);
/* Status to fail @req with because of a reservation (0: go ahead). req->ns is held. */
uint16_t nvmf_resv_check(struct nvmf_req *req);
/* RESCAP of Identify Namespace for @ns. */
uint8_t nvmf_resv_rescap(struct nvmf_ns *ns);
/* Features 82h/83h of req->ns (held by the caller; NULL: not an active namespace, or
 * NSID FFFFFFFFh). get: a status, *dw0 set. set: a status to complete @req with, or 0
 * when @req completed or will complete by itself (Reservation Persistence is saved
 * through the store first). */
uint16_t nvmf_resv_feat_get(struct nvmf_req *req, uint8_t fid, uint32_t *dw0);
uint16_t nvmf_resv_feat_set(struct nvmf_req *req, uint8_t fid);
/* Get Log Page 80h: the oldest queued notification of @c, taken off the queue (an empty
 * page when none), as a malloc'd page of *len bytes; NULL without memory. */
void *nvmf_resv_log_build(struct nvmf_ctrlr *c, size_t *len);
bool nvmf_resv_log_pending(struct nvmf_ctrlr *c);
/* Release the reservation state of a namespace that is being freed. */
void nvmf_resv_free(struct nvmf_ns *ns);

/* SPC-2 RESERVE(6)/RELEASE(6) for @hostid. reserve: 0 or -EBUSY (conflict), -ENOMEM. */
int nvmf_resv_legacy_reserve(struct nvmf_ns *ns, const uint8_t hostid[16]);
void nvmf_resv_legacy_release(struct nvmf_ns *ns, const uint8_t hostid[16]);
/* Whether a RESERVE(6) of another host stands in the way of @hostid. */
bool nvmf_resv_legacy_conflict(struct nvmf_ns *ns, const uint8_t hostid[16]);
/* LOGICAL UNIT RESET / TARGET RESET: drop the RESERVE(6) reservation. */
void nvmf_resv_legacy_clear(struct nvmf_ns *ns);

#endif
