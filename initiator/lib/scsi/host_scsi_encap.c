/* SPDX-License-Identifier: MIT */
/*
 * NVMe command -> SCSI CDB, and SCSI status/sense -> NVMe status (the inverse of the NVM
 * Express SCSI Translation Reference's status table). Pure functions; see scsi_encap.h.
 */
#include <errno.h>
#include <string.h>

#include "common/endian.h"
#include "lib/nvmeof.h"
#include "host_scsi_encap.h"

#define ST(sct, sc) NVMEOF_STATUS(NVME_SCT_##sct, NVME_SC_##sc)

/* ---- NVMe -> CDB ---------------------------------------------------------------------------- */
static uint64_t sqe_slba(const struct nvme_cmd *sqe)
{
	return (uint64_t)get_le32(&sqe->cdw11) << 32 | get_le32(&sqe->cdw10);
}

static uint32_t sqe_nlb(const struct nvme_cmd *sqe)
{
	return (get_le32(&sqe->cdw12) & NVME_RW_NLB_MASK) + 1;
}

/* READ(16), WRITE(16), VERIFY(16), WRITE SAME(16): opcode, flags, LBA, length. */
static void cdb16(struct scsi_encap_cmd *out, uint8_t opc, uint8_t flags, uint64_t lba,
		  uint32_t nblocks)
{
	memset(out->cdb, 0, sizeof(out->cdb));
	out->cdb[0] = opc;
	out->cdb[1] = flags;
	put_be64(&out->cdb[2], lba);
	put_be32(&out->cdb[10], nblocks);
	out->cdb_len = 16;
}

/* Copy @len bytes at offset @off of an iovec array into @dst; false if it is too short. */
static bool iov_read(const struct iovec *iov, int iovcnt, size_t off, void *dst, size_t len)
{
	uint8_t *d = dst;

	for (int i = 0; i < iovcnt && len; i++) {
		size_t seg = iov[i].iov_len, n;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		n = seg - off < len ? seg - off : len;
		memcpy(d, (const uint8_t *)iov[i].iov_base + off, n);
		d += n;
		len -= n;
		off = 0;
	}
	return len == 0;
}

static int build_rw(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu,
		    struct scsi_encap_cmd *out)
{
	uint32_t cdw12 = get_le32(&sqe->cdw12), nlb = sqe_nlb(sqe);
	uint8_t flags = (cdw12 & NVME_RW_FUA) ? 0x08 : 0;
	bool read = sqe->opc == NVME_OPC_READ;

	if (cdw12 >> NVME_RW_PRINFO_SHIFT & 0xf)
		return ST(GENERIC, INVALID_FIELD); /* no protection information here */
	cdb16(out, read ? SCSI_OP_READ16 : SCSI_OP_WRITE16, flags, sqe_slba(sqe), nlb);
	out->data = read ? SCSI_DATA_IN : SCSI_DATA_OUT;
	out->data_off = 0;
	out->xfer_len = nlb << lu->block_shift;
	out->last = true;
	return 0;
}

static int build_verify(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu,
			struct scsi_encap_cmd *out)
{
	if (!lu->verify)
		return ST(GENERIC, INVALID_OPCODE);
	/* BYTCHK 00b: check the medium, no data transferred. */
	cdb16(out, SCSI_OP_VERIFY16, 0, sqe_slba(sqe), sqe_nlb(sqe));
	out->data = SCSI_DATA_NONE;
	out->xfer_len = 0;
	out->last = true;
	return 0;
}

static void build_sync_cache(struct scsi_encap_cmd *out)
{
	/* LBA 0 and NUMBER OF LOGICAL BLOCKS 0: everything up to the end of the medium. */
	memset(out->cdb, 0, sizeof(out->cdb));
	out->cdb[0] = SCSI_OP_SYNC_CACHE10;
	out->cdb_len = 10;
	out->data = SCSI_DATA_NONE;
	out->xfer_len = 0;
	out->last = true;
}

/* Steps of at most @per blocks over @total blocks. */
static bool step_range(uint32_t total, uint32_t per, uint32_t step, uint32_t *first,
		       uint32_t *count)
{
	uint64_t start = (uint64_t)step * per;

	if (start >= total)
		return false;
	*first = (uint32_t)start;
	*count = total - *first < per ? total - *first : per;
	return true;
}

/*
 * Compare -> VERIFY(16) with BYTCHK 01b: the target compares the data-out buffer with the
 * medium and writes nothing (SBC), so it works on read-only LUNs and under a Write
 * Exclusive reservation, which COMPARE AND WRITE would not. A mismatch comes back as
 * MISCOMPARE sense, which becomes Compare Failure. One step: VERIFICATION LENGTH is 32
 * bits and an NVMe Compare covers at most 65,536 blocks.
 */
static int build_compare(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu,
			 uint32_t step, struct scsi_encap_cmd *out)
{
	uint32_t cdw12 = get_le32(&sqe->cdw12), nlb = sqe_nlb(sqe);

	if (!lu->verify)
		return ST(GENERIC, INVALID_OPCODE);
	if (step || cdw12 >> NVME_RW_PRINFO_SHIFT & 0xf)
		return ST(GENERIC, INVALID_FIELD);
	cdb16(out, SCSI_OP_VERIFY16, 0x02 /* BYTCHK 01b */, sqe_slba(sqe), nlb);
	out->data = SCSI_DATA_OUT;
	out->data_off = 0;
	out->part_len = 0;
	out->xfer_len = nlb << lu->block_shift;
	out->last = true;
	return 0;
}

static int build_write_zeroes(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu,
			      uint32_t step, struct scsi_encap_cmd *out)
{
	uint32_t cdw12 = get_le32(&sqe->cdw12), nlb = sqe_nlb(sqe), first, n;
	uint32_t per = lu->ws_max_blocks ? lu->ws_max_blocks : nlb;
	uint8_t flags = 0;

	if (!lu->write_same)
		return ST(GENERIC, INVALID_OPCODE);
	if (cdw12 >> NVME_RW_PRINFO_SHIFT & 0xf)
		return ST(GENERIC, INVALID_FIELD);
	if (!step_range(nlb, per, step, &first, &n))
		return ST(GENERIC, INVALID_FIELD);
	if ((cdw12 & NVME_RW_DEAC) && lu->ws_unmap)
		flags |= 0x08; /* UNMAP */
	cdb16(out, SCSI_OP_WRITE_SAME16, flags, sqe_slba(sqe) + first, n);
	out->data = SCSI_DATA_OUT_ZERO_BLOCK;
	out->xfer_len = 1u << lu->block_shift;
	out->last = first + n == nlb;
	return 0;
}

static int build_unmap(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu,
		       uint32_t step, const struct iovec *iov, int iovcnt, uint32_t data_len,
		       uint8_t *param, struct scsi_encap_cmd *out)
{
	uint32_t nr = (get_le32(&sqe->cdw10) & 0xff) + 1, per, first, n;

	if (!(get_le32(&sqe->cdw11) & NVME_DSM_ATTR_AD))
		return SCSI_ENCAP_DONE; /* only access hints: nothing SCSI can express */
	if (!lu->unmap_max_descs)
		return ST(GENERIC, INVALID_OPCODE);
	if (data_len < nr * sizeof(struct nvme_dsm_range))
		return ST(GENERIC, DATA_SGL_LENGTH_INVALID);
	per = lu->unmap_max_descs < SCSI_ENCAP_UNMAP_DESCS ? lu->unmap_max_descs
							   : SCSI_ENCAP_UNMAP_DESCS;
	if (!step_range(nr, per, step, &first, &n))
		return ST(GENERIC, INVALID_FIELD);
	memset(param, 0, SCSI_UNMAP_HDR_LEN);
	put_be16(param, (uint16_t)(6 + n * SCSI_UNMAP_DESC_LEN));
	put_be16(param + 2, (uint16_t)(n * SCSI_UNMAP_DESC_LEN));
	for (uint32_t i = 0; i < n; i++) {
		uint8_t r[sizeof(struct nvme_dsm_range)];
		uint8_t *d = param + SCSI_UNMAP_HDR_LEN + i * SCSI_UNMAP_DESC_LEN;

		if (!iov_read(iov, iovcnt, (size_t)(first + i) * sizeof(r), r, sizeof(r)))
			return ST(GENERIC, DATA_SGL_LENGTH_INVALID);
		put_be64(d, get_le64(r + offsetof(struct nvme_dsm_range, slba)));
		put_be32(d + 8, get_le32(r + offsetof(struct nvme_dsm_range, nlb)));
		memset(d + 12, 0, 4);
	}
	memset(out->cdb, 0, sizeof(out->cdb));
	out->cdb[0] = SCSI_OP_UNMAP;
	put_be16(&out->cdb[7], (uint16_t)(SCSI_UNMAP_HDR_LEN + n * SCSI_UNMAP_DESC_LEN));
	out->cdb_len = 10;
	out->data = SCSI_DATA_OUT_PARAM;
	out->xfer_len = SCSI_UNMAP_HDR_LEN + n * SCSI_UNMAP_DESC_LEN;
	out->last = first + n == nr;
	return 0;
}

int scsi_encap_build(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu, uint32_t step,
		     const struct iovec *iov, int iovcnt, uint32_t data_len, uint8_t *param,
		     struct scsi_encap_cmd *out)
{
	memset(out, 0, sizeof(*out));
	if (sqe->flags & NVME_CMD_FUSE_MASK)
		return ST(GENERIC, INVALID_FIELD);
	switch (sqe->opc) {
	case NVME_OPC_READ:
	case NVME_OPC_WRITE:
		return step ? ST(GENERIC, INVALID_FIELD) : build_rw(sqe, lu, out);
	case NVME_OPC_FLUSH:
		if (step)
			return ST(GENERIC, INVALID_FIELD);
		build_sync_cache(out);
		return 0;
	case NVME_OPC_COMPARE:
		return build_compare(sqe, lu, step, out);
	case NVME_OPC_WRITE_ZEROES:
		return build_write_zeroes(sqe, lu, step, out);
	case NVME_OPC_DATASET_MANAGEMENT:
		return build_unmap(sqe, lu, step, iov, iovcnt, data_len, param, out);
	case NVME_OPC_VERIFY:
		return step ? ST(GENERIC, INVALID_FIELD) : build_verify(sqe, lu, out);
	default:
		return ST(GENERIC, INVALID_OPCODE);
	}
}

/* ---- Sense -> NVMe status ------------------------------------------------------------------- */
bool scsi_sense_parse(const uint8_t *sense, size_t len, uint8_t *key, uint16_t *asc_ascq)
{
	uint8_t code;

	if (!sense || len < 2)
		return false;
	code = sense[0] & 0x7f;
	if (code == 0x70 || code == 0x71) {
		if (len < 3)
			return false;
		*key = sense[2] & 0xf;
		/* ADDITIONAL SENSE LENGTH (byte 7) covers ASC/ASCQ when >= 6. */
		if (len >= 14 && sense[7] >= 6)
			*asc_ascq = SCSI_ASCQ(sense[12], sense[13]);
		else
			*asc_ascq = SCSI_ASC_NO_ADDITIONAL_SENSE;
		return true;
	}
	if (code == 0x72 || code == 0x73) {
		if (len < 4)
			return false;
		*key = sense[1] & 0xf;
		*asc_ascq = SCSI_ASCQ(sense[2], sense[3]);
		return true;
	}
	return false;
}

struct sense_map {
	uint8_t key;
	uint8_t asc;
	int16_t ascq;		/* -1: any */
	uint16_t status;	/* NVMEOF_STATUS() */
	bool dnr;
};

/* Most specific first: the first entry matching key, ASC and ASCQ wins. */
static const struct sense_map sense_table[] = {
	{ SCSI_SK_ILLEGAL_REQUEST, 0x20, 0x00, ST(GENERIC, INVALID_OPCODE), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x20, 0x02, ST(MEDIA, ACCESS_DENIED), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x20, 0x09, ST(GENERIC, INVALID_NS_OR_FORMAT), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x21, 0x00, ST(GENERIC, LBA_OUT_OF_RANGE), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x24, -1, ST(GENERIC, INVALID_FIELD), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x25, 0x00, ST(GENERIC, INVALID_NS_OR_FORMAT), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x26, -1, ST(GENERIC, INVALID_FIELD), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x1a, 0x00, ST(GENERIC, DATA_SGL_LENGTH_INVALID), true },
	{ SCSI_SK_ILLEGAL_REQUEST, 0x2c, 0x00, ST(GENERIC, COMMAND_SEQUENCE_ERROR), true },
	{ SCSI_SK_DATA_PROTECT, 0x27, 0x07, ST(GENERIC, CAPACITY_EXCEEDED), true },
	{ SCSI_SK_MEDIUM_ERROR, 0x03, -1, ST(MEDIA, WRITE_FAULT), true },
	{ SCSI_SK_MEDIUM_ERROR, 0x0c, -1, ST(MEDIA, WRITE_FAULT), true },
	{ SCSI_SK_MEDIUM_ERROR, 0x11, -1, ST(MEDIA, UNRECOVERED_READ_ERROR), true },
	{ SCSI_SK_MEDIUM_ERROR, 0x00, 0x00, ST(GENERIC, DATA_TRANSFER_ERROR), false },
	{ SCSI_SK_NOT_READY, 0x04, 0x04, ST(GENERIC, FORMAT_IN_PROGRESS), false },
	{ SCSI_SK_ABORTED_COMMAND, 0x0b, 0x08, ST(GENERIC, ABORTED_POWER_LOSS), false },
	{ SCSI_SK_ABORTED_COMMAND, 0x47, -1, ST(GENERIC, TRANSIENT_TRANSPORT_ERROR), false },
	{ SCSI_SK_ABORTED_COMMAND, 0x4b, -1, ST(GENERIC, TRANSIENT_TRANSPORT_ERROR), false },
};

/* End-to-end protection errors come with MEDIUM ERROR or ABORTED COMMAND. */
static bool pi_status(uint16_t asc_ascq, uint16_t *st)
{
	switch (asc_ascq) {
	case SCSI_ASC_GUARD_CHECK_FAILED:
		*st = ST(MEDIA, GUARD_CHECK_ERROR);
		return true;
	case SCSI_ASC_APPTAG_CHECK_FAILED:
		*st = ST(MEDIA, APPTAG_CHECK_ERROR);
		return true;
	case SCSI_ASC_REFTAG_CHECK_FAILED:
		*st = ST(MEDIA, REFTAG_CHECK_ERROR);
		return true;
	}
	return false;
}

static bool writes_medium(uint8_t opc)
{
	return opc == NVME_OPC_WRITE || opc == NVME_OPC_WRITE_ZEROES ||
	       opc == NVME_OPC_DATASET_MANAGEMENT || opc == NVME_OPC_FLUSH;
}

static uint16_t sense_to_nvme(uint8_t opc, uint8_t key, uint16_t asc_ascq, bool *dnr)
{
	uint8_t asc = (uint8_t)(asc_ascq >> 8), ascq = (uint8_t)asc_ascq;
	uint16_t st;

	for (size_t i = 0; i < sizeof(sense_table) / sizeof(sense_table[0]); i++) {
		const struct sense_map *m = &sense_table[i];

		if (m->key == key && m->asc == asc && (m->ascq < 0 || m->ascq == ascq)) {
			*dnr = m->dnr;
			return m->status;
		}
	}
	if ((key == SCSI_SK_MEDIUM_ERROR || key == SCSI_SK_ABORTED_COMMAND) &&
	    pi_status(asc_ascq, &st)) {
		*dnr = true;
		return st;
	}
	switch (key) {
	case SCSI_SK_NO_SENSE:
	case SCSI_SK_RECOVERED_ERROR:
		*dnr = false;
		return 0;
	case SCSI_SK_NOT_READY:
		*dnr = false;
		return ST(GENERIC, NS_NOT_READY);
	case SCSI_SK_MEDIUM_ERROR:
		*dnr = true;
		return writes_medium(opc) ? ST(MEDIA, WRITE_FAULT)
					  : ST(MEDIA, UNRECOVERED_READ_ERROR);
	case SCSI_SK_ILLEGAL_REQUEST:
		*dnr = true;
		return ST(GENERIC, INVALID_FIELD);
	case SCSI_SK_UNIT_ATTENTION:
		*dnr = false;
		return ST(GENERIC, COMMAND_INTERRUPTED);
	case SCSI_SK_DATA_PROTECT:
		*dnr = true;
		return ST(GENERIC, NS_WRITE_PROTECTED);
	case SCSI_SK_ABORTED_COMMAND:
		*dnr = false;
		return ST(GENERIC, ABORT_REQUESTED);
	case SCSI_SK_MISCOMPARE:
		*dnr = true;
		return ST(MEDIA, COMPARE_FAILURE);
	default: /* HARDWARE ERROR, BLANK CHECK, COPY ABORTED, VOLUME OVERFLOW, ... */
		*dnr = false;
		return ST(GENERIC, INTERNAL);
	}
}

uint16_t scsi_status_to_nvme(uint8_t opc, uint8_t status, const uint8_t *sense, size_t sense_len,
			     bool *dnr)
{
	uint16_t asc_ascq;
	uint8_t key;

	*dnr = false;
	switch (status) {
	case SCSI_STATUS_GOOD:
	case SCSI_STATUS_CONDITION_MET:
		return 0;
	case SCSI_STATUS_CHECK_CONDITION:
		if (!scsi_sense_parse(sense, sense_len, &key, &asc_ascq))
			return ST(GENERIC, INTERNAL);
		return sense_to_nvme(opc, key, asc_ascq, dnr);
	case SCSI_STATUS_RESERVATION_CONFLICT:
		return ST(GENERIC, RESERVATION_CONFLICT);
	case SCSI_STATUS_BUSY:
	case SCSI_STATUS_TASK_SET_FULL:
		return ST(GENERIC, COMMAND_INTERRUPTED);
	case SCSI_STATUS_TASK_ABORTED:
		return ST(GENERIC, ABORT_REQUESTED);
	default: /* ACA ACTIVE and reserved values */
		return ST(GENERIC, INTERNAL);
	}
}

bool scsi_is_unit_attention(uint8_t status, const uint8_t *sense, size_t sense_len)
{
	uint16_t asc_ascq;
	uint8_t key;

	return status == SCSI_STATUS_CHECK_CONDITION &&
	       scsi_sense_parse(sense, sense_len, &key, &asc_ascq) &&
	       key == SCSI_SK_UNIT_ATTENTION;
}
