/* SPDX-License-Identifier: MIT */
/* nvmeof-target command line: parsing and validation (no side effects), and --help. */
#ifndef NVMEOF_TARGET_CLI_OPTS_H
#define NVMEOF_TARGET_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reactor/reactor.h"
#include "common/nvme_spec.h"
#include "common/uri.h"

#define CLI_MAX_NS               64
#define CLI_MAX_LISTEN           16
#define CLI_MAX_HOSTS            64
#define CLI_DEFAULT_LISTEN       "tcp://127.0.0.1:4420"
#define CLI_DEFAULT_ISCSI_LISTEN "iscsi://127.0.0.1:3260"
#define CLI_DEFAULT_NS           "ram:1G"
#define CLI_STATE_DIR            "/var/lib/nvmeof"

struct cli_opts {
	const char *config;         /* -c FILE; excludes the quick-setup flags below */
	const char *ns[CLI_MAX_NS]; /* --ns (default one CLI_DEFAULT_NS) */
	unsigned int nns;
	uint32_t block_size;                      /* --block-size; 0 = backend default */
	const char *nqn;                          /* --nqn (default NVMF_DEFAULT_NQN) */
	struct uri_listen listen[CLI_MAX_LISTEN]; /* --listen (default CLI_DEFAULT_LISTEN) */
	unsigned int nlisten;
	unsigned int discovery_port;      /* --discovery-port; 0 = none; default 8009 */
	const char *hosts[CLI_MAX_HOSTS]; /* --allow-host; none = any host */
	unsigned int nhosts;
	/* --dhchap-key / --dhchap-ctrl-key HOSTNQN=SECRET (or HOSTNQN=/PATH, a file of mode
	 * 0600): the host must authenticate (DH-HMAC-CHAP) and is allowed like --allow-host. */
	struct cli_dhchap {
		char hostnqn[NVME_NQN_FIELD];
		const char *key, *ctrl_key; /* "DHHC-1:NN:...:" or "/path"; NULL: none */
	} dhchap[CLI_MAX_HOSTS];
	unsigned int ndhchap;
	const char *dhchap_hash;    /* --dhchap-hash hmac(sha256|sha384|sha512) */
	const char *dhchap_dhgroup; /* --dhchap-dhgroup null|ffdhe2048..ffdhe8192 */
	uint32_t auth_timeout_ms;   /* --auth-timeout, when auth_timeout_set */
	bool auth_timeout_set;
	uint32_t auth_threads;                    /* --auth-threads; 0: not given */
	uint32_t auth_max_pending;                /* --auth-max-pending; 0: not given */
	uint32_t auth_max_pending_host;           /* --auth-max-pending-host; 0: not given */
	uint32_t auth_max_pending_addr;           /* --auth-max-pending-addr; 0: not given */
	const char *tls_psk_files[CLI_MAX_HOSTS]; /* --tls-psk-file HOSTNQN=PATH */
	unsigned int ntls_psk_files;

	unsigned int reactors;    /* --reactors; 0 = one per online CPU */
	enum reactor_pin pin;     /* --pin / --no-pin */
	enum reactor_poll poll;   /* --poll (default REACTOR_POLL_ADAPTIVE) */
	unsigned int poll_max_us; /* --poll-max-us; 0 = default */
	uint32_t in_capsule;      /* --in-capsule; 0 with !in_capsule_set = default */
	bool in_capsule_set;
	uint32_t max_queue_depth;  /* --max-queue-depth; 0 = default */
	uint32_t max_io_size;      /* --max-io-size; 0 = default */
	uint32_t tcp_zerocopy_min; /* --tcp-zerocopy-min, with tcp_zerocopy_set */
	bool tcp_zerocopy_set;

	int log_level; /* enum log_level, or -1 for the default */
	bool daemon;   /* -d: detach */
	const char *pidfile;
	bool syslog;
	bool help, version;
	const char *state_dir;    /* --state-dir DIR (default CLI_DEFAULT_STATE_DIR) */
	const char *stats_socket; /* --stats-socket PATH: statistics server (stats.h) */
	const char *metrics;      /* --metrics tcp://ADDR:PORT: Prometheus endpoint (metrics.h) */
	uint32_t max_connections; /* --max-connections; 0 = default (4096) */
	uint32_t max_connecting;  /* --max-connecting; 0 = default (1024) */
	uint32_t max_host_connections; /* --max-host-connections; 0 = default (1024) */
	uint32_t r2t_timeout_ms;       /* --r2t-timeout, when r2t_timeout_set */
	bool r2t_timeout_set;
	uint32_t connect_timeout_ms; /* --connect-timeout, when connect_timeout_set */
	bool connect_timeout_set;
	uint32_t login_timeout_ms; /* --login-timeout, when login_timeout_set */
	bool login_timeout_set;
	bool unsafe_ignore_flush; /* --unsafe-ignore-flush (hidden): bdev_file_unsafe_ignore_flush */
	const char *control_socket; /* --control-socket PATH; NULL = the default (control.h) */
	bool no_control_socket;     /* --no-control-socket */
	const char *control_group;  /* --control-group NAME: may use the control socket */
	uint32_t max_control_connections; /* --max-control-connections; 0 = default (16) */
	uint32_t metrics_timeout_ms;      /* --metrics-timeout; 0 = default (5 s) */
	uint32_t metrics_per_address;     /* --metrics-per-address; 0 = default (8) */
	const char *log_file; /* --log-file PATH; with -d and no --syslog: the default */
};

#define CLI_DEFAULT_LOG_FILE  "/var/log/nvmeof-target.log"
#define CLI_DEFAULT_STATE_DIR "/var/lib/nvmeof"

/*
 * Parse @argv into @o. Returns 0, or -EINVAL with a one-line message in @err naming the
 * flag and what is wrong. Defaults are filled in (listen address, namespace, NQN).
 */
int cli_parse(int argc, char **argv, struct cli_opts *o, char *err, size_t errlen);
void cli_usage(FILE *f);

#endif
