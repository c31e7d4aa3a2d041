/* SPDX-License-Identifier: MIT */
/*
 * Get Features / Set Features. Values live in the controller; none is saveable. The
 * reservation features (82h Reservation Notification Mask, 83h Reservation Persistence)
 * are namespace-specific and handled by reservation.c.
 */
#include "config.h"

#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"

#define FEAT_CAP_SAVEABLE (1u << 0)
#define FEAT_CAP_NS_SPECIFIC (1u << 1)
#define FEAT_CAP_CHANGEABLE (1u << 2)

#define AEC_NVM_MASK  (0xffu | NVME_AEN_CFG_NS_ATTR | NVME_AEN_CFG_ANA_CHANGE)
#define AEC_DISC_MASK NVME_AEN_CFG_DISC_CHANGE

struct feat_desc {
	bool nvm;	/* supported on NVM controllers */
	bool disc;	/* supported on discovery controllers */
	uint32_t caps;	/* SEL 3 reply */
};

static const struct feat_desc feats[256] = {
	[NVME_FEAT_ARBITRATION] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_POWER_MGMT] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_TEMP_THRESH] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_ERR_RECOVERY] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_VOLATILE_WC] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_NUM_QUEUES] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_IRQ_COALESCE] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_IRQ_CONFIG] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_WRITE_ATOMIC] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_ASYNC_EVENT] = { true, true, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_KATO] = { true, true, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_HOST_ID] = { true, false, 0 },
	[NVME_FEAT_LBA_STATUS_ATTR] = { true, false, FEAT_CAP_CHANGEABLE },
	[NVME_FEAT_RESV_MASK] = { true, false, FEAT_CAP_CHANGEABLE | FEAT_CAP_NS_SPECIFIC },
	[NVME_FEAT_RESV_PERSIST] = { true, false, FEAT_CAP_CHANGEABLE | FEAT_CAP_NS_SPECIFIC },
};

static bool resv_feat(uint8_t fid)
{
	return fid == NVME_FEAT_RESV_MASK || fid == NVME_FEAT_RESV_PERSIST;
}

static uint32_t num_queues_dw0(uint16_t nsqa, uint16_t ncqa)
{
	return (uint32_t)(nsqa - 1) | (uint32_t)(ncqa - 1) << 16;
}

/* Current (or, with @dflt, default) value of @fid for Get Features DW0. */
static uint16_t feat_value(struct nvmf_req *req, uint8_t fid, bool dflt, uint32_t *dw0)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	const struct nvmf_features *f = &c->feat;
	uint32_t cdw11 = get_le32(&req->cmd.cdw11);
	uint16_t max_q = (uint16_t)c->tgt->opts.max_io_queues;

	switch (fid) {
	case NVME_FEAT_ARBITRATION:
		*dw0 = dflt ? 0 : f->arbitration;
		break;
	case NVME_FEAT_POWER_MGMT:
		*dw0 = dflt ? 0 : f->power_mgmt;
		break;
	case NVME_FEAT_TEMP_THRESH: {
		unsigned int tmpsel = (cdw11 >> 16) & 0xf, thsel = (cdw11 >> 20) & 0x3;

		if (tmpsel != 0 || thsel > 1)
			return ST_INVALID_FIELD;
		if (thsel == 0)
			*dw0 = dflt ? NVMF_TEMP_WARN : f->temp_over;
		else
			*dw0 = (dflt ? 0 : f->temp_under) | 1u << 20;
		break;
	}
	case NVME_FEAT_ERR_RECOVERY:
		*dw0 = dflt ? 0 : f->err_recovery;
		break;
	case NVME_FEAT_VOLATILE_WC:
		*dw0 = dflt ? 1 : __atomic_load_n(&c->wce, __ATOMIC_RELAXED);
		break;
	case NVME_FEAT_NUM_QUEUES:
		if (dflt) {
			*dw0 = num_queues_dw0(max_q, max_q);
		} else {
			pthread_mutex_lock(&c->lock);
			*dw0 = num_queues_dw0(c->max_io_qid, c->max_io_qid);
			pthread_mutex_unlock(&c->lock);
		}
		break;
	case NVME_FEAT_IRQ_COALESCE:
		*dw0 = dflt ? 0 : f->irq_coalesce;
		break;
	case NVME_FEAT_IRQ_CONFIG:
		/* per interrupt vector; no coalescing on any */
		*dw0 = cdw11 & 0xffff;
		break;
	case NVME_FEAT_WRITE_ATOMIC:
		*dw0 = dflt ? 0 : f->write_atomic;
		break;
	case NVME_FEAT_ASYNC_EVENT:
		*dw0 = dflt ? 0 : f->aec;
		break;
	case NVME_FEAT_KATO:
		*dw0 = dflt ? 0 : c->kato_ms;
		break;
	case NVME_FEAT_HOST_ID:
		*dw0 = 0;
		break;
	case NVME_FEAT_LBA_STATUS_ATTR:
		/* Intervals in 100 ms units; nothing is ever reported (lba_status.h), they are
		 * kept for the host only. */
		*dw0 = dflt ? 0 : f->lba_status_attr;
		break;
	case NVME_FEAT_RESV_MASK:
	case NVME_FEAT_RESV_PERSIST:
		if (!req->ns)
			return ST_INVALID_NS;
		if (dflt)
			*dw0 = 0;
		else
			return nvmf_resv_feat_get(req, fid, dw0);
		break;
	default:
		return ST_INVALID_FIELD;
	}
	return ST_OK;
}

static void get_features_exec(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint8_t fid = cdw10 & 0xff;
	unsigned int sel = (cdw10 >> NVME_FEAT_SEL_SHIFT) & 0x7;
	uint32_t dw0 = 0;
	uint16_t status = ST_OK;

	if (sel == NVME_FEAT_SEL_SUPPORTED)
		dw0 = feats[fid].caps;
	else
		status = feat_value(req, fid, sel == NVME_FEAT_SEL_DEFAULT ||
						      sel == NVME_FEAT_SEL_SAVED,
				    &dw0);
	if (!status && fid == NVME_FEAT_HOST_ID) {
		if (sel == NVME_FEAT_SEL_SUPPORTED)
			nvmf_req_zero(req, 0);
		else
			nvmf_req_reply(req, c->hostid, sizeof(c->hostid));
	}
	if (!status)
		put_le32(&req->rsp.dw0, dw0);
	nvmf_req_done(req, status);
}

static uint16_t set_num_queues(struct nvmf_ctrlr *c, uint32_t cdw11, uint32_t *dw0)
{
	uint32_t max = c->tgt->opts.max_io_queues;
	uint32_t nsqr = (cdw11 & 0xffff) + 1, ncqr = (cdw11 >> 16) + 1;
	uint16_t nsqa, ncqa;
	uint16_t status = ST_OK;

	if (nsqr == 0x10000 || ncqr == 0x10000)
		return ST_INVALID_FIELD;
	nsqa = (uint16_t)(nsqr < max ? nsqr : max);
	ncqa = (uint16_t)(ncqr < max ? ncqr : max);
	pthread_mutex_lock(&c->lock);
	if (c->io_queues_created) {
		status = ST_CMD_SEQ;
	} else {
		c->max_io_qid = nsqa < ncqa ? nsqa : ncqa;
		*dw0 = num_queues_dw0(nsqa, ncqa);
	}
	pthread_mutex_unlock(&c->lock);
	if (!status)
		log_info("%s: %u I/O queues granted (%u requested)", c->label, c->max_io_qid,
			 nsqr);
	return status;
}

static void set_features_exec(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	struct nvmf_features *f = &c->feat;
	uint8_t fid = get_le32(&req->cmd.cdw10) & 0xff;
	uint32_t v = get_le32(&req->cmd.cdw11);
	uint32_t dw0 = 0;
	uint16_t status = ST_OK;

	switch (fid) {
	case NVME_FEAT_ARBITRATION:
		f->arbitration = v;
		break;
	case NVME_FEAT_POWER_MGMT:
		if (v & 0x1f) /* only power state 0 exists */
			status = ST_INVALID_FIELD;
		else
			f->power_mgmt = v & 0xff;
		break;
	case NVME_FEAT_TEMP_THRESH: {
		unsigned int tmpsel = (v >> 16) & 0xf, thsel = (v >> 20) & 0x3;

		if ((tmpsel != 0 && tmpsel != 0xf) || thsel > 1)
			status = ST_INVALID_FIELD;
		else if (thsel == 0)
			f->temp_over = v & 0xffff;
		else
			f->temp_under = v & 0xffff;
		break;
	}
	case NVME_FEAT_ERR_RECOVERY:
		if (v & (1u << 16)) /* DULBE: deallocated blocks are not errors here */
			status = ST_INVALID_FIELD;
		else
			f->err_recovery = v & 0xffff;
		break;
	case NVME_FEAT_VOLATILE_WC:
		if (!nvmf_subsys_has_volatile_cache(c->subsys))
			status = ST_INVALID_FIELD;
		else
			__atomic_store_n(&c->wce, (v & 1) != 0, __ATOMIC_RELAXED);
		break;
	case NVME_FEAT_NUM_QUEUES:
		status = set_num_queues(c, v, &dw0);
		break;
	case NVME_FEAT_IRQ_COALESCE:
		f->irq_coalesce = v & 0xffff;
		break;
	case NVME_FEAT_IRQ_CONFIG:
		f->irq_config = v & 0x1ffff;
		break;
	case NVME_FEAT_WRITE_ATOMIC:
		f->write_atomic = v & 1;
		break;
	case NVME_FEAT_ASYNC_EVENT:
		if (v & ~(c->discovery ? AEC_DISC_MASK : AEC_NVM_MASK)) {
			status = ST_INVALID_FIELD;
			break;
		}
		f->aec = v;
		nvmf_ctrlr_aen_raise(c, 0);
		break;
	case NVME_FEAT_KATO:
		nvmf_ctrlr_ka_set(c, v);
		break;
	case NVME_FEAT_LBA_STATUS_ATTR:
		f->lba_status_attr = v;
		break;
	case NVME_FEAT_HOST_ID:
		/* the host identifier comes from Connect on fabrics */
		status = ST_CMD_SEQ;
		break;
	case NVME_FEAT_RESV_MASK:
	case NVME_FEAT_RESV_PERSIST:
		status = nvmf_resv_feat_set(req, fid);
		if (!status)
			return; /* completed, or completes once the store has it */
		break;
	default:
		status = ST_INVALID_FIELD;
		break;
	}
	if (!status)
		put_le32(&req->rsp.dw0, dw0);
	nvmf_req_done(req, status);
}

uint16_t nvmf_features_parse(struct nvmf_req *req, bool set)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint8_t fid = cdw10 & 0xff;
	const struct feat_desc *d = &feats[fid];

	if (c->discovery ? !d->disc : !d->nvm)
		return ST_INVALID_FIELD;
	if (resv_feat(fid)) {
		uint32_t nsid = get_le32(&req->cmd.nsid);

		/* held until completion; NULL for FFFFFFFFh (the mask of every namespace) */
		if (nsid != NVMF_NSID_ALL) {
			req->ns = nvmf_ns_get(c->subsys, nsid, req->qpair->reactor);
			if (!req->ns)
				return ST_INVALID_NS;
		}
	}
	if (set) {
		if (cdw10 & NVME_FEAT_SAVE)
			return NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC,
					   NVME_SC_FEATURE_ID_NOT_SAVEABLE);
		req->execute = set_features_exec;
		return ST_OK;
	}
	if (((cdw10 >> NVME_FEAT_SEL_SHIFT) & 0x7) > NVME_FEAT_SEL_SUPPORTED)
		return ST_INVALID_FIELD;
	if (fid == NVME_FEAT_HOST_ID) {
		if (!(get_le32(&req->cmd.cdw11) & 1)) /* EXHID: only the 128-bit form */
			return ST_INVALID_FIELD;
		if (req->length < 16)
			return ST_SGL_LEN;
	}
	req->execute = get_features_exec;
	return ST_OK;
}
