/* SPDX-License-Identifier: MIT */
/* NVMe command -> SCSI CDB encapsulation and SCSI sense -> NVMe status (initiator/lib/scsi/host_scsi_encap.c). */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "lib/nvmeof.h"
#include "lib/scsi/host_scsi_encap.h"
#include "ut.h"

#define ST(sct, sc) NVMEOF_STATUS(NVME_SCT_##sct, NVME_SC_##sc)

static const struct scsi_lu_limits lu512 = {
	.block_shift = 9,
	.caw_max_blocks = 8,
	.ws_max_blocks = 1000,
	.unmap_max_descs = 2,
	.write_same = true,
	.ws_unmap = true,
	.verify = true,
};

static void sqe_rw(struct nvme_cmd *sqe, uint8_t opc, uint64_t slba, uint32_t nlb,
		   uint32_t cdw12_flags)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = opc;
	put_le32(&sqe->nsid, 1);
	put_le32(&sqe->cdw10, (uint32_t)slba);
	put_le32(&sqe->cdw11, (uint32_t)(slba >> 32));
	put_le32(&sqe->cdw12, ((nlb - 1) & 0xffff) | cdw12_flags);
}

/* ---- One-step commands: opcode, flags, LBA, length, data ------------------------------------ */
struct rw_case {
	const char *name;
	uint8_t opc;
	uint64_t slba;
	uint32_t nlb;
	uint32_t flags;		/* CDW12 */
	uint8_t cdb0, cdb1;
	enum scsi_encap_data data;
	uint32_t xfer;
};

static const struct rw_case rw_cases[] = {
	{ "read", NVME_OPC_READ, 0x1122334455ull, 8, 0, SCSI_OP_READ16, 0, SCSI_DATA_IN, 4096 },
	{ "read FUA", NVME_OPC_READ, 7, 1, NVME_RW_FUA, SCSI_OP_READ16, 0x08, SCSI_DATA_IN, 512 },
	{ "read LR ignored", NVME_OPC_READ, 7, 2, NVME_RW_LR, SCSI_OP_READ16, 0, SCSI_DATA_IN,
	  1024 },
	{ "write", NVME_OPC_WRITE, 0xfffffffffull, 65536, 0, SCSI_OP_WRITE16, 0, SCSI_DATA_OUT,
	  65536u * 512 },
	{ "write FUA", NVME_OPC_WRITE, 0, 3, NVME_RW_FUA, SCSI_OP_WRITE16, 0x08, SCSI_DATA_OUT,
	  1536 },
	{ "verify", NVME_OPC_VERIFY, 100, 16, 0, SCSI_OP_VERIFY16, 0, SCSI_DATA_NONE, 0 },
};

static void test_rw(void)
{
	for (size_t i = 0; i < sizeof(rw_cases) / sizeof(rw_cases[0]); i++) {
		const struct rw_case *c = &rw_cases[i];
		struct scsi_encap_cmd out;
		struct nvme_cmd sqe;
		int rc;

		sqe_rw(&sqe, c->opc, c->slba, c->nlb, c->flags);
		rc = scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		CU_ASSERT_EQUAL(out.cdb_len, 16);
		CU_ASSERT_EQUAL(out.cdb[0], c->cdb0);
		CU_ASSERT_EQUAL(out.cdb[1], c->cdb1);
		CU_ASSERT_EQUAL(get_be64(&out.cdb[2]), c->slba);
		CU_ASSERT_EQUAL(get_be32(&out.cdb[10]), c->nlb);
		CU_ASSERT_EQUAL(out.cdb[14], 0);
		CU_ASSERT_EQUAL(out.cdb[15], 0);
		CU_ASSERT_EQUAL(out.data, c->data);
		CU_ASSERT_EQUAL(out.xfer_len, c->xfer);
		CU_ASSERT_EQUAL(out.data_off, 0);
		CU_ASSERT_TRUE(out.last);
		/* A one-step command has no step 1. */
		CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 1, NULL, 0, 0, NULL, &out),
				ST(GENERIC, INVALID_FIELD));
	}
}

static void test_block_size(void)
{
	struct scsi_lu_limits lu4k = lu512;
	struct scsi_encap_cmd out;
	struct nvme_cmd sqe;

	lu4k.block_shift = 12;
	sqe_rw(&sqe, NVME_OPC_READ, 10, 3, 0);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu4k, 0, NULL, 0, 0, NULL, &out), 0);
	CU_ASSERT_EQUAL(out.xfer_len, 3 * 4096);
}

static void test_flush(void)
{
	struct nvme_cmd sqe = { .opc = NVME_OPC_FLUSH };
	struct scsi_encap_cmd out;
	static const uint8_t want[10] = { SCSI_OP_SYNC_CACHE10 };

	put_le32(&sqe.nsid, 1);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out), 0);
	CU_ASSERT_EQUAL(out.cdb_len, 10);
	CU_ASSERT_EQUAL(memcmp(out.cdb, want, 10), 0); /* LBA 0, count 0: everything */
	CU_ASSERT_EQUAL(out.data, SCSI_DATA_NONE);
	CU_ASSERT_EQUAL(out.xfer_len, 0);
	CU_ASSERT_TRUE(out.last);
}

/* ---- Write Zeroes -> WRITE SAME(16), with UNMAP for DEAC, in steps -------------------------- */
struct wz_case {
	const char *name;
	bool ws_unmap;
	uint32_t ws_max;
	uint32_t nlb;
	uint32_t flags;
	uint8_t cdb1;
	uint32_t steps;
	uint32_t last_count;
};

static const struct wz_case wz_cases[] = {
	{ "plain", true, 0, 100, 0, 0, 1, 100 },
	{ "deallocate", true, 0, 100, NVME_RW_DEAC, 0x08, 1, 100 },
	{ "deallocate without LBPWS", false, 0, 100, NVME_RW_DEAC, 0, 1, 100 },
	{ "FUA has no WRITE SAME bit", true, 0, 4, NVME_RW_FUA, 0, 1, 4 },
	{ "split by MAXIMUM WRITE SAME LENGTH", true, 1000, 2500, NVME_RW_DEAC, 0x08, 3, 500 },
	{ "exact multiple", true, 1000, 2000, 0, 0, 2, 1000 },
};

static void test_write_zeroes(void)
{
	for (size_t i = 0; i < sizeof(wz_cases) / sizeof(wz_cases[0]); i++) {
		const struct wz_case *c = &wz_cases[i];
		struct scsi_lu_limits lu = lu512;
		struct scsi_encap_cmd out;
		struct nvme_cmd sqe;
		uint64_t lba = 5000, covered = 0;

		lu.ws_unmap = c->ws_unmap;
		lu.ws_max_blocks = c->ws_max;
		sqe_rw(&sqe, NVME_OPC_WRITE_ZEROES, lba, c->nlb, c->flags);
		for (uint32_t step = 0; step < c->steps; step++) {
			CU_ASSERT_EQUAL_FATAL(
				scsi_encap_build(&sqe, &lu, step, NULL, 0, 0, NULL, &out), 0);
			CU_ASSERT_EQUAL(out.cdb[0], SCSI_OP_WRITE_SAME16);
			CU_ASSERT_EQUAL(out.cdb[1], c->cdb1);
			CU_ASSERT_EQUAL(get_be64(&out.cdb[2]), lba + covered);
			CU_ASSERT_EQUAL(out.data, SCSI_DATA_OUT_ZERO_BLOCK);
			CU_ASSERT_EQUAL(out.xfer_len, 512); /* one block of zeroes */
			CU_ASSERT_EQUAL(out.last, step + 1 == c->steps);
			if (step + 1 == c->steps)
				CU_ASSERT_EQUAL(get_be32(&out.cdb[10]), c->last_count);
			covered += get_be32(&out.cdb[10]);
		}
		CU_ASSERT_EQUAL(covered, c->nlb);
		CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu, c->steps, NULL, 0, 0, NULL, &out),
				ST(GENERIC, INVALID_FIELD));
	}
}

/* ---- Compare -> VERIFY(16) BYTCHK 01b: a pure compare, nothing written ------------------ */
static void test_compare(void)
{
	struct scsi_encap_cmd out;
	struct nvme_cmd sqe;

	sqe_rw(&sqe, NVME_OPC_COMPARE, 1000, 20, NVME_RW_FUA);
	CU_ASSERT_EQUAL_FATAL(scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out), 0);
	CU_ASSERT_EQUAL(out.cdb_len, 16);
	CU_ASSERT_EQUAL(out.cdb[0], SCSI_OP_VERIFY16);
	CU_ASSERT_EQUAL(out.cdb[1], 0x02); /* BYTCHK 01b; VERIFY has no FUA */
	CU_ASSERT_EQUAL(get_be64(&out.cdb[2]), 1000);
	CU_ASSERT_EQUAL(get_be32(&out.cdb[10]), 20);
	CU_ASSERT_EQUAL(out.data, SCSI_DATA_OUT); /* the compare data once, not twice */
	CU_ASSERT_EQUAL(out.data_off, 0);
	CU_ASSERT_EQUAL(out.xfer_len, 20 * 512);
	CU_ASSERT_TRUE(out.last);
	/* the largest NVMe Compare in one command: no 255-block COMPARE AND WRITE steps */
	sqe_rw(&sqe, NVME_OPC_COMPARE, 0, 65536, 0);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out), 0);
	CU_ASSERT_EQUAL(get_be32(&out.cdb[10]), 65536);
	CU_ASSERT_TRUE(out.last);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 1, NULL, 0, 0, NULL, &out),
			ST(GENERIC, INVALID_FIELD));
	{
		struct scsi_lu_limits lu = lu512;

		lu.verify = false; /* the LU has no VERIFY(16) */
		CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu, 0, NULL, 0, 0, NULL, &out),
				ST(GENERIC, INVALID_OPCODE));
	}
}

/* ---- Dataset Management (deallocate) -> UNMAP ----------------------------------------------- */
static void put_range(uint8_t *r, uint64_t slba, uint32_t nlb)
{
	memset(r, 0, 16);
	put_le32(r + 4, nlb);
	put_le64(r + 8, slba);
}

static void test_unmap(void)
{
	uint8_t ranges[3 * 16], param[SCSI_ENCAP_PARAM_LEN];
	struct iovec iov[2] = { { ranges, 20 }, { ranges + 20, sizeof(ranges) - 20 } };
	struct scsi_encap_cmd out;
	struct nvme_cmd sqe = { .opc = NVME_OPC_DATASET_MANAGEMENT };

	put_range(ranges, 0x100000000ull, 8);
	put_range(ranges + 16, 77, 1);
	put_range(ranges + 32, 4096, 0xffffffffu);
	put_le32(&sqe.cdw10, 2); /* three ranges */
	put_le32(&sqe.cdw11, NVME_DSM_ATTR_AD | NVME_DSM_ATTR_IDW);

	/* Two descriptors per UNMAP: step 0 takes ranges 0-1, step 1 range 2. */
	CU_ASSERT_EQUAL_FATAL(scsi_encap_build(&sqe, &lu512, 0, iov, 2, 48, param, &out), 0);
	CU_ASSERT_EQUAL(out.cdb_len, 10);
	CU_ASSERT_EQUAL(out.cdb[0], SCSI_OP_UNMAP);
	CU_ASSERT_EQUAL(out.cdb[1], 0);
	CU_ASSERT_EQUAL(get_be16(&out.cdb[7]), 8 + 32);
	CU_ASSERT_EQUAL(out.data, SCSI_DATA_OUT_PARAM);
	CU_ASSERT_EQUAL(out.xfer_len, 8 + 32);
	CU_ASSERT_FALSE(out.last);
	CU_ASSERT_EQUAL(get_be16(param), 6 + 32);     /* UNMAP DATA LENGTH */
	CU_ASSERT_EQUAL(get_be16(param + 2), 32);     /* BLOCK DESCRIPTOR DATA LENGTH */
	CU_ASSERT_EQUAL(get_be64(param + 8), 0x100000000ull);
	CU_ASSERT_EQUAL(get_be32(param + 16), 8);
	CU_ASSERT_EQUAL(get_be32(param + 20), 0);
	CU_ASSERT_EQUAL(get_be64(param + 24), 77);
	CU_ASSERT_EQUAL(get_be32(param + 32), 1);

	CU_ASSERT_EQUAL_FATAL(scsi_encap_build(&sqe, &lu512, 1, iov, 2, 48, param, &out), 0);
	CU_ASSERT_EQUAL(get_be16(&out.cdb[7]), 8 + 16);
	CU_ASSERT_EQUAL(get_be16(param), 6 + 16);
	CU_ASSERT_EQUAL(get_be64(param + 8), 4096);
	CU_ASSERT_EQUAL(get_be32(param + 16), 0xffffffffu);
	CU_ASSERT_TRUE(out.last);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 2, iov, 2, 48, param, &out),
			ST(GENERIC, INVALID_FIELD));

	/* A range list shorter than NR says. */
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, iov, 2, 32, param, &out),
			ST(GENERIC, DATA_SGL_LENGTH_INVALID));
	/* Only hints: nothing to send, success. */
	put_le32(&sqe.cdw11, NVME_DSM_ATTR_IDR);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, iov, 2, 48, param, &out),
			SCSI_ENCAP_DONE);
	/* The LU has no UNMAP. */
	{
		struct scsi_lu_limits lu = lu512;

		lu.unmap_max_descs = 0;
		put_le32(&sqe.cdw11, NVME_DSM_ATTR_AD);
		CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu, 0, iov, 2, 48, param, &out),
				ST(GENERIC, INVALID_OPCODE));
	}
}

/* ---- Commands without a SCSI form ----------------------------------------------------------- */
static void test_untranslatable(void)
{
	static const uint8_t opcs[] = { NVME_OPC_WRITE_UNCORRECTABLE, NVME_OPC_RESERVATION_REGISTER,
					NVME_OPC_RESERVATION_ACQUIRE, 0x7f, 0x99 };
	struct scsi_encap_cmd out;
	struct nvme_cmd sqe;

	for (size_t i = 0; i < sizeof(opcs); i++) {
		sqe_rw(&sqe, opcs[i], 0, 1, 0);
		CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out),
				ST(GENERIC, INVALID_OPCODE));
	}
	/* Protection information and fused commands are not expressible. */
	sqe_rw(&sqe, NVME_OPC_READ, 0, 1, 1u << NVME_RW_PRINFO_SHIFT);
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out),
			ST(GENERIC, INVALID_FIELD));
	sqe_rw(&sqe, NVME_OPC_COMPARE, 0, 1, 0);
	sqe.flags = NVME_CMD_FUSE_FIRST;
	CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu512, 0, NULL, 0, 0, NULL, &out),
			ST(GENERIC, INVALID_FIELD));
	/* VERIFY(16) absent on the LU. */
	{
		struct scsi_lu_limits lu = lu512;

		lu.verify = false;
		sqe_rw(&sqe, NVME_OPC_VERIFY, 0, 1, 0);
		CU_ASSERT_EQUAL(scsi_encap_build(&sqe, &lu, 0, NULL, 0, 0, NULL, &out),
				ST(GENERIC, INVALID_OPCODE));
	}
}

/* ---- Sense -> NVMe status ------------------------------------------------------------------- */
struct sense_case {
	const char *name;
	uint8_t opc;
	uint8_t status;
	uint8_t key;
	uint8_t asc, ascq;
	bool descriptor;	/* descriptor format instead of fixed */
	uint16_t want;
	bool dnr;
};

static const struct sense_case sense_cases[] = {
	{ "good", NVME_OPC_READ, SCSI_STATUS_GOOD, 0, 0, 0, false, 0, false },
	{ "condition met", NVME_OPC_READ, SCSI_STATUS_CONDITION_MET, 0, 0, 0, false, 0, false },
	{ "LBA out of range", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x21, 0x00, false, ST(GENERIC, LBA_OUT_OF_RANGE), true },
	{ "LBA out of range, descriptor", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x21, 0x00, true, ST(GENERIC, LBA_OUT_OF_RANGE), true },
	{ "invalid opcode", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ILLEGAL_REQUEST,
	  0x20, 0x00, false, ST(GENERIC, INVALID_OPCODE), true },
	{ "invalid field in CDB", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x24, 0x00, false, ST(GENERIC, INVALID_FIELD), true },
	{ "invalid field in parameter list", NVME_OPC_DATASET_MANAGEMENT,
	  SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ILLEGAL_REQUEST, 0x26, 0x00, false,
	  ST(GENERIC, INVALID_FIELD), true },
	{ "LU not supported", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x25, 0x00, false, ST(GENERIC, INVALID_NS_OR_FORMAT), true },
	{ "access denied, invalid LU", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x20, 0x09, false, ST(GENERIC, INVALID_NS_OR_FORMAT), true },
	{ "access denied", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ILLEGAL_REQUEST,
	  0x20, 0x02, false, ST(MEDIA, ACCESS_DENIED), true },
	{ "command sequence error", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x2c, 0x00, false, ST(GENERIC, COMMAND_SEQUENCE_ERROR), true },
	{ "other illegal request", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ILLEGAL_REQUEST, 0x55, 0x03, false, ST(GENERIC, INVALID_FIELD), true },
	{ "miscompare", NVME_OPC_COMPARE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_MISCOMPARE, 0x1d,
	  0x00, false, ST(MEDIA, COMPARE_FAILURE), true },
	{ "miscompare, descriptor", NVME_OPC_COMPARE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MISCOMPARE, 0x1d, 0x00, true, ST(MEDIA, COMPARE_FAILURE), true },
	{ "unrecovered read error", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, 0x11, 0x00, false, ST(MEDIA, UNRECOVERED_READ_ERROR), true },
	{ "unrecovered read error, auto reallocate failed", NVME_OPC_READ,
	  SCSI_STATUS_CHECK_CONDITION, SCSI_SK_MEDIUM_ERROR, 0x11, 0x04, false,
	  ST(MEDIA, UNRECOVERED_READ_ERROR), true },
	{ "write fault", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_MEDIUM_ERROR, 0x03,
	  0x00, false, ST(MEDIA, WRITE_FAULT), true },
	{ "write error", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_MEDIUM_ERROR, 0x0c,
	  0x00, false, ST(MEDIA, WRITE_FAULT), true },
	{ "medium error, no ASC", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, 0x00, 0x00, false, ST(GENERIC, DATA_TRANSFER_ERROR), false },
	{ "medium error on a write", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, 0x31, 0x00, false, ST(MEDIA, WRITE_FAULT), true },
	{ "medium error on a read", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, 0x31, 0x00, false, ST(MEDIA, UNRECOVERED_READ_ERROR), true },
	{ "guard check", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ABORTED_COMMAND,
	  0x10, 0x01, false, ST(MEDIA, GUARD_CHECK_ERROR), true },
	{ "application tag check", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, 0x10, 0x02, false, ST(MEDIA, APPTAG_CHECK_ERROR), true },
	{ "reference tag check", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_MEDIUM_ERROR, 0x10, 0x03, false, ST(MEDIA, REFTAG_CHECK_ERROR), true },
	{ "write protected", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_DATA_PROTECT,
	  0x27, 0x00, false, ST(GENERIC, NS_WRITE_PROTECTED), true },
	{ "space allocation failed", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_DATA_PROTECT, 0x27, 0x07, false, ST(GENERIC, CAPACITY_EXCEEDED), true },
	{ "not ready", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_NOT_READY, 0x04, 0x00,
	  false, ST(GENERIC, NS_NOT_READY), false },
	{ "medium not present", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_NOT_READY,
	  0x3a, 0x00, false, ST(GENERIC, NS_NOT_READY), false },
	{ "format in progress", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_NOT_READY,
	  0x04, 0x04, false, ST(GENERIC, FORMAT_IN_PROGRESS), false },
	{ "internal target failure", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_HARDWARE_ERROR, 0x44, 0x00, false, ST(GENERIC, INTERNAL), false },
	{ "unit attention", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_UNIT_ATTENTION,
	  0x29, 0x00, false, ST(GENERIC, COMMAND_INTERRUPTED), false },
	{ "power loss expected", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, 0x0b, 0x08, false, ST(GENERIC, ABORTED_POWER_LOSS), false },
	{ "iSCSI protocol error", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION,
	  SCSI_SK_ABORTED_COMMAND, 0x47, 0x03, false, ST(GENERIC, TRANSIENT_TRANSPORT_ERROR),
	  false },
	{ "aborted command", NVME_OPC_WRITE, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_ABORTED_COMMAND,
	  0x00, 0x00, false, ST(GENERIC, ABORT_REQUESTED), false },
	{ "recovered error", NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, SCSI_SK_RECOVERED_ERROR,
	  0x18, 0x00, false, 0, false },
	{ "reservation conflict", NVME_OPC_WRITE, SCSI_STATUS_RESERVATION_CONFLICT, 0, 0, 0, false,
	  ST(GENERIC, RESERVATION_CONFLICT), false },
	{ "busy", NVME_OPC_READ, SCSI_STATUS_BUSY, 0, 0, 0, false,
	  ST(GENERIC, COMMAND_INTERRUPTED), false },
	{ "task set full", NVME_OPC_READ, SCSI_STATUS_TASK_SET_FULL, 0, 0, 0, false,
	  ST(GENERIC, COMMAND_INTERRUPTED), false },
	{ "task aborted", NVME_OPC_READ, SCSI_STATUS_TASK_ABORTED, 0, 0, 0, false,
	  ST(GENERIC, ABORT_REQUESTED), false },
	{ "ACA active", NVME_OPC_READ, SCSI_STATUS_ACA_ACTIVE, 0, 0, 0, false,
	  ST(GENERIC, INTERNAL), false },
};

static size_t make_sense(uint8_t *s, bool descriptor, uint8_t key, uint8_t asc, uint8_t ascq)
{
	memset(s, 0, 32);
	if (descriptor) {
		s[0] = 0x72;
		s[1] = key;
		s[2] = asc;
		s[3] = ascq;
		return 8;
	}
	s[0] = SCSI_SENSE_FIXED_CURRENT;
	s[2] = key;
	s[7] = 10;
	s[12] = asc;
	s[13] = ascq;
	return SCSI_SENSE_FIXED_LEN;
}

static void test_sense_map(void)
{
	for (size_t i = 0; i < sizeof(sense_cases) / sizeof(sense_cases[0]); i++) {
		const struct sense_case *c = &sense_cases[i];
		uint8_t sense[32];
		size_t len = 0;
		bool dnr = !c->dnr;
		uint16_t st;

		if (c->status == SCSI_STATUS_CHECK_CONDITION)
			len = make_sense(sense, c->descriptor, c->key, c->asc, c->ascq);
		st = scsi_status_to_nvme(c->opc, c->status, len ? sense : NULL, len, &dnr);
		if (st != c->want || dnr != c->dnr)
			fprintf(stderr, "\n  case '%s': status 0x%x dnr %d, want 0x%x dnr %d\n",
				c->name, st, dnr, c->want, c->dnr);
		CU_ASSERT_EQUAL(st, c->want);
		CU_ASSERT_EQUAL(dnr, c->dnr);
	}
}

static void test_sense_malformed(void)
{
	uint8_t sense[32];
	uint16_t asc;
	uint8_t key;
	bool dnr;

	/* CHECK CONDITION without usable sense data is an internal error. */
	CU_ASSERT_EQUAL(scsi_status_to_nvme(NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, NULL, 0,
					    &dnr),
			ST(GENERIC, INTERNAL));
	memset(sense, 0, sizeof(sense));
	sense[0] = 0x7f; /* vendor specific format */
	CU_ASSERT_FALSE(scsi_sense_parse(sense, sizeof(sense), &key, &asc));
	CU_ASSERT_EQUAL(scsi_status_to_nvme(NVME_OPC_READ, SCSI_STATUS_CHECK_CONDITION, sense,
					    sizeof(sense), &dnr),
			ST(GENERIC, INTERNAL));
	/* Fixed format cut before ASC: the key alone still counts. */
	make_sense(sense, false, SCSI_SK_MISCOMPARE, 0x1d, 0);
	CU_ASSERT_TRUE(scsi_sense_parse(sense, 8, &key, &asc));
	CU_ASSERT_EQUAL(key, SCSI_SK_MISCOMPARE);
	CU_ASSERT_EQUAL(asc, 0);
	CU_ASSERT_FALSE(scsi_sense_parse(sense, 2, &key, &asc));
	/* Descriptor format shorter than its header. */
	make_sense(sense, true, SCSI_SK_ILLEGAL_REQUEST, 0x21, 0);
	CU_ASSERT_FALSE(scsi_sense_parse(sense, 3, &key, &asc));
	/* Deferred errors (71h/73h) parse like current ones. */
	make_sense(sense, false, SCSI_SK_MEDIUM_ERROR, 0x11, 0);
	sense[0] = 0x71;
	CU_ASSERT_TRUE(scsi_sense_parse(sense, 18, &key, &asc));
	CU_ASSERT_EQUAL(asc, SCSI_ASC_UNRECOVERED_READ_ERROR);
	/* Unit attention detection. */
	make_sense(sense, false, SCSI_SK_UNIT_ATTENTION, 0x29, 0);
	CU_ASSERT_TRUE(scsi_is_unit_attention(SCSI_STATUS_CHECK_CONDITION, sense, 18));
	CU_ASSERT_FALSE(scsi_is_unit_attention(SCSI_STATUS_GOOD, sense, 18));
	make_sense(sense, false, SCSI_SK_NOT_READY, 0x04, 0);
	CU_ASSERT_FALSE(scsi_is_unit_attention(SCSI_STATUS_CHECK_CONDITION, sense, 18));
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "read/write/verify CDBs", test_rw },
		{ "4096-byte blocks", test_block_size },
		{ "flush", test_flush },
		{ "write zeroes", test_write_zeroes },
		{ "compare", test_compare },
		{ "deallocate", test_unmap },
		{ "untranslatable commands", test_untranslatable },
		{ "sense to status", test_sense_map },
		{ "malformed sense", test_sense_malformed },
		CU_TEST_INFO_NULL,
	};

	return ut_run("scsi_encap", NULL, NULL, tests);
}
