// SPDX-License-Identifier: MIT
/*
 * iSCSI sessions for management (the control socket): list them with their initiator,
 * ISID/TSIH, addresses, target and counters, and end one. Connections are read under
 * g_iscsi.lock; a session is closed on its own reactor (a connection is only freed
 * there, so it cannot go away between the lookup and the close).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "iscsi_internal.h"

int iscsi_list_sessions(void (*cb)(const struct iscsi_session_info *si, void *arg), void *arg)
{
	struct iscsi_session_info si;
	struct iscsi_conn *c;
	int n = 0;

	if (!g_iscsi.initialized)
		return 0;
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(c, &g_iscsi.conns, link)
	{
		if (c->state != CONN_FULL || c->discovery || !c->tsih)
			continue; /* logging in, closing, or a SendTargets session */
		memset(&si, 0, sizeof(si));
		snprintf(si.initiator, sizeof(si.initiator), "%s", c->initiator);
		snprintf(si.target, sizeof(si.target), "%s", c->target ? c->target->name : "");
		memcpy(si.isid, c->isid, sizeof(si.isid));
		si.tsih = c->tsih;
		snprintf(si.peer, sizeof(si.peer), "%s", c->peer);
		snprintf(si.local_addr, sizeof(si.local_addr), "%s", c->local_addr);
		snprintf(si.local_port, sizeof(si.local_port), "%s", c->local_port);
		si.connections = 1; /* MaxConnections=1 */
		si.hdigest = c->hdigest;
		si.ddigest = c->ddigest;
		si.read_cmds = __atomic_load_n(&c->qp.stats.read_cmds, __ATOMIC_RELAXED);
		si.write_cmds = __atomic_load_n(&c->qp.stats.write_cmds, __ATOMIC_RELAXED);
		si.other_cmds = __atomic_load_n(&c->qp.stats.other_cmds, __ATOMIC_RELAXED);
		si.read_bytes = __atomic_load_n(&c->qp.stats.read_bytes, __ATOMIC_RELAXED);
		si.write_bytes = __atomic_load_n(&c->qp.stats.write_bytes, __ATOMIC_RELAXED);
		cb(&si, arg);
		n++;
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	return n;
}

static void disconnect_msg(void *arg)
{
	uint16_t tsih = (uint16_t)(uintptr_t)arg;
	struct iscsi_conn *c, *found = NULL;
	struct reactor *self = reactor_self();

	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(c, &g_iscsi.conns, link)
	if (c->tsih == tsih && c->r == self && c->state != CONN_CLOSING)
		found = c;
	pthread_mutex_unlock(&g_iscsi.lock);
	if (found)
		iscsi_conn_close(found, "disconnected by the operator");
}

int iscsi_session_disconnect(uint16_t tsih)
{
	struct reactor *r = NULL;
	struct iscsi_conn *c;
	char who[ISCSI_NAME_BUF + 80] = "";

	if (!g_iscsi.initialized || !tsih)
		return -ENOENT;
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(c, &g_iscsi.conns, link)
	if (c->tsih == tsih && c->state == CONN_FULL && !c->discovery) {
		r = c->r;
		snprintf(who, sizeof(who), "%s from %s", c->initiator, c->peer);
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!r)
		return -ENOENT;
	log_notice("iSCSI session TSIH %u (%s) disconnected by the operator", tsih, who);
	return reactor_send_msg(r, disconnect_msg, (void *)(uintptr_t)tsih);
}
