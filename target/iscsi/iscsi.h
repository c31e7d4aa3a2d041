/* SPDX-License-Identifier: MIT */
/*
 * iSCSI front end (RFC 7143, error recovery level 0): iSCSI targets (IQNs) whose LUNs are
 * namespaces of one of our NVMe subsystems. Each session gets an in-process NVMe
 * controller (nvmf_local_connect) and every SCSI command is translated (scsi_xlate.h) into
 * NVMe commands run by the same command executor as the native NVMe/TCP path.
 *
 * Setup (main thread, before or after reactors_start()):
 *   iscsi_init(tgt);                                   once
 *   iscsi_target_add("iqn....", NULL);                  per target
 *   iscsi_target_add_lun("iqn....", 0, "nqn....", 1);   per LUN
 *   iscsi_target_set_chap(...)                          optional
 *   iscsi_portal_start(tgt, "127.0.0.1", "3260", ...)   per listening address
 * or, through the transport table: nvmf_transport_find("iscsi") after
 * iscsi_transport_register(), with an nvmf_port of trtype "iscsi" and nvmf_port_listen().
 * Teardown: iscsi_fini() (closes portals and sessions; call before nvmf_tgt_destroy()).
 */
#ifndef NVMEOF_TARGET_ISCSI_H
#define NVMEOF_TARGET_ISCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/transport.h"

struct nvmf_tgt;

#define ISCSI_DEFAULT_IQN "iqn.2026-11.io.nvmeof:default"

extern const struct nvmf_transport_ops nvmf_iscsi_transport_ops;

/* Global state for @tgt. Returns 0 or -errno. */
int iscsi_init(struct nvmf_tgt *tgt);
/* Stop listening, close every session and wait (bounded) for them to go. */
void iscsi_fini(void);
/* Make "iscsi" known to nvmf_transport_find(). */
int iscsi_transport_register(void);

/* Targets and LUN maps. A target's LUNs are namespaces of a single subsystem. */
int iscsi_target_add(const char *iqn, const char *alias);
int iscsi_target_remove(const char *iqn);
int iscsi_target_add_lun(const char *iqn, uint32_t lun, const char *subnqn, uint32_t nsid);
/*
 * CHAP for logins to @iqn: the initiator must authenticate as @user/@secret, with the
 * strongest digest both sides allow (iscsi_opts.chap_algs). With @mutual_user, the target
 * also authenticates itself when the initiator asks (CHAP_I/CHAP_C). NULL @user turns
 * authentication off. Secrets are never logged. A session that proved an older secret is
 * ended by iscsi_config_reload().
 */
int iscsi_target_set_chap(const char *iqn, const char *user, const char *secret,
			  const char *mutual_user, const char *mutual_secret);
/* The same for discovery sessions (SessionType=Discovery), on every portal. */
int iscsi_set_discovery_chap(const char *user, const char *secret, const char *mutual_user,
			     const char *mutual_secret);
/* Only these initiators may log in (none added: any initiator). */
int iscsi_target_allow_initiator(const char *iqn, const char *initiator);
/* Replace the list with @n names (0: any initiator); all or nothing. */
int iscsi_target_set_initiators(const char *iqn, const char *const *names, size_t n);

/* Listen on @addr:@port ("0" = any free port; the chosen port is written back into
 * @port_out when not NULL). Returns 0 or -errno with a message in @err. */
int iscsi_portal_start(struct nvmf_tgt *tgt, const char *addr, const char *port,
		       char *port_out, size_t port_out_len, char *err, size_t errlen);
/* Name @advertise instead of the address the initiator dialled in SendTargets answers
 * of the portal on @addr:@port (hosts behind NAT). 0, -ENOENT or -ENAMETOOLONG. */
int iscsi_portal_advertise(const char *addr, const char *port, const char *advertise);

/*
 * Quick flags: target ISCSI_DEFAULT_IQN exposing every active namespace N of @subsys as
 * LUN N-1, and a portal on @addr:@port. Returns 0 or -errno with a message in @err.
 */
struct nvmf_subsys;
int iscsi_quick_setup(struct nvmf_tgt *tgt, struct nvmf_subsys *subsys, const char *addr,
		      const char *port, char *err, size_t errlen);

/* Operational limits offered in login negotiation (defaults shown). */
struct iscsi_opts {
	uint32_t max_recv_dsl;	     /* 0 = reactor buffer size, capped at 256 KiB */
	uint32_t max_burst_length;   /* 1 MiB: capped at what one command holds
				      * (16 reactor buffers) */
	uint32_t first_burst_length; /* 64 KiB: capped at the reactor buffer size */
	uint32_t max_outstanding_r2t; /* 1 */
	bool initial_r2t;	     /* false: unsolicited data allowed */
	bool immediate_data;	     /* true */
	bool header_digest;	     /* accept CRC32C header digests (true) */
	bool data_digest;	     /* accept CRC32C data digests (true) */
	bool require_header_digest;  /* refuse sessions without CRC32C header digests */
	bool require_data_digest;    /* refuse sessions without CRC32C data digests */
	uint32_t queue_depth;	     /* commands per session, 128 */
	uint32_t chap_algs;          /* CHAP digests allowed, a bit (1 << CHAP_A) each;
				      * SHA3-256 (8) and SHA-256 (7), not MD5 or SHA-1 */
	uint32_t dataout_timeout_ms; /* an R2T (or unsolicited burst) unanswered this long
				      * ends the connection (ERL 0), 10 s; 0: no deadline */
	uint32_t nopin_interval_ms;  /* a full feature session silent this long gets a NOP-In
				      * ping, 15 s; 0: no pings */
	uint32_t nopin_timeout_ms;   /* a ping unanswered this long ends the session, 30 s */
	uint32_t max_sessions_per_initiator; /* normal sessions of one InitiatorName, 64 */
};
void iscsi_set_opts(const struct iscsi_opts *opts);
void iscsi_opts_default(struct iscsi_opts *opts);

/*
 * The configuration file's "iscsi" section (JSON text of that object), beside the
 * nvmetcli-schema sections:
 *   { "portals": [ { "addr": "0.0.0.0", "port": 3260, "advertise": "192.0.2.10" } ],
 *     "targets": [ { "iqn": "iqn....", "alias": "...",
 *                    "luns": [ { "lun": 0, "subsystem": "nqn....", "nsid": 1 } ],
 *                    "initiators": [ "iqn...." ],
 *                    "chap": { "user": "u", "secret": "s",
 *                              "mutual_user": "t", "mutual_secret": "m" } } ],
 *     "discovery_chap": { "user": "d", "secret_file": "/etc/nvmeof/disc.secret" },
 *     "options": { "first_burst_length": 65536, "max_burst_length": 1048576,
 *                  "immediate_data": true, "initial_r2t": false, "queue_depth": 128,
 *                  "header_digest": "allowed", "data_digest": "allowed",
 *                  "chap_algs": [ "SHA3-256", "SHA256" ] } }
 * (digests: "none", "allowed" or "required"; a portal's optional "advertise" is the
 * address SendTargets names, for initiators behind NAT; a secret may come from a file of
 * mode 0600 instead, "secret_file" / "mutual_secret_file"; chap_algs as open-iscsi's
 * node.session.auth.chap_algs names them, "MD5" and "SHA1" only when listed)
 * Applies targets and options; portals are started when @start_portals. Returns 0 or
 * -errno with a message in @err.
 */
int iscsi_config_apply(struct nvmf_tgt *tgt, const char *json, bool start_portals, char *err,
		       size_t errlen);
/*
 * SIGHUP: move the targets, CHAP settings (secret files read again) and options to
 * @json (the reloaded, already validated section; NULL: none). Targets no longer listed
 * are removed; sessions whose access is no longer granted end (iscsi_sessions_revoke).
 * Portals and a target's LUNs stay as they are (the configuration check refuses changes
 * to them). Returns 0 or -errno with a message in @err; *@revoked gets the number of
 * sessions ended.
 */
int iscsi_config_reload(struct nvmf_tgt *tgt, const char *json, unsigned int *revoked, char *err,
			size_t errlen);

/* Counters for the statistics socket. */
struct iscsi_stats {
	unsigned int connections;  /* open, logged in or not */
	unsigned int connecting;   /* of those, still in the login phase */
	uint64_t login_timeouts;   /* closed at the login deadline */
	uint64_t revoked;          /* sessions ended by a configuration change */
	uint64_t dataout_timeouts; /* connections ended: Data-Out not sent in time */
	uint64_t nopin_timeouts;   /* sessions ended: a NOP-In ping unanswered */
	uint64_t peer_gone;        /* stalled connections ended: the initiator had closed */
	uint64_t initiator_limit;  /* logins refused: max_sessions_per_initiator */
	uint64_t tasks_allocated;  /* task slots in memory (they grow on demand) */
};
void iscsi_get_stats(struct iscsi_stats *st);

/* ---- Sessions, for management (iscsi_mgmt.c; any thread) ------------------------------ */
struct iscsi_session_info {
	char initiator[224]; /* InitiatorName */
	char target[224];    /* TargetName */
	uint8_t isid[6];
	uint16_t tsih;
	char peer[64];                       /* the initiator's "ADDR:PORT" */
	char local_addr[64], local_port[16]; /* the portal it came in on */
	unsigned int connections;            /* MaxConnections=1: always 1 */
	bool hdigest, ddigest;               /* CRC32C digests in use */
	uint64_t read_cmds, write_cmds, other_cmds, read_bytes, write_bytes;
};
/* @cb (under the iSCSI lock: it must not call back in) for each session in full feature
 * phase (discovery sessions left out). Returns how many. */
int iscsi_list_sessions(void (*cb)(const struct iscsi_session_info *si, void *arg), void *arg);
/* End session @tsih (closed on its reactor; returns before it is gone): 0 or -ENOENT. */
int iscsi_session_disconnect(uint16_t tsih);

#endif
