/* SPDX-License-Identifier: MIT */
/* NVMe/RDMA CM private data codec and keyed SGL helpers (common/nvme_rdma_spec.h). */
#include <CUnit/Basic.h>
#include <string.h>

#include "common/nvme_rdma_spec.h"
#include "ut.h"

/* The request private data a Linux host sends for an I/O queue, byte for byte. */
static void test_cm_req_wire(void)
{
	static const uint8_t want[32] = {
		0x00, 0x00, /* RECFMT 0 */
		0x03, 0x00, /* QID 3 */
		0x80, 0x00, /* HRQSIZE 128 */
		0x7f, 0x00, /* HSQSIZE 127 */
		0x34, 0x12, /* CNTLID 0x1234 */
	};
	struct nvme_rdma_cm_req r;
	struct nvme_rdma_cm_params p;

	memset(&r, 0xa5, sizeof(r));
	nvme_rdma_cm_req_build(&r, 3, 128, 127, 0x1234);
	CU_ASSERT_EQUAL(memcmp(&r, want, sizeof(want)), 0);
	CU_ASSERT_EQUAL(nvme_rdma_cm_req_parse(&r, sizeof(r), &p), 0);
	CU_ASSERT_EQUAL(p.recfmt, 0);
	CU_ASSERT_EQUAL(p.qid, 3);
	CU_ASSERT_EQUAL(p.hrqsize, 128);
	CU_ASSERT_EQUAL(p.hsqsize, 127);
	CU_ASSERT_EQUAL(p.cntlid, 0x1234);
}

struct req_parse_case {
	size_t len;
	int rc;
};

/* RoCE/IB connection requests carry 56 bytes of private data, iWARP what was sent. */
static const struct req_parse_case req_parse_cases[] = {
	{ 0, NVME_RDMA_CM_INVALID_LEN },
	{ 4, NVME_RDMA_CM_INVALID_LEN },
	{ 31, NVME_RDMA_CM_INVALID_LEN },
	{ 32, 0 },
	{ 56, 0 },
};

static void test_cm_req_lengths(void)
{
	uint8_t buf[64] = { 0 };
	struct nvme_rdma_cm_params p;

	nvme_rdma_cm_req_build((struct nvme_rdma_cm_req *)buf, 0, 32, 31, 0xffff);
	for (size_t i = 0; i < sizeof(req_parse_cases) / sizeof(req_parse_cases[0]); i++) {
		const struct req_parse_case *c = &req_parse_cases[i];

		CU_ASSERT_EQUAL(nvme_rdma_cm_req_parse(buf, c->len, &p), c->rc);
		if (c->rc == 0) {
			CU_ASSERT_EQUAL(p.hsqsize, 31);
			CU_ASSERT_EQUAL(p.cntlid, 0xffff);
		}
	}
	CU_ASSERT_EQUAL(nvme_rdma_cm_req_parse(NULL, 32, &p), NVME_RDMA_CM_INVALID_LEN);
}

static void test_cm_rep_rej(void)
{
	struct nvme_rdma_cm_rep rep;
	struct nvme_rdma_cm_rej rej;
	uint8_t raw[4];

	nvme_rdma_cm_rep_build(&rep, 0x0180);
	CU_ASSERT_EQUAL(((uint8_t *)&rep)[2], 0x80);
	CU_ASSERT_EQUAL(((uint8_t *)&rep)[3], 0x01);
	for (size_t i = 4; i < sizeof(rep); i++)
		CU_ASSERT_EQUAL(((uint8_t *)&rep)[i], 0);
	CU_ASSERT_EQUAL(nvme_rdma_cm_rep_crqsize(&rep, sizeof(rep)), 0x180);
	CU_ASSERT_EQUAL(nvme_rdma_cm_rep_crqsize(&rep, 3), -1);
	CU_ASSERT_EQUAL(nvme_rdma_cm_rep_crqsize(NULL, 32), -1);
	put_le16(rep.recfmt, 1);
	CU_ASSERT_EQUAL(nvme_rdma_cm_rep_crqsize(&rep, sizeof(rep)), -1);

	nvme_rdma_cm_rej_build(&rej, NVME_RDMA_CM_INVALID_HSQSIZE);
	memcpy(raw, &rej, 4);
	CU_ASSERT_EQUAL(raw[0], 0);
	CU_ASSERT_EQUAL(raw[1], 0);
	CU_ASSERT_EQUAL(raw[2], 0x04);
	CU_ASSERT_EQUAL(raw[3], 0);
	CU_ASSERT_EQUAL(nvme_rdma_cm_rej_status(&rej, sizeof(rej)), NVME_RDMA_CM_INVALID_HSQSIZE);
	CU_ASSERT_EQUAL(nvme_rdma_cm_rej_status(&rej, 2), -1);
}

static void test_cm_status_names(void)
{
	static const struct {
		int sts;
		const char *has;
	} cases[] = {
		{ NVME_RDMA_CM_INVALID_LEN, "length" },
		{ NVME_RDMA_CM_INVALID_RECFMT, "record format" },
		{ NVME_RDMA_CM_INVALID_QID, "queue ID" },
		{ NVME_RDMA_CM_INVALID_HSQSIZE, "submission queue" },
		{ NVME_RDMA_CM_INVALID_HRQSIZE, "receive queue" },
		{ NVME_RDMA_CM_NO_RSC, "resources" },
		{ NVME_RDMA_CM_INVALID_IRD, "IRD" },
		{ NVME_RDMA_CM_INVALID_ORD, "ORD" },
		{ NVME_RDMA_CM_INVALID_CNTLID, "controller ID" },
		{ 0x77, "unknown" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_PTR_NOT_NULL(
			strstr(nvme_rdma_cm_status_name(cases[i].sts), cases[i].has));
}

/* Keyed SGL data block: ADDR LE64, LENGTH LE24, KEY LE32, type 4 subtype 0/Fh. */
static void test_keyed_sgl(void)
{
	static const uint8_t want[16] = {
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* addr */
		0x00, 0x00, 0x02,				/* length 0x20000 */
		0xef, 0xbe, 0xad, 0xde,				/* key */
		0x4f,						/* keyed, invalidate */
	};
	struct nvme_sgl_desc sgl;

	CU_ASSERT_EQUAL(nvme_sgl_set_keyed(&sgl, 0x1122334455667788ull, 0x20000, 0xdeadbeef, true),
			0);
	CU_ASSERT_EQUAL(memcmp(&sgl, want, sizeof(want)), 0);
	CU_ASSERT_TRUE(nvme_sgl_is_keyed(&sgl));
	CU_ASSERT_TRUE(nvme_sgl_keyed_invalidate(&sgl));
	CU_ASSERT_EQUAL(nvme_sgl_keyed_len(&sgl), 0x20000);
	CU_ASSERT_EQUAL(nvme_sgl_keyed_key(&sgl), 0xdeadbeef);
	CU_ASSERT_EQUAL(nvme_sgl_addr(&sgl), 0x1122334455667788ull);

	CU_ASSERT_EQUAL(nvme_sgl_set_keyed(&sgl, 0x1000, 0xffffff, 7, false), 0);
	CU_ASSERT_EQUAL(sgl.type, 0x40);
	CU_ASSERT_FALSE(nvme_sgl_keyed_invalidate(&sgl));
	CU_ASSERT_EQUAL(nvme_sgl_keyed_len(&sgl), 0xffffff);
	CU_ASSERT_EQUAL(nvme_sgl_keyed_key(&sgl), 7);
	/* 24 bits of length at most; the descriptor is left alone. */
	CU_ASSERT_EQUAL(nvme_sgl_set_keyed(&sgl, 0x2000, 0x1000000, 9, false), -1);
	CU_ASSERT_EQUAL(nvme_sgl_keyed_key(&sgl), 7);

	nvme_sgl_set_inline(&sgl, 0, 4096);
	CU_ASSERT_EQUAL(sgl.type, 0x01);
	CU_ASSERT_FALSE(nvme_sgl_is_keyed(&sgl));
	CU_ASSERT_EQUAL(get_le32(sgl.length), 4096);
	CU_ASSERT_EQUAL(nvme_sgl_addr(&sgl), 0);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "CM request wire format", test_cm_req_wire },
		{ "CM request lengths", test_cm_req_lengths },
		{ "CM accept and reject", test_cm_rep_rej },
		{ "CM status names", test_cm_status_names },
		{ "keyed SGL descriptor", test_keyed_sgl },
		CU_TEST_INFO_NULL,
	};

	return ut_run("nvme_rdma_spec", NULL, NULL, tests);
}
