/* SPDX-License-Identifier: MIT */
/*
 * Command dispatch through the opcode tables: every row reaches its handler (a case per
 * row, with a status only that handler gives), opcodes without a row and commands on the
 * wrong kind of queue get Invalid Command Opcode, commands that need a namespace get
 * Invalid Namespace without one, a disabled controller refuses everything with Command
 * Sequence Error, and the Commands Supported and Effects log page says exactly what is
 * dispatched.
 */
#include <stdio.h>
#include <string.h>

#include "common/endian.h"
#include "core/dispatch.h"
#include "core/lba_status.h"
#include "tests/unit/target/core/fakes.h"

#define ST_PENDING       0xffff /* parked by the core (Asynchronous Event Request) */
#define ST_INVALID_LOG   NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE)
#define ST_NOT_SAVEABLE  NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_FEATURE_ID_NOT_SAVEABLE)
#define ST_QUEUE_TYPE    NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_TYPE)
#define ST_HOSTID_FORMAT NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_HOSTID_INCONSISTENT_FORMAT)

static struct fake_env env;
static struct fake_qpair disc, local;
static uint8_t buf[8192];

/* Requests the core keeps (Asynchronous Event Requests): completed by the teardown that
 * aborts them, freed after it. */
static struct fake_req *parked[16];
static unsigned int nparked;

enum kind { K_NVM, K_DISC, K_LOCAL, K_IO, K_FABRICS_ADMIN, K_FABRICS_IO };

/* Target with namespace 1 (ram, 512-byte blocks): an NVM controller with one I/O queue, a
 * discovery controller and a local controller, all enabled. */
static void setup(void)
{
	struct fake_connect c;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 1, 1);
	fake_qpair_init(&disc, env.tgt, env.port, NULL);
	fake_connect_defaults(&c, 0);
	c.subnqn = NVME_DISCOVERY_NQN;
	CU_ASSERT_EQUAL_FATAL(fake_connect(&disc, &c, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(fake_prop_set(&disc, NVME_REG_CC, NVME_CC_EN), 0);
	fake_qpair_init(&local, env.tgt, NULL, &fake_reactor[1]);
	CU_ASSERT_EQUAL_FATAL(nvmf_local_connect(&local.qp, env.subsys, FAKE_HOSTNQN, NULL), 0);
}

static void teardown(void)
{
	fake_qpair_close(&local);
	fake_qpair_close(&disc);
	fake_env_teardown(&env);
	for (unsigned int i = 0; i < nparked; i++) {
		CU_ASSERT_EQUAL(parked[i]->completions, 1); /* aborted by the teardown */
		fake_req_free(parked[i]);
	}
	nparked = 0;
}

static struct fake_qpair *queue_of(enum kind k)
{
	switch (k) {
	case K_DISC:
		return &disc;
	case K_LOCAL:
		return &local;
	case K_IO:
	case K_FABRICS_IO:
		return &env.io[0];
	default:
		return &env.admin;
	}
}

/* Run @cmd on a queue of kind @k with @len bytes of @data (NULL: zeroes); ST_PENDING when
 * the core keeps the request. Controller data lands in buf. */
static uint16_t run(enum kind k, struct nvme_cmd *cmd, const void *data, uint32_t len,
		    uint32_t *dw0)
{
	struct fake_req *fr = fake_req_alloc(queue_of(k));
	uint16_t st;

	if (k == K_LOCAL)
		cmd->flags = 0; /* local front ends use no PSDT */
	memset(buf, 0, sizeof(buf));
	if (data)
		memcpy(buf, data, len);
	fake_req_prep(fr, cmd, buf, len);
	if (k == K_LOCAL)
		nvmf_local_admin_exec(&fr->req);
	else
		nvmf_req_exec(&fr->req);
	if (fr->completions != 1) {
		CU_ASSERT_FATAL(nparked < sizeof(parked) / sizeof(parked[0]));
		parked[nparked++] = fr;
		return ST_PENDING;
	}
	st = fake_status(fr);
	if (len)
		memcpy(buf, fr->data, len);
	if (dw0)
		*dw0 = fake_dw0(fr);
	fake_req_free(fr);
	return st;
}

/* ---- one case per row: the handler's own answer to a small command ------------------------- */

struct row_case {
	const char *what;
	enum kind kind;
	uint8_t opc; /* opcode, or fctype for K_FABRICS_* */
	uint32_t nsid;
	uint32_t cdw10, cdw11, cdw12;
	uint32_t len;
	uint16_t status;
	bool check_dw0;
	uint32_t dw0;
};

#define NO_DW0 false, 0

static const struct row_case row_cases[] = {
	/* admin */
	{ "Get Log Page: unknown page", K_NVM, NVME_ADMIN_GET_LOG_PAGE, 0, 0xc0 | 127u << 16, 0, 0,
	  512, ST_INVALID_LOG, NO_DW0 },
	{ "Get Log Page: discovery log", K_DISC, NVME_ADMIN_GET_LOG_PAGE, 0,
	  NVME_LOG_DISCOVERY | 255u << 16, 0, 0, 1024, 0, NO_DW0 },
	{ "Get Log Page: local", K_LOCAL, NVME_ADMIN_GET_LOG_PAGE, 0, NVME_LOG_SMART | 127u << 16,
	  0, 0, 512, 0, NO_DW0 },
	{ "Identify: short buffer", K_NVM, NVME_ADMIN_IDENTIFY, 0, NVME_ID_CNS_CTRL, 0, 0, 100,
	  ST_SGL_LEN, NO_DW0 },
	{ "Identify: discovery, namespace", K_DISC, NVME_ADMIN_IDENTIFY, 1, NVME_ID_CNS_NS, 0, 0,
	  4096, ST_INVALID_FIELD, NO_DW0 },
	{ "Identify: local, namespace", K_LOCAL, NVME_ADMIN_IDENTIFY, 1, NVME_ID_CNS_NS, 0, 0, 4096,
	  0, NO_DW0 },
	{ "Abort", K_NVM, NVME_ADMIN_ABORT, 0, 0, 0, 0, 0, 0, true, 1 },
	{ "Abort: local", K_LOCAL, NVME_ADMIN_ABORT, 0, 0, 0, 0, 0, 0, true, 1 },
	{ "Set Features: save", K_NVM, NVME_ADMIN_SET_FEATURES, 0, NVME_FEAT_KATO | NVME_FEAT_SAVE,
	  5000, 0, 0, ST_NOT_SAVEABLE, NO_DW0 },
	{ "Set Features: discovery, number of queues", K_DISC, NVME_ADMIN_SET_FEATURES, 0,
	  NVME_FEAT_NUM_QUEUES, 0, 0, 0, ST_INVALID_FIELD, NO_DW0 },
	{ "Set Features: local, arbitration", K_LOCAL, NVME_ADMIN_SET_FEATURES, 0,
	  NVME_FEAT_ARBITRATION, 3, 0, 0, 0, NO_DW0 },
	{ "Get Features: number of queues", K_NVM, NVME_ADMIN_GET_FEATURES, 0, NVME_FEAT_NUM_QUEUES,
	  0, 0, 0, 0, true, 0 },
	{ "Get Features: discovery, KATO", K_DISC, NVME_ADMIN_GET_FEATURES, 0, NVME_FEAT_KATO, 0, 0,
	  0, 0, true, NVMF_DISC_KATO_MS },
	{ "Get Features: local, unknown", K_LOCAL, NVME_ADMIN_GET_FEATURES, 0, 0x7e, 0, 0, 0,
	  ST_INVALID_FIELD, NO_DW0 },
	{ "Asynchronous Event Request", K_NVM, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0, 0, 0, 0, 0,
	  ST_PENDING, NO_DW0 },
	{ "Asynchronous Event Request: discovery", K_DISC, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0, 0, 0,
	  0, 0, ST_PENDING, NO_DW0 },
	{ "Keep Alive", K_NVM, NVME_ADMIN_KEEP_ALIVE, 0, 0, 0, 0, 0, 0, NO_DW0 },
	{ "Keep Alive: discovery", K_DISC, NVME_ADMIN_KEEP_ALIVE, 0, 0, 0, 0, 0, 0, NO_DW0 },
	{ "Keep Alive: local", K_LOCAL, NVME_ADMIN_KEEP_ALIVE, 0, 0, 0, 0, 0, 0, NO_DW0 },
	/* CDW13 (ATYPE) is zero here: not an action type */
	{ "Get LBA Status: no action type", K_NVM, NVME_ADMIN_GET_LBA_STATUS, 1, 0, 0, 1, 8,
	  ST_INVALID_FIELD, NO_DW0 },
	{ "Get LBA Status: local, no action type", K_LOCAL, NVME_ADMIN_GET_LBA_STATUS, 1, 0, 0, 1,
	  8, ST_INVALID_FIELD, NO_DW0 },
	/* NVM (namespace 1: 2048 blocks of 512 bytes) */
	{ "Flush", K_IO, NVME_OPC_FLUSH, 1, 0, 0, 0, 0, 0, NO_DW0 },
	{ "Flush: every namespace", K_IO, NVME_OPC_FLUSH, NVMF_NSID_ALL, 0, 0, 0, 0, 0, NO_DW0 },
	{ "Write: SGL shorter than NLB", K_IO, NVME_OPC_WRITE, 1, 0, 0, 1, 512, ST_SGL_LEN,
	  NO_DW0 },
	{ "Read: past the end", K_IO, NVME_OPC_READ, 1, 2048, 0, 0, 512, ST_LBA_RANGE, NO_DW0 },
	{ "Read", K_IO, NVME_OPC_READ, 1, 0, 0, 0, 512, 0, NO_DW0 },
	{ "Compare: zeroes match", K_IO, NVME_OPC_COMPARE, 1, 0, 0, 0, 512, 0, NO_DW0 },
	{ "Write Zeroes: past the end", K_IO, NVME_OPC_WRITE_ZEROES, 1, 2047, 0, 1, 0, ST_LBA_RANGE,
	  NO_DW0 },
	{ "Dataset Management: ranges missing", K_IO, NVME_OPC_DATASET_MANAGEMENT, 1, 1, 0, 0, 16,
	  ST_SGL_LEN, NO_DW0 },
	{ "Verify: no data moves", K_IO, NVME_OPC_VERIFY, 1, 0, 0, 0, 0, 0, NO_DW0 },
	{ "Reservation Register: CPTPL 11b", K_IO, NVME_OPC_RESERVATION_REGISTER, 1, 3u << 30, 0, 0,
	  16, ST_INVALID_FIELD, NO_DW0 },
	{ "Reservation Report: no EDS", K_IO, NVME_OPC_RESERVATION_REPORT, 1, 15, 0, 0, 64,
	  ST_HOSTID_FORMAT, NO_DW0 },
	{ "Reservation Acquire: keys missing", K_IO, NVME_OPC_RESERVATION_ACQUIRE, 1, 0, 0, 0, 8,
	  ST_SGL_LEN, NO_DW0 },
	{ "Reservation Release: key missing", K_IO, NVME_OPC_RESERVATION_RELEASE, 1, 0, 0, 0, 4,
	  ST_SGL_LEN, NO_DW0 },
	{ "Get LBA Allocation Status: past the end", K_IO, NVMF_OPC_VS_LBA_STATUS, 1, 2048, 0, 0,
	  24, ST_LBA_RANGE, NO_DW0 },
	/* Fabrics (cdw10 carries the property offset for Property Get/Set) */
	{ "Property Get: VS", K_FABRICS_ADMIN, NVMF_FCTYPE_PROPERTY_GET, 0, NVME_REG_VS, 0, 0, 0, 0,
	  true, 0x10300 },
	{ "Property Set: not CC", K_FABRICS_ADMIN, NVMF_FCTYPE_PROPERTY_SET, 0, NVME_REG_VS, 0, 0,
	  0, ST_INVALID_FIELD, NO_DW0 },
	{ "Connect: queue already connected", K_FABRICS_ADMIN, NVMF_FCTYPE_CONNECT, 0, 0, 0, 0,
	  1024, ST_CMD_SEQ, NO_DW0 },
	{ "Disconnect: admin queue", K_FABRICS_ADMIN, NVMF_FCTYPE_DISCONNECT, 0, 0, 0, 0, 0,
	  ST_QUEUE_TYPE, NO_DW0 },
	/* cdw10 = SPSP0/SPSP1/SECP, cdw11 = TL/AL */
	{ "Authentication Send: SECP 0", K_FABRICS_ADMIN, NVMF_FCTYPE_AUTH_SEND, 0, 0, 8, 0, 8,
	  ST_INVALID_FIELD, NO_DW0 },
	{ "Authentication Receive: AL 0", K_FABRICS_ADMIN, NVMF_FCTYPE_AUTH_RECV, 0, 0xe9010100u, 0,
	  0, 8, ST_INVALID_FIELD, NO_DW0 },
};

static void fabrics_cmd(struct nvme_cmd *cmd, uint8_t fctype, uint32_t offset)
{
	struct nvmf_property_cmd *p = (struct nvmf_property_cmd *)cmd;

	fake_cmd(cmd, NVME_OPC_FABRICS, 0);
	p->fctype = fctype;
	put_le32(&p->offset, offset);
}

static uint16_t run_case(const struct row_case *t, uint32_t *dw0)
{
	struct nvme_cmd cmd;

	if (t->kind == K_FABRICS_ADMIN || t->kind == K_FABRICS_IO) {
		fabrics_cmd(&cmd, t->opc, t->cdw10);
	} else {
		fake_cmd(&cmd, t->opc, t->nsid);
		put_le32(&cmd.cdw10, t->cdw10);
		put_le32(&cmd.cdw11, t->cdw11);
		put_le32(&cmd.cdw12, t->cdw12);
	}
	return run(t->kind, &cmd, NULL, t->len, dw0);
}

static void test_every_row_dispatches(void)
{
	setup();
	for (size_t i = 0; i < sizeof(row_cases) / sizeof(row_cases[0]); i++) {
		const struct row_case *t = &row_cases[i];
		uint32_t dw0 = 0xdeadbeef;
		uint16_t st = run_case(t, &dw0);

		if (st != t->status || (t->check_dw0 && dw0 != t->dw0))
			fprintf(stderr, "\n  %s: status %#x dw0 %#x, expected %#x dw0 %#x", t->what,
				st, dw0, t->status, t->dw0);
		CU_ASSERT_EQUAL(st, t->status);
		if (t->check_dw0)
			CU_ASSERT_EQUAL(dw0, t->dw0);
	}
	teardown();
}

/* The NVM commands that reach the backend, with the operation each one submits. */
static const struct {
	uint8_t opc;
	uint32_t cdw10, cdw11, cdw12, len;
	enum bdev_op op;
} bio_cases[] = {
	{ NVME_OPC_FLUSH, 0, 0, 0, 0, BDEV_OP_FLUSH },
	{ NVME_OPC_WRITE, 0, 0, 0, 512, BDEV_OP_WRITE },
	{ NVME_OPC_READ, 0, 0, 0, 512, BDEV_OP_READ },
	{ NVME_OPC_COMPARE, 0, 0, 0, 512, BDEV_OP_READ },
	{ NVME_OPC_WRITE_ZEROES, 0, 0, 0, 0, BDEV_OP_WRITE_ZEROES },
	{ NVME_OPC_WRITE_ZEROES, 0, 0, NVME_RW_DEAC, 0, BDEV_OP_DISCARD },
	{ NVME_OPC_DATASET_MANAGEMENT, 0, NVME_DSM_ATTR_AD, 0, 16, BDEV_OP_DISCARD },
};

static void test_nvm_rows_submit(void)
{
	uint8_t range[16] = { 0 };

	put_le32(&range[4], 8); /* DSM range: 8 blocks at LBA 0 */
	setup();
	for (size_t i = 0; i < sizeof(bio_cases) / sizeof(bio_cases[0]); i++) {
		struct nvme_cmd cmd;
		unsigned int before[5];

		memcpy(before, fake_bdev.nsubmit, sizeof(before));
		fake_cmd(&cmd, bio_cases[i].opc, 1);
		put_le32(&cmd.cdw10, bio_cases[i].cdw10);
		put_le32(&cmd.cdw11, bio_cases[i].cdw11);
		put_le32(&cmd.cdw12, bio_cases[i].cdw12);
		CU_ASSERT_EQUAL(run(K_IO, &cmd,
				    bio_cases[i].opc == NVME_OPC_DATASET_MANAGEMENT ? range : NULL,
				    bio_cases[i].len, NULL),
				0);
		for (int op = 0; op < 5; op++)
			CU_ASSERT_EQUAL(fake_bdev.nsubmit[op] - before[op],
					op == (int)bio_cases[i].op ? 1u : 0u);
	}
	teardown();
}

/* Each table's rows, on each kind of queue they are supported on, have a case above. */
static bool has_case(enum kind k, uint8_t opc)
{
	for (size_t i = 0; i < sizeof(row_cases) / sizeof(row_cases[0]); i++)
		if (row_cases[i].kind == k && row_cases[i].opc == opc)
			return true;
	return false;
}

static void test_every_row_has_a_case(void)
{
	static const struct {
		unsigned int on;
		enum kind kind;
	} admin_kinds[] = { { NVMF_ON_NVM, K_NVM },
			    { NVMF_ON_DISC, K_DISC },
			    { NVMF_ON_LOCAL, K_LOCAL } };

	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++) {
		for (size_t k = 0; k < 3; k++)
			if (nvmf_cmd_lookup(nvmf_admin_cmds, (uint8_t)opc, admin_kinds[k].on))
				CU_ASSERT(has_case(admin_kinds[k].kind, (uint8_t)opc));
		if (nvmf_cmd_lookup(nvmf_io_cmds, (uint8_t)opc, NVMF_ON_IO))
			CU_ASSERT(has_case(K_IO, (uint8_t)opc));
		if (nvmf_cmd_lookup(nvmf_fabrics_cmds, (uint8_t)opc, NVMF_ON_NVM))
			CU_ASSERT(has_case(K_FABRICS_ADMIN, (uint8_t)opc));
	}
}

/* ---- the rows themselves ------------------------------------------------------------------- */

static void check_table(const struct nvmf_cmd_desc *tbl, bool fabrics, unsigned int need_all)
{
	for (unsigned int i = 0; i < NVMF_CMD_TABLE_SIZE; i++) {
		const struct nvmf_cmd_desc *d = &tbl[i];
		struct nvme_cmd cmd;

		memset(&cmd, 0, sizeof(cmd));
		if (fabrics) {
			cmd.opc = NVME_OPC_FABRICS;
			((struct nvmf_cmd *)&cmd)->fctype = (uint8_t)i;
		} else {
			cmd.opc = (uint8_t)i;
		}
		if (!d->name) {
			CU_ASSERT(!d->parse && !d->execute && !d->on && !d->needs && !d->effects);
			if (!fabrics && i == NVME_OPC_FABRICS)
				continue;
			/* no row: the data direction is the opcode's */
			CU_ASSERT_EQUAL(nvmf_req_xfer(&cmd, tbl == nvmf_admin_cmds), i & 0x3);
			continue;
		}
		CU_ASSERT(d->parse || d->execute);
		CU_ASSERT(d->on != 0);
		CU_ASSERT_EQUAL(d->needs & need_all, need_all);
		CU_ASSERT_EQUAL(d->xfer, (enum nvme_data_xfer)(i & 0x3));
		CU_ASSERT_EQUAL(nvmf_req_xfer(&cmd, tbl == nvmf_admin_cmds), d->xfer);
		if (d->needs & (NVMF_NEED_RESV | NVMF_NEED_NS_OR_ALL))
			CU_ASSERT(d->needs & NVMF_NEED_NS);
		if (d->needs & NVMF_NEED_RESV_WRITE)
			CU_ASSERT(d->needs & NVMF_NEED_RESV);
		CU_ASSERT_EQUAL(d->effects & NVME_CMD_EFFECTS_CSUPP, 0);
		CU_ASSERT(!(d->needs & NVMF_NEED_CONNECTED) || !(d->needs & NVMF_NEED_UNCONNECTED));
	}
}

static void test_rows_well_formed(void)
{
	check_table(nvmf_admin_cmds, false, NVMF_NEED_ADMIN);
	check_table(nvmf_io_cmds, false, NVMF_NEED_IO);
	check_table(nvmf_fabrics_cmds, true, 0);
	for (unsigned int i = 0; i < NVMF_CMD_TABLE_SIZE; i++) {
		CU_ASSERT(!(nvmf_admin_cmds[i].on & NVMF_ON_IO));
		CU_ASSERT_EQUAL(nvmf_io_cmds[i].on & ~NVMF_ON_IO, 0);
	}
}

/* ---- refusals ---------------------------------------------------------------------------- */

static void test_wrong_queue(void)
{
	/* admin opcodes that are not also NVM opcodes */
	static const uint8_t admin_only[] = {
		NVME_ADMIN_IDENTIFY,        NVME_ADMIN_GET_FEATURES,   NVME_ADMIN_KEEP_ALIVE,
		NVME_ADMIN_FIRMWARE_COMMIT, NVME_ADMIN_DIRECTIVE_SEND, NVME_ADMIN_FORMAT_NVM,
	};
	struct nvme_cmd cmd;

	setup();
	for (size_t i = 0; i < sizeof(admin_only); i++) {
		fake_cmd(&cmd, admin_only[i], 1);
		CU_ASSERT_EQUAL(run(K_IO, &cmd, NULL, 4096, NULL), ST_INVALID_OPCODE);
	}
	/* properties belong to the admin queue */
	fabrics_cmd(&cmd, NVMF_FCTYPE_PROPERTY_GET, NVME_REG_VS);
	CU_ASSERT_EQUAL(run(K_FABRICS_IO, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	fabrics_cmd(&cmd, NVMF_FCTYPE_PROPERTY_SET, NVME_REG_CC);
	CU_ASSERT_EQUAL(run(K_FABRICS_IO, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	/* any fctype without a row is unknown */
	for (unsigned int t = 0; t < NVMF_CMD_TABLE_SIZE; t++) {
		if (nvmf_fabrics_cmds[t].name)
			continue;
		fabrics_cmd(&cmd, (uint8_t)t, 0);
		CU_ASSERT_EQUAL(run(K_FABRICS_ADMIN, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
		fabrics_cmd(&cmd, (uint8_t)t, 0);
		CU_ASSERT_EQUAL(run(K_FABRICS_IO, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	}
	/* no AER on local controllers, no Abort on discovery controllers */
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	CU_ASSERT_EQUAL(run(K_LOCAL, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	fake_cmd(&cmd, NVME_ADMIN_ABORT, 0);
	CU_ASSERT_EQUAL(run(K_DISC, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	/* Disconnect on an I/O queue is dispatched (and the queue leaves) */
	fabrics_cmd(&cmd, NVMF_FCTYPE_DISCONNECT, 0);
	CU_ASSERT_EQUAL(run(K_FABRICS_IO, &cmd, NULL, 0, NULL), 0);
	CU_ASSERT(!env.io[0].qp.connected);
	teardown();
}

static void test_namespace_needed(void)
{
	static const uint32_t bad[] = { 0, 2, NVMF_MAX_NAMESPACES, NVMF_MAX_NAMESPACES + 1,
					NVMF_NSID_ALL };
	struct nvme_cmd cmd;
	unsigned int rows = 0, named = 0;

	setup();
	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++) {
		const struct nvmf_cmd_desc *d =
			nvmf_cmd_lookup(nvmf_io_cmds, (uint8_t)opc, NVMF_ON_IO);

		named += d != NULL;
		if (!d || !(d->needs & NVMF_NEED_NS))
			continue;
		rows++;
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint16_t st;

			fake_cmd(&cmd, (uint8_t)opc, bad[i]);
			st = run(K_IO, &cmd, NULL, 512, NULL);
			if (bad[i] == NVMF_NSID_ALL && (d->needs & NVMF_NEED_NS_OR_ALL)) {
				CU_ASSERT_NOT_EQUAL(st, ST_INVALID_NS);
			} else {
				CU_ASSERT_EQUAL(st, ST_INVALID_NS);
			}
		}
	}
	CU_ASSERT(rows > 0);
	CU_ASSERT_EQUAL(rows, named); /* every NVM command works on a namespace */
	teardown();
}

static void test_disabled_controller(void)
{
	struct nvme_cmd cmd;

	setup();
	fake_msg_defer = true; /* the I/O queue stays until the reset message runs */
	CU_ASSERT_EQUAL(fake_prop_set(&env.admin, NVME_REG_CC, 0), 0);
	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++) {
		if (opc == NVME_OPC_FABRICS)
			continue;
		/* with or without a row, admin and NVM commands alike */
		fake_cmd(&cmd, (uint8_t)opc, 1);
		CU_ASSERT_EQUAL(run(K_NVM, &cmd, NULL, 4096, NULL), ST_CMD_SEQ);
		fake_cmd(&cmd, (uint8_t)opc, 1);
		CU_ASSERT_EQUAL(run(K_IO, &cmd, NULL, 4096, NULL), ST_CMD_SEQ);
	}
	/* properties still work: that is how the host enables it again */
	CU_ASSERT_EQUAL(fake_prop_get(&env.admin, NVME_REG_CAP, 8, NULL), 0);
	fake_msg_defer = false;
	fake_msgs_run();
	teardown();
}

static void test_unconnected_queue(void)
{
	struct fake_qpair q;
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	fake_qpair_init(&q, env.tgt, env.port, NULL);
	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++) {
		if (opc == NVME_OPC_FABRICS)
			continue;
		fake_cmd(&cmd, (uint8_t)opc, 1);
		CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), ST_CMD_SEQ);
	}
	for (unsigned int t = 0; t < NVMF_CMD_TABLE_SIZE; t++) {
		if (t == NVMF_FCTYPE_CONNECT)
			continue;
		fabrics_cmd(&cmd, (uint8_t)t, 0);
		CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), ST_CMD_SEQ);
	}
	fake_qpair_close(&q);
	fake_env_teardown(&env);
}

/* ---- log page 05h ---------------------------------------------------------------------------- */

static uint16_t effects_log(enum kind k, struct nvme_cmd_effects_log *log)
{
	struct nvme_cmd cmd;
	uint16_t st;

	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, 0);
	put_le32(&cmd.cdw10, NVME_LOG_CMD_EFFECTS | (uint32_t)(sizeof(*log) / 4 - 1) << 16);
	st = run(k, &cmd, NULL, sizeof(*log), NULL);
	memcpy(log, buf, sizeof(*log));
	return st;
}

/* Every opcode: listed as supported exactly when dispatching it is not refused. */
static void check_log_against_dispatch(enum kind admin, const struct nvme_cmd_effects_log *log)
{
	struct nvme_cmd cmd;

	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++) {
		bool listed = get_le32(&log->acs[opc]) & NVME_CMD_EFFECTS_CSUPP;
		uint16_t st;

		if (opc == NVME_OPC_FABRICS && admin != K_LOCAL) {
			CU_ASSERT(!listed);
			continue;
		}
		fake_cmd(&cmd, (uint8_t)opc, 0);
		st = run(admin, &cmd, NULL, 4096, NULL);
		if (listed != (st != ST_INVALID_OPCODE))
			fprintf(stderr, "\n  admin opcode %#x: listed %d, status %#x", opc, listed,
				st);
		CU_ASSERT_EQUAL(listed, st != ST_INVALID_OPCODE);
	}
	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++) {
		bool listed = get_le32(&log->iocs[opc]) & NVME_CMD_EFFECTS_CSUPP;
		uint16_t st;

		if (opc == NVME_OPC_FABRICS)
			continue;
		fake_cmd(&cmd, (uint8_t)opc, 1);
		st = run(K_IO, &cmd, NULL, 512, NULL);
		if (listed != (st != ST_INVALID_OPCODE))
			fprintf(stderr, "\n  I/O opcode %#x: listed %d, status %#x", opc, listed,
				st);
		CU_ASSERT_EQUAL(listed, st != ST_INVALID_OPCODE);
	}
}

static void test_effects_log(void)
{
	static struct nvme_cmd_effects_log log;
	static const uint8_t nvm_admin[] = { 0x02, 0x06, 0x08, 0x09, 0x0a, 0x0c, 0x18, 0x86 };
	static const uint8_t nvm_io[] = { 0x00, 0x01, 0x02, 0x05, 0x08, 0x09,
					  0x0c, 0x0d, 0x0e, 0x11, 0x15, 0x82 };
	unsigned int n = 0;

	setup();
	CU_ASSERT_EQUAL_FATAL(effects_log(K_NVM, &log), 0);
	/* the commands this target has always listed, with their effects */
	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++)
		n += get_le32(&log.acs[opc]) != 0;
	CU_ASSERT_EQUAL(n, sizeof(nvm_admin));
	for (size_t i = 0; i < sizeof(nvm_admin); i++)
		CU_ASSERT_EQUAL(get_le32(&log.acs[nvm_admin[i]]), NVME_CMD_EFFECTS_CSUPP);
	n = 0;
	for (unsigned int opc = 0; opc < NVMF_CMD_TABLE_SIZE; opc++)
		n += get_le32(&log.iocs[opc]) != 0;
	CU_ASSERT_EQUAL(n, sizeof(nvm_io));
	for (size_t i = 0; i < sizeof(nvm_io); i++) {
		uint32_t want = NVME_CMD_EFFECTS_CSUPP;

		if (nvm_io[i] == NVME_OPC_WRITE || nvm_io[i] == NVME_OPC_WRITE_ZEROES ||
		    nvm_io[i] == NVME_OPC_DATASET_MANAGEMENT)
			want |= NVME_CMD_EFFECTS_LBCC;
		CU_ASSERT_EQUAL(get_le32(&log.iocs[nvm_io[i]]), want);
	}
	for (size_t i = 0; i < sizeof(log.rsvd2048); i++)
		CU_ASSERT_EQUAL(log.rsvd2048[i], 0);
	check_log_against_dispatch(K_NVM, &log);

	/* a local controller: its own view (no Asynchronous Event Request) */
	CU_ASSERT_EQUAL_FATAL(effects_log(K_LOCAL, &log), 0);
	CU_ASSERT_EQUAL(get_le32(&log.acs[NVME_ADMIN_ASYNC_EVENT_REQUEST]), 0);
	CU_ASSERT_EQUAL(get_le32(&log.acs[NVME_ADMIN_IDENTIFY]), NVME_CMD_EFFECTS_CSUPP);
	check_log_against_dispatch(K_LOCAL, &log);
	teardown();
}

static const CU_TestInfo tests[] = {
	{ "rows are well formed", test_rows_well_formed },
	{ "every row has a case", test_every_row_has_a_case },
	{ "every row dispatches to its handler", test_every_row_dispatches },
	{ "NVM rows submit their operation", test_nvm_rows_submit },
	{ "wrong queue, unknown fctype", test_wrong_queue },
	{ "namespace needed", test_namespace_needed },
	{ "disabled controller", test_disabled_controller },
	{ "queue not connected", test_unconnected_queue },
	{ "commands supported and effects log", test_effects_log },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("dispatch", tests);
}
