/* SPDX-License-Identifier: MIT */
/*
 * NVMe commands as SCSI commands, and SCSI outcomes as NVMe status: the initiator side of
 * the NVM Express SCSI Translation Reference, as pure functions (no sockets, no state).
 *
 *   Read               READ(16)              FUA from the command
 *   Write              WRITE(16)             FUA from the command
 *   Flush              SYNCHRONIZE CACHE(10) the whole medium
 *   Compare            COMPARE AND WRITE     the compare buffer sent twice (compare data,
 *                                            then the same bytes as write data), in steps
 *                                            of at most the LU's COMPARE AND WRITE length
 *   Write Zeroes       WRITE SAME(16)        one zeroed block; UNMAP bit for DEAC when the
 *                                            LU supports WRITE SAME with UNMAP
 *   Dataset Mgmt (AD)  UNMAP                 the ranges as block descriptors, in steps
 *   Verify             VERIFY(16)            BYTCHK 0
 *
 * A command may need several SCSI commands ("steps"); the caller issues step 0, then
 * step 1 once step 0 succeeded, and so on until scsi_encap_cmd.last.
 */
#ifndef NVMEOF_INITIATOR_SCSI_ENCAP_H
#define NVMEOF_INITIATOR_SCSI_ENCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/nvme_spec.h"
#include "common/scsi_spec.h"

#define SCSI_UNMAP_HDR_LEN 8
#define SCSI_UNMAP_DESC_LEN 16
#define SCSI_ENCAP_UNMAP_DESCS 16 /* block descriptors per UNMAP we build at most */
#define SCSI_ENCAP_PARAM_LEN (SCSI_UNMAP_HDR_LEN + SCSI_ENCAP_UNMAP_DESCS * SCSI_UNMAP_DESC_LEN)

/* What the translation needs to know about the logical unit. */
struct scsi_lu_limits {
	uint32_t block_shift;	  /* log2 of the logical block length */
	uint32_t caw_max_blocks;  /* MAXIMUM COMPARE AND WRITE LENGTH; 0: no COMPARE AND WRITE */
	uint32_t ws_max_blocks;	  /* MAXIMUM WRITE SAME LENGTH; 0: no limit */
	uint32_t unmap_max_descs; /* UNMAP block descriptors per command; 0: no UNMAP */
	bool write_same;	  /* WRITE SAME(16) supported */
	bool ws_unmap;		  /* WRITE SAME(16) with the UNMAP bit (LBPWS) */
	bool verify;		  /* VERIFY(16) supported */
};

/* Where the data of one SCSI command comes from or goes to. */
enum scsi_encap_data {
	SCSI_DATA_NONE,
	SCSI_DATA_IN,		  /* into the NVMe command's buffers */
	SCSI_DATA_OUT,		  /* from the NVMe command's buffers */
	SCSI_DATA_OUT_TWICE,	  /* the NVMe command's buffers, sent twice in a row */
	SCSI_DATA_OUT_PARAM,	  /* the parameter list built in the caller's buffer */
	SCSI_DATA_OUT_ZERO_BLOCK, /* one logical block of zeroes */
};

struct scsi_encap_cmd {
	uint8_t cdb[SCSI_CDB_MAX];
	uint8_t cdb_len;
	enum scsi_encap_data data;
	uint32_t data_off;  /* IN/OUT/OUT_TWICE: start of this step's data in the buffers */
	uint32_t part_len;  /* OUT_TWICE: length of one copy */
	uint32_t xfer_len;  /* Expected Data Transfer Length */
	bool last;	    /* no step follows this one */
};

/* scsi_encap_build() result besides 0 and an NVMe status. */
#define SCSI_ENCAP_DONE 0x10000 /* nothing to send: the command succeeds as is */

/*
 * Step @step of the translation of @sqe (wire byte order), whose data (@data_len bytes,
 * for Dataset Management the range list) is described by @iov. @param (room for
 * SCSI_ENCAP_PARAM_LEN bytes) receives an UNMAP parameter list. Returns 0 with @out
 * filled, SCSI_ENCAP_DONE, or an NVMe status (NVMEOF_STATUS(sct, sc)) for a command that
 * has no SCSI equivalent or is malformed.
 */
int scsi_encap_build(const struct nvme_cmd *sqe, const struct scsi_lu_limits *lu, uint32_t step,
		     const struct iovec *iov, int iovcnt, uint32_t data_len, uint8_t *param,
		     struct scsi_encap_cmd *out);

/* Sense data (fixed or descriptor format) into key and ASC/ASCQ. false: unusable. */
bool scsi_sense_parse(const uint8_t *sense, size_t len, uint8_t *key, uint16_t *asc_ascq);

/*
 * The NVMe status (NVMEOF_STATUS(sct, sc), 0 for success) for a SCSI status and sense
 * data returned to the NVMe command @opc; *@dnr tells whether a retry could help.
 */
uint16_t scsi_status_to_nvme(uint8_t opc, uint8_t status, const uint8_t *sense, size_t sense_len,
			     bool *dnr);

/* A UNIT ATTENTION (the command was not executed; sending it again is safe). */
bool scsi_is_unit_attention(uint8_t status, const uint8_t *sense, size_t sense_len);

#endif
