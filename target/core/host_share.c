/* SPDX-License-Identifier: MIT */
/*
 * What each host NQN holds across its controllers: the queues it has connected, bounded by
 * opts.max_host_connections so that one host cannot take every --max-connections slot,
 * and per reactor the data buffers its queues hold there (transports bound that to a share
 * of the reactor's pool). Entries come with a host's first queue and go with its last;
 * Connect and queue teardown take tgt->lock, the I/O path only touches its reactor's
 * counter.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "nvmf.h"
#include "reactor/reactor.h"

static struct nvmf_host_share *share_new(const char *hostnqn)
{
	unsigned int nr = reactor_count() ? reactor_count() : 1;
	struct nvmf_host_share *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (posix_memalign((void **)&h->per_r, 64, nr * sizeof(*h->per_r)) != 0) {
		free(h);
		return NULL;
	}
	memset(h->per_r, 0, nr * sizeof(*h->per_r));
	h->nr = nr;
	snprintf(h->hostnqn, sizeof(h->hostnqn), "%s", hostnqn);
	return h;
}

int nvmf_host_share_get(struct nvmf_tgt *tgt, const char *hostnqn, const char *peer,
			struct nvmf_host_share **out)
{
	uint32_t limit = __atomic_load_n(&tgt->opts.max_host_connections, __ATOMIC_RELAXED);
	struct nvmf_host_share *h;
	int rc = 0;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(h, &tgt->host_shares, link)
	if (!strcmp(h->hostnqn, hostnqn))
		break;
	if (h && limit && h->conns >= limit) {
		rc = -EBUSY;
	} else if (!h) {
		h = share_new(hostnqn);
		if (h)
			TAILQ_INSERT_TAIL(&tgt->host_shares, h, link);
		else
			rc = -ENOMEM;
	}
	if (!rc)
		h->conns++;
	pthread_mutex_unlock(&tgt->lock);
	if (rc == -EBUSY) {
		__atomic_add_fetch(&tgt->host_conn_refused, 1, __ATOMIC_RELAXED);
		log_peer("%s: host %.223s refused: %u queues connected already "
			 "(max_host_connections)",
			 peer, hostnqn[0] ? hostnqn : "(no name)", limit);
	}
	*out = rc ? NULL : h;
	return rc;
}

void nvmf_host_share_put(struct nvmf_tgt *tgt, struct nvmf_host_share *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&tgt->lock);
	if (--h->conns == 0)
		TAILQ_REMOVE(&tgt->host_shares, h, link);
	else
		h = NULL;
	pthread_mutex_unlock(&tgt->lock);
	if (h) {
		free(h->per_r);
		free(h);
	}
}
