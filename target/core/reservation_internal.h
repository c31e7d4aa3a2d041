// SPDX-License-Identifier: MIT
/*
 * What the reservation files share (reservation.c: state, commands, saving through a
 * store; reservation_notify.c: notifications; reservation_legacy.c: SPC-2 RESERVE(6)):
 * the state of one namespace's reservation and the helpers that read it. Private to
 * target/core.
 */
#ifndef NVMEOF_TARGET_RESERVATION_INTERNAL_H
#define NVMEOF_TARGET_RESERVATION_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "reservation.h"
#include "resv_store.h"

/* CDW10 fields */
#define RESV_ACTION(cdw10) ((cdw10)&0x7)
#define RESV_IEKEY(cdw10)  ((cdw10) & (1u << 3))
#define RESV_RTYPE(cdw10)  (((cdw10) >> 8) & 0xff)
#define RESV_CPTPL(cdw10)  ((cdw10) >> 30)
#define RESV_EDS           0x1

#define CPTPL_NO_CHANGE 0
#define CPTPL_CLEAR     2
#define CPTPL_SET       3

#define ST_RESV_CONFLICT NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT)
#define ST_HOSTID_FORMAT NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_HOSTID_INCONSISTENT_FORMAT)

#define CNTLID_NONE  0xffff /* registrant with no controller (restored, not seen yet) */
#define SAVE_RETRIES 8      /* -EAGAIN from a cluster store: reload and rebuild */

struct resv_reg {
	uint8_t hostid[16];
	uint64_t key;
	uint16_t cntlid;
};

/* What reservation commands change (and stores keep, less the controller IDs). */
struct resv_state {
	uint32_t gen;
	uint8_t rtype;      /* 0: no reservation */
	bool ptpl;          /* Persist Through Power Loss */
	uint8_t holder[16]; /* holder host (types 1-4) */
	unsigned int nregs;
	struct resv_reg regs[NVMF_RESV_MAX_REGS];
};

enum resv_save_state {
	RESV_IDLE,
	RESV_SAVING,
	RESV_HANDOFF,
};

/* A notification owed to the controllers of one host, once the change is applied. */
struct resv_note {
	uint8_t hostid[16];
	uint8_t type; /* NVMF_RESV_NOTE_* */
};

struct nvmf_resv {
	pthread_mutex_t lock;
	struct resv_state cur;  /* the working copy */
	struct resv_state next; /* the change being built or saved */
	struct resv_note notes[NVMF_RESV_MAX_REGS];
	unsigned int nnotes;
	struct nvmf_resv_image img; /* r->next as handed to the store */
	enum resv_save_state state;
	struct nvmf_req *saving; /* the command whose change is with the store */
	unsigned int retries;
	TAILQ_HEAD(, nvmf_req) waiting; /* changing commands behind it, oldest first */
	struct nvmf_resv_store *store;  /* NULL: the state lives in memory only */
	struct nvmf_ns *ns;
	bool legacy; /* SPC-2 RESERVE(6) held */
	uint8_t legacy_holder[16];
	bool active; /* atomic: cur.rtype != 0 || legacy */
};

/* The reservation of @ns (created when @create and missing; NULL if it cannot be). */
struct nvmf_resv *resv_get(struct nvmf_ns *ns, bool create);
/* Refresh the atomic "anything reserved?" flag from r->cur (caller holds r->lock). */
void resv_update_active(struct nvmf_resv *r);
/* The host identifier of controller @c. */
void resv_ctrlr_host(const struct nvmf_ctrlr *c, uint8_t host[16]);
/* The registration of @host in @r, or NULL. */
struct resv_reg *resv_find_reg(struct resv_state *r, const uint8_t host[16]);
/* Whether @host holds the reservation of @r (@registered: it has a registration). */
bool resv_is_holder(const struct resv_state *r, const uint8_t host[16], bool registered);
/* Notifications the change r->cur -> r->next owes other hosts (into r->notes), and their
 * delivery once the change is applied (caller holds r->lock). */
void resv_build_notes(struct nvmf_resv *r, uint8_t opc, uint32_t cdw10, const uint8_t me[16]);
void resv_send_notes(struct nvmf_resv *r);

#endif
