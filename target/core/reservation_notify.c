// SPDX-License-Identifier: MIT
/*
 * Reservation notifications: what a change tells the other hosts (NVMe Base 2.0, 8.19.5),
 * delivered to their controllers as Reservation Notification log pages (80h) and events.
 */
#include "reservation.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "ctrlr.h"
#include "reservation_internal.h"

static void add_note(struct nvmf_resv *r, const uint8_t host[16], uint8_t type)
{
	if (r->nnotes < NVMF_RESV_MAX_REGS) {
		memcpy(r->notes[r->nnotes].hostid, host, 16);
		r->notes[r->nnotes++].type = type;
	}
}

/*
 * What the change from r->cur to r->next tells other hosts (never the one that made it):
 *   - a registration removed by Preempt (or Preempt and Abort): Registration Preempted;
 *   - every registration removed by Clear: Reservation Preempted;
 *   - a reservation of a registrants-only or all-registrants type released (Release,
 *     or its holder unregistering), or a reservation whose type a Preempt changed:
 *     Reservation Released to the registrants that remain.
 */
void resv_build_notes(struct nvmf_resv *r, uint8_t opc, uint32_t cdw10, const uint8_t me[16])
{
	const struct resv_state *a = &r->cur, *b = &r->next;
	bool clear = opc == NVME_OPC_RESERVATION_RELEASE && RESV_ACTION(cdw10) == 1;

	r->nnotes = 0;
	for (unsigned int i = 0; i < a->nregs; i++) {
		const uint8_t *h = a->regs[i].hostid;

		if (!memcmp(h, me, 16) || resv_find_reg(&r->next, h))
			continue;
		if (clear)
			add_note(r, h, NVMF_RESV_NOTE_RESV_PREEMPTED);
		else if (opc == NVME_OPC_RESERVATION_ACQUIRE)
			add_note(r, h, NVMF_RESV_NOTE_REG_PREEMPTED);
	}
	if (clear || !a->rtype || a->rtype == b->rtype)
		return;
	if (!b->rtype && a->rtype <= NVME_RESV_EXCLUSIVE_ACCESS)
		return; /* Write Exclusive / Exclusive Access: the holder alone knew */
	for (unsigned int i = 0; i < b->nregs; i++)
		if (memcmp(b->regs[i].hostid, me, 16))
			add_note(r, b->regs[i].hostid, NVMF_RESV_NOTE_RESV_RELEASED);
}

/* Queue one notification on controller @c and tell its host (any thread). */
static void ctrlr_note(struct nvmf_ctrlr *c, uint8_t type, uint32_t nsid)
{
	unsigned int slot;

	if (__atomic_load_n(&c->resv_mask[nsid], __ATOMIC_RELAXED) & (1u << type))
		return; /* masked (Reservation Notification Mask) */
	pthread_mutex_lock(&c->err_lock);
	if (++c->resv_log_count == 0)
		c->resv_log_count = 1; /* the count wraps to 1, never 0 */
	if (c->resv_log_n == NVMF_RESV_LOG_ENTRIES) {
		/* full: the oldest goes, the host sees the gap in the counts */
		c->resv_log_head = (c->resv_log_head + 1) % NVMF_RESV_LOG_ENTRIES;
		c->resv_log_n--;
	}
	slot = (c->resv_log_head + c->resv_log_n++) % NVMF_RESV_LOG_ENTRIES;
	c->resv_log[slot].count = c->resv_log_count;
	c->resv_log[slot].type = type;
	c->resv_log[slot].nsid = nsid;
	pthread_mutex_unlock(&c->err_lock);
	nvmf_ctrlr_notify_resv(c);
}

/* Deliver r->notes to the controllers of their hosts (caller holds r->lock). */
void resv_send_notes(struct nvmf_resv *r)
{
	struct nvmf_subsys *s = r->ns->subsys;
	struct nvmf_ctrlr *c;
	uint8_t host[16];

	if (!r->nnotes || !s)
		return;
	pthread_mutex_lock(&s->lock);
	TAILQ_FOREACH(c, &s->ctrlrs, link)
	{
		if (c->local || __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == NVMF_CTRLR_DEAD)
			continue;
		resv_ctrlr_host(c, host);
		for (unsigned int i = 0; i < r->nnotes; i++)
			if (!memcmp(r->notes[i].hostid, host, 16))
				ctrlr_note(c, r->notes[i].type, r->ns->nsid);
	}
	pthread_mutex_unlock(&s->lock);
	r->nnotes = 0;
}

void *nvmf_resv_log_build(struct nvmf_ctrlr *c, size_t *len)
{
	uint8_t *p = calloc(1, NVMF_RESV_LOG_PAGE_SIZE);

	if (!p)
		return NULL;
	*len = NVMF_RESV_LOG_PAGE_SIZE;
	pthread_mutex_lock(&c->err_lock);
	if (c->resv_log_n) { /* the oldest page; none: an empty page (count 0) */
		const struct nvmf_resv_log_entry *e = &c->resv_log[c->resv_log_head];

		c->resv_log_head = (c->resv_log_head + 1) % NVMF_RESV_LOG_ENTRIES;
		c->resv_log_n--;
		put_le64(&p[0], e->count);
		p[8] = e->type;
		p[9] = (uint8_t)c->resv_log_n; /* Number of Available Log Pages (< 255) */
		put_le32(&p[12], e->nsid);
	}
	pthread_mutex_unlock(&c->err_lock);
	return p;
}

bool nvmf_resv_log_pending(struct nvmf_ctrlr *c)
{
	bool pending;

	pthread_mutex_lock(&c->err_lock);
	pending = c->resv_log_n != 0;
	pthread_mutex_unlock(&c->err_lock);
	return pending;
}
