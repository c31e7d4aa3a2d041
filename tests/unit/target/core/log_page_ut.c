/* SPDX-License-Identifier: MIT */
/* Get Log Page: error log, SMART, firmware slots, changed namespaces, command effects,
 * NUMD/LPO handling and invalid requests. */
#include <string.h>

#include "common/endian.h"
#include "tests/unit/target/core/fakes.h"

static struct fake_env env;
static uint8_t page[16384];

#define ST_INVALID_LOG NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE)

static uint16_t get_log(struct fake_qpair *q, uint8_t lid, uint32_t nsid, uint32_t len,
			uint64_t lpo, bool rae, uint32_t sgl_len)
{
	struct nvme_cmd cmd;
	uint32_t numd = len / 4 - 1;

	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, nsid);
	put_le32(&cmd.cdw10, lid | (rae ? NVME_LOG_RAE : 0) | (numd & 0xffff) << 16);
	put_le32(&cmd.cdw11, numd >> 16);
	put_le32(&cmd.cdw12, (uint32_t)lpo);
	put_le32(&cmd.cdw13, (uint32_t)(lpo >> 32));
	memset(page, 0x99, sizeof(page));
	return fake_exec(q, &cmd, page, sgl_len, NULL);
}

static uint16_t io_cmd(uint8_t opc, uint64_t slba, uint32_t nlb, void *data, uint32_t len)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, opc, 1);
	put_le32(&cmd.cdw10, (uint32_t)slba);
	put_le32(&cmd.cdw12, nlb - 1);
	return fake_exec(&env.io[0], &cmd, data, len, NULL);
}

static void test_invalid(void)
{
	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 1, 1);
	CU_ASSERT_EQUAL(get_log(&env.admin, 0x06, 0, 512, 0, false, 512), ST_INVALID_LOG);
	CU_ASSERT_EQUAL(get_log(&env.admin, 0xc0, 0, 512, 0, false, 512), ST_INVALID_LOG);
	/* the discovery log belongs to discovery controllers */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_DISCOVERY, 0, 1024, 0, false, 1024),
			ST_INVALID_LOG);
	/* LPO must be dword aligned, and within the page */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 64, 2, false, 64),
			ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 64, 516, false, 64),
			ST_INVALID_FIELD);
	/* buffer shorter than NUMD */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 512, 0, false, 256), ST_SGL_LEN);
	/* SMART is controller-wide only */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 1, 512, 0, false, 512),
			ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0xffffffff, 512, 0, false, 512), 0);
	fake_env_teardown(&env);
}

static void test_smart(void)
{
	static uint8_t buf[65536];
	const struct nvme_smart_log *l = (const void *)page;
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 1, 1);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(get_le16(l->temperature), 0x0141);
	CU_ASSERT_EQUAL(l->avail_spare, 100);
	CU_ASSERT_EQUAL(l->critical_warning, 0);
	CU_ASSERT_EQUAL(get_le64(l->data_units_read), 0);
	CU_ASSERT_EQUAL(get_le64(l->host_writes), 0);
	CU_ASSERT_EQUAL(get_le64(l->unsafe_shutdowns), 0);
	CU_ASSERT_EQUAL(get_le64(l->power_on_hours), 0);

	/* 64 KiB written = 128 units of 512 bytes -> 1 (rounded up); 3 x 64 KiB read -> 1 */
	CU_ASSERT_EQUAL(io_cmd(NVME_OPC_WRITE, 0, 128, buf, 65536), 0);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(io_cmd(NVME_OPC_READ, 0, 128, buf, 65536), 0);
	CU_ASSERT_EQUAL(io_cmd(NVME_OPC_READ, 4096, 1, buf, 512), ST_LBA_RANGE);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0xffffffff, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(get_le64(l->data_units_written), 1);
	CU_ASSERT_EQUAL(get_le64(l->data_units_read), 1);
	CU_ASSERT_EQUAL(get_le64(l->host_writes), 1);
	CU_ASSERT_EQUAL(get_le64(l->host_reads), 3);
	CU_ASSERT_EQUAL(get_le64(l->num_err_log_entries), 1);
	/* 1000 units of 512 bytes are one data unit; 1001 are two */
	for (int i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(io_cmd(NVME_OPC_WRITE, 0, 128, buf, 65536), 0);
	CU_ASSERT_EQUAL(io_cmd(NVME_OPC_WRITE, 0, 104, buf, 104 * 512), 0);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(get_le64(l->data_units_written), 1);
	CU_ASSERT_EQUAL(io_cmd(NVME_OPC_WRITE, 0, 1, buf, 512), 0);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(get_le64(l->data_units_written), 2);
	CU_ASSERT_EQUAL(get_le64(l->host_writes), 9);

	/* temperature above the host's threshold raises the critical warning bit */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_TEMP_THRESH);
	put_le32(&cmd.cdw11, 300);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(l->critical_warning, 1u << 1);

	/* counters survive the I/O queue going away */
	fake_qpair_close(&env.io[0]);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_SMART, 0, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(get_le64(l->host_reads), 3);
	CU_ASSERT_EQUAL(get_le64(l->host_writes), 9);
	fake_env_teardown(&env);
}

static void test_error_log(void)
{
	const struct nvme_error_log_entry *e = (const void *)page;
	struct nvme_cmd cmd;
	uint16_t cids[70];

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 1, 1);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_ERROR, 0, 4096, 0, false, 4096), 0);
	CU_ASSERT_EQUAL(get_le64(&e[0].error_count), 0);

	for (int i = 0; i < 70; i++) {
		fake_cmd(&cmd, NVME_OPC_READ, 9); /* inactive namespace */
		put_le32(&cmd.cdw10, (uint32_t)i);
		cids[i] = get_le16(&cmd.cid);
		CU_ASSERT_EQUAL(fake_exec(&env.io[0], &cmd, NULL, 512, NULL), ST_INVALID_NS);
	}
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_ERROR, 0, 4096, 0, false, 4096), 0);
	/* most recent first, error count increasing */
	CU_ASSERT_EQUAL(get_le64(&e[0].error_count), 70);
	CU_ASSERT_EQUAL(get_le64(&e[1].error_count), 69);
	CU_ASSERT_EQUAL(get_le64(&e[63].error_count), 7);
	CU_ASSERT_EQUAL(get_le16(&e[0].cid), cids[69]);
	CU_ASSERT_EQUAL(get_le16(&e[0].sqid), 1);
	CU_ASSERT_EQUAL(get_le16(&e[0].status), ST_INVALID_NS);
	CU_ASSERT_EQUAL(get_le32(&e[0].nsid), 9);
	CU_ASSERT_EQUAL(get_le64(&e[0].lba), 69);
	CU_ASSERT_EQUAL(e[0].trtype, NVMF_TRTYPE_TCP);
	/* with LPO: the third entry first */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_ERROR, 0, 64, 128, false, 64), 0);
	CU_ASSERT_EQUAL(get_le64(&e[0].error_count), 68);
	fake_env_teardown(&env);
}

static void test_fw_and_effects(void)
{
	const struct nvme_fw_slot_log *fw = (const void *)page;
	const struct nvme_cmd_effects_log *ef = (const void *)page;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_FW_SLOT, 0, 512, 0, false, 512), 0);
	CU_ASSERT_EQUAL(fw->afi, 1);
	CU_ASSERT(!memcmp(fw->frs[0], PACKAGE_VERSION, strlen(PACKAGE_VERSION)));
	CU_ASSERT_EQUAL(fw->frs[1][0], 0);

	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_CMD_EFFECTS, 0, 4096, 0, false, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(&ef->acs[NVME_ADMIN_IDENTIFY]), NVME_CMD_EFFECTS_CSUPP);
	CU_ASSERT_EQUAL(get_le32(&ef->acs[NVME_ADMIN_KEEP_ALIVE]), NVME_CMD_EFFECTS_CSUPP);
	CU_ASSERT_EQUAL(get_le32(&ef->acs[NVME_ADMIN_FORMAT_NVM]), 0);
	CU_ASSERT_EQUAL(get_le32(&ef->iocs[NVME_OPC_READ]), NVME_CMD_EFFECTS_CSUPP);
	CU_ASSERT_EQUAL(get_le32(&ef->iocs[NVME_OPC_WRITE]),
			NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	CU_ASSERT_EQUAL(get_le32(&ef->iocs[NVME_OPC_DATASET_MANAGEMENT]),
			NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	CU_ASSERT_EQUAL(get_le32(&ef->iocs[NVME_OPC_VERIFY]), NVME_CMD_EFFECTS_CSUPP);
	CU_ASSERT_EQUAL(get_le32(&ef->iocs[NVME_OPC_WRITE_UNCORRECTABLE]), 0);
	/* a larger request than the page: the rest reads as zeroes */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_FW_SLOT, 0, 1024, 0, false, 1024), 0);
	CU_ASSERT_EQUAL(page[1023], 0);
	fake_env_teardown(&env);
}

static void test_changed_ns(void)
{
	struct nvmf_ns_opts o = { .path = "ram:64K" };
	char err[64];
	struct fake_req *aer;
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 0, 0);
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_NS_ATTR);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);

	/* changes are recorded even without an outstanding AER */
	o.nsid = 4;
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)), 4);
	o.nsid = 2;
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)), 2);
	CU_ASSERT_EQUAL(nvmf_subsys_remove_ns(env.subsys, 4), 0);

	/* the pending notice completes the next AER right away */
	aer = fake_req_alloc(&env.admin);
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(fake_dw0(aer), nvme_aer_dw0(NVME_AER_TYPE_NOTICE, 0, NVME_LOG_CHANGED_NS));

	/* RAE keeps the list and the mask */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_CHANGED_NS, 0, 4096, 0, true, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(page), 4);
	CU_ASSERT_EQUAL(get_le32(page + 4), 2);
	CU_ASSERT_EQUAL(get_le32(page + 8), 0);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_CHANGED_NS, 0, 4096, 0, false, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(page), 4);
	/* read without RAE: cleared and unmasked */
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_CHANGED_NS, 0, 4096, 0, false, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(page), 0);

	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 0);
	o.nsid = 9;
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)), 9);
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_CHANGED_NS, 0, 4096, 0, false, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(page), 9);
	CU_ASSERT_EQUAL(get_le32(page + 4), 0);
	fake_req_free(aer);

	/* more than 1024 changes: overflow marker */
	for (uint32_t i = 0; i < 1030; i++)
		nvmf_ctrlr_notify_ns_changed(env.admin.qp.ctrlr, i + 1);
	CU_ASSERT_EQUAL(get_log(&env.admin, NVME_LOG_CHANGED_NS, 0, 4096, 0, false, 4096), 0);
	CU_ASSERT_EQUAL(get_le32(page), NVME_CHANGED_NS_OVERFLOW);
	CU_ASSERT_EQUAL(get_le32(page + 4), 0);
	fake_env_teardown(&env);
}

static const CU_TestInfo tests[] = {
	{ "invalid requests", test_invalid },
	{ "SMART / health", test_smart },
	{ "error information", test_error_log },
	{ "firmware slots, command effects", test_fw_and_effects },
	{ "changed namespace list", test_changed_ns },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("log_page", tests);
}
