/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-target: parse flags (or load a config file), start the reactors, build the
 * target, listen, and serve until SIGINT/SIGTERM. SIGHUP reloads the config file.
 * The main thread runs the default libev loop: listeners accept there and hand each
 * connection to a reactor. The control socket (control.h) is served on that loop too.
 */
#include "config.h"

#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_opts.h"
#include "control.h"
#include "config/config_file.h"
#include "iscsi/iscsi.h"
#include "common/dhchap_key.h"
#include "common/key_file.h"
#include "common/log.h"
#include "common/tls_psk.h"
#include "core/ana.h"
#include "core/nvmf.h"
#include "core/state_dir.h"
#include "reactor/reactor.h"
#include "service.h"
#include "metrics.h"
#include "stats.h"
#include "tcp/tcp_transport.h"
#ifdef HAVE_RDMA
#include "rdma/rdma_transport.h"
#endif

#define PROG                  "nvmeof-target"
#define SHUTDOWN_CONN_WAIT_MS 10000

/* An iSCSI portal started from --listen iscsi://, for the ready line. */
struct iscsi_listen {
	char addr[URI_HOST_MAX];
	char port[16];
	bool ipv6;
};

struct daemon_ctx {
	struct cli_opts *o;
	struct iscsi_listen iscsi[CLI_MAX_LISTEN];
	unsigned int niscsi;
	bool iscsi_on;
	struct nvmf_tgt *tgt;
	struct tgt_config *cfg;
	ev_signal sigint, sigterm, sighup;
	ev_timer ana_tick; /* ANA groups leaving Change (core/ana.h) */
	int stop_signal;
	struct stats_server *stats; /* --stats-socket */
	struct control_ctx control; /* --control-socket: acts on cfg */
	struct control_server *ctl;
	const char *log_file;             /* --log-file, or the default with -d */
	uint32_t control_started_io_size; /* MDTS the reactors' buffers were sized for */
	char config_path[CONFIG_PATH_MAX];
	struct metrics_server *metrics; /* --metrics or the config's "metrics" */
};

static const char *adrfam_name(const struct uri_listen *u)
{
	return u->ipv6 ? "ipv6" : "ipv4";
}

/* A listener scheme this build can serve, or an error line. */
static int check_transports(const struct cli_opts *o, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < o->nlisten; i++) {
		const char *name = uri_transport_name(o->listen[i].transport);

		if (!nvmf_transport_find(name)) {
			snprintf(err, errlen,
				 "--listen: %s:// listeners are not available in this build", name);
			return -EINVAL;
		}
	}
	return 0;
}

static unsigned int subsys_ns_count(const struct nvmf_subsys *s)
{
	unsigned int n = 0;

	for (unsigned int i = 1; i <= NVMF_MAX_NAMESPACES; i++)
		if (__atomic_load_n(&s->ns[i], __ATOMIC_ACQUIRE))
			n++;
	return n;
}

/* Discovery-only listeners on a port other than 8009 (8009 is the config code's job). */
static int add_discovery_ports(struct nvmf_tgt *tgt, const struct cli_opts *o)
{
	char svc[16], err[256];
	int rc;

	snprintf(svc, sizeof(svc), "%u", o->discovery_port);
	for (unsigned int i = 0; i < o->nlisten; i++) {
		const struct uri_listen *u = &o->listen[i];
		struct nvmf_port_opts po = {
			.trtype = "tcp",
			.adrfam = adrfam_name(u),
			.traddr = u->addr,
			.trsvcid = svc,
			.discovery_only = true,
		};
		struct nvmf_port *port;
		bool dup = false;

		if (u->transport != URI_TRANSPORT_TCP || u->port == o->discovery_port)
			continue;
		for (unsigned int j = 0; j < i; j++)
			if (o->listen[j].transport == URI_TRANSPORT_TCP &&
			    strcmp(o->listen[j].addr, u->addr) == 0)
				dup = true;
		if (dup)
			continue;
		port = nvmf_port_create(tgt, &po, err, sizeof(err));
		if (!port) {
			log_warn("discovery listener %s:%s: %s", u->addr, svc, err);
			continue;
		}
		rc = nvmf_port_listen(port);
		if (rc != 0) {
			log_warn("discovery listener %s:%s: cannot listen: %s (continuing without "
				 "it)",
				 u->addr, svc, strerror(-rc));
			nvmf_port_destroy(port);
		}
	}
	return 0;
}

/* --tls-psk-file HOSTNQN=PATH: the host's TLS PSK from a file of mode 0600. */
static int quick_tls_psk(struct nvmf_tgt *tgt, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	char nqn[NVME_NQN_FIELD], text[NVME_TLS_KEY_TEXT_MAX + 2], kerr[200] = "";
	struct nvme_tls_key key = { 0 };
	int rc;

	snprintf(nqn, sizeof(nqn), "%.*s", (int)(eq - arg), arg);
	rc = nvme_key_file_read(eq + 1, text, sizeof(text), kerr, sizeof(kerr));
	if (rc >= 0) {
		rc = nvme_tls_key_parse(text, &key, kerr, sizeof(kerr));
		explicit_bzero(text, sizeof(text));
	}
	if (rc == 0)
		rc = nvmf_tgt_set_host_psk(tgt, nqn, &key);
	nvme_tls_key_clear(&key);
	if (rc < 0)
		snprintf(err, errlen, "--tls-psk-file %s: %s", nqn, kerr[0] ? kerr : strerror(-rc));
	return rc < 0 ? rc : 0;
}

/* An NVMe port (tcp://, rdma://) exporting @subsys. */
static int nvme_listen(struct nvmf_tgt *tgt, struct nvmf_subsys *subsys, const struct cli_opts *o,
		       const struct uri_listen *u, char *err, size_t errlen)
{
	char svc[16], perr[256] = "";
	struct nvmf_port_opts po = {
		.trtype = uri_transport_name(u->transport),
		.adrfam = adrfam_name(u),
		.traddr = u->addr,
		.trsvcid = svc,
		.in_capsule_size = o->in_capsule_set ? o->in_capsule : 0,
		.sectype = u->tls ? NVMF_TCP_SECTYPE_TLS13 : NVMF_TCP_SECTYPE_NONE,
		.treq = u->tls ? NVMF_TREQ_SECURE_REQUIRED : NVMF_TREQ_SECURE_NOT_SPECIFIED,
	};
	struct nvmf_port *port;
	int rc;

	snprintf(svc, sizeof(svc), "%u", u->port);
	port = nvmf_port_create(tgt, &po, perr, sizeof(perr));
	if (!port) {
		rc = -errno;
		snprintf(err, errlen, "--listen %s:%u: %s", u->addr, u->port, perr);
		return rc;
	}
	rc = nvmf_port_add_subsys(port, subsys);
	if (rc == 0)
		rc = nvmf_port_listen(port);
	if (rc < 0)
		snprintf(err, errlen, "--listen %s://%s%s%s:%u: %s", po.trtype, u->ipv6 ? "[" : "",
			 u->addr, u->ipv6 ? "]" : "", u->port, strerror(-rc));
	return rc;
}

/*
 * iscsi://ADDR:PORT from the quick flags: target ISCSI_DEFAULT_IQN with every namespace of
 * @subsys as LUN NSID-1 (the same mapping as iscsi_quick_setup()), and a portal.
 */
static int iscsi_quick_portal(struct daemon_ctx *d, struct nvmf_subsys *subsys,
			      const struct uri_listen *u, char *err, size_t errlen)
{
	struct iscsi_listen *il = &d->iscsi[d->niscsi];
	char port[16], perr[256] = "";
	int rc;

	iscsi_init(d->tgt);
	d->iscsi_on = true;
	rc = iscsi_target_add(ISCSI_DEFAULT_IQN, NULL);
	if (rc == 0) {
		for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
			if (!__atomic_load_n(&subsys->ns[nsid], __ATOMIC_ACQUIRE))
				continue;
			rc = iscsi_target_add_lun(ISCSI_DEFAULT_IQN, nsid - 1, subsys->nqn, nsid);
			if (rc) {
				snprintf(err, errlen, "iSCSI LUN %u: %s", nsid - 1, strerror(-rc));
				return rc;
			}
		}
	} else if (rc != -EEXIST) {
		snprintf(err, errlen, "iSCSI target %s: %s", ISCSI_DEFAULT_IQN, strerror(-rc));
		return rc;
	}
	snprintf(port, sizeof(port), "%u", u->port);
	rc = iscsi_portal_start(d->tgt, u->addr, port, il->port, sizeof(il->port), perr,
				sizeof(perr));
	if (rc) {
		snprintf(err, errlen, "--listen iscsi://%s%s%s:%u: %s", u->ipv6 ? "[" : "", u->addr,
			 u->ipv6 ? "]" : "", u->port, perr[0] ? perr : strerror(-rc));
		return rc;
	}
	snprintf(il->addr, sizeof(il->addr), "%s", u->addr);
	il->ipv6 = u->ipv6;
	d->niscsi++;
	return 0;
}

/* A --dhchap-key/--dhchap-ctrl-key value: the secret, or read from the file it names. */
static int quick_secret(const char *flag, const char *nqn, const char *val, char *buf, size_t len,
			char *err, size_t errlen)
{
	char why[300];
	int rc;

	if (!val) {
		buf[0] = '\0';
		return 0;
	}
	if (val[0] != '/') {
		snprintf(buf, len, "%s", val);
		return 0;
	}
	rc = nvme_key_file_read(val, buf, len, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "%s %s=%s: %s", flag, nqn, val, why);
	return rc < 0 ? rc : 0;
}

/* The hosts of --dhchap-key: allowed on @subsys and asked to authenticate. */
static int quick_dhchap(struct nvmf_tgt *tgt, struct nvmf_subsys *subsys, const struct cli_opts *o,
			char *err, size_t errlen)
{
	struct nvmf_host_dhchap v[CLI_MAX_HOSTS];
	static char keys[CLI_MAX_HOSTS][2][NVME_DHCHAP_KEY_TEXT_MAX + 64];
	char why[400];
	int rc = 0;

	for (unsigned int i = 0; i < o->ndhchap && !rc; i++) {
		const struct cli_dhchap *d = &o->dhchap[i];

		rc = nvmf_subsys_add_host(subsys, d->hostnqn);
		if (rc == -EEXIST)
			rc = 0; /* also given with --allow-host */
		if (rc < 0) {
			snprintf(err, errlen, "--dhchap-key %s: %s", d->hostnqn, strerror(-rc));
			break;
		}
		rc = quick_secret("--dhchap-key", d->hostnqn, d->key, keys[i][0],
				  sizeof(keys[i][0]), err, errlen);
		if (!rc)
			rc = quick_secret("--dhchap-ctrl-key", d->hostnqn, d->ctrl_key, keys[i][1],
					  sizeof(keys[i][1]), err, errlen);
		v[i] = (struct nvmf_host_dhchap){ .hostnqn = d->hostnqn,
						  .key = keys[i][0],
						  .ctrl_key = keys[i][1],
						  .hash = o->dhchap_hash,
						  .dhgroup = o->dhchap_dhgroup };
	}
	if (!rc && o->ndhchap) {
		rc = nvmf_tgt_set_host_keys(tgt, v, o->ndhchap, why, sizeof(why));
		if (rc < 0)
			snprintf(err, errlen, "--dhchap-key: %s", why);
	}
	explicit_bzero(keys, sizeof(keys));
	return rc < 0 ? rc : 0;
}

/* One subsystem from the quick flags. */
static int quick_setup(struct daemon_ctx *d, char *err, size_t errlen)
{
	struct nvmf_tgt *tgt = d->tgt;
	const struct cli_opts *o = d->o;
	struct nvmf_subsys *subsys;
	int rc;

	subsys = nvmf_subsys_create(tgt, o->nqn);
	if (!subsys) {
		snprintf(err, errlen, "subsystem %s: %s", o->nqn, strerror(errno));
		return -errno;
	}
	if (o->nhosts == 0 && o->ndhchap == 0)
		nvmf_subsys_set_allow_any_host(subsys, true);
	for (unsigned int i = 0; i < o->nhosts; i++) {
		rc = nvmf_subsys_add_host(subsys, o->hosts[i]);
		if (rc < 0) {
			snprintf(err, errlen, "--allow-host %s: %s", o->hosts[i], strerror(-rc));
			return rc;
		}
	}
	rc = quick_dhchap(tgt, subsys, o, err, errlen);
	if (rc < 0)
		return rc;
	for (unsigned int i = 0; i < o->ntls_psk_files; i++) {
		rc = quick_tls_psk(tgt, o->tls_psk_files[i], err, errlen);
		if (rc < 0)
			return rc;
	}
	for (unsigned int i = 0; i < o->nns; i++) {
		static const char opt_buffered[] = ",buffered_io";
		size_t len = strlen(o->ns[i]), olen = sizeof(opt_buffered) - 1;
		struct nvmf_ns_opts no = {
			.path = o->ns[i],
			.block_size = o->block_size,
			.enabled = true,
		};
		char nerr[512] = "", path[4096];

		/* "PATH,buffered_io": a file or block device through the page cache. */
		if (len > olen && !strcmp(o->ns[i] + len - olen, opt_buffered) &&
		    len - olen < sizeof(path)) {
			memcpy(path, o->ns[i], len - olen);
			path[len - olen] = '\0';
			no.path = path;
			no.buffered_io = true;
		}

		rc = nvmf_subsys_add_ns(subsys, &no, nerr, sizeof(nerr));
		if (rc < 0) {
			snprintf(err, errlen, "--ns %s: %s", o->ns[i],
				 nerr[0] ? nerr : strerror(-rc));
			return rc;
		}
	}
	for (unsigned int i = 0; i < o->nlisten; i++) {
		const struct uri_listen *u = &o->listen[i];

		rc = u->transport == URI_TRANSPORT_ISCSI
			     ? iscsi_quick_portal(d, subsys, u, err, errlen)
			     : nvme_listen(tgt, subsys, o, u, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (o->discovery_port == 8009) {
		rc = config_add_default_discovery_ports(tgt, err, errlen);
		if (rc < 0)
			return rc;
	} else if (o->discovery_port) {
		add_discovery_ports(tgt, o);
	}
	return 0;
}

/* The "ready" lines scripts wait for: one per listening port. */
static void announce(struct daemon_ctx *d)
{
	struct nvmf_tgt *tgt = d->tgt;
	struct nvmf_port *p;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(p, &tgt->ports, link)
	{
		bool v6 = p->adrfam == NVMF_ADRFAM_IPV6;
		unsigned int nns = 0;

		if (!p->listening)
			continue;
		if (p->discovery_only) {
			log_notice("discovery on %s://%s%s%s:%s", p->ops->name, v6 ? "[" : "",
				   p->traddr, v6 ? "]" : "", p->trsvcid);
			continue;
		}
		for (unsigned int i = 0; i < p->nsubsys; i++)
			nns += subsys_ns_count(p->subsys[i]);
		if (p->nsubsys == 1)
			log_notice("listening on %s://%s%s%s:%s (%s, %u namespace%s)",
				   p->sectype == NVMF_TCP_SECTYPE_TLS13 ? "tls" : p->ops->name,
				   v6 ? "[" : "", p->traddr, v6 ? "]" : "", p->trsvcid,
				   p->subsys[0]->nqn, nns, nns == 1 ? "" : "s");
		else
			log_notice("listening on %s://%s%s%s:%s (%u subsystems, %u namespace%s)",
				   p->sectype == NVMF_TCP_SECTYPE_TLS13 ? "tls" : p->ops->name,
				   v6 ? "[" : "", p->traddr, v6 ? "]" : "", p->trsvcid, p->nsubsys,
				   nns, nns == 1 ? "" : "s");
	}
	pthread_mutex_unlock(&tgt->lock);
	for (unsigned int i = 0; i < d->niscsi; i++) {
		const struct iscsi_listen *il = &d->iscsi[i];
		struct nvmf_subsys *s = nvmf_subsys_find(tgt, d->o->nqn);
		unsigned int nns = s ? subsys_ns_count(s) : 0;

		log_notice("listening on iscsi://%s%s%s:%s (%s, %u LUN%s)", il->ipv6 ? "[" : "",
			   il->addr, il->ipv6 ? "]" : "", il->port, ISCSI_DEFAULT_IQN, nns,
			   nns == 1 ? "" : "s");
	}
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon_ctx *d = w->data;

	d->stop_signal = w->signum;
	ev_break(loop, EVBREAK_ALL);
}

/* Open the log file (appending) and put it on stderr, where the log goes. */
static int open_log_file(struct daemon_ctx *d, char *err, size_t errlen)
{
	int fd = open(d->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0) {
		snprintf(err, errlen, "--log-file %s: %s", d->log_file, strerror(errno));
		return -errno;
	}
	if (dup2(fd, STDERR_FILENO) < 0) {
		snprintf(err, errlen, "--log-file %s: %s", d->log_file, strerror(errno));
		close(fd);
		return -errno;
	}
	close(fd);
	log_use_timestamps(true);
	return 0;
}

static void apply_tgt_opts(const struct cli_opts *o, struct nvmf_tgt_opts *t);

static void ana_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon_ctx *d = w->data;
	struct timespec ts;

	(void)loop;
	(void)revents;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	nvmf_ana_tick(d->tgt, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}
static void apply_limits(const struct cli_opts *o, const struct tgt_config *cfg,
			 struct nvmf_tgt_opts *t);

/*
 * New limits from the file apply to new connections. The reactors' data buffers were
 * sized for the MDTS at start, so it may shrink but not grow without a restart.
 */
static void reload_limits(struct daemon_ctx *d)
{
	struct nvmf_tgt_opts t, *cur = &d->tgt->opts;

	apply_tgt_opts(d->o, &t);
	apply_limits(d->o, d->cfg, &t);
	if (t.max_io_size > d->control_started_io_size) {
		log_warn("limits.max_io_size %u: larger than at start (%u) needs a restart; "
			 "keeping %u",
			 t.max_io_size, d->control_started_io_size, cur->max_io_size);
		t.max_io_size = cur->max_io_size;
	}
	if (t.max_connections != cur->max_connections ||
	    t.max_queue_depth != cur->max_queue_depth ||
	    t.in_capsule_size != cur->in_capsule_size || t.max_io_size != cur->max_io_size)
		log_notice("limits for new connections: max_connections %u, max_queue_depth %u, "
			   "in_capsule_size %u, max_io_size %u",
			   t.max_connections, t.max_queue_depth, t.in_capsule_size, t.max_io_size);
	__atomic_store_n(&cur->max_connections, t.max_connections, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->max_connecting, t.max_connecting, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->max_host_connections, t.max_host_connections, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->r2t_timeout_ms, t.r2t_timeout_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->connect_timeout_ms, t.connect_timeout_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->auth_timeout_ms, t.auth_timeout_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->auth_max_pending, t.auth_max_pending, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->auth_max_pending_host, t.auth_max_pending_host, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->auth_max_pending_addr, t.auth_max_pending_addr, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->auth_threads, t.auth_threads, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->login_timeout_ms, t.login_timeout_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->max_queue_depth, t.max_queue_depth, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->in_capsule_size, t.in_capsule_size, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->max_io_size, t.max_io_size, __ATOMIC_RELAXED);
	__atomic_store_n(&cur->tcp_zerocopy_min, t.tcp_zerocopy_min, __ATOMIC_RELAXED);
}

/*
 * The reloaded file's iscsi section (validated with the rest, secret files read again):
 * targets, initiators, CHAP and options; sessions whose access is gone end now.
 */
static void reload_iscsi(struct daemon_ctx *d)
{
	unsigned int revoked = 0;
	char err[512];

	if (!d->iscsi_on && !d->cfg->iscsi_json)
		return;
	d->iscsi_on = true;
	if (iscsi_config_reload(d->tgt, d->cfg->iscsi_json, &revoked, err, sizeof(err)))
		log_err("reload: %s", err);
	if (revoked)
		log_notice("reload: %u iSCSI session%s ended (access revoked)", revoked,
			   revoked == 1 ? "" : "s");
}

/*
 * SIGHUP: reopen the log file (logrotate), then re-apply the -c file. The file wins:
 * live changes made through the control socket and not saved to it are replaced (and
 * that is logged); a reload that fails keeps everything, live changes included.
 */
static void hup_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon_ctx *d = w->data;
	char err[512];

	if (d->log_file && open_log_file(d, err, sizeof(err)))
		log_err("SIGHUP: %s (logging continues to the old file)", err);
	if (!d->o->config) {
		log_notice("SIGHUP: no configuration file to reload");
		return;
	}
	log_notice("SIGHUP: reloading %s", d->o->config);
	if (d->control.dirty)
		log_warn("SIGHUP: live changes not saved to %s are replaced by its contents "
			 "(nvmeof-ctl save keeps them)",
			 d->o->config);
	service_reloading();
	if (config_reload_file(d->tgt, &d->cfg, err, sizeof(err)) != 0) {
		log_err("reload failed, keeping the running configuration: %s", err);
	} else {
		d->control.dirty = false;
		reload_limits(d);
		reload_iscsi(d);
		announce(d);
	}
	service_reloaded();
}

static void apply_tgt_opts(const struct cli_opts *o, struct nvmf_tgt_opts *t)
{
	nvmf_tgt_opts_default(t);
	t->state_dir = o->state_dir ? o->state_dir : CLI_DEFAULT_STATE_DIR;
	if (o->in_capsule_set)
		t->in_capsule_size = o->in_capsule;
	if (o->max_queue_depth)
		t->max_queue_depth = o->max_queue_depth;
	if (o->max_io_size)
		t->max_io_size = o->max_io_size;
	if (o->tcp_zerocopy_set)
		t->tcp_zerocopy_min = o->tcp_zerocopy_min;
	if (o->max_connections)
		t->max_connections = o->max_connections;
	if (o->max_connecting)
		t->max_connecting = o->max_connecting;
	if (o->max_host_connections)
		t->max_host_connections = o->max_host_connections;
	if (o->r2t_timeout_set)
		t->r2t_timeout_ms = o->r2t_timeout_ms;
	if (o->connect_timeout_set)
		t->connect_timeout_ms = o->connect_timeout_ms;
	if (o->auth_timeout_set)
		t->auth_timeout_ms = o->auth_timeout_ms;
	if (o->auth_threads)
		t->auth_threads = o->auth_threads;
	if (o->auth_max_pending)
		t->auth_max_pending = o->auth_max_pending;
	if (o->auth_max_pending_host)
		t->auth_max_pending_host = o->auth_max_pending_host;
	if (o->auth_max_pending_addr)
		t->auth_max_pending_addr = o->auth_max_pending_addr;
	if (o->login_timeout_set)
		t->login_timeout_ms = o->login_timeout_ms;
}

/* The file's "limits", unless the command line set them. */
static void apply_limits(const struct cli_opts *o, const struct tgt_config *cfg,
			 struct nvmf_tgt_opts *t)
{
	const struct config_limits *l = &cfg->limits;

	if (l->max_connections && !o->max_connections)
		t->max_connections = l->max_connections;
	if (l->max_connecting && !o->max_connecting)
		t->max_connecting = l->max_connecting;
	if (l->max_host_connections && !o->max_host_connections)
		t->max_host_connections = l->max_host_connections;
	if (l->r2t_timeout_set && !o->r2t_timeout_set)
		t->r2t_timeout_ms = l->r2t_timeout_ms;
	if (l->connect_timeout_set && !o->connect_timeout_set)
		t->connect_timeout_ms = l->connect_timeout_ms;
	if (l->auth_timeout_set && !o->auth_timeout_set)
		t->auth_timeout_ms = l->auth_timeout_ms;
	if (l->auth_threads && !o->auth_threads)
		t->auth_threads = l->auth_threads;
	if (l->auth_max_pending && !o->auth_max_pending)
		t->auth_max_pending = l->auth_max_pending;
	if (l->auth_max_pending_host && !o->auth_max_pending_host)
		t->auth_max_pending_host = l->auth_max_pending_host;
	if (l->auth_max_pending_addr && !o->auth_max_pending_addr)
		t->auth_max_pending_addr = l->auth_max_pending_addr;
	if (l->login_timeout_set && !o->login_timeout_set)
		t->login_timeout_ms = l->login_timeout_ms;
	if (l->max_queue_depth && !o->max_queue_depth)
		t->max_queue_depth = l->max_queue_depth;
	if (l->in_capsule_set && !o->in_capsule_set)
		t->in_capsule_size = l->in_capsule_size;
	if (l->max_io_size && !o->max_io_size)
		t->max_io_size = l->max_io_size;
	if (l->tcp_zerocopy_set && !o->tcp_zerocopy_set)
		t->tcp_zerocopy_min = l->tcp_zerocopy_min;
}

static void shutdown_target(struct daemon_ctx *d)
{
	struct nvmf_port *p;

	service_stopping();
	stats_server_stop(d->stats);
	d->stats = NULL;
	control_server_stop(d->ctl);
	d->ctl = NULL;
	metrics_server_stop(d->metrics);
	d->metrics = NULL;
	if (d->tgt) {
		/* No new connections, then end the open ones (in-flight I/O finishes first). */
		TAILQ_FOREACH(p, &d->tgt->ports, link)
		if (p->listening && p->ops->stop_listen)
			p->ops->stop_listen(p);
		if (d->iscsi_on)
			iscsi_fini(); /* portals and sessions */
		nvmf_tcp_close_all(SHUTDOWN_CONN_WAIT_MS);
#ifdef HAVE_RDMA
		nvmf_rdma_close_all(SHUTDOWN_CONN_WAIT_MS);
#endif
		nvmf_tgt_destroy(d->tgt); /* flushes and closes the namespaces */
		d->tgt = NULL;
	}
	reactors_stop();
	if (d->cfg)
		config_free(d->cfg);
	d->cfg = NULL;
}

static int fail_start(struct daemon_ctx *d, const char *msg)
{
	log_err("%s", msg);
	service_failed(msg);
	shutdown_target(d);
	return 1;
}

int main(int argc, char **argv)
{
	struct cli_opts o;
	struct daemon_ctx d = { .o = &o };
	struct nvmf_tgt_opts topts;
	struct ev_loop *loop;
	gid_t ctl_gid = (gid_t)-1;
	char err[1024];
	int rc;

	nvmf_transport_register(&nvmf_tcp_transport_ops);
#ifdef HAVE_RDMA
	nvmf_transport_register(&nvmf_rdma_transport_ops);
#endif
	/* iSCSI too, so that --listen can name it. */
	iscsi_transport_register();
	if (cli_parse(argc, argv, &o, err, sizeof(err)) != 0 ||
	    check_transports(&o, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (o.help) {
		cli_usage(stdout);
		return 0;
	}
	if (o.version) {
		printf(PROG " %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (o.log_level >= 0)
		log_set_level((enum log_level)o.log_level);
	if (o.unsafe_ignore_flush) {
		bdev_file_unsafe_ignore_flush = true;
		log_warn("--unsafe-ignore-flush: Flush and FUA are ignored, data can be lost");
	}
	if (o.syslog)
		log_use_syslog(true, PROG);
	signal(SIGPIPE, SIG_IGN);
	d.log_file = o.log_file ? o.log_file : o.daemon && !o.syslog ? CLI_DEFAULT_LOG_FILE : NULL;
	if (o.control_group) {
		struct group *g = getgrnam(o.control_group);

		if (!g) {
			fprintf(stderr, PROG ": --control-group: no group named '%s'\n",
				o.control_group);
			return 2;
		}
		ctl_gid = g->gr_gid;
	}

	if (o.config)
		config_set_default_discovery(o.discovery_port != 0);
	if (o.config && config_load(o.config, &d.cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	if (d.log_file) { /* fail on the terminal, before detaching */
		int fd = open(d.log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

		if (fd < 0) {
			fprintf(stderr, PROG ": --log-file %s: %s\n", d.log_file, strerror(errno));
			return 1;
		}
		close(fd);
	}
	if (o.daemon && service_daemonize(err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	if (d.log_file && open_log_file(&d, err, sizeof(err)) != 0)
		return fail_start(&d, err);
	if (o.pidfile && service_write_pidfile(o.pidfile, err, sizeof(err)) != 0)
		return fail_start(&d, err);

	apply_tgt_opts(&o, &topts);
	if (d.cfg)
		apply_limits(&o, d.cfg, &topts);
	/* A state directory others may write would let them aim the daemon's writes: refused
	 * (one missing yet is created 0700 when first needed). */
	if (topts.state_dir && topts.state_dir[0] && !access(topts.state_dir, F_OK) &&
	    nvmf_state_dir_check(topts.state_dir, err, sizeof(err)) == -EPERM)
		return fail_start(&d, err);
	d.control_started_io_size = topts.max_io_size;
	reactors_configure(topts.max_io_size, 0, o.pin);
	reactors_configure_poll(o.poll, o.poll_max_us);
	rc = reactors_start(o.reactors);
	if (rc != 0) {
		snprintf(err, sizeof(err), "cannot start reactors: %s", strerror(-rc));
		return fail_start(&d, err);
	}
	d.tgt = nvmf_tgt_create(&topts);
	if (!d.tgt)
		return fail_start(&d, "cannot create the target");

	err[0] = '\0';
	/* iscsi:// listeners and a config file's "iscsi" section go to the iSCSI front end. */
	err[0] = '\0';
	rc = d.cfg ? config_apply(d.tgt, d.cfg, err, sizeof(err))
		   : quick_setup(&d, err, sizeof(err));
	if (rc == 0 && d.cfg && d.cfg->iscsi_json) {
		iscsi_init(d.tgt);
		d.iscsi_on = true;
		rc = iscsi_config_apply(d.tgt, d.cfg->iscsi_json, true, err, sizeof(err));
	}
	if (rc != 0)
		return fail_start(&d, err[0] ? err : strerror(-rc));
	/* Without -c, live changes start from an empty model (the quick-setup subsystem is
	 * not part of it: save writes only what was added through the control socket). */
	if (!d.cfg && !(d.cfg = config_new_empty("live configuration")))
		return fail_start(&d, "out of memory");

	loop = EV_DEFAULT;
	ev_signal_init(&d.sigint, stop_cb, SIGINT);
	ev_signal_init(&d.sigterm, stop_cb, SIGTERM);
	ev_signal_init(&d.sighup, hup_cb, SIGHUP);
	d.sigint.data = d.sigterm.data = d.sighup.data = &d;
	ev_signal_start(loop, &d.sigint);
	ev_signal_start(loop, &d.sigterm);
	ev_signal_start(loop, &d.sighup);
	ev_timer_init(&d.ana_tick, ana_tick_cb, 1.0, 1.0);
	d.ana_tick.data = &d;
	ev_timer_start(loop, &d.ana_tick);

	if (o.stats_socket) {
		d.stats = stats_server_start(loop, d.tgt, o.stats_socket, err, sizeof(err));
		if (!d.stats)
			return fail_start(&d, err);
	}
	d.control = (struct control_ctx){ .tgt = d.tgt, .cfg = &d.cfg };
	if (o.config) /* absolute: the model's path, kept while models come and go */
		snprintf(d.config_path, sizeof(d.config_path), "%s", d.cfg->path);
	d.control.config_path = o.config ? d.config_path : NULL;
	if (!o.no_control_socket) {
		const char *path = o.control_socket ? o.control_socket : CONTROL_DEFAULT_SOCKET;

		unsigned int max_conns = o.max_control_connections
						 ? o.max_control_connections
						 : d.cfg->limits.max_control_connections;

		d.ctl = control_server_start(loop, &d.control, path, ctl_gid, max_conns, err,
					     sizeof(err));
		/* The default is best effort (another instance may hold it); a path asked for
		 * is not. */
		if (!d.ctl && o.control_socket)
			return fail_start(&d, err);
		if (!d.ctl)
			log_warn("no control socket: %s", err);
	}
	if (o.metrics || (d.cfg && d.cfg->metrics[0])) {
		struct metrics_opts mo = {
			.timeout_ms = o.metrics_timeout_ms ? o.metrics_timeout_ms
							   : d.cfg->limits.metrics_timeout_ms,
			.per_address = o.metrics_per_address ? o.metrics_per_address
							     : d.cfg->limits.metrics_per_address,
		};

		d.metrics = metrics_server_start(d.tgt, o.metrics ? o.metrics : d.cfg->metrics, &mo,
						 err, sizeof(err));
		if (!d.metrics)
			return fail_start(&d, err);
	}
	announce(&d);
	service_ready();
	ev_run(loop, 0);

	log_notice("%s: shutting down", strsignal(d.stop_signal));
	shutdown_target(&d);
	log_notice("stopped");
	return 0;
}
