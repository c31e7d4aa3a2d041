/* SPDX-License-Identifier: MIT */
/*
 * Command tables: one row per supported command, indexed by opcode (admin commands in
 * admin.c, NVM I/O commands in io.c) or by command type (Fabrics commands, fctype, in
 * fabrics.c), written with designated initializers. A row says where the command is
 * supported, what it needs before its handler runs, its data direction and its Commands
 * Supported and Effects bits. dispatch.c runs every command through its row, and the
 * Commands Supported and Effects log page (05h) is built from the same rows, so the two
 * cannot disagree. Supporting a new command is adding its row.
 *
 * Order of the checks for a command (dispatch.c), each failing with the status given:
 *   queue: not connected / connected (Connect)      -> Command Sequence Error
 *   queue not authenticated yet (fabrics_auth.c), unless the row says before_auth
 *                                                   -> Authentication Required
 *   controller not enabled                          -> Command Sequence Error
 *   no row supported on this queue                  -> Invalid Command Opcode
 *   NVMF_NEED_NS: no active namespace for NSID      -> Invalid Namespace or Format
 *   NVMF_NEED_RESV: a reservation forbids it        -> Reservation Conflict
 *   then the row's parse handler (which sets req->execute), or its execute handler.
 */
#ifndef NVMEOF_TARGET_DISPATCH_H
#define NVMEOF_TARGET_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "common/nvme_spec.h"

struct nvmf_req;
struct nvmf_ctrlr;

/* Where a command is supported (nvmf_cmd_desc.on). */
#define NVMF_ON_NVM   (1u << 0) /* admin queue of an NVM controller */
#define NVMF_ON_DISC  (1u << 1) /* admin queue of a discovery controller */
#define NVMF_ON_LOCAL (1u << 2) /* admin command of a local controller (nvmf_local_admin_exec) */
#define NVMF_ON_IO    (1u << 3) /* an I/O queue */
#define NVMF_ON_ADMIN (NVMF_ON_NVM | NVMF_ON_DISC | NVMF_ON_LOCAL)
#define NVMF_ON_ANY   (NVMF_ON_ADMIN | NVMF_ON_IO)

/* What a command needs before its handler runs (nvmf_cmd_desc.needs). */
#define NVMF_NEED_CONNECTED   (1u << 0) /* the queue is connected to a controller */
#define NVMF_NEED_UNCONNECTED (1u << 1) /* the queue has not connected yet (Connect) */
#define NVMF_NEED_ENABLED     (1u << 2) /* the controller is enabled (CC.EN = 1, CSTS.RDY = 1) */
#define NVMF_NEED_KATO        (1u << 3) /* not a check: the command restarts Keep Alive */
#define NVMF_NEED_NS          (1u << 4) /* an active namespace (NSID), held in req->ns */
#define NVMF_NEED_NS_OR_ALL \
	(1u << 5)                /* with NEED_NS: NSID FFFFFFFFh is "every namespace"
					 * and the handler runs without req->ns */
#define NVMF_NEED_RESV (1u << 6) /* checked against the namespace's reservation */
#define NVMF_NEED_RESV_WRITE \
	(1u << 7) /* with NEED_RESV: checked as a command that modifies
					 * the namespace (write, deallocate, flush) */

/* Admin commands and NVM commands on enabled controllers. */
#define NVMF_NEED_ADMIN (NVMF_NEED_CONNECTED | NVMF_NEED_ENABLED | NVMF_NEED_KATO)
#define NVMF_NEED_IO    (NVMF_NEED_CONNECTED | NVMF_NEED_ENABLED)

struct nvmf_cmd_desc {
	const char *name; /* for logs and tests; NULL: no such row */
	/* Validate the command and set req->execute; returns a status. NULL when there is
	 * nothing to validate: @execute runs as is. */
	uint16_t (*parse)(struct nvmf_req *req);
	void (*execute)(struct nvmf_req *req);
	enum nvme_data_xfer xfer; /* data direction (the opcode's low bits, by convention) */
	uint8_t on;               /* NVMF_ON_* */
	uint8_t needs;            /* NVMF_NEED_* */
	uint32_t effects;         /* log page 05h bits besides CSUPP (NVME_CMD_EFFECTS_*) */
	bool before_auth;         /* runs on a queue that has yet to authenticate (Connect,
				   * Authentication Send/Receive); every other command fails
				   * there with Authentication Required */
	bool passthru;            /* on an NVMe passthrough namespace (bdev->nvme) the drive
				   * runs it, once @parse accepted it: nvmf_io_passthru() */
};

/* Send the validated NVM command @req to the drive of its passthrough namespace (io.c):
 * sets req->execute (after the LBA range lock for commands that modify blocks). */
uint16_t nvmf_io_passthru(struct nvmf_req *req);

#define NVMF_CMD_TABLE_SIZE 256

extern const struct nvmf_cmd_desc nvmf_admin_cmds[NVMF_CMD_TABLE_SIZE]; /* admin.c */
extern const struct nvmf_cmd_desc nvmf_io_cmds[NVMF_CMD_TABLE_SIZE];    /* io.c */
extern const struct nvmf_cmd_desc nvmf_io_wu_cmd; /* io.c: Write Uncorrectable, passthrough */
extern const struct nvmf_cmd_desc nvmf_fabrics_cmds[NVMF_CMD_TABLE_SIZE]; /* fabrics.c */

/* The row of @table for @idx if the command is supported @on (an NVMF_ON_* bit), else NULL. */
const struct nvmf_cmd_desc *nvmf_cmd_lookup(const struct nvmf_cmd_desc *table, uint8_t idx,
					    unsigned int on);
/* Where admin commands of @c run: NVMF_ON_NVM, NVMF_ON_DISC or NVMF_ON_LOCAL. */
unsigned int nvmf_ctrlr_admin_on(const struct nvmf_ctrlr *c);
/* Fill the Commands Supported and Effects log page of a controller whose admin commands
 * run @admin_on, from the admin and I/O tables. */
void nvmf_cmd_effects_fill(struct nvme_cmd_effects_log *log, unsigned int admin_on);

#endif
