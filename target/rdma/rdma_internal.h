/* SPDX-License-Identifier: MIT */
/*
 * NVMe/RDMA target transport internals, shared by rdma_transport.c (listeners, RDMA CM
 * events, devices, per-reactor state, ops table), rdma_qpair.c (connection set-up and
 * teardown on its reactor, completion queue processing, request state machine) and
 * rdma_pool.c (registered data buffers).
 *
 * Threads: the listeners' RDMA CM event channel is watched by the main thread's default
 * loop. A connection request is handed to a reactor, which migrates the new cm_id to its
 * own event channel, so every later CM event, verbs call and completion of the connection
 * runs on that reactor. Each connection has its own CQ and completion channel, whose file
 * descriptor is an ev_io on the reactor's loop: no busy polling.
 */
#ifndef NVMEOF_TARGET_RDMA_INTERNAL_H
#define NVMEOF_TARGET_RDMA_INTERNAL_H

#include <ev.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "common/nvme_rdma_spec.h"
#include "core/nvmf.h"
#include "rdma_proto.h"
#include "rdma_transport.h"
#include "reactor/reactor.h"

#define RDMA_CQ_BATCH 32	   /* work completions per ibv_poll_cq() */
#define RDMA_CQ_BUDGET 512	   /* work completions per callback before yielding */
#define RDMA_MAX_REACTORS 1024
#define RDMA_POOL_SLAB_BYTES (2u << 20) /* registered at once when the pool grows */
#define RDMA_POOL_MAX_BYTES (64u << 20) /* per reactor and device */
#define RDMA_LISTEN_BACKLOG 128
#define RDMA_RSP_INLINE 16	   /* a response fits a send's inline data */

/* What an rdma_cm_id's context points to: the first member of both structs. */
enum rdma_obj_kind {
	RDMA_OBJ_LISTENER = 0x4c495354,
	RDMA_OBJ_QPAIR = 0x51504149,
};

/* Work request IDs: receive buffer or request slot << 2 | kind. */
enum rdma_wr_kind {
	RDMA_WR_RECV = 0,
	RDMA_WR_READ = 1,   /* RDMA READ of write data (signaled) */
	RDMA_WR_SEND = 2,   /* response capsule (signaled) */
	RDMA_WR_WRITE = 3,  /* RDMA WRITE of read data (unsignaled, reported only on error) */
};
#define RDMA_WR_ID(idx, kind) ((uint64_t)(idx) << 2 | (kind))
#define RDMA_WR_IDX(id) ((uint32_t)((id) >> 2))
#define RDMA_WR_KIND(id) ((enum rdma_wr_kind)((id) & 3))

/* An RDMA device in use, with the protection domain everything on it is registered in. */
struct rdma_device {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	unsigned int refs;	   /* under the device list lock */
	TAILQ_ENTRY(rdma_device) link;
};

/* One registered data buffer of a pool. */
struct rdma_chunk {
	void *addr;
	uint32_t lkey;
	SLIST_ENTRY(rdma_chunk) link;
};

struct rdma_slab {
	void *mem;
	struct ibv_mr *mr;
	struct rdma_chunk *chunks;
	SLIST_ENTRY(rdma_slab) link;
};

struct rdma_req;

/*
 * Registered data buffers of one reactor on one device: fixed-size chunks (the target's
 * largest transfer), registered in slabs as the pool grows, never on the I/O path once
 * warm. A request that finds it empty waits on @waiters until a chunk comes back.
 */
struct rdma_pool {
	struct rdma_device *dev;
	struct reactor *r;
	size_t chunk_size;
	unsigned int allocated, nfree, limit;
	uint64_t exhausted;
	SLIST_HEAD(, rdma_chunk) free;
	SLIST_HEAD(, rdma_slab) slabs;
	TAILQ_HEAD(, rdma_req) waiters;
	struct reactor_work wake;
	TAILQ_ENTRY(rdma_pool) link;
};

/* Request state machine (one per request slot). */
enum rdma_req_state {
	RDMA_REQ_FREE,		   /* on the free list */
	RDMA_REQ_NEED_BUFFER,	   /* waiting for a registered data buffer */
	RDMA_REQ_TRANSFERRING_H2C, /* RDMA READ of the write data in flight */
	RDMA_REQ_EXECUTING,	   /* owned by the core/backend until req_complete */
	RDMA_REQ_TRANSFERRING_C2H, /* RDMA WRITE of read data and the response SEND posted */
	RDMA_REQ_NSTATES
};

struct rdma_qpair;

/* A receive buffer for one command capsule (SQE + in-capsule data). */
struct rdma_recv {
	uint8_t *capsule;	   /* registered, 64 + in-capsule bytes */
	struct ibv_recv_wr wr;
	struct ibv_sge sge;
};

struct rdma_req {
	struct nvmf_req req;	   /* embedded: the core sees only this */
	struct rdma_qpair *rq;
	enum rdma_req_state state;
	uint32_t idx;
	uint16_t cid;		   /* host byte order, for logs */
	uint16_t err_status;	   /* NVMe status found by the transport (0 = none) */
	struct rdma_sgl sgl;
	struct rdma_chunk *chunk;  /* data buffer (keyed transfers) */
	struct rdma_recv *recv;	   /* the capsule's receive buffer, until posted again */
	struct nvme_cpl *rsp;	   /* registered response buffer */
	struct ibv_send_wr data_wr[RDMA_SGL_DESC_MAX], rsp_wr; /* one RDMA op per descriptor */
	struct ibv_sge data_sge[RDMA_SGL_DESC_MAX], rsp_sge;
	TAILQ_ENTRY(rdma_req) link; /* free list or pool wait list */
};

/* Per-reactor transport state. */
struct rdma_reactor {
	struct reactor *r;
	struct rdma_event_channel *ch; /* CM events of this reactor's connections */
	ev_io cm_io;
	TAILQ_HEAD(, rdma_qpair) conns;
	TAILQ_HEAD(, rdma_pool) pools;
	unsigned int nconns;
};

struct rdma_listener {
	enum rdma_obj_kind kind;   /* RDMA_OBJ_LISTENER */
	struct nvmf_tgt *tgt;
	struct nvmf_port *port;
	struct rdma_cm_id *id;
	char name[300];
	TAILQ_ENTRY(rdma_listener) link;
};

/* Per-connection counters, added to the transport totals when it goes. */
struct rdma_conn_stats {
	uint64_t recv_capsules, inline_writes, rdma_reads, rdma_writes, sends, send_inv;
	uint64_t post_send_calls, post_recv_calls, cq_polls, cq_events;
};

struct rdma_qpair {
	enum rdma_obj_kind kind;   /* RDMA_OBJ_QPAIR */
	struct nvmf_qpair qp;	   /* embedded: the core sees only this */
	struct rdma_cm_id *cm_id;
	struct rdma_device *dev;
	struct rdma_pool *pool;
	struct rdma_reactor *rr;
	struct reactor *r;
	struct ev_loop *loop;

	/* from the connection request */
	struct nvme_rdma_cm_params cm;
	uint8_t initiator_depth, responder_resources;

	/* verbs objects */
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr; /* capsules and responses of the first nrecvs_pre buffers */
	uint8_t *bufs;
	struct ibv_mr *mr_rest; /* the rest, registered once Connect is through */
	uint8_t *bufs_rest;
	size_t registered; /* bytes of mr + mr_rest */
	unsigned int cq_unacked;
	bool send_inline;	   /* responses go as inline data */
	ev_io cq_io;
	ev_idle cq_more;	   /* budget used up: poll again soon */
	bool cq_io_on, cq_more_on;

	/*
	 * Receive buffers (HSQSIZE + 1, what CRQSIZE announces) are posted again as soon as
	 * a command completes, before its response is sent, so the host never finds none
	 * (RNR). Requests outlive their capsule until the response SEND completes: there are
	 * twice as many, and a capsule that finds none free waits in @pending.
	 *
	 * Until Connect is through only the first nrecvs_pre buffers (and twice as many
	 * request slots) are registered, posted and set up: the CM request's HSQSIZE is the
	 * peer's word, Connect is the first thing it must send, and one that never sends it
	 * must not pin a deep queue's buffers (rdma_proto.h, RDMA_PRECONNECT_RECVS).
	 */
	uint32_t nrecvs;
	uint32_t nrecvs_pre;       /* registered before Connect */
	uint32_t nrecvs_ready;     /* set up and posted: nrecvs_pre, then nrecvs */
	uint32_t icsz;		   /* in-capsule data bytes per capsule */
	uint32_t capsule_size;	   /* 64 + icsz */
	uint32_t stride;           /* bytes between capsule buffers */
	struct rdma_recv *recvs;
	uint32_t nreqs;		   /* 2 x nrecvs */
	uint32_t nreqs_ready;      /* slots set up: 2 x nrecvs_ready */
	size_t reqs_len;           /* @reqs is an anonymous mapping: untouched slots cost nothing */
	uint32_t desc_max;         /* keyed descriptors per command (send queue room) */
	struct rdma_req *reqs;
	TAILQ_HEAD(, rdma_req) free_reqs;
	uint32_t outstanding;	   /* requests not FREE */
	uint32_t executing;	   /* requests the core owns */
	uint32_t *pending;	   /* ring of received capsules waiting for a request */
	uint32_t *pending_len;
	uint32_t pending_head, pending_count;
	struct reactor_work rx_work;

	/* work requests gathered during one loop iteration, posted together */
	struct ibv_send_wr *send_head, *send_tail;
	struct ibv_recv_wr *recv_head, *recv_tail;
	struct reactor_work flush_work;

	/* lifetime */
	ev_timer connect_timer;    /* CM request to Connect deadline (opts.connect_timeout_ms) */
	bool connect_seen;         /* Connect through: counted established, all buffers up */
	bool started;		   /* nvmf_qpair_init() done */
	bool established;
	bool closing;
	bool freed;
	struct reactor_work fini_work;

	struct rdma_conn_stats stats;
	TAILQ_ENTRY(rdma_qpair) link; /* rdma_reactor.conns */
};

static inline struct rdma_qpair *rdma_qpair_of(struct nvmf_qpair *qp)
{
	return container_of(qp, struct rdma_qpair, qp);
}

static inline struct rdma_req *rdma_req_of(struct nvmf_req *req)
{
	return container_of(req, struct rdma_req, req);
}

/* rdma_transport.c */
struct rdma_reactor *rdma_reactor_get(struct reactor *r);
struct rdma_device *rdma_device_get(struct ibv_context *ctx);
void rdma_device_put(struct rdma_device *dev);
uint32_t rdma_port_icsz(const struct nvmf_tgt *tgt, const struct nvmf_port *port);
void rdma_conn_gone(const struct rdma_qpair *rq);
void rdma_conn_refused(void); /* a handed-off request that was then rejected */
bool rdma_conn_established(const struct nvmf_tgt *tgt); /* false: past max_connections */
void rdma_conn_timed_out(void);
void rdma_registered_add(ssize_t bytes);
void rdma_count_accepted(void);
void rdma_cm_reject_sts(struct rdma_cm_id *id, uint16_t sts);

/* rdma_qpair.c */
void rdma_qpair_setup(void *arg); /* reactor message: a connection request to serve */
void rdma_qpair_cm_event(struct rdma_qpair *rq, enum rdma_cm_event_type ev, int status);
void rdma_qpair_close(struct rdma_qpair *rq, const char *why);
void rdma_qpair_disconnect(struct nvmf_qpair *qp);
void rdma_req_complete(struct nvmf_req *req);
void rdma_local_traddr(const struct nvmf_qpair *qp, char *buf, size_t len);
const char *rdma_req_state_name(enum rdma_req_state s);

/* rdma_pool.c */
struct rdma_pool *rdma_pool_get(struct rdma_reactor *rr, struct rdma_device *dev,
				size_t chunk_size);
struct rdma_chunk *rdma_pool_take(struct rdma_pool *pool);
void rdma_pool_give(struct rdma_pool *pool, struct rdma_chunk *c);
void rdma_pool_wait(struct rdma_pool *pool, struct rdma_req *rr);
void rdma_pool_wait_cancel(struct rdma_pool *pool, struct rdma_req *rr);
void rdma_pools_free(struct rdma_reactor *rr);
void rdma_req_buffer_ready(struct rdma_req *rr); /* rdma_qpair.c: waiter got its chunk */

#endif
