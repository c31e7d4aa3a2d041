/* SPDX-License-Identifier: MIT */
/* Fakes for the target core unit tests: see fakes.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "common/iov.h"
#include "common/log.h"
#include "tests/unit/target/core/fakes.h"
#include "ut.h"

/* ---- transport ------------------------------------------------------------------------------ */

unsigned int fake_listens, fake_stop_listens;

static void fake_req_complete(struct nvmf_req *req)
{
	struct fake_req *fr = container_of(req, struct fake_req, req);

	fr->completions++;
}

static void fake_qpair_disconnect(struct nvmf_qpair *qp)
{
	struct fake_qpair *fq = container_of(qp, struct fake_qpair, qp);

	fq->disconnects++;
	if (fq->auto_fini && !fq->finied) {
		fq->finied = true;
		nvmf_qpair_disconnected(qp);
		nvmf_qpair_fini(qp);
	}
}

static int fake_listen(struct nvmf_tgt *tgt, struct nvmf_port *port)
{
	(void)tgt;
	(void)port;
	fake_listens++;
	return 0;
}

static void fake_stop_listen(struct nvmf_port *port)
{
	(void)port;
	fake_stop_listens++;
}

static void fake_disc_entry(const struct nvmf_port *port, struct nvmf_disc_log_entry *e)
{
	(void)port;
	e->tsas[1] = 0x5a; /* marks that the transport hook ran */
}

static void fake_local_traddr(const struct nvmf_qpair *qp, char *buf, size_t len)
{
	(void)qp;
	snprintf(buf, len, "127.0.0.1");
}

const struct nvmf_transport_ops fake_transport_ops = {
	.name = "tcp",
	.trtype = NVMF_TRTYPE_TCP,
	.listen = fake_listen,
	.stop_listen = fake_stop_listen,
	.req_complete = fake_req_complete,
	.qpair_disconnect = fake_qpair_disconnect,
	.disc_entry = fake_disc_entry,
	.local_traddr = fake_local_traddr,
};

const struct nvmf_transport_ops *nvmf_transport_find(const char *name)
{
	return name && !strcmp(name, "tcp") ? &fake_transport_ops : NULL;
}

int nvmf_transport_register(const struct nvmf_transport_ops *ops)
{
	(void)ops;
	return -ENOSPC;
}

void fake_qpair_init(struct fake_qpair *fq, struct nvmf_tgt *tgt, struct nvmf_port *port,
		     struct reactor *r)
{
	memset(fq, 0, sizeof(*fq));
	nvmf_qpair_init(&fq->qp, &fake_transport_ops, tgt, port, r);
	snprintf(fq->qp.peer, sizeof(fq->qp.peer), "127.0.0.1:40000");
	fq->auto_fini = true;
}

void fake_qpair_close(struct fake_qpair *fq)
{
	if (fq->finied || !fq->qp.tgt)
		return;
	fq->finied = true;
	nvmf_qpair_disconnected(&fq->qp);
	nvmf_qpair_fini(&fq->qp);
}

struct fake_req *fake_req_alloc(struct fake_qpair *fq)
{
	struct fake_req *fr = calloc(1, sizeof(*fr));

	fr->data = calloc(1, FAKE_DATA_MAX);
	fr->req.qpair = &fq->qp;
	return fr;
}

void fake_req_free(struct fake_req *fr)
{
	if (!fr)
		return;
	nvmf_req_release_data(&fr->req);
	free(fr->data);
	free(fr);
}

/* Data in two iovecs split at an odd offset, to exercise the scatter/gather copies. */
void fake_req_prep(struct fake_req *fr, const struct nvme_cmd *cmd, const void *in,
		   uint32_t len)
{
	uint32_t split = len > 1000 ? 1000 : len;

	fr->req.cmd = *cmd;
	fr->req.length = len;
	fr->req.xfer = nvmf_req_xfer(cmd, fr->req.qpair->qid == 0);
	memset(fr->data, 0xee, FAKE_DATA_MAX);
	if (in && len)
		memcpy(fr->data, in, len);
	fr->req.iovcnt = 0;
	if (split) {
		fr->req.iov[0].iov_base = fr->data;
		fr->req.iov[0].iov_len = split;
		fr->req.iovcnt = 1;
	}
	if (len > split) {
		fr->req.iov[1].iov_base = fr->data + split;
		fr->req.iov[1].iov_len = len - split;
		fr->req.iovcnt = 2;
	}
	fr->completions = 0;
}

uint16_t fake_status(const struct fake_req *fr)
{
	return get_le16(&fr->req.rsp.status) & 0xfffe;
}

uint32_t fake_dw0(const struct fake_req *fr)
{
	return get_le32(&fr->req.rsp.dw0);
}

static uint16_t next_cid = 1;

void fake_cmd(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->flags = NVME_CMD_PSDT_SGL_MPTR_CONTIG << NVME_CMD_PSDT_SHIFT;
	put_le16(&cmd->cid, next_cid++);
	put_le32(&cmd->nsid, nsid);
}

uint16_t fake_exec(struct fake_qpair *fq, const struct nvme_cmd *cmd, void *data, uint32_t len,
		   uint32_t *dw0)
{
	struct fake_req *fr = fake_req_alloc(fq);
	uint16_t status;

	fake_req_prep(fr, cmd, data, len);
	nvmf_req_exec(&fr->req);
	if (fr->completions != 1) {
		/* still pending (held AER, deferred backend): leak deliberately */
		return 0xffff;
	}
	status = fake_status(fr);
	if (data && len)
		memcpy(data, fr->data, len);
	if (dw0)
		*dw0 = fake_dw0(fr);
	fake_req_free(fr);
	return status;
}

/* ---- Fabrics helpers ------------------------------------------------------------------------ */

void fake_connect_defaults(struct fake_connect *c, uint16_t qid)
{
	memset(c, 0, sizeof(*c));
	c->qid = qid;
	c->sqsize = qid ? 127 : 31;
	c->cntlid = 0xffff;
	c->subnqn = FAKE_SUBNQN;
	c->hostnqn = FAKE_HOSTNQN;
	for (int i = 0; i < 16; i++)
		c->hostid[i] = (uint8_t)(0xa0 + i);
}

uint16_t fake_connect(struct fake_qpair *fq, const struct fake_connect *c, uint32_t *dw0)
{
	struct nvmf_connect_cmd cmd;
	struct nvmf_connect_data d;

	memset(&d, 0, sizeof(d));
	fake_cmd((struct nvme_cmd *)&cmd, NVME_ADMIN_FABRICS, 0);
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.recfmt, c->recfmt);
	put_le16(&cmd.qid, c->qid);
	put_le16(&cmd.sqsize, c->sqsize);
	cmd.cattr = c->cattr;
	put_le32(&cmd.kato, c->kato);
	memcpy(d.hostid, c->hostid, 16);
	put_le16(&d.cntlid, c->cntlid);
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", c->subnqn);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", c->hostnqn);
	return fake_exec(fq, (struct nvme_cmd *)&cmd, &d, c->length ? c->length : sizeof(d), dw0);
}

uint16_t fake_prop_get(struct fake_qpair *fq, uint32_t offset, unsigned int size, uint64_t *val)
{
	struct nvmf_property_cmd cmd;
	struct fake_req *fr = fake_req_alloc(fq);
	uint16_t st;

	fake_cmd((struct nvme_cmd *)&cmd, NVME_ADMIN_FABRICS, 0);
	cmd.fctype = NVMF_FCTYPE_PROPERTY_GET;
	cmd.attrib = size == 8 ? 1 : size == 4 ? 0 : 7;
	put_le32(&cmd.offset, offset);
	fake_req_prep(fr, (struct nvme_cmd *)&cmd, NULL, 0);
	nvmf_req_exec(&fr->req);
	st = fr->completions == 1 ? fake_status(fr) : 0xffff;
	if (val)
		*val = (uint64_t)get_le32(&fr->req.rsp.dw1) << 32 | get_le32(&fr->req.rsp.dw0);
	fake_req_free(fr);
	return st;
}

uint16_t fake_prop_set(struct fake_qpair *fq, uint32_t offset, uint64_t val)
{
	struct nvmf_property_cmd cmd;

	fake_cmd((struct nvme_cmd *)&cmd, NVME_ADMIN_FABRICS, 0);
	cmd.fctype = NVMF_FCTYPE_PROPERTY_SET;
	cmd.attrib = 0;
	put_le32(&cmd.offset, offset);
	put_le64(&cmd.value, val);
	return fake_exec(fq, (struct nvme_cmd *)&cmd, NULL, 0, NULL);
}

/* ---- reactors ------------------------------------------------------------------------------- */

struct reactor fake_reactor[2] = { { .id = 0 }, { .id = 1 } };
bool fake_msg_defer;
unsigned int fake_msgs_sent;
size_t fake_buf_size = 128 * 1024;
bool fake_buf_exhausted;

struct fake_msg {
	reactor_msg_fn fn;
	void *arg;
};
static struct fake_msg msgq[1024];
static unsigned int msgq_head, msgq_tail;

int reactor_send_msg(struct reactor *r, reactor_msg_fn fn, void *arg)
{
	(void)r;
	fake_msgs_sent++;
	if (!fake_msg_defer) {
		fn(arg);
		return 0;
	}
	if (msgq_tail - msgq_head >= 1024)
		return -ENOMEM;
	msgq[msgq_tail++ % 1024] = (struct fake_msg){ fn, arg };
	return 0;
}

static void post_run(void *arg)
{
	struct reactor_post *m = arg;

	m->fn(m->arg);
}

/* Like a message, but never runs inside the call (as the real reactor_post()). */
void reactor_post(struct reactor *r, struct reactor_post *m)
{
	(void)r;
	fake_msgs_sent++;
	if (msgq_tail - msgq_head < 1024)
		msgq[msgq_tail++ % 1024] = (struct fake_msg){ post_run, m };
}

unsigned int fake_msgs_run(void)
{
	unsigned int n = 0;

	while (msgq_head != msgq_tail) {
		struct fake_msg m = msgq[msgq_head++ % 1024];

		m.fn(m.arg);
		n++;
	}
	return n;
}

unsigned int reactor_count(void)
{
	return 0;
}

struct reactor *reactor_get(unsigned int idx)
{
	return idx < 2 ? &fake_reactor[idx] : NULL;
}

struct reactor *reactor_self(void)
{
	return NULL;
}

void *reactor_buf_get(struct reactor *r)
{
	(void)r;
	return fake_buf_exhausted ? NULL : malloc(fake_buf_size);
}

void reactor_buf_put(struct reactor *r, void *buf)
{
	(void)r;
	free(buf);
}

size_t reactor_buf_size(void)
{
	return fake_buf_size;
}

/* ---- bdev ----------------------------------------------------------------------------------- */

struct fake_bdev_ctl fake_bdev = { .fail_op = -1 };

void fake_bdev_reset(void)
{
	unsigned int nopen = fake_bdev.nopen, nclose = fake_bdev.nclose;

	memset(&fake_bdev, 0, sizeof(fake_bdev));
	fake_bdev.fail_op = -1;
	fake_bdev.nopen = nopen;
	fake_bdev.nclose = nclose;
}

static int fake_bdev_run(struct bdev *b, struct bdev_io *io)
{
	uint8_t *mem = b->ctx;
	uint64_t off = io->offset, left = io->len;

	if (io->op == BDEV_OP_NVME) { /* a passthrough "drive": it answers with a status */
		io->nvme_status = fake_bdev.nvme_status;
		return io->nvme_status ? -EIO : 0;
	}
	if (io->offset % b->block_size || io->len % b->block_size || io->offset > b->size ||
	    io->len > b->size - io->offset)
		return -ERANGE;
	switch (io->op) {
	case BDEV_OP_READ:
		if (fake_bdev.map_reads && io->map_ok && io->iovcnt >= 1) {
			io->iov[0].iov_base = mem + off;
			io->iov[0].iov_len = (size_t)io->len;
			io->iovcnt = 1;
			io->mapped = true;
			return 0;
		}
		/* fall through */
	case BDEV_OP_WRITE:
		for (int i = 0; i < io->iovcnt && left; i++) {
			size_t n = io->iov[i].iov_len < left ? io->iov[i].iov_len : left;

			if (io->op == BDEV_OP_READ)
				memcpy(io->iov[i].iov_base, mem + off, n);
			else
				memcpy(mem + off, io->iov[i].iov_base, n);
			off += n;
			left -= n;
		}
		return left ? -EINVAL : 0;
	case BDEV_OP_WRITE_ZEROES:
	case BDEV_OP_DISCARD:
		memset(mem + io->offset, 0, io->len);
		return 0;
	case BDEV_OP_COMPARE_AND_WRITE: /* as rbd: whole units, stop at the first mismatch */
		if (!b->caw_unit)
			return -EOPNOTSUPP;
		for (uint64_t u = 0; u < io->len; u += b->caw_unit) {
			uint8_t cmp[4096], data[4096];

			iov_copy_to_buf(io->cmp_iov, io->cmp_iovcnt, u, cmp, b->caw_unit);
			iov_copy_to_buf(io->iov, io->iovcnt, u, data, b->caw_unit);
			for (uint32_t i = 0; i < b->caw_unit; i++)
				if (cmp[i] != mem[off + u + i]) {
					io->caw_miscompare = u + i;
					return -EILSEQ;
				}
			memcpy(mem + off + u, data, b->caw_unit);
		}
		return 0;
	default:
		return 0;
	}
}

static void fake_bdev_submit(struct bdev *b, struct bdev_io *io)
{
	int rc;

	fake_bdev.last = *io;
	fake_bdev.nsubmit[io->op]++;
	io->be.bdev = b;
	if (fake_bdev.defer && fake_bdev.npending < 64) {
		fake_bdev.pending[fake_bdev.npending++] = io;
		return;
	}
	if (fake_bdev.fail_rc && (fake_bdev.fail_op < 0 || fake_bdev.fail_op == (int)io->op))
		rc = fake_bdev.fail_rc;
	else
		rc = fake_bdev_run(b, io);
	io->cb(io, rc);
}

unsigned int fake_bdev_complete(void)
{
	unsigned int n = fake_bdev.npending;

	fake_bdev.npending = 0;
	for (unsigned int i = 0; i < n; i++) {
		struct bdev_io *io = fake_bdev.pending[i];

		io->cb(io, fake_bdev_run(io->be.bdev, io));
	}
	return n;
}

static const struct bdev_ops fake_bdev_ops = { .name = "fake", .submit = fake_bdev_submit };

static bool block_zero(const uint8_t *p, uint32_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Allocation as the fake sees it: a block of zeroes is deallocated. */
int bdev_lba_status(struct bdev *b, uint64_t offset, uint64_t *len_out, bool *dealloc_out)
{
	const uint8_t *mem = b->ctx;
	uint64_t off = offset;
	bool z;

	if (offset % b->block_size || offset >= b->size)
		return -ERANGE;
	z = block_zero(mem + off, b->block_size);
	while (off < b->size && block_zero(mem + off, b->block_size) == z)
		off += b->block_size;
	*len_out = off - offset;
	*dealloc_out = z;
	return 0;
}

/* The lookups of bdev_lba_query() over the fake's bdev_lba_status(), inline. */
void bdev_lba_query(struct bdev *b, struct bdev_lba_query *q)
{
	uint64_t off = q->offset;
	int rc = 0;

	fake_bdev.nlba_query++;
	q->n = 0;
	while (q->n < q->max && off < q->end) {
		uint64_t len;
		bool dealloc;

		rc = bdev_lba_status(b, off, &len, &dealloc);
		if (rc)
			break;
		if (len > q->end - off)
			len = q->end - off;
		q->ext[q->n].offset = off;
		q->ext[q->n].len = len;
		q->ext[q->n].deallocated = dealloc;
		q->n++;
		off += len;
	}
	q->cb(q, rc);
}

uint8_t *fake_bdev_mem(struct bdev *b)
{
	return b->ctx;
}

int bdev_open(const char *spec, uint32_t block_size, struct bdev **out, char *err,
	      size_t errlen)
{
	struct bdev *b;
	const char *colon = strchr(spec, ':');
	char *end;
	unsigned long long size;

	if (!colon) {
		snprintf(err, errlen, "bad spec");
		return -EINVAL;
	}
	size = strtoull(colon + 1, &end, 10);
	if (*end == 'K')
		size <<= 10;
	else if (*end == 'M')
		size <<= 20;
	b = calloc(1, sizeof(*b));
	b->ops = &fake_bdev_ops;
	snprintf(b->spec, sizeof(b->spec), "%s", spec);
	b->size = size;
	b->block_size = block_size ? block_size : 512;
	if (!strncmp(spec, "file:", 5)) {
		b->volatile_cache = true;
		b->persistent = true;
		snprintf(b->path, sizeof(b->path), "/fake/%s", spec);
	} else if (!strncmp(spec, "shared:", 7)) { /* compare-and-write as rbd's */
		b->caw_unit = 512;
		b->caw_shared = true;
		b->persistent = true;
	} else if (strncmp(spec, "ram:", 4)) {
		free(b);
		snprintf(err, errlen, "unknown backend");
		return -ENOENT;
	}
	b->ctx = calloc(1, size ? size : 1);
	fake_bdev.nopen++;
	*out = b;
	return 0;
}

int bdev_open_ex(const char *spec, const struct bdev_open_opts *o, struct bdev **out, char *err,
		 size_t errlen)
{
	int rc = bdev_open(spec, o->block_size, out, err, errlen);

	if (!rc)
		(*out)->buffered_io = o->buffered_io;
	return rc;
}

void bdev_set_resize_hook(struct bdev *b, void (*fn)(struct bdev *, uint64_t, uint64_t, void *),
			  void *arg)
{
	b->resize_hook = fn;
	b->resize_arg = arg;
}

static int fake_bdev_set_size(struct bdev *b, uint64_t size)
{
	uint64_t old = b->size;
	uint8_t *mem = realloc(b->ctx, size);

	if (!mem)
		return -ENOMEM;
	if (size > old)
		memset(mem + old, 0, size - old);
	b->ctx = mem;
	b->size = size;
	return 0;
}

int fake_bdev_grow(struct bdev *b, uint64_t size)
{
	uint64_t old = b->size;
	int rc = fake_bdev_set_size(b, size);

	if (!rc && b->resize_hook)
		b->resize_hook(b, old, size, b->resize_arg);
	return rc;
}

int bdev_resize(struct bdev *b, uint64_t size, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return size ? fake_bdev_set_size(b, size) : 0;
}

void bdev_close(struct bdev *b)
{
	fake_bdev.nclose++;
	free(b->ctx);
	free(b);
}

/* ---- a small target ------------------------------------------------------------------------- */

void fake_env_setup(struct fake_env *e, const char *ns_spec)
{
	struct nvmf_tgt_opts o;
	struct nvmf_port_opts po = {
		.portid = 1, .trtype = "tcp", .adrfam = "ipv4", .traddr = "127.0.0.1",
		.trsvcid = "4420",
	};
	char err[128];

	memset(e, 0, sizeof(*e));
	fake_bdev_reset();
	fake_msg_defer = false;
	fake_buf_exhausted = false;
	fake_buf_size = 128 * 1024;
	nvmf_tgt_opts_default(&o);
	e->tgt = nvmf_tgt_create(&o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->tgt);
	e->subsys = nvmf_subsys_create(e->tgt, FAKE_SUBNQN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->subsys);
	nvmf_subsys_set_allow_any_host(e->subsys, true);
	if (ns_spec) {
		struct nvmf_ns_opts no = { .path = ns_spec, .enabled = true };

		CU_ASSERT_EQUAL_FATAL(nvmf_subsys_add_ns(e->subsys, &no, err, sizeof(err)), 1);
	}
	e->port = nvmf_port_create(e->tgt, &po, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->port);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(e->port, e->subsys), 0);
}

void fake_env_connect(struct fake_env *e, uint32_t kato, uint16_t nq, unsigned int nio)
{
	struct fake_connect c;
	struct nvme_cmd cmd;
	uint32_t dw0 = 0;

	fake_qpair_init(&e->admin, e->tgt, e->port, &fake_reactor[0]);
	fake_connect_defaults(&c, 0);
	c.kato = kato;
	CU_ASSERT_EQUAL_FATAL(fake_connect(&e->admin, &c, &dw0), 0);
	e->cntlid = (uint16_t)dw0;
	CU_ASSERT_EQUAL_FATAL(fake_prop_set(&e->admin, NVME_REG_CC,
					    NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT |
						    4u << NVME_CC_IOCQES_SHIFT),
			      0);
	if (nq) {
		fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
		put_le32(&cmd.cdw10, NVME_FEAT_NUM_QUEUES);
		put_le32(&cmd.cdw11, (uint32_t)(nq - 1) | (uint32_t)(nq - 1) << 16);
		CU_ASSERT_EQUAL_FATAL(fake_exec(&e->admin, &cmd, NULL, 0, NULL), 0);
	}
	for (unsigned int i = 0; i < nio && i < 4; i++) {
		fake_qpair_init(&e->io[i], e->tgt, e->port, &fake_reactor[(i + 1) % 2]);
		fake_connect_defaults(&c, (uint16_t)(i + 1));
		c.cntlid = e->cntlid;
		CU_ASSERT_EQUAL_FATAL(fake_connect(&e->io[i], &c, NULL), 0);
	}
}

void fake_env_teardown(struct fake_env *e)
{
	for (int i = 0; i < 4; i++)
		fake_qpair_close(&e->io[i]);
	fake_qpair_close(&e->admin);
	fake_msg_defer = false;
	fake_msgs_run();
	nvmf_tgt_destroy(e->tgt);
	e->tgt = NULL;
}

int fake_run_suite(const char *name, const CU_TestInfo *tests)
{
	log_set_level(getenv("UT_VERBOSE") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	return ut_run(name, NULL, NULL, tests);
}
