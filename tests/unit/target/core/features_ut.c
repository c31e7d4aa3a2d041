/* SPDX-License-Identifier: MIT */
/* Get/Set Features on NVM controllers. */
#include <string.h>

#include "common/endian.h"
#include "tests/unit/target/core/fakes.h"

static struct fake_env env;

static uint16_t get_feat(uint8_t fid, unsigned int sel, uint32_t cdw11, void *data,
			 uint32_t len, uint32_t *dw0)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_GET_FEATURES, 0);
	put_le32(&cmd.cdw10, fid | sel << NVME_FEAT_SEL_SHIFT);
	put_le32(&cmd.cdw11, cdw11);
	return fake_exec(&env.admin, &cmd, data, len, dw0);
}

static uint16_t set_feat(uint8_t fid, uint32_t cdw11, bool save, uint32_t *dw0)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, fid | (save ? NVME_FEAT_SAVE : 0));
	put_le32(&cmd.cdw11, cdw11);
	return fake_exec(&env.admin, &cmd, NULL, 0, dw0);
}

static void test_num_queues(void)
{
	uint32_t dw0 = 0;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	/* default grant: max_io_queues (64) */
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_NUM_QUEUES, 0, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 63 | 63u << 16);
	/* fewer than the limit: as asked */
	CU_ASSERT_EQUAL(set_feat(NVME_FEAT_NUM_QUEUES, 3 | 1u << 16, false, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 3 | 1u << 16);
	CU_ASSERT_EQUAL(env.admin.qp.ctrlr->max_io_qid, 2);
	/* more than the limit: the limit */
	CU_ASSERT_EQUAL(set_feat(NVME_FEAT_NUM_QUEUES, 200 | 200u << 16, false, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 63 | 63u << 16);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_NUM_QUEUES, 0, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 63 | 63u << 16);
	/* 65536 queues is not a valid request */
	CU_ASSERT_EQUAL(set_feat(NVME_FEAT_NUM_QUEUES, 0xffff, false, NULL), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(set_feat(NVME_FEAT_NUM_QUEUES, 0xffffu << 16, false, NULL),
			ST_INVALID_FIELD);
	fake_env_teardown(&env);
}

static void test_values(void)
{
	static const struct {
		uint8_t fid;
		uint32_t set, get_cdw11, expect;
	} rt[] = {
		{ NVME_FEAT_ARBITRATION, 0x03020103, 0, 0x03020103 },
		{ NVME_FEAT_ERR_RECOVERY, 0x0000000a, 0, 0x0000000a },
		{ NVME_FEAT_IRQ_COALESCE, 0x0000ff01, 0, 0x0000ff01 },
		{ NVME_FEAT_WRITE_ATOMIC, 1, 0, 1 },
		{ NVME_FEAT_ASYNC_EVENT, NVME_AEN_CFG_NS_ATTR | 0x3, 0,
		  NVME_AEN_CFG_NS_ATTR | 0x3 },
		{ NVME_FEAT_KATO, 15000, 0, 15000 },
		{ NVME_FEAT_KATO, 1050, 0, 1100 },                   /* rounded up to 100 ms */
		{ NVME_FEAT_KATO, 0xffffffff, 0, NVMF_KATO_MAX_MS }, /* no wrap: clamped */
		{ NVME_FEAT_KATO, 0xffffffa0, 0, NVMF_KATO_MAX_MS },
		{ NVME_FEAT_TEMP_THRESH, 330, 0, 330 },
		{ NVME_FEAT_TEMP_THRESH, 260 | 1u << 20, 1u << 20, 260 | 1u << 20 },
		{ NVME_FEAT_POWER_MGMT, 0, 0, 0 },
	};
	uint32_t dw0;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		CU_ASSERT_EQUAL(set_feat(rt[i].fid, rt[i].set, false, NULL), 0);
		dw0 = 0xdead;
		CU_ASSERT_EQUAL(get_feat(rt[i].fid, NVME_FEAT_SEL_CURRENT, rt[i].get_cdw11, NULL, 0,
					 &dw0),
				0);
		CU_ASSERT_EQUAL(dw0, rt[i].expect);
	}
	/* defaults */
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_TEMP_THRESH, NVME_FEAT_SEL_DEFAULT, 0, NULL, 0, &dw0),
			0);
	CU_ASSERT_EQUAL(dw0, NVMF_TEMP_WARN);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_KATO, NVME_FEAT_SEL_DEFAULT, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0);
	/* saved = default (nothing is saveable) */
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_ARBITRATION, NVME_FEAT_SEL_SAVED, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0);
	fake_env_teardown(&env);
}

static void test_invalid(void)
{
	static const struct {
		uint8_t fid;
		uint32_t cdw11;
		bool save;
		uint16_t status;
	} bad[] = {
		{ NVME_FEAT_AUTO_PST, 0, false, ST_INVALID_FIELD },
		{ NVME_FEAT_TIMESTAMP, 0, false, ST_INVALID_FIELD },
		{ NVME_FEAT_RESV_MASK, 0, false, ST_INVALID_NS },    /* namespace-specific */
		{ NVME_FEAT_RESV_PERSIST, 1, false, ST_INVALID_NS }, /* NSID 0 */
		{ 0x7d, 0, false, ST_INVALID_FIELD },
		{ NVME_FEAT_POWER_MGMT, 1, false, ST_INVALID_FIELD },
		{ NVME_FEAT_ERR_RECOVERY, 1u << 16, false, ST_INVALID_FIELD },
		{ NVME_FEAT_TEMP_THRESH, 2u << 20, false, ST_INVALID_FIELD },
		{ NVME_FEAT_TEMP_THRESH, 3u << 16, false, ST_INVALID_FIELD },
		{ NVME_FEAT_ASYNC_EVENT, NVME_AEN_CFG_DISC_CHANGE, false, ST_INVALID_FIELD },
		{ NVME_FEAT_VOLATILE_WC, 1, false, ST_INVALID_FIELD }, /* ram: no cache */
		{ NVME_FEAT_HOST_ID, 0, false, ST_CMD_SEQ },
		{ NVME_FEAT_ARBITRATION, 0, true,
		  NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_FEATURE_ID_NOT_SAVEABLE) },
	};

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(set_feat(bad[i].fid, bad[i].cdw11, bad[i].save, NULL),
				bad[i].status);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_AUTO_PST, 0, 0, NULL, 0, NULL), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_ARBITRATION, 4, 0, NULL, 0, NULL), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_TEMP_THRESH, 0, 2u << 20, NULL, 0, NULL),
			ST_INVALID_FIELD);
	fake_env_teardown(&env);
}

static void test_supported_caps(void)
{
	uint32_t dw0;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_NUM_QUEUES, NVME_FEAT_SEL_SUPPORTED, 0, NULL, 0, &dw0),
			0);
	CU_ASSERT_EQUAL(dw0, 1u << 2); /* changeable, not saveable, not per namespace */
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_HOST_ID, NVME_FEAT_SEL_SUPPORTED, 1, NULL, 16, &dw0),
			0);
	CU_ASSERT_EQUAL(dw0, 0);
	fake_env_teardown(&env);
}

static void test_host_id(void)
{
	uint8_t id[16];

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_HOST_ID, 0, 1, id, 16, NULL), 0);
	for (int i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(id[i], 0xa0 + i);
	/* only the 128-bit form */
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_HOST_ID, 0, 0, id, 16, NULL), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_HOST_ID, 0, 1, id, 8, NULL), ST_SGL_LEN);
	fake_env_teardown(&env);
}

static void test_vwc(void)
{
	uint32_t dw0;

	fake_env_setup(&env, "file:1M");
	fake_env_connect(&env, 0, 0, 0);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_VOLATILE_WC, 0, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 1);
	CU_ASSERT_EQUAL(set_feat(NVME_FEAT_VOLATILE_WC, 0, false, NULL), 0);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_VOLATILE_WC, 0, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0);
	CU_ASSERT_EQUAL(set_feat(NVME_FEAT_VOLATILE_WC, 1, false, NULL), 0);
	CU_ASSERT_EQUAL(get_feat(NVME_FEAT_VOLATILE_WC, 0, 0, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 1);
	fake_env_teardown(&env);
}

static const CU_TestInfo tests[] = {
	{ "number of queues", test_num_queues },
	{ "values round trip", test_values },
	{ "invalid requests", test_invalid },
	{ "supported capabilities", test_supported_caps },
	{ "host identifier", test_host_id },
	{ "volatile write cache", test_vwc },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("features", tests);
}
