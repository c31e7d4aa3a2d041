/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: binding a transport connection to the target, attaching it to its
 * controller's queue table (Connect) and detaching it (Disconnect, teardown, release),
 * and disconnecting every I/O queue of a controller through the queues' reactors.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/log.h"
#include "fused.h"
#include "qos.h"
#include "reactor/reactor.h"

void nvmf_qpair_init(struct nvmf_qpair *qp, const struct nvmf_transport_ops *ops,
		     struct nvmf_tgt *tgt, struct nvmf_port *port, struct reactor *r)
{
	qp->ops = ops;
	qp->tgt = tgt;
	qp->port = port;
	qp->reactor = r;
	qp->ctrlr = NULL;
	qp->qid = 0;
	qp->sqsize = 0;
	qp->sqhd = 0;
	qp->sq_flow_disabled = false;
	qp->connected = false;
	memset(&qp->stats, 0, sizeof(qp->stats));
	qp->fused_first = NULL;
	TAILQ_INIT(&qp->rl_waiters);
	qp->auth_pending = false;
	qp->auth = NULL;
	qp->host = NULL;
	if (tgt)
		__atomic_add_fetch(&tgt->nconnections, 1, __ATOMIC_RELAXED);
	if (tgt && port) {
		pthread_mutex_lock(&tgt->lock);
		TAILQ_INSERT_TAIL(&port->qpairs, qp, link);
		pthread_mutex_unlock(&tgt->lock);
	}
}

void nvmf_qpair_disconnected(struct nvmf_qpair *qp)
{
	struct nvmf_ctrlr *c = qp->ctrlr;

	nvmf_fused_abort(qp);
	nvmf_qos_qpair_gone(qp); /* commands waiting for QoS tokens drain too */

	if (c && !c->local && qp->qid == 0 && c->admin_qp == qp)
		nvmf_ctrlr_teardown(c, true, "admin queue disconnected");
}

void nvmf_qpair_fini(struct nvmf_qpair *qp)
{
	struct nvmf_ctrlr *c = qp->ctrlr;

	nvmf_auth_qpair_fini(qp); /* before the controller its machine names may go */
	if (c) {
		bool is_admin = !c->local && qp->qid == 0 && c->admin_qp == qp;

		if (is_admin) {
			nvmf_ctrlr_teardown(c, false, "admin queue closed");
			pthread_mutex_lock(&c->lock);
			c->admin_qp = NULL;
			pthread_mutex_unlock(&c->lock);
		} else {
			nvmf_ctrlr_detach_io_qpair(c, qp);
		}
		if (c->local)
			nvmf_ctrlr_teardown(c, false, "front end closed");
		qp->ctrlr = NULL;
		nvmf_ctrlr_put(c);
	}
	qp->connected = false;
	qp->fused_first = NULL; /* released by the transport with its other requests */
	if (qp->tgt)
		nvmf_host_share_put(qp->tgt, qp->host);
	qp->host = NULL;
	if (qp->tgt && qp->port) {
		pthread_mutex_lock(&qp->tgt->lock);
		TAILQ_REMOVE(&qp->port->qpairs, qp, link);
		pthread_mutex_unlock(&qp->tgt->lock);
	}
	if (qp->tgt)
		__atomic_sub_fetch(&qp->tgt->nconnections, 1, __ATOMIC_RELEASE);
	qp->tgt = NULL;
}

void nvmf_ctrlr_detach_io_qpair(struct nvmf_ctrlr *c, struct nvmf_qpair *qp)
{
	struct nvmf_subsys *s = c->subsys;
	struct nvmf_qpair_stats st;
	bool found = false;
	unsigned int left = 0;

	pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&c->lock);
	if (qp->qid <= NVMF_MAX_IO_QUEUES && c->io_qp[qp->qid] == qp) {
		c->io_qp[qp->qid] = NULL;
		left = --c->num_io_qpairs;
		nvmf_stats_read(&qp->stats, &st);
		nvmf_stats_add(&c->retired, &st);
		nvmf_stats_add(&s->retired, &st);
		if (c->local)
			nvmf_stats_add(&s->retired_local, &st);
		memset(&qp->stats, 0, sizeof(qp->stats));
		found = true;
	}
	qp->connected = false;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&s->lock);
	if (found)
		log_info("%s: I/O queue %u closed, %u I/O queue%s left", c->label, qp->qid, left,
			 left == 1 ? "" : "s");
}

static uint32_t connect_ipo(uint16_t offset, bool data)
{
	return NVME_CONNECT_IPO(offset, data);
}

uint16_t nvmf_ctrlr_add_io_qpair(struct nvmf_ctrlr *c, struct nvmf_qpair *qp, uint16_t qid,
				 uint32_t *dw0)
{
	const uint16_t st_param =
		NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_PARAMETERS);
	uint16_t status = ST_OK;
	unsigned int n = 0;
	uint16_t admin_sqsize = 0;

	pthread_mutex_lock(&c->lock);
	if (c->discovery || c->local) {
		*dw0 = connect_ipo(offsetof(struct nvmf_connect_cmd, qid), false);
		status = st_param;
	} else if (c->state != NVMF_CTRLR_READY) {
		status = ST_CMD_SEQ;
	} else if (qid > c->max_io_qid || qid > NVMF_MAX_IO_QUEUES || c->io_qp[qid]) {
		*dw0 = connect_ipo(offsetof(struct nvmf_connect_cmd, qid), false);
		status = st_param;
	} else {
		c->io_qp[qid] = qp;
		n = ++c->num_io_qpairs;
		c->io_queues_created = true;
		c->io_sqsize = qp->sqsize;
		qp->ctrlr = c;
		qp->qid = qid;
		qp->connected = true;
		admin_sqsize = c->admin_qp ? c->admin_qp->sqsize : 0;
	}
	pthread_mutex_unlock(&c->lock);
	if (status == ST_OK)
		log_info("%s: %u I/O queue%s connected (qid %u sqsize %u%s%s, admin sqsize %u)",
			 c->label, n, n == 1 ? "" : "s", qid, qp->sqsize,
			 qp->peer[0] ? " from " : "", qp->peer, admin_sqsize);
	return status;
}

struct io_disc_msg {
	struct nvmf_ctrlr *c;
	struct reactor *r;
};

static void io_disconnect_msg(void *arg)
{
	struct io_disc_msg *m = arg;
	struct nvmf_ctrlr *c = m->c;
	struct nvmf_qpair *qps[NVMF_MAX_IO_QUEUES + 1];
	unsigned int n = 0;

	pthread_mutex_lock(&c->lock);
	for (unsigned int i = 1; i <= NVMF_MAX_IO_QUEUES; i++)
		if (c->io_qp[i] && c->io_qp[i]->reactor == m->r)
			qps[n++] = c->io_qp[i];
	pthread_mutex_unlock(&c->lock);
	/* Queues of this reactor are only released on this reactor: still alive here. */
	for (unsigned int i = 0; i < n; i++)
		qps[i]->ops->qpair_disconnect(qps[i]);
	nvmf_ctrlr_put(c);
	free(m);
}

void nvmf_ctrlr_disconnect_io_qpairs(struct nvmf_ctrlr *c)
{
	struct reactor *rs[NVMF_MAX_IO_QUEUES + 1];
	unsigned int nr = 0;

	pthread_mutex_lock(&c->lock);
	for (unsigned int i = 1; i <= NVMF_MAX_IO_QUEUES; i++) {
		struct nvmf_qpair *qp = c->io_qp[i];
		unsigned int j;

		if (!qp)
			continue;
		for (j = 0; j < nr && rs[j] != qp->reactor; j++)
			;
		if (j == nr)
			rs[nr++] = qp->reactor;
	}
	pthread_mutex_unlock(&c->lock);

	for (unsigned int i = 0; i < nr; i++) {
		struct io_disc_msg *m = malloc(sizeof(*m));

		if (!m) {
			log_err("%s: out of memory disconnecting I/O queues", c->label);
			continue;
		}
		m->c = c;
		m->r = rs[i];
		nvmf_ctrlr_get(c);
		if (reactor_send_msg(rs[i], io_disconnect_msg, m)) {
			log_err("%s: cannot reach reactor to disconnect I/O queues", c->label);
			nvmf_ctrlr_put(c);
			free(m);
		}
	}
}
