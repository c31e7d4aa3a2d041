// SPDX-License-Identifier: MIT
/*
 * Task slots of a session. A slot is allocated the first time the initiator has more
 * commands in flight than there are free slots, up to the negotiated limit (the CmdSN
 * window plus the immediate slots), and stays on the free list from then on, so the I/O
 * path allocates only while a session grows to its high-water mark. A session that has
 * been idle a while gives all but a few back (iscsi_watch.c). An idle session thus costs
 * a table of pointers, not a queue depth of tasks.
 */
#include <errno.h>
#include <stdlib.h>

#include "iscsi_internal.h"

int iscsi_task_pool_init(struct iscsi_conn *c, unsigned int max)
{
	c->task_tab = calloc(max ? max : 1, sizeof(*c->task_tab));
	if (!c->task_tab)
		return -ENOMEM;
	c->task_max = max;
	c->ntasks = 0;
	TAILQ_INIT(&c->free_tasks);
	return 0;
}

static struct iscsi_task *task_new(struct iscsi_conn *c)
{
	struct iscsi_task *t;
	unsigned int i;

	if (c->ntasks >= c->task_max)
		return NULL;
	for (i = 0; i < c->task_max && c->task_tab[i]; i++)
		;
	if (i == c->task_max)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->conn = c;
	t->idx = i;
	t->state = TASK_FREE;
	t->req[0].qpair = &c->qp;
	t->req[1].qpair = &c->qp;
	c->task_tab[i] = t;
	c->ntasks++;
	__atomic_add_fetch(&g_iscsi.tasks_allocated, 1, __ATOMIC_RELAXED);
	return t;
}

struct iscsi_task *iscsi_task_pool_get(struct iscsi_conn *c)
{
	struct iscsi_task *t = TAILQ_FIRST(&c->free_tasks);

	if (t) {
		TAILQ_REMOVE(&c->free_tasks, t, link);
		return t;
	}
	return task_new(c);
}

static void task_free(struct iscsi_conn *c, struct iscsi_task *t)
{
	c->task_tab[t->idx] = NULL;
	c->ntasks--;
	__atomic_sub_fetch(&g_iscsi.tasks_allocated, 1, __ATOMIC_RELAXED);
	free(t);
}

unsigned int iscsi_task_pool_trim(struct iscsi_conn *c, unsigned int keep)
{
	struct iscsi_task *t, *next;
	unsigned int n = 0, kept = 0;

	for (t = TAILQ_FIRST(&c->free_tasks); t; t = next) {
		next = TAILQ_NEXT(t, link);
		if (kept < keep) {
			kept++;
			continue;
		}
		TAILQ_REMOVE(&c->free_tasks, t, link);
		task_free(c, t);
		n++;
	}
	return n;
}

void iscsi_task_pool_fini(struct iscsi_conn *c)
{
	for (unsigned int i = 0; c->task_tab && i < c->task_max; i++)
		if (c->task_tab[i])
			task_free(c, c->task_tab[i]);
	free(c->task_tab);
	c->task_tab = NULL;
	c->task_max = 0;
	TAILQ_INIT(&c->free_tasks);
}

struct iscsi_task *iscsi_task_of_req(struct iscsi_conn *c, const struct nvmf_req *req)
{
	uint16_t cid = get_le16(&req->cmd.cid);
	struct iscsi_task *t;

	if (cid == ISCSI_ADMIN_CID || cid / 2u >= c->task_max || !c->task_tab)
		return NULL;
	t = c->task_tab[cid / 2u];
	return t && req == &t->req[cid & 1u] ? t : NULL;
}
