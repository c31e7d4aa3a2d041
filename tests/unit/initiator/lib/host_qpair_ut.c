/* SPDX-License-Identifier: MIT */
/*
 * initiator/lib/queue/host_qpair.c: request pools, CID allocation and matching, completion status,
 * callback delivery, failure, timeouts and iovec slicing, over a recording transport.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/endian.h"
#include "common/iov.h"
#include "fake_transport.h"
#include "ut.h"

static struct nvmeof_ctrlr ctrlr;

struct rec {
	int calls;
	int order;
	struct nvmeof_cpl cpl;
};

static int g_order;

static void rec_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct rec *r = arg;

	r->calls++;
	r->order = ++g_order;
	r->cpl = *cpl;
}

static int submit(struct nvmeof_qpair *qp, struct rec *r)
{
	struct nvme_cmd sqe = { .opc = NVME_OPC_FLUSH };

	return qpair_submit_cmd(qp, &sqe, NULL, 0, 0, NVME_XFER_NONE, rec_cb, r);
}

static void test_cids_unique_and_matched(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 8, 0);
	struct fake_qp *f = fake_qp(qp);
	struct rec r[9] = { 0 };

	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(submit(qp, &r[i]), 0);
	CU_ASSERT_EQUAL(submit(qp, &r[8]), -EAGAIN);
	CU_ASSERT_EQUAL(f->nsent, 8);
	CU_ASSERT_EQUAL(nvmeof_qpair_outstanding(qp), 8);
	for (int i = 0; i < 8; i++) {
		uint16_t cid = get_le16(&f->sqe[i].cid);

		CU_ASSERT_PTR_EQUAL(qpair_find_req(qp, cid), f->sent[i]);
		CU_ASSERT_EQUAL(cid & 7, f->sent[i]->slot);
		for (int j = 0; j < i; j++)
			CU_ASSERT_NOT_EQUAL(cid, get_le16(&f->sqe[j].cid));
	}
	/* completion is matched by CID, in any order; callbacks wait for the poll */
	fake_complete(qp, 5, 0);
	fake_complete(qp, 2, 0);
	CU_ASSERT_EQUAL(r[5].calls + r[2].calls, 0);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 2);
	CU_ASSERT_EQUAL(r[5].calls, 1);
	CU_ASSERT_EQUAL(r[2].calls, 1);
	CU_ASSERT(r[5].order < r[2].order);
	CU_ASSERT_EQUAL(nvmeof_qpair_outstanding(qp), 6);
	fake_qpair_free(qp);
}

static void test_stale_and_unknown_cids(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 6, 0);
	struct fake_qp *f = fake_qp(qp);
	struct rec r[7] = { 0 };
	struct nvme_cpl cqe = { 0 };
	uint16_t old;

	for (int i = 0; i < 6; i++)
		submit(qp, &r[i]);
	old = get_le16(&f->sqe[3].cid);
	fake_complete(qp, 3, 0);
	qpair_poll(qp, 0, 0);
	/* the freed slot is reused with a new CID; the old one is unknown now */
	CU_ASSERT_EQUAL(submit(qp, &r[6]), 0);
	CU_ASSERT_EQUAL(f->sent[6]->slot, f->sent[3]->slot);
	CU_ASSERT_NOT_EQUAL(get_le16(&f->sqe[6].cid), old);
	CU_ASSERT_PTR_NULL(qpair_find_req(qp, old));
	put_le16(&cqe.cid, old);
	CU_ASSERT_EQUAL(qpair_complete_cqe(qp, &cqe), -EPROTO);
	/* slot bits beyond the pool (6 slots, 3 bits: slots 6 and 7 do not exist) */
	put_le16(&cqe.cid, 7);
	CU_ASSERT_EQUAL(qpair_complete_cqe(qp, &cqe), -EPROTO);
	put_le16(&cqe.cid, 0xffff);
	CU_ASSERT_EQUAL(qpair_complete_cqe(qp, &cqe), -EPROTO);
	CU_ASSERT_EQUAL(r[6].calls, 0);
	fake_qpair_free(qp);
}

static void test_status_decoding(void)
{
	static const struct {
		uint16_t wire;
		uint16_t status;
		bool dnr;
	} cases[] = {
		{ 0x0000, 0x0000, false },
		{ 0x0001, 0x0000, false }, /* phase bit alone is success */
		{ NVME_STATUS(0, 0x80) | NVME_STATUS_DNR, 0x0080, true },
		{ NVME_STATUS(2, 0x85), 0x0285, false },
		{ NVME_STATUS(1, 0x82) | 1, 0x0182, false },
		{ NVME_STATUS(7, 0xff) | NVME_STATUS_DNR | NVME_STATUS_MORE, 0x07ff, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 2, 0);
		struct rec r = { 0 };

		submit(qp, &r);
		fake_complete(qp, 0, cases[i].wire);
		qpair_poll(qp, 0, 0);
		CU_ASSERT_EQUAL(r.calls, 1);
		CU_ASSERT_EQUAL(r.cpl.err, 0);
		CU_ASSERT_EQUAL(r.cpl.status, cases[i].status);
		CU_ASSERT_EQUAL(r.cpl.dnr, cases[i].dnr);
		CU_ASSERT_EQUAL(cpl_result(&r.cpl), cases[i].status);
		fake_qpair_free(qp);
	}
}

/* A callback may submit again; it never runs inside the submission call. */
struct chain {
	struct nvmeof_qpair *qp;
	int left;
	int calls;
	int rc;
};

static void chain_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct chain *c = arg;
	struct nvme_cmd sqe = { .opc = NVME_OPC_FLUSH };

	c->calls++;
	if (c->left-- > 0)
		c->rc = qpair_submit_cmd(c->qp, &sqe, NULL, 0, 0, NVME_XFER_NONE, chain_cb, c);
}

static void test_callbacks_resubmit(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 1, 0);
	struct fake_qp *f = fake_qp(qp);
	struct chain c = { qp, 3, 0, 0 };
	struct nvme_cmd sqe = { .opc = NVME_OPC_FLUSH };

	CU_ASSERT_EQUAL(qpair_submit_cmd(qp, &sqe, NULL, 0, 0, NVME_XFER_NONE, chain_cb, &c), 0);
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c.calls, i);
		fake_complete(qp, i, 0);
		CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 1);
		CU_ASSERT_EQUAL(c.rc, 0);
	}
	CU_ASSERT_EQUAL(c.calls, 4);
	CU_ASSERT_EQUAL(f->nsent, 4);
	CU_ASSERT_EQUAL(nvmeof_qpair_outstanding(qp), 0);
	fake_qpair_free(qp);
}

static void test_max_callbacks(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 4, 0);
	struct rec r[3] = { 0 };

	for (int i = 0; i < 3; i++)
		submit(qp, &r[i]);
	CU_ASSERT_EQUAL(nvmeof_qpair_timeout_ms(qp), -1);
	for (int i = 0; i < 3; i++)
		fake_complete(qp, i, 0);
	CU_ASSERT_EQUAL(nvmeof_qpair_timeout_ms(qp), 0); /* callbacks waiting */
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 2), 2);
	CU_ASSERT_EQUAL(r[2].calls, 0);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 2), 1);
	CU_ASSERT_EQUAL(r[2].calls, 1);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 0);
	fake_qpair_free(qp);
}

static void test_fail_completes_everything(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 4, 0);
	struct fake_qp *f = fake_qp(qp);
	struct rec r[4] = { 0 };

	for (int i = 0; i < 3; i++)
		submit(qp, &r[i]);
	fake_complete(qp, 1, 0);
	qpair_fail(qp, -EPROTO, "test failure %d", 7);
	CU_ASSERT_EQUAL(f->closed, 1);
	CU_ASSERT_STRING_EQUAL(nvmeof_qpair_error(qp), "test failure 7");
	CU_ASSERT_EQUAL(submit(qp, &r[3]), -ENOTCONN);
	CU_ASSERT_EQUAL(nvmeof_qpair_get_fd(qp), -1);
	CU_ASSERT_EQUAL(nvmeof_qpair_which_events(qp), 0);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 3);
	CU_ASSERT_EQUAL(r[0].cpl.err, -EPROTO);
	CU_ASSERT_EQUAL(r[1].cpl.err, 0); /* it had completed before the failure */
	CU_ASSERT_EQUAL(r[2].cpl.err, -EPROTO);
	CU_ASSERT_EQUAL(r[3].calls, 0);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), -EPROTO);
	/* a second failure changes nothing */
	qpair_fail(qp, -EIO, "again");
	CU_ASSERT_STRING_EQUAL(nvmeof_qpair_error(qp), "test failure 7");
	CU_ASSERT_EQUAL(f->closed, 1);
	fake_qpair_free(qp);
}

static void test_submit_error_fails_queue(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 4, 0);
	struct rec r = { 0 };

	fake_qp(qp)->submit_rc = -EPIPE;
	CU_ASSERT_EQUAL(submit(qp, &r), 0); /* accepted; the failure comes as a callback */
	CU_ASSERT_EQUAL(r.calls, 0);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 1);
	CU_ASSERT_EQUAL(r.cpl.err, -EPIPE);
	CU_ASSERT_EQUAL(qp->state, QP_FAILED);
	fake_qpair_free(qp);
}

static void test_timeout(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 4, 60);
	struct rec r[3] = { 0 };
	int t;

	submit(qp, &r[0]);
	usleep(20000);
	submit(qp, &r[1]);
	submit(qp, &r[2]);
	fake_complete(qp, 2, 0);
	qpair_poll(qp, 0, 0);
	CU_ASSERT_EQUAL(r[2].calls, 1);
	t = nvmeof_qpair_timeout_ms(qp);
	CU_ASSERT(t > 0 && t <= 45);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 0);
	usleep(70000);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 2);
	CU_ASSERT_EQUAL(r[0].cpl.err, -ETIMEDOUT);
	CU_ASSERT_EQUAL(r[1].cpl.err, -ECONNABORTED);
	CU_ASSERT_EQUAL(qp->state, QP_FAILED);
	CU_ASSERT_EQUAL(fake_qp(qp)->closed, 1);
	fake_qpair_free(qp);
}

static void test_close_cancels(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 4, 0);
	struct rec r[2] = { 0 };

	submit(qp, &r[0]);
	submit(qp, &r[1]);
	qpair_close(qp);
	CU_ASSERT_EQUAL(qpair_poll(qp, 0, 0), 2);
	CU_ASSERT_EQUAL(r[0].cpl.err, -ECANCELED);
	CU_ASSERT_EQUAL(r[1].cpl.err, -ECANCELED);
	fake_qpair_free(qp);
}

static void test_submit_checks(void)
{
	struct nvmeof_qpair *qp = fake_qpair_new(&ctrlr, 1, 4, 0);
	struct nvme_cmd sqe = { .opc = NVME_OPC_WRITE };
	uint8_t b[64];
	struct iovec iov[NVMEOF_IOV_MAX + 1];

	for (int i = 0; i <= NVMEOF_IOV_MAX; i++) {
		iov[i].iov_base = b;
		iov[i].iov_len = 1;
	}
	CU_ASSERT_EQUAL(qpair_submit_cmd(qp, &sqe, iov, NVMEOF_IOV_MAX + 1, 1,
					 NVME_XFER_HOST_TO_CTRLR, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(qpair_submit_cmd(qp, &sqe, iov, 2, 3, NVME_XFER_HOST_TO_CTRLR, NULL, NULL),
			-EINVAL); /* iovecs shorter than the length */
	qp->max_xfer = 32;
	CU_ASSERT_EQUAL(qpair_submit_cmd(qp, &sqe, iov, 64, 64, NVME_XFER_HOST_TO_CTRLR, NULL,
					 NULL),
			-EINVAL); /* a single command cannot be split */
	CU_ASSERT_EQUAL(qpair_submit_cmd(qp, &sqe, iov, 32, 32, NVME_XFER_HOST_TO_CTRLR, NULL,
					 NULL),
			0);
	fake_qpair_free(qp);
}

static void test_iov_slice(void)
{
	static uint8_t m[100];
	const struct iovec src[3] = { { m, 10 }, { m + 10, 20 }, { m + 30, 30 } };
	static const struct {
		size_t off, len;
		int want;
		size_t first_off, first_len, last_len;
	} cases[] = {
		{ 0, 60, 3, 0, 10, 30 },  { 5, 10, 2, 5, 5, 5 },   { 10, 20, 1, 10, 20, 20 },
		{ 29, 2, 2, 29, 1, 1 },	  { 59, 1, 1, 59, 1, 1 },  { 0, 61, -1, 0, 0, 0 },
		{ 60, 1, -1, 0, 0, 0 },	  { 0, 0, 0, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iovec out[4];
		int n = iov_slice(src, 3, cases[i].off, cases[i].len, out, 4);

		CU_ASSERT_EQUAL(n, cases[i].want);
		if (n > 0) {
			CU_ASSERT_PTR_EQUAL(out[0].iov_base, m + cases[i].first_off);
			CU_ASSERT_EQUAL(out[0].iov_len, cases[i].first_len);
			CU_ASSERT_EQUAL(out[n - 1].iov_len, cases[i].last_len);
			CU_ASSERT_EQUAL(iov_length(out, n), cases[i].len);
		}
	}
	{
		struct iovec out[2];
		size_t covered;

		CU_ASSERT_EQUAL(iov_slice(src, 3, 0, 60, out, 2), -1);
		CU_ASSERT_EQUAL(iov_slice_upto(src, 3, 5, 55, out, 2, &covered), 2);
		CU_ASSERT_EQUAL(covered, 25);
	}
	CU_ASSERT_EQUAL(iov_length(src, 3), 60);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "CIDs unique, completions matched by CID", test_cids_unique_and_matched },
		{ "stale and unknown CIDs rejected", test_stale_and_unknown_cids },
		{ "completion status decoding", test_status_decoding },
		{ "callbacks resubmit, never inside submit", test_callbacks_resubmit },
		{ "process at most max callbacks", test_max_callbacks },
		{ "queue failure completes everything", test_fail_completes_everything },
		{ "transport submit error fails the queue", test_submit_error_fails_queue },
		{ "command timeout", test_timeout },
		{ "close cancels", test_close_cancels },
		{ "submission argument checks", test_submit_checks },
		{ "iovec slicing", test_iov_slice },
		CU_TEST_INFO_NULL,
	};

	return ut_run("initiator_qpair", NULL, NULL, tests);
}
