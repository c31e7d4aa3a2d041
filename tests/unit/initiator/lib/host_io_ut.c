/* SPDX-License-Identifier: MIT */
/*
 * initiator/io.c: NVM command building and MDTS splitting, checked on the commands that
 * reach a recording transport (LBA, NLB, flags, data range of each child), the issue of
 * children as wire slots free up, and how a failed child ends the request.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/endian.h"
#include "fake_transport.h"
#include "ut.h"

static struct nvmeof_ctrlr ctrlr;

static struct nvmeof_ns make_ns(uint32_t nsid, uint32_t shift)
{
	struct nvmeof_ns ns = { .ctrlr = &ctrlr, .block_shift = shift };

	ns.info.nsid = nsid;
	ns.info.block_size = 1u << shift;
	ns.info.nsze = 1u << 30;
	return ns;
}

struct rec {
	int calls;
	struct nvmeof_cpl cpl;
};

static void rec_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct rec *r = arg;

	r->calls++;
	r->cpl = *cpl;
}

static uint64_t sqe_lba(const struct nvme_cmd *s)
{
	return (uint64_t)get_le32(&s->cdw11) << 32 | get_le32(&s->cdw10);
}

static uint32_t sqe_nlb(const struct nvme_cmd *s)
{
	return (get_le32(&s->cdw12) & 0xffff) + 1;
}

static void test_max_blocks(void)
{
	static const struct {
		uint32_t max_xfer, shift, want;
	} cases[] = {
		{ 0, 9, 65536 },	  { 0, 12, 65536 },	 { 131072, 9, 256 },
		{ 131072, 12, 32 },	  { 256, 9, 1 },	 { 4096, 12, 1 },
		{ 1u << 30, 9, 65536 }, { 65536u * 512, 9, 65536 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(io_max_blocks(cases[i].max_xfer, cases[i].shift), cases[i].want);
}

struct child {
	uint64_t lba;
	uint32_t nlb;
	size_t off, len;
};

static const struct split_case {
	const char *name;
	uint32_t shift, max_xfer, nreqs;
	uint64_t lba;
	uint32_t nblocks;
	int nchildren;
	struct child c[4];
} split_cases[] = {
	{ "512B, MDTS 128K", 9, 131072, 8, 1000, 600, 3,
	  { { 1000, 256, 0, 131072 }, { 1256, 256, 131072, 131072 }, { 1512, 88, 262144, 45056 } } },
	{ "4K, MDTS 128K, one over", 12, 131072, 8, 0, 33, 2,
	  { { 0, 32, 0, 131072 }, { 32, 1, 131072, 4096 } } },
	{ "exact fit", 9, 131072, 8, 7, 256, 1, { { 7, 256, 0, 131072 } } },
	{ "no MDTS: 16-bit NLB limit", 9, 0, 8, 1ull << 33, 70000, 2,
	  { { 1ull << 33, 65536, 0, 65536u * 512 }, { (1ull << 33) + 65536, 4464, 65536u * 512,
						       4464u * 512 } } },
	{ "MDTS below a block", 9, 256, 8, 10, 3, 3,
	  { { 10, 1, 0, 512 }, { 11, 1, 512, 512 }, { 12, 1, 1024, 512 } } },
	{ "more children than slots", 9, 4096, 2, 0, 32, 4,
	  { { 0, 8, 0, 4096 }, { 8, 8, 4096, 4096 }, { 16, 8, 8192, 4096 }, { 24, 8, 12288, 4096 } } },
};

static void test_split(void)
{
	static uint8_t buf[65536u * 512 + 4464u * 512];

	for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		const struct split_case *t = &split_cases[i];
		struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, (uint16_t)t->nreqs, 0);
		struct fake_qp *f = fake_qp(qp);
		struct nvmeof_ns ns = make_ns(3, t->shift);
		struct iovec iov[2] = { { buf, 1000 }, { buf + 1000, sizeof(buf) - 1000 } };
		struct rec r = { 0 };
		int issued = 0;

		qp->max_xfer = t->max_xfer;
		CU_ASSERT_EQUAL(nvmeof_write(qp, &ns, t->lba, t->nblocks, iov, 2, NVMEOF_IO_FUA,
					     rec_cb, &r),
				0);
		/* Children go out as slots free up; each one completes in turn. */
		for (int k = 0; k < t->nchildren; k++) {
			const struct nvme_cmd *s;
			const struct nvmeof_req *req;

			if (f->nsent <= k) {
				fprintf(stderr, "\n  %s: child %d not issued\n", t->name, k);
				CU_FAIL("child not issued");
				break;
			}
			s = &f->sqe[k];
			req = f->sent[k];
			CU_ASSERT_EQUAL(s->opc, NVME_OPC_WRITE);
			CU_ASSERT_EQUAL(get_le32(&s->nsid), 3);
			CU_ASSERT_EQUAL(sqe_lba(s), t->c[k].lba);
			CU_ASSERT_EQUAL(sqe_nlb(s), t->c[k].nlb);
			CU_ASSERT(get_le32(&s->cdw12) & NVME_RW_FUA);
			CU_ASSERT_EQUAL(req->data_off, t->c[k].off);
			CU_ASSERT_EQUAL(req->data_len, t->c[k].len);
			CU_ASSERT_EQUAL(req->xfer, NVME_XFER_HOST_TO_CTRLR);
			issued = f->nsent;
			CU_ASSERT(issued <= (int)t->nreqs + k);
			fake_complete(qp, k, 0);
			CU_ASSERT_EQUAL(r.calls, 0);
			qpair_poll(qp, 0, 0);
		}
		CU_ASSERT_EQUAL(f->nsent, t->nchildren);
		CU_ASSERT_EQUAL(r.calls, 1);
		CU_ASSERT(nvmeof_cpl_ok(&r.cpl));
		CU_ASSERT_EQUAL(nvmeof_qpair_outstanding(qp), 0);
		fake_qpair_free(qp);
	}
}

/* A failed child ends the request: nothing more is issued, the callback waits for the
 * children still in flight and reports the first error. */
static void test_split_child_error(void)
{
	static uint8_t buf[8 * 4096];
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 2, 0);
	struct fake_qp *f = fake_qp(qp);
	struct nvmeof_ns ns = make_ns(1, 12);
	struct iovec iov = { buf, sizeof(buf) };
	struct rec r = { 0 };

	qp->max_xfer = 4096;
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 8, &iov, 1, 0, rec_cb, &r), 0);
	CU_ASSERT_EQUAL(f->nsent, 2);
	fake_complete(qp, 0, NVME_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE) | NVME_STATUS_DNR);
	qpair_poll(qp, 0, 0);
	CU_ASSERT_EQUAL(f->nsent, 2); /* no third child */
	CU_ASSERT_EQUAL(r.calls, 0);  /* the second is still in flight */
	fake_complete(qp, 1, 0);
	qpair_poll(qp, 0, 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.cpl.err, 0);
	CU_ASSERT_EQUAL(r.cpl.status, NVMEOF_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT(r.cpl.dnr);
	CU_ASSERT_EQUAL(nvmeof_qpair_outstanding(qp), 0);
	fake_qpair_free(qp);
}

/* The queue fails with children still waiting for slots: all of it completes once. */
static void test_split_queue_failure(void)
{
	static uint8_t buf[8 * 512];
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 2, 0);
	struct nvmeof_ns ns = make_ns(1, 9);
	struct iovec iov = { buf, sizeof(buf) };
	struct rec r = { 0 }, r2 = { 0 };

	qp->max_xfer = 512;
	CU_ASSERT_EQUAL(nvmeof_write(qp, &ns, 0, 8, &iov, 1, 0, rec_cb, &r), 0);
	CU_ASSERT_EQUAL(nvmeof_write(qp, &ns, 8, 1, &iov, 1, 0, rec_cb, &r2), 0);
	qpair_fail(qp, -ECONNRESET, "gone");
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 2);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.cpl.err, -ECONNRESET);
	CU_ASSERT_EQUAL(r2.calls, 1);
	CU_ASSERT_EQUAL(r2.cpl.err, -ECONNRESET);
	CU_ASSERT_EQUAL(nvmeof_qpair_outstanding(qp), 0);
	fake_qpair_free(qp);
}

static void test_write_zeroes_split(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 8, 0);
	struct fake_qp *f = fake_qp(qp);
	struct nvmeof_ns ns = make_ns(2, 9);
	struct rec r = { 0 };

	CU_ASSERT_EQUAL(nvmeof_write_zeroes(qp, &ns, 5, 131073, NVMEOF_IO_DEALLOCATE, rec_cb, &r),
			0);
	CU_ASSERT_EQUAL(f->nsent, 3);
	CU_ASSERT_EQUAL(f->sqe[0].opc, NVME_OPC_WRITE_ZEROES);
	CU_ASSERT_EQUAL(sqe_lba(&f->sqe[0]), 5);
	CU_ASSERT_EQUAL(sqe_nlb(&f->sqe[0]), 65536);
	CU_ASSERT_EQUAL(sqe_lba(&f->sqe[2]), 5 + 131072);
	CU_ASSERT_EQUAL(sqe_nlb(&f->sqe[2]), 1);
	CU_ASSERT(get_le32(&f->sqe[1].cdw12) & NVME_RW_DEAC);
	CU_ASSERT_EQUAL(f->sent[0]->data_len, 0);
	CU_ASSERT_EQUAL(f->sent[0]->xfer, NVME_XFER_NONE);
	for (int i = 0; i < 3; i++)
		fake_complete(qp, i, 0);
	qpair_poll(qp, 0, 0);
	CU_ASSERT(r.calls == 1 && nvmeof_cpl_ok(&r.cpl));

	/* The specification exempts Write Zeroes from MDTS; like Linux, the library still
	 * keeps it within MDTS, which every controller accepts. */
	qp->max_xfer = 4096;
	CU_ASSERT_EQUAL(nvmeof_write_zeroes(qp, &ns, 0, 20, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(f->nsent, 6);
	CU_ASSERT_EQUAL(sqe_nlb(&f->sqe[3]), 8);
	CU_ASSERT_EQUAL(sqe_nlb(&f->sqe[5]), 4);
	CU_ASSERT_EQUAL(sqe_lba(&f->sqe[5]), 16);
	fake_qpair_free(qp);
}

static void test_deallocate_flush_compare(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 8, 0);
	struct fake_qp *f = fake_qp(qp);
	struct nvmeof_ns ns = make_ns(4, 12);
	static uint8_t buf[8192];
	struct iovec iov = { buf, sizeof(buf) };
	const struct nvmeof_req *req;
	uint8_t range[16];

	CU_ASSERT_EQUAL(nvmeof_deallocate(qp, &ns, 0x123456789ull, 0x10000, NULL, NULL), 0);
	req = f->sent[0];
	CU_ASSERT_EQUAL(f->sqe[0].opc, NVME_OPC_DATASET_MANAGEMENT);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].nsid), 4);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].cdw10), 0);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].cdw11), NVME_DSM_ATTR_AD);
	CU_ASSERT_EQUAL(req->data_len, 16);
	CU_ASSERT_EQUAL(req->xfer, NVME_XFER_HOST_TO_CTRLR);
	CU_ASSERT_EQUAL(iov_slice(req->iov, req->iovcnt, 0, 16, &(struct iovec){ 0 }, 1), 1);
	memcpy(range, req->iov[0].iov_base, 16);
	CU_ASSERT_EQUAL(get_le32(range + 4), 0x10000);
	CU_ASSERT_EQUAL(get_le64(range + 8), 0x123456789ull);

	CU_ASSERT_EQUAL(nvmeof_flush(qp, &ns, NULL, NULL), 0);
	CU_ASSERT_EQUAL(f->sqe[1].opc, NVME_OPC_FLUSH);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[1].nsid), 4);
	CU_ASSERT_EQUAL(f->sent[1]->data_len, 0);

	CU_ASSERT_EQUAL(nvmeof_compare(qp, &ns, 9, 2, &iov, 1, NVMEOF_IO_LIMITED_RETRY, NULL, NULL),
			0);
	CU_ASSERT_EQUAL(f->sqe[2].opc, NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(f->sent[2]->xfer, NVME_XFER_HOST_TO_CTRLR);
	CU_ASSERT_EQUAL(f->sent[2]->data_len, 8192);
	CU_ASSERT(get_le32(&f->sqe[2].cdw12) & NVME_RW_LR);
	CU_ASSERT_FALSE(get_le32(&f->sqe[2].cdw12) & NVME_RW_FUA);

	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 1, &iov, 1, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(f->sent[3]->xfer, NVME_XFER_CTRLR_TO_HOST);
	fake_qpair_free(qp);
}

static void test_passthrough(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 8, 0);
	struct fake_qp *f = fake_qp(qp);
	struct nvmeof_ns ns = make_ns(6, 9);
	struct nvmeof_cmd cmd = { .opc = NVME_OPC_VERIFY, .cdw10 = 0x11223344, .cdw12 = 7,
				  .cdw15 = 0xaabbccdd };
	static uint8_t buf[512];
	struct iovec iov = { buf, sizeof(buf) };

	CU_ASSERT_EQUAL(nvmeof_io_cmd(qp, &ns, &cmd, NULL, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(f->sqe[0].opc, NVME_OPC_VERIFY);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].nsid), 6);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].cdw10), 0x11223344);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].cdw12), 7);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[0].cdw15), 0xaabbccdd);
	cmd.nsid = 9;
	cmd.opc = NVME_OPC_READ;
	CU_ASSERT_EQUAL(nvmeof_io_cmd(qp, &ns, &cmd, &iov, 1, NULL, NULL), 0);
	CU_ASSERT_EQUAL(get_le32(&f->sqe[1].nsid), 9);
	CU_ASSERT_EQUAL(f->sent[1]->xfer, NVME_XFER_CTRLR_TO_HOST);
	cmd.opc = NVME_OPC_FABRICS;
	CU_ASSERT_EQUAL(nvmeof_io_cmd(qp, &ns, &cmd, NULL, 0, NULL, NULL), -EINVAL);
	cmd.opc = NVME_OPC_FLUSH; /* no data direction, but data given */
	CU_ASSERT_EQUAL(nvmeof_io_cmd(qp, &ns, &cmd, &iov, 1, NULL, NULL), -EINVAL);
	fake_qpair_free(qp);
}

static void test_argument_checks(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 2, 0);
	struct nvmeof_qpair *admin = fake_qpair_new(&ctrlr, 0, 2, 0);
	struct nvmeof_ctrlr other;
	struct nvmeof_ns ns = make_ns(1, 9), foreign = make_ns(1, 9);
	static uint8_t buf[4096];
	struct iovec iov = { buf, 1024 }, many[NVMEOF_IOV_MAX + 1];
	struct rec r = { 0 };

	foreign.ctrlr = &other;
	for (int i = 0; i <= NVMEOF_IOV_MAX; i++)
		many[i] = (struct iovec){ buf, 512 };
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 0, &iov, 1, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 3, &iov, 1, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, UINT64_MAX, 2, &iov, 1, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 1, NULL, 0, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 1, many, NVMEOF_IOV_MAX + 1, 0, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &foreign, 0, 1, &iov, 1, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(admin, &ns, 0, 1, &iov, 1, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_deallocate(qp, &ns, 0, 0, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 2, &iov, 1, 0, rec_cb, &r), 0);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 2, &iov, 1, 0, rec_cb, &r), 0);
	CU_ASSERT_EQUAL(nvmeof_read(qp, &ns, 0, 2, &iov, 1, 0, rec_cb, &r), -EAGAIN);
	qpair_fail(qp, -EIO, "down");
	CU_ASSERT_EQUAL(nvmeof_write_zeroes(qp, &ns, 0, 1, 0, NULL, NULL), -ENOTCONN);
	CU_ASSERT_EQUAL(nvmeof_flush(qp, &ns, NULL, NULL), -ENOTCONN);
	fake_qpair_free(qp);
	fake_qpair_free(admin);
}

static void test_build_rw(void)
{
	struct nvme_cmd s;

	io_build_rw(&s, NVME_OPC_READ, 7, 0x1122334455667788ull, 65536,
		    NVMEOF_IO_FUA | NVMEOF_IO_LIMITED_RETRY | NVMEOF_IO_DEALLOCATE);
	CU_ASSERT_EQUAL(s.opc, NVME_OPC_READ);
	CU_ASSERT_EQUAL(get_le32(&s.nsid), 7);
	CU_ASSERT_EQUAL(get_le32(&s.cdw10), 0x55667788);
	CU_ASSERT_EQUAL(get_le32(&s.cdw11), 0x11223344);
	/* DEAC is for Write Zeroes only */
	CU_ASSERT_EQUAL(get_le32(&s.cdw12), 0xffffu | NVME_RW_FUA | NVME_RW_LR);
	io_build_rw(&s, NVME_OPC_WRITE_ZEROES, 1, 0, 1, NVMEOF_IO_DEALLOCATE);
	CU_ASSERT_EQUAL(get_le32(&s.cdw12), NVME_RW_DEAC);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "blocks per command", test_max_blocks },
		{ "MDTS splitting", test_split },
		{ "failed child ends the request", test_split_child_error },
		{ "queue failure during a split", test_split_queue_failure },
		{ "write zeroes split by NLB and MDTS", test_write_zeroes_split },
		{ "deallocate, flush, compare", test_deallocate_flush_compare },
		{ "I/O pass-through", test_passthrough },
		{ "argument checks", test_argument_checks },
		{ "read/write command fields", test_build_rw },
		CU_TEST_INFO_NULL,
	};

	return ut_run("initiator_io", NULL, NULL, tests);
}
