/* SPDX-License-Identifier: MIT */
/* Admin commands: Identify (every CNS), dispatch rules for NVM and discovery controllers,
 * Asynchronous Event Request, Abort, Keep Alive. */
#include <string.h>

#include "common/endian.h"
#include "tests/unit/target/core/fakes.h"

static struct fake_env env;
static uint8_t buf[4096];

static uint16_t identify(struct fake_qpair *q, uint8_t cns, uint32_t nsid, uint8_t csi,
			 uint32_t len)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, nsid);
	put_le32(&cmd.cdw10, cns);
	put_le32(&cmd.cdw11, (uint32_t)csi << 24);
	memset(buf, 0x77, sizeof(buf));
	return fake_exec(q, &cmd, buf, len, NULL);
}

static bool space_padded(const char *f, size_t len, const char *want)
{
	size_t n = strlen(want);

	if (memcmp(f, want, n))
		return false;
	for (size_t i = n; i < len; i++)
		if (f[i] != ' ')
			return false;
	return true;
}

static void test_identify_ctrl(void)
{
	const struct nvme_id_ctrl *id = (const void *)buf;
	char sn[21];

	fake_env_setup(&env, "ram:1M");
	env.port->in_capsule_size = 8192;
	fake_env_connect(&env, 5000, 4, 0);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CTRL, 0, 0, 4096), 0);
	snprintf(sn, sizeof(sn), "%s", env.subsys->serial);
	CU_ASSERT_EQUAL(strlen(sn), 20);
	CU_ASSERT(space_padded(id->sn, 20, sn));
	CU_ASSERT(space_padded(id->mn, 40, "nvmeof"));
	CU_ASSERT(space_padded(id->fr, 8, PACKAGE_VERSION));
	CU_ASSERT_EQUAL(get_le16(&id->vid), 0);
	CU_ASSERT_EQUAL(id->cmic,
			NVME_CTRL_CMIC_MULTI_PORT | NVME_CTRL_CMIC_MULTI_CTRL | NVME_CTRL_CMIC_ANA);
	CU_ASSERT_EQUAL(id->mdts, 5); /* 128 KiB in 4 KiB pages */
	CU_ASSERT_EQUAL(get_le16(&id->cntlid), env.cntlid);
	CU_ASSERT_EQUAL(get_le32(&id->ver), 0x10300);
	CU_ASSERT_EQUAL(get_le32(&id->oaes), NVME_CTRL_OAES_NS_ATTR | NVME_CTRL_OAES_ANA_CHANGE);
	CU_ASSERT_EQUAL(get_le32(&id->ctratt), NVME_CTRL_CTRATT_HOSTID_128);
	CU_ASSERT_EQUAL(id->cntrltype, NVME_CTRL_CNTRLTYPE_IO);
	CU_ASSERT_EQUAL(get_le16(&id->oacs), NVME_CTRL_OACS_GET_LBA_STATUS);
	CU_ASSERT_EQUAL(id->acl, 3);
	CU_ASSERT_EQUAL(id->aerl, NVMF_MAX_AER - 1);
	CU_ASSERT_EQUAL(id->frmw, 0x3);
	CU_ASSERT_EQUAL(id->lpa, NVME_CTRL_LPA_CMD_EFFECTS | NVME_CTRL_LPA_EXT_DATA);
	CU_ASSERT_EQUAL(id->elpe, NVMF_ERRLOG_ENTRIES - 1);
	CU_ASSERT_EQUAL(get_le16(&id->kas), 1);
	CU_ASSERT_EQUAL(id->sqes, 0x66);
	CU_ASSERT_EQUAL(id->cqes, 0x44);
	CU_ASSERT_EQUAL(get_le16(&id->maxcmd), 128);
	CU_ASSERT_EQUAL(get_le32(&id->nn), NVMF_MAX_NAMESPACES);
	CU_ASSERT_EQUAL(get_le16(&id->oncs), NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM |
						     NVME_CTRL_ONCS_WRITE_ZEROES |
						     NVME_CTRL_ONCS_VERIFY |
						     NVME_CTRL_ONCS_RESERVATIONS);
	CU_ASSERT_EQUAL(get_le16(&id->fuses), NVME_CTRL_FUSES_COMPARE_WRITE);
	CU_ASSERT_EQUAL(id->vwc, NVME_CTRL_VWC_FLUSH_ALL_NSID); /* ram: no volatile cache */
	CU_ASSERT_EQUAL(get_le32(&id->sgls), NVME_CTRL_SGLS_SUPPORTED | NVME_CTRL_SGLS_OFFSET);
	CU_ASSERT_STRING_EQUAL(id->subnqn, FAKE_SUBNQN);
	CU_ASSERT_EQUAL(get_le32(&id->ioccsz), (8192 + 64) / 16);
	CU_ASSERT_EQUAL(get_le32(&id->iorcsz), 1);
	CU_ASSERT_EQUAL(get_le16(&id->icdoff), 0);
	CU_ASSERT_EQUAL(id->msdbd, 1);
	CU_ASSERT_EQUAL(get_le16(&id->psd[0].bytes[0]), 0x09c4);
	CU_ASSERT(get_le16(&id->wctemp) > 273);
	/* port-specific in-capsule size */
	fake_env_teardown(&env);

	fake_env_setup(&env, "file:1M");
	env.port->in_capsule_size = 16384;
	fake_env_connect(&env, 0, 0, 0);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CTRL, 0, 0, 4096), 0);
	CU_ASSERT_EQUAL(id->vwc, NVME_CTRL_VWC_PRESENT | NVME_CTRL_VWC_FLUSH_ALL_NSID);
	CU_ASSERT_EQUAL(get_le32(&id->ioccsz), (16384 + 64) / 16);
	/* short buffer */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CTRL, 0, 0, 1024), ST_SGL_LEN);
	fake_env_teardown(&env);
}

static void test_identify_ns(void)
{
	const struct nvme_id_ns *id = (const void *)buf;
	struct nvmf_ns_opts o = { .path = "ram:2M", .block_size = 4096, .nsid = 5 };
	char err[64];
	uint8_t zero[4096] = { 0 };

	fake_env_setup(&env, "ram:1M");
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)), 5);
	fake_env_connect(&env, 0, 0, 0);

	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS, 1, 0, 4096), 0);
	CU_ASSERT_EQUAL(get_le64(&id->nsze), 2048);
	CU_ASSERT_EQUAL(get_le64(&id->ncap), 2048);
	CU_ASSERT_EQUAL(get_le64(&id->nuse), 2048);
	CU_ASSERT_EQUAL(id->nlbaf, 0);
	CU_ASSERT_EQUAL(id->flbas, 0);
	CU_ASSERT_EQUAL(id->lbaf[0].lbads, 9);
	CU_ASSERT_EQUAL(get_le16(&id->lbaf[0].ms), 0);
	CU_ASSERT_EQUAL(id->nmic, NVME_NS_NMIC_SHARED);
	CU_ASSERT_EQUAL(id->dlfeat, NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC);
	CU_ASSERT(id->nsfeat & NVME_NS_NSFEAT_THIN);
	CU_ASSERT(!memcmp(id->nguid, env.subsys->ns[1]->nguid, 16));
	CU_ASSERT(!memcmp(id->eui64, env.subsys->ns[1]->eui64, 8));
	CU_ASSERT(memcmp(id->nguid, zero, 16));

	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS, 5, 0, 4096), 0);
	CU_ASSERT_EQUAL(get_le64(&id->nsze), 512);
	CU_ASSERT_EQUAL(id->lbaf[0].lbads, 12);

	/* inactive: zeroes; invalid: error */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS, 2, 0, 4096), 0);
	CU_ASSERT(!memcmp(buf, zero, 4096));
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS, 0, 0, 4096), ST_INVALID_NS);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS, NVMF_MAX_NAMESPACES + 1, 0, 4096),
			ST_INVALID_NS);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS, 0xffffffff, 0, 4096),
			ST_INVALID_NS);
	fake_env_teardown(&env);
}

static void test_identify_lists(void)
{
	struct nvmf_ns_opts o = { .path = "ram:64K" };
	char err[64];
	static const uint32_t extra[] = { 3, 1024, 7 };

	fake_env_setup(&env, "ram:1M");
	for (size_t i = 0; i < 3; i++) {
		o.nsid = extra[i];
		CU_ASSERT_EQUAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)),
				(int)extra[i]);
	}
	fake_env_connect(&env, 0, 0, 0);

	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS_ACTIVE_LIST, 0, 0, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 1);
	CU_ASSERT_EQUAL(get_le32(buf + 4), 3);
	CU_ASSERT_EQUAL(get_le32(buf + 8), 7);
	CU_ASSERT_EQUAL(get_le32(buf + 12), 1024);
	CU_ASSERT_EQUAL(get_le32(buf + 16), 0);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS_ACTIVE_LIST, 3, 0, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 7);
	CU_ASSERT_EQUAL(get_le32(buf + 4), 1024);
	CU_ASSERT_EQUAL(get_le32(buf + 8), 0);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS_ACTIVE_LIST, 1024, 0, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 0);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS_ACTIVE_LIST, 0xfffffffe, 0, 4096),
			ST_INVALID_NS);

	/* descriptor list: EUI-64, NGUID, UUID, CSI for every active namespace */
	for (uint32_t nsid = 1; nsid <= 1024; nsid++) {
		struct nvmf_ns *ns = env.subsys->ns[nsid];

		if (!ns)
			continue;
		CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS_DESC_LIST, nsid, 0, 4096), 0);
		CU_ASSERT_EQUAL(buf[0], NVME_NIDT_EUI64);
		CU_ASSERT_EQUAL(buf[1], 8);
		CU_ASSERT(!memcmp(buf + 4, ns->eui64, 8));
		CU_ASSERT_EQUAL(buf[12], NVME_NIDT_NGUID);
		CU_ASSERT_EQUAL(buf[13], 16);
		CU_ASSERT(!memcmp(buf + 16, ns->nguid, 16));
		CU_ASSERT_EQUAL(buf[32], NVME_NIDT_UUID);
		CU_ASSERT_EQUAL(buf[33], 16);
		CU_ASSERT(!memcmp(buf + 36, ns->uuid, 16));
		CU_ASSERT_EQUAL(buf[52], NVME_NIDT_CSI);
		CU_ASSERT_EQUAL(buf[53], 1);
		CU_ASSERT_EQUAL(buf[56], 0);
		CU_ASSERT_EQUAL(buf[57], 0); /* end of list */
		CU_ASSERT_EQUAL(buf[4095], 0);
	}
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NS_DESC_LIST, 2, 0, 4096),
			ST_INVALID_NS);

	/* other CSI or unknown CNS: Invalid Field (CNS 05h/06h: test_identify_nvm_cs) */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_CTRL, 0, 2, 4096), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(identify(&env.admin, 0x10, 0, 0, 4096), ST_INVALID_FIELD);
	fake_env_teardown(&env);
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* CNS 05h/06h for the NVM command set, and the CNS values that are refused. */
static void test_identify_nvm_cs(void)
{
	const struct nvme_id_ctrl_nvm *c = (const void *)buf;
	const struct nvme_id_ns_nvm *n = (const void *)buf;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);

	/* controller: VSL = MDTS (128 KiB = 2^5 4 KiB pages), the other limits none */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_CTRL, 0, NVME_CSI_NVM, 4096), 0);
	CU_ASSERT_EQUAL(c->vsl, 5);
	CU_ASSERT_EQUAL(c->wzsl, 0);
	CU_ASSERT_EQUAL(c->wusl, 0);
	CU_ASSERT_EQUAL(c->dmrl, 0);
	CU_ASSERT_EQUAL(get_le32(&c->dmrsl), 0);
	CU_ASSERT_EQUAL(get_le64(&c->dmsl), 0);
	CU_ASSERT(all_bytes(buf + 16, 4096 - 16, 0));
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_CTRL, 0, 1, 4096), ST_INVALID_FIELD);

	/* namespace: no storage tag, no PI, the one format's ELBAF zero; all the page
	 * written (no stale bytes) */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_NS, 1, NVME_CSI_NVM, 4096), 0);
	CU_ASSERT_EQUAL(get_le64(&n->lbstm), 0);
	CU_ASSERT_EQUAL(n->pic, 0);
	CU_ASSERT_EQUAL(get_le32(&n->elbaf[0]), 0);
	CU_ASSERT(all_bytes(buf, 4096, 0));
	/* inactive: zero filled; invalid NSID; other command sets */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_NS, 2, NVME_CSI_NVM, 4096), 0);
	CU_ASSERT(all_bytes(buf, 4096, 0));
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_NS, 0, NVME_CSI_NVM, 4096),
			ST_INVALID_NS);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_NS, NVMF_NSID_ALL, NVME_CSI_NVM, 4096),
			ST_INVALID_NS);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_NS, 1, 2, 4096), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_NS, 1, 1, 4096), ST_INVALID_FIELD);

	/* NVMe 2.0 structures a 1.3 controller does not have */
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_CS_INDEP_NS, 1, 0, 4096),
			ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_IO_CMD_SET, 0, 0, 4096), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(identify(&env.admin, NVME_ID_CNS_NVMSET_LIST, 0, 0, 4096),
			ST_INVALID_FIELD);
	fake_env_teardown(&env);
}

static uint16_t get_lba_status(uint32_t nsid, uint64_t slba, uint32_t mndw, uint8_t atype,
			       uint16_t rl, uint32_t len)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_GET_LBA_STATUS, nsid);
	put_le64(&cmd.cdw10, slba);
	put_le32(&cmd.cdw12, mndw);
	put_le32(&cmd.cdw13, (uint32_t)atype << 24 | rl);
	memset(buf, 0x77, sizeof(buf));
	return fake_exec(&env.admin, &cmd, buf, len, NULL);
}

/* Get LBA Status (86h): nothing potentially unrecoverable, an empty complete list. */
static void test_get_lba_status(void)
{
	static uint8_t w[4096];
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 1, 1);
	/* written and unwritten blocks alike: no descriptors (allocation is not this) */
	memset(w, 1, sizeof(w));
	fake_cmd(&cmd, NVME_OPC_WRITE, 1);
	put_le64(&cmd.cdw10, 8);
	put_le32(&cmd.cdw12, 7);
	CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, w, 4096, NULL), 0);
	for (uint8_t atype = NVME_LBA_STATUS_ATYPE_SCAN; atype <= NVME_LBA_STATUS_ATYPE_TRACKED;
	     atype++) {
		CU_ASSERT_EQUAL(get_lba_status(1, 0, 63, atype, 0, 256), 0);
		CU_ASSERT_EQUAL(get_le32(buf), 0); /* NLSD */
		CU_ASSERT_EQUAL(buf[4], NVME_LBA_STATUS_CMPC_COMPLETE);
		CU_ASSERT(all_bytes(buf + 5, 256 - 5, 0));
	}
	/* the header alone (MNDW 1: two dwords) */
	CU_ASSERT_EQUAL(get_lba_status(1, 2047, 1, NVME_LBA_STATUS_ATYPE_TRACKED, 1, 8), 0);
	CU_ASSERT_EQUAL(buf[4], NVME_LBA_STATUS_CMPC_COMPLETE);
	/* refused: other action types, MNDW below the header, SLBA past the end, no
	 * namespace, a buffer shorter than the header */
	CU_ASSERT_EQUAL(get_lba_status(1, 0, 63, 0x02, 0, 256), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_lba_status(1, 0, 63, 0x12, 0, 256), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_lba_status(1, 0, 0, NVME_LBA_STATUS_ATYPE_SCAN, 0, 256),
			ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_lba_status(1, 2048, 63, NVME_LBA_STATUS_ATYPE_SCAN, 0, 256),
			ST_LBA_RANGE);
	CU_ASSERT_EQUAL(get_lba_status(2, 0, 63, NVME_LBA_STATUS_ATYPE_SCAN, 0, 256),
			ST_INVALID_NS);
	CU_ASSERT_EQUAL(get_lba_status(1, 0, 63, NVME_LBA_STATUS_ATYPE_SCAN, 0, 4), ST_SGL_LEN);

	/* its log page (0Eh): a header and no namespace elements */
	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, 0);
	put_le32(&cmd.cdw10, NVME_LOG_LBA_STATUS | (16 / 4 - 1) << 16);
	memset(buf, 0x77, sizeof(buf));
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, buf, 16, NULL), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 16); /* LSLPLEN */
	CU_ASSERT(all_bytes(buf + 4, 12, 0));
	/* its feature (15h): kept as set */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_LBA_STATUS_ATTR);
	put_le32(&cmd.cdw11, 50u << 16 | 10);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);
	fake_cmd(&cmd, NVME_ADMIN_GET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_LBA_STATUS_ATTR);
	{
		uint32_t dw0 = 0;

		CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, &dw0), 0);
		CU_ASSERT_EQUAL(dw0, 50u << 16 | 10);
	}
	fake_env_teardown(&env);
}

static void test_dispatch(void)
{
	static const struct {
		uint8_t opc;
		uint16_t status;
	} nvm[] = {
		{ NVME_ADMIN_DELETE_IO_SQ, ST_INVALID_OPCODE },
		{ NVME_ADMIN_CREATE_IO_CQ, ST_INVALID_OPCODE },
		{ NVME_ADMIN_NS_MANAGEMENT, ST_INVALID_OPCODE },
		{ NVME_ADMIN_FORMAT_NVM, ST_INVALID_OPCODE },
		{ NVME_ADMIN_SECURITY_RECEIVE, ST_INVALID_OPCODE },
		{ NVME_ADMIN_FIRMWARE_COMMIT, ST_INVALID_OPCODE },
		{ NVME_ADMIN_KEEP_ALIVE, 0 },
		{ NVME_ADMIN_ABORT, 0 },
		{ 0xc1, ST_INVALID_OPCODE },
	};
	struct nvme_cmd cmd;
	uint32_t dw0 = 0;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	for (size_t i = 0; i < sizeof(nvm) / sizeof(nvm[0]); i++) {
		fake_cmd(&cmd, nvm[i].opc, 0);
		CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, &dw0), nvm[i].status);
		if (nvm[i].opc == NVME_ADMIN_ABORT)
			CU_ASSERT_EQUAL(dw0, 1); /* not aborted */
	}
	/* NVM opcodes on the admin queue are admin opcodes: Read (02h) is Get Log Page */
	fake_cmd(&cmd, NVME_OPC_WRITE, 1);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	fake_env_teardown(&env);
}

static void test_discovery_ctrl(void)
{
	const struct nvme_id_ctrl *id = (const void *)buf;
	struct fake_qpair q;
	struct fake_connect c;
	struct nvme_cmd cmd;
	uint32_t dw0;
	static const uint8_t refused[] = {
		NVME_ADMIN_ABORT, NVME_ADMIN_NS_MANAGEMENT, NVME_ADMIN_FORMAT_NVM, 0xc0,
	};

	fake_env_setup(&env, "ram:1M");
	fake_qpair_init(&q, env.tgt, env.port, NULL);
	fake_connect_defaults(&c, 0);
	c.subnqn = NVME_DISCOVERY_NQN;
	CU_ASSERT_EQUAL_FATAL(fake_connect(&q, &c, &dw0), 0);
	CU_ASSERT_EQUAL(q.qp.ctrlr->kato_ms, NVMF_DISC_KATO_MS); /* KATO 0: two minutes */
	CU_ASSERT_EQUAL(fake_prop_set(&q, NVME_REG_CC, NVME_CC_EN), 0); /* no IOSQES needed */
	CU_ASSERT_EQUAL(identify(&q, NVME_ID_CNS_CTRL, 0, 0, 4096), 0);
	CU_ASSERT_EQUAL(id->cntrltype, NVME_CTRL_CNTRLTYPE_DISCOVERY);
	CU_ASSERT_EQUAL(get_le16(&id->cntlid), dw0);
	CU_ASSERT_STRING_EQUAL(id->subnqn, NVME_DISCOVERY_NQN);
	CU_ASSERT_EQUAL(get_le16(&id->kas), 1);
	CU_ASSERT(get_le16(&id->maxcmd) > 0);
	CU_ASSERT_EQUAL(get_le32(&id->ver), 0x10300);
	CU_ASSERT_EQUAL(id->lpa, NVME_CTRL_LPA_EXT_DATA);
	CU_ASSERT_EQUAL(get_le32(&id->oaes), NVME_AEN_CFG_DISC_CHANGE);
	CU_ASSERT_EQUAL(get_le32(&id->nn), 0);
	CU_ASSERT_EQUAL(identify(&q, NVME_ID_CNS_NS, 1, 0, 4096), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(identify(&q, NVME_ID_CNS_NS_ACTIVE_LIST, 0, 0, 4096), ST_INVALID_FIELD);
	for (size_t i = 0; i < sizeof(refused); i++) {
		fake_cmd(&cmd, refused[i], 0);
		CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), ST_INVALID_OPCODE);
	}
	fake_cmd(&cmd, NVME_ADMIN_KEEP_ALIVE, 0);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), 0);
	/* features: KATO and AEC only */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_NUM_QUEUES);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), ST_INVALID_FIELD);
	put_le32(&cmd.cdw10, NVME_FEAT_KATO);
	put_le32(&cmd.cdw11, 30000);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), 0);
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_DISC_CHANGE);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), 0);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_NS_ATTR);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), ST_INVALID_FIELD);
	/* log pages: 70h only */
	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, 0);
	put_le32(&cmd.cdw10, NVME_LOG_SMART | 127u << 16);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, buf, 512, NULL),
			NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE));
	fake_qpair_close(&q);
	fake_env_teardown(&env);
}

static void test_aer(void)
{
	struct fake_req *fr[NVMF_MAX_AER + 1];
	struct nvme_cmd cmd;
	struct nvmf_ns_opts o = { .path = "ram:64K" };
	char err[64];

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_NS_ATTR);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);

	for (int i = 0; i <= NVMF_MAX_AER; i++) {
		fr[i] = fake_req_alloc(&env.admin);
		fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
		fake_req_prep(fr[i], &cmd, NULL, 0);
		nvmf_req_exec(&fr[i]->req);
	}
	for (int i = 0; i < NVMF_MAX_AER; i++)
		CU_ASSERT_EQUAL(fr[i]->completions, 0);
	CU_ASSERT_EQUAL(fr[NVMF_MAX_AER]->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr[NVMF_MAX_AER]),
			NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC,
				    NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED));

	/* a namespace appears: one notice, the oldest AER completes */
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)), 2);
	CU_ASSERT_EQUAL(fr[0]->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr[0]), 0);
	CU_ASSERT_EQUAL(fake_dw0(fr[0]), 0x00040002);
	CU_ASSERT_EQUAL(fr[1]->completions, 0);
	/* masked until the log is read */
	CU_ASSERT_EQUAL(nvmf_subsys_remove_ns(env.subsys, 2), 0);
	CU_ASSERT_EQUAL(fr[1]->completions, 0);

	/* the host goes away: held AERs are aborted */
	nvmf_qpair_disconnected(&env.admin.qp);
	for (int i = 1; i < NVMF_MAX_AER; i++) {
		CU_ASSERT_EQUAL(fr[i]->completions, 1);
		CU_ASSERT_EQUAL(fake_status(fr[i]), ST_ABORTED_SQ);
	}
	for (int i = 0; i <= NVMF_MAX_AER; i++)
		fake_req_free(fr[i]);
	fake_env_teardown(&env);
}

/* The backend saw its data grow by itself (an RBD image resized in the cluster): the
 * namespace takes the new size and the host gets Namespace Attribute Changed. */
static void test_backend_resize(void)
{
	static uint8_t id[4096];
	struct fake_req *aer;
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_NS_ATTR);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);
	aer = fake_req_alloc(&env.admin);
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 0);

	CU_ASSERT_EQUAL(fake_bdev_grow(env.subsys->ns[1]->bdev, 2u << 20), 0);
	CU_ASSERT_EQUAL(env.subsys->ns[1]->nblocks, 4096);
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(fake_dw0(aer), 0x00040002); /* notice, NS attribute changed, log 04h */
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 1);
	put_le32(&cmd.cdw10, NVME_ID_CNS_NS);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, id, 4096, NULL), 0);
	CU_ASSERT_EQUAL(get_le64(id), 4096); /* NSZE */
	/* the same size again: nothing to announce */
	nvmf_ns_backend_resized(env.subsys->ns[1]);
	fake_req_free(aer);
	fake_env_teardown(&env);
}

static const CU_TestInfo tests[] = {
	{ "identify controller", test_identify_ctrl },
	{ "backend resize announced", test_backend_resize },
	{ "identify namespace", test_identify_ns },
	{ "identify lists and descriptors", test_identify_lists },
	{ "identify NVM command set (CNS 05h/06h)", test_identify_nvm_cs },
	{ "get lba status", test_get_lba_status },
	{ "admin opcode dispatch", test_dispatch },
	{ "discovery controller", test_discovery_ctrl },
	{ "asynchronous event requests", test_aer },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("admin", tests);
}
