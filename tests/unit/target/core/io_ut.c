/* SPDX-License-Identifier: MIT */
/* NVM I/O commands: checks, data movement, FUA, Write Zeroes, DSM, Compare, Verify, Flush,
 * backend errors, statistics, namespace removal under I/O and mapped read data. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "common/endian.h"
#include "core/fused.h"
#include "core/lba_status.h"
#include "core/reservation.h"
#include "tests/unit/target/core/fakes.h"

#define NBLOCKS 2048 /* ram:1M with 512-byte blocks */

static struct fake_env env;

static uint64_t ns_busy(const struct nvmf_ns *ns)
{
	uint64_t n = 0;

	for (int i = 0; i < NVMF_NS_REF_SLOTS; i++)
		n += ns->inflight[i].n;
	return n;
}

static void setup(const char *spec)
{
	fake_env_setup(&env, spec);
	fake_env_connect(&env, 0, 1, 1);
}

static void rw_cmd(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid, uint64_t slba,
		   uint32_t nlb)
{
	fake_cmd(cmd, opc, nsid);
	put_le32(&cmd->cdw10, (uint32_t)slba);
	put_le32(&cmd->cdw11, (uint32_t)(slba >> 32));
	put_le32(&cmd->cdw12, (nlb - 1) & 0xffff);
}

static uint16_t io(uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb, void *data,
		   uint32_t len)
{
	struct nvme_cmd cmd;

	rw_cmd(&cmd, opc, nsid, slba, nlb);
	return fake_exec(&env.io[0], &cmd, data, len, NULL);
}

/* ---- checks --------------------------------------------------------------------------------- */

static const struct {
	const char *name;
	uint8_t opc;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;
	uint32_t len;
	uint16_t status;
} checks[] = {
	{ "read ok", NVME_OPC_READ, 1, 0, 8, 4096, 0 },
	{ "read last block", NVME_OPC_READ, 1, NBLOCKS - 1, 1, 512, 0 },
	{ "read past end", NVME_OPC_READ, 1, NBLOCKS - 1, 2, 1024, ST_LBA_RANGE },
	{ "read slba beyond", NVME_OPC_READ, 1, NBLOCKS, 1, 512, ST_LBA_RANGE },
	{ "read slba overflow", NVME_OPC_READ, 1, UINT64_MAX, 2, 1024, ST_LBA_RANGE },
	{ "write past end", NVME_OPC_WRITE, 1, NBLOCKS - 4, 8, 4096, ST_LBA_RANGE },
	{ "nsid 0", NVME_OPC_READ, 0, 0, 1, 512, ST_INVALID_NS },
	{ "nsid inactive", NVME_OPC_READ, 2, 0, 1, 512, ST_INVALID_NS },
	{ "nsid beyond NN", NVME_OPC_READ, 5000, 0, 1, 512, ST_INVALID_NS },
	{ "nsid all on read", NVME_OPC_READ, 0xffffffff, 0, 1, 512, ST_INVALID_NS },
	{ "beyond MDTS", NVME_OPC_READ, 1, 0, 257, 257 * 512, ST_INVALID_FIELD },
	{ "SGL shorter than NLB", NVME_OPC_WRITE, 1, 0, 8, 2048, ST_SGL_LEN },
	{ "SGL longer than NLB", NVME_OPC_READ, 1, 0, 1, 1024, ST_SGL_LEN },
	{ "unknown opcode", 0x7e, 1, 0, 1, 0, ST_INVALID_OPCODE },
	{ "admin opcode on I/O queue", NVME_ADMIN_IDENTIFY, 1, 0, 1, 4096, ST_INVALID_OPCODE },
	{ "write uncorrectable", NVME_OPC_WRITE_UNCORRECTABLE, 1, 0, 1, 0, ST_INVALID_OPCODE },
	{ "reservation report, no buffer", NVME_OPC_RESERVATION_REPORT, 1, 0, 1, 0,
	  NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_HOSTID_INCONSISTENT_FORMAT) },
	{ "reservation register, inactive ns", NVME_OPC_RESERVATION_REGISTER, 4, 0, 1, 16,
	  ST_INVALID_NS },
	{ "write zeroes past end", NVME_OPC_WRITE_ZEROES, 1, NBLOCKS - 1, 2, 0, ST_LBA_RANGE },
	{ "verify past end", NVME_OPC_VERIFY, 1, NBLOCKS, 1, 0, ST_LBA_RANGE },
	{ "compare past end", NVME_OPC_COMPARE, 1, NBLOCKS - 1, 2, 1024, ST_LBA_RANGE },
	{ "flush inactive ns", NVME_OPC_FLUSH, 3, 0, 1, 0, ST_INVALID_NS },
};

static void test_checks(void)
{
	static uint8_t buf[FAKE_DATA_MAX];

	setup("ram:1M");
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		uint16_t st = io(checks[i].opc, checks[i].nsid, checks[i].slba, checks[i].nlb, buf,
				 checks[i].len);

		if (st != checks[i].status)
			fprintf(stderr, "\ncase %s: status %#x\n", checks[i].name, st);
		CU_ASSERT_EQUAL(st, checks[i].status);
		CU_ASSERT(!(st & 1));
		/* every error here is final */
		if (st)
			CU_ASSERT(st & NVME_STATUS_DNR);
	}
	fake_env_teardown(&env);
}

static void test_fused_and_not_ready(void)
{
	struct nvme_cmd cmd;
	uint8_t buf[512];

	setup("ram:1M");
	rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 512, NULL), ST_INVALID_FIELD);
	/* PSDT 10b is not valid on fabrics */
	rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1);
	cmd.flags = 2u << NVME_CMD_PSDT_SHIFT;
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 512, NULL), ST_INVALID_FIELD);
	/* after a shutdown, I/O is refused */
	CU_ASSERT_EQUAL(fake_prop_set(&env.admin, NVME_REG_CC,
				      NVME_CC_EN | 6u << 16 | 4u << 20 | 1u << NVME_CC_SHN_SHIFT),
			0);
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 1, buf, 512), ST_CMD_SEQ);
	fake_env_teardown(&env);
}

/* ---- data path ------------------------------------------------------------------------------ */

static void test_read_write(void)
{
	static uint8_t w[65536], r[65536];
	uint8_t *mem;

	setup("ram:1M");
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i * 7 + 3);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 100, 128, w, sizeof(w)), 0);
	CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_WRITE);
	CU_ASSERT_EQUAL(fake_bdev.last.offset, 100 * 512);
	CU_ASSERT_EQUAL(fake_bdev.last.len, sizeof(w));
	CU_ASSERT(!fake_bdev.last.fua);
	mem = fake_bdev_mem(env.subsys->ns[1]->bdev);
	CU_ASSERT(!memcmp(mem + 100 * 512, w, sizeof(w)));
	memset(r, 0, sizeof(r));
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 100, 128, r, sizeof(r)), 0);
	CU_ASSERT(!memcmp(r, w, sizeof(w)));
	/* the namespace reference is dropped at completion */
	CU_ASSERT_EQUAL(ns_busy(env.subsys->ns[1]), 0);
	fake_env_teardown(&env);
}

static void test_fua(void)
{
	struct nvme_cmd cmd;
	uint8_t buf[512] = { 1 };

	/* ram: no volatile cache, FUA only when asked */
	setup("ram:1M");
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 0, 1);
	put_le32(&cmd.cdw12, NVME_RW_FUA);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 512, NULL), 0);
	CU_ASSERT(fake_bdev.last.fua);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 1, buf, 512), 0);
	CU_ASSERT(!fake_bdev.last.fua);
	fake_env_teardown(&env);

	/* file: volatile cache. Before Identify reported VWC, every write is made durable. */
	setup("file:1M");
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 1, buf, 512), 0);
	CU_ASSERT(fake_bdev.last.fua);
	{
		static uint8_t id[4096];

		fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 0);
		put_le32(&cmd.cdw10, NVME_ID_CNS_CTRL);
		CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, id, 4096, NULL), 0);
		CU_ASSERT_EQUAL(((struct nvme_id_ctrl *)id)->vwc & 7, 7);
	}
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 1, buf, 512), 0);
	CU_ASSERT(!fake_bdev.last.fua);
	/* cache disabled through Set Features: durable again */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_VOLATILE_WC);
	put_le32(&cmd.cdw11, 0);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 1, buf, 512), 0);
	CU_ASSERT(fake_bdev.last.fua);
	fake_env_teardown(&env);
}

static void test_write_zeroes(void)
{
	struct nvme_cmd cmd;
	static uint8_t w[4096];
	uint8_t *mem;

	setup("ram:1M");
	memset(w, 0xab, sizeof(w));
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 8, 8, w, sizeof(w)), 0);
	mem = fake_bdev_mem(env.subsys->ns[1]->bdev);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE_ZEROES, 1, 9, 2, NULL, 0), 0);
	CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_WRITE_ZEROES);
	CU_ASSERT_EQUAL(fake_bdev.last.offset, 9 * 512);
	CU_ASSERT_EQUAL(fake_bdev.last.len, 1024);
	CU_ASSERT_EQUAL(mem[8 * 512], 0xab);
	CU_ASSERT_EQUAL(mem[9 * 512], 0);
	CU_ASSERT_EQUAL(mem[11 * 512 - 1], 0);
	CU_ASSERT_EQUAL(mem[11 * 512], 0xab);
	/* DEAC: deallocate */
	rw_cmd(&cmd, NVME_OPC_WRITE_ZEROES, 1, 12, 4);
	put_le32(&cmd.cdw12, 3 | NVME_RW_DEAC);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, NULL, 0, NULL), 0);
	CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_DISCARD);
	CU_ASSERT_EQUAL(fake_bdev.last.offset, 12 * 512);
	CU_ASSERT_EQUAL(fake_bdev.last.len, 2048);
	CU_ASSERT_EQUAL(mem[12 * 512], 0);
	fake_env_teardown(&env);
}

static void dsm_cmd(struct nvme_cmd *cmd, uint32_t nr, uint32_t attr)
{
	fake_cmd(cmd, NVME_OPC_DATASET_MANAGEMENT, 1);
	put_le32(&cmd->cdw10, nr - 1);
	put_le32(&cmd->cdw11, attr);
}

static void put_range(uint8_t *b, unsigned int i, uint64_t slba, uint32_t nlb)
{
	struct nvme_dsm_range *r = (struct nvme_dsm_range *)(b + 16 * i);

	put_le32(&r->cattr, 0);
	put_le32(&r->nlb, nlb);
	put_le64(&r->slba, slba);
}

static void test_dsm(void)
{
	struct nvme_cmd cmd;
	static uint8_t ranges[4096];
	static uint8_t w[NBLOCKS * 512];
	uint8_t *mem;

	setup("ram:1M");
	memset(w, 0x5c, sizeof(w));
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 256, w, 256 * 512), 0);
	mem = fake_bdev_mem(env.subsys->ns[1]->bdev);

	/* three ranges, one empty: two discards */
	memset(ranges, 0, sizeof(ranges));
	put_range(ranges, 0, 0, 2);
	put_range(ranges, 1, 50, 0);
	put_range(ranges, 2, 100, 10);
	dsm_cmd(&cmd, 3, NVME_DSM_ATTR_AD);
	fake_bdev_reset();
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, ranges, 48, NULL), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_DISCARD], 2);
	CU_ASSERT_EQUAL(fake_bdev.last.offset, 100 * 512);
	CU_ASSERT_EQUAL(fake_bdev.last.len, 10 * 512);
	CU_ASSERT_EQUAL(mem[0], 0);
	CU_ASSERT_EQUAL(mem[2 * 512], 0x5c);
	CU_ASSERT_EQUAL(mem[100 * 512], 0);
	CU_ASSERT_EQUAL(mem[110 * 512], 0x5c);

	/* one bad range: nothing is discarded */
	put_range(ranges, 0, 200, 2);
	put_range(ranges, 1, NBLOCKS - 1, 2);
	dsm_cmd(&cmd, 2, NVME_DSM_ATTR_AD);
	fake_bdev_reset();
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, ranges, 32, NULL), ST_LBA_RANGE);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_DISCARD], 0);
	CU_ASSERT_EQUAL(mem[200 * 512], 0x5c);

	/* 256 ranges, all discarded without recursion trouble */
	for (unsigned int i = 0; i < 256; i++)
		put_range(ranges, i, i * 4, 1);
	dsm_cmd(&cmd, 256, NVME_DSM_ATTR_AD);
	fake_bdev_reset();
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, ranges, 4096, NULL), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_DISCARD], 256);

	/* hints only: nothing submitted */
	dsm_cmd(&cmd, 1, NVME_DSM_ATTR_IDR);
	fake_bdev_reset();
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, ranges, 16, NULL), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_DISCARD], 0);

	/* data shorter than NR ranges */
	dsm_cmd(&cmd, 4, NVME_DSM_ATTR_AD);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, ranges, 32, NULL), ST_SGL_LEN);
	fake_env_teardown(&env);
}

static void test_compare(void)
{
	static uint8_t w[8192], c[8192];

	setup("ram:1M");
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i ^ 0x3c);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 20, 16, w, sizeof(w)), 0);
	memcpy(c, w, sizeof(c));
	CU_ASSERT_EQUAL(io(NVME_OPC_COMPARE, 1, 20, 16, c, sizeof(c)), 0);
	/* a difference in the last byte (second iovec, second chunk) */
	fake_buf_size = 4096;
	c[8191] ^= 1;
	CU_ASSERT_EQUAL(io(NVME_OPC_COMPARE, 1, 20, 16, c, sizeof(c)),
			NVMF_ST_DNR(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	c[8191] ^= 1;
	CU_ASSERT_EQUAL(io(NVME_OPC_COMPARE, 1, 20, 16, c, sizeof(c)), 0);
	/* no scratch buffer: retryable */
	fake_buf_exhausted = true;
	CU_ASSERT_EQUAL(io(NVME_OPC_COMPARE, 1, 20, 16, c, sizeof(c)),
			NVMF_ST(NVME_SCT_GENERIC, NVME_SC_COMMAND_INTERRUPTED));
	fake_buf_exhausted = false;
	fake_env_teardown(&env);
}

static void test_verify(void)
{
	setup("ram:1M");
	fake_bdev_reset();
	CU_ASSERT_EQUAL(io(NVME_OPC_VERIFY, 1, 0, 16, NULL, 0), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_READ], 0); /* memory: range check only */
	fake_env_teardown(&env);

	/* persistent backend: every block is read back (in scratch-sized chunks) */
	setup("file:1M");
	fake_buf_size = 4096;
	fake_bdev_reset();
	CU_ASSERT_EQUAL(io(NVME_OPC_VERIFY, 1, 0, 2048, NULL, 0), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_READ], 2048 * 512 / 4096);
	fake_bdev.fail_rc = -EIO;
	CU_ASSERT_EQUAL(io(NVME_OPC_VERIFY, 1, 0, 8, NULL, 0),
			NVMF_ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR));
	fake_env_teardown(&env);
}

static void test_flush(void)
{
	struct fake_env *e = &env;
	struct nvmf_ns_opts o = { .path = "file:64K", .enabled = true };
	char err[64];

	setup("file:1M");
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(e->subsys, &o, err, sizeof(err)), 2);
	o.path = "ram:64K";
	o.nsid = 7;
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(e->subsys, &o, err, sizeof(err)), 7);
	fake_bdev_reset();
	CU_ASSERT_EQUAL(io(NVME_OPC_FLUSH, 2, 0, 1, NULL, 0), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_FLUSH], 1);
	fake_bdev_reset();
	CU_ASSERT_EQUAL(io(NVME_OPC_FLUSH, 0xffffffff, 0, 1, NULL, 0), 0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_FLUSH], 3);
	/* every namespace reference dropped */
	for (uint32_t nsid = 1; nsid <= 7; nsid++)
		if (e->subsys->ns[nsid])
			CU_ASSERT_EQUAL(ns_busy(e->subsys->ns[nsid]), 0);
	fake_bdev.fail_rc = -EIO;
	CU_ASSERT_EQUAL(io(NVME_OPC_FLUSH, 0xffffffff, 0, 1, NULL, 0),
			NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
	fake_env_teardown(&env);
}

static const struct {
	uint8_t opc;
	int rc;
	uint16_t status;
} errmap[] = {
	{ NVME_OPC_READ, -EIO, NVMF_ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR) },
	{ NVME_OPC_WRITE, -EIO, NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT) },
	{ NVME_OPC_WRITE, -ENOSPC, NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED) },
	{ NVME_OPC_READ, -ENOMEM, ST_INTERNAL },
	{ NVME_OPC_WRITE_ZEROES, -EIO, NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT) },
	{ NVME_OPC_COMPARE, -EIO, NVMF_ST(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ_ERROR) },
};

static void test_backend_errors(void)
{
	static uint8_t buf[4096];

	setup("ram:1M");
	for (size_t i = 0; i < sizeof(errmap) / sizeof(errmap[0]); i++) {
		bool data = errmap[i].opc != NVME_OPC_WRITE_ZEROES;

		fake_bdev.fail_rc = errmap[i].rc;
		CU_ASSERT_EQUAL(io(errmap[i].opc, 1, 0, 8, buf, data ? 4096 : 0),
				errmap[i].status);
	}
	fake_bdev.fail_rc = 0;
	/* errors land in the error log */
	CU_ASSERT(env.admin.qp.ctrlr->err_count >= sizeof(errmap) / sizeof(errmap[0]));
	fake_env_teardown(&env);
}

/* A passthrough namespace: the target checks range, MDTS and reservations, the drive runs
 * the command and its status goes back unchanged. */
static void test_passthrough(void)
{
	static uint8_t buf[8192];
	struct bdev_nvme_id drive = { .nsid = 9,
				      .max_xfer = 4096,
				      .oncs = NVME_CTRL_ONCS_WRITE_UNCORRECTABLE };
	static const uint8_t opcs[] = { NVME_OPC_READ,    NVME_OPC_WRITE,
					NVME_OPC_COMPARE, NVME_OPC_WRITE_ZEROES,
					NVME_OPC_VERIFY,  NVME_OPC_WRITE_UNCORRECTABLE,
					NVME_OPC_FLUSH };
	const uint16_t media = NVME_STATUS(NVME_SCT_MEDIA, 0x81) | NVME_STATUS_DNR;
	struct nvmf_ns *ns;

	setup("ram:1M");
	/* Write Uncorrectable needs a drive. */
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE_UNCORRECTABLE, 1, 0, 1, NULL, 0), ST_INVALID_OPCODE);
	ns = env.subsys->ns[1];
	ns->bdev->nvme = &drive;
	for (size_t i = 0; i < sizeof(opcs); i++) {
		bool data = opcs[i] == NVME_OPC_READ || opcs[i] == NVME_OPC_WRITE ||
			    opcs[i] == NVME_OPC_COMPARE;

		fake_bdev.nvme_status = 0;
		memset(&fake_bdev.last, 0, sizeof(fake_bdev.last));
		CU_ASSERT_EQUAL(io(opcs[i], 1, 8, 8, data ? buf : NULL, data ? 4096 : 0), ST_OK);
		CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_NVME);
		CU_ASSERT_EQUAL(fake_bdev.last.len, data ? 4096 : 0);
		fake_bdev.nvme_status = media;
		CU_ASSERT_EQUAL(io(opcs[i], 1, 8, 8, data ? buf : NULL, data ? 4096 : 0), media);
	}
	fake_bdev.nvme_status = 0;
	/* Dataset Management: the range list is the data. */
	{
		struct nvme_cmd cmd;

		fake_cmd(&cmd, NVME_OPC_DATASET_MANAGEMENT, 1);
		put_le32(&cmd.cdw11, 1u << 2); /* AD */
		memset(buf, 0, 32);
		CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 32, NULL), ST_OK);
		CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_NVME);
		CU_ASSERT_EQUAL(fake_bdev.last.len, 32);
	}
	/* The target's own checks come first: range, and the drive's MDTS. */
	fake_bdev.last.op = BDEV_OP_READ;
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 2048, 8, buf, 4096), ST_LBA_RANGE);
	CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_READ);
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 16, buf, 8192), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_READ);
	ns->bdev->nvme = NULL;
	fake_env_teardown(&env);
}

static void test_stats(void)
{
	static uint8_t buf[8192];
	struct nvmf_qpair_stats st;

	setup("ram:1M");
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 16, buf, 8192), 0);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 1, buf, 512), 0);
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 8, buf, 4096), 0);
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 999999, buf, 512), ST_LBA_RANGE);
	CU_ASSERT_EQUAL(env.io[0].qp.stats.write_cmds, 2);
	CU_ASSERT_EQUAL(env.io[0].qp.stats.write_bytes, 8704);
	CU_ASSERT_EQUAL(env.io[0].qp.stats.read_cmds, 1);
	CU_ASSERT_EQUAL(env.io[0].qp.stats.read_bytes, 4096);
	nvmf_subsys_get_stats(env.subsys, &st);
	CU_ASSERT_EQUAL(st.write_cmds, 2);
	CU_ASSERT_EQUAL(st.read_bytes, 4096);
	/* folded into the subsystem when the queue goes */
	fake_qpair_close(&env.io[0]);
	nvmf_subsys_get_stats(env.subsys, &st);
	CU_ASSERT_EQUAL(st.write_cmds, 2);
	CU_ASSERT_EQUAL(st.write_bytes, 8704);
	CU_ASSERT_EQUAL(st.read_cmds, 1);
	fake_env_teardown(&env);
}

/* ---- namespace removal with I/O in flight --------------------------------------------------- */

static void *remove_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)nvmf_subsys_remove_ns(env.subsys, 1);
}

static void test_remove_in_use(void)
{
	static uint8_t buf[4096];
	struct fake_req *fr;
	struct nvme_cmd cmd;
	pthread_t t;
	void *rc;
	unsigned int closes;

	setup("ram:1M");
	fake_bdev.defer = true;
	fr = fake_req_alloc(&env.io[0]);
	rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 8);
	fake_req_prep(fr, &cmd, NULL, 4096);
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 0);
	closes = fake_bdev.nclose;

	CU_ASSERT_EQUAL(pthread_create(&t, NULL, remove_thread, NULL), 0);
	for (int i = 0; i < 2000 && __atomic_load_n(&env.subsys->ns[1], __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	CU_ASSERT_PTR_NULL(env.subsys->ns[1]);
	/* new I/O fails cleanly while the old one is still in flight */
	fake_bdev.defer = false;
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 8, buf, 4096), ST_INVALID_NS);
	usleep(20000);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes); /* still waiting for the read */
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	pthread_join(t, &rc);
	CU_ASSERT_EQUAL((intptr_t)rc, 0);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes + 1);
	fake_req_free(fr);
	fake_env_teardown(&env);
}

/* ---- mapped read data ---------------------------------------------------------------------- */

/* A Read on a queue that takes mapped data: req->iov describes the namespace memory, the
 * namespace stays held past the completion until nvmf_req_release_data(). */
static void test_read_mapped(void)
{
	static uint8_t w[4096];
	struct nvmf_ns *ns;
	struct fake_req *fr;
	struct nvme_cmd cmd;
	uint8_t *mem;

	setup("ram:1M");
	ns = env.subsys->ns[1];
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i * 5 + 1);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 100, 8, w, sizeof(w)), 0);
	mem = fake_bdev_mem(ns->bdev);
	fake_bdev.map_reads = true;
	env.io[0].qp.map_read_data = true;

	fr = fake_req_alloc(&env.io[0]);
	rw_cmd(&cmd, NVME_OPC_READ, 1, 100, 8);
	fake_req_prep(fr, &cmd, NULL, sizeof(w));
	memset(fr->data, 0xee, sizeof(w));
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	CU_ASSERT_TRUE(fake_bdev.last.map_ok);
	CU_ASSERT_TRUE(nvmf_req_data_mapped(&fr->req));
	CU_ASSERT_EQUAL(fr->req.iovcnt, 1);
	CU_ASSERT_PTR_EQUAL(fr->req.iov[0].iov_base, mem + 100 * 512);
	CU_ASSERT_EQUAL(fr->req.iov[0].iov_len, sizeof(w));
	CU_ASSERT(!memcmp(fr->req.iov[0].iov_base, w, sizeof(w)));
	CU_ASSERT_EQUAL(fr->data[0], 0xee); /* nothing copied into the transport's buffer */
	/* completed, but the namespace is held until the transport is done with the data */
	CU_ASSERT_EQUAL(ns_busy(ns), 1);
	CU_ASSERT_EQUAL(nvmf_ns_outstanding(ns), 1);
	CU_ASSERT_PTR_EQUAL(fr->req.ns, ns);
	nvmf_req_release_data(&fr->req);
	CU_ASSERT_EQUAL(ns_busy(ns), 0);
	CU_ASSERT_FALSE(nvmf_req_data_mapped(&fr->req));
	CU_ASSERT_PTR_NULL(fr->req.ns);
	CU_ASSERT_EQUAL(fr->req.iovcnt, 0);
	nvmf_req_release_data(&fr->req); /* a second release is a no-op */
	CU_ASSERT_EQUAL(ns_busy(ns), 0);
	fake_req_free(fr);
	CU_ASSERT_EQUAL(ns_busy(ns), 0);

	/* the data stats count it as a read */
	CU_ASSERT_EQUAL(env.io[0].qp.stats.read_cmds, 1);
	CU_ASSERT_EQUAL(env.io[0].qp.stats.read_bytes, sizeof(w));
	fake_env_teardown(&env);
}

/* What is not mapped: queues that did not ask, failed reads, Compare, fused Compare and
 * Write, writes. Those drop the namespace at completion as before. */
static void test_read_not_mapped(void)
{
	static uint8_t w[4096], r[4096];
	struct nvmf_ns *ns;
	struct nvme_cmd cmd;
	struct fake_req *fr;

	setup("ram:1M");
	ns = env.subsys->ns[1];
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i * 3 + 2);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 8, w, sizeof(w)), 0);
	fake_bdev.map_reads = true;

	/* queue without map_read_data: copied */
	memset(r, 0, sizeof(r));
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 8, r, sizeof(r)), 0);
	CU_ASSERT_FALSE(fake_bdev.last.map_ok);
	CU_ASSERT(!memcmp(r, w, sizeof(w)));
	CU_ASSERT_EQUAL(ns_busy(ns), 0);

	env.io[0].qp.map_read_data = true;
	/* the backend fails: not mapped, reference dropped */
	fake_bdev.fail_rc = -EIO;
	fr = fake_req_alloc(&env.io[0]);
	rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 8);
	fake_req_prep(fr, &cmd, NULL, sizeof(w));
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_NOT_EQUAL(fake_status(fr), 0);
	CU_ASSERT_FALSE(nvmf_req_data_mapped(&fr->req));
	CU_ASSERT_EQUAL(ns_busy(ns), 0);
	fake_req_free(fr);
	fake_bdev.fail_rc = 0;

	/* Compare reads into scratch: copied, never mapped */
	CU_ASSERT_EQUAL(io(NVME_OPC_COMPARE, 1, 0, 8, w, sizeof(w)), 0);
	CU_ASSERT_EQUAL(fake_bdev.last.op, BDEV_OP_READ);
	CU_ASSERT_FALSE(fake_bdev.last.map_ok);
	CU_ASSERT_EQUAL(ns_busy(ns), 0);

	/* a write on a mapping queue is a write */
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 8, 8, w, sizeof(w)), 0);
	CU_ASSERT_FALSE(fake_bdev.last.map_ok);
	CU_ASSERT_FALSE(fake_bdev.last.mapped);
	CU_ASSERT_EQUAL(ns_busy(ns), 0);
	fake_env_teardown(&env);
}

/* Removing the namespace while a mapped read's data is still queued: the backend stays
 * open (its memory mapped) until the transport releases the data. */
static void test_remove_while_mapped(void)
{
	struct fake_req *fr;
	struct nvme_cmd cmd;
	unsigned int closes;
	pthread_t t;
	void *rc;

	setup("ram:1M");
	fake_bdev.map_reads = true;
	env.io[0].qp.map_read_data = true;
	fr = fake_req_alloc(&env.io[0]);
	rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 8);
	fake_req_prep(fr, &cmd, NULL, 4096);
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_TRUE_FATAL(nvmf_req_data_mapped(&fr->req));
	closes = fake_bdev.nclose;

	CU_ASSERT_EQUAL(pthread_create(&t, NULL, remove_thread, NULL), 0);
	for (int i = 0; i < 2000 && __atomic_load_n(&env.subsys->ns[1], __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	CU_ASSERT_PTR_NULL(env.subsys->ns[1]);
	usleep(20000);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes); /* the data is still lent out */
	nvmf_req_release_data(&fr->req);
	pthread_join(t, &rc);
	CU_ASSERT_EQUAL((intptr_t)rc, 0);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes + 1);
	fake_req_free(fr);
	fake_env_teardown(&env);
}

static void test_sqhd(void)
{
	static uint8_t buf[512];
	struct fake_req *fr;
	struct nvme_cmd cmd;

	setup("ram:1M");
	/* connect consumed entry 0; queue of 128 entries wraps */
	fr = fake_req_alloc(&env.io[0]);
	for (unsigned int i = 1; i <= 130; i++) {
		rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1);
		fake_req_prep(fr, &cmd, buf, 512);
		nvmf_req_exec(&fr->req);
		CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqhd), (i + 1) % 128);
		CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqid), 1);
		CU_ASSERT_EQUAL(fr->req.rsp.cid, cmd.cid);
	}
	fake_req_free(fr);
	fake_env_teardown(&env);
}

/* ---- commands the SCSI front end relies on: fused Compare and Write, reservations, LBA
 * allocation status (their logic lives in fused.c, reservation.c, lba_status.c; these check
 * the dispatch) ---------------------------------------------------------------------------- */

static struct fake_req *submit(struct fake_qpair *q, const struct nvme_cmd *cmd, void *data,
			       uint32_t len)
{
	struct fake_req *fr = fake_req_alloc(q);

	fake_req_prep(fr, cmd, data, len);
	nvmf_req_exec(&fr->req);
	return fr;
}

static void test_fused(void)
{
	static uint8_t old[4096], new[4096];
	struct fake_req *first, *second;
	struct nvme_cmd cmd;
	uint8_t *mem;

	setup("ram:1M");
	memset(old, 0x11, sizeof(old));
	memset(new, 0x22, sizeof(new));
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 8, 8, old, 4096), 0);
	mem = fake_bdev_mem(env.subsys->ns[1]->bdev);

	/* matching compare: the write happens, both complete successfully */
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 8);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, old, 4096);
	CU_ASSERT_EQUAL(first->completions, 0); /* parked for its second */
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 8, 8);
	cmd.flags |= NVME_CMD_FUSE_SECOND;
	second = submit(&env.io[0], &cmd, new, 4096);
	CU_ASSERT_EQUAL(first->completions, 1);
	CU_ASSERT_EQUAL(second->completions, 1);
	CU_ASSERT_EQUAL(fake_status(first), 0);
	CU_ASSERT_EQUAL(fake_status(second), 0);
	CU_ASSERT_EQUAL(mem[8 * 512], 0x22);
	fake_req_free(first);
	fake_req_free(second);

	/* mismatch: Compare Failure, the write is not done */
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 8);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, old, 4096);
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 8, 8);
	cmd.flags |= NVME_CMD_FUSE_SECOND;
	second = submit(&env.io[0], &cmd, old, 4096);
	CU_ASSERT_EQUAL(fake_status(first), NVMF_ST_DNR(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	CU_ASSERT_EQUAL(fake_status(second),
			NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED));
	CU_ASSERT_EQUAL(mem[8 * 512], 0x22);
	fake_req_free(first);
	fake_req_free(second);

	/* a plain command between the two: the first is aborted (missing fused) */
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 8);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, new, 4096);
	CU_ASSERT_EQUAL(io(NVME_OPC_READ, 1, 0, 1, old, 512), 0);
	CU_ASSERT_EQUAL(first->completions, 1);
	CU_ASSERT_EQUAL(fake_status(first),
			NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_MISSING_FUSED));
	fake_req_free(first);

	/* a parked first command is released when the queue goes away */
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 8);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, new, 4096);
	CU_ASSERT_EQUAL(first->completions, 0);
	fake_qpair_close(&env.io[0]);
	CU_ASSERT_EQUAL(first->completions, 1);
	fake_req_free(first);

	/* fused bits on the admin queue */
	fake_cmd(&cmd, NVME_ADMIN_KEEP_ALIVE, 0);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), ST_INVALID_FIELD);
	fake_env_teardown(&env);
}

/* A backend whose compare-and-write other targets honour too (rbd): the pair becomes one
 * BDEV_OP_COMPARE_AND_WRITE, and a pair longer than its atomic unit is refused. */
static void test_fused_shared(void)
{
	static uint8_t old[1024], new[1024], buf[4096];
	struct fake_req *first, *second;
	struct nvme_cmd cmd;
	unsigned int caws, reads;
	uint8_t *mem;
	uint32_t dw0 = 1;

	setup("shared:1M");
	memset(old, 0x11, sizeof(old));
	memset(new, 0x22, sizeof(new));
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 8, 2, old, 1024), 0);
	mem = fake_bdev_mem(env.subsys->ns[1]->bdev);
	caws = fake_bdev.nsubmit[BDEV_OP_COMPARE_AND_WRITE];
	reads = fake_bdev.nsubmit[BDEV_OP_READ];

	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 1);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, old, 512);
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 8, 1);
	cmd.flags |= NVME_CMD_FUSE_SECOND;
	second = submit(&env.io[0], &cmd, new, 512);
	CU_ASSERT_EQUAL(fake_status(first), 0);
	CU_ASSERT_EQUAL(fake_status(second), 0);
	CU_ASSERT_EQUAL(mem[8 * 512], 0x22);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_COMPARE_AND_WRITE], caws + 1);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_READ], reads); /* no read-compare-write */
	CU_ASSERT_EQUAL(fake_bdev.last.cmp_iovcnt, first->req.iovcnt);
	fake_req_free(first);
	fake_req_free(second);

	/* mismatch at byte 100: Compare Failure, nothing written; DW0 stays 0 for a
	 * fabric host (the offset goes to the in-process SCSI front end only) */
	memcpy(buf, new, 512);
	buf[100] ^= 1;
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 1);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, buf, 512);
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 8, 1);
	cmd.flags |= NVME_CMD_FUSE_SECOND;
	second = submit(&env.io[0], &cmd, old, 512);
	CU_ASSERT_EQUAL(fake_status(first), NVMF_ST_DNR(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	CU_ASSERT_EQUAL(fake_status(second),
			NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED));
	CU_ASSERT_EQUAL(fake_dw0(first), 0);
	CU_ASSERT_EQUAL(mem[8 * 512], 0x22);
	fake_req_free(first);
	fake_req_free(second);

	/* two blocks: more than one atomic unit, refused without touching the backend */
	caws = fake_bdev.nsubmit[BDEV_OP_COMPARE_AND_WRITE];
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 2);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, old, 1024);
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 8, 2);
	cmd.flags |= NVME_CMD_FUSE_SECOND;
	second = submit(&env.io[0], &cmd, new, 1024);
	CU_ASSERT_EQUAL(fake_status(first), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_status(second), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_COMPARE_AND_WRITE], caws);
	fake_req_free(first);
	fake_req_free(second);

	/* backend failure: the pair fails as a unit */
	fake_bdev.fail_rc = -EIO;
	fake_bdev.fail_op = BDEV_OP_COMPARE_AND_WRITE;
	rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 8, 1);
	cmd.flags |= NVME_CMD_FUSE_FIRST;
	first = submit(&env.io[0], &cmd, new, 512);
	rw_cmd(&cmd, NVME_OPC_WRITE, 1, 8, 1);
	cmd.flags |= NVME_CMD_FUSE_SECOND;
	second = submit(&env.io[0], &cmd, old, 512);
	CU_ASSERT_EQUAL(fake_status(first), NVMF_ST(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
	CU_ASSERT_EQUAL(fake_status(second),
			NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED));
	fake_bdev_reset();
	fake_req_free(first);
	fake_req_free(second);

	/* Identify Namespace: NACWU (0: one block) is valid */
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 1);
	put_le32(&cmd.cdw10, NVME_ID_CNS_NS);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, buf, 4096, &dw0), 0);
	CU_ASSERT_TRUE(buf[24] & NVME_NS_NSFEAT_NSABP);
	CU_ASSERT_EQUAL(get_le16(&buf[offsetof(struct nvme_id_ns, nacwu)]), 0);
	fake_env_teardown(&env);

	/* a RAM namespace keeps the read-compare-write under the range lock */
	setup("ram:1M");
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 1);
	put_le32(&cmd.cdw10, NVME_ID_CNS_NS);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, buf, 4096, &dw0), 0);
	CU_ASSERT_FALSE(buf[24] & NVME_NS_NSFEAT_NSABP);
	fake_env_teardown(&env);
}

static void test_reservation_dispatch(void)
{
	static uint8_t buf[4096];
	struct nvme_cmd cmd;
	uint8_t key[16] = { 0 };
	struct fake_qpair other;
	struct fake_connect c;
	uint32_t dw0;

	setup("ram:1M");
	/* register key 0x55 and take a Write Exclusive reservation */
	put_le64(key + 8, 0x55);
	fake_cmd(&cmd, NVME_OPC_RESERVATION_REGISTER, 1);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, key, 16, NULL), 0);
	put_le64(key, 0x55);
	fake_cmd(&cmd, NVME_OPC_RESERVATION_ACQUIRE, 1);
	put_le32(&cmd.cdw10, (uint32_t)NVME_RESV_WRITE_EXCLUSIVE << 8);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, key, 16, NULL), 0);
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 0, 1, buf, 512), 0);

	/* another host: reads pass, writes conflict */
	fake_qpair_init(&other, env.tgt, env.port, &fake_reactor[0]);
	fake_connect_defaults(&c, 0);
	c.hostnqn = FAKE_HOSTNQN2;
	c.hostid[0] = 0x42;
	CU_ASSERT_EQUAL(fake_connect(&other, &c, &dw0), 0);
	CU_ASSERT_EQUAL(fake_prop_set(&other, NVME_REG_CC, NVME_CC_EN | 6u << 16 | 4u << 20), 0);
	{
		struct fake_qpair oio;

		fake_qpair_init(&oio, env.tgt, env.port, &fake_reactor[1]);
		fake_connect_defaults(&c, 1);
		c.hostnqn = FAKE_HOSTNQN2;
		c.hostid[0] = 0x42;
		c.cntlid = (uint16_t)dw0;
		CU_ASSERT_EQUAL(fake_connect(&oio, &c, NULL), 0);
		rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1);
		CU_ASSERT_EQUAL(fake_exec(&oio, &cmd, buf, 512, NULL), 0);
		rw_cmd(&cmd, NVME_OPC_WRITE, 1, 0, 1);
		CU_ASSERT_EQUAL(fake_exec(&oio, &cmd, buf, 512, NULL),
				NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT));
		fake_qpair_close(&oio);
	}
	fake_qpair_close(&other);
	fake_env_teardown(&env);
}

static void test_lba_status(void)
{
	static uint8_t buf[4096];
	struct nvme_cmd cmd;
	unsigned int nq;

	setup("ram:1M");
	memset(buf, 1, sizeof(buf));
	CU_ASSERT_EQUAL(io(NVME_OPC_WRITE, 1, 16, 8, buf, 4096), 0);
	nq = fake_bdev.nlba_query;
	rw_cmd(&cmd, NVMF_OPC_VS_LBA_STATUS, 1, 0, 4);
	memset(buf, 0xff, sizeof(buf));
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 8 + 4 * 16, NULL), 0);
	/* NVMe descriptor list: NLSD, CMPC; DSLBA, NLB, status in byte 13 */
	CU_ASSERT_EQUAL(get_le32(buf), 3);
	CU_ASSERT_EQUAL(buf[4], NVME_LBA_STATUS_CMPC_COMPLETE); /* the third reaches the end */
	CU_ASSERT_EQUAL(get_le64(buf + 8), 0);
	CU_ASSERT_EQUAL(get_le32(buf + 16), 16);
	CU_ASSERT_EQUAL(buf[20], 0);
	CU_ASSERT_EQUAL(buf[21], NVMF_LBA_STATUS_DEALLOCATED);
	CU_ASSERT_EQUAL(get_le64(buf + 24), 16);
	CU_ASSERT_EQUAL(get_le32(buf + 32), 8);
	CU_ASSERT_EQUAL(buf[37], 0);
	CU_ASSERT_EQUAL(get_le64(buf + 40), 24);
	CU_ASSERT_EQUAL(get_le32(buf + 48), NBLOCKS - 24);
	CU_ASSERT_EQUAL(buf[53], NVMF_LBA_STATUS_DEALLOCATED);
	CU_ASSERT_EQUAL(fake_bdev.nlba_query - nq, 1); /* through bdev_lba_query() */
	/* room for two: more runs follow */
	rw_cmd(&cmd, NVMF_OPC_VS_LBA_STATUS, 1, 0, 4);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 8 + 2 * 16, NULL), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 2);
	CU_ASSERT_EQUAL(buf[4], NVME_LBA_STATUS_CMPC_MORE);
	rw_cmd(&cmd, NVMF_OPC_VS_LBA_STATUS, 1, NBLOCKS, 4);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, buf, 72, NULL), ST_LBA_RANGE);
	fake_env_teardown(&env);
}

static const CU_TestInfo tests[] = {
	{ "command checks", test_checks },
	{ "fused, PSDT, not ready", test_fused_and_not_ready },
	{ "read/write round trip", test_read_write },
	{ "FUA and volatile write cache", test_fua },
	{ "write zeroes", test_write_zeroes },
	{ "dataset management", test_dsm },
	{ "compare", test_compare },
	{ "verify", test_verify },
	{ "flush", test_flush },
	{ "backend errors", test_backend_errors },
	{ "NVMe passthrough namespace", test_passthrough },
	{ "statistics", test_stats },
	{ "namespace removal in use", test_remove_in_use },
	{ "mapped read holds the namespace until released", test_read_mapped },
	{ "reads that are not mapped", test_read_not_mapped },
	{ "namespace removal while read data is mapped", test_remove_while_mapped },
	{ "SQ head pointer", test_sqhd },
	{ "fused compare and write", test_fused },
	{ "fused compare and write on a shared backend", test_fused_shared },
	{ "reservation dispatch", test_reservation_dispatch },
	{ "LBA allocation status", test_lba_status },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("io", tests);
}
