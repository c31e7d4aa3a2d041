/* SPDX-License-Identifier: MIT */
/*
 * initiator/lib/nvme/host_tcp.c: the NVMe/TCP host transport against a scripted controller on the other
 * end of a socketpair. Checks the PDUs the host builds (ICReq, CapsuleCmd with SGLs and
 * in-capsule data, H2CData answering R2T within MAXH2CDATA, digests) and how it parses
 * replies, including malformed ones: each must fail only that queue pair, complete its
 * commands with an error and, for a bad header, send an H2CTermReq.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "fake_target.h"
#include "lib/nvme/host_nvme.h"
#include "ut.h"

struct env;
typedef void (*script_fn)(struct env *e);

struct env {
	struct nvmeof_ctrlr ctrlr;
	struct nvmeof_qpair *qp;
	int fds[2];
	struct fake_conn fk;
	pthread_t th;
	script_fn script;
	uint32_t maxh2cdata;
	int force_dgst;
	char fk_err[256];	/* first problem the fake saw (checked on the main thread) */
	int term_fes;		/* FES of the H2CTermReq the host sent, -1 for none */
	const void *arg;
};

static void fk_fail(struct env *e, const char *msg)
{
	if (!e->fk_err[0])
		snprintf(e->fk_err, sizeof(e->fk_err), "%s", msg);
}

static void *fake_main(void *p)
{
	struct env *e = p;

	if (fk_handshake(&e->fk, e->maxh2cdata, e->force_dgst) < 0) {
		fk_fail(e, "handshake");
		return NULL;
	}
	if (e->script)
		e->script(e);
	return NULL;
}

static int env_open(struct env *e, bool hd, bool dd, script_fn fn, uint32_t timeout_ms)
{
	memset(e, 0, sizeof(*e));
	nvmeof_opts_init(&e->ctrlr.opts);
	e->ctrlr.opts.hdgst = hd;
	e->ctrlr.opts.ddgst = dd;
	e->maxh2cdata = 8192;
	e->force_dgst = -1;
	e->term_fes = -1;
	e->script = fn;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, e->fds))
		return -errno;
	e->fk.fd = e->fds[1];
	e->qp = host_tcp_transport_ops.qpair_alloc();
	qpair_init(e->qp, &e->ctrlr, 1, 8, timeout_ms);
	fk_start(&e->th, fake_main, e);
	return 0;
}

static int env_connect(struct env *e)
{
	int rc = host_tcp_qpair_connect_fd(e->qp, e->fds[0], 2000);

	if (rc == 0)
		qpair_set_state(e->qp, QP_READY);
	return rc;
}

static void env_close(struct env *e)
{
	qpair_close(e->qp);
	qpair_poll(e->qp, 0, 0);
	pthread_join(e->th, NULL);
	close(e->fds[1]);
	qpair_fini(e->qp);
	host_tcp_transport_ops.qpair_free(e->qp);
}

struct result {
	bool done;
	struct nvmeof_cpl cpl;
};

static void store(void *arg, const struct nvmeof_cpl *cpl)
{
	struct result *r = arg;

	r->cpl = *cpl;
	r->done = true;
}

static int submit(struct env *e, uint8_t opc, struct iovec *iov, int iovcnt, uint32_t len,
		  struct result *r)
{
	struct nvme_cmd sqe = { .opc = opc };

	put_le32(&sqe.nsid, 1);
	return qpair_submit_cmd(e->qp, &sqe, iov, iovcnt, len, nvme_opc_xfer(opc), store, r);
}

static void wait_done(struct env *e, struct result *r)
{
	qpair_wait(e->qp, &r->done);
}

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

/* The fake's view of one CapsuleCmd: checks the header digest and returns the SQE. */
static bool fk_capsule(struct env *e, uint8_t *buf, size_t cap, struct nvme_cmd *sqe)
{
	int n = fk_recv_pdu(&e->fk, buf, cap);
	struct nvme_tcp_cmd *pdu = (void *)buf;

	if (n < (int)sizeof(*pdu) || pdu->ch.pdu_type != NVME_TCP_PDU_CAPSULE_CMD) {
		fk_fail(e, "expected a CapsuleCmd");
		return false;
	}
	if (e->fk.p.hdgst && (!(pdu->ch.flags & NVME_TCP_F_HDGST) ||
			      !nvme_tcp_hdgst_ok(pdu, sizeof(*pdu)))) {
		fk_fail(e, "CapsuleCmd header digest missing or wrong");
		return false;
	}
	if ((pdu->sqe.flags >> NVME_CMD_PSDT_SHIFT) != NVME_CMD_PSDT_SGL_MPTR_CONTIG) {
		fk_fail(e, "PSDT is not SGL");
		return false;
	}
	*sqe = pdu->sqe;
	return true;
}

/* ---- Handshake ------------------------------------------------------------------------- */
static void test_handshake_digests(void)
{
	static const struct {
		bool hd, dd;
	} cases[] = { { false, false }, { true, false }, { false, true }, { true, true } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env e;
		struct nvmeof_ctrlr_info info = { 0 };

		CU_ASSERT_EQUAL_FATAL(env_open(&e, cases[i].hd, cases[i].dd, NULL, 0), 0);
		CU_ASSERT_EQUAL(env_connect(&e), 0);
		host_tcp_transport_ops.get_info(e.qp, &info);
		CU_ASSERT_EQUAL(info.hdgst, cases[i].hd);
		CU_ASSERT_EQUAL(info.ddgst, cases[i].dd);
		CU_ASSERT_EQUAL(info.maxh2cdata, 8192);
		env_close(&e);
		CU_ASSERT_STRING_EQUAL(e.fk_err, "");
	}
}

/* Bad ICResps: the connect fails with the right error and a message. */
struct ic_case {
	const char *name;
	int field;	/* 0 pfv, 1 maxh2cdata, 2 dgst, 3 cpda, 4 TermReq instead, 5 close */
	uint32_t value;
	bool ask_hd;
	int want;
};

static const struct ic_case *cur_ic;

static void *ic_fake(void *p)
{
	struct env *e = p;
	uint8_t buf[256] __attribute__((aligned(8)));
	struct nvme_tcp_icresp *ic = (void *)buf;

	if (fk_recv_pdu(&e->fk, buf, sizeof(buf)) != 128)
		return NULL;
	if (cur_ic->field == 5) {
		shutdown(e->fk.fd, SHUT_RDWR);
		return NULL;
	}
	if (cur_ic->field == 4) {
		size_t n = nvme_tcp_build_term_req(buf, NVME_TCP_PDU_C2H_TERM_REQ,
						   NVME_TCP_FES_UNSUPPORTED_PARAM, 11, NULL, 0);

		fk_write_full(e->fk.fd, buf, n);
		return NULL;
	}
	nvme_tcp_build_icresp(buf, false, false, 0, 8192);
	switch (cur_ic->field) {
	case 0:
		put_le16(&ic->pfv, (uint16_t)cur_ic->value);
		break;
	case 1:
		put_le32(&ic->maxh2cdata, cur_ic->value);
		break;
	case 2:
		ic->dgst = (uint8_t)cur_ic->value;
		break;
	case 3:
		ic->cpda = (uint8_t)cur_ic->value;
		break;
	}
	fk_write_full(e->fk.fd, buf, 128);
	return NULL;
}

static void test_handshake_bad_icresp(void)
{
	static const struct ic_case cases[] = {
		{ "pfv 1", 0, 1, false, -EPROTO },
		{ "maxh2cdata 2048", 1, 2048, false, -EPROTO },
		{ "maxh2cdata not a multiple of 4", 1, 8190, false, -EPROTO },
		{ "digest not asked for", 2, NVME_TCP_DGST_DATA, false, -EPROTO },
		{ "header digest declined", 2, 0, true, -EPROTONOSUPPORT },
		{ "cpda 32", 3, 32, false, -EPROTO },
		{ "TermReq", 4, 0, false, -ECONNREFUSED },
		{ "closed", 5, 0, false, -ECONNRESET },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env e;
		int rc;

		cur_ic = &cases[i];
		memset(&e, 0, sizeof(e));
		nvmeof_opts_init(&e.ctrlr.opts);
		e.ctrlr.opts.hdgst = cases[i].ask_hd;
		CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, e.fds), 0);
		e.fk.fd = e.fds[1];
		e.qp = host_tcp_transport_ops.qpair_alloc();
		qpair_init(e.qp, &e.ctrlr, 0, 4, 0);
		fk_start(&e.th, ic_fake, &e);
		rc = host_tcp_qpair_connect_fd(e.qp, e.fds[0], 2000);
		if (rc != cases[i].want)
			fprintf(stderr, "\n  case '%s': rc %d, want %d\n", cases[i].name, rc,
				cases[i].want);
		CU_ASSERT_EQUAL(rc, cases[i].want);
		CU_ASSERT_STRING_NOT_EQUAL(nvmeof_last_error(), "");
		env_close(&e);
	}
}

static void test_handshake_timeout(void)
{
	struct env e;
	int fds[2];
	uint64_t t0;

	memset(&e, 0, sizeof(e));
	nvmeof_opts_init(&e.ctrlr.opts);
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	e.qp = host_tcp_transport_ops.qpair_alloc();
	qpair_init(e.qp, &e.ctrlr, 0, 4, 0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(host_tcp_qpair_connect_fd(e.qp, fds[0], 150), -ETIMEDOUT);
	CU_ASSERT(now_ms() - t0 >= 140 && now_ms() - t0 < 2000);
	qpair_close(e.qp);
	qpair_fini(e.qp);
	host_tcp_transport_ops.qpair_free(e.qp);
	close(fds[1]);
}

/* ---- Reads ------------------------------------------------------------------------------ */
#define READ_LEN 10001 /* odd: the PDUs after it start at odd buffer offsets */

static void read_script(struct env *e)
{
	uint8_t buf[512] __attribute__((aligned(8))), data[READ_LEN];
	struct nvme_cmd sqe;
	const struct nvme_sgl_desc *sgl = &sqe.dptr.sgl1;

	if (!fk_capsule(e, buf, sizeof(buf), &sqe))
		return;
	if (sqe.opc != NVME_OPC_READ ||
	    sgl->type != NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
				       NVME_SGL_SUBTYPE_TRANSPORT) ||
	    get_le32(sgl->length) != READ_LEN)
		fk_fail(e, "read SQE/SGL wrong");
	pattern(data, READ_LEN, 3);
	fk_send_c2h(&e->fk, get_le16(&sqe.cid), 0, data, 4001, 0);
	fk_send_c2h(&e->fk, get_le16(&sqe.cid), 4001, data + 4001, READ_LEN - 4001,
		    NVME_TCP_F_DATA_LAST);
	fk_send_resp(&e->fk, get_le16(&sqe.cid), 0, 0, 0);
}

static void test_read_c2h_into_iovecs(void)
{
	for (int dg = 0; dg < 4; dg++) {
		struct env e;
		struct result r = { 0 };
		uint8_t a[3000], b[5000], c[2001], want[READ_LEN];
		struct iovec iov[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };

		CU_ASSERT_EQUAL_FATAL(env_open(&e, dg & 1, dg & 2, read_script, 5000), 0);
		CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
		CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, iov, 3, READ_LEN, &r), 0);
		wait_done(&e, &r);
		CU_ASSERT(r.done);
		CU_ASSERT_EQUAL(r.cpl.err, 0);
		CU_ASSERT_EQUAL(r.cpl.status, 0);
		pattern(want, READ_LEN, 3);
		CU_ASSERT(memcmp(a, want, 3000) == 0);
		CU_ASSERT(memcmp(b, want + 3000, 5000) == 0);
		CU_ASSERT(memcmp(c, want + 8000, 2001) == 0);
		env_close(&e);
		CU_ASSERT_STRING_EQUAL(e.fk_err, "");
	}
}

/* The controller's bytes arrive one at a time: every state must resume. */
static void dribble_script(struct env *e)
{
	uint8_t buf[512] __attribute__((aligned(8))), data[700],
		out[2048] __attribute__((aligned(8)));
	struct nvme_cmd sqe;
	size_t n;

	if (!fk_capsule(e, buf, sizeof(buf), &sqe))
		return;
	pattern(data, sizeof(data), 9);
	e->fk.p.hpda = 3; /* PDO 32 with padding: exercises the pad state */
	n = nvme_tcp_build_data(out, NVME_TCP_PDU_C2H_DATA, get_le16(&sqe.cid), 0, 0, 700,
				NVME_TCP_F_DATA_LAST, &e->fk.p);
	memcpy(out + n, data, 700);
	n += 700;
	if (e->fk.p.ddgst) {
		put_le32(out + n, crc32c(data, 700));
		n += 4;
	}
	{
		struct nvme_cpl cqe = { 0 };

		put_le16(&cqe.cid, get_le16(&sqe.cid));
		n += nvme_tcp_build_capsule_resp(out + n, &cqe, e->fk.p.hdgst);
	}
	for (size_t i = 0; i < n; i++) {
		fk_write_full(e->fk.fd, out + i, 1);
		usleep(100);
	}
}

static void test_read_dribbled(void)
{
	for (int dg = 0; dg < 4; dg += 3) {
		struct env e;
		struct result r = { 0 };
		uint8_t got[700], want[700];
		struct iovec iov = { got, sizeof(got) };

		CU_ASSERT_EQUAL_FATAL(env_open(&e, dg & 1, dg & 2, dribble_script, 5000), 0);
		CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
		/* the host asked HPDA 0; a controller may still pad more (PDO is what counts) */
		CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &iov, 1, 700, &r), 0);
		wait_done(&e, &r);
		pattern(want, sizeof(want), 9);
		CU_ASSERT(nvmeof_cpl_ok(&r.cpl));
		CU_ASSERT(memcmp(got, want, sizeof(got)) == 0);
		env_close(&e);
		CU_ASSERT_STRING_EQUAL(e.fk_err, "");
	}
}

/* Eight reads answered in reverse order, all in one write: many PDUs per receive and
 * completion matching by CID, not by order. */
static void reverse_script(struct env *e)
{
	uint8_t buf[512] __attribute__((aligned(8)));
	struct nvme_cmd sqe[8];
	uint8_t data[512];

	for (int i = 0; i < 8; i++)
		if (!fk_capsule(e, buf, sizeof(buf), &sqe[i]))
			return;
	for (int i = 7; i >= 0; i--) {
		memset(data, get_le32(&sqe[i].cdw10), sizeof(data));
		fk_send_c2h(&e->fk, get_le16(&sqe[i].cid), 0, data, 512, NVME_TCP_F_DATA_LAST);
		fk_send_resp(&e->fk, get_le16(&sqe[i].cid), 0, (uint32_t)i, 0);
	}
}

static void test_reads_out_of_order(void)
{
	struct env e;
	struct result r[8] = { 0 };
	uint8_t bufs[8][512];
	struct iovec iov[8];
	struct nvme_cmd sqe = { .opc = NVME_OPC_READ };

	CU_ASSERT_EQUAL_FATAL(env_open(&e, false, false, reverse_script, 5000), 0);
	CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
	for (int i = 0; i < 8; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = 512;
		put_le32(&sqe.cdw10, (uint32_t)(0x40 + i));
		CU_ASSERT_EQUAL(qpair_submit_cmd(e.qp, &sqe, &iov[i], 1, 512, NVME_XFER_CTRLR_TO_HOST,
						 store, &r[i]),
				0);
	}
	for (int i = 0; i < 8; i++) {
		wait_done(&e, &r[i]);
		CU_ASSERT(nvmeof_cpl_ok(&r[i].cpl));
		CU_ASSERT_EQUAL(r[i].cpl.dw0, (uint32_t)i);
		CU_ASSERT_EQUAL(bufs[i][0], 0x40 + i);
		CU_ASSERT_EQUAL(bufs[i][511], 0x40 + i);
	}
	env_close(&e);
	CU_ASSERT_STRING_EQUAL(e.fk_err, "");
}

/* ---- Writes ----------------------------------------------------------------------------- */
#define ICW_LEN 5000

static void incapsule_script(struct env *e)
{
	static uint8_t buf[16384] __attribute__((aligned(8)));
	uint8_t want[ICW_LEN];
	struct nvme_cmd sqe;
	const struct nvme_sgl_desc *sgl = &sqe.dptr.sgl1;
	const uint8_t *data;
	uint32_t len;

	if (!fk_capsule(e, buf, sizeof(buf), &sqe))
		return;
	if (sgl->type != NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET) ||
	    get_le32(sgl->length) != ICW_LEN || get_le64(&sgl->addr) != 0)
		fk_fail(e, "in-capsule SGL wrong");
	data = fk_pdu_data(&e->fk, buf, &len);
	pattern(want, ICW_LEN, 5);
	if (!data)
		fk_fail(e, "in-capsule data digest wrong");
	else if (len != ICW_LEN || memcmp(data, want, ICW_LEN))
		fk_fail(e, "in-capsule data wrong");
	fk_send_resp(&e->fk, get_le16(&sqe.cid), 0, 0, 0);
}

/* Runs 4 and up of the write tests: the host's socket buffer far smaller than one PDU, so
 * the send loop stops in the middle of PDUs and must carry on from there. */
static void small_sndbuf(struct env *e, int run)
{
	int sz = 2048;

	if (run >= 4)
		CU_ASSERT_EQUAL(setsockopt(e->fds[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
}

static void test_write_in_capsule(void)
{
	for (int dg = 0; dg < 6; dg++) {
		struct env e;
		struct result r = { 0 };
		uint8_t data[ICW_LEN];
		struct iovec iov[2] = { { data, 1234 }, { data + 1234, ICW_LEN - 1234 } };

		pattern(data, ICW_LEN, 5);
		CU_ASSERT_EQUAL_FATAL(env_open(&e, dg & 1, dg & 2, incapsule_script, 5000), 0);
		small_sndbuf(&e, dg);
		CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
		host_tcp_transport_ops.set_icdata(e.qp, 8192);
		CU_ASSERT_EQUAL(submit(&e, NVME_OPC_WRITE, iov, 2, ICW_LEN, &r), 0);
		wait_done(&e, &r);
		CU_ASSERT(nvmeof_cpl_ok(&r.cpl));
		env_close(&e);
		CU_ASSERT_STRING_EQUAL(e.fk_err, "");
	}
}

#define R2T_LEN 20000

/* Two R2Ts; the first spans more than MAXH2CDATA (8192) and needs two H2CData PDUs. */
static void r2t_script(struct env *e)
{
	static uint8_t buf[16384] __attribute__((aligned(8)));
	static const struct {
		uint16_t ttag;
		uint32_t off, len;
		uint32_t pdus[3][2]; /* offset, length of each H2CData expected */
	} r2ts[] = {
		{ 7, 0, 12000, { { 0, 8192 }, { 8192, 3808 }, { 0, 0 } } },
		{ 9, 12000, 8000, { { 12000, 8000 }, { 0, 0 }, { 0, 0 } } },
	};
	uint8_t want[R2T_LEN];
	struct nvme_cmd sqe;
	uint16_t cid;

	pattern(want, R2T_LEN, 7);
	if (!fk_capsule(e, buf, sizeof(buf), &sqe))
		return;
	cid = get_le16(&sqe.cid);
	if (nvme_tcp_data_len((void *)buf, e->fk.p.ddgst) != 0 ||
	    sqe.dptr.sgl1.type != NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
						NVME_SGL_SUBTYPE_TRANSPORT) ||
	    get_le32(sqe.dptr.sgl1.length) != R2T_LEN)
		fk_fail(e, "R2T write capsule wrong");
	for (int r = 0; r < 2; r++) {
		fk_send_r2t(&e->fk, cid, r2ts[r].ttag, r2ts[r].off, r2ts[r].len);
		for (int k = 0; k < 3 && r2ts[r].pdus[k][1]; k++) {
			struct nvme_tcp_data_hdr *h = (void *)buf;
			const uint8_t *d;
			uint32_t len;
			bool last = k == 2 || !r2ts[r].pdus[k + 1][1];

			if (fk_recv_pdu(&e->fk, buf, sizeof(buf)) < 0 ||
			    h->ch.pdu_type != NVME_TCP_PDU_H2C_DATA) {
				fk_fail(e, "expected H2CData");
				return;
			}
			d = fk_pdu_data(&e->fk, buf, &len);
			if (get_le16(&h->cccid) != cid || get_le16(&h->ttag) != r2ts[r].ttag ||
			    get_le32(&h->datao) != r2ts[r].pdus[k][0] ||
			    get_le32(&h->datal) != r2ts[r].pdus[k][1] || len != r2ts[r].pdus[k][1] ||
			    !!(h->ch.flags & NVME_TCP_F_DATA_LAST) != last)
				fk_fail(e, "H2CData header wrong");
			if (e->fk.p.hdgst && !nvme_tcp_hdgst_ok(h, sizeof(*h)))
				fk_fail(e, "H2CData header digest wrong");
			if (!d || memcmp(d, want + r2ts[r].pdus[k][0], len))
				fk_fail(e, "H2CData payload or data digest wrong");
		}
	}
	fk_send_resp(&e->fk, cid, 0, 0, 0);
}

static void test_write_r2t_h2c(void)
{
	for (int dg = 0; dg < 6; dg++) {
		struct env e;
		struct result r = { 0 };
		static uint8_t data[R2T_LEN];
		struct iovec iov[3] = { { data, 100 }, { data + 100, 9000 },
					{ data + 9100, R2T_LEN - 9100 } };

		pattern(data, R2T_LEN, 7);
		CU_ASSERT_EQUAL_FATAL(env_open(&e, dg & 1, dg & 2, r2t_script, 5000), 0);
		small_sndbuf(&e, dg);
		CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
		CU_ASSERT_EQUAL(submit(&e, NVME_OPC_WRITE, iov, 3, R2T_LEN, &r), 0);
		wait_done(&e, &r);
		CU_ASSERT(nvmeof_cpl_ok(&r.cpl));
		env_close(&e);
		CU_ASSERT_STRING_EQUAL(e.fk_err, "");
	}
}

/* ---- Malformed replies ---------------------------------------------------------------------- */
enum bad_kind {
	BAD_SHORT_PLEN,	     /* CapsuleResp with PLEN smaller than its header */
	BAD_HLEN,	     /* CapsuleResp with HLEN 16 */
	BAD_TYPE,	     /* PDU type 0x0a */
	BAD_ICRESP_AGAIN,    /* a second ICResp */
	BAD_HDGST,	     /* CapsuleResp with a wrong header digest */
	BAD_RESP_CID,	     /* CapsuleResp for a CID never used */
	BAD_C2H_CID,	     /* C2HData for a CID never used */
	BAD_C2H_RANGE,	     /* C2HData longer than the command's data */
	BAD_C2H_DATAL,	     /* DATAL differs from what PLEN says */
	BAD_C2H_OFFSET,	     /* C2HData skipping ahead */
	BAD_R2T_FOR_READ,    /* R2T for a read */
	BAD_RESP_SHORT_DATA, /* success before any C2HData */
	BAD_TERMREQ,	     /* controller terminates */
	BAD_TRUNCATED,	     /* half a header, then the connection closes */
	BAD_SUCCESS_EARLY,   /* C2HData SUCCESS flag without LAST */
};

struct bad_case {
	const char *name;
	enum bad_kind kind;
	bool hdgst;
	int want_err;	/* the command's error */
	int want_fes;	/* H2CTermReq FES from the host, -1: none */
};

static const struct bad_case *cur_bad;

static void bad_script(struct env *e)
{
	uint8_t buf[512] __attribute__((aligned(8))), out[512] __attribute__((aligned(8)));
	struct nvme_cmd sqe;
	struct nvme_tcp_rsp *rsp = (void *)out;
	struct nvme_tcp_common_hdr *ch = (void *)out;
	uint8_t data[1024] = { 0 };
	uint16_t cid;
	size_t n = 0;
	int plen;

	if (!fk_capsule(e, buf, sizeof(buf), &sqe))
		return;
	cid = get_le16(&sqe.cid);
	memset(out, 0, sizeof(out));
	switch (cur_bad->kind) {
	case BAD_SHORT_PLEN:
	case BAD_HLEN:
	case BAD_HDGST:
	case BAD_RESP_CID:
	case BAD_RESP_SHORT_DATA: {
		struct nvme_cpl cqe = { 0 };

		put_le16(&cqe.cid, cur_bad->kind == BAD_RESP_CID ? (uint16_t)(cid ^ 0x4000) : cid);
		n = nvme_tcp_build_capsule_resp(out, &cqe, e->fk.p.hdgst);
		if (cur_bad->kind == BAD_SHORT_PLEN)
			put_le32(&ch->plen, 16);
		if (cur_bad->kind == BAD_HLEN)
			ch->hlen = 16;
		if (cur_bad->kind == BAD_HDGST)
			out[sizeof(*rsp)] ^= 1;
		break;
	}
	case BAD_TYPE:
		ch->pdu_type = 0x0a;
		ch->hlen = 24;
		put_le32(&ch->plen, 24);
		n = 24;
		break;
	case BAD_ICRESP_AGAIN:
		n = nvme_tcp_build_icresp(out, false, false, 0, 8192);
		break;
	case BAD_C2H_CID:
	case BAD_C2H_RANGE:
	case BAD_C2H_DATAL:
	case BAD_C2H_OFFSET:
	case BAD_SUCCESS_EARLY: {
		uint32_t len = cur_bad->kind == BAD_C2H_RANGE ? 1024 : 256;
		uint32_t off = cur_bad->kind == BAD_C2H_OFFSET ? 256 : 0;
		uint16_t c = cur_bad->kind == BAD_C2H_CID ? (uint16_t)(cid + 1) : cid;
		uint8_t fl = cur_bad->kind == BAD_SUCCESS_EARLY ? NVME_TCP_F_DATA_SUCCESS : 0;

		n = nvme_tcp_build_data(out, NVME_TCP_PDU_C2H_DATA, c, 0, off, len, fl, &e->fk.p);
		if (cur_bad->kind == BAD_C2H_DATAL)
			put_le32(&((struct nvme_tcp_data_hdr *)out)->datal, 200);
		fk_write_full(e->fk.fd, out, n);
		fk_write_full(e->fk.fd, data, len);
		n = 0;
		break;
	}
	case BAD_R2T_FOR_READ:
		n = nvme_tcp_build_r2t(out, cid, 1, 0, 512, e->fk.p.hdgst);
		break;
	case BAD_TERMREQ:
		n = nvme_tcp_build_term_req(out, NVME_TCP_PDU_C2H_TERM_REQ,
					    NVME_TCP_FES_PDU_SEQ_ERR, 0, NULL, 0);
		break;
	case BAD_TRUNCATED:
		n = nvme_tcp_build_capsule_resp(out, &(struct nvme_cpl){ 0 }, e->fk.p.hdgst);
		fk_write_full(e->fk.fd, out, 5);
		shutdown(e->fk.fd, SHUT_WR);
		n = 0;
		break;
	}
	if (n)
		fk_write_full(e->fk.fd, out, n);
	/* What comes back: an H2CTermReq (FES) or just the close. */
	plen = fk_recv_pdu(&e->fk, buf, sizeof(buf));
	if (plen >= (int)sizeof(struct nvme_tcp_term_req) &&
	    ((struct nvme_tcp_common_hdr *)buf)->pdu_type == NVME_TCP_PDU_H2C_TERM_REQ)
		e->term_fes = get_le16(&((struct nvme_tcp_term_req *)buf)->fes);
	else if (plen > 0)
		fk_fail(e, "host sent something other than an H2CTermReq");
}

static void test_malformed_replies(void)
{
	static const struct bad_case cases[] = {
		{ "short PLEN", BAD_SHORT_PLEN, false, -EPROTO, NVME_TCP_FES_INVALID_PDU_HDR },
		{ "bad HLEN", BAD_HLEN, false, -EPROTO, NVME_TCP_FES_INVALID_PDU_HDR },
		{ "unknown PDU type", BAD_TYPE, false, -EPROTO, NVME_TCP_FES_INVALID_PDU_HDR },
		{ "second ICResp", BAD_ICRESP_AGAIN, false, -EPROTO, NVME_TCP_FES_PDU_SEQ_ERR },
		{ "bad header digest", BAD_HDGST, true, -EPROTO, NVME_TCP_FES_HDR_DIGEST_ERR },
		{ "CapsuleResp unknown CID", BAD_RESP_CID, false, -EPROTO,
		  NVME_TCP_FES_INVALID_PDU_HDR },
		{ "CapsuleResp unknown CID, hdgst", BAD_RESP_CID, true, -EPROTO,
		  NVME_TCP_FES_INVALID_PDU_HDR },
		{ "C2HData unknown CID", BAD_C2H_CID, false, -EPROTO, NVME_TCP_FES_INVALID_PDU_HDR },
		{ "C2HData beyond the buffer", BAD_C2H_RANGE, false, -EPROTO,
		  NVME_TCP_FES_DATA_OUT_OF_RANGE },
		{ "C2HData DATAL mismatch", BAD_C2H_DATAL, false, -EPROTO,
		  NVME_TCP_FES_INVALID_PDU_HDR },
		{ "C2HData out of order", BAD_C2H_OFFSET, false, -EPROTO,
		  NVME_TCP_FES_DATA_OUT_OF_RANGE },
		{ "C2HData SUCCESS without LAST", BAD_SUCCESS_EARLY, false, -EPROTO,
		  NVME_TCP_FES_INVALID_PDU_HDR },
		{ "R2T for a read", BAD_R2T_FOR_READ, false, -EPROTO, NVME_TCP_FES_PDU_SEQ_ERR },
		{ "success without data", BAD_RESP_SHORT_DATA, false, -EPROTO,
		  NVME_TCP_FES_PDU_SEQ_ERR },
		{ "C2HTermReq", BAD_TERMREQ, false, -ECONNRESET, -1 },
		{ "truncated header then close", BAD_TRUNCATED, false, -ECONNRESET, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env e;
		struct result r = { 0 }, r2 = { 0 };
		uint8_t buf[512] __attribute__((aligned(8)));
		struct iovec iov = { buf, sizeof(buf) };

		cur_bad = &cases[i];
		CU_ASSERT_EQUAL_FATAL(env_open(&e, cases[i].hdgst, false, bad_script, 5000), 0);
		CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
		CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &iov, 1, sizeof(buf), &r), 0);
		wait_done(&e, &r);
		if (r.cpl.err != cases[i].want_err)
			fprintf(stderr, "\n  case '%s': err %d, want %d (%s)\n", cases[i].name,
				r.cpl.err, cases[i].want_err, nvmeof_qpair_error(e.qp));
		CU_ASSERT(r.done);
		CU_ASSERT_EQUAL(r.cpl.err, cases[i].want_err);
		CU_ASSERT_EQUAL(e.qp->state, QP_FAILED);
		CU_ASSERT_STRING_NOT_EQUAL(nvmeof_qpair_error(e.qp), "");
		/* the failed queue refuses new work and reports why */
		CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &iov, 1, sizeof(buf), &r2), -ENOTCONN);
		CU_ASSERT_EQUAL(nvmeof_qpair_get_fd(e.qp), -1);
		CU_ASSERT(nvmeof_qpair_service(e.qp, POLLIN) < 0);
		pthread_join(e.th, NULL);
		if (e.term_fes != cases[i].want_fes)
			fprintf(stderr, "\n  case '%s': TermReq FES %d, want %d\n", cases[i].name,
				e.term_fes, cases[i].want_fes);
		CU_ASSERT_EQUAL(e.term_fes, cases[i].want_fes);
		CU_ASSERT_STRING_EQUAL(e.fk_err, "");
		qpair_fini(e.qp);
		host_tcp_transport_ops.qpair_free(e.qp);
		close(e.fds[1]);
	}
}

/* A data digest error fails that command only; the queue goes on. */
static void ddgst_script(struct env *e)
{
	uint8_t buf[512] __attribute__((aligned(8))), data[512],
		hdr[NVME_TCP_PSH_MAX] __attribute__((aligned(8))), dg[4] = { 1, 2, 3, 4 };
	struct nvme_cmd sqe;
	size_t n;

	for (int i = 0; i < 2; i++) {
		if (!fk_capsule(e, buf, sizeof(buf), &sqe))
			return;
		memset(data, 0x77, sizeof(data));
		if (i == 0) {
			n = nvme_tcp_build_data(hdr, NVME_TCP_PDU_C2H_DATA, get_le16(&sqe.cid), 0, 0,
						512, NVME_TCP_F_DATA_LAST, &e->fk.p);
			fk_write_full(e->fk.fd, hdr, n);
			fk_write_full(e->fk.fd, data, 512);
			fk_write_full(e->fk.fd, dg, 4);
		} else {
			fk_send_c2h(&e->fk, get_le16(&sqe.cid), 0, data, 512, NVME_TCP_F_DATA_LAST);
		}
		fk_send_resp(&e->fk, get_le16(&sqe.cid), 0, 0, 0);
	}
}

static void test_data_digest_error(void)
{
	struct env e;
	struct result r1 = { 0 }, r2 = { 0 };
	uint8_t buf[512] __attribute__((aligned(8)));
	struct iovec iov = { buf, sizeof(buf) };

	CU_ASSERT_EQUAL_FATAL(env_open(&e, false, true, ddgst_script, 5000), 0);
	CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
	CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &iov, 1, 512, &r1), 0);
	wait_done(&e, &r1);
	CU_ASSERT_EQUAL(r1.cpl.err, -EBADMSG);
	CU_ASSERT_EQUAL(e.qp->state, QP_READY);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &iov, 1, 512, &r2), 0);
	wait_done(&e, &r2);
	CU_ASSERT(nvmeof_cpl_ok(&r2.cpl));
	CU_ASSERT_EQUAL(buf[100], 0x77);
	env_close(&e);
	CU_ASSERT_STRING_EQUAL(e.fk_err, "");
}

/* The controller never answers: the command times out, the connection is dropped and the
 * other outstanding command is aborted. */
static void silent_script(struct env *e)
{
	uint8_t buf[512] __attribute__((aligned(8)));
	struct nvme_cmd sqe;

	fk_capsule(e, buf, sizeof(buf), &sqe);
	fk_capsule(e, buf, sizeof(buf), &sqe);
	while (fk_recv_pdu(&e->fk, buf, sizeof(buf)) > 0)
		;
}

static void test_command_timeout(void)
{
	struct env e;
	struct result r1 = { 0 }, r2 = { 0 };
	uint8_t a[512], b[512];
	struct iovec ia = { a, 512 }, ib = { b, 512 };
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(env_open(&e, false, false, silent_script, 150), 0);
	CU_ASSERT_EQUAL_FATAL(env_connect(&e), 0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &ia, 1, 512, &r1), 0);
	CU_ASSERT_EQUAL(submit(&e, NVME_OPC_READ, &ib, 1, 512, &r2), 0);
	CU_ASSERT_EQUAL(nvmeof_qpair_timeout_ms(e.qp) > 100, true);
	wait_done(&e, &r1);
	wait_done(&e, &r2);
	CU_ASSERT(now_ms() - t0 >= 140);
	CU_ASSERT_EQUAL(r1.cpl.err, -ETIMEDOUT);
	CU_ASSERT_EQUAL(r2.cpl.err, -ECONNABORTED);
	CU_ASSERT_EQUAL(e.qp->state, QP_FAILED);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_qpair_error(e.qp), "timed out"));
	env_close(&e);
}

/* Every test above ran with this sink: the transmit machine never saw an illegal
 * transition (qpair failures are logged too, and are expected). */
static int internal_errors;

static void count_internal(enum nvmeof_log_level lvl, const char *msg, void *arg)
{
	if (strstr(msg, "internal error"))
		internal_errors++;
}

static void test_no_internal_errors(void)
{
	CU_ASSERT_EQUAL(internal_errors, 0);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "ICReq/ICResp digest negotiation", test_handshake_digests },
		{ "bad ICResp rejected", test_handshake_bad_icresp },
		{ "handshake timeout", test_handshake_timeout },
		{ "read: C2HData into iovecs, digests", test_read_c2h_into_iovecs },
		{ "read: bytes one at a time, padding", test_read_dribbled },
		{ "reads completed out of order", test_reads_out_of_order },
		{ "write: in-capsule data", test_write_in_capsule },
		{ "write: R2T and H2CData within MAXH2CDATA", test_write_r2t_h2c },
		{ "malformed replies fail the queue", test_malformed_replies },
		{ "data digest error fails one command", test_data_digest_error },
		{ "command timeout", test_command_timeout },
		{ "request state machine stayed legal", test_no_internal_errors },
		CU_TEST_INFO_NULL,
	};

	nvmeof_set_log_fn(count_internal, NULL, NVMEOF_LOG_DEBUG);
	return ut_run("initiator_tcp", NULL, NULL, tests);
}
