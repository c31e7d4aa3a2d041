// SPDX-License-Identifier: MIT
/*
 * Abort (admin opcode 08h): find the command SQID/CID names on its queue's reactor and
 * abort it if it has not reached the backend: the transport's queues first (waiting for a
 * data buffer, or for the host's data after R2T), then the core's (waiting for an LBA range
 * lock), then QoS (none yet). The aborted command completes with Command Abort Requested;
 * the Abort itself completes with Dword 0 bit 0 cleared, or set when nothing was aborted
 * (already executing, completed, or never seen).
 */
#include "config.h"

#include <stdlib.h>

#include "abort.h"
#include "common/endian.h"
#include "common/log.h"
#include "ctrlr.h"
#include "range_lock.h"
#include "reactor/reactor.h"

struct abort_msg {
	struct nvmf_req *req; /* the Abort, completed on its own reactor */
	struct nvmf_ctrlr *c; /* held while the message travels */
	uint16_t sqid, cid;
	bool aborted;
};

/* QoS hook: a command held back by a rate limit would be dropped from its queue here. */
static bool qos_abort(struct nvmf_qpair *qp, uint16_t cid)
{
	(void)qp;
	(void)cid;
	return false;
}

bool nvmf_qpair_abort_cmd(struct nvmf_qpair *qp, uint16_t cid)
{
	if (qp->ops->req_abort && qp->ops->req_abort(qp, cid))
		return true;
	if (nvmf_range_lock_abort(qp, cid))
		return true;
	return qos_abort(qp, cid);
}

/* Under c->lock. */
static struct nvmf_qpair *queue_of(struct nvmf_ctrlr *c, uint16_t sqid)
{
	if (sqid == 0)
		return c->admin_qp;
	return sqid <= NVMF_MAX_IO_QUEUES ? c->io_qp[sqid] : NULL;
}

static void abort_reply(struct nvmf_req *req, bool aborted)
{
	put_le32(&req->rsp.dw0, aborted ? 0 : 1);
	nvmf_req_done(req, ST_OK);
}

static void abort_reply_msg(void *arg)
{
	struct abort_msg *m = arg;

	abort_reply(m->req, m->aborted);
	nvmf_ctrlr_put(m->c);
	free(m);
}

/* On the reactor of the named queue: queues of this reactor are released only here. */
static void abort_on_queue_msg(void *arg)
{
	struct abort_msg *m = arg;
	struct nvmf_qpair *qp;

	pthread_mutex_lock(&m->c->lock);
	qp = queue_of(m->c, m->sqid);
	if (qp && qp->reactor != reactor_self())
		qp = NULL; /* gone, and the QID reused by a queue elsewhere */
	pthread_mutex_unlock(&m->c->lock);
	m->aborted = qp && nvmf_qpair_abort_cmd(qp, m->cid);
	if (reactor_send_msg(m->req->qpair->reactor, abort_reply_msg, m)) {
		/* The admin reactor cannot be reached: the Abort stays unanswered until the
		 * controller goes; nothing better to do without memory. */
		log_err("%s: cannot answer an Abort", m->c->label);
		nvmf_ctrlr_put(m->c);
		free(m);
	}
}

void nvmf_abort_exec(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = req->qpair->ctrlr;
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint16_t sqid = (uint16_t)(cdw10 & 0xffff), cid = (uint16_t)(cdw10 >> 16);
	struct nvmf_qpair *qp;
	struct reactor *r;
	struct abort_msg *m;

	pthread_mutex_lock(&c->lock);
	qp = queue_of(c, sqid);
	r = qp ? qp->reactor : NULL;
	pthread_mutex_unlock(&c->lock);
	if (!qp || (sqid == 0 && cid == get_le16(&req->cmd.cid))) {
		abort_reply(req, false);
		return;
	}
	if (r == req->qpair->reactor) {
		abort_reply(req, nvmf_qpair_abort_cmd(qp, cid));
		return;
	}
	m = malloc(sizeof(*m)); /* admin path */
	if (!m) {
		abort_reply(req, false);
		return;
	}
	m->req = req;
	m->c = c;
	m->sqid = sqid;
	m->cid = cid;
	m->aborted = false;
	nvmf_ctrlr_get(c);
	if (reactor_send_msg(r, abort_on_queue_msg, m)) {
		nvmf_ctrlr_put(c);
		free(m);
		abort_reply(req, false);
	}
}
