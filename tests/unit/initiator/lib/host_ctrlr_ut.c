/* SPDX-License-Identifier: MIT */
/*
 * initiator/lib/host_ctrlr.c and host_fabrics.c: URI handling at connect, the Fabrics bring-up sequence
 * (Connect, Property Get/Set enable, Identify, Number of Queues, namespace scan, I/O queue
 * Connects), keep-alive, queue limits, errors a controller can cause, and the clean
 * shutdown, against the scripted controller in fake_ctrlr.c.
 */
#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_ctrlr.h"
#include "lib/queue/host_internal.h"
#include "ut.h"

#define HOSTNQN "nqn.2014-08.io.nvmeof:test-host"
#define HOSTID "0a1b2c3d-0000-4000-8000-000000000001"

static void opts_for_test(struct nvmeof_opts *o)
{
	nvmeof_opts_init(o);
	o->hostnqn = HOSTNQN;
	o->hostid = HOSTID;
	o->connect_timeout_ms = 3000;
	o->admin_timeout_ms = 3000;
}

static void test_bad_uris(void)
{
	static const struct {
		const char *uri;
		int rc;
		const char *msg;
	} cases[] = {
		{ "", -EINVAL, "bad URI" },
		{ "tcp://127.0.0.1:4420", -EINVAL, "bad URI" },
		{ "nvme+tcp://", -EINVAL, "missing host" },
		{ "nvme+tcp://127.0.0.1:99999/nqn.a", -EINVAL, "invalid port" },
		{ "nvme+tcp://127.0.0.1/notannqn", -EINVAL, "does not start with 'nqn.'" },
		{ "nvme+tcp://127.0.0.1/nqn.a/0", -EINVAL, "invalid NSID" },
		{ "nvme+tcp://127.0.0.1/nqn.a%zz", -EINVAL, "percent" },
	};
	struct nvmeof_opts o;

	opts_for_test(&o);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvmeof_ctrlr *c = (void *)1;
		int rc = nvmeof_ctrlr_connect(cases[i].uri, &o, &c);

		if (rc != cases[i].rc || !strstr(nvmeof_last_error(), cases[i].msg))
			fprintf(stderr, "\n  '%s': rc %d, '%s'\n", cases[i].uri, rc,
				nvmeof_last_error());
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		CU_ASSERT_PTR_NULL(c);
		CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), cases[i].msg));
	}
}

static void test_bad_opts(void)
{
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;

	opts_for_test(&o);
	o.queue_depth = 0;
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1/nqn.a", &o, &c), -EINVAL);
	opts_for_test(&o);
	o.hostid = "not-a-uuid";
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1/nqn.a", &o, &c), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "not a UUID"));
	opts_for_test(&o);
	o.hostnqn = "host";
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1/nqn.a", &o, &c), -EINVAL);
}

static void test_connection_refused(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	char uri[128], want[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* a port that was free a moment ago and has nobody listening */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (void *)&sa, sizeof(sa));
	getsockname(fd, (void *)&sa, &len);
	close(fd);
	snprintf(uri, sizeof(uri), "nvme+tcp://127.0.0.1:%u/nqn.a", ntohs(sa.sin_port));
	snprintf(want, sizeof(want), "127.0.0.1:%u", ntohs(sa.sin_port));
	opts_for_test(&o);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect(uri, &o, &c), -ECONNREFUSED);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), want));
}

static char *uri_for(struct fake_ctrlr *fc, const char *path)
{
	static char uri[256];

	snprintf(uri, sizeof(uri), "nvme+tcp://127.0.0.1:%u%s", fc->port, path);
	return uri;
}

/* Events must appear in this order (each found after the previous one). */
static bool in_order(struct fake_ctrlr *fc, const char *const *seq, int n)
{
	int at = 0;

	for (int i = 0; i < n; i++) {
		int k = fc_find(fc, seq[i], at);

		if (k < 0) {
			fprintf(stderr, "\n  missing or out of order: '%s'\n", seq[i]);
			fc_dump(fc);
			return false;
		}
		at = k + 1;
	}
	return true;
}

static void test_bringup_io_shutdown(void)
{
	struct fake_ctrlr fc = { .mdts = 1 };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_ctrlr_info ci;
	struct nvmeof_ns_info ni;
	struct nvmeof_ns *ns;
	struct nvmeof_qpair *qp;
	static uint8_t wbuf[20480], rbuf[20480];
	char want[160];
	int rc, writes;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.io_queues = 2;
	o.queue_depth = 16;
	o.kato_ms = 3000;
	rc = nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof:fake"), &o, &c);
	CU_ASSERT_EQUAL_FATAL(rc, 0);

	snprintf(want, sizeof(want),
		 "connect qid 0 sqsize 31 kato 3000 cntlid 0xffff host %s hostid 0a1b2c3d sub "
		 "nqn.2026-11.io.nvmeof:fake",
		 HOSTNQN);
	{
		const char *const seq[] = {
			want,
			"prop get 0x0 size 8",
			"prop set 0x14 = 0x460000",
			"prop set 0x14 = 0x460001",
			"prop get 0x1c",
			"prop get 0x8 size 4",
			"identify cns 1",
			"set features 0x7",
			"identify cns 2 nsid 0",
			"identify cns 0 nsid 1",
			"identify cns 3 nsid 1",
			"identify cns 0 nsid 3",
			"connect qid 1 sqsize 16 kato 0 cntlid 0x1",
			"connect qid 2 sqsize 16 kato 0 cntlid 0x1",
		};
		CU_ASSERT(in_order(&fc, seq, sizeof(seq) / sizeof(seq[0])));
	}

	nvmeof_ctrlr_get_info(c, &ci);
	CU_ASSERT_EQUAL(ci.cntlid, 1);
	CU_ASSERT_EQUAL(ci.mdts_bytes, 8192);
	CU_ASSERT_EQUAL(ci.ver, NVME_VS(1, 3, 0));
	CU_ASSERT_STRING_EQUAL(ci.sn, "FAKE0001");
	CU_ASSERT_STRING_EQUAL(ci.mn, "fake controller");
	CU_ASSERT_STRING_EQUAL(ci.subnqn, "nqn.2026-11.io.nvmeof:fake");
	CU_ASSERT_STRING_EQUAL(ci.hostnqn, HOSTNQN);
	CU_ASSERT_STRING_EQUAL(ci.hostid, HOSTID);
	CU_ASSERT_EQUAL(ci.io_queues, 2);
	CU_ASSERT_EQUAL(ci.kato_ms, 3000);
	CU_ASSERT_EQUAL(ci.ioccsz_bytes, 8256);
	CU_ASSERT_EQUAL(ci.cntrltype, 1);
	CU_ASSERT(ci.vwc);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_num_qpairs(c), 2);
	CU_ASSERT_EQUAL(nvmeof_qpair_depth(nvmeof_ctrlr_get_qpair(c, 1)), 16);
	CU_ASSERT_PTR_NULL(nvmeof_ctrlr_get_qpair(c, 2));

	/* namespaces: 1 (512 B, UUID from the descriptor list) and 3 (4 KiB, NGUID) */
	ns = nvmeof_ctrlr_get_ns(c, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL(nvmeof_ns_get_id(ns), 1);
	CU_ASSERT_EQUAL(nvmeof_ns_get_block_size(ns), 512);
	CU_ASSERT_EQUAL(nvmeof_ns_get_num_blocks(ns), FC_NS_BLOCKS1);
	nvmeof_ns_get_info(ns, &ni);
	CU_ASSERT(ni.has_uuid && ni.uuid[0] == 0x11 && !ni.has_nguid);
	ns = nvmeof_ctrlr_next_ns(c, ns);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL(nvmeof_ns_get_id(ns), 3);
	CU_ASSERT_EQUAL(nvmeof_ns_get_block_size(ns), 4096);
	nvmeof_ns_get_info(ns, &ni);
	CU_ASSERT(ni.has_nguid && ni.nguid[15] == 0x33);
	CU_ASSERT_PTR_NULL(nvmeof_ctrlr_next_ns(c, ns));
	CU_ASSERT_PTR_NULL(nvmeof_ctrlr_get_ns(c, 2));
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "namespace 2 is not active"));

	/* 20 KiB against MDTS 8 KiB: three commands each way, data intact */
	ns = nvmeof_ctrlr_get_ns(c, 1);
	qp = nvmeof_ctrlr_get_qpair(c, 1);
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (uint8_t)(i * 31 + 7);
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 100, 40, wbuf, 0), 0);
	writes = fc.writes;
	CU_ASSERT_EQUAL(writes, 3);
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 100, 40, rbuf, 0), 0);
	CU_ASSERT_EQUAL(fc.reads, 3);
	CU_ASSERT(memcmp(wbuf, rbuf, sizeof(wbuf)) == 0);
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, FC_NS_BLOCKS1 - 1, 2, rbuf, 0),
			NVMEOF_STATUS(0, NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(nvmeof_flush_sync(qp, ns), 0);
	CU_ASSERT(fc_find(&fc, "flush nsid 1", 0) >= 0);

	/* Raw identify through the public call */
	{
		uint8_t id[4096];

		CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(c, 1, 0, id), 0);
		CU_ASSERT(memcmp(((struct nvme_id_ctrl *)id)->sn, "FAKE0001", 8) == 0);
	}

	nvmeof_ctrlr_disconnect(c);
	{
		const char *const seq[] = { "disconnect qid 1", "disconnect qid 2",
					    "prop get 0x14", "prop set 0x14 = 0x464001",
					    "prop get 0x1c" };
		CU_ASSERT(in_order(&fc, seq, sizeof(seq) / sizeof(seq[0])));
	}
	fc_stop(&fc);
}

static void test_uri_nsid_and_rejections(void)
{
	struct fake_ctrlr fc = { 0 };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	CU_ASSERT_EQUAL_FATAL(
		nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof:fake/3"), &o, &c), 0);
	CU_ASSERT_EQUAL(nvmeof_ns_get_id(nvmeof_ctrlr_get_ns(c, 0)), 3);
	nvmeof_ctrlr_disconnect(c);

	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof:fake/2"), &o, &c),
			-ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "namespace 2 is not active"));

	/* percent-decoded NQN that the controller does not know: Connect Invalid Parameters
	 * pointing at the subsystem NQN in the connect data */
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof%3Aother"), &o,
					     &c),
			-ECONNREFUSED);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "invalid subsystem NQN"));
	CU_ASSERT(fc_find(&fc, "connect qid 0", 0) >= 0);
	CU_ASSERT(fc_find(&fc, "connect qid 0 sqsize 31 kato 30000 cntlid 0xffff host "
			       HOSTNQN " hostid 0a1b2c3d sub nqn.2026-11.io.nvmeof:other",
			  0) >= 0);
	fc_stop(&fc);
}

static void test_discovery_controller(void)
{
	struct fake_ctrlr fc = { .subnqn = NVME_DISCOVERY_NQN, .disc_records = 2 };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_ctrlr_info ci;
	struct nvmeof_qpair *qp;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.io_queues = 4; /* ignored: a discovery controller has no I/O queues */
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc, ""), &o, &c), 0);
	nvmeof_ctrlr_get_info(c, &ci);
	CU_ASSERT(ci.discovery);
	CU_ASSERT_EQUAL(ci.cntrltype, 2);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_num_qpairs(c), 0);
	CU_ASSERT_EQUAL(fc_count(&fc, "set features"), 0);
	CU_ASSERT_EQUAL(fc_count(&fc, "identify cns 2"), 0);
	CU_ASSERT_EQUAL(nvmeof_qpair_alloc(c, 8, &qp), -EINVAL);
	CU_ASSERT(fc_find(&fc, "connect qid 0 sqsize 31 kato 30000 cntlid 0xffff host " HOSTNQN
			       " hostid 0a1b2c3d sub " NVME_DISCOVERY_NQN,
			  0) >= 0);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

static void test_keep_alive(void)
{
	struct fake_ctrlr fc = { 0 };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	uint64_t end;
	int tmo;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.kato_ms = 200;
	o.io_queues = 1;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof:fake"), &o,
						   &c),
			      0);
	tmo = nvmeof_ctrlr_timeout_ms(c);
	CU_ASSERT(tmo >= 0 && tmo <= 100);
	CU_ASSERT(nvmeof_ctrlr_get_fd(c) >= 0);
	/* an event loop that only watches the admin queue */
	end = now_ms() + 450;
	while (now_ms() < end) {
		struct pollfd pfd = { .fd = nvmeof_ctrlr_get_fd(c),
				      .events = nvmeof_ctrlr_which_events(c) };

		poll(&pfd, 1, nvmeof_ctrlr_timeout_ms(c));
		CU_ASSERT(nvmeof_ctrlr_service(c, pfd.revents) >= 0);
	}
	CU_ASSERT(fc.keep_alives >= 3 && fc.keep_alives <= 6);
	/* blocking I/O on a queue pair keeps the admin queue alive too */
	{
		struct nvmeof_qpair *qp = nvmeof_ctrlr_get_qpair(c, 0);
		struct nvmeof_ns *ns = nvmeof_ctrlr_get_ns(c, 0);
		static uint8_t b[512];
		int before = fc.keep_alives;

		end = now_ms() + 350;
		while (now_ms() < end)
			CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 0, 1, b, 0), 0);
		usleep(20000);
		nvmeof_ctrlr_service(c, POLLIN);
		CU_ASSERT(fc.keep_alives - before >= 2);
	}
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

static void test_queue_limits(void)
{
	struct fake_ctrlr fc = { .mqes = 7, .max_queues = 3, .ioccsz = 4, .no_disconnect = true };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *q2, *q3, *q4;
	static uint8_t b[4096];

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.io_queues = 1;
	o.queue_depth = 32;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof:fake"), &o,
						   &c),
			      0);
	/* MQES 7: 8 entries, 7 commands in flight, Connect SQSIZE 7 */
	CU_ASSERT_EQUAL(nvmeof_qpair_depth(nvmeof_ctrlr_get_qpair(c, 0)), 7);
	CU_ASSERT(fc_find(&fc, "connect qid 1 sqsize 7 ", 0) >= 0);
	/* IOCCSZ 4: no in-capsule data on I/O queues, the Connect data came by R2T */
	CU_ASSERT_EQUAL(nvmeof_qpair_alloc(c, 4, &q2), 0);
	CU_ASSERT_EQUAL(nvmeof_qpair_depth(q2), 4);
	CU_ASSERT(fc_find(&fc, "connect qid 2 sqsize 4 ", 0) >= 0);
	CU_ASSERT_EQUAL(nvmeof_qpair_alloc(c, 0, &q3), 0);
	CU_ASSERT_EQUAL(nvmeof_qpair_alloc(c, 0, &q4), -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "allows 3 I/O queues"));
	CU_ASSERT_EQUAL(nvmeof_write_sync(q2, nvmeof_ctrlr_get_ns(c, 3), 0, 1, b, 0), 0);
	/* a freed queue ID is reused */
	nvmeof_qpair_free(q2);
	CU_ASSERT_EQUAL(nvmeof_qpair_alloc(c, 2, &q4), 0);
	CU_ASSERT(fc_find(&fc, "connect qid 2 sqsize 2 ", 0) >= 0);
	nvmeof_ctrlr_disconnect(c);
	/* OFCS bit 0 clear: no Disconnect commands, the connections just close */
	CU_ASSERT_EQUAL(fc_count(&fc, "disconnect"), 0);
	CU_ASSERT(fc_find(&fc, "prop set 0x14 = 0x464001", 0) >= 0);
	fc_stop(&fc);
}

static void test_never_ready(void)
{
	struct fake_ctrlr fc = { .never_ready = true };
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	uint64_t t0 = now_ms();

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect(uri_for(&fc, "/nqn.2026-11.io.nvmeof:fake"), &o, &c),
			-ETIMEDOUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "not ready after 500 ms"));
	CU_ASSERT(now_ms() - t0 >= 500 && now_ms() - t0 < 3000);
	fc_stop(&fc);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "bad URIs", test_bad_uris },
		{ "bad options", test_bad_opts },
		{ "connection refused", test_connection_refused },
		{ "bring-up, I/O across MDTS, shutdown", test_bringup_io_shutdown },
		{ "URI NSID, rejected Connect", test_uri_nsid_and_rejections },
		{ "discovery controller", test_discovery_controller },
		{ "keep alive", test_keep_alive },
		{ "queue limits", test_queue_limits },
		{ "controller never ready", test_never_ready },
		CU_TEST_INFO_NULL,
	};

	return ut_run("initiator_ctrlr", NULL, NULL, tests);
}
