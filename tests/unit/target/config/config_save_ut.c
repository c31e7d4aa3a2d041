/* SPDX-License-Identifier: MIT */
/*
 * config_save: load a configuration, save it, load the saved text and compare the two
 * models field by field (every nvmetcli fixture and conf/ example that loads, and
 * hand-written documents using every key we save); saving twice gives the same text;
 * secrets stay out of the string form unless asked for and make the file mode 0600;
 * config_dup() copies everything.
 */
#include <config.h> /* autoconf: _GNU_SOURCE */

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
static char g_err[1024];
static char g_file[300]; /* the "device" of file namespaces */

/* Compare @n elements of @size bytes, each with the pointer members zeroed by @scrub. */
static bool same_items(const void *a, const void *b, unsigned int n, size_t size,
		       void (*scrub)(void *))
{
	unsigned char *x = malloc(size), *y = malloc(size);
	bool same = true;

	for (unsigned int i = 0; same && i < n; i++) {
		memcpy(x, (const char *)a + i * size, size);
		memcpy(y, (const char *)b + i * size, size);
		if (scrub) {
			scrub(x);
			scrub(y);
		}
		same = memcmp(x, y, size) == 0;
	}
	free(x);
	free(y);
	return same;
}

static void scrub_port(void *p)
{
	struct config_port *cp = p;

	cp->subsystems = NULL;
	cp->referrals = NULL;
	cp->ana_groups = NULL;
}

static void scrub_subsys(void *p)
{
	struct config_subsys *cs = p;

	cs->namespaces = NULL;
	cs->allowed_hosts = NULL;
}

/* Whether two models describe the same target (file name and warnings aside). */
static bool models_equal(const struct tgt_config *a, const struct tgt_config *b, char *why,
			 size_t len)
{
#define DIFF(...)                                \
	do {                                     \
		snprintf(why, len, __VA_ARGS__); \
		return false;                    \
	} while (0)
	if (a->nports != b->nports || a->nsubsystems != b->nsubsystems || a->nhosts != b->nhosts ||
	    a->nhost_keys != b->nhost_keys)
		DIFF("counts differ");
	if (!same_items(a->hosts, b->hosts, a->nhosts, sizeof(*a->hosts), NULL))
		DIFF("hosts differ");
	if (!same_items(a->host_keys, b->host_keys, a->nhost_keys, sizeof(*a->host_keys), NULL))
		DIFF("host keys differ");
	if (a->nhost_psks != b->nhost_psks ||
	    !same_items(a->host_psks, b->host_psks, a->nhost_psks, sizeof(*a->host_psks), NULL))
		DIFF("host TLS PSKs differ");
	if (!same_items(a->ports, b->ports, a->nports, sizeof(*a->ports), scrub_port))
		DIFF("port scalars differ");
	for (unsigned int i = 0; i < a->nports; i++) {
		const struct config_port *p = &a->ports[i], *q = &b->ports[i];

		if (!same_items(p->subsystems, q->subsystems, p->nsubsystems,
				sizeof(*p->subsystems), NULL) ||
		    !same_items(p->referrals, q->referrals, p->nreferrals, sizeof(*p->referrals),
				NULL) ||
		    !same_items(p->ana_groups, q->ana_groups, p->nana_groups,
				sizeof(*p->ana_groups), NULL))
			DIFF("ports[%u] lists differ", i);
	}
	if (!same_items(a->subsystems, b->subsystems, a->nsubsystems, sizeof(*a->subsystems),
			scrub_subsys))
		DIFF("subsystem scalars differ");
	for (unsigned int i = 0; i < a->nsubsystems; i++) {
		const struct config_subsys *s = &a->subsystems[i], *t = &b->subsystems[i];

		if (!same_items(s->namespaces, t->namespaces, s->nnamespaces,
				sizeof(*s->namespaces), NULL))
			DIFF("subsystems[%u].namespaces differ", i);
		if (!same_items(s->allowed_hosts, t->allowed_hosts, s->nallowed_hosts,
				sizeof(*s->allowed_hosts), NULL))
			DIFF("subsystems[%u].allowed_hosts differ", i);
	}
	if (memcmp(&a->limits, &b->limits, sizeof(a->limits)))
		DIFF("limits differ");
	if ((a->iscsi_json == NULL) != (b->iscsi_json == NULL) ||
	    (a->iscsi_json && strcmp(a->iscsi_json, b->iscsi_json)))
		DIFF("iscsi differs");
	return true;
#undef DIFF
}

/* Load @text, save, reload, compare; save again and compare the texts. */
static void round_trip(const char *text, const char *name)
{
	struct tgt_config *a = NULL, *b = NULL;
	char *s1 = NULL, *s2 = NULL, why[128] = "";

	CU_ASSERT_EQUAL_FATAL(config_load_string(text, name, &a, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL_FATAL(config_save_string(a, true, &s1), 0);
	if (config_load_string(s1, "saved", &b, g_err, sizeof(g_err)) != 0) {
		fprintf(stderr, "%s: saved text does not load: %s\n%s", name, g_err, s1);
		CU_FAIL("saved text does not load");
		goto out;
	}
	if (!models_equal(a, b, why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", name, why);
		CU_FAIL("model changed in a round trip");
	}
	CU_ASSERT(b->nwarnings <= a->nwarnings); /* nothing new to complain about */
	CU_ASSERT_EQUAL(config_save_string(b, true, &s2), 0);
	CU_ASSERT_STRING_EQUAL(s1, s2);
out:
	free(s1);
	free(s2);
	config_free(a);
	config_free(b);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
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

/* @text with every absolute namespace path pointing at g_file (fixtures name devices of the
 * machine they were saved on); malloc'd. */
static char *local_paths(const char *text)
{
	json_object *root = json_tokener_parse(text), *subs;
	char *out;

	if (!root)
		return strdup(text);
	if (json_object_object_get_ex(root, "subsystems", &subs))
		for (size_t i = 0; i < json_object_array_length(subs); i++) {
			json_object *nss, *s = json_object_array_get_idx(subs, i);

			if (!json_object_object_get_ex(s, "namespaces", &nss))
				continue;
			for (size_t j = 0; j < json_object_array_length(nss); j++) {
				json_object *dev, *path;

				if (json_object_object_get_ex(json_object_array_get_idx(nss, j),
							      "device", &dev) &&
				    json_object_object_get_ex(dev, "path", &path) &&
				    json_object_get_string(path)[0] == '/')
					json_object_object_add(dev, "path",
							       json_object_new_string(g_file));
			}
		}
	out = strdup(json_object_to_json_string(root));
	json_object_put(root);
	return out;
}

static unsigned int round_trip_dir(const char *dir)
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d = opendir(dir);

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((de = readdir(d))) {
		struct tgt_config *probe = NULL;
		char path[1024], *text, *raw;
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		raw = read_text(path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
		text = local_paths(raw);
		free(raw);
		/* Fixtures of transports this build refuses are the loader's test. */
		if (config_load_string(text, de->d_name, &probe, g_err, sizeof(g_err)) == 0) {
			round_trip(text, de->d_name);
			n++;
		} else {
			fprintf(stderr, "(not loaded: %s)\n", g_err);
		}
		config_free(probe);
		free(text);
	}
	closedir(d);
	return n;
}

static void test_fixtures_round_trip(void)
{
	CU_ASSERT(round_trip_dir(CONFIG_FIXTURE_DIR) >= 2);
	CU_ASSERT(round_trip_dir(CONFIG_CONF_DIR) >= 2);
}

/* Everything config_save writes, in one document. */
static const char *const every_key =
	"{\"hosts\": [{\"nqn\": \"nqn.2014-08.org.nvmexpress:h1\","
	"  \"dhchap\": {\"key\": \"DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:\","
	"   \"ctrl_key\": \"DHHC-1:01:Y3RybGN0cmxjdHJsY3RybGN0cmxjdHJsY3RybGN0cmxqLZiz:\","
	"   \"hash\": \"hmac(sha256)\", \"dhgroup\": \"ffdhe2048\"}},"
	" {\"nqn\": \"nqn.2014-08.org.nvmexpress:h2\"}],"
	" \"limits\": {\"max_connections\": 100, \"max_queue_depth\": 64,"
	"  \"in_capsule_size\": 4096, \"max_io_size\": 262144,"
	"  \"max_control_connections\": 4, \"metrics_timeout\": 2, \"metrics_per_address\": 3,"
	"  \"max_connecting\": 50, \"max_host_connections\": 40, \"r2t_timeout\": 0,"
	"  \"connect_timeout\": 7, \"auth_timeout\": 6, \"login_timeout\": 9,"
	"  \"auth_threads\": 2, \"auth_max_pending\": 20, \"auth_max_pending_host\": 5,"
	"  \"auth_max_pending_addr\": 4, \"tcp_zerocopy_min\": 0},"
	" \"ports\": [{\"portid\": 1, \"addr\": {\"trtype\": \"tcp\", \"adrfam\": \"ipv4\","
	"   \"traddr\": \"127.0.0.1\", \"trsvcid\": \"4420\", \"treq\": \"not required\"},"
	"   \"advertise\": \"192.0.2.1\", \"param\": {\"inline_data_size\": \"16384\"},"
	"   \"referrals\": [{\"name\": \"r1\", \"enable\": 1, \"addr\": {\"trtype\": \"tcp\","
	"     \"adrfam\": \"ipv4\", \"traddr\": \"192.0.2.9\", \"trsvcid\": \"8009\","
	"     \"portid\": 7}}],"
	"   \"ana_groups\": [{\"grpid\": 1, \"ana\": {\"state\": \"optimized\"}}],"
	"   \"subsystems\": [\"nqn.2026-11.io.nvmeof:a\", \"nqn.2026-11.io.nvmeof:b\"]}],"
	" \"subsystems\": [{\"nqn\": \"nqn.2026-11.io.nvmeof:a\","
	"   \"attr\": {\"allow_any_host\": \"0\", \"serial\": \"abc123\", \"model\": \"m\","
	"    \"version\": \"1.3\", \"cntlid_min\": \"2\", \"cntlid_max\": \"100\","
	"    \"qid_max\": \"8\"},"
	"   \"allowed_hosts\": [\"nqn.2014-08.org.nvmexpress:h1\"],"
	"   \"namespaces\": [{\"nsid\": 3, \"enable\": 1, \"ana_grpid\": 1,"
	"     \"device\": {\"path\": \"ram:64M\","
	"      \"nguid\": \"6c8e4f1a-92d3-4b57-a0e6-1f3d5c7b9a24\","
	"      \"uuid\": \"0b7d2e94-5c1a-4f68-9e3b-a4d6c8f1e257\","
	"      \"eui64\": \"0102030405060708\"}},"
	"    {\"nsid\": 1, \"enable\": 0, \"buffered_io\": 1,"
	"     \"device\": {\"path\": \"null:1G\"}}]},"
	"  {\"nqn\": \"nqn.2026-11.io.nvmeof:b\", \"attr\": {\"allow_any_host\": \"1\"},"
	"   \"namespaces\": []}],"
	" \"iscsi\": {\"targets\": []}}";

static void test_every_key_round_trip(void)
{
	struct tgt_config *a = NULL;

	round_trip(every_key, "every-key");
	CU_ASSERT_EQUAL_FATAL(config_load_string(every_key, "k", &a, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(a->nhost_keys, 1);
	CU_ASSERT_EQUAL(a->limits.max_io_size, 262144);
	CU_ASSERT_EQUAL(a->limits.max_control_connections, 4);
	CU_ASSERT_EQUAL(a->limits.metrics_timeout_ms, 2000);
	CU_ASSERT_EQUAL(a->limits.metrics_per_address, 3);
	CU_ASSERT_EQUAL(a->limits.max_host_connections, 40);
	CU_ASSERT_TRUE(a->limits.r2t_timeout_set); /* 0 is a value: no deadline */
	CU_ASSERT_EQUAL(a->limits.r2t_timeout_ms, 0);
	CU_ASSERT_EQUAL(a->limits.login_timeout_ms, 9000);
	CU_ASSERT_EQUAL(a->subsystems[0].namespaces[0].nsid, 3);
	CU_ASSERT(a->subsystems[0].namespaces[0].has_eui64);
	CU_ASSERT_FALSE(a->subsystems[0].namespaces[0].buffered_io);
	CU_ASSERT_TRUE(a->subsystems[0].namespaces[1].buffered_io);
	config_free(a);
}

/* TLS: ports with tsas tls1.3 (required and not), a host PSK inline and one by file. */
static void test_tls_round_trip(void)
{
	static const char key[] = "NVMeTLSkey-1:01:Q8Km9RzoPgvRPRv8pVHzebyhf8AfyIaPr6N+KoQstQQvPN/"
				  "I:";
	char doc[2048], path[300];
	struct tgt_config *a = NULL;
	char *s = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/h2.psk", g_tmpdir);
	umask(077);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "%s\n", key);
	fclose(f);
	snprintf(doc, sizeof(doc),
		 "{\"hosts\": [{\"nqn\": \"nqn.2014-08.org.nvmexpress:h1\", \"psk\": \"%s\"},"
		 " {\"nqn\": \"nqn.2014-08.org.nvmexpress:h2\", \"psk_file\": \"%s\"}],"
		 " \"ports\": [{\"portid\": 1, \"addr\": {\"trtype\": \"tcp\", \"adrfam\": "
		 "\"ipv4\","
		 "   \"traddr\": \"127.0.0.1\", \"trsvcid\": \"4420\", \"treq\": \"required\","
		 "   \"tsas\": \"tls1.3\"}, \"subsystems\": []},"
		 "  {\"portid\": 2, \"addr\": {\"trtype\": \"tcp\", \"adrfam\": \"ipv4\","
		 "   \"traddr\": \"127.0.0.1\", \"trsvcid\": \"4421\", \"treq\": \"not required\","
		 "   \"tsas\": \"tls1.3\"}, \"subsystems\": []}],"
		 " \"subsystems\": []}",
		 key, path);
	round_trip(doc, "tls");
	CU_ASSERT_EQUAL_FATAL(config_load_string(doc, "t", &a, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(a->nhost_psks, 2);
	CU_ASSERT_EQUAL(a->ports[0].addr.sectype, NVMF_TCP_SECTYPE_TLS13);
	CU_ASSERT_EQUAL(a->ports[0].addr.treq, NVMF_TREQ_SECURE_REQUIRED);
	CU_ASSERT_EQUAL(a->ports[1].addr.treq, NVMF_TREQ_SECURE_NOT_REQUIRED);
	CU_ASSERT_STRING_EQUAL(a->host_psks[1].psk, key); /* read from the file */
	CU_ASSERT(config_has_secrets(a));
	/* Without secrets: the inline key is left out, the file's path (no secret) kept. */
	CU_ASSERT_EQUAL(config_save_string(a, false, &s), 0);
	CU_ASSERT_PTR_NULL(strstr(s, "NVMeTLSkey"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "h2.psk"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"tsas\": \"tls1.3\""));
	free(s);
	config_free(a);
	/* A key file others may read is refused, naming the file and the mode. */
	chmod(path, 0644);
	CU_ASSERT_EQUAL(config_load_string(doc, "t", &a, g_err, sizeof(g_err)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "hosts[1].psk_file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "mode 0644, must be 0600"));
	CU_ASSERT_PTR_NULL(strstr(g_err, "NVMeTLSkey"));
	unlink(path);
	umask(022);
}

static void test_secrets(void)
{
	struct tgt_config *a = NULL, *b = NULL;
	char *s = NULL, path[300];
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(config_load_string(every_key, "k", &a, g_err, sizeof(g_err)), 0);
	CU_ASSERT(config_has_secrets(a));
	/* The warning about the stored key does not quote the key. */
	for (unsigned int i = 0; i < a->nwarnings; i++)
		CU_ASSERT_PTR_NULL(strstr(a->warnings[i], "DHHC-1"));
	CU_ASSERT_EQUAL(config_save_string(a, false, &s), 0);
	CU_ASSERT_PTR_NULL(strstr(s, "DHHC-1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "nqn.2014-08.org.nvmexpress:h1"));
	free(s);

	snprintf(path, sizeof(path), "%s/secret.json", g_tmpdir);
	umask(022);
	CU_ASSERT_EQUAL_FATAL(config_save_file(a, path, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	CU_ASSERT_EQUAL(config_load(path, &b, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(b ? b->nhost_keys : 0, 1);
	if (b)
		CU_ASSERT_STRING_EQUAL(b->host_keys[0].ctrl_key, a->host_keys[0].ctrl_key);
	config_free(b);
	/* Without keys the file is readable (0644); a key back makes it 0600 again. */
	a->nhost_keys = 0;
	CU_ASSERT_EQUAL(config_save_file(a, path, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0644);
	a->nhost_keys = 1;
	CU_ASSERT_EQUAL(config_save_file(a, path, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	unlink(path);
	/* Not over a directory, and not into a missing one. */
	CU_ASSERT_EQUAL(config_save_file(a, g_tmpdir, g_err, sizeof(g_err)), -EINVAL);
	snprintf(path, sizeof(path), "%s/no/such/dir.json", g_tmpdir);
	CU_ASSERT_EQUAL(config_save_file(a, path, g_err, sizeof(g_err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "no/such/dir.json"));
	config_free(a);
}

static void test_dup_and_empty(void)
{
	struct tgt_config *a = NULL, *b = NULL, *e;
	char why[128], *s = NULL;

	CU_ASSERT_EQUAL_FATAL(config_load_string(every_key, "k", &a, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL_FATAL(config_dup(a, &b), 0);
	CU_ASSERT(models_equal(a, b, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_EQUAL(a->subsystems[0].namespaces, b->subsystems[0].namespaces);
	CU_ASSERT_EQUAL(b->nwarnings, 0);
	b->subsystems[0].namespaces[0].nsid = 9; /* the copy is independent */
	CU_ASSERT_EQUAL(a->subsystems[0].namespaces[0].nsid, 3);
	config_free(a);
	config_free(b);

	e = config_new_empty("live");
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(config_save_string(e, true, &s), 0);
	CU_ASSERT_EQUAL(config_load_string(s, "empty", &a, g_err, sizeof(g_err)), 0);
	CU_ASSERT(a && a->nports == 0 && a->nsubsystems == 0 && a->nhosts == 0);
	free(s);
	config_free(a);
	config_free(e);
}

static int suite_init(void)
{
	snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/config_save_ut.XXXXXX");
	int fd;

	if (!mkdtemp(g_tmpdir))
		return -1;
	snprintf(g_file, sizeof(g_file), "%s/disk.img", g_tmpdir);
	fd = open(g_file, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || ftruncate(fd, 1 << 20))
		return -1;
	close(fd);
	return 0;
}

static int suite_fini(void)
{
	unlink(g_file);
	return rmdir(g_tmpdir);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "fixtures and examples round trip", test_fixtures_round_trip },
		{ "every saved key round trips", test_every_key_round_trip },
		{ "secrets: not in strings, files 0600", test_secrets },
		{ "TLS ports and host PSKs", test_tls_round_trip },
		{ "config_dup and the empty model", test_dup_and_empty },
		CU_TEST_INFO_NULL,
	};

	log_set_level(LOG_LVL_ERR);
	return ut_run("config_save", suite_init, suite_fini, tests);
}
