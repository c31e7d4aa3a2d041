// SPDX-License-Identifier: MIT
/*
 * The arithmetic of what keeps a session from holding the target for ever: NOP-In pings
 * and their deadline, the Data-Out deadline, and a session's share of its reactor's
 * buffer pool. No sockets, no clock: iscsi_watch.c and iscsi_task.c feed them.
 */
#include "iscsi_internal.h"

enum iscsi_ping_action iscsi_ping_tick(struct iscsi_ping *p, bool heard, uint32_t elapsed,
				       uint32_t interval, uint32_t timeout)
{
	if (heard)
		p->quiet_ms = 0;
	else if (p->quiet_ms < UINT32_MAX - elapsed)
		p->quiet_ms += elapsed;
	if (p->out) {
		/* anything received counts as a sign of life only once the answer came:
		 * data of a stalled transfer trickling in is no answer */
		p->out_ms += elapsed;
		return p->out_ms >= timeout ? ISCSI_PING_EXPIRED : ISCSI_PING_NONE;
	}
	if (!interval || p->quiet_ms < interval)
		return ISCSI_PING_NONE;
	p->out = true;
	p->out_ms = 0;
	return ISCSI_PING_SEND;
}

bool iscsi_ping_answered(struct iscsi_ping *p, uint32_t ttt)
{
	if (!p->out || ttt != p->ttt)
		return false;
	p->out = false;
	p->out_ms = 0;
	p->quiet_ms = 0;
	return true;
}

unsigned int iscsi_buf_cap(unsigned int limit, unsigned int sessions_here, unsigned int task_bufs)
{
	unsigned int cap = limit / ISCSI_POOL_SHARE;
	unsigned int min = 2 * task_bufs + 1;

	if (sessions_here > 1 && limit / ISCSI_INITIATOR_SHARE / sessions_here < cap)
		cap = limit / ISCSI_INITIATOR_SHARE / sessions_here;
	return cap < min ? min : cap;
}

bool iscsi_dataout_late(ev_tstamp since, ev_tstamp now, uint32_t timeout_ms)
{
	return timeout_ms && (now - since) * 1000.0 >= (double)timeout_ms;
}
