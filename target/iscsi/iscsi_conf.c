// SPDX-License-Identifier: MIT
/* The configuration file's "iscsi" section (see iscsi.h for the schema). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "iscsi_internal.h"

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool jint(json_object *o, const char *key, int64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return false;
	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return true;
	}
	if (json_object_is_type(v, json_type_string)) {
		char *end;
		long long n = strtoll(json_object_get_string(v), &end, 0);

		if (*end)
			return false;
		*out = n;
		return true;
	}
	return false;
}

/* "none" | "allowed" | "required" (or a boolean: allowed or not) */
static int digest_mode(json_object *v, bool *allow, bool *require)
{
	const char *m;

	if (json_object_is_type(v, json_type_boolean)) {
		*allow = json_object_get_boolean(v);
		*require = false;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	m = json_object_get_string(v);
	if (!strcmp(m, "none"))
		*allow = *require = false;
	else if (!strcmp(m, "allowed"))
		*allow = true, *require = false;
	else if (!strcmp(m, "required"))
		*allow = *require = true;
	else
		return -EINVAL;
	return 0;
}

static int apply_options(json_object *o, char *err, size_t errlen)
{
	struct iscsi_opts opts = g_iscsi.opts;
	json_object *v;
	int64_t n;

	if (jint(o, "first_burst_length", &n))
		opts.first_burst_length = (uint32_t)n;
	if (jint(o, "max_burst_length", &n))
		opts.max_burst_length = (uint32_t)n;
	if (jint(o, "max_recv_data_segment_length", &n))
		opts.max_recv_dsl = (uint32_t)n;
	if (jint(o, "max_outstanding_r2t", &n))
		opts.max_outstanding_r2t = (uint32_t)n;
	if (jint(o, "queue_depth", &n))
		opts.queue_depth = (uint32_t)n;
	if (json_object_object_get_ex(o, "immediate_data", &v))
		opts.immediate_data = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "initial_r2t", &v))
		opts.initial_r2t = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "header_digest", &v) &&
	    digest_mode(v, &opts.header_digest, &opts.require_header_digest)) {
		snprintf(err, errlen, "iscsi.options.header_digest: none, allowed or required");
		return -EINVAL;
	}
	if (json_object_object_get_ex(o, "data_digest", &v) &&
	    digest_mode(v, &opts.data_digest, &opts.require_data_digest)) {
		snprintf(err, errlen, "iscsi.options.data_digest: none, allowed or required");
		return -EINVAL;
	}
	if (opts.first_burst_length < ISCSI_MIN_DATA_SEG_LEN ||
	    opts.max_burst_length < ISCSI_MIN_DATA_SEG_LEN || !opts.queue_depth) {
		snprintf(err, errlen, "iscsi.options: lengths below 512 or a zero queue depth");
		return -EINVAL;
	}
	iscsi_set_opts(&opts);
	return 0;
}

static int apply_target(json_object *t, char *err, size_t errlen)
{
	const char *iqn = jstr(t, "iqn");
	json_object *luns, *inits, *chap;
	int rc;

	if (!iqn) {
		snprintf(err, errlen, "iscsi.targets[]: \"iqn\" missing");
		return -EINVAL;
	}
	rc = iscsi_target_add(iqn, jstr(t, "alias"));
	if (rc && rc != -EEXIST) {
		snprintf(err, errlen, "iscsi target %s: %s", iqn,
			 rc == -EINVAL ? "not a valid iSCSI name" : strerror(-rc));
		return rc;
	}
	if (json_object_object_get_ex(t, "luns", &luns) &&
	    json_object_is_type(luns, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(luns); i++) {
			json_object *l = json_object_array_get_idx(luns, i);
			const char *sub = jstr(l, "subsystem");
			int64_t lun = -1, nsid = 0;

			jint(l, "lun", &lun);
			jint(l, "nsid", &nsid);
			if (!sub || lun < 0 || lun > 16383 || nsid <= 0 || nsid > UINT32_MAX) {
				snprintf(err, errlen, "iscsi target %s: luns[%zu] needs \"lun\" "
					 "(0-16383), \"subsystem\" and \"nsid\"", iqn, i);
				return -EINVAL;
			}
			rc = iscsi_target_add_lun(iqn, (uint32_t)lun, sub, (uint32_t)nsid);
			if (rc) {
				snprintf(err, errlen, "iscsi target %s: LUN %lld: %s", iqn,
					 (long long)lun,
					 rc == -EXDEV ? "all LUNs of a target must be in one subsystem"
						      : strerror(-rc));
				return rc;
			}
		}
	}
	if (json_object_object_get_ex(t, "initiators", &inits) &&
	    json_object_is_type(inits, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(inits); i++) {
			json_object *s = json_object_array_get_idx(inits, i);

			rc = json_object_is_type(s, json_type_string)
				     ? iscsi_target_allow_initiator(iqn, json_object_get_string(s))
				     : -EINVAL;
			if (rc) {
				snprintf(err, errlen, "iscsi target %s: initiators[%zu] invalid",
					 iqn, i);
				return rc;
			}
		}
	}
	if (json_object_object_get_ex(t, "chap", &chap)) {
		rc = iscsi_target_set_chap(iqn, jstr(chap, "user"), jstr(chap, "secret"),
					   jstr(chap, "mutual_user"), jstr(chap, "mutual_secret"));
		if (rc) {
			/* never echo the secrets */
			snprintf(err, errlen, "iscsi target %s: chap needs \"user\" and \"secret\" "
				 "(and both mutual_* or neither)", iqn);
			return rc;
		}
	}
	return 0;
}

int iscsi_config_apply(struct nvmf_tgt *tgt, const char *json, bool start_portals, char *err,
		       size_t errlen)
{
	json_object *root = json_tokener_parse(json), *v;
	int rc = 0;

	if (!root || !json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "iscsi: not a JSON object");
		if (root)
			json_object_put(root);
		return -EINVAL;
	}
	iscsi_init(tgt);
	if (json_object_object_get_ex(root, "options", &v))
		rc = apply_options(v, err, errlen);
	if (!rc && json_object_object_get_ex(root, "targets", &v) &&
	    json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; !rc && i < json_object_array_length(v); i++)
			rc = apply_target(json_object_array_get_idx(v, i), err, errlen);
	}
	if (!rc && start_portals && json_object_object_get_ex(root, "portals", &v) &&
	    json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; !rc && i < json_object_array_length(v); i++) {
			json_object *p = json_object_array_get_idx(v, i);
			const char *addr = jstr(p, "addr"), *adv;
			char port[16], perr[256];
			int64_t n = 3260;

			jint(p, "port", &n);
			if (!addr || n < 0 || n > 65535) {
				snprintf(err, errlen, "iscsi.portals[%zu]: \"addr\" and \"port\"", i);
				rc = -EINVAL;
				break;
			}
			snprintf(port, sizeof(port), "%lld", (long long)n);
			rc = iscsi_portal_start(tgt, addr, port, port, sizeof(port), perr,
						sizeof(perr));
			if (rc)
				snprintf(err, errlen, "iscsi.portals[%zu] (iscsi://%s%s%s:%s): %s",
					 i, strchr(addr, ':') ? "[" : "", addr,
					 strchr(addr, ':') ? "]" : "", port, perr);
			else
				log_notice("listening on iscsi://%s%s%s:%s",
					   strchr(addr, ':') ? "[" : "", addr,
					   strchr(addr, ':') ? "]" : "", port);
			adv = jstr(p, "advertise");
			if (!rc && adv && iscsi_portal_advertise(addr, port, adv) != 0) {
				snprintf(err, errlen, "iscsi.portals[%zu].advertise: invalid", i);
				rc = -EINVAL;
			}
		}
	}
	json_object_put(root);
	return rc;
}
