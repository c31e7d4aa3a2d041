/* SPDX-License-Identifier: MIT */
/*
 * target/stats.c: translation probes, snapshots (reactors, paths), their JSON line, and the
 * UNIX-socket server driven by a private libev loop.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/ctrlr.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "daemon/stats.h"
#include "tcp/tcp_transport.h"
#include "ut.h"

#define NQN "nqn.2026-11.io.nvmeof:stats-ut"

static void test_probe_sampling(void)
{
	struct reactor_stats st = { 0 };
	unsigned int timed = 0, n = 160000;

	for (unsigned int i = 0; i < n; i++) {
		struct stats_xlate_io io;

		stats_xlate_io_start_on(&st, &io);
		timed += io.timed;
		for (int k = 0; k < 3; k++) {
			uint64_t t = stats_xlate_begin(&io);

			CU_ASSERT_EQUAL(t != 0, io.timed);
			/* synthetic spans: a real one preempted on a busy machine would drop
			 * the command from the sample (tested below) */
			if (t)
				stats_xlate_span(&io, 100);
		}
		CU_ASSERT_EQUAL(io.spans, io.timed ? 3u : 0u);
		stats_xlate_io_done_on(&st, &io);
	}
	CU_ASSERT_EQUAL(st.xlate_ios, n);
	CU_ASSERT_EQUAL(st.xlate_sampled, timed);
	CU_ASSERT_EQUAL(st.xlate_spans, 3ull * timed);
	/* one in STATS_XLATE_SAMPLE, within 5% */
	CU_ASSERT(timed > n / STATS_XLATE_SAMPLE * 95 / 100 &&
		  timed < n / STATS_XLATE_SAMPLE * 105 / 100);
	/* a span that took too long (preempted) drops its command from the sample */
	{
		struct stats_xlate_io io = { .timed = true };
		uint64_t before = st.xlate_sampled;

		stats_xlate_span(&io, 100);
		stats_xlate_span(&io, STATS_XLATE_MAX_TICKS + 1);
		CU_ASSERT_FALSE(io.timed);
		stats_xlate_io_done_on(&st, &io);
		CU_ASSERT_EQUAL(st.xlate_sampled, before);
	}
	/* off a reactor nothing is counted or timed */
	{
		struct stats_xlate_io io;

		stats_xlate_io_start(&io);
		CU_ASSERT_FALSE(io.timed);
		CU_ASSERT_EQUAL(stats_xlate_begin(&io), 0);
		stats_xlate_io_done(&io);
	}
	CU_ASSERT(stats_tick_hz() > 1e6);
	CU_ASSERT(stats_probe_cost_ns() > 0);
}

/*
 * The estimator is unbiased whatever the mix: commands of kinds that make different
 * numbers of translator calls with different costs, in a strict rotation (the pattern
 * that made one-call-in-16 sampling alias), are sampled by command and the estimate of
 * the total lands within 3% of the truth for each rotation length. Costs are synthetic
 * ticks (stats_xlate_span), so no clock is involved.
 */
static void test_estimator_bias(void)
{
	static const struct {
		unsigned int calls;
		uint64_t ticks_per_call;
	} kinds[] = { { 6, 40 }, { 5, 300 }, { 1, 20 }, { 2, 1000 }, { 6, 15 } };

	for (unsigned int period = 1; period <= 5; period++) {
		struct reactor_stats st = { 0 };
		double truth = 0, est;

		for (unsigned int i = 0; i < 200000; i++) {
			unsigned int k = i % period;
			struct stats_xlate_io io;

			stats_xlate_io_start_on(&st, &io);
			for (unsigned int c = 0; c < kinds[k].calls; c++) {
				truth += (double)kinds[k].ticks_per_call;
				if (io.timed)
					stats_xlate_span(&io, kinds[k].ticks_per_call);
			}
			stats_xlate_io_done_on(&st, &io);
		}
		/* 1 tick = 1 ns; no timer overhead to take off */
		est = (double)stats_xlate_estimate_ns(st.xlate_ticks, st.xlate_spans,
						      st.xlate_sampled, st.xlate_ios, 1e9, 0);
		if (fabs(est - truth) / truth >= 0.03)
			fprintf(stderr, "period %u: estimate %.0f, truth %.0f\n", period, est,
				truth);
		CU_ASSERT(fabs(est - truth) / truth < 0.03);
	}
}

static void test_estimate(void)
{
	static const struct {
		uint64_t ticks, spans, sampled, ios;
		double hz;
		uint64_t overhead;
		uint64_t want;
	} cases[] = {
		{ 1000, 1, 1, 8, 1e9, 0, 8000 }, /* 1 us per command, 8 commands */
		{ 2600, 4, 2, 16, 2.6e9, 0, 8000 },
		{ 1000, 1, 1, 8, 1e9, 200, 6400 }, /* 200 ticks of each span are the timer's */
		{ 1000, 5, 1, 8, 1e9, 100, 4000 }, /* five spans: 500 ticks of timer */
		{ 5000, 10, 10, 100, 1e9, 50, 45000 },
		{ 1000, 10, 10, 100, 1e9, 150, 0 }, /* less than the timer's own cost: nothing */
		{ 0, 0, 0, 5, 1e9, 0, 0 },          /* nothing timed yet */
		{ 1000, 1, 1, 8, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(stats_xlate_estimate_ns(cases[i].ticks, cases[i].spans,
							cases[i].sampled, cases[i].ios, cases[i].hz,
							cases[i].overhead),
				cases[i].want);
	/* two back-to-back counter reads: small, but not nothing on every machine */
	CU_ASSERT(stats_tick_overhead() < 10000);
}

static void test_path_add(void)
{
	struct stats_path p = { 0 };
	struct nvmf_qpair_stats a = { 1, 2, 3, 4096, 8192 }, b = { 10, 20, 30, 40960, 81920 };

	stats_path_add(&p, &a, 1);
	stats_path_add(&p, &b, 4);
	CU_ASSERT_EQUAL(p.ctrlrs, 2);
	CU_ASSERT_EQUAL(p.io_queues, 5);
	CU_ASSERT_EQUAL(p.read_cmds, 11);
	CU_ASSERT_EQUAL(p.write_cmds, 22);
	CU_ASSERT_EQUAL(p.other_cmds, 33);
	CU_ASSERT_EQUAL(p.read_bytes, 45056);
	CU_ASSERT_EQUAL(p.write_bytes, 90112);
}

static void test_json(void)
{
	struct stats_snapshot *s = calloc(1, sizeof(*s));
	char buf[STATS_JSON_MAX];
	int n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	s->time_ns = 100;
	s->process_cpu_ns = 777;
	s->nreactors = 2;
	s->reactor[0].cpu_ns = 11;
	s->reactor[1].cpu_ns = 22;
	s->reactor[1].xlate_calls = 9;
	s->reactor[1].fabric_io_cmds = 10;
	s->total.cpu_ns = 33;
	s->total.xlate_ns = 4500;
	s->total.xlate_calls = 9;
	s->probe_ns = 7.5;
	s->nvme.read_cmds = 5;
	s->nvme.write_cmds = 6;
	s->scsi.ctrlrs = 1;
	s->scsi.other_cmds = 2;
	s->connections = 3;
	s->tcp.accepted = 4;
	s->tcp.totals.bytes_tx = 8;
	s->tcp.totals.zc_sends = 9;
	s->tcp.totals.zc_completions = 7;
	s->tcp.totals.zc_copied = 6;
	s->tcp.totals.req_state_entries[0] = 12;
	s->tcp.totals.req_state_entries[NVMF_TCP_REQ_NSTATES - 1] = 13;
	s->tcp.totals.rx_state_entries[1] = 14;
	n = stats_format_json(s, buf, sizeof(buf));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL((size_t)n, strlen(buf));
	CU_ASSERT(buf[0] == '{' && buf[n - 2] == '}' && buf[n - 1] == '\n');
	CU_ASSERT_PTR_NULL(memchr(buf, '\n', (size_t)n - 1)); /* one line */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"process_cpu_ns\":777,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"xlate_probe_ns\":7.50,\"nreactors\":2,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"reactor_total\":{\"cpu_ns\":33,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"xlate_ns\":4500,\"xlate_calls\":9,\"xlate_sampled\":"
					   "0,\"poll_events\":0,\"poll_empty\":0,\"poll_sleeps\":"
					   "0,\"fabric_io_cmds\":0}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"reactors\":[{\"id\":0,\"cpu_ns\":11,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "{\"id\":1,\"cpu_ns\":22,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"poll_sleeps\":0,\"fabric_io_cmds\":10}]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"nvme\":{\"ctrlrs\":0,\"io_queues\":0,\"read_cmds\":5,"
					   "\"write_cmds\":6,\"other_cmds\":0,\"cmds\":11,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"scsi\":{\"ctrlrs\":1,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"cmds\":2,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"connections\":3,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"tcp\":{\"accepted\":4,"));
	/* the existing fields unchanged, the state counts after them */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"closed_bytes_tx\":8,\"zerocopy_sends\":9,"
					   "\"zerocopy_completions\":7,\"zerocopy_copied\":6,"
					   "\"c2h_mapped\":0,\"share_waits\":0,\"r2t_timeouts\":0,"
					   "\"paused_closes\":0,\"req_states\":{\"FREE\":12,"
					   "\"NEED_BUFFER\":0,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"COMPLETED\":13},\"rx_states\":{\"AWAIT_PDU_CH\":0,"
					   "\"AWAIT_PDU_PSH\":14,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"ERROR\":0}}}\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "\"rdma\"")); /* a build without NVMe/RDMA */
	/* NVMe/RDMA: its connection counters after the NVMe/TCP ones */
	s->rdma.present = true;
	s->rdma.accepted = 21;
	s->rdma.rejected = 12;
	s->rdma.closed = 20;
	s->rdma.live = 1;
	s->rdma.connecting = 1;
	s->rdma.connect_timeouts = 8;
	s->rdma.registered_bytes = 131392;
	n = stats_format_json(s, buf, sizeof(buf));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"ERROR\":0}},\"rdma\":{\"accepted\":21,"
					   "\"rejected\":12,\"closed\":20,\"live\":1,"
					   "\"connecting\":1,\"connect_timeouts\":8,"
					   "\"registered_bytes\":131392}}\n"));
	/* too small a buffer */
	CU_ASSERT_EQUAL(stats_format_json(s, buf, 64), -ENOSPC);
	CU_ASSERT_EQUAL(stats_format_json(s, buf, 0), -ENOSPC);
	free(s);
}

/* The largest snapshot (every reactor and port listed, every counter at its widest) fits
 * in the line the server sends. */
static void test_json_largest(void)
{
	struct stats_snapshot *s = calloc(1, sizeof(*s));
	char *buf = malloc(STATS_JSON_MAX);
	int n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	memset(s, 0xff, sizeof(*s));
	s->rdma.present = true;
	s->nreactors = STATS_MAX_REACTORS;
	s->nports = STATS_MAX_PORTS;
	for (unsigned int i = 0; i < STATS_MAX_PORTS; i++) {
		s->port[i].portid = UINT16_MAX;
		snprintf(s->port[i].trsvcid, sizeof(s->port[i].trsvcid), "65535");
	}
	s->tick_hz = 1e10;
	s->tick_overhead_ns = 1e6;
	s->probe_ns = 1e6;
	n = stats_format_json(s, buf, STATS_JSON_MAX);
	if (n < 0)
		fprintf(stderr, "\nthe largest snapshot does not fit %d bytes\n", STATS_JSON_MAX);
	CU_ASSERT(n > 0);
	free(buf);
	free(s);
}

/* ---- with reactors ------------------------------------------------------------------------- */
static int g_done;

static void probe_msg(void *arg)
{
	unsigned int n = *(unsigned int *)arg;

	for (unsigned int i = 0; i < n; i++) {
		struct stats_xlate_io io;
		uint64_t t;
		volatile uint64_t x = 0;

		stats_xlate_io_start(&io);
		t = stats_xlate_begin(&io);
		for (unsigned int k = 0; k < 2000; k++) /* something to time */
			x += k;
		stats_xlate_end(&io, t);
		stats_xlate_io_done(&io);
	}
	__atomic_add_fetch(&g_done, 1, __ATOMIC_RELEASE);
}

static void test_collect_reactors(void)
{
	static unsigned int per_reactor = 64 * STATS_XLATE_SAMPLE;
	struct stats_snapshot *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	g_done = 0;
	CU_ASSERT_EQUAL_FATAL(reactor_for_each(probe_msg, &per_reactor), 0);
	for (int i = 0; i < 2000 && __atomic_load_n(&g_done, __ATOMIC_ACQUIRE) < 2; i++)
		usleep(1000);
	CU_ASSERT_EQUAL_FATAL(g_done, 2);
	stats_collect(NULL, s);
	CU_ASSERT_EQUAL(s->nreactors, 2);
	CU_ASSERT_EQUAL(s->reactor[0].xlate_calls, per_reactor);
	CU_ASSERT_EQUAL(s->reactor[1].xlate_calls, per_reactor);
	CU_ASSERT_EQUAL(s->total.xlate_calls, 2 * per_reactor);
	CU_ASSERT(s->total.xlate_ns > 0);
	CU_ASSERT(s->reactor[0].cpu_ns > 0 && s->reactor[1].cpu_ns > 0);
	CU_ASSERT_EQUAL(s->total.cpu_ns, s->reactor[0].cpu_ns + s->reactor[1].cpu_ns);
	CU_ASSERT(s->process_cpu_ns > 0);
	CU_ASSERT(s->tick_hz > 1e6);
	free(s);
}

/* Controllers of both kinds on a real subsystem: counted by path. */
static void test_collect_paths(void)
{
	struct nvmf_tgt_opts to;
	struct nvmf_tgt *tgt;
	struct nvmf_subsys *sub;
	struct nvmf_ctrlr *c[3];
	struct nvmf_qpair qp[3];
	struct stats_snapshot *s = calloc(1, sizeof(*s));
	static const bool local[3] = { false, true, false };

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	/* the daemon's transport table, as main() fills it */
	if (!nvmf_transport_find("tcp"))
		CU_ASSERT_EQUAL(nvmf_transport_register(&nvmf_tcp_transport_ops), 0);
	CU_ASSERT_PTR_EQUAL(nvmf_transport_find("tcp"), &nvmf_tcp_transport_ops);
	nvmf_tgt_opts_default(&to);
	tgt = nvmf_tgt_create(&to);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
	sub = nvmf_subsys_create(tgt, NQN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
	memset(qp, 0, sizeof(qp));
	for (int i = 0; i < 3; i++) {
		c[i] = calloc(1, sizeof(*c[i]));
		CU_ASSERT_PTR_NOT_NULL_FATAL(c[i]);
		pthread_mutex_init(&c[i]->lock, NULL);
		c[i]->subsys = sub;
		c[i]->local = local[i];
		c[i]->retired.read_cmds = 100; /* I/O queues already gone */
		qp[i].stats.read_cmds = 10 * (i + 1);
		qp[i].stats.write_cmds = 1;
		qp[i].stats.read_bytes = 4096;
		c[i]->io_qp[1] = &qp[i];
		c[i]->num_io_qpairs = 1;
		TAILQ_INSERT_TAIL(&sub->ctrlrs, c[i], link);
	}
	stats_collect(tgt, s);
	CU_ASSERT_EQUAL(s->nvme.ctrlrs, 2);
	CU_ASSERT_EQUAL(s->nvme.io_queues, 2);
	CU_ASSERT_EQUAL(s->nvme.read_cmds, 100 + 10 + 100 + 30);
	CU_ASSERT_EQUAL(s->nvme.write_cmds, 2);
	CU_ASSERT_EQUAL(s->nvme.read_bytes, 8192);
	CU_ASSERT_EQUAL(s->scsi.ctrlrs, 1);
	CU_ASSERT_EQUAL(s->scsi.read_cmds, 100 + 20);
	CU_ASSERT_EQUAL(s->scsi.write_cmds, 1);
	CU_ASSERT(s->uptime_ns > 0);
	for (int i = 0; i < 3; i++) {
		TAILQ_REMOVE(&sub->ctrlrs, c[i], link);
		pthread_mutex_destroy(&c[i]->lock);
		free(c[i]);
	}
	nvmf_tgt_destroy(tgt);
	free(s);
}

/* Regression: the counters of a controller whose queues are gone stayed out of the path
 * totals, so a host that read and disconnected showed "read_cmds": 0. */
static void test_collect_paths_gone(void)
{
	struct nvmf_tgt_opts to;
	struct nvmf_tgt *tgt;
	struct nvmf_subsys *sub;
	struct nvmf_ctrlr *c[2];
	struct nvmf_qpair qp[2];
	struct stats_snapshot *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	nvmf_tgt_opts_default(&to);
	tgt = nvmf_tgt_create(&to);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
	sub = nvmf_subsys_create(tgt, NQN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
	memset(qp, 0, sizeof(qp));
	for (int i = 0; i < 2; i++) {
		c[i] = calloc(1, sizeof(*c[i]));
		CU_ASSERT_PTR_NOT_NULL_FATAL(c[i]);
		pthread_mutex_init(&c[i]->lock, NULL);
		c[i]->subsys = sub;
		c[i]->local = i == 1;
		snprintf(c[i]->label, sizeof(c[i]->label), "ctrlr %d", i + 1);
		qp[i].qid = 1;
		qp[i].stats.read_cmds = 24 + i;
		qp[i].stats.write_cmds = 3;
		qp[i].stats.read_bytes = 24 * 4096;
		c[i]->io_qp[1] = &qp[i];
		c[i]->num_io_qpairs = 1;
		TAILQ_INSERT_TAIL(&sub->ctrlrs, c[i], link);
	}
	/* the queues close, then the controllers are freed */
	for (int i = 0; i < 2; i++) {
		nvmf_ctrlr_detach_io_qpair(c[i], &qp[i]);
		TAILQ_REMOVE(&sub->ctrlrs, c[i], link);
		pthread_mutex_destroy(&c[i]->lock);
		free(c[i]);
	}
	stats_collect(tgt, s);
	CU_ASSERT_EQUAL(s->nvme.ctrlrs, 0);
	CU_ASSERT_EQUAL(s->nvme.io_queues, 0);
	CU_ASSERT_EQUAL(s->nvme.read_cmds, 24);
	CU_ASSERT_EQUAL(s->nvme.write_cmds, 3);
	CU_ASSERT_EQUAL(s->nvme.read_bytes, 24 * 4096);
	CU_ASSERT_EQUAL(s->scsi.ctrlrs, 0);
	CU_ASSERT_EQUAL(s->scsi.read_cmds, 25);
	CU_ASSERT_EQUAL(s->scsi.write_cmds, 3);
	nvmf_tgt_destroy(tgt);
	free(s);
}

/* ---- the server ------------------------------------------------------------------------- */
static char g_dir[64];

static void sock_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", g_dir, name);
}

static int client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Run @loop until @want lines arrived on @fd (or a bound is hit); returns the lines seen. */
static int read_lines(struct ev_loop *loop, int fd, char *buf, size_t len, int want)
{
	size_t off = 0;
	int lines = 0;

	for (int i = 0; i < 2000 && lines < want; i++) {
		ssize_t n;

		ev_run(loop, EVRUN_NOWAIT);
		n = recv(fd, buf + off, len - 1 - off, 0);
		if (n > 0) {
			for (ssize_t k = 0; k < n; k++)
				lines += buf[off + (size_t)k] == '\n';
			off += (size_t)n;
		} else if (n == 0) {
			break;
		} else {
			usleep(500);
		}
	}
	buf[off] = '\0';
	return lines;
}

static void test_server(void)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct stats_server *srv;
	char path[128], err[256], *buf = malloc(4 * STATS_JSON_MAX);
	struct stat st;
	int fd, fd2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	sock_path(path, sizeof(path), "stats.sock");
	srv = stats_server_start(loop, NULL, path, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT(S_ISSOCK(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);

	/* two requests in one write: two lines back */
	fd = client_connect(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(send(fd, "stats\n\n", 7, 0), 7);
	CU_ASSERT_EQUAL(read_lines(loop, fd, buf, 4 * STATS_JSON_MAX, 2), 2);
	CU_ASSERT(strncmp(buf, "{\"version\":1,", 13) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"nreactors\":2,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(strchr(buf, '\n'), "{\"version\":1,"));

	/* a second client at the same time; a request split over two writes */
	fd2 = client_connect(path);
	CU_ASSERT_FATAL(fd2 >= 0);
	CU_ASSERT_EQUAL(send(fd2, "sta", 3, 0), 3);
	CU_ASSERT_EQUAL(read_lines(loop, fd2, buf, 4 * STATS_JSON_MAX, 1), 0);
	CU_ASSERT_EQUAL(send(fd2, "ts\n", 3, 0), 3);
	CU_ASSERT_EQUAL(read_lines(loop, fd2, buf, 4 * STATS_JSON_MAX, 1), 1);

	/* a line longer than the server takes: the server hangs up */
	memset(buf, 'x', 1024);
	CU_ASSERT_EQUAL(send(fd2, buf, 1024, 0), 1024);
	read_lines(loop, fd2, buf, 4 * STATS_JSON_MAX, 1);
	CU_ASSERT_EQUAL(recv(fd2, buf, 16, 0), 0);
	close(fd2);
	close(fd);

	stats_server_stop(srv);
	CU_ASSERT_NOT_EQUAL(stat(path, &st), 0); /* socket file removed */
	ev_loop_destroy(loop);
	free(buf);
}

static void test_server_paths(void)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stats_server *srv;
	char path[128], err[256], longp[200];
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
	/* a regular file is never replaced */
	sock_path(path, sizeof(path), "plain-file");
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	err[0] = '\0';
	CU_ASSERT_PTR_NULL(stats_server_start(loop, NULL, path, err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a socket"));
	unlink(path);
	/* a socket file left behind by a previous run is */
	sock_path(path, sizeof(path), "stale.sock");
	CU_ASSERT_FATAL(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	srv = stats_server_start(loop, NULL, path, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL(srv);
	stats_server_stop(srv);
	/* too long, empty, or in a missing directory */
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	CU_ASSERT_PTR_NULL(stats_server_start(loop, NULL, longp, err, sizeof(err)));
	CU_ASSERT_PTR_NULL(stats_server_start(loop, NULL, "", err, sizeof(err)));
	CU_ASSERT_PTR_NULL(
		stats_server_start(loop, NULL, "/nonexistent/dir/s.sock", err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/dir/s.sock"));
	ev_loop_destroy(loop);
}

static int suite_init(void)
{
	snprintf(g_dir, sizeof(g_dir), "/tmp/stats_ut.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	reactors_configure(4096, 0, REACTOR_PIN_OFF);
	return reactors_start(2);
}

static int suite_fini(void)
{
	reactors_stop();
	rmdir(g_dir);
	return 0;
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "the largest snapshot fits a line", test_json_largest },
		{ "translation probes sample 1 command in 16", test_probe_sampling },
		{ "translation estimate is unbiased by the command mix", test_estimator_bias },
		{ "translation time estimate", test_estimate },
		{ "per-path sums", test_path_add },
		{ "JSON line", test_json },
		{ "snapshot of reactors", test_collect_reactors },
		{ "snapshot of controllers by path", test_collect_paths },
		{ "controllers gone still count", test_collect_paths_gone },
		{ "statistics socket", test_server },
		{ "socket paths", test_server_paths },
		CU_TEST_INFO_NULL,
	};

	return ut_run("target_stats", suite_init, suite_fini, tests);
}
