/* SPDX-License-Identifier: MIT */
/*
 * libnvmeof: userspace NVMe over Fabrics initiator.
 *
 * Handles are opaque: a controller (struct nvmeof_ctrlr) owns an admin queue, its I/O
 * queue pairs (struct nvmeof_qpair) and its namespaces (struct nvmeof_ns).
 *
 * Errors: functions return 0 (or a count) on success and a negative errno on failure.
 * nvmeof_last_error() gives a one-line description of the last failure on the calling
 * thread; nvmeof_qpair_error() says why a queue pair failed.
 *
 * Asynchronous use, with any event loop (like libiscsi):
 *   - poll nvmeof_qpair_get_fd() for nvmeof_qpair_which_events(), and call
 *     nvmeof_qpair_service() with the returned events (or 0 when the time given by
 *     nvmeof_qpair_timeout_ms() has passed);
 *   - or call nvmeof_qpair_process_completions() from a polling loop;
 *   - do the same for the admin queue with nvmeof_ctrlr_get_fd()/nvmeof_ctrlr_service():
 *     it sends Keep Alive commands when due.
 * Submissions queue a command and return at once; data moves and callbacks run only
 * inside service/process_completions, never inside a submission call.
 *
 * Blocking use: the *_sync() wrappers submit, then service the queue pair (and the admin
 * queue's keep-alive) until the command completes. They return 0, a negative errno for a
 * transport failure, or a positive NVMe status (NVMEOF_SCT()/NVMEOF_SC()).
 *
 * Threads: a queue pair is used by one thread at a time; several threads may each use
 * their own queue pair of the same controller at once. Controller-level calls (admin
 * commands, nvmeof_ctrlr_service(), namespace queries) are serialised internally and may
 * come from any thread. Disconnecting a controller while another thread uses one of its
 * queue pairs is not allowed.
 *
 * Buffers: data is described by iovec arrays; the library copies the iovec array (at most
 * NVMEOF_IOV_MAX entries) but not the data, which must stay valid until the callback.
 * No memory is allocated per I/O.
 */
#ifndef NVMEOF_H
#define NVMEOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nvmeof_ctrlr;
struct nvmeof_qpair;
struct nvmeof_ns;

#define NVMEOF_IOV_MAX 64 /* iovec entries per command */

/* ---- Logging and errors ------------------------------------------------------------ */
enum nvmeof_log_level {
	NVMEOF_LOG_ERR = 0,
	NVMEOF_LOG_WARN,
	NVMEOF_LOG_INFO,
	NVMEOF_LOG_DEBUG,
};

typedef void (*nvmeof_log_fn)(enum nvmeof_log_level level, const char *msg, void *arg);

/* Route library messages up to @max_level to @fn (NULL: discard, the default). Set it
 * before connecting; it applies to the whole process. */
void nvmeof_set_log_fn(nvmeof_log_fn fn, void *arg, enum nvmeof_log_level max_level);

/* Text for a negative errno returned by the library. */
const char *nvmeof_strerror(int err);
/* One-line description of the last failure on this thread ("" when none). */
const char *nvmeof_last_error(void);

/* ---- NVMe status ------------------------------------------------------------------- */
/* Status is SCT << 8 | SC (no phase, DNR or More bits); 0 is success. */
#define NVMEOF_STATUS(sct, sc) ((uint16_t)(((sct) & 0x7) << 8 | ((sc) & 0xff)))
#define NVMEOF_SCT(status) (((status) >> 8) & 0x7)
#define NVMEOF_SC(status) ((status) & 0xff)

#define NVMEOF_SCT_GENERIC 0x0
#define NVMEOF_SCT_COMMAND_SPECIFIC 0x1
#define NVMEOF_SCT_MEDIA 0x2
#define NVMEOF_SCT_PATH 0x3
#define NVMEOF_SC_LBA_OUT_OF_RANGE 0x80 /* generic */
#define NVMEOF_SC_COMPARE_FAILURE 0x85	/* media */

/* Name of a status, e.g. "LBA Out of Range". */
const char *nvmeof_status_name(uint16_t status);
/* "LBA Out of Range (sct 0 sc 0x80)" into @buf; returns @buf. */
char *nvmeof_status_str(uint16_t status, char *buf, size_t len);

struct nvmeof_cpl {
	int err;	 /* 0: the controller completed the command (see status);
			    -errno: it did not (-ETIMEDOUT, -ECONNABORTED, -ECONNRESET,
			    -EBADMSG for a data digest error, ...) */
	uint16_t status; /* NVMEOF_STATUS(); meaningful when err == 0 */
	bool dnr;	 /* Do Not Retry */
	uint32_t dw0;	 /* command specific */
	uint32_t dw1;
};

static inline bool nvmeof_cpl_ok(const struct nvmeof_cpl *cpl)
{
	return cpl->err == 0 && cpl->status == 0;
}

typedef void (*nvmeof_cb)(void *arg, const struct nvmeof_cpl *cpl);

/* ---- Controllers ------------------------------------------------------------------- */
struct nvmeof_opts {
	const char *hostnqn;	     /* NULL: /etc/nvme/hostnqn, else a generated stable one */
	const char *hostid;	     /* UUID text; NULL: /etc/nvme/hostid, else generated */
	bool hdgst;		     /* ask for NVMe/TCP header digests */
	bool ddgst;		     /* ask for NVMe/TCP data digests */
	/* NVMe in-band authentication, DH-HMAC-CHAP (see "Authentication" below): the
	 * secrets as nvme gen-dhchap-key prints them, "DHHC-1:NN:<base64>:". Read at
	 * connect; the library keeps its own wiped-on-free copy, not these pointers. */
	const char *dhchap_secret;      /* the host's secret; NULL: none (default) */
	const char *dhchap_ctrl_secret; /* the controller's: bidirectional; NULL: none */
	unsigned int io_queues;	     /* I/O queue pairs to connect (default 1) */
	unsigned int queue_depth;    /* commands in flight per I/O queue (default 128) */
	unsigned int kato_ms;	     /* Keep Alive Timeout, 0 = none (default 30000) */
	unsigned int connect_timeout_ms; /* per connection and handshake, and per DH-HMAC-CHAP
					  transaction of a queue (default 10000) */
	unsigned int admin_timeout_ms;	 /* per admin command (default 10000) */
	unsigned int io_timeout_ms;	 /* per I/O command, 0 = none (default 30000) */
	/* Reconnect after a lost connection (see "Reconnect" below), in seconds as
	 * nvme-cli names them: */
	int reconnect_delay;  /* between attempts, >= 0 (default 2; Linux uses 10) */
	int ctrl_loss_tmo;    /* give up after this long, -1 never, 0 no reconnect
				    (default 600) */
	int fast_io_fail_tmo; /* fail held I/O after this long, -1 off: hold it until
				    ctrl_loss_tmo (default -1) */
	/* NVMe/TCP over TLS 1.3 with a PSK (nvme connect --tls): */
	bool tls;                 /* connect through TLS; needs tls_key */
	const char *tls_key;      /* the configured PSK in interchange format (NVMeTLSkey-1:HH:
				 ...:, as nvme gen-tls-key writes it); copied at connect */
	const char *tls_key_file; /* or the path of a file of mode 0600 holding it */
	int tls_identity;         /* PSK identity version: 1 (default, with the PSK digest) or 0;
				 the cipher suite follows the PSK's hash (01: AES-128-GCM
				 SHA-256, 02: AES-256-GCM SHA-384) */
};

/* Fill @opts with the defaults. */
void nvmeof_opts_init(struct nvmeof_opts *opts);

/*
 * Connect to the controller named by @uri:
 *   nvme+tcp://HOST[:PORT][/SUBSYS-NQN[/NSID]]
 * The NQN is percent-decoded; without it the discovery controller is meant (port 8009 by
 * default, 4420 otherwise). Blocking: the admin queue (Connect, enable, Identify,
 * namespace scan) and opts->io_queues I/O queue pairs are set up before it returns.
 * @opts may be NULL for the defaults.
 */
int nvmeof_ctrlr_connect(const char *uri, const struct nvmeof_opts *opts,
			 struct nvmeof_ctrlr **ctrlr);
/* Delete the I/O queues (Fabrics Disconnect where the controller supports it, OFCS),
 * shut the controller down (CC.SHN) and free everything, including queue pairs and
 * namespaces. Outstanding commands complete with -ECANCELED before it returns. */
void nvmeof_ctrlr_disconnect(struct nvmeof_ctrlr *ctrlr);

/* The admin queue in an event loop: keep-alive and asynchronous admin commands. */
int nvmeof_ctrlr_get_fd(const struct nvmeof_ctrlr *ctrlr);
short nvmeof_ctrlr_which_events(struct nvmeof_ctrlr *ctrlr);
int nvmeof_ctrlr_service(struct nvmeof_ctrlr *ctrlr, short revents);
/* Milliseconds until nvmeof_ctrlr_service() must run even without events (-1: never). */
int nvmeof_ctrlr_timeout_ms(struct nvmeof_ctrlr *ctrlr);

struct nvmeof_ctrlr_info {
	char uri[640];		 /* normalised, e.g. nvme+tcp://127.0.0.1:4420/NQN */
	char transport[8];	 /* "tcp" */
	char subnqn[257];
	char hostnqn[257];
	char hostid[37];
	char sn[21], mn[41], fr[9]; /* trailing spaces removed */
	uint16_t vid, ssvid;
	uint16_t cntlid;
	uint32_t ver;		 /* VS: major << 16 | minor << 8 | tertiary */
	uint8_t cntrltype;	 /* 1 I/O, 2 discovery, 3 administrative */
	bool discovery;
	uint32_t mdts_bytes;	 /* 0 = no limit */
	uint32_t nn;		 /* number of namespaces */
	uint16_t oncs;		 /* optional NVM commands (Compare bit 0, DSM bit 2, ...) */
	bool vwc;		 /* volatile write cache present */
	uint32_t sgls;
	uint32_t ioccsz_bytes, iorcsz_bytes;
	uint16_t kas_ms;	 /* Keep Alive granularity, ms */
	uint32_t kato_ms;	 /* negotiated Keep Alive Timeout */
	uint16_t maxcmd;
	uint16_t mqes;		 /* CAP.MQES + 1: largest queue */
	bool hdgst, ddgst;	 /* digests in force */
	uint32_t maxh2cdata;
	unsigned int io_queues;	 /* I/O queue pairs connected now */
	unsigned int queue_depth;
	/* DH-HMAC-CHAP of the admin queue's last authentication; "" when it did not
	 * authenticate. */
	char dhchap_hash[8];     /* "sha256", "sha384", "sha512" */
	char dhchap_dhgroup[12]; /* "null", "ffdhe2048" ... "ffdhe8192" */
	bool dhchap_bidirectional;
};

int nvmeof_ctrlr_get_info(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ctrlr_info *info);

/* Raw Identify (4096 bytes into @buf) and Get Log Page; blocking admin commands. */
int nvmeof_ctrlr_identify(struct nvmeof_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf);
int nvmeof_ctrlr_get_log_page(struct nvmeof_ctrlr *ctrlr, uint8_t lid, uint32_t nsid,
			      uint64_t offset, void *buf, size_t len);

/* A command for the pass-through calls: opcode, NSID and CDW2-3/10-15 (host order). */
struct nvmeof_cmd {
	uint8_t opc;
	uint32_t nsid;
	uint32_t cdw2, cdw3;
	uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

/* Admin pass-through. Data direction follows the opcode (bits 1:0). Blocking variant
 * returns 0, -errno or a positive status; @cpl (may be NULL) gets the completion. */
int nvmeof_admin_cmd_sync(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_cmd *cmd, void *buf,
			  size_t len, struct nvmeof_cpl *cpl);
int nvmeof_admin_cmd(struct nvmeof_ctrlr *ctrlr, const struct nvmeof_cmd *cmd, void *buf,
		     size_t len, nvmeof_cb cb, void *arg);

/* ---- Discovery --------------------------------------------------------------------- */
struct nvmeof_disc_entry {
	uint8_t trtype;		/* 1 rdma, 2 fc, 3 tcp, 254 loop */
	uint8_t adrfam;		/* 1 ipv4, 2 ipv6, 3 ib, 4 fc */
	uint8_t subtype;	/* 1 referral, 2 nvme, 3 current discovery */
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	uint8_t sectype;	/* TCP TSAS security type */
	char trsvcid[33];
	char traddr[257];
	char subnqn[257];
};

/* Read the whole discovery log (consistent generation). *entries is allocated; free it
 * with nvmeof_disc_free(). Works on any controller, meant for discovery controllers. */
int nvmeof_discover(struct nvmeof_ctrlr *ctrlr, struct nvmeof_disc_entry **entries,
		    unsigned int *count, uint64_t *genctr);
void nvmeof_disc_free(struct nvmeof_disc_entry *entries);
const char *nvmeof_trtype_name(uint8_t trtype);
const char *nvmeof_adrfam_name(uint8_t adrfam);
const char *nvmeof_subtype_name(uint8_t subtype);

/* ---- Namespaces -------------------------------------------------------------------- */
/* @nsid 0: the NSID named in the URI, else the first active namespace. NULL (with
 * nvmeof_last_error() set) when there is no such active namespace. */
struct nvmeof_ns *nvmeof_ctrlr_get_ns(struct nvmeof_ctrlr *ctrlr, uint32_t nsid);
/* Active namespaces in NSID order: start with @prev NULL. */
struct nvmeof_ns *nvmeof_ctrlr_next_ns(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ns *prev);

uint32_t nvmeof_ns_get_id(const struct nvmeof_ns *ns);
uint64_t nvmeof_ns_get_num_blocks(const struct nvmeof_ns *ns);
uint32_t nvmeof_ns_get_block_size(const struct nvmeof_ns *ns);

struct nvmeof_ns_info {
	uint32_t nsid;
	uint64_t nsze, ncap, nuse;
	uint32_t block_size;
	uint16_t ms;		/* metadata bytes per block */
	uint8_t nguid[16];
	uint8_t eui64[8];
	uint8_t uuid[16];
	bool has_nguid, has_eui64, has_uuid;
	uint8_t nmic;
	uint8_t dlfeat;
	uint8_t nsfeat;
};
int nvmeof_ns_get_info(const struct nvmeof_ns *ns, struct nvmeof_ns_info *info);

/* ---- Queue pairs ------------------------------------------------------------------- */
unsigned int nvmeof_ctrlr_num_qpairs(const struct nvmeof_ctrlr *ctrlr);
/* The I/O queue pairs made at connect time, @idx from 0. */
struct nvmeof_qpair *nvmeof_ctrlr_get_qpair(struct nvmeof_ctrlr *ctrlr, unsigned int idx);
/* One more I/O queue pair with @depth commands in flight (0: opts->queue_depth). */
int nvmeof_qpair_alloc(struct nvmeof_ctrlr *ctrlr, unsigned int depth,
		       struct nvmeof_qpair **qpair);
/* Disconnect and free; outstanding commands complete with -ECANCELED first. */
void nvmeof_qpair_free(struct nvmeof_qpair *qpair);

int nvmeof_qpair_get_fd(const struct nvmeof_qpair *qpair); /* -1 once failed */
/* POLLIN, plus POLLOUT while data waits to be sent; 0 once failed. */
short nvmeof_qpair_which_events(const struct nvmeof_qpair *qpair);
/* Do the socket I/O @revents allows, run timers, run completion callbacks. Returns the
 * number of callbacks run or -errno when the queue pair has failed (its commands are
 * then completed with an error). */
int nvmeof_qpair_service(struct nvmeof_qpair *qpair, short revents);
/* Non-blocking: send what can be sent, receive what has arrived, run at most @max
 * callbacks (0: all). Returns the number run or -errno as above. */
int nvmeof_qpair_process_completions(struct nvmeof_qpair *qpair, unsigned int max);
/* Milliseconds until service must run without events: 0 if callbacks are waiting,
 * the nearest command timeout otherwise, -1 for none. */
int nvmeof_qpair_timeout_ms(const struct nvmeof_qpair *qpair);
unsigned int nvmeof_qpair_outstanding(const struct nvmeof_qpair *qpair);
unsigned int nvmeof_qpair_depth(const struct nvmeof_qpair *qpair);
/* Why the queue pair failed ("" while healthy). */
const char *nvmeof_qpair_error(const struct nvmeof_qpair *qpair);

/* ---- I/O --------------------------------------------------------------------------- */
#define NVMEOF_IO_FUA (1u << 0)		 /* Force Unit Access (read, write, compare) */
#define NVMEOF_IO_LIMITED_RETRY (1u << 1)
#define NVMEOF_IO_DEALLOCATE (1u << 2)	 /* Write Zeroes: deallocate too */

/*
 * Submit an I/O. The buffers in @iov must hold at least @nblocks blocks; transfers larger
 * than the controller's MDTS are split into several commands transparently. Returns 0
 * when queued (@cb will run exactly once), -EAGAIN when the queue pair is full,
 * -EINVAL for bad arguments, -ENOTCONN once the queue pair has failed.
 */
int nvmeof_read(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba, uint32_t nblocks,
		const struct iovec *iov, int iovcnt, unsigned int flags, nvmeof_cb cb, void *arg);
int nvmeof_write(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba, uint32_t nblocks,
		 const struct iovec *iov, int iovcnt, unsigned int flags, nvmeof_cb cb, void *arg);
int nvmeof_compare(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		   uint32_t nblocks, const struct iovec *iov, int iovcnt, unsigned int flags,
		   nvmeof_cb cb, void *arg);
int nvmeof_write_zeroes(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			uint32_t nblocks, unsigned int flags, nvmeof_cb cb, void *arg);
/* Dataset Management, Attribute Deallocate, one range. */
int nvmeof_deallocate(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		      uint32_t nblocks, nvmeof_cb cb, void *arg);
int nvmeof_flush(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, nvmeof_cb cb, void *arg);
/* I/O pass-through: @cmd->nsid 0 means @ns; data direction follows the opcode. */
int nvmeof_io_cmd(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, const struct nvmeof_cmd *cmd,
		  const struct iovec *iov, int iovcnt, nvmeof_cb cb, void *arg);

/* Blocking wrappers: 0, -errno, or a positive NVMe status. */
int nvmeof_read_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		     uint32_t nblocks, void *buf, unsigned int flags);
int nvmeof_write_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		      uint32_t nblocks, const void *buf, unsigned int flags);
int nvmeof_compare_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			uint32_t nblocks, const void *buf, unsigned int flags);
int nvmeof_write_zeroes_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			     uint32_t nblocks, unsigned int flags);
int nvmeof_deallocate_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
			   uint32_t nblocks);
int nvmeof_flush_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns);
/* Block until every outstanding command on @qp has completed (callbacks run). */
int nvmeof_qpair_drain(struct nvmeof_qpair *qp);

/* ---- Registered memory ------------------------------------------------------------- */
/*
 * Memory the controller may reach directly. On NVMe/RDMA an I/O whose iovecs lie entirely
 * in registered memory is sent with keyed SGL descriptors naming the caller's buffers: the
 * controller reads write data (RDMA READ) and places read data (RDMA WRITE) there with no
 * copy. Several regions in one command use several descriptors when the controller's
 * MSDBD allows it. Other I/O goes through the library's own buffers as before. On other
 * transports these calls only keep the bookkeeping, so callers can use one code path.
 *
 * A registration covers every queue pair of @ctrlr, including those allocated later and
 * those connected again after a reconnect; up to NVMEOF_MEM_REGIONS at a time.
 *
 * The buffer rule: while a command naming registered memory is outstanding the controller
 * may write it, even after a timeout. The library reports a timed-out command only after
 * it has torn the queue's connection down, so a buffer may be reused (or unregistered)
 * once its command has completed, with success or error, or its queue pair is freed.
 * Unregister only memory no outstanding command uses.
 */
#define NVMEOF_MEM_REGIONS 64

/* Register [@buf, @buf + @len). 0, -EINVAL, -ENOSPC (table full), -EEXIST, or -errno
 * from the RDMA device. */
int nvmeof_mem_register(struct nvmeof_ctrlr *ctrlr, void *buf, size_t len);
/* Undo nvmeof_mem_register() of @buf. 0 or -ENOENT. */
int nvmeof_mem_unregister(struct nvmeof_ctrlr *ctrlr, void *buf);
/* Page-aligned, registered memory of @len bytes (zeroed); NULL with nvmeof_last_error(). */
void *nvmeof_buf_alloc(struct nvmeof_ctrlr *ctrlr, size_t len);
void nvmeof_buf_free(struct nvmeof_ctrlr *ctrlr, void *buf);

/* ---- Reconnect ----------------------------------------------------------------------- */
/*
 * When a queue pair's connection fails (the target closed it, a TermReq, a command or
 * Keep Alive timed out) the controller is reset and reconnected the way the Linux host
 * does it: every queue pair's connection is torn down, and after opts->reconnect_delay
 * seconds the admin queue connects again (Fabrics Connect, enable; for iSCSI a new login
 * with the same ISID and TSIH 0, which reinstates the session at ErrorRecoveryLevel 0),
 * then each I/O queue pair connects again the next time its owner services it.
 *
 * While the controller is not live, I/O is held: commands that were on the wire are
 * requeued and sent again, with the same data, on the new connection (a write may thus
 * reach the medium twice; block writes are idempotent, so the result is the same; a
 * Compare or Write Zeroes is equally safe, a pass-through command may not be), and new
 * submissions wait. After opts->fast_io_fail_tmo seconds of outage (if set), held and
 * new I/O completes with status Host Pathing Error (NVMEOF_SCT_PATH, SC 0x70, DNR clear:
 * another path may succeed). After opts->ctrl_loss_tmo seconds the controller is DELETED:
 * everything completes with that status and the queue pairs fail (-ENOTCONN for new
 * submissions). Admin commands are not held: they fail with -ENOTCONN while reconnecting.
 *
 * The event loop sees a queue pair without a connection: nvmeof_qpair_get_fd() is -1
 * and nvmeof_qpair_which_events() 0 until it is back (fetch the fd again after each
 * service call: it changes), nvmeof_qpair_timeout_ms() says when to call service, and
 * service returns 0, not an error, while I/O is held. A reconnect attempt blocks the
 * calling thread for at most opts->connect_timeout_ms per connection.
 */
enum nvmeof_ctrlr_state {
	NVMEOF_CTRLR_NEW,        /* nvmeof_ctrlr_connect() is bringing it up */
	NVMEOF_CTRLR_LIVE,       /* connected; I/O flows */
	NVMEOF_CTRLR_RESETTING,  /* a connection failed: queues are being torn down */
	NVMEOF_CTRLR_CONNECTING, /* waiting for the next attempt, or reconnecting */
	NVMEOF_CTRLR_DELETED,    /* gave up (ctrl_loss_tmo) or disconnected: final */
};

const char *nvmeof_ctrlr_state_name(enum nvmeof_ctrlr_state state);
enum nvmeof_ctrlr_state nvmeof_ctrlr_get_state(const struct nvmeof_ctrlr *ctrlr);

/* Called at every state change, from whichever thread serviced the queue pair that saw
 * it. It may read the state and the statistics; it must not call anything else of the
 * library. */
typedef void (*nvmeof_state_fn)(struct nvmeof_ctrlr *ctrlr, enum nvmeof_ctrlr_state old_state,
				enum nvmeof_ctrlr_state new_state, void *arg);
void nvmeof_ctrlr_set_state_fn(struct nvmeof_ctrlr *ctrlr, nvmeof_state_fn fn, void *arg);

struct nvmeof_ctrlr_stats {
	uint64_t outages;            /* connection losses (LIVE -> RESETTING) */
	uint64_t reconnects;         /* successful reconnects (back to LIVE) */
	uint64_t reconnect_attempts; /* including the failed ones */
	uint64_t requeued;           /* commands sent again after a reconnect */
	uint64_t failed_held;        /* held commands failed (fast_io_fail, ctrl loss) */
	uint64_t last_outage_ms;     /* duration of the last outage that ended */
	uint64_t total_outage_ms;    /* of every outage that ended */
	uint64_t current_outage_ms;  /* 0 while live */
};
int nvmeof_ctrlr_get_stats(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ctrlr_stats *st);
#define NVMEOF_HAVE_RECONNECT 1

/* ---- Statistics and transport settings ----------------------------------------------- */
/* Counters of a queue pair since it was connected. */
struct nvmeof_qpair_stats {
	uint64_t xlate_calls;	/* NVMe <-> SCSI translation steps (iSCSI queue pairs) */
	uint64_t xlate_ns;	/* time spent in them (one call in 16 is timed, then scaled) */
	uint64_t direct_cmds;   /* commands naming registered memory directly (NVMe/RDMA) */
	uint64_t direct_descs;  /* keyed SGL descriptors those commands carried */
};
/* Fill @st; call from the thread that uses @qp. The first call may take about 20 ms
 * (the time-stamp counter is calibrated once per process). */
int nvmeof_qpair_get_stats(const struct nvmeof_qpair *qp, struct nvmeof_qpair_stats *st);

/* iSCSI operational parameters negotiated at login (RFC 7143 section 13). */
struct nvmeof_iscsi_params {
	bool header_digest, data_digest;	/* CRC32C */
	bool immediate_data, initial_r2t;
	uint32_t first_burst_length, max_burst_length;
	uint32_t max_recv_dsl;		/* MaxRecvDataSegmentLength we declared */
	uint32_t max_xmit_dsl;		/* the target's MaxRecvDataSegmentLength */
	uint32_t max_outstanding_r2t;
};
/* The parameters of @ctrlr's first I/O session (else its admin session); -ENOTSUP for a
 * controller that is not reached over iSCSI. */
int nvmeof_ctrlr_get_iscsi_params(struct nvmeof_ctrlr *ctrlr, struct nvmeof_iscsi_params *p);
#define NVMEOF_HAVE_ISCSI_PARAMS 1

/* What the SCSI logical unit behind an iscsi:// controller reported (INQUIRY, VPD 80h,
 * 83h, B0h, B2h, READ CAPACITY, MODE SENSE): the facts its synthetic Identify data is
 * built from. */
struct nvmeof_scsi_designator {
	uint8_t type;        /* designator type: 1 T10 vendor, 2 EUI-64, 3 NAA, 8 SCSI name */
	uint8_t association; /* 0 logical unit, 1 target port, 2 target device */
	uint8_t code_set;    /* 1 binary, 2 ASCII, 3 UTF-8 */
	uint8_t len;
	uint8_t id[255];
};
#define NVMEOF_SCSI_DESIGNATORS_MAX 8
struct nvmeof_scsi_info {
	char target[224]; /* the target's iSCSI name */
	uint64_t lun;
	uint8_t peripheral_type;                  /* 0: direct-access block device */
	char vendor[9], product[17], revision[5]; /* INQUIRY, trailing spaces removed */
	char serial[256];          /* Unit Serial Number VPD page, "" when not reported */
	unsigned int ndesignators; /* Device Identification VPD page */
	struct nvmeof_scsi_designator designators[NVMEOF_SCSI_DESIGNATORS_MAX];
	uint64_t blocks;
	uint32_t block_size;
	bool write_cache, write_protected, thin, read_zeroes;
	bool has_block_limits; /* Block Limits VPD page; the counts below are in blocks, 0
				 * where the page says "no limit" or "not reported" */
	uint32_t max_transfer, optimal_transfer, optimal_granularity;
	uint32_t max_compare_write;
	uint32_t max_unmap, max_unmap_descriptors, unmap_granularity;
	uint64_t max_write_same;
};
/* -ENOTSUP for a controller that is not reached over iSCSI. */
int nvmeof_ctrlr_get_scsi_info(struct nvmeof_ctrlr *ctrlr, struct nvmeof_scsi_info *info);
#define NVMEOF_HAVE_SCSI_INFO 1

/* One target an iSCSI portal lists for SendTargets=All, once per address it gives. */
struct nvmeof_iscsi_target {
	char name[224];   /* TargetName */
	char traddr[257]; /* the address, without brackets (the portal's when none given) */
	char trsvcid[8];  /* TCP port */
	uint16_t tpgt;    /* target portal group tag, 0 when not given */
};
/*
 * Log in to the portal of @uri (iscsi://[USER%SECRET@]HOST[:PORT][/]) with a discovery
 * session, ask SendTargets=All and log out. Blocking, bounded by connect_timeout_ms of
 * @opts (NULL: defaults). 0 with *@targets allocated (free with
 * nvmeof_iscsi_targets_free()), or -errno with nvmeof_last_error() set.
 */
int nvmeof_iscsi_discover(const char *uri, const struct nvmeof_opts *opts,
			  struct nvmeof_iscsi_target **targets, unsigned int *count);
void nvmeof_iscsi_targets_free(struct nvmeof_iscsi_target *targets);
#define NVMEOF_HAVE_ISCSI_DISCOVER 1
#define NVMEOF_HAVE_QPAIR_STATS 1

/* ---- Authentication ------------------------------------------------------------------ */
/*
 * DH-HMAC-CHAP (NVMe Base 2.0 section 8.13), as the Linux host does it. When the Connect
 * response asks for authentication (AUTHREQ.ATR), every queue (admin and I/O, at connect
 * and at every reconnect) runs one transaction with Authentication Send / Receive: the
 * host offers SHA-256/384/512 and the DH groups NULL and ffdhe2048 to ffdhe8192, the
 * controller chooses. With opts.dhchap_ctrl_secret the host also checks the controller's
 * response (bidirectional), and then authenticates even when the controller does not ask.
 * Each transaction must finish within opts.connect_timeout_ms.
 *
 * Failures make nvmeof_ctrlr_connect() (or a reconnect) fail with nvmeof_last_error()
 * naming the step and the reason code:
 *   -EACCES           wrong secret: the controller answered AUTH_Failure1 "authentication
 *                     failed", or its response did not match dhchap_ctrl_secret (the host
 *                     then sends AUTH_Failure2), or it requires a secret and none is set
 *   -EPROTONOSUPPORT  no hash function or DH group in common, or secure channel
 *                     concatenation required (AUTHREQ.ASCR)
 *   -EPROTO           a malformed or unexpected message
 *   -ETIMEDOUT        the transaction took longer than connect_timeout_ms
 *   -EINVAL           a secret that is not DHHC-1 text (bad base64, length or CRC)
 */
/* Authenticate the admin queue again (host-initiated re-authentication); blocking.
 * 0 or an error as above; -EINVAL when the controller was connected without a secret. */
int nvmeof_ctrlr_reauthenticate(struct nvmeof_ctrlr *ctrlr);
#define NVMEOF_HAVE_DHCHAP 1

#ifdef __cplusplus
}
#endif

#endif
