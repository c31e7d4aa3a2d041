// SPDX-License-Identifier: MIT
/* Unit tests for target/iscsi/iscsi_datain_pdu.c: the Data-In sequence of a task cut into
 * PDUs (sizes against MaxRecvDataSegmentLength, buffer offsets, DataSN, the F bit at every
 * MaxBurstLength end and on the last PDU, status and residual on the last one only), data
 * segments spanning several buffer pieces, and the data digest of a PDU whose data lies in
 * two chunks, checked against a CRC32C of the same bytes laid out flat (RFC 7143 11.7). */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "iscsi/iscsi_internal.h"
#include "ut.h"

#define KB 1024u

static const uint8_t lun[8] = { 0, 3, 0, 0, 0, 0, 0, 0 };

static void din_setup(struct iscsi_din *d, const struct iovec *iov, int n, uint32_t len,
		      uint32_t mrdsl, uint32_t burst, bool collapse)
{
	memset(d, 0, sizeof(*d));
	iscsi_din_init(d);
	d->iov = iov;
	d->iovcnt = n;
	d->len = len;
	d->mrdsl = mrdsl;
	d->max_burst = burst;
	d->lun_raw = lun;
	d->itt = 0x1234;
	d->collapse = collapse;
	d->status = 0;
	d->res_flags = ISCSI_RSP_UNDERFLOW;
	d->residual = 512;
}

static uint32_t pdu_bytes(const struct iscsi_tx *tx)
{
	uint32_t n = 0;

	for (int i = 0; i < tx->diovcnt; i++)
		n += (uint32_t)tx->diov[i].iov_len;
	return n;
}

/* Run the whole sequence; check every PDU's header against the expected segment sizes. */
static void check_sequence(struct iscsi_din *d, const uint8_t *flat, const uint32_t *sizes,
			   const bool *fbit, unsigned int npdus)
{
	struct iscsi_tx tx;
	uint32_t off = 0;
	unsigned int i = 0;
	bool last = false;

	while (!last) {
		CU_ASSERT_FATAL(i < npdus);
		memset(&tx, 0xa5, sizeof(tx));
		last = iscsi_din_build(d, &tx);
		iscsi_tx_finish(&tx, false, false);
		CU_ASSERT_EQUAL(iscsi_bhs_opcode(tx.hdr), ISCSI_OP_DATA_IN);
		CU_ASSERT_EQUAL(tx.dlen, sizes[i]);
		CU_ASSERT_EQUAL(iscsi_bhs_dlen(tx.hdr), sizes[i]);
		CU_ASSERT_EQUAL(pdu_bytes(&tx), sizes[i]);
		CU_ASSERT_EQUAL(get_be32(tx.hdr + 16), 0x1234);
		CU_ASSERT_EQUAL(get_be32(tx.hdr + 20), ISCSI_TAG_RESERVED);
		CU_ASSERT_EQUAL(get_be32(tx.hdr + 36), i);   /* DataSN */
		CU_ASSERT_EQUAL(get_be32(tx.hdr + 40), off); /* Buffer Offset */
		CU_ASSERT(memcmp(tx.hdr + 8, lun, 8) == 0);
		CU_ASSERT_EQUAL(!!(tx.hdr[1] & ISCSI_FLAG_FINAL), fbit[i]);
		CU_ASSERT_EQUAL(last, i == npdus - 1);
		if (last && d->collapse) {
			CU_ASSERT(tx.hdr[1] & ISCSI_DATA_STATUS);
			CU_ASSERT(tx.hdr[1] & ISCSI_DATA_UNDERFLOW);
			CU_ASSERT_EQUAL(get_be32(tx.hdr + 44), 512);
		} else {
			CU_ASSERT_FALSE(tx.hdr[1] & (ISCSI_DATA_STATUS | ISCSI_DATA_UNDERFLOW));
			CU_ASSERT_EQUAL(get_be32(tx.hdr + 44), 0);
		}
		/* the pieces hold the bytes at this offset, in order */
		for (int k = 0, at = 0; k < tx.diovcnt; k++) {
			CU_ASSERT(memcmp(tx.diov[k].iov_base, flat + off + at,
					 tx.diov[k].iov_len) == 0);
			at += (int)tx.diov[k].iov_len;
		}
		off += tx.dlen;
		i++;
	}
	CU_ASSERT_EQUAL(i, npdus);
	CU_ASSERT_EQUAL(off, d->len);
	CU_ASSERT(iscsi_din_done(d));
	CU_ASSERT_EQUAL(d->datasn, npdus);
}

/* Fill @n chunks of @chunk bytes with a pattern; @flat gets the same bytes in a row. */
static uint8_t **chunks_make(unsigned int n, size_t chunk, struct iovec *iov, uint8_t *flat)
{
	uint8_t **b = calloc(n, sizeof(*b));

	for (unsigned int i = 0; i < n; i++) {
		b[i] = malloc(chunk);
		for (size_t k = 0; k < chunk; k++)
			b[i][k] = (uint8_t)(i * 131 + k * 7 + (k >> 8));
		memcpy(flat + i * chunk, b[i], chunk);
		iov[i].iov_base = b[i];
		iov[i].iov_len = chunk;
	}
	return b;
}

static void chunks_free(uint8_t **b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		free(b[i]);
	free(b);
}

/* 1 MiB in eight 128 KiB chunks, MaxRecvDSL 256 KiB, MaxBurstLength 1 MiB: four PDUs,
 * each spanning two chunks, F and status on the last only. */
static void test_large_read_spans_chunks(void)
{
	struct iovec iov[8];
	uint8_t *flat = malloc(8 * 128 * KB);
	uint8_t **b = chunks_make(8, 128 * KB, iov, flat);
	static const uint32_t sizes[] = { 256 * KB, 256 * KB, 256 * KB, 256 * KB };
	static const bool f[] = { false, false, false, true };
	struct iscsi_din d;

	din_setup(&d, iov, 8, 1024 * KB, 256 * KB, 1024 * KB, true);
	check_sequence(&d, flat, sizes, f, 4);
	chunks_free(b, 8);
	free(flat);
}

/* MaxBurstLength 128 KiB, MaxRecvDSL 48 KiB, 300 KiB: every burst ends with a short PDU
 * carrying F (48+48+32 per burst), the last burst is 44 KiB. */
static void test_burst_ends(void)
{
	struct iovec iov[3];
	uint8_t *flat = malloc(3 * 128 * KB);
	uint8_t **b = chunks_make(3, 128 * KB, iov, flat);
	static const uint32_t sizes[] = { 48 * KB, 48 * KB, 32 * KB, 48 * KB,
					  48 * KB, 32 * KB, 44 * KB };
	static const bool f[] = { false, false, true, false, false, true, true };
	struct iscsi_din d;

	din_setup(&d, iov, 3, 300 * KB, 48 * KB, 128 * KB, true);
	check_sequence(&d, flat, sizes, f, 7);
	chunks_free(b, 3);
	free(flat);
}

/* Without status collapse no PDU carries the S bit; F still ends the sequence. */
static void test_no_collapse(void)
{
	struct iovec iov[2];
	uint8_t *flat = malloc(2 * 64 * KB);
	uint8_t **b = chunks_make(2, 64 * KB, iov, flat);
	static const uint32_t sizes[] = { 100 * KB, 28 * KB };
	static const bool f[] = { false, true };
	struct iscsi_din d;

	din_setup(&d, iov, 2, 128 * KB, 100 * KB, 1024 * KB, false);
	check_sequence(&d, flat, sizes, f, 2);
	chunks_free(b, 2);
	free(flat);
}

/* More pieces than one PDU may gather: the PDU stops at ISCSI_TX_DATA_IOV pieces and the
 * next one starts where it stopped. */
static void test_many_pieces(void)
{
	enum { N = 20 };
	struct iovec iov[N];
	uint8_t *flat = malloc(N * 1 * KB);
	uint8_t **b = chunks_make(N, 1 * KB, iov, flat);
	static const uint32_t sizes[] = { ISCSI_TX_DATA_IOV * KB, ISCSI_TX_DATA_IOV * KB,
					  (N - 2 * ISCSI_TX_DATA_IOV) * KB };
	static const bool f[] = { false, false, true };
	struct iscsi_din d;

	din_setup(&d, iov, N, N * KB, 64 * KB, 1024 * KB, true);
	check_sequence(&d, flat, sizes, f, 3);
	chunks_free(b, N);
	free(flat);
}

/* A PDU of 4097 bytes starting 3 bytes before a chunk boundary: padding and a data digest
 * over both pieces equal to CRC32C of the same bytes (and the pad) laid out flat. */
static void test_digest_across_chunks(void)
{
	struct iovec iov[2];
	uint8_t *flat = malloc(2 * 4 * KB + 4);
	uint8_t **b = chunks_make(2, 4 * KB, iov, flat);
	struct iovec part[2] = { { b[0] + 4 * KB - 3, 3 }, { b[1], 4094 } };
	uint8_t ref[4100];
	struct iscsi_tx tx;
	struct iscsi_din d;
	uint32_t want;

	din_setup(&d, part, 2, 4097, 8 * KB, 1024 * KB, true);
	CU_ASSERT_TRUE(iscsi_din_build(&d, &tx));
	iscsi_tx_finish(&tx, true, true);
	CU_ASSERT_EQUAL(tx.diovcnt, 2);
	CU_ASSERT_EQUAL(tx.dlen, 4097);
	CU_ASSERT_EQUAL(tx.hlen, ISCSI_BHS_LEN + ISCSI_DIGEST_LEN);
	CU_ASSERT_EQUAL(tx.tlen, 3 + ISCSI_DIGEST_LEN);
	CU_ASSERT_EQUAL(tx.trailer[0] | tx.trailer[1] | tx.trailer[2], 0);
	memset(ref, 0, sizeof(ref));
	memcpy(ref, flat + 4 * KB - 3, 4097);
	want = crc32c(ref, 4100);
	CU_ASSERT_EQUAL(iscsi_get_digest(tx.trailer + 3), want);
	CU_ASSERT_EQUAL(iscsi_get_digest(tx.hdr + ISCSI_BHS_LEN), crc32c(tx.hdr, ISCSI_BHS_LEN));
	/* the same bytes as one contiguous segment digest alike */
	memset(&tx, 0, sizeof(tx));
	tx.data = ref;
	tx.dlen = 4097;
	iscsi_tx_finish(&tx, false, true);
	CU_ASSERT_EQUAL(tx.diovcnt, 1);
	CU_ASSERT_EQUAL(tx.hlen, ISCSI_BHS_LEN);
	CU_ASSERT_EQUAL(iscsi_get_digest(tx.trailer + 3), want);
	chunks_free(b, 2);
	free(flat);
}

/* A header-only PDU has no data pieces and no trailer. */
static void test_no_data(void)
{
	struct iscsi_tx tx;

	memset(&tx, 0x5a, sizeof(tx));
	iscsi_bhs_init(tx.hdr, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL);
	tx.data = NULL;
	tx.dlen = 0;
	iscsi_tx_finish(&tx, false, true);
	CU_ASSERT_EQUAL(tx.diovcnt, 0);
	CU_ASSERT_EQUAL(tx.tlen, 0);
	CU_ASSERT_EQUAL(iscsi_bhs_dlen(tx.hdr), 0);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "large read spans chunks", test_large_read_spans_chunks },
		{ "F at burst ends", test_burst_ends },
		{ "no status collapse", test_no_collapse },
		{ "many pieces", test_many_pieces },
		{ "digest across chunks", test_digest_across_chunks },
		{ "no data", test_no_data },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_datain", NULL, NULL, tests);
}
