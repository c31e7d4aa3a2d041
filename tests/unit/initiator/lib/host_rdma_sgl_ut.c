/* SPDX-License-Identifier: MIT */
/*
 * Keyed SGL descriptors of zero-copy NVMe/RDMA commands (host_rdma_sgl.c): which I/O names
 * registered memory, how pieces merge and split, when a command needs too many
 * descriptors; and that the target's parser (target/rdma/rdma_proto.c) reads back what
 * the host built, one descriptor or a list in the capsule.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/endian.h"
#include "common/nvme_rdma_spec.h"
#include "lib/nvme/host_rdma_sgl.h"
#include "rdma/rdma_proto.h"
#include "ut.h"

static uint8_t region_a[1 << 16], region_b[1 << 16], plain[4096];
static struct host_mem mem;

static void setup_mem(void)
{
	memset(&mem, 0, sizeof(mem));
	mem.r[0] = (struct host_mem_region){
		.base = (uintptr_t)region_a, .len = sizeof(region_a), .key = 0xaaaa, .valid = true
	};
	mem.r[5] = (struct host_mem_region){
		.base = (uintptr_t)region_b, .len = sizeof(region_b), .key = 0xbbbb, .valid = true
	};
	mem.count = 2;
}

static void check_desc(const struct nvme_sgl_desc *d, const void *addr, uint32_t len, uint32_t key)
{
	CU_ASSERT_EQUAL(d->type,
			NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK, NVME_SGL_SUBTYPE_ADDRESS));
	CU_ASSERT_EQUAL(nvme_sgl_addr(d), (uintptr_t)addr);
	CU_ASSERT_EQUAL(nvme_sgl_keyed_len(d), len);
	CU_ASSERT_EQUAL(nvme_sgl_keyed_key(d), key);
}

static void test_find(void)
{
	setup_mem();
	CU_ASSERT_PTR_EQUAL(host_mem_find(&mem, (uintptr_t)region_a, sizeof(region_a)), &mem.r[0]);
	CU_ASSERT_PTR_EQUAL(host_mem_find(&mem, (uintptr_t)region_b + 100, 10), &mem.r[5]);
	/* running past the end of a region, or outside every region */
	CU_ASSERT_PTR_NULL(host_mem_find(&mem, (uintptr_t)region_a + 100, sizeof(region_a)));
	CU_ASSERT_PTR_NULL(host_mem_find(&mem, (uintptr_t)plain, 16));
	mem.r[0].valid = false;
	CU_ASSERT_PTR_NULL(host_mem_find(&mem, (uintptr_t)region_a, 16));
	mem.count = 0;
	CU_ASSERT_PTR_NULL(host_mem_find(&mem, (uintptr_t)region_b, 16));
}

static void test_build(void)
{
	struct nvme_sgl_desc d[HOST_RDMA_SGL_MAX];
	struct iovec iov[4];

	setup_mem();
	/* one buffer */
	iov[0] = (struct iovec){ region_a, 8192 };
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 1, 0, 8192, d, 1), 1);
	check_desc(&d[0], region_a, 8192, 0xaaaa);
	/* adjacent pieces of one region merge into one descriptor */
	iov[0] = (struct iovec){ region_a, 4096 };
	iov[1] = (struct iovec){ region_a + 4096, 4096 };
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 2, 0, 8192, d, 1), 1);
	check_desc(&d[0], region_a, 8192, 0xaaaa);
	/* scattered pieces: one descriptor each, in data order; too many for MSDBD 2 */
	iov[0] = (struct iovec){ region_b + 512, 4096 };
	iov[1] = (struct iovec){ region_a + 8192, 1024 };
	iov[2] = (struct iovec){ region_a, 3072 };
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 3, 0, 8192, d, 16), 3);
	check_desc(&d[0], region_b + 512, 4096, 0xbbbb);
	check_desc(&d[1], region_a + 8192, 1024, 0xaaaa);
	check_desc(&d[2], region_a, 3072, 0xaaaa);
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 3, 0, 8192, d, 2), -E2BIG);
	/* a child command's slice: from an offset, for part of the data */
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 3, 4096 + 512, 2048, d, 16), 2);
	check_desc(&d[0], region_a + 8192 + 512, 512, 0xaaaa);
	check_desc(&d[1], region_a, 1536, 0xaaaa);
	/* any piece outside registered memory: the bounce path (0) */
	iov[1] = (struct iovec){ plain, 1024 };
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 3, 0, 8192, d, 16), 0);
	/* ... but not when that piece is outside this command's slice */
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 3, 0, 4096, d, 16), 1);
	/* iovecs shorter than the command: left to the bounce path */
	iov[0] = (struct iovec){ region_a, 4096 };
	CU_ASSERT_EQUAL(host_rdma_sgl_build(&mem, iov, 1, 0, 8192, d, 16), 0);
}

/* What the host builds, the target parses back into the same pieces. */
static void round_trip(const struct iovec *iov, int iovcnt, uint32_t len, unsigned int max,
		       enum nvme_data_xfer xfer)
{
	struct rdma_sgl_limits lim = { .max_io = 1u << 20, .max_desc = RDMA_SGL_DESC_MAX };
	struct nvme_sgl_desc d[HOST_RDMA_SGL_MAX];
	uint8_t capsule[64 + 16 * HOST_RDMA_SGL_MAX];
	struct nvme_cmd *sqe = (struct nvme_cmd *)capsule;
	struct rdma_sgl out;
	size_t off = 0;
	int n;

	memset(capsule, 0, sizeof(capsule));
	n = host_rdma_sgl_build(&mem, iov, iovcnt, 0, len, d, max);
	CU_ASSERT_TRUE_FATAL(n > 0);
	host_rdma_sgl_set(sqe, d, (unsigned int)n);
	if (n > 1) {
		CU_ASSERT_EQUAL(sqe->dptr.sgl1.type,
				NVME_SGL_TYPE(NVME_SGL_TYPE_LAST_SEGMENT, NVME_SGL_SUBTYPE_OFFSET));
		memcpy(capsule + 64, d, (size_t)n * sizeof(d[0]));
	}
	CU_ASSERT_EQUAL(rdma_sgl_parse(sqe, xfer, capsule + 64, n > 1 ? (uint32_t)n * 16 : 0, &lim,
				       &out),
			0);
	CU_ASSERT_EQUAL(out.kind, RDMA_SGL_KEYED);
	CU_ASSERT_EQUAL(out.len, len);
	CU_ASSERT_EQUAL(out.ndesc, (uint32_t)n);
	for (int i = 0; i < n && i < (int)out.ndesc; i++) {
		CU_ASSERT_EQUAL(out.desc[i].addr, (uintptr_t)iov[i].iov_base);
		CU_ASSERT_EQUAL(out.desc[i].len, iov[i].iov_len);
		off += out.desc[i].len;
	}
	CU_ASSERT_EQUAL(off, len);
}

static void test_round_trip(void)
{
	struct iovec iov[HOST_RDMA_SGL_MAX];

	setup_mem();
	iov[0] = (struct iovec){ region_b, 65536 };
	round_trip(iov, 1, 65536, 1, NVME_XFER_CTRLR_TO_HOST);
	for (int i = 0; i < HOST_RDMA_SGL_MAX; i++) /* every other 2 KiB: nothing merges */
		iov[i] = (struct iovec){ region_a + 4096 * i, 2048 };
	round_trip(iov, HOST_RDMA_SGL_MAX, 2048 * HOST_RDMA_SGL_MAX, HOST_RDMA_SGL_MAX,
		   NVME_XFER_HOST_TO_CTRLR);
	round_trip(iov, 3, 3 * 2048, 16, NVME_XFER_CTRLR_TO_HOST);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "registered memory lookup", test_find },
		{ "descriptor building", test_build },
		{ "host to target round trip", test_round_trip },
		CU_TEST_INFO_NULL,
	};

	return ut_run("host_rdma_sgl", NULL, NULL, tests);
}
