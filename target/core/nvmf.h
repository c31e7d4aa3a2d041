/* SPDX-License-Identifier: MIT */
/*
 * NVMe over Fabrics target core objects: the target, ports, subsystems, namespaces,
 * controllers, queue pairs and requests, and the entry points transports use.
 *
 * Threading: each queue pair lives on one reactor. Controller-wide state that I/O
 * queues on other reactors may touch (queue table, state) is guarded by ctrlr->lock,
 * taken only on the admin/connect path, never per I/O. Cross-reactor actions (tearing
 * down I/O queues, delivering async events) go through reactor_send_msg().
 */
#ifndef NVMEOF_TARGET_NVMF_H
#define NVMEOF_TARGET_NVMF_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "bdev/bdev.h"
#include "common/hist.h"
#include "common/nvme_spec.h"
#include "range_lock.h"
#include "transport.h"

struct reactor;
struct auth_pool;
struct nvmf_subsys;
struct nvmf_ctrlr;

#define NVMF_MAX_NAMESPACES    1024 /* NN; NSIDs 1..NN */
#define NVMF_MAX_IO_QUEUES     128
#define NVMF_REQ_MAX_IOV       32
#define NVMF_MAX_AER           4 /* AERL + 1 */
#define NVMF_DEFAULT_NQN       "nqn.2026-11.io.nvmeof:default"
#define NVMF_NS_REF_SLOTS      16 /* per-reactor in-flight counters of a namespace */
#define NVMF_MODEL_DEFAULT     "nvmeof"
#define NVMF_ANA_MAX_GRPS      1024 /* ANAGRPMAX = NANAGRPID; group IDs 1..this */
#define NVMF_ANA_GRPID_DEFAULT 1

/* Target-wide tunables (quick flags or config). */
struct nvmf_tgt_opts {
	uint32_t max_queue_depth;       /* entries per I/O queue (MQES + 1), default 128 */
	uint32_t max_admin_depth;       /* admin queue entries, default 32 */
	uint32_t in_capsule_size;       /* I/O queue in-capsule data bytes, default 8192 */
	uint32_t max_io_size;           /* MDTS in bytes (power of 2 >= 4096), default 128 KiB */
	uint32_t tcp_zerocopy_min;      /* NVMe/TCP: send batches of at least this many bytes of
				      * read data with MSG_ZEROCOPY (plain ports); 0: off, the
				      * default (see nvmeof-target(8) for when it pays) */
	uint32_t max_io_queues;         /* per controller, default 64 */
	uint32_t max_connections;       /* established (Connect done), whole target, default 4096 */
	uint32_t max_connecting;        /* accepted but not yet through Connect, counted apart
				      * from max_connections so silent sockets cannot take a
				      * real host's slot; default 1024 */
	uint32_t connect_timeout_ms;    /* ICReq and Connect must be done within this (default
				      * 5000; 0: no deadline) */
	uint32_t login_timeout_ms;      /* iSCSI: accept to full feature phase, the CHAP exchange
				      * included, within this (default 5000; 0: none); such
				      * logins count as connecting (max_connecting) */
	uint32_t kato_default_ms;       /* when a host asks for KATO 0 on an I/O ctrlr: none */
	uint32_t auth_timeout_ms;       /* a DH-HMAC-CHAP exchange (from Connect, or from a
				      * re-authenticating Negotiate) must be done within this,
				      * or the queue is closed (default 5000; 0: no deadline) */
	uint32_t auth_threads;          /* threads doing DH-HMAC-CHAP's Diffie-Hellman work
				      * (default 3: two for queues not yet authenticated,
				      * one kept for re-authentications; taken when the
				      * first such job comes) */
	uint32_t auth_max_pending;      /* DH jobs of queues not yet authenticated, queued or
				      * running, in all (default 128); more are refused */
	uint32_t auth_max_pending_host; /* ... of one host NQN (default 16) */
	uint32_t auth_max_pending_addr; /* ... from one peer address (default 16) */
	uint32_t max_host_connections;  /* queues (admin and I/O, all controllers) one host NQN
					* may have connected at once (default 1024) */
	uint32_t r2t_timeout_ms;        /* NVMe/TCP: the H2CData an R2T asked for must be in
				      * within this, or the queue is terminated (default
				      * 10000; 0: no deadline) */
	const char *state_dir;          /* namespace identities kept here (ns_ident.c); NULL:
				      * none kept, identities derived as without a state dir */
};

/* ---- Requests --------------------------------------------------------------------------- */
struct nvmf_req {
	struct nvme_cmd cmd; /* the SQE as received (wire byte order) */
	struct nvme_cpl rsp; /* built by the core; transport only transmits it */
	struct nvmf_qpair *qpair;

	/* Data buffer, prepared by the transport before nvmf_req_exec(). */
	enum nvme_data_xfer xfer;
	uint32_t length; /* bytes the command moves (from the SGL); for data to the
				    * host the core writes exactly this many (zero-filled past
				    * what the command returns) */
	struct iovec iov[NVMF_REQ_MAX_IOV];
	int iovcnt;

	/* Core-private from here on. */
	struct nvmf_ns *ns;
	void (*execute)(struct nvmf_req *req);
	struct bdev_io bio;
	void *scratch;              /* e.g. Compare's read-back buffer (reactor pool) */
	uint32_t step;              /* multi-step commands (Compare, Write Zeroes chunks) */
	TAILQ_ENTRY(nvmf_req) link; /* AER list and similar */
	bool local_admin;           /* submitted with nvmf_local_admin_exec() */
	bool in_submit, again;      /* multi-step commands: iterate instead of recursing */
	struct iovec scratch_iov;
	uint64_t total;                 /* multi-step commands: bytes or items in all */
	struct nvmf_req *fused_peer;    /* the other command of a fused pair (fused.c) */
	struct nvmf_range_lock rl;      /* LBA range lock it holds or waits for (range_lock.c) */
	uint64_t start_ns;              /* CLOCK_MONOTONIC when the core got it (latency metrics) */
	TAILQ_ENTRY(nvmf_req) qos_link; /* waiting for QoS tokens (qos.c) */
	bool qos_queued;                /* on qos_link */
	void *qos_wait;                 /* the QoS bucket it waits in (qos.c) */
	bool data_mapped; /* req->iov describes namespace memory, req->ns still held until
			   * nvmf_req_release_data() */
	bool map_denied;  /* the transport's opt-out for this request (qp->map_read_data) */
};

/* Direction and length a command moves, from its opcode/fctype and SGL. Transports call
 * this right after receiving a capsule to size and fetch the data. */
enum nvme_data_xfer nvmf_req_xfer(const struct nvme_cmd *cmd, bool admin);
uint32_t nvmf_req_sgl_length(const struct nvme_cmd *cmd);

/* Parse and execute @req (on its qpair's reactor). Always ends in nvmf_req_complete(),
 * possibly before returning; Asynchronous Event Requests and the first command of a fused
 * pair stay with the core until an event / the second command (or
 * nvmf_qpair_disconnected()). */
void nvmf_req_exec(struct nvmf_req *req);
/* Fill cid/sqid/sqhd and hand @req to the transport for transmission. */
void nvmf_req_complete(struct nvmf_req *req);
/*
 * Mapped read data (qp->map_read_data): a simple Read from a backend that can lend its
 * memory (ram) completes with req->iov/iovcnt describing the namespace data itself instead
 * of the transport's buffers, and the core keeps what that memory depends on (the
 * namespace reference, which keeps the backend open: removal waits for it) past
 * nvmf_req_complete(). The transport calls nvmf_req_release_data() on every path that
 * releases a request, once it no longer reads req->iov (the data is on the wire or
 * dropped); a no-op for any other request. Until then the bytes are live: a concurrent
 * Write to the same blocks changes them, so a transport that maps must not compute
 * anything over them (a data digest) apart from sending them. Its own buffers are not in
 * req->iov then: it keeps its own list of them to free.
 */
static inline bool nvmf_req_data_mapped(const struct nvmf_req *req)
{
	return req->data_mapped;
}
void nvmf_req_release_data(struct nvmf_req *req);
/* For a transport that reuses @req before the data is sent: the namespace whose memory
 * req->iov describes, its reference now the caller's (nvmf_ns_put() on the qpair's reactor
 * once the data is sent or dropped); @req is left unmapped. NULL when not mapped. */
struct nvmf_ns *nvmf_req_take_data(struct nvmf_req *req);
/* Complete with status (SCT/SC) right away, e.g. for a transport-detected SGL error. */
void nvmf_req_complete_status(struct nvmf_req *req, uint8_t sct, uint8_t sc, bool dnr);
/*
 * A command arrived on admin queue @qp with the CID of an Asynchronous Event Request the
 * core still holds: the host gave that AER up (SPDK's host does when it shuts the
 * controller down) and the CID now names the new command. Takes the AER off the
 * controller (as aborted by request) and returns it, or NULL when no held AER has @cid.
 * The transport frees the returned request without sending a completion, since one with
 * that CID would now answer the new command, and runs the new command normally.
 */
struct nvmf_req *nvmf_qpair_aer_take(struct nvmf_qpair *qp, uint16_t cid);

/* ---- Queue pairs -------------------------------------------------------------------------- */
struct nvmf_qpair_stats {
	uint64_t read_cmds, write_cmds, other_cmds;
	uint64_t read_bytes, write_bytes;
};

struct nvmf_qpair {
	const struct nvmf_transport_ops *ops;
	struct nvmf_tgt *tgt;
	struct nvmf_port *port;
	struct reactor *reactor;
	struct nvmf_ctrlr *ctrlr; /* NULL until a successful Connect */
	uint16_t qid;
	uint16_t sqsize; /* entries, 1's based, from Connect SQSIZE + 1 */
	uint16_t sqhd;
	bool sq_flow_disabled; /* Connect CATTR bit 2 */
	bool connected;
	/* Set by the transport: simple Reads may complete with mapped data (see
	 * nvmf_req_release_data()); it then calls that on every request it releases. */
	bool map_read_data;
	char peer[64]; /* "ADDR:PORT" for logs */
	struct nvmf_qpair_stats stats;
	TAILQ_ENTRY(nvmf_qpair) link;      /* port->qpairs (core) */
	struct nvmf_req *fused_first;      /* FUSE_FIRST command waiting for its second (fused.c) */
	struct nvmf_rl_waiters rl_waiters; /* requests waiting for a range lock (abortable) */
	/* In-band authentication (fabrics_auth.c): while auth_pending, every command but
	 * Authentication Send/Receive fails with Authentication Required. */
	bool auth_pending;
	struct nvmf_qpair_auth *auth; /* the queue's DH-HMAC-CHAP state, NULL: none yet */
	struct nvmf_host_share *host; /* its host's connection count and buffer use (after
				       * Connect; NULL before, and for in-process front ends) */
};

/*
 * What one host NQN holds across all its controllers (host_share.c): the queues it has
 * connected (bounded by opts.max_host_connections) and, per reactor, the data buffers its
 * queues hold there (written by that reactor only; transports bound it to a share of the
 * reactor's pool). Hosts without a name (an empty Host NQN) share one entry.
 */
struct nvmf_host_share_r {
	unsigned int bufs;
} __attribute__((aligned(64)));

struct nvmf_host_share {
	TAILQ_ENTRY(nvmf_host_share) link; /* tgt->host_shares, under tgt->lock */
	unsigned int conns;                /* queues connected, under tgt->lock */
	unsigned int nr;                   /* entries in per_r */
	struct nvmf_host_share_r *per_r;   /* by reactor id */
	char hostnqn[NVME_NQN_FIELD];
};

/* Count one more queue for @hostnqn: 0 (*out set), -EBUSY at max_host_connections (logged,
 * rate-limited, and counted in tgt->host_conn_refused), -ENOMEM. */
int nvmf_host_share_get(struct nvmf_tgt *tgt, const char *hostnqn, const char *peer,
			struct nvmf_host_share **out);
/* The queue is gone: the entry goes with the host's last queue. */
void nvmf_host_share_put(struct nvmf_tgt *tgt, struct nvmf_host_share *h);
/* The buffer count of @h on reactor @rid (NULL when @h is NULL or @rid out of range). */
static inline unsigned int *nvmf_host_share_bufs(struct nvmf_host_share *h, unsigned int rid)
{
	return h && rid < h->nr ? &h->per_r[rid].bufs : NULL;
}

/*
 * Transport calls, all on the queue pair's reactor:
 *
 * nvmf_qpair_init: bind a new connection to the target (before Connect). Counts it in
 * tgt->nconnections (a transport may refuse connections beyond opts.max_connections).
 *
 * nvmf_qpair_disconnected: the connection is gone (peer closed it, transport error, or
 * after ops->qpair_disconnect). The core completes the requests it parks indefinitely
 * (Asynchronous Event Requests) with "Aborted - SQ Deletion" through ops->req_complete,
 * possibly before returning, so that they drain; their completions need not be
 * transmitted. On an admin queue it also tears the controller down (its I/O queues are
 * disconnected). Safe to call more than once.
 *
 * nvmf_qpair_fini: release the queue pair once no request is outstanding (call
 * nvmf_qpair_disconnected first). Detaches it from its controller; when the last queue of
 * a controller goes, the controller is freed.
 */
void nvmf_qpair_init(struct nvmf_qpair *qp, const struct nvmf_transport_ops *ops,
		     struct nvmf_tgt *tgt, struct nvmf_port *port, struct reactor *r);
void nvmf_qpair_disconnected(struct nvmf_qpair *qp);
void nvmf_qpair_fini(struct nvmf_qpair *qp);

/*
 * In-process front ends (iSCSI): create an enabled controller on @subsys for @hostnqn /
 * @hostid (16 bytes, may be NULL) with @qp acting as its I/O queue 1 and no fabric admin
 * queue. @qp must have been set up with nvmf_qpair_init() (its ops->req_complete is the
 * front end's; ops->qpair_disconnect is called when the target tears the controller down).
 * NVM commands on @qp go through nvmf_req_exec() as usual; admin commands (Identify, Get
 * Log Page, Get/Set Features) through nvmf_local_admin_exec(). Writes honour the Volatile
 * Write Cache feature (enabled by default; Flush makes data durable). Release with
 * nvmf_qpair_disconnected() + nvmf_qpair_fini() like any queue pair.
 * Returns 0, -ENOENT (subsystem is the discovery subsystem), -EACCES (host not allowed),
 * -EBUSY (no controller ID left), -EINVAL (@qp already connected) or -ENOMEM.
 */
int nvmf_local_connect(struct nvmf_qpair *qp, struct nvmf_subsys *subsys, const char *hostnqn,
		       const uint8_t hostid[16]);
void nvmf_local_admin_exec(struct nvmf_req *req);

/* ---- Namespace I/O metrics (ns_stats.c) --------------------------------------------------- */
/* The path a command came by, for per-path metrics. */
enum nvmf_path { NVMF_PATH_TCP, NVMF_PATH_RDMA, NVMF_PATH_ISCSI, NVMF_NPATHS };
const char *nvmf_path_name(enum nvmf_path p); /* "nvme_tcp", "nvme_rdma", "iscsi" */

enum nvmf_io_class { NVMF_IO_READ, NVMF_IO_WRITE, NVMF_IO_OTHER, NVMF_NIO_CLASSES };
#define NVMF_IOSTAT_STATUS_SLOTS 8 /* distinct error statuses counted one by one */

/* Counters of one namespace on one reactor for one path: one writer (that reactor),
 * relaxed loads elsewhere; summed on read (nvmf_ns_iostat_sum()). */
struct nvmf_ns_iostat {
	uint64_t cmds[NVMF_NIO_CLASSES];               /* completed, any status */
	uint64_t bytes[NVMF_NIO_CLASSES];              /* of successful reads and writes */
	uint64_t err_n[NVMF_IOSTAT_STATUS_SLOTS];      /* completions with status err_status[i] */
	uint16_t err_status[NVMF_IOSTAT_STATUS_SLOTS]; /* SCT << 8 | SC; 0 = slot unused */
	uint64_t err_other;                            /* errors of statuses beyond the slots */
	struct hist lat; /* from receipt to completion, QoS wait included */
} __attribute__((aligned(64)));

/* The sums over reactors of one namespace and path. */
struct nvmf_ns_iostat_sum {
	uint64_t cmds[NVMF_NIO_CLASSES];
	uint64_t bytes[NVMF_NIO_CLASSES];
	uint16_t err_status[NVMF_IOSTAT_STATUS_SLOTS * 4];
	uint64_t err_n[NVMF_IOSTAT_STATUS_SLOTS * 4];
	unsigned int nerr;
	uint64_t err_other;
	struct hist lat;
};

/* Any thread: @out[NVMF_NPATHS] for @ns. */
void nvmf_ns_iostat_sum(const struct nvmf_ns *ns, struct nvmf_ns_iostat_sum *out);
/* Commands holding @ns right now (received, not yet completed; QoS-queued included). */
uint64_t nvmf_ns_outstanding(const struct nvmf_ns *ns);
/* Reactor of @req: count its completion (request.c calls it). */
void nvmf_ns_iostat_record(struct nvmf_req *req, uint16_t status);

/* ---- Namespaces ---------------------------------------------------------------------------- */
/*
 * Namespace identifiers: an identifier not given (has_* false, or all-zero bytes) comes
 * from the backend when it has its own (bdev->ident), else from the target's state
 * directory (opts.state_dir: generated at random once per subsystem NQN and NSID, kept
 * across restarts, ns_ident.c), else -- no state directory -- it is derived from SHA-256
 * of the subsystem NQN, the NSID and the backend (canonical path or spec).
 * @enabled is informational: nvmf_subsys_add_ns() always exports the namespace; callers
 * skip disabled namespaces themselves.
 */
struct nvmf_ns_opts {
	uint32_t nsid;       /* 0 = lowest free */
	const char *path;    /* "ram:SIZE", "null:SIZE" or a file/block-device path */
	uint32_t block_size; /* 0 = default */
	bool buffered_io;    /* file/block device: page cache instead of O_DIRECT */
	bool has_nguid, has_uuid, has_eui64; /* explicit identifiers (config) */
	uint8_t nguid[16];
	uint8_t uuid[16];
	uint8_t eui64[8];
	bool enabled;
	uint32_t anagrpid; /* ANA group, 1..NVMF_ANA_MAX_GRPS; 0 = group 1 */
};

/* In-flight I/O counter of one reactor slot (own cache line). */
struct nvmf_ns_inflight {
	uint64_t n;
	uint8_t pad[56];
};

struct nvmf_ns {
	uint32_t nsid;
	struct nvmf_subsys *subsys;
	struct bdev *bdev;
	uint64_t nblocks;
	uint32_t block_shift;
	uint8_t nguid[16];
	uint8_t uuid[16];
	uint8_t eui64[8];
	uint32_t anagrpid; /* ANA group (ana.c); fixed while the namespace exists */
	bool removed;      /* atomic; set before the table slot is cleared */
	/* Held across in-flight I/O: one counter per reactor slot (reactor id % slots), so
	 * queues on different reactors do not share a cache line. See nvmf_ns_get(). */
	struct nvmf_ns_inflight inflight[NVMF_NS_REF_SLOTS];
	TAILQ_ENTRY(nvmf_ns) link;     /* subsystem's list of removed namespaces */
	struct nvmf_resv *resv;        /* reservations (reservation.c), created on first use */
	struct nvmf_ns_locks locks;    /* LBA range locks (range_lock.c) */
	struct nvmf_ns_iostat *iostat; /* [iostat_slots][NVMF_NPATHS], by reactor id */
	unsigned int iostat_slots;
	struct nvmf_qos *qos;             /* QoS limits and buckets (qos.c); NULL = none set */
	struct nvmf_qos_hosts *qos_hosts; /* per-host QoS on it (qos.c); NULL = none */
};

/*
 * Look up an active namespace and hold it (keeps its backend open) until nvmf_ns_put().
 * @r is the calling reactor (NULL off-reactor). NULL when @nsid is not active.
 */
struct nvmf_ns *nvmf_ns_get(struct nvmf_subsys *subsys, uint32_t nsid, struct reactor *r);
void nvmf_ns_put(struct nvmf_ns *ns, struct reactor *r);

/*
 * Quality of service per namespace (qos.c): limits in commands and MiB per second for
 * reads, writes and both (0 = no limit), as SPDK's bdev QoS and Ceph's NVMe-oF gateway
 * name them. Reads are Read commands; writes are Write commands; other commands are
 * neither limited nor counted.
 *
 * Enforcement: a token bucket per (namespace, reactor), refilled from the clock, with
 * the limit split evenly among the reactors that submitted I/O to the namespace in the
 * last 200 ms (re-counted every 50 ms): a namespace used through one reactor gets the
 * whole limit there. A command over the limit waits, in order, on its reactor and is
 * released by a 1 ms timer as tokens arrive; it is never failed. A bucket may go into
 * debt by one command's cost, so large transfers under a low MiB/s limit still go.
 */
struct nvmf_qos_limits {
	uint64_t rw_ios_per_sec, r_ios_per_sec, w_ios_per_sec;
	uint64_t rw_mbytes_per_sec, r_mbytes_per_sec, w_mbytes_per_sec;
};
/* Set (all zero: remove) the limits of namespace @nsid, from any thread; in force on
 * every reactor within a timer tick. 0, -ENOENT (no such namespace) or -ENOMEM. */
int nvmf_ns_set_qos(struct nvmf_subsys *subsys, uint32_t nsid, const struct nvmf_qos_limits *lim);
/* The limits in force (all zero when none). 0 or -ENOENT. */
int nvmf_ns_get_qos(struct nvmf_subsys *subsys, uint32_t nsid, struct nvmf_qos_limits *out);
/*
 * Per-host QoS: limits for the commands of host @hostnqn on namespace @nsid (every
 * controller of that host), enforced like the namespace's (per reactor, excess queued)
 * and before them: a command of a limited host passes its host's limits, then the
 * namespace's. All zero removes them. Up to NVMF_QOS_MAX_HOSTS hosts per namespace.
 * 0, -ENOENT (no such namespace), -EINVAL (bad NQN), -ENOSPC or -ENOMEM.
 */
#define NVMF_QOS_MAX_HOSTS 64
int nvmf_ns_set_host_qos(struct nvmf_subsys *subsys, uint32_t nsid, const char *hostnqn,
			 const struct nvmf_qos_limits *lim);
/* The limits of @hostnqn on @nsid (all zero when none). 0 or -ENOENT. */
int nvmf_ns_get_host_qos(struct nvmf_subsys *subsys, uint32_t nsid, const char *hostnqn,
			 struct nvmf_qos_limits *out);
/* @cb for each host with limits on @nsid (under the subsystem lock: no calls back into the
 * core); returns how many, or -ENOENT. */
int nvmf_ns_list_host_qos(struct nvmf_subsys *subsys, uint32_t nsid,
			  void (*cb)(const char *hostnqn, const struct nvmf_qos_limits *lim,
				     void *arg),
			  void *arg);
/* Any thread: commands of @ns waiting for tokens now, and delayed since start. */
void nvmf_ns_qos_counts(const struct nvmf_ns *ns, uint64_t *queued, uint64_t *delayed);

/* ---- Subsystems, hosts, ports ------------------------------------------------------------ */
enum nvmf_subsys_type { NVMF_SUBSYS_NVME, NVMF_SUBSYS_DISCOVERY };

struct nvmf_host {
	char nqn[NVME_NQN_FIELD];
	TAILQ_ENTRY(nvmf_host) link;
};

struct nvmf_subsys {
	struct nvmf_tgt *tgt;
	enum nvmf_subsys_type type;
	char nqn[NVME_NQN_FIELD];
	char serial[21];
	char model[41];
	bool allow_any_host;
	uint16_t cntlid_min, cntlid_max, next_cntlid;
	TAILQ_HEAD(, nvmf_host) hosts;
	struct nvmf_ns *ns[NVMF_MAX_NAMESPACES + 1]; /* indexed by NSID; atomic loads on I/O */
	pthread_mutex_t lock; /* ctrlr list, ns table changes, cntlid allocation */
	TAILQ_HEAD(, nvmf_ctrlr) ctrlrs;
	TAILQ_ENTRY(nvmf_subsys) link;
	struct nvmf_qpair_stats retired;       /* I/O queues gone (under lock) */
	struct nvmf_qpair_stats retired_local; /* the part of it from local (iSCSI) controllers */
	TAILQ_HEAD(, nvmf_ns) removed_ns;      /* freed with the subsystem */
	bool dying;                            /* being destroyed: no new controllers */
};

struct nvmf_port_opts {
	uint16_t portid;
	const char *trtype; /* "tcp", "rdma" */
	const char *adrfam; /* "ipv4", "ipv6" */
	const char *traddr;
	const char *trsvcid;
	const char *advertise;    /* address put in the discovery log (NAT); NULL = traddr */
	uint32_t in_capsule_size; /* 0 = target default */
	bool discovery_only;      /* the extra 8009 discovery listener */
	uint8_t sectype;          /* NVMF_TCP_SECTYPE_TLS13: a TLS port (tcp only) */
	uint8_t treq;             /* TLS ports: NVMF_TREQ_SECURE_* (not specified = required) */
};

struct nvmf_port {
	struct nvmf_tgt *tgt;
	const struct nvmf_transport_ops *ops;
	uint16_t portid;
	uint8_t adrfam; /* NVMF_ADRFAM_* */
	char traddr[256];
	char trsvcid[32];
	char advertise[256];
	uint32_t in_capsule_size;
	bool discovery_only;
	uint8_t sectype;                /* NVMF_TCP_SECTYPE_NONE or _TLS13 (see nvmf_port_opts) */
	uint8_t treq;                   /* NVMF_TREQ_SECURE_* of a TLS port */
	struct nvmf_subsys *subsys[64]; /* subsystems exported here */
	unsigned int nsubsys;
	void *listener; /* transport private */
	TAILQ_ENTRY(nvmf_port) link;
	bool listening;
	TAILQ_HEAD(, nvmf_qpair) qpairs; /* connections through this port (under tgt->lock) */
	/* ANA (ana.c): the state of each group on this port, read per I/O command with a
	 * relaxed atomic load, written on the main thread; the log page change count. */
	uint8_t ana_state[NVMF_ANA_MAX_GRPS + 1];
	uint8_t ana_next[NVMF_ANA_MAX_GRPS + 1]; /* state a CHANGE group moves to */
	uint64_t ana_chgcnt;                     /* atomic */
	uint64_t ana_change_deadline_ns;         /* earliest pending CHANGE -> next (0: none) */
	uint64_t ana_refused; /* atomic: I/O commands answered with an ANA status */
	/* atomic: plain NVMe/TCP refused (an ICReq where TLS is required, or a Connect as a
	 * host that has a PSK) */
	uint64_t plain_refused;
};

struct nvmf_referral {
	uint16_t portid;
	uint8_t trtype, adrfam;
	char traddr[256];
	char trsvcid[32];
	TAILQ_ENTRY(nvmf_referral) link;
};

struct nvmf_tgt {
	struct nvmf_tgt_opts opts;
	struct nvmf_subsys *discovery;
	TAILQ_HEAD(, nvmf_subsys) subsystems;
	TAILQ_HEAD(, nvmf_port) ports;
	TAILQ_HEAD(, nvmf_referral) referrals;
	uint64_t genctr;                  /* discovery log generation, bumped on any change */
	pthread_mutex_t lock;             /* subsystems/ports/referrals lists */
	unsigned int nconnections;        /* atomic */
	unsigned int nctrlrs;             /* atomic: controllers not yet freed */
	uint64_t start_ns;                /* CLOCK_MONOTONIC at creation (power-on hours) */
	struct nvmf_host_auth *host_auth; /* hosts with DH-HMAC-CHAP secrets (under lock) */
	unsigned int nhost_auth;
	struct nvmf_host_psks *host_psks; /* TLS PSKs by host NQN (host_psk.c) */
	struct auth_pool *auth_pool;      /* DH-HMAC-CHAP work threads, made on first use
					   * (under auth_pool_lock) */
	pthread_mutex_t auth_pool_lock;
	TAILQ_HEAD(, nvmf_host_share) host_shares; /* hosts with queues (host_share.c) */
	uint64_t host_conn_refused; /* atomic: Connects refused at max_host_connections */
};

/* DH-HMAC-CHAP's Diffie-Hellman jobs (target/core/auth_pool.c), since start. */
struct nvmf_auth_stats {
	uint64_t queued;          /* admitted to the shared lane (queues not yet authenticated) */
	uint64_t queued_priority; /* admitted to the lane of re-authentications */
	uint64_t refused_total;   /* refused: auth_max_pending jobs pending */
	uint64_t refused_host;    /* refused: auth_max_pending_host jobs of that host NQN */
	uint64_t refused_addr;    /* refused: auth_max_pending_addr jobs from that address */
	uint64_t done;            /* run to the end, both lanes */
	uint64_t run_ns, wait_ns; /* sums over the done jobs: running, and queued before */
	uint64_t run_max_ns, wait_max_ns;
	unsigned int threads;          /* of the pool (0: not started) */
	unsigned int pending;          /* shared lane, queued or running, now */
	unsigned int pending_priority; /* re-authentication lane, now */
};
/* A snapshot of the counters (zeros before the first job). */
void nvmf_auth_stats_get(struct nvmf_tgt *tgt, struct nvmf_auth_stats *out);

/*
 * Everything below runs on the main thread (config, signals) unless noted.
 * nvmf_tgt_create() also creates the discovery subsystem (tgt->discovery).
 * nvmf_tgt_destroy() must run while the reactors are still running: it asks every
 * controller's reactor to tear it down and waits (bounded) for the queues to go.
 */
void nvmf_tgt_opts_default(struct nvmf_tgt_opts *opts);
struct nvmf_tgt *nvmf_tgt_create(const struct nvmf_tgt_opts *opts);
/* Disconnect every controller, stop listening, close every namespace (flushing files). */
void nvmf_tgt_destroy(struct nvmf_tgt *tgt);

/*
 * A new subsystem has serial number = first 20 hex digits of SHA-256(NQN), model
 * "nvmeof", allow_any_host false, controller IDs 1..FFEFh. Set serial/model/cntlid_min/
 * cntlid_max directly before exporting it; use the setters below for host access.
 * NULL with errno EINVAL (bad NQN), EEXIST or ENOMEM.
 */
struct nvmf_subsys *nvmf_subsys_create(struct nvmf_tgt *tgt, const char *nqn);
struct nvmf_subsys *nvmf_subsys_find(struct nvmf_tgt *tgt, const char *nqn);
/* Tears down its controllers (bounded wait), unexports it from ports, closes namespaces. */
void nvmf_subsys_destroy(struct nvmf_subsys *subsys);
int nvmf_subsys_add_host(struct nvmf_subsys *subsys, const char *hostnqn);

/*
 * NVMe/TCP TLS: the configured PSK of each host (host_psk.c), by host NQN, target-wide as
 * a host's configfs entry is. nvmf_tgt_set_host_psk() replaces the key of @hostnqn (NULL
 * removes it); the table keeps its own copy. nvmf_tgt_get_host_psk() gives the caller a
 * copy to clear with nvme_tls_key_clear(): 0, or -ENOENT. Both take tgt->lock, from any
 * thread (handshakes run on reactors). nvmf_tgt_clear_host_psks() empties the table.
 */
struct nvme_tls_key;
int nvmf_tgt_set_host_psk(struct nvmf_tgt *tgt, const char *hostnqn,
			  const struct nvme_tls_key *key);
int nvmf_tgt_get_host_psk(struct nvmf_tgt *tgt, const char *hostnqn, struct nvme_tls_key *out);
void nvmf_tgt_clear_host_psks(struct nvmf_tgt *tgt);
/* Whether @hostnqn has a PSK (caller holds tgt->lock). Such a host is never admitted
 * over plain NVMe/TCP, on any port. */
bool nvmf_tgt_host_has_psk_locked(const struct nvmf_tgt *tgt, const char *hostnqn);
int nvmf_subsys_remove_host(struct nvmf_subsys *subsys, const char *hostnqn);
void nvmf_subsys_set_allow_any_host(struct nvmf_subsys *subsys, bool allow);
bool nvmf_subsys_host_allowed(struct nvmf_subsys *subsys, const char *hostnqn);
/* Read/write totals of every controller of @subsys, live and gone (any thread). */
void nvmf_subsys_get_stats(struct nvmf_subsys *subsys, struct nvmf_qpair_stats *out);
/* Returns the NSID (> 0) or -errno, with a message in @err. Connected controllers get a
 * Namespace Attribute Changed event. */
int nvmf_subsys_add_ns(struct nvmf_subsys *subsys, const struct nvmf_ns_opts *opts, char *err,
		       size_t errlen);
int nvmf_subsys_remove_ns(struct nvmf_subsys *subsys, uint32_t nsid);
/* Resize namespace @nsid to @size bytes (0: re-read the size of its file or device) while
 * I/O runs (bdev_resize()); Identify Namespace reports the new size and connected
 * controllers get a Namespace Attribute Changed event. 0 or -errno with @err set. */
int nvmf_subsys_resize_ns(struct nvmf_subsys *subsys, uint32_t nsid, uint64_t size, char *err,
			  size_t errlen);
/* The backend saw its size change by itself (an RBD image resized in the cluster): take
 * bdev->size as the namespace size and send Namespace Attribute Changed events, as
 * nvmf_subsys_resize_ns() does. Any thread but a reactor (the backend's resize hook). */
void nvmf_ns_backend_resized(struct nvmf_ns *ns);

/* ---- Controllers, for management (mgmt.c; main thread) --------------------------------- */
struct nvmf_ctrlr_info {
	char subnqn[NVME_NQN_FIELD];
	char hostnqn[NVME_NQN_FIELD];
	uint8_t hostid[16];
	uint16_t cntlid;
	bool local;                    /* in-process front end (iSCSI) */
	bool ready;                    /* CC.EN = 1, CSTS.RDY = 1 */
	char trtype[8];                /* "tcp", "rdma", "iscsi" */
	char traddr[256], trsvcid[32]; /* the port the admin queue came in on */
	char peer[64];                 /* the host's "ADDR:PORT" (admin queue) */
	unsigned int io_queues;
	uint32_t kato_ms;
	struct nvmf_qpair_stats stats;
};
/* Call @cb (under the target's locks: it must not block or call back into the core) for
 * each live controller, of @subnqn only unless NULL. Returns how many. */
int nvmf_tgt_list_ctrlrs(struct nvmf_tgt *tgt, const char *subnqn,
			 void (*cb)(const struct nvmf_ctrlr_info *ci, void *arg), void *arg);
/* Tear controller @cntlid of @subsys down (its queues are disconnected on their reactors;
 * returns before they are gone). 0, -EINVAL or -ENOENT. */
int nvmf_ctrlr_disconnect(struct nvmf_subsys *subsys, uint16_t cntlid);
/* Tear down every controller @hostnqn has on @subsys (after its access was revoked);
 * returns how many. */
int nvmf_subsys_disconnect_host(struct nvmf_subsys *subsys, const char *hostnqn);
/* End every live controller of @subsys whose host is no longer allowed (after allowed
 * hosts were removed or allow_any_host turned off). Returns how many. */
unsigned int nvmf_subsys_revoke(struct nvmf_subsys *subsys);

/*
 * In-band authentication (fabrics_auth.c). A host with DH-HMAC-CHAP settings must
 * authenticate every queue it connects to a subsystem that lists its allowed hosts (as
 * Linux nvmet: not on subsystems that allow any host, nor on the discovery subsystem).
 * Strings as Linux nvmet's configfs takes them (target/auth/dhchap_ctrl.h): @key and
 * @ctrl_key "DHHC-1:NN:...:", @hash "hmac(sha256)" ..., @dhgroup "null", "ffdhe2048" ...
 */
struct nvmf_host_dhchap {
	const char *hostnqn;
	const char *key, *ctrl_key; /* ctrl_key NULL or "": unidirectional only */
	const char *hash, *dhgroup; /* NULL or "": the first the host offers */
};
/*
 * Replace the target's whole table of authenticating hosts with @v (all or nothing: on
 * error nothing changes and @err names the host and the value, never a secret). New
 * Connects and re-authentications use the new settings; ending the live controllers of
 * hosts whose settings changed is the caller's (config_reload() does it). 0 or -errno.
 */
int nvmf_tgt_set_host_keys(struct nvmf_tgt *tgt, const struct nvmf_host_dhchap *v, unsigned int n,
			   char *err, size_t errlen);

/* The TREQ secure channel a port enforces: on a TLS 1.3 port "not specified" means
 * required (as Linux nvmet), only an explicit "not required" serves plain hosts; a port
 * without TLS keeps what it was given. */
uint8_t nvmf_port_treq_resolve(uint8_t sectype, uint8_t treq);
struct nvmf_port *nvmf_port_create(struct nvmf_tgt *tgt, const struct nvmf_port_opts *opts,
				   char *err, size_t errlen);
int nvmf_port_add_subsys(struct nvmf_port *port, struct nvmf_subsys *subsys);
int nvmf_port_remove_subsys(struct nvmf_port *port, struct nvmf_subsys *subsys);
struct nvmf_port *nvmf_port_find(struct nvmf_tgt *tgt, uint16_t portid);
int nvmf_port_listen(struct nvmf_port *port);
void nvmf_port_destroy(struct nvmf_port *port);

/* Discovery referrals (SUBTYPE 1 entries): trtype "tcp"/"rdma", adrfam "ipv4"/"ipv6". */
int nvmf_referral_add(struct nvmf_tgt *tgt, uint16_t portid, const char *trtype, const char *adrfam,
		      const char *traddr, const char *trsvcid);
int nvmf_referral_remove(struct nvmf_tgt *tgt, const char *traddr, const char *trsvcid);

#endif
