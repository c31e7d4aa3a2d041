/* SPDX-License-Identifier: MIT */
/*
 * NVMe controller objects and the core-internal interfaces between the command handlers
 * (fabrics.c, admin.c, log_page.c, features.c, io.c, discovery.c) and the controller's
 * parts: lifecycle (ctrlr.c), queue table (qpair.c), properties (property.c), Keep Alive
 * (keep_alive.c), asynchronous events (aen.c), error log and statistics (error_log.c,
 * ctrlr_stats.c), requests (request.c) and dispatch (dispatch.c). Not used outside the
 * target core.
 *
 * Lock order: tgt->lock, then subsys->lock, then ctrlr->lock, then ctrlr->err_lock.
 */
#ifndef NVMEOF_TARGET_CTRLR_H
#define NVMEOF_TARGET_CTRLR_H

#include <ev.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/nvme_auth_spec.h"
#include "nvmf.h"
#include "reactor/reactor.h"
#include "reservation.h"

struct dhchap_host_conf;

#define NVMF_ERRLOG_ENTRIES 64	     /* ELPE + 1 */
#define NVMF_KAS_MS 100		     /* Keep Alive granularity (KAS = 1) */
#define NVMF_KATO_MAX_MS    3600000u         /* longest KATO granted: one hour */
#define NVMF_DISC_KATO_MS 120000     /* discovery controller connected with KATO 0 */
#define NVMF_CAP_TO 15		     /* CAP.TO in 500 ms units: 7.5 s */
#define NVMF_TEMP_KELVIN 0x0141	     /* reported composite temperature, 48 C */
#define NVMF_TEMP_WARN 0x0157	     /* WCTEMP / default over-temperature threshold, 70 C */
#define NVMF_TEMP_CRIT 0x0175	     /* CCTEMP, 100 C */
#define NVMF_NSID_ALL 0xffffffffu

/* Status values as stored in nvme_cpl.status (host order, phase bit 0). */
#define NVMF_ST(sct, sc) NVME_STATUS(sct, sc)
#define NVMF_ST_DNR(sct, sc) (NVME_STATUS(sct, sc) | NVME_STATUS_DNR)
#define ST_OK 0
#define ST_INVALID_OPCODE NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE)
#define ST_INVALID_FIELD NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)
#define ST_INVALID_NS NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT)
#define ST_CMD_SEQ NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR)
#define ST_SGL_LEN NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID)
#define ST_INTERNAL NVMF_ST(NVME_SCT_GENERIC, NVME_SC_INTERNAL)
#define ST_LBA_RANGE NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE)
#define ST_ABORTED_SQ NVMF_ST(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION)
/* The queue has not authenticated yet (as Linux nvmet: SCT 1h, SC 91h, DNR). */
#define ST_AUTH_REQUIRED NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVMF_SC_AUTH_REQUIRED)

/* Asynchronous event kinds the controller can report (bits of aen_pending/aen_masked). */
enum nvmf_aen {
	NVMF_AEN_NS_CHANGED = 1u << 0,   /* Notice, Namespace Attribute Changed, log 04h */
	NVMF_AEN_DISC_CHANGED = 1u << 1, /* Notice, Discovery Log Page Change, log 70h */
	NVMF_AEN_ANA_CHANGED = 1u << 2,  /* Notice, ANA Change, log 0Ch (ana.c) */
	NVMF_AEN_RESV_LOG = 1u << 3,     /* I/O Command Specific, Reservation Log Page
					  * Available, log 80h (reservation.c) */
};

/* Controller states; every transition goes through ctrlr_set_state() under ctrlr->lock. */
enum nvmf_ctrlr_state {
	NVMF_CTRLR_DISABLED, /* connected, CC.EN = 0 (after Connect or a reset) */
	NVMF_CTRLR_READY,    /* CC.EN = 1 accepted: CSTS.RDY = 1, I/O queues may connect */
	NVMF_CTRLR_FATAL,    /* CC.EN = 1 with unsupported CC fields: CSTS.CFS = 1 */
	NVMF_CTRLR_SHUTDOWN, /* CC.SHN written: flushing caches, then CSTS.SHST = 10b */
	NVMF_CTRLR_DEAD,     /* torn down (admin queue gone, KATO expiry, target stop) */
};

/* Current values of the features we keep per controller. */
struct nvmf_features {
	uint32_t arbitration;
	uint32_t power_mgmt;
	uint16_t temp_over, temp_under;
	uint32_t err_recovery;
	uint32_t irq_coalesce;
	uint32_t irq_config;
	uint32_t write_atomic;
	uint32_t aec;		/* async event configuration */
	uint32_t lba_status_attr; /* LBA Status Information Attributes: LSIPI << 16 | LSIRI */
};

struct nvmf_ctrlr {
	struct nvmf_subsys *subsys;
	struct nvmf_tgt *tgt;
	struct nvmf_port *port;	   /* port of the admin queue (NULL for local) */
	uint16_t cntlid;
	bool discovery;		   /* controller of the discovery subsystem */
	bool local;		   /* nvmf_local_connect(): no fabric admin queue */
	char hostnqn[NVME_NQN_FIELD];
	uint64_t hostnqn_hash; /* FNV-1a of hostnqn (per-host QoS lookups) */
	uint8_t hostid[16];
	char label[32];		   /* "ctrlr N" for logs */

	/* Shared with the connect path of other reactors: under lock. */
	pthread_mutex_t lock;
	enum nvmf_ctrlr_state state;
	uint32_t cc;
	uint32_t csts;		   /* also read (atomic, relaxed) by I/O queues per command */
	struct nvmf_qpair *admin_qp;
	struct reactor *admin_reactor;
	struct nvmf_qpair *io_qp[NVMF_MAX_IO_QUEUES + 1];
	unsigned int num_io_qpairs; /* connected I/O queues */
	uint16_t max_io_qid;	   /* I/O queues granted (Number of Queues, or the default) */
	bool io_queues_created;	   /* an I/O queue connected since the last reset */
	uint16_t io_sqsize;	   /* last I/O queue size connected, for the log */
	struct nvmf_qpair_stats retired; /* I/O queues gone */
	unsigned int refs;	   /* atomic: admin queue + I/O queues + messages in flight */
	TAILQ_ENTRY(nvmf_ctrlr) link; /* subsys->ctrlrs, until freed */

	/* Discovery log change notice in flight (aen.c): posted with no allocation. */
	struct reactor_post disc_post;
	bool disc_post_busy; /* atomic: disc_post is queued and has not started */

	/* Admin reactor only. */
	uint32_t kato_ms;
	ev_timer ka_timer;
	bool ka_active;
	struct nvmf_req *aer[NVMF_MAX_AER];
	unsigned int naer;
	uint32_t aen_pending;	   /* events waiting for an AER */
	uint32_t aen_masked;	   /* reported, masked until the host reads the log */
	uint32_t changed_ns[NVME_CHANGED_NS_LIST_MAX];
	uint32_t nr_changed_ns;	   /* UINT32_MAX: more than fit */
	struct nvmf_features feat;
	unsigned int shn_pending;  /* flushes outstanding for a shutdown */
	uint8_t sgls_extra;
	uint8_t msdbd; /* the transport's MSDBD, 0 = 1 */

	/* Read on I/O queues (atomic, relaxed); written on the admin reactor. */
	bool vwc_present;	   /* Identify reported a volatile write cache */
	bool wce;		   /* Volatile Write Cache feature: enabled */

	/* Error log: any reactor, error path only. */
	pthread_mutex_t err_lock;
	uint64_t err_count;
	unsigned int err_head;	   /* next slot */
	struct nvme_error_log_entry errlog[NVMF_ERRLOG_ENTRIES];

	/* Reservation notifications (reservation.c): any reactor, under err_lock. */
	struct nvmf_resv_log_entry resv_log[NVMF_RESV_LOG_ENTRIES];
	unsigned int resv_log_head, resv_log_n;
	uint64_t resv_log_count; /* Log Page Count of the last one queued */
	/* Reservation Notification Mask (feature 82h) per NSID: atomic, relaxed. */
	uint8_t resv_mask[NVMF_MAX_NAMESPACES + 1];
};

/* ---- ctrlr.c: lifecycle ------------------------------------------------------------------ */
struct nvmf_ctrlr *nvmf_ctrlr_create(struct nvmf_subsys *subsys, struct nvmf_qpair *admin,
				     const char *hostnqn, const uint8_t hostid[16],
				     uint16_t *status);
void nvmf_ctrlr_get(struct nvmf_ctrlr *c);
bool nvmf_ctrlr_get_unless_zero(struct nvmf_ctrlr *c);
void nvmf_ctrlr_put(struct nvmf_ctrlr *c);
/* Find a live controller of @subsys by ID and take a reference (NULL if none). */
struct nvmf_ctrlr *nvmf_ctrlr_lookup(struct nvmf_subsys *subsys, uint16_t cntlid);
/* The one state transition (caller holds c->lock); asserts it is legal. */
void nvmf_ctrlr_set_state(struct nvmf_ctrlr *c, enum nvmf_ctrlr_state st);
bool nvmf_ctrlr_ready(const struct nvmf_ctrlr *c);
/* Tear the controller down (admin reactor): stops KATO, aborts AERs when @abort_aers,
 * disconnects every I/O queue. Idempotent. */
void nvmf_ctrlr_teardown(struct nvmf_ctrlr *c, bool abort_aers, const char *why);
/* Tear the controller down and disconnect its admin queue too (admin reactor). */
void nvmf_ctrlr_kill(struct nvmf_ctrlr *c, const char *why);
/* Ask the controller's admin reactor to tear it down and disconnect its queues. */
void nvmf_ctrlr_kill_async(struct nvmf_ctrlr *c);

/* ---- qpair.c: the controller's queue table ------------------------------------------------ */
/* Attach @qp as I/O queue @qid. Returns a status (0 on success). */
uint16_t nvmf_ctrlr_add_io_qpair(struct nvmf_ctrlr *c, struct nvmf_qpair *qp, uint16_t qid,
				 uint32_t *dw0);
/* Remove I/O queue @qp from the queue table (its statistics fold into the totals); the
 * queue keeps its controller reference until nvmf_qpair_fini(). */
void nvmf_ctrlr_detach_io_qpair(struct nvmf_ctrlr *c, struct nvmf_qpair *qp);
/* Disconnect every I/O queue through its reactor (reset, teardown). */
void nvmf_ctrlr_disconnect_io_qpairs(struct nvmf_ctrlr *c);

/* ---- property.c: properties (CC writes drive the state machine) -------------------------- */
uint64_t nvmf_ctrlr_cap(const struct nvmf_ctrlr *c);
uint16_t nvmf_ctrlr_prop_get(struct nvmf_ctrlr *c, uint32_t offset, unsigned int size,
			     uint64_t *val);
uint16_t nvmf_ctrlr_prop_set(struct nvmf_ctrlr *c, uint32_t offset, unsigned int size,
			     uint64_t val);

/* ---- keep_alive.c (admin reactor) -------------------------------------------------------- */
void nvmf_ctrlr_ka_restart(struct nvmf_ctrlr *c);
void nvmf_ctrlr_ka_set(struct nvmf_ctrlr *c, uint32_t kato_ms);
/* KATO as granted: rounded up to KAS (100 ms), at most NVMF_KATO_MAX_MS; 0 stays 0. */
uint32_t nvmf_kato_clamp(uint32_t kato_ms);
void nvmf_ctrlr_ka_stop(struct nvmf_ctrlr *c);
void nvmf_ctrlr_ka_expired(struct nvmf_ctrlr *c);

/* ---- aen.c: asynchronous events (admin reactor) ------------------------------------------ */
uint16_t nvmf_ctrlr_aer_submit(struct nvmf_req *req);
void nvmf_ctrlr_aen_raise(struct nvmf_ctrlr *c, uint32_t aen);
void nvmf_ctrlr_aen_clear(struct nvmf_ctrlr *c, uint32_t aen);
void nvmf_ctrlr_aer_abort_all(struct nvmf_ctrlr *c);
/* From any thread: deliver "namespace @nsid changed" to @c on its admin reactor. */
void nvmf_ctrlr_notify_ns_changed(struct nvmf_ctrlr *c, uint32_t nsid);
void nvmf_ctrlr_notify_disc_changed(struct nvmf_ctrlr *c);
/* From any thread: a reservation notification was queued for @c (reservation.c). */
void nvmf_ctrlr_notify_resv(struct nvmf_ctrlr *c);

/* ---- error_log.c, ctrlr_stats.c ------------------------------------------------------------ */
void nvmf_ctrlr_record_error(struct nvmf_ctrlr *c, const struct nvmf_req *req);
void nvmf_ctrlr_get_stats(struct nvmf_ctrlr *c, struct nvmf_qpair_stats *out);
void nvmf_stats_add(struct nvmf_qpair_stats *dst, const struct nvmf_qpair_stats *src);
void nvmf_stats_read(const struct nvmf_qpair_stats *src, struct nvmf_qpair_stats *dst);

/* Single-writer counters read by other threads: plain load/add, relaxed atomic store. */
#define NVMF_STAT_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

/* ---- request.c: completion with a status, data movement between a buffer and req->iov --- */
void nvmf_req_done(struct nvmf_req *req, uint16_t status);
size_t nvmf_req_copy_to(struct nvmf_req *req, size_t off, const void *buf, size_t len);
size_t nvmf_req_copy_from(struct nvmf_req *req, size_t off, void *buf, size_t len);
void nvmf_req_zero(struct nvmf_req *req, size_t off);
/* Copy @len bytes of @buf to the host and zero the rest of the transfer. */
void nvmf_req_reply(struct nvmf_req *req, const void *buf, size_t len);
static inline struct nvmf_ctrlr *nvmf_req_ctrlr(const struct nvmf_req *req)
{
	return req->qpair->ctrlr;
}

/* ---- parse handlers of the admin command table (admin.c) in other files -------------------
 * Each returns a status; on 0, req->execute is set. The command tables are in dispatch.h. */
uint16_t nvmf_features_parse(struct nvmf_req *req, bool set);
uint16_t nvmf_log_page_parse(struct nvmf_req *req);
bool nvmf_subsys_has_volatile_cache(struct nvmf_subsys *subsys);

/* ---- fabrics_auth.c: in-band authentication of queues --------------------------------------
 * Connect looks the host's settings up (under tgt->lock; a reference, NULL when the queue
 * needs no authentication), then, once the queue is connected, starts its authentication:
 * auth_pending set, the deadline armed, and AUTHREQ.ATR to put in the Connect response's
 * DW0 returned. The Authentication Send/Receive parse handlers are the table's rows. */
struct dhchap_host_conf *nvmf_auth_host_conf_locked(struct nvmf_subsys *s, const char *hostnqn);
uint16_t nvmf_auth_qpair_start(struct nvmf_qpair *qp, struct dhchap_host_conf *conf, uint32_t *dw0);
void nvmf_auth_qpair_fini(struct nvmf_qpair *qp);
/* The host table, at target destruction (no controller left to end). */
void nvmf_auth_tgt_free(struct nvmf_tgt *tgt);
uint16_t nvmf_auth_send_parse(struct nvmf_req *req);
uint16_t nvmf_auth_recv_parse(struct nvmf_req *req);

/* ---- discovery.c ----------------------------------------------------------------------- */
/* Build the discovery log as seen by @hostnqn connected through @qp (may be NULL); returns
 * a malloc'd buffer of *len bytes, or NULL. */
void *nvmf_disc_log_build(struct nvmf_tgt *tgt, const char *hostnqn, const struct nvmf_qpair *qp,
			  size_t *len);
/* Bump GENCTR with the change it covers (caller holds tgt->lock); after unlocking, tell
 * discovery controllers with nvmf_disc_notify(). nvmf_tgt_changed() does both. */
void nvmf_tgt_changed_locked(struct nvmf_tgt *tgt);
/* Whether @port appears in the discovery log of @hostnqn asking through @qp (may be NULL):
 * a discovery-only port, the port asked through, or a port exporting a subsystem the host
 * is allowed on; never an NVMe/TCP port the host cannot use (plain TCP for a host with a
 * PSK, a TLS-required port for a host without one). Caller holds tgt->lock. */
bool nvmf_disc_port_listed(const struct nvmf_port *port, const char *hostnqn,
			   const struct nvmf_qpair *qp);
void nvmf_disc_notify(struct nvmf_tgt *tgt);
void nvmf_tgt_changed(struct nvmf_tgt *tgt);

/* ---- subsystem.c ------------------------------------------------------------------------- */
/* Callers hold tgt->lock (host lists and the subsystem list are under it). */
struct nvmf_subsys *nvmf_subsys_find_locked(struct nvmf_tgt *tgt, const char *nqn);
bool nvmf_subsys_host_allowed_locked(struct nvmf_subsys *subsys, const char *hostnqn);
uint64_t nvmf_now_ns(void);
/* Wait (bounded) until @subsys has no controllers; false on timeout. */
bool nvmf_subsys_wait_ctrlrs(struct nvmf_subsys *subsys, unsigned int timeout_ms);
void nvmf_subsys_kill_ctrlrs(struct nvmf_subsys *subsys);

/* Every reactor has run a message posted after the call (main thread; no-op on a reactor). */
void nvmf_reactors_quiesce(void);

/* ---- ns_stats.c: per-namespace metrics slots (one per reactor), with the namespace ---- */
int nvmf_ns_iostat_init(struct nvmf_ns *ns);
void nvmf_ns_iostat_free(struct nvmf_ns *ns);

/* ---- port.c ------------------------------------------------------------------------------ */
/* Ask every connection of @port to close (through its reactor). */
void nvmf_port_disconnect_all(struct nvmf_port *port);
bool nvmf_port_exports(const struct nvmf_port *port, const struct nvmf_subsys *subsys);
void nvmf_port_unexport_all(struct nvmf_tgt *tgt, struct nvmf_subsys *subsys);
uint32_t nvmf_port_icsz(const struct nvmf_tgt *tgt, const struct nvmf_port *port);

#endif
