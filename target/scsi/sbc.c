// SPDX-License-Identifier: MIT
/*
 * SCSI block commands (SBC-3) after the NVM Express SCSI Translation Reference: READ,
 * WRITE, VERIFY, WRITE AND VERIFY, COMPARE AND WRITE, SYNCHRONIZE CACHE, PRE-FETCH,
 * WRITE SAME, UNMAP, READ CAPACITY, GET LBA STATUS, START STOP UNIT and TEST UNIT READY.
 * Each handler validates its CDB (reserved bits were checked against the command table's
 * usage data before it runs; then fields, then the LBA range) and either finishes the
 * command or plans the NVMe commands scsi_xlate_next() hands out one at a time.
 */
#include <string.h>

#include "common/endian.h"
#include "core/lba_status.h"
#include "scsi_internal.h"

/* A command whose row asks for the write-protect check (WRITE, WRITE AND VERIFY, WRITE
 * SAME, UNMAP, COMPARE AND WRITE) is refused on a write-protected LU; the handlers call this
 * once the CDB's fields are valid, so a bad field is reported first. */
static bool wp_refused(struct xctx *x)
{
	if (!(x->desc->flags & SCSI_CMD_WP_CHECK) || !lu_write_protected(x->lu))
		return false;
	scsi_plan_check_condition(x->plan, SCSI_SK_DATA_PROTECT, SCSI_ASC_WRITE_PROTECTED);
	return true;
}

static bool range_ok(const struct scsi_lu *lu, uint64_t lba, uint64_t n)
{
	return n <= lu->nblocks && lba <= lu->nblocks - n;
}

/* ---- Command handlers ---------------------------------------------------------------------- */

/* Blocks one NVMe data command may move (MDTS and the NLB field). */
uint32_t sbc_cmd_max_blocks(const struct scsi_lu *lu)
{
	uint32_t n = lu->max_cmd_blocks ? lu->max_cmd_blocks : lu->max_xfer_blocks;

	return n < SCSI_NVME_MAX_NLB ? n : SCSI_NVME_MAX_NLB;
}

uint32_t sbc_max_caw_blocks(const struct scsi_lu *lu)
{
	uint32_t n = sbc_cmd_max_blocks(lu);

	if (n > lu->max_xfer_blocks / 2)
		n = lu->max_xfer_blocks / 2;
	if (lu->max_caw_blocks && n > lu->max_caw_blocks)
		n = lu->max_caw_blocks;
	return n > 255 ? 255 : n;
}

/* Common tail of READ/WRITE/VERIFY/WRITE AND VERIFY: protect field, length and range. */
static bool rw_check(struct xctx *x, uint64_t lba, uint32_t tl, uint8_t protect, bool moves_data,
		     int tl_byte)
{
	if (protect) {
		scsi_plan_invalid_field(x->plan, true, 1, 7);
		return false;
	}
	if (moves_data && tl > x->lu->max_xfer_blocks) {
		scsi_plan_invalid_field(x->plan, true, (uint16_t)tl_byte, 7);
		return false;
	}
	if (!range_ok(x->lu, lba, tl)) {
		xlate_lba_out_of_range(x->plan);
		return false;
	}
	return true;
}

static void plan_rw(struct xctx *x, enum scsi_xop op, uint64_t lba, uint32_t tl, bool fua)
{
	struct scsi_plan *p = x->plan;

	if (tl == 0) { /* nothing to do: GOOD */
		p->op = SCSI_XOP_DONE;
		return;
	}
	p->op = op;
	p->lba = p->next_lba = lba;
	p->nblocks = tl;
	p->left = tl;
	p->fua = fua;
	p->dir = op == SCSI_XOP_READ ? SCSI_DIR_IN : SCSI_DIR_OUT;
	p->xfer_len = tl * x->lu->block_size;
}

/* LBA and transfer length of a READ/WRITE(6/10/12/16), by the CDB's group code; @tl_byte
 * is the transfer length's offset for sense field pointers. */
static void rw_fields(const uint8_t *c, uint64_t *lba, uint32_t *tl, int *tl_byte)
{
	switch (c[0] >> 5) {
	case 0: /* 6-byte */
		*lba = get_be24(&c[1]) & 0x1fffff;
		*tl = c[4] ? c[4] : 256;
		*tl_byte = 4;
		break;
	case 5: /* 12-byte */
		*lba = get_be32(&c[2]);
		*tl = get_be32(&c[6]);
		*tl_byte = 6;
		break;
	case 4: /* 16-byte */
		*lba = get_be64(&c[2]);
		*tl = get_be32(&c[10]);
		*tl_byte = 10;
		break;
	default: /* 10-byte */
		*lba = get_be32(&c[2]);
		*tl = get_be16(&c[7]);
		*tl_byte = 7;
		break;
	}
}

void sbc_read(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba;
	uint32_t tl;
	int tl_byte;

	rw_fields(c, &lba, &tl, &tl_byte);
	if (!rw_check(x, lba, tl, c[0] == SCSI_OP_READ6 ? 0 : c[1] >> 5, true, tl_byte))
		return;
	plan_rw(x, SCSI_XOP_READ, lba, tl, c[0] != SCSI_OP_READ6 && (c[1] & 0x08));
	x->plan->dir = SCSI_DIR_IN;
	x->plan->xfer_len = tl * x->lu->block_size;
}

void sbc_write(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba;
	uint32_t tl;
	int tl_byte;

	rw_fields(c, &lba, &tl, &tl_byte);
	if (!rw_check(x, lba, tl, c[0] == SCSI_OP_WRITE6 ? 0 : c[1] >> 5, true, tl_byte))
		return;
	if (wp_refused(x))
		return;
	plan_rw(x, SCSI_XOP_WRITE, lba, tl, c[0] != SCSI_OP_WRITE6 && (c[1] & 0x08));
	x->plan->dir = SCSI_DIR_OUT;
	x->plan->xfer_len = tl * x->lu->block_size;
}

/* VERIFY and WRITE AND VERIFY (10/12/16): BYTCHK in bits 2:1 of byte 1. */
void sbc_verify(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	bool write = c[0] == SCSI_OP_WRITE_VERIFY10 || c[0] == SCSI_OP_WRITE_VERIFY12 ||
		     c[0] == SCSI_OP_WRITE_VERIFY16;
	uint8_t bytchk = (c[1] >> 1) & 3;
	uint64_t lba;
	uint32_t tl;
	int tl_byte;
	bool data;

	switch (c[0]) {
	case SCSI_OP_VERIFY10:
	case SCSI_OP_WRITE_VERIFY10:
		lba = get_be32(&c[2]);
		tl = get_be16(&c[7]);
		tl_byte = 7;
		break;
	case SCSI_OP_VERIFY12:
	case SCSI_OP_WRITE_VERIFY12:
		lba = get_be32(&c[2]);
		tl = get_be32(&c[6]);
		tl_byte = 6;
		break;
	default:
		lba = get_be64(&c[2]);
		tl = get_be32(&c[10]);
		tl_byte = 10;
		break;
	}
	/* BYTCHK 10b is reserved; WRITE AND VERIFY only knows 00b and 01b. */
	if (bytchk == 2 || (write && bytchk == 3)) {
		scsi_plan_invalid_field(x->plan, true, 1, 2);
		return;
	}
	data = write || bytchk != 0;
	if (!rw_check(x, lba, tl, c[1] >> 5, data, tl_byte))
		return;
	if (wp_refused(x))
		return;
	if (write) {
		plan_rw(x, SCSI_XOP_WRITE_VERIFY, lba, tl, true);
		x->plan->bytchk = bytchk;
		return;
	}
	if (bytchk == 0) {
		if (!x->lu->verify_cmd) {
			scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
						  SCSI_ASC_INVALID_OPCODE);
			return;
		}
		plan_rw(x, SCSI_XOP_VERIFY, lba, tl, false);
		x->plan->dir = SCSI_DIR_NONE;
		x->plan->xfer_len = 0;
		return;
	}
	plan_rw(x, SCSI_XOP_COMPARE, lba, tl, false);
	x->plan->bytchk = bytchk;
	x->plan->dir = SCSI_DIR_OUT;
	/* BYTCHK 11b: one block of data-out compared with every block of the range */
	if (tl)
		x->plan->xfer_len = (bytchk == 3 ? 1 : tl) * x->lu->block_size;
}

void sbc_compare_and_write(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba = get_be64(&c[2]);
	uint32_t n = c[13];

	if (!x->lu->compare_write) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_INVALID_OPCODE);
		return;
	}
	if (c[1] >> 5) {
		scsi_plan_invalid_field(x->plan, true, 1, 7);
		return;
	}
	if (n > sbc_max_caw_blocks(x->lu)) {
		scsi_plan_invalid_field(x->plan, true, 13, 7);
		return;
	}
	if (!range_ok(x->lu, lba, n)) {
		xlate_lba_out_of_range(x->plan);
		return;
	}
	if (wp_refused(x))
		return;
	plan_rw(x, SCSI_XOP_COMPARE_AND_WRITE, lba, n, c[1] & 0x08);
	if (n) {
		x->plan->dir = SCSI_DIR_OUT;
		x->plan->xfer_len = 2 * n * x->lu->block_size;
	}
}

void sbc_sync_cache(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba;
	uint32_t n;

	if (c[0] == SCSI_OP_SYNC_CACHE10) {
		lba = get_be32(&c[2]);
		n = get_be16(&c[7]);
	} else {
		lba = get_be64(&c[2]);
		n = get_be32(&c[10]);
	}
	/* NUMBER OF LOGICAL BLOCKS 0: through the last LBA */
	if (lba > x->lu->nblocks || (n && !range_ok(x->lu, lba, n))) {
		xlate_lba_out_of_range(x->plan);
		return;
	}
	x->plan->op = SCSI_XOP_FLUSH;
	x->plan->step = 0;
}

void sbc_prefetch(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba;
	uint32_t n;

	if (c[0] == SCSI_OP_PRE_FETCH10) {
		lba = get_be32(&c[2]);
		n = get_be16(&c[7]);
	} else {
		lba = get_be64(&c[2]);
		n = get_be32(&c[10]);
	}
	if (!range_ok(x->lu, lba, n)) {
		xlate_lba_out_of_range(x->plan);
		return;
	}
	/* Data is served from memory or the page cache: nothing to stage. GOOD means the
	 * cache could not guarantee to hold the range (SBC-3 5.9), which is always true. */
	x->plan->op = SCSI_XOP_DONE;
}

void sbc_write_same(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	struct scsi_plan *p = x->plan;
	bool ws16 = c[0] == SCSI_OP_WRITE_SAME16;
	uint64_t lba = ws16 ? get_be64(&c[2]) : get_be32(&c[2]);
	uint32_t n = ws16 ? get_be32(&c[10]) : get_be16(&c[7]);
	bool unmap = c[1] & 0x08, anchor = c[1] & 0x10, ndob = ws16 && (c[1] & 0x01);

	if (c[1] >> 5) {
		scsi_plan_invalid_field(p, true, 1, 7);
		return;
	}
	if (c[1] & 0x06) { /* PBDATA/LBDATA (obsolete): not supported */
		scsi_plan_invalid_field(p, true, 1, (c[1] & 0x04) ? 2 : 1);
		return;
	}
	if (anchor) { /* ANC_SUP is 0 */
		scsi_plan_invalid_field(p, true, 1, 4);
		return;
	}
	if (unmap && !x->lu->thin) {
		scsi_plan_invalid_field(p, true, 1, 3);
		return;
	}
	if (lba > x->lu->nblocks) {
		xlate_lba_out_of_range(p);
		return;
	}
	if (n == 0) { /* WSNZ is 0: through the last logical block */
		uint64_t rest = x->lu->nblocks - lba;

		if (rest > x->lu->max_ws_blocks) {
			scsi_plan_invalid_field(p, true, ws16 ? 10 : 7, 7);
			return;
		}
		n = (uint32_t)rest;
		if (!n) {
			p->op = SCSI_XOP_DONE;
			return;
		}
	}
	if (n > x->lu->max_ws_blocks) {
		scsi_plan_invalid_field(p, true, ws16 ? 10 : 7, 7);
		return;
	}
	if (!range_ok(x->lu, lba, n)) {
		xlate_lba_out_of_range(p);
		return;
	}
	if (wp_refused(x))
		return;
	p->op = SCSI_XOP_WRITE_SAME;
	p->lba = p->next_lba = lba;
	p->nblocks = n;
	p->left = n;
	p->unmap = unmap;
	p->ndob = ndob;
	p->zero_data = ndob;
	if (!ndob) {
		p->dir = SCSI_DIR_OUT;
		p->xfer_len = x->lu->block_size;
	}
}

void sbc_unmap(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint32_t len = get_be16(&c[7]);

	if (!x->lu->thin) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_INVALID_OPCODE);
		return;
	}
	if (c[1] & 0x01) { /* ANCHOR */
		scsi_plan_invalid_field(x->plan, true, 1, 0);
		return;
	}
	if (wp_refused(x))
		return;
	if (len == 0) {
		x->plan->op = SCSI_XOP_DONE;
		return;
	}
	if (len < 8) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return;
	}
	x->plan->op = SCSI_XOP_UNMAP;
	x->plan->dir = SCSI_DIR_OUT;
	x->plan->xfer_len = len;
}

void sbc_read_capacity10(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t last = x->lu->nblocks - 1;

	if (!(c[8] & 0x01) && get_be32(&c[2])) { /* LBA without PMI */
		scsi_plan_invalid_field(x->plan, true, 2, 7);
		return;
	}
	put_be32(&x->buf[0], last > SCSI_READ_CAPACITY10_MAX_LBA ? SCSI_READ_CAPACITY10_MAX_LBA
								 : (uint32_t)last);
	put_be32(&x->buf[4], x->lu->block_size);
	x->plan->alloc_len = 8;
	xlate_done_data(x, 8);
}

void sbc_read_capacity16(struct xctx *x)
{
	uint8_t *b = x->buf;

	x->plan->alloc_len = get_be32(&x->cdb[10]);
	memset(b, 0, 32);
	put_be64(&b[0], x->lu->nblocks - 1);
	put_be32(&b[8], x->lu->block_size);
	b[13] = x->lu->phys_exp & 0x0f; /* LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	if (x->lu->thin)
		b[14] = SCSI_RC16_LBPME | SCSI_RC16_LBPRZ;
	xlate_done_data(x, 32);
}

void sbc_get_lba_status(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba = get_be64(&c[2]);

	x->plan->alloc_len = get_be32(&c[10]);
	if (!x->lu->lba_status) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_INVALID_OPCODE);
		return;
	}
	if (lba >= x->lu->nblocks) {
		xlate_lba_out_of_range(x->plan);
		return;
	}
	if (x->plan->alloc_len == 0)
		return;
	x->plan->op = SCSI_XOP_GET_LBA_STATUS;
	x->plan->dir = SCSI_DIR_IN;
	x->plan->lba = lba;
}

void scsi_xlate_lba_status(struct scsi_plan *plan, const struct scsi_lba_extent *ext,
			   unsigned int n, uint8_t *buf, uint32_t buf_len)
{
	uint32_t len = 8;

	memset(buf, 0, 8);
	for (unsigned int i = 0; i < n && len + 16 <= buf_len; i++) {
		uint64_t cnt = ext[i].nblocks > UINT32_MAX ? UINT32_MAX : ext[i].nblocks;

		memset(&buf[len], 0, 16);
		put_be64(&buf[len], ext[i].lba);
		put_be32(&buf[len + 8], (uint32_t)cnt);
		buf[len + 12] = ext[i].deallocated ? SCSI_LBA_STATUS_DEALLOCATED
						   : SCSI_LBA_STATUS_MAPPED;
		len += 16;
	}
	put_be32(&buf[0], len - 4);
	plan->op = SCSI_XOP_DONE;
	plan->dir = SCSI_DIR_IN;
	plan->in_len = len < plan->alloc_len ? len : plan->alloc_len;
}

void sbc_start_stop(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint8_t pc = c[4] >> 4;

	switch (pc) {
	case 0x0:
	case 0x1:
	case 0x2:
	case 0x3:
	case 0x7:
	case 0xa:
	case 0xb:
		break;
	default:
		scsi_plan_invalid_field(x->plan, true, 4, 7);
		return;
	}
	/* Medium is not removable: no load/eject. */
	if (pc == 0 && (c[4] & 0x02)) {
		scsi_plan_invalid_field(x->plan, true, 4, 1);
		return;
	}
	x->plan->op = SCSI_XOP_DONE;
}

void sbc_test_unit_ready(struct xctx *x)
{
	x->plan->op = SCSI_XOP_DONE;
}

/* ---- Data-out ------------------------------------------------------------------------------ */

bool sbc_unmap_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *d, uint32_t len,
		    uint8_t *scratch, uint32_t scratch_len)
{
	uint32_t bddl, n, ndsm = 0;
	uint64_t total = 0;

	if (len < 8) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	bddl = get_be16(&d[2]);
	if (bddl > len - 8)
		bddl = len - 8;
	n = bddl / 16;
	if (n > lu->max_unmap_descs || n * 16u > scratch_len) {
		scsi_plan_invalid_field(p, false, 2, 7);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *desc = &d[8 + 16 * i];
		uint64_t lba = get_be64(desc);
		uint32_t cnt = get_be32(desc + 8);

		if (!range_ok(lu, lba, cnt)) {
			xlate_lba_out_of_range(p);
			return false;
		}
		total += cnt;
		if (cnt == 0)
			continue;
		put_le32(&scratch[16 * ndsm], 0);
		put_le32(&scratch[16 * ndsm + 4], cnt);
		put_le64(&scratch[16 * ndsm + 8], lba);
		ndsm++;
	}
	if (total > lu->max_unmap_blocks) {
		scsi_plan_invalid_field(p, false, 8, 7);
		return false;
	}
	p->ndsm = ndsm;
	if (!ndsm)
		p->op = SCSI_XOP_DONE;
	return ndsm != 0;
}

/* WRITE SAME: the one block of data-out; an all-zero block becomes Write Zeroes. */
bool sbc_write_same_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *data,
			 uint32_t len)
{
	bool zero = true;

	if (len < lu->block_size) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	for (uint32_t i = 0; i < lu->block_size && zero; i++)
		zero = data[i] == 0;
	p->zero_data = zero;
	return true;
}

/* GET LBA STATUS from the Get LBA Allocation Status descriptor list in @d (lba_status.h). */
void sbc_lba_status_finish(struct scsi_plan *p, uint8_t *buf, uint32_t buf_len, const uint8_t *d,
			   uint32_t len)
{
	struct scsi_lba_extent ext[64];
	uint32_t n, max = (len - NVMF_LBA_STATUS_HDR) / NVMF_LBA_STATUS_DESC;
	uint8_t cmpc;

	nvmf_lba_status_get_hdr(d, &n, &cmpc);

	if (n > max)
		n = max;
	if (n > sizeof(ext) / sizeof(ext[0]))
		n = sizeof(ext) / sizeof(ext[0]);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = d + NVMF_LBA_STATUS_HDR + i * NVMF_LBA_STATUS_DESC;
		uint32_t nlb;
		uint8_t status;

		nvmf_lba_status_get_desc(e, &ext[i].lba, &nlb, &status);
		ext[i].nblocks = nlb;
		ext[i].deallocated = status & NVMF_LBA_STATUS_DEALLOCATED;
	}
	scsi_xlate_lba_status(p, ext, n, buf, buf_len);
}
