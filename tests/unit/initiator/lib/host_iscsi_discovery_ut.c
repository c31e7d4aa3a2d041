/* SPDX-License-Identifier: MIT */
/* initiator/lib/scsi/host_iscsi_discovery.c: a SendTargets answer into target entries. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/uri.h"
#include "lib/scsi/host_iscsi.h"
#include "ut.h"

/* parse TEXT (pairs separated by NUL, as on the wire) from portal 192.0.2.1:3260 */
static int parse(const char *text, size_t len, struct nvmeof_iscsi_target **t, unsigned int *n)
{
	struct uri_target u = { .port = 3260 };
	char *copy = malloc(len);
	int rc;

	snprintf(u.host, sizeof(u.host), "192.0.2.1");
	memcpy(copy, text, len);
	*t = NULL;
	*n = 0;
	rc = host_iscsi_parse_targets(&u, copy, len, t, n);
	free(copy);
	return rc;
}

static void test_targets(void)
{
	static const char text[] = "TargetName=iqn.a\0TargetAddress=10.0.0.1:3261,2\0"
				   "TargetAddress=[fd00::1]:3262,3\0TargetName=iqn.b\0";
	struct nvmeof_iscsi_target *t;
	unsigned int n;

	CU_ASSERT_EQUAL_FATAL(parse(text, sizeof(text) - 1, &t, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(t[0].name, "iqn.a");
	CU_ASSERT_STRING_EQUAL(t[0].traddr, "10.0.0.1");
	CU_ASSERT_STRING_EQUAL(t[0].trsvcid, "3261");
	CU_ASSERT_EQUAL(t[0].tpgt, 2);
	CU_ASSERT_STRING_EQUAL(t[1].name, "iqn.a");
	CU_ASSERT_STRING_EQUAL(t[1].traddr, "fd00::1");
	CU_ASSERT_STRING_EQUAL(t[1].trsvcid, "3262");
	/* a name without an address: the portal's */
	CU_ASSERT_STRING_EQUAL(t[2].name, "iqn.b");
	CU_ASSERT_STRING_EQUAL(t[2].traddr, "192.0.2.1");
	CU_ASSERT_STRING_EQUAL(t[2].trsvcid, "3260");
	free(t);
}

/* A malformed TargetAddress is refused with a message that quotes it (the message is
 * written before the parsed pairs it points into are freed: ASan checks that). */
static void test_bad_address(void)
{
	static const char *const bad[] = { "[fd00::1:3260", "host:,1", "host:3260,70000", ":1" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];
		int len = snprintf(text, sizeof(text), "TargetName=iqn.a%cTargetAddress=%s", 0,
				   bad[i]);
		struct nvmeof_iscsi_target *t;
		unsigned int n;

		/* with the NUL that ends the last pair, as on the wire */
		CU_ASSERT_EQUAL(parse(text, (size_t)len + 1, &t, &n), -EPROTO);
		CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), bad[i]));
	}
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "names and addresses", test_targets },
		{ "malformed TargetAddress", test_bad_address },
		CU_TEST_INFO_NULL,
	};

	return ut_run("host_iscsi_discovery", NULL, NULL, tests);
}
