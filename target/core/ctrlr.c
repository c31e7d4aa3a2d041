/* SPDX-License-Identifier: MIT */
/*
 * Controllers: creation and reference counting, the queue table shared with I/O queues
 * on other reactors, the CC/CSTS state machine, Keep Alive, asynchronous events, the
 * error log, and request dispatch/completion for every queue pair.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/iov.h"
#include "fused.h"
#include "common/log.h"
#include "reactor/reactor.h"

/* ---- Requests ------------------------------------------------------------------------------- */

enum nvme_data_xfer nvmf_req_xfer(const struct nvme_cmd *cmd, bool admin)
{
	(void)admin;
	if (cmd->opc == NVME_ADMIN_FABRICS) {
		const struct nvmf_cmd *f = (const struct nvmf_cmd *)cmd;
		return (enum nvme_data_xfer)(f->fctype & 0x3);
	}
	return nvme_opc_xfer(cmd->opc);
}

uint32_t nvmf_req_sgl_length(const struct nvme_cmd *cmd)
{
	const struct nvme_sgl_desc *sgl = &cmd->dptr.sgl1;

	if ((sgl->type >> 4) == NVME_SGL_TYPE_KEYED_DATA_BLOCK)
		return (uint32_t)sgl->length[0] | (uint32_t)sgl->length[1] << 8 |
		       (uint32_t)sgl->length[2] << 16;
	return get_le32(sgl->length);
}

size_t nvmf_req_copy_to(struct nvmf_req *req, size_t off, const void *buf, size_t len)
{
	if (off >= req->length)
		return 0;
	if (len > req->length - off)
		len = req->length - off;
	return iov_copy_from_buf(req->iov, req->iovcnt, off, buf, len);
}

size_t nvmf_req_copy_from(struct nvmf_req *req, size_t off, void *buf, size_t len)
{
	if (off >= req->length)
		return 0;
	if (len > req->length - off)
		len = req->length - off;
	return iov_copy_to_buf(req->iov, req->iovcnt, off, buf, len);
}

void nvmf_req_zero(struct nvmf_req *req, size_t off)
{
	iov_memset(req->iov, req->iovcnt, off, 0, SIZE_MAX);
}

void nvmf_req_reply(struct nvmf_req *req, const void *buf, size_t len)
{
	size_t n = nvmf_req_copy_to(req, 0, buf, len);

	nvmf_req_zero(req, n);
}

void nvmf_req_complete(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	uint16_t status;

	if (req->ns) {
		nvmf_ns_put(req->ns, qp->reactor);
		req->ns = NULL;
	}
	if (req->scratch) {
		reactor_buf_put(qp->reactor, req->scratch);
		req->scratch = NULL;
	}
	req->rsp.cid = req->cmd.cid; /* both little-endian as on the wire */
	put_le16(&req->rsp.sqid, req->local_admin ? 0 : qp->qid);
	if (!qp->sq_flow_disabled && qp->sqsize)
		qp->sqhd = (uint16_t)((qp->sqhd + 1u) % qp->sqsize);
	put_le16(&req->rsp.sqhd, qp->sq_flow_disabled ? 0 : qp->sqhd);

	status = get_le16(&req->rsp.status) & 0xfffe;
	if (status && qp->ctrlr && status != ST_ABORTED_SQ)
		nvmf_ctrlr_record_error(qp->ctrlr, req);
	qp->ops->req_complete(req);
}

void nvmf_req_done(struct nvmf_req *req, uint16_t status)
{
	put_le16(&req->rsp.status, status);
	nvmf_req_complete(req);
}

void nvmf_req_complete_status(struct nvmf_req *req, uint8_t sct, uint8_t sc, bool dnr)
{
	nvmf_req_done(req, (uint16_t)(NVME_STATUS(sct, sc) | (dnr ? NVME_STATUS_DNR : 0)));
}

/* PSDT must say "SGL" on fabric queues (01b); 00b is tolerated since fabrics have no PRPs. */
static bool req_psdt_ok(const struct nvmf_req *req)
{
	unsigned int psdt = req->cmd.flags >> NVME_CMD_PSDT_SHIFT;

	if (req->qpair->ctrlr && req->qpair->ctrlr->local)
		return true;
	return psdt == 0 || psdt == NVME_CMD_PSDT_SGL_MPTR_CONTIG;
}

static void req_exec(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	uint16_t status;

	req->ns = NULL;
	req->execute = NULL;
	req->scratch = NULL;
	req->step = 0;
	memset(&req->rsp, 0, sizeof(req->rsp));

	if (!req_psdt_ok(req))
		status = ST_INVALID_FIELD;
	else if ((req->cmd.flags & NVME_CMD_FUSE_MASK) &&
		 (qp->qid == 0 || req->local_admin || req->cmd.opc == NVME_OPC_FABRICS))
		status = ST_INVALID_FIELD; /* fused operations are NVM commands only */
	else if (req->cmd.opc == NVME_ADMIN_FABRICS && !req->local_admin)
		status = nvmf_fabrics_parse(req);
	else if (!qp->connected || !qp->ctrlr)
		status = ST_CMD_SEQ;
	else if (qp->qid == 0 || req->local_admin)
		status = nvmf_admin_parse(req);
	else
		status = nvmf_io_parse(req);

	if (status) {
		nvmf_req_done(req, status);
		return;
	}
	req->execute(req);
}

void nvmf_req_exec(struct nvmf_req *req)
{
	req->local_admin = false;
	req_exec(req);
}

void nvmf_local_admin_exec(struct nvmf_req *req)
{
	req->local_admin = true;
	req_exec(req);
}

/* ---- Queue pairs ---------------------------------------------------------------------------- */

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

	if (c && !c->local && qp->qid == 0 && c->admin_qp == qp)
		nvmf_ctrlr_teardown(c, true, "admin queue disconnected");
}

void nvmf_qpair_fini(struct nvmf_qpair *qp)
{
	struct nvmf_ctrlr *c = qp->ctrlr;

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

/* ---- Controller objects --------------------------------------------------------------------- */

static void ctrlr_set_state(struct nvmf_ctrlr *c, enum nvmf_ctrlr_state st)
{
	static const char *const names[] = {
		[NVMF_CTRLR_DISABLED] = "disabled", [NVMF_CTRLR_READY] = "ready",
		[NVMF_CTRLR_FATAL] = "fatal",	    [NVMF_CTRLR_SHUTDOWN] = "shutdown",
		[NVMF_CTRLR_DEAD] = "dead",
	};

	/* A dead controller never comes back; everything else may be reset or killed. */
	assert(c->state != NVMF_CTRLR_DEAD);
	assert(st != NVMF_CTRLR_READY || c->state == NVMF_CTRLR_DISABLED);
	log_debug("%s: %s -> %s", c->label, names[c->state], names[st]);
	__atomic_store_n(&c->state, st, __ATOMIC_RELEASE);
}

bool nvmf_ctrlr_ready(const struct nvmf_ctrlr *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == NVMF_CTRLR_READY;
}

static void ctrlr_features_default(struct nvmf_ctrlr *c)
{
	memset(&c->feat, 0, sizeof(c->feat));
	c->feat.temp_over = NVMF_TEMP_WARN;
	c->feat.temp_under = 0;
	__atomic_store_n(&c->wce, true, __ATOMIC_RELAXED);
}

static bool cntlid_in_use(struct nvmf_subsys *s, uint16_t id)
{
	struct nvmf_ctrlr *c;

	TAILQ_FOREACH (c, &s->ctrlrs, link)
		if (c->cntlid == id)
			return true;
	return false;
}

struct nvmf_ctrlr *nvmf_ctrlr_create(struct nvmf_subsys *s, struct nvmf_qpair *admin,
				     const char *hostnqn, const uint8_t hostid[16],
				     uint16_t *status)
{
	struct nvmf_ctrlr *c = calloc(1, sizeof(*c));
	unsigned int span;
	bool found = false;

	*status = ST_INTERNAL;
	if (!c)
		return NULL;
	c->subsys = s;
	c->tgt = s->tgt;
	c->port = admin ? admin->port : NULL;
	c->discovery = s->type == NVMF_SUBSYS_DISCOVERY;
	c->local = admin == NULL;
	snprintf(c->hostnqn, sizeof(c->hostnqn), "%s", hostnqn);
	if (hostid)
		memcpy(c->hostid, hostid, sizeof(c->hostid));
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->err_lock, NULL);
	c->state = NVMF_CTRLR_DISABLED;
	c->refs = 1;
	c->admin_qp = admin;
	c->admin_reactor = admin ? admin->reactor : NULL;
	c->max_io_qid = c->discovery ? 0 : (uint16_t)s->tgt->opts.max_io_queues;
	if (admin && admin->port && admin->port->ops)
		c->sgls_extra = (uint8_t)admin->port->ops->sgls;
	ctrlr_features_default(c);

	pthread_mutex_lock(&s->lock);
	span = s->dying ? 0 : (unsigned int)s->cntlid_max - s->cntlid_min + 1;
	if (s->next_cntlid < s->cntlid_min || s->next_cntlid > s->cntlid_max)
		s->next_cntlid = s->cntlid_min;
	for (unsigned int i = 0; i < span && s->cntlid_min <= s->cntlid_max; i++) {
		uint16_t id = s->next_cntlid;

		s->next_cntlid = id >= s->cntlid_max ? s->cntlid_min : (uint16_t)(id + 1);
		if (!cntlid_in_use(s, id)) {
			c->cntlid = id;
			snprintf(c->label, sizeof(c->label), "ctrlr %u", id);
			found = true;
			break;
		}
	}
	if (found) {
		__atomic_add_fetch(&s->tgt->nctrlrs, 1, __ATOMIC_RELAXED);
		TAILQ_INSERT_TAIL(&s->ctrlrs, c, link);
	}
	pthread_mutex_unlock(&s->lock);
	if (!found) {
		log_peer("%s: no controller ID left for %s", s->nqn, hostnqn);
		pthread_mutex_destroy(&c->lock);
		pthread_mutex_destroy(&c->err_lock);
		free(c);
		*status = NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_CONTROLLER_BUSY);
		return NULL;
	}
	log_notice("ctrlr %u on %s for %s%s%s", c->cntlid, s->nqn, c->hostnqn,
		   admin && admin->peer[0] ? " from " : "", admin ? admin->peer : "");
	*status = ST_OK;
	return c;
}

void nvmf_ctrlr_get(struct nvmf_ctrlr *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

bool nvmf_ctrlr_get_unless_zero(struct nvmf_ctrlr *c)
{
	unsigned int r = __atomic_load_n(&c->refs, __ATOMIC_RELAXED);

	while (r) {
		if (__atomic_compare_exchange_n(&c->refs, &r, r + 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

void nvmf_ctrlr_put(struct nvmf_ctrlr *c)
{
	struct nvmf_subsys *s = c->subsys;
	struct nvmf_tgt *tgt = c->tgt;

	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_lock(&s->lock);
	TAILQ_REMOVE(&s->ctrlrs, c, link);
	pthread_mutex_unlock(&s->lock);
	assert(!c->ka_active);
	log_info("%s: freed", c->label);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->err_lock);
	free(c);
	__atomic_sub_fetch(&tgt->nctrlrs, 1, __ATOMIC_RELEASE);
}

struct nvmf_ctrlr *nvmf_ctrlr_lookup(struct nvmf_subsys *s, uint16_t cntlid)
{
	struct nvmf_ctrlr *c, *found = NULL;

	pthread_mutex_lock(&s->lock);
	TAILQ_FOREACH (c, &s->ctrlrs, link) {
		if (c->cntlid != cntlid)
			continue;
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != NVMF_CTRLR_DEAD &&
		    nvmf_ctrlr_get_unless_zero(c))
			found = c;
		break;
	}
	pthread_mutex_unlock(&s->lock);
	return found;
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
		log_notice("%s: %u I/O queue%s connected (qid %u sqsize %u%s%s, admin sqsize %u)",
			   c->label, n, n == 1 ? "" : "s", qid, qp->sqsize,
			   qp->peer[0] ? " from " : "", qp->peer, admin_sqsize);
	return status;
}

/* ---- Teardown ------------------------------------------------------------------------------- */

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

static void ka_stop(struct nvmf_ctrlr *c)
{
	if (c->ka_active) {
		ev_timer_stop(c->admin_reactor->loop, &c->ka_timer);
		c->ka_active = false;
	}
}

void nvmf_ctrlr_teardown(struct nvmf_ctrlr *c, bool abort_aers, const char *why)
{
	bool dead;

	pthread_mutex_lock(&c->lock);
	dead = c->state == NVMF_CTRLR_DEAD;
	if (!dead) {
		ctrlr_set_state(c, NVMF_CTRLR_DEAD);
		__atomic_store_n(&c->csts, c->csts & ~NVME_CSTS_RDY, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&c->lock);

	if (abort_aers)
		nvmf_ctrlr_aer_abort_all(c);
	else
		c->naer = 0; /* the transport is releasing them */
	if (dead)
		return;
	log_notice("%s: %s, tearing down", c->label, why);
	ka_stop(c);
	nvmf_ctrlr_disconnect_io_qpairs(c);
}

static void kill_msg(void *arg)
{
	struct nvmf_ctrlr *c = arg;
	struct nvmf_qpair *admin;

	nvmf_ctrlr_teardown(c, true, "target stopping");
	pthread_mutex_lock(&c->lock);
	admin = c->admin_qp;
	pthread_mutex_unlock(&c->lock);
	if (admin)
		admin->ops->qpair_disconnect(admin);
	nvmf_ctrlr_put(c);
}

void nvmf_ctrlr_kill_async(struct nvmf_ctrlr *c)
{
	nvmf_ctrlr_get(c);
	if (reactor_send_msg(c->admin_reactor, kill_msg, c)) {
		log_err("%s: cannot reach its reactor to tear it down", c->label);
		nvmf_ctrlr_put(c);
	}
}

/* ---- Properties ----------------------------------------------------------------------------- */

uint64_t nvmf_ctrlr_cap(const struct nvmf_ctrlr *c)
{
	uint64_t mqes = c->tgt->opts.max_queue_depth - 1;

	return (mqes & 0xffff) | NVME_CAP_CQR | (uint64_t)NVMF_CAP_TO << NVME_CAP_TO_SHIFT |
	       NVME_CAP_CSS_NVM | 0ull << NVME_CAP_MPSMIN_SHIFT | 0ull << NVME_CAP_MPSMAX_SHIFT;
}

uint16_t nvmf_ctrlr_prop_get(struct nvmf_ctrlr *c, uint32_t offset, unsigned int size,
			     uint64_t *val)
{
	if (size != 4 && size != 8)
		return ST_INVALID_FIELD;
	if (size == 8) {
		if (offset != NVME_REG_CAP)
			return ST_INVALID_FIELD;
		*val = nvmf_ctrlr_cap(c);
		return ST_OK;
	}
	switch (offset) {
	case NVME_REG_VS:
		*val = NVME_VS(1, 3, 0);
		return ST_OK;
	case NVME_REG_CC:
		pthread_mutex_lock(&c->lock);
		*val = c->cc;
		pthread_mutex_unlock(&c->lock);
		return ST_OK;
	case NVME_REG_CSTS:
		*val = __atomic_load_n(&c->csts, __ATOMIC_ACQUIRE);
		return ST_OK;
	case NVME_REG_CRTO:
		/* CRWMT and CRIMT both equal CAP.TO */
		*val = (uint32_t)NVMF_CAP_TO << 16 | NVMF_CAP_TO;
		return ST_OK;
	default:
		return ST_INVALID_FIELD;
	}
}

struct shn_flush {
	struct bdev_io bio;
	struct nvmf_ctrlr *c;
	struct nvmf_ns *ns;
};

static void shutdown_complete(struct nvmf_ctrlr *c)
{
	pthread_mutex_lock(&c->lock);
	if (c->state == NVMF_CTRLR_SHUTDOWN && (c->cc & NVME_CC_SHN_MASK)) {
		uint32_t csts = (c->csts & ~NVME_CSTS_SHST_MASK) |
				NVME_CSTS_SHST_COMPLETE << NVME_CSTS_SHST_SHIFT;

		__atomic_store_n(&c->csts, csts, __ATOMIC_RELEASE);
		log_info("%s: shutdown complete", c->label);
	}
	pthread_mutex_unlock(&c->lock);
}

static void shn_flush_done(struct bdev_io *bio, int status)
{
	struct shn_flush *f = bio->cb_arg;
	struct nvmf_ctrlr *c = f->c;

	if (status)
		log_warn("%s: flush of namespace %u at shutdown failed: %s", c->label, f->ns->nsid,
			 strerror(-status));
	nvmf_ns_put(f->ns, c->admin_reactor);
	free(f);
	if (--c->shn_pending == 0)
		shutdown_complete(c);
	nvmf_ctrlr_put(c);
}

/* Quiesce for CC.SHN: make every volatile cache durable, then report SHST complete. */
static void ctrlr_shutdown(struct nvmf_ctrlr *c)
{
	struct nvmf_subsys *s = c->subsys;

	c->shn_pending = 1; /* held while submitting */
	for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		struct nvmf_ns *ns = nvmf_ns_get(s, nsid, c->admin_reactor);
		struct shn_flush *f;

		if (!ns)
			continue;
		if (!ns->bdev->volatile_cache || !(f = calloc(1, sizeof(*f)))) {
			nvmf_ns_put(ns, c->admin_reactor);
			continue;
		}
		f->c = c;
		f->ns = ns;
		f->bio.op = BDEV_OP_FLUSH;
		f->bio.reactor = c->admin_reactor;
		f->bio.cb = shn_flush_done;
		f->bio.cb_arg = f;
		c->shn_pending++;
		nvmf_ctrlr_get(c);
		bdev_submit(ns->bdev, &f->bio);
	}
	if (--c->shn_pending == 0)
		shutdown_complete(c);
}

static bool cc_supported(const struct nvmf_ctrlr *c, uint32_t cc)
{
	if ((cc & NVME_CC_MPS_MASK) || (cc & NVME_CC_AMS_MASK) || (cc & NVME_CC_CSS_MASK))
		return false;
	if (c->discovery)
		return true;
	return ((cc & NVME_CC_IOSQES_MASK) >> NVME_CC_IOSQES_SHIFT) == 6 &&
	       ((cc & NVME_CC_IOCQES_MASK) >> NVME_CC_IOCQES_SHIFT) == 4;
}

/* Controller reset (CC.EN 1 -> 0): forget the I/O queues and the per-reset state. */
static void ctrlr_reset(struct nvmf_ctrlr *c)
{
	log_info("%s: controller reset", c->label);
	nvmf_ctrlr_disconnect_io_qpairs(c);
	nvmf_ctrlr_aer_abort_all(c);
	c->aen_pending = 0;
	c->aen_masked = 0;
	c->nr_changed_ns = 0;
}

uint16_t nvmf_ctrlr_prop_set(struct nvmf_ctrlr *c, uint32_t offset, unsigned int size,
			     uint64_t val)
{
	uint32_t old, new = (uint32_t)val, csts;
	bool reset = false, shutdown = false;

	if (size != 4 || offset != NVME_REG_CC || (val >> 32))
		return ST_INVALID_FIELD;

	pthread_mutex_lock(&c->lock);
	if (c->state == NVMF_CTRLR_DEAD) {
		pthread_mutex_unlock(&c->lock);
		return ST_CMD_SEQ;
	}
	old = c->cc;
	c->cc = new;
	csts = c->csts;
	if ((new & NVME_CC_EN) && !(old & NVME_CC_EN) && c->state == NVMF_CTRLR_DISABLED) {
		if (cc_supported(c, new)) {
			ctrlr_set_state(c, NVMF_CTRLR_READY);
			csts |= NVME_CSTS_RDY;
		} else {
			log_peer("%s: unsupported CC %#x", c->label, new);
			ctrlr_set_state(c, NVMF_CTRLR_FATAL);
			csts |= NVME_CSTS_CFS;
		}
	}
	if (!(new & NVME_CC_EN) && (old & NVME_CC_EN)) {
		ctrlr_set_state(c, NVMF_CTRLR_DISABLED);
		csts = 0;
		c->max_io_qid = (uint16_t)c->tgt->opts.max_io_queues;
		c->io_queues_created = false;
		reset = true;
	}
	if ((new & NVME_CC_SHN_MASK) && !(old & NVME_CC_SHN_MASK)) {
		if (c->state != NVMF_CTRLR_SHUTDOWN)
			ctrlr_set_state(c, NVMF_CTRLR_SHUTDOWN);
		csts = (csts & ~NVME_CSTS_SHST_MASK) |
		       NVME_CSTS_SHST_OCCURRING << NVME_CSTS_SHST_SHIFT;
		shutdown = true;
	}
	if (!(new & NVME_CC_SHN_MASK) && (old & NVME_CC_SHN_MASK)) {
		csts &= ~NVME_CSTS_SHST_MASK;
		if (c->state == NVMF_CTRLR_SHUTDOWN)
			ctrlr_set_state(c, NVMF_CTRLR_DISABLED);
		if (!(new & NVME_CC_EN))
			csts &= ~NVME_CSTS_RDY;
	}
	__atomic_store_n(&c->csts, csts, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->lock);

	if (reset)
		ctrlr_reset(c);
	if (shutdown)
		ctrlr_shutdown(c);
	return ST_OK;
}

/* ---- Keep Alive ----------------------------------------------------------------------------- */

static void ka_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	nvmf_ctrlr_ka_expired(w->data);
}

void nvmf_ctrlr_ka_restart(struct nvmf_ctrlr *c)
{
	double t;

	if (!c->kato_ms || !c->admin_reactor || !c->admin_reactor->loop ||
	    c->state == NVMF_CTRLR_DEAD)
		return;
	/* KATO plus a grace of one KATO, at most a second, for the host's timer slack. */
	t = (c->kato_ms + (c->kato_ms < 1000 ? c->kato_ms : 1000)) / 1000.0;
	if (!c->ka_active) {
		ev_timer_init(&c->ka_timer, ka_timer_cb, 0., t);
		c->ka_timer.data = c;
		c->ka_active = true;
	}
	c->ka_timer.repeat = t;
	ev_timer_again(c->admin_reactor->loop, &c->ka_timer);
}

void nvmf_ctrlr_ka_set(struct nvmf_ctrlr *c, uint32_t kato_ms)
{
	/* Round up to the Keep Alive granularity (KAS, 100 ms). */
	if (kato_ms % NVMF_KAS_MS)
		kato_ms += NVMF_KAS_MS - kato_ms % NVMF_KAS_MS;
	c->kato_ms = kato_ms;
	if (!kato_ms)
		ka_stop(c);
	else
		nvmf_ctrlr_ka_restart(c);
}

void nvmf_ctrlr_ka_expired(struct nvmf_ctrlr *c)
{
	struct nvmf_qpair *admin;

	log_warn("%s: keep alive timeout (KATO %u ms) for %s", c->label, c->kato_ms, c->hostnqn);
	nvmf_ctrlr_get(c);
	nvmf_ctrlr_teardown(c, true, "keep alive expired");
	pthread_mutex_lock(&c->lock);
	admin = c->admin_qp;
	pthread_mutex_unlock(&c->lock);
	if (admin)
		admin->ops->qpair_disconnect(admin);
	nvmf_ctrlr_put(c);
}

/* ---- Asynchronous events -------------------------------------------------------------------- */

static uint32_t aen_enabled(const struct nvmf_ctrlr *c)
{
	uint32_t en = 0;

	if (c->feat.aec & NVME_AEN_CFG_NS_ATTR)
		en |= NVMF_AEN_NS_CHANGED;
	if (c->feat.aec & NVME_AEN_CFG_DISC_CHANGE)
		en |= NVMF_AEN_DISC_CHANGED;
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

	nvmf_ctrlr_aen_raise(c, NVMF_AEN_DISC_CHANGED);
	nvmf_ctrlr_put(c);
}

void nvmf_ctrlr_notify_disc_changed(struct nvmf_ctrlr *c)
{
	if (!c->admin_reactor)
		return;
	nvmf_ctrlr_get(c);
	if (reactor_send_msg(c->admin_reactor, disc_changed_msg, c))
		nvmf_ctrlr_put(c);
}

/* ---- Error log and statistics --------------------------------------------------------------- */

void nvmf_ctrlr_record_error(struct nvmf_ctrlr *c, const struct nvmf_req *req)
{
	const struct nvme_cmd *cmd = &req->cmd;
	struct nvme_error_log_entry *e;
	bool io = req->qpair->qid && !req->local_admin && cmd->opc != NVME_OPC_FABRICS;

	pthread_mutex_lock(&c->err_lock);
	e = &c->errlog[c->err_head];
	c->err_head = (c->err_head + 1) % NVMF_ERRLOG_ENTRIES;
	memset(e, 0, sizeof(*e));
	put_le64(&e->error_count, ++c->err_count);
	put_le16(&e->sqid, req->local_admin ? 0 : req->qpair->qid);
	e->cid = cmd->cid;
	put_le16(&e->status, get_le16(&req->rsp.status) & 0xfffe);
	put_le16(&e->error_location, 0xffff);
	if (io && cmd->opc != NVME_OPC_FLUSH && cmd->opc != NVME_OPC_DATASET_MANAGEMENT)
		put_le64(&e->lba, (uint64_t)get_le32(&cmd->cdw11) << 32 | get_le32(&cmd->cdw10));
	e->nsid = cmd->nsid;
	e->trtype = req->qpair->ops ? req->qpair->ops->trtype : 0;
	pthread_mutex_unlock(&c->err_lock);
}

void nvmf_stats_read(const struct nvmf_qpair_stats *src, struct nvmf_qpair_stats *dst)
{
	dst->read_cmds = __atomic_load_n(&src->read_cmds, __ATOMIC_RELAXED);
	dst->write_cmds = __atomic_load_n(&src->write_cmds, __ATOMIC_RELAXED);
	dst->other_cmds = __atomic_load_n(&src->other_cmds, __ATOMIC_RELAXED);
	dst->read_bytes = __atomic_load_n(&src->read_bytes, __ATOMIC_RELAXED);
	dst->write_bytes = __atomic_load_n(&src->write_bytes, __ATOMIC_RELAXED);
}

void nvmf_stats_add(struct nvmf_qpair_stats *dst, const struct nvmf_qpair_stats *src)
{
	dst->read_cmds += src->read_cmds;
	dst->write_cmds += src->write_cmds;
	dst->other_cmds += src->other_cmds;
	dst->read_bytes += src->read_bytes;
	dst->write_bytes += src->write_bytes;
}

/* Caller holds c->lock. */
static void ctrlr_stats_locked(struct nvmf_ctrlr *c, struct nvmf_qpair_stats *out)
{
	for (unsigned int i = 1; i <= NVMF_MAX_IO_QUEUES; i++) {
		struct nvmf_qpair_stats st;

		if (!c->io_qp[i])
			continue;
		nvmf_stats_read(&c->io_qp[i]->stats, &st);
		nvmf_stats_add(out, &st);
	}
}

void nvmf_ctrlr_get_stats(struct nvmf_ctrlr *c, struct nvmf_qpair_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->retired;
	ctrlr_stats_locked(c, out);
	pthread_mutex_unlock(&c->lock);
}

void nvmf_subsys_get_stats(struct nvmf_subsys *s, struct nvmf_qpair_stats *out)
{
	struct nvmf_ctrlr *c;

	pthread_mutex_lock(&s->lock);
	*out = s->retired;
	TAILQ_FOREACH (c, &s->ctrlrs, link) {
		pthread_mutex_lock(&c->lock);
		ctrlr_stats_locked(c, out);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- In-process front ends ------------------------------------------------------------------ */

int nvmf_local_connect(struct nvmf_qpair *qp, struct nvmf_subsys *subsys, const char *hostnqn,
		       const uint8_t hostid[16])
{
	struct nvmf_ctrlr *c;
	uint16_t status;

	if (subsys->type == NVMF_SUBSYS_DISCOVERY)
		return -ENOENT;
	if (qp->connected || qp->ctrlr)
		return -EINVAL;
	if (!hostnqn || strnlen(hostnqn, NVME_NQN_FIELD) > NVME_NQN_MAX)
		return -EINVAL;
	if (!nvmf_subsys_host_allowed(subsys, hostnqn))
		return -EACCES;
	c = nvmf_ctrlr_create(subsys, NULL, hostnqn, hostid, &status);
	if (!c)
		return status == ST_INTERNAL ? -ENOMEM : -EBUSY;

	pthread_mutex_lock(&c->lock);
	c->admin_reactor = qp->reactor;
	c->cc = NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT;
	ctrlr_set_state(c, NVMF_CTRLR_READY);
	__atomic_store_n(&c->csts, NVME_CSTS_RDY, __ATOMIC_RELEASE);
	__atomic_store_n(&c->vwc_present, true, __ATOMIC_RELAXED);
	c->max_io_qid = 1;
	c->io_qp[1] = qp;
	c->num_io_qpairs = 1;
	c->io_queues_created = true;
	qp->qid = 1;
	qp->sqsize = (uint16_t)(subsys->tgt->opts.max_queue_depth > 0xffff
					? 0xffff
					: subsys->tgt->opts.max_queue_depth);
	c->io_sqsize = qp->sqsize;
	qp->sq_flow_disabled = true;
	qp->ctrlr = c;
	qp->connected = true;
	pthread_mutex_unlock(&c->lock);
	log_notice("%s: 1 I/O queue connected (local front end%s%s, sqsize %u)", c->label,
		   qp->peer[0] ? " for " : "", qp->peer, qp->sqsize);
	return 0;
}
