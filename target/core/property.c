/* SPDX-License-Identifier: MIT */
/*
 * Controller properties (Property Get/Set): CAP, VS, CC, CSTS, CRTO. Writing CC drives the
 * controller state machine: enable, reset (CC.EN 1 -> 0) and shutdown (CC.SHN), which
 * flushes every volatile cache before CSTS.SHST reports completion.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/log.h"

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
		uint32_t csts = (c->csts & ~NVME_CSTS_SHST_MASK) | NVME_CSTS_SHST_COMPLETE
									   << NVME_CSTS_SHST_SHIFT;

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

uint16_t nvmf_ctrlr_prop_set(struct nvmf_ctrlr *c, uint32_t offset, unsigned int size, uint64_t val)
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
	if ((new &NVME_CC_EN) && !(old & NVME_CC_EN) && c->state == NVMF_CTRLR_DISABLED) {
		if (cc_supported(c, new)) {
			nvmf_ctrlr_set_state(c, NVMF_CTRLR_READY);
			csts |= NVME_CSTS_RDY;
		} else {
			log_peer("%s: unsupported CC %#x", c->label, new);
			nvmf_ctrlr_set_state(c, NVMF_CTRLR_FATAL);
			csts |= NVME_CSTS_CFS;
		}
	}
	if (!(new &NVME_CC_EN) && (old & NVME_CC_EN)) {
		nvmf_ctrlr_set_state(c, NVMF_CTRLR_DISABLED);
		csts = 0;
		c->max_io_qid = (uint16_t)c->tgt->opts.max_io_queues;
		c->io_queues_created = false;
		reset = true;
	}
	if ((new &NVME_CC_SHN_MASK) && !(old & NVME_CC_SHN_MASK)) {
		if (c->state != NVMF_CTRLR_SHUTDOWN)
			nvmf_ctrlr_set_state(c, NVMF_CTRLR_SHUTDOWN);
		csts = (csts & ~NVME_CSTS_SHST_MASK) | NVME_CSTS_SHST_OCCURRING
							       << NVME_CSTS_SHST_SHIFT;
		shutdown = true;
	}
	if (!(new &NVME_CC_SHN_MASK) && (old & NVME_CC_SHN_MASK)) {
		csts &= ~NVME_CSTS_SHST_MASK;
		if (c->state == NVMF_CTRLR_SHUTDOWN)
			nvmf_ctrlr_set_state(c, NVMF_CTRLR_DISABLED);
		if (!(new &NVME_CC_EN))
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
