// SPDX-License-Identifier: MIT
/* The configuration file's "iscsi" section (see iscsi.h for the schema). */
#include <errno.h>
#include <json-c/json.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/key_file.h"
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

/* "chap_algs": [ "SHA3-256", "SHA256", ... ] or "SHA3-256,SHA256,..." (open-iscsi's
 * spelling); the mask of CHAP_A values, 0 when a name is unknown or none is given. */
static uint32_t chap_algs_mask(json_object *v)
{
	uint32_t mask = 0;

	if (json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *e = json_object_array_get_idx(v, i);
			int a = json_object_is_type(e, json_type_string)
					? iscsi_chap_alg_parse(json_object_get_string(e))
					: -EINVAL;

			if (a < 0)
				return 0;
			mask |= 1u << a;
		}
		return mask;
	}
	if (json_object_is_type(v, json_type_string)) {
		char buf[128], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", json_object_get_string(v));
		for (char *tok = strtok_r(buf, ", ", &save); tok;
		     tok = strtok_r(NULL, ", ", &save)) {
			int a = iscsi_chap_alg_parse(tok);

			if (a < 0)
				return 0;
			mask |= 1u << a;
		}
	}
	return mask;
}

static int apply_options(json_object *o, char *err, size_t errlen)
{
	struct iscsi_opts opts;
	json_object *v;
	int64_t n;

	/* what the section does not say is the default (a reload may drop a key) */
	iscsi_opts_default(&opts);
	if (!o)
		goto set;

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
	if (jint(o, "dataout_timeout", &n))
		opts.dataout_timeout_ms = (uint32_t)n * 1000;
	if (jint(o, "nopin_interval", &n))
		opts.nopin_interval_ms = (uint32_t)n * 1000;
	if (jint(o, "nopin_timeout", &n))
		opts.nopin_timeout_ms = (uint32_t)n * 1000;
	if (jint(o, "max_sessions_per_initiator", &n))
		opts.max_sessions_per_initiator = (uint32_t)n;
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
	if (json_object_object_get_ex(o, "chap_algs", &v) &&
	    !(opts.chap_algs = chap_algs_mask(v))) {
		snprintf(err, errlen, "iscsi.options.chap_algs: SHA3-256, SHA256, SHA1 or MD5");
		return -EINVAL;
	}
	if (opts.first_burst_length < ISCSI_MIN_DATA_SEG_LEN ||
	    opts.max_burst_length < ISCSI_MIN_DATA_SEG_LEN || !opts.queue_depth) {
		snprintf(err, errlen, "iscsi.options: lengths below 512 or a zero queue depth");
		return -EINVAL;
	}
set:
	iscsi_set_opts(&opts);
	return 0;
}

/*
 * A secret given inline (@key) or read from a file of mode 0600 (@key + "_file").
 * Returns 1 with it in @buf, 0 when neither is given, -errno with @err set (naming the
 * file, never the content).
 */
static int chap_secret(json_object *chap, const char *key, char *buf, size_t len, const char *where,
		       char *err, size_t errlen)
{
	char fkey[64], kerr[256];
	const char *v = jstr(chap, key), *path;
	int rc;

	if (v) {
		if (strlen(v) >= len) {
			snprintf(err, errlen, "%s.%s: too long", where, key);
			return -EINVAL;
		}
		snprintf(buf, len, "%s", v);
		return 1;
	}
	snprintf(fkey, sizeof(fkey), "%s_file", key);
	path = jstr(chap, fkey);
	if (!path)
		return 0;
	rc = nvme_key_file_read(path, buf, len, kerr, sizeof(kerr));
	if (rc < 0) {
		snprintf(err, errlen, "%s.%s: %s", where, fkey, kerr);
		return rc;
	}
	return 1;
}

/* The "chap" object of a target (@iqn) or "discovery_chap" (@iqn NULL); NULL: CHAP off. */
static int apply_chap(const char *iqn, json_object *chap, const char *where, char *err,
		      size_t errlen)
{
	char secret[ISCSI_SECRET_MAX], msecret[ISCSI_SECRET_MAX];
	const char *user = chap ? jstr(chap, "user") : NULL;
	const char *muser = chap ? jstr(chap, "mutual_user") : NULL;
	int rc = 0, hs = 0, hm = 0;

	if (chap) {
		hs = chap_secret(chap, "secret", secret, sizeof(secret), where, err, errlen);
		hm = hs < 0 ? 0
			    : chap_secret(chap, "mutual_secret", msecret, sizeof(msecret), where,
					  err, errlen);
		if (hs < 0 || hm < 0) {
			rc = hs < 0 ? hs : hm;
			goto out;
		}
	}
	if (iqn)
		rc = iscsi_target_set_chap(iqn, user, hs ? secret : NULL, muser,
					   hm ? msecret : NULL);
	else
		rc = iscsi_set_discovery_chap(user, hs ? secret : NULL, muser, hm ? msecret : NULL);
	if (rc) /* never echo the secrets */
		snprintf(err, errlen,
			 "%s: needs \"user\" and \"secret\" (or \"secret_file\"), and "
			 "both mutual_* or neither",
			 where);
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	OPENSSL_cleanse(msecret, sizeof(msecret));
	return rc;
}

static int apply_initiators(const char *iqn, json_object *t, char *err, size_t errlen)
{
	json_object *inits;
	const char **names = NULL;
	size_t n = 0;
	int rc;

	if (json_object_object_get_ex(t, "initiators", &inits) &&
	    json_object_is_type(inits, json_type_array)) {
		n = json_object_array_length(inits);
		names = calloc(n ? n : 1, sizeof(*names));
		if (!names)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			json_object *s = json_object_array_get_idx(inits, i);

			if (!json_object_is_type(s, json_type_string)) {
				snprintf(err, errlen, "iscsi target %s: initiators[%zu] invalid",
					 iqn, i);
				free(names);
				return -EINVAL;
			}
			names[i] = json_object_get_string(s);
		}
	}
	rc = iscsi_target_set_initiators(iqn, names, n);
	if (rc)
		snprintf(err, errlen, "iscsi target %s: initiators: %s", iqn,
			 rc == -EINVAL ? "not a valid iSCSI name" : strerror(-rc));
	free(names);
	return rc;
}

/* A target: created with its LUNs the first time; its initiators and CHAP every time. */
static int apply_target(json_object *t, char *err, size_t errlen)
{
	const char *iqn = jstr(t, "iqn");
	json_object *luns, *chap;
	char where[300];
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
	if (rc != -EEXIST && json_object_object_get_ex(t, "luns", &luns) &&
	    json_object_is_type(luns, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(luns); i++) {
			json_object *l = json_object_array_get_idx(luns, i);
			const char *sub = jstr(l, "subsystem");
			int64_t lun = -1, nsid = 0;

			jint(l, "lun", &lun);
			jint(l, "nsid", &nsid);
			if (!sub || lun < 0 || lun > 16383 || nsid <= 0 || nsid > UINT32_MAX) {
				snprintf(err, errlen,
					 "iscsi target %s: luns[%zu] needs \"lun\" "
					 "(0-16383), \"subsystem\" and \"nsid\"",
					 iqn, i);
				return -EINVAL;
			}
			rc = iscsi_target_add_lun(iqn, (uint32_t)lun, sub, (uint32_t)nsid);
			if (rc) {
				snprintf(err, errlen, "iscsi target %s: LUN %lld: %s", iqn,
					 (long long)lun,
					 rc == -EXDEV ? "all LUNs of a target must be in one "
							"subsystem"
						      : strerror(-rc));
				return rc;
			}
		}
	}
	rc = apply_initiators(iqn, t, err, errlen);
	if (rc)
		return rc;
	snprintf(where, sizeof(where), "iscsi target %s: chap", iqn);
	return apply_chap(iqn, json_object_object_get_ex(t, "chap", &chap) ? chap : NULL, where,
			  err, errlen);
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
	rc = apply_options(json_object_object_get_ex(root, "options", &v) ? v : NULL, err, errlen);
	if (!rc && json_object_object_get_ex(root, "targets", &v) &&
	    json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; !rc && i < json_object_array_length(v); i++)
			rc = apply_target(json_object_array_get_idx(v, i), err, errlen);
	}
	if (!rc)
		rc = apply_chap(NULL,
				json_object_object_get_ex(root, "discovery_chap", &v) ? v : NULL,
				"iscsi.discovery_chap", err, errlen);
	if (!rc && start_portals && json_object_object_get_ex(root, "portals", &v) &&
	    json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; !rc && i < json_object_array_length(v); i++) {
			json_object *p = json_object_array_get_idx(v, i);
			const char *addr = jstr(p, "addr"), *adv;
			char port[16], perr[256];
			int64_t n = 3260;

			jint(p, "port", &n);
			if (!addr || n < 0 || n > 65535) {
				snprintf(err, errlen, "iscsi.portals[%zu]: \"addr\" and \"port\"",
					 i);
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

/* Is @iqn one of the targets of the array @targets? */
static bool listed(json_object *targets, const char *iqn)
{
	for (size_t i = 0; targets && i < json_object_array_length(targets); i++) {
		const char *n = jstr(json_object_array_get_idx(targets, i), "iqn");

		if (n && !strcasecmp(n, iqn))
			return true;
	}
	return false;
}

int iscsi_config_reload(struct nvmf_tgt *tgt, const char *json, unsigned int *revoked, char *err,
			size_t errlen)
{
	json_object *root = json_tokener_parse(json ? json : "{}"), *v, *targets = NULL;
	struct iscsi_target *t;
	char(*gone)[ISCSI_NAME_BUF] = NULL;
	unsigned int ngone = 0, n = 0;
	int rc = 0;

	*revoked = 0;
	if (!root || !json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "iscsi: not a JSON object");
		if (root)
			json_object_put(root);
		return -EINVAL;
	}
	iscsi_init(tgt);
	if (json_object_object_get_ex(root, "targets", &v) &&
	    json_object_is_type(v, json_type_array))
		targets = v;
	/* targets no longer listed: unreachable for new logins, their sessions end below */
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(t, &g_iscsi.targets, link)
	n++;
	gone = calloc(n ? n : 1, sizeof(*gone));
	TAILQ_FOREACH(t, &g_iscsi.targets, link)
	if (gone && !t->removed && !listed(targets, t->name))
		snprintf(gone[ngone++], sizeof(gone[0]), "%s", t->name);
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!gone) {
		json_object_put(root);
		snprintf(err, errlen, "iscsi: out of memory");
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < ngone; i++) {
		iscsi_target_remove(gone[i]);
		log_notice("iSCSI target %s removed", gone[i]);
	}
	free(gone);
	rc = apply_options(json_object_object_get_ex(root, "options", &v) ? v : NULL, err, errlen);
	/* new targets in full; the ones running get their initiators and CHAP (LUNs and
	 * portals cannot change live: the configuration check refused that already) */
	for (size_t i = 0; !rc && targets && i < json_object_array_length(targets); i++)
		rc = apply_target(json_object_array_get_idx(targets, i), err, errlen);
	if (!rc)
		rc = apply_chap(NULL,
				json_object_object_get_ex(root, "discovery_chap", &v) ? v : NULL,
				"iscsi.discovery_chap", err, errlen);
	json_object_put(root);
	/* whatever was applied takes effect on the live sessions too */
	*revoked = iscsi_sessions_revoke();
	return rc;
}
