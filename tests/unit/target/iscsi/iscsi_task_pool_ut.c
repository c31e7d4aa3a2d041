// SPDX-License-Identifier: MIT
/* Unit tests for target/iscsi/iscsi_task_pool.c: a session starts with no task slot, grows
 * one at a time up to its limit and no further, reuses what it freed before growing (no
 * allocation in the steady state), gives idle slots back down to what it keeps, refills the
 * holes that leaves, and finds a task from its NVMe request (both commands of a fused pair;
 * the session's Identify and foreign requests are no task's). */
#include <CUnit/Basic.h>
#include <string.h>

#include "iscsi/iscsi_internal.h"
#include "ut.h"

struct iscsi_global g_iscsi; /* the slot counter lives here */

static struct iscsi_conn c;

static void setup(unsigned int max)
{
	memset(&c, 0, sizeof(c));
	TAILQ_INIT(&c.active);
	TAILQ_INIT(&c.pending);
	CU_ASSERT_EQUAL_FATAL(iscsi_task_pool_init(&c, max), 0);
	CU_ASSERT_EQUAL(c.ntasks, 0);
}

/* The request a task gives the executor (cid as nvme_submit sets it). */
static struct nvmf_req *req_of(struct iscsi_task *t, unsigned int k)
{
	put_le16(&t->req[k].cmd.cid, (uint16_t)(t->idx * 2 + k));
	return &t->req[k];
}

static void test_grows_to_limit(void)
{
	struct iscsi_task *t[9];

	setup(8);
	for (int i = 0; i < 8; i++) {
		t[i] = iscsi_task_pool_get(&c);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t[i]);
		CU_ASSERT_EQUAL(t[i]->idx, (unsigned int)i);
		CU_ASSERT_PTR_EQUAL(t[i]->conn, &c);
		CU_ASSERT_EQUAL(c.ntasks, (unsigned int)i + 1);
	}
	CU_ASSERT_EQUAL(g_iscsi.tasks_allocated, 8);
	CU_ASSERT_PTR_NULL(iscsi_task_pool_get(&c)); /* the negotiated limit */
	iscsi_task_pool_fini(&c);
	CU_ASSERT_EQUAL(g_iscsi.tasks_allocated, 0);
}

static void test_reuse_before_growing(void)
{
	struct iscsi_task *a, *b;

	setup(16);
	a = iscsi_task_pool_get(&c);
	TAILQ_INSERT_HEAD(&c.free_tasks, a, link); /* released */
	for (int i = 0; i < 1000; i++) {
		b = iscsi_task_pool_get(&c);
		CU_ASSERT_PTR_EQUAL(b, a);
		TAILQ_INSERT_HEAD(&c.free_tasks, b, link);
	}
	CU_ASSERT_EQUAL(c.ntasks, 1); /* one command at a time: one slot */
	iscsi_task_pool_fini(&c);
}

static void test_trim_and_refill(void)
{
	struct iscsi_task *t[10];
	unsigned int seen = 0;

	setup(10);
	for (int i = 0; i < 10; i++)
		t[i] = iscsi_task_pool_get(&c);
	for (int i = 0; i < 10; i++)
		TAILQ_INSERT_TAIL(&c.free_tasks, t[i], link);
	CU_ASSERT_EQUAL(iscsi_task_pool_trim(&c, 4), 6);
	CU_ASSERT_EQUAL(c.ntasks, 4);
	CU_ASSERT_EQUAL(g_iscsi.tasks_allocated, 4);
	for (int i = 0; i < 4; i++)
		CU_ASSERT_PTR_NOT_NULL(c.task_tab[i]);
	for (int i = 4; i < 10; i++)
		CU_ASSERT_PTR_NULL(c.task_tab[i]);
	CU_ASSERT_EQUAL(iscsi_task_pool_trim(&c, 4), 0);
	/* growing again fills the holes, up to the same limit */
	for (int i = 0; i < 10; i++) {
		struct iscsi_task *x = iscsi_task_pool_get(&c);

		CU_ASSERT_PTR_NOT_NULL_FATAL(x);
		seen |= 1u << x->idx;
	}
	CU_ASSERT_EQUAL(seen, 0x3ff);
	CU_ASSERT_PTR_NULL(iscsi_task_pool_get(&c));
	iscsi_task_pool_fini(&c);
}

static void test_task_of_req(void)
{
	struct nvmf_req admin, stray;
	struct iscsi_task *t[3];

	setup(3);
	for (int i = 0; i < 3; i++)
		t[i] = iscsi_task_pool_get(&c);
	CU_ASSERT_PTR_EQUAL(iscsi_task_of_req(&c, req_of(t[2], 0)), t[2]);
	CU_ASSERT_PTR_EQUAL(iscsi_task_of_req(&c, req_of(t[1], 1)), t[1]); /* fused second */
	memset(&admin, 0, sizeof(admin));
	put_le16(&admin.cmd.cid, ISCSI_ADMIN_CID);
	CU_ASSERT_PTR_NULL(iscsi_task_of_req(&c, &admin));
	/* a request that is not the task's own, though its cid names one */
	memset(&stray, 0, sizeof(stray));
	put_le16(&stray.cmd.cid, 2);
	CU_ASSERT_PTR_NULL(iscsi_task_of_req(&c, &stray));
	put_le16(&stray.cmd.cid, 6); /* beyond the table */
	CU_ASSERT_PTR_NULL(iscsi_task_of_req(&c, &stray));
	/* a freed slot finds nothing */
	TAILQ_INSERT_TAIL(&c.free_tasks, t[2], link);
	CU_ASSERT_EQUAL(iscsi_task_pool_trim(&c, 0), 1);
	put_le16(&stray.cmd.cid, 4);
	CU_ASSERT_PTR_NULL(iscsi_task_of_req(&c, &stray));
	iscsi_task_pool_fini(&c);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "grows to the limit", test_grows_to_limit },
		{ "reuse before growing", test_reuse_before_growing },
		{ "trim and refill", test_trim_and_refill },
		{ "task of a request", test_task_of_req },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_task_pool", NULL, NULL, tests);
}
