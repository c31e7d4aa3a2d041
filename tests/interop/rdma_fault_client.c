/* SPDX-License-Identifier: MIT */
/*
 * Fault injection against nvmeof-target's NVMe/RDMA port (driven by rdma-fault.sh inside
 * the lab guest, over soft-RoCE): a host written directly on librdmacm/libibverbs that
 * connects an admin and an I/O queue (private data, Fabrics Connect with keyed-SGL connect
 * data), then misbehaves.
 *
 *   rdma_fault_client ADDR PORT SUBNQN SCENARIO
 *
 * Scenarios:
 *   healthy      Write 128 KiB, read it back, compare (keyed SGLs).
 *   die          Hosts that send a 128 KiB Write (the target RDMA READs its data) and exit
 *                at once without disconnecting, 16 times, some also after a Read.
 *   qp-error     Our QP moved to the error state with commands outstanding; then a Send
 *                whose SGE names an lkey that does not exist (a malformed work request).
 *   short-capsule  A command capsule of 10 bytes.
 *   bad-rkey     A Write and then a Read whose keyed SGL names an unregistered rkey (and
 *                one with a valid rkey but an address outside the region): the target's
 *                RDMA READ/WRITE fails; it must fail the command or drop the queue.
 *   preconnect-flood N MAXCONNECTING PID MAXPIN_KB WAIT_S
 *                N queues whose CM request asks for the deepest I/O queue (QID 1,
 *                HSQSIZE 127) and that never send Connect. At most MAXCONNECTING may be
 *                open at once (the rest refused until the target closes some), the target
 *                (PID) may pin at most MAXPIN_KB more (VmPin: what it registered), and
 *                every accepted one must be closed by the target within WAIT_S seconds of
 *                the last request.
 *   qid-mismatch A Connect whose QID differs from the QID of the queue's CM request
 *                (admin Connect on an I/O queue, I/O Connect on an admin queue, another
 *                I/O queue's QID): refused with Connect Invalid Parameters naming QID.
 * Exit status 0 when the target behaved (it answered or dropped the queue; healthy I/O
 * verified), 1 otherwise. The daemon being alive afterwards is checked by the caller.
 */
#include <errno.h>
#include <stddef.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/nvme_rdma_spec.h"
#include "common/nvme_spec.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:5a5a5a5a-0000-4000-8000-rdmafault000"
#define QD      16
#define XFER    (128u * 1024)
#define BS      512u

static const char *g_addr, *g_port, *g_subnqn;

#define REQUIRE(cond, ...)                                                  \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "rdma_fault_client: " __VA_ARGS__); \
			fprintf(stderr, "\n");                              \
			return -1;                                          \
		}                                                           \
	} while (0)

/* One registered region: capsules, responses, connect data, I/O data. */
struct region {
	struct nvme_cmd cmd[QD];
	struct nvme_cpl cpl[QD];
	struct nvmf_connect_data cdata;
	uint8_t data[2][XFER];
};

struct q {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct region *r;
	uint16_t cntlid;
	uint16_t cid;
	bool dead; /* disconnected or flushed */
};

/* The next CM event of @q within @ms: its type (-1: none) and status (the NVMe/RDMA
 * reject status for a rejection). */
static int cm_next(struct q *q, int ms, int *status)
{
	struct pollfd p = { .fd = q->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	*status = 0;
	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(q->ch, &ev) != 0)
		return -1;
	type = ev->event;
	*status = ev->status;
	if (type == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data)
		*status = nvme_rdma_cm_rej_status(ev->param.conn.private_data,
						  ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	return type;
}

static int cm_wait(struct q *q, enum rdma_cm_event_type want, int ms)
{
	struct pollfd p = { .fd = q->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type, st;

	REQUIRE(poll(&p, 1, ms) == 1, "no RDMA CM event (waiting for %s)", rdma_event_str(want));
	REQUIRE(rdma_get_cm_event(q->ch, &ev) == 0, "rdma_get_cm_event: %s", strerror(errno));
	type = ev->event;
	st = ev->status;
	if (type == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data)
		st = nvme_rdma_cm_rej_status(ev->param.conn.private_data,
					     ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	REQUIRE(type == (int)want, "RDMA CM event %s (status %d), expected %s",
		rdma_event_str(type), st, rdma_event_str(want));
	return 0;
}

static void q_destroy(struct q *q)
{
	if (q->id && q->id->qp)
		rdma_destroy_qp(q->id);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->pd)
		ibv_dealloc_pd(q->pd);
	if (q->id)
		rdma_destroy_id(q->id);
	if (q->ch)
		rdma_destroy_event_channel(q->ch);
	free(q->r);
	memset(q, 0, sizeof(*q));
}

static int post_recv(struct q *q, int i)
{
	struct ibv_sge sge = { (uintptr_t)&q->r->cpl[i], sizeof(struct nvme_cpl), q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(q->id->qp, &wr, &bad);
}

/* Send capsule @i (@len bytes of it, 64 normally). */
static int post_cmd(struct q *q, int i, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)&q->r->cmd[i], len, lkey };
	struct ibv_send_wr wr = { .wr_id = 1000u + (uint64_t)i,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	return ibv_post_send(q->id->qp, &wr, &bad);
}

/* Wait for the response of capsule @i: its status, or -2 when the queue died. */
static int wait_cpl(struct q *q, uint16_t cid, struct nvme_cpl *out, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct ibv_wc wc[8];
		int n = ibv_poll_cq(q->cq, 8, wc);

		REQUIRE(n >= 0, "ibv_poll_cq failed");
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				q->dead = true;
				continue;
			}
			if (wc[k].opcode != IBV_WC_RECV)
				continue;
			struct nvme_cpl *c = &q->r->cpl[wc[k].wr_id];
			uint16_t got = get_le16(&c->cid);

			if (out && got == cid)
				*out = *c;
			post_recv(q, (int)wc[k].wr_id);
			if (got == cid)
				return (get_le16(&c->status) >> 1) & 0x7ff;
		}
		if (q->dead)
			return -2;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return -3;
		if (!n)
			usleep(200);
	}
}

static void sgl_keyed(struct nvme_cmd *c, const void *addr, uint32_t len, uint32_t rkey)
{
	c->flags = 0x40; /* PSDT: SGL */
	nvme_sgl_set_keyed(&c->dptr.sgl1, (uintptr_t)addr, len, rkey, false);
}

static int run(struct q *q, struct nvme_cmd *cmd, struct nvme_cpl *cpl)
{
	int i = q->cid % QD, st;
	uint16_t cid = q->cid++;

	q->r->cmd[i] = *cmd;
	put_le16(&q->r->cmd[i].cid, cid);
	REQUIRE(post_cmd(q, i, sizeof(struct nvme_cmd), q->mr->lkey) == 0, "post send");
	st = wait_cpl(q, cid, cpl, 20000);
	REQUIRE(st != -3, "no response for opcode %#x", cmd->opc);
	return st;
}

/*
 * The RDMA CM part of a queue: QP, receive buffers, a connection request whose private
 * data names @qid and @hsqsize. 0 when established, 1 when the target rejected it
 * (*@rej: its NVMe/RDMA status), -1 on any other failure.
 */
static int q_cm(struct q *q, uint16_t qid, uint16_t hsqsize, int *rej)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct nvme_rdma_cm_req pd;
	int st, type;

	memset(q, 0, sizeof(*q));
	q->r = aligned_alloc(4096, (sizeof(struct region) + 4095) & ~(size_t)4095);
	REQUIRE(q->r, "out of memory");
	memset(q->r, 0, sizeof(*q->r));
	q->ch = rdma_create_event_channel();
	REQUIRE(q->ch, "rdma_create_event_channel: %s", strerror(errno));
	REQUIRE(rdma_create_id(q->ch, &q->id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
	REQUIRE(rdma_getaddrinfo(g_addr, g_port, &hints, &ai) == 0, "rdma_getaddrinfo %s:%s",
		g_addr, g_port);
	st = rdma_resolve_addr(q->id, NULL, ai->ai_dst_addr, 5000);
	rdma_freeaddrinfo(ai);
	REQUIRE(st == 0 && cm_wait(q, RDMA_CM_EVENT_ADDR_RESOLVED, 5000) == 0, "resolve addr");
	REQUIRE(rdma_resolve_route(q->id, 5000) == 0 &&
			cm_wait(q, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000) == 0,
		"resolve route");
	q->pd = ibv_alloc_pd(q->id->verbs);
	q->cq = q->pd ? ibv_create_cq(q->id->verbs, 4 * QD, NULL, NULL, 0) : NULL;
	REQUIRE(q->cq, "PD/CQ");
	qa.send_cq = qa.recv_cq = q->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * QD;
	qa.cap.max_recv_wr = QD;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	REQUIRE(rdma_create_qp(q->id, q->pd, &qa) == 0, "rdma_create_qp: %s", strerror(errno));
	q->mr = ibv_reg_mr(q->pd, q->r, sizeof(*q->r),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	REQUIRE(q->mr, "ibv_reg_mr: %s", strerror(errno));
	for (int i = 0; i < QD; i++)
		REQUIRE(post_recv(q, i) == 0, "post recv");
	nvme_rdma_cm_req_build(&pd, qid, (uint16_t)(hsqsize + 1), hsqsize, 0xffff);
	cp.private_data = &pd;
	cp.private_data_len = sizeof(pd);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	REQUIRE(rdma_connect(q->id, &cp) == 0, "rdma_connect qid %u: %s", qid, strerror(errno));
	type = cm_next(q, 10000, rej);
	if (type == RDMA_CM_EVENT_ESTABLISHED)
		return 0;
	if (type == RDMA_CM_EVENT_REJECTED)
		return 1;
	REQUIRE(0, "rdma_connect qid %u: CM event %s (status %d)", qid,
		type < 0 ? "none" : rdma_event_str(type), *rej);
}

/* Fabrics Connect for queue @qid on @q: its NVMe status (SCT << 8 | SC), the response in
 * @cpl. */
static int q_fabrics_connect(struct q *q, uint16_t qid, uint16_t cntlid, struct nvme_cpl *cpl)
{
	struct nvmf_connect_cmd cc = { 0 };

	cc.opc = NVME_OPC_FABRICS;
	cc.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cc.qid, qid);
	put_le16(&cc.sqsize, QD - 1);
	put_le32(&cc.kato, qid ? 0 : 30000);
	memset(q->r->cdata.hostid, 0x5a, sizeof(q->r->cdata.hostid));
	put_le16(&q->r->cdata.cntlid, qid ? cntlid : 0xffff);
	snprintf(q->r->cdata.subnqn, sizeof(q->r->cdata.subnqn), "%s", g_subnqn);
	snprintf(q->r->cdata.hostnqn, sizeof(q->r->cdata.hostnqn), "%s", HOSTNQN);
	sgl_keyed((struct nvme_cmd *)&cc, &q->r->cdata, sizeof(q->r->cdata), q->mr->rkey);
	return run(q, (struct nvme_cmd *)&cc, cpl);
}

static int q_connect(struct q *q, uint16_t qid, uint16_t cntlid)
{
	struct nvme_cpl cpl;
	int rej, st;

	st = q_cm(q, qid, QD - 1, &rej);
	REQUIRE(st == 0, "rdma_connect qid %u: rejected (status %d)", qid, rej);
	st = q_fabrics_connect(q, qid, cntlid, &cpl);
	REQUIRE(st == 0, "Fabrics Connect qid %u: status %#x", qid, st);
	if (!qid)
		q->cntlid = get_le16(&cpl.dw0);
	return 0;
}

static int prop_set(struct q *q, uint32_t off, uint32_t v)
{
	struct nvmf_property_cmd c = { 0 };

	c.opc = NVME_OPC_FABRICS;
	c.fctype = NVMF_FCTYPE_PROPERTY_SET;
	put_le32(&c.offset, off);
	put_le64(&c.value, v);
	REQUIRE(run(q, (struct nvme_cmd *)&c, NULL) == 0, "Property Set %#x", off);
	return 0;
}

static int prop_get(struct q *q, uint32_t off, uint32_t *v)
{
	struct nvmf_property_cmd c = { 0 };
	struct nvme_cpl cpl;

	c.opc = NVME_OPC_FABRICS;
	c.fctype = NVMF_FCTYPE_PROPERTY_GET;
	put_le32(&c.offset, off);
	REQUIRE(run(q, (struct nvme_cmd *)&c, &cpl) == 0, "Property Get %#x", off);
	*v = get_le32(&cpl.dw0);
	return 0;
}

/* Admin queue with the controller enabled. */
static int admin_up(struct q *adm)
{
	uint32_t csts = 0;

	if (q_connect(adm, 0, 0) || prop_set(adm, 0x14, 0x00460001))
		return -1;
	for (int i = 0; i < 100 && !(csts & 1); i++) {
		if (prop_get(adm, 0x1c, &csts))
			return -1;
		usleep(20000);
	}
	REQUIRE(csts & 1, "controller not ready");
	return 0;
}

/* Admin queue with the controller enabled, and one I/O queue on it. */
static int ctrl_up(struct q *adm, struct q *io)
{
	if (admin_up(adm))
		return -1;
	return q_connect(io, 1, adm->cntlid);
}

static void rw_cmd(struct nvme_cmd *c, uint8_t opc, uint64_t slba, uint32_t len)
{
	memset(c, 0, sizeof(*c));
	c->opc = opc;
	put_le32(&c->nsid, 1);
	put_le64(&c->cdw10, slba);
	put_le32(&c->cdw12, len / BS - 1);
}

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i += 4)
		put_le32(p + i, seed * 2654435761u + i);
}

static int scen_healthy(void)
{
	struct q adm, io;
	struct nvme_cmd c;
	int st, rc = -1;

	if (ctrl_up(&adm, &io))
		goto out;
	pattern(io.r->data[0], XFER, (uint32_t)time(NULL));
	rw_cmd(&c, NVME_OPC_WRITE, 2048, XFER);
	sgl_keyed(&c, io.r->data[0], XFER, io.mr->rkey);
	st = run(&io, &c, NULL);
	if (st) {
		fprintf(stderr, "rdma_fault_client: healthy Write status %#x\n", st);
		goto out;
	}
	rw_cmd(&c, NVME_OPC_READ, 2048, XFER);
	sgl_keyed(&c, io.r->data[1], XFER, io.mr->rkey);
	st = run(&io, &c, NULL);
	if (st) {
		fprintf(stderr, "rdma_fault_client: healthy Read status %#x\n", st);
		goto out;
	}
	if (memcmp(io.r->data[0], io.r->data[1], XFER)) {
		fprintf(stderr, "rdma_fault_client: healthy read back differs\n");
		goto out;
	}
	rc = 0;
out:
	if (io.id)
		rdma_disconnect(io.id);
	if (adm.id)
		rdma_disconnect(adm.id);
	q_destroy(&io);
	q_destroy(&adm);
	return rc;
}

/* Children that post a Write (and a Read) and exit at once: no disconnect, no cleanup. */
static int scen_die(void)
{
	for (int i = 0; i < 16; i++) {
		pid_t pid = fork();
		int ws;

		REQUIRE(pid >= 0, "fork");
		if (pid == 0) {
			struct q adm, io;
			struct nvme_cmd c;

			if (ctrl_up(&adm, &io))
				_exit(1);
			pattern(io.r->data[0], XFER, (uint32_t)i);
			rw_cmd(&c, NVME_OPC_WRITE, 4096 + (uint64_t)i * 256, XFER);
			sgl_keyed(&c, io.r->data[0], XFER, io.mr->rkey);
			io.r->cmd[0] = c;
			post_cmd(&io, 0, sizeof(c), io.mr->lkey);
			if (i & 1) {
				rw_cmd(&c, NVME_OPC_READ, 4096, XFER);
				sgl_keyed(&c, io.r->data[1], XFER, io.mr->rkey);
				put_le16(&c.cid, 1);
				io.r->cmd[1] = c;
				post_cmd(&io, 1, sizeof(c), io.mr->lkey);
			}
			if (i & 2) /* the data region disappears under the transfer */
				ibv_dereg_mr(io.mr);
			_exit(0);
		}
		REQUIRE(waitpid(pid, &ws, 0) == pid, "waitpid");
		REQUIRE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "host %d could not connect", i);
	}
	return 0;
}

static int scen_qp_error(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct q adm, io;
	struct nvme_cmd c;

	if (ctrl_up(&adm, &io))
		return -1;
	/* commands outstanding, then our QP goes to error under them */
	for (int i = 0; i < 4; i++) {
		rw_cmd(&c, NVME_OPC_READ, (uint64_t)i * 256, XFER);
		sgl_keyed(&c, io.r->data[i & 1], XFER, io.mr->rkey);
		put_le16(&c.cid, (uint16_t)i);
		io.r->cmd[i] = c;
		post_cmd(&io, i, sizeof(c), io.mr->lkey);
	}
	REQUIRE(ibv_modify_qp(io.id->qp, &a, IBV_QP_STATE) == 0, "modify QP to error");
	sleep(2); /* the target must cope while we hold the connection open */
	rdma_disconnect(io.id);
	q_destroy(&io);

	/* a malformed work request: a Send whose SGE names an lkey nobody registered */
	if (q_connect(&io, 1, adm.cntlid))
		return -1;
	rw_cmd(&io.r->cmd[0], NVME_OPC_FLUSH, 0, BS);
	post_cmd(&io, 0, sizeof(struct nvme_cmd), io.mr->lkey ^ 0x00ffff00);
	wait_cpl(&io, 0, NULL, 3000);
	sleep(1);
	rdma_disconnect(io.id);
	q_destroy(&io);
	rdma_disconnect(adm.id);
	q_destroy(&adm);
	return 0;
}

static int scen_short_capsule(void)
{
	struct q adm, io;
	int st;

	if (ctrl_up(&adm, &io))
		return -1;
	rw_cmd(&io.r->cmd[0], NVME_OPC_READ, 0, BS);
	put_le16(&io.r->cmd[0].cid, 77);
	REQUIRE(post_cmd(&io, 0, 10, io.mr->lkey) == 0, "post send");
	st = wait_cpl(&io, 77, NULL, 5000);
	/* an error completion or the queue dropped are both fine; success is not */
	REQUIRE(st != 0, "a 10-byte capsule completed successfully");
	rdma_disconnect(io.id);
	q_destroy(&io);
	rdma_disconnect(adm.id);
	q_destroy(&adm);
	return 0;
}

/* One command with a bad keyed SGL on a fresh I/O queue @qid: an error status or the queue
 * dropped within the timeout; never success, never silence. Each case has a QID of its
 * own: a queue the target dropped may still hold its QID for a moment. */
static int bad_key_cmd(struct q *adm, uint16_t qid, uint8_t opc, bool bad_addr, const char *what)
{
	struct q io;
	struct nvme_cmd c;
	int st;

	if (q_connect(&io, qid, adm->cntlid))
		return -1;
	rw_cmd(&c, opc, 8192, XFER);
	if (bad_addr) /* registered key, address far outside the region */
		sgl_keyed(&c, (uint8_t *)io.r->data[0] + (1ull << 40), XFER, io.mr->rkey);
	else
		sgl_keyed(&c, io.r->data[0], XFER, io.mr->rkey ^ 0x5a5a00);
	st = run(&io, &c, NULL);
	printf("%s: %s\n", what,
	       st == -2  ? "queue dropped"
	       : st > 0  ? "error status"
	       : st == 0 ? "SUCCESS"
			 : "?");
	if (io.id)
		rdma_disconnect(io.id);
	q_destroy(&io);
	REQUIRE(st == -2 || st > 0, "%s: the command succeeded (status %d)", what, st);
	return 0;
}

static int scen_bad_rkey(void)
{
	struct q adm;
	int rc = 0;

	if (q_connect(&adm, 0, 0) || prop_set(&adm, 0x14, 0x00460001))
		return -1;
	usleep(100000);
	rc |= bad_key_cmd(&adm, 1, NVME_OPC_WRITE, false, "Write, unregistered rkey");
	rc |= bad_key_cmd(&adm, 2, NVME_OPC_READ, false, "Read, unregistered rkey");
	rc |= bad_key_cmd(&adm, 3, NVME_OPC_WRITE, true, "Write, address outside the region");
	rc |= bad_key_cmd(&adm, 4, NVME_OPC_READ, true, "Read, address outside the region");
	rdma_disconnect(adm.id);
	q_destroy(&adm);
	return rc;
}

/* The "@key: N kB" line of @path, -1 if there is none. */
static long proc_kb(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    sscanf(line + klen + 1, "%ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* VmPin of process @pid in kB (memory pinned by RDMA registrations), -1 if unknown. */
static long vm_pin_kb(long pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	return proc_kb(path, "VmPin");
}

static long vm_rss_kb(long pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	return proc_kb(path, "VmRSS");
}

#define FLOOD_MAX 256

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Take the target's disconnects of the open queues among @qs[0..@n): how many. */
static int reap_closed(struct q *qs, bool *open_q, int n)
{
	int closed = 0;

	for (int i = 0; i < n; i++) {
		int st, type;

		while (open_q[i] && (type = cm_next(&qs[i], 0, &st)) >= 0)
			if (type == RDMA_CM_EVENT_DISCONNECTED) {
				open_q[i] = false;
				closed++;
			}
	}
	return closed;
}

static int scen_preconnect_flood(int argc, char **argv)
{
	static struct q qs[FLOOD_MAX];
	static bool open_q[FLOOD_MAX];
	int n, maxacc, accepted = 0, refused = 0, closed = 0, open_max = 0, rc = 0;
	long pid, maxpin, pin0, pin_max = 0, rss0, rss_max = 0, vm0, vm_max = 0;
	double wait_s, t0, t1;

	REQUIRE(argc >= 10, "preconnect-flood N MAXCONNECTING PID MAXPIN_KB WAIT_S");
	n = atoi(argv[5]);
	maxacc = atoi(argv[6]);
	pid = atol(argv[7]);
	maxpin = atol(argv[8]);
	wait_s = atof(argv[9]);
	REQUIRE(n > 0 && n <= FLOOD_MAX, "N: 1-%d", FLOOD_MAX);
	pin0 = vm_pin_kb(pid);
	REQUIRE(pin0 >= 0, "no VmPin for process %ld", pid);
	rss0 = vm_rss_kb(pid);
	vm0 = proc_kb("/proc/meminfo", "VmallocUsed");
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		int rej = 0, st = q_cm(&qs[i], 1, 127, &rej);
		long v;

		REQUIRE(st >= 0, "queue %d: the target neither accepted nor refused it", i);
		if (st == 0) {
			accepted++;
			open_q[i] = true;
		} else {
			refused++;
		}
		/* queues the target closed at their deadline make room for later ones: what
		 * counts is how many are open at once (their disconnect came before the accept
		 * of this one) */
		closed += reap_closed(qs, open_q, i + 1);
		if (accepted - closed > open_max)
			open_max = accepted - closed;
		usleep(20000); /* the target's reactor is done with this one */
		v = vm_pin_kb(pid);
		pin_max = v > pin_max ? v : pin_max;
		v = vm_rss_kb(pid);
		rss_max = v > rss_max ? v : rss_max;
		v = proc_kb("/proc/meminfo", "VmallocUsed");
		vm_max = v > vm_max ? v : vm_max;
	}
	t1 = now_s();
	printf("preconnect-flood: %d queues asked for HSQSIZE 127 without Connect in %.1f s: "
	       "%d accepted, %d refused, at most %d open at once (limit %d)\n",
	       n, t1 - t0, accepted, refused, open_max, maxacc);
	printf("preconnect-flood: target VmPin %ld kB, at most %ld kB during the flood (+%ld kB, "
	       "%ld kB per open queue; limit +%ld kB)\n",
	       pin0, pin_max, pin_max - pin0, open_max ? (pin_max - pin0) / open_max : 0, maxpin);
	/* for the record: the target's resident memory, and the kernel's vmalloc area (where
	 * soft-RoCE keeps QP and CQ rings, ours included) */
	printf("preconnect-flood: target VmRSS %ld kB, at most %ld kB (+%ld kB); VmallocUsed %ld "
	       "kB, at most %ld kB (+%ld kB)\n",
	       rss0, rss_max, rss_max - rss0, vm0, vm_max, vm_max - vm0);
	if (open_max > maxacc || refused == 0) {
		fprintf(stderr,
			"rdma_fault_client: %d queues open at once, %d refused: at most %d "
			"should have been open\n",
			open_max, refused, maxacc);
		rc = -1;
	}
	if (pin_max - pin0 > maxpin) {
		fprintf(stderr,
			"rdma_fault_client: the target pinned %ld kB for queues that never "
			"sent Connect (limit %ld kB)\n",
			pin_max - pin0, maxpin);
		rc = -1;
	}
	/* every accepted queue must be closed by the target at its Connect deadline */
	while (closed < accepted && now_s() - t1 < wait_s) {
		closed += reap_closed(qs, open_q, n);
		usleep(50000);
	}
	printf("preconnect-flood: %d of %d accepted queues closed by the target, the last %.1f s "
	       "after the flood\n",
	       closed, accepted, now_s() - t1);
	if (closed < accepted) {
		fprintf(stderr,
			"rdma_fault_client: %d queues without Connect still open %.0f s "
			"after the flood\n",
			accepted - closed, wait_s);
		rc = -1;
	}
	usleep(200000);
	printf("preconnect-flood: target VmPin %ld kB after the closes\n", vm_pin_kb(pid));
	for (int i = 0; i < n; i++)
		q_destroy(&qs[i]);
	return rc;
}

/* A queue set up by the CM as @cm_qid whose Connect names @qid: must be refused with
 * Connect Invalid Parameters, IPO at the QID field. */
static int qid_case(struct q *adm, uint16_t cm_qid, uint16_t qid, const char *what)
{
	struct q q;
	struct nvme_cpl cpl;
	int rej, st;

	memset(&cpl, 0, sizeof(cpl));
	st = q_cm(&q, cm_qid, QD - 1, &rej);
	if (st != 0) {
		q_destroy(&q);
		REQUIRE(0, "%s: CM request refused (status %d)", what, rej);
	}
	st = q_fabrics_connect(&q, qid, adm->cntlid, &cpl);
	printf("qid-mismatch: %s (CM QID %u, Connect QID %u): status %#x, dw0 %#x\n", what, cm_qid,
	       qid, st, get_le32(&cpl.dw0));
	rdma_disconnect(q.id);
	q_destroy(&q);
	REQUIRE(st == (NVME_SCT_COMMAND_SPECIFIC << 8 | NVME_SC_CONNECT_INVALID_PARAMETERS),
		"%s: Connect status %#x, expected Connect Invalid Parameters (0x182)", what, st);
	REQUIRE(get_le32(&cpl.dw0) == offsetof(struct nvmf_connect_cmd, qid),
		"%s: IPO %#x, expected %#zx (QID)", what, get_le32(&cpl.dw0),
		offsetof(struct nvmf_connect_cmd, qid));
	return 0;
}

static int scen_qid_mismatch(void)
{
	struct q adm;
	int rc = 0;

	if (admin_up(&adm))
		return -1;
	rc |= qid_case(&adm, 1, 0, "admin Connect on an I/O queue");
	rc |= qid_case(&adm, 0, 1, "I/O Connect on an admin queue");
	rc |= qid_case(&adm, 2, 1, "I/O Connect for another queue");
	rdma_disconnect(adm.id);
	q_destroy(&adm);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 5) {
		fprintf(stderr, "usage: %s ADDR PORT SUBNQN SCENARIO\n", argv[0]);
		return 2;
	}
	g_addr = argv[1];
	g_port = argv[2];
	g_subnqn = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[4], "healthy"))
		rc = scen_healthy();
	else if (!strcmp(argv[4], "die"))
		rc = scen_die();
	else if (!strcmp(argv[4], "qp-error"))
		rc = scen_qp_error();
	else if (!strcmp(argv[4], "short-capsule"))
		rc = scen_short_capsule();
	else if (!strcmp(argv[4], "bad-rkey"))
		rc = scen_bad_rkey();
	else if (!strcmp(argv[4], "preconnect-flood"))
		rc = scen_preconnect_flood(argc, argv);
	else if (!strcmp(argv[4], "qid-mismatch"))
		rc = scen_qid_mismatch();
	else {
		fprintf(stderr, "unknown scenario %s\n", argv[4]);
		return 2;
	}
	return rc ? 1 : 0;
}
