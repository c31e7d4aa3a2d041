/* SPDX-License-Identifier: MIT */
/* initiator/bench/bench_run.c: offsets of random and sequential workloads, the data pattern. */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ut.h"

static void test_xorshift(void)
{
	uint64_t st = 1, prev = 0;

	for (int i = 0; i < 1000; i++) {
		uint64_t v = bench_xorshift(&st);

		CU_ASSERT_NOT_EQUAL(st, 0);
		CU_ASSERT_NOT_EQUAL(v, prev);
		prev = v;
	}
}

/* Random offsets: aligned, inside the range, and spread over all of it. */
static void test_random_offsets(void)
{
	static const struct {
		uint32_t bs;
		uint64_t size;
	} cases[] = {
		{ 4096, 1ull << 30 }, { 65536, 1ull << 30 },	       { 4096, 8192 },
		{ 512, 1000 * 512 },  { 131072, (1ull << 20) + 4096 }, /* a partial last slot is never used */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t rng = 12345, cur = 0, slots = cases[i].size / cases[i].bs;
		uint64_t lo = UINT64_MAX, hi = 0;

		for (int k = 0; k < 20000; k++) {
			uint64_t off = bench_next_offset(BENCH_RANDREAD, cases[i].bs, cases[i].size,
							 0, 0, &cur, &rng);

			CU_ASSERT_FATAL(off % cases[i].bs == 0);
			CU_ASSERT_FATAL(off + cases[i].bs <= cases[i].size);
			lo = off < lo ? off : lo;
			hi = off > hi ? off : hi;
		}
		if (slots <= 1000) {
			CU_ASSERT_EQUAL(lo, 0);
			CU_ASSERT_EQUAL(hi, (slots - 1) * cases[i].bs);
		} else {
			CU_ASSERT(lo < cases[i].size / 100);
			CU_ASSERT(hi > cases[i].size / 100 * 99);
		}
	}
}

/* Sequential offsets walk the job's region and wrap at its end. */
static void test_sequential_offsets(void)
{
	uint64_t cur = 0, rng = 1;
	static const uint64_t want[] = { 1048576, 1114112, 1179648, 1245184, 1048576, 1114112 };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CU_ASSERT_EQUAL(bench_next_offset(BENCH_SEQWRITE, 65536, 1ull << 30, 1048576,
						  262144, &cur, &rng),
				want[i]);
	/* a region that is not a multiple of the I/O size: the tail is skipped */
	cur = 0;
	CU_ASSERT_EQUAL(bench_next_offset(BENCH_SEQREAD, 4096, 1 << 20, 0, 10000, &cur, &rng), 0);
	CU_ASSERT_EQUAL(bench_next_offset(BENCH_SEQREAD, 4096, 1 << 20, 0, 10000, &cur, &rng),
			4096);
	CU_ASSERT_EQUAL(bench_next_offset(BENCH_SEQREAD, 4096, 1 << 20, 0, 10000, &cur, &rng), 0);
}

static void test_pattern(void)
{
	static const uint32_t block_sizes[] = { 512, 4096 };

	for (size_t b = 0; b < sizeof(block_sizes) / sizeof(block_sizes[0]); b++) {
		uint32_t bsz = block_sizes[b], n = 8;
		uint8_t *buf = malloc((size_t)n * bsz), *other = malloc((size_t)n * bsz);

		CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
		CU_ASSERT_PTR_NOT_NULL_FATAL(other);
		bench_pattern_fill(buf, 1000, n, bsz);
		CU_ASSERT_EQUAL(bench_pattern_check(buf, 1000, n, bsz), -1);
		/* the same blocks written as part of a larger I/O look the same */
		bench_pattern_fill(other, 996, n, bsz);
		CU_ASSERT(memcmp(buf, other + 4 * bsz, 4 * bsz) == 0);
		/* read at the wrong LBA: the first block differs */
		CU_ASSERT_EQUAL(bench_pattern_check(buf, 1001, n, bsz), 0);
		/* one flipped byte in block 5 */
		buf[5 * bsz + bsz / 2] ^= 0x40;
		CU_ASSERT_EQUAL(bench_pattern_check(buf, 1000, n, bsz), 5);
		/* zeroes (never written) are not the pattern */
		memset(buf, 0, (size_t)n * bsz);
		CU_ASSERT_EQUAL(bench_pattern_check(buf, 0, n, bsz), 0);
		free(buf);
		free(other);
	}
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "xorshift generator", test_xorshift },
		{ "random offsets", test_random_offsets },
		{ "sequential offsets", test_sequential_offsets },
		{ "verification pattern", test_pattern },
		CU_TEST_INFO_NULL,
	};

	return ut_run("bench_run", NULL, NULL, tests);
}
