/* SPDX-License-Identifier: MIT */
/*
 * Configuration loader: nvmetcli-format JSON -> struct tgt_config. This file reads the
 * document (syntax errors carry the tokener's line:column), walks its top level ("hosts",
 * "ports", "subsystems", the "iscsi" and "limits" extensions) and checks cross-references
 * once everything is parsed. json-c reports no positions for semantic errors, so messages
 * name the key path. The sections live in config_ports.c and config_subsys.c, the JSON
 * helpers in config_json.c and the value checks in config_values.c.
 */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dhchap_key.h"
#include "common/key_file.h"
#include "common/log.h"
#include "core/nvmf.h"

/* ---- Hosts and the whole document ------------------------------------------------------------ */

static const char *const host_keys[] = { "nqn", "dhchap", "psk", "psk_file", NULL };
static const char *const top_keys[] = { "hosts",  "ports",   "subsystems", "iscsi",
					"limits", "metrics", NULL };
static const char *const limit_keys[] = { "max_connections",
					  "max_connecting",
					  "connect_timeout",
					  "auth_timeout",
					  "login_timeout",
					  "max_queue_depth",
					  "in_capsule_size",
					  "max_io_size",
					  "tcp_zerocopy_min",
					  "max_control_connections",
					  "metrics_timeout",
					  "metrics_per_address",
					  "auth_threads",
					  "auth_max_pending",
					  "auth_max_pending_host",
					  "auth_max_pending_addr",
					  "max_host_connections",
					  "r2t_timeout",
					  NULL };

/* The "limits" extension (struct config_limits). */
static int parse_limits(struct pctx *c, json_object *lim)
{
	struct config_limits *l = &c->cfg->limits;
	int64_t v;
	int rc;

	rc = cfg_check_keys(c, lim, "limits", limit_keys);
	if (rc)
		return rc;
	rc = cfg_get_int(c, lim, "limits", "max_connections", 1, 1000000, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_connections = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "max_connecting", 1, 1000000, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_connecting = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "max_host_connections", 1, 1000000, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_host_connections = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "r2t_timeout", 0, 3600, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc) {
		l->r2t_timeout_ms = (uint32_t)v * 1000;
		l->r2t_timeout_set = true;
	}
	rc = cfg_get_int(c, lim, "limits", "connect_timeout", 0, 3600, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc) {
		l->connect_timeout_ms = (uint32_t)v * 1000;
		l->connect_timeout_set = true;
	}
	rc = cfg_get_int(c, lim, "limits", "auth_timeout", 0, 600, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc) {
		l->auth_timeout_ms = (uint32_t)v * 1000;
		l->auth_timeout_set = true;
	}
	rc = cfg_get_int(c, lim, "limits", "auth_threads", 1, 64, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->auth_threads = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "auth_max_pending", 1, 4096, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->auth_max_pending = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "auth_max_pending_host", 1, 4096, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->auth_max_pending_host = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "auth_max_pending_addr", 1, 4096, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->auth_max_pending_addr = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "login_timeout", 0, 3600, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc) {
		l->login_timeout_ms = (uint32_t)v * 1000;
		l->login_timeout_set = true;
	}
	rc = cfg_get_int(c, lim, "limits", "max_queue_depth", 2, 4096, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_queue_depth = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "in_capsule_size", 0, 1 << 20, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && v % 16)
		return cfg_err(c, -EINVAL, "limits.in_capsule_size", "expected a multiple of 16");
	if (rc) {
		l->in_capsule_size = (uint32_t)v;
		l->in_capsule_set = true;
	}
	rc = cfg_get_int(c, lim, "limits", "max_io_size", 4096, 4 << 20, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && (v & (v - 1)))
		return cfg_err(c, -EINVAL, "limits.max_io_size", "expected a power of 2");
	if (rc)
		l->max_io_size = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "tcp_zerocopy_min", 0, 64 << 20, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc) {
		l->tcp_zerocopy_min = (uint32_t)v;
		l->tcp_zerocopy_set = true;
	}
	rc = cfg_get_int(c, lim, "limits", "max_control_connections", 1, 1024, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_control_connections = (uint32_t)v;
	rc = cfg_get_int(c, lim, "limits", "metrics_timeout", 1, 600, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->metrics_timeout_ms = (uint32_t)v * 1000;
	rc = cfg_get_int(c, lim, "limits", "metrics_per_address", 1, 64, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->metrics_per_address = (uint32_t)v;
	return 0;
}

/* A secret of hosts[].dhchap: "key" itself, or "key_file" naming a file of mode 0600. */
static int dhchap_secret(struct pctx *c, json_object *dh, const char *kp, const char *key,
			 const char *file_key, char *val, size_t vlen, char *path, size_t plen)
{
	struct nvme_dhchap_key k = { 0 };
	char sub[KP_MAX], why[200];
	int rc, rf;

	rc = cfg_get_str(c, dh, kp, key, val, vlen, OPT, false);
	if (rc < 0)
		return rc;
	rf = cfg_get_str(c, dh, kp, file_key, path, plen, OPT, false);
	if (rf < 0)
		return rf;
	if (rc && rf && val[0] && path[0])
		return cfg_err(c, -EINVAL, kp, "\"%s\" and \"%s\": give one of them", key,
			       file_key);
	if (path[0]) {
		cfg_kp_join(sub, kp, file_key);
		if (path[0] != '/')
			return cfg_err(c, -EINVAL, sub, "\"%s\": expected an absolute path", path);
		rc = nvme_key_file_read(path, val, vlen, why, sizeof(why));
		if (rc < 0)
			return cfg_err(c, rc, sub, "%s", why);
	}
	if (!val[0])
		return 0;
	cfg_kp_join(sub, kp, path[0] ? file_key : key);
	/* The secret is checked, never echoed: the message names the key and the fault. */
	rc = nvme_dhchap_key_parse(val, &k, why, sizeof(why));
	nvme_dhchap_key_clear(&k);
	if (rc) {
		explicit_bzero(val, vlen);
		return cfg_err(c, rc, sub, "%s", why);
	}
	return 0;
}

/* hosts[].dhchap: {key | key_file, ctrl_key | ctrl_key_file, hash, dhgroup}, values as
 * Linux nvmet's configfs takes them. */
static int parse_dhchap(struct pctx *c, json_object *dh, const char *kp, const char *nqn)
{
	static const char *const dh_keys[] = { "key",  "ctrl_key", "key_file", "ctrl_key_file",
					       "hash", "dhgroup",  NULL };
	static const char *const hashes[] = { "hmac(sha256)", "hmac(sha384)", "hmac(sha512)",
					      NULL };
	static const char *const groups[] = { "null",      "ffdhe2048", "ffdhe3072", "ffdhe4096",
					      "ffdhe6144", "ffdhe8192", NULL };
	struct config_host_key *hk, *v;
	char sub[KP_MAX];
	unsigned int i;
	int rc;

	hk = calloc(1, sizeof(*hk));
	if (!hk)
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	rc = cfg_check_keys(c, dh, kp, dh_keys);
	if (!rc)
		rc = dhchap_secret(c, dh, kp, "key", "key_file", hk->key, sizeof(hk->key),
				   hk->key_file, sizeof(hk->key_file));
	if (rc >= 0)
		rc = dhchap_secret(c, dh, kp, "ctrl_key", "ctrl_key_file", hk->ctrl_key,
				   sizeof(hk->ctrl_key), hk->ctrl_key_file,
				   sizeof(hk->ctrl_key_file));
	if (rc >= 0)
		rc = cfg_get_str(c, dh, kp, "hash", hk->hash, sizeof(hk->hash), OPT, false);
	if (rc >= 0 && hk->hash[0]) {
		for (i = 0; hashes[i] && strcmp(hashes[i], hk->hash); i++)
			;
		cfg_kp_join(sub, kp, "hash");
		if (!hashes[i])
			rc = cfg_err(c, -EINVAL, sub,
				     "\"%s\": expected hmac(sha256), hmac(sha384) or hmac(sha512)",
				     hk->hash);
	}
	if (rc >= 0)
		rc = cfg_get_str(c, dh, kp, "dhgroup", hk->dhgroup, sizeof(hk->dhgroup), OPT,
				 false);
	if (rc >= 0 && hk->dhgroup[0]) {
		for (i = 0; groups[i] && strcmp(groups[i], hk->dhgroup); i++)
			;
		cfg_kp_join(sub, kp, "dhgroup");
		if (!groups[i])
			rc = cfg_err(c, -EINVAL, sub,
				     "\"%s\": expected null, ffdhe2048, ffdhe3072, ffdhe4096, "
				     "ffdhe6144 or ffdhe8192",
				     hk->dhgroup);
	}
	if (rc >= 0 && hk->ctrl_key[0] && !hk->key[0]) {
		cfg_kp_join(sub, kp, "ctrl_key");
		rc = cfg_err(c, -EINVAL, sub, "needs the host's \"key\" as well");
	}
	if (rc < 0 || (!hk->key[0] && !hk->ctrl_key[0])) {
		explicit_bzero(hk, sizeof(*hk));
		free(hk);
		return rc < 0 ? rc : 0;
	}
	v = realloc(c->cfg->host_keys, (c->cfg->nhost_keys + 1) * sizeof(*v));
	if (!v) {
		explicit_bzero(hk, sizeof(*hk));
		free(hk);
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	}
	c->cfg->host_keys = v;
	snprintf(hk->nqn, sizeof(hk->nqn), "%s", nqn);
	v[c->cfg->nhost_keys++] = *hk;
	explicit_bzero(hk, sizeof(*hk));
	free(hk);
	return 0;
}

static int parse_host(struct pctx *c, json_object *obj, const char *kp, char *nqn)
{
	json_object *dh;
	char sub[KP_MAX];
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, obj, kp, host_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, obj, kp, "nqn", nqn, NVME_NQN_FIELD, REQ, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "nqn");
	rc = cfg_check_nqn(c, sub, nqn, "host");
	if (rc)
		return rc;
	rc = cfg_parse_host_psk(c, obj, kp, nqn);
	if (rc)
		return rc;
	rc = cfg_get_typed(c, obj, kp, "dhchap", json_type_object, OPT, &dh);
	if (rc < 0)
		return rc;
	if (rc) {
		cfg_kp_join(sub, kp, "dhchap");
		return parse_dhchap(c, dh, sub, nqn);
	}
	return 0;
}

static bool same_listen(const struct config_addr *a, const struct config_addr *b)
{
	bool wild_a, wild_b;

	if (strcmp(a->trtype, b->trtype) || strcmp(a->adrfam, b->adrfam) ||
	    strcmp(a->trsvcid, b->trsvcid))
		return false;
	wild_a = !strcmp(a->traddr, "0.0.0.0") || !strcmp(a->traddr, "::");
	wild_b = !strcmp(b->traddr, "0.0.0.0") || !strcmp(b->traddr, "::");
	return wild_a || wild_b || !strcmp(a->traddr, b->traddr);
}

/* Cross-references, once everything is parsed. */
static int validate(struct pctx *c)
{
	struct tgt_config *cfg = c->cfg;
	char kp[KP_MAX], sub[KP_MAX];
	unsigned int i, j, k;

	for (i = 0; i < cfg->nhosts; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->hosts[i], cfg->hosts[j])) {
				snprintf(kp, sizeof(kp), "hosts[%u].nqn", i);
				return cfg_err(c, -EINVAL, kp,
					       "duplicate host \"%s\" (also hosts[%u])",
					       cfg->hosts[i], j);
			}
	for (i = 0; i < cfg->nsubsystems; i++) {
		const struct config_subsys *s = &cfg->subsystems[i];

		for (j = 0; j < i; j++)
			if (!strcmp(s->nqn, cfg->subsystems[j].nqn)) {
				snprintf(kp, sizeof(kp), "subsystems[%u].nqn", i);
				return cfg_err(c, -EINVAL, kp,
					       "duplicate subsystem \"%s\" (also subsystems[%u])",
					       s->nqn, j);
			}
		for (j = 0; j < s->nallowed_hosts; j++) {
			for (k = 0; k < cfg->nhosts; k++)
				if (!strcmp(s->allowed_hosts[j], cfg->hosts[k]))
					break;
			if (k == cfg->nhosts) {
				snprintf(kp, sizeof(kp), "subsystems[%u].allowed_hosts[%u]", i, j);
				return cfg_err(c, -EINVAL, kp,
					       "host \"%s\" is not listed in \"hosts\"",
					       s->allowed_hosts[j]);
			}
		}
	}
	for (i = 0; i < cfg->nports; i++) {
		const struct config_port *p = &cfg->ports[i];

		for (j = 0; j < i; j++) {
			if (p->portid == cfg->ports[j].portid) {
				snprintf(kp, sizeof(kp), "ports[%u].portid", i);
				return cfg_err(c, -EINVAL, kp,
					       "duplicate portid %u (also ports[%u])", p->portid,
					       j);
			}
			if (same_listen(&p->addr, &cfg->ports[j].addr)) {
				snprintf(kp, sizeof(kp), "ports[%u].addr", i);
				return cfg_err(c, -EADDRINUSE, kp,
					       "%s %s:%s overlaps ports[%u] (%s:%s)",
					       p->addr.trtype, p->addr.traddr, p->addr.trsvcid, j,
					       cfg->ports[j].addr.traddr,
					       cfg->ports[j].addr.trsvcid);
			}
		}
		for (j = 0; j < p->nsubsystems; j++) {
			snprintf(kp, sizeof(kp), "ports[%u].subsystems[%u]", i, j);
			if (!config_find_subsys(cfg, p->subsystems[j]))
				return cfg_err(c, -EINVAL, kp, "unknown subsystem \"%s\"",
					       p->subsystems[j]);
			for (k = 0; k < j; k++)
				if (!strcmp(p->subsystems[k], p->subsystems[j]))
					return cfg_err(c, -EINVAL, kp,
						       "subsystem \"%s\" listed twice (also "
						       "subsystems[%u])",
						       p->subsystems[j], k);
		}
		for (j = 0; j < p->nreferrals; j++)
			for (k = 0; k < j; k++)
				if (!strcmp(p->referrals[j].name, p->referrals[k].name)) {
					snprintf(sub, sizeof(sub), "ports[%u].referrals[%u].name",
						 i, j);
					return cfg_err(c, -EINVAL, sub,
						       "duplicate referral \"%s\" (also "
						       "referrals[%u])",
						       p->referrals[j].name, k);
				}
	}
	/* As with Linux nvmet, only a subsystem that lists the host asks for its secret. */
	for (i = 0; i < cfg->nhost_keys; i++) {
		const char *nqn = cfg->host_keys[i].nqn;
		bool listed = false;
		int rc;

		for (j = 0; j < cfg->nsubsystems && !listed; j++)
			for (k = 0; k < cfg->subsystems[j].nallowed_hosts && !listed; k++)
				listed = !cfg->subsystems[j].allow_any_host &&
					 !strcmp(cfg->subsystems[j].allowed_hosts[k], nqn);
		if (listed)
			continue;
		for (k = 0; k < cfg->nhosts && strcmp(cfg->hosts[k], nqn); k++)
			;
		snprintf(sub, sizeof(sub), "hosts[%u].dhchap", k);
		rc = cfg_warn(c, sub,
			      "no subsystem lists host %s in allowed_hosts: none asks it to "
			      "authenticate",
			      nqn);
		if (rc)
			return rc;
	}
	return 0;
}

/* Parse a JSON array member @key of @root into @n items of @size bytes via @fn. */
typedef int (*item_fn)(struct pctx *c, json_object *obj, const char *kp, void *item);

static int parse_list(struct pctx *c, json_object *root, const char *key, size_t size,
		      unsigned int max, void **items, unsigned int *n, item_fn fn)
{
	json_object *arr;
	char kp[KP_MAX];
	unsigned int i, len;
	int rc;

	rc = cfg_get_typed(c, root, "", key, json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	len = arr ? (unsigned int)json_object_array_length(arr) : 0;
	if (len > max)
		return cfg_err(c, -E2BIG, key, "%u entries, at most %u", len, max);
	*items = calloc(len ? len : 1, size);
	if (!*items)
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < len; i++) {
		snprintf(kp, sizeof(kp), "%s[%u]", key, i);
		(*n)++; /* counted first so that config_free() sees a half-parsed item */
		rc = fn(c, json_object_array_get_idx(arr, i), kp, (char *)*items + i * size);
		if (rc)
			return rc;
	}
	return 0;
}

static int host_item(struct pctx *c, json_object *o, const char *kp, void *item)
{
	return parse_host(c, o, kp, item);
}

static int subsys_item(struct pctx *c, json_object *o, const char *kp, void *item)
{
	return cfg_parse_subsys(c, o, kp, item);
}

static int port_item(struct pctx *c, json_object *o, const char *kp, void *item)
{
	return cfg_parse_port(c, o, kp, item);
}

static int parse_root(struct pctx *c, json_object *root)
{
	struct tgt_config *cfg = c->cfg;
	json_object *iscsi, *lim;
	int rc;

	if (!json_object_is_type(root, json_type_object))
		return cfg_err(c, -EINVAL, NULL, "expected a JSON object at the top level");
	rc = cfg_check_keys(c, root, "", top_keys);
	if (rc)
		return rc;
	/* Ports first: an unsupported transport is the first thing to report. */
	rc = parse_list(c, root, "hosts", NVME_NQN_FIELD, CONFIG_MAX_HOSTS, (void **)&cfg->hosts,
			&cfg->nhosts, host_item);
	if (rc)
		return rc;
	rc = parse_list(c, root, "ports", sizeof(struct config_port), CONFIG_MAX_PORTS,
			(void **)&cfg->ports, &cfg->nports, port_item);
	if (rc)
		return rc;
	rc = parse_list(c, root, "subsystems", sizeof(struct config_subsys), CONFIG_MAX_SUBSYS,
			(void **)&cfg->subsystems, &cfg->nsubsystems, subsys_item);
	if (rc)
		return rc;
	rc = cfg_get_typed(c, root, "", "iscsi", json_type_object, OPT, &iscsi);
	if (rc < 0)
		return rc;
	if (rc) {
		rc = cfg_parse_iscsi(c, iscsi);
		if (rc)
			return rc;
		cfg->iscsi_json =
			strdup(json_object_to_json_string_ext(iscsi, JSON_C_TO_STRING_PLAIN));
		if (!cfg->iscsi_json)
			return cfg_err(c, -ENOMEM, NULL, "out of memory");
	}
	rc = cfg_get_str(c, root, "", "metrics", cfg->metrics, sizeof(cfg->metrics), OPT, false);
	if (rc < 0)
		return rc;
	rc = cfg_get_typed(c, root, "", "limits", json_type_object, OPT, &lim);
	if (rc < 0)
		return rc;
	if (rc) {
		rc = parse_limits(c, lim);
		if (rc)
			return rc;
	}
	return validate(c);
}

/* ---- Entry points ---------------------------------------------------------------------------- */

static void offset_to_linecol(const char *text, size_t off, unsigned int *line, unsigned int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int parse_text(struct pctx *c, const char *text, size_t len, json_object **out)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	unsigned int line, col;
	json_object *root;
	size_t end;

	if (len > INT32_MAX)
		return cfg_err(c, -EFBIG, NULL, "file too large");
	if (strlen(text) != len)
		return cfg_err(c, -EINVAL, NULL, "contains a NUL byte at offset %zu", strlen(text));
	tok = json_tokener_new();
	if (!tok)
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root && jerr == json_tokener_continue) {
		offset_to_linecol(text, len, &line, &col);
		return cfg_err(c, -EINVAL, NULL, "%u:%u: JSON syntax error: unexpected end of file",
			       line, col);
	}
	if (!root && jerr != json_tokener_success) {
		/* The tokener stops on the offending character. */
		offset_to_linecol(text, end, &line, &col);
		return cfg_err(c, -EINVAL, NULL, "%u:%u: JSON syntax error: %s", line, col,
			       json_tokener_error_desc(jerr));
	}
	if (!root)
		return cfg_err(c, -EINVAL, NULL, "1:1: JSON syntax error: empty document");
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (end < len) {
		json_object_put(root);
		offset_to_linecol(text, end, &line, &col);
		return cfg_err(c, -EINVAL, NULL,
			       "%u:%u: JSON syntax error: data after the document", line, col);
	}
	*out = root;
	return 0;
}

int config_load_string(const char *text, const char *name, struct tgt_config **out, char *err,
		       size_t errlen)
{
	struct pctx c = { .name = name ? name : "config", .err = err, .errlen = errlen };
	json_object *root = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	c.cfg = calloc(1, sizeof(*c.cfg));
	if (!c.cfg)
		return cfg_err(&c, -ENOMEM, NULL, "out of memory");
	snprintf(c.cfg->path, sizeof(c.cfg->path), "%s", name ? name : "");
	c.text = text;
	rc = parse_text(&c, text, strlen(text), &root);
	if (!rc)
		rc = parse_root(&c, root);
	json_object_put(root);
	if (rc) {
		config_free(c.cfg);
		return rc;
	}
	config_log_warnings(c.cfg);
	*out = c.cfg;
	return 0;
}

int config_load(const char *path, struct tgt_config **out, char *err, size_t errlen)
{
	struct pctx c = { .name = path, .err = err, .errlen = errlen };
	struct stat st;
	char *text;
	size_t got = 0;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cfg_err(&c, -errno, NULL, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		return cfg_err(&c, rc, NULL, "cannot stat: %s", strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return cfg_err(&c, -EINVAL, NULL, "not a regular file");
	}
	if ((uint64_t)st.st_size > CONFIG_FILE_MAX) {
		close(fd);
		return cfg_err(&c, -EFBIG, NULL, "file larger than %u bytes", CONFIG_FILE_MAX);
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return cfg_err(&c, -ENOMEM, NULL, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			free(text);
			close(fd);
			return cfg_err(&c, rc, NULL, "read error: %s", strerror(-rc));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	text[got] = '\0';
	if (strlen(text) != got) {
		rc = cfg_err(&c, -EINVAL, NULL, "contains a NUL byte at offset %zu", strlen(text));
		free(text);
		return rc;
	}
	rc = config_load_string(text, path, out, err, errlen);
	explicit_bzero(text, got); /* it may hold keys and CHAP secrets */
	free(text);
	/* Absolute, so that a reload after chdir("/") (daemon mode) finds it again. */
	if (!rc && path[0] != '/') {
		char *abs = realpath(path, NULL);

		if (abs && strlen(abs) < sizeof((*out)->path))
			memcpy((*out)->path, abs, strlen(abs) + 1);
		free(abs);
	}
	return rc;
}
