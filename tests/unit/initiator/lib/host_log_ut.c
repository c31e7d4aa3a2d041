/* SPDX-License-Identifier: MIT */
/* initiator/log.c: the application's log callback and level, per-thread error strings. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "lib/queue/host_internal.h"
#include "ut.h"

static char got[8][256];
static int ngot;
static enum nvmeof_log_level levels[8];

static void sink(enum nvmeof_log_level lvl, const char *msg, void *arg)
{
	int *calls = arg;

	(*calls)++;
	if (ngot < 8) {
		levels[ngot] = lvl;
		snprintf(got[ngot++], sizeof(got[0]), "%s", msg);
	}
}

static void test_callback_and_level(void)
{
	int calls = 0;

	nlog_err("silent by default %d", 1);
	CU_ASSERT_EQUAL(ngot, 0);
	nvmeof_set_log_fn(sink, &calls, NVMEOF_LOG_WARN);
	nlog_err("error %d", 2);
	nlog_warn("warning %s", "x");
	nlog_info("info is above the level");
	nlog_debug("debug too");
	CU_ASSERT_EQUAL(calls, 2);
	CU_ASSERT_STRING_EQUAL(got[0], "error 2");
	CU_ASSERT_EQUAL(levels[0], NVMEOF_LOG_ERR);
	CU_ASSERT_STRING_EQUAL(got[1], "warning x");
	CU_ASSERT_EQUAL(levels[1], NVMEOF_LOG_WARN);
	CU_ASSERT(nlog_enabled(NVMEOF_LOG_WARN));
	CU_ASSERT_FALSE(nlog_enabled(NVMEOF_LOG_INFO));
	nvmeof_set_log_fn(sink, &calls, NVMEOF_LOG_DEBUG);
	nlog_debug("now %d", 3);
	CU_ASSERT_EQUAL(calls, 3);
	nvmeof_set_log_fn(NULL, NULL, NVMEOF_LOG_DEBUG);
	nlog_err("gone");
	CU_ASSERT_EQUAL(calls, 3);
}

static void *other_thread(void *arg)
{
	set_error(-EIO, "from the other thread");
	return NULL;
}

static void test_errors_per_thread(void)
{
	pthread_t t;

	clear_error();
	CU_ASSERT_STRING_EQUAL(nvmeof_last_error(), "");
	CU_ASSERT_EQUAL(set_error(-ENOENT, "no %s", "such thing"), -ENOENT);
	CU_ASSERT_STRING_EQUAL(nvmeof_last_error(), "no such thing");
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, NULL);
	CU_ASSERT_STRING_EQUAL(nvmeof_last_error(), "no such thing");
	clear_error();
	CU_ASSERT_STRING_EQUAL(nvmeof_last_error(), "");
}

static void test_clock(void)
{
	uint64_t a = now_ms(), b;

	usleep(20000);
	b = now_ms();
	CU_ASSERT(b - a >= 19 && b - a < 1000);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "log callback and level", test_callback_and_level },
		{ "per-thread error strings", test_errors_per_thread },
		{ "monotonic clock", test_clock },
		CU_TEST_INFO_NULL,
	};

	return ut_run("initiator_log", NULL, NULL, tests);
}
