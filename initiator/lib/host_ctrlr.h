/* SPDX-License-Identifier: MIT */
/*
 * The controller, the library's top: bring-up, keep-alive, admin commands and shutdown
 * (host_ctrlr.c), recovery from a lost connection (host_reconnect.c) and the discovery
 * log (host_discovery.c). It drives both paths: the NVMe transports (nvme/) and the
 * iSCSI tunnel (scsi/) sit below it behind the transport ops, on the queue layer
 * (queue/) that both share.
 */
#ifndef NVMEOF_INITIATOR_HOST_CTRLR_H
#define NVMEOF_INITIATOR_HOST_CTRLR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/host_internal.h"

#define ADMIN_ENTRIES   32  /* admin SQ size (Linux uses the same) */
#define RECOVER_POLL_MS 100 /* upper bound on a held queue pair's service interval */

/* ---- Bring-up (host_ctrlr.c), also run again by a reconnect ---- */
/* The Property Get/Set enable sequence on the admin queue; admin_lock held. */
int ctrlr_enable(struct nvmeof_ctrlr *ctrlr);
/* Set Features Number of Queues; sets max_io_queues. admin_lock held. */
int ctrlr_set_num_queues(struct nvmeof_ctrlr *ctrlr);
/* Get Log Page in MDTS-sized pieces, admin_lock held. */
int get_log_page_locked(struct nvmeof_ctrlr *ctrlr, uint8_t lid, uint32_t nsid, uint64_t offset,
			void *buf, size_t len);
/* Keep the admin queue alive from a blocking wait on another queue (try-lock); returns
 * ms until it should be called again (-1: no keep-alive). */
int ctrlr_keepalive_poll(struct nvmeof_ctrlr *ctrlr);
/* With admin_lock held: send a Keep Alive if due; ms until the next one (-1: none). */
int ctrlr_keepalive_tick(struct nvmeof_ctrlr *ctrlr);

/* ---- Recovery (host_reconnect.c) ---- */
/* The one place the controller state changes; state_lock held. False if illegal. */
bool ctrlr_set_state(struct nvmeof_ctrlr *ctrlr, enum nvmeof_ctrlr_state to);
/* Milliseconds until the controller's recovery needs to run (-1: nothing to do). */
int ctrlr_recover_due_ms(struct nvmeof_ctrlr *ctrlr);
/* Drive the controller's recovery (admin_lock held): tear the admin queue down after a
 * reset, wait reconnect_delay, try again, set fast_fail, give up at ctrl_loss_tmo. */
void ctrlr_recover_locked(struct nvmeof_ctrlr *ctrlr);
/* The owner table's recovery entries (struct qpair_owner_ops in queue/host_internal.h). */
void ctrlr_conn_lost(struct nvmeof_ctrlr *ctrlr, uint32_t epoch, const char *why);
void ctrlr_qpair_recover(struct nvmeof_qpair *qp);
int ctrlr_recover_timeout_ms(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_qpair *qp);

/* ---- Discovery (host_discovery.c) ---- */
/* Discovery-log entry decoding, exposed for tests. */
void disc_entry_from_wire(const struct nvmf_disc_log_entry *w, struct nvmeof_disc_entry *e);

#endif
