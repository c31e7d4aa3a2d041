/* SPDX-License-Identifier: MIT */
/*
 * Registered data buffers for NVMe/RDMA: one pool per reactor and device (protection
 * domain). Chunks are the target's largest transfer; the pool grows by registering a slab
 * of chunks at once (ibv_reg_mr is expensive, so never per I/O), up to a byte limit, and
 * gives nothing back until the reactor stops. Only the owning reactor touches a pool.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "rdma_internal.h"

static int pool_grow(struct rdma_pool *pool)
{
	unsigned int n = (unsigned int)(RDMA_POOL_SLAB_BYTES / pool->chunk_size);
	struct rdma_slab *slab;
	size_t bytes;

	if (n == 0)
		n = 1;
	if (pool->allocated + n > pool->limit)
		n = pool->limit - pool->allocated;
	if (n == 0)
		return -ENOSPC;
	bytes = (size_t)n * pool->chunk_size;
	slab = calloc(1, sizeof(*slab));
	if (!slab)
		return -ENOMEM;
	slab->chunks = calloc(n, sizeof(*slab->chunks));
	if (!slab->chunks || posix_memalign(&slab->mem, 4096, bytes) != 0) {
		free(slab->chunks);
		free(slab);
		return -ENOMEM;
	}
	slab->mr = ibv_reg_mr(pool->dev->pd, slab->mem, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!slab->mr) {
		int rc = -errno;

		log_err("rdma: cannot register %zu bytes of data buffers: %s", bytes,
			strerror(errno));
		free(slab->mem);
		free(slab->chunks);
		free(slab);
		return rc ? rc : -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct rdma_chunk *c = &slab->chunks[i];

		c->addr = (uint8_t *)slab->mem + (size_t)i * pool->chunk_size;
		c->lkey = slab->mr->lkey;
		SLIST_INSERT_HEAD(&pool->free, c, link);
	}
	SLIST_INSERT_HEAD(&pool->slabs, slab, link);
	pool->allocated += n;
	pool->nfree += n;
	log_debug("rdma: reactor %u: data pool on %s grew to %u x %zu bytes", pool->r->id,
		  ibv_get_device_name(pool->dev->ctx->device), pool->allocated, pool->chunk_size);
	return 0;
}

/* Serve waiting requests in arrival order once chunks are back. */
static void pool_wake(void *arg)
{
	struct rdma_pool *pool = arg;
	struct rdma_req *rr;

	while ((rr = TAILQ_FIRST(&pool->waiters)) != NULL) {
		struct rdma_chunk *c = rdma_pool_take(pool);

		if (!c)
			return;
		TAILQ_REMOVE(&pool->waiters, rr, link);
		rr->chunk = c;
		rdma_req_buffer_ready(rr);
	}
}

struct rdma_pool *rdma_pool_get(struct rdma_reactor *rr, struct rdma_device *dev,
				size_t chunk_size)
{
	struct rdma_pool *pool;

	TAILQ_FOREACH (pool, &rr->pools, link)
		if (pool->dev == dev)
			return pool;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->dev = rdma_device_get(dev->ctx); /* the pool holds the device */
	pool->r = rr->r;
	pool->chunk_size = (chunk_size + 4095) & ~(size_t)4095;
	pool->limit = (unsigned int)(RDMA_POOL_MAX_BYTES / pool->chunk_size);
	if (pool->limit < 32)
		pool->limit = 32;
	SLIST_INIT(&pool->free);
	SLIST_INIT(&pool->slabs);
	TAILQ_INIT(&pool->waiters);
	pool->wake.fn = pool_wake;
	pool->wake.arg = pool;
	TAILQ_INSERT_TAIL(&rr->pools, pool, link);
	return pool;
}

struct rdma_chunk *rdma_pool_take(struct rdma_pool *pool)
{
	struct rdma_chunk *c = SLIST_FIRST(&pool->free);

	if (!c) {
		if (pool_grow(pool) != 0) {
			pool->exhausted++;
			return NULL;
		}
		c = SLIST_FIRST(&pool->free);
	}
	SLIST_REMOVE_HEAD(&pool->free, link);
	pool->nfree--;
	return c;
}

void rdma_pool_give(struct rdma_pool *pool, struct rdma_chunk *c)
{
	SLIST_INSERT_HEAD(&pool->free, c, link);
	pool->nfree++;
	if (!TAILQ_EMPTY(&pool->waiters))
		reactor_defer(pool->r, &pool->wake);
}

void rdma_pool_wait(struct rdma_pool *pool, struct rdma_req *rr)
{
	TAILQ_INSERT_TAIL(&pool->waiters, rr, link);
}

void rdma_pool_wait_cancel(struct rdma_pool *pool, struct rdma_req *rr)
{
	TAILQ_REMOVE(&pool->waiters, rr, link);
}

/* Reactor exit: every connection is gone, so every chunk is home. */
void rdma_pools_free(struct rdma_reactor *rr)
{
	struct rdma_pool *pool;

	while ((pool = TAILQ_FIRST(&rr->pools)) != NULL) {
		struct rdma_slab *slab;

		TAILQ_REMOVE(&rr->pools, pool, link);
		reactor_defer_cancel(pool->r, &pool->wake);
		if (pool->nfree != pool->allocated)
			log_warn("rdma: reactor %u: %u data buffer(s) still in use at exit",
				 pool->r->id, pool->allocated - pool->nfree);
		while ((slab = SLIST_FIRST(&pool->slabs)) != NULL) {
			SLIST_REMOVE_HEAD(&pool->slabs, link);
			ibv_dereg_mr(slab->mr);
			free(slab->mem);
			free(slab->chunks);
			free(slab);
		}
		rdma_device_put(pool->dev);
		free(pool);
	}
}
