/* SPDX-License-Identifier: MIT */
/*
 * The SCSI -> NVMe translator (target/scsi/scsi_xlate.c) as the iSCSI task engine drives it:
 * a CDB, its data-out, the NVMe commands of the plan with completion statuses chosen by
 * the input, and the final data-in. Every NVMe command must reference data inside the
 * buffer it names, and every finished plan must carry a valid SCSI outcome.
 *
 * Input: [0] logical unit flags, [1] block size selector, [2..17] CDB, then data-out
 * bytes, then NVMe status bytes (one per command; 0 = success).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "scsi/scsi_xlate.h"

#define CHUNK (128 * 1024) /* one reactor buffer, like the engine's first chunk */
#define MAX_STEPS 4096

static const uint64_t luns[] = { 0, 1, 5 };

static uint32_t tid(void *arg, const uint8_t hostid[16], uint8_t *out, uint32_t cap)
{
	if (cap < 24)
		return 0;
	memset(out, 0, 24);
	out[0] = 0x05;
	memcpy(out + 4, hostid, 16);
	return 24;
}

static void lu_setup(struct scsi_lu *lu, struct scsi_lu_mode *mode, uint8_t f, uint8_t bs_sel)
{
	static const uint32_t bs[4] = { 512, 4096, 512, 4096 };

	memset(lu, 0, sizeof(*lu));
	memset(mode, 0, sizeof(*mode));
	lu->lun = 0;
	lu->nsid = 1;
	lu->block_size = bs[bs_sel & 3];
	lu->nblocks = (bs_sel & 4) ? 0x100000000ull : (8u << 20) / lu->block_size;
	lu->max_xfer_blocks = CHUNK / lu->block_size;
	lu->max_cmd_blocks = (bs_sel & 8) ? 8 : 0;
	lu->phys_exp = (bs_sel >> 4) & 3;
	lu->max_unmap_blocks = UINT32_MAX;
	lu->max_unmap_descs = 256;
	lu->max_ws_blocks = 0xffff;
	lu->thin = f & 1;
	lu->write_cache = f & 2;
	lu->read_only = f & 4;
	lu->reservations = f & 8;
	lu->compare_write = f & 16;
	lu->verify_cmd = f & 32;
	lu->write_zeroes = f & 64;
	lu->lba_status = f & 1;
	for (int i = 0; i < 16; i++)
		lu->nguid[i] = (uint8_t)(i + 1);
	strcpy(lu->serial, "0123456789abcdef");
	strcpy(lu->model, "nvmeof fuzz");
	strcpy(lu->firmware, "0.1.0");
	lu->mode = mode;
	mode->d_sense = f & 128;
}

static bool split_scratch(enum scsi_xop op)
{
	switch (op) {
	case SCSI_XOP_UNMAP:
	case SCSI_XOP_PR_IN:
	case SCSI_XOP_PR_OUT:
	case SCSI_XOP_GET_LBA_STATUS:
	case SCSI_XOP_WRITE_SAME:
	case SCSI_XOP_MODE_SELECT:
		return true;
	default:
		return false;
	}
}

static void check_outcome(const struct scsi_plan *p, uint32_t buf_len)
{
	uint8_t sense[SCSI_SENSE_MAX + 32];

	if (p->in_len > buf_len)
		abort();
	if (p->status != SCSI_STATUS_GOOD && p->status != SCSI_STATUS_CHECK_CONDITION &&
	    p->status != SCSI_STATUS_RESERVATION_CONFLICT && p->status != SCSI_STATUS_BUSY &&
	    p->status != SCSI_STATUS_CONDITION_MET && p->status != SCSI_STATUS_TASK_SET_FULL)
		abort();
	if (scsi_sense_build(&p->sense, false, sense) > SCSI_SENSE_MAX ||
	    scsi_sense_build(&p->sense, true, sense) > SCSI_SENSE_MAX)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scsi_port port = {
		.target_name = "iqn.2026-11.io.nvmeof:fuzz", .rel_port_id = 1, .tpgt = 1,
		.luns = luns, .nluns = 3, .transport_id = tid,
	};
	struct scsi_lu lu;
	struct scsi_lu_mode mode;
	struct scsi_plan plan;
	uint8_t *chunk, *buf, *scratch, cdb[SCSI_CDB_MAX];
	uint32_t buf_len, scratch_len;
	size_t pos = 2 + SCSI_CDB_MAX;

	if (size < pos)
		return 0;
	lu_setup(&lu, &mode, data[0], data[1]);
	memcpy(cdb, data + 2, sizeof(cdb));
	chunk = malloc(CHUNK);
	if (!chunk)
		return 0;
	memset(chunk, 0xa5, CHUNK);
	memset(&plan, 0x5a, sizeof(plan)); /* the translator must not rely on a cleared plan */
	scsi_xlate_cdb(&port, (data[1] & 0x80) ? NULL : &lu, cdb, sizeof(cdb), &plan, chunk,
		       CHUNK);
	buf = chunk;
	buf_len = CHUNK;
	scratch = chunk + CHUNK / 2;
	scratch_len = CHUNK / 2;
	if (split_scratch(plan.op))
		buf_len = CHUNK / 2;
	if (plan.op == SCSI_XOP_DONE || (data[1] & 0x80)) {
		check_outcome(&plan, CHUNK);
		free(chunk);
		return 0;
	}
	if (plan.dir == SCSI_DIR_OUT) {
		uint32_t len = plan.xfer_len < buf_len ? plan.xfer_len : buf_len;

		if (len > size - pos)
			len = (uint32_t)(size - pos);
		memcpy(buf, data + pos, len);
		pos += len;
		if (!scsi_xlate_data_out(&lu, &plan, buf, len, scratch, scratch_len)) {
			check_outcome(&plan, buf_len);
			free(chunk);
			return 0;
		}
		if ((plan.op == SCSI_XOP_WRITE_SAME && !plan.zero_data) ||
		    (plan.op == SCSI_XOP_COMPARE && plan.bytchk == 3))
			scsi_xlate_replicate(buf, buf_len, lu.block_size);
	}
	for (int step = 0; step < MAX_STEPS; step++) {
		struct nvme_cmd cmd;
		struct scsi_nvme_io io;
		uint16_t st = 0;

		memset(&io, 0, sizeof(io));
		if (!scsi_xlate_next(&lu, &plan, buf_len, scratch, scratch_len, &cmd, &io)) {
			/* NVMe-side data (a Reservation Report, LBA status descriptors) is
			 * whatever the input says */
			size_t n = size - pos < scratch_len ? size - pos : scratch_len;

			if (plan.op == SCSI_XOP_PR_IN || plan.op == SCSI_XOP_GET_LBA_STATUS)
				memcpy(scratch, data + pos, n);
			scsi_xlate_finish(&port, &lu, &plan, buf, buf_len, scratch, scratch_len);
			check_outcome(&plan, buf_len);
			break;
		}
		if (io.len && io.buf == SCSI_BUF_DATA && (io.off > buf_len || io.len > buf_len - io.off))
			abort();
		if (io.len && io.buf == SCSI_BUF_SCRATCH &&
		    (io.off > scratch_len || io.len > scratch_len - io.off))
			abort();
		if (io.len && io.buf == SCSI_BUF_NONE)
			abort();
		if (pos < size) {
			uint8_t b = data[pos++];

			/* success, or one of the failures the backend and core report */
			static const uint16_t sts[8] = {
				0, 0,
				NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE),
				NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT),
				NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE),
				NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL),
				NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT),
				NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) | NVME_STATUS_DNR,
			};

			st = sts[b & 7];
		}
		if (!scsi_xlate_nvme_done(&plan, st)) {
			check_outcome(&plan, buf_len);
			break;
		}
	}
	free(chunk);
	return 0;
}
