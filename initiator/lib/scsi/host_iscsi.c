/* SPDX-License-Identifier: MIT */
/*
 * iSCSI host transport: the queue-pair operations (submit, progress, events, close with a
 * polite Logout) and the fatal-error exit. The rest lives beside it:
 *   host_iscsi_session.c  allocation, connection and login     host_iscsi_login.c  login
 *   host_iscsi_task.c     tasks, CmdSN window, completion       host_iscsi_ctrlr.c  admin
 *   host_iscsi_send.c     PDU send path                         host_iscsi_recv.c   receive
 * with CRC32C header and data digests on both paths.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "host_iscsi.h"
#include "queue/host_transport.h"

#define ISCSI_LOGOUT_TIMEOUT_MS 2000
#define ISCSI_LOGOUT_ITT        0x0000ffffu /* never a task's ITT (index 0xffff is out of range) */

int iscsi_fatal(struct iscsi_qpair *iq, int err, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	iscsi_rx_set_state(iq, ISCSI_RX_DEAD);
	if (iq->closing) {
		nlog_debug("queue %u: during logout: %s", iq->qp.qid, msg);
		if (iq->fd >= 0)
			close(iq->fd);
		iq->fd = -1;
		return err;
	}
	qpair_fail(&iq->qp, err, "%s", msg);
	return err;
}

/* Send and receive what @revents allows. 0 or -errno once the connection is gone. */
int iscsi_io(struct iscsi_qpair *iq, short revents)
{
	int rc;

	if (iq->fd < 0)
		return -ENOTCONN;
	if (!TAILQ_EMPTY(&iq->sendq) && (rc = iscsi_send(iq)) < 0)
		return rc;
	if ((revents & POLLIN) && (rc = iscsi_recv(iq)) < 0)
		return rc;
	/* R2Ts and NOP-Ins just received want their answers out now. */
	if (iq->fd >= 0 && !TAILQ_EMPTY(&iq->sendq) && (rc = iscsi_send(iq)) < 0)
		return rc;
	return 0;
}

static int iscsi_progress(struct nvmeof_qpair *qp, short revents)
{
	return iscsi_io(iscsi_qp(qp), revents);
}

static int iscsi_get_fd(const struct nvmeof_qpair *qp)
{
	return iscsi_qp(qp)->fd;
}

short iscsi_which_events(const struct nvmeof_qpair *qp)
{
	const struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd < 0)
		return 0;
	return (short)(POLLIN | (TAILQ_EMPTY(&iq->sendq) ? 0 : POLLOUT));
}

static int iscsi_submit(struct nvmeof_qpair *qp, struct nvmeof_req *req)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd < 0)
		return -ENOTCONN;
	if (qp->qid == 0 || req->sqe.opc == NVME_OPC_FABRICS)
		return iscsi_admin_submit(iq, req);
	return iscsi_start_task(iq, req, ISCSI_TASK_SCSI);
}

/* ---- Logout and close ----------------------------------------------------------------------- */
static bool tasks_idle(const struct iscsi_qpair *iq)
{
	for (uint16_t i = 0; i < iq->ntasks; i++)
		if (iq->tasks[i].state != ISCSI_TASK_FREE)
			return false;
	return true;
}

/* Close the session politely: Logout (reason: close the session) and wait a little. */
static void iscsi_logout(struct iscsi_qpair *iq)
{
	uint64_t deadline = now_ms() + ISCSI_LOGOUT_TIMEOUT_MS;
	struct iscsi_pdu_out *p = host_iscsi_ctl_get(iq);
	struct iscsi_logout_req *h;

	if (!p)
		return;
	iq->closing = true;
	iq->logout_done = false;
	h = (struct iscsi_logout_req *)p->hdr;
	iscsi_bhs_init(h, ISCSI_OP_LOGOUT_REQ | ISCSI_FLAG_IMMEDIATE,
		       ISCSI_FLAG_FINAL | ISCSI_LOGOUT_CLOSE_SESSION);
	put_be32(&h->itt, ISCSI_LOGOUT_ITT);
	put_be16(&h->cid, 0);
	put_be32(&h->cmdsn, iq->s.cmdsn);
	iscsi_put_exp_statsn(iq, p->hdr);
	p->task = NULL;
	memset(&p->src, 0, sizeof(p->src));
	iscsi_pdu_queue(iq, p, 0, 0);
	while (!iq->logout_done && iq->fd >= 0 && iscsi_rx_alive(iq)) {
		struct pollfd pfd = { .fd = iq->fd, .events = iscsi_which_events(&iq->qp) };
		uint64_t now = now_ms();

		if (iscsi_io(iq, POLLIN | POLLOUT) < 0 || iq->logout_done)
			break;
		if (now >= deadline) {
			nlog_debug("queue %u: no Logout Response in %d ms", iq->qp.qid,
				   ISCSI_LOGOUT_TIMEOUT_MS);
			break;
		}
		poll(&pfd, 1, (int)(deadline - now));
	}
	iq->closing = false;
}

static void iscsi_qpair_close(struct nvmeof_qpair *qp)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd >= 0 && iq->logged_in && iscsi_rx_alive(iq) && !iq->closing &&
	    (qp->state == QP_READY || qp->state == QP_CONNECTING) && tasks_idle(iq))
		iscsi_logout(iq);
	if (iq->fd >= 0)
		close(iq->fd);
	iq->fd = -1;
	iq->logged_in = false;
	TAILQ_INIT(&iq->sendq);
	TAILQ_INIT(&iq->windowq);
	iq->rx_state = ISCSI_RX_DEAD;
	iq->rx_task = NULL;
	iq->rpos = iq->rlen = 0; /* a reconnect starts with an empty staging buffer */
	for (int i = 0; i < ISCSI_CTL_PDUS; i++)
		iq->ctl[i].queued = false;
	if (iq->tasks)
		for (uint16_t i = 0; i < iq->ntasks; i++) {
			iq->tasks[i].pdu.queued = false;
			iscsi_task_free(&iq->tasks[i]);
		}
}

static void iscsi_set_icdata(struct nvmeof_qpair *qp, uint32_t bytes)
{
	(void)qp;
	(void)bytes; /* immediate data follows the negotiated FirstBurstLength */
}

static void iscsi_get_info(const struct nvmeof_qpair *qp, struct nvmeof_ctrlr_info *info)
{
	const struct iscsi_qpair *iq = iscsi_qp(qp);

	snprintf(info->transport, sizeof(info->transport), "iscsi");
	info->hdgst = iq->s.hdgst;
	info->ddgst = iq->s.ddgst;
	info->maxh2cdata = iq->s.max_xmit_dsl;
}

const struct nvmeof_transport_ops iscsi_transport_ops = {
	.name = "iscsi",
	.uri_transport = URI_TRANSPORT_ISCSI,
	.qpair_alloc = iscsi_qpair_alloc,
	.qpair_connect = iscsi_qpair_connect,
	.qpair_close = iscsi_qpair_close,
	.qpair_free = iscsi_qpair_free,
	.get_fd = iscsi_get_fd,
	.which_events = iscsi_which_events,
	.submit = iscsi_submit,
	.progress = iscsi_progress,
	.set_icdata = iscsi_set_icdata,
	.get_info = iscsi_get_info,
	.ctrlr_setup = iscsi_ctrlr_setup,
};
