/* SPDX-License-Identifier: MIT */
/*
 * iSCSI target internals shared by iscsi_*.c: targets and LUN maps, connections (one per
 * session: MaxConnections=1, ERL 0), the receive and transmit machinery, SCSI tasks.
 *
 * Threads: a connection lives on one reactor from accept to close. Targets, the session
 * table (ISID/TSIH) and options are global, under g_iscsi.lock, touched at login/logout
 * and by configuration only.
 */
#ifndef NVMEOF_TARGET_ISCSI_INTERNAL_H
#define NVMEOF_TARGET_ISCSI_INTERNAL_H

#include <assert.h>
#include <ev.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "iscsi.h"
#include "common/iscsi_pdu.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "reactor/xlate_timer.h"
#include "scsi/scsi_xlate.h"

#define ISCSI_MAX_LUNS 256
#define ISCSI_MAX_TASKS 512	  /* upper bound of the configurable queue depth */
#define ISCSI_IMMEDIATE_SLOTS 8	  /* tasks kept for immediate commands */
#define ISCSI_CTL_PDUS 16	  /* control PDUs (NOP-In, Reject, TMF, text...) per conn */
#define ISCSI_RX_STAGE        65536      /* receive staging buffer */
#define ISCSI_RX_BIG          (16 * 1024) /* data segment >= this: read the next header alone */
#define ISCSI_TX_IOV 64		  /* iovecs per sendmsg */
#define ISCSI_RX_BUDGET 64	  /* PDUs handled per read event */
#define ISCSI_RECV_BUDGET \
	16 /* receive calls per read event, as NVMe/TCP: the responses
				   * of what was read go out before more is read */
#define ISCSI_NAME_BUF (ISCSI_NAME_MAX + 1)
#define ISCSI_SECRET_MAX 256
#define ISCSI_TPGT 1
#define ISCSI_AHS_MAX 1020	  /* TotalAHSLength is 8 bits of 4-byte words */
#define ISCSI_TASK_BUFS 16	  /* reactor chunks one SCSI command may use */
#define ISCSI_TX_DATA_IOV 8         /* pieces of one PDU's data segment */
#define ISCSI_DATAIN_PDUS 4         /* Data-In PDUs of one task queued ahead */
#define ISCSI_TASK_IN_IOV (ISCSI_TASK_BUFS + 2) /* pieces of a task's Data-In data */
static_assert(ISCSI_TASK_IN_IOV <= 32, "in_iov_mapped has a bit per piece");
#define ISCSI_POOL_SHARE       8       /* a session holds at most 1/8 of its reactor's pool */
#define ISCSI_INITIATOR_SHARE  4       /* the sessions of one initiator on a reactor: 1/4 of it */
#define ISCSI_TICK_MS          1000    /* liveness tick of a full feature session (iscsi_watch.c) */
#define ISCSI_TASKS_KEEP       4       /* task slots an idle session keeps (the rest are freed) */
#define ISCSI_TASKS_IDLE_TICKS 10      /* ticks without a command before the others are freed */
#define ISCSI_ADMIN_CID        0xffffu /* command identifier of the session's Identify commands */

/* ---- Targets -------------------------------------------------------------------------------- */
struct iscsi_lun_map {
	uint64_t lun;
	uint32_t nsid;
	struct scsi_lu_mode mode;	/* shared by every session (MODE SELECT) */
};

struct iscsi_chap_cred {
	char user[ISCSI_SECRET_MAX];
	char secret[ISCSI_SECRET_MAX];
};

/* Who must authenticate to a target (or to discovery sessions), and how. */
struct iscsi_auth {
	bool chap;                 /* initiators must authenticate */
	struct iscsi_chap_cred in; /* what the initiator must prove */
	bool mutual;
	struct iscsi_chap_cred out; /* what we prove when asked */
	uint32_t gen;               /* bumped when @in changes: sessions proved the old one */
};

struct iscsi_initiator_acl {
	char name[ISCSI_NAME_BUF];
	TAILQ_ENTRY(iscsi_initiator_acl) link;
};

struct iscsi_target {
	char name[ISCSI_NAME_BUF];
	char alias[256];
	char subnqn[NVME_NQN_FIELD];	/* subsystem of every LUN ("" until a LUN is added) */
	struct iscsi_lun_map luns[ISCSI_MAX_LUNS];
	unsigned int nluns;
	struct iscsi_auth auth; /* under g_iscsi.lock */
	TAILQ_HEAD(, iscsi_initiator_acl) acl;
	unsigned int refs;		/* sessions using it (under g_iscsi.lock) */
	bool removed;
	TAILQ_ENTRY(iscsi_target) link;
};

struct iscsi_portal {
	char addr[64];
	char port[16];
	char advertise[256];		/* address named in SendTargets ("" = the local one) */
	int fd;
	ev_io io;
	struct nvmf_port *nvmf_port;	/* when started through the transport table */
	TAILQ_ENTRY(iscsi_portal) link;
};

struct iscsi_conn;

/*
 * An initiator (by InitiatorName) with normal sessions: how many in all (under
 * g_iscsi.lock, checked against max_sessions_per_initiator at login) and how many on each
 * reactor (here[r->id], touched by that reactor's thread only), which divide its share of
 * that reactor's buffer pool between them (iscsi_buf_cap()).
 */
struct iscsi_initiator {
	char name[ISCSI_NAME_BUF];
	unsigned int sessions;
	TAILQ_ENTRY(iscsi_initiator) link;
	unsigned int nreactors;
	unsigned int here[]; /* by reactor id */
};

struct iscsi_global {
	pthread_mutex_t lock;
	struct nvmf_tgt *tgt;
	struct iscsi_opts opts;
	TAILQ_HEAD(, iscsi_target) targets;
	TAILQ_HEAD(, iscsi_portal) portals;
	TAILQ_HEAD(, iscsi_conn) conns;	/* every connection, logged in or not */
	unsigned int nconns;		/* atomic */
	unsigned int nconnecting;       /* atomic: of those, still in the login phase */
	uint64_t login_timeouts;        /* atomic: closed at the login deadline */
	uint64_t revoked;               /* atomic: sessions ended by a configuration change */
	uint64_t dataout_timeouts;      /* atomic: see struct iscsi_stats */
	uint64_t nopin_timeouts;        /* atomic */
	uint64_t peer_gone;             /* atomic */
	uint64_t initiator_limit;       /* atomic */
	uint64_t tasks_allocated;       /* atomic: task slots in memory, every session */
	TAILQ_HEAD(, iscsi_initiator) initiators; /* with a normal session (under the lock) */
	struct iscsi_auth disc_auth;              /* discovery sessions (under the lock) */
	uint16_t next_tsih;
	bool initialized;
};
extern struct iscsi_global g_iscsi;

/* Look up under g_iscsi.lock. */
struct iscsi_target *iscsi_target_find_locked(const char *iqn);
bool iscsi_target_initiator_allowed_locked(const struct iscsi_target *t, const char *initiator);
/* A session stops using @t (frees a removed target with its last session). */
void iscsi_target_put_locked(struct iscsi_target *t);

/* ---- Transmit ----------------------------------------------------------------------------- */
struct iscsi_tx {
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	const uint8_t *data;                  /* contiguous data segment, or NULL: diov */
	struct iovec diov[ISCSI_TX_DATA_IOV]; /* the data segment's pieces */
	int diovcnt;
	uint32_t dlen;
	uint8_t trailer[3 + ISCSI_DIGEST_LEN]; /* padding + data digest */
	uint32_t hlen, tlen;		/* header and trailer bytes on the wire */
	uint8_t inline_data[ISCSI_BHS_LEN]; /* small data segments (Reject) */
	void (*sent)(struct iscsi_conn *c, struct iscsi_tx *tx);
	void *owner;
	bool queued;
	TAILQ_ENTRY(iscsi_tx) link;
};

/* Header digest, padding and data digest of @tx (BHS written, data or diov and dlen set):
 * the data digest is computed over every piece of the data segment. */
void iscsi_tx_finish(struct iscsi_tx *tx, bool hdigest, bool ddigest);

/* ---- Data-In PDU layout (iscsi_datain_pdu.c: no connection, no socket) ----------------- */
/*
 * The Data-In sequence of one task: its data (a list of pieces as the NVMe commands left
 * them, crossing reactor chunks freely) cut into PDUs of at most the initiator's
 * MaxRecvDataSegmentLength, with the F bit at the end of every MaxBurstLength burst and on
 * the last PDU, DataSN counting from 0, and the status (with residual) on the last PDU
 * when it is collapsed there (RFC 7143 sections 11.7 and 4.2.2.3).
 */
struct iscsi_din {
	/* set before the first PDU */
	const struct iovec *iov;
	int iovcnt;
	uint32_t len; /* bytes to send (<= the pieces' total) */
	uint32_t mrdsl, max_burst;
	const uint8_t *lun_raw; /* 8 bytes */
	uint32_t itt;
	bool collapse;             /* status rides on the last PDU */
	uint8_t status, res_flags; /* res_flags: ISCSI_RSP_OVERFLOW/UNDERFLOW */
	uint32_t residual;
	/* progress */
	uint32_t off; /* buffer offset of the next PDU */
	uint32_t datasn;
	int idx;   /* piece holding byte @off */
	size_t in; /* and where in it */
};

void iscsi_din_init(struct iscsi_din *d);
/* Build the next PDU into @tx: its BHS (all but StatSN/ExpCmdSN/MaxCmdSN) and data pieces.
 * Returns true when it is the last of the sequence. */
bool iscsi_din_build(struct iscsi_din *d, struct iscsi_tx *tx);
static inline bool iscsi_din_done(const struct iscsi_din *d)
{
	return d->off >= d->len;
}

/* ---- SCSI tasks --------------------------------------------------------------------------- */
enum iscsi_task_state {
	TASK_FREE,		/* on the free list */
	TASK_NEED_BUFFER,	/* waiting for a reactor buffer */
	TASK_DATA_OUT,		/* receiving immediate/unsolicited/solicited data */
	TASK_EXECUTING,		/* NVMe commands running through the executor */
	TASK_DATA_IN,		/* sending Data-In PDUs */
	TASK_RESPONSE,		/* SCSI Response queued */
	TASK_NSTATES,
};

struct iscsi_task {
	struct nvmf_req req[2];		/* [1]: second command of a fused pair */
	struct iscsi_conn *conn;
	enum iscsi_task_state state;
	unsigned int idx;
	bool immediate;			/* came with the I bit (does not hold a CmdSN slot) */
	bool aborted;			/* TMF: finish silently */
	bool nvme_busy;			/* an NVMe command is owned by the executor */
	uint8_t nvme_pending;		/* commands of a fused pair still out */
	struct stats_xlate_io xio;      /* SCSI-side cost, when this command is sampled */
	uint32_t itt;
	uint32_t cmdsn;
	uint64_t lun;
	uint8_t lun_raw[8];		/* as received, echoed in Data-In/R2T */
	int lun_idx;			/* index in the session's LU table, -1: none */
	bool on_list;			/* on c->pending (not started) or c->active */
	bool started;			/* its turn in CmdSN order came */
	bool ready;                     /* immediate data received */
	bool data_err;			/* a DataSN sequence error: fail after the data */
	bool cap_wait;                  /* NEED_BUFFER: over the connection's share */
	uint8_t cdb[SCSI_CDB_MAX];
	uint8_t flags;			/* R/W bits of the command */
	uint32_t edtl;

	struct scsi_plan plan;
	uint8_t *bufs[ISCSI_TASK_BUFS];	/* reactor chunks holding the data, in order */
	unsigned int nbufs;
	uint8_t *buf;			/* bufs[0]: immediate replies, scratch in its upper half */
	uint32_t buf_len;		/* data area bytes */
	uint8_t *scratch;
	uint32_t scratch_len;

	/* Data-Out */
	uint32_t out_len;		/* bytes of data-out we take (<= EDTL, <= xfer_len) */
	uint32_t out_got;		/* bytes received in order so far */
	uint32_t out_unsol_end;		/* end of the unsolicited burst */
	bool out_unsol_done;		/* F bit of the unsolicited burst seen (or none) */
	uint32_t r2t_off, r2t_len;	/* outstanding R2T (one at a time) */
	bool r2t_out;
	uint32_t ttt;
	uint32_t r2tsn;
	uint32_t exp_datasn;
	ev_tstamp dout_since; /* waiting for Data-Out since (R2T sent, or last PDU) */

	/* Data-In and response */
	uint32_t in_len;		/* bytes we send (<= EDTL) */
	uint32_t datasn;                /* Data-In PDUs sent (ExpDataSN of the response) */
	struct iovec in_iov[ISCSI_TASK_IN_IOV]; /* the data read, as the executor left it */
	int in_iovcnt;
	uint32_t in_iov_len;       /* bytes in_iov describes */
	bool in_iov_lost;          /* more pieces than in_iov holds: use the chunks */
	bool in_iov_reads;         /* in_iov holds what the reads left (else: the chunks) */
	uint32_t in_iov_mapped;    /* bit i: in_iov[i] is namespace memory, not a chunk */
	struct nvmf_ns *mapped_ns; /* the namespace those pieces live in */
	unsigned int nmapped;      /* references to it the task holds (one a mapped read) */
	struct iscsi_din din;
	struct iscsi_tx din_tx[ISCSI_DATAIN_PDUS];
	uint32_t residual;
	uint8_t res_flags;		/* ISCSI_RSP_OVERFLOW/UNDERFLOW */
	uint8_t sense[2 + SCSI_SENSE_MAX];

	bool in_step;			/* NVMe step loop running (keeps the stack flat) */
	bool step_again;
	struct iscsi_tx tx;
	struct reactor_work buf_work;
	TAILQ_ENTRY(iscsi_task) link;	/* free list, or the connection's active list */
};

TAILQ_HEAD(iscsi_task_list, iscsi_task);

/* ---- Session's view of one logical unit ------------------------------------------------- */
struct iscsi_lu {
	struct scsi_lu info;
	uint64_t lun;
	bool ready;
};

/* ---- Liveness and shares: pure logic (iscsi_limits.c, unit-tested) ---------------------- */
/* NOP-In pings (RFC 7143 11.18/11.19): after @interval of silence a NOP-In with a Target
 * Transfer Tag; the initiator must answer it with a NOP-Out (that TTT) within @timeout. */
struct iscsi_ping {
	uint32_t quiet_ms; /* since anything was last received */
	bool out;          /* a ping waits for its answer */
	uint32_t out_ms;   /* for this long */
	uint32_t ttt;      /* its Target Transfer Tag */
};
enum iscsi_ping_action { ISCSI_PING_NONE, ISCSI_PING_SEND, ISCSI_PING_EXPIRED };
/* One tick of @elapsed ms; @heard: a PDU came in since the last one. */
enum iscsi_ping_action iscsi_ping_tick(struct iscsi_ping *p, bool heard, uint32_t elapsed,
				       uint32_t interval, uint32_t timeout);
/* The NOP-Out answering a ping with @ttt came in: true if it was ours. */
bool iscsi_ping_answered(struct iscsi_ping *p, uint32_t ttt);
/*
 * The share of a reactor's pool of @limit chunks one session may hold: 1/ISCSI_POOL_SHARE,
 * and the sessions of its initiator on that reactor (@sessions_here, itself included)
 * split 1/ISCSI_INITIATOR_SHARE between them; never under two whole commands and one
 * (@task_bufs each), so every session can always make progress.
 */
unsigned int iscsi_buf_cap(unsigned int limit, unsigned int sessions_here, unsigned int task_bufs);
/* Has a wait for Data-Out begun at @since run past @timeout_ms at @now (seconds)? */
bool iscsi_dataout_late(ev_tstamp since, ev_tstamp now, uint32_t timeout_ms);

/* ---- Task slots (iscsi_task_pool.c): grown on demand, trimmed when idle ----------------- */
/* Set up an empty table of @max slots. 0 or -ENOMEM. */
int iscsi_task_pool_init(struct iscsi_conn *c, unsigned int max);
/* A free task: from the free list, else a new slot (NULL at task_max or out of memory). */
struct iscsi_task *iscsi_task_pool_get(struct iscsi_conn *c);
/* Free every slot on the free list beyond @keep; returns how many went. */
unsigned int iscsi_task_pool_trim(struct iscsi_conn *c, unsigned int keep);
void iscsi_task_pool_fini(struct iscsi_conn *c);
/* The task whose NVMe request @req is (by its command identifier), or NULL. */
struct iscsi_task *iscsi_task_of_req(struct iscsi_conn *c, const struct nvmf_req *req);

/* ---- Connections (= sessions) --------------------------------------------------------- */
enum iscsi_rx_state {
	RX_BHS,		/* reading the basic header segment */
	RX_AHS,		/* additional header segments and header digest */
	RX_DATA,	/* data segment, padding and data digest */
	RX_WAIT,	/* paused: no task/buffer/control PDU available */
	RX_STOPPED,	/* logout accepted or connection closing */
};

enum iscsi_conn_state {
	CONN_LOGIN,	/* login phase */
	CONN_FULL,	/* full feature phase */
	CONN_LOGGED_OUT, /* logout response queued: close once sent */
	CONN_CLOSING,	/* tearing down: waiting for NVMe commands to drain */
};

enum iscsi_login_step { LOGIN_SECURITY, LOGIN_CHAP_A, LOGIN_CHAP_R, LOGIN_OPERATIONAL };

struct iscsi_conn {
	struct nvmf_qpair qp;		/* the local controller's I/O queue (normal sessions) */
	struct reactor *r;
	struct ev_loop *loop;
	int fd;
	ev_io rio, wio;
	char peer[64];
	char local_addr[64], local_port[16];
	char advertise[256];		/* the portal's advertised address, if any */
	enum iscsi_conn_state state;
	bool qp_initialized;		/* nvmf_qpair_init() done */
	bool ctrl_connected;		/* nvmf_local_connect() succeeded */
	struct nvmf_subsys *subsys;	/* of the target's LUNs */
	struct nvmf_req *admin_req;	/* Identify in progress */
	bool admin_done;
	unsigned int nvme_out;		/* NVMe commands owned by the executor */

	/* Session */
	bool discovery;
	char initiator[ISCSI_NAME_BUF];
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	struct iscsi_target *target;
	bool connecting;                /* counted in g_iscsi.nconnecting */
	ev_timer login_timer;           /* accept to full feature phase (opts.login_timeout_ms) */
	uint32_t auth_gen;              /* iscsi_auth.gen the session authenticated against */
	bool chap_used;                 /* it proved a CHAP secret */
	bool chap_mutual_done;          /* and we proved ours */
	const char *revoke_why;         /* set (under the lock) when a reload ends it */
	struct iscsi_params params;	/* negotiated */
	bool hdigest, ddigest;		/* CRC32C digests in effect (full feature phase) */
	uint8_t hostid[16];
	struct iscsi_lu *lus;		/* target's LUNs, by map index */
	unsigned int nlus;
	uint64_t *lun_list;
	struct scsi_port port;

	/* Sequence numbers */
	uint32_t exp_cmdsn, max_cmdsn;
	uint32_t statsn;
	uint32_t next_ttt;

	/* Login */
	enum iscsi_login_step login_step;
	uint8_t csg;
	bool login_first;		/* first login request not seen yet */
	bool auth_done;
	uint32_t login_itt;
	uint8_t chap_alg;
	uint8_t chap_id;
	uint8_t chap_challenge[32];
	uint32_t chap_challenge_len;
	char *text_in;			/* accumulated login/text request data */
	uint32_t text_in_len;
	char *text_out;			/* response data (text continuation) */
	uint32_t text_out_len, text_out_off;
	uint32_t text_ttt;

	/* Receive */
	enum iscsi_rx_state rx_state;
	uint8_t rx_hdr[ISCSI_BHS_LEN + ISCSI_AHS_MAX + ISCSI_DIGEST_LEN];
	uint32_t rx_have;		/* bytes of the current header/data stage */
	uint32_t rx_need;
	uint32_t rx_dlen;		/* data segment length of the PDU */
	bool rx_big;                    /* rx_dlen >= ISCSI_RX_BIG: read headers alone */
	uint32_t rx_calls;              /* receive calls in this turn of rx_process() */
	uint8_t *rx_dst;		/* where the data segment goes (NULL: discard) */
	uint32_t rx_crc;		/* running data digest */
	uint8_t rx_trailer[3 + ISCSI_DIGEST_LEN];
	struct iscsi_task *rx_task;	/* task receiving the data segment */
	uint8_t *rx_data;		/* login/text/NOP ping data (reactor chunk) */
	uint8_t *rx_stage;
	uint32_t rx_stage_off, rx_stage_len;
	bool rx_drained;                /* the socket had no more at the last read */
	struct reactor_work rx_work;	/* resume after RX_WAIT (deferred) */
	struct reactor_work rx_buf_work; /* resume after RX_WAIT (a buffer came back) */

	/* Transmit */
	TAILQ_HEAD(, iscsi_tx) txq;
	uint32_t tx_off;		/* bytes of the head PDU already sent */
	bool tx_blocked;		/* waiting for POLLOUT */
	struct reactor_work flush_work;
	struct iscsi_tx ctl[ISCSI_CTL_PDUS];
	TAILQ_HEAD(, iscsi_tx) ctl_free;
	uint8_t *nop_data;		/* echoed NOP-Out ping data (reactor chunk) */
	bool nop_busy;			/* nop_data is being sent */

	/* Tasks: slots allocated as the initiator uses them, up to task_max */
	struct iscsi_task **task_tab; /* by task index (NULL: not allocated) */
	unsigned int task_max;        /* queue depth + immediate slots */
	unsigned int ntasks;          /* allocated */
	struct iscsi_task_list free_tasks;
	struct iscsi_task_list active;
	struct iscsi_task_list pending;	/* received, waiting for their turn in CmdSN order */
	unsigned int free_immediate;	/* immediate slots left */
	unsigned int bufs_held;         /* reactor chunks held by its tasks */
	unsigned int pool_limit;        /* chunks of its reactor's pool (0: not read yet) */
	unsigned int cap_waiting;       /* tasks in NEED_BUFFER waiting for that share */

	/* TMF waiting for aborted tasks to drain */
	bool tmf_pending;
	uint32_t tmf_itt;
	uint8_t tmf_response;
	bool tmf_close_after;

	/* Liveness (iscsi_watch.c), full feature phase */
	ev_timer tick;                           /* every ISCSI_TICK_MS */
	bool rx_seen;                            /* a PDU came in since the last tick */
	bool rx_paused;                          /* the read watcher is stopped (backpressure) */
	struct iscsi_ping ping;                  /* NOP-In ping state */
	unsigned int idle_ticks;                 /* ticks without a task in use */
	struct iscsi_initiator *initiator_share; /* normal sessions: counted there */

	struct reactor_work fini_work;
	TAILQ_ENTRY(iscsi_conn) link;
};

static inline struct iscsi_conn *iscsi_conn_of(struct nvmf_qpair *qp)
{
	return container_of(qp, struct iscsi_conn, qp);
}

/* ---- iscsi_conn.c --------------------------------------------------------------------- */
void iscsi_conn_start(void *arg);	/* reactor_send_msg() target after accept */
struct iscsi_conn *iscsi_conn_create(int fd, const char *peer);
void iscsi_conn_close(struct iscsi_conn *c, const char *why);
void iscsi_tx_queue(struct iscsi_conn *c, struct iscsi_tx *tx);
/* Fill header digest/trailer of @tx (hdr BHS written, data/dlen set) and queue it. */
void iscsi_tx_send(struct iscsi_conn *c, struct iscsi_tx *tx);
struct iscsi_tx *iscsi_ctl_get(struct iscsi_conn *c);
void iscsi_rx_resume(struct iscsi_conn *c);
/* StatSN/ExpCmdSN/MaxCmdSN at offsets 24/28/32 of a target PDU; advances StatSN if @adv. */
void iscsi_put_sn(struct iscsi_conn *c, uint8_t *bhs, bool adv);
void iscsi_send_reject(struct iscsi_conn *c, uint8_t reason, const uint8_t *bhs);
/* Send what is queued with one non-blocking flush (never waiting for the initiator to
 * read), then close. */
void iscsi_conn_close_flushed(struct iscsi_conn *c, const char *why);
/* The login phase ended (full feature phase): out of the connecting count. */
void iscsi_conn_established(struct iscsi_conn *c);
/* The executor handed back a command of @c: a closing connection may now be freed. */
void iscsi_conn_nvme_returned(struct iscsi_conn *c);
/* The receive side stops (backpressure) or resumes reading the socket. */
void iscsi_conn_rx_pause(struct iscsi_conn *c);

/* ---- iscsi_watch.c: liveness of full feature sessions ----------------------------------- */
/* Start the tick (entering the full feature phase) / stop it (closing). */
void iscsi_watch_start(struct iscsi_conn *c);
void iscsi_watch_stop(struct iscsi_conn *c);
/* A NOP-Out with a TTT (not 0xffffffff) came in: the answer to our ping? */
void iscsi_watch_nop_answer(struct iscsi_conn *c, uint32_t ttt);
/* Count a normal session against its initiator (at login, before the session starts):
 * 0, or -EUSERS over max_sessions_per_initiator, -ENOMEM. */
int iscsi_initiator_join(struct iscsi_conn *c);
/* On the session's reactor (iscsi_buf_cap() counts it there from the join on): the
 * session no longer counts. */
void iscsi_initiator_leave(struct iscsi_conn *c);

/* ---- iscsi_login.c ------------------------------------------------------------------- */
/* A Login Request PDU with its data (in c->rx_data). Returns 0 or -errno (close). */
int iscsi_login_rx(struct iscsi_conn *c, const uint8_t *bhs, uint8_t *data, uint32_t dlen);
int iscsi_text_rx(struct iscsi_conn *c, const uint8_t *bhs, uint8_t *data, uint32_t dlen);
void iscsi_login_fini(struct iscsi_conn *c);
/* MaxRecvDataSegmentLength we declare (and the largest data segment we accept). */
uint32_t iscsi_target_mrdsl(void);

/* ---- iscsi_chap.c ---------------------------------------------------------------------- */
/* CHAP_A values (IANA PPP authentication algorithms, as Linux and open-iscsi use them) */
#define ISCSI_CHAP_MD5 5
#define ISCSI_CHAP_SHA1          6
#define ISCSI_CHAP_SHA256 7
#define ISCSI_CHAP_SHA3_256      8
#define ISCSI_CHAP_DIGEST_MAX    32
#define ISCSI_CHAP_CHALLENGE_MIN 16 /* bytes we accept in an initiator's CHAP_C */
#define ISCSI_CHAP_CHALLENGE_MAX 1024
/* The digests allowed unless iscsi.options.chap_algs says otherwise: MD5 and SHA-1 only
 * when configured. A bit (1 << CHAP_A value) per digest. */
#define ISCSI_CHAP_ALGS_DEFAULT ((1u << ISCSI_CHAP_SHA3_256) | (1u << ISCSI_CHAP_SHA256))
/* Digest length of @alg, or 0 if unsupported. */
unsigned int iscsi_chap_digest_len(uint8_t alg);
/* "SHA3-256", "SHA256", "SHA1", "MD5" (open-iscsi's chap_algs names); "?" if unknown. */
const char *iscsi_chap_alg_name(uint8_t alg);
/* The CHAP_A value of a name (also "SHA-256", "SHA-1"; any case), or -EINVAL. */
int iscsi_chap_alg_parse(const char *name);
/* response = H(id || secret || challenge); returns 0 or -EINVAL. */
int iscsi_chap_response(uint8_t alg, uint8_t id, const char *secret, const uint8_t *challenge,
			size_t clen, uint8_t *out);
int iscsi_chap_random(uint8_t *buf, size_t len);
/* The strongest digest of the CHAP_A list @chap_a that @allowed (bit mask) has, or 0;
 * *@offered (if not NULL) gets the mask of the known digests the list named. */
uint8_t iscsi_chap_choose(const char *chap_a, uint32_t allowed, uint32_t *offered);
/* Does CHAP_R text @chap_r answer our challenge with @secret? 0, -EACCES, -EINVAL. */
int iscsi_chap_check(uint8_t alg, uint8_t id, const char *secret, const uint8_t *challenge,
		     size_t clen, const char *chap_r);
/* Mutual CHAP: the CHAP_R (hex text into @hex) answering the initiator's CHAP_I/CHAP_C
 * with @secret. -EPROTO for a missing or malformed CHAP_I/CHAP_C (or a challenge under
 * ISCSI_CHAP_CHALLENGE_MIN bytes), -EACCES when CHAP_C is our own challenge @ours
 * reflected back. */
int iscsi_chap_answer(uint8_t alg, const char *chap_i, const char *chap_c, const char *secret,
		      const uint8_t *ours, size_t ours_len, char *hex, size_t hexlen);

/* ---- iscsi_session.c ---------------------------------------------------------------------- */
/* Bind a logged-in normal session to its target: LU table, local controller. */
int iscsi_session_start(struct iscsi_conn *c, char *err, size_t errlen);
void iscsi_session_stop(struct iscsi_conn *c);
int iscsi_session_alloc_tasks(struct iscsi_conn *c);
void iscsi_session_free_tasks(struct iscsi_conn *c);
/*
 * End the sessions whose access the configuration no longer grants: their target is
 * gone, their initiator is no longer in its list, or the CHAP secret they proved has
 * changed (also for discovery sessions). Each gets an Async Message (the target drops
 * all connections of the session) and is closed on its reactor. Returns how many.
 */
unsigned int iscsi_sessions_revoke(void);

/* ---- iscsi_task.c --------------------------------------------------------------------------- */
/* A SCSI Command PDU (header parsed, before its data segment). Sets c->rx_dst/rx_task
 * for immediate data. Returns 0 or -errno (close the connection). */
int iscsi_scsi_cmd_rx(struct iscsi_conn *c, const uint8_t *bhs);
/* The data segment of the PDU whose header was last given is complete. */
void iscsi_scsi_cmd_data_done(struct iscsi_conn *c, struct iscsi_task *t);
int iscsi_data_out_rx(struct iscsi_conn *c, const uint8_t *bhs);
void iscsi_data_out_done(struct iscsi_conn *c, struct iscsi_task *t, const uint8_t *bhs);
void iscsi_task_req_complete(struct nvmf_req *req);
/* CmdSN of a non-immediate command: 1 accept now, 0 drop (outside the window). */
int iscsi_cmdsn_check(struct iscsi_conn *c, uint32_t cmdsn, bool immediate);
void iscsi_cmdsn_advance(struct iscsi_conn *c);
void iscsi_window_open(struct iscsi_conn *c, unsigned int n);
void iscsi_task_abort(struct iscsi_task *t);
void iscsi_task_release(struct iscsi_task *t);
/* Let go of the namespace memory the task's Data-In pieces point into (iscsi_task.c). */
void iscsi_task_drop_mapped(struct iscsi_task *t);
void iscsi_task_set_state(struct iscsi_task *t, enum iscsi_task_state s);
/* Describe @len bytes of task data at @off by iovecs (one per chunk crossed). */
int iscsi_task_iov(const struct iscsi_task *t, uint32_t off, uint32_t len, struct iovec *iov,
		   int max);
/* PDUs of @t on the transmit queue. */
unsigned int iscsi_task_tx_queued(const struct iscsi_task *t);
/* The head of the transmit queue, partly sent, is one of @t's. */
bool iscsi_task_tx_on_wire(const struct iscsi_task *t);

static inline struct iscsi_lu *iscsi_task_lu(const struct iscsi_task *t)
{
	return t->lun_idx >= 0 ? &t->conn->lus[t->lun_idx] : NULL;
}

/* Expected lengths in each direction (no bidirectional commands). */
static inline uint32_t iscsi_edtl_out(const struct iscsi_task *t)
{
	return (t->flags & ISCSI_SCSI_CMD_WRITE) ? t->edtl : 0;
}

static inline uint32_t iscsi_edtl_in(const struct iscsi_task *t)
{
	return (t->flags & ISCSI_SCSI_CMD_READ) && !(t->flags & ISCSI_SCSI_CMD_WRITE) ? t->edtl : 0;
}

/* ---- iscsi_datain.c ------------------------------------------------------------------------ */
/* The plan is done: Data-In (status collapsed into the last) or a SCSI Response. */
void iscsi_task_respond(struct iscsi_task *t);
/* Tasks of the connection on @lun (all when @all) are aborted; returns how many were
 * still owned by the executor (the TMF response waits for them). */
unsigned int iscsi_tasks_abort_lun(struct iscsi_conn *c, uint64_t lun, bool all);

/* ---- I_T nexus names (iscsi_target.c) --------------------------------------------------- */
/* Remember which initiator port (name, ISID) a host identifier stands for. */
void iscsi_nexus_register(const uint8_t hostid[16], const char *initiator, const uint8_t isid[6]);
/* TransportID of the initiator port behind @hostid (struct scsi_port.transport_id). */
uint32_t iscsi_transport_id(void *arg, const uint8_t hostid[16], uint8_t *out, uint32_t cap);

/* ---- iscsi_tmf.c ------------------------------------------------------------------------ */
int iscsi_nop_out_rx(struct iscsi_conn *c, const uint8_t *bhs, uint8_t *data, uint32_t dlen);
int iscsi_tmf_rx(struct iscsi_conn *c, const uint8_t *bhs);
int iscsi_logout_rx(struct iscsi_conn *c, const uint8_t *bhs);
/* An aborted task finished draining: maybe send the waiting TMF response. */
void iscsi_tmf_task_gone(struct iscsi_conn *c);

#endif
