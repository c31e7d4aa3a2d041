/* SPDX-License-Identifier: MIT */
#include "fake_transport.h"

#include <stdlib.h>

#include "common/endian.h"

static struct nvmeof_qpair *f_alloc(void)
{
	struct fake_qp *f = calloc(1, sizeof(*f));

	f->qp.ops = &fake_transport_ops;
	return &f->qp;
}

static void f_close(struct nvmeof_qpair *qp)
{
	fake_qp(qp)->closed++;
}

static void f_free(struct nvmeof_qpair *qp)
{
	free(fake_qp(qp));
}

static int f_get_fd(const struct nvmeof_qpair *qp)
{
	return 1000;
}

static short f_which_events(const struct nvmeof_qpair *qp)
{
	return 0;
}

static int f_submit(struct nvmeof_qpair *qp, struct nvmeof_req *req)
{
	struct fake_qp *f = fake_qp(qp);

	if (f->submit_rc)
		return f->submit_rc;
	if (f->nsent < FAKE_MAX_SENT) {
		f->sqe[f->nsent] = req->sqe;
		f->sent[f->nsent++] = req;
	}
	return 0;
}

static int f_progress(struct nvmeof_qpair *qp, short revents)
{
	return 0;
}

const struct nvmeof_transport_ops fake_transport_ops = {
	.name = "fake",
	.qpair_alloc = f_alloc,
	.qpair_close = f_close,
	.qpair_free = f_free,
	.get_fd = f_get_fd,
	.which_events = f_which_events,
	.submit = f_submit,
	.progress = f_progress,
};

struct nvmeof_qpair *fake_qpair_new(struct nvmeof_ctrlr *ctrlr, uint16_t qid, uint16_t nreqs,
				    uint32_t timeout_ms)
{
	struct nvmeof_qpair *qp = f_alloc();

	if (qpair_init(qp, ctrlr, qid, nreqs, timeout_ms)) {
		free(fake_qp(qp));
		return NULL;
	}
	qpair_set_state(qp, QP_READY);
	return qp;
}

void fake_qpair_free(struct nvmeof_qpair *qp)
{
	qpair_close(qp);
	qpair_poll(qp, 0, 0);
	qpair_fini(qp);
	f_free(qp);
}

void fake_complete(struct nvmeof_qpair *qp, int i, uint16_t status)
{
	struct fake_qp *f = fake_qp(qp);
	struct nvme_cpl cqe = { 0 };

	put_le16(&cqe.cid, get_le16(&f->sqe[i].cid));
	put_le16(&cqe.status, status);
	qpair_complete_cqe(qp, &cqe);
}
