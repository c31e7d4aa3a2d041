/* SPDX-License-Identifier: MIT */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/uri.h"
#include "ut.h"

struct listen_case {
	const char *in;
	int rc;
	enum uri_transport transport;
	const char *addr;
	uint16_t port;
	bool ipv6;
	const char *err_has; /* substring of the message on failure */
};

static const struct listen_case listen_cases[] = {
	{ "tcp://127.0.0.1:4420", 0, URI_TRANSPORT_TCP, "127.0.0.1", 4420, false, NULL },
	{ "tcp://127.0.0.1", 0, URI_TRANSPORT_TCP, "127.0.0.1", 4420, false, NULL },
	{ "tcp://127.0.0.1/", 0, URI_TRANSPORT_TCP, "127.0.0.1", 4420, false, NULL },
	{ "tcp://0.0.0.0:0", 0, URI_TRANSPORT_TCP, "0.0.0.0", 0, false, NULL },
	{ "rdma://10.0.0.1:4421", 0, URI_TRANSPORT_RDMA, "10.0.0.1", 4421, false, NULL },
	{ "rdma://10.0.0.1", 0, URI_TRANSPORT_RDMA, "10.0.0.1", 4420, false, NULL },
	{ "iscsi://10.0.0.1", 0, URI_TRANSPORT_ISCSI, "10.0.0.1", 3260, false, NULL },
	{ "iscsi://[::1]:3261", 0, URI_TRANSPORT_ISCSI, "::1", 3261, true, NULL },
	{ "tcp://[::]:4420", 0, URI_TRANSPORT_TCP, "::", 4420, true, NULL },
	{ "tcp://[fe80::1:2]", 0, URI_TRANSPORT_TCP, "fe80::1:2", 4420, true, NULL },
	{ "tcp://[::ffff:1.2.3.4]:9", 0, URI_TRANSPORT_TCP, "::ffff:1.2.3.4", 9, true, NULL },
	/* malformed */
	{ "", -EINVAL, 0, NULL, 0, false, "empty" },
	{ "udp://1.2.3.4:1", -EINVAL, 0, NULL, 0, false, "unknown listen URI" },
	{ "127.0.0.1:4420", -EINVAL, 0, NULL, 0, false, "unknown listen URI" },
	{ "tcp://", -EINVAL, 0, NULL, 0, false, "missing host" },
	{ "tcp://:4420", -EINVAL, 0, NULL, 0, false, "missing host" },
	{ "tcp://1.2.3.4:", -EINVAL, 0, NULL, 0, false, "empty port" },
	{ "tcp://1.2.3.4:65536", -EINVAL, 0, NULL, 0, false, "invalid port" },
	{ "tcp://1.2.3.4:-1", -EINVAL, 0, NULL, 0, false, "invalid port" },
	{ "tcp://1.2.3.4:44x", -EINVAL, 0, NULL, 0, false, "invalid port" },
	{ "tcp://::1:4420", -EINVAL, 0, NULL, 0, false, "brackets" },
	{ "tcp://[::1:4420", -EINVAL, 0, NULL, 0, false, "unterminated" },
	{ "tcp://[zz::1]:4420", -EINVAL, 0, NULL, 0, false, "invalid IPv6" },
	{ "tcp://[]:4420", -EINVAL, 0, NULL, 0, false, "invalid IPv6" },
	{ "tcp://[::1]x", -EINVAL, 0, NULL, 0, false, "unexpected" },
	{ "tcp://1.2.3:4420", -EINVAL, 0, NULL, 0, false, "not an IPv4" },
	{ "tcp://localhost:4420", -EINVAL, 0, NULL, 0, false, "not an IPv4" },
	{ "tcp://1.2.3.4:4420/nqn.x", -EINVAL, 0, NULL, 0, false, "path" },
	{ "tcp://u%p@1.2.3.4:4420", -EINVAL, 0, NULL, 0, false, "credentials" },
	{ "tcp://1.2 .3.4", -EINVAL, 0, NULL, 0, false, "invalid character" },
};

static void test_listen(void)
{
	for (size_t i = 0; i < sizeof(listen_cases) / sizeof(listen_cases[0]); i++) {
		const struct listen_case *c = &listen_cases[i];
		struct uri_listen u;
		char err[256] = "";
		int rc = uri_parse_listen(c->in, &u, err, sizeof(err));

		CU_ASSERT_EQUAL(rc, c->rc);
		if (rc != c->rc)
			fprintf(stderr, "case '%s': rc %d (%s)\n", c->in, rc, err);
		if (c->rc == 0 && rc == 0) {
			CU_ASSERT_EQUAL(u.transport, c->transport);
			CU_ASSERT_STRING_EQUAL(u.addr, c->addr);
			CU_ASSERT_EQUAL(u.port, c->port);
			CU_ASSERT_EQUAL(u.ipv6, c->ipv6);
		} else if (c->rc != 0) {
			CU_ASSERT_PTR_NOT_NULL(strstr(err, c->err_has));
			CU_ASSERT_PTR_NULL(strchr(err, '\n'));
			if (!strstr(err, c->err_has))
				fprintf(stderr, "case '%s': message '%s'\n", c->in, err);
		}
	}
}

#define DISC "nqn.2014-08.org.nvmexpress.discovery"

struct target_case {
	const char *in;
	int rc;
	enum uri_transport transport;
	const char *host;
	uint16_t port;
	const char *name;
	bool discovery;
	uint32_t nsid;
	uint64_t lun;
	const char *user, *secret;
	const char *err_has;
};

static const struct target_case target_cases[] = {
	{ "nvme+tcp://10.0.0.1/nqn.2026-11.io.nvmeof:default", 0, URI_TRANSPORT_TCP, "10.0.0.1",
	  4420, "nqn.2026-11.io.nvmeof:default", false, 0, 0, "", "", NULL },
	{ "nvme+tcp://10.0.0.1:4421/nqn.a:b/7", 0, URI_TRANSPORT_TCP, "10.0.0.1", 4421, "nqn.a:b",
	  false, 7, 0, "", "", NULL },
	{ "nvme+tcp://10.0.0.1/nqn.a:b/", 0, URI_TRANSPORT_TCP, "10.0.0.1", 4420, "nqn.a:b", false,
	  0, 0, "", "", NULL },
	{ "nvme+tcp://host-1.example/nqn.a%3Ab%2Fc", 0, URI_TRANSPORT_TCP, "host-1.example", 4420,
	  "nqn.a:b/c", false, 0, 0, "", "", NULL },
	{ "nvme+tcp://10.0.0.1", 0, URI_TRANSPORT_TCP, "10.0.0.1", 8009, DISC, true, 0, 0, "", "",
	  NULL },
	{ "nvme+tcp://10.0.0.1/", 0, URI_TRANSPORT_TCP, "10.0.0.1", 8009, DISC, true, 0, 0, "", "",
	  NULL },
	{ "nvme+tcp://10.0.0.1/" DISC, 0, URI_TRANSPORT_TCP, "10.0.0.1", 8009, DISC, true, 0, 0, "",
	  "", NULL },
	{ "nvme+tcp://10.0.0.1:4420/" DISC, 0, URI_TRANSPORT_TCP, "10.0.0.1", 4420, DISC, true, 0,
	  0, "", "", NULL },
	{ "nvme+tcp://10.0.0.1:4420", 0, URI_TRANSPORT_TCP, "10.0.0.1", 4420, DISC, true, 0, 0, "",
	  "", NULL },
	{ "nvme+rdma://[fd00::2]/nqn.x/4294967294", 0, URI_TRANSPORT_RDMA, "fd00::2", 4420, "nqn.x",
	  false, 4294967294u, 0, "", "", NULL },
	{ "iscsi://10.0.0.1/iqn.2026-11.io.nvmeof:default/0", 0, URI_TRANSPORT_ISCSI, "10.0.0.1",
	  3260, "iqn.2026-11.io.nvmeof:default", false, 0, 0, "", "", NULL },
	{ "iscsi://alice%s3cr3t@10.0.0.1:3261/iqn.x:y/3", 0, URI_TRANSPORT_ISCSI, "10.0.0.1", 3261,
	  "iqn.x:y", false, 0, 3, "alice", "s3cr3t", NULL },
	{ "iscsi://u%p@ss%x@[::1]/eui.0123456789abcdef/1", 0, URI_TRANSPORT_ISCSI, "::1", 3260,
	  "eui.0123456789abcdef", false, 0, 1, "u", "p@ss%x", NULL },
	/* malformed */
	{ "", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL, "empty" },
	{ "tcp://10.0.0.1/nqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "unknown target URI" },
	{ "nvme+tcp:///nqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL, "missing host" },
	{ "nvme+tcp://10.0.0.1:0/nqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "port 0" },
	{ "nvme+tcp://10.0.0.1:99999/nqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "invalid port" },
	{ "nvme+tcp://fe80::1/nqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "brackets" },
	{ "nvme+tcp://10.0.0.1/nqn.x/0", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "invalid NSID" },
	{ "nvme+tcp://10.0.0.1/nqn.x/4294967295", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "invalid NSID" },
	{ "nvme+tcp://10.0.0.1/nqn.x/1a", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "invalid NSID" },
	{ "nvme+tcp://10.0.0.1/nqn.x/1/2", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "after the NSID" },
	{ "nvme+tcp://10.0.0.1//1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "without a subsystem NQN" },
	{ "nvme+tcp://10.0.0.1/" DISC "/1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "no namespaces" },
	{ "nvme+tcp://10.0.0.1/foo", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "does not start with 'nqn.'" },
	{ "nvme+tcp://10.0.0.1/nqn.a%2", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "truncated percent" },
	{ "nvme+tcp://10.0.0.1/nqn.a%zz", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "bad percent" },
	{ "nvme+tcp://10.0.0.1/nqn.a%00", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "%00" },
	{ "nvme+tcp://10.0.0.1/nqn.a b", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "space" },
	{ "nvme+tcp://u%p@10.0.0.1/nqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "credentials" },
	{ "iscsi://10.0.0.1/iqn.x", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "missing LUN" },
	{ "iscsi://10.0.0.1/iqn.x/", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "missing LUN" },
	{ "iscsi://10.0.0.1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "missing target IQN" },
	{ "iscsi://10.0.0.1/iqn.x/16384", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "invalid LUN" },
	{ "iscsi://10.0.0.1/nqn.x/1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "must start with iqn." },
	{ "iscsi://alice@10.0.0.1/iqn.x/1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "USER%SECRET" },
	{ "iscsi://%s@10.0.0.1/iqn.x/1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "empty CHAP user" },
	{ "iscsi://a%@10.0.0.1/iqn.x/1", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "empty CHAP secret" },
	{ "iscsi://10.0.0.1/iqn.x/1/2", -EINVAL, 0, NULL, 0, NULL, false, 0, 0, NULL, NULL,
	  "after the LUN" },
};

static void test_target(void)
{
	for (size_t i = 0; i < sizeof(target_cases) / sizeof(target_cases[0]); i++) {
		const struct target_case *c = &target_cases[i];
		struct uri_target u;
		char err[256] = "";
		int rc = uri_parse_target(c->in, &u, err, sizeof(err));

		CU_ASSERT_EQUAL(rc, c->rc);
		if (rc != c->rc)
			fprintf(stderr, "case '%s': rc %d (%s)\n", c->in, rc, err);
		if (c->rc == 0 && rc == 0) {
			CU_ASSERT_EQUAL(u.transport, c->transport);
			CU_ASSERT_STRING_EQUAL(u.host, c->host);
			CU_ASSERT_EQUAL(u.port, c->port);
			CU_ASSERT_STRING_EQUAL(u.name, c->name);
			CU_ASSERT_EQUAL(u.discovery, c->discovery);
			CU_ASSERT_EQUAL(u.nsid, c->nsid);
			CU_ASSERT_EQUAL(u.lun, c->lun);
			CU_ASSERT_STRING_EQUAL(u.user, c->user);
			CU_ASSERT_STRING_EQUAL(u.secret, c->secret);
		} else if (c->rc != 0) {
			CU_ASSERT_PTR_NOT_NULL(strstr(err, c->err_has));
			CU_ASSERT_PTR_NULL(strchr(err, '\n'));
			if (!strstr(err, c->err_has))
				fprintf(stderr, "case '%s': message '%s'\n", c->in, err);
		}
	}
}

static void test_long_names(void)
{
	char in[600], err[256];
	struct uri_target u;
	struct uri_listen l;
	int n;

	/* 223-character NQN fits; 224 does not. */
	n = snprintf(in, sizeof(in), "nvme+tcp://h/nqn.");
	memset(in + n, 'a', 219);
	in[n + 219] = '\0';
	CU_ASSERT_EQUAL(uri_parse_target(in, &u, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(strlen(u.name), 223);
	strcat(in, "a");
	CU_ASSERT_EQUAL(uri_parse_target(in, &u, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "too long"));

	n = snprintf(in, sizeof(in), "nvme+tcp://");
	memset(in + n, 'h', 300);
	strcpy(in + n + 300, "/nqn.x");
	CU_ASSERT_EQUAL(uri_parse_target(in, &u, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "too long"));

	/* NULL err is allowed. */
	CU_ASSERT_EQUAL(uri_parse_listen("bogus", &l, NULL, 0), -EINVAL);
}

static void test_format(void)
{
	struct uri_listen u;
	char buf[128];

	CU_ASSERT_EQUAL(uri_parse_listen("tcp://[::1]", &u, NULL, 0), 0);
	uri_format_listen(buf, sizeof(buf), &u);
	CU_ASSERT_STRING_EQUAL(buf, "tcp://[::1]:4420");
	CU_ASSERT_EQUAL(uri_parse_listen("iscsi://127.0.0.1", &u, NULL, 0), 0);
	uri_format_listen(buf, sizeof(buf), &u);
	CU_ASSERT_STRING_EQUAL(buf, "iscsi://127.0.0.1:3260");
	CU_ASSERT_STRING_EQUAL(uri_transport_name(URI_TRANSPORT_RDMA), "rdma");
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "listen URIs", test_listen },
		{ "target URIs", test_target },
		{ "length limits", test_long_names },
		{ "format", test_format },
		CU_TEST_INFO_NULL,
	};

	return ut_run("uri", NULL, NULL, tests);
}
