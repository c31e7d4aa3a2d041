/* SPDX-License-Identifier: MIT */
/* ANA: the state machine, the log page 0Ch (with and without RGO), Identify fields, the
 * ANA Change notice and the path status of I/O commands. */
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "core/ana.h"
#include "tests/unit/target/core/fakes.h"

static struct fake_env env;
static uint8_t page[16384];

static uint16_t get_ana_log(bool rgo, bool rae, uint32_t len)
{
	struct nvme_cmd cmd;
	uint32_t numd = len / 4 - 1;

	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, 0);
	put_le32(&cmd.cdw10, NVME_LOG_ANA | (rgo ? NVME_LOG_ANA_LSP_RGO : 0) |
				     (rae ? NVME_LOG_RAE : 0) | (numd & 0xffff) << 16);
	memset(page, 0x99, sizeof(page));
	return fake_exec(&env.admin, &cmd, page, len, NULL);
}

static uint16_t read_blk(struct fake_qpair *q, uint32_t nsid)
{
	static uint8_t buf[512];
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_OPC_READ, nsid);
	put_le32(&cmd.cdw12, 0);
	return fake_exec(q, &cmd, buf, sizeof(buf), NULL);
}

static void add_ns(uint32_t nsid, uint32_t grpid)
{
	struct nvmf_ns_opts o = { .nsid = nsid, .path = "ram:1M", .anagrpid = grpid };
	char err[256];

	CU_ASSERT_EQUAL_FATAL(nvmf_subsys_add_ns(env.subsys, &o, err, sizeof(err)), (int)nsid);
}

static void test_state_machine(void)
{
	struct nvmf_port *p;
	uint64_t c0;
	uint8_t st;

	fake_env_setup(&env, NULL);
	p = env.port;
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 1), NVME_ANA_OPTIMIZED);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, NVMF_ANA_MAX_GRPS), NVME_ANA_OPTIMIZED);
	CU_ASSERT_EQUAL(nvmf_ana_state_parse("non-optimized", &st), 0);
	CU_ASSERT_EQUAL(st, NVME_ANA_NON_OPTIMIZED);
	CU_ASSERT_EQUAL(nvmf_ana_state_parse("persistent-loss", &st), 0);
	CU_ASSERT_EQUAL(st, NVME_ANA_PERSISTENT_LOSS);
	CU_ASSERT_EQUAL(nvmf_ana_state_parse("standby", &st), -EINVAL);
	CU_ASSERT_STRING_EQUAL(nvmf_ana_state_name(NVME_ANA_CHANGE), "change");

	/* groups and states out of range */
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 0, NVME_ANA_INACCESSIBLE, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, NVMF_ANA_MAX_GRPS + 1, NVME_ANA_INACCESSIBLE, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, 0x05, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, 0, 0), -EINVAL);

	/* the same state again changes nothing */
	c0 = p->ana_chgcnt;
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, NVME_ANA_OPTIMIZED, 0), 0);
	CU_ASSERT_EQUAL(p->ana_chgcnt, c0);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, NVME_ANA_NON_OPTIMIZED, 0), 0);
	CU_ASSERT_EQUAL(p->ana_chgcnt, c0 + 1);

	/* Persistent Loss is left through Change only */
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 2, NVME_ANA_PERSISTENT_LOSS, 0), 0);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 2, NVME_ANA_OPTIMIZED, 0), -EPERM);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 2, NVME_ANA_INACCESSIBLE, 0), -EPERM);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 2), NVME_ANA_PERSISTENT_LOSS);
	CU_ASSERT_EQUAL(nvmf_ana_transition_check(NVME_ANA_PERSISTENT_LOSS, NVME_ANA_CHANGE), 0);
	CU_ASSERT_EQUAL(nvmf_ana_transition_check(NVME_ANA_INACCESSIBLE, NVME_ANA_OPTIMIZED), 0);

	/* Change -> next after ANATT: the previous state, Inaccessible after Persistent Loss */
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 2, NVME_ANA_CHANGE, 1000), 0);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, NVME_ANA_CHANGE, 1000), 0);
	CU_ASSERT_EQUAL(nvmf_ana_tick(env.tgt, 1000 + NVMF_ANATT_S * 1000000000ull - 1), 0);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 1), NVME_ANA_CHANGE);
	CU_ASSERT_EQUAL(nvmf_ana_tick(env.tgt, 1000 + NVMF_ANATT_S * 1000000000ull), 2);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 1), NVME_ANA_NON_OPTIMIZED);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 2), NVME_ANA_INACCESSIBLE);
	CU_ASSERT_EQUAL(nvmf_ana_tick(env.tgt, UINT64_MAX), 0);
	/* a state set during Change wins: nothing left to move */
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, NVME_ANA_CHANGE, 5), 0);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(p, 1, NVME_ANA_OPTIMIZED, 6), 0);
	CU_ASSERT_EQUAL(nvmf_ana_tick(env.tgt, UINT64_MAX), 0);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 1), NVME_ANA_OPTIMIZED);
	fake_env_teardown(&env);
}

static void test_log_page(void)
{
	const struct nvme_ana_log_hdr *h = (const void *)page;
	const struct nvme_ana_group_desc *d;

	fake_env_setup(&env, "ram:1M"); /* NSID 1, group 1 */
	add_ns(2, 7);
	add_ns(5, 1);
	fake_env_connect(&env, 0, 1, 1);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(env.port, 7, NVME_ANA_INACCESSIBLE, 0), 0);

	CU_ASSERT_EQUAL(get_ana_log(false, true, 4096), 0);
	CU_ASSERT_EQUAL(get_le64(&h->chgcnt), env.port->ana_chgcnt);
	CU_ASSERT_EQUAL(get_le16(&h->ngrps), 2);
	d = (const void *)(page + 16);
	CU_ASSERT_EQUAL(get_le32(&d->grpid), 1);
	CU_ASSERT_EQUAL(get_le32(&d->nnsids), 2);
	CU_ASSERT_EQUAL(get_le64(&d->chgcnt), env.port->ana_chgcnt);
	CU_ASSERT_EQUAL(d->state, NVME_ANA_OPTIMIZED);
	CU_ASSERT_EQUAL(get_le32(page + 48), 1);
	CU_ASSERT_EQUAL(get_le32(page + 52), 5);
	d = (const void *)(page + 56);
	CU_ASSERT_EQUAL(get_le32(&d->grpid), 7);
	CU_ASSERT_EQUAL(get_le32(&d->nnsids), 1);
	CU_ASSERT_EQUAL(d->state, NVME_ANA_INACCESSIBLE);
	CU_ASSERT_EQUAL(get_le32(page + 88), 2);
	CU_ASSERT_EQUAL(get_le32(page + 92), 0); /* zero-filled past the page */

	/* Return Groups Only: descriptors without NSIDs */
	CU_ASSERT_EQUAL(get_ana_log(true, true, 4096), 0);
	CU_ASSERT_EQUAL(get_le16(&h->ngrps), 2);
	d = (const void *)(page + 16);
	CU_ASSERT_EQUAL(get_le32(&d->grpid), 1);
	CU_ASSERT_EQUAL(get_le32(&d->nnsids), 0);
	d = (const void *)(page + 48);
	CU_ASSERT_EQUAL(get_le32(&d->grpid), 7);
	CU_ASSERT_EQUAL(get_le32(&d->nnsids), 0);
	CU_ASSERT_EQUAL(get_le32(page + 80), 0);
	fake_env_teardown(&env);
}

static void test_identify(void)
{
	static uint8_t buf[4096];
	const struct nvme_id_ctrl *ic = (const void *)buf;
	const struct nvme_id_ns *in = (const void *)buf;
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	add_ns(3, 9);
	fake_env_connect(&env, 0, 1, 1);
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 0);
	put_le32(&cmd.cdw10, 1);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, buf, sizeof(buf), NULL), 0);
	CU_ASSERT(ic->cmic & NVME_CTRL_CMIC_ANA);
	CU_ASSERT(ic->cmic & NVME_CTRL_CMIC_MULTI_CTRL);
	CU_ASSERT(get_le32(&ic->oaes) & NVME_CTRL_OAES_ANA_CHANGE);
	CU_ASSERT(get_le32(&ic->oaes) & NVME_CTRL_OAES_NS_ATTR);
	CU_ASSERT_EQUAL(ic->anatt, NVMF_ANATT_S);
	CU_ASSERT_EQUAL(ic->anacap & 0x1f, 0x1f);
	CU_ASSERT_EQUAL(get_le32(&ic->anagrpmax), NVMF_ANA_MAX_GRPS);
	CU_ASSERT_EQUAL(get_le32(&ic->nanagrpid), NVMF_ANA_MAX_GRPS);
	CU_ASSERT_EQUAL(get_le32(&ic->mnan), NVMF_MAX_NAMESPACES);

	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 3);
	put_le32(&cmd.cdw10, 0);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, buf, sizeof(buf), NULL), 0);
	CU_ASSERT_EQUAL(get_le32(&in->anagrpid), 9);
	CU_ASSERT(in->nmic & NVME_NS_NMIC_SHARED);
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 1);
	put_le32(&cmd.cdw10, 0);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, buf, sizeof(buf), NULL), 0);
	CU_ASSERT_EQUAL(get_le32(&in->anagrpid), NVMF_ANA_GRPID_DEFAULT);
	fake_env_teardown(&env);
}

static void test_io_status_and_aen(void)
{
	struct fake_req *aer;
	struct nvme_cmd cmd;

	fake_env_setup(&env, "ram:1M");
	add_ns(2, 2);
	fake_env_connect(&env, 0, 1, 1);
	/* Asynchronous Event Configuration: ANA Change Notices */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_ANA_CHANGE);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);
	aer = fake_req_alloc(&env.admin);
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 0);

	CU_ASSERT_EQUAL(read_blk(&env.io[0], 1), 0);
	CU_ASSERT_EQUAL(nvmf_ana_set_state(env.port, 1, NVME_ANA_INACCESSIBLE, 0), 0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(fake_status(aer), 0);
	CU_ASSERT_EQUAL(fake_dw0(aer), nvme_aer_dw0(NVME_AER_TYPE_NOTICE,
						    NVME_AER_NOTICE_ANA_CHANGE, NVME_LOG_ANA));
	/* Inaccessible, Persistent Loss, Change: path status, no DNR (the host fails over) */
	CU_ASSERT_EQUAL(read_blk(&env.io[0], 1),
			NVME_STATUS(NVME_SCT_PATH, NVME_SC_ANA_INACCESSIBLE));
	CU_ASSERT_EQUAL(read_blk(&env.io[0], 2), 0); /* group 2 is still optimized */
	CU_ASSERT_EQUAL(nvmf_ana_set_state(env.port, 1, NVME_ANA_PERSISTENT_LOSS, 0), 0);
	CU_ASSERT_EQUAL(read_blk(&env.io[0], 1),
			NVME_STATUS(NVME_SCT_PATH, NVME_SC_ANA_PERSISTENT_LOSS));
	CU_ASSERT_EQUAL(nvmf_ana_set_state(env.port, 1, NVME_ANA_CHANGE, 0), 0);
	CU_ASSERT_EQUAL(read_blk(&env.io[0], 1),
			NVME_STATUS(NVME_SCT_PATH, NVME_SC_ANA_TRANSITION));
	CU_ASSERT_EQUAL(nvmf_ana_set_state(env.port, 1, NVME_ANA_NON_OPTIMIZED, 0), 0);
	CU_ASSERT_EQUAL(read_blk(&env.io[0], 1), 0);
	CU_ASSERT_EQUAL(env.port->ana_refused, 3);
	/* an inactive NSID is still Invalid Namespace */
	CU_ASSERT_EQUAL(read_blk(&env.io[0], 9), ST_INVALID_NS);
	/* admin commands are not path-checked */
	CU_ASSERT_EQUAL(nvmf_ana_set_state(env.port, 2, NVME_ANA_INACCESSIBLE, 0), 0);
	CU_ASSERT_EQUAL(get_ana_log(false, false, 4096), 0);
	fake_msgs_run();
	fake_req_free(aer);
	fake_env_teardown(&env);
}

static const CU_TestInfo tests[] = {
	{ "state machine", test_state_machine },
	{ "log page 0Ch, RGO", test_log_page },
	{ "Identify fields", test_identify },
	{ "I/O path status, ANA Change notice", test_io_status_and_aen },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("ana", tests);
}
