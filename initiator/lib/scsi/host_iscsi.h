/* SPDX-License-Identifier: MIT */
/*
 * libnvmeof's SCSI room, the iSCSI tunnel: every queue pair is one iSCSI session of one
 * connection to iscsi://[USER%SECRET@]HOST[:PORT]/TARGET-IQN/LUN. NVMe commands built by
 * the queue layer (queue/host_io.c) travel as SCSI CDBs (host_scsi_encap.c); the admin
 * queue's session learns the logical unit (INQUIRY, VPD pages, READ CAPACITY, MODE SENSE)
 * and answers Identify and the Fabrics commands itself (host_iscsi_ctrlr.c). Login and
 * CHAP live in host_iscsi_login.c, SendTargets in host_iscsi_discovery.c, the full
 * feature phase (tasks, CmdSN window, R2T, Data-In/Out, NOP, Logout) in host_iscsi.c and
 * host_iscsi_{task,send,recv}.c.
 *
 * A circle by nature: a received PDU completes or advances a task (recv -> task), a task
 * queues PDUs to send (task -> send), a sent PDU can finish a task (send -> task), and any
 * of them can end the connection (-> host_iscsi.c's iscsi_fatal), which the transport
 * ops in host_iscsi.c drive from above. tests/callgraph.sh reports it.
 */
#ifndef NVMEOF_INITIATOR_SCSI_HOST_ISCSI_H
#define NVMEOF_INITIATOR_SCSI_HOST_ISCSI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "queue/host_internal.h"
#include "common/iscsi_pdu.h"
#include "host_scsi_encap.h"

/* What we offer at login (the benchmark's fair-comparison settings). */
#define ISCSI_INIT_MAX_RECV_DSL (256u * 1024)	/* MaxRecvDataSegmentLength we declare */
#define ISCSI_INIT_MAX_BURST (1024u * 1024)	/* MaxBurstLength */
#define ISCSI_INIT_FIRST_BURST (256u * 1024)	/* FirstBurstLength */
#define ISCSI_LOGIN_TEXT_MAX 8192u		/* login text per PDU (the RFC default) */

/* CHAP_A values (IANA "PPP Authentication Algorithms"). */
#define ISCSI_CHAP_MD5 5
#define ISCSI_CHAP_SHA256 7
#define ISCSI_CHAP_DIGEST_MAX 32
#define ISCSI_CHAP_CHALLENGE_MAX 1024

/* ---- Login (iscsi_login.c) -------------------------------------------------------------- */
struct iscsi_login_cfg {
	const char *initiator_name;
	const char *target_name;  /* with @discovery: the portal, for messages only */
	bool discovery;           /* SessionType=Discovery, no TargetName */
	const char *user;	  /* CHAP name; NULL or "": no authentication */
	const char *secret;
	uint8_t isid[6];
	uint16_t cid;
	uint32_t cmdsn;		  /* initial CmdSN */
	bool hdgst, ddgst;	  /* require CRC32C header / data digests */
	bool chap_md5_only;	  /* offer CHAP_A=5 only (default: 7,5) */
	uint32_t max_recv_dsl;	  /* declared; 0: ISCSI_INIT_MAX_RECV_DSL */
	uint32_t max_burst;	  /* offered; 0: ISCSI_INIT_MAX_BURST */
	uint32_t first_burst;	  /* offered; 0: ISCSI_INIT_FIRST_BURST */
};

/* The session as negotiated. */
struct iscsi_session {
	bool hdgst, ddgst;
	bool initial_r2t, immediate_data;
	uint32_t max_xmit_dsl;	  /* the target's MaxRecvDataSegmentLength */
	uint32_t max_recv_dsl;	  /* ours */
	uint32_t max_burst, first_burst;
	uint32_t max_outstanding_r2t;
	uint32_t erl;
	uint16_t tsih;
	uint16_t tpgt;
	int chap_alg;		  /* CHAP_A used, 0 without authentication */
	uint32_t cmdsn, exp_cmdsn, max_cmdsn, exp_statsn;
};

/*
 * Run the login phase on the connected stream socket @fd (blocking, bounded by
 * @timeout_ms): security negotiation (CHAP when cfg->user is set), then operational
 * negotiation. 0 with @out filled, or -errno with set_error(): -EACCES authentication or
 * authorization, -ENOENT unknown target, -EPROTO malformed or inconsistent answers,
 * -EPROTONOSUPPORT a required digest declined, -ETIMEDOUT, -ECONNRESET.
 */
int iscsi_login(int fd, const struct iscsi_login_cfg *cfg, int timeout_ms,
		struct iscsi_session *out);

/* CHAP_R = H(id || secret || challenge) for CHAP_A @alg. 0 or -EINVAL/-ENOTSUP. */
/* SendTargets (host_iscsi_discovery.c): the TargetName / TargetAddress pairs of @text
 * (@len bytes, NUL-separated) into *@out, one entry per address, the portal's address
 * for a name without one. 0, or -errno with the error set. Exposed for tests. */
int host_iscsi_parse_targets(const struct uri_target *u, char *text, size_t len,
			     struct nvmeof_iscsi_target **out, unsigned int *count);
int host_iscsi_chap_response(int alg, uint8_t id, const uint8_t *secret, size_t secret_len,
			     const uint8_t *chal, size_t chal_len, uint8_t *out, size_t *out_len);

/* ---- The logical unit (iscsi_ctrlr.c) ----------------------------------------------------- */
struct host_iscsi_lu {
	uint64_t lun;
	uint8_t ptype;		   /* peripheral device type */
	uint64_t nblocks;
	uint32_t block_size;
	uint32_t block_shift;
	struct scsi_lu_limits lim; /* set by iscsi_lu_finish() */
	bool write_cache;	   /* WCE (or assumed when MODE SENSE fails) */
	bool write_protected;	   /* MODE SENSE WP */
	bool thin;		   /* LBPME */
	bool read_zeroes;	   /* LBPRZ */
	char vendor[9], product[17], revision[5];
	char serial[256];
	unsigned int ndesig; /* every designator of the Device Identification page */
	struct nvmeof_scsi_designator desig[NVMEOF_SCSI_DESIGNATORS_MAX];
	uint8_t nguid[16], eui64[8];
	bool has_nguid, has_eui64;
	/* Block Limits VPD */
	bool have_limits;
	uint32_t max_xfer_blocks;  /* MAXIMUM TRANSFER LENGTH, 0: none */
	uint32_t caw_blocks;	   /* MAXIMUM COMPARE AND WRITE LENGTH */
	uint32_t unmap_descs;	   /* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	uint32_t opt_xfer_gran;    /* OPTIMAL TRANSFER LENGTH GRANULARITY */
	uint32_t opt_xfer_blocks;  /* OPTIMAL TRANSFER LENGTH */
	uint32_t unmap_blocks;     /* MAXIMUM UNMAP LBA COUNT */
	uint32_t unmap_gran;       /* OPTIMAL UNMAP GRANULARITY */
	uint64_t ws_blocks;	   /* MAXIMUM WRITE SAME LENGTH, 0: none */
	/* Logical Block Provisioning VPD */
	bool lbpu, lbpws;
	/* REPORT SUPPORTED OPERATION CODES */
	bool opcodes_known;
	bool op_caw, op_ws16, op_unmap, op_verify16;
};

/* Parsers of SCSI data into @lu (pure; unit tested). 0 or -EINVAL/-ENODEV. */
int iscsi_lu_parse_inquiry(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_serial(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_devid(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_block_limits(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_provisioning(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_capacity16(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_capacity10(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_caching(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
int iscsi_lu_parse_opcodes(struct host_iscsi_lu *lu, const uint8_t *d, size_t len);
/* Derive the translation limits (lu->lim) from what was parsed. */
void iscsi_lu_finish(struct host_iscsi_lu *lu);
/* ONCS bits the LU is known to support. */
uint16_t iscsi_lu_oncs(const struct host_iscsi_lu *lu);

/* Synthetic Identify data for the LU (4096 bytes each). */
void iscsi_build_id_ctrl(const struct host_iscsi_lu *lu, const char *target_name, uint32_t max_xfer,
			 uint16_t maxcmd, struct nvme_id_ctrl *id);
void iscsi_build_id_ns(const struct host_iscsi_lu *lu, struct nvme_id_ns *id);
void iscsi_build_ns_desc_list(const struct host_iscsi_lu *lu, uint8_t *buf);

/* ---- Queue pairs (host_iscsi*.c) -------------------------------------------------------- */
/* Per-task machine. */
enum iscsi_task_state {
	ISCSI_TASK_FREE,    /* slot not in use */
	ISCSI_TASK_WINDOW,  /* waiting for the target's CmdSN window to open */
	ISCSI_TASK_SEND,    /* command or Data-Out PDUs queued or being sent */
	ISCSI_TASK_WAIT,    /* waiting for R2T, Data-In, status or NOP-In */
};

enum iscsi_task_kind {
	ISCSI_TASK_SCSI,     /* an NVMe command as SCSI command(s) */
	ISCSI_TASK_NOP,	     /* Keep Alive as a NOP-Out ping */
	ISCSI_TASK_SHUTDOWN, /* CC.SHN: SYNCHRONIZE CACHE, success whatever it says */
};

/* The data source or destination of one PDU: @len bytes of @iov from @off, or with
 * @part set, @part bytes from @off repeated. */
struct iscsi_src {
	const struct iovec *iov;
	int iovcnt;
	uint32_t off;
	uint32_t part;
};

/* One outgoing PDU: header, data from a source, padding and digest. */
struct iscsi_pdu_out {
	_Alignas(8) uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	uint32_t hdr_len;
	struct iscsi_src src;
	uint32_t data_off;	/* in the source */
	uint32_t data_len;
	uint8_t trail[8];	/* padding and data digest */
	uint32_t trail_len;
	uint32_t total, sent;
	bool queued;
	struct host_iscsi_task *task; /* NULL: a control PDU */
	TAILQ_ENTRY(iscsi_pdu_out) link;
};

struct host_iscsi_task {
	enum iscsi_task_state state;
	enum iscsi_task_kind kind;
	struct nvmeof_req *req;	    /* NULL: an internal command */
	uint32_t itt;
	uint16_t index, gen;
	uint32_t cmdsn;
	uint8_t retries;	    /* UNIT ATTENTION retries */
	uint32_t step;		    /* of the NVMe command's translation */
	struct scsi_encap_cmd enc;
	struct iscsi_src src;	    /* this step's data */
	bool read, write;
	uint32_t edtl;
	/* Data-Out */
	uint32_t out_next, out_end; /* current sequence */
	uint32_t out_ttt, out_datasn;
	bool r2t_pending;
	uint32_t r2t_off, r2t_len, r2t_ttt;
	uint32_t exp_r2tsn;
	/* Data-In */
	uint32_t in_next, in_datasn;
	bool ddgst_err;
	/* Outcome */
	bool finish_after_send;	    /* status came while a PDU was half sent */
	bool done;
	uint8_t status, response;
	uint32_t residual;
	uint8_t rflags;
	uint8_t sense[64];
	uint32_t sense_len;
	uint8_t *param;		    /* SCSI_ENCAP_PARAM_LEN bytes */
	struct iovec internal_iov;
	struct iscsi_pdu_out pdu;
	TAILQ_ENTRY(host_iscsi_task) wlink; /* CmdSN window wait list */
};

enum iscsi_rx_state {
	ISCSI_RX_HDR,	/* BHS, AHS and header digest */
	ISCSI_RX_SEG,	/* a data segment other than Data-In's, staged whole */
	ISCSI_RX_DATA,	/* Data-In payload, into the task's buffers */
	ISCSI_RX_TRAIL,	/* Data-In padding and data digest */
	ISCSI_RX_DEAD,	/* fatal error or closed: nothing more is parsed */
};

#define ISCSI_CTL_PDUS 8
#define ISCSI_RBUF_SIZE (64 * 1024)	/* receive staging buffer */
#define ISCSI_ZERO_BLOCK_MAX 65536	/* largest logical block we accept */

struct iscsi_qpair {
	struct nvmeof_qpair qp;
	int fd;
	struct iscsi_session s;
	struct host_iscsi_lu *lu; /* owned by the admin queue pair */
	uint8_t isid[6];
	bool logged_in;
	bool chap_md5_only;		/* SHA-256 was refused: MD5 for every session */
	bool closing;			/* Logout in progress: errors end it quietly */
	bool logout_done;
	struct host_iscsi_task *tasks; /* qp.nreqs + 1 (the last one is internal) */
	uint16_t ntasks;
	uint8_t *params;
	uint8_t *zero_block;
	struct iovec zero_iov;
	struct iscsi_pdu_out ctl[ISCSI_CTL_PDUS];
	TAILQ_HEAD(, iscsi_pdu_out) sendq;
	TAILQ_HEAD(, host_iscsi_task) windowq;
	/* Receive */
	enum iscsi_rx_state rx_state;
	_Alignas(8) uint8_t rx_hdr[ISCSI_BHS_LEN + 1024 + ISCSI_DIGEST_LEN];
	uint32_t rx_hdr_len, rx_dlen, rx_seg_len;
	struct host_iscsi_task *rx_task;
	uint32_t rx_off, rx_left;
	uint32_t rx_crc;
	uint8_t *rbuf;
	uint32_t rpos, rlen;
	/* Identity answered on the admin queue */
	struct nvme_id_ctrl *id_ctrl;
	struct nvme_id_ns *id_ns;
	uint32_t cc, csts;
};

extern const struct nvmeof_transport_ops iscsi_transport_ops;

static inline struct iscsi_qpair *iscsi_qp(const struct nvmeof_qpair *qp)
{
	return container_of(qp, struct iscsi_qpair, qp);
}

/* Sessions (host_iscsi_session.c): allocation, connection and login, release. */
struct nvmeof_qpair *iscsi_qpair_alloc(void);
int iscsi_qpair_connect(struct nvmeof_qpair *qp, int timeout_ms);
void iscsi_qpair_free(struct nvmeof_qpair *qp);
/* Login on an already connected stream socket; takes ownership of @fd. */
int iscsi_qpair_connect_fd(struct nvmeof_qpair *qp, int fd, int timeout_ms);

/* Send one SCSI command on @iq outside the request pool (controller setup) and wait for
 * it. 0 with the SCSI status in *@status (sense copied to @sense, *@sense_len) and the
 * bytes received in *@got, or -errno. */
int iscsi_exec_internal(struct iscsi_qpair *iq, const uint8_t *cdb, uint8_t cdb_len, void *buf,
			uint32_t len, bool write, uint8_t *status, uint8_t *sense,
			uint32_t *sense_len, uint32_t *got, int timeout_ms);

/* Start @req's command (its SQE as SCSI command(s), a NOP-Out ping, or the shutdown
 * SYNCHRONIZE CACHE) on the task of its slot; 0 or -errno. Completions come later. */
int iscsi_start_task(struct iscsi_qpair *iq, struct nvmeof_req *req, enum iscsi_task_kind kind);

/* Complete @req at once with an NVMe status (NVMEOF_STATUS form) and result words. */
void iscsi_complete_local(struct nvmeof_req *req, uint16_t status, bool dnr, uint32_t dw0,
			  uint32_t dw1);

/* ---- Inside the queue pair (host_iscsi*.c) ---------------------------------------------- */
static inline void iscsi_task_set_state(struct host_iscsi_task *t, enum iscsi_task_state s)
{
	t->state = s;
}

/* host_iscsi.c: a PDU or condition we cannot accept: the queue pair fails (during Logout,
 * quietly); returns @err. */
int iscsi_fatal(struct iscsi_qpair *iq, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Send and receive what @revents allows. 0 or -errno once the connection is gone. */
int iscsi_io(struct iscsi_qpair *iq, short revents);
short iscsi_which_events(const struct nvmeof_qpair *qp);

/* host_iscsi_send.c */
/* Fill @out (room for @max) with the part of @src covering [@off, @off + @len); stops when
 * @max entries are used. *@covered says how far it got. */
int iscsi_src_slice(const struct iscsi_src *src, uint32_t off, uint32_t len, struct iovec *out,
		    int max, size_t *covered);
/* Queue @p with @data_len bytes of its source from @data_off (digests, padding). */
void iscsi_pdu_queue(struct iscsi_qpair *iq, struct iscsi_pdu_out *p, uint32_t data_off,
		     uint32_t data_len);
void iscsi_put_exp_statsn(struct iscsi_qpair *iq, uint8_t *bhs);
/* Answer an R2T: Data-Out for [@off, @off + @len) under target transfer tag @ttt. */
void iscsi_start_r2t(struct iscsi_qpair *iq, struct host_iscsi_task *t, uint32_t off, uint32_t len,
		     uint32_t ttt);
/* The task got its CmdSN: queue its SCSI Command (with immediate data) or NOP-Out. */
void iscsi_task_issue(struct iscsi_qpair *iq, struct host_iscsi_task *t);
/* Send what the socket takes; 0 or -errno (the queue pair failed). */
int iscsi_send(struct iscsi_qpair *iq);
/* A free control PDU (Logout, NOP-Out answering a NOP-In), or NULL. */
struct iscsi_pdu_out *host_iscsi_ctl_get(struct iscsi_qpair *iq);

/* host_iscsi_task.c */
/* The window may have opened: send the tasks waiting for it, in order. */
void iscsi_window_drain(struct iscsi_qpair *iq);
void iscsi_task_free(struct host_iscsi_task *t);
/* Status arrived and every PDU of the task is out: decide what it means. */
void iscsi_task_finish(struct iscsi_qpair *iq, struct host_iscsi_task *t);
/* Status for @t: finish now, or once its half-sent PDU has gone out. */
int iscsi_task_status(struct iscsi_qpair *iq, struct host_iscsi_task *t);

/* host_iscsi_recv.c */
void iscsi_rx_set_state(struct iscsi_qpair *iq, enum iscsi_rx_state s);
bool iscsi_rx_alive(const struct iscsi_qpair *iq);
/* Receive and handle what the socket has (a bounded number of readv() calls). */
int iscsi_recv(struct iscsi_qpair *iq);

/* Admin and Fabrics commands answered without SCSI (iscsi_ctrlr.c). 0 or -errno. */
int iscsi_admin_submit(struct iscsi_qpair *iq, struct nvmeof_req *req);
int iscsi_ctrlr_setup(struct nvmeof_ctrlr *ctrlr);

/* The iSCSI initiator name derived from a host NQN. */
void iscsi_initiator_name(const char *hostnqn, char *out, size_t len);

#endif
