/* SPDX-License-Identifier: MIT */
/* The "subsystems" section: subsystem attributes, allowed hosts and namespaces. */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include "config_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "core/nvmf.h"

/* ---- Subsystems ------------------------------------------------------------------------------ */

static const char *const subsys_keys[] = { "nqn",           "attr",     "namespaces",
					   "allowed_hosts", "passthru", NULL };
static const char *const attr_keys[] = { "allow_any_host", "serial",     "model",     "version",
					 "cntlid_min",     "cntlid_max", "pi_enable", "qid_max",
					 "firmware",       "ieee_oui",   NULL };
static const char *const ns_keys[] = { "nsid", "enable", "device",      "ana_grpid", "ana",
				       "resv", "qos",    "buffered_io", NULL };
static const char *const qos_keys[] = {
	"rw_ios_per_sec",   "r_ios_per_sec",    "w_ios_per_sec", "rw_mbytes_per_sec",
	"r_mbytes_per_sec", "w_mbytes_per_sec", "hosts",         NULL
};
#define QOS_NLIMITS 6 /* the limit keys, first in qos_keys */
static const char *const qos_host_keys[] = { "host",
					     "rw_ios_per_sec",
					     "r_ios_per_sec",
					     "w_ios_per_sec",
					     "rw_mbytes_per_sec",
					     "r_mbytes_per_sec",
					     "w_mbytes_per_sec",
					     NULL };

static int parse_limits(struct pctx *c, json_object *q, const char *kp, uint64_t *const *field)
{
	int64_t v;
	int rc;

	for (unsigned int i = 0; i < QOS_NLIMITS; i++) {
		rc = cfg_get_int(c, q, kp, qos_keys[i], 0, 100000000, &v, OPT);
		if (rc < 0)
			return rc;
		if (rc)
			*field[i] = (uint64_t)v;
	}
	return 0;
}

/* "qos.hosts": one host's limits each (struct config_host_qos). */
static int parse_qos_hosts(struct pctx *c, json_object *arr, const char *kp, struct config_qos *out)
{
	size_t n = json_object_array_length(arr);
	char item[KP_MAX];
	int rc;

	if (n > CONFIG_QOS_HOSTS) {
		cfg_kp_join(item, kp, "hosts");
		return cfg_err(c, -EINVAL, item, "%zu hosts; at most %u per namespace", n,
			       CONFIG_QOS_HOSTS);
	}
	for (size_t i = 0; i < n; i++) {
		struct config_host_qos *h = &out->hosts[i];
		json_object *o = json_object_array_get_idx(arr, i);
		uint64_t *field[] = { &h->rw_ios_per_sec,   &h->r_ios_per_sec,
				      &h->w_ios_per_sec,    &h->rw_mbytes_per_sec,
				      &h->r_mbytes_per_sec, &h->w_mbytes_per_sec };

		cfg_kp_index(item, kp, "hosts", (unsigned int)i);
		if (!json_object_is_type(o, json_type_object))
			return cfg_err(c, -EINVAL, item, "not an object");
		rc = cfg_check_keys(c, o, item, qos_host_keys);
		if (!rc)
			rc = cfg_get_str(c, o, item, "host", h->host, sizeof(h->host), REQ, false);
		if (rc < 0)
			return rc;
		rc = cfg_check_nqn(c, item, h->host, "host");
		if (!rc)
			rc = parse_limits(c, o, item, field);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(out->hosts[j].host, h->host))
				return cfg_err(c, -EINVAL, item,
					       "host \"%s\" listed twice (also [%zu])", h->host, j);
	}
	out->nhosts = (unsigned int)n;
	return 0;
}

/* The "qos" extension of a namespace (struct config_qos); every key optional. */
static int parse_qos(struct pctx *c, json_object *q, const char *kp, struct config_qos *out)
{
	uint64_t *field[] = { &out->rw_ios_per_sec,   &out->r_ios_per_sec,
			      &out->w_ios_per_sec,    &out->rw_mbytes_per_sec,
			      &out->r_mbytes_per_sec, &out->w_mbytes_per_sec };
	json_object *arr;
	int rc;

	rc = cfg_check_keys(c, q, kp, qos_keys);
	if (!rc)
		rc = parse_limits(c, q, kp, field);
	if (rc)
		return rc;
	rc = cfg_get_typed(c, q, kp, "hosts", json_type_array, OPT, &arr);
	if (rc <= 0)
		return rc;
	return parse_qos_hosts(c, arr, kp, out);
}
static const char *const device_keys[] = { "path", "nguid", "uuid", "eui64", NULL };

static int parse_ns_id(struct pctx *c, json_object *dev, const char *kp, const char *key,
		       uint8_t *out, size_t n, bool *has)
{
	char buf[64], sub[KP_MAX];
	int rc;

	rc = cfg_get_str(c, dev, kp, key, buf, sizeof(buf), OPT, false);
	if (rc <= 0)
		return rc;
	cfg_kp_join(sub, kp, key);
	if (!buf[0])
		return 0;
	if (!cfg_parse_hex_id(buf, out, n))
		return cfg_err(c, -EINVAL, sub, "\"%s\": expected %zu hex bytes%s", buf, n,
			       n == 16 ? " (UUID notation)" : "");
	*has = !cfg_all_zero(out, n);
	return 0;
}

static int parse_ns(struct pctx *c, json_object *obj, const char *kp, struct config_ns *ns)
{
	json_object *dev, *grp;
	char sub[KP_MAX];
	bool resv = false;
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, obj, kp, ns_keys);
	if (rc)
		return rc;
	rc = cfg_get_int(c, obj, kp, "nsid", 1, NVMF_MAX_NAMESPACES, &v, REQ);
	if (rc < 0)
		return rc;
	ns->nsid = (uint32_t)v;
	ns->enable = true;
	rc = cfg_get_bool(c, obj, kp, "enable", &ns->enable);
	if (rc < 0)
		return rc;
	rc = cfg_get_int(c, obj, kp, "ana_grpid", 1, CONFIG_MAX_ANA_GROUPS, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		ns->ana_grpid = (uint32_t)v;
	/* nvmet's namespace attribute: 1 = the page cache, 0 (default) = O_DIRECT. */
	rc = cfg_get_bool(c, obj, kp, "buffered_io", &ns->buffered_io);
	if (rc < 0)
		return rc;
	/* nvmetcli's "ana" attribute group picks up the ana_grpid file as {"grpid": "1"}. */
	rc = cfg_get_typed(c, obj, kp, "ana", json_type_object, OPT, &grp);
	if (rc < 0)
		return rc;
	if (rc) {
		static const char *const grp_keys[] = { "grpid", NULL };

		cfg_kp_join(sub, kp, "ana");
		rc = cfg_check_keys(c, grp, sub, grp_keys);
		if (rc)
			return rc;
		rc = cfg_get_int(c, grp, sub, "grpid", 1, CONFIG_MAX_ANA_GROUPS, &v, OPT);
		if (rc < 0)
			return rc;
		if (rc)
			ns->ana_grpid = (uint32_t)v;
	}
	rc = cfg_get_typed(c, obj, kp, "resv", json_type_object, OPT, &grp);
	if (rc < 0)
		return rc;
	if (rc) {
		/* Every namespace supports NVMe reservations; the key is checked, not needed. */
		static const char *const resv_keys[] = { "enable", NULL };

		cfg_kp_join(sub, kp, "resv");
		rc = cfg_check_keys(c, grp, sub, resv_keys);
		if (rc)
			return rc;
		rc = cfg_get_bool(c, grp, sub, "enable", &resv);
		if (rc < 0)
			return rc;
	}

	rc = cfg_get_typed(c, obj, kp, "qos", json_type_object, OPT, &grp);
	if (rc < 0)
		return rc;
	if (rc) {
		cfg_kp_join(sub, kp, "qos");
		rc = parse_qos(c, grp, sub, &ns->qos);
		if (rc)
			return rc;
	}

	rc = cfg_get_typed(c, obj, kp, "device", json_type_object, REQ, &dev);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "device");
	rc = cfg_check_keys(c, dev, sub, device_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, dev, sub, "path", ns->path, sizeof(ns->path), REQ, false);
	if (rc < 0)
		return rc;
	rc = parse_ns_id(c, dev, sub, "nguid", ns->nguid, 16, &ns->has_nguid);
	if (rc)
		return rc;
	rc = parse_ns_id(c, dev, sub, "uuid", ns->uuid, 16, &ns->has_uuid);
	if (rc)
		return rc;
	rc = parse_ns_id(c, dev, sub, "eui64", ns->eui64, 8, &ns->has_eui64);
	if (rc)
		return rc;
	cfg_kp_join(sub, sub, "path");
	return cfg_check_ns_path(c, sub, ns->path, ns->enable);
}

static int parse_subsys_attr(struct pctx *c, json_object *attr, const char *kp,
			     struct config_subsys *s)
{
	char sub[KP_MAX];
	bool pi = false;
	int64_t v;
	int rc;

	rc = cfg_check_keys(c, attr, kp, attr_keys);
	if (rc)
		return rc;
	rc = cfg_get_bool(c, attr, kp, "allow_any_host", &s->allow_any_host);
	if (rc < 0)
		return rc;
	rc = cfg_get_str(c, attr, kp, "serial", s->serial, sizeof(s->serial), OPT, true);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "serial");
	if (!cfg_printable(s->serial))
		return cfg_err(c, -EINVAL, sub, "serial must be printable ASCII");
	rc = cfg_get_str(c, attr, kp, "model", s->model, sizeof(s->model), OPT, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "model");
	if (!cfg_printable(s->model))
		return cfg_err(c, -EINVAL, sub, "model must be printable ASCII");
	rc = cfg_get_str(c, attr, kp, "version", s->version, sizeof(s->version), OPT, false);
	if (rc < 0)
		return rc;
	if (s->version[0]) {
		unsigned int mj, mn, ter = 0;
		char tail;

		cfg_kp_join(sub, kp, "version");
		if (sscanf(s->version, "%u.%u%c", &mj, &mn, &tail) != 2 &&
		    sscanf(s->version, "%u.%u.%u%c", &mj, &mn, &ter, &tail) != 3)
			return cfg_err(c, -EINVAL, sub, "\"%s\": expected MAJOR.MINOR[.TERTIARY]",
				       s->version);
	}
	rc = cfg_get_int(c, attr, kp, "cntlid_min", 1, 0xffef, &v, OPT);
	if (rc < 0)
		return rc;
	s->cntlid_min = rc ? (uint16_t)v : 1;
	rc = cfg_get_int(c, attr, kp, "cntlid_max", 1, 0xffef, &v, OPT);
	if (rc < 0)
		return rc;
	s->cntlid_max = rc ? (uint16_t)v : 0xffef;
	if (s->cntlid_min > s->cntlid_max) {
		cfg_kp_join(sub, kp, "cntlid_min");
		return cfg_err(c, -EINVAL, sub, "cntlid_min %u is above cntlid_max %u",
			       s->cntlid_min, s->cntlid_max);
	}
	rc = cfg_get_int(c, attr, kp, "qid_max", 1, 65535, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		s->qid_max = (uint16_t)v;
	rc = cfg_get_bool(c, attr, kp, "pi_enable", &pi);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "pi_enable");
	if (pi)
		return cfg_err(c, -ENOTSUP, sub,
			       "protection information is not supported by nvmeof-target");
	/* version, qid_max, firmware, ieee_oui: accepted and not used (conf/README.md). */
	return 0;
}

int cfg_parse_subsys(struct pctx *c, json_object *obj, const char *kp, struct config_subsys *s)
{
	json_object *attr, *arr;
	void *list;
	char sub[KP_MAX], item[KP_MAX];
	unsigned int i, j, n;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, obj, kp, subsys_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, obj, kp, "nqn", s->nqn, sizeof(s->nqn), REQ, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "nqn");
	rc = cfg_check_nqn(c, sub, s->nqn, "subsystem");
	if (rc)
		return rc;

	s->cntlid_min = 1;
	s->cntlid_max = 0xffef;
	rc = cfg_get_typed(c, obj, kp, "attr", json_type_object, OPT, &attr);
	if (rc < 0)
		return rc;
	if (rc) {
		cfg_kp_join(sub, kp, "attr");
		rc = parse_subsys_attr(c, attr, sub, s);
		if (rc)
			return rc;
	}

	rc = cfg_get_typed(c, obj, kp, "passthru", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	if (arr && json_object_array_length(arr) > 0) {
		cfg_kp_join(sub, kp, "passthru");
		return cfg_err(c, -ENOTSUP, sub,
			       "passthru controllers are not supported by nvmeof-target");
	}

	rc = cfg_get_array(c, obj, kp, "namespaces", "namespaces", NVMF_MAX_NAMESPACES,
			   sizeof(*s->namespaces), &arr, &n, &list);
	s->namespaces = list;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		cfg_kp_index(item, kp, "namespaces", i);
		rc = parse_ns(c, json_object_array_get_idx(arr, i), item, &s->namespaces[i]);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (s->namespaces[j].nsid == s->namespaces[i].nsid) {
				cfg_kp_join(sub, item, "nsid");
				return cfg_err(c, -EINVAL, sub,
					       "duplicate NSID %u (also namespaces[%u])",
					       s->namespaces[i].nsid, j);
			}
		s->nnamespaces++;
	}

	rc = cfg_get_array(c, obj, kp, "allowed_hosts", "hosts", CONFIG_MAX_HOSTS,
			   sizeof(*s->allowed_hosts), &arr, &n, &list);
	s->allowed_hosts = list;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		cfg_kp_index(item, kp, "allowed_hosts", i);
		rc = cfg_nqn_item(c, json_object_array_get_idx(arr, i), item, "host",
				  s->allowed_hosts[i]);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (!strcmp(s->allowed_hosts[j], s->allowed_hosts[i]))
				return cfg_err(c, -EINVAL, item,
					       "host \"%s\" listed twice (also allowed_hosts[%u])",
					       s->allowed_hosts[i], j);
		s->nallowed_hosts++;
	}
	if (s->allow_any_host && s->nallowed_hosts) {
		cfg_kp_join(sub, kp, "allowed_hosts");
		rc = cfg_warn(c, sub,
			      "attr.allow_any_host is 1: any host may connect, the list "
			      "has no effect");
		if (rc)
			return rc;
	}
	return 0;
}
