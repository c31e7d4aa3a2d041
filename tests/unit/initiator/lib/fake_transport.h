/* SPDX-License-Identifier: MIT */
/* A transport that records what it is given: the seam below host_qpair.c and host_io.c. */
#ifndef NVMEOF_TESTS_FAKE_TRANSPORT_H
#define NVMEOF_TESTS_FAKE_TRANSPORT_H

#include "lib/queue/host_transport.h"

#define FAKE_MAX_SENT 256

struct fake_qp {
	struct nvmeof_qpair qp;
	struct nvmeof_req *sent[FAKE_MAX_SENT]; /* in submission order */
	struct nvme_cmd sqe[FAKE_MAX_SENT];	/* copies, as submitted */
	int nsent;
	int closed;
	int submit_rc;				/* returned by submit when non-zero */
};

extern const struct nvmeof_transport_ops fake_transport_ops;

static inline struct fake_qp *fake_qp(struct nvmeof_qpair *qp)
{
	return container_of(qp, struct fake_qp, qp);
}

/* A queue pair on the fake transport, ready, with @nreqs wire slots. */
struct nvmeof_qpair *fake_qpair_new(struct nvmeof_ctrlr *ctrlr, uint16_t qid, uint16_t nreqs,
				    uint32_t timeout_ms);
void fake_qpair_free(struct nvmeof_qpair *qp);
/* Complete the @i-th submitted command with @status (wire form: SCT/SC shifted). */
void fake_complete(struct nvmeof_qpair *qp, int i, uint16_t status);

#endif
