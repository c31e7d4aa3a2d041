/* SPDX-License-Identifier: MIT */
/*
 * LBA range locks and Abort with the core fakes: a Write overlapping a Compare and Write
 * in progress waits (queued, in order) and can be aborted; a Write elsewhere and Writes
 * with no Compare and Write anywhere run at once; commands executing in the backend are
 * not aborted.
 */
#include "fakes.h"

#include <string.h>

#include "common/endian.h"

#define ST_ABORT_REQ    NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED)
#define ST_FUSED_FAILED NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_FAILED_FUSED)

static struct fake_env env;
static uint8_t d[4][4096];

static void rw_cmd(struct nvme_cmd *cmd, uint8_t opc, uint64_t slba, uint32_t nlb)
{
	fake_cmd(cmd, opc, 1);
	put_le32(&cmd->cdw10, (uint32_t)slba);
	put_le32(&cmd->cdw11, (uint32_t)(slba >> 32));
	put_le32(&cmd->cdw12, (nlb - 1) & 0xffff);
}

static struct fake_req *submit(struct fake_qpair *q, uint8_t opc, uint8_t fuse, uint64_t slba,
			       uint32_t nlb, void *data)
{
	struct fake_req *fr = fake_req_alloc(q);
	struct nvme_cmd cmd;

	rw_cmd(&cmd, opc, slba, nlb);
	cmd.flags |= fuse;
	fake_req_prep(fr, &cmd, data, nlb * 512);
	nvmf_req_exec(&fr->req);
	return fr;
}

static uint16_t cid_of(const struct fake_req *fr)
{
	return get_le16(&fr->req.cmd.cid);
}

/* Abort SQID/CID through the admin queue: returns DW0 (bit 0 set: not aborted). */
static uint32_t do_abort(uint16_t sqid, uint16_t cid)
{
	struct nvme_cmd cmd;
	uint32_t dw0 = 0xdead;

	fake_cmd(&cmd, NVME_ADMIN_ABORT, 0);
	put_le32(&cmd.cdw10, (uint32_t)cid << 16 | sqid);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, &dw0), 0);
	return dw0;
}

static void setup(void)
{
	fake_env_setup(&env, "ram:1M");
	fake_env_connect(&env, 0, 2, 2);
	memset(d[0], 0, sizeof(d[0])); /* what the blocks hold */
	memset(d[1], 0x11, sizeof(d[1]));
	memset(d[2], 0x22, sizeof(d[2]));
	memset(d[3], 0x33, sizeof(d[3]));
}

static void teardown(void)
{
	fake_bdev.defer = false;
	fake_bdev_complete();
	fake_msgs_run();
	fake_env_teardown(&env);
}

/* No Compare and Write anywhere: writes go straight to the backend, nothing is queued. */
static void test_fast_path(void)
{
	struct fake_req *w;
	struct nvmf_ns *ns;

	setup();
	ns = env.subsys->ns[1];
	fake_bdev.defer = true;
	w = submit(&env.io[0], NVME_OPC_WRITE, 0, 0, 1, d[1]);
	CU_ASSERT_EQUAL(fake_bdev.npending, 1);
	CU_ASSERT_EQUAL(w->req.rl.state, NVMF_RL_FAST);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&ns->locks.queue));
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(w->completions, 1);
	CU_ASSERT_EQUAL(fake_status(w), 0);
	CU_ASSERT_EQUAL(w->req.rl.state, NVMF_RL_NONE);
	fake_req_free(w);
	teardown();
}

/*
 * A Compare and Write waits for a write that took the fast path before it; a write to
 * its blocks arriving during it waits until it is done, then runs; a write to other
 * blocks does not wait.
 */
static void test_caw_excludes_writes(void)
{
	struct fake_req *early, *c, *wr, *late, *other;
	uint8_t *mem;

	setup();
	mem = fake_bdev_mem(env.subsys->ns[1]->bdev);
	fake_bdev.defer = true;
	early = submit(&env.io[1], NVME_OPC_WRITE, 0, 8, 1, d[1]); /* in the backend */
	CU_ASSERT_EQUAL(fake_bdev.npending, 1);
	c = submit(&env.io[0], NVME_OPC_COMPARE, NVME_CMD_FUSE_FIRST, 8, 1, d[1]);
	wr = submit(&env.io[0], NVME_OPC_WRITE, NVME_CMD_FUSE_SECOND, 8, 1, d[2]);
	/* the pair waits for the early write: its compare read is not submitted yet */
	CU_ASSERT_EQUAL(fake_bdev.npending, 1);
	CU_ASSERT_EQUAL(wr->req.rl.state, NVMF_RL_WAITING);
	late = submit(&env.io[1], NVME_OPC_WRITE, 0, 8, 1, d[3]);
	other = submit(&env.io[1], NVME_OPC_WRITE, 0, 100, 1, d[3]);
	CU_ASSERT_EQUAL(late->req.rl.state, NVMF_RL_WAITING);
	CU_ASSERT_EQUAL(other->req.rl.state, NVMF_RL_HELD);
	CU_ASSERT_EQUAL(fake_bdev.npending, 2); /* early + other */

	/* the early write lands; the pair is granted (on its reactor) and reads */
	CU_ASSERT_EQUAL(fake_bdev_complete(), 2);
	CU_ASSERT_EQUAL(mem[8 * 512], 0x11);
	fake_msgs_run();
	CU_ASSERT_EQUAL(wr->req.rl.state, NVMF_RL_HELD);
	CU_ASSERT_EQUAL(late->req.rl.state, NVMF_RL_WAITING);
	CU_ASSERT_EQUAL(fake_bdev.npending, 1);
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1); /* compare read: matches, write submitted */
	CU_ASSERT_EQUAL(fake_bdev.npending, 1);
	CU_ASSERT_EQUAL(late->completions, 0);
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1); /* the pair's write */
	CU_ASSERT_EQUAL(fake_status(c), 0);
	CU_ASSERT_EQUAL(fake_status(wr), 0);
	CU_ASSERT_EQUAL(mem[8 * 512], 0x22);
	/* now the late write goes, after the pair */
	fake_msgs_run();
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(fake_status(late), 0);
	CU_ASSERT_EQUAL(mem[8 * 512], 0x33);
	CU_ASSERT_EQUAL(env.subsys->ns[1]->locks.excl, 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&env.subsys->ns[1]->locks.queue));
	fake_req_free(early);
	fake_req_free(c);
	fake_req_free(wr);
	fake_req_free(late);
	fake_req_free(other);
	teardown();
}

/* Write Zeroes and Dataset Management deallocate are held off the same way. */
static void test_wz_dsm_wait(void)
{
	struct fake_req *c, *wr, *wz, *dsm;
	struct nvme_dsm_range r = { 0 };
	struct nvme_cmd cmd;

	setup();
	fake_bdev.defer = true;
	c = submit(&env.io[0], NVME_OPC_COMPARE, NVME_CMD_FUSE_FIRST, 16, 2, d[0]);
	wr = submit(&env.io[0], NVME_OPC_WRITE, NVME_CMD_FUSE_SECOND, 16, 2, d[2]);
	CU_ASSERT_EQUAL(fake_bdev.npending, 1); /* compare read */
	fake_cmd(&cmd, NVME_OPC_WRITE_ZEROES, 1);
	put_le32(&cmd.cdw10, 17);
	wz = fake_req_alloc(&env.io[1]);
	fake_req_prep(wz, &cmd, NULL, 0);
	nvmf_req_exec(&wz->req);
	fake_cmd(&cmd, NVME_OPC_DATASET_MANAGEMENT, 1);
	put_le32(&cmd.cdw11, NVME_DSM_ATTR_AD);
	put_le64(&r.slba, 10);
	put_le32(&r.nlb, 7); /* 10..16: overlaps block 16 */
	dsm = fake_req_alloc(&env.io[1]);
	fake_req_prep(dsm, &cmd, &r, sizeof(r));
	nvmf_req_exec(&dsm->req);
	CU_ASSERT_EQUAL(wz->req.rl.state, NVMF_RL_WAITING);
	CU_ASSERT_EQUAL(dsm->req.rl.state, NVMF_RL_WAITING);
	CU_ASSERT_EQUAL(fake_bdev.npending, 1);
	/* abort the Write Zeroes while it waits */
	CU_ASSERT_EQUAL(do_abort(2, cid_of(wz)), 0);
	CU_ASSERT_EQUAL(wz->completions, 1);
	CU_ASSERT_EQUAL(fake_status(wz), ST_ABORT_REQ);
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(fake_status(wr), 0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1); /* the discard */
	CU_ASSERT_EQUAL(fake_status(dsm), 0);
	fake_req_free(c);
	fake_req_free(wr);
	fake_req_free(wz);
	fake_req_free(dsm);
	teardown();
}

/* Abort: a write waiting for its range lock is aborted; one executing is not; a CID that
 * is not outstanding is not; a waiting fused pair is aborted as a pair. */
static void test_abort(void)
{
	struct fake_req *c, *wr, *waiting, *running, *c2, *wr2;

	setup();
	fake_bdev.defer = true;
	c = submit(&env.io[0], NVME_OPC_COMPARE, NVME_CMD_FUSE_FIRST, 0, 1, d[0]);
	wr = submit(&env.io[0], NVME_OPC_WRITE, NVME_CMD_FUSE_SECOND, 0, 1, d[2]);
	waiting = submit(&env.io[1], NVME_OPC_WRITE, 0, 0, 1, d[3]);
	running = submit(&env.io[1], NVME_OPC_WRITE, 0, 50, 1, d[3]);
	c2 = submit(&env.io[1], NVME_OPC_COMPARE, NVME_CMD_FUSE_FIRST, 0, 1, d[2]);
	wr2 = submit(&env.io[1], NVME_OPC_WRITE, NVME_CMD_FUSE_SECOND, 0, 1, d[1]);
	CU_ASSERT_EQUAL(waiting->req.rl.state, NVMF_RL_WAITING);
	CU_ASSERT_EQUAL(wr2->req.rl.state, NVMF_RL_WAITING);
	CU_ASSERT_EQUAL(fake_bdev.npending, 2);

	CU_ASSERT_EQUAL(do_abort(2, cid_of(running)), 1); /* in the backend */
	CU_ASSERT_EQUAL(running->completions, 0);
	CU_ASSERT_EQUAL(do_abort(1, cid_of(c)), 1);       /* executing (compare read) */
	CU_ASSERT_EQUAL(do_abort(2, 0x7777), 1);          /* no such command */
	CU_ASSERT_EQUAL(do_abort(9, cid_of(waiting)), 1); /* no such queue */
	CU_ASSERT_EQUAL(do_abort(1, cid_of(waiting)), 1); /* another queue's CID */

	CU_ASSERT_EQUAL(do_abort(2, cid_of(waiting)), 0);
	CU_ASSERT_EQUAL(waiting->completions, 1);
	CU_ASSERT_EQUAL(fake_status(waiting), ST_ABORT_REQ);
	CU_ASSERT_EQUAL(do_abort(2, cid_of(waiting)), 1); /* once */
	/* the second pair, by its Compare's CID: both complete, Compare first */
	CU_ASSERT_EQUAL(do_abort(2, cid_of(c2)), 0);
	CU_ASSERT_EQUAL(fake_status(c2), ST_ABORT_REQ);
	CU_ASSERT_EQUAL(fake_status(wr2), ST_FUSED_FAILED);
	CU_ASSERT_EQUAL(c2->completions, 1);
	CU_ASSERT_EQUAL(wr2->completions, 1);

	/* the rest runs to completion as if nothing happened */
	CU_ASSERT_EQUAL(fake_bdev_complete(), 2);
	CU_ASSERT_EQUAL(fake_bdev_complete(), 1);
	CU_ASSERT_EQUAL(fake_status(c), 0);
	CU_ASSERT_EQUAL(fake_status(wr), 0);
	CU_ASSERT_EQUAL(fake_status(running), 0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(fake_bdev.npending, 0); /* nothing aborted runs later */
	CU_ASSERT_EQUAL(env.subsys->ns[1]->locks.excl, 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&env.subsys->ns[1]->locks.queue));
	CU_ASSERT_TRUE(TAILQ_EMPTY(&env.io[1].qp.rl_waiters));
	fake_req_free(c);
	fake_req_free(wr);
	fake_req_free(waiting);
	fake_req_free(running);
	fake_req_free(c2);
	fake_req_free(wr2);
	teardown();
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "writes take the fast path without Compare and Write", test_fast_path },
		{ "Compare and Write excludes writes to its blocks", test_caw_excludes_writes },
		{ "Write Zeroes and DSM wait too", test_wz_dsm_wait },
		{ "Abort of waiting and executing commands", test_abort },
		CU_TEST_INFO_NULL,
	};

	return fake_run_suite("abort", tests);
}
