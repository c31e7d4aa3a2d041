/* SPDX-License-Identifier: MIT */
/*
 * libnvmeof's queue layer, which both paths share: the controller, queue pair, request
 * and namespace objects; host_qpair.c (request pools, CIDs, timeouts, completion
 * matching), host_io.c (NVM command building, MDTS splitting), logging, errors, dialing
 * and the host's identity. The transports behind host_transport.h (nvme/: NVMe/TCP and
 * NVMe/RDMA; scsi/: the iSCSI tunnel) build on it, and the controller (host_ctrlr.c,
 * host_reconnect.c) on top of them; nothing here calls up into either.
 *
 * Two request levels:
 *   struct nvmeof_ureq  what the caller submitted (one callback), with its iovec copy;
 *   struct nvmeof_req   one command on the wire, with a CID.
 * A ureq larger than the controller's MDTS becomes several reqs issued in order as
 * wire slots free up; the ureq completes when the last one has.
 */
#ifndef NVMEOF_INITIATOR_QUEUE_HOST_INTERNAL_H
#define NVMEOF_INITIATOR_QUEUE_HOST_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "common/nvme_spec.h"
#include "lib/nvmeof.h"
#include "common/uri.h"
#include "host_mem.h"

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#endif

struct nvmeof_transport_ops;
struct host_auth_keys;

/* ---- Logging and error strings (host_log.c, host_errors.c) ---------------------------------------------- */
void nlog(enum nvmeof_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool nlog_enabled(enum nvmeof_log_level lvl);
#define nlog_err(...) nlog(NVMEOF_LOG_ERR, __VA_ARGS__)
#define nlog_warn(...) nlog(NVMEOF_LOG_WARN, __VA_ARGS__)
#define nlog_info(...) nlog(NVMEOF_LOG_INFO, __VA_ARGS__)
#define nlog_debug(...)                                                                    \
	do {                                                                               \
		if (nlog_enabled(NVMEOF_LOG_DEBUG))                                        \
			nlog(NVMEOF_LOG_DEBUG, __VA_ARGS__);                               \
	} while (0)

/* Record the calling thread's last error message; returns @err (a negative errno). */
int set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void clear_error(void);

/* Milliseconds on the monotonic clock. */
uint64_t now_ms(void);
/* The sooner of two timeouts in ms, where a negative one means none. */
static inline int timeout_min(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* Sockets (host_dial.c): wait until @fd is ready for @events or @deadline (now_ms()) passes
 * (0, -ETIMEDOUT or -errno; 0 also on EINTR), and dial @u with a non-blocking connect
 * (the descriptor, or -errno with the error set). */
int sock_wait_fd(int fd, short events, uint64_t deadline);
/* Send (@out) or receive exactly @len bytes on non-blocking @fd by @deadline: 0,
 * -ECONNRESET at EOF or EPIPE, -ETIMEDOUT or -errno. */
int sock_xfer_all(int fd, void *buf, size_t len, bool out, uint64_t deadline);
int sock_dial(const struct uri_target *u, int timeout_ms, uint64_t deadline);

/* Status (host_errors.c): status from a CQE, and a name with Fabrics context. */
uint16_t cqe_status(const struct nvme_cpl *cqe);
const char *connect_status_name(uint16_t status);
/* The reason code explanation of an AUTH_Failure1/2 in words. */
const char *auth_failure_name(uint8_t explanation);

/* ---- Requests ------------------------------------------------------------------------ */
struct nvmeof_ureq;

struct nvmeof_req {
	struct nvme_cmd sqe;	    /* wire byte order; the transport fills DPTR */
	struct nvmeof_qpair *qp;
	struct nvmeof_ureq *ureq;
	uint16_t slot;		    /* index in qp->reqs, also the transport's slot */
	uint16_t cid;		    /* slot plus a generation in the high bits */
	uint16_t gen;
	bool busy;
	enum nvme_data_xfer xfer;
	const struct iovec *iov;    /* the ureq's iovecs */
	int iovcnt;
	size_t data_off;	    /* where this command's data starts in iov */
	uint32_t data_len;
	uint64_t deadline;	    /* now_ms() value, 0 = none */
	TAILQ_ENTRY(nvmeof_req) link; /* free list or outstanding list (issue order) */
};

/* Kinds of user request: LBA-addressed ones may be split by MDTS. */
enum ureq_kind {
	UREQ_SINGLE,	/* one command as given (admin, fabrics, flush, DSM, pass-through) */
	UREQ_LBA_DATA,	/* read/write/compare: split by max_xfer and 65536 blocks */
	UREQ_LBA_NODATA, /* write zeroes: split by 65536 blocks */
};

struct nvmeof_ureq {
	nvmeof_cb cb;
	void *arg;
	enum ureq_kind kind;
	struct nvme_cmd tmpl;	    /* command template (wire order); children copy it */
	enum nvme_data_xfer xfer;
	struct iovec iov[NVMEOF_IOV_MAX];
	int iovcnt;
	uint32_t data_len;	    /* UREQ_SINGLE: bytes moved */
	uint64_t next_lba;	    /* LBA kinds: next child's start */
	uint32_t left;		    /* blocks (LBA kinds) or commands (single) still to issue */
	size_t next_off;	    /* data offset of the next child */
	uint32_t block_shift;
	uint32_t max_blocks;	    /* per child */
	unsigned int inflight;	    /* children on the wire */
	struct nvmeof_cpl cpl;	    /* first error wins */
	uint8_t inline_buf[16];	    /* one DSM range */
	TAILQ_ENTRY(nvmeof_ureq) link; /* free, pending or done list */
};

TAILQ_HEAD(req_list, nvmeof_req);
TAILQ_HEAD(ureq_list, nvmeof_ureq);

/* ---- Queue pairs ----------------------------------------------------------------------- */
enum qpair_state {
	QP_INIT,       /* allocated, transport not connected */
	QP_CONNECTING, /* transport up, Fabrics Connect not yet done */
	QP_READY,      /* commands may be submitted */
	QP_FAILED,     /* transport error, timeout or controller termination: no more I/O */
	QP_CLOSED,     /* closed on purpose (disconnect) */
	QP_RECONNECT,  /* connection lost, the controller is recovering: I/O is held
			   (requeue, pending) until this queue pair connects again */
};

struct nvmeof_qpair {
	const struct nvmeof_transport_ops *ops;
	struct nvmeof_ctrlr *ctrlr;
	uint16_t qid;
	enum qpair_state state;
	int err;		    /* why it failed */
	char errmsg[256];

	uint16_t entries;	    /* queue size negotiated at Connect (SQSIZE + 1) */
	uint16_t nreqs;		    /* commands on the wire at most */
	uint16_t slot_bits;
	struct nvmeof_req *reqs;
	struct req_list free_reqs;
	struct req_list outstanding; /* issue order: the head times out first */
	unsigned int nr_outstanding;

	uint16_t nureqs;
	struct nvmeof_ureq *ureqs;
	struct ureq_list free_ureqs;
	struct ureq_list pending;   /* waiting for wire slots */
	struct ureq_list done;	    /* callbacks to run */
	unsigned int nr_ureqs;	    /* submitted and not yet called back */

	uint32_t timeout_ms;	    /* per command, 0 = none */
	uint32_t max_xfer;	    /* bytes per command (MDTS), 0 = no limit */
	bool in_callbacks;
	/* Reconnect: commands that were on the wire when the connection was lost, in issue
	 * order, sent again once the queue pair is back; the controller epoch this queue
	 * pair was connected in; set while a reconnect attempt runs on it. */
	struct req_list requeue;
	uint32_t epoch;
	bool reconnecting;
	TAILQ_ENTRY(nvmeof_qpair) link; /* ctrlr->io_qpairs */
	/* Translation timing (qpair_xlate_begin/end): calls, how many were timed, their ticks. */
	uint64_t xlate_calls, xlate_sampled, xlate_ticks;
	/* Commands whose data the controller moved straight from/to registered memory, and
	 * the keyed descriptors they used (NVMe/RDMA). */
	uint64_t direct_cmds, direct_descs;
};

/*
 * Time a translation step (NVMe command -> SCSI CDB, SCSI status -> NVMe status) on @qp:
 *     uint64_t t = qpair_xlate_begin(qp); scsi_encap_build(...); qpair_xlate_end(qp, t);
 * Every call is counted; one in QPAIR_XLATE_SAMPLE reads the time-stamp counter (x86) or
 * CLOCK_MONOTONIC, and nvmeof_qpair_get_stats() (host_qpair_stats.c) scales the timed share up.
 */
#define QPAIR_XLATE_SAMPLE 16
uint64_t qpair_ticks(void);
static inline uint64_t qpair_xlate_begin(struct nvmeof_qpair *qp)
{
	return ++qp->xlate_calls % QPAIR_XLATE_SAMPLE ? 0 : qpair_ticks() | 1;
}

static inline void qpair_xlate_end(struct nvmeof_qpair *qp, uint64_t t0)
{
	uint64_t d;

	if (!t0)
		return;
	d = qpair_ticks() - t0;
	if (d > (1ull << 22)) /* preempted inside: not a translation time */
		return;
	qp->xlate_ticks += d;
	qp->xlate_sampled++;
}

/* Allocate pools for @nreqs wire commands (and as many user requests). */
int qpair_init(struct nvmeof_qpair *qp, struct nvmeof_ctrlr *ctrlr, uint16_t qid,
	       uint16_t nreqs, uint32_t timeout_ms);
void qpair_fini(struct nvmeof_qpair *qp);
void qpair_set_state(struct nvmeof_qpair *qp, enum qpair_state state);

/* Queue a user request built by the caller (host_io.c, host_ctrlr.c) and issue what fits. */
struct nvmeof_ureq *ureq_get(struct nvmeof_qpair *qp);
void ureq_submit(struct nvmeof_qpair *qp, struct nvmeof_ureq *ureq);

/* Transport side: find an outstanding command by CID (NULL if none), complete it with a
 * CQE or with an error, and fail the whole queue pair. */
struct nvmeof_req *qpair_find_req(struct nvmeof_qpair *qp, uint16_t cid);
void req_complete(struct nvmeof_req *req, const struct nvme_cpl *cqe, int err);
/* Match a CQE to its command and complete it; -EPROTO for an unknown CID. */
int qpair_complete_cqe(struct nvmeof_qpair *qp, const struct nvme_cpl *cqe);
void qpair_fail(struct nvmeof_qpair *qp, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Close on purpose (disconnect/free): commands still outstanding complete -ECANCELED. */
void qpair_close(struct nvmeof_qpair *qp);
/* Transport I/O possible (connecting or ready), and submissions accepted (also while
 * held for a reconnect). */
bool qpair_usable(const struct nvmeof_qpair *qp);
bool qpair_accepts(const struct nvmeof_qpair *qp);
/* Reconnect support (host_qpair.c): send the requeued commands on the new connection; fail
 * every held command with the Host Pathing Error status (DNR clear); fail everything
 * and end in QP_FAILED with @fmt as the reason. */
int qpair_resend(struct nvmeof_qpair *qp);
void qpair_fail_held(struct nvmeof_qpair *qp);
void qpair_give_up(struct nvmeof_qpair *qp, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A completion as a sync result: -errno, positive status, or 0. */
int cpl_result(const struct nvmeof_cpl *cpl);

/* Progress: transport I/O (@revents, or POLLIN|POLLOUT to try both), timeouts, then at
 * most @max callbacks (0: all). Returns callbacks run or -errno once failed. */
int qpair_poll(struct nvmeof_qpair *qp, short revents, unsigned int max);
/* Block until *@done (set by a callback) or the queue pair fails; keeps the admin queue's
 * keep-alive going when @qp is an I/O queue. */
int qpair_wait(struct nvmeof_qpair *qp, const bool *done);

/* Build and run one command synchronously (admin and fabrics bring-up). Returns 0,
 * -errno or a positive status; @cpl (may be NULL) gets the completion. */
int qpair_exec(struct nvmeof_qpair *qp, const struct nvme_cmd *sqe, void *buf, uint32_t len,
	       enum nvme_data_xfer xfer, struct nvmeof_cpl *cpl);
/* Asynchronous single command. */
int qpair_submit_cmd(struct nvmeof_qpair *qp, const struct nvme_cmd *sqe,
		     const struct iovec *iov, int iovcnt, uint32_t len, enum nvme_data_xfer xfer,
		     nvmeof_cb cb, void *arg);

/* Pieces of an iovec range (used by transports and tests); their total length is
 * common/iov.h's iov_length(). */
/* Fill @out (room for @max) with the part of @iov covering [@off, @off + @len).
 * Returns the entries used, or -1 if @max is too small or the range too long. */
int iov_slice(const struct iovec *iov, int iovcnt, size_t off, size_t len, struct iovec *out,
	      int max);
/* As iov_slice() but stops when @max entries are used; *@covered says how far it got. */
int iov_slice_upto(const struct iovec *iov, int iovcnt, size_t off, size_t len,
		   struct iovec *out, int max, size_t *covered);

/* ---- Namespaces and controllers ---------------------------------------------------------- */
struct nvmeof_ns {
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns_info info;
	uint32_t block_shift;
};

struct nvmeof_ctrlr {
	struct uri_target uri;
	char uri_str[640];
	struct nvmeof_opts opts;
	const struct nvmeof_transport_ops *ops;
	const struct qpair_owner_ops *owner; /* set by the controller (host_ctrlr.c) */
	char hostnqn[NVME_NQN_FIELD];
	uint8_t hostid[16];
	struct host_tls_key *tls_key; /* opts.tls: the configured PSK (nvme/host_tls.c) */
	struct host_mem mem;          /* registered memory (host_mem.c) */

	pthread_mutex_t admin_lock;	/* admin queue and controller state */
	struct nvmeof_qpair *admin;
	TAILQ_HEAD(, nvmeof_qpair) io_qpairs;
	unsigned int nr_io_qpairs;
	struct nvmeof_qpair **initial;	/* those made at connect time, by index */
	unsigned int nr_initial;
	uint8_t *qid_used;		/* [max_io_queues + 1] */
	unsigned int max_io_queues;

	uint64_t cap;
	uint32_t vs;
	uint16_t cntlid;
	struct nvme_id_ctrl *id;
	uint32_t max_xfer;		/* MDTS in bytes, 0 = no limit */
	uint32_t io_icdata;		/* in-capsule bytes on I/O queues */
	uint16_t io_entries_max;	/* MQES + 1 */

	uint32_t kato_ms;
	uint64_t next_ka;		/* now_ms() when the next Keep Alive is due, 0 = none */
	bool ka_inflight;

	struct nvmeof_ns *ns;		/* active namespaces, NSID order */
	unsigned int nr_ns;

	/* Reconnect (host_reconnect.c). state and epoch are read without a lock by the queue
	 * pairs' threads; changes go through ctrlr_set_state() under state_lock. */
	pthread_mutex_t state_lock; /* recursive: the state callback may read stats */
	enum nvmeof_ctrlr_state state;
	uint32_t epoch;        /* bumped at every reset */
	uint64_t outage_start; /* now_ms() when the current outage began */
	uint64_t next_attempt; /* now_ms() of the next reconnect attempt */
	bool fast_fail;        /* fast_io_fail_tmo passed in this outage */
	nvmeof_state_fn state_fn;
	void *state_arg;
	struct nvmeof_ctrlr_stats stats;

	/* DH-HMAC-CHAP (nvme/host_auth.c): the transformed secrets, NULL without a secret, and
	 * what the admin queue's last authentication negotiated. */
	struct host_auth_keys *auth;
	struct {
		bool authenticated, bidirectional;
		uint8_t hash, dhgroup; /* enum nvme_auth_hash_id / nvme_auth_dhgroup_id */
	} auth_info;
};

/* What a queue pair asks of the controller that owns it. The controller (host_ctrlr.c)
 * sets ctrlr->owner when it is made; the queue layer calls through it and never up into
 * the controller by name. A NULL table (a queue pair under test) asks nothing. */
struct qpair_owner_ops {
	/* A queue pair connected in @epoch lost its connection: reset the controller
	 * (LIVE -> RESETTING) unless that already happened for this epoch. */
	void (*conn_lost)(struct nvmeof_ctrlr *ctrlr, uint32_t epoch, const char *why);
	/* From qpair_poll() of an I/O queue pair: follow the controller's resets (tear
	 * down a connection of an older epoch, reconnect once the controller is live
	 * again, fail held I/O when fast_io_fail_tmo or ctrl_loss_tmo passed). */
	void (*qpair_recover)(struct nvmeof_qpair *qp);
	/* Milliseconds until a queue pair held for a reconnect needs service (-1: none). */
	int (*recover_timeout_ms)(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_qpair *qp);
	/* Keep the admin queue alive from a blocking wait on another queue (try-lock);
	 * ms until it should be called again (-1: no keep-alive). */
	int (*keepalive_poll)(struct nvmeof_ctrlr *ctrlr);
	/* With admin_lock held: send a Keep Alive if due; ms until the next (-1: none). */
	int (*keepalive_tick)(struct nvmeof_ctrlr *ctrlr);
};

/* The NVMe status (NVMEOF_STATUS form) held I/O fails with: Host Pathing Error. */
#define QPAIR_HOST_PATH_ERROR NVMEOF_STATUS(NVMEOF_SCT_PATH, 0x70)

/* Host NQN / host ID (host_nqn.c). @etc_dir normally "/etc/nvme"; @state_dir NULL for
 * $XDG_STATE_HOME/nvmeof or ~/.local/state/nvmeof. */
int host_identity(const char *nqn_opt, const char *id_opt, const char *etc_dir,
		  const char *state_dir, char nqn[NVME_NQN_FIELD], uint8_t hostid[16]);
int uuid_parse(const char *s, uint8_t out[16]);
void uuid_format(const uint8_t id[16], char out[37]);

/* NVM command building (host_io.c), exposed for unit tests. */
void io_build_rw(struct nvme_cmd *sqe, uint8_t opc, uint32_t nsid, uint64_t lba,
		 uint32_t nblocks, unsigned int flags);
/* Host-order pass-through fields into a wire SQE. */
void cmd_to_sqe(const struct nvmeof_cmd *cmd, uint32_t nsid, struct nvme_cmd *sqe);
/* Blocks per command for a namespace on a queue pair (MDTS and the 16-bit NLB). */
uint32_t io_max_blocks(uint32_t max_xfer, uint32_t block_shift);

#endif
