/* SPDX-License-Identifier: MIT */
/* NVMe/RDMA binding rules of the target (target/rdma_proto.c): CM request checks and SGL
 * classification. */
#include <CUnit/Basic.h>
#include <stddef.h>
#include <string.h>

#include "rdma/rdma_proto.h"
#include "ut.h"

#define ST(sc) (NVME_STATUS(NVME_SCT_GENERIC, (sc)) | NVME_STATUS_DNR)

static const struct rdma_cm_limits lim = {
	.max_admin_entries = 32,
	.max_io_entries = 128,
	.max_qid = 64,
};

struct cm_case {
	const char *what;
	uint16_t recfmt, qid, hrqsize, hsqsize;
	int want;
};

static const struct cm_case cm_cases[] = {
	{ "Linux admin queue", 0, 0, 32, 31, 0 },
	{ "Linux I/O queue", 0, 1, 128, 127, 0 },
	{ "last I/O queue", 0, 64, 128, 127, 0 },
	{ "smallest queue", 0, 5, 2, 1, 0 },
	{ "HRQSIZE equal to HSQSIZE", 0, 2, 16, 16, 0 },
	{ "record format 1", 1, 0, 32, 31, NVME_RDMA_CM_INVALID_RECFMT },
	{ "record format FFFFh", 0xffff, 1, 32, 31, NVME_RDMA_CM_INVALID_RECFMT },
	{ "QID past the limit", 0, 65, 32, 31, NVME_RDMA_CM_INVALID_QID },
	{ "QID FFFFh", 0, 0xffff, 32, 31, NVME_RDMA_CM_INVALID_QID },
	{ "admin queue of 33 entries", 0, 0, 33, 32, NVME_RDMA_CM_INVALID_HSQSIZE },
	{ "I/O queue of 129 entries", 0, 3, 129, 128, NVME_RDMA_CM_INVALID_HSQSIZE },
	{ "I/O queue of 65536 entries", 0, 3, 0xffff, 0xffff, NVME_RDMA_CM_INVALID_HSQSIZE },
	{ "HSQSIZE 0 (one entry)", 0, 1, 1, 0, NVME_RDMA_CM_INVALID_HSQSIZE },
	{ "HRQSIZE smaller than HSQSIZE", 0, 1, 8, 31, NVME_RDMA_CM_INVALID_HRQSIZE },
	{ "HRQSIZE 0", 0, 1, 0, 1, NVME_RDMA_CM_INVALID_HRQSIZE },
};

static void test_cm_check(void)
{
	for (size_t i = 0; i < sizeof(cm_cases) / sizeof(cm_cases[0]); i++) {
		const struct cm_case *c = &cm_cases[i];
		struct nvme_rdma_cm_params p = {
			.recfmt = c->recfmt,
			.qid = c->qid,
			.hrqsize = c->hrqsize,
			.hsqsize = c->hsqsize,
		};
		int got = rdma_cm_check(&p, &lim);

		if (got != c->want)
			fprintf(stderr, "  %s: got %d, want %d\n", c->what, got, c->want);
		CU_ASSERT_EQUAL(got, c->want);
	}
}

/* The private data bytes of a request end to end: parse, then check. */
static void test_cm_wire_to_check(void)
{
	struct nvme_rdma_cm_req r;
	struct nvme_rdma_cm_params p;

	nvme_rdma_cm_req_build(&r, 1, 128, 127, 0xffff);
	CU_ASSERT_EQUAL(nvme_rdma_cm_req_parse(&r, sizeof(r), &p), 0);
	CU_ASSERT_EQUAL(rdma_cm_check(&p, &lim), 0);
	put_le16(r.hsqsize, 200);
	CU_ASSERT_EQUAL(nvme_rdma_cm_req_parse(&r, sizeof(r), &p), 0);
	CU_ASSERT_EQUAL(rdma_cm_check(&p, &lim), NVME_RDMA_CM_INVALID_HSQSIZE);
}

/*
 * What a queue that has not sent Connect makes the target register: a fixed small set of
 * receive buffers, whatever HSQSIZE the CM request asked for; the whole queue only after
 * Connect. Figures for the defaults (8 KiB in-capsule) and for 64 KiB.
 */
static void test_preconnect_region(void)
{
	static const uint32_t icsz[] = { 0, 8192, 65536, 1u << 20 };
	static const uint16_t hsqsize[] = { 1, 2, 31, 127, 1023, 4095 };

	for (size_t i = 0; i < sizeof(icsz) / sizeof(icsz[0]); i++) {
		uint32_t cap = 64 + icsz[i];
		size_t bound = RDMA_PRECONNECT_RECVS * (size_t)(cap + 63) +
			       2 * RDMA_PRECONNECT_RECVS * sizeof(struct nvme_cpl);

		for (size_t j = 0; j < sizeof(hsqsize) / sizeof(hsqsize[0]); j++) {
			uint32_t nrecvs = (uint32_t)hsqsize[j] + 1;
			uint32_t pre = rdma_preconnect_recvs(nrecvs);
			size_t before = rdma_capsule_region_bytes(pre, cap);
			size_t all = rdma_capsule_region_bytes(nrecvs, cap);

			CU_ASSERT(pre >= 1 && pre <= nrecvs && pre <= RDMA_PRECONNECT_RECVS);
			CU_ASSERT(before <= bound);
			CU_ASSERT(before <= all);
			/* the rest, registered after Connect, makes up the whole queue */
			CU_ASSERT_EQUAL(before + rdma_capsule_region_bytes(nrecvs - pre, cap), all);
		}
	}
	CU_ASSERT_EQUAL(rdma_capsule_stride(64), 64);
	CU_ASSERT_EQUAL(rdma_capsule_stride(64 + 8192), 8256);
	CU_ASSERT_EQUAL(rdma_capsule_stride(65), 128);
	/* 128 entries: 1 MiB (8 KiB in-capsule) or 8 MiB (64 KiB) for the whole queue, a
	 * couple of capsules before Connect */
	CU_ASSERT_EQUAL(rdma_capsule_region_bytes(128, 64 + 8192), 128 * 8256 + 256 * 16);
	CU_ASSERT_EQUAL(rdma_capsule_region_bytes(rdma_preconnect_recvs(128), 64 + 8192),
			2 * 8256 + 4 * 16);
	CU_ASSERT_EQUAL(rdma_capsule_region_bytes(128, 64 + 65536), 128 * 65600 + 256 * 16);
	CU_ASSERT_EQUAL(rdma_capsule_region_bytes(rdma_preconnect_recvs(128), 64 + 65536),
			2 * 65600 + 4 * 16);
	CU_ASSERT_EQUAL(rdma_capsule_region_bytes(0, 64 + 8192), 0);
}

struct qid_case {
	const char *what;
	uint8_t opc, fctype;
	uint16_t qid, cm_qid;
	bool refused;
};

static const struct qid_case qid_cases[] = {
	{ "admin Connect on an admin queue", NVME_OPC_FABRICS, NVMF_FCTYPE_CONNECT, 0, 0, false },
	{ "I/O Connect on its queue", NVME_OPC_FABRICS, NVMF_FCTYPE_CONNECT, 7, 7, false },
	{ "admin Connect on an I/O-sized queue", NVME_OPC_FABRICS, NVMF_FCTYPE_CONNECT, 0, 1,
	  true },
	{ "I/O Connect on an admin-sized queue", NVME_OPC_FABRICS, NVMF_FCTYPE_CONNECT, 1, 0,
	  true },
	{ "I/O Connect for another queue", NVME_OPC_FABRICS, NVMF_FCTYPE_CONNECT, 2, 1, true },
	{ "QID FFFFh", NVME_OPC_FABRICS, NVMF_FCTYPE_CONNECT, 0xffff, 1, true },
	{ "Property Get (same offset)", NVME_OPC_FABRICS, NVMF_FCTYPE_PROPERTY_GET, 3, 1, false },
	{ "Disconnect", NVME_OPC_FABRICS, NVMF_FCTYPE_DISCONNECT, 3, 1, false },
	{ "Write with fctype 1 and a QID-like word", NVME_OPC_WRITE, NVMF_FCTYPE_CONNECT, 3, 1,
	  false },
};

/* Connect's QID against the one the CM request set the queue up for. */
static void test_connect_qid(void)
{
	for (size_t i = 0; i < sizeof(qid_cases) / sizeof(qid_cases[0]); i++) {
		const struct qid_case *c = &qid_cases[i];
		struct nvmf_connect_cmd cc;
		uint32_t dw0 = 0xdeadbeef;
		uint16_t st;

		memset(&cc, 0, sizeof(cc));
		cc.opc = c->opc;
		cc.fctype = c->fctype;
		put_le16(&cc.qid, c->qid);
		put_le16(&cc.sqsize, 31);
		st = rdma_connect_qid_check((const struct nvme_cmd *)&cc, c->cm_qid, &dw0);
		if ((st != 0) != c->refused)
			fprintf(stderr, "  %s: status %#x\n", c->what, st);
		if (c->refused) {
			CU_ASSERT_EQUAL(st, NVME_STATUS(NVME_SCT_COMMAND_SPECIFIC,
							NVME_SC_CONNECT_INVALID_PARAMETERS) |
						    NVME_STATUS_DNR);
			/* IPO: the QID field of the command (IATTR 0: not in the data) */
			CU_ASSERT_EQUAL(dw0, offsetof(struct nvmf_connect_cmd, qid));
			CU_ASSERT_EQUAL(dw0, 42);
		} else {
			CU_ASSERT_EQUAL(st, 0);
			CU_ASSERT_EQUAL(dw0, 0);
		}
	}
}

enum sgl_form { KEYED, KEYED_INV, KEYED_SUB, INLINE, INLINE_RAW, TRANSPORT, PRP };

struct sgl_case {
	const char *what;
	enum sgl_form form;
	enum nvme_data_xfer xfer;
	uint64_t addr;
	uint32_t len;
	uint32_t icdata; /* bytes after the SQE in the capsule */
	uint16_t want_status;
	enum rdma_sgl_kind kind;
	uint32_t want_len, want_off;
	bool want_inv;
};

#define MAX_IO (128 * 1024)

static const struct sgl_case sgl_cases[] = {
	/* keyed data blocks (what Linux sends for everything not in-capsule) */
	{ "keyed read", KEYED_INV, NVME_XFER_CTRLR_TO_HOST, 0x7f0000001000ull, 4096, 0, 0,
	  RDMA_SGL_KEYED, 4096, 0, true },
	{ "keyed write", KEYED, NVME_XFER_HOST_TO_CTRLR, 0x1000, MAX_IO, 0, 0, RDMA_SGL_KEYED,
	  MAX_IO, 0, false },
	{ "keyed, too long", KEYED, NVME_XFER_CTRLR_TO_HOST, 0x1000, MAX_IO + 512, 0,
	  ST(NVME_SC_DATA_SGL_LENGTH_INVALID), RDMA_SGL_NONE, 0, 0, false },
	{ "keyed null descriptor, no data", KEYED, NVME_XFER_NONE, 0, 0, 0, 0, RDMA_SGL_NONE, 0, 0,
	  false },
	{ "keyed length on a command without data", KEYED, NVME_XFER_NONE, 0x1000, 512, 0, 0,
	  RDMA_SGL_NONE, 0, 0, false },
	{ "keyed read of 0 bytes", KEYED, NVME_XFER_CTRLR_TO_HOST, 0x1000, 0, 0, 0, RDMA_SGL_NONE,
	  0, 0, false },
	{ "keyed, reserved subtype", KEYED_SUB, NVME_XFER_CTRLR_TO_HOST, 0x1000, 512, 0,
	  ST(NVME_SC_SGL_DESC_TYPE_INVALID), RDMA_SGL_NONE, 0, 0, false },
	{ "bidirectional", KEYED, NVME_XFER_BIDIRECTIONAL, 0x1000, 512, 0,
	  ST(NVME_SC_INVALID_OPCODE), RDMA_SGL_NONE, 0, 0, false },
	/* in-capsule data */
	{ "in-capsule write", INLINE, NVME_XFER_HOST_TO_CTRLR, 0, 4096, 4096, 0, RDMA_SGL_INLINE,
	  4096, 0, false },
	{ "in-capsule write at an offset", INLINE, NVME_XFER_HOST_TO_CTRLR, 512, 1024, 2048, 0,
	  RDMA_SGL_INLINE, 1024, 512, false },
	{ "in-capsule, more announced than sent", INLINE, NVME_XFER_HOST_TO_CTRLR, 0, 8192, 4096,
	  ST(NVME_SC_DATA_SGL_LENGTH_INVALID), RDMA_SGL_NONE, 0, 0, false },
	{ "in-capsule, offset past the data", INLINE, NVME_XFER_HOST_TO_CTRLR, 8192, 16, 4096,
	  ST(NVME_SC_INVALID_SGL_OFFSET), RDMA_SGL_NONE, 0, 0, false },
	{ "in-capsule, offset + length past the data", INLINE, NVME_XFER_HOST_TO_CTRLR, 4000, 512,
	  4096, ST(NVME_SC_DATA_SGL_LENGTH_INVALID), RDMA_SGL_NONE, 0, 0, false },
	{ "in-capsule for a read", INLINE, NVME_XFER_CTRLR_TO_HOST, 0, 512, 512,
	  ST(NVME_SC_SGL_DESC_TYPE_INVALID), RDMA_SGL_NONE, 0, 0, false },
	{ "in-capsule, no data", INLINE, NVME_XFER_HOST_TO_CTRLR, 0, 0, 0, 0, RDMA_SGL_NONE, 0, 0,
	  false },
	{ "data block with an address (not offset)", INLINE_RAW, NVME_XFER_HOST_TO_CTRLR, 0, 512,
	  512, ST(NVME_SC_SGL_DESC_TYPE_INVALID), RDMA_SGL_NONE, 0, 0, false },
	/* descriptors RDMA does not use */
	{ "transport data block (NVMe/TCP)", TRANSPORT, NVME_XFER_HOST_TO_CTRLR, 0, 512, 0,
	  ST(NVME_SC_SGL_DESC_TYPE_INVALID), RDMA_SGL_NONE, 0, 0, false },
	{ "PRP-looking bytes on a command without data", PRP, NVME_XFER_NONE, 0x1000, 0, 0, 0,
	  RDMA_SGL_NONE, 0, 0, false },
};

static const struct rdma_sgl_limits sgl_lim = { .max_io = MAX_IO, .max_desc = RDMA_SGL_DESC_MAX };
static const uint8_t icd_zero[8192];

static void build_sgl(struct nvme_cmd *cmd, const struct sgl_case *c)
{
	struct nvme_sgl_desc *sgl = &cmd->dptr.sgl1;

	memset(cmd, 0, sizeof(*cmd));
	switch (c->form) {
	case KEYED:
	case KEYED_INV:
		nvme_sgl_set_keyed(sgl, c->addr, c->len, 0xabcd1234, c->form == KEYED_INV);
		break;
	case KEYED_SUB:
		nvme_sgl_set_keyed(sgl, c->addr, c->len, 0xabcd1234, false);
		sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK, 0x3);
		break;
	case INLINE:
		nvme_sgl_set_inline(sgl, c->addr, c->len);
		break;
	case INLINE_RAW:
		nvme_sgl_set_inline(sgl, c->addr, c->len);
		sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_ADDRESS);
		break;
	case TRANSPORT:
		put_le32(sgl->length, c->len);
		sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
					  NVME_SGL_SUBTYPE_TRANSPORT);
		break;
	case PRP:
		put_le64(&cmd->dptr.prp.prp1, c->addr);
		break;
	}
}

static void test_sgl_parse(void)
{
	for (size_t i = 0; i < sizeof(sgl_cases) / sizeof(sgl_cases[0]); i++) {
		const struct sgl_case *c = &sgl_cases[i];
		struct nvme_cmd cmd;
		struct rdma_sgl out;
		uint16_t st;

		build_sgl(&cmd, c);
		memset(&out, 0xee, sizeof(out));
		st = rdma_sgl_parse(&cmd, c->xfer, icd_zero, c->icdata, &sgl_lim, &out);
		if (st != c->want_status || (st == 0 && out.kind != c->kind))
			fprintf(stderr, "  %s: status 0x%04x kind %d, want 0x%04x kind %d\n",
				c->what, st, out.kind, c->want_status, c->kind);
		CU_ASSERT_EQUAL(st, c->want_status);
		if (st)
			continue;
		CU_ASSERT_EQUAL(out.kind, c->kind);
		CU_ASSERT_EQUAL(out.len, c->want_len);
		if (c->kind == RDMA_SGL_INLINE)
			CU_ASSERT_EQUAL(out.offset, c->want_off);
		if (c->kind == RDMA_SGL_KEYED) {
			CU_ASSERT_EQUAL(out.ndesc, 1);
			CU_ASSERT_EQUAL(out.desc[0].addr, c->addr);
			CU_ASSERT_EQUAL(out.desc[0].key, 0xabcd1234);
			CU_ASSERT_EQUAL(out.desc[0].len, c->want_len);
			CU_ASSERT_EQUAL(out.key, 0xabcd1234);
			CU_ASSERT_EQUAL(out.invalidate, c->want_inv);
		}
	}
}

/* The host asked for invalidation on a command without data: still honoured. */
static void test_sgl_invalidate_without_data(void)
{
	struct nvme_cmd cmd;
	struct rdma_sgl out;

	memset(&cmd, 0, sizeof(cmd));
	nvme_sgl_set_keyed(&cmd.dptr.sgl1, 0, 0, 0x55, true);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_NONE, NULL, 0, &sgl_lim, &out), 0);
	CU_ASSERT_EQUAL(out.kind, RDMA_SGL_NONE);
	CU_ASSERT_TRUE(out.invalidate);
	CU_ASSERT_EQUAL(out.key, 0x55);
}

/* ---- descriptor lists in the capsule (Last Segment, offset subtype) ---- */

/* @n keyed descriptors at in-capsule offset @off, SGL1 a Last Segment of @n * 16 bytes. */
static void build_list(struct nvme_cmd *cmd, uint8_t *icd, uint32_t off, unsigned int n)
{
	memset(cmd, 0, sizeof(*cmd));
	memset(icd, 0, 4096);
	for (unsigned int i = 0; i < n; i++) {
		struct nvme_sgl_desc d;

		nvme_sgl_set_keyed(&d, 0x10000000ull * (i + 1), 4096 * (i + 1), 0x100 + i, false);
		memcpy(icd + off + i * sizeof(d), &d, sizeof(d));
	}
	put_le64(&cmd->dptr.sgl1.addr, off);
	put_le32(cmd->dptr.sgl1.length, n * 16);
	cmd->dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_LAST_SEGMENT, NVME_SGL_SUBTYPE_OFFSET);
}

static void test_sgl_list(void)
{
	static uint8_t icd[4096];
	struct rdma_sgl_limits big = { .max_io = 1u << 20, .max_desc = RDMA_SGL_DESC_MAX };
	struct nvme_cmd cmd;
	struct rdma_sgl out;

	build_list(&cmd, icd, 0, 3);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 48, &big, &out), 0);
	CU_ASSERT_EQUAL(out.kind, RDMA_SGL_KEYED);
	CU_ASSERT_EQUAL(out.ndesc, 3);
	CU_ASSERT_EQUAL(out.len, 4096 + 8192 + 12288);
	for (unsigned int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(out.desc[i].addr, 0x10000000ull * (i + 1));
		CU_ASSERT_EQUAL(out.desc[i].len, 4096 * (i + 1));
		CU_ASSERT_EQUAL(out.desc[i].key, 0x100 + i);
	}
	CU_ASSERT_FALSE(out.invalidate);

	/* the most the target takes, at an offset, for a read */
	build_list(&cmd, icd, 64, RDMA_SGL_DESC_MAX);
	CU_ASSERT_EQUAL(
		rdma_sgl_parse(&cmd, NVME_XFER_CTRLR_TO_HOST, icd, 64 + 16 * 16, &big, &out), 0);
	CU_ASSERT_EQUAL(out.ndesc, RDMA_SGL_DESC_MAX);
	CU_ASSERT_EQUAL(out.desc[RDMA_SGL_DESC_MAX - 1].key, 0x100 + RDMA_SGL_DESC_MAX - 1);

	/* zero-length descriptors move nothing and are left out */
	build_list(&cmd, icd, 0, 3);
	icd[16 + 8] = icd[16 + 9] = icd[16 + 10] = 0; /* descriptor 1: length 0 */
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_CTRLR_TO_HOST, icd, 48, &big, &out), 0);
	CU_ASSERT_EQUAL(out.ndesc, 2);
	CU_ASSERT_EQUAL(out.desc[1].key, 0x102);
	CU_ASSERT_EQUAL(out.len, 4096 + 12288);

	/* a list on a command that moves no data: nothing to do */
	build_list(&cmd, icd, 0, 2);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_NONE, icd, 32, &big, &out), 0);
	CU_ASSERT_EQUAL(out.kind, RDMA_SGL_NONE);
}

static void test_sgl_list_bad(void)
{
	static uint8_t icd[4096];
	struct rdma_sgl_limits big = { .max_io = 1u << 20, .max_desc = RDMA_SGL_DESC_MAX };
	struct rdma_sgl_limits four = { .max_io = 1u << 20, .max_desc = 4 };
	struct nvme_cmd cmd;
	struct rdma_sgl out;

	/* more descriptors than MSDBD */
	build_list(&cmd, icd, 0, 5);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 80, &four, &out),
			ST(NVME_SC_INVALID_NUM_SGL_DESC));
	build_list(&cmd, icd, 0, RDMA_SGL_DESC_MAX + 1);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 4096, &big, &out),
			ST(NVME_SC_INVALID_NUM_SGL_DESC));
	/* not a whole number of descriptors, or none */
	build_list(&cmd, icd, 0, 2);
	put_le32(cmd.dptr.sgl1.length, 24);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 48, &big, &out),
			ST(NVME_SC_INVALID_SGL_SEG_DESC));
	put_le32(cmd.dptr.sgl1.length, 0);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 48, &big, &out),
			ST(NVME_SC_INVALID_SGL_SEG_DESC));
	/* the list runs past what the capsule carried, or starts beyond it */
	build_list(&cmd, icd, 0, 3);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 40, &big, &out),
			ST(NVME_SC_INVALID_SGL_SEG_DESC));
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 0, &big, &out),
			ST(NVME_SC_INVALID_SGL_SEG_DESC));
	build_list(&cmd, icd, 64, 1);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 32, &big, &out),
			ST(NVME_SC_INVALID_SGL_OFFSET));
	put_le64(&cmd.dptr.sgl1.addr, 0xffffffffffffff00ull);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 4096, &big, &out),
			ST(NVME_SC_INVALID_SGL_OFFSET));
	/* a list entry that is not a plain keyed data block */
	build_list(&cmd, icd, 0, 2);
	icd[16 + 15] = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 32, &big, &out),
			ST(NVME_SC_SGL_DESC_TYPE_INVALID));
	icd[16 + 15] =
		NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK, NVME_SGL_SUBTYPE_INVALIDATE_KEY);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 32, &big, &out),
			ST(NVME_SC_SGL_DESC_TYPE_INVALID));
	icd[16 + 15] = NVME_SGL_TYPE(NVME_SGL_TYPE_LAST_SEGMENT, NVME_SGL_SUBTYPE_OFFSET);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 32, &big, &out),
			ST(NVME_SC_SGL_DESC_TYPE_INVALID));
	/* more data than one command may move */
	build_list(&cmd, icd, 0, 4); /* 40 KiB */
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 64, &sgl_lim, &out), 0);
	four.max_io = 32768;
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 64, &four, &out),
			ST(NVME_SC_DATA_SGL_LENGTH_INVALID));
	CU_ASSERT_EQUAL(out.kind, RDMA_SGL_NONE);
	/* a list in host memory (address subtype) would need an RDMA READ of the list */
	build_list(&cmd, icd, 0, 2);
	cmd.dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_LAST_SEGMENT, NVME_SGL_SUBTYPE_ADDRESS);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, icd, 32, &big, &out),
			ST(NVME_SC_SGL_DESC_TYPE_INVALID));
	/* no capsule bytes at all */
	build_list(&cmd, icd, 0, 2);
	CU_ASSERT_EQUAL(rdma_sgl_parse(&cmd, NVME_XFER_HOST_TO_CTRLR, NULL, 32, &big, &out),
			ST(NVME_SC_INVALID_SGL_OFFSET));
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "CM request checks", test_cm_check },
		{ "CM request bytes to check", test_cm_wire_to_check },
		{ "registered before Connect", test_preconnect_region },
		{ "Connect QID against the CM request", test_connect_qid },
		{ "SGL classification", test_sgl_parse },
		{ "invalidate without data", test_sgl_invalidate_without_data },
		{ "descriptor list in the capsule", test_sgl_list },
		{ "bad descriptor lists", test_sgl_list_bad },
		CU_TEST_INFO_NULL,
	};

	return ut_run("rdma_proto", NULL, NULL, tests);
}
