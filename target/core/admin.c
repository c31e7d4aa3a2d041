/* SPDX-License-Identifier: MIT */
/*
 * Admin commands: the admin command table (which commands NVM, discovery and local
 * controllers support), Identify, Asynchronous Event Request, Keep Alive and Abort. Get
 * Log Page is in log_page.c, Get/Set Features in features.c, dispatch in dispatch.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "abort.h"
#include "ana.h"
#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "dispatch.h"
#include "lba_status.h"
#include "reservation.h"

#define NVMF_IEEE_OUI_NONE 0

/* Space-padded ASCII field (SN, MN, FR). */
static void pad_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len);

	memcpy(dst, src, n);
	memset(dst + n, ' ', len - n);
}

static unsigned int ilog2_u32(uint32_t v)
{
	unsigned int r = 0;

	while (v >>= 1)
		r++;
	return r;
}

/* log2(@bytes / 4 KiB): a size in units of CAP.MPSMIN (4 KiB) as a power of two. */
static uint8_t mps_units_log2(uint32_t bytes)
{
	return (uint8_t)(ilog2_u32(bytes) - 12);
}

/*
 * What the passthrough namespaces' drives allow: the smallest MDTS in bytes (@max_xfer, 0
 * when none limits it) and whether every one runs Write Uncorrectable.
 */
static void subsys_drive_limits(struct nvmf_subsys *s, uint32_t *max_xfer, bool *wu)
{
	bool any = false;

	*max_xfer = 0;
	*wu = true;
	for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		struct nvmf_ns *ns = nvmf_ns_get(s, nsid, NULL);
		const struct bdev_nvme_id *d;

		if (!ns)
			continue;
		d = ns->bdev->nvme;
		if (d) {
			any = true;
			if (d->max_xfer && (!*max_xfer || d->max_xfer < *max_xfer))
				*max_xfer = d->max_xfer;
			if (!(d->oncs & NVME_CTRL_ONCS_WRITE_UNCORRECTABLE))
				*wu = false;
		}
		nvmf_ns_put(ns, NULL);
	}
	if (!any)
		*wu = false;
}

bool nvmf_subsys_has_volatile_cache(struct nvmf_subsys *s)
{
	for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		struct nvmf_ns *ns = nvmf_ns_get(s, nsid, NULL);
		bool vc;

		if (!ns)
			continue;
		vc = ns->bdev->volatile_cache;
		nvmf_ns_put(ns, NULL);
		if (vc)
			return true;
	}
	return false;
}

/* ---- Identify ------------------------------------------------------------------------------- */

static void id_ctrl_common(struct nvmf_ctrlr *c, struct nvme_id_ctrl *id)
{
	const struct nvmf_tgt_opts *o = &c->tgt->opts;
	uint32_t icsz = nvmf_port_icsz(c->tgt, c->port);

	pad_copy(id->sn, sizeof(id->sn), c->subsys->serial);
	pad_copy(id->mn, sizeof(id->mn), c->subsys->model);
	pad_copy(id->fr, sizeof(id->fr), PACKAGE_VERSION);
	{
		uint32_t max = o->max_io_size, drive;
		bool wu;

		/* A passthrough drive's MDTS, when smaller, is the controller's. */
		subsys_drive_limits(c->subsys, &drive, &wu);
		if (drive && drive < max)
			max = drive;
		id->mdts = mps_units_log2(max);
	}
	put_le16(&id->cntlid, c->cntlid);
	put_le32(&id->ver, NVME_VS(1, 3, 0));
	put_le16(&id->maxcmd,
		 (uint16_t)(o->max_queue_depth > 0xffff ? 0xffff : o->max_queue_depth));
	put_le16(&id->kas, 1); /* 100 ms */
	id->sqes = 0x66;
	id->cqes = 0x44;
	put_le32(&id->sgls,
		 NVME_CTRL_SGLS_SUPPORTED | (icsz ? NVME_CTRL_SGLS_OFFSET : 0) | c->sgls_extra);
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", c->subsys->nqn);
	put_le32(&id->ioccsz, (icsz + (uint32_t)sizeof(struct nvme_cmd)) / 16);
	put_le32(&id->iorcsz, sizeof(struct nvme_cpl) / 16);
	put_le16(&id->icdoff, 0);
	id->msdbd = c->msdbd ? c->msdbd : 1;
	/* One power state: 25 W maximum, small entry/exit latencies. */
	put_le16(&id->psd[0].bytes[0], 0x09c4);
	put_le32(&id->psd[0].bytes[4], 0x10);
	put_le32(&id->psd[0].bytes[8], 0x4);
}

static void identify_ctrl(struct nvmf_req *req, struct nvme_id_ctrl *id)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);

	id_ctrl_common(c, id);
	if (c->discovery) {
		id->cntrltype = NVME_CTRL_CNTRLTYPE_DISCOVERY;
		id->lpa = NVME_CTRL_LPA_EXT_DATA;
		put_le32(&id->oaes, NVME_AEN_CFG_DISC_CHANGE);
		id->aerl = NVMF_MAX_AER - 1;
		return;
	}
	put_le16(&id->vid, 0);
	put_le16(&id->ssvid, 0);
	id->rab = 6;
	id->ieee[0] = id->ieee[1] = id->ieee[2] = NVMF_IEEE_OUI_NONE;
	id->cmic = NVME_CTRL_CMIC_MULTI_CTRL;
	put_le32(&id->oaes, NVME_CTRL_OAES_NS_ATTR);
	put_le32(&id->ctratt, NVME_CTRL_CTRATT_HOSTID_128);
	id->cntrltype = NVME_CTRL_CNTRLTYPE_IO;
	put_le16(&id->oacs, NVME_CTRL_OACS_GET_LBA_STATUS);
	id->acl = 3;
	id->aerl = NVMF_MAX_AER - 1;
	id->frmw = NVME_CTRL_FRMW_SLOT1_RO | 1u << 1; /* one slot, read-only */
	id->lpa = NVME_CTRL_LPA_CMD_EFFECTS | NVME_CTRL_LPA_EXT_DATA;
	id->elpe = NVMF_ERRLOG_ENTRIES - 1;
	id->npss = 0;
	put_le16(&id->wctemp, NVMF_TEMP_WARN);
	put_le16(&id->cctemp, NVMF_TEMP_CRIT);
	put_le32(&id->nn, NVMF_MAX_NAMESPACES);
	{
		uint32_t drive;
		bool wu;

		/* Write Uncorrectable only where every namespace's drive runs it. */
		subsys_drive_limits(c->subsys, &drive, &wu);
		put_le16(&id->oncs, NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM |
					    NVME_CTRL_ONCS_WRITE_ZEROES | NVME_CTRL_ONCS_VERIFY |
					    NVME_CTRL_ONCS_RESERVATIONS |
					    (wu ? NVME_CTRL_ONCS_WRITE_UNCORRECTABLE : 0));
	}
	put_le16(&id->fuses, NVME_CTRL_FUSES_COMPARE_WRITE);
	if (nvmf_subsys_has_volatile_cache(c->subsys)) {
		id->vwc = NVME_CTRL_VWC_PRESENT | NVME_CTRL_VWC_FLUSH_ALL_NSID;
		__atomic_store_n(&c->vwc_present, true, __ATOMIC_RELAXED);
	} else {
		id->vwc = NVME_CTRL_VWC_FLUSH_ALL_NSID;
	}
	put_le16(&id->awun, 0);
	put_le16(&id->awupf, 0);
	put_le16(&id->acwu, 0);
	nvmf_ana_id_ctrl(id);
}

/*
 * A passthrough namespace: the drive's format (the one in use, as format 0), its
 * atomicity and alignment hints (NPWG/NPWA/NPDG/NPDA/NOWS, NAWUN/NAWUPF/NACWU, NOIOB) and
 * what it says about deallocated blocks. Sizes, NGUID/EUI-64 (bdev->ident, unless the
 * configuration gives them), ANA and reservations stay the target's.
 */
static void identify_ns_drive(const struct bdev_nvme_id *d, struct nvme_id_ns *id)
{
	id->nsfeat = (uint8_t)(d->nsfeat & (NVME_NS_NSFEAT_THIN | NVME_NS_NSFEAT_NSABP |
					    NVME_NS_NSFEAT_DEALLOC_ERR | NVME_NS_NSFEAT_OPTPERF));
	id->dlfeat = d->dlfeat;
	put_le16(&id->nawun, d->nawun);
	put_le16(&id->nawupf, d->nawupf);
	put_le16(&id->nacwu, d->nacwu);
	put_le16(&id->noiob, d->noiob);
	put_le16(&id->npwg, d->npwg);
	put_le16(&id->npwa, d->npwa);
	put_le16(&id->npdg, d->npdg);
	put_le16(&id->npda, d->npda);
	put_le16(&id->nows, d->nows);
	id->lbaf[0].rp = d->rp;
}

static void identify_ns(struct nvmf_req *req, struct nvme_id_ns *id)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint32_t nsid = get_le32(&req->cmd.nsid);
	struct nvmf_ns *ns = nvmf_ns_get(c->subsys, nsid, req->qpair->reactor);

	if (!ns)
		return; /* inactive: zero-filled */
	put_le64(&id->nsze, ns->nblocks);
	put_le64(&id->ncap, ns->nblocks);
	put_le64(&id->nuse, ns->nblocks);
	id->nsfeat = NVME_NS_NSFEAT_THIN;
	/* Compare and Write atomic across targets in one block (NACWU 0): rbd, 512-byte
	 * blocks (fused.c refuses longer pairs there) */
	if (ns->bdev->caw_shared && (1u << ns->block_shift) <= ns->bdev->caw_unit)
		id->nsfeat |= NVME_NS_NSFEAT_NSABP;
	id->nlbaf = 0;
	id->flbas = 0;
	id->nmic = NVME_NS_NMIC_SHARED;
	nvmf_ana_id_ns(ns, id);
	id->dlfeat = NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC;
	id->rescap = nvmf_resv_rescap(ns);
	put_le64(&id->nvmcap[0], ns->nblocks << ns->block_shift);
	memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
	memcpy(id->eui64, ns->eui64, sizeof(id->eui64));
	id->lbaf[0].lbads = (uint8_t)ns->block_shift;
	put_le16(&id->lbaf[0].ms, 0);
	if (ns->bdev->nvme)
		identify_ns_drive(ns->bdev->nvme, id);
	nvmf_ns_put(ns, req->qpair->reactor);
}

/*
 * CNS 05h, CSI 00h. No storage tags (LBSTM 0) and no protection information (PIC 0);
 * each LBA format's extended format says the same: Storage Tag Size 0 and Protection
 * Information Format 0 (16b Guard, unused without PI), so the ELBAF entries of the
 * namespace's formats (NLBAF + 1 of them) are zero. An inactive NSID reads zeroes, as
 * with CNS 00h.
 */
static void identify_ns_nvm(struct nvmf_req *req, struct nvme_id_ns_nvm *id)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	struct nvmf_ns *ns = nvmf_ns_get(c->subsys, get_le32(&req->cmd.nsid), req->qpair->reactor);
	const unsigned int nlbaf = 0; /* as Identify Namespace reports: one LBA format */

	if (!ns)
		return;
	put_le64(&id->lbstm, 0);
	id->pic = 0;
	for (unsigned int i = 0; i <= nlbaf; i++)
		put_le32(&id->elbaf[i], 0);
	nvmf_ns_put(ns, req->qpair->reactor);
}

/*
 * CNS 06h, CSI 00h: the recommended limits of the NVM commands.
 * VSL: Verify reads the data of persistent namespaces back through the reactor's buffers
 *   like a Read, so the same size as MDTS is recommended (a larger one is still served,
 *   in chunks).
 * WZSL 0: Write Zeroes is fallocate() or a chunked zero fill, any size.
 * WUSL 0: Write Uncorrectable is not supported (ONCS bit 1 clear).
 * DMRL/DMRSL/DMSL 0: Deallocate takes the 256 ranges a command can carry, each of any
 *   length, one range after the other.
 */
static void identify_ctrl_nvm(struct nvmf_req *req, struct nvme_id_ctrl_nvm *id)
{
	const struct nvmf_tgt_opts *o = &nvmf_req_ctrlr(req)->tgt->opts;

	id->vsl = mps_units_log2(o->max_io_size);
	id->wzsl = 0;
	id->wusl = 0;
	id->dmrl = 0;
	put_le32(&id->dmrsl, 0);
	put_le64(&id->dmsl, 0);
}

static void identify_active_list(struct nvmf_req *req, uint8_t *buf)
{
	struct nvmf_subsys *s = nvmf_req_ctrlr(req)->subsys;
	uint32_t start = get_le32(&req->cmd.nsid);
	unsigned int n = 0;

	for (uint32_t nsid = start + 1; nsid <= NVMF_MAX_NAMESPACES && n < 1024; nsid++) {
		if (__atomic_load_n(&s->ns[nsid], __ATOMIC_ACQUIRE))
			put_le32(buf + 4 * n++, nsid);
	}
}

static size_t add_desc(uint8_t *buf, size_t off, uint8_t nidt, const void *id, uint8_t len)
{
	buf[off] = nidt;
	buf[off + 1] = len;
	memcpy(buf + off + 4, id, len);
	return off + 4 + len;
}

static uint16_t identify_desc_list(struct nvmf_req *req, uint8_t *buf)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	struct nvmf_ns *ns = nvmf_ns_get(c->subsys, get_le32(&req->cmd.nsid), req->qpair->reactor);
	static const uint8_t zero[16];
	uint8_t csi = 0; /* NVM command set */
	size_t off = 0;

	if (!ns)
		return ST_INVALID_NS;
	if (memcmp(ns->eui64, zero, sizeof(ns->eui64)))
		off = add_desc(buf, off, NVME_NIDT_EUI64, ns->eui64, NVME_NIDT_EUI64_LEN);
	if (memcmp(ns->nguid, zero, sizeof(ns->nguid)))
		off = add_desc(buf, off, NVME_NIDT_NGUID, ns->nguid, NVME_NIDT_NGUID_LEN);
	if (memcmp(ns->uuid, zero, sizeof(ns->uuid)))
		off = add_desc(buf, off, NVME_NIDT_UUID, ns->uuid, NVME_NIDT_UUID_LEN);
	add_desc(buf, off, NVME_NIDT_CSI, &csi, NVME_NIDT_CSI_LEN);
	nvmf_ns_put(ns, req->qpair->reactor);
	return ST_OK;
}

static void identify_exec(struct nvmf_req *req)
{
	uint8_t cns = get_le32(&req->cmd.cdw10) & 0xff;
	uint8_t buf[NVME_IDENTIFY_DATA_SIZE];
	uint16_t status = ST_OK;

	memset(buf, 0, sizeof(buf));
	switch (cns) {
	case NVME_ID_CNS_NS:
		identify_ns(req, (struct nvme_id_ns *)buf);
		break;
	case NVME_ID_CNS_CTRL:
		identify_ctrl(req, (struct nvme_id_ctrl *)buf);
		break;
	case NVME_ID_CNS_NS_ACTIVE_LIST:
		identify_active_list(req, buf);
		break;
	case NVME_ID_CNS_NS_DESC_LIST:
		status = identify_desc_list(req, buf);
		break;
	case NVME_ID_CNS_CS_NS:
		identify_ns_nvm(req, (struct nvme_id_ns_nvm *)buf);
		break;
	case NVME_ID_CNS_CS_CTRL:
		identify_ctrl_nvm(req, (struct nvme_id_ctrl_nvm *)buf);
		break;
	default: /* identify_parse() let nothing else through */
		status = ST_INVALID_FIELD;
		break;
	}
	if (!status)
		nvmf_req_reply(req, buf, sizeof(buf));
	nvmf_req_done(req, status);
}

static uint16_t identify_parse(struct nvmf_req *req)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint8_t cns = get_le32(&req->cmd.cdw10) & 0xff;
	uint8_t csi = get_le32(&req->cmd.cdw11) >> 24;
	uint32_t nsid = get_le32(&req->cmd.nsid);

	if (req->length < NVME_IDENTIFY_DATA_SIZE)
		return ST_SGL_LEN;
	if (c->discovery && cns != NVME_ID_CNS_CTRL)
		return ST_INVALID_FIELD;
	switch (cns) {
	case NVME_ID_CNS_NS:
	case NVME_ID_CNS_NS_DESC_LIST:
		if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES)
			return ST_INVALID_NS;
		break;
	case NVME_ID_CNS_NS_ACTIVE_LIST:
		if (nsid >= 0xfffffffeu)
			return ST_INVALID_NS;
		break;
	case NVME_ID_CNS_CTRL:
		break;
	case NVME_ID_CNS_CS_NS:
		if (csi != NVME_CSI_NVM)
			return ST_INVALID_FIELD;
		if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES)
			return ST_INVALID_NS;
		break;
	case NVME_ID_CNS_CS_CTRL:
		if (csi != NVME_CSI_NVM)
			return ST_INVALID_FIELD;
		break;
	default:
		/* Among them CNS 08h (I/O Command Set Independent Identify Namespace) and 1Ch
		 * (I/O Command Set data structure): NVMe 2.0 structures, for controllers that
		 * report 2.0 or CAP.CSS bit 6; this one reports 1.3 with the NVM command set
		 * only, so hosts do not ask for them. */
		return ST_INVALID_FIELD;
	}
	req->execute = identify_exec;
	return ST_OK;
}

/* ---- Asynchronous Event Request, Keep Alive, Abort ------------------------------------------ */

static void aer_exec(struct nvmf_req *req)
{
	uint16_t status = nvmf_ctrlr_aer_submit(req);

	if (status)
		nvmf_req_done(req, status);
}

static void ok_exec(struct nvmf_req *req)
{
	nvmf_req_done(req, ST_OK);
}

static uint16_t get_features_parse(struct nvmf_req *req)
{
	return nvmf_features_parse(req, false);
}

static uint16_t set_features_parse(struct nvmf_req *req)
{
	return nvmf_features_parse(req, true);
}

/* ---- The admin command table (see dispatch.h) ----------------------------------------------- */

const struct nvmf_cmd_desc nvmf_admin_cmds[NVMF_CMD_TABLE_SIZE] = {
	[NVME_ADMIN_GET_LOG_PAGE] = { .name = "Get Log Page",
				      .parse = nvmf_log_page_parse,
				      .xfer = NVME_XFER_CTRLR_TO_HOST,
				      .on = NVMF_ON_ADMIN,
				      .needs = NVMF_NEED_ADMIN },
	[NVME_ADMIN_IDENTIFY] = { .name = "Identify",
				  .parse = identify_parse,
				  .xfer = NVME_XFER_CTRLR_TO_HOST,
				  .on = NVMF_ON_ADMIN,
				  .needs = NVMF_NEED_ADMIN },
	[NVME_ADMIN_ABORT] = { .name = "Abort",
			       .execute = nvmf_abort_exec,
			       .xfer = NVME_XFER_NONE,
			       .on = NVMF_ON_NVM | NVMF_ON_LOCAL,
			       .needs = NVMF_NEED_ADMIN },
	[NVME_ADMIN_SET_FEATURES] = { .name = "Set Features",
				      .parse = set_features_parse,
				      .xfer = NVME_XFER_HOST_TO_CTRLR,
				      .on = NVMF_ON_ADMIN,
				      .needs = NVMF_NEED_ADMIN },
	[NVME_ADMIN_GET_FEATURES] = { .name = "Get Features",
				      .parse = get_features_parse,
				      .xfer = NVME_XFER_CTRLR_TO_HOST,
				      .on = NVMF_ON_ADMIN,
				      .needs = NVMF_NEED_ADMIN },
	/* Local controllers have no admin queue to park the request on. */
	[NVME_ADMIN_ASYNC_EVENT_REQUEST] = { .name = "Asynchronous Event Request",
					     .execute = aer_exec,
					     .xfer = NVME_XFER_NONE,
					     .on = NVMF_ON_NVM | NVMF_ON_DISC,
					     .needs = NVMF_NEED_ADMIN },
	[NVME_ADMIN_KEEP_ALIVE] = { .name = "Keep Alive",
				    .execute = ok_exec,
				    .xfer = NVME_XFER_NONE,
				    .on = NVMF_ON_ADMIN,
				    .needs = NVMF_NEED_ADMIN },
	[NVME_ADMIN_GET_LBA_STATUS] = { .name = "Get LBA Status",
					.parse = nvmf_get_lba_status_parse,
					.xfer = NVME_XFER_CTRLR_TO_HOST,
					.on = NVMF_ON_NVM | NVMF_ON_LOCAL,
					.needs = NVMF_NEED_ADMIN | NVMF_NEED_NS },
};
