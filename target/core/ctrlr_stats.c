/* SPDX-License-Identifier: MIT */
/*
 * I/O statistics: per-queue counters (single writer, relaxed atomics), folded into the
 * controller and subsystem totals when a queue goes; totals read from any thread.
 */
#include "config.h"

#include "ctrlr.h"

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
	TAILQ_FOREACH(c, &s->ctrlrs, link)
	{
		pthread_mutex_lock(&c->lock);
		ctrlr_stats_locked(c, out);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&s->lock);
}
