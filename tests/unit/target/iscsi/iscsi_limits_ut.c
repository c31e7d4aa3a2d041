// SPDX-License-Identifier: MIT
/* Unit tests for target/iscsi/iscsi_limits.c: the NOP-In ping clock (a ping after the
 * interval of silence, none while PDUs come in, the session ended when the answer does
 * not come within the timeout, a wrong or late TTT no answer, pings off), the Data-Out
 * deadline, and a session's share of its reactor's buffer pool as its initiator opens
 * more sessions there (never below two whole commands and one). */
#include <CUnit/Basic.h>
#include <string.h>

#include "iscsi/iscsi_internal.h"
#include "ut.h"

#define T ISCSI_TICK_MS

static void test_ping_after_silence(void)
{
	struct iscsi_ping p;
	int sent_at = -1;

	memset(&p, 0, sizeof(p));
	for (int i = 1; i <= 20 && sent_at < 0; i++)
		if (iscsi_ping_tick(&p, false, T, 5000, 10000) == ISCSI_PING_SEND)
			sent_at = i;
	CU_ASSERT_EQUAL(sent_at, 5);
	CU_ASSERT_TRUE(p.out);
	/* no second ping while one is out */
	CU_ASSERT_EQUAL(iscsi_ping_tick(&p, false, T, 5000, 10000), ISCSI_PING_NONE);
}

static void test_no_ping_while_busy(void)
{
	struct iscsi_ping p;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(iscsi_ping_tick(&p, i % 3 == 0, T, 5000, 10000), ISCSI_PING_NONE);
	CU_ASSERT_FALSE(p.out);
}

static void test_ping_answered(void)
{
	struct iscsi_ping p;

	memset(&p, 0, sizeof(p));
	p.ttt = 0x42;
	CU_ASSERT_EQUAL(iscsi_ping_tick(&p, false, 5000, 5000, 10000), ISCSI_PING_SEND);
	CU_ASSERT_FALSE(iscsi_ping_answered(&p, 0x41)); /* not ours */
	CU_ASSERT_TRUE(p.out);
	CU_ASSERT_TRUE(iscsi_ping_answered(&p, 0x42));
	CU_ASSERT_FALSE(p.out);
	CU_ASSERT_FALSE(iscsi_ping_answered(&p, 0x42)); /* twice: no ping out */
	/* the clock starts again from the answer */
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(iscsi_ping_tick(&p, false, T, 5000, 10000), ISCSI_PING_NONE);
	CU_ASSERT_EQUAL(iscsi_ping_tick(&p, false, T, 5000, 10000), ISCSI_PING_SEND);
}

static void test_ping_expires(void)
{
	struct iscsi_ping p;
	int expired_at = -1;

	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(iscsi_ping_tick(&p, false, 2000, 2000, 3000), ISCSI_PING_SEND);
	/* other PDUs trickling in are no answer */
	for (int i = 1; i <= 10 && expired_at < 0; i++)
		if (iscsi_ping_tick(&p, true, T, 2000, 3000) == ISCSI_PING_EXPIRED)
			expired_at = i;
	CU_ASSERT_EQUAL(expired_at, 3);
}

static void test_pings_off(void)
{
	struct iscsi_ping p;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 100000; i++)
		if (iscsi_ping_tick(&p, false, 60000, 0, 1000) != ISCSI_PING_NONE)
			CU_FAIL("a ping with pings off");
	/* the silence saturates instead of wrapping to zero */
	CU_ASSERT_TRUE(p.quiet_ms > UINT32_MAX - 60000u);
}

static void test_dataout_deadline(void)
{
	static const struct {
		double since, now;
		uint32_t timeout_ms;
		bool late;
	} cases[] = {
		{ 100.0, 100.0, 2000, false }, { 100.0, 101.999, 2000, false },
		{ 100.0, 102.0, 2000, true },  { 100.0, 500.0, 2000, true },
		{ 100.0, 5000.0, 0, false }, /* no deadline */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(iscsi_dataout_late(cases[i].since, cases[i].now,
						   cases[i].timeout_ms),
				cases[i].late);
}

static void test_buf_cap(void)
{
	static const struct {
		unsigned int limit, here, cap;
	} cases[] = {
		{ 2048, 1, 256 },   /* alone: 1/8 of the pool */
		{ 2048, 2, 256 },   /* 512 / 2 = 256 */
		{ 2048, 4, 128 },   /* the initiator's 1/4 split four ways */
		{ 2048, 10, 51 },   /* 512 / 10 */
		{ 2048, 64, 33 },   /* floor: two whole commands and one */
		{ 64, 1, 33 },      /* a small pool: the floor */
		{ 65536, 3, 5461 }, /* 16384 / 3, under 1/8 = 8192 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(iscsi_buf_cap(cases[i].limit, cases[i].here, 16), cases[i].cap);
	/* whatever the count, an initiator's sessions together stay near 1/4 of the pool */
	for (unsigned int n = 2; n <= 15; n++)
		CU_ASSERT_TRUE(n * iscsi_buf_cap(2048, n, 16) <= 2048 / 4);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "ping after silence", test_ping_after_silence },
		{ "no ping while busy", test_no_ping_while_busy },
		{ "ping answered", test_ping_answered },
		{ "ping expires", test_ping_expires },
		{ "pings off", test_pings_off },
		{ "Data-Out deadline", test_dataout_deadline },
		{ "buffer share", test_buf_cap },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_limits", NULL, NULL, tests);
}
