/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous events: parked Asynchronous Event Requests, the events waiting for one
 * (masked until the host reads the log page), and the messages that deliver namespace and
 * discovery changes to a controller's admin reactor from any thread.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "reactor/reactor.h"

static uint32_t aen_enabled(const struct nvmf_ctrlr *c)
{
	uint32_t en = NVMF_AEN_RESV_LOG; /* masked per namespace by feature 82h instead */

	if (c->feat.aec & NVME_AEN_CFG_NS_ATTR)
		en |= NVMF_AEN_NS_CHANGED;
	if (c->feat.aec & NVME_AEN_CFG_DISC_CHANGE)
		en |= NVMF_AEN_DISC_CHANGED;
	if (c->feat.aec & NVME_AEN_CFG_ANA_CHANGE)
		en |= NVMF_AEN_ANA_CHANGED;
	return en;
}

static void aen_deliver(struct nvmf_ctrlr *c)
{
	while (c->naer && (c->aen_pending & aen_enabled(c))) {
		uint32_t ready = c->aen_pending & aen_enabled(c);
		uint32_t bit = ready & -ready;
		struct nvmf_req *req = c->aer[0];
		uint32_t dw0;

		if (bit == NVMF_AEN_NS_CHANGED)
			dw0 = nvme_aer_dw0(NVME_AER_TYPE_NOTICE, NVME_AER_NOTICE_NS_CHANGED,
					   NVME_LOG_CHANGED_NS);
		else if (bit == NVMF_AEN_RESV_LOG)
			dw0 = nvme_aer_dw0(NVME_AER_TYPE_IO_CMD_SET, NVME_AER_IO_RESV_LOG,
					   NVME_LOG_RESERVATION);
		else if (bit == NVMF_AEN_ANA_CHANGED)
			dw0 = nvme_aer_dw0(NVME_AER_TYPE_NOTICE, NVME_AER_NOTICE_ANA_CHANGE,
					   NVME_LOG_ANA);
		else
			dw0 = nvme_aer_dw0(NVME_AER_TYPE_NOTICE, NVME_AER_NOTICE_DISC_CHANGED,
					   NVME_LOG_DISCOVERY);
		memmove(&c->aer[0], &c->aer[1], (c->naer - 1) * sizeof(c->aer[0]));
		c->naer--;
		c->aen_pending &= ~bit;
		c->aen_masked |= bit;
		put_le32(&req->rsp.dw0, dw0);
		log_info("%s: asynchronous event %#x", c->label, dw0);
		nvmf_req_done(req, ST_OK);
	}
}

uint16_t nvmf_ctrlr_aer_submit(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);

	if (c->naer >= NVMF_MAX_AER)
		return NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC,
				   NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED);
	c->aer[c->naer++] = req;
	aen_deliver(c);
	return ST_OK;
}

void nvmf_ctrlr_aen_raise(struct nvmf_ctrlr *c, uint32_t aen)
{
	if (c->state == NVMF_CTRLR_DEAD)
		return;
	/* Disabled events are not reported; masked ones wait for the host to read the log. */
	c->aen_pending |= aen & aen_enabled(c) & ~c->aen_masked;
	aen_deliver(c);
}

void nvmf_ctrlr_aen_clear(struct nvmf_ctrlr *c, uint32_t aen)
{
	c->aen_masked &= ~aen;
	c->aen_pending &= ~aen;
}

struct nvmf_req *nvmf_qpair_aer_take(struct nvmf_qpair *qp, uint16_t cid)
{
	struct nvmf_ctrlr *c = qp->ctrlr;

	if (!c || qp->qid != 0)
		return NULL;
	for (unsigned int i = 0; i < c->naer; i++) {
		struct nvmf_req *req = c->aer[i];

		if (req->qpair != qp || get_le16(&req->cmd.cid) != cid)
			continue;
		memmove(&c->aer[i], &c->aer[i + 1], (c->naer - i - 1) * sizeof(c->aer[0]));
		c->naer--;
		put_le16(&req->rsp.status, NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED));
		log_notice("%s: command ID %u reused: the Asynchronous Event Request it named is "
			   "retired",
			   c->label, cid);
		return req;
	}
	return NULL;
}

void nvmf_ctrlr_aer_abort_all(struct nvmf_ctrlr *c)
{
	while (c->naer) {
		struct nvmf_req *req = c->aer[--c->naer];

		nvmf_req_done(req, ST_ABORTED_SQ);
	}
}

struct ns_msg {
	struct nvmf_ctrlr *c;
	uint32_t nsid;
};

static void ns_changed_msg(void *arg)
{
	struct ns_msg *m = arg;
	struct nvmf_ctrlr *c = m->c;

	if (c->state != NVMF_CTRLR_DEAD) {
		if (c->nr_changed_ns < NVME_CHANGED_NS_LIST_MAX) {
			uint32_t i;

			for (i = 0; i < c->nr_changed_ns && c->changed_ns[i] != m->nsid; i++)
				;
			if (i == c->nr_changed_ns)
				c->changed_ns[c->nr_changed_ns++] = m->nsid;
		} else if (c->nr_changed_ns == NVME_CHANGED_NS_LIST_MAX) {
			c->nr_changed_ns = UINT32_MAX;
		}
		nvmf_ctrlr_aen_raise(c, NVMF_AEN_NS_CHANGED);
	}
	nvmf_ctrlr_put(c);
	free(m);
}

void nvmf_ctrlr_notify_ns_changed(struct nvmf_ctrlr *c, uint32_t nsid)
{
	struct ns_msg *m;

	if (c->local || !c->admin_reactor)
		return;
	m = malloc(sizeof(*m));
	if (!m)
		return;
	m->c = c;
	m->nsid = nsid;
	nvmf_ctrlr_get(c);
	if (reactor_send_msg(c->admin_reactor, ns_changed_msg, m)) {
		nvmf_ctrlr_put(c);
		free(m);
	}
}

static void disc_changed_msg(void *arg)
{
	struct nvmf_ctrlr *c = arg;

	__atomic_store_n(&c->disc_post_busy, false, __ATOMIC_RELEASE);
	nvmf_ctrlr_aen_raise(c, NVMF_AEN_DISC_CHANGED);
	nvmf_ctrlr_put(c);
}

/* Safe under the subsystem lock: no allocation, and no reference dropped here. */
void nvmf_ctrlr_notify_disc_changed(struct nvmf_ctrlr *c)
{
	if (!c->admin_reactor || __atomic_exchange_n(&c->disc_post_busy, true, __ATOMIC_ACQ_REL))
		return; /* no admin queue yet, or a notice already on its way */
	if (!nvmf_ctrlr_get_unless_zero(c)) {
		__atomic_store_n(&c->disc_post_busy, false, __ATOMIC_RELEASE);
		return;
	}
	c->disc_post.fn = disc_changed_msg;
	c->disc_post.arg = c;
	reactor_post(c->admin_reactor, &c->disc_post);
}

static void resv_msg(void *arg)
{
	struct nvmf_ctrlr *c = arg;

	nvmf_ctrlr_aen_raise(c, NVMF_AEN_RESV_LOG);
	nvmf_ctrlr_put(c);
}

void nvmf_ctrlr_notify_resv(struct nvmf_ctrlr *c)
{
	if (c->local || !c->admin_reactor)
		return;
	nvmf_ctrlr_get(c);
	if (reactor_send_msg(c->admin_reactor, resv_msg, c))
		nvmf_ctrlr_put(c);
}
