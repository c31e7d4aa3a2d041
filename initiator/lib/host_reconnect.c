/* SPDX-License-Identifier: MIT */
/*
 * Controller, from recovery (host_reconnect.c): the controller state machine, a lost
 * connection, reconnecting the admin and I/O queues with reconnect_delay, ctrl_loss_tmo
 * and fast_io_fail_tmo as the Linux host's nvme-fabrics options.
 *
 * The queue layer reaches these through the controller's owner table (host_ctrlr.c sets
 * ctrlr->owner); reconnecting re-runs part of the bring-up in host_ctrlr.c, so the two
 * files call each other by nature.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "host_ctrlr.h"
#include "nvme/host_nvme.h"

/* ---- Controller state and reconnect ------------------------------------------------------ */
static const char *const ctrlr_state_names[] = {
	[NVMEOF_CTRLR_NEW] = "new",
	[NVMEOF_CTRLR_LIVE] = "live",
	[NVMEOF_CTRLR_RESETTING] = "resetting",
	[NVMEOF_CTRLR_CONNECTING] = "connecting",
	[NVMEOF_CTRLR_DELETED] = "deleted",
};

const char *nvmeof_ctrlr_state_name(enum nvmeof_ctrlr_state state)
{
	if ((unsigned int)state >= sizeof(ctrlr_state_names) / sizeof(ctrlr_state_names[0]))
		return "unknown";
	return ctrlr_state_names[state];
}

enum nvmeof_ctrlr_state nvmeof_ctrlr_get_state(const struct nvmeof_ctrlr *ctrlr)
{
	return __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
}

void nvmeof_ctrlr_set_state_fn(struct nvmeof_ctrlr *ctrlr, nvmeof_state_fn fn, void *arg)
{
	pthread_mutex_lock(&ctrlr->state_lock);
	ctrlr->state_fn = fn;
	ctrlr->state_arg = arg;
	pthread_mutex_unlock(&ctrlr->state_lock);
}

/* Legal controller transitions (Linux nvme_change_ctrl_state() has the same shape). */
static bool ctrlr_transition_ok(enum nvmeof_ctrlr_state from, enum nvmeof_ctrlr_state to)
{
	switch (to) {
	case NVMEOF_CTRLR_LIVE:
		return from == NVMEOF_CTRLR_NEW || from == NVMEOF_CTRLR_CONNECTING;
	case NVMEOF_CTRLR_RESETTING:
		return from == NVMEOF_CTRLR_LIVE;
	case NVMEOF_CTRLR_CONNECTING:
		return from == NVMEOF_CTRLR_RESETTING;
	case NVMEOF_CTRLR_DELETED:
		return from != NVMEOF_CTRLR_DELETED;
	case NVMEOF_CTRLR_NEW:
		break;
	}
	return false;
}

/* The one place the controller state changes; state_lock held. */
bool ctrlr_set_state(struct nvmeof_ctrlr *ctrlr, enum nvmeof_ctrlr_state to)
{
	enum nvmeof_ctrlr_state from = ctrlr->state;

	if (!ctrlr_transition_ok(from, to))
		return false;
	nlog_debug("controller %s: %s -> %s", ctrlr->uri_str, nvmeof_ctrlr_state_name(from),
		   nvmeof_ctrlr_state_name(to));
	__atomic_store_n(&ctrlr->state, to, __ATOMIC_RELEASE);
	if (ctrlr->state_fn)
		ctrlr->state_fn(ctrlr, from, to, ctrlr->state_arg);
	return true;
}

int nvmeof_ctrlr_get_stats(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ctrlr_stats *st)
{
	enum nvmeof_ctrlr_state s;

	pthread_mutex_lock(&ctrlr->state_lock);
	*st = ctrlr->stats;
	s = ctrlr->state;
	if (s == NVMEOF_CTRLR_RESETTING || s == NVMEOF_CTRLR_CONNECTING ||
	    (s == NVMEOF_CTRLR_DELETED && ctrlr->outage_start))
		st->current_outage_ms = now_ms() - ctrlr->outage_start;
	pthread_mutex_unlock(&ctrlr->state_lock);
	return 0;
}

void ctrlr_conn_lost(struct nvmeof_ctrlr *ctrlr, uint32_t epoch, const char *why)
{
	pthread_mutex_lock(&ctrlr->state_lock);
	if (ctrlr->state == NVMEOF_CTRLR_LIVE && epoch == ctrlr->epoch) {
		ctrlr->outage_start = now_ms();
		ctrlr->stats.outages++;
		__atomic_store_n(&ctrlr->fast_fail, false, __ATOMIC_RELEASE);
		__atomic_store_n(&ctrlr->epoch, epoch + 1, __ATOMIC_RELEASE);
		nlog_warn("%s: connection lost (%s); resetting the controller", ctrlr->uri_str,
			  why && why[0] ? why : "error");
		ctrlr_set_state(ctrlr, NVMEOF_CTRLR_RESETTING);
	}
	pthread_mutex_unlock(&ctrlr->state_lock);
}

static int ms_until(uint64_t when, uint64_t now)
{
	if (when <= now)
		return 0;
	return when - now > 86400000u ? 86400000 : (int)(when - now);
}

/* Milliseconds until the controller's recovery needs to run (-1: nothing to do). */
int ctrlr_recover_due_ms(struct nvmeof_ctrlr *ctrlr)
{
	const struct nvmeof_opts *o = &ctrlr->opts;
	enum nvmeof_ctrlr_state st = __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
	uint64_t now, start;
	int tmo;

	if (st == NVMEOF_CTRLR_RESETTING)
		return 0;
	if (st != NVMEOF_CTRLR_CONNECTING)
		return -1;
	now = now_ms();
	start = ctrlr->outage_start;
	tmo = ms_until(ctrlr->next_attempt, now);
	if (o->fast_io_fail_tmo >= 0 && !__atomic_load_n(&ctrlr->fast_fail, __ATOMIC_ACQUIRE))
		tmo = timeout_min(tmo, ms_until(start + (uint64_t)o->fast_io_fail_tmo * 1000, now));
	if (o->ctrl_loss_tmo > 0)
		tmo = timeout_min(tmo, ms_until(start + (uint64_t)o->ctrl_loss_tmo * 1000, now));
	return tmo;
}

int ctrlr_recover_timeout_ms(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_qpair *qp)
{
	enum nvmeof_ctrlr_state st = __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
	int tmo;

	if (st == NVMEOF_CTRLR_DELETED)
		return 0;
	if (st == NVMEOF_CTRLR_LIVE)
		return qp->epoch != __atomic_load_n(&ctrlr->epoch, __ATOMIC_ACQUIRE)
			       ? 0
			       : RECOVER_POLL_MS;
	if (__atomic_load_n(&ctrlr->fast_fail, __ATOMIC_ACQUIRE) &&
	    (!TAILQ_EMPTY(&qp->requeue) || !TAILQ_EMPTY(&qp->pending)))
		return 0;
	tmo = ctrlr_recover_due_ms(ctrlr);
	return tmo < 0 || tmo > RECOVER_POLL_MS ? RECOVER_POLL_MS : tmo;
}

/* The admin queue again: connection (iSCSI: login with the same ISID, TSIH 0), Fabrics
 * Connect for a new controller, the enable sequence, Number of Queues. The identity,
 * namespaces and limits learnt at the first connect are kept. admin_lock held. */
static int admin_reconnect(struct nvmeof_ctrlr *ctrlr)
{
	const struct nvmeof_opts *o = &ctrlr->opts;
	struct nvmeof_qpair *aq = ctrlr->admin;
	uint32_t max_xfer = ctrlr->max_xfer;
	unsigned int max_q = ctrlr->max_io_queues;
	uint16_t cntlid = ctrlr->cntlid;
	int rc;

	clear_error();
	aq->reconnecting = true;
	rc = ctrlr->ops->qpair_connect(aq, (int)o->connect_timeout_ms);
	if (rc) {
		ctrlr->ops->qpair_close(aq);
		goto out;
	}
	qpair_set_state(aq, QP_CONNECTING);
	if (ctrlr->ops->ctrlr_setup) {
		qpair_set_state(aq, QP_READY); /* the transport's login was the handshake */
		goto out;
	}
	rc = fabrics_connect(aq, ADMIN_ENTRIES - 1, o->kato_ms, NVMF_CNTLID_DYNAMIC, &cntlid);
	if (rc)
		goto out;
	qpair_set_state(aq, QP_READY);
	rc = ctrlr_enable(ctrlr);
	ctrlr->max_xfer = max_xfer;
	if (rc == 0 && !ctrlr->uri.discovery)
		rc = ctrlr_set_num_queues(ctrlr);
	if (ctrlr->max_io_queues < max_q && rc == 0)
		nlog_warn("the controller now grants %u I/O queues (was %u)", ctrlr->max_io_queues,
			  max_q);
	ctrlr->max_io_queues = max_q; /* sizes qid_used; a refused queue fails its Connect */
	if (rc == 0)
		ctrlr->cntlid = cntlid;
out:
	if (rc && qpair_usable(aq))
		qpair_fail(aq, rc, "reconnect failed: %s", nvmeof_last_error());
	aq->reconnecting = false;
	return rc;
}

/* Drive the controller's recovery (admin_lock held): tear the admin queue down after a
 * reset, wait reconnect_delay, try again, set fast_fail, give up at ctrl_loss_tmo. */
void ctrlr_recover_locked(struct nvmeof_ctrlr *ctrlr)
{
	const struct nvmeof_opts *o = &ctrlr->opts;
	enum nvmeof_ctrlr_state st = __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
	uint64_t delay_ms = (uint64_t)o->reconnect_delay * 1000, now;
	char why[256];
	int rc;

	if (st != NVMEOF_CTRLR_RESETTING && st != NVMEOF_CTRLR_CONNECTING)
		return;
	now = now_ms();
	if (st == NVMEOF_CTRLR_RESETTING) {
		ctrlr->next_ka = 0;
		ctrlr->ka_inflight = false;
		if (ctrlr->admin->state == QP_READY)
			qpair_fail(ctrlr->admin, -ECONNRESET, "controller reset");
		pthread_mutex_lock(&ctrlr->state_lock);
		ctrlr->next_attempt = ctrlr->outage_start + delay_ms;
		ctrlr_set_state(ctrlr, NVMEOF_CTRLR_CONNECTING);
		pthread_mutex_unlock(&ctrlr->state_lock);
		nlog_warn("%s: reconnecting in %d s", ctrlr->uri_str, o->reconnect_delay);
	}
	if (o->fast_io_fail_tmo >= 0 && !ctrlr->fast_fail &&
	    now >= ctrlr->outage_start + (uint64_t)o->fast_io_fail_tmo * 1000) {
		nlog_warn("%s: fast_io_fail_tmo (%d s) passed: failing held I/O", ctrlr->uri_str,
			  o->fast_io_fail_tmo);
		__atomic_store_n(&ctrlr->fast_fail, true, __ATOMIC_RELEASE);
	}
	if (o->ctrl_loss_tmo > 0 &&
	    now >= ctrlr->outage_start + (uint64_t)o->ctrl_loss_tmo * 1000) {
		nlog_err("%s: not reconnected within ctrl_loss_tmo (%d s): giving up",
			 ctrlr->uri_str, o->ctrl_loss_tmo);
		pthread_mutex_lock(&ctrlr->state_lock);
		ctrlr_set_state(ctrlr, NVMEOF_CTRLR_DELETED);
		pthread_mutex_unlock(&ctrlr->state_lock);
		qpair_give_up(ctrlr->admin, -ENOTCONN,
			      "controller lost: not reconnected within ctrl_loss_tmo (%d s)",
			      o->ctrl_loss_tmo);
		return;
	}
	if (now < ctrlr->next_attempt)
		return;

	pthread_mutex_lock(&ctrlr->state_lock);
	ctrlr->stats.reconnect_attempts++;
	pthread_mutex_unlock(&ctrlr->state_lock);
	nlog_info("%s: reconnect attempt %llu", ctrlr->uri_str,
		  (unsigned long long)ctrlr->stats.reconnect_attempts);
	rc = admin_reconnect(ctrlr);
	now = now_ms();
	if (rc == -EACCES || rc == -EPERM) {
		/* The controller answered: this host may not connect (or failed to prove who it
		 * is). That is a decision, not an outage; retrying until ctrl_loss_tmo would only
		 * hold the caller's I/O (Linux stops on a Connect status with DNR set, too). */
		snprintf(why, sizeof(why), "%s", nvmeof_last_error());
		nlog_err("%s: reconnect refused (%s): giving up", ctrlr->uri_str,
			 why[0] ? why : strerror(-rc));
		pthread_mutex_lock(&ctrlr->state_lock);
		ctrlr_set_state(ctrlr, NVMEOF_CTRLR_DELETED);
		pthread_mutex_unlock(&ctrlr->state_lock);
		qpair_give_up(ctrlr->admin, rc, "controller lost: reconnect refused: %s",
			      why[0] ? why : strerror(-rc));
		return;
	}
	if (rc) {
		snprintf(why, sizeof(why), "%s", nvmeof_last_error());
		ctrlr->next_attempt = now + delay_ms;
		nlog_warn("%s: reconnect failed (%s); next attempt in %d s", ctrlr->uri_str,
			  why[0] ? why : strerror(-rc), o->reconnect_delay);
		return;
	}
	pthread_mutex_lock(&ctrlr->state_lock);
	ctrlr->stats.reconnects++;
	ctrlr->stats.last_outage_ms = now - ctrlr->outage_start;
	ctrlr->stats.total_outage_ms += now - ctrlr->outage_start;
	__atomic_store_n(&ctrlr->fast_fail, false, __ATOMIC_RELEASE);
	ctrlr->admin->epoch = ctrlr->epoch;
	ctrlr_set_state(ctrlr, NVMEOF_CTRLR_LIVE);
	pthread_mutex_unlock(&ctrlr->state_lock);
	ctrlr->kato_ms = o->kato_ms;
	if (o->kato_ms)
		ctrlr->next_ka = now + o->kato_ms / 2;
	nlog_info("%s: reconnected (cntlid %u) after %llu ms", ctrlr->uri_str, ctrlr->cntlid,
		  (unsigned long long)ctrlr->stats.last_outage_ms);
}

/* An I/O queue pair connects again to the live controller of @epoch (owner thread). */
static int io_qpair_reconnect(struct nvmeof_qpair *qp, uint32_t epoch)
{
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	uint32_t tmo = qp->timeout_ms;
	int rc;

	clear_error();
	qp->reconnecting = true;
	rc = ctrlr->ops->qpair_connect(qp, (int)ctrlr->opts.connect_timeout_ms);
	if (rc) {
		ctrlr->ops->qpair_close(qp);
	} else {
		struct nvmeof_req *park = NULL, saved;

		/* Every wire slot may hold a requeued command: lend the last one's slot to
		 * the Connect and put the command back once the Connect is over. */
		if (TAILQ_EMPTY(&qp->free_reqs) && (park = TAILQ_LAST(&qp->requeue, req_list))) {
			saved = *park;
			TAILQ_REMOVE(&qp->requeue, park, link);
			park->busy = false;
			park->ureq = NULL;
			TAILQ_INSERT_HEAD(&qp->free_reqs, park, link);
		}
		qpair_set_state(qp, QP_CONNECTING);
		ctrlr->ops->set_icdata(qp, ctrlr->io_icdata);
		qp->timeout_ms = ctrlr->opts.connect_timeout_ms;
		rc = fabrics_connect(qp, (uint16_t)(qp->entries - 1), 0, ctrlr->cntlid, NULL);
		qp->timeout_ms = tmo;
		if (rc && qpair_usable(qp))
			qpair_fail(qp, rc, "reconnect failed: %s", nvmeof_last_error());
		if (park) {
			TAILQ_REMOVE(&qp->free_reqs, park, link);
			*park = saved;
			TAILQ_INSERT_TAIL(&qp->requeue, park, link);
		}
	}
	qp->reconnecting = false;
	if (rc) {
		if (!qp->errmsg[0] || !strstr(qp->errmsg, "reconnect"))
			snprintf(qp->errmsg, sizeof(qp->errmsg), "reconnect failed: %s",
				 nvmeof_last_error());
		return rc;
	}
	qp->epoch = epoch;
	qp->err = 0;
	qp->errmsg[0] = '\0';
	qpair_set_state(qp, QP_READY);
	nlog_info("queue %u: reconnected", qp->qid);
	return qpair_resend(qp);
}

void ctrlr_qpair_recover(struct nvmeof_qpair *qp)
{
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	enum nvmeof_ctrlr_state st;
	uint32_t epoch;

	if (qp->reconnecting)
		return;
	epoch = __atomic_load_n(&ctrlr->epoch, __ATOMIC_ACQUIRE);
	if (qp->state == QP_READY) {
		if (qp->epoch == epoch)
			return;
		/* Another queue pair lost its connection: the controller is being reset. */
		qpair_fail(qp, -ECONNRESET, "controller reset");
		if (qp->state != QP_RECONNECT)
			return;
	}
	if (qp->state != QP_RECONNECT)
		return;
	st = __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
	if ((st == NVMEOF_CTRLR_RESETTING || st == NVMEOF_CTRLR_CONNECTING) &&
	    pthread_mutex_trylock(&ctrlr->admin_lock) == 0) {
		ctrlr_recover_locked(ctrlr);
		pthread_mutex_unlock(&ctrlr->admin_lock);
		st = __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
		epoch = __atomic_load_n(&ctrlr->epoch, __ATOMIC_ACQUIRE);
	}
	if (st == NVMEOF_CTRLR_DELETED) {
		qpair_give_up(qp, -ENOTCONN,
			      "controller lost: not reconnected within "
			      "ctrl_loss_tmo (%d s)",
			      ctrlr->opts.ctrl_loss_tmo);
		return;
	}
	if (__atomic_load_n(&ctrlr->fast_fail, __ATOMIC_ACQUIRE) &&
	    (!TAILQ_EMPTY(&qp->requeue) || !TAILQ_EMPTY(&qp->pending)))
		qpair_fail_held(qp);
	if (st != NVMEOF_CTRLR_LIVE || qp->epoch == epoch)
		return;
	if (io_qpair_reconnect(qp, epoch))
		ctrlr_conn_lost(ctrlr, epoch, qp->errmsg);
}
