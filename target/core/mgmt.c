/* SPDX-License-Identifier: MIT */
/*
 * Operations for the daemon's control socket that reach inside controllers: listing them
 * with their counters, disconnecting one, ending every controller of a host that lost
 * access, and resizing a namespace (with the Namespace Attribute Changed event). All run
 * on the main thread (a resize seen by the backend on its own thread) and never wait for a
 * reactor: teardown is posted to the controller's admin reactor.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "ctrlr.h"
#include "nvmf.h"

static void fill_info(struct nvmf_ctrlr *c, struct nvmf_ctrlr_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	snprintf(ci->subnqn, sizeof(ci->subnqn), "%s", c->subsys->nqn);
	snprintf(ci->hostnqn, sizeof(ci->hostnqn), "%s", c->hostnqn);
	memcpy(ci->hostid, c->hostid, sizeof(ci->hostid));
	ci->cntlid = c->cntlid;
	ci->local = c->local;
	if (c->port) {
		snprintf(ci->trtype, sizeof(ci->trtype), "%s", c->port->ops->name);
		snprintf(ci->traddr, sizeof(ci->traddr), "%s", c->port->traddr);
		snprintf(ci->trsvcid, sizeof(ci->trsvcid), "%s", c->port->trsvcid);
	} else {
		snprintf(ci->trtype, sizeof(ci->trtype), "iscsi");
	}
	nvmf_ctrlr_get_stats(c, &ci->stats);
	pthread_mutex_lock(&c->lock);
	if (c->admin_qp)
		snprintf(ci->peer, sizeof(ci->peer), "%s", c->admin_qp->peer);
	ci->io_queues = c->num_io_qpairs;
	ci->ready = c->state == NVMF_CTRLR_READY;
	pthread_mutex_unlock(&c->lock);
	ci->kato_ms = __atomic_load_n(&c->kato_ms, __ATOMIC_RELAXED);
}

int nvmf_tgt_list_ctrlrs(struct nvmf_tgt *tgt, const char *subnqn,
			 void (*cb)(const struct nvmf_ctrlr_info *ci, void *arg), void *arg)
{
	struct nvmf_ctrlr_info ci;
	struct nvmf_subsys *s;
	struct nvmf_ctrlr *c;
	int n = 0;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(s, &tgt->subsystems, link)
	{
		if (s->type == NVMF_SUBSYS_DISCOVERY || (subnqn && strcmp(s->nqn, subnqn)))
			continue;
		pthread_mutex_lock(&s->lock);
		TAILQ_FOREACH(c, &s->ctrlrs, link)
		{
			if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == NVMF_CTRLR_DEAD)
				continue;
			fill_info(c, &ci);
			cb(&ci, arg);
			n++;
		}
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&tgt->lock);
	return n;
}

/* Live controllers of @s matching @hostnqn (NULL: any) and @cntlid (0: any), referenced. */
static unsigned int pick(struct nvmf_subsys *s, const char *hostnqn, uint16_t cntlid,
			 struct nvmf_ctrlr ***out)
{
	struct nvmf_ctrlr *c, **v = NULL;
	unsigned int n = 0, cap = 0;

	pthread_mutex_lock(&s->lock);
	TAILQ_FOREACH(c, &s->ctrlrs, link)
	cap++;
	if (cap)
		v = calloc(cap, sizeof(*v));
	if (v)
		TAILQ_FOREACH(c, &s->ctrlrs, link)
		{
			if ((hostnqn && strcmp(c->hostnqn, hostnqn)) ||
			    (cntlid && c->cntlid != cntlid))
				continue;
			if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != NVMF_CTRLR_DEAD &&
			    nvmf_ctrlr_get_unless_zero(c))
				v[n++] = c;
		}
	pthread_mutex_unlock(&s->lock);
	*out = v;
	return n;
}

static unsigned int kill_all(struct nvmf_ctrlr **v, unsigned int n, const char *why)
{
	for (unsigned int i = 0; i < n; i++) {
		log_notice("%s: %s (host %s): disconnecting: %s", v[i]->subsys->nqn, v[i]->label,
			   v[i]->hostnqn, why);
		nvmf_ctrlr_kill_async(v[i]);
		nvmf_ctrlr_put(v[i]);
	}
	free(v);
	return n;
}

int nvmf_ctrlr_disconnect(struct nvmf_subsys *s, uint16_t cntlid)
{
	struct nvmf_ctrlr **v;
	unsigned int n;

	if (!cntlid)
		return -EINVAL;
	n = pick(s, NULL, cntlid, &v);
	if (!n) {
		free(v);
		return -ENOENT;
	}
	kill_all(v, n, "asked by the administrator");
	return 0;
}

int nvmf_subsys_disconnect_host(struct nvmf_subsys *s, const char *hostnqn)
{
	struct nvmf_ctrlr **v;
	unsigned int n = pick(s, hostnqn, 0, &v);

	return (int)kill_all(v, n, "host access revoked");
}

unsigned int nvmf_subsys_revoke(struct nvmf_subsys *s)
{
	struct nvmf_ctrlr **v;
	unsigned int n = pick(s, NULL, 0, &v), k = 0;

	/* keep the ones still allowed (and in-process controllers: no fabric host) */
	for (unsigned int i = 0; i < n; i++) {
		if (v[i]->local || nvmf_subsys_host_allowed(s, v[i]->hostnqn))
			nvmf_ctrlr_put(v[i]);
		else
			v[k++] = v[i];
	}
	return kill_all(v, k, "host access revoked");
}

/* Namespace Attribute Changed to every controller of @s. */
static void notify_all(struct nvmf_subsys *s, uint32_t nsid)
{
	struct nvmf_ctrlr **v;
	unsigned int n = pick(s, NULL, 0, &v);

	for (unsigned int i = 0; i < n; i++) {
		nvmf_ctrlr_notify_ns_changed(v[i], nsid);
		nvmf_ctrlr_put(v[i]);
	}
	free(v);
}

int nvmf_subsys_resize_ns(struct nvmf_subsys *s, uint32_t nsid, uint64_t size, char *err,
			  size_t errlen)
{
	struct nvmf_ns *ns;
	uint64_t old;
	int rc;

	ns = nvmf_ns_get(s, nsid, NULL);
	if (!ns) {
		snprintf(err, errlen, "namespace %u does not exist", nsid);
		return -ENOENT;
	}
	old = ns->nblocks;
	rc = bdev_resize(ns->bdev, size, err, errlen);
	if (rc == 0)
		__atomic_store_n(&ns->nblocks, ns->bdev->size >> ns->block_shift, __ATOMIC_RELEASE);
	nvmf_ns_put(ns, NULL);
	if (rc)
		return rc;
	log_notice("%s: namespace %u resized from %llu to %llu blocks", s->nqn, nsid,
		   (unsigned long long)old, (unsigned long long)ns->nblocks);
	notify_all(s, nsid);
	return 0;
}

void nvmf_ns_backend_resized(struct nvmf_ns *ns)
{
	uint64_t old = __atomic_load_n(&ns->nblocks, __ATOMIC_ACQUIRE);
	uint64_t now = __atomic_load_n(&ns->bdev->size, __ATOMIC_ACQUIRE) >> ns->block_shift;

	if (now == old || __atomic_load_n(&ns->removed, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&ns->nblocks, now, __ATOMIC_RELEASE);
	log_notice("%s: namespace %u resized by its backend from %llu to %llu blocks",
		   ns->subsys->nqn, ns->nsid, (unsigned long long)old, (unsigned long long)now);
	notify_all(ns->subsys, ns->nsid);
}
