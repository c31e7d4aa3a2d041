/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport, the connection and PDU level, driven through a socketpair
 * (tcp_ut_host.h): ICReq/ICResp, malformed PDUs and the C2HTermReq they cause, SQ
 * overflow, termination from either side, per-command errors that keep the connection,
 * and the iovec helpers and names.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/nvme_tcp_pdu.h"
#include "tcp/tcp_internal.h"
#include "tcp_ut_host.h"
#include "ut.h"

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
	{ "in-capsule data over the limit", IC, b_icdata_too_big, NVME_TCP_FES_DATA_LIMIT_EXCEEDED,
	  0 },
	{ "PDO not aligned", IC, b_pdo_misaligned, NVME_TCP_FES_INVALID_PDU_HDR, 3 },
	{ "PLEN shorter than the header", IC, b_plen_short, NVME_TCP_FES_INVALID_PDU_HDR, 4 },
	{ "H2CData unknown TTAG", CONNECTED, b_h2c_unknown_ttag, NVME_TCP_FES_INVALID_PDU_HDR, 10 },
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

/* Run tcp_qpair_trim() on the reactor and wait for it. */
static sem_t trim_done;

static void trim_msg(void *arg)
{
	tcp_qpair_trim(arg);
	sem_post(&trim_done);
}

static void wait_exec(int n)
{
	for (int i = 0; i < 3000 && atomic_load(&n_exec) < n; i++)
		usleep(1000);
}

/* Request slots are set up as commands need them, and an idle queue gives them back. */
static void test_slots_grow_and_trim(void)
{
	struct host h;
	struct nvme_cmd c;
	struct tcp_qpair *tq;
	int before = atomic_load(&n_fini), exec;

	sem_init(&trim_done, 0, 0);
	host_open(&h);
	host_ic(&h, false, false, 0);
	host_connect(&h, 1, 32, false);
	tq = tcp_qpair_of(last_qp);
	CU_ASSERT(tq->nreqs_ready <= 1); /* only the Connect has run */
	CU_ASSERT(tq->nreqs_limit >= 32);
	for (int round = 0; round < 2; round++) {
		exec = atomic_load(&n_exec);
		for (int i = 0; i < 9; i++) {
			make_cmd(&c, OPC_HOLD, (uint16_t)(100 + i), 0, 0, false);
			send_capsule(&h, &c, NULL, 0);
		}
		wait_exec(exec + 9);
		CU_ASSERT_EQUAL(atomic_load(&n_exec), exec + 9);
		CU_ASSERT_EQUAL(tq->nreqs_ready, 9); /* nine in flight: nine slots */
		release_held();
		for (int i = 0; i < 9; i++)
			CU_ASSERT_EQUAL(expect_rsp(&h, (uint16_t)(100 + i)), 0);
		reactor_send_msg(R, trim_msg, tq);
		sem_wait(&trim_done);
		CU_ASSERT_EQUAL(tq->nreqs_ready, TCP_TRIM_KEEP);
	}
	/* still a working queue after the trims */
	make_cmd(&c, NVME_OPC_FLUSH, 7, 0, 0, false);
	send_capsule(&h, &c, NULL, 0);
	CU_ASSERT_EQUAL(expect_rsp(&h, 7), 0);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	sem_destroy(&trim_done);
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
	CU_ASSERT_EQUAL(wait_fini(before), 0);         /* ...but not forever */
	expect_term(&h, NVME_TCP_FES_UNSUPPORTED_PARAM, 8, buf, 8);
	close(h.fd);
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
			NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_SGL_OFFSET) |
				NVME_STATUS_DNR);

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
		size_t hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 9, ttag,
						(uint32_t)i * 8192, 8192,
						i ? NVME_TCP_F_DATA_LAST : 0, &h.p);

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

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "iovec helpers and names", test_iov_helpers },
		{ "discovery entry and registry", test_disc_entry },
		{ "ICReq/ICResp", test_icreq_icresp },
		{ "malformed PDUs -> C2HTermReq", test_malformed },
		{ "more commands than SQSIZE", test_sq_overflow },
		{ "request slots grow and trim", test_slots_grow_and_trim },
		{ "H2CTermReq from the host", test_host_term_req },
		{ "C2HTermReq linger", test_term_linger },
		{ "per-command errors", test_command_errors },
		{ "H2CData data digest error", test_h2c_ddgst_error },
		CU_TEST_INFO_NULL,
	};

	return ut_run("nvme-tcp transport", tcp_ut_suite_init, tcp_ut_suite_fini, tests);
}
