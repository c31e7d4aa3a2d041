/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA host transport: RDMA CM connection set-up with the binding's private data
 * (QID, HRQSIZE, HSQSIZE; CRQSIZE back, or a reject status), command capsules by SEND,
 * small writes as in-capsule data, everything else through a keyed SGL descriptor that
 * names a registered buffer the controller reads (RDMA READ) or writes (RDMA WRITE), and
 * response capsules by SEND into pre-posted receive buffers.
 *
 * Data in memory the caller registered (nvmeof_mem_register, nvmeof_buf_alloc) is named
 * directly: every queue pair of a controller shares one protection domain, in which each
 * region is registered once, so a command's keyed descriptors carry the caller's addresses
 * and the region's key. One descriptor goes in SGL1; several (when the controller's MSDBD
 * allows and the capsule has room) go as a list in the capsule behind a Last Segment
 * descriptor. The controller may then write the caller's buffer until the queue pair is
 * torn down, which host_qpair.c does before it reports a timed-out command.
 *
 * Other data goes through per-slot bounce buffers registered once with the queue pair
 * (sized for the controller's MDTS on I/O queues); a transfer larger than that registers a
 * temporary buffer for that one command.
 *
 * One pollable descriptor (epoll) covers the completion channel and the RDMA CM event
 * channel, so a caller's event loop sees completions and a controller-side disconnect.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/endian.h"
#include "common/nvme_rdma_spec.h"
#include "host_rdma_sgl.h"
#include "host_nvme.h"

#define RDMA_ADMIN_SLOT_BUF 8192	 /* admin queue bounce buffer per slot */
#define RDMA_IO_SLOT_BUF_MAX (1u << 20) /* I/O queue bounce buffer per slot at most */
#define RDMA_IO_BOUNCE_BUDGET (32u << 20) /* bounce buffers of one I/O queue, about */
#define RDMA_IO_SLOT_BUF_MIN (64u << 10)
#define RDMA_CQ_BATCH 32
#define RDMA_CQ_BUDGET 1024		 /* completions per progress call */
#define RDMA_RESOLVE_MS 5000

enum wr_kind { WR_SEND = 0, WR_RECV = 1 };
#define WR_ID(idx, kind) ((uint64_t)(idx) << 1 | (kind))

/* Per-command transmit machine. */
enum slot_state {
	SLOT_IDLE,    /* no command */
	SLOT_PENDING, /* waiting for room in the send queue */
	SLOT_SENT,    /* capsule posted; waiting for the response */
};

struct rdma_slot {
	struct nvmeof_req *req;
	enum slot_state state;
	uint8_t *sqe;		/* registered command capsule (64 bytes) */
	uint8_t *bounce;	/* registered data buffer of slot_buf bytes */
	void *tmp;		/* larger transfers: temporary registered buffer */
	struct ibv_mr *tmp_mr;
	uint8_t *data; /* bounce or tmp; NULL for no data or the caller's memory */
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
	TAILQ_ENTRY(rdma_slot) link; /* pending list */
};

struct rdma_qp {
	struct nvmeof_qpair qp;
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd; /* the controller's shared one, unless own_pd */
	bool own_pd;       /* another device than the shared PD's: no zero copy */
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	int epfd;
	struct ibv_device_attr attr;

	uint8_t *cmd_buf;	/* SQEs, then responses */
	struct ibv_mr *cmd_mr;
	uint8_t *data_buf;	/* bounce buffers */
	struct ibv_mr *data_mr;
	size_t slot_buf;

	struct rdma_slot *slots;
	struct nvme_cpl *rsps;
	struct ibv_recv_wr *recv_wrs;
	struct ibv_sge *recv_sges;
	uint32_t nrsp;		/* receive buffers (HRQSIZE) */
	struct ibv_recv_wr *repost_head, *repost_tail;

	TAILQ_HEAD(, rdma_slot) pending;
	uint32_t sends_out, send_max;
	unsigned int cq_unacked;
	uint32_t icdata_max;
	unsigned int desc_max; /* keyed descriptors per command (MSDBD, capsule room) */
	uint16_t crqsize;
	bool connected;
	bool dead;
};

static struct rdma_qp *rqp(const struct nvmeof_qpair *qp)
{
	return container_of(qp, struct rdma_qp, qp);
}

/* ---- data copies between the caller's iovecs and a flat buffer ------------------------------- */

static void copy_iov(const struct nvmeof_req *req, uint8_t *buf, bool to_buf)
{
	size_t off = req->data_off, left = req->data_len;

	for (int i = 0; i < req->iovcnt && left; i++) {
		size_t n;

		if (off >= req->iov[i].iov_len) {
			off -= req->iov[i].iov_len;
			continue;
		}
		n = req->iov[i].iov_len - off;
		if (n > left)
			n = left;
		if (to_buf)
			memcpy(buf, (uint8_t *)req->iov[i].iov_base + off, n);
		else
			memcpy((uint8_t *)req->iov[i].iov_base + off, buf, n);
		buf += n;
		left -= n;
		off = 0;
	}
}

static void slot_drop_tmp(struct rdma_slot *slot)
{
	if (slot->tmp_mr)
		ibv_dereg_mr(slot->tmp_mr);
	free(slot->tmp);
	slot->tmp_mr = NULL;
	slot->tmp = NULL;
}

/* ---- send path ------------------------------------------------------------------------------- */

static int post_slot(struct rdma_qp *q, struct rdma_slot *slot)
{
	struct ibv_send_wr *bad;
	int rc;

	slot->wr.next = NULL;
	rc = ibv_post_send(q->id->qp, &slot->wr, &bad);
	if (rc)
		return -rc;
	q->sends_out++;
	slot->state = SLOT_SENT;
	return 0;
}

static int flush_pending(struct rdma_qp *q)
{
	struct rdma_slot *slot;

	while (q->sends_out < q->send_max && (slot = TAILQ_FIRST(&q->pending)) != NULL) {
		int rc;

		TAILQ_REMOVE(&q->pending, slot, link);
		rc = post_slot(q, slot);
		if (rc) {
			qpair_fail(&q->qp, rc, "cannot post a command: %s", strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int rdma_submit(struct nvmeof_qpair *qp, struct nvmeof_req *req)
{
	struct rdma_qp *q = rqp(qp);
	struct rdma_slot *slot = &q->slots[req->slot];
	struct nvme_sgl_desc *sgl = &req->sqe.dptr.sgl1;
	struct nvme_sgl_desc descs[HOST_RDMA_SGL_MAX];
	uint32_t len = req->data_len;
	int nsge = 1, n;

	if (q->dead || !q->connected)
		return -ENOTCONN;
	slot->req = req;
	slot->data = NULL;
	if (len == 0) {
		nvme_sgl_set_keyed(sgl, 0, 0, 0, false);
	} else if (req->xfer == NVME_XFER_HOST_TO_CTRLR && len <= q->icdata_max) {
		copy_iov(req, slot->bounce, true);
		nvme_sgl_set_inline(sgl, 0, len);
		slot->sge[1].addr = (uintptr_t)slot->bounce;
		slot->sge[1].length = len;
		slot->sge[1].lkey = q->data_mr->lkey;
		nsge = 2;
	} else if (!q->own_pd &&
		   (n = host_rdma_sgl_build(&qp->ctrlr->mem, req->iov, req->iovcnt, req->data_off,
					    len, descs, q->desc_max)) > 0) {
		/* Registered memory: the controller moves the data itself. The list of
		 * several descriptors rides in the capsule from the (unused) bounce buffer. */
		host_rdma_sgl_set(&req->sqe, descs, (unsigned int)n);
		if (n > 1) {
			memcpy(slot->bounce, descs, (size_t)n * sizeof(descs[0]));
			slot->sge[1].addr = (uintptr_t)slot->bounce;
			slot->sge[1].length = (uint32_t)n * (uint32_t)sizeof(descs[0]);
			slot->sge[1].lkey = q->data_mr->lkey;
			nsge = 2;
		}
		qp->direct_cmds++;
		qp->direct_descs += (unsigned int)n;
	} else {
		uint32_t rkey = q->data_mr->rkey;

		if (len > NVME_RDMA_KEYED_LEN_MAX)
			return -EINVAL;
		slot->data = slot->bounce;
		if (len > q->slot_buf) {
			/* Rare: more than the bounce buffer. Register a buffer for this one. */
			if (posix_memalign(&slot->tmp, 4096, len) != 0) {
				slot->tmp = NULL;
				return -ENOMEM;
			}
			slot->tmp_mr = ibv_reg_mr(q->pd, slot->tmp, len,
						  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
							  IBV_ACCESS_REMOTE_WRITE);
			if (!slot->tmp_mr) {
				int rc = errno ? -errno : -ENOMEM;

				slot_drop_tmp(slot);
				return rc;
			}
			slot->data = slot->tmp;
			rkey = slot->tmp_mr->rkey;
		}
		if (req->xfer == NVME_XFER_HOST_TO_CTRLR)
			copy_iov(req, slot->data, true);
		nvme_sgl_set_keyed(sgl, (uintptr_t)slot->data, len, rkey, false);
	}
	req->sqe.flags = (uint8_t)((req->sqe.flags & ~(3u << NVME_CMD_PSDT_SHIFT)) |
				   NVME_CMD_PSDT_SGL_MPTR_CONTIG << NVME_CMD_PSDT_SHIFT);
	memcpy(slot->sqe, &req->sqe, sizeof(req->sqe));
	slot->wr.num_sge = nsge;
	if (q->sends_out < q->send_max && TAILQ_EMPTY(&q->pending))
		return post_slot(q, slot);
	slot->state = SLOT_PENDING;
	TAILQ_INSERT_TAIL(&q->pending, slot, link);
	return 0;
}

/* ---- completions ----------------------------------------------------------------------------- */

static void repost(struct rdma_qp *q, uint32_t idx)
{
	struct ibv_recv_wr *wr = &q->recv_wrs[idx];

	wr->next = NULL;
	if (q->repost_tail)
		q->repost_tail->next = wr;
	else
		q->repost_head = wr;
	q->repost_tail = wr;
}

static int handle_rsp(struct rdma_qp *q, uint32_t idx, uint32_t len)
{
	struct nvme_cpl cqe;
	struct nvmeof_req *req;
	struct rdma_slot *slot;

	if (len < sizeof(cqe)) {
		qpair_fail(&q->qp, -EPROTO, "response capsule of %u bytes", len);
		return -EPROTO;
	}
	memcpy(&cqe, &q->rsps[idx], sizeof(cqe));
	repost(q, idx);
	req = qpair_find_req(&q->qp, get_le16(&cqe.cid));
	if (!req) {
		qpair_fail(&q->qp, -EPROTO, "response for unknown command ID %u",
			   get_le16(&cqe.cid));
		return -EPROTO;
	}
	slot = &q->slots[req->slot];
	if (slot->state == SLOT_PENDING) {
		qpair_fail(&q->qp, -EPROTO, "response for command ID %u before it was sent",
			   get_le16(&cqe.cid));
		return -EPROTO;
	}
	/* The controller's RDMA WRITE of read data is placed before its response arrives. */
	if (req->xfer == NVME_XFER_CTRLR_TO_HOST && slot->data && cqe_status(&cqe) == 0)
		copy_iov(req, slot->data, false);
	slot_drop_tmp(slot);
	slot->data = NULL;
	slot->state = SLOT_IDLE;
	slot->req = NULL;
	req_complete(req, &cqe, 0);
	return 0;
}

static int handle_wc(struct rdma_qp *q, const struct ibv_wc *wc)
{
	uint32_t idx = (uint32_t)(wc->wr_id >> 1);
	bool recv = (wc->wr_id & 1) == WR_RECV;

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			qpair_fail(&q->qp, -ECONNRESET, "RDMA connection lost");
		else
			qpair_fail(&q->qp, -EIO, "RDMA %s failed: %s (vendor error 0x%x)",
				   recv ? "receive" : "send", ibv_wc_status_str(wc->status),
				   wc->vendor_err);
		return -EIO;
	}
	if (!recv) {
		if (q->sends_out)
			q->sends_out--;
		return 0;
	}
	if (idx >= q->nrsp) {
		qpair_fail(&q->qp, -EPROTO, "completion for unknown receive %u", idx);
		return -EPROTO;
	}
	return handle_rsp(q, idx, wc->byte_len);
}

static int poll_cq(struct rdma_qp *q, int *budget)
{
	struct ibv_wc wc[RDMA_CQ_BATCH];
	int total = 0;

	while (*budget > 0 && !q->dead) {
		int n = ibv_poll_cq(q->cq, RDMA_CQ_BATCH, wc);

		if (n < 0) {
			qpair_fail(&q->qp, -EIO, "cannot poll the completion queue");
			return -EIO;
		}
		for (int i = 0; i < n; i++)
			if (handle_wc(q, &wc[i]) < 0)
				return -EIO;
		total += n;
		*budget -= n;
		if (n < RDMA_CQ_BATCH)
			break;
	}
	return total;
}

static int post_reposts(struct rdma_qp *q)
{
	struct ibv_recv_wr *bad;
	int rc;

	if (!q->repost_head || q->dead)
		return 0;
	rc = ibv_post_recv(q->id->qp, q->repost_head, &bad);
	q->repost_head = q->repost_tail = NULL;
	if (rc) {
		qpair_fail(&q->qp, -rc, "cannot post receive buffers: %s", strerror(rc));
		return -rc;
	}
	return 0;
}

static int cm_events(struct rdma_qp *q)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(q->cm_ch, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;

		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    type == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
			qpair_fail(&q->qp, -ECONNRESET, "controller closed the connection (%s)",
				   rdma_event_str(type));
			return -ECONNRESET;
		}
		nlog_debug("queue %u: RDMA CM event %s", q->qp.qid, rdma_event_str(type));
	}
	return 0;
}

static int rdma_progress(struct nvmeof_qpair *qp, short revents)
{
	struct rdma_qp *q = rqp(qp);
	int budget = RDMA_CQ_BUDGET;
	struct ibv_cq *cq;
	void *ctx;
	int n;

	if (q->dead)
		return -ENOTCONN;
	if (cm_events(q) < 0)
		return qp->err;
	while (ibv_get_cq_event(q->cc, &cq, &ctx) == 0)
		q->cq_unacked++;
	if (q->cq_unacked >= 64) {
		ibv_ack_cq_events(q->cq, q->cq_unacked);
		q->cq_unacked = 0;
	}
	for (;;) {
		if (poll_cq(q, &budget) < 0)
			return qp->err;
		if (budget <= 0)
			break; /* left unarmed: the next progress call polls again */
		if (ibv_req_notify_cq(q->cq, 0) != 0) {
			qpair_fail(qp, -EIO, "cannot arm the completion queue");
			return qp->err;
		}
		n = poll_cq(q, &budget);
		if (n < 0)
			return qp->err;
		if (n == 0)
			break;
	}
	if (post_reposts(q) < 0 || flush_pending(q) < 0)
		return qp->err;
	return 0;
}

static int rdma_get_fd(const struct nvmeof_qpair *qp)
{
	return rqp(qp)->epfd;
}

static short rdma_which_events(const struct nvmeof_qpair *qp)
{
	return rqp(qp)->dead ? 0 : POLLIN;
}

/* ---- connection set-up ----------------------------------------------------------------------- */

static int wait_cm_event(struct rdma_qp *q, enum rdma_cm_event_type want, uint64_t deadline,
			 const char *what)
{
	for (;;) {
		struct pollfd pfd = { .fd = q->cm_ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		uint64_t now = now_ms();
		int rc;

		if (rdma_get_cm_event(q->cm_ch, &ev) == 0) {
			enum rdma_cm_event_type type = ev->event;
			int status = ev->status;

			if (type == want) {
				if (type == RDMA_CM_EVENT_ESTABLISHED) {
					int crq = nvme_rdma_cm_rep_crqsize(
						ev->param.conn.private_data,
						ev->param.conn.private_data_len);

					q->crqsize = crq < 0 ? 0 : (uint16_t)crq;
				}
				rdma_ack_cm_event(ev);
				return 0;
			}
			if (type == RDMA_CM_EVENT_REJECTED) {
				int sts = nvme_rdma_cm_rej_status(ev->param.conn.private_data,
								  ev->param.conn.private_data_len);

				rdma_ack_cm_event(ev);
				if (sts > 0)
					return set_error(-ECONNREFUSED,
							 "controller rejected the RDMA connection: "
							 "%s (status %d)",
							 nvme_rdma_cm_status_name(sts), sts);
				return set_error(-ECONNREFUSED,
						 "RDMA connection to %s:%u refused (status %d): "
						 "no NVMe/RDMA listener there?",
						 q->qp.ctrlr->uri.host, q->qp.ctrlr->uri.port,
						 status);
			}
			rdma_ack_cm_event(ev);
			return set_error(-EHOSTUNREACH, "RDMA %s failed: %s (status %d)", what,
					 rdma_event_str(type), status);
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return set_error(-errno, "RDMA CM: %s", strerror(errno));
		if (now >= deadline)
			return set_error(-ETIMEDOUT, "RDMA %s: no answer in time", what);
		rc = poll(&pfd, 1, (int)(deadline - now));
		if (rc < 0 && errno != EINTR)
			return set_error(-errno, "poll: %s", strerror(errno));
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Every queue pair of a controller uses one protection domain, so memory the caller
 * registered once is reachable through all of them, also after a reconnect (librdmacm
 * keeps a device's verbs context open while the device exists, so a queue connected
 * again sees the same context). A queue on another device (not expected) gets its own PD
 * and the bounce path only. */
static int attach_pd(struct rdma_qp *q, struct ibv_context *ctx)
{
	struct host_mem *m = &q->qp.ctrlr->mem;

	pthread_mutex_lock(&m->lock);
	if (!m->pd) {
		m->pd = ibv_alloc_pd(ctx);
		m->dev = m->pd ? ctx : NULL;
	}
	if (m->pd && m->dev == ctx)
		q->pd = m->pd;
	pthread_mutex_unlock(&m->lock);
	if (q->pd)
		return 0;
	q->pd = ibv_alloc_pd(ctx);
	if (!q->pd)
		return set_error(-ENOMEM, "ibv_alloc_pd: %s", strerror(errno));
	q->own_pd = true;
	nlog_warn("queue %u: RDMA device %s differs from the controller's other queues: "
		  "registered memory is copied on this queue",
		  q->qp.qid, ibv_get_device_name(ctx->device));
	return 0;
}

static int setup_resources(struct rdma_qp *q)
{
	struct nvmeof_qpair *qp = &q->qp;
	struct ibv_qp_init_attr qpa;
	struct ibv_context *ctx = q->id->verbs;
	uint32_t n = qp->nreqs;
	size_t cmd_bytes;
	struct epoll_event ee = { .events = EPOLLIN };
	int rc;

	if (ibv_query_device(ctx, &q->attr) != 0)
		return set_error(-errno, "ibv_query_device: %s", strerror(errno));
	rc = attach_pd(q, ctx);
	if (rc)
		return rc;
	q->nrsp = qp->entries;
	q->send_max = n + 4;
	if (q->send_max > (uint32_t)q->attr.max_qp_wr || q->nrsp > (uint32_t)q->attr.max_qp_wr)
		return set_error(-EINVAL, "queue depth %u exceeds the RDMA device's limit %d", n,
				 q->attr.max_qp_wr);
	q->cc = ibv_create_comp_channel(ctx);
	if (!q->cc || set_nonblock(q->cc->fd) != 0)
		return set_error(-ENOMEM, "cannot create a completion channel: %s",
				 strerror(errno));
	q->cq = ibv_create_cq(ctx, (int)(q->send_max + q->nrsp), q, q->cc, 0);
	if (!q->cq)
		return set_error(-ENOMEM, "cannot create a completion queue: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.qp_type = IBV_QPT_RC;
	qpa.send_cq = q->cq;
	qpa.recv_cq = q->cq;
	qpa.cap.max_send_wr = q->send_max;
	qpa.cap.max_recv_wr = q->nrsp;
	qpa.cap.max_send_sge = 2;
	qpa.cap.max_recv_sge = 1;
	if (rdma_create_qp(q->id, q->pd, &qpa) != 0)
		return set_error(-errno, "cannot create an RDMA queue pair: %s", strerror(errno));

	/* Bounce buffers: MDTS on I/O queues (and at least the in-capsule size). */
	if (qp->qid == 0) {
		q->slot_buf = RDMA_ADMIN_SLOT_BUF;
	} else {
		/* MDTS, unless deep queues of large transfers would pin too much memory:
		 * larger commands then take the temporary-buffer path. */
		size_t m = qp->ctrlr->max_xfer ? qp->ctrlr->max_xfer : RDMA_IO_SLOT_BUF_MAX;
		size_t share = RDMA_IO_BOUNCE_BUDGET / n;

		if (m > RDMA_IO_SLOT_BUF_MAX)
			m = RDMA_IO_SLOT_BUF_MAX;
		if (m > share)
			m = share > RDMA_IO_SLOT_BUF_MIN ? share : RDMA_IO_SLOT_BUF_MIN;
		if (m < qp->ctrlr->io_icdata)
			m = qp->ctrlr->io_icdata;
		q->slot_buf = (m + 4095) & ~(size_t)4095;
	}
	cmd_bytes = (size_t)n * sizeof(struct nvme_cmd) + (size_t)q->nrsp * sizeof(struct nvme_cpl);
	if (posix_memalign((void **)&q->cmd_buf, 4096, cmd_bytes) != 0 ||
	    posix_memalign((void **)&q->data_buf, 4096, (size_t)n * q->slot_buf) != 0)
		return set_error(-ENOMEM, "out of memory for %u x %zu byte buffers", n,
				 q->slot_buf);
	memset(q->cmd_buf, 0, cmd_bytes);
	q->cmd_mr = ibv_reg_mr(q->pd, q->cmd_buf, cmd_bytes, IBV_ACCESS_LOCAL_WRITE);
	q->data_mr = ibv_reg_mr(q->pd, q->data_buf, (size_t)n * q->slot_buf,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_WRITE);
	if (!q->cmd_mr || !q->data_mr)
		return set_error(-ENOMEM, "cannot register buffers: %s", strerror(errno));

	q->slots = calloc(n, sizeof(*q->slots));
	q->recv_wrs = calloc(q->nrsp, sizeof(*q->recv_wrs));
	q->recv_sges = calloc(q->nrsp, sizeof(*q->recv_sges));
	if (!q->slots || !q->recv_wrs || !q->recv_sges)
		return set_error(-ENOMEM, "out of memory");
	q->rsps = (struct nvme_cpl *)(q->cmd_buf + (size_t)n * sizeof(struct nvme_cmd));
	for (uint32_t i = 0; i < n; i++) {
		struct rdma_slot *s = &q->slots[i];

		s->sqe = q->cmd_buf + (size_t)i * sizeof(struct nvme_cmd);
		s->bounce = q->data_buf + (size_t)i * q->slot_buf;
		s->sge[0].addr = (uintptr_t)s->sqe;
		s->sge[0].length = sizeof(struct nvme_cmd);
		s->sge[0].lkey = q->cmd_mr->lkey;
		s->wr.wr_id = WR_ID(i, WR_SEND);
		s->wr.sg_list = s->sge;
		s->wr.opcode = IBV_WR_SEND;
		s->wr.send_flags = IBV_SEND_SIGNALED;
	}
	for (uint32_t i = 0; i < q->nrsp; i++) {
		q->recv_sges[i].addr = (uintptr_t)&q->rsps[i];
		q->recv_sges[i].length = sizeof(struct nvme_cpl);
		q->recv_sges[i].lkey = q->cmd_mr->lkey;
		q->recv_wrs[i].wr_id = WR_ID(i, WR_RECV);
		q->recv_wrs[i].sg_list = &q->recv_sges[i];
		q->recv_wrs[i].num_sge = 1;
		q->recv_wrs[i].next = i + 1 < q->nrsp ? &q->recv_wrs[i + 1] : NULL;
	}
	{
		struct ibv_recv_wr *bad;

		rc = ibv_post_recv(q->id->qp, q->recv_wrs, &bad);
		if (rc)
			return set_error(-rc, "cannot post receive buffers: %s", strerror(rc));
	}

	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return set_error(-errno, "epoll_create1: %s", strerror(errno));
	ee.data.fd = q->cc->fd;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->cc->fd, &ee) != 0)
		return set_error(-errno, "epoll_ctl: %s", strerror(errno));
	ee.data.fd = q->cm_ch->fd;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->cm_ch->fd, &ee) != 0)
		return set_error(-errno, "epoll_ctl: %s", strerror(errno));
	if (ibv_req_notify_cq(q->cq, 0) != 0)
		return set_error(-EIO, "cannot arm the completion queue");
	return 0;
}

static int rdma_qpair_connect(struct nvmeof_qpair *qp, int timeout_ms)
{
	struct rdma_qp *q = rqp(qp);
	const struct uri_target *u = &qp->ctrlr->uri;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *ai = NULL;
	struct rdma_conn_param param;
	struct nvme_rdma_cm_req priv;
	char port[8];
	int rc, tmo = timeout_ms < RDMA_RESOLVE_MS ? timeout_ms : RDMA_RESOLVE_MS;

	q->cm_ch = rdma_create_event_channel();
	if (!q->cm_ch)
		return set_error(errno ? -errno : -ENODEV,
				 "cannot open the RDMA CM (%s): no RDMA device or rdma_ucm module?",
				 strerror(errno));
	if (set_nonblock(q->cm_ch->fd) != 0)
		return set_error(-errno, "fcntl: %s", strerror(errno));
	if (rdma_create_id(q->cm_ch, &q->id, q, RDMA_PS_TCP) != 0)
		return set_error(-errno, "rdma_create_id: %s", strerror(errno));
	snprintf(port, sizeof(port), "%u", u->port);
	rc = getaddrinfo(u->host, port, &hints, &ai);
	if (rc)
		return set_error(-EHOSTUNREACH, "cannot resolve '%s': %s", u->host,
				 gai_strerror(rc));
	rc = rdma_resolve_addr(q->id, NULL, ai->ai_addr, tmo);
	freeaddrinfo(ai);
	if (rc != 0)
		return set_error(-errno, "cannot resolve %s on an RDMA device: %s", u->host,
				 strerror(errno));
	rc = wait_cm_event(q, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, "address resolution");
	if (rc)
		return rc;
	if (rdma_resolve_route(q->id, tmo) != 0)
		return set_error(-errno, "rdma_resolve_route: %s", strerror(errno));
	rc = wait_cm_event(q, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, "route resolution");
	if (rc)
		return rc;
	rc = setup_resources(q);
	if (rc)
		return rc;

	nvme_rdma_cm_req_build(&priv, qp->qid, (uint16_t)q->nrsp, (uint16_t)(qp->entries - 1),
			       qp->qid ? qp->ctrlr->cntlid : 0xffff);
	memset(&param, 0, sizeof(param));
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);
	/* The controller reads write data from us: let it have as many reads as we can take. */
	param.responder_resources = q->attr.max_qp_rd_atom > 255 ? 255
								 : (uint8_t)q->attr.max_qp_rd_atom;
	param.initiator_depth = 0;
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_connect(q->id, &param) != 0)
		return set_error(-errno, "rdma_connect: %s", strerror(errno));
	rc = wait_cm_event(q, RDMA_CM_EVENT_ESTABLISHED, deadline, "connection");
	if (rc)
		return rc;
	if (q->crqsize && q->crqsize < qp->nreqs)
		return set_error(-EPROTO,
				 "controller takes %u commands on queue %u, fewer than %u",
				 q->crqsize, qp->qid, qp->nreqs);
	q->connected = true;
	q->icdata_max = 0; /* in-capsule data on I/O queues only, once Identify told its size */
	q->desc_max = 1;   /* descriptor lists too (they travel as in-capsule data) */
	nlog_debug("queue %u: NVMe/RDMA connected via %s (CRQSIZE %u, %zu-byte bounce buffers)",
		   qp->qid, ibv_get_device_name(q->id->verbs->device), q->crqsize, q->slot_buf);
	return 0;
}

static void release_resources(struct rdma_qp *q)
{
	if (q->slots)
		for (uint16_t i = 0; i < q->qp.nreqs; i++)
			slot_drop_tmp(&q->slots[i]);
	if (q->id && q->id->qp)
		rdma_destroy_qp(q->id);
	if (q->cq) {
		if (q->cq_unacked)
			ibv_ack_cq_events(q->cq, q->cq_unacked);
		ibv_destroy_cq(q->cq);
	}
	if (q->cc)
		ibv_destroy_comp_channel(q->cc);
	if (q->cmd_mr)
		ibv_dereg_mr(q->cmd_mr);
	if (q->data_mr)
		ibv_dereg_mr(q->data_mr);
	if (q->pd && q->own_pd)
		ibv_dealloc_pd(q->pd);
	q->own_pd = false;
	if (q->id)
		rdma_destroy_id(q->id);
	if (q->cm_ch)
		rdma_destroy_event_channel(q->cm_ch);
	if (q->epfd >= 0)
		close(q->epfd);
	free(q->cmd_buf);
	free(q->data_buf);
	free(q->slots);
	free(q->recv_wrs);
	free(q->recv_sges);
	q->cq_unacked = 0;
	q->cq = NULL;
	q->cc = NULL;
	q->cmd_mr = q->data_mr = NULL;
	q->pd = NULL;
	q->id = NULL;
	q->cm_ch = NULL;
	q->epfd = -1;
	q->cmd_buf = q->data_buf = NULL;
	q->slots = NULL;
	q->recv_wrs = NULL;
	q->recv_sges = NULL;
}

/* Drop the connection and every verbs object: no transfer touches our buffers after this. */
static void rdma_qpair_close(struct nvmeof_qpair *qp)
{
	struct rdma_qp *q = rqp(qp);

	if (q->dead)
		return;
	q->dead = true;
	if (q->id && q->connected)
		rdma_disconnect(q->id);
	q->connected = false;
	TAILQ_INIT(&q->pending);
	q->repost_head = q->repost_tail = NULL;
	release_resources(q);
}

static struct nvmeof_qpair *rdma_qpair_alloc(void)
{
	struct rdma_qp *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->epfd = -1;
	q->qp.ops = &rdma_transport_ops;
	TAILQ_INIT(&q->pending);
	return &q->qp;
}

static void rdma_qpair_free(struct nvmeof_qpair *qp)
{
	struct rdma_qp *q = rqp(qp);

	release_resources(q);
	free(q);
}

static void rdma_set_icdata(struct nvmeof_qpair *qp, uint32_t bytes)
{
	struct rdma_qp *q = rqp(qp);

	const struct nvme_id_ctrl *id = qp->ctrlr ? qp->ctrlr->id : NULL;
	unsigned int msdbd = id && id->msdbd ? id->msdbd : 1;

	q->icdata_max = bytes < q->slot_buf ? bytes : (uint32_t)q->slot_buf;
	/* A descriptor list travels as in-capsule data: as many as MSDBD and IOCCSZ allow. */
	q->desc_max = q->icdata_max / sizeof(struct nvme_sgl_desc);
	if (q->desc_max > msdbd)
		q->desc_max = msdbd;
	if (q->desc_max > HOST_RDMA_SGL_MAX)
		q->desc_max = HOST_RDMA_SGL_MAX;
	if (q->desc_max < 1)
		q->desc_max = 1;
}

/* ---- registered memory ----------------------------------------------------------------------- */

/* ops->mem_register, with ctrlr->mem.lock held: one MR in the shared protection domain. */
static int rdma_mem_register(struct nvmeof_ctrlr *ctrlr, struct host_mem_region *r)
{
	struct ibv_mr *mr;

	if (!ctrlr->mem.pd)
		return set_error(-ENOTCONN, "no RDMA connection to register memory with");
	mr = ibv_reg_mr(ctrlr->mem.pd, (void *)r->base, r->len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		return set_error(errno ? -errno : -ENOMEM, "cannot register %zu bytes: %s", r->len,
				 strerror(errno));
	r->handle = mr;
	r->key = mr->rkey;
	return 0;
}

static void rdma_mem_unregister(struct nvmeof_ctrlr *ctrlr, struct host_mem_region *r)
{
	(void)ctrlr;
	if (r->handle)
		ibv_dereg_mr(r->handle);
	r->handle = NULL;
}

/* ops->ctrlr_fini: every queue pair and memory region is gone; drop the shared PD. */
static void rdma_ctrlr_fini(struct nvmeof_ctrlr *ctrlr)
{
	if (ctrlr->mem.pd)
		ibv_dealloc_pd(ctrlr->mem.pd);
	ctrlr->mem.pd = NULL;
	ctrlr->mem.dev = NULL;
}

static void rdma_get_info(const struct nvmeof_qpair *qp, struct nvmeof_ctrlr_info *info)
{
	snprintf(info->transport, sizeof(info->transport), "rdma");
	info->hdgst = false;
	info->ddgst = false;
	info->maxh2cdata = 0;
}

const struct nvmeof_transport_ops rdma_transport_ops = {
	.name = "rdma",
	.uri_transport = URI_TRANSPORT_RDMA,
	.qpair_alloc = rdma_qpair_alloc,
	.qpair_connect = rdma_qpair_connect,
	.qpair_close = rdma_qpair_close,
	.qpair_free = rdma_qpair_free,
	.get_fd = rdma_get_fd,
	.which_events = rdma_which_events,
	.submit = rdma_submit,
	.progress = rdma_progress,
	.set_icdata = rdma_set_icdata,
	.get_info = rdma_get_info,
	.mem_register = rdma_mem_register,
	.mem_unregister = rdma_mem_unregister,
	.ctrlr_fini = rdma_ctrlr_fini,
};
