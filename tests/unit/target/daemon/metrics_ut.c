/* SPDX-License-Identifier: MIT */
/*
 * target/daemon/metrics.c: the exposition writer (labels, samples, histograms), the
 * families of a real target, and the HTTP endpoint: its answer, and its limits (a whole
 * request within the deadline however slowly bytes come, connections per address).
 */
#define _GNU_SOURCE
#include "config.h"

#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/hist.h"
#include "core/nvmf.h"
#include "daemon/metrics.h"
#include "reactor/reactor.h"
#include "ut.h"

#define NQN "nqn.2026-11.io.nvmeof:metrics-ut"

static void test_labels(void)
{
	char l[128] = "";

	metrics_label(l, sizeof(l), "subsystem", "a\"b\\c\nd");
	metrics_label(l, sizeof(l), "nsid", "1");
	CU_ASSERT_STRING_EQUAL(l, ",subsystem=\"a\\\"b\\\\c\\nd\",nsid=\"1\"");
	/* too long: cut, still terminated */
	char s[16] = "";
	metrics_label(s, sizeof(s), "k", "0123456789abcdef");
	CU_ASSERT(strlen(s) < sizeof(s));
}

static void test_samples(void)
{
	struct metrics_buf b = { 0 };
	char l[64] = "";

	metrics_family(&b, "x_total", "counter", "Things.");
	metrics_sample_u64(&b, "x_total", NULL, 7);
	metrics_label(l, sizeof(l), "op", "read");
	metrics_sample_u64(&b, "x_total", l, 18446744073709551615ull);
	metrics_sample(&b, "y_seconds", "", 0.5);
	CU_ASSERT_FALSE(b.oom);
	CU_ASSERT_STRING_EQUAL(b.p, "# HELP x_total Things.\n# TYPE x_total counter\n"
				    "x_total 7\nx_total{op=\"read\"} 18446744073709551615\n"
				    "y_seconds 0.5\n");
	metrics_buf_free(&b);
}

static void test_hist(void)
{
	struct hist h = { 0 };
	struct metrics_buf b = { 0 };
	char l[64] = "";

	/* bucket bounds are exclusive and contiguous */
	CU_ASSERT_EQUAL(hist_index(0), 0);
	CU_ASSERT_EQUAL(hist_index(1023), 0);
	CU_ASSERT_EQUAL(hist_index(1024), 1);
	for (unsigned int i = 0; i + 1 < HIST_NBUCKETS; i++) {
		CU_ASSERT_EQUAL(hist_index(hist_bucket_limit(i) - 1), i);
		CU_ASSERT_EQUAL(hist_index(hist_bucket_limit(i)), i + 1);
	}
	CU_ASSERT_EQUAL(hist_index(UINT64_MAX), HIST_NBUCKETS - 1);
	hist_record(&h, 500);        /* < 1.024 us */
	hist_record(&h, 3000);       /* < 4.096 us */
	hist_record(&h, 3000000);    /* 3 ms */
	hist_record(&h, 1ull << 40); /* beyond the last bound */
	metrics_label(l, sizeof(l), "nsid", "1");
	metrics_histogram(&b, "lat_seconds", l, &h);
	CU_ASSERT_FALSE_FATAL(b.oom);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_bucket{nsid=\"1\",le=\"1.024e-06\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_bucket{nsid=\"1\",le=\"2.048e-06\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_bucket{nsid=\"1\",le=\"4.096e-06\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_bucket{nsid=\"1\",le=\"0.004194304\"} "
					   "3\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_bucket{nsid=\"1\",le=\"+Inf\"} 4\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_count{nsid=\"1\"} 4\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "lat_seconds_sum{nsid=\"1\"} 1099.5"));
	/* cumulative: never decreasing */
	unsigned long long last = 0;
	for (const char *p = b.p; (p = strstr(p, "_bucket{")); p++) {
		const char *sp = strchr(p, '}');
		unsigned long long v = strtoull(sp + 2, NULL, 10);

		CU_ASSERT(v >= last);
		last = v;
	}
	metrics_buf_free(&b);
}

/* Every sample belongs to a family declared before it, declared once. */
static void check_families(const char *text)
{
	char *copy = strdup(text), *save = NULL, *line;
	char declared[256][96];
	unsigned int n = 0;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[96];

		if (sscanf(line, "# TYPE %95s", name) == 1) {
			for (unsigned int i = 0; i < n; i++)
				CU_ASSERT(strcmp(declared[i], name) != 0);
			if (n < 256)
				snprintf(declared[n++], sizeof(declared[0]), "%s", name);
			continue;
		}
		if (line[0] == '#')
			continue;
		size_t len = strcspn(line, "{ ");
		bool found = false;

		for (unsigned int i = 0; i < n && !found; i++) {
			size_t dl = strlen(declared[i]);

			found = len >= dl && strncmp(line, declared[i], dl) == 0 &&
				(len == dl || strncmp(line + dl, "_bucket", 7) == 0 ||
				 strncmp(line + dl, "_sum", 4) == 0 ||
				 strncmp(line + dl, "_count", 6) == 0);
		}
		CU_ASSERT(found);
		if (!found)
			fprintf(stderr, "undeclared: %s\n", line);
	}
	free(copy);
}

#ifdef HAVE_MHD
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Seconds until the server closes @fd (reads past what it sends), at most @limit; -1 if not. */
static double closed_within(int fd, double limit)
{
	double t0 = now_s();
	char buf[256];

	while (now_s() - t0 < limit) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 50) == 1 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return now_s() - t0;
	}
	return -1;
}

/* A GET on a new connection; the response in @resp (NUL-terminated). */
static void scrape(uint16_t port, char *resp, size_t len)
{
	const char *rq = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
	int fd = dial(port);
	size_t got = 0;
	ssize_t n;

	resp[0] = '\0';
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, rq, strlen(rq)), (ssize_t)strlen(rq));
	while (got < len - 1 && (n = read(fd, resp + got, len - 1 - got)) > 0)
		got += (size_t)n;
	resp[got] = '\0';
	close(fd);
}

/*
 * Two connections per address and a 600 ms deadline: a third from the same address is
 * closed at once; the two, one of them sending a byte every 100 ms, are closed at the
 * deadline; a whole request is still answered, and the scrape counts both.
 */
static void endpoint_limits(struct nvmf_tgt *tgt)
{
	const struct metrics_opts mo = { .timeout_ms = 600, .per_address = 2 };
	char err[256], *resp = calloc(1, 1 << 20);
	struct metrics_server *srv;
	double t0, ta = -1, tb = -1;
	int a, b, c;

	srv = metrics_server_start(tgt, "tcp://127.0.0.1:0", &mo, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	a = dial(metrics_server_port(srv));
	b = dial(metrics_server_port(srv));
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	usleep(100000); /* both accepted before the third */
	t0 = now_s();
	c = dial(metrics_server_port(srv));
	CU_ASSERT_FATAL(c >= 0);
	CU_ASSERT(closed_within(c, 0.5) >= 0); /* refused: closed at once */
	close(c);
	/* b trickles a header; an idle timeout alone would keep it */
	for (const char *p = "GET /metrics HTTP/1.1\r\nX: "; *p && tb < 0; p++) {
		(void)!send(b, p, 1, MSG_NOSIGNAL);
		if (closed_within(b, 0.1) >= 0)
			tb = now_s() - t0;
	}
	if (tb < 0 && closed_within(b, 2) >= 0)
		tb = now_s() - t0;
	if (closed_within(a, 2) >= 0)
		ta = now_s() - t0;
	CU_ASSERT(ta > 0.3 && ta < 1.5);
	CU_ASSERT(tb > 0.3 && tb < 1.5);
	close(a);
	close(b);
	scrape(metrics_server_port(srv), resp, 1 << 20);
	CU_ASSERT(strncmp(resp, "HTTP/1.0 200", 12) == 0 || strncmp(resp, "HTTP/1.1 200", 12) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(resp, "\nnvmeof_metrics_connections_refused_total 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(resp, "\nnvmeof_metrics_requests_timed_out_total 2\n"));
	metrics_server_stop(srv);
	free(resp);
}
#endif

static void test_target(void)
{
	struct nvmf_tgt_opts to;
	struct nvmf_tgt *tgt;
	struct nvmf_subsys *sub;
	struct nvmf_ns_opts no = { .path = "ram:1M", .enabled = true };
	struct metrics_buf b = { 0 };
	char err[256];

	nvmf_tgt_opts_default(&to);
	tgt = nvmf_tgt_create(&to);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
	sub = nvmf_subsys_create(tgt, NQN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
	CU_ASSERT_EQUAL_FATAL(nvmf_subsys_add_ns(sub, &no, err, sizeof(err)), 1);
	/* reactor 1 completed two reads of 8 blocks and one failed write */
	struct nvmf_ns *ns = sub->ns[1];
	struct nvmf_ns_iostat *st = &ns->iostat[1 % ns->iostat_slots * NVMF_NPATHS];
	st->cmds[NVMF_IO_READ] = 2;
	st->bytes[NVMF_IO_READ] = 8192;
	st->cmds[NVMF_IO_WRITE] = 1;
	st->err_status[0] = 0x0280;
	st->err_n[0] = 1;
	hist_record(&st->lat, 20000);
	CU_ASSERT_EQUAL(metrics_format(tgt, &b), 0);
	CU_ASSERT_FATAL(b.p != NULL);
	check_families(b.p);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "nvmeof_namespace_commands_total{subsystem=\"" NQN
					   "\",nsid=\"1\",path=\"nvme_tcp\",op=\"read\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "nvmeof_namespace_bytes_total{subsystem=\"" NQN
					   "\",nsid=\"1\",path=\"nvme_tcp\",op=\"read\"} 8192\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "nvmeof_namespace_errors_total{subsystem=\"" NQN
					   "\",nsid=\"1\",path=\"nvme_tcp\",sct=\"0x2\",sc="
					   "\"0x80\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "nvmeof_namespace_latency_seconds_count{subsystem=\"" NQN
					   "\",nsid=\"1\",path=\"nvme_tcp\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "nvmeof_namespace_outstanding_commands{subsystem=\"" NQN
					   "\",nsid=\"1\"} 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "nvmeof_reactor_busy_seconds_total{reactor=\"1\"} "));
	CU_ASSERT_PTR_NULL(strstr(b.p, "path=\"iscsi\"")); /* unused paths are left out */
#ifdef HAVE_MHD
	/* the endpoint on a free port answers GET /metrics with the same families */
	struct metrics_server *srv =
		metrics_server_start(tgt, "tcp://127.0.0.1:0", NULL, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT(metrics_server_port(srv) != 0);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(metrics_server_port(srv)) };
	char *resp = calloc(1, 1 << 20);
	size_t got = 0;
	ssize_t n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_EQUAL_FATAL(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	const char *rq = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
	CU_ASSERT_EQUAL(write(fd, rq, strlen(rq)), (ssize_t)strlen(rq));
	while ((n = read(fd, resp + got, (1 << 20) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	CU_ASSERT(strncmp(resp, "HTTP/1.0 200", 12) == 0 || strncmp(resp, "HTTP/1.1 200", 12) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(resp, "text/plain; version=0.0.4"));
	CU_ASSERT_PTR_NOT_NULL(strstr(resp, "nvmeof_namespace_commands_total{"));
	free(resp);
	metrics_server_stop(srv);
	CU_ASSERT_PTR_NULL(
		metrics_server_start(tgt, "iscsi://127.0.0.1:0", NULL, err, sizeof(err)));
	endpoint_limits(tgt);
#endif
	metrics_buf_free(&b);
	nvmf_tgt_destroy(tgt);
}

static int suite_init(void)
{
	reactors_configure(4096, 0, REACTOR_PIN_OFF);
	return reactors_start(2);
}

static int suite_fini(void)
{
	reactors_stop();
	return 0;
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "label escaping", test_labels },
		{ "samples", test_samples },
		{ "histogram buckets", test_hist },
		{ "families of a target, and the endpoint", test_target },
		CU_TEST_INFO_NULL,
	};

	return ut_run("target_metrics", suite_init, suite_fini, tests);
}
