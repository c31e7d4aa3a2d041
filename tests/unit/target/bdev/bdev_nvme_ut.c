/* SPDX-License-Identifier: MIT */
/*
 * NVMe passthrough without a drive: the commands bdev_nvme_build() makes from each kind of
 * bdev_io (what an io_uring SQE128 carries as NVME_URING_CMD_IO), the mapping of drive
 * completions to statuses, and the Identify fields a namespace takes from the drive.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <linux/nvme_ioctl.h>
#include <string.h>

#include "bdev/bdev.h"
#include "bdev/bdev_internal.h"
#include "common/endian.h"
#include "common/nvme_spec.h"
#include "ut.h"

#define FUA  (1u << 30)
#define DEAC (1u << 25)

static uint8_t data[8192];

static const struct build_case {
	const char *what;
	enum bdev_op op;
	bool fua;
	uint64_t offset, len, done;
	unsigned int shift;
	int rc;
	uint8_t opcode;
	uint32_t cdw10, cdw11, cdw12;
	uint32_t data_len;
} build_cases[] = {
	{ "read 8 blocks at LBA 16", BDEV_OP_READ, false, 8192, 4096, 0, 9, 0, NVME_OPC_READ, 16, 0,
	  7, 4096 },
	{ "FUA write, 4 KiB blocks, LBA above 2^32", BDEV_OP_WRITE, true, 0x100000000ull << 12,
	  8192, 0, 12, 0, NVME_OPC_WRITE, 0, 1, 1 | FUA, 8192 },
	{ "FUA on a read is not a thing", BDEV_OP_READ, true, 0, 512, 0, 9, 0, NVME_OPC_READ, 0, 0,
	  0, 512 },
	{ "flush", BDEV_OP_FLUSH, false, 0, 0, 0, 9, 0, NVME_OPC_FLUSH, 0, 0, 0, 0 },
	{ "write zeroes", BDEV_OP_WRITE_ZEROES, false, 512, 1024, 0, 9, 0, NVME_OPC_WRITE_ZEROES, 1,
	  0, 1, 0 },
	{ "discard is write zeroes with DEAC", BDEV_OP_DISCARD, false, 4096, 4096, 0, 12, 0,
	  NVME_OPC_WRITE_ZEROES, 1, 0, 0 | DEAC, 0 },
	{ "a long write zeroes goes 65536 blocks at a time", BDEV_OP_WRITE_ZEROES, false, 0,
	  100000ull << 9, 0, 9, 0, NVME_OPC_WRITE_ZEROES, 0, 0, 65535, 0 },
	{ "... and its second step has the rest", BDEV_OP_WRITE_ZEROES, false, 0, 100000ull << 9,
	  65536ull << 9, 9, 0, NVME_OPC_WRITE_ZEROES, 65536, 0, 100000 - 65536 - 1, 0 },
	{ "a read longer than one command is refused", BDEV_OP_READ, false, 0, 65537ull << 9, 0, 9,
	  -EINVAL, 0, 0, 0, 0, 0 },
	{ "compare and write has no command here", BDEV_OP_COMPARE_AND_WRITE, false, 0, 512, 0, 9,
	  -EOPNOTSUPP, 0, 0, 0, 0, 0 },
};

static void test_build(void)
{
	for (size_t i = 0; i < sizeof(build_cases) / sizeof(build_cases[0]); i++) {
		const struct build_case *t = &build_cases[i];
		struct iovec iov = { data, sizeof(data) };
		struct bdev_io io = { .op = t->op,
				      .fua = t->fua,
				      .offset = t->offset,
				      .len = t->len,
				      .iov = &iov,
				      .iovcnt = 1 };
		struct nvme_uring_cmd c;
		bool vec = true;
		int rc;

		io.be.done = t->done;
		rc = bdev_nvme_build(&io, 7, t->shift, &iov, 1, &c, &vec);
		if (rc != t->rc)
			fprintf(stderr, "\n  %s: rc %d, want %d\n", t->what, rc, t->rc);
		CU_ASSERT_EQUAL(rc, t->rc);
		if (rc)
			continue;
		CU_ASSERT_EQUAL(c.opcode, t->opcode);
		CU_ASSERT_EQUAL(c.nsid, 7);
		CU_ASSERT_EQUAL(c.flags, 0);
		CU_ASSERT_EQUAL(c.cdw10, t->cdw10);
		CU_ASSERT_EQUAL(c.cdw11, t->cdw11);
		CU_ASSERT_EQUAL(c.cdw12, t->cdw12);
		CU_ASSERT_EQUAL(c.data_len, t->data_len);
		CU_ASSERT_EQUAL(c.addr, t->data_len ? (uint64_t)(uintptr_t)data : 0);
		CU_ASSERT_FALSE(vec);
	}
}

/* A host command goes as it came: only the NSID changes (and FUA when the host turned the
 * volatile cache off); several buffers go as a vector. */
static void test_build_host_cmd(void)
{
	struct iovec iov[2] = { { data, 4096 }, { data + 4096, 4096 } };
	struct nvme_cmd h;
	struct bdev_io io = {
		.op = BDEV_OP_NVME, .nvme_cmd = &h, .len = 8192, .iov = iov, .iovcnt = 2
	};
	struct nvme_uring_cmd c;
	bool vec;

	memset(&h, 0, sizeof(h));
	h.opc = NVME_OPC_COMPARE;
	h.flags = 0x41; /* fused first, SGL: neither reaches the drive */
	put_le32(&h.nsid, 1);
	put_le32(&h.cdw2, 0x22);
	put_le32(&h.cdw3, 0x33);
	put_le32(&h.cdw10, 0x1000);
	put_le32(&h.cdw11, 0x2);
	put_le32(&h.cdw12, 15);
	put_le32(&h.cdw13, 0xd);
	put_le32(&h.cdw14, 0xe);
	put_le32(&h.cdw15, 0xf);
	CU_ASSERT_EQUAL(bdev_nvme_build(&io, 3, 9, iov, 2, &c, &vec), 0);
	CU_ASSERT_EQUAL(c.opcode, NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(c.flags, 0);
	CU_ASSERT_EQUAL(c.nsid, 3);
	CU_ASSERT_EQUAL(c.cdw2, 0x22);
	CU_ASSERT_EQUAL(c.cdw3, 0x33);
	CU_ASSERT_EQUAL(c.cdw10, 0x1000);
	CU_ASSERT_EQUAL(c.cdw11, 0x2);
	CU_ASSERT_EQUAL(c.cdw12, 15);
	CU_ASSERT_EQUAL(c.cdw13, 0xd);
	CU_ASSERT_EQUAL(c.cdw14, 0xe);
	CU_ASSERT_EQUAL(c.cdw15, 0xf);
	CU_ASSERT_TRUE(vec);
	CU_ASSERT_EQUAL(c.addr, (uint64_t)(uintptr_t)iov);
	CU_ASSERT_EQUAL(c.data_len, 2);

	/* One buffer: addr/data_len directly. */
	CU_ASSERT_EQUAL(bdev_nvme_build(&io, 3, 9, iov, 1, &c, &vec), 0);
	CU_ASSERT_FALSE(vec);
	CU_ASSERT_EQUAL(c.addr, (uint64_t)(uintptr_t)data);
	CU_ASSERT_EQUAL(c.data_len, 8192);

	/* Write with FUA forced; Write Uncorrectable and Verify carry no data. */
	h.opc = NVME_OPC_WRITE;
	io.fua = true;
	CU_ASSERT_EQUAL(bdev_nvme_build(&io, 3, 9, iov, 1, &c, &vec), 0);
	CU_ASSERT_EQUAL(c.cdw12, 15 | FUA);
	io.fua = false;
	io.len = 0;
	h.opc = NVME_OPC_WRITE_UNCORRECTABLE;
	CU_ASSERT_EQUAL(bdev_nvme_build(&io, 3, 9, NULL, 0, &c, &vec), 0);
	CU_ASSERT_EQUAL(c.opcode, NVME_OPC_WRITE_UNCORRECTABLE);
	CU_ASSERT_EQUAL(c.addr, 0);
	CU_ASSERT_EQUAL(c.data_len, 0);
	/* Data for an opcode that moves none, or both ways: refused. */
	io.len = 512;
	h.opc = NVME_OPC_VERIFY; /* 0Ch: bits 1:0 clear */
	CU_ASSERT_EQUAL(bdev_nvme_build(&io, 3, 9, iov, 1, &c, &vec), -EINVAL);
	h.opc = 0x83;
	CU_ASSERT_EQUAL(bdev_nvme_build(&io, 3, 9, iov, 1, &c, &vec), -EINVAL);
}

/* CQE res is the status field without its phase bit; ours keeps the phase bit's place. */
static const struct status_case {
	int res;
	int rc;
	uint16_t status;
} status_cases[] = {
	{ 0, 0, 0 },
	{ -EIO, -EIO, 0 },
	{ -EAGAIN, -EAGAIN, 0 },
	{ -EINVAL, -EINVAL, 0 },
	{ NVME_SC_LBA_OUT_OF_RANGE, -ERANGE,
	  NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE) },
	{ 0x4000 | NVME_SC_CAPACITY_EXCEEDED, -ENOSPC,
	  NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED) | NVME_STATUS_DNR },
	{ 0x4000 | NVME_SCT_MEDIA << 8 | NVME_SC_COMPARE_FAILURE, -EILSEQ,
	  NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE) | NVME_STATUS_DNR },
	{ NVME_SCT_MEDIA << 8 | 0x81, -EIO, NVME_STATUS(NVME_SCT_MEDIA, 0x81) },
	{ NVME_SC_INVALID_OPCODE | 0x4000, -EOPNOTSUPP,
	  NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE) | NVME_STATUS_DNR },
	{ 0x2000 | 0x0800 | 0x06, -EIO, (uint16_t)((0x2000 | 0x0800 | 0x06) << 1) }, /* More, CRD */
};

static void test_status(void)
{
	for (size_t i = 0; i < sizeof(status_cases) / sizeof(status_cases[0]); i++) {
		const struct status_case *t = &status_cases[i];
		uint16_t st = 0xffff;
		int rc = bdev_nvme_result(t->res, &st);

		if (rc != t->rc || st != t->status)
			fprintf(stderr, "\n  res %#x: rc %d status %#x, want %d %#x\n", t->res, rc,
				st, t->rc, t->status);
		CU_ASSERT_EQUAL(rc, t->rc);
		CU_ASSERT_EQUAL(st, t->status);
	}
}

static void test_id_parse(void)
{
	static struct nvme_id_ctrl ctrl;
	static struct nvme_id_ns ns;
	struct bdev_nvme_id id;
	uint64_t nsze = 0;

	memset(&ctrl, 0, sizeof(ctrl));
	memset(&ns, 0, sizeof(ns));
	ctrl.mdts = 5; /* 128 KiB */
	ctrl.vwc = NVME_CTRL_VWC_PRESENT;
	put_le16(&ctrl.oncs, NVME_CTRL_ONCS_WRITE_UNCORRECTABLE | NVME_CTRL_ONCS_DSM);
	put_le64(&ns.nsze, 1000);
	ns.nlbaf = 1;
	ns.flbas = 1;
	ns.lbaf[0].lbads = 9;
	ns.lbaf[1].lbads = 12;
	ns.lbaf[1].rp = 2;
	ns.nsfeat = NVME_NS_NSFEAT_NSABP | NVME_NS_NSFEAT_OPTPERF;
	ns.dlfeat = 9;
	put_le16(&ns.npwg, 7);
	put_le16(&ns.nows, 31);
	put_le16(&ns.nawupf, 3);
	memset(&id, 0, sizeof(id));
	CU_ASSERT_EQUAL(bdev_nvme_id_parse(&ctrl, &ns, &id, &nsze), 0);
	CU_ASSERT_EQUAL(nsze, 1000);
	CU_ASSERT_EQUAL(id.lbads, 12);
	CU_ASSERT_EQUAL(id.rp, 2);
	CU_ASSERT_EQUAL(id.max_xfer, 128 * 1024);
	CU_ASSERT_TRUE(id.vwc);
	CU_ASSERT_EQUAL(id.npwg, 7);
	CU_ASSERT_EQUAL(id.nows, 31);
	CU_ASSERT_EQUAL(id.nawupf, 3);
	CU_ASSERT_EQUAL(id.dlfeat, 9);
	CU_ASSERT_TRUE(id.oncs & NVME_CTRL_ONCS_WRITE_UNCORRECTABLE);
	/* MDTS 0: no limit. */
	ctrl.mdts = 0;
	CU_ASSERT_EQUAL(bdev_nvme_id_parse(&ctrl, &ns, &id, &nsze), 0);
	CU_ASSERT_EQUAL(id.max_xfer, 0);
	/* Metadata in the format in use, a 2 KiB block, a format past NLBAF, inactive. */
	put_le16(&ns.lbaf[1].ms, 8);
	CU_ASSERT_EQUAL(bdev_nvme_id_parse(&ctrl, &ns, &id, &nsze), -EOPNOTSUPP);
	put_le16(&ns.lbaf[1].ms, 0);
	ns.lbaf[1].lbads = 11;
	CU_ASSERT_EQUAL(bdev_nvme_id_parse(&ctrl, &ns, &id, &nsze), -EOPNOTSUPP);
	ns.lbaf[1].lbads = 12;
	ns.flbas = 2;
	CU_ASSERT_EQUAL(bdev_nvme_id_parse(&ctrl, &ns, &id, &nsze), -EINVAL);
	ns.flbas = 0;
	put_le64(&ns.nsze, 0);
	CU_ASSERT_EQUAL(bdev_nvme_id_parse(&ctrl, &ns, &id, &nsze), -ENODEV);
}

/* A character device that is not an NVMe one: a clear error naming the path. */
static void test_open_not_nvme(void)
{
	struct bdev *b = NULL;
	char err[256] = "";

	CU_ASSERT_EQUAL(bdev_open("/dev/null", 0, &b, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(b);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/dev/null: not a regular file or block device, nor "
					   "an NVMe generic character device"));
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "commands from bdev ops", test_build },
		{ "host commands pass with the drive's NSID", test_build_host_cmd },
		{ "completion status mapping", test_status },
		{ "Identify fields taken from the drive", test_id_parse },
		{ "a character device that is not NVMe", test_open_not_nvme },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bdev_nvme", NULL, NULL, tests);
}
