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
#include "config/config_file.h"
#include "control.h"
#include "control_internal.h"
#include "core/ana.h"
#include "core/nvmf.h"

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
	json_object_object_add(o, "control_clients_refused",
			       json_object_new_int64((int64_t)ctx->refused_clients));
	if (ctx->tgt)
		json_object_object_add(o, "connections",
				       json_object_new_int((int)__atomic_load_n(
					       &ctx->tgt->nconnections, __ATOMIC_RELAXED)));
	*result = o;
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
