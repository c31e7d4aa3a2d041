/* SPDX-License-Identifier: MIT */
/*
 * The bookkeeping of MSG_ZEROCOPY confirmations (tcp_zerocopy.c) without a socket: send
 * numbers taken in order, confirmation ranges arriving in order, out of order, merged
 * into one range and straddling the wrap of the 32-bit counter; numbers outside the
 * unconfirmed window ignored; the window's limit.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "tcp/tcp_internal.h"
#include "ut.h"

static struct tcp_zc_ring ring_at(uint32_t start)
{
	struct tcp_zc_ring r;

	memset(&r, 0, sizeof(r));
	r.head = r.next = start;
	return r;
}

static void test_in_order(void)
{
	struct tcp_zc_ring r = ring_at(0);

	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 0);
	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 1);
	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 2);
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 0));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 0, 0), 1);
	CU_ASSERT_TRUE(tcp_zc_ring_passed(&r, 0));
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 1));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 1, 2), 2); /* a merged range */
	CU_ASSERT_TRUE(tcp_zc_ring_passed(&r, 2));
	CU_ASSERT_EQUAL(r.head, r.next);
	/* the bits were cleared on the way: the same numbers, one lap later, start unconfirmed */
	CU_ASSERT_EQUAL(r.bits[0] | r.bits[1], 0);
}

static void test_out_of_order(void)
{
	struct tcp_zc_ring r = ring_at(100);

	for (int i = 0; i < 5; i++)
		tcp_zc_ring_push(&r);                          /* 100..104 */
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 103, 104), 0); /* ahead of head: waits */
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 100));
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 103));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 101, 101), 0);
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 100, 100), 2); /* 100, 101; 102 still due */
	CU_ASSERT_TRUE(tcp_zc_ring_passed(&r, 101));
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 102));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 102, 102), 3); /* and the two seen early */
	CU_ASSERT_TRUE(tcp_zc_ring_passed(&r, 104));
	CU_ASSERT_EQUAL(r.head, 105);
}

static void test_wraparound(void)
{
	struct tcp_zc_ring r = ring_at(0xfffffffdu);

	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 0xfffffffdu);
	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 0xfffffffeu);
	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 0xffffffffu);
	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 0);
	CU_ASSERT_EQUAL(tcp_zc_ring_push(&r), 1);
	CU_ASSERT_FALSE(tcp_zc_ring_full(&r));
	/* a range across the wrap: ee_info > ee_data */
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 0xffffffffu, 0), 0);
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 0xfffffffdu));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 0xfffffffdu, 0xfffffffeu), 4);
	CU_ASSERT_TRUE(tcp_zc_ring_passed(&r, 0xffffffffu));
	CU_ASSERT_TRUE(tcp_zc_ring_passed(&r, 0)); /* 0 comes after 0xffffffff */
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 1));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 1, 1), 1);
	CU_ASSERT_EQUAL(r.head, 2);
	CU_ASSERT_EQUAL(r.next, 2);
}

static void test_stale_and_bogus(void)
{
	struct tcp_zc_ring r = ring_at(10);

	tcp_zc_ring_push(&r);
	tcp_zc_ring_push(&r);                                /* 10, 11 */
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 5, 9), 0);   /* already confirmed numbers */
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 12, 40), 0); /* never sent */
	CU_ASSERT_EQUAL(r.head, 10);
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 12, 40), 0);
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 0, 0xffffffffu), 2); /* everything */
	CU_ASSERT_EQUAL(r.head, 12);
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, 10, 11), 0); /* the same again */
	CU_ASSERT_EQUAL(r.head, 12);
	/* 12 was reported before it was sent: sent now, it must still be due */
	tcp_zc_ring_push(&r);
	CU_ASSERT_FALSE(tcp_zc_ring_passed(&r, 12));
}

static void test_full(void)
{
	struct tcp_zc_ring r = ring_at(0xffffffc0u);

	for (unsigned int i = 0; i < TCP_ZC_RING; i++) {
		CU_ASSERT_FALSE(tcp_zc_ring_full(&r));
		tcp_zc_ring_push(&r);
	}
	CU_ASSERT_TRUE(tcp_zc_ring_full(&r));
	/* the last one first: a bit per number, none aliasing another */
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, r.next - 1, r.next - 1), 0);
	CU_ASSERT_TRUE(tcp_zc_ring_full(&r));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, r.head, r.head), 1);
	CU_ASSERT_FALSE(tcp_zc_ring_full(&r));
	CU_ASSERT_EQUAL(tcp_zc_ring_confirm(&r, r.head, r.next - 2), TCP_ZC_RING - 1);
	CU_ASSERT_EQUAL(r.head, r.next);
	CU_ASSERT_EQUAL(r.bits[0] | r.bits[1], 0);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "confirmations in order", test_in_order },
		{ "confirmations out of order", test_out_of_order },
		{ "the counter wraps", test_wraparound },
		{ "stale and bogus ranges", test_stale_and_bogus },
		{ "a full window", test_full },
		CU_TEST_INFO_NULL,
	};

	return ut_run("tcp_zc", NULL, NULL, tests);
}
