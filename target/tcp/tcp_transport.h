/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP transport: its ops table (registered by the daemon) and what the daemon's
 * main() and the stats interface use beyond it.
 */
#ifndef NVMEOF_TARGET_TCP_TRANSPORT_H
#define NVMEOF_TARGET_TCP_TRANSPORT_H

#include <stdint.h>

#include "core/transport.h"

extern const struct nvmf_transport_ops nvmf_tcp_transport_ops;

/* States of the per-request and PDU receive machines (tcp_internal.h), for counting. */
#define NVMF_TCP_REQ_NSTATES 8
#define NVMF_TCP_RX_NSTATES  5

/* Per-connection counters (plain increments on the owning reactor). */
struct nvmf_tcp_conn_stats {
	uint64_t pdus_rx, pdus_tx;
	uint64_t bytes_rx, bytes_tx;
	uint64_t recv_calls, send_calls;
	uint64_t hdgst_errors, ddgst_errors;
	uint64_t term_reqs_tx;
	uint64_t zc_sends;       /* sendmsg calls with MSG_ZEROCOPY */
	uint64_t zc_completions; /* of those, confirmed by the kernel */
	uint64_t zc_copied;      /* of those, confirmed as copied anyway (loopback, no SG) */
	uint64_t c2h_mapped;     /* reads whose data went out from namespace memory, not copied */
	uint64_t share_waits;    /* times a queue waited for its own or its host's pool share */
	uint64_t r2t_timeouts;   /* queues terminated: R2T data not in by --r2t-timeout */
	uint64_t paused_closes;  /* paused queues closed because the peer had gone */
	uint64_t req_state_entries[NVMF_TCP_REQ_NSTATES]; /* times a request entered each */
	uint64_t rx_state_entries[NVMF_TCP_RX_NSTATES];   /* times the receive machine did */
};

/* Transport-wide counters (relaxed atomics). */
struct nvmf_tcp_stats {
	uint64_t accepted;                 /* connections accepted */
	uint64_t rejected;                 /* refused: connection limit or no memory */
	uint64_t closed;                   /* connections fully torn down */
	uint64_t fatal;                    /* connections ended by a C2HTermReq */
	uint64_t connect_timeouts;         /* closed for not finishing ICReq + Connect in time */
	unsigned int live;                 /* connections not yet torn down */
	unsigned int connecting;           /* of which not yet through Connect */
	struct nvmf_tcp_conn_stats totals; /* every connection since start, live and gone */
};

void nvmf_tcp_get_stats(struct nvmf_tcp_stats *st);

/* Names of the states counted above ("?" out of range). */
const char *nvmf_tcp_req_state_name(unsigned int s);
const char *nvmf_tcp_rx_state_name(unsigned int s);

/* Main thread, at shutdown: close every connection on every reactor (requests in the
 * backend still complete), then wait up to @timeout_ms for the teardown to finish.
 * Returns 0, or -ETIMEDOUT with connections still alive. */
int nvmf_tcp_close_all(unsigned int timeout_ms);

#endif
