/* SPDX-License-Identifier: MIT */
/*
 * Writing the running configuration back out in the nvmetcli schema that config_load()
 * reads (keys sorted, attribute values as strings, as `nvmetcli save` writes them), and
 * copying a model. DH-HMAC-CHAP secrets and inline iSCSI CHAP secrets only go to a file
 * created with mode 0600.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/nvme_spec.h"
#include "config_internal.h"

static json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

/* A number as nvmetcli writes configfs attributes: decimal text. */
static json_object *jnum(unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	return json_object_new_string(buf);
}

static void hex_id(char *out, const uint8_t *b, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (n == 16 && (i == 4 || i == 6 || i == 8 || i == 10))
			out[o++] = '-';
		o += (size_t)sprintf(out + o, "%02x", b[i]);
	}
	out[o] = '\0';
}

static json_object *save_addr(const struct config_addr *a)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "adrfam", jstr(a->adrfam));
	json_object_object_add(o, "traddr", jstr(a->traddr));
	json_object_object_add(o, "treq",
			       jstr(a->treq == NVMF_TREQ_SECURE_NOT_REQUIRED ? "not required"
				    : a->treq == NVMF_TREQ_SECURE_REQUIRED   ? "required"
									     : "not specified"));
	if (a->sectype == NVMF_TCP_SECTYPE_TLS13)
		json_object_object_add(o, "tsas", jstr("tls1.3"));
	json_object_object_add(o, "trsvcid", jstr(a->trsvcid));
	json_object_object_add(o, "trtype", jstr(a->trtype));
	return o;
}

static json_object *save_port(const struct config_port *p)
{
	json_object *o = json_object_new_object(), *arr, *param;

	json_object_object_add(o, "addr", save_addr(&p->addr));
	if (p->advertise[0])
		json_object_object_add(o, "advertise", jstr(p->advertise));
	arr = json_object_new_array();
	for (unsigned int i = 0; i < p->nana_groups; i++) {
		json_object *g = json_object_new_object(), *ana = json_object_new_object();

		json_object_object_add(ana, "state", jstr(p->ana_groups[i].state));
		json_object_object_add(g, "ana", ana);
		json_object_object_add(g, "grpid", json_object_new_int64(p->ana_groups[i].grpid));
		json_object_array_add(arr, g);
	}
	if (p->nana_groups)
		json_object_object_add(o, "ana_groups", arr);
	else
		json_object_put(arr);
	param = json_object_new_object();
	if (p->inline_data_size)
		json_object_object_add(param, "inline_data_size", jnum(p->inline_data_size));
	if (p->max_queue_size)
		json_object_object_add(param, "max_queue_size", jnum(p->max_queue_size));
	json_object_object_add(o, "param", param);
	json_object_object_add(o, "portid", json_object_new_int64(p->portid));
	arr = json_object_new_array();
	for (unsigned int i = 0; i < p->nreferrals; i++) {
		const struct config_referral *r = &p->referrals[i];
		json_object *ro = json_object_new_object(), *ra = save_addr(&r->addr);

		json_object_object_add(ra, "portid", json_object_new_int64(r->portid));
		json_object_object_add(ro, "addr", ra);
		json_object_object_add(ro, "enable", json_object_new_int64(r->enable));
		json_object_object_add(ro, "name", jstr(r->name));
		json_object_array_add(arr, ro);
	}
	json_object_object_add(o, "referrals", arr);
	arr = json_object_new_array();
	for (unsigned int i = 0; i < p->nsubsystems; i++)
		json_object_array_add(arr, jstr(p->subsystems[i]));
	json_object_object_add(o, "subsystems", arr);
	return o;
}

/* The limit keys of one "qos" object that are set; false when none is. */
static bool save_limits(json_object *o, const uint64_t v[6])
{
	static const char *const keys[6] = { "rw_ios_per_sec",   "r_ios_per_sec",
					     "w_ios_per_sec",    "rw_mbytes_per_sec",
					     "r_mbytes_per_sec", "w_mbytes_per_sec" };
	bool any = false;

	for (unsigned int i = 0; i < 6; i++)
		if (v[i]) {
			json_object_object_add(o, keys[i], json_object_new_int64((int64_t)v[i]));
			any = true;
		}
	return any;
}

/* Our "qos" extension, when the namespace or one of its hosts has limits. */
static void save_qos(json_object *o, const struct config_qos *q)
{
	const uint64_t nsl[6] = { q->rw_ios_per_sec,    q->r_ios_per_sec,    q->w_ios_per_sec,
				  q->rw_mbytes_per_sec, q->r_mbytes_per_sec, q->w_mbytes_per_sec };
	json_object *qo = json_object_new_object(), *arr = json_object_new_array();
	bool any = save_limits(qo, nsl);

	for (unsigned int i = 0; i < q->nhosts; i++) {
		const struct config_host_qos *h = &q->hosts[i];
		const uint64_t hl[6] = { h->rw_ios_per_sec,   h->r_ios_per_sec,
					 h->w_ios_per_sec,    h->rw_mbytes_per_sec,
					 h->r_mbytes_per_sec, h->w_mbytes_per_sec };
		json_object *ho = json_object_new_object();

		json_object_object_add(ho, "host", jstr(h->host));
		if (!save_limits(ho, hl)) {
			json_object_put(ho);
			continue;
		}
		json_object_array_add(arr, ho);
		any = true;
	}
	if (json_object_array_length(arr))
		json_object_object_add(qo, "hosts", arr);
	else
		json_object_put(arr);
	if (any)
		json_object_object_add(o, "qos", qo);
	else
		json_object_put(qo);
}

static json_object *save_ns(const struct config_ns *ns)
{
	json_object *o = json_object_new_object(), *dev = json_object_new_object();
	char id[40];

	if (ns->ana_grpid)
		json_object_object_add(o, "ana_grpid", json_object_new_int64(ns->ana_grpid));
	if (ns->buffered_io)
		json_object_object_add(o, "buffered_io", json_object_new_int64(1));
	if (ns->has_eui64) {
		hex_id(id, ns->eui64, 8);
		json_object_object_add(dev, "eui64", jstr(id));
	}
	if (ns->has_nguid) {
		hex_id(id, ns->nguid, 16);
		json_object_object_add(dev, "nguid", jstr(id));
	}
	json_object_object_add(dev, "path", jstr(ns->path));
	if (ns->has_uuid) {
		hex_id(id, ns->uuid, 16);
		json_object_object_add(dev, "uuid", jstr(id));
	}
	json_object_object_add(o, "device", dev);
	json_object_object_add(o, "enable", json_object_new_int64(ns->enable));
	json_object_object_add(o, "nsid", json_object_new_int64(ns->nsid));
	save_qos(o, &ns->qos);
	return o;
}

static json_object *save_subsys(const struct config_subsys *s)
{
	json_object *o = json_object_new_object(), *attr = json_object_new_object(), *arr;

	arr = json_object_new_array();
	for (unsigned int i = 0; i < s->nallowed_hosts; i++)
		json_object_array_add(arr, jstr(s->allowed_hosts[i]));
	json_object_object_add(o, "allowed_hosts", arr);
	json_object_object_add(attr, "allow_any_host", jstr(s->allow_any_host ? "1" : "0"));
	if (s->cntlid_max)
		json_object_object_add(attr, "cntlid_max", jnum(s->cntlid_max));
	if (s->cntlid_min)
		json_object_object_add(attr, "cntlid_min", jnum(s->cntlid_min));
	if (s->model[0])
		json_object_object_add(attr, "model", jstr(s->model));
	if (s->qid_max)
		json_object_object_add(attr, "qid_max", jnum(s->qid_max));
	if (s->serial[0])
		json_object_object_add(attr, "serial", jstr(s->serial));
	if (s->version[0])
		json_object_object_add(attr, "version", jstr(s->version));
	json_object_object_add(o, "attr", attr);
	arr = json_object_new_array();
	for (unsigned int i = 0; i < s->nnamespaces; i++)
		json_object_array_add(arr, save_ns(&s->namespaces[i]));
	json_object_object_add(o, "namespaces", arr);
	json_object_object_add(o, "nqn", jstr(s->nqn));
	return o;
}

static json_object *save_host(const struct tgt_config *cfg, const char *nqn, bool secrets)
{
	const struct config_host_key *k = secrets ? config_find_host_key(cfg, nqn) : NULL;
	json_object *o = json_object_new_object();

	if (k) {
		json_object *dh = json_object_new_object();

		if (k->ctrl_key_file[0])
			json_object_object_add(dh, "ctrl_key_file", jstr(k->ctrl_key_file));
		else if (k->ctrl_key[0])
			json_object_object_add(dh, "ctrl_key", jstr(k->ctrl_key));
		if (k->dhgroup[0])
			json_object_object_add(dh, "dhgroup", jstr(k->dhgroup));
		if (k->hash[0])
			json_object_object_add(dh, "hash", jstr(k->hash));
		if (k->key_file[0])
			json_object_object_add(dh, "key_file", jstr(k->key_file));
		else if (k->key[0])
			json_object_object_add(dh, "key", jstr(k->key));
		json_object_object_add(o, "dhchap", dh);
	}
	json_object_object_add(o, "nqn", jstr(nqn));
	for (unsigned int i = 0; i < cfg->nhost_psks; i++) {
		const struct config_host_psk *hp = &cfg->host_psks[i];

		if (strcmp(hp->nqn, nqn))
			continue;
		if (hp->psk_file[0]) /* a path, not a secret */
			json_object_object_add(o, "psk_file", jstr(hp->psk_file));
		else if (secrets)
			json_object_object_add(o, "psk", jstr(hp->psk));
	}
	return o;
}

/* The "limits" keys that hold a count (0: not given). */
static const struct {
	const char *key;
	size_t off;
} limit_counts[] = {
	{ "auth_max_pending", offsetof(struct config_limits, auth_max_pending) },
	{ "auth_max_pending_addr", offsetof(struct config_limits, auth_max_pending_addr) },
	{ "auth_max_pending_host", offsetof(struct config_limits, auth_max_pending_host) },
	{ "auth_threads", offsetof(struct config_limits, auth_threads) },
	{ "max_connecting", offsetof(struct config_limits, max_connecting) },
	{ "max_connections", offsetof(struct config_limits, max_connections) },
	{ "max_control_connections", offsetof(struct config_limits, max_control_connections) },
	{ "max_host_connections", offsetof(struct config_limits, max_host_connections) },
	{ "max_io_size", offsetof(struct config_limits, max_io_size) },
	{ "max_queue_depth", offsetof(struct config_limits, max_queue_depth) },
	{ "metrics_per_address", offsetof(struct config_limits, metrics_per_address) },
};

/* The "limits" keys in seconds, kept in ms, and whether they were given (0 is a value). */
static const struct {
	const char *key;
	size_t ms, set;
} limit_timeouts[] = {
	{ "auth_timeout", offsetof(struct config_limits, auth_timeout_ms),
	  offsetof(struct config_limits, auth_timeout_set) },
	{ "connect_timeout", offsetof(struct config_limits, connect_timeout_ms),
	  offsetof(struct config_limits, connect_timeout_set) },
	{ "login_timeout", offsetof(struct config_limits, login_timeout_ms),
	  offsetof(struct config_limits, login_timeout_set) },
	{ "r2t_timeout", offsetof(struct config_limits, r2t_timeout_ms),
	  offsetof(struct config_limits, r2t_timeout_set) },
};

static uint32_t limit_u32(const struct config_limits *l, size_t off)
{
	return *(const uint32_t *)((const char *)l + off);
}

static bool limit_set(const struct config_limits *l, size_t off)
{
	return *(const bool *)((const char *)l + off);
}

static bool limits_given(const struct config_limits *l)
{
	for (size_t i = 0; i < sizeof(limit_counts) / sizeof(limit_counts[0]); i++)
		if (limit_u32(l, limit_counts[i].off))
			return true;
	for (size_t i = 0; i < sizeof(limit_timeouts) / sizeof(limit_timeouts[0]); i++)
		if (limit_set(l, limit_timeouts[i].set))
			return true;
	return l->in_capsule_set || l->tcp_zerocopy_set || l->metrics_timeout_ms;
}

/* Every limit the model was given, so that a saved file loads back into the same model. */
static json_object *save_config_limits(const struct config_limits *l)
{
	json_object *lo = json_object_new_object();

	for (size_t i = 0; i < sizeof(limit_counts) / sizeof(limit_counts[0]); i++) {
		uint32_t v = limit_u32(l, limit_counts[i].off);

		if (v)
			json_object_object_add(lo, limit_counts[i].key, json_object_new_int64(v));
	}
	for (size_t i = 0; i < sizeof(limit_timeouts) / sizeof(limit_timeouts[0]); i++)
		if (limit_set(l, limit_timeouts[i].set))
			json_object_object_add(
				lo, limit_timeouts[i].key,
				json_object_new_int64(limit_u32(l, limit_timeouts[i].ms) / 1000));
	if (l->in_capsule_set)
		json_object_object_add(lo, "in_capsule_size",
				       json_object_new_int64(l->in_capsule_size));
	if (l->tcp_zerocopy_set)
		json_object_object_add(lo, "tcp_zerocopy_min",
				       json_object_new_int64(l->tcp_zerocopy_min));
	if (l->metrics_timeout_ms)
		json_object_object_add(lo, "metrics_timeout",
				       json_object_new_int64(l->metrics_timeout_ms / 1000));
	return lo;
}

static json_object *save_root(const struct tgt_config *cfg, bool secrets)
{
	const struct config_limits *l = &cfg->limits;
	json_object *root = json_object_new_object(), *arr;

	arr = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nhosts; i++)
		json_object_array_add(arr, save_host(cfg, cfg->hosts[i], secrets));
	json_object_object_add(root, "hosts", arr);
	if (cfg->iscsi_json) {
		json_object *is = cfg_iscsi_save(cfg->iscsi_json, secrets);

		if (is)
			json_object_object_add(root, "iscsi", is);
	}
	if (limits_given(l))
		json_object_object_add(root, "limits", save_config_limits(l));
	arr = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nports; i++)
		json_object_array_add(arr, save_port(&cfg->ports[i]));
	json_object_object_add(root, "ports", arr);
	arr = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nsubsystems; i++)
		json_object_array_add(arr, save_subsys(&cfg->subsystems[i]));
	json_object_object_add(root, "subsystems", arr);
	return root;
}

bool config_has_secrets(const struct tgt_config *cfg)
{
	for (unsigned int i = 0; i < cfg->nhost_keys; i++)
		if (cfg->host_keys[i].key[0] || cfg->host_keys[i].ctrl_key[0])
			return true;
	if (cfg_iscsi_has_secrets(cfg->iscsi_json))
		return true;
	for (unsigned int i = 0; i < cfg->nhost_psks; i++)
		if (!cfg->host_psks[i].psk_file[0])
			return true;
	return false;
}

int config_save_string(const struct tgt_config *cfg, bool with_secrets, char **out)
{
	json_object *root = save_root(cfg, with_secrets);
	const char *txt;
	int rc = 0;

	txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							   JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
	*out = txt ? malloc(strlen(txt) + 2) : NULL;
	if (*out)
		sprintf(*out, "%s\n", txt);
	else
		rc = -ENOMEM;
	json_object_put(root);
	return rc;
}

int config_save_file(const struct tgt_config *cfg, const char *path, char *err, size_t errlen)
{
	bool secret = config_has_secrets(cfg);
	char tmp[PATH_MAX], *txt = NULL;
	size_t len, off = 0;
	struct stat st;
	int fd, rc;

	if (!path || !path[0]) {
		snprintf(err, errlen, "no file name");
		return -EINVAL;
	}
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: exists and is not a regular file", path);
		return -EINVAL;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	rc = config_save_string(cfg, true, &txt);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	/* mkstemp creates 0600; widen it afterwards only when there is no secret in it. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot create a file next to it: %s", path,
			 strerror(-rc));
		free(txt);
		return rc;
	}
	len = strlen(txt);
	while (off < len) {
		ssize_t n = write(fd, txt + off, len - off);

		if (n < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	explicit_bzero(txt, len);
	free(txt);
	if (rc == 0 && !secret && fchmod(fd, 0644))
		rc = -errno;
	if (rc == 0 && fsync(fd))
		rc = -errno;
	if (close(fd) && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(-rc));
	}
	return rc;
}

/* ---- Copying a model ------------------------------------------------------------------------ */

static int dup_mem(void **dst, const void *src, size_t n, size_t size)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = calloc(n ? n : 1, size);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * size);
	return 0;
}

int config_dup(const struct tgt_config *cfg, struct tgt_config **out)
{
	struct tgt_config *c = calloc(1, sizeof(*c));
	int rc = 0;

	if (!c)
		return -ENOMEM;
	*c = *cfg;
	c->ports = NULL;
	c->subsystems = NULL;
	c->hosts = NULL;
	c->host_keys = NULL;
	c->iscsi_json = NULL;
	c->warnings = NULL;
	c->nwarnings = 0;
	/* Counts stay as they are: config_free() frees what was copied so far. */
	c->nports = c->nsubsystems = 0;
	rc |= dup_mem((void **)&c->hosts, cfg->hosts, cfg->nhosts, sizeof(*cfg->hosts));
	rc |= dup_mem((void **)&c->host_keys, cfg->host_keys, cfg->nhost_keys,
		      sizeof(*cfg->host_keys));
	c->host_psks = NULL;
	rc |= dup_mem((void **)&c->host_psks, cfg->host_psks, cfg->nhost_psks,
		      sizeof(*cfg->host_psks));
	if (cfg->iscsi_json && !(c->iscsi_json = strdup(cfg->iscsi_json)))
		rc = -ENOMEM;
	if (!rc && cfg->nports) {
		c->ports = calloc(cfg->nports, sizeof(*c->ports));
		rc = c->ports ? 0 : -ENOMEM;
	}
	for (unsigned int i = 0; !rc && i < cfg->nports; i++) {
		const struct config_port *p = &cfg->ports[i];
		struct config_port *q = &c->ports[i];

		*q = *p;
		q->subsystems = NULL;
		q->referrals = NULL;
		q->ana_groups = NULL;
		c->nports++;
		rc |= dup_mem((void **)&q->subsystems, p->subsystems, p->nsubsystems,
			      sizeof(*p->subsystems));
		rc |= dup_mem((void **)&q->referrals, p->referrals, p->nreferrals,
			      sizeof(*p->referrals));
		rc |= dup_mem((void **)&q->ana_groups, p->ana_groups, p->nana_groups,
			      sizeof(*p->ana_groups));
	}
	if (!rc && cfg->nsubsystems) {
		c->subsystems = calloc(cfg->nsubsystems, sizeof(*c->subsystems));
		rc = c->subsystems ? 0 : -ENOMEM;
	}
	for (unsigned int i = 0; !rc && i < cfg->nsubsystems; i++) {
		const struct config_subsys *s = &cfg->subsystems[i];
		struct config_subsys *t = &c->subsystems[i];

		*t = *s;
		t->namespaces = NULL;
		t->allowed_hosts = NULL;
		c->nsubsystems++;
		rc |= dup_mem((void **)&t->namespaces, s->namespaces, s->nnamespaces,
			      sizeof(*s->namespaces));
		rc |= dup_mem((void **)&t->allowed_hosts, s->allowed_hosts, s->nallowed_hosts,
			      sizeof(*s->allowed_hosts));
	}
	if (rc) {
		config_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

struct tgt_config *config_new_empty(const char *name)
{
	struct tgt_config *c = calloc(1, sizeof(*c));

	if (c)
		snprintf(c->path, sizeof(c->path), "%s", name ? name : "");
	return c;
}
