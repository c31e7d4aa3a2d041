/* SPDX-License-Identifier: MIT */
/*
 * SCSI to NVMe translation (NVM Express SCSI Translation Reference, SBC-3, SPC-4) as pure
 * functions, usable without a socket:
 *
 *   scsi_xlate_cdb()       validate a CDB; either answer it right away (INQUIRY, VPD pages,
 *                          READ CAPACITY, MODE SENSE, REPORT LUNS, ...) or plan the NVMe
 *                          commands it needs (plan->op) and the data it moves;
 *   scsi_xlate_data_out()  check the parameter data of the commands that carry some
 *                          (UNMAP, PERSISTENT RESERVE OUT, MODE SELECT, WRITE SAME, ...);
 *   scsi_xlate_next()      produce the next NVMe command of the plan (reads/writes, fused
 *                          Compare+Write, Verify, Flush, Dataset Management, Write Zeroes,
 *                          Reservation Register/Acquire/Release/Report);
 *   scsi_xlate_nvme_done() fold an NVMe completion status into the SCSI outcome;
 *   scsi_xlate_finish()    convert NVMe-side data into the SCSI reply (PERSISTENT
 *                          RESERVE IN, GET LBA STATUS) once all commands ran;
 *   scsi_sense_build()     fixed or descriptor format sense data.
 *
 * The caller (the iSCSI task engine) owns buffers and sequencing: it moves data, runs each
 * NVMe command through the NVMe command executor and reports its status back.
 */
#ifndef NVMEOF_TARGET_SCSI_XLATE_H
#define NVMEOF_TARGET_SCSI_XLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_spec.h"
#include "common/scsi_spec.h"

#define SCSI_SENSE_MAX 32	 /* bytes of sense data we ever build */
#define SCSI_NVME_MAX_NLB 65536u /* blocks per NVMe Read/Write/Compare/Verify/Write Zeroes */

struct scsi_sense {
	uint8_t key;
	uint16_t asc;		 /* SCSI_ASCQ(asc, ascq) */
	bool info_valid;
	uint64_t info;		 /* INFORMATION field (e.g. miscompare offset) */
	bool sks_valid;
	uint8_t sks[3];		 /* sense-key specific bytes (field pointer) */
};

/* Mode parameters that MODE SELECT may change; shared by every I_T nexus of a LU. */
struct scsi_lu_mode {
	bool swp;		 /* control page: software write protect */
	bool d_sense;		 /* control page: descriptor format sense data */
};

/* What the translator knows about the logical unit behind a LUN. */
struct scsi_lu {
	uint64_t lun;
	uint32_t nsid;
	uint64_t nblocks;
	uint32_t block_size;
	uint32_t max_xfer_blocks;  /* MAXIMUM TRANSFER LENGTH (Block Limits VPD) */
	uint32_t max_cmd_blocks;   /* blocks per NVMe data command (MDTS); 0: max_xfer */
	uint8_t phys_exp;	   /* logical blocks per physical block, log2 (NPWG) */
	uint32_t max_unmap_blocks; /* MAXIMUM UNMAP LBA COUNT */
	uint32_t max_unmap_descs;  /* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT (<= 256) */
	uint32_t max_ws_blocks;	   /* MAXIMUM WRITE SAME LENGTH */
	bool thin;		   /* deallocation: LBPME, UNMAP, WRITE SAME UNMAP */
	bool write_cache;	   /* volatile write cache (WCE) */
	bool read_only;		   /* namespace write protected */
	bool reservations;	   /* persistent reservations supported (ONCS) */
	bool ptpl;                 /* ... and they can persist through power loss (RESCAP) */
	bool compare_write;	   /* fused Compare and Write supported (FUSES) */
	uint32_t max_caw_blocks;   /* COMPARE AND WRITE atomic unit (NACWU + 1); 0: no limit */
	bool verify_cmd;	   /* NVMe Verify supported (ONCS) */
	bool write_zeroes;	   /* NVMe Write Zeroes supported (ONCS) */
	bool lba_status;	   /* allocation status command (GET LBA STATUS) */
	uint8_t nguid[16];	   /* zero when absent */
	uint8_t eui64[8];	   /* zero when absent */
	char serial[21];	   /* controller/subsystem serial number */
	char model[41];
	char firmware[9];
	struct scsi_lu_mode *mode; /* shared mode state (may be updated by MODE SELECT) */
};

#define SCSI_TRANSPORT_ID_MAX 256

/* The target port the command came through. */
struct scsi_port {
	const char *target_name;   /* SCSI name string of the target (iSCSI name) */
	uint16_t rel_port_id;	   /* relative target port identifier */
	uint16_t tpgt;		   /* target portal group tag */
	const uint64_t *luns;	   /* LUNs of the target, for REPORT LUNS */
	uint32_t nluns;
	/* TransportID (SPC-4 7.6.4) of the initiator port behind an NVMe host identifier,
	 * for PERSISTENT RESERVE IN READ FULL STATUS; returns its length (multiple of 4). */
	uint32_t (*transport_id)(void *arg, const uint8_t hostid[16], uint8_t *out,
				 uint32_t cap);
	void *arg;
};

/* What the task engine does after scsi_xlate_cdb(). */
enum scsi_xop {
	SCSI_XOP_DONE,		   /* status (and data-in in the buffer) are final */
	SCSI_XOP_READ,		   /* Read -> data-in */
	SCSI_XOP_WRITE,		   /* data-out -> Write */
	SCSI_XOP_WRITE_VERIFY,	   /* data-out -> Write (FUA), then Verify or Compare */
	SCSI_XOP_VERIFY,	   /* Verify (BYTCHK 0) */
	SCSI_XOP_COMPARE,	   /* data-out -> Compare (BYTCHK 1 and 3) */
	SCSI_XOP_COMPARE_AND_WRITE, /* data-out -> fused Compare + Write */
	SCSI_XOP_FLUSH,		   /* SYNCHRONIZE CACHE -> Flush */
	SCSI_XOP_WRITE_SAME,	   /* data-out (one block) -> Write Zeroes / DSM / Writes */
	SCSI_XOP_UNMAP,		   /* data-out -> Dataset Management (deallocate) */
	SCSI_XOP_GET_LBA_STATUS,   /* Get LBA Allocation Status -> LBA status descriptors */
	SCSI_XOP_PR_IN,		   /* Reservation Report -> PERSISTENT RESERVE IN data */
	SCSI_XOP_PR_OUT,	   /* data-out -> Reservation Register/Acquire/Release */
	SCSI_XOP_MODE_SELECT,	   /* data-out -> mode pages (no NVMe command) */
	SCSI_XOP_RESERVE6,	   /* SPC-2 RESERVE: engine calls the reservation module */
	SCSI_XOP_RELEASE6,	   /* SPC-2 RELEASE */
};

enum scsi_dir { SCSI_DIR_NONE, SCSI_DIR_IN, SCSI_DIR_OUT };

/* Which buffer an NVMe command's data lives in (see scsi_xlate_next). */
enum scsi_buf { SCSI_BUF_NONE, SCSI_BUF_DATA, SCSI_BUF_SCRATCH };

struct scsi_plan {
	enum scsi_xop op;
	enum scsi_dir dir;
	uint32_t xfer_len;	   /* bytes the CDB moves: TL * block size, list/alloc length */
	uint32_t in_len;	   /* DONE/finished: data-in bytes ready in the data buffer */
	uint8_t status;		   /* SCSI status once DONE (GOOD until an error) */
	struct scsi_sense sense;
	bool condition_met;	   /* PRE-FETCH: CONDITION MET instead of GOOD */

	/* Block commands */
	uint64_t lba;
	uint32_t nblocks;
	bool fua;
	uint8_t bytchk;
	bool unmap;		   /* WRITE SAME UNMAP bit */
	bool ndob;		   /* WRITE SAME(16) no data-out buffer: zeroes */
	bool zero_data;		   /* WRITE SAME data block is all zeroes */
	uint32_t alloc_len;

	/* Persistent reservations */
	uint8_t sa;
	uint8_t pr_type;
	bool aptpl;                /* PR OUT parameter list: activate persist through power loss */
	uint32_t ndsm;		   /* UNMAP: number of DSM ranges built */

	/* Progress through the NVMe commands (scsi_xlate_next) */
	uint32_t step;
	uint64_t next_lba;
	uint64_t left;		   /* blocks still to issue */
	uint32_t data_off;	   /* data buffer offset of the next command */
};

/*
 * Validate @cdb (@cdb_len bytes received; at least the command's own length) addressed to
 * @lu (NULL: no logical unit at that LUN) through @port, and plan it into @plan. Immediate
 * commands write their data-in into @buf (@buf_len bytes; at least 4096) and end as
 * SCSI_XOP_DONE, like every rejected command (status and sense set).
 */
void scsi_xlate_cdb(const struct scsi_port *port, const struct scsi_lu *lu, const uint8_t *cdb,
		    size_t cdb_len, struct scsi_plan *plan, uint8_t *buf, uint32_t buf_len);

/*
 * The data-out of @plan has arrived: @data holds @len bytes (<= plan->xfer_len). Checks
 * parameter lists and prepares what scsi_xlate_next() needs (NVMe payloads go to
 * @scratch, @scratch_len bytes, at least 4096). For MODE SELECT this applies the pages.
 * Returns true to continue with NVMe commands, false when the plan is DONE (error or
 * nothing to do).
 */
bool scsi_xlate_data_out(const struct scsi_lu *lu, struct scsi_plan *plan, uint8_t *data,
			 uint32_t len, uint8_t *scratch, uint32_t scratch_len);

/* NVMe side data reference of one command. */
struct scsi_nvme_io {
	enum scsi_buf buf;
	uint32_t off;		   /* offset in that buffer */
	uint32_t len;		   /* bytes */
	bool fused_next;	   /* submit the following command together (fused pair) */
};

/*
 * Fill @cmd with the next NVMe command of @plan and @io with its data. Returns true when a
 * command was produced, false when none is left. @buf_len is the data buffer size (WRITE
 * SAME and VERIFY BYTCHK=11b use the first block replicated across it: see
 * scsi_xlate_replicate()); NVMe payloads (DSM ranges, reservation keys, the Reservation
 * Report) live in @scratch.
 */
bool scsi_xlate_next(const struct scsi_lu *lu, struct scsi_plan *plan, uint32_t buf_len,
		     uint8_t *scratch, uint32_t scratch_len, struct nvme_cmd *cmd,
		     struct scsi_nvme_io *io);

/*
 * Fold the completion status (struct nvme_cpl status field value, host order) of the last
 * command into @plan. Returns true to go on with scsi_xlate_next(), false when the plan
 * ended in an error (status/sense set).
 */
bool scsi_xlate_nvme_done(struct scsi_plan *plan, uint16_t nvme_status);
/* The compare of a COMPARE AND WRITE failed @offset bytes into the data-out buffer (the
 * Compare's completion DW0): the MISCOMPARE sense reports it in INFORMATION. Call after
 * scsi_xlate_nvme_done(); nothing happens unless the plan ended in MISCOMPARE. */
void scsi_xlate_miscompare_at(struct scsi_plan *plan, uint32_t offset);

/*
 * All NVMe commands succeeded: build the SCSI data-in where it comes from NVMe data
 * (PERSISTENT RESERVE IN from a Reservation Report, GET LBA STATUS from Get LBA
 * Allocation Status descriptors, both in @scratch of @scratch_len bytes) into @buf and
 * set plan->in_len.
 */
void scsi_xlate_finish(const struct scsi_port *port, const struct scsi_lu *lu,
		       struct scsi_plan *plan, uint8_t *buf, uint32_t buf_len,
		       const uint8_t *scratch, uint32_t scratch_len);

/* Copy the first block of @buf over the rest of its @buf_len bytes (WRITE SAME pattern). */
void scsi_xlate_replicate(uint8_t *buf, uint32_t buf_len, uint32_t block_size);

/* NVMe status (SCT/SC as in nvme_cpl.status, host order) -> SCSI status and sense. */
void scsi_xlate_status(uint16_t nvme_status, uint8_t *status, struct scsi_sense *sense);

/* One run of blocks in the same provisioning state, for GET LBA STATUS. */
struct scsi_lba_extent {
	uint64_t lba;
	uint64_t nblocks;
	bool deallocated;
};
/* Build GET LBA STATUS parameter data from @n extents starting at plan->lba. */
void scsi_xlate_lba_status(struct scsi_plan *plan, const struct scsi_lba_extent *ext,
			   unsigned int n, uint8_t *buf, uint32_t buf_len);

/* Whether the command with @opcode may run while another I_T nexus holds a RESERVE(6)
 * reservation of the LU (INQUIRY, REPORT LUNS, REQUEST SENSE, RELEASE(6), MAINTENANCE IN);
 * from the command table. */
bool scsi_xlate_reserve6_exempt(uint8_t opcode);

/* Sense data in fixed (SPC-4 4.5.3) or descriptor (4.5.2) format; returns its length. */
uint32_t scsi_sense_build(const struct scsi_sense *s, bool descriptor, uint8_t *out);

/* Record a CHECK CONDITION outcome in @plan (helpers for the engine too). */
void scsi_plan_check_condition(struct scsi_plan *plan, uint8_t key, uint16_t asc);
void scsi_plan_invalid_field(struct scsi_plan *plan, bool in_cdb, uint16_t byte, int bit);

#endif
