// SPDX-License-Identifier: MIT
/*
 * The translation's frame, after the NVM Express SCSI Translation Reference: the command
 * table and CDB dispatch, data-out checks, the NVMe commands of a plan (scsi_xlate_next),
 * folding NVMe completions back, and NVMe status to SCSI sense. The command handlers live
 * in sbc.c (block commands), spc.c (primary commands) and spc_pr.c (reservations).
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
	{ NVME_SCT_GENERIC, NVME_SC_INTERNAL, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_HARDWARE_ERROR,
	  SCSI_ASC_INTERNAL_TARGET_FAILURE },
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
	{ NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_NOT_READY,
	  SCSI_ASC_LUN_NOT_READY },
	{ NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT, SCSI_STATUS_RESERVATION_CONFLICT,
	  SCSI_SK_NO_SENSE, SCSI_ASC_NO_ADDITIONAL_SENSE },
	{ NVME_SCT_GENERIC, NVME_SC_FORMAT_IN_PROGRESS, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_NOT_READY, SCSI_ASC_LUN_NOT_READY_FORMAT },
	{ NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONFLICTING_ATTRIBUTES, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB },
	{ NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_PROTECTION_INFO, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB },
	{ NVME_SCT_COMMAND_SPECIFIC, NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE,
	  SCSI_STATUS_CHECK_CONDITION, SCSI_SK_DATA_PROTECT, SCSI_ASC_WRITE_PROTECTED },
	{ NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_MEDIUM_ERROR,
	  SCSI_ASC_WRITE_FAULT },
	{ NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, SCSI_ASC_UNRECOVERED_READ_ERROR },
	{ NVME_SCT_MEDIA, NVME_SC_GUARD_CHECK_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_GUARD_CHECK_FAILED },
	{ NVME_SCT_MEDIA, NVME_SC_APPTAG_CHECK_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_APPTAG_CHECK_FAILED },
	{ NVME_SCT_MEDIA, NVME_SC_REFTAG_CHECK_ERROR, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, SCSI_ASC_REFTAG_CHECK_FAILED },
	{ NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_MISCOMPARE,
	  SCSI_ASC_MISCOMPARE_DURING_VERIFY },
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

/* ---- Data-out ------------------------------------------------------------------------------ */

bool scsi_xlate_data_out(const struct scsi_lu *lu, struct scsi_plan *p, uint8_t *data, uint32_t len,
			 uint8_t *scratch, uint32_t scratch_len)
{
	switch (p->op) {
	case SCSI_XOP_UNMAP:
		return sbc_unmap_data(lu, p, data, len, scratch, scratch_len);
	case SCSI_XOP_PR_OUT:
		return spc_pr_out_data(lu, p, data, len, scratch);
	case SCSI_XOP_MODE_SELECT:
		spc_mode_select_data(lu, p, data, len);
		p->op = SCSI_XOP_DONE;
		return false;
	case SCSI_XOP_WRITE_SAME:
		return sbc_write_same_data(lu, p, data, len);
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
		cmd->dptr.sgl1.type =
			NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
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
		n = chunk(p, sbc_cmd_max_blocks(lu));
		nvme_rw(cmd, p->op == SCSI_XOP_READ ? NVME_OPC_READ : NVME_OPC_WRITE, lu->nsid,
			p->next_lba, n, p->fua, n * bs);
		xlate_io_ref(io, SCSI_BUF_DATA, p->data_off, n * bs);
		break;
	case SCSI_XOP_COMPARE:
		if (!p->left)
			return false;
		if (p->bytchk == 3) { /* the one block, replicated, against each chunk */
			n = chunk(p, pat < sbc_cmd_max_blocks(lu) ? pat : sbc_cmd_max_blocks(lu));
			nvme_rw(cmd, NVME_OPC_COMPARE, lu->nsid, p->next_lba, n, false, n * bs);
			xlate_io_ref(io, SCSI_BUF_DATA, 0, n * bs);
			break;
		}
		n = chunk(p, sbc_cmd_max_blocks(lu));
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
			n = chunk(p, sbc_cmd_max_blocks(lu));
			nvme_rw(cmd, NVME_OPC_WRITE, lu->nsid, p->next_lba, n, true, n * bs);
			xlate_io_ref(io, SCSI_BUF_DATA, p->data_off, n * bs);
		} else if (p->bytchk) {
			n = chunk(p, sbc_cmd_max_blocks(lu));
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
			n = chunk(p, pat < sbc_cmd_max_blocks(lu) ? pat : sbc_cmd_max_blocks(lu));
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
	if (p->op == SCSI_XOP_PR_OUT && p->sa == SCSI_PR_OUT_RELEASE && sct == NVME_SCT_GENERIC &&
	    sc == NVME_SC_INVALID_FIELD) {
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

void scsi_xlate_miscompare_at(struct scsi_plan *p, uint32_t offset)
{
	if (p->status != SCSI_STATUS_CHECK_CONDITION || p->sense.key != SCSI_SK_MISCOMPARE)
		return;
	p->sense.info_valid = true;
	p->sense.info = offset;
}

void scsi_xlate_finish(const struct scsi_port *port, const struct scsi_lu *lu, struct scsi_plan *p,
		       uint8_t *buf, uint32_t buf_len, const uint8_t *scratch, uint32_t scratch_len)
{
	if (p->op == SCSI_XOP_PR_IN && scratch_len >= RESV_REPORT_HDR)
		spc_pr_in_finish(port, p, buf, buf_len, scratch, scratch_len);
	if (p->op == SCSI_XOP_GET_LBA_STATUS && scratch_len >= NVMF_LBA_STATUS_HDR)
		sbc_lba_status_finish(p, buf, buf_len, scratch, scratch_len);
	if (p->op == SCSI_XOP_READ)
		p->in_len = p->nblocks * lu->block_size;
	p->op = SCSI_XOP_DONE;
}

/* ---- Command table and dispatch ----------------------------------------------------------- */

#define CTL 0x04 /* CONTROL byte: NACA is the only bit evaluated (and refused when set) */

/* Row flags, short */
#define LU SCSI_CMD_NEEDS_LU
#define WP SCSI_CMD_WP_CHECK
#define R6 SCSI_CMD_RESV6_OK

/* Usage data of the CDB sizes the block commands share (byte 0: opcode, byte 1: flags). */
#define USAGE_RW10(op, b1)                                            \
	{                                                             \
		op, b1, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, CTL \
	}
#define USAGE_RW12(op, b1)                                                        \
	{                                                                         \
		op, b1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, CTL \
	}
#define USAGE_RW16(op, b1)                                                                      \
	{                                                                                       \
		op, b1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, \
			0x1f, CTL                                                               \
	}

/* PERSISTENT RESERVE IN (5Eh) service actions */
#define PR_IN(h)                                                                         \
	{                                                                                \
		.handler = h, .cdb_len = 10, .dir = SCSI_DIR_IN, .flags = LU, .usage = { \
			0x5e,                                                            \
			0x1f,                                                            \
			0,                                                               \
			0,                                                               \
			0,                                                               \
			0,                                                               \
			0,                                                               \
			0xff,                                                            \
			0xff,                                                            \
			CTL                                                              \
		}                                                                        \
	}
static const struct scsi_cmd_desc pr_in_sa[SCSI_SA_COUNT] = {
	[SCSI_PR_IN_READ_KEYS] = PR_IN(spc_pr_in),
	[SCSI_PR_IN_READ_RESERVATION] = PR_IN(spc_pr_in),
	[SCSI_PR_IN_REPORT_CAPABILITIES] = PR_IN(spc_pr_in),
	[SCSI_PR_IN_READ_FULL_STATUS] = PR_IN(spc_pr_in),
};

/* PERSISTENT RESERVE OUT (5Fh) service actions (REGISTER AND MOVE is not supported) */
#define PR_OUT(h)                                                                         \
	{                                                                                 \
		.handler = h, .cdb_len = 10, .dir = SCSI_DIR_OUT, .flags = LU, .usage = { \
			0x5f,                                                             \
			0x1f,                                                             \
			0xff,                                                             \
			0,                                                                \
			0,                                                                \
			0xff,                                                             \
			0xff,                                                             \
			0xff,                                                             \
			0xff,                                                             \
			CTL                                                               \
		}                                                                         \
	}
static const struct scsi_cmd_desc pr_out_sa[SCSI_SA_COUNT] = {
	[SCSI_PR_OUT_REGISTER] = PR_OUT(spc_pr_out),
	[SCSI_PR_OUT_RESERVE] = PR_OUT(spc_pr_out),
	[SCSI_PR_OUT_RELEASE] = PR_OUT(spc_pr_out),
	[SCSI_PR_OUT_CLEAR] = PR_OUT(spc_pr_out),
	[SCSI_PR_OUT_PREEMPT] = PR_OUT(spc_pr_out),
	[SCSI_PR_OUT_PREEMPT_AND_ABORT] = PR_OUT(spc_pr_out),
	[SCSI_PR_OUT_REGISTER_AND_IGNORE] = PR_OUT(spc_pr_out),
};

/* SERVICE ACTION IN(16) (9Eh) */
static const struct scsi_cmd_desc sai16_sa[SCSI_SA_COUNT] = {
	[SCSI_SAI_READ_CAPACITY16] = { .handler = sbc_read_capacity16,
				       .cdb_len = 16,
				       .dir = SCSI_DIR_IN,
				       .flags = LU,
				       .usage = { 0x9e, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, CTL } },
	[SCSI_SAI_GET_LBA_STATUS] = { .handler = sbc_get_lba_status,
				      .cdb_len = 16,
				      .dir = SCSI_DIR_IN,
				      .flags = LU,
				      .usage = { 0x9e, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, CTL } },
};

/* MAINTENANCE IN (A3h) */
static const struct scsi_cmd_desc maint_in_sa[SCSI_SA_COUNT] = {
	[SCSI_MI_REPORT_SUPPORTED_OPCODES] = { .handler = spc_report_opcodes,
					       .cdb_len = 12,
					       .dir = SCSI_DIR_IN,
					       .flags = R6,
					       .usage = { 0xa3, 0x1f, 0x87, 0xff, 0xff, 0xff, 0xff,
							  0xff, 0xff, 0xff, 0, CTL } },
};

const struct scsi_cmd_desc scsi_cmd_table[256] = {
	[SCSI_OP_TEST_UNIT_READY] = { .handler = sbc_test_unit_ready,
				      .cdb_len = 6,
				      .dir = SCSI_DIR_NONE,
				      .flags = LU,
				      .usage = { 0x00, 0, 0, 0, 0, CTL } },
	[SCSI_OP_REQUEST_SENSE] = { .handler = spc_request_sense,
				    .cdb_len = 6,
				    .dir = SCSI_DIR_IN,
				    .flags = R6,
				    .usage = { 0x03, 0x01, 0, 0, 0xff, CTL } },
	[SCSI_OP_READ6] = { .handler = sbc_read,
			    .cdb_len = 6,
			    .dir = SCSI_DIR_IN,
			    .flags = LU,
			    .usage = { 0x08, 0x1f, 0xff, 0xff, 0xff, CTL } },
	[SCSI_OP_WRITE6] = { .handler = sbc_write,
			     .cdb_len = 6,
			     .dir = SCSI_DIR_OUT,
			     .flags = LU | WP,
			     .usage = { 0x0a, 0x1f, 0xff, 0xff, 0xff, CTL } },
	[SCSI_OP_INQUIRY] = { .handler = spc_inquiry,
			      .cdb_len = 6,
			      .dir = SCSI_DIR_IN,
			      .flags = R6,
			      .usage = { 0x12, 0x01, 0xff, 0xff, 0xff, CTL } },
	[SCSI_OP_MODE_SELECT6] = { .handler = spc_mode_select,
				   .cdb_len = 6,
				   .dir = SCSI_DIR_OUT,
				   .flags = LU,
				   .usage = { 0x15, 0x11, 0, 0, 0xff, CTL } },
	[SCSI_OP_RESERVE6] = { .handler = spc_reserve_release,
			       .cdb_len = 6,
			       .dir = SCSI_DIR_NONE,
			       .flags = LU,
			       .usage = { 0x16, 0, 0, 0, 0, CTL } },
	[SCSI_OP_RELEASE6] = { .handler = spc_reserve_release,
			       .cdb_len = 6,
			       .dir = SCSI_DIR_NONE,
			       .flags = LU | R6,
			       .usage = { 0x17, 0, 0, 0, 0, CTL } },
	[SCSI_OP_MODE_SENSE6] = { .handler = spc_mode_sense,
				  .cdb_len = 6,
				  .dir = SCSI_DIR_IN,
				  .flags = LU,
				  .usage = { 0x1a, 0x08, 0xff, 0xff, 0xff, CTL } },
	[SCSI_OP_START_STOP_UNIT] = { .handler = sbc_start_stop,
				      .cdb_len = 6,
				      .dir = SCSI_DIR_NONE,
				      .flags = LU,
				      .usage = { 0x1b, 0x01, 0, 0x0f, 0xf7, CTL } },
	[SCSI_OP_READ_CAPACITY10] = { .handler = sbc_read_capacity10,
				      .cdb_len = 10,
				      .dir = SCSI_DIR_IN,
				      .flags = LU,
				      .usage = { 0x25, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01,
						 CTL } },
	[SCSI_OP_READ10] = { .handler = sbc_read,
			     .cdb_len = 10,
			     .dir = SCSI_DIR_IN,
			     .flags = LU,
			     .usage = USAGE_RW10(0x28, 0xfc) },
	[SCSI_OP_WRITE10] = { .handler = sbc_write,
			      .cdb_len = 10,
			      .dir = SCSI_DIR_OUT,
			      .flags = LU | WP,
			      .usage = USAGE_RW10(0x2a, 0xf8) },
	[SCSI_OP_WRITE_VERIFY10] = { .handler = sbc_verify,
				     .cdb_len = 10,
				     .dir = SCSI_DIR_OUT,
				     .flags = LU | WP,
				     .usage = USAGE_RW10(0x2e, 0xf6) },
	[SCSI_OP_VERIFY10] = { .handler = sbc_verify,
			       .cdb_len = 10,
			       .dir = SCSI_DIR_OUT,
			       .flags = LU,
			       .usage = USAGE_RW10(0x2f, 0xf6) },
	[SCSI_OP_PRE_FETCH10] = { .handler = sbc_prefetch,
				  .cdb_len = 10,
				  .dir = SCSI_DIR_NONE,
				  .flags = LU,
				  .usage = USAGE_RW10(0x34, 0x02) },
	[SCSI_OP_SYNC_CACHE10] = { .handler = sbc_sync_cache,
				   .cdb_len = 10,
				   .dir = SCSI_DIR_NONE,
				   .flags = LU,
				   .usage = USAGE_RW10(0x35, 0x02) },
	[SCSI_OP_WRITE_SAME10] = { .handler = sbc_write_same,
				   .cdb_len = 10,
				   .dir = SCSI_DIR_OUT,
				   .flags = LU | WP,
				   .usage = USAGE_RW10(0x41, 0xfe) },
	[SCSI_OP_UNMAP] = { .handler = sbc_unmap,
			    .cdb_len = 10,
			    .dir = SCSI_DIR_OUT,
			    .flags = LU | WP,
			    .usage = { 0x42, 0x01, 0, 0, 0, 0, 0x1f, 0xff, 0xff, CTL } },
	[SCSI_OP_MODE_SELECT10] = { .handler = spc_mode_select,
				    .cdb_len = 10,
				    .dir = SCSI_DIR_OUT,
				    .flags = LU,
				    .usage = { 0x55, 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, CTL } },
	[SCSI_OP_MODE_SENSE10] = { .handler = spc_mode_sense,
				   .cdb_len = 10,
				   .dir = SCSI_DIR_IN,
				   .flags = LU,
				   .usage = { 0x5a, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, CTL } },
	[SCSI_OP_PERSISTENT_RESERVE_IN] = { .sa = pr_in_sa,
					    .cdb_len = 10,
					    .dir = SCSI_DIR_IN,
					    .flags = LU | SCSI_CMD_SA_FIELD },
	[SCSI_OP_PERSISTENT_RESERVE_OUT] = { .sa = pr_out_sa,
					     .cdb_len = 10,
					     .dir = SCSI_DIR_OUT,
					     .flags = LU | SCSI_CMD_SA_FIELD },
	[SCSI_OP_READ16] = { .handler = sbc_read,
			     .cdb_len = 16,
			     .dir = SCSI_DIR_IN,
			     .flags = LU,
			     .usage = USAGE_RW16(0x88, 0xfc) },
	[SCSI_OP_COMPARE_AND_WRITE] = { .handler = sbc_compare_and_write,
					.cdb_len = 16,
					.dir = SCSI_DIR_OUT,
					.flags = LU | WP,
					.usage = { 0x89, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0, 0, 0, 0xff, 0x1f, CTL } },
	[SCSI_OP_WRITE16] = { .handler = sbc_write,
			      .cdb_len = 16,
			      .dir = SCSI_DIR_OUT,
			      .flags = LU | WP,
			      .usage = USAGE_RW16(0x8a, 0xf8) },
	[SCSI_OP_WRITE_VERIFY16] = { .handler = sbc_verify,
				     .cdb_len = 16,
				     .dir = SCSI_DIR_OUT,
				     .flags = LU | WP,
				     .usage = USAGE_RW16(0x8e, 0xf6) },
	[SCSI_OP_VERIFY16] = { .handler = sbc_verify,
			       .cdb_len = 16,
			       .dir = SCSI_DIR_OUT,
			       .flags = LU,
			       .usage = USAGE_RW16(0x8f, 0xf6) },
	[SCSI_OP_PRE_FETCH16] = { .handler = sbc_prefetch,
				  .cdb_len = 16,
				  .dir = SCSI_DIR_NONE,
				  .flags = LU,
				  .usage = USAGE_RW16(0x90, 0x02) },
	[SCSI_OP_SYNC_CACHE16] = { .handler = sbc_sync_cache,
				   .cdb_len = 16,
				   .dir = SCSI_DIR_NONE,
				   .flags = LU,
				   .usage = USAGE_RW16(0x91, 0x02) },
	[SCSI_OP_WRITE_SAME16] = { .handler = sbc_write_same,
				   .cdb_len = 16,
				   .dir = SCSI_DIR_OUT,
				   .flags = LU | WP,
				   .usage = USAGE_RW16(0x93, 0xff) },
	[SCSI_OP_SERVICE_ACTION_IN16] = { .sa = sai16_sa,
					  .cdb_len = 16,
					  .dir = SCSI_DIR_IN,
					  .flags = LU },
	[SCSI_OP_REPORT_LUNS] = { .handler = spc_report_luns,
				  .cdb_len = 12,
				  .dir = SCSI_DIR_IN,
				  .flags = R6,
				  .usage = { 0xa0, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0,
					     CTL } },
	[SCSI_OP_MAINTENANCE_IN] = { .sa = maint_in_sa,
				     .cdb_len = 12,
				     .dir = SCSI_DIR_IN,
				     .flags = R6 },
	[SCSI_OP_READ12] = { .handler = sbc_read,
			     .cdb_len = 12,
			     .dir = SCSI_DIR_IN,
			     .flags = LU,
			     .usage = USAGE_RW12(0xa8, 0xfc) },
	[SCSI_OP_WRITE12] = { .handler = sbc_write,
			      .cdb_len = 12,
			      .dir = SCSI_DIR_OUT,
			      .flags = LU | WP,
			      .usage = USAGE_RW12(0xaa, 0xf8) },
	[SCSI_OP_WRITE_VERIFY12] = { .handler = sbc_verify,
				     .cdb_len = 12,
				     .dir = SCSI_DIR_OUT,
				     .flags = LU | WP,
				     .usage = USAGE_RW12(0xae, 0xf6) },
	[SCSI_OP_VERIFY12] = { .handler = sbc_verify,
			       .cdb_len = 12,
			       .dir = SCSI_DIR_OUT,
			       .flags = LU,
			       .usage = USAGE_RW12(0xaf, 0xf6) },
};

const struct scsi_cmd_desc *scsi_cmd_lookup(uint8_t opcode, uint16_t sa,
					    const struct scsi_cmd_desc **op_row)
{
	const struct scsi_cmd_desc *d = &scsi_cmd_table[opcode];

	if (op_row)
		*op_row = d->cdb_len ? d : NULL;
	if (!d->cdb_len)
		return NULL;
	if (!d->sa)
		return d;
	if (sa >= SCSI_SA_COUNT || !d->sa[sa].cdb_len)
		return NULL;
	return &d->sa[sa];
}

bool scsi_xlate_reserve6_exempt(uint8_t opcode)
{
	return scsi_cmd_table[opcode].flags & SCSI_CMD_RESV6_OK;
}

static int highest_bit(uint8_t v)
{
	int b = 7;

	while (b > 0 && !(v & (1u << b)))
		b--;
	return b;
}

void scsi_xlate_cdb(const struct scsi_port *port, const struct scsi_lu *lu, const uint8_t *cdb,
		    size_t cdb_len, struct scsi_plan *plan, uint8_t *buf, uint32_t buf_len)
{
	const struct scsi_cmd_desc *op = &scsi_cmd_table[cdb[0]], *d;
	struct xctx x = { port, lu, cdb, plan, buf, buf_len, NULL };

	memset(plan, 0, sizeof(*plan));
	plan->op = SCSI_XOP_DONE;
	plan->status = SCSI_STATUS_GOOD;
	if (!op->cdb_len || cdb_len < op->cdb_len) {
		scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	d = scsi_cmd_lookup(cdb[0], cdb[1] & 0x1f, NULL);
	if (!d) {
		/* known opcode, unknown service action: PERSISTENT RESERVE IN/OUT report the
		 * field, the others an unsupported command */
		if (!(op->flags & SCSI_CMD_SA_FIELD)) {
			scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST,
						  SCSI_ASC_INVALID_OPCODE);
			return;
		}
		if ((op->flags & SCSI_CMD_NEEDS_LU) && !lu)
			goto no_lu;
		scsi_plan_invalid_field(plan, true, 1, 4);
		return;
	}
	if ((d->flags & SCSI_CMD_NEEDS_LU) && !lu)
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
	x.desc = d;
	d->handler(&x);
	/* The engine moves data the way the plan says; a handler that disagrees with its
	 * row is a bug, reported rather than moving data the wrong way. */
	if (plan->dir != SCSI_DIR_NONE && plan->dir != d->dir)
		scsi_plan_check_condition(plan, SCSI_SK_HARDWARE_ERROR,
					  SCSI_ASC_INTERNAL_TARGET_FAILURE);
	return;
no_lu:
	scsi_plan_check_condition(plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LUN_NOT_SUPPORTED);
}

void scsi_xlate_replicate(uint8_t *buf, uint32_t buf_len, uint32_t block_size)
{
	for (uint32_t off = block_size; off + block_size <= buf_len; off += block_size)
		memcpy(buf + off, buf, block_size);
}
