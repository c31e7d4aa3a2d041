/* SPDX-License-Identifier: MIT */
/* Target statistics: counter snapshots, their JSON form, and the UNIX-socket server. */
#include "config.h"

#include "stats.h"
#ifdef HAVE_RDMA
#include "rdma/rdma_transport.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/ctrlr.h"
#include "common/log.h"
#include "core/nvmf.h"

#define STATS_MAX_CLIENTS 16
#define STATS_LINE_MAX 256	 /* a request line longer than this closes the client */
#define CALIBRATE_NS 20000000ull /* first tick-rate measurement */
#define OVERHEAD_SAMPLES 1001
#define PROBE_ROUNDS 5
#define PROBE_CALLS 100000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- tick rate ------------------------------------------------------------------------------ */
/* The reference point every later call measures from: process-wide, set once. */
static struct {
	pthread_once_t once;
	uint64_t ns0, ticks0;
	double hz0;	   /* from the first 20 ms */
	uint64_t overhead; /* ticks of an empty interval */
} g_tick = { .once = PTHREAD_ONCE_INIT };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void tick_calibrate(void)
{
	uint64_t n0, t0, n1, t1, d[OVERHEAD_SAMPLES];

	n0 = mono_ns();
	t0 = stats_ticks();
	do {
		n1 = mono_ns();
	} while (n1 - n0 < CALIBRATE_NS);
	t1 = stats_ticks();
	g_tick.ns0 = n0;
	g_tick.ticks0 = t0;
	g_tick.hz0 = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
	for (unsigned int i = 0; i < OVERHEAD_SAMPLES; i++) {
		uint64_t a = stats_ticks();

		d[i] = stats_ticks() - a;
	}
	qsort(d, OVERHEAD_SAMPLES, sizeof(d[0]), cmp_u64);
	g_tick.overhead = d[OVERHEAD_SAMPLES / 2];
}

double stats_tick_hz(void)
{
	uint64_t n, t;

	pthread_once(&g_tick.once, tick_calibrate);
	n = mono_ns();
	t = stats_ticks();
	/* Over a second or more the long baseline is the better estimate. */
	if (n - g_tick.ns0 < 1000000000ull)
		return g_tick.hz0;
	return (double)(t - g_tick.ticks0) * 1e9 / (double)(n - g_tick.ns0);
}

uint64_t stats_tick_overhead(void)
{
	pthread_once(&g_tick.once, tick_calibrate);
	return g_tick.overhead;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double stats_probe_cost_ns(void)
{
	static struct reactor_stats st;
	struct reactor_stats *volatile stp = &st;
	double best = 0;

	/* What the probes of one SCSI command do on a reactor (reactor_self() included), on a
	 * local struct; CPU time, so that being preempted does not count. */
	for (unsigned int round = 0; round < PROBE_ROUNDS; round++) {
		uint64_t c0 = thread_cpu_ns(), c1;
		double per;

		for (unsigned int i = 0; i < PROBE_CALLS; i++) {
			struct stats_xlate_io io;

			(void)reactor_self();
			stats_xlate_io_start_on(stp, &io);
			for (unsigned int k = 0; k < STATS_PROBE_SPANS; k++) {
				uint64_t t = stats_xlate_begin(&io);

				stats_xlate_end(&io, t);
			}
			(void)reactor_self();
			stats_xlate_io_done_on(stp, &io);
		}
		c1 = thread_cpu_ns();
		per = (double)(c1 - c0) / PROBE_CALLS;
		if (round == 0 || per < best)
			best = per;
	}
	return best;
}

/* ---- snapshots ------------------------------------------------------------------------------ */
void stats_path_add(struct stats_path *p, const struct nvmf_qpair_stats *qs, unsigned int io_queues)
{
	p->ctrlrs++;
	p->io_queues += io_queues;
	p->read_cmds += qs->read_cmds;
	p->write_cmds += qs->write_cmds;
	p->other_cmds += qs->other_cmds;
	p->read_bytes += qs->read_bytes;
	p->write_bytes += qs->write_bytes;
}

uint64_t stats_xlate_estimate_ns(uint64_t ticks, uint64_t spans, uint64_t sampled, uint64_t ios,
				 double hz, uint64_t overhead)
{
	double per;

	if (!sampled || hz <= 0)
		return 0;
	per = ((double)ticks - (double)spans * (double)overhead) / (double)sampled;
	if (per <= 0)
		return 0;
	return (uint64_t)(per * 1e9 / hz * (double)ios);
}

static void collect_reactors(struct stats_snapshot *snap, double hz)
{
	unsigned int n = reactor_count();

	snap->nreactors = n;
	for (unsigned int i = 0; i < n; i++) {
		struct reactor *r = reactor_get(i);
		struct stats_reactor sr;
		uint64_t ticks, spans;

		if (!r)
			continue;
		sr.cpu_ns = reactor_cpu_ns(r);
		sr.fabric_io_cmds = 0; /* collect_ports() */
		sr.loops = __atomic_load_n(&r->stats.loops, __ATOMIC_RELAXED);
		sr.msgs = __atomic_load_n(&r->stats.msgs, __ATOMIC_RELAXED);
		sr.xlate_sampled = __atomic_load_n(&r->stats.xlate_sampled, __ATOMIC_RELAXED);
		sr.poll_events = __atomic_load_n(&r->stats.poll_events, __ATOMIC_RELAXED);
		sr.poll_empty = __atomic_load_n(&r->stats.poll_empty, __ATOMIC_RELAXED);
		sr.poll_sleeps = __atomic_load_n(&r->stats.poll_sleeps, __ATOMIC_RELAXED);
		ticks = __atomic_load_n(&r->stats.xlate_ticks, __ATOMIC_RELAXED);
		spans = __atomic_load_n(&r->stats.xlate_spans, __ATOMIC_RELAXED);
		sr.xlate_calls = __atomic_load_n(&r->stats.xlate_ios, __ATOMIC_RELAXED);
		sr.xlate_ns = stats_xlate_estimate_ns(ticks, spans, sr.xlate_sampled,
						      sr.xlate_calls, hz, stats_tick_overhead());
		if (i < STATS_MAX_REACTORS)
			snap->reactor[i] = sr;
		snap->total.cpu_ns += sr.cpu_ns;
		snap->total.loops += sr.loops;
		snap->total.msgs += sr.msgs;
		snap->total.xlate_ns += sr.xlate_ns;
		snap->total.xlate_calls += sr.xlate_calls;
		snap->total.xlate_sampled += sr.xlate_sampled;
		snap->total.poll_events += sr.poll_events;
		snap->total.poll_empty += sr.poll_empty;
		snap->total.poll_sleeps += sr.poll_sleeps;
	}
}

void stats_path_add_retired(struct stats_path *p, const struct nvmf_qpair_stats *qs)
{
	p->read_cmds += qs->read_cmds;
	p->write_cmds += qs->write_cmds;
	p->other_cmds += qs->other_cmds;
	p->read_bytes += qs->read_bytes;
	p->write_bytes += qs->write_bytes;
}

/* The counters of a subsystem's controllers that are gone, by path. Caller holds s->lock. */
static void collect_retired(const struct nvmf_subsys *s, struct stats_snapshot *snap)
{
	struct nvmf_qpair_stats fab = s->retired;
	const struct nvmf_qpair_stats *loc = &s->retired_local;

	fab.read_cmds -= loc->read_cmds;
	fab.write_cmds -= loc->write_cmds;
	fab.other_cmds -= loc->other_cmds;
	fab.read_bytes -= loc->read_bytes;
	fab.write_bytes -= loc->write_bytes;
	stats_path_add_retired(&snap->nvme, &fab);
	stats_path_add_retired(&snap->scsi, loc);
}

/* Controllers of every subsystem, by path, live and gone: a host that connects, reads
 * and disconnects (as the CLI does) must still show its commands. Lock order: tgt,
 * subsys, ctrlr. */
static void collect_paths(struct nvmf_tgt *tgt, struct stats_snapshot *snap)
{
	struct nvmf_subsys *s;
	struct nvmf_ctrlr *c;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH (s, &tgt->subsystems, link) {
		if (s->type == NVMF_SUBSYS_DISCOVERY)
			continue;
		pthread_mutex_lock(&s->lock);
		collect_retired(s, snap);
		TAILQ_FOREACH (c, &s->ctrlrs, link) {
			struct nvmf_qpair_stats qs;
			unsigned int nq;

			nvmf_ctrlr_get_stats(c, &qs);
			pthread_mutex_lock(&c->lock);
			nq = c->num_io_qpairs;
			pthread_mutex_unlock(&c->lock);
			stats_path_add(c->local ? &snap->scsi : &snap->nvme, &qs, nq);
		}
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&tgt->lock);
}

static void collect_ports(struct nvmf_tgt *tgt, struct stats_snapshot *snap)
{
	struct nvmf_port *port;
	struct nvmf_qpair *qp;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(port, &tgt->ports, link)
	{
		struct stats_port *sp;

		if (port->discovery_only || snap->nports >= STATS_MAX_PORTS)
			continue;
		sp = &snap->port[snap->nports++];
		sp->portid = port->portid;
		snprintf(sp->trsvcid, sizeof(sp->trsvcid), "%s", port->trsvcid);
		sp->ana_refused = __atomic_load_n(&port->ana_refused, __ATOMIC_RELAXED);
		sp->plain_refused = __atomic_load_n(&port->plain_refused, __ATOMIC_RELAXED);
		TAILQ_FOREACH(qp, &port->qpairs, link)
		{
			struct nvmf_qpair_stats qs;

			nvmf_stats_read(&qp->stats, &qs);
			nvmf_stats_add(&sp->io, &qs);
			sp->qpairs++;
			if (qp->reactor && qp->reactor->id < STATS_MAX_REACTORS)
				snap->reactor[qp->reactor->id].fabric_io_cmds +=
					qs.read_cmds + qs.write_cmds;
			snap->total.fabric_io_cmds += qs.read_cmds + qs.write_cmds;
		}
	}
	pthread_mutex_unlock(&tgt->lock);
}

void stats_collect(struct nvmf_tgt *tgt, struct stats_snapshot *snap)
{
	struct timespec ts;

	memset(snap, 0, sizeof(*snap));
	snap->time_ns = mono_ns();
	if (tgt)
		nvmf_auth_stats_get(tgt, &snap->auth);
	if (tgt && tgt->start_ns && snap->time_ns > tgt->start_ns)
		snap->uptime_ns = snap->time_ns - tgt->start_ns;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		snap->process_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	snap->tick_hz = stats_tick_hz();
	snap->tick_overhead_ns = (double)stats_tick_overhead() * 1e9 / snap->tick_hz;
	/* The first calibration, not the refined rate: the cumulative translation time must
	 * only grow, so that differences between snapshots are never negative. */
	collect_reactors(snap, g_tick.hz0);
	if (tgt) {
		collect_paths(tgt, snap);
		collect_ports(tgt, snap);
		snap->connections = __atomic_load_n(&tgt->nconnections, __ATOMIC_RELAXED);
		snap->host_conn_refused =
			__atomic_load_n(&tgt->host_conn_refused, __ATOMIC_RELAXED);
	}
	nvmf_tcp_get_stats(&snap->tcp);
#ifdef HAVE_RDMA
	{
		struct nvmf_rdma_stats r;

		nvmf_rdma_get_stats(&r);
		snap->rdma.present = true;
		snap->rdma.accepted = r.accepted;
		snap->rdma.rejected = r.rejected;
		snap->rdma.closed = r.closed;
		snap->rdma.connect_timeouts = r.connect_timeouts;
		snap->rdma.live = r.live;
		snap->rdma.connecting = r.connecting;
		snap->rdma.registered_bytes = r.registered_bytes;
	}
#endif
}

/* ---- JSON ------------------------------------------------------------------------------------ */
struct jbuf {
	char *p;
	size_t len, off;
	bool overflow;
};

static void jput(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jput(struct jbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->off, b->len - b->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->len - b->off) {
		b->overflow = true;
		return;
	}
	b->off += (size_t)n;
}

static void jreactor(struct jbuf *b, const struct stats_reactor *r)
{
	jput(b,
	     "\"cpu_ns\":%llu,\"loops\":%llu,\"msgs\":%llu,\"xlate_ns\":%llu,\"xlate_calls\":%llu,"
	     "\"xlate_sampled\":%llu,\"poll_events\":%llu,\"poll_empty\":%llu,\"poll_sleeps\":%llu,"
	     "\"fabric_io_cmds\":%llu",
	     (unsigned long long)r->cpu_ns, (unsigned long long)r->loops,
	     (unsigned long long)r->msgs, (unsigned long long)r->xlate_ns,
	     (unsigned long long)r->xlate_calls, (unsigned long long)r->xlate_sampled,
	     (unsigned long long)r->poll_events, (unsigned long long)r->poll_empty,
	     (unsigned long long)r->poll_sleeps, (unsigned long long)r->fabric_io_cmds);
}

static void jpath(struct jbuf *b, const char *name, const struct stats_path *p)
{
	jput(b,
	     "\"%s\":{\"ctrlrs\":%llu,\"io_queues\":%llu,\"read_cmds\":%llu,\"write_cmds\":%llu,"
	     "\"other_cmds\":%llu,\"cmds\":%llu,\"read_bytes\":%llu,\"write_bytes\":%llu}",
	     name, (unsigned long long)p->ctrlrs, (unsigned long long)p->io_queues,
	     (unsigned long long)p->read_cmds, (unsigned long long)p->write_cmds,
	     (unsigned long long)p->other_cmds,
	     (unsigned long long)(p->read_cmds + p->write_cmds + p->other_cmds),
	     (unsigned long long)p->read_bytes, (unsigned long long)p->write_bytes);
}

/* "name":{"STATE":entries,...}: how often the NVMe/TCP state machines entered each state. */
static void jstates(struct jbuf *b, const char *name, const uint64_t *n, unsigned int count,
		    const char *(*state_name)(unsigned int))
{
	jput(b, "\"%s\":{", name);
	for (unsigned int i = 0; i < count; i++)
		jput(b, "%s\"%s\":%llu", i ? "," : "", state_name(i), (unsigned long long)n[i]);
	jput(b, "}");
}

int stats_format_json(const struct stats_snapshot *snap, char *buf, size_t len)
{
	struct jbuf b = { .p = buf, .len = len };
	unsigned int shown =
		snap->nreactors < STATS_MAX_REACTORS ? snap->nreactors : STATS_MAX_REACTORS;
	const struct nvmf_tcp_stats *t = &snap->tcp;

	if (!len)
		return -ENOSPC;
	jput(&b, "{\"version\":1,\"time_ns\":%llu,\"uptime_ns\":%llu,\"process_cpu_ns\":%llu,",
	     (unsigned long long)snap->time_ns, (unsigned long long)snap->uptime_ns,
	     (unsigned long long)snap->process_cpu_ns);
	jput(&b, "\"tick_hz\":%.0f,\"tick_overhead_ns\":%.2f,\"xlate_probe_ns\":%.2f,"
	     "\"nreactors\":%u,", snap->tick_hz, snap->tick_overhead_ns, snap->probe_ns,
	     snap->nreactors);
	jput(&b, "\"reactor_total\":{");
	jreactor(&b, &snap->total);
	jput(&b, "},\"reactors\":[");
	for (unsigned int i = 0; i < shown; i++) {
		jput(&b, "%s{\"id\":%u,", i ? "," : "", i);
		jreactor(&b, &snap->reactor[i]);
		jput(&b, "}");
	}
	jput(&b, "],\"paths\":{");
	jpath(&b, "nvme", &snap->nvme);
	jput(&b, ",");
	jpath(&b, "scsi", &snap->scsi);
	jput(&b, "},\"ports\":[");
	for (unsigned int i = 0; i < snap->nports; i++) {
		const struct stats_port *p = &snap->port[i];

		jput(&b,
		     "%s{\"portid\":%u,\"trsvcid\":\"%s\",\"qpairs\":%u,\"read_cmds\":%llu,"
		     "\"write_cmds\":%llu,\"other_cmds\":%llu,\"read_bytes\":%llu,"
		     "\"write_bytes\":%llu,\"ana_refused\":%llu,\"plain_refused\":%llu}",
		     i ? "," : "", p->portid, p->trsvcid, p->qpairs,
		     (unsigned long long)p->io.read_cmds, (unsigned long long)p->io.write_cmds,
		     (unsigned long long)p->io.other_cmds, (unsigned long long)p->io.read_bytes,
		     (unsigned long long)p->io.write_bytes, (unsigned long long)p->ana_refused,
		     (unsigned long long)p->plain_refused);
	}
	jput(&b, "],\"connections\":%u,\"host_conn_refused\":%llu,", snap->connections,
	     (unsigned long long)snap->host_conn_refused);
	jput(&b,
	     "\"auth\":{\"threads\":%u,\"pending\":%u,\"pending_priority\":%u,"
	     "\"queued\":%llu,\"queued_priority\":%llu,\"refused_total\":%llu,"
	     "\"refused_host\":%llu,\"refused_addr\":%llu,\"done\":%llu,\"run_ns\":%llu,"
	     "\"run_max_ns\":%llu,\"wait_ns\":%llu,\"wait_max_ns\":%llu},",
	     snap->auth.threads, snap->auth.pending, snap->auth.pending_priority,
	     (unsigned long long)snap->auth.queued, (unsigned long long)snap->auth.queued_priority,
	     (unsigned long long)snap->auth.refused_total,
	     (unsigned long long)snap->auth.refused_host,
	     (unsigned long long)snap->auth.refused_addr, (unsigned long long)snap->auth.done,
	     (unsigned long long)snap->auth.run_ns, (unsigned long long)snap->auth.run_max_ns,
	     (unsigned long long)snap->auth.wait_ns, (unsigned long long)snap->auth.wait_max_ns);
	jput(&b,
	     "\"tcp\":{\"accepted\":%llu,\"rejected\":%llu,\"closed\":%llu,\"fatal\":%llu,"
	     "\"live\":%u,\"connecting\":%u,\"connect_timeouts\":%llu,"
	     "\"closed_pdus_rx\":%llu,\"closed_pdus_tx\":%llu,"
	     "\"closed_bytes_rx\":%llu,\"closed_bytes_tx\":%llu,"
	     "\"zerocopy_sends\":%llu,\"zerocopy_completions\":%llu,\"zerocopy_copied\":%llu,"
	     "\"c2h_mapped\":%llu,\"share_waits\":%llu,\"r2t_timeouts\":%llu,"
	     "\"paused_closes\":%llu,",
	     (unsigned long long)t->accepted, (unsigned long long)t->rejected,
	     (unsigned long long)t->closed, (unsigned long long)t->fatal, t->live, t->connecting,
	     (unsigned long long)t->connect_timeouts, (unsigned long long)t->totals.pdus_rx,
	     (unsigned long long)t->totals.pdus_tx, (unsigned long long)t->totals.bytes_rx,
	     (unsigned long long)t->totals.bytes_tx, (unsigned long long)t->totals.zc_sends,
	     (unsigned long long)t->totals.zc_completions, (unsigned long long)t->totals.zc_copied,
	     (unsigned long long)t->totals.c2h_mapped, (unsigned long long)t->totals.share_waits,
	     (unsigned long long)t->totals.r2t_timeouts,
	     (unsigned long long)t->totals.paused_closes);
	jstates(&b, "req_states", t->totals.req_state_entries, NVMF_TCP_REQ_NSTATES,
		nvmf_tcp_req_state_name);
	jput(&b, ",");
	jstates(&b, "rx_states", t->totals.rx_state_entries, NVMF_TCP_RX_NSTATES,
		nvmf_tcp_rx_state_name);
	jput(&b, "}");
	if (snap->rdma.present)
		jput(&b,
		     ",\"rdma\":{\"accepted\":%llu,\"rejected\":%llu,\"closed\":%llu,\"live\":%u,"
		     "\"connecting\":%u,\"connect_timeouts\":%llu,\"registered_bytes\":%llu}",
		     (unsigned long long)snap->rdma.accepted,
		     (unsigned long long)snap->rdma.rejected, (unsigned long long)snap->rdma.closed,
		     snap->rdma.live, snap->rdma.connecting,
		     (unsigned long long)snap->rdma.connect_timeouts,
		     (unsigned long long)snap->rdma.registered_bytes);
	jput(&b, "}\n");
	if (b.overflow)
		return -ENOSPC;
	return (int)b.off;
}

/* ---- server ---------------------------------------------------------------------------------- */
struct stats_client {
	ev_io io;
	struct stats_server *srv;
	char in[STATS_LINE_MAX];
	size_t in_len;
	char *out; /* pending reply bytes (malloc'd), or NULL */
	size_t out_len, out_off;
};

struct stats_server {
	struct ev_loop *loop;
	struct nvmf_tgt *tgt;
	int fd;
	ev_io accept_io;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	double probe_ns;
	struct stats_client *clients[STATS_MAX_CLIENTS];
};

static void client_close(struct stats_client *c)
{
	struct stats_server *srv = c->srv;

	ev_io_stop(srv->loop, &c->io);
	close(c->io.fd);
	for (unsigned int i = 0; i < STATS_MAX_CLIENTS; i++)
		if (srv->clients[i] == c)
			srv->clients[i] = NULL;
	free(c->out);
	free(c);
}

/* Send what the socket takes; 0 when all is out, 1 when some waits, -1 on error. */
static int client_flush(struct stats_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->io.fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (n <= 0)
			return -1;
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	return 0;
}

static void client_set_events(struct stats_client *c, int events)
{
	if (c->io.events == events)
		return;
	ev_io_stop(c->srv->loop, &c->io);
	ev_io_set(&c->io, c->io.fd, events);
	ev_io_start(c->srv->loop, &c->io);
}

/* One request line: queue one snapshot line. */
static int client_answer(struct stats_client *c)
{
	struct stats_snapshot *snap;
	char *line;
	int n;

	snap = malloc(sizeof(*snap));
	line = malloc(STATS_JSON_MAX);
	if (!snap || !line) {
		free(snap);
		free(line);
		return -1;
	}
	stats_collect(c->srv->tgt, snap);
	snap->probe_ns = c->srv->probe_ns;
	n = stats_format_json(snap, line, STATS_JSON_MAX);
	free(snap);
	if (n < 0) {
		free(line);
		return -1;
	}
	c->out = line;
	c->out_len = (size_t)n;
	c->out_off = 0;
	return 0;
}

static void client_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct stats_client *c = w->data;
	int rc = 0;

	(void)loop;
	if (revents & EV_READ) {
		ssize_t n = recv(w->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_close(c);
			return;
		}
		if (n > 0)
			c->in_len += (size_t)n;
	}
	/* One reply at a time, in order: the next line waits until the last reply is out. */
	for (;;) {
		char *nl;
		size_t used;

		if (c->out) {
			rc = client_flush(c);
			if (rc < 0) {
				client_close(c);
				return;
			}
			if (rc > 0)
				break;
		}
		nl = memchr(c->in, '\n', c->in_len);
		if (!nl)
			break;
		used = (size_t)(nl - c->in) + 1;
		if (client_answer(c) != 0) {
			client_close(c);
			return;
		}
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
	}
	if (c->in_len == sizeof(c->in)) {
		client_close(c);
		return;
	}
	client_set_events(c, rc > 0 ? EV_READ | EV_WRITE : EV_READ);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct stats_server *srv = w->data;
	struct stats_client *c;
	unsigned int slot;
	int fd;

	(void)revents;
	fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (slot = 0; slot < STATS_MAX_CLIENTS; slot++)
		if (!srv->clients[slot])
			break;
	c = slot < STATS_MAX_CLIENTS ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		close(fd);
		return;
	}
	c->srv = srv;
	srv->clients[slot] = c;
	ev_io_init(&c->io, client_cb, fd, EV_READ);
	c->io.data = c;
	ev_io_start(loop, &c->io);
}

struct stats_server *stats_server_start(struct ev_loop *loop, struct nvmf_tgt *tgt,
					const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stats_server *srv;
	struct stat st;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--stats-socket: path empty or longer than %zu bytes",
			 sizeof(sa.sun_path) - 1);
		return NULL;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--stats-socket %s: exists and is not a socket",
				 path);
			return NULL;
		}
		unlink(path);
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, errlen, "--stats-socket: out of memory");
		return NULL;
	}
	srv->loop = loop;
	srv->tgt = tgt;
	strcpy(srv->path, path);
	strcpy(sa.sun_path, path);
	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->fd < 0 || bind(srv->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(srv->fd, 8) != 0) {
		snprintf(err, errlen, "--stats-socket %s: %s", path, strerror(errno));
		if (srv->fd >= 0)
			close(srv->fd);
		free(srv);
		return NULL;
	}
	chmod(path, 0600);
	stats_tick_hz();
	srv->probe_ns = stats_probe_cost_ns();
	ev_io_init(&srv->accept_io, accept_cb, srv->fd, EV_READ);
	srv->accept_io.data = srv;
	ev_io_start(loop, &srv->accept_io);
	log_notice("statistics on %s", path);
	return srv;
}

void stats_server_stop(struct stats_server *srv)
{
	if (!srv)
		return;
	for (unsigned int i = 0; i < STATS_MAX_CLIENTS; i++)
		if (srv->clients[i])
			client_close(srv->clients[i]);
	ev_io_stop(srv->loop, &srv->accept_io);
	close(srv->fd);
	unlink(srv->path);
	free(srv);
}
