/* SPDX-License-Identifier: MIT */
/*
 * The initiator's NVMe/TCP reply parser (initiator/lib/nvme/host_tcp.c and the completion path in
 * qpair.c): a host I/O queue pair on one end of a socketpair, with five commands in
 * flight (reads into one and two buffers, an in-capsule write, a write by R2T, a Flush),
 * reads what a controller sends: a valid ICResp, then the input as the controller's byte
 * stream (CapsuleResp, C2HData, R2T, C2HTermReq, anything). Whatever arrives, every
 * command must be called back exactly once, data must land only in the caller's buffers
 * and the queue pair must fail cleanly at the latest when the stream ends.
 *
 * Input: [flags: bit 0 header digest, bit 1 data digest][controller byte stream].
 * The host's command IDs are fixed for a fresh queue pair (FUZZ_VERBOSE prints them).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/endian.h"
#include "common/nvme_tcp_pdu.h"
#include "fuzz.h"
#include "lib/nvme/host_nvme.h"

#define STREAM_MAX (64 * 1024)
#define NCMDS 5

struct result {
	unsigned int calls;
	struct nvmeof_cpl cpl;
};

static void store(void *arg, const struct nvmeof_cpl *cpl)
{
	struct result *r = arg;

	r->cpl = *cpl;
	r->calls++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static int submit(struct nvmeof_qpair *qp, uint8_t opc, struct iovec *iov, int iovcnt,
		  uint32_t len, struct result *r)
{
	struct nvme_cmd sqe = { .opc = opc };

	put_le32(&sqe.nsid, 1);
	put_le32(&sqe.cdw12, len ? len / 512 - 1 : 0);
	return qpair_submit_cmd(qp, &sqe, iov, iovcnt, len, nvme_opc_xfer(opc), store, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rd1[4096], rd2a[8192], rd2b[8192], wr1[4096], wr2[32768];
	struct nvmeof_ctrlr ctrlr;
	struct nvmeof_qpair *qp;
	struct result res[NCMDS];
	struct iovec v_rd1 = { rd1, sizeof(rd1) };
	struct iovec v_rd2[2] = { { rd2a, sizeof(rd2a) }, { rd2b, sizeof(rd2b) } };
	struct iovec v_wr1 = { wr1, sizeof(wr1) }, v_wr2 = { wr2, sizeof(wr2) };
	uint8_t ic[sizeof(struct nvme_tcp_icresp)], sink[65536];
	int fds[2], rc;
	bool hd, dd;

	if (size < 1)
		return 0;
	hd = data[0] & 1;
	dd = data[0] & 2;
	data++;
	size--;
	if (size > STREAM_MAX)
		size = STREAM_MAX;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
		abort();
	memset(&ctrlr, 0, sizeof(ctrlr));
	memset(res, 0, sizeof(res));
	nvmeof_opts_init(&ctrlr.opts);
	ctrlr.opts.hdgst = hd;
	ctrlr.opts.ddgst = dd;
	qp = host_tcp_transport_ops.qpair_alloc();
	if (!qp || qpair_init(qp, &ctrlr, 1, 8, 0) != 0)
		abort();

	/* The controller's side is written up front: ICResp, then the stream, then EOF. */
	nvme_tcp_build_icresp(ic, hd, dd, 0, 8192);
	if (send(fds[1], ic, sizeof(ic), MSG_NOSIGNAL) != (ssize_t)sizeof(ic) ||
	    (size && send(fds[1], data, size, MSG_NOSIGNAL) != (ssize_t)size))
		abort();
	shutdown(fds[1], SHUT_WR);

	rc = host_tcp_qpair_connect_fd(qp, fds[0], 2000);
	if (rc == 0) {
		qpair_set_state(qp, QP_READY);
		host_tcp_transport_ops.set_icdata(qp, 4096);
		submit(qp, NVME_OPC_READ, &v_rd1, 1, sizeof(rd1), &res[0]);
		submit(qp, NVME_OPC_READ, v_rd2, 2, sizeof(rd2a) + sizeof(rd2b), &res[1]);
		submit(qp, NVME_OPC_WRITE, &v_wr1, 1, sizeof(wr1), &res[2]);
		submit(qp, NVME_OPC_WRITE, &v_wr2, 1, sizeof(wr2), &res[3]);
		submit(qp, NVME_OPC_FLUSH, NULL, 0, 0, &res[4]);
		if (getenv("FUZZ_VERBOSE")) {
			struct nvmeof_req *r;

			TAILQ_FOREACH (r, &qp->outstanding, link)
				fprintf(stderr, "cid %u opc 0x%02x\n", r->cid, r->sqe.opc);
		}
		for (int i = 0; i < 10000 && qp->state == QP_READY && qp->nr_ureqs; i++) {
			struct pollfd pfd[2] = {
				{ .fd = host_tcp_transport_ops.get_fd(qp),
				  .events = host_tcp_transport_ops.which_events(qp) },
				{ .fd = fds[1], .events = POLLIN },
			};

			if (poll(pfd, 2, 100) < 0)
				break;
			if (pfd[1].revents & POLLIN)
				(void)recv(fds[1], sink, sizeof(sink), MSG_DONTWAIT);
			qpair_poll(qp, pfd[0].revents ? pfd[0].revents : 0, 0);
		}
		if (qp->state == QP_READY && qp->nr_ureqs)
			abort(); /* the stream ended (EOF) but commands are still waiting */
	}
	qpair_close(qp);
	qpair_poll(qp, 0, 0);
	close(fds[1]);
	if (rc == 0)
		for (int i = 0; i < NCMDS; i++)
			if (res[i].calls != 1)
				abort();
	qpair_fini(qp);
	host_tcp_transport_ops.qpair_free(qp);
	return 0;
}
