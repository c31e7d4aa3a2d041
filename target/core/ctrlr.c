/* SPDX-License-Identifier: MIT */
/*
 * Controller lifecycle: creation with a controller ID, reference counting, lookup for I/O
 * queue Connect, the state machine's one transition function, and teardown. Properties
 * (CC/CSTS) are in property.c, Keep Alive in keep_alive.c, asynchronous events in aen.c,
 * queue pairs in qpair.c.
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "qos.h"
#include "common/log.h"
#include "reactor/reactor.h"

void nvmf_ctrlr_set_state(struct nvmf_ctrlr *c, enum nvmf_ctrlr_state st)
{
	static const char *const names[] = {
		[NVMF_CTRLR_DISABLED] = "disabled", [NVMF_CTRLR_READY] = "ready",
		[NVMF_CTRLR_FATAL] = "fatal",       [NVMF_CTRLR_SHUTDOWN] = "shutdown",
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

	TAILQ_FOREACH(c, &s->ctrlrs, link)
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
	c->hostnqn_hash = nvmf_qos_nqn_hash(c->hostnqn);
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
	if (admin && admin->port && admin->port->ops)
		c->msdbd = admin->port->ops->msdbd;
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
	TAILQ_FOREACH(c, &s->ctrlrs, link)
	{
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

/* An orderly end (the host disconnected) is logged at info, a kill at notice. */
static void teardown_at(struct nvmf_ctrlr *c, bool abort_aers, const char *why, enum log_level lvl)
{
	bool dead;

	pthread_mutex_lock(&c->lock);
	dead = c->state == NVMF_CTRLR_DEAD;
	if (!dead) {
		nvmf_ctrlr_set_state(c, NVMF_CTRLR_DEAD);
		__atomic_store_n(&c->csts, c->csts & ~NVME_CSTS_RDY, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&c->lock);

	if (abort_aers)
		nvmf_ctrlr_aer_abort_all(c);
	else
		c->naer = 0; /* the transport is releasing them */
	if (dead)
		return;
	log_msg(lvl, "%s: %s, tearing down", c->label, why);
	nvmf_ctrlr_ka_stop(c);
	nvmf_ctrlr_disconnect_io_qpairs(c);
}

void nvmf_ctrlr_teardown(struct nvmf_ctrlr *c, bool abort_aers, const char *why)
{
	teardown_at(c, abort_aers, why, LOG_LVL_INFO);
}

void nvmf_ctrlr_kill(struct nvmf_ctrlr *c, const char *why)
{
	struct nvmf_qpair *admin;

	nvmf_ctrlr_get(c); /* the admin queue's reference may go with the disconnect */
	teardown_at(c, true, why, LOG_LVL_NOTICE);
	pthread_mutex_lock(&c->lock);
	admin = c->admin_qp;
	pthread_mutex_unlock(&c->lock);
	if (admin)
		admin->ops->qpair_disconnect(admin);
	nvmf_ctrlr_put(c);
}

static void kill_msg(void *arg)
{
	struct nvmf_ctrlr *c = arg;

	nvmf_ctrlr_kill(c, "target stopping");
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
