/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport, the data paths, driven through a socketpair (tcp_ut_host.h):
 * in-capsule and R2T writes and C2HData reads with and without digests and HPDA, the
 * C2HData SUCCESS flag, pipelining, partial writes, an exhausted buffer pool, reads sent
 * from mapped namespace memory, and the state counters of a real connection.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
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

/* ---- tests: data paths ------------------------------------------------------------------ */

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
	CU_ASSERT_EQUAL(st1.totals.bytes_rx - st0.totals.bytes_rx, 128 + (76 + 1024 + 4) + pos);
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
		CU_ASSERT_EQUAL(
			memcmp(buf + d->ch.pdo, expect[cid] + got[cid], get_le32(&d->datal)), 0);
		CU_ASSERT_EQUAL(get_le32(buf + d->ch.pdo + get_le32(&d->datal)),
				crc32c(buf + d->ch.pdo, get_le32(&d->datal)));
		got[cid] += get_le32(&d->datal);
	}
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

/* Mapped reads: the data goes out from the namespace memory without a data digest, each
 * request releases it exactly once (counted in c2h_mapped); with a data digest the queue
 * does not take mapped data. Closing with mapped reads still queued releases them too. */
static void test_mapped_reads(void)
{
	enum { N = 16 };
	struct nvmf_tcp_stats a, b;
	int m0, r0, before;
	struct host h;

	ut_map_reads = true;
	m0 = atomic_load(&n_mapped);
	r0 = atomic_load(&n_released);
	nvmf_tcp_get_stats(&a);
	data_round_trip(false, false, 0, false); /* 6 reads, every byte compared */
	data_round_trip(true, false, 3, true);   /* header digest, HPDA, SUCCESS flag */
	nvmf_tcp_get_stats(&b);
	CU_ASSERT_EQUAL(atomic_load(&n_mapped) - m0, 12);
	CU_ASSERT_EQUAL(atomic_load(&n_released) - r0, 12);
	CU_ASSERT_EQUAL(b.totals.c2h_mapped - a.totals.c2h_mapped, 12);

	m0 = atomic_load(&n_mapped);
	data_round_trip(false, true, 0, false);
	CU_ASSERT_EQUAL(atomic_load(&n_mapped), m0); /* data digest: copied */

	/* reads stuck behind a full socket, then the host goes away */
	m0 = atomic_load(&n_mapped);
	r0 = atomic_load(&n_released);
	before = atomic_load(&n_fini);
	g_small_bufs = 4096;
	host_open(&h);
	host_ic(&h, false, false, 0);
	host_connect(&h, 1, 64, false);
	for (int i = 0; i < N; i++) {
		struct nvme_cmd c;

		make_cmd(&c, 0x02, (uint16_t)(400 + i), (uint32_t)(i % 8) * 131072, MAX_IO, false);
		send_capsule(&h, &c, NULL, 0);
	}
	for (int i = 0; i < 2000 && atomic_load(&n_mapped) - m0 < N; i++)
		usleep(1000);
	CU_ASSERT_EQUAL(atomic_load(&n_mapped) - m0, N);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	CU_ASSERT_EQUAL(atomic_load(&n_released) - r0, N);
	ut_map_reads = false;
}

/* A reactor pool of 64 chunks for 100 reads of 128 KiB, 20 in-capsule writes and 5 R2T
 * writes: the queue may hold only its share of the pool (64 / TCP_POOL_QUEUE_SHARE
 * chunks), so reads wait in NEED_BUFFER for the queue's own chunks while in-capsule data
 * goes to the slots' own buffers; everything still completes, in full and intact, and the
 * pool is never drained. */
static void test_buffer_exhaustion(void)
{
	enum { NR = 100, NW = 20, NR2T = 5 };
	static uint8_t buf[MAX_IO + 1024];
	const struct nvme_tcp_data_hdr *d = (const void *)buf;
	uint8_t wdata[8192];
	uint32_t got[NR] = { 0 };
	int responses = 0, wresp = 0;
	struct reactor_buf_stats bst;
	struct nvmf_tcp_stats s0, s1;
	struct host h;
	int before;

	reactors_stop();
	reactors_configure(MAX_IO, 64, REACTOR_PIN_OFF);
	CU_ASSERT_EQUAL_FATAL(reactors_start(1), 0);
	R = reactor_get(0);
	before = atomic_load(&n_fini);
	nvmf_tcp_get_stats(&s0);

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

			make_cmd(&c, 0x01, (uint16_t)(700 + k),
				 7 * MAX_IO + 81920 + (uint32_t)k * 8192, 8192, false);
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
			hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, cid,
						 get_le16(&r2t->ttag), 0, 8192,
						 NVME_TCP_F_DATA_LAST, &h.p);
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
		CU_ASSERT_EQUAL(memcmp(buf + d->ch.pdo,
				       disk + (size_t)(cid % 7) * MAX_IO + got[cid],
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
	CU_ASSERT(bst.allocated <= 64 / TCP_POOL_QUEUE_SHARE);
	CU_ASSERT_EQUAL(bst.exhausted, 0);
	CU_ASSERT_EQUAL(bst.free, bst.allocated);
	nvmf_tcp_get_stats(&s1);
	CU_ASSERT(s1.totals.share_waits > s0.totals.share_waits);

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

/* ---- Abort ---------------------------------------------------------------------------- */

struct abort_call {
	uint16_t cid;
	atomic_int done;
	bool aborted;
};

static void abort_msg(void *arg)
{
	struct abort_call *a = arg;

	a->aborted = last_qp->ops->req_abort(last_qp, a->cid);
	atomic_store(&a->done, 1);
}

/* ops->req_abort on the connection's reactor, as the core's Abort does. */
static bool tcp_abort(uint16_t cid)
{
	struct abort_call a = { .cid = cid };
	struct timespec ts = { 0, 1000 * 1000 };

	CU_ASSERT_EQUAL_FATAL(reactor_send_msg(R, abort_msg, &a), 0);
	for (int i = 0; i < 5000 && !atomic_load(&a.done); i++)
		nanosleep(&ts, NULL);
	CU_ASSERT_FATAL(atomic_load(&a.done));
	return a.aborted;
}

static void send_h2c(struct host *h, uint16_t cid, uint16_t ttag, uint32_t off, const uint8_t *data,
		     uint32_t n, bool last)
{
	uint8_t hdr[256], dg[4];
	size_t hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, cid, ttag, off, n,
					last ? NVME_TCP_F_DATA_LAST : 0, &h->p);

	host_send(h, hdr, hl);
	host_send(h, data, n);
	if (h->p.ddgst) {
		put_le32(dg, crc32c(data, n));
		host_send(h, dg, 4);
	}
}

/* Send a write for R2T and read its R2T: returns the TTAG. */
static uint16_t start_r2t_write(struct host *h, uint16_t cid, uint32_t off, uint32_t len,
				uint32_t *r2tl)
{
	struct nvme_cmd c;
	uint8_t buf[256];
	const struct nvme_tcp_r2t_hdr *r2t = (const void *)buf;

	make_cmd(&c, 0x01, cid, off, len, false);
	send_capsule(h, &c, NULL, 0);
	CU_ASSERT_FATAL(host_recv(h, buf, sizeof(buf)) > 0);
	CU_ASSERT_EQUAL_FATAL(r2t->ch.pdu_type, NVME_TCP_PDU_R2T);
	CU_ASSERT_EQUAL(get_le16(&r2t->cccid), cid);
	*r2tl = get_le32(&r2t->r2tl);
	return get_le16(&r2t->ttag);
}

/*
 * Large H2CData PDUs back to back in one stream, then small in-capsule writes right behind
 * them: each large payload is read in place with only the next header behind it, and the
 * small ones go back to many PDUs per recv. Every byte lands where it belongs, digests
 * (which follow a payload read in place) are checked, and nothing is left over.
 */
static void test_large_back_to_back(void)
{
	enum { NBIG = 6, BIG = 65536, NSMALL = 8, SMALL = 512 };
	static uint8_t stream[NBIG * (128 + BIG + 4) + NSMALL * (128 + SMALL + 4)];
	static uint8_t wbuf[NBIG * BIG + NSMALL * SMALL];
	const uint32_t small_off = NBIG * BIG;
	struct host h;
	int before = atomic_load(&n_fini);

	for (int dg = 0; dg < 2; dg++) {
		uint16_t ttag[NBIG];
		bool seen[NBIG + NSMALL] = { false };
		size_t pos = 0;
		uint32_t r2tl;

		host_open(&h);
		host_ic(&h, dg, dg, 0);
		host_connect(&h, 1, 128, false);
		fill(wbuf, sizeof(wbuf), 40 + (unsigned int)dg);
		for (int i = 0; i < NBIG; i++) {
			ttag[i] = start_r2t_write(&h, (uint16_t)(400 + i), (uint32_t)i * BIG, BIG,
						  &r2tl);
			CU_ASSERT_EQUAL_FATAL(r2tl, BIG);
		}
		for (int i = 0; i < NBIG; i++) {
			const uint8_t *d = wbuf + (size_t)i * BIG;

			pos += nvme_tcp_build_data(stream + pos, NVME_TCP_PDU_H2C_DATA,
						   (uint16_t)(400 + i), ttag[i], 0, BIG,
						   NVME_TCP_F_DATA_LAST, &h.p);
			memcpy(stream + pos, d, BIG);
			pos += BIG;
			if (dg) {
				put_le32(stream + pos, crc32c(d, BIG));
				pos += 4;
			}
		}
		for (int i = 0; i < NSMALL; i++) {
			const uint8_t *d = wbuf + small_off + (size_t)i * SMALL;
			struct nvme_cmd c;

			make_cmd(&c, 0x01, (uint16_t)(400 + NBIG + i),
				 small_off + (uint32_t)i * SMALL, SMALL, true);
			pos += nvme_tcp_build_capsule_cmd(stream + pos, &c, SMALL, &h.p);
			memcpy(stream + pos, d, SMALL);
			pos += SMALL;
			if (dg) {
				put_le32(stream + pos, crc32c(d, SMALL));
				pos += 4;
			}
		}
		host_send(&h, stream, pos);
		for (int i = 0; i < NBIG + NSMALL; i++) {
			uint8_t buf[128];
			const struct nvme_tcp_rsp *r = (const void *)buf;
			uint16_t cid;

			CU_ASSERT_FATAL(host_recv(&h, buf, sizeof(buf)) > 0);
			CU_ASSERT_EQUAL(r->ch.pdu_type, NVME_TCP_PDU_CAPSULE_RESP);
			CU_ASSERT_EQUAL(get_le16(&r->cqe.status), 0);
			cid = get_le16(&r->cqe.cid);
			if (cid >= 400 && cid < 400 + NBIG + NSMALL)
				seen[cid - 400] = true;
		}
		for (int i = 0; i < NBIG + NSMALL; i++)
			CU_ASSERT_TRUE(seen[i]);
		CU_ASSERT_EQUAL(memcmp(disk, wbuf, sizeof(wbuf)), 0);
		close(h.fd);
		CU_ASSERT_EQUAL(wait_fini(before), 0);
		before = atomic_load(&n_fini);
	}
}

/*
 * A write whose R2T went out is aborted before (or while) its H2CData arrives: it
 * completes with Command Abort Requested without executing, the H2CData still sent for
 * it is dropped (the connection stays up, the disk untouched), and its slot and CID work
 * again afterwards. A command executing in the core is not aborted; an unknown CID
 * neither.
 */
static void test_abort_r2t(void)
{
	static uint8_t wbuf[16384], zero[16384], rbuf[16384];
	const uint16_t st_abort = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED);
	struct host h;
	int before = atomic_load(&n_fini), execs;
	uint32_t r2tl;
	uint16_t ttag;
	struct nvme_cmd c;

	for (int dg = 0; dg < 2; dg++) {
		host_open(&h);
		host_ic(&h, dg, dg, 0);
		host_connect(&h, 1, 128, false);
		memset(disk + 65536, 0, sizeof(wbuf));
		fill(wbuf, sizeof(wbuf), 7 + (unsigned int)dg);

		/* aborted before any data: all of it is dropped when it comes */
		execs = atomic_load(&n_exec);
		ttag = start_r2t_write(&h, 300, 65536, 8192, &r2tl);
		CU_ASSERT_EQUAL(r2tl, 8192);
		CU_ASSERT_TRUE(tcp_abort(300));
		CU_ASSERT_EQUAL(expect_rsp(&h, 300), st_abort);
		CU_ASSERT_FALSE(tcp_abort(300)); /* once */
		send_h2c(&h, 300, ttag, 0, wbuf, 4096, false);
		send_h2c(&h, 300, ttag, 4096, wbuf + 4096, 4096, true);

		/* aborted half way through its data */
		ttag = start_r2t_write(&h, 301, 65536, 8192, &r2tl);
		send_h2c(&h, 301, ttag, 0, wbuf, 4096, false);
		CU_ASSERT_TRUE(tcp_abort(301));
		CU_ASSERT_EQUAL(expect_rsp(&h, 301), st_abort);
		send_h2c(&h, 301, ttag, 4096, wbuf + 4096, 4096, true);
		CU_ASSERT_EQUAL(atomic_load(&n_exec), execs); /* neither reached the core */

		/* the connection is in step: a write (same CID again) and a read work */
		write_r2t(&h, 300, 65536, wbuf, sizeof(wbuf), 2);
		CU_ASSERT_EQUAL(expect_rsp(&h, 300), 0);
		CU_ASSERT_EQUAL(memcmp(disk + 65536, wbuf, sizeof(wbuf)), 0);
		CU_ASSERT_EQUAL(read_cmd(&h, 302, 65536, rbuf, sizeof(rbuf), false), 0);
		CU_ASSERT_EQUAL(memcmp(rbuf, wbuf, sizeof(rbuf)), 0);
		CU_ASSERT_NOT_EQUAL(memcmp(zero, wbuf, sizeof(wbuf)), 0);

		/* executing in the core: not aborted; unknown: not aborted */
		make_cmd(&c, OPC_HOLD, 303, 0, 0, false);
		send_capsule(&h, &c, NULL, 0);
		for (int i = 0; i < 5000 && atomic_load(&n_exec) < execs + 3; i++)
			usleep(1000);
		CU_ASSERT_FALSE(tcp_abort(303));
		CU_ASSERT_FALSE(tcp_abort(0x4444));
		release_held();
		CU_ASSERT_EQUAL(expect_rsp(&h, 303), 0);
		close(h.fd);
		CU_ASSERT_EQUAL(wait_fini(before), 0);
		before = atomic_load(&n_fini);
	}
}

/*
 * The R2T deadline (opts.r2t_timeout_ms): data that comes late but within it is taken as
 * usual; a write whose R2T goes unanswered, or an aborted one whose data never comes (its
 * slot parked for that data), ends the queue with a C2HTermReq (PDU Sequence Error) once
 * it has passed, and the queue's resources go.
 */
static void test_r2t_deadline(void)
{
	static uint8_t wbuf[8192];
	const uint16_t st_abort = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED);
	struct nvmf_tcp_stats s0, s1;
	struct timespec a, b;
	struct host h;
	int before = atomic_load(&n_fini);
	uint32_t r2tl;
	uint16_t ttag;
	double waited;

	tgt.opts.r2t_timeout_ms = 1200;
	fill(wbuf, sizeof(wbuf), 33);
	for (int aborted = 0; aborted < 2; aborted++) {
		nvmf_tcp_get_stats(&s0);
		host_open(&h);
		host_ic(&h, false, false, 0);
		host_connect(&h, 1, 128, false);

		/* slow, but in time */
		ttag = start_r2t_write(&h, 310, 65536, 8192, &r2tl);
		usleep(400000);
		send_h2c(&h, 310, ttag, 0, wbuf, 8192, true);
		CU_ASSERT_EQUAL(expect_rsp(&h, 310), 0);

		/* never */
		clock_gettime(CLOCK_MONOTONIC, &a);
		ttag = start_r2t_write(&h, 311, 65536, 8192, &r2tl);
		if (aborted) {
			CU_ASSERT_TRUE(tcp_abort(311));
			CU_ASSERT_EQUAL(expect_rsp(&h, 311), st_abort);
		}
		expect_term(&h, NVME_TCP_FES_PDU_SEQ_ERR, 0, NULL, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		CU_ASSERT(waited >= 1.1 && waited < 3.0);
		close(h.fd);
		CU_ASSERT_EQUAL(wait_fini(before), 0);
		before = atomic_load(&n_fini);
		nvmf_tcp_get_stats(&s1);
		CU_ASSERT_EQUAL(s1.totals.r2t_timeouts - s0.totals.r2t_timeouts, 1);
	}
	tgt.opts.r2t_timeout_ms = 0;
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "write/read, no digests", test_data_plain },
		{ "write/read, digests", test_data_digests },
		{ "write/read, HPDA 3", test_data_hpda },
		{ "C2HData SUCCESS with SQ flow control off", test_success_flag },
		{ "64 pipelined in-capsule writes", test_pipelined },
		{ "partial writes with tiny socket buffers", test_partial_writes },
		{ "buffer pool exhausted", test_buffer_exhaustion },
		{ "mapped reads released once, not with a data digest", test_mapped_reads },
		{ "Abort of writes waiting for H2CData", test_abort_r2t },
		{ "large H2CData back to back, then small writes", test_large_back_to_back },
		{ "R2T deadline", test_r2t_deadline },
		CU_TEST_INFO_NULL,
	};

	return ut_run("nvme-tcp data paths", tcp_ut_suite_init, tcp_ut_suite_fini, tests);
}
