/* SPDX-License-Identifier: MIT */
/*
 * Prometheus metrics: the text exposition format (version 0.0.4) of the target's
 * counters, and an HTTP server for it (libmicrohttpd, its own thread: a scrape never runs
 * on a reactor; it reads the per-reactor counters with relaxed loads and sums them).
 *
 * nvmeof-target --metrics tcp://ADDR:PORT (or "metrics" in the config file) serves GET
 * /metrics; PORT 0 picks a free port, logged as "metrics on http://ADDR:PORT/metrics".
 *
 * Families (all prefixed nvmeof_): per namespace and path (nvme_tcp, nvme_rdma, iscsi):
 * namespace_commands_total{op}, namespace_bytes_total{op}, namespace_errors_total{sct,sc},
 * namespace_latency_seconds (histogram); per namespace: namespace_outstanding_commands,
 * namespace_qos_waiting_commands, namespace_qos_delayed_commands_total; per port:
 * port_connections; per path (nvme, scsi): path_controllers, path_io_queues,
 * path_commands_total{op}, path_bytes_total{op}; per reactor: reactor_busy_seconds_total,
 * reactor_idle_seconds_total, reactor_loops_total, reactor_messages_total,
 * scsi_translation_seconds_total, scsi_commands_total; and target-wide connections,
 * tcp_connections_{accepted,rejected,closed}_total, uptime_seconds,
 * process_cpu_seconds_total; and the endpoint's own metrics_connections_refused_total and
 * metrics_requests_timed_out_total.
 */
#ifndef NVMEOF_TARGET_METRICS_H
#define NVMEOF_TARGET_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hist.h"

struct nvmf_tgt;
struct metrics_server;

/* ---- exposition writer ------------------------------------------------------------------- */
struct metrics_buf {
	char *p;
	size_t len, cap;
	bool oom; /* an allocation failed: the text is incomplete */
};

/* "# HELP" and "# TYPE" lines of a family (once, before its samples). */
void metrics_family(struct metrics_buf *b, const char *name, const char *type, const char *help);
/* One label pair for metrics_sample(): appended to @labels (",key=\"value\"", escaped). */
void metrics_label(char *labels, size_t len, const char *key, const char *value);
/* name{labels} value; @labels as built by metrics_label() (leading comma dropped). */
void metrics_sample(struct metrics_buf *b, const char *name, const char *labels, double v);
void metrics_sample_u64(struct metrics_buf *b, const char *name, const char *labels, uint64_t v);
/* name_bucket{labels,le=...} for each power of two of @h (seconds), +Inf, name_sum and
 * name_count (the +Inf bucket). */
void metrics_histogram(struct metrics_buf *b, const char *name, const char *labels,
		       const struct hist *h);
/* Every family of @tgt into @b (appended). 0 or -ENOMEM. */
int metrics_format(struct nvmf_tgt *tgt, struct metrics_buf *b);
void metrics_buf_free(struct metrics_buf *b);

/* ---- server ------------------------------------------------------------------------------ */
#define METRICS_MAX_CONNS           64   /* connections at once, all clients */
#define METRICS_DEFAULT_TIMEOUT_MS  5000 /* --metrics-timeout */
#define METRICS_DEFAULT_PER_ADDRESS 8    /* --metrics-per-address */

struct metrics_opts {
	/* A connection that has not sent a whole request within this of its accept (or of
	 * its previous reply) is closed; 0: METRICS_DEFAULT_TIMEOUT_MS. */
	uint32_t timeout_ms;
	/* Connections from one address at once; more are refused. 0: the default. */
	uint32_t per_address;
};

/* @uri: "tcp://ADDR:PORT"; @opts NULL: the defaults. NULL with a message in @err on failure
 * (also when built without libmicrohttpd). */
struct metrics_server *metrics_server_start(struct nvmf_tgt *tgt, const char *uri,
					    const struct metrics_opts *opts, char *err,
					    size_t errlen);
uint16_t metrics_server_port(const struct metrics_server *srv);
void metrics_server_stop(struct metrics_server *srv);

#endif
