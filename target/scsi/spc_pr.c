// SPDX-License-Identifier: MIT
/*
 * PERSISTENT RESERVE IN/OUT and RESERVE(6)/RELEASE(6) to NVMe reservations (NVM Express
 * SCSI Translation Reference): PR OUT service actions become Reservation Register/Acquire/
 * Release, PR IN reads a Reservation Report (extended data structure) and reshapes it.
 * APTPL maps to the Change Persist Through Power Loss State field of Reservation Register
 * when the namespace can persist reservations (RESCAP PTPL); REPORT CAPABILITIES then
 * reads a Reservation Report for PTPL_A (its PTPLS bit).
 */
#include <string.h>

#include "common/endian.h"
#include "scsi_internal.h"

/* ---- Persistent reservations ---------------------------------------------------------------- */

/* The REPORT CAPABILITIES parameter data (8 bytes). */
static void pr_capabilities(uint8_t *b, bool ptpl_c, bool ptpl_a)
{
	memset(b, 0, 8);
	put_be16(&b[0], 8);
	b[2] = 0x10 | (ptpl_c ? 0x01 : 0);       /* CRH (SPC-4 5.9.3), PTPL_C */
	b[3] = 0x80 | (ptpl_a ? 0x01 : 0);       /* TMV: the type mask below is valid; PTPL_A */
	b[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02; /* WR_EX_AR EX_AC_RO WR_EX_RO EX_AC WR_EX */
	b[5] = 0x01;                             /* EX_AC_AR */
}

void spc_pr_in(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	struct scsi_plan *p = x->plan;
	uint8_t sa = c[1] & 0x1f;

	p->alloc_len = get_be16(&c[7]);
	if (!x->lu->reservations) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	p->sa = sa;
	switch (sa) {
	case SCSI_PR_IN_READ_KEYS:
	case SCSI_PR_IN_READ_RESERVATION:
	case SCSI_PR_IN_READ_FULL_STATUS:
		p->op = SCSI_XOP_PR_IN;
		p->dir = SCSI_DIR_IN;
		return;
	case SCSI_PR_IN_REPORT_CAPABILITIES:
		if (x->lu->ptpl) { /* PTPL_A is the namespace's state: ask it */
			p->op = SCSI_XOP_PR_IN;
			p->dir = SCSI_DIR_IN;
			return;
		}
		pr_capabilities(x->buf, false, false);
		p->op = SCSI_XOP_DONE;
		xlate_done_data(x, 8);
		return;
	default:
		scsi_plan_invalid_field(p, true, 1, 4);
		return;
	}
}

void spc_pr_out(struct xctx *x)
{
	const uint8_t *c = x->cdb;
	struct scsi_plan *p = x->plan;
	uint8_t sa = c[1] & 0x1f, scope = c[2] >> 4, type = c[2] & 0x0f;
	uint32_t len = get_be32(&c[5]);

	if (!x->lu->reservations) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	if (sa > SCSI_PR_OUT_REGISTER_AND_IGNORE) { /* REGISTER AND MOVE: not supported */
		scsi_plan_invalid_field(p, true, 1, 4);
		return;
	}
	if (sa == SCSI_PR_OUT_RESERVE || sa == SCSI_PR_OUT_RELEASE ||
	    sa == SCSI_PR_OUT_PREEMPT || sa == SCSI_PR_OUT_PREEMPT_AND_ABORT) {
		if (scope != SCSI_PR_SCOPE_LU) {
			scsi_plan_invalid_field(p, true, 2, 7);
			return;
		}
		switch (type) {
		case SCSI_PR_WRITE_EXCLUSIVE: case SCSI_PR_EXCLUSIVE_ACCESS:
		case SCSI_PR_WRITE_EXCLUSIVE_REG_ONLY: case SCSI_PR_EXCLUSIVE_ACCESS_REG_ONLY:
		case SCSI_PR_WRITE_EXCLUSIVE_ALL_REGS: case SCSI_PR_EXCLUSIVE_ACCESS_ALL_REGS:
			break;
		default:
			scsi_plan_invalid_field(p, true, 2, 3);
			return;
		}
	}
	if (len != SCSI_PR_OUT_PARAM_LEN) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return;
	}
	p->op = SCSI_XOP_PR_OUT;
	p->sa = sa;
	p->pr_type = type;
	p->dir = SCSI_DIR_OUT;
	p->xfer_len = len;
}

void spc_reserve_release(struct xctx *x)
{
	if (!x->lu->reservations) {
		scsi_plan_check_condition(x->plan, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	x->plan->op = x->cdb[0] == SCSI_OP_RESERVE6 ? SCSI_XOP_RESERVE6 : SCSI_XOP_RELEASE6;
}

/* SCSI reservation type <-> NVMe reservation type */
static uint8_t pr_type_to_nvme(uint8_t t)
{
	switch (t) {
	case SCSI_PR_WRITE_EXCLUSIVE: return NVME_RESV_WRITE_EXCLUSIVE;
	case SCSI_PR_EXCLUSIVE_ACCESS: return NVME_RESV_EXCLUSIVE_ACCESS;
	case SCSI_PR_WRITE_EXCLUSIVE_REG_ONLY: return NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY;
	case SCSI_PR_EXCLUSIVE_ACCESS_REG_ONLY: return NVME_RESV_EXCLUSIVE_ACCESS_REG_ONLY;
	case SCSI_PR_WRITE_EXCLUSIVE_ALL_REGS: return NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS;
	case SCSI_PR_EXCLUSIVE_ACCESS_ALL_REGS: return NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS;
	default: return 0;
	}
}

static uint8_t pr_type_from_nvme(uint8_t t)
{
	static const uint8_t map[] = {
		[NVME_RESV_WRITE_EXCLUSIVE] = SCSI_PR_WRITE_EXCLUSIVE,
		[NVME_RESV_EXCLUSIVE_ACCESS] = SCSI_PR_EXCLUSIVE_ACCESS,
		[NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY] = SCSI_PR_WRITE_EXCLUSIVE_REG_ONLY,
		[NVME_RESV_EXCLUSIVE_ACCESS_REG_ONLY] = SCSI_PR_EXCLUSIVE_ACCESS_REG_ONLY,
		[NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS] = SCSI_PR_WRITE_EXCLUSIVE_ALL_REGS,
		[NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS] = SCSI_PR_EXCLUSIVE_ACCESS_ALL_REGS,
	};

	return t < sizeof(map) ? map[t] : 0;
}

/* NVMe Reservation command fields (CDW10) */
#define RESV_IEKEY (1u << 3)
#define RESV_RTYPE_SHIFT 8
#define RESV_REGISTER 0
#define RESV_UNREGISTER 1
#define RESV_REPLACE 2
#define RESV_ACQUIRE 0
#define RESV_PREEMPT 1
#define RESV_PREEMPT_ABORT 2
#define RESV_RELEASE 0
#define RESV_CLEAR 1
#define RESV_REPORT_EDS 0x1	/* CDW11: extended data structure */
#define RESV_CPTPL_CLEAR   2u      /* CDW10 bits 31:30 of Register */
#define RESV_CPTPL_SET     3u

bool spc_pr_out_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *d, uint32_t len,
		     uint8_t *scratch)
{
	uint64_t rkey = get_be64(&d[0]), sakey = get_be64(&d[8]);
	uint8_t flags = d[20];

	if (len < SCSI_PR_OUT_PARAM_LEN) {
		scsi_plan_check_condition(p, SCSI_SK_ILLEGAL_REQUEST,
					  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	if (flags & 0x08) { /* SPEC_I_PT: SIP_C is 0 */
		scsi_plan_invalid_field(p, false, 20, 3);
		return false;
	}
	if (flags & 0x04) { /* ALL_TG_PT: ATP_C is 0 */
		scsi_plan_invalid_field(p, false, 20, 2);
		return false;
	}
	if ((flags & 0x01) && !lu->ptpl) { /* APTPL where PTPL_C is 0 */
		scsi_plan_invalid_field(p, false, 20, 0);
		return false;
	}
	p->aptpl = flags & 0x01;
	/* NVMe payload: CRKEY then NRKEY/PRKEY, little-endian. */
	put_le64(&scratch[0], rkey);
	put_le64(&scratch[8], sakey);
	p->lba = rkey; /* kept for the REGISTER special case in scsi_xlate_nvme_done() */
	p->left = sakey;
	return true;
}

/* ---- Finishing PERSISTENT RESERVE IN from a Reservation Report (extended format) ------ */

void spc_pr_in_finish(const struct scsi_port *port, struct scsi_plan *p, uint8_t *buf,
			 uint32_t buf_len, const uint8_t *rpt, uint32_t rpt_len)
{
	uint32_t gen = get_le32(&rpt[0]);
	uint8_t rtype = rpt[4];
	uint16_t nreg = get_le16(&rpt[5]);
	uint32_t len = 8;
	uint32_t max_regs = (rpt_len - RESV_REPORT_HDR) / RESV_REPORT_REG;

	if (p->sa == SCSI_PR_IN_REPORT_CAPABILITIES) {
		pr_capabilities(buf, true, rpt[9] & 0x01); /* PTPLS */
		p->in_len = 8 < p->alloc_len ? 8 : p->alloc_len;
		return;
	}
	if (nreg > max_regs)
		nreg = (uint16_t)max_regs;
	memset(buf, 0, 8);
	put_be32(&buf[0], gen);
	if (p->sa == SCSI_PR_IN_READ_KEYS) {
		for (uint16_t i = 0; i < nreg && len + 8 <= buf_len; i++) {
			const uint8_t *r = &rpt[RESV_REPORT_HDR + RESV_REPORT_REG * i];

			put_be64(&buf[len], get_le64(&r[8]));
			len += 8;
		}
	} else if (p->sa == SCSI_PR_IN_READ_FULL_STATUS) {
		for (uint16_t i = 0; i < nreg; i++) {
			const uint8_t *r = &rpt[RESV_REPORT_HDR + RESV_REPORT_REG * i];
			bool holder = (r[2] & 0x01) && rtype;
			uint8_t tid[SCSI_TRANSPORT_ID_MAX];
			uint32_t tl = port && port->transport_id
					      ? port->transport_id(port->arg, &r[16], tid, sizeof(tid))
					      : 0;

			if (len + 24 + tl > buf_len)
				break;
			memset(&buf[len], 0, 24);
			put_be64(&buf[len], get_le64(&r[8]));
			if (holder) {
				buf[len + 12] = 0x01; /* R_HOLDER */
				buf[len + 13] = (uint8_t)(SCSI_PR_SCOPE_LU << 4 | pr_type_from_nvme(rtype));
			}
			put_be16(&buf[len + 18], port ? port->rel_port_id : 1);
			put_be32(&buf[len + 20], tl);
			memcpy(&buf[len + 24], tid, tl);
			len += 24 + tl;
		}
	} else if (rtype) {
		uint64_t key = 0;

		for (uint16_t i = 0; i < nreg; i++) {
			const uint8_t *r = &rpt[RESV_REPORT_HDR + RESV_REPORT_REG * i];

			if (r[2] & 0x01) { /* RCSTS: holds the reservation */
				key = get_le64(&r[8]);
				break;
			}
		}
		if (rtype == NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS ||
		    rtype == NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS)
			key = 0;
		memset(&buf[8], 0, 16);
		put_be64(&buf[8], key);
		buf[21] = (uint8_t)(SCSI_PR_SCOPE_LU << 4 | pr_type_from_nvme(rtype));
		len += 16;
	}
	put_be32(&buf[4], len - 8);
	p->in_len = len < p->alloc_len ? len : p->alloc_len;
}

/* The one NVMe command of PERSISTENT RESERVE IN or OUT. */
bool spc_pr_next(const struct scsi_lu *lu, struct scsi_plan *p, uint32_t scratch_len,
		 struct nvme_cmd *cmd, struct scsi_nvme_io *io)
{
	if (p->op == SCSI_XOP_PR_IN) {
		uint32_t bytes;

		if (p->step++)
			return false;
		bytes = scratch_len & ~3u;
		if (bytes > 16384)
			bytes = 16384;
		xlate_nvme_cmd_init(cmd, NVME_OPC_RESERVATION_REPORT, lu->nsid, bytes);
		put_le32(&cmd->cdw10, bytes / 4 - 1);
		put_le32(&cmd->cdw11, RESV_REPORT_EDS);
		xlate_io_ref(io, SCSI_BUF_SCRATCH, 0, bytes);
		return true;
	}
	{
		uint32_t cdw10 = 0;
		uint8_t opc;
		uint32_t len = 16;

		if (p->step++)
			return false;
		switch (p->sa) {
		case SCSI_PR_OUT_REGISTER:
		case SCSI_PR_OUT_REGISTER_AND_IGNORE:
			opc = NVME_OPC_RESERVATION_REGISTER;
			if (p->sa == SCSI_PR_OUT_REGISTER_AND_IGNORE)
				cdw10 = RESV_IEKEY | (p->left ? RESV_REPLACE : RESV_UNREGISTER);
			else if (p->left == 0)
				cdw10 = RESV_UNREGISTER;
			else if (p->lba == 0)
				cdw10 = RESV_REGISTER;
			else
				cdw10 = RESV_REPLACE;
			/* APTPL: the last REGISTER decides whether the state persists */
			if (lu->ptpl)
				cdw10 |= (p->aptpl ? RESV_CPTPL_SET : RESV_CPTPL_CLEAR) << 30;
			break;
		case SCSI_PR_OUT_RESERVE:
			opc = NVME_OPC_RESERVATION_ACQUIRE;
			cdw10 = RESV_ACQUIRE;
			break;
		case SCSI_PR_OUT_PREEMPT:
		case SCSI_PR_OUT_PREEMPT_AND_ABORT:
			opc = NVME_OPC_RESERVATION_ACQUIRE;
			cdw10 = p->sa == SCSI_PR_OUT_PREEMPT ? RESV_PREEMPT : RESV_PREEMPT_ABORT;
			break;
		case SCSI_PR_OUT_RELEASE:
			opc = NVME_OPC_RESERVATION_RELEASE;
			cdw10 = RESV_RELEASE;
			len = 8;
			break;
		default: /* CLEAR */
			opc = NVME_OPC_RESERVATION_RELEASE;
			cdw10 = RESV_CLEAR;
			len = 8;
			break;
		}
		if (p->sa != SCSI_PR_OUT_REGISTER && p->sa != SCSI_PR_OUT_REGISTER_AND_IGNORE &&
		    p->sa != SCSI_PR_OUT_CLEAR)
			cdw10 |= (uint32_t)pr_type_to_nvme(p->pr_type) << RESV_RTYPE_SHIFT;
		xlate_nvme_cmd_init(cmd, opc, lu->nsid, len);
		put_le32(&cmd->cdw10, cdw10);
		xlate_io_ref(io, SCSI_BUF_SCRATCH, 0, len);
		return true;
	}
}
