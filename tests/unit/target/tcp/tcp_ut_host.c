/* SPDX-License-Identifier: MIT */
/* Harness of the NVMe/TCP transport unit tests (tcp_ut_host.h). */
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
#include "common/tls_psk.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "tcp/tcp_internal.h"
#include "tcp_ut_host.h"

/* ---- the fake core ---------------------------------------------------------------------- */

uint8_t disk[DISK_SIZE];
struct nvmf_tgt tgt;
struct nvmf_port port;
struct reactor *R;
atomic_int n_exec, n_fini, n_disconnected;
static sem_t fini_sem;
struct nvmf_req *held[64];
int nheld;
struct nvmf_qpair *last_qp;

void nvmf_qpair_init(struct nvmf_qpair *qp, const struct nvmf_transport_ops *ops,
		     struct nvmf_tgt *t, struct nvmf_port *p, struct reactor *r)
{
	last_qp = qp;
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

/* TLS ports: one host's PSK (tcp_tls_ut.c sets it). */
char ut_psk_host[NVME_NQN_FIELD];
struct nvme_tls_key ut_psk;

int nvmf_tgt_get_host_psk(struct nvmf_tgt *t, const char *hostnqn, struct nvme_tls_key *out)
{
	(void)t;
	memset(out, 0, sizeof(*out));
	if (!ut_psk.psk || strcmp(hostnqn, ut_psk_host))
		return -ENOENT;
	out->hmac = ut_psk.hmac;
	out->psk = nvme_secret_from(ut_psk.psk->key, ut_psk.psk->len);
	return out->psk ? 0 : -ENOMEM;
}

bool nvmf_tgt_host_has_psk_locked(const struct nvmf_tgt *t, const char *hostnqn)
{
	(void)t;
	return ut_psk.psk && !strcmp(hostnqn, ut_psk_host);
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

/* This core holds no Asynchronous Event Requests: a reused CID is a conflict. */
struct nvmf_req *nvmf_qpair_aer_take(struct nvmf_qpair *qp, uint16_t cid)
{
	(void)qp;
	(void)cid;
	return NULL;
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
		if (qp->map_read_data && ut_map_reads) { /* as the core does with a ram backend */
			req->iov[0].iov_base = disk + off;
			req->iov[0].iov_len = req->length;
			req->iovcnt = 1;
			req->data_mapped = true;
			atomic_fetch_add(&n_mapped, 1);
			break;
		}
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

bool ut_map_reads;
atomic_int n_mapped, n_released;

void nvmf_req_release_data(struct nvmf_req *req)
{
	if (!req->data_mapped)
		return;
	req->data_mapped = false;
	req->iovcnt = 0;
	atomic_fetch_add(&n_released, 1);
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

void release_held(void)
{
	reactor_send_msg(R, release_held_msg, NULL);
	sem_wait(&msg_done);
}

/* ---- the host side ---------------------------------------------------------------------- */

int wait_fini(int before)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	while (atomic_load(&n_fini) <= before)
		if (sem_timedwait(&fini_sem, &ts) != 0)
			return -1;
	return 0;
}

int g_small_bufs;

void host_open(struct host *h)
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

void host_send(struct host *h, const void *buf, size_t len)
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
int host_recv(struct host *h, uint8_t *buf, size_t max)
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
bool host_eof(struct host *h)
{
	uint8_t b[256];
	ssize_t n;

	do {
		n = recv(h->fd, b, sizeof(b), 0);
	} while (n > 0);
	return n == 0;
}

void host_ic(struct host *h, bool hdgst, bool ddgst, uint8_t hpda)
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

void make_cmd(struct nvme_cmd *c, uint8_t opc, uint16_t cid, uint32_t cdw10, uint32_t len,
	      bool icdata)
{
	memset(c, 0, sizeof(*c));
	c->opc = opc;
	c->flags = 0x40;
	put_le16(&c->cid, cid);
	put_le32(&c->cdw10, cdw10);
	put_le32(c->dptr.sgl1.length, len);
	c->dptr.sgl1.type =
		icdata ? NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET)
		       : NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
				       NVME_SGL_SUBTYPE_TRANSPORT);
}

/* A CapsuleCmd with optional in-capsule data (and its digest when negotiated). */
void send_capsule(struct host *h, const struct nvme_cmd *c, const void *data, uint32_t len)
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

void host_connect(struct host *h, uint16_t qid, uint16_t sqsize, bool no_sqflow)
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

void check_hdgst(struct host *h, const uint8_t *pdu)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)pdu;

	if (!h->p.hdgst)
		return;
	CU_ASSERT(ch->flags & NVME_TCP_F_HDGST);
	CU_ASSERT(nvme_tcp_hdgst_ok(pdu, ch->hlen));
}

/* Expect a CapsuleResp for @cid; returns its status (without phase). */
int expect_rsp(struct host *h, uint16_t cid)
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
void expect_term(struct host *h, uint16_t fes, uint32_t fei, const void *bad, size_t badlen)
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

void fill(uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed + (i >> 9));
}

/* Write by R2T, in @chunks H2CData PDUs. */
void write_r2t(struct host *h, uint16_t cid, uint32_t off, const uint8_t *data, uint32_t len,
	       int chunks)
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
int read_cmd(struct host *h, uint16_t cid, uint32_t off, uint8_t *out, uint32_t len,
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

int tcp_ut_suite_init(void)
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

int tcp_ut_suite_fini(void)
{
	reactors_stop();
	return 0;
}
