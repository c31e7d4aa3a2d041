/* SPDX-License-Identifier: MIT */
/* Fabrics commands: Connect (admin and I/O), Property Get/Set, Disconnect. */
#include <string.h>

#include "common/dhchap_crypto.h"
#include "common/dhchap_key.h"
#include "common/endian.h"
#include "common/nvme_auth_spec.h"
#include "tests/unit/target/core/fakes.h"

#define SC1(sc) NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, sc)
#define ST_PARAM SC1(NVME_SC_CONNECT_INVALID_PARAMETERS)
#define IPO(off, data) NVME_CONNECT_IPO(off, data)
#define CC_OK (NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT)

/* ---- admin Connect -------------------------------------------------------------------------- */

enum mutate {
	M_NONE,
	M_RECFMT,
	M_SQSIZE0,
	M_SQSIZE_BIG,
	M_UNKNOWN_NQN,
	M_NQN_NOT_TERMINATED,
	M_EMPTY_HOSTNQN,
	M_EMPTY_HOSTNQN_ACL,
	M_STATIC_CNTLID,
	M_SHORT_DATA,
	M_DISALLOWED_HOST,
};

static const struct {
	const char *name;
	enum mutate m;
	uint16_t status;
	uint32_t dw0; /* checked when the status is Invalid Parameters */
} admin_cases[] = {
	{ "ok", M_NONE, 0, 0 },
	{ "recfmt 1", M_RECFMT, SC1(NVME_SC_CONNECT_INCOMPATIBLE_FORMAT), 0 },
	{ "sqsize 0", M_SQSIZE0, ST_PARAM, IPO(44, 0) },
	{ "sqsize > admin depth", M_SQSIZE_BIG, ST_PARAM, IPO(44, 0) },
	{ "unknown subnqn", M_UNKNOWN_NQN, ST_PARAM, IPO(256, 1) },
	{ "subnqn too long", M_NQN_NOT_TERMINATED, ST_PARAM, IPO(256, 1) },
	/* SPDK's host: served where any host may connect, an unknown host for an ACL */
	{ "empty hostnqn, any host", M_EMPTY_HOSTNQN, 0, 0 },
	{ "empty hostnqn, host list", M_EMPTY_HOSTNQN_ACL, SC1(NVME_SC_CONNECT_INVALID_HOST), 0 },
	{ "static cntlid", M_STATIC_CNTLID, ST_PARAM, IPO(16, 1) },
	{ "short data", M_SHORT_DATA, ST_SGL_LEN, 0 },
	{ "host not allowed", M_DISALLOWED_HOST, SC1(NVME_SC_CONNECT_INVALID_HOST), 0 },
};

static void test_admin_connect_table(void)
{
	static char longnqn[300];

	memset(longnqn, 'a', 299);
	memcpy(longnqn, "nqn.", 4);
	for (size_t i = 0; i < sizeof(admin_cases) / sizeof(admin_cases[0]); i++) {
		struct fake_env e;
		struct fake_qpair q;
		struct fake_connect c;
		uint32_t dw0 = 0xdeadbeef;
		uint16_t st;

		fake_env_setup(&e, "ram:1M");
		fake_qpair_init(&q, e.tgt, e.port, NULL);
		fake_connect_defaults(&c, 0);
		switch (admin_cases[i].m) {
		case M_RECFMT: c.recfmt = 1; break;
		case M_SQSIZE0: c.sqsize = 0; break;
		case M_SQSIZE_BIG: c.sqsize = 32; break;
		case M_UNKNOWN_NQN: c.subnqn = "nqn.2026-11.io.nvmeof:nope"; break;
		case M_NQN_NOT_TERMINATED: c.subnqn = longnqn; break;
		case M_EMPTY_HOSTNQN: c.hostnqn = ""; break;
		case M_EMPTY_HOSTNQN_ACL:
			c.hostnqn = "";
			nvmf_subsys_set_allow_any_host(e.subsys, false);
			CU_ASSERT_EQUAL(nvmf_subsys_add_host(e.subsys, FAKE_HOSTNQN), 0);
			break;
		case M_STATIC_CNTLID: c.cntlid = 1; break;
		case M_SHORT_DATA: c.length = 512; break;
		case M_DISALLOWED_HOST: nvmf_subsys_set_allow_any_host(e.subsys, false); break;
		default: break;
		}
		st = fake_connect(&q, &c, &dw0);
		if (st != admin_cases[i].status)
			fprintf(stderr, "case %s: status %#x\n", admin_cases[i].name, st);
		CU_ASSERT_EQUAL(st, admin_cases[i].status);
		if (st == ST_PARAM)
			CU_ASSERT_EQUAL(dw0, admin_cases[i].dw0);
		if (!st) {
			CU_ASSERT_EQUAL(dw0, 1); /* first dynamic controller ID, auth bits 0 */
			CU_ASSERT(q.qp.connected);
			CU_ASSERT_EQUAL(q.qp.sqsize, 32);
			CU_ASSERT_PTR_NOT_NULL(q.qp.ctrlr);
		} else {
			CU_ASSERT(!q.qp.connected);
			CU_ASSERT_PTR_NULL(q.qp.ctrlr);
		}
		fake_qpair_close(&q);
		CU_ASSERT_EQUAL(e.tgt->nctrlrs, 0);
		fake_env_teardown(&e);
	}
}

static void test_host_list(void)
{
	struct fake_env e;
	struct fake_qpair q1, q2;
	struct fake_connect c;

	fake_env_setup(&e, NULL);
	nvmf_subsys_set_allow_any_host(e.subsys, false);
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(e.subsys, FAKE_HOSTNQN), 0);
	fake_qpair_init(&q1, e.tgt, e.port, NULL);
	fake_qpair_init(&q2, e.tgt, e.port, NULL);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL(fake_connect(&q1, &c, NULL), 0);
	c.hostnqn = FAKE_HOSTNQN2;
	CU_ASSERT_EQUAL(fake_connect(&q2, &c, NULL), SC1(NVME_SC_CONNECT_INVALID_HOST));
	fake_qpair_close(&q1);
	fake_qpair_close(&q2);
	fake_env_teardown(&e);
}

static void test_not_exported_on_port(void)
{
	struct fake_env e;
	struct fake_qpair q;
	struct fake_connect c;
	uint32_t dw0 = 0;

	fake_env_setup(&e, NULL);
	CU_ASSERT_EQUAL(nvmf_port_remove_subsys(e.port, e.subsys), 0);
	fake_qpair_init(&q, e.tgt, e.port, NULL);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL(fake_connect(&q, &c, &dw0), ST_PARAM);
	CU_ASSERT_EQUAL(dw0, IPO(256, 1));
	/* the discovery subsystem is reachable on every port */
	c.subnqn = NVME_DISCOVERY_NQN;
	CU_ASSERT_EQUAL(fake_connect(&q, &c, NULL), 0);
	CU_ASSERT(q.qp.ctrlr->discovery);
	fake_qpair_close(&q);
	fake_env_teardown(&e);
}

static void test_cntlid_range(void)
{
	struct fake_env e;
	struct fake_qpair q[3];
	struct fake_connect c;
	uint32_t dw0;

	fake_env_setup(&e, NULL);
	e.subsys->cntlid_min = 10;
	e.subsys->cntlid_max = 11;
	fake_connect_defaults(&c, 0);
	for (int i = 0; i < 3; i++)
		fake_qpair_init(&q[i], e.tgt, e.port, NULL);
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 10);
	CU_ASSERT_EQUAL(fake_connect(&q[1], &c, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 11);
	CU_ASSERT_EQUAL(fake_connect(&q[2], &c, NULL), SC1(NVME_SC_CONNECT_CONTROLLER_BUSY));
	/* freed IDs are reused */
	fake_qpair_close(&q[0]);
	fake_qpair_init(&q[0], e.tgt, e.port, NULL);
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 10);
	for (int i = 0; i < 3; i++)
		fake_qpair_close(&q[i]);
	fake_env_teardown(&e);
}

static void test_sequence_errors(void)
{
	struct fake_env e;
	struct fake_qpair q;
	struct fake_connect c;
	struct nvme_cmd cmd;

	fake_env_setup(&e, NULL);
	fake_qpair_init(&q, e.tgt, e.port, NULL);
	/* nothing but Connect before Connect */
	CU_ASSERT_EQUAL(fake_prop_get(&q, NVME_REG_CAP, 8, NULL), ST_CMD_SEQ);
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 0);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 4096, NULL), ST_CMD_SEQ);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL(fake_connect(&q, &c, NULL), 0);
	/* a second Connect on the same queue */
	CU_ASSERT_EQUAL(fake_connect(&q, &c, NULL), ST_CMD_SEQ);
	/* admin commands before CC.EN = 1 */
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 4096, NULL), ST_CMD_SEQ);
	/* Disconnect is for I/O queues */
	fake_cmd(&cmd, NVME_ADMIN_FABRICS, 0);
	((struct nvmf_cmd *)&cmd)->fctype = NVMF_FCTYPE_DISCONNECT;
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), SC1(NVME_SC_INVALID_QUEUE_TYPE));
	/* unknown fctype */
	((struct nvmf_cmd *)&cmd)->fctype = 0x7e;
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	fake_qpair_close(&q);
	fake_env_teardown(&e);
}

/* ---- I/O Connect ---------------------------------------------------------------------------- */

static void test_io_connect(void)
{
	struct fake_env e;
	struct fake_qpair q[6];
	struct fake_connect c;
	uint32_t dw0 = 0;
	struct nvme_cmd cmd;

	fake_env_setup(&e, "ram:1M");
	fake_qpair_init(&e.admin, e.tgt, e.port, NULL);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL_FATAL(fake_connect(&e.admin, &c, &dw0), 0);
	e.cntlid = (uint16_t)dw0;
	for (int i = 0; i < 6; i++)
		fake_qpair_init(&q[i], e.tgt, e.port, NULL);

	/* before CC.EN = 1 */
	fake_connect_defaults(&c, 1);
	c.cntlid = e.cntlid;
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, NULL), ST_CMD_SEQ);

	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, CC_OK), 0);
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_NUM_QUEUES);
	put_le32(&cmd.cdw11, 1 | 1u << 16); /* two queues */
	CU_ASSERT_EQUAL(fake_exec(&e.admin, &cmd, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 1 | 1u << 16);

	/* sqsize above MQES (127), and 0 */
	c.sqsize = 128;
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), ST_PARAM);
	CU_ASSERT_EQUAL(dw0, IPO(44, 0));
	c.sqsize = 0;
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), ST_PARAM);
	c.sqsize = 127;
	/* unknown controller, wrong host NQN, wrong host ID */
	c.cntlid = 77;
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), ST_PARAM);
	CU_ASSERT_EQUAL(dw0, IPO(16, 1));
	c.cntlid = e.cntlid;
	c.hostnqn = FAKE_HOSTNQN2;
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), ST_PARAM);
	CU_ASSERT_EQUAL(dw0, IPO(16, 1));
	c.hostnqn = FAKE_HOSTNQN;
	c.hostid[0] ^= 1;
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), ST_PARAM);
	c.hostid[0] ^= 1;

	/* qid 1 and 2 fine, with CATTR disabling SQ flow control on 2 */
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, e.cntlid);
	CU_ASSERT_EQUAL(q[0].qp.qid, 1);
	CU_ASSERT_EQUAL(q[0].qp.sqsize, 128);
	CU_ASSERT(!q[0].qp.sq_flow_disabled);
	c.qid = 2;
	c.cattr = NVMF_CONNECT_CATTR_DISABLE_SQFLOW;
	CU_ASSERT_EQUAL(fake_connect(&q[1], &c, NULL), 0);
	CU_ASSERT(q[1].qp.sq_flow_disabled);
	CU_ASSERT_EQUAL(q[0].qp.ctrlr->num_io_qpairs, 2);
	/* duplicate qid, qid beyond the grant */
	c.qid = 1;
	CU_ASSERT_EQUAL(fake_connect(&q[2], &c, &dw0), ST_PARAM);
	CU_ASSERT_EQUAL(dw0, IPO(42, 0));
	c.qid = 3;
	CU_ASSERT_EQUAL(fake_connect(&q[2], &c, &dw0), ST_PARAM);
	CU_ASSERT_EQUAL(dw0, IPO(42, 0));

	/* Number of Queues cannot change once I/O queues exist */
	put_le32(&cmd.cdw11, 3 | 3u << 16);
	CU_ASSERT_EQUAL(fake_exec(&e.admin, &cmd, NULL, 0, NULL), ST_CMD_SEQ);

	/* fabrics commands on an I/O queue: only Disconnect */
	CU_ASSERT_EQUAL(fake_prop_get(&q[0], NVME_REG_CAP, 8, NULL), ST_INVALID_OPCODE);
	CU_ASSERT_EQUAL(fake_connect(&q[0], &c, NULL), ST_CMD_SEQ);

	/* the queue slot frees up once the queue is gone */
	fake_qpair_close(&q[0]);
	CU_ASSERT_EQUAL(q[1].qp.ctrlr->num_io_qpairs, 1);
	c.qid = 1;
	c.cattr = 0;
	CU_ASSERT_EQUAL(fake_connect(&q[3], &c, NULL), 0);

	/* I/O queues on the discovery controller */
	{
		struct fake_qpair dq;

		fake_qpair_init(&dq, e.tgt, e.port, NULL);
		fake_connect_defaults(&c, 0);
		c.subnqn = NVME_DISCOVERY_NQN;
		CU_ASSERT_EQUAL(fake_connect(&dq, &c, &dw0), 0);
		CU_ASSERT_EQUAL(fake_prop_set(&dq, NVME_REG_CC, NVME_CC_EN), 0);
		fake_connect_defaults(&c, 1);
		c.subnqn = NVME_DISCOVERY_NQN;
		c.cntlid = (uint16_t)dw0;
		CU_ASSERT_EQUAL(fake_connect(&q[4], &c, &dw0), ST_PARAM);
		CU_ASSERT_EQUAL(dw0, IPO(42, 0));
		fake_qpair_close(&dq);
	}
	for (int i = 0; i < 6; i++)
		fake_qpair_close(&q[i]);
	fake_env_teardown(&e);
}

static void test_disconnect(void)
{
	struct fake_env e;
	struct nvme_cmd cmd;

	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0, 2, 2);
	struct fake_qpair q;
	struct fake_connect c;

	fake_cmd(&cmd, NVME_ADMIN_FABRICS, 0);
	((struct nvmf_cmd *)&cmd)->fctype = NVMF_FCTYPE_DISCONNECT;
	put_le16(&((struct nvmf_connect_cmd *)&cmd)->recfmt, 1);
	CU_ASSERT_EQUAL(fake_exec(&e.io[1], &cmd, NULL, 0, NULL),
			SC1(NVME_SC_CONNECT_INCOMPATIBLE_FORMAT));
	put_le16(&((struct nvmf_connect_cmd *)&cmd)->recfmt, 0);
	CU_ASSERT_EQUAL(fake_exec(&e.io[1], &cmd, NULL, 0, NULL), 0);
	/* the queue left the controller; the connection is the host's to close */
	CU_ASSERT_EQUAL(e.io[1].disconnects, 0);
	CU_ASSERT_EQUAL(e.admin.qp.ctrlr->num_io_qpairs, 1);
	fake_cmd(&cmd, NVME_OPC_FLUSH, 1);
	CU_ASSERT_EQUAL(fake_exec(&e.io[1], &cmd, NULL, 0, NULL), ST_CMD_SEQ);
	fake_connect_defaults(&c, 2);
	c.cntlid = e.cntlid;
	CU_ASSERT_EQUAL(fake_connect(&e.io[1], &c, NULL), ST_CMD_SEQ);
	/* its QID is free for a new queue */
	fake_qpair_init(&q, e.tgt, e.port, &fake_reactor[1]);
	CU_ASSERT_EQUAL(fake_connect(&q, &c, NULL), 0);
	fake_qpair_close(&q);
	fake_qpair_close(&e.io[1]);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	fake_env_teardown(&e);
}

/* ---- Properties ----------------------------------------------------------------------------- */

static void test_properties(void)
{
	struct fake_env e;
	uint64_t v = 0;

	fake_env_setup(&e, "ram:1M");
	fake_qpair_init(&e.admin, e.tgt, e.port, NULL);
	{
		struct fake_connect c;

		fake_connect_defaults(&c, 0);
		CU_ASSERT_EQUAL_FATAL(fake_connect(&e.admin, &c, NULL), 0);
	}
	/* CAP: MQES 127, CQR, TO 15, CSS NVM, MPSMIN/MPSMAX 0, CRMS 0 */
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CAP, 8, &v), 0);
	CU_ASSERT_EQUAL(v & 0xffff, 127);
	CU_ASSERT(v & NVME_CAP_CQR);
	CU_ASSERT_EQUAL((v >> 24) & 0xff, 15);
	CU_ASSERT_EQUAL((v >> 37) & 0xff, 1);
	CU_ASSERT_EQUAL((v >> 48) & 0xf, 0);
	CU_ASSERT_EQUAL((v >> 52) & 0xf, 0);
	CU_ASSERT_EQUAL((v >> 59) & 0x3, 0);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_VS, 4, &v), 0);
	CU_ASSERT_EQUAL(v, 0x10300);

	/* invalid sizes and offsets */
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CAP, 4, &v), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_VS, 8, &v), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, 0x40, 4, &v), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CC, 2, &v), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CAP, 0), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CSTS, 0), ST_INVALID_FIELD);

	/* CC read back as written (EN = 0), CSTS.RDY follows EN */
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, CC_OK & ~NVME_CC_EN), 0);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CC, 4, &v), 0);
	CU_ASSERT_EQUAL(v, CC_OK & ~NVME_CC_EN);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, CC_OK), 0);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CC, 4, &v), 0);
	CU_ASSERT_EQUAL(v, CC_OK);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL(v, NVME_CSTS_RDY);

	/* shutdown: SHST = 10b once quiesced */
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC,
				      CC_OK | NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT),
			0);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL((v & NVME_CSTS_SHST_MASK) >> NVME_CSTS_SHST_SHIFT,
			NVME_CSTS_SHST_COMPLETE);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CC, 4, &v), 0);
	CU_ASSERT_EQUAL(v, CC_OK | NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT);

	/* reset clears everything */
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, 0), 0);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	fake_env_teardown(&e);
}

static void test_cc_invalid(void)
{
	static const uint32_t bad[] = {
		NVME_CC_EN | 4u << NVME_CC_IOCQES_SHIFT,		   /* IOSQES 0 */
		NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT,		   /* IOCQES 0 */
		CC_OK | 1u << NVME_CC_MPS_SHIFT,			   /* 8 KiB pages */
		CC_OK | 1u << NVME_CC_AMS_SHIFT,			   /* WRR */
		CC_OK | 1u << NVME_CC_CSS_SHIFT,			   /* CSS */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fake_env e;
		struct fake_connect c;
		uint64_t v;

		fake_env_setup(&e, NULL);
		fake_qpair_init(&e.admin, e.tgt, e.port, NULL);
		fake_connect_defaults(&c, 0);
		CU_ASSERT_EQUAL_FATAL(fake_connect(&e.admin, &c, NULL), 0);
		CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, bad[i]), 0);
		CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
		CU_ASSERT_EQUAL(v & (NVME_CSTS_CFS | NVME_CSTS_RDY), NVME_CSTS_CFS);
		fake_env_teardown(&e);
	}
}

static void test_shutdown_flushes(void)
{
	struct fake_env e;
	uint64_t v;

	fake_env_setup(&e, "file:1M");
	fake_env_connect(&e, 0, 1, 1);
	fake_bdev.defer = true;
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC,
				      CC_OK | NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT),
			0);
	CU_ASSERT_EQUAL(fake_bdev.nsubmit[BDEV_OP_FLUSH], 1);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL((v & NVME_CSTS_SHST_MASK) >> NVME_CSTS_SHST_SHIFT,
			NVME_CSTS_SHST_OCCURRING);
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL((v & NVME_CSTS_SHST_MASK) >> NVME_CSTS_SHST_SHIFT,
			NVME_CSTS_SHST_COMPLETE);
	fake_bdev.defer = false;
	fake_env_teardown(&e);
}

/* ---- In-band authentication (fabrics_auth.c) ------------------------------------------------ */

static void auth_cmd(struct nvme_cmd *cmd, uint8_t fctype, uint32_t len)
{
	struct nvmf_auth_cmd *a = (struct nvmf_auth_cmd *)cmd;

	fake_cmd(cmd, NVME_OPC_FABRICS, 0);
	a->fctype = fctype;
	a->secp = NVMF_AUTH_SECP;
	a->spsp0 = NVMF_AUTH_SPSP0;
	a->spsp1 = NVMF_AUTH_SPSP1;
	put_le32(a->len, len);
}

/* One unidirectional SHA-256 / NULL exchange on @fq with @key (text); returns the status of
 * the last command and leaves the controller's last message in @buf. */
static uint16_t auth_exchange(struct fake_qpair *fq, const char *key, uint8_t *buf)
{
	struct nvme_auth_negotiate *n = (void *)buf;
	struct nvme_auth_protocol_desc *d = (void *)(buf + sizeof(*n));
	struct nvme_dhchap_reply *r;
	struct nvme_dhchap_key k = { 0 };
	struct nvme_secret *kh = NULL;
	struct nvme_dhchap_resp_in in;
	uint8_t c1[32], reply[NVME_DHCHAP_REPLY_LEN(32, 0)];
	struct nvme_cmd cmd;
	uint16_t st;

	memset(buf, 0, 4096);
	n->auth_type = NVME_AUTH_TYPE_COMMON;
	n->auth_id = NVME_AUTH_ID_NEGOTIATE;
	put_le16(n->t_id, 7);
	n->napd = 1;
	d->authid = NVME_AUTH_PROTO_DHCHAP;
	d->halen = 1;
	d->dhlen = 1;
	d->idlist[0] = NVME_AUTH_HASH_SHA256;
	d->idlist[NVME_AUTH_DESC_DH_OFF] = NVME_AUTH_DHGROUP_NULL;
	auth_cmd(&cmd, NVMF_FCTYPE_AUTH_SEND, NVME_AUTH_NEGOTIATE_LEN(1));
	st = fake_exec(fq, &cmd, buf, NVME_AUTH_NEGOTIATE_LEN(1), NULL);
	if (st)
		return st;
	auth_cmd(&cmd, NVMF_FCTYPE_AUTH_RECV, 4096);
	st = fake_exec(fq, &cmd, buf, 4096, NULL);
	if (st)
		return st;
	CU_ASSERT_EQUAL_FATAL(buf[1], NVME_AUTH_ID_CHALLENGE);
	memcpy(c1, buf + NVME_DHCHAP_CHALLENGE_CVAL_OFF, 32);
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(key, &k, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_transform(&k, FAKE_HOSTNQN, &kh), 0);
	in = (struct nvme_dhchap_resp_in){ .hash_id = NVME_AUTH_HASH_SHA256,
					   .key = kh,
					   .challenge = c1,
					   .seqnum = get_le32(buf + 12),
					   .t_id = 7,
					   .hostnqn = FAKE_HOSTNQN,
					   .subsysnqn = FAKE_SUBNQN };
	memset(reply, 0, sizeof(reply));
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_host_response(&in, reply + NVME_DHCHAP_REPLY_RVAL_OFF),
			      0);
	nvme_secret_free(kh);
	nvme_dhchap_key_clear(&k);
	r = (void *)reply;
	r->auth_type = NVME_AUTH_TYPE_DHCHAP;
	r->auth_id = NVME_AUTH_ID_REPLY;
	put_le16(r->t_id, 7);
	r->hl = 32;
	put_le32(r->seqnum, 1);
	auth_cmd(&cmd, NVMF_FCTYPE_AUTH_SEND, sizeof(reply));
	st = fake_exec(fq, &cmd, reply, sizeof(reply), NULL);
	if (st)
		return st;
	auth_cmd(&cmd, NVMF_FCTYPE_AUTH_RECV, 4096);
	return fake_exec(fq, &cmd, buf, 4096, NULL);
}

static void test_auth(void)
{
	static uint8_t buf[4096];
	char key[NVME_DHCHAP_KEY_TEXT_MAX], other[NVME_DHCHAP_KEY_TEXT_MAX], err[256];
	struct nvmf_host_dhchap h = { .hostnqn = FAKE_HOSTNQN,
				      .hash = "hmac(sha256)",
				      .dhgroup = "null" };
	struct nvme_dhchap_key k = { 0 };
	struct fake_qpair q1, q2, q3;
	struct fake_connect c;
	struct nvme_cmd cmd;
	uint32_t dw0 = 0;
	struct fake_env e;
	uint64_t v;

	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_generate(NULL, 32, 0, NULL, &k), 0);
	CU_ASSERT_FATAL(nvme_dhchap_key_format(&k, key, sizeof(key)) > 0);
	nvme_dhchap_key_clear(&k);
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_generate(NULL, 32, 0, NULL, &k), 0);
	CU_ASSERT_FATAL(nvme_dhchap_key_format(&k, other, sizeof(other)) > 0);
	nvme_dhchap_key_clear(&k);

	fake_env_setup(&e, NULL);
	nvmf_subsys_set_allow_any_host(e.subsys, false);
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(e.subsys, FAKE_HOSTNQN), 0);
	h.key = "DHHC-1:00:bad:";
	CU_ASSERT(nvmf_tgt_set_host_keys(e.tgt, &h, 1, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, FAKE_HOSTNQN));
	h.key = key;
	CU_ASSERT_EQUAL(nvmf_tgt_set_host_keys(e.tgt, &h, 1, err, sizeof(err)), 0);

	/* Connect: ATR set; nothing but authentication runs until it is done. */
	fake_qpair_init(&q1, e.tgt, e.port, NULL);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL(fake_connect(&q1, &c, &dw0), 0);
	CU_ASSERT(dw0 & NVMF_CONNECT_AUTHREQ_ATR);
	CU_ASSERT_EQUAL(fake_prop_get(&q1, NVME_REG_VS, 4, &v), ST_AUTH_REQUIRED);
	fake_cmd(&cmd, NVME_ADMIN_KEEP_ALIVE, 0);
	CU_ASSERT_EQUAL(fake_exec(&q1, &cmd, NULL, 0, NULL), ST_AUTH_REQUIRED);
	CU_ASSERT_EQUAL(auth_exchange(&q1, key, buf), 0);
	CU_ASSERT_EQUAL(buf[1], NVME_AUTH_ID_SUCCESS1);
	CU_ASSERT_EQUAL(fake_prop_get(&q1, NVME_REG_VS, 4, &v), 0);
	CU_ASSERT_EQUAL(q1.disconnects, 0);
	/* Re-authentication on the live admin queue. */
	CU_ASSERT_EQUAL(auth_exchange(&q1, key, buf), 0);
	CU_ASSERT_EQUAL(buf[1], NVME_AUTH_ID_SUCCESS1);
	CU_ASSERT_EQUAL(fake_prop_get(&q1, NVME_REG_VS, 4, &v), 0);

	/* A host with the wrong secret: AUTH_Failure1, then the queue is closed. */
	fake_qpair_init(&q2, e.tgt, e.port, NULL);
	CU_ASSERT_EQUAL(fake_connect(&q2, &c, &dw0), 0);
	CU_ASSERT_EQUAL(auth_exchange(&q2, other, buf), 0);
	CU_ASSERT_EQUAL(buf[1], NVME_AUTH_ID_FAILURE1);
	CU_ASSERT_EQUAL(buf[7], NVME_AUTH_FAIL_FAILED);
	CU_ASSERT_EQUAL(q2.disconnects, 1);
	CU_ASSERT_TRUE(q2.finied); /* the transport closed it */

	/* On a subsystem open to any host nobody is asked (as Linux nvmet). */
	nvmf_subsys_set_allow_any_host(e.subsys, true);
	fake_qpair_init(&q3, e.tgt, e.port, NULL);
	dw0 = 0;
	CU_ASSERT_EQUAL(fake_connect(&q3, &c, &dw0), 0);
	CU_ASSERT_FALSE(dw0 & NVMF_CONNECT_AUTHREQ_ATR);
	CU_ASSERT_EQUAL(fake_prop_get(&q3, NVME_REG_VS, 4, &v), 0);
	nvmf_subsys_set_allow_any_host(e.subsys, false);

	/* New secrets: the next exchange (here a re-authentication) must use them. */
	h.key = other;
	CU_ASSERT_EQUAL(nvmf_tgt_set_host_keys(e.tgt, &h, 1, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(auth_exchange(&q1, key, buf), 0);
	CU_ASSERT_EQUAL(buf[1], NVME_AUTH_ID_FAILURE1);
	CU_ASSERT_EQUAL(q1.disconnects, 1);
	CU_ASSERT_EQUAL(nvmf_tgt_set_host_keys(e.tgt, NULL, 0, err, sizeof(err)), 0);
	fake_qpair_close(&q1);
	fake_qpair_close(&q2);
	fake_qpair_close(&q3);
	fake_env_teardown(&e);
}

static const CU_TestInfo tests[] = {
	{ "admin connect table", test_admin_connect_table },
	{ "allowed host list", test_host_list },
	{ "subsystem not exported on the port", test_not_exported_on_port },
	{ "controller ID range", test_cntlid_range },
	{ "command sequence errors", test_sequence_errors },
	{ "I/O connect", test_io_connect },
	{ "disconnect", test_disconnect },
	{ "properties", test_properties },
	{ "unsupported CC", test_cc_invalid },
	{ "shutdown flushes volatile caches", test_shutdown_flushes },
	{ "DH-HMAC-CHAP: required, refused, re-authenticated, rekeyed", test_auth },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("fabrics", tests);
}
