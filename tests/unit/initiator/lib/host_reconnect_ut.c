/* SPDX-License-Identifier: MIT */
/*
 * Reconnect: the controller state machine, requeue of the commands on the wire,
 * reconnect_delay, fast_io_fail_tmo, ctrl_loss_tmo, refused reconnects, a hung target
 * found by Keep Alive, and iSCSI session reinstatement; against fake_ctrlr.c (NVMe/TCP)
 * and iscsi_fake_target.c.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_ctrlr.h"
#include "iscsi_fake_target.h"
#include "lib/queue/host_internal.h"

#define HOSTNQN         "nqn.2014-08.io.nvmeof:test-host"
#define HOSTID          "0a1b2c3d-0000-4000-8000-000000000002"
#define NQN             "nqn.2026-11.io.nvmeof:fake"
#define NIO             16
#define HOST_PATH_ERROR NVMEOF_STATUS(NVMEOF_SCT_PATH, 0x70)

static void opts_for_test(struct nvmeof_opts *o)
{
	nvmeof_opts_init(o);
	o->hostnqn = HOSTNQN;
	o->hostid = HOSTID;
	o->connect_timeout_ms = 2000;
	o->admin_timeout_ms = 2000;
	o->reconnect_delay = 1;
	o->ctrl_loss_tmo = 20;
}

/* States seen through the callback. */
struct seen {
	enum nvmeof_ctrlr_state st[32];
	int n;
	struct fake_ctrlr *unhang; /* clear fc->silent once the reset starts */
};

static void on_state(struct nvmeof_ctrlr *c, enum nvmeof_ctrlr_state from,
		     enum nvmeof_ctrlr_state to, void *arg)
{
	struct seen *s = arg;

	(void)c;
	(void)from;
	if (s->n < 32)
		s->st[s->n++] = to;
	if (s->unhang && to == NVMEOF_CTRLR_RESETTING) {
		pthread_mutex_lock(&s->unhang->lock);
		s->unhang->silent = false;
		pthread_mutex_unlock(&s->unhang->lock);
	}
}

static bool seen_sequence(const struct seen *s)
{
	static const enum nvmeof_ctrlr_state want[] = { NVMEOF_CTRLR_RESETTING,
							NVMEOF_CTRLR_CONNECTING,
							NVMEOF_CTRLR_LIVE };
	size_t k = 0;

	for (int i = 0; i < s->n && k < 3; i++)
		if (s->st[i] == want[k])
			k++;
	return k == 3;
}

struct io {
	bool done;
	struct nvmeof_cpl cpl;
	uint64_t at;
};

static void io_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct io *io = arg;

	io->done = true;
	io->cpl = *cpl;
	io->at = now_ms();
}

/* An event loop over one I/O queue pair and the admin queue until every @io is done or
 * @ms pass. */
static void run_loop(struct nvmeof_ctrlr *c, struct nvmeof_qpair *qp, struct io *io, int n, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		struct pollfd p[2] = {
			{ .fd = nvmeof_qpair_get_fd(qp), .events = nvmeof_qpair_which_events(qp) },
			{ .fd = nvmeof_ctrlr_get_fd(c), .events = nvmeof_ctrlr_which_events(c) },
		};
		int tmo = nvmeof_qpair_timeout_ms(qp), t2 = nvmeof_ctrlr_timeout_ms(c), left = 0;

		if (tmo < 0 || (t2 >= 0 && t2 < tmo))
			tmo = t2;
		if (tmo < 0 || tmo > 50)
			tmo = 50;
		poll(p, 2, tmo);
		CU_ASSERT(nvmeof_qpair_service(qp, p[0].revents) >= 0 ||
			  nvmeof_ctrlr_get_state(c) == NVMEOF_CTRLR_DELETED);
		nvmeof_ctrlr_service(c, p[1].revents);
		for (int i = 0; i < n; i++)
			left += !io[i].done;
		if (!left)
			return;
	}
}

static void fill(uint8_t *b, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static const char *uri_for(const struct fake_ctrlr *fc)
{
	static char uri[128];

	snprintf(uri, sizeof(uri), "nvme+tcp://127.0.0.1:%u/" NQN, fc->port);
	return uri;
}

/* The target drops every connection at the 5th of 16 writes in flight: the controller
 * reconnects after reconnect_delay and every write completes with its data in place. */
static void test_drop_mid_io(void)
{
	static uint8_t out[NIO][4096], in[4096];
	struct fake_ctrlr fc = { 0 };
	struct seen seen = { 0 };
	struct nvmeof_ctrlr_stats st;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	struct io io[NIO] = { 0 };
	uint64_t t0;

	fc.drop_at_write = 5;
	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.queue_depth = 32;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_state(c), NVMEOF_CTRLR_LIVE);
	nvmeof_ctrlr_set_state_fn(c, on_state, &seen);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	t0 = now_ms();
	for (int i = 0; i < NIO; i++) {
		struct iovec v = { out[i], sizeof(out[i]) };

		fill(out[i], sizeof(out[i]), (uint32_t)i + 1);
		CU_ASSERT_EQUAL(nvmeof_write(qp, ns, (uint64_t)i * 8, 8, &v, 1, 0, io_cb, &io[i]),
				0);
	}
	run_loop(c, qp, io, NIO, 6000);
	for (int i = 0; i < NIO; i++) {
		CU_ASSERT_TRUE(io[i].done);
		CU_ASSERT_TRUE(nvmeof_cpl_ok(&io[i].cpl));
	}
	/* held for about reconnect_delay, not failed */
	CU_ASSERT(io[NIO - 1].at - t0 >= 900 && io[NIO - 1].at - t0 < 3000);
	CU_ASSERT(seen_sequence(&seen));
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_state(c), NVMEOF_CTRLR_LIVE);
	nvmeof_ctrlr_get_stats(c, &st);
	CU_ASSERT_EQUAL(st.outages, 1);
	CU_ASSERT_EQUAL(st.reconnects, 1);
	CU_ASSERT(st.requeued >= 1);
	CU_ASSERT(st.last_outage_ms >= 900 && st.last_outage_ms < 3000);
	CU_ASSERT_EQUAL(st.current_outage_ms, 0);
	CU_ASSERT_EQUAL(fc_count(&fc, "connect qid 0"), 2);
	CU_ASSERT_EQUAL(fc_count(&fc, "connect qid 1"), 2);
	for (int i = 0; i < NIO; i++) {
		CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, (uint64_t)i * 8, 8, in, 0), 0);
		CU_ASSERT_EQUAL(memcmp(in, out[i], sizeof(in)), 0);
	}
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

/* Reconnects are refused: after fast_io_fail_tmo held and new I/O fail with Host
 * Pathing Error (DNR clear); once the target takes the Connect again I/O works. */
static void test_fast_io_fail(void)
{
	static uint8_t b[4096];
	struct fake_ctrlr fc = { 0 };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	struct io io[2] = { 0 };
	struct iovec v = { b, sizeof(b) };
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.fast_io_fail_tmo = 1;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	pthread_mutex_lock(&fc.lock);
	fc.refuse_connects = 1000;
	pthread_mutex_unlock(&fc.lock);
	fc_drop_all(&fc);
	t0 = now_ms();
	CU_ASSERT_EQUAL(nvmeof_read(qp, ns, 0, 8, &v, 1, 0, io_cb, &io[0]), 0);
	run_loop(c, qp, io, 1, 4000);
	CU_ASSERT_TRUE(io[0].done);
	CU_ASSERT_EQUAL(io[0].cpl.err, 0);
	CU_ASSERT_EQUAL(io[0].cpl.status, HOST_PATH_ERROR);
	CU_ASSERT_FALSE(io[0].cpl.dnr);
	CU_ASSERT(io[0].at - t0 >= 900 && io[0].at - t0 < 2500);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_state(c), NVMEOF_CTRLR_CONNECTING);
	/* new I/O fails at once now */
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 0, 8, b, 0), HOST_PATH_ERROR);
	CU_ASSERT(fc_count(&fc, "connect refused") >= 1);
	/* the target is back */
	pthread_mutex_lock(&fc.lock);
	fc.refuse_connects = 0;
	pthread_mutex_unlock(&fc.lock);
	run_loop(c, qp, io, 0, 0);
	t0 = now_ms();
	while (nvmeof_ctrlr_get_state(c) != NVMEOF_CTRLR_LIVE && now_ms() - t0 < 3000)
		run_loop(c, qp, io, 2, 50);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_state(c), NVMEOF_CTRLR_LIVE);
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 0, 8, b, 0), 0);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

/* ctrl_loss_tmo: the controller gives up, everything fails, the state is final. */
static void test_ctrl_loss(void)
{
	static uint8_t b[4096];
	struct fake_ctrlr fc = { 0 };
	struct seen seen = { 0 };
	struct nvmeof_ctrlr_stats st;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	struct io io = { 0 };
	struct iovec v = { b, sizeof(b) };
	uint64_t t0;
	int rc;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.ctrl_loss_tmo = 2;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	nvmeof_ctrlr_set_state_fn(c, on_state, &seen);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	pthread_mutex_lock(&fc.lock);
	fc.refuse_connects = 1000;
	pthread_mutex_unlock(&fc.lock);
	fc_drop_all(&fc);
	t0 = now_ms();
	CU_ASSERT_EQUAL(nvmeof_write(qp, ns, 0, 8, &v, 1, 0, io_cb, &io), 0);
	rc = nvmeof_read_sync(qp, ns, 8, 8, b, 0); /* blocking call waits it out */
	CU_ASSERT_EQUAL(rc, HOST_PATH_ERROR);
	CU_ASSERT(now_ms() - t0 >= 1900 && now_ms() - t0 < 4000);
	run_loop(c, qp, &io, 1, 500);
	CU_ASSERT_TRUE(io.done);
	CU_ASSERT_EQUAL(io.cpl.status, HOST_PATH_ERROR);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_state(c), NVMEOF_CTRLR_DELETED);
	CU_ASSERT(seen.n >= 3 && seen.st[seen.n - 1] == NVMEOF_CTRLR_DELETED);
	CU_ASSERT_EQUAL(nvmeof_read(qp, ns, 0, 8, &v, 1, 0, io_cb, &io), -ENOTCONN);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_qpair_error(qp), "ctrl_loss_tmo"));
	nvmeof_ctrlr_get_stats(c, &st);
	CU_ASSERT_EQUAL(st.reconnects, 0);
	CU_ASSERT(st.reconnect_attempts >= 1);
	CU_ASSERT(st.failed_held >= 2);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

/* Two refused Connects: the third attempt, reconnect_delay later each, succeeds. */
static void test_refused_then_retried(void)
{
	static uint8_t b[4096];
	struct fake_ctrlr fc = { 0 };
	struct nvmeof_ctrlr_stats st;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	fill(b, sizeof(b), 77);
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 40, 8, b, 0), 0);
	pthread_mutex_lock(&fc.lock);
	fc.refuse_connects = 2;
	pthread_mutex_unlock(&fc.lock);
	fc_drop_all(&fc);
	t0 = now_ms();
	memset(b, 0, sizeof(b));
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 40, 8, b, 0), 0); /* held, then done */
	CU_ASSERT(now_ms() - t0 >= 2900 && now_ms() - t0 < 5000);
	{
		uint8_t want[4096];

		fill(want, sizeof(want), 77);
		CU_ASSERT_EQUAL(memcmp(b, want, sizeof(b)), 0);
	}
	CU_ASSERT_EQUAL(fc_count(&fc, "connect refused"), 2);
	nvmeof_ctrlr_get_stats(c, &st);
	CU_ASSERT_EQUAL(st.reconnect_attempts, 3);
	CU_ASSERT_EQUAL(st.reconnects, 1);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

/* The target now refuses this host (removed from allowed_hosts): the first reconnect
 * attempt ends the controller and the held read fails; no retries until ctrl_loss_tmo. */
static void test_refused_host_gives_up(void)
{
	static uint8_t b[4096];
	struct fake_ctrlr fc = { 0 };
	struct nvmeof_ctrlr_stats st;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.ctrl_loss_tmo = 600;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	pthread_mutex_lock(&fc.lock);
	fc.refuse_host = true;
	pthread_mutex_unlock(&fc.lock);
	fc_drop_all(&fc);
	t0 = now_ms();
	CU_ASSERT_NOT_EQUAL(nvmeof_read_sync(qp, ns, 40, 8, b, 0), 0);
	CU_ASSERT(now_ms() - t0 < 5000); /* one reconnect_delay, not ctrl_loss_tmo */
	CU_ASSERT_EQUAL(fc_count(&fc, "connect refused: host"), 1);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_state(c), NVMEOF_CTRLR_DELETED);
	nvmeof_ctrlr_get_stats(c, &st);
	CU_ASSERT_EQUAL(st.reconnect_attempts, 1);
	CU_ASSERT_EQUAL(st.reconnects, 0);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

/* A target that stops answering but keeps the socket open: Keep Alive times out, the
 * controller resets, and the read in flight is sent again and completes. */
static void test_hung_target(void)
{
	static uint8_t b[4096];
	struct fake_ctrlr fc = { 0 };
	struct seen seen = { .unhang = &fc };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.kato_ms = 400;
	o.admin_timeout_ms = 500;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	nvmeof_ctrlr_set_state_fn(c, on_state, &seen);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	pthread_mutex_lock(&fc.lock);
	fc.silent = true;
	pthread_mutex_unlock(&fc.lock);
	t0 = now_ms();
	{
		int rc = nvmeof_read_sync(qp, ns, 0, 8, b, 0);

		if (rc)
			fprintf(stderr, "\n  read: %d (%s)\n", rc, nvmeof_qpair_error(qp));
		CU_ASSERT_EQUAL(rc, 0);
	}
	CU_ASSERT(now_ms() - t0 < 4000);
	CU_ASSERT(seen_sequence(&seen));
	CU_ASSERT(fc_count(&fc, "silent") >= 1);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

/* iSCSI: every I/O session is closed by the target after 3 commands; the session is
 * reinstated (same ISID, TSIH 0) until every write is through, and the data is right. */
static void test_iscsi_reinstatement(void)
{
	static uint8_t out[NIO][4096], in[4096];
	struct ft_config cfg = { .ffp_fault = FT_F_CLOSE, .fault_after = 3 };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr_stats st;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	struct io io[NIO] = { 0 };
	unsigned int logins;
	char uri[128];

	CU_ASSERT_PTR_NOT_NULL_FATAL(ft);
	opts_for_test(&o);
	o.reconnect_delay = 0;
	o.queue_depth = NIO;
	snprintf(uri, sizeof(uri), "iscsi://127.0.0.1:%u/%s/0", ft_port(ft), FT_IQN);
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri, &o, &c), 0);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 0);
	logins = ft_stats(ft)->logins;
	for (int i = 0; i < NIO; i++) {
		struct iovec v = { out[i], sizeof(out[i]) };

		fill(out[i], sizeof(out[i]), (uint32_t)i + 100);
		CU_ASSERT_EQUAL(nvmeof_write(qp, ns, (uint64_t)i * 8, 8, &v, 1, 0, io_cb, &io[i]),
				0);
	}
	run_loop(c, qp, io, NIO, 10000);
	for (int i = 0; i < NIO; i++) {
		CU_ASSERT_TRUE(io[i].done);
		CU_ASSERT_TRUE(nvmeof_cpl_ok(&io[i].cpl));
	}
	nvmeof_ctrlr_get_stats(c, &st);
	CU_ASSERT(st.reconnects >= 3);
	CU_ASSERT(st.requeued >= 1);
	CU_ASSERT(ft_stats(ft)->logins - logins >= 2 * 3); /* admin and I/O session each */
	CU_ASSERT_EQUAL(ft_stats(ft)->protocol_errors, 0);
	for (int i = 0; i < NIO; i++) {
		memcpy(in, ft_disk(ft) + (size_t)i * 4096, sizeof(in));
		CU_ASSERT_EQUAL(memcmp(in, out[i], sizeof(in)), 0);
	}
	nvmeof_ctrlr_disconnect(c);
	ft_stop(ft);
	ft_free(ft);
}

static void test_opts(void)
{
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;

	nvmeof_opts_init(&o);
	CU_ASSERT_EQUAL(o.reconnect_delay, 2);
	CU_ASSERT_EQUAL(o.ctrl_loss_tmo, 600);
	CU_ASSERT_EQUAL(o.fast_io_fail_tmo, -1);
	o.reconnect_delay = -1;
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1/nqn.a", &o, &c), -EINVAL);
	nvmeof_opts_init(&o);
	o.ctrl_loss_tmo = -2;
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1/nqn.a", &o, &c), -EINVAL);
	CU_ASSERT_STRING_EQUAL(nvmeof_ctrlr_state_name(NVMEOF_CTRLR_CONNECTING), "connecting");
}

static void log_fn(enum nvmeof_log_level l, const char *msg, void *arg)
{
	(void)l;
	(void)arg;
	fprintf(stderr, "    lib: %s\n", msg);
}

int main(void)
{
	CU_pSuite s;

	if (getenv("RECONNECT_UT_LOG"))
		nvmeof_set_log_fn(log_fn, NULL, NVMEOF_LOG_DEBUG);
	unsigned int failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("reconnect", NULL, NULL);
	CU_add_test(s, "options", test_opts);
	CU_add_test(s, "drop mid-I/O, requeue, data intact", test_drop_mid_io);
	CU_add_test(s, "fast_io_fail_tmo", test_fast_io_fail);
	CU_add_test(s, "ctrl_loss_tmo", test_ctrl_loss);
	CU_add_test(s, "refused reconnects are retried", test_refused_then_retried);
	CU_add_test(s, "a refused host is not retried", test_refused_host_gives_up);
	CU_add_test(s, "hung target found by Keep Alive", test_hung_target);
	CU_add_test(s, "iSCSI session reinstatement", test_iscsi_reinstatement);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
