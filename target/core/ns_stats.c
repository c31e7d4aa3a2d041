/* SPDX-License-Identifier: MIT */
/*
 * Per-namespace I/O metrics: commands, bytes, error statuses and a latency histogram for
 * each (namespace, reactor, path). Counted at completion on the queue's reactor with
 * plain loads and relaxed stores (one writer per slot); the metrics endpoint sums the
 * slots off the reactors. Nothing here takes a lock or allocates on the I/O path.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "reactor/reactor.h"

const char *nvmf_path_name(enum nvmf_path p)
{
	switch (p) {
	case NVMF_PATH_TCP:
		return "nvme_tcp";
	case NVMF_PATH_RDMA:
		return "nvme_rdma";
	case NVMF_PATH_ISCSI:
		return "iscsi";
	default:
		return "unknown";
	}
}

int nvmf_ns_iostat_init(struct nvmf_ns *ns)
{
	unsigned int n = reactor_count();
	size_t sz;

	if (n == 0)
		n = 1;
	sz = (size_t)n * NVMF_NPATHS * sizeof(struct nvmf_ns_iostat);
	if (posix_memalign((void **)&ns->iostat, 64, sz))
		return -ENOMEM;
	memset(ns->iostat, 0, sz);
	ns->iostat_slots = n;
	return 0;
}

void nvmf_ns_iostat_free(struct nvmf_ns *ns)
{
	free(ns->iostat);
	ns->iostat = NULL;
	ns->iostat_slots = 0;
}

static enum nvmf_path req_path(const struct nvmf_req *req)
{
	const struct nvmf_qpair *qp = req->qpair;

	if (qp->ctrlr && qp->ctrlr->local)
		return NVMF_PATH_ISCSI;
	if (qp->ops && qp->ops->trtype == NVMF_TRTYPE_RDMA)
		return NVMF_PATH_RDMA;
	return NVMF_PATH_TCP;
}

#define ADD(f, v) __atomic_store_n(&(f), (f) + (v), __ATOMIC_RELAXED)

static void count_error(struct nvmf_ns_iostat *st, uint16_t status)
{
	uint16_t key = (uint16_t)(NVME_STATUS_SCT(status) << 8 | NVME_STATUS_SC(status));

	for (unsigned int i = 0; i < NVMF_IOSTAT_STATUS_SLOTS; i++) {
		if (st->err_status[i] == key) {
			ADD(st->err_n[i], 1);
			return;
		}
		if (st->err_status[i] == 0) {
			/* count first, then publish the key: a reader never sees a key whose
			 * count is not there yet */
			ADD(st->err_n[i], 1);
			__atomic_store_n(&st->err_status[i], key, __ATOMIC_RELEASE);
			return;
		}
	}
	ADD(st->err_other, 1);
}

void nvmf_ns_iostat_record(struct nvmf_req *req, uint16_t status)
{
	struct nvmf_ns *ns = req->ns;
	const struct reactor *r = req->qpair->reactor;
	struct nvmf_ns_iostat *st;
	enum nvmf_io_class cls;
	unsigned int slot;

	if (!ns->iostat)
		return;
	slot = r ? r->id % ns->iostat_slots : 0;
	st = &ns->iostat[slot * NVMF_NPATHS + req_path(req)];
	switch (req->cmd.opc) {
	case NVME_OPC_READ:
		cls = NVMF_IO_READ;
		break;
	case NVME_OPC_WRITE:
		cls = NVMF_IO_WRITE;
		break;
	default:
		cls = NVMF_IO_OTHER;
		break;
	}
	ADD(st->cmds[cls], 1);
	if (status == 0 && cls != NVMF_IO_OTHER)
		ADD(st->bytes[cls], (uint64_t)((get_le32(&req->cmd.cdw12) & NVME_RW_NLB_MASK) + 1)
					    << ns->block_shift);
	if (status)
		count_error(st, status);
	if (req->start_ns) {
		uint64_t now = nvmf_now_ns();

		hist_record(&st->lat, now > req->start_ns ? now - req->start_ns : 0);
	}
}

static void sum_error(struct nvmf_ns_iostat_sum *o, uint16_t key, uint64_t n)
{
	for (unsigned int i = 0; i < o->nerr; i++) {
		if (o->err_status[i] == key) {
			o->err_n[i] += n;
			return;
		}
	}
	if (o->nerr < NVMF_IOSTAT_STATUS_SLOTS * 4) {
		o->err_status[o->nerr] = key;
		o->err_n[o->nerr++] = n;
	} else {
		o->err_other += n;
	}
}

void nvmf_ns_iostat_sum(const struct nvmf_ns *ns, struct nvmf_ns_iostat_sum *out)
{
	memset(out, 0, sizeof(*out) * NVMF_NPATHS);
	for (unsigned int s = 0; s < ns->iostat_slots; s++) {
		for (unsigned int p = 0; p < NVMF_NPATHS; p++) {
			const struct nvmf_ns_iostat *st = &ns->iostat[s * NVMF_NPATHS + p];
			struct nvmf_ns_iostat_sum *o = &out[p];
			struct hist h;

			for (unsigned int c = 0; c < NVMF_NIO_CLASSES; c++) {
				o->cmds[c] += __atomic_load_n(&st->cmds[c], __ATOMIC_RELAXED);
				o->bytes[c] += __atomic_load_n(&st->bytes[c], __ATOMIC_RELAXED);
			}
			for (unsigned int i = 0; i < NVMF_IOSTAT_STATUS_SLOTS; i++) {
				uint16_t key =
					__atomic_load_n(&st->err_status[i], __ATOMIC_ACQUIRE);

				if (!key)
					break;
				sum_error(o, key, __atomic_load_n(&st->err_n[i], __ATOMIC_RELAXED));
			}
			o->err_other += __atomic_load_n(&st->err_other, __ATOMIC_RELAXED);
			hist_read(&st->lat, &h);
			hist_add(&o->lat, &h);
		}
	}
}

uint64_t nvmf_ns_outstanding(const struct nvmf_ns *ns)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < NVMF_NS_REF_SLOTS; i++)
		n += __atomic_load_n(&ns->inflight[i].n, __ATOMIC_RELAXED);
	return n;
}
