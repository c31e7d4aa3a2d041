/* SPDX-License-Identifier: MIT */
/*
 * initiator/lib/queue/host_nqn.c: where the host NQN and host ID come from (options, /etc/nvme
 * files, the UUID in a host NQN, a generated ID kept in the state directory), stability
 * across calls, and UUID text handling. Runs in a temporary directory.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/queue/host_internal.h"

static char root[64], etc[128], state[128];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void reset(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/etc %s/state", root, root);
	CU_ASSERT_EQUAL(system(cmd), 0);
	mkdir(etc, 0755);
}

static void test_uuid_text(void)
{
	static const struct {
		const char *s;
		int rc;
	} cases[] = {
		{ "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", 0 },
		{ "0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D", 0 },
		{ "0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d", -EINVAL },
		{ "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4", -EINVAL },
		{ "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4dd", -EINVAL },
		{ "0a1b2c3d-4e5f-4a6b-8c7d_9e0f1a2b3c4d", -EINVAL },
		{ "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4g", -EINVAL },
		{ "", -EINVAL },
	};
	uint8_t id[16];
	char out[37];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(uuid_parse(cases[i].s, id), cases[i].rc);
	CU_ASSERT_EQUAL(uuid_parse(cases[1].s, id), 0);
	CU_ASSERT_EQUAL(id[0], 0x0a);
	CU_ASSERT_EQUAL(id[15], 0x4d);
	uuid_format(id, out);
	CU_ASSERT_STRING_EQUAL(out, cases[0].s);
}

static void test_options_win(void)
{
	char nqn[NVME_NQN_FIELD];
	uint8_t id[16];

	reset();
	write_file(etc, "hostnqn", "nqn.2014-08.org.nvmexpress:uuid:11111111-1111-4111-8111-111111111111\n");
	write_file(etc, "hostid", "22222222-2222-4222-8222-222222222222\n");
	CU_ASSERT_EQUAL(host_identity("nqn.2026-01.io.example:me",
				      "33333333-3333-4333-8333-333333333333", etc, state, nqn, id),
			0);
	CU_ASSERT_STRING_EQUAL(nqn, "nqn.2026-01.io.example:me");
	CU_ASSERT_EQUAL(id[0], 0x33);
	CU_ASSERT_EQUAL(host_identity("bad nqn", NULL, etc, state, nqn, id), -EINVAL);
	CU_ASSERT_EQUAL(host_identity(NULL, "xyz", etc, state, nqn, id), -EINVAL);
}

static void test_etc_files(void)
{
	char nqn[NVME_NQN_FIELD];
	uint8_t id[16];
	struct stat st;

	reset();
	write_file(etc, "hostnqn", "  nqn.2014-08.io.example:host-a  \n");
	write_file(etc, "hostid", "22222222-2222-4222-8222-222222222222\n");
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, state, nqn, id), 0);
	CU_ASSERT_STRING_EQUAL(nqn, "  nqn.2014-08.io.example:host-a" + 2);
	CU_ASSERT_EQUAL(id[0], 0x22);
	CU_ASSERT_NOT_EQUAL(stat(state, &st), 0); /* nothing generated, nothing written */

	/* only a UUID host NQN: the host ID is its UUID */
	reset();
	write_file(etc, "hostnqn", "nqn.2014-08.org.nvmexpress:uuid:44444444-4444-4444-8444-444444444444\n");
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, state, nqn, id), 0);
	CU_ASSERT_EQUAL(id[0], 0x44);
	CU_ASSERT_EQUAL(id[15], 0x44);
	CU_ASSERT_NOT_EQUAL(stat(state, &st), 0);

	/* only a host ID: the host NQN is built from it */
	reset();
	write_file(etc, "hostid", "55555555-5555-4555-8555-555555555555");
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, state, nqn, id), 0);
	CU_ASSERT_STRING_EQUAL(nqn, "nqn.2014-08.org.nvmexpress:uuid:55555555-5555-4555-8555-555555555555");

	/* garbage in /etc is ignored, not fatal */
	reset();
	write_file(etc, "hostnqn", "garbage\n");
	write_file(etc, "hostid", "also garbage\n");
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, state, nqn, id), 0);
	CU_ASSERT_EQUAL(strncmp(nqn, "nqn.2014-08.org.nvmexpress:uuid:", 32), 0);
}

static void test_generated_is_stable(void)
{
	char nqn1[NVME_NQN_FIELD], nqn2[NVME_NQN_FIELD], path[256], line[64], text[37];
	uint8_t id1[16], id2[16];
	FILE *f;

	reset();
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, state, nqn1, id1), 0);
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, state, nqn2, id2), 0);
	CU_ASSERT_STRING_EQUAL(nqn1, nqn2);
	CU_ASSERT(memcmp(id1, id2, 16) == 0);
	CU_ASSERT_EQUAL(id1[6] >> 4, 4);	/* version 4 */
	CU_ASSERT_EQUAL(id1[8] >> 6, 2);	/* RFC 4122 variant */
	uuid_format(id1, text);
	CU_ASSERT_PTR_NOT_NULL(strstr(nqn1, text));
	snprintf(path, sizeof(path), "%s/hostid", state);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof(line), f));
	fclose(f);
	CU_ASSERT_EQUAL(strncmp(line, text, 36), 0);
	/* a missing /etc directory is fine too */
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, "/nonexistent/nvme", state, nqn2, id2), 0);
	CU_ASSERT(memcmp(id1, id2, 16) == 0);
}

static void test_xdg_state_home(void)
{
	char nqn[NVME_NQN_FIELD], path[256];
	uint8_t id[16];
	struct stat st;

	reset();
	setenv("XDG_STATE_HOME", state, 1);
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, NULL, nqn, id), 0);
	snprintf(path, sizeof(path), "%s/nvmeof/hostid", state);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", root, 1);
	CU_ASSERT_EQUAL(host_identity(NULL, NULL, etc, NULL, nqn, id), 0);
	snprintf(path, sizeof(path), "%s/.local/state/nvmeof/hostid", root);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
}

int main(void)
{
	CU_pSuite s;
	unsigned int failures;
	char cmd[128];

	snprintf(root, sizeof(root), "/tmp/hostnqn_ut.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	snprintf(etc, sizeof(etc), "%s/etc", root);
	snprintf(state, sizeof(state), "%s/state", root);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("initiator_hostnqn", NULL, NULL);
	CU_add_test(s, "UUID text", test_uuid_text);
	CU_add_test(s, "options win", test_options_win);
	CU_add_test(s, "/etc/nvme files", test_etc_files);
	CU_add_test(s, "generated ID is stable", test_generated_is_stable);
	CU_add_test(s, "XDG_STATE_HOME and HOME", test_xdg_state_home);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		failures++;
	return failures ? 1 : 0;
}
