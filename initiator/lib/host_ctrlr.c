/* SPDX-License-Identifier: MIT */
/*
 * Controllers: connect (admin queue, Fabrics Connect, Property Get/Set enable sequence,
 * Identify, number of queues, namespace scan), I/O queue pairs, Keep Alive, admin
 * commands, clean shutdown (Disconnect, CC.SHN), and recovery from a lost connection
 * (the controller state machine, reconnect_delay / ctrl_loss_tmo / fast_io_fail_tmo as
 * the Linux host's nvme-fabrics options).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/endian.h"
#include "host_ctrlr.h"
#include "nvme/host_auth.h"
#include "nvme/host_nvme.h"
#include "scsi/host_iscsi.h"

#define MAX_QUEUE_DEPTH 1024
#define MAX_NAMESPACES 65536
#define ENABLE_TIMEOUT_MAX_MS 60000
#define SHUTDOWN_TIMEOUT_MS 5000
#define DISCONNECT_TIMEOUT_MS 2000
#define IO_QUEUES_REQUEST 64	   /* asked for at connect so later qpairs fit */

static const struct nvmeof_transport_ops *transport_for(enum uri_transport t)
{
	switch (t) {
	case URI_TRANSPORT_TCP:
		return &host_tcp_transport_ops;
	case URI_TRANSPORT_ISCSI:
		return &iscsi_transport_ops;
#ifdef HAVE_RDMA
	case URI_TRANSPORT_RDMA:
		return &rdma_transport_ops;
#endif
	default:
		return NULL;
	}
}

/* What the queue layer asks of a controller (struct qpair_owner_ops). */
static const struct qpair_owner_ops ctrlr_owner_ops = {
	.conn_lost = ctrlr_conn_lost,
	.qpair_recover = ctrlr_qpair_recover,
	.recover_timeout_ms = ctrlr_recover_timeout_ms,
	.keepalive_poll = ctrlr_keepalive_poll,
	.keepalive_tick = ctrlr_keepalive_tick,
};

/* ---- Admin commands (admin_lock held) ---------------------------------------------------- */
static int identify_locked(struct nvmeof_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf)
{
	struct nvme_cmd sqe = { .opc = NVME_ADMIN_IDENTIFY };

	put_le32(&sqe.nsid, nsid);
	put_le32(&sqe.cdw10, cns);
	return qpair_exec(ctrlr->admin, &sqe, buf, NVME_IDENTIFY_DATA_SIZE,
			  NVME_XFER_CTRLR_TO_HOST, NULL);
}

int get_log_page_locked(struct nvmeof_ctrlr *ctrlr, uint8_t lid, uint32_t nsid,
			uint64_t offset, void *buf, size_t len)
{
	size_t chunk = ctrlr->max_xfer ? ctrlr->max_xfer : 256 * 1024;

	if (len == 0 || len % 4 || offset % 4)
		return -EINVAL;
	if (chunk > 256 * 1024)
		chunk = 256 * 1024;
	while (len) {
		size_t n = len < chunk ? len : chunk;
		uint32_t numd = (uint32_t)(n / 4 - 1);
		struct nvme_cmd sqe = { .opc = NVME_ADMIN_GET_LOG_PAGE };
		int rc;

		put_le32(&sqe.nsid, nsid);
		put_le32(&sqe.cdw10, lid | (numd & 0xffff) << 16);
		put_le32(&sqe.cdw11, numd >> 16);
		put_le32(&sqe.cdw12, (uint32_t)offset);
		put_le32(&sqe.cdw13, (uint32_t)(offset >> 32));
		rc = qpair_exec(ctrlr->admin, &sqe, buf, (uint32_t)n, NVME_XFER_CTRLR_TO_HOST,
				NULL);
		if (rc)
			return rc;
		buf = (uint8_t *)buf + n;
		offset += n;
		len -= n;
	}
	return 0;
}

static void ka_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct nvmeof_ctrlr *ctrlr = arg;
	char st[96];

	ctrlr->ka_inflight = false;
	if (cpl->err)
		nlog_warn("Keep Alive failed: %s", strerror(-cpl->err));
	else if (cpl->status)
		nlog_warn("Keep Alive failed: %s", nvmeof_status_str(cpl->status, st, sizeof(st)));
}

int ctrlr_keepalive_tick(struct nvmeof_ctrlr *ctrlr)
{
	uint64_t now;

	if (!ctrlr->next_ka || !ctrlr->admin || ctrlr->admin->state != QP_READY)
		return -1;
	now = now_ms();
	if (now >= ctrlr->next_ka) {
		if (!ctrlr->ka_inflight) {
			struct nvme_cmd sqe = { .opc = NVME_ADMIN_KEEP_ALIVE };

			if (qpair_submit_cmd(ctrlr->admin, &sqe, NULL, 0, 0, NVME_XFER_NONE, ka_done,
					     ctrlr) == 0)
				ctrlr->ka_inflight = true;
		}
		__atomic_store_n(&ctrlr->next_ka, now + ctrlr->kato_ms / 2, __ATOMIC_RELAXED);
	}
	return (int)(ctrlr->next_ka - now);
}

int ctrlr_keepalive_poll(struct nvmeof_ctrlr *ctrlr)
{
	uint64_t due = __atomic_load_n(&ctrlr->next_ka, __ATOMIC_RELAXED), now;
	int tmo;

	if (__atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE) != NVMEOF_CTRLR_LIVE)
		return RECOVER_POLL_MS; /* the I/O queue's own poll drives the recovery */

	if (!due)
		return -1;
	/* Cheap until a Keep Alive is due: no lock, no admin socket I/O. The answer to the
	 * previous one is collected when the next one goes out. */
	now = now_ms();
	if (now < due)
		return (int)(due - now);
	if (pthread_mutex_trylock(&ctrlr->admin_lock))
		return 100; /* another thread is on the admin queue and keeps it alive */
	qpair_poll(ctrlr->admin, POLLIN | POLLOUT, 0);
	tmo = ctrlr_keepalive_tick(ctrlr);
	if (ctrlr->ka_inflight)
		qpair_poll(ctrlr->admin, POLLOUT, 0);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	/* The admin queue just failed: the caller's queue pair must follow soon. */
	if (__atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE) != NVMEOF_CTRLR_LIVE)
		return 0;
	return tmo;
}

/* ---- Bring-up ----------------------------------------------------------------------------- */
static int wait_csts(struct nvmeof_ctrlr *ctrlr, uint32_t mask, uint32_t want,
		     uint32_t timeout_ms, const char *what)
{
	uint64_t deadline = now_ms() + timeout_ms;
	uint64_t csts;
	int rc;

	for (;;) {
		rc = fabrics_prop_get(ctrlr->admin, NVME_REG_CSTS, false, &csts);
		if (rc)
			return set_error(rc < 0 ? rc : -EIO, "Property Get CSTS failed while %s",
					 what);
		if (csts & NVME_CSTS_CFS)
			return set_error(-EIO, "controller fatal status (CSTS.CFS) while %s", what);
		if ((csts & mask) == want)
			return 0;
		if (now_ms() >= deadline)
			return set_error(-ETIMEDOUT, "controller not ready after %u ms while %s",
					 timeout_ms, what);
		usleep(10000);
	}
}

int ctrlr_enable(struct nvmeof_ctrlr *ctrlr)
{
	struct nvmeof_qpair *aq = ctrlr->admin;
	uint32_t mpsmin, to_ms, cc;
	uint64_t v;
	int rc;

	rc = fabrics_prop_get(aq, NVME_REG_CAP, true, &ctrlr->cap);
	if (rc)
		return set_error(rc < 0 ? rc : -EIO, "Property Get CAP failed");
	mpsmin = (uint32_t)(ctrlr->cap >> NVME_CAP_MPSMIN_SHIFT) & 0xf;
	ctrlr->io_entries_max = (uint16_t)(NVME_CAP_MQES(ctrlr->cap) + 1 > 0xffff
						   ? 0xffff
						   : NVME_CAP_MQES(ctrlr->cap) + 1);
	to_ms = (uint32_t)((ctrlr->cap >> NVME_CAP_TO_SHIFT) & 0xff) * 500;
	if (to_ms < 500)
		to_ms = 500;
	if (to_ms > ENABLE_TIMEOUT_MAX_MS)
		to_ms = ENABLE_TIMEOUT_MAX_MS;

	cc = 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT |
	     mpsmin << NVME_CC_MPS_SHIFT;
	rc = fabrics_prop_set(aq, NVME_REG_CC, false, cc);
	if (rc == 0)
		rc = fabrics_prop_set(aq, NVME_REG_CC, false, cc | NVME_CC_EN);
	if (rc)
		return set_error(rc < 0 ? rc : -EIO, "Property Set CC failed");
	rc = wait_csts(ctrlr, NVME_CSTS_RDY, NVME_CSTS_RDY, to_ms, "enabling");
	if (rc)
		return rc;
	rc = fabrics_prop_get(aq, NVME_REG_VS, false, &v);
	if (rc)
		return set_error(rc < 0 ? rc : -EIO, "Property Get VS failed");
	ctrlr->vs = (uint32_t)v;
	ctrlr->max_xfer = 0;
	return 0;
}

static void trim_copy(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

static int ns_identify(struct nvmeof_ctrlr *ctrlr, uint32_t nsid, struct nvme_id_ns *id,
		       struct nvmeof_ns *ns)
{
	uint8_t fmt, lbads;
	int rc;

	rc = identify_locked(ctrlr, NVME_ID_CNS_NS, nsid, id);
	if (rc)
		return rc;
	if (get_le64(&id->nsze) == 0)
		return -ENODEV; /* inactive */
	fmt = (id->flbas & 0xf) | (uint8_t)(id->nlbaf > 16 ? (id->flbas >> 5 & 3) << 4 : 0);
	if (fmt > id->nlbaf || fmt >= 64)
		return -EINVAL;
	lbads = id->lbaf[fmt].lbads;
	if (lbads < 9 || lbads > 16) {
		nlog_warn("namespace %u: unsupported block size 2^%u, skipped", nsid, lbads);
		return -EINVAL;
	}
	memset(ns, 0, sizeof(*ns));
	ns->ctrlr = ctrlr;
	ns->block_shift = lbads;
	ns->info.nsid = nsid;
	ns->info.nsze = get_le64(&id->nsze);
	ns->info.ncap = get_le64(&id->ncap);
	ns->info.nuse = get_le64(&id->nuse);
	ns->info.block_size = 1u << lbads;
	ns->info.ms = get_le16(&id->lbaf[fmt].ms);
	ns->info.nmic = id->nmic;
	ns->info.dlfeat = id->dlfeat;
	ns->info.nsfeat = id->nsfeat;
	memcpy(ns->info.nguid, id->nguid, 16);
	memcpy(ns->info.eui64, id->eui64, 8);
	for (int i = 0; i < 16; i++)
		ns->info.has_nguid |= id->nguid[i] != 0;
	for (int i = 0; i < 8; i++)
		ns->info.has_eui64 |= id->eui64[i] != 0;

	/* A UUID only comes in the descriptor list (CNS 03h, NVMe 1.3). */
	if (ctrlr->vs >= NVME_VS(1, 3, 0) &&
	    identify_locked(ctrlr, NVME_ID_CNS_NS_DESC_LIST, nsid, id) == 0) {
		const uint8_t *p = (const uint8_t *)id, *end = p + NVME_IDENTIFY_DATA_SIZE;

		while (p + sizeof(struct nvme_ns_id_desc) <= end) {
			const struct nvme_ns_id_desc *d = (const void *)p;

			if (d->nidl == 0 || p + sizeof(*d) + d->nidl > end)
				break;
			if (d->nidt == NVME_NIDT_UUID && d->nidl == NVME_NIDT_UUID_LEN) {
				memcpy(ns->info.uuid, p + sizeof(*d), 16);
				ns->info.has_uuid = true;
			}
			p += sizeof(*d) + d->nidl;
		}
	}
	return 0;
}

static int ns_add(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_ns *ns, unsigned int *cap)
{
	if (ctrlr->nr_ns == *cap) {
		unsigned int ncap = *cap ? *cap * 2 : 16;
		struct nvmeof_ns *n = realloc(ctrlr->ns, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ctrlr->ns = n;
		*cap = ncap;
	}
	ctrlr->ns[ctrlr->nr_ns++] = *ns;
	return 0;
}

static int scan_namespaces(struct nvmeof_ctrlr *ctrlr)
{
	struct nvme_id_ns *id = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	uint32_t *list = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	uint32_t nn = get_le32(&ctrlr->id->nn), start = 0;
	unsigned int cap = 0;
	struct nvmeof_ns ns;
	int rc = 0;

	if (!id || !list) {
		rc = set_error(-ENOMEM, "out of memory");
		goto out;
	}
	ctrlr->nr_ns = 0;
	if (ctrlr->vs >= NVME_VS(1, 1, 0) &&
	    identify_locked(ctrlr, NVME_ID_CNS_NS_ACTIVE_LIST, 0, list) == 0) {
		for (;;) {
			uint32_t i, last = 0;

			for (i = 0; i < 1024; i++) {
				uint32_t nsid = get_le32(&list[i]);

				if (nsid == 0 || nsid <= start)
					break;
				last = nsid;
				rc = ns_identify(ctrlr, nsid, id, &ns);
				if (rc == 0)
					rc = ns_add(ctrlr, &ns, &cap);
				if (rc < 0 && rc != -ENODEV && rc != -EINVAL)
					goto out;
				rc = 0;
			}
			if (i < 1024 || ctrlr->nr_ns >= MAX_NAMESPACES || last >= 0xfffffffeu)
				break;
			start = last;
			rc = identify_locked(ctrlr, NVME_ID_CNS_NS_ACTIVE_LIST, start, list);
			if (rc)
				break;
		}
		rc = 0;
	} else {
		/* Before NVMe 1.1: probe every NSID up to NN. */
		for (uint32_t nsid = 1; nsid <= nn && nsid <= 1024; nsid++) {
			rc = ns_identify(ctrlr, nsid, id, &ns);
			if (rc == 0)
				rc = ns_add(ctrlr, &ns, &cap);
			if (rc < 0 && rc != -ENODEV && rc != -EINVAL)
				goto out;
			rc = 0;
		}
	}
out:
	if (rc > 0)
		rc = set_error(-EIO, "namespace scan failed: %s", nvmeof_status_name((uint16_t)rc));
	else if (rc < 0)
		set_error(rc, "namespace scan failed: %s", strerror(-rc));
	free(id);
	free(list);
	return rc;
}

int ctrlr_set_num_queues(struct nvmeof_ctrlr *ctrlr)
{
	uint32_t want = ctrlr->opts.io_queues > IO_QUEUES_REQUEST ? ctrlr->opts.io_queues
								   : IO_QUEUES_REQUEST;
	struct nvme_cmd sqe = { .opc = NVME_ADMIN_SET_FEATURES };
	struct nvmeof_cpl cpl;
	uint32_t nsq, ncq;
	int rc;

	if (want > 0xffff)
		want = 0xffff;
	put_le32(&sqe.cdw10, NVME_FEAT_NUM_QUEUES);
	put_le32(&sqe.cdw11, (want - 1) | (want - 1) << 16);
	rc = qpair_exec(ctrlr->admin, &sqe, NULL, 0, NVME_XFER_NONE, &cpl);
	if (rc < 0)
		return set_error(rc, "Set Features (Number of Queues) failed: %s", strerror(-rc));
	if (rc > 0) {
		nlog_warn("Set Features (Number of Queues) failed: %s; assuming %u queues",
			  nvmeof_status_name((uint16_t)rc), ctrlr->opts.io_queues);
		ctrlr->max_io_queues = ctrlr->opts.io_queues;
		return 0;
	}
	nsq = (cpl.dw0 & 0xffff) + 1;
	ncq = (cpl.dw0 >> 16) + 1;
	ctrlr->max_io_queues = nsq < ncq ? nsq : ncq;
	return 0;
}

static int fabrics_setup(struct nvmeof_ctrlr *ctrlr)
{
	const struct nvmeof_opts *o = &ctrlr->opts;
	struct nvmeof_qpair *aq;
	uint32_t kato = o->kato_ms, mpsmin, ioccsz;
	int rc;

	aq = ctrlr->ops->qpair_alloc();
	if (!aq)
		return set_error(-ENOMEM, "out of memory");
	ctrlr->admin = aq;
	rc = qpair_init(aq, ctrlr, 0, ADMIN_ENTRIES - 1, o->admin_timeout_ms);
	if (rc)
		return set_error(rc, "out of memory");
	aq->entries = ADMIN_ENTRIES;
	rc = ctrlr->ops->qpair_connect(aq, (int)o->connect_timeout_ms);
	if (rc)
		return rc;
	qpair_set_state(aq, QP_CONNECTING);
	rc = fabrics_connect(aq, ADMIN_ENTRIES - 1, kato, NVMF_CNTLID_DYNAMIC, &ctrlr->cntlid);
	if (rc)
		return rc;
	qpair_set_state(aq, QP_READY);
	rc = ctrlr_enable(ctrlr);
	if (rc)
		return rc;

	ctrlr->id = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	if (!ctrlr->id)
		return set_error(-ENOMEM, "out of memory");
	rc = identify_locked(ctrlr, NVME_ID_CNS_CTRL, 0, ctrlr->id);
	if (rc)
		return set_error(rc < 0 ? rc : -EIO, "Identify Controller failed: %s",
				 rc < 0 ? strerror(-rc) : nvmeof_status_name((uint16_t)rc));
	if (get_le16(&ctrlr->id->cntlid) != ctrlr->cntlid)
		nlog_warn("Identify CNTLID %u differs from Connect's %u",
			  get_le16(&ctrlr->id->cntlid), ctrlr->cntlid);
	mpsmin = (uint32_t)(ctrlr->cap >> NVME_CAP_MPSMIN_SHIFT) & 0xf;
	if (ctrlr->id->mdts) {
		uint64_t m = (uint64_t)4096 << mpsmin << ctrlr->id->mdts;

		ctrlr->max_xfer = m > (1u << 30) ? (1u << 30) : (uint32_t)m;
	}
	aq->max_xfer = ctrlr->max_xfer;
	ioccsz = get_le32(&ctrlr->id->ioccsz);
	ctrlr->io_icdata = ioccsz >= 4 ? ioccsz * 16 - 64 : 0;

	if (!ctrlr->uri.discovery) {
		rc = ctrlr_set_num_queues(ctrlr);
		if (rc)
			return rc;
		rc = scan_namespaces(ctrlr);
		if (rc)
			return rc;
	}
	ctrlr->kato_ms = kato;
	if (kato)
		ctrlr->next_ka = now_ms() + kato / 2;
	return 0;
}

/* ---- I/O queue pairs ------------------------------------------------------------------------ */
/* Identify Controller OFCS bit 0: the controller supports the Disconnect command. */
#define OFCS_DISCONNECT 0x1

static void qpair_destroy(struct nvmeof_qpair *qp)
{
	const struct nvme_id_ctrl *id = qp->ctrlr ? qp->ctrlr->id : NULL;

	if (qp->state == QP_READY && qp->nr_outstanding == 0 && qp->qid != 0 && id &&
	    (get_le16(&id->ofcs) & OFCS_DISCONNECT)) {
		/* Ask the controller to delete the queue before the connection goes. Without
		 * OFCS support (Linux nvmet, for one) closing the connection does it. */
		qp->timeout_ms = DISCONNECT_TIMEOUT_MS;
		if (fabrics_disconnect(qp))
			nlog_debug("queue %u: Disconnect failed", qp->qid);
	}
	qpair_close(qp);
	qpair_poll(qp, 0, 0); /* run the -ECANCELED callbacks */
	qpair_fini(qp);
	qp->ops->qpair_free(qp);
}

static int io_qpair_create(struct nvmeof_ctrlr *ctrlr, unsigned int depth,
			   struct nvmeof_qpair **out)
{
	const struct nvmeof_opts *o = &ctrlr->opts;
	struct nvmeof_qpair *qp;
	unsigned int entries, qid;
	int rc;

	if (ctrlr->uri.discovery)
		return set_error(-EINVAL, "a discovery controller has no I/O queues");
	if (depth == 0)
		depth = o->queue_depth;
	if (depth < 1 || depth > MAX_QUEUE_DEPTH)
		return set_error(-EINVAL, "queue depth %u out of range (1-%u)", depth,
				 MAX_QUEUE_DEPTH);
	for (qid = 1; qid <= ctrlr->max_io_queues && ctrlr->qid_used[qid]; qid++)
		;
	if (qid > ctrlr->max_io_queues)
		return set_error(-ENOSPC, "the controller allows %u I/O queues",
				 ctrlr->max_io_queues);
	/* A queue of N entries holds N - 1 commands. */
	entries = depth + 1;
	if (entries > ctrlr->io_entries_max) {
		entries = ctrlr->io_entries_max;
		nlog_info("queue depth %u reduced to %u (controller MQES)", depth, entries - 1);
	}
	if (entries < 2)
		return set_error(-EINVAL, "controller queue size %u too small", entries);

	qp = ctrlr->ops->qpair_alloc();
	if (!qp)
		return set_error(-ENOMEM, "out of memory");
	rc = qpair_init(qp, ctrlr, (uint16_t)qid, (uint16_t)(entries - 1), o->connect_timeout_ms);
	if (rc) {
		ctrlr->ops->qpair_free(qp);
		return set_error(rc, "out of memory");
	}
	qp->entries = (uint16_t)entries;
	rc = ctrlr->ops->qpair_connect(qp, (int)o->connect_timeout_ms);
	if (rc == 0) {
		qpair_set_state(qp, QP_CONNECTING);
		ctrlr->ops->set_icdata(qp, ctrlr->io_icdata);
		rc = fabrics_connect(qp, (uint16_t)(entries - 1), 0, ctrlr->cntlid, NULL);
	}
	if (rc) {
		qpair_close(qp);
		qpair_fini(qp);
		ctrlr->ops->qpair_free(qp);
		return rc;
	}
	qp->timeout_ms = o->io_timeout_ms;
	qp->max_xfer = ctrlr->max_xfer;
	qp->epoch = __atomic_load_n(&ctrlr->epoch, __ATOMIC_ACQUIRE);
	qpair_set_state(qp, QP_READY);
	ctrlr->qid_used[qid] = 1;
	TAILQ_INSERT_TAIL(&ctrlr->io_qpairs, qp, link);
	ctrlr->nr_io_qpairs++;
	*out = qp;
	return 0;
}

int nvmeof_qpair_alloc(struct nvmeof_ctrlr *ctrlr, unsigned int depth,
		       struct nvmeof_qpair **qpair)
{
	int rc;

	clear_error();
	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = io_qpair_create(ctrlr, depth, qpair);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}

void nvmeof_qpair_free(struct nvmeof_qpair *qp)
{
	struct nvmeof_ctrlr *ctrlr;

	if (!qp)
		return;
	ctrlr = qp->ctrlr;
	pthread_mutex_lock(&ctrlr->admin_lock);
	TAILQ_REMOVE(&ctrlr->io_qpairs, qp, link);
	ctrlr->nr_io_qpairs--;
	ctrlr->qid_used[qp->qid] = 0;
	for (unsigned int i = 0; i < ctrlr->nr_initial; i++)
		if (ctrlr->initial[i] == qp)
			ctrlr->initial[i] = NULL;
	pthread_mutex_unlock(&ctrlr->admin_lock);
	qpair_destroy(qp);
}

unsigned int nvmeof_ctrlr_num_qpairs(const struct nvmeof_ctrlr *ctrlr)
{
	return ctrlr->nr_initial;
}

struct nvmeof_qpair *nvmeof_ctrlr_get_qpair(struct nvmeof_ctrlr *ctrlr, unsigned int idx)
{
	return idx < ctrlr->nr_initial ? ctrlr->initial[idx] : NULL;
}

/* ---- Connect / disconnect ---------------------------------------------------------------- */
static void ctrlr_free(struct nvmeof_ctrlr *ctrlr, bool shutdown)
{
	struct nvmeof_qpair *qp;

	pthread_mutex_lock(&ctrlr->state_lock);
	ctrlr_set_state(ctrlr, NVMEOF_CTRLR_DELETED);
	pthread_mutex_unlock(&ctrlr->state_lock);

	while ((qp = TAILQ_FIRST(&ctrlr->io_qpairs))) {
		TAILQ_REMOVE(&ctrlr->io_qpairs, qp, link);
		qpair_destroy(qp);
	}
	if (ctrlr->admin) {
		pthread_mutex_lock(&ctrlr->admin_lock);
		ctrlr->next_ka = 0;
		if (shutdown && ctrlr->admin->state == QP_READY) {
			uint32_t cc = 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT |
				      NVME_CC_EN;
			uint64_t cur;

			if (fabrics_prop_get(ctrlr->admin, NVME_REG_CC, false, &cur) == 0)
				cc = (uint32_t)cur;
			cc = (cc & ~NVME_CC_SHN_MASK) | NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT;
			if (fabrics_prop_set(ctrlr->admin, NVME_REG_CC, false, cc) == 0 &&
			    wait_csts(ctrlr, NVME_CSTS_SHST_MASK,
				      NVME_CSTS_SHST_COMPLETE << NVME_CSTS_SHST_SHIFT,
				      SHUTDOWN_TIMEOUT_MS, "shutting down"))
				nlog_warn("%s", nvmeof_last_error());
		}
		qpair_destroy(ctrlr->admin);
		ctrlr->admin = NULL;
		pthread_mutex_unlock(&ctrlr->admin_lock);
	}
	/* No queue pair is left to reach registered memory: drop it, then the transport's
	 * controller-wide state it lived in. */
	host_mem_release_all(ctrlr);
	pthread_mutex_destroy(&ctrlr->admin_lock);
	pthread_mutex_destroy(&ctrlr->state_lock);
	host_auth_free(ctrlr);
	free(ctrlr->initial);
	free(ctrlr->qid_used);
	free(ctrlr->id);
	free(ctrlr->ns);
	host_tls_key_free(ctrlr->tls_key);
	free(ctrlr);
}

static int check_opts(const struct nvmeof_opts *o)
{
	if (o->queue_depth < 1 || o->queue_depth > MAX_QUEUE_DEPTH)
		return set_error(-EINVAL, "queue depth %u out of range (1-%u)", o->queue_depth,
				 MAX_QUEUE_DEPTH);
	if (o->io_queues > 1024)
		return set_error(-EINVAL, "too many I/O queues (%u)", o->io_queues);
	if (o->connect_timeout_ms == 0 || o->admin_timeout_ms == 0)
		return set_error(-EINVAL, "connect and admin timeouts must not be 0");
	if (o->reconnect_delay < 0 || o->reconnect_delay > 86400)
		return set_error(-EINVAL, "reconnect_delay %d out of range (0-86400 s)",
				 o->reconnect_delay);
	if (o->ctrl_loss_tmo < -1 || o->fast_io_fail_tmo < -1)
		return set_error(-EINVAL, "ctrl_loss_tmo and fast_io_fail_tmo must be >= -1");
	if (o->fast_io_fail_tmo >= 0 && o->ctrl_loss_tmo >= 0 &&
	    o->fast_io_fail_tmo > o->ctrl_loss_tmo)
		nlog_warn("fast_io_fail_tmo %d s exceeds ctrl_loss_tmo %d s: it never applies",
			  o->fast_io_fail_tmo, o->ctrl_loss_tmo);
	return 0;
}

int nvmeof_ctrlr_connect(const char *uri, const struct nvmeof_opts *opts,
			 struct nvmeof_ctrlr **out)
{
	struct nvmeof_ctrlr *ctrlr;
	pthread_mutexattr_t ma;
	char err[256];
	int rc;

	clear_error();
	*out = NULL;
	ctrlr = calloc(1, sizeof(*ctrlr));
	if (!ctrlr)
		return set_error(-ENOMEM, "out of memory");
	ctrlr->owner = &ctrlr_owner_ops;
	TAILQ_INIT(&ctrlr->io_qpairs);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&ctrlr->admin_lock, &ma);
	pthread_mutex_init(&ctrlr->state_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	host_mem_init(&ctrlr->mem);
	ctrlr->state = NVMEOF_CTRLR_NEW;
	if (opts)
		ctrlr->opts = *opts;
	else
		nvmeof_opts_init(&ctrlr->opts);

	rc = check_opts(&ctrlr->opts);
	if (rc)
		goto fail;
	if (uri_parse_target(uri, &ctrlr->uri, err, sizeof(err))) {
		rc = set_error(-EINVAL, "bad URI: %s", err);
		goto fail;
	}
	ctrlr->ops = transport_for(ctrlr->uri.transport);
	if (!ctrlr->ops) {
		rc = set_error(-EPROTONOSUPPORT, "%s:// targets are not supported by this library",
			       ctrlr->uri.transport == URI_TRANSPORT_RDMA ? "nvme+rdma" : "iscsi");
		goto fail;
	}
	rc = host_tls_ctrlr_init(ctrlr);
	if (rc)
		goto fail;
	rc = host_identity(ctrlr->opts.hostnqn, ctrlr->opts.hostid, "/etc/nvme", NULL,
			   ctrlr->hostnqn, ctrlr->hostid);
	if (rc)
		goto fail;
	snprintf(ctrlr->uri_str, sizeof(ctrlr->uri_str), "nvme+%s://%s%s%s:%u/%s",
		 ctrlr->ops->name, ctrlr->uri.ipv6 ? "[" : "", ctrlr->uri.host,
		 ctrlr->uri.ipv6 ? "]" : "", ctrlr->uri.port, ctrlr->uri.name);
	if (ctrlr->uri.discovery)
		ctrlr->opts.io_queues = 0;
	rc = host_auth_setup(ctrlr);
	if (rc)
		goto fail;

	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = ctrlr->ops->ctrlr_setup ? ctrlr->ops->ctrlr_setup(ctrlr) : fabrics_setup(ctrlr);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	if (rc)
		goto fail;

	ctrlr->qid_used = calloc(ctrlr->max_io_queues + 1u, 1);
	ctrlr->initial = calloc(ctrlr->opts.io_queues + 1u, sizeof(*ctrlr->initial));
	if (!ctrlr->qid_used || !ctrlr->initial) {
		rc = set_error(-ENOMEM, "out of memory");
		goto fail;
	}
	if (ctrlr->uri.nsid && !nvmeof_ctrlr_get_ns(ctrlr, ctrlr->uri.nsid)) {
		rc = set_error(-ENODEV, "namespace %u is not active on %s", ctrlr->uri.nsid,
			       ctrlr->uri.name);
		goto fail;
	}
	for (unsigned int i = 0; i < ctrlr->opts.io_queues; i++) {
		pthread_mutex_lock(&ctrlr->admin_lock);
		rc = io_qpair_create(ctrlr, ctrlr->opts.queue_depth, &ctrlr->initial[i]);
		pthread_mutex_unlock(&ctrlr->admin_lock);
		if (rc)
			goto fail;
		ctrlr->nr_initial++;
	}
	nlog_info("connected to %s (cntlid %u, %u I/O queues)", ctrlr->uri_str, ctrlr->cntlid,
		  ctrlr->nr_initial);
	pthread_mutex_lock(&ctrlr->state_lock);
	ctrlr_set_state(ctrlr, NVMEOF_CTRLR_LIVE);
	pthread_mutex_unlock(&ctrlr->state_lock);
	*out = ctrlr;
	return 0;
fail:
	{
		/* Keep the first, most precise message. */
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", nvmeof_last_error());
		ctrlr_free(ctrlr, ctrlr->admin && ctrlr->admin->state == QP_READY && ctrlr->vs);
		if (msg[0])
			set_error(rc, "%s", msg);
		else
			set_error(rc, "connect failed: %s", strerror(-rc));
	}
	return rc;
}

void nvmeof_ctrlr_disconnect(struct nvmeof_ctrlr *ctrlr)
{
	if (ctrlr)
		ctrlr_free(ctrlr, true);
}

/* ---- Event loop hooks for the admin queue --------------------------------------------------- */
int nvmeof_ctrlr_get_fd(const struct nvmeof_ctrlr *ctrlr)
{
	return nvmeof_qpair_get_fd(ctrlr->admin);
}

short nvmeof_ctrlr_which_events(struct nvmeof_ctrlr *ctrlr)
{
	short ev;

	pthread_mutex_lock(&ctrlr->admin_lock);
	ev = nvmeof_qpair_which_events(ctrlr->admin);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return ev;
}

int nvmeof_ctrlr_service(struct nvmeof_ctrlr *ctrlr, short revents)
{
	int rc;

	pthread_mutex_lock(&ctrlr->admin_lock);
	ctrlr_recover_locked(ctrlr);
	ctrlr_keepalive_tick(ctrlr);
	rc = qpair_poll(ctrlr->admin, revents, 0);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}

int nvmeof_ctrlr_timeout_ms(struct nvmeof_ctrlr *ctrlr)
{
	int a, k;

	pthread_mutex_lock(&ctrlr->admin_lock);
	a = nvmeof_qpair_timeout_ms(ctrlr->admin);
	k = -1;
	if (ctrlr->next_ka) {
		uint64_t now = now_ms();

		k = now >= ctrlr->next_ka ? 0 : (int)(ctrlr->next_ka - now);
	}
	pthread_mutex_unlock(&ctrlr->admin_lock);
	a = timeout_min(a, k);
	return timeout_min(a, ctrlr_recover_due_ms(ctrlr));
}

/* ---- Admin commands ---------------------------------------------------------------------- */
int nvmeof_ctrlr_identify(struct nvmeof_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf)
{
	int rc;

	clear_error();
	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = identify_locked(ctrlr, cns, nsid, buf);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}

int nvmeof_ctrlr_get_log_page(struct nvmeof_ctrlr *ctrlr, uint8_t lid, uint32_t nsid,
			      uint64_t offset, void *buf, size_t len)
{
	int rc;

	clear_error();
	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = get_log_page_locked(ctrlr, lid, nsid, offset, buf, len);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}

static int admin_check(const struct nvmeof_cmd *cmd, size_t len)
{
	enum nvme_data_xfer xfer = nvme_opc_xfer(cmd->opc);

	if (cmd->opc == NVME_ADMIN_FABRICS || xfer == NVME_XFER_BIDIRECTIONAL ||
	    len > UINT32_MAX || (xfer == NVME_XFER_NONE && len))
		return -EINVAL;
	return 0;
}

int nvmeof_admin_cmd_sync(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_cmd *cmd, void *buf,
			  size_t len, struct nvmeof_cpl *cpl)
{
	struct nvme_cmd sqe;
	int rc = admin_check(cmd, len);

	if (rc)
		return rc;
	cmd_to_sqe(cmd, cmd->nsid, &sqe);
	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = qpair_exec(ctrlr->admin, &sqe, buf, (uint32_t)len, nvme_opc_xfer(cmd->opc), cpl);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}

int nvmeof_admin_cmd(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_cmd *cmd, void *buf,
		     size_t len, nvmeof_cb cb, void *arg)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct nvme_cmd sqe;
	int rc = admin_check(cmd, len);

	if (rc)
		return rc;
	cmd_to_sqe(cmd, cmd->nsid, &sqe);
	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = qpair_submit_cmd(ctrlr->admin, &sqe, &iov, len ? 1 : 0, (uint32_t)len,
			      nvme_opc_xfer(cmd->opc), cb, arg);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}

/* ---- Information ------------------------------------------------------------------------- */
int nvmeof_ctrlr_get_info(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ctrlr_info *info)
{
	const struct nvme_id_ctrl *id = ctrlr->id;

	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&ctrlr->admin_lock);
	snprintf(info->uri, sizeof(info->uri), "%s", ctrlr->uri_str);
	snprintf(info->subnqn, sizeof(info->subnqn), "%s", ctrlr->uri.name);
	snprintf(info->hostnqn, sizeof(info->hostnqn), "%s", ctrlr->hostnqn);
	uuid_format(ctrlr->hostid, info->hostid);
	if (ctrlr->admin)
		ctrlr->ops->get_info(ctrlr->admin, info);
	info->cntlid = ctrlr->cntlid;
	info->ver = ctrlr->vs;
	info->discovery = ctrlr->uri.discovery;
	info->mdts_bytes = ctrlr->max_xfer;
	info->kato_ms = ctrlr->kato_ms;
	info->mqes = ctrlr->io_entries_max;
	info->io_queues = ctrlr->nr_io_qpairs;
	info->queue_depth = ctrlr->opts.queue_depth;
	if (ctrlr->auth_info.authenticated) {
		snprintf(info->dhchap_hash, sizeof(info->dhchap_hash), "%s",
			 nvme_auth_hash_name(ctrlr->auth_info.hash));
		snprintf(info->dhchap_dhgroup, sizeof(info->dhchap_dhgroup), "%s",
			 nvme_auth_dhgroup_name(ctrlr->auth_info.dhgroup));
		info->dhchap_bidirectional = ctrlr->auth_info.bidirectional;
	}
	if (id) {
		trim_copy(info->sn, id->sn, sizeof(id->sn));
		trim_copy(info->mn, id->mn, sizeof(id->mn));
		trim_copy(info->fr, id->fr, sizeof(id->fr));
		if (id->subnqn[0])
			trim_copy(info->subnqn, id->subnqn, sizeof(id->subnqn));
		info->vid = get_le16(&id->vid);
		info->ssvid = get_le16(&id->ssvid);
		info->cntrltype = id->cntrltype;
		info->nn = get_le32(&id->nn);
		info->oncs = get_le16(&id->oncs);
		info->vwc = id->vwc & NVME_CTRL_VWC_PRESENT;
		info->sgls = get_le32(&id->sgls);
		info->ioccsz_bytes = get_le32(&id->ioccsz) * 16;
		info->iorcsz_bytes = get_le32(&id->iorcsz) * 16;
		info->kas_ms = (uint16_t)(get_le16(&id->kas) * 100);
		info->maxcmd = get_le16(&id->maxcmd);
	}
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return 0;
}

/* ---- Namespaces --------------------------------------------------------------------------- */
struct nvmeof_ns *nvmeof_ctrlr_get_ns(struct nvmeof_ctrlr *ctrlr, uint32_t nsid)
{
	if (nsid == 0)
		nsid = ctrlr->uri.nsid;
	if (nsid == 0) {
		if (ctrlr->nr_ns)
			return &ctrlr->ns[0];
		set_error(-ENODEV, "%s has no active namespace", ctrlr->uri.name);
		return NULL;
	}
	for (unsigned int i = 0; i < ctrlr->nr_ns; i++)
		if (ctrlr->ns[i].info.nsid == nsid)
			return &ctrlr->ns[i];
	set_error(-ENODEV, "namespace %u is not active on %s", nsid, ctrlr->uri.name);
	return NULL;
}

struct nvmeof_ns *nvmeof_ctrlr_next_ns(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ns *prev)
{
	size_t i = prev ? (size_t)(prev - ctrlr->ns) + 1 : 0;

	return i < ctrlr->nr_ns ? &ctrlr->ns[i] : NULL;
}

uint32_t nvmeof_ns_get_id(const struct nvmeof_ns *ns)
{
	return ns->info.nsid;
}

uint64_t nvmeof_ns_get_num_blocks(const struct nvmeof_ns *ns)
{
	return ns->info.nsze;
}

uint32_t nvmeof_ns_get_block_size(const struct nvmeof_ns *ns)
{
	return ns->info.block_size;
}

int nvmeof_ns_get_info(const struct nvmeof_ns *ns, struct nvmeof_ns_info *info)
{
	*info = ns->info;
	return 0;
}
