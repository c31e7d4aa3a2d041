// SPDX-License-Identifier: MIT
/*
 * Immediate SPC-4 responses built from namespace/controller information (NVM Express SCSI
 * Translation Reference): INQUIRY (standard and VPD 00h 80h 83h 86h B0h B1h B2h),
 * REQUEST SENSE, REPORT LUNS, MODE SENSE/SELECT and REPORT SUPPORTED OPERATION CODES.
 */
#include <stdio.h>
#include <string.h>

#include "common/endian.h"
#include "scsi_internal.h"

#define T10_VENDOR "NVMe    "
#define SCSI_NAME_BUF 224 /* SCSI name string: up to 223 bytes and a NUL */

static void pad_copy(uint8_t *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	memset(dst, ' ', len);
	memcpy(dst, src, n < len ? n : len);
}

/* Length of @s without trailing blanks. */
static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		n--;
	return n;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* ---- INQUIRY ------------------------------------------------------------------------------ */

static uint32_t inquiry_standard(struct xctx *x, uint8_t *b)
{
	static const uint16_t versions[] = { SCSI_VD_SAM5, SCSI_VD_ISCSI, SCSI_VD_SPC4,
					     SCSI_VD_SBC3 };
	const struct scsi_lu *lu = x->lu;

	memset(b, 0, SCSI_INQ_STD_LEN);
	b[0] = lu ? SCSI_PERIPH_DISK : SCSI_PERIPH_NO_LU;
	b[2] = SCSI_VERSION_SPC4;
	b[3] = SCSI_INQ_HISUP | SCSI_INQ_RESPONSE_FORMAT;
	b[4] = SCSI_INQ_STD_LEN - 5;
	b[7] = SCSI_INQ_CMDQUE;
	memcpy(&b[8], T10_VENDOR, 8);
	pad_copy(&b[16], lu ? lu->model : "", 16);
	pad_copy(&b[32], lu ? lu->firmware : "", 4);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		put_be16(&b[58 + 2 * i], versions[i]);
	return SCSI_INQ_STD_LEN;
}

static const uint8_t vpd_pages[] = {
	SCSI_VPD_SUPPORTED_PAGES, SCSI_VPD_UNIT_SERIAL, SCSI_VPD_DEVICE_ID,
	SCSI_VPD_EXTENDED_INQUIRY, SCSI_VPD_BLOCK_LIMITS,
	SCSI_VPD_BLOCK_DEVICE_CHARACTERISTICS, SCSI_VPD_LOGICAL_BLOCK_PROVISIONING,
};

/* Product serial number: the NGUID, else the EUI-64, else serial and NSID. */
static void unit_serial(const struct scsi_lu *lu, char *out, size_t cap)
{
	if (!all_zero(lu->nguid, 16)) {
		for (int i = 0; i < 16; i++)
			snprintf(out + 2 * i, cap - 2 * (size_t)i, "%02X", lu->nguid[i]);
	} else if (!all_zero(lu->eui64, 8)) {
		for (int i = 0; i < 8; i++)
			snprintf(out + 2 * i, cap - 2 * (size_t)i, "%02X", lu->eui64[i]);
	} else {
		snprintf(out, cap, "%.*s_%08X", (int)trimmed_len(lu->serial), lu->serial,
			 lu->nsid);
	}
}

/* Append one designation descriptor; returns its length. */
static uint32_t desig(uint8_t *d, uint8_t proto_codeset, uint8_t piv_assoc_type,
		      const void *val, uint32_t len)
{
	d[0] = proto_codeset;
	d[1] = piv_assoc_type;
	d[2] = 0;
	d[3] = (uint8_t)len;
	memcpy(&d[4], val, len);
	return 4 + len;
}

static uint32_t vpd_device_id(struct xctx *x, uint8_t *b)
{
	const struct scsi_lu *lu = x->lu;
	uint32_t len = 4;
	char name[SCSI_NAME_BUF + 32];
	uint8_t tmp[64];
	size_t n;

	if (!all_zero(lu->nguid, 16))
		len += desig(&b[len], SCSI_CODESET_BINARY, SCSI_ASSOC_LU | SCSI_DESIG_EUI64,
			     lu->nguid, 16);
	if (!all_zero(lu->eui64, 8))
		len += desig(&b[len], SCSI_CODESET_BINARY, SCSI_ASSOC_LU | SCSI_DESIG_EUI64,
			     lu->eui64, 8);
	/* T10 vendor ID based: vendor, model and serial number, NSID */
	n = (size_t)snprintf((char *)tmp, sizeof(tmp), "%s%.*s_%.*s_%u", T10_VENDOR,
			     (int)(trimmed_len(lu->model) > 16 ? 16 : trimmed_len(lu->model)),
			     lu->model, (int)trimmed_len(lu->serial), lu->serial, lu->nsid);
	if (n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	len += desig(&b[len], SCSI_CODESET_ASCII, SCSI_ASSOC_LU | SCSI_DESIG_T10_VENDOR, tmp,
		     (uint32_t)n);
	/* relative target port */
	memset(tmp, 0, 4);
	put_be16(&tmp[2], x->port->rel_port_id);
	len += desig(&b[len], SCSI_PROTO_ISCSI << 4 | SCSI_CODESET_BINARY,
		     SCSI_DESIG_PIV | SCSI_ASSOC_PORT | SCSI_DESIG_RELATIVE_PORT, tmp, 4);
	if (x->port->target_name && *x->port->target_name) {
		/* SCSI name strings: the target device and the target port */
		memset(name, 0, sizeof(name));
		n = (size_t)snprintf(name, sizeof(name), "%.*s", SCSI_NAME_BUF - 1,
				     x->port->target_name);
		len += desig(&b[len], SCSI_PROTO_ISCSI << 4 | SCSI_CODESET_UTF8,
			     SCSI_DESIG_PIV | SCSI_ASSOC_TARGET | SCSI_DESIG_SCSI_NAME, name,
			     (uint32_t)((n + 4) & ~3u));
		memset(name, 0, sizeof(name));
		n = (size_t)snprintf(name, sizeof(name), "%.*s,t,0x%04x", SCSI_NAME_BUF - 1,
				     x->port->target_name, x->port->tpgt);
		len += desig(&b[len], SCSI_PROTO_ISCSI << 4 | SCSI_CODESET_UTF8,
			     SCSI_DESIG_PIV | SCSI_ASSOC_PORT | SCSI_DESIG_SCSI_NAME, name,
			     (uint32_t)((n + 4) & ~3u));
	}
	put_be16(&b[2], (uint16_t)(len - 4));
	return len;
}

static uint32_t inquiry_vpd(struct xctx *x, uint8_t page, uint8_t *b)
{
	const struct scsi_lu *lu = x->lu;
	char serial[64];
	uint32_t len;

	memset(b, 0, 64);
	b[0] = SCSI_PERIPH_DISK;
	b[1] = page;
	switch (page) {
	case SCSI_VPD_SUPPORTED_PAGES:
		memcpy(&b[4], vpd_pages, sizeof(vpd_pages));
		put_be16(&b[2], sizeof(vpd_pages));
		return 4 + sizeof(vpd_pages);
	case SCSI_VPD_UNIT_SERIAL:
		unit_serial(lu, serial, sizeof(serial));
		len = (uint32_t)strlen(serial);
		memcpy(&b[4], serial, len);
		put_be16(&b[2], (uint16_t)len);
		return 4 + len;
	case SCSI_VPD_DEVICE_ID:
		return vpd_device_id(x, b);
	case SCSI_VPD_EXTENDED_INQUIRY:
		put_be16(&b[2], 0x3c);
		b[5] = 0x01;			   /* SIMPSUP */
		b[6] = lu->write_cache ? 0x01 : 0; /* V_SUP: volatile cache */
		b[7] = 0x01;			   /* LUICLR */
		return 64;
	case SCSI_VPD_BLOCK_LIMITS:
		put_be16(&b[2], 0x3c);
		b[4] = 0; /* WSNZ 0: NUMBER OF LOGICAL BLOCKS 0 writes to the end */
		b[5] = (uint8_t)sbc_max_caw_blocks(lu);
		put_be16(&b[6], 1);
		put_be32(&b[8], lu->max_xfer_blocks);
		put_be32(&b[12], lu->max_xfer_blocks);
		if (lu->thin) {
			put_be32(&b[20], lu->max_unmap_blocks);
			put_be32(&b[24], lu->max_unmap_descs);
			put_be32(&b[28], 1);
		}
		put_be64(&b[36], lu->max_ws_blocks);
		return 64;
	case SCSI_VPD_BLOCK_DEVICE_CHARACTERISTICS:
		put_be16(&b[2], 0x3c);
		put_be16(&b[4], 0x0001); /* non-rotating medium */
		return 64;
	case SCSI_VPD_LOGICAL_BLOCK_PROVISIONING:
		put_be16(&b[2], 4);
		if (lu->thin) {
			b[5] = SCSI_LBP_LBPU | SCSI_LBP_LBPWS | SCSI_LBP_LBPWS10 | SCSI_LBP_LBPRZ;
			b[6] = SCSI_PROVISIONING_THIN;
		}
		return 8;
	default:
		return 0;
	}
}

void spc_inquiry(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint32_t len;

	x->plan->alloc_len = get_be16(&c[3]);
	if (!(c[1] & SCSI_INQ_EVPD)) {
		if (c[2]) {
			scsi_plan_invalid_field(x->plan, true, 2, 7);
			return;
		}
		xlate_done_data(x, inquiry_standard(x, x->buf));
		return;
	}
	if (!x->lu) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_LUN_NOT_SUPPORTED);
		return;
	}
	len = inquiry_vpd(x, c[2], x->buf);
	if (!len) {
		scsi_plan_invalid_field(x->plan, true, 2, 7);
		return;
	}
	xlate_done_data(x, len);
}

/* ---- REQUEST SENSE ------------------------------------------------------------------------ */

void spc_request_sense(struct xctx *x)
{
	struct scsi_sense s = { .key = SCSI_SK_NO_SENSE, .asc = SCSI_ASC_NO_ADDITIONAL_SENSE };

	x->plan->alloc_len = x->cdb[4];
	if (!x->lu)
		s.asc = SCSI_ASC_LUN_NOT_SUPPORTED, s.key = SCSI_SK_ILLEGAL_REQUEST;
	xlate_done_data(x, scsi_sense_build(&s, x->cdb[1] & 0x01, x->buf));
}

/* ---- REPORT LUNS -------------------------------------------------------------------------- */

static void lun_encode(uint8_t *out, uint64_t lun)
{
	memset(out, 0, 8);
	if (lun < 256) {
		out[1] = (uint8_t)lun;
	} else {
		out[0] = (uint8_t)(0x40 | ((lun >> 8) & 0x3f));
		out[1] = (uint8_t)lun;
	}
}

void spc_report_luns(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint8_t select = c[2];
	uint32_t len = 8, n = 0;

	x->plan->alloc_len = get_be32(&c[6]);
	if (select > SCSI_REPORT_LUNS_SELECT_ALL) {
		scsi_plan_invalid_field(x->plan, true, 2, 7);
		return;
	}
	if (x->plan->alloc_len < 16) {
		scsi_plan_invalid_field(x->plan, true, 6, 7);
		return;
	}
	memset(x->buf, 0, 8);
	if (select != 0x01) { /* 01h: well known LUs only, of which we have none */
		for (uint32_t i = 0; i < x->port->nluns && len + 8 <= x->buf_len; i++, n++) {
			lun_encode(&x->buf[len], x->port->luns[i]);
			len += 8;
		}
	}
	put_be32(&x->buf[0], n * 8);
	xlate_done_data(x, len);
}

/* ---- MODE SENSE / MODE SELECT --------------------------------------------------------------- */

enum { PAGE_RWER_LEN = 12, PAGE_CACHING_LEN = 20, PAGE_CONTROL_LEN = 12 };

/* One mode page for page control @pc into @b; returns its length or 0 if unknown. */
static uint32_t mode_page(const struct scsi_lu *lu, uint8_t page, uint8_t pc, uint8_t *b)
{
	bool chg = pc == SCSI_MODE_PC_CHANGEABLE, cur = pc == SCSI_MODE_PC_CURRENT;

	switch (page) {
	case SCSI_MODE_PAGE_RW_ERROR_RECOVERY:
		memset(b, 0, PAGE_RWER_LEN);
		b[0] = page;
		b[1] = PAGE_RWER_LEN - 2;
		if (!chg)
			b[2] = 0xc0; /* AWRE, ARRE */
		return PAGE_RWER_LEN;
	case SCSI_MODE_PAGE_CACHING:
		memset(b, 0, PAGE_CACHING_LEN);
		b[0] = page;
		b[1] = PAGE_CACHING_LEN - 2;
		if (!chg && lu->write_cache)
			b[2] = SCSI_MODE_CACHING_WCE;
		return PAGE_CACHING_LEN;
	case SCSI_MODE_PAGE_CONTROL:
		memset(b, 0, PAGE_CONTROL_LEN);
		b[0] = page;
		b[1] = PAGE_CONTROL_LEN - 2;
		if (chg) {
			b[2] = SCSI_MODE_CONTROL_D_SENSE;
			b[4] = SCSI_MODE_CONTROL_SWP;
			return PAGE_CONTROL_LEN;
		}
		if (cur && lu->mode && __atomic_load_n(&lu->mode->d_sense, __ATOMIC_RELAXED))
			b[2] |= SCSI_MODE_CONTROL_D_SENSE;
		b[3] = 0x10; /* QUEUE ALGORITHM MODIFIER: unrestricted reordering */
		if (cur && lu->mode && __atomic_load_n(&lu->mode->swp, __ATOMIC_RELAXED))
			b[4] |= SCSI_MODE_CONTROL_SWP;
		put_be16(&b[8], 0xffff); /* BUSY TIMEOUT PERIOD: unlimited */
		return PAGE_CONTROL_LEN;
	default:
		return 0;
	}
}

static const uint8_t mode_pages[] = {
	SCSI_MODE_PAGE_RW_ERROR_RECOVERY, SCSI_MODE_PAGE_CACHING, SCSI_MODE_PAGE_CONTROL,
};

void spc_mode_sense(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	const struct scsi_lu *lu = x->lu;
	bool ten = c[0] == SCSI_OP_MODE_SENSE10;
	bool dbd = c[1] & 0x08, llbaa = ten && (c[1] & 0x10);
	uint8_t pc = c[2] >> 6, page = c[2] & 0x3f, subpage = c[3];
	uint32_t hdr = ten ? 8 : 4, len, bdl = 0;
	uint8_t *b = x->buf;

	x->plan->alloc_len = ten ? get_be16(&c[7]) : c[4];
	if (pc == SCSI_MODE_PC_SAVED) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_SAVING_PARAMS_NOT_SUPPORTED);
		return;
	}
	if (subpage && !(page == SCSI_MODE_PAGE_ALL && subpage == 0xff)) {
		scsi_plan_invalid_field(x->plan, true, 3, 7);
		return;
	}
	memset(b, 0, hdr + 16);
	if (!dbd) {
		bdl = llbaa ? 16 : 8;
		if (pc != SCSI_MODE_PC_CHANGEABLE) {
			if (llbaa) {
				put_be64(&b[hdr], lu->nblocks);
				put_be32(&b[hdr + 12], lu->block_size);
			} else {
				put_be32(&b[hdr], lu->nblocks > 0xffffffffu ? 0xffffffffu
									   : (uint32_t)lu->nblocks);
				put_be24(&b[hdr + 5], lu->block_size);
			}
		}
	}
	len = hdr + bdl;
	if (page == SCSI_MODE_PAGE_ALL) {
		for (size_t i = 0; i < sizeof(mode_pages); i++)
			len += mode_page(lu, mode_pages[i], pc, &b[len]);
	} else {
		uint32_t n = mode_page(lu, page, pc, &b[len]);

		if (!n) {
			scsi_plan_invalid_field(x->plan, true, 2, 5);
			return;
		}
		len += n;
	}
	if (ten) {
		put_be16(&b[0], (uint16_t)(len - 2));
		b[3] = SCSI_MODE_DSP_DPOFUA | (lu_write_protected(lu) ? SCSI_MODE_DSP_WP : 0);
		b[4] = llbaa ? 0x01 : 0;
		put_be16(&b[6], (uint16_t)bdl);
	} else {
		b[0] = (uint8_t)(len - 1);
		b[2] = SCSI_MODE_DSP_DPOFUA | (lu_write_protected(lu) ? SCSI_MODE_DSP_WP : 0);
		b[3] = (uint8_t)bdl;
	}
	xlate_done_data(x, len);
}

void spc_mode_select(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	bool ten = c[0] == SCSI_OP_MODE_SELECT10;
	uint32_t len = ten ? get_be16(&c[7]) : c[4];

	if (!(c[1] & 0x10)) { /* PF: only standard page format */
		scsi_plan_invalid_field(x->plan, true, 1, 4);
		return;
	}
	if (c[1] & 0x01) { /* SP: nothing is saveable */
		scsi_plan_invalid_field(x->plan, true, 1, 0);
		return;
	}
	if (!len)
		return;
	x->plan->op = SCSI_XOP_MODE_SELECT;
	x->plan->sa = c[0];
	x->plan->dir = SCSI_DIR_OUT;
	x->plan->xfer_len = len;
}

bool spc_mode_select_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *d,
			  uint32_t len)
{
	bool ten = p->sa == SCSI_OP_MODE_SELECT10;
	uint32_t hdr = ten ? 8 : 4, bdl, off;
	bool swp = false, d_sense = false, set_control = false;

	if (len < hdr) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	bdl = ten ? get_be16(&d[6]) : d[3];
	if (hdr + bdl > len) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	if (bdl) { /* one block descriptor, block length unchanged */
		uint32_t bl;

		if (bdl != 8 && bdl != 16) {
			scsi_plan_invalid_field(p, false, ten ? 6 : 3, 7);
			return false;
		}
		bl = bdl == 8 ? get_be24(&d[hdr + 5]) : get_be32(&d[hdr + 12]);
		if (bl && bl != lu->block_size) {
			scsi_plan_invalid_field(p, false, (uint16_t)(hdr + (bdl == 8 ? 5 : 12)), 7);
			return false;
		}
	}
	for (off = hdr + bdl; off < len;) {
		uint8_t page = d[off] & 0x3f, cur[32], chg[32];
		uint32_t plen, n;

		if (d[off] & 0xc0) { /* PS is reserved here; subpages not supported */
			scsi_plan_invalid_field(p, false, (uint16_t)off, 7);
			return false;
		}
		if (off + 2 > len) {
			scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
						  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
			return false;
		}
		plen = (uint32_t)d[off + 1] + 2;
		n = mode_page(lu, page, SCSI_MODE_PC_CURRENT, cur);
		if (!n) {
			scsi_plan_invalid_field(p, false, (uint16_t)off, 5);
			return false;
		}
		if (plen != n) {
			scsi_plan_invalid_field(p, false, (uint16_t)(off + 1), 7);
			return false;
		}
		if (off + plen > len) {
			scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
						  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
			return false;
		}
		mode_page(lu, page, SCSI_MODE_PC_CHANGEABLE, chg);
		for (uint32_t i = 2; i < plen; i++) {
			uint8_t diff = (d[off + i] ^ cur[i]) & (uint8_t)~chg[i];

			if (diff) {
				scsi_plan_invalid_field(p, false, (uint16_t)(off + i), 7);
				return false;
			}
		}
		if (page == SCSI_MODE_PAGE_CONTROL) {
			set_control = true;
			d_sense = d[off + 2] & SCSI_MODE_CONTROL_D_SENSE;
			swp = d[off + 4] & SCSI_MODE_CONTROL_SWP;
		}
		off += plen;
	}
	if (set_control && lu->mode) {
		__atomic_store_n(&lu->mode->d_sense, d_sense, __ATOMIC_RELAXED);
		__atomic_store_n(&lu->mode->swp, swp, __ATOMIC_RELAXED);
	}
	return true;
}

/* ---- REPORT SUPPORTED OPERATION CODES ----------------------------------------------------- */

#define RSOC_TIMEOUTS_LEN 12

static uint32_t timeouts_desc(uint8_t *b)
{
	memset(b, 0, RSOC_TIMEOUTS_LEN);
	put_be16(&b[0], 0x0a);
	put_be32(&b[4], 30);  /* nominal command timeout, seconds */
	put_be32(&b[8], 60);  /* recommended command timeout */
	return RSOC_TIMEOUTS_LEN;
}

/* One command descriptor (SPC-4 6.35.2): @row of @opcode, service action @sa. */
static uint32_t rsoc_descriptor(uint8_t opcode, const struct scsi_cmd_desc *row, bool has_sa,
				uint8_t sa, bool rctd, uint8_t *b)
{
	memset(b, 0, 8);
	b[0] = opcode;
	put_be16(&b[2], has_sa ? sa : 0);
	b[5] = (rctd ? 0x02 : 0) | (has_sa ? 0x01 : 0); /* CTDP, SERVACTV */
	put_be16(&b[6], row->cdb_len);
	if (!rctd)
		return 8;
	return 8 + timeouts_desc(&b[8]);
}

/* REPORTING OPTIONS 000b: every row of the command table, by opcode then service action. */
static uint32_t rsoc_all(struct xctx *x, bool rctd)
{
	uint32_t len = 4, dl = 8 + (rctd ? RSOC_TIMEOUTS_LEN : 0);

	for (unsigned int op = 0; op < 256; op++) {
		const struct scsi_cmd_desc *e = &scsi_cmd_table[op];
		unsigned int nsa = e->sa ? SCSI_SA_COUNT : 1;

		if (!e->cdb_len)
			continue;
		for (unsigned int sa = 0; sa < nsa; sa++) {
			const struct scsi_cmd_desc *r = e->sa ? &e->sa[sa] : e;

			if (!r->cdb_len)
				continue;
			if (len + dl > x->buf_len)
				return len;
			len += rsoc_descriptor((uint8_t)op, r, e->sa != NULL, (uint8_t)sa, rctd,
					       &x->buf[len]);
		}
	}
	return len;
}

void spc_report_opcodes(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	bool rctd = c[2] & 0x80;
	uint8_t opt = c[2] & 0x07, req_op = c[3];
	uint16_t req_sa = get_be16(&c[4]);
	const struct scsi_cmd_desc *d, *op_row;
	uint8_t *b = x->buf;
	uint32_t len;

	x->plan->alloc_len = get_be32(&c[6]);
	if (opt == 0) {
		len = rsoc_all(x, rctd);
		put_be32(&b[0], len - 4);
		xlate_done_data(x, len);
		return;
	}
	if (opt > 3) {
		scsi_plan_invalid_field(x->plan, true, 2, 2);
		return;
	}
	d = scsi_cmd_lookup(req_op, req_sa, &op_row);
	if (op_row && opt == 1 && op_row->sa) {
		scsi_plan_invalid_field(x->plan, true, 3, 7);
		return;
	}
	if (op_row && opt == 2 && !op_row->sa) {
		scsi_plan_invalid_field(x->plan, true, 2, 2);
		return;
	}
	memset(b, 0, 4);
	if (!d) {
		b[1] = 0x01; /* not supported */
		xlate_done_data(x, 4);
		return;
	}
	b[1] = (rctd ? 0x80 : 0) | 0x03;
	put_be16(&b[2], d->cdb_len);
	memcpy(&b[4], d->usage, d->cdb_len);
	if (op_row->sa)
		b[5] = (uint8_t)((b[5] & ~0x1f) | req_sa);
	len = 4 + d->cdb_len;
	if (rctd)
		len += timeouts_desc(&b[len]);
	xlate_done_data(x, len);
}
