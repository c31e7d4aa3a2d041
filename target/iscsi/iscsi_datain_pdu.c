// SPDX-License-Identifier: MIT
/*
 * The layout of target PDUs without a connection: digests and padding of a PDU whose data
 * segment is a list of pieces, and the Data-In sequence of a task (segment sizes, buffer
 * offsets, DataSN, F bits at burst ends, status on the last PDU).
 */
#include <string.h>

#include "iscsi_internal.h"

void iscsi_tx_finish(struct iscsi_tx *tx, bool hdigest, bool ddigest)
{
	uint32_t pad = ISCSI_PAD(tx->dlen) - tx->dlen;

	if (tx->data) { /* one contiguous segment */
		tx->diov[0].iov_base = (void *)tx->data;
		tx->diov[0].iov_len = tx->dlen;
		tx->diovcnt = 1;
	}
	if (!tx->dlen)
		tx->diovcnt = 0;
	iscsi_bhs_set_dlen(tx->hdr, tx->dlen);
	tx->hlen = ISCSI_BHS_LEN;
	if (hdigest) {
		iscsi_put_digest(tx->hdr + ISCSI_BHS_LEN,
				 iscsi_header_digest(tx->hdr, ISCSI_BHS_LEN));
		tx->hlen += ISCSI_DIGEST_LEN;
	}
	memset(tx->trailer, 0, sizeof(tx->trailer));
	tx->tlen = pad;
	if (ddigest && tx->dlen) {
		iscsi_put_digest(tx->trailer + pad,
				 iscsi_data_digest(tx->diov, tx->diovcnt, tx->dlen));
		tx->tlen += ISCSI_DIGEST_LEN;
	}
}

void iscsi_din_init(struct iscsi_din *d)
{
	d->off = 0;
	d->datasn = 0;
	d->idx = 0;
	d->in = 0;
}

/* Up to @want bytes from the cursor into @tx's pieces; returns the bytes taken. */
static uint32_t din_take(struct iscsi_din *d, struct iscsi_tx *tx, uint32_t want)
{
	uint32_t got = 0;

	tx->diovcnt = 0;
	while (got < want && d->idx < d->iovcnt && tx->diovcnt < ISCSI_TX_DATA_IOV) {
		const struct iovec *v = &d->iov[d->idx];
		size_t left = v->iov_len - d->in;
		uint32_t l = want - got < left ? want - got : (uint32_t)left;

		if (l) {
			tx->diov[tx->diovcnt].iov_base = (uint8_t *)v->iov_base + d->in;
			tx->diov[tx->diovcnt].iov_len = l;
			tx->diovcnt++;
		}
		got += l;
		d->in += l;
		if (d->in == v->iov_len) {
			d->idx++;
			d->in = 0;
		}
	}
	return got;
}

bool iscsi_din_build(struct iscsi_din *d, struct iscsi_tx *tx)
{
	uint32_t n = d->len - d->off;
	uint32_t burst_left = d->max_burst - d->off % d->max_burst;
	uint8_t flags = 0;
	bool last;

	if (n > d->mrdsl)
		n = d->mrdsl;
	if (n > burst_left)
		n = burst_left;
	n = din_take(d, tx, n);
	if (!n) /* the pieces ended early: finish the sequence here */
		d->len = d->off;
	last = d->off + n >= d->len;
	if (last || n == burst_left)
		flags |= ISCSI_FLAG_FINAL;
	if (last && d->collapse)
		flags |= ISCSI_DATA_STATUS |
			 (d->res_flags & (ISCSI_DATA_OVERFLOW | ISCSI_DATA_UNDERFLOW));
	iscsi_bhs_init(tx->hdr, ISCSI_OP_DATA_IN, flags);
	if (last && d->collapse)
		tx->hdr[3] = d->status;
	memcpy(tx->hdr + 8, d->lun_raw, 8);
	put_be32(tx->hdr + 16, d->itt);
	put_be32(tx->hdr + 20, ISCSI_TAG_RESERVED);
	put_be32(tx->hdr + 36, d->datasn++);
	put_be32(tx->hdr + 40, d->off);
	if (last && d->collapse)
		put_be32(tx->hdr + 44, d->residual);
	tx->data = NULL;
	tx->dlen = n;
	d->off += n;
	return last;
}
