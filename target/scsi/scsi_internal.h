/* SPDX-License-Identifier: MIT */
/* Internals of the translation, shared by scsi_xlate.c (command table, dispatch, NVMe side),
 * sbc.c (block commands), spc.c (INQUIRY, VPD, MODE SENSE/SELECT, REPORT LUNS, RSOC) and
 * spc_pr.c (persistent reservations). */
#ifndef NVMEOF_TARGET_SCSI_XLATE_INT_H
#define NVMEOF_TARGET_SCSI_XLATE_INT_H

#include "scsi_xlate.h"

struct scsi_cmd_desc;

/* Per-call translation context. */
struct xctx {
	const struct scsi_port *port;
	const struct scsi_lu *lu;
	const uint8_t *cdb;
	struct scsi_plan *plan;
	uint8_t *buf;
	uint32_t buf_len;
	const struct scsi_cmd_desc *desc; /* the command's table row */
};

/* Service actions: CDB byte 1 bits 4:0 of the opcodes that have them. */
#define SCSI_SA_COUNT 32

/* What a command needs before or while its handler runs (scsi_cmd_desc.flags). */
#define SCSI_CMD_NEEDS_LU 0x01 /* refused (LOGICAL UNIT NOT SUPPORTED) without a logical unit */
#define SCSI_CMD_WP_CHECK \
	0x02                   /* refused (WRITE PROTECTED) on a write-protected LU, checked
				 * by the handler once the CDB's fields are valid */
#define SCSI_CMD_RESV6_OK 0x04 /* runs while another I_T nexus holds a RESERVE(6) */
#define SCSI_CMD_SA_FIELD \
	0x08 /* an unknown service action is INVALID FIELD IN CDB (byte 1
				 * bit 4), not INVALID COMMAND OPERATION CODE */

/*
 * One row of the command table, indexed by opcode (and for opcodes with service actions, a
 * second table indexed by service action). A row with cdb_len 0 is an unsupported command.
 * The CDB usage data (SPC-4 REPORT SUPPORTED OPERATION CODES) doubles as the reserved-bit
 * mask every CDB is checked against before its handler runs; in a service action row the
 * low 5 bits of usage[1] are the service action field (all ones: any value allowed there).
 */
struct scsi_cmd_desc {
	void (*handler)(struct xctx *x); /* NULL in an opcode row with service actions */
	const struct scsi_cmd_desc *sa;  /* [SCSI_SA_COUNT] service action rows, or NULL */
	uint8_t cdb_len;
	uint8_t dir;   /* enum scsi_dir: data moved when there is some */
	uint8_t flags; /* SCSI_CMD_* */
	uint8_t usage[16];
};

extern const struct scsi_cmd_desc scsi_cmd_table[256];

/*
 * The row of the command @opcode with service action @sa (ignored when the opcode has none),
 * or NULL when that command is not supported. @op_row (may be NULL) receives the opcode's
 * row when the opcode itself is supported, NULL otherwise.
 */
const struct scsi_cmd_desc *scsi_cmd_lookup(uint8_t opcode, uint16_t sa,
					    const struct scsi_cmd_desc **op_row);

/* Finish an immediate command with @len bytes of data in x->buf (allocation length
 * applied by the caller through plan->alloc_len). */
static inline void xlate_done_data(struct xctx *x, uint32_t len)
{
	x->plan->op = SCSI_XOP_DONE;
	x->plan->dir = SCSI_DIR_IN;
	x->plan->in_len = len < x->plan->alloc_len ? len : x->plan->alloc_len;
	x->plan->xfer_len = x->plan->alloc_len;
}

/* The LU refuses writes: namespace write protected or MODE SELECT set SWP. */
static inline bool lu_write_protected(const struct scsi_lu *lu)
{
	return lu->read_only || (lu->mode && __atomic_load_n(&lu->mode->swp, __ATOMIC_RELAXED));
}

/* Block command handlers (sbc.c) */
void sbc_test_unit_ready(struct xctx *x);
void sbc_start_stop(struct xctx *x);
void sbc_read(struct xctx *x);
void sbc_write(struct xctx *x);
void sbc_verify(struct xctx *x);
void sbc_compare_and_write(struct xctx *x);
void sbc_sync_cache(struct xctx *x);
void sbc_prefetch(struct xctx *x);
void sbc_write_same(struct xctx *x);
void sbc_unmap(struct xctx *x);
void sbc_read_capacity10(struct xctx *x);
void sbc_read_capacity16(struct xctx *x);
void sbc_get_lba_status(struct xctx *x);
/* Their data-out and data-in */
bool sbc_unmap_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *d, uint32_t len,
		    uint8_t *scratch, uint32_t scratch_len);
bool sbc_write_same_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *data,
			 uint32_t len);
void sbc_lba_status_finish(struct scsi_plan *p, uint8_t *buf, uint32_t buf_len, const uint8_t *d,
			   uint32_t len);
/* Blocks one NVMe data command may move (MDTS and the NLB field). */
uint32_t sbc_cmd_max_blocks(const struct scsi_lu *lu);

/* SPC handlers (spc.c) */
void spc_inquiry(struct xctx *x);
void spc_request_sense(struct xctx *x);
void spc_report_luns(struct xctx *x);
void spc_mode_sense(struct xctx *x);
void spc_mode_select(struct xctx *x);
void spc_report_opcodes(struct xctx *x);
bool spc_mode_select_data(const struct scsi_lu *lu, struct scsi_plan *plan, const uint8_t *data,
			  uint32_t len);

/* Persistent reservations (spc_pr.c) */
void spc_pr_in(struct xctx *x);
void spc_pr_out(struct xctx *x);
void spc_reserve_release(struct xctx *x);
bool spc_pr_out_data(const struct scsi_lu *lu, struct scsi_plan *p, const uint8_t *d, uint32_t len,
		     uint8_t *scratch);
bool spc_pr_next(const struct scsi_lu *lu, struct scsi_plan *p, uint32_t scratch_len,
		 struct nvme_cmd *cmd, struct scsi_nvme_io *io);
void spc_pr_in_finish(const struct scsi_port *port, struct scsi_plan *p, uint8_t *buf,
		      uint32_t buf_len, const uint8_t *rpt, uint32_t rpt_len);

/* Shared by the translation files (scsi_xlate.c) */
void xlate_nvme_cmd_init(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid, uint32_t len);
void xlate_io_ref(struct scsi_nvme_io *io, enum scsi_buf buf, uint32_t off, uint32_t len);
void xlate_lba_out_of_range(struct scsi_plan *plan);

/* Extended Reservation Report layout (header and registrant sizes) */
#define RESV_REPORT_HDR 64
#define RESV_REPORT_REG 64

/* Largest COMPARE AND WRITE we accept, in blocks (Block Limits VPD byte 5; sbc.c). */
uint32_t sbc_max_caw_blocks(const struct scsi_lu *lu);

#endif
