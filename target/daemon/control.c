/* SPDX-License-Identifier: MIT */
/* The control socket: JSON-RPC 2.0 methods that change the running target (control.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "common/uri.h"
#include "config/config_file.h"
#include "control.h"
#include "control_internal.h"
#include "core/ana.h"
#include "core/nvmf.h"
#include "iscsi/iscsi.h"

/* ---- Errors and parameters ------------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) int rpc_fail(struct rpc_err *e, int code, const char *fmt,
						   ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->code = code;
	return -1;
}

/* A string parameter: 1 when present, 0 when absent and optional, -1 on error. */
int p_str(json_object *params, const char *name, bool required, char *out, size_t size,
	  struct rpc_err *e)
{
	json_object *v;
	size_t len;

	if (!params || !json_object_object_get_ex(params, name, &v) ||
	    json_object_is_type(v, json_type_null)) {
		if (required)
			return rpc_fail(e, RPC_INVALID_PARAMS, "missing parameter \"%s\"", name);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"%s\": %s is not a string", name,
				json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	len = (size_t)json_object_get_string_len(v);
	if (len == 0 || len >= size || strlen(json_object_get_string(v)) != len)
		return rpc_fail(e, RPC_INVALID_PARAMS,
				"parameter \"%s\": expected 1 to %zu characters, got %zu", name,
				size - 1, len);
	memcpy(out, json_object_get_string(v), len + 1);
	return 1;
}

/* An integer parameter in [min, max] (a decimal string is accepted too). */
int p_uint(json_object *params, const char *name, bool required, uint64_t min, uint64_t max,
	   uint64_t *out, struct rpc_err *e)
{
	json_object *v;
	const char *txt;
	char *end;
	uint64_t n;

	if (!params || !json_object_object_get_ex(params, name, &v) ||
	    json_object_is_type(v, json_type_null)) {
		if (required)
			return rpc_fail(e, RPC_INVALID_PARAMS, "missing parameter \"%s\"", name);
		return 0;
	}
	txt = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	if (json_object_is_type(v, json_type_int)) {
		if (json_object_get_int64(v) < 0)
			goto range;
		n = (uint64_t)json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);

		errno = 0;
		n = strtoull(s, &end, 10);
		if (!*s || *s == '-' || *end || errno)
			return rpc_fail(e, RPC_INVALID_PARAMS,
					"parameter \"%s\": %s is not an integer", name, txt);
	} else {
		return rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"%s\": %s is not an integer",
				name, txt);
	}
	if (n < min || n > max)
		goto range;
	*out = n;
	return 1;
range:
	return rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"%s\": %s is out of range %llu..%llu",
			name, txt, (unsigned long long)min, (unsigned long long)max);
}

static int p_bool(json_object *params, const char *name, bool *out, struct rpc_err *e)
{
	json_object *v;

	if (!params || !json_object_object_get_ex(params, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"%s\": %s is not true or false",
				name, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	*out = json_object_get_boolean(v);
	return 1;
}

/* Size: bytes as an integer, or text with a K/M/G/T suffix ("128M"). */
static int p_size(json_object *params, const char *name, uint64_t *out, struct rpc_err *e)
{
	json_object *v;

	if (!params || !json_object_object_get_ex(params, name, &v))
		return rpc_fail(e, RPC_INVALID_PARAMS, "missing parameter \"%s\"", name);
	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0) {
		*out = (uint64_t)json_object_get_int64(v);
		return 1;
	}
	if (json_object_is_type(v, json_type_string) &&
	    bdev_parse_size(json_object_get_string(v), out) == 0)
		return 1;
	return rpc_fail(e, RPC_INVALID_PARAMS,
			"parameter \"%s\": %s is not a size (bytes, or a number with K, M, G or T)",
			name, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

/* ---- Editing a copy of the running model ------------------------------------------------- */

static int subsys_index(const struct tgt_config *cfg, const char *nqn)
{
	for (unsigned int i = 0; i < cfg->nsubsystems; i++)
		if (!strcmp(cfg->subsystems[i].nqn, nqn))
			return (int)i;
	return -1;
}

static bool host_in_list(char (*list)[NVME_NQN_FIELD], unsigned int n, const char *nqn)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(list[i], nqn))
			return true;
	return false;
}

static int push_nqn(char (**list)[NVME_NQN_FIELD], unsigned int *n, const char *nqn)
{
	char(*v)[NVME_NQN_FIELD] = realloc(*list, (*n + 1) * sizeof(**list));

	if (!v)
		return -ENOMEM;
	snprintf(v[*n], NVME_NQN_FIELD, "%s", nqn);
	*list = v;
	(*n)++;
	return 0;
}

static bool drop_nqn(char (*list)[NVME_NQN_FIELD], unsigned int *n, const char *nqn)
{
	for (unsigned int i = 0; i < *n; i++)
		if (!strcmp(list[i], nqn)) {
			memmove(list[i], list[i + 1], (*n - i - 1) * sizeof(*list));
			(*n)--;
			return true;
		}
	return false;
}

static void drop_port(struct tgt_config *cfg, unsigned int i)
{
	free(cfg->ports[i].subsystems);
	free(cfg->ports[i].referrals);
	free(cfg->ports[i].ana_groups);
	memmove(&cfg->ports[i], &cfg->ports[i + 1], (cfg->nports - i - 1) * sizeof(*cfg->ports));
	cfg->nports--;
}

/* Ports left without a subsystem (and without referrals) stop listening. */
static void drop_empty_ports(struct tgt_config *cfg)
{
	for (unsigned int i = cfg->nports; i-- > 0;)
		if (!cfg->ports[i].nsubsystems && !cfg->ports[i].nreferrals)
			drop_port(cfg, i);
}

/* A host no subsystem lists any more leaves "hosts" (and its keys go with it). */
static void drop_unused_host(struct tgt_config *cfg, const char *nqn)
{
	for (unsigned int i = 0; i < cfg->nsubsystems; i++)
		if (host_in_list(cfg->subsystems[i].allowed_hosts,
				 cfg->subsystems[i].nallowed_hosts, nqn))
			return;
	drop_nqn(cfg->hosts, &cfg->nhosts, nqn);
	for (unsigned int i = 0; i < cfg->nhost_keys; i++)
		if (!strcmp(cfg->host_keys[i].nqn, nqn)) {
			explicit_bzero(&cfg->host_keys[i], sizeof(cfg->host_keys[i]));
			memmove(&cfg->host_keys[i], &cfg->host_keys[i + 1],
				(cfg->nhost_keys - i - 1) * sizeof(*cfg->host_keys));
			cfg->nhost_keys--;
			break;
		}
}

/* Copy the running model, or fail with an internal error. */
struct tgt_config *model_begin(struct control_ctx *ctx, struct rpc_err *e)
{
	struct tgt_config *next = NULL;

	if (config_dup(*ctx->cfg, &next)) {
		rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		return NULL;
	}
	return next;
}

/* Move the target to @next (consumed): on success it becomes the running model. */
int model_commit(struct control_ctx *ctx, struct tgt_config *next, const char *what,
		 struct rpc_err *e)
{
	char err[512] = "";
	int rc;

	rc = config_reload(ctx->tgt, *ctx->cfg, next, err, sizeof(err));
	if (rc) {
		config_free(next);
		return rpc_fail(e, rc, "%s: %s", what, err[0] ? err : strerror(-rc));
	}
	config_free(*ctx->cfg);
	*ctx->cfg = next;
	ctx->dirty = true;
	ctx->changes++;
	log_notice("control: %s", what);
	return 0;
}

struct config_subsys *need_subsys(struct tgt_config *cfg, const char *nqn, struct rpc_err *e)
{
	int i = subsys_index(cfg, nqn);

	if (i < 0) {
		rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist", nqn);
		return NULL;
	}
	return &cfg->subsystems[i];
}

/* ---- Methods ------------------------------------------------------------------------------ */

typedef int (*method_fn)(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e);

static json_object *subsys_json(struct nvmf_tgt *tgt, struct nvmf_subsys *s)
{
	json_object *o = json_object_new_object(), *hosts = json_object_new_array();
	json_object *nss = json_object_new_array(), *ls = json_object_new_array();
	struct nvmf_host *h;
	struct nvmf_port *p;

	json_object_object_add(o, "nqn", json_object_new_string(s->nqn));
	json_object_object_add(o, "subtype",
			       json_object_new_string(s->type == NVMF_SUBSYS_DISCOVERY ? "Discovery"
										       : "NVMe"));
	json_object_object_add(o, "serial_number", json_object_new_string(s->serial));
	json_object_object_add(o, "model_number", json_object_new_string(s->model));
	json_object_object_add(o, "allow_any_host", json_object_new_boolean(s->allow_any_host));
	TAILQ_FOREACH(h, &s->hosts, link) /* tgt->lock held */
	json_object_array_add(hosts, json_object_new_string(h->nqn));
	json_object_object_add(o, "hosts", hosts);
	pthread_mutex_lock(&s->lock);
	for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		struct nvmf_ns *ns = s->ns[nsid];
		json_object *n;

		if (!ns)
			continue;
		n = json_object_new_object();
		json_object_object_add(n, "nsid", json_object_new_int64(nsid));
		json_object_object_add(n, "path", json_object_new_string(ns->bdev->spec));
		json_object_object_add(n, "block_size",
				       json_object_new_int64(1 << ns->block_shift));
		json_object_object_add(n, "num_blocks",
				       json_object_new_int64((int64_t)ns->nblocks));
		json_object_object_add(
			n, "size",
			json_object_new_int64((int64_t)(ns->nblocks << ns->block_shift)));
		json_object_array_add(nss, n);
	}
	pthread_mutex_unlock(&s->lock);
	json_object_object_add(o, "namespaces", nss);
	TAILQ_FOREACH(p, &tgt->ports, link)
	{
		json_object *a;
		bool exp = false;

		for (unsigned int i = 0; i < p->nsubsys; i++)
			exp |= p->subsys[i] == s;
		if (!exp && !(s->type == NVMF_SUBSYS_DISCOVERY && p->discovery_only))
			continue;
		a = json_object_new_object();
		json_object_object_add(a, "portid", json_object_new_int64(p->portid));
		json_object_object_add(a, "trtype", json_object_new_string(p->ops->name));
		json_object_object_add(
			a, "adrfam",
			json_object_new_string(p->adrfam == NVMF_ADRFAM_IPV6 ? "ipv6" : "ipv4"));
		json_object_object_add(a, "traddr", json_object_new_string(p->traddr));
		json_object_object_add(a, "trsvcid", json_object_new_string(p->trsvcid));
		json_object_array_add(ls, a);
	}
	json_object_object_add(o, "listen_addresses", ls);
	return o;
}

static int m_get_subsystems(struct control_ctx *ctx, json_object *params, json_object **result,
			    struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD];
	struct nvmf_subsys *s;
	json_object *arr;
	int has = p_str(params, "nqn", false, nqn, sizeof(nqn), e);

	if (has < 0 || !ctx->tgt)
		return has < 0 ? -1 : 0;
	arr = json_object_new_array();
	pthread_mutex_lock(&ctx->tgt->lock);
	if (!has)
		json_object_array_add(arr, subsys_json(ctx->tgt, ctx->tgt->discovery));
	TAILQ_FOREACH(s, &ctx->tgt->subsystems, link)
	if (!has || !strcmp(s->nqn, nqn))
		json_object_array_add(arr, subsys_json(ctx->tgt, s));
	pthread_mutex_unlock(&ctx->tgt->lock);
	if (has && json_object_array_length(arr) == 0) {
		json_object_put(arr);
		return rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist",
				nqn);
	}
	*result = arr;
	return 0;
}

static int m_create_subsystem(struct control_ctx *ctx, json_object *params, json_object **result,
			      struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], serial[21] = "", model[41] = "", what[300];
	bool any = false;
	struct tgt_config *next;
	struct config_subsys *v;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_str(params, "serial_number", false, serial, sizeof(serial), e) < 0 ||
	    p_str(params, "model_number", false, model, sizeof(model), e) < 0 ||
	    p_bool(params, "allow_any_host", &any, e) < 0)
		return -1;
	if (!strcmp(nqn, NVME_DISCOVERY_NQN))
		return rpc_fail(e, RPC_INVALID_PARAMS,
				"parameter \"nqn\": \"%s\" is the discovery "
				"subsystem",
				nqn);
	if (!ctx->tgt)
		return 0;
	if (subsys_index(*ctx->cfg, nqn) >= 0 || nvmf_subsys_find(ctx->tgt, nqn))
		return rpc_fail(e, -EEXIST, "parameter \"nqn\": subsystem \"%s\" already exists",
				nqn);
	next = model_begin(ctx, e);
	if (!next)
		return -1;
	v = realloc(next->subsystems, (next->nsubsystems + 1) * sizeof(*v));
	if (!v) {
		config_free(next);
		return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
	}
	next->subsystems = v;
	v = &v[next->nsubsystems++];
	memset(v, 0, sizeof(*v));
	snprintf(v->nqn, sizeof(v->nqn), "%s", nqn);
	snprintf(v->serial, sizeof(v->serial), "%s", serial);
	snprintf(v->model, sizeof(v->model), "%s", model);
	v->allow_any_host = any;
	v->cntlid_min = 1; /* what the loader gives a file that does not say */
	v->cntlid_max = 0xffef;
	snprintf(what, sizeof(what), "subsystem %s created", nqn);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_boolean(true);
	return 0;
}

static int m_delete_subsystem(struct control_ctx *ctx, json_object *params, json_object **result,
			      struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], what[300];
	struct tgt_config *next;
	int i;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!need_subsys(*ctx->cfg, nqn, e))
		return -1;
	next = model_begin(ctx, e);
	if (!next)
		return -1;
	i = subsys_index(next, nqn);
	for (unsigned int p = 0; p < next->nports; p++)
		drop_nqn(next->ports[p].subsystems, &next->ports[p].nsubsystems, nqn);
	drop_empty_ports(next);
	{
		struct config_subsys gone = next->subsystems[i];

		memmove(&next->subsystems[i], &next->subsystems[i + 1],
			(next->nsubsystems - (unsigned int)i - 1) * sizeof(*next->subsystems));
		next->nsubsystems--;
		for (unsigned int h = 0; h < gone.nallowed_hosts; h++)
			drop_unused_host(next, gone.allowed_hosts[h]);
		free(gone.namespaces);
		free(gone.allowed_hosts);
	}
	snprintf(what, sizeof(what), "subsystem %s deleted", nqn);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_boolean(true);
	return 0;
}

static int m_add_ns(struct control_ctx *ctx, json_object *params, json_object **result,
		    struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], path[CONFIG_PATH_MAX], what[CONFIG_PATH_MAX + 400];
	struct config_subsys *cs;
	struct tgt_config *next;
	struct config_ns *v;
	uint64_t nsid = 0;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_str(params, "path", true, path, sizeof(path), e) < 0 ||
	    p_uint(params, "nsid", false, 1, NVMF_MAX_NAMESPACES, &nsid, e) < 0)
		return -1;
	if (strncmp(path, "ram:", 4) && strncmp(path, "null:", 5) && path[0] != '/')
		return rpc_fail(e, RPC_INVALID_PARAMS,
				"parameter \"path\": \"%s\": expected "
				"ram:SIZE, null:SIZE or an absolute file or device path",
				path);
	if (!ctx->tgt)
		return 0;
	if (!need_subsys(*ctx->cfg, nqn, e))
		return -1;
	next = model_begin(ctx, e);
	if (!next)
		return -1;
	cs = &next->subsystems[subsys_index(next, nqn)];
	if (nsid && config_find_ns(cs, (uint32_t)nsid)) {
		config_free(next);
		return rpc_fail(e, -EEXIST, "parameter \"nsid\": namespace %llu of %s exists",
				(unsigned long long)nsid, nqn);
	}
	for (uint32_t n = 1; !nsid && n <= NVMF_MAX_NAMESPACES; n++)
		if (!config_find_ns(cs, n))
			nsid = n;
	v = nsid ? realloc(cs->namespaces, (cs->nnamespaces + 1) * sizeof(*v)) : NULL;
	if (!v) {
		config_free(next);
		return rpc_fail(e, nsid ? RPC_INTERNAL_ERROR : -ENOSPC,
				nsid ? "out of memory" : "no free namespace ID");
	}
	cs->namespaces = v;
	v = &v[cs->nnamespaces++];
	memset(v, 0, sizeof(*v));
	v->nsid = (uint32_t)nsid;
	v->enable = true;
	snprintf(v->path, sizeof(v->path), "%s", path);
	snprintf(what, sizeof(what), "%s: namespace %llu added (%s)", nqn, (unsigned long long)nsid,
		 path);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_int64((int64_t)nsid);
	return 0;
}

static int m_remove_ns(struct control_ctx *ctx, json_object *params, json_object **result,
		       struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], what[300];
	struct config_subsys *cs;
	struct tgt_config *next;
	uint64_t nsid;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_uint(params, "nsid", true, 1, NVMF_MAX_NAMESPACES, &nsid, e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		return -1;
	if (!config_find_ns(cs, (uint32_t)nsid))
		return rpc_fail(e, -ENOENT, "parameter \"nsid\": %s has no namespace %llu", nqn,
				(unsigned long long)nsid);
	next = model_begin(ctx, e);
	if (!next)
		return -1;
	cs = &next->subsystems[subsys_index(next, nqn)];
	for (unsigned int i = 0; i < cs->nnamespaces; i++)
		if (cs->namespaces[i].nsid == nsid) {
			memmove(&cs->namespaces[i], &cs->namespaces[i + 1],
				(cs->nnamespaces - i - 1) * sizeof(*cs->namespaces));
			cs->nnamespaces--;
			break;
		}
	snprintf(what, sizeof(what), "%s: namespace %llu removed", nqn, (unsigned long long)nsid);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_boolean(true);
	return 0;
}

static int m_resize_ns(struct control_ctx *ctx, json_object *params, json_object **result,
		       struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], err[512] = "";
	struct config_ns *ns = NULL;
	struct config_subsys *cs;
	struct nvmf_subsys *s;
	uint64_t nsid, size;
	int rc;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_uint(params, "nsid", true, 1, NVMF_MAX_NAMESPACES, &nsid, e) < 0 ||
	    p_size(params, "size", &size, e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		return -1;
	for (unsigned int i = 0; i < cs->nnamespaces; i++)
		if (cs->namespaces[i].nsid == nsid)
			ns = &cs->namespaces[i];
	s = nvmf_subsys_find(ctx->tgt, nqn);
	if (!ns || !s)
		return rpc_fail(e, -ENOENT, "parameter \"nsid\": %s has no namespace %llu", nqn,
				(unsigned long long)nsid);
	rc = nvmf_subsys_resize_ns(s, (uint32_t)nsid, size, err, sizeof(err));
	if (rc)
		return rpc_fail(e, rc, "parameter \"size\": %llu: %s", (unsigned long long)size,
				err);
	/* ram:/null: carry their size in the spec; a file's size is the file's. */
	if (!strncmp(ns->path, "ram:", 4) || !strncmp(ns->path, "null:", 5)) {
		char *colon = strchr(ns->path, ':');

		static const char sfx[] = "TGMK";
		unsigned int shift = 40, i = 0;

		while (shift && size % (1ull << shift))
			shift -= 10, i++;
		snprintf(colon + 1, sizeof(ns->path) - (size_t)(colon + 1 - ns->path), "%llu%.*s",
			 (unsigned long long)(size >> shift), shift ? 1 : 0, &sfx[i]);
	}
	ctx->dirty = true;
	ctx->changes++;
	*result = json_object_new_boolean(true);
	return 0;
}

static int m_add_host(struct control_ctx *ctx, json_object *params, json_object **result,
		      struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], host[NVME_NQN_FIELD], what[600];
	struct config_host_key k = { 0 };
	struct config_subsys *cs;
	struct tgt_config *next;
	int rc;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_str(params, "host", true, host, sizeof(host), e) < 0 ||
	    p_str(params, "dhchap_key", false, k.key, sizeof(k.key), e) < 0 ||
	    p_str(params, "dhchap_ctrlr_key", false, k.ctrl_key, sizeof(k.ctrl_key), e) < 0)
		goto fail;
	/* Checked fully when the reload applies them (the core refuses a bad secret). */
	if ((k.key[0] && strncmp(k.key, "DHHC-1:", 7)) ||
	    (k.ctrl_key[0] && strncmp(k.ctrl_key, "DHHC-1:", 7))) {
		rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"%s\": not a DHHC-1 secret",
			 k.key[0] && strncmp(k.key, "DHHC-1:", 7) ? "dhchap_key"
								  : "dhchap_ctrlr_key");
		goto fail;
	}
	if (k.ctrl_key[0] && !k.key[0]) {
		rpc_fail(e, RPC_INVALID_PARAMS,
			 "parameter \"dhchap_ctrlr_key\": needs "
			 "\"dhchap_key\" as well");
		goto fail;
	}
	if (!ctx->tgt)
		goto ok;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		goto fail;
	if (cs->allow_any_host) {
		rpc_fail(e, -EINVAL,
			 "parameter \"nqn\": %s allows any host; a host list would "
			 "not restrict it",
			 nqn);
		goto fail;
	}
	if (host_in_list(cs->allowed_hosts, cs->nallowed_hosts, host) && !k.key[0]) {
		rpc_fail(e, -EEXIST, "parameter \"host\": %s is already allowed on %s", host, nqn);
		goto fail;
	}
	if (!(next = model_begin(ctx, e)))
		goto fail;
	cs = &next->subsystems[subsys_index(next, nqn)];
	rc = 0;
	if (!host_in_list(next->hosts, next->nhosts, host))
		rc = push_nqn(&next->hosts, &next->nhosts, host);
	if (!rc && !host_in_list(cs->allowed_hosts, cs->nallowed_hosts, host))
		rc = push_nqn(&cs->allowed_hosts, &cs->nallowed_hosts, host);
	if (!rc && k.key[0]) {
		struct config_host_key *hk =
			(struct config_host_key *)config_find_host_key(next, host);

		if (!hk) {
			hk = realloc(next->host_keys, (next->nhost_keys + 1) * sizeof(*hk));
			if (hk) {
				next->host_keys = hk;
				hk = &hk[next->nhost_keys++];
			} else {
				rc = -ENOMEM;
			}
		}
		if (hk) {
			snprintf(k.nqn, sizeof(k.nqn), "%s", host);
			*hk = k;
		}
	}
	if (rc) {
		config_free(next);
		rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		goto fail;
	}
	snprintf(what, sizeof(what), "%s: host %s allowed%s", nqn, host,
		 k.key[0] ? " (with DH-HMAC-CHAP keys)" : "");
	if (model_commit(ctx, next, what, e))
		goto fail;
ok:
	explicit_bzero(&k, sizeof(k));
	*result = json_object_new_boolean(true);
	return 0;
fail:
	explicit_bzero(&k, sizeof(k));
	return -1;
}

struct host_count {
	const char *hostnqn;
	int n;
};

static void count_host_ctrlr(const struct nvmf_ctrlr_info *ci, void *arg)
{
	struct host_count *hc = arg;

	if (!ci->local && !strcmp(ci->hostnqn, hc->hostnqn))
		hc->n++;
}

static int m_remove_host(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e)
{
	struct host_count hc = { 0 };
	char nqn[NVME_NQN_FIELD], host[NVME_NQN_FIELD], what[600];
	struct config_subsys *cs;
	struct tgt_config *next;
	struct nvmf_subsys *s;
	json_object *r;
	int n = 0;

	if (p_str(params, "nqn", true, nqn, sizeof(nqn), e) < 0 ||
	    p_str(params, "host", true, host, sizeof(host), e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!(cs = need_subsys(*ctx->cfg, nqn, e)))
		return -1;
	if (!host_in_list(cs->allowed_hosts, cs->nallowed_hosts, host))
		return rpc_fail(e, -ENOENT, "parameter \"host\": %s is not allowed on %s", host,
				nqn);
	if (!(next = model_begin(ctx, e)))
		return -1;
	cs = &next->subsystems[subsys_index(next, nqn)];
	drop_nqn(cs->allowed_hosts, &cs->nallowed_hosts, host);
	drop_unused_host(next, host);
	snprintf(what, sizeof(what), "%s: host %s no longer allowed", nqn, host);
	/* Revocation: its next Connect is refused, and its live controllers end now (the
	 * reload ends those of hosts no longer allowed; any still there are ended here). */
	hc.hostnqn = host;
	nvmf_tgt_list_ctrlrs(ctx->tgt, nqn, count_host_ctrlr, &hc);
	if (model_commit(ctx, next, what, e))
		return -1;
	s = nvmf_subsys_find(ctx->tgt, nqn);
	if (s)
		nvmf_subsys_disconnect_host(s, host);
	n = hc.n;
	r = json_object_new_object();
	json_object_object_add(r, "disconnected_controllers", json_object_new_int(n));
	*result = r;
	return 0;
}

/* The port of @cfg listening on @u's address, or -1. */
static int port_for(const struct tgt_config *cfg, const struct uri_listen *u, const char *svc)
{
	for (unsigned int i = 0; i < cfg->nports; i++) {
		const struct config_addr *a = &cfg->ports[i].addr;

		if (!strcmp(a->trtype, uri_transport_name(u->transport)) &&
		    !strcmp(a->traddr, u->addr) && !strcmp(a->trsvcid, svc))
			return (int)i;
	}
	return -1;
}

static int parse_listener(json_object *params, char *nqn, struct uri_listen *u, char *svc,
			  char *uri, struct rpc_err *e)
{
	char uerr[256];

	if (p_str(params, "nqn", true, nqn, NVME_NQN_FIELD, e) < 0 ||
	    p_str(params, "uri", true, uri, 512, e) < 0)
		return -1;
	if (uri_parse_listen(uri, u, uerr, sizeof(uerr)))
		return rpc_fail(e, RPC_INVALID_PARAMS, "parameter \"uri\": \"%s\": %s", uri, uerr);
	if (u->transport == URI_TRANSPORT_ISCSI)
		return rpc_fail(e, -EOPNOTSUPP,
				"parameter \"uri\": \"%s\": iSCSI portals are set "
				"in the configuration file's iscsi section and need a restart",
				uri);
	snprintf(svc, 16, "%u", u->port);
	return 0;
}

static int m_add_listener(struct control_ctx *ctx, json_object *params, json_object **result,
			  struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], svc[16], uri[512], what[800];
	struct tgt_config *next;
	struct config_port *p;
	struct uri_listen u;
	int i;

	if (parse_listener(params, nqn, &u, svc, uri, e))
		return -1;
	if (!ctx->tgt)
		return 0;
	if (!need_subsys(*ctx->cfg, nqn, e))
		return -1;
	if (!(next = model_begin(ctx, e)))
		return -1;
	/* Port 0 asks the kernel for a free port: always a new listener. */
	i = u.port ? port_for(next, &u, svc) : -1;
	if (i < 0) {
		uint16_t portid = 1;

		for (unsigned int j = 0; j < next->nports; j++)
			if (next->ports[j].portid >= portid &&
			    next->ports[j].portid < CONFIG_PORTID_RESERVED - 1)
				portid = (uint16_t)(next->ports[j].portid + 1);
		p = realloc(next->ports, (next->nports + 1) * sizeof(*p));
		if (!p) {
			config_free(next);
			return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		}
		next->ports = p;
		i = (int)next->nports++;
		p = &p[i];
		memset(p, 0, sizeof(*p));
		p->portid = portid;
		snprintf(p->addr.trtype, sizeof(p->addr.trtype), "%s",
			 uri_transport_name(u.transport));
		snprintf(p->addr.adrfam, sizeof(p->addr.adrfam), "%s", u.ipv6 ? "ipv6" : "ipv4");
		snprintf(p->addr.traddr, sizeof(p->addr.traddr), "%s", u.addr);
		snprintf(p->addr.trsvcid, sizeof(p->addr.trsvcid), "%s", svc);
		p->addr.treq = u.tls ? NVMF_TREQ_SECURE_REQUIRED : NVMF_TREQ_SECURE_NOT_SPECIFIED;
		p->addr.sectype = u.tls ? NVMF_TCP_SECTYPE_TLS13 : NVMF_TCP_SECTYPE_NONE;
	}
	p = &next->ports[i];
	/* tls:// needs a TLS port there; tcp:// a port that serves plain hosts. */
	if (u.tls ? p->addr.sectype != NVMF_TCP_SECTYPE_TLS13
		  : p->addr.treq == NVMF_TREQ_SECURE_REQUIRED) {
		unsigned int portid = p->portid; /* p goes with next */

		config_free(next);
		return rpc_fail(e, -EINVAL, "parameter \"uri\": port %u at that address %s", portid,
				u.tls ? "does not use TLS" : "requires TLS (use tls://)");
	}
	if (host_in_list(p->subsystems, p->nsubsystems, nqn)) {
		config_free(next);
		return rpc_fail(e, -EEXIST, "parameter \"uri\": %s already listens on %s", nqn,
				uri);
	}
	if (push_nqn(&p->subsystems, &p->nsubsystems, nqn)) {
		config_free(next);
		return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
	}
	snprintf(what, sizeof(what), "%s: listening on %s (port %u)", nqn, uri, p->portid);
	i = p->portid;
	if (model_commit(ctx, next, what, e))
		return -1;
	/* The model (and so save) records the port the kernel picked. */
	if (!u.port) {
		struct nvmf_port *np = nvmf_port_find(ctx->tgt, (uint16_t)i);

		for (unsigned int j = 0; np && j < (*ctx->cfg)->nports; j++)
			if ((*ctx->cfg)->ports[j].portid == i)
				snprintf((*ctx->cfg)->ports[j].addr.trsvcid,
					 sizeof((*ctx->cfg)->ports[j].addr.trsvcid), "%s",
					 np->trsvcid);
	}
	*result = json_object_new_object();
	json_object_object_add(*result, "portid", json_object_new_int(i));
	return 0;
}

static int m_remove_listener(struct control_ctx *ctx, json_object *params, json_object **result,
			     struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD], svc[16], uri[512], what[800];
	struct tgt_config *next;
	struct uri_listen u;
	int i;

	if (parse_listener(params, nqn, &u, svc, uri, e))
		return -1;
	if (!ctx->tgt)
		return 0;
	i = port_for(*ctx->cfg, &u, svc);
	if (i < 0 ||
	    !host_in_list((*ctx->cfg)->ports[i].subsystems, (*ctx->cfg)->ports[i].nsubsystems, nqn))
		return rpc_fail(e, -ENOENT, "parameter \"uri\": %s does not listen on %s", nqn,
				uri);
	if (!(next = model_begin(ctx, e)))
		return -1;
	drop_nqn(next->ports[i].subsystems, &next->ports[i].nsubsystems, nqn);
	drop_empty_ports(next);
	snprintf(what, sizeof(what), "%s: no longer listening on %s", nqn, uri);
	if (model_commit(ctx, next, what, e))
		return -1;
	*result = json_object_new_boolean(true);
	return 0;
}

static void ctrlr_to_json(const struct nvmf_ctrlr_info *ci, void *arg)
{
	json_object *o = json_object_new_object(), *st = json_object_new_object();
	char hostid[40];

	json_object_object_add(o, "cntlid", json_object_new_int(ci->cntlid));
	json_object_object_add(o, "nqn", json_object_new_string(ci->subnqn));
	json_object_object_add(o, "hostnqn", json_object_new_string(ci->hostnqn));
	for (int i = 0, off = 0; i < 16; i++)
		off += snprintf(hostid + off, sizeof(hostid) - (size_t)off, "%s%02x",
				i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", ci->hostid[i]);
	json_object_object_add(o, "hostid", json_object_new_string(hostid));
	json_object_object_add(o, "trtype", json_object_new_string(ci->trtype));
	json_object_object_add(o, "traddr", json_object_new_string(ci->traddr));
	json_object_object_add(o, "trsvcid", json_object_new_string(ci->trsvcid));
	json_object_object_add(o, "peer", json_object_new_string(ci->peer));
	json_object_object_add(o, "ready", json_object_new_boolean(ci->ready));
	json_object_object_add(o, "io_queues", json_object_new_int((int)ci->io_queues));
	json_object_object_add(o, "kato_ms", json_object_new_int64(ci->kato_ms));
	json_object_object_add(st, "read_cmds",
			       json_object_new_int64((int64_t)ci->stats.read_cmds));
	json_object_object_add(st, "write_cmds",
			       json_object_new_int64((int64_t)ci->stats.write_cmds));
	json_object_object_add(st, "other_cmds",
			       json_object_new_int64((int64_t)ci->stats.other_cmds));
	json_object_object_add(st, "read_bytes",
			       json_object_new_int64((int64_t)ci->stats.read_bytes));
	json_object_object_add(st, "write_bytes",
			       json_object_new_int64((int64_t)ci->stats.write_bytes));
	json_object_object_add(o, "stats", st);
	json_object_array_add(arg, o);
}

static int m_get_controllers(struct control_ctx *ctx, json_object *params, json_object **result,
			     struct rpc_err *e)
{
	char nqn[NVME_NQN_FIELD];
	int has = p_str(params, "nqn", false, nqn, sizeof(nqn), e);

	if (has < 0 || !ctx->tgt)
		return has < 0 ? -1 : 0;
	if (has && !nvmf_subsys_find(ctx->tgt, nqn))
		return rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist",
				nqn);
	*result = json_object_new_array();
	nvmf_tgt_list_ctrlrs(ctx->tgt, has ? nqn : NULL, ctrlr_to_json, *result);
	return 0;
}

struct find_cntlid {
	uint16_t cntlid;
	unsigned int n;
	char nqn[NVME_NQN_FIELD];
};

static void find_cntlid_cb(const struct nvmf_ctrlr_info *ci, void *arg)
{
	struct find_cntlid *f = arg;

	if (ci->cntlid == f->cntlid) {
		f->n++;
		snprintf(f->nqn, sizeof(f->nqn), "%s", ci->subnqn);
	}
}

static int m_disconnect_controller(struct control_ctx *ctx, json_object *params,
				   json_object **result, struct rpc_err *e)
{
	struct find_cntlid f = { 0 };
	struct nvmf_subsys *s;
	uint64_t cntlid;
	int has;

	if (p_uint(params, "cntlid", true, 1, 0xffef, &cntlid, e) < 0 ||
	    (has = p_str(params, "nqn", false, f.nqn, sizeof(f.nqn), e)) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	f.cntlid = (uint16_t)cntlid;
	if (!has) {
		nvmf_tgt_list_ctrlrs(ctx->tgt, NULL, find_cntlid_cb, &f);
		if (f.n > 1)
			return rpc_fail(e, RPC_INVALID_PARAMS,
					"parameter \"cntlid\": %llu is used "
					"by %u subsystems; give \"nqn\" too",
					(unsigned long long)cntlid, f.n);
		if (!f.n)
			return rpc_fail(e, -ENOENT, "parameter \"cntlid\": no controller %llu",
					(unsigned long long)cntlid);
	}
	s = nvmf_subsys_find(ctx->tgt, f.nqn);
	if (!s)
		return rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist",
				f.nqn);
	if (nvmf_ctrlr_disconnect(s, f.cntlid))
		return rpc_fail(e, -ENOENT, "parameter \"cntlid\": %s has no controller %llu",
				f.nqn, (unsigned long long)cntlid);
	*result = json_object_new_boolean(true);
	return 0;
}

static const char *const level_names[] = { "err", "warn", "notice", "info", "debug" };

static int m_log_set_level(struct control_ctx *ctx, json_object *params, json_object **result,
			   struct rpc_err *e)
{
	char lvl[16];

	if (p_str(params, "level", true, lvl, sizeof(lvl), e) < 0)
		return -1;
	for (unsigned int i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcmp(lvl, level_names[i])) {
			if (ctx->tgt) {
				log_set_level((enum log_level)i);
				log_notice("control: log level %s", lvl);
			}
			*result = json_object_new_boolean(true);
			return 0;
		}
	return rpc_fail(e, RPC_INVALID_PARAMS,
			"parameter \"level\": \"%s\": expected err, warn, notice, info or debug",
			lvl);
}

static int m_log_get_level(struct control_ctx *ctx, json_object *params, json_object **result,
			   struct rpc_err *e)
{
	*result = json_object_new_string(level_names[log_get_level()]);
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return a && b && realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static int m_save_config(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e)
{
	char file[PATH_MAX], err[512], *txt = NULL;
	json_object *o;
	bool secrets = false;
	int has = p_str(params, "file", false, file, sizeof(file), e), rc;

	if (has < 0)
		return -1;
	/* keys go into the reply only when asked for (nvmeof-ctl save FILE writes them to a
	 * file of mode 0600); a plain save_config shows the configuration without them */
	if (p_bool(params, "secrets", &secrets, e) < 0)
		return -1;
	if (has && file[0] != '/')
		return rpc_fail(e, RPC_INVALID_PARAMS,
				"parameter \"file\": \"%s\": expected an "
				"absolute path (the daemon's working directory is /)",
				file);
	if (!ctx->tgt)
		return 0;
	if (has) {
		rc = config_save_file(*ctx->cfg, file, err, sizeof(err));
		if (rc)
			return rpc_fail(e, rc, "parameter \"file\": %s", err);
		if (same_file(file, ctx->config_path))
			ctx->dirty = false;
		log_notice("control: configuration saved to %s", file);
		*result = json_object_new_object();
		json_object_object_add(*result, "file", json_object_new_string(file));
		json_object_object_add(*result, "secrets",
				       json_object_new_boolean(config_has_secrets(*ctx->cfg)));
		return 0;
	}
	rc = config_save_string(*ctx->cfg, secrets, &txt);
	o = rc ? NULL : json_tokener_parse(txt);
	if (txt) {
		explicit_bzero(txt, strlen(txt));
		free(txt);
	}
	if (!o)
		return rpc_fail(e, RPC_INTERNAL_ERROR, "cannot format the configuration");
	*result = json_object_new_object();
	json_object_object_add(*result, "config", o);
	json_object_object_add(*result, "secrets",
			       json_object_new_boolean(config_has_secrets(*ctx->cfg)));
	return 0;
}

static int m_get_status(struct control_ctx *ctx, json_object *params, json_object **result,
			struct rpc_err *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(o, "config_file",
			       ctx->config_path ? json_object_new_string(ctx->config_path) : NULL);
	json_object_object_add(o, "dirty", json_object_new_boolean(ctx->dirty));
	json_object_object_add(o, "live_changes", json_object_new_int((int)ctx->changes));
	if (ctx->tgt)
		json_object_object_add(o, "connections",
				       json_object_new_int((int)__atomic_load_n(
					       &ctx->tgt->nconnections, __ATOMIC_RELAXED)));
	*result = o;
	return 0;
}

/* ---- iSCSI sessions ------------------------------------------------------------------------ */

static void session_cb(const struct iscsi_session_info *si, void *arg)
{
	json_object *o = json_object_new_object(), *st = json_object_new_object();
	char isid[13];

	for (unsigned int i = 0; i < 6; i++)
		snprintf(isid + 2 * i, 3, "%02x", si->isid[i]);
	json_object_object_add(o, "initiator", json_object_new_string(si->initiator));
	json_object_object_add(o, "target", json_object_new_string(si->target));
	json_object_object_add(o, "isid", json_object_new_string(isid));
	json_object_object_add(o, "tsih", json_object_new_int(si->tsih));
	json_object_object_add(o, "peer", json_object_new_string(si->peer));
	json_object_object_add(o, "portal_addr", json_object_new_string(si->local_addr));
	json_object_object_add(o, "portal_port", json_object_new_string(si->local_port));
	json_object_object_add(o, "connections", json_object_new_int((int)si->connections));
	json_object_object_add(o, "header_digest", json_object_new_boolean(si->hdigest));
	json_object_object_add(o, "data_digest", json_object_new_boolean(si->ddigest));
	json_object_object_add(st, "read_cmds", json_object_new_int64((int64_t)si->read_cmds));
	json_object_object_add(st, "write_cmds", json_object_new_int64((int64_t)si->write_cmds));
	json_object_object_add(st, "other_cmds", json_object_new_int64((int64_t)si->other_cmds));
	json_object_object_add(st, "read_bytes", json_object_new_int64((int64_t)si->read_bytes));
	json_object_object_add(st, "write_bytes", json_object_new_int64((int64_t)si->write_bytes));
	json_object_object_add(o, "stats", st);
	json_object_array_add(arg, o);
}

/* iscsi_get_sessions {[target]}: sessions in full feature phase. */
static int m_get_sessions(struct control_ctx *ctx, json_object *params, json_object **result,
			  struct rpc_err *e)
{
	char target[256] = "";
	json_object *all, *out;

	if (p_str(params, "target", false, target, sizeof(target), e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	all = json_object_new_array();
	iscsi_list_sessions(session_cb, all);
	if (!target[0]) {
		*result = all;
		return 0;
	}
	out = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(all); i++) {
		json_object *o = json_object_array_get_idx(all, i), *t;

		if (json_object_object_get_ex(o, "target", &t) &&
		    !strcmp(json_object_get_string(t), target))
			json_object_array_add(out, json_object_get(o));
	}
	json_object_put(all);
	*result = out;
	return 0;
}

/* iscsi_disconnect_session {tsih} */
static int m_disconnect_session(struct control_ctx *ctx, json_object *params, json_object **result,
				struct rpc_err *e)
{
	uint64_t tsih;
	int rc;

	if (p_uint(params, "tsih", true, 1, 0xffff, &tsih, e) < 0)
		return -1;
	if (!ctx->tgt)
		return 0;
	rc = iscsi_session_disconnect((uint16_t)tsih);
	if (rc)
		return rpc_fail(e, rc, "parameter \"tsih\": %s",
				rc == -ENOENT ? "no iSCSI session has that TSIH" : strerror(-rc));
	*result = json_object_new_boolean(true);
	return 0;
}

static int m_get_methods(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e);

static const struct {
	const char *name;
	method_fn fn;
} control_methods[] = {
	{ "nvmf_get_subsystems", m_get_subsystems },
	{ "nvmf_create_subsystem", m_create_subsystem },
	{ "nvmf_delete_subsystem", m_delete_subsystem },
	{ "nvmf_subsystem_add_ns", m_add_ns },
	{ "nvmf_subsystem_remove_ns", m_remove_ns },
	{ "nvmf_subsystem_resize_ns", m_resize_ns },
	{ "bdev_resize", m_resize_ns },
	{ "nvmf_subsystem_add_host", m_add_host },
	{ "nvmf_subsystem_remove_host", m_remove_host },
	{ "nvmf_subsystem_add_listener", m_add_listener },
	{ "nvmf_subsystem_remove_listener", m_remove_listener },
	{ "nvmf_get_controllers", m_get_controllers },
	{ "nvmf_disconnect_controller", m_disconnect_controller },
	{ "nvmf_subsystem_set_ana_state", m_set_ana_state },
	{ "nvmf_get_ana_states", m_get_ana_states },
	{ "nvmf_namespace_set_qos", m_set_qos },
	{ "nvmf_namespace_get_qos", m_get_qos },
	{ "nvmf_namespace_clear_qos", m_clear_qos },
	{ "iscsi_get_sessions", m_get_sessions },
	{ "iscsi_disconnect_session", m_disconnect_session },
	{ "log_set_level", m_log_set_level },
	{ "log_get_level", m_log_get_level },
	{ "save_config", m_save_config },
	{ "target_get_status", m_get_status },
	{ "rpc_get_methods", m_get_methods },
};

static int m_get_methods(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e)
{
	*result = json_object_new_array();
	for (size_t i = 0; i < sizeof(control_methods) / sizeof(control_methods[0]); i++)
		json_object_array_add(*result, json_object_new_string(control_methods[i].name));
	return 0;
}

/* ---- Requests ----------------------------------------------------------------------------- */

static char *reply_text(json_object *id, json_object *result, const struct rpc_err *e)
{
	json_object *r = json_object_new_object();
	char *out;

	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	if (e) {
		json_object *eo = json_object_new_object();

		json_object_object_add(eo, "code", json_object_new_int(e->code));
		json_object_object_add(eo, "message", json_object_new_string(e->msg));
		json_object_object_add(r, "error", eo);
	} else {
		json_object_object_add(r, "result",
				       result ? result : json_object_new_boolean(true));
	}
	json_object_object_add(r, "id", id ? json_object_get(id) : NULL);
	out = strdup(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(r);
	return out;
}

char *control_error_reply(int code, const char *msg)
{
	struct rpc_err e = { .code = code };

	snprintf(e.msg, sizeof(e.msg), "%s", msg);
	return reply_text(NULL, NULL, &e);
}

int control_handle(struct control_ctx *ctx, const char *line, size_t len, char **reply)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *req = NULL, *id = NULL, *v, *params = NULL, *result = NULL;
	struct rpc_err e = { 0 };
	const char *method;
	bool notification = false;
	size_t i;

	*reply = NULL;
	if (!tok)
		return -ENOMEM;
	req = json_tokener_parse_ex(tok, line, (int)len);
	if (!req || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		/* Trailing blanks after the object are fine; anything else is not. */
		size_t end = req ? json_tokener_get_parse_end(tok) : 0;

		while (req && end < len &&
		       (line[end] == ' ' || line[end] == '\t' || line[end] == '\r'))
			end++;
		if (!req || end < len) {
			rpc_fail(&e, RPC_PARSE_ERROR, "parse error: %s",
				 req ? "text after the request"
				     : json_tokener_error_desc(json_tokener_get_error(tok)));
			goto out;
		}
	}
	if (!json_object_is_type(req, json_type_object)) {
		rpc_fail(&e, RPC_INVALID_REQUEST, "invalid request: expected a JSON object");
		goto out;
	}
	if (json_object_object_get_ex(req, "id", &v))
		id = v;
	else
		notification = true;
	if (id && !json_object_is_type(id, json_type_int) &&
	    !json_object_is_type(id, json_type_string)) {
		id = NULL;
		rpc_fail(&e, RPC_INVALID_REQUEST,
			 "invalid request: \"id\" must be a number or a "
			 "string");
		goto out;
	}
	if (!json_object_object_get_ex(req, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0")) {
		rpc_fail(&e, RPC_INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"");
		goto out;
	}
	if (!json_object_object_get_ex(req, "method", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		rpc_fail(&e, RPC_INVALID_REQUEST, "invalid request: \"method\" must be a string");
		goto out;
	}
	method = json_object_get_string(v);
	if (json_object_object_get_ex(req, "params", &params) && params &&
	    !json_object_is_type(params, json_type_object)) {
		rpc_fail(&e, RPC_INVALID_PARAMS,
			 "invalid params: expected an object of named "
			 "parameters");
		goto out;
	}
	for (i = 0; i < sizeof(control_methods) / sizeof(control_methods[0]); i++)
		if (!strcmp(control_methods[i].name, method))
			break;
	if (i == sizeof(control_methods) / sizeof(control_methods[0])) {
		rpc_fail(&e, RPC_METHOD_NOT_FOUND, "method not found: \"%.128s\"", method);
		goto out;
	}
	log_info("control: %s", method); /* never the params: they may hold keys */
	if (control_methods[i].fn(ctx, params, &result, &e) == 0)
		e.code = 0;
	else if (e.code == 0)
		rpc_fail(&e, RPC_INTERNAL_ERROR, "%s failed", method);
out:
	if (!notification || e.code == RPC_PARSE_ERROR || e.code == RPC_INVALID_REQUEST) {
		*reply = reply_text(id, result, e.code ? &e : NULL);
		result = NULL;
	}
	json_object_put(result);
	json_object_put(req);
	json_tokener_free(tok);
	explicit_bzero(&e, sizeof(e));
	return (!notification && !*reply) ? -ENOMEM : 0;
}
