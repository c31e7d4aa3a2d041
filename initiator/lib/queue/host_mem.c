/* SPDX-License-Identifier: MIT */
/*
 * Registered memory (see host_mem.h and nvmeof.h): the region table of a controller and
 * the nvmeof_mem_* / nvmeof_buf_* calls, with the transport's registration behind
 * ops->mem_register.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host_transport.h"

void host_mem_init(struct host_mem *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
}

void host_mem_fini(struct host_mem *m)
{
	pthread_mutex_destroy(&m->lock);
}

const struct host_mem_region *host_mem_find(const struct host_mem *m, uintptr_t p, size_t len)
{
	if (__atomic_load_n(&m->count, __ATOMIC_ACQUIRE) == 0)
		return NULL;
	for (unsigned int i = 0; i < NVMEOF_MEM_REGIONS; i++) {
		const struct host_mem_region *r = &m->r[i];

		if (!__atomic_load_n(&r->valid, __ATOMIC_ACQUIRE))
			continue;
		if (p >= r->base && len <= r->len && p - r->base <= r->len - len)
			return r;
	}
	return NULL;
}

static void region_drop(struct nvmeof_ctrlr *ctrlr, struct host_mem_region *r)
{
	__atomic_store_n(&r->valid, false, __ATOMIC_RELEASE);
	ctrlr->mem.count--;
	if (r->handle && ctrlr->ops && ctrlr->ops->mem_unregister)
		ctrlr->ops->mem_unregister(ctrlr, r);
	if (r->owned)
		free((void *)r->base);
	memset(r, 0, sizeof(*r));
}

static int region_add(struct nvmeof_ctrlr *ctrlr, void *buf, size_t len, bool owned)
{
	struct host_mem *m = &ctrlr->mem;
	struct host_mem_region *slot = NULL;
	uintptr_t p = (uintptr_t)buf;
	int rc = 0;

	if (!buf || len == 0 || p + len < p)
		return set_error(-EINVAL, "no memory to register");
	pthread_mutex_lock(&m->lock);
	for (unsigned int i = 0; i < NVMEOF_MEM_REGIONS; i++) {
		struct host_mem_region *r = &m->r[i];

		if (!r->valid) {
			if (!slot)
				slot = r;
			continue;
		}
		if (p < r->base + r->len && r->base < p + len) {
			rc = set_error(-EEXIST, "memory overlaps a registered region");
			goto out;
		}
	}
	if (!slot) {
		rc = set_error(-ENOSPC, "more than %u registered regions", NVMEOF_MEM_REGIONS);
		goto out;
	}
	slot->base = p;
	slot->len = len;
	slot->owned = owned;
	if (ctrlr->ops && ctrlr->ops->mem_register) {
		rc = ctrlr->ops->mem_register(ctrlr, slot);
		if (rc) {
			memset(slot, 0, sizeof(*slot));
			goto out;
		}
	}
	m->count++;
	__atomic_store_n(&slot->valid, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int region_del(struct nvmeof_ctrlr *ctrlr, void *buf, bool owned)
{
	struct host_mem *m = &ctrlr->mem;
	int rc = -ENOENT;

	pthread_mutex_lock(&m->lock);
	for (unsigned int i = 0; i < NVMEOF_MEM_REGIONS; i++) {
		struct host_mem_region *r = &m->r[i];

		if (r->valid && r->base == (uintptr_t)buf && r->owned == owned) {
			region_drop(ctrlr, r);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int nvmeof_mem_register(struct nvmeof_ctrlr *ctrlr, void *buf, size_t len)
{
	if (!ctrlr)
		return set_error(-EINVAL, "no controller");
	return region_add(ctrlr, buf, len, false);
}

int nvmeof_mem_unregister(struct nvmeof_ctrlr *ctrlr, void *buf)
{
	if (!ctrlr || !buf)
		return -EINVAL;
	return region_del(ctrlr, buf, false);
}

void *nvmeof_buf_alloc(struct nvmeof_ctrlr *ctrlr, size_t len)
{
	size_t sz = (len + 4095) & ~(size_t)4095;
	void *buf;

	if (!ctrlr || len == 0 || sz < len) {
		set_error(-EINVAL, "bad buffer size %zu", len);
		return NULL;
	}
	if (posix_memalign(&buf, 4096, sz) != 0) {
		set_error(-ENOMEM, "out of memory for a %zu-byte buffer", sz);
		return NULL;
	}
	memset(buf, 0, sz);
	if (region_add(ctrlr, buf, sz, true) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void nvmeof_buf_free(struct nvmeof_ctrlr *ctrlr, void *buf)
{
	if (ctrlr && buf)
		(void)region_del(ctrlr, buf, true);
}

void host_mem_release_all(struct nvmeof_ctrlr *ctrlr)
{
	struct host_mem *m = &ctrlr->mem;

	pthread_mutex_lock(&m->lock);
	for (unsigned int i = 0; i < NVMEOF_MEM_REGIONS; i++)
		if (m->r[i].valid)
			region_drop(ctrlr, &m->r[i]);
	pthread_mutex_unlock(&m->lock);
	if (ctrlr->ops && ctrlr->ops->ctrlr_fini)
		ctrlr->ops->ctrlr_fini(ctrlr);
	host_mem_fini(m);
}
