/* SPDX-License-Identifier: MIT */
/*
 * Listener and target URIs, shared by the daemon's flags and the initiator:
 *
 *   listener:  tcp://ADDR:PORT  rdma://ADDR:PORT  iscsi://ADDR:PORT
 *              (IPv6 in brackets; default ports 4420, 4420, 3260)
 *   target:    nvme+tcp://HOST[:PORT][/SUBSYS-NQN[/NSID]]
 *              nvme+rdma://HOST[:PORT][/SUBSYS-NQN[/NSID]]
 *              iscsi://[USER%SECRET@]HOST[:PORT]/TARGET-IQN/LUN
 *
 * An NVMe target URI without an NQN (or with the discovery NQN) names the discovery
 * controller and defaults to port 8009; otherwise the port defaults to 4420. The NQN runs
 * to the next '/' and is percent-decoded. A missing NSID is 0: "the first active one".
 * Parsers return 0 or -EINVAL with a one-line message in @err (when @err is not NULL).
 */
#ifndef NVMEOF_URI_H
#define NVMEOF_URI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URI_HOST_MAX 256	/* bytes including the NUL */
#define URI_NAME_MAX 256	/* NQN / IQN, bytes including the NUL (NVME_NQN_FIELD) */
#define URI_CRED_MAX 256

#define URI_PORT_NVME 4420
#define URI_PORT_NVME_DISCOVERY 8009
#define URI_PORT_ISCSI 3260

enum uri_transport {
	URI_TRANSPORT_TCP,	/* NVMe/TCP */
	URI_TRANSPORT_RDMA,	/* NVMe/RDMA */
	URI_TRANSPORT_ISCSI,	/* iSCSI over TCP */
};

/* A listen address: "tcp://127.0.0.1:4420". */
struct uri_listen {
	enum uri_transport transport;
	bool ipv6;			/* addr was bracketed (and is an IPv6 literal) */
	char addr[URI_HOST_MAX];	/* without brackets */
	uint16_t port;			/* 0 only when written explicitly (any free port) */
	bool tls;                       /* tls://: NVMe/TCP with TLS 1.3 required */
};

/* A remote target: "nvme+tcp://10.0.0.1/nqn.../1" or "iscsi://10.0.0.1/iqn.../0". */
struct uri_target {
	enum uri_transport transport;
	bool ipv6;
	char host[URI_HOST_MAX];	/* without brackets */
	uint16_t port;
	char name[URI_NAME_MAX];	/* subsystem NQN or target IQN, percent-decoded */
	bool discovery;			/* NVMe: the discovery controller (NQN omitted or given) */
	uint32_t nsid;			/* NVMe: 0 = first active namespace */
	uint64_t lun;			/* iSCSI */
	char user[URI_CRED_MAX];	/* iSCSI CHAP, "" when absent */
	char secret[URI_CRED_MAX];
};

int uri_parse_listen(const char *s, struct uri_listen *out, char *err, size_t errlen);
int uri_parse_target(const char *s, struct uri_target *out, char *err, size_t errlen);

/* The scheme of a listener transport: "tcp", "rdma", "iscsi". */
const char *uri_transport_name(enum uri_transport t);

/* "tcp://[::1]:4420" into @buf; returns snprintf()'s result. */
int uri_format_listen(char *buf, size_t len, const struct uri_listen *u);

#endif
