/* SPDX-License-Identifier: MIT */
/*
 * Many idle hosts against the running daemon (driven by idle-conns.sh): each host opens an
 * admin queue (ICReq, Connect, CC.EN) and three I/O queues of 128 entries (ICReq, Connect),
 * as the Linux host does, then sends nothing. With all of them open, the daemon's resident
 * memory must stay under a limit and a fresh host must still get verified I/O at once.
 * Reuses the raw PDU routines of tcp_raw_client.c.
 *
 *   idle_conns PORT SUBNQN CONNECTIONS PID LIMIT_MIB
 *
 * CONNECTIONS is rounded down to whole hosts (four connections each).
 */
#define main tcp_raw_client_main
int tcp_raw_client_main(int argc, char **argv);
#include "tcp_raw_client.c"
#undef main

#include <sys/resource.h>
#include <time.h>

#define IO_QUEUES 3
#define IO_SQSIZE 128

static long vmrss_kib(int pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Connect with KATO 0 (none): the hosts stay idle for as long as the test needs. */
static int connect_q(struct conn *c, uint16_t qid, uint16_t sqsize, uint16_t cntlid)
{
	struct nvmf_connect_cmd cmd = { 0 };
	struct nvmf_connect_data data = { 0 };
	struct nvme_cpl cpl;
	int st;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.qid, qid);
	put_le16(&cmd.sqsize, (uint16_t)(sqsize - 1));
	memset(data.hostid, 0x5a, sizeof(data.hostid));
	put_le16(&data.cntlid, cntlid);
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", HOSTNQN);
	st = run_cmd(c, (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, &cpl);
	REQUIRE(st == 0, "Connect qid %u: status 0x%x", qid, st);
	if (qid == 0)
		c->cntlid = get_le16(&cpl.dw0);
	return 0;
}

/* One idle host: @c[0] the admin queue, @c[1..IO_QUEUES] its I/O queues. */
static int host_up(struct conn *c)
{
	uint64_t csts = 0;

	REQUIRE(conn_open(&c[0]) == 0 && do_ic(&c[0], false, false) == 0, "admin IC");
	REQUIRE(connect_q(&c[0], 0, 32, 0xffff) == 0, "admin Connect");
	REQUIRE(prop_set(&c[0], NVME_REG_CC,
			 NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT) == 0,
		"CC.EN");
	for (int i = 0; i < 100 && !(csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(&c[0], NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (!(csts & NVME_CSTS_RDY))
			usleep(10000);
	}
	REQUIRE(csts & NVME_CSTS_RDY, "CSTS.RDY");
	for (uint16_t q = 1; q <= IO_QUEUES; q++) {
		REQUIRE(conn_open(&c[q]) == 0 && do_ic(&c[q], false, false) == 0, "I/O IC");
		REQUIRE(connect_q(&c[q], q, IO_SQSIZE, c[0].cntlid) == 0, "I/O Connect");
	}
	return 0;
}

/* A fresh host: admin queue, one I/O queue, writes and reads compared; its time. */
static int fresh_host(double *secs)
{
	struct conn admin, io;
	double t0 = now_s();
	int rc = 0;

	REQUIRE(admin_up(&admin, false, false) == 0, "fresh admin");
	REQUIRE(conn_open(&io) == 0 && do_ic(&io, false, false) == 0, "fresh I/O IC");
	REQUIRE(connect_q(&io, 1, 32, admin.cntlid) == 0, "fresh I/O connect");
	rc |= rw(&io, 1024, 4096, true, 7);
	rc |= rw(&io, 2048, 131072, false, 8);
	*secs = now_s() - t0;
	conn_close(&io);
	conn_close(&admin);
	return rc;
}

int main(int argc, char **argv)
{
	int nhosts, pid, up = 0;
	long limit_mib, before, with, after;
	struct rlimit rl;
	struct conn *c;
	double t0, secs = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: %s PORT SUBNQN CONNECTIONS PID LIMIT_MIB\n", argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	g_subnqn = argv[2];
	nhosts = atoi(argv[3]) / (1 + IO_QUEUES);
	pid = atoi(argv[4]);
	limit_mib = atol(argv[5]);
	if (nhosts < 1 || pid < 1 || limit_mib < 1) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	c = calloc((size_t)nhosts * (1 + IO_QUEUES), sizeof(*c));
	REQUIRE(c != NULL, "memory");

	before = vmrss_kib(pid);
	t0 = now_s();
	for (int h = 0; h < nhosts; h++) {
		if (host_up(&c[h * (1 + IO_QUEUES)]) != 0)
			break;
		up++;
	}
	usleep(200000); /* let the daemon settle (deferred frees, shrinks) */
	with = vmrss_kib(pid);
	printf("idle-conns: %d of %d hosts up (%d connections) in %.1f s; daemon VmRSS %ld KiB "
	       "before, %ld KiB with them (%.1f KiB per connection), limit %ld MiB\n",
	       up, nhosts, up * (1 + IO_QUEUES), now_s() - t0, before, with,
	       up ? (double)(with - before) / (up * (1 + IO_QUEUES)) : 0.0, limit_mib);
	CHECK(up == nhosts, "only %d of %d hosts came up", up, nhosts);
	CHECK(with > 0 && with / 1024 < limit_mib, "VmRSS %ld MiB, limit %ld MiB", with / 1024,
	      limit_mib);
	CHECK(fresh_host(&secs) == 0, "a fresh host beside %d idle connections",
	      up * (1 + IO_QUEUES));
	after = vmrss_kib(pid);
	printf("idle-conns: a fresh host connected and did verified I/O in %.3f s; VmRSS %ld KiB "
	       "after it\n",
	       secs, after);
	/* Two trim intervals of silence: idle queues have given their pages back. */
	sleep(5);
	after = vmrss_kib(pid);
	printf("idle-conns: VmRSS %ld KiB after 5 s idle (%.1f KiB per connection)\n", after,
	       up ? (double)(after - before) / (up * (1 + IO_QUEUES)) : 0.0);
	CHECK(after <= with + 1024, "VmRSS grew from %ld to %ld KiB while idle", with, after);
	for (int i = 0; i < nhosts * (1 + IO_QUEUES); i++)
		if (c[i].fd > 0)
			conn_close(&c[i]);
	free(c);
	printf("%s idle-conns\n", g_failures ? "FAIL" : "PASS");
	return g_failures ? 1 : 0;
}
