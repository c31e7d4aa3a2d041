// SPDX-License-Identifier: MIT
/*
 * Liveness of full feature sessions. Reading stops when a session reaches its buffer share
 * (backpressure), and only a finished task resumes it: without a clock of its own a
 * session whose initiator stopped sending the Data-Out it was asked for, stopped reading,
 * or went away, would keep its socket, tasks and chunks for ever. Once a second
 * (ISCSI_TICK_MS) each session:
 *   - while not reading, looks for the initiator having closed its end (POLLRDHUP,
 *     POLLHUP, POLLERR), which the paused read watcher cannot see;
 *   - ends the connection when a task has waited for Data-Out (after an R2T, or within an
 *     unsolicited burst) longer than dataout_timeout: at ErrorRecoveryLevel 0 a lost
 *     Data-Out cannot be asked for again, so, as Linux LIO does at ERL 0, the connection
 *     (and with MaxConnections=1 the session) is dropped, and the initiator's own
 *     recovery (a new login, the commands retried) takes over;
 *   - sends a NOP-In ping (RFC 7143 11.19: ITT 0xffffffff and a Target Transfer Tag the
 *     initiator must answer with a NOP-Out) after nopin_interval without a PDU from the
 *     initiator, and ends the session when nopin_timeout passes without the answer;
 *   - frees the task slots an idle session no longer needs (iscsi_task_pool.c).
 * Sockets also carry TCP keep-alive (iscsi_target.c) for a peer that vanished silently.
 *
 * And the per-initiator accounting: at most max_sessions_per_initiator normal sessions
 * per InitiatorName, and the count of them on each reactor for iscsi_buf_cap().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* POLLRDHUP */
#endif
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"
#include "common/log.h"

static uint32_t opt(const uint32_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

static void send_ping(struct iscsi_conn *c)
{
	struct iscsi_tx *tx = iscsi_ctl_get(c);

	c->ping.ttt = ++c->next_ttt == ISCSI_TAG_RESERVED ? ++c->next_ttt : c->next_ttt;
	if (!tx)
		return; /* control PDUs all queued: the initiator is not reading; the deadline runs */
	iscsi_bhs_init(tx->hdr, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL);
	put_be32(tx->hdr + 16, ISCSI_TAG_RESERVED);
	put_be32(tx->hdr + 20, c->ping.ttt);
	iscsi_put_sn(c, tx->hdr, false); /* a ping does not advance StatSN */
	iscsi_tx_send(c, tx);
}

void iscsi_watch_nop_answer(struct iscsi_conn *c, uint32_t ttt)
{
	if (!iscsi_ping_answered(&c->ping, ttt))
		log_debug("%s: NOP-Out for TTT %#x answers no ping of ours", c->peer, ttt);
}

/* The initiator closed (or reset) its end: a paused session does not read to find out. */
static bool peer_gone(const struct iscsi_conn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

	if (c->fd < 0 || poll(&p, 1, 0) <= 0)
		return false;
	return p.revents & (POLLRDHUP | POLLHUP | POLLERR);
}

/* A task waiting for Data-Out past the deadline, or NULL. */
static struct iscsi_task *dataout_late(struct iscsi_conn *c, ev_tstamp now, uint32_t timeout)
{
	struct iscsi_task_list *lists[2] = { &c->active, &c->pending };
	struct iscsi_task *t;

	if (!timeout)
		return NULL;
	for (int i = 0; i < 2; i++) {
		TAILQ_FOREACH(t, lists[i], link)
		{
			if (t->state != TASK_DATA_OUT || t->aborted ||
			    (!t->r2t_out && t->out_unsol_done))
				continue;
			if (iscsi_dataout_late(t->dout_since, now, timeout))
				return t;
		}
	}
	return NULL;
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct iscsi_conn *c = w->data;
	const struct iscsi_opts *o = &g_iscsi.opts;
	struct iscsi_task *t;
	bool heard = c->rx_seen;

	if (c->state != CONN_FULL)
		return;
	c->rx_seen = false;
	if ((c->rx_paused || c->rx_state == RX_WAIT) && peer_gone(c)) {
		__atomic_add_fetch(&g_iscsi.peer_gone, 1, __ATOMIC_RELAXED);
		log_peer("%s: the initiator closed a stalled connection (%u tasks, %u chunks)",
			 c->peer, c->ntasks, c->bufs_held);
		iscsi_conn_close(c, "closed by the initiator");
		return;
	}
	t = dataout_late(c, ev_now(loop), opt(&o->dataout_timeout_ms));
	if (t) {
		__atomic_add_fetch(&g_iscsi.dataout_timeouts, 1, __ATOMIC_RELAXED);
		log_peer("%s: task %#x: no Data-Out within %u ms (offset %u of %u): dropping the "
			 "connection (ERL 0)",
			 c->peer, t->itt, opt(&o->dataout_timeout_ms), t->out_got, t->out_len);
		iscsi_conn_close(c, "Data-Out timeout");
		return;
	}
	switch (iscsi_ping_tick(&c->ping, heard, ISCSI_TICK_MS, opt(&o->nopin_interval_ms),
				opt(&o->nopin_timeout_ms))) {
	case ISCSI_PING_EXPIRED:
		__atomic_add_fetch(&g_iscsi.nopin_timeouts, 1, __ATOMIC_RELAXED);
		log_peer("%s: NOP-In ping (TTT %#x) unanswered for %u ms: ending the session",
			 c->peer, c->ping.ttt, c->ping.out_ms);
		iscsi_conn_close(c, "NOP-In ping unanswered");
		return;
	case ISCSI_PING_SEND:
		send_ping(c);
		break;
	case ISCSI_PING_NONE:
		break;
	}
	if (TAILQ_EMPTY(&c->active) && TAILQ_EMPTY(&c->pending)) {
		if (++c->idle_ticks >= ISCSI_TASKS_IDLE_TICKS && c->ntasks > ISCSI_TASKS_KEEP)
			iscsi_task_pool_trim(c, ISCSI_TASKS_KEEP);
	} else {
		c->idle_ticks = 0;
	}
	/* a share may have grown (a sibling session left): a paused header tries again */
	iscsi_rx_resume(c);
}

void iscsi_watch_start(struct iscsi_conn *c)
{
	memset(&c->ping, 0, sizeof(c->ping));
	c->idle_ticks = 0;
	ev_init(&c->tick, tick_cb);
	c->tick.data = c;
	ev_timer_set(&c->tick, ISCSI_TICK_MS / 1000.0, ISCSI_TICK_MS / 1000.0);
	ev_timer_start(c->loop, &c->tick);
}

void iscsi_watch_stop(struct iscsi_conn *c)
{
	if (c->loop)
		ev_timer_stop(c->loop, &c->tick);
}

/* ---- sessions per initiator -------------------------------------------------------------- */

static struct iscsi_initiator *initiator_find_locked(const char *name)
{
	struct iscsi_initiator *in;

	TAILQ_FOREACH(in, &g_iscsi.initiators, link)
	{
		if (!strcasecmp(in->name, name))
			return in;
	}
	return NULL;
}

/* Under the lock: @c reinstates a live session of the same I_T nexus (same ISID and
 * target), which it is about to end: the count does not grow. */
static bool reinstates_locked(const struct iscsi_conn *c)
{
	const struct iscsi_conn *o;

	TAILQ_FOREACH(o, &g_iscsi.conns, link)
	{
		if (o != c && o->tsih && o->initiator_share && !o->discovery &&
		    o->target == c->target && !memcmp(o->isid, c->isid, sizeof(c->isid)) &&
		    !strcmp(o->initiator, c->initiator))
			return true;
	}
	return false;
}

int iscsi_initiator_join(struct iscsi_conn *c)
{
	unsigned int nr = reactor_count() ? reactor_count() : 1;
	struct iscsi_initiator *in;
	unsigned int max;

	if (c->initiator_share)
		return 0;
	pthread_mutex_lock(&g_iscsi.lock);
	max = g_iscsi.opts.max_sessions_per_initiator;
	in = initiator_find_locked(c->initiator);
	if (in && max && in->sessions >= max && !reinstates_locked(c)) {
		pthread_mutex_unlock(&g_iscsi.lock);
		__atomic_add_fetch(&g_iscsi.initiator_limit, 1, __ATOMIC_RELAXED);
		log_peer("%s: login refused: initiator %.64s has %u sessions "
			 "(max_sessions_per_initiator)",
			 c->peer, c->initiator, max);
		return -EUSERS;
	}
	if (!in) {
		in = calloc(1, sizeof(*in) + nr * sizeof(in->here[0]));
		if (!in) {
			pthread_mutex_unlock(&g_iscsi.lock);
			return -ENOMEM;
		}
		snprintf(in->name, sizeof(in->name), "%s", c->initiator);
		in->nreactors = nr;
		TAILQ_INSERT_TAIL(&g_iscsi.initiators, in, link);
	}
	in->sessions++;
	pthread_mutex_unlock(&g_iscsi.lock);
	/* this slot is only ever touched from this reactor's thread */
	if (c->r->id < in->nreactors)
		in->here[c->r->id]++;
	c->initiator_share = in;
	return 0;
}

void iscsi_initiator_leave(struct iscsi_conn *c)
{
	struct iscsi_initiator *in = c->initiator_share;

	if (!in)
		return;
	c->initiator_share = NULL;
	if (c->r->id < in->nreactors)
		in->here[c->r->id]--;
	pthread_mutex_lock(&g_iscsi.lock);
	if (--in->sessions == 0) {
		TAILQ_REMOVE(&g_iscsi.initiators, in, link);
		free(in);
	}
	pthread_mutex_unlock(&g_iscsi.lock);
}
