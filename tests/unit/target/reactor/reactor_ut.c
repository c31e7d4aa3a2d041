/* SPDX-License-Identifier: MIT */
/* Reactor threads, messages, deferred work, exit hooks and the buffer pool. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "reactor/reactor.h"
#include "ut.h"

static sem_t done;

/* Run @fn(@arg) on @r and wait for it. */
struct call {
	void (*fn)(void *arg);
	void *arg;
};

static void call_trampoline(void *arg)
{
	struct call *c = arg;

	c->fn(c->arg);
	sem_post(&done);
}

static void run_on(struct reactor *r, void (*fn)(void *), void *arg)
{
	struct call c = { fn, arg };

	CU_ASSERT_EQUAL_FATAL(reactor_send_msg(r, call_trampoline, &c), 0);
	sem_wait(&done);
}

/* ---- messages and identity ---- */

static void whoami(void *arg)
{
	*(struct reactor **)arg = reactor_self();
}

static void test_self_and_next(void)
{
	struct reactor *seen = NULL;
	struct reactor *a, *b, *c;

	CU_ASSERT_EQUAL(reactor_count(), 2);
	CU_ASSERT_PTR_NULL(reactor_self());
	for (unsigned int i = 0; i < reactor_count(); i++) {
		run_on(reactor_get(i), whoami, &seen);
		CU_ASSERT_PTR_EQUAL(seen, reactor_get(i));
		CU_ASSERT_EQUAL(seen->id, i);
	}
	CU_ASSERT_PTR_NULL(reactor_get(2));

	a = reactor_next();
	b = reactor_next();
	c = reactor_next();
	CU_ASSERT_PTR_NOT_EQUAL(a, b);
	CU_ASSERT_PTR_EQUAL(a, c);
	CU_ASSERT_EQUAL(reactor_send_msg(NULL, whoami, &seen), -EINVAL);
}

struct order {
	int seq[64];
	atomic_int n;
};

static void record(void *arg)
{
	struct order *o = *(struct order **)arg;
	int idx = atomic_fetch_add(&o->n, 1);

	o->seq[idx] = (int)(intptr_t)((void **)arg)[1];
}

static void test_msg_order(void)
{
	struct order o = { .n = 0 };
	void *args[32][2];
	struct reactor *r = reactor_get(1);
	struct reactor_stats before = r->stats;

	for (int i = 0; i < 32; i++) {
		args[i][0] = &o;
		args[i][1] = (void *)(intptr_t)i;
		CU_ASSERT_EQUAL(reactor_send_msg(r, record, args[i]), 0);
	}
	run_on(r, whoami, &(struct reactor *){ NULL });
	CU_ASSERT_EQUAL(atomic_load(&o.n), 32);
	for (int i = 0; i < 32; i++)
		CU_ASSERT_EQUAL(o.seq[i], i);
	CU_ASSERT(r->stats.msgs >= before.msgs + 33);
	CU_ASSERT(r->stats.loops > 0);
}

static atomic_int for_each_hits;
static atomic_uint for_each_mask;

static void for_each_fn(void *arg)
{
	atomic_fetch_or(&for_each_mask, 1u << reactor_self()->id);
	atomic_fetch_add(&for_each_hits, 1);
	sem_post(&done);
}

static void test_for_each(void)
{
	atomic_store(&for_each_hits, 0);
	atomic_store(&for_each_mask, 0);
	CU_ASSERT_EQUAL(reactor_for_each(for_each_fn, NULL), 0);
	sem_wait(&done);
	sem_wait(&done);
	CU_ASSERT_EQUAL(atomic_load(&for_each_hits), 2);
	CU_ASSERT_EQUAL(atomic_load(&for_each_mask), 3u);
}

/* ---- deferred work ---- */

struct defer_ctx {
	struct reactor_work w[3];
	int log[8];
	int n;
};

static struct defer_ctx g_dc;

static void defer_log(void *arg)
{
	int id = (int)(intptr_t)arg;

	g_dc.log[g_dc.n++] = id;
	/* Work queued from deferred work still runs before the loop sleeps. */
	if (id == 0)
		reactor_defer(reactor_self(), &g_dc.w[2]);
}

static void defer_setup(void *arg)
{
	struct reactor *r = reactor_self();

	memset(&g_dc, 0, sizeof(g_dc));
	for (int i = 0; i < 3; i++) {
		g_dc.w[i].fn = defer_log;
		g_dc.w[i].arg = (void *)(intptr_t)i;
	}
	reactor_defer(r, &g_dc.w[0]);
	reactor_defer(r, &g_dc.w[1]);
	reactor_defer(r, &g_dc.w[1]); /* already queued: no-op */
	CU_ASSERT_EQUAL(g_dc.n, 0);   /* nothing runs synchronously */
}

static void defer_cancel_setup(void *arg)
{
	struct reactor *r = reactor_self();

	memset(&g_dc, 0, sizeof(g_dc));
	for (int i = 0; i < 2; i++) {
		g_dc.w[i].fn = defer_log;
		g_dc.w[i].arg = (void *)(intptr_t)(i + 5);
	}
	reactor_defer(r, &g_dc.w[0]);
	reactor_defer(r, &g_dc.w[1]);
	reactor_defer_cancel(r, &g_dc.w[0]);
	CU_ASSERT_FALSE(g_dc.w[0].queued);
}

static void nothing(void *arg)
{
}

static void test_defer(void)
{
	struct reactor *r = reactor_get(0);

	run_on(r, defer_setup, NULL);
	/* The next message is handled in a later loop iteration: deferred work ran. */
	run_on(r, nothing, NULL);
	CU_ASSERT_EQUAL(g_dc.n, 3);
	CU_ASSERT_EQUAL(g_dc.log[0], 0);
	CU_ASSERT_EQUAL(g_dc.log[1], 1);
	CU_ASSERT_EQUAL(g_dc.log[2], 2);

	run_on(r, defer_cancel_setup, NULL);
	run_on(r, nothing, NULL);
	CU_ASSERT_EQUAL(g_dc.n, 1);
	CU_ASSERT_EQUAL(g_dc.log[0], 6);
}

/* ---- buffer pool ---- */

#define LIMIT 64
static void *bufs[LIMIT + 1];
static struct reactor_work waiter;
static int waiter_runs;
static void *waiter_got;

static void waiter_fn(void *arg)
{
	waiter_runs++;
	waiter_got = reactor_buf_get(reactor_self());
}

static void pool_exhaust(void *arg)
{
	struct reactor *r = reactor_self();
	struct reactor_buf_stats st;

	for (int i = 0; i < LIMIT; i++) {
		bufs[i] = reactor_buf_get(r);
		CU_ASSERT_PTR_NOT_NULL(bufs[i]);
		if (bufs[i]) {
			CU_ASSERT_EQUAL((uintptr_t)bufs[i] % 4096, 0);
			memset(bufs[i], 0xa5, reactor_buf_size()); /* whole chunk is usable */
		}
	}
	bufs[LIMIT] = reactor_buf_get(r);
	CU_ASSERT_PTR_NULL(bufs[LIMIT]);
	reactor_buf_stats(r, &st);
	CU_ASSERT_EQUAL(st.allocated, LIMIT);
	CU_ASSERT_EQUAL(st.limit, LIMIT);
	CU_ASSERT_EQUAL(st.free, 0);
	CU_ASSERT_EQUAL(st.exhausted, 1);

	waiter.fn = waiter_fn;
	waiter_runs = 0;
	waiter_got = NULL;
	reactor_buf_wait(r, &waiter);
	CU_ASSERT_TRUE(waiter.waiting);
}

static void pool_put_one(void *arg)
{
	struct reactor *r = reactor_self();

	CU_ASSERT_EQUAL(waiter_runs, 0);
	reactor_buf_put(r, bufs[3]);
	CU_ASSERT_FALSE(waiter.waiting);
	CU_ASSERT_TRUE(waiter.queued);
	CU_ASSERT_EQUAL(waiter_runs, 0); /* deferred, not called from put */
}

static void pool_check_waiter(void *arg)
{
	struct reactor *r = reactor_self();
	struct reactor_buf_stats st;

	CU_ASSERT_EQUAL(waiter_runs, 1);
	CU_ASSERT_PTR_EQUAL(waiter_got, bufs[3]); /* LIFO free list: the chunk just returned */
	bufs[3] = waiter_got;

	/* Cancelled waiters never run. */
	reactor_buf_wait(r, &waiter);
	reactor_buf_wait_cancel(r, &waiter);
	CU_ASSERT_FALSE(waiter.waiting);
	for (int i = 0; i < LIMIT; i++)
		reactor_buf_put(r, bufs[i]);
	reactor_buf_stats(r, &st);
	CU_ASSERT_EQUAL(st.free, LIMIT);
	CU_ASSERT_EQUAL(st.allocated, LIMIT);
	/* Reuse does not allocate more. */
	bufs[0] = reactor_buf_get(r);
	reactor_buf_put(r, bufs[0]);
	reactor_buf_stats(r, &st);
	CU_ASSERT_EQUAL(st.allocated, LIMIT);
}

static void test_pool(void)
{
	struct reactor *r = reactor_get(1);

	CU_ASSERT_EQUAL(reactor_buf_size(), 8192); /* 5000 rounded up to 4 KiB */
	run_on(r, pool_exhaust, NULL);
	run_on(r, pool_put_one, NULL);
	run_on(r, nothing, NULL);
	run_on(r, pool_check_waiter, NULL);
	run_on(r, nothing, NULL);
	CU_ASSERT_EQUAL(waiter_runs, 1);
}

/* ---- CPU time ---- */

static void burn(void *arg)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
}

static void test_cpu_ns(void)
{
	struct reactor *r = reactor_get(0);
	uint64_t before = reactor_cpu_ns(r), after;

	run_on(r, burn, NULL);
	after = reactor_cpu_ns(r);
	CU_ASSERT(after >= before + 20000000ull);
	CU_ASSERT(after < before + 5000000000ull);
	CU_ASSERT_EQUAL(reactor_cpu_ns(NULL), 0);
}

/* ---- adaptive polling ---- */

static void poke(void *arg)
{
	sem_post(&done);
}

/*
 * Messages 20 us apart: the reactor polls between them rather than sleeping (iterations
 * that found nothing); once they stop it goes back to sleep within the window and then
 * uses no CPU.
 */
static void test_adaptive_poll(void)
{
	struct reactor *r = reactor_get(1);
	struct reactor_stats before = r->stats;
	struct timespec gap = { 0, 20000 };
	uint64_t cpu0, cpu1;

	for (int i = 0; i < 500; i++) {
		CU_ASSERT_EQUAL_FATAL(reactor_send_msg(r, poke, NULL), 0);
		sem_wait(&done);
		nanosleep(&gap, NULL);
	}
	CU_ASSERT(r->stats.poll_events >= before.poll_events + 500);
	CU_ASSERT(r->stats.poll_empty > before.poll_empty);
	usleep(100000); /* longer than the longest window: asleep now */
	CU_ASSERT(r->stats.poll_sleeps > before.poll_sleeps);
	cpu0 = reactor_cpu_ns(r);
	usleep(200000);
	cpu1 = reactor_cpu_ns(r);
	CU_ASSERT(cpu1 - cpu0 < 20000000ull); /* well under 10% of the 200 ms */
}

/* ---- exit hooks and stop ---- */

static atomic_int exit_hook_ids;
static pthread_t exit_hook_thread[2];

static void exit_hook(void *arg)
{
	struct reactor *r = arg;

	CU_ASSERT_PTR_EQUAL(reactor_self(), r);
	exit_hook_thread[r->id] = pthread_self();
	atomic_fetch_or(&exit_hook_ids, 1 << r->id);
}

static void add_hook(void *arg)
{
	CU_ASSERT_EQUAL(reactor_on_exit(reactor_self(), exit_hook, reactor_self()), 0);
}

static void test_stop(void)
{
	pthread_t t0 = reactor_get(0)->thread, t1 = reactor_get(1)->thread;

	run_on(reactor_get(0), add_hook, NULL);
	run_on(reactor_get(1), add_hook, NULL);
	reactors_stop();
	CU_ASSERT_EQUAL(atomic_load(&exit_hook_ids), 3);
	CU_ASSERT(pthread_equal(exit_hook_thread[0], t0));
	CU_ASSERT(pthread_equal(exit_hook_thread[1], t1));
	CU_ASSERT_EQUAL(reactor_count(), 0);
	CU_ASSERT_PTR_NULL(reactor_next());

	/* Restartable, and 0 means one per CPU. */
	CU_ASSERT_EQUAL(reactors_start(0), 0);
	CU_ASSERT_EQUAL(reactor_count(), (unsigned int)sysconf(_SC_NPROCESSORS_ONLN));
	CU_ASSERT_EQUAL(reactors_start(1), -EBUSY);
	reactors_stop();
}

static int suite_init(void)
{
	sem_init(&done, 0, 0);
	reactors_configure(5000, LIMIT, REACTOR_PIN_OFF);
	/* a 5 ms cap: the messages of test_adaptive_poll come well within it even when a
	 * busy machine stretches their 20 us gaps */
	reactors_configure_poll(REACTOR_POLL_ADAPTIVE, 5000);
	return reactors_start(2);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "self, get, next", test_self_and_next },
		{ "message order and stats", test_msg_order },
		{ "for_each", test_for_each },
		{ "deferred work", test_defer },
		{ "buffer pool", test_pool },
		{ "thread CPU time", test_cpu_ns },
		{ "adaptive polling", test_adaptive_poll },
		{ "exit hooks and stop", test_stop },
		CU_TEST_INFO_NULL,
	};

	return ut_run("reactor", suite_init, NULL, tests);
}
