/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport, driven through a socketpair: one end is a real connection on a
 * real reactor, the other is this test acting as the host with the common PDU codec.
 * The core is replaced at its seam (nvmf_req_exec and friends) by a small fake: writes
 * land in a 1 MiB array at byte offset CDW10, reads come from it, Connect marks the
 * queue connected, and a vendor opcode parks the command until the test releases it.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/nvme_tcp_pdu.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "tcp/tcp_internal.h"

#define OPC_HOLD 0xc0 /* vendor: parked until release_held() */
#define DISK_SIZE (1 << 20)
#define MAX_IO (128 * 1024)

/* ---- the fake core ---------------------------------------------------------------------- */

static uint8_t disk[DISK_SIZE];
static struct nvmf_tgt tgt;
static struct nvmf_port port;
static struct reactor *R;
static atomic_int n_exec, n_fini, n_disconnected;
static sem_t fini_sem;
static struct nvmf_req *held[64];
static int nheld;

void nvmf_qpair_init(struct nvmf_qpair *qp, const struct nvmf_transport_ops *ops,
		     struct nvmf_tgt *t, struct nvmf_port *p, struct reactor *r)
{
	qp->ops = ops;
	qp->tgt = t;
	qp->port = p;
	qp->reactor = r;
	qp->ctrlr = NULL;
	qp->qid = 0;
	qp->sqsize = 0;
	qp->connected = false;
}

void nvmf_qpair_disconnected(struct nvmf_qpair *qp)
{
	atomic_fetch_add(&n_disconnected, 1);
}

void nvmf_qpair_fini(struct nvmf_qpair *qp)
{
	atomic_fetch_add(&n_fini, 1);
	sem_post(&fini_sem);
}

enum nvme_data_xfer nvmf_req_xfer(const struct nvme_cmd *cmd, bool admin)
{
	if (cmd->opc == NVME_OPC_FABRICS)
		return (enum nvme_data_xfer)(((const uint8_t *)cmd)[4] & 3);
	if (cmd->opc == OPC_HOLD)
		return NVME_XFER_NONE;
	return nvme_opc_xfer(cmd->opc);
}

uint32_t nvmf_req_sgl_length(const struct nvme_cmd *cmd)
{
	return get_le32(cmd->dptr.sgl1.length);
}

void nvmf_req_complete(struct nvmf_req *req)
{
	req->rsp.cid = req->cmd.cid;
	put_le16(&req->rsp.sqid, req->qpair->qid);
	req->qpair->ops->req_complete(req);
}

void nvmf_req_complete_status(struct nvmf_req *req, uint8_t sct, uint8_t sc, bool dnr)
{
	put_le16(&req->rsp.status, NVME_STATUS(sct, sc) | (dnr ? NVME_STATUS_DNR : 0));
	nvmf_req_complete(req);
}

static void iov_copy(struct nvmf_req *req, uint32_t off, bool to_disk)
{
	uint32_t pos = off;

	for (int i = 0; i < req->iovcnt; i++) {
		if (to_disk)
			memcpy(disk + pos, req->iov[i].iov_base, req->iov[i].iov_len);
		else
			memcpy(req->iov[i].iov_base, disk + pos, req->iov[i].iov_len);
		pos += (uint32_t)req->iov[i].iov_len;
	}
}

void nvmf_req_exec(struct nvmf_req *req)
{
	struct nvmf_qpair *qp = req->qpair;
	uint32_t off = get_le32(&req->cmd.cdw10);

	atomic_fetch_add(&n_exec, 1);
	if (req->cmd.opc == NVME_OPC_FABRICS) {
		/* Connect: qid in CDW10 bits 31:16, SQSIZE (0's based) CDW11 15:0, CATTR 23:16. */
		uint32_t cdw10 = get_le32(&req->cmd.cdw10), cdw11 = get_le32(&req->cmd.cdw11);

		qp->qid = (uint16_t)(cdw10 >> 16);
		qp->sqsize = (uint16_t)((cdw11 & 0xffff) + 1);
		qp->sq_flow_disabled = (cdw11 >> 16) & NVMF_CONNECT_CATTR_DISABLE_SQFLOW;
		qp->connected = true;
		nvmf_req_complete(req);
		return;
	}
	switch (req->cmd.opc) {
	case OPC_HOLD:
		held[nheld++] = req;
		return;
	case 0x01: /* write */
		if (off + req->length > DISK_SIZE)
			goto range;
		iov_copy(req, off, true);
		break;
	case 0x02: /* read */
		if (off + req->length > DISK_SIZE)
			goto range;
		iov_copy(req, off, false);
		break;
	default:
		break;
	}
	put_le32(&req->rsp.dw0, 0);
	put_le16(&req->rsp.status, 0);
	nvmf_req_complete(req);
	return;
range:
	nvmf_req_complete_status(req, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE, true);
}

static sem_t msg_done;

static void release_held_msg(void *arg)
{
	for (int i = 0; i < nheld; i++) {
		put_le16(&held[i]->rsp.status, 0);
		nvmf_req_complete(held[i]);
	}
	nheld = 0;
	sem_post(&msg_done);
}

static void release_held(void)
{
	reactor_send_msg(R, release_held_msg, NULL);
	sem_wait(&msg_done);
}

/* ---- the host side ---------------------------------------------------------------------- */

struct host {
	int fd;
	struct nvme_tcp_params p;
	uint16_t cid;
	uint32_t maxh2cdata;
};

static int wait_fini(int before)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	while (atomic_load(&n_fini) <= before)
		if (sem_timedwait(&fini_sem, &ts) != 0)
			return -1;
	return 0;
}

static int g_small_bufs; /* next host_open(): tiny socket buffers (partial writes) */

static void host_open(struct host *h)
{
	int sv[2];
	struct timeval tv = { 3, 0 };
	struct tcp_qpair *tq;

	memset(h, 0, sizeof(*h));
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (g_small_bufs) {
		int sz = g_small_bufs;

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		g_small_bufs = 0;
	}
	tq = tcp_qpair_create(sv[0], &tgt, &port, "ut");
	CU_ASSERT_PTR_NOT_NULL_FATAL(tq);
	CU_ASSERT_FATAL(reactor_send_msg(R, tcp_qpair_start, tq) == 0);
	h->fd = sv[1];
	h->p.max_c2hdata = 0;
}

static void host_send(struct host *h, const void *buf, size_t len)
{
	CU_ASSERT_EQUAL(send(h->fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

static int recv_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, (uint8_t *)buf + got, len - got, 0);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* One PDU into @buf (at least 8 + plen bytes); returns plen, or -1 on EOF/timeout. */
static int host_recv(struct host *h, uint8_t *buf, size_t max)
{
	uint32_t plen;

	if (recv_all(h->fd, buf, 8) != 0)
		return -1;
	plen = get_le32(buf + 4);
	if (plen < 8 || plen > max)
		return -1;
	if (recv_all(h->fd, buf + 8, plen - 8) != 0)
		return -1;
	return (int)plen;
}

/* True once the target has closed its end (EOF). */
static bool host_eof(struct host *h)
{
	uint8_t b[256];
	ssize_t n;

	do {
		n = recv(h->fd, b, sizeof(b), 0);
	} while (n > 0);
	return n == 0;
}

static void host_ic(struct host *h, bool hdgst, bool ddgst, uint8_t hpda)
{
	uint8_t buf[256];
	const struct nvme_tcp_icresp *r = (const void *)buf;
	size_t n = nvme_tcp_build_icreq(buf, hdgst, ddgst, hpda, 0);

	host_send(h, buf, n);
	CU_ASSERT_EQUAL_FATAL(host_recv(h, buf, sizeof(buf)), 128);
	CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_ICRESP);
	CU_ASSERT_EQUAL(r->ch.hlen, 128);
	CU_ASSERT_EQUAL(r->ch.pdo, 0);
	CU_ASSERT_EQUAL(get_le16(&r->pfv), 0);
	CU_ASSERT_EQUAL(r->cpda, 0);
	CU_ASSERT_EQUAL(r->dgst, (hdgst ? 1 : 0) | (ddgst ? 2 : 0));
	CU_ASSERT_EQUAL(get_le32(&r->maxh2cdata), MAX_IO);
	h->p.hdgst = hdgst;
	h->p.ddgst = ddgst;
	h->p.hpda = hpda;
	h->p.cpda = 0;
	h->maxh2cdata = get_le32(&r->maxh2cdata);
	h->p.maxh2cdata = h->maxh2cdata;
	h->p.max_icdata = UINT32_MAX;
}

static void make_cmd(struct nvme_cmd *c, uint8_t opc, uint16_t cid, uint32_t cdw10, uint32_t len,
		     bool icdata)
{
	memset(c, 0, sizeof(*c));
	c->opc = opc;
	c->flags = 0x40;
	put_le16(&c->cid, cid);
	put_le32(&c->cdw10, cdw10);
	put_le32(c->dptr.sgl1.length, len);
	c->dptr.sgl1.type = icdata ? NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET)
				   : NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
						   NVME_SGL_SUBTYPE_TRANSPORT);
}

/* A CapsuleCmd with optional in-capsule data (and its digest when negotiated). */
static void send_capsule(struct host *h, const struct nvme_cmd *c, const void *data, uint32_t len)
{
	uint8_t hdr[NVME_TCP_PSH_MAX + 128];
	size_t hl = nvme_tcp_build_capsule_cmd(hdr, c, len, &h->p);
	uint8_t dg[4];

	host_send(h, hdr, hl);
	if (len) {
		host_send(h, data, len);
		if (h->p.ddgst) {
			put_le32(dg, crc32c(data, len));
			host_send(h, dg, 4);
		}
	}
}

static void host_connect(struct host *h, uint16_t qid, uint16_t sqsize, bool no_sqflow)
{
	struct nvme_cmd c;
	uint8_t data[1024] = { 0 };
	uint8_t buf[256];
	const struct nvme_tcp_rsp *r = (const void *)buf;

	make_cmd(&c, NVME_OPC_FABRICS, 0x7000, (uint32_t)qid << 16, sizeof(data), true);
	((uint8_t *)&c)[4] = NVMF_FCTYPE_CONNECT;
	put_le32(&c.cdw11, (uint32_t)(sqsize - 1) | (no_sqflow ? 4u << 16 : 0));
	send_capsule(h, &c, data, sizeof(data));
	CU_ASSERT_FATAL(host_recv(h, buf, sizeof(buf)) > 0);
	CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_CAPSULE_RESP);
	CU_ASSERT_EQUAL(get_le16(&r->cqe.cid), 0x7000);
	CU_ASSERT_EQUAL(get_le16(&r->cqe.status), 0);
}

static void check_hdgst(struct host *h, const uint8_t *pdu)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)pdu;

	if (!h->p.hdgst)
		return;
	CU_ASSERT(ch->flags & NVME_TCP_F_HDGST);
	CU_ASSERT(nvme_tcp_hdgst_ok(pdu, ch->hlen));
}

/* Expect a CapsuleResp for @cid; returns its status (without phase). */
static int expect_rsp(struct host *h, uint16_t cid)
{
	uint8_t buf[256];
	const struct nvme_tcp_rsp *r = (const void *)buf;

	if (host_recv(h, buf, sizeof(buf)) < 0) {
		CU_FAIL("no response");
		return -1;
	}
	CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_CAPSULE_RESP);
	check_hdgst(h, buf);
	CU_ASSERT_EQUAL(get_le16(&r->cqe.cid), cid);
	return get_le16(&r->cqe.status) & ~1;
}

/* Expect a C2HTermReq with @fes (and @fei for header errors), then EOF. */
static void expect_term(struct host *h, uint16_t fes, uint32_t fei, const void *bad, size_t badlen)
{
	uint8_t buf[512];
	const struct nvme_tcp_term_req *t = (const void *)buf;
	int plen = host_recv(h, buf, sizeof(buf));

	CU_ASSERT_FATAL(plen >= 24);
	CU_ASSERT_EQUAL(t->ch.pdu_type, NVME_TCP_PDU_C2H_TERM_REQ);
	CU_ASSERT_EQUAL(t->ch.hlen, 24);
	CU_ASSERT_EQUAL(get_le16(&t->fes), fes);
	if (get_le16(&t->fes) != fes)
		fprintf(stderr, "FES %u, expected %u\n", get_le16(&t->fes), fes);
	if (fes == NVME_TCP_FES_INVALID_PDU_HDR || fes == NVME_TCP_FES_UNSUPPORTED_PARAM) {
		CU_ASSERT_EQUAL(get_le32(t->fei), fei);
		if (get_le32(t->fei) != fei)
			fprintf(stderr, "FEI %u, expected %u\n", get_le32(t->fei), fei);
	}
	/* The offending header is quoted (at least its common header). */
	if (bad && badlen) {
		size_t n = badlen < (size_t)plen - 24 ? badlen : (size_t)plen - 24;

		CU_ASSERT(plen > 24);
		CU_ASSERT(n >= 8);
		CU_ASSERT_EQUAL(memcmp(buf + 24, bad, n), 0);
	}
	CU_ASSERT_TRUE(host_eof(h));
}

/* ---- tests: initialization -------------------------------------------------------------- */

static void test_icreq_icresp(void)
{
	struct host h;

	for (int mode = 0; mode < 4; mode++) {
		int before = atomic_load(&n_fini);

		host_open(&h);
		host_ic(&h, mode & 1, mode & 2, 0);
		close(h.fd);
		CU_ASSERT_EQUAL(wait_fini(before), 0);
	}
}

/* ---- tests: malformed PDUs -------------------------------------------------------------- */

enum setup { RAW, IC, IC_HDGST, CONNECTED, WRITE_PENDING };

struct bad_case {
	const char *name;
	enum setup setup;
	void (*build)(struct host *h, uint8_t *buf, size_t *len);
	uint16_t fes;
	uint32_t fei;
};

static void b_cmd_before_ic(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_cmd c;
	struct nvme_tcp_params p = { 0 };

	make_cmd(&c, 0x02, 1, 0, 0, false);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, 0, &p);
}

static void b_icreq_pfv(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_icreq(buf, false, false, 0, 0);
	put_le16(buf + 8, 1);
}

static void b_icreq_hpda(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_icreq(buf, false, false, 32, 0);
}

static void b_icreq_dgst(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_icreq(buf, false, false, 0, 0);
	buf[11] = 0x05;
}

static void b_icreq_twice(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_icreq(buf, false, false, 0, 0);
}

static void b_icreq_plen(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_icreq(buf, false, false, 0, 0);
	put_le32(buf + 4, 132);
	memset(buf + 128, 0, 4);
	*len = 132;
}

static void b_bad_hlen(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_cmd c;

	make_cmd(&c, 0x02, 1, 0, 0, false);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, 0, &h->p);
	buf[2] = 64;
}

static void b_c2h_type(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_r2t(buf, 1, 0, 0, 512, h->p.hdgst);
}

static void b_unknown_type(struct host *h, uint8_t *buf, size_t *len)
{
	memset(buf, 0, 24);
	buf[0] = 0x0f;
	buf[2] = 24;
	put_le32(buf + 4, 24);
	*len = 24;
}

static void b_bad_hdgst(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_cmd c;

	make_cmd(&c, 0x02, 1, 0, 0, false);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, 0, &h->p);
	buf[72] ^= 0xff; /* the digest right after the 72-byte header */
}

static void b_missing_hdgst_flag(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_tcp_params p = h->p;
	struct nvme_cmd c;

	p.hdgst = false;
	make_cmd(&c, 0x02, 1, 0, 0, false);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, 0, &p);
}

static void b_icdata_too_big(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_cmd c;
	uint32_t big = 8192 + 4096;

	make_cmd(&c, 0x01, 1, 0, big, true);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, big, &h->p); /* header only is enough */
}

static void b_pdo_misaligned(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_cmd c;

	make_cmd(&c, 0x01, 1, 0, 512, true);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, 512, &h->p);
	buf[3] = 74; /* not a multiple of 4 */
}

static void b_plen_short(struct host *h, uint8_t *buf, size_t *len)
{
	struct nvme_cmd c;

	make_cmd(&c, 0x02, 1, 0, 0, false);
	*len = nvme_tcp_build_capsule_cmd(buf, &c, 0, &h->p);
	put_le32(buf + 4, 60);
}

static void b_h2c_unknown_ttag(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 1, 77, 0, 512, NVME_TCP_F_DATA_LAST,
				   &h->p);
}

static void b_h2c_ttag_range(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 1, 0xfffe, 0, 512,
				   NVME_TCP_F_DATA_LAST, &h->p);
}

static void b_h2c_too_big(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 1, 0, 0, MAX_IO + 4,
				   NVME_TCP_F_DATA_LAST, &h->p);
}

/* WRITE_PENDING: cid 0x55 wrote 16 KiB by R2T; its R2T (ttag in h->cid) was received. */
static void b_h2c_wrong_cccid(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 0x56, h->cid, 0, 512, 0, &h->p);
}

static void b_h2c_wrong_datao(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 0x55, h->cid, 512, 512, 0, &h->p);
}

static void b_h2c_beyond(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 0x55, h->cid, 0, 16384 + 512,
				   NVME_TCP_F_DATA_LAST, &h->p);
}

static void b_h2c_datal_mismatch(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 0x55, h->cid, 0, 512, 0, &h->p);
	put_le32(buf + 16, 1024);
}

static void b_h2c_no_data(struct host *h, uint8_t *buf, size_t *len)
{
	*len = nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 0x55, h->cid, 0, 0, 0, &h->p);
}

static const struct bad_case bad_cases[] = {
	{ "command before ICReq", RAW, b_cmd_before_ic, NVME_TCP_FES_PDU_SEQ_ERR, 0 },
	{ "ICReq PFV 1", RAW, b_icreq_pfv, NVME_TCP_FES_UNSUPPORTED_PARAM, 8 },
	{ "ICReq HPDA 32", RAW, b_icreq_hpda, NVME_TCP_FES_INVALID_PDU_HDR, 10 },
	{ "ICReq reserved digest bits", RAW, b_icreq_dgst, NVME_TCP_FES_INVALID_PDU_HDR, 11 },
	{ "ICReq PLEN 132", RAW, b_icreq_plen, NVME_TCP_FES_INVALID_PDU_HDR, 4 },
	{ "second ICReq", IC, b_icreq_twice, NVME_TCP_FES_PDU_SEQ_ERR, 0 },
	{ "CapsuleCmd HLEN 64", IC, b_bad_hlen, NVME_TCP_FES_INVALID_PDU_HDR, 2 },
	{ "R2T from the host", IC, b_c2h_type, NVME_TCP_FES_INVALID_PDU_HDR, 0 },
	{ "PDU type 0Fh", IC, b_unknown_type, NVME_TCP_FES_INVALID_PDU_HDR, 0 },
	{ "header digest mismatch", IC_HDGST, b_bad_hdgst, NVME_TCP_FES_HDR_DIGEST_ERR, 0 },
	{ "HDGST flag missing", IC_HDGST, b_missing_hdgst_flag, NVME_TCP_FES_INVALID_PDU_HDR, 1 },
	{ "in-capsule data over the limit", IC, b_icdata_too_big,
	  NVME_TCP_FES_DATA_LIMIT_EXCEEDED, 0 },
	{ "PDO not aligned", IC, b_pdo_misaligned, NVME_TCP_FES_INVALID_PDU_HDR, 3 },
	{ "PLEN shorter than the header", IC, b_plen_short, NVME_TCP_FES_INVALID_PDU_HDR, 4 },
	{ "H2CData unknown TTAG", CONNECTED, b_h2c_unknown_ttag, NVME_TCP_FES_INVALID_PDU_HDR,
	  10 },
	{ "H2CData TTAG out of range", CONNECTED, b_h2c_ttag_range, NVME_TCP_FES_INVALID_PDU_HDR,
	  10 },
	{ "H2CData over MAXH2CDATA", CONNECTED, b_h2c_too_big, NVME_TCP_FES_DATA_LIMIT_EXCEEDED,
	  0 },
	{ "H2CData wrong CCCID", WRITE_PENDING, b_h2c_wrong_cccid, NVME_TCP_FES_INVALID_PDU_HDR,
	  8 },
	{ "H2CData wrong DATAO", WRITE_PENDING, b_h2c_wrong_datao, NVME_TCP_FES_DATA_OUT_OF_RANGE,
	  0 },
	{ "H2CData beyond the R2T", WRITE_PENDING, b_h2c_beyond, NVME_TCP_FES_DATA_OUT_OF_RANGE,
	  0 },
	{ "H2CData DATAL != payload", WRITE_PENDING, b_h2c_datal_mismatch,
	  NVME_TCP_FES_INVALID_PDU_HDR, 16 },
	{ "H2CData without data", WRITE_PENDING, b_h2c_no_data, NVME_TCP_FES_INVALID_PDU_HDR, 4 },
};

static void setup_write_pending(struct host *h)
{
	struct nvme_cmd c;
	uint8_t buf[256];
	const struct nvme_tcp_r2t_hdr *r2t = (const void *)buf;

	make_cmd(&c, 0x01, 0x55, 0, 16384, false);
	send_capsule(h, &c, NULL, 0);
	CU_ASSERT_FATAL(host_recv(h, buf, sizeof(buf)) > 0);
	CU_ASSERT_EQUAL(r2t->ch.pdu_type, NVME_TCP_PDU_R2T);
	CU_ASSERT_EQUAL(get_le16(&r2t->cccid), 0x55);
	CU_ASSERT_EQUAL(get_le32(&r2t->r2to), 0);
	CU_ASSERT_EQUAL(get_le32(&r2t->r2tl), 16384);
	h->cid = get_le16(&r2t->ttag);
}

static void test_malformed(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct nvmf_tcp_stats st0, st1;
		uint8_t buf[512];
		size_t len = 0;
		struct host h;
		int before = atomic_load(&n_fini);

		fprintf(stderr, "  case: %s\n", bc->name);
		host_open(&h);
		if (bc->setup != RAW)
			host_ic(&h, bc->setup == IC_HDGST, false, 0);
		if (bc->setup >= CONNECTED)
			host_connect(&h, 1, 32, false);
		if (bc->setup == WRITE_PENDING)
			setup_write_pending(&h);
		nvmf_tcp_get_stats(&st0);
		bc->build(&h, buf, &len);
		host_send(&h, buf, len);
		expect_term(&h, bc->fes, bc->fei, buf, len < 128 ? len : 128);
		close(h.fd);
		CU_ASSERT_EQUAL(wait_fini(before), 0);
		nvmf_tcp_get_stats(&st1);
		CU_ASSERT_EQUAL(st1.totals.term_reqs_tx - st0.totals.term_reqs_tx, 1);
		CU_ASSERT_EQUAL(st1.fatal - st0.fatal, 1);
		CU_ASSERT_EQUAL(st1.totals.hdgst_errors - st0.totals.hdgst_errors,
				bc->fes == NVME_TCP_FES_HDR_DIGEST_ERR);
	}
}

static void test_sq_overflow(void)
{
	struct host h;
	struct nvme_cmd c;
	int before = atomic_load(&n_fini);

	host_open(&h);
	host_ic(&h, false, false, 0);
	host_connect(&h, 1, 4, false);
	for (int i = 0; i < 4; i++) {
		make_cmd(&c, OPC_HOLD, (uint16_t)(10 + i), 0, 0, false);
		send_capsule(&h, &c, NULL, 0);
	}
	/* A fifth command with four outstanding on a 4-entry queue. */
	make_cmd(&c, OPC_HOLD, 20, 0, 0, false);
	send_capsule(&h, &c, NULL, 0);
	expect_term(&h, NVME_TCP_FES_PDU_SEQ_ERR, 0, NULL, 0);
	close(h.fd);
	/* Parked commands keep the queue pair alive until the backend lets go. */
	usleep(50000);
	CU_ASSERT_EQUAL(atomic_load(&n_fini), before);
	release_held();
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

static void test_host_term_req(void)
{
	struct host h;
	uint8_t buf[64];
	size_t n;
	int before = atomic_load(&n_fini), disc = atomic_load(&n_disconnected);

	host_open(&h);
	host_ic(&h, false, false, 0);
	n = nvme_tcp_build_term_req(buf, NVME_TCP_PDU_H2C_TERM_REQ, NVME_TCP_FES_HDR_DIGEST_ERR, 0,
				    NULL, 0);
	host_send(&h, buf, n);
	CU_ASSERT_TRUE(host_eof(&h));
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	CU_ASSERT(atomic_load(&n_disconnected) > disc);
}


/* A host that neither reads the C2HTermReq nor closes: the target closes after a linger. */
static void test_term_linger(void)
{
	struct host h;
	uint8_t buf[128];
	size_t len;
	int before = atomic_load(&n_fini);

	host_open(&h);
	len = nvme_tcp_build_icreq(buf, false, false, 0, 0);
	put_le16(buf + 8, 7); /* PFV 7 */
	host_send(&h, buf, len);
	usleep(500000);
	CU_ASSERT_EQUAL(atomic_load(&n_fini), before); /* still waiting for the host */
	CU_ASSERT_EQUAL(wait_fini(before), 0);	      /* ...but not forever */
	expect_term(&h, NVME_TCP_FES_UNSUPPORTED_PARAM, 8, buf, 8);
	close(h.fd);
}

/* ---- tests: data paths ------------------------------------------------------------------ */

static void fill(uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed + (i >> 9));
}

/* Write by R2T, in @chunks H2CData PDUs. */
static void write_r2t(struct host *h, uint16_t cid, uint32_t off, const uint8_t *data,
		      uint32_t len, int chunks)
{
	struct nvme_cmd c;
	uint8_t buf[256], hdr[256], dg[4];
	const struct nvme_tcp_r2t_hdr *r2t = (const void *)buf;
	uint32_t done = 0;

	make_cmd(&c, 0x01, cid, off, len, false);
	send_capsule(h, &c, NULL, 0);
	while (done < len) {
		uint32_t r2to, r2tl, step, sent = 0;
		uint16_t ttag;

		CU_ASSERT_FATAL(host_recv(h, buf, sizeof(buf)) > 0);
		CU_ASSERT_EQUAL_FATAL(r2t->ch.pdu_type, NVME_TCP_PDU_R2T);
		check_hdgst(h, buf);
		CU_ASSERT_EQUAL(get_le16(&r2t->cccid), cid);
		r2to = get_le32(&r2t->r2to);
		r2tl = get_le32(&r2t->r2tl);
		ttag = get_le16(&r2t->ttag);
		CU_ASSERT_EQUAL(r2to, done);
		CU_ASSERT(r2tl > 0 && r2tl <= h->maxh2cdata && r2to + r2tl <= len);
		step = (r2tl + (uint32_t)chunks - 1) / (uint32_t)chunks;
		while (sent < r2tl) {
			uint32_t n = r2tl - sent < step ? r2tl - sent : step;
			uint8_t fl = sent + n == r2tl ? NVME_TCP_F_DATA_LAST : 0;
			size_t hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, cid, ttag,
							r2to + sent, n, fl, &h->p);

			host_send(h, hdr, hl);
			host_send(h, data + r2to + sent, n);
			if (h->p.ddgst) {
				put_le32(dg, crc32c(data + r2to + sent, n));
				host_send(h, dg, 4);
			}
			sent += n;
		}
		done += r2tl;
	}
}

/* Read @len bytes; checks C2HData framing, returns the final status or -1. */
static int read_cmd(struct host *h, uint16_t cid, uint32_t off, uint8_t *out, uint32_t len,
		    bool expect_success_flag)
{
	struct nvme_cmd c;
	static uint8_t buf[MAX_IO + 1024];
	const struct nvme_tcp_data_hdr *d = (const void *)buf;
	uint32_t got = 0;

	make_cmd(&c, 0x02, cid, off, len, false);
	send_capsule(h, &c, NULL, 0);
	while (got < len) {
		int plen = host_recv(h, buf, sizeof(buf));
		uint32_t datao, datal;

		CU_ASSERT_FATAL(plen > 0);
		if (d->ch.pdu_type == NVME_TCP_PDU_CAPSULE_RESP)
			return get_le16(&((const struct nvme_tcp_rsp *)buf)->cqe.status) & ~1;
		CU_ASSERT_EQUAL_FATAL(d->ch.pdu_type, NVME_TCP_PDU_C2H_DATA);
		check_hdgst(h, buf);
		datao = get_le32(&d->datao);
		datal = get_le32(&d->datal);
		CU_ASSERT_EQUAL(get_le16(&d->cccid), cid);
		CU_ASSERT_EQUAL(datao, got);
		CU_ASSERT_EQUAL(d->ch.pdo % ((h->p.hpda + 1u) * 4u), 0);
		CU_ASSERT_EQUAL(nvme_tcp_data_len(&d->ch, h->p.ddgst), datal);
		memcpy(out + datao, buf + d->ch.pdo, datal);
		if (h->p.ddgst)
			CU_ASSERT_EQUAL(get_le32(buf + d->ch.pdo + datal),
					crc32c(buf + d->ch.pdo, datal));
		got += datal;
		if (got == len) {
			CU_ASSERT(d->ch.flags & NVME_TCP_F_DATA_LAST);
			if (d->ch.flags & NVME_TCP_F_DATA_SUCCESS) {
				CU_ASSERT_TRUE(expect_success_flag);
				return 0;
			}
		}
	}
	CU_ASSERT_FALSE(expect_success_flag);
	return expect_rsp(h, cid);
}

static void data_round_trip(bool hdgst, bool ddgst, uint8_t hpda, bool no_sqflow)
{
	static uint8_t wbuf[MAX_IO], rbuf[MAX_IO];
	static const uint32_t sizes[] = { 512, 4096, 8192, 12288, 65536, MAX_IO };
	struct host h;
	int before = atomic_load(&n_fini);

	host_open(&h);
	host_ic(&h, hdgst, ddgst, hpda);
	host_connect(&h, 1, 128, no_sqflow);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i], off = (uint32_t)i * 4096;
		struct nvme_cmd c;

		fill(wbuf, len, (unsigned int)i + (hdgst ? 3 : 0) + (ddgst ? 5 : 0));
		if (len <= 8192) {
			/* in-capsule */
			make_cmd(&c, 0x01, (uint16_t)(100 + i), off, len, true);
			send_capsule(&h, &c, wbuf, len);
			CU_ASSERT_EQUAL(expect_rsp(&h, (uint16_t)(100 + i)), 0);
		} else {
			write_r2t(&h, (uint16_t)(100 + i), off, wbuf, len, i % 2 ? 3 : 1);
			CU_ASSERT_EQUAL(expect_rsp(&h, (uint16_t)(100 + i)), 0);
		}
		CU_ASSERT_EQUAL(memcmp(disk + off, wbuf, len), 0);
		memset(rbuf, 0, len);
		CU_ASSERT_EQUAL(read_cmd(&h, (uint16_t)(200 + i), off, rbuf, len, no_sqflow), 0);
		CU_ASSERT_EQUAL(memcmp(rbuf, wbuf, len), 0);
	}
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

/* The state counters on a real connection: 13 commands (Connect, 3 in-capsule and 3 R2T
 * writes, 6 reads), each PDU through AWAIT_PDU_PSH once. */
static void test_data_plain(void)
{
	struct nvmf_tcp_stats a, b;
	const uint64_t *ra = a.totals.req_state_entries, *rb = b.totals.req_state_entries;
	const uint64_t *xa = a.totals.rx_state_entries, *xb = b.totals.rx_state_entries;

	nvmf_tcp_get_stats(&a);
	data_round_trip(false, false, 0, false);
	nvmf_tcp_get_stats(&b);
	CU_ASSERT_EQUAL(rb[TCP_REQ_EXECUTING] - ra[TCP_REQ_EXECUTING], 13);
	CU_ASSERT_EQUAL(rb[TCP_REQ_READY_TO_EXECUTE] - ra[TCP_REQ_READY_TO_EXECUTE], 13);
	CU_ASSERT_EQUAL(rb[TCP_REQ_TRANSFERRING_H2C] - ra[TCP_REQ_TRANSFERRING_H2C], 7);
	CU_ASSERT_EQUAL(rb[TCP_REQ_TRANSFERRING_C2H] - ra[TCP_REQ_TRANSFERRING_C2H], 13);
	CU_ASSERT_EQUAL(rb[TCP_REQ_COMPLETED] - ra[TCP_REQ_COMPLETED], 13);
	CU_ASSERT_EQUAL(rb[TCP_REQ_FREE] - ra[TCP_REQ_FREE], 13);
	CU_ASSERT_EQUAL(rb[TCP_REQ_NEED_BUFFER] - ra[TCP_REQ_NEED_BUFFER], 0);
	CU_ASSERT_EQUAL(xb[TCP_RX_AWAIT_PSH] - xa[TCP_RX_AWAIT_PSH],
			b.totals.pdus_rx - a.totals.pdus_rx);
	CU_ASSERT_EQUAL(xb[TCP_RX_ERROR] - xa[TCP_RX_ERROR], 1);
	CU_ASSERT_EQUAL(xb[TCP_RX_QUIESCING] - xa[TCP_RX_QUIESCING], 0);
}

static void test_data_digests(void)
{
	data_round_trip(true, true, 0, false);
	data_round_trip(true, false, 0, false);
	data_round_trip(false, true, 0, false);
}

static void test_data_hpda(void)
{
	data_round_trip(true, false, 3, false); /* C2HData data at 16-byte alignment */
}

static void test_success_flag(void)
{
	data_round_trip(false, false, 0, true);
}

/* Many commands in one send: the receive loop handles many PDUs per recv. */
static void test_pipelined(void)
{
	enum { N = 64 };
	static uint8_t stream[N * (72 + 4 + 512 + 4)];
	uint8_t data[512];
	size_t pos = 0;
	struct host h;
	int before = atomic_load(&n_fini);
	bool seen[N] = { false };
	struct nvmf_tcp_stats st0, st1;

	nvmf_tcp_get_stats(&st0);
	host_open(&h);
	host_ic(&h, true, true, 0);
	host_connect(&h, 1, 128, false);
	for (int i = 0; i < N; i++) {
		struct nvme_cmd c;

		fill(data, sizeof(data), (unsigned int)i);
		make_cmd(&c, 0x01, (uint16_t)i, (uint32_t)i * 512, sizeof(data), true);
		pos += nvme_tcp_build_capsule_cmd(stream + pos, &c, sizeof(data), &h.p);
		memcpy(stream + pos, data, sizeof(data));
		pos += sizeof(data);
		put_le32(stream + pos, crc32c(data, sizeof(data)));
		pos += 4;
	}
	host_send(&h, stream, pos);
	for (int i = 0; i < N; i++) {
		uint8_t buf[128];
		const struct nvme_tcp_rsp *r = (const void *)buf;

		CU_ASSERT_FATAL(host_recv(&h, buf, sizeof(buf)) > 0);
		CU_ASSERT_EQUAL(get_le16(&r->cqe.status), 0);
		if (get_le16(&r->cqe.cid) < N)
			seen[get_le16(&r->cqe.cid)] = true;
	}
	for (int i = 0; i < N; i++) {
		fill(data, sizeof(data), (unsigned int)i);
		CU_ASSERT_TRUE(seen[i]);
		CU_ASSERT_EQUAL(memcmp(disk + i * 512, data, sizeof(data)), 0);
	}
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	/* ICReq + Connect + 64 commands in; ICResp + 65 responses out; one recv for many. */
	nvmf_tcp_get_stats(&st1);
	CU_ASSERT_EQUAL(st1.totals.pdus_rx - st0.totals.pdus_rx, 66);
	CU_ASSERT_EQUAL(st1.totals.pdus_tx - st0.totals.pdus_tx, 66);
	CU_ASSERT_EQUAL(st1.totals.bytes_rx - st0.totals.bytes_rx,
			128 + (76 + 1024 + 4) + pos);
	CU_ASSERT_EQUAL(st1.totals.bytes_tx - st0.totals.bytes_tx, 128 + 65 * 28);
	CU_ASSERT(st1.totals.recv_calls - st0.totals.recv_calls < 40);
	CU_ASSERT_EQUAL(st1.closed - st0.closed, 1);
	CU_ASSERT_EQUAL(st1.totals.hdgst_errors, st0.totals.hdgst_errors);
}


/* Responses far larger than the socket buffers: partial sendmsg, EAGAIN, write watcher. */
static void test_partial_writes(void)
{
	enum { N = 24 };
	static uint8_t expect[N][MAX_IO];
	static uint8_t buf[MAX_IO + 1024];
	const struct nvme_tcp_data_hdr *d = (const void *)buf;
	uint32_t got[N] = { 0 };
	int responses = 0;
	struct host h;
	int before = atomic_load(&n_fini);

	for (int i = 0; i < N; i++)
		fill(disk + (size_t)i * 32768, 32768, (unsigned int)i + 40);
	g_small_bufs = 4096;
	host_open(&h);
	host_ic(&h, false, true, 0);
	host_connect(&h, 1, 64, false);
	for (int i = 0; i < N; i++) {
		struct nvme_cmd c;
		uint32_t off = (uint32_t)(i % 8) * 131072;

		memcpy(expect[i], disk + off, MAX_IO);
		make_cmd(&c, 0x02, (uint16_t)(300 + i), off, MAX_IO, false);
		send_capsule(&h, &c, NULL, 0);
	}
	usleep(100000); /* let the target hit a full socket */
	while (responses < N) {
		int plen = host_recv(&h, buf, sizeof(buf));
		uint16_t cid;

		CU_ASSERT_FATAL(plen > 0);
		if (d->ch.pdu_type == NVME_TCP_PDU_CAPSULE_RESP) {
			cid = get_le16(&((const struct nvme_tcp_rsp *)buf)->cqe.cid) - 300;
			CU_ASSERT_FATAL(cid < N);
			CU_ASSERT_EQUAL(got[cid], MAX_IO);
			responses++;
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(d->ch.pdu_type, NVME_TCP_PDU_C2H_DATA);
		cid = get_le16(&d->cccid) - 300;
		CU_ASSERT_FATAL(cid < N);
		CU_ASSERT_EQUAL(get_le32(&d->datao), got[cid]);
		CU_ASSERT_EQUAL(memcmp(buf + d->ch.pdo, expect[cid] + got[cid], get_le32(&d->datal)),
				0);
		CU_ASSERT_EQUAL(get_le32(buf + d->ch.pdo + get_le32(&d->datal)),
				crc32c(buf + d->ch.pdo, get_le32(&d->datal)));
		got[cid] += get_le32(&d->datal);
	}
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}


/* A reactor pool of 64 chunks for 100 reads of 128 KiB and 20 in-capsule writes: requests
 * wait for buffers (reads in NEED_BUFFER, the receive machine parked at in-capsule data)
 * and everything still completes, in full and intact. */
static void test_buffer_exhaustion(void)
{
	enum { NR = 100, NW = 20, NR2T = 5 };
	static uint8_t buf[MAX_IO + 1024];
	const struct nvme_tcp_data_hdr *d = (const void *)buf;
	uint8_t wdata[8192];
	uint32_t got[NR] = { 0 };
	int responses = 0, wresp = 0;
	struct reactor_buf_stats bst;
	struct host h;
	int before;

	reactors_stop();
	reactors_configure(MAX_IO, 64, REACTOR_PIN_OFF);
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	R = reactor_get(0);
	before = atomic_load(&n_fini);

	for (int i = 0; i < 7; i++)
		fill(disk + (size_t)i * MAX_IO, MAX_IO, (unsigned int)i + 70);
	host_open(&h);
	host_ic(&h, false, false, 0);
	host_connect(&h, 1, 128, false);
	for (int i = 0; i < NR; i++) {
		struct nvme_cmd c;

		make_cmd(&c, 0x02, (uint16_t)(400 + i), (uint32_t)(i % 7) * MAX_IO, MAX_IO, false);
		send_capsule(&h, &c, NULL, 0);
		if (i % 5 == 0) {
			int j = i / 5;

			fill(wdata, sizeof(wdata), (unsigned int)j + 90);
			make_cmd(&c, 0x01, (uint16_t)(600 + j), 7 * MAX_IO + (uint32_t)j * 4096,
				 4096, true);
			send_capsule(&h, &c, wdata, 4096);
		}
		if (i % 20 == 10) { /* and writes by R2T */
			int k = i / 20;

			make_cmd(&c, 0x01, (uint16_t)(700 + k), 7 * MAX_IO + 81920 + (uint32_t)k * 8192,
				 8192, false);
			send_capsule(&h, &c, NULL, 0);
		}
	}
	usleep(100000);
	while (responses + wresp < NR + NW + NR2T) {
		int plen = host_recv(&h, buf, sizeof(buf));
		uint16_t cid;

		CU_ASSERT_FATAL(plen > 0);
		if (d->ch.pdu_type == NVME_TCP_PDU_R2T) {
			const struct nvme_tcp_r2t_hdr *r2t = (const void *)buf;
			uint8_t hdr[64];
			size_t hl;

			cid = get_le16(&r2t->cccid);
			CU_ASSERT_FATAL(cid >= 700 && cid < 700 + NR2T);
			CU_ASSERT_EQUAL(get_le32(&r2t->r2tl), 8192);
			fill(wdata, sizeof(wdata), cid);
			hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, cid, get_le16(&r2t->ttag),
						 0, 8192, NVME_TCP_F_DATA_LAST, &h.p);
			host_send(&h, hdr, hl);
			host_send(&h, wdata, 8192);
			continue;
		}
		if (d->ch.pdu_type == NVME_TCP_PDU_CAPSULE_RESP) {
			const struct nvme_tcp_rsp *r = (const void *)buf;

			cid = get_le16(&r->cqe.cid);
			CU_ASSERT_EQUAL(get_le16(&r->cqe.status), 0);
			if (cid >= 600) {
				wresp++;
				continue;
			}
			CU_ASSERT_FATAL(cid >= 400 && cid < 400 + NR);
			CU_ASSERT_EQUAL(got[cid - 400], MAX_IO);
			responses++;
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(d->ch.pdu_type, NVME_TCP_PDU_C2H_DATA);
		cid = get_le16(&d->cccid) - 400;
		CU_ASSERT_FATAL(cid < NR);
		CU_ASSERT_EQUAL(memcmp(buf + d->ch.pdo, disk + (size_t)(cid % 7) * MAX_IO + got[cid],
				       get_le32(&d->datal)),
				0);
		got[cid] += get_le32(&d->datal);
	}
	for (int j = 0; j < NW; j++) {
		fill(wdata, sizeof(wdata), (unsigned int)j + 90);
		CU_ASSERT_EQUAL(memcmp(disk + 7 * MAX_IO + j * 4096, wdata, 4096), 0);
	}
	for (int k = 0; k < NR2T; k++) {
		fill(wdata, sizeof(wdata), 700u + (unsigned int)k);
		CU_ASSERT_EQUAL(memcmp(disk + 7 * MAX_IO + 81920 + k * 8192, wdata, 8192), 0);
	}
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	reactor_buf_stats(R, &bst);
	CU_ASSERT_EQUAL(bst.allocated, 64);
	CU_ASSERT(bst.exhausted > 0);
	CU_ASSERT_EQUAL(bst.free, 64);

	/* The host goes away with requests waiting for buffers: all of them come back. */
	before = atomic_load(&n_fini);
	host_open(&h);
	host_ic(&h, false, false, 0);
	host_connect(&h, 1, 128, false);
	for (int i = 0; i < NR; i++) {
		struct nvme_cmd c;

		make_cmd(&c, 0x02, (uint16_t)(400 + i), 0, MAX_IO, false);
		send_capsule(&h, &c, NULL, 0);
	}
	usleep(50000);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	reactor_buf_stats(R, &bst);
	CU_ASSERT_EQUAL(bst.free, bst.allocated);

	reactors_stop();
	reactors_configure(MAX_IO, 0, REACTOR_PIN_OFF);
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	R = reactor_get(0);
}

/* ---- tests: per-command errors keep the connection ----------------------------------------- */

static void test_command_errors(void)
{
	struct host h;
	struct nvme_cmd c;
	uint8_t data[1024] = { 1, 2, 3 }, dg[4], hdr[256];
	size_t hl;
	int before = atomic_load(&n_fini);
	int execs;

	host_open(&h);
	host_ic(&h, false, true, 0);
	host_connect(&h, 1, 32, false);
	execs = atomic_load(&n_exec);

	/* In-capsule SGL with a non-zero offset. */
	make_cmd(&c, 0x01, 1, 0, 512, true);
	put_le64(&c.dptr.sgl1.addr, 16);
	send_capsule(&h, &c, data, 512);
	CU_ASSERT_EQUAL(expect_rsp(&h, 1),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_SGL_OFFSET) | NVME_STATUS_DNR);

	/* SGL length differs from the data carried. */
	make_cmd(&c, 0x01, 2, 0, 1024, true);
	send_capsule(&h, &c, data, 512);
	CU_ASSERT_EQUAL(expect_rsp(&h, 2),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID) |
				NVME_STATUS_DNR);

	/* In-capsule data on a read. */
	make_cmd(&c, 0x02, 3, 0, 512, true);
	send_capsule(&h, &c, data, 512);
	CU_ASSERT_EQUAL(expect_rsp(&h, 3),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID) |
				NVME_STATUS_DNR);

	/* Transfer larger than the maximum I/O size. */
	make_cmd(&c, 0x02, 4, 0, MAX_IO + 512, false);
	send_capsule(&h, &c, NULL, 0);
	CU_ASSERT_EQUAL(expect_rsp(&h, 4),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID) |
				NVME_STATUS_DNR);

	/* Keyed SGL (RDMA) on TCP. */
	make_cmd(&c, 0x02, 5, 0, 512, false);
	c.dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK, 0);
	send_capsule(&h, &c, NULL, 0);
	CU_ASSERT_EQUAL(expect_rsp(&h, 5),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID) |
				NVME_STATUS_DNR);

	/* Data digest mismatch: Transient Transport Error, retryable, not executed. */
	make_cmd(&c, 0x01, 6, 0, 512, true);
	hl = nvme_tcp_build_capsule_cmd(hdr, &c, 512, &h.p);
	host_send(&h, hdr, hl);
	host_send(&h, data, 512);
	put_le32(dg, crc32c(data, 512) ^ 1);
	host_send(&h, dg, 4);
	CU_ASSERT_EQUAL(expect_rsp(&h, 6),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT_ERROR));
	CU_ASSERT_EQUAL(atomic_load(&n_exec), execs);

	/* Command ID in use. */
	make_cmd(&c, OPC_HOLD, 7, 0, 0, false);
	send_capsule(&h, &c, NULL, 0);
	make_cmd(&c, 0x00, 7, 0, 0, false);
	send_capsule(&h, &c, NULL, 0);
	CU_ASSERT_EQUAL(expect_rsp(&h, 7),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CID_CONFLICT) | NVME_STATUS_DNR);
	release_held();
	CU_ASSERT_EQUAL(expect_rsp(&h, 7), 0);
	/* ...and the CID is free again afterwards. */
	make_cmd(&c, 0x00, 7, 0, 0, false);
	send_capsule(&h, &c, NULL, 0);
	CU_ASSERT_EQUAL(expect_rsp(&h, 7), 0);

	/* Still usable. */
	make_cmd(&c, 0x01, 8, 0, 512, true);
	send_capsule(&h, &c, data, 512);
	CU_ASSERT_EQUAL(expect_rsp(&h, 8), 0);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

/* A write whose H2C data has a bad digest fails after all its data arrived. */
static void test_h2c_ddgst_error(void)
{
	static uint8_t wbuf[16384];
	struct host h;
	struct nvme_cmd c;
	uint8_t buf[256], hdr[256], dg[4];
	const struct nvme_tcp_r2t_hdr *r2t = (const void *)buf;
	int before = atomic_load(&n_fini);
	uint16_t ttag;

	host_open(&h);
	host_ic(&h, false, true, 0);
	host_connect(&h, 1, 32, false);
	fill(wbuf, sizeof(wbuf), 9);
	make_cmd(&c, 0x01, 9, 0, sizeof(wbuf), false);
	send_capsule(&h, &c, NULL, 0);
	CU_ASSERT_FATAL(host_recv(&h, buf, sizeof(buf)) > 0);
	ttag = get_le16(&r2t->ttag);
	for (int i = 0; i < 2; i++) {
		size_t hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 9, ttag, (uint32_t)i * 8192,
						8192, i ? NVME_TCP_F_DATA_LAST : 0, &h.p);

		host_send(&h, hdr, hl);
		host_send(&h, wbuf + i * 8192, 8192);
		put_le32(dg, crc32c(wbuf + i * 8192, 8192) ^ (i == 0 ? 0xff : 0));
		host_send(&h, dg, 4);
	}
	CU_ASSERT_EQUAL(expect_rsp(&h, 9),
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_TRANSIENT_TRANSPORT_ERROR));
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

/* ---- helpers ---------------------------------------------------------------------------- */

static void test_iov_helpers(void)
{
	uint8_t a[100], b[50], c[10], flat[160];
	struct iovec v[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };
	struct iovec out[4];
	int n;

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(c, sizeof(c), 3);
	memcpy(flat, a, 100);
	memcpy(flat + 100, b, 50);
	memcpy(flat + 150, c, 10);

	CU_ASSERT_EQUAL(tcp_iov_crc(v, 3, 0, 160), crc32c(flat, 160));
	CU_ASSERT_EQUAL(tcp_iov_crc(v, 3, 90, 65), crc32c(flat + 90, 65));
	CU_ASSERT_EQUAL(tcp_iov_crc(v, 3, 150, 10), crc32c(flat + 150, 10));

	n = tcp_iov_slice(out, 4, v, 3, 90, 65);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_PTR_EQUAL(out[0].iov_base, a + 90);
	CU_ASSERT_EQUAL(out[0].iov_len, 10);
	CU_ASSERT_EQUAL(out[1].iov_len, 50);
	CU_ASSERT_EQUAL(out[2].iov_len, 5);
	n = tcp_iov_slice(out, 1, v, 3, 0, 160);
	CU_ASSERT_EQUAL(n, 1);
	n = tcp_iov_slice(out, 4, v, 3, 100, 50);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_PTR_EQUAL(out[0].iov_base, b);
	CU_ASSERT_STRING_EQUAL(tcp_req_state_name(TCP_REQ_TRANSFERRING_H2C), "TRANSFERRING_H2C");
	CU_ASSERT_STRING_EQUAL(tcp_rx_state_name(TCP_RX_AWAIT_PSH), "AWAIT_PDU_PSH");
	CU_ASSERT_STRING_EQUAL(nvmf_tcp_req_state_name(TCP_REQ_COMPLETED), "COMPLETED");
	CU_ASSERT_STRING_EQUAL(nvmf_tcp_rx_state_name(TCP_RX_NSTATES), "?");
	/* The receive machine's table: forward through a PDU, never back out of a stop. */
	CU_ASSERT_TRUE(tcp_rx_transition_ok(TCP_RX_AWAIT_CH, TCP_RX_AWAIT_PSH));
	CU_ASSERT_TRUE(tcp_rx_transition_ok(TCP_RX_AWAIT_PAYLOAD, TCP_RX_AWAIT_CH));
	CU_ASSERT_TRUE(tcp_rx_transition_ok(TCP_RX_QUIESCING, TCP_RX_ERROR));
	CU_ASSERT_FALSE(tcp_rx_transition_ok(TCP_RX_AWAIT_CH, TCP_RX_AWAIT_PAYLOAD));
	CU_ASSERT_FALSE(tcp_rx_transition_ok(TCP_RX_QUIESCING, TCP_RX_AWAIT_CH));
	CU_ASSERT_FALSE(tcp_rx_transition_ok(TCP_RX_ERROR, TCP_RX_AWAIT_CH));
	CU_ASSERT_FALSE(tcp_rx_transition_ok(TCP_RX_NSTATES, TCP_RX_ERROR));
}

static void test_disc_entry(void)
{
	struct nvmf_disc_log_entry e;

	memset(&e, 0xff, sizeof(e));
	nvmf_tcp_transport_ops.disc_entry(&port, &e);
	CU_ASSERT_EQUAL(e.tsas[0], NVMF_TCP_SECTYPE_NONE);
	CU_ASSERT_EQUAL(e.tsas[255], 0);
	CU_ASSERT_EQUAL(e.treq, NVMF_TREQ_SECURE_NOT_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW);
	CU_ASSERT_PTR_NULL(nvmf_transport_find("tcp")); /* the daemon registers it */
	CU_ASSERT_EQUAL(nvmf_transport_register(&nvmf_tcp_transport_ops), 0);
	CU_ASSERT_PTR_EQUAL(nvmf_transport_find("tcp"), &nvmf_tcp_transport_ops);
	CU_ASSERT_PTR_NULL(nvmf_transport_find("rdma"));
	CU_ASSERT_EQUAL(nvmf_tcp_transport_ops.trtype, NVMF_TRTYPE_TCP);
	CU_ASSERT_EQUAL(nvmf_transport_register(&nvmf_tcp_transport_ops), -EEXIST);
}

static int suite_init(void)
{
	sem_init(&fini_sem, 0, 0);
	sem_init(&msg_done, 0, 0);
	tgt.opts.max_queue_depth = 128;
	tgt.opts.max_admin_depth = 32;
	tgt.opts.in_capsule_size = 8192;
	tgt.opts.max_io_size = MAX_IO;
	tgt.opts.max_connections = 64;
	port.tgt = &tgt;
	port.ops = &nvmf_tcp_transport_ops;
	reactors_configure(MAX_IO, 0, REACTOR_PIN_OFF);
	if (reactors_start(1) != 0)
		return -1;
	R = reactor_get(0);
	return 0;
}

static int suite_fini(void)
{
	reactors_stop();
	return 0;
}

int main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("nvme-tcp transport", suite_init, suite_fini);
	CU_add_test(s, "iovec helpers and names", test_iov_helpers);
	CU_add_test(s, "discovery entry and registry", test_disc_entry);
	CU_add_test(s, "ICReq/ICResp", test_icreq_icresp);
	CU_add_test(s, "malformed PDUs -> C2HTermReq", test_malformed);
	CU_add_test(s, "more commands than SQSIZE", test_sq_overflow);
	CU_add_test(s, "H2CTermReq from the host", test_host_term_req);
	CU_add_test(s, "C2HTermReq linger", test_term_linger);
	CU_add_test(s, "write/read, no digests", test_data_plain);
	CU_add_test(s, "write/read, digests", test_data_digests);
	CU_add_test(s, "write/read, HPDA 3", test_data_hpda);
	CU_add_test(s, "C2HData SUCCESS with SQ flow control off", test_success_flag);
	CU_add_test(s, "64 pipelined in-capsule writes", test_pipelined);
	CU_add_test(s, "partial writes with tiny socket buffers", test_partial_writes);
	CU_add_test(s, "buffer pool exhausted", test_buffer_exhaustion);
	CU_add_test(s, "per-command errors", test_command_errors);
	CU_add_test(s, "H2CData data digest error", test_h2c_ddgst_error);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
