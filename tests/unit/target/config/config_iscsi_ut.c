/* SPDX-License-Identifier: MIT */
/*
 * The "iscsi" section of the configuration file: every error names the file, the key
 * path and the value; unknown keys are warnings with the file's line; warnings of the
 * rest of the file carry their line too.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "config/config_file.h"
#include "config/config_internal.h"
#include "ut.h"

static char g_err[1024];

/* A subsystem with namespace 1, then @iscsi as the "iscsi" object (single quotes). */
static char *doc(const char *iscsi)
{
	static const char head[] = "{\n"
				   "  'subsystems': [\n"
				   "    { 'nqn': 'nqn.2026-11.io.test:a',\n"
				   "      'namespaces': [ { 'nsid': 1, 'device': { 'path': "
				   "'ram:1M' } } ] }\n"
				   "  ],\n"
				   "  'iscsi': ";
	size_t n = strlen(head) + strlen(iscsi) + 4;
	char *out = malloc(n), *o;

	snprintf(out, n, "%s%s\n}", head, iscsi);
	for (o = out; *o; o++)
		if (*o == '\'')
			*o = '"';
	return out;
}

static int load(const char *iscsi, struct tgt_config **cfg)
{
	char *text = doc(iscsi);
	int rc;

	*cfg = NULL;
	rc = config_load_string(text, "i.json", cfg, g_err, sizeof(g_err));
	free(text);
	return rc;
}

#define TGT  "'iqn.2026-11.io.test:t'"
#define LUN0 "'luns': [ { 'lun': 0, 'subsystem': 'nqn.2026-11.io.test:a', 'nsid': 1 } ]"

static void test_valid(void)
{
	struct tgt_config *cfg;

	CU_ASSERT_EQUAL_FATAL(load("{ 'portals': [ { 'addr': '127.0.0.1', 'port': 0 } ],\n"
				   "  'targets': [ { 'iqn': " TGT ", " LUN0 ",\n"
				   "    'initiators': [ 'iqn.2026-11.io.test:h' ],\n"
				   "    'chap': { 'user': 'u', 'secret': 'twelve-chars' } } ],\n"
				   "  'options': { 'header_digest': 'required', 'data_digest': "
				   "true,\n"
				   "    'queue_depth': 64, 'immediate_data': true } }",
				   &cfg),
			      0);
	CU_ASSERT_EQUAL(cfg->nwarnings, 0);
	CU_ASSERT_PTR_NOT_NULL(cfg->iscsi_json);
	config_free(cfg);
}

static bool has_warning(const struct tgt_config *cfg, const char *needle)
{
	for (unsigned int i = 0; i < cfg->nwarnings; i++)
		if (strstr(cfg->warnings[i], needle))
			return true;
	return false;
}

static void test_unknown_keys(void)
{
	struct tgt_config *cfg;

	/* the iscsi object starts on line 6 */
	CU_ASSERT_EQUAL_FATAL(load("{ 'portal': [],\n"
				   "  'targets': [ { 'iqn': " TGT ", 'lnus': [],\n"
				   "    'chap': { 'user': 'u', 'secret': 'twelve-chars', 'salt': 1 "
				   "} } ],\n"
				   "  'portals': [ { 'addr': '127.0.0.1', 'prot': 3260 } ],\n"
				   "  'options': { 'queue_dpeth': 8 } }",
				   &cfg),
			      0);
	CU_ASSERT_EQUAL(cfg->nwarnings, 5);
	CU_ASSERT_TRUE(has_warning(cfg, "i.json:6: iscsi.portal: unknown key, ignored"));
	CU_ASSERT_TRUE(has_warning(cfg, "i.json:7: iscsi.targets[0].lnus: unknown key, ignored"));
	CU_ASSERT_TRUE(has_warning(cfg, "i.json:8: iscsi.targets[0].chap.salt: unknown key"));
	CU_ASSERT_TRUE(has_warning(cfg, "i.json:9: iscsi.portals[0].prot: unknown key"));
	CU_ASSERT_TRUE(has_warning(cfg, "i.json:10: iscsi.options.queue_dpeth: unknown key"));
	config_free(cfg);
}

struct bad {
	const char *iscsi;
	const char *msg; /* the whole message */
};

static const struct bad bad_cases[] = {
	{ "{ 'portals': [ { 'addr': '127.0.0.1', 'port': 70000 } ] }", "i.json: "
								       "iscsi.portals[0].port: "
								       "value 70000 out of range "
								       "0..65535" },
	{ "{ 'portals': [ { 'addr': '127.0.0.1', 'port': '-1' } ] }", "i.json: "
								      "iscsi.portals[0].port: "
								      "value -1 out of range "
								      "0..65535" },
	{ "{ 'portals': [ { 'addr': 'localhost' } ] }", "i.json: iscsi.portals[0].addr: "
							"\"localhost\" is not an IPv4 address" },
	{ "{ 'portals': [ { 'port': 3260 } ] }", "i.json: iscsi.portals[0].addr: missing" },
	{ "{ 'targets': [ { 'iqn': 'iqn.2026-11.io.Test:T' } ] }", "i.json: iscsi.targets[0].iqn: "
								   "\"iqn.2026-11.io.Test:T\" is "
								   "not an iSCSI name "
								   "(iqn.YYYY-MM.reverse.domain[:"
								   "name], eui.<16 hex> or naa.<16 "
								   "or 32 hex>)" },
	{ "{ 'targets': [ { 'iqn': 'iqn.26-11.io.test' } ] }", "i.json: iscsi.targets[0].iqn: "
							       "\"iqn.26-11.io.test\" is not an "
							       "iSCSI name" },
	{ "{ 'targets': [ { 'iqn': 'eui.12345' } ] }", "i.json: iscsi.targets[0].iqn: "
						       "\"eui.12345\" is not an iSCSI name" },
	{ "{ 'targets': [ { 'alias': 'x' } ] }", "i.json: iscsi.targets[0].iqn: missing" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'luns': [ { 'lun': 0, 'subsystem': "
	  "'nqn.2026-11.io.test:b', 'nsid': 1 } ] } ] }",
	  "i.json: iscsi.targets[0].luns[0].subsystem: unknown subsystem "
	  "\"nqn.2026-11.io.test:b\" (not in \"subsystems\")" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'luns': [ { 'lun': 3, 'subsystem': "
	  "'nqn.2026-11.io.test:a', 'nsid': 7 } ] } ] }",
	  "i.json: iscsi.targets[0].luns[0].nsid: subsystem \"nqn.2026-11.io.test:a\" has no "
	  "namespace 7" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'luns': [ { 'lun': 16384, 'subsystem': "
	  "'nqn.2026-11.io.test:a', 'nsid': 1 } ] } ] }",
	  "i.json: iscsi.targets[0].luns[0].lun: value 16384 out of range 0..16383" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'luns': [ { 'lun': 0, 'nsid': 1 } ] } ] }", "i.json: "
											"iscsi."
											"targets[0]"
											".luns[0]."
											"subsystem:"
											" missin"
											"g" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'initiators': [ 'host1' ] } ] }", "i.json: "
									      "iscsi.targets[0]."
									      "initiators[0]: "
									      "\"host1\" is not an "
									      "iSCSI name" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', 'secret': 'short' } } ] }",
	  "i.json: iscsi.targets[0].chap.secret: 5 characters, at least 12 are needed "
	  "(RFC 7143 12.1.3)" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u' } } ] }", "i.json: "
									    "iscsi.targets[0].chap."
									    "secret: missing" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', 'secret': 'twelve-chars', "
	  "'mutual_user': 'm' } } ] }",
	  "i.json: iscsi.targets[0].chap.mutual_secret: missing (mutual_user and mutual_secret "
	  "or mutual_secret_file go together)" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', 'secret': 'twelve-chars', "
	  "'mutual_user': 'm', 'mutual_secret': 'tiny' } } ] }",
	  "i.json: iscsi.targets[0].chap.mutual_secret: 4 characters, at least 12 are needed "
	  "(RFC 7143 12.1.3)" },
	{ "{ 'options': { 'header_digest': 'sometimes' } }", "i.json: iscsi.options.header_digest: "
							     "\"sometimes\" is not a digest "
							     "setting (none, "
							     "allowed or required)" },
	{ "{ 'options': { 'data_digest': 1 } }", "i.json: iscsi.options.data_digest: expected "
						 "\"none\", \"allowed\" or \"required\"" },
	{ "{ 'options': { 'max_burst_length': 100 } }", "i.json: iscsi.options.max_burst_length: "
							"value 100 out of range 512..16777215" },
	{ "{ 'options': { 'queue_depth': 0 } }", "i.json: iscsi.options.queue_depth: value 0 out "
						 "of range 1..4096" },
	{ "{ 'options': { 'immediate_data': 'yes' } }", "i.json: iscsi.options.immediate_data: "
							"expected 0 or 1, got \"yes\"" },
	{ "{ 'targets': {} }", "i.json: iscsi.targets: expected an array" },
	{ "{ 'options': { 'chap_algs': [ 'SHA256', 'SHA512' ] } }", "i.json: "
								    "iscsi.options.chap_algs: [1]: "
								    "\"SHA512\": not a CHAP "
								    "digest" },
	{ "{ 'options': { 'chap_algs': 'SHA3-256,CRC' } }", "i.json: iscsi.options.chap_algs: "
							    "\"CRC\": not a CHAP digest" },
	{ "{ 'options': { 'chap_algs': [] } }", "i.json: iscsi.options.chap_algs: empty: no "
						"initiator could authenticate" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', 'secret': 'twelve-chars', "
	  "'mutual_user': 'm', 'mutual_secret': 'twelve-chars' } } ] }",
	  "i.json: iscsi.targets[0].chap.mutual_secret: the same as secret" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', 'secret': 'twelve-chars', "
	  "'secret_file': '/nonexistent' } } ] }",
	  "i.json: iscsi.targets[0].chap.secret_file: give secret or secret_file, not both" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', 'secret_file': 'rel' } } ] }",
	  "i.json: iscsi.targets[0].chap.secret_file: \"rel\": expected an absolute path" },
	{ "{ 'targets': [ { 'iqn': " TGT ", 'chap': { 'user': 'u', "
	  "'secret_file': '/nonexistent/secret' } } ] }",
	  "i.json: iscsi.targets[0].chap.secret_file: key file /nonexistent/secret: No such file" },
	{ "{ 'discovery_chap': { 'user': 'd', 'secret': 'short' } }", "i.json: "
								      "iscsi.discovery_chap.secret:"
								      " 5 characters, at least 12 "
								      "are needed" },
	{ "{ 'discovery_chap': { 'secret': 'twelve-chars' } }", "i.json: "
								"iscsi.discovery_chap.user: "
								"missing" },
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct tgt_config *cfg;
		int rc = load(bad_cases[i].iscsi, &cfg);

		CU_ASSERT(rc < 0);
		CU_ASSERT_PTR_NULL(cfg);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_err, bad_cases[i].msg));
		if (rc >= 0 || !strstr(g_err, bad_cases[i].msg))
			fprintf(stderr, "case %zu: rc %d, '%s'\n", i, rc, g_err);
	}
}

/* Secrets from files: mode 0600 only, the content checked like an inline secret. */
static void test_secret_files(void)
{
	char dir[] = "/tmp/config_iscsi_ut.XXXXXX", path[128], text[512];
	struct tgt_config *cfg;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/secret", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("file-secret-0123\n", f);
	fclose(f);
	snprintf(text, sizeof(text),
		 "{ 'targets': [ { 'iqn': " TGT ", " LUN0 ", 'chap': { 'user': 'u', "
		 "'secret_file': '%s' } } ], 'discovery_chap': { 'user': 'd', 'secret_file': '%s' "
		 "} }",
		 path, path);
	CU_ASSERT_EQUAL(chmod(path, 0644), 0);
	CU_ASSERT(load(text, &cfg) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "chap.secret_file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "0600"));
	CU_ASSERT_PTR_NULL(strstr(g_err, "file-secret")); /* never the content */
	CU_ASSERT_EQUAL(chmod(path, 0600), 0);
	CU_ASSERT_EQUAL_FATAL(load(text, &cfg), 0);
	/* a path is no secret: kept when saving without secrets, file left 0644 */
	CU_ASSERT_FALSE(config_has_secrets(cfg));
	config_free(cfg);
	f = fopen(path, "w");
	fputs("short\n", f);
	fclose(f);
	CU_ASSERT(load(text, &cfg) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "5 characters, at least 12"));
	unlink(path);
	rmdir(dir);
}

/* What a reload may change in the section, and what it may not. */
static void test_check_live(void)
{
	static const struct {
		const char *old, *new_json;
		int rc;
		const char *msg;
	} t[] = {
		{ NULL, NULL, 0, NULL },
		{ "{}", "{\"portals\": []}", 0, NULL },
		{ "{\"portals\": [{\"addr\": \"127.0.0.1\", \"port\": 3260}]}",
		  "{\"portals\": [{\"addr\": \"127.0.0.1\", \"port\": 3261}]}", -EBUSY,
		  "iscsi.portals: the portals cannot change" },
		/* initiators and CHAP change live */
		{ "{\"targets\": [{\"iqn\": \"iqn.2026-11.io.t:a\", \"initiators\": "
		  "[\"iqn.2026-11.io.t:x\"]}]}",
		  "{\"targets\": [{\"iqn\": \"iqn.2026-11.io.t:a\", \"chap\": {\"user\": \"u\"}}]}",
		  0, NULL },
		{ "{\"targets\": [{\"iqn\": \"iqn.2026-11.io.t:a\", \"luns\": [{\"lun\": 0}]}]}",
		  "{\"targets\": [{\"iqn\": \"IQN.2026-11.io.t:a\", \"luns\": [{\"lun\": 1}]}]}",
		  -EBUSY,
		  "iscsi.targets[0].luns: IQN.2026-11.io.t:a is running with a different value" },
		/* a new target, a removed one */
		{ "{\"targets\": [{\"iqn\": \"iqn.2026-11.io.t:a\", \"luns\": [{\"lun\": 0}]}]}",
		  "{\"targets\": [{\"iqn\": \"iqn.2026-11.io.t:b\", \"luns\": [{\"lun\": 1}]}]}", 0,
		  NULL },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc;

		err[0] = '\0';
		rc = cfg_iscsi_check_live(t[i].old, t[i].new_json, err, sizeof(err));
		CU_ASSERT_EQUAL(rc, t[i].rc);
		if (t[i].msg)
			CU_ASSERT_PTR_NOT_NULL(strstr(err, t[i].msg));
		if (rc != t[i].rc)
			fprintf(stderr, "check_live case %zu: rc %d '%s'\n", i, rc, err);
	}
}

/* Inline secrets are secrets: saved only when asked, and they make the file 0600. */
static void test_save_secrets(void)
{
	struct tgt_config *cfg;
	char *txt = NULL;

	CU_ASSERT_EQUAL_FATAL(load("{ 'targets': [ { 'iqn': " TGT ", " LUN0 ", 'chap': { "
				   "'user': 'u', 'secret': 'inline-secret-1', 'mutual_user': 'm', "
				   "'mutual_secret': 'inline-secret-2' } } ], "
				   "'discovery_chap': { 'user': 'd', 'secret': 'inline-secret-3' } "
				   "}",
				   &cfg),
			      0);
	CU_ASSERT_TRUE(config_has_secrets(cfg));
	CU_ASSERT_EQUAL_FATAL(config_save_string(cfg, false, &txt), 0);
	CU_ASSERT_PTR_NULL(strstr(txt, "inline-secret"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "\"mutual_user\""));
	free(txt);
	CU_ASSERT_EQUAL_FATAL(config_save_string(cfg, true, &txt), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "inline-secret-1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "inline-secret-2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "inline-secret-3"));
	free(txt);
	config_free(cfg);
}

/* The key path walk that gives warnings their line. */
static void test_kp_line(void)
{
	static const char text[] = "{\n \"a\": [1, {\"b\": 2},\n  {\"b\": {\"c\": [3,\n 4]}}],\n"
				   " \"d\": \"x,[}\"\n, \"e\": {}}";

	CU_ASSERT_EQUAL(cfg_kp_line(text, "a"), 2);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "a[1].b"), 2);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "a[2].b.c"), 3);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "a[2].b.c[1]"), 4);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "e"), 6);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "a[3]"), 0);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "a[0].b"), 0);
	CU_ASSERT_EQUAL(cfg_kp_line(text, "z"), 0);
	CU_ASSERT_EQUAL(cfg_kp_line(NULL, "a"), 0);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "a valid section", test_valid },
		{ "unknown keys warn with the line", test_unknown_keys },
		{ "errors name key and value", test_errors },
		{ "key path lines", test_kp_line },
		{ "secrets from files", test_secret_files },
		{ "what a reload may change", test_check_live },
		{ "inline CHAP secrets when saving", test_save_secrets },
		CU_TEST_INFO_NULL,
	};

	log_set_level(LOG_LVL_ERR);
	return ut_run("config_iscsi", NULL, NULL, tests);
}
