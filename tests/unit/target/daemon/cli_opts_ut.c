/* SPDX-License-Identifier: MIT */
/* nvmeof-target command line parsing: defaults, every flag, and one-line errors. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli_opts.h"
#include "core/nvmf.h"
#include "ut.h"

#define MAXARGS 16

static int parse(struct cli_opts *o, char *err, const char *const *args)
{
	char *argv[MAXARGS + 2];
	int argc = 0;

	argv[argc++] = (char *)"nvmeof-target";
	while (args && *args && argc < MAXARGS + 1)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	err[0] = '\0';
	return cli_parse(argc, argv, o, err, 256);
}

static void test_defaults(void)
{
	struct cli_opts o;
	char err[256];

	CU_ASSERT_EQUAL(parse(&o, err, NULL), 0);
	CU_ASSERT_EQUAL(o.nns, 1);
	CU_ASSERT_STRING_EQUAL(o.ns[0], "ram:1G");
	CU_ASSERT_STRING_EQUAL(o.nqn, NVMF_DEFAULT_NQN);
	CU_ASSERT_EQUAL(o.nlisten, 2);
	CU_ASSERT_STRING_EQUAL(o.listen[0].addr, "127.0.0.1");
	CU_ASSERT_EQUAL(o.listen[0].port, 4420);
	CU_ASSERT_EQUAL(o.listen[0].transport, URI_TRANSPORT_TCP);
	CU_ASSERT_STRING_EQUAL(o.listen[1].addr, "127.0.0.1");
	CU_ASSERT_EQUAL(o.listen[1].port, 3260);
	CU_ASSERT_EQUAL(o.listen[1].transport, URI_TRANSPORT_ISCSI);
	CU_ASSERT_EQUAL(o.discovery_port, 8009);
	CU_ASSERT_EQUAL(o.nhosts, 0);
	CU_ASSERT_EQUAL(o.reactors, 0);
	CU_ASSERT_EQUAL(o.pin, REACTOR_PIN_AUTO);
	CU_ASSERT_EQUAL(o.poll, REACTOR_POLL_ADAPTIVE);
	CU_ASSERT_EQUAL(o.poll_max_us, 0);
	CU_ASSERT_FALSE(o.in_capsule_set);
	CU_ASSERT_FALSE(o.tcp_zerocopy_set);
	CU_ASSERT_EQUAL(o.log_level, -1);
	CU_ASSERT_PTR_NULL(o.config);
	CU_ASSERT_FALSE(o.daemon);
}

static void test_all_flags(void)
{
	static const char *const args[] = {
		"--ns", "null:2G", "--ns", "/tmp/x.img", "--block-size", "4096",
		"--nqn", "nqn.2026-11.io.example:a", "--listen", "tcp://[::1]:4421",
		"--listen", "tcp://10.0.0.1", "--allow-host", "nqn.2014-08.org.nvmexpress:uuid:1",
		"--discovery-port", "0", NULL
	};
	static const char *const tune[] = { "--reactors", "3",
					    "--no-pin",   "--in-capsule",
					    "16K",        "--max-queue-depth",
					    "256",        "--max-io-size",
					    "1M",         "--tcp-zerocopy-min",
					    "32K",        "-vv",
					    "--daemon",   "--pidfile",
					    "/run/x.pid", "--syslog",
					    NULL };
	struct cli_opts o;
	char err[256];

	CU_ASSERT_EQUAL(parse(&o, err, args), 0);
	CU_ASSERT_EQUAL(o.nns, 2);
	CU_ASSERT_STRING_EQUAL(o.ns[1], "/tmp/x.img");
	CU_ASSERT_EQUAL(o.block_size, 4096);
	CU_ASSERT_STRING_EQUAL(o.nqn, "nqn.2026-11.io.example:a");
	CU_ASSERT_EQUAL(o.nlisten, 2);
	CU_ASSERT_TRUE(o.listen[0].ipv6);
	CU_ASSERT_EQUAL(o.listen[0].port, 4421);
	CU_ASSERT_EQUAL(o.listen[1].port, 4420);
	CU_ASSERT_EQUAL(o.nhosts, 1);
	CU_ASSERT_EQUAL(o.discovery_port, 0);

	CU_ASSERT_EQUAL(parse(&o, err, tune), 0);
	CU_ASSERT_EQUAL(o.reactors, 3);
	CU_ASSERT_EQUAL(o.pin, REACTOR_PIN_OFF);
	CU_ASSERT_TRUE(o.in_capsule_set);
	CU_ASSERT_EQUAL(o.in_capsule, 16384);
	CU_ASSERT_EQUAL(o.max_queue_depth, 256);
	CU_ASSERT_EQUAL(o.max_io_size, 1048576);
	CU_ASSERT_TRUE(o.tcp_zerocopy_set);
	CU_ASSERT_EQUAL(o.tcp_zerocopy_min, 32768);
	CU_ASSERT_EQUAL(o.log_level, 4); /* notice + 2 = debug */
	CU_ASSERT_TRUE(o.daemon);
	CU_ASSERT_STRING_EQUAL(o.pidfile, "/run/x.pid");
	CU_ASSERT_TRUE(o.syslog);

	{
		static const char *const off[] = { "--poll", "off", NULL };
		static const char *const busy[] = { "--poll", "busy", "--poll-max-us", "250",
						    NULL };

		CU_ASSERT_EQUAL(parse(&o, err, off), 0);
		CU_ASSERT_EQUAL(o.poll, REACTOR_POLL_OFF);
		CU_ASSERT_EQUAL(parse(&o, err, busy), 0);
		CU_ASSERT_EQUAL(o.poll, REACTOR_POLL_BUSY);
		CU_ASSERT_EQUAL(o.poll_max_us, 250);
	}
	{
		static const char *const fg[] = { "-d", "--foreground", NULL };

		CU_ASSERT_EQUAL(parse(&o, err, fg), 0);
		CU_ASSERT_FALSE(o.daemon);
	}
}

static void test_config_and_misc(void)
{
	static const char *const cfg[] = { "-c", "/etc/nvmeof.json", "--reactors", "2", NULL };
	static const char *const lvl[] = { "--log-level", "warn", "-v", NULL };
	static const char *const ver[] = { "-V", NULL };
	static const char *const zero_ic[] = { "--in-capsule", "0", NULL };
	static const char *const fronts[] = { "--max-control-connections",
					      "4",
					      "--metrics-timeout",
					      "2",
					      "--metrics-per-address",
					      "3",
					      NULL };
	struct cli_opts o;
	char err[256];

	CU_ASSERT_EQUAL(parse(&o, err, cfg), 0);
	CU_ASSERT_STRING_EQUAL(o.config, "/etc/nvmeof.json");
	CU_ASSERT_EQUAL(o.nns, 0); /* the file says what to serve */
	CU_ASSERT_EQUAL(o.nlisten, 0);
	CU_ASSERT_EQUAL(parse(&o, err, lvl), 0);
	CU_ASSERT_EQUAL(o.log_level, 2); /* warn + 1 */
	CU_ASSERT_EQUAL(parse(&o, err, ver), 0);
	CU_ASSERT_TRUE(o.version);
	CU_ASSERT_EQUAL(parse(&o, err, zero_ic), 0);
	CU_ASSERT_TRUE(o.in_capsule_set);
	CU_ASSERT_EQUAL(o.in_capsule, 0);
	CU_ASSERT_EQUAL(o.max_control_connections, 0); /* 0: the server's default */
	CU_ASSERT_EQUAL(o.metrics_timeout_ms, 0);
	CU_ASSERT_EQUAL(parse(&o, err, fronts), 0);
	CU_ASSERT_EQUAL(o.max_control_connections, 4);
	CU_ASSERT_EQUAL(o.metrics_timeout_ms, 2000);
	CU_ASSERT_EQUAL(o.metrics_per_address, 3);
}

/* The quick flags that do not describe what to serve go with -c. */
static void test_config_with_flags(void)
{
	static const char *const ok[] = {
		"-c",   "x.json",         "--discovery-port", "0",          "--log-level",
		"info", "--stats-socket", "/tmp/s",           "--reactors", "2",
		NULL
	};
	static const char *const dflt[] = { "-c", "x.json", "--discovery-port", "8009", NULL };
	struct cli_opts o;
	char err[256];

	CU_ASSERT_EQUAL(parse(&o, err, ok), 0);
	CU_ASSERT_STRING_EQUAL(o.config, "x.json");
	CU_ASSERT_EQUAL(o.discovery_port, 0);
	CU_ASSERT_EQUAL(o.log_level, 3); /* info */
	CU_ASSERT_STRING_EQUAL(o.stats_socket, "/tmp/s");
	CU_ASSERT_EQUAL(o.reactors, 2);
	CU_ASSERT_EQUAL(o.nlisten, 0);
	CU_ASSERT_EQUAL(parse(&o, err, dflt), 0);
	CU_ASSERT_EQUAL(o.discovery_port, 8009);
}

struct bad_case {
	const char *args[6];
	const char *msg; /* substring of the one-line error */
};

static const struct bad_case bad_cases[] = {
	{ { "--bogus" }, "--bogus: unknown option" },
	{ { "-x" }, "-x: unknown option" },
	{ { "--ns" }, "--ns: missing argument" },
	{ { "-c" }, "-c: missing argument" },
	{ { "stray" }, "unexpected argument 'stray'" },
	{ { "--block-size", "1000" }, "--block-size: expected 512 or 4096" },
	{ { "--block-size", "4k" }, "--block-size" },
	{ { "--nqn", "foo" }, "--nqn: 'foo' is not an NQN" },
	{ { "--nqn", "nqn.a b" }, "--nqn" },
	{ { "--listen", "udp://1.2.3.4" }, "--listen: unknown listen URI" },
	{ { "--listen", "tcp://1.2.3.4:99999" }, "--listen: invalid port" },
	{ { "--listen", "tcp://::1" }, "brackets" },
	{ { "--discovery-port", "-1" }, "--discovery-port" },
	{ { "--discovery-port", "70000" }, "--discovery-port" },
	{ { "--allow-host", "host1" }, "--allow-host" },
	{ { "--reactors", "0" }, "--reactors: expected 1-1024" },
	{ { "--reactors", "two" }, "--reactors" },
	{ { "--in-capsule", "1000" }, "--in-capsule: expected a multiple of 16" },
	{ { "--in-capsule", "2M" }, "--in-capsule" },
	{ { "--max-queue-depth", "1" }, "--max-queue-depth: expected 2-4096" },
	{ { "--max-io-size", "3000" }, "--max-io-size" },
	{ { "--tcp-zerocopy-min", "65M" }, "--tcp-zerocopy-min" },
	{ { "--tcp-zerocopy-min", "lots" }, "--tcp-zerocopy-min" },
	{ { "--max-io-size", "12K" }, "--max-io-size: expected a power of 2" },
	{ { "--log-level", "loud" }, "--log-level" },
	{ { "--poll", "sometimes" }, "--poll: expected adaptive, off or busy" },
	{ { "--poll-max-us", "0" }, "--poll-max-us: expected 1-10000" },
	{ { "--poll-max-us", "20000" }, "--poll-max-us" },
	{ { "--max-control-connections", "0" }, "--max-control-connections: expected 1-1024" },
	{ { "--max-control-connections", "2000" }, "--max-control-connections" },
	{ { "--metrics-timeout", "0" }, "--metrics-timeout: expected 1-600 seconds" },
	{ { "--metrics-per-address", "65" }, "--metrics-per-address: expected 1-64" },
	{ { "-c", "x.json", "--ns", "ram:1M" },
	  "-c x.json and --ns conflict: the file sets what --ns would (drop one)" },
	{ { "--listen", "tcp://1.2.3.4", "-c", "x.json" }, "-c x.json and --listen conflict" },
	{ { "-c", "x.json", "--nqn", "nqn.2026-11.io.t:a" }, "and --nqn conflict" },
	{ { "-c", "x.json", "--discovery-port", "4430" }, "and --discovery-port conflict" },
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct cli_opts o;
		char err[256];

		CU_ASSERT_EQUAL(parse(&o, err, bad_cases[i].args), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad_cases[i].msg));
		CU_ASSERT_PTR_NULL(strchr(err, '\n'));
		if (!strstr(err, bad_cases[i].msg))
			fprintf(stderr, "case %zu: '%s'\n", i, err);
	}
}

/* The DH-HMAC-CHAP work limits: taken in range, refused out of it with the flag named. */
static void test_auth_limits(void)
{
	static const char *const ok[] = { "--auth-threads=4", "--auth-max-pending=256",
					  "--auth-max-pending-host=2", "--auth-max-pending-addr=3",
					  NULL };
	static const struct {
		const char *args[3];
		const char *msg;
	} bad[] = {
		{ { "--auth-threads", "0" }, "--auth-threads: expected 1-64" },
		{ { "--auth-threads", "65" }, "--auth-threads: expected 1-64" },
		{ { "--auth-max-pending", "0" }, "--auth-max-pending: expected 1-4096" },
		{ { "--auth-max-pending-host", "4097" }, "--auth-max-pending-host: expected" },
		{ { "--auth-max-pending-addr", "x" }, "--auth-max-pending-addr: expected" },
	};
	struct cli_opts o;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(parse(&o, err, ok), 0);
	CU_ASSERT_EQUAL(o.auth_threads, 4);
	CU_ASSERT_EQUAL(o.auth_max_pending, 256);
	CU_ASSERT_EQUAL(o.auth_max_pending_host, 2);
	CU_ASSERT_EQUAL(o.auth_max_pending_addr, 3);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(parse(&o, err, bad[i].args), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].msg));
		if (!strstr(err, bad[i].msg))
			fprintf(stderr, "case %zu: '%s'\n", i, err);
	}
	CU_ASSERT_EQUAL(parse(&o, err, NULL), 0); /* not given: 0, the target default */
	CU_ASSERT_EQUAL(o.auth_threads, 0);
	CU_ASSERT_EQUAL(o.auth_max_pending_addr, 0);
}

static void test_usage(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cli_usage(f);
	fclose(f);
	/* Every long option is documented. */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--ns SPEC"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--listen URI"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--discovery-port"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--allow-host"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--in-capsule"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--max-queue-depth"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--log-level"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--config"));
	free(buf);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "defaults", test_defaults },
		{ "every flag", test_all_flags },
		{ "config, levels, version", test_config_and_misc },
		{ "-c with flags", test_config_with_flags },
		{ "errors", test_errors },
		{ "DH-HMAC-CHAP work limits", test_auth_limits },
		{ "usage", test_usage },
		CU_TEST_INFO_NULL,
	};

	return ut_run("cli_opts", NULL, NULL, tests);
}
