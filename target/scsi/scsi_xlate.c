// SPDX-License-Identifier: MIT
/*
 * SCSI block commands to NVMe commands, and NVMe status to SCSI sense, after the NVM Express
 * SCSI Translation Reference. Each handler validates its CDB (reserved bits through the
 * command table's usage data, then fields, then the LBA range) and either finishes the
 * command or plans the NVMe commands scsi_xlate_next() hands out one at a time.
 */
#include "scsi_xlate.h"

#include <string.h>

#include "common/endian.h"
#include "core/lba_status.h"
#include "scsi_internal.h"

/* ---- Outcomes ---------------------------------------------------------------------------- */

void scsi_plan_check_condition(struct scsi_plan *plan, uint8_t key, uint16_t asc)
{
	plan->op = SCSI_XOP_DONE;
	plan->status = SCSI_STATUS_CHECK_CONDITION;
	memset(&plan->sense, 0, sizeof(plan->sense));
	plan->sense.key = key;
	plan->sense.asc = asc;
	plan->in_len = 0;
}

void scsi_plan_invalid_field(struct scsi_plan *plan, bool in_cdb, uint16_t byte, int bit)
{
	scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST,
				  in_cdb ? SCSI_ASC_INVALID_FIELD_IN_CDB
					 : SCSI_ASC_INVALID_FIELD_IN_PARAM_LIST);
	plan->sense.sks_valid = true;
	plan->sense.sks[0] = SCSI_SENSE_SKSV | (in_cdb ? SCSI_SENSE_SKS_CD : 0);
	if (bit >= 0)
		plan->sense.sks[0] |= SCSI_SENSE_SKS_BPV | (uint8_t)(bit & 7);
	put_be16(&plan->sense.sks[1], byte);
}

void xlate_lba_out_of_range(struct scsi_plan *plan)
{
	scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LBA_OUT_OF_RANGE);
}

static void write_protected(struct scsi_plan *plan)
{
	scsi_plan_check_condition(plan, SCSI_SK_DATA_PROTECT, SCSI_ASC_WRITE_PROTECTED);
}

static bool range_ok(const struct scsi_lu *lu, uint64_t lba, uint64_t n)
{
	return n <= lu->nblocks && lba <= lu->nblocks - n;
}

static bool lu_write_protected(const struct scsi_lu *lu)
{
	return lu->read_only || (lu->mode && __atomic_load_n(&lu->mode->swp, __ATOMIC_RELAXED));
}

uint32_t scsi_sense_build(const struct scsi_sense *s, bool descriptor, uint8_t *out)
{
	if (descriptor) {
		uint32_t len = 8;

		memset(out, 0, SCSI_SENSE_MAX);
		out[0] = 0x72;
		out[1] = s->key;
		out[2] = (uint8_t)(s->asc >> 8);
		out[3] = (uint8_t)s->asc;
		if (s->info_valid) { /* information descriptor */
			out[len] = 0x00;
			out[len + 1] = 0x0a;
			out[len + 2] = 0x80;
			put_be64(&out[len + 4], s->info);
			len += 12;
		}
		if (s->sks_valid) { /* sense key specific descriptor */
			out[len] = 0x02;
			out[len + 1] = 0x06;
			memcpy(&out[len + 4], s->sks, 3);
			len += 8;
		}
		out[7] = (uint8_t)(len - 8);
		return len;
	}
	memset(out, 0, SCSI_SENSE_FIXED_LEN);
	out[0] = SCSI_SENSE_FIXED_CURRENT | (s->info_valid ? SCSI_SENSE_FIXED_VALID : 0);
	out[2] = s->key;
	if (s->info_valid)
		put_be32(&out[3], (uint32_t)s->info);
	out[7] = SCSI_SENSE_FIXED_LEN - 8;
	out[12] = (uint8_t)(s->asc >> 8);
	out[13] = (uint8_t)s->asc;
	if (s->sks_valid)
		memcpy(&out[15], s->sks, 3);
	return SCSI_SENSE_FIXED_LEN;
}

/* ---- NVMe status -> SCSI (Translation Reference, status code mapping) -------------------- */

struct status_map {
	uint8_t sct, sc;
	uint8_t status, key;
	uint16_t asc;
};

static const struct status_map status_maps[] = {
	{ NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE },
	{ NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB },
	{ NVME_SCT_GENERIC, NVME_SC_CID_CONFLICT, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB },
	{ NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_ABORTED_POWER_LOSS, SCSI_STATUS_TASK_ABORTED,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_WARNING_POWER_LOSS },
	{ NVME_SCT_GENERIC, NVME_SC_INTERNAL, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_HARDWARE_ERROR, SCSI_ASC_INTERNAL_TARGET_FAILURE },
	{ NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED, SCSI_STATUS_TASK_ABORTED,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, SCSI_STATUS_TASK_ABORTED,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED, SCSI_STATUS_TASK_ABORTED,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_ABORTED_MISSING_FUSED, SCSI_STATUS_TASK_ABORTED,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_ACCESS_DENIED_INVALID_LU },
	{ NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASCQ(0x2c, 0x00) },
	{ NVME_SCT_GENERIC, NVME_SC_NS_WRITE_PROTECTED, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_DATA_PROTECT, SCSI_ASC_WRITE_PROTECTED },
	{ NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LBA_OUT_OF_RANGE },
	{ NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_NOT_READY, SCSI_ASC_LUN_NOT_READY },
	{ NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT, SCSI_STATUS_RESERVATION_CONFLICT,
	  SCSI_SK_NO_SENSE, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_FORMAT_IN_PROGRESS, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_NOT_READY, SCSI_ASC_LUN_NOT_READY_FORMAT },
	{ NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONFLICTING_ATTRIBUTES,
	  SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB },
	{ NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_PROTECTION_INFO,
	  SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB },
	{ NVME_SCT_COMMAND_SPECIFIC, NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE,
	  SCSI_STATUS_CHECK_CONDITION, SCSI_SK_DATA_PROTECT, SCSI_ASC_WRITE_PROTECTED },
	{ NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, SCSI_ASC_WRITE_FAULT },
	{ NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, SCSI_ASC_UNRECOVERED_READ_ERROR },
	{ NVME_SCT_MEDIA, NVME_SC_GUARD_CHECK_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_GUARD_CHECK_FAILED },
	{ NVME_SCT_MEDIA, NVME_SC_APPTAG_CHECK_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_APPTAG_CHECK_FAILED },
	{ NVME_SCT_MEDIA, NVME_SC_REFTAG_CHECK_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_REFTAG_CHECK_FAILED },
	{ NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MISCOMPARE, SCSI_ASC_MISCOMPARE_DURING_VERIFY },
	{ NVME_SCT_MEDIA, NVME_SC_ACCESS_DENIED, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_ACCESS_DENIED_NO_ACCESS_RIGHTS },
	{ NVME_SCT_MEDIA, NVME_SC_DEALLOCATED_OR_UNWRITTEN, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, SCSI_ASC_UNRECOVERED_READ_ERROR },
};

void scsi_xlate_status(uint16_t nvme_status, uint8_t *status, struct scsi_sense *sense)
{
	uint8_t sct = NVME_STATUS_SCT(nvme_status), sc = NVME_STATUS_SC(nvme_status);

	memset(sense, 0, sizeof(*sense));
	if (sct == NVME_SCT_GENERIC && sc == NVME_SC_SUCCESS) {
		*status = SCSI_STATUS_GOOD;
		return;
	}
	for (size_t i = 0; i < sizeof(status_maps) / sizeof(status_maps[0]); i++) {
		if (status_maps[i].sct == sct && status_maps[i].sc == sc) {
			*status = status_maps[i].status;
			sense->key = status_maps[i].key;
			sense->asc = status_maps[i].asc;
			return;
		}
	}
	/* Anything else: path errors, vendor codes, unexpected command-specific codes. */
	*status = SCSI_STATUS_CHECK_CONDITION;
	if (sct == NVME_SCT_PATH) {
		sense->key = SCSI_SK_ABORTED_COMMAND;
		sense->asc = SCSI_ASC_NO_ADDITIONAL_SENSE;
	} else if (sct == NVME_SCT_COMMAND_SPECIFIC || sct == NVME_SCT_GENERIC) {
		sense->key = SCSI_SK_ILLEGAL_REQUEST;
		sense->asc = SCSI_ASC_INVALID_FIELD_IN_CDB;
	} else {
		sense->key = SCSI_SK_HARDWARE_ERROR;
		sense->asc = SCSI_ASC_INTERNAL_TARGET_FAILURE;
	}
}

/* ---- Block command handlers --------------------------------------------------------------- */

/* Blocks one NVMe data command may move (MDTS and the NLB field). */
static uint32_t cmd_max_blocks(const struct scsi_lu *lu)
{
	uint32_t n = lu->max_cmd_blocks ? lu->max_cmd_blocks : lu->max_xfer_blocks;

	return n < SCSI_NVME_MAX_NLB ? n : SCSI_NVME_MAX_NLB;
}


uint32_t sbc_max_caw_blocks(const struct scsi_lu *lu)
{
	uint32_t n = cmd_max_blocks(lu);

	if (n > lu->max_xfer_blocks / 2)
		n = lu->max_xfer_blocks / 2;
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

static void sbc_read(struct xctx *x)
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

static void sbc_write(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba;
	uint32_t tl;
	int tl_byte;

	rw_fields(c, &lba, &tl, &tl_byte);
	if (!rw_check(x, lba, tl, c[0] == SCSI_OP_WRITE6 ? 0 : c[1] >> 5, true, tl_byte))
		return;
	if (lu_write_protected(x->lu)) {
		write_protected(x->plan);
		return;
	}
	plan_rw(x, SCSI_XOP_WRITE, lba, tl, c[0] != SCSI_OP_WRITE6 && (c[1] & 0x08));
	x->plan->dir = SCSI_DIR_OUT;
	x->plan->xfer_len = tl * x->lu->block_size;
}

/* VERIFY and WRITE AND VERIFY (10/12/16): BYTCHK in bits 2:1 of byte 1. */
static void sbc_verify(struct xctx *x)
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
	if (write && lu_write_protected(x->lu)) {
		write_protected(x->plan);
		return;
	}
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

static void sbc_compare_and_write(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba = get_be64(&c[2]);
	uint32_t n = c[13];

	if (!x->lu->compare_write) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
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
	if (lu_write_protected(x->lu)) {
		write_protected(x->plan);
		return;
	}
	plan_rw(x, SCSI_XOP_COMPARE_AND_WRITE, lba, n, c[1] & 0x08);
	if (n) {
		x->plan->dir = SCSI_DIR_OUT;
		x->plan->xfer_len = 2 * n * x->lu->block_size;
	}
}

static void sbc_sync_cache(struct xctx *x)
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

static void sbc_prefetch(struct xctx *x)
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

static void sbc_write_same(struct xctx *x)
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
	if (lu_write_protected(x->lu)) {
		write_protected(p);
		return;
	}
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

static void sbc_unmap(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint32_t len = get_be16(&c[7]);

	if (!x->lu->thin) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	if (c[1] & 0x01) { /* ANCHOR */
		scsi_plan_invalid_field(x->plan, true, 1, 0);
		return;
	}
	if (lu_write_protected(x->lu)) {
		write_protected(x->plan);
		return;
	}
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

static void sbc_read_capacity10(struct xctx *x)
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

static void sbc_read_capacity16(struct xctx *x)
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

static void sbc_get_lba_status(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint64_t lba = get_be64(&c[2]);

	x->plan->alloc_len = get_be32(&c[10]);
	if (!x->lu->lba_status) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
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

static void sbc_start_stop(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	uint8_t pc = c[4] >> 4;

	switch (pc) {
	case 0x0: case 0x1: case 0x2: case 0x3: case 0x7: case 0xa: case 0xb:
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

static void sbc_test_unit_ready(struct xctx *x)
{
	x->plan->op = SCSI_XOP_DONE;
}

/* ---- Data-out ------------------------------------------------------------------------------ */

static bool unmap_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *d,
		       uint32_t len, uint8_t *scratch, uint32_t scratch_len)
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

bool scsi_xlate_data_out(const struct scsi_lu *lu, struct scsi_plan *p, uint8_t *data,
			 uint32_t len, uint8_t *scratch, uint32_t scratch_len)
{
	switch (p->op) {
	case SCSI_XOP_UNMAP:
		return unmap_data(lu, p, data, len, scratch, scratch_len);
	case SCSI_XOP_PR_OUT:
		return spc_pr_out_data(p, data, len, scratch);
	case SCSI_XOP_MODE_SELECT:
		spc_mode_select_data(lu, p, data, len);
		p->op = SCSI_XOP_DONE;
		return false;
	case SCSI_XOP_WRITE_SAME: {
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
	default:
		return p->op != SCSI_XOP_DONE;
	}
}

/* ---- NVMe commands --------------------------------------------------------------------------- */

void xlate_nvme_cmd_init(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid, uint32_t len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	put_le32(&cmd->nsid, nsid);
	cmd->flags = NVME_CMD_PSDT_SGL_MPTR_CONTIG << NVME_CMD_PSDT_SHIFT;
	if (len) {
		put_le32(cmd->dptr.sgl1.length, len);
		cmd->dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	}
}

static void nvme_rw(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid, uint64_t lba, uint32_t nlb,
		    bool fua, uint32_t len)
{
	xlate_nvme_cmd_init(cmd, opc, nsid, len);
	put_le64(&cmd->cdw10, lba);
	put_le32(&cmd->cdw12, (nlb - 1) | (fua ? NVME_RW_FUA : 0));
}

void xlate_io_ref(struct scsi_nvme_io *io, enum scsi_buf buf, uint32_t off, uint32_t len)
{
	io->buf = buf;
	io->off = off;
	io->len = len;
	io->fused_next = false;
}

/* Blocks for the next chunk of a multi-command range. */
static uint32_t chunk(const struct scsi_plan *p, uint32_t max)
{
	return p->left < max ? (uint32_t)p->left : max;
}

bool scsi_xlate_next(const struct scsi_lu *lu, struct scsi_plan *p, uint32_t buf_len,
		     uint8_t *scratch, uint32_t scratch_len, struct nvme_cmd *cmd,
		     struct scsi_nvme_io *io)
{
	uint32_t bs = lu->block_size, n, pat = buf_len / bs;

	switch (p->op) {
	case SCSI_XOP_READ:
	case SCSI_XOP_WRITE:
		if (!p->left)
			return false;
		n = chunk(p, cmd_max_blocks(lu));
		nvme_rw(cmd, p->op == SCSI_XOP_READ ? NVME_OPC_READ : NVME_OPC_WRITE, lu->nsid,
			p->next_lba, n, p->fua, n * bs);
		xlate_io_ref(io, SCSI_BUF_DATA, p->data_off, n * bs);
		break;
	case SCSI_XOP_COMPARE:
		if (!p->left)
			return false;
		if (p->bytchk == 3) { /* the one block, replicated, against each chunk */
			n = chunk(p, pat < cmd_max_blocks(lu) ? pat : cmd_max_blocks(lu));
			nvme_rw(cmd, NVME_OPC_COMPARE, lu->nsid, p->next_lba, n, false, n * bs);
			xlate_io_ref(io, SCSI_BUF_DATA, 0, n * bs);
			break;
		}
		n = chunk(p, cmd_max_blocks(lu));
		nvme_rw(cmd, NVME_OPC_COMPARE, lu->nsid, p->next_lba, n, false, n * bs);
		xlate_io_ref(io, SCSI_BUF_DATA, p->data_off, n * bs);
		break;
	case SCSI_XOP_VERIFY:
		if (!p->left)
			return false;
		n = chunk(p, SCSI_NVME_MAX_NLB);
		nvme_rw(cmd, NVME_OPC_VERIFY, lu->nsid, p->next_lba, n, false, 0);
		xlate_io_ref(io, SCSI_BUF_NONE, 0, 0);
		break;
	case SCSI_XOP_WRITE_VERIFY:
		/* step 0: Writes (FUA) of the data; step 1: Verify (or Compare) of the range */
		if (!p->left && p->step == 0) {
			p->step = 1;
			p->next_lba = p->lba;
			p->left = p->nblocks;
			p->data_off = 0;
		}
		if (!p->left || (p->step == 1 && !p->bytchk && !lu->verify_cmd))
			return false;
		if (p->step == 0) {
			n = chunk(p, cmd_max_blocks(lu));
			nvme_rw(cmd, NVME_OPC_WRITE, lu->nsid, p->next_lba, n, true, n * bs);
			xlate_io_ref(io, SCSI_BUF_DATA, p->data_off, n * bs);
		} else if (p->bytchk) {
			n = chunk(p, cmd_max_blocks(lu));
			nvme_rw(cmd, NVME_OPC_COMPARE, lu->nsid, p->next_lba, n, false, n * bs);
			xlate_io_ref(io, SCSI_BUF_DATA, p->data_off, n * bs);
		} else {
			n = chunk(p, SCSI_NVME_MAX_NLB);
			nvme_rw(cmd, NVME_OPC_VERIFY, lu->nsid, p->next_lba, n, false, 0);
			xlate_io_ref(io, SCSI_BUF_NONE, 0, 0);
		}
		break;
	case SCSI_XOP_COMPARE_AND_WRITE:
		/* a fused pair: Compare (first half of the data), then Write (second half) */
		if (p->step > 1)
			return false;
		n = p->nblocks;
		if (p->step == 0) {
			nvme_rw(cmd, NVME_OPC_COMPARE, lu->nsid, p->lba, n, false, n * bs);
			cmd->flags |= NVME_CMD_FUSE_FIRST;
			xlate_io_ref(io, SCSI_BUF_DATA, 0, n * bs);
			io->fused_next = true;
		} else {
			nvme_rw(cmd, NVME_OPC_WRITE, lu->nsid, p->lba, n, p->fua, n * bs);
			cmd->flags |= NVME_CMD_FUSE_SECOND;
			xlate_io_ref(io, SCSI_BUF_DATA, n * bs, n * bs);
		}
		p->step++;
		return true;
	case SCSI_XOP_FLUSH:
		if (p->step++)
			return false;
		xlate_nvme_cmd_init(cmd, NVME_OPC_FLUSH, lu->nsid, 0);
		xlate_io_ref(io, SCSI_BUF_NONE, 0, 0);
		return true;
	case SCSI_XOP_WRITE_SAME:
		if (!p->left)
			return false;
		if (p->unmap) {
			/* deallocate the range: one DSM range (at most 2^32 - 1 blocks) */
			n = chunk(p, UINT32_MAX);
			memset(scratch, 0, sizeof(struct nvme_dsm_range));
			put_le32(&scratch[4], n);
			put_le64(&scratch[8], p->next_lba);
			xlate_nvme_cmd_init(cmd, NVME_OPC_DATASET_MANAGEMENT, lu->nsid,
				      sizeof(struct nvme_dsm_range));
			put_le32(&cmd->cdw10, 0);
			put_le32(&cmd->cdw11, NVME_DSM_ATTR_AD);
			xlate_io_ref(io, SCSI_BUF_SCRATCH, 0, sizeof(struct nvme_dsm_range));
		} else if (p->zero_data && lu->write_zeroes) {
			n = chunk(p, SCSI_NVME_MAX_NLB);
			nvme_rw(cmd, NVME_OPC_WRITE_ZEROES, lu->nsid, p->next_lba, n, false, 0);
			xlate_io_ref(io, SCSI_BUF_NONE, 0, 0);
		} else {
			n = chunk(p, pat < cmd_max_blocks(lu) ? pat : cmd_max_blocks(lu));
			nvme_rw(cmd, NVME_OPC_WRITE, lu->nsid, p->next_lba, n, false, n * bs);
			xlate_io_ref(io, SCSI_BUF_DATA, 0, n * bs);
		}
		break;
	case SCSI_XOP_UNMAP:
		if (p->step++)
			return false;
		xlate_nvme_cmd_init(cmd, NVME_OPC_DATASET_MANAGEMENT, lu->nsid, p->ndsm * 16);
		put_le32(&cmd->cdw10, p->ndsm - 1);
		put_le32(&cmd->cdw11, NVME_DSM_ATTR_AD);
		xlate_io_ref(io, SCSI_BUF_SCRATCH, 0, p->ndsm * 16);
		return true;
	case SCSI_XOP_GET_LBA_STATUS: {
		uint32_t bytes = scratch_len < 4096 ? scratch_len : 4096;
		uint32_t ndesc = (bytes - NVMF_LBA_STATUS_HDR) / NVMF_LBA_STATUS_DESC;

		if (p->step++)
			return false;
		xlate_nvme_cmd_init(cmd, NVMF_OPC_VS_LBA_STATUS, lu->nsid, bytes);
		put_le64(&cmd->cdw10, p->lba);
		put_le32(&cmd->cdw12, ndesc - 1);
		xlate_io_ref(io, SCSI_BUF_SCRATCH, 0, bytes);
		return true;
	}
	case SCSI_XOP_PR_IN:
	case SCSI_XOP_PR_OUT:
		return spc_pr_next(lu, p, scratch_len, cmd, io);
	default:
		return false;
	}
	/* range commands: advance */
	p->next_lba += n;
	p->left -= n;
	if (io->buf == SCSI_BUF_DATA && p->op != SCSI_XOP_WRITE_SAME &&
	    !(p->op == SCSI_XOP_COMPARE && p->bytchk == 3))
		p->data_off += n * bs;
	return true;
}

bool scsi_xlate_nvme_done(struct scsi_plan *p, uint16_t nvme_status)
{
	uint8_t sct = NVME_STATUS_SCT(nvme_status), sc = NVME_STATUS_SC(nvme_status);

	if (sct == NVME_SCT_GENERIC && sc == NVME_SC_SUCCESS)
		return true;
	/* PR OUT REGISTER of an unregistered I_T nexus with both keys zero: nothing to do
	 * (SPC-4 5.14.7), while NVMe reports the Unregister as a conflict. */
	if (p->op == SCSI_XOP_PR_OUT && p->sa == SCSI_PR_OUT_REGISTER && p->lba == 0 &&
	    p->left == 0 && sct == NVME_SCT_GENERIC && sc == NVME_SC_RESERVATION_CONFLICT) {
		p->op = SCSI_XOP_DONE;
		p->status = SCSI_STATUS_GOOD;
		return false;
	}
	/* A Release whose type does not match the reservation */
	if (p->op == SCSI_XOP_PR_OUT && p->sa == SCSI_PR_OUT_RELEASE &&
	    sct == NVME_SCT_GENERIC && sc == NVME_SC_INVALID_FIELD) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_INVALID_RELEASE_OF_PR);
		return false;
	}
	/* A fused Write that did not run because its Compare failed: the Compare status
	 * (already recorded) is the outcome. */
	if (p->op == SCSI_XOP_DONE)
		return false;
	scsi_xlate_status(nvme_status, &p->status, &p->sense);
	p->op = SCSI_XOP_DONE;
	p->in_len = 0;
	return false;
}

/* GET LBA STATUS from the Get LBA Allocation Status descriptors in @d. */
static void lba_status_finish(struct scsi_plan *p, uint8_t *buf, uint32_t buf_len,
			      const uint8_t *d, uint32_t len)
{
	struct scsi_lba_extent ext[64];
	uint32_t n = get_le32(d), max = (len - NVMF_LBA_STATUS_HDR) / NVMF_LBA_STATUS_DESC;

	if (n > max)
		n = max;
	if (n > sizeof(ext) / sizeof(ext[0]))
		n = sizeof(ext) / sizeof(ext[0]);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = d + NVMF_LBA_STATUS_HDR + i * NVMF_LBA_STATUS_DESC;

		ext[i].lba = get_le64(e);
		ext[i].nblocks = get_le32(e + 8);
		ext[i].deallocated = e[12] & NVMF_LBA_STATUS_DEALLOCATED;
	}
	scsi_xlate_lba_status(p, ext, n, buf, buf_len);
}

void scsi_xlate_finish(const struct scsi_port *port, const struct scsi_lu *lu,
		       struct scsi_plan *p, uint8_t *buf, uint32_t buf_len, const uint8_t *scratch,
		       uint32_t scratch_len)
{
	if (p->op == SCSI_XOP_PR_IN && scratch_len >= RESV_REPORT_HDR)
		spc_pr_in_finish(port, p, buf, buf_len, scratch, scratch_len);
	if (p->op == SCSI_XOP_GET_LBA_STATUS && scratch_len >= NVMF_LBA_STATUS_HDR)
		lba_status_finish(p, buf, buf_len, scratch, scratch_len);
	if (p->op == SCSI_XOP_READ)
		p->in_len = p->nblocks * lu->block_size;
	p->op = SCSI_XOP_DONE;
}

/* ---- Command table and dispatch ----------------------------------------------------------- */

#define CTL 0x04 /* CONTROL byte: NACA is the only bit evaluated (and refused when set) */

const struct scsi_cmd_desc scsi_cmd_table[] = {
	{ SCSI_OP_TEST_UNIT_READY, false, 0, 6, true, { 0x00, 0, 0, 0, 0, CTL },
	  sbc_test_unit_ready },
	{ SCSI_OP_REQUEST_SENSE, false, 0, 6, false, { 0x03, 0x01, 0, 0, 0xff, CTL },
	  spc_request_sense },
	{ SCSI_OP_READ6, false, 0, 6, true, { 0x08, 0x1f, 0xff, 0xff, 0xff, CTL }, sbc_read },
	{ SCSI_OP_WRITE6, false, 0, 6, true, { 0x0a, 0x1f, 0xff, 0xff, 0xff, CTL }, sbc_write },
	{ SCSI_OP_INQUIRY, false, 0, 6, false, { 0x12, 0x01, 0xff, 0xff, 0xff, CTL },
	  spc_inquiry },
	{ SCSI_OP_MODE_SELECT6, false, 0, 6, true, { 0x15, 0x11, 0, 0, 0xff, CTL },
	  spc_mode_select },
	{ SCSI_OP_RESERVE6, false, 0, 6, true, { 0x16, 0, 0, 0, 0, CTL }, spc_reserve_release },
	{ SCSI_OP_RELEASE6, false, 0, 6, true, { 0x17, 0, 0, 0, 0, CTL }, spc_reserve_release },
	{ SCSI_OP_MODE_SENSE6, false, 0, 6, true, { 0x1a, 0x08, 0xff, 0xff, 0xff, CTL },
	  spc_mode_sense },
	{ SCSI_OP_START_STOP_UNIT, false, 0, 6, true, { 0x1b, 0x01, 0, 0x0f, 0xf7, CTL },
	  sbc_start_stop },
	{ SCSI_OP_READ_CAPACITY10, false, 0, 10, true,
	  { 0x25, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, CTL }, sbc_read_capacity10 },
	{ SCSI_OP_READ10, false, 0, 10, true,
	  { 0x28, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_read },
	{ SCSI_OP_WRITE10, false, 0, 10, true,
	  { 0x2a, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_write },
	{ SCSI_OP_WRITE_VERIFY10, false, 0, 10, true,
	  { 0x2e, 0xf6, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_verify },
	{ SCSI_OP_VERIFY10, false, 0, 10, true,
	  { 0x2f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_verify },
	{ SCSI_OP_PRE_FETCH10, false, 0, 10, true,
	  { 0x34, 0x02, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_prefetch },
	{ SCSI_OP_SYNC_CACHE10, false, 0, 10, true,
	  { 0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_sync_cache },
	{ SCSI_OP_WRITE_SAME10, false, 0, 10, true,
	  { 0x41, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL }, sbc_write_same },
	{ SCSI_OP_UNMAP, false, 0, 10, true, { 0x42, 0x01, 0, 0, 0, 0, 0x1f, 0xff, 0xff, CTL },
	  sbc_unmap },
	{ SCSI_OP_MODE_SELECT10, false, 0, 10, true, { 0x55, 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, CTL },
	  spc_mode_select },
	{ SCSI_OP_MODE_SENSE10, false, 0, 10, true,
	  { 0x5a, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, CTL }, spc_mode_sense },
	{ SCSI_OP_PERSISTENT_RESERVE_IN, true, SCSI_PR_IN_READ_KEYS, 10, true,
	  { 0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, CTL }, spc_pr_in },
	{ SCSI_OP_PERSISTENT_RESERVE_IN, true, SCSI_PR_IN_READ_RESERVATION, 10, true,
	  { 0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, CTL }, spc_pr_in },
	{ SCSI_OP_PERSISTENT_RESERVE_IN, true, SCSI_PR_IN_REPORT_CAPABILITIES, 10, true,
	  { 0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, CTL }, spc_pr_in },
	{ SCSI_OP_PERSISTENT_RESERVE_IN, true, SCSI_PR_IN_READ_FULL_STATUS, 10, true,
	  { 0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, CTL }, spc_pr_in },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_REGISTER, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_RESERVE, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_RELEASE, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_CLEAR, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_PREEMPT, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_PREEMPT_AND_ABORT, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_PERSISTENT_RESERVE_OUT, true, SCSI_PR_OUT_REGISTER_AND_IGNORE, 10, true,
	  { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, CTL }, spc_pr_out },
	{ SCSI_OP_READ16, false, 0, 16, true,
	  { 0x88, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_read },
	{ SCSI_OP_COMPARE_AND_WRITE, false, 0, 16, true,
	  { 0x89, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0xff, 0x1f,
	    CTL }, sbc_compare_and_write },
	{ SCSI_OP_WRITE16, false, 0, 16, true,
	  { 0x8a, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_write },
	{ SCSI_OP_WRITE_VERIFY16, false, 0, 16, true,
	  { 0x8e, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_verify },
	{ SCSI_OP_VERIFY16, false, 0, 16, true,
	  { 0x8f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_verify },
	{ SCSI_OP_PRE_FETCH16, false, 0, 16, true,
	  { 0x90, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_prefetch },
	{ SCSI_OP_SYNC_CACHE16, false, 0, 16, true,
	  { 0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_sync_cache },
	{ SCSI_OP_WRITE_SAME16, false, 0, 16, true,
	  { 0x93, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x1f, CTL }, sbc_write_same },
	{ SCSI_OP_SERVICE_ACTION_IN16, true, SCSI_SAI_READ_CAPACITY16, 16, true,
	  { 0x9e, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0x01, CTL }, sbc_read_capacity16 },
	{ SCSI_OP_SERVICE_ACTION_IN16, true, SCSI_SAI_GET_LBA_STATUS, 16, true,
	  { 0x9e, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0, CTL }, sbc_get_lba_status },
	{ SCSI_OP_REPORT_LUNS, false, 0, 12, false,
	  { 0xa0, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, CTL }, spc_report_luns },
	{ SCSI_OP_MAINTENANCE_IN, true, SCSI_MI_REPORT_SUPPORTED_OPCODES, 12, false,
	  { 0xa3, 0x1f, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, CTL },
	  spc_report_opcodes },
	{ SCSI_OP_READ12, false, 0, 12, true,
	  { 0xa8, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, CTL }, sbc_read },
	{ SCSI_OP_WRITE12, false, 0, 12, true,
	  { 0xaa, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, CTL }, sbc_write },
	{ SCSI_OP_WRITE_VERIFY12, false, 0, 12, true,
	  { 0xae, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, CTL }, sbc_verify },
	{ SCSI_OP_VERIFY12, false, 0, 12, true,
	  { 0xaf, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, CTL }, sbc_verify },
};
const unsigned int scsi_cmd_table_len = sizeof(scsi_cmd_table) / sizeof(scsi_cmd_table[0]);

static int highest_bit(uint8_t v)
{
	int b = 7;

	while (b > 0 && !(v & (1u << b)))
		b--;
	return b;
}

static uint8_t cdb_len_of(uint8_t opcode)
{
	switch (opcode >> 5) {
	case 0: return 6;
	case 1: case 2: return 10;
	case 4: return 16;
	case 5: return 12;
	default: return 0;
	}
}

void scsi_xlate_cdb(const struct scsi_port *port, const struct scsi_lu *lu, const uint8_t *cdb,
		    size_t cdb_len, struct scsi_plan *plan, uint8_t *buf, uint32_t buf_len)
{
	const struct scsi_cmd_desc *d = NULL, *any_sa = NULL;
	struct xctx x = { port, lu, cdb, plan, buf, buf_len };
	uint8_t len = cdb_len_of(cdb[0]);

	memset(plan, 0, sizeof(*plan));
	plan->op = SCSI_XOP_DONE;
	plan->status = SCSI_STATUS_GOOD;
	if (!len || cdb_len < len) {
		scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	for (unsigned int i = 0; i < scsi_cmd_table_len; i++) {
		const struct scsi_cmd_desc *e = &scsi_cmd_table[i];

		if (e->opcode != cdb[0])
			continue;
		if (!e->has_sa || e->sa == (cdb[1] & 0x1f)) {
			d = e;
			break;
		}
		any_sa = e;
	}
	if (!d && any_sa) {
		/* known opcode, unknown service action: PERSISTENT RESERVE IN/OUT report the
		 * field, the others an unsupported command */
		if (cdb[0] == SCSI_OP_PERSISTENT_RESERVE_IN ||
		    cdb[0] == SCSI_OP_PERSISTENT_RESERVE_OUT) {
			if (!lu)
				goto no_lu;
			scsi_plan_invalid_field(plan, true, 1, 4);
		} else {
			scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST,
						  SCSI_ASC_INVALID_OPCODE);
		}
		return;
	}
	if (!d) {
		scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	if (d->needs_lu && !lu)
		goto no_lu;
	/* reserved bits, then NACA */
	for (uint8_t i = 1; i < d->cdb_len; i++) {
		uint8_t bad = cdb[i] & (uint8_t)~d->usage[i];

		if (i == d->cdb_len - 1)
			bad |= cdb[i] & 0x04;
		if (bad) {
			scsi_plan_invalid_field(plan, true, i, highest_bit(bad));
			return;
		}
	}
	d->handler(&x);
	return;
no_lu:
	scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LUN_NOT_SUPPORTED);
}

void scsi_xlate_replicate(uint8_t *buf, uint32_t buf_len, uint32_t block_size)
{
	for (uint32_t off = block_size; off + block_size <= buf_len; off += block_size)
		memcpy(buf + off, buf, block_size);
}
