/* SPDX-License-Identifier: MIT */
/*
 * The controller behind an iSCSI URI: the admin queue pair's session learns the logical
 * unit (INQUIRY, VPD 00h/80h/83h/B0h/B2h, READ CAPACITY(16) or (10), MODE SENSE caching
 * page, REPORT SUPPORTED OPERATION CODES) and turns it into synthetic Identify Controller
 * and Identify Namespace data, so that namespaces, nvmeof_ctrlr_get_info() and Identify
 * work as on a native controller. Admin and Fabrics commands are answered here; Keep
 * Alive becomes a NOP-Out ping and a normal shutdown (CC.SHN) a SYNCHRONIZE CACHE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_iscsi.h"
#include "queue/host_transport.h"

#define ISCSI_ADMIN_ENTRIES 32
#define ISCSI_IO_ENTRIES_MAX 1024
#define ISCSI_MAX_IO_QUEUES 1024
#define ISCSI_DEFAULT_MAX_XFER (1u << 20)
#define ISCSI_CNTLID 1
#define ISCSI_NSID 1
#define ISCSI_SETUP_UA_RETRIES 8
#define ISCSI_VPD_LEN 1024

/* ---- Parsers -------------------------------------------------------------------------------- */
/* Printable ASCII of a fixed-width field, trailing (and leading) spaces removed. */
static void ascii_field(char *dst, size_t cap, const uint8_t *src, size_t len)
{
	size_t n = 0, start = 0;

	while (start < len && (src[start] == ' ' || src[start] == '\0'))
		start++;
	for (size_t i = start; i < len && n + 1 < cap && src[i]; i++)
		dst[n++] = (src[i] >= 0x20 && src[i] < 0x7f) ? (char)src[i] : '?';
	while (n && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

int iscsi_lu_parse_inquiry(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	if (len < 36)
		return -EINVAL;
	lu->ptype = d[0] & 0x1f;
	if ((d[0] >> 5) != 0)
		return -ENODEV; /* no logical unit behind this LUN */
	ascii_field(lu->vendor, sizeof(lu->vendor), d + 8, 8);
	ascii_field(lu->product, sizeof(lu->product), d + 16, 16);
	ascii_field(lu->revision, sizeof(lu->revision), d + 32, 4);
	return lu->ptype == SCSI_PERIPH_DISK ? 0 : -ENODEV;
}

/* A VPD page header: page code and length that fits in @len. */
static int vpd_len(const uint8_t *d, size_t len, uint8_t page, size_t *plen)
{
	if (len < 4 || d[1] != page)
		return -EINVAL;
	*plen = get_be16(d + 2);
	if (*plen > len - 4)
		*plen = len - 4; /* truncated by the allocation length */
	return 0;
}

int iscsi_lu_parse_serial(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	size_t plen;

	if (vpd_len(d, len, SCSI_VPD_UNIT_SERIAL, &plen))
		return -EINVAL;
	ascii_field(lu->serial, sizeof(lu->serial), d + 4, plen);
	return 0;
}

int iscsi_lu_parse_devid(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	size_t plen;

	if (vpd_len(d, len, SCSI_VPD_DEVICE_ID, &plen))
		return -EINVAL;
	/* Pass 0: EUI-64 based designators; pass 1: NAA ones fill what is still empty. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t p = 4; p + 4 <= plen + 4;) {
			const uint8_t *desc = d + p;
			uint8_t type = desc[1] & 0xf, assoc = desc[1] & 0x30, dl = desc[3];

			if (p + 4 + dl > plen + 4)
				break;
			p += 4u + dl;
			if (pass == 0 && lu->ndesig < NVMEOF_SCSI_DESIGNATORS_MAX) {
				struct nvmeof_scsi_designator *sd = &lu->desig[lu->ndesig++];

				sd->type = type;
				sd->association = assoc >> 4;
				sd->code_set = desc[0] & 0xf;
				sd->len = dl;
				memcpy(sd->id, desc + 4, dl);
			}
			if (assoc != SCSI_ASSOC_LU || (desc[0] & 0xf) != SCSI_CODESET_BINARY)
				continue;
			if (type != (pass == 0 ? SCSI_DESIG_EUI64 : SCSI_DESIG_NAA))
				continue;
			if (dl == 16 && !lu->has_nguid) {
				memcpy(lu->nguid, desc + 4, 16);
				lu->has_nguid = true;
			} else if (dl == 8 && !lu->has_eui64) {
				memcpy(lu->eui64, desc + 4, 8);
				lu->has_eui64 = true;
			}
		}
	}
	return 0;
}

int iscsi_lu_parse_block_limits(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	size_t plen;

	if (vpd_len(d, len, SCSI_VPD_BLOCK_LIMITS, &plen) || plen < 12)
		return -EINVAL;
	lu->have_limits = true;
	lu->caw_blocks = d[5];
	lu->opt_xfer_gran = get_be16(d + 6);
	lu->max_xfer_blocks = get_be32(d + 8);
	if (plen >= 12)
		lu->opt_xfer_blocks = get_be32(d + 12);
	if (plen >= 24) {
		lu->unmap_blocks = get_be32(d + 20);
		lu->unmap_descs = get_be32(d + 24);
	}
	if (plen >= 28)
		lu->unmap_gran = get_be32(d + 28);
	if (plen >= 40)
		lu->ws_blocks = get_be64(d + 36);
	return 0;
}

int iscsi_lu_parse_provisioning(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	size_t plen;

	if (vpd_len(d, len, SCSI_VPD_LOGICAL_BLOCK_PROVISIONING, &plen) || plen < 2)
		return -EINVAL;
	lu->lbpu = d[5] & SCSI_LBP_LBPU;
	lu->lbpws = d[5] & SCSI_LBP_LBPWS;
	if (d[5] & SCSI_LBP_LBPRZ)
		lu->read_zeroes = true;
	return 0;
}

static int set_block_size(struct host_iscsi_lu *lu, uint32_t bs)
{
	uint32_t shift = 0;

	if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
		return -EINVAL;
	while ((1u << shift) < bs)
		shift++;
	lu->block_size = bs;
	lu->block_shift = shift;
	return 0;
}

int iscsi_lu_parse_capacity16(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	uint64_t last;

	if (len < 15)
		return -EINVAL;
	last = get_be64(d);
	if (last == UINT64_MAX || set_block_size(lu, get_be32(d + 8)))
		return -EINVAL;
	lu->nblocks = last + 1;
	lu->thin = d[14] & SCSI_RC16_LBPME;
	if (d[14] & SCSI_RC16_LBPRZ)
		lu->read_zeroes = true;
	return 0;
}

int iscsi_lu_parse_capacity10(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	uint32_t last;

	if (len < 8)
		return -EINVAL;
	last = get_be32(d);
	if (last == SCSI_READ_CAPACITY10_MAX_LBA)
		return -E2BIG; /* READ CAPACITY(16) is needed */
	if (set_block_size(lu, get_be32(d + 4)))
		return -EINVAL;
	lu->nblocks = (uint64_t)last + 1;
	return 0;
}

int iscsi_lu_parse_caching(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	size_t total, p;

	if (len < 8)
		return -EINVAL;
	total = (size_t)get_be16(d) + 2;
	if (total > len)
		total = len;
	lu->write_protected = d[3] & SCSI_MODE_DSP_WP;
	p = 8 + (size_t)get_be16(d + 6);
	while (p + 2 <= total) {
		uint8_t code = d[p] & 0x3f, plen = d[p + 1];

		if (d[p] & 0x40) { /* SPF: sub-page format, 16-bit length */
			if (p + 4 > total)
				break;
			p += 4 + get_be16(d + p + 2);
			continue;
		}
		if (code == SCSI_MODE_PAGE_CACHING && plen >= 1 && p + 3 <= total) {
			lu->write_cache = d[p + 2] & SCSI_MODE_CACHING_WCE;
			return 0;
		}
		p += 2u + plen;
	}
	return -ENOENT;
}

int iscsi_lu_parse_opcodes(struct host_iscsi_lu *lu, const uint8_t *d, size_t len)
{
	size_t total, p = 4;

	if (len < 4)
		return -EINVAL;
	total = (size_t)get_be32(d) + 4;
	if (total > len)
		total = len;
	while (p + 8 <= total) {
		const uint8_t *desc = d + p;

		switch (desc[0]) {
		case SCSI_OP_COMPARE_AND_WRITE:
			lu->op_caw = true;
			break;
		case SCSI_OP_WRITE_SAME16:
			lu->op_ws16 = true;
			break;
		case SCSI_OP_UNMAP:
			lu->op_unmap = true;
			break;
		case SCSI_OP_VERIFY16:
			lu->op_verify16 = true;
			break;
		}
		p += 8u + ((desc[5] & 0x02) ? 12u : 0u); /* CTDP: a timeouts descriptor follows */
	}
	lu->opcodes_known = true;
	return 0;
}

void iscsi_lu_finish(struct host_iscsi_lu *lu)
{
	struct scsi_lu_limits *l = &lu->lim;
	bool unmap = lu->lbpu && (!lu->have_limits || lu->unmap_descs);

	memset(l, 0, sizeof(*l));
	l->block_shift = lu->block_shift;
	l->caw_max_blocks = lu->caw_blocks;
	if (lu->opcodes_known && !lu->op_caw)
		l->caw_max_blocks = 0;
	l->ws_max_blocks = lu->ws_blocks > UINT32_MAX ? UINT32_MAX : (uint32_t)lu->ws_blocks;
	/* Without the list, WRITE SAME(16) and VERIFY(16) are tried: the target decides. */
	l->write_same = !lu->opcodes_known || lu->op_ws16;
	l->verify = !lu->opcodes_known || lu->op_verify16;
	l->ws_unmap = lu->lbpws && l->write_same;
	if (lu->opcodes_known)
		unmap = unmap && lu->op_unmap;
	if (unmap) {
		l->unmap_max_descs = lu->have_limits ? lu->unmap_descs : 1;
		if (l->unmap_max_descs > SCSI_ENCAP_UNMAP_DESCS)
			l->unmap_max_descs = SCSI_ENCAP_UNMAP_DESCS;
	}
}

uint16_t iscsi_lu_oncs(const struct host_iscsi_lu *lu)
{
	uint16_t oncs = 0;

	if (lu->lim.verify) /* Compare is VERIFY(16) with BYTCHK 01b */
		oncs |= NVME_CTRL_ONCS_COMPARE;
	if (lu->lim.unmap_max_descs)
		oncs |= NVME_CTRL_ONCS_DSM;
	if (lu->lim.write_same && (lu->opcodes_known || lu->lbpws))
		oncs |= NVME_CTRL_ONCS_WRITE_ZEROES;
	if (lu->lim.verify && lu->opcodes_known)
		oncs |= NVME_CTRL_ONCS_VERIFY;
	return oncs;
}

/* ---- Identify data -------------------------------------------------------------------------- */
static void space_pad(char *dst, size_t width, const char *src)
{
	size_t n = strlen(src);

	if (n > width)
		n = width;
	memset(dst, ' ', width);
	memcpy(dst, src, n);
}

void iscsi_build_id_ctrl(const struct host_iscsi_lu *lu, const char *target_name, uint32_t max_xfer,
			 uint16_t maxcmd, struct nvme_id_ctrl *id)
{
	char mn[64];
	uint8_t mdts = 0;

	memset(id, 0, sizeof(*id));
	space_pad(id->sn, sizeof(id->sn), lu->serial);
	snprintf(mn, sizeof(mn), "%s%s%s", lu->vendor, lu->vendor[0] ? " " : "", lu->product);
	space_pad(id->mn, sizeof(id->mn), mn);
	space_pad(id->fr, sizeof(id->fr), lu->revision);
	while (max_xfer && (4096ull << (mdts + 1)) <= max_xfer && mdts < 15)
		mdts++;
	id->mdts = max_xfer >= 8192 ? mdts : 1;
	put_le16(&id->cntlid, ISCSI_CNTLID);
	put_le32(&id->ver, NVME_VS(1, 4, 0));
	id->cntrltype = NVME_CTRL_CNTRLTYPE_IO;
	id->sqes = 0x66;
	id->cqes = 0x44;
	put_le16(&id->maxcmd, maxcmd);
	put_le32(&id->nn, 1);
	put_le16(&id->oncs, iscsi_lu_oncs(lu));
	id->vwc = lu->write_cache ? NVME_CTRL_VWC_PRESENT : 0;
	put_le16(&id->kas, 1); /* 100 ms */
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", target_name);
}

void iscsi_build_id_ns(const struct host_iscsi_lu *lu, struct nvme_id_ns *id)
{
	memset(id, 0, sizeof(*id));
	put_le64(&id->nsze, lu->nblocks);
	put_le64(&id->ncap, lu->nblocks);
	put_le64(&id->nuse, lu->nblocks);
	id->nsfeat = lu->thin ? NVME_NS_NSFEAT_THIN : 0;
	id->nlbaf = 0;
	id->flbas = 0;
	id->lbaf[0].lbads = (uint8_t)lu->block_shift;
	if (lu->read_zeroes)
		id->dlfeat = NVME_NS_DLFEAT_READ_ZEROES;
	if (lu->lim.ws_unmap)
		id->dlfeat |= NVME_NS_DLFEAT_WZ_DEAC;
	id->nsattr = lu->write_protected ? 1 : 0;
	if (lu->has_nguid)
		memcpy(id->nguid, lu->nguid, 16);
	if (lu->has_eui64)
		memcpy(id->eui64, lu->eui64, 8);
}

void iscsi_build_ns_desc_list(const struct host_iscsi_lu *lu, uint8_t *buf)
{
	size_t p = 0;

	memset(buf, 0, NVME_IDENTIFY_DATA_SIZE);
	if (lu->has_eui64) {
		buf[p] = NVME_NIDT_EUI64;
		buf[p + 1] = NVME_NIDT_EUI64_LEN;
		memcpy(buf + p + 4, lu->eui64, NVME_NIDT_EUI64_LEN);
		p += 4 + NVME_NIDT_EUI64_LEN;
	}
	if (lu->has_nguid) {
		buf[p] = NVME_NIDT_NGUID;
		buf[p + 1] = NVME_NIDT_NGUID_LEN;
		memcpy(buf + p + 4, lu->nguid, NVME_NIDT_NGUID_LEN);
	}
}

/* ---- Probing the logical unit --------------------------------------------------------------- */
struct probe {
	struct iscsi_qpair *iq;
	int timeout_ms;
	uint8_t status;
	uint8_t sense[64];
	uint32_t sense_len;
	uint32_t got;
};

/* One SCSI command, sent again while the LU reports a UNIT ATTENTION. */
static int probe_cmd(struct probe *pr, const uint8_t *cdb, uint8_t cdb_len, void *buf,
		     uint32_t len)
{
	for (int i = 0; i <= ISCSI_SETUP_UA_RETRIES; i++) {
		int rc = iscsi_exec_internal(pr->iq, cdb, cdb_len, buf, len, false, &pr->status,
					     pr->sense, &pr->sense_len, &pr->got, pr->timeout_ms);

		if (rc)
			return set_error(rc, "SCSI command 0x%02x failed: %s", cdb[0],
					 pr->iq->qp.errmsg[0] ? pr->iq->qp.errmsg : strerror(-rc));
		if (!scsi_is_unit_attention(pr->status, pr->sense, pr->sense_len))
			return 0;
	}
	return 0;
}

static const char *probe_outcome(const struct probe *pr, char *buf, size_t len)
{
	uint16_t asc;
	uint8_t key;

	if (pr->status == SCSI_STATUS_CHECK_CONDITION &&
	    scsi_sense_parse(pr->sense, pr->sense_len, &key, &asc))
		snprintf(buf, len, "CHECK CONDITION, sense key 0x%x, ASC/ASCQ %02x/%02x", key,
			 asc >> 8, asc & 0xff);
	else
		snprintf(buf, len, "SCSI status 0x%02x", pr->status);
	return buf;
}

static bool probe_good(const struct probe *pr)
{
	return pr->status == SCSI_STATUS_GOOD;
}

/* VPD page @page (0 when not listed as supported, or on failure). */
static int probe_vpd(struct probe *pr, uint8_t page, uint8_t *buf)
{
	uint8_t cdb[6] = { SCSI_OP_INQUIRY, SCSI_INQ_EVPD, page, 0, 0, 0 };
	int rc;

	put_be16(&cdb[3], ISCSI_VPD_LEN);
	rc = probe_cmd(pr, cdb, sizeof(cdb), buf, ISCSI_VPD_LEN);
	if (rc)
		return rc;
	return probe_good(pr) ? (int)pr->got : 0;
}

static int probe_lu(struct iscsi_qpair *iq, struct host_iscsi_lu *lu, const char *target, int tmo)
{
	struct probe pr = { .iq = iq, .timeout_ms = tmo };
	bool pages[256] = { false };
	uint8_t *buf = malloc(ISCSI_VPD_LEN);
	uint8_t cdb[16];
	char why[96];
	int rc, n;

	if (!buf)
		return set_error(-ENOMEM, "out of memory");
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SCSI_OP_INQUIRY;
	put_be16(&cdb[3], 255);
	rc = probe_cmd(&pr, cdb, 6, buf, 255);
	if (rc)
		goto out;
	if (!probe_good(&pr)) {
		rc = set_error(-EIO, "INQUIRY of LUN %llu on %s failed: %s",
			       (unsigned long long)lu->lun, target,
			       probe_outcome(&pr, why, sizeof(why)));
		goto out;
	}
	rc = iscsi_lu_parse_inquiry(lu, buf, pr.got);
	if (rc == -EINVAL) {
		rc = set_error(-EPROTO, "INQUIRY of LUN %llu returned %u bytes",
			       (unsigned long long)lu->lun, pr.got);
		goto out;
	}
	if (rc) {
		if ((buf[0] >> 5) != 0)
			rc = set_error(-ENODEV, "LUN %llu of %s does not exist",
				       (unsigned long long)lu->lun, target);
		else
			rc = set_error(-ENODEV, "LUN %llu of %s is not a disk (peripheral type "
						"0x%02x)", (unsigned long long)lu->lun, target,
				       lu->ptype);
		goto out;
	}

	n = probe_vpd(&pr, SCSI_VPD_SUPPORTED_PAGES, buf);
	if (n < 0) {
		rc = n;
		goto out;
	}
	if (n >= 4 && buf[1] == SCSI_VPD_SUPPORTED_PAGES)
		for (int i = 4; i < n && i < 4 + get_be16(buf + 2); i++)
			pages[buf[i]] = true;
	{
		static const uint8_t want[] = { SCSI_VPD_UNIT_SERIAL, SCSI_VPD_DEVICE_ID,
						SCSI_VPD_BLOCK_LIMITS,
						SCSI_VPD_LOGICAL_BLOCK_PROVISIONING };

		for (size_t i = 0; i < sizeof(want); i++) {
			if (!pages[want[i]])
				continue;
			n = probe_vpd(&pr, want[i], buf);
			if (n < 0) {
				rc = n;
				goto out;
			}
			if (n == 0)
				continue;
			if (want[i] == SCSI_VPD_UNIT_SERIAL)
				iscsi_lu_parse_serial(lu, buf, (size_t)n);
			else if (want[i] == SCSI_VPD_DEVICE_ID)
				iscsi_lu_parse_devid(lu, buf, (size_t)n);
			else if (want[i] == SCSI_VPD_BLOCK_LIMITS)
				iscsi_lu_parse_block_limits(lu, buf, (size_t)n);
			else
				iscsi_lu_parse_provisioning(lu, buf, (size_t)n);
		}
	}

	/* Capacity: READ CAPACITY(16), or (10) on targets without it. */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SCSI_OP_SERVICE_ACTION_IN16;
	cdb[1] = SCSI_SAI_READ_CAPACITY16;
	put_be32(&cdb[10], 32);
	rc = probe_cmd(&pr, cdb, 16, buf, 32);
	if (rc)
		goto out;
	if (!probe_good(&pr) || iscsi_lu_parse_capacity16(lu, buf, pr.got)) {
		memset(cdb, 0, sizeof(cdb));
		cdb[0] = SCSI_OP_READ_CAPACITY10;
		rc = probe_cmd(&pr, cdb, 10, buf, 8);
		if (rc)
			goto out;
		if (!probe_good(&pr)) {
			rc = set_error(-EIO, "READ CAPACITY of LUN %llu failed: %s",
				       (unsigned long long)lu->lun,
				       probe_outcome(&pr, why, sizeof(why)));
			goto out;
		}
		if (iscsi_lu_parse_capacity10(lu, buf, pr.got)) {
			rc = set_error(-EPROTO, "READ CAPACITY of LUN %llu: unusable answer",
				       (unsigned long long)lu->lun);
			goto out;
		}
	}

	/* Volatile write cache: the caching mode page's WCE, assumed present if unknown. */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SCSI_OP_MODE_SENSE10;
	cdb[1] = 0x08; /* DBD */
	cdb[2] = SCSI_MODE_PAGE_CACHING;
	put_be16(&cdb[7], 255);
	lu->write_cache = true;
	rc = probe_cmd(&pr, cdb, 10, buf, 255);
	if (rc)
		goto out;
	if (probe_good(&pr) && iscsi_lu_parse_caching(lu, buf, pr.got))
		lu->write_cache = true;

	/* Which optional commands exist (not every target answers this). */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = SCSI_OP_MAINTENANCE_IN;
	cdb[1] = SCSI_MI_REPORT_SUPPORTED_OPCODES;
	put_be32(&cdb[6], ISCSI_VPD_LEN);
	rc = probe_cmd(&pr, cdb, 12, buf, ISCSI_VPD_LEN);
	if (rc)
		goto out;
	if (probe_good(&pr))
		iscsi_lu_parse_opcodes(lu, buf, pr.got);
	iscsi_lu_finish(lu);
	rc = 0;
out:
	free(buf);
	return rc;
}

/* ---- Controller setup ----------------------------------------------------------------------- */
int iscsi_ctrlr_setup(struct nvmeof_ctrlr *ctrlr)
{
	const struct nvmeof_opts *o = &ctrlr->opts;
	struct nvmeof_qpair *aq;
	struct iscsi_qpair *iq;
	struct host_iscsi_lu *lu;
	struct nvmeof_ns *ns;
	uint32_t max_xfer = ISCSI_DEFAULT_MAX_XFER;
	int rc;

	if (!ctrlr->uri.name[0])
		return set_error(-EINVAL, "iSCSI URI without a target name");
	aq = ctrlr->ops->qpair_alloc();
	if (!aq)
		return set_error(-ENOMEM, "out of memory");
	ctrlr->admin = aq;
	iq = iscsi_qp(aq);
	rc = qpair_init(aq, ctrlr, 0, ISCSI_ADMIN_ENTRIES - 1, o->admin_timeout_ms);
	iq->lu = lu = calloc(1, sizeof(*lu));
	iq->id_ns = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	ctrlr->id = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	ctrlr->ns = calloc(1, sizeof(*ctrlr->ns));
	if (rc || !lu || !iq->id_ns || !ctrlr->id || !ctrlr->ns)
		return set_error(-ENOMEM, "out of memory");
	aq->entries = ISCSI_ADMIN_ENTRIES;
	lu->lun = ctrlr->uri.lun;
	snprintf(ctrlr->uri_str, sizeof(ctrlr->uri_str), "iscsi://%s%s%s:%u/%s/%llu",
		 ctrlr->uri.ipv6 ? "[" : "", ctrlr->uri.host, ctrlr->uri.ipv6 ? "]" : "",
		 ctrlr->uri.port, ctrlr->uri.name, (unsigned long long)ctrlr->uri.lun);

	rc = ctrlr->ops->qpair_connect(aq, (int)o->connect_timeout_ms);
	if (rc)
		return rc;
	qpair_set_state(aq, QP_CONNECTING);
	rc = probe_lu(iq, lu, ctrlr->uri.name, (int)o->admin_timeout_ms);
	if (rc)
		return rc;

	if (lu->max_xfer_blocks && (uint64_t)lu->max_xfer_blocks * lu->block_size < max_xfer)
		max_xfer = lu->max_xfer_blocks * lu->block_size;
	while (max_xfer & (max_xfer - 1))
		max_xfer &= max_xfer - 1; /* a power of two, as MDTS can say */
	if (max_xfer < lu->block_size)
		max_xfer = lu->block_size;
	iscsi_build_id_ctrl(lu, ctrlr->uri.name, max_xfer, (uint16_t)o->queue_depth, ctrlr->id);
	iscsi_build_id_ns(lu, iq->id_ns);

	ctrlr->cap = (uint64_t)(ISCSI_IO_ENTRIES_MAX - 1) | NVME_CAP_CQR |
		     (uint64_t)1 << NVME_CAP_TO_SHIFT | NVME_CAP_CSS_NVM;
	ctrlr->vs = NVME_VS(1, 4, 0);
	ctrlr->cntlid = ISCSI_CNTLID;
	ctrlr->max_xfer = max_xfer;
	aq->max_xfer = max_xfer;
	ctrlr->io_icdata = 0;
	ctrlr->io_entries_max = ISCSI_IO_ENTRIES_MAX;
	ctrlr->max_io_queues = ISCSI_MAX_IO_QUEUES;
	iq->cc = NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT;
	iq->csts = NVME_CSTS_RDY;

	ns = &ctrlr->ns[0];
	memset(ns, 0, sizeof(*ns));
	ns->ctrlr = ctrlr;
	ns->block_shift = lu->block_shift;
	ns->info.nsid = ISCSI_NSID;
	ns->info.nsze = ns->info.ncap = ns->info.nuse = lu->nblocks;
	ns->info.block_size = lu->block_size;
	ns->info.dlfeat = iq->id_ns->dlfeat;
	ns->info.nsfeat = iq->id_ns->nsfeat;
	memcpy(ns->info.nguid, lu->nguid, 16);
	memcpy(ns->info.eui64, lu->eui64, 8);
	ns->info.has_nguid = lu->has_nguid;
	ns->info.has_eui64 = lu->has_eui64;
	ctrlr->nr_ns = 1;

	ctrlr->kato_ms = o->kato_ms;
	if (o->kato_ms)
		ctrlr->next_ka = now_ms() + o->kato_ms / 2;
	qpair_set_state(aq, QP_READY);
	nlog_info("iSCSI LUN %llu of %s: %s %s, %llu blocks of %u bytes, oncs 0x%x, vwc %d",
		  (unsigned long long)lu->lun, ctrlr->uri.name, lu->vendor, lu->product,
		  (unsigned long long)lu->nblocks, lu->block_size, iscsi_lu_oncs(lu),
		  lu->write_cache);
	return 0;
}

/* ---- Admin and Fabrics commands ------------------------------------------------------------- */
/* Copy @len bytes into the command's buffers; the rest of them is zeroed. */
static void req_fill(struct nvmeof_req *req, const void *src, size_t len)
{
	struct iovec v[NVMEOF_IOV_MAX];
	const uint8_t *s = src;
	int n = iov_slice(req->iov, req->iovcnt, req->data_off, req->data_len, v, NVMEOF_IOV_MAX);

	for (int i = 0; i < n; i++) {
		size_t c = v[i].iov_len < len ? v[i].iov_len : len;

		memcpy(v[i].iov_base, s, c);
		memset((uint8_t *)v[i].iov_base + c, 0, v[i].iov_len - c);
		s += c;
		len -= c;
	}
}

#define ST(sct, sc) NVMEOF_STATUS(NVME_SCT_##sct, NVME_SC_##sc)

static int admin_identify(struct iscsi_qpair *iq, struct nvmeof_req *req)
{
	uint32_t cns = get_le32(&req->sqe.cdw10) & 0xff, nsid = get_le32(&req->sqe.nsid);
	uint8_t *list;

	switch (cns) {
	case NVME_ID_CNS_CTRL:
		req_fill(req, iq->qp.ctrlr->id, NVME_IDENTIFY_DATA_SIZE);
		break;
	case NVME_ID_CNS_NS:
		if (nsid != ISCSI_NSID) {
			iscsi_complete_local(req, ST(GENERIC, INVALID_NS_OR_FORMAT), true, 0, 0);
			return 0;
		}
		req_fill(req, iq->id_ns, NVME_IDENTIFY_DATA_SIZE);
		break;
	case NVME_ID_CNS_NS_ACTIVE_LIST:
	case NVME_ID_CNS_NS_DESC_LIST:
		if (cns == NVME_ID_CNS_NS_DESC_LIST && nsid != ISCSI_NSID) {
			iscsi_complete_local(req, ST(GENERIC, INVALID_NS_OR_FORMAT), true, 0, 0);
			return 0;
		}
		list = calloc(1, NVME_IDENTIFY_DATA_SIZE);
		if (!list)
			return -ENOMEM;
		if (cns == NVME_ID_CNS_NS_DESC_LIST)
			iscsi_build_ns_desc_list(iq->lu, list);
		else if (nsid < ISCSI_NSID)
			put_le32(list, ISCSI_NSID);
		req_fill(req, list, NVME_IDENTIFY_DATA_SIZE);
		free(list);
		break;
	default:
		iscsi_complete_local(req, ST(GENERIC, INVALID_FIELD), true, 0, 0);
		return 0;
	}
	iscsi_complete_local(req, 0, false, 0, 0);
	return 0;
}

static int admin_features(struct iscsi_qpair *iq, struct nvmeof_req *req, bool set)
{
	uint8_t fid = (uint8_t)get_le32(&req->sqe.cdw10);
	uint32_t nq = ISCSI_MAX_IO_QUEUES - 1;

	if (fid == NVME_FEAT_NUM_QUEUES) {
		iscsi_complete_local(req, 0, false, nq | nq << 16, 0);
		return 0;
	}
	if (fid == NVME_FEAT_VOLATILE_WC && !set) {
		iscsi_complete_local(req, 0, false, iq->lu->write_cache ? 1 : 0, 0);
		return 0;
	}
	iscsi_complete_local(req, set && fid == NVME_FEAT_VOLATILE_WC
					  ? NVMEOF_STATUS(NVME_SCT_COMMAND_SPECIFIC,
							  NVME_SC_FEATURE_NOT_CHANGEABLE)
					  : ST(GENERIC, INVALID_FIELD),
			     true, 0, 0);
	return 0;
}

static int property_get(struct iscsi_qpair *iq, struct nvmeof_req *req)
{
	const struct nvmf_property_cmd *c = (const void *)&req->sqe;
	uint64_t v;

	switch (get_le32(&c->offset)) {
	case NVME_REG_CAP:
		v = iq->qp.ctrlr->cap;
		break;
	case NVME_REG_VS:
		v = iq->qp.ctrlr->vs;
		break;
	case NVME_REG_CC:
		v = iq->cc;
		break;
	case NVME_REG_CSTS:
		v = iq->csts;
		break;
	default:
		iscsi_complete_local(req, ST(GENERIC, INVALID_FIELD), true, 0, 0);
		return 0;
	}
	iscsi_complete_local(req, 0, false, (uint32_t)v, (uint32_t)(v >> 32));
	return 0;
}

static int property_set(struct iscsi_qpair *iq, struct nvmeof_req *req)
{
	const struct nvmf_property_cmd *c = (const void *)&req->sqe;
	uint32_t old = iq->cc, cc = (uint32_t)get_le64(&c->value);

	if (get_le32(&c->offset) != NVME_REG_CC) {
		iscsi_complete_local(req, ST(GENERIC, INVALID_FIELD), true, 0, 0);
		return 0;
	}
	iq->cc = cc;
	if (cc & NVME_CC_EN)
		iq->csts |= NVME_CSTS_RDY;
	else
		iq->csts &= ~(NVME_CSTS_RDY | NVME_CSTS_SHST_MASK);
	if ((cc & NVME_CC_SHN_MASK) && !(old & NVME_CC_SHN_MASK)) {
		iq->csts = (iq->csts & ~NVME_CSTS_SHST_MASK) |
			   NVME_CSTS_SHST_COMPLETE << NVME_CSTS_SHST_SHIFT;
		/* A normal shutdown makes cached writes durable first. */
		if (((cc & NVME_CC_SHN_MASK) >> NVME_CC_SHN_SHIFT) == NVME_CC_SHN_NORMAL &&
		    iq->lu->write_cache)
			return iscsi_start_task(iq, req, ISCSI_TASK_SHUTDOWN);
	}
	iscsi_complete_local(req, 0, false, 0, 0);
	return 0;
}

static int fabrics_cmd(struct iscsi_qpair *iq, struct nvmeof_req *req)
{
	const struct nvmf_cmd *c = (const void *)&req->sqe;

	switch (c->fctype) {
	case NVMF_FCTYPE_CONNECT:
		/* The iSCSI login was the connection handshake. */
		iscsi_complete_local(req, 0, false, iq->qp.qid == 0 ? ISCSI_CNTLID : 0, 0);
		return 0;
	case NVMF_FCTYPE_DISCONNECT:
		/* The session ends with a Logout when the queue pair closes. */
		iscsi_complete_local(req, 0, false, 0, 0);
		return 0;
	case NVMF_FCTYPE_PROPERTY_GET:
		if (iq->qp.qid == 0)
			return property_get(iq, req);
		break;
	case NVMF_FCTYPE_PROPERTY_SET:
		if (iq->qp.qid == 0)
			return property_set(iq, req);
		break;
	}
	iscsi_complete_local(req, ST(GENERIC, INVALID_OPCODE), true, 0, 0);
	return 0;
}

int iscsi_admin_submit(struct iscsi_qpair *iq, struct nvmeof_req *req)
{
	if (req->sqe.opc == NVME_ADMIN_FABRICS)
		return fabrics_cmd(iq, req);
	if (iq->qp.qid != 0 || !iq->lu) {
		iscsi_complete_local(req, ST(GENERIC, INVALID_OPCODE), true, 0, 0);
		return 0;
	}
	switch (req->sqe.opc) {
	case NVME_ADMIN_IDENTIFY:
		return admin_identify(iq, req);
	case NVME_ADMIN_SET_FEATURES:
		return admin_features(iq, req, true);
	case NVME_ADMIN_GET_FEATURES:
		return admin_features(iq, req, false);
	case NVME_ADMIN_KEEP_ALIVE:
		return iscsi_start_task(iq, req, ISCSI_TASK_NOP);
	case NVME_ADMIN_GET_LOG_PAGE:
		iscsi_complete_local(req, NVMEOF_STATUS(NVME_SCT_COMMAND_SPECIFIC,
							NVME_SC_INVALID_LOG_PAGE),
				     true, 0, 0);
		return 0;
	default:
		iscsi_complete_local(req, ST(GENERIC, INVALID_OPCODE), true, 0, 0);
		return 0;
	}
}

/* ---- The logical unit as the application sees it ------------------------------------------ */
int nvmeof_ctrlr_get_scsi_info(struct nvmeof_ctrlr *ctrlr, struct nvmeof_scsi_info *info)
{
	const struct host_iscsi_lu *lu;

	if (!ctrlr || !info)
		return -EINVAL;
	if (ctrlr->ops != &iscsi_transport_ops)
		return -ENOTSUP;
	if (!ctrlr->admin || !iscsi_qp(ctrlr->admin)->lu)
		return -ENOTCONN;
	lu = iscsi_qp(ctrlr->admin)->lu;
	memset(info, 0, sizeof(*info));
	snprintf(info->target, sizeof(info->target), "%.223s", ctrlr->uri.name);
	info->lun = lu->lun;
	info->peripheral_type = lu->ptype;
	memcpy(info->vendor, lu->vendor, sizeof(info->vendor));
	memcpy(info->product, lu->product, sizeof(info->product));
	memcpy(info->revision, lu->revision, sizeof(info->revision));
	memcpy(info->serial, lu->serial, sizeof(info->serial));
	info->ndesignators = lu->ndesig;
	memcpy(info->designators, lu->desig, sizeof(info->designators));
	info->blocks = lu->nblocks;
	info->block_size = lu->block_size;
	info->write_cache = lu->write_cache;
	info->write_protected = lu->write_protected;
	info->thin = lu->thin;
	info->read_zeroes = lu->read_zeroes;
	info->has_block_limits = lu->have_limits;
	info->max_transfer = lu->max_xfer_blocks;
	info->optimal_transfer = lu->opt_xfer_blocks;
	info->optimal_granularity = lu->opt_xfer_gran;
	info->max_compare_write = lu->caw_blocks;
	info->max_unmap = lu->unmap_blocks;
	info->max_unmap_descriptors = lu->unmap_descs;
	info->unmap_granularity = lu->unmap_gran;
	info->max_write_same = lu->ws_blocks;
	return 0;
}

/* The session parameters the iSCSI tunnel negotiated (public API). */
int nvmeof_ctrlr_get_iscsi_params(struct nvmeof_ctrlr *ctrlr, struct nvmeof_iscsi_params *p)
{
	const struct nvmeof_qpair *qp;
	const struct iscsi_session *s;

	if (!ctrlr || !p)
		return -EINVAL;
	if (ctrlr->ops != &iscsi_transport_ops)
		return -ENOTSUP;
	qp = TAILQ_FIRST(&ctrlr->io_qpairs);
	if (!qp)
		qp = ctrlr->admin;
	if (!qp)
		return -ENOTCONN;
	s = &iscsi_qp(qp)->s;
	memset(p, 0, sizeof(*p));
	p->header_digest = s->hdgst;
	p->data_digest = s->ddgst;
	p->immediate_data = s->immediate_data;
	p->initial_r2t = s->initial_r2t;
	p->first_burst_length = s->first_burst;
	p->max_burst_length = s->max_burst;
	p->max_recv_dsl = s->max_recv_dsl;
	p->max_xmit_dsl = s->max_xmit_dsl;
	p->max_outstanding_r2t = s->max_outstanding_r2t;
	return 0;
}
