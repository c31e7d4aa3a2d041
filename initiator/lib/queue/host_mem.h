/* SPDX-License-Identifier: MIT */
/*
 * Registered memory of a controller (nvmeof_mem_register, nvmeof_buf_alloc): a fixed
 * table of regions the caller's I/O may name directly. The transport keeps its own handle
 * per region (NVMe/RDMA: one memory region in the protection domain every queue pair of
 * the controller shares); transports without one keep only the table.
 *
 * Regions are added and removed under the table's lock; the I/O path looks them up
 * without it (a region is published with release order once complete, and the caller
 * unregisters only memory no outstanding command uses).
 */
#ifndef NVMEOF_INITIATOR_HOST_MEM_H
#define NVMEOF_INITIATOR_HOST_MEM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/nvmeof.h"

struct host_mem_region {
	uintptr_t base;
	size_t len;
	void *handle; /* the transport's registration (RDMA: struct ibv_mr *) */
	uint32_t key; /* remote key the controller uses for this region */
	bool owned;   /* nvmeof_buf_alloc() memory: freed with the region */
	bool valid;   /* published (atomic) */
};

struct host_mem {
	pthread_mutex_t lock;
	struct host_mem_region r[NVMEOF_MEM_REGIONS];
	unsigned int count; /* regions valid, read without the lock as a hint */
	void *dev;          /* RDMA: the device context the shared PD belongs to */
	void *pd;           /* RDMA: protection domain of every queue pair */
};

void host_mem_init(struct host_mem *m);
void host_mem_fini(struct host_mem *m);
/* Unregister every region of @ctrlr and drop the transport's controller-wide state
 * (ops->ctrlr_fini); at controller teardown, after the last queue pair is freed. */
struct nvmeof_ctrlr;
void host_mem_release_all(struct nvmeof_ctrlr *ctrlr);

/* The region holding all of [@p, @p + @len), or NULL. */
const struct host_mem_region *host_mem_find(const struct host_mem *m, uintptr_t p, size_t len);

#endif
