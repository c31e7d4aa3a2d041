/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport internals, shared by tcp_transport.c (listeners, accept, ops table),
 * tcp_qpair.c (connection lifetime), tcp_req.c (request state machine, data plan, slots and
 * buffers), tcp_recv.c (PDU receive state machine) and tcp_send.c (batched transmit).
 *
 * Two state machines, kept apart:
 *  - the connection's PDU receive machine (enum tcp_rx_state), driven by bytes arriving;
 *  - each request's life (enum tcp_req_state), driven by PDUs, buffers, the backend and
 *    the send path.
 * Everything here runs on the connection's reactor, except the listener (main thread).
 */
#ifndef NVMEOF_TARGET_TCP_INTERNAL_H
#define NVMEOF_TARGET_TCP_INTERNAL_H

#include <assert.h>
#include <ev.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "common/nvme_tcp_pdu.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "tcp_transport.h"

#define TCP_ADMIN_ICDATA     8192        /* in-capsule data on the admin queue */
#define TCP_RBUF_SIZE        (64 * 1024) /* per-connection receive buffer */
#define TCP_DIRECT_READ_MIN  2048        /* payload left >= this: read straight into place */
#define TCP_DIRECT_TAIL_MIN  (16 * 1024) /* PDU payload >= this: read only the next header */
#define TCP_TX_MAX_IOV       (NVMF_REQ_MAX_IOV + 4)
#define TCP_SENDMSG_IOV      256   /* iovecs gathered per sendmsg */
#define TCP_RECV_BUDGET      16    /* recv calls per read callback */
#define TCP_SEND_BUDGET      8     /* sendmsg calls per flush */
#define TCP_TRIM_INTERVAL_S  2.0   /* idle connections give memory back this often */
#define TCP_TRIM_KEEP        4     /* request slots an idle connection keeps set up */
#define TCP_ZC_RING          128   /* zero-copy sends a connection may have unconfirmed at once */
#define TCP_ZC_POLL_S        0.002 /* error queue read this often while confirmations are due */
#define TCP_ZC_DRAIN_S       5.0   /* after close: how long the kernel may keep the buffers */
#define TCP_ICD_MAX          (64 * 1024) /* largest per-slot data buffer (in-capsule size) */
#define TCP_POOL_QUEUE_SHARE 16          /* a queue holds at most 1/16 of its reactor's pool */
#define TCP_POOL_HOST_SHARE  8           /* a host's queues on a reactor at most 1/8 of its pool */
#define TCP_TICK_S           1.0         /* R2T deadlines and paused queues checked this often */

/* PDU receive state machine (one per connection). */
enum tcp_rx_state {
	TCP_RX_AWAIT_CH,      /* waiting for the 8-byte common header */
	TCP_RX_AWAIT_PSH,     /* waiting for the rest of the header (+ header digest) */
	TCP_RX_AWAIT_PAYLOAD, /* padding, data and data digest of the current PDU */
	TCP_RX_QUIESCING,     /* fatal error or H2CTermReq: reading stopped, flushing */
	TCP_RX_ERROR,         /* socket closed: nothing more is read or sent */
	TCP_RX_NSTATES
};

/* Request state machine (one per request slot). */
enum tcp_req_state {
	TCP_REQ_FREE,              /* on the free list */
	TCP_REQ_NEED_BUFFER,       /* waiting for data buffers from the reactor pool */
	TCP_REQ_TRANSFERRING_H2C,  /* receiving in-capsule data or H2CData (after R2T) */
	TCP_REQ_READY_TO_EXECUTE,  /* all data here, about to enter the core */
	TCP_REQ_EXECUTING,         /* owned by the core/backend until req_complete */
	TCP_REQ_READY_TO_COMPLETE, /* core done; response (and read data) being built */
	TCP_REQ_TRANSFERRING_C2H,  /* C2HData and/or CapsuleResp queued for sending */
	TCP_REQ_COMPLETED,         /* sent: resources about to be released */
	TCP_REQ_NSTATES
};

static_assert(TCP_REQ_NSTATES == NVMF_TCP_REQ_NSTATES, "request states counted in stats");
static_assert(TCP_RX_NSTATES == NVMF_TCP_RX_NSTATES, "receive states counted in stats");

/*
 * Where a command's data comes from, decided once from its capsule (tcp_req_data_plan)
 * and followed by tcp_req_start() once the request holds its buffers.
 */
enum tcp_data_plan {
	TCP_PLAN_FAIL,       /* complete with an NVMe status; in-capsule bytes are dropped */
	TCP_PLAN_NONE,       /* no data moves: execute now */
	TCP_PLAN_IN_CAPSULE, /* write data follows the command in its capsule */
	TCP_PLAN_R2T,        /* write data is asked for with R2T, arrives as H2CData */
	TCP_PLAN_C2H,        /* read: execute, then send the data as C2HData */
};

/* What a command capsule says about its data: the input of tcp_req_data_plan(). */
struct tcp_data_ask {
	enum nvme_data_xfer xfer; /* direction from the opcode */
	uint8_t sgl_type;         /* SGL1 descriptor type and subtype */
	uint64_t sgl_addr;        /* SGL1 address (an offset for in-capsule data) */
	uint32_t sgl_len;         /* SGL1 length */
	uint32_t icdata;          /* data bytes the CapsuleCmd PDU carries */
	uint32_t max_io;          /* largest transfer the target accepts (MDTS) */
};
struct tcp_qpair;
struct tcp_tls;

/*
 * The byte stream under the PDU machines (tcp_sock.c): plain TCP, or TLS 1.3 once a
 * handshake is done (tcp_tls.c). readv()/sendmsg() semantics on a non-blocking socket:
 * bytes (> 0), 0 at the end of the stream, -1 with errno (EAGAIN: later). A read shorter
 * than asked means the stream is drained for now.
 */
struct tcp_sock_ops {
	const char *name;
	ssize_t (*readv)(struct tcp_qpair *tq, const struct iovec *iov, int cnt);
	ssize_t (*writev)(struct tcp_qpair *tq, const struct iovec *iov, int cnt);
	/* Bytes held above the socket that its read watcher would not announce. */
	bool (*pending)(const struct tcp_qpair *tq);
};
extern const struct tcp_sock_ops tcp_sock_plain, tcp_sock_tls;

/* TLS handshake machine (tcp_tls.c), one per connection. */
enum tcp_tls_state {
	TCP_TLS_NONE,      /* plain: not a TLS port, or a plain host where TLS is optional */
	TCP_TLS_DETECT,    /* TLS port: waiting for the first byte (ClientHello or ICReq) */
	TCP_TLS_HANDSHAKE, /* ClientHello seen: handshake steps as the socket allows */
	TCP_TLS_OPEN,      /* PDUs flow inside TLS records */
	TCP_TLS_FAILED,    /* handshake failed: the connection is closing */
	TCP_TLS_NSTATES
};

/* One unit of transmission: iovecs sent in order, then @done runs. */
struct tcp_tx {
	TAILQ_ENTRY(tcp_tx) link; /* tcp_qpair.txq, then tcp_zc.waitq if zc */
	struct iovec iov[TCP_TX_MAX_IOV];
	int iovcnt;
	uint32_t len;
	void (*done)(struct tcp_qpair *tq, struct tcp_tx *tx);
	bool zc;        /* some of its bytes left in a MSG_ZEROCOPY send: @done waits for */
	uint32_t zc_id; /* the kernel's confirmation of this send number (the last of them) */
};

/*
 * Numbers of MSG_ZEROCOPY sends not yet confirmed by the kernel, [head, next) in the
 * socket's own 32-bit counter (each successful zero-copy sendmsg takes the next one),
 * with a bit per number for the confirmations that arrived ahead of head.
 */
struct tcp_zc_ring {
	uint32_t head, next;
	uint64_t bits[TCP_ZC_RING / 64];
};

/* MSG_ZEROCOPY on a plain connection (tcp_zerocopy.c). */
struct tcp_zc {
	uint32_t min; /* batches with this many bytes of read data go zero-copy; 0: off */
	bool arm;     /* the next plain writev passes MSG_ZEROCOPY */
	bool used;    /* the last one did (false: ENOBUFS, sent by copy) */
	struct tcp_zc_ring ring;
	TAILQ_HEAD(, tcp_tx) waitq; /* sent, @done waiting for the kernel, in send order */
	uint32_t held;              /* requests on waitq: outstanding, but not for the host */
	ev_timer poll;              /* reads the error queue while waitq is not empty */
	int fd;                     /* after close: the socket, kept until the kernel is done */
	bool aborted;               /* ...and reset (its queues dropped) */
	ev_tstamp drain_start;
};

struct tcp_req {
	struct nvmf_req req; /* embedded: the core sees only this */
	struct tcp_qpair *tq;
	enum tcp_req_state state;
	uint16_t ttag;           /* slot index, echoed in H2CData */
	uint16_t cid;            /* host byte order */
	bool cid_owned;          /* holds its CID bit (false for a duplicate CID) */
	enum tcp_data_plan plan; /* where its data comes from */
	bool ddgst_err;          /* a data digest mismatch: fail, don't execute */
	uint16_t err_status;     /* NVMe status found by the transport (0 = none) */
	uint32_t h2c_next;       /* next expected H2C data offset */
	uint32_t r2t_end;        /* end of the window the last R2T asked for */
	uint32_t c2h_len;        /* bytes of read data being sent */
	int nbufs;
	void *bufs[NVMF_REQ_MAX_IOV];
	struct tcp_tx tx;
	TAILQ_ENTRY(tcp_req) link; /* free list or buffer wait list */
	uint8_t ddgst[NVME_TCP_DIGEST_LEN];
	uint8_t rsp_hdr[sizeof(struct nvme_tcp_rsp) + NVME_TCP_DIGEST_LEN];
	/* C2HData or R2T header; up to 128 bytes with the alignment the host asked for */
	uint8_t pdu_hdr[NVME_TCP_PSH_MAX];
	bool r2t_queued; /* its R2T (in tx) is queued and not yet sent */
	/* Aborted while the host still owed H2CData for an R2T it had seen: the slot
	 * (its TTAG) stays off the free list, FREE, until [h2c_next, r2t_end) has arrived
	 * and been discarded. */
	bool h2c_drain;
	bool icd;         /* its data is in its slot's own buffer (tcp_qpair.icd), not the pool */
	ev_tstamp r2t_at; /* when its last R2T was queued (the H2CData deadline runs from it) */
};

/* Per-reactor transport state: the reactor's connections and their summed counters. */
struct tcp_reactor {
	struct reactor *r;
	TAILQ_HEAD(, tcp_qpair) conns;
	unsigned int nconns;
	struct nvmf_tcp_conn_stats stats; /* written by this reactor only, read anywhere */
	ev_timer trim;                    /* tcp_qpair_trim() of the idle connections */
	ev_timer tick;                    /* tcp_tick_cb(): R2T deadlines, paused queues */
	/* queues whose next request waits for its own queue's or host's share of the pool:
	 * tried again when a queue on this reactor gives buffers back */
	TAILQ_HEAD(, tcp_qpair) share_waitq;
	struct reactor_work share_work;
};

struct tcp_qpair {
	struct nvmf_qpair qp; /* embedded: the core sees only this */
	struct tcp_reactor *tr;
	struct reactor *r;
	struct ev_loop *loop;
	int fd;
	ev_io rio, wio;
	bool rio_on, wio_on;

	/* receive machine */
	enum tcp_rx_state rx_state;
	bool ic_done;
	bool rx_paused; /* waiting for a request slot or a buffer */
	struct nvme_tcp_params p;
	uint32_t maxr2t; /* R2Ts the host allows outstanding per command */
	uint8_t *rbuf;
	uint32_t rpos, rend; /* unread bytes are rbuf[rpos..rend) */
	union {
		struct nvme_tcp_common_hdr ch;
		struct nvme_tcp_icreq icreq;
		struct nvme_tcp_cmd cmd;
		struct nvme_tcp_data_hdr data;
		struct nvme_tcp_term_req term;
		uint8_t raw[NVME_TCP_PSH_MAX];
	} hdr;             /* current PDU header, copied out of rbuf */
	uint32_t hdr_have; /* valid bytes in hdr (for a TermReq's copy) */
	uint32_t psh_len;
	uint32_t pad_left; /* payload phase: bytes still to consume */
	uint32_t data_left;
	uint32_t ddgst_left;
	uint8_t rx_ddgst[NVME_TCP_DIGEST_LEN];
	struct tcp_req *rx_req;      /* owner of the payload (NULL: discard) */
	bool rx_discard;             /* consume the data without storing it */
	uint32_t rx_datao, rx_datal; /* payload range in rx_req's data */
	bool rx_big;                 /* the last PDU header announced >= TCP_DIRECT_TAIL_MIN */
	int rx_iov_idx;              /* cursor into rx_req->req.iov */
	size_t rx_iov_off;

	/* requests */
	struct tcp_req *reqs;
	uint32_t nreqs;
	uint32_t outstanding; /* slots not FREE */
	TAILQ_HEAD(, tcp_req) free_reqs;
	TAILQ_HEAD(, tcp_req) buf_waitq;
	struct reactor_work buf_work;
	/* Its share of the reactor's data pool (tcp_req_get_buffers): chunks held by this
	 * queue, and the caps of the queue and of its host on this reactor. */
	uint32_t bufs_held;
	uint32_t queue_cap, host_cap;
	bool share_waiting; /* on tr->share_waitq */
	TAILQ_ENTRY(tcp_qpair) share_link;
	uint8_t *icd; /* per slot, icd_size bytes of its own, in mem */
	uint32_t icd_size;
	bool icd_dirty;  /* a slot buffer was used since the last trim */
	uint32_t parked; /* FREE slots kept back for an aborted write's data */
	struct reactor_work resume_work;
	uint64_t *cid_bits; /* 65536-bit set of CIDs in flight */

	/* send path */
	TAILQ_HEAD(, tcp_tx) txq;
	uint32_t tx_off; /* bytes of the first item already sent */
	struct reactor_work flush_work;
	struct tcp_tx ic_tx;   /* ICResp */
	struct tcp_tx term_tx; /* C2HTermReq */
	uint8_t ic_buf[sizeof(struct nvme_tcp_icresp)];
	uint8_t term_buf[NVME_TCP_TERM_REQ_PLEN_MAX];
	bool close_after_flush; /* a C2HTermReq is queued: close once it is out */
	bool connected_seen;    /* per-queue limits applied after Connect */

	/* teardown */
	bool closing;
	bool freed;
	struct reactor_work fini_work;
	ev_timer linger;
	ev_timer connect_timer; /* ICReq + Connect deadline (opts.connect_timeout_ms) */

	struct nvmf_tcp_conn_stats stats;
	TAILQ_ENTRY(tcp_qpair) link; /* tcp_reactor.conns */
	/* Slots [0, nreqs_ready) are set up, one more each time a command finds none free,
	 * up to nreqs_limit (an admin queue's worth until Connect names an I/O queue): a
	 * queue touches only as many slots as it has had commands in flight at once, and an
	 * idle one gives all but TCP_TRIM_KEEP back (tcp_qpair_trim). */
	uint32_t nreqs_ready;
	uint32_t nreqs_limit;
	/* rbuf, cid_bits and reqs in one anonymous mapping: pages never touched cost nothing,
	 * and idle ones are returned with madvise */
	uint8_t *mem;
	size_t mem_len;
	bool rx_since_trim; /* bytes arrived since the last trim tick */

	/* the byte stream (tcp_sock.c) and, on TLS ports, its TLS session (tcp_tls.c) */
	const struct tcp_sock_ops *sock;
	struct tcp_tls *tls; /* NULL on a plain connection */
	enum tcp_tls_state tls_state;
	struct tcp_zc zc;
};

/* Count on the connection and on its reactor (plain stores: one writer per counter). */
#define TCP_STAT_ADD(tq, field, n)                                                    \
	do {                                                                          \
		uint64_t n__ = (n);                                                   \
		(tq)->stats.field += n__;                                             \
		__atomic_store_n(&(tq)->tr->stats.field, (tq)->tr->stats.field + n__, \
				 __ATOMIC_RELAXED);                                   \
	} while (0)

static inline struct tcp_qpair *tcp_qpair_of(struct nvmf_qpair *qp)
{
	return container_of(qp, struct tcp_qpair, qp);
}

static inline struct tcp_req *tcp_req_of(struct nvmf_req *req)
{
	return container_of(req, struct tcp_req, req);
}

/* tcp_transport.c */
struct tcp_reactor *tcp_reactor_get(struct reactor *r);
uint32_t tcp_maxh2cdata(const struct nvmf_tgt *tgt);
uint32_t tcp_io_icdata(const struct nvmf_qpair *qp);
void tcp_conn_new(void);
bool tcp_conn_established(const struct nvmf_tgt *tgt);
void tcp_conn_timed_out(void);
void tcp_conn_gone_stats(const struct nvmf_tcp_conn_stats *st, bool fatal, bool established);

/* tcp_qpair.c */
struct tcp_qpair *tcp_qpair_create(int fd, struct nvmf_tgt *tgt, struct nvmf_port *port,
				   const char *peer);
void tcp_qpair_start(void *arg); /* reactor message: bind and start reading */
void tcp_qpair_close(struct tcp_qpair *tq, const char *why);
void tcp_qpair_linger(struct tcp_qpair *tq);
void tcp_qpair_disconnect(struct nvmf_qpair *qp);
void tcp_qpair_check_done(struct tcp_qpair *tq);
void tcp_qpair_trim(struct tcp_qpair *tq);
void tcp_trim_cb(struct ev_loop *loop, ev_timer *w, int revents); /* tcp_reactor.trim */
bool tcp_qpair_r2t_check(struct tcp_qpair *tq, ev_tstamp now);    /* true: terminated */
void tcp_tick_cb(struct ev_loop *loop, ev_timer *w, int revents); /* tcp_reactor.tick */

/* tcp_req.c: the request state machine. Every transition goes through
 * tcp_req_set_state(), which counts entries per state and, without NDEBUG, asserts that
 * tcp_req_transition_ok(); release builds log an illegal one and carry on. */
bool tcp_req_transition_ok(enum tcp_req_state from, enum tcp_req_state to);
void tcp_req_set_state(struct tcp_req *tr, enum tcp_req_state s);
const char *tcp_req_state_name(enum tcp_req_state s);
enum tcp_data_plan tcp_req_data_plan(const struct tcp_data_ask *a, uint32_t *length,
				     uint16_t *status);
void tcp_req_start(struct tcp_req *tr);
void tcp_req_slots_add(struct tcp_qpair *tq, uint32_t upto);
struct tcp_req *tcp_req_get(struct tcp_qpair *tq);
void tcp_req_release(struct tcp_req *tr);
int tcp_req_get_buffers(struct tcp_req *tr);
void tcp_req_wait_buffers(struct tcp_req *tr, int why); /* why: get_buffers' rc, or 0 */
void tcp_req_buf_ready(void *arg);                      /* reactor work: pool has buffers again */
void tcp_req_share_ready(void *arg); /* reactor work (tcp_reactor): shares freed up */
void tcp_req_share_caps(struct tcp_qpair *tq, uint32_t pool_limit, size_t chunk, uint32_t max_io);
bool tcp_req_icd_fits(const struct tcp_qpair *tq, const struct tcp_req *tr);
bool tcp_req_r2t_late(const struct tcp_req *tr, ev_tstamp now, ev_tstamp limit);
void tcp_req_execute(struct tcp_req *tr);
bool tcp_req_abort(struct nvmf_qpair *qp, uint16_t cid); /* ops->req_abort */
void tcp_req_drained(struct tcp_req *tr); /* an aborted request's late data is all in */

/* tcp_recv.c: the PDU receive machine, with the same kind of transition helper. */
bool tcp_rx_transition_ok(enum tcp_rx_state from, enum tcp_rx_state to);
void tcp_rx_set_state(struct tcp_qpair *tq, enum tcp_rx_state s);
const char *tcp_rx_state_name(enum tcp_rx_state s);
void tcp_read_cb(struct ev_loop *loop, ev_io *w, int revents);
void tcp_rx_resume(void *arg);
void tcp_fatal(struct tcp_qpair *tq, uint16_t fes, uint32_t fei);
void tcp_r2t_expired(struct tcp_qpair *tq, const struct tcp_req *tr, ev_tstamp waited);
void tcp_h2c_data_done(struct tcp_req *tr);

/* tcp_send.c */
void tcp_tx_queue(struct tcp_qpair *tq, struct tcp_tx *tx);
void tcp_flush(void *arg); /* reactor work: send what is queued */
void tcp_write_cb(struct ev_loop *loop, ev_io *w, int revents);
void tcp_send_r2t(struct tcp_req *tr);
void tcp_send_icresp(struct tcp_qpair *tq);
void tcp_send_term_req(struct tcp_qpair *tq, uint16_t fes, uint32_t fei, const void *hdr,
		       size_t hdr_len);
void tcp_req_complete(struct nvmf_req *req);
void tcp_tx_drop_all(struct tcp_qpair *tq);

/* tcp_tls.c: TLS ports. Every handshake-state change goes through tcp_tls_set_state(). */
bool tcp_tls_transition_ok(enum tcp_tls_state from, enum tcp_tls_state to);
void tcp_tls_set_state(struct tcp_qpair *tq, enum tcp_tls_state s);
const char *tcp_tls_state_name(enum tcp_tls_state s);
int tcp_tls_port_init(const struct nvmf_port *port);    /* at listen: the TLS context */
void tcp_tls_begin(struct tcp_qpair *tq);               /* TLS port: detect, then handshake */
bool tcp_tls_plain_refused(const struct tcp_qpair *tq); /* plain ICReq where TLS is required */
void tcp_tls_free(struct tcp_qpair *tq);
bool tcp_tls_connect_allowed(const struct nvmf_qpair *qp, const char *hostnqn,
			     const char *subnqn);         /* ops->connect_allowed */
const char *tcp_tls_describe(const struct tcp_qpair *tq); /* "", or " over TLS 1.3 ..." */

/* tcp_zerocopy.c: MSG_ZEROCOPY sends and their confirmations. */
bool tcp_zc_ring_full(const struct tcp_zc_ring *r);
uint32_t tcp_zc_ring_push(struct tcp_zc_ring *r);
uint32_t tcp_zc_ring_confirm(struct tcp_zc_ring *r, uint32_t lo, uint32_t hi);
bool tcp_zc_ring_passed(const struct tcp_zc_ring *r, uint32_t id);
void tcp_zc_init(struct tcp_qpair *tq);                          /* at start: SO_ZEROCOPY or off */
bool tcp_zc_arm(struct tcp_qpair *tq, size_t data_bytes);        /* before a send */
bool tcp_zc_sent(struct tcp_qpair *tq, ssize_t n, uint32_t *id); /* after one: zero-copy, its id */
void tcp_zc_hold(struct tcp_qpair *tq, struct tcp_tx *tx);       /* sent: done when confirmed */
void tcp_zc_reap(struct tcp_qpair *tq);                          /* read the error queue */
void tcp_zc_close(struct tcp_qpair *tq);                         /* keep the socket if still due */

/* iovec helpers (tcp_send.c) */
uint32_t tcp_iov_crc(const struct iovec *iov, int iovcnt, size_t off, size_t len);
int tcp_iov_slice(struct iovec *dst, int max, const struct iovec *src, int srccnt, size_t off,
		  size_t len);

#endif
