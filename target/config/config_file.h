/* SPDX-License-Identifier: MIT */
/*
 * The daemon's configuration file: JSON in the schema Linux's `nvmetcli save` writes
 * (hosts, ports, subsystems with attr/namespaces/allowed_hosts, referrals, ANA groups),
 * so an existing nvmet configuration loads unchanged. Our extensions stay inside it:
 *   - a namespace device.path of "ram:SIZE" or "null:SIZE";
 *   - a port-level "advertise" address reported in the discovery log (hosts behind NAT);
 *   - a top-level "iscsi" object, kept verbatim for the iSCSI front end.
 *
 * config_load() parses and validates into a plain C model (no json-c types leak out);
 * config_apply() builds the target from it and config_reload() applies the difference
 * between two models at runtime (SIGHUP). Loading is all-or-nothing: either a complete,
 * validated model or an error naming the key path, e.g.
 *   "config.json: subsystems[0].namespaces[1].nsid: expected an integer".
 * Keys we do not know are collected as warnings; values we cannot honour are errors.
 */
#ifndef NVMEOF_TARGET_CONFIG_FILE_H
#define NVMEOF_TARGET_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_spec.h"

struct nvmf_tgt;

#define CONFIG_PATH_MAX 4096
#define CONFIG_TRADDR_MAX 256	     /* discovery log TRADDR field */
#define CONFIG_TRSVCID_MAX 32	     /* discovery log TRSVCID field */
#define CONFIG_PORTID_RESERVED 0xff00 /* portids from here up: built-in discovery ports */
#define CONFIG_DISCOVERY_TRSVCID "8009"

/* A transport address: a port's or a referral's "addr" object. */
struct config_addr {
	char trtype[16];		/* "tcp", "rdma" (referrals may also say "fc"/"loop") */
	char adrfam[16];		/* "ipv4", "ipv6", "ib", "fc", "" */
	char traddr[CONFIG_TRADDR_MAX];
	char trsvcid[CONFIG_TRSVCID_MAX];
	uint8_t treq;			/* NVMF_TREQ_SECURE_* */
	uint8_t sectype;                /* tsas: NVMF_TCP_SECTYPE_NONE or _TLS13 ("tls1.3") */
};

struct config_referral {
	char name[64];			/* nvmet's configfs directory name */
	struct config_addr addr;
	uint16_t portid;		/* addr.portid: PORTID of the referred discovery port */
	bool enable;
};

struct config_ana_group {
	uint32_t grpid;
	char state[32]; /* nvmet names: optimized, non-optimized, inaccessible,
					 * persistent-loss, change */
};

struct config_port {
	uint16_t portid;
	struct config_addr addr;
	char advertise[CONFIG_TRADDR_MAX]; /* "" = report addr.traddr */
	uint32_t inline_data_size;	/* param.inline_data_size; 0 = target default */
	uint32_t max_queue_size;	/* param.max_queue_size; 0 = not given */
	char (*subsystems)[NVME_NQN_FIELD];
	unsigned int nsubsystems;
	struct config_referral *referrals;
	unsigned int nreferrals;
	struct config_ana_group *ana_groups;
	unsigned int nana_groups;
};

#define CONFIG_QOS_HOSTS 8 /* hosts with their own QoS per namespace in a file */

struct config_ns {
	uint32_t nsid;
	bool enable;
	char path[CONFIG_PATH_MAX];	/* "ram:SIZE", "null:SIZE" or an absolute path */
	bool has_nguid, has_uuid, has_eui64; /* all-zero NGUID/UUID = not given */
	uint8_t nguid[16];
	uint8_t uuid[16];
	uint8_t eui64[8];
	uint32_t ana_grpid;		/* 0 = not given (group 1) */
	bool buffered_io;               /* nvmet's buffered_io: page cache, not O_DIRECT */
	/* Our extension "qos": {"rw_ios_per_sec": N, "r_mbytes_per_sec": M, ...}; 0 = none;
	 * "hosts": [{"host": NQN, "rw_ios_per_sec": N, ...}] limits one host's commands on
	 * the namespace as well. Changed by a reload without re-creating the namespace. */
	struct config_qos {
		uint64_t rw_ios_per_sec, r_ios_per_sec, w_ios_per_sec;
		uint64_t rw_mbytes_per_sec, r_mbytes_per_sec, w_mbytes_per_sec;
		unsigned int nhosts;
		struct config_host_qos {
			char host[NVME_NQN_FIELD];
			uint64_t rw_ios_per_sec, r_ios_per_sec, w_ios_per_sec;
			uint64_t rw_mbytes_per_sec, r_mbytes_per_sec, w_mbytes_per_sec;
		} hosts[CONFIG_QOS_HOSTS];
	} qos;
};

struct config_subsys {
	char nqn[NVME_NQN_FIELD];
	bool allow_any_host;
	char serial[21];		/* "" = the target makes one up */
	char model[41];			/* "" = the target's default */
	char version[16];		/* attr.version as written; informational */
	uint16_t cntlid_min, cntlid_max; /* 0/0 = target default */
	uint16_t qid_max;		/* attr.qid_max; 0 = not given */
	struct config_ns *namespaces;
	unsigned int nnamespaces;
	char (*allowed_hosts)[NVME_NQN_FIELD];
	unsigned int nallowed_hosts;
};

/* DH-HMAC-CHAP settings of a host (hosts[].dhchap, the attributes nvmetcli saves from
 * configfs), checked at load and enforced by the target (core/nvmf.h,
 * nvmf_tgt_set_host_keys()); saved only to files of mode 0600, never logged. A secret may
 * instead come from a file ("key_file", "ctrl_key_file": mode 0600 or stricter), read at
 * load (and again on SIGHUP) into key/ctrl_key; the path is what is saved then. */
#define CONFIG_KEY_MAX 256
struct config_host_key {
	char nqn[NVME_NQN_FIELD];
	char key[CONFIG_KEY_MAX];       /* "DHHC-1:..." or "" */
	char ctrl_key[CONFIG_KEY_MAX];  /* bidirectional authentication, or "" */
	char hash[16];                  /* "hmac(sha256)", "hmac(sha384)", "hmac(sha512)" or "" */
	char dhgroup[32];               /* "null", "ffdhe2048" ... "ffdhe8192" or "" */
	char key_file[CONFIG_PATH_MAX]; /* where key came from, or "" */
	char ctrl_key_file[CONFIG_PATH_MAX]; /* where ctrl_key came from, or "" */
};

/* A host's NVMe/TCP TLS PSK (hosts[].psk or hosts[].psk_file), checked at load, kept as
 * its interchange text (wiped on free, saved only with secrets) and never logged. */
struct config_host_psk {
	char nqn[NVME_NQN_FIELD];
	char psk[CONFIG_KEY_MAX];       /* "NVMeTLSkey-1:..." (read from psk_file if given) */
	char psk_file[CONFIG_PATH_MAX]; /* as written, "" when the key was inline */
};

struct tgt_config {
	char path[CONFIG_PATH_MAX];	/* file it came from, absolute (@name for a string) */
	struct config_port *ports;
	unsigned int nports;
	struct config_subsys *subsystems;
	unsigned int nsubsystems;
	char (*hosts)[NVME_NQN_FIELD];
	unsigned int nhosts;
	struct config_host_key *host_keys; /* hosts that have a dhchap key, by NQN */
	unsigned int nhost_keys;
	struct config_host_psk *host_psks; /* hosts that have a TLS PSK */
	unsigned int nhost_psks;
	char *iscsi_json;		/* the "iscsi" object as JSON text, NULL if absent */
	char **warnings;		/* "NAME: key.path: message" lines */
	unsigned int nwarnings;
	/* Our extension: a top-level "limits" object (read at start; 0 = not given, the
	 * target default or the command line applies): max_connections, max_queue_depth,
	 * in_capsule_size, max_io_size. */
	struct config_limits {
		uint32_t max_connections;      /* established, 1..1000000 */
		uint32_t max_connecting;       /* not yet through Connect, 1..1000000 */
		uint32_t max_host_connections; /* queues per host NQN, 1..1000000 */
		uint32_t r2t_timeout_ms;       /* "r2t_timeout" seconds, 0..3600 */
		bool r2t_timeout_set;
		uint32_t connect_timeout_ms; /* "connect_timeout" seconds, 0..3600 */
		bool connect_timeout_set;
		uint32_t auth_timeout_ms; /* "auth_timeout" seconds, 0..600: DH-HMAC-CHAP */
		bool auth_timeout_set;
		uint32_t auth_threads;          /* DH-HMAC-CHAP work threads, 1..64 */
		uint32_t auth_max_pending;      /* its pending jobs in all, 1..4096 */
		uint32_t auth_max_pending_host; /* ... of one host NQN, 1..4096 */
		uint32_t auth_max_pending_addr; /* ... from one peer address, 1..4096 */
		uint32_t login_timeout_ms;      /* "login_timeout" seconds (iSCSI), 0..3600 */
		bool login_timeout_set;
		uint32_t max_queue_depth;	/* I/O queue entries, 2..4096 */
		uint32_t in_capsule_size;	/* I/O queues, multiple of 16 up to 1 MiB */
		bool in_capsule_set;
		uint32_t max_io_size;		/* MDTS bytes, power of 2, 4 KiB..4 MiB */
		uint32_t tcp_zerocopy_min; /* NVMe/TCP MSG_ZEROCOPY threshold, 0 (off)..64 MiB */
		bool tcp_zerocopy_set;
		/* read at start only: */
		uint32_t max_control_connections; /* control socket clients, 1..1024 */
		uint32_t metrics_timeout_ms;      /* "metrics_timeout" seconds, 1..600 */
		uint32_t metrics_per_address;     /* metrics connections per address, 1..64 */
	} limits;
	/* Our extension: "metrics": "tcp://ADDR:PORT", the Prometheus endpoint ("" = none;
	 * --metrics overrides; read at start). */
	char metrics[300];
};

/*
 * Read, parse and validate @path. On success *@out is a new model (free with
 * config_free()) and 0 is returned; warnings are in (*out)->warnings and also logged.
 * On failure returns -errno (-ENOENT, -EINVAL, -ENOTSUP, ...) with a one-line message
 * in @err and *@out untouched.
 */
int config_load(const char *path, struct tgt_config **out, char *err, size_t errlen);
/* Same from text in memory; @name is used in messages (and as cfg->path). */
int config_load_string(const char *text, const char *name, struct tgt_config **out, char *err,
		       size_t errlen);
void config_free(struct tgt_config *cfg);
/* Log every warning of @cfg (config_load() already does). */
void config_log_warnings(const struct tgt_config *cfg);

/* Lookups in a loaded model; NULL when absent. */
const struct config_port *config_find_port(const struct tgt_config *cfg, uint16_t portid);
const struct config_subsys *config_find_subsys(const struct tgt_config *cfg, const char *nqn);
const struct config_ns *config_find_ns(const struct config_subsys *s, uint32_t nsid);
const struct config_host_key *config_find_host_key(const struct tgt_config *cfg,
						   const char *hostnqn);
/* Were @hostnqn's authentication keys (DH-HMAC-CHAP secrets, hash, group) added, removed
 * or changed between @old and @cfg? A reload ends such a host's live controllers: they
 * authenticated with what is no longer configured. */
bool config_host_keys_changed(const struct tgt_config *old, const struct tgt_config *cfg,
			      const char *hostnqn);
const struct config_host_psk *config_find_host_psk(const struct tgt_config *cfg,
						   const char *hostnqn);
/* Whether @hostnqn's TLS PSK differs between @old and @cfg (added, changed or removed). */
bool config_host_psk_changed(const struct tgt_config *old, const struct tgt_config *cfg,
			     const char *hostnqn);

/*
 * Build the target from @cfg: subsystems (attributes, allowed hosts, enabled namespaces),
 * ports (listening, with their subsystems), referrals, and the default discovery
 * listeners (config_add_default_discovery_ports()). All-or-nothing: on failure whatever
 * was created is torn down again and -errno is returned with a message in @err.
 */
int config_apply(struct nvmf_tgt *tgt, const struct tgt_config *cfg, char *err, size_t errlen);

/*
 * Move the running target from @old (what config_apply() or the last reload applied) to
 * @new_cfg: add/remove namespaces (connected hosts get a Namespace Attribute Changed
 * event), ports, subsystems, allowed hosts, referrals. Changes that cannot be made live
 * (a port's address or parameters, a subsystem's serial/model/controller ID range, the
 * iscsi section) are refused before anything is touched: -EBUSY with a message naming
 * the key, and the target keeps running on @old. Returns 0 when @new_cfg is in effect.
 */
int config_reload(struct nvmf_tgt *tgt, const struct tgt_config *old,
		  const struct tgt_config *new_cfg, char *err, size_t errlen);

/*
 * SIGHUP: re-read the file *@cur came from and move the target to it. On success *@cur is
 * replaced by the new model (the old one freed) and 0 returned; on any failure (file
 * unreadable or invalid, change refused or failed) the target and *@cur are unchanged
 * and -errno is returned with a message in @err. Warnings of the new file are logged.
 */
int config_reload_file(struct nvmf_tgt *tgt, struct tgt_config **cur, char *err,
		       size_t errlen);

/* ---- config_save.c ---------------------------------------------------------------------- */
/* An empty model (no ports, subsystems or hosts) named @name; NULL on ENOMEM. */
struct tgt_config *config_new_empty(const char *name);
/* A deep copy of @cfg without its warnings; 0 or -ENOMEM. */
int config_dup(const struct tgt_config *cfg, struct tgt_config **out);
/* Whether @cfg holds a DH-HMAC-CHAP secret. */
bool config_has_secrets(const struct tgt_config *cfg);
/*
 * @cfg as nvmetcli JSON that config_load() reads back into the same model (a malloc'd,
 * newline-terminated string in *@out). Secrets are left out unless @with_secrets.
 */
int config_save_string(const struct tgt_config *cfg, bool with_secrets, char **out);
/*
 * Write @cfg, secrets included, to @path: a temporary file next to it (created 0600,
 * widened to 0644 only when there is no secret in it), synced, then renamed over @path,
 * so a reader sees the old or the new file, never half of one. 0 or -errno with @err set.
 */
int config_save_file(const struct tgt_config *cfg, const char *path, char *err, size_t errlen);

/*
 * Give every distinct TCP listen address a discovery-only listener on port 8009 (the
 * port `nvme discover` dials without -s), unless a port of the target already listens on
 * 8009 there. Wildcard addresses (0.0.0.0, ::) cover every specific address of their
 * family. Listeners that no longer have a TCP port beside them are removed, so it is also
 * called after a reload. A listener that cannot bind (8009 taken by another process) is
 * skipped with a warning. Returns 0 or -errno (allocation failure) with @err set.
 */
int config_add_default_discovery_ports(struct nvmf_tgt *tgt, char *err, size_t errlen);
/* Off (nvmeof-target -c FILE --discovery-port 0): the call above adds nothing. */
void config_set_default_discovery(bool on);

#endif
