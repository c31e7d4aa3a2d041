/* SPDX-License-Identifier: MIT */
/*
 * Get Log Page: error information, SMART / health, firmware slots, changed namespace list,
 * commands supported and effects, LBA status information, reservation notifications, and
 * (discovery controllers) the discovery log. Each page is built whole, then the host's
 * window [LPO, LPO + NUMD * 4) is copied out.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "dispatch.h"

#define LOG_CDW10_LID(v) ((v) & 0xff)

static uint16_t st_invalid_log_page(void)
{
	return NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE);
}

static uint64_t log_offset(const struct nvmf_req *req)
{
	return (uint64_t)get_le32(&req->cmd.cdw13) << 32 | get_le32(&req->cmd.cdw12);
}

static uint32_t log_length(const struct nvmf_req *req)
{
	uint32_t numdl = get_le32(&req->cmd.cdw10) >> 16;
	uint32_t numdu = get_le32(&req->cmd.cdw11) & 0xffff;

	return ((numdu << 16 | numdl) + 1) * 4; /* NUMD is 0's based; at most 16 GiB */
}

/* ---- Page builders (each returns a malloc'd buffer and its size) ---------------------------- */

static void *log_error(struct nvmf_ctrlr *c, size_t *len)
{
	struct nvme_error_log_entry *e = calloc(NVMF_ERRLOG_ENTRIES, sizeof(*e));

	if (!e)
		return NULL;
	*len = NVMF_ERRLOG_ENTRIES * sizeof(*e);
	pthread_mutex_lock(&c->err_lock);
	/* Most recent first; unused entries stay zero (error count 0). */
	for (unsigned int i = 0; i < NVMF_ERRLOG_ENTRIES; i++) {
		unsigned int slot = (c->err_head + 2 * NVMF_ERRLOG_ENTRIES - 1 - i) %
				    NVMF_ERRLOG_ENTRIES;
		e[i] = c->errlog[slot];
	}
	pthread_mutex_unlock(&c->err_lock);
	return e;
}

static uint64_t data_units(uint64_t bytes)
{
	/* thousands of 512-byte units, rounded up */
	return bytes / 512000 + (bytes % 512000 != 0);
}

static void *log_smart(struct nvmf_ctrlr *c, size_t *len)
{
	struct nvme_smart_log *l = calloc(1, sizeof(*l));
	struct nvmf_qpair_stats st;
	uint64_t hours;
	uint16_t temp = NVMF_TEMP_KELVIN;

	if (!l)
		return NULL;
	*len = sizeof(*l);
	nvmf_ctrlr_get_stats(c, &st);
	if (temp > c->feat.temp_over || temp < c->feat.temp_under)
		l->critical_warning |= 1u << 1;
	put_le16(l->temperature, temp);
	l->avail_spare = 100;
	l->spare_thresh = 10;
	l->percent_used = 0;
	put_le64(l->data_units_read, data_units(st.read_bytes));
	put_le64(l->data_units_written, data_units(st.write_bytes));
	put_le64(l->host_reads, st.read_cmds);
	put_le64(l->host_writes, st.write_cmds);
	put_le64(l->power_cycles, 1);
	hours = (nvmf_now_ns() - c->tgt->start_ns) / 3600000000000ull;
	put_le64(l->power_on_hours, hours);
	put_le64(l->unsafe_shutdowns, 0);
	put_le64(l->media_errors, 0);
	pthread_mutex_lock(&c->err_lock);
	put_le64(l->num_err_log_entries, c->err_count);
	pthread_mutex_unlock(&c->err_lock);
	put_le16(&l->temp_sensor[0], temp);
	return l;
}

static void *log_fw_slot(size_t *len)
{
	struct nvme_fw_slot_log *l = calloc(1, sizeof(*l));
	size_t n = strlen(PACKAGE_VERSION);

	if (!l)
		return NULL;
	*len = sizeof(*l);
	l->afi = 1; /* slot 1 active */
	memset(l->frs[0], ' ', sizeof(l->frs[0]));
	memcpy(l->frs[0], PACKAGE_VERSION, n < sizeof(l->frs[0]) ? n : sizeof(l->frs[0]));
	return l;
}

static void *log_changed_ns(struct nvmf_ctrlr *c, size_t *len)
{
	uint8_t *b = calloc(1, NVME_CHANGED_NS_LIST_MAX * 4);

	if (!b)
		return NULL;
	*len = NVME_CHANGED_NS_LIST_MAX * 4;
	if (c->nr_changed_ns == UINT32_MAX)
		put_le32(b, NVME_CHANGED_NS_OVERFLOW);
	else
		for (uint32_t i = 0; i < c->nr_changed_ns; i++)
			put_le32(b + 4 * i, c->changed_ns[i]);
	return b;
}

/* LBA Status Information: the namespaces with Potentially Unrecoverable LBAs to report,
 * none here (lba_status.h); the generation counter never moves. */
static void *log_lba_status(size_t *len)
{
	struct nvme_lba_status_log *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	*len = sizeof(*l);
	put_le32(&l->lslplen, sizeof(*l));
	put_le32(&l->nlslne, 0);
	put_le32(&l->estulb, 0);
	put_le16(&l->lsgc, 0);
	return l;
}

/* Generated from the command tables, as this controller dispatches them. */
static void *log_cmd_effects(struct nvmf_ctrlr *c, size_t *len)
{
	struct nvme_cmd_effects_log *l = malloc(sizeof(*l));

	if (!l)
		return NULL;
	*len = sizeof(*l);
	nvmf_cmd_effects_fill(l, nvmf_ctrlr_admin_on(c));
	return l;
}

/* ---- Get Log Page --------------------------------------------------------------------------- */

static void log_page_exec(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint8_t lid = LOG_CDW10_LID(cdw10);
	bool rae = cdw10 & NVME_LOG_RAE;
	uint64_t lpo = log_offset(req);
	uint32_t len = log_length(req);
	size_t size = 0;
	void *page = NULL;
	uint16_t status = ST_OK;

	switch (lid) {
	case NVME_LOG_ERROR:
		page = log_error(c, &size);
		break;
	case NVME_LOG_SMART:
		page = log_smart(c, &size);
		break;
	case NVME_LOG_FW_SLOT:
		page = log_fw_slot(&size);
		break;
	case NVME_LOG_CHANGED_NS:
		page = log_changed_ns(c, &size);
		break;
	case NVME_LOG_CMD_EFFECTS:
		page = log_cmd_effects(c, &size);
		break;
	case NVME_LOG_LBA_STATUS:
		page = log_lba_status(&size);
		break;
	case NVME_LOG_ANA:
		page = nvmf_ana_log_build(c, cdw10 & NVME_LOG_ANA_LSP_RGO, &size);
		break;
	case NVME_LOG_DISCOVERY:
		page = nvmf_disc_log_build(c->tgt, c->hostnqn, req->qpair, &size);
		break;
	case NVME_LOG_RESERVATION:
		page = nvmf_resv_log_build(c, &size);
		break;
	}
	if (!page) {
		nvmf_req_done(req, ST_INTERNAL);
		return;
	}
	if (lpo > size) {
		status = ST_INVALID_FIELD;
	} else {
		size_t n = size - lpo < len ? size - lpo : len;
		size_t done = nvmf_req_copy_to(req, 0, (uint8_t *)page + lpo, n);

		nvmf_req_zero(req, done);
		/* Reading a page clears its event unless the host asked to retain it. */
		if (lid == NVME_LOG_CHANGED_NS && !rae) {
			c->nr_changed_ns = 0;
			nvmf_ctrlr_aen_clear(c, NVMF_AEN_NS_CHANGED);
		} else if (lid == NVME_LOG_ANA && !rae) {
			nvmf_ctrlr_aen_clear(c, NVMF_AEN_ANA_CHANGED);
		} else if (lid == NVME_LOG_DISCOVERY && !rae) {
			nvmf_ctrlr_aen_clear(c, NVMF_AEN_DISC_CHANGED);
		} else if (lid == NVME_LOG_RESERVATION && !rae) {
			/* one page per read: the next one gets its own event */
			nvmf_ctrlr_aen_clear(c, NVMF_AEN_RESV_LOG);
			if (nvmf_resv_log_pending(c))
				nvmf_ctrlr_aen_raise(c, NVMF_AEN_RESV_LOG);
		}
	}
	free(page);
	nvmf_req_done(req, status);
}

uint16_t nvmf_log_page_parse(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint8_t lid = LOG_CDW10_LID(cdw10);
	uint32_t nsid = get_le32(&req->cmd.nsid);

	if (c->discovery) {
		if (lid != NVME_LOG_DISCOVERY)
			return st_invalid_log_page();
	} else {
		switch (lid) {
		case NVME_LOG_SMART:
			/* controller-wide only (LPA bit 0 clear) */
			if (nsid != 0 && nsid != NVMF_NSID_ALL)
				return ST_INVALID_FIELD;
			break;
		case NVME_LOG_ERROR:
		case NVME_LOG_FW_SLOT:
		case NVME_LOG_CHANGED_NS:
		case NVME_LOG_CMD_EFFECTS:
		case NVME_LOG_LBA_STATUS:
		case NVME_LOG_ANA:
		case NVME_LOG_RESERVATION:
			break;
		default:
			return st_invalid_log_page();
		}
	}
	if (log_offset(req) & 3)
		return ST_INVALID_FIELD;
	if (req->length < log_length(req))
		return ST_SGL_LEN;
	req->execute = log_page_exec;
	return ST_OK;
}
