/* SPDX-License-Identifier: MIT */
/* initiator/bench/bench_target.c: JSON lookups, target statistics lines, tcp-ceiling shapes. */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/bench.h"
#include "ut.h"

/* A line as nvmeof-target --stats-socket sends it (target/stats.c). */
static const char stats_line[] =
	"{\"version\":1,\"time_ns\":2378283474416,\"uptime_ns\":1911391475,"
	"\"process_cpu_ns\":15907779,\"tick_hz\":2596149849,\"xlate_probe_ns\":7.25,"
	"\"nreactors\":2,\"reactor_total\":{\"cpu_ns\":5000000,\"loops\":10,\"msgs\":0,"
	"\"xlate_ns\":123456,\"xlate_calls\":3000},\"reactors\":[{\"id\":0,\"cpu_ns\":2000000,"
	"\"loops\":5,\"msgs\":0,\"xlate_ns\":0,\"xlate_calls\":0,\"fabric_io_cmds\":60},{\"id\":1,"
	"\"cpu_ns\":3000000,"
	"\"loops\":5,\"msgs\":0,\"xlate_ns\":123456,\"xlate_calls\":3000}],\"paths\":{\"nvme\":"
	"{\"ctrlrs\":1,\"io_queues\":1,\"read_cmds\":70,\"write_cmds\":30,\"other_cmds\":0,"
	"\"cmds\":100,\"read_bytes\":0,\"write_bytes\":0},\"scsi\":{\"ctrlrs\":1,\"io_queues\":1,"
	"\"read_cmds\":500,\"write_cmds\":500,\"other_cmds\":2,\"cmds\":1002,\"read_bytes\":0,"
	"\"write_bytes\":0}},\"connections\":3,\"tcp\":{\"accepted\":4,\"live\":2}}\n";

static void test_json_number(void)
{
	static const char doc[] =
		" { \"a\" : 1, \"s\": \"x}]\\\"{,\", \"o\": {\"b\": [10, {\"c\": -2.5e3}, [7, 8]],"
		" \"t\": true, \"n\": null, \"e\": {}, \"z\": []}, \"last\": 42 } ";
	static const struct {
		const char *path;
		int rc;
		double v;
	} cases[] = {
		{ "a", 0, 1 },
		{ "o.b.0", 0, 10 },
		{ "o.b.1.c", 0, -2500 },
		{ "o.b.2.1", 0, 8 },
		{ "last", 0, 42 }, /* after a string holding brackets and quotes */
		{ "o.t", -EINVAL, 0 },
		{ "o.n", -EINVAL, 0 },
		{ "s", -EINVAL, 0 },
		{ "o.e", -EINVAL, 0 },
		{ "o.b.3", -ENOENT, 0 },
		{ "o.z.0", -ENOENT, 0 },
		{ "missing", -ENOENT, 0 },
		{ "a.b", -ENOENT, 0 },
		{ "o.b.x", -ENOENT, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double v = 0;
		int rc = bench_json_number(doc, cases[i].path, &v);

		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (rc == 0 && cases[i].rc == 0)
			CU_ASSERT_DOUBLE_EQUAL(v, cases[i].v, 1e-9);
	}
	/* malformed documents never read past the end */
	CU_ASSERT_NOT_EQUAL(bench_json_number("{\"a\":", "a", &(double){ 0 }), 0);
	CU_ASSERT_NOT_EQUAL(bench_json_number("{\"a\" 1}", "a", &(double){ 0 }), 0);
	CU_ASSERT_NOT_EQUAL(bench_json_number("{\"x\":\"unterminated", "a", &(double){ 0 }), 0);
	CU_ASSERT_NOT_EQUAL(bench_json_number("[1,2", "5", &(double){ 0 }), 0);
}

static void test_tstats_parse(void)
{
	struct bench_tstats st;

	CU_ASSERT_EQUAL_FATAL(bench_tstats_parse(stats_line, &st), 0);
	CU_ASSERT_DOUBLE_EQUAL(st.cpu_ns, 5000000, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.proc_cpu_ns, 15907779, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.xlate_ns, 123456, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.xlate_calls, 3000, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.probe_ns, 7.25, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(st.cmds[BENCH_NATIVE], 100, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.cmds[BENCH_SCSI], 1002, 0);
	CU_ASSERT_EQUAL(st.nreactors, 2);
	/* per reactor: CPU, the SCSI commands, the NVMe-oF I/O (0 where the target has none) */
	CU_ASSERT_DOUBLE_EQUAL(st.r_cpu_ns[0], 2000000, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.r_cpu_ns[1], 3000000, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.r_ios[BENCH_SCSI][0], 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.r_ios[BENCH_SCSI][1], 3000, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.r_ios[BENCH_NATIVE][0], 60, 0);
	CU_ASSERT_DOUBLE_EQUAL(st.r_ios[BENCH_NATIVE][1], 0, 0);
	/* a reactor the count says is there but the list does not hold */
	CU_ASSERT_EQUAL(bench_tstats_parse("{\"time_ns\":1,\"reactor_total\":{\"cpu_ns\":1,"
					   "\"xlate_ns\":0,\"xlate_calls\":0},\"process_cpu_ns\":1,"
					   "\"xlate_probe_ns\":1,\"paths\":{\"nvme\":{\"cmds\":0},"
					   "\"scsi\":{\"cmds\":0}},\"nreactors\":1,\"reactors\":[]"
					   "}",
					   &st),
			-EPROTO);
	CU_ASSERT_EQUAL(bench_tstats_parse("{\"version\":1}", &st), -EPROTO);
	CU_ASSERT_EQUAL(bench_tstats_parse("not json", &st), -EPROTO);
}

/* The other end of a socketpair: answer one request line, split over two writes. */
static void *fake_target(void *arg)
{
	int fd = *(int *)arg;
	char req[16];
	size_t half = sizeof(stats_line) / 2;

	if (read(fd, req, sizeof(req)) <= 0)
		return NULL;
	if (write(fd, stats_line, half) < 0)
		return NULL;
	usleep(20000);
	if (write(fd, stats_line + half, sizeof(stats_line) - 1 - half) < 0)
		return NULL;
	return NULL;
}

static void test_tstats_query(void)
{
	struct bench_tstats st;
	pthread_t th;
	char err[256];
	int sv[2];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, fake_target, &sv[1]), 0);
	CU_ASSERT_EQUAL(bench_tstats_query(sv[0], &st, err, sizeof(err)), 0);
	CU_ASSERT_DOUBLE_EQUAL(st.cmds[BENCH_SCSI], 1002, 0);
	pthread_join(th, NULL);
	/* the peer goes away: an error, not a hang */
	close(sv[1]);
	CU_ASSERT_NOT_EQUAL(bench_tstats_query(sv[0], &st, err, sizeof(err)), 0);
	close(sv[0]);
	CU_ASSERT(bench_tstats_connect("/nonexistent/nvmeof-stats.sock", err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/nvmeof-stats.sock"));
}

static void test_ceiling_shapes(void)
{
	static const struct {
		struct bench_workload w;
		uint32_t req, resp, resp2;
	} cases[] = {
		/* reads: CapsuleCmd in, C2HData + CapsuleResp out */
		{ { BENCH_RANDREAD, 4096, 32 }, 72, 4120, 24 },
		{ { BENCH_SEQREAD, 131072, 1 }, 72, 131096, 24 },
		/* writes within the in-capsule size: one PDU each way */
		{ { BENCH_RANDWRITE, 4096, 32 }, 4168, 24, 0 },
		{ { BENCH_SEQWRITE, 8192, 1 }, 8264, 24, 0 },
		/* larger writes: CapsuleCmd + H2CData in, R2T + CapsuleResp out */
		{ { BENCH_SEQWRITE, 65536, 32 }, 72 + 24 + 65536, 24, 24 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t req, resp, resp2;

		bench_ceiling_shape(&cases[i].w, 8192, &req, &resp, &resp2);
		CU_ASSERT_EQUAL(req, cases[i].req);
		CU_ASSERT_EQUAL(resp, cases[i].resp);
		CU_ASSERT_EQUAL(resp2, cases[i].resp2);
	}
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "JSON number lookup", test_json_number },
		{ "target statistics line", test_tstats_parse },
		{ "statistics socket query", test_tstats_query },
		{ "tcp-ceiling PDU shapes", test_ceiling_shapes },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_target", NULL, NULL, tests);
}
