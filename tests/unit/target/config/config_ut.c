/* SPDX-License-Identifier: MIT */
/*
 * Configuration loader: every nvmetcli fixture (loaded, or refused naming the right
 * key), every example config in conf/, accepted value spellings, and broken inputs, each
 * of which must give a clear error naming the key path and never a partial model.
 */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include <CUnit/Basic.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "config/config_file.h"
#include "ut.h"

#ifndef CONFIG_FIXTURE_DIR
#define CONFIG_FIXTURE_DIR "tests/fixtures/nvmetcli"
#endif
#ifndef CONFIG_CONF_DIR
#define CONFIG_CONF_DIR "conf"
#endif

static char g_tmpdir[256];
static char g_file[300];   /* a 1 MiB regular file, the "device" of file namespaces */
static char g_errbuf[1024];

static const char *fixture_dir(void)
{
	const char *env = getenv("NVMETCLI_FIXTURES");

	return env && *env ? env : CONFIG_FIXTURE_DIR;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Single quotes -> double quotes and @FILE@ -> g_file, so JSON reads well in tables. */
static char *q(const char *tmpl)
{
	size_t cap = strlen(tmpl) * 2 + strlen(g_file) * 8 + 1;
	char *out = malloc(cap), *o = out;

	while (*tmpl) {
		if (!strncmp(tmpl, "@FILE@", 6)) {
			o += sprintf(o, "%s", g_file);
			tmpl += 6;
		} else {
			*o++ = *tmpl == '\'' ? '"' : *tmpl;
			tmpl++;
		}
	}
	*o = '\0';
	return out;
}

/*
 * What a test does to a saved nvmetcli file before loading it: listen on 127.0.0.1 and
 * point file namespaces at our own file (json-c in memory, the file stays untouched).
 */
static char *localize(const char *text)
{
	json_object *root = json_tokener_parse(text), *arr, *v;
	size_t i, j;
	char *out;

	if (!root)
		return NULL;
	if (json_object_object_get_ex(root, "ports", &arr))
		for (i = 0; i < json_object_array_length(arr); i++) {
			json_object *port = json_object_array_get_idx(arr, i), *addr, *fam;

			if (!json_object_object_get_ex(port, "addr", &addr))
				continue;
			if (json_object_object_get_ex(addr, "adrfam", &fam) &&
			    strcmp(json_object_get_string(fam), "ipv4") &&
			    strcmp(json_object_get_string(fam), "ipv6"))
				continue; /* loop/fc addresses are not IP addresses */
			json_object_object_add(addr, "traddr", json_object_new_string("127.0.0.1"));
			json_object_object_add(addr, "adrfam", json_object_new_string("ipv4"));
		}
	if (json_object_object_get_ex(root, "subsystems", &arr))
		for (i = 0; i < json_object_array_length(arr); i++) {
			json_object *s = json_object_array_get_idx(arr, i), *nss;

			if (!json_object_object_get_ex(s, "namespaces", &nss))
				continue;
			for (j = 0; j < json_object_array_length(nss); j++) {
				json_object *dev;

				if (!json_object_object_get_ex(json_object_array_get_idx(nss, j),
							       "device", &dev) ||
				    !json_object_object_get_ex(dev, "path", &v))
					continue;
				if (!strncmp(json_object_get_string(v), "ram:", 4) ||
				    !strncmp(json_object_get_string(v), "null:", 5))
					continue;
				json_object_object_add(dev, "path", json_object_new_string(g_file));
			}
		}
	out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
	return out;
}

static bool has_warning(const struct tgt_config *cfg, const char *needle)
{
	unsigned int i;

	for (i = 0; i < cfg->nwarnings; i++)
		if (strstr(cfg->warnings[i], needle))
			return true;
	return false;
}

/* ---- Fixtures -------------------------------------------------------------------------------- */

struct fixture_case {
	const char *file;
	int rc;		 /* expected after localize() */
	const char *err; /* substring of the message when rc != 0 */
};

static const struct fixture_case fixture_cases[] = {
	{"tcp.json", 0, NULL},
#ifdef HAVE_RDMA
	{"rdma.json", 0, NULL},
#else
	{"rdma.json", -ENOTSUP, "rdma.json: ports[0].addr.trtype: rdma transport is not supported"},
#endif
	{"loop.json", -ENOTSUP,
	 "loop.json: ports[0].addr.trtype: loop transport is not supported by nvmeof-target"},
	{"fc.json", -ENOTSUP,
	 "fc.json: ports[0].addr.trtype: fc transport is not supported by nvmeof-target"},
};

static const struct fixture_case *find_fixture_case(const char *file)
{
	size_t i;

	for (i = 0; i < sizeof(fixture_cases) / sizeof(fixture_cases[0]); i++)
		if (!strcmp(fixture_cases[i].file, file))
			return &fixture_cases[i];
	return NULL;
}

static void test_every_fixture(void)
{
	DIR *d = opendir(fixture_dir());
	struct dirent *de;
	unsigned int seen = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((de = readdir(d))) {
		const struct fixture_case *fc;
		struct tgt_config *cfg = NULL;
		char path[1024], *text, *local;
		size_t len = strlen(de->d_name);
		int rc;

		if (len < 5 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		fc = find_fixture_case(de->d_name);
		CU_ASSERT_PTR_NOT_NULL(fc); /* a new fixture needs a row in the table */
		if (!fc) {
			fprintf(stderr, "no expectation for fixture %s\n", de->d_name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", fixture_dir(), de->d_name);
		text = read_text(path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		local = localize(text);
		CU_ASSERT_PTR_NOT_NULL_FATAL(local);
		rc = config_load_string(local, de->d_name, &cfg, g_errbuf, sizeof(g_errbuf));
		if (rc != fc->rc)
			fprintf(stderr, "%s: rc %d, expected %d: %s\n", de->d_name, rc, fc->rc,
				g_errbuf);
		CU_ASSERT_EQUAL(rc, fc->rc);
		if (fc->rc) {
			CU_ASSERT_PTR_NULL(cfg);
			CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, fc->err));
		} else {
			CU_ASSERT_PTR_NOT_NULL(cfg);
		}
		config_free(cfg);

		/* Unchanged, the file loads through config_load() to the same verdict unless
		 * the saved device path is absent here (then that key is named). */
		cfg = NULL;
		rc = config_load(path, &cfg, g_errbuf, sizeof(g_errbuf));
		if (fc->rc) {
			if (rc != fc->rc)
				fprintf(stderr, "%s unchanged: rc %d: %s\n", path, rc, g_errbuf);
			CU_ASSERT_EQUAL(rc, fc->rc);
		} else if (rc != 0) {
			/* the saved device is not on this machine: that key and path are named */
			CU_ASSERT_EQUAL(rc, -ENOENT);
			CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "subsystems[0].namespaces[0]."
								"device.path: /dev/"));
			CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, ": No such file or directory"));
			CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, path));
		}
		config_free(cfg);
		free(text);
		free(local);
		seen++;
	}
	closedir(d);
	CU_ASSERT(seen >= 4);
}

/* tcp.json carries nearly every key nvmetcli writes: check what they became. */
static void test_tcp_fixture_model(void)
{
	struct tgt_config *cfg = NULL;
	const struct config_subsys *s;
	const struct config_port *p;
	const struct config_ns *ns;
	static const uint8_t uuid[16] = { 0x3b, 0x8e, 0x6a, 0x1f, 0x0c, 0x42, 0x4d, 0x7e,
					  0x9a, 0x15, 0x6f, 0x2c, 0x81, 0xd0, 0xe4, 0xb9 };
	char path[1024], *text, *local;

	snprintf(path, sizeof(path), "%s/tcp.json", fixture_dir());
	text = read_text(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	local = localize(text);
	CU_ASSERT_EQUAL_FATAL(config_load_string(local, "tcp.json", &cfg, g_errbuf,
						 sizeof(g_errbuf)),
			      0);
	CU_ASSERT_EQUAL(cfg->nports, 1);
	CU_ASSERT_EQUAL(cfg->nsubsystems, 1);
	CU_ASSERT_EQUAL(cfg->nhosts, 0);
	CU_ASSERT_PTR_NULL(cfg->iscsi_json);

	p = config_find_port(cfg, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p->addr.trtype, "tcp");
	CU_ASSERT_STRING_EQUAL(p->addr.adrfam, "ipv4");
	CU_ASSERT_STRING_EQUAL(p->addr.traddr, "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(p->addr.trsvcid, "4420");
	CU_ASSERT_EQUAL(p->addr.treq, NVMF_TREQ_SECURE_NOT_SPECIFIED);
	CU_ASSERT_STRING_EQUAL(p->advertise, "");
	CU_ASSERT_EQUAL(p->inline_data_size, 16384);
	CU_ASSERT_EQUAL(p->nsubsystems, 1);
	CU_ASSERT_STRING_EQUAL(p->subsystems[0], "scratch-pool");
	CU_ASSERT_EQUAL(p->nreferrals, 0);
	CU_ASSERT_EQUAL(p->nana_groups, 1);
	CU_ASSERT_EQUAL(p->ana_groups[0].grpid, 1);
	CU_ASSERT_STRING_EQUAL(p->ana_groups[0].state, "optimized");

	s = config_find_subsys(cfg, "scratch-pool");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_TRUE(s->allow_any_host);
	CU_ASSERT_STRING_EQUAL(s->serial, "5e1f0c2a9b7d4e33");
	CU_ASSERT_STRING_EQUAL(s->model, "Linux");
	CU_ASSERT_STRING_EQUAL(s->version, "1.3");
	CU_ASSERT_EQUAL(s->cntlid_min, 1);
	CU_ASSERT_EQUAL(s->cntlid_max, 65519);
	CU_ASSERT_EQUAL(s->nallowed_hosts, 0);
	ns = config_find_ns(s, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_TRUE(ns->enable);
	CU_ASSERT_STRING_EQUAL(ns->path, g_file);
	CU_ASSERT_FALSE(ns->has_nguid); /* all-zero NGUID means "not given" */
	CU_ASSERT_TRUE(ns->has_uuid);
	CU_ASSERT_EQUAL(memcmp(ns->uuid, uuid, 16), 0);
	CU_ASSERT_FALSE(ns->has_eui64);
	CU_ASSERT_EQUAL(ns->ana_grpid, 1);
	CU_ASSERT_PTR_NULL(config_find_ns(s, 2));
	/* "scratch-pool" loads, but is not an NVMe Qualified Name. */
	CU_ASSERT_TRUE(has_warning(cfg, "subsystems[0].nqn: \"scratch-pool\" is not an NVMe "
					"Qualified Name"));
	config_free(cfg);
	free(text);
	free(local);
}

/* loop.json carries a host and an allowed host: served over TCP instead, they load. */
static void test_loop_fixture_as_tcp(void)
{
	struct tgt_config *cfg = NULL;
	json_object *root, *port, *addr;
	char path[1024], *text, *local;

	snprintf(path, sizeof(path), "%s/loop.json", fixture_dir());
	text = read_text(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	root = json_tokener_parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	port = json_object_array_get_idx(json_object_object_get(root, "ports"), 0);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(port, "addr", &addr));
	json_object_object_add(addr, "trtype", json_object_new_string("tcp"));
	json_object_object_add(addr, "adrfam", json_object_new_string("ipv4"));
	json_object_object_add(addr, "trsvcid", json_object_new_string("4420"));
	local = localize(json_object_to_json_string(root));
	json_object_put(root);
	CU_ASSERT_EQUAL_FATAL(config_load_string(local, "loop-as-tcp.json", &cfg, g_errbuf,
						 sizeof(g_errbuf)),
			      0);
	CU_ASSERT_EQUAL(cfg->nhosts, 1);
	CU_ASSERT_STRING_EQUAL(cfg->hosts[0], "hostnqn");
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].addr.traddr, "127.0.0.1");
	CU_ASSERT_FALSE(cfg->subsystems[0].allow_any_host);
	CU_ASSERT_EQUAL(cfg->subsystems[0].nallowed_hosts, 1);
	CU_ASSERT_STRING_EQUAL(cfg->subsystems[0].allowed_hosts[0], "hostnqn");
	CU_ASSERT_TRUE(cfg->subsystems[0].namespaces[0].has_nguid);
	CU_ASSERT_EQUAL(cfg->subsystems[0].namespaces[0].nguid[0], 0xef);
	CU_ASSERT_EQUAL(cfg->subsystems[0].namespaces[0].nguid[15], 0xa8);
	CU_ASSERT_TRUE(has_warning(cfg, "hosts[0].nqn: \"hostnqn\" is not an NVMe Qualified"));
	config_free(cfg);
	free(text);
	free(local);
}

/* ---- Example configs ------------------------------------------------------------------------- */

static void test_conf_examples(void)
{
	DIR *d = opendir(CONFIG_CONF_DIR);
	struct dirent *de;
	unsigned int seen = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((de = readdir(d))) {
		struct tgt_config *cfg = NULL;
		char path[1024], *text, *local;
		size_t len = strlen(de->d_name);
		int rc;

		if (len < 5 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", CONFIG_CONF_DIR, de->d_name);
		text = read_text(path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		/* Only file paths are rewritten: addresses stay as shipped. */
		local = localize(text);
		{
			/* undo the traddr rewrite: reload the original addresses */
			struct tgt_config *orig = NULL;

			rc = config_load_string(text, de->d_name, &orig, g_errbuf,
						sizeof(g_errbuf));
			if (rc && !strstr(g_errbuf, "device.path"))
				fprintf(stderr, "%s: %s\n", de->d_name, g_errbuf);
			CU_ASSERT(rc == 0 || strstr(g_errbuf, "device.path") != NULL);
			config_free(orig);
		}
		rc = config_load_string(local, de->d_name, &cfg, g_errbuf, sizeof(g_errbuf));
		if (rc)
			fprintf(stderr, "%s: %s\n", de->d_name, g_errbuf);
		CU_ASSERT_EQUAL(rc, 0);
		if (!rc) {
			/* Examples are clean: no warnings at all. */
			CU_ASSERT_EQUAL(cfg->nwarnings, 0);
			CU_ASSERT(cfg->nports >= 1);
			CU_ASSERT(cfg->nsubsystems >= 1);
		}
		config_free(cfg);
		free(text);
		free(local);
		seen++;
	}
	closedir(d);
	CU_ASSERT(seen >= 2);
}

static void test_conf_main_example(void)
{
	struct tgt_config *cfg = NULL;
	char *text, *local;

	text = read_text(CONFIG_CONF_DIR "/nvmeof-target.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	local = localize(text);
	CU_ASSERT_EQUAL_FATAL(config_load_string(local, "nvmeof-target.json", &cfg, g_errbuf,
						 sizeof(g_errbuf)),
			      0);
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].advertise, "192.0.2.10");
	CU_ASSERT_FALSE(cfg->subsystems[0].allow_any_host);
	CU_ASSERT_EQUAL(cfg->subsystems[0].nallowed_hosts, 1);
	CU_ASSERT_TRUE(cfg->subsystems[0].namespaces[0].has_uuid);
	CU_ASSERT_TRUE(cfg->subsystems[0].namespaces[0].has_nguid);
	CU_ASSERT_TRUE(cfg->limits.tcp_zerocopy_set);
	CU_ASSERT_EQUAL(cfg->limits.tcp_zerocopy_min, 0);
	CU_ASSERT_EQUAL(cfg->limits.max_control_connections, 16);
	CU_ASSERT_EQUAL(cfg->limits.metrics_timeout_ms, 5000);
	CU_ASSERT_EQUAL(cfg->limits.metrics_per_address, 8);
	CU_ASSERT_EQUAL(cfg->limits.auth_threads, 3);
	CU_ASSERT_EQUAL(cfg->limits.auth_max_pending, 128);
	CU_ASSERT_EQUAL(cfg->limits.auth_max_pending_host, 16);
	CU_ASSERT_EQUAL(cfg->limits.auth_max_pending_addr, 16);
	config_free(cfg);
	free(text);
	free(local);

	text = read_text(CONFIG_CONF_DIR "/ram-demo.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL_FATAL(config_load_string(text, "ram-demo.json", &cfg, g_errbuf,
						 sizeof(g_errbuf)),
			      0);
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].addr.traddr, "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(cfg->subsystems[0].namespaces[0].path, "ram:256M");
	CU_ASSERT_STRING_EQUAL(cfg->subsystems[0].namespaces[1].path, "null:1G");
	config_free(cfg);
	free(text);
}

/* ---- Broken and edge-case documents ---------------------------------------------------------- */

#define PORT(extra)                                                                        \
	"{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', " \
	"'trsvcid': '4420'}, 'subsystems': ['nqn.2026-11.io.test:a']" extra "}"
#define NS(nsid, path) "{'nsid': " nsid ", 'enable': 1, 'device': {'path': '" path "'}}"
#define SUBSYS(extra)                                                                      \
	"{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'allow_any_host': '1'}, 'namespaces': [" \
	NS("1", "ram:1M") "]" extra "}"
#define DOC(ports, subsys) "{'hosts': [], 'ports': [" ports "], 'subsystems': [" subsys "]}"

/* A valid secret (32 bytes and its CRC), and a host entry with dhchap attributes. */
#define GOODKEY "DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:"
#define HOSTDH(dh)                                                           \
	"{'hosts': [{'nqn': 'nqn.2014-08.org.nvmexpress:h1', 'dhchap': {" dh \
	"}}], 'ports': [" PORT("") "], 'subsystems': [" SUBSYS("") "]}"

struct bad_case {
	const char *name;
	const char *json; /* through q() */
	int rc;
	const char *err;  /* substring of the message, after "test.json: " */
};

static const struct bad_case bad_cases[] = {
	/* Syntax: line:column from the tokener's byte offset. */
	{ "syntax", "{'ports': [\n  {'portid': 1,,}\n]}", -EINVAL, "2:16: JSON syntax error" },
	{ "truncated", "{'ports': [\n", -EINVAL, "JSON syntax error: unexpected end of file" },
	{ "trailing", "{}\n{}", -EINVAL, "2:1: JSON syntax error" },
	{ "empty", "", -EINVAL, "JSON syntax error" },
	{ "comment", "{} // no comments in JSON", -EINVAL, "JSON syntax error" },
	{ "top array", "[]", -EINVAL, "expected a JSON object at the top level" },
	/* Types. */
	{ "ports object", "{'ports': {}}", -EINVAL, "ports: expected an array" },
	{ "port string", "{'ports': ['x']}", -EINVAL, "ports[0]: expected an object" },
	{ "portid junk", DOC("{'portid': 'one'}", SUBSYS("")), -EINVAL,
	  "ports[0].portid: expected an integer, got \"one\"" },
	{ "portid float", DOC("{'portid': 1.5}", SUBSYS("")), -EINVAL,
	  "ports[0].portid: expected an integer" },
	{ "portid bool", DOC("{'portid': true}", SUBSYS("")), -EINVAL,
	  "ports[0].portid: expected an integer" },
	{ "portid range", DOC("{'portid': 70000}", SUBSYS("")), -ERANGE,
	  "ports[0].portid: value 70000 out of range 0..65535" },
	{ "portid reserved", DOC("{'portid': 65280}", SUBSYS("")), -EINVAL,
	  "ports[0].portid: portids 65280 and above are reserved" },
	{ "nsid float",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS(
				"1", "ram:1M") ", " NS("2.5", "ram:1M") "]}"),
	  -EINVAL, "subsystems[0].namespaces[1].nsid: expected an integer" },
	{ "nsid zero",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("0", "ram:1M") "]}"),
	  -ERANGE, "subsystems[0].namespaces[0].nsid: value 0 out of range 1..1024" },
	{ "traddr number",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': 5}}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].addr.traddr: expected a string" },
	{ "allow_any_host yes",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'allow_any_host': 'yes'}}"),
	  -EINVAL, "subsystems[0].attr.allow_any_host: expected 0 or 1, got \"yes\"" },
	{ "enable 2",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [{'nsid': 1, "
			"'enable': 2, 'device': {'path': 'ram:1M'}}]}"),
	  -EINVAL, "subsystems[0].namespaces[0].enable: expected 0 or 1, got 2" },
	{ "attr array", DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'attr': []}"), -EINVAL,
	  "subsystems[0].attr: expected an object" },
	{ "device missing",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': "
			"[{'nsid': 1}]}"),
	  -EINVAL, "subsystems[0].namespaces[0].device: missing" },
	{ "port subsys number",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', "
	      "'traddr': '127.0.0.1', 'trsvcid': '4420'}, 'subsystems': [1]}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].subsystems[0]: expected a subsystem NQN string" },
	{ "nqn missing", DOC(PORT(""), "{'attr': {}}"), -EINVAL, "subsystems[0].nqn: missing" },
	{ "NUL in string", DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a\\u0000x'}"), -EINVAL,
	  "subsystems[0].nqn: contains a NUL character" },
	/* Duplicates and references. */
	/* DH-HMAC-CHAP settings of a host, as nvmetcli saves them. */
	{ "dhchap hash", HOSTDH("'key': '" GOODKEY "', 'hash': 'sha256'"), -EINVAL,
	  "hosts[0].dhchap.hash: \"sha256\": expected hmac(sha256), hmac(sha384) or hmac(sha512)" },
	{ "dhchap dhgroup", HOSTDH("'key': '" GOODKEY "', 'dhgroup': 'ffdhe1024'"), -EINVAL,
	  "hosts[0].dhchap.dhgroup: \"ffdhe1024\": expected null, ffdhe2048" },
	{ "dhchap bad crc",
	  HOSTDH("'key': 'DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvA:'"), -EBADMSG,
	  "hosts[0].dhchap.key: DH-HMAC-CHAP secret: CRC mismatch" },
	{ "dhchap not a key", HOSTDH("'ctrl_key': 'secret', 'key': '" GOODKEY "'"), -EINVAL,
	  "hosts[0].dhchap.ctrl_key: " },
	{ "dhchap ctrl_key alone", HOSTDH("'ctrl_key': '" GOODKEY "'"), -EINVAL,
	  "hosts[0].dhchap.ctrl_key: needs the host's \"key\" as well" },
	{ "dhchap key and file", HOSTDH("'key': '" GOODKEY "', 'key_file': '/nonexistent'"),
	  -EINVAL, "hosts[0].dhchap: \"key\" and \"key_file\": give one of them" },
	{ "dhchap relative file", HOSTDH("'key_file': 'k.txt'"), -EINVAL,
	  "hosts[0].dhchap.key_file: \"k.txt\": expected an absolute path" },
	{ "dhchap missing file", HOSTDH("'key_file': '/nonexistent/k'"), -ENOENT,
	  "hosts[0].dhchap.key_file: " },
	{ "dup nsid",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS(
				"1", "ram:1M") ", " NS("1", "null:1M") "]}"),
	  -EINVAL, "subsystems[0].namespaces[1].nsid: duplicate NSID 1 (also namespaces[0])" },
	{ "dup portid",
	  DOC(PORT("") ", {'portid': '1', 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': "
		       "'127.0.0.1', 'trsvcid': '4421'}}",
	      SUBSYS("")),
	  -EINVAL, "ports[1].portid: duplicate portid 1 (also ports[0])" },
	{ "dup address",
	  DOC(PORT("") ", {'portid': 2, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': "
		       "'0.0.0.0', 'trsvcid': '4420'}}",
	      SUBSYS("")),
	  -EADDRINUSE, "ports[1].addr: tcp 0.0.0.0:4420 overlaps ports[0] (127.0.0.1:4420)" },
	{ "dup subsystem", DOC(PORT(""), SUBSYS("") ", " SUBSYS("")), -EINVAL,
	  "subsystems[1].nqn: duplicate subsystem \"nqn.2026-11.io.test:a\" (also subsystems[0])" },
	{ "dup host",
	  "{'hosts': [{'nqn': 'nqn.2014-08.org.nvmexpress:h1'}, {'nqn': "
	  "'nqn.2014-08.org.nvmexpress:h1'}]}",
	  -EINVAL, "hosts[1].nqn: duplicate host" },
	{ "unknown subsystem", DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:b'}"), -EINVAL,
	  "ports[0].subsystems[0]: unknown subsystem \"nqn.2026-11.io.test:a\"" },
	{ "subsystem twice on port",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', "
	      "'trsvcid': '4420'}, 'subsystems': ['nqn.2026-11.io.test:a', "
	      "'nqn.2026-11.io.test:a']}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].subsystems[1]: subsystem \"nqn.2026-11.io.test:a\" listed twice" },
	{ "unknown allowed host", DOC(PORT(""), SUBSYS(", 'allowed_hosts': ['nqn.2014-08.x:h9']")),
	  -EINVAL,
	  "subsystems[0].allowed_hosts[0]: host \"nqn.2014-08.x:h9\" is not listed in "
	  "\"hosts\"" },
	/* Values we cannot honour. */
	{ "missing file",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "/nonexistent/"
										   "disk.img") "]"
											       "}"),
	  -ENOENT,
	  "subsystems[0].namespaces[0].device.path: /nonexistent/disk.img: No such file "
	  "or directory" },
	{ "directory as device",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "/") "]}"),
	  -EINVAL,
	  "subsystems[0].namespaces[0].device.path: /: not a regular file or block device" },
	{ "relative path",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "disk.img") "]"
											       "}"),
	  -EINVAL, "device.path: \"disk.img\": expected an absolute file or device path" },
	{ "rbd without an image",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "rbd:pool") "]"
											       "}"),
	  -EINVAL, "device.path: \"rbd:pool\": expected rbd:POOL/IMAGE" },
	{ "ram size junk",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "ram:12X") "]}"),
	  -EINVAL, "device.path: \"ram:12X\": expected a size such as 64M or 1G after 'ram:'" },
	{ "ram size zero",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "ram:0") "]}"),
	  -EINVAL, "device.path: \"ram:0\": expected a size" },
	{ "null size unaligned",
	  DOC(PORT(""),
	      "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [" NS("1", "null:1000") "]}"),
	  -EINVAL, "device.path: \"null:1000\": size is not a multiple of 4096" },
	{ "attr pi_enable",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'pi_enable': "
			"'1'}}"),
	  -ENOTSUP, "subsystems[0].attr.pi_enable: protection information is not supported" },
	{ "param pi_enable", DOC(PORT(", 'param': {'pi_enable': '1'}"), SUBSYS("")), -ENOTSUP,
	  "ports[0].param.pi_enable: protection information is not supported" },
	{ "inline too big", DOC(PORT(", 'param': {'inline_data_size': '1048576'}"), SUBSYS("")),
	  -ERANGE, "ports[0].param.inline_data_size: value 1048576 out of range -1..131072" },
	{ "unknown trtype",
	  DOC("{'portid': 1, 'addr': {'trtype': 'carrier-pigeon', 'traddr': 'x'}}", SUBSYS("")),
	  -EINVAL, "ports[0].addr.trtype: unknown transport \"carrier-pigeon\"" },
	{ "trtype missing", DOC("{'portid': 1, 'addr': {'traddr': 'x'}}", SUBSYS("")), -EINVAL,
	  "ports[0].addr.trtype: missing" },
	{ "adrfam ib",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ib', 'traddr': '127.0.0.1', "
	      "'trsvcid': '4420'}}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].addr.adrfam: \"ib\": expected \"ipv4\" or \"ipv6\"" },
	{ "traddr hostname",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': 'localhost', "
	      "'trsvcid': '4420'}}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].addr.traddr: \"localhost\" is not an IPv4 address" },
	{ "trsvcid junk",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', "
	      "'trsvcid': '99999'}}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].addr.trsvcid: \"99999\": expected a port number 1..65535" },
	{ "treq required without tls",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', "
	      "'trsvcid': '4420', 'treq': 'required'}}",
	      SUBSYS("")),
	  -EINVAL,
	  "ports[0].addr.treq: \"required\" needs a secure channel: \"tsas\": \"tls1.3\"" },
	{ "tsas tls1.2",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', "
	      "'trsvcid': '4420', 'tsas': 'tls1.2'}}",
	      SUBSYS("")),
	  -ENOTSUP, "ports[0].addr.tsas: \"tls1.2\": NVMe/TCP TLS is TLS 1.3 only here" },
	{ "tsas junk",
	  DOC("{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', "
	      "'trsvcid': '4420', 'tsas': 'ssl'}}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].addr.tsas: \"ssl\": expected \"none\" or \"tls1.3\"" },
	{ "tsas tls on rdma",
	  DOC("{'portid': 1, 'addr': {'trtype': 'rdma', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', "
	      "'trsvcid': '4420', 'tsas': 'tls1.3'}}",
	      SUBSYS("")),
	  -EINVAL, "ports[0].addr.tsas: \"tls1.3\" is for tcp ports, not rdma" },
	{ "psk bad crc",
	  "{'hosts': [{'nqn': 'nqn.2014-08.x:h1', 'psk': "
	  "'NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrA:'}]}",
	  -EBADMSG,
	  "hosts[0].psk: not a TLS PSK in interchange format (NVMeTLSkey-1:HH:...:): "
	  "TLS PSK: CRC mismatch" },
	{ "psk not a key", "{'hosts': [{'nqn': 'nqn.2014-08.x:h1', 'psk': 'secret'}]}", -EINVAL,
	  "hosts[0].psk: not a TLS PSK in interchange format" },
	{ "psk and psk_file",
	  "{'hosts': [{'nqn': 'nqn.2014-08.x:h1', 'psk': 'x', "
	  "'psk_file': '/nonexistent'}]}",
	  -EINVAL, "hosts[0].psk_file: give \"psk\" or \"psk_file\", not both" },
	{ "psk_file missing",
	  "{'hosts': [{'nqn': 'nqn.2014-08.x:h1', "
	  "'psk_file': '/nonexistent/k'}]}",
	  -ENOENT, "hosts[0].psk_file: " },
	{ "advertise hostname", DOC(PORT(", 'advertise': 'nat.example'"), SUBSYS("")), -EINVAL,
	  "ports[0].advertise: \"nat.example\" is not an IPv4 address" },
	{ "ana unknown state",
	  DOC(PORT(", 'ana_groups': [{'grpid': 1, 'ana': {'state': 'optimized'}}, {'grpid': 2, "
		   "'ana': {'state': 'standby'}}]"),
	      SUBSYS("")),
	  -EINVAL, "ports[0].ana_groups[1].ana.state: ANA state \"standby\": expected optimized" },
	{ "ana dup", DOC(PORT(", 'ana_groups': [{'grpid': 1}, {'grpid': '1'}]"), SUBSYS("")),
	  -EINVAL, "ports[0].ana_groups[1].grpid: duplicate ANA group 1" },
	{ "resv type",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [{'nsid': 1, "
			"'device': {'path': 'ram:1M'}, 'resv': {'enable': 'yes'}}]}"),
	  -EINVAL, "subsystems[0].namespaces[0].resv.enable" },
	{ "passthru", DOC(PORT(""), SUBSYS(", 'passthru': [{'device': {'path': '/dev/nvme0'}}]")),
	  -ENOTSUP, "subsystems[0].passthru: passthru controllers are not supported" },
	{ "cntlid order",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'cntlid_min': "
			"'100', 'cntlid_max': '10'}}"),
	  -EINVAL, "subsystems[0].attr.cntlid_min: cntlid_min 100 is above cntlid_max 10" },
	{ "serial too long",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'serial': "
			"'123456789012345678901'}}"),
	  -EINVAL, "subsystems[0].attr.serial: longer than 20 bytes" },
	{ "version junk",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'version': "
			"'one'}}"),
	  -EINVAL, "subsystems[0].attr.version: \"one\": expected MAJOR.MINOR[.TERTIARY]" },
	{ "nguid junk",
	  DOC(PORT(""), "{'nqn': 'nqn.2026-11.io.test:a', 'namespaces': [{'nsid': 1, "
			"'device': {'path': 'ram:1M', 'nguid': 'xyz'}}]}"),
	  -EINVAL, "subsystems[0].namespaces[0].device.nguid: \"xyz\": expected 16 hex bytes" },
	{ "fc referral",
	  DOC(PORT(", 'referrals': [{'name': 'r', 'addr': {'trtype': 'fc', 'adrfam': 'fc', "
		   "'traddr': 'nn-0x1:pn-0x2', 'trsvcid': 'none'}}]"),
	      SUBSYS("")),
	  -ENOTSUP, "ports[0].referrals[0].addr.trtype: fc transport is not supported" },
	/* NQN syntax. */
	{ "nqn discovery", DOC("", "{'nqn': 'nqn.2014-08.org.nvmexpress.discovery'}"), -EINVAL,
	  "subsystems[0].nqn: nqn.2014-08.org.nvmexpress.discovery is reserved" },
	{ "nqn blank", DOC("", "{'nqn': 'nqn.2026-11.io.test:a b'}"), -EINVAL,
	  "subsystems[0].nqn: subsystem NQN \"nqn.2026-11.io.test:a b\" contains a blank" },
	{ "nqn slash", DOC("", "{'nqn': 'nqn.2026-11.io.test:a/b'}"), -EINVAL, "contains '/'" },
	{ "nqn empty", "{'hosts': [{'nqn': ''}]}", -EINVAL, "hosts[0].nqn: empty host NQN" },
};

static char *long_nqn_doc(size_t len)
{
	char *nqn = malloc(len + 1), *doc;
	size_t i;

	memcpy(nqn, "nqn.2026-11.io.test:", 20);
	for (i = 20; i < len; i++)
		nqn[i] = 'x';
	nqn[len] = '\0';
	doc = malloc(len + 64);
	sprintf(doc, "{\"subsystems\": [{\"nqn\": \"%s\"}]}", nqn);
	free(nqn);
	return doc;
}

static void test_bad_documents(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct tgt_config *cfg = (struct tgt_config *)0x1; /* must stay untouched */
		char *json = q(bc->json);
		int rc;

		rc = config_load_string(json, "test.json", &cfg, g_errbuf, sizeof(g_errbuf));
		if (rc != bc->rc || !strstr(g_errbuf, bc->err) ||
		    strncmp(g_errbuf, "test.json: ", 11))
			fprintf(stderr, "\ncase \"%s\": rc %d (want %d): %s\n  want: %s\n",
				bc->name, rc, bc->rc, g_errbuf, bc->err);
		CU_ASSERT_EQUAL(rc, bc->rc);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, bc->err));
		CU_ASSERT_EQUAL(strncmp(g_errbuf, "test.json: ", 11), 0);
		CU_ASSERT_PTR_EQUAL(cfg, (struct tgt_config *)0x1);
		free(json);
	}
}

static void test_nqn_length(void)
{
	struct tgt_config *cfg = NULL;
	char *doc;

	doc = long_nqn_doc(NVME_NQN_MAX);
	CU_ASSERT_EQUAL(config_load_string(doc, "t", &cfg, g_errbuf, sizeof(g_errbuf)), 0);
	CU_ASSERT_EQUAL(strlen(cfg->subsystems[0].nqn), NVME_NQN_MAX);
	config_free(cfg);
	free(doc);

	cfg = NULL;
	doc = long_nqn_doc(NVME_NQN_MAX + 1);
	CU_ASSERT_EQUAL(config_load_string(doc, "t", &cfg, g_errbuf, sizeof(g_errbuf)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "subsystems[0].nqn: subsystem NQN is 224 bytes, "
						"the limit is 223"));
	CU_ASSERT_PTR_NULL(cfg);
	free(doc);
}

/* ---- Files ----------------------------------------------------------------------------------- */

static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static void test_files(void)
{
	struct tgt_config *cfg = NULL;
	char path[512];
	static const char nul_doc[] = "{\"hosts\": []}\0{}";

	CU_ASSERT_EQUAL(config_load("/nonexistent/nvmeof.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			-ENOENT);
	CU_ASSERT_STRING_EQUAL(g_errbuf,
			       "/nonexistent/nvmeof.json: cannot open: No such file or directory");
	CU_ASSERT_PTR_NULL(cfg);

	CU_ASSERT_EQUAL(config_load(g_tmpdir, &cfg, g_errbuf, sizeof(g_errbuf)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "not a regular file"));

	snprintf(path, sizeof(path), "%s/nul.json", g_tmpdir);
	CU_ASSERT_EQUAL_FATAL(write_file(path, nul_doc, sizeof(nul_doc) - 1), 0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, g_errbuf, sizeof(g_errbuf)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "contains a NUL byte at offset 13"));
	CU_ASSERT_PTR_NULL(cfg);

	snprintf(path, sizeof(path), "%s/bad.json", g_tmpdir);
	CU_ASSERT_EQUAL_FATAL(write_file(path, "{\n  \"ports\": [\n    {\"portid\" 1}\n  ]\n}\n",
					 37),
			      0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, g_errbuf, sizeof(g_errbuf)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, ": 3:15: JSON syntax error"));
	CU_ASSERT_PTR_NULL(cfg);

	snprintf(path, sizeof(path), "%s/empty.json", g_tmpdir);
	CU_ASSERT_EQUAL_FATAL(write_file(path, "", 0), 0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, g_errbuf, sizeof(g_errbuf)), -EINVAL);
	CU_ASSERT_PTR_NULL(cfg);

	snprintf(path, sizeof(path), "%s/ok.json", g_tmpdir);
	CU_ASSERT_EQUAL_FATAL(write_file(path, "{}", 2), 0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, g_errbuf, sizeof(g_errbuf)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
	CU_ASSERT_STRING_EQUAL(cfg->path, path);
	CU_ASSERT_EQUAL(cfg->nports + cfg->nsubsystems + cfg->nhosts, 0);
	config_free(cfg);
}

/* ---- Accepted spellings and warnings --------------------------------------------------------- */

static void test_value_spellings(void)
{
	struct tgt_config *cfg = NULL;
	char *json;

	/* Numbers where nvmetcli writes strings and vice versa; "-1" = transport default. */
	json = q("{'hosts': [], 'ports': [{'portid': '7', 'addr': {'trtype': 'tcp', 'adrfam': "
		 "'ipv6', 'traddr': '::1', 'trsvcid': 4421, 'treq': 'not required'}, 'param': "
		 "{'inline_data_size': '-1', 'max_queue_size': '-1'}, 'advertise': '2001:db8::1', "
		 "'subsystems': ['nqn.2026-11.io.test:a']}], 'subsystems': [{'nqn': "
		 "'nqn.2026-11.io.test:a', 'attr': {'allow_any_host': true, 'cntlid_min': 5, "
		 "'serial': 42}, 'namespaces': [{'nsid': '3', 'enable': '0', 'device': {'path': "
		 "'/nonexistent/but-disabled.img', 'eui64': '00:11:22:33:44:55:66:77', 'uuid': "
		 "'D592CDF35D1C44E084123FCF7D99DF27'}}, {'nsid': 4, 'enable': false, 'device': "
		 "{'path': 'null:4K'}, 'ana': {'grpid': '2'}}, {'nsid': 5, 'device': {'path': "
		 "'ram:1m'}}]}]}");
	CU_ASSERT_EQUAL_FATAL(config_load_string(json, "t", &cfg, g_errbuf, sizeof(g_errbuf)), 0);
	CU_ASSERT_EQUAL(cfg->ports[0].portid, 7);
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].addr.trsvcid, "4421");
	CU_ASSERT_EQUAL(cfg->ports[0].addr.treq, NVMF_TREQ_SECURE_NOT_REQUIRED);
	CU_ASSERT_EQUAL(cfg->ports[0].inline_data_size, 0);
	CU_ASSERT_EQUAL(cfg->ports[0].max_queue_size, 0);
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].advertise, "2001:db8::1");
	CU_ASSERT_TRUE(cfg->subsystems[0].allow_any_host);
	CU_ASSERT_EQUAL(cfg->subsystems[0].cntlid_min, 5);
	CU_ASSERT_EQUAL(cfg->subsystems[0].cntlid_max, 0xffef);
	CU_ASSERT_STRING_EQUAL(cfg->subsystems[0].serial, "42");
	CU_ASSERT_EQUAL(cfg->subsystems[0].nnamespaces, 3);
	CU_ASSERT_EQUAL(cfg->subsystems[0].namespaces[0].nsid, 3);
	CU_ASSERT_FALSE(cfg->subsystems[0].namespaces[0].enable);
	CU_ASSERT_TRUE(cfg->subsystems[0].namespaces[0].has_eui64);
	CU_ASSERT_EQUAL(cfg->subsystems[0].namespaces[0].eui64[7], 0x77);
	CU_ASSERT_TRUE(cfg->subsystems[0].namespaces[0].has_uuid);
	CU_ASSERT_EQUAL(cfg->subsystems[0].namespaces[0].uuid[0], 0xd5);
	CU_ASSERT_FALSE(cfg->subsystems[0].namespaces[1].enable);
	CU_ASSERT_EQUAL(cfg->subsystems[0].namespaces[1].ana_grpid, 2);
	CU_ASSERT_TRUE(cfg->subsystems[0].namespaces[2].enable); /* default */
	CU_ASSERT_EQUAL(cfg->nwarnings, 0);
	config_free(cfg);
	free(json);
}

static void test_unknown_keys_warn(void)
{
	struct tgt_config *cfg = NULL;
	char *json;

	json = q("{'frobnicate': 1, 'hosts': [], 'ports': [{'portid': 1, 'color': 'red', 'addr': "
		 "{'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '127.0.0.1', 'trsvcid': '4420', "
		 "'zone': 'x'}, 'param': {'max_queue_size': '64'}, 'subsystems': []}], "
		 "'subsystems': [{'nqn': 'nqn.2026-11.io.test:a', 'attr': {'allow_any_host': '1', "
		 "'firmware': '1.0', 'turbo': '1'}, 'allowed_hosts': [], 'namespaces': "
		 "[{'nsid': 1, 'device': {'path': 'ram:1M', 'p2pmem': '0'}}]}]}");
	CU_ASSERT_EQUAL_FATAL(config_load_string(json, "w.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			      0);
	CU_ASSERT_TRUE(has_warning(cfg, "w.json:1: frobnicate: unknown key, ignored"));
	CU_ASSERT_TRUE(has_warning(cfg, "w.json:1: ports[0].color: unknown key, ignored"));
	CU_ASSERT_TRUE(has_warning(cfg, "w.json:1: ports[0].addr.zone: unknown key, ignored"));
	CU_ASSERT_TRUE(has_warning(cfg, "w.json:1: ports[0].param.max_queue_size: per-port queue "
					"size is not supported"));
	CU_ASSERT_TRUE(has_warning(cfg, "w.json:1: subsystems[0].attr.turbo: unknown key"));
	CU_ASSERT_TRUE(has_warning(cfg, "subsystems[0].namespaces[0].device.p2pmem: unknown key"));
	CU_ASSERT_FALSE(has_warning(cfg, "firmware"));
	CU_ASSERT_EQUAL(cfg->nwarnings, 6);
	CU_ASSERT_EQUAL(cfg->ports[0].max_queue_size, 64);
	config_free(cfg);
	free(json);

	/* allow_any_host with a host list: loads, the list is pointless and we say so. */
	json = q("{'hosts': [{'nqn': 'nqn.2014-08.org.nvmexpress:h1'}], 'subsystems': [{'nqn': "
		 "'nqn.2026-11.io.test:a', 'attr': {'allow_any_host': '1'}, 'allowed_hosts': "
		 "['nqn.2014-08.org.nvmexpress:h1']}]}");
	CU_ASSERT_EQUAL_FATAL(config_load_string(json, "w.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			      0);
	CU_ASSERT_EQUAL(cfg->nwarnings, 1);
	CU_ASSERT_TRUE(has_warning(cfg, "subsystems[0].allowed_hosts: attr.allow_any_host is 1"));
	config_free(cfg);
	free(json);
}

static void test_referrals_and_iscsi(void)
{
	struct tgt_config *cfg = NULL;
	char *json;

	json = q("{'ports': [{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': "
		 "'127.0.0.1', 'trsvcid': '4420'}, 'referrals': [{'name': 'r1', 'enable': 1, "
		 "'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '192.0.2.1', 'trsvcid': "
		 "'8009', 'treq': 'not specified', 'portid': '3'}}, {'name': 'r2', 'addr': "
		 "{'trtype': 'rdma', 'adrfam': 'ipv6', 'traddr': 'fe80::1', 'trsvcid': 4420}}]}], "
		 "'iscsi': {'portals': [{'addr': '0.0.0.0', 'port': 3260}], 'targets': []}}");
	CU_ASSERT_EQUAL_FATAL(config_load_string(json, "r.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			      0);
	CU_ASSERT_EQUAL(cfg->ports[0].nreferrals, 2);
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].referrals[0].name, "r1");
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].referrals[0].addr.traddr, "192.0.2.1");
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].referrals[0].addr.trsvcid, "8009");
	CU_ASSERT_EQUAL(cfg->ports[0].referrals[0].portid, 3);
	CU_ASSERT_TRUE(cfg->ports[0].referrals[0].enable);
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].referrals[1].addr.trtype, "rdma");
	CU_ASSERT_STRING_EQUAL(cfg->ports[0].referrals[1].addr.trsvcid, "4420");
	CU_ASSERT_EQUAL(cfg->ports[0].referrals[1].portid, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg->iscsi_json);
	CU_ASSERT_STRING_EQUAL(cfg->iscsi_json, "{\"portals\":[{\"addr\":\"0.0.0.0\",\"port\":3260}"
						"],\"targets\":[]}");
	CU_ASSERT_EQUAL(cfg->nwarnings, 0);
	config_free(cfg);
	free(json);

	json = q("{'iscsi': []}");
	CU_ASSERT_EQUAL(config_load_string(json, "r.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(g_errbuf, "r.json: iscsi: expected an object");
	free(json);

	json = q("{'ports': [{'portid': 1, 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': "
		 "'127.0.0.1', 'trsvcid': '4420'}, 'referrals': [{'name': 'r1', 'addr': {'trtype': "
		 "'tcp', 'adrfam': 'ipv4', 'traddr': '192.0.2.1', 'trsvcid': '8009'}}, {'name': "
		 "'r1', 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '192.0.2.2', "
		 "'trsvcid': '8009'}}]}]}");
	CU_ASSERT_EQUAL(config_load_string(json, "r.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "ports[0].referrals[1].name: duplicate referral"));
	free(json);
}

/* ---- Main ------------------------------------------------------------------------------------ */

static int suite_init(void)
{
	char buf[4096] = {0};
	int fd, i;

	snprintf(g_tmpdir, sizeof(g_tmpdir), "%s/config_ut.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_tmpdir))
		return -1;
	snprintf(g_file, sizeof(g_file), "%s/disk.img", g_tmpdir);
	fd = open(g_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < 256; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			break;
	close(fd);
	return 0;
}

static int suite_fini(void)
{
	char path[512];
	static const char *const files[] = {"disk.img", "nul.json", "bad.json", "empty.json",
					    "ok.json"};
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", g_tmpdir, files[i]);
		unlink(path);
	}
	rmdir(g_tmpdir);
	return 0;
}

/* hosts[].dhchap: the model holds what the target enforces; key files must be 0600. */
static void test_dhchap_keys(void)
{
	char path[] = "/tmp/nvmeof-config-ut-key-XXXXXX", *json, doc[1024];
	const struct config_host_key *k;
	struct tgt_config *cfg = NULL;
	int fd;

	json = q(HOSTDH("'key': '" GOODKEY "', 'ctrl_key': '" GOODKEY "', 'hash': 'hmac(sha512)', "
			"'dhgroup': 'ffdhe4096'"));
	CU_ASSERT_EQUAL_FATAL(config_load_string(json, "t.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			      0);
	free(json);
	/* the only subsystem allows any host: nobody would ask for the secret */
	CU_ASSERT_EQUAL(cfg->nwarnings, 1);
	CU_ASSERT(cfg->nwarnings == 1 && strstr(cfg->warnings[0], "hosts[0].dhchap: no subsystem "
								  "lists host") != NULL);
	k = config_find_host_key(cfg, "nqn.2014-08.org.nvmexpress:h1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(k);
	CU_ASSERT_STRING_EQUAL(k->key, GOODKEY);
	CU_ASSERT_STRING_EQUAL(k->hash, "hmac(sha512)");
	CU_ASSERT_STRING_EQUAL(k->dhgroup, "ffdhe4096");
	config_free(cfg);

	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(write(fd, GOODKEY "\n", sizeof(GOODKEY)), (ssize_t)sizeof(GOODKEY));
	close(fd);
	snprintf(doc, sizeof(doc), HOSTDH("'key_file': '%s'"), path);
	json = q(doc);
	CU_ASSERT_EQUAL(chmod(path, 0644), 0);
	cfg = NULL;
	CU_ASSERT_EQUAL(config_load_string(json, "t.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			-EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "hosts[0].dhchap.key_file: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_errbuf, "0644"));
	CU_ASSERT_PTR_NULL(strstr(g_errbuf, "DHHC-1"));
	CU_ASSERT_EQUAL(chmod(path, 0600), 0);
	CU_ASSERT_EQUAL_FATAL(config_load_string(json, "t.json", &cfg, g_errbuf, sizeof(g_errbuf)),
			      0);
	k = config_find_host_key(cfg, "nqn.2014-08.org.nvmexpress:h1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(k);
	CU_ASSERT_STRING_EQUAL(k->key, GOODKEY);
	CU_ASSERT_STRING_EQUAL(k->key_file, path);
	config_free(cfg);
	free(json);
	unlink(path);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "every nvmetcli fixture", test_every_fixture },
		{ "tcp.json model", test_tcp_fixture_model },
		{ "loop.json served over tcp", test_loop_fixture_as_tcp },
		{ "conf/ examples load", test_conf_examples },
		{ "conf/ example contents", test_conf_main_example },
		{ "broken documents", test_bad_documents },
		{ "NQN length limit", test_nqn_length },
		{ "files", test_files },
		{ "value spellings", test_value_spellings },
		{ "unknown keys warn", test_unknown_keys_warn },
		{ "referrals and iscsi", test_referrals_and_iscsi },
		{ "DH-HMAC-CHAP settings and key files", test_dhchap_keys },
		CU_TEST_INFO_NULL,
	};

	log_set_level(LOG_LVL_ERR); /* warnings are asserted on, not printed */
	return ut_run("config_file", suite_init, suite_fini, tests);
}
