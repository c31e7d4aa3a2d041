/* SPDX-License-Identifier: MIT */
/*
 * The iSCSI transport's full feature phase (iscsi.c) through the public API against the
 * fake target on 127.0.0.1: reads split in Data-In PDUs (with and without status in the
 * last one), writes with immediate data, unsolicited Data-Out and R2T, digests, the CmdSN
 * window, NOP-In pings, Keep Alive, UNIT ATTENTION retries, Logout, and every injected
 * fault failing its queue pair (or its command) with an error, never a crash.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/scsi/host_iscsi.h"
#include "iscsi_fake_target.h"
#include "ut.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427"
#define HOSTID "1b4e28ba-2fa1-11d2-883f-0016d3cca427"

static int do_connect(struct fake_target *ft, unsigned int nq, unsigned int qd, bool dg,
		      unsigned int kato, struct nvmeof_ctrlr **ctrlr)
{
	struct nvmeof_opts o;
	char uri[256];

	nvmeof_opts_init(&o);
	o.hostnqn = HOSTNQN;
	o.hostid = HOSTID;
	o.io_queues = nq;
	o.queue_depth = qd;
	o.hdgst = o.ddgst = dg;
	o.kato_ms = kato;
	o.connect_timeout_ms = 3000;
	o.admin_timeout_ms = 3000;
	o.io_timeout_ms = 5000;
	o.ctrl_loss_tmo = 0; /* these cases check how a fault fails the queue pair */
	snprintf(uri, sizeof(uri), "iscsi://127.0.0.1:%u/%s/0", ft_port(ft), FT_IQN);
	return nvmeof_ctrlr_connect(uri, &o, ctrlr);
}

static void pattern(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

struct io_wait {
	bool done;
	struct nvmeof_cpl cpl;
};

static void io_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct io_wait *w = arg;

	w->cpl = *cpl;
	w->done = true;
}

/* Service @qp until every wait in @w is done (or 5 s pass). */
static void wait_all(struct nvmeof_qpair *qp, struct io_wait *w, int n)
{
	for (int round = 0; round < 5000; round++) {
		struct pollfd pfd = { .fd = nvmeof_qpair_get_fd(qp),
				      .events = nvmeof_qpair_which_events(qp) };
		bool all = true;

		for (int i = 0; i < n; i++)
			all = all && w[i].done;
		if (all)
			return;
		nvmeof_qpair_service(qp, POLLIN | POLLOUT);
		if (pfd.fd >= 0)
			poll(&pfd, 1, 1);
	}
}

/* ---- Reads and writes ----------------------------------------------------------------------- */
/* Write and read back with @qd commands in flight on each queue pair. */
static void rw_round(struct fake_target *ft, struct nvmeof_ctrlr *ctrlr, uint32_t blocks_per_io,
		     unsigned int qd)
{
	struct nvmeof_ns *ns = nvmeof_ctrlr_get_ns(ctrlr, 0);
	unsigned int nq = nvmeof_ctrlr_num_qpairs(ctrlr);
	size_t len = (size_t)blocks_per_io * 512;
	uint8_t *w = malloc(len * qd * nq), *r = malloc(len * qd * nq);
	struct io_wait *ws = calloc(qd * nq, sizeof(*ws));

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	pattern(w, len * qd * nq, blocks_per_io);
	for (unsigned int q = 0; q < nq; q++) {
		struct nvmeof_qpair *qp = nvmeof_ctrlr_get_qpair(ctrlr, q);

		for (unsigned int i = 0; i < qd; i++) {
			unsigned int k = q * qd + i;
			struct iovec iov = { w + k * len, len };

			CU_ASSERT_EQUAL(nvmeof_write(qp, ns, (uint64_t)k * blocks_per_io,
						     blocks_per_io, &iov, 1, 0, io_cb, &ws[k]),
					0);
		}
	}
	for (unsigned int q = 0; q < nq; q++)
		wait_all(nvmeof_ctrlr_get_qpair(ctrlr, q), ws + q * qd, (int)qd);
	for (unsigned int k = 0; k < qd * nq; k++)
		CU_ASSERT_TRUE(ws[k].done && nvmeof_cpl_ok(&ws[k].cpl));
	CU_ASSERT_EQUAL(memcmp(ft_disk(ft), w, len * qd * nq), 0);

	memset(ws, 0, qd * nq * sizeof(*ws));
	memset(r, 0, len * qd * nq);
	for (unsigned int q = 0; q < nq; q++) {
		struct nvmeof_qpair *qp = nvmeof_ctrlr_get_qpair(ctrlr, q);

		for (unsigned int i = 0; i < qd; i++) {
			unsigned int k = q * qd + i;
			/* Two iovecs with an odd split. */
			struct iovec iov[2] = { { r + k * len, 100 },
						{ r + k * len + 100, len - 100 } };

			CU_ASSERT_EQUAL(nvmeof_read(qp, ns, (uint64_t)k * blocks_per_io,
						    blocks_per_io, iov, 2, 0, io_cb, &ws[k]),
					0);
		}
	}
	for (unsigned int q = 0; q < nq; q++)
		wait_all(nvmeof_ctrlr_get_qpair(ctrlr, q), ws + q * qd, (int)qd);
	for (unsigned int k = 0; k < qd * nq; k++)
		CU_ASSERT_TRUE(ws[k].done && nvmeof_cpl_ok(&ws[k].cpl));
	CU_ASSERT_EQUAL(memcmp(r, w, len * qd * nq), 0);
	free(w);
	free(r);
	free(ws);
}

struct rw_case {
	const char *name;
	struct ft_config ft;
	bool digests;
	uint32_t blocks;
	unsigned int qd;
	bool want_r2t, want_unsolicited, want_immediate;
};

static const struct rw_case rw_cases[] = {
	{ "4 KiB, immediate data", { 0 }, false, 8, 16, false, false, true },
	{ "64 KiB: immediate + unsolicited Data-Out",
	  { .max_recv_dsl = 8192, .first_burst = 65536 }, false, 128, 8, false, true, true },
	{ "256 KiB: R2T after the first burst",
	  { .max_recv_dsl = 8192, .first_burst = 65536, .r2t_len = 40960 }, false, 512, 4, true,
	  true, true },
	{ "InitialR2T=Yes", { .initial_r2t = true }, false, 256, 4, true, false, true },
	{ "no immediate data", { .initial_r2t = true, .no_immediate_data = true }, false, 64, 4,
	  true, false, false },
	{ "large segments", { .max_recv_dsl = 262144, .first_burst = 262144, .max_burst = 1 << 20 },
	  false, 1024, 4, true, false, true },
	{ "Data-In in 1 KiB pieces, status separate", { .data_in_seg = 1024 }, false, 32, 8, false,
	  true, true },
	{ "status in the last Data-In", { .data_in_seg = 4096, .phase_collapse = true }, false, 32,
	  8, false, true, true },
	{ "digests", { .allow_digests = true, .first_burst = 16384, .data_in_seg = 3000 }, true,
	  96, 8, true, true, true },
};

static void test_rw(void)
{
	for (size_t i = 0; i < sizeof(rw_cases) / sizeof(rw_cases[0]); i++) {
		const struct rw_case *c = &rw_cases[i];
		struct fake_target *ft = ft_start(&c->ft);
		struct nvmeof_ctrlr *ctrlr;
		const struct ft_stats *st;
		int rc;

		CU_ASSERT_PTR_NOT_NULL_FATAL(ft);
		rc = do_connect(ft, 2, c->qd, c->digests, 0, &ctrlr);
		if (rc)
			fprintf(stderr, "\n  case '%s': connect: %s\n", c->name,
				nvmeof_last_error());
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		rw_round(ft, ctrlr, c->blocks, c->qd);
		nvmeof_ctrlr_disconnect(ctrlr);
		ft_stop(ft);
		st = ft_stats(ft);
		if (st->protocol_errors)
			fprintf(stderr, "\n  case '%s': target saw: %s\n", c->name, st->last_error);
		CU_ASSERT_EQUAL(st->protocol_errors, 0);
		CU_ASSERT_EQUAL(st->cmdsn_errors, 0);
		CU_ASSERT_EQUAL(st->window_violations, 0);
		if ((st->r2ts > 0) != c->want_r2t ||
		    (st->unsolicited_bytes > 0) != c->want_unsolicited ||
		    (st->immediate_bytes > 0) != c->want_immediate)
			fprintf(stderr,
				"\n  case '%s': %u R2Ts, %u unsolicited, %u immediate bytes\n",
				c->name, st->r2ts, st->unsolicited_bytes, st->immediate_bytes);
		CU_ASSERT_EQUAL(st->r2ts > 0, c->want_r2t);
		CU_ASSERT_EQUAL(st->unsolicited_bytes > 0, c->want_unsolicited);
		CU_ASSERT_EQUAL(st->immediate_bytes > 0, c->want_immediate);
		CU_ASSERT_EQUAL(st->logins, 3);
		CU_ASSERT_EQUAL(st->logouts, 3); /* every session logged out */
		ft_free(ft);
	}
}

/* ---- CmdSN window, NOP-In pings, UNIT ATTENTION, Keep Alive --------------------------------- */
static void test_window_and_nops(void)
{
	struct ft_config cfg = { .cmd_window = 2, .nop_ping = true, .ua_first = true };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr;
	const struct ft_stats *st;

	CU_ASSERT_EQUAL_FATAL(do_connect(ft, 1, 32, false, 0, &ctrlr), 0);
	rw_round(ft, ctrlr, 8, 32); /* 32 in flight against a window of 2 */
	nvmeof_ctrlr_disconnect(ctrlr);
	ft_stop(ft);
	st = ft_stats(ft);
	CU_ASSERT_EQUAL(st->window_violations, 0);
	CU_ASSERT_EQUAL(st->cmdsn_errors, 0);
	CU_ASSERT_EQUAL(st->protocol_errors, 0);
	/* One ping per command answered (setup commands included). */
	CU_ASSERT_TRUE(st->nop_pings_answered >= 64);
	ft_free(ft);
}

static void test_keep_alive(void)
{
	struct ft_config cfg = { 0 };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr;

	CU_ASSERT_EQUAL_FATAL(do_connect(ft, 1, 4, false, 200, &ctrlr), 0);
	for (int i = 0; i < 40 && ft_stats(ft)->nop_outs < 2; i++) {
		struct pollfd pfd = { .fd = nvmeof_ctrlr_get_fd(ctrlr),
				      .events = nvmeof_ctrlr_which_events(ctrlr) };
		int tmo = nvmeof_ctrlr_timeout_ms(ctrlr);

		poll(&pfd, 1, tmo < 0 || tmo > 50 ? 50 : tmo);
		CU_ASSERT(nvmeof_ctrlr_service(ctrlr, pfd.revents) >= 0);
	}
	CU_ASSERT_TRUE(ft_stats(ft)->nop_outs >= 2); /* Keep Alive as NOP-Out pings */
	nvmeof_ctrlr_disconnect(ctrlr);
	ft_free(ft);
}

/* ---- The other NVM commands ----------------------------------------------------------------- */
static void test_commands(void)
{
	struct ft_config cfg = { .caw_max = 16 };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint8_t *buf = malloc(64 * 512), zero[8 * 512] = { 0 };
	const struct ft_stats *st = ft_stats(ft);

	CU_ASSERT_EQUAL_FATAL(do_connect(ft, 1, 8, false, 0, &ctrlr), 0);
	qp = nvmeof_ctrlr_get_qpair(ctrlr, 0);
	ns = nvmeof_ctrlr_get_ns(ctrlr, 0);
	pattern(buf, 64 * 512, 3);
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 1000, 40, buf, 0), 0);

	/* Compare: one VERIFY(16) with BYTCHK 01b, never COMPARE AND WRITE (which writes). */
	CU_ASSERT_EQUAL(nvmeof_compare_sync(qp, ns, 1000, 40, buf, 0), 0);
	CU_ASSERT_EQUAL(st->byte_verifies, 1);
	CU_ASSERT_EQUAL(st->caws, 0);
	buf[39 * 512 + 5] ^= 1;
	CU_ASSERT_EQUAL(nvmeof_compare_sync(qp, ns, 1000, 40, buf, NVMEOF_IO_FUA),
			NVMEOF_STATUS(NVMEOF_SCT_MEDIA, NVMEOF_SC_COMPARE_FAILURE));
	CU_ASSERT_EQUAL(st->miscompares, 1);
	CU_ASSERT_EQUAL(st->byte_verifies, 2);
	buf[39 * 512 + 5] ^= 1;
	CU_ASSERT_EQUAL(memcmp(ft_disk(ft) + 1000 * 512, buf, 40 * 512), 0);

	/* Write Zeroes with deallocate: WRITE SAME(16) with UNMAP. */
	CU_ASSERT_EQUAL(nvmeof_write_zeroes_sync(qp, ns, 1004, 8, NVMEOF_IO_DEALLOCATE), 0);
	CU_ASSERT_EQUAL(st->ws_unmap, 1);
	CU_ASSERT_EQUAL(memcmp(ft_disk(ft) + 1004 * 512, zero, 8 * 512), 0);
	CU_ASSERT_EQUAL(memcmp(ft_disk(ft) + 1012 * 512, buf + 12 * 512, 512), 0);
	/* 3000 blocks: WRITE SAME steps of the LU's 1024-block limit. */
	CU_ASSERT_EQUAL(nvmeof_write_zeroes_sync(qp, ns, 4000, 3000, 0), 0);
	CU_ASSERT_EQUAL(st->write_sames, 4);

	/* Deallocate: UNMAP. */
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 2000, 8, buf, 0), 0);
	CU_ASSERT_EQUAL(nvmeof_deallocate_sync(qp, ns, 2000, 8), 0);
	CU_ASSERT_EQUAL(st->unmaps, 1);
	CU_ASSERT_EQUAL(memcmp(ft_disk(ft) + 2000 * 512, zero, 8 * 512), 0);

	CU_ASSERT_EQUAL(nvmeof_flush_sync(qp, ns), 0);
	CU_ASSERT_EQUAL(st->syncs, 1);

	/* Verify through pass-through. */
	{
		struct nvmeof_cmd cmd = { .opc = NVME_OPC_VERIFY, .cdw10 = 10, .cdw12 = 7 };
		struct io_wait w = { 0 };

		CU_ASSERT_EQUAL(nvmeof_io_cmd(qp, ns, &cmd, NULL, 0, io_cb, &w), 0);
		wait_all(qp, &w, 1);
		CU_ASSERT_TRUE(w.done && nvmeof_cpl_ok(&w.cpl));
	}
	/* An opcode SCSI has no form for, answered without touching the target. */
	{
		struct nvmeof_cmd cmd = { .opc = NVME_OPC_WRITE_UNCORRECTABLE };
		unsigned int before = st->commands;
		struct io_wait w = { 0 };

		CU_ASSERT_EQUAL(nvmeof_io_cmd(qp, ns, &cmd, NULL, 0, io_cb, &w), 0);
		wait_all(qp, &w, 1);
		CU_ASSERT_TRUE(w.done);
		CU_ASSERT_EQUAL(w.cpl.status, NVMEOF_STATUS(NVMEOF_SCT_GENERIC, 0x01));
		CU_ASSERT_TRUE(w.cpl.dnr);
		CU_ASSERT_EQUAL(st->commands, before);
	}
	/* Past the end: LBA Out of Range with DNR. */
	{
		struct io_wait w = { 0 };
		struct iovec iov = { buf, 2 * 512 };

		CU_ASSERT_EQUAL(nvmeof_read(qp, ns, 16383, 2, &iov, 1, 0, io_cb, &w), 0);
		wait_all(qp, &w, 1);
		CU_ASSERT_EQUAL(w.cpl.err, 0);
		CU_ASSERT_EQUAL(w.cpl.status,
				NVMEOF_STATUS(NVMEOF_SCT_GENERIC, NVMEOF_SC_LBA_OUT_OF_RANGE));
		CU_ASSERT_TRUE(w.cpl.dnr);
	}
	/* The queue pair is still fine. */
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 1000, 40, buf, 0), 0);
	nvmeof_ctrlr_disconnect(ctrlr);
	ft_stop(ft);
	CU_ASSERT_EQUAL(st->protocol_errors, 0);
	free(buf);
	ft_free(ft);
}

static void test_descriptor_sense(void)
{
	struct ft_config cfg = { .descriptor_sense = true };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr;
	uint8_t buf[1024];

	CU_ASSERT_EQUAL_FATAL(do_connect(ft, 1, 4, false, 0, &ctrlr), 0);
	CU_ASSERT_EQUAL(nvmeof_read_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0),
					 nvmeof_ctrlr_get_ns(ctrlr, 0), 16384, 1, buf, 0),
			NVMEOF_STATUS(NVMEOF_SCT_GENERIC, NVMEOF_SC_LBA_OUT_OF_RANGE));
	nvmeof_ctrlr_disconnect(ctrlr);
	ft_free(ft);
}

/* ---- Faults --------------------------------------------------------------------------------- */
struct fault_case {
	const char *name;
	struct ft_config ft;
	bool digests;
	bool write;		/* the faulty command is a 256 KiB write, else a read */
	int want_err;		/* cpl.err of the faulty command */
	bool queue_fails;
	const char *msg;	/* in nvmeof_qpair_error() */
};

static const struct fault_case fault_cases[] = {
	{ "Data-In offset", { .ffp_fault = FT_F_DATAIN_OFFSET, .data_in_seg = 1024 }, false, false,
	  -EPROTO, true, "Data-In" },
	{ "Data-In beyond EDTL", { .ffp_fault = FT_F_DATAIN_OVERRUN }, false, false, -EPROTO, true,
	  "Data-In" },
	{ "Data-In segment too large", { .ffp_fault = FT_F_BIG_SEGMENT }, false, false, -EPROTO,
	  true, "MaxRecvDataSegmentLength" },
	{ "R2T beyond EDTL", { .ffp_fault = FT_F_R2T_RANGE, .initial_r2t = true, .r2t_len = 4096 },
	  false, true, -EPROTO, true, "R2T" },
	{ "Reject", { .ffp_fault = FT_F_REJECT }, false, false, -EPROTO, true, "rejected" },
	{ "logout requested", { .ffp_fault = FT_F_ASYNC_LOGOUT }, false, false, -ECONNRESET, true,
	  "logout" },
	{ "unknown ITT", { .ffp_fault = FT_F_UNKNOWN_ITT }, false, false, -EPROTO, true,
	  "unknown ITT" },
	{ "header digest", { .ffp_fault = FT_F_BAD_HDGST, .allow_digests = true }, true, false,
	  -EPROTO, true, "header digest" },
	{ "sense length", { .ffp_fault = FT_F_SENSE_LENGTH, .nblocks = 100 }, false, false, -EPROTO,
	  true, "sense length" },
	{ "unexpected opcode", { .ffp_fault = FT_F_BAD_OPCODE }, false, false, -EPROTO, true,
	  "opcode 0x3a" },
	{ "connection closed", { .ffp_fault = FT_F_CLOSE }, false, false, -ECONNRESET, true,
	  "closed" },
	{ "data digest", { .ffp_fault = FT_F_BAD_DDGST, .allow_digests = true }, true, false,
	  -EBADMSG, false, NULL },
};

static void test_faults(void)
{
	for (size_t i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]); i++) {
		const struct fault_case *c = &fault_cases[i];
		struct fake_target *ft = ft_start(&c->ft);
		struct nvmeof_ctrlr *ctrlr;
		struct nvmeof_qpair *qp;
		struct nvmeof_ns *ns;
		uint8_t *buf = calloc(1, 1024 * 512);
		struct io_wait w = { 0 };
		struct iovec iov = { buf, 1024 * 512 };
		uint64_t lba = c->ft.ffp_fault == FT_F_SENSE_LENGTH ? 99 : 0;
		uint32_t n = c->ft.ffp_fault == FT_F_SENSE_LENGTH ? 4 : c->write ? 512 : 64;

		if (c->ft.ffp_fault == FT_F_BIG_SEGMENT)
			n = 1024; /* 512 KiB: Data-In segments above our 256 KiB */
		int rc;

		CU_ASSERT_EQUAL_FATAL(do_connect(ft, 1, 4, c->digests, 0, &ctrlr), 0);
		qp = nvmeof_ctrlr_get_qpair(ctrlr, 0);
		ns = nvmeof_ctrlr_get_ns(ctrlr, 0);
		rc = c->write ? nvmeof_write(qp, ns, lba, n, &iov, 1, 0, io_cb, &w)
			      : nvmeof_read(qp, ns, lba, n, &iov, 1, 0, io_cb, &w);
		CU_ASSERT_EQUAL(rc, 0);
		wait_all(qp, &w, 1);
		if (!w.done || w.cpl.err != c->want_err)
			fprintf(stderr, "\n  case '%s': done %d err %d status 0x%x (queue: '%s')\n",
				c->name, w.done, w.cpl.err, w.cpl.status, nvmeof_qpair_error(qp));
		CU_ASSERT_TRUE(w.done);
		CU_ASSERT_EQUAL(w.cpl.err, c->want_err);
		if (c->queue_fails) {
			CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_qpair_error(qp), c->msg));
			CU_ASSERT_EQUAL(nvmeof_qpair_get_fd(qp), -1);
			CU_ASSERT_EQUAL(nvmeof_read(qp, ns, 0, 1, &iov, 1, 0, io_cb, &w),
					-ENOTCONN);
		} else {
			CU_ASSERT_STRING_EQUAL(nvmeof_qpair_error(qp), "");
			CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 0, 8, buf, 0), 0);
		}
		/* The admin queue is another session: it still answers. */
		CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_CTRL, 0, buf), 0);
		nvmeof_ctrlr_disconnect(ctrlr);
		ft_free(ft);
		free(buf);
	}
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "write and read back", test_rw },
		{ "CmdSN window, NOP-In, unit attention", test_window_and_nops },
		{ "keep alive", test_keep_alive },
		{ "compare, write zeroes, deallocate, flush", test_commands },
		{ "descriptor sense", test_descriptor_sense },
		{ "faults", test_faults },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi", NULL, NULL, tests);
}
