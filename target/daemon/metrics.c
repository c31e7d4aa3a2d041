/* SPDX-License-Identifier: MIT */
/* Prometheus metrics: exposition writer, collection, and the HTTP endpoint (metrics.h). */
#include "config.h"

#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#ifdef HAVE_MHD
#include <microhttpd.h>
#endif

#include "common/log.h"
#include "bdev/bdev.h"
#include "common/uri.h"
#include "core/nvmf.h"
#include "stats.h"

#define LABELS_MAX 1024

/* ---- writer ---------------------------------------------------------------------------------- */
static void mput(struct metrics_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mput(struct metrics_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 65536;
		char *p;

		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

void metrics_buf_free(struct metrics_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void metrics_family(struct metrics_buf *b, const char *name, const char *type, const char *help)
{
	mput(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_label(char *labels, size_t len, const char *key, const char *value)
{
	size_t off = strlen(labels);

	if (off + strlen(key) + 4 >= len)
		return;
	off += (size_t)snprintf(labels + off, len - off, ",%s=\"", key);
	for (const char *s = value; *s && off + 3 < len; s++) {
		/* the format's three escapes: backslash, double quote, line feed */
		if (*s == '\\' || *s == '"') {
			labels[off++] = '\\';
			labels[off++] = *s;
		} else if (*s == '\n') {
			labels[off++] = '\\';
			labels[off++] = 'n';
		} else {
			labels[off++] = *s;
		}
	}
	if (off + 2 <= len) {
		labels[off++] = '"';
		labels[off] = '\0';
	} else {
		labels[len - 1] = '\0';
	}
}

static void put_name(struct metrics_buf *b, const char *name, const char *labels, const char *extra)
{
	const char *l = labels && *labels == ',' ? labels + 1 : labels ? labels : "";
	bool any = *l || (extra && *extra);

	mput(b, "%s%s%s%s%s%s", name, any ? "{" : "", l, *l && extra && *extra ? "," : "",
	     extra ? extra : "", any ? "}" : "");
}

void metrics_sample(struct metrics_buf *b, const char *name, const char *labels, double v)
{
	put_name(b, name, labels, NULL);
	mput(b, " %.17g\n", v);
}

void metrics_sample_u64(struct metrics_buf *b, const char *name, const char *labels, uint64_t v)
{
	put_name(b, name, labels, NULL);
	mput(b, " %llu\n", (unsigned long long)v);
}

void metrics_histogram(struct metrics_buf *b, const char *name, const char *labels,
		       const struct hist *h)
{
	char n[160], le[48];
	uint64_t cum = 0;

	snprintf(n, sizeof(n), "%s_bucket", name);
	for (unsigned int i = 0; i < HIST_NBUCKETS - 1; i++) {
		cum += h->bucket[i];
		/* bucket 0, then the end of each octave: every bound a power of two (ns) */
		if (i != 0 && (i - 1) % HIST_SUB != HIST_SUB - 1)
			continue;
		snprintf(le, sizeof(le), "le=\"%.9g\"", (double)hist_bucket_limit(i) / 1e9);
		put_name(b, n, labels, le);
		mput(b, " %llu\n", (unsigned long long)cum);
	}
	cum += h->bucket[HIST_NBUCKETS - 1];
	put_name(b, n, labels, "le=\"+Inf\"");
	mput(b, " %llu\n", (unsigned long long)cum);
	snprintf(n, sizeof(n), "%s_sum", name);
	metrics_sample(b, n, labels, (double)h->sum_ns / 1e9);
	snprintf(n, sizeof(n), "%s_count", name);
	metrics_sample_u64(b, n, labels, cum);
}

/* ---- collection ------------------------------------------------------------------------------ */
struct ns_snap {
	char nqn[NVME_NQN_FIELD];
	uint32_t nsid;
	uint64_t outstanding, qos_waiting, qos_delayed;
	uint64_t bounced; /* file namespace, O_DIRECT: requests copied to aligned memory */
	struct nvmf_ns_iostat_sum io[NVMF_NPATHS];
};

struct port_snap {
	uint16_t portid;
	char trtype[16], traddr[256], trsvcid[32];
	unsigned int conns;
};

static const char *const io_op[NVMF_NIO_CLASSES] = { "read", "write", "other" };

static int collect_ns(struct nvmf_tgt *tgt, struct ns_snap **out, unsigned int *count)
{
	struct ns_snap *v = NULL;
	unsigned int n = 0, cap = 0;
	struct nvmf_subsys *s;
	int rc = 0;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(s, &tgt->subsystems, link)
	{
		if (s->type == NVMF_SUBSYS_DISCOVERY)
			continue;
		pthread_mutex_lock(&s->lock);
		for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES && !rc; nsid++) {
			struct nvmf_ns *ns = s->ns[nsid];

			if (!ns)
				continue;
			if (n == cap) {
				struct ns_snap *nv = realloc(v, (cap ? cap * 2 : 8) * sizeof(*v));

				if (!nv) {
					rc = -ENOMEM;
					break;
				}
				v = nv;
				cap = cap ? cap * 2 : 8;
			}
			snprintf(v[n].nqn, sizeof(v[n].nqn), "%s", s->nqn);
			v[n].nsid = nsid;
			v[n].outstanding = nvmf_ns_outstanding(ns);
			nvmf_ns_qos_counts(ns, &v[n].qos_waiting, &v[n].qos_delayed);
			nvmf_ns_iostat_sum(ns, v[n].io);
			v[n].bounced = __atomic_load_n(&ns->bdev->bounced, __ATOMIC_RELAXED);
			n++;
		}
		pthread_mutex_unlock(&s->lock);
		if (rc)
			break;
	}
	pthread_mutex_unlock(&tgt->lock);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*count = n;
	return 0;
}

static int collect_ports(struct nvmf_tgt *tgt, struct port_snap **out, unsigned int *count)
{
	struct nvmf_port *p;
	struct nvmf_qpair *qp;
	unsigned int n = 0, i = 0;
	struct port_snap *v;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(p, &tgt->ports, link)
	n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&tgt->lock);
		return -ENOMEM;
	}
	TAILQ_FOREACH(p, &tgt->ports, link)
	{
		v[i].portid = p->portid;
		snprintf(v[i].trtype, sizeof(v[i].trtype), "%s", p->ops ? p->ops->name : "");
		snprintf(v[i].traddr, sizeof(v[i].traddr), "%s", p->traddr);
		snprintf(v[i].trsvcid, sizeof(v[i].trsvcid), "%s", p->trsvcid);
		TAILQ_FOREACH(qp, &p->qpairs, link)
		v[i].conns++;
		i++;
	}
	pthread_mutex_unlock(&tgt->lock);
	*out = v;
	*count = n;
	return 0;
}

static void ns_labels(char *l, size_t len, const struct ns_snap *ns, int path)
{
	char id[16];

	l[0] = '\0';
	snprintf(id, sizeof(id), "%u", ns->nsid);
	metrics_label(l, len, "subsystem", ns->nqn);
	metrics_label(l, len, "nsid", id);
	if (path >= 0)
		metrics_label(l, len, "path", nvmf_path_name((enum nvmf_path)path));
}

static bool path_used(const struct nvmf_ns_iostat_sum *io)
{
	return io->cmds[0] || io->cmds[1] || io->cmds[2];
}

static void format_ns(struct metrics_buf *b, const struct ns_snap *v, unsigned int n)
{
	char l[LABELS_MAX], l2[LABELS_MAX], x[16];

	metrics_family(b, "nvmeof_namespace_commands_total", "counter",
		       "Commands completed on the namespace, by path and operation.");
	for (unsigned int i = 0; i < n; i++)
		for (int p = 0; p < NVMF_NPATHS; p++) {
			/* the native TCP path always, so that a namespace shows up unused */
			if (p != NVMF_PATH_TCP && !path_used(&v[i].io[p]))
				continue;
			for (int c = 0; c < NVMF_NIO_CLASSES; c++) {
				ns_labels(l, sizeof(l), &v[i], p);
				metrics_label(l, sizeof(l), "op", io_op[c]);
				metrics_sample_u64(b, "nvmeof_namespace_commands_total", l,
						   v[i].io[p].cmds[c]);
			}
		}
	metrics_family(b, "nvmeof_namespace_bytes_total", "counter",
		       "Bytes moved by successful reads and writes, by path.");
	for (unsigned int i = 0; i < n; i++)
		for (int p = 0; p < NVMF_NPATHS; p++) {
			if (p != NVMF_PATH_TCP && !path_used(&v[i].io[p]))
				continue;
			for (int c = 0; c < NVMF_IO_OTHER; c++) {
				ns_labels(l, sizeof(l), &v[i], p);
				metrics_label(l, sizeof(l), "op", io_op[c]);
				metrics_sample_u64(b, "nvmeof_namespace_bytes_total", l,
						   v[i].io[p].bytes[c]);
			}
		}
	metrics_family(b, "nvmeof_namespace_errors_total", "counter",
		       "Commands completed with an error status (NVMe SCT and SC), by path.");
	for (unsigned int i = 0; i < n; i++)
		for (int p = 0; p < NVMF_NPATHS; p++) {
			const struct nvmf_ns_iostat_sum *io = &v[i].io[p];

			for (unsigned int e = 0; e < io->nerr; e++) {
				ns_labels(l, sizeof(l), &v[i], p);
				snprintf(x, sizeof(x), "0x%x", io->err_status[e] >> 8);
				metrics_label(l, sizeof(l), "sct", x);
				snprintf(x, sizeof(x), "0x%02x", io->err_status[e] & 0xff);
				metrics_label(l, sizeof(l), "sc", x);
				metrics_sample_u64(b, "nvmeof_namespace_errors_total", l,
						   io->err_n[e]);
			}
			if (io->err_other) {
				ns_labels(l, sizeof(l), &v[i], p);
				metrics_label(l, sizeof(l), "sct", "other");
				metrics_label(l, sizeof(l), "sc", "other");
				metrics_sample_u64(b, "nvmeof_namespace_errors_total", l,
						   io->err_other);
			}
		}
	metrics_family(b, "nvmeof_namespace_latency_seconds", "histogram",
		       "Command latency in the target, receipt to completion (QoS wait "
		       "included), by path.");
	for (unsigned int i = 0; i < n; i++)
		for (int p = 0; p < NVMF_NPATHS; p++) {
			if (p != NVMF_PATH_TCP && !path_used(&v[i].io[p]))
				continue;
			ns_labels(l, sizeof(l), &v[i], p);
			metrics_histogram(b, "nvmeof_namespace_latency_seconds", l,
					  &v[i].io[p].lat);
		}
	metrics_family(b, "nvmeof_namespace_outstanding_commands", "gauge",
		       "Commands received and not yet completed (queue depth).");
	for (unsigned int i = 0; i < n; i++) {
		ns_labels(l2, sizeof(l2), &v[i], -1);
		metrics_sample_u64(b, "nvmeof_namespace_outstanding_commands", l2,
				   v[i].outstanding);
	}
	metrics_family(b, "nvmeof_namespace_qos_waiting_commands", "gauge",
		       "Commands held back by the namespace's QoS limits now.");
	for (unsigned int i = 0; i < n; i++) {
		ns_labels(l2, sizeof(l2), &v[i], -1);
		metrics_sample_u64(b, "nvmeof_namespace_qos_waiting_commands", l2,
				   v[i].qos_waiting);
	}
	metrics_family(b, "nvmeof_namespace_qos_delayed_commands_total", "counter",
		       "Commands that waited for QoS tokens.");
	for (unsigned int i = 0; i < n; i++) {
		ns_labels(l2, sizeof(l2), &v[i], -1);
		metrics_sample_u64(b, "nvmeof_namespace_qos_delayed_commands_total", l2,
				   v[i].qos_delayed);
	}
	metrics_family(b, "nvmeof_namespace_bounced_ios_total", "counter",
		       "Reads and writes on a direct-I/O file or block device namespace whose "
		       "buffers were not aligned for O_DIRECT and were copied through an "
		       "aligned bounce buffer.");
	for (unsigned int i = 0; i < n; i++) {
		ns_labels(l2, sizeof(l2), &v[i], -1);
		metrics_sample_u64(b, "nvmeof_namespace_bounced_ios_total", l2, v[i].bounced);
	}
}

static void format_paths(struct metrics_buf *b, const struct stats_snapshot *s)
{
	const struct stats_path *p[2] = { &s->nvme, &s->scsi };
	static const char *const pname[2] = { "nvme", "scsi" };
	char l[128];

	metrics_family(b, "nvmeof_path_controllers", "gauge",
		       "Live controllers: native NVMe-oF (nvme) and iSCSI sessions (scsi).");
	for (int i = 0; i < 2; i++) {
		l[0] = '\0';
		metrics_label(l, sizeof(l), "path", pname[i]);
		metrics_sample_u64(b, "nvmeof_path_controllers", l, p[i]->ctrlrs);
	}
	metrics_family(b, "nvmeof_path_io_queues", "gauge", "Connected I/O queues.");
	for (int i = 0; i < 2; i++) {
		l[0] = '\0';
		metrics_label(l, sizeof(l), "path", pname[i]);
		metrics_sample_u64(b, "nvmeof_path_io_queues", l, p[i]->io_queues);
	}
	metrics_family(b, "nvmeof_path_commands_total", "counter",
		       "Successful I/O commands since start, by path and operation.");
	for (int i = 0; i < 2; i++) {
		const uint64_t c[3] = { p[i]->read_cmds, p[i]->write_cmds, p[i]->other_cmds };

		for (int k = 0; k < 3; k++) {
			l[0] = '\0';
			metrics_label(l, sizeof(l), "path", pname[i]);
			metrics_label(l, sizeof(l), "op", io_op[k]);
			metrics_sample_u64(b, "nvmeof_path_commands_total", l, c[k]);
		}
	}
	metrics_family(b, "nvmeof_path_bytes_total", "counter",
		       "Bytes read and written since start, by path.");
	for (int i = 0; i < 2; i++) {
		const uint64_t c[2] = { p[i]->read_bytes, p[i]->write_bytes };

		for (int k = 0; k < 2; k++) {
			l[0] = '\0';
			metrics_label(l, sizeof(l), "path", pname[i]);
			metrics_label(l, sizeof(l), "op", io_op[k]);
			metrics_sample_u64(b, "nvmeof_path_bytes_total", l, c[k]);
		}
	}
}

static void reactor_family(struct metrics_buf *b, const struct stats_snapshot *s, const char *name,
			   const char *help, int which)
{
	unsigned int n = s->nreactors < STATS_MAX_REACTORS ? s->nreactors : STATS_MAX_REACTORS;
	char l[64], id[16];

	metrics_family(b, name, "counter", help);
	for (unsigned int i = 0; i < n; i++) {
		const struct stats_reactor *r = &s->reactor[i];

		l[0] = '\0';
		snprintf(id, sizeof(id), "%u", i);
		metrics_label(l, sizeof(l), "reactor", id);
		switch (which) {
		case 0:
			metrics_sample(b, name, l, (double)r->cpu_ns / 1e9);
			break;
		case 1:
			metrics_sample(b, name, l,
				       s->uptime_ns > r->cpu_ns
					       ? (double)(s->uptime_ns - r->cpu_ns) / 1e9
					       : 0);
			break;
		case 2:
			metrics_sample_u64(b, name, l, r->loops);
			break;
		case 3:
			metrics_sample_u64(b, name, l, r->msgs);
			break;
		case 4:
			metrics_sample(b, name, l, (double)r->xlate_ns / 1e9);
			break;
		default:
			metrics_sample_u64(b, name, l, r->xlate_calls);
			break;
		}
	}
}

static void format_reactors(struct metrics_buf *b, const struct stats_snapshot *s)
{
	reactor_family(b, s, "nvmeof_reactor_busy_seconds_total", "CPU time of the reactor thread.",
		       0);
	reactor_family(b, s, "nvmeof_reactor_idle_seconds_total",
		       "Time since start the reactor thread was not on a CPU (waiting for "
		       "events).",
		       1);
	reactor_family(b, s, "nvmeof_reactor_loops_total", "Event loop iterations.", 2);
	reactor_family(b, s, "nvmeof_reactor_messages_total", "Cross-thread messages run.", 3);
	reactor_family(b, s, "nvmeof_scsi_translation_seconds_total",
		       "Time spent on the SCSI side of iSCSI commands (estimated from a "
		       "sample of one command in 16).",
		       4);
	reactor_family(b, s, "nvmeof_scsi_commands_total", "SCSI commands started.", 5);
}

int metrics_format(struct nvmf_tgt *tgt, struct metrics_buf *b)
{
	struct stats_snapshot *s = malloc(sizeof(*s));
	struct ns_snap *ns = NULL;
	struct port_snap *ports = NULL;
	unsigned int nns = 0, nports = 0;
	char l[512], id[16];

	if (!s || collect_ns(tgt, &ns, &nns) || collect_ports(tgt, &ports, &nports)) {
		free(s);
		free(ns);
		return -ENOMEM;
	}
	stats_collect(tgt, s);
	metrics_family(b, "nvmeof_uptime_seconds", "gauge", "Time since the target started.");
	metrics_sample(b, "nvmeof_uptime_seconds", NULL, (double)s->uptime_ns / 1e9);
	metrics_family(b, "nvmeof_process_cpu_seconds_total", "counter",
		       "CPU time of every thread of the daemon.");
	metrics_sample(b, "nvmeof_process_cpu_seconds_total", NULL,
		       (double)s->process_cpu_ns / 1e9);
	metrics_family(b, "nvmeof_connections", "gauge",
		       "Queue pairs (connections) bound to the target, all transports.");
	metrics_sample_u64(b, "nvmeof_connections", NULL, s->connections);
	metrics_family(b, "nvmeof_port_connections", "gauge", "Connections through the port.");
	for (unsigned int i = 0; i < nports; i++) {
		l[0] = '\0';
		snprintf(id, sizeof(id), "%u", ports[i].portid);
		metrics_label(l, sizeof(l), "port", id);
		metrics_label(l, sizeof(l), "trtype", ports[i].trtype);
		metrics_label(l, sizeof(l), "traddr", ports[i].traddr);
		metrics_label(l, sizeof(l), "trsvcid", ports[i].trsvcid);
		metrics_sample_u64(b, "nvmeof_port_connections", l, ports[i].conns);
	}
	metrics_family(b, "nvmeof_auth_jobs_total", "counter",
		       "DH-HMAC-CHAP Diffie-Hellman jobs by outcome: queued (shared lane), "
		       "priority (re-authentication lane), refused_total/_host/_addr (at a "
		       "pending limit), done.");
	{
		static const struct {
			const char *outcome;
			size_t off;
		} o[] = {
			{ "queued", offsetof(struct nvmf_auth_stats, queued) },
			{ "priority", offsetof(struct nvmf_auth_stats, queued_priority) },
			{ "refused_total", offsetof(struct nvmf_auth_stats, refused_total) },
			{ "refused_host", offsetof(struct nvmf_auth_stats, refused_host) },
			{ "refused_addr", offsetof(struct nvmf_auth_stats, refused_addr) },
			{ "done", offsetof(struct nvmf_auth_stats, done) },
		};

		for (size_t i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
			char lab[64] = "";

			metrics_label(lab, sizeof(lab), "outcome", o[i].outcome);
			metrics_sample_u64(b, "nvmeof_auth_jobs_total", lab,
					   *(const uint64_t *)((const char *)&s->auth + o[i].off));
		}
	}
	metrics_family(b, "nvmeof_auth_job_run_seconds_total", "counter",
		       "CPU time of the done DH-HMAC-CHAP jobs.");
	metrics_sample(b, "nvmeof_auth_job_run_seconds_total", NULL, s->auth.run_ns / 1e9);
	metrics_family(b, "nvmeof_auth_job_wait_seconds_total", "counter",
		       "Time the done DH-HMAC-CHAP jobs waited for a thread.");
	metrics_sample(b, "nvmeof_auth_job_wait_seconds_total", NULL, s->auth.wait_ns / 1e9);
	metrics_family(b, "nvmeof_auth_jobs_pending", "gauge",
		       "DH-HMAC-CHAP jobs queued or running, shared lane.");
	metrics_sample_u64(b, "nvmeof_auth_jobs_pending", NULL, s->auth.pending);
	metrics_family(b, "nvmeof_tcp_connections_accepted_total", "counter",
		       "NVMe/TCP connections accepted.");
	metrics_sample_u64(b, "nvmeof_tcp_connections_accepted_total", NULL, s->tcp.accepted);
	metrics_family(b, "nvmeof_tcp_connections_rejected_total", "counter",
		       "NVMe/TCP connections refused (connection limit).");
	metrics_sample_u64(b, "nvmeof_tcp_connections_rejected_total", NULL, s->tcp.rejected);
	metrics_family(b, "nvmeof_tcp_connections_closed_total", "counter",
		       "NVMe/TCP connections closed.");
	metrics_sample_u64(b, "nvmeof_tcp_connections_closed_total", NULL, s->tcp.closed);
	metrics_family(b, "nvmeof_tcp_zerocopy_sends_total", "counter",
		       "NVMe/TCP sendmsg calls with MSG_ZEROCOPY.");
	metrics_sample_u64(b, "nvmeof_tcp_zerocopy_sends_total", NULL, s->tcp.totals.zc_sends);
	metrics_family(b, "nvmeof_tcp_zerocopy_completions_total", "counter",
		       "NVMe/TCP zero-copy sends the kernel confirmed done.");
	metrics_sample_u64(b, "nvmeof_tcp_zerocopy_completions_total", NULL,
			   s->tcp.totals.zc_completions);
	metrics_family(b, "nvmeof_tcp_zerocopy_copied_total", "counter",
		       "NVMe/TCP zero-copy sends the kernel copied after all (loopback, no SG).");
	metrics_sample_u64(b, "nvmeof_tcp_zerocopy_copied_total", NULL, s->tcp.totals.zc_copied);
	metrics_family(b, "nvmeof_tcp_reads_mapped_total", "counter",
		       "NVMe/TCP reads sent straight from namespace memory (not copied).");
	metrics_sample_u64(b, "nvmeof_tcp_reads_mapped_total", NULL, s->tcp.totals.c2h_mapped);
	metrics_family(b, "nvmeof_tcp_share_waits_total", "counter",
		       "NVMe/TCP queues that waited for their own or their host's data pool "
		       "share.");
	metrics_sample_u64(b, "nvmeof_tcp_share_waits_total", NULL, s->tcp.totals.share_waits);
	metrics_family(b, "nvmeof_tcp_r2t_timeouts_total", "counter",
		       "NVMe/TCP queues terminated: R2T data not in within the R2T timeout.");
	metrics_sample_u64(b, "nvmeof_tcp_r2t_timeouts_total", NULL, s->tcp.totals.r2t_timeouts);
	metrics_family(b, "nvmeof_tcp_paused_closes_total", "counter",
		       "NVMe/TCP queues closed by the peer while reading was paused.");
	metrics_sample_u64(b, "nvmeof_tcp_paused_closes_total", NULL, s->tcp.totals.paused_closes);
	metrics_family(b, "nvmeof_host_connections_refused_total", "counter",
		       "Connects refused: the host NQN had max_host_connections queues.");
	metrics_sample_u64(b, "nvmeof_host_connections_refused_total", NULL, s->host_conn_refused);
	format_paths(b, s);
	format_reactors(b, s);
	format_ns(b, ns, nns);
	free(s);
	free(ns);
	free(ports);
	return b->oom ? -ENOMEM : 0;
}

/* ---- HTTP server ----------------------------------------------------------------------------- */
#ifdef HAVE_MHD
/*
 * libmicrohttpd's connection timeout is an idle timeout: a client sending a byte now and
 * then holds its connection for ever, and METRICS_MAX_CONNS of them shut the endpoint. So
 * each connection MHD holds has a slot here, and a reaper thread shuts down (shutdown(2):
 * MHD then reads the end and closes it) a connection that has not sent a whole request
 * within timeout_ms of its accept or of its previous reply; a scrape takes milliseconds.
 * More than per_address connections from one address are refused the same way, at once,
 * so that one host cannot take the slots of the others.
 *
 * MHD reports a connection closed (NOTIFY_CLOSED) before it closes the descriptor, and
 * the slot goes under the same lock as the reaper's shutdown(): never a reused descriptor.
 */
struct metrics_conn {
	bool used;
	bool answering; /* a whole request came in: its reply is under way */
	bool doomed;    /* shut down by the reaper: waiting for MHD to close it */
	int fd;
	uint64_t since_ns; /* accept, or the end of the previous reply */
	struct sockaddr_storage addr;
};

struct metrics_server {
	struct MHD_Daemon *d;
	struct nvmf_tgt *tgt;
	uint16_t port;
	uint32_t timeout_ms, per_address;
	pthread_mutex_t lock; /* the slots and counters below */
	pthread_cond_t wake;
	pthread_t reaper;
	bool reaper_on, stopping;
	struct metrics_conn conns[METRICS_MAX_CONNS];
	uint64_t refused;   /* per_address were open from the address */
	uint64_t timed_out; /* no whole request within timeout_ms */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether @a and @b are the same host (address family and address; the port aside). */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return false;
}

static const char *host_str(const struct sockaddr_storage *a, char *buf, size_t len)
{
	const void *p = a->ss_family == AF_INET6
				? (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr
				: (const void *)&((const struct sockaddr_in *)a)->sin_addr;

	if (!inet_ntop(a->ss_family, p, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

static void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct metrics_server *srv = cls;
	struct metrics_conn *slot = *socket_context, *free_slot = NULL;
	const union MHD_ConnectionInfo *fd, *addr;
	struct sockaddr_storage ss = { 0 };
	unsigned int from_host = 0;
	char host[INET6_ADDRSTRLEN];

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (slot) {
			pthread_mutex_lock(&srv->lock);
			slot->used = false;
			pthread_mutex_unlock(&srv->lock);
			*socket_context = NULL;
		}
		return;
	}
	fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fd)
		return;
	if (addr && addr->client_addr)
		memcpy(&ss, addr->client_addr,
		       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								: sizeof(struct sockaddr_in));
	pthread_mutex_lock(&srv->lock);
	for (unsigned int i = 0; i < METRICS_MAX_CONNS; i++) {
		struct metrics_conn *c = &srv->conns[i];

		if (!c->used)
			free_slot = free_slot ? free_slot : c;
		else if (same_host(&c->addr, &ss))
			from_host++;
	}
	if (from_host >= srv->per_address || !free_slot) {
		srv->refused++;
		pthread_mutex_unlock(&srv->lock);
		shutdown(fd->connect_fd, SHUT_RDWR);
		log_peer("metrics: refused a connection from %s: %u open from that address "
			 "(--metrics-per-address)",
			 host_str(&ss, host, sizeof(host)), from_host);
		return;
	}
	*free_slot = (struct metrics_conn){
		.used = true, .fd = fd->connect_fd, .since_ns = now_ns(), .addr = ss
	};
	*socket_context = free_slot;
	pthread_mutex_unlock(&srv->lock);
}

static struct metrics_conn *conn_slot(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* A reply is done (or the request ended): the next request has its own deadline. */
static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct metrics_server *srv = cls;
	struct metrics_conn *slot = conn_slot(conn);

	(void)con_cls;
	(void)code;
	if (!slot)
		return;
	pthread_mutex_lock(&srv->lock);
	slot->answering = false;
	slot->since_ns = now_ns();
	pthread_mutex_unlock(&srv->lock);
}

static void *reaper_main(void *arg)
{
	struct metrics_server *srv = arg;
	char host[INET6_ADDRSTRLEN];
	struct timespec ts;

	pthread_mutex_lock(&srv->lock);
	while (!srv->stopping) {
		uint64_t now = now_ns();

		for (unsigned int i = 0; i < METRICS_MAX_CONNS; i++) {
			struct metrics_conn *c = &srv->conns[i];

			if (!c->used || c->answering || c->doomed ||
			    now - c->since_ns < (uint64_t)srv->timeout_ms * 1000000u)
				continue;
			c->doomed = true;
			srv->timed_out++;
			shutdown(c->fd, SHUT_RDWR);
			log_peer("metrics: closed a connection from %s: no whole request within "
				 "%u ms (--metrics-timeout)",
				 host_str(&c->addr, host, sizeof(host)), srv->timeout_ms);
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 200 * 1000000L; /* the deadline is kept to within 0.2 s */
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&srv->wake, &srv->lock, &ts);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/*
 * libmicrohttpd's own messages (a client gone mid-request, the connection limit, ...) are
 * mostly what a peer makes happen: rate-limited, at info level.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static struct log_ratelimit rl;
	char msg[256];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_msg_rl(&rl, LOG_LVL_INFO, "metrics: %s", msg);
}

/* The endpoint's own counters, after the target's families. */
static void format_endpoint(struct metrics_server *srv, struct metrics_buf *b)
{
	uint64_t refused, timed_out;

	pthread_mutex_lock(&srv->lock);
	refused = srv->refused;
	timed_out = srv->timed_out;
	pthread_mutex_unlock(&srv->lock);
	metrics_family(b, "nvmeof_metrics_connections_refused_total", "counter",
		       "Metrics endpoint connections refused: as many were open from the "
		       "address as --metrics-per-address allows.");
	metrics_sample_u64(b, "nvmeof_metrics_connections_refused_total", NULL, refused);
	metrics_family(b, "nvmeof_metrics_requests_timed_out_total", "counter",
		       "Metrics endpoint connections closed for not sending a whole request "
		       "within --metrics-timeout.");
	metrics_sample_u64(b, "nvmeof_metrics_requests_timed_out_total", NULL, timed_out);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	rc = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct metrics_server *srv = cls;
	struct metrics_conn *slot = conn_slot(conn);
	struct metrics_buf b = { 0 };
	int rc;
	static char not_found[] = "only /metrics here\n";
	static char bad_method[] = "GET only\n";
	static char oom[] = "out of memory\n";

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", bad_method,
			     strlen(bad_method), MHD_RESPMEM_PERSISTENT);
	/* A GET is whole with its header: the deadline is met (a request with a body, which
	 * could trickle in, stays under it). */
	if (slot) {
		pthread_mutex_lock(&srv->lock);
		slot->answering = true;
		pthread_mutex_unlock(&srv->lock);
	}
	if (strcmp(url, "/metrics") != 0)
		return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", not_found, strlen(not_found),
			     MHD_RESPMEM_PERSISTENT);
	rc = metrics_format(srv->tgt, &b);
	if (rc == 0)
		format_endpoint(srv, &b);
	if (rc || b.oom) {
		metrics_buf_free(&b);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", oom, strlen(oom),
			     MHD_RESPMEM_PERSISTENT);
	}
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len,
		     MHD_RESPMEM_MUST_FREE);
}

/* The lock and the reaper's condition (on the monotonic clock). 0 or -1. */
static int init_sync(struct metrics_server *srv)
{
	pthread_condattr_t ca;
	int rc;

	if (pthread_mutex_init(&srv->lock, NULL))
		return -1;
	rc = pthread_condattr_init(&ca);
	if (!rc) {
		rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
		     pthread_cond_init(&srv->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (rc) {
		pthread_mutex_destroy(&srv->lock);
		return -1;
	}
	return 0;
}

static void fini_sync(struct metrics_server *srv)
{
	pthread_cond_destroy(&srv->wake);
	pthread_mutex_destroy(&srv->lock);
}

struct metrics_server *metrics_server_start(struct nvmf_tgt *tgt, const char *uri,
					    const struct metrics_opts *opts, char *err,
					    size_t errlen)
{
	struct uri_listen u;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
	struct metrics_server *srv;
	const union MHD_DaemonInfo *info;
	char port[8], e[256];
	int rc;

	if (uri_parse_listen(uri, &u, e, sizeof(e)) != 0) {
		snprintf(err, errlen, "--metrics %s: %s", uri, e);
		return NULL;
	}
	if (u.transport != URI_TRANSPORT_TCP) {
		snprintf(err, errlen, "--metrics %s: expected tcp://ADDR:PORT", uri);
		return NULL;
	}
	snprintf(port, sizeof(port), "%u", u.port);
	rc = getaddrinfo(u.addr, port, &hints, &ai);
	if (rc != 0 || !ai) {
		snprintf(err, errlen, "--metrics %s: %s", uri, gai_strerror(rc));
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		freeaddrinfo(ai);
		snprintf(err, errlen, "--metrics: out of memory");
		return NULL;
	}
	srv->tgt = tgt;
	srv->timeout_ms = opts && opts->timeout_ms ? opts->timeout_ms : METRICS_DEFAULT_TIMEOUT_MS;
	srv->per_address = opts && opts->per_address ? opts->per_address
						     : METRICS_DEFAULT_PER_ADDRESS;
	if (init_sync(srv)) {
		freeaddrinfo(ai);
		free(srv);
		snprintf(err, errlen, "--metrics: cannot create a lock");
		return NULL;
	}
	/* The idle timeout stays as a second line, for a reply the client does not read. */
	srv->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
					  (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				  0, NULL, NULL, handle, srv, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_NOTIFY_CONNECTION,
				  conn_notify, srv, MHD_OPTION_NOTIFY_COMPLETED, request_done, srv,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!srv->d) {
		snprintf(err, errlen, "--metrics %s: cannot listen (address in use?)", uri);
		fini_sync(srv);
		free(srv);
		return NULL;
	}
	if (pthread_create(&srv->reaper, NULL, reaper_main, srv) != 0) {
		snprintf(err, errlen, "--metrics %s: cannot start a thread", uri);
		MHD_stop_daemon(srv->d);
		fini_sync(srv);
		free(srv);
		return NULL;
	}
	srv->reaper_on = true;
	info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : u.port;
	log_notice("metrics on http://%s%s%s:%u/metrics (a request within %u ms, %u connections "
		   "per address)",
		   u.ipv6 ? "[" : "", u.addr, u.ipv6 ? "]" : "", srv->port, srv->timeout_ms,
		   srv->per_address);
	return srv;
}

uint16_t metrics_server_port(const struct metrics_server *srv)
{
	return srv->port;
}

void metrics_server_stop(struct metrics_server *srv)
{
	if (!srv)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->stopping = true;
	pthread_cond_signal(&srv->wake);
	pthread_mutex_unlock(&srv->lock);
	if (srv->reaper_on)
		pthread_join(srv->reaper, NULL);
	MHD_stop_daemon(srv->d);
	fini_sync(srv);
	free(srv);
}
#else
struct metrics_server *metrics_server_start(struct nvmf_tgt *tgt, const char *uri,
					    const struct metrics_opts *opts, char *err,
					    size_t errlen)
{
	(void)tgt;
	(void)opts;
	snprintf(err, errlen,
		 "--metrics %s: built without metrics support (configure found no "
		 "libmicrohttpd: apt-get install libmicrohttpd-dev)",
		 uri);
	return NULL;
}

uint16_t metrics_server_port(const struct metrics_server *srv)
{
	(void)srv;
	return 0;
}

void metrics_server_stop(struct metrics_server *srv)
{
	(void)srv;
}
#endif
