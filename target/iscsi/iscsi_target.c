// SPDX-License-Identifier: MIT
/*
 * iSCSI front end set-up: targets and their LUN maps, CHAP (per target and for discovery
 * sessions) and initiator lists, options, portals (listening sockets on the main thread's
 * loop, connections handed to reactors like the NVMe/TCP transport does, logins in
 * progress counted against max_connecting), the transport ops table and shutdown.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "iscsi_internal.h"
#include "common/log.h"

#define ACCEPT_BUDGET 64

struct iscsi_global g_iscsi = { .lock = PTHREAD_MUTEX_INITIALIZER };

void iscsi_opts_default(struct iscsi_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_recv_dsl = 0;
	o->max_burst_length = 1048576;
	o->first_burst_length = 65536;
	o->max_outstanding_r2t = 1;
	o->initial_r2t = false;
	o->immediate_data = true;
	o->header_digest = true;
	o->data_digest = true;
	o->queue_depth = 128;
	o->chap_algs = ISCSI_CHAP_ALGS_DEFAULT;
	o->dataout_timeout_ms = 10000;
	o->nopin_interval_ms = 15000;
	o->nopin_timeout_ms = 30000;
	o->max_sessions_per_initiator = 64;
}

/*
 * Limits of what one task holds: a Data-In burst may span all the chunks of a task (its
 * PDUs are gathered from several), unsolicited data lands in the task's first chunk, and
 * every R2T stays inside one chunk (iscsi_task.c).
 */
static void opts_fit(struct iscsi_opts *o)
{
	uint32_t chunk = (uint32_t)reactor_buf_size();
	uint64_t task_max = (uint64_t)chunk * ISCSI_TASK_BUFS;

	if (task_max > ISCSI_MAX_DATA_SEG_LEN)
		task_max = ISCSI_MAX_DATA_SEG_LEN;
	if (o->max_burst_length > task_max)
		o->max_burst_length = (uint32_t)task_max;
	if (o->max_burst_length < ISCSI_MIN_DATA_SEG_LEN)
		o->max_burst_length = ISCSI_MIN_DATA_SEG_LEN;
	if (o->first_burst_length > chunk)
		o->first_burst_length = chunk;
	if (o->first_burst_length > o->max_burst_length)
		o->first_burst_length = o->max_burst_length;
	if (o->first_burst_length < ISCSI_MIN_DATA_SEG_LEN)
		o->first_burst_length = ISCSI_MIN_DATA_SEG_LEN;
	if (o->max_outstanding_r2t < 1)
		o->max_outstanding_r2t = 1;
	if (o->queue_depth < 1)
		o->queue_depth = 1;
	if (o->queue_depth > ISCSI_MAX_TASKS)
		o->queue_depth = ISCSI_MAX_TASKS;
	if (!o->chap_algs)
		o->chap_algs = ISCSI_CHAP_ALGS_DEFAULT;
}

void iscsi_set_opts(const struct iscsi_opts *opts)
{
	pthread_mutex_lock(&g_iscsi.lock);
	g_iscsi.opts = *opts;
	opts_fit(&g_iscsi.opts);
	pthread_mutex_unlock(&g_iscsi.lock);
}

int iscsi_init(struct nvmf_tgt *tgt)
{
	pthread_mutex_lock(&g_iscsi.lock);
	if (!g_iscsi.initialized) {
		TAILQ_INIT(&g_iscsi.targets);
		TAILQ_INIT(&g_iscsi.portals);
		TAILQ_INIT(&g_iscsi.conns);
		TAILQ_INIT(&g_iscsi.initiators);
		iscsi_opts_default(&g_iscsi.opts);
		opts_fit(&g_iscsi.opts);
		g_iscsi.next_tsih = 1;
		g_iscsi.initialized = true;
	}
	g_iscsi.tgt = tgt;
	pthread_mutex_unlock(&g_iscsi.lock);
	return 0;
}

/* ---- targets ----------------------------------------------------------------------------- */

/* iqn.YYYY-MM.reversed.domain[:id], eui.<16 hex>, naa.<16 or 32 hex> (RFC 3720 3.2.6). */
static bool iscsi_name_valid(const char *n)
{
	size_t len = strlen(n);

	if (len < 5 || len > ISCSI_NAME_MAX)
		return false;
	if (!strncmp(n, "iqn.", 4))
		return len > 12 && n[8] == '-';
	if (!strncmp(n, "eui.", 4))
		return len == 20;
	if (!strncmp(n, "naa.", 4))
		return len == 20 || len == 36;
	return false;
}

struct iscsi_target *iscsi_target_find_locked(const char *iqn)
{
	struct iscsi_target *t;

	TAILQ_FOREACH(t, &g_iscsi.targets, link)
		if (!t->removed && !strcasecmp(t->name, iqn))
			return t;
	return NULL;
}

bool iscsi_target_initiator_allowed_locked(const struct iscsi_target *t, const char *initiator)
{
	const struct iscsi_initiator_acl *a;

	if (TAILQ_EMPTY(&t->acl))
		return true;
	TAILQ_FOREACH(a, &t->acl, link)
		if (!strcasecmp(a->name, initiator))
			return true;
	return false;
}

int iscsi_target_add(const char *iqn, const char *alias)
{
	struct iscsi_target *t;

	if (!iqn || !iscsi_name_valid(iqn))
		return -EINVAL;
	pthread_mutex_lock(&g_iscsi.lock);
	if (iscsi_target_find_locked(iqn)) {
		pthread_mutex_unlock(&g_iscsi.lock);
		return -EEXIST;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		pthread_mutex_unlock(&g_iscsi.lock);
		return -ENOMEM;
	}
	snprintf(t->name, sizeof(t->name), "%s", iqn);
	if (alias)
		snprintf(t->alias, sizeof(t->alias), "%s", alias);
	TAILQ_INIT(&t->acl);
	TAILQ_INSERT_TAIL(&g_iscsi.targets, t, link);
	pthread_mutex_unlock(&g_iscsi.lock);
	log_info("iSCSI target %s", iqn);
	return 0;
}

static void target_free(struct iscsi_target *t)
{
	struct iscsi_initiator_acl *a;

	while ((a = TAILQ_FIRST(&t->acl))) {
		TAILQ_REMOVE(&t->acl, a, link);
		free(a);
	}
	OPENSSL_cleanse(&t->auth, sizeof(t->auth));
	free(t);
}

void iscsi_target_put_locked(struct iscsi_target *t)
{
	if (--t->refs == 0 && t->removed) {
		TAILQ_REMOVE(&g_iscsi.targets, t, link);
		target_free(t);
	}
}

int iscsi_target_remove(const char *iqn)
{
	struct iscsi_target *t;

	pthread_mutex_lock(&g_iscsi.lock);
	t = iscsi_target_find_locked(iqn);
	if (!t) {
		pthread_mutex_unlock(&g_iscsi.lock);
		return -ENOENT;
	}
	/* sessions still using it keep it; it stays unreachable for new logins */
	t->removed = true;
	if (!t->refs) {
		TAILQ_REMOVE(&g_iscsi.targets, t, link);
		target_free(t);
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	return 0;
}

int iscsi_target_add_lun(const char *iqn, uint32_t lun, const char *subnqn, uint32_t nsid)
{
	struct iscsi_target *t;
	int rc = 0;

	if (!subnqn || !*subnqn || strlen(subnqn) > NVME_NQN_MAX || !nsid || lun > 16383)
		return -EINVAL;
	pthread_mutex_lock(&g_iscsi.lock);
	t = iscsi_target_find_locked(iqn);
	if (!t) {
		rc = -ENOENT;
	} else if (t->nluns == ISCSI_MAX_LUNS) {
		rc = -ENOSPC;
	} else if (t->subnqn[0] && strcmp(t->subnqn, subnqn)) {
		rc = -EXDEV; /* one subsystem per target */
	} else {
		for (unsigned int i = 0; i < t->nluns; i++)
			if (t->luns[i].lun == lun)
				rc = -EEXIST;
		if (!rc) {
			struct iscsi_lun_map *m = &t->luns[t->nluns++];

			memset(m, 0, sizeof(*m));
			m->lun = lun;
			m->nsid = nsid;
			snprintf(t->subnqn, sizeof(t->subnqn), "%s", subnqn);
		}
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!rc)
		log_info("iSCSI target %s: LUN %u = %s namespace %u", iqn, lun, subnqn, nsid);
	return rc;
}

static int auth_check(const char *user, const char *secret, const char *mutual_user,
		      const char *mutual_secret)
{
	if (user && (!secret || !*user || !*secret || strlen(user) >= ISCSI_SECRET_MAX ||
		     strlen(secret) >= ISCSI_SECRET_MAX))
		return -EINVAL;
	if (mutual_user && (!user || !mutual_secret || !*mutual_user || !*mutual_secret ||
			    strlen(mutual_user) >= ISCSI_SECRET_MAX ||
			    strlen(mutual_secret) >= ISCSI_SECRET_MAX))
		return -EINVAL;
	return 0;
}

/* Under g_iscsi.lock. The generation moves when what initiators must prove changes. */
static void auth_set_locked(struct iscsi_auth *a, const char *user, const char *secret,
			    const char *mutual_user, const char *mutual_secret)
{
	bool changed = user &&
		       (!a->chap || strcmp(a->in.user, user) || strcmp(a->in.secret, secret));
	uint32_t gen = a->gen + (changed ? 1 : 0);

	OPENSSL_cleanse(a, sizeof(*a));
	a->gen = gen;
	a->chap = user != NULL;
	a->mutual = mutual_user != NULL;
	if (user) {
		snprintf(a->in.user, sizeof(a->in.user), "%s", user);
		snprintf(a->in.secret, sizeof(a->in.secret), "%s", secret);
	}
	if (mutual_user) {
		snprintf(a->out.user, sizeof(a->out.user), "%s", mutual_user);
		snprintf(a->out.secret, sizeof(a->out.secret), "%s", mutual_secret);
	}
}

int iscsi_target_set_chap(const char *iqn, const char *user, const char *secret,
			  const char *mutual_user, const char *mutual_secret)
{
	struct iscsi_target *t;
	int rc = auth_check(user, secret, mutual_user, mutual_secret);

	if (rc)
		return rc;
	pthread_mutex_lock(&g_iscsi.lock);
	t = iscsi_target_find_locked(iqn);
	if (!t)
		rc = -ENOENT;
	else
		auth_set_locked(&t->auth, user, secret, mutual_user, mutual_secret);
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!rc)
		log_info("iSCSI target %s: CHAP %s%s", iqn, user ? "required" : "off",
			 mutual_user ? " (mutual)" : "");
	return rc;
}

int iscsi_set_discovery_chap(const char *user, const char *secret, const char *mutual_user,
			     const char *mutual_secret)
{
	int rc = auth_check(user, secret, mutual_user, mutual_secret);

	if (rc)
		return rc;
	pthread_mutex_lock(&g_iscsi.lock);
	auth_set_locked(&g_iscsi.disc_auth, user, secret, mutual_user, mutual_secret);
	pthread_mutex_unlock(&g_iscsi.lock);
	log_info("iSCSI discovery sessions: CHAP %s%s", user ? "required" : "off",
		 mutual_user ? " (mutual)" : "");
	return 0;
}

int iscsi_target_allow_initiator(const char *iqn, const char *initiator)
{
	struct iscsi_initiator_acl *a;
	struct iscsi_target *t;

	if (!initiator || !iscsi_name_valid(initiator))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	snprintf(a->name, sizeof(a->name), "%s", initiator);
	pthread_mutex_lock(&g_iscsi.lock);
	t = iscsi_target_find_locked(iqn);
	if (t)
		TAILQ_INSERT_TAIL(&t->acl, a, link);
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!t) {
		free(a);
		return -ENOENT;
	}
	return 0;
}

int iscsi_target_set_initiators(const char *iqn, const char *const *names, size_t n)
{
	TAILQ_HEAD(, iscsi_initiator_acl) list = TAILQ_HEAD_INITIALIZER(list);
	struct iscsi_initiator_acl *a;
	struct iscsi_target *t;
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		if (!names[i] || !iscsi_name_valid(names[i])) {
			rc = -EINVAL;
			break;
		}
		a = calloc(1, sizeof(*a));
		if (!a) {
			rc = -ENOMEM;
			break;
		}
		snprintf(a->name, sizeof(a->name), "%s", names[i]);
		TAILQ_INSERT_TAIL(&list, a, link);
	}
	pthread_mutex_lock(&g_iscsi.lock);
	t = rc ? NULL : iscsi_target_find_locked(iqn);
	if (!rc && !t)
		rc = -ENOENT;
	if (t) { /* swap: the old list goes below */
		TAILQ_CONCAT(&list, &t->acl, link);
		for (size_t i = 0; i < n; i++) {
			a = TAILQ_FIRST(&list);
			TAILQ_REMOVE(&list, a, link);
			TAILQ_INSERT_TAIL(&t->acl, a, link);
		}
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	while ((a = TAILQ_FIRST(&list))) {
		TAILQ_REMOVE(&list, a, link);
		free(a);
	}
	return rc;
}

/* ---- I_T nexus names ---------------------------------------------------------------------- */

#define NEXUS_NAMES 1024

struct nexus_name {
	uint8_t hostid[16];
	uint8_t isid[6];
	char initiator[ISCSI_NAME_BUF];
};

static struct nexus_name g_nexus[NEXUS_NAMES];
static unsigned int g_nexus_n, g_nexus_next;
static pthread_mutex_t g_nexus_lock = PTHREAD_MUTEX_INITIALIZER;

void iscsi_nexus_register(const uint8_t hostid[16], const char *initiator, const uint8_t isid[6])
{
	struct nexus_name *e;

	pthread_mutex_lock(&g_nexus_lock);
	for (unsigned int i = 0; i < g_nexus_n; i++)
		if (!memcmp(g_nexus[i].hostid, hostid, 16))
			goto out;
	/* the oldest name goes when the table is full */
	e = &g_nexus[g_nexus_next];
	g_nexus_next = (g_nexus_next + 1) % NEXUS_NAMES;
	if (g_nexus_n < NEXUS_NAMES)
		g_nexus_n++;
	memcpy(e->hostid, hostid, 16);
	memcpy(e->isid, isid, 6);
	snprintf(e->initiator, sizeof(e->initiator), "%s", initiator);
out:
	pthread_mutex_unlock(&g_nexus_lock);
}

uint32_t iscsi_transport_id(void *arg, const uint8_t hostid[16], uint8_t *out, uint32_t cap)
{
	char name[ISCSI_NAME_BUF + 32] = "";
	uint32_t n, len;

	pthread_mutex_lock(&g_nexus_lock);
	for (unsigned int i = 0; i < g_nexus_n; i++) {
		const struct nexus_name *e = &g_nexus[i];

		if (memcmp(e->hostid, hostid, 16))
			continue;
		snprintf(name, sizeof(name), "%s,i,0x%02x%02x%02x%02x%02x%02x", e->initiator,
			 e->isid[0], e->isid[1], e->isid[2], e->isid[3], e->isid[4], e->isid[5]);
		break;
	}
	pthread_mutex_unlock(&g_nexus_lock);
	if (!name[0]) {
		/* an NVMe host: name it by its host identifier */
		n = (uint32_t)snprintf(name, sizeof(name), "hostid.");
		for (int i = 0; i < 16; i++)
			n += (uint32_t)snprintf(name + n, sizeof(name) - n, "%02x", hostid[i]);
	}
	/* iSCSI TransportID, format 01b (name and ISID) or 00b; NUL padded to 4 bytes */
	n = (uint32_t)strlen(name) + 1;
	len = (n + 3) & ~3u;
	if (len < 20)
		len = 20;
	if (4 + len > cap)
		return 0;
	memset(out, 0, 4 + len);
	out[0] = (uint8_t)((strstr(name, ",i,0x") ? 0x40 : 0x00) | SCSI_PROTO_ISCSI);
	put_be16(&out[2], (uint16_t)len);
	memcpy(&out[4], name, n);
	return 4 + len;
}

/* ---- portals -------------------------------------------------------------------------------- */

static void addr_str(const struct sockaddr_storage *ss, char *host, size_t hl, char *port,
		     size_t pl)
{
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, (socklen_t)hl);
		snprintf(port, pl, "%u", ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, (socklen_t)hl);
		snprintf(port, pl, "%u", ntohs(s4->sin_port));
	}
}

/* TCP keep-alive: a peer that vanished without a FIN or RST (powered off, cut off) is
 * found within about two minutes even by a session nothing else watches. */
static void keepalive(int fd)
{
	int one = 1, idle = 60, intvl = 10, cnt = 6;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static void hand_off(const struct iscsi_portal *p, int fd, const struct sockaddr_storage *ss)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local);
	char host[INET6_ADDRSTRLEN] = "?", port[16] = "?", peer[64];
	struct iscsi_conn *c;
	struct reactor *r;
	int one = 1;

	addr_str(ss, host, sizeof(host), port, sizeof(port));
	snprintf(peer, sizeof(peer), ss->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
	/* Logins in progress have a limit of their own (and a deadline): sockets that never
	 * finish logging in cannot take an established session's slot. */
	if (g_iscsi.tgt) {
		unsigned int all = __atomic_load_n(&g_iscsi.nconns, __ATOMIC_RELAXED);
		unsigned int connecting = __atomic_load_n(&g_iscsi.nconnecting, __ATOMIC_RELAXED);

		if (connecting >= g_iscsi.tgt->opts.max_connecting) {
			log_peer("%s: iSCSI connection refused: %u logins in progress", peer,
				 connecting);
			close(fd);
			return;
		}
		if (all - connecting >= g_iscsi.tgt->opts.max_connections) {
			log_peer("%s: iSCSI connection refused: too many connections", peer);
			close(fd);
			return;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	keepalive(fd);
	r = reactor_next();
	c = r ? iscsi_conn_create(fd, peer) : NULL;
	if (!c) {
		log_peer("%s: iSCSI connection refused: out of memory or no reactor", peer);
		close(fd);
		return;
	}
	if (getsockname(fd, (struct sockaddr *)&local, &ll) == 0)
		addr_str(&local, c->local_addr, sizeof(c->local_addr), c->local_port,
			 sizeof(c->local_port));
	snprintf(c->advertise, sizeof(c->advertise), "%s", p->advertise);
	c->r = r; /* before others can find it in the list */
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_INSERT_TAIL(&g_iscsi.conns, c, link);
	pthread_mutex_unlock(&g_iscsi.lock);
	__atomic_add_fetch(&g_iscsi.nconns, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g_iscsi.nconnecting, 1, __ATOMIC_RELAXED);
	c->connecting = true;
	if (reactor_send_msg(r, iscsi_conn_start, c) != 0) {
		pthread_mutex_lock(&g_iscsi.lock);
		TAILQ_REMOVE(&g_iscsi.conns, c, link);
		pthread_mutex_unlock(&g_iscsi.lock);
		__atomic_sub_fetch(&g_iscsi.nconns, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&g_iscsi.nconnecting, 1, __ATOMIC_RELAXED);
		close(fd);
		free(c->rx_stage);
		free(c);
	}
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct iscsi_portal *p = w->data;

	for (int i = 0; i < ACCEPT_BUDGET; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(p->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			hand_off(p, fd, &ss);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			log_peer("iscsi://%s:%s: accept: %s", p->addr, p->port, strerror(errno));
		return;
	}
}

static int portal_open(const char *addr, const char *port, struct iscsi_portal **out,
		       char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct iscsi_portal *p;
	int one = 1, fd, rc;

	rc = getaddrinfo(addr, port && *port ? port : "3260", &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "iscsi://%s:%s: bad address: %s", addr, port,
			 gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		freeaddrinfo(ai);
		snprintf(err, errlen, "socket: %s", strerror(-rc));
		return rc;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1024)) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen: %s", strerror(errno));
		close(fd);
		freeaddrinfo(ai);
		return rc;
	}
	freeaddrinfo(ai);
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	p->fd = fd;
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		char host[INET6_ADDRSTRLEN];

		addr_str(&ss, host, sizeof(host), p->port, sizeof(p->port));
	} else {
		snprintf(p->port, sizeof(p->port), "%s", port);
	}
	ev_io_init(&p->io, accept_cb, fd, EV_READ);
	p->io.data = p;
	ev_io_start(EV_DEFAULT, &p->io);
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_INSERT_TAIL(&g_iscsi.portals, p, link);
	pthread_mutex_unlock(&g_iscsi.lock);
	log_info("iscsi://%s:%s: listening", p->addr, p->port);
	*out = p;
	return 0;
}

static void portal_close(struct iscsi_portal *p)
{
	ev_io_stop(EV_DEFAULT, &p->io);
	close(p->fd);
	log_info("iscsi://%s:%s: stopped listening", p->addr, p->port);
	free(p);
}

int iscsi_portal_start(struct nvmf_tgt *tgt, const char *addr, const char *port,
		       char *port_out, size_t port_out_len, char *err, size_t errlen)
{
	struct iscsi_portal *p;
	int rc;

	iscsi_init(tgt);
	rc = portal_open(addr, port, &p, err, errlen);
	if (!rc && port_out)
		snprintf(port_out, port_out_len, "%s", p->port);
	return rc;
}

int iscsi_portal_advertise(const char *addr, const char *port, const char *advertise)
{
	struct iscsi_portal *p;
	int rc = -ENOENT;

	if (strlen(advertise) >= sizeof(p->advertise))
		return -ENAMETOOLONG;
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(p, &g_iscsi.portals, link) {
		if (!strcmp(p->addr, addr) && !strcmp(p->port, port)) {
			snprintf(p->advertise, sizeof(p->advertise), "%s", advertise);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	return rc;
}

int iscsi_quick_setup(struct nvmf_tgt *tgt, struct nvmf_subsys *subsys, const char *addr,
		      const char *port, char *err, size_t errlen)
{
	int rc;

	iscsi_init(tgt);
	rc = iscsi_target_add(ISCSI_DEFAULT_IQN, NULL);
	if (rc && rc != -EEXIST) {
		snprintf(err, errlen, "iSCSI target %s: %s", ISCSI_DEFAULT_IQN, strerror(-rc));
		return rc;
	}
	if (rc != -EEXIST) {
		for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
			if (!__atomic_load_n(&subsys->ns[nsid], __ATOMIC_ACQUIRE))
				continue;
			rc = iscsi_target_add_lun(ISCSI_DEFAULT_IQN, nsid - 1, subsys->nqn, nsid);
			if (rc) {
				snprintf(err, errlen, "iSCSI LUN %u: %s", nsid - 1, strerror(-rc));
				return rc;
			}
		}
	}
	return iscsi_portal_start(tgt, addr, port, NULL, 0, err, errlen);
}

/* ---- transport ops (ports of trtype "iscsi") ----------------------------------------------- */

static int iscsi_listen(struct nvmf_tgt *tgt, struct nvmf_port *port)
{
	struct iscsi_portal *p;
	char err[256];
	int rc;

	if (port->listener)
		return -EBUSY;
	iscsi_init(tgt);
	rc = portal_open(port->traddr, port->trsvcid, &p, err, sizeof(err));
	if (rc) {
		log_err("%s", err);
		return rc;
	}
	p->nvmf_port = port;
	snprintf(p->advertise, sizeof(p->advertise), "%s", port->advertise);
	snprintf(port->trsvcid, sizeof(port->trsvcid), "%s", p->port);
	port->listener = p;
	return 0;
}

static void iscsi_stop_listen(struct nvmf_port *port)
{
	struct iscsi_portal *p = port->listener;

	if (!p)
		return;
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_REMOVE(&g_iscsi.portals, p, link);
	pthread_mutex_unlock(&g_iscsi.lock);
	port->listener = NULL;
	portal_close(p);
}

static void iscsi_qpair_disconnect(struct nvmf_qpair *qp)
{
	iscsi_conn_close(iscsi_conn_of(qp), "disconnected by the target");
}

static void iscsi_disc_entry(const struct nvmf_port *port, struct nvmf_disc_log_entry *e)
{
	/* iSCSI portals are not NVMe ports: nothing to add to a discovery log entry */
}

const struct nvmf_transport_ops nvmf_iscsi_transport_ops = {
	.name = "iscsi",
	.trtype = 0,
	.listen = iscsi_listen,
	.stop_listen = iscsi_stop_listen,
	.req_complete = iscsi_task_req_complete,
	.qpair_disconnect = iscsi_qpair_disconnect,
	.disc_entry = iscsi_disc_entry,
};

int iscsi_transport_register(void)
{
	return nvmf_transport_register(&nvmf_iscsi_transport_ops);
}

void iscsi_get_stats(struct iscsi_stats *st)
{
	st->connections = __atomic_load_n(&g_iscsi.nconns, __ATOMIC_RELAXED);
	st->connecting = __atomic_load_n(&g_iscsi.nconnecting, __ATOMIC_RELAXED);
	st->login_timeouts = __atomic_load_n(&g_iscsi.login_timeouts, __ATOMIC_RELAXED);
	st->revoked = __atomic_load_n(&g_iscsi.revoked, __ATOMIC_RELAXED);
	st->dataout_timeouts = __atomic_load_n(&g_iscsi.dataout_timeouts, __ATOMIC_RELAXED);
	st->nopin_timeouts = __atomic_load_n(&g_iscsi.nopin_timeouts, __ATOMIC_RELAXED);
	st->peer_gone = __atomic_load_n(&g_iscsi.peer_gone, __ATOMIC_RELAXED);
	st->initiator_limit = __atomic_load_n(&g_iscsi.initiator_limit, __ATOMIC_RELAXED);
	st->tasks_allocated = __atomic_load_n(&g_iscsi.tasks_allocated, __ATOMIC_RELAXED);
}

/* ---- shutdown ------------------------------------------------------------------------------ */

static void close_all_msg(void *arg)
{
	struct reactor *r = reactor_self();
	struct iscsi_conn *c, *next;

	pthread_mutex_lock(&g_iscsi.lock);
	for (c = TAILQ_FIRST(&g_iscsi.conns); c; c = next) {
		next = TAILQ_NEXT(c, link);
		if (c->r == r && c->state != CONN_CLOSING) {
			pthread_mutex_unlock(&g_iscsi.lock);
			iscsi_conn_close(c, "target shutting down");
			pthread_mutex_lock(&g_iscsi.lock);
			next = TAILQ_FIRST(&g_iscsi.conns); /* the list may have changed */
		}
	}
	pthread_mutex_unlock(&g_iscsi.lock);
}

void iscsi_fini(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	struct iscsi_portal *p;
	struct iscsi_target *t;
	unsigned int waited = 0;

	if (!g_iscsi.initialized)
		return;
	pthread_mutex_lock(&g_iscsi.lock);
	while ((p = TAILQ_FIRST(&g_iscsi.portals))) {
		TAILQ_REMOVE(&g_iscsi.portals, p, link);
		if (p->nvmf_port)
			p->nvmf_port->listener = NULL;
		pthread_mutex_unlock(&g_iscsi.lock);
		portal_close(p);
		pthread_mutex_lock(&g_iscsi.lock);
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	if (__atomic_load_n(&g_iscsi.nconns, __ATOMIC_ACQUIRE))
		reactor_for_each(close_all_msg, NULL);
	while (__atomic_load_n(&g_iscsi.nconns, __ATOMIC_ACQUIRE) && waited < 5000) {
		nanosleep(&ts, NULL);
		waited += 5;
	}
	if (__atomic_load_n(&g_iscsi.nconns, __ATOMIC_ACQUIRE))
		log_warn("%u iSCSI connection(s) still busy at shutdown", g_iscsi.nconns);
	pthread_mutex_lock(&g_iscsi.lock);
	while ((t = TAILQ_FIRST(&g_iscsi.targets))) {
		TAILQ_REMOVE(&g_iscsi.targets, t, link);
		target_free(t);
	}
	OPENSSL_cleanse(&g_iscsi.disc_auth, sizeof(g_iscsi.disc_auth));
	g_iscsi.initialized = false;
	pthread_mutex_unlock(&g_iscsi.lock);
}
