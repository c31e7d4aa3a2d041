/* SPDX-License-Identifier: MIT */
/*
 * Local controllers for in-process front ends (iSCSI): an enabled controller with one I/O
 * queue and no fabric admin queue (see nvmf_local_connect() in nvmf.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ctrlr.h"
#include "common/log.h"

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
	nvmf_ctrlr_set_state(c, NVMF_CTRLR_READY);
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
	log_info("%s: 1 I/O queue connected (local front end%s%s, sqsize %u)", c->label,
		 qp->peer[0] ? " for " : "", qp->peer, qp->sqsize);
	return 0;
}
