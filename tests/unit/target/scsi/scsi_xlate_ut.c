// SPDX-License-Identifier: MIT
/* Unit tests for target/scsi/ (scsi_xlate.c, sbc.c, spc.c, spc_pr.c): the command table,
 * CDB -> plan/NVMe commands, NVMe status -> SCSI sense, immediate SPC data. Table driven. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "common/endian.h"
#include "core/lba_status.h"
#include "scsi/scsi_internal.h"
#include "scsi/scsi_xlate.h"
#include "ut.h"

/* Table rows leave the trailing expectation fields they do not check at zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define NBLOCKS 2048u
#define BS 512u

static struct scsi_lu_mode g_mode;
static struct scsi_lu g_lu;
static const uint64_t g_luns[] = { 0, 1, 300 };
static struct scsi_port g_port = { "iqn.2026-11.io.nvmeof:default", 1, 1, g_luns, 3 };
static uint8_t g_buf[65536], g_scratch[65536];

static void lu_reset(void)
{
	memset(&g_lu, 0, sizeof(g_lu));
	memset(&g_mode, 0, sizeof(g_mode));
	g_lu.lun = 0;
	g_lu.nsid = 1;
	g_lu.nblocks = NBLOCKS;
	g_lu.block_size = BS;
	g_lu.max_xfer_blocks = 256;
	g_lu.max_unmap_blocks = 0xffffffff;
	g_lu.max_unmap_descs = 256;
	g_lu.max_ws_blocks = 0xffffffff;
	g_lu.thin = true;
	g_lu.write_cache = true;
	g_lu.reservations = true;
	g_lu.compare_write = true;
	g_lu.verify_cmd = true;
	g_lu.write_zeroes = true;
	g_lu.lba_status = true;
	for (int i = 0; i < 16; i++)
		g_lu.nguid[i] = (uint8_t)(0x10 + i);
	strcpy(g_lu.serial, "0123456789abcdef    ");
	strcpy(g_lu.model, "nvmeof RAM");
	strcpy(g_lu.firmware, "0.1.0");
	g_lu.mode = &g_mode;
}

static void xlate(const uint8_t *cdb, struct scsi_plan *p)
{
	uint8_t c[16] = { 0 };

	memcpy(c, cdb, 16);
	scsi_xlate_cdb(&g_port, &g_lu, c, 16, p, g_buf, sizeof(g_buf));
}

/* ---- CDB table ------------------------------------------------------------------------- */

#define CC SCSI_STATUS_CHECK_CONDITION
#define IR SCSI_SK_ILLEGAL_REQUEST
#define IFC SCSI_ASC_INVALID_FIELD_IN_CDB
#define OOB SCSI_ASC_LBA_OUT_OF_RANGE
#define NOSKS 0xffff

struct cdb_case {
	const char *name;
	uint8_t cdb[16];
	enum scsi_xop op;
	uint8_t status, key;
	uint16_t asc;
	uint16_t sks_byte; /* expected field pointer, NOSKS if none checked */
	uint64_t lba;
	uint32_t nblocks;
	bool fua;
	enum scsi_dir dir;
	uint32_t xfer_len;
};

static const struct cdb_case cdb_cases[] = {
	/* TEST UNIT READY / NACA / unknown opcode */
	{ "tur", { 0x00 }, SCSI_XOP_DONE, 0, 0, 0, NOSKS },
	{ "tur naca", { 0x00, 0, 0, 0, 0, 0x04 }, SCSI_XOP_DONE, CC, IR, IFC, 5 },
	{ "tur reserved byte1", { 0x00, 0x01 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "unknown opcode", { 0xc0 }, SCSI_XOP_DONE, CC, IR, SCSI_ASC_INVALID_OPCODE, NOSKS },
	{ "format unit unsupported", { 0x04 }, SCSI_XOP_DONE, CC, IR, SCSI_ASC_INVALID_OPCODE,
	  NOSKS },
	{ "sai unknown sa", { 0x9e, 0x11 }, SCSI_XOP_DONE, CC, IR, SCSI_ASC_INVALID_OPCODE, NOSKS },
	/* READ */
	{ "read6", { 0x08, 0x00, 0x00, 0x10, 0x08 }, SCSI_XOP_READ, 0, 0, 0, NOSKS, 0x10, 8, false,
	  SCSI_DIR_IN, 8 * BS },
	{ "read6 tl0=256", { 0x08, 0, 0, 0, 0 }, SCSI_XOP_READ, 0, 0, 0, NOSKS, 0, 256, false,
	  SCSI_DIR_IN, 256 * BS },
	{ "read10", { 0x28, 0x00, 0, 0, 0x01, 0x00, 0, 0, 0x20 }, SCSI_XOP_READ, 0, 0, 0, NOSKS,
	  0x100, 0x20, false, SCSI_DIR_IN, 0x20 * BS },
	{ "read10 fua dpo", { 0x28, 0x18, 0, 0, 0, 1, 0, 0, 1 }, SCSI_XOP_READ, 0, 0, 0, NOSKS, 1,
	  1, true, SCSI_DIR_IN, BS },
	{ "read10 0 blocks", { 0x28, 0, 0, 0, 0, 0, 0, 0, 0 }, SCSI_XOP_DONE, 0, 0, 0, NOSKS },
	{ "read10 0 blocks at end", { 0x28, 0, 0, 0, 0x08, 0x00, 0, 0, 0 }, SCSI_XOP_DONE, 0, 0,
	  0, NOSKS },
	{ "read10 0 blocks past end", { 0x28, 0, 0, 0, 0x08, 0x01, 0, 0, 0 }, SCSI_XOP_DONE, CC,
	  IR, OOB, NOSKS },
	{ "read10 rdprotect", { 0x28, 0x20, 0, 0, 0, 0, 0, 0, 1 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "read10 last block", { 0x28, 0, 0, 0, 0x07, 0xff, 0, 0, 1 }, SCSI_XOP_READ, 0, 0, 0,
	  NOSKS, NBLOCKS - 1, 1, false, SCSI_DIR_IN, BS },
	{ "read10 beyond eol", { 0x28, 0, 0, 0, 0x07, 0xff, 0, 0, 2 }, SCSI_XOP_DONE, CC, IR, OOB,
	  NOSKS },
	{ "read10 lba -1", { 0x28, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 1 }, SCSI_XOP_DONE, CC, IR,
	  OOB, NOSKS },
	{ "read10 too long", { 0x28, 0, 0, 0, 0, 0, 0, 0x01, 0x01 }, SCSI_XOP_DONE, CC, IR, IFC,
	  7 },
	{ "read10 group ok", { 0x28, 0, 0, 0, 0, 0, 0x1f, 0, 1 }, SCSI_XOP_READ, 0, 0, 0, NOSKS,
	  0, 1, false, SCSI_DIR_IN, BS },
	{ "read10 reserved byte6", { 0x28, 0, 0, 0, 0, 0, 0x20, 0, 1 }, SCSI_XOP_DONE, CC, IR, IFC,
	  6 },
	{ "read12", { 0xa8, 0, 0, 0, 0, 2, 0, 0, 0, 4 }, SCSI_XOP_READ, 0, 0, 0, NOSKS, 2, 4, false,
	  SCSI_DIR_IN, 4 * BS },
	{ "read16", { 0x88, 0x08, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 3 }, SCSI_XOP_READ, 0, 0, 0,
	  NOSKS, 9, 3, true, SCSI_DIR_IN, 3 * BS },
	{ "read16 lba overflow", { 0x88, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,
	  2 }, SCSI_XOP_DONE, CC, IR, OOB, NOSKS },
	/* WRITE */
	{ "write6", { 0x0a, 0x00, 0x01, 0x00, 0x01 }, SCSI_XOP_WRITE, 0, 0, 0, NOSKS, 0x100, 1,
	  false, SCSI_DIR_OUT, BS },
	{ "write6 lba bits 20:16", { 0x0a, 0x01, 0x00, 0x00, 0x01 }, SCSI_XOP_DONE, CC, IR, OOB,
	  NOSKS },
	{ "write10 fua", { 0x2a, 0x08, 0, 0, 0, 5, 0, 0, 2 }, SCSI_XOP_WRITE, 0, 0, 0, NOSKS, 5, 2,
	  true, SCSI_DIR_OUT, 2 * BS },
	{ "write10 wrprotect", { 0x2a, 0xe0, 0, 0, 0, 5, 0, 0, 2 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "write10 obsolete bit", { 0x2a, 0x04, 0, 0, 0, 5, 0, 0, 2 }, SCSI_XOP_DONE, CC, IR, IFC,
	  1 },
	{ "write12", { 0xaa, 0, 0, 0, 0, 7, 0, 0, 0, 1 }, SCSI_XOP_WRITE, 0, 0, 0, NOSKS, 7, 1,
	  false, SCSI_DIR_OUT, BS },
	{ "write16 beyond", { 0x8a, 0, 0, 0, 0, 0, 0, 0, 0x08, 0, 0, 0, 0, 1 }, SCSI_XOP_DONE, CC,
	  IR, OOB, NOSKS },
	/* VERIFY / WRITE AND VERIFY */
	{ "verify10 bytchk0", { 0x2f, 0, 0, 0, 0, 1, 0, 0, 8 }, SCSI_XOP_VERIFY, 0, 0, 0, NOSKS, 1,
	  8, false, SCSI_DIR_NONE, 0 },
	{ "verify10 bytchk1", { 0x2f, 0x02, 0, 0, 0, 1, 0, 0, 8 }, SCSI_XOP_COMPARE, 0, 0, 0,
	  NOSKS, 1, 8, false, SCSI_DIR_OUT, 8 * BS },
	{ "verify10 bytchk2", { 0x2f, 0x04, 0, 0, 0, 1, 0, 0, 8 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "verify10 bytchk3", { 0x2f, 0x06, 0, 0, 0, 1, 0, 0, 8 }, SCSI_XOP_COMPARE, 0, 0, 0,
	  NOSKS, 1, 8, false, SCSI_DIR_OUT, BS },
	{ "verify12 vrprotect", { 0xaf, 0x20, 0, 0, 0, 1, 0, 0, 0, 1 }, SCSI_XOP_DONE, CC, IR, IFC,
	  1 },
	{ "verify16 no data any length", { 0x8f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0 },
	  SCSI_XOP_VERIFY, 0, 0, 0, NOSKS, 0, 2048, false, SCSI_DIR_NONE, 0 },
	{ "verify16 beyond", { 0x8f, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x08, 0 }, SCSI_XOP_DONE, CC,
	  IR, OOB, NOSKS },
	{ "write verify10", { 0x2e, 0, 0, 0, 0, 3, 0, 0, 2 }, SCSI_XOP_WRITE_VERIFY, 0, 0, 0, NOSKS,
	  3, 2, true, SCSI_DIR_OUT, 2 * BS },
	{ "write verify10 bytchk3", { 0x2e, 0x06, 0, 0, 0, 3, 0, 0, 2 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 1 },
	/* COMPARE AND WRITE */
	{ "caw", { 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 2 }, SCSI_XOP_COMPARE_AND_WRITE, 0, 0,
	  0, NOSKS, 4, 2, false, SCSI_DIR_OUT, 4 * BS },
	{ "caw too many", { 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 200 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 13 },
	{ "caw reserved", { 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 2 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 11 },
	{ "caw 0 blocks", { 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0 }, SCSI_XOP_DONE, 0, 0, 0,
	  NOSKS },
	/* SYNCHRONIZE CACHE / PRE-FETCH */
	{ "sync cache10", { 0x35, 0x02, 0, 0, 0, 0, 0, 0, 0 }, SCSI_XOP_FLUSH, 0, 0, 0, NOSKS },
	{ "sync cache16 beyond", { 0x91, 0, 0, 0, 0, 0, 0, 0, 0x09, 0, 0, 0, 0, 1 }, SCSI_XOP_DONE,
	  CC, IR, OOB, NOSKS },
	{ "prefetch10", { 0x34, 0x02, 0, 0, 0, 0, 0, 0, 8 }, SCSI_XOP_DONE, 0, 0, 0, NOSKS },
	{ "prefetch16 beyond", { 0x90, 0, 0, 0, 0, 0, 0, 0, 0x07, 0xff, 0, 0, 0, 2 },
	  SCSI_XOP_DONE, CC, IR, OOB, NOSKS },
	/* WRITE SAME / UNMAP */
	{ "ws10", { 0x41, 0, 0, 0, 0, 8, 0, 0, 16 }, SCSI_XOP_WRITE_SAME, 0, 0, 0, NOSKS, 8, 16,
	  false, SCSI_DIR_OUT, BS },
	{ "ws10 0 blocks: to the end", { 0x41, 0, 0, 0, 0x07, 0xf8, 0, 0, 0 }, SCSI_XOP_WRITE_SAME, 0,
	  0, 0, NOSKS, NBLOCKS - 8, 8, false, SCSI_DIR_OUT, BS },
	{ "ws10 0 blocks at end", { 0x41, 0, 0, 0, 0x08, 0x00, 0, 0, 0 }, SCSI_XOP_DONE, 0, 0, 0,
	  NOSKS },
	{ "ws10 0 blocks past end", { 0x41, 0, 0, 0, 0x08, 0x01, 0, 0, 0 }, SCSI_XOP_DONE, CC, IR,
	  OOB, NOSKS },
	{ "ws10 anchor", { 0x41, 0x10, 0, 0, 0, 8, 0, 0, 1 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "ws10 lbdata", { 0x41, 0x02, 0, 0, 0, 8, 0, 0, 1 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "ws16 ndob unmap", { 0x93, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4 },
	  SCSI_XOP_WRITE_SAME, 0, 0, 0, NOSKS, 0, 4, false, SCSI_DIR_NONE, 0 },
	{ "ws16 beyond", { 0x93, 0, 0, 0, 0, 0, 0, 0, 0x08, 0, 0, 0, 0, 1 }, SCSI_XOP_DONE, CC, IR,
	  OOB, NOSKS },
	{ "unmap", { 0x42, 0, 0, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_UNMAP, 0, 0, 0, NOSKS, 0, 0, false,
	  SCSI_DIR_OUT, 24 },
	{ "unmap 0 length", { 0x42, 0, 0, 0, 0, 0, 0, 0, 0 }, SCSI_XOP_DONE, 0, 0, 0, NOSKS },
	{ "unmap short list", { 0x42, 0, 0, 0, 0, 0, 0, 0, 4 }, SCSI_XOP_DONE, CC, IR,
	  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR, NOSKS },
	{ "unmap anchor", { 0x42, 0x01, 0, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "unmap reserved", { 0x42, 0, 1, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_DONE, CC, IR, IFC, 2 },
	/* START STOP UNIT */
	{ "start", { 0x1b, 0, 0, 0, 0x01 }, SCSI_XOP_DONE, 0, 0, 0, NOSKS },
	{ "eject refused", { 0x1b, 0, 0, 0, 0x02 }, SCSI_XOP_DONE, CC, IR, IFC, 4 },
	{ "power condition idle", { 0x1b, 0, 0, 0, 0x20 }, SCSI_XOP_DONE, 0, 0, 0, NOSKS },
	{ "power condition bad", { 0x1b, 0, 0, 0, 0x40 }, SCSI_XOP_DONE, CC, IR, IFC, 4 },
	/* PERSISTENT RESERVE */
	{ "prin read keys", { 0x5e, 0x00, 0, 0, 0, 0, 0, 0x01, 0x00 }, SCSI_XOP_PR_IN, 0, 0, 0,
	  NOSKS, 0, 0, false, SCSI_DIR_IN, 0 },
	{ "prin full status", { 0x5e, 0x03, 0, 0, 0, 0, 0, 0x01, 0x00 }, SCSI_XOP_PR_IN, 0, 0, 0,
	  NOSKS, 0, 0, false, SCSI_DIR_IN, 0 },
	{ "prin bad sa", { 0x5e, 0x08, 0, 0, 0, 0, 0, 0x01, 0x00 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "prout register", { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_PR_OUT, 0, 0, 0, NOSKS,
	  0, 0, false, SCSI_DIR_OUT, 24 },
	{ "prout bad length", { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 20 }, SCSI_XOP_DONE, CC, IR,
	  SCSI_ASC_PARAMETER_LIST_LENGTH_ERROR, NOSKS },
	{ "prout reserve bad type", { 0x5f, 0x01, 0x02, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 2 },
	{ "prout reserve bad scope", { 0x5f, 0x01, 0x11, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_DONE, CC,
	  IR, IFC, 2 },
	{ "prout register and move", { 0x5f, 0x07, 0, 0, 0, 0, 0, 0, 24 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 1 },
	{ "reserve6", { 0x16 }, SCSI_XOP_RESERVE6, 0, 0, 0, NOSKS },
	{ "release6", { 0x17 }, SCSI_XOP_RELEASE6, 0, 0, 0, NOSKS },
	/* immediate SPC commands: status only here, data checked below */
	{ "inquiry evpd0 page", { 0x12, 0, 0x80, 0, 0xff }, SCSI_XOP_DONE, CC, IR, IFC, 2 },
	{ "inquiry cmddt", { 0x12, 0x02, 0, 0, 0xff }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "inquiry bad vpd", { 0x12, 0x01, 0x99, 0, 0xff }, SCSI_XOP_DONE, CC, IR, IFC, 2 },
	{ "mode sense saved", { 0x1a, 0, 0xca, 0, 0xff }, SCSI_XOP_DONE, CC, IR,
	  SCSI_ASC_SAVING_PARAMS_NOT_SUPPORTED, NOSKS },
	{ "mode sense bad page", { 0x1a, 0, 0x05, 0, 0xff }, SCSI_XOP_DONE, CC, IR, IFC, 2 },
	{ "mode sense bad subpage", { 0x1a, 0, 0x0a, 0x01, 0xff }, SCSI_XOP_DONE, CC, IR, IFC, 3 },
	{ "mode select sp", { 0x15, 0x11, 0, 0, 16 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "mode select no pf", { 0x15, 0x00, 0, 0, 16 }, SCSI_XOP_DONE, CC, IR, IFC, 1 },
	{ "mode select", { 0x15, 0x10, 0, 0, 16 }, SCSI_XOP_MODE_SELECT, 0, 0, 0, NOSKS, 0, 0,
	  false, SCSI_DIR_OUT, 16 },
	{ "report luns short alloc", { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 8 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 6 },
	{ "report luns bad select", { 0xa0, 0, 0x10, 0, 0, 0, 0, 0, 1, 0 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 2 },
	{ "rsoc bad option", { 0xa3, 0x0c, 0x05, 0, 0, 0, 0, 0, 1, 0 }, SCSI_XOP_DONE, CC, IR, IFC,
	  2 },
	{ "rsoc option1 with sa", { 0xa3, 0x0c, 0x01, 0x9e, 0, 0, 0, 0, 1, 0 }, SCSI_XOP_DONE, CC,
	  IR, IFC, 3 },
	{ "get lba status", { 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 32 },
	  SCSI_XOP_GET_LBA_STATUS, 0, 0, 0, NOSKS, 5, 0, false, SCSI_DIR_IN, 0 },
	{ "get lba status beyond", { 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0x08, 0, 0, 0, 0, 32 },
	  SCSI_XOP_DONE, CC, IR, OOB, NOSKS },
	{ "read capacity10 lba w/o pmi", { 0x25, 0, 0, 0, 0, 1, 0, 0, 0 }, SCSI_XOP_DONE, CC, IR,
	  IFC, 2 },
};

static void test_cdb_table(void)
{
	for (size_t i = 0; i < sizeof(cdb_cases) / sizeof(cdb_cases[0]); i++) {
		const struct cdb_case *t = &cdb_cases[i];
		struct scsi_plan p;
		bool ok = true;

		lu_reset();
		xlate(t->cdb, &p);
		ok &= p.op == t->op && p.status == t->status;
		if (t->status == CC)
			ok &= p.sense.key == t->key && p.sense.asc == t->asc;
		if (t->sks_byte != NOSKS)
			ok &= p.sense.sks_valid && get_be16(&p.sense.sks[1]) == t->sks_byte &&
			      (p.sense.sks[0] & SCSI_SENSE_SKS_CD);
		if (t->op != SCSI_XOP_DONE && t->nblocks)
			ok &= p.lba == t->lba && p.nblocks == t->nblocks && p.fua == t->fua;
		if (t->op != SCSI_XOP_DONE && t->dir != SCSI_DIR_IN)
			ok &= p.dir == t->dir && p.xfer_len == t->xfer_len;
		if (!ok)
			fprintf(stderr, "case '%s': op %d status %#x key %#x asc %#x sks %d/%u lba %llu"
				" n %u fua %d dir %d xfer %u\n", t->name, p.op, p.status,
				p.sense.key, p.sense.asc, p.sense.sks_valid,
				get_be16(&p.sense.sks[1]), (unsigned long long)p.lba, p.nblocks,
				p.fua, p.dir, p.xfer_len);
		CU_ASSERT_TRUE(ok);
	}
}

static void test_write_protect(void)
{
	static const uint8_t writes[][16] = {
		{ 0x2a, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0x0a, 0, 0, 0, 1 },
		{ 0x8e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0x41, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0x42, 0, 0, 0, 0, 0, 0, 0, 24 },
	};
	struct scsi_plan p;

	lu_reset();
	g_mode.swp = true;
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		xlate(writes[i], &p);
		CU_ASSERT_EQUAL(p.status, CC);
		CU_ASSERT_EQUAL(p.sense.key, SCSI_SK_DATA_PROTECT);
		CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_WRITE_PROTECTED);
	}
	/* reads still work */
	xlate((const uint8_t[16]){ 0x28, 0, 0, 0, 0, 0, 0, 0, 1 }, &p);
	CU_ASSERT_EQUAL(p.op, SCSI_XOP_READ);
}

static void test_no_lu(void)
{
	uint8_t cdb[16] = { 0x12, 0, 0, 0, 96 };
	struct scsi_plan p;

	lu_reset();
	scsi_xlate_cdb(&g_port, NULL, cdb, 16, &p, g_buf, sizeof(g_buf));
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	CU_ASSERT_EQUAL(g_buf[0], SCSI_PERIPH_NO_LU);
	cdb[0] = 0x00;
	cdb[4] = 0;
	scsi_xlate_cdb(&g_port, NULL, cdb, 16, &p, g_buf, sizeof(g_buf));
	CU_ASSERT_EQUAL(p.status, CC);
	CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_LUN_NOT_SUPPORTED);
	memset(cdb, 0, 16);
	cdb[0] = 0xa0;
	cdb[9] = 64;
	scsi_xlate_cdb(&g_port, NULL, cdb, 16, &p, g_buf, sizeof(g_buf));
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	CU_ASSERT_EQUAL(get_be32(g_buf), 24);
	/* a CDB shorter than its opcode group needs */
	cdb[0] = 0x28;
	scsi_xlate_cdb(&g_port, &g_lu, cdb, 6, &p, g_buf, sizeof(g_buf));
	CU_ASSERT_EQUAL(p.status, CC);
	CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
}

/* ---- NVMe status -> SCSI table ------------------------------------------------------------ */

static void test_status_table(void)
{
	static const struct {
		uint8_t sct, sc, status, key;
		uint16_t asc;
	} t[] = {
		{ 0, NVME_SC_SUCCESS, SCSI_STATUS_GOOD, 0, 0 },
		{ 0, NVME_SC_INVALID_OPCODE, CC, IR, SCSI_ASC_INVALID_OPCODE },
		{ 0, NVME_SC_INVALID_FIELD, CC, IR, IFC },
		{ 0, NVME_SC_DATA_TRANSFER_ERROR, CC, SCSI_SK_MEDIUM_ERROR, 0 },
		{ 0, NVME_SC_ABORTED_POWER_LOSS, SCSI_STATUS_TASK_ABORTED, SCSI_SK_ABORTED_COMMAND,
		  SCSI_ASC_WARNING_POWER_LOSS },
		{ 0, NVME_SC_INTERNAL, CC, SCSI_SK_HARDWARE_ERROR, SCSI_ASC_INTERNAL_TARGET_FAILURE },
		{ 0, NVME_SC_ABORT_REQUESTED, SCSI_STATUS_TASK_ABORTED, SCSI_SK_ABORTED_COMMAND, 0 },
		{ 0, NVME_SC_ABORTED_FAILED_FUSED, SCSI_STATUS_TASK_ABORTED,
		  SCSI_SK_ABORTED_COMMAND, 0 },
		{ 0, NVME_SC_INVALID_NS_OR_FORMAT, CC, IR, SCSI_ASC_ACCESS_DENIED_INVALID_LU },
		{ 0, NVME_SC_LBA_OUT_OF_RANGE, CC, IR, OOB },
		{ 0, NVME_SC_CAPACITY_EXCEEDED, CC, SCSI_SK_MEDIUM_ERROR, 0 },
		{ 0, NVME_SC_NS_NOT_READY, CC, SCSI_SK_NOT_READY, SCSI_ASC_LUN_NOT_READY },
		{ 0, NVME_SC_RESERVATION_CONFLICT, SCSI_STATUS_RESERVATION_CONFLICT, 0, 0 },
		{ 0, NVME_SC_NS_WRITE_PROTECTED, CC, SCSI_SK_DATA_PROTECT, SCSI_ASC_WRITE_PROTECTED },
		{ 1, NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE, CC, SCSI_SK_DATA_PROTECT,
		  SCSI_ASC_WRITE_PROTECTED },
		{ 1, NVME_SC_CONFLICTING_ATTRIBUTES, CC, IR, IFC },
		{ 2, NVME_SC_WRITE_FAULT, CC, SCSI_SK_MEDIUM_ERROR, SCSI_ASC_WRITE_FAULT },
		{ 2, NVME_SC_UNRECOVERED_READ_ERROR, CC, SCSI_SK_MEDIUM_ERROR,
		  SCSI_ASC_UNRECOVERED_READ_ERROR },
		{ 2, NVME_SC_GUARD_CHECK_ERROR, CC, SCSI_SK_ABORTED_COMMAND,
		  SCSI_ASC_GUARD_CHECK_FAILED },
		{ 2, NVME_SC_COMPARE_FAILURE, CC, SCSI_SK_MISCOMPARE,
		  SCSI_ASC_MISCOMPARE_DURING_VERIFY },
		{ 2, NVME_SC_ACCESS_DENIED, CC, IR, SCSI_ASC_ACCESS_DENIED_NO_ACCESS_RIGHTS },
		{ 3, 0x00, CC, SCSI_SK_ABORTED_COMMAND, 0 },
		{ 7, 0x42, CC, SCSI_SK_HARDWARE_ERROR, SCSI_ASC_INTERNAL_TARGET_FAILURE },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct scsi_sense s;
		uint8_t status;

		scsi_xlate_status(NVME_STATUS(t[i].sct, t[i].sc) | NVME_STATUS_DNR, &status, &s);
		CU_ASSERT_EQUAL(status, t[i].status);
		CU_ASSERT_EQUAL(s.key, t[i].key);
		CU_ASSERT_EQUAL(s.asc, t[i].asc);
		if (status != t[i].status || s.key != t[i].key || s.asc != t[i].asc)
			fprintf(stderr, "status case %zu: %#x %#x %#x\n", i, status, s.key, s.asc);
	}
}

static void test_sense_build(void)
{
	struct scsi_sense s = { .key = IR, .asc = IFC, .sks_valid = true,
				.sks = { 0xc8 | 7, 0x00, 0x07 } };
	uint8_t b[SCSI_SENSE_MAX];

	CU_ASSERT_EQUAL(scsi_sense_build(&s, false, b), 18);
	CU_ASSERT_EQUAL(b[0], 0x70);
	CU_ASSERT_EQUAL(b[2], IR);
	CU_ASSERT_EQUAL(b[7], 10);
	CU_ASSERT_EQUAL(b[12], 0x24);
	CU_ASSERT_EQUAL(b[13], 0x00);
	CU_ASSERT_EQUAL(b[15], 0xcf);
	CU_ASSERT_EQUAL(b[17], 0x07);
	CU_ASSERT_EQUAL(scsi_sense_build(&s, true, b), 16);
	CU_ASSERT_EQUAL(b[0], 0x72);
	CU_ASSERT_EQUAL(b[1], IR);
	CU_ASSERT_EQUAL(b[2], 0x24);
	CU_ASSERT_EQUAL(b[7], 8);
	CU_ASSERT_EQUAL(b[8], 0x02);
	CU_ASSERT_EQUAL(b[12], 0xcf);
	s.sks_valid = false;
	s.info_valid = true;
	s.info = 0x1234;
	CU_ASSERT_EQUAL(scsi_sense_build(&s, false, b), 18);
	CU_ASSERT_EQUAL(b[0], 0xf0);
	CU_ASSERT_EQUAL(get_be32(&b[3]), 0x1234);
}

/* ---- NVMe command sequences --------------------------------------------------------------- */

static uint32_t le32(const uint32_t *p)
{
	return get_le32(p);
}

static void test_read_write_cmds(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;

	lu_reset();
	xlate((const uint8_t[16]){ 0x88, 0x08, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0x10 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_READ);
	CU_ASSERT_EQUAL(le32(&cmd.nsid), 1);
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 0x102);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 15 | NVME_RW_FUA);
	CU_ASSERT_EQUAL(get_le32(cmd.dptr.sgl1.length), 16 * BS);
	CU_ASSERT_EQUAL(io.buf, SCSI_BUF_DATA);
	CU_ASSERT_EQUAL(io.len, 16 * BS);
	CU_ASSERT_TRUE(scsi_xlate_nvme_done(&p, 0));
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(p.in_len, 16 * BS);

	xlate((const uint8_t[16]){ 0x2a, 0, 0, 0, 0, 7, 0, 0, 2 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, g_buf, 2 * BS, g_scratch, 4096));
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 7);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 1);
	/* an error ends the plan with sense */
	CU_ASSERT_FALSE(scsi_xlate_nvme_done(&p, NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT)));
	CU_ASSERT_EQUAL(p.op, SCSI_XOP_DONE);
	CU_ASSERT_EQUAL(p.sense.key, SCSI_SK_MEDIUM_ERROR);
}

static void test_verify_and_write_verify_cmds(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;

	lu_reset();
	/* VERIFY(16) of 2048 blocks without data: one Verify chunk */
	xlate((const uint8_t[16]){ 0x8f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_VERIFY);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 2047);
	CU_ASSERT_EQUAL(io.buf, SCSI_BUF_NONE);
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));

	/* VERIFY BYTCHK=1: Compare miscompare -> MISCOMPARE */
	xlate((const uint8_t[16]){ 0x2f, 0x02, 0, 0, 0, 1, 0, 0, 2 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_COMPARE);
	CU_ASSERT_FALSE(scsi_xlate_nvme_done(&p, NVME_STATUS(NVME_SCT_MEDIA,
							    NVME_SC_COMPARE_FAILURE)));
	CU_ASSERT_EQUAL(p.sense.key, SCSI_SK_MISCOMPARE);

	/* WRITE AND VERIFY: Write FUA, then Verify */
	xlate((const uint8_t[16]){ 0x2e, 0, 0, 0, 0, 3, 0, 0, 2 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 1 | NVME_RW_FUA);
	CU_ASSERT_TRUE(scsi_xlate_nvme_done(&p, 0));
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_VERIFY);
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 3);
	CU_ASSERT_TRUE(scsi_xlate_nvme_done(&p, 0));
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));

	/* BYTCHK=11b: one block against each chunk of the buffer */
	xlate((const uint8_t[16]){ 0x2f, 0x06, 0, 0, 0, 0, 0, 0, 200 }, &p);
	CU_ASSERT_EQUAL(p.xfer_len, BS);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 63);
	CU_ASSERT_EQUAL(io.off, 0);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 64);
	CU_ASSERT_EQUAL(io.off, 0);
}

static void test_compare_and_write_cmds(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;

	lu_reset();
	xlate((const uint8_t[16]){ 0x89, 0x08, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, g_buf, 4 * BS, g_scratch, 4096));
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(cmd.flags & NVME_CMD_FUSE_MASK, NVME_CMD_FUSE_FIRST);
	CU_ASSERT_TRUE(io.fused_next);
	CU_ASSERT_EQUAL(io.off, 0);
	CU_ASSERT_EQUAL(io.len, 2 * BS);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(cmd.flags & NVME_CMD_FUSE_MASK, NVME_CMD_FUSE_SECOND);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 1 | NVME_RW_FUA);
	CU_ASSERT_EQUAL(io.off, 2 * BS);
	CU_ASSERT_FALSE(io.fused_next);
	/* miscompare on the Compare; the aborted Write then keeps the MISCOMPARE outcome */
	CU_ASSERT_FALSE(scsi_xlate_nvme_done(&p, NVME_STATUS(NVME_SCT_MEDIA,
							    NVME_SC_COMPARE_FAILURE)));
	scsi_xlate_miscompare_at(&p, 700); /* the first differing byte, from the Compare */
	CU_ASSERT_FALSE(scsi_xlate_nvme_done(&p, NVME_STATUS(NVME_SCT_GENERIC,
							    NVME_SC_ABORTED_FAILED_FUSED)));
	CU_ASSERT_EQUAL(p.sense.key, SCSI_SK_MISCOMPARE);
	CU_ASSERT_TRUE(p.sense.info_valid);
	CU_ASSERT_EQUAL(p.sense.info, 700);
	/* MAXIMUM COMPARE AND WRITE LENGTH follows the namespace's atomic unit (NACWU) */
	lu_reset();
	g_lu.max_caw_blocks = 1;
	CU_ASSERT_EQUAL(sbc_max_caw_blocks(&g_lu), 1);
	xlate((const uint8_t[16]){ 0x89, 0x08, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2 }, &p);
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_CHECK_CONDITION);
	CU_ASSERT_EQUAL(p.sense.key, SCSI_SK_ILLEGAL_REQUEST);
	/* a success or another error carries no INFORMATION */
	lu_reset();
	xlate((const uint8_t[16]){ 0x89, 0x08, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1 }, &p);
	CU_ASSERT_FALSE(scsi_xlate_nvme_done(&p, NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT)));
	scsi_xlate_miscompare_at(&p, 5);
	CU_ASSERT_FALSE(p.sense.info_valid);
}

static void test_write_same_cmds(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;

	lu_reset();
	/* non-zero pattern: replicated Writes of buffer-sized chunks */
	xlate((const uint8_t[16]){ 0x41, 0, 0, 0, 0, 0, 0, 0, 100 }, &p);
	memset(g_buf, 0xa5, BS);
	CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, g_buf, BS, g_scratch, 4096));
	CU_ASSERT_FALSE(p.zero_data);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 63);
	CU_ASSERT_EQUAL(io.off, 0);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 64);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 35);
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	scsi_xlate_replicate(g_buf, 4 * BS, BS);
	CU_ASSERT_EQUAL(g_buf[3 * BS + 7], 0xa5);

	/* zero data, no UNMAP: Write Zeroes */
	xlate((const uint8_t[16]){ 0x41, 0, 0, 0, 0, 0, 0, 0, 100 }, &p);
	memset(g_buf, 0, BS);
	CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, g_buf, BS, g_scratch, 4096));
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE_ZEROES);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 99);

	/* zero data with UNMAP: Dataset Management deallocate */
	xlate((const uint8_t[16]){ 0x93, 0x08, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 100 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, g_buf, BS, g_scratch, 4096));
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_DATASET_MANAGEMENT);
	CU_ASSERT_EQUAL(le32(&cmd.cdw11), NVME_DSM_ATTR_AD);
	CU_ASSERT_EQUAL(io.buf, SCSI_BUF_SCRATCH);
	CU_ASSERT_EQUAL(get_le32(&g_scratch[4]), 100);
	CU_ASSERT_EQUAL(get_le64(&g_scratch[8]), 10);
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 64 * BS, g_scratch, 4096, &cmd, &io));

	/* short data-out */
	xlate((const uint8_t[16]){ 0x41, 0, 0, 0, 0, 0, 0, 0, 1 }, &p);
	CU_ASSERT_FALSE(scsi_xlate_data_out(&g_lu, &p, g_buf, 100, g_scratch, 4096));
	CU_ASSERT_EQUAL(p.status, CC);
}

static void test_unmap_data(void)
{
	static const struct {
		uint16_t bddl;
		uint64_t lba[3];
		uint32_t cnt[3];
		bool go;
		uint16_t asc;
		uint32_t ndsm;
	} t[] = {
		{ 32, { 0, 100 }, { 8, 16 }, true, 0, 2 },
		{ 48, { 0, 100, 5 }, { 8, 0, 1 }, true, 0, 2 },	    /* zero count skipped */
		{ 16, { 0 }, { 0 }, false, 0, 0 },		    /* nothing to do */
		{ 16, { NBLOCKS - 1 }, { 2 }, false, OOB, 0 },
		{ 16, { ~0ull }, { 1 }, false, OOB, 0 },
		{ 20, { 1 }, { 1 }, true, 0, 1 },		    /* partial descriptor ignored */
	};

	lu_reset();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct scsi_plan p;
		uint8_t d[64] = { 0 };
		bool go;

		xlate((const uint8_t[16]){ 0x42, 0, 0, 0, 0, 0, 0, 0, 56 }, &p);
		put_be16(&d[0], (uint16_t)(t[i].bddl + 6));
		put_be16(&d[2], t[i].bddl);
		for (int j = 0; j < 3; j++) {
			put_be64(&d[8 + 16 * j], t[i].lba[j]);
			put_be32(&d[16 + 16 * j], t[i].cnt[j]);
		}
		go = scsi_xlate_data_out(&g_lu, &p, d, 8 + t[i].bddl, g_scratch, 4096);
		CU_ASSERT_EQUAL(go, t[i].go);
		if (t[i].asc)
			CU_ASSERT_EQUAL(p.sense.asc, t[i].asc);
		if (go) {
			struct nvme_cmd cmd;
			struct scsi_nvme_io io;

			CU_ASSERT_EQUAL(p.ndsm, t[i].ndsm);
			CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd,
						       &io));
			CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_DATASET_MANAGEMENT);
			CU_ASSERT_EQUAL(le32(&cmd.cdw10), t[i].ndsm - 1);
			CU_ASSERT_EQUAL(io.len, 16 * t[i].ndsm);
			CU_ASSERT_EQUAL(get_le64(&g_scratch[8]), t[i].lba[0]);
			CU_ASSERT_EQUAL(get_le32(&g_scratch[4]), t[i].cnt[0]);
		}
	}
	/* too many descriptors */
	g_lu.max_unmap_descs = 1;
	{
		struct scsi_plan p;
		uint8_t d[40] = { 0 };

		xlate((const uint8_t[16]){ 0x42, 0, 0, 0, 0, 0, 0, 0, 40 }, &p);
		put_be16(&d[2], 32);
		put_be32(&d[16], 1);
		put_be32(&d[32], 1);
		CU_ASSERT_FALSE(scsi_xlate_data_out(&g_lu, &p, d, 40, g_scratch, 4096));
		CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_FIELD_IN_PARAM_LIST);
	}
}

static void test_pr_out_cmds(void)
{
	static const struct {
		uint8_t sa, type;
		uint64_t rkey, sakey;
		uint8_t opc;
		uint32_t cdw10;
	} t[] = {
		{ SCSI_PR_OUT_REGISTER, 0, 0, 0xabc, NVME_OPC_RESERVATION_REGISTER, 0 },
		{ SCSI_PR_OUT_REGISTER, 0, 0xabc, 0xdef, NVME_OPC_RESERVATION_REGISTER, 2 },
		{ SCSI_PR_OUT_REGISTER, 0, 0xabc, 0, NVME_OPC_RESERVATION_REGISTER, 1 },
		{ SCSI_PR_OUT_REGISTER_AND_IGNORE, 0, 0, 0x55, NVME_OPC_RESERVATION_REGISTER,
		  2 | 8 },
		{ SCSI_PR_OUT_REGISTER_AND_IGNORE, 0, 0, 0, NVME_OPC_RESERVATION_REGISTER, 1 | 8 },
		{ SCSI_PR_OUT_RESERVE, SCSI_PR_EXCLUSIVE_ACCESS, 0xabc, 0,
		  NVME_OPC_RESERVATION_ACQUIRE, NVME_RESV_EXCLUSIVE_ACCESS << 8 },
		{ SCSI_PR_OUT_RESERVE, SCSI_PR_WRITE_EXCLUSIVE_ALL_REGS, 0xabc, 0,
		  NVME_OPC_RESERVATION_ACQUIRE, NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS << 8 },
		{ SCSI_PR_OUT_PREEMPT, SCSI_PR_WRITE_EXCLUSIVE, 0xabc, 0x123,
		  NVME_OPC_RESERVATION_ACQUIRE, 1 | NVME_RESV_WRITE_EXCLUSIVE << 8 },
		{ SCSI_PR_OUT_PREEMPT_AND_ABORT, SCSI_PR_EXCLUSIVE_ACCESS_REG_ONLY, 0xabc, 0x123,
		  NVME_OPC_RESERVATION_ACQUIRE, 2 | NVME_RESV_EXCLUSIVE_ACCESS_REG_ONLY << 8 },
		{ SCSI_PR_OUT_RELEASE, SCSI_PR_WRITE_EXCLUSIVE_REG_ONLY, 0xabc, 0,
		  NVME_OPC_RESERVATION_RELEASE, NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY << 8 },
		{ SCSI_PR_OUT_CLEAR, 0, 0xabc, 0, NVME_OPC_RESERVATION_RELEASE, 1 },
	};

	lu_reset();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t cdb[16] = { 0x5f, t[i].sa, t[i].type, 0, 0, 0, 0, 0, 24 };
		uint8_t d[24] = { 0 };
		struct scsi_plan p;
		struct nvme_cmd cmd;
		struct scsi_nvme_io io;

		xlate(cdb, &p);
		CU_ASSERT_EQUAL(p.op, SCSI_XOP_PR_OUT);
		put_be64(&d[0], t[i].rkey);
		put_be64(&d[8], t[i].sakey);
		CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, d, 24, g_scratch, 4096));
		CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
		CU_ASSERT_EQUAL(cmd.opc, t[i].opc);
		CU_ASSERT_EQUAL(le32(&cmd.cdw10), t[i].cdw10);
		CU_ASSERT_EQUAL(get_le64(&g_scratch[0]), t[i].rkey);
		if (t[i].opc != NVME_OPC_RESERVATION_RELEASE)
			CU_ASSERT_EQUAL(get_le64(&g_scratch[8]), t[i].sakey);
		if (le32(&cmd.cdw10) != t[i].cdw10 || cmd.opc != t[i].opc)
			fprintf(stderr, "pr case %zu: opc %#x cdw10 %#x\n", i, cmd.opc,
				le32(&cmd.cdw10));
	}
	/* APTPL, ALL_TG_PT, SPEC_I_PT are refused in the parameter list */
	for (int bit = 0; bit < 4; bit++) {
		uint8_t cdb[16] = { 0x5f, 0, 0, 0, 0, 0, 0, 0, 24 };
		uint8_t d[24] = { 0 };
		struct scsi_plan p;

		if (bit == 1)
			continue;
		xlate(cdb, &p);
		d[20] = (uint8_t)(1u << bit);
		CU_ASSERT_FALSE(scsi_xlate_data_out(&g_lu, &p, d, 24, g_scratch, 4096));
		CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_FIELD_IN_PARAM_LIST);
	}
	/* where reservations can persist, APTPL is the Register's CPTPL (11b; 10b without) */
	g_lu.ptpl = true;
	for (int aptpl = 0; aptpl < 2; aptpl++) {
		uint8_t cdb[16] = { 0x5f, 0, 0, 0, 0, 0, 0, 0, 24 };
		uint8_t d[24] = { 0 };
		struct scsi_plan p;
		struct nvme_cmd cmd;
		struct scsi_nvme_io io;

		xlate(cdb, &p);
		put_be64(&d[8], 0x1234);
		d[20] = (uint8_t)aptpl;
		CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, d, 24, g_scratch, 4096));
		CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
		CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_RESERVATION_REGISTER);
		CU_ASSERT_EQUAL(le32(&cmd.cdw10) >> 30, aptpl ? 3u : 2u);
	}
	g_lu.ptpl = false;
	/* unregistered I_T nexus registering key 0: GOOD although NVMe reports a conflict */
	{
		uint8_t cdb[16] = { 0x5f, 0, 0, 0, 0, 0, 0, 0, 24 };
		uint8_t d[24] = { 0 };
		struct scsi_plan p;

		xlate(cdb, &p);
		scsi_xlate_data_out(&g_lu, &p, d, 24, g_scratch, 4096);
		CU_ASSERT_FALSE(scsi_xlate_nvme_done(&p, NVME_STATUS(0,
								NVME_SC_RESERVATION_CONFLICT)));
		CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	}
}

static void test_pr_in_finish(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;
	uint8_t *r = g_scratch;

	lu_reset();
	/* extended report: generation 7, WE-AR held, two registrants */
	memset(r, 0, 64 + 2 * 64);
	put_le32(&r[0], 7);
	r[4] = NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY;
	put_le16(&r[5], 2);
	put_le64(&r[64 + 8], 0x1111);
	r[128 + 2] = 1;
	put_le64(&r[128 + 8], 0x2222);

	xlate((const uint8_t[16]){ 0x5e, 0x00, 0, 0, 0, 0, 0, 0x10, 0 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_RESERVATION_REPORT);
	CU_ASSERT_EQUAL(le32(&cmd.cdw11), 1);
	CU_ASSERT_EQUAL(le32(&cmd.cdw10), 4096 / 4 - 1);
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 7);
	CU_ASSERT_EQUAL(get_be32(&g_buf[4]), 16);
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), 0x1111);
	CU_ASSERT_EQUAL(get_be64(&g_buf[16]), 0x2222);
	CU_ASSERT_EQUAL(p.in_len, 24);

	xlate((const uint8_t[16]){ 0x5e, 0x01, 0, 0, 0, 0, 0, 0x10, 0 }, &p);
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(get_be32(&g_buf[4]), 16);
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), 0x2222);
	CU_ASSERT_EQUAL(g_buf[21], SCSI_PR_WRITE_EXCLUSIVE_REG_ONLY);

	/* all-registrants: key reported as 0; allocation length truncates */
	r[4] = NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS;
	xlate((const uint8_t[16]){ 0x5e, 0x01, 0, 0, 0, 0, 0, 0, 12 }, &p);
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), 0);
	CU_ASSERT_EQUAL(g_buf[21], SCSI_PR_EXCLUSIVE_ACCESS_ALL_REGS);
	CU_ASSERT_EQUAL(p.in_len, 12);

	/* no reservation: additional length 0 */
	r[4] = 0;
	xlate((const uint8_t[16]){ 0x5e, 0x01, 0, 0, 0, 0, 0, 0x10, 0 }, &p);
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(get_be32(&g_buf[4]), 0);
	CU_ASSERT_EQUAL(p.in_len, 8);

	/* REPORT CAPABILITIES is immediate where reservations cannot persist */
	xlate((const uint8_t[16]){ 0x5e, 0x02, 0, 0, 0, 0, 0, 0, 8 }, &p);
	CU_ASSERT_EQUAL(p.op, SCSI_XOP_DONE);
	CU_ASSERT_EQUAL(p.in_len, 8);
	CU_ASSERT_EQUAL(get_be16(&g_buf[0]), 8);
	CU_ASSERT_EQUAL(g_buf[3] & 0x80, 0x80);
	CU_ASSERT_EQUAL(g_buf[2] & 0x01, 0); /* PTPL_C */
	CU_ASSERT_EQUAL(g_buf[3] & 0x01, 0); /* PTPL_A */

	/* where they can: PTPL_C, and PTPL_A from the report's PTPLS */
	g_lu.ptpl = true;
	xlate((const uint8_t[16]){ 0x5e, 0x02, 0, 0, 0, 0, 0, 0, 8 }, &p);
	CU_ASSERT_EQUAL(p.op, SCSI_XOP_PR_IN);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_RESERVATION_REPORT);
	memset(r, 0, 64);
	r[9] = 1;
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(p.in_len, 8);
	CU_ASSERT_EQUAL(g_buf[2] & 0x01, 0x01);
	CU_ASSERT_EQUAL(g_buf[3] & 0x81, 0x81);
	r[9] = 0;
	xlate((const uint8_t[16]){ 0x5e, 0x02, 0, 0, 0, 0, 0, 0, 8 }, &p);
	scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io);
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(g_buf[3] & 0x01, 0);
	g_lu.ptpl = false;
}

/* ---- Immediate data ------------------------------------------------------------------------- */

static void test_inquiry(void)
{
	struct scsi_plan p;
	uint8_t vpd[32];
	uint32_t n;

	lu_reset();
	xlate((const uint8_t[16]){ 0x12, 0, 0, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	CU_ASSERT_EQUAL(p.in_len, 96);
	CU_ASSERT_EQUAL(g_buf[0], 0);
	CU_ASSERT_EQUAL(g_buf[2], SCSI_VERSION_SPC4);
	CU_ASSERT_EQUAL(g_buf[3] & 0x0f, 2);
	CU_ASSERT_EQUAL(g_buf[4], 91);
	CU_ASSERT_EQUAL(memcmp(&g_buf[8], "NVMe    ", 8), 0);
	CU_ASSERT_EQUAL(memcmp(&g_buf[16], "nvmeof RAM      ", 16), 0);
	CU_ASSERT_EQUAL(get_be16(&g_buf[58]), SCSI_VD_SAM5);
	CU_ASSERT_EQUAL(get_be16(&g_buf[64]), SCSI_VD_SBC3);
	/* allocation length truncates */
	xlate((const uint8_t[16]){ 0x12, 0, 0, 0, 5 }, &p);
	CU_ASSERT_EQUAL(p.in_len, 5);

	/* supported pages */
	xlate((const uint8_t[16]){ 0x12, 1, 0x00, 0, 0xff }, &p);
	n = get_be16(&g_buf[2]);
	CU_ASSERT_EQUAL(n, 7);
	memcpy(vpd, &g_buf[4], n);
	for (uint32_t i = 0; i < n; i++) {
		struct scsi_plan q;

		xlate((const uint8_t[16]){ 0x12, 1, vpd[i], 0x10, 0 }, &q);
		CU_ASSERT_EQUAL(q.status, SCSI_STATUS_GOOD);
		CU_ASSERT_EQUAL(g_buf[1], vpd[i]);
		CU_ASSERT_EQUAL(q.in_len, 4u + get_be16(&g_buf[2]));
		if (i)
			CU_ASSERT_TRUE(vpd[i] > vpd[i - 1]);
	}
	/* unit serial number from the NGUID */
	xlate((const uint8_t[16]){ 0x12, 1, 0x80, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(g_buf[3], 32);
	CU_ASSERT_EQUAL(memcmp(&g_buf[4], "101112131415161718191A1B1C1D1E1F", 32), 0);
	/* block limits */
	xlate((const uint8_t[16]){ 0x12, 1, 0xb0, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(get_be16(&g_buf[2]), 0x3c);
	CU_ASSERT_EQUAL(g_buf[4] & 1, 0);
	CU_ASSERT_EQUAL(g_buf[5], 128);
	CU_ASSERT_EQUAL(get_be32(&g_buf[8]), 256);
	CU_ASSERT_EQUAL(get_be32(&g_buf[24]), 256);
	/* logical block provisioning */
	xlate((const uint8_t[16]){ 0x12, 1, 0xb2, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(g_buf[5] & 0xe0, 0xe0);
	CU_ASSERT_EQUAL(g_buf[6] & 7, SCSI_PROVISIONING_THIN);
	/* device identification: NGUID designator first, then T10, port, names */
	xlate((const uint8_t[16]){ 0x12, 1, 0x83, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(g_buf[4 + 1] & 0x0f, SCSI_DESIG_EUI64);
	CU_ASSERT_EQUAL(g_buf[4 + 3], 16);
	CU_ASSERT_EQUAL(g_buf[4 + 4], 0x10);
	CU_ASSERT_EQUAL(g_buf[24 + 1] & 0x0f, SCSI_DESIG_T10_VENDOR);
	CU_ASSERT_EQUAL(memcmp(&g_buf[28], "NVMe    ", 8), 0);
}

static void test_read_capacity(void)
{
	struct scsi_plan p;

	lu_reset();
	xlate((const uint8_t[16]){ 0x25 }, &p);
	CU_ASSERT_EQUAL(p.in_len, 8);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), NBLOCKS - 1);
	CU_ASSERT_EQUAL(get_be32(&g_buf[4]), BS);
	xlate((const uint8_t[16]){ 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32 }, &p);
	CU_ASSERT_EQUAL(p.in_len, 32);
	CU_ASSERT_EQUAL(get_be64(&g_buf[0]), NBLOCKS - 1);
	CU_ASSERT_EQUAL(get_be32(&g_buf[8]), BS);
	CU_ASSERT_EQUAL(g_buf[14] & 0xc0, 0xc0);
	xlate((const uint8_t[16]){ 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, &p);
	CU_ASSERT_EQUAL(p.in_len, 0);
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	/* capacity beyond 32 bits: READ CAPACITY(10) reports FFFFFFFFh */
	g_lu.nblocks = 0x200000000ull;
	xlate((const uint8_t[16]){ 0x25 }, &p);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 0xffffffff);
}

static void test_mode_sense_select(void)
{
	struct scsi_plan p;
	uint8_t d[64];
	uint32_t len;

	lu_reset();
	/* all pages, block descriptor */
	xlate((const uint8_t[16]){ 0x1a, 0, 0x3f, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	CU_ASSERT_EQUAL(g_buf[0] + 1u, p.in_len);
	CU_ASSERT_EQUAL(g_buf[3], 8);
	CU_ASSERT_EQUAL(get_be32(&g_buf[4]), NBLOCKS);
	CU_ASSERT_EQUAL(get_be24(&g_buf[9]), BS);
	CU_ASSERT_EQUAL(g_buf[12], SCSI_MODE_PAGE_RW_ERROR_RECOVERY);
	/* MODE SENSE(10) with LLBAA: long descriptor */
	xlate((const uint8_t[16]){ 0x5a, 0x10, 0x08, 0, 0, 0, 0, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(get_be16(&g_buf[6]), 16);
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), NBLOCKS);
	CU_ASSERT_EQUAL(g_buf[24], SCSI_MODE_PAGE_CACHING);
	CU_ASSERT_EQUAL(g_buf[26] & SCSI_MODE_CACHING_WCE, SCSI_MODE_CACHING_WCE);
	/* changeable control page: D_SENSE and SWP */
	xlate((const uint8_t[16]){ 0x1a, 0x08, 0x4a, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(g_buf[3], 0);
	CU_ASSERT_EQUAL(g_buf[4], SCSI_MODE_PAGE_CONTROL);
	CU_ASSERT_EQUAL(g_buf[6], SCSI_MODE_CONTROL_D_SENSE);
	CU_ASSERT_EQUAL(g_buf[8], SCSI_MODE_CONTROL_SWP);

	/* MODE SELECT(6) setting SWP from the current control page */
	xlate((const uint8_t[16]){ 0x1a, 0x08, 0x0a, 0, 0xff }, &p);
	len = p.in_len;
	memcpy(d, g_buf, len);
	d[0] = 0;
	d[2] = 0;
	d[4 + 4] |= SCSI_MODE_CONTROL_SWP;
	xlate((const uint8_t[16]){ 0x15, 0x10, 0, 0, (uint8_t)len }, &p);
	CU_ASSERT_EQUAL(p.op, SCSI_XOP_MODE_SELECT);
	CU_ASSERT_FALSE(scsi_xlate_data_out(&g_lu, &p, d, len, g_scratch, 4096));
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	CU_ASSERT_TRUE(g_mode.swp);
	xlate((const uint8_t[16]){ 0x1a, 0x08, 0x0a, 0, 0xff }, &p);
	CU_ASSERT_EQUAL(g_buf[2] & SCSI_MODE_DSP_WP, SCSI_MODE_DSP_WP);
	/* changing a non-changeable field is refused */
	d[4 + 3] ^= 0x10;
	xlate((const uint8_t[16]){ 0x15, 0x10, 0, 0, (uint8_t)len }, &p);
	CU_ASSERT_FALSE(scsi_xlate_data_out(&g_lu, &p, d, len, g_scratch, 4096));
	CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_FIELD_IN_PARAM_LIST);
	CU_ASSERT_EQUAL(get_be16(&p.sense.sks[1]), 7);
	/* unknown page */
	d[4 + 3] ^= 0x10;
	d[4] = 0x05;
	xlate((const uint8_t[16]){ 0x15, 0x10, 0, 0, (uint8_t)len }, &p);
	CU_ASSERT_FALSE(scsi_xlate_data_out(&g_lu, &p, d, len, g_scratch, 4096));
	CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_FIELD_IN_PARAM_LIST);
}

static void test_report_luns_and_opcodes(void)
{
	struct scsi_plan p;
	uint32_t n;

	lu_reset();
	xlate((const uint8_t[16]){ 0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, &p);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 24);
	CU_ASSERT_EQUAL(g_buf[8 + 1], 0);
	CU_ASSERT_EQUAL(g_buf[16 + 1], 1);
	CU_ASSERT_EQUAL(g_buf[24], 0x41);
	CU_ASSERT_EQUAL(g_buf[25], 0x2c);
	CU_ASSERT_EQUAL(p.in_len, 32);

	/* all commands, with timeouts */
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0x80, 0, 0, 0, 0, 0, 0x10, 0 }, &p);
	n = get_be32(&g_buf[0]);
	CU_ASSERT_EQUAL(n % 20, 0);
	CU_ASSERT_TRUE(n / 20 > 40);
	CU_ASSERT_EQUAL(g_buf[4 + 5], 0x02);
	CU_ASSERT_EQUAL(get_be16(&g_buf[4 + 8]), 0x0a);
	/* one command: READ(10) */
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0x01, 0x28, 0, 0, 0, 0, 1, 0 }, &p);
	CU_ASSERT_EQUAL(g_buf[1] & 7, 3);
	CU_ASSERT_EQUAL(get_be16(&g_buf[2]), 10);
	CU_ASSERT_EQUAL(g_buf[4], 0x28);
	CU_ASSERT_EQUAL(g_buf[5], 0xfc);
	/* opcode + service action: READ CAPACITY(16) */
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0x02, 0x9e, 0, 0x10, 0, 0, 1, 0 }, &p);
	CU_ASSERT_EQUAL(g_buf[1] & 7, 3);
	CU_ASSERT_EQUAL(g_buf[5] & 0x1f, 0x10);
	/* unsupported command */
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0x01, 0xc5, 0, 0, 0, 0, 1, 0 }, &p);
	CU_ASSERT_EQUAL(g_buf[1] & 7, 1);
	/* option 2 for a command without service actions */
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0x02, 0x28, 0, 0, 0, 0, 1, 0 }, &p);
	CU_ASSERT_EQUAL(p.status, CC);
}

/* ---- The command table itself ----------------------------------------------------------- */

/* CDB length by group code (SAM-5 5.2): the table must agree with the opcode. */
static uint8_t group_cdb_len(uint8_t op)
{
	switch (op >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	default:
		return 0;
	}
}

/* Every supported command as (opcode, service action or -1, row), in table order. */
struct row_ref {
	uint8_t op;
	int sa;
	const struct scsi_cmd_desc *row;
};

static unsigned int table_rows(struct row_ref *out, unsigned int cap)
{
	unsigned int n = 0;

	for (unsigned int op = 0; op < 256; op++) {
		const struct scsi_cmd_desc *e = &scsi_cmd_table[op];

		if (!e->cdb_len)
			continue;
		if (!e->sa) {
			if (n < cap)
				out[n] = (struct row_ref){ (uint8_t)op, -1, e };
			n++;
			continue;
		}
		for (int sa = 0; sa < SCSI_SA_COUNT; sa++) {
			if (!e->sa[sa].cdb_len)
				continue;
			if (n < cap)
				out[n] = (struct row_ref){ (uint8_t)op, sa, &e->sa[sa] };
			n++;
		}
	}
	return n;
}

static void row_cdb(const struct row_ref *r, uint8_t *cdb)
{
	memset(cdb, 0, 16);
	cdb[0] = r->op;
	if (r->sa >= 0)
		cdb[1] = (uint8_t)r->sa;
}

static void test_table_rows_dispatch(void)
{
	struct row_ref rows[128];
	unsigned int n = table_rows(rows, 128);

	CU_ASSERT_TRUE(n >= 40 && n <= 128);
	for (unsigned int i = 0; i < n && i < 128; i++) {
		const struct row_ref *r = &rows[i];
		const struct scsi_cmd_desc *d = r->row;
		uint8_t cdb[16], len = d->cdb_len;
		struct scsi_plan p;

		lu_reset();
		CU_ASSERT_EQUAL(len, group_cdb_len(r->op));
		CU_ASSERT_EQUAL(d->usage[0], r->op);
		CU_ASSERT_PTR_NOT_NULL(d->handler);
		if (r->sa >= 0)
			CU_ASSERT_EQUAL(d->usage[1] & 0x1f, 0x1f);
		CU_ASSERT_EQUAL(scsi_cmd_lookup(r->op, r->sa < 0 ? 0 : (uint16_t)r->sa, NULL), d);

		/* one byte short of the row's length: not a command we know */
		row_cdb(r, cdb);
		scsi_xlate_cdb(&g_port, &g_lu, cdb, len - 1u, &p, g_buf, sizeof(g_buf));
		CU_ASSERT_EQUAL(p.status, CC);
		CU_ASSERT_EQUAL(p.sense.key, IR);
		CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);

		/* the full length: dispatched, data moving the row's way (or not at all) */
		scsi_xlate_cdb(&g_port, &g_lu, cdb, len, &p, g_buf, sizeof(g_buf));
		if (p.status == CC)
			CU_ASSERT_NOT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
		CU_ASSERT_TRUE(p.dir == SCSI_DIR_NONE || p.dir == d->dir);

		/* bytes after the CDB are not looked at ... */
		if (len < 16) {
			struct scsi_plan q;

			cdb[len] = 0xff;
			scsi_xlate_cdb(&g_port, &g_lu, cdb, 16, &q, g_buf, sizeof(g_buf));
			CU_ASSERT_EQUAL(q.status, p.status);
			CU_ASSERT_EQUAL(q.sense.asc, p.sense.asc);
			cdb[len] = 0;
		}
		/* ... while NACA in the row's CONTROL byte is refused, pointing at that byte */
		cdb[len - 1] |= 0x04;
		scsi_xlate_cdb(&g_port, &g_lu, cdb, 16, &p, g_buf, sizeof(g_buf));
		CU_ASSERT_EQUAL(p.status, CC);
		CU_ASSERT_EQUAL(p.sense.asc, IFC);
		CU_ASSERT_TRUE(p.sense.sks_valid);
		CU_ASSERT_EQUAL(get_be16(&p.sense.sks[1]), len - 1u);
		CU_ASSERT_EQUAL(p.sense.sks[0] & 7, 2);

		/* no logical unit at the LUN */
		row_cdb(r, cdb);
		scsi_xlate_cdb(&g_port, NULL, cdb, 16, &p, g_buf, sizeof(g_buf));
		if (d->flags & SCSI_CMD_NEEDS_LU) {
			CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_LUN_NOT_SUPPORTED);
		} else {
			CU_ASSERT_NOT_EQUAL(p.sense.asc, SCSI_ASC_LUN_NOT_SUPPORTED);
		}

		/* write protected LU: refused exactly by the rows that ask for the check */
		g_lu.read_only = true;
		scsi_xlate_cdb(&g_port, &g_lu, cdb, 16, &p, g_buf, sizeof(g_buf));
		if (d->flags & SCSI_CMD_WP_CHECK) {
			CU_ASSERT_EQUAL(p.status, CC);
			CU_ASSERT_EQUAL(p.sense.key, SCSI_SK_DATA_PROTECT);
			CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_WRITE_PROTECTED);
		} else {
			CU_ASSERT_NOT_EQUAL(p.sense.asc, SCSI_ASC_WRITE_PROTECTED);
		}
	}
	/* a few rows by name, as SBC-3/SPC-4 define them */
	CU_ASSERT_EQUAL(scsi_cmd_table[SCSI_OP_READ16].handler, sbc_read);
	CU_ASSERT_EQUAL(scsi_cmd_table[SCSI_OP_READ16].dir, SCSI_DIR_IN);
	CU_ASSERT_EQUAL(scsi_cmd_table[SCSI_OP_WRITE10].dir, SCSI_DIR_OUT);
	CU_ASSERT_PTR_NOT_NULL(scsi_cmd_table[SCSI_OP_SERVICE_ACTION_IN16].sa);
	CU_ASSERT_EQUAL(scsi_cmd_lookup(SCSI_OP_SERVICE_ACTION_IN16, SCSI_SAI_READ_CAPACITY16, NULL)
				->handler,
			sbc_read_capacity16);
	CU_ASSERT_PTR_NULL(scsi_cmd_lookup(SCSI_OP_SERVICE_ACTION_IN16, 0x100, NULL));
}

static void test_unsupported_opcodes(void)
{
	unsigned int unsupported = 0, bad_sa = 0;

	lu_reset();
	for (unsigned int op = 0; op < 256; op++) {
		const struct scsi_cmd_desc *e = &scsi_cmd_table[op];
		uint8_t cdb[16] = { (uint8_t)op };
		struct scsi_plan p;

		if (!e->cdb_len) {
			unsupported++;
			scsi_xlate_cdb(&g_port, &g_lu, cdb, 16, &p, g_buf, sizeof(g_buf));
			CU_ASSERT_EQUAL(p.op, SCSI_XOP_DONE);
			CU_ASSERT_EQUAL(p.status, CC);
			CU_ASSERT_EQUAL(p.sense.key, IR);
			CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
			CU_ASSERT_FALSE(p.sense.sks_valid);
			/* the same without a logical unit: the opcode is what is wrong */
			scsi_xlate_cdb(&g_port, NULL, cdb, 16, &p, g_buf, sizeof(g_buf));
			CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
			continue;
		}
		if (!e->sa)
			continue;
		for (unsigned int sa = 0; sa < SCSI_SA_COUNT; sa++) {
			if (e->sa[sa].cdb_len)
				continue;
			bad_sa++;
			cdb[1] = (uint8_t)sa;
			scsi_xlate_cdb(&g_port, &g_lu, cdb, 16, &p, g_buf, sizeof(g_buf));
			CU_ASSERT_EQUAL(p.status, CC);
			CU_ASSERT_EQUAL(p.sense.key, IR);
			if (op == SCSI_OP_PERSISTENT_RESERVE_IN ||
			    op == SCSI_OP_PERSISTENT_RESERVE_OUT) {
				CU_ASSERT_EQUAL(p.sense.asc, IFC);
				CU_ASSERT_EQUAL(get_be16(&p.sense.sks[1]), 1);
				CU_ASSERT_EQUAL(p.sense.sks[0] & 7, 4);
			} else {
				CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
			}
		}
	}
	CU_ASSERT_TRUE(unsupported > 200);
	CU_ASSERT_TRUE(bad_sa > 100);
	/* REGISTER AND MOVE is not in the table */
	CU_ASSERT_PTR_NULL(scsi_cmd_lookup(SCSI_OP_PERSISTENT_RESERVE_OUT,
					   SCSI_PR_OUT_REGISTER_AND_MOVE, NULL));
}

/* REPORT SUPPORTED OPERATION CODES lists exactly the table's rows, in its order, and each
 * listed command is described the same way when asked for alone. */
static void test_rsoc_lists_table(void)
{
	struct row_ref rows[128];
	unsigned int n = table_rows(rows, 128), listed;
	struct scsi_plan p;
	uint32_t len;

	lu_reset();
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0, 0, 0, 0, 0, 0x01, 0, 0 }, &p);
	CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
	len = get_be32(&g_buf[0]);
	CU_ASSERT_EQUAL(len % 8, 0);
	listed = len / 8;
	CU_ASSERT_EQUAL(listed, n);
	CU_ASSERT_EQUAL(p.in_len, 4 + len);
	for (unsigned int i = 0; i < listed && i < n; i++) {
		uint8_t one[512], *e = &g_buf[4 + 8 * i];
		const struct row_ref *r = &rows[i];
		bool servactv = e[5] & 0x01;
		uint8_t cdb[16] = { 0xa3, 0x0c, 0x03, e[0] };

		CU_ASSERT_EQUAL(e[0], r->op);
		CU_ASSERT_EQUAL(servactv, r->sa >= 0);
		CU_ASSERT_EQUAL(get_be16(&e[2]), r->sa >= 0 ? (uint16_t)r->sa : 0);
		CU_ASSERT_EQUAL(get_be16(&e[6]), r->row->cdb_len);
		CU_ASSERT_EQUAL(e[5] & 0x02, 0); /* no timeouts asked for */

		/* this command alone (option 3: opcode and service action) */
		memcpy(&cdb[4], &e[2], 2);
		cdb[9] = 0xff;
		xlate(cdb, &p);
		memcpy(one, g_buf, sizeof(one));
		CU_ASSERT_EQUAL(p.status, SCSI_STATUS_GOOD);
		CU_ASSERT_EQUAL(one[1] & 7, 3);
		CU_ASSERT_EQUAL(get_be16(&one[2]), r->row->cdb_len);
		CU_ASSERT_EQUAL(one[4], r->op);
		if (r->sa >= 0)
			CU_ASSERT_EQUAL(one[5], (r->row->usage[1] & ~0x1f) | r->sa);
		CU_ASSERT_EQUAL(memcmp(&one[6], &r->row->usage[2], r->row->cdb_len - 2u), 0);
		/* option 0 again for the next entry */
		xlate((const uint8_t[16]){ 0xa3, 0x0c, 0, 0, 0, 0, 0, 0x01, 0, 0 }, &p);
	}
	/* with timeouts: 20 bytes per command, same count */
	xlate((const uint8_t[16]){ 0xa3, 0x0c, 0x80, 0, 0, 0, 0, 0x01, 0, 0 }, &p);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 20 * n);
}

static void test_reserve6_exempt(void)
{
	static const uint8_t exempt[] = { SCSI_OP_INQUIRY, SCSI_OP_REPORT_LUNS,
					  SCSI_OP_REQUEST_SENSE, SCSI_OP_RELEASE6,
					  SCSI_OP_MAINTENANCE_IN };
	unsigned int count = 0;

	for (unsigned int op = 0; op < 256; op++) {
		bool want = memchr(exempt, (int)op, sizeof(exempt)) != NULL;

		CU_ASSERT_EQUAL(scsi_xlate_reserve6_exempt((uint8_t)op), want);
		count += scsi_xlate_reserve6_exempt((uint8_t)op);
	}
	CU_ASSERT_EQUAL(count, sizeof(exempt));
}

static void test_lba_status(void)
{
	const struct scsi_lba_extent ext[] = { { 5, 10, false }, { 15, 100, true } };
	struct scsi_plan p;

	lu_reset();
	xlate((const uint8_t[16]){ 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 64 }, &p);
	scsi_xlate_lba_status(&p, ext, 2, g_buf, sizeof(g_buf));
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 36);
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), 5);
	CU_ASSERT_EQUAL(get_be32(&g_buf[16]), 10);
	CU_ASSERT_EQUAL(g_buf[20], SCSI_LBA_STATUS_MAPPED);
	CU_ASSERT_EQUAL(get_be64(&g_buf[24]), 15);
	CU_ASSERT_EQUAL(g_buf[36], SCSI_LBA_STATUS_DEALLOCATED);
	CU_ASSERT_EQUAL(p.in_len, 40);
}

static void test_chunked_commands(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;
	uint32_t n = 0, off = 0;

	lu_reset();
	g_lu.max_cmd_blocks = 64;
	/* 200 blocks: Reads of 64, 64, 64 and 8 blocks at advancing data offsets */
	xlate((const uint8_t[16]){ 0x28, 0, 0, 0, 0, 10, 0, 0, 200 }, &p);
	while (scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io)) {
		uint32_t nlb = (le32(&cmd.cdw12) & 0xffff) + 1;

		CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_READ);
		CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 10 + n);
		CU_ASSERT_EQUAL(io.off, off);
		CU_ASSERT_EQUAL(io.len, nlb * BS);
		n += nlb;
		off += nlb * BS;
		CU_ASSERT_TRUE(scsi_xlate_nvme_done(&p, 0));
	}
	CU_ASSERT_EQUAL(n, 200);
	/* WRITE AND VERIFY: the Writes, then the Verify of the whole range */
	xlate((const uint8_t[16]){ 0x2e, 0, 0, 0, 0, 0, 0, 0, 100 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 63 | NVME_RW_FUA);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 64);
	CU_ASSERT_EQUAL(io.off, 64 * BS);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_VERIFY);
	CU_ASSERT_EQUAL(le32(&cmd.cdw12), 99);
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	/* COMPARE AND WRITE is limited by what one command moves */
	xlate((const uint8_t[16]){ 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 65 }, &p);
	CU_ASSERT_EQUAL(p.status, CC);
	CU_ASSERT_EQUAL(get_be16(&p.sense.sks[1]), 13);
}

static void test_write_same_unmap_any_data(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;

	lu_reset();
	/* UNMAP=1 deallocates (reads return zeroes: LBPRZ) whatever the data block holds */
	xlate((const uint8_t[16]){ 0x41, 0x08, 0, 0, 0, 4, 0, 0, 16 }, &p);
	memset(g_buf, 0xff, BS);
	CU_ASSERT_TRUE(scsi_xlate_data_out(&g_lu, &p, g_buf, BS, g_scratch, 4096));
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_DATASET_MANAGEMENT);
	CU_ASSERT_EQUAL(get_le64(&g_scratch[8]), 4);
	CU_ASSERT_EQUAL(get_le32(&g_scratch[4]), 16);
	/* thin provisioning off: UNMAP bit refused */
	g_lu.thin = false;
	xlate((const uint8_t[16]){ 0x41, 0x08, 0, 0, 0, 4, 0, 0, 16 }, &p);
	CU_ASSERT_EQUAL(p.status, CC);
	xlate((const uint8_t[16]){ 0x42, 0, 0, 0, 0, 0, 0, 0, 24 }, &p);
	CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
}

static void test_get_lba_status_nvme(void)
{
	struct scsi_plan p;
	struct nvme_cmd cmd;
	struct scsi_nvme_io io;
	uint8_t *d = g_scratch;

	lu_reset();
	xlate((const uint8_t[16]){ 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 40 }, &p);
	CU_ASSERT_TRUE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	CU_ASSERT_EQUAL(cmd.opc, 0x82);
	CU_ASSERT_EQUAL(get_le64(&cmd.cdw10), 7);
	CU_ASSERT_EQUAL(io.buf, SCSI_BUF_SCRATCH);
	CU_ASSERT_EQUAL(nvme_opc_xfer(cmd.opc), NVME_XFER_CTRLR_TO_HOST);
	CU_ASSERT_TRUE(scsi_xlate_nvme_done(&p, 0));
	CU_ASSERT_FALSE(scsi_xlate_next(&g_lu, &p, 65536, g_scratch, 4096, &cmd, &io));
	/* the NVMe descriptor list: NLSD, CMPC; DSLBA, NLB and status (byte 13) */
	memset(d, 0, 64);
	put_le32(&d[0], 2);
	d[4] = NVME_LBA_STATUS_CMPC_MORE;
	put_le64(&d[8], 7);
	put_le32(&d[16], 9);
	d[21] = NVMF_LBA_STATUS_DEALLOCATED;
	put_le64(&d[24], 16);
	put_le32(&d[32], 100);
	d[36] = 0xff; /* reserved byte 12 of the second: not its status */
	scsi_xlate_finish(&g_port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 36);
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), 7);
	CU_ASSERT_EQUAL(get_be32(&g_buf[16]), 9);
	CU_ASSERT_EQUAL(g_buf[20], SCSI_LBA_STATUS_DEALLOCATED);
	CU_ASSERT_EQUAL(g_buf[36], SCSI_LBA_STATUS_MAPPED);
	CU_ASSERT_EQUAL(p.in_len, 40); /* allocation length */
	/* without allocation tracking the command is not supported */
	g_lu.lba_status = false;
	xlate((const uint8_t[16]){ 0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 40 }, &p);
	CU_ASSERT_EQUAL(p.sense.asc, SCSI_ASC_INVALID_OPCODE);
}

static uint32_t fake_tid(void *arg, const uint8_t hostid[16], uint8_t *out, uint32_t cap)
{
	memset(out, 0, 24);
	out[0] = 0x45;
	put_be16(&out[2], 20);
	memcpy(&out[4], hostid[0] == 1 ? "iqn.a,i,0x000000000001" : "iqn.b", 6);
	return 24;
}

static void test_read_full_status(void)
{
	struct scsi_port port = g_port;
	struct scsi_plan p;
	uint8_t *r = g_scratch;

	lu_reset();
	port.transport_id = fake_tid;
	memset(r, 0, 64 + 2 * 64);
	put_le32(&r[0], 3);
	r[4] = NVME_RESV_EXCLUSIVE_ACCESS;
	put_le16(&r[5], 2);
	put_le64(&r[64 + 8], 0xaa);
	r[64 + 16] = 1;
	r[128 + 2] = 1;
	put_le64(&r[128 + 8], 0xbb);
	r[128 + 16] = 2;
	xlate((const uint8_t[16]){ 0x5e, 0x03, 0, 0, 0, 0, 0, 0x10, 0 }, &p);
	CU_ASSERT_EQUAL(p.op, SCSI_XOP_PR_IN);
	scsi_xlate_finish(&port, &g_lu, &p, g_buf, sizeof(g_buf), g_scratch, 4096);
	CU_ASSERT_EQUAL(get_be32(&g_buf[0]), 3);
	CU_ASSERT_EQUAL(get_be32(&g_buf[4]), 2 * (24 + 24));
	CU_ASSERT_EQUAL(get_be64(&g_buf[8]), 0xaa);
	CU_ASSERT_EQUAL(g_buf[8 + 12], 0);		  /* not the holder */
	CU_ASSERT_EQUAL(get_be32(&g_buf[8 + 20]), 24);
	CU_ASSERT_EQUAL(g_buf[8 + 24], 0x45);		  /* iSCSI TransportID */
	CU_ASSERT_EQUAL(get_be64(&g_buf[56]), 0xbb);
	CU_ASSERT_EQUAL(g_buf[56 + 12], 1);		  /* R_HOLDER */
	CU_ASSERT_EQUAL(g_buf[56 + 13], SCSI_PR_EXCLUSIVE_ACCESS);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "CDB table", test_cdb_table },
		{ "write protect", test_write_protect },
		{ "no logical unit", test_no_lu },
		{ "NVMe status table", test_status_table },
		{ "sense build", test_sense_build },
		{ "read/write commands", test_read_write_cmds },
		{ "verify/write and verify", test_verify_and_write_verify_cmds },
		{ "compare and write", test_compare_and_write_cmds },
		{ "write same", test_write_same_cmds },
		{ "unmap data", test_unmap_data },
		{ "persistent reserve out", test_pr_out_cmds },
		{ "persistent reserve in", test_pr_in_finish },
		{ "inquiry", test_inquiry },
		{ "read capacity", test_read_capacity },
		{ "mode sense/select", test_mode_sense_select },
		{ "report luns/opcodes", test_report_luns_and_opcodes },
		{ "table rows dispatch", test_table_rows_dispatch },
		{ "unsupported opcodes", test_unsupported_opcodes },
		{ "rsoc lists the table", test_rsoc_lists_table },
		{ "reserve(6) exemptions", test_reserve6_exempt },
		{ "get lba status", test_lba_status },
		{ "commands split by MDTS", test_chunked_commands },
		{ "write same unmap", test_write_same_unmap_any_data },
		{ "get lba status through NVMe", test_get_lba_status_nvme },
		{ "read full status", test_read_full_status },
		CU_TEST_INFO_NULL,
	};

	return ut_run("scsi_xlate", NULL, NULL, tests);
}
