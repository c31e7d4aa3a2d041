// SPDX-License-Identifier: MIT
/*
 * The end of a SCSI task: residual over/underflow against the Expected Data Transfer
 * Length, then the Data-In sequence (status collapsed into its last PDU) or a SCSI
 * Response with sense data.
 *
 * Data-In is pipelined: up to ISCSI_DATAIN_PDUS PDUs of a task are queued at once, and
 * each one's sent callback builds and queues the next, so a long read never waits for the
 * socket between PDUs and the PDUs of many tasks leave in one sendmsg. The data comes from
 * the pieces the NVMe reads left in their requests (or the task's chunks for data the
 * translation produced); a PDU's data segment may span several of them.
 */
#include <string.h>

#include "iscsi_internal.h"

static void compute_residual(struct iscsi_task *t)
{
	uint32_t expected, actual;

	if (t->plan.dir == SCSI_DIR_OUT) {
		expected = iscsi_edtl_out(t);
		actual = t->plan.xfer_len;
	} else if (t->plan.dir == SCSI_DIR_IN) {
		expected = iscsi_edtl_in(t);
		actual = t->plan.in_len;
	} else {
		expected = t->edtl;
		actual = 0;
	}
	t->res_flags = 0;
	t->residual = 0;
	if (actual > expected) {
		t->res_flags = ISCSI_RSP_OVERFLOW;
		t->residual = actual - expected;
	} else if (actual < expected) {
		t->res_flags = ISCSI_RSP_UNDERFLOW;
		t->residual = expected - actual;
	}
}

static void response_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	struct iscsi_task *t = tx->owner;

	/* (released already when an aborted task's earlier PDU went out in the same send) */
	if (t->state != TASK_FREE)
		iscsi_task_release(t);
}

static void send_scsi_rsp(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_tx *tx = &t->tx;

	iscsi_task_set_state(t, TASK_RESPONSE);
	iscsi_bhs_init(tx->hdr, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL | t->res_flags);
	tx->hdr[2] = ISCSI_RESPONSE_COMPLETED;
	tx->hdr[3] = t->plan.status;
	put_be32(tx->hdr + 16, t->itt);
	iscsi_put_sn(c, tx->hdr, true);
	put_be32(tx->hdr + 36, t->datasn);
	put_be32(tx->hdr + 44, t->residual);
	tx->data = NULL;
	tx->dlen = 0;
	if (t->plan.status == SCSI_STATUS_CHECK_CONDITION) {
		struct iscsi_lu *lu = iscsi_task_lu(t);
		bool desc = lu && lu->info.mode &&
			    __atomic_load_n(&lu->info.mode->d_sense, __ATOMIC_RELAXED);
		uint32_t n = scsi_sense_build(&t->plan.sense, desc, t->sense + 2);

		put_be16(t->sense, (uint16_t)n);
		tx->data = t->sense;
		tx->dlen = n + 2;
	}
	tx->owner = t;
	tx->sent = response_sent;
	iscsi_tx_send(c, tx);
}

static void data_in_sent(struct iscsi_conn *c, struct iscsi_tx *tx);

/* Build the next PDU of the sequence into @tx and queue it; the response follows the last
 * one when the status could not ride on it. */
static void data_in_queue(struct iscsi_task *t, struct iscsi_tx *tx)
{
	struct iscsi_conn *c = t->conn;
	bool last = iscsi_din_build(&t->din, tx);

	iscsi_put_sn(c, tx->hdr, last && t->din.collapse);
	tx->owner = t;
	tx->sent = data_in_sent;
	iscsi_tx_send(c, tx);
	if (last) {
		t->datasn = t->din.datasn;
		if (!t->din.collapse)
			send_scsi_rsp(t);
	}
}

static void data_in_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	struct iscsi_task *t = tx->owner;

	if (t->state == TASK_FREE)
		return; /* released when an earlier PDU of the same send went out */
	if (t->aborted || c->state == CONN_CLOSING) {
		/* the PDUs not yet on the wire are dropped with the task */
		if (!iscsi_task_tx_on_wire(t))
			iscsi_task_release(t);
		return;
	}
	if (!iscsi_din_done(&t->din)) {
		data_in_queue(t, tx);
		return;
	}
	if (t->din.collapse && !iscsi_task_tx_queued(t))
		iscsi_task_release(t);
}

/* What the Data-In PDUs send: the pieces the reads left, else the task's chunks. */
static void data_in_source(struct iscsi_task *t)
{
	if (!t->in_iov_reads || t->in_iov_lost || t->in_iov_len < t->in_len)
		t->in_iovcnt = iscsi_task_iov(t, 0, t->in_len, t->in_iov, ISCSI_TASK_IN_IOV);
	t->din.iov = t->in_iov;
	t->din.iovcnt = t->in_iovcnt;
}

static void send_data_in(struct iscsi_task *t)
{
	struct iscsi_conn *c = t->conn;
	struct iscsi_din *d = &t->din;

	data_in_source(t);
	iscsi_din_init(d);
	d->len = t->in_len;
	d->mrdsl = c->params.max_recv_dsl;
	d->max_burst = c->params.max_burst_length;
	d->lun_raw = t->lun_raw;
	d->itt = t->itt;
	/* status collapse: GOOD (or CONDITION MET) without sense rides on the last PDU */
	d->collapse = t->plan.status != SCSI_STATUS_CHECK_CONDITION;
	d->status = t->plan.status;
	d->res_flags = t->res_flags;
	d->residual = t->residual;
	for (unsigned int i = 0; i < ISCSI_DATAIN_PDUS && !iscsi_din_done(d); i++)
		data_in_queue(t, &t->din_tx[i]);
}

void iscsi_task_respond(struct iscsi_task *t)
{
	if (t->plan.status == SCSI_STATUS_GOOD && t->plan.condition_met)
		t->plan.status = SCSI_STATUS_CONDITION_MET;
	if (t->plan.status != SCSI_STATUS_GOOD && t->plan.status != SCSI_STATUS_CONDITION_MET)
		t->plan.in_len = 0;
	compute_residual(t);
	t->in_len =
		t->plan.dir == SCSI_DIR_IN && t->plan.status == SCSI_STATUS_GOOD
			? (t->plan.in_len < iscsi_edtl_in(t) ? t->plan.in_len : iscsi_edtl_in(t))
			: 0;
	if (t->in_len) {
		iscsi_task_set_state(t, TASK_DATA_IN);
		send_data_in(t);
		return;
	}
	send_scsi_rsp(t);
}
