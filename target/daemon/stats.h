/* SPDX-License-Identifier: MIT */
/*
 * Target statistics for operators and for nvmeof-bench.
 *
 * Counters:
 *   - per reactor: CPU time of its thread, loop iterations, messages, and the time spent on
 *     the SCSI side of the iSCSI path (one command in 16 timed in full, at random:
 *     reactor/xlate_timer.h), and the reads and writes of the NVMe over Fabrics queue
 *     pairs it serves (so that a benchmark sees each reactor's share of the I/O);
 *   - per path (native NVMe over Fabrics, and SCSI through iSCSI): controllers and I/O
 *     queues of the live controllers; commands and bytes since start, of the live
 *     controllers and those gone (from the core's queue pair counters);
 *   - the NVMe/TCP transport's connection counters and the process CPU time.
 *
 * The stats server answers on a UNIX stream socket (nvmeof-target --stats-socket PATH):
 * every line a client sends ("stats", or an empty line) gets one line of JSON back with a
 * snapshot of all counters (see stats_format_json()). It runs on the main thread's event
 * loop; reading the counters never stops a reactor.
 */
#ifndef NVMEOF_TARGET_STATS_H
#define NVMEOF_TARGET_STATS_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "reactor/reactor.h"
#include "reactor/xlate_timer.h"
#include "core/nvmf.h"
#include "tcp/tcp_transport.h"

struct nvmf_tgt;
struct nvmf_qpair_stats;
struct stats_server;

#define STATS_MAX_REACTORS 64 /* reactors listed one by one in a snapshot */
#define STATS_JSON_MAX     32768 /* a snapshot's JSON line fits in this (widest: about 28K) */

/* ---- translation timing ------------------------------------------------------------------ */
/* The per-command sampler lives beside the reactors (reactor/xlate_timer.h), where the
 * iSCSI front end reaches it; the calibration and the estimate are here. */

/* Ticks per second of stats_ticks(), measured against CLOCK_MONOTONIC (the first call
 * takes about 20 ms; later calls refine the figure over the time since then). */
double stats_tick_hz(void);
/* Ticks between two back-to-back stats_ticks() reads (median): the bias of a timed call. */
uint64_t stats_tick_overhead(void);
/* Measured CPU cost of the probes of one SCSI command on this thread, ns: its start and
 * release and STATS_PROBE_SPANS spans, averaged over timed and untimed commands (best of a
 * few rounds). */
#define STATS_PROBE_SPANS 6
double stats_probe_cost_ns(void);

/* SCSI-side time of @ios commands from the @sampled ones timed in full: their @ticks over
 * @spans spans, less @overhead ticks per span. */
uint64_t stats_xlate_estimate_ns(uint64_t ticks, uint64_t spans, uint64_t sampled, uint64_t ios,
				 double hz, uint64_t overhead);

/* ---- snapshots ------------------------------------------------------------------------------ */
struct stats_path {
	uint64_t ctrlrs;    /* live controllers */
	uint64_t io_queues; /* their connected I/O queues */
	uint64_t read_cmds, write_cmds, other_cmds;
	uint64_t read_bytes, write_bytes;
};

struct stats_reactor {
	uint64_t cpu_ns;
	uint64_t loops, msgs;
	uint64_t xlate_ns;      /* SCSI-side time of those commands (estimated from the sample) */
	uint64_t xlate_calls;   /* SCSI commands started (JSON "xlate_calls") */
	uint64_t xlate_sampled; /* of which timed in full */
	/* --poll adaptive: iterations with events, spinning ones without, returns to sleep */
	uint64_t poll_events, poll_empty, poll_sleeps;
	/* reads and writes of the NVMe over Fabrics queue pairs it serves now (those of
	 * closed connections drop out; iSCSI's are xlate_calls) */
	uint64_t fabric_io_cmds;
};

/* Commands through one port: its live connections (admin and I/O queues), and the I/O
 * commands it refused for the ANA state of their namespace's group. */
#define STATS_MAX_PORTS 16
struct stats_port {
	uint16_t portid;
	char trsvcid[32];
	unsigned int qpairs;
	struct nvmf_qpair_stats io;
	uint64_t ana_refused;
	uint64_t plain_refused;
};

/* NVMe/RDMA transport counters (none in a build without NVMe/RDMA: @present false). */
struct stats_rdma {
	bool present;
	uint64_t accepted, rejected, closed;
	uint64_t connect_timeouts; /* closed for not finishing Connect in time */
	unsigned int live;         /* queue pairs not yet torn down */
	unsigned int connecting;   /* of which not yet through Connect */
	uint64_t registered_bytes; /* capsule and response buffers registered now */
};

struct stats_snapshot {
	uint64_t time_ns;	 /* CLOCK_MONOTONIC when taken */
	uint64_t uptime_ns;	 /* since the target was created */
	uint64_t process_cpu_ns; /* every thread of the daemon (user + system) */
	unsigned int nreactors;	 /* reactors running (reactor[] holds the first 64) */
	struct stats_reactor reactor[STATS_MAX_REACTORS];
	struct stats_reactor total; /* sums over all reactors */
	double tick_hz;
	double probe_ns;          /* cost of the probes of one SCSI command */
	double tick_overhead_ns;  /* taken off each timed call */
	struct stats_path nvme;	  /* native: controllers with a fabric admin queue */
	struct stats_path scsi;	  /* controllers of in-process front ends (iSCSI sessions) */
	unsigned int connections; /* queue pairs bound to the target, all transports */
	uint64_t host_conn_refused; /* Connects refused at max_host_connections */
	struct nvmf_tcp_stats tcp;
	struct stats_rdma rdma;
	struct nvmf_auth_stats auth; /* DH-HMAC-CHAP's Diffie-Hellman jobs */
	unsigned int nports;         /* ports listed in port[] (discovery-only ones left out) */
	struct stats_port port[STATS_MAX_PORTS];
};

/* Take a snapshot of @tgt (main thread or any thread; takes the core's list locks briefly). */
void stats_collect(struct nvmf_tgt *tgt, struct stats_snapshot *snap);
/* Fold the counters of one controller into the path it belongs to (stats_collect's step;
 * exposed for the unit tests). */
void stats_path_add(struct stats_path *p, const struct nvmf_qpair_stats *qs,
		    unsigned int io_queues);
/* Add the counters of controllers already gone (no controller or queue counted). */
void stats_path_add_retired(struct stats_path *p, const struct nvmf_qpair_stats *qs);
/* One line of JSON (with the trailing newline) into @buf; returns its length, or -ENOSPC. */
int stats_format_json(const struct stats_snapshot *snap, char *buf, size_t len);

/* ---- the socket server ------------------------------------------------------------------- */
/*
 * Listen on the UNIX socket @path (an existing socket file there is replaced, any other
 * file is an error) and serve snapshots of @tgt from @loop. Returns the server, or NULL
 * with a message in @err.
 */
struct stats_server *stats_server_start(struct ev_loop *loop, struct nvmf_tgt *tgt,
					const char *path, char *err, size_t errlen);
/* Close every client and the listening socket, and remove the socket file. */
void stats_server_stop(struct stats_server *srv);

#endif
