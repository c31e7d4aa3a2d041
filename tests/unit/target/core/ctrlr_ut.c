/* SPDX-License-Identifier: MIT */
/* Request plumbing (direction, SGL length, completion fields), controller lifecycle across
 * reactors, Keep Alive, controller reset, and in-process (local) controllers. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/endian.h"
#include "tests/unit/target/core/fakes.h"

#define CC_OK (NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT)

static void test_xfer(void)
{
	static const struct {
		uint8_t opc, fctype;
		enum nvme_data_xfer x;
	} t[] = {
		{ NVME_OPC_FLUSH, 0, NVME_XFER_NONE },
		{ NVME_OPC_WRITE, 0, NVME_XFER_HOST_TO_CTRLR },
		{ NVME_OPC_READ, 0, NVME_XFER_CTRLR_TO_HOST },
		{ NVME_OPC_COMPARE, 0, NVME_XFER_HOST_TO_CTRLR },
		{ NVME_OPC_DATASET_MANAGEMENT, 0, NVME_XFER_HOST_TO_CTRLR },
		{ NVME_ADMIN_IDENTIFY, 0, NVME_XFER_CTRLR_TO_HOST },
		{ NVME_ADMIN_GET_LOG_PAGE, 0, NVME_XFER_CTRLR_TO_HOST },
		{ NVME_ADMIN_KEEP_ALIVE, 0, NVME_XFER_NONE },
		{ NVME_ADMIN_FABRICS, NVMF_FCTYPE_CONNECT, NVME_XFER_HOST_TO_CTRLR },
		{ NVME_ADMIN_FABRICS, NVMF_FCTYPE_PROPERTY_GET, NVME_XFER_NONE },
		{ NVME_ADMIN_FABRICS, NVMF_FCTYPE_PROPERTY_SET, NVME_XFER_NONE },
		{ NVME_ADMIN_FABRICS, NVMF_FCTYPE_AUTH_SEND, NVME_XFER_HOST_TO_CTRLR },
		{ NVME_ADMIN_FABRICS, NVMF_FCTYPE_AUTH_RECV, NVME_XFER_CTRLR_TO_HOST },
	};
	struct nvme_cmd cmd;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fake_cmd(&cmd, t[i].opc, 1);
		((struct nvmf_cmd *)&cmd)->fctype = t[i].fctype;
		CU_ASSERT_EQUAL(nvmf_req_xfer(&cmd, true), t[i].x);
		CU_ASSERT_EQUAL(nvmf_req_xfer(&cmd, false), t[i].x);
	}
}

static void test_sgl_length(void)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_OPC_WRITE, 1);
	cmd.dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	put_le32(cmd.dptr.sgl1.length, 0x12345);
	CU_ASSERT_EQUAL(nvmf_req_sgl_length(&cmd), 0x12345);
	cmd.dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK,
					   NVME_SGL_SUBTYPE_TRANSPORT);
	CU_ASSERT_EQUAL(nvmf_req_sgl_length(&cmd), 0x12345);
	/* keyed: 24-bit length, key in the next four bytes */
	cmd.dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_KEYED_DATA_BLOCK,
					   NVME_SGL_SUBTYPE_ADDRESS);
	cmd.dptr.sgl1.length[0] = 0x00;
	cmd.dptr.sgl1.length[1] = 0x10;
	cmd.dptr.sgl1.length[2] = 0x02;
	cmd.dptr.sgl1.length[3] = 0xff;
	CU_ASSERT_EQUAL(nvmf_req_sgl_length(&cmd), 0x021000);
}

static void test_completion_fields(void)
{
	struct fake_env e;
	struct fake_req *fr;
	struct nvme_cmd cmd;

	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0, 2, 0);
	/* admin queue: sqhd counts from the Connect (1), Property Set (2), Set Features (3) */
	fr = fake_req_alloc(&e.admin);
	fake_cmd(&cmd, NVME_ADMIN_KEEP_ALIVE, 0);
	put_le16(&cmd.cid, 0xbeef);
	fake_req_prep(fr, &cmd, NULL, 0);
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.cid), 0xbeef);
	CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqid), 0);
	CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqhd), 4);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	fake_req_free(fr);

	/* SQ flow control disabled: SQHD is not tracked */
	{
		struct fake_connect c;

		fake_qpair_init(&e.io[0], e.tgt, e.port, &fake_reactor[1]);
		fake_connect_defaults(&c, 1);
		c.cntlid = e.cntlid;
		c.cattr = NVMF_CONNECT_CATTR_DISABLE_SQFLOW;
		CU_ASSERT_EQUAL(fake_connect(&e.io[0], &c, NULL), 0);
	}
	fr = fake_req_alloc(&e.io[0]);
	for (int i = 0; i < 3; i++) {
		fake_cmd(&cmd, NVME_OPC_FLUSH, 1);
		fake_req_prep(fr, &cmd, NULL, 0);
		nvmf_req_exec(&fr->req);
		CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqhd), 0);
		CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqid), 1);
	}
	fake_req_free(fr);
	fake_env_teardown(&e);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void test_admin_gone_with_deferred_messages(void)
{
	struct fake_env e;
	struct nvmf_ctrlr *c;

	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0, 3, 3);
	c = e.admin.qp.ctrlr;
	CU_ASSERT_EQUAL(c->num_io_qpairs, 3);
	CU_ASSERT_EQUAL(e.tgt->nconnections, 4);

	fake_msg_defer = true;
	fake_qpair_close(&e.admin);
	/* the controller is dead but alive in memory until its I/O queues go */
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	CU_ASSERT_EQUAL(c->state, NVMF_CTRLR_DEAD);
	CU_ASSERT_EQUAL(e.io[0].disconnects, 0);
	/* new I/O on a dead controller is refused */
	{
		struct nvme_cmd cmd;

		fake_cmd(&cmd, NVME_OPC_FLUSH, 1);
		CU_ASSERT_EQUAL(fake_exec(&e.io[0], &cmd, NULL, 0, NULL), ST_CMD_SEQ);
	}
	/* one message per reactor hosting I/O queues (two here) */
	CU_ASSERT_EQUAL(fake_msgs_run(), 2);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(e.io[i].disconnects, 1);
		CU_ASSERT(e.io[i].finied);
	}
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 0);
	CU_ASSERT_EQUAL(e.tgt->nconnections, 0);
	fake_msg_defer = false;
	fake_env_teardown(&e);
}

static void test_io_queue_outlives_nothing(void)
{
	struct fake_env e;

	/* I/O queues leave first; the admin queue frees the controller */
	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0, 2, 2);
	fake_qpair_close(&e.io[0]);
	fake_qpair_close(&e.io[1]);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	CU_ASSERT_EQUAL(e.admin.qp.ctrlr->num_io_qpairs, 0);
	fake_qpair_close(&e.admin);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 0);
	fake_env_teardown(&e);
}

static void test_reset(void)
{
	struct fake_env e;
	struct fake_req *aer;
	struct nvme_cmd cmd;
	struct fake_connect c;
	struct fake_qpair q;
	uint64_t v;

	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0, 2, 2);
	aer = fake_req_alloc(&e.admin);
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 0);

	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, CC_OK & ~NVME_CC_EN), 0);
	CU_ASSERT_EQUAL(fake_prop_get(&e.admin, NVME_REG_CSTS, 4, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT(e.io[0].finied && e.io[1].finied);
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(fake_status(aer), ST_ABORTED_SQ);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	/* admin commands need the controller enabled again */
	fake_cmd(&cmd, NVME_ADMIN_KEEP_ALIVE, 0);
	CU_ASSERT_EQUAL(fake_exec(&e.admin, &cmd, NULL, 0, NULL), ST_CMD_SEQ);
	CU_ASSERT_EQUAL(fake_prop_set(&e.admin, NVME_REG_CC, CC_OK), 0);
	/* Number of Queues may change again, and queues reconnect */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_NUM_QUEUES);
	put_le32(&cmd.cdw11, 0);
	CU_ASSERT_EQUAL(fake_exec(&e.admin, &cmd, NULL, 0, NULL), 0);
	fake_qpair_init(&q, e.tgt, e.port, &fake_reactor[1]);
	fake_connect_defaults(&c, 1);
	c.cntlid = e.cntlid;
	CU_ASSERT_EQUAL(fake_connect(&q, &c, NULL), 0);
	c.qid = 2;
	fake_qpair_close(&q);
	fake_req_free(aer);
	fake_env_teardown(&e);
}

/* ---- Keep Alive with a real event loop ------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_keep_alive(void)
{
	struct fake_env e;
	struct nvme_cmd cmd;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	double start;

	fake_reactor[0].loop = loop;
	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 250, 1, 1); /* KATO 300 ms: fires 600 ms after the last command */
	CU_ASSERT(e.admin.qp.ctrlr->ka_active);
	CU_ASSERT_EQUAL(e.admin.qp.ctrlr->kato_ms, 300); /* rounded to 100 ms */

	/* Keep Alive every 150 ms for a second: the controller stays */
	start = now_s();
	while (now_s() - start < 1.0) {
		struct timespec ts = { 0, 150 * 1000000 };

		nanosleep(&ts, NULL);
		ev_run(loop, EVRUN_NOWAIT);
		fake_cmd(&cmd, NVME_ADMIN_KEEP_ALIVE, 0);
		CU_ASSERT_EQUAL(fake_exec(&e.admin, &cmd, NULL, 0, NULL), 0);
	}
	CU_ASSERT_EQUAL(e.admin.disconnects, 0);

	/* silence: the timer tears the controller down, all queues go */
	start = now_s();
	ev_run(loop, EVRUN_ONCE);
	CU_ASSERT(now_s() - start >= 0.5);
	CU_ASSERT(now_s() - start < 2.0);
	CU_ASSERT_EQUAL(e.admin.disconnects, 1);
	CU_ASSERT_EQUAL(e.io[0].disconnects, 1);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 0);
	fake_env_teardown(&e);

	/* KATO 0 through Set Features disables the timer */
	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 200, 0, 0);
	CU_ASSERT(e.admin.qp.ctrlr->ka_active);
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_KATO);
	put_le32(&cmd.cdw11, 0);
	CU_ASSERT_EQUAL(fake_exec(&e.admin, &cmd, NULL, 0, NULL), 0);
	CU_ASSERT(!e.admin.qp.ctrlr->ka_active);
	ev_run(loop, EVRUN_NOWAIT);
	CU_ASSERT_EQUAL(e.admin.disconnects, 0);
	fake_env_teardown(&e);
	fake_reactor[0].loop = NULL;
	ev_loop_destroy(loop);
}

/* KATO rounding cannot wrap: FFFFFFFFh once became 4 ms and killed the controller. */
static void test_kato_clamp(void)
{
	static const struct {
		uint32_t in, out;
	} t[] = {
		{ 0, 0 },
		{ 1, 100 },
		{ 100, 100 },
		{ 250, 300 },
		{ 120000, 120000 },
		{ NVMF_KATO_MAX_MS - 1, NVMF_KATO_MAX_MS },
		{ NVMF_KATO_MAX_MS, NVMF_KATO_MAX_MS },
		{ NVMF_KATO_MAX_MS + 1, NVMF_KATO_MAX_MS },
		{ 0xffffff9c, NVMF_KATO_MAX_MS }, /* the largest multiple of 100 */
		{ 0xffffff9d, NVMF_KATO_MAX_MS }, /* rounding up would wrap */
		{ 0xffffffff, NVMF_KATO_MAX_MS },
	};
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct fake_env e;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CU_ASSERT_EQUAL(nvmf_kato_clamp(t[i].in), t[i].out);

	/* a Connect with KATO FFFFFFFFh: the controller lives on with an hour */
	fake_reactor[0].loop = loop;
	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0xffffffff, 0, 0);
	CU_ASSERT_EQUAL(e.admin.qp.ctrlr->kato_ms, NVMF_KATO_MAX_MS);
	CU_ASSERT(e.admin.qp.ctrlr->ka_active);
	CU_ASSERT(e.admin.qp.ctrlr->ka_timer.repeat > 3600.0);
	{
		struct timespec ts = { 0, 50 * 1000000 };

		nanosleep(&ts, NULL);
	}
	ev_run(loop, EVRUN_NOWAIT);
	CU_ASSERT_EQUAL(e.admin.disconnects, 0);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	fake_env_teardown(&e);
	fake_reactor[0].loop = NULL;
	ev_loop_destroy(loop);
}

/* ---- local (in-process) controllers --------------------------------------------------------- */

static void test_local(void)
{
	struct fake_env e;
	struct fake_qpair q, q2;
	struct fake_req *fr;
	struct nvme_cmd cmd;
	static uint8_t buf[4096];
	uint8_t hostid[16] = { 1, 2, 3 };

	fake_env_setup(&e, "file:1M");
	fake_qpair_init(&q, e.tgt, NULL, &fake_reactor[1]);
	fake_qpair_init(&q2, e.tgt, NULL, &fake_reactor[1]);
	CU_ASSERT_EQUAL(nvmf_local_connect(&q.qp, e.tgt->discovery, FAKE_HOSTNQN, hostid),
			-ENOENT);
	nvmf_subsys_set_allow_any_host(e.subsys, false);
	CU_ASSERT_EQUAL(nvmf_local_connect(&q.qp, e.subsys, FAKE_HOSTNQN, hostid), -EACCES);
	nvmf_subsys_set_allow_any_host(e.subsys, true);
	CU_ASSERT_EQUAL(nvmf_local_connect(&q.qp, e.subsys, FAKE_HOSTNQN, hostid), 0);
	CU_ASSERT_EQUAL(nvmf_local_connect(&q.qp, e.subsys, FAKE_HOSTNQN, hostid), -EINVAL);
	CU_ASSERT_EQUAL(q.qp.qid, 1);
	CU_ASSERT(q.qp.connected);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);

	/* NVM commands without PSDT bits; writes use the cache (Flush makes them durable) */
	fr = fake_req_alloc(&q);
	fake_cmd(&cmd, NVME_OPC_WRITE, 1);
	cmd.flags = 0;
	put_le32(&cmd.cdw12, 7);
	memset(buf, 0x6d, sizeof(buf));
	fake_req_prep(fr, &cmd, buf, 4096);
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	CU_ASSERT(!fake_bdev.last.fua);
	CU_ASSERT_EQUAL(fake_bdev_mem(e.subsys->ns[1]->bdev)[4095], 0x6d);

	/* admin commands through nvmf_local_admin_exec */
	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 1);
	cmd.flags = 0;
	put_le32(&cmd.cdw10, NVME_ID_CNS_NS);
	fake_req_prep(fr, &cmd, NULL, 4096);
	nvmf_local_admin_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	CU_ASSERT_EQUAL(get_le64(fr->data), 2048);
	CU_ASSERT_EQUAL(get_le16(&fr->req.rsp.sqid), 0);
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(fr, &cmd, NULL, 0);
	nvmf_local_admin_exec(&fr->req);
	CU_ASSERT_EQUAL(fake_status(fr), ST_INVALID_OPCODE);
	/* the same request object back on the NVM path is an NVM command again */
	fake_cmd(&cmd, NVME_OPC_READ, 1);
	cmd.flags = 0;
	fake_req_prep(fr, &cmd, NULL, 512);
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	CU_ASSERT_EQUAL(fr->data[0], 0x6d);
	/* cache disabled: writes go FUA */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_VOLATILE_WC);
	put_le32(&cmd.cdw11, 0);
	fake_req_prep(fr, &cmd, NULL, 0);
	nvmf_local_admin_exec(&fr->req);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	fake_cmd(&cmd, NVME_OPC_WRITE, 1);
	fake_req_prep(fr, &cmd, buf, 512);
	nvmf_req_exec(&fr->req);
	CU_ASSERT(fake_bdev.last.fua);
	fake_req_free(fr);

	/* a second front-end controller gets its own ID */
	CU_ASSERT_EQUAL(nvmf_local_connect(&q2.qp, e.subsys, FAKE_HOSTNQN, NULL), 0);
	CU_ASSERT_NOT_EQUAL(q2.qp.ctrlr->cntlid, q.qp.ctrlr->cntlid);
	fake_qpair_close(&q2);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);

	/* target stop reaches local controllers too */
	nvmf_tgt_destroy(e.tgt);
	CU_ASSERT_EQUAL(q.disconnects, 1);
	CU_ASSERT(q.finied);
}

static const CU_TestInfo tests[] = {
	{ "data direction", test_xfer },
	{ "SGL length", test_sgl_length },
	{ "completion fields", test_completion_fields },
	{ "admin queue gone, deferred messages", test_admin_gone_with_deferred_messages },
	{ "I/O queues leave first", test_io_queue_outlives_nothing },
	{ "controller reset", test_reset },
	{ "keep alive", test_keep_alive },
	{ "KATO clamped, never wrapped", test_kato_clamp },
	{ "local controllers", test_local },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("ctrlr", tests);
}
