/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: request pools, CID allocation, issue of (split) user requests, completion
 * matching, command timeouts, failure, and the callback run. Transport independent.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "common/iov.h"
#include "host_internal.h"
#include "host_transport.h"

static const char *const qp_state_names[] = {
	[QP_INIT] = "init",     [QP_CONNECTING] = "connecting", [QP_READY] = "ready",
	[QP_FAILED] = "failed", [QP_CLOSED] = "closed",         [QP_RECONNECT] = "reconnect",
};

void qpair_set_state(struct nvmeof_qpair *qp, enum qpair_state state)
{
	/* Failed and closed are final; everything else moves forward, except that a queue
	 * pair held for a reconnect connects again (reconnect -> connecting -> ready). */
	if (qp->state == QP_FAILED || qp->state == QP_CLOSED) {
		if (state != QP_CLOSED)
			return;
	}
	nlog_debug("queue %u: %s -> %s", qp->qid, qp_state_names[qp->state],
		   qp_state_names[state]);
	qp->state = state;
}

static bool qp_usable(const struct nvmeof_qpair *qp)
{
	return qp->state == QP_READY || qp->state == QP_CONNECTING;
}

bool qpair_usable(const struct nvmeof_qpair *qp)
{
	return qp_usable(qp);
}

bool qpair_accepts(const struct nvmeof_qpair *qp)
{
	return qp_usable(qp) || qp->state == QP_RECONNECT;
}

int qpair_init(struct nvmeof_qpair *qp, struct nvmeof_ctrlr *ctrlr, uint16_t qid,
	       uint16_t nreqs, uint32_t timeout_ms)
{
	qp->ctrlr = ctrlr;
	qp->qid = qid;
	qp->state = QP_INIT;
	qp->timeout_ms = timeout_ms;
	qp->nreqs = nreqs;
	qp->nureqs = (uint16_t)(nreqs + 1); /* one kept for Fabrics Connect on a reconnect */
	qp->slot_bits = 1;
	while ((1u << qp->slot_bits) < nreqs)
		qp->slot_bits++;
	if (nreqs == 0 || qp->slot_bits > 12)
		return -EINVAL;
	TAILQ_INIT(&qp->free_reqs);
	TAILQ_INIT(&qp->outstanding);
	TAILQ_INIT(&qp->requeue);
	TAILQ_INIT(&qp->free_ureqs);
	TAILQ_INIT(&qp->pending);
	TAILQ_INIT(&qp->done);
	qp->reqs = calloc(nreqs, sizeof(*qp->reqs));
	qp->ureqs = calloc(qp->nureqs, sizeof(*qp->ureqs));
	if (!qp->reqs || !qp->ureqs) {
		free(qp->reqs);
		free(qp->ureqs);
		qp->reqs = NULL;
		qp->ureqs = NULL;
		return -ENOMEM;
	}
	for (uint16_t i = 0; i < nreqs; i++) {
		qp->reqs[i].slot = i;
		qp->reqs[i].qp = qp;
		TAILQ_INSERT_TAIL(&qp->free_reqs, &qp->reqs[i], link);
	}
	for (uint16_t i = 0; i < qp->nureqs; i++)
		TAILQ_INSERT_TAIL(&qp->free_ureqs, &qp->ureqs[i], link);
	return 0;
}

void qpair_fini(struct nvmeof_qpair *qp)
{
	free(qp->reqs);
	free(qp->ureqs);
	qp->reqs = NULL;
	qp->ureqs = NULL;
}

int iov_slice(const struct iovec *iov, int iovcnt, size_t off, size_t len, struct iovec *out,
	      int max)
{
	int n = 0;

	for (int i = 0; i < iovcnt && len > 0; i++) {
		size_t seg = iov[i].iov_len;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		if (n == max)
			return -1;
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = seg - off < len ? seg - off : len;
		len -= out[n].iov_len;
		off = 0;
		n++;
	}
	return len ? -1 : n;
}

int iov_slice_upto(const struct iovec *iov, int iovcnt, size_t off, size_t len,
		   struct iovec *out, int max, size_t *covered)
{
	int n = 0;

	*covered = 0;
	for (int i = 0; i < iovcnt && len > 0 && n < max; i++) {
		size_t seg = iov[i].iov_len;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = seg - off < len ? seg - off : len;
		len -= out[n].iov_len;
		*covered += out[n].iov_len;
		off = 0;
		n++;
	}
	return n;
}

/* ---- User requests ----------------------------------------------------------------- */
struct nvmeof_ureq *ureq_get(struct nvmeof_qpair *qp)
{
	struct nvmeof_ureq *u = TAILQ_FIRST(&qp->free_ureqs);

	/* The last one is for the Fabrics Connect of a queue pair full of held I/O. */
	if (!u || (qp->nr_ureqs >= qp->nreqs && qp->state != QP_CONNECTING))
		return NULL;
	TAILQ_REMOVE(&qp->free_ureqs, u, link);
	u->cb = NULL;
	u->arg = NULL;
	u->kind = UREQ_SINGLE;
	memset(&u->tmpl, 0, sizeof(u->tmpl));
	u->xfer = NVME_XFER_NONE;
	u->iovcnt = 0;
	u->data_len = 0;
	u->next_lba = 0;
	u->left = 1;
	u->next_off = 0;
	u->block_shift = 0;
	u->max_blocks = 0;
	u->inflight = 0;
	memset(&u->cpl, 0, sizeof(u->cpl));
	return u;
}

/* Start the next command of the first pending user request on a free wire slot. */
static int issue_one(struct nvmeof_qpair *qp, struct nvmeof_ureq *u, struct nvmeof_req *req)
{
	uint32_t n;

	TAILQ_REMOVE(&qp->free_reqs, req, link);
	req->sqe = u->tmpl;
	req->gen++;
	req->cid = (uint16_t)(((uint32_t)req->gen << qp->slot_bits | req->slot) & 0xffff);
	put_le16(&req->sqe.cid, req->cid);
	req->ureq = u;
	req->iov = u->iov;
	req->iovcnt = u->iovcnt;
	req->xfer = u->xfer;

	if (u->kind == UREQ_SINGLE) {
		req->data_off = 0;
		req->data_len = u->data_len;
		u->left = 0;
	} else {
		uint32_t cdw12 = get_le32(&u->tmpl.cdw12) & ~(uint32_t)NVME_RW_NLB_MASK;

		n = u->left < u->max_blocks ? u->left : u->max_blocks;
		put_le32(&req->sqe.cdw10, (uint32_t)u->next_lba);
		put_le32(&req->sqe.cdw11, (uint32_t)(u->next_lba >> 32));
		put_le32(&req->sqe.cdw12, cdw12 | (n - 1));
		req->data_off = u->next_off;
		req->data_len = u->kind == UREQ_LBA_DATA ? n << u->block_shift : 0;
		u->next_lba += n;
		u->next_off += req->data_len;
		u->left -= n;
	}
	if (u->left == 0)
		TAILQ_REMOVE(&qp->pending, u, link);
	u->inflight++;

	req->busy = true;
	req->deadline = qp->timeout_ms ? now_ms() + qp->timeout_ms : 0;
	TAILQ_INSERT_TAIL(&qp->outstanding, req, link);
	qp->nr_outstanding++;
	return qp->ops->submit(qp, req);
}

static void qpair_issue(struct nvmeof_qpair *qp)
{
	struct nvmeof_ureq *u;
	struct nvmeof_req *req;
	int rc;

	while (qp_usable(qp) && (u = TAILQ_FIRST(&qp->pending)) &&
	       (req = TAILQ_FIRST(&qp->free_reqs))) {
		/* Before Fabrics Connect completes only Fabrics commands may go: I/O held
		 * across a reconnect waits until the queue pair is ready. */
		if (qp->state == QP_CONNECTING) {
			while (u && u->tmpl.opc != NVME_ADMIN_FABRICS)
				u = TAILQ_NEXT(u, link);
			if (!u)
				return;
		}
		rc = issue_one(qp, u, req);
		if (rc) {
			qpair_fail(qp, rc, "cannot send command: %s", strerror(-rc));
			return;
		}
	}
}

static bool qp_fast_failing(const struct nvmeof_qpair *qp)
{
	return qp->state == QP_RECONNECT && qp->ctrlr &&
	       __atomic_load_n(&qp->ctrlr->fast_fail, __ATOMIC_ACQUIRE);
}

void ureq_submit(struct nvmeof_qpair *qp, struct nvmeof_ureq *u)
{
	qp->nr_ureqs++;
	if (qp_fast_failing(qp)) {
		/* fast_io_fail_tmo has passed: new I/O fails instead of waiting. */
		u->left = 0;
		u->cpl.status = QPAIR_HOST_PATH_ERROR;
		u->cpl.dnr = false;
		TAILQ_INSERT_TAIL(&qp->done, u, link);
		return;
	}
	TAILQ_INSERT_TAIL(&qp->pending, u, link);
	qpair_issue(qp);
}

/* ---- Completion ---------------------------------------------------------------------- */
struct nvmeof_req *qpair_find_req(struct nvmeof_qpair *qp, uint16_t cid)
{
	uint16_t slot = cid & ((1u << qp->slot_bits) - 1);
	struct nvmeof_req *req;

	if (slot >= qp->nreqs)
		return NULL;
	req = &qp->reqs[slot];
	if (!req->busy || req->cid != cid)
		return NULL;
	return req;
}

void req_complete(struct nvmeof_req *req, const struct nvme_cpl *cqe, int err)
{
	struct nvmeof_qpair *qp = req->qp;
	struct nvmeof_ureq *u = req->ureq;
	bool failed = false;

	TAILQ_REMOVE(&qp->outstanding, req, link);
	qp->nr_outstanding--;
	req->busy = false;
	req->ureq = NULL;
	TAILQ_INSERT_TAIL(&qp->free_reqs, req, link);

	if (err) {
		if (!u->cpl.err && !u->cpl.status)
			u->cpl.err = err;
		failed = true;
	} else {
		uint16_t st = cqe_status(cqe);

		if (st) {
			if (!u->cpl.err && !u->cpl.status) {
				u->cpl.status = st;
				u->cpl.dnr = !!(get_le16(&cqe->status) & NVME_STATUS_DNR);
			}
			failed = true;
		}
		u->cpl.dw0 = get_le32(&cqe->dw0);
		u->cpl.dw1 = get_le32(&cqe->dw1);
	}
	/* A failed part ends the request: nothing more of it is issued. */
	if (failed && u->left) {
		u->left = 0;
		TAILQ_REMOVE(&qp->pending, u, link);
	}
	if (--u->inflight == 0 && u->left == 0)
		TAILQ_INSERT_TAIL(&qp->done, u, link);
}

int qpair_complete_cqe(struct nvmeof_qpair *qp, const struct nvme_cpl *cqe)
{
	struct nvmeof_req *req = qpair_find_req(qp, get_le16(&cqe->cid));

	if (!req)
		return -EPROTO;
	req_complete(req, cqe, 0);
	return 0;
}

/* Requeued commands back on the outstanding list (to be completed or sent). */
static void requeue_to_outstanding(struct nvmeof_qpair *qp)
{
	struct nvmeof_req *req;

	while ((req = TAILQ_FIRST(&qp->requeue))) {
		TAILQ_REMOVE(&qp->requeue, req, link);
		TAILQ_INSERT_TAIL(&qp->outstanding, req, link);
		qp->nr_outstanding++;
	}
}

/* Fail everything; @culprit (may be NULL) gets @culprit_err, the rest @err, or the
 * status of @cqe when @cqe is set. */
static void qpair_fail_all_cqe(struct nvmeof_qpair *qp, struct nvmeof_req *culprit, int culprit_err,
			       int err, const struct nvme_cpl *cqe)
{
	struct nvmeof_ureq *u;
	struct nvmeof_req *req;

	while ((u = TAILQ_FIRST(&qp->pending))) {
		TAILQ_REMOVE(&qp->pending, u, link);
		u->left = 0;
		if (!u->cpl.err && !u->cpl.status) {
			if (cqe) {
				u->cpl.status = cqe_status(cqe);
				u->cpl.dnr = false;
			} else {
				u->cpl.err = err;
			}
		}
		if (u->inflight == 0)
			TAILQ_INSERT_TAIL(&qp->done, u, link);
	}
	if (culprit)
		req_complete(culprit, NULL, culprit_err);
	requeue_to_outstanding(qp);
	while ((req = TAILQ_FIRST(&qp->outstanding)))
		req_complete(req, cqe, cqe ? 0 : err);
}

static void qpair_fail_all(struct nvmeof_qpair *qp, struct nvmeof_req *culprit, int culprit_err,
			   int err)
{
	qpair_fail_all_cqe(qp, culprit, culprit_err, err, NULL);
}

static void host_path_cqe(struct nvme_cpl *cqe)
{
	memset(cqe, 0, sizeof(*cqe));
	/* Status field: phase bit 0, SC bits 8:1, SCT bits 11:9, DNR bit 15 clear. */
	put_le16(&cqe->status, (uint16_t)(NVMEOF_SC(QPAIR_HOST_PATH_ERROR) << 1 |
					  NVMEOF_SCT(QPAIR_HOST_PATH_ERROR) << 9));
}

void qpair_fail_held(struct nvmeof_qpair *qp)
{
	struct nvme_cpl cqe;
	unsigned int n = qp->nr_outstanding;

	host_path_cqe(&cqe);
	for (struct nvmeof_req *r = TAILQ_FIRST(&qp->requeue); r; r = TAILQ_NEXT(r, link))
		n++;
	for (struct nvmeof_ureq *u = TAILQ_FIRST(&qp->pending); u; u = TAILQ_NEXT(u, link))
		n++;
	if (qp->ctrlr && n) {
		pthread_mutex_lock(&qp->ctrlr->state_lock);
		qp->ctrlr->stats.failed_held += n;
		pthread_mutex_unlock(&qp->ctrlr->state_lock);
	}
	qpair_fail_all_cqe(qp, NULL, 0, 0, &cqe);
}

void qpair_give_up(struct nvmeof_qpair *qp, int err, const char *fmt, ...)
{
	va_list ap;

	if (qp->state == QP_FAILED || qp->state == QP_CLOSED)
		return;
	va_start(ap, fmt);
	vsnprintf(qp->errmsg, sizeof(qp->errmsg), fmt, ap);
	va_end(ap);
	qp->err = err;
	if (qp->state != QP_RECONNECT)
		qp->ops->qpair_close(qp);
	qpair_fail_held(qp);
	qpair_set_state(qp, QP_FAILED);
}

/* The connection is gone but the controller will be reconnected: keep the commands. */
static void qpair_hold(struct nvmeof_qpair *qp, struct nvmeof_req *culprit, int err)
{
	struct nvmeof_req *req;
	uint32_t epoch = qp->epoch;

	qpair_set_state(qp, QP_RECONNECT);
	qp->ops->qpair_close(qp);
	if (qp->qid == 0) {
		/* Admin commands are not held: the controller they were meant for is gone. */
		qpair_fail_all(qp, culprit, err, err);
	} else {
		(void)culprit; /* a timed-out command is sent again like the others */
		while ((req = TAILQ_FIRST(&qp->outstanding))) {
			TAILQ_REMOVE(&qp->outstanding, req, link);
			qp->nr_outstanding--;
			req->deadline = 0;
			TAILQ_INSERT_TAIL(&qp->requeue, req, link);
		}
	}
	if (qp->ctrlr && qp->ctrlr->owner)
		qp->ctrlr->owner->conn_lost(qp->ctrlr, epoch, qp->errmsg);
}

/* Whether a failure of @qp is held for a reconnect rather than final. */
static bool qp_may_hold(const struct nvmeof_qpair *qp)
{
	const struct nvmeof_ctrlr *c = qp->ctrlr;
	enum nvmeof_ctrlr_state st;

	if (!c || c->opts.ctrl_loss_tmo == 0 || qp->state != QP_READY)
		return false;
	st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	return st != NVMEOF_CTRLR_NEW && st != NVMEOF_CTRLR_DELETED;
}

int qpair_resend(struct nvmeof_qpair *qp)
{
	struct nvmeof_req *req;
	unsigned int n = 0;
	int rc;

	while ((req = TAILQ_FIRST(&qp->requeue))) {
		TAILQ_REMOVE(&qp->requeue, req, link);
		req->deadline = qp->timeout_ms ? now_ms() + qp->timeout_ms : 0;
		TAILQ_INSERT_TAIL(&qp->outstanding, req, link);
		qp->nr_outstanding++;
		n++;
		rc = qp->ops->submit(qp, req);
		if (rc) {
			qpair_fail(qp, rc, "cannot send command again: %s", strerror(-rc));
			return rc;
		}
	}
	if (n && qp->ctrlr) {
		nlog_info("queue %u: %u commands sent again", qp->qid, n);
		pthread_mutex_lock(&qp->ctrlr->state_lock);
		qp->ctrlr->stats.requeued += n;
		pthread_mutex_unlock(&qp->ctrlr->state_lock);
	}
	qpair_issue(qp);
	return 0;
}

static void qpair_vfail(struct nvmeof_qpair *qp, struct nvmeof_req *culprit, int culprit_err,
			int err, const char *fmt, va_list ap)
{
	if (qp->state == QP_FAILED || qp->state == QP_CLOSED || qp->state == QP_RECONNECT)
		return;
	vsnprintf(qp->errmsg, sizeof(qp->errmsg), fmt, ap);
	qp->err = err;
	if (qp->reconnecting) {
		/* A reconnect attempt failed: only its own commands (Connect) fail. */
		nlog_warn("queue %u: %s", qp->qid, qp->errmsg);
		qpair_set_state(qp, QP_RECONNECT);
		qp->ops->qpair_close(qp);
		if (culprit)
			req_complete(culprit, NULL, culprit_err);
		while (!TAILQ_EMPTY(&qp->outstanding))
			req_complete(TAILQ_FIRST(&qp->outstanding), NULL, err);
		return;
	}
	if (qp_may_hold(qp)) {
		nlog_warn("queue %u: %s; reconnecting", qp->qid, qp->errmsg);
		qpair_hold(qp, culprit, culprit ? culprit_err : err);
		return;
	}
	qpair_set_state(qp, QP_FAILED);
	nlog_err("queue %u: %s", qp->qid, qp->errmsg);
	qp->ops->qpair_close(qp);
	qpair_fail_all(qp, culprit, culprit_err, err);
}

void qpair_fail(struct nvmeof_qpair *qp, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	qpair_vfail(qp, NULL, 0, err, fmt, ap);
	va_end(ap);
}

static void qpair_fail_req(struct nvmeof_qpair *qp, struct nvmeof_req *culprit,
			   int culprit_err, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	qpair_vfail(qp, culprit, culprit_err, err, fmt, ap);
	va_end(ap);
}

void qpair_close(struct nvmeof_qpair *qp)
{
	if (qp->state != QP_FAILED && qp->state != QP_CLOSED && qp->state != QP_RECONNECT)
		qp->ops->qpair_close(qp);
	qpair_set_state(qp, QP_CLOSED);
	qpair_fail_all(qp, NULL, 0, -ECANCELED);
}

/* A command past its deadline: the controller may still write its buffer, so the only
 * safe way to give the buffer back is to drop the connection first. */
static void check_timeouts(struct nvmeof_qpair *qp)
{
	struct nvmeof_req *req = TAILQ_FIRST(&qp->outstanding);

	if (!req || !req->deadline || now_ms() < req->deadline)
		return;
	qpair_fail_req(qp, req, -ETIMEDOUT, -ECONNABORTED,
		       "command 0x%02x (cid %u) timed out after %u ms", req->sqe.opc, req->cid,
		       qp->timeout_ms);
}

static unsigned int run_callbacks(struct nvmeof_qpair *qp, unsigned int max)
{
	struct nvmeof_ureq *u;
	unsigned int n = 0;

	if (qp->in_callbacks)
		return 0;
	qp->in_callbacks = true;
	while ((u = TAILQ_FIRST(&qp->done)) && (max == 0 || n < max)) {
		nvmeof_cb cb = u->cb;
		void *arg = u->arg;
		struct nvmeof_cpl cpl = u->cpl;

		TAILQ_REMOVE(&qp->done, u, link);
		TAILQ_INSERT_HEAD(&qp->free_ureqs, u, link);
		qp->nr_ureqs--;
		n++;
		if (cb)
			cb(arg, &cpl);
	}
	qp->in_callbacks = false;
	return n;
}

int qpair_poll(struct nvmeof_qpair *qp, short revents, unsigned int max)
{
	unsigned int n;

	if (qp->ctrlr && qp->ctrlr->owner && qp != qp->ctrlr->admin && qp->qid != 0 &&
	    (qp->state == QP_RECONNECT ||
	     (qp->state == QP_READY &&
	      qp->epoch != __atomic_load_n(&qp->ctrlr->epoch, __ATOMIC_ACQUIRE))))
		qp->ctrlr->owner->qpair_recover(qp);
	if (qp_usable(qp)) {
		if (revents & (POLLERR | POLLHUP))
			revents |= POLLIN;
		qp->ops->progress(qp, revents);
		if (qp_usable(qp))
			check_timeouts(qp);
		if (qp_usable(qp) && !TAILQ_EMPTY(&qp->pending))
			qpair_issue(qp);
	}
	n = run_callbacks(qp, max);
	/* Send what callbacks and the issue above queued, without waiting for POLLOUT. */
	if (qp_usable(qp) && (qp->ops->which_events(qp) & POLLOUT))
		qp->ops->progress(qp, POLLOUT);
	if (!qp_usable(qp) && n == 0 && qp->state != QP_RECONNECT)
		return qp->err ? qp->err : -ENOTCONN;
	return (int)n;
}

/* Sleep while a queue pair has no connection (reconnect pending), at most 100 ms. */
static void reconnect_sleep(int tmo)
{
	poll(NULL, 0, tmo < 0 || tmo > 100 ? 100 : tmo);
}

int qpair_wait(struct nvmeof_qpair *qp, const bool *done)
{
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	bool admin = ctrlr && qp == ctrlr->admin;

	for (;;) {
		struct pollfd pfd;
		int tmo, rc;

		qpair_poll(qp, POLLIN | POLLOUT, 0);
		if (*done)
			return 0;
		if (!qpair_accepts(qp) && qp->nr_ureqs == 0)
			return qp->err ? qp->err : -ENOTCONN;
		tmo = nvmeof_qpair_timeout_ms(qp);
		if (ctrlr && ctrlr->owner && admin)
			tmo = timeout_min(tmo, ctrlr->owner->keepalive_tick(ctrlr));
		else if (ctrlr && ctrlr->owner)
			tmo = timeout_min(tmo, ctrlr->owner->keepalive_poll(ctrlr));
		if (qp->state == QP_RECONNECT) {
			reconnect_sleep(tmo);
			continue;
		}
		if (!qp_usable(qp))
			continue;
		pfd.fd = qp->ops->get_fd(qp);
		pfd.events = qp->ops->which_events(qp);
		pfd.revents = 0;
		rc = poll(&pfd, 1, tmo);
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

/* ---- Single commands ------------------------------------------------------------------ */
int qpair_submit_cmd(struct nvmeof_qpair *qp, const struct nvme_cmd *sqe,
		     const struct iovec *iov, int iovcnt, uint32_t len, enum nvme_data_xfer xfer,
		     nvmeof_cb cb, void *arg)
{
	struct nvmeof_ureq *u;

	if (!qp_usable(qp) && !(qp->state == QP_RECONNECT && qp->qid != 0))
		return -ENOTCONN;
	if (iovcnt < 0 || iovcnt > NVMEOF_IOV_MAX || (len && !iov))
		return -EINVAL;
	if (len && iov_length(iov, iovcnt) < len)
		return -EINVAL;
	if (qp->max_xfer && len > qp->max_xfer)
		return -EINVAL;
	u = ureq_get(qp);
	if (!u)
		return -EAGAIN;
	u->cb = cb;
	u->arg = arg;
	u->kind = UREQ_SINGLE;
	u->tmpl = *sqe;
	u->xfer = len ? xfer : NVME_XFER_NONE;
	u->data_len = len;
	if (len) {
		memcpy(u->iov, iov, (size_t)iovcnt * sizeof(*iov));
		u->iovcnt = iovcnt;
	}
	ureq_submit(qp, u);
	return 0;
}

struct exec_ctx {
	bool done;
	struct nvmeof_cpl cpl;
};

static void exec_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct exec_ctx *ctx = arg;

	ctx->cpl = *cpl;
	ctx->done = true;
}

/* Submit, waiting for a free slot if the queue is full. */
static int submit_waiting(struct nvmeof_qpair *qp, const struct nvme_cmd *sqe,
			  const struct iovec *iov, int iovcnt, uint32_t len,
			  enum nvme_data_xfer xfer, struct exec_ctx *ctx)
{
	int rc;

	while ((rc = qpair_submit_cmd(qp, sqe, iov, iovcnt, len, xfer, exec_done, ctx)) ==
	       -EAGAIN) {
		struct pollfd pfd = { .fd = qp->ops->get_fd(qp), .events = POLLIN };

		if (qpair_poll(qp, POLLIN | POLLOUT, 0) < 0)
			return qp->err ? qp->err : -ENOTCONN;
		pfd.fd = qp->ops->get_fd(qp);
		poll(&pfd, 1, 10);
	}
	return rc;
}

int cpl_result(const struct nvmeof_cpl *cpl)
{
	if (cpl->err)
		return cpl->err;
	return cpl->status;
}

int qpair_exec(struct nvmeof_qpair *qp, const struct nvme_cmd *sqe, void *buf, uint32_t len,
	       enum nvme_data_xfer xfer, struct nvmeof_cpl *cpl)
{
	struct exec_ctx ctx = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	int rc;

	rc = submit_waiting(qp, sqe, &iov, len ? 1 : 0, len, xfer, &ctx);
	if (rc)
		return rc;
	rc = qpair_wait(qp, &ctx.done);
	if (!ctx.done)
		return rc;
	if (cpl)
		*cpl = ctx.cpl;
	return cpl_result(&ctx.cpl);
}

/* ---- Public queue pair calls ---------------------------------------------------------- */
int nvmeof_qpair_get_fd(const struct nvmeof_qpair *qp)
{
	if (!qp_usable(qp))
		return -1;
	return qp->ops->get_fd(qp);
}

short nvmeof_qpair_which_events(const struct nvmeof_qpair *qp)
{
	if (!qp_usable(qp))
		return 0;
	return qp->ops->which_events(qp);
}

int nvmeof_qpair_service(struct nvmeof_qpair *qp, short revents)
{
	return qpair_poll(qp, revents, 0);
}

int nvmeof_qpair_process_completions(struct nvmeof_qpair *qp, unsigned int max)
{
	return qpair_poll(qp, POLLIN | POLLOUT, max);
}

int nvmeof_qpair_timeout_ms(const struct nvmeof_qpair *qp)
{
	const struct nvmeof_req *req;
	uint64_t now;

	if (!TAILQ_EMPTY(&qp->done))
		return 0;
	if (qp->state == QP_RECONNECT && qp->ctrlr && qp->ctrlr->owner)
		return qp->ctrlr->owner->recover_timeout_ms(qp->ctrlr, qp);
	req = TAILQ_FIRST(&qp->outstanding);
	if (!req || !req->deadline || !qp_usable(qp))
		return -1;
	now = now_ms();
	if (now >= req->deadline)
		return 0;
	return req->deadline - now > 86400000u ? 86400000 : (int)(req->deadline - now);
}

unsigned int nvmeof_qpair_outstanding(const struct nvmeof_qpair *qp)
{
	return qp->nr_ureqs;
}

unsigned int nvmeof_qpair_depth(const struct nvmeof_qpair *qp)
{
	return qp->nreqs;
}

const char *nvmeof_qpair_error(const struct nvmeof_qpair *qp)
{
	return qp->errmsg;
}

int nvmeof_qpair_drain(struct nvmeof_qpair *qp)
{
	while (qp->nr_ureqs) {
		struct pollfd pfd;
		int tmo, rc;

		qpair_poll(qp, POLLIN | POLLOUT, 0);
		if (!qp->nr_ureqs)
			break;
		tmo = nvmeof_qpair_timeout_ms(qp);
		if (qp->ctrlr && qp->ctrlr->owner && qp != qp->ctrlr->admin)
			tmo = timeout_min(tmo, qp->ctrlr->owner->keepalive_poll(qp->ctrlr));
		if (qp->state == QP_RECONNECT) {
			reconnect_sleep(tmo);
			continue;
		}
		/* Once failed, every request is on the done list: the next poll calls back. */
		if (!qp_usable(qp))
			continue;
		pfd.fd = qp->ops->get_fd(qp);
		pfd.events = qp->ops->which_events(qp);
		pfd.revents = 0;
		rc = poll(&pfd, 1, tmo);
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
	return qpair_accepts(qp) ? 0 : qp->err;
}
