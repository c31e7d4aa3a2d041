/* SPDX-License-Identifier: MIT */
/*
 * In-band authentication of queues (NVM Express Base 2.0 section 8.13): the target's table
 * of hosts with DH-HMAC-CHAP settings, AUTHREQ in the Connect response, the Fabrics
 * Authentication Send (05h) and Authentication Receive (06h) commands that carry the
 * messages of the queue's machine (target/auth/dhchap_ctrl.h), the deadline of an
 * exchange, and closing the queue when authentication fails.
 *
 * Until its first exchange succeeds a queue runs nothing but Authentication Send and
 * Receive (dispatch.c answers Authentication Required, as Linux nvmet does). A host may
 * re-authenticate a live queue with a new AUTH_Negotiate: the queue keeps working
 * meanwhile and is closed if that exchange fails or misses its deadline. Logs name the
 * host and the outcome, never a key.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/dhchap_ctrl.h"
#include "auth_pool.h"
#include "common/dhchap_crypto.h"
#include "common/endian.h"
#include "common/log.h"
#include "ctrlr.h"
#include "reactor/reactor.h"

#define AUTH_MSG_BUF \
	4096               /* the largest Transfer Length taken (an AUTH_Negotiate of 63
			    * protocol descriptors); the largest message is far smaller */
#define AUTH_GRACE_MS 1000 /* after a failure: time for the host to read the Failure1 */

struct nvmf_host_auth {
	char nqn[NVME_NQN_FIELD];
	struct dhchap_host_conf *conf;
};

struct nvmf_qpair_auth {
	struct nvmf_qpair *qp;
	struct dhchap_ctrl m;
	bool required; /* the host must authenticate this queue: failing closes it */
	bool timer_active;
	bool closing; /* failed: the timer closes the queue after the grace period */
	ev_timer timer;
	/* A message whose Diffie-Hellman work runs on the pool (job_start()); while busy, only
	 * the pool's thread touches m and buf. */
	bool busy;
	bool job_send;    /* Authentication Send, else Receive */
	uint32_t job_len; /* TL or AL */
	int job_result;   /* Receive: what dhchap_ctrl_recv() returned */
	enum dhchap_state job_was;
	struct nvmf_req *job_req;
	struct auth_job job; /* its key: host NQN and peer address, for admission */
	uint8_t buf[AUTH_MSG_BUF];
};

/* ---- The host table ------------------------------------------------------------------------ */

static struct dhchap_host_conf *host_conf_locked(struct nvmf_tgt *tgt, const char *hostnqn)
{
	for (unsigned int i = 0; i < tgt->nhost_auth; i++)
		if (!strcmp(tgt->host_auth[i].nqn, hostnqn)) {
			dhchap_host_conf_get(tgt->host_auth[i].conf);
			return tgt->host_auth[i].conf;
		}
	return NULL;
}

struct dhchap_host_conf *nvmf_auth_host_conf_locked(struct nvmf_subsys *s, const char *hostnqn)
{
	/* As Linux nvmet: a subsystem open to any host, or discovery, asks for no proof. */
	if (s->type == NVMF_SUBSYS_DISCOVERY || s->allow_any_host)
		return NULL;
	return host_conf_locked(s->tgt, hostnqn);
}

static void free_table(struct nvmf_host_auth *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		dhchap_host_conf_put(v[i].conf);
	free(v);
}

int nvmf_tgt_set_host_keys(struct nvmf_tgt *tgt, const struct nvmf_host_dhchap *v, unsigned int n,
			   char *err, size_t errlen)
{
	struct nvmf_host_auth *nt = NULL, *old;
	unsigned int nold;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (n) {
		nt = calloc(n, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		char why[200];

		if (!v[i].hostnqn || strlen(v[i].hostnqn) >= sizeof(nt[i].nqn)) {
			snprintf(err, errlen, "host NQN missing or too long");
			free_table(nt, i);
			return -EINVAL;
		}
		rc = dhchap_host_conf_create(v[i].key, v[i].ctrl_key, v[i].hash, v[i].dhgroup,
					     &nt[i].conf, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "host %s: %s", v[i].hostnqn, why);
			free_table(nt, i);
			return rc;
		}
		snprintf(nt[i].nqn, sizeof(nt[i].nqn), "%s", v[i].hostnqn);
	}
	pthread_mutex_lock(&tgt->lock);
	old = tgt->host_auth;
	nold = tgt->nhost_auth;
	tgt->host_auth = nt;
	tgt->nhost_auth = n;
	pthread_mutex_unlock(&tgt->lock);

	free_table(old, nold);
	return 0;
}

void nvmf_auth_tgt_free(struct nvmf_tgt *tgt)
{
	auth_pool_destroy(tgt->auth_pool);
	tgt->auth_pool = NULL;
	free_table(tgt->host_auth, tgt->nhost_auth);
	tgt->host_auth = NULL;
	tgt->nhost_auth = 0;
}

/* ---- The queue's exchange ------------------------------------------------------------------ */

static void auth_timer_stop(struct nvmf_qpair_auth *a)
{
	if (a->timer_active) {
		ev_timer_stop(a->qp->reactor->loop, &a->timer);
		a->timer_active = false;
	}
}

static void close_queue(struct nvmf_qpair *qp)
{
	if (qp->ops && qp->ops->qpair_disconnect)
		qp->ops->qpair_disconnect(qp);
}

static void auth_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct nvmf_qpair_auth *a = w->data;
	struct nvmf_qpair *qp = a->qp;

	(void)loop;
	(void)revents;
	a->timer_active = false;
	if (!a->closing)
		log_peer("%s: host %s: DH-HMAC-CHAP on qid %u not done within %u ms (%s), "
			 "closing the queue",
			 qp->peer, a->m.hostnqn, qp->qid,
			 qp->tgt ? qp->tgt->opts.auth_timeout_ms : 0,
			 dhchap_state_name(a->m.state));
	close_queue(qp);
}

static void auth_timer_arm(struct nvmf_qpair_auth *a, uint32_t ms)
{
	struct reactor *r = a->qp->reactor;

	if (!ms || !r || !r->loop)
		return;
	auth_timer_stop(a);
	ev_timer_init(&a->timer, auth_timer_cb, ms / 1000.0, 0.);
	a->timer.data = a;
	ev_timer_start(r->loop, &a->timer);
	a->timer_active = true;
}

static struct nvmf_qpair_auth *auth_alloc(struct nvmf_qpair *qp, struct dhchap_host_conf *conf)
{
	struct nvmf_qpair_auth *a = calloc(1, sizeof(*a));
	struct nvmf_ctrlr *c = qp->ctrlr;

	if (!a)
		return NULL;
	a->qp = qp;
	dhchap_ctrl_init(&a->m, conf, c->hostnqn, c->subsys->nqn);
	a->job.key.hostnqn = c->hostnqn;
	dhchap_admit_addr(qp->peer, a->job.key.addr, sizeof(a->job.key.addr));
	qp->auth = a;
	return a;
}

uint16_t nvmf_auth_qpair_start(struct nvmf_qpair *qp, struct dhchap_host_conf *conf, uint32_t *dw0)
{
	struct nvmf_qpair_auth *a;

	if (!conf)
		return ST_OK;
	a = auth_alloc(qp, conf);
	dhchap_host_conf_put(conf); /* the machine took its own reference */
	if (!a)
		return ST_INTERNAL;
	a->required = true;
	qp->auth_pending = true;
	auth_timer_arm(a, qp->tgt->opts.auth_timeout_ms);
	*dw0 |= NVMF_CONNECT_AUTHREQ_ATR;
	log_info("%s: qid %u of host %s: DH-HMAC-CHAP required", qp->ctrlr->label, qp->qid,
		 qp->ctrlr->hostnqn);
	return ST_OK;
}

void nvmf_auth_qpair_fini(struct nvmf_qpair *qp)
{
	struct nvmf_qpair_auth *a = qp->auth;

	if (!a)
		return;
	auth_timer_stop(a);
	dhchap_ctrl_fini(&a->m);
	explicit_bzero(a->buf, sizeof(a->buf));
	free(a);
	qp->auth = NULL;
	qp->auth_pending = false;
}

/* After a message: the outcome of the exchange, when it has one. */
static void auth_outcome(struct nvmf_qpair *qp, struct nvmf_qpair_auth *a, enum dhchap_state was)
{
	struct dhchap_ctrl *m = &a->m;

	if (m->state == was)
		return;
	if (m->state == DHCHAP_DONE) {
		auth_timer_stop(a);
		log_info("%s: qid %u: host %s authenticated (DH-HMAC-CHAP %s, %s%s)",
			 qp->ctrlr->label, qp->qid, m->hostnqn, nvme_auth_hash_name(m->hash_id),
			 nvme_auth_dhgroup_name(m->dhgid),
			 was == DHCHAP_SUCCESS2 ? ", bidirectional" : "");
		qp->auth_pending = false;
		return;
	}
	if (m->state != DHCHAP_FAILED)
		return;
	if (m->host_failed)
		log_peer("%s: host %s: DH-HMAC-CHAP on qid %u: the host refused the "
			 "controller (%s)",
			 qp->peer, m->hostnqn, qp->qid, dhchap_failure_name(m->fail_exp));
	else
		log_peer("%s: host %s: DH-HMAC-CHAP on qid %u failed: %s", qp->peer, m->hostnqn,
			 qp->qid, dhchap_failure_name(m->fail_exp));
	if (!a->required)
		return; /* a queue that needed no authentication keeps working */
	qp->auth_pending = true;
	a->closing = true;
	auth_timer_arm(a, AUTH_GRACE_MS);
	if (!a->timer_active)
		close_queue(qp);
}

/* SECP/SPSP of both commands, and TL/AL against the data the command carries. */
static uint16_t auth_cmd_check(struct nvmf_req *req, uint32_t *len)
{
	const struct nvmf_auth_cmd *cmd = (const struct nvmf_auth_cmd *)&req->cmd;

	*len = get_le32(cmd->len);
	if (cmd->secp != NVMF_AUTH_SECP || cmd->spsp0 != NVMF_AUTH_SPSP0 ||
	    cmd->spsp1 != NVMF_AUTH_SPSP1 || !*len || *len > AUTH_MSG_BUF)
		return ST_INVALID_FIELD;
	if (*len > req->length)
		return ST_SGL_LEN;
	if (!req->qpair->auth && !auth_alloc(req->qpair, NULL))
		return ST_INTERNAL; /* a host authenticating a queue that needs none */
	if (req->qpair->auth->busy)
		return ST_CMD_SEQ; /* one AUTH message at a time */
	return ST_OK;
}

/*
 * Diffie-Hellman off the reactor. Our key pair for the Challenge and the shared secret of
 * the Reply (with the one check that the host's value lies in the group) cost from under
 * 1 ms (ffdhe2048) to some 7 + 8 ms (ffdhe8192) of CPU: they run on the target's pool of
 * authentication threads (auth_pool.h), and the command completes on its reactor. The
 * queue cannot go meanwhile: its transport waits for the command. The work of a queue not
 * yet authenticated is admitted per host NQN, per peer address and in all, or refused at
 * once with AUTH_Failure1: a flood of hosts without a secret ends in refusals, not in a
 * queue that outlasts every deadline. A queue that authenticated before re-authenticates
 * in a lane of its own, served first. Without a DH group the work is a few HMACs and runs
 * in place.
 */
static void auth_send_finish(struct nvmf_qpair_auth *a);
static void auth_recv_finish(struct nvmf_qpair_auth *a);

static void job_run(struct nvmf_qpair_auth *a)
{
	if (a->job_send)
		dhchap_ctrl_send(&a->m, a->buf, a->job_len);
	else
		a->job_result = dhchap_ctrl_recv(&a->m, a->buf, a->job_len);
}

static void job_run_pool(struct auth_job *j)
{
	job_run(container_of(j, struct nvmf_qpair_auth, job));
}

static void job_done_msg(void *arg)
{
	struct nvmf_qpair_auth *a =
		container_of((struct auth_job *)arg, struct nvmf_qpair_auth, job);

	a->busy = false;
	if (a->job_send)
		auth_send_finish(a);
	else
		auth_recv_finish(a);
}

static struct auth_pool *pool_get(struct nvmf_tgt *tgt)
{
	struct auth_pool *p;

	pthread_mutex_lock(&tgt->auth_pool_lock);
	p = tgt->auth_pool;
	if (!p) {
		unsigned int n = __atomic_load_n(&tgt->opts.auth_threads, __ATOMIC_RELAXED);
		int rc = auth_pool_create(n ? n : 1, &p);

		if (rc)
			log_err("DH-HMAC-CHAP: no authentication threads (%s): the work runs on "
				"the reactors",
				strerror(-rc));
		else
			log_info("DH-HMAC-CHAP: %u authentication threads", n ? n : 1);
		tgt->auth_pool = p;
	}
	pthread_mutex_unlock(&tgt->auth_pool_lock);
	return p;
}

void nvmf_auth_stats_get(struct nvmf_tgt *tgt, struct nvmf_auth_stats *out)
{
	struct auth_pool *p;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&tgt->auth_pool_lock);
	p = tgt->auth_pool;
	if (p)
		auth_pool_stats(p, out);
	pthread_mutex_unlock(&tgt->auth_pool_lock);
}

/*
 * Hand the queue's message to the pool; false: run it here instead (the pool could not
 * start). A refusal ends the exchange with AUTH_Failure1 and is run here: no DH work is
 * left in it.
 */
static bool job_queue(struct nvmf_qpair_auth *a)
{
	struct nvmf_qpair *qp = a->qp;
	struct nvmf_tgt *tgt = qp->tgt;
	struct auth_pool *p = pool_get(tgt);
	struct dhchap_admit_limits lim = {
		.per_host = __atomic_load_n(&tgt->opts.auth_max_pending_host, __ATOMIC_RELAXED),
		.per_addr = __atomic_load_n(&tgt->opts.auth_max_pending_addr, __ATOMIC_RELAXED),
		.total = __atomic_load_n(&tgt->opts.auth_max_pending, __ATOMIC_RELAXED),
	};
	enum dhchap_admit_verdict v;

	if (!p)
		return false;
	a->job.key.authenticated = a->m.authenticated;
	a->job.run = job_run_pool;
	a->job.done = job_done_msg;
	a->job.reactor = qp->reactor;
	a->busy = true;
	v = auth_pool_submit(p, &lim, &a->job);
	if (v == DHCHAP_ADMIT_SHARED || v == DHCHAP_ADMIT_PRIORITY)
		return true;
	a->busy = false;
	log_peer("%s: host %s: DH-HMAC-CHAP on qid %u refused: authentication work pending "
		 "at the %s limit (%u host, %u address, %u in all)",
		 qp->peer, a->m.hostnqn, qp->qid, dhchap_admit_verdict_name(v), lim.per_host,
		 lim.per_addr, lim.total);
	dhchap_ctrl_refuse(&a->m, NVME_AUTH_FAIL_FAILED);
	return false;
}

/* Run the queue's message now, or on the pool when it involves DH work. */
static void job_start(struct nvmf_qpair_auth *a, struct nvmf_req *req, bool send, uint32_t len)
{
	bool dh =
		a->m.dhgid != NVME_AUTH_DHGROUP_NULL &&
		((!send && a->m.state == DHCHAP_CHALLENGE) || (send && a->m.state == DHCHAP_REPLY));

	a->job_send = send;
	a->job_len = len;
	a->job_req = req;
	a->job_was = a->m.state;
	if (dh && a->qp->reactor && reactor_self() == a->qp->reactor && a->qp->tgt && job_queue(a))
		return;
	job_run(a);
	if (send)
		auth_send_finish(a);
	else
		auth_recv_finish(a);
}

static void auth_send_finish(struct nvmf_qpair_auth *a)
{
	struct nvmf_req *req = a->job_req;

	auth_outcome(a->qp, a, a->job_was);
	nvmf_req_done(req, ST_OK);
}

static void auth_recv_finish(struct nvmf_qpair_auth *a)
{
	struct nvmf_req *req = a->job_req;

	if (a->job_result < 0) {
		nvmf_req_done(req, ST_INVALID_FIELD); /* AL too short for the message */
		return;
	}
	nvmf_req_reply(req, a->buf, (size_t)a->job_result);
	auth_outcome(a->qp, a, a->job_was);
	nvmf_req_done(req, ST_OK);
}

static void auth_send_exec(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	struct nvmf_qpair_auth *a = qp->auth;
	uint32_t tl = get_le32(((const struct nvmf_auth_cmd *)&req->cmd)->len);
	enum dhchap_state was = a->m.state;

	if (nvmf_req_copy_from(req, 0, a->buf, tl) != tl) {
		nvmf_req_done(req, ST_SGL_LEN);
		return;
	}
	/* A new exchange uses the settings configured now, with its own deadline. */
	if (tl >= 2 && a->buf[0] == NVME_AUTH_TYPE_COMMON && a->buf[1] == NVME_AUTH_ID_NEGOTIATE &&
	    a->required && was != DHCHAP_FAILURE1 && was != DHCHAP_FAILED) {
		struct dhchap_host_conf *conf;

		pthread_mutex_lock(&qp->tgt->lock);
		conf = nvmf_auth_host_conf_locked(qp->ctrlr->subsys, qp->ctrlr->hostnqn);
		pthread_mutex_unlock(&qp->tgt->lock);
		dhchap_ctrl_set_conf(&a->m, conf);
		dhchap_host_conf_put(conf);
		if (was == DHCHAP_DONE)
			auth_timer_arm(a, qp->tgt->opts.auth_timeout_ms);
	}
	job_start(a, req, true, tl);
}

static void auth_recv_exec(struct nvmf_req *req)
{
	struct nvmf_qpair_auth *a = req->qpair->auth;
	uint32_t al = get_le32(((const struct nvmf_auth_cmd *)&req->cmd)->len);

	job_start(a, req, false, al);
}

uint16_t nvmf_auth_send_parse(struct nvmf_req *req)
{
	uint32_t len;
	uint16_t st = auth_cmd_check(req, &len);

	if (!st)
		req->execute = auth_send_exec;
	return st;
}

uint16_t nvmf_auth_recv_parse(struct nvmf_req *req)
{
	uint32_t len;
	uint16_t st = auth_cmd_check(req, &len);

	if (!st)
		req->execute = auth_recv_exec;
	return st;
}
