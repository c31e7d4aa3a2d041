// SPDX-License-Identifier: MIT
/*
 * Full feature phase PDUs other than SCSI commands and data: NOP-Out/NOP-In, Task
 * Management Functions (ABORT TASK, ABORT/CLEAR TASK SET, LOGICAL UNIT RESET, TARGET WARM/
 * COLD RESET) and Logout.
 */
#include <errno.h>
#include <string.h>

#include "iscsi_internal.h"
#include "common/log.h"
#include "core/reservation.h"

/* Non-immediate commands advance ExpCmdSN (and give their window slot back at once). */
static int take_cmdsn(struct iscsi_conn *c, const uint8_t *bhs)
{
	bool immediate = iscsi_bhs_immediate(bhs);
	uint32_t cmdsn = get_be32(bhs + 24);
	int rc = iscsi_cmdsn_check(c, cmdsn, immediate);

	if (rc <= 0)
		return rc;
	if (!immediate && cmdsn == c->exp_cmdsn) {
		iscsi_window_open(c, 1);
		iscsi_cmdsn_advance(c);
	}
	return 1;
}

/* ---- NOP ------------------------------------------------------------------------------- */

static void nop_in_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	c->nop_busy = false;
	/* an idle session holds no chunk of the pool */
	if (c->nop_data) {
		reactor_buf_put(c->r, c->nop_data);
		c->nop_data = NULL;
	}
}

int iscsi_nop_out_rx(struct iscsi_conn *c, const uint8_t *bhs, uint8_t *data, uint32_t dlen)
{
	uint32_t itt = get_be32(bhs + 16);
	struct iscsi_tx *tx;
	int rc;

	if (c->state != CONN_FULL)
		return -EPROTO;
	if (itt == ISCSI_TAG_RESERVED) {
		/* answer to a NOP-In of ours: must be immediate, no response */
		iscsi_watch_nop_answer(c, get_be32(bhs + 20));
		return 0;
	}
	rc = take_cmdsn(c, bhs);
	if (rc <= 0)
		return rc;
	tx = iscsi_ctl_get(c);
	if (!tx)
		return -ENOBUFS;
	iscsi_bhs_init(tx->hdr, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL);
	memcpy(tx->hdr + 8, bhs + 8, 8);
	put_be32(tx->hdr + 16, itt);
	put_be32(tx->hdr + 20, ISCSI_TAG_RESERVED);
	iscsi_put_sn(c, tx->hdr, true);
	if (dlen <= sizeof(tx->inline_data)) {
		memcpy(tx->inline_data, data, dlen);
		tx->data = tx->inline_data;
	} else {
		/* the ping data is echoed from a buffer of its own (one ping at a time) */
		if (c->nop_busy) {
			TAILQ_INSERT_TAIL(&c->ctl_free, tx, link);
			iscsi_send_reject(c, ISCSI_REJECT_OUT_OF_RESOURCES, bhs);
			return 0;
		}
		if (!c->nop_data)
			c->nop_data = reactor_buf_get(c->r);
		if (!c->nop_data) {
			TAILQ_INSERT_TAIL(&c->ctl_free, tx, link);
			iscsi_send_reject(c, ISCSI_REJECT_OUT_OF_RESOURCES, bhs);
			return 0;
		}
		memcpy(c->nop_data, data, dlen);
		tx->data = c->nop_data;
		c->nop_busy = true;
		tx->sent = nop_in_sent;
	}
	tx->dlen = dlen;
	iscsi_tx_send(c, tx);
	return 0;
}

/* ---- Task Management ---------------------------------------------------------------------- */

static void send_tmf_rsp(struct iscsi_conn *c, uint32_t itt, uint8_t response, bool close_after);

static void tmf_close_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	iscsi_conn_close(c, "target cold reset");
}

static void send_tmf_rsp(struct iscsi_conn *c, uint32_t itt, uint8_t response, bool close_after)
{
	struct iscsi_tx *tx = iscsi_ctl_get(c);

	if (!tx) {
		iscsi_conn_close(c, "no control PDU for a TMF response");
		return;
	}
	iscsi_bhs_init(tx->hdr, ISCSI_OP_TMF_RSP, ISCSI_FLAG_FINAL);
	tx->hdr[2] = response;
	put_be32(tx->hdr + 16, itt);
	iscsi_put_sn(c, tx->hdr, true);
	if (close_after)
		tx->sent = tmf_close_sent;
	iscsi_tx_send(c, tx);
}

/* Aborted tasks the executor still owns. */
static unsigned int tasks_draining(const struct iscsi_conn *c)
{
	unsigned int n = 0;

	for (unsigned int i = 0; c->task_tab && i < c->task_max; i++) {
		const struct iscsi_task *t = c->task_tab[i];

		if (t && t->state != TASK_FREE && t->aborted && t->nvme_pending)
			n++;
	}
	return n;
}

void iscsi_tmf_task_gone(struct iscsi_conn *c)
{
	if (!c->tmf_pending || c->state == CONN_CLOSING || tasks_draining(c))
		return;
	c->tmf_pending = false;
	send_tmf_rsp(c, c->tmf_itt, c->tmf_response, c->tmf_close_after);
}

/* The answer goes once every aborted task has left the executor. */
static void tmf_finish(struct iscsi_conn *c, uint32_t itt, uint8_t response, bool close_after)
{
	if (tasks_draining(c)) {
		c->tmf_pending = true;
		c->tmf_itt = itt;
		c->tmf_response = response;
		c->tmf_close_after = close_after;
		return;
	}
	send_tmf_rsp(c, itt, response, close_after);
}

static struct iscsi_lu *lu_of(struct iscsi_conn *c, uint64_t lun)
{
	for (unsigned int i = 0; i < c->nlus; i++)
		if (c->lus[i].ready && c->lus[i].lun == lun)
			return &c->lus[i];
	return NULL;
}

/* Drop RESERVE(6) reservations of the LU (@lu) or of every LU of the target. */
static void clear_reserve6(struct iscsi_conn *c, struct iscsi_lu *lu)
{
	for (unsigned int i = 0; c->subsys && i < c->nlus; i++) {
		struct nvmf_ns *ns;

		if ((lu && &c->lus[i] != lu) || !c->lus[i].ready)
			continue;
		ns = nvmf_ns_get(c->subsys, c->lus[i].info.nsid, c->r);
		if (ns) {
			nvmf_resv_legacy_clear(ns);
			nvmf_ns_put(ns, c->r);
		}
	}
}

static struct iscsi_task *find_task(struct iscsi_conn *c, uint32_t itt)
{
	for (unsigned int i = 0; c->task_tab && i < c->task_max; i++) {
		struct iscsi_task *t = c->task_tab[i];

		if (t && t->state != TASK_FREE && !t->aborted && t->itt == itt)
			return t;
	}
	return NULL;
}

int iscsi_tmf_rx(struct iscsi_conn *c, const uint8_t *bhs)
{
	const struct iscsi_tmf_req *h = (const void *)bhs;
	uint8_t func = h->function & ISCSI_TMF_FUNC_MASK;
	uint32_t itt = get_be32(&h->itt), rtt = get_be32(&h->ref_task_tag);
	uint64_t lun = iscsi_lun_decode(h->lun);
	struct iscsi_lu *lu;
	struct iscsi_task *t;
	int rc;

	if (c->state != CONN_FULL)
		return -EPROTO;
	rc = take_cmdsn(c, bhs);
	if (rc <= 0)
		return rc;
	if (c->discovery) {
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NOT_SUPPORTED, false);
		return 0;
	}
	if (c->tmf_pending) { /* one management function at a time */
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_REJECTED, false);
		return 0;
	}
	lu = lu_of(c, lun);
	switch (func) {
	case ISCSI_TMF_ABORT_TASK:
		t = find_task(c, rtt);
		if (!t) {
			/* already answered, or never received */
			send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NO_TASK, false);
			return 0;
		}
		if (t->lun != lun) {
			send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NO_TASK, false);
			return 0;
		}
		log_info("%s: ABORT TASK %#x", c->peer, rtt);
		iscsi_task_abort(t);
		tmf_finish(c, itt, ISCSI_TMF_RSP_COMPLETE, false);
		return 0;
	case ISCSI_TMF_ABORT_TASK_SET:
	case ISCSI_TMF_CLEAR_TASK_SET:
	case ISCSI_TMF_LOGICAL_UNIT_RESET:
		if (!lu) {
			send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NO_LUN, false);
			return 0;
		}
		log_info("%s: %s on LUN %llu", c->peer,
			 func == ISCSI_TMF_LOGICAL_UNIT_RESET ? "LOGICAL UNIT RESET" : "task set abort",
			 (unsigned long long)lun);
		iscsi_tasks_abort_lun(c, lun, false);
		if (func == ISCSI_TMF_LOGICAL_UNIT_RESET)
			clear_reserve6(c, lu);
		tmf_finish(c, itt, ISCSI_TMF_RSP_COMPLETE, false);
		return 0;
	case ISCSI_TMF_TARGET_WARM_RESET:
	case ISCSI_TMF_TARGET_COLD_RESET:
		log_info("%s: TARGET %s RESET", c->peer,
			 func == ISCSI_TMF_TARGET_WARM_RESET ? "WARM" : "COLD");
		iscsi_tasks_abort_lun(c, 0, true);
		clear_reserve6(c, NULL);
		tmf_finish(c, itt, ISCSI_TMF_RSP_COMPLETE, func == ISCSI_TMF_TARGET_COLD_RESET);
		return 0;
	case ISCSI_TMF_TASK_REASSIGN:
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NO_REASSIGN, false);
		return 0;
	case ISCSI_TMF_CLEAR_ACA:
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_NOT_SUPPORTED, false);
		return 0;
	default:
		send_tmf_rsp(c, itt, ISCSI_TMF_RSP_REJECTED, false);
		return 0;
	}
}

/* ---- Logout -------------------------------------------------------------------------------- */

static void logout_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	iscsi_conn_close(c, "logged out");
}

int iscsi_logout_rx(struct iscsi_conn *c, const uint8_t *bhs)
{
	const struct iscsi_logout_req *h = (const void *)bhs;
	uint8_t reason = h->flags & ISCSI_LOGOUT_REASON_MASK;
	uint8_t response = ISCSI_LOGOUT_RSP_OK;
	struct iscsi_tx *tx;
	int rc;

	if (c->state != CONN_FULL)
		return -EPROTO;
	rc = take_cmdsn(c, bhs);
	if (rc <= 0)
		return rc;
	if (reason == ISCSI_LOGOUT_REMOVE_FOR_RECOVERY)
		response = ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED;
	else if (reason == ISCSI_LOGOUT_CLOSE_CONNECTION && get_be16(&h->cid) != c->cid)
		response = ISCSI_LOGOUT_RSP_CID_NOT_FOUND;
	tx = iscsi_ctl_get(c);
	if (!tx)
		return -ENOBUFS;
	iscsi_bhs_init(tx->hdr, ISCSI_OP_LOGOUT_RSP, ISCSI_FLAG_FINAL);
	tx->hdr[2] = response;
	memcpy(tx->hdr + 16, bhs + 16, 4);
	iscsi_put_sn(c, tx->hdr, true);
	if (response == ISCSI_LOGOUT_RSP_OK) {
		c->state = CONN_LOGGED_OUT;
		tx->sent = logout_sent;
	}
	iscsi_tx_send(c, tx);
	return 0;
}
