/* SPDX-License-Identifier: MIT */
/* initiator/lib/queue/host_errors.c: NVMe status names and strings. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "lib/queue/host_internal.h"
#include "ut.h"

static void test_names(void)
{
	static const struct {
		uint16_t status;
		const char *name;
	} cases[] = {
		{ NVMEOF_STATUS(0, 0x00), "Successful Completion" },
		{ NVMEOF_STATUS(0, 0x01), "Invalid Command Opcode" },
		{ NVMEOF_STATUS(0, 0x02), "Invalid Field in Command" },
		{ NVMEOF_STATUS(0, 0x06), "Internal Error" },
		{ NVMEOF_STATUS(0, 0x0b), "Invalid Namespace or Format" },
		{ NVMEOF_STATUS(0, 0x22), "Transient Transport Error" },
		{ NVMEOF_STATUS(0, 0x80), "LBA Out of Range" },
		{ NVMEOF_STATUS(0, 0x81), "Capacity Exceeded" },
		{ NVMEOF_STATUS(1, 0x09), "Invalid Log Page" },
		{ NVMEOF_STATUS(1, 0x80), "Conflicting Attributes" },
		{ NVMEOF_STATUS(2, 0x81), "Unrecovered Read Error" },
		{ NVMEOF_STATUS(2, 0x85), "Compare Failure" },
		{ NVMEOF_STATUS(3, 0x02), "Asymmetric Access Inaccessible" },
		{ NVMEOF_STATUS(7, 0x42), "Vendor Specific" },
		{ NVMEOF_STATUS(0, 0x7f), "Unknown Status" },
		{ NVMEOF_STATUS(5, 0x00), "Unknown Status" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_STRING_EQUAL(nvmeof_status_name(cases[i].status), cases[i].name);
}

static void test_connect_names(void)
{
	CU_ASSERT_STRING_EQUAL(connect_status_name(NVMEOF_STATUS(1, 0x80)), "Incompatible Format");
	CU_ASSERT_STRING_EQUAL(connect_status_name(NVMEOF_STATUS(1, 0x84)), "Connect Invalid Host");
	CU_ASSERT_STRING_EQUAL(connect_status_name(NVMEOF_STATUS(0, 0x02)),
			       "Invalid Field in Command");
}

static void test_status_str(void)
{
	char buf[96];

	CU_ASSERT_STRING_EQUAL(nvmeof_status_str(NVMEOF_STATUS(0, 0x80), buf, sizeof(buf)),
			       "LBA Out of Range (sct 0 sc 0x80)");
	CU_ASSERT_STRING_EQUAL(nvmeof_status_str(NVMEOF_STATUS(2, 0x85), buf, sizeof(buf)),
			       "Compare Failure (sct 2 sc 0x85)");
	nvmeof_status_str(NVMEOF_STATUS(2, 0x85), buf, 8);
	CU_ASSERT_EQUAL(strlen(buf), 7);
}

static void test_cqe_status(void)
{
	struct nvme_cpl cqe = { 0 };

	cqe.status = NVME_STATUS(2, 0x85) | NVME_STATUS_DNR | 1; /* little-endian host */
	CU_ASSERT_EQUAL(cqe_status(&cqe), NVMEOF_STATUS(2, 0x85));
	CU_ASSERT_EQUAL(NVMEOF_SCT(cqe_status(&cqe)), 2);
	CU_ASSERT_EQUAL(NVMEOF_SC(cqe_status(&cqe)), 0x85);
}

static void test_strerror(void)
{
	CU_ASSERT_STRING_EQUAL(nvmeof_strerror(-ECONNREFUSED), strerror(ECONNREFUSED));
	CU_ASSERT_STRING_EQUAL(nvmeof_strerror(NVMEOF_STATUS(0, 0x80)), "LBA Out of Range");
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "status names", test_names },
		{ "Connect status names", test_connect_names },
		{ "status strings", test_status_str },
		{ "CQE status field", test_cqe_status },
		{ "nvmeof_strerror", test_strerror },
		CU_TEST_INFO_NULL,
	};

	return ut_run("initiator_errors", NULL, NULL, tests);
}
