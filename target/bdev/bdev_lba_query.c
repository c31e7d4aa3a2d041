// SPDX-License-Identifier: MIT
/*
 * Allocation lookups (bdev_lba_query): in memory for ram, on the helper thread for files
 * (lseek SEEK_DATA/SEEK_HOLE reads file system metadata and may block), completed on the
 * submitting reactor. One helper thread for the process, started on first use; queries
 * are served in arrival order.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "bdev.h"
#include "common/log.h"
#include "reactor/reactor.h"

static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_cond = PTHREAD_COND_INITIALIZER;
static struct bdev_lba_query *helper_head, **helper_tail = &helper_head;
static bool helper_started;

int bdev_lba_query_run(struct bdev *bdev, struct bdev_lba_query *q)
{
	uint64_t off = q->offset;

	q->n = 0;
	if (!q->max || q->end > bdev->size || off >= q->end)
		return -ERANGE;
	while (q->n < q->max && off < q->end) {
		struct bdev_lba_extent *e = &q->ext[q->n];
		uint64_t len;
		bool dealloc;
		int rc = bdev_lba_status(bdev, off, &len, &dealloc);

		if (rc)
			return rc;
		if (!len)
			return -EIO;
		if (len > q->end - off)
			len = q->end - off;
		e->offset = off;
		e->len = len;
		e->deallocated = dealloc;
		q->n++;
		off += len;
	}
	return 0;
}

static void query_done_msg(void *arg)
{
	struct bdev_lba_query *q = arg;

	q->cb(q, q->status);
}

static void *helper_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct bdev_lba_query *q;

		pthread_mutex_lock(&helper_lock);
		while (!helper_head)
			pthread_cond_wait(&helper_cond, &helper_lock);
		q = helper_head;
		helper_head = q->next;
		if (!helper_head)
			helper_tail = &helper_head;
		pthread_mutex_unlock(&helper_lock);

		q->status = bdev_lba_query_run(q->bdev, q);
		if (reactor_send_msg(q->reactor, query_done_msg, q))
			log_err("allocation lookup: reactor %u is gone, result dropped",
				q->reactor->id);
	}
	return NULL;
}

/* Queue @q for the helper thread; -errno when it cannot be started. */
static int helper_queue(struct bdev_lba_query *q)
{
	int rc = 0;

	pthread_mutex_lock(&helper_lock);
	if (!helper_started) {
		pthread_t t;
		sigset_t all, old;

		/* Signals stay with the daemon's own threads. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = -pthread_create(&t, NULL, helper_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!rc) {
			pthread_detach(t);
			helper_started = true;
		}
	}
	if (!rc) {
		q->next = NULL;
		*helper_tail = q;
		helper_tail = &q->next;
		pthread_cond_signal(&helper_cond);
	}
	pthread_mutex_unlock(&helper_lock);
	return rc;
}

void bdev_lba_query(struct bdev *bdev, struct bdev_lba_query *q)
{
	int rc;

	q->bdev = bdev;
	q->reactor = reactor_self();
	if (!bdev->ops->lba_status) {
		q->n = 0;
		q->cb(q, -EOPNOTSUPP);
		return;
	}
	if (!q->reactor || !bdev->ops->lba_status_blocks) {
		q->cb(q, bdev_lba_query_run(bdev, q));
		return;
	}
	rc = helper_queue(q);
	if (rc) {
		q->n = 0;
		q->cb(q, rc);
	}
}
