/* SPDX-License-Identifier: MIT */
/*
 * Fabrics, Admin and NVM command handling of the target core (target/core/fabrics.c, admin.c,
 * io.c, ...) through nvmf_req_exec(), with the core's unit-test fakes standing in for the
 * transport, reactors and backend. Each input runs on a fresh target: a subsystem with a
 * 1 MiB namespace, a controller with its admin queue and two I/O queues connected and
 * enabled, then a sequence of fuzzed commands, each prepared the way a transport does
 * (direction and length from the SGL, data in two scatter/gather pieces).
 *
 * Record: [queue: 0 admin, 1-2 I/O, 3 a new unconnected queue][64-byte SQE]
 *         [2-byte little-endian data length][that many data bytes].
 * Every command must complete exactly once (parked ones - AERs, a fused first half -
 * when their queue goes away), and nothing may leak.
 */
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "common/log.h"
#include "fuzz.h"
#include "tests/unit/target/core/fakes.h"

#define MAX_CMDS 128
#define MAX_EXTRA 8

struct cmd_slot {
	struct fake_req *fr;
	uint8_t *buf;
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_LVL_ERR);
	return 0;
}

static struct fake_req *prep(struct fake_qpair *fq, const struct nvme_cmd *sqe,
			     const uint8_t *in, size_t inlen, uint8_t **bufp)
{
	struct fake_req *fr;
	enum nvme_data_xfer xfer = nvmf_req_xfer(sqe, fq->qp.qid == 0);
	uint32_t len = nvmf_req_sgl_length(sqe);
	uint32_t split;
	uint8_t *buf = NULL;

	if (xfer == NVME_XFER_BIDIRECTIONAL)
		return NULL; /* the transport rejects it before the core sees it */
	if (xfer == NVME_XFER_NONE)
		len = 0;
	if (len > fq->qp.tgt->opts.max_io_size)
		return NULL; /* likewise: Data SGL Length Invalid from the transport */
	fr = calloc(1, sizeof(*fr));
	if (!fr)
		return NULL;
	if (len) {
		buf = malloc(len);
		if (!buf) {
			free(fr);
			return NULL;
		}
		memset(buf, 0, len);
		if (xfer == NVME_XFER_HOST_TO_CTRLR)
			memcpy(buf, in, inlen < len ? inlen : len);
		else
			memset(buf, 0xee, len);
	}
	fr->req.qpair = &fq->qp;
	fr->req.cmd = *sqe;
	fr->req.xfer = xfer;
	fr->req.length = len;
	fr->data = buf;
	split = len > 1000 ? 1000 : len;
	if (split) {
		fr->req.iov[0].iov_base = buf;
		fr->req.iov[0].iov_len = split;
		fr->req.iovcnt = 1;
	}
	if (len > split) {
		fr->req.iov[1].iov_base = buf + split;
		fr->req.iov[1].iov_len = len - split;
		fr->req.iovcnt = 2;
	}
	*bufp = buf;
	return fr;
}

/* fake_env_setup() + fake_env_connect(e, 0, 2, 2) without CUnit assertions (no test is
 * running under libFuzzer): a broken setup aborts. */
static void env_up(struct fake_env *e)
{
	struct nvmf_tgt_opts o;
	struct nvmf_port_opts po = {
		.portid = 1, .trtype = "tcp", .adrfam = "ipv4", .traddr = "127.0.0.1",
		.trsvcid = "4420",
	};
	struct nvmf_ns_opts no = { .path = "ram:1M", .enabled = true };
	struct fake_connect c;
	struct nvme_cmd cmd;
	uint32_t dw0 = 0;
	char err[128];

	memset(e, 0, sizeof(*e));
	fake_bdev_reset();
	fake_msg_defer = false;
	fake_buf_exhausted = false;
	fake_buf_size = 128 * 1024;
	nvmf_tgt_opts_default(&o);
	e->tgt = nvmf_tgt_create(&o);
	if (!e->tgt)
		abort();
	e->subsys = nvmf_subsys_create(e->tgt, FAKE_SUBNQN);
	if (!e->subsys)
		abort();
	nvmf_subsys_set_allow_any_host(e->subsys, true);
	if (nvmf_subsys_add_ns(e->subsys, &no, err, sizeof(err)) != 1)
		abort();
	e->port = nvmf_port_create(e->tgt, &po, err, sizeof(err));
	if (!e->port || nvmf_port_add_subsys(e->port, e->subsys) != 0)
		abort();

	fake_qpair_init(&e->admin, e->tgt, e->port, &fake_reactor[0]);
	fake_connect_defaults(&c, 0);
	if (fake_connect(&e->admin, &c, &dw0) != 0)
		abort();
	e->cntlid = (uint16_t)dw0;
	if (fake_prop_set(&e->admin, NVME_REG_CC,
			  NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT) != 0)
		abort();
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_NUM_QUEUES);
	put_le32(&cmd.cdw11, 1u | 1u << 16);
	if (fake_exec(&e->admin, &cmd, NULL, 0, NULL) != 0)
		abort();
	for (unsigned int i = 0; i < 2; i++) {
		fake_qpair_init(&e->io[i], e->tgt, e->port, &fake_reactor[(i + 1) % 2]);
		fake_connect_defaults(&c, (uint16_t)(i + 1));
		c.cntlid = e->cntlid;
		if (fake_connect(&e->io[i], &c, NULL) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fake_env e;
	struct cmd_slot slots[MAX_CMDS];
	struct fake_qpair *extra[MAX_EXTRA];
	unsigned int nslots = 0, nextra = 0;
	size_t pos = 0;

	env_up(&e);
	while (pos + 1 + sizeof(struct nvme_cmd) + 2 <= size && nslots < MAX_CMDS) {
		struct nvme_cmd sqe;
		struct fake_qpair *fq;
		struct fake_req *fr;
		uint8_t *buf = NULL;
		uint8_t q = data[pos] & 3;
		size_t dlen;

		memcpy(&sqe, data + pos + 1, sizeof(sqe));
		dlen = get_le16(data + pos + 1 + sizeof(sqe));
		pos += 1 + sizeof(sqe) + 2;
		if (dlen > size - pos)
			dlen = size - pos;
		if (q == 0) {
			fq = &e.admin;
		} else if (q < 3) {
			fq = &e.io[q - 1];
		} else {
			if (nextra == MAX_EXTRA)
				break;
			fq = calloc(1, sizeof(*fq));
			if (!fq)
				break;
			fake_qpair_init(fq, e.tgt, e.port, &fake_reactor[nextra & 1]);
			extra[nextra++] = fq;
		}
		fr = fq->finied ? NULL : prep(fq, &sqe, data + pos, dlen, &buf);
		pos += dlen;
		if (!fr)
			continue;
		slots[nslots].fr = fr;
		slots[nslots].buf = buf;
		nslots++;
		nvmf_req_exec(&fr->req);
		fake_msgs_run();
		if (fr->completions > 1)
			abort(); /* completed twice */
	}

	for (unsigned int i = 0; i < nextra; i++)
		fake_qpair_close(extra[i]);
	fake_env_teardown(&e);
	for (unsigned int i = 0; i < nextra; i++)
		free(extra[i]);
	for (unsigned int i = 0; i < nslots; i++) {
		if (slots[i].fr->completions != 1)
			abort(); /* lost, or completed twice */
		free(slots[i].buf);
		free(slots[i].fr);
	}
	return 0;
}
